/*
 * bloomcrawl/lru.h - exact LRU cache of recent keys: tier 2 of the seen-test.
 *
 * A hash table (uthash) whose own list of its entries is kept in recency
 * order: a hit moves the key to the front, an insert beyond capacity
 * evicts the least recently used key. The cache owns copies of its keys. The caller passes each key's 64-bit hash
 * so that a key hashed once for the Bloom filter is not hashed again
 * (bc_lru_hash() gives one for callers without a filter). Equal keys must
 * always come with equal hashes.
 *
 * Capacity is in entries and, optionally, in bytes of key data. Capacity 0
 * stores nothing: every add is counted as an insert and an eviction at once.
 * Not thread-safe. dedup/lru.c explains the structure.
 *
 * Keys are bytes (any length, may contain NUL); key may be NULL when len is
 * 0. A NULL cache is treated as empty: the queries return false or 0, and
 * bc_lru_add() returns BC_ERR_INVALID_ARG.
 */
#ifndef BC_DEDUP_LRU_H
#define BC_DEDUP_LRU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bc_lru;

struct bc_lru_stats {
    size_t count;       /* keys held now */
    size_t capacity;    /* maximum keys */
    size_t key_bytes;   /* bytes of key data held now */
    size_t max_bytes;   /* maximum key bytes, 0 = no byte limit */
    uint64_t hits;      /* bc_lru_find() calls that found the key */
    uint64_t misses;    /* bc_lru_find() calls that did not */
    uint64_t inserts;   /* keys added that were not present */
    uint64_t evictions; /* keys evicted to make room */
    size_t bytes;       /* memory held: the slab (slab mode) or each
                         * entry's 56 + key length bytes (malloc's own
                         * headers not counted), plus 16 per bucket */
};

/*
 * Create an empty cache of at most capacity keys and, when max_bytes > 0,
 * at most max_bytes bytes of key data. Nothing but the handle is allocated
 * until keys are added. Errors: BC_ERR_INVALID_ARG (NULL out),
 * BC_ERR_TOO_LARGE (capacity above UINT_MAX - 1, uthash's item count),
 * BC_ERR_NOMEM. On success *out owns the cache; free it with bc_lru_free().
 */
enum bc_status bc_lru_create(size_t capacity, size_t max_bytes,
                             struct bc_lru **out);

/*
 * Create an empty cache as bc_lru_create() does, but with every entry
 * preallocated in one slab: capacity + 1 fixed-size slots, each holding a
 * key of at most key_max bytes inline, so that an insert allocates no entry and
 * an eviction frees none (uthash still allocates its table at the first
 * insert and whenever it doubles the buckets, which presized buckets make
 * rare). Keys are still whole keys, compared byte by
 * byte; a key longer than key_max can never be held and is counted as
 * inserted and evicted at once, like a key longer than max_bytes. Memory:
 * (capacity + 1) * (56 + key_max rounded up to 8) bytes on LP64, allocated
 * at once but not touched until used, plus the bucket array as in
 * bc_lru_create(). Errors: BC_ERR_INVALID_ARG (NULL out), BC_ERR_TOO_LARGE
 * (capacity above UINT_MAX - 1, key_max above UINT_MAX, or a slab larger
 * than SIZE_MAX), BC_ERR_NOMEM. Free with bc_lru_free().
 */
enum bc_status bc_lru_create_slab(size_t capacity, size_t key_max,
                                  size_t max_bytes, struct bc_lru **out);

/* Free the cache and every key it holds; NULL is a no-op. */
void bc_lru_free(struct bc_lru *lru);

/* A 64-bit hash of a key (XXH3-64, seed 0), for callers without one of
 * their own. Any well-mixed 64-bit hash works; equal keys need equal hashes.
 * A NULL key with len > 0 (no key) gives 0. */
uint64_t bc_lru_hash(const void *key, size_t len);

/*
 * Look the key up. On a hit, move it to the front (most recent) and count a
 * hit; else count a miss. O(1) expected.
 */
bool bc_lru_find(struct bc_lru *lru, const void *key, size_t len,
                 uint64_t hash);

/* Is the key held? Changes nothing (no recency, no counters). */
bool bc_lru_contains(const struct bc_lru *lru, const void *key, size_t len,
                     uint64_t hash);

/*
 * Add a copy of the key at the front, evicting from the back while the
 * cache is over capacity (entries or bytes). A key already held is moved
 * to the front (no counter changes). A key that can never be held - any
 * key at capacity 0, a key longer than max_bytes, or longer than UINT_MAX
 * bytes - is counted as inserted and evicted at once, so the eviction count
 * stays true. O(1) expected, one allocation per key inserted (none for a
 * cache made by bc_lru_create_slab()).
 * Errors: BC_ERR_INVALID_ARG (NULL cache, or NULL key with len > 0),
 * BC_ERR_NOMEM (nothing changed: no key lost, no counter moved).
 */
enum bc_status bc_lru_add(struct bc_lru *lru, const void *key, size_t len,
                          uint64_t hash);

/*
 * Add a key the caller knows is not held - it just missed bc_lru_find(), or
 * a Bloom filter that every held key went through says it was never added
 * - without looking it up first: bc_lru_add() minus one hash-table lookup
 * (two cache misses on a big cache). Pushing a key that is held would hold
 * it twice: don't. Otherwise exactly as bc_lru_add(), errors included.
 */
enum bc_status bc_lru_push(struct bc_lru *lru, const void *key, size_t len,
                           uint64_t hash);

/* Start loading the hash bucket a key with this hash lives in, ahead of a
 * bc_lru_find() or bc_lru_add() of it: for callers that pipeline many keys.
 * Changes nothing. */
void bc_lru_prefetch(const struct bc_lru *lru, uint64_t hash);

/* Remove the key if held; returns whether it was. Not counted as an
 * eviction; no other counter changes. O(1) expected. */
bool bc_lru_remove(struct bc_lru *lru, const void *key, size_t len,
                   uint64_t hash);

/* Keys held now. O(1). */
size_t bc_lru_count(const struct bc_lru *lru);

/* Fill *out with the counters. O(1). */
void bc_lru_stats(const struct bc_lru *lru, struct bc_lru_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_LRU_H */
