/*
 * test_url_conformance.c - frontier/url against test data from outside the
 * project (tests/data/conformance/, see its README.md). Each test fails when
 * its file is absent.
 *
 *   rfc3986/resolution.tsv              the 42 examples of RFC 3986 5.4:
 *                                       all must give the fetch_url column.
 *   crawler-commons/url-resolve.csv     all rows (the expected URL mapped
 *                                       through the policy: see below).
 *   crawler-commons/weirdToNormalizedUrls.csv
 *                                       at least 90 % of the rows whose
 *                                       expected output is an http(s) URL;
 *                                       every other row is listed below
 *                                       with the reason we differ.
 *   crawler-commons/invalidUrls.csv     all rejected.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/url.h"

#define BUF (BC_URL_MAX_LEN_DEFAULT + 1)

/* Read a whole file of the conformance data; a file that cannot be opened
 * fails the test (the data is part of the repository). */
static char *slurp(const char *rel, size_t *len)
{
    char path[1024];
    FILE *f;
    char *data = NULL;
    size_t cap = 0, n = 0;

    snprintf(path, sizeof path, "%s/%s", BC_CONFORMANCE_DIR, rel);
    f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("%s: %s", path, strerror(errno));
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            data = realloc(data, cap);
            assert_non_null(data);
        }
        size_t got = fread(data + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    data[n] = '\0';
    *len = n;
    return data;
}

/* Next line of text (without '\n' or '\r'); NULL at the end. */
static char *next_line(char **cursor, char *end, size_t *len)
{
    char *s = *cursor, *e;

    if (s >= end)
        return NULL;
    e = memchr(s, '\n', (size_t)(end - s));
    if (e == NULL)
        e = end;
    *cursor = e + 1;
    *len = (size_t)(e - s);
    if (*len > 0 && s[*len - 1] == '\r')
        (*len)--;
    return s;
}

/*
 * Split a CSV line as JUnit's @CsvFileSource reads it (the format of the
 * crawler-commons files): fields separated by ',', optionally quoted with
 * '"' ("" is a quote inside), bytes <= ' ' around unquoted fields ignored.
 * Fields are written NUL-terminated into out[i] (each of size BUF).
 * Returns the number of fields.
 */
static int split_csv(const char *s, size_t n, char out[][BUF], int max)
{
    size_t i = 0;
    int count = 0;

    while (count < max) {
        size_t o = 0;
        while (i < n && (unsigned char)s[i] <= ' ')
            i++;
        if (i < n && s[i] == '"') {
            i++;
            while (i < n) {
                if (s[i] == '"') {
                    if (i + 1 < n && s[i + 1] == '"') {
                        out[count][o++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                out[count][o++] = s[i++];
            }
            while (i < n && s[i] != ',')
                i++;
        } else {
            while (i < n && s[i] != ',')
                out[count][o++] = s[i++];
            while (o > 0 && (unsigned char)out[count][o - 1] <= ' ')
                o--;
        }
        out[count][o] = '\0';
        count++;
        if (i >= n)
            break;
        i++; /* the ',' */
    }
    return count;
}

/* Normalize href against base text (NULL or "" for none) into out. */
static enum bc_status resolve(const char *base, const char *href, char *out)
{
    char base_buf[BUF];
    struct bc_url b, u;
    const struct bc_url *bp = NULL;

    if (base != NULL && base[0] != '\0') {
        enum bc_status st = bc_url_normalize(NULL, base, strlen(base), NULL,
                                             base_buf, sizeof base_buf, &b);
        if (st != BC_OK)
            return st;
        bp = &b;
    }
    return bc_url_normalize(bp, href, strlen(href), NULL, out, BUF, &u);
}

/* ---- RFC 3986 section 5.4 ---- */

/* "ERROR <reason>" in resolution.tsv, and the status it stands for. */
static enum bc_status reason_status(const char *reason)
{
    static const struct {
        const char *reason;
        enum bc_status status;
    } map[] = {
        {"unsupported-scheme", BC_ERR_URL_SCHEME},
        {"empty", BC_ERR_URL_EMPTY},
        {"bad-host", BC_ERR_URL_HOST},
        {"bad-port", BC_ERR_URL_PORT},
        {"bad-idn", BC_ERR_URL_IDN},
        {"too-long", BC_ERR_URL_TOO_LONG},
    };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(map[i].reason, reason) == 0)
            return map[i].status;
    fail_msg("unknown reason in resolution.tsv: %s", reason);
    return BC_OK;
}

static void test_rfc3986_resolution(void **state)
{
    (void)state;
    size_t len, n;
    char *data = slurp("rfc3986/resolution.tsv", &len);
    char *cur, *line, out[BUF];
    const char *base = "http://a/b/c/d;p?q";
    int rows = 0, pass = 0;

    cur = data;
    while ((line = next_line(&cur, data + len, &n)) != NULL) {
        char *f[4];
        int nf = 0;
        if (n == 0 || line[0] == '#')
            continue;
        line[n] = '\0';
        f[nf++] = line;
        for (char *p = line; *p && nf < 4; p++) {
            if (*p == '\t') {
                *p = '\0';
                f[nf++] = p + 1;
            }
        }
        assert_int_equal(nf, 4);
        if (strcmp(f[0], "group") == 0)
            continue;
        rows++;
        enum bc_status st = resolve(base, f[1], out);
        if (strncmp(f[3], "ERROR ", 6) == 0) {
            if (st == reason_status(f[3] + 6))
                pass++;
            else
                print_error("RFC 3986 %s: got %s, want %s\n", f[1],
                            st ? bc_strerror(st) : out, f[3]);
        } else if (st == BC_OK && strcmp(out, f[3]) == 0) {
            pass++;
        } else {
            print_error("RFC 3986 %s: got %s, want %s\n", f[1],
                        st ? bc_strerror(st) : out, f[3]);
        }
    }
    print_message("rfc3986/resolution.tsv: %d/%d rows pass\n", pass, rows);
    assert_int_equal(rows, 42);
    assert_int_equal(pass, rows);
    free(data);
}

/* ---- crawler-commons url-resolve.csv ---- */

/*
 * The expected URLs there are resolution results before normalization; the
 * fetch URL is that URL under the default policy: without the fragment,
 * with uppercase hex in escapes. A file: base cannot be a base (only http
 * and https are), so those rows must fail with BC_ERR_URL_SCHEME.
 */
static void expected_fetch_url(const char *in, char *out)
{
    size_t o = 0;
    for (size_t i = 0; in[i] != '\0' && in[i] != '#'; i++) {
        out[o++] = in[i];
        if (in[i] == '%' && isxdigit((unsigned char)in[i + 1]) &&
            isxdigit((unsigned char)in[i + 2])) {
            out[o++] = (char)toupper((unsigned char)in[i + 1]);
            out[o++] = (char)toupper((unsigned char)in[i + 2]);
            i += 2;
        }
    }
    out[o] = '\0';
}

static void test_cc_url_resolve(void **state)
{
    (void)state;
    size_t len, n;
    char *data = slurp("crawler-commons/url-resolve.csv", &len);
    char *cur, *line, out[BUF], want[BUF];
    static char f[3][BUF];
    int rows = 0, pass = 0;

    cur = data;
    while ((line = next_line(&cur, data + len, &n)) != NULL) {
        if (n == 0 || line[0] == '#')
            continue;
        assert_int_equal(split_csv(line, n, f, 3), 3);
        rows++;
        enum bc_status st = resolve(f[1], f[0], out);
        bool ok;
        if (strncmp(f[2], "file:", 5) == 0) {
            ok = st == BC_ERR_URL_SCHEME;
            snprintf(want, sizeof want, "ERROR %s",
                     bc_strerror(BC_ERR_URL_SCHEME));
        } else {
            expected_fetch_url(f[2], want);
            ok = st == BC_OK && strcmp(out, want) == 0;
        }
        if (ok)
            pass++;
        else
            print_error("url-resolve %s against %s: got %s, want %s\n", f[0],
                        f[1], st ? bc_strerror(st) : out, want);
    }
    print_message("crawler-commons/url-resolve.csv: %d/%d rows pass\n", pass,
                  rows);
    assert_true(rows >= 20);
    assert_int_equal(pass, rows);
    free(data);
}

/* ---- crawler-commons weirdToNormalizedUrls.csv ---- */

/*
 * crawler-commons always sorts the query and collapses "//" in the path;
 * here those are opt-in rules of the seen-key. A row passes when the fetch
 * URL (default policy) is the expected URL, or when the seen-key with
 * BC_URL_SORT_QUERY | BC_URL_COLLAPSE_SLASHES is.
 *
 * The rows where the project's policy differs, each with the reason; the
 * test checks that every failing row is here and that every row here still
 * fails (so the list cannot go stale).
 */
static const struct {
    const char *input;
    const char *reason;
} weird_differences[] = {
    {"foo.com/index.html",
     "no scheme and no base: a relative reference (RFC 3986 4.2), "
     "BC_ERR_URL_NO_BASE; guessing http:// would turn every relative link "
     "into a host name"},
    {"http://foo.com/index?&=1&a=1",
     "\"=1\" is a pair with an empty name (the form decoder yields (\"\", "
     "\"1\")); the sort keeps it"},
    {"http://foo.com/index?=1&b=1&a=1",
     "\"=1\" is a pair with an empty name; the sort keeps it"},
};

/* Rows whose expected output is no http(s) URL: other schemes, and
 * crawler-commons' "http:/" for an http URL without a host. We reject all
 * of them; the test checks that (not counted in the 90 %). */
static const struct {
    const char *input;
    enum bc_status status;
} weird_not_http[] = {
    {"file:///foo/bar.txt", BC_ERR_URL_SCHEME},
    {"ftp:/", BC_ERR_URL_SCHEME},
    {"http:////", BC_ERR_URL_HOST},
    {"http:///////", BC_ERR_URL_HOST},
    {"ftp://foo.com/index.html", BC_ERR_URL_SCHEME},
    {"file:/path/index.html", BC_ERR_URL_SCHEME},
    {"file:/var/www/html/////./bar/index.html", BC_ERR_URL_SCHEME},
    {"file:/var/www/html/foo/../bar/index.html", BC_ERR_URL_SCHEME},
};

static const char *weird_difference(const char *input)
{
    for (size_t i = 0; i < sizeof weird_differences / sizeof *weird_differences;
         i++)
        if (strcmp(weird_differences[i].input, input) == 0)
            return weird_differences[i].reason;
    return NULL;
}

static void test_cc_weird_urls(void **state)
{
    (void)state;
    size_t len, n;
    char *data = slurp("crawler-commons/weirdToNormalizedUrls.csv", &len);
    char *cur, *line, out[BUF], key[BUF];
    static char f[2][BUF];
    const struct bc_url_policy cc = {.rules = BC_URL_SORT_QUERY |
                                              BC_URL_COLLAPSE_SLASHES};
    int http_rows = 0, pass = 0, listed = 0, other = 0, unexplained = 0;

    cur = data;
    while ((line = next_line(&cur, data + len, &n)) != NULL) {
        if (n == 0 || line[0] == '#')
            continue;
        assert_int_equal(split_csv(line, n, f, 2), 2);
        struct bc_url u;
        enum bc_status st = bc_url_normalize(NULL, f[0], strlen(f[0]), NULL,
                                             out, sizeof out, &u);
        if (strncmp(f[1], "http://", 7) != 0 &&
            strncmp(f[1], "https://", 8) != 0) {
            bool found = false;
            for (size_t i = 0;
                 i < sizeof weird_not_http / sizeof *weird_not_http; i++) {
                if (strcmp(weird_not_http[i].input, f[0]) == 0) {
                    found = true;
                    if (st != weird_not_http[i].status)
                        fail_msg("%s: got %s, want %s", f[0],
                                 st ? bc_strerror(st) : out,
                                 bc_strerror(weird_not_http[i].status));
                }
            }
            if (!found)
                fail_msg("row without an http(s) result not listed: %s", f[0]);
            other++;
            continue;
        }
        http_rows++;
        bool ok = false;
        if (st == BC_OK) {
            size_t kl;
            ok = strcmp(out, f[1]) == 0;
            assert_int_equal(bc_url_seen_key(&u, &cc, key, sizeof key, &kl),
                             BC_OK);
            ok = ok || strcmp(key, f[1]) == 0;
        }
        const char *why = weird_difference(f[0]);
        if (ok) {
            pass++;
            if (why != NULL)
                fail_msg("listed as a difference but passes: %s", f[0]);
        } else if (why != NULL) {
            listed++;
        } else {
            unexplained++;
            print_error("weird URL %s: got %s, want %s\n", f[0],
                        st ? bc_strerror(st) : out, f[1]);
        }
    }
    print_message("crawler-commons/weirdToNormalizedUrls.csv: %d/%d http(s) "
                  "rows pass (%.1f %%), %d listed differences, %d rows with "
                  "other schemes rejected\n",
                  pass, http_rows, 100.0 * pass / http_rows, listed, other);
    assert_int_equal(unexplained, 0);
    assert_int_equal(
        listed, (int)(sizeof weird_differences / sizeof *weird_differences));
    assert_true(pass * 10 >= http_rows * 9);
    free(data);
}

/* ---- crawler-commons invalidUrls.csv ---- */

static void test_cc_invalid_urls(void **state)
{
    (void)state;
    size_t len, n;
    char *data = slurp("crawler-commons/invalidUrls.csv", &len);
    char *cur, *line, out[BUF];
    int rows = 0, rejected = 0;

    cur = data;
    while ((line = next_line(&cur, data + len, &n)) != NULL) {
        if (n == 0 || line[0] == '#')
            continue;
        line[n] = '\0';
        rows++;
        enum bc_status st = resolve(NULL, line, out);
        if (st != BC_OK)
            rejected++;
        else
            print_error("invalid URL accepted: %s -> %s\n", line, out);
    }
    print_message("crawler-commons/invalidUrls.csv: %d/%d rows rejected\n",
                  rejected, rows);
    assert_true(rows >= 2);
    assert_int_equal(rejected, rows);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3986_resolution),
        cmocka_unit_test(test_cc_url_resolve),
        cmocka_unit_test(test_cc_weird_urls),
        cmocka_unit_test(test_cc_invalid_urls),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
