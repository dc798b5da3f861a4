/*
 * test_chunked.c - the chunked transfer-coding decoder
 * (fetcher/chunked.c) against a table of bodies: RFC 9112 section 7.1's
 * grammar, what the decoder accepts beyond it (a bare LF, CRs before an
 * LF, blanks after the size) and what it refuses ("5x", a size over
 * 2^64 - 1, data without its line end). Every case is fed whole, cut at
 * every split point into two pieces, and one byte at a time: the result,
 * the data and where the body ended or broke must not depend on how the
 * bytes arrived.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "chunked_int.h"

struct outcome {
    enum bc_chunked_status status;
    char data[256];
    size_t data_len;
    size_t at; /* DONE: bytes of the body; BAD: offset of the bad byte */
};

/* Feed in[0, n) as pieces that end at the offsets cuts[] (ascending,
 * the last one n), as a stream would. */
static void feed(const char *in, size_t n, const size_t *cuts, size_t ncuts,
                 struct outcome *o)
{
    struct bc_chunked c;
    bc_chunked_init(&c);
    memset(o, 0, sizeof(*o));
    o->status = BC_CHUNKED_MORE;
    size_t pos = 0;
    assert_int_equal(cuts[ncuts - 1], n);
    for (size_t k = 0; k < ncuts && o->status == BC_CHUNKED_MORE; k++) {
        size_t end = cuts[k];
        while (pos < end) {
            const char *d;
            size_t dn, used;
            enum bc_chunked_status st =
                bc_chunked_decode(&c, in + pos, end - pos, &used, &d, &dn);
            assert_true(used <= end - pos);
            if (dn) {
                assert_true(d >= in + pos && d + dn <= in + pos + used);
                assert_true(o->data_len + dn <= sizeof(o->data));
                memcpy(o->data + o->data_len, d, dn);
                o->data_len += dn;
            }
            pos += used;
            if (st != BC_CHUNKED_MORE) {
                o->status = st;
                o->at = pos;
                /* It stays put: DONE and BAD consume nothing more. */
                assert_int_equal(
                    bc_chunked_decode(&c, "0\r\n", 3, &used, &d, &dn), st);
                assert_int_equal(used, 0);
                assert_int_equal(dn, 0);
                break;
            }
            if (dn == 0)
                assert_int_equal(pos, end); /* MORE without data: all used */
        }
    }
}

static const struct {
    const char *name;
    const char *in;
    enum bc_chunked_status status;
    const char *data;
    size_t at; /* see struct outcome; 0: strlen(in) for DONE */
} cases[] = {
    {"two chunks", "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n", BC_CHUNKED_DONE, "abcde",
     0},
    {"hex upper and lower", "A\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n",
     BC_CHUNKED_DONE, "0123456789abcdefghij", 0},
    {"leading zeros", "0003\r\nabc\r\n000\r\n\r\n", BC_CHUNKED_DONE, "abc", 0},
    {"extension", "5;ext=1\r\nhello\r\n0\r\n\r\n", BC_CHUNKED_DONE, "hello", 0},
    {"BWS before extension", "5 ;ext\r\nhello\r\n0\r\n\r\n", BC_CHUNKED_DONE,
     "hello", 0},
    {"quoted extension, tab", "5\t; a = \"x;y\"\r\nhello\r\n0;z\r\n\r\n",
     BC_CHUNKED_DONE, "hello", 0},
    {"blank after size", "5  \r\nhello\r\n0\r\n\r\n", BC_CHUNKED_DONE, "hello",
     0},
    {"trailer", "3\r\nabc\r\n0\r\nX-Trailer: yes\r\nY: 2\r\n\r\n",
     BC_CHUNKED_DONE, "abc", 0},
    {"bare LF everywhere", "3\nabc\n0\nX: 1\n\n", BC_CHUNKED_DONE, "abc", 0},
    {"CR CR LF after data", "5\r\nhello\r\r\n0\r\n\r\n", BC_CHUNKED_DONE,
     "hello", 0},
    {"CRs before every LF", "3\r\r\nabc\r\r\n0\r\r\nX: 1\r\r\n\r\r\n",
     BC_CHUNKED_DONE, "abc", 0},
    {"data holds CR LF", "4\r\n\r\n\r\n\r\n0\r\n\r\n", BC_CHUNKED_DONE,
     "\r\n\r\n", 0},
    {"bytes after the end", "1\r\nx\r\n0\r\n\r\nHTTP/1.1 200", BC_CHUNKED_DONE,
     "x", 11},
    {"largest size", "ffffffffffffffff\r\nab", BC_CHUNKED_MORE, "ab", 0},
    {"unfinished chunk", "5\r\nhel", BC_CHUNKED_MORE, "hel", 0},
    {"no last chunk", "3\r\nabc\r\n", BC_CHUNKED_MORE, "abc", 0},
    {"no final line", "3\r\nabc\r\n0\r\nX: 1\r\n", BC_CHUNKED_MORE, "abc", 0},
    {"5x", "5x\r\nhello\r\n0\r\n\r\n", BC_CHUNKED_BAD, "", 1},
    {"no digits", "\r\nabc\r\n0\r\n\r\n", BC_CHUNKED_BAD, "", 0},
    {"not hex", "zz\r\nabc\r\n0\r\n\r\n", BC_CHUNKED_BAD, "", 0},
    {"blank before size", " 3\r\nabc\r\n0\r\n\r\n", BC_CHUNKED_BAD, "", 0},
    {"blank then junk", "3 x\r\nabc\r\n0\r\n\r\n", BC_CHUNKED_BAD, "", 2},
    {"overlong size", "10000000000000000\r\nx", BC_CHUNKED_BAD, "", 16},
    {"data without line end", "3\r\nabcX\r\n0\r\n\r\n", BC_CHUNKED_BAD, "abc",
     6},
    {"CR then junk after data", "3\r\nabc\rX\n0\r\n\r\n", BC_CHUNKED_BAD, "abc",
     7},
    {"CR then junk in size line", "3\rX\nabc\r\n0\r\n\r\n", BC_CHUNKED_BAD, "",
     2},
    {"control in extension", "3;a\001\r\nabc\r\n0\r\n\r\n", BC_CHUNKED_BAD, "",
     3},
    {"control in trailer", "0\r\nX\001\r\n\r\n", BC_CHUNKED_BAD, "", 4},
    {"CR then junk at the end", "0\r\n\rX", BC_CHUNKED_BAD, "", 4},
};

static void check(size_t i, const struct outcome *o, const char *how)
{
    const char *in = cases[i].in;
    size_t at = cases[i].at;
    if (cases[i].status == BC_CHUNKED_DONE && at == 0)
        at = strlen(in);
    if (o->status != cases[i].status || o->data_len != strlen(cases[i].data) ||
        memcmp(o->data, cases[i].data, o->data_len) != 0 ||
        (o->status != BC_CHUNKED_MORE && o->at != at))
        print_error("case \"%s\" (%s): status %d at %zu, data \"%.*s\"\n",
                    cases[i].name, how, (int)o->status, o->at, (int)o->data_len,
                    o->data);
    assert_int_equal(o->status, cases[i].status);
    assert_int_equal(o->data_len, strlen(cases[i].data));
    assert_memory_equal(o->data, cases[i].data, o->data_len);
    if (o->status != BC_CHUNKED_MORE)
        assert_int_equal(o->at, at);
}

static void test_table_whole(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].in);
        struct outcome o;
        feed(cases[i].in, n, &n, 1, &o);
        check(i, &o, "whole");
    }
}

/* Two pieces, cut at every offset (an empty piece included). */
static void test_table_every_split(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].in);
        for (size_t cut = 0; cut <= n; cut++) {
            size_t cuts[2] = {cut, n};
            struct outcome o;
            char how[32];
            snprintf(how, sizeof(how), "cut at %zu", cut);
            feed(cases[i].in, n, cuts, 2, &o);
            check(i, &o, how);
        }
    }
}

static void test_table_byte_at_a_time(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].in);
        size_t cuts[64];
        assert_true(n <= 64);
        for (size_t k = 0; k < n; k++)
            cuts[k] = k + 1;
        struct outcome o;
        feed(cases[i].in, n, cuts, n, &o);
        check(i, &o, "byte at a time");
    }
}

/* A chunk larger than size_t's pieces: the count of bytes left is 64-bit
 * and the data spans end where the piece does. */
static void test_large_chunk(void **state)
{
    (void)state;
    static char buf[4096];
    struct bc_chunked c;
    const char *d;
    size_t dn, used;
    bc_chunked_init(&c);
    assert_int_equal(
        bc_chunked_decode(&c, "7fffffffffffffff\r\n", 18, &used, &d, &dn),
        BC_CHUNKED_MORE);
    assert_int_equal(used, 18);
    memset(buf, 'x', sizeof(buf));
    uint64_t total = 0;
    for (int k = 0; k < 1000; k++) {
        assert_int_equal(
            bc_chunked_decode(&c, buf, sizeof(buf), &used, &d, &dn),
            BC_CHUNKED_MORE);
        assert_int_equal(used, sizeof(buf));
        assert_ptr_equal(d, buf);
        total += dn;
    }
    assert_true(total == 1000u * sizeof(buf));
    assert_true(c.left == 0x7fffffffffffffffull - total);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_whole),
        cmocka_unit_test(test_table_every_split),
        cmocka_unit_test(test_table_byte_at_a_time),
        cmocka_unit_test(test_large_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
