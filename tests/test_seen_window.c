/*
 * test_seen_window.c - the seen-test over a window filter (count and
 * time) and over a counting filter: verdicts inside and after the window,
 * across save/load, and bc_seen_forget().
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomcrawl/seen.h"

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

static struct bc_seen *make(enum bc_seen_kind kind, uint64_t window,
                            uint64_t expected, size_t lru)
{
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.kind = kind;
    c.window = window;
    c.expected = expected;
    c.lru_capacity = lru;
    struct bc_seen *s = NULL;
    assert_int_equal(bc_seen_create(&c, &s), BC_OK);
    return s;
}

/* Count window of 100 (G = 4, g = 34): a key is DUPLICATE while in the
 * window and NEW again once G g = 136 insertions old; every key inside
 * the last 100 insertions stays DUPLICATE (no false negative). */
static void test_count_window_verdicts(void **state)
{
    (void)state;
    struct bc_seen *s = make(BC_SEEN_WINDOW_COUNT, 100, 0, 1000);
    assert_null(bc_seen_bloom(s));
    assert_non_null(bc_seen_window(s));
    char key[64];
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    for (unsigned i = 0; i < 99; i++) {
        key_of(key, sizeof(key), "x", i);
        assert_int_equal(tadd(s, key), BC_SEEN_NEW);
    }
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    for (unsigned i = 99; i < 300; i++) {
        key_of(key, sizeof(key), "x", i);
        tadd(s, key);
    }
    assert_int_equal(peek(s, "https://a.example/", 18), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_int_equal(st.kind, BC_SEEN_WINDOW_COUNT);
    assert_int_equal(st.window.window, 100);
    assert_int_equal(bc_seen_forget(s, "https://a.example/", 18),
                     BC_ERR_UNSUPPORTED);
    bc_seen_free(s);

    /* The same window with 128-bit segments (window_segment_bits). */
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.kind = BC_SEEN_WINDOW_COUNT;
    c.window = 100;
    c.window_segment_bits = 128;
    assert_int_equal(bc_seen_create(&c, &s), BC_OK);
    bc_seen_stats(s, &st);
    assert_int_equal(st.window.segment_bits, 128);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    for (unsigned i = 0; i < 99; i++) {
        key_of(key, sizeof(key), "y", i);
        tadd(s, key);
    }
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    bc_seen_free(s);
    c.window_segment_bits = 64;
    assert_int_equal(bc_seen_create(&c, &s), BC_ERR_INVALID_ARG);
}

/* Time window of 1000 ms for 500 keys: NEW, DUPLICATE within T, NEW after;
 * the same after a save and load (the clock is in the file). */
static void test_time_window_verdicts(void **state)
{
    (void)state;
    struct bc_seen *s = make(BC_SEEN_WINDOW_TIME, 1000, 500, 100);
    char path[] = "/tmp/test_seen_window_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    bc_seen_set_clock(s, 10000);
    assert_int_equal(tadd(s, "https://a.example/p"), BC_SEEN_NEW);
    bc_seen_set_clock(s, 11000); /* exactly T later: still inside */
    assert_int_equal(tadd(s, "https://a.example/p"), BC_SEEN_DUPLICATE);
    assert_int_equal(bc_seen_save(s, path), BC_OK);
    bc_seen_free(s);

    struct bc_seen_config c;
    bc_seen_config_init(&c);
    assert_int_equal(bc_seen_load(path, &c, &s), BC_OK);
    assert_non_null(bc_seen_window(s));
    /* The LRU is empty after a load: in the window, PROBABLY_SEEN. */
    assert_int_equal(tadd(s, "https://a.example/p"), BC_SEEN_PROBABLY_SEEN);
    bc_seen_set_clock(s, 5000); /* the clock never goes back */
    assert_int_equal(tadd(s, "https://a.example/p"), BC_SEEN_PROBABLY_SEEN);
    /* G d = 4 * 334 ms after 10000 the first insertion is gone. */
    bc_seen_set_clock(s, 10000 + 4 * 334 + 334);
    assert_int_equal(tadd(s, "https://a.example/p"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/p"), BC_SEEN_DUPLICATE);
    bc_seen_free(s);
    unlink(path);
}

/* Counting filter: a forgotten key is NEW again; forgetting an unknown
 * key is refused; a plain Bloom layout refuses to forget. */
static void test_forget(void **state)
{
    (void)state;
    struct bc_seen_config c;
    bc_seen_config_init(&c);
    c.kind = BC_SEEN_COUNTING;
    c.expected = 1000;
    struct bc_seen *s;
    assert_int_equal(bc_seen_create(&c, &s), BC_OK);
    assert_null(bc_seen_bloom(s));
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://b.example/"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    assert_int_equal(bc_seen_forget(s, "https://a.example/", 18), BC_OK);
    assert_int_equal(peek(s, "https://a.example/", 18), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    assert_int_equal(tadd(s, "https://b.example/"), BC_SEEN_DUPLICATE);
    assert_int_equal(bc_seen_forget(s, "https://never.example/", 22),
                     BC_ERR_NOT_FOUND);
    assert_int_equal(bc_seen_forget(s, NULL, 3), BC_ERR_INVALID_ARG);
    struct bc_seen_stats st;
    bc_seen_stats(s, &st);
    assert_int_equal(st.kind, BC_SEEN_COUNTING);
    assert_int_equal(st.forgotten, 1);
    assert_int_equal(st.cbloom.keys, 2);
    /* Saved and loaded: b is still known (PROBABLY_SEEN: the LRU starts
     * empty), forgetting it makes it NEW. */
    char path[] = "/tmp/test_seen_window_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(bc_seen_save(s, path), BC_OK);
    bc_seen_free(s);
    assert_int_equal(bc_seen_load(path, &c, &s), BC_OK);
    unlink(path);
    bc_seen_stats(s, &st);
    assert_int_equal(st.kind, BC_SEEN_COUNTING);
    assert_int_equal(st.cbloom.keys, 2);
    assert_int_equal(peek(s, "https://b.example/", 18), BC_SEEN_PROBABLY_SEEN);
    assert_int_equal(bc_seen_forget(s, "https://b.example/", 18), BC_OK);
    assert_int_equal(tadd(s, "https://b.example/"), BC_SEEN_NEW);
    bc_seen_free(s);

    bc_seen_config_init(&c);
    assert_int_equal(bc_seen_create(&c, &s), BC_OK);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_NEW);
    assert_int_equal(bc_seen_forget(s, "https://a.example/", 18),
                     BC_ERR_UNSUPPORTED);
    assert_int_equal(tadd(s, "https://a.example/"), BC_SEEN_DUPLICATE);
    bc_seen_free(s);
    assert_int_equal(bc_seen_forget(NULL, "x", 1), BC_ERR_INVALID_ARG);
}

/* The batch call over a window gives the verdicts of single calls. */
static void test_window_batch(void **state)
{
    (void)state;
    struct bc_seen *a = make(BC_SEEN_WINDOW_COUNT, 200, 0, 50);
    struct bc_seen *b = make(BC_SEEN_WINDOW_COUNT, 200, 0, 50);
    char bufs[32][64];
    const char *keys[32];
    size_t lens[32];
    enum bc_seen_verdict v[32];
    for (unsigned round = 0; round < 50; round++) {
        for (unsigned i = 0; i < 32; i++) {
            key_of(bufs[i], sizeof(bufs[i]), "b", (round * 32 + i * 7) % 500);
            keys[i] = bufs[i];
            lens[i] = strlen(bufs[i]);
        }
        assert_int_equal(bc_seen_test_and_add_batch(a, keys, lens, 32, v),
                         BC_OK);
        for (unsigned i = 0; i < 32; i++)
            assert_int_equal(v[i], tadd(b, keys[i]));
    }
    bc_seen_free(a);
    bc_seen_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_window_verdicts),
        cmocka_unit_test(test_time_window_verdicts),
        cmocka_unit_test(test_forget),
        cmocka_unit_test(test_window_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
