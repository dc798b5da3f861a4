/*
 * bloomcrawl/sitemap.h - streaming sitemap parsing (sitemaps.org 0.9).
 *
 * A sitemap parser is fed a sitemap's body in chunks of any size, as they
 * come off the network, and calls back once per entry it finds, in any
 * of the formats sitemaps.org accepts (bc_sitemap_format()):
 *
 *   - XML: <urlset><url><loc>...</loc><lastmod>...</lastmod></url>: a
 *     page (BC_SITEMAP_URLSET); <sitemapindex><sitemap><loc>...</loc>
 *     </sitemap>: another sitemap (BC_SITEMAP_INDEX); in the sitemaps.org
 *     namespace, Google's old 0.84 one
 *     (http://www.google.com/schemas/sitemap/0.84) or none;
 *   - text: one absolute http(s) URL per line (UTF-8; LF or CR LF; blank
 *     lines skipped): a body whose first byte after an optional UTF-8 BOM
 *     and whitespace is not '<'. A later line that is no such URL is
 *     skipped and counted (not_url); a first one means the file is other
 *     text, not a sitemap (BC_SITEMAP_STOP_NOT_SITEMAP);
 *   - RSS 2.0: <rss><channel><item><link>: a page (no date: pubDate is
 *     not read);
 *   - Atom 1.0 and 0.3: <feed><entry><link href="..."> whose rel is absent
 *     or "alternate" (the first one), dated by <updated> (<modified>).
 *
 * Text, RSS and Atom entries are pages (BC_SITEMAP_URLSET). A root
 * element of no format above (in its namespace) stops the parser with
 * BC_SITEMAP_STOP_NOT_SITEMAP: every file that gives no entries either
 * has none or has a stop reason.
 *
 * The <loc> text is handed over with entities decoded and surrounding
 * whitespace removed, as the file wrote it: resolving, normalizing and
 * scoping it is the caller's job. <lastmod>, a W3C datetime (YYYY,
 * YYYY-MM, YYYY-MM-DD, or a date with hh:mm[:ss[.s]] and Z or +hh:mm),
 * comes as seconds since the Unix epoch (UTC); a missing or invalid one
 * is reported as absent (counted). Elements are matched by local name in
 * the sitemaps.org namespace or in no namespace; elements of any other
 * namespace (image:loc, video:...) and everything inside them are
 * ignored.
 *
 * A body that starts with the gzip magic (1f 8b) is inflated first,
 * whatever its Content-Type said (a .xml.gz file is usually served as
 * application/gzip or application/octet-stream, without a
 * Content-Encoding). The limits of the protocol hold for the document
 * (XML or text) after inflation: at most max_urls entries (50,000) and max_bytes bytes
 * (52,428,800 = 50 MiB) per file. The entry after the max_urls-th, or
 * the byte after max_bytes, stops the parser with a reason; inflation
 * never produces more than max_bytes + 16 KiB, so a gzip bomb costs
 * bounded memory and time (its tail is never read).
 *
 * Hostile input is expected. libxml2's push parser does the XML, with
 * entity substitution off, no DTD loading, no network access
 * (XML_PARSE_NONET) and its default size limits (no XML_PARSE_HUGE);
 * a document type declaration (<!DOCTYPE ...>, where entity bombs and
 * external entities live; no sitemap has one) stops the parser at once
 * with BC_SITEMAP_STOP_DOCTYPE, before any entity is declared. Malformed
 * XML stops it with BC_SITEMAP_STOP_MALFORMED: the entries reported
 * before stay valid. A <loc> longer than max_loc_bytes is skipped and
 * counted, never truncated. Memory: libxml2's parser state and its
 * unparsed input (at most one chunk plus one unfinished token, which its
 * limits bound), a 16 KiB inflate window, the text of one <loc>. Nothing
 * is ever printed (libxml2's errors go to a handler of the parser's).
 *
 * Thread safety: one parser must be used by one thread at a time;
 * different parsers may run in different threads. libxml2's own global
 * initialization is done by bc_sitemap_global_init().
 */
#ifndef BC_FETCHER_SITEMAP_H
#define BC_FETCHER_SITEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a sitemap file is, by its root element. */
enum bc_sitemap_kind {
    BC_SITEMAP_UNKNOWN = 0, /* no root element seen yet */
    BC_SITEMAP_URLSET,      /* <urlset>: entries are pages */
    BC_SITEMAP_INDEX        /* <sitemapindex>: entries are sitemaps */
};

/* The format of a sitemap file (sitemaps.org, "Sitemap formats"). */
/* clang-format off */
/* The formats, X(NAME, "name") in the order of their values from 0: the
 * enum and bc_sitemap_format_name() are made from this one list. */
#define BC_SITEMAP_FORMAT_LIST(X)                                             \
    X(BC_SITEMAP_FORMAT_UNKNOWN, "unknown") /* not known yet */               \
    X(BC_SITEMAP_FORMAT_XML, "xml")                                           \
        /* <urlset> or <sitemapindex>, 0.9 or 0.84 */                         \
    X(BC_SITEMAP_FORMAT_TEXT, "text")       /* one URL per line */            \
    X(BC_SITEMAP_FORMAT_RSS, "rss")                                           \
        /* RSS 2.0: <rss><channel><item><link> */                             \
    X(BC_SITEMAP_FORMAT_ATOM, "atom")                                         \
        /* Atom 1.0 or 0.3: <feed><entry><link href> */

#define BC_SITEMAP_FORMAT_ENUM_(name, text) name,
enum bc_sitemap_format { BC_SITEMAP_FORMAT_LIST(BC_SITEMAP_FORMAT_ENUM_) };
#undef BC_SITEMAP_FORMAT_ENUM_

/* Why a parser stopped before the end of its input: X(NAME, "name") in
 * the order of their values from 0, making the enum and
 * bc_sitemap_stop_name(). */
#define BC_SITEMAP_STOP_LIST(X)                                               \
    X(BC_SITEMAP_STOP_NONE, "none")          /* not stopped */                \
    X(BC_SITEMAP_STOP_TOO_MANY_URLS, "too_many_urls")                         \
        /* an entry beyond max_urls */                                        \
    X(BC_SITEMAP_STOP_TOO_LARGE, "too_large")                                 \
        /* more than max_bytes (inflated) */                                  \
    X(BC_SITEMAP_STOP_MALFORMED, "malformed")                                 \
        /* not well-formed XML (or truncated) */                              \
    X(BC_SITEMAP_STOP_DOCTYPE, "doctype")    /* a <!DOCTYPE>: refused */      \
    X(BC_SITEMAP_STOP_NOT_SITEMAP, "not_sitemap")                             \
        /* no sitemap format: see above */                                    \
    X(BC_SITEMAP_STOP_GZIP, "gzip")          /* corrupt gzip data */          \
    X(BC_SITEMAP_STOP_NOMEM, "nomem")        /* out of memory */

#define BC_SITEMAP_STOP_ENUM_(name, text) name,
enum bc_sitemap_stop {
    BC_SITEMAP_STOP_LIST(BC_SITEMAP_STOP_ENUM_)
    BC_SITEMAP_STOP_COUNT /* the number of reasons, not a reason */
};
#undef BC_SITEMAP_STOP_ENUM_
/* clang-format on */

/* A short name for a stop reason ("none", "too_many_urls", "too_large",
 * "malformed", "doctype", "not_sitemap", "gzip", "nomem"; "unknown"
 * outside the enum). Never NULL. */
const char *bc_sitemap_stop_name(enum bc_sitemap_stop stop);

/* One entry, as on_entry receives it. loc is not NUL-terminated and is
 * valid only during the call. */
struct bc_sitemap_entry {
    enum bc_sitemap_kind kind; /* URLSET: a page; INDEX: a sitemap */
    const char *loc;
    size_t loc_len; /* 1 .. max_loc_bytes */
    bool has_lastmod;
    int64_t lastmod; /* seconds since 1970-01-01T00:00:00Z */
};

typedef void (*bc_sitemap_entry_fn)(void *user,
                                    const struct bc_sitemap_entry *entry);

#define BC_SITEMAP_MAX_URLS      50000u
#define BC_SITEMAP_MAX_BYTES     52428800u /* 50 MiB */
#define BC_SITEMAP_MAX_LOC_BYTES 2048u

struct bc_sitemap_config {
    bc_sitemap_entry_fn on_entry; /* may be NULL: only count */
    void *user;                   /* first argument of on_entry */
    size_t max_urls;      /* entries per file (50,000); 0: the default */
    uint64_t max_bytes;   /* XML bytes per file (50 MiB); 0: the default */
    size_t max_loc_bytes; /* longer <loc>s are skipped (2048); 0: default */
};

/* Counters of one parser. */
struct bc_sitemap_stats {
    uint64_t entries;      /* entries reported through on_entry */
    uint64_t no_loc;       /* <url>/<sitemap> without a usable <loc> */
    uint64_t skipped_long; /* <loc>s longer than max_loc_bytes */
    uint64_t bad_lastmod;  /* <lastmod>s that are no W3C datetime */
    uint64_t bytes_in;     /* bytes fed (compressed, when gzip) */
    uint64_t bytes_xml;    /* document bytes (inflated; XML or text) read */
    uint64_t not_url;      /* text lines (not the first) that are no
                              absolute http(s) URL: skipped */
    bool gzip;             /* the body was gzip-compressed */
};

struct bc_sitemap;

/*
 * Process-wide initialization of libxml2 (xmlInitParser); call once from
 * the main thread before parsers are used from several threads (a single
 * threaded caller may skip it: the first parser does it). Cost: once.
 */
void bc_sitemap_global_init(void);

/* Fill *config with the defaults: no callback, the protocol's limits. */
void bc_sitemap_config_init(struct bc_sitemap_config *config);

/*
 * Create a parser for one sitemap file. Returns BC_OK and sets *out,
 * BC_ERR_INVALID_ARG (NULL config or out) or BC_ERR_NOMEM. Free with
 * bc_sitemap_free().
 */
enum bc_status bc_sitemap_create(const struct bc_sitemap_config *config,
                                 struct bc_sitemap **out);

/*
 * Feed the next len bytes of the body; entries complete in what was fed
 * so far are reported before it returns. Once the parser has stopped
 * (bc_sitemap_stopped()), input is ignored. Cost: linear in len (and in
 * what it inflates to, at most max_bytes in all). Returns BC_OK (also
 * when the input made it stop: see bc_sitemap_stopped()) or
 * BC_ERR_INVALID_ARG (NULL parser, data NULL with len > 0, feed after
 * finish).
 */
enum bc_status bc_sitemap_feed(struct bc_sitemap *sitemap, const void *data,
                               size_t len);

/*
 * Tell the parser the body is complete: a document that is not complete
 * (no root element, an unclosed element, a gzip stream cut short) stops
 * it as BC_SITEMAP_STOP_MALFORMED (BC_SITEMAP_STOP_GZIP) unless it had
 * stopped already. Returns like bc_sitemap_feed().
 */
enum bc_status bc_sitemap_finish(struct bc_sitemap *sitemap);

/* Why the parser stopped (BC_SITEMAP_STOP_NONE while it goes on); for
 * NULL, BC_SITEMAP_STOP_NONE. */
enum bc_sitemap_stop bc_sitemap_stopped(const struct bc_sitemap *sitemap);

/* The root element's kind (BC_SITEMAP_UNKNOWN before it, and for NULL):
 * BC_SITEMAP_URLSET for text, RSS and Atom, whose entries are pages. */
enum bc_sitemap_kind bc_sitemap_kind(const struct bc_sitemap *sitemap);

/* The file's format (BC_SITEMAP_FORMAT_UNKNOWN before its first byte that
 * is not a BOM or whitespace, or its root element; for NULL, and when it
 * stopped as not a sitemap). */
enum bc_sitemap_format bc_sitemap_format(const struct bc_sitemap *sitemap);

/* A short name for a format ("unknown", "xml", "text", "rss", "atom";
 * "unknown" outside the enum). Never NULL. */
const char *bc_sitemap_format_name(enum bc_sitemap_format format);

/* Copy the counters into *stats (zeros for a NULL parser). */
void bc_sitemap_stats(const struct bc_sitemap *sitemap,
                      struct bc_sitemap_stats *stats);

/* Free a parser; NULL is a no-op. */
void bc_sitemap_free(struct bc_sitemap *sitemap);

/*
 * Parse a W3C datetime (https://www.w3.org/TR/NOTE-datetime) of len bytes
 * into seconds since the Unix epoch, UTC (a date alone is its midnight
 * UTC; fractions of a second are dropped). Returns true and sets *out,
 * or false for anything else (*out untouched). O(len).
 */
bool bc_sitemap_parse_datetime(const char *s, size_t len, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* BC_FETCHER_SITEMAP_H */
