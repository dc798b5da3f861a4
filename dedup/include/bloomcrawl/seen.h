/*
 * bloomcrawl/seen.h - the two-tier URL-seen test.
 *
 * Tier 1 is a Bloom filter (bloom.h): compact, never forgets, sometimes
 * says "maybe" for a key it never saw. Tier 2 is an exact LRU of recent
 * keys (lru.h). Each key is hashed once (XXH3-128) for both tiers, and
 * the LRU keeps that 128-bit hash as the key's fingerprint, not the key:
 * verdicts are exact up to a 2^-128 chance per pair of keys (seen.c).
 * bc_seen_test_and_add() gives one of three verdicts:
 *
 *   NEW            the filter had a zero bit: never added. Fetch it.
 *   DUPLICATE      the filter says maybe and the LRU holds the key: an
 *                  exact, recent repeat. Skip it (the LRU entry is refreshed).
 *   PROBABLY_SEEN  the filter says maybe, the LRU does not hold the key:
 *                  an old key or a false positive. Skipped by default.
 *
 * The complete-LRU rule: while the LRU has never evicted, and the filter
 * holds nothing that did not also go into the LRU (nothing loaded from a
 * file), the LRU holds every key ever added. A filter "maybe" that misses
 * the LRU is then a proven false positive: the verdict is NEW, counted as a
 * false positive caught. The test is exact while it fits and degrades to
 * Bloom semantics only when it must. A PROBABLY_SEEN key is not put into
 * the LRU, so a later DUPLICATE is always exact.
 *
 * Tier 1 is one of five kinds, one value of enum bc_seen_kind (below):
 *   - a Bloom filter, classic or blocked (the default): never forgets;
 *   - a counting filter (cbloom.h, 4x the memory of a classic filter):
 *     bc_seen_forget() works;
 *   - a window filter (window.h), count or time: NEW means "not inserted
 *     within the window" (certain); DUPLICATE and PROBABLY_SEEN mean the
 *     window filter says "within the window". A key older than the window
 *     is NEW again (it is then put back into the window and refreshed in
 *     the LRU). The LRU holds no ages: a key the LRU holds whose window
 *     passed is DUPLICATE only when the window filter errs, i.e. at its
 *     false-positive rate, as for any key. Time windows read the clock
 *     set by bc_seen_set_clock().
 * The verdicts above are the same rule over every kind. The batch call
 * fetches ahead the Bloom or window filter's block of the keys further
 * down the batch; a counting filter hashes the key itself, so over it the
 * batch fetches ahead only the LRU's buckets (the same verdicts).
 *
 * Keys are bytes; the frontier passes canonical URLs. key may be NULL when
 * len is 0 (the empty key); a NULL key with len > 0 is BC_ERR_INVALID_ARG.
 * Not thread-safe.
 */
#ifndef BC_DEDUP_SEEN_H
#define BC_DEDUP_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/cbloom.h"
#include "bloomcrawl/counter.h"
#include "bloomcrawl/lru.h"
#include "bloomcrawl/status.h"
#include "bloomcrawl/window.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The verdicts, X(NAME, "NAME") in the order of their values from 0: the
 * enum and bc_seen_verdict_name() are made from this one list. */
#define BC_SEEN_VERDICT_LIST(X)                                                \
    X(BC_SEEN_NEW, "NEW")                                                      \
    X(BC_SEEN_DUPLICATE, "DUPLICATE")                                          \
    X(BC_SEEN_PROBABLY_SEEN, "PROBABLY_SEEN")

#define BC_SEEN_VERDICT_ENUM_(name, text) name,
enum bc_seen_verdict { BC_SEEN_VERDICT_LIST(BC_SEEN_VERDICT_ENUM_) };
#undef BC_SEEN_VERDICT_ENUM_

/* The verdict's name: "NEW", "DUPLICATE" or "PROBABLY_SEEN"; "UNKNOWN"
 * for a value outside the enum. Static storage, never NULL. */
const char *bc_seen_verdict_name(enum bc_seen_verdict verdict);

/*
 * Tier 1's kind: one value, so a combination that cannot work (a counting
 * filter over a window) cannot be written. A window forgets on its own;
 * only the counting filter forgets on request.
 */
enum bc_seen_kind {
    BC_SEEN_BLOOM_CLASSIC = 0, /* Bloom filter, k probes over the array */
    BC_SEEN_BLOOM_BLOCKED = 1, /* Bloom filter, k probes in one 512-bit
                                  block (bloom.h); the default */
    BC_SEEN_COUNTING = 2,      /* counting filter (cbloom.h): forget works */
    BC_SEEN_WINDOW_COUNT = 3,  /* window filter of the last W insertions */
    BC_SEEN_WINDOW_TIME = 4    /* window filter of the last T clock units */
};

/* The kind's name: "bloom-classic", "bloom-blocked", "counting",
 * "window-count" or "window-time"; "unknown" for a value outside the
 * enum. Static storage, never NULL. */
const char *bc_seen_kind_name(enum bc_seen_kind kind);

/* Defaults of struct bc_seen_config. */
#define BC_SEEN_DEFAULT_EXPECTED 1000000u
#define BC_SEEN_DEFAULT_FP_RATE  0.01
#define BC_SEEN_DEFAULT_LRU      50000u /* Broder et al.: ~80 % hit rate */

struct bc_seen_config {
    enum bc_seen_kind kind; /* tier 1; BC_SEEN_BLOOM_BLOCKED by default */
    uint64_t expected;      /* n tier 1 is sized for (a time window: keys
                               within any window, see window.h; a count
                               window: unused, its capacity is window) */
    double fp_rate;         /* tier 1's target false-positive rate */
    uint64_t seed;          /* hash seed */
    size_t lru_capacity;    /* LRU entries (0: no tier 2) */
    size_t lru_max_bytes;   /* LRU key bytes, 0 = no byte limit; the
                             * LRU holds a 16-byte fingerprint per
                             * key, so at most lru_max_bytes / 16 */
    /* Used by BC_SEEN_WINDOW_COUNT and BC_SEEN_WINDOW_TIME only: */
    uint64_t window;              /* COUNT: W insertions; TIME: T clock
                                     units, for expected keys per T */
    unsigned window_generations;  /* G of window.h; 0: its default 4 */
    unsigned window_segment_bits; /* S of window.h; 0: its default 256 */
};

/* Fill *config with the defaults above. A NULL config is a no-op. */
void bc_seen_config_init(struct bc_seen_config *config);

struct bc_seen;

/*
 * Create an empty seen-test whose tier 1 is of config->kind: a Bloom
 * filter of that layout or a counting filter, each sized for expected
 * keys at fp_rate; or a window filter (COUNT: the last window
 * insertions; TIME: the last window clock units, for expected keys within
 * any window, spread over it as window.h says; both at fp_rate). A time
 * window starts at clock 0 (see bc_seen_set_clock). Errors:
 * BC_ERR_INVALID_ARG (NULL, or bad sizing, or a kind outside its enum),
 * BC_ERR_TOO_LARGE, BC_ERR_NOMEM; *out is untouched on error. Free with
 * bc_seen_free().
 */
enum bc_status bc_seen_create(const struct bc_seen_config *config,
                              struct bc_seen **out);

/*
 * Create a seen-test whose tier 1 is loaded from path (saved by
 * bc_seen_save): a Bloom, window or counting filter, whichever the file
 * holds (its kind, and a window's size and clock, come from the file; see
 * bc_seen_stats() and bc_seen_window()). config gives the LRU settings
 * (its kind, sizing and window fields are ignored). The LRU starts empty
 * and is never "complete". Errors: BC_ERR_INVALID_ARG (NULL path, config
 * or out), those of bc_bloom_load(), bc_window_load() and
 * bc_cbloom_load(), BC_ERR_NOMEM; *out is untouched on error.
 */
enum bc_status bc_seen_load(const char *path,
                            const struct bc_seen_config *config,
                            struct bc_seen **out);

/* Save tier 1 (atomically, see bc_bloom_save, bc_window_save and
 * bc_cbloom_save). The LRU is a cache and is not saved. Errors:
 * BC_ERR_INVALID_ARG (NULL seen or path, a path too long), BC_ERR_IO. */
enum bc_status bc_seen_save(const struct bc_seen *seen, const char *path);

/* Free; NULL is a no-op. */
void bc_seen_free(struct bc_seen *seen);

/*
 * The seen-test: classify the key and remember it. Writes *verdict.
 * Errors: BC_ERR_INVALID_ARG (NULL), BC_ERR_NOMEM (the LRU could not
 * store the key's fingerprint - its slab is preallocated, so only when its
 * hash table cannot be allocated or grown; the verdict is still written
 * and the Bloom filter updated, but the LRU stops being complete).
 */
enum bc_status bc_seen_test_and_add(struct bc_seen *seen, const void *key,
                                    size_t len, enum bc_seen_verdict *verdict);

/*
 * bc_seen_test_and_add() for count keys (keys[i], lens[i]) in order,
 * writing verdicts[i]: the same verdicts as count single calls, but the
 * memory of keys further down the batch (their Bloom block and LRU bucket)
 * is fetched while the current key is tested, so the cache misses of
 * several keys overlap. Errors as bc_seen_test_and_add(): BC_ERR_NOMEM
 * (every verdict is still written), BC_ERR_INVALID_ARG (NULL seen; NULL
 * keys, lens or verdicts with count > 0; a NULL key with a length: checked
 * before any key is tested, nothing changed). count 0 is BC_OK.
 */
enum bc_status bc_seen_test_and_add_batch(struct bc_seen *seen,
                                          const char *const *keys,
                                          const size_t *lens, size_t count,
                                          enum bc_seen_verdict *verdicts);

/*
 * The verdict bc_seen_test_and_add() would give now, changing nothing (no
 * insert, no LRU refresh, no counters): for dry runs. Writes *verdict
 * only on success. Errors: BC_ERR_INVALID_ARG (NULL seen or verdict, or a
 * NULL key with len > 0). Cost: one hash, one filter query, one LRU
 * lookup.
 */
enum bc_status bc_seen_peek(const struct bc_seen *seen, const void *key,
                            size_t len, enum bc_seen_verdict *verdict);

struct bc_seen_stats {
    uint64_t tested;         /* test_and_add calls */
    uint64_t verdict_new;    /* NEW, including false positives caught */
    uint64_t duplicate;      /* DUPLICATE */
    uint64_t probably_seen;  /* PROBABLY_SEEN */
    uint64_t fp_caught;      /* tier 1 "maybe" proven wrong by a complete LRU */
    bool lru_complete;       /* the complete-LRU rule holds now */
    struct bc_lru_stats lru; /* tier 2 counters */
    enum bc_seen_kind kind;  /* tier 1's; of the three below, only its
                                own are filled, the others all zero */
    struct bc_bloom_stats bloom;   /* a Bloom filter's, O(m): a popcount */
    struct bc_window_stats window; /* a window filter's, at the clock */
    struct bc_cbloom_stats cbloom; /* a counting filter's, O(m) */
    uint64_t forgotten;            /* keys forgotten by bc_seen_forget */
};

/* Fill *out (all zero for a NULL seen; nothing for a NULL out). Cost: O(m)
 * for a Bloom or counting filter's popcount, O(G) for a window's. */
void bc_seen_stats(const struct bc_seen *seen, struct bc_seen_stats *out);

/* The table of the counters above (bloomcrawl/counter.h), a row per
 * field but the tier 1 kind and the hash seed (configuration), in a
 * static array: its length in *n (n may be NULL). O(1). */
const struct bc_counter *bc_seen_counter_table(size_t *n);

/* The Bloom filter inside, for introspection (owned by seen); NULL when
 * tier 1 is a window or counting filter, or seen is NULL. */
const struct bc_bloom *bc_seen_bloom(const struct bc_seen *seen);

/* The window filter inside (owned by seen), or NULL when there is none
 * (or seen is NULL). */
const struct bc_window *bc_seen_window(const struct bc_seen *seen);

/*
 * Set the clock that a time window reads (the caller's time, e.g. ms since
 * the epoch; it never goes back: a smaller value is taken as the largest
 * seen). Every later call uses it. No effect on other kinds, nor on a NULL
 * seen. O(1).
 */
void bc_seen_set_clock(struct bc_seen *seen, uint64_t now);

/*
 * Forget a key: afterwards it is NEW again. Removes it from the LRU and,
 * on a counting filter, from the filter. A key the filter reports absent,
 * or (complete LRU) that was never added, gives BC_ERR_NOT_FOUND and
 * changes nothing. Forgetting a key that was never added but that the
 * filter and an incomplete LRU cannot tell from an added one damages the
 * counting filter (see cbloom.h): forget only what you added. On a Bloom
 * or window filter: BC_ERR_UNSUPPORTED, nothing changed. NULL seen or key
 * (with len > 0): BC_ERR_INVALID_ARG. Cost: one hash, k counters.
 */
enum bc_status bc_seen_forget(struct bc_seen *seen, const void *key,
                              size_t len);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_SEEN_H */
