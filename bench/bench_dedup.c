/*
 * bench_dedup.c - how fast and how small the dedup tiers are, against an
 * exact hash set of the same URLs measured in the same run.
 *
 *   bench_dedup [--n N] [--runs R] [--billion] [--quick] [--csv FILE]
 *
 * Prints Markdown tables (medians of R runs, one thread, p = 1 %):
 *   1. ns per test-and-add and per contains (of keys never added) for the
 *      classic and blocked layouts, scalar and batch, from prehashed keys
 *      and from URL strings (XXH3 included), at n = 10^7 (--n);
 *   2. with --billion, the batch rows on prehashed keys at n = 10^9 (a
 *      1.2 GB filter; one run);
 *   3. the LRU's ns per lookup and per insert at 10^6 entries, with
 *      URL keys (bc_lru_create) and as the seen-test keeps it (a slab of
 *      16-byte fingerprints, bc_lru_create_slab; remove too);
 *   4. an exact uthash set of the same URL strings: bytes per URL, ns per
 *      insert and per lookup, beside the filters' bytes per URL;
 *   5. the memory of each layout against its formula.
 * Keys are produced in chunks of 8,192 outside the timed region, so the
 * numbers are the cost of the structure, not of generating the keys.
 *
 * With --csv FILE, the numbers of the tables also go to FILE, one per row
 * under the header "measure,value,unit" (values as %.6g or whole numbers;
 * <n> is the table's n in decimal, <layout> classic or blocked, <calls>
 * scalar or batch, <keys> prehashed or strings):
 *   bloom/<n>/<layout>/<calls>/<keys>/ns_test_and_add      ns
 *   bloom/<n>/<layout>/<calls>/<keys>/ns_contains_absent   ns
 *   bloom/<n>/<layout>/<calls>/<keys>/measured_fpr         fraction
 *   bloom/<n>/<layout>/bytes                               bytes
 *   lru/ns_add, lru/ns_push, lru/ns_hit, lru/ns_miss       ns
 *   lru/entries                                            count
 *   lru-slab/ns_add, ns_push, ns_hit, ns_miss, ns_remove   ns
 *   lru-slab/bytes                                         bytes
 *   lru-slab/ns_push_prefetched, ns_hit_prefetched         ns
 *   exact/<n>/bytes_per_url                                bytes
 *   exact/<n>/ns_insert, exact/<n>/ns_lookup_absent        ns
 *   bloom/<n>/<layout>/bytes_per_url                       bytes
 *   memory/<n>/<layout>/formula_bytes                      bytes
 *   memory/<n>/<layout>/allocated_bytes                    bytes
 *   memory/<n>/<layout>/excess                             fraction
 * bloom/<n>/<layout>/bytes is the filter's allocation (the MiB column, once
 * per layout); bloom/<n>/<layout>/bytes_per_url is from table 4.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench_csv.h"
#include "bloomcrawl/bloom.h"
#include "bloomcrawl/lru.h"

#define CHUNK   8192
#define URL_MAX 96

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The --csv file, or NULL. */
static FILE *csv;

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

/* The i-th URL of a family: realistic length (~60-80 bytes), many hosts. */
static size_t make_url(char *buf, uint64_t i, unsigned family)
{
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15u;
    int n =
        snprintf(buf, URL_MAX,
                 "https://www.host%llu.example.com/f%u/section-%llu/"
                 "article-%llu.html",
                 (unsigned long long)(x % 100003), family,
                 (unsigned long long)((x >> 20) % 1000), (unsigned long long)i);
    return (size_t)n;
}

struct url_chunk {
    char text[CHUNK][URL_MAX];
    size_t len[CHUNK];
};

static void fill_urls(struct url_chunk *c, uint64_t start, size_t count,
                      unsigned family)
{
    for (size_t j = 0; j < count; j++)
        c->len[j] = make_url(c->text[j], start + j, family);
}

/* Hashes of keys by number alone (the "prehashed" case). */
static void fill_hashes(const struct bc_bloom *b, struct bc_hash128 *h,
                        uint64_t start, size_t count, unsigned family)
{
    for (size_t j = 0; j < count; j++) {
        uint64_t key[2] = {start + j, family};
        h[j] = bc_bloom_hash(b, key, sizeof(key));
    }
}

enum op { OP_TEST_AND_ADD, OP_CONTAINS };
enum source { SRC_PREHASHED, SRC_STRINGS };

struct variant {
    enum bc_bloom_layout layout;
    bool batch;
    enum source source;
};

static struct bc_hash128 hashes[CHUNK];
static bool answers[CHUNK];
static struct url_chunk urls;

/* Time one op over n keys of one family, in chunks; returns ns per key. */
static double timed_pass(struct bc_bloom *b, const struct variant *v,
                         enum op op, uint64_t n, unsigned family,
                         uint64_t *count_true)
{
    double total = 0.0;
    uint64_t trues = 0;
    for (uint64_t start = 0; start < n; start += CHUNK) {
        size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
        if (v->source == SRC_PREHASHED)
            fill_hashes(b, hashes, start, count, family);
        else
            fill_urls(&urls, start, count, family);
        double t0 = now_ns();
        if (v->source == SRC_STRINGS) {
            if (v->batch) {
                for (size_t j = 0; j < count; j++)
                    hashes[j] = bc_bloom_hash(b, urls.text[j], urls.len[j]);
            } else if (op == OP_TEST_AND_ADD) {
                for (size_t j = 0; j < count; j++)
                    answers[j] =
                        bc_bloom_test_and_add(b, urls.text[j], urls.len[j]);
            } else {
                for (size_t j = 0; j < count; j++)
                    answers[j] =
                        bc_bloom_contains(b, urls.text[j], urls.len[j]);
            }
        }
        if (v->source == SRC_PREHASHED || v->batch) {
            if (v->batch && op == OP_TEST_AND_ADD)
                bc_bloom_test_and_add_batch(b, hashes, count, answers);
            else if (v->batch)
                bc_bloom_contains_batch(b, hashes, count, answers);
            else if (op == OP_TEST_AND_ADD)
                for (size_t j = 0; j < count; j++)
                    answers[j] = bc_bloom_test_and_add_hash(b, hashes[j]);
            else
                for (size_t j = 0; j < count; j++)
                    answers[j] = bc_bloom_contains_hash(b, hashes[j]);
        }
        total += now_ns() - t0;
        for (size_t j = 0; j < count; j++)
            trues += answers[j];
    }
    *count_true = trues;
    return total / (double)n;
}

static const char *layout_name(enum bc_bloom_layout l)
{
    return l == BC_BLOOM_CLASSIC ? "classic" : "blocked";
}

static void bench_filters(uint64_t n, int runs, bool prehashed_only)
{
    const struct variant variants[] = {
        {BC_BLOOM_CLASSIC, false, SRC_PREHASHED},
        {BC_BLOOM_CLASSIC, true, SRC_PREHASHED},
        {BC_BLOOM_BLOCKED, false, SRC_PREHASHED},
        {BC_BLOOM_BLOCKED, true, SRC_PREHASHED},
        {BC_BLOOM_CLASSIC, false, SRC_STRINGS},
        {BC_BLOOM_CLASSIC, true, SRC_STRINGS},
        {BC_BLOOM_BLOCKED, false, SRC_STRINGS},
        {BC_BLOOM_BLOCKED, true, SRC_STRINGS},
    };
    printf("\n### Bloom filter, n = %llu, p = 1 %%, medians of %d runs\n\n",
           (unsigned long long)n, runs);
    printf("| layout | calls | keys | ns/test-and-add | ns/contains (absent) "
           "| measured FPR | MiB |\n");
    printf("|---|---|---|---:|---:|---:|---:|\n");
    bool bytes_written[2] = {false, false}; /* per layout, to the CSV */
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        const struct variant *v = &variants[i];
        /* At 10^9 only the batch calls on prehashed keys (the goals' rows;
         * a scalar pass alone would take minutes). */
        if (prehashed_only && (v->source != SRC_PREHASHED || !v->batch))
            continue;
        double tadd[16], cont[16], fpr = 0.0;
        uint64_t bytes = 0;
        for (int r = 0; r < runs; r++) {
            struct bc_bloom *b;
            if (bc_bloom_create(n, 0.01, v->layout, (uint64_t)r, 0, &b) !=
                BC_OK) {
                fprintf(stderr, "bench_dedup: cannot allocate the filter\n");
                exit(1);
            }
            uint64_t news, present;
            tadd[r] = timed_pass(b, v, OP_TEST_AND_ADD, n, 1, &news);
            cont[r] = timed_pass(b, v, OP_CONTAINS, n, 2, &present);
            fpr = (double)present / (double)n;
            struct bc_bloom_stats st;
            bc_bloom_stats(b, &st);
            bytes = st.bytes;
            bc_bloom_free(b);
        }
        double ns_tadd = median(tadd, runs), ns_cont = median(cont, runs);
        printf("| %s | %s | %s | %.1f | %.1f | %.4f %% | %.1f |\n",
               layout_name(v->layout), v->batch ? "batch" : "scalar",
               v->source == SRC_PREHASHED ? "prehashed" : "URL strings",
               ns_tadd, ns_cont, 100.0 * fpr, (double)bytes / 1048576.0);
        fflush(stdout);
        const char *calls = v->batch ? "batch" : "scalar";
        const char *keys = v->source == SRC_PREHASHED ? "prehashed" : "strings";
        unsigned long long un = (unsigned long long)n;
        bench_csv_num(csv, "ns", ns_tadd, "bloom/%llu/%s/%s/%s/ns_test_and_add",
                      un, layout_name(v->layout), calls, keys);
        bench_csv_num(csv, "ns", ns_cont,
                      "bloom/%llu/%s/%s/%s/ns_contains_absent", un,
                      layout_name(v->layout), calls, keys);
        bench_csv_num(csv, "fraction", fpr, "bloom/%llu/%s/%s/%s/measured_fpr",
                      un, layout_name(v->layout), calls, keys);
        int l = v->layout == BC_BLOOM_CLASSIC ? 0 : 1;
        if (!bytes_written[l]) {
            bench_csv_int(csv, "bytes", bytes, "bloom/%llu/%s/bytes", un,
                          layout_name(v->layout));
            bytes_written[l] = true;
        }
    }
}

/* ---- the LRU ---------------------------------------------------------- */

static void bench_lru(int runs)
{
    const size_t cap = 1000000;
    double find_ns[16], add_ns[16], miss_ns[16], push_ns[16];
    for (int r = 0; r < runs; r++) {
        struct bc_lru *lru;
        double t_add = 0, t_find = 0, t_miss = 0, t_push = 0;
        /* The seen-test's way: push keys known to be absent (no lookup). */
        if (bc_lru_create(cap, 0, &lru) != BC_OK)
            exit(1);
        for (uint64_t start = 0; start < 2 * cap; start += CHUNK) {
            fill_urls(&urls, start, CHUNK, 3);
            for (size_t j = 0; j < CHUNK; j++)
                hashes[j].lo = bc_lru_hash(urls.text[j], urls.len[j]);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                bc_lru_push(lru, urls.text[j], urls.len[j], hashes[j].lo);
            t_push += now_ns() - t0;
        }
        bc_lru_free(lru);
        push_ns[r] = t_push / (double)(2 * cap);
        if (bc_lru_create(cap, 0, &lru) != BC_OK)
            exit(1);
        /* Fill to capacity, then as many again: every add evicts. */
        for (uint64_t start = 0; start < 2 * cap; start += CHUNK) {
            fill_urls(&urls, start, CHUNK, 1);
            for (size_t j = 0; j < CHUNK; j++)
                hashes[j].lo = bc_lru_hash(urls.text[j], urls.len[j]);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                bc_lru_add(lru, urls.text[j], urls.len[j], hashes[j].lo);
            t_add += now_ns() - t0;
        }
        /* Hits: the most recent cap keys, in a scattered order. */
        for (uint64_t start = cap; start < 2 * cap; start += CHUNK) {
            fill_urls(&urls, start, CHUNK, 1);
            for (size_t j = 0; j < CHUNK; j++)
                hashes[j].lo = bc_lru_hash(urls.text[j], urls.len[j]);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                answers[j] =
                    bc_lru_find(lru, urls.text[j], urls.len[j], hashes[j].lo);
            t_find += now_ns() - t0;
        }
        /* Misses: keys evicted long ago. */
        for (uint64_t start = 0; start < cap; start += CHUNK) {
            fill_urls(&urls, start, CHUNK, 1);
            for (size_t j = 0; j < CHUNK; j++)
                hashes[j].lo = bc_lru_hash(urls.text[j], urls.len[j]);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                answers[j] =
                    bc_lru_find(lru, urls.text[j], urls.len[j], hashes[j].lo);
            t_miss += now_ns() - t0;
        }
        struct bc_lru_stats st;
        bc_lru_stats(lru, &st);
        add_ns[r] = t_add / (double)(2 * cap);
        find_ns[r] = t_find / (double)cap;
        miss_ns[r] = t_miss / (double)cap;
        bc_lru_free(lru);
    }
    printf("\n### LRU of recent URLs, 10^6 entries, medians of %d runs\n\n",
           runs);
    double add = median(add_ns, runs), push = median(push_ns, runs);
    double hit = median(find_ns, runs), miss = median(miss_ns, runs);
    printf("| operation | ns/op |\n|---|---:|\n");
    printf("| add: lookup, insert, evict when full | %.1f |\n", add);
    printf("| push (known absent, as the seen-test inserts): insert, evict "
           "| %.1f |\n",
           push);
    printf("| lookup, hit (moves to front) | %.1f |\n", hit);
    printf("| lookup, miss | %.1f |\n", miss);
    bench_csv_num(csv, "ns", add, "lru/ns_add");
    bench_csv_num(csv, "ns", push, "lru/ns_push");
    bench_csv_num(csv, "ns", hit, "lru/ns_hit");
    bench_csv_num(csv, "ns", miss, "lru/ns_miss");
    bench_csv_int(csv, "count", cap, "lru/entries");
}

/*
 * The LRU as the seen-test uses it since issue 14: a slab
 * (bc_lru_create_slab) of 16-byte keys, each URL's XXH3-128 hash (its
 * fingerprint; hashed outside the timed region, as the seen-test has the
 * hash already), the LRU hash its high half. The same operations as
 * bench_lru(), plus remove of held keys.
 */
static struct bc_hash128 fps[CHUNK];

/* How far ahead the pipelined rows prefetch, in keys. */
#define LRU_AHEAD 8

static void fill_fps(uint64_t start, unsigned family)
{
    fill_urls(&urls, start, CHUNK, family);
    for (size_t j = 0; j < CHUNK; j++) {
        XXH128_hash_t h = XXH3_128bits(urls.text[j], urls.len[j]);
        fps[j].lo = h.low64;
        fps[j].hi = h.high64;
    }
}

static void bench_lru_slab(int runs)
{
    const size_t cap = 1000000;
    const size_t key = sizeof(struct bc_hash128);
    double add_ns[16], push_ns[16], hit_ns[16], miss_ns[16], rm_ns[16];
    double pf_push_ns[16], pf_hit_ns[16];
    size_t bytes = 0;
    for (int r = 0; r < runs; r++) {
        struct bc_lru *lru;
        double t_add = 0, t_push = 0, t_hit = 0, t_miss = 0, t_rm = 0;
        double t_pf_push = 0, t_pf_hit = 0;
        /* Pipelined, as the seen-test's batch call does: the bucket of the
         * key LRU_AHEAD places ahead is fetched (bc_lru_prefetch) while
         * the current key is pushed or found. */
        if (bc_lru_create_slab(cap, key, 0, &lru) != BC_OK)
            exit(1);
        for (uint64_t start = 0; start < 2 * cap; start += CHUNK) {
            fill_fps(start, 4);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++) {
                if (j + LRU_AHEAD < CHUNK)
                    bc_lru_prefetch(lru, fps[j + LRU_AHEAD].hi);
                bc_lru_push(lru, &fps[j], key, fps[j].hi);
            }
            t_pf_push += now_ns() - t0;
        }
        for (uint64_t start = cap; start < 2 * cap; start += CHUNK) {
            fill_fps(start, 4);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++) {
                if (j + LRU_AHEAD < CHUNK)
                    bc_lru_prefetch(lru, fps[j + LRU_AHEAD].hi);
                answers[j] = bc_lru_find(lru, &fps[j], key, fps[j].hi);
            }
            t_pf_hit += now_ns() - t0;
        }
        bc_lru_free(lru);
        pf_push_ns[r] = t_pf_push / (double)(2 * cap);
        pf_hit_ns[r] = t_pf_hit / (double)cap;
        if (bc_lru_create_slab(cap, key, 0, &lru) != BC_OK)
            exit(1);
        for (uint64_t start = 0; start < 2 * cap; start += CHUNK) {
            fill_fps(start, 3);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                bc_lru_push(lru, &fps[j], key, fps[j].hi);
            t_push += now_ns() - t0;
        }
        bc_lru_free(lru);
        if (bc_lru_create_slab(cap, key, 0, &lru) != BC_OK)
            exit(1);
        for (uint64_t start = 0; start < 2 * cap; start += CHUNK) {
            fill_fps(start, 1);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                bc_lru_add(lru, &fps[j], key, fps[j].hi);
            t_add += now_ns() - t0;
        }
        for (uint64_t start = cap; start < 2 * cap; start += CHUNK) {
            fill_fps(start, 1);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                answers[j] = bc_lru_find(lru, &fps[j], key, fps[j].hi);
            t_hit += now_ns() - t0;
        }
        for (uint64_t start = 0; start < cap; start += CHUNK) {
            fill_fps(start, 1);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                answers[j] = bc_lru_find(lru, &fps[j], key, fps[j].hi);
            t_miss += now_ns() - t0;
        }
        struct bc_lru_stats st;
        bc_lru_stats(lru, &st);
        bytes = st.bytes;
        for (uint64_t start = cap; start < 2 * cap; start += CHUNK) {
            fill_fps(start, 1);
            double t0 = now_ns();
            for (size_t j = 0; j < CHUNK; j++)
                answers[j] = bc_lru_remove(lru, &fps[j], key, fps[j].hi);
            t_rm += now_ns() - t0;
        }
        add_ns[r] = t_add / (double)(2 * cap);
        push_ns[r] = t_push / (double)(2 * cap);
        hit_ns[r] = t_hit / (double)cap;
        miss_ns[r] = t_miss / (double)cap;
        rm_ns[r] = t_rm / (double)cap;
        bc_lru_free(lru);
    }
    double add = median(add_ns, runs), push = median(push_ns, runs);
    double hit = median(hit_ns, runs), miss = median(miss_ns, runs);
    double rm = median(rm_ns, runs);
    printf("\n### The seen-test's LRU: slab of 16-byte fingerprints, 10^6 "
           "entries, medians of %d runs\n\n",
           runs);
    printf("| operation | ns/op |\n|---|---:|\n");
    printf("| add: lookup, insert, evict when full | %.1f |\n", add);
    printf("| push (known absent, as the seen-test inserts): insert, evict "
           "| %.1f |\n",
           push);
    printf("| lookup, hit (moves to front) | %.1f |\n", hit);
    printf("| lookup, miss | %.1f |\n", miss);
    printf("| remove (held) | %.1f |\n", rm);
    double pf_push = median(pf_push_ns, runs), pf_hit = median(pf_hit_ns, runs);
    printf("| push, the bucket %d keys ahead prefetched (as the seen-test's "
           "batch) | %.1f |\n",
           LRU_AHEAD, pf_push);
    printf("| lookup, hit, the bucket %d keys ahead prefetched | %.1f |\n",
           LRU_AHEAD, pf_hit);
    /* A slot: the entry (uthash's handle, 56 bytes on LP64: lru.c) and
     * the 16-byte key; the rest of the bytes are the buckets. */
    size_t slot = 56 + key;
    printf("\nMemory: %zu bytes, %.1f per entry (capacity + 1 slots of %zu "
           "bytes, %zu buckets of 16 bytes).\n",
           bytes, (double)bytes / (double)cap, slot,
           (bytes - (cap + 1) * slot) / 16);
    bench_csv_num(csv, "ns", add, "lru-slab/ns_add");
    bench_csv_num(csv, "ns", push, "lru-slab/ns_push");
    bench_csv_num(csv, "ns", hit, "lru-slab/ns_hit");
    bench_csv_num(csv, "ns", miss, "lru-slab/ns_miss");
    bench_csv_num(csv, "ns", rm, "lru-slab/ns_remove");
    bench_csv_int(csv, "bytes", bytes, "lru-slab/bytes");
    bench_csv_num(csv, "ns", pf_push, "lru-slab/ns_push_prefetched");
    bench_csv_num(csv, "ns", pf_hit, "lru-slab/ns_hit_prefetched");
}

/* ---- the exact baseline: a uthash set of the URL strings -------------- */

struct exact_entry {
    UT_hash_handle hh;
    size_t len;
    char key[];
};

static void bench_exact(uint64_t n, int runs)
{
    double add_ns[16], find_ns[16], bytes_per = 0.0;
    for (int r = 0; r < runs; r++) {
        struct exact_entry *set = NULL;
        size_t before = mallinfo2().uordblks;
        double t_add = 0, t_find = 0;
        uint64_t found = 0;
        for (uint64_t start = 0; start < n; start += CHUNK) {
            size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
            fill_urls(&urls, start, count, 1);
            double t0 = now_ns();
            for (size_t j = 0; j < count; j++) {
                struct exact_entry *e;
                HASH_FIND(hh, set, urls.text[j], urls.len[j], e);
                if (e)
                    continue;
                e = malloc(sizeof(*e) + urls.len[j]);
                if (!e)
                    exit(1);
                e->len = urls.len[j];
                memcpy(e->key, urls.text[j], urls.len[j]);
                HASH_ADD_KEYPTR(hh, set, e->key, e->len, e);
            }
            t_add += now_ns() - t0;
        }
        bytes_per = (double)(mallinfo2().uordblks - before) / (double)n;
        for (uint64_t start = 0; start < n; start += CHUNK) {
            size_t count = n - start < CHUNK ? (size_t)(n - start) : CHUNK;
            fill_urls(&urls, start, count, 2);
            double t0 = now_ns();
            for (size_t j = 0; j < count; j++) {
                struct exact_entry *e;
                HASH_FIND(hh, set, urls.text[j], urls.len[j], e);
                found += e != NULL;
            }
            t_find += now_ns() - t0;
        }
        if (found)
            exit(1);
        struct exact_entry *e, *tmp;
        HASH_ITER(hh, set, e, tmp)
        {
            HASH_DEL(set, e);
            free(e);
        }
        add_ns[r] = t_add / (double)n;
        find_ns[r] = t_find / (double)n;
    }
    struct bc_bloom_sizing classic, blocked;
    bc_bloom_size(n, 0.01, BC_BLOOM_CLASSIC, &classic);
    bc_bloom_size(n, 0.01, BC_BLOOM_BLOCKED, &blocked);
    printf("\n### Exact baseline: uthash set of the same URL strings, n = "
           "%llu, medians of %d runs\n\n",
           (unsigned long long)n, runs);
    printf("| structure | bytes/URL | ns/insert | ns/lookup (absent) |\n");
    printf("|---|---:|---:|---:|\n");
    double insert = median(add_ns, runs), lookup = median(find_ns, runs);
    double classic_per = (double)classic.bytes / (double)n;
    double blocked_per = (double)blocked.bytes / (double)n;
    printf("| uthash set (exact; malloc'ed entries) | %.1f | %.1f | %.1f |\n",
           bytes_per, insert, lookup);
    printf("| Bloom classic, p = 1 %% | %.2f | see above | see above |\n",
           classic_per);
    printf("| Bloom blocked, p = 1 %% | %.2f | see above | see above |\n",
           blocked_per);
    unsigned long long un = (unsigned long long)n;
    bench_csv_num(csv, "bytes", bytes_per, "exact/%llu/bytes_per_url", un);
    bench_csv_num(csv, "ns", insert, "exact/%llu/ns_insert", un);
    bench_csv_num(csv, "ns", lookup, "exact/%llu/ns_lookup_absent", un);
    bench_csv_num(csv, "bytes", classic_per, "bloom/%llu/classic/bytes_per_url",
                  un);
    bench_csv_num(csv, "bytes", blocked_per, "bloom/%llu/blocked/bytes_per_url",
                  un);
}

/* The CSV rows of one layout's line of the memory table. */
static void csv_memory(uint64_t n, const char *layout, double formula_bytes,
                       uint64_t allocated, double excess)
{
    unsigned long long un = (unsigned long long)n;
    bench_csv_int(csv, "bytes", (unsigned long long)formula_bytes,
                  "memory/%llu/%s/formula_bytes", un, layout);
    bench_csv_int(csv, "bytes", allocated, "memory/%llu/%s/allocated_bytes", un,
                  layout);
    bench_csv_num(csv, "fraction", excess, "memory/%llu/%s/excess", un, layout);
}

/* ---- memory against the formulas ------------------------------------- */

static void bench_memory(uint64_t n)
{
    struct bc_bloom_sizing c, b;
    struct bc_bloom *f;
    struct bc_bloom_stats st;
    bc_bloom_size(n, 0.01, BC_BLOOM_CLASSIC, &c);
    bc_bloom_size(n, 0.01, BC_BLOOM_BLOCKED, &b);
    printf("\n### Memory against the formulas, n = %llu, p = 1 %%\n\n",
           (unsigned long long)n);
    printf("| layout | formula bits | allocated bytes | formula bytes | "
           "excess |\n|---|---:|---:|---:|---:|\n");
    double formula = ceil(-(double)n * log(0.01) / (M_LN2 * M_LN2));
    if (bc_bloom_create(n, 0.01, BC_BLOOM_CLASSIC, 0, 0, &f) == BC_OK) {
        bc_bloom_stats(f, &st);
        double formula_bytes = ceil(formula / 64) * 8;
        double excess = (double)st.bytes / formula_bytes - 1;
        printf("| classic | %.0f | %llu | %.0f | %.4f %% |\n", formula,
               (unsigned long long)st.bytes, formula_bytes, 100.0 * excess);
        csv_memory(n, "classic", formula_bytes, st.bytes, excess);
        bc_bloom_free(f);
    }
    /* The blocked requirement: the least whole number of blocks whose
     * Poisson-mixture rate is <= p at some k. */
    double need = (double)b.m_bits;
    double prev = need - BC_BLOOM_BLOCK_BITS;
    double best_prev = 1.0;
    for (unsigned k = 1; k <= BC_BLOOM_MAX_K; k++) {
        double r = bc_bloom_fpr_blocked((double)n, prev, k);
        if (r < best_prev)
            best_prev = r;
    }
    if (bc_bloom_create(n, 0.01, BC_BLOOM_BLOCKED, 0, 0, &f) == BC_OK) {
        bc_bloom_stats(f, &st);
        double excess = (double)st.bytes / (need / 8) - 1;
        printf("| blocked | %.0f | %llu | %.0f | %.4f %% (one block less "
               "gives rate %.5f > 0.01) |\n",
               need, (unsigned long long)st.bytes, need / 8, 100.0 * excess,
               best_prev);
        csv_memory(n, "blocked", need / 8, st.bytes, excess);
        bc_bloom_free(f);
    }
}

int main(int argc, char **argv)
{
    uint64_t n = 10000000;
    int runs = 5;
    bool billion = false, quick = false, n_given = false, runs_given = false;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) {
            n = strtoull(argv[++i], NULL, 10);
            n_given = true;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            runs_given = true;
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else if (strcmp(argv[i], "--billion") == 0)
            billion = true;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = true;
        else {
            fprintf(stderr, "usage: bench_dedup [--n N] [--runs R] "
                            "[--billion] [--quick] [--csv FILE]\n");
            return 2;
        }
    }
    if (quick) { /* smaller defaults; --n and --runs still win */
        n = n_given ? n : 1000000;
        runs = runs_given ? runs : 3;
    }
    if (runs < 1 || runs > 16 || n < CHUNK) {
        fprintf(stderr, "bench_dedup: runs must be 1..16, n >= %d\n", CHUNK);
        return 2;
    }
    csv = bench_csv_open(csv_path);
    printf("## bench_dedup: n = %llu, runs = %d\n", (unsigned long long)n,
           runs);
    bench_filters(n, runs, false);
    if (billion)
        bench_filters(1000000000, 1, true);
    bench_lru(runs);
    bench_lru_slab(runs);
    bench_exact(n, runs < 3 ? runs : 3);
    bench_memory(n);
    if (billion)
        bench_memory(1000000000);
    return bench_csv_close(csv, csv_path);
}
