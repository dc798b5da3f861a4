/*
 * bench_scale.c - how the seen-test's time and memory grow with n, beside
 * an exact hash set of the same URLs, and the billion-URL run.
 *
 *   bench_scale [--sizes N,N,...] [--exact-max N] [--runs R] [--csv FILE]
 *   bench_scale --billion [--layout classic|blocked] [--csv FILE]
 *
 * Default mode: for each n (default 10^6, 10^7, 10^8), a Bloom filter
 * sized for n at p = 1 % (bc_bloom_create), classic and blocked, scalar and
 * batch calls, keys from URL strings (XXH3 inside the timed region) and
 * prehashed (the hash computed outside it): ns per test-and-add of n new
 * URLs, ns per contains of n URLs never added, the measured false-positive
 * rate and the filter's bytes per URL. Beside them, for n up to
 * --exact-max (default 10^7), an exact uthash set of the same URL strings:
 * ns per insert, ns per lookup (absent) and bytes per URL from mallinfo2()
 * (entries, key copies and the bucket array). URLs are generated in chunks
 * outside the timed region; each number is the median of R runs (R = 3
 * by default, 1 at n >= 10^8 to keep the run short).
 *
 * --billion: insert 10^9 distinct generated URL strings into one Bloom
 * filter sized for n = 10^9, p = 1 % (bc_bloom_create, the layout given,
 * classic by default), hashing each chunk (bc_bloom_hash) and then calling
 * bc_bloom_test_and_add_batch; then measure the rate over 10^7 fresh URLs
 * with bc_bloom_contains_batch. Reports wall time (generation included),
 * time in the filter (hash + batch call), URLs/s, the filter's bytes and
 * the peak RSS of the process (getrusage).
 *
 * CSV columns: n,structure,calls,keys,ns_insert,ns_lookup_absent,
 * measured_fpr,bytes,bytes_per_url,runs
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <uthash.h>

#include "bloomcrawl/bloom.h"

#define CHUNK   8192
#define URL_MAX 96

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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

static void fill_urls(uint64_t start, size_t count, unsigned family)
{
    for (size_t j = 0; j < count; j++)
        urls.len[j] = make_url(urls.text[j], start + j, family);
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

static void row(uint64_t n, const char *structure, const char *calls,
                const char *keys, double ns_ins, double ns_look, double fpr,
                double bytes, int runs)
{
    printf("| %llu | %s | %s | %s | %.1f | %.1f | %.4f %% | %.0f | %.2f |\n",
           (unsigned long long)n, structure, calls, keys, ns_ins, ns_look,
           100.0 * fpr, bytes, bytes / (double)n);
    fflush(stdout);
    if (csv) {
        fprintf(csv, "%llu,%s,%s,%s,%.2f,%.2f,%.6f,%.0f,%.4f,%d\n",
                (unsigned long long)n, structure, calls, keys, ns_ins, ns_look,
                fpr, bytes, bytes / (double)n, runs);
        fflush(csv);
    }
}

static void bench_filters(uint64_t n, int runs)
{
    for (int li = 0; li < 2; li++) {
        enum bc_bloom_layout layout = li ? BC_BLOOM_BLOCKED : BC_BLOOM_CLASSIC;
        for (int v = 0; v < 4; v++) {
            bool batch = v & 1, prehashed = v >= 2;
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

/* ---- the exact baseline: a uthash set of the URL strings -------------- */

struct exact_entry {
    UT_hash_handle hh;
    size_t len;
    char key[];
};

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
    struct bc_bloom *b;
    double t_start = now_ns();
    enum bc_status st = bc_bloom_create(n, 0.01, layout, 42, 0, &b);
    if (st != BC_OK) {
        fprintf(stderr, "bench_scale: create: %s\n", bc_strerror(st));
        return 1;
    }
    struct bc_bloom_stats bs;
    bc_bloom_stats(b, &bs);
    printf("## billion run: %s layout, n = %llu, p = 1 %%: m = %llu bits, "
           "k = %u, %llu bytes (%.4f GB, %.4f GiB)\n",
           layout_name(layout), (unsigned long long)n,
           (unsigned long long)bs.m_bits, bs.k, (unsigned long long)bs.bytes,
           (double)bs.bytes / 1e9, (double)bs.bytes / 1073741824.0);
    fflush(stdout);
    double t_filter = 0.0;
    uint64_t news = 0;
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        fill_urls(start, count, 1);
        double t0 = now_ns();
        for (size_t j = 0; j < count; j++)
            hashes[j] = bc_bloom_hash(b, urls.text[j], urls.len[j]);
        bc_bloom_test_and_add_batch(b, hashes, count, answers);
        t_filter += now_ns() - t0;
        for (size_t j = 0; j < count; j++)
            news += answers[j];
        if ((start / CHUNK) % 12207 == 0 && start) {
            printf("  %llu URLs, %.0f s\n", (unsigned long long)start,
                   (now_ns() - t_start) / 1e9);
            fflush(stdout);
        }
    }
    double t_insert_wall = now_ns() - t_start;
    uint64_t present = 0;
    double t_fpr0 = now_ns();
    for (uint64_t start = 0; start < fresh; start += CHUNK) {
        size_t count = fresh - start < CHUNK ? (size_t)(fresh - start) : CHUNK;
        fill_urls(start, count, 2);
        for (size_t j = 0; j < count; j++)
            hashes[j] = bc_bloom_hash(b, urls.text[j], urls.len[j]);
        bc_bloom_contains_batch(b, hashes, count, answers);
        for (size_t j = 0; j < count; j++)
            present += answers[j];
    }
    double t_fpr = now_ns() - t_fpr0;
    bc_bloom_stats(b, &bs);
    double fpr = (double)present / (double)fresh;
    double rss = peak_rss_bytes();
    printf("| field | value |\n|---|---:|\n");
    printf("| layout | %s |\n", layout_name(layout));
    printf("| URLs inserted | %llu |\n", (unsigned long long)n);
    printf("| answered new | %llu (%llu false positives on insert) |\n",
           (unsigned long long)news, (unsigned long long)(n - news));
    printf("| filter bytes | %llu (%.4f GB) |\n", (unsigned long long)bs.bytes,
           (double)bs.bytes / 1e9);
    printf("| k | %u |\n", bs.k);
    printf("| wall time, insert (generation included) | %.1f s |\n",
           t_insert_wall / 1e9);
    printf("| URLs/s, wall | %.3g |\n", (double)n / (t_insert_wall / 1e9));
    printf("| time in filter (hash + batch) | %.1f s (%.1f ns/URL) |\n",
           t_filter / 1e9, t_filter / (double)n);
    printf("| URLs/s, filter only | %.3g |\n", (double)n / (t_filter / 1e9));
    printf("| peak RSS | %.0f bytes (%.4f GB) |\n", rss, rss / 1e9);
    printf("| fill | %.4f |\n", bs.fill);
    printf("| predicted FPR | %.5f %% |\n", 100.0 * bs.fpr_predicted);
    printf("| measured FPR over %llu fresh URLs | %.5f %% (%llu) |\n",
           (unsigned long long)fresh, 100.0 * fpr, (unsigned long long)present);
    printf("| FPR measurement time | %.1f s |\n", t_fpr / 1e9);
    if (csv) {
        fprintf(csv, "layout,n,k,bytes,wall_s,urls_per_s_wall,filter_s,"
                     "ns_per_url_filter,peak_rss_bytes,fill,predicted_fpr,"
                     "fresh,measured_fpr\n");
        fprintf(csv,
                "%s,%llu,%u,%llu,%.2f,%.0f,%.2f,%.2f,%.0f,%.6f,%.6f,"
                "%llu,%.6f\n",
                layout_name(layout), (unsigned long long)n, bs.k,
                (unsigned long long)bs.bytes, t_insert_wall / 1e9,
                (double)n / (t_insert_wall / 1e9), t_filter / 1e9,
                t_filter / (double)n, rss, bs.fill, bs.fpr_predicted,
                (unsigned long long)fresh, fpr);
    }
    bc_bloom_free(b);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_scale [--sizes N,N,...] [--exact-max N] "
                    "[--runs R] [--csv FILE]\n"
                    "       bench_scale --billion [--layout classic|blocked] "
                    "[--n N] [--fresh N] [--csv FILE]\n");
    return 2;
}

int main(int argc, char **argv)
{
    uint64_t sizes[8] = {1000000, 10000000, 100000000};
    int nsizes = 3, runs = 3;
    uint64_t exact_max = 10000000, big_n = 1000000000, fresh = 10000000;
    bool billion = false;
    enum bc_bloom_layout layout = BC_BLOOM_CLASSIC;
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
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else if (strcmp(argv[i], "--billion") == 0)
            billion = true;
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            big_n = strtoull(argv[++i], NULL, 10);
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
        } else
            return usage();
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
        bench_filters(n, r);
        if (n <= exact_max)
            bench_exact(n, r);
    }
    if (csv)
        fclose(csv);
    return 0;
}
