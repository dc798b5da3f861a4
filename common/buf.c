/*
 * buf.c - the growable byte buffer of bc_buf.h.
 *
 * Growth doubles the allocation (amortized O(1) per appended byte) and
 * stops at the owner's cap: past it an append fails with BC_ERR_TOO_LARGE
 * and the buffer keeps what it had.
 */
#include "bc_buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bc_buf_init(struct bc_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max == 0 || max > SIZE_MAX - 1 ? SIZE_MAX - 1 : max;
}

void bc_buf_free(struct bc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void bc_buf_clear(struct bc_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

enum bc_status bc_buf_reserve(struct bc_buf *b, size_t n)
{
    if (n > b->max - b->len)
        return BC_ERR_TOO_LARGE;
    size_t need = b->len + n + 1; /* and the NUL */
    if (need <= b->cap)
        return BC_OK;
    size_t cap = b->cap ? b->cap : 64;
    if (cap > b->max + 1) /* never more than max bytes and the NUL */
        cap = b->max + 1;
    while (cap < need)
        cap = cap > (b->max + 1) / 2 ? b->max + 1 : cap * 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return BC_ERR_NOMEM;
    if (!b->data)
        p[0] = '\0';
    b->data = p;
    b->cap = cap;
    return BC_OK;
}

enum bc_status bc_buf_append(struct bc_buf *b, const void *p, size_t n)
{
    enum bc_status st = bc_buf_reserve(b, n);
    if (st != BC_OK)
        return st;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return BC_OK;
}

enum bc_status bc_buf_putc(struct bc_buf *b, char c)
{
    return bc_buf_append(b, &c, 1);
}

enum bc_status bc_buf_puts(struct bc_buf *b, const char *s)
{
    return bc_buf_append(b, s, strlen(s));
}

enum bc_status bc_buf_printf(struct bc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = bc_buf_reserve(b, (size_t)n);
    if (st != BC_OK)
        return st;
    va_start(ap, fmt);
    (void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return BC_OK;
}

enum bc_status bc_buf_detach(struct bc_buf *b, char **out, size_t *len)
{
    if (!b->data) {
        char *empty = malloc(1);
        if (!empty)
            return BC_ERR_NOMEM;
        empty[0] = '\0';
        *out = empty;
        *len = 0;
        return BC_OK;
    }
    *out = b->data;
    *len = b->len;
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    return BC_OK;
}
