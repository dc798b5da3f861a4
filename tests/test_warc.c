/*
 * test_warc.c - the WARC writer (crawler/warc.c) with real files: gzip and
 * plain output, one gzip member per record, every record parsed back and
 * its Content-Length and both digests recomputed here (OpenSSL's one-shot
 * SHA1() and a base32 encoder of this file, checked against a known
 * vector), request/response linking with both records open at once,
 * WARC-Truncated, rotation, revisit records, misuse.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bloomcrawl/warc.h"
#include "warc_reader.h"

static char base[256];
static char path[400];
static int serial;

static const char *new_path(const char *ext)
{
    snprintf(path, sizeof(path), "%s/w%d%s", base, ++serial, ext);
    return path;
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

static void run_format(const char *ext, bool gz, size_t body_len)
{
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

/* A body of 300 KB: its record is held in memory and written whole
 * (warc.c, MEMORY FIRST). */
static void test_gzip(void **state)
{
    (void)state;
    run_format(".warc.gz", true, 300 * 1000 + 17);
}

static void test_plain(void **state)
{
    (void)state;
    run_format(".warc", false, 300 * 1000 + 17);
}

/* A body over the 1 MiB bound: its record goes to a spool file at the
 * crossing and is streamed back through zlib in 64 KiB pieces; the same
 * checks hold. */
static void test_gzip_spooled(void **state)
{
    (void)state;
    run_format(".warc.gz", true, (1u << 20) + 300 * 1000 + 17);
}

static void test_plain_spooled(void **state)
{
    (void)state;
    run_format(".warc", false, (1u << 20) + 300 * 1000 + 17);
}

/* max_size 1: every file holds its warcinfo and one record. */
/* Rotation at max_size 1: every record fills its file, yet a response
 * ended right after its request (WARC-Concurrent-To naming it) stays in
 * the request's file: each file is a warcinfo and one whole pair, the
 * next pair opens the next file. (Before the fix the request ended one
 * file and its response began the next.) */
static void test_rotation(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    snprintf(path, sizeof(path), "%s/rot.warc.gz", base);
    assert_int_equal(bc_warc_create(path, 1, info, &w), BC_OK);
    write_pair(w, "http://x/a", "abcdefghi", 9, false, NULL);
    write_pair(w, "http://x/b", "abcdefghi", 9, false, NULL);
    struct bc_warc_stats ws;
    bc_warc_stats(w, &ws);
    assert_int_equal(ws.files, 2);
    assert_int_equal(ws.records, 6);
    assert_int_equal(bc_warc_free(w), BC_OK);
    for (int i = 0; i < 2; i++) {
        char name[450];
        snprintf(name, sizeof(name), "%s/rot-%05d.warc.gz", base, i);
        size_t n, un;
        int members;
        size_t starts[8];
        unsigned char *raw = slurp(name, &n);
        unsigned char *plain = gunzip_all(raw, n, &un, &members, starts);
        assert_int_equal(members, 3);
        struct rec recs[4];
        assert_int_equal(parse(plain, un, recs, 4), 3);
        assert_string_equal(recs[0].type, "warcinfo");
        assert_string_equal(recs[1].type, "request");
        assert_string_equal(recs[2].type, "response");
        assert_string_equal(recs[1].concurrent, recs[2].id);
        assert_string_equal(recs[2].concurrent, recs[1].id);
        assert_string_equal(recs[2].uri, i == 0 ? "http://x/a" : "http://x/b");
        free(plain);
        free(raw);
    }
    char name[450];
    snprintf(name, sizeof(name), "%s/rot-00002.warc.gz", base);
    assert_int_equal(access(name, F_OK), -1);
}

/* Only the record linked to the one just before it stays: a response
 * whose request was ended earlier (another record between them) is
 * placed by the size rule like any record. */
static void test_rotation_unlinked(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    char name[450];
    snprintf(path, sizeof(path), "%s/rotu.warc", base);
    assert_int_equal(bc_warc_create(path, 1, info, &w), BC_OK);
    char req_id[BC_WARC_ID_SIZE];
    assert_int_equal(bc_warc_new_id(req_id), BC_OK);
    struct bc_warc_record *q = NULL, *r = NULL, *o = NULL;
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_REQUEST, "http://x/a",
                                          NULL, 1700000000, req_id, NULL, &q),
                     BC_OK);
    assert_int_equal(bc_warc_record_end(q, false, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/o",
                                          NULL, 1700000000, NULL, NULL, &o),
                     BC_OK);
    assert_int_equal(bc_warc_record_end(o, false, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/a",
                                          NULL, 1700000000, NULL, req_id, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_end(r, false, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_free(w), BC_OK);
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "%s/rotu-%05d.warc", base, i);
        size_t n;
        unsigned char *raw = slurp(name, &n);
        struct rec recs[4];
        assert_int_equal(parse(raw, n, recs, 4), 2);
        free(raw);
    }
}

/* The records of a gzip WARC file: *count of them into recs (max 8). */
static void read_gz(const char *name, struct rec *recs, int *count,
                    unsigned char **raw, unsigned char **plain)
{
    size_t n, un;
    int members;
    size_t starts[16];
    *raw = slurp(name, &n);
    *plain = gunzip_all(*raw, n, &un, &members, starts);
    *count = parse(*plain, un, recs, 8);
    assert_int_equal(members, *count);
}

static uint64_t file_size(const char *name)
{
    FILE *f = fopen(name, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return (uint64_t)n;
}

/* A position from bc_warc_tell(), then records and a torn record after
 * it (a kill before the next commit): bc_warc_open_at() cuts them and
 * appends, without a second warcinfo; the counters count this writer's
 * work only. */
static void test_resume_one_file(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    char name[450];
    snprintf(name, sizeof(name), "%s/res.warc.gz", base);
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    write_pair(w, "http://x/a", "aaaa", 4, false, NULL);
    struct bc_warc_position at;
    bc_warc_tell(w, &at);
    assert_int_equal(at.seq, 0);
    assert_int_equal(at.records, 2);
    assert_int_equal(at.offset, file_size(name));
    struct bc_warc_stats ws;
    bc_warc_stats(w, &ws);
    assert_int_equal(ws.files, 1);
    assert_int_equal(ws.records, 3);
    assert_int_equal(ws.bytes, at.offset);
    assert_string_equal(bc_warc_file(w), name);
    write_pair(w, "http://x/b", "bbbb", 4, false, NULL);
    assert_int_equal(bc_warc_free(w), BC_OK);
    FILE *f = fopen(name, "ab");
    assert_non_null(f);
    fputs("\x1f\x8b torn", f); /* half a gzip member */
    fclose(f);

    /* Refused: a position past the end (left as it is), a sequence
     * number without rotation, a missing file. */
    struct bc_warc_position far = at;
    far.offset = file_size(name) + 1;
    uint64_t before = file_size(name);
    assert_int_equal(bc_warc_open_at(name, 0, info, &far, &w),
                     BC_ERR_TRUNCATED);
    assert_int_equal(file_size(name), before);
    far = at;
    far.seq = 1;
    assert_int_equal(bc_warc_open_at(name, 0, info, &far, &w),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_open_at(name, 0, info, NULL, &w),
                     BC_ERR_INVALID_ARG);
    char missing[460];
    snprintf(missing, sizeof(missing), "%s/none.warc.gz", base);
    errno = 0;
    assert_int_equal(bc_warc_open_at(missing, 0, info, &at, &w), BC_ERR_IO);
    assert_int_equal(errno, ENOENT);

    assert_int_equal(bc_warc_open_at(name, 0, info, &at, &w), BC_OK);
    assert_int_equal(file_size(name), at.offset); /* cut back */
    struct bc_warc_position now;
    bc_warc_tell(w, &now);
    assert_int_equal(now.offset, at.offset);
    assert_int_equal(now.records, at.records);
    write_pair(w, "http://x/c", "cccc", 4, false, NULL);
    bc_warc_stats(w, &ws);
    assert_int_equal(ws.files, 0); /* the file was reopened, not created */
    assert_int_equal(ws.records, 2);
    assert_int_equal(ws.bytes, file_size(name) - at.offset);
    assert_int_equal(bc_warc_free(w), BC_OK);

    struct rec recs[8];
    int count;
    unsigned char *raw, *plain;
    read_gz(name, recs, &count, &raw, &plain);
    assert_int_equal(count, 5);
    assert_string_equal(recs[0].type, "warcinfo");
    assert_string_equal(recs[2].uri, "http://x/a");
    assert_string_equal(recs[3].type, "request");
    assert_string_equal(recs[4].uri, "http://x/c");
    free(plain);
    free(raw);

    /* Offset 0 (nothing committed): the file begins again. */
    memset(&at, 0, sizeof(at));
    assert_int_equal(bc_warc_open_at(name, 0, info, &at, &w), BC_OK);
    assert_int_equal(bc_warc_free(w), BC_OK);
    read_gz(name, recs, &count, &raw, &plain);
    assert_int_equal(count, 1);
    assert_string_equal(recs[0].type, "warcinfo");
    free(plain);
    free(raw);
}

/* With rotation: the files after the position are removed, and rotation
 * goes on from its sequence number (a warcinfo opens each new file). */
static void test_resume_rotation(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    char name[450], file[460];
    snprintf(name, sizeof(name), "%s/rr.warc.gz", base);
    assert_int_equal(bc_warc_create(name, 1, info, &w), BC_OK);
    write_pair(w, "http://x/a", "aaaa", 4, false, NULL); /* file 0 */
    write_pair(w, "http://x/b", "bbbb", 4, false, NULL); /* file 1 */
    struct bc_warc_position at;
    bc_warc_tell(w, &at);
    assert_int_equal(at.seq, 1);
    assert_int_equal(at.records, 2);
    write_pair(w, "http://x/c", "cccc", 4, false, NULL); /* file 2 */
    assert_int_equal(bc_warc_free(w), BC_OK);
    snprintf(file, sizeof(file), "%s/rr-00002.warc.gz", base);
    assert_int_equal(access(file, F_OK), 0);

    assert_int_equal(bc_warc_open_at(name, 1, info, &at, &w), BC_OK);
    assert_int_equal(access(file, F_OK), -1);            /* removed */
    write_pair(w, "http://x/d", "dddd", 4, false, NULL); /* file 2 */
    struct bc_warc_stats ws;
    bc_warc_stats(w, &ws);
    assert_int_equal(ws.files, 1);
    assert_int_equal(bc_warc_free(w), BC_OK);
    static const char *const want[3] = {"http://x/a", "http://x/b",
                                        "http://x/d"};
    for (int i = 0; i < 3; i++) {
        snprintf(file, sizeof(file), "%s/rr-%05d.warc.gz", base, i);
        struct rec recs[8];
        int count;
        unsigned char *raw, *plain;
        read_gz(file, recs, &count, &raw, &plain);
        assert_int_equal(count, 3);
        assert_string_equal(recs[0].type, "warcinfo");
        assert_string_equal(recs[1].type, "request");
        assert_string_equal(recs[2].type, "response");
        assert_string_equal(recs[1].uri, want[i]);
        assert_string_equal(recs[2].uri, want[i]);
        free(plain);
        free(raw);
    }
    snprintf(file, sizeof(file), "%s/rr-00003.warc.gz", base);
    assert_int_equal(access(file, F_OK), -1);
}

/* The payload given apart (bc_warc_record_payload), as the fetcher
 * gives it: its pieces after the body's, then END when the message
 * ended; data NULL: none given. */
struct payload {
    const char *data;
    bool end;
};

/* One response record of HEAD and BODY, the body appended in pieces of
 * STEP bytes, and PAY's payload in pieces of STEP bytes after them;
 * returns the file's single response record in *out (the reader checks
 * both digests, the payload's over the de-chunked body). */
static void write_response_pay(const char *name, const char *rhead,
                               const char *body, size_t step, bool truncated,
                               const struct payload *pay, struct rec *out)
{
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/c",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, rhead, strlen(rhead)), BC_OK);
    if (pay->data)
        assert_int_equal(bc_warc_record_payload(r, NULL, 0, false), BC_OK);
    for (size_t i = 0; i < strlen(body); i += step) {
        size_t k = strlen(body) - i < step ? strlen(body) - i : step;
        assert_int_equal(bc_warc_record_body(r, body + i, k), BC_OK);
    }
    if (pay->data) {
        const char *d = pay->data;
        for (size_t i = 0; i < strlen(d); i += step) {
            size_t k = strlen(d) - i < step ? strlen(d) - i : step;
            assert_int_equal(bc_warc_record_payload(r, d + i, k, false), BC_OK);
        }
        if (pay->end)
            assert_int_equal(bc_warc_record_payload(r, NULL, 0, true), BC_OK);
    }
    assert_int_equal(bc_warc_record_end(r, truncated, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_free(w), BC_OK);
    size_t n, un;
    unsigned char *raw = slurp(name, &n);
    unsigned char *plain = raw;
    if (strstr(name, ".warc.gz")) {
        int members = 0;
        size_t starts[4];
        plain = gunzip_all(raw, n, &un, &members, starts);
        assert_int_equal(members, 2);
        n = un;
    }
    struct rec recs[2];
    assert_int_equal(parse(plain, n, recs, 2), 2);
    *out = recs[1];
    out->block = NULL; /* freed below */
    if (plain != raw)
        free(plain);
    free(raw);
}

static void write_response_cut(const char *name, const char *rhead,
                               const char *body, size_t step, bool truncated,
                               struct rec *out)
{
    static const struct payload none = {NULL, false};
    write_response_pay(name, rhead, body, step, truncated, &none, out);
}

static void write_response(const char *name, const char *rhead,
                           const char *body, size_t step, struct rec *out)
{
    write_response_cut(name, rhead, body, step, false, out);
}

/* WARC-Truncated: length only on a body actually cut. A caller that
 * stopped reading (a sitemap parser that gave up on a DOCTYPE) says
 * truncated, but a body as long as its Content-Length, or a chunked one
 * to its last chunk, was archived whole and is not marked; a body short
 * of its length, a chunked one without its end, and one the framing
 * cannot judge (no length: read to the close) are. (Before the fix every
 * one of them was marked.) */
static void test_truncated_only_when_cut(void **state)
{
    (void)state;
    static const char cl[] = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
    static const char cl2[] = "HTTP/1.1 200 OK\r\nContent-Length: 9, 9\r\n"
                              "content-length:9\r\n\r\n";
    static const char bad[] = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n"
                              "Content-Length: 8\r\n\r\n";
    static const char zero[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    static const char none[] = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
    static const char te[] = "HTTP/1.1 200 OK\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n";
    static const char te_cl[] = "HTTP/1.1 200 OK\r\n"
                                "Transfer-Encoding: chunked\r\n"
                                "Content-Length: 8\r\n\r\n";
    struct {
        const char *head, *body;
        struct payload pay;
        bool marked;
    } cases[] = {
        {cl, "<!DOCTYPE", {NULL, false}, false},  /* its length: whole */
        {cl, "<!DOC", {NULL, false}, true},       /* short of it: cut */
        {cl2, "<!DOCTYPE", {NULL, false}, false}, /* the length repeated */
        {bad, "<!DOCTYPE", {NULL, false}, true},  /* two lengths: cannot tell */
        {zero, "", {NULL, false}, false},         /* no body, none due */
        {none, "<!DOCTYPE", {NULL, false}, true}, /* no length: cannot tell */
        /* Chunked: the caller's END says the last chunk came. */
        {te, "3\r\nabc\r\n0\r\n\r\n", {"abc", true}, false},
        {te, "3\r\nabc\r\n", {"abc", false}, true},         /* chunks, no end */
        {te, "3\r\nabc\r\n0\r\n\r\n", {NULL, false}, true}, /* untold */
        /* A Content-Length beside chunked frames nothing (RFC 9112
         * 6.3): 8 body bytes are not a whole body. */
        {te_cl, "3\r\nabc\r\n", {"abc", false}, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rec r;
        write_response_pay(new_path(".warc"), cases[i].head, cases[i].body, 2,
                           true, &cases[i].pay, &r);
        assert_int_equal(r.truncated, cases[i].marked);
        assert_int_equal(r.block_len,
                         strlen(cases[i].head) + strlen(cases[i].body));
        /* Not cut by the caller: never marked. */
        write_response_pay(new_path(".warc.gz"), cases[i].head, cases[i].body,
                           4, false, &cases[i].pay, &r);
        assert_false(r.truncated);
    }
}

/* WARC-Payload-Digest is over the entity body (WARC 1.1, under that
 * field: RFC 2616's entity-body, the transfer coding removed), while the
 * block keeps the chunked framing as received: the same page sent in other
 * chunks has the same payload digest. The writer decodes no chunks: the
 * caller gives the payload apart (the fetcher's on_wire_payload), and a
 * chunked record given none has no payload digest rather than a wrong
 * one. (Before the one decoder the writer parsed chunks itself, and gave
 * up on framing the fetcher took: test_crawl_warc's /chunked-crcrlf.) */
static void test_payload_digest_chunked(void **state)
{
    (void)state;
    static const char te[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                             "transfer-encoding:  Chunked\r\n\r\n";
    static const char a[] = "7\r\n<!DOCTY\r\n7;ext=1\r\nPE html\r\n"
                            "0\r\nX-Trailer: yes\r\n\r\n";
    static const char b[] = "e\r\n<!DOCTYPE html\r\n0\r\n\r\n";
    static const struct payload page = {"<!DOCTYPE html", true};
    char want[40] = "sha1:";
    sha1_b32("<!DOCTYPE html", 14, want + 5);
    struct rec r;
    size_t steps[] = {1, 5, 1000};
    for (size_t i = 0; i < 3; i++) {
        write_response_pay(new_path(".warc"), te, a, steps[i], false, &page,
                           &r);
        assert_string_equal(r.payload_digest, want);
        assert_int_equal(r.block_len, strlen(te) + strlen(a));
        write_response_pay(new_path(".warc.gz"), te, b, steps[i], false, &page,
                           &r);
        assert_string_equal(r.payload_digest, want);
    }
    /* Without the field the body is the payload, chunk lines and all. */
    write_response(new_path(".warc"), head, a, 3, &r);
    sha1_b32(a, strlen(a), want + 5);
    assert_string_equal(r.payload_digest, want);
    /* Chunked, no payload given: no digest of a payload the writer could
     * not tell. */
    write_response(new_path(".warc"), te, a, 4, &r);
    assert_string_equal(r.payload_digest, "");
    /* "identity" is no coding: the body is the payload. */
    write_response(new_path(".warc"),
                   "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n",
                   "abc", 1, &r);
    sha1_b32("abc", 3, want + 5);
    assert_string_equal(r.payload_digest, want);
    /* An empty payload given apart is digested as empty. */
    static const struct payload empty = {"", true};
    write_response_pay(new_path(".warc"), te, "0\r\n\r\n", 2, false, &empty,
                       &r);
    sha1_b32("", 0, want + 5);
    assert_string_equal(r.payload_digest, want);
    assert_false(r.truncated);
}

/* bc_warc_record_payload's contract: declared before the first body
 * byte, nothing after END, no NULL data with a length. */
static void test_payload_misuse(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL;
    assert_int_equal(bc_warc_record_payload(NULL, NULL, 0, false),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_create(new_path(".warc"), 0, info, &w), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, head, strlen(head)), BC_OK);
    assert_int_equal(bc_warc_record_body(r, "ab", 2), BC_OK);
    assert_int_equal(bc_warc_record_payload(r, "ab", 2, false),
                     BC_ERR_INVALID_ARG); /* after a body byte */
    bc_warc_record_abort(r);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_payload(r, NULL, 1, false),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_payload(r, "ab", 2, true), BC_OK);
    assert_int_equal(bc_warc_record_payload(r, NULL, 0, false),
                     BC_ERR_INVALID_ARG); /* after END */
    bc_warc_record_abort(r);
    assert_int_equal(bc_warc_free(w), BC_OK);
}

/* The "(deleted)" files open in this process, and how many of them are
 * in directory DIR (/proc/self/fd). */
static int deleted_files(const char *dir, int *beside)
{
    int deleted = 0;
    *beside = 0;
    DIR *fds = opendir("/proc/self/fd");
    assert_non_null(fds);
    struct dirent *e;
    while ((e = readdir(fds)) != NULL) {
        char link[300], target[600];
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strstr(target, " (deleted)")) {
            deleted++;
            *beside += strncmp(target, dir, strlen(dir)) == 0 &&
                       target[strlen(dir)] == '/';
        }
    }
    closedir(fds);
    return deleted;
}

/* A record is held in memory while its block fits 1 MiB (MEMORY FIRST),
 * then spooled: an unlinked file in the WARC's own directory (the
 * archive's file system, sized for it), not in /tmp, which is often a
 * tmpfs: a 5 GB body there would sit in memory. Seen through
 * /proc/self/fd: no "(deleted)" file at 1 MiB of block, one beside the
 * WARC at one byte more. */
static void test_spool_beside_warc(void **state)
{
    (void)state;
    char dir[400];
    snprintf(dir, sizeof(dir), "%s/spooldir", base);
    assert_int_equal(mkdir(dir, 0700), 0);
    char name[450];
    snprintf(name, sizeof(name), "%s/s.warc.gz", dir);
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/s",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, head, strlen(head)), BC_OK);
    size_t mem = ((size_t)1 << 20) - strlen(head);
    char *body = make_body(mem + 1);
    assert_int_equal(bc_warc_record_body(r, body, mem), BC_OK);
    int beside = 0;
    assert_int_equal(deleted_files(dir, &beside), 0);
    assert_int_equal(bc_warc_record_body(r, body + mem, 1), BC_OK);
    assert_int_equal(deleted_files(dir, &beside), 1);
    assert_int_equal(beside, 1);
    assert_int_equal(bc_warc_record_end(r, false, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_free(w), BC_OK);
    free(body);
    /* Nothing is left in the directory but the WARC. */
    DIR *dd = opendir(dir);
    assert_non_null(dd);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(dd)) != NULL)
        files += e->d_name[0] != '.' ||
                 (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
    closedir(dd);
    assert_int_equal(files, 1);
}

/* A spool that cannot be opened (no descriptor left: EMFILE) fails the
 * append that crosses 1 MiB with BC_ERR_IO and errno EMFILE (the crawler
 * makes that a local failure of the transfer); a record under the bound
 * needs no descriptor and is written. */
static void test_spool_emfile(void **state)
{
    (void)state;
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL, *small = NULL;
    snprintf(path, sizeof(path), "%s/emfile.warc", base);
    assert_int_equal(bc_warc_create(path, 0, info, &w), BC_OK);
    size_t n = ((size_t)1 << 20) + 1;
    char *body = make_body(n);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/e",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/f",
                                          NULL, 1700000000, NULL, NULL, &small),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, head, strlen(head)), BC_OK);
    assert_int_equal(bc_warc_record_head(small, head, strlen(head)), BC_OK);
    struct rlimit saved, none;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
    none = saved;
    none.rlim_cur = 0; /* every descriptor number is over the limit */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
    errno = 0;
    enum bc_status st = bc_warc_record_body(r, body, n);
    int err = errno;
    enum bc_status st_small = bc_warc_record_body(small, body, 100);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
    assert_int_equal(st, BC_ERR_IO);
    assert_int_equal(err, EMFILE);
    assert_int_equal(st_small, BC_OK);
    bc_warc_record_abort(r);
    assert_int_equal(bc_warc_record_end(small, false, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_free(w), BC_OK);
    free(body);
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

/* A response and a later one with the same payload in other framing
 * (chunked), written as a revisit record of the first: its block is its
 * HTTP head alone (the reader checks the block digest over it), its
 * payload digest the whole payload's and equal to the original's, and it
 * names the original by id, URI and date; one gzip member per record. */
static void test_revisit(void **state)
{
    (void)state;
    static const char body[] = "same body";
    static const char h1[] = "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
    static const char h2[] = "HTTP/1.1 200 OK\r\nETag: \"b\"\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n";
    static const char chunked[] = "4\r\nsame\r\n5\r\n body\r\n0\r\n\r\n";
    const char *name = new_path(".warc.gz");
    struct bc_warc *w = NULL;
    struct bc_warc_record *a = NULL, *b = NULL;
    unsigned char da[20], db[20], want[20];
    char id_a[BC_WARC_ID_SIZE];
    assert_int_equal(bc_warc_new_id(id_a), BC_OK);
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/a",
                                          "127.0.0.1", 1700000000, id_a, NULL,
                                          &a),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(a, h1, strlen(h1)), BC_OK);
    assert_int_equal(bc_warc_record_body(a, body, 4), BC_OK);
    assert_int_equal(bc_warc_record_body(a, body + 4, 5), BC_OK);
    assert_int_equal(bc_warc_record_payload_sha1(a, da), BC_OK);
    /* Asking leaves the record as it was: its digests still come out
     * right when it ends (the reader checks them). */
    assert_int_equal(bc_warc_record_end(a, false, NULL, NULL), BC_OK);
    SHA1((const unsigned char *)body, 9, want);
    assert_memory_equal(da, want, 20);

    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/b",
                                          "127.0.0.1", 1700000100, NULL, NULL,
                                          &b),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(b, h2, strlen(h2)), BC_OK);
    assert_int_equal(bc_warc_record_payload(b, NULL, 0, false), BC_OK);
    assert_int_equal(bc_warc_record_body(b, chunked, strlen(chunked)), BC_OK);
    assert_int_equal(bc_warc_record_payload(b, "same", 4, false), BC_OK);
    assert_int_equal(bc_warc_record_payload(b, " body", 5, true), BC_OK);
    assert_int_equal(bc_warc_record_payload_sha1(b, db), BC_OK);
    assert_memory_equal(db, da, 20);
    /* Refused, the record left open: a field with CR. */
    struct bc_warc_refers bad = {id_a, "http://x/a\r\nX: y", 1700000000};
    assert_int_equal(bc_warc_record_end_revisit(b, &bad, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    struct bc_warc_refers of = {id_a, "http://x/a", 1700000000};
    const char *file = NULL;
    uint64_t offset = 0;
    assert_int_equal(bc_warc_record_end_revisit(b, &of, &file, &offset), BC_OK);
    assert_string_equal(file, name);
    assert_true(offset > 0);
    assert_int_equal(bc_warc_free(w), BC_OK);

    struct rec recs[8];
    int count = 0;
    unsigned char *raw, *plain;
    read_gz(name, recs, &count, &raw, &plain); /* a member per record */
    assert_int_equal(count, 3);
    assert_string_equal(recs[1].type, "response");
    assert_string_equal(recs[1].id, id_a);
    assert_string_equal(recs[2].type, "revisit");
    assert_string_equal(recs[2].uri, "http://x/b");
    assert_string_equal(recs[2].payload_digest, recs[1].payload_digest);
    assert_string_equal(recs[2].refers_to, id_a);
    assert_string_equal(recs[2].refers_uri, "http://x/a");
    assert_string_equal(recs[2].refers_date, recs[1].date);
    assert_string_equal(recs[2].refers_date, "2023-11-14T22:13:20Z");
    assert_string_equal(recs[2].date, "2023-11-14T22:15:00Z");
    assert_int_equal(recs[2].block_len, strlen(h2));
    assert_memory_equal(recs[2].block, h2, strlen(h2));
    free(plain);
    free(raw);
}

/* A 304 Not Modified to a conditional request, written as a revisit of
 * profile server-not-modified: its block is the 304's head (the reader
 * checks its digest), no payload digest, and it names the last fetch's
 * record by id, URI and date; without an id, no WARC-Refers-To. A field
 * with CR is refused, the record left open. */
static void test_revisit_not_modified(void **state)
{
    (void)state;
    static const char h304[] = "HTTP/1.1 304 Not Modified\r\n"
                               "ETag: \"v1\"\r\n\r\n";
    const char *name = new_path(".warc");
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL;
    char id_a[BC_WARC_ID_SIZE];
    assert_int_equal(bc_warc_new_id(id_a), BC_OK);
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/a",
                                              "127.0.0.1", 1700000100, NULL,
                                              NULL, &r),
                         BC_OK);
        assert_int_equal(bc_warc_record_head(r, h304, strlen(h304)), BC_OK);
        struct bc_warc_refers bad = {id_a, "http://x/a\nX: y", 1700000000};
        assert_int_equal(bc_warc_record_end_not_modified(r, &bad, NULL, NULL),
                         BC_ERR_INVALID_ARG);
        assert_int_equal(bc_warc_record_end_not_modified(r, NULL, NULL, NULL),
                         BC_ERR_INVALID_ARG);
        struct bc_warc_refers of = {i == 0 ? id_a : NULL, "http://x/a",
                                    1700000000};
        assert_int_equal(bc_warc_record_end_not_modified(r, &of, NULL, NULL),
                         BC_OK);
    }
    assert_int_equal(bc_warc_record_end_not_modified(NULL, NULL, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_free(w), BC_OK);
    size_t n;
    unsigned char *raw = slurp(name, &n);
    struct rec recs[4];
    assert_int_equal(parse(raw, n, recs, 4), 3);
    for (int i = 1; i < 3; i++) {
        assert_string_equal(recs[i].type, "revisit");
        assert_string_equal(recs[i].profile,
                            "http://netpreserve.org/warc/1.1/revisit/"
                            "server-not-modified");
        assert_string_equal(recs[i].payload_digest, "");
        assert_string_equal(recs[i].refers_uri, "http://x/a");
        assert_string_equal(recs[i].refers_date, "2023-11-14T22:13:20Z");
        assert_int_equal(recs[i].block_len, strlen(h304));
        assert_memory_equal(recs[i].block, h304, strlen(h304));
    }
    assert_string_equal(recs[1].refers_to, id_a);
    assert_string_equal(recs[2].refers_to, "");
    free(raw);
}

/* The revisit's misuse: a request record has no payload to compare; a
 * response whose head names a transfer coding and was given no payload
 * apart has no payload digest (so no revisit); NULL arguments. A refused
 * record stays open and is aborted. A response with no body byte is a
 * revisit whose block is its whole head. */
static void test_revisit_misuse(void **state)
{
    (void)state;
    static const char coded[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    static const char empty[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    struct bc_warc *w = NULL;
    struct bc_warc_record *q = NULL, *r = NULL;
    unsigned char d[20];
    struct bc_warc_refers of = {"<urn:uuid:x>", "http://x/a", 1700000000};
    const char *name = new_path(".warc");
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_REQUEST, "http://x/a",
                                          NULL, 1700000000, NULL, NULL, &q),
                     BC_OK);
    assert_int_equal(bc_warc_record_payload_sha1(q, d), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_end_revisit(q, &of, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    bc_warc_record_abort(q);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/a",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, coded, strlen(coded)), BC_OK);
    assert_int_equal(bc_warc_record_body(r, "0\r\n\r\n", 5), BC_OK);
    assert_int_equal(bc_warc_record_payload_sha1(r, d), BC_ERR_NOT_FOUND);
    assert_int_equal(bc_warc_record_end_revisit(r, &of, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_end_revisit(r, NULL, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_end_revisit(NULL, &of, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_record_payload_sha1(NULL, d), BC_ERR_INVALID_ARG);
    bc_warc_record_abort(r);
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, "http://x/e",
                                          NULL, 1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, empty, strlen(empty)), BC_OK);
    assert_int_equal(bc_warc_record_end_revisit(r, &of, NULL, NULL), BC_OK);
    assert_int_equal(bc_warc_free(w), BC_OK);
    size_t n;
    unsigned char *raw = slurp(name, &n);
    struct rec recs[4];
    assert_int_equal(parse(raw, n, recs, 4), 2);
    assert_string_equal(recs[1].type, "revisit");
    assert_int_equal(recs[1].block_len, strlen(empty));
    free(raw);
}

/* bc_warc_new_id(): "<urn:uuid:" 8-4-4-4-12 lowercase hex digits ">",
 * 47 characters, an RFC 4122 version 4 UUID (its version digit 4, its
 * variant digit 8, 9, a or b); two ids differ. */
/* a is a record id: "<urn:uuid:" + a version 4 UUID (RFC 9562: version
 * 4, variant 10) in lower-case hex + ">". */
static void assert_uuid_id(const char *a)
{
    assert_int_equal(strlen(a), 47);
    assert_memory_equal(a, "<urn:uuid:", 10);
    assert_int_equal(a[46], '>');
    for (int i = 10; i < 46; i++) {
        int k = i - 10; /* position in the UUID */
        if (k == 8 || k == 13 || k == 18 || k == 23)
            assert_int_equal(a[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", a[i]));
    }
    assert_int_equal(a[10 + 14], '4');
    assert_non_null(strchr("89ab", a[10 + 19]));
}

static void test_new_id(void **state)
{
    (void)state;
    char a[BC_WARC_ID_SIZE], b[BC_WARC_ID_SIZE];
    assert_int_equal(bc_warc_new_id(a), BC_OK);
    assert_int_equal(bc_warc_new_id(b), BC_OK);
    assert_uuid_id(a);
    assert_string_not_equal(a, b);
}

/* bc_warc_next_id(): ids of the same form as bc_warc_new_id()'s, drawn
 * from the writer's store of random bytes (warc.c, IDS: 64 ids a refill):
 * 200 ids, across three refills, all of the form and all different; a
 * NULL writer or id is refused. */
static void test_next_id(void **state)
{
    (void)state;
    enum { N = 200 };
    static char ids[N][BC_WARC_ID_SIZE];
    char name[400];
    strcpy(name, new_path(".warc"));
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    for (int n = 0; n < N; n++) {
        const char *a = ids[n];
        assert_int_equal(bc_warc_next_id(w, ids[n]), BC_OK);
        assert_uuid_id(a);
        for (int m = 0; m < n; m++)
            assert_string_not_equal(ids[m], a);
    }
    char id[BC_WARC_ID_SIZE];
    assert_int_equal(bc_warc_next_id(NULL, id), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_next_id(w, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_warc_free(w), BC_OK);
    unlink(name);
}

/* The fixed text of a header (warc.c, HEADER_ROOM): with every optional
 * field and 20-character dates, 487 bytes for a response with a 20-digit
 * length, 703 for a revisit (WARC-Truncated's 24 among them, which a
 * revisit never has); the rest is the URIs, the IP address, the
 * WARC-Concurrent-To id, and a length of fewer digits. Checked on a
 * truncated response with all its fields, then a revisit with all its
 * own, both with a 2-digit length. */
static void test_header_room(void **state)
{
    (void)state;
    static const char h[] = "HTTP/1.1 200 OK\r\n\r\n"; /* 19 bytes */
    static const char uri[] = "http://x/header-room";
    static const char ip[] = "192.0.2.1";
    static const char refers_uri[] = "http://x/the-original";
    char id[BC_WARC_ID_SIZE], other[BC_WARC_ID_SIZE];
    assert_int_equal(bc_warc_new_id(id), BC_OK);
    assert_int_equal(bc_warc_new_id(other), BC_OK);
    char name[400];
    strcpy(name, new_path(".warc"));
    struct bc_warc *w = NULL;
    struct bc_warc_record *r = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    for (int revisit = 0; revisit < 2; revisit++) {
        assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, uri, ip,
                                              1700000000, NULL, other, &r),
                         BC_OK);
        assert_int_equal(bc_warc_record_head(r, h, strlen(h)), BC_OK);
        assert_int_equal(bc_warc_record_body(r, "12345678", 8), BC_OK);
        struct bc_warc_refers of = {id, refers_uri, 1700000000};
        if (revisit)
            assert_int_equal(bc_warc_record_end_revisit(r, &of, NULL, NULL),
                             BC_OK);
        else
            assert_int_equal(bc_warc_record_end(r, true, NULL, NULL), BC_OK);
    }
    assert_int_equal(bc_warc_free(w), BC_OK);

    size_t n;
    unsigned char *raw = slurp(name, &n);
    struct rec recs[4];
    assert_int_equal(parse(raw, n, recs, 4), 3);
    /* Where each header starts: the file's start, then after the block
     * and \r\n\r\n of the record before. */
    const unsigned char *start1 = recs[0].block + recs[0].block_len + 4;
    const unsigned char *start2 = recs[1].block + recs[1].block_len + 4;
    size_t strings = strlen(uri) + strlen(ip) + strlen(other);
    assert_true(recs[1].truncated); /* every optional field */
    assert_memory_equal(recs[1].payload_digest, "sha1:", 5);
    assert_string_equal(recs[1].concurrent, other);
    assert_string_equal(recs[1].ip, ip);
    assert_int_equal(recs[1].block_len, 27); /* 2 digits, not 20 */
    assert_int_equal((size_t)(recs[1].block - start1), 487 - 18 + strings);
    assert_string_equal(recs[2].type, "revisit");
    assert_string_equal(recs[2].refers_to, id);
    assert_false(recs[2].truncated);
    assert_int_equal(recs[2].block_len, 19); /* 2 digits */
    assert_int_equal((size_t)(recs[2].block - start2),
                     703 - 24 - 18 + strings + strlen(refers_uri));
    free(raw);
}

/* Read a .warc.gz of many records member by member: each record is
 * inflated alone and parsed after the file's warcinfo record (parse()
 * checks that every record names it), into rec; its member's size into
 * *member. Returns the records after the warcinfo. A file of many
 * megabytes parsed at once took minutes under ASan, whose strstr()
 * measures the whole rest of the file at every header line. */
typedef void each_fn(int i, const struct rec *r, size_t member, void *arg);
static int read_members(const char *name, each_fn *each, void *arg)
{
    size_t n, info_len = 0, cap = (size_t)3 << 20, pos = 0;
    unsigned char *raw = slurp(name, &n);
    unsigned char *buf = malloc(cap);
    assert_non_null(buf);
    int count = -1;
    while (pos < n) {
        z_stream z = {0};
        assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
        z.next_in = raw + pos;
        z.avail_in = (uInt)(n - pos);
        z.next_out = buf + info_len;
        z.avail_out = (uInt)(cap - info_len - 1);
        assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
        size_t len = info_len + z.total_out, member = n - pos - z.avail_in;
        pos += member;
        inflateEnd(&z);
        buf[len] = '\0';
        struct rec recs[2];
        assert_int_equal(parse(buf, len, recs, 2), count < 0 ? 1 : 2);
        if (count < 0)
            info_len = len; /* the warcinfo record stays first */
        else
            each(count, &recs[1], member, arg);
        count++;
    }
    free(buf);
    free(raw);
    return count;
}

static void check_recycled(int i, const struct rec *r, size_t member, void *arg)
{
    (void)member;
    const size_t *want_len = arg;
    assert_string_equal(r->type, "response");
    assert_int_equal(r->block_len, want_len[i]);
    assert_memory_equal(r->payload_digest, "sha1:", 5);
}

/* RECYCLING (warc.c): an ended record is kept, with its buffers and
 * SHA-1 states, for the next one to begin; nothing of it may show in the
 * next. 70 records open at once (more than the 64 kept), ended in another
 * order, then 70 more on the kept ones, with the heads' transfer coding
 * swapped: every size class (no body, 100 bytes, 5,000, 300,000: past
 * the 256 KiB a kept record keeps, and two past the 1 MiB bound:
 * spooled); each record read back with its block and both digests
 * (parse()), a chunked body's payload given apart and a plain one's not. */
static void test_recycled_records(void **state)
{
    (void)state;
    enum { N = 70, BIG = (1 << 20) + 1000 };
    static const char plain_head[] = "HTTP/1.1 200 OK\r\n\r\n";
    static const char chunked_head[] =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    static const size_t sizes[] = {0, 100, 5000, 300 * 1000};
    char *body = make_body(BIG);
    char name[400];
    strcpy(name, new_path(".warc.gz"));
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    size_t want_len[2 * N];
    for (int round = 0; round < 2; round++) {
        struct bc_warc_record *r[N];
        size_t len[N];
        for (int i = 0; i < N; i++) {
            char uri[64];
            snprintf(uri, sizeof(uri), "http://x/%d/%d", round, i);
            assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, uri,
                                                  NULL, 1700000000, NULL, NULL,
                                                  &r[i]),
                             BC_OK);
            bool chunked = (i + round) % 2 == 0;
            len[i] = i == 7 || i == 50 ? BIG : sizes[i % 4];
            const char *h = chunked ? chunked_head : plain_head;
            assert_int_equal(bc_warc_record_head(r[i], h, strlen(h)), BC_OK);
            if (!chunked) {
                assert_int_equal(bc_warc_record_body(r[i], body, len[i]),
                                 BC_OK);
                len[i] += strlen(h);
                continue;
            }
            /* One chunk of len[i] bytes (none: just the last chunk). */
            char size_line[32];
            int k = len[i] ? snprintf(size_line, sizeof(size_line), "%zx\r\n",
                                      len[i])
                           : 0;
            assert_int_equal(bc_warc_record_payload(r[i], NULL, 0, false),
                             BC_OK);
            assert_int_equal(bc_warc_record_body(r[i], size_line, (size_t)k),
                             BC_OK);
            assert_int_equal(bc_warc_record_body(r[i], body, len[i]), BC_OK);
            assert_int_equal(bc_warc_record_payload(r[i], body, len[i], true),
                             BC_OK);
            const char *last = len[i] ? "\r\n0\r\n\r\n" : "0\r\n\r\n";
            assert_int_equal(bc_warc_record_body(r[i], last, strlen(last)),
                             BC_OK);
            len[i] += strlen(h) + (size_t)k + strlen(last);
        }
        /* Ended odd ones first, then even ones backwards. */
        int at = round * N;
        for (int i = 1; i < N; i += 2, at++) {
            assert_int_equal(bc_warc_record_end(r[i], false, NULL, NULL),
                             BC_OK);
            want_len[at] = len[i];
        }
        for (int i = N - 2; i >= 0; i -= 2, at++) {
            assert_int_equal(bc_warc_record_end(r[i], false, NULL, NULL),
                             BC_OK);
            want_len[at] = len[i];
        }
    }
    assert_int_equal(bc_warc_free(w), BC_OK);

    assert_int_equal(read_members(name, check_recycled, want_len), 2 * N);
    free(body);
}

/* Text like a web page's: tags and words of a small vocabulary, from a
 * seeded generator (the same bytes every run). */
static void make_text(char *b, size_t n, uint32_t seed)
{
    static const char *const words[] = {"<p>",   "</p>",  "<a href=\"/docs/",
                                        "\">",   "</a>",  "the",
                                        "table", "index", "query",
                                        "row",   "<td>",  "</td>",
                                        "of",    "and",   "PostgreSQL",
                                        "\n",    "data",  "server"};
    uint32_t x = seed;
    size_t k = 0;
    while (k < n) {
        x = x * 1103515245u + 12345u;
        const char *w = words[(x >> 16) % (sizeof(words) / sizeof(*words))];
        for (size_t i = 0; w[i] && k < n; i++)
            b[k++] = w[i];
        if (k < n)
            b[k++] = ' ';
    }
}

/* A response record of LEN body bytes at BODY, ended; its block length. */
static size_t end_response(struct bc_warc *w, const char *uri, const char *body,
                           size_t len)
{
    static const char h[] = "HTTP/1.1 200 OK\r\n\r\n";
    struct bc_warc_record *r = NULL;
    assert_int_equal(bc_warc_record_begin(w, BC_WARC_RESPONSE, uri, NULL,
                                          1700000000, NULL, NULL, &r),
                     BC_OK);
    assert_int_equal(bc_warc_record_head(r, h, strlen(h)), BC_OK);
    assert_int_equal(bc_warc_record_body(r, body, len), BC_OK);
    assert_int_equal(bc_warc_record_end(r, false, NULL, NULL), BC_OK);
    return strlen(h) + len;
}

/* What test_learnt_tables expects, and the text's compressed bytes. */
struct learnt {
    const size_t *want;
    const char *noise;
    size_t noise_len;
    size_t text_member_bytes;
};

static void check_learnt(int i, const struct rec *r, size_t member, void *arg)
{
    struct learnt *l = arg;
    assert_int_equal(r->block_len, l->want[i]);
    if (strcmp(r->uri, "http://x/noise") == 0)
        assert_memory_equal(r->block + 19, l->noise, l->noise_len);
    else
        l->text_member_bytes += member;
}

/* TABLES (warc.c): a .warc.gz writer compresses its first 1 MiB of
 * record text at level 1 while it counts its symbols, then at level 0
 * with Huffman tables made from them, and learns again from 1 MiB after
 * every 16 MiB. Every record must come back whole whatever it holds:
 * text (about 34 MiB of it, in 64 KiB records: the tables are made
 * three times), bytes never seen while learning (random: stored, within
 * the member's bound: records of exactly 1 MiB of them, MEM_MAX, held in
 * memory, with tables learnt once and twice), no body at all. Text
 * compresses: its records take less than a third of its bytes. */
static void test_learnt_tables(void **state)
{
    (void)state;
    enum { PIECE = 64 * 1024, PIECES = 34 * 16, MAX = PIECES + 8 };
    const size_t noise_len = (size_t)1 << 20;
    char *text = malloc(PIECE);
    char *noise = make_body(noise_len);
    assert_non_null(text);
    char name[400];
    strcpy(name, new_path(".warc.gz"));
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    size_t *want = malloc(MAX * sizeof(*want));
    assert_non_null(want);
    int k = 0;
    uint64_t text_bytes = 0;
    for (int i = 0; i < PIECES; i++) {
        make_text(text, PIECE, (uint32_t)i);
        want[k++] = end_response(w, "http://x/text", text, PIECE);
        text_bytes += PIECE;
        if (i == 20 || i == 300) /* tables made once, then twice */
            want[k++] = end_response(w, "http://x/noise", noise, noise_len);
    }
    want[k++] = end_response(w, "http://x/empty", "", 0);
    assert_int_equal(bc_warc_free(w), BC_OK);

    struct learnt got = {want, noise, noise_len, 0};
    assert_int_equal(read_members(name, check_learnt, &got), k);
    assert_true(got.text_member_bytes < text_bytes / 3);
    free(want);
    free(noise);
    free(text);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof(base), "%s/test_warc.XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(base))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base32_vector),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_gzip_spooled),
        cmocka_unit_test(test_plain_spooled),
        cmocka_unit_test(test_spool_emfile),
        cmocka_unit_test(test_rotation),
        cmocka_unit_test(test_rotation_unlinked),
        cmocka_unit_test(test_truncated_only_when_cut),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_resume_one_file),
        cmocka_unit_test(test_resume_rotation),
        cmocka_unit_test(test_payload_digest_chunked),
        cmocka_unit_test(test_payload_misuse),
        cmocka_unit_test(test_spool_beside_warc),
        cmocka_unit_test(test_revisit),
        cmocka_unit_test(test_revisit_misuse),
        cmocka_unit_test(test_revisit_not_modified),
        cmocka_unit_test(test_new_id),
        cmocka_unit_test(test_next_id),
        cmocka_unit_test(test_header_room),
        cmocka_unit_test(test_recycled_records),
        cmocka_unit_test(test_learnt_tables),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
