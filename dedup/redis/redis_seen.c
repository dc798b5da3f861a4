/*
 * redis_seen.c - a blocked Bloom filter kept in Redis strings.
 *
 * THE PROBLEM
 * Crawlers that share one URL-seen set among processes usually keep it in
 * Redis. scrapy-redis keeps an exact set (about 100 bytes a URL: 100 GB at
 * 10^9 URLs), and its Bloom add-ons, like Colly's Redis storage, ask "is it
 * there?" and then "add it" in two commands: two clients can both hear
 * "absent" between them and both fetch the page.
 *
 * THE IDEA
 * Keep the bits of a Bloom filter in Redis strings and make test-and-add
 * one command. BITFIELD key SET u1 o1 1 SET u1 o2 1 ... sets each bit and
 * replies with the bit's old value; Redis runs one command from start to
 * end before any other, so a key whose k old bits were not all 1 was new,
 * and every later command - from any client - sees its bits set. The first
 * BITFIELD to reach a key's bits is the only one told NEW (as with the
 * BC_BLOOM_CONCURRENT in-memory filter, a key whose missing bits another
 * key sets in the same command is "not new" for everyone: a false
 * positive, never a duplicate).
 *
 * The layout is the blocked one of dedup/bloom.c (Putze, Sanders and
 * Singler 2007): a key's k bits lie in one 512-bit block, so a key's k
 * operations address one string, and the batch is one command per string.
 * Redis limits a string to 512 MB (2^32 bits), so the blocks are spread
 * over strings of BC_REDIS_SEEN_KEY_BLOCKS blocks each:
 *
 *     key bytes --XXH3-128(seed)--> (lo, hi)
 *     block b = floor(lo * B / 2^64)          B = m / 512 blocks
 *     string "P:<floor(b / kb)>", bits (b mod kb) * 512 + [0, 512)
 *     +--------- P:0 (64 MiB) ---------+--------- P:1 ----------+--
 *     | block 0 | block 1 | ...        | block kb | ...          |
 *     +--------------------------------+------------------------+--
 *     offsets inside a block: bit_i = (LCG state i+1 from hi) >> 55
 *
 * The full recipe is in bloomcrawl/redis_seen.h; the rate is that of the
 * in-memory blocked filter of the same m and k (bc_bloom_fpr_blocked), and
 * bench/bench_redis_seen.c measures it.
 *
 * THE COST
 * A key costs k operations of 4 arguments in the command (about 25 bytes
 * each) and k integers in the reply. A batch is split into commands of
 * BC_REDIS_SEEN_CHUNK keys, each sent as soon as it is formatted and all
 * before the first reply is read, so a batch pays one round trip and the
 * server works while the client formats; the server's time per key, parsing 4k
 * arguments, bounds the rate (BENCHMARKS.md, section 7). Measured at
 * n = 10^7, k = 6 (bench/results/redis_seen-analysis.md): 3.4-3.6 us of server
 * CPU per key, about 0.15 us for each of its 24 arguments - Redis
 * allocates an object for each argument and BITFIELD parses each
 * operation - where RedisBloom's BF.MADD, a module's C loop over one
 * argument per key, spends 0.47-0.61 us and answers 6.7 times the keys
 * per second (medians). That is the price of running on a stock server
 * (managed services included), with no module loaded.
 *
 * WHY NOT A LUA SCRIPT
 * A script (EVALSHA, loaded once) could take the whole batch in one
 * argument, but it reaches the string only through redis.call, 0.7-1.5
 * us each on Redis 7.0 (the benchmark's "GETRANGE per key" probe): one
 * GETRANGE and one SETRANGE per block cost about what the 24 arguments
 * do before Lua does any bit work, and with it the script measured
 * 7.7-9.3 us per key at n = 10^7, 2.2 times BITFIELD. Merging
 * neighbouring blocks into one GETRANGE/SETRANGE pays only where a batch
 * covers its string densely; at n = 10^7 a batch of 10^4 keys touches
 * one block in 19, and a prototype that merged them spent 4.5 us per key
 * or more, building the new string in Lua. Nor does a layout made for
 * Lua pay: with a key's bits in one 48-bit word (an integer Lua holds
 * exactly), one BITFIELD_RO reads a whole batch's words in one redis.call
 * and one BITFIELD writes the changed ones (3 arguments a key read, 4 a
 * new key written, instead of 24), but each argument a script passes to
 * redis.call costs the server more than one the client sends: the read
 * alone measured about 1.5 us a key, the whole script 4-5 us, more than
 * BITFIELD's 24 arguments (bench_redis_seen's "Lua per word"; it also
 * needs 27 % more bits for 1 %). So the test-and-add stays one BITFIELD.
 * What does pay is fewer probes: the server's time is about linear in k,
 * and bc_redis_seen_create_k() at k = 3, with the m that gives the same
 * rate (27 % more bits), cuts it from 3.7 to 2.0 us a key (the
 * benchmark's "seen k=3"), still a quarter of BF.MADD's keys per second,
 * at k = 2 (1.95 times the bits) to 1.3 us, a third (--few-k 2), and at
 * k = 1 (99.5 bits a key, ten times the default's) to 0.69 us, three
 * quarters of BF.MADD's keys per second (--few-k 1). The default stays
 * the k that bc_bloom_size() picks for the least memory; a deployment
 * whose Redis has memory to spare and CPU to save picks its k.
 *
 * SIGPIPE
 * hiredis writes with write(2): a server gone mid-batch would raise
 * SIGPIPE and kill the caller, so each round of I/O runs between
 * bc_redis_sigpipe_hold() and _release() (redis_conn.h).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>
#include <xxhash.h>

#include "bc_buf.h"
#include "bloom_int.h"
#include "bloomcrawl/redis_conn.h"
#include "bloomcrawl/redis_seen.h"

struct bc_redis_seen {
    struct bc_redis_where where;
    char *prefix;
    size_t prefix_len;
    struct bc_bloom_sizing sizing;
    uint64_t blocks; /* m / 512 */
    unsigned k;
    uint64_t seed;
    uint64_t timeout_ms; /* bc_redis_seen_set_timeout(); 0: none */
    redisContext *ctx;   /* NULL when not connected */
    char errmsg[256];

    /* Scratch of one batch, grown as needed. */
    struct bc_buf cmd; /* one RESP command, written in place */
    uint64_t *strings; /* the string index j of each key */
    uint32_t *offsets; /* its bit offset (b mod kb) * 512 in the string */
    struct bc_hash128 *hashes;
    size_t *order;   /* keys in the order of the commands' operations */
    size_t *cmd_end; /* end of each command's keys in order[] */
    uint64_t *cmd_string;
    bool *all_set;      /* the answers being staged */
    size_t scratch_cap; /* keys the arrays above hold */
};

/* ---- handles ------------------------------------------------------------ */

static void set_err(struct bc_redis_seen *rs, const char *what,
                    const char *detail)
{
    /* what, ": ", detail, cut at the buffer's end */
    const char *parts[3] = {what, detail && *detail ? ": " : "",
                            detail ? detail : ""};
    size_t o = 0;
    for (int i = 0; i < 3; i++) {
        size_t len = strlen(parts[i]);
        if (len > sizeof rs->errmsg - 1 - o)
            len = sizeof rs->errmsg - 1 - o;
        memcpy(rs->errmsg + o, parts[i], len);
        o += len;
    }
    rs->errmsg[o] = '\0';
}

static enum bc_status create(const char *where, const char *prefix,
                             const struct bc_bloom_sizing *sz, uint64_t seed,
                             struct bc_redis_seen **out)
{
    struct bc_redis_seen *rs = calloc(1, sizeof *rs);
    if (!rs)
        return BC_ERR_NOMEM;
    bc_buf_init(&rs->cmd, 0);
    enum bc_status st = bc_redis_where_parse(where, &rs->where);
    if (st != BC_OK)
        goto out_free;
    rs->prefix = strdup(prefix);
    if (!rs->prefix) {
        st = BC_ERR_NOMEM;
        goto out_free;
    }
    rs->prefix_len = strlen(prefix);
    rs->sizing = *sz;
    rs->blocks = sz->m_bits / BC_BLOOM_BLOCK_BITS;
    rs->k = sz->k;
    rs->seed = seed;
    *out = rs;
    return BC_OK;
out_free:
    bc_redis_seen_free(rs);
    return st;
}

/* The filter sized for n and p: at k probes, or at bc_bloom_size()'s k
 * when k is 0. */
static enum bc_status create_sized(const char *where, const char *prefix,
                                   uint64_t n, double p, unsigned k,
                                   uint64_t seed, struct bc_redis_seen **out)
{
    if (!where || !prefix || !*prefix || !out)
        return BC_ERR_INVALID_ARG;
    struct bc_bloom_sizing sz;
    enum bc_status st = k ? bc_bloom_size_k(n, p, k, BC_BLOOM_BLOCKED, &sz)
                          : bc_bloom_size(n, p, BC_BLOOM_BLOCKED, &sz);
    if (st != BC_OK)
        return st;
    return create(where, prefix, &sz, seed, out);
}

enum bc_status bc_redis_seen_create(const char *where, const char *prefix,
                                    uint64_t n, double p, uint64_t seed,
                                    struct bc_redis_seen **out)
{
    return create_sized(where, prefix, n, p, 0, seed, out);
}

enum bc_status bc_redis_seen_create_k(const char *where, const char *prefix,
                                      uint64_t n, double p, unsigned k,
                                      uint64_t seed, struct bc_redis_seen **out)
{
    if (k == 0)
        return BC_ERR_INVALID_ARG;
    return create_sized(where, prefix, n, p, k, seed, out);
}

enum bc_status bc_redis_seen_create_mk(const char *where, const char *prefix,
                                       uint64_t m, unsigned k, uint64_t seed,
                                       struct bc_redis_seen **out)
{
    if (!where || !prefix || !*prefix || !out || m == 0 || k == 0 ||
        k > BC_BLOOM_MAX_K || m > BC_BLOOM_MAX_BITS)
        return BC_ERR_INVALID_ARG;
    struct bc_bloom_sizing sz;
    enum bc_status st = bc_bloom_rate(1, m, k, BC_BLOOM_BLOCKED, &sz);
    if (st != BC_OK)
        return st;
    sz.n = 0;
    sz.fpr_predicted = 0.0;
    sz.fpr_upper_bound = 0.0;
    sz.bits_per_key = 0.0;
    sz.k_opt = 0.0;
    return create(where, prefix, &sz, seed, out);
}

static void disconnect(struct bc_redis_seen *rs)
{
    if (rs->ctx)
        redisFree(rs->ctx);
    rs->ctx = NULL;
}

enum bc_status bc_redis_seen_set_timeout(struct bc_redis_seen *rs,
                                         uint64_t timeout_ms)
{
    if (!rs || timeout_ms > BC_REDIS_SEEN_MAX_TIMEOUT_MS)
        return BC_ERR_INVALID_ARG;
    rs->timeout_ms = timeout_ms;
    if (rs->ctx) {
        /* tv 0 clears the limit (SO_RCVTIMEO of zero means none). */
        struct timeval tv = {(time_t)(timeout_ms / 1000),
                             (suseconds_t)(timeout_ms % 1000) * 1000};
        if (redisSetTimeout(rs->ctx, tv) != REDIS_OK)
            disconnect(rs);
    }
    return BC_OK;
}

void bc_redis_seen_free(struct bc_redis_seen *rs)
{
    if (!rs)
        return;
    disconnect(rs);
    free(rs->prefix);
    bc_buf_free(&rs->cmd);
    free(rs->strings);
    free(rs->offsets);
    free(rs->hashes);
    free(rs->order);
    free(rs->cmd_end);
    free(rs->cmd_string);
    free(rs->all_set);
    free(rs);
}

void bc_redis_seen_sizing(const struct bc_redis_seen *rs,
                          struct bc_bloom_sizing *out)
{
    if (!out)
        return;
    if (!rs) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = rs->sizing;
}

const char *bc_redis_seen_errmsg(const struct bc_redis_seen *rs)
{
    return rs ? rs->errmsg : "";
}

/* ---- replies ------------------------------------------------------- */

/*
 * The status of a failed redisGetReply() or redisBufferWrite(); the
 * connection is dropped. Called right after the failure, so errno is
 * still the read's or write's: with a timeout set, hiredis's blocking
 * socket (SO_RCVTIMEO, SO_SNDTIMEO) fails with EAGAIN when the limit
 * passes, which hiredis 0.14 reports as a plain I/O error (1.x as
 * REDIS_ERR_TIMEOUT).
 */
static enum bc_status lost(struct bc_redis_seen *rs)
{
    int err = errno;
    bool timed_out = rs->timeout_ms != 0 && rs->ctx->err == REDIS_ERR_IO &&
                     (err == EAGAIN || err == EWOULDBLOCK);
#ifdef REDIS_ERR_TIMEOUT
    timed_out = timed_out || rs->ctx->err == REDIS_ERR_TIMEOUT;
#endif
    enum bc_status st =
        rs->ctx->err == REDIS_ERR_OOM ? BC_ERR_NOMEM : BC_ERR_REDIS_LOST;
    if (timed_out) {
        char ms[64];
        snprintf(ms, sizeof ms, "%llu ms (timeout; connection dropped)",
                 (unsigned long long)rs->timeout_ms);
        set_err(rs, "Redis did not answer within ", NULL);
        size_t o = strlen(rs->errmsg);
        snprintf(rs->errmsg + o, sizeof rs->errmsg - o, "%s", ms);
    } else {
        set_err(rs, "Redis connection lost", rs->ctx->errstr);
    }
    disconnect(rs);
    return st;
}

/* Read one reply; a server error is BC_ERR_REDIS_REPLY with its text. */
static enum bc_status get_reply(struct bc_redis_seen *rs, redisReply **out)
{
    void *r = NULL;
    if (redisGetReply(rs->ctx, &r) != REDIS_OK || !r) {
        enum bc_status st = lost(rs);
        /* lost() is never BC_OK; said here so that the compiler sees
         * that a reply is always set when BC_OK is returned */
        return st == BC_OK ? BC_ERR_REDIS_LOST : st;
    }
    redisReply *reply = r;
    if (reply->type == REDIS_REPLY_ERROR) {
        set_err(rs, "Redis error", reply->str);
        freeReplyObject(reply);
        return BC_ERR_REDIS_REPLY;
    }
    *out = reply;
    return BC_OK;
}

/* ---- connecting ------------------------------------------------------- */

static int meta_text(const struct bc_redis_seen *rs, char *buf, size_t size)
{
    return snprintf(
        buf, size, "bloomcrawl-redis-seen %u m=%llu k=%u seed=%llu kb=%llu",
        BC_REDIS_SEEN_VERSION, (unsigned long long)rs->sizing.m_bits, rs->k,
        (unsigned long long)rs->seed,
        (unsigned long long)BC_REDIS_SEEN_KEY_BLOCKS);
}

static enum bc_status check_meta(struct bc_redis_seen *rs)
{
    char meta[160];
    meta_text(rs, meta, sizeof meta);
    if (redisAppendCommand(rs->ctx, "SET %s:meta %s NX", rs->prefix, meta) !=
            REDIS_OK ||
        redisAppendCommand(rs->ctx, "GET %s:meta", rs->prefix) != REDIS_OK)
        return BC_ERR_NOMEM;
    enum bc_status st = BC_OK;
    int replies = 2;
    for (int i = 0; i < replies; i++) {
        redisReply *r = NULL;
        enum bc_status s = get_reply(rs, &r);
        if (s == BC_ERR_REDIS_LOST || s == BC_ERR_NOMEM)
            return s;
        if (s != BC_OK) {
            if (st == BC_OK)
                st = s;
            continue;
        }
        if (i == replies - 1 && st == BC_OK &&
            (r->type != REDIS_REPLY_STRING || strcmp(r->str, meta) != 0)) {
            set_err(rs, "another filter under this prefix",
                    r->type == REDIS_REPLY_STRING ? r->str : "?");
            st = BC_ERR_MISMATCH;
        }
        freeReplyObject(r);
    }
    return st;
}

enum bc_status bc_redis_seen_connect(struct bc_redis_seen *rs)
{
    if (!rs)
        return BC_ERR_INVALID_ARG;
    if (rs->ctx)
        return BC_OK;
    rs->errmsg[0] = '\0';
    redisContext *c = NULL;
    enum bc_status st = bc_redis_connect(&rs->where, rs->timeout_ms, &c,
                                         rs->errmsg, sizeof rs->errmsg);
    if (st != BC_OK)
        return st;
    rs->ctx = c;
    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    st = check_meta(rs);
    bc_redis_sigpipe_release(&g);
    if (st != BC_OK)
        disconnect(rs);
    return st;
}

/* ---- batches ---------------------------------------------------------- */

static enum bc_status grow_scratch(struct bc_redis_seen *rs, size_t count)
{
    if (count <= rs->scratch_cap)
        return BC_OK;
    if (count > SIZE_MAX / sizeof(struct bc_hash128))
        return BC_ERR_TOO_LARGE;
    size_t cap = count;
    uint64_t *strings = realloc(rs->strings, cap * sizeof *strings);
    if (!strings)
        return BC_ERR_NOMEM;
    rs->strings = strings;
    uint32_t *offsets = realloc(rs->offsets, cap * sizeof *offsets);
    if (!offsets)
        return BC_ERR_NOMEM;
    rs->offsets = offsets;
    struct bc_hash128 *hashes = realloc(rs->hashes, cap * sizeof *hashes);
    if (!hashes)
        return BC_ERR_NOMEM;
    rs->hashes = hashes;
    size_t *order = realloc(rs->order, cap * sizeof *order);
    if (!order)
        return BC_ERR_NOMEM;
    rs->order = order;
    size_t *cmd_end = realloc(rs->cmd_end, cap * sizeof *cmd_end);
    if (!cmd_end)
        return BC_ERR_NOMEM;
    rs->cmd_end = cmd_end;
    uint64_t *cmd_string = realloc(rs->cmd_string, cap * sizeof *cmd_string);
    if (!cmd_string)
        return BC_ERR_NOMEM;
    rs->cmd_string = cmd_string;
    bool *all_set = realloc(rs->all_set, cap * sizeof *all_set);
    if (!all_set)
        return BC_ERR_NOMEM;
    rs->all_set = all_set;
    rs->scratch_cap = cap;
    return BC_OK;
}

/* Decimal digits of v into buf (no NUL); returns their number. */
static size_t put_u64(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* "$<len>\r\n<bytes>\r\n" */
static size_t put_bulk(char *buf, const char *s, size_t len)
{
    size_t o = 0;
    buf[o++] = '$';
    o += put_u64(buf + o, len);
    buf[o++] = '\r';
    buf[o++] = '\n';
    memcpy(buf + o, s, len);
    o += len;
    buf[o++] = '\r';
    buf[o++] = '\n';
    return o;
}

/*
 * Append one BITFIELD command on string j for the keys order[from, to):
 * "SET u1 <offset> 1" (set) or "GET u1 <offset>" per bit.
 */
static enum bc_status append_command(struct bc_redis_seen *rs, uint64_t j,
                                     size_t from, size_t to, bool set)
{
    size_t ops = (to - from) * rs->k;
    /* An operation is at most 4 bulks of 3 + 20 + 2 + 20 + 2 bytes. */
    size_t need = 64 + rs->prefix_len + 2 * 20 + ops * 4 * 48;
    bc_buf_clear(&rs->cmd);
    if (bc_buf_reserve(&rs->cmd, need) != BC_OK)
        return BC_ERR_NOMEM;
    char *b = rs->cmd.data;
    size_t o = 0;
    b[o++] = '*';
    o += put_u64(b + o, 2 + ops * (set ? 4 : 3));
    b[o++] = '\r';
    b[o++] = '\n';
    o += put_bulk(b + o, "BITFIELD", 8);
    char name[32 + 20];
    size_t nlen = 0;
    /* the string's name "P:<j>" */
    b[o++] = '$';
    nlen = put_u64(name, j);
    o += put_u64(b + o, rs->prefix_len + 1 + nlen);
    b[o++] = '\r';
    b[o++] = '\n';
    memcpy(b + o, rs->prefix, rs->prefix_len);
    o += rs->prefix_len;
    b[o++] = ':';
    memcpy(b + o, name, nlen);
    o += nlen;
    b[o++] = '\r';
    b[o++] = '\n';
    for (size_t x = from; x < to; x++) {
        size_t i = rs->order[x];
        for (unsigned p = 0; p < rs->k; p++) {
            uint64_t off =
                (uint64_t)rs->offsets[i] + bc_block_bit(rs->hashes[i], p);
            char num[20];
            size_t len = put_u64(num, off);
            if (set) {
                memcpy(b + o, "$3\r\nSET\r\n$2\r\nu1\r\n", 17);
                o += 17;
            } else {
                memcpy(b + o, "$3\r\nGET\r\n$2\r\nu1\r\n", 17);
                o += 17;
            }
            o += put_bulk(b + o, num, len);
            if (set) {
                memcpy(b + o, "$1\r\n1\r\n", 7);
                o += 7;
            }
        }
    }
    if (redisAppendFormattedCommand(rs->ctx, b, o) != REDIS_OK)
        return BC_ERR_NOMEM;
    return BC_OK;
}

/* The batch's arguments as the public functions document them. */
static bool batch_args_ok(const struct bc_redis_seen *rs,
                          const void *const *keys, const size_t *lens,
                          size_t count,
                          const enum bc_redis_seen_answer *answers)
{
    if (!rs || (count > 0 && (!keys || !lens || !answers)))
        return false;
    for (size_t i = 0; i < count; i++)
        if (!keys[i] && lens[i] > 0)
            return false;
    return true;
}

/* Each key's hash, its string and the offset of its block in the
 * string. */
static void hash_keys(struct bc_redis_seen *rs, const void *const *keys,
                      const size_t *lens, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        XXH128_hash_t h = XXH3_128bits_withSeed(keys[i], lens[i], rs->seed);
        struct bc_hash128 hh = {h.low64, h.high64};
        uint64_t block = bc_block_index(hh, rs->blocks);
        rs->hashes[i] = hh;
        rs->strings[i] = block / BC_REDIS_SEEN_KEY_BLOCKS;
        rs->offsets[i] = (uint32_t)((block % BC_REDIS_SEEN_KEY_BLOCKS) *
                                    BC_BLOOM_BLOCK_BITS);
    }
}

/*
 * The keys of the next command of the chunk [from, to): the untaken keys
 * on the string of its first untaken key, appended to rs->order from
 * *filled on, in the batch's order. A key is taken when a command since
 * the chunk's first (those ending after start) is on its string already.
 * Returns the command's string.
 */
static uint64_t next_command_keys(struct bc_redis_seen *rs, size_t from,
                                  size_t to, size_t start, size_t ncmd,
                                  size_t *filled)
{
    uint64_t j = UINT64_MAX;
    for (size_t i = from; i < to; i++) {
        bool taken = false;
        for (size_t c = ncmd; c > 0 && rs->cmd_end[c - 1] > start; c--)
            if (rs->cmd_string[c - 1] == rs->strings[i])
                taken = true;
        if (taken)
            continue;
        if (j == UINT64_MAX)
            j = rs->strings[i];
        if (rs->strings[i] == j)
            rs->order[(*filled)++] = i;
    }
    return j;
}

/*
 * Format and send the batch's BITFIELD commands (SIGPIPE held by the
 * caller): per chunk of keys, one per string in the order the strings
 * first appear; a key's operations keep the batch's order within its
 * string. rs->cmd_string and rs->cmd_end describe them, *ncmd receives
 * their number. On an error the connection is dropped: commands may be
 * half sent.
 */
static enum bc_status send_commands(struct bc_redis_seen *rs, size_t count,
                                    bool set, size_t *ncmd)
{
    size_t filled = 0;
    *ncmd = 0;
    for (size_t from = 0; from < count; from += BC_REDIS_SEEN_CHUNK) {
        size_t to = from + BC_REDIS_SEEN_CHUNK < count
                        ? from + BC_REDIS_SEEN_CHUNK
                        : count;
        size_t start = filled;
        while (filled - start < to - from) {
            size_t cmd_from = filled;
            uint64_t j = next_command_keys(rs, from, to, start, *ncmd, &filled);
            rs->cmd_string[*ncmd] = j;
            rs->cmd_end[*ncmd] = filled;
            ++*ncmd;
            enum bc_status st = append_command(rs, j, cmd_from, filled, set);
            if (st != BC_OK) {
                disconnect(rs); /* commands half queued */
                return st;
            }
            /* Send each command as soon as it is formatted: the server
             * runs it while the next one is formatted. Redis buffers its
             * replies meanwhile, so writing before reading cannot
             * deadlock. */
            int done = 0;
            while (!done)
                if (redisBufferWrite(rs->ctx, &done) != REDIS_OK)
                    return lost(rs);
        }
    }
    return BC_OK;
}

/* Whether all k bits of each of the nkeys keys of one BITFIELD reply are
 * set, staged in rs->all_set (answers[] is written only on success). */
static void stage_reply(struct bc_redis_seen *rs, const redisReply *r, size_t x,
                        size_t nkeys)
{
    for (size_t e = 0; e < nkeys; e++) {
        bool all = true;
        for (unsigned p = 0; p < rs->k; p++) {
            redisReply *bit = r->element[e * rs->k + p];
            if (bit->type != REDIS_REPLY_INTEGER || bit->integer == 0)
                all = false;
        }
        rs->all_set[rs->order[x + e]] = all;
    }
}

/*
 * Read the ncmd replies. Every reply is read even after a bad one, so
 * the connection stays in step; the first error is returned, except
 * that a lost connection or no memory stops at once.
 */
static enum bc_status read_replies(struct bc_redis_seen *rs, size_t ncmd)
{
    enum bc_status result = BC_OK;
    size_t x = 0;
    for (size_t c = 0; c < ncmd; c++) {
        redisReply *r = NULL;
        enum bc_status st = get_reply(rs, &r);
        if (st == BC_ERR_REDIS_LOST || st == BC_ERR_NOMEM)
            return st;
        if (st != BC_OK) {
            if (result == BC_OK)
                result = st;
            x = rs->cmd_end[c];
            continue;
        }
        size_t nkeys = rs->cmd_end[c] - x;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != nkeys * rs->k) {
            set_err(rs, "unexpected reply to BITFIELD", NULL);
            if (result == BC_OK)
                result = BC_ERR_REDIS_REPLY;
        } else if (result == BC_OK) {
            stage_reply(rs, r, x, nkeys);
        }
        x = rs->cmd_end[c];
        freeReplyObject(r);
    }
    return result;
}

/* test_and_add (set) or test: hash the keys, send one BITFIELD command
 * per string and chunk, read the replies, then answer. */
static enum bc_status run_batch(struct bc_redis_seen *rs,
                                const void *const *keys, const size_t *lens,
                                size_t count,
                                enum bc_redis_seen_answer *answers, bool set)
{
    if (!batch_args_ok(rs, keys, lens, count, answers))
        return BC_ERR_INVALID_ARG;
    if (count == 0)
        return BC_OK;
    enum bc_status st = bc_redis_seen_connect(rs);
    if (st != BC_OK)
        return st;
    st = grow_scratch(rs, count);
    if (st != BC_OK)
        return st;
    rs->errmsg[0] = '\0';
    hash_keys(rs, keys, lens, count);

    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    size_t ncmd;
    st = send_commands(rs, count, set, &ncmd);
    if (st == BC_OK)
        st = read_replies(rs, ncmd);
    bc_redis_sigpipe_release(&g);
    if (st != BC_OK)
        return st;
    for (size_t i = 0; i < count; i++)
        answers[i] =
            rs->all_set[i] ? BC_REDIS_SEEN_DUPLICATE : BC_REDIS_SEEN_NEW;
    return BC_OK;
}

enum bc_status bc_redis_seen_test_and_add(struct bc_redis_seen *rs,
                                          const void *const *keys,
                                          const size_t *lens, size_t count,
                                          enum bc_redis_seen_answer *answers)
{
    return run_batch(rs, keys, lens, count, answers, true);
}

enum bc_status bc_redis_seen_contains(struct bc_redis_seen *rs,
                                      const void *const *keys,
                                      const size_t *lens, size_t count,
                                      enum bc_redis_seen_answer *answers)
{
    return run_batch(rs, keys, lens, count, answers, false);
}

enum bc_status bc_redis_seen_clear(struct bc_redis_seen *rs)
{
    if (!rs)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = bc_redis_seen_connect(rs);
    if (st != BC_OK)
        return st;
    uint64_t nstrings =
        (rs->blocks + BC_REDIS_SEEN_KEY_BLOCKS - 1) / BC_REDIS_SEEN_KEY_BLOCKS;
    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    st = BC_OK;
    uint64_t queued = 0;
    for (uint64_t j = 0; j < nstrings; j++, queued++)
        if (redisAppendCommand(rs->ctx, "UNLINK %s:%llu", rs->prefix,
                               (unsigned long long)j) != REDIS_OK) {
            st = BC_ERR_NOMEM;
            break;
        }
    if (st == BC_OK &&
        redisAppendCommand(rs->ctx, "UNLINK %s:meta", rs->prefix) != REDIS_OK)
        st = BC_ERR_NOMEM;
    else if (st == BC_OK)
        queued++;
    if (st != BC_OK) {
        disconnect(rs);
    } else {
        for (uint64_t q = 0; q < queued; q++) {
            redisReply *r = NULL;
            enum bc_status s = get_reply(rs, &r);
            if (s == BC_ERR_REDIS_LOST || s == BC_ERR_NOMEM) {
                st = s;
                break;
            }
            if (s != BC_OK) {
                st = st == BC_OK ? s : st;
                continue;
            }
            freeReplyObject(r);
        }
    }
    bc_redis_sigpipe_release(&g);
    /* The meta key is gone: record it again before the next batch. */
    if (st == BC_OK)
        disconnect(rs);
    return st;
}
