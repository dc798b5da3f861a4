/*
 * bc_buf.h - a growable byte buffer (private to bloomcrawl, not installed).
 *
 * The one buffer of the project: a tokenizer's tag, a response's head,
 * a page's links, a WARC record's head, a worker's outbox lines are
 * appended into a struct bc_buf that grows by doubling up to a cap the
 * owner chooses, so that no input can make it grow without bound (the
 * allocation never exceeds max bytes and the NUL, so neither does
 * bc_buf_room()). The bytes are always followed by a NUL (not counted in
 * len), so the contents can be read as a C string when they hold none.
 *
 *     struct bc_buf b;
 *     bc_buf_init(&b, 64 * 1024);        // at most 64 KiB
 *     if (bc_buf_append(&b, p, n) != BC_OK) ...  // NOMEM or TOO_LARGE
 *     use(b.data, b.len);
 *     bc_buf_free(&b);
 *
 * A failed call leaves the buffer as it was.
 */
#ifndef BC_COMMON_BUF_H
#define BC_COMMON_BUF_H

#include <stddef.h>

#include "bloomcrawl/status.h"

struct bc_buf {
    char *data; /* len bytes and a NUL; NULL before the first append */
    size_t len; /* bytes held */
    size_t cap; /* bytes allocated (len + 1 <= cap once allocated) */
    size_t max; /* most bytes it may hold (SIZE_MAX - 1: no cap of its own) */
};

/* An empty buffer that will hold at most max bytes (0: no cap). */
void bc_buf_init(struct bc_buf *b, size_t max);

/* Release the memory; the buffer is empty and may be used again. */
void bc_buf_free(struct bc_buf *b);

/* Drop the contents, keep the memory. */
void bc_buf_clear(struct bc_buf *b);

/* Make room for n more bytes. BC_ERR_TOO_LARGE past max, BC_ERR_NOMEM. */
enum bc_status bc_buf_reserve(struct bc_buf *b, size_t n);

/* Bytes that can be appended without growing (0 before the first
 * append). Inline, for hot paths that append in place: check the room,
 * write at data + len, then bc_buf_truncate() to the new length. */
static inline size_t bc_buf_room(const struct bc_buf *b)
{
    return b->cap - b->len - (b->cap != 0); /* cap 0: len 0, room 0 */
}

/* Set the length to len (at most len + room: bytes written in place, or
 * fewer to drop a tail) and put the NUL after it. */
static inline void bc_buf_truncate(struct bc_buf *b, size_t len)
{
    b->len = len;
    if (b->data)
        b->data[len] = '\0';
}

/* Append n bytes (p may be NULL when n is 0). */
enum bc_status bc_buf_append(struct bc_buf *b, const void *p, size_t n);

/* Append one byte. */
enum bc_status bc_buf_putc(struct bc_buf *b, char c);

/* Append the NUL-terminated s. */
enum bc_status bc_buf_puts(struct bc_buf *b, const char *s);

/* Append printf-formatted text. */
enum bc_status bc_buf_printf(struct bc_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Take the memory: *out gets data (NUL-terminated, the caller frees it
 * with free()), *len its length; the buffer is left empty. An empty buffer
 * gives a fresh "" (BC_ERR_NOMEM if that fails). */
enum bc_status bc_buf_detach(struct bc_buf *b, char **out, size_t *len);

#endif /* BC_COMMON_BUF_H */
