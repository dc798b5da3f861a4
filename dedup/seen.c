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
 * are then of one size and live in one preallocated slab (lru.c): 72 bytes a
 * slot plus 16 per hash bucket, two buckets per entry (~114 bytes per entry
 * at the default 50,000, against ~194 with a malloc'ed URL copy), no
 * allocation and no copy of the URL per insert, and nothing hashed twice.
 * The price is exactness up to a hash collision: two distinct URLs with the
 * same 128-bit hash are one key to both tiers. Such a pair has chance 2^-128
 * (XXH3-128 behaves as a random function on keys not chosen against its
 * seed), so among n URLs a collision has chance about n^2 / 2^129: 1.5e-21
 * at n = 10^9. What it would cost: the second URL of the pair is told
 * DUPLICATE (or, by the complete-LRU rule below, PROBABLY_SEEN once the
 * first was evicted), never fetched. The rule's other direction stays exact:
 * an LRU miss still proves that no key of that hash, so not this key, was
 * ever added. Whoever removes a key from the LRU must pass the same 16
 * bytes: bc_lru_remove(lru, &h, sizeof(h), lru_hash(h)). The public bc_lru
 * keeps whole keys; only the seen-test chooses to give it fingerprints.
 * Every kind of tier 1 (below) keys the LRU the same way, with the 128-bit
 * hash its table gives: the filter's own, or for a counting filter, which
 * shows none, one the seen-test computes.
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
 * and, once the LRU is full, an eviction (one step: the evicted entry's
 * slot takes the new key, lru.c's replace_head()). The batch call
 * fetches ahead what those touch: the filter's block and the LRU bucket of
 * the key BATCH_AHEAD places ahead, the first entry of that bucket's chain
 * half as far ahead; the LRU fetches its coming evictions itself.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloomcrawl/lru.h"
#include "bloomcrawl/seen.h"
#include "lru_int.h"

struct tier1_ops;

struct bc_seen {
    const struct tier1_ops *ops; /* tier 1's operations, by its kind */
    void *tier1;        /* a bc_bloom, bc_window or bc_cbloom (ops says) */
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

/*
 * TIER 1'S OPERATIONS
 * The two-tier rule above does not depend on what tier 1 is: it needs a
 * 128-bit hash of the key, a test-and-add that says whether tier 1 had no
 * trace of the key, a test that changes nothing, and an add. So each kind
 * of tier 1 is one table of those operations, chosen once when the
 * seen-test is created or loaded (as Redis's dictType gives a dict its
 * hash and compare functions), and the verdict, the peek, the batch loop
 * and forget are written once, over the table:
 *
 *     kind                  table         tier 1      hash (LRU key too)
 *     BLOOM_CLASSIC/BLOCKED bloom_ops     bc_bloom    the filter's
 *     COUNTING              cbloom_ops    bc_cbloom   XXH3-128, seed
 *     WINDOW_COUNT/TIME     window_ops    bc_window   the filter's
 *
 * A counting filter hashes the key itself (cbloom.h takes keys, not
 * hashes), so its operations get the key as well as the hash; the others
 * use the hash only. What the table costs, counted by valgrind over
 * bench_scale's seen rows at n = 10^5: 537 instructions per
 * bc_seen_test_and_add() against 519 with the flags it replaced (+3.5 %),
 * of which calling the Bloom filter directly instead of through the table
 * saves 4; a cache miss on the filter's block costs more than all of it.
 */
struct tier1_ops {
    /* The key's 128-bit hash: the LRU's fingerprint of the key, and the
     * filter's probes when the filter takes hashes. */
    struct bc_hash128 (*hash)(const struct bc_seen *s, const void *key,
                              size_t len);
    /* Insert the key unless tier 1 says "maybe"; true when it had no
     * trace of the key (then it holds it now). */
    bool (*test_and_add)(struct bc_seen *s, const void *key, size_t len,
                         struct bc_hash128 h);
    /* Tier 1's "maybe", changing nothing. */
    bool (*contains)(const struct bc_seen *s, const void *key, size_t len,
                     struct bc_hash128 h);
    /* Insert a key test_and_add found "maybe" (a proven false positive is
     * NEW, so tier 1 must hold it from now on). */
    void (*add)(struct bc_seen *s, const void *key, size_t len,
                struct bc_hash128 h);
    /* Start loading the memory the key's test will touch (batch calls);
     * NULL when the filter hashes the key itself and cannot be told. */
    void (*prefetch)(const struct bc_seen *s, struct bc_hash128 h);
    /* Remove the key (bc_seen_forget); NULL: this kind cannot forget. */
    enum bc_status (*remove)(struct bc_seen *s, const void *key, size_t len);
    /* Fill out's kind and tier-1 statistics. */
    void (*stats)(const struct bc_seen *s, struct bc_seen_stats *out);
    enum bc_status (*save)(const struct bc_seen *s, const char *path);
    /* Load a tier 1 saved by save; *now is its clock (0 if it has none).
     * BC_ERR_FORMAT: the file holds another kind. */
    enum bc_status (*load)(const char *path, void **tier1, uint64_t *now);
    void (*free)(void *tier1);
    /* Tier 1 forgets keys on its own (a window): a key it finds new may
     * still be in the LRU, from an earlier window. */
    bool forgets;
};

/* ---- a Bloom filter (BC_SEEN_BLOOM_CLASSIC, BC_SEEN_BLOOM_BLOCKED) ---- */

static struct bc_hash128 bloom_hash(const struct bc_seen *s, const void *key,
                                    size_t len)
{
    return bc_bloom_hash(s->tier1, key, len);
}

static bool bloom_test_and_add(struct bc_seen *s, const void *key, size_t len,
                               struct bc_hash128 h)
{
    (void)key, (void)len;
    return bc_bloom_test_and_add_hash(s->tier1, h);
}

static bool bloom_contains(const struct bc_seen *s, const void *key, size_t len,
                           struct bc_hash128 h)
{
    (void)key, (void)len;
    return bc_bloom_contains_hash(s->tier1, h);
}

/* Nothing to do: the test-and-add that said "maybe" found every bit of
 * the key set, so the filter holds it already (and its insert count, the
 * keys found new, stays as it was). */
static void bloom_add(struct bc_seen *s, const void *key, size_t len,
                      struct bc_hash128 h)
{
    (void)s, (void)key, (void)len, (void)h;
}

static void bloom_prefetch(const struct bc_seen *s, struct bc_hash128 h)
{
    bc_bloom_prefetch(s->tier1, h);
}

static void bloom_stats(const struct bc_seen *s, struct bc_seen_stats *out)
{
    bc_bloom_stats(s->tier1, &out->bloom);
    out->kind = out->bloom.layout == BC_BLOOM_CLASSIC ? BC_SEEN_BLOOM_CLASSIC
                                                      : BC_SEEN_BLOOM_BLOCKED;
}

static enum bc_status bloom_save(const struct bc_seen *s, const char *path)
{
    return bc_bloom_save(s->tier1, path);
}

static enum bc_status bloom_load(const char *path, void **tier1, uint64_t *now)
{
    struct bc_bloom *b;
    enum bc_status st = bc_bloom_load(path, 0, &b);
    if (st == BC_OK) {
        *tier1 = b;
        *now = 0;
    }
    return st;
}

static void bloom_free(void *tier1)
{
    bc_bloom_free(tier1);
}

static const struct tier1_ops bloom_ops = {
    .hash = bloom_hash,
    .test_and_add = bloom_test_and_add,
    .contains = bloom_contains,
    .add = bloom_add,
    .prefetch = bloom_prefetch,
    .remove = NULL,
    .stats = bloom_stats,
    .save = bloom_save,
    .load = bloom_load,
    .free = bloom_free,
    .forgets = false,
};

/* ---- a counting filter (BC_SEEN_COUNTING) ------------------------------ */

/* The LRU's hash of the key: the counting filter hashes inside and shows
 * no hash, so the seen-test computes one of its own. */
static struct bc_hash128 cbloom_hash(const struct bc_seen *s, const void *key,
                                     size_t len)
{
    XXH128_hash_t x = XXH3_128bits_withSeed(len ? key : "", len, s->seed);
    struct bc_hash128 h = {x.low64, x.high64};
    return h;
}

static bool cbloom_test_and_add(struct bc_seen *s, const void *key, size_t len,
                                struct bc_hash128 h)
{
    (void)h;
    if (bc_cbloom_contains(s->tier1, key, len))
        return false;
    bc_cbloom_add(s->tier1, key, len);
    return true;
}

static bool cbloom_contains(const struct bc_seen *s, const void *key,
                            size_t len, struct bc_hash128 h)
{
    (void)h;
    return bc_cbloom_contains(s->tier1, key, len);
}

/* A proven false positive's counters go up, so that forgetting it later
 * takes back what it added and nothing of its neighbours'. */
static void cbloom_add(struct bc_seen *s, const void *key, size_t len,
                       struct bc_hash128 h)
{
    (void)h;
    bc_cbloom_add(s->tier1, key, len);
}

static enum bc_status cbloom_remove(struct bc_seen *s, const void *key,
                                    size_t len)
{
    return bc_cbloom_remove(s->tier1, key, len);
}

static void cbloom_stats(const struct bc_seen *s, struct bc_seen_stats *out)
{
    bc_cbloom_stats(s->tier1, &out->cbloom);
    out->kind = BC_SEEN_COUNTING;
}

static enum bc_status cbloom_save(const struct bc_seen *s, const char *path)
{
    return bc_cbloom_save(s->tier1, path);
}

static enum bc_status cbloom_load(const char *path, void **tier1, uint64_t *now)
{
    struct bc_cbloom *cb;
    enum bc_status st = bc_cbloom_load(path, &cb);
    if (st == BC_OK) {
        *tier1 = cb;
        *now = 0;
    }
    return st;
}

static void cbloom_free(void *tier1)
{
    bc_cbloom_free(tier1);
}

static const struct tier1_ops cbloom_ops = {
    .hash = cbloom_hash,
    .test_and_add = cbloom_test_and_add,
    .contains = cbloom_contains,
    .add = cbloom_add,
    .prefetch = NULL,
    .remove = cbloom_remove,
    .stats = cbloom_stats,
    .save = cbloom_save,
    .load = cbloom_load,
    .free = cbloom_free,
    .forgets = false,
};

/* ---- a window filter (BC_SEEN_WINDOW_COUNT, BC_SEEN_WINDOW_TIME) ------- */

static struct bc_hash128 window_hash(const struct bc_seen *s, const void *key,
                                     size_t len)
{
    return bc_window_hash(s->tier1, key, len);
}

static bool window_test_and_add(struct bc_seen *s, const void *key, size_t len,
                                struct bc_hash128 h)
{
    (void)key, (void)len;
    return bc_window_test_and_add_hash(s->tier1, h, s->now);
}

static bool window_contains(const struct bc_seen *s, const void *key,
                            size_t len, struct bc_hash128 h)
{
    (void)key, (void)len;
    return bc_window_contains_hash(s->tier1, h, s->now);
}

/* The window's test-and-add inserts only keys it finds new: a proven
 * false positive goes into the current generation here. */
static void window_add(struct bc_seen *s, const void *key, size_t len,
                       struct bc_hash128 h)
{
    (void)key, (void)len;
    bc_window_add_hash(s->tier1, h, s->now);
}

static void window_prefetch(const struct bc_seen *s, struct bc_hash128 h)
{
    bc_window_prefetch(s->tier1, h);
}

static void window_stats(const struct bc_seen *s, struct bc_seen_stats *out)
{
    bc_window_stats(s->tier1, s->now, &out->window);
    out->kind = out->window.kind == BC_WINDOW_COUNT ? BC_SEEN_WINDOW_COUNT
                                                    : BC_SEEN_WINDOW_TIME;
}

static enum bc_status window_save(const struct bc_seen *s, const char *path)
{
    return bc_window_save(s->tier1, path);
}

/* A window's clock comes back with it: its generations are as old as they
 * were when saved. */
static enum bc_status window_load(const char *path, void **tier1, uint64_t *now)
{
    struct bc_window *w;
    enum bc_status st = bc_window_load(path, &w);
    if (st == BC_OK) {
        struct bc_window_stats ws;
        bc_window_stats(w, 0, &ws);
        *tier1 = w;
        *now = ws.now;
    }
    return st;
}

static void window_free(void *tier1)
{
    bc_window_free(tier1);
}

static const struct tier1_ops window_ops = {
    .hash = window_hash,
    .test_and_add = window_test_and_add,
    .contains = window_contains,
    .add = window_add,
    .prefetch = window_prefetch,
    .remove = NULL,
    .stats = window_stats,
    .save = window_save,
    .load = window_load,
    .free = window_free,
    .forgets = true,
};

/* ---- creating and loading ---------------------------------------------- */

/* A switch without default: -Wswitch names a kind added and forgotten. */
const char *bc_seen_kind_name(enum bc_seen_kind kind)
{
    switch (kind) {
    case BC_SEEN_BLOOM_CLASSIC:
        return "bloom-classic";
    case BC_SEEN_BLOOM_BLOCKED:
        return "bloom-blocked";
    case BC_SEEN_COUNTING:
        return "counting";
    case BC_SEEN_WINDOW_COUNT:
        return "window-count";
    case BC_SEEN_WINDOW_TIME:
        return "window-time";
    }
    return "unknown";
}

void bc_seen_config_init(struct bc_seen_config *config)
{
    if (!config)
        return;
    config->kind = BC_SEEN_BLOOM_BLOCKED;
    config->expected = BC_SEEN_DEFAULT_EXPECTED;
    config->fp_rate = BC_SEEN_DEFAULT_FP_RATE;
    config->seed = 0;
    config->lru_capacity = BC_SEEN_DEFAULT_LRU;
    config->lru_max_bytes = 0;
    config->window = 0;
    config->window_generations = 0;
    config->window_segment_bits = 0;
}

/* Wrap a tier 1 (taken over, freed on failure) and a new LRU into a
 * seen-test. */
static enum bc_status assemble(const struct tier1_ops *ops, void *tier1,
                               const struct bc_seen_config *config, bool loaded,
                               struct bc_seen **out)
{
    enum bc_status st = BC_ERR_NOMEM;
    struct bc_seen *s = calloc(1, sizeof(*s));
    if (!s)
        goto out_free_tier1;
    st = bc_lru_create_slab(config->lru_capacity, sizeof(struct bc_hash128),
                            config->lru_max_bytes, &s->lru);
    if (st != BC_OK)
        goto out_free_seen;
    s->ops = ops;
    s->tier1 = tier1;
    s->loaded = loaded;
    *out = s;
    return BC_OK;

out_free_seen:
    free(s);
out_free_tier1:
    ops->free(tier1);
    return st;
}

/* A window filter as the config asks for (its kind given). */
static enum bc_status create_window(const struct bc_seen_config *config,
                                    enum bc_window_kind kind,
                                    struct bc_window **out)
{
    struct bc_window_config wc;
    bc_window_config_init(&wc);
    wc.kind = kind;
    wc.window = config->window;
    wc.capacity = config->expected;
    wc.p = config->fp_rate;
    if (config->window_generations)
        wc.generations = config->window_generations;
    wc.segment_bits = config->window_segment_bits;
    wc.seed = config->seed;
    return bc_window_create(&wc, 0, out);
}

/* The one place that reads the kind: tier 1 and its table. */
enum bc_status bc_seen_create(const struct bc_seen_config *config,
                              struct bc_seen **out)
{
    if (!config || !out)
        return BC_ERR_INVALID_ARG;
    const struct tier1_ops *ops = NULL;
    enum bc_status st = BC_ERR_INVALID_ARG;
    struct bc_bloom *bloom = NULL;
    struct bc_cbloom *cbloom = NULL;
    struct bc_window *window = NULL;
    void *tier1 = NULL;
    switch (config->kind) {
    case BC_SEEN_BLOOM_CLASSIC:
    case BC_SEEN_BLOOM_BLOCKED:
        ops = &bloom_ops;
        st = bc_bloom_create(config->expected, config->fp_rate,
                             config->kind == BC_SEEN_BLOOM_CLASSIC
                                 ? BC_BLOOM_CLASSIC
                                 : BC_BLOOM_BLOCKED,
                             config->seed, 0, &bloom);
        tier1 = bloom;
        break;
    case BC_SEEN_COUNTING:
        ops = &cbloom_ops;
        st = bc_cbloom_create(config->expected, config->fp_rate, config->seed,
                              &cbloom);
        tier1 = cbloom;
        break;
    case BC_SEEN_WINDOW_COUNT:
    case BC_SEEN_WINDOW_TIME:
        ops = &window_ops;
        st =
            create_window(config,
                          config->kind == BC_SEEN_WINDOW_COUNT ? BC_WINDOW_COUNT
                                                               : BC_WINDOW_TIME,
                          &window);
        tier1 = window;
        break;
    }
    if (st != BC_OK) /* also a kind outside the enum (ops NULL) */
        return st;
    st = assemble(ops, tier1, config, false, out);
    if (st == BC_OK)
        (*out)->seed = config->seed;
    return st;
}

enum bc_status bc_seen_load(const char *path,
                            const struct bc_seen_config *config,
                            struct bc_seen **out)
{
    if (!path || !config || !out)
        return BC_ERR_INVALID_ARG;
    /* Each loader checks its file's magic first: BC_ERR_FORMAT passes the
     * file to the next one. */
    static const struct tier1_ops *const tables[] = {&bloom_ops, &window_ops,
                                                     &cbloom_ops};
    enum bc_status st = BC_ERR_FORMAT;
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        void *tier1;
        uint64_t now;
        st = tables[i]->load(path, &tier1, &now);
        if (st == BC_ERR_FORMAT)
            continue;
        if (st != BC_OK)
            return st;
        /* The LRU starts empty: any seed serves a counting filter's LRU
         * hash, and the default 0 is kept. */
        st = assemble(tables[i], tier1, config, true, out);
        if (st == BC_OK)
            (*out)->now = now;
        return st;
    }
    return st;
}

enum bc_status bc_seen_save(const struct bc_seen *seen, const char *path)
{
    if (!seen)
        return BC_ERR_INVALID_ARG;
    return seen->ops->save(seen, path);
}

void bc_seen_free(struct bc_seen *seen)
{
    if (!seen)
        return;
    bc_lru_free(seen->lru);
    seen->ops->free(seen->tier1);
    free(seen);
}

/* ---- the two-tier verdict ---------------------------------------------- */

/* The rule that turns an LRU miss after a filter "maybe" into a proof. */
static bool lru_complete(const struct bc_seen *s)
{
    struct bc_lru_stats ls;
    bc_lru_stats(s->lru, &ls);
    return !s->loaded && !s->lru_failed && ls.evictions == 0;
}

/* The LRU's hash of a key: the second half of tier 1's hash. */
static uint64_t lru_hash(struct bc_hash128 h)
{
    return h.hi;
}

/*
 * The seen-test of a key whose hash is known, over any tier 1: the one
 * copy of the verdict drawn at the top of this file. The LRU's key is the
 * hash itself, its 16 bytes (the fingerprint), not the URL.
 */
/* Tier 2's verdict on a key tier 1 may have seen (h its hash): the LRU
 * holds it (DUPLICATE), or a complete LRU proves tier 1 wrong (NEW: a
 * false positive), or nothing can tell (PROBABLY_SEEN). A test refreshes
 * a key the LRU holds (touch); a peek leaves the LRU as it is. */
static enum bc_seen_verdict tier2_verdict(const struct bc_seen *seen,
                                          struct bc_hash128 h, bool touch)
{
    bool held = touch ? bc_lru_find(seen->lru, &h, sizeof(h), lru_hash(h))
                      : bc_lru_contains(seen->lru, &h, sizeof(h), lru_hash(h));
    if (held)
        return BC_SEEN_DUPLICATE;
    return lru_complete(seen) ? BC_SEEN_NEW : BC_SEEN_PROBABLY_SEEN;
}

static enum bc_status test_and_add_hashed(struct bc_seen *seen, const void *key,
                                          size_t len, struct bc_hash128 h,
                                          enum bc_seen_verdict *verdict)
{
    const struct tier1_ops *ops = seen->ops;
    seen->tested++;
    bool fresh = ops->test_and_add(seen, key, len, h);
    if (!fresh) {
        enum bc_seen_verdict v = tier2_verdict(seen, h, true);
        if (v == BC_SEEN_DUPLICATE) {
            seen->duplicate++;
            *verdict = v;
            return BC_OK;
        }
        if (v == BC_SEEN_PROBABLY_SEEN) {
            seen->probably_seen++;
            *verdict = v;
            return BC_OK;
        }
        seen->fp_caught++;
        ops->add(seen, key, len, h);
    }
    seen->verdict_new++;
    *verdict = BC_SEEN_NEW;
    /* NEW means the LRU does not hold the key: tier 1 had no trace of it
     * (and every LRU key went through tier 1), or the LRU just missed it.
     * So it is pushed without a second lookup - unless tier 1 forgets on
     * its own: a window's NEW key may be in the LRU from an earlier
     * window, and is then refreshed there. */
    if (fresh && ops->forgets &&
        bc_lru_find(seen->lru, &h, sizeof(h), lru_hash(h)))
        return BC_OK;
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
    return test_and_add_hashed(seen, key, len, seen->ops->hash(seen, key, len),
                               verdict);
}

/* Keys hashed ahead of the one being tested, in the batch call. */
#define BATCH_AHEAD 8u

/* Hash a key of the batch and start loading what its test will touch. */
static struct bc_hash128 hash_ahead(const struct bc_seen *seen, const void *key,
                                    size_t len)
{
    struct bc_hash128 h = seen->ops->hash(seen, key, len);
    if (seen->ops->prefetch)
        seen->ops->prefetch(seen, h);
    bc_lru_prefetch(seen->lru, lru_hash(h));
    return h;
}

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
    for (size_t i = 0; i < count && i < BATCH_AHEAD; i++)
        ring[i] = hash_ahead(seen, keys[i], lens[i]);
    for (size_t i = 0; i < count; i++) {
        struct bc_hash128 h = ring[i % BATCH_AHEAD];
        size_t ahead = i + BATCH_AHEAD;
        /* Halfway down the ring the bucket has arrived: fetch the entry
         * its chain starts with. */
        if (i + BATCH_AHEAD / 2 < count)
            bc_lru_prefetch_chain(
                seen->lru, lru_hash(ring[(i + BATCH_AHEAD / 2) % BATCH_AHEAD]));
        if (ahead < count)
            ring[ahead % BATCH_AHEAD] =
                hash_ahead(seen, keys[ahead], lens[ahead]);
        if (test_and_add_hashed(seen, keys[i], lens[i], h, &verdicts[i]) !=
            BC_OK)
            result = BC_ERR_NOMEM;
    }
    return result;
}

enum bc_status bc_seen_peek(const struct bc_seen *seen, const void *key,
                            size_t len, enum bc_seen_verdict *verdict)
{
    if (!seen || !verdict || (!key && len > 0))
        return BC_ERR_INVALID_ARG;
    struct bc_hash128 h = seen->ops->hash(seen, key, len);
    *verdict = seen->ops->contains(seen, key, len, h)
                   ? tier2_verdict(seen, h, false)
                   : BC_SEEN_NEW;
    return BC_OK;
}

enum bc_status bc_seen_forget(struct bc_seen *seen, const void *key, size_t len)
{
    if (!seen || (!key && len > 0))
        return BC_ERR_INVALID_ARG;
    if (!seen->ops->remove)
        return BC_ERR_UNSUPPORTED;
    struct bc_hash128 h = seen->ops->hash(seen, key, len);
    bool held = bc_lru_contains(seen->lru, &h, sizeof(h), lru_hash(h));
    /* A complete LRU knows every added key: one it lacks was never added,
     * and removing it from the filter would damage other keys. */
    if (!held && lru_complete(seen))
        return BC_ERR_NOT_FOUND;
    enum bc_status st = seen->ops->remove(seen, key, len);
    if (st != BC_OK)
        return st;
    bc_lru_remove(seen->lru, &h, sizeof(h), lru_hash(h));
    seen->forgotten++;
    return BC_OK;
}

/* ---- introspection ----------------------------------------------------- */

void bc_seen_stats(const struct bc_seen *seen, struct bc_seen_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!seen)
        return;
    out->tested = seen->tested;
    out->verdict_new = seen->verdict_new;
    out->duplicate = seen->duplicate;
    out->probably_seen = seen->probably_seen;
    out->fp_caught = seen->fp_caught;
    out->lru_complete = lru_complete(seen);
    bc_lru_stats(seen->lru, &out->lru);
    seen->ops->stats(seen, out);
    out->forgotten = seen->forgotten;
}

const struct bc_bloom *bc_seen_bloom(const struct bc_seen *seen)
{
    return seen && seen->ops == &bloom_ops ? seen->tier1 : NULL;
}

const struct bc_window *bc_seen_window(const struct bc_seen *seen)
{
    return seen && seen->ops == &window_ops ? seen->tier1 : NULL;
}

void bc_seen_set_clock(struct bc_seen *seen, uint64_t now)
{
    if (seen && now > seen->now)
        seen->now = now;
}
