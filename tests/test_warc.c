/*
 * test_warc.c - the WARC writer (crawler/warc.c) with real files: gzip and
 * plain output, one gzip member per record, every record parsed back and
 * its Content-Length and both digests recomputed here (OpenSSL's one-shot
 * SHA1() and a base32 encoder of this file, checked against a known
 * vector), request/response linking with both records open at once,
 * WARC-Truncated, rotation, misuse.
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

#include <openssl/sha.h>
#include <zlib.h>

#include "bloomcrawl/warc.h"

static char base[256];
static char path[400];
static int serial;

static const char *new_path(const char *ext)
{
    snprintf(path, sizeof(path), "%s/w%d%s", base, ++serial, ext);
    return path;
}

/* RFC 4648 base32 of a SHA-1, written bit by bit: an encoder independent
 * of the writer's. */
static void b32(const unsigned char d[20], char out[33])
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    for (int i = 0; i < 32; i++) {
        int v = 0;
        for (int b = 0; b < 5; b++) {
            int bit = i * 5 + b;
            v = v * 2 + ((d[bit / 8] >> (7 - bit % 8)) & 1);
        }
        out[i] = a[v];
    }
    out[32] = '\0';
}

static void sha1_b32(const void *p, size_t n, char out[33])
{
    unsigned char d[20];
    SHA1(p, n, d);
    b32(d, out);
}

static unsigned char *slurp(const char *name, size_t *n)
{
    FILE *f = fopen(name, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    unsigned char *p = malloc((size_t)len + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    p[len] = '\0'; /* parse() looks for header ends with strstr() */
    *n = (size_t)len;
    return p;
}

/* Inflate every gzip member of a file, one after the other; *members and
 * member_starts[] (compressed offsets) tell where each began. */
static unsigned char *gunzip_all(const unsigned char *in, size_t n,
                                 size_t *out_n, int *members,
                                 size_t *member_starts)
{
    size_t cap = 1 << 20, len = 0, pos = 0;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    *members = 0;
    while (pos < n) {
        z_stream z = {0};
        assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
        member_starts[(*members)++] = pos;
        z.next_in = (unsigned char *)(uintptr_t)(in + pos);
        z.avail_in = (uInt)(n - pos);
        int rc;
        do {
            if (cap - len < 65536) {
                cap *= 2;
                out = realloc(out, cap);
                assert_non_null(out);
            }
            z.next_out = out + len;
            z.avail_out = (uInt)(cap - len);
            rc = inflate(&z, Z_NO_FLUSH);
            assert_true(rc == Z_OK || rc == Z_STREAM_END);
            len = (size_t)(z.next_out - out);
        } while (rc != Z_STREAM_END);
        pos = n - z.avail_in;
        inflateEnd(&z);
    }
    out[len] = '\0'; /* room: the loop keeps 64 KiB free */
    *out_n = len;
    return out;
}

struct rec {
    char type[16];
    char id[64];
    char concurrent[64];
    char uri[256];
    char ip[64];
    bool truncated;
    char block_digest[64];
    char payload_digest[64];
    const unsigned char *block;
    size_t block_len;
};

static void field(const char *h, size_t hn, const char *name, char *out,
                  size_t cap)
{
    out[0] = '\0';
    size_t m = strlen(name);
    for (const char *p = h; p < h + hn;) {
        const char *eol = strstr(p, "\r\n");
        if (!eol || eol > h + hn)
            return;
        if ((size_t)(eol - p) > m && strncmp(p, name, m) == 0 && p[m] == ':') {
            size_t v = (size_t)(eol - p) - m - 2;
            assert_true(v < cap);
            memcpy(out, p + m + 2, v);
            out[v] = '\0';
            return;
        }
        p = eol + 2;
    }
}

/* Parse the records of an uncompressed WARC; checks framing and digests. */
static int parse(const unsigned char *p, size_t n, struct rec *recs, int max)
{
    int count = 0;
    size_t pos = 0;
    while (pos < n) {
        assert_true(count < max);
        assert_memory_equal(p + pos, "WARC/1.1\r\n", 10);
        const char *end = strstr((const char *)p + pos, "\r\n\r\n");
        assert_non_null(end);
        size_t hn = (size_t)(end - (const char *)p - pos) + 2;
        const char *h = (const char *)p + pos;
        struct rec *r = &recs[count++];
        char len[32];
        field(h, hn, "Content-Length", len, sizeof(len));
        r->block_len = strtoull(len, NULL, 10);
        r->block = p + pos + hn + 2;
        field(h, hn, "WARC-Type", r->type, sizeof(r->type));
        field(h, hn, "WARC-Record-ID", r->id, sizeof(r->id));
        field(h, hn, "WARC-Concurrent-To", r->concurrent,
              sizeof(r->concurrent));
        field(h, hn, "WARC-Target-URI", r->uri, sizeof(r->uri));
        field(h, hn, "WARC-IP-Address", r->ip, sizeof(r->ip));
        char t[32];
        field(h, hn, "WARC-Truncated", t, sizeof(t));
        r->truncated = strcmp(t, "length") == 0;
        field(h, hn, "WARC-Block-Digest", r->block_digest,
              sizeof(r->block_digest));
        field(h, hn, "WARC-Payload-Digest", r->payload_digest,
              sizeof(r->payload_digest));
        assert_int_equal(strlen(r->id), 47);
        assert_memory_equal(r->id, "<urn:uuid:", 10);
        char want[40];
        strcpy(want, "sha1:");
        sha1_b32(r->block, r->block_len, want + 5);
        assert_string_equal(r->block_digest, want);
        if (strcmp(r->type, "warcinfo") != 0) {
            const unsigned char *body = r->block;
            size_t blen = r->block_len;
            for (size_t i = 0; i + 4 <= r->block_len; i++)
                if (memcmp(r->block + i, "\r\n\r\n", 4) == 0) {
                    body = r->block + i + 4;
                    blen = r->block_len - i - 4;
                    break;
                }
            sha1_b32(body, blen, want + 5);
            assert_string_equal(r->payload_digest, want);
        }
        pos += hn + 2 + r->block_len;
        assert_true(pos + 4 <= n);
        assert_memory_equal(p + pos, "\r\n\r\n", 4);
        pos += 4;
    }
    return count;
}

static const char info[] = "software: bloomcrawl test\r\nformat: WARC File "
                           "Format 1.1\r\n";
static const char req[] =
    "GET /a HTTP/1.1\r\nHost: x\r\nUser-Agent: t/1\r\n\r\n";
static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";

/* A request and its response, both open at once (as in a transfer: the
 * response is begun before the request record ends); body in pieces. */
static void write_pair(struct bc_warc *w, const char *uri, const char *body,
                       size_t body_len, bool truncated, uint64_t *offset)
{
    char req_id[BC_WARC_ID_SIZE], resp_id[BC_WARC_ID_SIZE];
    struct bc_warc_record *q = NULL, *r = NULL;
    assert_int_equal(bc_warc_new_id(req_id), BC_OK);
    assert_int_equal(bc_warc_new_id(resp_id), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, uri, "127.0.0.1",
                                          1700000000, resp_id, req_id, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_REQUEST, uri, "127.0.0.1",
                                          1700000000, req_id, resp_id, &q),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(q, req, strlen(req)), BC_OK);
    assert_int_equal(bc_warc_record_head(r, head, 20), BC_OK);
    assert_int_equal(bc_warc_record_end(q, false, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_record_head(r, head + 20, strlen(head) - 20),
                     BC_OK);
    for (size_t i = 0; i < body_len; i += 1000) {
        size_t k = body_len - i < 1000 ? body_len - i : 1000;
        assert_int_equal(bc_warc_record_body(r, body + i, k), BC_OK);
    }
    const char *file = NULL;
    assert_int_equal(bc_warc_record_end(r, truncated, &file, offset), BC_OK);
    assert_non_null(file);
}

static void test_base32_vector(void **state)
{
    (void)state;
    char out[33];
    sha1_b32("abc", 3, out);
    assert_string_equal(out, "VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    sha1_b32("", 0, out);
    assert_string_equal(out, "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
}

static void check_file(const char *name, bool gz, size_t body_len)
{
    size_t n, un;
    unsigned char *raw = slurp(name, &n);
    unsigned char *plain = raw;
    int members = 0;
    size_t starts[16];
    if (gz) {
        plain = gunzip_all(raw, n, &un, &members, starts);
        assert_int_equal(members, 5); /* one per record */
    } else {
        un = n;
    }
    struct rec recs[8];
    int count = parse(plain, un, recs, 8);
    assert_int_equal(count, 5);
    assert_string_equal(recs[0].type, "warcinfo");
    assert_int_equal(recs[0].block_len, strlen(info));
    assert_memory_equal(recs[0].block, info, strlen(info));
    assert_string_equal(recs[1].type, "request");
    assert_string_equal(recs[2].type, "response");
    assert_string_equal(recs[1].concurrent, recs[2].id);
    assert_string_equal(recs[2].concurrent, recs[1].id);
    assert_string_equal(recs[2].uri, "http://x/a");
    assert_string_equal(recs[2].ip, "127.0.0.1");
    assert_false(recs[2].truncated);
    assert_int_equal(recs[2].block_len, strlen(head) + body_len);
    assert_memory_equal(recs[1].block, req, strlen(req));
    assert_true(recs[4].truncated);
    assert_string_equal(recs[4].uri, "http://x/b");
    if (plain != raw)
        free(plain);
    free(raw);
}

static char *make_body(size_t n)
{
    char *b = malloc(n);
    assert_non_null(b);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (char)(x >> 24);
    }
    return b;
}

static void run_format(const char *ext, bool gz)
{
    size_t body_len = 300 * 1000 + 17; /* several spool copy pieces */
    char *body = make_body(body_len);
    struct bc_warc *w = NULL;
    const char *name = new_path(ext);
    char saved[400];
    strcpy(saved, name);
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    uint64_t off1 = 0, off2 = 0;
    write_pair(w, "http://x/a", body, body_len, false, &off1);
    write_pair(w, "http://x/b", body, 100, true, &off2);
    assert_int_equal(bc_warc_free(w), BC_OK);
    check_file(saved, gz, body_len);

    /* The returned offset is where the response record starts. */
    size_t n;
    unsigned char *raw = slurp(saved, &n);
    assert_true(off1 < off2 && off2 < n);
    if (gz) {
        z_stream z = {0};
        unsigned char out[64];
        assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
        z.next_in = raw + off2;
        z.avail_in = (uInt)(n - off2);
        z.next_out = out;
        z.avail_out = sizeof(out);
        int rc = inflate(&z, Z_NO_FLUSH);
        assert_true(rc == Z_OK || rc == Z_STREAM_END);
        inflateEnd(&z);
        assert_memory_equal(out, "WARC/1.1\r\nWARC-Type: response\r\n", 31);
    } else {
        assert_memory_equal(raw + off2, "WARC/1.1\r\nWARC-Type: response\r\n",
                            31);
    }
    free(raw);
    free(body);
}

static void test_gzip(void **state)
{
    (void)state;
    run_format(".warc.gz", true);
}

static void test_plain(void **state)
{
    (void)state;
    run_format(".warc", false);
}

/* max_size 1: every file holds its warcinfo and one record. */
static void test_rotation(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    snprintf(path, sizeof(path), "%s/rot.warc.gz", base);
    assert_int_equal(bc_warc_create(path, 1, info, &w), BC_OK);
    write_pair(w, "http://x/a", "abcdefghi", 9, false, NULL);
    assert_int_equal(bc_warc_free(w), BC_OK);
    for (int i = 0; i < 2; i++) {
        char name[450];
        snprintf(name, sizeof(name), "%s/rot-%05d.warc.gz", base, i);
        size_t n, un;
        int members;
        size_t starts[8];
        unsigned char *raw = slurp(name, &n);
        unsigned char *plain = gunzip_all(raw, n, &un, &members, starts);
        assert_int_equal(members, 2);
        struct rec recs[4];
        assert_int_equal(parse(plain, un, recs, 4), 2);
        assert_string_equal(recs[0].type, "warcinfo");
        assert_string_equal(recs[1].type, i == 0 ? "request" : "response");
        free(plain);
        free(raw);
    }
    char name[450];
    snprintf(name, sizeof(name), "%s/rot-00002.warc.gz", base);
    assert_int_equal(access(name, F_OK), -1);
}

static void test_misuse(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL, *r2 = NULL;
    assert_int_equal(bc_warc_create(NULL, 0, info, &w), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_create("a\r\nWARC-X: y.warc", 0, info, &w),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_create("/nonexistent-dir/x.warc", 0, info, &w),
                     BC_ERR_IO);
    assert_null(w);
    assert_int_equal(bc_warc_create(new_path(".warc"), 0, info, &w), BC_OK);
    assert_int_equal(bc_warc_record_body(NULL, "x", 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_end(NULL, false, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/\r\n",
                                          NULL, 0, NULL, NULL, &r),
                     BC_ERR_INVALID_ARG);
    assert_null(r);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/",
                                          NULL, 0, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/2",
                                          NULL, 0, NULL, NULL, &r2),
                     BC_OK);
    assert_int_equal(bc_warc_record_body(r, "x", 1), BC_OK);
    assert_int_equal(bc_warc_record_head(r, "x", 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_body(r, NULL, 1), BC_ERR_INVALID_ARG);
    /* Failed fetches: nothing written. */
    bc_warc_record_abort(r);
    bc_warc_record_abort(r2);
    bc_warc_record_abort(NULL);
    assert_int_equal(bc_warc_free(w), BC_OK);
    size_t n;
    unsigned char *raw = slurp(path, &n);
    struct rec recs[2];
    assert_int_equal(parse(raw, n, recs, 2), 1);
    free(raw);
    assert_int_equal(bc_warc_free(NULL), BC_OK);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof(base), "%s/test_warc.XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(base))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base32_vector), cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_plain),         cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_misuse),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
