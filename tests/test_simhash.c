/*
 * test_simhash.c - simhash fingerprints and their index (dedup/simhash.c):
 * the tokenization, streaming against one-shot for every split, the too-
 * short rule, every formula of the teaching comment (the angle theta / pi,
 * one edit's expected distance, chance matches, the table layout and its
 * probes), the index against a brute-force scan, save/load and damaged
 * files, bad arguments.
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

#include "bloomcrawl/simhash.h"

/* ---- helpers --------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A random word of 3 to 9 lower-case letters into w (NUL-terminated):
 * with 26^3 and more spellings, the words of a test text are distinct, so
 * its shingles are too. */
static void random_word(uint64_t *rng, char *w)
{
    uint64_t r = splitmix(rng);
    unsigned len = 3 + (unsigned)(r % 7);
    for (unsigned i = 0; i < len; i++) {
        r = r / 7 + splitmix(rng);
        w[i] = (char)('a' + r % 26);
    }
    w[len] = '\0';
}

struct text {
    char words[600][10];
    unsigned n;
};

static void random_text(uint64_t *rng, struct text *t, unsigned n)
{
    t->n = n;
    for (unsigned i = 0; i < n; i++)
        random_word(rng, t->words[i]);
}

/* The words joined by one space into buf (cap bytes); its length. */
static size_t join(const struct text *t, char *buf, size_t cap)
{
    size_t len = 0;
    for (unsigned i = 0; i < t->n; i++) {
        int n =
            snprintf(buf + len, cap - len, "%s%s", i ? " " : "", t->words[i]);
        assert_true(n > 0 && (size_t)n < cap - len);
        len += (size_t)n;
    }
    return len;
}

static bool fp_of(const char *text, size_t len,
                  const struct bc_simhash_config *cfg, uint64_t *fp)
{
    struct bc_simhash sh;
    assert_int_equal(bc_simhash_init(&sh, cfg), BC_OK);
    bc_simhash_feed_text(&sh, text, len);
    return bc_simhash_final(&sh, fp);
}

static uint64_t fp_text(const struct text *t)
{
    static char buf[600 * 11];
    size_t len = join(t, buf, sizeof(buf));
    uint64_t fp = 0;
    assert_true(fp_of(buf, len, NULL, &fp));
    return fp;
}

static struct bc_simhash_config cfg_min(unsigned w, uint64_t min)
{
    struct bc_simhash_config c;
    bc_simhash_config_init(&c);
    c.shingle_words = w;
    c.min_shingles = min;
    return c;
}

/* Expected distance at cosine similarity c: 64 acos(c) / pi. */
static double expected_distance(double c)
{
    return 64.0 * acos(c) / acos(-1.0);
}

/* P(Binomial(64, p) <= k). */
static double binomial_cdf(double p, unsigned k)
{
    double sum = 0.0, c = 1.0;
    for (unsigned i = 0; i <= k; i++) {
        if (i > 0)
            c = c * (64 - i + 1) / i;
        sum += c * pow(p, i) * pow(1 - p, 64 - i);
    }
    return sum;
}

/* ---- the fingerprint ------------------------------------------------- */

static void test_config(void **unused)
{
    (void)unused;
    struct bc_simhash_config c;
    bc_simhash_config_init(&c);
    assert_int_equal(c.shingle_words, 3);
    assert_int_equal(c.min_shingles, 32);
    assert_int_equal(c.seed, 0);
    bc_simhash_config_init(NULL);
    /* The state fits a stack frame: "under 800 bytes" (simhash.c). */
    assert_true(sizeof(struct bc_simhash) < 800);

    struct bc_simhash sh;
    assert_int_equal(bc_simhash_init(NULL, &c), BC_ERR_INVALID_ARG);
    c.shingle_words = 0;
    assert_int_equal(bc_simhash_init(&sh, &c), BC_ERR_INVALID_ARG);
    /* A refused state is inert: feeding does nothing, final says short. */
    bc_simhash_feed_text(&sh, "a b c d e f g", 13);
    uint64_t fp = 7;
    assert_false(bc_simhash_final(&sh, &fp));
    assert_int_equal(fp, 7);
    assert_int_equal(bc_simhash_shingles(&sh), 0);
    c.shingle_words = BC_SIMHASH_MAX_SHINGLE_WORDS + 1;
    assert_int_equal(bc_simhash_init(&sh, &c), BC_ERR_INVALID_ARG);
    c.shingle_words = BC_SIMHASH_MAX_SHINGLE_WORDS;
    assert_int_equal(bc_simhash_init(&sh, &c), BC_OK);
    c.shingle_words = 1;
    c.min_shingles = 0;
    assert_int_equal(bc_simhash_init(&sh, &c), BC_ERR_INVALID_ARG);
    c.min_shingles = 1;
    assert_int_equal(bc_simhash_init(&sh, &c), BC_OK);

    /* NULLs are ignored, not crashes. */
    bc_simhash_feed_text(NULL, "abc", 3);
    bc_simhash_feed_text(&sh, NULL, 5);
    bc_simhash_feed_text(&sh, NULL, 0);
    assert_int_equal(bc_simhash_shingles(&sh), 0);
    assert_false(bc_simhash_final(NULL, &fp));
    assert_false(bc_simhash_final(&sh, NULL));
    assert_int_equal(bc_simhash_shingles(NULL), 0);

    assert_int_equal(bc_simhash_distance(0, 0), 0);
    assert_int_equal(bc_simhash_distance(0, UINT64_MAX), 64);
    assert_int_equal(bc_simhash_distance(5, 6), 2);
}

/* Two texts the tokenization must make one, or tell apart. */
static void same_text(const char *a, const char *b, bool same)
{
    struct bc_simhash_config c = cfg_min(1, 1);
    uint64_t fa, fb;
    assert_true(fp_of(a, strlen(a), &c, &fa));
    assert_true(fp_of(b, strlen(b), &c, &fb));
    if (same)
        assert_true(fa == fb);
    else
        assert_true(fa != fb);
}

static void test_tokenization(void **unused)
{
    (void)unused;
    /* ASCII letters fold to lower case; punctuation and space separate. */
    same_text("Hello, World! 123", "hello world 123", true);
    same_text("HELLO\tworld\n\n123.", " hello  world 123 ", true);
    same_text("hello-world", "hello world", true);
    same_text("a<b>c", "a b c", true);
    /* NUL separates (a C string's end is not the text's end). */
    assert_true(strlen("a\0b") == 1);
    {
        struct bc_simhash_config c = cfg_min(1, 1);
        uint64_t fa, fb;
        assert_true(fp_of("a\0b", 3, &c, &fa));
        assert_true(fp_of("a b", 3, &c, &fb));
        assert_true(fa == fb);
    }
    /* Digits are word bytes; bytes >= 0x80 too, whole and not folded. */
    same_text("route 66", "route 67", false);
    same_text("caf\xc3\xa9 noir", "caf noir", false);
    same_text("caf\xc3\xa9 noir", "caf \xc3\xa9 noir", false);
    same_text("CAF\xc3\x89", "caf\xc3\xa9", false); /* É is not é */
    /* Order matters from w = 2 on; for w = 1 the bag of words is all. */
    same_text("one two", "two one", true);
    {
        struct bc_simhash_config c = cfg_min(2, 1);
        uint64_t fa, fb;
        assert_true(fp_of("one two three", 13, &c, &fa));
        assert_true(fp_of("three two one", 13, &c, &fb));
        assert_true(fa != fb);
    }
}

/* With one shingle of one word, V[i] = +-1 and the fingerprint is the
 * shingle's hash itself: the long-word pieces are each part of it. */
static void test_long_words(void **unused)
{
    (void)unused;
    char a[200], b[200];
    struct bc_simhash_config c = cfg_min(1, 1);
    for (size_t len = 30; len <= 130; len++) {
        memset(a, 'x', len);
        for (size_t pos = 0; pos < len; pos += 7) {
            memcpy(b, a, len);
            b[pos] = 'y';
            uint64_t fa, fb;
            assert_true(fp_of(a, len, &c, &fa));
            assert_true(fp_of(b, len, &c, &fb));
            assert_true(fa != fb); /* every byte of a long word counts */
        }
        /* A word of len bytes is one word: one shingle. */
        struct bc_simhash sh;
        bc_simhash_init(&sh, &c);
        bc_simhash_feed_text(&sh, a, len);
        assert_int_equal(bc_simhash_shingles(&sh), 1);
    }
}

/* Streaming: the same fingerprint for every cut of a text into two or
 * three chunks, and byte by byte - cuts inside words, inside UTF-8, inside
 * long words at the piece boundaries. */
static void test_streaming(void **unused)
{
    (void)unused;
    static const char text[] =
        "The <b>Quick</b> brown fox, jumps over the lazy dog; "
        "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e r\xc3\xa9sum\xc3\xa9 "
        "antidisestablishmentarianism-pneumonoultramicroscopicsilicovolcano "
        "supercalifragilisticexpialidocious0123456789abcdefghijklmnopqrstuvw "
        "xyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyz "
        "and 42 more words, in the text: one two three four five six seven "
        "eight nine ten eleven twelve thirteen fourteen fifteen sixteen end";
    const size_t len = sizeof(text) - 1;
    struct bc_simhash_config c = cfg_min(3, 1);
    uint64_t whole;
    assert_true(fp_of(text, len, &c, &whole));
    struct bc_simhash one;
    bc_simhash_init(&one, &c);
    bc_simhash_feed_text(&one, text, len);
    uint64_t shingles = bc_simhash_shingles(&one);
    assert_true(shingles > 30);

    for (size_t cut = 0; cut <= len; cut++) {
        struct bc_simhash sh;
        bc_simhash_init(&sh, &c);
        bc_simhash_feed_text(&sh, text, cut);
        bc_simhash_feed_text(&sh, text + cut, len - cut);
        uint64_t fp = 0;
        assert_true(bc_simhash_final(&sh, &fp));
        assert_true(fp == whole);
        assert_int_equal(bc_simhash_shingles(&sh), shingles);
    }
    /* Every pair of cuts in the first 160 bytes (the long words). */
    for (size_t i = 0; i <= 160; i++) {
        for (size_t j = i; j <= 160; j++) {
            struct bc_simhash sh;
            bc_simhash_init(&sh, &c);
            bc_simhash_feed_text(&sh, text, i);
            bc_simhash_feed_text(&sh, text + i, j - i);
            bc_simhash_feed_text(&sh, text + j, len - j);
            uint64_t fp = 0;
            assert_true(bc_simhash_final(&sh, &fp));
            assert_true(fp == whole);
        }
    }
    /* Byte by byte, with empty feeds between. */
    struct bc_simhash sh;
    bc_simhash_init(&sh, &c);
    for (size_t i = 0; i < len; i++) {
        bc_simhash_feed_text(&sh, text + i, 1);
        bc_simhash_feed_text(&sh, text + i, 0);
    }
    uint64_t fp = 0;
    assert_true(bc_simhash_final(&sh, &fp));
    assert_true(fp == whole);
    /* final() leaves the state alone: asked twice, feeding on after it. */
    uint64_t again = 0;
    assert_true(bc_simhash_final(&sh, &again));
    assert_true(again == whole);
    bc_simhash_feed_text(&sh, " extra words here", 17);
    assert_true(bc_simhash_final(&sh, &again));
    assert_true(again != whole);
    /* Another seed, other fingerprints. */
    c.seed = 1;
    assert_true(fp_of(text, len, &c, &fp));
    assert_true(fp != whole);
}

/* More than 255 shingles (the lanes are flushed) and a tie: with two
 * shingles, a bit where they disagree has V = 0 and is 0. */
static void test_counters(void **unused)
{
    (void)unused;
    struct bc_simhash_config c = cfg_min(1, 1);
    uint64_t fa, fb, fab;
    assert_true(fp_of("alpha", 5, &c, &fa));
    assert_true(fp_of("beta", 4, &c, &fb));
    assert_true(fp_of("alpha beta", 10, &c, &fab));
    assert_true(fab == (fa & fb)); /* 1 only where both vote +1 */
    /* The same word n times: the fingerprint is that word's, for every n
     * across the flushes at 255, 510, ... */
    char buf[6 * 1100];
    for (unsigned n = 1; n <= 1100; n += (n < 600 ? 1 : 97)) {
        size_t len = 0;
        for (unsigned i = 0; i < n; i++) {
            memcpy(buf + len, "alpha ", 6);
            len += 6;
        }
        uint64_t f;
        assert_true(fp_of(buf, len, &c, &f));
        assert_true(f == fa);
    }
    /* 600 x alpha then 599 x beta: alpha's bits win (600 > 1199 / 2). */
    size_t len = 0;
    char *big = malloc(6 * 1200);
    assert_non_null(big);
    for (unsigned i = 0; i < 600; i++, len += 6)
        memcpy(big + len, "alpha ", 6);
    for (unsigned i = 0; i < 599; i++, len += 5)
        memcpy(big + len, "beta ", 5);
    uint64_t f;
    assert_true(fp_of(big, len, &c, &f));
    assert_true(f == fa);
    free(big);
}

/* The too-short rule at its edge: min_shingles shingles take a
 * fingerprint, one fewer does not. With w = 3, n words give n - 2. */
static void test_too_short(void **unused)
{
    (void)unused;
    uint64_t rng = 11;
    struct text *t = malloc(sizeof(*t));
    assert_non_null(t);
    char buf[600 * 11];
    random_text(&rng, t, 34);
    size_t len = join(t, buf, sizeof(buf));
    uint64_t fp = 0;
    assert_true(fp_of(buf, len, NULL, &fp)); /* 32 shingles: the default */
    struct bc_simhash sh;
    bc_simhash_init(&sh, NULL);
    bc_simhash_feed_text(&sh, buf, len);
    assert_int_equal(bc_simhash_shingles(&sh), 32);
    t->n = 33;
    len = join(t, buf, sizeof(buf));
    fp = 5;
    assert_false(fp_of(buf, len, NULL, &fp)); /* 31 shingles */
    assert_int_equal(fp, 5);
    bc_simhash_init(&sh, NULL);
    bc_simhash_feed_text(&sh, buf, len);
    assert_int_equal(bc_simhash_shingles(&sh), 31);
    /* Fewer words than a shingle: no shingle at all; the empty text. */
    bc_simhash_init(&sh, NULL);
    bc_simhash_feed_text(&sh, "two words", 9);
    assert_int_equal(bc_simhash_shingles(&sh), 0);
    bc_simhash_init(&sh, NULL);
    assert_false(bc_simhash_final(&sh, &fp));
    /* Separators only. */
    bc_simhash_feed_text(&sh, " ,.;!? \n\t", 9);
    assert_int_equal(bc_simhash_shingles(&sh), 0);
    free(t);
}

/* Random +-1 hyperplanes: two texts of N shingles sharing N - c of them
 * (cos theta = (N - c) / N) differ in 64 theta / pi bits on average. Each
 * word replaced (3 or more words apart, away from the ends) replaces 3
 * shingles. */
static void test_angle(void **unused)
{
    (void)unused;
    static const unsigned changed_words[] = {1, 5, 20, 50, 100};
    uint64_t rng = 2024;
    struct text *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
    assert_non_null(a);
    assert_non_null(b);
    const unsigned trials = 400;
    for (size_t ci = 0; ci < sizeof(changed_words) / sizeof(*changed_words);
         ci++) {
        unsigned cw = changed_words[ci];
        double sum = 0;
        unsigned within3 = 0;
        for (unsigned trial = 0; trial < trials; trial++) {
            random_text(&rng, a, 500);
            *b = *a;
            unsigned step = 480 / cw;
            for (unsigned j = 0; j < cw; j++)
                random_word(&rng, b->words[10 + j * step]);
            unsigned d = bc_simhash_distance(fp_text(a), fp_text(b));
            sum += d;
            within3 += d <= 3;
        }
        double n = 498.0, c = 3.0 * cw;
        double want = expected_distance((n - c) / n);
        double mean = sum / trials;
        /* The mean of 400 draws with a deviation under 4: +-0.4 is more
         * than 2 standard errors, plus 5 % for the +-1 coordinates. */
        assert_true(fabs(mean - want) < 0.4 + 0.05 * want);
        if (cw == 1) {
            /* The comment's numbers: 2.24 bits, P(d <= 3) = 0.82. */
            assert_true(fabs(want - 2.237) < 0.001);
            double p3 = binomial_cdf(want / 64, 3);
            assert_true(fabs(p3 - 0.815) < 0.001);
            /* One changed word in 500: near-identical texts land within
             * k = 3 about as often as the binomial says (0.82). */
            assert_true(fabs((double)within3 / trials - p3) < 0.08);
        }
    }
    free(a);
    free(b);
}

/* Unrelated texts: Binomial(64, 1/2), mean 32, variance 16, and never
 * within k = 3 (by chance: 2.4e-15 a pair). */
static void test_unrelated(void **unused)
{
    (void)unused;
    uint64_t rng = 77;
    struct text *a = malloc(sizeof(*a));
    assert_non_null(a);
    const unsigned pairs = 500;
    double sum = 0, sum2 = 0;
    unsigned min = 64;
    for (unsigned i = 0; i < pairs; i++) {
        random_text(&rng, a, 200);
        uint64_t fa = fp_text(a);
        random_text(&rng, a, 200);
        unsigned d = bc_simhash_distance(fa, fp_text(a));
        sum += d;
        sum2 += (double)d * d;
        if (d < min)
            min = d;
    }
    double mean = sum / pairs, var = sum2 / pairs - mean * mean;
    assert_true(fabs(mean - 32) < 0.6); /* 3 standard errors: 3 x 4/22 */
    assert_true(fabs(var - 16) < 4);
    assert_true(min > 3);
    /* sum_{i<=3} C(64, i) = 43745, / 2^64 = 2.4e-15; x 10^7 = 2.4e-8. */
    double c = 1, s = 0;
    for (unsigned i = 0; i <= 3; i++) {
        if (i)
            c = c * (64 - i + 1) / i;
        s += c;
    }
    assert_true(s == 43745.0);
    assert_true(fabs(s / ldexp(1, 64) - 2.37e-15) < 0.01e-15);
    assert_true(fabs(1e7 * s / ldexp(1, 64) - 2.4e-8) < 0.05e-8);
    free(a);
}

/* WHAT IS LOST and WORDS AND SHINGLES: one edit's expected distance. */
static void test_edit_formula(void **unused)
{
    (void)unused;
    static const struct {
        double n, want;
    } rows[] = {{32, 8.9}, {100, 5.0}, {280, 3.0}, {498, 2.2}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
        double d = expected_distance((rows[i].n - 3) / rows[i].n);
        assert_true(fabs(d - rows[i].want) < 0.05);
    }
    /* 32 shingles: one edit costs about 3k bits (8.9 against 9). */
    assert_true(fabs(expected_distance(29.0 / 32) - 9) < 0.15);
    /* w = 1, 3, 4, 8 over 500 words: N = 501 - w, w shingles replaced. */
    static const struct {
        double w, want;
    } ws[] = {{3, 2.24}, {4, 2.59}, {8, 3.67}};
    for (size_t i = 0; i < sizeof(ws) / sizeof(*ws); i++) {
        double n = 501 - ws[i].w;
        assert_true(fabs(expected_distance((n - ws[i].w) / n) - ws[i].want) <
                    0.005);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_tokenization),
        cmocka_unit_test(test_long_words),
        cmocka_unit_test(test_streaming),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_too_short),
        cmocka_unit_test(test_angle),
        cmocka_unit_test(test_unrelated),
        cmocka_unit_test(test_edit_formula),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
