/*
 * bench_redis_seen.c - the seen-test shared in Redis against its peers on
 * the same redis-server: test-and-add per second from one client, the
 * server's and the client's CPU per key, and the measured false-positive
 * rate against the prediction.
 *
 *   [REDISBLOOM_SRC=dir] bench_redis_seen [--full | --n N] [--rounds R]
 *                                         [--few-k K] [--tcp] [--port P]
 *
 * Starts its own redis-server (127.0.0.1:P, default 6390, and a unix
 * socket in a temporary directory; the client talks over the socket, or
 * over TCP with --tcp). Default n = 10^6 new keys at p = 1 %; --full
 * n = 10^7 (the goal's size); --n N any other. Each round (default 5,
 * 3 at n >= 10^7: a round of --full took 7-8 minutes at load 6-9) runs, in
 * an order that alternates from round to round, each of:
 *
 *   bc_redis_seen  test-and-add in batches of 10^4 keys;
 *   SADD           one command per key, pipelined 10^4 at a time (the
 *                  exact set of scrapy-redis);
 *   BF.MADD        RedisBloom, BF.RESERVE n at 1 %, then calls of 1,024
 *                  keys, pipelined 10^4 keys at a time;
 *   Lua per block  the candidate lua_block_script below on min(n, 10^6)
 *                  random keys, 1,024 keys an EVALSHA;
 *   Lua per word   the candidate lua_word_script below (a key's k bits in
 *                  one 48-bit word, one BITFIELD_RO and one BITFIELD per
 *                  EVALSHA of 1,024 keys) on min(n, 10^6) random keys;
 *   seen k=K       bc_redis_seen made with bc_redis_seen_create_k() at
 *                  k = K (--few-k, default 3): the m that gives p at
 *                  that k (fewer BITFIELD arguments a key for more
 *                  memory);
 *
 * each on a fresh key and deleted after, and the medians are printed with
 * the ratio of bc_redis_seen to the others. Before the rounds, two probes
 * measure what the scripts' redis.calls cost alone: a script that only
 * GETRANGEs each key's block, and one that only reads each key's word
 * with one BITFIELD_RO a call (the floor of Lua per word). The
 * CPU of the server is INFO cpu's, read over the socket before and after.
 * BF.MADD runs only when REDISBLOOM_SRC names a RedisBloom source tree
 * (the project does not vendor it): the benchmark compiles its
 * redisbloom.so from it with cc into a temporary directory
 * (deps/t-digest-c and deps/readies must be checked out) and starts the
 * server with --loadmodule; without it that comparison is skipped, and
 * the benchmark says so. After the rounds, n other keys are queried with
 * bc_redis_seen_contains: the share answered DUPLICATE is the measured
 * rate (of both bc_redis_seen filters); the rate of the word layout is
 * measured on a copy in memory (word_fpr()).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "../tests/redis_server.h"
#include "bench_redis.h"
#include "bloomcrawl/redis_seen.h"

#define BATCH      10000u
#define MADD_KEYS  1024u
#define MAX_ROUNDS 15
/* The word layout of Lua per word: WORD_K distinct bits of one WORD_BITS
 * word a key, WORD_BITS_PER_KEY bits of filter a key (the sizing that
 * bench/results/redis_seen-analysis.md derives for p = 1 %; word_fpr() measures
 * it). */
#define WORD_BITS         48u
#define WORD_K            5u
#define WORD_BITS_PER_KEY 12.57
/* The fewer probes of "seen k=K" (--few-k). */
static unsigned few_k = 3;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The keys of one batch: "https://h/<first + i>". */
static char key_buf[BATCH][32];
static const void *keys[BATCH];
static size_t lens[BATCH];

static size_t make_keys(unsigned long long first, unsigned long long left)
{
    size_t n = left < BATCH ? (size_t)left : BATCH;
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(key_buf[i], sizeof key_buf[i], "https://h/%llu",
                           first + i);
        keys[i] = key_buf[i];
        lens[i] = (size_t)len;
    }
    return n;
}

/* Run count keys from first through test-and-add (set) or contains;
 * returns the DUPLICATE answers, or -1 on error. */
static long long run_seen(struct bc_redis_seen *rs, unsigned long long first,
                          unsigned long long count, bool set)
{
    static enum bc_redis_seen_answer ans[BATCH];
    long long dups = 0;
    for (unsigned long long done = 0; done < count; done += BATCH) {
        size_t n = make_keys(first + done, count - done);
        enum bc_status st =
            set ? bc_redis_seen_test_and_add(rs, keys, lens, n, ans)
                : bc_redis_seen_contains(rs, keys, lens, n, ans);
        if (st != BC_OK) {
            fprintf(stderr, "bench_redis_seen: %s: %s\n", bc_strerror(st),
                    bc_redis_seen_errmsg(rs));
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            dups += ans[i] == BC_REDIS_SEEN_DUPLICATE;
    }
    return dups;
}

/* Read n pipelined replies; returns the integer replies that were 0 (the
 * key was there), or -1 on an error. */
static long long read_replies(redisContext *c, size_t n, bool array)
{
    long long zeros = 0;
    for (size_t i = 0; i < n; i++) {
        void *v = NULL;
        if (redisGetReply(c, &v) != REDIS_OK) {
            fprintf(stderr, "bench_redis_seen: %s\n", c->errstr);
            return -1;
        }
        redisReply *r = v;
        bool bad = r->type == REDIS_REPLY_ERROR;
        if (bad)
            fprintf(stderr, "bench_redis_seen: %s\n", r->str);
        else if (array)
            for (size_t e = 0; e < r->elements; e++)
                zeros += r->element[e]->integer == 0;
        else
            zeros += r->integer == 0;
        freeReplyObject(r);
        if (bad)
            return -1;
    }
    return zeros;
}

/* SADD key k per key, pipelined a batch at a time; -1 on error. */
static long long run_sadd(redisContext *c, const char *key,
                          unsigned long long count)
{
    long long dups = 0;
    for (unsigned long long done = 0; done < count; done += BATCH) {
        size_t n = make_keys(done, count - done);
        for (size_t i = 0; i < n; i++) {
            const char *argv[3] = {"SADD", key, keys[i]};
            size_t argl[3] = {4, strlen(key), lens[i]};
            if (redisAppendCommandArgv(c, 3, argv, argl) != REDIS_OK)
                return -1;
        }
        long long z = read_replies(c, n, false);
        if (z < 0)
            return -1;
        dups += z;
    }
    return dups;
}

/* BF.MADD key k1 .. k1024, pipelined a batch at a time; -1 on error. */
static long long run_madd(redisContext *c, const char *key,
                          unsigned long long count)
{
    static const char *argv[2 + MADD_KEYS];
    static size_t argl[2 + MADD_KEYS];
    long long dups = 0;
    for (unsigned long long done = 0; done < count; done += BATCH) {
        size_t n = make_keys(done, count - done), calls = 0;
        for (size_t from = 0; from < n; from += MADD_KEYS, calls++) {
            size_t to = from + MADD_KEYS < n ? from + MADD_KEYS : n;
            argv[0] = "BF.MADD";
            argl[0] = 7;
            argv[1] = key;
            argl[1] = strlen(key);
            for (size_t i = from; i < to; i++) {
                argv[2 + i - from] = keys[i];
                argl[2 + i - from] = lens[i];
            }
            if (redisAppendCommandArgv(c, (int)(2 + to - from), argv, argl) !=
                REDIS_OK)
                return -1;
        }
        long long z = read_replies(c, calls, true);
        if (z < 0)
            return -1;
        dups += z;
    }
    return dups;
}

/* The command that compiles RedisBloom's sources in src into so. */
static void redisbloom_cc(char *out, size_t size, const char *src,
                          const char *so)
{
    snprintf(out, size,
             "cd \"%s\" && cc -O3 -flto=auto -fPIC -shared -std=gnu99 -w "
             "-D_GNU_SOURCE -DREDIS_MODULE_TARGET "
             "-DREDISMODULE_EXPERIMENTAL_API -I. -Isrc -Ideps "
             "-Ideps/murmur2 -Ideps/t-digest-c/src deps/bloom/bloom.c "
             "deps/murmur2/MurmurHash2.c deps/rmutil/util.c src/rebloom.c "
             "src/sb.c src/cf.c src/rm_topk.c src/rm_tdigest.c src/topk.c "
             "src/rm_cms.c src/cms.c deps/t-digest-c/src/tdigest.c -lm "
             "-o \"%s\"",
             src, so);
}

/* Compile RedisBloom's module from the tree src into dir/redisbloom.so
 * (its Makefile needs the readies build system and the network: the
 * sources of the 2.4 branch's Makefile are compiled directly). Returns
 * false, saying why, when the tree lacks a file or cc fails. */
static bool build_redisbloom(const char *src, const char *dir, char *so,
                             size_t size)
{
    static const char *const need[] = {"src/rebloom.c", "src/redismodule.h",
                                       "deps/t-digest-c/src/tdigest.c",
                                       "deps/readies/cetara/diag/gdb.h"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", src, need[i]);
        FILE *f = fopen(path, "r");
        if (!f) {
            fprintf(stderr,
                    "bench_redis_seen: %s missing (a submodule not checked "
                    "out?): BF.MADD skipped\n",
                    path);
            return false;
        }
        fclose(f);
    }
    snprintf(so, size, "%s/redisbloom.so", dir);
    char cmd[8192];
    /* Printed with the machine's paths as names, so that a results file
     * holds the command and not this machine's directories. */
    redisbloom_cc(cmd, sizeof cmd, "$REDISBLOOM_SRC", "$TMP/redisbloom.so");
    printf("# building RedisBloom: %s\n", cmd);
    redisbloom_cc(cmd, sizeof cmd, src, so);
    fflush(stdout);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_redis_seen: cc failed: BF.MADD skipped\n");
        return false;
    }
    return true;
}

/* bc_redis_server_begin() with --loadmodule so: the same directory,
 * socket and options (tests/redis_server.h). */
static bool start_with_module(struct bc_redis_server *s, int port,
                              const char *so)
{
    snprintf(s->dir, sizeof s->dir, "/tmp/bc_redis.XXXXXX");
    if (!mkdtemp(s->dir))
        return false;
    snprintf(s->sock, sizeof s->sock, "%s/redis.sock", s->dir);
    snprintf(s->where, sizeof s->where, "unix:%s", s->sock);
    s->tcp_port = port;
    s->appendonly = false;
    char portstr[16];
    snprintf(portstr, sizeof portstr, "%d", port);
    s->pid = fork();
    if (s->pid < 0)
        return false;
    if (s->pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execlp("redis-server", "redis-server", "--port", portstr, "--bind",
               "127.0.0.1", "--unixsocket", s->sock, "--unixsocketperm", "700",
               "--dir", s->dir, "--save", "", "--appendonly", "no",
               "--daemonize", "no", "--logfile", "", "--loadmodule", so,
               (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 2000; i++) {
        if (bc_redis_sock_answers(s->sock))
            return true;
        struct timespec ten_ms = {0, 10 * 1000 * 1000};
        nanosleep(&ten_ms, NULL);
    }
    return false;
}

/*
 * The candidate the benchmark measures besides the library: a Lua script
 * (EVALSHA, loaded once) that tests and sets each key's 512-bit block with
 * one GETRANGE and, when a bit was clear, one SETRANGE - atomic, as a
 * script runs whole. ARGV[1] holds each key's k (byte, mask) pairs, ARGV[2]
 * k, then each key's block as its first and last byte offsets in decimal
 * (passed as strings: a Lua number given to redis.call is formatted with
 * "%.14g", which cost 30 % of the server's time in a first version).
 */
static const char lua_block_script[] =
    "local key, a, k = KEYS[1], ARGV[1], tonumber(ARGV[2])\n"
    "local band, bor, sbyte, schar = bit.band, bit.bor, string.byte, "
    "string.char\n"
    "local out, p = {}, 1\n"
    "for x = 3, #ARGV, 2 do\n"
    "  local s = redis.call('GETRANGE', key, ARGV[x], ARGV[x + 1])\n"
    "  local t = {sbyte(s, 1, 64)}\n"
    "  for i = #t + 1, 64 do t[i] = 0 end\n"
    "  local new = false\n"
    "  for q = p, p + 2 * k - 1, 2 do\n"
    "    local i, m = sbyte(a, q, q + 1)\n"
    "    local v = t[i + 1]\n"
    "    if band(v, m) == 0 then t[i + 1] = bor(v, m); new = true end\n"
    "  end\n"
    "  p = p + 2 * k\n"
    "  if new then redis.call('SETRANGE', key, ARGV[x], schar(unpack(t))) "
    "end\n"
    "  out[#out + 1] = new and '1' or '0'\n"
    "end\n"
    "return table.concat(out)\n";

/* Its floor: one GETRANGE per key and nothing else. */
static const char lua_getrange_script[] =
    "for x = 1, #ARGV, 2 do redis.call('GETRANGE', KEYS[1], ARGV[x], "
    "ARGV[x + 1]) end\n"
    "return 0\n";

/*
 * The candidate of issue 25 section 4: a key's WORD_K bits lie in one
 * 48-bit word, which BITFIELD reads and writes as one integer that Lua
 * holds exactly (a double is exact to 2^53; Redis's bit library is 32-bit,
 * so a word is split into two 24-bit halves). One EVALSHA per 1,024 keys:
 * ARGV[1] holds each key's mask (6 bytes, big-endian), ARGV[2..] each
 * key's word as "#<index>" (BITFIELD's offset in units of the type). The
 * script reads every word with ONE BITFIELD_RO, decides in Lua which keys
 * are new (two keys of one word merged), writes the changed words with
 * ONE BITFIELD, and returns a '1' (new) or '0' per key. 3 arguments a key
 * read and 4 a new key written, instead of 4k; 1,024 keys make 3,072 and
 * 4,096 values for unpack(), below Lua's C-stack limit of about 7,900.
 */
static const char lua_word_script[] =
    "local key, m = KEYS[1], ARGV[1]\n"
    "local band, bor, sbyte, floor = bit.band, bit.bor, string.byte, "
    "math.floor\n"
    "local nk = #ARGV - 1\n"
    "local get = {}\n"
    "for i = 1, nk do\n"
    "  get[3 * i - 2] = 'GET'; get[3 * i - 1] = 'u48'; get[3 * i] = "
    "ARGV[i + 1]\n"
    "end\n"
    "local words = redis.call('BITFIELD_RO', key, unpack(get))\n"
    "local hi, lo, dirty, nd, out = {}, {}, {}, 0, {}\n"
    "for i = 1, nk do\n"
    "  local o = ARGV[i + 1]\n"
    "  local h, l = hi[o], lo[o]\n"
    "  if not h then\n"
    "    local w = words[i]\n"
    "    h = floor(w / 16777216); l = w % 16777216\n"
    "  end\n"
    "  local a, b, c, d, e, f = sbyte(m, 6 * i - 5, 6 * i)\n"
    "  local mh, ml = (a * 256 + b) * 256 + c, (d * 256 + e) * 256 + f\n"
    "  if band(h, mh) == mh and band(l, ml) == ml then\n"
    "    out[i] = '0'\n"
    "  else\n"
    "    h = bor(h, mh); l = bor(l, ml); out[i] = '1'\n"
    "    if not dirty[o] then dirty[o] = true; nd = nd + 1; dirty[nd] = o "
    "end\n"
    "  end\n"
    "  hi[o] = h; lo[o] = l\n"
    "end\n"
    "if nd > 0 then\n"
    "  local set = {}\n"
    "  for x = 1, nd do\n"
    "    local o = dirty[x]\n"
    "    set[4 * x - 3] = 'SET'; set[4 * x - 2] = 'u48'; set[4 * x - 1] = o\n"
    "    set[4 * x] = hi[o] * 16777216 + lo[o]\n"
    "  end\n"
    "  redis.call('BITFIELD', key, unpack(set))\n"
    "end\n"
    "return table.concat(out)\n";

/* Its floor: the one BITFIELD_RO of the same arguments and nothing else. */
static const char lua_word_read_script[] =
    "local get = {}\n"
    "for i = 1, #ARGV - 1 do\n"
    "  get[3 * i - 2] = 'GET'; get[3 * i - 1] = 'u48'; get[3 * i] = "
    "ARGV[i + 1]\n"
    "end\n"
    "redis.call('BITFIELD_RO', KEYS[1], unpack(get))\n"
    "return 0\n";

/* xorshift64: the random keys of the Lua candidates, a fixed sequence. */
static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* A random key of the word layout: its word in [0, words) and a mask of
 * WORD_K distinct bits of WORD_BITS. */
static uint64_t word_key(uint64_t *x, uint64_t words, uint64_t *mask)
{
    uint64_t w = (xorshift(x) >> 20) % words, mk = 0;
    for (unsigned got = 0; got < WORD_K;) {
        unsigned b = (unsigned)((xorshift(x) >> 40) % WORD_BITS);
        if (!(mk >> b & 1)) {
            mk |= UINT64_C(1) << b;
            got++;
        }
    }
    *mask = mk;
    return w;
}

/* The head of a candidate's call, EVALSHA sha 1 probe:0 (one key, the
 * probe string): its 4 arguments into argv and argl. */
static size_t evalsha_head(const char **argv, size_t *argl, const char *sha)
{
    static const char *const head[] = {"EVALSHA", NULL, "1", "probe:0"};
    for (size_t a = 0; a < 4; a++) {
        argv[a] = head[a] ? head[a] : sha;
        argl[a] = strlen(argv[a]);
    }
    return 4;
}
/* Run count random keys of the word layout (a filter of `words` words)
 * through the script sha (lua_word_script or its floor) in calls of
 * MADD_KEYS keys, pipelined a batch at a time. Returns the keys answered
 * '0' (not new), or -1 on an error. */
static long long run_word(redisContext *c, const char *sha, uint64_t words,
                          unsigned long long count)
{
    static char offs[MADD_KEYS][24];
    static unsigned char masks[MADD_KEYS * 6];
    static const char *argv[5 + MADD_KEYS];
    static size_t argl[5 + MADD_KEYS];
    uint64_t x = 88172645463325252u;
    long long dups = 0;
    for (unsigned long long done = 0; done < count; done += BATCH) {
        size_t n = count - done < BATCH ? (size_t)(count - done) : BATCH;
        size_t calls = 0;
        for (size_t from = 0; from < n; from += MADD_KEYS, calls++) {
            size_t to = from + MADD_KEYS < n ? from + MADD_KEYS : n;
            size_t a = evalsha_head(argv, argl, sha);
            argv[a] = (const char *)masks, argl[a++] = (to - from) * 6;
            for (size_t i = 0; i < to - from; i++) {
                uint64_t mk, w = word_key(&x, words, &mk);
                for (int b = 0; b < 6; b++)
                    masks[i * 6 + (size_t)b] =
                        (unsigned char)(mk >> (40 - 8 * b));
                argl[a] = (size_t)snprintf(offs[i], sizeof offs[i], "#%llu",
                                           (unsigned long long)w);
                argv[a] = offs[i], a++;
            }
            if (redisAppendCommandArgv(c, (int)a, argv, argl) != REDIS_OK)
                return -1;
        }
        for (size_t i = 0; i < calls; i++) {
            void *v = NULL;
            if (redisGetReply(c, &v) != REDIS_OK)
                return -1;
            redisReply *r = v;
            bool bad = r->type == REDIS_REPLY_ERROR;
            if (bad)
                fprintf(stderr, "bench_redis_seen: %s\n", r->str);
            else if (r->type == REDIS_REPLY_STRING)
                for (size_t e = 0; e < r->len; e++)
                    dups += r->str[e] == '0';
            freeReplyObject(r);
            if (bad)
                return -1;
        }
    }
    return dups;
}

/* The false-positive rate of the word layout at WORD_BITS_PER_KEY bits a
 * key, measured on a copy in memory: n random keys added, n others
 * queried. NAN when the words do not fit in memory. */
static double word_fpr(unsigned long long n)
{
    uint64_t words = (uint64_t)((double)n * WORD_BITS_PER_KEY / WORD_BITS);
    uint64_t *f = calloc(words ? words : 1, sizeof *f);
    if (!f)
        return NAN;
    uint64_t x = 2463534242u, mk;
    for (unsigned long long i = 0; i < n; i++) {
        uint64_t w = word_key(&x, words, &mk);
        f[w] |= mk;
    }
    unsigned long long fp = 0;
    for (unsigned long long i = 0; i < n; i++) {
        uint64_t w = word_key(&x, words, &mk);
        fp += (f[w] & mk) == mk;
    }
    free(f);
    return (double)fp / (double)n;
}

/* Run count random keys (blocks of a filter of `blocks` blocks, k bits)
 * through the script sha in calls of MADD_KEYS keys, pipelined a batch at
 * a time; block: the argument layout of lua_block_script (else that of
 * lua_getrange_script). Returns false on an error. */
static bool run_lua(redisContext *c, const char *sha, bool block,
                    uint64_t blocks, unsigned k, unsigned long long count)
{
    static char offs[2 * MADD_KEYS][24];
    static unsigned char pairs[MADD_KEYS * 2 * BC_BLOOM_MAX_K];
    static const char *argv[6 + 2 * MADD_KEYS];
    static size_t argl[6 + 2 * MADD_KEYS];
    static char kstr[8];
    uint64_t x = 88172645463325252u; /* xorshift64, a fixed sequence */
    snprintf(kstr, sizeof kstr, "%u", k);
    for (unsigned long long done = 0; done < count; done += BATCH) {
        size_t n = count - done < BATCH ? (size_t)(count - done) : BATCH;
        size_t calls = 0;
        for (size_t from = 0; from < n; from += MADD_KEYS, calls++) {
            size_t to = from + MADD_KEYS < n ? from + MADD_KEYS : n;
            size_t a = evalsha_head(argv, argl, sha);
            if (block) {
                argv[a] = (const char *)pairs, argl[a++] = (to - from) * 2 * k;
                argv[a] = kstr, argl[a++] = strlen(kstr);
            }
            for (size_t i = 0; i < to - from; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                uint64_t b = (x >> 20) % blocks;
                for (unsigned j = 0; j < k; j++) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    unsigned bit = (unsigned)(x >> 40) & 511;
                    pairs[(i * k + j) * 2] = (unsigned char)(bit >> 3);
                    pairs[(i * k + j) * 2 + 1] =
                        (unsigned char)(128u >> (bit & 7));
                }
                argl[a] = (size_t)snprintf(offs[2 * i], 24, "%llu",
                                           (unsigned long long)(b * 64));
                argv[a] = offs[2 * i], a++;
                argl[a] = (size_t)snprintf(offs[2 * i + 1], 24, "%llu",
                                           (unsigned long long)(b * 64 + 63));
                argv[a] = offs[2 * i + 1], a++;
            }
            if (redisAppendCommandArgv(c, (int)a, argv, argl) != REDIS_OK)
                return false;
        }
        for (size_t i = 0; i < calls; i++) {
            void *v = NULL;
            if (redisGetReply(c, &v) != REDIS_OK)
                return false;
            redisReply *r = v;
            bool bad = r->type == REDIS_REPLY_ERROR;
            if (bad)
                fprintf(stderr, "bench_redis_seen: %s\n", r->str);
            freeReplyObject(r);
            if (bad)
                return false;
        }
    }
    return true;
}

/* SCRIPT LOAD script: its SHA1 into sha[41]; false on an error. */
static bool load_script(redisContext *c, const char *script, char *sha)
{
    redisReply *r = redisCommand(c, "SCRIPT LOAD %s", script);
    bool ok = r && r->type == REDIS_REPLY_STRING && r->len == 40;
    if (ok)
        memcpy(sha, r->str, 41);
    else
        fprintf(stderr, "bench_redis_seen: SCRIPT LOAD: %s\n",
                r && r->str ? r->str : "no reply");
    freeReplyObject(r);
    return ok;
}

/* Load script, run it over count keys, print its rate and CPU per key. */
static bool probe_lua(redisContext *c, const char *sock, const char *name,
                      const char *script, bool block, uint64_t blocks,
                      unsigned k, unsigned long long count)
{
    char sha[41];
    if (!load_script(c, script, sha))
        return false;
    double s0 = bench_redis_cpu(sock), c0 = bench_cpu_self(), t0 = now();
    bool ok = run_lua(c, sha, block, blocks, k, count);
    double t1 = now(), s1 = bench_redis_cpu(sock), c1 = bench_cpu_self();
    if (ok)
        printf("probe %-22s %9.0f keys/s  cpu ns/key server %5.0f client "
               "%5.0f\n",
               name, (double)count / (t1 - t0), (s1 - s0) * 1e9 / (double)count,
               (c1 - c0) * 1e9 / (double)count);
    freeReplyObject(redisCommand(c, "DEL probe:0"));
    return ok;
}

/* One measured run: keys/s and CPU ns per key. */
struct sample {
    double per_s, server_ns, client_ns;
};

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum method { SEEN, SEEN_FEW, SADD, MADD, LUA, WORD, METHODS };
static char few_name[16] = "seen k=3"; /* with --few-k's K */
static const char *const method_name[METHODS] = {
    "bc_redis_seen", few_name,        "SADD",
    "BF.MADD",       "Lua per block", "Lua per word"};

int main(int argc, char **argv)
{
    unsigned long long n = 1000000;
    int port = 6390, rounds = -1; /* 5, or 3 with --full */
    bool tcp = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            n = 10000000;
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--few-k") == 0 && i + 1 < argc)
            few_k = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--tcp") == 0)
            tcp = true;
        else
            rounds = 0;
    }
    if (rounds == -1)
        rounds = n >= 10000000 ? 3 : 5;
    if (rounds < 1 || rounds > MAX_ROUNDS || n < 1 || few_k < 1 ||
        few_k > BC_BLOOM_MAX_K) {
        fprintf(stderr,
                "usage: [REDISBLOOM_SRC=dir] bench_redis_seen "
                "[--full | --n N] [--rounds 1..15] [--few-k 1..%u] [--tcp] "
                "[--port P]\n",
                BC_BLOOM_MAX_K);
        return 2;
    }
    snprintf(few_name, sizeof few_name, "seen k=%u", few_k);
    if (!bc_redis_server_available()) {
        fprintf(stderr, "bench_redis_seen: redis-server not installed\n");
        return 77;
    }
    struct bc_redis_server server;
    const char *rb_src = getenv("REDISBLOOM_SRC");
    char so[256] = "", so_dir[] = "/tmp/bc_redisbloom.XXXXXX";
    bool madd = false;
    if (rb_src && *rb_src) {
        if (mkdtemp(so_dir) && build_redisbloom(rb_src, so_dir, so, sizeof so))
            madd = true;
    } else {
        printf("# REDISBLOOM_SRC not set: the BF.MADD comparison is "
               "skipped\n");
    }
    fflush(stdout); /* before fork(): the child must not repeat it */
    bool up = madd ? start_with_module(&server, port, so)
                   : bc_redis_server_start(&server, port);
    if (so[0])
        remove(so); /* loaded (or not) by now */
    if (rb_src && *rb_src)
        remove(so_dir);
    if (!up)
        return 1;
    int rc = 1;
    char where[160];
    if (tcp)
        snprintf(where, sizeof where, "redis://127.0.0.1:%d", port);
    else
        snprintf(where, sizeof where, "%s", server.where);
    redisContext *c =
        tcp ? redisConnect("127.0.0.1", port) : redisConnectUnix(server.sock);
    struct bc_redis_seen *rs = NULL, *rs_few = NULL;
    enum bc_status st = bc_redis_seen_create(where, "bench", n, 0.01, 1, &rs);
    if (st == BC_OK)
        st = bc_redis_seen_connect(rs);
    if (st == BC_OK)
        st = bc_redis_seen_create_k(where, "few", n, 0.01, few_k, 1, &rs_few);
    if (st == BC_OK)
        st = bc_redis_seen_connect(rs_few);
    if (st != BC_OK || !c || c->err) {
        fprintf(stderr, "bench_redis_seen: %s: %s %s\n", bc_strerror(st),
                rs ? bc_redis_seen_errmsg(rs) : "",
                rs_few ? bc_redis_seen_errmsg(rs_few) : "");
        goto out_stop;
    }
    struct bc_bloom_sizing sz, few_sz;
    bc_redis_seen_sizing(rs, &sz);
    bc_redis_seen_sizing(rs_few, &few_sz);
    uint64_t few_m = few_sz.m_bits;
    printf("n=%llu p=0.01 m=%llu k=%u batch=%u chunk=%u transport=%s "
           "rounds=%d\n",
           n, (unsigned long long)sz.m_bits, sz.k, BATCH, BC_REDIS_SEEN_CHUNK,
           tcp ? "tcp 127.0.0.1" : "unix socket", rounds);
    printf("%s: m=%llu (%.2f bits a key, %.2fx bc_redis_seen's) "
           "fpr_predicted=%.6f\n",
           few_name, (unsigned long long)few_m, (double)few_m / (double)n,
           (double)few_m / (double)sz.m_bits, few_sz.fpr_predicted);
    uint64_t words = (uint64_t)((double)n * WORD_BITS_PER_KEY / WORD_BITS);
    if (words > (UINT64_C(1) << 32) / WORD_BITS)
        words = (UINT64_C(1) << 32) / WORD_BITS; /* one string */
    printf("Lua per word: %u-bit words, k=%u, %.2f bits a key (%.2fx "
           "bc_redis_seen's), %llu words\n",
           WORD_BITS, WORD_K, WORD_BITS_PER_KEY,
           WORD_BITS_PER_KEY * (double)n / (double)sz.m_bits,
           (unsigned long long)words);

    /* The Lua candidate: 10^6 keys at most (its cost per key does not
     * depend on n), in one string of the filter's blocks. */
    unsigned long long lua_n = n < 1000000 ? n : 1000000;
    uint64_t blocks = sz.m_bits / 512;
    if (blocks > BC_REDIS_SEEN_KEY_BLOCKS)
        blocks = BC_REDIS_SEEN_KEY_BLOCKS;
    char lua_sha[41], word_sha[41], word_read_sha[41];
    if (!load_script(c, lua_block_script, lua_sha) ||
        !load_script(c, lua_word_script, word_sha) ||
        !load_script(c, lua_word_read_script, word_read_sha) ||
        !probe_lua(c, server.sock, "GETRANGE per key (Lua)",
                   lua_getrange_script, false, blocks, sz.k, lua_n))
        goto out_stop;
    /* the words read from a string of the filter's size, as in the
     * candidate (an absent key would answer zeros without reading) */
    freeReplyObject(redisCommand(c, "SETBIT probe:0 %llu 0",
                                 (unsigned long long)(words * WORD_BITS - 1)));
    double w0 = bench_redis_cpu(server.sock), wc0 = bench_cpu_self();
    double wt0 = now();
    bool word_ok = run_word(c, word_read_sha, words, lua_n) >= 0;
    double wt1 = now();
    double w1 = bench_redis_cpu(server.sock), wc1 = bench_cpu_self();
    freeReplyObject(redisCommand(c, "DEL probe:0"));
    if (!word_ok)
        goto out_stop;
    printf("probe %-22s %9.0f keys/s  cpu ns/key server %5.0f client %5.0f\n",
           "BITFIELD_RO a call (Lua)", (double)lua_n / (wt1 - wt0),
           (w1 - w0) * 1e9 / (double)lua_n, (wc1 - wc0) * 1e9 / (double)lua_n);
    printf("(keys/s of the Lua candidates and probes: %llu keys a run)\n",
           lua_n);

    struct sample s[METHODS][MAX_ROUNDS];
    long long dup_in = 0;
    for (int r = 0; r < rounds; r++) {
        for (int x = 0; x < METHODS; x++) {
            /* alternate: forward on even rounds, backward on odd ones */
            enum method m = (enum method)(r % 2 ? METHODS - 1 - x : x);
            if (m == MADD && !madd)
                continue;
            if (m == MADD) {
                redisReply *rr = redisCommand(c, "BF.RESERVE bf 0.01 %llu", n);
                bool ok = rr && rr->type != REDIS_REPLY_ERROR;
                freeReplyObject(rr);
                if (!ok)
                    goto out_stop;
            }
            double s0 = bench_redis_cpu(server.sock), c0 = bench_cpu_self();
            double t0 = now();
            unsigned long long count = m == LUA || m == WORD ? lua_n : n;
            long long d = m == SEEN       ? run_seen(rs, 0, n, true)
                          : m == SEEN_FEW ? run_seen(rs_few, 0, n, true)
                          : m == SADD     ? run_sadd(c, "seen", n)
                          : m == MADD     ? run_madd(c, "bf", n)
                          : m == WORD     ? run_word(c, word_sha, words, lua_n)
                          : run_lua(c, lua_sha, true, blocks, sz.k, lua_n) ? 0
                                                                           : -1;
            double t1 = now();
            double s1 = bench_redis_cpu(server.sock), c1 = bench_cpu_self();
            if (d < 0)
                goto out_stop;
            s[m][r].per_s = (double)count / (t1 - t0);
            s[m][r].server_ns = (s1 - s0) * 1e9 / (double)count;
            s[m][r].client_ns = (c1 - c0) * 1e9 / (double)count;
            printf("round %d %-13s %9.0f keys/s  cpu ns/key server %5.0f "
                   "client %5.0f",
                   r + 1, method_name[m], s[m][r].per_s, s[m][r].server_ns,
                   s[m][r].client_ns);
            if (m != LUA)
                printf("  duplicates %lld", d);
            printf("\n");
            fflush(stdout);
            if (m == SEEN || m == SEEN_FEW) {
                if (m == SEEN)
                    dup_in = d;
                if (r + 1 < rounds &&
                    bc_redis_seen_clear(m == SEEN ? rs : rs_few) != BC_OK)
                    goto out_stop;
            } else {
                freeReplyObject(redisCommand(c, "DEL %s",
                                             m == SADD   ? "seen"
                                             : m == MADD ? "bf"
                                                         : "probe:0"));
            }
        }
    }
    double med[METHODS][3];
    for (int m = 0; m < METHODS; m++) {
        if (m == MADD && !madd)
            continue;
        double v[3][MAX_ROUNDS];
        for (int r = 0; r < rounds; r++) {
            v[0][r] = s[m][r].per_s;
            v[1][r] = s[m][r].server_ns;
            v[2][r] = s[m][r].client_ns;
        }
        for (int q = 0; q < 3; q++)
            med[m][q] = median(v[q], rounds);
        printf("median %-13s %9.0f keys/s  cpu ns/key server %5.0f client "
               "%5.0f  bc_redis_seen/this %.2fx keys/s\n",
               method_name[m], med[m][0], med[m][1], med[m][2],
               med[SEEN][0] / med[m][0]);
    }
    if (!madd)
        printf("BF.MADD: not measured (REDISBLOOM_SRC not given or not "
               "built)\n");

    double t2 = now();
    long long fp = run_seen(rs, n, n, false);
    double t3 = now();
    if (fp < 0)
        goto out_stop;
    double fpr = (double)fp / (double)n;
    printf("contains_per_s=%.0f\n", (double)n / (t3 - t2));
    printf("duplicates_among_new_keys=%lld\n", dup_in);
    printf("fpr_measured=%.6f fpr_predicted=%.6f ratio=%.4f (goal within "
           "5%%)\n",
           fpr, sz.fpr_predicted, fpr / sz.fpr_predicted);
    long long fp_few = run_seen(rs_few, n, n, false);
    if (fp_few < 0)
        goto out_stop;
    double few_pred = few_sz.fpr_predicted;
    printf("%s: fpr_measured=%.6f fpr_predicted=%.6f ratio=%.4f\n", few_name,
           (double)fp_few / (double)n, few_pred,
           (double)fp_few / (double)n / few_pred);
    printf("Lua per word: fpr_measured (in memory, n keys) = %.6f (p = 0.01 "
           "at %.2f bits a key)\n",
           word_fpr(n), WORD_BITS_PER_KEY);
    rc = 0;
out_stop:
    redisFree(c);
    bc_redis_seen_free(rs);
    bc_redis_seen_free(rs_few);
    bc_redis_server_stop(&server);
    return rc;
}
