/*
 * bench_scale.c - how the seen-test's time and memory grow with n, beside
 * an exact hash set of the same URLs, and the billion-URL run.
 *
 *   bench_scale [--sizes N,N,...] [--exact-max N] [--runs R]
 *               [--structures bloom,seen,exact] [--calls scalar,batch]
 *               [--layout classic|blocked] [--cpu-time] [--csv FILE]
 *   bench_scale --pairs R [--sizes N,N,...] [--layout classic|blocked]
 *               [--cpu-time] [--csv FILE]
 *   bench_scale --billion [--layout classic|blocked] [--n N] [--fresh N]
 *               [--csv FILE]
 *
 * Default mode: for each n (default 10^6, 10^7, 10^8):
 *   - the Bloom filter alone (tier 1), sized for n at p = 1 %
 *     (bc_bloom_create), classic and blocked, scalar and batch calls, keys
 *     from URL strings (XXH3 inside the timed region) and prehashed (the
 *     hash computed outside it): ns per test-and-add of n new URLs, ns per
 *     contains of n URLs never added, the measured false-positive rate and
 *     the filter's bytes per URL;
 *   - the two-tier seen-test as a crawler uses it (bc_seen: the same
 *     filter plus the default LRU of 50,000 URLs), structures seen-classic
 *     and seen-blocked, scalar and batch bc_seen_test_and_add of n new URL
 *     strings; ns per lookup is bc_seen_peek() of n URLs never added (a
 *     scalar call; the batch row leaves it empty), measured rate = the
 *     fraction of those not answered NEW; bytes = the filter plus the
 *     LRU (its slab of fingerprints and its buckets, bc_lru_stats);
 *   - for n up to --exact-max (default 10^7), an exact uthash set of the
 *     same URL strings: ns per insert, ns per lookup (absent) and bytes per
 *     URL from mallinfo2() (entries, key copies and the bucket array).
 * --structures picks which of the three run, --calls which kinds of call
 * (default: all; the exact set's calls are scalar), --layout only the
 * filters and seen-tests of one layout (default: both). --cpu-time times
 * with the process's CPU clock instead of the wall clock: on a shared,
 * loaded machine a preempted run's wall clock runs on, its CPU clock does
 * not (other processes' use of the shared caches still shows). At n = 10^9 the
 * scalar rows take ~40 minutes - every probe waits for DRAM - so
 * scripts/bench.sh runs them as a step of their own.
 * URLs are generated in chunks outside the timed region; each number is
 * the median of R runs (R = 3 by default, 1 at n >= 10^8 to keep the run
 * short).
 *
 * --pairs R: the seen-test against its own filter, paired: for each n and
 * layout, R rounds of one batch pass of the filter alone and one of the
 * seen-test (each new, of the same seed; the URL strings hashed inside
 * the timed region, as in the rows above), the two in alternating order
 * from round to round, and the ratio of the two times taken per round.
 * Reports the medians of the two times and of the rounds' ratios, and
 * the ratios' range. A round's two passes are seconds apart and see the
 * same machine, where the default mode's rows of the two structures are
 * minutes apart: on the shared machine of issue 25 their ratio moved
 * from 2.2x to 2.6x between runs, the paired median by less
 * (bench/results/scale-lru.md).
 *
 * --billion: insert 10^9 (--n) distinct generated URL strings into one
 * seen-test sized for n = 10^9, p = 1 % (the layout given, classic by
 * default; the default LRU of 50,000 URLs) with bc_seen_test_and_add_batch
 * in chunks of 8,192; then measure the false-positive rate over 10^7
 * (--fresh) URLs never added with bc_seen_peek (a fresh URL is never in
 * the LRU, so every answer other than NEW is a Bloom false positive).
 * Reports wall time (generation included), time in the seen-test, URLs/s,
 * the verdicts, the filter's bytes, the fill, the predicted and measured
 * rates and the peak RSS of the process (getrusage).
 *
 * CSV columns (default mode): n,structure,calls,keys,ns_insert,
 * ns_lookup_absent,measured_fpr,bytes,bytes_per_url,runs (an empty field:
 * not measured). --billion: layout,n,k,bytes,wall_s,urls_per_s_wall,
 * seen_s,ns_per_url_seen,peak_rss_bytes,fill,predicted_fpr,fresh,
 * measured_fpr,verdict_new,probably_seen,duplicate,lru_evictions.
 * --pairs: n,layout,rounds,filter_ns,seen_ns,ratio,ratio_min,ratio_max.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <uthash.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/seen.h"

#define CHUNK   8192
#define URL_MAX 96

/* CLOCK_PROCESS_CPUTIME_ID with --cpu-time (default mode only). */
static clockid_t timing_clock = CLOCK_MONOTONIC;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(timing_clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int count)
{
    qsort(v, (size_t)count, sizeof(*v), cmp_double);
    return count % 2 ? v[count / 2] : (v[count / 2 - 1] + v[count / 2]) / 2;
}

/* Append the decimal digits of v at p; returns the new end. */
static char *put_u64(char *p, uint64_t v)
{
    char tmp[24];
    int len = 0;
    do {
        tmp[len++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (len)
        *p++ = tmp[--len];
    return p;
}

static char *put_str(char *p, const char *s)
{
    size_t len = strlen(s);
    memcpy(p, s, len);
    return p + len;
}

/*
 * The i-th URL of a family, as bench_dedup makes them (~65-80 bytes, 10^5
 * hosts):
 * https://www.host<h>.example.com/f<family>/section-<s>/article-<i>.html
 * Distinct for distinct (i, family). Formatted by hand: snprintf would
 * dominate the billion run.
 */
static size_t make_url(char *buf, uint64_t i, unsigned family)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15u;
    char *p = put_str(buf, "https://www.host");
    p = put_u64(p, x % 100003);
    p = put_str(p, ".example.com/f");
    p = put_u64(p, family);
    p = put_str(p, "/section-");
    p = put_u64(p, (x >> 20) % 1000);
    p = put_str(p, "/article-");
    p = put_u64(p, i);
    p = put_str(p, ".html");
    return (size_t)(p - buf);
}

struct url_chunk {
    char text[CHUNK][URL_MAX];
    size_t len[CHUNK];
};

static struct url_chunk urls;
static struct bc_hash128 hashes[CHUNK];
static bool answers[CHUNK];
static const char *keys_of[CHUNK]; /* keys_of[j] = urls.text[j] */

static void fill_urls(uint64_t start, size_t count, unsigned family)
{
    for (size_t j = 0; j < count; j++) {
        urls.len[j] = make_url(urls.text[j], start + j, family);
        keys_of[j] = urls.text[j];
    }
}

static const char *layout_name(enum bc_bloom_layout l)
{
    return l == BC_BLOOM_CLASSIC ? "classic" : "blocked";
}

enum op { OP_TEST_AND_ADD, OP_CONTAINS };

/*
 * One pass of one op over n URLs of a family; returns ns per URL. Strings:
 * the hash is inside the timed region; prehashed: outside it.
 */
static double timed_pass(struct bc_bloom *b, bool batch, bool prehashed,
                         enum op op, uint64_t n, unsigned family,
                         uint64_t *count_true)
{
    double total = 0.0;
    uint64_t trues = 0;
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        fill_urls(start, count, family);
        if (prehashed)
            for (size_t j = 0; j < count; j++)
                hashes[j] = bc_bloom_hash(b, urls.text[j], urls.len[j]);
        double t0 = now_ns();
        if (!prehashed && batch)
            for (size_t j = 0; j < count; j++)
                hashes[j] = bc_bloom_hash(b, urls.text[j], urls.len[j]);
        if (batch) {
            if (op == OP_TEST_AND_ADD)
                bc_bloom_test_and_add_batch(b, hashes, count, answers);
            else
                bc_bloom_contains_batch(b, hashes, count, answers);
        } else if (prehashed) {
            if (op == OP_TEST_AND_ADD)
                for (size_t j = 0; j < count; j++)
                    answers[j] = bc_bloom_test_and_add_hash(b, hashes[j]);
            else
                for (size_t j = 0; j < count; j++)
                    answers[j] = bc_bloom_contains_hash(b, hashes[j]);
        } else {
            if (op == OP_TEST_AND_ADD)
                for (size_t j = 0; j < count; j++)
                    answers[j] =
                        bc_bloom_test_and_add(b, urls.text[j], urls.len[j]);
            else
                for (size_t j = 0; j < count; j++)
                    answers[j] =
                        bc_bloom_contains(b, urls.text[j], urls.len[j]);
        }
        total += now_ns() - t0;
        for (size_t j = 0; j < count; j++)
            trues += answers[j];
    }
    *count_true = trues;
    return total / (double)n;
}

static FILE *csv;

/* One result row, Markdown on stdout and CSV; a NAN is "not measured". */
static void row(uint64_t n, const char *structure, const char *calls,
                const char *keys, double ns_ins, double ns_look, double fpr,
                double bytes, int runs)
{
    char look[32] = "-", look_csv[32] = "", rate[32] = "-", rate_csv[32] = "";
    if (!isnan(ns_look)) {
        snprintf(look, sizeof(look), "%.1f", ns_look);
        snprintf(look_csv, sizeof(look_csv), "%.2f", ns_look);
    }
    if (!isnan(fpr)) {
        snprintf(rate, sizeof(rate), "%.4f %%", 100.0 * fpr);
        snprintf(rate_csv, sizeof(rate_csv), "%.6f", fpr);
    }
    printf("| %llu | %s | %s | %s | %.1f | %s | %s | %.0f | %.2f |\n",
           (unsigned long long)n, structure, calls, keys, ns_ins, look, rate,
           bytes, bytes / (double)n);
    fflush(stdout);
    if (csv) {
        fprintf(csv, "%llu,%s,%s,%s,%.2f,%s,%s,%.0f,%.4f,%d\n",
                (unsigned long long)n, structure, calls, keys, ns_ins, look_csv,
                rate_csv, bytes, bytes / (double)n, runs);
        fflush(csv);
    }
}

/* The layouts the default mode runs (--layout). */
static bool run_classic = true, run_blocked = true;

static void bench_filters(uint64_t n, int runs, bool run_scalar, bool run_batch)
{
    for (int li = 0; li < 2; li++) {
        enum bc_bloom_layout layout = li ? BC_BLOOM_BLOCKED : BC_BLOOM_CLASSIC;
        if (li ? !run_blocked : !run_classic)
            continue;
        for (int v = 0; v < 4; v++) {
            bool batch = v & 1, prehashed = v >= 2;
            if (batch ? !run_batch : !run_scalar)
                continue;
            double ins[16], look[16], fpr = 0.0, bytes = 0.0;
            for (int r = 0; r < runs; r++) {
                struct bc_bloom *b;
                if (bc_bloom_create(n, 0.01, layout, (uint64_t)r + 1, 0, &b) !=
                    BC_OK) {
                    fprintf(stderr, "bench_scale: cannot allocate\n");
                    exit(1);
                }
                uint64_t news, present;
                ins[r] = timed_pass(b, batch, prehashed, OP_TEST_AND_ADD, n, 1,
                                    &news);
                look[r] = timed_pass(b, batch, prehashed, OP_CONTAINS, n, 2,
                                     &present);
                fpr = (double)present / (double)n;
                struct bc_bloom_stats st;
                bc_bloom_stats(b, &st);
                bytes = (double)st.bytes;
                bc_bloom_free(b);
            }
            row(n, layout_name(layout), batch ? "batch" : "scalar",
                prehashed ? "prehashed" : "strings", median(ins, runs),
                median(look, runs), fpr, bytes, runs);
        }
    }
}

/* ---- the two-tier seen-test (Bloom filter + LRU) ----------------------- */

static enum bc_seen_verdict verdicts[CHUNK];

static struct bc_seen *seen_create(uint64_t n, enum bc_bloom_layout layout,
                                   uint64_t seed)
{
    struct bc_seen_config cfg;
    bc_seen_config_init(&cfg);
    cfg.expected = n;
    cfg.fp_rate = 0.01;
    cfg.kind = layout == BC_BLOOM_CLASSIC ? BC_SEEN_BLOOM_CLASSIC
                                          : BC_SEEN_BLOOM_BLOCKED;
    cfg.seed = seed;
    struct bc_seen *seen;
    enum bc_status st = bc_seen_create(&cfg, &seen);
    if (st != BC_OK) {
        fprintf(stderr, "bench_scale: seen-test: %s\n", bc_strerror(st));
        exit(1);
    }
    return seen;
}

/* bc_seen_test_and_add of n new URLs of a family; ns per URL. */
static double seen_insert_pass(struct bc_seen *seen, bool batch, uint64_t n,
                               unsigned family)
{
    double total = 0.0;
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        fill_urls(start, count, family);
        double t0 = now_ns();
        if (batch)
            bc_seen_test_and_add_batch(seen, keys_of, urls.len, count,
                                       verdicts);
        else
            for (size_t j = 0; j < count; j++)
                bc_seen_test_and_add(seen, urls.text[j], urls.len[j],
                                     &verdicts[j]);
        total += now_ns() - t0;
    }
    return total / (double)n;
}

/* bc_seen_peek of n URLs of a family never added; ns per URL, and the
 * count of answers other than NEW in *not_new. */
static double seen_peek_pass(const struct bc_seen *seen, uint64_t n,
                             unsigned family, uint64_t *not_new)
{
    double total = 0.0;
    uint64_t count_not_new = 0;
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        fill_urls(start, count, family);
        double t0 = now_ns();
        for (size_t j = 0; j < count; j++)
            (void)bc_seen_peek(seen, urls.text[j], urls.len[j], &verdicts[j]);
        total += now_ns() - t0;
        for (size_t j = 0; j < count; j++)
            count_not_new += verdicts[j] != BC_SEEN_NEW;
    }
    *not_new = count_not_new;
    return total / (double)n;
}

static void bench_seen(uint64_t n, int runs, bool run_scalar, bool run_batch)
{
    for (int li = 0; li < 2; li++) {
        enum bc_bloom_layout layout = li ? BC_BLOOM_BLOCKED : BC_BLOOM_CLASSIC;
        if (li ? !run_blocked : !run_classic)
            continue;
        for (int batch = 0; batch < 2; batch++) {
            if (batch ? !run_batch : !run_scalar)
                continue;
            double ins[16], look[16], fpr = NAN, bytes = 0.0;
            for (int r = 0; r < runs; r++) {
                struct bc_seen *seen = seen_create(n, layout, (uint64_t)r + 1);
                ins[r] = seen_insert_pass(seen, batch, n, 1);
                look[r] = NAN;
                if (!batch) {
                    uint64_t not_new;
                    look[r] = seen_peek_pass(seen, n, 2, &not_new);
                    fpr = (double)not_new / (double)n;
                }
                struct bc_seen_stats st;
                bc_seen_stats(seen, &st);
                /* The filter's array plus the LRU's slab and buckets, as
                 * the two count them (bc_bloom_stats, bc_lru_stats): the
                 * LRU's big blocks are mmap'ed, which mallinfo2 does not
                 * see. The handles' few hundred bytes are left out. */
                bytes = (double)st.bloom.bytes + (double)st.lru.bytes;
                bc_seen_free(seen);
            }
            row(n, li ? "seen-blocked" : "seen-classic",
                batch ? "batch" : "scalar", "strings", median(ins, runs),
                batch ? NAN : median(look, runs), fpr, bytes, runs);
        }
    }
}

/* ---- the exact baseline: a uthash set of the URL strings -------------- */

struct exact_entry {
    UT_hash_handle hh;
    size_t len;
    char key[];
};

/* --pairs: the filter's and the seen-test's batch passes, paired. */
static void bench_pairs(uint64_t n, int rounds)
{
    for (int li = 0; li < 2; li++) {
        enum bc_bloom_layout layout = li ? BC_BLOOM_BLOCKED : BC_BLOOM_CLASSIC;
        if (li ? !run_blocked : !run_classic)
            continue;
        double filter_ns[16], seen_ns[16], ratio[16];
        for (int r = 0; r < rounds; r++) {
            for (int turn = 0; turn < 2; turn++) {
                /* Round r runs the filter first when r is even. */
                if ((turn == 0) == (r % 2 == 0)) {
                    struct bc_bloom *b;
                    if (bc_bloom_create(n, 0.01, layout, (uint64_t)r + 1, 0,
                                        &b) != BC_OK) {
                        fprintf(stderr, "bench_scale: cannot allocate\n");
                        exit(1);
                    }
                    uint64_t news;
                    filter_ns[r] = timed_pass(b, true, false, OP_TEST_AND_ADD,
                                              n, 1, &news);
                    bc_bloom_free(b);
                } else {
                    struct bc_seen *seen =
                        seen_create(n, layout, (uint64_t)r + 1);
                    seen_ns[r] = seen_insert_pass(seen, true, n, 1);
                    bc_seen_free(seen);
                }
            }
            ratio[r] = seen_ns[r] / filter_ns[r];
        }
        double lo = ratio[0], hi = ratio[0];
        for (int r = 1; r < rounds; r++) {
            lo = ratio[r] < lo ? ratio[r] : lo;
            hi = ratio[r] > hi ? ratio[r] : hi;
        }
        double f = median(filter_ns, rounds), sn = median(seen_ns, rounds),
               q = median(ratio, rounds);
        printf("| %llu | %s | %d | %.1f | %.1f | %.2fx | %.2fx-%.2fx |\n",
               (unsigned long long)n, layout_name(layout), rounds, f, sn, q, lo,
               hi);
        fflush(stdout);
        if (csv) {
            fprintf(csv, "%llu,%s,%d,%.2f,%.2f,%.4f,%.4f,%.4f\n",
                    (unsigned long long)n, layout_name(layout), rounds, f, sn,
                    q, lo, hi);
            fflush(csv);
        }
    }
}

static void bench_exact(uint64_t n, int runs)
{
    double ins[16], look[16], bytes = 0.0;
    for (int r = 0; r < runs; r++) {
        struct exact_entry *set = NULL;
        size_t before = mallinfo2().uordblks;
        double t_add = 0, t_find = 0;
        uint64_t found = 0;
        for (uint64_t start = 0; start < n; start += CHUNK) {
            size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
            fill_urls(start, count, 1);
            double t0 = now_ns();
            for (size_t j = 0; j < count; j++) {
                struct exact_entry *e;
                HASH_FIND(hh, set, urls.text[j], urls.len[j], e);
                if (e)
                    continue;
                e = malloc(sizeof(*e) + urls.len[j]);
                if (!e) {
                    fprintf(stderr, "bench_scale: out of memory\n");
                    exit(1);
                }
                e->len = urls.len[j];
                memcpy(e->key, urls.text[j], urls.len[j]);
                HASH_ADD_KEYPTR(hh, set, e->key, e->len, e);
            }
            t_add += now_ns() - t0;
        }
        bytes = (double)(mallinfo2().uordblks - before);
        for (uint64_t start = 0; start < n; start += CHUNK) {
            size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
            fill_urls(start, count, 2);
            double t0 = now_ns();
            for (size_t j = 0; j < count; j++) {
                struct exact_entry *e;
                HASH_FIND(hh, set, urls.text[j], urls.len[j], e);
                found += e != NULL;
            }
            t_find += now_ns() - t0;
        }
        if (found) {
            fprintf(stderr, "bench_scale: exact set found an absent URL\n");
            exit(1);
        }
        struct exact_entry *e, *tmp;
        HASH_ITER(hh, set, e, tmp)
        {
            HASH_DEL(set, e);
            free(e);
        }
        ins[r] = t_add / (double)n;
        look[r] = t_find / (double)n;
    }
    row(n, "exact-uthash", "scalar", "strings", median(ins, runs),
        median(look, runs), 0.0, bytes, runs);
}

/* ---- the billion-URL run ---------------------------------------------- */

static double peak_rss_bytes(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss * 1024.0; /* Linux: kilobytes */
}

static int billion_run(enum bc_bloom_layout layout, uint64_t n, uint64_t fresh)
{
    double t_start = now_ns();
    struct bc_seen *seen = seen_create(n, layout, 42);
    struct bc_seen_stats ss;
    bc_seen_stats(seen, &ss);
    printf("## billion run: the seen-test, %s layout, n = %llu, p = 1 %%: "
           "m = %llu bits, k = %u, %llu bytes (%.4f GB, %.4f GiB); LRU of "
           "%zu URLs\n",
           layout_name(layout), (unsigned long long)n,
           (unsigned long long)ss.bloom.m_bits, ss.bloom.k,
           (unsigned long long)ss.bloom.bytes, (double)ss.bloom.bytes / 1e9,
           (double)ss.bloom.bytes / 1073741824.0, ss.lru.capacity);
    fflush(stdout);
    double t_seen = 0.0;
    uint64_t report_every = n / 10 > CHUNK ? n / 10 : CHUNK, next_report;
    next_report = report_every;
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        fill_urls(start, count, 1);
        double t0 = now_ns();
        bc_seen_test_and_add_batch(seen, keys_of, urls.len, count, verdicts);
        t_seen += now_ns() - t0;
        if (start + count >= next_report) {
            printf("  %llu URLs, %.0f s\n", (unsigned long long)(start + count),
                   (now_ns() - t_start) / 1e9);
            fflush(stdout);
            next_report += report_every;
        }
    }
    double t_insert_wall = now_ns() - t_start;
    bc_seen_stats(seen, &ss);
    uint64_t not_new;
    double t_fpr0 = now_ns();
    seen_peek_pass(seen, fresh, 2, &not_new);
    double t_fpr = now_ns() - t_fpr0;
    double fpr = (double)not_new / (double)fresh;
    double rss = peak_rss_bytes();
    const struct bc_bloom_stats *bs = &ss.bloom;
    printf("| field | value |\n|---|---:|\n");
    printf("| layout | %s |\n", layout_name(layout));
    printf("| URLs inserted | %llu |\n", (unsigned long long)n);
    printf("| verdicts | NEW %llu (false positives caught %llu), DUPLICATE "
           "%llu, PROBABLY_SEEN %llu (Bloom false positives once the LRU "
           "evicted) |\n",
           (unsigned long long)ss.verdict_new, (unsigned long long)ss.fp_caught,
           (unsigned long long)ss.duplicate,
           (unsigned long long)ss.probably_seen);
    printf("| LRU | %zu URLs, %llu evictions |\n", ss.lru.count,
           (unsigned long long)ss.lru.evictions);
    printf("| filter bytes | %llu (%.4f GB) |\n", (unsigned long long)bs->bytes,
           (double)bs->bytes / 1e9);
    printf("| k | %u |\n", bs->k);
    printf("| wall time, insert (generation included) | %.1f s |\n",
           t_insert_wall / 1e9);
    printf("| URLs/s, wall | %.3g |\n", (double)n / (t_insert_wall / 1e9));
    printf("| time in the seen-test (hash, Bloom, LRU) | %.1f s (%.1f "
           "ns/URL) |\n",
           t_seen / 1e9, t_seen / (double)n);
    printf("| URLs/s, seen-test only | %.3g |\n", (double)n / (t_seen / 1e9));
    printf("| peak RSS | %.0f bytes (%.4f GB) |\n", rss, rss / 1e9);
    printf("| fill | %.4f |\n", bs->fill);
    printf("| predicted FPR | %.5f %% |\n", 100.0 * bs->fpr_predicted);
    printf("| measured FPR over %llu fresh URLs | %.5f %% (%llu) |\n",
           (unsigned long long)fresh, 100.0 * fpr, (unsigned long long)not_new);
    printf("| FPR measurement time (bc_seen_peek) | %.1f s |\n", t_fpr / 1e9);
    if (csv) {
        fprintf(csv, "layout,n,k,bytes,wall_s,urls_per_s_wall,seen_s,"
                     "ns_per_url_seen,peak_rss_bytes,fill,predicted_fpr,"
                     "fresh,measured_fpr,verdict_new,probably_seen,"
                     "duplicate,lru_evictions\n");
        fprintf(csv,
                "%s,%llu,%u,%llu,%.2f,%.0f,%.2f,%.2f,%.0f,%.6f,%.6f,"
                "%llu,%.6f,%llu,%llu,%llu,%llu\n",
                layout_name(layout), (unsigned long long)n, bs->k,
                (unsigned long long)bs->bytes, t_insert_wall / 1e9,
                (double)n / (t_insert_wall / 1e9), t_seen / 1e9,
                t_seen / (double)n, rss, bs->fill, bs->fpr_predicted,
                (unsigned long long)fresh, fpr,
                (unsigned long long)ss.verdict_new,
                (unsigned long long)ss.probably_seen,
                (unsigned long long)ss.duplicate,
                (unsigned long long)ss.lru.evictions);
    }
    bc_seen_free(seen);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_scale [--sizes N,N,...] [--exact-max N] "
                    "[--runs R] [--structures bloom,seen,exact] "
                    "[--calls scalar,batch] [--layout classic|blocked] "
                    "[--cpu-time] [--csv FILE]\n"
                    "       bench_scale --pairs R [--sizes N,N,...] "
                    "[--layout classic|blocked] [--cpu-time] [--csv FILE]\n"
                    "       bench_scale --billion [--layout classic|blocked] "
                    "[--n N] [--fresh N] [--csv FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t sizes[8] = {1000000, 10000000, 100000000};
    int nsizes = 3, runs = 3, pairs = 0;
    uint64_t exact_max = 10000000, big_n = 1000000000, fresh = 10000000;
    bool billion = false, run_bloom = true, run_seen = true, run_exact = true;
    bool run_scalar = true, run_batch = true;
    enum bc_bloom_layout layout = BC_BLOOM_CLASSIC;
    bool layout_given = false, cpu_time = false;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            char *s = argv[++i];
            nsizes = 0;
            while (*s && nsizes < 8) {
                sizes[nsizes++] = strtoull(s, &s, 10);
                if (*s == ',')
                    s++;
            }
        } else if (strcmp(argv[i], "--exact-max") == 0 && i + 1 < argc)
            exact_max = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc) {
            pairs = atoi(argv[++i]);
            if (pairs < 1 || pairs > 16)
                return usage();
        } else if (strcmp(argv[i], "--structures") == 0 && i + 1 < argc) {
            const char *list = argv[++i];
            run_bloom = strstr(list, "bloom") != NULL;
            run_seen = strstr(list, "seen") != NULL;
            run_exact = strstr(list, "exact") != NULL;
            if (!run_bloom && !run_seen && !run_exact)
                return usage();
        } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            const char *list = argv[++i];
            run_scalar = strstr(list, "scalar") != NULL;
            run_batch = strstr(list, "batch") != NULL;
            if (!run_scalar && !run_batch)
                return usage();
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else if (strcmp(argv[i], "--billion") == 0)
            billion = true;
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            big_n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--cpu-time") == 0)
            cpu_time = true;
        else if (strcmp(argv[i], "--fresh") == 0 && i + 1 < argc)
            fresh = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--layout") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "classic") == 0)
                layout = BC_BLOOM_CLASSIC;
            else if (strcmp(argv[i], "blocked") == 0)
                layout = BC_BLOOM_BLOCKED;
            else
                return usage();
            layout_given = true;
        } else
            return usage();
    }
    if (cpu_time && !billion)
        timing_clock = CLOCK_PROCESS_CPUTIME_ID;
    if (layout_given) {
        run_classic = layout == BC_BLOOM_CLASSIC;
        run_blocked = layout == BC_BLOOM_BLOCKED;
    }
    if (runs < 1 || runs > 16 || big_n == 0 || fresh == 0)
        return usage();
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            perror(csv_path);
            return 1;
        }
    }
    if (billion) {
        int rc = billion_run(layout, big_n, fresh);
        if (csv)
            fclose(csv);
        return rc;
    }
    if (pairs) {
        if (csv)
            fprintf(csv, "n,layout,rounds,filter_ns,seen_ns,ratio,ratio_min,"
                         "ratio_max\n");
        printf("## bench_scale --pairs: the seen-test's batch against its "
               "filter's, paired rounds, p = 1 %%\n\n");
        printf("| n | layout | rounds | filter ns/insert | seen-test "
               "ns/insert | seen-test / filter | range |\n");
        printf("|---:|---|---:|---:|---:|---:|---|\n");
        for (int s = 0; s < nsizes; s++)
            bench_pairs(sizes[s], pairs);
        if (csv)
            fclose(csv);
        return 0;
    }
    if (csv)
        fprintf(csv, "n,structure,calls,keys,ns_insert,ns_lookup_absent,"
                     "measured_fpr,bytes,bytes_per_url,runs\n");
    printf("## bench_scale: seen-test time and memory against n, p = 1 %%\n\n");
    printf("| n | structure | calls | keys | ns/insert | ns/lookup (absent) "
           "| measured FPR | bytes | bytes/URL |\n");
    printf("|---:|---|---|---|---:|---:|---:|---:|---:|\n");
    for (int s = 0; s < nsizes; s++) {
        uint64_t n = sizes[s];
        int r = n >= 100000000 ? 1 : runs;
        if (run_bloom)
            bench_filters(n, r, run_scalar, run_batch);
        if (run_seen)
            bench_seen(n, r, run_scalar, run_batch);
        if (run_exact && n <= exact_max)
            bench_exact(n, r);
    }
    if (csv)
        fclose(csv);
    return 0;
}
