/*
 * fuzz_entry.c - libFuzzer target for the lines of a crawl workers' stream
 * entry (bc_workers_parse_line(), crawler/workers/workers.c): what any
 * program with access to the Redis server may write into a worker's
 * inbox.
 *
 * Input: an entry's urls field, lines separated by "\n". Beyond "never
 * crash, leak or trip a sanitizer" it checks what must always hold for a
 * line accepted: the URL is not empty, URL and referrer lie inside the
 * line and hold no TAB or newline, depth and redirects are within their
 * limits; and a round trip: the line written again from what was parsed
 * (as a sender writes it) is parsed to the same fields.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/workers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool inside(const char *p, size_t n, const char *line, size_t len)
{
    return p >= line && p + n <= line + len;
}

static void check_line(const char *line, size_t len)
{
    struct bc_workers_line l;
    if (!bc_workers_parse_line(line, len, &l))
        return;
    if (l.url_len == 0 || !inside(l.url, l.url_len, line, len) ||
        memchr(l.url, '\t', l.url_len) || memchr(l.url, '\n', l.url_len) ||
        l.depth > BC_WORKERS_MAX_DEPTH ||
        l.redirects > BC_WORKERS_MAX_REDIRECTS)
        abort();
    if ((l.referrer == NULL) != (l.referrer_len == 0))
        abort();
    if (l.referrer && (!inside(l.referrer, l.referrer_len, line, len) ||
                       memchr(l.referrer, '\t', l.referrer_len)))
        abort();
    /* Written again as a sender writes it (bytes copied: a URL may hold
     * any byte but TAB and newline, NUL too, for the crawler to refuse). */
    size_t cap = len + 64;
    char *again = malloc(cap);
    if (!again)
        return;
    int head = snprintf(again, cap, "%c\t%u\t%u\t", l.seed ? 's' : 'l', l.depth,
                        l.redirects);
    if (head < 0 || (size_t)head + l.url_len + 1 + l.referrer_len > cap)
        abort();
    size_t n = (size_t)head;
    memcpy(again + n, l.url, l.url_len);
    n += l.url_len;
    again[n++] = '\t';
    if (l.referrer_len)
        memcpy(again + n, l.referrer, l.referrer_len);
    n += l.referrer_len;
    struct bc_workers_line m;
    if (!bc_workers_parse_line(again, n, &m) || m.seed != l.seed ||
        m.depth != l.depth || m.redirects != l.redirects ||
        m.url_len != l.url_len || memcmp(m.url, l.url, l.url_len) != 0 ||
        m.referrer_len != l.referrer_len ||
        (l.referrer_len && memcmp(m.referrer, l.referrer, l.referrer_len)))
        abort();
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    size_t pos = 0;
    while (pos <= size) {
        const char *nl = memchr(s + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (s + pos)) : size - pos;
        check_line(s + pos, len);
        pos += len + 1;
    }
    return 0;
}
