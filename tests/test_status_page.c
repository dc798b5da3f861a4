/*
 * test_status_page.c - the page crawl --listen serves at GET / is
 * examples/status_page.html, byte for byte (cmake/embed_file.cmake made a
 * C array of it at build time), NUL-terminated after its length, and it
 * loads nothing from elsewhere: no script or stylesheet by URL, no CSS
 * import or url(), no font. (tests/e2e_status_page.py renders it in a
 * browser.)
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

#include "status_page.h"

/* The whole of path in a malloc'd buffer; its length in *len. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    assert_int_equal(ferror(f), 0);
    fclose(f);
    *len = n;
    return buf;
}

static void test_page_is_the_file(void **state)
{
    (void)state;
    size_t file_len = 0, len = 0;
    char *file = slurp(BC_SOURCE_DIR "/examples/status_page.html", &file_len);
    const char *page = crawl_status_page(&len);
    assert_non_null(page);
    assert_true(file_len > 1000);
    assert_int_equal(len, file_len);
    assert_memory_equal(page, file, len);
    /* A C string too: the generator's 0 follows the bytes. */
    assert_int_equal(page[len], '\0');
    assert_int_equal(strlen(page), len);
    free(file);
}

static void test_page_self_contained(void **state)
{
    (void)state;
    size_t len = 0;
    const char *page = crawl_status_page(&len);
    assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    /* What would make a browser fetch from elsewhere (or at all: the
     * page's only requests are its fetch() calls of /status and /hosts). */
    static const char *const banned[] = {
        "<script src", "stylesheet", "@import",  "url(",  "@font-face",
        "<img",        "<iframe",    "https://", "//cdn",
    };
    for (size_t i = 0; i < sizeof banned / sizeof banned[0]; i++) {
        if (strstr(page, banned[i]) != NULL)
            fail_msg("the page holds \"%s\"", banned[i]);
    }
    assert_non_null(strstr(page, "fetchJSON(\"/status\")"));
    assert_non_null(strstr(page, "fetchJSON(\"/hosts"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_is_the_file),
        cmocka_unit_test(test_page_self_contained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
