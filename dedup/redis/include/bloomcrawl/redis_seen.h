/*
 * bloomcrawl/redis_seen.h - a seen-test shared in Redis, for crawlers that
 * cannot partition their URLs by host.
 *
 * A blocked Bloom filter (the BC_BLOOM_BLOCKED layout of bloom.h, sized by
 * bc_bloom_size()) whose bits live in Redis strings, so that any number of
 * processes on any number of machines test and add keys in one filter.
 * Test-and-add of a batch is one BITFIELD command per Redis string the
 * batch touches, of "SET u1 offset 1" operations whose replies are the old
 * bits: the server runs each command whole, so of several clients racing
 * on one key exactly one is told NEW - there is no check-then-set window.
 * Batches larger than BC_REDIS_SEEN_CHUNK keys are split into several
 * commands sent in one pipeline.
 *
 * THE LAYOUT (what another language must do to share the filter)
 *   parameters  m bits (a multiple of 512), k probes, a 64-bit seed, and a
 *               key prefix P; stored by the first client in the Redis
 *               string "P:meta" as
 *                 "bloomcrawl-redis-seen 1 m=<m> k=<k> seed=<seed> kb=<kb>"
 *               (decimal; kb = BC_REDIS_SEEN_KEY_BLOCKS).
 *   hash        (lo, hi) = XXH3-128 of the key bytes with the seed
 *               (low64, high64 of XXH3_128bits_withSeed).
 *   block       b = floor(lo * B / 2^64), B = m / 512 blocks.
 *   bit i       for i = 0 .. k-1: x_i = MUL^(i+1) hi + ADD (MUL^i + ... +
 *               MUL + 1) mod 2^64, i.e. the (i+1)-th state of the LCG
 *               x' = MUL x + ADD started at hi, MUL = 6364136223846793005,
 *               ADD = 1442695040888963407; the bit is x_i >> 55 (0..511).
 *   Redis key   "P:<j>" with j = floor(b / kb) in decimal.
 *   offset      (b mod kb) * 512 + bit, in the numbering of SETBIT and
 *               BITFIELD u1: offset o is bit 7 - (o mod 8) (0 = least
 *               significant) of byte floor(o / 8) of the string.
 * The same key and seed thus pick the same block and bits as an in-memory
 * BC_BLOOM_BLOCKED filter of the same m and k. A string holds kb blocks =
 * 2^29 bits (64 MiB), under Redis's limit of 2^32 bits per string, so a
 * filter of 10^9 keys at 1 % (1.2 GB) spans 19 strings.
 *
 * Errors: a call that fails returns a status and keeps the server's or
 * hiredis's text for bc_redis_seen_errmsg(). BC_ERR_REDIS_LOST means the
 * connection broke after a command may have been sent: some keys of that
 * batch may have been added without the caller learning it (they will
 * answer DUPLICATE from then on). The next call reconnects.
 *
 * Calls block until the server answers (hiredis's blocking API): with
 * no limit by default, or for at most the limit bc_redis_seen_set_timeout()
 * sets on each wait. Thread safety: one handle is one connection; use one
 * handle per thread.
 */
#ifndef BC_REDIS_REDIS_SEEN_H
#define BC_REDIS_REDIS_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 512-bit blocks per Redis string: 2^20 blocks = 2^29 bits = 64 MiB. */
#define BC_REDIS_SEEN_KEY_BLOCKS (UINT64_C(1) << 20)
/* Keys per BITFIELD command; larger batches are pipelined commands. */
#define BC_REDIS_SEEN_CHUNK 1024u
/* The longest timeout bc_redis_seen_set_timeout() takes: 366 days. */
#define BC_REDIS_SEEN_MAX_TIMEOUT_MS (UINT64_C(366) * 24 * 3600 * 1000)
/* The version in "P:meta". */
#define BC_REDIS_SEEN_VERSION 1u

/* The answers of test-and-add and contains, one per key. */
enum bc_redis_seen_answer {
    BC_REDIS_SEEN_DUPLICATE = 0, /* all k bits were set: seen (or a FP) */
    BC_REDIS_SEEN_NEW = 1        /* some bit was clear: never seen */
};

struct bc_redis_seen;

/*
 * Make a handle for the filter named prefix on the server at where; no I/O
 * (bc_redis_seen_connect() or the first query connects).
 * where: "unix:/path/to/socket" or "redis://host[:port][/db]" (port 6379,
 * db 0 by default), with a password as redis_conn.h says. The filter is sized by bc_bloom_size(n, p,
 * BC_BLOOM_BLOCKED) with the given seed. On success *out owns a handle
 * freed with bc_redis_seen_free(); on error *out is untouched. Errors:
 * BC_ERR_INVALID_ARG (NULL, empty prefix, a where of another form),
 * those of bc_bloom_size(), BC_ERR_NOMEM. Cost: the few ms of the sizing.
 */
enum bc_status bc_redis_seen_create(const char *where, const char *prefix,
                                    uint64_t n, double p, uint64_t seed,
                                    struct bc_redis_seen **out);

/*
 * The same with k probes a key and the m that gives rate p at that k
 * (bc_bloom_size_k(), blocked): fewer probes for more bits. The server's
 * time is about linear in the probes (4 BITFIELD arguments each), so where
 * Redis's CPU is scarcer than its memory a small k pays: at n = 10^7,
 * p = 1 %, k = 1 takes 99.5 bits a key (124 MB) against the default's 9.9
 * at k = 6, and about a quarter of its server CPU a key
 * (bench/results/redis_seen-analysis.md). Errors: those of
 * bc_redis_seen_create(), and BC_ERR_INVALID_ARG for k = 0 or
 * k > BC_BLOOM_MAX_K.
 */
enum bc_status bc_redis_seen_create_k(const char *where, const char *prefix,
                                      uint64_t n, double p, unsigned k,
                                      uint64_t seed,
                                      struct bc_redis_seen **out);

/* The same with explicit m (rounded up to whole blocks, at most
 * BC_BLOOM_MAX_BITS) and k (1 .. BC_BLOOM_MAX_K). Errors:
 * BC_ERR_INVALID_ARG (as bc_redis_seen_create(), or m or k out of those
 * ranges), BC_ERR_NOMEM. */
enum bc_status bc_redis_seen_create_mk(const char *where, const char *prefix,
                                       uint64_t m, unsigned k, uint64_t seed,
                                       struct bc_redis_seen **out);

/*
 * Connect (again, after a failure) and check the filter's parameters: the
 * first client records them in "prefix:meta" (SET NX), later ones must
 * find the same. Nothing else is allocated in Redis until keys are added.
 * A connected handle returns BC_OK at once. Errors: BC_ERR_INVALID_ARG
 * (NULL rs), BC_ERR_REDIS_CONNECT
 * (the server is unreachable: bc_redis_seen_errmsg() says why),
 * BC_ERR_REDIS_LOST, BC_ERR_REDIS_REPLY, BC_ERR_MISMATCH (a filter of
 * other parameters exists under that prefix), BC_ERR_NOMEM. Cost: one
 * connection and two round trips.
 */
enum bc_status bc_redis_seen_connect(struct bc_redis_seen *rs);

/*
 * Limit each wait on the server to timeout_ms (0: no limit, the default):
 * the connect, and every read or write of a command's bytes (so a call
 * that keeps getting bytes may take longer in all). A call that waits in
 * vain fails with BC_ERR_REDIS_LOST and bc_redis_seen_errmsg() "Redis did
 * not answer within <timeout_ms> ms" (a server stopped or overloaded); the
 * connection is dropped, since a late reply would be out of step, and as
 * for any BC_ERR_REDIS_LOST some keys of that batch may have been added.
 * Applies to the current connection at once (if hiredis cannot set it
 * there, the connection is dropped and the next call reconnects with it)
 * and to every later one. Errors: BC_ERR_INVALID_ARG (NULL rs, or
 * timeout_ms above BC_REDIS_SEEN_MAX_TIMEOUT_MS, which no wait needs:
 * hiredis refuses to connect past about 9 x 10^15 s, its milliseconds
 * must fit a long; the handle is left unchanged). O(1).
 */
enum bc_status bc_redis_seen_set_timeout(struct bc_redis_seen *rs,
                                         uint64_t timeout_ms);

/* Close the connection and free the handle; NULL is a no-op. Keys in
 * Redis stay. */
void bc_redis_seen_free(struct bc_redis_seen *rs);

/* The filter's sizing (m, k, predicted rate at the n it was created for;
 * n and the rates 0 for bc_redis_seen_create_mk). All zero for a NULL rs;
 * nothing is written for a NULL out. */
void bc_redis_seen_sizing(const struct bc_redis_seen *rs,
                          struct bc_bloom_sizing *out);

/*
 * Test-and-add count keys (keys[i] of lens[i] bytes) atomically per Redis
 * string: answers[i] is BC_REDIS_SEEN_NEW when key i had not been added
 * before, by anyone, nor earlier in this batch. One BITFIELD command per
 * string per BC_REDIS_SEEN_CHUNK keys, all pipelined, then one wait for
 * the replies. answers is written only on success. Errors:
 * BC_ERR_INVALID_ARG, BC_ERR_NOMEM, BC_ERR_REDIS_LOST (see the top of
 * this header), BC_ERR_TOO_LARGE (count * 16 bytes overflows),
 * BC_ERR_REDIS_REPLY (e.g. "P:0" holds a list; the commands
 * before the failing one may have added their keys), and those of
 * bc_redis_seen_connect() when not connected. Cost: O(count k)
 * bytes sent, count / BC_REDIS_SEEN_CHUNK commands, one round trip.
 */
enum bc_status bc_redis_seen_test_and_add(struct bc_redis_seen *rs,
                                          const void *const *keys,
                                          const size_t *lens, size_t count,
                                          enum bc_redis_seen_answer *answers);

/* Query only: answers[i] is BC_REDIS_SEEN_NEW when key i is certainly
 * absent. BITFIELD GET operations, otherwise as test_and_add. */
enum bc_status bc_redis_seen_contains(struct bc_redis_seen *rs,
                                      const void *const *keys,
                                      const size_t *lens, size_t count,
                                      enum bc_redis_seen_answer *answers);

/* Delete the filter's strings and its meta key from Redis (UNLINK). The
 * handle stays usable: the filter is empty. Errors as test_and_add. */
enum bc_status bc_redis_seen_clear(struct bc_redis_seen *rs);

/* The text of the last error on this handle (hiredis's or the server's),
 * "" when none; valid until the next call on the handle. */
const char *bc_redis_seen_errmsg(const struct bc_redis_seen *rs);

#ifdef __cplusplus
}
#endif

#endif /* BC_REDIS_REDIS_SEEN_H */
