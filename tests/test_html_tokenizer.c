/*
 * test_html_tokenizer.c - the WHATWG tokenizer against html5lib-tests.
 *
 * The html5lib-tests tokenizer suite (tests/data/conformance/
 * html5lib-tokenizer, MIT) is converted at build time by
 * tests/html5lib_convert.py into one record per test and initial state
 * (BC_HTML5LIB_CASES). Each record runs three times: the input whole, in
 * 1-byte chunks and in 3-byte chunks (state carried across every kind of
 * boundary); the tokens, serialized canonically (characters coalesced,
 * attributes sorted by name, DOCTYPE content not compared: the tokenizer
 * skips it by design), must equal the expected ones. Parse errors are
 * not compared. The input goes through the standard's newline
 * normalization first (13.2.3.5: CR LF and lone CR become LF), which
 * precedes tokenization and which the library leaves to the URL parser.
 *
 * Records that cannot apply (a lone surrogate has no UTF-8 form) are
 * counted and listed. The test prints the pass count per file and every
 * failure with its input and both token streams; it fails below 99 %
 * of the applicable records, or on any failure not listed in
 * known_failures below with its reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_tokenizer_int.h"
#include "strbuf.h"

/* The converter's escaping: printable ASCII but \ = : as is. */
static void sb_esc(struct strbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x21 && c <= 0x7E && c != '\\' && c != '=' && c != ':') {
            strbuf_add(b, &s[i], 1);
        } else {
            char hex[8];
            snprintf(hex, sizeof(hex), "\\x%02x", c);
            strbuf_str(b, hex);
        }
    }
}

struct run {
    struct strbuf out;   /* canonical token lines */
    struct strbuf chars; /* pending characters, coalesced */
};

static void flush_chars(struct run *r)
{
    if (r->chars.len == 0)
        return;
    strbuf_str(&r->out, "C:");
    sb_esc(&r->out, r->chars.p, r->chars.len);
    strbuf_str(&r->out, "\n");
    r->chars.len = 0;
}

static int cmp_attr(const void *a, const void *b)
{
    const struct bc_html_attr *x = *(const struct bc_html_attr *const *)a;
    const struct bc_html_attr *y = *(const struct bc_html_attr *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static void on_token(void *user, const struct bc_html_token *tok)
{
    struct run *r = user;
    if (tok->type == BC_HTML_CHARS) {
        strbuf_add(&r->chars, tok->data, tok->len);
        return;
    }
    flush_chars(r);
    switch (tok->type) {
    case BC_HTML_START_TAG: {
        char head[16];
        const struct bc_html_attr *sorted[BC_HTML_MAX_ATTRS];
        strbuf_str(&r->out, "S:");
        sb_esc(&r->out, tok->data, tok->len);
        snprintf(head, sizeof(head), ":%d", tok->self_closing ? 1 : 0);
        strbuf_str(&r->out, head);
        for (size_t i = 0; i < tok->n_attrs; i++)
            sorted[i] = &tok->attrs[i];
        qsort(sorted, tok->n_attrs, sizeof(sorted[0]), cmp_attr);
        for (size_t i = 0; i < tok->n_attrs; i++) {
            strbuf_str(&r->out, " ");
            sb_esc(&r->out, sorted[i]->name, sorted[i]->name_len);
            strbuf_str(&r->out, "=");
            sb_esc(&r->out, sorted[i]->value, sorted[i]->value_len);
            assert_false(sorted[i]->value_cut);
        }
        strbuf_str(&r->out, "\n");
        break;
    }
    case BC_HTML_END_TAG:
        strbuf_str(&r->out, "E:");
        sb_esc(&r->out, tok->data, tok->len);
        strbuf_str(&r->out, "\n");
        break;
    case BC_HTML_COMMENT:
        strbuf_str(&r->out, "M:");
        sb_esc(&r->out, tok->data, tok->len);
        strbuf_str(&r->out, "\n");
        break;
    case BC_HTML_DOCTYPE:
        strbuf_str(&r->out, "D\n");
        break;
    case BC_HTML_CHARS:
        break;
    }
}

static int hexval(char c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* Tokenize input in chunks of chunk bytes (0: whole) into out. */
static void tokenize(const char *state, const char *last, const char *in,
                     size_t len, size_t chunk, struct strbuf *out)
{
    static const struct {
        const char *name;
        enum bc_html_state state;
    } states[] = {{"Data", BC_HTML_STATE_DATA},
                  {"RCDATA", BC_HTML_STATE_RCDATA},
                  {"RAWTEXT", BC_HTML_STATE_RAWTEXT},
                  {"Script data", BC_HTML_STATE_SCRIPT_DATA},
                  {"PLAINTEXT", BC_HTML_STATE_PLAINTEXT},
                  {"CDATA section", BC_HTML_STATE_CDATA_SECTION}};
    struct run r = {{0}, {0}};
    struct bc_html_tokenizer *t = malloc(sizeof(*t));
    assert_non_null(t);
    assert_true(bc_html_tokenizer_init(
        t, on_token, &r, BC_HTML_EMIT_CHARS | BC_HTML_EMIT_COMMENTS, 1u << 20,
        1u << 22));
    size_t k = 0;
    while (strcmp(states[k].name, state) != 0) {
        k++;
        assert_true(k < sizeof(states) / sizeof(states[0]));
    }
    bc_html_tokenizer_set_state(t, states[k].state);
    if (strcmp(last, "-") != 0)
        bc_html_tokenizer_set_last_tag(t, last, strlen(last));
    for (size_t off = 0; off < len;) {
        size_t n = chunk && chunk < len - off ? chunk : len - off;
        bc_html_tokenizer_feed(t, in + off, n);
        off += n;
    }
    bc_html_tokenizer_finish(t);
    flush_chars(&r);
    bc_html_tokenizer_release(t);
    free(t);
    free(r.chars.p);
    strbuf_add(&r.out, "", 0);
    *out = r.out;
}

/* Records expected to fail, with the reason (none today). */
static const struct {
    const char *file;
    int index;
    const char *reason;
} known_failures[] = {{NULL, 0, NULL}};

static const char *known_reason(const char *file, int index)
{
    for (size_t i = 0; known_failures[i].file; i++) {
        if (strcmp(known_failures[i].file, file) == 0 &&
            known_failures[i].index == index)
            return known_failures[i].reason;
    }
    return NULL;
}

/* Copy src into dst (cap bytes), cut if longer. */
static void field(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

struct file_count {
    char name[64];
    unsigned run, pass, skipped;
};

static void test_html5lib(void **state)
{
    (void)state;
    FILE *f = fopen(BC_HTML5LIB_CASES, "r");
    if (!f)
        fail_msg("cannot open %s", BC_HTML5LIB_CASES);
    struct file_count files[32];
    size_t n_files = 0;
    unsigned total = 0, passed = 0, unexplained = 0;
    static char line[1 << 20];
    char file[64] = "", desc[512] = "", st[32] = "", last[64] = "";
    int index = 0;
    struct strbuf in = {0}, expect = {0};
    const char *skip = NULL;
    char skip_reason[256];

    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "test ", 5) == 0) {
            int used = 0;
            assert_int_equal(
                sscanf(line + 5, "%63s %d %n", file, &index, &used), 2);
            field(desc, sizeof(desc), line + 5 + used);
            in.len = 0;
            expect.len = 0;
            strbuf_add(&in, "", 0);
            strbuf_add(&expect, "", 0);
            skip = NULL;
        } else if (strncmp(line, "state ", 6) == 0) {
            field(st, sizeof(st), line + 6);
        } else if (strncmp(line, "last ", 5) == 0) {
            field(last, sizeof(last), line + 5);
        } else if (strncmp(line, "skip ", 5) == 0) {
            field(skip_reason, sizeof(skip_reason), line + 5);
            skip = skip_reason;
        } else if (strncmp(line, "input ", 6) == 0) {
            /* Decode, with newline normalization (13.2.3.5). */
            const char *h = line + 6;
            bool cr = false;
            for (size_t i = 0; h[i] && h[i + 1]; i += 2) {
                char c = (char)(hexval(h[i]) * 16 + hexval(h[i + 1]));
                if (c == '\n' && cr) {
                    cr = false;
                    continue;
                }
                cr = c == '\r';
                strbuf_add(&in, cr ? "\n" : &c, 1);
            }
        } else if (strncmp(line, "expect ", 7) == 0) {
            strbuf_str(&expect, line + 7);
            strbuf_str(&expect, "\n");
        } else if (strcmp(line, "end") == 0) {
            size_t k = 0;
            while (k < n_files && strcmp(files[k].name, file) != 0)
                k++;
            if (k == n_files) {
                assert_true(n_files < sizeof(files) / sizeof(files[0]));
                memset(&files[k], 0, sizeof(files[k]));
                field(files[k].name, sizeof(files[k].name), file);
                n_files++;
            }
            if (skip) {
                files[k].skipped++;
                printf("not applicable: %s #%d (%s): %s\n", file, index, desc,
                       skip);
                continue;
            }
            files[k].run++;
            total++;
            static const size_t chunks[] = {0, 1, 3};
            bool ok = true;
            struct strbuf got = {0};
            for (size_t c = 0; c < 3 && ok; c++) {
                free(got.p);
                tokenize(st, last, in.p, in.len, chunks[c], &got);
                ok = strcmp(got.p, expect.p) == 0;
            }
            if (ok) {
                files[k].pass++;
                passed++;
            } else {
                const char *why = known_reason(file, index);
                if (!why)
                    unexplained++;
                printf("FAIL %s #%d (%s) [%s state]%s%s\n  expected:\n%s"
                       "  got:\n%s",
                       file, index, desc, st, why ? ": " : "", why ? why : "",
                       expect.p, got.p);
            }
            free(got.p);
        }
    }
    fclose(f);
    free(in.p);
    free(expect.p);
    for (size_t k = 0; k < n_files; k++) {
        printf("%-28s %5u/%5u passed, %u not applicable\n", files[k].name,
               files[k].pass, files[k].run, files[k].skipped);
    }
    printf("total: %u/%u passed (%.2f %%)\n", passed, total,
           total ? 100.0 * passed / total : 0.0);
    assert_true(total > 6000);
    assert_true(passed * 100u >= total * 99u);
    assert_int_equal(unexplained, 0);
}

/*
 * Names longer than the tokenizer's 64-byte copy runs (found by
 * fuzz_html_tokenizer): the same tokens whole and byte by byte, the name
 * unbroken.
 */
static void test_long_names(void **state)
{
    (void)state;
    char in[512], want[512];
    int n = snprintf(in, sizeof(in), "<L%0100d a=b><b c%0130d=d>", 0, 0);
    snprintf(want, sizeof(want), "S:l%0100d:0 a=b\nS:b:0 c%0130d=d\n", 0, 0);
    static const size_t chunks[] = {0, 1, 64, 65};
    for (size_t c = 0; c < 4; c++) {
        struct strbuf got = {0};
        tokenize("Data", "-", in, (size_t)n, chunks[c], &got);
        assert_string_equal(got.p, want);
        free(got.p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_names),
        cmocka_unit_test(test_html5lib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
