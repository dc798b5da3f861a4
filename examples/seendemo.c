/*
 * seendemo - the two-tier seen-test at work on a synthetic crawl's link
 * stream, for the demo and for learning.
 *
 *   seendemo [--pages N] [--expect N] [--fp-rate P] [--lru N]
 *            [--layout classic|blocked]
 *
 * The stream imitates what a crawler's frontier sees: every page of a site
 * links to the same 30 navigation pages, to its 10 neighbours, and to 5
 * pages drawn at random with a preference for popular ones, so most links
 * are repeats of recent URLs. Each link goes through bc_seen_test_and_add()
 * and the program prints how many links each verdict got, with the LRU's
 * hit rate and the Bloom filter's fill and estimated false-positive rate.
 * Exit status: 0 success, 2 usage error, 1 runtime failure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bloomcrawl/seen.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: seendemo [--pages N] [--expect N] [--fp-rate P] "
               "[--lru N] [--layout classic|blocked]\n"
               "\n"
               "Feed the link stream of a synthetic crawl of N pages (default\n"
               "20000, 45 links per page) through the two-tier seen-test and\n"
               "print the verdict counts. --expect, --fp-rate and --lru size\n"
               "the Bloom filter and the LRU (defaults: pages, 0.01, 50000).\n"
               "--version prints the version.\n"
               "\n"
               "Exit status: 0 success, 2 usage error (unknown option, bad "
               "value),\n"
               "1 runtime failure.\n");
}

/* A small, seeded generator (xorshift64*), so every run is the same. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1du;
}

/* A page popular with probability ~1/rank: the minimum of two draws. */
static uint64_t popular_page(uint64_t *rng, uint64_t pages)
{
    uint64_t a = rng_next(rng) % pages, b = rng_next(rng) % pages;
    uint64_t c = rng_next(rng) % pages;
    uint64_t m = a < b ? a : b;
    return m < c ? m : c;
}

int main(int argc, char **argv)
{
    uint64_t pages = 20000, expect = 0, lru = BC_SEEN_DEFAULT_LRU;
    double fp_rate = BC_SEEN_DEFAULT_FP_RATE;
    enum bc_seen_kind layout = BC_SEEN_BLOOM_BLOCKED;
    const char *fp_text = NULL;
    for (int i = 1; i < argc; i++) {
        char name[16];
        const char *v;
        const char *a = args_option(argv[i], name, sizeof(name), &v);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            args_print_version("seendemo");
            return 0;
        }
        if (strcmp(a, "--pages") && strcmp(a, "--expect") &&
            strcmp(a, "--lru") && strcmp(a, "--fp-rate") &&
            strcmp(a, "--layout")) {
            fprintf(stderr, "seendemo: unknown option %s (see --help)\n", a);
            return 2;
        }
        if (!v && i + 1 < argc)
            v = argv[++i];
        if (!v) {
            fprintf(stderr, "seendemo: %s needs a value\n", a);
            return 2;
        }
        int bad = 0;
        if (!strcmp(a, "--pages"))
            bad = args_count(v, false, &pages) || pages == 0;
        else if (!strcmp(a, "--expect"))
            bad = args_count(v, false, &expect) || expect == 0;
        else if (!strcmp(a, "--lru"))
            bad = args_count(v, true, &lru);
        else if (!strcmp(a, "--fp-rate"))
            bad = args_rate(v, &fp_rate), fp_text = v;
        else if (!strcmp(v, "classic"))
            layout = BC_SEEN_BLOOM_CLASSIC;
        else if (!strcmp(v, "blocked"))
            layout = BC_SEEN_BLOOM_BLOCKED;
        else
            bad = 1;
        if (bad) {
            fprintf(stderr, "seendemo: bad value for %s: %s\n", a, v);
            return 2;
        }
    }

    struct bc_seen_config cfg;
    bc_seen_config_init(&cfg);
    cfg.expected = expect ? expect : pages;
    cfg.fp_rate = fp_rate;
    cfg.kind = layout;
    cfg.lru_capacity = (size_t)lru;
    struct bc_seen *seen;
    enum bc_status st = bc_seen_create(&cfg, &seen);
    if (st == BC_ERR_INVALID_ARG || st == BC_ERR_TOO_LARGE) {
        fprintf(stderr,
                "seendemo: bad value for --expect or --fp-rate: no Bloom "
                "filter for %llu keys at a rate of %s (%s)\n",
                (unsigned long long)cfg.expected, fp_text ? fp_text : "0.01",
                bc_strerror(st));
        return 2;
    }
    if (st != BC_OK) {
        fprintf(stderr, "seendemo: %s\n", bc_strerror(st));
        return 1;
    }

    uint64_t rng = 0x1234567u, links = 0;
    char url[128];
    for (uint64_t page = 0; page < pages; page++) {
        uint64_t targets[45];
        int t = 0;
        for (uint64_t nav = 0; nav < 30; nav++)
            targets[t++] = nav % pages;
        for (uint64_t d = 1; d <= 10; d++)
            targets[t++] = (page + d) % pages;
        while (t < 45)
            targets[t++] = popular_page(&rng, pages);
        for (int j = 0; j < t; j++) {
            int len = snprintf(url, sizeof(url),
                               "https://site%llu.example/page/%llu.html",
                               (unsigned long long)(targets[j] % 7),
                               (unsigned long long)targets[j]);
            enum bc_seen_verdict verdict;
            st = bc_seen_test_and_add(seen, url, (size_t)len, &verdict);
            if (st != BC_OK) {
                fprintf(stderr, "seendemo: %s\n", bc_strerror(st));
                bc_seen_free(seen);
                return 1;
            }
            links++;
        }
    }

    struct bc_seen_stats s;
    bc_seen_stats(seen, &s);
    double lookups = (double)(s.lru.hits + s.lru.misses);
    printf("links tested        %llu (from %llu pages)\n",
           (unsigned long long)s.tested, (unsigned long long)pages);
    printf("  NEW               %llu  (of which false positives caught by "
           "the complete LRU: %llu)\n",
           (unsigned long long)s.verdict_new, (unsigned long long)s.fp_caught);
    printf("  DUPLICATE         %llu\n", (unsigned long long)s.duplicate);
    printf("  PROBABLY_SEEN     %llu\n", (unsigned long long)s.probably_seen);
    printf("LRU                 %zu of %zu entries, hit rate %.1f %%, "
           "%llu evictions, %s\n",
           s.lru.count, s.lru.capacity,
           lookups > 0 ? 100.0 * (double)s.lru.hits / lookups : 0.0,
           (unsigned long long)s.lru.evictions,
           s.lru_complete ? "complete (the seen-test is exact)"
                          : "has evicted (Bloom semantics for old keys)");
    printf("Bloom filter        %s, %llu bits (%.1f KiB), k = %u, fill "
           "%.1f %%, estimated FPR %.3g (target %.3g at n = %llu)\n",
           s.bloom.layout == BC_BLOOM_CLASSIC ? "classic" : "blocked",
           (unsigned long long)s.bloom.m_bits, (double)s.bloom.bytes / 1024.0,
           s.bloom.k, 100.0 * s.bloom.fill, s.bloom.fpr_estimated, fp_rate,
           (unsigned long long)cfg.expected);
    printf("distinct pages      %llu really, %.0f estimated from the fill\n",
           (unsigned long long)pages, s.bloom.n_estimated);
    if (s.verdict_new < pages)
        printf("pages lost          %llu never came out NEW: the filter's "
               "false positives, which the LRU could no longer disprove\n",
               (unsigned long long)(pages - s.verdict_new));
    bc_seen_free(seen);
    return 0;
}
