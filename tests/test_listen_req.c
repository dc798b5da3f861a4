/*
 * test_listen_req.c - crawl --listen's own request parsing
 * (examples/listen_req.c): every route with its method and the wrong
 * one, HOST segments decoded or refused, /hosts' query values at and
 * past their bounds, delays, a seeds body as a --seeds file reads, and
 * the bearer token with every byte position changed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "listen_req.h"

static enum listen_route route(const char *method, const char *path)
{
    char host[LISTEN_HOST_MAX + 1];
    size_t len;
    return listen_route_of(method, path, host, &len);
}

static void test_routes(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        enum listen_route r;
        bool post;
    } t[] = {
        {"/", LISTEN_PAGE, false},
        {"/metrics", LISTEN_METRICS, false},
        {"/status", LISTEN_STATUS, false},
        {"/hosts", LISTEN_HOSTS, false},
        {"/pause", LISTEN_PAUSE, true},
        {"/resume", LISTEN_RESUME, true},
        {"/seeds", LISTEN_SEEDS, true},
        {"/stop", LISTEN_STOP, true},
        {"/hosts/a.test/delay", LISTEN_HOST_DELAY, true},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        const char *right = t[i].post ? "POST" : "GET";
        const char *wrong = t[i].post ? "GET" : "POST";
        assert_int_equal(route(right, t[i].path), t[i].r);
        assert_int_equal(route(wrong, t[i].path), LISTEN_BAD_METHOD);
        assert_int_equal(route("PUT", t[i].path), LISTEN_BAD_METHOD);
        /* Allow names the route's methods, not the refused one's
         * opposite: PUT /metrics is "GET, HEAD", not "POST". */
        assert_string_equal(listen_allow_of(t[i].path),
                            t[i].post ? "POST" : "GET, HEAD");
        assert_int_equal(listen_route_is_control(t[i].r), t[i].post);
        if (!t[i].post)
            assert_int_equal(route("HEAD", t[i].path), t[i].r);
    }
    static const char *const unknown[] = {
        "",         "/metrics/",        "/Metrics",         "/hosts/",
        "/hosts/x", "/hosts//delay",    "/hosts/a/b/delay", "/delay",
        "/stop?x",  "/hosts/x://delay",
    };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
        assert_int_equal(route("POST", unknown[i]), LISTEN_NOT_FOUND);
}

static void test_host_segment(void **state)
{
    (void)state;
    char host[LISTEN_HOST_MAX + 1];
    size_t len = 0;
    assert_int_equal(listen_route_of("POST",
                                     "/hosts/http%3A%2F%2Fa.test%3A8080/delay",
                                     host, &len),
                     LISTEN_HOST_DELAY);
    assert_string_equal(host, "http://a.test:8080");
    assert_int_equal(len, 18);
    /* libmicrohttpd hands the path decoded: "://" arrives as such. */
    assert_int_equal(
        listen_route_of("POST", "/hosts/https://b.test/delay", host, &len),
        LISTEN_HOST_DELAY);
    assert_string_equal(host, "https://b.test");
    static const char *const bad[] = {
        "/hosts/a%2/delay",   "/hosts/a%zz/delay",  "/hosts/a%00b/delay",
        "/hosts/a%20b/delay", "/hosts/a%2Fb/delay", "/hosts/%0A/delay",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(listen_route_of("POST", bad[i], host, &len),
                         LISTEN_BAD_PATH);
    /* LISTEN_HOST_MAX bytes fit, one more does not. */
    char path[LISTEN_HOST_MAX + 32];
    snprintf(path, sizeof(path), "/hosts/%0*d/delay", (int)LISTEN_HOST_MAX, 0);
    assert_int_equal(listen_route_of("POST", path, host, &len),
                     LISTEN_HOST_DELAY);
    assert_int_equal(len, LISTEN_HOST_MAX);
    snprintf(path, sizeof(path), "/hosts/%0*d/delay", (int)LISTEN_HOST_MAX + 1,
             0);
    assert_int_equal(listen_route_of("POST", path, host, &len),
                     LISTEN_BAD_PATH);
}

static void test_hosts_query(void **state)
{
    (void)state;
    enum listen_sort s = LISTEN_SORT_QUEUED;
    size_t l = 0;
    assert_true(listen_hosts_query(NULL, NULL, &s, &l));
    assert_int_equal(s, LISTEN_SORT_PAGES);
    assert_int_equal(l, LISTEN_HOSTS_LIMIT_DEFAULT);
    assert_true(listen_hosts_query("errors", "100000", &s, &l));
    assert_int_equal(s, LISTEN_SORT_ERRORS);
    assert_int_equal(l, 100000);
    assert_true(listen_hosts_query("queued", "1", &s, &l));
    assert_int_equal(s, LISTEN_SORT_QUEUED);
    static const char *const bad_limit[] = {
        "0", "100001", "", "-1", "1x", " 5", "99999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_limit) / sizeof(bad_limit[0]); i++) {
        s = LISTEN_SORT_BYTES, l = 7;
        assert_false(listen_hosts_query("pages", bad_limit[i], &s, &l));
        assert_int_equal(s, LISTEN_SORT_BYTES); /* untouched */
        assert_int_equal(l, 7);
    }
    assert_false(listen_hosts_query("Pages", NULL, &s, &l));
    assert_false(listen_hosts_query("", NULL, &s, &l));
}

static void test_delay(void **state)
{
    (void)state;
    uint64_t ms = 9;
    assert_true(listen_delay_parse(" 250\r\n", 6, &ms));
    assert_int_equal(ms, 250);
    assert_true(listen_delay_parse("0", 1, &ms));
    assert_int_equal(ms, 0);
    assert_true(listen_delay_parse("3600000", 7, &ms));
    assert_int_equal(ms, LISTEN_DELAY_MAX_MS);
    ms = 9;
    static const char *const bad[] = {"3600001", "",    " ",    "1.5",
                                      "-1",      "1 2", "0x10", "12ms"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(listen_delay_parse(bad[i], strlen(bad[i]), &ms));
        assert_int_equal(ms, 9);
    }
    /* Not NUL-terminated: only len bytes are read. */
    assert_true(listen_delay_parse("42x", 2, &ms));
    assert_int_equal(ms, 42);
}

static void test_seeds_body(void **state)
{
    (void)state;
    static const char body[] = "# comment\n\n  http://a.test/ \r\n"
                               "\t#not a seed\nhttp://b.test/x\thttp://c\n"
                               "   \nhttp://last.test/";
    static const char *const want[] = {
        "http://a.test/", "http://b.test/x\thttp://c", "http://last.test/"};
    size_t pos = 0, n = 0, len;
    const char *url;
    while (listen_seeds_next(body, sizeof(body) - 1, &pos, &url, &len)) {
        assert_true(n < 3);
        assert_int_equal(len, strlen(want[n]));
        assert_memory_equal(url, want[n], len);
        n++;
    }
    assert_int_equal(n, 3);
    assert_int_equal(pos, sizeof(body) - 1);
    pos = 0;
    assert_false(listen_seeds_next("", 0, &pos, &url, &len));
}

static void test_token(void **state)
{
    (void)state;
    static const char token[] = "0123456789abcdef0123456789abcdef";
    size_t tl = sizeof(token) - 1;
    char auth[64];
    snprintf(auth, sizeof(auth), "Bearer %s", token);
    assert_true(listen_token_ok(auth, token, tl));
    snprintf(auth, sizeof(auth), "bEARER %s", token);
    assert_true(listen_token_ok(auth, token, tl)); /* the scheme's case */
    for (size_t i = 0; i < tl; i++) { /* each byte changed: refused */
        snprintf(auth, sizeof(auth), "Bearer %s", token);
        auth[7 + i] ^= 0x01;
        assert_false(listen_token_ok(auth, token, tl));
    }
    snprintf(auth, sizeof(auth), "Bearer %s0", token);
    assert_false(listen_token_ok(auth, token, tl)); /* longer */
    snprintf(auth, sizeof(auth), "Bearer %.*s", (int)tl - 1, token);
    assert_false(listen_token_ok(auth, token, tl)); /* shorter */
    snprintf(auth, sizeof(auth), "Basic %s", token);
    assert_false(listen_token_ok(auth, token, tl));
    assert_false(listen_token_ok(NULL, token, tl));
    assert_false(listen_token_ok("Bearer ", "", 0)); /* no empty token */
    assert_true(listen_wants_openmetrics(
        "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"));
    assert_false(listen_wants_openmetrics("text/plain"));
    assert_false(listen_wants_openmetrics(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),      cmocka_unit_test(test_host_segment),
        cmocka_unit_test(test_hosts_query), cmocka_unit_test(test_delay),
        cmocka_unit_test(test_seeds_body),  cmocka_unit_test(test_token),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
