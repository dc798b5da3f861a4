/*
 * bench_urls.h - the synthetic URL stream of the frontier benchmarks
 * (bench_frontier, bench_state): URL i belongs to host i % hosts; every
 * tenth is a repeat of URL i - 7 spelled with an upper-case scheme and host
 * and an explicit default port (the same page, which normalization merges).
 */
#ifndef BC_BENCH_URLS_H
#define BC_BENCH_URLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Write URL i into buf (cap bytes); returns snprintf's length. */
static int make_url(char *buf, size_t cap, uint64_t i, uint64_t hosts)
{
    bool repeat = i % 10 == 9;
    uint64_t id = repeat ? i - 7 : i;
    return snprintf(buf, cap,
                    repeat ? "HTTP://WWW.HOST%llu.EXAMPLE.COM:80/section/%llu/"
                             "page-%llu.html"
                           : "http://www.host%llu.example.com/section/%llu/"
                             "page-%llu.html",
                    (unsigned long long)(id % hosts),
                    (unsigned long long)(id / hosts % 50),
                    (unsigned long long)id);
}

#endif /* BC_BENCH_URLS_H */
