/*
 * test_validators.c - the ETag and Last-Modified of each URL's last 2xx
 * page in memory (crawler/validators.c, private: validators_int.h): a
 * put replaces a URL's row, URLs that differ only after a NUL byte or in
 * length are apart, misuse, and an oracle test against a naive array on
 * seeded random URLs with repeats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validators_int.h"

/* A row found, copied. */
struct found {
    char etag[64], lm[64], id[64], uri[64];
    int64_t date;
};

static enum bc_status copy_row(void *ctx,
                               const struct bc_crawl_state_validators *v)
{
    struct found *f = ctx;
    snprintf(f->etag, sizeof(f->etag), "%s", v->etag);
    snprintf(f->lm, sizeof(f->lm), "%s", v->last_modified);
    snprintf(f->id, sizeof(f->id), "%s", v->record_id);
    snprintf(f->uri, sizeof(f->uri), "%s", v->record_uri);
    f->date = v->date;
    return BC_OK;
}

static enum bc_status refuse(void *ctx,
                             const struct bc_crawl_state_validators *v)
{
    (void)ctx;
    (void)v;
    return BC_ERR_NOMEM;
}

/* A put replaces the URL's row; a URL with a NUL byte inside, or a
 * prefix of another, is its own key; the callback's status is returned;
 * misuse. */
static void test_put_find(void **state)
{
    (void)state;
    struct bc_validators *v = NULL;
    struct found f;
    assert_int_equal(bc_validators_create(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_validators_create(&v), BC_OK);
    assert_int_equal(bc_validators_find(v, "http://a/x", 10, copy_row, &f),
                     BC_ERR_NOT_FOUND);
    struct bc_crawl_state_validators row = {"http://a/x", 10, "\"1\"", "", "",
                                            "http://a/x", 100};
    assert_int_equal(bc_validators_put(v, &row), BC_OK);
    row = (struct bc_crawl_state_validators){
        "http://a/x",   10,           "\"2\"", "Mon, 07 Nov 1994 08:49:37 GMT",
        "<urn:uuid:1>", "http://a/y", 200};
    assert_int_equal(bc_validators_put(v, &row), BC_OK);
    row = (struct bc_crawl_state_validators){
        "http://a/x\0z", 12, "\"nul\"", "", "", "http://a/x", 300};
    assert_int_equal(bc_validators_put(v, &row), BC_OK);
    row = (struct bc_crawl_state_validators){
        "http://a/", 9, "\"short\"", "", "", "http://a/", 400};
    assert_int_equal(bc_validators_put(v, &row), BC_OK);
    assert_int_equal(bc_validators_count(v), 3);
    memset(&f, 0, sizeof(f));
    assert_int_equal(bc_validators_find(v, "http://a/x", 10, copy_row, &f),
                     BC_OK);
    assert_string_equal(f.etag, "\"2\"");
    assert_string_equal(f.lm, "Mon, 07 Nov 1994 08:49:37 GMT");
    assert_string_equal(f.id, "<urn:uuid:1>");
    assert_string_equal(f.uri, "http://a/y");
    assert_int_equal(f.date, 200);
    assert_int_equal(bc_validators_find(v, "http://a/x\0z", 12, copy_row, &f),
                     BC_OK);
    assert_string_equal(f.etag, "\"nul\"");
    assert_int_equal(bc_validators_find(v, "http://a/", 9, copy_row, &f),
                     BC_OK);
    assert_string_equal(f.etag, "\"short\"");
    assert_int_equal(bc_validators_find(v, "http://a/x", 10, refuse, NULL),
                     BC_ERR_NOMEM);
    row.etag = NULL;
    assert_int_equal(bc_validators_put(v, &row), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_validators_put(NULL, &row), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_validators_put(v, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_validators_find(v, "http://a/x", 10, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_validators_find(NULL, "x", 1, copy_row, &f),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_validators_count(v), 3);
    assert_int_equal(bc_validators_count(NULL), 0);
    bc_validators_free(v);
    bc_validators_free(NULL);
}

/* Against a naive array: 20,000 puts of seeded random URLs among 2,000
 * (so most replace a row), then every URL's row is its last put's. */
static void test_oracle(void **state)
{
    (void)state;
    enum { URLS = 2000, PUTS = 20000 };
    static int64_t last[URLS]; /* the date of URL i's last put, or 0 */
    memset(last, 0, sizeof(last));
    struct bc_validators *v = NULL;
    assert_int_equal(bc_validators_create(&v), BC_OK);
    uint64_t x = 24;
    for (int k = 1; k <= PUTS; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % URLS);
        char url[64], etag[32];
        int n = snprintf(url, sizeof(url), "http://h%d.test/p/%d", i % 7, i);
        snprintf(etag, sizeof(etag), "\"%d\"", k);
        struct bc_crawl_state_validators row = {url, (size_t)n, etag, "",
                                                "",  url,       k};
        assert_int_equal(bc_validators_put(v, &row), BC_OK);
        last[i] = k;
    }
    size_t kept = 0;
    for (int i = 0; i < URLS; i++) {
        char url[64], etag[32];
        int n = snprintf(url, sizeof(url), "http://h%d.test/p/%d", i % 7, i);
        struct found f;
        enum bc_status st = bc_validators_find(v, url, (size_t)n, copy_row, &f);
        if (!last[i]) {
            assert_int_equal(st, BC_ERR_NOT_FOUND);
            continue;
        }
        kept++;
        assert_int_equal(st, BC_OK);
        snprintf(etag, sizeof(etag), "\"%lld\"", (long long)last[i]);
        assert_string_equal(f.etag, etag);
        assert_string_equal(f.uri, url);
        assert_int_equal(f.date, last[i]);
    }
    assert_int_equal(bc_validators_count(v), kept);
    bc_validators_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_find),
        cmocka_unit_test(test_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
