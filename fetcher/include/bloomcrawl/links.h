/*
 * bloomcrawl/links.h - streaming link extraction from HTML.
 *
 * A link extractor is fed a page's body in chunks of any size, as they
 * come off the network, and calls back once per link it finds:
 *
 *   - <a href> and <area href>,
 *   - <frame src> and <iframe src>,
 *   - <link href> whose rel holds canonical, alternate, next or prev
 *     (and not stylesheet),
 *
 * each with the base URL in effect at that point of the document and flags
 * (rel=nofollow on the link, the kind of link, an earlier meta robots
 * nofollow). <meta name=robots content=...> nofollow/noindex/none set the
 * page flags. The href is handed over as the page wrote it, entities
 * decoded (&amp; is &); resolving and normalizing it is the caller's job
 * (frontier/url). Nothing in <script>, <style> or comments is a link.
 *
 * Bases: the base starts as the document URL given to bc_links_create().
 * The first <base href> of the page replaces it for every link after it
 * (HTML uses only the first <base> with an href); such links carry
 * BC_LINK_BASE_HREF, and their base is the raw <base href> value, which
 * may itself be relative: resolve it against the document URL first.
 * Links before the <base> element keep the document URL (a streaming
 * parser cannot look ahead). A <base href> over the length cap is
 * skipped (and counted), so a later one may become the base.
 *
 * Hostile input is expected: any bytes (NUL, broken encodings, tag soup,
 * deep nesting, megabyte attributes) are parsed without crashing, in time
 * linear in the input, and nothing is ever printed. An href (or base)
 * longer than max_href_bytes is skipped and counted, never truncated.
 * One tag's attribute names and kept values (at most max_href_bytes + 1
 * bytes of each value) share a buffer of 4 * (max_href_bytes + 1) +
 * 65536 bytes, the tag name included: an href whose value no longer fits
 * is skipped and counted in skipped_long, one whose name no longer fits
 * is dropped and counted in parse_errors. NUL becomes U+FFFD, as in a
 * browser.
 *
 * The page is read as a browser's HTML parser reads it: the extractor is
 * the WHATWG HTML Standard's tokenizer (section 13.2.5) plus the few
 * tree-construction rules that change tokenization, so text inside
 * <title>, <textarea>, <script>, <style>, <xmp>, <iframe>, <noembed>,
 * <noframes>, <noscript> (as with scripting on) and after <plaintext>,
 * and CDATA in <svg>/<math>, is never a link. Bytes are tokenized as
 * they are (UTF-8 and every ASCII-compatible encoding); a UTF-16 page
 * (byte order mark, or '<' and NUL as its first two bytes) is decoded
 * and its hrefs reported as UTF-8.
 *
 * Text: with an on_text callback the extractor also hands over the
 * page's visible text, the character data a browser's document holds
 * outside the elements it never renders, run by run as the tokenizer
 * reads it (bc_links_text_fn says which text is left out, and why).
 *
 * Thread safety: one extractor must be used by one thread at a time;
 * different extractors may run in different threads. There is no
 * process-wide state.
 */
#ifndef BC_FETCHER_LINKS_H
#define BC_FETCHER_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-link flags, or-ed together in the on_link callback's flags. */
enum bc_link_flag {
    BC_LINK_ANCHOR = 1u << 0,        /* <a href> or <area href> */
    BC_LINK_FRAME = 1u << 1,         /* <frame src> or <iframe src> */
    BC_LINK_REL_CANONICAL = 1u << 2, /* <link rel=canonical> */
    BC_LINK_REL_ALTERNATE = 1u << 3, /* <link rel=alternate> */
    BC_LINK_REL_NEXT = 1u << 4,      /* <link rel=next> */
    BC_LINK_REL_PREV = 1u << 5,      /* <link rel=prev> */
    BC_LINK_NOFOLLOW = 1u << 6,      /* rel holds nofollow */
    BC_LINK_PAGE_NOFOLLOW = 1u << 7, /* a meta robots nofollow came before */
    BC_LINK_BASE_HREF = 1u << 8      /* base is a <base href> value */
};

/* Page-level flags from <meta name=robots content=...>. */
enum bc_page_flag {
    BC_PAGE_NOFOLLOW = 1u << 0, /* nofollow or none */
    BC_PAGE_NOINDEX = 1u << 1   /* noindex or none */
};

/*
 * Called once per link, in document order. href and base are not
 * NUL-terminated and are valid only during the call; len <= the
 * configured max_href_bytes. The callback must not call back into the
 * same extractor.
 */
typedef void (*bc_links_link_fn)(void *user, const char *href, size_t len,
                                 const char *base, size_t base_len,
                                 unsigned flags);

/*
 * Called with each run of the page's visible text, in document order:
 * the character data of the document as the tokenizer reads it,
 * character references decoded (to UTF-8). A NUL byte stays NUL in
 * ordinary text (a browser drops it there) and is U+FFFD in the text of
 * title, textarea, xmp and plaintext (the tokenizer replaces it).
 * Concatenated, the runs are the document's text as rendering separates
 * its words: textContent without the elements left out below, and one
 * space (a run of its own, " ") where a tag between two pieces of text
 * breaks words - any HTML start or end tag but those of the inline
 * text-level elements (a, abbr, b, bdi, bdo, big, cite, code, data, del,
 * dfn, em, font, i, ins, kbd, mark, nobr, q, rp, rt, ruby, s, samp,
 * small, span, strike, strong, sub, sup, time, tt, u, var, wbr) and of
 * those with no box (html, head, body, base, link, meta, script, style,
 * template, noscript, noembed, noframes, frameset, frame, svg, math);
 * tags inside svg and math break nothing. So "<b>W</b>ord" is the word
 * "Word", and "<li>a</li><li>b</li>" is "a b" where textContent has
 * "ab"; no space comes before the first text or after the last. A run
 * may end anywhere (at a tag, a character reference, a chunk's end, in
 * the middle of a UTF-8 sequence). Bytes: UTF-8
 * for UTF-8 and UTF-16 pages; a page in another ASCII-compatible
 * encoding gives its own bytes (and UTF-8 for its character
 * references).
 *
 * Left out, because a browser never renders it as the page's text:
 *   - <script>, <style>, and svg or math <script>/<style> contents;
 *   - <noscript> (RAWTEXT with scripting on, as the links are read),
 *     <noembed>, <noframes> and <iframe> contents (fallbacks a browser
 *     that supports scripts, embeds, frames and iframes does not show);
 *   - <template> contents (a fragment outside the document);
 *   - everything in a frameset document after its <frameset> (the tree
 *     builder ignores text there);
 *   - comments, DOCTYPEs, tags and attribute values.
 * Kept: the text of <title> (what a page calls itself, and what a
 * search engine shows), <textarea>, <xmp>, <plaintext>, CDATA sections
 * in svg and math, and whitespace as written (CR included). text is not
 * NUL-terminated, len >= 1, valid only during the call; the callback
 * must not call back into the same extractor.
 */
typedef void (*bc_links_text_fn)(void *user, const char *text, size_t len);

/* Default maximum length of an href (and of a <base href>): 8 KiB. */
#define BC_LINKS_DEFAULT_MAX_HREF 8192u

struct bc_links_config {
    bc_links_link_fn on_link; /* may be NULL: only count */
    void *user;               /* first argument of on_link and on_text */
    size_t max_href_bytes;    /* longer hrefs are skipped and counted */
    bc_links_text_fn on_text; /* may be NULL (the default): no text is
                                 reported, and extraction costs what it
                                 did without it */
};

/* Counters of one extractor. */
struct bc_links_stats {
    uint64_t links;        /* links reported through on_link */
    uint64_t skipped_long; /* hrefs/bases longer than max_href_bytes */
    uint64_t parse_errors; /* dropped attributes (over 256 in a tag, or a
                              name over the tag buffer) and undecodable
                              UTF-16 units; never printed */
    uint64_t bytes;        /* bytes fed */
};

struct bc_links;

/*
 * Process-wide initialization: nothing to do since the extractor has no
 * global state; kept so that existing callers still build. Cost: none.
 */
void bc_links_global_init(void);

/* Fill *config with the defaults: no callbacks, 8 KiB href cap. */
void bc_links_config_init(struct bc_links_config *config);

/*
 * Create an extractor for one document whose URL is doc_url (doc_len
 * bytes; it is copied and used as the initial base; may be empty).
 * Returns BC_OK and sets *out, BC_ERR_INVALID_ARG (NULL config or out,
 * max_href_bytes 0), BC_ERR_TOO_LARGE (doc_url over 1 MiB) or
 * BC_ERR_NOMEM. Free with bc_links_free().
 */
enum bc_status bc_links_create(const struct bc_links_config *config,
                               const char *doc_url, size_t doc_len,
                               struct bc_links **out);

/*
 * Feed the next len bytes of the document; links complete in what was fed
 * so far are reported before it returns (a tag cut by a chunk boundary is
 * reported when its end arrives). Cost: linear in len. Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL extractor, or feed after finish) or
 * BC_ERR_NOMEM (the tag buffer or a <base href> copy could not be
 * allocated: the extractor stops; what was reported stays valid).
 */
enum bc_status bc_links_feed(struct bc_links *links, const void *data,
                             size_t len);

/*
 * Tell the extractor the document is complete: it parses what is left
 * (an unterminated last tag included) and reports its links. Feeding
 * after this is refused. Returns like bc_links_feed().
 */
enum bc_status bc_links_finish(struct bc_links *links);

/* The page flags (BC_PAGE_*) seen so far; 0 for NULL. */
unsigned bc_links_page_flags(const struct bc_links *links);

/* Copy the counters into *stats (zeros for a NULL extractor). */
void bc_links_stats(const struct bc_links *links, struct bc_links_stats *stats);

/* Free an extractor; NULL is a no-op. */
void bc_links_free(struct bc_links *links);

#ifdef __cplusplus
}
#endif

#endif /* BC_FETCHER_LINKS_H */
