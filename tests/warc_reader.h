/*
 * warc_reader.h - a WARC reader of the tests' own, independent of
 * crawler/warc.c: slurp() a file, gunzip_all() its gzip members (noting
 * where each began), parse() the records of the uncompressed stream,
 * checking the framing, Content-Length and both digests, recomputed with
 * OpenSSL's one-shot SHA1() and a base32 encoder of this file (checked
 * against known vectors by test_warc.c); the payload digest over the
 * entity body, de-chunked when the HTTP head says chunked; and that each
 * record's WARC-Warcinfo-ID is the id of the warcinfo record before it. Failures fail the running
 * cmocka test. Include it in one file of a test executable, after
 * cmocka.h.
 */
#ifndef BC_TESTS_WARC_READER_H
#define BC_TESTS_WARC_READER_H

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/sha.h>
#include <zlib.h>

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
    char date[32];
    bool truncated;
    char block_digest[64];
    char payload_digest[64];
    char warcinfo_id[64];
    /* A revisit record's (WARC 1.1 sections 6.7.2, 6.7.3); "" in others. */
    char profile[96];
    char refers_to[64];
    char refers_uri[256];
    char refers_date[32];
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

/* Whether an HTTP head (hn bytes, up to its empty line) has a
 * "Transfer-Encoding: chunked" field (the only coding written here). */
static bool head_chunked(const unsigned char *h, size_t hn)
{
    static const char name[] = "\r\ntransfer-encoding:";
    size_t m = sizeof(name) - 1;
    for (size_t i = 0; i + m <= hn; i++) {
        size_t k = 0;
        while (k < m && (h[i + k] | (name[k] >= 'a' ? 0x20 : 0)) == name[k])
            k++;
        if (k < m)
            continue;
        size_t j = i + m;
        while (j < hn && h[j] == ' ')
            j++;
        return j + 7 <= hn &&
               strncasecmp((const char *)h + j, "chunked", 7) == 0;
    }
    return false;
}

/* The data of a chunked body (RFC 9112 7.1), in a malloc'ed buffer (its
 * length in *out_n); NULL for a malformed one. A body cut in a chunk
 * (WARC-Truncated) gives the data up to the cut. A line ends at LF, any
 * CRs before it ignored (RFC 9112 2.2); after the size only blanks, an
 * extension (";...") or the line end. Written apart from
 * fetcher/chunked.c, as an oracle. */
static unsigned char *dechunk(const unsigned char *p, size_t n, size_t *out_n)
{
    unsigned char *out = malloc(n + 1);
    size_t len = 0, pos = 0;
    if (!out)
        return NULL;
    while (pos < n) {
        size_t size = 0, digits = 0;
        while (pos < n && isxdigit(p[pos])) {
            int c = p[pos++];
            size = size * 16 +
                   (size_t)(isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
            digits++;
        }
        while (pos < n && (p[pos] == ' ' || p[pos] == '\t'))
            pos++;
        bool ok = pos >= n || p[pos] == ';' || p[pos] == '\r' || p[pos] == '\n';
        while (pos < n && p[pos] != '\n')
            pos++; /* an extension, the CR */
        pos++;
        if (digits == 0 || !ok) {
            free(out);
            return NULL;
        }
        if (size == 0)
            break; /* the trailer follows: not data */
        if (pos > n)
            pos = n;
        size_t k = size < n - pos ? size : n - pos;
        memcpy(out + len, p + pos, k);
        len += k;
        pos += k;
        while (pos < n && p[pos] == '\r')
            pos++;
        if (pos < n && p[pos] != '\n') {
            free(out);
            return NULL;
        }
        pos++;
    }
    *out_n = len;
    return out;
}

/* Parse the records of an uncompressed WARC; checks framing and digests. */
static int parse(const unsigned char *p, size_t n, struct rec *recs, int max)
{
    int count = 0;
    size_t pos = 0;
    char info_id[64] = "";
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
        field(h, hn, "WARC-Date", r->date, sizeof(r->date));
        char t[32];
        field(h, hn, "WARC-Truncated", t, sizeof(t));
        r->truncated = strcmp(t, "length") == 0;
        field(h, hn, "WARC-Block-Digest", r->block_digest,
              sizeof(r->block_digest));
        field(h, hn, "WARC-Payload-Digest", r->payload_digest,
              sizeof(r->payload_digest));
        /* Every other record names the warcinfo record before it (its
         * file's; a stream of one file starts with it). */
        field(h, hn, "WARC-Warcinfo-ID", r->warcinfo_id,
              sizeof(r->warcinfo_id));
        field(h, hn, "WARC-Profile", r->profile, sizeof(r->profile));
        field(h, hn, "WARC-Refers-To", r->refers_to, sizeof(r->refers_to));
        field(h, hn, "WARC-Refers-To-Target-URI", r->refers_uri,
              sizeof(r->refers_uri));
        field(h, hn, "WARC-Refers-To-Date", r->refers_date,
              sizeof(r->refers_date));
        if (strcmp(r->type, "warcinfo") == 0)
            strcpy(info_id, r->id);
        else
            assert_string_equal(r->warcinfo_id, info_id);
        assert_int_equal(strlen(r->id), 47);
        assert_memory_equal(r->id, "<urn:uuid:", 10);
        char want[40];
        strcpy(want, "sha1:");
        sha1_b32(r->block, r->block_len, want + 5);
        assert_string_equal(r->block_digest, want);
        bool revisit = strcmp(r->type, "revisit") == 0;
        if (revisit) {
            /* Its block is the HTTP head alone, ending in its empty line;
             * its payload digest is the original's, checked by the
             * caller against that record. */
            size_t i = 0;
            while (i + 4 <= r->block_len &&
                   memcmp(r->block + i, "\r\n\r\n", 4) != 0)
                i++;
            assert_int_equal(i + 4, r->block_len);
            if (strstr(r->profile, "server-not-modified")) {
                /* A 304: no payload to compare (WARC 1.1 6.7.3). */
                assert_string_equal(r->profile,
                                    "http://netpreserve.org/warc/1.1/"
                                    "revisit/server-not-modified");
                assert_string_equal(r->payload_digest, "");
            } else {
                assert_memory_equal(r->payload_digest, "sha1:", 5);
                assert_string_equal(r->profile,
                                    "http://netpreserve.org/warc/1.1/"
                                    "revisit/identical-payload-digest");
            }
        }
        if (strcmp(r->type, "warcinfo") != 0 && !revisit) {
            const unsigned char *body = r->block;
            size_t blen = r->block_len;
            for (size_t i = 0; i + 4 <= r->block_len; i++)
                if (memcmp(r->block + i, "\r\n\r\n", 4) == 0) {
                    body = r->block + i + 4;
                    blen = r->block_len - i - 4;
                    break;
                }
            /* The payload is the entity body (WARC 1.1): the bytes
             * after the head, de-chunked when the head says chunked. */
            size_t hl = (size_t)(body - r->block);
            unsigned char *plain = NULL;
            bool chunked = head_chunked(r->block, hl);
            if (!chunked) {
                /* No transfer coding: the body is the payload, always
                 * digested. */
                sha1_b32(body, blen, want + 5);
                assert_string_equal(r->payload_digest, want);
            } else if (r->payload_digest[0]) {
                /* Chunked: over the chunks' data, which must parse. */
                plain = dechunk(body, blen, &blen);
                assert_non_null(plain);
                sha1_b32(plain, blen, want + 5);
                assert_string_equal(r->payload_digest, want);
            } /* chunked, no digest: the writer was given no payload */
            free(plain);
        }
        pos += hn + 2 + r->block_len;
        assert_true(pos + 4 <= n);
        assert_memory_equal(p + pos, "\r\n\r\n", 4);
        pos += 4;
    }
    return count;
}

#endif /* BC_TESTS_WARC_READER_H */
