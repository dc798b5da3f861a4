/*
 * bloomcrawl/window.h - a Bloom filter over a sliding window: a seen-test
 * that forgets.
 *
 * A plain Bloom filter only fills: after n inserts its false-positive rate
 * climbs without bound. A window filter answers "was this key inserted
 * within the window?", where the window is either
 *
 *   BC_WINDOW_COUNT  the last W insertions, or
 *   BC_WINDOW_TIME   the last T units of the caller's clock (the caller
 *                    passes "now" to every call, as the frontier does;
 *                    milliseconds in the crawler),
 *
 * with two promises:
 *   - no false negative inside the window: a key inserted at most W
 *     insertions ago (count) or at most T ago (time) is always found;
 *   - a false-positive rate at or below the target p at every moment (time
 *     windows: while no generation, the span of d = ceil(T/(G-1)) clock
 *     units from a multiple of d, holds more than g = ceil(capacity/(G-1))
 *     keys - capacity keys spread evenly over T; capacity keys at one
 *     moment put G-1 times g into one generation and the rate far above
 *     p; the statistics show the rate predicted from the real counts).
 * A key older than the window is forgotten after a slack of at most one
 * generation: it is gone once G generations old, i.e. at an age of G g
 * insertions (g = ceil(W/(G-1))) or G d clock units (d = ceil(T/(G-1))).
 *
 * It is a generation-partitioned blocked filter: G generations of one
 * S-bit segment in every block, a key's segments side by side in
 * G * S / 8 bytes (2 cache lines for the default G = 4, S = 256; one
 * with S = 128). dedup/window.c
 * teaches the design, the sizing and the rate formula.
 *
 * test-and-add inserts only keys it finds new: a key seen again inside the
 * window is not refreshed, so it is forgotten W (or T) after its first
 * insertion - what a recrawl schedule needs. bc_window_add() always
 * inserts (refreshes).
 *
 * Keys are bytes (any length, may contain NUL; NULL with len 0 is the empty
 * key). A NULL filter, or a NULL key with len > 0, is no filter and no key,
 * not a crash: the queries and test-and-add answer false and nothing is
 * added, bc_window_hash() gives the zero hash, the batch calls write false
 * (and nothing at all when hashes or the output array is NULL), the
 * statistics are all zero, add, advance and prefetch do nothing. Not
 * thread-safe. Time never goes backwards: a "now" below the
 * largest one seen is taken as that largest one.
 */
#ifndef BC_DEDUP_WINDOW_H
#define BC_DEDUP_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/bloom.h"
#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bc_window_kind { BC_WINDOW_COUNT = 0, BC_WINDOW_TIME = 1 };

/* Bits of one generation's segment in a block: 256 by default; 128 is
 * the other choice (G = 4 then fits one 64-byte cache line, for about 2
 * more bits per key). */
#define BC_WINDOW_SEGMENT_BITS 256u
/* Generations: at least 2, at most 16; 4 by default (slack 1/3). */
#define BC_WINDOW_MIN_GENERATIONS     2u
#define BC_WINDOW_MAX_GENERATIONS     16u
#define BC_WINDOW_DEFAULT_GENERATIONS 4u
/* The largest k the sizing considers. */
#define BC_WINDOW_MAX_K 16u

struct bc_window_config {
    enum bc_window_kind kind;
    uint64_t window;       /* count: W insertions; time: T clock units */
    uint64_t capacity;     /* time: keys inserted within any T, at most
                             capacity/(G-1) of them within one
                             generation of T/(G-1) (see above);
                             count: ignored (the capacity is W) */
    double p;              /* target false-positive rate, in (0, 1) */
    unsigned generations;  /* G, 2..16 */
    unsigned segment_bits; /* S, 256 or 128; 0: BC_WINDOW_SEGMENT_BITS */
    uint64_t seed;         /* hash seed */
};

/* Fill *config: count window of 1,000,000, p = 1 %, G = 4, S = 256,
 * seed 0. A NULL config is a no-op. */
void bc_window_config_init(struct bc_window_config *config);

/* The sizing of a window filter (bc_window_size). */
struct bc_window_sizing {
    uint64_t capacity;     /* keys in the window it is sized for */
    double p;              /* the target */
    unsigned generations;  /* G */
    unsigned segment_bits; /* S */
    unsigned k;            /* probes per key, all in one segment */
    uint64_t gen_keys;     /* g = ceil(capacity / (G - 1)) keys/generation */
    uint64_t blocks;       /* B, each of G segments of S bits */
    uint64_t bytes;        /* memory of the array: B * G * S / 8 */
    double bits_per_key;   /* 8 * bytes / capacity */
    double fpr_peak;       /* predicted rate with every generation full */
};

/*
 * Size a window filter for capacity keys in the window at rate p with G
 * generations of S-bit segments (0: BC_WINDOW_SEGMENT_BITS): the least B
 * (at the best k), rounded up to whole cache lines, whose rate with all G
 * generations holding g keys is at most p (see dedup/window.c).
 * Errors: BC_ERR_INVALID_ARG (NULL out, capacity 0, p outside (0, 1),
 * G outside 2..16, S not 128 or 256); BC_ERR_TOO_LARGE (array above
 * BC_BLOOM_MAX_BITS). Cost: a few milliseconds (an occupancy table per k).
 */
enum bc_status bc_window_size(uint64_t capacity, double p, unsigned generations,
                              unsigned segment_bits,
                              struct bc_window_sizing *out);

/*
 * The false-positive rate of one generation's S-bit segments that hold
 * keys spread over blocks blocks, with k probes: the mean over the number
 * i of keys in the query's block (binomial, keys and 1/blocks) of
 * E[(X/S)^k], X the distinct bits that k i uniform probes set in S bits.
 * Returns NaN for k outside 1..BC_WINDOW_MAX_K, blocks 0, or S not 128 or
 * 256.
 */
double bc_window_fpr_segment(double keys, double blocks, unsigned k,
                             unsigned segment_bits);

struct bc_window;

/*
 * Create an empty window filter; now is the caller's clock (time windows;
 * ignored by count windows). On success *out owns it; free with
 * bc_window_free(). Errors: BC_ERR_INVALID_ARG (NULL config or out,
 * window 0, a kind outside its enum), those of bc_window_size(),
 * BC_ERR_NOMEM; *out untouched on error.
 */
enum bc_status bc_window_create(const struct bc_window_config *config,
                                uint64_t now, struct bc_window **out);

/* Free; NULL is a no-op. */
void bc_window_free(struct bc_window *window);

/* The hash of a key as this filter computes it (XXH3-128, its seed). */
struct bc_hash128 bc_window_hash(const struct bc_window *window,
                                 const void *key, size_t len);

/*
 * Is the key in the window at time now? Never false for a key inserted
 * within the window; true at rate <= p for others. Changes nothing.
 * Cost: one hash and G segment tests in one block of G * S / 8 bytes (2
 * cache lines at G = 4, S = 256).
 */
bool bc_window_contains(const struct bc_window *window, const void *key,
                        size_t len, uint64_t now);

/*
 * Insert the key unless it is in the window; return true when it was new
 * (then it is inserted into the current generation). Moves the window to
 * now first (see bc_window_advance). Cost: as contains, plus the
 * amortized clearing of expired generations.
 */
bool bc_window_test_and_add(struct bc_window *window, const void *key,
                            size_t len, uint64_t now);

/* Insert the key into the current generation (refreshing it), at now. */
void bc_window_add(struct bc_window *window, const void *key, size_t len,
                   uint64_t now);

/* The same three from a hash computed by bc_window_hash() on this filter. */
bool bc_window_contains_hash(const struct bc_window *window,
                             struct bc_hash128 h, uint64_t now);
bool bc_window_test_and_add_hash(struct bc_window *window, struct bc_hash128 h,
                                 uint64_t now);
void bc_window_add_hash(struct bc_window *window, struct bc_hash128 h,
                        uint64_t now);

/* Start loading the block a key's tests will touch (for batch callers). */
void bc_window_prefetch(const struct bc_window *window, struct bc_hash128 h);

/*
 * Test-and-add count prehashed keys in order at one now, writing
 * was_new[i]: the same answers as count single calls, with the blocks of
 * keys further down the batch prefetched so the cache misses overlap.
 */
void bc_window_test_and_add_batch(struct bc_window *window,
                                  const struct bc_hash128 *hashes, size_t count,
                                  uint64_t now, bool *was_new);

/* Contains for count prehashed keys at one now, writing present[i], with
 * the same prefetching. Changes nothing. */
void bc_window_contains_batch(const struct bc_window *window,
                              const struct bc_hash128 *hashes, size_t count,
                              uint64_t now, bool *present);

/*
 * Move the window to now (time windows) and clear the generations that
 * fell out of it. Count windows move by insertions only; this is then a
 * no-op. Cost: one pass over the array per generation retired (B * 32
 * bytes each), i.e. amortized a few bytes per insertion.
 */
void bc_window_advance(struct bc_window *window, uint64_t now);

struct bc_window_stats {
    enum bc_window_kind kind;
    uint64_t window;       /* W or T */
    uint64_t capacity;     /* keys per window sized for */
    double p;              /* target */
    unsigned generations;  /* G */
    unsigned segment_bits; /* S */
    unsigned k;
    uint64_t blocks;
    uint64_t bytes;       /* array memory */
    uint64_t gen_keys;    /* g, keys per generation sized for */
    uint64_t gen_span;    /* count: g insertions; time: T/(G-1) rounded up */
    uint64_t generation;  /* the current generation's number */
    uint64_t inserts;     /* insertions ever (keys found new, + adds) */
    uint64_t live_keys;   /* keys in the live generations */
    uint64_t now;         /* the latest clock seen (time windows) */
    double fpr_predicted; /* the rate now, from the live generations' keys */
    double fpr_state_sd;  /* how far this filter's actual rate scatters
                             about fpr_predicted (a standard deviation,
                             from where its keys fell; see window.c) */
    double fpr_peak;      /* the sizing's rate, all generations full */
    bool over_capacity;   /* a live generation holds more than g keys */
};

/* Fill *out as of now (without changing anything). O(G). */
void bc_window_stats(const struct bc_window *window, uint64_t now,
                     struct bc_window_stats *out);

/*
 * Save the filter to path atomically (as bc_bloom_save: temporary file,
 * fsync, rename, directory fsync). Format: see dedup/window.c. Errors:
 * BC_ERR_INVALID_ARG (NULL filter or path, a path too long for its
 * temporary name), BC_ERR_IO (errno kept).
 */
enum bc_status bc_window_save(const struct bc_window *window, const char *path);

/*
 * Load a filter saved by bc_window_save(). Checks magic, version, header
 * consistency, size and the XXH64 checksum first: on error *out is
 * untouched and nothing stays allocated. Errors: BC_ERR_INVALID_ARG,
 * BC_ERR_IO, BC_ERR_FORMAT, BC_ERR_VERSION, BC_ERR_TRUNCATED,
 * BC_ERR_CORRUPT, BC_ERR_CHECKSUM, BC_ERR_NOMEM. Cost: the file is read
 * into memory whole before the filter is built (2x its size at peak).
 */
enum bc_status bc_window_load(const char *path, struct bc_window **out);

/* The same from a file image in memory (len bytes at data). */
enum bc_status bc_window_load_mem(const void *data, size_t len,
                                  struct bc_window **out);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_WINDOW_H */
