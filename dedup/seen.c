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
 * fingerprints. A window or counting tier 1 (below) keys the LRU the
 * same way, with that tier's own 128-bit hash of the key.
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
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloomcrawl/lru.h"
#include "bloomcrawl/seen.h"
#include "lru_int.h"

struct bc_seen {
    struct bc_bloom *bloom; /* NULL when tier 1 is one of the two below */
    struct bc_window *window;
    struct bc_cbloom *cbloom;
    uint64_t seed;      /* the hash seed of a counting filter's LRU hash */
    uint64_t now;       /* the clock a time window reads */
    uint64_t forgotten; /* bc_seen_forget successes */
    struct bc_lru *lru;
    bool loaded;     /* the filter came from a file */
    bool lru_failed; /* the LRU once failed to store a key */
    uint64_t tested;
    uint64_t verdict_new;
    uint64_t duplicate;
    uint64_t probably_seen;
    uint64_t fp_caught;
};

#define VERDICT_NAME(name, text) [name] = text,
static const char *const verdict_names[] = {BC_SEEN_VERDICT_LIST(VERDICT_NAME)};
#undef VERDICT_NAME

const char *bc_seen_verdict_name(enum bc_seen_verdict verdict)
{
    if ((unsigned)verdict < sizeof(verdict_names) / sizeof(verdict_names[0]))
        return verdict_names[verdict];
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
    config->counting = false;
    config->window_kind = BC_SEEN_WINDOW_NONE;
    config->window = 0;
    config->window_generations = 0;
    config->window_segment_bits = 0;
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

static enum bc_status create_other(const struct bc_seen_config *config,
                                   struct bc_seen **out);

enum bc_status bc_seen_create(const struct bc_seen_config *config,
                              struct bc_seen **out)
{
    if (!config || !out ||
        (config->window_kind != BC_SEEN_WINDOW_NONE &&
         config->window_kind != BC_SEEN_WINDOW_COUNT &&
         config->window_kind != BC_SEEN_WINDOW_TIME))
        return BC_ERR_INVALID_ARG;
    if (config->counting || config->window_kind != BC_SEEN_WINDOW_NONE)
        return create_other(config, out);
    struct bc_bloom *bloom;
    enum bc_status st =
        bc_bloom_create(config->expected, config->fp_rate, config->layout,
                        config->seed, 0, &bloom);
    if (st != BC_OK)
        return st;
    return assemble(bloom, config, false, out);
}

static enum bc_status load_window(const char *path,
                                  const struct bc_seen_config *config,
                                  struct bc_seen **out);

enum bc_status bc_seen_load(const char *path,
                            const struct bc_seen_config *config,
                            struct bc_seen **out)
{
    if (!path || !config || !out)
        return BC_ERR_INVALID_ARG;
    struct bc_bloom *bloom;
    enum bc_status st = bc_bloom_load(path, 0, &bloom);
    if (st == BC_ERR_FORMAT)
        return load_window(path, config, out);
    if (st != BC_OK)
        return st;
    return assemble(bloom, config, true, out);
}

enum bc_status bc_seen_save(const struct bc_seen *seen, const char *path)
{
    if (!seen)
        return BC_ERR_INVALID_ARG;
    if (seen->window)
        return bc_window_save(seen->window, path);
    if (seen->cbloom)
        return bc_cbloom_save(seen->cbloom, path);
    return bc_bloom_save(seen->bloom, path);
}

void bc_seen_free(struct bc_seen *seen)
{
    if (!seen)
        return;
    bc_lru_free(seen->lru);
    bc_bloom_free(seen->bloom);
    bc_window_free(seen->window);
    bc_cbloom_free(seen->cbloom);
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

static enum bc_status test_and_add_other(struct bc_seen *seen, const void *key,
                                         size_t len,
                                         enum bc_seen_verdict *verdict);

enum bc_status bc_seen_test_and_add(struct bc_seen *seen, const void *key,
                                    size_t len, enum bc_seen_verdict *verdict)
{
    if (!seen || !verdict || (!key && len > 0))
        return BC_ERR_INVALID_ARG;
    if (!seen->bloom)
        return test_and_add_other(seen, key, len, verdict);
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
    if (!seen->bloom) { /* window or counting tier 1: one at a time */
        enum bc_status res = BC_OK;
        for (size_t i = 0; i < count; i++)
            if (test_and_add_other(seen, keys[i], lens[i], &verdicts[i]) !=
                BC_OK)
                res = BC_ERR_NOMEM;
        return res;
    }
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

static enum bc_seen_verdict peek_other(const struct bc_seen *seen,
                                       const void *key, size_t len);

static enum bc_seen_verdict peek_bloom(const struct bc_seen *seen,
                                       const void *key, size_t len)
{
    struct bc_hash128 h = bc_bloom_hash(seen->bloom, key, len);
    if (!bc_bloom_contains_hash(seen->bloom, h))
        return BC_SEEN_NEW;
    if (bc_lru_contains(seen->lru, &h, sizeof(h), lru_hash(h)))
        return BC_SEEN_DUPLICATE;
    return lru_complete(seen) ? BC_SEEN_NEW : BC_SEEN_PROBABLY_SEEN;
}

enum bc_status bc_seen_peek(const struct bc_seen *seen, const void *key,
                            size_t len, enum bc_seen_verdict *verdict)
{
    if (!seen || !verdict || (!key && len > 0))
        return BC_ERR_INVALID_ARG;
    *verdict =
        seen->bloom ? peek_bloom(seen, key, len) : peek_other(seen, key, len);
    return BC_OK;
}

void bc_seen_stats(const struct bc_seen *seen, struct bc_seen_stats *out)
{
    if (!out)
        return;
    if (!seen) {
        memset(out, 0, sizeof(*out));
        return;
    }
    struct bc_seen_stats s = {
        .tested = seen->tested,
        .verdict_new = seen->verdict_new,
        .duplicate = seen->duplicate,
        .probably_seen = seen->probably_seen,
        .fp_caught = seen->fp_caught,
        .lru_complete = lru_complete(seen),
    };
    bc_lru_stats(seen->lru, &s.lru);
    if (seen->bloom)
        bc_bloom_stats(seen->bloom, &s.bloom);
    s.windowed = seen->window != NULL;
    if (seen->window)
        bc_window_stats(seen->window, seen->now, &s.window);
    s.counting = seen->cbloom != NULL;
    if (seen->cbloom)
        bc_cbloom_stats(seen->cbloom, &s.cbloom);
    s.forgotten = seen->forgotten;
    *out = s;
}

const struct bc_bloom *bc_seen_bloom(const struct bc_seen *seen)
{
    return seen ? seen->bloom : NULL;
}

/* ---- tier 1 as a window or a counting filter (issue 14) -------------- */

/*
 * The same verdicts over another tier 1. A window filter forgets: a key
 * whose window passed is NEW while the LRU may still hold it, so on NEW
 * the LRU is looked up (and refreshed) before anything is pushed. The
 * complete-LRU rule still holds: the LRU holds every key ever added (and
 * not forgotten), so a tier 1 "maybe" that misses a complete LRU is a
 * proven false positive, and the key is then inserted into tier 1.
 * A counting filter is a Bloom filter whose keys can be removed together
 * with their LRU entries (bc_seen_forget), so the rule stays exact.
 */

static struct bc_hash128 other_hash(const struct bc_seen *s, const void *key,
                                    size_t len)
{
    if (s->window)
        return bc_window_hash(s->window, key, len);
    XXH128_hash_t x = XXH3_128bits_withSeed(len ? key : "", len, s->seed);
    struct bc_hash128 h = {x.low64, x.high64};
    return h;
}

/* Tier 1's "maybe", changing nothing. */
static bool other_contains(const struct bc_seen *s, const void *key, size_t len,
                           struct bc_hash128 h)
{
    if (s->window)
        return bc_window_contains_hash(s->window, h, s->now);
    return bc_cbloom_contains(s->cbloom, key, len);
}

static void other_add(struct bc_seen *s, const void *key, size_t len,
                      struct bc_hash128 h)
{
    if (s->window)
        bc_window_add_hash(s->window, h, s->now);
    else
        bc_cbloom_add(s->cbloom, key, len);
}

static enum bc_status test_and_add_other(struct bc_seen *seen, const void *key,
                                         size_t len,
                                         enum bc_seen_verdict *verdict)
{
    struct bc_hash128 h = other_hash(seen, key, len);
    seen->tested++;
    bool fresh; /* tier 1 had no trace of the key */
    if (seen->window) {
        fresh = bc_window_test_and_add_hash(seen->window, h, seen->now);
    } else {
        fresh = !bc_cbloom_contains(seen->cbloom, key, len);
        if (fresh)
            bc_cbloom_add(seen->cbloom, key, len);
    }
    if (!fresh) {
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
        other_add(seen, key, len, h);
    }
    seen->verdict_new++;
    *verdict = BC_SEEN_NEW;
    /* A window's NEW key may be in the LRU from an earlier window. */
    if (seen->window && fresh &&
        bc_lru_find(seen->lru, &h, sizeof(h), lru_hash(h)))
        return BC_OK;
    if (bc_lru_push(seen->lru, &h, sizeof(h), lru_hash(h)) != BC_OK) {
        seen->lru_failed = true;
        return BC_ERR_NOMEM;
    }
    return BC_OK;
}

static enum bc_seen_verdict peek_other(const struct bc_seen *seen,
                                       const void *key, size_t len)
{
    struct bc_hash128 h = other_hash(seen, key, len);
    if (!other_contains(seen, key, len, h))
        return BC_SEEN_NEW;
    if (bc_lru_contains(seen->lru, &h, sizeof(h), lru_hash(h)))
        return BC_SEEN_DUPLICATE;
    return lru_complete(seen) ? BC_SEEN_NEW : BC_SEEN_PROBABLY_SEEN;
}

/* Wrap a window or counting filter (taken over, freed on failure). */
static enum bc_status assemble_other(struct bc_window *window,
                                     struct bc_cbloom *cbloom, uint64_t seed,
                                     const struct bc_seen_config *config,
                                     bool loaded, struct bc_seen **out)
{
    struct bc_seen *s;
    enum bc_status st = assemble(NULL, config, loaded, &s);
    if (st != BC_OK) {
        bc_window_free(window);
        bc_cbloom_free(cbloom);
        return st;
    }
    s->window = window;
    s->cbloom = cbloom;
    s->seed = seed;
    *out = s;
    return BC_OK;
}

static enum bc_status create_other(const struct bc_seen_config *config,
                                   struct bc_seen **out)
{
    enum bc_status st;
    if (config->counting) {
        if (config->window_kind != BC_SEEN_WINDOW_NONE)
            return BC_ERR_INVALID_ARG;
        struct bc_cbloom *cb;
        st = bc_cbloom_create(config->expected, config->fp_rate, config->seed,
                              &cb);
        if (st != BC_OK)
            return st;
        return assemble_other(NULL, cb, config->seed, config, false, out);
    }
    struct bc_window_config wc;
    bc_window_config_init(&wc);
    switch (config->window_kind) {
    case BC_SEEN_WINDOW_COUNT:
        wc.kind = BC_WINDOW_COUNT;
        break;
    case BC_SEEN_WINDOW_TIME:
        wc.kind = BC_WINDOW_TIME;
        break;
    case BC_SEEN_WINDOW_NONE:
        return BC_ERR_INVALID_ARG;
    }
    wc.window = config->window;
    wc.capacity = config->expected;
    wc.p = config->fp_rate;
    if (config->window_generations)
        wc.generations = config->window_generations;
    wc.segment_bits = config->window_segment_bits;
    wc.seed = config->seed;
    struct bc_window *w;
    st = bc_window_create(&wc, 0, &w);
    if (st != BC_OK)
        return st;
    return assemble_other(w, NULL, config->seed, config, false, out);
}

static enum bc_status load_window(const char *path,
                                  const struct bc_seen_config *config,
                                  struct bc_seen **out)
{
    struct bc_window *w;
    enum bc_status st = bc_window_load(path, &w);
    if (st == BC_ERR_FORMAT) { /* a counting filter's file? */
        struct bc_cbloom *cb;
        st = bc_cbloom_load(path, &cb);
        if (st != BC_OK)
            return st;
        /* The LRU starts empty: any seed serves its hash. */
        return assemble_other(NULL, cb, 0, config, true, out);
    }
    if (st != BC_OK)
        return st;
    struct bc_window_stats ws;
    bc_window_stats(w, 0, &ws);
    st = assemble_other(w, NULL, 0, config, true, out);
    if (st == BC_OK)
        (*out)->now = ws.now;
    return st;
}

const struct bc_window *bc_seen_window(const struct bc_seen *seen)
{
    return seen ? seen->window : NULL;
}

void bc_seen_set_clock(struct bc_seen *seen, uint64_t now)
{
    if (seen && now > seen->now)
        seen->now = now;
}

enum bc_status bc_seen_forget(struct bc_seen *seen, const void *key, size_t len)
{
    if (!seen || (!key && len > 0))
        return BC_ERR_INVALID_ARG;
    if (!seen->cbloom)
        return BC_ERR_UNSUPPORTED;
    struct bc_hash128 h = other_hash(seen, key, len);
    bool held = bc_lru_contains(seen->lru, &h, sizeof(h), lru_hash(h));
    /* A complete LRU knows every added key: one it lacks was never added,
     * and removing it from the filter would damage other keys. */
    if (!held && lru_complete(seen))
        return BC_ERR_NOT_FOUND;
    enum bc_status st = bc_cbloom_remove(seen->cbloom, key, len);
    if (st != BC_OK)
        return st;
    bc_lru_remove(seen->lru, &h, sizeof(h), lru_hash(h));
    seen->forgotten++;
    return BC_OK;
}
