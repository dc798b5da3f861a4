/*
 * html_tokenizer.c - a streaming tokenizer after the WHATWG HTML Standard.
 *
 * THE PROBLEM
 * Link extraction needs the start tags of a page and their attributes,
 * exactly as a browser sees them: what is a tag, what is text inside a
 * <textarea>, where a comment ends, what "&amp;" in an href means. The
 * HTML Standard defines this precisely, for every byte sequence, as a
 * state machine (section 13.2.5, "Tokenization"): about 80 states, each
 * reading one character and deciding the next state. Browsers, parse5
 * and html5lib all implement that machine; this file does too, so that
 * the crawler sees the links a browser sees, tag soup included.
 *
 * WHAT IS IMPLEMENTED
 * Every state of 13.2.5 except the DOCTYPE sub-states: data, RCDATA,
 * RAWTEXT, script data (with its escaped and double-escaped states),
 * PLAINTEXT, tag open, end tag open, tag name, the "less-than sign",
 * "end tag open" and "end tag name" states of the three text kinds,
 * attribute names and values in all three quoting styles, self-closing
 * start tag, bogus comment, markup declaration open, every comment state
 * (abrupt "<!-->", "--!>", "<!--" inside a comment), CDATA sections (only
 * when the caller says the current node is foreign: svg, math), and
 * character references (named, decimal, hexadecimal) with the
 * standard's rules: the longest name in the table wins, a name without
 * ';' in an attribute stays literal before '=' or an alphanumeric, and
 * numbers are replaced (0 and surrogates by U+FFFD, 0x80-0x9F by the
 * windows-1252 characters the standard lists). A DOCTYPE is skipped up
 * to its '>' (every DOCTYPE state ends there or at EOF) and reported
 * without content. The first of duplicate attributes wins.
 *
 * Not done here: the input stream's newline normalization (13.2.3.5,
 * CR LF and CR become LF) is a stage before tokenization; the tokenizer
 * treats CR as the whitespace it would become in tags and keeps it in
 * text and attribute values, where the URL parser removes it anyway.
 * Parse errors are not reported. The tree builder's switches (after
 * <title> to RCDATA, after <svg> to foreign content) are the caller's:
 * bc_html_tokenizer_set_state and _set_foreign, called from the token
 * callback.
 *
 * STREAMING
 * Input comes in chunks of any size; the machine's state, the tag being
 * built, a partly read character reference name (at most 32 bytes: the
 * longest entity name), the 7-byte lookahead of "<!DOCTYPE"/"<![CDATA["
 * and the temporary buffer of an end tag name in text are kept between
 * chunks, so any split of the input gives the same tokens. Character
 * tokens point into the caller's chunk (no copy).
 *
 * SPEED
 * Most of a page is text, and in text only '<' (and '&' when characters
 * are reported) changes state. Runs of text are skipped 16 bytes at a
 * time with SSE2 where the compiler targets it (inline: the runs between
 * two tags are short, and a memchr call would cost more than the search),
 * else with memchr or a byte loop. A caller may say, once a start tag's
 * name is complete, that it wants the tag without its attributes, or not
 * at all, and that it wants no end tags (bc_html_tokenizer_set_filter,
 * _set_end_tags): such tags run through skip_tag, the same attribute
 * states in one tight loop that stores nothing. "<x", "</x", the byte
 * after a tag name or a quoted value, and the return to the data state
 * after a tag are handled in place, without a round trip through the
 * state dispatch. Memory: one buffer per tokenizer holds the current tag
 * or comment (a struct bc_buf, bc_buf.h); it grows by doubling up to
 * buf_max and is reused, so there is no allocation per token. Attribute
 * values keep at most value_cap bytes (their full length is still
 * counted), at most BC_HTML_MAX_ATTRS attributes are kept, and the
 * duplicate check is bounded by that count: time is linear in the input.
 *
 * REFERENCES
 * HTML Living Standard, 13.2.5 "Tokenization", 13.2.5.72-80 (character
 * references), 13.5 "Named character references" (the table, generated
 * at build time from Python's html.entities.html5 by gen_entities.py).
 * html5lib-tests, the tokenizer folder (tests/test_html_tokenizer.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "html_tokenizer_int.h"
#include "bc_hex.h"

struct bc_html_entity {
    const char *name;
    unsigned char name_len;
    unsigned char out_len;
    const char out[9];
};

#include "html_entities.h"

enum state {
    S_DATA,
    S_RCDATA,
    S_RAWTEXT,
    S_SCRIPT,
    S_PLAINTEXT,
    S_TAG_OPEN,
    S_END_TAG_OPEN,
    S_TAG_NAME,
    S_RCDATA_LT,
    S_RCDATA_END_OPEN,
    S_RCDATA_END_NAME,
    S_RAWTEXT_LT,
    S_RAWTEXT_END_OPEN,
    S_RAWTEXT_END_NAME,
    S_SCRIPT_LT,
    S_SCRIPT_END_OPEN,
    S_SCRIPT_END_NAME,
    S_SCRIPT_ESC_START,
    S_SCRIPT_ESC_START_DASH,
    S_SCRIPT_ESC,
    S_SCRIPT_ESC_DASH,
    S_SCRIPT_ESC_DASH_DASH,
    S_SCRIPT_ESC_LT,
    S_SCRIPT_ESC_END_OPEN,
    S_SCRIPT_ESC_END_NAME,
    S_SCRIPT_DESC_START,
    S_SCRIPT_DESC,
    S_SCRIPT_DESC_DASH,
    S_SCRIPT_DESC_DASH_DASH,
    S_SCRIPT_DESC_LT,
    S_SCRIPT_DESC_END,
    S_BEFORE_ATTR_NAME,
    S_ATTR_NAME,
    S_AFTER_ATTR_NAME,
    S_BEFORE_ATTR_VALUE,
    S_ATTR_VALUE_DQ,
    S_ATTR_VALUE_SQ,
    S_ATTR_VALUE_UQ,
    S_AFTER_ATTR_VALUE_Q,
    S_SELF_CLOSING,
    S_BOGUS_COMMENT,
    S_MARKUP_DECL,
    S_COMMENT_START,
    S_COMMENT_START_DASH,
    S_COMMENT,
    S_COMMENT_LT,
    S_COMMENT_LT_BANG,
    S_COMMENT_LT_BANG_DASH,
    S_COMMENT_LT_BANG_DASH_DASH,
    S_COMMENT_END_DASH,
    S_COMMENT_END,
    S_COMMENT_END_BANG,
    S_DOCTYPE,
    S_CDATA,
    S_CDATA_BRACKET,
    S_CDATA_END,
    S_CHARREF,
    S_NAMED_REF,
    S_AMBIGUOUS_AMP,
    S_NUMERIC_REF,
    S_HEX_REF_START,
    S_DEC_REF_START,
    S_HEX_REF,
    S_DEC_REF
};

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD in UTF-8 */

static bool is_ws(unsigned c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

static bool is_alpha(unsigned c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static bool is_digit(unsigned c)
{
    return c >= '0' && c <= '9';
}

static bool is_alnum(unsigned c)
{
    return is_alpha(c) || is_digit(c);
}

static bool is_hex(unsigned c)
{
    return bc_hex_value((int)c) >= 0;
}

static unsigned char lower(unsigned c)
{
    return (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* The first byte in [p, end) equal to a, b or c, or end. */
static const unsigned char *find3(const unsigned char *p,
                                  const unsigned char *end, unsigned char a,
                                  unsigned char b, unsigned char c)
{
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a);
    const __m128i vb = _mm_set1_epi8((char)b);
    const __m128i vc = _mm_set1_epi8((char)c);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(x, va), _mm_cmpeq_epi8(x, vb)),
            _mm_cmpeq_epi8(x, vc));
        int mask = _mm_movemask_epi8(m);
        if (mask)
            return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
#endif
    while (p < end && *p != a && *p != b && *p != c)
        p++;
    return p;
}

/*
 * The first byte in [p, end) equal to a, or end. Inline SSE2 rather than
 * memchr: most runs between two tags are short, where a library call
 * costs more than the search.
 */
static const unsigned char *find1(const unsigned char *p,
                                  const unsigned char *end, unsigned char a)
{
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        int mask = _mm_movemask_epi8(_mm_cmpeq_epi8(x, va));
        if (mask)
            return p + __builtin_ctz((unsigned)mask);
        p += 16;
    }
    while (p < end && *p != a)
        p++;
    return p;
#else
    const unsigned char *q = memchr(p, a, (size_t)(end - p));
    return q ? q : end;
#endif
}

/* ------------------------------------------------------------------ */
/* Emitting.                                                          */

/* Is the text being emitted the data state's (or a CDATA section's)? */
static bool in_data_text(const struct bc_html_tokenizer *t)
{
    int st = t->state;
    if (st == S_DATA || st == S_TAG_OPEN) /* "<" and no tag: text */
        return true;
    if (st == S_CDATA || st == S_CDATA_BRACKET || st == S_CDATA_END)
        return true;
    /* A character reference: S_CHARREF to S_DEC_REF, the last states. */
    return st >= S_CHARREF && t->return_state == S_DATA;
}

/* Watched text: does it hold a character that is not whitespace? */
static void watch_chars(struct bc_html_tokenizer *t, const unsigned char *s,
                        size_t n)
{
    if (!in_data_text(t))
        return;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != 0 && !is_ws(s[i])) {
            t->text_seen = true;
            t->watch_text = false; /* seen: the watch is over */
            return;
        }
    }
}

/* Characters watched and/or reported: apart from emit_chars, so that
 * the common case (neither) stays one test where text is skipped. */
static void chars_out(struct bc_html_tokenizer *t, const void *s, size_t n)
{
    if (t->watch_text)
        watch_chars(t, s, n);
    if (!(t->options & BC_HTML_EMIT_CHARS) || n == 0)
        return;
    struct bc_html_token tok = {BC_HTML_CHARS, s, n, false, false, NULL, 0};
    t->on_token(t->user, &tok);
}

static void emit_chars(struct bc_html_tokenizer *t, const void *s, size_t n)
{
    if (t->watch_text || (t->options & BC_HTML_EMIT_CHARS))
        chars_out(t, s, n);
}

/* Append n bytes to the tag buffer; false if it would pass its cap (the
 * caller cuts the token) or could not grow (t->nomem). The room check is
 * inline: after the first tags the buffer has grown and never calls out. */
static inline bool buf_put(struct bc_html_tokenizer *t, const void *s, size_t n)
{
    struct bc_buf *b = &t->tag;
    if (bc_buf_room(b) >= n) {
        char *end = b->data + b->len; /* allocated by the init */
        memcpy(end, s, n);
        end[n] = '\0';
        b->len += n;
        return true;
    }
    enum bc_status st = bc_buf_append(&t->tag, s, n);
    if (st == BC_ERR_NOMEM)
        t->nomem = true;
    return st == BC_OK;
}

static void tag_begin(struct bc_html_tokenizer *t, bool end)
{
    bc_buf_truncate(&t->tag, 0);
    t->name_len = 0;
    t->n_attrs = 0;
    t->cur_attr = -1;
    t->is_end_tag = end;
    t->self_closing = false;
    t->name_cut = false;
    t->keep = !end;
    t->drop = end && t->no_end_tags;
}

/* The tag name is complete: are its attributes wanted? */
static void name_done(struct bc_html_tokenizer *t)
{
    if (t->keep && t->want_attrs) {
        enum bc_html_want w = t->want_attrs(t->user, t->tag.data, t->name_len);
        t->keep = w == BC_HTML_WANT_ATTRS;
        t->drop = w == BC_HTML_WANT_NONE;
    }
}

static void name_put(struct bc_html_tokenizer *t, const char *s, size_t n)
{
    if (buf_put(t, s, n)) {
        t->name_len += n;
    } else {
        t->name_cut = true;
    }
}

static void attr_begin(struct bc_html_tokenizer *t)
{
    if (!t->keep || t->n_attrs == BC_HTML_MAX_ATTRS) {
        if (t->keep)
            t->attrs_dropped++;
        t->cur_attr = -1;
        return;
    }
    struct bc_html_attr_off *a = &t->attr_off[t->n_attrs];
    a->name_off = (uint32_t)t->tag.len;
    a->name_len = 0;
    a->value_off = (uint32_t)t->tag.len;
    a->value_len = 0;
    a->value_cut = false;
    t->cur_attr = (long)t->n_attrs++;
}

static void attr_name_put(struct bc_html_tokenizer *t, const char *s, size_t n)
{
    if (t->cur_attr < 0)
        return;
    struct bc_html_attr_off *a = &t->attr_off[t->cur_attr];
    if (buf_put(t, s, n)) {
        a->name_len += (uint32_t)n;
        a->value_off = (uint32_t)t->tag.len;
    } else {
        /* A name that does not fit cannot be kept whole: drop it. */
        bc_buf_truncate(&t->tag, a->name_off);
        t->n_attrs--;
        t->cur_attr = -1;
        t->attrs_dropped++;
    }
}

/* Leaving the attribute name state: a duplicate name is removed. */
static void attr_name_done(struct bc_html_tokenizer *t)
{
    if (t->cur_attr < 0)
        return;
    const struct bc_html_attr_off *a = &t->attr_off[t->cur_attr];
    const char *name = t->tag.data + a->name_off;
    for (long i = 0; i < t->cur_attr; i++) {
        const struct bc_html_attr_off *o = &t->attr_off[i];
        if (o->name_len == a->name_len &&
            memcmp(t->tag.data + o->name_off, name, a->name_len) == 0) {
            bc_buf_truncate(&t->tag, a->name_off);
            t->n_attrs--;
            t->cur_attr = -1;
            return;
        }
    }
}

static void value_put(struct bc_html_tokenizer *t, const char *s, size_t n)
{
    if (t->cur_attr < 0)
        return;
    struct bc_html_attr_off *a = &t->attr_off[t->cur_attr];
    if (!a->value_cut) {
        /* Until a value is cut, all of it is stored. */
        size_t take = n;
        if (a->value_len + take > t->value_cap)
            take = t->value_cap - a->value_len;
        if (take && !buf_put(t, s, take))
            take = 0;
        if (take < n)
            a->value_cut = true;
    }
    a->value_len += n;
}

static void emit_tag(struct bc_html_tokenizer *t)
{
    struct bc_html_token tok;
    if (t->drop) {
        /* Not wanted. Its name still counts for "appropriate end tag"
         * below, though a caller that drops a tag never switches to a
         * text state after it. */
        t->state = S_DATA;
        if (!t->is_end_tag && !t->name_cut &&
            t->name_len <= BC_HTML_MAX_LAST_TAG) {
            memcpy(t->last_tag, t->tag.data, t->name_len);
            t->last_tag_len = t->name_len;
        }
        return;
    }
    tok.type = t->is_end_tag ? BC_HTML_END_TAG : BC_HTML_START_TAG;
    tok.data = t->tag.data;
    tok.len = t->name_len;
    tok.cut = t->name_cut;
    tok.self_closing = t->self_closing;
    tok.n_attrs = t->n_attrs;
    tok.attrs = t->attrs;
    for (size_t i = 0; i < t->n_attrs; i++) {
        const struct bc_html_attr_off *o = &t->attr_off[i];
        struct bc_html_attr *a = &t->attrs[i];
        a->name = t->tag.data + o->name_off;
        a->name_len = o->name_len;
        a->value = t->tag.data + o->value_off;
        a->value_len = o->value_len;
        a->value_cut = o->value_cut;
    }
    t->state = S_DATA;
    if (!t->is_end_tag) {
        if (!t->name_cut && t->name_len <= BC_HTML_MAX_LAST_TAG) {
            memcpy(t->last_tag, t->tag.data, t->name_len);
            t->last_tag_len = t->name_len;
        } else {
            t->last_tag_len = 0;
        }
    }
    t->on_token(t->user, &tok);
}

static void comment_begin(struct bc_html_tokenizer *t)
{
    bc_buf_truncate(&t->tag, 0);
    t->comment_cut = false;
}

static void comment_put(struct bc_html_tokenizer *t, const char *s, size_t n)
{
    if (!(t->options & BC_HTML_EMIT_COMMENTS))
        return;
    if (t->comment_cut || !buf_put(t, s, n))
        t->comment_cut = true;
}

static void emit_comment(struct bc_html_tokenizer *t)
{
    t->state = S_DATA;
    if (!(t->options & BC_HTML_EMIT_COMMENTS))
        return;
    struct bc_html_token tok = {
        BC_HTML_COMMENT, t->tag.data, t->tag.len, t->comment_cut,
        false,           NULL,        0};
    t->on_token(t->user, &tok);
}

static void emit_doctype(struct bc_html_tokenizer *t)
{
    struct bc_html_token tok = {BC_HTML_DOCTYPE, "", 0, false, false, NULL, 0};
    t->state = S_DATA;
    t->on_token(t->user, &tok);
}

/* ------------------------------------------------------------------ */
/* The temporary buffer of end tag names in text.                     */

static void tmp_put(struct bc_html_tokenizer *t, unsigned c)
{
    if (t->tmp_len < sizeof(t->tmp))
        t->tmp[t->tmp_len++] = (char)c;
    else
        t->tmp_long = true;
}

static void tmp_clear(struct bc_html_tokenizer *t)
{
    t->tmp_len = 0;
    t->tmp_long = false;
}

/* Is tmp (lower-cased) the last start tag's name? */
static bool appropriate(const struct bc_html_tokenizer *t)
{
    if (t->tmp_long || t->tmp_len != t->last_tag_len || t->last_tag_len == 0)
        return false;
    for (size_t i = 0; i < t->tmp_len; i++) {
        if (lower((unsigned char)t->tmp[i]) != (unsigned char)t->last_tag[i])
            return false;
    }
    return true;
}

static bool tmp_is_script(const struct bc_html_tokenizer *t)
{
    static const char script[] = "script";
    if (t->tmp_long || t->tmp_len != 6)
        return false;
    for (size_t i = 0; i < 6; i++) {
        if (lower((unsigned char)t->tmp[i]) != (unsigned char)script[i])
            return false;
    }
    return true;
}

/* "Emit '</' and the temporary buffer" (the end tag was not ours). */
static void emit_lt_slash_tmp(struct bc_html_tokenizer *t)
{
    emit_chars(t, "</", 2);
    emit_chars(t, t->tmp, t->tmp_len);
}

/*
 * One character of an end tag name in RCDATA, RAWTEXT or script data
 * (and its escaped form). Returns true if c was consumed.
 */
static bool end_tag_name(struct bc_html_tokenizer *t, unsigned c, int text)
{
    if (is_ws(c) || c == '/' || c == '>') {
        if (appropriate(t)) {
            tag_begin(t, true);
            char name[BC_HTML_MAX_LAST_TAG];
            for (size_t i = 0; i < t->tmp_len; i++)
                name[i] = (char)lower((unsigned char)t->tmp[i]);
            name_put(t, name, t->tmp_len);
            if (c == '>')
                emit_tag(t);
            else
                t->state = c == '/' ? S_SELF_CLOSING : S_BEFORE_ATTR_NAME;
            return true;
        }
    } else if (is_alpha(c)) {
        tmp_put(t, c);
        if (t->tmp_long || t->tmp_len > t->last_tag_len) {
            /* It can no longer be the appropriate end tag. */
            emit_lt_slash_tmp(t);
            t->state = text;
        }
        return true;
    }
    emit_lt_slash_tmp(t);
    t->state = text;
    return false;
}

/* ------------------------------------------------------------------ */
/* Character references.                                              */

static bool in_attr(const struct bc_html_tokenizer *t)
{
    return t->return_state == S_ATTR_VALUE_DQ ||
           t->return_state == S_ATTR_VALUE_SQ ||
           t->return_state == S_ATTR_VALUE_UQ;
}

/* "Flush code points consumed as a character reference." */
static void ref_flush(struct bc_html_tokenizer *t, const char *s, size_t n)
{
    if (in_attr(t))
        value_put(t, s, n);
    else
        emit_chars(t, s, n);
}

/* Narrow [ref_lo, ref_hi) to the names that continue with c at ref_len. */
static bool ref_narrow(struct bc_html_tokenizer *t, unsigned char c)
{
    size_t k = t->ref_len;
    size_t lo = t->ref_lo, hi = t->ref_hi;
    /* Entries of the range are sorted; the k-th byte (0 if shorter)
     * is non-decreasing within it. Find the sub-range equal to c. */
    size_t a = lo, b = hi;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        const struct bc_html_entity *e = &bc_html_entities[m];
        unsigned char x = k < e->name_len ? (unsigned char)e->name[k] : 0;
        if (x < c)
            a = m + 1;
        else
            b = m;
    }
    size_t first = a;
    b = hi;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        const struct bc_html_entity *e = &bc_html_entities[m];
        unsigned char x = k < e->name_len ? (unsigned char)e->name[k] : 0;
        if (x <= c)
            a = m + 1;
        else
            b = m;
    }
    if (first == a)
        return false;
    t->ref_lo = first;
    t->ref_hi = a;
    return true;
}

static void ref_start_named(struct bc_html_tokenizer *t)
{
    t->ref_len = 0;
    t->ref_lo = 0;
    t->ref_hi = BC_HTML_ENTITY_COUNT;
    t->ref_match_len = 0;
    t->state = S_NAMED_REF;
}

/*
 * The named reference ends: next is the character after what was read
 * (-1 at EOF), not consumed. Decides per 13.2.5.73 and returns to the
 * return state (or the ambiguous ampersand state).
 */
static void ref_named_done(struct bc_html_tokenizer *t, int next)
{
    if (t->ref_match_len == 0) {
        ref_flush(t, "&", 1);
        ref_flush(t, t->ref, t->ref_len);
        t->state = S_AMBIGUOUS_AMP;
        return;
    }
    const struct bc_html_entity *e = &bc_html_entities[t->ref_match_idx];
    size_t m = t->ref_match_len;
    int after = m < t->ref_len ? (unsigned char)t->ref[m] : next;
    if (in_attr(t) && t->ref[m - 1] != ';' &&
        (after == '=' || (after >= 0 && is_alnum((unsigned)after)))) {
        ref_flush(t, "&", 1);
        ref_flush(t, t->ref, m);
    } else {
        ref_flush(t, e->out, e->out_len);
    }
    ref_flush(t, t->ref + m, t->ref_len - m);
    t->state = t->return_state;
}

/* One character of a named reference; true if it was consumed. */
static bool ref_named_char(struct bc_html_tokenizer *t, unsigned c)
{
    if ((is_alnum(c) || c == ';') && t->ref_len < BC_HTML_ENTITY_LONGEST &&
        ref_narrow(t, (unsigned char)c)) {
        t->ref[t->ref_len++] = (char)c;
        const struct bc_html_entity *e = &bc_html_entities[t->ref_lo];
        if (e->name_len == t->ref_len) {
            t->ref_match_len = t->ref_len;
            t->ref_match_idx = t->ref_lo;
        }
        if (c == ';')
            ref_named_done(t, -1);
        return true;
    }
    ref_named_done(t, (int)c);
    return false;
}

static size_t utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* 13.2.5.80: the numeric character reference end state. */
static void ref_numeric_done(struct bc_html_tokenizer *t)
{
    /* The windows-1252 code points the standard maps 0x80-0x9F to. */
    static const uint16_t c1[32] = {
        0x20AC, 0x81,   0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,   0x017D, 0x8F,
        0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,   0x017E, 0x0178};
    uint32_t cp = t->ref_code;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        cp = 0xFFFD;
    else if (cp >= 0x80 && cp <= 0x9F)
        cp = c1[cp - 0x80];
    char out[4];
    ref_flush(t, out, utf8_put(out, cp));
    t->state = t->return_state;
}

static void ref_digit(struct bc_html_tokenizer *t, unsigned c)
{
    unsigned d = (unsigned)bc_hex_value((int)c); /* a digit, checked */
    /* Past 0x10FFFF the value only matters as "too large": it stays at
     * 0x110000, so 0x110000 * 16 + 15 bounds the product. */
    if (t->ref_code > 0x10FFFF)
        return;
    uint32_t code = t->ref_code * (t->ref_hex ? 16u : 10u) + d;
    t->ref_code = code > 0x10FFFF ? 0x110000 : code;
}

/* ------------------------------------------------------------------ */
/* Markup declaration open: "--", "DOCTYPE" (any case), "[CDATA[".     */

/* 1: la is a prefix of a keyword, 2: a whole keyword, 0: neither. */
static int la_match(const struct bc_html_tokenizer *t, const char *kw,
                    bool fold)
{
    size_t n = strlen(kw);
    if (t->la_len > n)
        return 0;
    for (size_t i = 0; i < t->la_len; i++) {
        unsigned char x = (unsigned char)t->la[i];
        if ((fold ? lower(x) : x) != (unsigned char)kw[i])
            return 0;
    }
    return t->la_len == n ? 2 : 1;
}

/* Returns true if c was consumed. */
static bool markup_decl_char(struct bc_html_tokenizer *t, unsigned c)
{
    t->la[t->la_len++] = (char)c;
    int dash = la_match(t, "--", false);
    int doct = la_match(t, "doctype", true);
    int cdata = la_match(t, "[CDATA[", false);
    if (dash == 2) {
        comment_begin(t);
        t->state = S_COMMENT_START;
        return true;
    }
    if (doct == 2) {
        t->state = S_DOCTYPE;
        return true;
    }
    if (cdata == 2) {
        if (t->foreign) {
            t->state = S_CDATA;
        } else {
            comment_begin(t);
            comment_put(t, "[CDATA[", 7);
            t->state = S_BOGUS_COMMENT;
        }
        return true;
    }
    if (dash || doct || cdata)
        return true;
    /* Not a keyword: a bogus comment that starts with what was read. */
    t->la_len--;
    comment_begin(t);
    comment_put(t, t->la, t->la_len);
    t->state = S_BOGUS_COMMENT;
    return false;
}

/* ------------------------------------------------------------------ */
/* The machine.                                                       */

/*
 * The attribute states (13.2.5.32-40) for a tag whose attributes are not
 * kept (an end tag, or a start tag the filter declined): the same
 * transitions, run in one tight loop with the state in a register,
 * since nothing is stored. Returns where it stopped: after the tag's
 * '>' (the tag emitted) or at end.
 *
 * One switch over the states, kept whole: each case is one state of the
 * standard, and the loop's speed comes from the state staying in a local
 * variable, which a helper per state would give up.
 */
static const unsigned char *skip_tag(struct bc_html_tokenizer *t,
                                     const unsigned char *p,
                                     const unsigned char *end)
{
    int st = t->state;
    while (p < end) {
        unsigned c = *p;
        switch (st) {
        case S_BEFORE_ATTR_NAME:
            if (is_ws(c))
                p++;
            else if (c == '/' || c == '>')
                st = S_AFTER_ATTR_NAME;
            else if (c == '=')
                p++, st = S_ATTR_NAME;
            else
                st = S_ATTR_NAME;
            break;
        case S_ATTR_NAME:
            if (is_ws(c) || c == '/' || c == '>')
                st = S_AFTER_ATTR_NAME;
            else if (c == '=')
                p++, st = S_BEFORE_ATTR_VALUE;
            else
                p++;
            break;
        case S_AFTER_ATTR_NAME:
            if (is_ws(c)) {
                p++;
            } else if (c == '/') {
                p++, st = S_SELF_CLOSING;
            } else if (c == '=') {
                p++, st = S_BEFORE_ATTR_VALUE;
            } else if (c == '>') {
                emit_tag(t);
                return p + 1;
            } else {
                st = S_ATTR_NAME;
            }
            break;
        case S_BEFORE_ATTR_VALUE:
            if (is_ws(c)) {
                p++;
            } else if (c == '"') {
                p++, st = S_ATTR_VALUE_DQ;
            } else if (c == '\'') {
                p++, st = S_ATTR_VALUE_SQ;
            } else if (c == '>') {
                emit_tag(t);
                return p + 1;
            } else {
                st = S_ATTR_VALUE_UQ;
            }
            break;
        case S_ATTR_VALUE_DQ:
        case S_ATTR_VALUE_SQ:
            p = find1(p, end, st == S_ATTR_VALUE_DQ ? '"' : '\'');
            if (p < end)
                p++, st = S_AFTER_ATTR_VALUE_Q;
            break;
        case S_ATTR_VALUE_UQ:
            if (is_ws(c)) {
                p++, st = S_BEFORE_ATTR_NAME;
            } else if (c == '>') {
                emit_tag(t);
                return p + 1;
            } else {
                p++;
            }
            break;
        case S_AFTER_ATTR_VALUE_Q:
            if (is_ws(c)) {
                p++, st = S_BEFORE_ATTR_NAME;
            } else if (c == '/') {
                p++, st = S_SELF_CLOSING;
            } else if (c == '>') {
                emit_tag(t);
                return p + 1;
            } else {
                st = S_BEFORE_ATTR_NAME;
            }
            break;
        default: /* S_SELF_CLOSING */
            if (c == '>') {
                t->self_closing = true;
                emit_tag(t);
                return p + 1;
            }
            st = S_BEFORE_ATTR_NAME;
            break;
        }
    }
    t->state = st;
    return p;
}

static void text_nul(struct bc_html_tokenizer *t)
{
    emit_chars(t, replacement, 3);
}

/*
 * One switch over the states, kept whole: each case is one state of
 * 13.2.5 (or a few that share their code), in about the standard's
 * order, so a case reads against its section; the fast paths jump from
 * case to case (goto data_state) with p and c in local variables, which
 * helpers returning the next state would give up. The work states share
 * is in the helpers above (tag_begin, attr_*, ref_*, emit_*).
 */
void bc_html_tokenizer_feed(struct bc_html_tokenizer *t, const void *data,
                            size_t len)
{
    const unsigned char *p = data;
    const unsigned char *end = p + len;
    const bool chars = (t->options & BC_HTML_EMIT_CHARS) != 0;

    while (p < end) {
        unsigned c = *p;
        switch ((enum state)t->state) {
        case S_DATA:
        data_state : {
            /* Entered by goto after a tag, with p < end. */
            const unsigned char *q =
                chars ? find3(p, end, '<', '&', '<') : find1(p, end, '<');
            if (q > p) {
                emit_chars(t, p, (size_t)(q - p));
                p = q;
                if (p == end)
                    break;
            }
            c = *p++;
            if (c == '<') {
                /* The common cases, "<x" and "</x", without a round
                 * trip through the tag open states. */
                if (p < end && is_alpha(*p)) {
                    tag_begin(t, false);
                    t->state = S_TAG_NAME;
                } else if (end - p >= 2 && *p == '/' && is_alpha(p[1])) {
                    p++;
                    tag_begin(t, true);
                    t->state = S_TAG_NAME;
                } else {
                    t->state = S_TAG_OPEN;
                }
            } else {
                t->return_state = S_DATA;
                t->state = S_CHARREF;
            }
            break;
        }
        case S_RCDATA: {
            const unsigned char *q =
                chars ? find3(p, end, '<', '&', 0) : find1(p, end, '<');
            if (q > p) {
                emit_chars(t, p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            if (c == '<') {
                t->state = S_RCDATA_LT;
            } else if (c == '&') {
                t->return_state = S_RCDATA;
                t->state = S_CHARREF;
            } else {
                text_nul(t);
            }
            break;
        }
        case S_RAWTEXT:
        case S_SCRIPT: {
            const unsigned char *q =
                chars ? find3(p, end, '<', 0, 0) : find1(p, end, '<');
            if (q > p) {
                emit_chars(t, p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            if (c == '<')
                t->state = t->state == S_RAWTEXT ? S_RAWTEXT_LT : S_SCRIPT_LT;
            else
                text_nul(t);
            break;
        }
        case S_PLAINTEXT: {
            if (!chars) {
                p = end;
                break;
            }
            const unsigned char *q = find1(p, end, 0);
            if (q > p) {
                emit_chars(t, p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            text_nul(t);
            break;
        }
        case S_TAG_OPEN:
            if (c == '!') {
                p++;
                t->la_len = 0;
                t->state = S_MARKUP_DECL;
            } else if (c == '/') {
                p++;
                t->state = S_END_TAG_OPEN;
            } else if (is_alpha(c)) {
                tag_begin(t, false);
                t->state = S_TAG_NAME;
            } else if (c == '?') {
                comment_begin(t);
                t->state = S_BOGUS_COMMENT;
            } else {
                emit_chars(t, "<", 1);
                t->state = S_DATA;
            }
            break;
        case S_END_TAG_OPEN:
            if (is_alpha(c)) {
                tag_begin(t, true);
                t->state = S_TAG_NAME;
            } else if (c == '>') {
                p++;
                t->state = S_DATA;
            } else {
                comment_begin(t);
                t->state = S_BOGUS_COMMENT;
            }
            break;
        case S_TAG_NAME: {
            /* The name's run: everything up to a byte that ends it,
             * lower-cased straight into the tag buffer when it has room
             * for 64 bytes (it always has, after the first tag). */
            const unsigned char *q = p;
            if (bc_buf_room(&t->tag) >= 64 && !t->name_cut) {
                char *out = t->tag.data + t->tag.len;
                size_t n = 0;
                while (q < end && n < 64) {
                    unsigned x = *q;
                    if (is_ws(x) || x == '/' || x == '>' || x == 0)
                        break;
                    out[n++] = (char)lower(x);
                    q++;
                }
                out[n] = '\0';
                t->tag.len += n;
                t->name_len += n;
            } else {
                char low[64];
                size_t n = 0;
                while (q < end && n < sizeof(low)) {
                    unsigned x = *q;
                    if (is_ws(x) || x == '/' || x == '>' || x == 0)
                        break;
                    low[n++] = (char)lower(x);
                    q++;
                }
                name_put(t, low, n);
            }
            if (q > p) {
                /* Go on with the byte that ended the name, if any (a
                 * name longer than the 64-byte run goes on next turn). */
                p = q;
                if (p == end)
                    break;
                c = *p;
                if (!is_ws(c) && c != '/' && c != '>' && c != 0)
                    break;
            }
            p++;
            if (is_ws(c)) {
                name_done(t);
                t->state = S_BEFORE_ATTR_NAME;
                if (!t->keep)
                    p = skip_tag(t, p, end);
            } else if (c == '/') {
                name_done(t);
                t->state = S_SELF_CLOSING;
            } else if (c == '>') {
                name_done(t);
                emit_tag(t);
            } else {
                name_put(t, replacement, 3);
            }
            /* Back in the data state (the usual case): straight on. */
            if (t->state == S_DATA && p < end)
                goto data_state;
            break;
        }
        case S_RCDATA_LT:
        case S_RAWTEXT_LT:
            if (c == '/') {
                p++;
                tmp_clear(t);
                t->state = t->state == S_RCDATA_LT ? S_RCDATA_END_OPEN
                                                   : S_RAWTEXT_END_OPEN;
            } else {
                emit_chars(t, "<", 1);
                t->state = t->state == S_RCDATA_LT ? S_RCDATA : S_RAWTEXT;
            }
            break;
        case S_RCDATA_END_OPEN:
        case S_RAWTEXT_END_OPEN:
        case S_SCRIPT_END_OPEN:
        case S_SCRIPT_ESC_END_OPEN: {
            static const int next[][2] = {
                {S_RCDATA_END_OPEN, S_RCDATA_END_NAME},
                {S_RAWTEXT_END_OPEN, S_RAWTEXT_END_NAME},
                {S_SCRIPT_END_OPEN, S_SCRIPT_END_NAME},
                {S_SCRIPT_ESC_END_OPEN, S_SCRIPT_ESC_END_NAME}};
            static const int text[] = {S_RCDATA, S_RAWTEXT, S_SCRIPT,
                                       S_SCRIPT_ESC};
            size_t k = 0;
            while (next[k][0] != t->state)
                k++;
            if (is_alpha(c)) {
                t->state = next[k][1];
            } else {
                emit_chars(t, "</", 2);
                t->state = text[k];
            }
            break;
        }
        case S_RCDATA_END_NAME:
            if (end_tag_name(t, c, S_RCDATA))
                p++;
            break;
        case S_RAWTEXT_END_NAME:
            if (end_tag_name(t, c, S_RAWTEXT))
                p++;
            break;
        case S_SCRIPT_END_NAME:
            if (end_tag_name(t, c, S_SCRIPT))
                p++;
            break;
        case S_SCRIPT_ESC_END_NAME:
            if (end_tag_name(t, c, S_SCRIPT_ESC))
                p++;
            break;
        case S_SCRIPT_LT:
            if (c == '/') {
                p++;
                tmp_clear(t);
                t->state = S_SCRIPT_END_OPEN;
            } else if (c == '!') {
                p++;
                emit_chars(t, "<!", 2);
                t->state = S_SCRIPT_ESC_START;
            } else {
                emit_chars(t, "<", 1);
                t->state = S_SCRIPT;
            }
            break;
        case S_SCRIPT_ESC_START:
        case S_SCRIPT_ESC_START_DASH:
            if (c == '-') {
                p++;
                emit_chars(t, "-", 1);
                t->state = t->state == S_SCRIPT_ESC_START
                               ? S_SCRIPT_ESC_START_DASH
                               : S_SCRIPT_ESC_DASH_DASH;
            } else {
                t->state = S_SCRIPT;
            }
            break;
        case S_SCRIPT_ESC:
        case S_SCRIPT_DESC: {
            bool esc = t->state == S_SCRIPT_ESC;
            const unsigned char *q = find3(p, end, '-', '<', 0);
            if (q > p) {
                emit_chars(t, p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            if (c == '-') {
                emit_chars(t, "-", 1);
                t->state = esc ? S_SCRIPT_ESC_DASH : S_SCRIPT_DESC_DASH;
            } else if (c == '<') {
                if (!esc)
                    emit_chars(t, "<", 1);
                t->state = esc ? S_SCRIPT_ESC_LT : S_SCRIPT_DESC_LT;
            } else {
                text_nul(t);
            }
            break;
        }
        case S_SCRIPT_ESC_DASH:
        case S_SCRIPT_ESC_DASH_DASH:
        case S_SCRIPT_DESC_DASH:
        case S_SCRIPT_DESC_DASH_DASH: {
            bool esc = t->state == S_SCRIPT_ESC_DASH ||
                       t->state == S_SCRIPT_ESC_DASH_DASH;
            p++;
            if (c == '-') {
                emit_chars(t, "-", 1);
                t->state =
                    esc ? S_SCRIPT_ESC_DASH_DASH : S_SCRIPT_DESC_DASH_DASH;
            } else if (c == '<') {
                if (!esc)
                    emit_chars(t, "<", 1);
                t->state = esc ? S_SCRIPT_ESC_LT : S_SCRIPT_DESC_LT;
            } else if (c == '>' && (t->state == S_SCRIPT_ESC_DASH_DASH ||
                                    t->state == S_SCRIPT_DESC_DASH_DASH)) {
                emit_chars(t, ">", 1);
                t->state = S_SCRIPT;
            } else {
                if (c == 0)
                    text_nul(t);
                else
                    emit_chars(t, p - 1, 1);
                t->state = esc ? S_SCRIPT_ESC : S_SCRIPT_DESC;
            }
            break;
        }
        case S_SCRIPT_ESC_LT:
            if (c == '/') {
                p++;
                tmp_clear(t);
                t->state = S_SCRIPT_ESC_END_OPEN;
            } else if (is_alpha(c)) {
                tmp_clear(t);
                emit_chars(t, "<", 1);
                t->state = S_SCRIPT_DESC_START;
            } else {
                emit_chars(t, "<", 1);
                t->state = S_SCRIPT_ESC;
            }
            break;
        case S_SCRIPT_DESC_START:
        case S_SCRIPT_DESC_END: {
            bool start = t->state == S_SCRIPT_DESC_START;
            if (is_ws(c) || c == '/' || c == '>') {
                p++;
                if (tmp_is_script(t))
                    t->state = start ? S_SCRIPT_DESC : S_SCRIPT_ESC;
                else
                    t->state = start ? S_SCRIPT_ESC : S_SCRIPT_DESC;
                emit_chars(t, p - 1, 1);
            } else if (is_alpha(c)) {
                p++;
                tmp_put(t, c);
                emit_chars(t, p - 1, 1);
            } else {
                t->state = start ? S_SCRIPT_ESC : S_SCRIPT_DESC;
            }
            break;
        }
        case S_SCRIPT_DESC_LT:
            if (c == '/') {
                p++;
                tmp_clear(t);
                emit_chars(t, "/", 1);
                t->state = S_SCRIPT_DESC_END;
            } else {
                t->state = S_SCRIPT_DESC;
            }
            break;
        case S_BEFORE_ATTR_NAME:
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            if (is_ws(c)) {
                p++;
            } else if (c == '/' || c == '>') {
                t->state = S_AFTER_ATTR_NAME;
            } else if (c == '=') {
                p++;
                attr_begin(t);
                attr_name_put(t, "=", 1);
                t->state = S_ATTR_NAME;
            } else {
                attr_begin(t);
                t->state = S_ATTR_NAME;
            }
            break;
        case S_ATTR_NAME: {
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            const unsigned char *q = p;
            char low[64];
            size_t n = 0;
            while (q < end && n < sizeof(low) - 3) {
                unsigned x = *q;
                if (is_ws(x) || x == '/' || x == '>' || x == '=' || x == 0)
                    break;
                low[n++] = (char)lower(x);
                q++;
            }
            if (n) {
                attr_name_put(t, low, n);
                p = q;
                break;
            }
            if (c == 0) {
                p++;
                attr_name_put(t, replacement, 3);
                break;
            }
            attr_name_done(t);
            if (c == '=') {
                p++;
                t->state = S_BEFORE_ATTR_VALUE;
            } else {
                t->state = S_AFTER_ATTR_NAME;
            }
            break;
        }
        case S_AFTER_ATTR_NAME:
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            if (is_ws(c)) {
                p++;
            } else if (c == '/') {
                p++;
                t->state = S_SELF_CLOSING;
            } else if (c == '=') {
                p++;
                t->state = S_BEFORE_ATTR_VALUE;
            } else if (c == '>') {
                p++;
                emit_tag(t);
            } else {
                attr_begin(t);
                t->state = S_ATTR_NAME;
            }
            break;
        case S_BEFORE_ATTR_VALUE:
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            if (is_ws(c)) {
                p++;
            } else if (c == '"') {
                p++;
                t->state = S_ATTR_VALUE_DQ;
            } else if (c == '\'') {
                p++;
                t->state = S_ATTR_VALUE_SQ;
            } else if (c == '>') {
                p++;
                emit_tag(t);
            } else {
                t->state = S_ATTR_VALUE_UQ;
            }
            break;
        case S_ATTR_VALUE_DQ:
        case S_ATTR_VALUE_SQ: {
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            unsigned char quote = t->state == S_ATTR_VALUE_DQ ? '"' : '\'';
            const unsigned char *q = find3(p, end, quote, '&', 0);
            if (q > p) {
                value_put(t, (const char *)p, (size_t)(q - p));
                p = q;
                if (p == end)
                    break;
                c = *p;
            }
            p++;
            if (c == quote) {
                /* The byte after the value, in place: most often a
                 * space before the next attribute, or the tag's end. */
                t->state = S_AFTER_ATTR_VALUE_Q;
                if (p < end && is_ws(*p)) {
                    p++;
                    t->state = S_BEFORE_ATTR_NAME;
                } else if (p < end && *p == '>') {
                    p++;
                    emit_tag(t);
                    if (t->state == S_DATA && p < end)
                        goto data_state;
                }
            } else if (c == '&') {
                t->return_state = t->state;
                t->state = S_CHARREF;
            } else {
                value_put(t, replacement, 3);
            }
            break;
        }
        case S_ATTR_VALUE_UQ: {
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            const unsigned char *q = p;
            while (q < end && !is_ws(*q) && *q != '&' && *q != '>' && *q != 0)
                q++;
            if (q > p) {
                value_put(t, (const char *)p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            if (is_ws(c)) {
                t->state = S_BEFORE_ATTR_NAME;
            } else if (c == '&') {
                t->return_state = S_ATTR_VALUE_UQ;
                t->state = S_CHARREF;
            } else if (c == '>') {
                emit_tag(t);
            } else {
                value_put(t, replacement, 3);
            }
            break;
        }
        case S_AFTER_ATTR_VALUE_Q:
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            if (is_ws(c)) {
                p++;
                t->state = S_BEFORE_ATTR_NAME;
            } else if (c == '/') {
                p++;
                t->state = S_SELF_CLOSING;
            } else if (c == '>') {
                p++;
                emit_tag(t);
            } else {
                t->state = S_BEFORE_ATTR_NAME;
            }
            break;
        case S_SELF_CLOSING:
            if (!t->keep) {
                p = skip_tag(t, p, end);
                break;
            }
            if (c == '>') {
                p++;
                t->self_closing = true;
                emit_tag(t);
            } else {
                t->state = S_BEFORE_ATTR_NAME;
            }
            break;
        case S_BOGUS_COMMENT: {
            const unsigned char *q = find3(p, end, '>', 0, '>');
            if (q > p) {
                comment_put(t, (const char *)p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            if (c == '>')
                emit_comment(t);
            else
                comment_put(t, replacement, 3);
            break;
        }
        case S_MARKUP_DECL:
            if (markup_decl_char(t, c))
                p++;
            break;
        case S_COMMENT_START:
        case S_COMMENT_START_DASH:
            if (c == '-') {
                p++;
                t->state = t->state == S_COMMENT_START ? S_COMMENT_START_DASH
                                                       : S_COMMENT_END;
            } else if (c == '>') {
                p++;
                emit_comment(t);
            } else {
                if (t->state == S_COMMENT_START_DASH)
                    comment_put(t, "-", 1);
                t->state = S_COMMENT;
            }
            break;
        case S_COMMENT: {
            const unsigned char *q = find3(p, end, '-', '<', 0);
            if (q > p) {
                comment_put(t, (const char *)p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            if (c == '<') {
                comment_put(t, "<", 1);
                t->state = S_COMMENT_LT;
            } else if (c == '-') {
                t->state = S_COMMENT_END_DASH;
            } else {
                comment_put(t, replacement, 3);
            }
            break;
        }
        case S_COMMENT_LT:
            if (c == '!') {
                p++;
                comment_put(t, "!", 1);
                t->state = S_COMMENT_LT_BANG;
            } else if (c == '<') {
                p++;
                comment_put(t, "<", 1);
            } else {
                t->state = S_COMMENT;
            }
            break;
        case S_COMMENT_LT_BANG:
            if (c == '-') {
                p++;
                t->state = S_COMMENT_LT_BANG_DASH;
            } else {
                t->state = S_COMMENT;
            }
            break;
        case S_COMMENT_LT_BANG_DASH:
            if (c == '-') {
                p++;
                t->state = S_COMMENT_LT_BANG_DASH_DASH;
            } else {
                t->state = S_COMMENT_END_DASH;
            }
            break;
        case S_COMMENT_LT_BANG_DASH_DASH:
            t->state = S_COMMENT_END;
            break;
        case S_COMMENT_END_DASH:
            if (c == '-') {
                p++;
                t->state = S_COMMENT_END;
            } else {
                comment_put(t, "-", 1);
                t->state = S_COMMENT;
            }
            break;
        case S_COMMENT_END:
            if (c == '>') {
                p++;
                emit_comment(t);
            } else if (c == '!') {
                p++;
                t->state = S_COMMENT_END_BANG;
            } else if (c == '-') {
                p++;
                comment_put(t, "-", 1);
            } else {
                comment_put(t, "--", 2);
                t->state = S_COMMENT;
            }
            break;
        case S_COMMENT_END_BANG:
            if (c == '-') {
                p++;
                comment_put(t, "--!", 3);
                t->state = S_COMMENT_END_DASH;
            } else if (c == '>') {
                p++;
                emit_comment(t);
            } else {
                comment_put(t, "--!", 3);
                t->state = S_COMMENT;
            }
            break;
        case S_DOCTYPE: {
            const unsigned char *q = find1(p, end, '>');
            p = q;
            if (p < end) {
                p++;
                emit_doctype(t);
            }
            break;
        }
        case S_CDATA: {
            const unsigned char *q = find1(p, end, ']');
            if (q > p) {
                emit_chars(t, p, (size_t)(q - p));
                p = q;
                break;
            }
            p++;
            t->state = S_CDATA_BRACKET;
            break;
        }
        case S_CDATA_BRACKET:
            if (c == ']') {
                p++;
                t->state = S_CDATA_END;
            } else {
                emit_chars(t, "]", 1);
                t->state = S_CDATA;
            }
            break;
        case S_CDATA_END:
            if (c == ']') {
                p++;
                emit_chars(t, "]", 1);
            } else if (c == '>') {
                p++;
                t->state = S_DATA;
            } else {
                emit_chars(t, "]]", 2);
                t->state = S_CDATA;
            }
            break;
        case S_CHARREF:
            if (is_alnum(c)) {
                ref_start_named(t);
            } else if (c == '#') {
                p++;
                t->ref_code = 0;
                t->ref_hex = false;
                t->state = S_NUMERIC_REF;
            } else {
                ref_flush(t, "&", 1);
                t->state = t->return_state;
            }
            break;
        case S_NAMED_REF:
            if (ref_named_char(t, c))
                p++;
            break;
        case S_AMBIGUOUS_AMP:
            if (is_alnum(c)) {
                p++;
                ref_flush(t, (const char *)p - 1, 1);
            } else {
                t->state = t->return_state;
            }
            break;
        case S_NUMERIC_REF:
            if (c == 'x' || c == 'X') {
                p++;
                t->ref_hex = true;
                t->ref[0] = (char)c;
                t->state = S_HEX_REF_START;
            } else {
                t->state = S_DEC_REF_START;
            }
            break;
        case S_HEX_REF_START:
        case S_DEC_REF_START:
            if (t->ref_hex ? is_hex(c) : is_digit(c)) {
                t->state = t->ref_hex ? S_HEX_REF : S_DEC_REF;
            } else {
                ref_flush(t, "&#", 2);
                if (t->ref_hex)
                    ref_flush(t, t->ref, 1);
                t->state = t->return_state;
            }
            break;
        case S_HEX_REF:
        case S_DEC_REF:
            if (t->ref_hex ? is_hex(c) : is_digit(c)) {
                p++;
                ref_digit(t, c);
            } else {
                if (c == ';')
                    p++;
                ref_numeric_done(t);
            }
            break;
        }
    }
}

/*
 * One switch over the states, kept whole: the end-of-file rule of every
 * state (13.2.5, "EOF" in each), listed so that the compiler checks no
 * state is forgotten; a character reference state flushes what it read
 * and goes round again in the state it returns to.
 */
void bc_html_tokenizer_finish(struct bc_html_tokenizer *t)
{
    for (;;) {
        switch ((enum state)t->state) {
        case S_TAG_OPEN:
        case S_RCDATA_LT:
        case S_RAWTEXT_LT:
        case S_SCRIPT_LT:
        case S_SCRIPT_ESC_LT:
            emit_chars(t, "<", 1);
            return;
        case S_END_TAG_OPEN:
        case S_RCDATA_END_OPEN:
        case S_RAWTEXT_END_OPEN:
        case S_SCRIPT_END_OPEN:
        case S_SCRIPT_ESC_END_OPEN:
            emit_chars(t, "</", 2);
            return;
        case S_RCDATA_END_NAME:
        case S_RAWTEXT_END_NAME:
        case S_SCRIPT_END_NAME:
        case S_SCRIPT_ESC_END_NAME:
            emit_lt_slash_tmp(t);
            return;
        case S_MARKUP_DECL:
            comment_begin(t);
            comment_put(t, t->la, t->la_len);
            emit_comment(t);
            return;
        case S_BOGUS_COMMENT:
        case S_COMMENT_START:
        case S_COMMENT_START_DASH:
        case S_COMMENT:
        case S_COMMENT_LT:
        case S_COMMENT_LT_BANG:
        case S_COMMENT_LT_BANG_DASH:
        case S_COMMENT_LT_BANG_DASH_DASH:
        case S_COMMENT_END_DASH:
        case S_COMMENT_END:
        case S_COMMENT_END_BANG:
            emit_comment(t);
            return;
        case S_DOCTYPE:
            emit_doctype(t);
            return;
        case S_CDATA_BRACKET:
            emit_chars(t, "]", 1);
            return;
        case S_CDATA_END:
            emit_chars(t, "]]", 2);
            return;
        case S_CHARREF:
            ref_flush(t, "&", 1);
            t->state = t->return_state;
            break;
        case S_NAMED_REF:
            ref_named_done(t, -1);
            if (t->state == S_AMBIGUOUS_AMP)
                t->state = t->return_state;
            break;
        case S_AMBIGUOUS_AMP:
            t->state = t->return_state;
            break;
        case S_NUMERIC_REF:
        case S_HEX_REF_START:
        case S_DEC_REF_START:
            ref_flush(t, "&#", 2);
            if (t->ref_hex)
                ref_flush(t, t->ref, 1);
            t->state = t->return_state;
            break;
        case S_HEX_REF:
        case S_DEC_REF:
            ref_numeric_done(t);
            break;
        case S_DATA:
        case S_RCDATA:
        case S_RAWTEXT:
        case S_SCRIPT:
        case S_PLAINTEXT:
        case S_TAG_NAME:
        case S_SCRIPT_ESC_START:
        case S_SCRIPT_ESC_START_DASH:
        case S_SCRIPT_ESC:
        case S_SCRIPT_ESC_DASH:
        case S_SCRIPT_ESC_DASH_DASH:
        case S_SCRIPT_DESC_START:
        case S_SCRIPT_DESC:
        case S_SCRIPT_DESC_DASH:
        case S_SCRIPT_DESC_DASH_DASH:
        case S_SCRIPT_DESC_LT:
        case S_SCRIPT_DESC_END:
        case S_BEFORE_ATTR_NAME:
        case S_ATTR_NAME:
        case S_AFTER_ATTR_NAME:
        case S_BEFORE_ATTR_VALUE:
        case S_ATTR_VALUE_DQ:
        case S_ATTR_VALUE_SQ:
        case S_ATTR_VALUE_UQ:
        case S_AFTER_ATTR_VALUE_Q:
        case S_SELF_CLOSING:
        case S_CDATA:
            return;
        }
    }
}

bool bc_html_tokenizer_init(struct bc_html_tokenizer *t,
                            bc_html_token_fn on_token, void *user,
                            unsigned options, size_t value_cap, size_t buf_max)
{
    /* The attribute arrays are written before they are read. */
    memset(t, 0, offsetof(struct bc_html_tokenizer, attr_off));
    t->on_token = on_token;
    t->user = user;
    t->options = options;
    t->value_cap = value_cap;
    bc_buf_init(&t->tag, buf_max < 64 ? 64 : buf_max);
    t->state = S_DATA;
    t->return_state = S_DATA;
    /* The first 4 KiB (or the cap) at once: most tags never grow it. */
    return bc_buf_reserve(&t->tag, t->tag.max < 4095 ? t->tag.max : 4095) ==
           BC_OK;
}

void bc_html_tokenizer_release(struct bc_html_tokenizer *t)
{
    bc_buf_free(&t->tag);
}

void bc_html_tokenizer_set_state(struct bc_html_tokenizer *t,
                                 enum bc_html_state state)
{
    static const int map[] = {S_DATA,   S_RCDATA,    S_RAWTEXT,
                              S_SCRIPT, S_PLAINTEXT, S_CDATA};
    t->state = map[state];
}

void bc_html_tokenizer_set_last_tag(struct bc_html_tokenizer *t,
                                    const char *name, size_t len)
{
    if (len > BC_HTML_MAX_LAST_TAG) {
        t->last_tag_len = 0;
        return;
    }
    for (size_t i = 0; i < len; i++)
        t->last_tag[i] = (char)lower((unsigned char)name[i]);
    t->last_tag_len = len;
}

void bc_html_tokenizer_set_filter(struct bc_html_tokenizer *t,
                                  bc_html_want_fn want)
{
    t->want_attrs = want;
}

void bc_html_tokenizer_set_end_tags(struct bc_html_tokenizer *t, bool emit)
{
    t->no_end_tags = !emit;
}

void bc_html_tokenizer_watch_text(struct bc_html_tokenizer *t, bool watch)
{
    t->watch_text = watch;
}

void bc_html_tokenizer_set_foreign(struct bc_html_tokenizer *t, bool foreign)
{
    t->foreign = foreign;
}
