/*
 * bloomcrawl/cbloom.h - counting Bloom filter: a Bloom filter that can
 * forget.
 *
 * Each of the m positions is a 4-bit counter instead of a bit (4x the memory
 * of a classic filter of the same m). add increments the key's k counters,
 * remove decrements them, contains asks whether all k are non-zero. A
 * counter that reaches 15 sticks there and is never decremented: a
 * saturated counter no longer knows its true count, and decrementing it
 * could create a false negative. Removing a key the filter reports absent
 * is refused (BC_ERR_NOT_FOUND) and changes nothing. Removing a key that
 * was never added but is a false positive damages the filter, as in every
 * counting Bloom filter: remove only what you added.
 *
 * Same sizing and probe positions as the classic layout of bloom.h.
 * Not thread-safe.
 */
#ifndef BC_DEDUP_CBLOOM_H
#define BC_DEDUP_CBLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The value at which a counter sticks. */
#define BC_CBLOOM_COUNTER_MAX 15u

struct bc_cbloom;

struct bc_cbloom_stats {
    uint64_t m;           /* counters */
    unsigned k;           /* probes per key */
    uint64_t bytes;       /* memory of the counter array (m / 2 rounded up) */
    uint64_t n_expected;  /* the n it was sized for */
    uint64_t keys;        /* adds minus successful removes */
    uint64_t nonzero;     /* counters above zero */
    uint64_t saturated;   /* counters stuck at 15 */
    double fpr_estimated; /* (nonzero / m)^k */
};

/* Create an empty filter for n keys at rate p (classic sizing of bloom.h).
 * Errors: those of bc_bloom_size(), BC_ERR_NOMEM. */
enum bc_status bc_cbloom_create(uint64_t n, double p, uint64_t seed,
                                struct bc_cbloom **out);

/* Create an empty filter of exactly m counters and k probes. */
enum bc_status bc_cbloom_create_mk(uint64_t n, uint64_t m, unsigned k,
                                   uint64_t seed, struct bc_cbloom **out);

/* Free; NULL is a no-op. */
void bc_cbloom_free(struct bc_cbloom *cbloom);

/* Add a key: increment its k counters (saturating at 15). */
void bc_cbloom_add(struct bc_cbloom *cbloom, const void *key, size_t len);

/* Does the filter say "maybe" for the key? false is certain. */
bool bc_cbloom_contains(const struct bc_cbloom *cbloom, const void *key,
                        size_t len);

/* Remove a key: decrement its k counters, except saturated ones.
 * BC_ERR_NOT_FOUND (nothing changed) when the filter reports it absent. */
enum bc_status bc_cbloom_remove(struct bc_cbloom *cbloom, const void *key,
                                size_t len);

/* Fill *out. Cost: O(m). */
void bc_cbloom_stats(const struct bc_cbloom *cbloom,
                     struct bc_cbloom_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_CBLOOM_H */
