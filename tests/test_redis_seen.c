/*
 * test_redis_seen.c - the seen-test shared in Redis, against a real
 * redis-server started here on a unix socket (--port 0: no TCP).
 *
 * Skipped (exit 77) only when redis-server is not installed.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "skip.h"

#include <hiredis/hiredis.h>
#include <xxhash.h>

#include "bloomcrawl/redis_conn.h"
#include "bloomcrawl/redis_seen.h"
#include "redis_server.h"

__extension__ typedef unsigned __int128 bc_u128_t;

static struct bc_redis_server server;
static bool have_server;

static int setup(void **state)
{
    (void)state;
    if (!bc_redis_server_available())
        return 0;
    have_server = bc_redis_server_start(&server, 0);
    return have_server ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (have_server)
        bc_redis_server_stop(&server);
    return 0;
}

#define NEED_SERVER()                                                          \
    do {                                                                       \
        if (!have_server)                                                      \
            BC_SKIP();                                                         \
    } while (0)

static redisContext *raw(void)
{
    redisContext *c = redisConnectUnix(server.sock);
    assert_non_null(c);
    assert_int_equal(c->err, 0);
    return c;
}

/* A command on a raw connection; the reply is freed. */
static void raw_cmd(const char *fmt, const char *arg)
{
    redisContext *c = raw();
    redisReply *r = redisCommand(c, fmt, arg);
    assert_non_null(r);
    assert_int_not_equal(r->type, REDIS_REPLY_ERROR);
    freeReplyObject(r);
    redisFree(c);
}

static void make_keys(char (*buf)[32], const void **keys, size_t *lens,
                      size_t count, unsigned first)
{
    for (size_t i = 0; i < count; i++) {
        int n = snprintf(buf[i], 32, "https://h%u.example/p/%u",
                         (unsigned)(first + i) % 97, (unsigned)(first + i));
        keys[i] = buf[i];
        lens[i] = (size_t)n;
    }
}

/*
 * The layout of bloomcrawl/redis_seen.h, computed here from its text (the
 * LCG run step by step, not dedup's table): the key's block b (returned)
 * and its 64 bytes in Redis's bit numbering (offset o = bit 7 - o mod 8 of
 * byte o / 8).
 */
static uint64_t expected_bits(const char *key, uint64_t seed, uint64_t blocks,
                              unsigned k, unsigned char block[64])
{
    XXH128_hash_t h = XXH3_128bits_withSeed(key, strlen(key), seed);
    uint64_t b = (uint64_t)(((bc_u128_t)h.low64 * blocks) >> 64);
    memset(block, 0, 64);
    uint64_t x = h.high64;
    for (unsigned i = 0; i < k; i++) {
        x = UINT64_C(6364136223846793005) * x + UINT64_C(1442695040888963407);
        unsigned off = (unsigned)(x >> 55);
        block[off / 8] |= (unsigned char)(0x80u >> (off % 8));
    }
    return b;
}

/* bloomcrawl/redis_conn.h: the addresses, both sides of each limit. */
static void test_where(void **state)
{
    (void)state;
    struct bc_redis_where w;
    char text[300];
    assert_int_equal(bc_redis_where_parse("redis://h.example", &w), BC_OK);
    assert_string_equal(w.host, "h.example");
    assert_string_equal(w.path, "");
    assert_int_equal(w.port, 6379);
    assert_int_equal(w.db, 0);
    bc_redis_where_text(&w, text, sizeof text);
    assert_string_equal(text, "h.example:6379");
    assert_int_equal(bc_redis_where_parse("redis://127.0.0.1:1/", &w), BC_OK);
    assert_int_equal(w.port, 1);
    assert_int_equal(bc_redis_where_parse("redis://h:65535/15", &w), BC_OK);
    assert_int_equal(w.port, 65535);
    assert_int_equal(w.db, 15);
    assert_int_equal(bc_redis_where_parse("unix:/tmp/r.sock", &w), BC_OK);
    assert_string_equal(w.path, "/tmp/r.sock");
    assert_string_equal(w.host, "");
    bc_redis_where_text(&w, text, sizeof text);
    assert_string_equal(text, "unix:/tmp/r.sock");
    /* A unix path of 107 bytes fits (sockaddr_un), 108 does not. */
    char longest[5 + 109];
    memcpy(longest, "unix:", 5);
    memset(longest + 5, 'p', 107);
    longest[5 + 107] = '\0';
    assert_int_equal(bc_redis_where_parse(longest, &w), BC_OK);
    longest[5 + 107] = 'p';
    longest[5 + 108] = '\0';
    w.port = 42;
    assert_int_equal(bc_redis_where_parse(longest, &w), BC_ERR_INVALID_ARG);
    assert_int_equal(w.port, 42); /* untouched on failure */
    /* A password, and a user (ACL), percent-decoded; never in the text. */
    assert_int_equal(bc_redis_where_parse("redis://:s3cret@h:7000/2", &w),
                     BC_OK);
    assert_string_equal(w.user, "");
    assert_string_equal(w.password, "s3cret");
    assert_string_equal(w.host, "h");
    assert_int_equal(w.port, 7000);
    assert_int_equal(w.db, 2);
    bc_redis_where_text(&w, text, sizeof text);
    assert_string_equal(text, "h:7000");
    assert_int_equal(
        bc_redis_where_parse("redis://crawler:p%40ss%3Aw%2Fd@h", &w), BC_OK);
    assert_string_equal(w.user, "crawler");
    assert_string_equal(w.password, "p@ss:w/d");
    assert_int_equal(bc_redis_where_parse("unix://:pw@/tmp/r.sock", &w), BC_OK);
    assert_string_equal(w.password, "pw");
    assert_string_equal(w.path, "/tmp/r.sock");
    assert_int_equal(bc_redis_where_parse("unix:///tmp/r.sock", &w), BC_OK);
    assert_string_equal(w.path, "/tmp/r.sock");
    assert_string_equal(w.password, "");
    const char *bad[] = {"unix:",
                         "redis://",
                         "tcp://h",
                         "redis://h:0",
                         "redis://h:65536",
                         "redis://h:x",
                         "redis://h/-1",
                         "redis://h/1x",
                         "redis://h/1/2",
                         "redis://user@h",    /* no password */
                         "redis://:@h",       /* an empty password */
                         "redis://:p%4@h",    /* a cut escape */
                         "redis://:p%zz@h",   /* not hex */
                         "redis://:p%00@h",   /* a NUL */
                         "unix://:pw@r.sock", /* not a path */
                         "unix://"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(bc_redis_where_parse(bad[i], &w), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_where_parse(NULL, &w), BC_ERR_INVALID_ARG);

    /* Connecting: refused, with where and why. */
    assert_int_equal(bc_redis_where_parse("unix:/nonexistent/r.sock", &w),
                     BC_OK);
    struct redisContext *c = NULL;
    char err[256];
    assert_int_equal(bc_redis_connect(&w, 1000, &c, err, sizeof err),
                     BC_ERR_REDIS_CONNECT);
    assert_null(c);
    assert_non_null(
        strstr(err, "cannot connect to Redis at unix:/nonexistent/r.sock: "));
}

/* AUTH: a server with a password answers a client that gives it, and
 * refuses one that gives another, with the server's text and never the
 * password in the message. */
static void test_auth(void **state)
{
    (void)state;
    NEED_SERVER();
    redisContext *c = raw();
    redisReply *r = redisCommand(c, "CONFIG SET requirepass s3cret");
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    char where[200], err[256];
    struct bc_redis_where w;
    struct redisContext *ok = NULL, *no = NULL;
    snprintf(where, sizeof where, "unix://:s3cret@%s", server.sock);
    assert_int_equal(bc_redis_where_parse(where, &w), BC_OK);
    assert_int_equal(bc_redis_connect(&w, 1000, &ok, err, sizeof err), BC_OK);
    assert_string_equal(err, "");
    snprintf(where, sizeof where, "unix://:wrong@%s", server.sock);
    assert_int_equal(bc_redis_where_parse(where, &w), BC_OK);
    assert_int_equal(bc_redis_connect(&w, 1000, &no, err, sizeof err),
                     BC_ERR_REDIS_REPLY);
    assert_null(no);
    assert_non_null(strstr(err, "Redis refused AUTH: "));
    assert_null(strstr(err, "wrong"));
    /* The password set back to none, through the connection that gave it. */
    r = redisCommand(ok, "CONFIG SET requirepass %s", "");
    assert_non_null(r);
    assert_int_equal(r->type, REDIS_REPLY_STATUS);
    freeReplyObject(r);
    redisFree(ok);
    redisFree(c);
}

/* The sizing is bc_bloom_size()'s blocked one. */
static void test_sizing(void **state)
{
    (void)state;
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create("unix:/nonexistent", "s", 1000000, 0.01, 1, &rs),
        BC_OK);
    struct bc_bloom_sizing got, want;
    bc_redis_seen_sizing(rs, &got);
    assert_int_equal(bc_bloom_size(1000000, 0.01, BC_BLOOM_BLOCKED, &want),
                     BC_OK);
    assert_int_equal(got.m_bits, want.m_bits);
    assert_int_equal(got.k, want.k);
    assert_true(got.m_bits % BC_BLOOM_BLOCK_BITS == 0);
    assert_true(got.fpr_predicted <= 0.01);
    bc_redis_seen_free(rs);
    bc_redis_seen_free(NULL);

    /* With k given: bc_bloom_size_k()'s blocked sizing. */
    assert_int_equal(bc_redis_seen_create_k("unix:/nonexistent", "s", 1000000,
                                            0.01, 1, 1, &rs),
                     BC_OK);
    bc_redis_seen_sizing(rs, &got);
    assert_int_equal(bc_bloom_size_k(1000000, 0.01, 1, BC_BLOOM_BLOCKED, &want),
                     BC_OK);
    assert_int_equal(got.m_bits, want.m_bits);
    assert_int_equal(got.k, 1);
    assert_int_equal(got.n, 1000000);
    bc_redis_seen_free(rs);

    /* Bad arguments leave *out alone. */
    struct bc_redis_seen *none = NULL;
    assert_int_equal(bc_redis_seen_create("tcp://x", "s", 10, 0.01, 1, &none),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("redis://", "s", 10, 0.01, 1, &none),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_create("redis://h:99999", "s", 10, 0.01, 1, &none),
        BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_create("redis://h:1/x", "s", 10, 0.01, 1, &none),
        BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("unix:/x", "", 10, 0.01, 1, &none),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create("unix:/x", "s", 0, 0.01, 1, &none),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_redis_seen_create_mk("unix:/x", "s", 512, 65, 1, &none),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_create_k("unix:/x", "s", 10, 0.01, 0, 1, &none),
        BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_create_k("unix:/x", "", 10, 0.01, 2, 1, &none),
        BC_ERR_INVALID_ARG);
    assert_null(none);
    assert_int_equal(bc_redis_seen_create("redis://127.0.0.1:6390/3", "s", 10,
                                          0.01, 1, &none),
                     BC_OK);
    bc_redis_seen_free(none);
}

/*
 * The layout of bloomcrawl/redis_seen.h, computed here from its text (the
 * LCG run step by step, not dedup's table), must be the bits in the Redis
 * string, and the meta key must read as documented.
 */
static void test_layout(void **state)
{
    (void)state;
    NEED_SERVER();
    const uint64_t m = 8 * 512, seed = 42;
    const unsigned k = 7;
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create_mk(server.where, "lay", m, k, seed, &rs), BC_OK);
    assert_int_equal(bc_redis_seen_connect(rs), BC_OK);
    const char *key = "https://example.com/a";
    const void *keys[1] = {key};
    size_t lens[1] = {strlen(key)};
    enum bc_redis_seen_answer ans[1];
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(ans[0], BC_REDIS_SEEN_NEW);

    unsigned char want[512] = {0}; /* the 8 blocks of string 0 */
    uint64_t b = expected_bits(key, seed, m / 512, k, want);
    assert_true(b < 8);
    /* expected_bits() drew the key's block at the start of want: move it
     * to block b. */
    memmove(want + b * 64, want, 64);
    if (b > 0)
        memset(want, 0, 64);
    redisContext *c = raw();
    redisReply *r = redisCommand(c, "GET lay:0");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    /* The string grows to the byte of the highest bit set. */
    assert_true(r->len <= sizeof want);
    unsigned char got[512] = {0};
    memcpy(got, r->str, r->len);
    assert_memory_equal(got, want, sizeof want);
    freeReplyObject(r);
    r = redisCommand(c, "GET lay:meta");
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    assert_string_equal(r->str, "bloomcrawl-redis-seen 1 m=4096 k=7 seed=42 "
                                "kb=1048576");
    freeReplyObject(r);
    redisFree(c);

    /* A handle with other parameters is refused under the same prefix. */
    struct bc_redis_seen *other = NULL;
    assert_int_equal(
        bc_redis_seen_create_mk(server.where, "lay", m, k, seed + 1, &other),
        BC_OK);
    assert_int_equal(bc_redis_seen_connect(other), BC_ERR_MISMATCH);
    assert_non_null(strstr(bc_redis_seen_errmsg(other), "seed=42"));
    bc_redis_seen_free(other);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    bc_redis_seen_free(rs);
}

/* NEW once, then DUPLICATE, within a batch and across batches; contains
 * agrees; a filter spanning two strings answers the same way. */
static void check_batches(uint64_t m, unsigned k, size_t count)
{
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(bc_redis_seen_create_mk(server.where, "sem", m, k, 7, &rs),
                     BC_OK);
    char(*buf)[32] = calloc(count, 32);
    const void **keys = calloc(2 * count, sizeof *keys);
    size_t *lens = calloc(2 * count, sizeof *lens);
    enum bc_redis_seen_answer *ans = calloc(2 * count, sizeof *ans);
    assert_non_null(buf);
    assert_non_null(keys);
    assert_non_null(lens);
    assert_non_null(ans);
    make_keys(buf, keys, lens, count, 0);
    /* Before: all absent. */
    assert_int_equal(bc_redis_seen_contains(rs, keys, lens, count, ans), BC_OK);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(ans[i], BC_REDIS_SEEN_NEW);
    /* Each key twice in one batch (more than one command): NEW, then
     * DUPLICATE. */
    memcpy(keys + count, keys, count * sizeof *keys);
    memcpy(lens + count, lens, count * sizeof *lens);
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 2 * count, ans),
                     BC_OK);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(ans[i], BC_REDIS_SEEN_NEW);
        assert_int_equal(ans[count + i], BC_REDIS_SEEN_DUPLICATE);
    }
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, count, ans),
                     BC_OK);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(ans[i], BC_REDIS_SEEN_DUPLICATE);
    assert_int_equal(bc_redis_seen_contains(rs, keys, lens, count, ans), BC_OK);
    for (size_t i = 0; i < count; i++)
        assert_int_equal(ans[i], BC_REDIS_SEEN_DUPLICATE);
    /* An empty batch is no command. */
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 0, ans), BC_OK);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    /* Cleared: new again. */
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(ans[0], BC_REDIS_SEEN_NEW);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    free(buf);
    free(keys);
    free(lens);
    free(ans);
    bc_redis_seen_free(rs);
}

static void test_batch(void **state)
{
    (void)state;
    NEED_SERVER();
    /* 3000 keys in 2.5 * 10^5 bits: no false positive among them for
     * this seed (checked: every first answer is NEW). */
    check_batches(UINT64_C(1) << 18, 7, 3000);
}

static void test_two_strings(void **state)
{
    (void)state;
    NEED_SERVER();
    /* A key of a block b >= 2^20 lands in string "P:1" at bit offset
     * (b - 2^20) * 512, and nothing is written to "P:0". */
    const uint64_t blocks = 2 * BC_REDIS_SEEN_KEY_BLOCKS;
    char key[32];
    unsigned char want[64];
    uint64_t b = 0;
    for (unsigned i = 0; b < BC_REDIS_SEEN_KEY_BLOCKS; i++) {
        snprintf(key, sizeof key, "https://two/%u", i);
        b = expected_bits(key, 7, blocks, 7, want);
    }
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create_mk(server.where, "two", blocks * 512, 7, 7, &rs),
        BC_OK);
    const void *keys[1] = {key};
    size_t lens[1] = {strlen(key)};
    enum bc_redis_seen_answer ans[1];
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(ans[0], BC_REDIS_SEEN_NEW);
    redisContext *rc = raw();
    redisReply *r =
        redisCommand(rc, "GETRANGE two:1 %llu %llu",
                     (unsigned long long)(b - blocks / 2) * 64,
                     (unsigned long long)(b - blocks / 2) * 64 + 63);
    assert_int_equal(r->type, REDIS_REPLY_STRING);
    /* The string ends at the byte of the highest bit set. */
    assert_true(r->len <= 64);
    unsigned char got[64] = {0};
    memcpy(got, r->str, r->len);
    assert_memory_equal(got, want, 64);
    freeReplyObject(r);
    r = redisCommand(rc, "EXISTS two:0");
    assert_int_equal(r->integer, 0);
    freeReplyObject(r);
    redisFree(rc);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    bc_redis_seen_free(rs);

    /* Two strings of 2^20 blocks each; 300 keys reach both. */
    check_batches(2 * BC_REDIS_SEEN_KEY_BLOCKS * 512, 7, 300);
    rc = raw();
    r = redisCommand(rc, "EXISTS sem:0 sem:1");
    assert_int_equal(r->integer, 0); /* cleared */
    freeReplyObject(r);
    redisFree(rc);
}

/* One probe a key, sized by bc_redis_seen_create_k(): every key added is
 * then held, and of 20,000 keys never added about 1 % are answered
 * DUPLICATE (200, three standard deviations 42). */
static void test_one_probe(void **state)
{
    (void)state;
    enum { N = 20000 };
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create_k(server.where, "one", N, 0.01, 1, 5, &rs), BC_OK);
    static char text[2 * N][32];
    static const void *keys[2 * N];
    static size_t lens[2 * N];
    static enum bc_redis_seen_answer ans[2 * N];
    for (int i = 0; i < 2 * N; i++) {
        lens[i] =
            (size_t)snprintf(text[i], sizeof text[i], "https://one/%d", i);
        keys[i] = text[i];
    }
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, N, ans), BC_OK);
    assert_int_equal(bc_redis_seen_contains(rs, keys, lens, N, ans), BC_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(ans[i], BC_REDIS_SEEN_DUPLICATE);
    assert_int_equal(bc_redis_seen_contains(rs, keys + N, lens + N, N, ans),
                     BC_OK);
    int dup = 0;
    for (int i = 0; i < N; i++)
        dup += ans[i] == BC_REDIS_SEEN_DUPLICATE;
    assert_true(dup >= 200 - 42 && dup <= 200 + 42);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    bc_redis_seen_free(rs);
}

static void test_unreachable(void **state)
{
    (void)state;
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(bc_redis_seen_create("unix:/nonexistent/redis.sock", "u",
                                          1000, 0.01, 1, &rs),
                     BC_OK);
    assert_string_equal(bc_redis_seen_errmsg(rs), "");
    assert_int_equal(bc_redis_seen_connect(rs), BC_ERR_REDIS_CONNECT);
    assert_non_null(strstr(bc_redis_seen_errmsg(rs),
                           "cannot connect to Redis at "
                           "unix:/nonexistent/redis.sock: "));
    const void *keys[1] = {"a"};
    size_t lens[1] = {1};
    enum bc_redis_seen_answer ans[1] = {BC_REDIS_SEEN_DUPLICATE};
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans),
                     BC_ERR_REDIS_CONNECT);
    assert_int_equal(ans[0], BC_REDIS_SEEN_DUPLICATE); /* untouched */
    assert_string_equal(bc_strerror(BC_ERR_REDIS_CONNECT),
                        "could not connect to Redis");
    bc_redis_seen_free(rs);
}

/* The string holds a list: the server's WRONGTYPE error comes back. */
static void test_wrong_type(void **state)
{
    (void)state;
    NEED_SERVER();
    raw_cmd("RPUSH %s x", "wt:0");
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create(server.where, "wt", 1000, 0.01, 1, &rs), BC_OK);
    const void *keys[1] = {"a"};
    size_t lens[1] = {1};
    enum bc_redis_seen_answer ans[1] = {BC_REDIS_SEEN_DUPLICATE};
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans),
                     BC_ERR_REDIS_REPLY);
    assert_int_equal(ans[0], BC_REDIS_SEEN_DUPLICATE);
    assert_non_null(strstr(bc_redis_seen_errmsg(rs), "WRONGTYPE"));
    /* The handle still works on the same connection. */
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(ans[0], BC_REDIS_SEEN_NEW);
    bc_redis_seen_free(rs);
}

static uint64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/*
 * A server that stops answering (SIGSTOP: the socket stays open, the
 * kernel still accepts connections) makes a call with a timeout fail
 * within about the limit, with a message that says so; a fresh connect
 * times out the same way (the connection is accepted, its SET NX never
 * answered). Without bc_redis_seen_set_timeout() such a call would block
 * until the server resumed.
 */
static void test_timeout(void **state)
{
    (void)state;
    NEED_SERVER();
    assert_int_equal(bc_redis_seen_set_timeout(NULL, 1), BC_ERR_INVALID_ARG);
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create(server.where, "to", 1000, 0.01, 1, &rs), BC_OK);
    /* Both sides of the limit: the longest works, one more is refused
     * and changes nothing. */
    assert_int_equal(
        bc_redis_seen_set_timeout(rs, BC_REDIS_SEEN_MAX_TIMEOUT_MS + 1),
        BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_redis_seen_set_timeout(rs, BC_REDIS_SEEN_MAX_TIMEOUT_MS), BC_OK);
    assert_int_equal(bc_redis_seen_connect(rs), BC_OK);
    assert_int_equal(bc_redis_seen_set_timeout(rs, 300), BC_OK);
    const void *keys[1] = {"a"};
    size_t lens[1] = {1};
    enum bc_redis_seen_answer ans[1] = {BC_REDIS_SEEN_DUPLICATE};
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(ans[0], BC_REDIS_SEEN_NEW);

    kill(server.pid, SIGSTOP);
    uint64_t t0 = now_ms();
    enum bc_status st = bc_redis_seen_test_and_add(rs, keys, lens, 1, ans);
    uint64_t took = now_ms() - t0;
    /* A fresh connection to the stopped server. */
    struct bc_redis_seen *fresh = NULL;
    assert_int_equal(
        bc_redis_seen_create(server.where, "to", 1000, 0.01, 1, &fresh), BC_OK);
    assert_int_equal(bc_redis_seen_set_timeout(fresh, 200), BC_OK);
    uint64_t t1 = now_ms();
    enum bc_status fst = bc_redis_seen_connect(fresh);
    uint64_t ftook = now_ms() - t1;
    kill(server.pid, SIGCONT);

    assert_int_equal(st, BC_ERR_REDIS_LOST);
    assert_true(took >= 250 && took < 3000);
    assert_string_equal(bc_redis_seen_errmsg(rs),
                        "Redis did not answer within 300 ms (timeout; "
                        "connection dropped)");
    assert_int_equal(fst, BC_ERR_REDIS_LOST);
    assert_true(ftook >= 150 && ftook < 3000);
    assert_non_null(strstr(bc_redis_seen_errmsg(fresh), "within 200 ms"));
    /* Resumed: the next calls reconnect and see the key added before. */
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(ans[0], BC_REDIS_SEEN_DUPLICATE);
    assert_int_equal(bc_redis_seen_connect(fresh), BC_OK);
    /* 0 lifts the limit on the live connection. */
    assert_int_equal(bc_redis_seen_set_timeout(rs, 0), BC_OK);
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 1, ans), BC_OK);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    bc_redis_seen_free(fresh);
    bc_redis_seen_free(rs);
}

/*
 * The server drops the client mid-batch: the output buffer limit of normal
 * clients is set to 64 kB, and a batch of 200 commands whose replies
 * (7 integers a key) far exceed it is written before any reply is read, so
 * Redis closes the connection while the client is still writing or
 * reading. The call must return BC_ERR_REDIS_LOST, with no SIGPIPE death.
 */
static void test_server_gone_mid_batch(void **state)
{
    (void)state;
    NEED_SERVER();
    raw_cmd("CONFIG SET client-output-buffer-limit %s", "normal 65536 65536 0");
    struct bc_redis_seen *rs = NULL;
    assert_int_equal(
        bc_redis_seen_create(server.where, "gone", 1000000, 0.01, 1, &rs),
        BC_OK);
    size_t count = 200 * BC_REDIS_SEEN_CHUNK;
    char(*buf)[32] = calloc(count, 32);
    const void **keys = calloc(count, sizeof *keys);
    size_t *lens = calloc(count, sizeof *lens);
    enum bc_redis_seen_answer *ans = calloc(count, sizeof *ans);
    assert_non_null(buf);
    assert_non_null(keys);
    assert_non_null(lens);
    assert_non_null(ans);
    make_keys(buf, keys, lens, count, 0);
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, count, ans),
                     BC_ERR_REDIS_LOST);
    assert_non_null(strstr(bc_redis_seen_errmsg(rs), "Redis connection lost"));
    raw_cmd("CONFIG SET client-output-buffer-limit %s", "normal 0 0 0");
    /* The next call reconnects. */
    assert_int_equal(bc_redis_seen_test_and_add(rs, keys, lens, 10, ans),
                     BC_OK);
    assert_int_equal(bc_redis_seen_clear(rs), BC_OK);
    free(buf);
    free(keys);
    free(lens);
    free(ans);
    bc_redis_seen_free(rs);
}

/*
 * 4 processes race on overlapping key sets: process c tests-and-adds the
 * keys i with i mod 4 != c, in ascending order, in batches of 64, all
 * starting together, so every key is offered by three processes at about
 * the same moment. Every key must be answered NEW exactly once across
 * them. (A check-then-set in two commands fails this test.) The filter
 * holds N = 20000 keys at p = 10^-9, so a false positive (which would make
 * a key NEW zero times) is not expected in 10^4 runs.
 */
#define RACE_N     20000u
#define RACE_PROCS 4u

static void test_race(void **state)
{
    (void)state;
    NEED_SERVER();
    char path[RACE_PROCS][160];
    pid_t pids[RACE_PROCS];
    int go[2]; /* the start line: children wait until it is closed */
    assert_int_equal(pipe(go), 0);
    for (unsigned c = 0; c < RACE_PROCS; c++) {
        snprintf(path[c], sizeof path[c], "%s/race.%u", server.dir, c);
        pids[c] = fork();
        assert_true(pids[c] >= 0);
        if (pids[c] > 0)
            continue;
        /* The child: its own connection, its answers to a file. */
        struct bc_redis_seen *rs = NULL;
        if (bc_redis_seen_create(server.where, "race", RACE_N, 1e-9, 5, &rs) !=
                BC_OK ||
            bc_redis_seen_connect(rs) != BC_OK)
            _exit(2);
        close(go[1]);
        char byte;
        if (read(go[0], &byte, 1) != 0)
            _exit(6);
        unsigned char *news = calloc(RACE_N, 1);
        char(*buf)[32] = calloc(64, 32);
        const void *keys[64];
        size_t lens[64];
        enum bc_redis_seen_answer ans[64];
        if (!news || !buf)
            _exit(3);
        unsigned id = 0;
        while (id < RACE_N) {
            size_t n = 0;
            unsigned ids[64];
            for (; id < RACE_N && n < 64; id++) {
                if (id % RACE_PROCS == c)
                    continue;
                int len = snprintf(buf[n], 32, "https://race/%u", id);
                keys[n] = buf[n];
                lens[n] = (size_t)len;
                ids[n++] = id;
            }
            if (bc_redis_seen_test_and_add(rs, keys, lens, n, ans) != BC_OK)
                _exit(4);
            for (size_t i = 0; i < n; i++)
                news[ids[i]] = ans[i] == BC_REDIS_SEEN_NEW ? 1 : 2;
        }
        FILE *f = fopen(path[c], "wb");
        if (!f || fwrite(news, 1, RACE_N, f) != RACE_N || fclose(f) != 0)
            _exit(5);
        bc_redis_seen_free(rs);
        _exit(0);
    }
    close(go[0]);
    close(go[1]); /* go */
    for (unsigned c = 0; c < RACE_PROCS; c++) {
        int status = -1;
        assert_int_equal(waitpid(pids[c], &status, 0), pids[c]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    unsigned new_count[RACE_N] = {0}, offered[RACE_N] = {0};
    for (unsigned c = 0; c < RACE_PROCS; c++) {
        unsigned char got[RACE_N];
        FILE *f = fopen(path[c], "rb");
        assert_non_null(f);
        assert_int_equal(fread(got, 1, RACE_N, f), RACE_N);
        fclose(f);
        for (unsigned i = 0; i < RACE_N; i++) {
            offered[i] += got[i] != 0;
            new_count[i] += got[i] == 1;
        }
    }
    for (unsigned i = 0; i < RACE_N; i++) {
        assert_int_equal(offered[i], RACE_PROCS - 1);
        assert_int_equal(new_count[i], 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_where),
        cmocka_unit_test(test_auth),
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_two_strings),
        cmocka_unit_test(test_one_probe),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_wrong_type),
        cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_server_gone_mid_batch),
        cmocka_unit_test(test_race),
    };
    return bc_test_status(cmocka_run_group_tests(tests, setup, teardown));
}
