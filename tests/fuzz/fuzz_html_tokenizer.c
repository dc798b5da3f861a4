/*
 * fuzz_html_tokenizer.c - libFuzzer target for the WHATWG tokenizer
 * (fetcher/html_tokenizer.c) with characters and comments reported.
 *
 * The first byte chooses the initial state (data, RCDATA, RAWTEXT, script
 * data, PLAINTEXT, CDATA section) and whether CDATA is allowed; the rest
 * is fed whole and then one byte at a time. The two token streams,
 * hashed with characters coalesced, must be equal (state carried across
 * every boundary), and nothing may crash, leak or read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html_tokenizer_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
    uint64_t hash;
    uint64_t tokens;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211u;
    return h;
}

static void on_token(void *user, const struct bc_html_token *tok)
{
    struct run *r = user;
    if (tok->type == BC_HTML_CHARS) {
        /* Coalesced: characters hash the same however they are split. */
        r->hash = fnv(r->hash, tok->data, tok->len);
        return;
    }
    unsigned char kind = (unsigned char)(0xF0 | tok->type);
    r->tokens++;
    r->hash = fnv(r->hash, &kind, 1);
    r->hash = fnv(r->hash, tok->data, tok->len);
    r->hash = fnv(r->hash, &tok->self_closing, sizeof(tok->self_closing));
    for (size_t i = 0; i < tok->n_attrs; i++) {
        const struct bc_html_attr *a = &tok->attrs[i];
        if (a->value_cut)
            abort(); /* the caps below are never reached */
        r->hash = fnv(r->hash, a->name, a->name_len);
        r->hash = fnv(r->hash, "=", 1);
        r->hash = fnv(r->hash, a->value, a->value_len);
    }
}

static void run(struct run *r, unsigned mode, const uint8_t *data, size_t size,
                size_t chunk)
{
    static const enum bc_html_state states[] = {
        BC_HTML_STATE_DATA,      BC_HTML_STATE_RCDATA,
        BC_HTML_STATE_RAWTEXT,   BC_HTML_STATE_SCRIPT_DATA,
        BC_HTML_STATE_PLAINTEXT, BC_HTML_STATE_CDATA_SECTION};
    struct bc_html_tokenizer *t = malloc(sizeof(*t));
    if (!t)
        abort();
    r->hash = 14695981039346656037u;
    r->tokens = 0;
    if (!bc_html_tokenizer_init(t, on_token, r,
                                BC_HTML_EMIT_CHARS | BC_HTML_EMIT_COMMENTS,
                                1u << 20, 1u << 22))
        abort();
    bc_html_tokenizer_set_state(t, states[(mode & 0x7f) % 6]);
    bc_html_tokenizer_set_foreign(t, (mode & 0x80) != 0);
    bc_html_tokenizer_set_last_tag(t, "title", 5);
    for (size_t off = 0; off < size; off += chunk)
        bc_html_tokenizer_feed(t, data + off,
                               size - off < chunk ? size - off : chunk);
    bc_html_tokenizer_finish(t);
    bc_html_tokenizer_release(t);
    free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    unsigned mode = data[0];
    struct run whole, bytes;
    run(&whole, mode, data + 1, size - 1, size);
    run(&bytes, mode, data + 1, size - 1, 1);
    if (whole.hash != bytes.hash || whole.tokens != bytes.tokens)
        abort(); /* the tokens depend on where the input was cut */
    return 0;
}
