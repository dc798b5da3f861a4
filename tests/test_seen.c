/*
 * test_seen.c - the two-tier seen-test: its three verdicts, the
 * complete-LRU rule, its counters, and its persistence.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomcrawl/seen.h"

#include "alloc_fail.h"

/* bc_seen_peek(), which must succeed: its verdict. */
static enum bc_seen_verdict peek(const struct bc_seen *s, const char *key,
                                 size_t len)
{
    enum bc_seen_verdict v;
    assert_int_equal(bc_seen_peek(s, key, len, &v), BC_OK);
    return v;
}

static enum bc_seen_verdict tadd(struct bc_seen *s, const char *key)
{
    enum bc_seen_verdict v;
    assert_int_equal(bc_seen_test_and_add(s, key, strlen(key), &v), BC_OK);
    return v;
}

static void key_of(char *buf, size_t cap, const char *prefix, unsigned i)
{
    snprintf(buf, cap, "https://example.com/%s/%u", prefix, i);
}

static struct bc_seen *make(uint64_t n, double p, size_t lru)
{
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.expected = n;
    c.fp_rate = p;
    c.lru_capacity = lru;
    struct bc_seen *s;
    assert_int_equal(bc_seen_create(&c, &s), BC_OK);
    return s;
}

static const enum bc_seen_kind all_kinds[] = {
    BC_SEEN_BLOOM_CLASSIC, BC_SEEN_BLOOM_BLOCKED, BC_SEEN_COUNTING,
    BC_SEEN_WINDOW_COUNT, BC_SEEN_WINDOW_TIME};
#define KINDS (sizeof(all_kinds) / sizeof(all_kinds[0]))

/* A seen-test of the kind for n keys at rate p with an LRU of lru; a
 * window is of 400 insertions or 400 clock units. */
static struct bc_seen *make_kind(enum bc_seen_kind kind, uint64_t n, double p,
                                 size_t lru)
{
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.kind = kind;
    c.expected = n;
    c.fp_rate = p;
    c.seed = 11;
    c.lru_capacity = lru;
    c.window = 400;
    struct bc_seen *s = NULL;
    assert_int_equal(bc_seen_create(&c, &s), BC_OK);
    return s;
}

static void test_defaults_and_names(void **state)
{
    (void)state;
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    assert_int_equal(c.expected, BC_SEEN_DEFAULT_EXPECTED);
    assert_int_equal(c.lru_capacity, 50000);
    assert_int_equal(c.kind, BC_SEEN_BLOOM_BLOCKED);
    assert_string_equal(bc_seen_verdict_name(BC_SEEN_NEW), "NEW");
    assert_string_equal(bc_seen_verdict_name(BC_SEEN_DUPLICATE), "DUPLICATE");
    assert_string_equal(bc_seen_verdict_name(BC_SEEN_PROBABLY_SEEN),
                        "PROBABLY_SEEN");
    struct bc_seen *s = (struct bc_seen *)&c, *sentinel = s;
    c.fp_rate = 2.0;
    assert_int_equal(bc_seen_create(&c, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_create(NULL, &s), BC_ERR_INVALID_ARG);
    assert_ptr_equal(s, sentinel);
    bc_seen_free(NULL);
    enum bc_seen_verdict v;
    assert_int_equal(bc_seen_test_and_add(NULL, "a", 1, &v),
                     BC_ERR_INVALID_ARG);
}

/* NEW, then DUPLICATE while the LRU holds it. */
static void test_new_then_duplicate(void **state)
{
    (void)state;
    struct bc_seen *s = make(1000, 0.01, 100);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    assert_int_equal(tadd(s, "https://a.example/x"), BC_SEEN_NEW);
    assert_int_equal(peek(s, "https://a.example/", 18), BC_SEEN_DUPLICATE);
    assert_int_equal(peek(s, "https://b.example/", 18), BC_SEEN_NEW);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_int_equal(st.tested, 3);
    assert_int_equal(st.verdict_new, 2);
    assert_int_equal(st.duplicate, 1);
    assert_int_equal(st.probably_seen, 0);
    assert_true(st.lru_complete);
    assert_int_equal(st.lru.count, 2);
    assert_int_equal(st.lru.hits, 1);
    assert_int_equal(st.bloom.inserts, 2);
    bc_seen_free(s);
}

/* The LRU keeps 16-byte fingerprints in a slab (seen.c): its key bytes are
 * 16 per key whatever the URL's length, its memory is 72 bytes a slot for
 * capacity + 1 slots plus 16 per bucket (~93 bytes per entry at the
 * default 50,000), and no insert allocates. The collision figure of the
 * comment: n^2 / 2^129 at n = 10^9 is 1.5e-21. */
static void test_lru_holds_fingerprints(void **state)
{
    (void)state;
    struct bc_seen *s = make(100000, 0.01, BC_SEEN_DEFAULT_LRU);
    char key[300];
    memset(key, 'x', sizeof(key));
    memcpy(key, "https://", 8);
    enum bc_seen_verdict v;
    assert_int_equal(bc_seen_test_and_add(s, key, sizeof(key), &v), BC_OK);
    assert_int_equal(v, BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    long before = alloc_calls;
    char k[64];
    for (unsigned i = 0; i < 1000; i++) {
        key_of(k, sizeof(k), "fp", i);
        assert_int_equal(tadd(s, k), BC_SEEN_NEW);
    }
    assert_int_equal(alloc_calls, before);
    assert_int_equal(bc_seen_test_and_add(s, key, sizeof(key), &v), BC_OK);
    assert_int_equal(v, BC_SEEN_DUPLICATE);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_int_equal(st.lru.count, 1002);
    assert_int_equal(st.lru.key_bytes, 1002 * 16);
    if (sizeof(void *) == 8) {
        assert_int_equal(st.lru.bytes, 50001 * 72 + 131072 * 16);
        double per_entry = (double)st.lru.bytes / BC_SEEN_DEFAULT_LRU;
        assert_true(per_entry > 113.5 && per_entry < 114.5);
    }
    double collide = 1e18 / ldexp(1.0, 129);
    assert_true(collide > 1.45e-21 && collide < 1.55e-21);
    bc_seen_free(s);
}

/* Once the LRU has evicted, a repeat of an old key is PROBABLY_SEEN. */
static void test_probably_seen_after_eviction(void **state)
{
    (void)state;
    struct bc_seen *s = make(10000, 0.001, 10);
    char key[64];
    for (unsigned i = 0; i < 20; i++) {
        key_of(key, sizeof(key), "p", i);
        assert_int_equal(tadd(s, key), BC_SEEN_NEW);
    }
    key_of(key, sizeof(key), "p", 0); /* evicted long ago */
    assert_int_equal(tadd(s, key), BC_SEEN_PROBABLY_SEEN);
    /* PROBABLY_SEEN does not enter the LRU: it stays PROBABLY_SEEN. */
    assert_int_equal(tadd(s, key), BC_SEEN_PROBABLY_SEEN);
    key_of(key, sizeof(key), "p", 19); /* recent */
    assert_int_equal(tadd(s, key), BC_SEEN_DUPLICATE);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_false(st.lru_complete);
    assert_int_equal(st.probably_seen, 2);
    assert_int_equal(st.lru.evictions, 10);
    bc_seen_free(s);
}

/*
 * The complete-LRU rule: a filter far too small for its load says "maybe"
 * to most new keys, but while the LRU has never evicted, each such "maybe"
 * is proven false and the verdict is NEW. With an LRU large enough for
 * everything, the seen-test is exact: every distinct key is NEW exactly
 * once, every repeat is DUPLICATE.
 */
static void test_complete_lru_catches_false_positives(void **state)
{
    (void)state;
    struct bc_seen *s = make(100, 0.1, 100000); /* filter for 100 keys */
    char key[64];
    for (unsigned i = 0; i < 5000; i++) {
        key_of(key, sizeof(key), "fp", i);
        assert_int_equal(tadd(s, key), BC_SEEN_NEW);
    }
    for (unsigned i = 0; i < 5000; i++) {
        key_of(key, sizeof(key), "fp", i);
        assert_int_equal(tadd(s, key), BC_SEEN_DUPLICATE);
    }
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_true(st.lru_complete);
    assert_int_equal(st.verdict_new, 5000);
    assert_int_equal(st.duplicate, 5000);
    assert_int_equal(st.probably_seen, 0);
    /* The overloaded filter had to be corrected many times. */
    assert_true(st.fp_caught > 1000);
    assert_true(st.bloom.fill > 0.9);
    bc_seen_free(s);
}

/* The same overloaded filter with a small LRU: once it evicts, a false
 * positive can no longer be proven, and new keys come out PROBABLY_SEEN. */
static void test_incomplete_lru_degrades_to_bloom(void **state)
{
    (void)state;
    struct bc_seen *s = make(100, 0.1, 50);
    char key[64];
    unsigned probably = 0;
    for (unsigned i = 0; i < 5000; i++) {
        key_of(key, sizeof(key), "deg", i);
        probably += tadd(s, key) == BC_SEEN_PROBABLY_SEEN;
    }
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_false(st.lru_complete);
    assert_true(probably > 1000);
    assert_int_equal(st.probably_seen, probably);
    assert_int_equal(st.verdict_new + st.duplicate + st.probably_seen,
                     st.tested);
    bc_seen_free(s);
}

/* A seen-test loaded from a file never claims completeness: its filter
 * holds keys its LRU never saw. */
static void test_loaded_is_never_complete(void **state)
{
    (void)state;
    char path[] = "/tmp/bc_test_seen.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct bc_seen *s = make(1000, 0.01, 1000);
    assert_int_equal(tadd(s, "https://old.example/"), BC_SEEN_NEW);
    assert_int_equal(bc_seen_save(s, path), BC_OK);
    bc_seen_free(s);

    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.lru_capacity = 1000;
    assert_int_equal(bc_seen_load(path, &c, &s), BC_OK);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_false(st.lru_complete);
    assert_int_equal(st.bloom.inserts, 1);
    assert_int_equal(peek(s, "https://old.example/", 20),
                     BC_SEEN_PROBABLY_SEEN);
    assert_int_equal(tadd(s, "https://old.example/"), BC_SEEN_PROBABLY_SEEN);
    assert_int_equal(tadd(s, "https://new.example/"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://new.example/"), BC_SEEN_DUPLICATE);
    bc_seen_free(s);

    /* A damaged file is refused, nothing half-loaded. */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 100, SEEK_SET);
    fputc('X', f);
    fclose(f);
    s = NULL;
    assert_int_equal(bc_seen_load(path, &c, &s), BC_ERR_CHECKSUM);
    assert_null(s);
    unlink(path);
}

/* Capacity 0: no tier 2, pure Bloom semantics from the first repeat. */
static void test_no_lru(void **state)
{
    (void)state;
    struct bc_seen *s = make(1000, 0.01, 0);
    assert_int_equal(tadd(s, "k"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "k"), BC_SEEN_PROBABLY_SEEN);
    bc_seen_free(s);
}

/* The batch call gives exactly the verdicts and counters of single calls,
 * on a stream where all three verdicts occur, over every tier-1 kind. */
static void batch_equals_single(enum bc_seen_kind kind)
{
    enum { N = 20000 };
    struct bc_seen *a = make_kind(kind, 150, 0.05, 400),
                   *b = make_kind(kind, 150, 0.05, 400);
    static char keys[N][48];
    static const char *ptrs[N];
    static size_t lens[N];
    static enum bc_seen_verdict got[N];
    uint64_t x = 7;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        /* Mostly repeats of recent keys, some old ones, some new. */
        unsigned id =
            (x >> 33) % 4 == 0 ? (unsigned)i : (unsigned)((x >> 40) % 3000);
        key_of(keys[i], sizeof(keys[i]), "b", id);
        ptrs[i] = keys[i];
        lens[i] = strlen(keys[i]);
    }
    for (int off = 0; off < N; off += 777) {
        size_t count = N - off < 777 ? (size_t)(N - off) : 777;
        assert_int_equal(bc_seen_test_and_add_batch(a, ptrs + off, lens + off,
                                                    count, got + off),
                         BC_OK);
    }
    for (int i = 0; i < N; i++)
        assert_int_equal(got[i], tadd(b, keys[i]));
    struct bc_seen_stats sa, sb;
    bc_seen_stats(a, &sa);
    bc_seen_stats(b, &sb);
    assert_int_equal(sa.verdict_new, sb.verdict_new);
    assert_int_equal(sa.duplicate, sb.duplicate);
    assert_int_equal(sa.probably_seen, sb.probably_seen);
    assert_int_equal(sa.fp_caught, sb.fp_caught);
    assert_true(sa.duplicate > 0 && sa.probably_seen > 0 && sa.fp_caught > 0);
    assert_int_equal(bc_seen_test_and_add_batch(a, NULL, NULL, 0, NULL), BC_OK);
    assert_int_equal(bc_seen_test_and_add_batch(NULL, ptrs, lens, 1, got),
                     BC_ERR_INVALID_ARG);
    bc_seen_free(a);
    bc_seen_free(b);
}

static void test_batch_equals_single(void **state)
{
    (void)state;
    for (size_t i = 0; i < KINDS; i++)
        batch_equals_single(all_kinds[i]);
}

/* ---- every tier-1 kind ------------------------------------------------- */

/* What a stream did: an FNV-1a over its verdicts and forget codes, and the
 * counters before the save. */
struct digest {
    uint64_t fnv;
    uint64_t tested, verdict_new, duplicate, probably_seen, fp_caught,
        forgotten, evictions;
};

static void mix(struct digest *d, unsigned v)
{
    d->fnv ^= v;
    d->fnv *= 1099511628211u;
}

static void stream_key(char *buf, size_t cap, unsigned j)
{
    snprintf(buf, cap, "https://h%u.example/p/%u", j % 37, j);
}

/*
 * One stream through a seen-test of the kind, for 300 keys at 5 % with an
 * LRU of 600 over 1500 distinct keys, so that every verdict occurs: the
 * filter overfills and its false positives are caught while the LRU is
 * complete, then the LRU evicts and PROBABLY_SEEN appears; a window
 * forgets. 3000 single calls (the clock at the call's number), 3000 in
 * batches of 50, 500 peeks of keys never added, forget of 100 keys, a
 * save, a load with an LRU of 64, 1000 more single calls.
 */
static void run_stream(enum bc_seen_kind kind, struct digest *d)
{
    struct bc_seen *s = make_kind(kind, 300, 0.05, 600);
    memset(d, 0, sizeof(*d));
    d->fnv = 14695981039346656037u;
    static char buf[64][64];
    const char *keys[64];
    size_t lens[64];
    enum bc_seen_verdict v[64];
    uint64_t x = 1;
    unsigned i = 0;
    for (; i < 3000; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        stream_key(buf[0], sizeof(buf[0]), (unsigned)(x >> 33) % 1500);
        bc_seen_set_clock(s, i);
        assert_int_equal(bc_seen_test_and_add(s, buf[0], strlen(buf[0]), &v[0]),
                         BC_OK);
        mix(d, v[0]);
    }
    for (; i < 6000; i += 50) {
        for (unsigned b = 0; b < 50; b++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            stream_key(buf[b], sizeof(buf[b]), (unsigned)(x >> 33) % 1500);
            keys[b] = buf[b];
            lens[b] = strlen(buf[b]);
        }
        bc_seen_set_clock(s, i);
        assert_int_equal(bc_seen_test_and_add_batch(s, keys, lens, 50, v),
                         BC_OK);
        for (unsigned b = 0; b < 50; b++)
            mix(d, v[b]);
    }
    for (unsigned f = 0; f < 500; f++) {
        snprintf(buf[0], sizeof(buf[0]), "https://fresh.example/%u", f);
        mix(d, peek(s, buf[0], strlen(buf[0])));
    }
    for (unsigned j = 0; j < 100; j++) {
        stream_key(buf[0], sizeof(buf[0]), j);
        mix(d, (unsigned)bc_seen_forget(s, buf[0], strlen(buf[0])));
    }
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_int_equal(st.kind, kind);
    d->tested = st.tested;
    d->verdict_new = st.verdict_new;
    d->duplicate = st.duplicate;
    d->probably_seen = st.probably_seen;
    d->fp_caught = st.fp_caught;
    d->forgotten = st.forgotten;
    d->evictions = st.lru.evictions;

    char path[] = "/tmp/test_seen_kind_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(bc_seen_save(s, path), BC_OK);
    bc_seen_free(s);
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.kind = BC_SEEN_COUNTING; /* ignored: the file decides */
    c.lru_capacity = 64;
    assert_int_equal(bc_seen_load(path, &c, &s), BC_OK);
    unlink(path);
    bc_seen_stats(s, &st);
    assert_int_equal(st.kind, kind);
    for (; i < 7000; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        stream_key(buf[0], sizeof(buf[0]), (unsigned)(x >> 33) % 1500);
        bc_seen_set_clock(s, i);
        assert_int_equal(bc_seen_test_and_add(s, buf[0], strlen(buf[0]), &v[0]),
                         BC_OK);
        mix(d, v[0]);
    }
    bc_seen_stats(s, &st);
    mix(d, (unsigned)st.verdict_new);
    mix(d, (unsigned)st.duplicate);
    mix(d, (unsigned)st.probably_seen);
    bc_seen_free(s);
}

/*
 * The tier-1 kind is one enum (issue 21): the three fields it replaced
 * (counting, window_kind, layout) could also write a counting window,
 * refused at run time, which no value of the enum can now say. Every
 * value creates a seen-test that reports its kind, survives a save and a
 * load, and gives exactly the verdicts, forget codes and counters of the
 * seen-test before its tier 1 became a table of operations: the digests
 * below were recorded by this stream from the code at commit 57dc1f5 (the
 * kinds set by those three fields). A value outside the enum is
 * BC_ERR_INVALID_ARG with *out untouched.
 */
static void test_every_kind_same_verdicts(void **state)
{
    (void)state;
    static const struct digest before[KINDS] = {
        {0x3e8e45960896edc6u, 6000, 929, 2198, 2873, 54, 0, 329},
        {0x993170971c0f80ecu, 6000, 921, 2226, 2853, 41, 0, 321},
        {0xf33384e34e9389a8u, 6000, 929, 2198, 2873, 54, 92, 329},
        {0xc7a2e991ef8dfdd6u, 6000, 4062, 1834, 104, 11, 0, 2980},
        {0xaa9081dfcffe8e42u, 6000, 4469, 1403, 128, 19, 0, 2951},
    };
    for (size_t i = 0; i < KINDS; i++) {
        struct digest d;
        run_stream(all_kinds[i], &d);
        assert_int_equal(d.tested, before[i].tested);
        assert_int_equal(d.verdict_new, before[i].verdict_new);
        assert_int_equal(d.duplicate, before[i].duplicate);
        assert_int_equal(d.probably_seen, before[i].probably_seen);
        assert_int_equal(d.fp_caught, before[i].fp_caught);
        assert_int_equal(d.forgotten, before[i].forgotten);
        assert_int_equal(d.evictions, before[i].evictions);
        assert_int_equal(d.fnv, before[i].fnv);
    }

    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.window = 400;
    struct bc_seen *s = (struct bc_seen *)&c, *sentinel = s;
    c.kind = (enum bc_seen_kind)5;
    assert_int_equal(bc_seen_create(&c, &s), BC_ERR_INVALID_ARG);
    c.kind = (enum bc_seen_kind) - 1;
    assert_int_equal(bc_seen_create(&c, &s), BC_ERR_INVALID_ARG);
    assert_ptr_equal(s, sentinel);
}

/* The kinds' names, and what each kind shows: its filter's statistics
 * only, the filter behind bc_seen_bloom() or bc_seen_window(), forget. */
static void test_kind_names_and_views(void **state)
{
    (void)state;
    static const char *const names[KINDS] = {"bloom-classic", "bloom-blocked",
                                             "counting", "window-count",
                                             "window-time"};
    for (size_t i = 0; i < KINDS; i++) {
        enum bc_seen_kind kind = all_kinds[i];
        assert_string_equal(bc_seen_kind_name(kind), names[i]);
        struct bc_seen *s = make_kind(kind, 1000, 0.01, 100);
        assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
        assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
        struct bc_seen_stats st;
        bc_seen_stats(s, &st);
        assert_int_equal(st.kind, kind);
        bool bloom =
            kind == BC_SEEN_BLOOM_CLASSIC || kind == BC_SEEN_BLOOM_BLOCKED;
        bool window =
            kind == BC_SEEN_WINDOW_COUNT || kind == BC_SEEN_WINDOW_TIME;
        assert_true((bc_seen_bloom(s) != NULL) == bloom);
        assert_true((bc_seen_window(s) != NULL) == window);
        assert_true((st.bloom.m_bits != 0) == bloom);
        assert_true((st.window.blocks != 0) == window);
        assert_true((st.cbloom.m != 0) == (kind == BC_SEEN_COUNTING));
        if (bloom)
            assert_int_equal(st.bloom.layout, kind == BC_SEEN_BLOOM_CLASSIC
                                                  ? BC_BLOOM_CLASSIC
                                                  : BC_BLOOM_BLOCKED);
        assert_int_equal(bc_seen_forget(s, "https://a.example/", 18),
                         kind == BC_SEEN_COUNTING ? BC_OK : BC_ERR_UNSUPPORTED);
        bc_seen_free(s);
    }
    assert_string_equal(bc_seen_kind_name((enum bc_seen_kind)5), "unknown");
}

/* Fail every allocation of create (of every kind) and of a few
 * test-and-adds in turn: each failure is BC_ERR_NOMEM, leaks nothing
 * (LeakSanitizer), and a seen-test whose LRU failed once stops claiming
 * completeness. */
static void test_allocation_failure(void **state)
{
    (void)state;
    long before = alloc_calls;
    bc_seen_free(make(100, 0.01, 10));
    if (alloc_calls == before)
        BC_SKIP();                     /* not linked with --wrap */
    for (size_t i = 0; i < KINDS; i++) /* each kind's tier 1 is freed */
        for (long n = 0;; n++) {
            struct bc_seen_config c;
            bc_seen_config_init(&c);
            c.kind = all_kinds[i];
            c.expected = 1000;
            c.lru_capacity = 10;
            c.window = 100;
            struct bc_seen *s = NULL;
            fail_after = n;
            enum bc_status st = bc_seen_create(&c, &s);
            fail_after = -1;
            if (st == BC_ERR_NOMEM) {
                assert_null(s);
                continue;
            }
            assert_int_equal(st, BC_OK);
            bc_seen_free(s);
            break;
        }
    struct bc_seen *s = make(1000, 0.01, 100);
    enum bc_seen_verdict v;
    fail_after = 0; /* the LRU's copy of the key fails */
    assert_int_equal(bc_seen_test_and_add(s, "https://x.test/", 15, &v),
                     BC_ERR_NOMEM);
    fail_after = -1;
    assert_int_equal(v, BC_SEEN_NEW);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_false(st.lru_complete);
    /* The key is in the filter: now PROBABLY_SEEN, never NEW again. */
    assert_int_equal(tadd(s, "https://x.test/"), BC_SEEN_PROBABLY_SEEN);
    bc_seen_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_names),
        cmocka_unit_test(test_new_then_duplicate),
        cmocka_unit_test(test_lru_holds_fingerprints),
        cmocka_unit_test(test_probably_seen_after_eviction),
        cmocka_unit_test(test_complete_lru_catches_false_positives),
        cmocka_unit_test(test_incomplete_lru_degrades_to_bloom),
        cmocka_unit_test(test_loaded_is_never_complete),
        cmocka_unit_test(test_no_lru),
        cmocka_unit_test(test_batch_equals_single),
        cmocka_unit_test(test_every_kind_same_verdicts),
        cmocka_unit_test(test_kind_names_and_views),
        cmocka_unit_test(test_allocation_failure),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
