/*
 * strbuf.h - a growable NUL-terminated string for tests that collect
 * output (links, tokens) and compare it with an expected text. A failed
 * allocation fails the running cmocka test. Free .p when done.
 */
#ifndef BC_TESTS_STRBUF_H
#define BC_TESTS_STRBUF_H

#include <stdlib.h>
#include <string.h>

struct strbuf {
    char *p;
    size_t len, cap;
};

/* Append n bytes of s. */
static void strbuf_add(struct strbuf *b, const void *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        b->p = realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

/* Append a NUL-terminated string. */
static void strbuf_str(struct strbuf *b, const char *s)
{
    strbuf_add(b, s, strlen(s));
}

#endif /* BC_TESTS_STRBUF_H */
