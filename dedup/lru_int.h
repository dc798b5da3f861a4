/*
 * lru_int.h - the LRU's hash-table sizing, for tests. Private to dedup
 * (never installed).
 *
 * A cache's table is created by its first insert (and again after it was
 * emptied) with two buckets per entry of capacity, rounded up to a power
 * of two and clamped to 2^5 .. 2^24:
 *
 *     buckets = min(2^24, max(2^5, 2^ceil(log2(2 capacity))))
 *
 * so a full cache of 16 to 2^23 entries holds more than 1/4 and at most 1/2
 * an entry per bucket (2 capacity <= buckets < 4 capacity). uthash then
 * doubles the buckets only when a chain reaches 10 entries, which a
 * well-mixed hash at that load practically never does.
 */
#ifndef BC_DEDUP_LRU_INT_H
#define BC_DEDUP_LRU_INT_H

#include <stddef.h>

#include "bloomcrawl/lru.h"

/* The smallest and largest number of buckets a table starts with. */
#define BC_LRU_MIN_BUCKETS_LOG2 5
#define BC_LRU_MAX_BUCKETS_LOG2 24

/* Buckets a new table of this cache starts with (the formula above);
 * 0 for a NULL cache. O(1). */
size_t bc_lru_initial_buckets(const struct bc_lru *lru);

/* Buckets of the cache's table now: 0 while it has no table (nothing
 * held) or for a NULL cache. O(1). */
size_t bc_lru_buckets(const struct bc_lru *lru);

/* The second stage after bc_lru_prefetch(): read the bucket of this hash
 * (fetched earlier) and start loading the first entry of its chain, which
 * a lookup compares and an insert relinks. Changes nothing. O(1); the
 * bucket's cache miss if it was not fetched before. */
void bc_lru_prefetch_chain(const struct bc_lru *lru, uint64_t hash);

#endif /* BC_DEDUP_LRU_INT_H */
