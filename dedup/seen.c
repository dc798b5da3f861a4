/*
 * seen.c - the two-tier URL-seen test: a Bloom filter, then an exact LRU.
 *
 * THE PROBLEM
 * A Bloom filter alone is compact and fast but says "maybe" both for keys
 * it holds and, at rate p, for keys it does not. An exact set alone has no
 * false positives but grows without bound. A crawler's link stream is
 * dominated by repeats of recent URLs (the same navigation links on every
 * page of a site): Broder, Najork and Wiener (WWW 2003) measured that a
 * cache of ~50,000 recent URLs catches ~80 % of them.
 *
 * THE IDEA
 * Ask the filter first; ask the LRU only when the filter says "maybe":
 *
 *     key --XXH3-128--> Bloom filter --zero bit----------------> NEW
 *                            | maybe
 *                            v
 *                        LRU of recent keys --holds it---------> DUPLICATE
 *                            | misses
 *                            v
 *                        LRU complete? --yes (proven FP)------> NEW
 *                            | no                      (fp_caught++)
 *                            v
 *                        PROBABLY_SEEN
 *
 * One hash serves both tiers: the filter probes with (h1, h2) and the LRU
 * indexes its hash table with h2 (the block index of the blocked layout
 * uses h1, so the LRU's buckets are independent of the filter's blocks).
 *
 * FINGERPRINTS IN THE LRU
 * The LRU does not keep the URL: its key is the 128-bit hash (h1, h2)
 * itself, 16 bytes, as BUbiNG's URL cache keeps fingerprints. Its entries
 * are then of one size and live in one preallocated slab (lru.c): 88 bytes
 * a slot plus 16 per hash bucket (~109 bytes per entry at the default
 * 50,000, against ~180 with a malloc'ed URL copy), no allocation and no
 * copy of the URL per insert, and nothing hashed twice. The price is
 * exactness up to a hash collision: two distinct URLs with the same
 * 128-bit hash are one key to both tiers. Such a pair has chance 2^-128
 * (XXH3-128 behaves as a random function on keys not chosen against its
 * seed), so among n URLs a collision has chance about n^2 / 2^129: 1.5e-21
 * at n = 10^9. What it would cost: the second URL of the pair is told
 * DUPLICATE (or, by the complete-LRU rule below, PROBABLY_SEEN once the
 * first was evicted), never fetched. The rule's other direction stays
 * exact: an LRU miss still proves that no key of that hash, so not this
 * key, was ever added. Whoever removes a key from the LRU must pass the
 * same 16 bytes: bc_lru_remove(lru, &h, sizeof(h), lru_hash(h)). The
 * public bc_lru keeps whole keys; only the seen-test chooses to give it
 * fingerprints.
 *
 * THE COMPLETE-LRU RULE
 * Every key the filter has ever accepted as NEW also went into the LRU. So
 * while the LRU has never evicted, never failed to store a key, and the
 * filter was not loaded from a file, the LRU holds every key ever added -
 * and a filter "maybe" that misses the LRU is a proven false positive
 * (exact up to the 2^-128 collision above). The
 * verdict is then NEW (and the key enters the LRU). The seen-test is exact
 * while it fits; once the LRU forgets, it degrades to Bloom semantics and
 * says PROBABLY_SEEN, which the crawler skips. A PROBABLY_SEEN key is not
 * put into the LRU: the LRU holds only keys known to have been added, so a
 * DUPLICATE verdict is always exact.
 *
 * EXPECTED WORKLOAD
 * A crawl discovers ~50 links per page and fetches a few hundred pages per
 * second: 10^4-10^5 tests per second, most of them DUPLICATE. Each test
 * costs one hash, one filter probe (one cache miss in the blocked layout)
 * and, on a "maybe", one LRU lookup; a NEW key also costs an LRU insert
 * and, once the LRU is full, an eviction. The batch call fetches ahead
 * what those touch: the filter's block and the LRU bucket of the key
 * BATCH_AHEAD places ahead, the first entry of that bucket's chain half as
 * far ahead; the LRU fetches its coming evictions itself.
 */
#include <stdlib.h>

#include "bloomcrawl/lru.h"
#include "bloomcrawl/seen.h"
#include "lru_int.h"

struct bc_seen {
    struct bc_bloom *bloom;
    struct bc_lru *lru;
    bool loaded;     /* the filter came from a file */
    bool lru_failed; /* the LRU once failed to store a key */
    uint64_t tested;
    uint64_t verdict_new;
    uint64_t duplicate;
    uint64_t probably_seen;
    uint64_t fp_caught;
};

const char *bc_seen_verdict_name(enum bc_seen_verdict verdict)
{
    switch (verdict) {
    case BC_SEEN_NEW:
        return "NEW";
    case BC_SEEN_DUPLICATE:
        return "DUPLICATE";
    case BC_SEEN_PROBABLY_SEEN:
        return "PROBABLY_SEEN";
    }
    return "UNKNOWN";
}

void bc_seen_config_init(struct bc_seen_config *config)
{
    if (!config)
        return;
    config->expected = BC_SEEN_DEFAULT_EXPECTED;
    config->fp_rate = BC_SEEN_DEFAULT_FP_RATE;
    config->layout = BC_BLOOM_BLOCKED;
    config->seed = 0;
    config->lru_capacity = BC_SEEN_DEFAULT_LRU;
    config->lru_max_bytes = 0;
}

/* Wrap a filter (taken over, freed on failure) and a new LRU into a
 * seen-test. */
static enum bc_status assemble(struct bc_bloom *bloom,
                               const struct bc_seen_config *config, bool loaded,
                               struct bc_seen **out)
{
    enum bc_status st = BC_ERR_NOMEM;
    struct bc_seen *s = calloc(1, sizeof(*s));
    if (!s)
        goto out_free_bloom;
    st = bc_lru_create_slab(config->lru_capacity, sizeof(struct bc_hash128),
                            config->lru_max_bytes, &s->lru);
    if (st != BC_OK)
        goto out_free_seen;
    s->bloom = bloom;
    s->loaded = loaded;
    *out = s;
    return BC_OK;

out_free_seen:
    free(s);
out_free_bloom:
    bc_bloom_free(bloom);
    return st;
}

enum bc_status bc_seen_create(const struct bc_seen_config *config,
                              struct bc_seen **out)
{
    if (!config || !out)
        return BC_ERR_INVALID_ARG;
    struct bc_bloom *bloom;
    enum bc_status st =
        bc_bloom_create(config->expected, config->fp_rate, config->layout,
                        config->seed, 0, &bloom);
    if (st != BC_OK)
        return st;
    return assemble(bloom, config, false, out);
}

enum bc_status bc_seen_load(const char *path,
                            const struct bc_seen_config *config,
                            struct bc_seen **out)
{
    if (!path || !config || !out)
        return BC_ERR_INVALID_ARG;
    struct bc_bloom *bloom;
    enum bc_status st = bc_bloom_load(path, 0, &bloom);
    if (st != BC_OK)
        return st;
    return assemble(bloom, config, true, out);
}

enum bc_status bc_seen_save(const struct bc_seen *seen, const char *path)
{
    if (!seen)
        return BC_ERR_INVALID_ARG;
    return bc_bloom_save(seen->bloom, path);
}

void bc_seen_free(struct bc_seen *seen)
{
    if (!seen)
        return;
    bc_lru_free(seen->lru);
    bc_bloom_free(seen->bloom);
    free(seen);
}

/* The rule that turns an LRU miss after a filter "maybe" into a proof. */
static bool lru_complete(const struct bc_seen *s)
{
    struct bc_lru_stats ls;
    bc_lru_stats(s->lru, &ls);
    return !s->loaded && !s->lru_failed && ls.evictions == 0;
}

/* The LRU's hash of a key: the second half of the filter's hash. */
static uint64_t lru_hash(struct bc_hash128 h)
{
    return h.hi;
}

/* The seen-test of a key whose hash is known. The LRU's key is the hash
 * itself, its 16 bytes (the fingerprint), not the URL. */
static enum bc_status test_and_add_hashed(struct bc_seen *seen,
                                          struct bc_hash128 h,
                                          enum bc_seen_verdict *verdict)
{
    seen->tested++;
    if (!bc_bloom_test_and_add_hash(seen->bloom, h)) {
        if (bc_lru_find(seen->lru, &h, sizeof(h), lru_hash(h))) {
            seen->duplicate++;
            *verdict = BC_SEEN_DUPLICATE;
            return BC_OK;
        }
        if (!lru_complete(seen)) {
            seen->probably_seen++;
            *verdict = BC_SEEN_PROBABLY_SEEN;
            return BC_OK;
        }
        seen->fp_caught++;
    }
    seen->verdict_new++;
    *verdict = BC_SEEN_NEW;
    /* NEW means the LRU does not hold the key: the filter had a zero bit
     * (and every LRU key went through the filter), or the LRU just missed
     * it. So it is pushed without a second lookup. */
    if (bc_lru_push(seen->lru, &h, sizeof(h), lru_hash(h)) != BC_OK) {
        seen->lru_failed = true;
        return BC_ERR_NOMEM;
    }
    return BC_OK;
}

enum bc_status bc_seen_test_and_add(struct bc_seen *seen, const void *key,
                                    size_t len, enum bc_seen_verdict *verdict)
{
    if (!seen || !verdict || (!key && len > 0))
        return BC_ERR_INVALID_ARG;
    return test_and_add_hashed(seen, bc_bloom_hash(seen->bloom, key, len),
                               verdict);
}

/* Keys hashed ahead of the one being tested, in the batch call. */
#define BATCH_AHEAD 8u

enum bc_status bc_seen_test_and_add_batch(struct bc_seen *seen,
                                          const char *const *keys,
                                          const size_t *lens, size_t count,
                                          enum bc_seen_verdict *verdicts)
{
    if (!seen || (count > 0 && (!keys || !lens || !verdicts)))
        return BC_ERR_INVALID_ARG;
    for (size_t i = 0; i < count; i++)
        if (!keys[i] && lens[i] > 0)
            return BC_ERR_INVALID_ARG;
    /* A ring of the next BATCH_AHEAD hashes: hash key i + BATCH_AHEAD and
     * prefetch its memory, then test key i. */
    struct bc_hash128 ring[BATCH_AHEAD];
    enum bc_status result = BC_OK;
    for (size_t i = 0; i < count && i < BATCH_AHEAD; i++) {
        ring[i] = bc_bloom_hash(seen->bloom, keys[i], lens[i]);
        bc_bloom_prefetch(seen->bloom, ring[i]);
        bc_lru_prefetch(seen->lru, lru_hash(ring[i]));
    }
    for (size_t i = 0; i < count; i++) {
        struct bc_hash128 h = ring[i % BATCH_AHEAD];
        size_t ahead = i + BATCH_AHEAD;
        /* Halfway down the ring the bucket has arrived: fetch the entry
         * its chain starts with. */
        if (i + BATCH_AHEAD / 2 < count)
            bc_lru_prefetch_chain(
                seen->lru, lru_hash(ring[(i + BATCH_AHEAD / 2) % BATCH_AHEAD]));
        if (ahead < count) {
            struct bc_hash128 next =
                bc_bloom_hash(seen->bloom, keys[ahead], lens[ahead]);
            ring[ahead % BATCH_AHEAD] = next;
            bc_bloom_prefetch(seen->bloom, next);
            bc_lru_prefetch(seen->lru, lru_hash(next));
        }
        if (test_and_add_hashed(seen, h, &verdicts[i]) != BC_OK)
            result = BC_ERR_NOMEM;
    }
    return result;
}

enum bc_seen_verdict bc_seen_peek(const struct bc_seen *seen, const void *key,
                                  size_t len)
{
    struct bc_hash128 h = bc_bloom_hash(seen->bloom, key, len);
    if (!bc_bloom_contains_hash(seen->bloom, h))
        return BC_SEEN_NEW;
    if (bc_lru_contains(seen->lru, &h, sizeof(h), lru_hash(h)))
        return BC_SEEN_DUPLICATE;
    return lru_complete(seen) ? BC_SEEN_NEW : BC_SEEN_PROBABLY_SEEN;
}

void bc_seen_stats(const struct bc_seen *seen, struct bc_seen_stats *out)
{
    struct bc_seen_stats s = {
        .tested = seen->tested,
        .verdict_new = seen->verdict_new,
        .duplicate = seen->duplicate,
        .probably_seen = seen->probably_seen,
        .fp_caught = seen->fp_caught,
        .lru_complete = lru_complete(seen),
    };
    bc_lru_stats(seen->lru, &s.lru);
    bc_bloom_stats(seen->bloom, &s.bloom);
    *out = s;
}

const struct bc_bloom *bc_seen_bloom(const struct bc_seen *seen)
{
    return seen->bloom;
}
