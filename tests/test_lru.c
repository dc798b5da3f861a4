/*
 * test_lru.c - the LRU cache (lru.h) against a naive model, through the
 * public API only.
 *
 * The model is an array of key numbers in recency order (index 0 the most
 * recent) with the same counters; every operation of a long seeded random
 * sequence is applied to both, and every return value, the count, the
 * counters and the membership of every key must agree. The key universe is
 * small so that keys come back often, and it holds the awkward keys: the
 * empty key, keys of NUL bytes, keys that are prefixes of others. Three hash
 * modes: the real XXH3 hash, one constant hash for every key (every key
 * collides), and 64-bit hashes that differ but fold to the same 32 bits.
 *
 * Allocation failures: when the test is linked with
 * -Wl,--wrap=malloc,--wrap=calloc, the wrappers below fail the N-th
 * allocation on request and the test
 * checks that each failure returns BC_ERR_NOMEM with nothing changed (the
 * model must still agree afterwards). Without that link option the test is
 * reported as skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/lru.h"
#include "lru_int.h"

/* ---- allocation failure injection (active only with --wrap) ---- */

#include "alloc_fail.h"

static bool malloc_is_wrapped(void)
{
    struct bc_lru *lru = NULL;
    long before = alloc_calls;

    assert_int_equal(bc_lru_create(1, 0, &lru), BC_OK);
    bc_lru_free(lru);
    return alloc_calls != before;
}

/* ---- keys, hashes, random numbers ---- */

struct key {
    unsigned char bytes[16];
    size_t len;
};

/* Key i of the universe. The first seven are the awkward ones; the others
 * are 3 to 15 bytes with i in the first two bytes and NULs among the rest. */
static void make_key(size_t i, struct key *k)
{
    static const struct {
        const char *bytes;
        size_t len;
    } special[] = {
        {"", 0},    {"\0", 1}, {"\0\0", 2}, {"a", 1},
        {"a\0", 2}, {"ab", 2}, {"\0a", 2},
    };
    const size_t nspecial = sizeof(special) / sizeof(special[0]);

    memset(k, 0, sizeof(*k));
    if (i < nspecial) {
        memcpy(k->bytes, special[i].bytes, special[i].len);
        k->len = special[i].len;
        return;
    }
    k->len = 3 + i % 13;
    k->bytes[0] = (unsigned char)(i & 0xff);
    k->bytes[1] = (unsigned char)(i >> 8);
    for (size_t j = 2; j < k->len; j++)
        k->bytes[j] = (unsigned char)((j % 3 == 0) ? 0 : i * j);
}

enum hash_mode {
    HASH_REAL,     /* bc_lru_hash() */
    HASH_CONSTANT, /* one hash for every key */
    HASH_FOLDED    /* distinct 64-bit hashes, one 32-bit fold */
};

static uint64_t key_hash(enum hash_mode mode, size_t i, const struct key *k)
{
    switch (mode) {
    case HASH_REAL:
        return bc_lru_hash(k->bytes, k->len);
    case HASH_CONSTANT:
        return UINT64_C(0x5eed);
    case HASH_FOLDED:
        /* c (2^32 + 1): high and low halves equal, so h ^ (h >> 32) = 0
         * for any c; and nothing in the contract forbids that. */
        return (uint64_t)(i % 5 + 1) * UINT64_C(0x100000001);
    }
    return 0;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* ---- the naive model ---- */

struct model {
    size_t capacity;
    size_t max_bytes;
    size_t key_max; /* slab mode: longest key held; 0: malloc mode */
    size_t *order;  /* key numbers, most recent first */
    size_t count;
    size_t key_bytes;
    uint64_t hits, misses, inserts, evictions;
    const struct key *keys;
};

static long model_pos(const struct model *m, size_t key)
{
    for (size_t i = 0; i < m->count; i++) {
        if (m->order[i] == key)
            return (long)i;
    }
    return -1;
}

static void model_to_front(struct model *m, long pos)
{
    size_t key = m->order[pos];
    memmove(&m->order[1], &m->order[0], (size_t)pos * sizeof(size_t));
    m->order[0] = key;
}

static void model_delete(struct model *m, long pos)
{
    m->key_bytes -= m->keys[m->order[pos]].len;
    memmove(&m->order[pos], &m->order[pos + 1],
            (m->count - (size_t)pos - 1) * sizeof(size_t));
    m->count--;
}

static bool model_find(struct model *m, size_t key)
{
    long pos = model_pos(m, key);
    if (pos < 0) {
        m->misses++;
        return false;
    }
    model_to_front(m, pos);
    m->hits++;
    return true;
}

static void model_add(struct model *m, size_t key)
{
    size_t len = m->keys[key].len;
    long pos = model_pos(m, key);

    if (pos >= 0) {
        model_to_front(m, pos);
        return;
    }
    m->inserts++;
    if (m->capacity == 0 || (m->max_bytes != 0 && len > m->max_bytes) ||
        (m->key_max != 0 && len > m->key_max)) {
        m->evictions++;
        return;
    }
    memmove(&m->order[1], &m->order[0], m->count * sizeof(size_t));
    m->order[0] = key;
    m->count++;
    m->key_bytes += len;
    while (m->count > m->capacity ||
           (m->max_bytes != 0 && m->key_bytes > m->max_bytes)) {
        model_delete(m, (long)m->count - 1);
        m->evictions++;
    }
}

static bool model_remove(struct model *m, size_t key)
{
    long pos = model_pos(m, key);
    if (pos < 0)
        return false;
    model_delete(m, pos);
    return true;
}

/* The cache and the model agree on everything observable. */
static void check_same(const struct bc_lru *lru, const struct model *m,
                       const struct key *keys, const uint64_t *hashes,
                       size_t universe)
{
    struct bc_lru_stats st;

    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, m->count);
    assert_int_equal(bc_lru_count(lru), m->count);
    assert_int_equal(st.capacity, m->capacity);
    assert_int_equal(st.key_bytes, m->key_bytes);
    assert_int_equal(st.max_bytes, m->max_bytes);
    assert_int_equal(st.hits, m->hits);
    assert_int_equal(st.misses, m->misses);
    assert_int_equal(st.inserts, m->inserts);
    assert_int_equal(st.evictions, m->evictions);
    for (size_t i = 0; i < universe; i++) {
        assert_int_equal(
            bc_lru_contains(lru, keys[i].bytes, keys[i].len, hashes[i]),
            model_pos(m, i) >= 0);
    }
}

struct run {
    size_t universe;
    size_t capacity;
    size_t max_bytes;
    enum hash_mode mode;
    size_t ops;
    size_t check_every;
    uint64_t seed;
    bool inject_failures; /* sweep allocation failures on every add */
    size_t key_max;       /* > 0: a slab cache for keys of this length */
};

/* Add with every allocation of the call failed in turn, then let it pass.
 * Each failure must be BC_ERR_NOMEM and change nothing. */
static void add_with_failures(struct bc_lru *lru, struct model *m,
                              const struct key *keys, const uint64_t *hashes,
                              size_t universe, size_t key)
{
    for (long n = 0;; n++) {
        enum bc_status st;

        alloc_failures = 0;
        fail_after = n;
        st = bc_lru_add(lru, keys[key].bytes, keys[key].len, hashes[key]);
        fail_after = -1;
        if (alloc_failures == 0) {
            assert_int_equal(st, BC_OK);
            model_add(m, key);
            check_same(lru, m, keys, hashes, universe);
            return;
        }
        assert_int_equal(st, BC_ERR_NOMEM);
        check_same(lru, m, keys, hashes, universe);
    }
}

static void run_model(const struct run *r)
{
    struct key *keys = calloc(r->universe, sizeof(*keys));
    uint64_t *hashes = calloc(r->universe, sizeof(*hashes));
    struct model m;
    struct bc_lru *lru = NULL;
    uint64_t rng = r->seed;

    assert_non_null(keys);
    assert_non_null(hashes);
    memset(&m, 0, sizeof(m));
    m.capacity = r->capacity;
    m.max_bytes = r->max_bytes;
    m.key_max = r->key_max;
    m.keys = keys;
    m.order = calloc(r->universe + 1, sizeof(size_t));
    assert_non_null(m.order);
    for (size_t i = 0; i < r->universe; i++) {
        make_key(i, &keys[i]);
        hashes[i] = key_hash(r->mode, i, &keys[i]);
    }

    if (r->key_max != 0)
        assert_int_equal(
            bc_lru_create_slab(r->capacity, r->key_max, r->max_bytes, &lru),
            BC_OK);
    else
        assert_int_equal(bc_lru_create(r->capacity, r->max_bytes, &lru), BC_OK);
    check_same(lru, &m, keys, hashes, r->universe);
    for (size_t op = 0; op < r->ops; op++) {
        uint64_t x = splitmix64(&rng);
        size_t key = (size_t)((x >> 8) % r->universe);
        const struct key *k = &keys[key];
        unsigned what = (unsigned)(x % 100);

        if (what < 35) {
            bool want = model_find(&m, key);
            assert_int_equal(bc_lru_find(lru, k->bytes, k->len, hashes[key]),
                             want);
        } else if (what < 45) {
            assert_int_equal(
                bc_lru_contains(lru, k->bytes, k->len, hashes[key]),
                model_pos(&m, key) >= 0);
        } else if (what < 85) {
            if (r->inject_failures) {
                add_with_failures(lru, &m, keys, hashes, r->universe, key);
            } else if (model_pos(&m, key) < 0 && (x >> 40) % 2) {
                /* Known absent: the lookup-free push must do the same. */
                model_add(&m, key);
                assert_int_equal(
                    bc_lru_push(lru, k->bytes, k->len, hashes[key]), BC_OK);
            } else {
                model_add(&m, key);
                assert_int_equal(bc_lru_add(lru, k->bytes, k->len, hashes[key]),
                                 BC_OK);
            }
        } else {
            bool want = model_remove(&m, key);
            assert_int_equal(bc_lru_remove(lru, k->bytes, k->len, hashes[key]),
                             want);
        }
        assert_int_equal(bc_lru_count(lru), m.count);
        if (op % r->check_every == 0)
            check_same(lru, &m, keys, hashes, r->universe);
    }
    check_same(lru, &m, keys, hashes, r->universe);

    bc_lru_free(lru);
    free(m.order);
    free(hashes);
    free(keys);
}

/* ---- tests ---- */

#define SMALL_UNIVERSE 40

static void test_model_small(void **state)
{
    static const size_t capacities[] = {
        0, 1, 2, 3, 7, SMALL_UNIVERSE - 1, SMALL_UNIVERSE, SMALL_UNIVERSE + 1};
    /* Keys are 0 to 15 bytes: 8 leaves some keys that never fit. */
    static const size_t byte_limits[] = {0, 8, 40};
    static const enum hash_mode modes[] = {HASH_REAL, HASH_CONSTANT,
                                           HASH_FOLDED};
    uint64_t seed = 1;

    (void)state;
    for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++) {
        for (size_t b = 0; b < sizeof(byte_limits) / sizeof(byte_limits[0]);
             b++) {
            for (size_t h = 0; h < sizeof(modes) / sizeof(modes[0]); h++) {
                struct run r = {SMALL_UNIVERSE, capacities[c], byte_limits[b],
                                modes[h],       4000,          16,
                                seed++,         false,         0};
                run_model(&r);
            }
        }
    }
}

/* Enough keys for entries to be evicted and reinserted many times over a
 * table of 2,048 buckets (uthash's bucket doublings are reached by the
 * constant and folded hashes of test_model_small, whose chains pass 10). */
static void test_model_large(void **state)
{
    struct run r = {3000, 1000, 0, HASH_REAL, 60000, 5000, 42, false, 0};
    (void)state;
    run_model(&r);
}

/* The slab mode against the same model: keys of at most 16 bytes (all of
 * the universe fits) and of at most 8 (the longer keys never stay), with
 * every hash mode and byte limit, and a large run where slots are reused
 * many times over. */
static void test_model_slab(void **state)
{
    static const size_t capacities[] = {
        0, 1, 2, 7, SMALL_UNIVERSE - 1, SMALL_UNIVERSE + 1};
    static const size_t byte_limits[] = {0, 8, 40};
    static const size_t key_maxes[] = {16, 8};
    static const enum hash_mode modes[] = {HASH_REAL, HASH_CONSTANT,
                                           HASH_FOLDED};
    uint64_t seed = 1000;

    (void)state;
    for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++)
        for (size_t b = 0; b < 3; b++)
            for (size_t km = 0; km < 2; km++)
                for (size_t h = 0; h < 3; h++) {
                    struct run r = {
                        SMALL_UNIVERSE, capacities[c], byte_limits[b],
                        modes[h],       3000,          16,
                        seed++,         false,         key_maxes[km]};
                    run_model(&r);
                }
    struct run big = {3000, 1000, 0, HASH_REAL, 60000, 5000, 43, false, 16};
    run_model(&big);
}

/* A slab cache allocates nothing per insert: with its slab and its table
 * made, thousands of inserts and evictions call malloc no more. */
static void test_slab_no_malloc_per_insert(void **state)
{
    struct bc_lru *lru = NULL;
    uint64_t x[2];

    (void)state;
    if (!malloc_is_wrapped())
        BC_SKIP();
    assert_int_equal(bc_lru_create_slab(100, sizeof(x), 0, &lru), BC_OK);
    x[0] = 0;
    x[1] = 0;
    assert_int_equal(bc_lru_push(lru, x, sizeof(x), 0), BC_OK);
    long before = alloc_calls;
    for (uint64_t i = 1; i < 5000; i++) {
        x[0] = i;
        x[1] = i * UINT64_C(0x9E3779B97F4A7C15);
        assert_int_equal(bc_lru_push(lru, x, sizeof(x), x[1]), BC_OK);
    }
    assert_int_equal(alloc_calls, before);
    assert_int_equal(bc_lru_count(lru), 100);
    /* Memory: 101 slots of 56 + 16 bytes, 256 buckets of 16 (LP64). */
    if (sizeof(void *) == 8) {
        struct bc_lru_stats st;
        bc_lru_stats(lru, &st);
        assert_int_equal(bc_lru_buckets(lru), 256);
        assert_int_equal(st.bytes, 101 * (56 + 16) + 256 * 16);
    }
    x[0] = 4999;
    x[1] = 4999 * UINT64_C(0x9E3779B97F4A7C15);
    assert_true(bc_lru_remove(lru, x, sizeof(x), x[1]));
    assert_false(bc_lru_contains(lru, x, sizeof(x), x[1]));
    bc_lru_free(lru);

    /* Malloc mode: 56 + len per entry held, plus the 32 buckets. */
    assert_int_equal(bc_lru_create(10, 0, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, "abc", 3, 1), BC_OK);
    assert_int_equal(bc_lru_add(lru, "hello", 5, 2), BC_OK);
    if (sizeof(void *) == 8) {
        struct bc_lru_stats st;
        bc_lru_stats(lru, &st);
        assert_int_equal(st.bytes, 2 * 56 + 3 + 5 + 32 * 16);
    }
    bc_lru_free(lru);
}

static void test_capacity_zero(void **state)
{
    struct bc_lru *lru = NULL;
    struct bc_lru_stats st;
    const char *k = "https://example.com/";
    uint64_t h = bc_lru_hash(k, strlen(k));

    (void)state;
    assert_int_equal(bc_lru_create(0, 0, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, k, strlen(k), h), BC_OK);
    assert_int_equal(bc_lru_add(lru, k, strlen(k), h), BC_OK);
    assert_false(bc_lru_contains(lru, k, strlen(k), h));
    assert_false(bc_lru_find(lru, k, strlen(k), h));
    assert_false(bc_lru_remove(lru, k, strlen(k), h));
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, 0);
    assert_int_equal(st.key_bytes, 0);
    assert_int_equal(st.inserts, 2);
    assert_int_equal(st.evictions, 2);
    assert_int_equal(st.hits, 0);
    assert_int_equal(st.misses, 1);
    bc_lru_free(lru);
}

static void test_capacity_one(void **state)
{
    struct bc_lru *lru = NULL;
    struct bc_lru_stats st;

    (void)state;
    assert_int_equal(bc_lru_create(1, 0, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, "a", 1, 1), BC_OK);
    assert_true(bc_lru_find(lru, "a", 1, 1));
    assert_int_equal(bc_lru_add(lru, "b", 1, 2), BC_OK);
    assert_false(bc_lru_contains(lru, "a", 1, 1));
    assert_true(bc_lru_contains(lru, "b", 1, 2));
    assert_int_equal(bc_lru_add(lru, "b", 1, 2), BC_OK); /* held: no change */
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, 1);
    assert_int_equal(st.inserts, 2);
    assert_int_equal(st.evictions, 1);
    assert_int_equal(st.hits, 1);
    assert_int_equal(st.misses, 0);
    assert_true(bc_lru_remove(lru, "b", 1, 2));
    assert_int_equal(bc_lru_count(lru), 0);
    assert_int_equal(bc_lru_add(lru, "c", 1, 3), BC_OK);
    assert_int_equal(bc_lru_count(lru), 1);
    bc_lru_free(lru);
}

/* capacity keys fit; the (capacity + 1)-th evicts exactly the least
 * recently used, and a find refreshes a key's recency. */
static void test_capacity_plus_one(void **state)
{
    enum { CAP = 100 };
    struct bc_lru *lru = NULL;
    struct bc_lru_stats st;
    char key[32];

    (void)state;
    assert_int_equal(bc_lru_create(CAP, 0, &lru), BC_OK);
    for (int i = 0; i < CAP; i++) {
        size_t len = (size_t)snprintf(key, sizeof(key), "key-%d", i);
        assert_int_equal(bc_lru_add(lru, key, len, bc_lru_hash(key, len)),
                         BC_OK);
    }
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, CAP);
    assert_int_equal(st.evictions, 0);

    /* key-0 is the oldest; touch it so that key-1 becomes the oldest. */
    assert_true(bc_lru_find(lru, "key-0", 5, bc_lru_hash("key-0", 5)));
    assert_int_equal(bc_lru_add(lru, "new", 3, bc_lru_hash("new", 3)), BC_OK);
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, CAP);
    assert_int_equal(st.evictions, 1);
    assert_true(bc_lru_contains(lru, "key-0", 5, bc_lru_hash("key-0", 5)));
    assert_false(bc_lru_contains(lru, "key-1", 5, bc_lru_hash("key-1", 5)));
    assert_true(bc_lru_contains(lru, "key-2", 5, bc_lru_hash("key-2", 5)));
    assert_true(bc_lru_contains(lru, "new", 3, bc_lru_hash("new", 3)));
    bc_lru_free(lru);
}

/* The recency order is uthash's own list of entries, relinked by hand on a
 * hit (lru.c, move_to_front): a find on the head (the oldest), on a key in
 * the middle and on the tail (the newest), then a remove of the new head,
 * must leave the keys evicted one by one in exactly the order of their last
 * use. Slab mode and malloc mode. */
static void test_recency_relinking(void **state)
{
    enum { CAP = 5 };
    (void)state;
    for (int slab = 0; slab < 2; slab++) {
        struct bc_lru *lru = NULL;
        uint64_t k;

        if (slab)
            assert_int_equal(bc_lru_create_slab(CAP, sizeof(k), 0, &lru),
                             BC_OK);
        else
            assert_int_equal(bc_lru_create(CAP, 0, &lru), BC_OK);
        for (k = 0; k < CAP; k++) /* oldest 0 1 2 3 4 newest */
            assert_int_equal(bc_lru_push(lru, &k, sizeof(k), k), BC_OK);
        k = 0;                                           /* the head */
        assert_true(bc_lru_find(lru, &k, sizeof(k), k)); /* 1 2 3 4 0 */
        k = 2;                                           /* the middle */
        assert_true(bc_lru_find(lru, &k, sizeof(k), k)); /* 1 3 4 0 2 */
        k = 2; /* the tail: no change */
        assert_true(bc_lru_find(lru, &k, sizeof(k), k));   /* 1 3 4 0 2 */
        k = 1;                                             /* remove the head */
        assert_true(bc_lru_remove(lru, &k, sizeof(k), k)); /* 3 4 0 2 */
        k = 5;
        assert_int_equal(bc_lru_push(lru, &k, sizeof(k), k), BC_OK);
        /* 3 4 0 2 5: each new key now evicts the oldest of these. */
        static const uint64_t order[] = {3, 4, 0, 2, 5};
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
            k = 100 + i;
            assert_int_equal(bc_lru_push(lru, &k, sizeof(k), k), BC_OK);
            assert_false(bc_lru_contains(lru, &order[i], sizeof(k), order[i]));
            for (size_t j = i + 1; j < sizeof(order) / sizeof(order[0]); j++)
                assert_true(
                    bc_lru_contains(lru, &order[j], sizeof(k), order[j]));
        }
        assert_int_equal(bc_lru_count(lru), CAP);
        bc_lru_free(lru);
    }
}

static void test_byte_limit(void **state)
{
    struct bc_lru *lru = NULL;
    struct bc_lru_stats st;

    (void)state;
    assert_int_equal(bc_lru_create(100, 10, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, "aaaa", 4, 1), BC_OK);
    assert_int_equal(bc_lru_add(lru, "bbbb", 4, 2), BC_OK);
    bc_lru_stats(lru, &st);
    assert_int_equal(st.key_bytes, 8);
    assert_int_equal(st.max_bytes, 10);

    /* 8 + 3 > 10: the oldest goes. */
    assert_int_equal(bc_lru_add(lru, "ccc", 3, 3), BC_OK);
    assert_false(bc_lru_contains(lru, "aaaa", 4, 1));
    assert_true(bc_lru_contains(lru, "bbbb", 4, 2));
    bc_lru_stats(lru, &st);
    assert_int_equal(st.key_bytes, 7);
    assert_int_equal(st.evictions, 1);

    /* One byte over the limit: in and out at once, nothing else touched. */
    assert_int_equal(bc_lru_add(lru, "eleven-byte", 11, 4), BC_OK);
    assert_false(bc_lru_contains(lru, "eleven-byte", 11, 4));
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, 2);
    assert_int_equal(st.key_bytes, 7);
    assert_int_equal(st.inserts, 4);
    assert_int_equal(st.evictions, 2);

    /* Exactly the limit: held, alone. */
    assert_int_equal(bc_lru_add(lru, "ten-bytes!", 10, 5), BC_OK);
    assert_true(bc_lru_contains(lru, "ten-bytes!", 10, 5));
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, 1);
    assert_int_equal(st.key_bytes, 10);
    assert_int_equal(st.evictions, 4);

    /* An empty key costs no bytes. */
    assert_int_equal(bc_lru_add(lru, "", 0, 6), BC_OK);
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, 2);
    assert_int_equal(st.key_bytes, 10);
    bc_lru_free(lru);
}

static void test_nul_and_empty_keys(void **state)
{
    struct bc_lru *lru = NULL;
    /* One hash for all: only length and bytes tell them apart. */
    const uint64_t h = 7;

    (void)state;
    assert_int_equal(bc_lru_create(10, 0, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, "", 0, h), BC_OK);
    assert_true(bc_lru_contains(lru, NULL, 0, h)); /* NULL, 0 is "" */
    assert_false(bc_lru_contains(lru, "\0", 1, h));
    assert_int_equal(bc_lru_add(lru, "\0", 1, h), BC_OK);
    assert_int_equal(bc_lru_add(lru, "\0\0", 2, h), BC_OK);
    assert_int_equal(bc_lru_add(lru, "a\0b", 3, h), BC_OK);
    assert_false(bc_lru_contains(lru, "a\0c", 3, h));
    assert_false(bc_lru_contains(lru, "a", 1, h));
    assert_int_equal(bc_lru_count(lru), 4);
    assert_true(bc_lru_find(lru, NULL, 0, h));
    assert_true(bc_lru_remove(lru, "\0", 1, h));
    assert_true(bc_lru_contains(lru, "", 0, h));
    assert_true(bc_lru_contains(lru, "\0\0", 2, h));
    assert_true(bc_lru_remove(lru, NULL, 0, h));
    assert_false(bc_lru_contains(lru, "", 0, h));
    assert_int_equal(bc_lru_count(lru), 2);
    bc_lru_free(lru);

    /* The hash of the empty key is XXH3-64's, for NULL and "" alike. */
    assert_int_equal(bc_lru_hash(NULL, 0), UINT64_C(0x2D06800538D394C2));
    assert_int_equal(bc_lru_hash("", 0), UINT64_C(0x2D06800538D394C2));
    assert_int_not_equal(bc_lru_hash("\0", 1), bc_lru_hash("", 0));
}

static void test_hash_collision(void **state)
{
    struct bc_lru *lru = NULL;
    const uint64_t h = UINT64_C(0xdeadbeefcafef00d);

    (void)state;
    assert_int_equal(bc_lru_create(10, 0, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, "first", 5, h), BC_OK);
    assert_false(bc_lru_contains(lru, "other", 5, h));
    assert_int_equal(bc_lru_add(lru, "other", 5, h), BC_OK);
    assert_int_equal(bc_lru_count(lru), 2);
    assert_true(bc_lru_find(lru, "first", 5, h));
    assert_true(bc_lru_find(lru, "other", 5, h));
    assert_true(bc_lru_remove(lru, "first", 5, h));
    assert_false(bc_lru_contains(lru, "first", 5, h));
    assert_true(bc_lru_contains(lru, "other", 5, h));
    bc_lru_free(lru);
}

static void test_bad_args(void **state)
{
    struct bc_lru *lru = NULL;
    struct bc_lru *const sentinel = (struct bc_lru *)&lru;
    struct bc_lru *out = sentinel;
    struct bc_lru_stats st;

    (void)state;
    assert_int_equal(bc_lru_create(10, 0, NULL), BC_ERR_INVALID_ARG);
    if ((uintmax_t)SIZE_MAX > (uintmax_t)UINT_MAX) {
        assert_int_equal(bc_lru_create((size_t)UINT_MAX, 0, &out),
                         BC_ERR_TOO_LARGE);
        assert_ptr_equal(out, sentinel);
    }
    assert_int_equal(bc_lru_create((size_t)UINT_MAX - 1, 0, &lru), BC_OK);
    bc_lru_free(lru);

    /* NULL cache: empty, refuses adds, never crashes. */
    bc_lru_free(NULL);
    assert_int_equal(bc_lru_add(NULL, "a", 1, 1), BC_ERR_INVALID_ARG);
    assert_false(bc_lru_find(NULL, "a", 1, 1));
    assert_false(bc_lru_contains(NULL, "a", 1, 1));
    assert_false(bc_lru_remove(NULL, "a", 1, 1));
    assert_int_equal(bc_lru_count(NULL), 0);
    memset(&st, 0xff, sizeof(st));
    bc_lru_stats(NULL, &st);
    assert_int_equal(st.count, 0);
    assert_int_equal(st.hits, 0);

    assert_int_equal(bc_lru_create(10, 0, &lru), BC_OK);
    assert_int_equal(bc_lru_add(lru, NULL, 3, 1), BC_ERR_INVALID_ARG);
    assert_false(bc_lru_find(lru, NULL, 3, 1));
    bc_lru_stats(lru, NULL);
    bc_lru_stats(lru, &st);
    assert_int_equal(st.inserts, 0);
    assert_int_equal(st.misses, 0);

    /* A key longer than uthash's unsigned length can never be held: it is
     * counted in and out at once, and its bytes are never read (a 1-byte
     * buffer: AddressSanitizer would see a read). */
    if ((uintmax_t)SIZE_MAX > (uintmax_t)UINT_MAX) {
        const size_t huge = (size_t)UINT_MAX + 1;
        char one = 'x';
        assert_int_equal(bc_lru_add(lru, &one, huge, 9), BC_OK);
        assert_false(bc_lru_contains(lru, &one, huge, 9));
        assert_false(bc_lru_find(lru, &one, huge, 9));
        assert_false(bc_lru_remove(lru, &one, huge, 9));
        bc_lru_stats(lru, &st);
        assert_int_equal(st.count, 0);
        assert_int_equal(st.inserts, 1);
        assert_int_equal(st.evictions, 1);
    }
    bc_lru_free(lru);
}

static void test_allocation_failure(void **state)
{
    struct bc_lru *const sentinel = (struct bc_lru *)&sentinel;
    struct bc_lru *out = sentinel;

    (void)state;
    if (!malloc_is_wrapped()) {
        BC_SKIP(); /* not linked with --wrap */
        return;
    }
    /* create: its one allocation fails. */
    fail_after = 0;
    assert_int_equal(bc_lru_create(5, 0, &out), BC_ERR_NOMEM);
    assert_ptr_equal(out, sentinel);
    fail_after = -1;

    /* Every add of a model run with each of its allocations failed in turn:
     * the entry, uthash's table and its presized buckets, and bucket
     * doublings (the constant hash puts every key in one chain, so the 10th
     * key doubles; the real hash at one entry per bucket never does). */
    {
        struct run r = {SMALL_UNIVERSE, 20, 0, HASH_CONSTANT, 3000, 1, 7,
                        true,           0};
        run_model(&r);
    }
    {
        struct run r = {600, 300, 0, HASH_REAL, 3000, 100, 8, true, 0};
        run_model(&r);
    }
    /* The slab mode: the handle or the slab fails at creation; then only
     * uthash's table and doublings can fail, and a failed add gives its
     * slot back. */
    for (long n = 0; n < 2; n++) {
        out = sentinel;
        fail_after = n;
        assert_int_equal(bc_lru_create_slab(5, 16, 0, &out), BC_ERR_NOMEM);
        assert_ptr_equal(out, sentinel);
        fail_after = -1;
    }
    {
        struct run r = {SMALL_UNIVERSE, 20, 0, HASH_CONSTANT, 3000, 1, 9,
                        true,           16};
        run_model(&r);
    }
}

/*
 * A full slab cache replaces its least recently used entry with the new key
 * in one step (lru.c, replace_head()), unless the new key's chain would
 * reach uthash's doubling threshold (10 entries): the doubling allocates,
 * and when that fails the old entry must still be held. Forty keys fill a
 * cache of 128 buckets one to a bucket; then keys whose hashes all fall in
 * bucket 0 replace them one by one, and the one that makes that chain 10
 * long has its doubling failed: BC_ERR_NOMEM, with the cache as it was.
 */
static void test_slab_replace_doubling_fails(void **state)
{
    struct bc_lru *lru = NULL;
    struct bc_lru_stats st;
    uint64_t k[2];

    (void)state;
    if (!malloc_is_wrapped()) {
        BC_SKIP();
        return;
    }
    assert_int_equal(bc_lru_create_slab(40, sizeof(k), 0, &lru), BC_OK);
    assert_int_equal(bc_lru_initial_buckets(lru), 128);
    /* Fillers 0..39 in buckets 1..40: hash i * 128 + i + 1. */
    for (uint64_t i = 0; i < 40; i++) {
        k[0] = i;
        k[1] = 0;
        assert_int_equal(bc_lru_push(lru, k, sizeof(k), i * 128 + i + 1),
                         BC_OK);
    }
    /* Nine keys of bucket 0 (hash (j + 1) 2^8) replace fillers 0..8. */
    for (uint64_t j = 0; j < 9; j++) {
        k[0] = j;
        k[1] = 1;
        assert_int_equal(bc_lru_push(lru, k, sizeof(k), (j + 1) << 8), BC_OK);
    }
    assert_int_equal(bc_lru_buckets(lru), 128);
    /* The tenth makes the chain 10 long: its doubling fails. */
    k[0] = 9;
    k[1] = 1;
    alloc_failures = 0;
    fail_after = 0;
    assert_int_equal(bc_lru_push(lru, k, sizeof(k), UINT64_C(10) << 8),
                     BC_ERR_NOMEM);
    fail_after = -1;
    assert_int_equal(alloc_failures, 1);
    assert_false(bc_lru_contains(lru, k, sizeof(k), UINT64_C(10) << 8));
    bc_lru_stats(lru, &st);
    assert_int_equal(st.count, 40);
    assert_int_equal(st.inserts, 49);
    assert_int_equal(st.evictions, 9);
    assert_int_equal(st.key_bytes, 40 * sizeof(k));
    for (uint64_t i = 0; i < 40; i++) {
        uint64_t f[2] = {i, 0};
        assert_int_equal(bc_lru_contains(lru, f, sizeof(f), i * 128 + i + 1),
                         i >= 9);
    }
    /* Allowed, it doubles the buckets and evicts filler 9. */
    assert_int_equal(bc_lru_push(lru, k, sizeof(k), UINT64_C(10) << 8), BC_OK);
    assert_true(bc_lru_contains(lru, k, sizeof(k), UINT64_C(10) << 8));
    k[0] = 9;
    k[1] = 0;
    assert_false(bc_lru_contains(lru, k, sizeof(k), 9 * 128 + 9 + 1));
    assert_int_equal(bc_lru_count(lru), 40);
    assert_int_equal(bc_lru_buckets(lru), 256);
    bc_lru_free(lru);
}

/* ---- bucket presizing (lru_int.h) ---- */

/* buckets = min(2^24, max(2^5, 2^ceil(log2(2 capacity)))), on both sides
 * of each bound, without creating the tables (2^24 buckets are 256 MiB);
 * and 2 capacity <= buckets < 4 capacity from 16 to 2^23 entries. */
static void test_initial_buckets_formula(void **state)
{
    static const struct {
        size_t capacity;
        size_t buckets;
    } cases[] = {
        {0, 32},
        {1, 32},
        {16, 32},
        {17, 64},
        {32, 64},
        {33, 128},
        {1000, 2048},
        {1024, 2048},
        {1025, 4096},
        {50000, 131072},
        {(size_t)1 << 22, (size_t)1 << 23},
        {((size_t)1 << 22) + 1, (size_t)1 << 24},
        {(size_t)1 << 23, (size_t)1 << 24},
        {((size_t)1 << 23) + 1, (size_t)1 << 24},
        {(size_t)UINT_MAX - 1, (size_t)1 << 24},
    };

    (void)state;
    assert_int_equal(bc_lru_initial_buckets(NULL), 0);
    assert_int_equal(bc_lru_buckets(NULL), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct bc_lru *lru = NULL;
        assert_int_equal(bc_lru_create(cases[i].capacity, 0, &lru), BC_OK);
        assert_int_equal(bc_lru_initial_buckets(lru), cases[i].buckets);
        assert_int_equal(bc_lru_buckets(lru), 0); /* no table yet */
        bc_lru_free(lru);
    }
    for (size_t cap = 16; cap <= ((size_t)1 << 23); cap += cap / 7 + 1) {
        struct bc_lru *lru = NULL;
        assert_int_equal(bc_lru_create(cap, 0, &lru), BC_OK);
        assert_true(bc_lru_initial_buckets(lru) >= 2 * cap);
        assert_true(bc_lru_initial_buckets(lru) < 4 * cap);
        bc_lru_free(lru);
    }
}

/* The table really starts with that many buckets: at the first insert,
 * after the cache was emptied and refilled, and still when it is full (one
 * entry per bucket: no chain reaches uthash's doubling threshold). */
static void test_buckets_presized(void **state)
{
    static const size_t capacities[] = {1, 33, 1000, 50000};
    char key[32];

    (void)state;
    for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++) {
        const size_t cap = capacities[c];
        struct bc_lru *lru = NULL;
        size_t want;
        int len;

        assert_int_equal(bc_lru_create(cap, 0, &lru), BC_OK);
        want = bc_lru_initial_buckets(lru);
        len = snprintf(key, sizeof(key), "k%zu", (size_t)0);
        assert_int_equal(
            bc_lru_add(lru, key, (size_t)len, bc_lru_hash(key, (size_t)len)),
            BC_OK);
        assert_int_equal(bc_lru_buckets(lru), want);

        /* Emptied, uthash frees its table; the next insert makes a new one
         * of the same size. */
        assert_true(bc_lru_remove(lru, key, (size_t)len,
                                  bc_lru_hash(key, (size_t)len)));
        assert_int_equal(bc_lru_buckets(lru), 0);

        for (size_t i = 0; i < 2 * cap; i++) {
            len = snprintf(key, sizeof(key), "https://h%zu.example/p", i);
            assert_int_equal(bc_lru_add(lru, key, (size_t)len,
                                        bc_lru_hash(key, (size_t)len)),
                             BC_OK);
            if (i == 0)
                assert_int_equal(bc_lru_buckets(lru), want);
        }
        assert_int_equal(bc_lru_count(lru), cap);
        assert_int_equal(bc_lru_buckets(lru), want);
        bc_lru_free(lru);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_small),
        cmocka_unit_test(test_model_large),
        cmocka_unit_test(test_model_slab),
        cmocka_unit_test(test_slab_no_malloc_per_insert),
        cmocka_unit_test(test_capacity_zero),
        cmocka_unit_test(test_capacity_one),
        cmocka_unit_test(test_capacity_plus_one),
        cmocka_unit_test(test_byte_limit),
        cmocka_unit_test(test_nul_and_empty_keys),
        cmocka_unit_test(test_hash_collision),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_recency_relinking),
        cmocka_unit_test(test_slab_replace_doubling_fails),
        cmocka_unit_test(test_initial_buckets_formula),
        cmocka_unit_test(test_buckets_presized),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
