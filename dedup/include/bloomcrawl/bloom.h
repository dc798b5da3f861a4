/*
 * bloomcrawl/bloom.h - Bloom filter: tier 1 of the URL-seen test.
 *
 * A Bloom filter answers "have I added this key?" with "no" (certain) or
 * "maybe" (wrong with a small, chosen probability p), in about 9.6 bits per
 * key at p = 1 %, whatever the key's length. dedup/bloom.c explains the
 * math; this header is the contract.
 *
 * Two layouts behind one API:
 *   BC_BLOOM_CLASSIC  k probes anywhere in m bits (the textbook filter);
 *   BC_BLOOM_BLOCKED  all k probes of a key in one 512-bit cache line, so a
 *                     query costs one cache miss; needs a few more bits per
 *                     key for the same p.
 *
 * Thread safety: a filter is not thread-safe, unless it was created with
 * BC_BLOOM_CONCURRENT; then add, test-and-add, contains and the batch call
 * may run from several threads at once (atomic fetch-or, no locks), and
 * test-and-add never answers "new" to two callers for one key: callers
 * racing on the same key get "new" exactly once. (If, in that same
 * instant, another key sets the very bits the key was missing, it is "not
 * new" for everyone: no protocol over bits can tell the two apart. That
 * rare event acts as one more false positive, never as a duplicate.)
 * Save, free and the statistics need the filter to be quiet.
 *
 * Keys are bytes (any length, may contain NUL; key may be NULL when len is
 * 0, the empty key). Sizes, positions and counts are 64-bit: filters above
 * 2^32 bits work and keep their predicted rate.
 *
 * A NULL filter, or a NULL key with len > 0, is no filter and no key, not
 * a crash: the queries and test-and-add answer false and nothing is added,
 * bc_bloom_hash() gives the zero hash, the batch calls write false (and
 * nothing at all when hashes or the output array is NULL), the statistics
 * are all zero, add, clear and prefetch do nothing. Functions returning
 * enum bc_status say their codes below.
 */
#ifndef BC_DEDUP_BLOOM_H
#define BC_DEDUP_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

enum bc_bloom_layout { BC_BLOOM_CLASSIC = 0, BC_BLOOM_BLOCKED = 1 };

/* Flags for bc_bloom_create() and bc_bloom_load(). */
#define BC_BLOOM_CONCURRENT 0x1u /* atomic bit setting for shared use */

/* Bits in one block of the blocked layout (one 64-byte cache line). */
#define BC_BLOOM_BLOCK_BITS 512u
/* The largest k accepted; sizing that needs more is refused. */
#define BC_BLOOM_MAX_K 64u
/* The largest filter accepted: 2^41 bits (256 GiB). */
#define BC_BLOOM_MAX_BITS (UINT64_C(1) << 41)

/* The 128-bit hash of a key (XXH3-128 with the filter's seed). Computing it
 * once lets the caller reuse it (the LRU tier does) and batch queries. */
struct bc_hash128 {
    uint64_t lo;
    uint64_t hi;
};

/*
 * The sizing of a filter: what bc_bloom_size() computes from (n, p) and
 * bc_bloom_rate() from (n, m, k).
 */
struct bc_bloom_sizing {
    enum bc_bloom_layout layout;
    uint64_t n;             /* expected number of distinct keys */
    double p;               /* target false-positive rate (0 for rate()) */
    uint64_t m_bits;        /* bits in the filter (blocked: multiple of 512) */
    uint64_t bytes;         /* memory of the bit array */
    unsigned k;             /* probes per key */
    double k_opt;           /* real-valued optimum (m/n) ln 2 */
    double bits_per_key;    /* m / n */
    double fpr_predicted;   /* predicted rate for this n, m, k */
    double fpr_upper_bound; /* classic: exact upper bound; blocked: = pred. */
};

/*
 * Size a filter for n keys at false-positive rate p.
 * classic: m = ceil(-n ln p / (ln 2)^2), k = round((m/n) ln 2), at least 1;
 *          bytes = m rounded up to whole 64-bit words.
 * blocked: the least number of 512-bit blocks whose Poisson-mixture rate,
 *          at its best k, is at most p.
 * Returns BC_ERR_INVALID_ARG for n = 0, p outside (0, 1) or NaN, a NULL
 * out, a layout outside its enum; BC_ERR_TOO_LARGE when m would exceed BC_BLOOM_MAX_BITS or k would
 * exceed BC_BLOOM_MAX_K. Cost: O(1) classic, a few ms blocked.
 */
enum bc_status bc_bloom_size(uint64_t n, double p, enum bc_bloom_layout layout,
                             struct bc_bloom_sizing *out);

/*
 * Size a filter for n keys at rate p with exactly k probes, for a caller
 * who pays per probe more than per bit (a filter in Redis: a probe is a
 * BITFIELD operation): more bits than bc_bloom_size() gives, fewer probes.
 * classic: m = ceil(-k n / ln(1 - p^(1/k))), the least m whose rate
 *          (1 - e^(-k n / m))^k is at most p (stepped up where rounding
 *          left it above p);
 * blocked: the least number of 512-bit blocks whose Poisson-mixture rate
 *          at k is at most p.
 * blocked at the k bc_bloom_size() picks: its m; at p = 1 % and k = 1,
 * 99.5 bits a key, 10 times its 9.9. Errors as bc_bloom_size(), and
 * BC_ERR_INVALID_ARG for k = 0 or k > BC_BLOOM_MAX_K. Cost: O(1) classic,
 * a few ms blocked.
 */
enum bc_status bc_bloom_size_k(uint64_t n, double p, unsigned k,
                               enum bc_bloom_layout layout,
                               struct bc_bloom_sizing *out);

/*
 * The predicted rate for n keys in a filter of m bits and k probes
 * (blocked: m is rounded up to whole blocks). Fills out with p = 0.
 * Returns BC_ERR_INVALID_ARG for n, m or k zero, k > BC_BLOOM_MAX_K, a
 * NULL out; BC_ERR_TOO_LARGE when m exceeds BC_BLOOM_MAX_BITS.
 */
enum bc_status bc_bloom_rate(uint64_t n, uint64_t m, unsigned k,
                             enum bc_bloom_layout layout,
                             struct bc_bloom_sizing *out);

/* The classic prediction (1 - e^(-k n / m))^k. */
double bc_bloom_fpr_classic(double n, double m, double k);
/* The classic exact upper bound (1 - e^(-k (n + 0.5) / (m - 1)))^k. */
double bc_bloom_fpr_classic_upper(double n, double m, double k);
/* The blocked prediction: sum over i of Pois(i; B n / m) times
 * E[(X / B)^k], X the bits set in a block of B = 512 by k i uniform
 * offsets - the distribution of a block's fill, not its mean (formula (4')
 * of dedup/bloom_math.c). k is rounded to a whole number, at most
 * BC_BLOOM_MAX_K; below 1/2 the rate is 1. O(k^2 (lambda + 12 sqrt(lambda)
 * + 30)) with lambda = B n / m; beyond lambda = 10^4, the classic formula. */
double bc_bloom_fpr_blocked(double n, double m, double k);

struct bc_bloom;

/*
 * Create an empty filter sized for n keys at rate p (see bc_bloom_size).
 * seed keys the hash: two filters with different seeds make independent
 * errors. flags: 0 or BC_BLOOM_CONCURRENT. Arrays of 2 MiB and more are
 * mmap'ed and advised for huge pages. On success *out owns the filter; free
 * it with bc_bloom_free(). Errors: BC_ERR_INVALID_ARG (NULL out, flags
 * other than those), those of bc_bloom_size() (a layout outside its enum
 * is BC_ERR_INVALID_ARG), BC_ERR_NOMEM; *out is untouched on error.
 */
enum bc_status bc_bloom_create(uint64_t n, double p,
                               enum bc_bloom_layout layout, uint64_t seed,
                               unsigned flags, struct bc_bloom **out);

/*
 * Create an empty filter of exactly m bits (blocked: rounded up to a whole
 * number of 512-bit blocks) and k probes; n is recorded as the number of
 * keys it is meant for (for the statistics). Errors as bc_bloom_create(),
 * those of bc_bloom_rate() for the sizing.
 */
enum bc_status bc_bloom_create_mk(uint64_t n, uint64_t m, unsigned k,
                                  enum bc_bloom_layout layout, uint64_t seed,
                                  unsigned flags, struct bc_bloom **out);

/* Free a filter; NULL is a no-op. */
void bc_bloom_free(struct bc_bloom *bloom);

/* The hash of a key as this filter computes it (XXH3-128, its seed). */
struct bc_hash128 bc_bloom_hash(const struct bc_bloom *bloom, const void *key,
                                size_t len);

/* Add a key. Cost: k bit sets (classic: up to k cache misses). */
void bc_bloom_add(struct bc_bloom *bloom, const void *key, size_t len);
/* Does the filter say "maybe" for the key? false is certain. */
bool bc_bloom_contains(const struct bc_bloom *bloom, const void *key,
                       size_t len);
/* Add the key; return true when it was new (at least one bit was zero). */
bool bc_bloom_test_and_add(struct bc_bloom *bloom, const void *key, size_t len);

/* The same three from a hash computed by bc_bloom_hash() on this filter. */
void bc_bloom_add_hash(struct bc_bloom *bloom, struct bc_hash128 h);
bool bc_bloom_contains_hash(const struct bc_bloom *bloom, struct bc_hash128 h);
bool bc_bloom_test_and_add_hash(struct bc_bloom *bloom, struct bc_hash128 h);

/*
 * Test-and-add count prehashed keys in order, writing was_new[i] (true when
 * key i was new). Equivalent to count calls of bc_bloom_test_and_add_hash()
 * (a key repeated within the batch is new only the first time), but it
 * prefetches the memory of keys further down the batch while it works on
 * the current one, so the cache misses overlap.
 */
void bc_bloom_test_and_add_batch(struct bc_bloom *bloom,
                                 const struct bc_hash128 *hashes, size_t count,
                                 bool *was_new);
/* Start loading the memory a key's probes will touch (one cache line in
 * the blocked layout, k in the classic), so that a later call on it does
 * not wait: for callers that build their own pipelines. No effect on the
 * filter's contents. */
void bc_bloom_prefetch(const struct bc_bloom *bloom, struct bc_hash128 h);

/* Contains for count prehashed keys, with the same prefetching. */
void bc_bloom_contains_batch(const struct bc_bloom *bloom,
                             const struct bc_hash128 *hashes, size_t count,
                             bool *present);

/* Introspection. */
struct bc_bloom_stats {
    enum bc_bloom_layout layout;
    uint64_t m_bits;      /* bits addressed by the probes */
    uint64_t bytes;       /* memory of the bit array */
    unsigned k;           /* probes per key */
    uint64_t seed;        /* hash seed */
    uint64_t n_expected;  /* the n the filter was sized for */
    uint64_t inserts;     /* test-and-adds that found the key new, + adds */
    uint64_t bits_set;    /* popcount of the array */
    double fill;          /* bits_set / m_bits */
    double fpr_estimated; /* the rate now, from the fill */
    double n_estimated;   /* distinct keys estimated from the fill */
    double fpr_predicted; /* the rate predicted at n_expected keys */
    bool concurrent;      /* created with BC_BLOOM_CONCURRENT */
    bool mmapped;         /* array lives in an mmap'ed region */
};

/*
 * Fill *out. Cost: O(m) (one popcount pass over the array).
 * fpr_estimated: classic fill^k; blocked the mean over blocks of
 * (block fill)^k. n_estimated: classic -(m/k) ln(1 - X/m) for X bits set;
 * blocked the same estimate per block, summed.
 */
void bc_bloom_stats(const struct bc_bloom *bloom, struct bc_bloom_stats *out);

/* Keys added that were new, without the popcount pass. O(1). */
uint64_t bc_bloom_inserts(const struct bc_bloom *bloom);

/* Set every bit to zero. */
void bc_bloom_clear(struct bc_bloom *bloom);

/*
 * Save the filter to path: written to "path.tmp.<pid>", fsync'ed, renamed
 * over path, and the directory fsync'ed, so path always holds either the
 * old complete file or the new complete file. Format: see dedup/bloom.c.
 * First removes "path.tmp.<pid>" files left by saves whose process no
 * longer exists (killed while saving). Returns BC_ERR_INVALID_ARG (NULL
 * bloom or path, or a path too long for its temporary name: PATH_MAX),
 * else BC_ERR_IO (errno kept) on any failure, removing the temporary.
 */
enum bc_status bc_bloom_save(const struct bc_bloom *bloom, const char *path);

/*
 * Load a filter saved by bc_bloom_save(). Checks magic, version, header
 * consistency, size and the XXH64 checksum before handing out anything:
 * on error *out is untouched and nothing is allocated. flags as for
 * create. Errors: BC_ERR_INVALID_ARG (NULL path or out, bad flags: checked
 * first), BC_ERR_IO, BC_ERR_FORMAT, BC_ERR_VERSION,
 * BC_ERR_TRUNCATED, BC_ERR_CORRUPT, BC_ERR_CHECKSUM, BC_ERR_NOMEM.
 */
enum bc_status bc_bloom_load(const char *path, unsigned flags,
                             struct bc_bloom **out);

/* The same from a file image in memory (len bytes at data; NULL data is
 * BC_ERR_INVALID_ARG, a short image BC_ERR_TRUNCATED or BC_ERR_FORMAT). */
enum bc_status bc_bloom_load_mem(const void *data, size_t len, unsigned flags,
                                 struct bc_bloom **out);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_BLOOM_H */
