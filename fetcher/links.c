/*
 * links.c - streaming link extraction on a WHATWG HTML tokenizer.
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
 * push tokenizer instead consumes each chunk as the network delivers it
 * (curl's write callback feeds bc_links_feed directly) and keeps only
 * what it needs to finish the tag it is in: the memory per transfer is
 * the tokenizer's state plus the current unfinished tag, not the page.
 *
 * WHY TOKENIZE, NOT PARSE
 * A link is a start tag (a, area, frame, iframe, link) with an attribute
 * (href, src). Which elements those tags become in a browser's tree -
 * the tree builder's job: implied end tags, misnested formatting
 * elements, foster parenting out of tables - does not change which start
 * tags there are, with a few exceptions that change how the following
 * bytes are tokenized, and those are all this file tracks:
 *
 *   - after <title>, <textarea>: RCDATA (text and character references
 *     up to the matching end tag; "<a href>" inside is text);
 *   - after <style>, <xmp>, <iframe>, <noembed>, <noframes> and
 *     <noscript>: RAWTEXT. <noscript> is RAWTEXT in a browser with
 *     scripting enabled, which is what every mainstream browser is; a
 *     crawler that does not run scripts would see the noscript fallback
 *     links, but it reports what a browser's tree holds;
 *   - after <script>: script data, with the escaped ("<!--") and double-
 *     escaped ("<!--<script>") states;
 *   - after <plaintext>: everything to the end is text;
 *   - inside <svg> and <math> (foreign content), "<![CDATA[" opens a
 *     CDATA section instead of a bogus comment; a small stack of the
 *     open foreign elements (at most BC_LINKS_FOREIGN_DEPTH) follows
 *     integration points (foreignObject, desc, title; mi, mo, mn, ms,
 *     mtext, annotation-xml), where HTML rules apply again, and the HTML
 *     start tags that break out of foreign content (b, div, p, ...).
 *
 * Three more facts decide which start tags become elements of the
 * document's tree, and so which links and which base a browser has:
 *
 *   - <template>: its contents are a separate fragment, not in the tree,
 *     so a <base href> inside is not "the first base element with an
 *     href attribute in tree order" (HTML, "the base element"). Links
 *     inside are still reported (a script may stamp them into the page).
 *     State: the count of open HTML templates.
 *   - the frameset-ok flag (13.2.6.4.7): a <frameset> replaces the body
 *     only while no body exists yet or the flag is still "ok". Text that
 *     is not whitespace (the tokenizer watches the data state's text
 *     for it) and the start tags "in body" lists (img, table, li, pre,
 *     input but type=hidden, iframe, select, body, template, </br>, ...)
 *     make it "not ok"; any start tag the "in head" rules do not take
 *     makes the body. In a template a frameset is always ignored. A real
 *     page settles this at its first word of text; until then every tag
 *     is looked at (the filter asks for all of them).
 *   - the frameset modes (13.2.6.4.20-22): in a frameset only <frame>
 *     (a link), <frameset> and <noframes> (RAWTEXT) count, after its
 *     last </frameset> only <noframes>; every other tag is ignored and
 *     switches nothing. A <frame> elsewhere is dropped.
 *
 *   start tag --frameset_possible()?--> frameset_facts(): ok flag, body
 *       \--in a frameset--> frameset_start(): frame, frameset, noframes
 *       \--otherwise------> on_link_tag(), html_start(): template depth
 *
 * Known limits (a stream cannot take back what it reported): links
 * before a <frameset> that replaces the body ("<a href=x><frameset>",
 * no text between) are reported, though the body goes with them; "&#32;"
 * in the data state counts as text for the flag. A
 * UTF-8 BOM is dropped before tokenizing, as a browser's decoder drops
 * it, so that it does not count as text.
 *
 * The tokenizer (html_tokenizer.c) is the HTML Standard's state machine
 * and passes the html5lib tokenizer suite; the tree-builder facts above
 * are set from its start-tag callback. The first of duplicate attributes
 * wins, as in a browser.
 *
 *     chunk --> [UTF-16? to UTF-8] --> tokenizer --start tag-->
 *         a/area href, frame/iframe src, link href+rel  --> on_link()
 *         base href (first one)                         --> new base
 *         meta name=robots content                      --> page flags
 *         title, textarea, script, svg, ...             --> tokenizer state
 *         text outside script, style, template, ...     --> on_text()
 *
 * WHAT IS A LINK
 * a/area href and frame/iframe src always (an svg <a> without href uses
 * xlink:href); link href only with a rel of canonical, alternate, next
 * or prev (never stylesheet, icon, preload: they are resources, not
 * pages). rel tokens are matched case-insensitively; rel=nofollow sets
 * BC_LINK_NOFOLLOW on that link. <meta name=robots content="noindex,
 * nofollow"> (or "none") sets the page flags; links after it also carry
 * BC_LINK_PAGE_NOFOLLOW. The first <base href> outside templates (and
 * not in a frameset document's ignored tags) becomes the base of the
 * links after it (HTML honours only the first). Hrefs are reported as
 * the tokenizer decoded them (character references resolved, NUL as
 * U+FFFD): whitespace, javascript: and mailto: included - deciding what
 * is fetchable is the normalizer's job, in one place.
 *
 * TEXT (on_text)
 * Near-duplicate detection (dedup/simhash.c) wants a page's visible text,
 * and the tokenizer reads every byte of it anyway. With an on_text
 * callback the tokenizer reports character tokens (character references
 * decoded) and on_chars() passes on those a browser shows: not the text
 * of script, style, noscript, noembed, noframes and iframe (a browser
 * that runs scripts and shows frames never renders it), of a template's
 * contents, of a frameset document, or of an svg or math script or
 * style. Those elements are found by the start tags already watched for
 * the tokenizer's switches; the end of a hidden raw-text element is its
 * end tag, the only one the tokenizer emits in that state. Words are
 * kept apart as rendering keeps them, not run together as textContent
 * runs them: "<td>one</td><td>two</td>" is two words, not "onetwo"
 * (minified pages have no whitespace between blocks, and would lose
 * words and shingles). A start or end tag of any element but the inline
 * text-level ones and those with no box (joins_words(), links.h) owes a
 * space before the next visible text (text_tag()); so with on_text the
 * tokenizer reports every end tag and those start tags, without their
 * attributes. Without on_text none of this runs: the tokenizer skips
 * text and those tags unread, as before.
 *
 * ENCODINGS: BYTES IN, BYTES OUT
 * Every byte that matters to the tokenizer ('<', '>', '&', quotes, '=',
 * '/', whitespace) means the same in UTF-8, in windows-1252 and in the
 * other ASCII-compatible encodings browsers support: in the legacy CJK
 * multi-byte encodings (Shift_JIS, EUC-JP, EUC-KR, Big5, GBK, gb18030)
 * a trail byte is 0x40 or above, never one of those. So the tokenizer
 * works on the raw bytes and never decodes: an href comes out in the
 * document's own bytes. What the encoding means for a link: the WHATWG
 * URL parser percent-encodes a URL's path as UTF-8 but its query in the
 * document's encoding, so in a windows-1252 page "?q=caf\xE9" is sent as
 * %E9, and in a UTF-8 page "?q=caf\xC3\xA9" as %C3%A9. The project hands
 * the bytes over as they are and the normalizer percent-encodes every
 * byte >= 0x80 as it is (frontier/url.c): the query comes out as a
 * browser sends it, for every ASCII-compatible encoding; a non-ASCII
 * path in a legacy encoding is where a browser (which decodes the page
 * and encodes the path as UTF-8) differs. Two encodings are not ASCII-
 * compatible. ISO-2022-JP (7-bit escapes, double-byte text made of
 * ASCII bytes) is tokenized as bytes anyway, and its Japanese text may
 * look like markup: a known limit. UTF-16 ('<' is two bytes, one of them
 * NUL): a page that starts with a UTF-16 byte order mark (FE FF or FF
 * FE), or whose first two bytes are '<' and NUL in either order, is
 * decoded as UTF-16 and re-encoded as UTF-8 before tokenizing (a small
 * decoder below; a lone surrogate becomes U+FFFD), so its links come out
 * as UTF-8. A <meta charset=utf-16> in an ASCII-compatible page is read
 * as UTF-8, as the standard's prescan says.
 *
 * HOSTILE INPUT
 * - Length: an href or base longer than max_href_bytes (8 KiB by default;
 *   browsers and servers give up near there, and DESIGN caps URLs at
 *   2 KiB) is skipped and counted, never truncated into a different URL.
 *   The tokenizer keeps at most max_href_bytes + 1 bytes of any attribute
 *   value and counts the rest, so a megabyte attribute costs no memory.
 *   One tag's names and kept values share a buffer of at most
 *   4 * (max_href_bytes + 1) + 64 KiB; an href that no longer fits in a
 *   tag that big is skipped and counted as too long.
 * - Tag soup and nesting depth: nothing is nested but the foreign-
 *   content stack, which is capped; templates and framesets are
 *   counters; time is linear in the input.
 *
 * REFERENCES
 * HTML Living Standard: 13.2.5 "Tokenization", 13.2.6 "Tree
 * construction" (the rules for title, textarea, style, xmp, iframe,
 * noembed, noframes, noscript, script, plaintext; 13.2.6.5 "The rules
 * for parsing tokens in foreign content"), "the base element" (first
 * base with href wins), "link types" (nofollow, canonical, alternate,
 * next, prev); 13.2.3 "The input byte stream" (BOM sniffing, UTF-16 in
 * a meta prescan is UTF-8); WHATWG URL Standard, "query state" (the
 * query in the document's encoding); Google, "Robots meta tag
 * specifications" (noindex, nofollow, none).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/links.h"
#include "html_tokenizer_int.h"

/* Document URLs longer than this are refused by bc_links_create. */
#define BC_LINKS_MAX_DOC_URL (1u << 20)
/* Open foreign-content elements tracked; deeper ones are only counted. */
#define BC_LINKS_FOREIGN_DEPTH 64u
/* UTF-16 transcoding: output buffer size. */
#define BC_LINKS_OUT 4096u

enum ns { NS_HTML, NS_SVG, NS_MATH };

struct foreign_el {
    unsigned char ns;
    bool integration; /* HTML rules apply to its children */
    char name[15];    /* lower-cased, cut */
};

enum input_mode { IN_SNIFF, IN_BOM, IN_BYTES, IN_UTF16 };

/* Where the tree builder is with framesets (13.2.6.4.20-22). */
enum frameset_mode {
    FS_NONE, /* no frameset: the document has a body */
    FS_IN,   /* "in frameset": only <frame>, <frameset>, <noframes> */
    FS_AFTER /* "after frameset": only <noframes> */
};

struct bc_links {
    bc_links_link_fn on_link;
    bc_links_text_fn on_text;
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
    /* Foreign content: the open svg/math elements (and HTML elements
     * inside their integration points), innermost last. */
    struct foreign_el foreign[BC_LINKS_FOREIGN_DEPTH];
    size_t foreign_len;
    uint64_t foreign_over; /* pushes past the cap */
    /* Input: the first two bytes decide; UTF-16 is re-encoded. */
    enum input_mode mode;
    unsigned char sniff[2];
    size_t sniff_len;
    unsigned char kind; /* enum tag_kind of the current start tag */
    /* The tree builder's frameset facts: its mode, the open framesets,
     * the frameset-ok flag, whether the body was made. */
    unsigned char fs;
    bool frameset_ok;
    bool body_started;
    bool fs_watch;    /* frameset_possible(), kept by watch_update() */
    bool head_closed; /* </head> came: "after head" */
    size_t fs_depth;
    size_t template_depth; /* open HTML <template>s: not in the tree */
    bool text_hidden;      /* in a script, style, ... whose text is no
                              page text (on_text only) */
    bool text_since_break; /* text reported since the last word break */
    bool break_pending;    /* a word break is owed before the next text */
    bool big_endian;
    bool odd_held; /* the first byte of a unit waits in odd */
    unsigned char odd;
    unsigned hi_sur; /* a high surrogate waiting for its low half */
    struct bc_html_tokenizer tok; /* last: bc_html_tokenizer_init sets it */
};

void bc_links_global_init(void)
{
    /* Nothing is process-wide any more; kept for the API's callers. */
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

/* Exact equality of a (length n) and NUL-terminated b. */
static bool name_is(const char *a, size_t n, const char *b)
{
    return strlen(b) == n && memcmp(a, b, n) == 0;
}

static bool is_sep(unsigned char c, bool comma)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           (comma && c == ',');
}

/*
 * Visit the tokens of a space- (and, with comma, comma-) separated list
 * s (n bytes) and return the or of the flags of the names that match.
 * names[i] maps to bits[i]; the lists end with a NULL name.
 */
static unsigned token_flags(const char *s, size_t n, bool comma,
                            const char *const *names, const unsigned *bits)
{
    unsigned out = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && is_sep((unsigned char)s[i], comma))
            i++;
        size_t start = i;
        while (i < n && !is_sep((unsigned char)s[i], comma))
            i++;
        if (i == start)
            continue;
        for (size_t k = 0; names[k]; k++) {
            if (ascii_eq(s + start, i - start, names[k]))
                out |= bits[k];
        }
    }
    return out;
}

/* rel tokens that matter; REL_STYLESHEET is internal only. */
#define REL_STYLESHEET (1u << 31)

static unsigned rel_flags(const struct bc_html_attr *rel)
{
    static const char *const names[] = {"canonical",  "alternate", "next",
                                        "prev",       "previous",  "nofollow",
                                        "stylesheet", NULL};
    static const unsigned bits[] = {
        BC_LINK_REL_CANONICAL, BC_LINK_REL_ALTERNATE, BC_LINK_REL_NEXT,
        BC_LINK_REL_PREV,      BC_LINK_REL_PREV,      BC_LINK_NOFOLLOW,
        REL_STYLESHEET};
    if (!rel || rel->value_cut)
        return 0;
    return token_flags(rel->value, rel->value_len, false, names, bits);
}

static unsigned robots_flags(const struct bc_html_attr *content)
{
    static const char *const names[] = {"nofollow", "noindex", "none", NULL};
    static const unsigned bits[] = {BC_PAGE_NOFOLLOW, BC_PAGE_NOINDEX,
                                    BC_PAGE_NOFOLLOW | BC_PAGE_NOINDEX};
    if (!content || content->value_cut)
        return 0;
    return token_flags(content->value, content->value_len, true, names, bits);
}

/* The attribute called name (lower case) of a start tag, or NULL. */
static const struct bc_html_attr *attr(const struct bc_html_token *tok,
                                       const char *name)
{
    for (size_t i = 0; i < tok->n_attrs; i++) {
        if (name_is(tok->attrs[i].name, tok->attrs[i].name_len, name))
            return &tok->attrs[i];
    }
    return NULL;
}

/* Is the value over the cap (or cut by the tag buffer)? Counts it. */
static bool too_long(struct bc_links *p, const struct bc_html_attr *v)
{
    if (v->value_cut || v->value_len > p->max_href) {
        p->stats.skipped_long++;
        return true;
    }
    return false;
}

static void report(struct bc_links *p, const struct bc_html_attr *v,
                   unsigned flags)
{
    if (too_long(p, v))
        return;
    if (p->page_flags & BC_PAGE_NOFOLLOW)
        flags |= BC_LINK_PAGE_NOFOLLOW;
    p->stats.links++;
    if (!p->on_link)
        return;
    if (p->base) {
        p->on_link(p->user, v->value, v->value_len, p->base, p->base_len,
                   flags | BC_LINK_BASE_HREF);
    } else {
        p->on_link(p->user, v->value, v->value_len, p->doc_url, p->doc_len,
                   flags);
    }
}

static void set_base(struct bc_links *p, const struct bc_html_attr *v)
{
    if (p->base)
        return; /* only the first <base href> counts */
    if (too_long(p, v))
        return;
    p->base = malloc(v->value_len + 1);
    if (!p->base) {
        p->nomem = true;
        return;
    }
    memcpy(p->base, v->value, v->value_len);
    p->base[v->value_len] = 0;
    p->base_len = v->value_len;
}

/* The tags this file cares about. */
enum tag_kind {
    K_OTHER,
    K_A,
    K_AREA,
    K_BASE,
    K_FRAME,
    K_FRAMESET,
    K_TEMPLATE,
    K_IFRAME, /* a frame link, and RAWTEXT */
    K_LINK,
    K_META,
    K_FONT,
    K_SVG,
    K_MATH,
    K_RCDATA,  /* title, textarea */
    K_RAWTEXT, /* style, xmp, noembed, noframes, noscript */
    K_SCRIPT,
    K_PLAINTEXT
};

/* Classify a lower-cased tag name: by length, then a comparison or
 * three, since most tags on a page are none of these. */
static enum tag_kind tag_kind(const char *n, size_t len)
{
#define IS(s) (memcmp(n, s, sizeof(s) - 1) == 0)
    switch (len) {
    case 1:
        return n[0] == 'a' ? K_A : K_OTHER;
    case 3:
        return IS("svg") ? K_SVG : IS("xmp") ? K_RAWTEXT : K_OTHER;
    case 4:
        return IS("area")   ? K_AREA
               : IS("link") ? K_LINK
               : IS("meta") ? K_META
               : IS("base") ? K_BASE
               : IS("font") ? K_FONT
               : IS("math") ? K_MATH
                            : K_OTHER;
    case 5:
        return IS("title")   ? K_RCDATA
               : IS("style") ? K_RAWTEXT
               : IS("frame") ? K_FRAME
                             : K_OTHER;
    case 6:
        return IS("script") ? K_SCRIPT : IS("iframe") ? K_IFRAME : K_OTHER;
    case 7:
        return IS("noembed") ? K_RAWTEXT : K_OTHER;
    case 8:
        return IS("textarea")                     ? K_RCDATA
               : IS("frameset")                   ? K_FRAMESET
               : IS("template")                   ? K_TEMPLATE
               : IS("noframes") || IS("noscript") ? K_RAWTEXT
                                                  : K_OTHER;
    case 9:
        return IS("plaintext") ? K_PLAINTEXT : K_OTHER;
    default:
        return K_OTHER;
    }
#undef IS
}

/* Can a <frameset> still replace the body? Until then every start tag,
 * the end tags and the text of the data state are looked at. */
static bool frameset_possible(const struct bc_links *p)
{
    return p->fs_watch;
}

/* After the frameset facts change (they only go one way: once no
 * frameset can come, none ever can). */
static void watch_update(struct bc_links *p)
{
    p->fs_watch = p->fs == FS_NONE && (p->frameset_ok || !p->body_started);
}

/*
 * The tokenizer's filter, called for every start tag when its name is
 * complete: store the attributes of these tags only. The kind is kept
 * for on_start, which comes next for the same tag.
 */
static bool joins_words(const char *name, size_t len);

static enum bc_html_want want_attrs(void *user, const char *name, size_t len)
{
    struct bc_links *p = user;
    bool foreign = p->foreign_len > 0 || p->foreign_over > 0;
    p->kind = (unsigned char)tag_kind(name, len);
    switch ((enum tag_kind)p->kind) {
    case K_A:
    case K_AREA:
    case K_BASE:
    case K_FRAME:
    case K_IFRAME:
    case K_LINK:
    case K_META:
        return BC_HTML_WANT_ATTRS;
    case K_FONT: /* <font color|face|size> leaves foreign content */
        return foreign                ? BC_HTML_WANT_ATTRS
               : frameset_possible(p) ? BC_HTML_WANT_TAG
                                      : BC_HTML_WANT_NONE;
    case K_OTHER:
        /* While a frameset may come, every tag counts (<input type> for
         * the frameset-ok flag); after, outside svg and math, none. */
        if (!foreign && frameset_possible(p))
            return len == 5 && memcmp(name, "input", 5) == 0
                       ? BC_HTML_WANT_ATTRS
                       : BC_HTML_WANT_TAG;
        if (!foreign)
            /* With on_text, a tag that breaks words is a word break. */
            return p->on_text && !joins_words(name, len) ? BC_HTML_WANT_TAG
                                                         : BC_HTML_WANT_NONE;
        return len == 14 && memcmp(name, "annotation-xml", 14) == 0
                   ? BC_HTML_WANT_ATTRS
                   : BC_HTML_WANT_TAG;
    case K_FRAMESET:
    case K_TEMPLATE:
    case K_SVG:
    case K_MATH:
    case K_RCDATA:
    case K_RAWTEXT:
    case K_SCRIPT:
    case K_PLAINTEXT:
        return BC_HTML_WANT_TAG;
    }
    return BC_HTML_WANT_TAG;
}

/* The links and page flags of one start tag, in any namespace. */
static void on_link_tag(struct bc_links *p, const struct bc_html_token *tok,
                        enum tag_kind kind, bool in_foreign)
{
    const struct bc_html_attr *v;

    if (tok->cut)
        return;
    /* In svg and math only an svg <a> is a link (svg:base, svg:iframe,
     * ... are no HTML elements); the meta that breaks out is HTML. */
    if (in_foreign && kind != K_A)
        return;
    switch (kind) {
    case K_A:
    case K_AREA:
        v = attr(tok, "href");
        if (!v && in_foreign)
            v = attr(tok, "xlink:href");
        if (v) {
            unsigned rel = rel_flags(attr(tok, "rel"));
            report(p, v, BC_LINK_ANCHOR | (rel & BC_LINK_NOFOLLOW));
        }
        break;
    case K_BASE:
        /* A <base> in a template's contents is not in the tree: not the
         * first base element "in tree order". */
        if (p->template_depth == 0 && (v = attr(tok, "href")) != NULL)
            set_base(p, v);
        break;
    case K_FRAME:
        /* A browser inserts <frame> only in a frameset; elsewhere the
         * tree builder drops it (13.2.6.4.7, "in body"). */
        if (p->fs != FS_IN)
            break;
        /* fall through */
    case K_IFRAME:
        if ((v = attr(tok, "src")) != NULL)
            report(p, v, BC_LINK_FRAME);
        break;
    case K_LINK:
        if ((v = attr(tok, "href")) != NULL) {
            unsigned rel = rel_flags(attr(tok, "rel"));
            unsigned kinds =
                rel & (BC_LINK_REL_CANONICAL | BC_LINK_REL_ALTERNATE |
                       BC_LINK_REL_NEXT | BC_LINK_REL_PREV);
            if (kinds && !(rel & REL_STYLESHEET))
                report(p, v, kinds | (rel & BC_LINK_NOFOLLOW));
        }
        break;
    case K_META: {
        const struct bc_html_attr *nm = attr(tok, "name");
        if (nm && ascii_eq(nm->value, nm->value_len, "robots"))
            p->page_flags |= robots_flags(attr(tok, "content"));
        break;
    }
    case K_OTHER:
    case K_FRAMESET:
    case K_TEMPLATE:
    case K_FONT:
    case K_SVG:
    case K_MATH:
    case K_RCDATA:
    case K_RAWTEXT:
    case K_SCRIPT:
    case K_PLAINTEXT:
        break;
    }
}

/* ------------------------------------------------------------------ */
/* The tree builder's few facts.                                       */

/* 13.2.6.5: HTML start tags that end foreign content. */
static bool breaks_out(const struct bc_html_token *tok)
{
    static const char *const names[] = {
        "b",      "big",    "blockquote", "body",    "br",    "center", "code",
        "dd",     "div",    "dl",         "dt",      "em",    "embed",  "h1",
        "h2",     "h3",     "h4",         "h5",      "h6",    "head",   "hr",
        "i",      "img",    "li",         "listing", "menu",  "meta",   "nobr",
        "ol",     "p",      "pre",        "ruby",    "s",     "small",  "span",
        "strong", "strike", "sub",        "sup",     "table", "tt",     "u",
        "ul",     "var",    NULL};
    for (size_t i = 0; names[i]; i++) {
        if (name_is(tok->data, tok->len, names[i]))
            return true;
    }
    return name_is(tok->data, tok->len, "font") &&
           (attr(tok, "color") || attr(tok, "face") || attr(tok, "size"));
}

/* 13.2.6.2 and 13.2.6.5: the HTML and MathML integration points. */
static bool integration_point(enum ns ns, const struct bc_html_token *tok)
{
    const char *n = tok->data;
    size_t len = tok->len;
    if (ns == NS_SVG)
        return name_is(n, len, "foreignobject") || name_is(n, len, "desc") ||
               name_is(n, len, "title");
    if (ns == NS_MATH) {
        if (name_is(n, len, "annotation-xml")) {
            const struct bc_html_attr *e = attr(tok, "encoding");
            return e &&
                   (ascii_eq(e->value, e->value_len, "text/html") ||
                    ascii_eq(e->value, e->value_len, "application/xhtml+xml"));
        }
        return name_is(n, len, "mi") || name_is(n, len, "mo") ||
               name_is(n, len, "mn") || name_is(n, len, "ms") ||
               name_is(n, len, "mtext");
    }
    return false;
}

/* HTML void elements: never pushed, they have no content. */
static bool is_void(const char *n, size_t len)
{
    static const char *const names[] = {
        "area", "base", "br",    "col",    "embed", "hr",  "img",    "input",
        "link", "meta", "param", "source", "track", "wbr", "keygen", NULL};
    for (size_t i = 0; names[i]; i++) {
        if (name_is(n, len, names[i]))
            return true;
    }
    return false;
}

static void foreign_push(struct bc_links *p, enum ns ns, bool integration,
                         const char *name, size_t len)
{
    if (p->foreign_len == BC_LINKS_FOREIGN_DEPTH) {
        p->foreign_over++;
        return;
    }
    struct foreign_el *e = &p->foreign[p->foreign_len++];
    e->ns = (unsigned char)ns;
    e->integration = integration;
    size_t n = len < sizeof(e->name) - 1 ? len : sizeof(e->name) - 1;
    memcpy(e->name, name, n);
    e->name[n] = 0;
}

/* The tokenizer follows the tree: CDATA is allowed when the adjusted
 * current node is not HTML; end tags are wanted inside svg and math, in
 * a template, in a frameset and while a frameset may come; text is
 * watched while a frameset may come. */
static void tok_sync(struct bc_links *p)
{
    bool f = p->foreign_len > 0 && p->foreign[p->foreign_len - 1].ns != NS_HTML;
    bool fs_watch = frameset_possible(p);
    bc_html_tokenizer_set_foreign(&p->tok, f);
    bc_html_tokenizer_set_end_tags(
        &p->tok, p->foreign_len > 0 || p->foreign_over > 0 ||
                     p->template_depth > 0 || p->fs == FS_IN || fs_watch ||
                     p->text_hidden || p->on_text);
    bc_html_tokenizer_watch_text(&p->tok, fs_watch);
}

/* Pop the foreign-content stack to len entries; the HTML templates
 * popped with it are closed. */
static void foreign_pop(struct bc_links *p, size_t len)
{
    while (p->foreign_len > len) {
        const struct foreign_el *e = &p->foreign[--p->foreign_len];
        if (e->ns == NS_HTML && strcmp(e->name, "template") == 0 &&
            p->template_depth > 0)
            p->template_depth--;
    }
}

/* Text in the data state that is not whitespace: "in body", it sets
 * frameset-ok to "not ok"; outside a template it makes the body. */
static void text_seen(struct bc_links *p)
{
    p->tok.text_seen = false;
    p->frameset_ok = false;
    if (p->template_depth == 0)
        p->body_started = true;
    watch_update(p);
}

/* Is name one of the NULL-terminated list? */
static bool name_in(const struct bc_html_token *tok, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        if (tok->len > 0 && names[i][0] == tok->data[0] &&
            name_is(tok->data, tok->len, names[i]))
            return true;
    }
    return false;
}

/*
 * An HTML start tag while a frameset may come (13.2.6.4.4-7): a start
 * tag that the "in head" rules do not take makes the body (outside a
 * template), and those the "in body" rules list set frameset-ok to "not
 * ok". A <frameset> replaces the body when the body is not made yet or
 * frameset-ok is still "ok", and never inside a template. Returns true
 * when it did: the tag is consumed.
 */
static bool frameset_facts(struct bc_links *p, const struct bc_html_token *tok,
                           enum tag_kind kind)
{
    static const char *const head[] = {
        "html",     "head",  "base",     "basefont", "bgsound",
        "link",     "meta",  "noframes", "script",   "style",
        "template", "title", "noscript", NULL};
    static const char *const not_ok[] = {
        "pre",    "listing", "li",      "dd",       "dt",
        "button", "applet",  "marquee", "object",   "table",
        "area",   "br",      "embed",   "img",      "image",
        "keygen", "wbr",     "hr",      "textarea", "xmp",
        "iframe", "select",  "body",    "template", NULL};
    if (kind == K_FRAMESET) {
        if (p->template_depth > 0 || (p->body_started && !p->frameset_ok))
            return false; /* ignored */
        p->fs = FS_IN;
        p->fs_depth = 1;
        p->foreign_len = 0; /* the body and all in it are gone */
        p->foreign_over = 0;
        watch_update(p);
        return true;
    }
    /* "after head" takes the head elements but <noscript>. */
    if (p->template_depth == 0 &&
        (!name_in(tok, head) ||
         (p->head_closed && name_is(tok->data, tok->len, "noscript"))))
        p->body_started = true;
    if (name_in(tok, not_ok)) {
        p->frameset_ok = false;
    } else if (name_is(tok->data, tok->len, "input")) {
        const struct bc_html_attr *t = attr(tok, "type");
        if (!t || t->value_cut || !ascii_eq(t->value, t->value_len, "hidden"))
            p->frameset_ok = false;
    }
    watch_update(p);
    return false;
}

/* A start tag in a frameset document: a <frame> is a link, <noframes>
 * is raw text, everything else is ignored by the tree builder. */
static void frameset_start(struct bc_links *p, const struct bc_html_token *tok,
                           enum tag_kind kind)
{
    /* <frameset/> opens one too: the flag of a non-void element is
     * ignored. */
    if (p->fs == FS_IN && kind == K_FRAMESET)
        p->fs_depth++;
    else if (p->fs == FS_IN && kind == K_FRAME)
        on_link_tag(p, tok, kind, false);
    else if (name_is(tok->data, tok->len, "noframes"))
        bc_html_tokenizer_set_state(&p->tok, BC_HTML_STATE_RAWTEXT);
}

/*
 * The elements whose text is no page text (links.h, bc_links_text_fn):
 * script, style, iframe, noembed, noframes and noscript - the raw-text
 * elements but xmp, which a browser shows. title, textarea (RCDATA)
 * and plaintext are shown.
 */
static bool text_hidden_in(const struct bc_html_token *tok, enum tag_kind kind)
{
    if (kind == K_SCRIPT || kind == K_IFRAME)
        return true;
    return kind == K_RAWTEXT && !name_is(tok->data, tok->len, "xmp");
}

/*
 * The tokenizer is in a hidden element's text: leave it out until the
 * element's end tag, the only end tag the tokenizer emits in raw text
 * and script data (any other is text), which on_end() sees because end
 * tags are wanted meanwhile.
 */
static void hide_text(struct bc_links *p)
{
    p->text_hidden = true;
    bc_html_tokenizer_set_end_tags(&p->tok, true);
}

/* An HTML start tag: the text states it switches the tokenizer to. */
static void html_start(struct bc_links *p, const struct bc_html_token *tok,
                       enum tag_kind kind)
{
    static const enum bc_html_state text[] = {
        [K_IFRAME] = BC_HTML_STATE_RAWTEXT,
        [K_RCDATA] = BC_HTML_STATE_RCDATA,
        [K_RAWTEXT] = BC_HTML_STATE_RAWTEXT,
        [K_SCRIPT] = BC_HTML_STATE_SCRIPT_DATA,
        [K_PLAINTEXT] = BC_HTML_STATE_PLAINTEXT};
    if (kind == K_SVG || kind == K_MATH) {
        if (!tok->self_closing)
            foreign_push(p, kind == K_SVG ? NS_SVG : NS_MATH, false, tok->data,
                         tok->len);
        return;
    }
    if (kind == K_IFRAME || kind >= K_RCDATA) {
        bc_html_tokenizer_set_state(&p->tok, text[kind]);
        if (p->on_text && text_hidden_in(tok, kind))
            hide_text(p);
    }
    /* A template's contents are not in the tree (even <template/>: the
     * self-closing flag of a non-void HTML element is ignored). */
    if (kind == K_TEMPLATE)
        p->template_depth++;
    /* Inside an integration point, HTML elements nest too. */
    if (p->foreign_len > 0 && !is_void(tok->data, tok->len))
        foreign_push(p, NS_HTML, false, tok->data, tok->len);
}

/* An HTML start tag, in HTML content or at an integration point. */
static void html_tag(struct bc_links *p, const struct bc_html_token *tok,
                     enum tag_kind kind)
{
    if (frameset_possible(p) && frameset_facts(p, tok, kind))
        return;
    on_link_tag(p, tok, kind, false);
    html_start(p, tok, kind);
}

static void on_start(struct bc_links *p, const struct bc_html_token *tok)
{
    enum tag_kind kind = (enum tag_kind)p->kind;
    if (p->fs != FS_NONE) {
        frameset_start(p, tok, kind);
        return;
    }
    if (p->foreign_len == 0 && p->foreign_over == 0) {
        /* The tokenizer's switches change only with a frameset still
         * possible (it never becomes possible again), a template or
         * foreign content. */
        bool watched = frameset_possible(p);
        size_t templates = p->template_depth;
        html_tag(p, tok, kind);
        if (watched || templates != p->template_depth || p->foreign_len > 0)
            tok_sync(p);
        return;
    }
    const struct foreign_el *top =
        p->foreign_len ? &p->foreign[p->foreign_len - 1] : NULL;
    if (top && (top->ns == NS_HTML || top->integration)) {
        html_tag(p, tok, kind);
    } else if (breaks_out(tok)) {
        /* Pop to the last HTML element (or out of foreign content). */
        size_t n = p->foreign_len;
        while (n > 0 && p->foreign[n - 1].ns != NS_HTML)
            n--;
        foreign_pop(p, n);
        p->foreign_over = 0;
        html_tag(p, tok, kind);
    } else {
        /* A foreign element: in the namespace of the current node
         * (<math> inside <svg> is an svg element). */
        enum ns ns = top ? (enum ns)top->ns : NS_SVG;
        if (ns == NS_SVG)
            on_link_tag(p, tok, kind, true);
        if (!tok->self_closing)
            foreign_push(p, ns, integration_point(ns, tok), tok->data,
                         tok->len);
    }
    tok_sync(p);
}

/*
 * </template> (13.2.6.4.4, and "any other end tag" of 13.2.6.5 in
 * foreign content): an svg <template> above the first HTML element is
 * closed as foreign content; otherwise the innermost HTML template is
 * closed with everything above it, foreign elements included.
 */
static void template_end(struct bc_links *p)
{
    for (size_t i = p->foreign_len; i > 0; i--) {
        const struct foreign_el *e = &p->foreign[i - 1];
        if (e->ns == NS_HTML)
            break;
        if (strcmp(e->name, "template") == 0) {
            p->foreign_len = i - 1;
            return;
        }
    }
    if (p->template_depth == 0)
        return; /* no template open: ignored */
    size_t i = p->foreign_len;
    while (i > 0 && !(p->foreign[i - 1].ns == NS_HTML &&
                      strcmp(p->foreign[i - 1].name, "template") == 0))
        i--;
    if (i > 0) {
        foreign_pop(p, i - 1); /* closes that template */
    } else {
        /* The template is below the svg or math: all of it closes. */
        p->foreign_len = 0;
        p->foreign_over = 0;
        p->template_depth--;
    }
}

/* An end tag inside svg or math (13.2.6.5). */
static void foreign_end(struct bc_links *p, const struct bc_html_token *tok)
{
    const struct foreign_el *top = &p->foreign[p->foreign_len - 1];
    if (top->ns != NS_HTML && (name_is(tok->data, tok->len, "br") ||
                               name_is(tok->data, tok->len, "p"))) {
        size_t n = p->foreign_len;
        while (n > 0 && p->foreign[n - 1].ns != NS_HTML)
            n--;
        foreign_pop(p, n);
        return;
    }
    /*
     * Pop to the innermost open element of that name: from a foreign
     * current node down through foreign elements (13.2.6.5, "any other
     * end tag"); once at an HTML element, the HTML rules go on through
     * HTML elements only, and stop at a foreign one (the integration
     * points are "special") or at a template (special too). Not found:
     * ignored.
     */
    bool html = top->ns == NS_HTML;
    for (size_t i = p->foreign_len; i > 0 && tok->len < 15; i--) {
        const struct foreign_el *e = &p->foreign[i - 1];
        if (e->ns == NS_HTML)
            html = true;
        else if (html)
            break;
        if (name_is(tok->data, tok->len, e->name)) {
            foreign_pop(p, i - 1);
            break;
        }
        if (e->ns == NS_HTML && strcmp(e->name, "template") == 0)
            break;
    }
}

static void on_end(struct bc_links *p, const struct bc_html_token *tok)
{
    /* A hidden element's end: its text is over (hide_text()). */
    p->text_hidden = false;
    if (p->fs != FS_NONE) {
        /* "in frameset": </frameset> closes one; the last one ends it. */
        if (p->fs == FS_IN && name_is(tok->data, tok->len, "frameset") &&
            --p->fs_depth == 0)
            p->fs = FS_AFTER;
        tok_sync(p);
        return;
    }
    if (frameset_possible(p) && p->template_depth == 0) {
        /* </br> is <br> "in body"; </body> and </html> make the body. */
        bool br = name_is(tok->data, tok->len, "br");
        if (br || name_is(tok->data, tok->len, "body") ||
            name_is(tok->data, tok->len, "html"))
            p->body_started = true;
        if (br)
            p->frameset_ok = false;
        if (name_is(tok->data, tok->len, "head"))
            p->head_closed = true;
        watch_update(p);
    }
    if (p->foreign_over > 0) {
        p->foreign_over--;
    } else if (name_is(tok->data, tok->len, "template")) {
        template_end(p);
    } else if (p->foreign_len > 0) {
        foreign_end(p, tok);
    }
    tok_sync(p);
}

/*
 * Text is reported (only with on_text) unless it is in a hidden element,
 * a template's contents, a frameset document (where the tree builder
 * drops text) or an svg or math <script> or <style>, whose text is
 * character data of the data state.
 */
static bool text_shown(const struct bc_links *p)
{
    if (p->text_hidden || p->template_depth > 0 || p->fs != FS_NONE)
        return false;
    if (p->foreign_len > 0) {
        const struct foreign_el *e = &p->foreign[p->foreign_len - 1];
        if (e->ns != NS_HTML &&
            (strcmp(e->name, "script") == 0 || strcmp(e->name, "style") == 0))
            return false;
    }
    return true;
}

static void on_chars(struct bc_links *p, const struct bc_html_token *tok)
{
    if (!text_shown(p))
        return;
    if (p->break_pending) {
        p->break_pending = false;
        p->on_text(p->user, " ", 1);
    }
    p->text_since_break = true;
    p->on_text(p->user, tok->data, tok->len);
}

/*
 * Whether an HTML element's tags leave its text joined to its
 * neighbours' (TEXT above): the text-level elements that render inline,
 * and those that render nothing (no box: no break either).
 */
static bool joins_words(const char *name, size_t len)
{
    /* By length, so that each test is one compare of a few bytes (the
     * crawl asks this of every tag). */
#define IS(lit) (memcmp(name, lit, sizeof(lit) - 1) == 0)
    switch (len) {
    case 1:
        return IS("a") || IS("b") || IS("i") || IS("q") || IS("s") || IS("u");
    case 2:
        return IS("em") || IS("rp") || IS("rt") || IS("tt");
    case 3:
        return IS("bdi") || IS("bdo") || IS("big") || IS("del") || IS("dfn") ||
               IS("ins") || IS("kbd") || IS("sub") || IS("sup") || IS("var") ||
               IS("wbr") || IS("svg");
    case 4:
        return IS("abbr") || IS("cite") || IS("code") || IS("data") ||
               IS("font") || IS("mark") || IS("nobr") || IS("ruby") ||
               IS("samp") || IS("span") || IS("time") || IS("math") ||
               IS("html") || IS("head") || IS("body") || IS("base") ||
               IS("link") || IS("meta");
    case 5:
        return IS("small") || IS("style") || IS("frame");
    case 6:
        return IS("strike") || IS("strong") || IS("script");
    case 7:
        return IS("noembed");
    case 8:
        return IS("template") || IS("noscript") || IS("noframes") ||
               IS("frameset");
    }
    return false;
#undef IS
}

/* A start or end tag (only with on_text): one that breaks words owes a
 * space before the next text, if any text came since the last one. */
static void text_tag(struct bc_links *p, const struct bc_html_token *tok)
{
    if (p->foreign_len > 0 || !p->text_since_break || !text_shown(p) ||
        joins_words(tok->data, tok->len))
        return;
    p->text_since_break = false;
    p->break_pending = true;
}

static void on_token(void *user, const struct bc_html_token *tok)
{
    struct bc_links *p = user;
    if (p->tok.text_seen)
        text_seen(p);
    if (p->on_text &&
        (tok->type == BC_HTML_START_TAG || tok->type == BC_HTML_END_TAG))
        text_tag(p, tok);
    if (tok->type == BC_HTML_START_TAG)
        on_start(p, tok);
    else if (tok->type == BC_HTML_END_TAG)
        on_end(p, tok);
    else if (tok->type == BC_HTML_CHARS)
        on_chars(p, tok);
}

/* ------------------------------------------------------------------ */
/* Creation and input.                                                 */

enum bc_status bc_links_create(const struct bc_links_config *config,
                               const char *doc_url, size_t doc_len,
                               struct bc_links **out)
{
    if (!config || !out || config->max_href_bytes == 0 || (!doc_url && doc_len))
        return BC_ERR_INVALID_ARG;
    if (doc_len > BC_LINKS_MAX_DOC_URL)
        return BC_ERR_TOO_LARGE;

    struct bc_links *p = malloc(sizeof(*p));
    if (!p)
        return BC_ERR_NOMEM;
    memset(p, 0, offsetof(struct bc_links, tok));
    p->doc_url = malloc(doc_len + 1);
    if (!p->doc_url)
        goto out_free_links;
    if (doc_len)
        memcpy(p->doc_url, doc_url, doc_len);
    p->doc_url[doc_len] = 0;
    p->doc_len = doc_len;
    p->on_link = config->on_link;
    p->on_text = config->on_text;
    p->user = config->user;
    p->max_href = config->max_href_bytes;
    /* Keep one byte more than the cap, so that "over" is visible. */
    size_t value_cap =
        p->max_href < ((size_t)1 << 30) ? p->max_href + 1 : (size_t)1 << 30;
    /* Characters are tokenized only for on_text: without it the text
     * between tags is skipped unread (html_tokenizer.c, SPEED). */
    if (!bc_html_tokenizer_init(&p->tok, on_token, p,
                                p->on_text ? BC_HTML_EMIT_CHARS : 0u, value_cap,
                                4 * value_cap + 65536))
        goto out_free_url;
    bc_html_tokenizer_set_filter(&p->tok, want_attrs);
    p->frameset_ok = true; /* "ok" when the parser is created */
    watch_update(p);
    tok_sync(p);
    *out = p;
    return BC_OK;

out_free_url:
    free(p->doc_url);
out_free_links:
    free(p);
    return BC_ERR_NOMEM;
}

/* Tokenize the UTF-8 bytes collected in out[0..n). */
static void out_flush(struct bc_links *p, char *out, size_t *n)
{
    bc_html_tokenizer_feed(&p->tok, out, *n);
    *n = 0;
}

/* One UTF-16 code unit: pairs surrogates, re-encodes as UTF-8. */
static void utf16_unit(struct bc_links *p, unsigned u, char *out, size_t *n)
{
    uint32_t cp;
    if (p->hi_sur) {
        if (u >= 0xDC00 && u <= 0xDFFF) {
            cp = 0x10000 + ((p->hi_sur - 0xD800) << 10) + (u - 0xDC00);
            p->hi_sur = 0;
            goto put;
        }
        /* A high surrogate without its low half. */
        p->hi_sur = 0;
        p->stats.parse_errors++;
        memcpy(out + *n, "\xEF\xBF\xBD", 3);
        *n += 3;
    }
    if (u >= 0xD800 && u <= 0xDBFF) {
        p->hi_sur = u;
        return;
    }
    if (u >= 0xDC00 && u <= 0xDFFF) {
        p->stats.parse_errors++;
        u = 0xFFFD;
    }
    cp = u;
put:
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xC0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xE0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*n)++] = (char)(0xF0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*n)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/*
 * Decode UTF-16 bytes (big- or little-endian) into UTF-8 and tokenize
 * them, 4 KiB at a time. An odd byte and a high surrogate wait for the
 * next chunk.
 */
static void feed_utf16(struct bc_links *p, const unsigned char *data,
                       size_t len)
{
    char out[BC_LINKS_OUT];
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (!p->odd_held) {
            p->odd = data[i];
            p->odd_held = true;
            continue;
        }
        p->odd_held = false;
        unsigned u = p->big_endian ? (unsigned)p->odd << 8 | data[i]
                                   : (unsigned)data[i] << 8 | p->odd;
        /* 7 bytes: a pending U+FFFD and a 4-byte sequence. */
        if (sizeof(out) - n < 7)
            out_flush(p, out, &n);
        utf16_unit(p, u, out, &n);
    }
    out_flush(p, out, &n);
}

/* The first two bytes decide how the page is read. */
static void sniff(struct bc_links *p)
{
    const unsigned char *s = p->sniff;
    size_t skip = 0;
    p->mode = IN_UTF16;
    if (p->sniff_len == 2 && s[0] == 0xFE && s[1] == 0xFF) {
        p->big_endian = true;
        skip = 2;
    } else if (p->sniff_len == 2 && s[0] == 0xFF && s[1] == 0xFE) {
        skip = 2;
    } else if (p->sniff_len == 2 && s[0] == 0 && s[1] == '<') {
        p->big_endian = true;
    } else if (p->sniff_len == 2 && s[0] == 0xEF && s[1] == 0xBB) {
        p->mode = IN_BOM; /* a UTF-8 BOM if BF follows */
        return;
    } else if (!(p->sniff_len == 2 && s[0] == '<' && s[1] == 0)) {
        p->mode = IN_BYTES;
        bc_html_tokenizer_feed(&p->tok, s, p->sniff_len);
        return;
    }
    feed_utf16(p, s + skip, p->sniff_len - skip);
}

static void feed_input(struct bc_links *p, const unsigned char *data,
                       size_t len)
{
    while (p->mode == IN_SNIFF && len > 0) {
        p->sniff[p->sniff_len++] = *data++;
        len--;
        if (p->sniff_len == 2)
            sniff(p);
    }
    if (p->mode == IN_BOM && len > 0) {
        /* The decoder drops a UTF-8 BOM: it is no text of the page. */
        if (data[0] == 0xBF) {
            data++;
            len--;
        } else {
            bc_html_tokenizer_feed(&p->tok, p->sniff, 2);
        }
        p->mode = IN_BYTES;
    }
    if (len == 0)
        return;
    if (p->mode == IN_BYTES)
        bc_html_tokenizer_feed(&p->tok, data, len);
    else
        feed_utf16(p, data, len);
}

enum bc_status bc_links_feed(struct bc_links *p, const void *data, size_t len)
{
    if (!p || p->finished || (!data && len))
        return BC_ERR_INVALID_ARG;
    if (p->nomem)
        return BC_ERR_NOMEM;
    if (len == 0)
        return BC_OK;
    feed_input(p, data, len);
    p->stats.bytes += len;
    if (p->tok.nomem)
        p->nomem = true;
    return p->nomem ? BC_ERR_NOMEM : BC_OK;
}

enum bc_status bc_links_finish(struct bc_links *p)
{
    if (!p || p->finished)
        return BC_ERR_INVALID_ARG;
    p->finished = true;
    if (p->nomem)
        return BC_ERR_NOMEM;
    if (p->mode == IN_SNIFF)
        sniff(p);
    if (p->mode == IN_BOM) /* EF BB and the end */
        bc_html_tokenizer_feed(&p->tok, p->sniff, 2);
    if (p->mode == IN_UTF16 && (p->odd_held || p->hi_sur)) {
        /* A truncated last unit or a lone high surrogate. */
        bc_html_tokenizer_feed(&p->tok, "\xEF\xBF\xBD", 3);
        p->stats.parse_errors++;
    }
    bc_html_tokenizer_finish(&p->tok);
    if (p->tok.nomem)
        p->nomem = true;
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
    stats->parse_errors += p->tok.attrs_dropped;
}

void bc_links_free(struct bc_links *p)
{
    if (!p)
        return;
    bc_html_tokenizer_release(&p->tok);
    free(p->base);
    free(p->doc_url);
    free(p);
}
