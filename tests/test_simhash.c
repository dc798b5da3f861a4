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

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloomcrawl/simhash.h"

#include "alloc_fail.h"
#include "skip.h"

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
    /* The state fits a stack frame: "under 1 KB" (simhash.c). */
    assert_true(sizeof(struct bc_simhash) < 1024);

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
    for (size_t len = 1; len <= 130; len++) {
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

/* Every byte value, classified 16 at a time (SSE2, in a 64-byte block)
 * and one at a time (the table): the same words, and the documented
 * classes - letters folded, digits and bytes >= 0x80 word bytes, the rest
 * separators. */
static void test_classify(void **unused)
{
    (void)unused;
    struct bc_simhash_config c = cfg_min(1, 1);
    for (unsigned v = 0; v < 256; v++) {
        char text[80];
        for (size_t i = 0; i < sizeof(text); i += 5)
            memcpy(text + i, "xx?yy", 5);
        for (size_t i = 2; i < sizeof(text); i += 5)
            text[i] = (char)v;
        struct bc_simhash a, b;
        bc_simhash_init(&a, &c);
        bc_simhash_init(&b, &c);
        bc_simhash_feed_text(&a, text, sizeof(text));
        for (size_t i = 0; i < sizeof(text); i++)
            bc_simhash_feed_text(&b, text + i, 1);
        uint64_t fa, fb;
        assert_true(bc_simhash_final(&a, &fa));
        assert_true(bc_simhash_final(&b, &fb));
        assert_true(fa == fb);
        bool word = v >= 0x80 || (v >= '0' && v <= '9') ||
                    (v >= 'a' && v <= 'z') || (v >= 'A' && v <= 'Z');
        /* One word of 80 bytes, or "xx", 15 x "yyxx" and "yy". */
        assert_int_equal(bc_simhash_shingles(&a), word ? 1 : 17);
        if (v >= 'A' && v <= 'Z') {
            for (size_t i = 2; i < sizeof(text); i += 5)
                text[i] = (char)(v + 32);
            uint64_t lower;
            assert_true(fp_of(text, sizeof(text), &c, &lower));
            assert_true(lower == fa);
        }
    }
}

/* The hashing as simhash.c describes it, recomputed here: a word of up
 * to 16 bytes zero-padded to 16 with its length xor'ed into the seed; 17
 * to 32 bytes as they are; longer, 32-byte pieces chained, each hash the
 * seed of the next. A shingle: XXH3-64 of its words' hashes as
 * little-endian bytes. With one shingle (w = 1, one word) V[i] = +-1, so
 * the fingerprint is the shingle's hash itself - which also checks the
 * counters' spread table on every byte of it. */
static uint64_t model_word(const char *p, size_t len, uint64_t seed)
{
    if (len <= 16) {
        unsigned char pad[16] = {0};
        memcpy(pad, p, len);
        return XXH3_64bits_withSeed(pad, 16, seed ^ len);
    }
    while (len > 32) {
        seed = XXH3_64bits_withSeed(p, 32, seed);
        p += 32;
        len -= 32;
    }
    return XXH3_64bits_withSeed(p, len, seed);
}

static void test_hash_scheme(void **unused)
{
    (void)unused;
    char word[100];
    for (unsigned i = 0; i < sizeof(word); i++)
        word[i] = (char)('a' + (i * 7) % 26);
    for (uint64_t seed = 0; seed < 3; seed++) {
        struct bc_simhash_config c = cfg_min(1, 1);
        c.seed = seed * 0x1234567;
        for (size_t len = 1; len <= sizeof(word); len++) {
            uint64_t wh = model_word(word, len, c.seed);
            unsigned char le[8];
            for (int b = 0; b < 8; b++)
                le[b] = (unsigned char)(wh >> (8 * b));
            uint64_t want = XXH3_64bits_withSeed(le, 8, c.seed), fp;
            assert_true(fp_of(word, len, &c, &fp));
            assert_true(fp == want);
        }
        /* w = 3: one shingle of three words, oldest first. */
        c.shingle_words = 3;
        uint64_t h[3] = {model_word("one", 3, c.seed),
                         model_word("two", 3, c.seed),
                         model_word("three", 5, c.seed)};
        unsigned char le[24];
        for (int w = 0; w < 3; w++)
            for (int b = 0; b < 8; b++)
                le[8 * w + b] = (unsigned char)(h[w] >> (8 * b));
        uint64_t fp;
        assert_true(fp_of("One, two; THREE", 15, &c, &fp));
        assert_true(fp == XXH3_64bits_withSeed(le, 24, c.seed));
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
    /* w = 3, 4, 8 over 500 words: N = 501 - w, w shingles replaced. */
    static const struct {
        double w, want;
    } ws[] = {{3, 2.24}, {4, 2.59}, {8, 3.67}};
    for (size_t i = 0; i < sizeof(ws) / sizeof(*ws); i++) {
        double n = 501 - ws[i].w;
        assert_true(fabs(expected_distance((n - ws[i].w) / n) - ws[i].want) <
                    0.005);
    }
}

/* ---- the index ------------------------------------------------------- */

static struct bc_simhash_index_config icfg(unsigned k, uint64_t n,
                                           unsigned blocks)
{
    struct bc_simhash_index_config c;
    bc_simhash_index_config_init(&c);
    c.k = k;
    c.n_expected = n;
    c.blocks = blocks;
    return c;
}

static struct bc_simhash_layout layout_of(unsigned k, uint64_t n,
                                          unsigned blocks)
{
    struct bc_simhash_index_config c = icfg(k, n, blocks);
    struct bc_simhash_layout l;
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_OK);
    return l;
}

/* THE INDEX: the layouts the comment names, and the probes formula. */
static void test_layout(void **unused)
{
    (void)unused;
    struct bc_simhash_index_config c;
    bc_simhash_index_config_init(&c);
    assert_int_equal(c.k, 3);
    assert_int_equal(c.n_expected, 1000000);
    assert_int_equal(c.blocks, 0);
    assert_int_equal(c.max_probes, 0);

    /* k = 3, n = 10^7: 4 blocks of 16, 4 tables, 4 x 152.6 = 610 probes,
     * 16 + 8 x 4 = 48 bytes a fingerprint. */
    struct bc_simhash_layout l = layout_of(3, 10000000, 0);
    assert_int_equal(l.k, 3);
    assert_int_equal(l.blocks, 4);
    assert_int_equal(l.tables, 4);
    assert_int_equal(l.key_bits, 16);
    assert_int_equal(l.bucket_bits, 16);
    assert_true(fabs(l.probes / 4 - 152.6) < 0.05);
    assert_true(fabs(l.probes - 610.4) < 0.1);
    assert_int_equal(l.bytes_per_fp, 48);
    /* b = 5: 10 tables, keys of 25 or 26 bits (13+12 at least), 0.3 probes
     * a table with a bucket per key, 9.5 with buckets of about 16 (2^20
     * buckets at 10^7); 96 bytes, 2 times 48. */
    l = layout_of(3, 10000000, 5);
    assert_int_equal(l.tables, 10);
    assert_int_equal(l.key_bits, 25);
    assert_true(fabs(ldexp(1e7, -25) - 0.3) < 0.01);
    assert_int_equal(l.bucket_bits, 20);
    assert_true(fabs(l.probes / 10 - 9.5) < 0.05);
    assert_int_equal(l.bytes_per_fp, 96);
    assert_int_equal(l.bytes_per_fp, 2 * 48); /* "2 times the memory" */
    /* b = 6: 20 tables of 31- to 33-bit keys (11,11,11,11,10,10). */
    l = layout_of(3, 10000000, 6);
    assert_int_equal(l.tables, 20);
    assert_int_equal(l.key_bits, 31);
    /* b = 4 up to 256 x 2^16 fingerprints, b = 5 beyond. */
    assert_int_equal(layout_of(3, 256 * 65536, 0).blocks, 4);
    assert_int_equal(layout_of(3, 256 * 65536 + 1, 0).blocks, 5);
    assert_true(fabs(256 * 65536 / 1.7e7 - 1) < 0.02);
    /* k = 0: one table on all 64 bits; k = 1: 2 halves; k = 2: 3 thirds
     * (22, 21, 21 bits: each table keyed on one of them). */
    l = layout_of(0, 1000, 0);
    assert_int_equal(l.blocks, 1);
    assert_int_equal(l.tables, 1);
    assert_int_equal(l.key_bits, 64);
    l = layout_of(1, 1000, 0);
    assert_int_equal(l.tables, 2);
    assert_int_equal(l.key_bits, 32);
    l = layout_of(2, 1000, 0);
    assert_int_equal(l.tables, 3);
    assert_int_equal(l.key_bits, 21);
    /* Buckets: ceil(log2(n / 16)), 4..26, never more bits than the key. */
    assert_int_equal(layout_of(1, 1, 0).bucket_bits, 4);
    assert_int_equal(layout_of(1, 16 << 10, 0).bucket_bits, 10);
    assert_int_equal(layout_of(1, (16 << 10) + 1, 0).bucket_bits, 11);
    assert_int_equal(layout_of(0, UINT64_C(1) << 40, 0).bucket_bits, 26);
    /* Every k up to 8 has a layout of at most 64 tables, C(b, k) each. */
    for (unsigned k = 0; k <= BC_SIMHASH_MAX_K; k++) {
        for (uint64_t n = 1; n <= UINT64_C(1) << 32; n *= 16) {
            l = layout_of(k, n, 0);
            assert_true(l.tables >= 1 && l.tables <= 64);
            assert_true(l.blocks > k || (k == 0 && l.blocks == 1));
            double binom = 1;
            for (unsigned i = 1; i <= k; i++)
                binom = binom * (l.blocks - k + i) / i;
            assert_true(binom == l.tables);
        }
    }
    /* Refused: k > 8, n = 0, b <= k, b > 64, more than 64 tables. */
    c = icfg(9, 10, 0);
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_ERR_INVALID_ARG);
    c = icfg(3, 0, 0);
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_ERR_INVALID_ARG);
    c = icfg(3, 10, 3);
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_ERR_INVALID_ARG);
    c = icfg(1, 10, 65);
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_ERR_INVALID_ARG);
    c = icfg(3, 10, 8); /* C(8, 3) = 56 */
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_OK);
    c = icfg(3, 10, 9); /* C(9, 3) = 84 */
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_ERR_INVALID_ARG);
    c = icfg(0, 10, 2);
    assert_int_equal(bc_simhash_index_layout(&c, &l), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_simhash_index_layout(&c, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_simhash_index_layout(NULL, &l), BC_OK);
    assert_int_equal(l.tables, 4); /* the defaults: k = 3, 10^6 */
}

/* The folded signature's arithmetic (simhash.c, the buckets): folding
 * never adds a difference, and a random 32-bit sig is within 3 with
 * probability sum_{i<=3} C(32, i) / 2^32 = 1.3e-6. */
static void test_fold(void **unused)
{
    (void)unused;
    uint64_t rng = 4;
    for (unsigned i = 0; i < 100000; i++) {
        uint64_t x = splitmix(&rng) & splitmix(&rng) & splitmix(&rng);
        uint32_t f = (uint32_t)(x ^ (x >> 32));
        assert_true(__builtin_popcount(f) <= __builtin_popcountll(x));
    }
    double c = 1, s = 0;
    for (unsigned i = 0; i <= 3; i++) {
        if (i)
            c = c * (32 - i + 1) / i;
        s += c;
    }
    assert_true(s == 5489.0);
    assert_true(fabs(s / ldexp(1, 32) - 1.3e-6) < 0.05e-6);
}

/* The probes formula against queries: random fingerprints compare, on
 * average, sum n / 2^bucket_bits others (keys taken as they are, and
 * keys hashed by multiply-shift into fewer buckets). */
static void test_probes(void **unused)
{
    (void)unused;
    static const unsigned blocks[] = {4, 5};
    for (size_t bi = 0; bi < 2; bi++) {
        const uint64_t n = 200000;
        struct bc_simhash_index_config c = icfg(3, n, blocks[bi]);
        struct bc_simhash_index *x = NULL;
        assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
        uint64_t rng = 5 + bi;
        for (uint64_t i = 0; i < n; i++)
            assert_int_equal(bc_simhash_index_add(x, splitmix(&rng), i), BC_OK);
        struct bc_simhash_layout l;
        bc_simhash_index_get_layout(x, &l);
        double sum = 0;
        const unsigned queries = 20000;
        for (unsigned q = 0; q < queries; q++) {
            uint64_t probes = 0;
            (void)bc_simhash_index_query(x, splitmix(&rng), NULL, &probes);
            sum += (double)probes;
        }
        /* Within 4 % (the mean of 20,000 Poisson-like counts). */
        assert_true(fabs(sum / queries / l.probes - 1) < 0.04);
        bc_simhash_index_free(x);
    }
}

/* The naive model: the nearest of fps[0..n) within k, ties the first. */
static bool brute_nearest(const uint64_t *fps, size_t n, uint64_t q, unsigned k,
                          size_t *row, unsigned *dist)
{
    bool found = false;
    for (size_t i = 0; i < n; i++) {
        unsigned d = bc_simhash_distance(fps[i], q);
        if (d <= k && (!found || d < *dist)) {
            found = true;
            *dist = d;
            *row = i;
        }
    }
    return found;
}

/* A fingerprint near base: d random bits flipped (d distinct bits). */
static uint64_t flip_bits(uint64_t *rng, uint64_t base, unsigned d)
{
    uint64_t mask = 0;
    while ((unsigned)__builtin_popcountll(mask) < d)
        mask |= UINT64_C(1) << (splitmix(rng) & 63);
    return base ^ mask;
}

/* Queries against a brute-force scan: every fingerprint within k found
 * (the nearest, ties the first added), none beyond; fingerprints in
 * clusters, so that distances 0..k+2 all occur. */
static void check_against_brute(unsigned k, size_t n, unsigned blocks,
                                uint64_t seed)
{
    struct bc_simhash_index_config c = icfg(k, n, blocks);
    struct bc_simhash_index *x = NULL;
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
    uint64_t *fps = malloc(n * sizeof(*fps));
    assert_non_null(fps);
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && splitmix(&rng) % 4 != 0)
            fps[i] = flip_bits(&rng, fps[splitmix(&rng) % i],
                               (unsigned)(splitmix(&rng) % (k + 3)));
        else
            fps[i] = splitmix(&rng);
        assert_int_equal(bc_simhash_index_add(x, fps[i], i * 7 + 1), BC_OK);
    }
    assert_int_equal(bc_simhash_index_count(x), n);
    size_t hits = 0;
    for (size_t qi = 0; qi < 3 * n; qi++) {
        uint64_t q = qi % 3 == 2
                         ? splitmix(&rng)
                         : flip_bits(&rng, fps[splitmix(&rng) % n],
                                     (unsigned)(splitmix(&rng) % (k + 3)));
        size_t row = 0;
        unsigned dist = 0;
        bool want = brute_nearest(fps, n, q, k, &row, &dist);
        struct bc_simhash_match m = {0, 0, 99};
        bool got = bc_simhash_index_query(x, q, &m, NULL);
        assert_int_equal(got, want);
        if (want) {
            hits++;
            assert_int_equal(m.distance, dist);
            assert_true(m.fp == fps[row]);
            assert_true(m.id == row * 7 + 1);
        } else {
            assert_int_equal(m.distance, 99); /* untouched */
        }
    }
    assert_true(hits > n / 10 && hits < 3 * n); /* both sides met */
    bc_simhash_index_free(x);
    free(fps);
}

static void test_brute_force(void **unused)
{
    (void)unused;
    static const struct {
        unsigned k, blocks;
        size_t n;
    } cases[] = {
        {0, 0, 2000}, {1, 0, 2000}, {2, 0, 3000}, {3, 0, 1000},
        {3, 0, 5000}, {3, 5, 3000}, {3, 6, 2000}, {2, 5, 2000},
        {4, 0, 3000}, {6, 0, 2000}, {8, 0, 1500}, {1, 7, 1000},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        check_against_brute(cases[i].k, cases[i].n, cases[i].blocks, 100 + i);
}

/* Many candidates for one query - more than a query holds before it
 * reads their rows (16) - in q's bucket of the table of bits 48-63
 * (bits 0, 20 and 40 differ), in buckets of
 * every length from 1 to 40 (the scan's 16 at a time, its overlapping
 * last 16, and a bucket under 16): the nearest is found, ties going to
 * the first added. */
static void test_many_candidates(void **unused)
{
    (void)unused;
    const uint64_t q = UINT64_C(0x0123456789abcdef);
    for (unsigned n = 1; n <= 40; n++) {
        struct bc_simhash_index *x = NULL;
        struct bc_simhash_index_config c = icfg(3, 1000, 0);
        assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
        /* distance 3 (bits 0, 20, 40), one at 2 at n / 2, then another */
        for (unsigned i = 0; i < n; i++) {
            uint64_t fp = q ^ UINT64_C(0x0000010000100001);
            if (i == n / 2 || i == n - 1)
                fp = q ^ UINT64_C(0x0000010000100000);
            assert_int_equal(bc_simhash_index_add(x, fp, i), BC_OK);
        }
        struct bc_simhash_match m = {0, 0, 99};
        uint64_t probes = 0;
        assert_true(bc_simhash_index_query(x, q, &m, &probes));
        assert_int_equal(m.distance, 2);
        assert_true(m.id == n / 2);
        assert_true(probes >= n); /* all n in q's bucket of table D */
        /* beyond k, every one of them: none */
        assert_false(bc_simhash_index_query(x, ~q, &m, NULL));
        bc_simhash_index_free(x);
    }
}

/* test_and_add against the model: found when the scan finds one within
 * k (nothing added), else added. */
static void test_test_and_add(void **unused)
{
    (void)unused;
    const size_t n = 4000;
    struct bc_simhash_index *x = NULL;
    struct bc_simhash_index_config c = icfg(3, n, 0);
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
    uint64_t *kept = malloc(n * sizeof(*kept));
    uint64_t *ids = malloc(n * sizeof(*ids));
    assert_non_null(kept);
    assert_non_null(ids);
    size_t nk = 0;
    uint64_t rng = 9;
    for (size_t i = 0; i < n; i++) {
        uint64_t fp = nk && splitmix(&rng) % 2
                          ? flip_bits(&rng, kept[splitmix(&rng) % nk],
                                      (unsigned)(splitmix(&rng) % 6))
                          : splitmix(&rng);
        size_t row = 0;
        unsigned dist = 0;
        bool want = brute_nearest(kept, nk, fp, 3, &row, &dist);
        struct bc_simhash_match m;
        bool found = !want;
        assert_int_equal(bc_simhash_index_test_and_add(x, fp, i, &m, &found),
                         BC_OK);
        assert_int_equal(found, want);
        if (want) {
            assert_true(m.fp == kept[row]);
            assert_true(m.id == ids[row]);
            assert_int_equal(m.distance, dist);
        } else {
            kept[nk] = fp;
            ids[nk++] = i;
        }
        assert_int_equal(bc_simhash_index_count(x), nk);
    }
    assert_true(nk > n / 3 && nk < n);
    /* An exact copy added twice by add: the first is found. */
    assert_int_equal(bc_simhash_index_add(x, kept[0], 111), BC_OK);
    struct bc_simhash_match m;
    assert_true(bc_simhash_index_query(x, kept[0], &m, NULL));
    assert_true(m.id == ids[0]);
    assert_int_equal(m.distance, 0);
    /* match may be NULL. */
    bool found = false;
    assert_int_equal(bc_simhash_index_test_and_add(x, kept[0], 5, NULL, &found),
                     BC_OK);
    assert_true(found);
    bc_simhash_index_free(x);
    free(kept);
    free(ids);
}

/* Memory: bytes_per_fp per fingerprint at least, with up to half again
 * for the buckets' spare room; and 16 bytes a bucket from the start. */
static void test_memory(void **unused)
{
    (void)unused;
    const size_t n = 100000;
    struct bc_simhash_index *x = NULL;
    struct bc_simhash_index_config c = icfg(3, n, 0);
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
    struct bc_simhash_layout l;
    bc_simhash_index_get_layout(x, &l);
    size_t empty = bc_simhash_index_memory(x);
    size_t buckets = (size_t)l.tables * 16 << l.bucket_bits;
    assert_true(empty >= buckets && empty < buckets + 4096);
    uint64_t rng = 3;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(bc_simhash_index_add(x, splitmix(&rng), i), BC_OK);
    double per = (double)(bc_simhash_index_memory(x) - empty) / n;
    assert_true(per >= l.bytes_per_fp);
    assert_true(per <= 1.5 * l.bytes_per_fp);
    bc_simhash_index_free(x);
}

static void test_index_args(void **unused)
{
    (void)unused;
    struct bc_simhash_index *x = NULL;
    struct bc_simhash_index_config c = icfg(9, 10, 0);
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_ERR_INVALID_ARG);
    assert_null(x);
    assert_int_equal(bc_simhash_index_create(NULL, NULL), BC_ERR_INVALID_ARG);
    bc_simhash_index_free(NULL);
    assert_int_equal(bc_simhash_index_add(NULL, 1, 1), BC_ERR_INVALID_ARG);
    struct bc_simhash_match m = {1, 2, 3};
    uint64_t probes = 9;
    assert_false(bc_simhash_index_query(NULL, 1, &m, &probes));
    assert_int_equal(probes, 0);
    assert_int_equal(m.distance, 3);
    bool found = true;
    assert_int_equal(bc_simhash_index_test_and_add(NULL, 1, 1, &m, &found),
                     BC_ERR_INVALID_ARG);
    assert_true(found);
    assert_int_equal(bc_simhash_index_count(NULL), 0);
    assert_int_equal(bc_simhash_index_memory(NULL), 0);
    struct bc_simhash_layout l;
    memset(&l, 0xff, sizeof(l));
    bc_simhash_index_get_layout(NULL, &l);
    assert_int_equal(l.tables, 0);
    bc_simhash_index_get_layout(NULL, NULL);
    assert_int_equal(bc_simhash_index_save(NULL, "x"), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_simhash_index_load(NULL, &x), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_simhash_index_load("x", NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_simhash_index_load_mem(NULL, 0, &x),
                     BC_ERR_INVALID_ARG);

    /* The defaults; an empty index finds nothing, compares nothing. */
    assert_int_equal(bc_simhash_index_create(NULL, &x), BC_OK);
    assert_false(bc_simhash_index_query(x, 42, NULL, &probes));
    assert_int_equal(probes, 0);
    assert_int_equal(bc_simhash_index_test_and_add(x, 42, 1, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_simhash_index_count(x), 0);
    assert_int_equal(bc_simhash_index_save(x, NULL), BC_ERR_INVALID_ARG);
    bc_simhash_index_free(x);
}

/* ---- the file -------------------------------------------------------- */

static void tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "/tmp/test_simhash.%ld.%s", (long)getpid(), name);
}

/* An index of n clustered fingerprints (ids 3i + 2), and them in fps. */
static struct bc_simhash_index *clustered(unsigned k, size_t n, unsigned blocks,
                                          uint64_t *fps)
{
    struct bc_simhash_index_config c = icfg(k, n ? n : 1, blocks);
    struct bc_simhash_index *x = NULL;
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
    uint64_t rng = 31 + n;
    for (size_t i = 0; i < n; i++) {
        fps[i] = i && splitmix(&rng) % 2
                     ? flip_bits(&rng, fps[splitmix(&rng) % i],
                                 (unsigned)(splitmix(&rng) % (k + 2)))
                     : splitmix(&rng);
        assert_int_equal(bc_simhash_index_add(x, fps[i], 3 * i + 2), BC_OK);
    }
    return x;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* Save, load: the same layout, count and answers (ties included). */
static void test_save_load(void **unused)
{
    (void)unused;
    static const struct {
        unsigned k, blocks;
        size_t n;
    } cases[] = {{3, 0, 3000}, {3, 5, 2000}, {0, 0, 1000}, {3, 0, 0}};
    char path[128];
    tmp_path(path, sizeof(path), "idx");
    uint64_t *fps = malloc(3000 * sizeof(*fps));
    assert_non_null(fps);
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(*cases); ci++) {
        size_t n = cases[ci].n;
        struct bc_simhash_index *x =
            clustered(cases[ci].k, n, cases[ci].blocks, fps);
        assert_int_equal(bc_simhash_index_save(x, path), BC_OK);
        size_t len;
        free(slurp(path, &len));
        assert_int_equal(len, 64 + 16 * n + 8);
        struct bc_simhash_index *y = NULL;
        assert_int_equal(bc_simhash_index_load(path, &y), BC_OK);
        assert_int_equal(bc_simhash_index_count(y), n);
        struct bc_simhash_layout lx, ly;
        bc_simhash_index_get_layout(x, &lx);
        bc_simhash_index_get_layout(y, &ly);
        assert_int_equal(lx.k, ly.k);
        assert_int_equal(lx.blocks, ly.blocks);
        assert_int_equal(lx.tables, ly.tables);
        assert_int_equal(lx.key_bits, ly.key_bits);
        assert_int_equal(lx.bucket_bits, ly.bucket_bits);
        assert_true(lx.probes == ly.probes);
        assert_int_equal(lx.bytes_per_fp, ly.bytes_per_fp);
        uint64_t rng = 8;
        for (size_t q = 0; q < 2 * n + 100; q++) {
            uint64_t fp = n && q % 2 ? flip_bits(&rng, fps[splitmix(&rng) % n],
                                                 (unsigned)(q % 5))
                                     : splitmix(&rng);
            struct bc_simhash_match mx = {0, 0, 0}, my = {0, 0, 0};
            uint64_t px, py;
            bool fx = bc_simhash_index_query(x, fp, &mx, &px);
            bool fy = bc_simhash_index_query(y, fp, &my, &py);
            assert_int_equal(fx, fy);
            assert_true(mx.fp == my.fp && mx.id == my.id);
            assert_int_equal(mx.distance, my.distance);
            assert_int_equal(px, py);
        }
        /* Saved again, the same bytes. */
        char path2[128];
        tmp_path(path2, sizeof(path2), "idx2");
        assert_int_equal(bc_simhash_index_save(y, path2), BC_OK);
        size_t l1, l2;
        unsigned char *a = slurp(path, &l1), *b = slurp(path2, &l2);
        assert_int_equal(l1, l2);
        assert_memory_equal(a, b, l1);
        free(a);
        free(b);
        unlink(path2);
        bc_simhash_index_free(x);
        bc_simhash_index_free(y);
    }
    unlink(path);
    free(fps);
    /* Nowhere to write; nothing to read. */
    struct bc_simhash_index *x = NULL;
    assert_int_equal(bc_simhash_index_create(NULL, &x), BC_OK);
    assert_int_equal(bc_simhash_index_save(x, "/nonexistent-dir/idx"),
                     BC_ERR_IO);
    bc_simhash_index_free(x);
    x = NULL;
    assert_int_equal(bc_simhash_index_load("/nonexistent-dir/idx", &x),
                     BC_ERR_IO);
    assert_null(x);
}

/* The checksum of a damaged image made right again, so that the check
 * of the field changed is the one that answers. */
static void fix_sum(unsigned char *p, size_t len)
{
    uint64_t h = XXH64(p, len - 8, 0);
    for (int i = 0; i < 8; i++)
        p[len - 8 + (size_t)i] = (unsigned char)(h >> (8 * i));
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* One damaged copy of the image: edit it, fix the checksum or not, and
 * load it from memory and from a file. */
static void expect_load(const unsigned char *img, size_t len,
                        void (*edit)(unsigned char *p, uintptr_t arg),
                        uintptr_t arg, bool fix, enum bc_status want)
{
    unsigned char *p = malloc(len + 1);
    assert_non_null(p);
    memcpy(p, img, len);
    if (edit)
        edit(p, arg);
    if (fix)
        fix_sum(p, len);
    struct bc_simhash_index *x = NULL;
    enum bc_status st = bc_simhash_index_load_mem(p, len, &x);
    if (st != want)
        fail_msg("load_mem: %s, not %s", bc_strerror(st), bc_strerror(want));
    if (st == BC_OK)
        bc_simhash_index_free(x);
    else
        assert_null(x);
    char path[128];
    tmp_path(path, sizeof(path), "bad");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, len, f), len);
    fclose(f);
    x = NULL;
    assert_int_equal(bc_simhash_index_load(path, &x), want);
    bc_simhash_index_free(x);
    unlink(path);
    free(p);
}

static void edit_byte(unsigned char *p, uintptr_t at)
{
    p[at] ^= 0x40;
}
static void edit_version(unsigned char *p, uintptr_t v)
{
    put32(p + 8, (uint32_t)v);
}
static void edit_k(unsigned char *p, uintptr_t v)
{
    put32(p + 12, (uint32_t)v);
}
static void edit_blocks(unsigned char *p, uintptr_t v)
{
    put32(p + 16, (uint32_t)v);
}
static void edit_n(unsigned char *p, uintptr_t v)
{
    put64(p + 24, (uint64_t)v);
}
static void edit_max_probes(unsigned char *p, uintptr_t v)
{
    put64(p + 32, (uint64_t)v);
}
static void edit_count(unsigned char *p, uintptr_t v)
{
    put64(p + 40, (uint64_t)v);
}
static void edit_count_huge(unsigned char *p, uintptr_t shift)
{
    put64(p + 40, UINT64_C(1) << shift);
}

static void test_load_damaged(void **unused)
{
    (void)unused;
    uint64_t fps[40];
    struct bc_simhash_index *x = clustered(3, 40, 0, fps);
    char path[128];
    tmp_path(path, sizeof(path), "img");
    assert_int_equal(bc_simhash_index_save(x, path), BC_OK);
    bc_simhash_index_free(x);
    size_t len;
    unsigned char *img = slurp(path, &len);
    unlink(path);
    assert_int_equal(len, 64 + 16 * 40 + 8);

    expect_load(img, len, NULL, 0, false, BC_OK);
    /* Each header field. */
    for (uintptr_t at = 0; at < 8; at++)
        expect_load(img, len, edit_byte, at, true, BC_ERR_FORMAT);
    expect_load(img, len, edit_version, 2, true, BC_ERR_VERSION);
    expect_load(img, len, edit_version, 0, true, BC_ERR_VERSION);
    expect_load(img, len, edit_k, 9, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_k, 2, true, BC_OK); /* 4 blocks, k = 2 */
    expect_load(img, len, edit_blocks, 0, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_blocks, 3, true, BC_ERR_CORRUPT); /* <= k */
    expect_load(img, len, edit_blocks, 9, true, BC_ERR_CORRUPT); /* 84 t */
    expect_load(img, len, edit_blocks, 65, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_blocks, 5, true, BC_OK);
    for (uintptr_t at = 20; at < 24; at++)
        expect_load(img, len, edit_byte, at, true, BC_ERR_CORRUPT);
    for (uintptr_t at = 48; at < 64; at++)
        expect_load(img, len, edit_byte, at, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_n, 0, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_max_probes, 7, true, BC_OK); /* advisory */
    expect_load(img, len, edit_count, 41, true, BC_ERR_TRUNCATED);
    expect_load(img, len, edit_count, 39, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_count_huge, 32, true, BC_ERR_CORRUPT);
    expect_load(img, len, edit_count_huge, 60, true, BC_ERR_CORRUPT);
    /* The checksum: a field, a pair, the checksum itself. */
    expect_load(img, len, edit_max_probes, 7, false, BC_ERR_CHECKSUM);
    for (uintptr_t at = 64; at < len; at += 13)
        expect_load(img, len, edit_byte, at, false, BC_ERR_CHECKSUM);
    expect_load(img, len, edit_byte, len - 1, false, BC_ERR_CHECKSUM);
    /* Truncated anywhere, or one byte too long. */
    for (size_t cut = 0; cut < len; cut++)
        expect_load(img, cut, NULL, 0, false, BC_ERR_TRUNCATED);
    unsigned char *longer = malloc(len + 1);
    assert_non_null(longer);
    memcpy(longer, img, len);
    longer[len] = 0;
    expect_load(longer, len + 1, NULL, 0, false, BC_ERR_CORRUPT);
    free(longer);
    free(img);
}

/* ---- allocation failures --------------------------------------------- */

/* Every allocation of create, add, save and load failed in turn: each
 * failure is BC_ERR_NOMEM, leaves the output or the index as it was, and
 * leaks nothing (the sanitizer build checks the leaks). */
static void test_allocation_failure(void **unused)
{
    (void)unused;
    struct bc_simhash_index_config c = icfg(3, 1000, 0);
    struct bc_simhash_index *const sentinel =
        (struct bc_simhash_index *)&sentinel;
    struct bc_simhash_index *x = NULL;
    long before = alloc_calls;
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
    if (alloc_calls == before) {
        bc_simhash_index_free(x);
        BC_SKIP(); /* not linked with --wrap */
        return;
    }
    bc_simhash_index_free(x);

    /* create: the handle, the tables, each table's bucket array. */
    long n;
    for (n = 0;; n++) {
        struct bc_simhash_index *out = sentinel;
        fail_after = n;
        enum bc_status st = bc_simhash_index_create(&c, &out);
        fail_after = -1;
        if (st == BC_OK) {
            bc_simhash_index_free(out);
            break;
        }
        assert_int_equal(st, BC_ERR_NOMEM);
        assert_ptr_equal(out, sentinel);
    }
    assert_true(n >= 6); /* handle, tables, 4 bucket arrays */

    /* add: the pair table's growth and every bucket's; a failed add
     * changes nothing, and the same add succeeds afterwards. */
    uint64_t fps[300];
    assert_int_equal(bc_simhash_index_create(&c, &x), BC_OK);
    uint64_t rng = 12;
    size_t failures = 0;
    for (size_t i = 0; i < 300; i++) {
        fps[i] = i % 3 ? flip_bits(&rng, fps[i - 1], 2) : splitmix(&rng);
        for (n = 0;; n++) {
            fail_after = n;
            enum bc_status st = bc_simhash_index_add(x, fps[i], i);
            fail_after = -1;
            if (st == BC_OK)
                break;
            assert_int_equal(st, BC_ERR_NOMEM);
            assert_int_equal(bc_simhash_index_count(x), i);
            failures++;
        }
    }
    assert_true(failures > 300); /* every new bucket, the pair table */
    for (size_t i = 0; i < 300; i++) {
        size_t row = 0;
        unsigned dist = 0;
        uint64_t q = flip_bits(&rng, fps[i], 1);
        assert_true(brute_nearest(fps, 300, q, 3, &row, &dist));
        struct bc_simhash_match m;
        assert_true(bc_simhash_index_query(x, q, &m, NULL));
        assert_true(m.id == row);
        assert_int_equal(m.distance, dist);
    }

    /* save (its buffer) and load (the image, the index, its adds). */
    char path[128];
    tmp_path(path, sizeof(path), "nomem");
    fail_after = 0;
    assert_int_equal(bc_simhash_index_save(x, path), BC_ERR_NOMEM);
    fail_after = -1;
    assert_int_equal(access(path, F_OK), -1); /* nothing left behind */
    assert_int_equal(bc_simhash_index_save(x, path), BC_OK);
    for (n = 0;; n++) {
        struct bc_simhash_index *out = sentinel;
        fail_after = n;
        enum bc_status st = bc_simhash_index_load(path, &out);
        fail_after = -1;
        if (st == BC_OK) {
            assert_int_equal(bc_simhash_index_count(out), 300);
            bc_simhash_index_free(out);
            break;
        }
        assert_int_equal(st, BC_ERR_NOMEM);
        assert_ptr_equal(out, sentinel);
    }
    assert_true(n > 300);
    unlink(path);
    bc_simhash_index_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_tokenization),
        cmocka_unit_test(test_long_words),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_hash_scheme),
        cmocka_unit_test(test_streaming),
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_too_short),
        cmocka_unit_test(test_angle),
        cmocka_unit_test(test_unrelated),
        cmocka_unit_test(test_edit_formula),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_fold),
        cmocka_unit_test(test_probes),
        cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_many_candidates),
        cmocka_unit_test(test_test_and_add),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_index_args),
        cmocka_unit_test(test_save_load),
        cmocka_unit_test(test_load_damaged),
        cmocka_unit_test(test_allocation_failure),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
