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
 * Same sizing and probe positions as the classic layout of bloom.h: the
 * false-positive rate is the classic (1 - e^(-k n / m))^k. Keys are bytes
 * (any length, may contain NUL; key may be NULL when len is 0). A NULL
 * filter is treated as empty: contains returns false, add does nothing,
 * remove returns BC_ERR_INVALID_ARG. Not thread-safe. dedup/cbloom.c
 * explains why 4 bits suffice.
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
/* The most counters accepted: 2^39, i.e. 256 GiB, the memory cap of
 * bloom.h (BC_BLOOM_MAX_BITS / 4). */
#define BC_CBLOOM_MAX_COUNTERS (UINT64_C(1) << 39)

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

/*
 * Create an empty filter for n keys at rate p: m counters and k probes from
 * bc_bloom_size(n, p, BC_BLOOM_CLASSIC). On success *out owns the filter;
 * free it with bc_cbloom_free(). On error *out is untouched and nothing is
 * allocated. Errors: those of bc_bloom_size() (BC_ERR_INVALID_ARG for
 * n = 0, p outside (0, 1) or NaN, NULL out; BC_ERR_TOO_LARGE), those of
 * bc_cbloom_create_mk(). Cost: one zeroed allocation of (m + 1) / 2 bytes.
 */
enum bc_status bc_cbloom_create(uint64_t n, double p, uint64_t seed,
                                struct bc_cbloom **out);

/*
 * Create an empty filter of exactly m counters and k probes, meant for n
 * keys (recorded for the statistics). Errors: BC_ERR_INVALID_ARG (NULL out,
 * n, m or k zero, k > BC_BLOOM_MAX_K), BC_ERR_TOO_LARGE (m above
 * BC_CBLOOM_MAX_COUNTERS), BC_ERR_NOMEM; *out is untouched on error.
 */
enum bc_status bc_cbloom_create_mk(uint64_t n, uint64_t m, unsigned k,
                                   uint64_t seed, struct bc_cbloom **out);

/* Free; NULL is a no-op. */
void bc_cbloom_free(struct bc_cbloom *cbloom);

/* Add a key: increment its k counters (saturating at 15). Cost: one
 * XXH3-128 hash and k counter updates. */
void bc_cbloom_add(struct bc_cbloom *cbloom, const void *key, size_t len);

/* Does the filter say "maybe" for the key? false is certain. */
bool bc_cbloom_contains(const struct bc_cbloom *cbloom, const void *key,
                        size_t len);

/*
 * Remove a key: decrement its k counters, except saturated ones.
 * BC_ERR_NOT_FOUND (nothing changed) when the filter reports it absent, or
 * when one of its counters is lower than the number of its probes that land
 * there (it cannot have been added). BC_ERR_INVALID_ARG for a NULL filter
 * or a NULL key with len > 0.
 */
enum bc_status bc_cbloom_remove(struct bc_cbloom *cbloom, const void *key,
                                size_t len);

/* Fill *out. Cost: O(m). */
void bc_cbloom_stats(const struct bc_cbloom *cbloom,
                     struct bc_cbloom_stats *out);

/*
 * Save the filter to path atomically (as bc_bloom_save: temporary file,
 * fsync, rename, directory fsync). Format: see dedup/cbloom.c. Errors:
 * BC_ERR_INVALID_ARG (NULL filter or path, a path too long for its
 * temporary name), BC_ERR_IO (errno kept).
 */
enum bc_status bc_cbloom_save(const struct bc_cbloom *cbloom, const char *path);

/*
 * Load a filter saved by bc_cbloom_save(). Checks magic, version, header
 * consistency, size and the XXH64 checksum first: on error *out is
 * untouched and nothing stays allocated. Errors: BC_ERR_INVALID_ARG,
 * BC_ERR_IO, BC_ERR_FORMAT, BC_ERR_VERSION, BC_ERR_TRUNCATED,
 * BC_ERR_CORRUPT, BC_ERR_CHECKSUM, BC_ERR_NOMEM. Cost: the file is read
 * into memory whole first (2x its size at peak).
 */
enum bc_status bc_cbloom_load(const char *path, struct bc_cbloom **out);

/* The same from a file image in memory (len bytes at data). */
enum bc_status bc_cbloom_load_mem(const void *data, size_t len,
                                  struct bc_cbloom **out);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_CBLOOM_H */
