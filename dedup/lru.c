/*
 * lru.c - an exact LRU cache of recently seen keys: tier 2 of the seen-test.
 *
 * The problem
 * -----------
 * A crawler meets the same URLs again and again, and mostly soon after the
 * last time: every page of a site links the site's navigation, header and
 * footer; a hub page is linked from its neighbours. Tier 1, the Bloom filter,
 * remembers every URL ever added in about ten bits each, but its "maybe" is
 * only a maybe: it cannot tell a URL it saw from a false positive. An exact
 * set of every URL would answer exactly, but at 10^9 URLs of ~80 bytes it is
 * far too big. An exact set of the *recent* URLs is small, and it catches
 * most repeats, because repeats are mostly recent.
 *
 * How small? Broder, Najork and Wiener, "Efficient URL Caching for World
 * Wide Web Crawling" (WWW 2003), replayed the link stream of a 33-day crawl
 * of over a billion fetches through random, static, LRU and CLOCK caches and
 * through the theoretical limits (clairvoyant and infinite caches). Their
 * conclusion: a cache of roughly 50,000 entries has a hit rate of almost
 * 80 %, and the size sits at a knee - much smaller is much worse, much
 * larger gains little. That is our default (BC_SEEN_DEFAULT_LRU in seen.h).
 *
 * The idea
 * --------
 * Least recently used: keep the keys in recency order; a key that is looked
 * up and found, or added again, moves to the front (the most recent end);
 * a new key goes in at the front; when the cache is over capacity the key
 * at the back, the one unused for longest, is evicted. Two structures make
 * every step O(1):
 *
 *   - a hash table (uthash) from key bytes to entry, for the lookup;
 *   - a doubly linked list through the entries in recency order, for
 *     "move to front" and "evict the back" without a search.
 *
 * uthash brings the list with it: besides its bucket chains (hh_prev,
 * hh_next) it threads every entry on a list in the order added
 * (hh.prev/hh.next, from the head - the table pointer - to tbl->tail), and
 * HASH_ADD appends at the tail, HASH_DELETE unlinks from anywhere. That is
 * the recency list: the head is the back, evicted first; the tail is the
 * front. A new key is added at the tail as it is; a key used again is
 * unlinked from where it is and linked at the tail by hand (move_to_front()
 * below, the same relinking HASH_DELETE and HASH_ADD would do to the list,
 * without leaving its bucket: a re-add could allocate, and so fail, on a
 * hit). Until issue 25 the cache kept a list of its own (two more links
 * per entry) beside uthash's, and every insert and eviction relinked both.
 *
 * Both are intrusive: an entry is one malloc'ed block holding the uthash
 * handle and the key bytes themselves (a flexible array member), so an
 * insert costs one allocation and an eviction one free.
 *
 * The layout
 * ----------
 *
 *   struct bc_lru
 *   +-----------+     uthash bucket array (doubles when a chain reaches 10)
 *   | tbl     --+---> +------+------+------+------+-- ... --+
 *   | table     |     | b[0] | b[1] | b[2] | b[3] |         |
 *   | counters  |     +--+---+------+--+---+------+-- ... --+
 *   +-----------+        |             |   bucket chains (hh_next)
 *         | table: head  v             v
 *         |          +--------+    +--------+    +--------+
 *         +--------->| entry  |<-->| entry  |<-->| entry  |<-- tbl->tail
 *     back: evicted  | A      |    | B      |    | C      |    front: most
 *     first          +--------+    +--------+    +--------+    recent
 *                      recency list: uthash's hh.prev/hh.next
 *
 *   one entry, one allocation (LP64):
 *   +------------------------------------------------+------------------+
 *   | UT_hash_handle hh (56 bytes): tbl, prev, next, | key bytes (len,  |
 *   | hh_prev, hh_next, key -> , keylen, hashv       | not terminated)  |
 *   +------------------------------------------------+------------------+
 *   |<------------------- 56 bytes ----------------->|<----- len ----->|
 *
 * The slab mode (bc_lru_create_slab) keeps the same entries in one array
 * of capacity + 1 fixed-size slots, each with room for a key of up to
 * key_max bytes, allocated once:
 *
 *   slab: | slot 0 | slot 1 | ... | slot capacity |   stride = 56 + key_max
 *           entry + key bytes      (rounded up to 8)
 *
 * An insert takes a slot from the free list (or the next never-used one),
 * an eviction or removal gives it back: no malloc, no free, no malloc
 * header, and no failure but uthash's own table allocations. A full cache
 * without a byte limit does both at once (replace_head() below): the back
 * leaves the table and its slot, which the coming-evictions prefetch has
 * brought into the cache, takes the new key and goes in at the front.
 * Where uthash might allocate (the new key's chain about to reach its
 * doubling threshold), the new entry goes in first, into the spare slot
 * (the extra one is for that moment), and the back is evicted after; the
 * free list is last-in first-out, so the next insert writes the slot just
 * evicted. So while no key is used again the slots cycle in order, and the
 * back is always the slot after the last one evicted: the coming evictions
 * read the slab from one end to the other. The seen-test uses this mode
 * with 16-byte keys (its 128-bit fingerprints, seen.c): 72 bytes a slot.
 *
 * Hashing once
 * ------------
 * The seen-test hashes each key once (XXH3) for both tiers, so the caller
 * hands us a 64-bit hash and we never hash again: HASH_FIND_IN_BKT and
 * HASH_ADD_KEYPTR_BYHASHVALUE take it directly. uthash keeps an `unsigned`
 * hash and picks the bucket from its low bits, so the 64 bits are folded to
 * 32 with h ^ (h >> 32): every input bit still counts. Different keys may
 * share a hash; uthash then compares lengths and bytes, so the cache stays
 * exact (only slower, if a caller's hash were poor).
 *
 * Limits and failure
 * ------------------
 * Capacity is in entries and, optionally, in bytes of key data; eviction
 * runs until both hold. A key that can never fit (capacity 0, a key longer
 * than max_bytes, or longer than uthash's `unsigned` key length) is counted
 * as inserted and at once evicted, so the eviction counter - which the
 * seen-test's complete-LRU rule watches - stays truthful. uthash's default
 * on a failed allocation is exit(-1); a library must never exit, so it is
 * built with HASH_NONFATAL_OOM: a failed add leaves the table as it was and
 * clears the entry's hh.tbl, and we turn that into BC_ERR_NOMEM with nothing
 * changed. A new entry is put in before anything is evicted, or, in the
 * one-step replacement of a full slab cache, only where uthash cannot
 * allocate, so a failure never loses a key either.
 *
 * Cost
 * ----
 * find, contains, add, remove: O(1) expected: one bucket chain (the mean
 * chain is entries / buckets, at most 1/2 in a full cache of up to 2^23
 * entries) and one key compare on a hit.
 * Memory: 56 + len bytes per entry plus malloc's header (slab mode: a slot
 * of 56 + key_max rounded up to 8, for capacity + 1 slots), plus the
 * bucket array at 16 bytes a bucket; bc_lru_stats() reports the sum
 * without malloc's headers.
 * A full cache evicts at every insert; prefetch_evictions() below fetches
 * the entries and buckets of the coming evictions ahead of time. In the
 * seen-test's batch (every URL new, a full slab cache of 16-byte keys,
 * valgrind's count at n = 10^6) an insert with its eviction takes about
 * 126 instructions in one step, against 176 as an add and a delete. Blocks
 * of 2 MiB or more (a big slab or bucket array) are large zeroed arrays
 * of bc_bigarray.h (mmap'ed with a huge-page hint), so random accesses to
 * them do not also miss the TLB.
 * The first insert creates the table with two buckets per entry of
 * capacity, rounded up to a power of two (at least 32, at most 2^24):
 * 50,000 entries get 131,072 buckets, 2 MiB, at once. uthash doubles the
 * buckets only when one chain reaches 10 entries, and frees them only when
 * the cache is emptied. Why two: a full cache's insert relinks the entry
 * heading the new key's chain, and its eviction the entry before the
 * evicted one in its chain, whenever those chains hold another entry -
 * each one more random cache line; at half the entries per bucket fewer
 * do (and an array of 2 MiB gets huge pages), which took the seen-test's
 * batch from 94 to 81 ns per URL (bench/results/scale-lru.md, issue 25),
 * for 1 MiB more. The default 50,000 entries of 80-byte URLs take about
 * 10 MB in all; as the seen-test keeps them (a slab of 16-byte
 * fingerprints), 5.7 MB (4.6 MB with one bucket per entry, 5.4 MB with
 * the second list before issue 25).
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/* A failed allocation inside uthash must not exit: roll back instead and
 * report it through hh.tbl == NULL (see the uthash user guide, "Out of
 * memory"). */
#define HASH_NONFATAL_OOM    1
#define uthash_malloc(sz)    lru_big_alloc(sz)
#define uthash_free(ptr, sz) lru_big_free(ptr, sz)
static void *lru_big_alloc(size_t size);
static void lru_big_free(void *p, size_t size);

/* uthash compares keys with memcmp(), a call into libc for every key of a
 * chain whose hash matches; the seen-test's keys are always 16 bytes (its
 * fingerprints), which two 8-byte compares settle inline. */
#define HASH_KEYCMP(a, b, n) lru_keycmp(a, b, n)
static inline int lru_keycmp(const void *a, const void *b, size_t len)
{
    if (len == 16) {
        uint64_t x[2], y[2];
        memcpy(x, a, 16);
        memcpy(y, b, 16);
        return (x[0] != y[0]) | (x[1] != y[1]);
    }
    return memcmp(a, b, len);
}
#include <uthash.h>

/* uthash starts a table with 32 buckets and doubles them only when a chain
 * grows past 10 entries, so a big cache would run with chains of several
 * entries - each one a cache miss on a lookup. uthash.h defines these two
 * macros unconditionally, so they are replaced here, after it; it reads
 * them only where it creates a table (HASH_MAKE_TABLE), which happens only
 * inside insert_evict(), where `lru` names the cache. So each table starts
 * with two buckets per entry of capacity (a power of two, 2^5 to 2^24; see
 * lru_int.h), and chains stay short without any rehashing.
 * tests/test_lru.c checks the bucket count of a new table. */
#undef HASH_INITIAL_NUM_BUCKETS_LOG2
#undef HASH_INITIAL_NUM_BUCKETS
#define HASH_INITIAL_NUM_BUCKETS_LOG2 (lru->bucket_log2)
#define HASH_INITIAL_NUM_BUCKETS      (1u << lru->bucket_log2)

#include "bc_bigarray.h"
#include "bloomcrawl/lru.h"
#include "lru_int.h"

struct lru_entry {
    UT_hash_handle hh;   /* the bucket chain, and the recency order in
                          * hh.prev/hh.next (older/newer); hh.key points at
                          * key[] */
    unsigned char key[]; /* hh.keylen bytes, owned */
};

/* The per-entry overhead the comment above states, where it applies. */
_Static_assert(sizeof(void *) != 8 || sizeof(unsigned) != 4 ||
                   sizeof(struct lru_entry) == 56,
               "struct lru_entry is 56 bytes on LP64");

struct bc_lru {
    struct lru_entry *table;      /* uthash head: the least recently used,
                                   * evicted first; NULL while empty */
    UT_hash_table *tbl;           /* the head's hh.tbl, kept here (the
                                   * lookup's dependency: see lookup());
                                   * NULL while empty */
    unsigned char *slab;          /* slab mode: slab_slots entries; else NULL */
    struct lru_entry *free_slots; /* slab slots given back, through hh.next */
    size_t slab_slots;            /* capacity + 1 */
    size_t slab_fresh;            /* slots never used yet: slab_fresh.. */
    size_t slab_stride;           /* bytes per slot */
    size_t key_max;               /* slab mode: longest key a slot holds */
    size_t len_limit;             /* longest key an entry can hold at all */
    size_t count;
    size_t capacity;
    size_t key_bytes;
    size_t max_bytes;     /* 0: no byte limit */
    unsigned bucket_log2; /* log2 of the buckets a new table starts with */
    bool replaces;        /* a full cache may use replace_head(): slab mode,
                           * no byte limit, capacity >= 2 */
    uint64_t hits;
    uint64_t misses;
    uint64_t inserts;
    uint64_t evictions;
};

/* uthash counts its items in an `unsigned` and holds capacity + 1 entries
 * for a moment during an add, so the capacity must leave it that room. */
#define LRU_MAX_CAPACITY ((size_t)UINT_MAX - 1)

/*
 * A function that only prefetches has no effect C can see, and GCC 12 at
 * -O1 and above deletes the calls to such a static function as dead code
 * unless it inlines it first: until issue 25, prefetch_evictions() below
 * compiled to nothing. A helper that only prefetches is therefore always
 * inlined into its callers, where the prefetches survive.
 */
#define LRU_PREFETCHER static inline __attribute__((always_inline)) void

/* The caller's 64-bit hash, folded to uthash's `unsigned`. */
static unsigned fold_hash(uint64_t hash)
{
    return (unsigned)(hash ^ (hash >> 32));
}

/*
 * The bucket array and the slab of a big cache are hit at random: with 4 KiB
 * pages every access would also miss the TLB (a 2 MiB bucket array spans
 * 512 pages, a 4 MiB slab 1,024), and on a virtual machine a TLB miss is a
 * two-level page walk. Blocks of BC_BIGARRAY_HUGE (2 MiB) or more are
 * therefore a bc_bigarray (bc_bigarray.h: mmap'ed, huge pages), as the
 * Bloom filter's array is; smaller ones come from malloc() (uthash zeroes
 * its buckets itself). uthash gives the size back at free time, which says
 * which of the two a block is.
 */
static void *lru_big_alloc(size_t size)
{
    if (size < BC_BIGARRAY_HUGE)
        return malloc(size);
    struct bc_bigarray a;
    return bc_bigarray_alloc(&a, size) ? a.p : NULL;
}

static void lru_big_free(void *p, size_t size)
{
    if (p == NULL)
        return;
    if (size < BC_BIGARRAY_HUGE) {
        free(p);
        return;
    }
    struct bc_bigarray a = {.p = p, .bytes = size, .mmapped = true};
    bc_bigarray_free(&a);
}

/* Can a key of len bytes be stored as one entry at all? */
static bool key_len_storable(size_t len)
{
    return len <= UINT_MAX && len <= SIZE_MAX - sizeof(struct lru_entry);
}

/* Can this cache hold a key of len bytes? len_limit is the least of the
 * limits on a key's length (key_len_storable, key_max in slab mode,
 * max_bytes when set), worked out when the cache is created. */
static bool key_fits(const struct bc_lru *lru, size_t len)
{
    return lru->capacity != 0 && len <= lru->len_limit;
}

/* Memory for a new entry of a key of len bytes (known to fit): a slab
 * slot, or one allocation. Never fails in slab mode: the slab has one slot
 * more than the capacity, for the entry added before the back is evicted. */
static struct lru_entry *entry_alloc(struct bc_lru *lru, size_t len)
{
    struct lru_entry *entry;

    if (lru->slab == NULL)
        return malloc(sizeof(*entry) + len);
    entry = lru->free_slots;
    if (entry != NULL) {
        lru->free_slots = entry->hh.next;
        return entry;
    }
    if (lru->slab_fresh == lru->slab_slots)
        return NULL; /* unreachable: count <= capacity before an insert */
    return (struct lru_entry *)(void *)(lru->slab +
                                        lru->slab_fresh++ * lru->slab_stride);
}

static void entry_free(struct bc_lru *lru, struct lru_entry *entry)
{
    if (lru->slab == NULL) {
        free(entry);
        return;
    }
    /* Last in, first out: the next insert reuses the slot just freed,
     * whose memory the eviction has just brought into the cache. */
    entry->hh.next = lru->free_slots;
    lru->free_slots = entry;
}

/*
 * uthash's HASH_FIND reaches the bucket array through the head entry
 * (head->hh.tbl). Here the head is the least recently used entry, and it
 * changes whenever a hit moves it to the tail or an insert evicts it, so
 * the next lookup's bucket address would wait for the line of an entry
 * that the step before has just written or fetched: lookups that could
 * overlap their cache misses would run one after the other. The table's
 * address is therefore kept in the cache itself (lru->tbl, which only the
 * first insert and the last removal change) and the bucket searched with
 * HASH_FIND_IN_BKT, the macro HASH_FIND_BYHASHVALUE runs. bench_dedup's
 * hits, which find the keys in the order they were added (each one the
 * head when it is found), went from 244 to 110 ns each on a slab cache of
 * 10^6 entries (medians of 3 alternating runs; bench/results/scale-lru.md).
 */
static struct lru_entry *lookup(const struct bc_lru *lru, const void *key,
                                size_t len, uint64_t hash)
{
    struct lru_entry *entry;
    unsigned keylen;
    UT_hash_table *tbl = lru->tbl;

    if (tbl == NULL || !key_len_storable(len))
        return NULL;
    if (len == 0)
        key = ""; /* memcmp() wants a valid pointer even for 0 bytes */
    keylen = (unsigned)len;
    unsigned hashv = fold_hash(hash);
    HASH_FIND_IN_BKT(tbl, hh, tbl->buckets[hashv & (tbl->num_buckets - 1)], key,
                     keylen, hashv, entry);
    return entry;
}

/*
 * A key used again becomes the most recent: it moves to the tail of
 * uthash's list, relinked by hand as HASH_DELETE and HASH_ADD would relink
 * it there, but without leaving its bucket (a re-add could allocate, and
 * so fail, on a hit). prev and next hold elements, not handles; hho (the
 * handle's offset in the entry) converts, as uthash's own macros do.
 */
static void move_to_front(struct bc_lru *lru, struct lru_entry *entry)
{
    UT_hash_table *tbl = entry->hh.tbl;

    if (entry->hh.next == NULL)
        return; /* the tail already */
    if (entry->hh.prev != NULL)
        HH_FROM_ELMT(tbl, entry->hh.prev)->next = entry->hh.next;
    else
        lru->table = entry->hh.next; /* it was the head */
    HH_FROM_ELMT(tbl, entry->hh.next)->prev = entry->hh.prev;
    entry->hh.prev = ELMT_FROM_HH(tbl, tbl->tail);
    entry->hh.next = NULL;
    tbl->tail->next = entry;
    tbl->tail = &entry->hh;
}

/* Take an entry out of both structures and free it. */
static void drop(struct bc_lru *lru, struct lru_entry *entry)
{
    HASH_DELETE(hh, lru->table, entry);
    if (lru->table == NULL)
        lru->tbl = NULL; /* uthash freed it with the last entry */
    lru->count--;
    lru->key_bytes -= entry->hh.keylen;
    entry_free(lru, entry);
}

static bool over_limit(const struct bc_lru *lru)
{
    return lru->count > lru->capacity ||
           (lru->max_bytes != 0 && lru->key_bytes > lru->max_bytes);
}

enum bc_status bc_lru_create(size_t capacity, size_t max_bytes,
                             struct bc_lru **out)
{
    struct bc_lru *lru;

    if (out == NULL)
        return BC_ERR_INVALID_ARG;
    if (capacity > LRU_MAX_CAPACITY)
        return BC_ERR_TOO_LARGE;
    lru = calloc(1, sizeof(*lru));
    if (lru == NULL)
        return BC_ERR_NOMEM;
    lru->table = NULL;
    lru->capacity = capacity;
    lru->max_bytes = max_bytes;
    lru->len_limit = UINT_MAX;
    if (lru->len_limit > SIZE_MAX - sizeof(struct lru_entry))
        lru->len_limit = SIZE_MAX - sizeof(struct lru_entry);
    if (max_bytes != 0 && max_bytes < lru->len_limit)
        lru->len_limit = max_bytes;
    lru->bucket_log2 = BC_LRU_MIN_BUCKETS_LOG2;
    /* The least 2^b >= 2 capacity, as 2^(b - 1) >= capacity (no overflow). */
    while (lru->bucket_log2 < BC_LRU_MAX_BUCKETS_LOG2 &&
           ((size_t)1 << (lru->bucket_log2 - 1)) < capacity)
        lru->bucket_log2++;
    *out = lru;
    return BC_OK;
}

enum bc_status bc_lru_create_slab(size_t capacity, size_t key_max,
                                  size_t max_bytes, struct bc_lru **out)
{
    struct bc_lru *lru;
    enum bc_status st;
    size_t stride;

    if (out == NULL)
        return BC_ERR_INVALID_ARG;
    if (capacity > LRU_MAX_CAPACITY || key_max > UINT_MAX)
        return BC_ERR_TOO_LARGE;
    /* A slot: the entry and key_max key bytes, rounded up to the entry's
     * alignment (8 on LP64) so that every slot is aligned. */
    stride =
        (sizeof(struct lru_entry) + key_max + _Alignof(struct lru_entry) - 1) /
        _Alignof(struct lru_entry) * _Alignof(struct lru_entry);
    if (capacity + 1 > SIZE_MAX / stride)
        return BC_ERR_TOO_LARGE;
    st = bc_lru_create(capacity, max_bytes, &lru);
    if (st != BC_OK)
        return st;
    /* Not touched until used: the pages of a big slab cost nothing until
     * the cache fills them. */
    lru->slab = lru_big_alloc((capacity + 1) * stride);
    if (lru->slab == NULL) {
        free(lru);
        return BC_ERR_NOMEM;
    }
    lru->slab_slots = capacity + 1;
    lru->slab_stride = stride;
    lru->key_max = key_max;
    lru->replaces = max_bytes == 0 && capacity >= 2;
    if (key_max < lru->len_limit)
        lru->len_limit = key_max;
    *out = lru;
    return BC_OK;
}

void bc_lru_free(struct bc_lru *lru)
{
    struct lru_entry *entry;
    struct lru_entry *next;

    if (lru == NULL)
        return;
    /* Free uthash's table and buckets (it touches no entry but the head),
     * then the entries along its list. */
    entry = lru->table;
    HASH_CLEAR(hh, lru->table);
    if (lru->slab == NULL) {
        for (; entry != NULL; entry = next) {
            next = entry->hh.next;
            free(entry);
        }
    }
    lru_big_free(lru->slab, lru->slab_slots * lru->slab_stride);
    free(lru);
}

uint64_t bc_lru_hash(const void *key, size_t len)
{
    if (key == NULL && len != 0)
        return 0;
    if (len == 0)
        key = "";
    return XXH3_64bits(key, len);
}

bool bc_lru_find(struct bc_lru *lru, const void *key, size_t len, uint64_t hash)
{
    struct lru_entry *entry;

    if (lru == NULL || (key == NULL && len != 0))
        return false;
    entry = lookup(lru, key, len, hash);
    if (entry == NULL) {
        lru->misses++;
        return false;
    }
    move_to_front(lru, entry);
    lru->hits++;
    return true;
}

void bc_lru_prefetch(const struct bc_lru *lru, uint64_t hash)
{
    if (lru == NULL || lru->tbl == NULL)
        return;
    const UT_hash_table *tbl = lru->tbl;
    /* uthash's bucket of a hash: its low bits (HASH_TO_BKT). */
    __builtin_prefetch(&tbl->buckets[fold_hash(hash) & (tbl->num_buckets - 1)]);
}

void bc_lru_prefetch_chain(const struct bc_lru *lru, uint64_t hash)
{
    if (lru == NULL || lru->tbl == NULL)
        return;
    const UT_hash_table *tbl = lru->tbl;
    const UT_hash_handle *head =
        tbl->buckets[fold_hash(hash) & (tbl->num_buckets - 1)].hh_head;
    if (head != NULL)
        __builtin_prefetch(head, 1, 3);
}

bool bc_lru_contains(const struct bc_lru *lru, const void *key, size_t len,
                     uint64_t hash)
{
    if (lru == NULL || (key == NULL && len != 0))
        return false;
    return lookup(lru, key, len, hash) != NULL;
}

static inline enum bc_status insert_new(struct bc_lru *lru, const void *key,
                                        size_t len, uint64_t hash);

enum bc_status bc_lru_add(struct bc_lru *lru, const void *key, size_t len,
                          uint64_t hash)
{
    struct lru_entry *entry;

    if (lru == NULL || (key == NULL && len != 0))
        return BC_ERR_INVALID_ARG;

    entry = lookup(lru, key, len, hash);
    if (entry != NULL) {
        move_to_front(lru, entry);
        return BC_OK;
    }
    return insert_new(lru, key, len, hash);
}

enum bc_status bc_lru_push(struct bc_lru *lru, const void *key, size_t len,
                           uint64_t hash)
{
    if (lru == NULL || (key == NULL && len != 0))
        return BC_ERR_INVALID_ARG;
    return insert_new(lru, key, len, hash);
}

/*
 * A full cache evicts its head entry at every insert, and each eviction
 * touches the entry, its hash bucket and the entry before it in the
 * bucket's chain (whose hh_next it relinks): the bucket's and the
 * neighbour's addresses are known only once the entry has arrived. Fetch
 * them ahead, along the list from the head: the entry LRU_EVICT_AHEAD
 * places from the head, and the bucket and chain neighbours of the entry
 * one place nearer, whose own line the previous call fetched. Every entry
 * this walk reads was fetched by an earlier call (or is in the cache
 * anyway: while no key is used again, the entries from the head on are
 * consecutive slab slots). Hits that move entries off the head's end
 * only waste a fetch.
 */
#define LRU_EVICT_AHEAD 4

LRU_PREFETCHER prefetch_evictions(const struct bc_lru *lru)
{
    const struct lru_entry *e = lru->table;

    for (int place = 0; place < LRU_EVICT_AHEAD - 1 && e != NULL; place++)
        e = e->hh.next;
    if (e == NULL)
        return;
    const UT_hash_table *tbl = e->hh.tbl;
    __builtin_prefetch(&tbl->buckets[e->hh.hashv & (tbl->num_buckets - 1)], 1,
                       3);
    /* Its neighbours in the bucket's chain, which the eviction relinks. */
    if (e->hh.hh_next != NULL)
        __builtin_prefetch(e->hh.hh_next, 1, 3);
    if (e->hh.hh_prev != NULL)
        __builtin_prefetch(e->hh.hh_prev, 1, 3);
    if (e->hh.next != NULL)
        __builtin_prefetch(e->hh.next, 1, 3);
}

/*
 * A full slab cache without a byte limit evicts exactly one entry, the
 * head, at every insert. Adding the new entry and then deleting the head
 * (HASH_ADD_KEYPTR_BYHASHVALUE, HASH_DELETE) does that in two passes over
 * uthash's bookkeeping, with the slot handed to the free list and back in
 * between. Here it is one step: the head leaves its bucket and the front
 * of the list, its slot takes the new key (the key pointer, the table
 * pointer and, for keys of one length, the length are already right),
 * and the slot goes in at the tail and at the front of the new key's
 * bucket. The two bucket steps are HASH_DEL_IN_BKT and HASH_ADD_TO_BKT,
 * the macros HASH_DELETE and HASH_ADD are themselves made of; uthash's
 * user guide does not list them, but they are what its documented
 * operations run, and the result is the table those would leave.
 *
 * One thing could differ: HASH_ADD_TO_BKT doubles the buckets when the
 * chain it grows reaches HASH_BKT_CAPACITY_THRESH (10) times the bucket's
 * expand_mult + 1 ("Expansion internals" in the user guide), and that
 * allocation can fail after the head is gone. So a chain that could reach
 * it takes the two-pass way, which fails with nothing lost; at half an
 * entry per bucket that is practically never. Returns whether it
 * replaced; when it did not, nothing has changed. Only for a cache whose
 * `replaces` is set: slab mode (no allocation to make or give back), no
 * byte limit (one eviction per insert, never more) and a capacity of at
 * least 2 (the head is not also the tail).
 */
static inline __attribute__((always_inline)) bool
replace_head(struct bc_lru *lru, const void *key, size_t len, unsigned hashv)
{
    struct lru_entry *victim = lru->table;
    UT_hash_table *tbl = lru->tbl;
    UT_hash_bucket *bucket = &tbl->buckets[hashv & (tbl->num_buckets - 1)];
    int oomed = 0; /* HASH_ADD_TO_BKT's expansion flag; stays 0 here */

    if (bucket->count + 1 >=
        (bucket->expand_mult + 1) * HASH_BKT_CAPACITY_THRESH)
        return false;
    HASH_DEL_IN_BKT(tbl->buckets[victim->hh.hashv & (tbl->num_buckets - 1)],
                    &victim->hh);
    lru->table = victim->hh.next;
    lru->table->hh.prev = NULL;
    if (len == 16)
        memcpy(victim->key, key, 16);
    else if (len != 0)
        memcpy(victim->key, key, len);
    lru->key_bytes += len;
    lru->key_bytes -= victim->hh.keylen;
    victim->hh.keylen = (unsigned)len;
    victim->hh.hashv = hashv;
    HASH_APPEND_LIST(hh, lru->table, victim);
    HASH_ADD_TO_BKT(*bucket, hh, &victim->hh, oomed);
    (void)oomed;
    lru->inserts++;
    lru->evictions++;
    return true;
}

/* Insert a key known not to be held, at the tail (the most recent), and
 * evict from the head: the general way, which replace_head() shortcuts. */
static enum bc_status insert_evict(struct bc_lru *lru, const void *key,
                                   size_t len, uint64_t hash)
{
    struct lru_entry *entry;

    if (!key_fits(lru, len)) {
        /* It could never stay: in and out at once. */
        lru->inserts++;
        lru->evictions++;
        return BC_OK;
    }

    entry = entry_alloc(lru, len);
    if (entry == NULL)
        return BC_ERR_NOMEM;
    /* The seen-test's fingerprints, 16 bytes, are copied inline, without a
     * call into libc. */
    if (len == 16)
        memcpy(entry->key, key, 16);
    else if (len != 0)
        memcpy(entry->key, key, len);
    HASH_ADD_KEYPTR_BYHASHVALUE(hh, lru->table, entry->key, (unsigned)len,
                                fold_hash(hash), entry);
    if (entry->hh.tbl == NULL) {
        /* uthash could not allocate and has rolled the table back. */
        entry_free(lru, entry);
        return BC_ERR_NOMEM;
    }
    lru->tbl = entry->hh.tbl; /* made by the first add */
    lru->count++;
    lru->key_bytes += len;
    lru->inserts++;

    /* The new entry fits on its own (checked above), so this stops before
     * it reaches the tail. */
    while (over_limit(lru)) {
        drop(lru, lru->table);
        lru->evictions++;
    }
    if (lru->count == lru->capacity)
        prefetch_evictions(lru);
    return BC_OK;
}

/* Insert a key known not to be held: a full cache replaces its head in one
 * step where it can, else the general way. */
static inline enum bc_status insert_new(struct bc_lru *lru, const void *key,
                                        size_t len, uint64_t hash)
{
    if (lru->count == lru->capacity && lru->replaces && len <= lru->len_limit &&
        replace_head(lru, key, len, fold_hash(hash))) {
        prefetch_evictions(lru);
        return BC_OK;
    }
    return insert_evict(lru, key, len, hash);
}

bool bc_lru_remove(struct bc_lru *lru, const void *key, size_t len,
                   uint64_t hash)
{
    struct lru_entry *entry;

    if (lru == NULL || (key == NULL && len != 0))
        return false;
    entry = lookup(lru, key, len, hash);
    if (entry == NULL)
        return false;
    drop(lru, entry);
    return true;
}

size_t bc_lru_initial_buckets(const struct bc_lru *lru)
{
    return lru == NULL ? 0 : (size_t)1 << lru->bucket_log2;
}

size_t bc_lru_buckets(const struct bc_lru *lru)
{
    if (lru == NULL || lru->tbl == NULL)
        return 0;
    return lru->tbl->num_buckets;
}

size_t bc_lru_count(const struct bc_lru *lru)
{
    return lru == NULL ? 0 : lru->count;
}

void bc_lru_stats(const struct bc_lru *lru, struct bc_lru_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof(*out));
    if (lru == NULL)
        return;
    out->count = lru->count;
    out->capacity = lru->capacity;
    out->key_bytes = lru->key_bytes;
    out->max_bytes = lru->max_bytes;
    out->hits = lru->hits;
    out->misses = lru->misses;
    out->inserts = lru->inserts;
    out->evictions = lru->evictions;
    if (lru->slab != NULL)
        out->bytes = lru->slab_slots * lru->slab_stride;
    else
        out->bytes = lru->count * sizeof(struct lru_entry) + lru->key_bytes;
    out->bytes += bc_lru_buckets(lru) * sizeof(UT_hash_bucket);
}
