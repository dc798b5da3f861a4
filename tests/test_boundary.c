/*
 * test_boundary.c - the contracts of the dedup module's headers (bloom.h,
 * cbloom.h, lru.h, seen.h, window.h, redis_seen.h where no server is
 * needed) and of robots.h at their edges: every public function called
 * with NULL handles and pointers, zero lengths and counts, and huge ones
 * (SIZE_MAX, UINT64_MAX), checking the code its header documents, that a
 * failed call writes nothing through its out pointer, and that nothing
 * crashes (run under the sanitizers by the test build).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/cbloom.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/lru.h"
#include "bloomcrawl/redis_seen.h"
#include "bloomcrawl/robots.h"
#include "bloomcrawl/seen.h"
#include "bloomcrawl/window.h"

/* A path no file is at (and that cannot be created: its parent is
 * missing). */
#define NO_FILE "/nonexistent-bloomcrawl-boundary/dir/file"

/* An out pointer a failed call must leave as it was. */
#define SENTINEL ((void *)0x5e17)

/* ---- bloom.h ---------------------------------------------------------- */

static void test_bloom_sizing_edges(void **state)
{
    (void)state;
    struct bc_bloom_sizing s;
    assert_int_equal(bc_bloom_size(1000, 0.01, BC_BLOOM_CLASSIC, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_size(0, 0.01, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_size(1000, 0.0, BC_BLOOM_BLOCKED, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_size(1000, 1.0, BC_BLOOM_BLOCKED, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_size(1000, NAN, BC_BLOOM_BLOCKED, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_size(UINT64_MAX, 0.01, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_TOO_LARGE);
    assert_int_equal(bc_bloom_size(UINT64_MAX, 0.01, BC_BLOOM_BLOCKED, &s),
                     BC_ERR_TOO_LARGE);
    assert_int_equal(bc_bloom_size(1000, 1e-300, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_TOO_LARGE);

    assert_int_equal(bc_bloom_rate(1, 1024, 3, BC_BLOOM_CLASSIC, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_rate(0, 1024, 3, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_rate(1, 0, 3, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_rate(1, 1024, 0, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_bloom_rate(1, 1024, BC_BLOOM_MAX_K + 1, BC_BLOOM_CLASSIC, &s),
        BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_rate(1, UINT64_MAX, 3, BC_BLOOM_CLASSIC, &s),
                     BC_ERR_TOO_LARGE);
    assert_int_equal(bc_bloom_rate(1, UINT64_MAX, 3, BC_BLOOM_BLOCKED, &s),
                     BC_ERR_TOO_LARGE);

    /* The formulas at zero: no keys, no false positives; k below 1/2 in
     * the blocked formula is rate 1 (bloom.h). */
    assert_true(bc_bloom_fpr_classic(0, 1024, 3) == 0.0);
    assert_true(bc_bloom_fpr_classic_upper(0, 1024, 3) >= 0.0);
    assert_true(bc_bloom_fpr_blocked(0, 1024, 3) == 0.0);
    assert_true(bc_bloom_fpr_blocked(100, 1024, 0) == 1.0);
}

static void test_bloom_create_edges(void **state)
{
    (void)state;
    struct bc_bloom *b = SENTINEL;
    assert_int_equal(bc_bloom_create(1000, 0.01, BC_BLOOM_CLASSIC, 0, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_create(0, 0.01, BC_BLOOM_CLASSIC, 0, 0, &b),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_bloom_create(UINT64_MAX, 0.01, BC_BLOOM_CLASSIC, 0, 0, &b),
        BC_ERR_TOO_LARGE);
    assert_int_equal(
        bc_bloom_create_mk(1, 1024, 3, BC_BLOOM_CLASSIC, 0, 0, NULL),
        BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_create_mk(1, 0, 3, BC_BLOOM_CLASSIC, 0, 0, &b),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_bloom_create_mk(1, UINT64_MAX, 3, BC_BLOOM_BLOCKED, 0, 0, &b),
        BC_ERR_TOO_LARGE);
    assert_ptr_equal(b, SENTINEL);

    assert_int_equal(bc_bloom_load(NULL, 0, &b), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_load(NO_FILE, 0, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_load(NO_FILE, 0, &b), BC_ERR_IO);
    assert_int_equal(bc_bloom_load_mem(NULL, 0, 0, &b), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_load_mem("x", 1, 0, NULL), BC_ERR_INVALID_ARG);
    enum bc_status st = bc_bloom_load_mem("", 0, 0, &b);
    assert_true(st == BC_ERR_TRUNCATED || st == BC_ERR_FORMAT);
    assert_ptr_equal(b, SENTINEL);

    assert_int_equal(bc_bloom_save(NULL, NO_FILE), BC_ERR_INVALID_ARG);
    bc_bloom_free(NULL);
}

/* Every call on a NULL filter: an empty filter that stores nothing. */
static void test_bloom_null_filter(void **state)
{
    (void)state;
    struct bc_hash128 h = bc_bloom_hash(NULL, "a", 1);
    assert_true(h.lo == 0 && h.hi == 0);
    bc_bloom_add(NULL, "a", 1);
    assert_false(bc_bloom_contains(NULL, "a", 1));
    assert_false(bc_bloom_test_and_add(NULL, "a", 1));
    bc_bloom_add_hash(NULL, h);
    assert_false(bc_bloom_contains_hash(NULL, h));
    assert_false(bc_bloom_test_and_add_hash(NULL, h));
    bc_bloom_prefetch(NULL, h);
    bool out[2] = {true, true};
    struct bc_hash128 hs[2] = {{1, 2}, {3, 4}};
    bc_bloom_test_and_add_batch(NULL, hs, 2, out);
    assert_false(out[0] || out[1]);
    out[0] = out[1] = true;
    bc_bloom_contains_batch(NULL, hs, 2, out);
    assert_false(out[0] || out[1]);
    struct bc_bloom_stats st;
    memset(&st, 0xff, sizeof(st));
    bc_bloom_stats(NULL, &st);
    assert_int_equal(st.m_bits, 0);
    assert_int_equal(st.inserts, 0);
    assert_int_equal(bc_bloom_inserts(NULL), 0);
    bc_bloom_clear(NULL);
}

/* NULL keys, zero and huge counts on a real filter. */
static void test_bloom_null_args(void **state)
{
    (void)state;
    for (int layout = 0; layout < 2; layout++) {
        struct bc_bloom *b;
        assert_int_equal(bc_bloom_create(1000, 0.01, layout, 7, 0, &b), BC_OK);
        /* The empty key, NULL or not, is one key. */
        assert_true(bc_bloom_test_and_add(b, NULL, 0));
        assert_true(bc_bloom_contains(b, "", 0));
        assert_false(bc_bloom_test_and_add(b, "", 0));
        /* A NULL key with a length is no key: nothing added. */
        uint64_t before = bc_bloom_inserts(b);
        bc_bloom_add(b, NULL, 5);
        assert_false(bc_bloom_test_and_add(b, NULL, SIZE_MAX));
        assert_false(bc_bloom_contains(b, NULL, 5));
        struct bc_hash128 h = bc_bloom_hash(b, NULL, 5);
        assert_true(h.lo == 0 && h.hi == 0);
        assert_int_equal(bc_bloom_inserts(b), before);
        /* Batches of nothing; NULL arrays with a count write nothing. */
        bc_bloom_test_and_add_batch(b, NULL, 0, NULL);
        bc_bloom_contains_batch(b, NULL, 0, NULL);
        bc_bloom_test_and_add_batch(b, NULL, SIZE_MAX, NULL);
        bc_bloom_contains_batch(b, NULL, SIZE_MAX, NULL);
        bool out = true;
        bc_bloom_test_and_add_batch(b, NULL, 1, &out);
        assert_true(out);
        assert_int_equal(bc_bloom_inserts(b), before);
        bc_bloom_stats(b, NULL);
        assert_int_equal(bc_bloom_save(b, NULL), BC_ERR_INVALID_ARG);
        assert_int_equal(bc_bloom_save(b, NO_FILE), BC_ERR_IO);
        bc_bloom_free(b);
    }
}

/* ---- cbloom.h --------------------------------------------------------- */

static void test_cbloom_edges(void **state)
{
    (void)state;
    struct bc_cbloom *c = SENTINEL;
    assert_int_equal(bc_cbloom_create(1000, 0.01, 0, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create(0, 0.01, 0, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create(1000, 2.0, 0, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create(UINT64_MAX, 0.01, 0, &c),
                     BC_ERR_TOO_LARGE);
    assert_int_equal(bc_cbloom_create_mk(1, 64, 3, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(0, 64, 3, 0, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(1, 0, 3, 0, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(1, 64, 0, 0, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(1, 64, BC_BLOOM_MAX_K + 1, 0, &c),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(1, UINT64_MAX, 3, 0, &c),
                     BC_ERR_TOO_LARGE);
    assert_int_equal(bc_cbloom_load(NULL, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_load(NO_FILE, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_load(NO_FILE, &c), BC_ERR_IO);
    assert_int_equal(bc_cbloom_load_mem(NULL, 0, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_load_mem("x", 1, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_load_mem("", 0, &c), BC_ERR_TRUNCATED);
    assert_ptr_equal(c, SENTINEL);

    /* A NULL filter is empty (cbloom.h). */
    bc_cbloom_free(NULL);
    bc_cbloom_add(NULL, "a", 1);
    assert_false(bc_cbloom_contains(NULL, "a", 1));
    assert_int_equal(bc_cbloom_remove(NULL, "a", 1), BC_ERR_INVALID_ARG);
    struct bc_cbloom_stats st;
    memset(&st, 0xff, sizeof(st));
    bc_cbloom_stats(NULL, &st);
    assert_int_equal(st.m, 0);
    assert_int_equal(bc_cbloom_save(NULL, NO_FILE), BC_ERR_INVALID_ARG);

    assert_int_equal(bc_cbloom_create(1000, 0.01, 0, &c), BC_OK);
    bc_cbloom_add(c, NULL, 0);
    assert_true(bc_cbloom_contains(c, NULL, 0));
    assert_true(bc_cbloom_contains(c, "", 0));
    bc_cbloom_add(c, NULL, SIZE_MAX); /* no key: nothing */
    assert_false(bc_cbloom_contains(c, NULL, SIZE_MAX));
    assert_int_equal(bc_cbloom_remove(c, NULL, SIZE_MAX), BC_ERR_INVALID_ARG);
    bc_cbloom_stats(c, &st);
    assert_int_equal(st.keys, 1);
    assert_int_equal(bc_cbloom_remove(c, "", 0), BC_OK);
    assert_int_equal(bc_cbloom_remove(c, NULL, 0), BC_ERR_NOT_FOUND);
    bc_cbloom_stats(c, NULL);
    assert_int_equal(bc_cbloom_save(c, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_save(c, NO_FILE), BC_ERR_IO);
    bc_cbloom_free(c);
}

/* ---- lru.h ------------------------------------------------------------ */

static void test_lru_edges(void **state)
{
    (void)state;
    struct bc_lru *l = SENTINEL;
    assert_int_equal(bc_lru_create(10, 0, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_lru_create(SIZE_MAX, 0, &l), BC_ERR_TOO_LARGE);
    assert_int_equal(bc_lru_create_slab(10, 16, 0, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_lru_create_slab(SIZE_MAX, 16, 0, &l), BC_ERR_TOO_LARGE);
    assert_int_equal(bc_lru_create_slab(10, SIZE_MAX, 0, &l), BC_ERR_TOO_LARGE);
    assert_ptr_equal(l, SENTINEL);

    /* A NULL cache is empty (lru.h). */
    bc_lru_free(NULL);
    assert_false(bc_lru_find(NULL, "a", 1, 1));
    assert_false(bc_lru_contains(NULL, "a", 1, 1));
    assert_int_equal(bc_lru_add(NULL, "a", 1, 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_lru_push(NULL, "a", 1, 1), BC_ERR_INVALID_ARG);
    bc_lru_prefetch(NULL, 1);
    assert_false(bc_lru_remove(NULL, "a", 1, 1));
    assert_int_equal(bc_lru_count(NULL), 0);
    struct bc_lru_stats st;
    memset(&st, 0xff, sizeof(st));
    bc_lru_stats(NULL, &st);
    assert_int_equal(st.count, 0);
    assert_int_equal(st.inserts, 0);

    /* The hash of the empty key, NULL or not; a NULL key with a length is
     * no key (lru.h: 0). */
    assert_true(bc_lru_hash(NULL, 0) == bc_lru_hash("", 0));
    assert_true(bc_lru_hash(NULL, SIZE_MAX) == 0);

    for (int slab = 0; slab < 2; slab++) {
        if (slab)
            assert_int_equal(bc_lru_create_slab(4, 8, 0, &l), BC_OK);
        else
            assert_int_equal(bc_lru_create(4, 0, &l), BC_OK);
        assert_int_equal(bc_lru_add(l, NULL, 5, 1), BC_ERR_INVALID_ARG);
        assert_int_equal(bc_lru_push(l, NULL, SIZE_MAX, 1), BC_ERR_INVALID_ARG);
        assert_false(bc_lru_find(l, NULL, 5, 1));
        assert_false(bc_lru_contains(l, NULL, 5, 1));
        assert_false(bc_lru_remove(l, NULL, 5, 1));
        bc_lru_stats(l, &st);
        assert_int_equal(st.inserts, 0);
        assert_int_equal(st.misses, 0);
        /* The empty key is a key. */
        assert_int_equal(bc_lru_add(l, NULL, 0, bc_lru_hash(NULL, 0)), BC_OK);
        assert_true(bc_lru_contains(l, "", 0, bc_lru_hash("", 0)));
        /* A key longer than UINT_MAX can never be held: counted as
         * inserted and evicted at once, its bytes never read. */
        assert_int_equal(bc_lru_add(l, "x", SIZE_MAX, 9), BC_OK);
        assert_false(bc_lru_contains(l, "x", SIZE_MAX, 9));
        bc_lru_stats(l, &st);
        assert_int_equal(st.count, 1);
        assert_int_equal(st.inserts, 2);
        assert_int_equal(st.evictions, 1);
        bc_lru_stats(l, NULL);
        bc_lru_free(l);
    }
}

/* ---- window.h --------------------------------------------------------- */

static void test_window_edges(void **state)
{
    (void)state;
    struct bc_window_sizing sz;
    bc_window_config_init(NULL);
    assert_int_equal(bc_window_size(1000, 0.01, 4, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(0, 0.01, 4, 0, &sz), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(1000, 0.0, 4, 0, &sz), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(1000, 0.01, 1, 0, &sz), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(1000, 0.01, 17, 0, &sz),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(1000, 0.01, 4, 64, &sz),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(UINT64_MAX, 0.01, 4, 0, &sz),
                     BC_ERR_TOO_LARGE);
    assert_true(isnan(bc_window_fpr_segment(10, 0, 3, 256)));
    assert_true(isnan(bc_window_fpr_segment(10, 4, 0, 256)));
    assert_true(isnan(bc_window_fpr_segment(10, 4, 3, 64)));
    assert_true(bc_window_fpr_segment(0, 4, 3, 256) == 0.0);

    struct bc_window_config c;
    bc_window_config_init(&c);
    struct bc_window *w = SENTINEL;
    assert_int_equal(bc_window_create(NULL, 0, &w), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_create(&c, 0, NULL), BC_ERR_INVALID_ARG);
    c.window = 0;
    assert_int_equal(bc_window_create(&c, 0, &w), BC_ERR_INVALID_ARG);
    c.window = UINT64_MAX;
    assert_int_equal(bc_window_create(&c, 0, &w), BC_ERR_TOO_LARGE);
    bc_window_config_init(&c);
    c.kind = BC_WINDOW_TIME;
    c.capacity = 0;
    assert_int_equal(bc_window_create(&c, 0, &w), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_load(NULL, &w), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_load(NO_FILE, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_load(NO_FILE, &w), BC_ERR_IO);
    assert_int_equal(bc_window_load_mem(NULL, 0, &w), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_load_mem("x", 1, NULL), BC_ERR_INVALID_ARG);
    enum bc_status st = bc_window_load_mem("", 0, &w);
    assert_true(st == BC_ERR_TRUNCATED || st == BC_ERR_FORMAT);
    assert_ptr_equal(w, SENTINEL);
    assert_int_equal(bc_window_save(NULL, NO_FILE), BC_ERR_INVALID_ARG);
}

static void test_window_null_filter(void **state)
{
    (void)state;
    bc_window_free(NULL);
    struct bc_hash128 h = bc_window_hash(NULL, "a", 1);
    assert_true(h.lo == 0 && h.hi == 0);
    assert_false(bc_window_contains(NULL, "a", 1, 0));
    assert_false(bc_window_test_and_add(NULL, "a", 1, 0));
    bc_window_add(NULL, "a", 1, 0);
    assert_false(bc_window_contains_hash(NULL, h, 0));
    assert_false(bc_window_test_and_add_hash(NULL, h, 0));
    bc_window_add_hash(NULL, h, 0);
    bc_window_prefetch(NULL, h);
    bool out[2] = {true, true};
    struct bc_hash128 hs[2] = {{1, 2}, {3, 4}};
    bc_window_test_and_add_batch(NULL, hs, 2, 0, out);
    assert_false(out[0] || out[1]);
    out[0] = out[1] = true;
    bc_window_contains_batch(NULL, hs, 2, 0, out);
    assert_false(out[0] || out[1]);
    bc_window_advance(NULL, 5);
    struct bc_window_stats st;
    memset(&st, 0xff, sizeof(st));
    bc_window_stats(NULL, 0, &st);
    assert_int_equal(st.inserts, 0);
    assert_int_equal(st.bytes, 0);
}

static void test_window_null_args(void **state)
{
    (void)state;
    struct bc_window_config c;
    bc_window_config_init(&c);
    c.window = 1000;
    struct bc_window *w;
    assert_int_equal(bc_window_create(&c, 0, &w), BC_OK);
    assert_true(bc_window_test_and_add(w, NULL, 0, 0));
    assert_true(bc_window_contains(w, "", 0, 0));
    bc_window_add(w, NULL, 5, 0);
    assert_false(bc_window_test_and_add(w, NULL, SIZE_MAX, 0));
    assert_false(bc_window_contains(w, NULL, 5, 0));
    struct bc_hash128 h = bc_window_hash(w, NULL, 5);
    assert_true(h.lo == 0 && h.hi == 0);
    bc_window_test_and_add_batch(w, NULL, 0, 0, NULL);
    bc_window_contains_batch(w, NULL, 0, 0, NULL);
    bc_window_test_and_add_batch(w, NULL, SIZE_MAX, 0, NULL);
    bc_window_contains_batch(w, NULL, SIZE_MAX, 0, NULL);
    struct bc_window_stats st;
    bc_window_stats(w, 0, &st);
    assert_int_equal(st.inserts, 1);
    bc_window_stats(w, 0, NULL);
    assert_int_equal(bc_window_save(w, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_save(w, NO_FILE), BC_ERR_IO);
    bc_window_free(w);
}

/* ---- seen.h ----------------------------------------------------------- */

static void test_seen_null_handle(void **state)
{
    (void)state;
    enum bc_seen_verdict v = (enum bc_seen_verdict)77;
    bc_seen_config_init(NULL);
    bc_seen_free(NULL);
    assert_string_equal(bc_seen_verdict_name((enum bc_seen_verdict)77),
                        "UNKNOWN");
    assert_int_equal(bc_seen_test_and_add(NULL, "a", 1, &v),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_test_and_add_batch(NULL, NULL, NULL, 0, NULL),
                     BC_ERR_INVALID_ARG);
    /* issue 21: bc_seen_peek(NULL, ...) crashed. */
    assert_int_equal(bc_seen_peek(NULL, "a", 1, &v), BC_ERR_INVALID_ARG);
    assert_int_equal((int)v, 77);
    assert_int_equal(bc_seen_forget(NULL, "a", 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_save(NULL, NO_FILE), BC_ERR_INVALID_ARG);
    assert_null(bc_seen_bloom(NULL));
    assert_null(bc_seen_window(NULL));
    bc_seen_set_clock(NULL, 5);
    struct bc_seen_stats st;
    memset(&st, 0xff, sizeof(st));
    bc_seen_stats(NULL, &st);
    assert_int_equal(st.tested, 0);
    assert_int_equal(st.kind, 0);

    struct bc_seen_config c;
    bc_seen_config_init(&c);
    struct bc_seen *s = SENTINEL;
    assert_int_equal(bc_seen_create(NULL, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_create(&c, NULL), BC_ERR_INVALID_ARG);
    c.expected = 0;
    assert_int_equal(bc_seen_create(&c, &s), BC_ERR_INVALID_ARG);
    c.expected = UINT64_MAX;
    assert_int_equal(bc_seen_create(&c, &s), BC_ERR_TOO_LARGE);
    bc_seen_config_init(&c);
    assert_int_equal(bc_seen_load(NULL, &c, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_load(NO_FILE, NULL, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_load(NO_FILE, &c, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_load(NO_FILE, &c, &s), BC_ERR_IO);
    assert_ptr_equal(s, SENTINEL);
}

/* The tier-1 kinds, each with NULL keys, zero and huge counts. */
static void test_seen_null_args(void **state)
{
    (void)state;
    for (int kind = BC_SEEN_BLOOM_CLASSIC; kind <= BC_SEEN_WINDOW_TIME;
         kind++) {
        struct bc_seen_config c;
        bc_seen_config_init(&c);
        c.kind = (enum bc_seen_kind)kind;
        c.expected = 1000;
        c.lru_capacity = 16;
        c.window = 1000;
        struct bc_seen *s;
        assert_int_equal(bc_seen_create(&c, &s), BC_OK);
        enum bc_seen_verdict v = (enum bc_seen_verdict)77;
        assert_int_equal(bc_seen_test_and_add(s, NULL, 5, &v),
                         BC_ERR_INVALID_ARG);
        assert_int_equal(bc_seen_test_and_add(s, "a", 1, NULL),
                         BC_ERR_INVALID_ARG);
        assert_int_equal(bc_seen_peek(s, NULL, SIZE_MAX, &v),
                         BC_ERR_INVALID_ARG);
        assert_int_equal(bc_seen_peek(s, "a", 1, NULL), BC_ERR_INVALID_ARG);
        assert_int_equal((int)v, 77);
        assert_int_equal(bc_seen_test_and_add_batch(s, NULL, NULL, 0, NULL),
                         BC_OK);
        assert_int_equal(
            bc_seen_test_and_add_batch(s, NULL, NULL, SIZE_MAX, NULL),
            BC_ERR_INVALID_ARG);
        const char *keys[1] = {NULL};
        size_t lens[1] = {SIZE_MAX};
        enum bc_seen_verdict vs[1] = {(enum bc_seen_verdict)77};
        assert_int_equal(bc_seen_test_and_add_batch(s, keys, lens, 1, vs),
                         BC_ERR_INVALID_ARG);
        assert_int_equal((int)vs[0], 77);
        /* The empty key, NULL or not, is one key. */
        assert_int_equal(bc_seen_peek(s, NULL, 0, &v), BC_OK);
        assert_int_equal(v, BC_SEEN_NEW);
        assert_int_equal(bc_seen_test_and_add(s, NULL, 0, &v), BC_OK);
        assert_int_equal(v, BC_SEEN_NEW);
        assert_int_equal(bc_seen_peek(s, "", 0, &v), BC_OK);
        assert_int_equal(v, BC_SEEN_DUPLICATE);
        assert_int_equal(bc_seen_forget(s, NULL, SIZE_MAX), BC_ERR_INVALID_ARG);
        assert_int_equal(bc_seen_save(s, NULL), BC_ERR_INVALID_ARG);
        assert_int_equal(bc_seen_save(s, NO_FILE), BC_ERR_IO);
        struct bc_seen_stats st;
        bc_seen_stats(s, &st);
        assert_int_equal(st.tested, 1);
        bc_seen_stats(s, NULL);
        bc_seen_free(s);
    }
}

/* ---- redis_seen.h: the calls that need no server ----------------------- */

static void test_redis_seen_edges(void **state)
{
    (void)state;
    struct bc_redis_seen *rs = SENTINEL;
    assert_int_equal(bc_redis_seen_create(NULL, "p", 1000, 0.01, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("unix:/x", NULL, 1000, 0.01, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("unix:/x", "", 1000, 0.01, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("unix:/x", "p", 1000, 0.01, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("ftp://x", "p", 1000, 0.01, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("unix:/x", "p", 0, 0.01, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_create("unix:/x", "p", UINT64_MAX, 0.01, 0, &rs),
        BC_ERR_TOO_LARGE);
    assert_int_equal(bc_redis_seen_create_mk(NULL, "p", 1024, 3, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create_mk("unix:/x", "p", 0, 3, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create_mk("unix:/x", "p", 1024, 0, 0, &rs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_create_mk("unix:/x", "p", UINT64_MAX, 3, 0, &rs),
        BC_ERR_INVALID_ARG);
    assert_ptr_equal(rs, SENTINEL);

    /* A NULL handle. */
    bc_redis_seen_free(NULL);
    assert_int_equal(bc_redis_seen_connect(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_set_timeout(NULL, 1), BC_ERR_INVALID_ARG);
    struct bc_bloom_sizing sz;
    memset(&sz, 0xff, sizeof(sz));
    bc_redis_seen_sizing(NULL, &sz);
    assert_int_equal(sz.m_bits, 0);
    assert_int_equal(sz.k, 0);
    assert_int_equal(bc_redis_seen_test_and_add(NULL, NULL, NULL, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_contains(NULL, NULL, NULL, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_clear(NULL), BC_ERR_INVALID_ARG);
    assert_string_equal(bc_redis_seen_errmsg(NULL), "");

    /* A handle that never connects: argument errors come first, and a
     * batch of nothing needs no server. */
    assert_int_equal(bc_redis_seen_create("unix:/nonexistent-bc.sock", "p",
                                          1000, 0.01, 0, &rs),
                     BC_OK);
    bc_redis_seen_sizing(rs, NULL);
    bc_redis_seen_sizing(rs, &sz);
    assert_true(sz.m_bits > 0);
    enum bc_redis_seen_answer a[1] = {(enum bc_redis_seen_answer)77};
    const void *keys[1] = {NULL};
    size_t lens[1] = {SIZE_MAX};
    assert_int_equal(bc_redis_seen_test_and_add(rs, NULL, NULL, SIZE_MAX, a),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_contains(rs, keys, lens, 1, a),
                     BC_ERR_INVALID_ARG);
    assert_int_equal((int)a[0], 77);
    assert_int_equal(bc_redis_seen_test_and_add(rs, NULL, NULL, 0, NULL),
                     BC_OK);
    assert_int_equal(bc_redis_seen_contains(rs, NULL, NULL, 0, NULL), BC_OK);
    bc_redis_seen_free(rs);
}

/* ---- robots.h --------------------------------------------------------- */

static void test_robots_edges(void **state)
{
    (void)state;
    struct bc_robots *r = SENTINEL;
    assert_int_equal(bc_robots_product_token(NULL, SIZE_MAX), 0);
    assert_int_equal(bc_robots_product_token("bot/1", 0), 0);
    assert_int_equal(bc_robots_product_token("bot/1", 5), 3);
    assert_int_equal(bc_robots_parse("", 0, "bot", 3, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_robots_parse(NULL, 1, "bot", 3, &r),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_robots_parse(NULL, SIZE_MAX, "bot", 3, &r),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_robots_parse("", 0, NULL, 3, &r), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_robots_parse("", 0, NULL, SIZE_MAX, &r),
                     BC_ERR_INVALID_ARG);
    assert_ptr_equal(r, SENTINEL);

    /* A NULL object: no robots.txt, no restriction. */
    bc_robots_free(NULL);
    assert_true(bc_robots_allowed(NULL, "/x", 2));
    assert_true(bc_robots_allowed(NULL, NULL, SIZE_MAX));
    assert_int_equal(bc_robots_group(NULL), BC_ROBOTS_GROUP_NONE);
    assert_int_equal(bc_robots_rule_count(NULL), 0);
    uint64_t ms = 77;
    assert_false(bc_robots_crawl_delay(NULL, &ms));
    assert_int_equal(ms, 77);
    assert_int_equal(bc_robots_sitemap_count(NULL), 0);
    size_t len = 77;
    assert_null(bc_robots_sitemap(NULL, 0, &len));
    assert_int_equal(len, 77);

    /* Empty body, NULL or not, and a NULL agent of length 0. */
    assert_int_equal(bc_robots_parse(NULL, 0, NULL, 0, &r), BC_OK);
    assert_int_equal(bc_robots_group(r), BC_ROBOTS_GROUP_NONE);
    assert_true(bc_robots_allowed(r, "/", 1));
    bc_robots_free(r);

    const char body[] = "User-agent: *\nDisallow: /\nAllow: /ok\n"
                        "Crawl-delay: 2\nSitemap: https://h/s.xml\n";
    assert_int_equal(bc_robots_parse(body, sizeof(body) - 1, "bot", 3, &r),
                     BC_OK);
    assert_int_equal(bc_robots_rule_count(r), 2);
    /* An empty or NULL path is "/": disallowed here. */
    assert_false(bc_robots_allowed(r, NULL, 0));
    assert_false(bc_robots_allowed(r, "", 0));
    assert_false(bc_robots_allowed(r, NULL, SIZE_MAX));
    assert_true(bc_robots_allowed(r, "/ok", 3));
    assert_false(bc_robots_crawl_delay(r, NULL));
    assert_true(bc_robots_crawl_delay(r, &ms));
    assert_int_equal(ms, 2000);
    assert_int_equal(bc_robots_sitemap_count(r), 1);
    assert_non_null(bc_robots_sitemap(r, 0, NULL));
    len = 77;
    assert_null(bc_robots_sitemap(r, 1, &len));
    assert_null(bc_robots_sitemap(r, SIZE_MAX, &len));
    assert_int_equal(len, 77);
    bc_robots_free(r);
}

/* A body length of SIZE_MAX: only the first BC_ROBOTS_MAX_BYTES are parsed
 * and the byte after them read (robots.h), so a buffer of that many bytes
 * plus one is enough. (The header said "read": the parser read one byte
 * more, to see whether the cut line was whole; the header now says so.) */
static void test_robots_huge_length(void **state)
{
    (void)state;
    size_t n = BC_ROBOTS_MAX_BYTES + 1;
    char *body = malloc(n);
    assert_non_null(body);
    memset(body, '\n', n);
    const char rules[] = "User-agent: *\nDisallow: /x\n";
    memcpy(body, rules, sizeof(rules) - 1);
    /* A line the limit cuts: ignored. */
    memcpy(body + n - 1 - 12, "Disallow: /y", 12);
    body[n - 1] = 'z';
    struct bc_robots *r;
    assert_int_equal(bc_robots_parse(body, SIZE_MAX, "bot", 3, &r), BC_OK);
    assert_int_equal(bc_robots_rule_count(r), 1);
    assert_false(bc_robots_allowed(r, "/x", 2));
    assert_true(bc_robots_allowed(r, "/y", 2));
    bc_robots_free(r);
    free(body);
}

/* Enum and flag values outside their sets, NaN rates, sizes whose
 * products overflow. */
/* The frontier's stats calls take a NULL frontier (zeros) and a NULL out
 * (nothing), as their siblings do; bc_frontier_stats(NULL) crashed. */
static void test_frontier_null_stats(void **state)
{
    (void)state;
    struct bc_frontier_stats s;
    memset(&s, 0xab, sizeof(s));
    bc_frontier_stats(NULL, 0, &s);
    assert_int_equal(s.added, 0);
    assert_int_equal(s.queued, 0);
    memset(&s, 0xab, sizeof(s));
    bc_frontier_counters(NULL, &s); /* leaves out as it was */
    bc_frontier_stats(NULL, 0, NULL);
    bc_frontier_counters(NULL, NULL);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct bc_bloom_sizing bs;
    struct bc_bloom *b = SENTINEL;
    assert_int_equal(bc_bloom_size(1000, 0.01, (enum bc_bloom_layout)7, &bs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_rate(1, 1024, 3, (enum bc_bloom_layout)7, &bs),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_create(1000, 0.01, BC_BLOOM_BLOCKED, 0, 0x80, &b),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_bloom_create_mk(1, 1024, 3, BC_BLOOM_BLOCKED, 0, 0x80, &b),
        BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_load_mem("x", 1, 0x80, &b), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_load(NO_FILE, 0x80, &b), BC_ERR_INVALID_ARG);
    assert_ptr_equal(b, SENTINEL);

    struct bc_cbloom *c = SENTINEL;
    assert_int_equal(bc_cbloom_create(1000, NAN, 0, &c), BC_ERR_INVALID_ARG);
    assert_ptr_equal(c, SENTINEL);

    struct bc_lru *l = SENTINEL;
    assert_int_equal(bc_lru_create_slab(UINT_MAX - 1, UINT_MAX, 0, &l),
                     BC_ERR_TOO_LARGE);
    assert_ptr_equal(l, SENTINEL);

    struct bc_window_sizing ws;
    assert_int_equal(bc_window_size(1000, NAN, 4, 0, &ws), BC_ERR_INVALID_ARG);
    struct bc_window_config wc;
    bc_window_config_init(&wc);
    wc.kind = (enum bc_window_kind)7;
    struct bc_window *w = SENTINEL;
    assert_int_equal(bc_window_create(&wc, 0, &w), BC_ERR_INVALID_ARG);
    assert_ptr_equal(w, SENTINEL);

    struct bc_seen_config sc;
    struct bc_seen *s = SENTINEL;
    bc_seen_config_init(&sc);
    sc.fp_rate = NAN;
    assert_int_equal(bc_seen_create(&sc, &s), BC_ERR_INVALID_ARG);
    bc_seen_config_init(&sc);
    sc.kind = (enum bc_seen_kind)7;
    sc.window = 100;
    assert_int_equal(bc_seen_create(&sc, &s), BC_ERR_INVALID_ARG);
    bc_seen_config_init(&sc);
    sc.kind = BC_SEEN_WINDOW_COUNT;
    sc.window = 0;
    assert_int_equal(bc_seen_create(&sc, &s), BC_ERR_INVALID_ARG);
    assert_ptr_equal(s, SENTINEL);
    assert_string_equal(bc_seen_verdict_name(BC_SEEN_NEW), "NEW");
    assert_string_equal(bc_seen_verdict_name(BC_SEEN_DUPLICATE), "DUPLICATE");
    assert_string_equal(bc_seen_verdict_name(BC_SEEN_PROBABLY_SEEN),
                        "PROBABLY_SEEN");
}

/* A path longer than PATH_MAX (no temporary name fits) and the empty
 * path, for every save. */
static void test_save_paths(void **state)
{
    (void)state;
    static char longpath[PATH_MAX + 64];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[0] = '/';
    struct bc_bloom *b;
    assert_int_equal(bc_bloom_create(100, 0.01, BC_BLOOM_BLOCKED, 0, 0, &b),
                     BC_OK);
    assert_int_equal(bc_bloom_save(b, longpath), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_bloom_save(b, ""), BC_ERR_IO);
    bc_bloom_free(b);
    struct bc_cbloom *c;
    assert_int_equal(bc_cbloom_create(100, 0.01, 0, &c), BC_OK);
    assert_int_equal(bc_cbloom_save(c, longpath), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_save(c, ""), BC_ERR_IO);
    bc_cbloom_free(c);
    struct bc_window_config wc;
    bc_window_config_init(&wc);
    wc.window = 100;
    struct bc_window *w;
    assert_int_equal(bc_window_create(&wc, 0, &w), BC_OK);
    assert_int_equal(bc_window_save(w, longpath), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_save(w, ""), BC_ERR_IO);
    bc_window_free(w);
    struct bc_seen_config sc;
    bc_seen_config_init(&sc);
    sc.expected = 100;
    struct bc_seen *s;
    assert_int_equal(bc_seen_create(&sc, &s), BC_OK);
    assert_int_equal(bc_seen_save(s, longpath), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_seen_save(s, ""), BC_ERR_IO);
    bc_seen_free(s);
    assert_int_equal(bc_bloom_load(longpath, 0, &b), BC_ERR_IO);
    assert_int_equal(bc_bloom_load("", 0, &b), BC_ERR_IO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom_sizing_edges),
        cmocka_unit_test(test_bloom_create_edges),
        cmocka_unit_test(test_bloom_null_filter),
        cmocka_unit_test(test_bloom_null_args),
        cmocka_unit_test(test_cbloom_edges),
        cmocka_unit_test(test_lru_edges),
        cmocka_unit_test(test_window_edges),
        cmocka_unit_test(test_window_null_filter),
        cmocka_unit_test(test_window_null_args),
        cmocka_unit_test(test_seen_null_handle),
        cmocka_unit_test(test_seen_null_args),
        cmocka_unit_test(test_redis_seen_edges),
        cmocka_unit_test(test_robots_edges),
        cmocka_unit_test(test_robots_huge_length),
        cmocka_unit_test(test_frontier_null_stats),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_save_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
