/*
 * test_payloads.c - the crawl's index of payload digests
 * (crawler/payloads.c, private: payloads_int.h): the first URL of a
 * digest stays, an entry gains its record once, misuse, an oracle test
 * against a naive array on seeded random digests with repeats, and the
 * memory per entry its comment states.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "payloads_int.h"

static void digest_of(uint64_t k, unsigned char d[BC_PAYLOAD_DIGEST_SIZE])
{
    /* splitmix64: a seeded, reproducible stream of random-looking bytes,
     * as SHA-1 digests look. */
    for (int i = 0; i < BC_PAYLOAD_DIGEST_SIZE; i += 8) {
        uint64_t z = (k += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        int n = BC_PAYLOAD_DIGEST_SIZE - i < 8 ? BC_PAYLOAD_DIGEST_SIZE - i : 8;
        memcpy(d + i, &z, (size_t)n);
    }
}

static void test_first_stays(void **state)
{
    (void)state;
    struct bc_payloads *p = NULL;
    unsigned char a[20], b[20];
    struct bc_payload_ref ref;
    digest_of(1, a);
    digest_of(2, b);
    assert_int_equal(bc_payloads_create(&p), BC_OK);
    assert_false(bc_payloads_find(p, a, &ref));
    assert_int_equal(bc_payloads_count(p), 0);
    assert_int_equal(bc_payloads_add(p, a, "http://x/a", 10, NULL, 100), BC_OK);
    assert_int_equal(
        bc_payloads_add(p, a, "http://x/b", 10, "<urn:uuid:b>", 200), BC_OK);
    assert_int_equal(bc_payloads_count(p), 1);
    assert_true(bc_payloads_find(p, a, &ref));
    assert_string_equal(ref.url, "http://x/a"); /* the first stays */
    assert_string_equal(ref.id, "");
    assert_int_equal(ref.date, 100);
    /* No record yet: the first one written becomes its record, once. */
    assert_int_equal(bc_payloads_set_record(p, a, "<urn:uuid:c>", 300), BC_OK);
    assert_int_equal(bc_payloads_set_record(p, a, "<urn:uuid:d>", 400), BC_OK);
    assert_true(bc_payloads_find(p, a, &ref));
    assert_string_equal(ref.url, "http://x/a");
    assert_string_equal(ref.id, "<urn:uuid:c>");
    assert_int_equal(ref.date, 300);
    assert_int_equal(bc_payloads_set_record(p, b, "<urn:uuid:e>", 1),
                     BC_ERR_NOT_FOUND);
    /* A URL is taken by length: bytes past it are not copied. */
    assert_int_equal(
        bc_payloads_add(p, b, "http://x/bXYZ", 10, "<urn:uuid:f>", 5), BC_OK);
    assert_true(bc_payloads_find(p, b, &ref));
    assert_string_equal(ref.url, "http://x/b");
    assert_string_equal(ref.id, "<urn:uuid:f>");
    assert_int_equal(bc_payloads_count(p), 2);
    bc_payloads_free(p);
}

static void test_misuse(void **state)
{
    (void)state;
    struct bc_payloads *p = NULL;
    unsigned char a[20];
    char long_id[BC_WARC_ID_SIZE + 1];
    memset(long_id, 'x', sizeof(long_id) - 1);
    long_id[sizeof(long_id) - 1] = '\0';
    digest_of(3, a);
    assert_int_equal(bc_payloads_create(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_create(&p), BC_OK);
    assert_int_equal(bc_payloads_add(NULL, a, "u", 1, NULL, 0),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_add(p, NULL, "u", 1, NULL, 0),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_add(p, a, NULL, 1, NULL, 0),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_add(p, a, "u", 1, long_id, 0),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_count(p), 0); /* unchanged */
    assert_int_equal(bc_payloads_add(p, a, "u", 1, NULL, 0), BC_OK);
    assert_int_equal(bc_payloads_set_record(p, a, "", 0), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_set_record(p, a, long_id, 0),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_payloads_set_record(NULL, a, "<i>", 0),
                     BC_ERR_INVALID_ARG);
    assert_false(bc_payloads_find(NULL, a, NULL));
    assert_true(bc_payloads_find(p, a, NULL));
    assert_int_equal(bc_payloads_count(NULL), 0);
    assert_int_equal(bc_payloads_memory(NULL), 0);
    bc_payloads_free(p);
    bc_payloads_free(NULL);
}

/* Against a naive model: N adds of digests drawn from N / 2 keys (so
 * about 40 % repeat), each checked by a linear scan; then every key
 * found or not as the model says, with its first URL. */
static void test_oracle(void **state)
{
    (void)state;
    enum { N = 4000, KEYS = N / 2 };
    struct bc_payloads *p = NULL;
    assert_int_equal(bc_payloads_create(&p), BC_OK);
    static unsigned char model[N][20];
    static int first[N];
    size_t m = 0;
    uint64_t rng = 42;
    for (int i = 0; i < N; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t k = (rng >> 33) % KEYS;
        unsigned char d[20];
        digest_of(k, d);
        char url[32];
        int n = snprintf(url, sizeof(url), "http://x/%d", i);
        size_t j = 0;
        while (j < m && memcmp(model[j], d, 20) != 0)
            j++;
        assert_int_equal(bc_payloads_find(p, d, NULL), j < m);
        if (j == m) {
            memcpy(model[m], d, 20);
            first[m++] = i;
        }
        assert_int_equal(bc_payloads_add(p, d, url, (size_t)n, NULL, i), BC_OK);
    }
    assert_int_equal(bc_payloads_count(p), m);
    for (uint64_t k = 0; k < KEYS + 100; k++) {
        unsigned char d[20];
        struct bc_payload_ref ref;
        digest_of(k, d);
        size_t j = 0;
        while (j < m && memcmp(model[j], d, 20) != 0)
            j++;
        assert_int_equal(bc_payloads_find(p, d, &ref), j < m);
        if (j < m) {
            char url[32];
            snprintf(url, sizeof(url), "http://x/%d", first[j]);
            assert_string_equal(ref.url, url);
            assert_int_equal(ref.date, first[j]);
        }
    }
    bc_payloads_free(p);
}

/* MEMORY (payloads.c): 136 bytes an entry plus its URL and NUL, and the
 * table's buckets (16 bytes each, between 1/10 and 1 per entry once
 * uthash has grown them), measured at 10^5 entries: between 137 and 152
 * bytes an entry beside the URLs. */
static void test_memory(void **state)
{
    (void)state;
    enum { N = 100000 };
    struct bc_payloads *p = NULL;
    assert_int_equal(bc_payloads_create(&p), BC_OK);
    size_t urls = 0;
    for (int i = 0; i < N; i++) {
        unsigned char d[20];
        char url[48];
        digest_of((uint64_t)i, d);
        int n = snprintf(url, sizeof(url), "http://www.example.test/p/%d", i);
        urls += (size_t)n + 1;
        assert_int_equal(
            bc_payloads_add(p, d, url, (size_t)n, "<urn:uuid:x>", 0), BC_OK);
    }
    double per = (double)(bc_payloads_memory(p) - urls) / N;
    print_message("payload index: %.1f bytes an entry beside its URL\n", per);
    assert_true(per >= 137.0 && per <= 152.0);
    bc_payloads_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_stays),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_oracle),
        cmocka_unit_test(test_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
