/*
 * links.c - streaming link extraction: libxml2's HTML push parser, SAX.
 *
 * THE PROBLEM
 * A crawler fetches a page to find the page's links. The page arrives in
 * chunks of a few kilobytes, may be megabytes long, and may be written by
 * anyone: tag soup, unclosed elements, entities in attribute values,
 * comments and scripts full of things that look like links but are not,
 * broken encodings, NUL bytes, attributes a megabyte long, elements
 * nested a hundred thousand deep. The extractor must find the links a
 * browser would follow, in bounded memory, in time linear in the input,
 * and never crash or print.
 *
 * WHY STREAMING, WHY NO WHOLE-PAGE BUFFER
 * The obvious way - download the body into a buffer, build a DOM tree,
 * walk it - costs memory proportional to the page times the number of
 * transfers in flight (a crawler keeps dozens to hundreds going), adds a
 * full copy per page, and delays the first link until the last byte. A
 * push parser instead consumes each chunk as the network delivers it
 * (curl's write callback feeds bc_links_feed directly) and keeps only
 * what it needs to finish the tag it is in: the memory per transfer is
 * the parser's state plus the current unfinished tag, not the page.
 *
 * THE SAX APPROACH
 * libxml2's HTML parser is the tolerant HTML 4 parser behind xmllint
 * --html and lxml.html: it fixes up tag soup (implied end tags, stray
 * closers), decodes entities and character references, knows that the
 * content of <script> and <style> is raw text and that comments are not
 * markup. In push mode (htmlCreatePushParserCtxt + htmlParseChunk) it
 * accepts input in arbitrary pieces; a start tag is parsed only once its
 * closing '>' has arrived, so a tag cut by a chunk boundary is reported
 * when its end comes - the results do not depend on how the body was cut
 * (the tests feed every fixture 1 byte, 7 bytes and whole at a time and
 * compare). With a SAX handler that has only startElement set, no tree
 * is built: the parser calls us once per start tag with the element name
 * (lower-cased by libxml2, so <A HREF> is a href) and its attributes
 * (values entity-decoded), and forgets the element.
 *
 *     chunk --htmlParseChunk--> tokenizer --startElement(name, atts)-->
 *         a/area href, frame/iframe src, link href+rel  --> on_link()
 *         base href (first one)                         --> new base
 *         meta name=robots content                      --> page flags
 *
 * WHAT IS A LINK
 * a/area href and frame/iframe src always; link href only with a rel of
 * canonical, alternate, next or prev (never stylesheet, icon, preload:
 * they are resources, not pages). rel tokens are matched
 * case-insensitively; rel=nofollow sets BC_LINK_NOFOLLOW on that link.
 * <meta name=robots content="noindex, nofollow"> (or "none") sets the page
 * flags; links after it also carry BC_LINK_PAGE_NOFOLLOW. The first
 * <base href> becomes the base of the links after it (HTML honours only
 * the first). Hrefs are reported raw: whitespace, javascript: and mailto:
 * included - deciding what is fetchable is the normalizer's job, in one
 * place.
 *
 * HOSTILE INPUT
 * - Length: an href or base longer than max_href_bytes (8 KiB by default;
 *   browsers and servers give up near there, and DESIGN caps URLs at
 *   2 KiB) is skipped and counted, never truncated into a different URL.
 *   libxml2 still has to hold the whole tag while it waits for its '>',
 *   which is bounded by the fetcher's body limit.
 * - NUL bytes: libxml2's HTML tokenizer ends a name or an attribute
 *   value at a NUL and loses what follows; HTML5 parsers ignore or
 *   replace them. A small input filter replaces each NUL by a space.
 * - Markup after </html>: once libxml2's push parser has closed the root
 *   element it ignores the rest of the input ("extra content at the end
 *   of the document"), yet pages often carry markup - and links - after
 *   </body></html>, which browsers parse into the body. The same filter
 *   turns "</html" and "</body" into "<!html" and "<!body", bogus
 *   declarations that libxml2 skips, so the root stays open to the end.
 *   The filter copies every byte once (into a 4 KiB buffer), whole runs
 *   from one '<' to the next, and holds back at most 5 bytes across a
 *   chunk boundary.
 * - Encodings: libxml2 picks the encoding from a BOM or <meta charset>,
 *   else UTF-8, and falls back to ISO-8859-1 on invalid UTF-8, so any
 *   byte string parses; what an href means in a legacy charset is the
 *   normalizer's business (it percent-encodes bytes >= 0x80). Known
 *   limits of libxml2 2.9: a byte sequence invalid in a declared legacy
 *   charset (iconv fails) stops the parse there - the links before it
 *   are reported - and UTF-16 documents yield no links.
 * - Errors: HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING silence the
 *   parser's own channel, and a structured error handler, installed on
 *   the calling thread only for the duration of each feed and restored
 *   after, counts everything else (encoding errors are raised without a
 *   parser context and would otherwise go to stderr).
 * - Nesting depth and tag soup cost the parser a name stack, linear in
 *   the input; no recursion.
 *
 * libxml2 GLOBAL STATE
 * xmlInitParser() must run once before parsers are used from several
 * threads (bc_links_global_init); everything else used here is per parser
 * context or per thread (the error handler globals are thread-local in a
 * threaded libxml2 build, which Debian's is).
 *
 * REFERENCES
 * libxml2 HTMLparser.h (push parser, options), parser.h (SAX handler);
 * HTML Living Standard, "the base element" (first base with href wins),
 * "link types" (nofollow, canonical, alternate, next, prev);
 * Google, "Robots meta tag specifications" (noindex, nofollow, none).
 */
#include <string.h>
#include <stdlib.h>

#include <libxml/HTMLparser.h>
#include <libxml/globals.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include "bloomcrawl/links.h"

/* Document URLs longer than this are refused by bc_links_create. */
#define BC_LINKS_MAX_DOC_URL (1u << 20)
/* The input filter: held-back bytes ("</html"), output buffer size. */
#define BC_LINKS_HOLD 6u
#define BC_LINKS_OUT  4096u

struct bc_links {
    htmlParserCtxtPtr ctxt; /* created on the first feed */
    bc_links_link_fn on_link;
    void *user;
    size_t max_href;
    char *doc_url; /* the document URL, NUL-terminated */
    size_t doc_len;
    char *base; /* the first <base href>, or NULL */
    size_t base_len;
    unsigned page_flags;
    bool finished;
    bool nomem;
    struct bc_links_stats stats;
    size_t hold_len;          /* bytes held back by the input filter */
    char hold[BC_LINKS_HOLD]; /* a possible "</html" or "</body" */
    size_t out_len;
    char out[BC_LINKS_OUT]; /* filtered bytes on their way to libxml2 */
};

void bc_links_global_init(void)
{
    xmlInitParser();
}

void bc_links_config_init(struct bc_links_config *config)
{
    if (!config)
        return;
    memset(config, 0, sizeof(*config));
    config->max_href_bytes = BC_LINKS_DEFAULT_MAX_HREF;
}

/* ASCII case-insensitive equality of a (length n) and NUL-terminated b. */
static bool ascii_eq(const char *a, size_t n, const char *b)
{
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i];
        unsigned char y = (unsigned char)b[i];
        if (y == 0)
            return false;
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return b[n] == 0;
}

static bool is_sep(unsigned char c, bool comma)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           (comma && c == ',');
}

/*
 * Visit the tokens of a space- (and, with comma, comma-) separated list
 * and return the or of the flags of the names that match. names[i] maps
 * to bits[i]; the lists end with a NULL name.
 */
static unsigned token_flags(const char *s, bool comma, const char *const *names,
                            const unsigned *bits)
{
    unsigned out = 0;
    while (s && *s) {
        while (*s && is_sep((unsigned char)*s, comma))
            s++;
        const char *start = s;
        while (*s && !is_sep((unsigned char)*s, comma))
            s++;
        size_t n = (size_t)(s - start);
        if (n == 0)
            continue;
        for (size_t i = 0; names[i]; i++) {
            if (ascii_eq(start, n, names[i]))
                out |= bits[i];
        }
    }
    return out;
}

/* rel tokens that matter; REL_STYLESHEET is internal only. */
#define REL_STYLESHEET (1u << 31)

static unsigned rel_flags(const char *rel)
{
    static const char *const names[] = {"canonical",  "alternate", "next",
                                        "prev",       "previous",  "nofollow",
                                        "stylesheet", NULL};
    static const unsigned bits[] = {
        BC_LINK_REL_CANONICAL, BC_LINK_REL_ALTERNATE, BC_LINK_REL_NEXT,
        BC_LINK_REL_PREV,      BC_LINK_REL_PREV,      BC_LINK_NOFOLLOW,
        REL_STYLESHEET};
    return token_flags(rel, false, names, bits);
}

static unsigned robots_flags(const char *content)
{
    static const char *const names[] = {"nofollow", "noindex", "none", NULL};
    static const unsigned bits[] = {BC_PAGE_NOFOLLOW, BC_PAGE_NOINDEX,
                                    BC_PAGE_NOFOLLOW | BC_PAGE_NOINDEX};
    return token_flags(content, true, names, bits);
}

/* The value of attribute name in a SAX attribute list, or NULL. */
static const char *attr(const xmlChar **atts, const char *name, bool *present)
{
    if (present)
        *present = false;
    if (!atts)
        return NULL;
    for (size_t i = 0; atts[i]; i += 2) {
        if (strcmp((const char *)atts[i], name) == 0) {
            if (present)
                *present = true;
            return atts[i + 1] ? (const char *)atts[i + 1] : "";
        }
    }
    return NULL;
}

static void report(struct bc_links *p, const char *href, unsigned flags)
{
    size_t len = strlen(href);
    if (len > p->max_href) {
        p->stats.skipped_long++;
        return;
    }
    if (p->page_flags & BC_PAGE_NOFOLLOW)
        flags |= BC_LINK_PAGE_NOFOLLOW;
    p->stats.links++;
    if (!p->on_link)
        return;
    if (p->base) {
        p->on_link(p->user, href, len, p->base, p->base_len,
                   flags | BC_LINK_BASE_HREF);
    } else {
        p->on_link(p->user, href, len, p->doc_url, p->doc_len, flags);
    }
}

static void set_base(struct bc_links *p, const char *href)
{
    size_t len = strlen(href);
    if (p->base)
        return; /* only the first <base href> counts */
    if (len > p->max_href) {
        p->stats.skipped_long++;
        return;
    }
    p->base = malloc(len + 1);
    if (!p->base) {
        p->nomem = true;
        return;
    }
    memcpy(p->base, href, len + 1);
    p->base_len = len;
}

/* SAX startElement: the whole of the extractor's view of the page. */
static void on_start(void *ctx, const xmlChar *xname, const xmlChar **atts)
{
    struct bc_links *p = ctx;
    const char *name = (const char *)xname;
    const char *v;

    if (!name || !atts)
        return;
    switch (name[0]) {
    case 'a':
        if ((name[1] == 0 || strcmp(name, "area") == 0) &&
            (v = attr(atts, "href", NULL)) != NULL) {
            unsigned rel = rel_flags(attr(atts, "rel", NULL));
            report(p, v, BC_LINK_ANCHOR | (rel & BC_LINK_NOFOLLOW));
        }
        break;
    case 'b':
        if (strcmp(name, "base") == 0 && (v = attr(atts, "href", NULL)) != NULL)
            set_base(p, v);
        break;
    case 'f':
    case 'i':
        if ((strcmp(name, "frame") == 0 || strcmp(name, "iframe") == 0) &&
            (v = attr(atts, "src", NULL)) != NULL)
            report(p, v, BC_LINK_FRAME);
        break;
    case 'l':
        if (strcmp(name, "link") == 0 &&
            (v = attr(atts, "href", NULL)) != NULL) {
            unsigned rel = rel_flags(attr(atts, "rel", NULL));
            unsigned kinds =
                rel & (BC_LINK_REL_CANONICAL | BC_LINK_REL_ALTERNATE |
                       BC_LINK_REL_NEXT | BC_LINK_REL_PREV);
            if (kinds && !(rel & REL_STYLESHEET))
                report(p, v, kinds | (rel & BC_LINK_NOFOLLOW));
        }
        break;
    case 'm':
        if (strcmp(name, "meta") == 0) {
            const char *n = attr(atts, "name", NULL);
            if (n && ascii_eq(n, strlen(n), "robots"))
                p->page_flags |= robots_flags(attr(atts, "content", NULL));
        }
        break;
    default:
        break;
    }
}

/* Structured error handler: count, never print; note memory errors. */
static void on_error(void *ctx, xmlErrorPtr err)
{
    struct bc_links *p = ctx;
    if (!p)
        return;
    p->stats.parse_errors++;
    if (err && err->code == XML_ERR_NO_MEMORY)
        p->nomem = true;
}

enum bc_status bc_links_create(const struct bc_links_config *config,
                               const char *doc_url, size_t doc_len,
                               struct bc_links **out)
{
    if (!config || !out || config->max_href_bytes == 0 || (!doc_url && doc_len))
        return BC_ERR_INVALID_ARG;
    if (doc_len > BC_LINKS_MAX_DOC_URL)
        return BC_ERR_TOO_LARGE;
    xmlInitParser();

    struct bc_links *p = calloc(1, sizeof(*p));
    if (!p)
        return BC_ERR_NOMEM;
    p->doc_url = malloc(doc_len + 1);
    if (!p->doc_url)
        goto out_free_links;
    if (doc_len)
        memcpy(p->doc_url, doc_url, doc_len);
    p->doc_url[doc_len] = 0;
    p->doc_len = doc_len;
    p->on_link = config->on_link;
    p->user = config->user;
    p->max_href = config->max_href_bytes;
    *out = p;
    return BC_OK;

out_free_links:
    free(p);
    return BC_ERR_NOMEM;
}

/* The calling thread's libxml2 error handlers, saved around a feed. */
struct saved_handlers {
    xmlStructuredErrorFunc serror;
    void *serror_ctx;
};

static void handlers_borrow(struct bc_links *p, struct saved_handlers *s)
{
    s->serror = xmlStructuredError;
    s->serror_ctx = xmlStructuredErrorContext;
    xmlSetStructuredErrorFunc(p, on_error);
}

static void handlers_restore(const struct saved_handlers *s)
{
    xmlSetStructuredErrorFunc(s->serror_ctx, s->serror);
}

/* Create the push parser context; handlers are borrowed by the caller. */
static bool make_ctxt(struct bc_links *p)
{
    xmlSAXHandler sax;
    memset(&sax, 0, sizeof(sax));
    sax.startElement = on_start;
    sax.serror = on_error;
    sax.initialized = XML_SAX2_MAGIC; /* so that serror is used */

    p->ctxt = htmlCreatePushParserCtxt(&sax, p, NULL, 0, NULL,
                                       XML_CHAR_ENCODING_NONE);
    if (!p->ctxt)
        return false;
    htmlCtxtUseOptions(p->ctxt, HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                    HTML_PARSE_NONET);
    return true;
}

/* Hand the filtered bytes collected in p->out to libxml2. */
static void flush_out(struct bc_links *p)
{
    if (p->out_len > 0) {
        htmlParseChunk(p->ctxt, p->out, (int)p->out_len, 0);
        p->out_len = 0;
    }
}

static void emit(struct bc_links *p, char c)
{
    if (p->out_len == sizeof(p->out))
        flush_out(p);
    p->out[p->out_len++] = c;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Is hold[0..n) a prefix of "</html" or "</body" (letters any case)? */
static bool end_tag_prefix(const char *hold, size_t n)
{
    static const char html[] = "</html";
    static const char body[] = "</body";
    bool h = true, b = true;
    for (size_t i = 0; i < n; i++) {
        char c = lower(hold[i]);
        h = h && c == html[i];
        b = b && c == body[i];
    }
    return h || b;
}

/* Copy a run of bytes that holds no '<' to the output, NUL -> space. */
static void emit_run(struct bc_links *p, const char *s, size_t n)
{
    while (n > 0) {
        if (p->out_len == sizeof(p->out))
            flush_out(p);
        size_t take = sizeof(p->out) - p->out_len;
        if (take > n)
            take = n;
        char *out = p->out + p->out_len;
        for (size_t j = 0; j < take; j++)
            out[j] = s[j] == 0 ? ' ' : s[j];
        p->out_len += take;
        s += take;
        n -= take;
    }
}

/* One byte through the filter while bytes are held back. */
static void filter_held_byte(struct bc_links *p, char c)
{
    p->hold[p->hold_len++] = c == 0 ? ' ' : c;
    if (p->hold_len == BC_LINKS_HOLD &&
        end_tag_prefix(p->hold, BC_LINKS_HOLD)) {
        p->hold[1] = '!';
        emit_run(p, p->hold, p->hold_len);
        p->hold_len = 0;
        return;
    }
    /* Release held bytes until what remains could start an end tag. */
    while (p->hold_len > 0 && !end_tag_prefix(p->hold, p->hold_len)) {
        emit(p, p->hold[0]);
        memmove(p->hold, p->hold + 1, --p->hold_len);
    }
}

/*
 * The input filter between the network and libxml2:
 *   - a NUL becomes a space (libxml2 would end an attribute value or a
 *     name at it, and lose what follows);
 *   - "</html" and "</body" become "<!html" and "<!body": once libxml2's
 *     push parser has closed the root element it ignores the rest of the
 *     input, yet pages often carry markup (and links) after </html>,
 *     which browsers parse as part of the body. "<!html>" is a bogus
 *     declaration that libxml2 skips. A possible end tag cut by a chunk
 *     boundary is held back (at most 5 bytes) until the next chunk.
 * Runs between two '<' are copied whole (memchr finds the next '<'); only
 * the few bytes held across a chunk boundary go one by one.
 */
static void feed_filtered(struct bc_links *p, const char *data, size_t len)
{
    size_t i = 0;
    while (i < len && p->hold_len > 0)
        filter_held_byte(p, data[i++]);
    while (i < len) {
        const char *lt = memchr(data + i, '<', len - i);
        size_t run_end = lt ? (size_t)(lt - data) : len;
        emit_run(p, data + i, run_end - i);
        i = run_end;
        if (i == len)
            break;
        size_t avail = len - i;
        if (avail >= BC_LINKS_HOLD) {
            if (end_tag_prefix(data + i, BC_LINKS_HOLD)) {
                emit(p, '<');
                emit(p, '!');
                emit_run(p, data + i + 2, BC_LINKS_HOLD - 2);
                i += BC_LINKS_HOLD;
            } else {
                emit(p, '<');
                i++;
            }
        } else if (end_tag_prefix(data + i, avail)) {
            /* A possible end tag cut by the chunk boundary: hold it. */
            memcpy(p->hold, data + i, avail);
            p->hold_len = avail;
            i = len;
        } else {
            emit(p, '<');
            i++;
        }
    }
    flush_out(p);
}

enum bc_status bc_links_feed(struct bc_links *p, const void *data, size_t len)
{
    if (!p || p->finished || (!data && len))
        return BC_ERR_INVALID_ARG;
    if (p->nomem)
        return BC_ERR_NOMEM;
    if (len == 0)
        return BC_OK;

    struct saved_handlers saved;
    handlers_borrow(p, &saved);
    if (!p->ctxt && !make_ctxt(p))
        p->nomem = true;
    else
        feed_filtered(p, data, len);
    handlers_restore(&saved);
    p->stats.bytes += len;
    return p->nomem ? BC_ERR_NOMEM : BC_OK;
}

enum bc_status bc_links_finish(struct bc_links *p)
{
    if (!p || p->finished)
        return BC_ERR_INVALID_ARG;
    p->finished = true;
    if (p->nomem)
        return BC_ERR_NOMEM;
    if (!p->ctxt)
        return BC_OK; /* nothing was fed */

    struct saved_handlers saved;
    handlers_borrow(p, &saved);
    for (size_t j = 0; j < p->hold_len; j++)
        emit(p, p->hold[j]);
    p->hold_len = 0;
    flush_out(p);
    htmlParseChunk(p->ctxt, "", 0, 1);
    handlers_restore(&saved);
    return p->nomem ? BC_ERR_NOMEM : BC_OK;
}

unsigned bc_links_page_flags(const struct bc_links *p)
{
    return p ? p->page_flags : 0;
}

void bc_links_stats(const struct bc_links *p, struct bc_links_stats *stats)
{
    if (!stats)
        return;
    if (!p) {
        memset(stats, 0, sizeof(*stats));
        return;
    }
    *stats = p->stats;
}

void bc_links_free(struct bc_links *p)
{
    if (!p)
        return;
    if (p->ctxt) {
        /* Freeing the context may release a document libxml2 started. */
        if (p->ctxt->myDoc)
            xmlFreeDoc(p->ctxt->myDoc);
        htmlFreeParserCtxt(p->ctxt);
    }
    free(p->base);
    free(p->doc_url);
    free(p);
}
