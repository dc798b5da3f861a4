/*
 * html_tokenizer_int.h - the streaming WHATWG HTML tokenizer (private).
 *
 * The fetcher's link extractor (links.c) and the conformance test
 * (tests/test_html_tokenizer.c) use it; it is not installed. The state
 * machine is section 13.2.5 of the HTML Standard; html_tokenizer.c
 * explains what it implements and how it is made fast.
 *
 * A tokenizer is fed bytes in chunks of any size and calls back once per
 * token. It never allocates per token: the current tag (name, attribute
 * names and values) or comment lives in one buffer that grows by
 * doubling up to buf_max bytes and is then reused for every later token.
 */
#ifndef BC_FETCHER_HTML_TOKENIZER_INT_H
#define BC_FETCHER_HTML_TOKENIZER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bc_buf.h"

enum bc_html_token_type {
    BC_HTML_START_TAG,
    BC_HTML_END_TAG,
    BC_HTML_COMMENT, /* only with BC_HTML_EMIT_COMMENTS */
    BC_HTML_CHARS,   /* only with BC_HTML_EMIT_CHARS */
    BC_HTML_DOCTYPE  /* the DOCTYPE's content is skipped, not reported */
};

/* Options of bc_html_tokenizer_init. */
enum bc_html_option {
    /* Report character tokens, character references in text decoded. */
    BC_HTML_EMIT_CHARS = 1u << 0,
    /* Report comments with their data. */
    BC_HTML_EMIT_COMMENTS = 1u << 1
};

/* The states a caller may set (the tree builder's switches, tests). */
enum bc_html_state {
    BC_HTML_STATE_DATA,
    BC_HTML_STATE_RCDATA,
    BC_HTML_STATE_RAWTEXT,
    BC_HTML_STATE_SCRIPT_DATA,
    BC_HTML_STATE_PLAINTEXT,
    BC_HTML_STATE_CDATA_SECTION
};

/* An attribute of a start tag; name lower-cased, value decoded. */
struct bc_html_attr {
    const char *name;
    size_t name_len;
    const char *value; /* the first min(value_len, value_cap) bytes */
    size_t value_len;  /* the whole value's length, stored or not */
    bool value_cut;    /* value_len > the bytes stored (cap or buf_max) */
};

struct bc_html_token {
    enum bc_html_token_type type;
    /* Tag name (lower-cased), comment data or characters. */
    const char *data;
    size_t len;
    bool cut; /* the name or comment was longer than buf_max: cut */
    bool self_closing;
    const struct bc_html_attr *attrs; /* start tags only */
    size_t n_attrs;
};

/*
 * Called once per token; the token and everything it points to are
 * valid only during the call. The callback may call
 * bc_html_tokenizer_set_state and bc_html_tokenizer_set_foreign (that is
 * how a tree builder switches the tokenizer after <textarea> or <svg>),
 * but not feed or finish.
 */
typedef void (*bc_html_token_fn)(void *user, const struct bc_html_token *tok);

/* What a filter wants of a start tag. */
enum bc_html_want {
    BC_HTML_WANT_NONE, /* nothing: the token is not emitted at all */
    BC_HTML_WANT_TAG,  /* the token, without its attributes */
    BC_HTML_WANT_ATTRS /* the token with its attributes */
};

/*
 * Optional: asked once per start tag, when its name is complete (before
 * its attributes, and before the token is emitted), what is wanted of
 * it. Attributes not wanted are tokenized (quotes and all) but neither
 * stored nor decoded.
 */
typedef enum bc_html_want (*bc_html_want_fn)(void *user, const char *name,
                                             size_t len);

/* At most this many attributes of one tag are kept; more are dropped. */
#define BC_HTML_MAX_ATTRS 256u
/* Longest last-start-tag name kept for the "appropriate end tag" test. */
#define BC_HTML_MAX_LAST_TAG 32u

struct bc_html_attr_off {
    uint32_t name_off, name_len, value_off;
    size_t value_len;
    bool value_cut;
};

/* The tokenizer; its fields are private to html_tokenizer.c. */
struct bc_html_tokenizer {
    bc_html_token_fn on_token;
    void *user;
    unsigned options;
    int state, return_state;
    bool foreign; /* adjusted current node not HTML: CDATA allowed */
    bool nomem;   /* the buffer could not grow: tokens were cut */
    /* The current tag or comment. */
    struct bc_buf tag; /* capped at the init's buf_max */
    size_t value_cap;
    bool is_end_tag, self_closing, name_cut, comment_cut;
    size_t name_len;
    size_t n_attrs;
    long cur_attr;    /* index of the attribute being built, -1: dropped */
    bool keep;        /* the current tag's attributes are stored */
    bool drop;        /* the current tag is not emitted */
    bool no_end_tags; /* end tags are not emitted */
    bool watch_text;  /* look for text in the data state (text_seen) */
    bool text_seen;   /* watched text held a character not whitespace */
    bc_html_want_fn want_attrs;
    uint64_t attrs_dropped; /* over BC_HTML_MAX_ATTRS */
    /* The last start tag's name, for "appropriate end tag token". */
    char last_tag[BC_HTML_MAX_LAST_TAG];
    size_t last_tag_len; /* 0: none, or longer than the cap */
    /* The standard's temporary buffer (end tag names in text, script
     * double escapes), as written; longer names never match. */
    char tmp[BC_HTML_MAX_LAST_TAG + 2];
    size_t tmp_len;
    bool tmp_long;
    /* Markup declaration open: lookahead of up to 7 bytes. */
    char la[8];
    size_t la_len;
    /* Character references: the name read so far, its candidate range
     * in the entity table and the longest full match. */
    char ref[40];
    size_t ref_len, ref_lo, ref_hi, ref_match_len, ref_match_idx;
    bool ref_hex;
    uint32_t ref_code;
    bool ref_digits;
    /* Last, so that initialization need not clear them. */
    struct bc_html_attr_off attr_off[BC_HTML_MAX_ATTRS];
    struct bc_html_attr attrs[BC_HTML_MAX_ATTRS];
};

/*
 * Initialize t (its memory owned by the caller): tokens go to on_token;
 * options BC_HTML_*; attribute values keep at most value_cap bytes (the
 * length is counted on); the tag buffer grows up to buf_max bytes.
 * Returns false if the first buffer could not be allocated. Release with
 * bc_html_tokenizer_release. Cost: one allocation of up to 4 KiB.
 */
bool bc_html_tokenizer_init(struct bc_html_tokenizer *t,
                            bc_html_token_fn on_token, void *user,
                            unsigned options, size_t value_cap, size_t buf_max);

/* Free the tokenizer's buffer; t itself belongs to the caller. */
void bc_html_tokenizer_release(struct bc_html_tokenizer *t);

/* Tokenize the next len bytes. Cost: linear in len. */
void bc_html_tokenizer_feed(struct bc_html_tokenizer *t, const void *data,
                            size_t len);

/* End of input: emit what the standard emits at EOF in this state. */
void bc_html_tokenizer_finish(struct bc_html_tokenizer *t);

/* Switch to one of the text states (the tree builder's job). */
void bc_html_tokenizer_set_state(struct bc_html_tokenizer *t,
                                 enum bc_html_state state);

/* Set the last start tag name (tests' lastStartTag); cut names are none. */
void bc_html_tokenizer_set_last_tag(struct bc_html_tokenizer *t,
                                    const char *name, size_t len);

/* Ask want what is wanted of each start tag (NULL: everything). */
void bc_html_tokenizer_set_filter(struct bc_html_tokenizer *t,
                                  bc_html_want_fn want);

/* Emit end tags (the default) or not. */
void bc_html_tokenizer_set_end_tags(struct bc_html_tokenizer *t, bool emit);

/*
 * Watch the character tokens of the data state and of CDATA sections (the
 * text a tree builder inserts "in body") or not (the default): while
 * watched, one that is not ASCII whitespace or NUL sets t->text_seen
 * and ends the watch; the caller reads and clears it between tokens (the
 * tree builder's frameset-ok flag). Character references in the data state count as
 * their '&' when characters are not reported (BC_HTML_EMIT_CHARS off),
 * as what they decode to otherwise. Cost: a test per character run, a
 * look at its bytes while watched.
 */
void bc_html_tokenizer_watch_text(struct bc_html_tokenizer *t, bool watch);

/* Is the adjusted current node in a foreign namespace (svg, math)? */
void bc_html_tokenizer_set_foreign(struct bc_html_tokenizer *t, bool foreign);

#endif /* BC_FETCHER_HTML_TOKENIZER_INT_H */
