/*
 * test_cbloom.c - the counting Bloom filter (cbloom.h), through the public
 * API: no false negatives under adds and removes (against an exact
 * multiset), refused removals that change nothing, sticky saturation on
 * both sides of 15, the measured false-positive rate against the classic
 * prediction, the counter statistics against the binomial model, the
 * formulas of dedup/cbloom.c's comment, bad arguments, and the file
 * format (save, load, damaged images).
 *
 * Allocation failures run when the test is linked with
 * -Wl,--wrap=malloc,--wrap=calloc (skipped otherwise), as in test_lru.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/cbloom.h"

/* ---- allocation failure injection (active only with --wrap) ---- */

#include "alloc_fail.h"

/* ---- helpers ---- */

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Key i of a namespace ("a", "b", ...): distinct bytes per (ns, i). */
static size_t make_key(char *buf, size_t size, const char *ns, uint64_t i)
{
    return (size_t)snprintf(buf, size, "https://%s.example/%llu", ns,
                            (unsigned long long)i);
}

static void get_stats(const struct bc_cbloom *cb, struct bc_cbloom_stats *st)
{
    memset(st, 0xa5, sizeof(*st));
    bc_cbloom_stats(cb, st);
}

static void assert_same_stats(const struct bc_cbloom_stats *a,
                              const struct bc_cbloom_stats *b)
{
    assert_int_equal(a->m, b->m);
    assert_int_equal(a->k, b->k);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->n_expected, b->n_expected);
    assert_int_equal(a->keys, b->keys);
    assert_int_equal(a->nonzero, b->nonzero);
    assert_int_equal(a->saturated, b->saturated);
    assert_true(a->fpr_estimated == b->fpr_estimated);
}

/* ---- no false negatives ---- */

/* A seeded random sequence of adds and removes (a key may be added several
 * times and needs as many removes) against an exact multiset: every key
 * with a positive count is always reported present, and every remove of
 * an added key succeeds. Keys with count 0 are never removed (that would
 * be the documented misuse). Keys held up to 10 times share counters, so
 * some counters do saturate here: their number never goes down, and once
 * everything is removed again exactly those stay non-zero. */
static void test_no_false_negatives(void **state)
{
    enum { UNIVERSE = 20000, OPS = 100000 };
    unsigned *count = calloc(UNIVERSE, sizeof(*count));
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;
    uint64_t rng = 2024;
    uint64_t held = 0;
    uint64_t saturated = 0;
    char key[64];

    (void)state;
    assert_non_null(count);
    assert_int_equal(bc_cbloom_create(UNIVERSE, 0.01, 77, &cb), BC_OK);
    for (unsigned op = 0; op < OPS; op++) {
        uint64_t x = splitmix64(&rng);
        unsigned i = (unsigned)((x >> 8) % UNIVERSE);
        size_t len = make_key(key, sizeof(key), "a", i);

        if (x % 2 == 0) {
            bc_cbloom_add(cb, key, len);
            count[i]++;
            held++;
        } else if (count[i] > 0) {
            assert_int_equal(bc_cbloom_remove(cb, key, len), BC_OK);
            count[i]--;
            held--;
        }
        if (op % 10000 == 0) {
            for (unsigned j = 0; j < UNIVERSE; j++) {
                if (count[j] > 0) {
                    len = make_key(key, sizeof(key), "a", j);
                    assert_true(bc_cbloom_contains(cb, key, len));
                }
            }
            get_stats(cb, &st);
            assert_int_equal(st.keys, held);
            assert_true(st.saturated >= saturated);
            saturated = st.saturated;
        }
    }
    get_stats(cb, &st);
    assert_true(st.saturated >= saturated);
    saturated = st.saturated;
    assert_true(saturated > 0); /* the case is exercised */
    for (unsigned j = 0; j < UNIVERSE; j++) {
        size_t len = make_key(key, sizeof(key), "a", j);
        if (count[j] > 0)
            assert_true(bc_cbloom_contains(cb, key, len));
        for (; count[j] > 0; count[j]--)
            assert_int_equal(bc_cbloom_remove(cb, key, len), BC_OK);
    }
    get_stats(cb, &st);
    assert_int_equal(st.keys, 0);
    assert_int_equal(st.saturated, saturated);
    assert_int_equal(st.nonzero, saturated);
    bc_cbloom_free(cb);
    free(count);
}

/* The classic case: add two sets, remove one, the other is all there. */
static void test_unrelated_removals(void **state)
{
    enum { N = 30000 };
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;
    char key[64];

    (void)state;
    assert_int_equal(bc_cbloom_create(2 * N, 0.001, 5, &cb), BC_OK);
    for (unsigned i = 0; i < N; i++) {
        bc_cbloom_add(cb, key, make_key(key, sizeof(key), "keep", i));
        bc_cbloom_add(cb, key, make_key(key, sizeof(key), "drop", i));
    }
    for (unsigned i = 0; i < N; i++) {
        size_t len = make_key(key, sizeof(key), "drop", i);
        assert_int_equal(bc_cbloom_remove(cb, key, len), BC_OK);
    }
    for (unsigned i = 0; i < N; i++) {
        size_t len = make_key(key, sizeof(key), "keep", i);
        assert_true(bc_cbloom_contains(cb, key, len));
    }
    get_stats(cb, &st);
    assert_int_equal(st.keys, N);
    /* Each key added once at the design load: nothing saturates, and
     * removing the rest leaves every counter at zero. */
    assert_int_equal(st.saturated, 0);
    for (unsigned i = 0; i < N; i++) {
        size_t len = make_key(key, sizeof(key), "keep", i);
        assert_int_equal(bc_cbloom_remove(cb, key, len), BC_OK);
    }
    get_stats(cb, &st);
    assert_int_equal(st.keys, 0);
    assert_int_equal(st.nonzero, 0);
    assert_true(st.fpr_estimated == 0.0);
    bc_cbloom_free(cb);
}

/* ---- refused removals ---- */

static void test_remove_absent_refused(void **state)
{
    enum { N = 1000 };
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats before, after;
    char key[64];
    size_t len;
    unsigned probe;

    (void)state;
    assert_int_equal(bc_cbloom_create(N, 0.01, 9, &cb), BC_OK);

    /* Empty filter: nothing can be removed. */
    assert_int_equal(bc_cbloom_remove(cb, "x", 1), BC_ERR_NOT_FOUND);
    assert_int_equal(bc_cbloom_remove(cb, NULL, 0), BC_ERR_NOT_FOUND);
    get_stats(cb, &before);
    assert_int_equal(before.keys, 0);
    assert_int_equal(before.nonzero, 0);

    for (unsigned i = 0; i < N; i++)
        bc_cbloom_add(cb, key, make_key(key, sizeof(key), "in", i));

    /* Several never-added keys the filter reports absent. */
    for (unsigned refused = 0, i = 0; refused < 50; i++) {
        len = make_key(key, sizeof(key), "out", i);
        if (bc_cbloom_contains(cb, key, len))
            continue; /* a false positive: removing it is the misuse */
        get_stats(cb, &before);
        assert_int_equal(bc_cbloom_remove(cb, key, len), BC_ERR_NOT_FOUND);
        get_stats(cb, &after);
        assert_same_stats(&before, &after);
        refused++;
    }

    /* Had a refused remove decremented any counter, some counter would now
     * run short: every added key must still come out, to all zeros. */
    for (probe = 0; probe < N; probe++) {
        len = make_key(key, sizeof(key), "in", probe);
        assert_true(bc_cbloom_contains(cb, key, len));
        assert_int_equal(bc_cbloom_remove(cb, key, len), BC_OK);
    }
    get_stats(cb, &after);
    assert_int_equal(after.keys, 0);
    assert_int_equal(after.nonzero, 0);
    bc_cbloom_free(cb);
}

/* Index of the first key i (namespace ns) whose k = 2 probes into m = 2
 * counters land on distinct counters (want_distinct) or on one counter. */
static unsigned find_key_shape(uint64_t seed, bool want_distinct)
{
    char key[64];

    for (unsigned i = 0; i < 1000; i++) {
        struct bc_cbloom *cb = NULL;
        struct bc_cbloom_stats st;

        assert_int_equal(bc_cbloom_create_mk(1, 2, 2, seed, &cb), BC_OK);
        bc_cbloom_add(cb, key, make_key(key, sizeof(key), "shape", i));
        get_stats(cb, &st);
        bc_cbloom_free(cb);
        if ((st.nonzero == 2) == want_distinct)
            return i;
    }
    fail_msg("no key of the wanted shape");
    return 0;
}

/* A key whose two probes hit one counter needs 2 there to be removable:
 * a counter at 1 proves it was never added, though contains says maybe. */
static void test_remove_needs_multiplicity(void **state)
{
    const uint64_t seed = 3;
    unsigned a = find_key_shape(seed, true);
    unsigned b = find_key_shape(seed, false);
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats before, after;
    char ka[64], kb[64];
    size_t la = make_key(ka, sizeof(ka), "shape", a);
    size_t lb = make_key(kb, sizeof(kb), "shape", b);

    (void)state;
    assert_int_equal(bc_cbloom_create_mk(1, 2, 2, seed, &cb), BC_OK);
    bc_cbloom_add(cb, ka, la); /* counters (1, 1) */
    assert_true(bc_cbloom_contains(cb, kb, lb));
    get_stats(cb, &before);
    assert_int_equal(bc_cbloom_remove(cb, kb, lb), BC_ERR_NOT_FOUND);
    get_stats(cb, &after);
    assert_same_stats(&before, &after);
    assert_int_equal(bc_cbloom_remove(cb, ka, la), BC_OK);
    get_stats(cb, &after);
    assert_int_equal(after.nonzero, 0);

    /* Added, it comes out: 2 on its counter, then 0. */
    bc_cbloom_add(cb, kb, lb);
    get_stats(cb, &after);
    assert_int_equal(after.nonzero, 1);
    assert_int_equal(bc_cbloom_remove(cb, kb, lb), BC_OK);
    get_stats(cb, &after);
    assert_int_equal(after.nonzero, 0);
    assert_false(bc_cbloom_contains(cb, kb, lb));
    bc_cbloom_free(cb);
}

/* ---- saturation ---- */

/* Add one key `times` times into a large filter (its k counters are
 * distinct), remove it as often, and report what is left. */
static void add_remove_times(unsigned times, struct bc_cbloom_stats *peak,
                             struct bc_cbloom_stats *end, bool *contains_end)
{
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;
    const char *key = "https://saturated.example/";
    size_t len = strlen(key);

    assert_int_equal(bc_cbloom_create_mk(1000, 1000003, 7, 11, &cb), BC_OK);
    bc_cbloom_add(cb, key, len);
    get_stats(cb, &st);
    assert_int_equal(st.nonzero, 7); /* distinct counters for this key */
    for (unsigned i = 1; i < times; i++)
        bc_cbloom_add(cb, key, len);
    get_stats(cb, peak);
    for (unsigned i = 0; i < times; i++) {
        assert_true(bc_cbloom_contains(cb, key, len));
        assert_int_equal(bc_cbloom_remove(cb, key, len), BC_OK);
    }
    get_stats(cb, end);
    *contains_end = bc_cbloom_contains(cb, key, len);
    bc_cbloom_free(cb);
}

static void test_saturation(void **state)
{
    struct bc_cbloom_stats peak, end;
    bool present;

    (void)state;
    assert_int_equal(BC_CBLOOM_COUNTER_MAX, 15);

    /* 14: below the limit, counts exactly, comes back to zero. */
    add_remove_times(14, &peak, &end, &present);
    assert_int_equal(peak.saturated, 0);
    assert_int_equal(peak.keys, 14);
    assert_int_equal(end.nonzero, 0);
    assert_int_equal(end.keys, 0);
    assert_false(present);

    /* 15: the counters reach 15 and stick: the key stays "maybe". */
    add_remove_times(15, &peak, &end, &present);
    assert_int_equal(peak.saturated, 7);
    assert_int_equal(end.saturated, 7);
    assert_int_equal(end.nonzero, 7);
    assert_int_equal(end.keys, 0);
    assert_true(present);

    /* 20: further adds change nothing, 20 removes leave it stuck. */
    add_remove_times(20, &peak, &end, &present);
    assert_int_equal(peak.saturated, 7);
    assert_int_equal(peak.nonzero, 7);
    assert_int_equal(peak.keys, 20);
    assert_int_equal(end.saturated, 7);
    assert_int_equal(end.nonzero, 7);
    assert_int_equal(end.keys, 0);
    assert_true(present);
}

/* ---- sizes and statistics ---- */

/* m counters take (m + 1) / 2 bytes; with k = 1 and many keys per counter
 * every counter saturates, so nonzero = saturated = m exactly (the unused
 * nibble of an odd m is never counted). Sizes cover the tail-only, exact
 * word and word-plus-tail paths of the statistics. */
static void test_counter_packing(void **state)
{
    static const uint64_t sizes[] = {1, 2, 3, 13, 15, 16, 17, 31, 33, 64, 65};
    char key[64];

    (void)state;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        uint64_t m = sizes[s];
        struct bc_cbloom *cb = NULL;
        struct bc_cbloom_stats st;

        assert_int_equal(bc_cbloom_create_mk(1, m, 1, 1, &cb), BC_OK);
        get_stats(cb, &st);
        assert_int_equal(st.m, m);
        assert_int_equal(st.k, 1);
        assert_int_equal(st.bytes, (m + 1) / 2);
        assert_int_equal(st.n_expected, 1);
        assert_int_equal(st.nonzero, 0);
        bc_cbloom_add(cb, "one", 3);
        get_stats(cb, &st);
        assert_int_equal(st.nonzero, 1);
        assert_int_equal(st.saturated, 0);
        /* Binomial(1000 m, 1/m) below 15 has probability < 1e-300. */
        for (uint64_t i = 0; i < 1000 * m; i++)
            bc_cbloom_add(cb, key, make_key(key, sizeof(key), "fill", i));
        get_stats(cb, &st);
        assert_int_equal(st.nonzero, m);
        assert_int_equal(st.saturated, m);
        assert_true(st.fpr_estimated == 1.0);
        bc_cbloom_free(cb);
    }
}

/* The worked example of dedup/cbloom.c: n = 10^6, p = 1 % gives 9,585,059
 * counters, k = 7, 4,792,530 bytes, against 1,198,136 bytes (1.2 MB) for
 * the classic filter's bits. And sizes always come from bc_bloom_size(). */
static void test_sizing(void **state)
{
    static const struct {
        uint64_t n;
        double p;
    } cases[] = {{1000000, 0.01}, {1, 0.5}, {1000, 0.0001}, {12345, 0.03}};
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;
    struct bc_bloom_sizing sz;

    (void)state;
    assert_int_equal(bc_cbloom_create(1000000, 0.01, 0, &cb), BC_OK);
    get_stats(cb, &st);
    assert_int_equal(st.m, 9585059);
    assert_int_equal(st.k, 7);
    assert_int_equal(st.bytes, 4792530);
    assert_int_equal(st.n_expected, 1000000);
    bc_cbloom_free(cb);
    assert_int_equal(bc_bloom_size(1000000, 0.01, BC_BLOOM_CLASSIC, &sz),
                     BC_OK);
    assert_int_equal(sz.bytes, 1198136);

    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        assert_int_equal(
            bc_bloom_size(cases[c].n, cases[c].p, BC_BLOOM_CLASSIC, &sz),
            BC_OK);
        assert_int_equal(bc_cbloom_create(cases[c].n, cases[c].p, 0, &cb),
                         BC_OK);
        get_stats(cb, &st);
        assert_int_equal(st.m, sz.m_bits);
        assert_int_equal(st.k, sz.k);
        assert_int_equal(st.bytes, sz.m_bits / 2 + sz.m_bits % 2);
        bc_cbloom_free(cb);
    }
}

/*
 * The measured false-positive rate at n = 10^5, p = 1 %, over Q = 10^6
 * keys never added, against the classic prediction for the m and k
 * allocated, (1 - e^(-k n / m))^k. Its standard error has two parts: the
 * binomial sampling of Q queries, p (1 - p) / Q, and the filter's own
 * fill f = nonzero / m, whose variance is at most f (1 - f) / m (the
 * counts are negatively associated), carried through f^k as
 * (k f^(k-1))^2 f (1 - f) / m. The test allows five standard errors
 * (about 6 % relative here). Given the filter, the rate is f^k, which
 * stats reports: that is checked against the binomial error alone.
 */
static void test_false_positive_rate(void **state)
{
    enum { N = 100000, Q = 1000000 };
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;
    char key[64];
    unsigned long positives = 0;
    double measured, predicted, f, se, se_given;

    (void)state;
    assert_int_equal(bc_cbloom_create(N, 0.01, 12345, &cb), BC_OK);
    for (unsigned i = 0; i < N; i++)
        bc_cbloom_add(cb, key, make_key(key, sizeof(key), "added", i));
    for (unsigned i = 0; i < Q; i++) {
        size_t len = make_key(key, sizeof(key), "never", i);
        positives += bc_cbloom_contains(cb, key, len);
    }
    get_stats(cb, &st);
    measured = (double)positives / Q;
    predicted = bc_bloom_fpr_classic(N, (double)st.m, st.k);
    f = 1.0 - exp(-(double)st.k * N / (double)st.m);
    se = sqrt(predicted * (1 - predicted) / Q +
              pow(st.k * pow(f, st.k - 1.0), 2) * f * (1 - f) / (double)st.m);
    assert_true(fabs(measured - predicted) <= 5 * se);
    assert_true(5 * se < 0.07 * predicted); /* the bound means something */

    /* Given this filter: (nonzero / m)^k, the stats' estimate. */
    assert_true(fabs(st.fpr_estimated - pow((double)st.nonzero / (double)st.m,
                                            st.k)) <= 1e-12 * st.fpr_estimated);
    se_given = sqrt(st.fpr_estimated * (1 - st.fpr_estimated) / Q);
    assert_true(fabs(measured - st.fpr_estimated) <= 5 * se_given);
    bc_cbloom_free(cb);
}

/* ---- the formulas of dedup/cbloom.c's comment ---- */

/* log C(N, j) - j log m: the middle term of the chain. */
static double log_choose_over(double big_n, double j, double m)
{
    return lgamma(big_n + 1) - lgamma(j + 1) - lgamma(big_n - j + 1) -
           j * log(m);
}

/* log Pr(Binomial(N, 1/m) >= j), summed from the pmf in log space. */
static double log_binomial_tail(double big_n, double j, double m)
{
    double q = 1.0 / m;
    double top = -INFINITY;
    double sum = 0.0;

    for (double i = j; i <= big_n && i < j + 2000; i++) {
        double t = lgamma(big_n + 1) - lgamma(i + 1) - lgamma(big_n - i + 1) +
                   i * log(q) + (big_n - i) * log1p(-q);
        if (t > top) {
            sum = sum * exp(top - t) + 1.0;
            top = t;
        } else {
            sum += exp(t - top);
        }
    }
    return top + log(sum);
}

/*
 * Pr(c >= j) <= C(n k, j) (1/m)^j <= (e n k / (j m))^j for one counter;
 * at k = (m/n) ln 2 the last is (e ln 2 / j)^j, and m (e ln 2 / 16)^16 ~=
 * 1.37e-15 m, m (e ln 2 / 15)^15 ~= 3.06e-14 m.
 */
static void test_fan_bound(void **state)
{
    static const struct {
        double n, m, k, j;
    } cases[] = {
        {1e6, 9585059, 7, 15}, {1e6, 9585059, 7, 16}, {1e6, 9585059, 7, 4},
        {1000, 10000, 7, 15},  {1000, 1000, 4, 15},   {100, 50, 3, 5},
        {5000, 65536, 9, 2},   {20, 100, 1, 1},
    };
    const double ln2 = log(2.0);
    const double e = exp(1.0);

    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        double big_n = cases[c].n * cases[c].k;
        double m = cases[c].m;
        double j = cases[c].j;
        double tail = log_binomial_tail(big_n, j, m);
        double middle = log_choose_over(big_n, j, m);
        double bound = j * log(e * big_n / (j * m));

        assert_true(tail <= middle + 1e-9);
        assert_true(middle <= bound + 1e-9);
    }

    /* At the optimal k the bound does not depend on n and m. */
    for (double n = 1000; n <= 1e9; n *= 31) {
        double m = n * 9.585;
        double k = m / n * ln2;
        assert_true(fabs(16 * log(e * n * k / (16 * m)) -
                         16 * log(e * ln2 / 16)) < 1e-9);
    }
    assert_true(fabs(pow(e * ln2 / 16, 16) / 1.37e-15 - 1) < 0.01);
    assert_true(fabs(pow(e * ln2 / 15, 15) / 3.06e-14 - 1) < 0.01);
}

/*
 * The counters follow the binomial model the bound starts from: a filter
 * loaded to k n / m = 10 (far past its design) has each counter at or
 * above 15 with probability q = Pr(Binomial(n k, 1/m) >= 15) ~= 0.083,
 * and those are exactly the saturated ones. Their number is within five
 * standard errors sqrt(m q (1 - q)) of m q; likewise the non-zero ones.
 */
static void test_counters_binomial(void **state)
{
    const double m = 65536, k = 4, n = 163840; /* k n / m = 10 */
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;
    char key[64];
    double q15 = exp(log_binomial_tail(n * k, 15, m));
    double q1 = 1 - pow(1 - 1 / m, n * k);

    (void)state;
    assert_true(q15 > 0.07 && q15 < 0.1);
    assert_int_equal(
        bc_cbloom_create_mk((uint64_t)n, (uint64_t)m, (unsigned)k, 99, &cb),
        BC_OK);
    for (uint64_t i = 0; i < (uint64_t)n; i++)
        bc_cbloom_add(cb, key, make_key(key, sizeof(key), "load", i));
    get_stats(cb, &st);
    assert_true(fabs((double)st.saturated - m * q15) <=
                5 * sqrt(m * q15 * (1 - q15)));
    assert_true(fabs((double)st.nonzero - m * q1) <=
                5 * sqrt(m * q1 * (1 - q1)) + 1);
    bc_cbloom_free(cb);
}

/* ---- arguments ---- */

static void test_bad_args(void **state)
{
    static const double bad_p[] = {0.0, 1.0, -0.01, 1.5, -INFINITY};
    struct bc_cbloom *const sentinel = (struct bc_cbloom *)&sentinel;
    struct bc_cbloom *out = sentinel;
    struct bc_cbloom *cb = NULL;
    struct bc_cbloom_stats st;

    (void)state;
    assert_int_equal(bc_cbloom_create(0, 0.01, 0, &out), BC_ERR_INVALID_ARG);
    for (size_t i = 0; i < sizeof(bad_p) / sizeof(bad_p[0]); i++)
        assert_int_equal(bc_cbloom_create(100, bad_p[i], 0, &out),
                         BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create(100, NAN, 0, &out), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create(100, INFINITY, 0, &out),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create(100, 0.01, 0, NULL), BC_ERR_INVALID_ARG);
    /* m ~= 1.44e12: a valid bit array (<= 2^41) but too many counters. */
    assert_int_equal(bc_cbloom_create(UINT64_C(100000000000), 0.001, 0, &out),
                     BC_ERR_TOO_LARGE);
    /* m ~= 1.44e13: too large already for bc_bloom_size(). */
    assert_int_equal(bc_cbloom_create(UINT64_C(1000000000000), 0.001, 0, &out),
                     BC_ERR_TOO_LARGE);

    assert_int_equal(bc_cbloom_create_mk(0, 100, 3, 0, &out),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(10, 0, 3, 0, &out),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(10, 100, 0, 0, &out),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(10, 100, BC_BLOOM_MAX_K + 1, 0, &out),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_cbloom_create_mk(10, 100, 3, 0, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_cbloom_create_mk(10, BC_CBLOOM_MAX_COUNTERS + 1, 3, 0, &out),
        BC_ERR_TOO_LARGE);
    assert_int_equal(bc_cbloom_create_mk(10, UINT64_MAX, 3, 0, &out),
                     BC_ERR_TOO_LARGE);
    assert_ptr_equal(out, sentinel);
    assert_true(BC_CBLOOM_MAX_COUNTERS * 4 == BC_BLOOM_MAX_BITS);

    /* The largest k is accepted and works. */
    assert_int_equal(bc_cbloom_create_mk(10, 1000, BC_BLOOM_MAX_K, 0, &cb),
                     BC_OK);
    bc_cbloom_add(cb, "k64", 3);
    assert_true(bc_cbloom_contains(cb, "k64", 3));
    assert_int_equal(bc_cbloom_remove(cb, "k64", 3), BC_OK);
    get_stats(cb, &st);
    assert_int_equal(st.nonzero, 0);

    /* NULL key: only with len 0, where it is the empty key. */
    bc_cbloom_add(cb, NULL, 5);
    assert_false(bc_cbloom_contains(cb, NULL, 5));
    assert_int_equal(bc_cbloom_remove(cb, NULL, 5), BC_ERR_INVALID_ARG);
    get_stats(cb, &st);
    assert_int_equal(st.keys, 0);
    bc_cbloom_add(cb, NULL, 0);
    assert_true(bc_cbloom_contains(cb, "", 0));
    assert_int_equal(bc_cbloom_remove(cb, "", 0), BC_OK);
    bc_cbloom_stats(cb, NULL);
    bc_cbloom_free(cb);

    /* NULL filter: empty, never crashes. */
    bc_cbloom_free(NULL);
    bc_cbloom_add(NULL, "a", 1);
    assert_false(bc_cbloom_contains(NULL, "a", 1));
    assert_int_equal(bc_cbloom_remove(NULL, "a", 1), BC_ERR_INVALID_ARG);
    get_stats(NULL, &st);
    assert_int_equal(st.m, 0);
    assert_int_equal(st.keys, 0);
}

static void test_allocation_failure(void **state)
{
    struct bc_cbloom *const sentinel = (struct bc_cbloom *)&sentinel;
    struct bc_cbloom *out = sentinel;
    struct bc_cbloom *cb = NULL;
    long before = alloc_calls;

    (void)state;
    assert_int_equal(bc_cbloom_create_mk(1, 16, 1, 0, &cb), BC_OK);
    bc_cbloom_free(cb);
    if (alloc_calls == before) {
        BC_SKIP(); /* not linked with --wrap */
        return;
    }
    /* The handle, then the counter array; no leak when the second fails. */
    for (long n = 0; n < 2; n++) {
        fail_after = n;
        assert_int_equal(bc_cbloom_create(1000, 0.01, 0, &out), BC_ERR_NOMEM);
        assert_ptr_equal(out, sentinel);
    }
    fail_after = -1;
    /* Exactly BC_CBLOOM_MAX_COUNTERS passes the size check (the failed
     * allocation shows it, without 256 GiB being asked of the system). */
    fail_after = 1;
    assert_int_equal(bc_cbloom_create_mk(1, BC_CBLOOM_MAX_COUNTERS, 7, 0, &out),
                     BC_ERR_NOMEM);
    fail_after = -1;
    assert_ptr_equal(out, sentinel);
}

/* Save and load: the same counters (contains and removes agree), the key
 * count kept; damaged images refused with the right status. */
static void test_save_load(void **state)
{
    (void)state;
    struct bc_cbloom *c, *back = NULL;
    assert_int_equal(bc_cbloom_create(2000, 0.01, 9, &c), BC_OK);
    char key[64], path[] = "/tmp/test_cbloom_XXXXXX";
    for (unsigned i = 0; i < 1500; i++) {
        int n = snprintf(key, sizeof key, "k%u", i);
        bc_cbloom_add(c, key, (size_t)n);
    }
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(bc_cbloom_save(c, path), BC_OK);
    assert_int_equal(bc_cbloom_load(path, &back), BC_OK);
    for (unsigned i = 0; i < 3000; i++) {
        int n = snprintf(key, sizeof key, "k%u", i);
        assert_int_equal(bc_cbloom_contains(c, key, (size_t)n),
                         bc_cbloom_contains(back, key, (size_t)n));
    }
    for (unsigned i = 0; i < 700; i++) {
        int n = snprintf(key, sizeof key, "k%u", i);
        assert_int_equal(bc_cbloom_remove(back, key, (size_t)n), BC_OK);
    }
    struct bc_cbloom_stats st;
    bc_cbloom_stats(back, &st);
    assert_int_equal(st.keys, 800);
    bc_cbloom_free(back);
    back = NULL;

    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static unsigned char img[16384];
    size_t len = fread(img, 1, sizeof img, f);
    fclose(f);
    assert_true(len > 64 && len < sizeof img);
    assert_int_equal(bc_cbloom_load_mem(img, len - 1, &back), BC_ERR_TRUNCATED);
    img[100] ^= 4;
    assert_int_equal(bc_cbloom_load_mem(img, len, &back), BC_ERR_CHECKSUM);
    img[100] ^= 4;
    img[8] = 2;
    assert_int_equal(bc_cbloom_load_mem(img, len, &back), BC_ERR_VERSION);
    img[0] = 'x';
    assert_int_equal(bc_cbloom_load_mem(img, len, &back), BC_ERR_FORMAT);
    assert_null(back);
    assert_int_equal(bc_cbloom_load("/nonexistent/c", &back), BC_ERR_IO);
    assert_int_equal(bc_cbloom_save(c, "/nonexistent/c"), BC_ERR_IO);
    bc_cbloom_free(c);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_false_negatives),
        cmocka_unit_test(test_unrelated_removals),
        cmocka_unit_test(test_remove_absent_refused),
        cmocka_unit_test(test_remove_needs_multiplicity),
        cmocka_unit_test(test_saturation),
        cmocka_unit_test(test_counter_packing),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_false_positive_rate),
        cmocka_unit_test(test_fan_bound),
        cmocka_unit_test(test_counters_binomial),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_save_load),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
