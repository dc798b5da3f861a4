/*
 * test_url_idn.c - internationalized hosts in frontier/url, from both sides.
 *
 * tests/data/idn/hosts.tsv lists hosts, each with the answer of browsers:
 * the ASCII host that the URL Standard's reference implementation
 * (whatwg-url, see the README there) converts it to, or FAIL. Every row
 * is run through bc_url_normalize() as "http://" input "/", and must give
 * the browsers' answer under the project's host rules (url.c,
 * INTERNATIONALIZED HOSTS):
 *
 *   - one trailing dot of the host is dropped;
 *   - an ASCII host that is no DNS host name (a byte other than a-z 0-9
 *     '-' '_' '.', an empty label, a label over 63 bytes, a name over 253)
 *     fails with BC_ERR_URL_HOST, although browsers accept it;
 *   - FAIL is any host error: BC_ERR_URL_IDN, BC_ERR_URL_HOST (a forbidden
 *     code point after mapping) or BC_ERR_URL_IPV4.
 *
 * A row whose bloomcrawl column is not "=" expects that column instead
 * (a host, or FAIL): the rows where ICU 72 (Unicode 15.0) and the
 * reference's newer Unicode tables differ, each with its reason. Every row
 * runs without a cache and twice with a small one (a miss, then a hit), and
 * an accepted URL must normalize to itself.
 *
 * ICU's allocations go through u_setMemoryFunctions() (set in main(),
 * before any ICU call) to the counting allocator of alloc_fail.h: each
 * failure must be BC_ERR_NOMEM, leave the outputs alone, stay out of the
 * cache and leak nothing (ASan checks at exit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uclean.h>

#include "alloc_fail.h"
#include "bloomcrawl/url.h"

#define BUF        (BC_URL_MAX_LEN_DEFAULT + 1)
#define HOSTS_FILE BC_SOURCE_DIR "/tests/data/idn/hosts.tsv"

/* ---- ICU's allocations, counted and failed by alloc_fail.h ---- */

static bool icu_counted; /* u_setMemoryFunctions() succeeded */

static void *icu_alloc(const void *context, size_t size)
{
    (void)context;
    return fail_now() ? NULL : malloc(size);
}

static void *icu_realloc(const void *context, void *mem, size_t size)
{
    (void)context;
    return fail_now() ? NULL : realloc(mem, size);
}

static void icu_free(const void *context, void *mem)
{
    (void)context;
    free(mem);
}

/* ---- the table ---- */

struct row {
    int line;
    char input[1024];     /* UTF-8, escapes decoded */
    char browsers[320];   /* host or FAIL */
    char bloomcrawl[320]; /* "=", a host or FAIL */
    char note[256];
};

/* Append the UTF-8 of code point cp to s (capacity cap, NUL kept). */
static void put_utf8(char *s, size_t *n, size_t cap, unsigned long cp)
{
    unsigned char b[4];
    size_t k;

    if (cp < 0x80) {
        b[0] = (unsigned char)cp;
        k = 1;
    } else if (cp < 0x800) {
        b[0] = (unsigned char)(0xc0 | cp >> 6);
        b[1] = (unsigned char)(0x80 | (cp & 0x3f));
        k = 2;
    } else if (cp < 0x10000) {
        b[0] = (unsigned char)(0xe0 | cp >> 12);
        b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        b[2] = (unsigned char)(0x80 | (cp & 0x3f));
        k = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | cp >> 18);
        b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
        b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
        b[3] = (unsigned char)(0x80 | (cp & 0x3f));
        k = 4;
    }
    assert_true(*n + k < cap);
    memcpy(s + *n, b, k);
    *n += k;
    s[*n] = '\0';
}

/* The input column: \u{HEX} is that code point (in UTF-8), \\ is '\'. */
static void unescape(const char *in, char *out, size_t cap)
{
    size_t n = 0;

    out[0] = '\0';
    while (*in != '\0') {
        if (in[0] == '\\' && in[1] == 'u' && in[2] == '{') {
            char *end;
            unsigned long cp = strtoul(in + 3, &end, 16);
            assert_true(*end == '}' && end > in + 3 && cp <= 0x10ffff);
            put_utf8(out, &n, cap, cp);
            in = end + 1;
        } else if (in[0] == '\\' && in[1] == '\\') {
            put_utf8(out, &n, cap, '\\');
            in += 2;
        } else {
            assert_true(n + 1 < cap); /* a byte of UTF-8, as it is */
            out[n++] = *in++;
            out[n] = '\0';
        }
    }
}

static void copy_field(char *dst, size_t cap, const char *s, size_t n)
{
    assert_true(n < cap);
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Read hosts.tsv: rows of input, browsers, bloomcrawl, note. */
static struct row *read_rows(size_t *count)
{
    FILE *f = fopen(HOSTS_FILE, "r");
    char line[4096];
    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    int lineno = 0;

    if (f == NULL)
        fail_msg("cannot open %s", HOSTS_FILE);
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        const char *field[4];
        size_t len[4];
        const char *p = line;
        for (int i = 0; i < 4; i++) {
            const char *tab = strchr(p, '\t');
            if (tab == NULL && i < 3)
                fail_msg("%s:%d: expected 4 columns", HOSTS_FILE, lineno);
            field[i] = p;
            len[i] = tab != NULL ? (size_t)(tab - p) : strlen(p);
            p = tab != NULL ? tab + 1 : p + len[i];
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            rows = realloc(rows, cap * sizeof *rows);
            assert_non_null(rows);
        }
        struct row *r = &rows[n++];
        char raw[1024];
        r->line = lineno;
        copy_field(raw, sizeof raw, field[0], len[0]);
        unescape(raw, r->input, sizeof r->input);
        copy_field(r->browsers, sizeof r->browsers, field[1], len[1]);
        copy_field(r->bloomcrawl, sizeof r->bloomcrawl, field[2], len[2]);
        copy_field(r->note, sizeof r->note, field[3], len[3]);
    }
    fclose(f);
    *count = n;
    return rows;
}

/* Is the ASCII host s a DNS host name by the project's rule? */
static bool dns_host_name(const char *s)
{
    size_t n = strlen(s), label = 0;

    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '.') {
            if (label == 0)
                return false;
            label = 0;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                   c == '-' || c == '_') {
            if (++label > 63)
                return false;
        } else {
            return false;
        }
    }
    return label > 0;
}

static bool host_error(enum bc_status st)
{
    return st == BC_ERR_URL_IDN || st == BC_ERR_URL_HOST ||
           st == BC_ERR_URL_IPV4;
}

/* Is the ICU linked at run time version 72, which the table describes? */
static bool icu_72(void)
{
    UVersionInfo v;
    u_getVersion(v);
    return v[0] == 72;
}

/*
 * What bc_url_normalize() must give for an answer of the table (a host or
 * FAIL): *want_st, and with BC_OK the host in want. FAIL is reported as
 * BC_ERR_URL_IDN, standing for any host error.
 */
static void expected(const char *answer, enum bc_status *want_st, char *want,
                     size_t cap)
{
    if (strcmp(answer, "FAIL") == 0) {
        *want_st = BC_ERR_URL_IDN;
        return;
    }
    copy_field(want, cap, answer, strlen(answer));
    size_t n = strlen(want);
    if (n > 0 && want[n - 1] == '.')
        want[n - 1] = '\0'; /* one trailing dot dropped */
    *want_st = dns_host_name(want) ? BC_OK : BC_ERR_URL_HOST;
}

/* Does the result st, out, u match the answer of the table? */
static bool matches(const char *answer, enum bc_status st, const char *out,
                    const struct bc_url *u, char *want, size_t cap,
                    enum bc_status *want_st)
{
    expected(answer, want_st, want, cap);
    if (*want_st == BC_ERR_URL_IDN)
        return host_error(st);
    if (*want_st != BC_OK)
        return st == *want_st;
    return st == BC_OK && strncmp(out, "http://", 7) == 0 && u->host.off == 7 &&
           u->host.len == strlen(want) &&
           memcmp(out + 7, want, u->host.len) == 0 &&
           strcmp(out + 7 + u->host.len, "/") == 0;
}

/* Run one row with the given policy; returns false (and says why) when
 * the answer is not the expected one. */
static bool check_row(const struct row *r, const struct bc_url_policy *policy,
                      const char *how)
{
    char href[1100], out[BUF], again[BUF], want[320];
    enum bc_status want_st;
    struct bc_url u, v;
    bool ok;

    snprintf(href, sizeof href, "http://%s/", r->input);
    enum bc_status st =
        bc_url_normalize(NULL, href, strlen(href), policy, out, BUF, &u);
    if (strcmp(r->bloomcrawl, "=") == 0)
        ok = matches(r->browsers, st, out, &u, want, sizeof want, &want_st);
    else if (icu_72())
        ok = matches(r->bloomcrawl, st, out, &u, want, sizeof want, &want_st);
    else
        ok = matches(r->bloomcrawl, st, out, &u, want, sizeof want, &want_st) ||
             matches(r->browsers, st, out, &u, want, sizeof want, &want_st);
    if (!ok) {
        print_error("hosts.tsv:%d %s (%s): got %s, want %s (%s)\n", r->line,
                    r->input, how, st == BC_OK ? out : bc_strerror(st),
                    want_st == BC_OK            ? want
                    : want_st == BC_ERR_URL_IDN ? "a host error"
                                                : bc_strerror(want_st),
                    r->note);
        return false;
    }
    if (st == BC_OK) {
        /* a fixed point: the canonical URL normalizes to itself */
        assert_int_equal(
            bc_url_normalize(NULL, out, strlen(out), policy, again, BUF, &v),
            BC_OK);
        assert_string_equal(again, out);
    }
    return true;
}

static void test_hosts_table(void **state)
{
    (void)state;
    size_t n, bad = 0, accepted = 0, rejected = 0, differ = 0;
    struct row *rows = read_rows(&n);
    struct bc_url_idn_cache *cache;

    assert_true(n >= 100);
    assert_int_equal(bc_url_idn_cache_create(4, &cache), BC_OK);
    struct bc_url_policy with = {.idn_cache = cache};
    for (size_t i = 0; i < n; i++) {
        const struct row *r = &rows[i];
        bool ok = check_row(r, NULL, "no cache");
        ok = check_row(r, &with, "cache miss") && ok;
        ok = check_row(r, &with, "cache hit") && ok;
        bad += !ok;
        if (strcmp(r->browsers, "FAIL") == 0)
            rejected++;
        else
            accepted++;
        if (strcmp(r->bloomcrawl, "=") != 0)
            differ++;
    }
    print_message("hosts.tsv: %zu rows, %zu accepted and %zu rejected by "
                  "browsers, %zu answered differently (see its README)\n",
                  n, accepted, rejected, differ);
    bc_url_idn_cache_free(cache);
    free(rows);
    assert_int_equal(bad, 0);
}

/* The three hosts of the issue, and the error kinds, spelled out. */
static void test_issue_hosts(void **state)
{
    (void)state;
    static const struct {
        const char *href;
        const char *want;
        enum bc_status st;
    } cases[] = {
        {"https://i\xe2\x9d\xa4.ws/", "https://xn--i-7iq.ws/", BC_OK},
        {"https://%e2%98%83", "https://xn--n3h/", BC_OK},
        {"http://\xf0\x9f\x92\xa9.la/", "http://xn--ls8h.la/", BC_OK},
        /* the same hosts in punycode were always accepted */
        {"https://xn--i-7iq.ws/", "https://xn--i-7iq.ws/", BC_OK},
        /* invalid punycode: IDNA error, even on an ASCII host */
        {"http://xn--a/", NULL, BC_ERR_URL_IDN},
        {"http://XN--ZZ-.com/", NULL, BC_ERR_URL_IDN},
        {"http://a.xn--.com/", NULL, BC_ERR_URL_IDN},
        /* bidi and CONTEXTJ: IDNA errors */
        {"http://a\xd7\x90.com/", NULL, BC_ERR_URL_IDN},
        {"http://a\xe2\x80\x8d"
         "b.com/",
         NULL, BC_ERR_URL_IDN},
        /* a forbidden code point after mapping ('％' is '%'): not a host */
        {"http://a\xef\xbc\x85"
         "b.com/",
         NULL, BC_ERR_URL_HOST},
        /* an xn-- host that is fine stays as it is, lowercased */
        {"http://WWW.XN--BCHER-KVA.DE./x", "http://www.xn--bcher-kva.de/x",
         BC_OK},
        /* "xn--" inside a label is no ACE prefix: the fast path */
        {"http://axn--a.com/", "http://axn--a.com/", BC_OK},
        /* a port after an IDN host */
        {"http://\xe2\x98\x83:8080/", "http://xn--n3h:8080/", BC_OK},
    };
    char out[BUF];
    struct bc_url u;

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        enum bc_status st =
            bc_url_normalize(NULL, cases[i].href, strlen(cases[i].href), NULL,
                             out, sizeof out, &u);
        if (st != cases[i].st)
            fail_msg("%s: got %s, want %s", cases[i].href, bc_strerror(st),
                     bc_strerror(cases[i].st));
        if (st == BC_OK)
            assert_string_equal(out, cases[i].want);
    }
}

/*
 * Every allocation ICU makes for a conversion, failed in turn: without a
 * cache (the handle is opened per call) and with one (the handle is the
 * cache's, opened at its first conversion). The hosts take ICU's different
 * paths: a long one (past its stack buffers), deviation characters and a
 * punycode label (decoded and checked), a right-to-left one (bidi).
 */
static void test_icu_allocation_failure(void **state)
{
    (void)state;
    static const struct {
        const char *href;
        const char *want;
    } cases[] = {
        {"http://\xe2\x98\x83\xe2\x98\x83\xe2\x98\x83\xe2\x98\x83.b\xc3\xbc"
         "cher-und-noch-viel-mehr-b\xc3\xbc"
         "cher-als-gedacht.example/",
         "http://xn--n3haaa.xn--bcher-und-noch-viel-mehr-bcher-als-gedacht-"
         "nmez.example/"},
        {"http://Fa\xc3\x9f.\xce\xb2\xcf\x8c\xce\xbb\xce\xbf\xcf\x82.xn--"
         "bcher-kva.de/",
         "http://xn--fa-hia.xn--nxasmm1c.xn--bcher-kva.de/"},
        {"http://\xd9\x85\xd8\xab\xd8\xa7\xd9\x84.\xd8\xa5\xd8\xae\xd8\xaa"
         "\xd8\xa8\xd8\xa7\xd8\xb1/",
         "http://xn--mgbh0fb.xn--kgbechtv/"},
    };
    char out[BUF];
    struct bc_url u, keep;
    struct bc_url_idn_cache *cache = NULL;

    if (!icu_counted) {
        BC_SKIP(); /* ICU was in use before main() */
    }
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *href = cases[c].href;
        /* ICU loads its data at the first use in the process, and keeps a
         * failure there for good: load it before failing anything. */
        assert_int_equal(bc_url_normalize(NULL, href, strlen(href), NULL, out,
                                          sizeof out, &u),
                         BC_OK);
        assert_string_equal(out, cases[c].want);
        for (int cached = 0; cached < 2; cached++) {
            struct bc_url_policy policy = {0};
            long failures = 0;
            for (long n = 0;; n++) {
                if (cached) {
                    /* a new cache each time: no handle, no entry */
                    bc_url_idn_cache_free(cache);
                    assert_int_equal(bc_url_idn_cache_create(8, &cache), BC_OK);
                    policy.idn_cache = cache;
                }
                memset(&u, 0x5a, sizeof u);
                keep = u;
                fail_after = n;
                enum bc_status st = bc_url_normalize(
                    NULL, href, strlen(href), &policy, out, sizeof out, &u);
                if (st == BC_OK) {
                    assert_string_equal(out, cases[c].want);
                    if (fail_after == -1)
                        continue;    /* ICU got over the failure itself */
                    fail_after = -1; /* fewer than n + 1 allocations */
                    break;
                }
                failures++;
                assert_int_equal(st, BC_ERR_NOMEM);
                assert_memory_equal(&u, &keep, sizeof u);
                if (cached) {
                    /* not cached: the next call converts and succeeds */
                    assert_int_equal(bc_url_normalize(NULL, href, strlen(href),
                                                      &policy, out, sizeof out,
                                                      &u),
                                     BC_OK);
                    assert_string_equal(out, cases[c].want);
                }
            }
            print_message("host %zu: %ld of ICU's allocations failed %s a "
                          "cache, each BC_ERR_NOMEM\n",
                          c, failures, cached ? "with" : "without");
            assert_true(failures >= 2); /* the handle, a UTF-16 copy */
        }
    }
    bc_url_idn_cache_free(cache);
}

int main(void)
{
    UErrorCode err = U_ZERO_ERROR;

    u_setMemoryFunctions(NULL, icu_alloc, icu_realloc, icu_free, &err);
    icu_counted = U_SUCCESS(err);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts_table),
        cmocka_unit_test(test_issue_hosts),
        cmocka_unit_test(test_icu_allocation_failure),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
