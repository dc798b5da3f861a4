/*
 * bench_fpr.c - the false-positive rate, measured against predicted, over a
 * sweep of bits per key, for the classic, blocked and counting filters.
 *
 *   bench_fpr [--n N] [--queries Q] [--from B] [--to B] [--step S]
 *             [--seed S] [--csv FILE]
 *
 * For each bits-per-key b (default 4 to 24, step 1) and each layout: a
 * filter of m = b * n bits (counters for the counting filter) created with
 * bc_bloom_create_mk / bc_cbloom_create_mk, with the k that minimizes the
 * predicted rate for that layout:
 *   classic, counting: k = round(b ln 2), at least 1; predicted
 *                      (1 - e^(-k n / m))^k;
 *   blocked:           m rounded up to whole 512-bit blocks, k the one of
 *                      1..BC_BLOOM_MAX_K minimizing bc_bloom_fpr_blocked().
 * n keys are added (default 10^6), then Q keys never added (default 10^7)
 * are queried; measured = false positives / Q. Keys are 8-byte
 * little-endian integers plus a tag byte (as in tests/test_bloom.c): tag 1
 * added, tag 2 never added, so the two sets are disjoint. The hash seed is
 * fixed (--seed), so a run is reproducible.
 *
 * Prints a Markdown table; writes CSV columns bits_per_key,layout,k,m,
 * predicted,measured,false_positives,queries,lower_bound, where
 * lower_bound = 2^-b is the rate no structure of b bits per key can beat
 * (a filter with rate p needs at least log2(1/p) bits per key).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/cbloom.h"

struct key {
    unsigned char bytes[9];
};

static struct key make_key(uint64_t i, unsigned char tag)
{
    struct key k;
    for (int b = 0; b < 8; b++)
        k.bytes[b] = (unsigned char)(i >> (8 * b));
    k.bytes[8] = tag;
    return k;
}

#define LN2 0.693147180559945309417

enum { TAG_ADDED = 1, TAG_NEVER = 2 };
enum kind { KIND_CLASSIC, KIND_BLOCKED, KIND_COUNTING };

static const char *kind_name(enum kind kind)
{
    switch (kind) {
    case KIND_CLASSIC:
        return "classic";
    case KIND_BLOCKED:
        return "blocked";
    case KIND_COUNTING:
        return "counting";
    }
    return "?";
}

/* The blocked k that minimizes the Poisson-mixture rate at (n, m). */
static unsigned best_blocked_k(uint64_t n, uint64_t m)
{
    unsigned best = 1;
    double best_rate = bc_bloom_fpr_blocked((double)n, (double)m, 1);
    for (unsigned k = 2; k <= BC_BLOOM_MAX_K; k++) {
        double r = bc_bloom_fpr_blocked((double)n, (double)m, k);
        if (r < best_rate) {
            best_rate = r;
            best = k;
        }
    }
    return best;
}

static int measure(enum kind kind, unsigned bits, uint64_t n, uint64_t q,
                   uint64_t seed, FILE *csv)
{
    uint64_t m = (uint64_t)bits * n;
    unsigned k;
    double predicted;
    uint64_t fp = 0;
    if (kind == KIND_BLOCKED) {
        m = (m + BC_BLOOM_BLOCK_BITS - 1) / BC_BLOOM_BLOCK_BITS *
            BC_BLOOM_BLOCK_BITS;
        k = best_blocked_k(n, m);
        predicted = bc_bloom_fpr_blocked((double)n, (double)m, k);
    } else {
        k = (unsigned)lround((double)bits * LN2);
        if (k < 1)
            k = 1;
        predicted = bc_bloom_fpr_classic((double)n, (double)m, k);
    }
    if (kind == KIND_COUNTING) {
        struct bc_cbloom *c;
        enum bc_status st = bc_cbloom_create_mk(n, m, k, seed, &c);
        if (st != BC_OK) {
            fprintf(stderr, "bench_fpr: %s\n", bc_strerror(st));
            return 1;
        }
        for (uint64_t i = 0; i < n; i++) {
            struct key key = make_key(i, TAG_ADDED);
            bc_cbloom_add(c, key.bytes, sizeof(key.bytes));
        }
        for (uint64_t i = 0; i < q; i++) {
            struct key key = make_key(i, TAG_NEVER);
            fp += bc_cbloom_contains(c, key.bytes, sizeof(key.bytes));
        }
        bc_cbloom_free(c);
    } else {
        struct bc_bloom *b;
        enum bc_bloom_layout layout =
            kind == KIND_BLOCKED ? BC_BLOOM_BLOCKED : BC_BLOOM_CLASSIC;
        enum bc_status st = bc_bloom_create_mk(n, m, k, layout, seed, 0, &b);
        if (st != BC_OK) {
            fprintf(stderr, "bench_fpr: %s\n", bc_strerror(st));
            return 1;
        }
        for (uint64_t i = 0; i < n; i++) {
            struct key key = make_key(i, TAG_ADDED);
            bc_bloom_add(b, key.bytes, sizeof(key.bytes));
        }
        for (uint64_t i = 0; i < q; i++) {
            struct key key = make_key(i, TAG_NEVER);
            fp += bc_bloom_contains(b, key.bytes, sizeof(key.bytes));
        }
        bc_bloom_free(b);
    }
    double measured = (double)fp / (double)q;
    double lower = pow(2.0, -(double)bits);
    printf("| %u | %s | %u | %llu | %.4e | %.4e | %llu | %+.1f %% |\n", bits,
           kind_name(kind), k, (unsigned long long)m, predicted, measured,
           (unsigned long long)fp, 100.0 * (measured / predicted - 1.0));
    fflush(stdout);
    if (csv)
        fprintf(csv, "%u,%s,%u,%llu,%.6e,%.6e,%llu,%llu,%.6e\n", bits,
                kind_name(kind), k, (unsigned long long)m, predicted, measured,
                (unsigned long long)fp, (unsigned long long)q, lower);
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000, q = 10000000, seed = 20261122;
    unsigned from = 4, to = 24, step = 1;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            goto usage;
        if (strcmp(argv[i], "--n") == 0)
            n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--queries") == 0)
            q = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--from") == 0)
            from = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--to") == 0)
            to = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--step") == 0)
            step = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--csv") == 0)
            csv_path = argv[++i];
        else
            goto usage;
    }
    if (n == 0 || q == 0 || from < 1 || to < from || to > 64 || step < 1)
        goto usage;
    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            perror(csv_path);
            return 1;
        }
        fprintf(csv, "bits_per_key,layout,k,m,predicted,measured,"
                     "false_positives,queries,lower_bound\n");
    }
    printf("## bench_fpr: n = %llu keys added, %llu keys never added "
           "queried, seed %llu\n\n",
           (unsigned long long)n, (unsigned long long)q,
           (unsigned long long)seed);
    printf("| bits/key | layout | k | m | predicted | measured | false "
           "positives | measured/predicted - 1 |\n");
    printf("|---:|---|---:|---:|---:|---:|---:|---:|\n");
    int rc = 0;
    for (unsigned bits = from; bits <= to && rc == 0; bits += step)
        for (int kind = KIND_CLASSIC; kind <= KIND_COUNTING && rc == 0; kind++)
            rc = measure((enum kind)kind, bits, n, q, seed, csv);
    if (csv)
        fclose(csv);
    return rc;
usage:
    fprintf(stderr, "usage: bench_fpr [--n N] [--queries Q] [--from B] "
                    "[--to B] [--step S] [--seed S] [--csv FILE]\n");
    return 2;
}
