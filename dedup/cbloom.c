/*
 * cbloom.c - the counting Bloom filter: a Bloom filter that can forget.
 *
 * The problem
 * -----------
 * A Bloom filter (bloom.c) cannot delete. Clearing a deleted key's k bits
 * would also clear bits that other keys share, and those keys would then be
 * reported absent: a false negative, the one error a Bloom filter must never
 * make. Some uses need deletion all the same: a cache summary that follows a
 * cache's contents, a set of URLs in flight, a window that forgets.
 *
 * The idea
 * --------
 * Fan, Cao, Almeida and Broder, "Summary Cache: A Scalable Wide-Area Web
 * Cache Sharing Protocol" (SIGCOMM 1998; IEEE/ACM Transactions on
 * Networking 8(3), 2000), replace each bit by a small counter. add
 * increments the key's k counters, remove decrements them, contains asks
 * whether all k are non-zero. A counter is the number of (key, probe) pairs
 * that landed on it, so removing an added key takes away exactly what its
 * add put there, and every other added key keeps its counters above zero.
 * Sizing, hashing and probe positions are the classic layout of bloom.c: m
 * counters, k probes from one XXH3-128 hash by enhanced double hashing
 * (bloom_int.h), so the false-positive rate is the classic
 * (1 - e^(-k n / m))^k with "counter non-zero" in place of "bit set".
 *
 * Why 4 bits suffice
 * ------------------
 * n keys make n k increments spread over m counters, so one counter's value
 * is Binomial(n k, 1/m), and
 *
 *     Pr(c >= j) <= C(n k, j) (1/m)^j <= (e n k / (j m))^j
 *
 * (C(N, j) <= (e N / j)^j). At the optimal k = (m / n) ln 2 this is
 * (e ln 2 / j)^j whatever n and m are, and over all m counters
 *
 *     Pr(some counter >= 16) <= m (e ln 2 / 16)^16 ~= 1.37e-15 m
 *     Pr(some counter >= 15) <= m (e ln 2 / 15)^15 ~= 3.06e-14 m
 *
 * so a 4-bit counter (0..15) is enough for any filter that fits in memory:
 * Fan et al.'s argument, with their 1.37e-15. The mean counter is only
 * k n / m = ln 2 ~= 0.69.
 *
 * Saturation: if a counter does reach 15 (a filter loaded far beyond its
 * n, or bad luck), it sticks there. Its true count may be 15 or more, and a
 * decrement could bring it to zero while added keys still rest on it - a
 * false negative. A stuck counter errs the safe way: it only keeps a "maybe"
 * that may have become stale (a slightly higher false-positive rate).
 *
 * The hazard of removal
 * ---------------------
 * Removing a key that was never added takes away increments that belong
 * to other keys, and can then make an added key absent. We refuse what can
 * be proven wrong: a key the filter reports absent (some counter is zero),
 * or one whose probes hit a counter more often than its value (a key with
 * a repeated position p added once leaves at least 2 on p). Refused removes
 * return BC_ERR_NOT_FOUND and change nothing. A false positive - a never
 * added key whose counters all happen to be high enough - cannot be told
 * from an added key and is removed, damaging the filter: remove only what
 * you added.
 *
 * The layout
 * ----------
 * Two counters per byte, counter i in byte i / 2, the low nibble for even
 * i and the high nibble for odd i; m counters take ceil(m / 2) = m / 2 +
 * (m & 1) bytes, 4 times the classic filter's bits for the same m:
 *
 *       byte 0      byte 1      byte 2
 *     +----+----+ +----+----+ +----+----+
 *     | c1 | c0 | | c3 | c2 | | c5 | c4 |  ...
 *     +----+----+ +----+----+ +----+----+
 *      7..4 3..0
 *
 * Example: n = 10^6, p = 1 % gives m = 9,585,059 counters and k = 7, so
 * 4,792,530 bytes (4.8 MB) against 1.2 MB for the classic filter. The
 * array is limited to BC_CBLOOM_MAX_COUNTERS counters, the same 256 GiB
 * bloom.h allows a bit array.
 *
 * File format (version 1; integers little-endian)
 * -----------
 *
 *     offset  size  field
 *          0     8  magic "BCCBLOOM"
 *          8     4  version = 1
 *         12     4  k
 *         16     8  m, counters
 *         24     8  seed
 *         32     8  n it was sized for
 *         40     8  keys (adds minus removes)
 *         48     8  array bytes A = ceil(m / 2)
 *         56     A  the counters, two per byte as above
 *     56 + A     8  XXH64 (seed 0) of every byte before it
 *
 * Saved atomically like bc_bloom_save (temporary, fsync, rename).
 *
 * Cost
 * ----
 * add, contains: k counter reads or updates (up to k cache misses) after
 * one XXH3-128 hash. remove: the same, twice, plus an O(k^2) count of
 * repeated positions only when a counter is below k. stats: one pass over
 * the array, 16 counters per 64-bit word.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

#include "bloom_int.h"
#include "bloomcrawl/bloom.h"
#include "bloomcrawl/cbloom.h"

_Static_assert(BC_CBLOOM_MAX_COUNTERS * 4 == BC_BLOOM_MAX_BITS,
               "the counter array has the bit array's memory cap");
_Static_assert(BC_CBLOOM_COUNTER_MAX == 15, "4-bit counters");

struct bc_cbloom {
    unsigned char *counters; /* bytes bytes, two counters each */
    uint64_t m;              /* counters */
    uint64_t bytes;          /* m / 2 rounded up */
    uint64_t n_expected;
    uint64_t seed;
    uint64_t keys; /* adds minus successful removes */
    unsigned k;
};

static unsigned counter_get(const unsigned char *counters, uint64_t i)
{
    unsigned byte = counters[i >> 1];
    return (i & 1) ? byte >> 4 : byte & 0x0Fu;
}

/* +1 unless saturated. */
static void counter_inc(unsigned char *counters, uint64_t i)
{
    if (counter_get(counters, i) < BC_CBLOOM_COUNTER_MAX)
        counters[i >> 1] += (i & 1) ? 0x10u : 0x01u;
}

/* -1 unless saturated or zero (the caller has checked it is not zero). */
static void counter_dec(unsigned char *counters, uint64_t i)
{
    unsigned c = counter_get(counters, i);
    if (c != 0 && c < BC_CBLOOM_COUNTER_MAX)
        counters[i >> 1] -= (i & 1) ? 0x10u : 0x01u;
}

static struct bc_hash128 key_hash(const struct bc_cbloom *cbloom,
                                  const void *key, size_t len)
{
    XXH128_hash_t h;
    struct bc_hash128 out;

    if (len == 0)
        key = "";
    h = XXH3_128bits_withSeed(key, len, cbloom->seed);
    out.lo = h.low64;
    out.hi = h.high64;
    return out;
}

/* The key's k counter positions. */
static void key_positions(const struct bc_cbloom *cbloom, const void *key,
                          size_t len, uint64_t pos[])
{
    struct bc_probe probe;

    bc_probe_init(&probe, key_hash(cbloom, key, len));
    for (unsigned i = 0; i < cbloom->k; i++)
        pos[i] = bc_probe_next(&probe, cbloom->m);
}

enum bc_status bc_cbloom_create_mk(uint64_t n, uint64_t m, unsigned k,
                                   uint64_t seed, struct bc_cbloom **out)
{
    struct bc_cbloom *cbloom;
    uint64_t bytes;
    enum bc_status status;

    if (out == NULL || n == 0 || m == 0 || k == 0 || k > BC_BLOOM_MAX_K)
        return BC_ERR_INVALID_ARG;
    if (m > BC_CBLOOM_MAX_COUNTERS)
        return BC_ERR_TOO_LARGE;
    bytes = m / 2 + (m & 1); /* (m + 1) / 2 without overflow */
#if SIZE_MAX < UINT64_MAX
    if (bytes > SIZE_MAX)
        return BC_ERR_TOO_LARGE;
#endif

    cbloom = malloc(sizeof(*cbloom));
    if (cbloom == NULL) {
        status = BC_ERR_NOMEM;
        goto out;
    }
    cbloom->counters = calloc((size_t)bytes, 1);
    if (cbloom->counters == NULL) {
        status = BC_ERR_NOMEM;
        goto out_free_cbloom;
    }
    cbloom->m = m;
    cbloom->bytes = bytes;
    cbloom->n_expected = n;
    cbloom->seed = seed;
    cbloom->keys = 0;
    cbloom->k = k;
    *out = cbloom;
    return BC_OK;

out_free_cbloom:
    free(cbloom);
out:
    return status;
}

enum bc_status bc_cbloom_create(uint64_t n, double p, uint64_t seed,
                                struct bc_cbloom **out)
{
    struct bc_bloom_sizing sizing;
    enum bc_status status;

    if (out == NULL)
        return BC_ERR_INVALID_ARG;
    status = bc_bloom_size(n, p, BC_BLOOM_CLASSIC, &sizing);
    if (status != BC_OK)
        return status;
    return bc_cbloom_create_mk(n, sizing.m_bits, sizing.k, seed, out);
}

void bc_cbloom_free(struct bc_cbloom *cbloom)
{
    if (cbloom == NULL)
        return;
    free(cbloom->counters);
    free(cbloom);
}

void bc_cbloom_add(struct bc_cbloom *cbloom, const void *key, size_t len)
{
    uint64_t pos[BC_BLOOM_MAX_K];

    if (cbloom == NULL || (key == NULL && len != 0))
        return;
    key_positions(cbloom, key, len, pos);
    for (unsigned i = 0; i < cbloom->k; i++)
        counter_inc(cbloom->counters, pos[i]);
    cbloom->keys++;
}

bool bc_cbloom_contains(const struct bc_cbloom *cbloom, const void *key,
                        size_t len)
{
    struct bc_probe probe;

    if (cbloom == NULL || (key == NULL && len != 0))
        return false;
    bc_probe_init(&probe, key_hash(cbloom, key, len));
    for (unsigned i = 0; i < cbloom->k; i++) {
        if (counter_get(cbloom->counters, bc_probe_next(&probe, cbloom->m)) ==
            0)
            return false;
    }
    return true;
}

/* Could the key have been added? Every counter it would decrement must hold
 * at least as many increments as the key's probes put on it. */
static bool removable(const struct bc_cbloom *cbloom, const uint64_t pos[])
{
    for (unsigned i = 0; i < cbloom->k; i++) {
        unsigned c = counter_get(cbloom->counters, pos[i]);
        unsigned times = 0;

        if (c == BC_CBLOOM_COUNTER_MAX || c >= cbloom->k)
            continue; /* stuck, or enough for any multiplicity */
        if (c == 0)
            return false;
        for (unsigned j = 0; j < cbloom->k; j++)
            times += pos[j] == pos[i];
        if (c < times)
            return false;
    }
    return true;
}

enum bc_status bc_cbloom_remove(struct bc_cbloom *cbloom, const void *key,
                                size_t len)
{
    uint64_t pos[BC_BLOOM_MAX_K];

    if (cbloom == NULL || (key == NULL && len != 0))
        return BC_ERR_INVALID_ARG;
    key_positions(cbloom, key, len, pos);
    if (!removable(cbloom, pos))
        return BC_ERR_NOT_FOUND;
    for (unsigned i = 0; i < cbloom->k; i++)
        counter_dec(cbloom->counters, pos[i]);
    if (cbloom->keys > 0)
        cbloom->keys--;
    return BC_OK;
}

#define NIBBLE_LOW_BITS UINT64_C(0x1111111111111111)

/* Counters of a 64-bit word that are non-zero, and that are 15. */
static void count_word(uint64_t w, uint64_t *nonzero, uint64_t *saturated)
{
    uint64_t any = w | (w >> 1);
    uint64_t all = w & (w >> 1);

    any |= any >> 2; /* bit 4t: some bit of nibble t is set */
    all &= all >> 2; /* bit 4t: every bit of nibble t is set */
    *nonzero += (uint64_t)__builtin_popcountll(any & NIBBLE_LOW_BITS);
    *saturated += (uint64_t)__builtin_popcountll(all & NIBBLE_LOW_BITS);
}

void bc_cbloom_stats(const struct bc_cbloom *cbloom,
                     struct bc_cbloom_stats *out)
{
    uint64_t nonzero = 0;
    uint64_t saturated = 0;
    uint64_t i;
    uint64_t w;

    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (cbloom == NULL)
        return;
    /* The unused high nibble of an odd m's last byte is always zero. */
    for (i = 0; i + 8 <= cbloom->bytes; i += 8) {
        memcpy(&w, cbloom->counters + i, 8);
        count_word(w, &nonzero, &saturated);
    }
    if (i < cbloom->bytes) {
        w = 0;
        memcpy(&w, cbloom->counters + i, (size_t)(cbloom->bytes - i));
        count_word(w, &nonzero, &saturated);
    }
    out->m = cbloom->m;
    out->k = cbloom->k;
    out->bytes = cbloom->bytes;
    out->n_expected = cbloom->n_expected;
    out->keys = cbloom->keys;
    out->nonzero = nonzero;
    out->saturated = saturated;
    out->fpr_estimated = pow((double)nonzero / (double)cbloom->m, cbloom->k);
}

/* ---- persistence (issue 14: the seen-test that forgets keeps it) ----- */

#define CB_MAGIC   "BCCBLOOM" /* 8 bytes, no NUL */
#define CB_VERSION 1u
#define CB_HEADER  56u
#define CB_TRAILER 8u

static void cb_put(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t cb_get(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static enum bc_status write_cbloom(int fd, const void *ctx)
{
    const struct bc_cbloom *c = ctx;
    unsigned char hdr[CB_HEADER] = {0}, trailer[CB_TRAILER];
    memcpy(hdr, CB_MAGIC, 8);
    cb_put(hdr + 8, CB_VERSION, 4);
    cb_put(hdr + 12, c->k, 4);
    cb_put(hdr + 16, c->m, 8);
    cb_put(hdr + 24, c->seed, 8);
    cb_put(hdr + 32, c->n_expected, 8);
    cb_put(hdr + 40, c->keys, 8);
    cb_put(hdr + 48, c->bytes, 8);
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    XXH64_update(&state, hdr, sizeof(hdr));
    XXH64_update(&state, c->counters, (size_t)c->bytes);
    cb_put(trailer, XXH64_digest(&state), 8);
    enum bc_status st = bc_write_all(fd, hdr, sizeof(hdr));
    if (st == BC_OK)
        st = bc_write_all(fd, c->counters, (size_t)c->bytes);
    if (st == BC_OK)
        st = bc_write_all(fd, trailer, sizeof(trailer));
    return st;
}

enum bc_status bc_cbloom_save(const struct bc_cbloom *cbloom, const char *path)
{
    if (cbloom == NULL || path == NULL)
        return BC_ERR_INVALID_ARG;
    return bc_save_atomic(path, write_cbloom, cbloom);
}

enum bc_status bc_cbloom_load_mem(const void *data, size_t len,
                                  struct bc_cbloom **out)
{
    if (data == NULL || out == NULL)
        return BC_ERR_INVALID_ARG;
    const unsigned char *p = data;
    if (len < 8)
        return memcmp(p, CB_MAGIC, len) == 0 ? BC_ERR_TRUNCATED : BC_ERR_FORMAT;
    if (memcmp(p, CB_MAGIC, 8) != 0)
        return BC_ERR_FORMAT;
    if (len < CB_HEADER + CB_TRAILER)
        return BC_ERR_TRUNCATED;
    if (cb_get(p + 8, 4) != CB_VERSION)
        return BC_ERR_VERSION;
    uint64_t bytes = cb_get(p + 48, 8);
    if (bytes > BC_CBLOOM_MAX_COUNTERS / 2)
        return BC_ERR_CORRUPT;
    if (len < CB_HEADER + bytes + CB_TRAILER)
        return BC_ERR_TRUNCATED;
    if (len > CB_HEADER + bytes + CB_TRAILER)
        return BC_ERR_CORRUPT;
    size_t body = CB_HEADER + (size_t)bytes;
    if (XXH64(p, body, 0) != cb_get(p + body, 8))
        return BC_ERR_CHECKSUM;
    uint64_t m = cb_get(p + 16, 8), n = cb_get(p + 32, 8);
    unsigned k = (unsigned)cb_get(p + 12, 4);
    if (m == 0 || m > BC_CBLOOM_MAX_COUNTERS || m / 2 + (m & 1) != bytes ||
        n == 0 || k == 0 || k > BC_BLOOM_MAX_K)
        return BC_ERR_CORRUPT;
    struct bc_cbloom *c;
    enum bc_status st = bc_cbloom_create_mk(n, m, k, cb_get(p + 24, 8), &c);
    if (st != BC_OK)
        return st;
    memcpy(c->counters, p + CB_HEADER, (size_t)bytes);
    c->keys = cb_get(p + 40, 8);
    *out = c;
    return BC_OK;
}

enum bc_status bc_cbloom_load(const char *path, struct bc_cbloom **out)
{
    if (!path || !out)
        return BC_ERR_INVALID_ARG;
    unsigned char *buf;
    size_t len;
    enum bc_status st = bc_read_file(
        path, BC_CBLOOM_MAX_COUNTERS / 2 + CB_HEADER + 64, &buf, &len);
    if (st != BC_OK)
        return st;
    st = bc_cbloom_load_mem(buf, len, out);
    free(buf);
    return st;
}
