/*
 * test_window.c - the sliding-window Bloom filter (dedup/window.c): every
 * formula of its teaching comment, no false negative inside the window
 * (count and time, across save/load), the measured false-positive rate
 * against the prediction at every checkpoint of a stream 20x the window,
 * and its file format.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/window.h"

static size_t key_of(char *buf, size_t cap, const char *prefix, uint64_t i)
{
    return (size_t)snprintf(buf, cap, "https://example.com/%s/%llu", prefix,
                            (unsigned long long)i);
}

static struct bc_window *make_seg(uint64_t w, double p, unsigned gens,
                                  unsigned seg)
{
    struct bc_window_config c;
    bc_window_config_init(&c);
    c.window = w;
    c.p = p;
    c.generations = gens;
    c.segment_bits = seg;
    c.seed = 42;
    struct bc_window *win = NULL;
    assert_int_equal(bc_window_create(&c, 0, &win), BC_OK);
    return win;
}

static struct bc_window *make_count(uint64_t w, double p, unsigned gens)
{
    return make_seg(w, p, gens, 0);
}

/* k = 1: E[X_t / 256] = 1 - (1 - 1/256)^t for t throws into 256 bits, and
 * over Binomial(n, q) keys per block, by the binomial's generating
 * function, E[1 - (1 - 1/256)^i] = 1 - (1 - q/256)^n. */
static void test_occupancy_formulas(void **state)
{
    (void)state;
    for (unsigned t = 1; t <= 2000; t += 37) {
        double want = 1 - pow(1 - 1.0 / 256, t);
        assert_true(fabs(bc_window_fpr_segment(t, 1, 1, 256) - want) < 1e-12);
    }
    double n = 5000, blocks = 300;
    double want = 1 - pow(1 - 1.0 / blocks / 256, n);
    assert_true(fabs(bc_window_fpr_segment(n, blocks, 1, 256) - want) < 1e-12);
    /* k = 2, one key: two independent probes of one key set X = 1 or 2
     * bits; the query needs both of its probes in them:
     * E[(X/256)^2] = P(X=1)/256^2 + P(X=2) 4/256^2, P(X=1) = 1/256. */
    double p1 = 1.0 / 256, v = (p1 * 1 + (1 - p1) * 4) / (256.0 * 256.0);
    assert_true(fabs(bc_window_fpr_segment(1, 1, 2, 256) - v) < 1e-15);
    assert_true(bc_window_fpr_segment(0, 10, 3, 256) == 0);
    assert_true(isnan(bc_window_fpr_segment(1, 0, 3, 256)));
    assert_true(isnan(bc_window_fpr_segment(1, 1, 0, 256)));
    assert_true(isnan(bc_window_fpr_segment(1, 1, BC_WINDOW_MAX_K + 1, 256)));
}

/* The sizing identities, and the numbers the teaching comment quotes. */
static void test_sizing(void **state)
{
    (void)state;
    struct bc_window_sizing s;
    for (unsigned seg = 128; seg <= 256; seg *= 2) {
        for (unsigned gens = 2; gens <= 16; gens += 7) {
            for (uint64_t cap = 1; cap <= 1000000; cap = cap * 31 + 7) {
                assert_int_equal(bc_window_size(cap, 0.01, gens, seg, &s),
                                 BC_OK);
                assert_int_equal(s.segment_bits, seg);
                assert_int_equal(s.gen_keys, (cap + gens - 2) / (gens - 1));
                assert_int_equal(s.bytes, s.blocks * gens * seg / 8);
                assert_int_equal(s.bytes % 64, 0); /* whole cache lines */
                assert_true(fabs(s.bits_per_key - 8.0 * s.bytes / cap) < 1e-9);
                double f =
                    bc_window_fpr_segment(s.gen_keys, s.blocks, s.k, seg);
                assert_true(fabs(s.fpr_peak - (1 - pow(1 - f, gens))) < 1e-12);
                assert_true(s.fpr_peak <= 0.01);
            }
        }
    }
    /* G = 4, p = 1 %: k = 8, 18.6 bits per key; G = 2: 24.0. */
    assert_int_equal(bc_window_size(10000000, 0.01, 4, 0, &s), BC_OK);
    assert_int_equal(s.k, 8);
    assert_true(fabs(s.bits_per_key - 18.6) < 0.05);
    /* bits per window key = G/(G-1) * 256 / lambda, lambda = g / B. */
    double lambda = (double)s.gen_keys / s.blocks;
    assert_true(fabs(s.bits_per_key - 4.0 / 3 * 256 / lambda) < 0.01);
    assert_true(fabs(lambda - 18.37) < 0.01);
    assert_int_equal(bc_window_size(10000000, 0.01, 2, 0, &s), BC_OK);
    assert_true(fabs(s.bits_per_key - 24.0) < 0.05);
    /* 128-bit segments, G = 4 (one cache line per block): 20.5 bits. */
    assert_int_equal(bc_window_size(10000000, 0.01, 4, 128, &s), BC_OK);
    assert_true(fabs(s.bits_per_key - 20.5) < 0.05);
    /* S = 128 occupancy, k = 1: E[X_t / 128] = 1 - (1 - 1/128)^t. */
    assert_true(fabs(bc_window_fpr_segment(300, 1, 1, 128) -
                     (1 - pow(1 - 1.0 / 128, 300))) < 1e-12);
    assert_true(isnan(bc_window_fpr_segment(3, 1, 1, 64)));
    /* Bad arguments. */
    assert_int_equal(bc_window_size(0, 0.01, 4, 0, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, 0, 4, 0, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, 1, 4, 0, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, NAN, 4, 0, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, 0.01, 1, 0, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, 0.01, 17, 0, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, 0.01, 4, 0, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(10, 0.01, 4, 512, &s), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_window_size(UINT64_C(1) << 40, 0.01, 4, 0, &s),
                     BC_ERR_TOO_LARGE);
}

/* The rate of k consecutive set bits somewhere in L independent slices
 * with fills f[0..L-1] (the APBF query): a run-length chain. */
static double apbf_rate(const double *f, unsigned len, unsigned k)
{
    double st[32] = {1.0}, hit = 0;
    for (unsigned i = 0; i < len; i++) {
        double nx[32] = {0};
        for (unsigned r = 0; r < k; r++) {
            nx[0] += st[r] * (1 - f[i]);
            if (r + 1 == k)
                hit += st[r] * f[i];
            else
                nx[r + 1] += st[r] * f[i];
        }
        memcpy(st, nx, sizeof(st));
    }
    return hit;
}

/* The anchors' numbers in the teaching comment: rotation 22.05 (G = 2)
 * and 16.62 (G = 4) bits per window key, G/(G-1) log2(G/p) / ln 2; APBF
 * 19.6 at k = 11, l = 62 (slices of m_s bits, g keys per generation, at
 * the end of a generation slice i holds min(i + 1, k) g keys). */
static void test_anchor_numbers(void **state)
{
    (void)state;
    double r2 = 2.0 / 1 * log2(2 / 0.01) / log(2);
    double r4 = 4.0 / 3 * log2(4 / 0.01) / log(2);
    assert_true(fabs(r2 - 22.05) < 0.01);
    assert_true(fabs(r4 - 16.62) < 0.01);
    /* The classic filter's bits per key at p / G is log2(G/p) / ln 2. */
    struct bc_bloom_sizing bs;
    assert_int_equal(bc_bloom_size(3000000, 0.0025, BC_BLOOM_CLASSIC, &bs),
                     BC_OK);
    assert_true(fabs(4.0 / 3 * bs.bits_per_key - r4) < 0.01);
    unsigned k = 11, l = 62;
    double lo = 1, hi = 40;
    for (int it = 0; it < 60; it++) {
        double bpk = (lo + hi) / 2, msg = bpk * l / (k + l), f[80];
        for (unsigned i = 0; i < k + l; i++)
            f[i] = 1 - exp(-(double)(i + 1 < k ? i + 1 : k) / msg);
        if (apbf_rate(f, k + l, k) <= 0.01)
            hi = bpk;
        else
            lo = bpk;
    }
    assert_true(fabs(hi - 19.6) < 0.05);
}

/* Count window: every key among the last W insertions is found, at every
 * step, and keys G g insertions old are gone (found at the FP rate). */
static void count_no_false_negative(unsigned seg)
{
    const uint64_t w = 1000, total = 20 * w;
    struct bc_window *win = make_seg(w, 0.01, 4, seg);
    struct bc_window_stats st;
    bc_window_stats(win, 0, &st);
    assert_int_equal(st.gen_span, 334);
    char key[64];
    uint64_t old_found = 0, old_tested = 0;
    for (uint64_t i = 0; i < total; i++) {
        size_t n = key_of(key, sizeof(key), "c", i);
        bc_window_add(win, key, n, 0);
        if (i % 97 != 0 && i != total - 1)
            continue;
        uint64_t first = i + 1 >= w ? i + 1 - w : 0;
        for (uint64_t j = first; j <= i; j++) {
            n = key_of(key, sizeof(key), "c", j);
            assert_true(bc_window_contains(win, key, n, 0));
        }
        /* Keys older than G g = 1336 insertions. */
        for (uint64_t j = 0; j + 4 * 334 <= i + 1 && j < 300; j++) {
            n = key_of(key, sizeof(key), "c", i + 1 - 4 * 334 - j);
            old_found += bc_window_contains(win, key, n, 0);
            old_tested++;
        }
    }
    assert_true(old_tested > 50000);
    assert_true(old_found < old_tested * 0.02);
    bc_window_free(win);
}

static void test_count_no_false_negative(void **state)
{
    (void)state;
    count_no_false_negative(256);
    count_no_false_negative(128);
}

/* test-and-add inserts only new keys and does not refresh: a key repeated
 * inside the window is "not new" until W insertions after its first. */
static void test_count_no_refresh(void **state)
{
    (void)state;
    struct bc_window *win = make_count(100, 0.001, 2); /* g = 100 */
    assert_true(bc_window_test_and_add(win, "a", 1, 0));
    char key[64];
    int again = -1;
    for (uint64_t i = 0; i < 400; i++) {
        size_t n = key_of(key, sizeof(key), "x", i);
        assert_true(bc_window_test_and_add(win, key, n, 0));
        bool a_new = bc_window_test_and_add(win, "a", 1, 0);
        if (a_new) {
            again = (int)i;
            break;
        }
    }
    /* "a" is insertion 0 of generation 0; gone once generation 2 starts,
     * i.e. at insertion 200: after 199 other keys, x_0 .. x_198. */
    assert_int_equal(again, 198);
    bc_window_free(win);
}

/* Time window: a key is found while now - t <= T, for random gaps and
 * bursts; keys G d old are gone. Across a save and load at each step. */
static void test_time_no_false_negative(void **state)
{
    (void)state;
    struct bc_window_config c;
    bc_window_config_init(&c);
    c.kind = BC_WINDOW_TIME;
    c.window = 1000; /* T */
    c.capacity = 3000;
    c.p = 0.01;
    c.seed = 7;
    struct bc_window *win;
    assert_int_equal(bc_window_create(&c, 5000, &win), BC_OK);
    struct bc_window_stats st;
    bc_window_stats(win, 5000, &st);
    assert_int_equal(st.gen_span, 334);
    uint64_t times[6000];
    uint64_t now = 5000;
    srand(3);
    char key[64], path[] = "/tmp/test_window_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    uint64_t old_found = 0, old_tested = 0;
    for (uint64_t i = 0; i < 6000; i++) {
        now += (uint64_t)(rand() % 3); /* ~1 key per ms, with repeats */
        times[i] = now;
        size_t n = key_of(key, sizeof(key), "t", i);
        bc_window_add(win, key, n, now);
        if (i % 500 == 499) {
            assert_int_equal(bc_window_save(win, path), BC_OK);
            struct bc_window *back;
            assert_int_equal(bc_window_load(path, &back), BC_OK);
            bc_window_free(win);
            win = back;
        }
        if (i % 101 != 0)
            continue;
        /* Look a little ahead in time too: contains at a later now. */
        for (uint64_t later = now; later <= now + 1000; later += 250) {
            for (uint64_t j = 0; j <= i; j++) {
                n = key_of(key, sizeof(key), "t", j);
                bool in = bc_window_contains(win, key, n, later);
                if (later - times[j] <= 1000)
                    assert_true(in);
                else if (later - times[j] >= 4 * 334) {
                    old_found += in;
                    old_tested++;
                }
            }
        }
    }
    assert_true(old_tested > 10000);
    assert_true(old_found < old_tested * 0.02);
    /* A clock that goes back is taken as the latest one. */
    size_t n = key_of(key, sizeof(key), "t", 5999);
    assert_true(bc_window_contains(win, key, n, 0));
    /* advance() retires generations: far in the future nothing is left. */
    bc_window_advance(win, now + 10000);
    bc_window_stats(win, now + 10000, &st);
    assert_int_equal(st.live_keys, 0);
    assert_false(bc_window_contains(win, key, n, now + 10000));
    bc_window_free(win);
    unlink(path);
}

/* The measured rate at every checkpoint of a stream 20x the window, on
 * fresh keys, against the rate predicted from the live generations'
 * counts: within 4.5 standard deviations of a measurement, sqrt(f (1 - f)
 * / Q + fpr_state_sd^2) (window.c: the queries' binomial spread plus the
 * filter's own scatter). 40 checkpoints make a chance failure below 3e-4,
 * for a seeded run that is in fact deterministic. The prediction never
 * exceeds p. At the peak (W = 2 10^4, B = 364, Q = 2 10^4) the scatter's
 * variance is about a tenth of the binomial one. For S = 256 and 128. */
static void fpr_every_checkpoint(unsigned seg)
{
    const uint64_t w = 20000, q = 20000;
    struct bc_window *win = make_seg(w, 0.01, 4, seg);
    char key[64];
    uint64_t probe = 0;
    double worst = 0;
    for (uint64_t i = 0; i < 20 * w; i++) {
        size_t n = key_of(key, sizeof(key), "s", i);
        bc_window_add(win, key, n, 0);
        if ((i + 1) % (w / 2) != 0)
            continue;
        struct bc_window_stats st;
        bc_window_stats(win, 0, &st);
        assert_true(st.fpr_predicted <= 0.01);
        uint64_t fp = 0;
        for (uint64_t j = 0; j < q; j++, probe++) {
            n = key_of(key, sizeof(key), "fresh", probe);
            fp += bc_window_contains(win, key, n, 0);
        }
        double f = st.fpr_predicted, binom = f * (1 - f) / q;
        double sd = sqrt(binom + st.fpr_state_sd * st.fpr_state_sd);
        double z = ((double)fp / q - f) / sd;
        if (fabs(z) > worst)
            worst = fabs(z);
        assert_true(fabs(z) <= 4.5);
        if (seg == 256 && i + 1 == 20 * w) { /* 60 g: a generation ended */
            assert_int_equal(st.blocks, 364);
            double ratio = st.fpr_state_sd * st.fpr_state_sd / binom;
            print_message("state/binomial variance at the peak: %.2f\n", ratio);
            assert_true(ratio > 0.05 && ratio < 0.2);
        }
    }
    print_message("worst |z| over 40 checkpoints: %.2f\n", worst);
    bc_window_free(win);
}

static void test_fpr_every_checkpoint(void **state)
{
    (void)state;
    fpr_every_checkpoint(256);
    fpr_every_checkpoint(128);
}

/* The scatter of one filter's actual rate about the prediction
 * (fpr_state_sd, window.c) against many filters: 100 windows of 3000 (B
 * = 55, so the scatter counts) with different seeds, each measured
 * with Q = 20000 queries at the end of its stream. The variance of the
 * measurements is f (1 - f) / Q + sd^2; from 100 samples it is known to
 * +-14 % (one standard error), so it must fall within 0.6 and 1.4 times
 * that. */
static void test_fpr_scatter(void **state)
{
    (void)state;
    const unsigned filters = 100;
    const uint64_t w = 3000, q = 20000;
    double sum = 0, sum2 = 0, want = 0;
    char key[64];
    for (unsigned s = 0; s < filters; s++) {
        struct bc_window_config c;
        bc_window_config_init(&c);
        c.window = w;
        c.seed = 1000 + s;
        struct bc_window *win;
        assert_int_equal(bc_window_create(&c, 0, &win), BC_OK);
        for (uint64_t i = 0; i < 2 * w; i++)
            bc_window_add(win, key, key_of(key, sizeof(key), "v", i), 0);
        struct bc_window_stats st;
        bc_window_stats(win, 0, &st);
        assert_int_equal(st.blocks, 55);
        uint64_t fp = 0;
        for (uint64_t j = 0; j < q; j++)
            fp += bc_window_contains(win, key,
                                     key_of(key, sizeof(key), "never", j), 0);
        double dev = (double)fp / q - st.fpr_predicted;
        sum += dev;
        sum2 += dev * dev;
        want += st.fpr_predicted * (1 - st.fpr_predicted) / q +
                st.fpr_state_sd * st.fpr_state_sd;
        bc_window_free(win);
    }
    double var = sum2 / filters - (sum / filters) * (sum / filters);
    print_message("measured/predicted variance: %.2f\n",
                  var / (want / filters));
    assert_true(var > 0.6 * want / filters && var < 1.4 * want / filters);
}

/* HOW-IT-WORKS 13 on the picture (window-fpr.png, points W/4 apart): a
 * G = 4 generation is W/3 insertions, so the points at 1.25, 1.5, 1.75
 * and 2 W are 3/4, 1/2, 1/4 and all the way into their generations and
 * the predicted rate falls across them, then jumps (0.81 %, 0.76 %,
 * 0.75 %, 1.00 % at W = 10^6); the true tooth rises within each W/3
 * from about 3/4 p, just after a turn (three full generations, one
 * empty), to p. */
static void test_picture_phases(void **state)
{
    (void)state;
    /* W not a multiple of 3, as 10^6: g = ceil(W / 3), 2 W falls just
     * before a turn (6 g = 2 W + 4). */
    const uint64_t w = 30001;
    struct bc_window *win = make_count(w, 0.01, 4);
    struct bc_window_stats st;
    char key[64];
    double at[4];
    uint64_t g = (w + 2) / 3, next = 0;
    for (uint64_t i = 0; i < 2 * w; i++) {
        bc_window_add(win, key, key_of(key, sizeof(key), "ph", i), 0);
        if (i + 1 == 5 * w / 4 + next * w / 4 && next < 4) {
            bc_window_stats(win, 0, &st);
            at[next++] = st.fpr_predicted;
        }
        if (i + 1 == 4 * g) { /* a turn: three full generations */
            bc_window_stats(win, 0, &st);
            assert_true(fabs(st.fpr_predicted - 0.0075) < 0.0003);
        }
        if (i + 1 == 5 * g - 1) { /* just before the next: four */
            bc_window_stats(win, 0, &st);
            assert_true(st.fpr_predicted > 0.0097 && st.fpr_predicted <= 0.01);
        }
    }
    assert_int_equal(next, 4);
    print_message("at 1.25, 1.5, 1.75, 2 W: %.5f %.5f %.5f %.5f\n", at[0],
                  at[1], at[2], at[3]);
    assert_true(at[0] > at[1] && at[1] > at[2] && at[3] > at[0]);
    assert_true(fabs(at[0] - 0.0081) < 0.0003);
    assert_true(fabs(at[3] - 0.0100) < 0.0003);
    bc_window_free(win);
}

/* The batch calls answer as single calls do. */
static void test_batch(void **state)
{
    (void)state;
    struct bc_window *a = make_count(500, 0.01, 3),
                     *b = make_count(500, 0.01, 3);
    struct bc_hash128 h[64];
    bool was_new[64];
    char key[64];
    for (uint64_t round = 0; round < 40; round++) {
        for (unsigned i = 0; i < 64; i++) {
            size_t n = key_of(key, sizeof(key), "b", (round * 64 + i) % 900);
            h[i] = bc_window_hash(a, key, n);
        }
        bc_window_test_and_add_batch(a, h, 64, 0, was_new);
        for (unsigned i = 0; i < 64; i++)
            assert_int_equal(was_new[i],
                             bc_window_test_and_add_hash(b, h[i], 0));
    }
    bc_window_free(a);
    bc_window_free(b);
}

/* Save and load: the same answers, the same future; damaged files
 * refused with the right status, nothing handed out. */
static void test_persistence(void **state)
{
    (void)state;
    struct bc_window *win = make_count(3000, 0.01, 4);
    char key[64], path[] = "/tmp/test_window_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (uint64_t i = 0; i < 5000; i++) {
        size_t n = key_of(key, sizeof(key), "p", i);
        bc_window_add(win, key, n, 0);
    }
    assert_int_equal(bc_window_save(win, path), BC_OK);
    struct bc_window *back = NULL;
    assert_int_equal(bc_window_load(path, &back), BC_OK);
    for (uint64_t i = 0; i < 12000; i++) {
        size_t n = key_of(key, sizeof(key), "p", i % 9000);
        assert_int_equal(bc_window_test_and_add(win, key, n, 0),
                         bc_window_test_and_add(back, key, n, 0));
    }
    struct bc_window_stats s1, s2;
    bc_window_stats(win, 0, &s1);
    bc_window_stats(back, 0, &s2);
    assert_int_equal(s1.inserts, s2.inserts);
    assert_true(s1.fpr_predicted == s2.fpr_predicted);
    bc_window_free(back);

    /* The image, then damaged copies of it. */
    assert_int_equal(bc_window_save(win, path), BC_OK);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t len = (size_t)ftell(f);
    rewind(f);
    unsigned char *img = malloc(len);
    assert_int_equal(fread(img, 1, len, f), len);
    fclose(f);
    back = NULL;
    assert_int_equal(bc_window_load_mem(img, len, &back), BC_OK);
    bc_window_free(back);
    back = NULL;
    assert_int_equal(bc_window_load_mem(img, len - 1, &back), BC_ERR_TRUNCATED);
    assert_int_equal(bc_window_load_mem(img, 4, &back), BC_ERR_TRUNCATED);
    img[len / 2] ^= 1;
    assert_int_equal(bc_window_load_mem(img, len, &back), BC_ERR_CHECKSUM);
    img[len / 2] ^= 1;
    img[8] = 9; /* version */
    assert_int_equal(bc_window_load_mem(img, len, &back), BC_ERR_VERSION);
    img[8] = 1;
    img[0] = 'X';
    assert_int_equal(bc_window_load_mem(img, len, &back), BC_ERR_FORMAT);
    assert_null(back);
    free(img);
    assert_int_equal(bc_window_load("/nonexistent/w", &back), BC_ERR_IO);
    assert_int_equal(bc_window_save(win, "/nonexistent/w"), BC_ERR_IO);
    bc_window_free(win);
    bc_window_free(NULL);
    unlink(path);
}

static uint64_t le(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = bytes; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* The file layout of window.c's FILE FORMAT, for both segment sizes:
 * segment bits S at 52, A = B G S / 8 at 104, the array at 368, 8 bytes
 * of checksum after it. */
static void test_file_layout(void **state)
{
    (void)state;
    for (unsigned seg = 128; seg <= 256; seg *= 2) {
        struct bc_window *win = make_seg(1000, 0.01, 4, seg);
        char key[64], path[] = "/tmp/test_window_layout_XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        for (uint64_t i = 0; i < 700; i++)
            bc_window_add(win, key, key_of(key, sizeof(key), "l", i), 0);
        assert_int_equal(bc_window_save(win, path), BC_OK);
        struct bc_window_stats st;
        bc_window_stats(win, 0, &st);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        unsigned char h[368];
        assert_int_equal(fread(h, 1, sizeof(h), f), sizeof(h));
        fseek(f, 0, SEEK_END);
        uint64_t len = (uint64_t)ftell(f);
        fclose(f);
        assert_memory_equal(h, "BCWINDOW", 8);
        assert_int_equal(le(h + 8, 4), 1);  /* version */
        assert_int_equal(le(h + 12, 4), 0); /* kind: count */
        assert_int_equal(le(h + 16, 8), 1000);
        assert_int_equal(le(h + 40, 4), 4); /* G */
        assert_int_equal(le(h + 44, 4), st.k);
        assert_int_equal(le(h + 48, 4), 2); /* hash id */
        assert_int_equal(le(h + 52, 4), seg);
        assert_int_equal(le(h + 56, 8), 42); /* seed */
        assert_int_equal(le(h + 80, 8), st.blocks);
        assert_int_equal(le(h + 88, 8), 700);
        uint64_t a = le(h + 104, 8);
        assert_int_equal(a, st.blocks * 4 * seg / 8);
        assert_int_equal(len, 368 + a + 8);
        bc_window_free(win);
        unlink(path);
    }
}

/* A time window past its capacity says so, and predicts the higher rate. */
static void test_over_capacity(void **state)
{
    (void)state;
    struct bc_window_config c;
    bc_window_config_init(&c);
    c.kind = BC_WINDOW_TIME;
    c.window = 100;
    c.capacity = 300;
    struct bc_window *win;
    assert_int_equal(bc_window_create(&c, 0, &win), BC_OK);
    char key[64];
    struct bc_window_stats st;
    for (uint64_t i = 0; i < 100; i++)
        bc_window_add(win, key, key_of(key, sizeof(key), "o", i), 10);
    bc_window_stats(win, 10, &st);
    assert_false(st.over_capacity);
    for (uint64_t i = 100; i < 1000; i++)
        bc_window_add(win, key, key_of(key, sizeof(key), "o", i), 10);
    bc_window_stats(win, 10, &st);
    assert_true(st.over_capacity);
    assert_true(st.fpr_predicted > c.p);
    bc_window_free(win);
    /* Capacity keys within T but all at one moment: one generation holds
     * all 30000 = 3 g of them (g = 10000), and the rate is about 20 %, not
     * p (window.h: the promise needs at most g per generation, not
     * capacity per T; window.c, TIME WINDOWS AND CAPACITY). */
    c.capacity = 30000;
    assert_int_equal(bc_window_create(&c, 0, &win), BC_OK);
    for (uint64_t i = 0; i < 30000; i++)
        bc_window_add(win, key, key_of(key, sizeof(key), "b", i), 10);
    bc_window_stats(win, 10, &st);
    assert_int_equal(st.gen_keys, 10000);
    assert_true(st.over_capacity);
    print_message("capacity keys at once: rate %.4f\n", st.fpr_predicted);
    assert_true(st.fpr_predicted > 0.18 && st.fpr_predicted < 0.25);
    bc_window_free(win);
    c.window = 0;
    assert_int_equal(bc_window_create(&c, 0, &win), BC_ERR_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_occupancy_formulas),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_anchor_numbers),
        cmocka_unit_test(test_count_no_false_negative),
        cmocka_unit_test(test_count_no_refresh),
        cmocka_unit_test(test_time_no_false_negative),
        cmocka_unit_test(test_fpr_every_checkpoint),
        cmocka_unit_test(test_fpr_scatter),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_persistence),
        cmocka_unit_test(test_over_capacity),
        cmocka_unit_test(test_picture_phases),
        cmocka_unit_test(test_file_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
