/*
 * sitemap.c - streaming sitemap parsing: gzip, then libxml2's SAX2 push
 * parser, with the sitemaps.org limits and the hostile cases cut short.
 *
 * THE PROBLEM
 * Site owners list their pages in sitemaps (https://www.sitemaps.org/
 * protocol.html) so that crawlers find the pages no link reaches. A
 * sitemap is an XML file of up to 50,000 <url> entries and 50 MiB, often
 * gzip-compressed, or an index of up to 50,000 further sitemaps. It is
 * also input from anyone: an XML entity bomb ("billion laughs": ten
 * entities of ten references each expand 1 KiB into gigabytes), external
 * entities that read local files or the network (XXE), a gzip stream of
 * zeros that inflates 1000:1 (5 GB from 5 MB), a body that is not XML at
 * all. The parser must find the entries in bounded memory and time, and
 * say why it stopped when it did.
 *
 * THE IDEA
 * Bytes flow through two stages, chunk by chunk as the network delivers
 * them, and no stage keeps more than one chunk:
 *
 *   body --[1f 8b?]--> inflate (16 KiB out at a time) --> budget
 *        \---------------- plain ------------------------/   |
 *                     max_bytes of XML, then STOP_TOO_LARGE  v
 *                                        libxml2 push parser (SAX2)
 *                     urlset/url/loc|lastmod, sitemapindex/sitemap/loc
 *                                                            v
 *                                      on_entry(), max_urls of them
 *
 * The budget is applied to what inflate produces, before the XML parser
 * sees it: a gzip bomb is cut when its output passes max_bytes, having
 * cost at most max_bytes of parsing and one 16 KiB buffer; its remaining
 * input is ignored (the caller aborts the transfer).
 *
 * ENTITIES, DTDS, THE NETWORK
 * libxml2 is asked for no entity substitution, no DTD loading and no
 * network (XML_PARSE_NONET), and the SAX handler has no getEntity: so
 * only the five predefined entities and character references are ever
 * expanded. Entity bombs and external entities need a document type
 * declaration to declare them, and no sitemap has one: the first thing
 * the parser learns of a <!DOCTYPE> (the internalSubset event, which
 * comes before the declarations inside it are read) stops it. So a
 * billion-laughs file costs the bytes up to its DOCTYPE name.
 *
 * FOUR FORMATS (sitemaps.org, "Other formats"; issue 21)
 * After inflation, the first byte that is not a UTF-8 BOM or whitespace
 * decides: '<' (or a UTF-16 byte order mark) is XML, anything else a
 * text sitemap, one URL per line. The bytes held while deciding are at
 * most LEAD_KEEP; XML gets them as they came, text drops them. The
 * max_bytes budget counts both alike, before the decision.
 *
 *   inflated bytes --budget--> [BOM, whitespace held] --'<'--> libxml2
 *                                                   \--else--> lines
 *
 * XML: the root element decides the format and kind:
 *
 *   root (namespace)                     entry        URL          date
 *   urlset (0.9, 0.84, none)             url          <loc>        lastmod
 *   sitemapindex (0.9, 0.84, none)       sitemap      <loc>        lastmod
 *   rss (none)                           channel/item <link>       -
 *   feed (Atom 1.0, 0.3)                 entry        <link href>  updated,
 *                                                     rel alternate modified
 *
 * and anything else stops the parser (STOP_NOT_SITEMAP): a file never
 * gives zero entries without a reason unless it lists none. An entry is
 * a child of the root (of <channel> in RSS); its URL element and date
 * are children of the entry. Matching is by local name, for elements in
 * the format's own namespace (for sitemaps also none; for RSS only
 * none); an element of another namespace is skipped with everything
 * inside it, so an <image:loc> inside a <url> is not taken for its
 * <loc>, nor an <atom:link> inside an RSS <item> for its <link>. The
 * first URL of an entry counts. Text is kept only inside the URL element
 * (at most max_loc_bytes bytes, leading whitespace dropped) and the date
 * (64 bytes); an Atom href is an attribute, where libxml2 gives '&' back
 * as "&#38;" (undone).
 *
 * Text: lines end at LF; whitespace around a line (CR included) is
 * trimmed and blank lines skipped. A line must be an absolute http or
 * https URL (scheme, "//", no whitespace or control byte): a first line
 * that is not one means the file is other text (an error page served
 * with 200, a robots.txt) and stops it as STOP_NOT_SITEMAP; a later one
 * is skipped and counted. Lines obey max_loc_bytes and the entries
 * max_urls, as <loc>s do.
 */
#define _POSIX_C_SOURCE 200809L

#include "bloomcrawl/sitemap.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <zlib.h>

#define SITEMAP_NS     "http://www.sitemaps.org/schemas/sitemap/0.9"
#define SITEMAP_NS_084 "http://www.google.com/schemas/sitemap/0.84"
#define ATOM_NS        "http://www.w3.org/2005/Atom"
#define ATOM_NS_03     "http://purl.org/atom/ns#"
#define LEAD_KEEP      64u /* BOM and whitespace kept before the format */
#define ZBUF_BYTES     16384u
#define XML_PIECE      65536u /* xmlParseChunk takes an int: feed in pieces */
#define LASTMOD_KEEP   64u

enum input_mode { MODE_UNDECIDED = 0, MODE_PLAIN, MODE_GZIP };
enum doc_mode { DOC_UNDECIDED = 0, DOC_XML, DOC_TEXT };

struct bc_sitemap {
    struct bc_sitemap_config cfg;
    xmlParserCtxtPtr ctxt;
    enum input_mode mode;
    unsigned char first; /* the first byte, while the mode is undecided */
    bool have_first;
    z_stream z;
    bool z_init, z_ended; /* inflate set up; a gzip member ended */
    unsigned char *zbuf;
    bool finished;
    enum bc_sitemap_stop stop;
    enum bc_sitemap_kind kind;
    enum doc_mode doc;             /* XML or text, by its first byte */
    enum bc_sitemap_format format; /* by the root element, or TEXT */
    unsigned char lead[LEAD_KEEP]; /* BOM and whitespace before it */
    size_t lead_len;
    bool lead_bom;         /* every byte so far is a prefix of EF BB BF */
    uint64_t text_lines;   /* non-empty lines of a text sitemap */
    unsigned entry_depth;  /* depth of an entry: 2, or 3 in RSS */
    unsigned depth;        /* open elements */
    unsigned ignore_depth; /* > 0: inside a foreign element at that depth */
    bool in_entry, in_loc, in_lastmod, loc_done, lastmod_done, loc_long;
    char *loc; /* max_loc_bytes */
    size_t loc_len;
    char lastmod[LASTMOD_KEEP];
    size_t lastmod_len;
    struct bc_sitemap_stats stats;
};

#define NAME(name, text) [name] = text,
static const char *const stop_names[] = {BC_SITEMAP_STOP_LIST(NAME)};
static const char *const format_names[] = {BC_SITEMAP_FORMAT_LIST(NAME)};
#undef NAME

const char *bc_sitemap_stop_name(enum bc_sitemap_stop stop)
{
    if ((unsigned)stop < BC_SITEMAP_STOP_COUNT)
        return stop_names[stop];
    return "unknown";
}

/* ---- W3C datetime ------------------------------------------------------ */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar
 * (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at s[*i], advancing *i; false if not all digits. */
static bool digits(const char *s, size_t len, size_t *i, unsigned n,
                   unsigned *out)
{
    unsigned v = 0;
    if (len - *i < n)
        return false;
    for (unsigned k = 0; k < n; k++) {
        char c = s[*i + k];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (unsigned)(c - '0');
    }
    *i += n;
    *out = v;
    return true;
}

static bool expect(const char *s, size_t len, size_t *i, char c)
{
    if (*i >= len || s[*i] != c)
        return false;
    (*i)++;
    return true;
}

bool bc_sitemap_parse_datetime(const char *s, size_t len, int64_t *out)
{
    static const unsigned mdays[12] = {31, 28, 31, 30, 31, 30,
                                       31, 31, 30, 31, 30, 31};
    size_t i = 0;
    unsigned y = 0, mo = 1, d = 1, hh = 0, mi = 0, ss = 0;
    int64_t offset = 0;
    if (!s || !out || !digits(s, len, &i, 4, &y))
        return false;
    if (i < len) {
        if (!expect(s, len, &i, '-') || !digits(s, len, &i, 2, &mo) || mo < 1 ||
            mo > 12)
            return false;
    }
    if (i < len) {
        if (!expect(s, len, &i, '-') || !digits(s, len, &i, 2, &d))
            return false;
        bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        unsigned dim = mdays[mo - 1] + (mo == 2 && leap);
        if (d < 1 || d > dim)
            return false;
    }
    if (i < len) {
        /* A time: hh:mm[:ss[.s+]] and a time zone designator. */
        if (!expect(s, len, &i, 'T') || !digits(s, len, &i, 2, &hh) ||
            !expect(s, len, &i, ':') || !digits(s, len, &i, 2, &mi) ||
            hh > 23 || mi > 59)
            return false;
        if (i < len && s[i] == ':') {
            i++;
            if (!digits(s, len, &i, 2, &ss) || ss > 60)
                return false;
            if (i < len && s[i] == '.') {
                size_t start = ++i;
                while (i < len && s[i] >= '0' && s[i] <= '9')
                    i++;
                if (i == start)
                    return false;
            }
        }
        if (i < len && s[i] == 'Z') {
            i++;
        } else if (i < len && (s[i] == '+' || s[i] == '-')) {
            int sign = s[i] == '-' ? -1 : 1;
            unsigned oh, om;
            i++;
            if (!digits(s, len, &i, 2, &oh) || !expect(s, len, &i, ':') ||
                !digits(s, len, &i, 2, &om) || oh > 23 || om > 59)
                return false;
            offset = sign * (int64_t)(oh * 3600 + om * 60);
        } else {
            return false;
        }
        if (i != len)
            return false;
    }
    *out = days_from_civil(y, mo, d) * 86400 +
           (int64_t)(hh * 3600 + mi * 60 + ss) - offset;
    return true;
}

/* ---- the SAX handler ---------------------------------------------------- */

static void stop(struct bc_sitemap *sm, enum bc_sitemap_stop why)
{
    if (sm->stop != BC_SITEMAP_STOP_NONE)
        return;
    sm->stop = why;
    if (sm->ctxt)
        xmlStopParser(sm->ctxt);
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool name_is(const xmlChar *name, const char *want)
{
    return strcmp((const char *)name, want) == 0;
}

/* Report an entry of loc (len bytes, trailing whitespace trimmed) with
 * the <lastmod> kept, within max_urls. */
static void report_entry(struct bc_sitemap *sm, const char *loc, size_t len)
{
    if (sm->stats.entries >= sm->cfg.max_urls) {
        stop(sm, BC_SITEMAP_STOP_TOO_MANY_URLS);
        return;
    }
    struct bc_sitemap_entry e = {sm->kind, loc, len, false, 0};
    if (sm->lastmod_done) {
        const char *t = sm->lastmod;
        size_t tlen = sm->lastmod_len;
        while (tlen > 0 && is_ws(t[0]))
            t++, tlen--;
        while (tlen > 0 && is_ws(t[tlen - 1]))
            tlen--;
        e.has_lastmod = tlen < LASTMOD_KEEP &&
                        bc_sitemap_parse_datetime(t, tlen, &e.lastmod);
        if (!e.has_lastmod)
            sm->stats.bad_lastmod++;
    }
    sm->stats.entries++;
    if (sm->cfg.on_entry)
        sm->cfg.on_entry(sm->cfg.user, &e);
}

/* The end of an entry (<url>, <sitemap>, <item>, <entry>): report its
 * <loc>. */
static void entry_end(struct bc_sitemap *sm)
{
    const char *loc = sm->loc;
    size_t len = sm->loc_len;
    if (sm->loc_long) {
        sm->stats.skipped_long++;
        return;
    }
    while (len > 0 && is_ws(loc[len - 1]))
        len--;
    if (!sm->loc_done || len == 0) {
        sm->stats.no_loc++;
        return;
    }
    report_entry(sm, loc, len);
}

/* Append text to the <loc> being read: leading whitespace is dropped;
 * past max_loc_bytes, a byte that is not whitespace makes it too long. */
static void loc_put(struct bc_sitemap *sm, const unsigned char *ch, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char c = (char)ch[i];
        if (sm->loc_len == 0 && is_ws(c))
            continue;
        if (sm->loc_len < sm->cfg.max_loc_bytes)
            sm->loc[sm->loc_len++] = c;
        else if (!is_ws(c))
            sm->loc_long = true;
    }
}

static bool uri_is(const xmlChar *uri, const char *want)
{
    return uri && strcmp((const char *)uri, want) == 0;
}

/* Is an element of this namespace one of the format's own? */
static bool own_ns(const struct bc_sitemap *sm, const xmlChar *uri)
{
    switch (sm->format) {
    case BC_SITEMAP_FORMAT_XML:
        return !uri || uri_is(uri, SITEMAP_NS) || uri_is(uri, SITEMAP_NS_084);
    case BC_SITEMAP_FORMAT_RSS:
        return !uri;
    case BC_SITEMAP_FORMAT_ATOM:
        return uri_is(uri, ATOM_NS) || uri_is(uri, ATOM_NS_03);
    case BC_SITEMAP_FORMAT_UNKNOWN:
    case BC_SITEMAP_FORMAT_TEXT:
        break;
    }
    return false;
}

/* The root element decides the format and the kind; anything else is
 * not a sitemap. */
static void root_start(struct bc_sitemap *sm, const xmlChar *name,
                       const xmlChar *uri)
{
    bool sitemap_ns =
        !uri || uri_is(uri, SITEMAP_NS) || uri_is(uri, SITEMAP_NS_084);
    sm->entry_depth = 2;
    if (sitemap_ns && name_is(name, "urlset")) {
        sm->format = BC_SITEMAP_FORMAT_XML;
        sm->kind = BC_SITEMAP_URLSET;
    } else if (sitemap_ns && name_is(name, "sitemapindex")) {
        sm->format = BC_SITEMAP_FORMAT_XML;
        sm->kind = BC_SITEMAP_INDEX;
    } else if (!uri && name_is(name, "rss")) {
        sm->format = BC_SITEMAP_FORMAT_RSS;
        sm->kind = BC_SITEMAP_URLSET;
        sm->entry_depth = 3; /* rss/channel/item */
    } else if ((uri_is(uri, ATOM_NS) || uri_is(uri, ATOM_NS_03)) &&
               name_is(name, "feed")) {
        sm->format = BC_SITEMAP_FORMAT_ATOM;
        sm->kind = BC_SITEMAP_URLSET;
    } else {
        stop(sm, BC_SITEMAP_STOP_NOT_SITEMAP);
    }
}

/* The name of an entry and of its URL element, by format. */
static bool is_entry(const struct bc_sitemap *sm, const xmlChar *name)
{
    switch (sm->format) {
    case BC_SITEMAP_FORMAT_XML:
        return name_is(name, sm->kind == BC_SITEMAP_URLSET ? "url" : "sitemap");
    case BC_SITEMAP_FORMAT_RSS:
        return name_is(name, "item");
    case BC_SITEMAP_FORMAT_ATOM:
        return name_is(name, "entry");
    case BC_SITEMAP_FORMAT_UNKNOWN:
    case BC_SITEMAP_FORMAT_TEXT:
        break;
    }
    return false;
}

/*
 * An Atom <link>: its href, when rel is absent or "alternate" (RFC 4287
 * 4.2.7.2; Atom 0.3 the same). libxml2 hands attribute values over
 * with the predefined entities decoded, but an '&' (from &amp; or
 * &#38;) comes back as "&#38;" when entity substitution is off; that
 * is undone here (a raw '&' cannot be in a well-formed value).
 */
static void atom_link(struct bc_sitemap *sm, int nb_attributes,
                      const xmlChar **attributes)
{
    const xmlChar *href = NULL, *href_end = NULL;
    for (int i = 0; i < nb_attributes; i++) {
        const xmlChar **a = attributes + 5 * i;
        if (a[2]) /* a namespaced attribute */
            continue;
        if (name_is(a[0], "rel")) {
            size_t n = (size_t)(a[4] - a[3]);
            if (!(n == 9 && memcmp(a[3], "alternate", 9) == 0))
                return;
        } else if (name_is(a[0], "href")) {
            href = a[3];
            href_end = a[4];
        }
    }
    if (!href)
        return;
    sm->loc_len = 0;
    sm->loc_long = false;
    for (const xmlChar *p = href; p < href_end; p++) {
        if (*p == '&' && href_end - p >= 5 && memcmp(p, "&#38;", 5) == 0) {
            loc_put(sm, (const unsigned char *)"&", 1);
            p += 4;
        } else {
            loc_put(sm, p, 1);
        }
    }
    sm->loc_done = true;
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                     const xmlChar *uri, int nb_namespaces,
                     const xmlChar **namespaces, int nb_attributes,
                     int nb_defaulted, const xmlChar **attributes)
{
    (void)prefix, (void)nb_namespaces, (void)namespaces, (void)nb_defaulted;
    struct bc_sitemap *sm = ctx;
    if (sm->stop != BC_SITEMAP_STOP_NONE)
        return;
    sm->depth++;
    if (sm->ignore_depth)
        return;
    if (sm->depth == 1) {
        root_start(sm, localname, uri);
        return;
    }
    if (!own_ns(sm, uri)) {
        sm->ignore_depth = sm->depth;
        return;
    }
    if (sm->depth < sm->entry_depth) {
        /* RSS: only <channel> holds items. */
        if (!name_is(localname, "channel"))
            sm->ignore_depth = sm->depth;
    } else if (sm->depth == sm->entry_depth) {
        sm->in_entry = is_entry(sm, localname);
        sm->loc_len = sm->lastmod_len = 0;
        sm->loc_done = sm->lastmod_done = sm->loc_long = false;
    } else if (sm->depth == sm->entry_depth + 1 && sm->in_entry) {
        bool atom = sm->format == BC_SITEMAP_FORMAT_ATOM;
        if (atom && !sm->loc_done && name_is(localname, "link"))
            atom_link(sm, nb_attributes, attributes);
        sm->in_loc =
            !atom && !sm->loc_done &&
            name_is(localname,
                    sm->format == BC_SITEMAP_FORMAT_RSS ? "link" : "loc");
        sm->in_lastmod =
            !sm->lastmod_done && (atom ? name_is(localname, "updated") ||
                                             name_is(localname, "modified")
                                       : sm->format == BC_SITEMAP_FORMAT_XML &&
                                             name_is(localname, "lastmod"));
    }
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                   const xmlChar *uri)
{
    (void)localname, (void)prefix, (void)uri;
    struct bc_sitemap *sm = ctx;
    if (sm->stop != BC_SITEMAP_STOP_NONE || sm->depth == 0)
        return;
    if (sm->ignore_depth) {
        if (sm->depth == sm->ignore_depth)
            sm->ignore_depth = 0;
    } else if (sm->depth == sm->entry_depth + 1 && sm->in_entry) {
        if (sm->in_loc)
            sm->loc_done = true;
        if (sm->in_lastmod)
            sm->lastmod_done = true;
        sm->in_loc = sm->in_lastmod = false;
    } else if (sm->depth == sm->entry_depth && sm->in_entry) {
        sm->in_entry = false;
        entry_end(sm);
    }
    sm->depth--;
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
    struct bc_sitemap *sm = ctx;
    if (sm->stop != BC_SITEMAP_STOP_NONE || len <= 0 || sm->ignore_depth ||
        sm->depth != sm->entry_depth + 1)
        return;
    if (sm->in_loc) {
        loc_put(sm, ch, (size_t)len);
    } else if (sm->in_lastmod) {
        size_t room = LASTMOD_KEEP - sm->lastmod_len;
        size_t n = (size_t)len < room ? (size_t)len : room;
        memcpy(sm->lastmod + sm->lastmod_len, ch, n);
        sm->lastmod_len += n;
    }
}

/* A <!DOCTYPE>: refused before its declarations are read. */
static void on_doctype(void *ctx, const xmlChar *name,
                       const xmlChar *external_id, const xmlChar *system_id)
{
    (void)name, (void)external_id, (void)system_id;
    stop(ctx, BC_SITEMAP_STOP_DOCTYPE);
}

/* An entity declaration can only come after a DOCTYPE, which stopped the
 * parser; refused here too, in case a libxml2 reports them first. */
static void on_entity_decl(void *ctx, const xmlChar *name, int type,
                           const xmlChar *public_id, const xmlChar *system_id,
                           xmlChar *content)
{
    (void)name, (void)type, (void)public_id, (void)system_id, (void)content;
    stop(ctx, BC_SITEMAP_STOP_DOCTYPE);
}

/* libxml2's errors come here (never to stderr); the parse's return code
 * and well-formedness decide whether one stops the parser. */
static void on_error(void *ctx, xmlErrorPtr error)
{
    (void)ctx, (void)error;
}

/* ---- feeding -------------------------------------------------------------- */

/* Give the XML parser n bytes (n <= XML_PIECE). */
static void xml_parse(struct bc_sitemap *sm, const unsigned char *data,
                      size_t n)
{
    int rc = xmlParseChunk(sm->ctxt, (const char *)data, (int)n, 0);
    if ((rc != 0 || !sm->ctxt->wellFormed) && sm->stop == BC_SITEMAP_STOP_NONE)
        stop(sm, rc == XML_ERR_NO_MEMORY ? BC_SITEMAP_STOP_NOMEM
                                         : BC_SITEMAP_STOP_MALFORMED);
}

/* Is s (len bytes, trimmed) an absolute http or https URL: the scheme,
 * "//", something after it, no whitespace or control byte? */
static bool is_http_url(const char *s, size_t len)
{
    size_t i = 0;
    if (len >= 7 && strncasecmp(s, "http://", 7) == 0)
        i = 7;
    else if (len >= 8 && strncasecmp(s, "https://", 8) == 0)
        i = 8;
    else
        return false;
    if (i == len)
        return false;
    for (; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c == 0x7F)
            return false;
    }
    return true;
}

/*
 * A line of a text sitemap is complete (in sm->loc, leading whitespace
 * dropped). Empty lines are skipped; a first line that is no absolute
 * http(s) URL means the file is some other text (STOP_NOT_SITEMAP); a
 * later one is skipped and counted.
 */
static void text_line(struct bc_sitemap *sm)
{
    size_t len = sm->loc_len;
    bool too_long = sm->loc_long;
    sm->loc_len = 0;
    sm->loc_long = false;
    while (len > 0 && is_ws(sm->loc[len - 1]))
        len--;
    if (len == 0 && !too_long)
        return;
    bool first = sm->text_lines++ == 0;
    if (too_long) {
        sm->stats.skipped_long++;
    } else if (is_http_url(sm->loc, len)) {
        report_entry(sm, sm->loc, len);
    } else if (first) {
        sm->format = BC_SITEMAP_FORMAT_UNKNOWN;
        sm->kind = BC_SITEMAP_UNKNOWN;
        stop(sm, BC_SITEMAP_STOP_NOT_SITEMAP);
    } else {
        sm->stats.not_url++;
    }
}

/* Text: lines end at LF (a CR before it is whitespace, trimmed). */
static void text_feed(struct bc_sitemap *sm, const unsigned char *data,
                      size_t n)
{
    while (n > 0 && sm->stop == BC_SITEMAP_STOP_NONE) {
        const unsigned char *nl = memchr(data, '\n', n);
        size_t run = nl ? (size_t)(nl - data) : n;
        loc_put(sm, data, run);
        if (!nl)
            return;
        text_line(sm);
        data += run + 1;
        n -= run + 1;
    }
}

/*
 * Before the format is known: a UTF-8 BOM and whitespace are held (the
 * first LEAD_KEEP bytes of them kept); the first other byte decides. A
 * '<' (or a UTF-16 byte order mark, or the NUL of UTF-16 "<") is XML,
 * which gets the held bytes as they were; anything else is a text
 * sitemap, which drops them. Returns the bytes consumed.
 */
static size_t detect(struct bc_sitemap *sm, const unsigned char *data, size_t n)
{
    static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = data[i];
        if (sm->lead_bom && c == bom[sm->lead_len]) {
            sm->lead[sm->lead_len++] = c;
            sm->lead_bom = sm->lead_len < 3;
            continue;
        }
        sm->lead_bom = false;
        if (!is_ws((char)c))
            break;
        if (sm->lead_len < LEAD_KEEP)
            sm->lead[sm->lead_len++] = c;
    }
    if (i == n)
        return n;
    unsigned char c = data[i];
    if (c == '<' || c == 0xFE || c == 0xFF || c == 0) {
        sm->doc = DOC_XML;
        if (sm->lead_len > 0)
            xml_parse(sm, sm->lead, sm->lead_len);
    } else {
        sm->doc = DOC_TEXT;
        sm->format = BC_SITEMAP_FORMAT_TEXT;
        sm->kind = BC_SITEMAP_URLSET;
    }
    return i;
}

/* The document (after inflation), within the max_bytes budget: to the
 * XML parser or the text reader. */
static void doc_feed(struct bc_sitemap *sm, const unsigned char *data,
                     size_t len)
{
    while (len > 0 && sm->stop == BC_SITEMAP_STOP_NONE) {
        uint64_t budget = sm->cfg.max_bytes - sm->stats.bytes_xml;
        if (budget == 0) {
            stop(sm, BC_SITEMAP_STOP_TOO_LARGE);
            return;
        }
        size_t n = len < XML_PIECE ? len : XML_PIECE;
        if ((uint64_t)n > budget)
            n = (size_t)budget;
        sm->stats.bytes_xml += n;
        const unsigned char *p = data;
        size_t m = n;
        if (sm->doc == DOC_UNDECIDED) {
            size_t used = detect(sm, p, m);
            p += used;
            m -= used;
        }
        if (m > 0 && sm->stop == BC_SITEMAP_STOP_NONE) {
            if (sm->doc == DOC_XML)
                xml_parse(sm, p, m);
            else
                text_feed(sm, p, m);
        }
        data += n;
        len -= n;
    }
}

/* Inflate len bytes of gzip input and parse what comes out. */
static void gzip_feed(struct bc_sitemap *sm, const unsigned char *data,
                      size_t len)
{
    if (!sm->z_init) {
        if (inflateInit2(&sm->z, 16 + MAX_WBITS) != Z_OK) {
            stop(sm, BC_SITEMAP_STOP_NOMEM);
            return;
        }
        sm->z_init = true;
    }
    while (len > 0 && sm->stop == BC_SITEMAP_STOP_NONE) {
        uInt in = len > UINT_MAX ? UINT_MAX : (uInt)len;
        if (sm->z_ended) {
            /* Another gzip member follows the last one (RFC 1952 2.2). */
            if (inflateReset(&sm->z) != Z_OK) {
                stop(sm, BC_SITEMAP_STOP_GZIP);
                return;
            }
            sm->z_ended = false;
        }
        sm->z.next_in = (Bytef *)(uintptr_t)data;
        sm->z.avail_in = in;
        int rc;
        do {
            sm->z.next_out = sm->zbuf;
            sm->z.avail_out = ZBUF_BYTES;
            rc = inflate(&sm->z, Z_NO_FLUSH);
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
                stop(sm, rc == Z_MEM_ERROR ? BC_SITEMAP_STOP_NOMEM
                                           : BC_SITEMAP_STOP_GZIP);
                return;
            }
            doc_feed(sm, sm->zbuf, ZBUF_BYTES - sm->z.avail_out);
        } while (rc == Z_OK && sm->z.avail_out == 0 &&
                 sm->stop == BC_SITEMAP_STOP_NONE);
        if (rc == Z_STREAM_END)
            sm->z_ended = true;
        size_t used = in - sm->z.avail_in;
        data += used;
        len -= used;
        if (used == 0 && rc != Z_STREAM_END)
            break; /* inflate needs nothing more of this input */
    }
}

static void route(struct bc_sitemap *sm, const unsigned char *data, size_t len)
{
    if (sm->mode == MODE_GZIP)
        gzip_feed(sm, data, len);
    else
        doc_feed(sm, data, len);
}

/* Decide plain or gzip from the first two bytes, and feed them. */
static void decide(struct bc_sitemap *sm, const unsigned char *data, size_t len)
{
    unsigned char b0 = sm->have_first ? sm->first : data[0];
    unsigned char b1 = sm->have_first ? data[0] : data[1];
    sm->mode = b0 == 0x1f && b1 == 0x8b ? MODE_GZIP : MODE_PLAIN;
    sm->stats.gzip = sm->mode == MODE_GZIP;
    if (sm->have_first) {
        sm->have_first = false;
        route(sm, &sm->first, 1);
    }
    route(sm, data, len);
}

void bc_sitemap_global_init(void)
{
    xmlInitParser();
}

void bc_sitemap_config_init(struct bc_sitemap_config *config)
{
    if (!config)
        return;
    memset(config, 0, sizeof(*config));
    config->max_urls = BC_SITEMAP_MAX_URLS;
    config->max_bytes = BC_SITEMAP_MAX_BYTES;
    config->max_loc_bytes = BC_SITEMAP_MAX_LOC_BYTES;
}

enum bc_status bc_sitemap_create(const struct bc_sitemap_config *config,
                                 struct bc_sitemap **out)
{
    if (!config || !out)
        return BC_ERR_INVALID_ARG;
    struct bc_sitemap *sm = calloc(1, sizeof(*sm));
    if (!sm)
        return BC_ERR_NOMEM;
    sm->cfg = *config;
    sm->lead_bom = true;
    if (!sm->cfg.max_urls)
        sm->cfg.max_urls = BC_SITEMAP_MAX_URLS;
    if (!sm->cfg.max_bytes)
        sm->cfg.max_bytes = BC_SITEMAP_MAX_BYTES;
    if (!sm->cfg.max_loc_bytes)
        sm->cfg.max_loc_bytes = BC_SITEMAP_MAX_LOC_BYTES;
    sm->loc = malloc(sm->cfg.max_loc_bytes);
    sm->zbuf = malloc(ZBUF_BYTES);
    if (!sm->loc || !sm->zbuf)
        goto out_free;

    xmlSAXHandler sax;
    memset(&sax, 0, sizeof(sax));
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_text;
    sax.cdataBlock = on_text;
    sax.internalSubset = on_doctype;
    sax.entityDecl = on_entity_decl;
    sax.serror = on_error;
    sm->ctxt = xmlCreatePushParserCtxt(&sax, sm, NULL, 0, NULL);
    if (!sm->ctxt)
        goto out_free;
    /* No XML_PARSE_NOENT (entities stay references), no DTDLOAD, no
     * HUGE; NONET forbids any network access from the parser. */
    xmlCtxtUseOptions(sm->ctxt, XML_PARSE_NONET | XML_PARSE_NOERROR |
                                    XML_PARSE_NOWARNING);
    *out = sm;
    return BC_OK;

out_free:
    free(sm->loc);
    free(sm->zbuf);
    free(sm);
    return BC_ERR_NOMEM;
}

enum bc_status bc_sitemap_feed(struct bc_sitemap *sm, const void *data,
                               size_t len)
{
    if (!sm || (!data && len > 0) || sm->finished)
        return BC_ERR_INVALID_ARG;
    sm->stats.bytes_in += len;
    if (len == 0 || sm->stop != BC_SITEMAP_STOP_NONE)
        return BC_OK;
    const unsigned char *p = data;
    if (sm->mode != MODE_UNDECIDED) {
        route(sm, p, len);
    } else if (!sm->have_first && len == 1) {
        sm->first = p[0];
        sm->have_first = true;
    } else {
        decide(sm, p, len);
    }
    return BC_OK;
}

enum bc_status bc_sitemap_finish(struct bc_sitemap *sm)
{
    if (!sm || sm->finished)
        return BC_ERR_INVALID_ARG;
    if (sm->stop == BC_SITEMAP_STOP_NONE && sm->have_first) {
        sm->have_first = false;
        sm->mode = MODE_PLAIN;
        doc_feed(sm, &sm->first, 1);
    }
    if (sm->stop == BC_SITEMAP_STOP_NONE && sm->mode == MODE_GZIP &&
        !sm->z_ended)
        stop(sm, BC_SITEMAP_STOP_GZIP); /* the stream was cut short */
    if (sm->stop == BC_SITEMAP_STOP_NONE && sm->doc == DOC_UNDECIDED) {
        /* Empty, or only a BOM and whitespace: no XML document. */
        sm->doc = DOC_XML;
        if (sm->lead_len > 0)
            xml_parse(sm, sm->lead, sm->lead_len);
    }
    if (sm->stop == BC_SITEMAP_STOP_NONE && sm->doc == DOC_TEXT &&
        (sm->loc_len > 0 || sm->loc_long))
        text_line(sm); /* the last line, without its LF */
    if (sm->stop == BC_SITEMAP_STOP_NONE && sm->doc == DOC_XML) {
        int rc = xmlParseChunk(sm->ctxt, NULL, 0, 1);
        if (rc != 0 || !sm->ctxt->wellFormed)
            stop(sm, rc == XML_ERR_NO_MEMORY ? BC_SITEMAP_STOP_NOMEM
                                             : BC_SITEMAP_STOP_MALFORMED);
    }
    sm->finished = true;
    return BC_OK;
}

enum bc_sitemap_stop bc_sitemap_stopped(const struct bc_sitemap *sm)
{
    return sm ? sm->stop : BC_SITEMAP_STOP_NONE;
}

enum bc_sitemap_kind bc_sitemap_kind(const struct bc_sitemap *sm)
{
    return sm ? sm->kind : BC_SITEMAP_UNKNOWN;
}

enum bc_sitemap_format bc_sitemap_format(const struct bc_sitemap *sm)
{
    return sm ? sm->format : BC_SITEMAP_FORMAT_UNKNOWN;
}

const char *bc_sitemap_format_name(enum bc_sitemap_format format)
{
    if ((unsigned)format < sizeof(format_names) / sizeof(format_names[0]))
        return format_names[format];
    return "unknown";
}

void bc_sitemap_stats(const struct bc_sitemap *sm,
                      struct bc_sitemap_stats *stats)
{
    if (!stats)
        return;
    if (!sm)
        memset(stats, 0, sizeof(*stats));
    else
        *stats = sm->stats;
}

void bc_sitemap_free(struct bc_sitemap *sm)
{
    if (!sm)
        return;
    if (sm->ctxt) {
        if (sm->ctxt->myDoc)
            xmlFreeDoc(sm->ctxt->myDoc);
        xmlFreeParserCtxt(sm->ctxt);
    }
    if (sm->z_init)
        inflateEnd(&sm->z);
    free(sm->loc);
    free(sm->zbuf);
    free(sm);
}
