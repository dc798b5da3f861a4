/*
 * bloom.c - the Bloom filter: tier 1 of the URL-seen test.
 *
 * THE PROBLEM
 * A crawler meets every popular URL thousands of times and must fetch it
 * once, so for every link it asks "have I seen this URL?". An exact set of
 * 10^9 URLs of ~80 bytes needs ~100 GB with its overhead; the question must
 * be answered ~10^4 times per second per core, and the answer may be wrong
 * in one direction only: saying "seen" for a new URL loses one page, saying
 * "new" for a seen URL fetches a page twice (and can loop for ever).
 *
 * THE IDEA (Bloom, CACM 1970)
 * Keep m bits, all zero. To add a key, hash it to k positions and set those
 * bits. To test a key, look at its k positions: if any is zero the key was
 * never added (certain); if all are set it probably was - or the bits were
 * set by other keys, a false positive.
 *
 *     add("a")   add("b")      test("c")           test("d")
 *      |  |  |    |  |  |       |   |  |            |  |   |
 *     [1 0 1 0 0 1 1 0 1 0 ...] 0 -> "new", certain  all 1 -> "maybe"
 *
 * THE MATH (bloom_math.c has the derivation)
 * With n keys in m bits and k probes the false-positive rate is about
 * (1 - e^(-k n / m))^k. For a target rate p, m = ceil(-n ln p / (ln 2)^2)
 * and k = round((m/n) ln 2): 9.6 bits and 7 probes per key at p = 1 %,
 * independent of the key's length. 10^9 URLs at 1 % fit in 1.2 GB.
 *
 * HASHING (bloom_int.h)
 * One XXH3-128 hash per key (Collet; ~0.1 ns per byte) gives two 64-bit
 * halves h1, h2. The k positions come from enhanced double hashing,
 * g_i = h1 + i h2 + (i^3 - i)/6, which Kirsch and Mitzenmacher (2006)
 * showed keeps the rate of k independent hashes, reduced to [0, m) by
 * multiply-shift. Everything is 64-bit: a 32-bit position cannot address a
 * filter of 9.6 * 10^9 bits, and libraries that truncate lose a third of
 * their accuracy at 10^9 keys.
 *
 * TWO LAYOUTS
 *   classic: the k probes fall anywhere in the array. On a filter larger
 *            than the caches each probe is a cache miss: k misses per query.
 *   blocked: the hash picks one 64-byte cache line (512 bits) and all k
 *            probes fall inside it (Putze, Sanders, Singler 2007): one miss
 *            per query. Blocks receive unequal numbers of keys, so for the
 *            same p it needs ~3-15 % more bits (sized by the Poisson
 *            mixture, bloom_math.c).
 *
 *     classic  |..1.....1..........1.....1...1.......1.....1..|  k lines
 *     blocked  |........|..1.1.11.1..1.1|........|........|...|  1 line
 *
 * MEMORY-LEVEL PARALLELISM
 * A single query waits ~80 ns for DRAM. The batch calls take many prehashed
 * keys and prefetch the lines of keys further down the batch, so that the
 * misses of ~10 keys are in flight at once: this, not the arithmetic, is
 * where the speed is.
 *
 * CONCURRENCY
 * With BC_BLOOM_CONCURRENT, bits are set with atomic fetch-or and no locks.
 * Test-and-add stays exact about "was new" when two threads add the same
 * key at once: each thread merges the key's probes per 64-bit word,
 * snapshots those words in order, finds the first word j0 missing some of
 * the key's bits, then fetch-ors
 * the key's words in DESCENDING order, j0 last, and answers "new" only if
 * that last fetch-or changed j0. A thread whose snapshot sees j0 already
 * completed by the other thread then sees, through the acquire/release
 * pairing, every higher word completed too, and answers "not new"; the two
 * answers can never both be "new", and (with no third key racing for the
 * same bits) never both be "not new" for a key that was absent. A third
 * key that sets exactly the missing bits in that instant is
 * indistinguishable from the other caller: the key is then "not new" for
 * all - one more false positive, at worst, never a second "new".
 *
 * FILE FORMAT (version 1; all integers little-endian)
 *
 *     offset  size  field
 *          0     8  magic "BCBLOOM\0"
 *          8     4  version = 1
 *         12     4  layout: 0 classic, 1 blocked
 *         16     8  m, bits addressed by the probes
 *         24     4  k
 *         28     4  hash id: 1 = XXH3-128 + the probes of bloom_int.h
 *         32     8  seed
 *         40     8  n the filter was sized for
 *         48     8  keys inserted (that were new)
 *         56     8  array bytes A (classic: ceil(m/64)*8; blocked: m/8)
 *         64     A  the bit array, as 64-bit little-endian words
 *     64 + A     8  XXH64 (seed 0) of every byte before it
 *
 * Saving writes a temporary file beside the target, fsyncs it, renames it
 * over the target and fsyncs the directory: a crash leaves the old file or
 * the new one, never a mix. A process killed while saving leaves its
 * temporary file (as large as the filter) behind; the next save removes
 * the temporary files of processes that no longer exist. Loading checks everything before it hands out
 * a filter.
 *
 * REFERENCES
 * B. H. Bloom, "Space/time trade-offs in hash coding with allowable
 * errors", CACM 13(7), 1970. A. Broder, M. Mitzenmacher, "Network
 * applications of Bloom filters: a survey", Internet Math. 1(4), 2004.
 * A. Kirsch, M. Mitzenmacher, "Less hashing, same performance", ESA 2006.
 * P. C. Dillinger, P. Manolios, "Bloom filters in probabilistic
 * verification", FMCAD 2004. F. Putze, P. Sanders, J. Singler, "Cache-,
 * hash- and space-efficient Bloom filters", WEA 2007. D. Lemire, "A fast
 * alternative to the modulo reduction", 2016.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bc_bigarray.h"
#include "bloom_int.h"
#include "bloomcrawl/bloom.h"

#define BLOCK_WORDS (BC_BLOOM_BLOCK_BITS / 64)
/* How far ahead the batch calls prefetch, in keys. */
#define PREFETCH_CLASSIC 8
#define PREFETCH_BLOCKED 32

#define FILE_MAGIC         "BCBLOOM"
#define FILE_VERSION       1u
#define FILE_HASH_ID       1u
#define FILE_HEADER_BYTES  64u
#define FILE_TRAILER_BYTES 8u

struct bc_bloom {
    uint64_t *words; /* the bit array, 64-byte aligned */
    uint64_t nwords; /* 64-bit words in it */
    uint64_t m;      /* bits addressed by the probes */
    uint64_t blocks; /* blocked layout: m / 512 */
    unsigned k;      /* probes per key */
    enum bc_bloom_layout layout;
    uint64_t seed;          /* XXH3 seed */
    uint64_t n_expected;    /* the n it was sized for */
    uint64_t inserts;       /* keys added that were new */
    bool concurrent;        /* atomic bit setting */
    struct bc_bigarray mem; /* words' memory (mmap'ed from 2 MiB on) */
};

/* ---- allocation ------------------------------------------------------ */

static uint64_t array_bytes(enum bc_bloom_layout layout, uint64_t m)
{
    return layout == BC_BLOOM_CLASSIC ? (m + 63) / 64 * 8 : m / 8;
}

/* Make an empty filter; m, k and layout already validated. */
static enum bc_status new_filter(uint64_t n, uint64_t m, unsigned k,
                                 enum bc_bloom_layout layout, uint64_t seed,
                                 unsigned flags, struct bc_bloom **out)
{
    uint64_t bytes = array_bytes(layout, m);
    if (bytes > SIZE_MAX)
        return BC_ERR_TOO_LARGE;
    struct bc_bloom *b = calloc(1, sizeof(*b));
    if (!b)
        return BC_ERR_NOMEM;
    if (!bc_bigarray_alloc(&b->mem, (size_t)bytes)) {
        free(b);
        return BC_ERR_NOMEM;
    }
    b->words = b->mem.p;
    b->nwords = bytes / 8;
    b->m = m;
    b->blocks = layout == BC_BLOOM_BLOCKED ? m / BC_BLOOM_BLOCK_BITS : 0;
    b->k = k;
    b->layout = layout;
    b->seed = seed;
    b->n_expected = n;
    b->concurrent = (flags & BC_BLOOM_CONCURRENT) != 0;
    *out = b;
    return BC_OK;
}

static bool valid_flags(unsigned flags)
{
    return (flags & ~BC_BLOOM_CONCURRENT) == 0;
}

enum bc_status bc_bloom_create(uint64_t n, double p,
                               enum bc_bloom_layout layout, uint64_t seed,
                               unsigned flags, struct bc_bloom **out)
{
    if (!out || !valid_flags(flags))
        return BC_ERR_INVALID_ARG;
    struct bc_bloom_sizing s;
    enum bc_status st = bc_bloom_size(n, p, layout, &s);
    if (st != BC_OK)
        return st;
    return new_filter(n, s.m_bits, s.k, layout, seed, flags, out);
}

enum bc_status bc_bloom_create_mk(uint64_t n, uint64_t m, unsigned k,
                                  enum bc_bloom_layout layout, uint64_t seed,
                                  unsigned flags, struct bc_bloom **out)
{
    if (!out || !valid_flags(flags))
        return BC_ERR_INVALID_ARG;
    struct bc_bloom_sizing s;
    enum bc_status st = bc_bloom_rate(n, m, k, layout, &s);
    if (st != BC_OK)
        return st;
    return new_filter(n, s.m_bits, k, layout, seed, flags, out);
}

void bc_bloom_free(struct bc_bloom *bloom)
{
    if (!bloom)
        return;
    bc_bigarray_free(&bloom->mem);
    free(bloom);
}

/* ---- the operations -------------------------------------------------- */

struct bc_hash128 bc_bloom_hash(const struct bc_bloom *bloom, const void *key,
                                size_t len)
{
    if (!bloom || (!key && len > 0)) {
        struct bc_hash128 none = {0, 0};
        return none;
    }
    XXH128_hash_t h = XXH3_128bits_withSeed(len ? key : "", len, bloom->seed);
    struct bc_hash128 out = {h.low64, h.high64};
    return out;
}

static void count_insert(struct bc_bloom *b)
{
    if (b->concurrent)
        __atomic_fetch_add(&b->inserts, 1, __ATOMIC_RELAXED);
    else
        b->inserts++;
}

static bool classic_contains(const struct bc_bloom *b, struct bc_hash128 h)
{
    struct bc_probe p;
    bc_probe_init(&p, h);
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t pos = bc_probe_next(&p, b->m);
        uint64_t word = b->concurrent ? __atomic_load_n(&b->words[pos >> 6],
                                                        __ATOMIC_RELAXED)
                                      : b->words[pos >> 6];
        if (!(word & (UINT64_C(1) << (pos & 63))))
            return false;
    }
    return true;
}

static bool classic_test_and_add(struct bc_bloom *b, struct bc_hash128 h)
{
    struct bc_probe p;
    uint64_t missing = 0;
    bc_probe_init(&p, h);
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t pos = bc_probe_next(&p, b->m);
        uint64_t bit = UINT64_C(1) << (pos & 63);
        uint64_t old = b->words[pos >> 6];
        b->words[pos >> 6] = old | bit;
        missing |= bit & ~old;
    }
    return missing != 0;
}

/* The descending fetch-or protocol described at the top of this file, over
 * count (word index, mask) pairs in probe order, each word at most once. */
static bool atomic_claim(uint64_t *words, const uint64_t *index,
                         const uint64_t *mask, unsigned count)
{
    unsigned j0 = count;
    for (unsigned j = 0; j < count; j++) {
        uint64_t w = __atomic_load_n(&words[index[j]], __ATOMIC_ACQUIRE);
        if ((w & mask[j]) != mask[j]) {
            j0 = j;
            break;
        }
    }
    if (j0 == count)
        return false;
    for (unsigned j = count - 1; j > j0; j--)
        __atomic_fetch_or(&words[index[j]], mask[j], __ATOMIC_ACQ_REL);
    uint64_t old =
        __atomic_fetch_or(&words[index[j0]], mask[j0], __ATOMIC_ACQ_REL);
    return (old & mask[j0]) != mask[j0];
}

static bool classic_test_and_add_atomic(struct bc_bloom *b, struct bc_hash128 h)
{
    /* The protocol needs each word once: two probes of one key in the same
     * word (or on the same bit) would otherwise let the descending pass
     * set j0's bit before j0's own fetch-or, and nobody would claim the
     * key. So the probes are merged per word, in order of first use. */
    uint64_t index[BC_BLOOM_MAX_K], mask[BC_BLOOM_MAX_K];
    unsigned used = 0;
    struct bc_probe p;
    bc_probe_init(&p, h);
    for (unsigned i = 0; i < b->k; i++) {
        uint64_t pos = bc_probe_next(&p, b->m);
        unsigned j = 0;
        while (j < used && index[j] != pos >> 6)
            j++;
        if (j == used) {
            index[used] = pos >> 6;
            mask[used++] = 0;
        }
        mask[j] |= UINT64_C(1) << (pos & 63);
    }
    return atomic_claim(b->words, index, mask, used);
}

static uint64_t *block_of(const struct bc_bloom *b, struct bc_hash128 h)
{
    return b->words + bc_block_index(h, b->blocks) * BLOCK_WORDS;
}

/* The blocked layout probes its block bit by bit: building the eight word
 * masks first would cost store-forwarding stalls. The concurrent mode
 * needs the masks (one fetch-or per word) and builds them. */
static bool blocked_contains(const struct bc_bloom *b, struct bc_hash128 h)
{
    const uint64_t *block = block_of(b, h);
    uint64_t missing = 0;
    for (unsigned i = 0; i < b->k; i++) {
        unsigned bit = bc_block_bit(h, i);
        uint64_t word =
            b->concurrent ? __atomic_load_n(&block[bit >> 6], __ATOMIC_RELAXED)
                          : block[bit >> 6];
        missing |= (UINT64_C(1) << (bit & 63)) & ~word;
    }
    return missing == 0;
}

static bool blocked_test_and_add_atomic(struct bc_bloom *b, struct bc_hash128 h)
{
    uint64_t mask[BLOCK_WORDS], index[BLOCK_WORDS], used_mask[BLOCK_WORDS];
    unsigned used = 0;
    uint64_t base = (uint64_t)(block_of(b, h) - b->words);
    bc_block_masks(h, b->k, mask);
    for (unsigned w = 0; w < BLOCK_WORDS; w++) {
        if (mask[w]) {
            index[used] = base + w;
            used_mask[used++] = mask[w];
        }
    }
    return atomic_claim(b->words, index, used_mask, used);
}

static bool blocked_test_and_add(struct bc_bloom *b, struct bc_hash128 h)
{
    uint64_t *block = block_of(b, h);
    uint64_t missing = 0;
    for (unsigned i = 0; i < b->k; i++) {
        unsigned bit = bc_block_bit(h, i);
        uint64_t one = UINT64_C(1) << (bit & 63);
        uint64_t old = block[bit >> 6];
        missing |= one & ~old;
        block[bit >> 6] = old | one;
    }
    return missing != 0;
}

bool bc_bloom_contains_hash(const struct bc_bloom *bloom, struct bc_hash128 h)
{
    if (!bloom)
        return false;
    return bloom->layout == BC_BLOOM_CLASSIC ? classic_contains(bloom, h)
                                             : blocked_contains(bloom, h);
}

bool bc_bloom_test_and_add_hash(struct bc_bloom *bloom, struct bc_hash128 h)
{
    bool was_new;
    if (!bloom)
        return false;
    if (bloom->layout == BC_BLOOM_BLOCKED)
        was_new = bloom->concurrent ? blocked_test_and_add_atomic(bloom, h)
                                    : blocked_test_and_add(bloom, h);
    else if (bloom->concurrent)
        was_new = classic_test_and_add_atomic(bloom, h);
    else
        was_new = classic_test_and_add(bloom, h);
    if (was_new)
        count_insert(bloom);
    return was_new;
}

void bc_bloom_add_hash(struct bc_bloom *bloom, struct bc_hash128 h)
{
    (void)bc_bloom_test_and_add_hash(bloom, h);
}

void bc_bloom_add(struct bc_bloom *bloom, const void *key, size_t len)
{
    if (!key && len > 0)
        return;
    (void)bc_bloom_test_and_add_hash(bloom, bc_bloom_hash(bloom, key, len));
}

bool bc_bloom_contains(const struct bc_bloom *bloom, const void *key,
                       size_t len)
{
    if (!key && len > 0)
        return false;
    return bc_bloom_contains_hash(bloom, bc_bloom_hash(bloom, key, len));
}

bool bc_bloom_test_and_add(struct bc_bloom *bloom, const void *key, size_t len)
{
    if (!key && len > 0)
        return false;
    return bc_bloom_test_and_add_hash(bloom, bc_bloom_hash(bloom, key, len));
}

/* ---- batches: prefetch ahead, then work ------------------------------ */

void bc_bloom_prefetch(const struct bc_bloom *b, struct bc_hash128 h)
{
    if (!b)
        return;
    if (b->layout == BC_BLOOM_BLOCKED) {
        __builtin_prefetch(block_of(b, h), 1, 3);
        return;
    }
    struct bc_probe p;
    bc_probe_init(&p, h);
    for (unsigned i = 0; i < b->k; i++)
        __builtin_prefetch(&b->words[bc_probe_next(&p, b->m) >> 6], 1, 3);
}

static size_t prefetch_distance(const struct bc_bloom *b)
{
    return b->layout == BC_BLOOM_BLOCKED ? PREFETCH_BLOCKED : PREFETCH_CLASSIC;
}

void bc_bloom_test_and_add_batch(struct bc_bloom *bloom,
                                 const struct bc_hash128 *hashes, size_t count,
                                 bool *was_new)
{
    if (!hashes || !was_new)
        return;
    if (!bloom) {
        memset(was_new, 0, count * sizeof(*was_new));
        return;
    }
    size_t ahead = prefetch_distance(bloom);
    for (size_t i = 0; i < count && i < ahead; i++)
        bc_bloom_prefetch(bloom, hashes[i]);
    for (size_t i = 0; i < count; i++) {
        if (i + ahead < count)
            bc_bloom_prefetch(bloom, hashes[i + ahead]);
        was_new[i] = bc_bloom_test_and_add_hash(bloom, hashes[i]);
    }
}

void bc_bloom_contains_batch(const struct bc_bloom *bloom,
                             const struct bc_hash128 *hashes, size_t count,
                             bool *present)
{
    if (!hashes || !present)
        return;
    if (!bloom) {
        memset(present, 0, count * sizeof(*present));
        return;
    }
    size_t ahead = prefetch_distance(bloom);
    for (size_t i = 0; i < count && i < ahead; i++)
        bc_bloom_prefetch(bloom, hashes[i]);
    for (size_t i = 0; i < count; i++) {
        if (i + ahead < count)
            bc_bloom_prefetch(bloom, hashes[i + ahead]);
        present[i] = bc_bloom_contains_hash(bloom, hashes[i]);
    }
}

/* ---- introspection --------------------------------------------------- */

uint64_t bc_bloom_inserts(const struct bc_bloom *bloom)
{
    if (!bloom)
        return 0;
    return __atomic_load_n(&bloom->inserts, __ATOMIC_RELAXED);
}

void bc_bloom_clear(struct bc_bloom *bloom)
{
    if (!bloom)
        return;
    memset(bloom->words, 0, (size_t)(bloom->nwords * 8));
    bloom->inserts = 0;
}

/*
 * Estimate of the distinct keys behind x set bits out of m with k probes
 * (Swamidass and Baldi 2007): E[x] = m (1 - e^(-k n / m)) solved for n,
 *     n* = -(m / k) ln(1 - x / m).
 * A full array says nothing about n: x = m gives +infinity.
 */
static double distinct_estimate(double x, double m, double k)
{
    return -(m / k) * log1p(-x / m);
}

void bc_bloom_stats(const struct bc_bloom *bloom, struct bc_bloom_stats *out)
{
    if (!out)
        return;
    if (!bloom) {
        memset(out, 0, sizeof(*out));
        return;
    }
    const struct bc_bloom *b = bloom;
    struct bc_bloom_stats s = {
        .layout = b->layout,
        .m_bits = b->m,
        .bytes = b->nwords * 8,
        .k = b->k,
        .seed = b->seed,
        .n_expected = b->n_expected,
        .inserts = bc_bloom_inserts(b),
        .concurrent = b->concurrent,
        .mmapped = b->mem.mmapped,
    };
    if (b->layout == BC_BLOOM_CLASSIC) {
        for (uint64_t i = 0; i < b->nwords; i++)
            s.bits_set += (uint64_t)__builtin_popcountll(b->words[i]);
        s.fpr_estimated = pow((double)s.bits_set / (double)b->m, b->k);
        s.n_estimated =
            distinct_estimate((double)s.bits_set, (double)b->m, b->k);
        s.fpr_predicted =
            bc_bloom_fpr_classic((double)b->n_expected, (double)b->m, b->k);
    } else {
        /* Per block: a query is a false positive with probability about
         * (block fill)^k; a block of c bits set holds about
         * -(512/k) ln(1 - c/512) keys. A full block (c = 512) is counted
         * as 511.5 bits, so that one saturated block cannot make the whole
         * estimate infinite. */
        double fpr_sum = 0.0, n_sum = 0.0;
        const double bb = BC_BLOOM_BLOCK_BITS;
        for (uint64_t blk = 0; blk < b->blocks; blk++) {
            const uint64_t *w = b->words + blk * BLOCK_WORDS;
            unsigned c = 0;
            for (unsigned j = 0; j < BLOCK_WORDS; j++)
                c += (unsigned)__builtin_popcountll(w[j]);
            s.bits_set += c;
            if (c == 0)
                continue;
            double cf = c == BC_BLOOM_BLOCK_BITS ? bb - 0.5 : (double)c;
            fpr_sum += pow(cf / bb, b->k);
            n_sum += distinct_estimate(cf, bb, b->k);
        }
        s.fpr_estimated = fpr_sum / (double)b->blocks;
        s.n_estimated = n_sum;
        s.fpr_predicted =
            bc_bloom_fpr_blocked((double)b->n_expected, (double)b->m, b->k);
    }
    s.fill = (double)s.bits_set / (double)b->m;
    *out = s;
}

/* ---- persistence ----------------------------------------------------- */

static void encode_header(const struct bc_bloom *b,
                          unsigned char hdr[FILE_HEADER_BYTES])
{
    memset(hdr, 0, FILE_HEADER_BYTES);
    memcpy(hdr, FILE_MAGIC, sizeof(FILE_MAGIC)); /* with its NUL: 8 bytes */
    bc_put_le32(hdr + 8, FILE_VERSION);
    bc_put_le32(hdr + 12, (uint32_t)b->layout);
    bc_put_le64(hdr + 16, b->m);
    bc_put_le32(hdr + 24, b->k);
    bc_put_le32(hdr + 28, FILE_HASH_ID);
    bc_put_le64(hdr + 32, b->seed);
    bc_put_le64(hdr + 40, b->n_expected);
    bc_put_le64(hdr + 48, bc_bloom_inserts(b));
    bc_put_le64(hdr + 56, b->nwords * 8);
}

struct header {
    enum bc_bloom_layout layout;
    uint64_t m, seed, n, inserts, bytes;
    unsigned k;
};

/* Check a header; file_len is the whole file's length. The checksum is
 * checked by the caller once the array has been read. */
static enum bc_status decode_header(const unsigned char *hdr, uint64_t file_len,
                                    struct header *h)
{
    size_t magic_len = sizeof(FILE_MAGIC);
    if (file_len < magic_len)
        return memcmp(hdr, FILE_MAGIC, (size_t)file_len) == 0 ? BC_ERR_TRUNCATED
                                                              : BC_ERR_FORMAT;
    if (memcmp(hdr, FILE_MAGIC, magic_len) != 0)
        return BC_ERR_FORMAT;
    if (file_len < FILE_HEADER_BYTES + FILE_TRAILER_BYTES)
        return BC_ERR_TRUNCATED;
    if (bc_get_le32(hdr + 8) != FILE_VERSION)
        return BC_ERR_VERSION;
    uint32_t layout = bc_get_le32(hdr + 12);
    h->m = bc_get_le64(hdr + 16);
    h->k = bc_get_le32(hdr + 24);
    h->seed = bc_get_le64(hdr + 32);
    h->n = bc_get_le64(hdr + 40);
    h->inserts = bc_get_le64(hdr + 48);
    h->bytes = bc_get_le64(hdr + 56);
    if (h->bytes > BC_BLOOM_MAX_BITS / 8 + 8)
        return BC_ERR_CORRUPT;
    uint64_t want = FILE_HEADER_BYTES + h->bytes + FILE_TRAILER_BYTES;
    if (file_len < want)
        return BC_ERR_TRUNCATED;
    if (file_len > want)
        return BC_ERR_CORRUPT;
    if (layout > BC_BLOOM_BLOCKED || bc_get_le32(hdr + 28) != FILE_HASH_ID ||
        h->k < 1 || h->k > BC_BLOOM_MAX_K || h->m < 1 ||
        h->m > BC_BLOOM_MAX_BITS || h->n < 1)
        return BC_ERR_CORRUPT;
    h->layout = layout == 0 ? BC_BLOOM_CLASSIC : BC_BLOOM_BLOCKED;
    if (h->layout == BC_BLOOM_BLOCKED && h->m % BC_BLOOM_BLOCK_BITS != 0)
        return BC_ERR_CORRUPT;
    if (array_bytes(h->layout, h->m) != h->bytes)
        return BC_ERR_CORRUPT;
    return BC_OK;
}

enum bc_status bc_read_file(const char *path, uint64_t max_len,
                            unsigned char **data, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BC_ERR_IO;
    struct stat sb;
    unsigned char *buf = NULL;
    enum bc_status st = BC_ERR_IO;
    if (fstat(fd, &sb) != 0)
        goto out;
    st = BC_ERR_CORRUPT;
    if ((uint64_t)sb.st_size > max_len)
        goto out;
    size_t n = (size_t)sb.st_size;
    st = BC_ERR_NOMEM;
    buf = malloc(n ? n : 1);
    if (!buf)
        goto out;
    st = bc_read_all(fd, buf, n);
    if (st != BC_OK) {
        free(buf);
        goto out;
    }
    *data = buf;
    *len = n;
out:
    close(fd);
    return st;
}

/* fsync the directory holding path, so that a rename in it is durable. */
static enum bc_status sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t len = slash == path ? 1 : (size_t)(slash - path);
        if (len >= sizeof(dir))
            return BC_ERR_IO;
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return BC_ERR_IO;
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? BC_OK : BC_ERR_IO;
}

static enum bc_status write_filter(int fd, const struct bc_bloom *b)
{
    unsigned char hdr[FILE_HEADER_BYTES], trailer[FILE_TRAILER_BYTES];
    size_t bytes = (size_t)(b->nwords * 8);
    encode_header(b, hdr);
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    XXH64_update(&state, hdr, sizeof(hdr));
    bc_words_to_le(b->words, b->nwords);
    XXH64_update(&state, b->words, bytes);
    enum bc_status st = bc_write_all(fd, hdr, sizeof(hdr));
    if (st == BC_OK)
        st = bc_write_all(fd, b->words, bytes);
    bc_words_to_le(b->words, b->nwords); /* back to host order */
    if (st != BC_OK)
        return st;
    bc_put_le64(trailer, XXH64_digest(&state));
    return bc_write_all(fd, trailer, sizeof(trailer));
}

/*
 * Remove "<base>.tmp.<pid>" files beside path whose process no longer
 * exists (kill(pid, 0) fails with ESRCH): what saves killed midway left.
 * A pid that was reused by a live process keeps its file (the safe side).
 * Best effort: errors are ignored and errno is kept.
 */
static void remove_stale_tmp(const char *path)
{
    int saved = errno;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char dir[PATH_MAX];
    size_t dlen = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
    if (dlen >= sizeof(dir))
        return;
    memcpy(dir, slash ? path : ".", dlen);
    dir[dlen] = '\0';
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        goto out;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strncmp(name, base, blen) != 0 ||
            strncmp(name + blen, ".tmp.", 5) != 0)
            continue;
        const char *digits = name + blen + 5;
        size_t nd = strspn(digits, "0123456789");
        if (nd == 0 || nd > 9 || digits[nd] != '\0')
            continue;
        long pid = strtol(digits, NULL, 10);
        if (pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
            unlinkat(dirfd(d), name, 0);
    }
    closedir(d);
out:
    errno = saved;
}

enum bc_status bc_save_atomic(const char *path,
                              enum bc_status (*write)(int fd, const void *ctx),
                              const void *ctx)
{
    remove_stale_tmp(path);
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return BC_ERR_INVALID_ARG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return BC_ERR_IO;
    enum bc_status st = write(fd, ctx);
    if (st == BC_OK && fsync(fd) != 0)
        st = BC_ERR_IO;
    if (close(fd) != 0 && st == BC_OK)
        st = BC_ERR_IO;
    if (st == BC_OK && rename(tmp, path) != 0)
        st = BC_ERR_IO;
    if (st != BC_OK) {
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return st;
    }
    return sync_parent_dir(path);
}

static enum bc_status write_filter_ctx(int fd, const void *ctx)
{
    return write_filter(fd, ctx);
}

enum bc_status bc_bloom_save(const struct bc_bloom *bloom, const char *path)
{
    if (!bloom || !path)
        return BC_ERR_INVALID_ARG;
    return bc_save_atomic(path, write_filter_ctx, bloom);
}

/* Make the filter a header describes (empty array). */
static enum bc_status filter_for(const struct header *h, unsigned flags,
                                 struct bc_bloom **out)
{
    if (!valid_flags(flags))
        return BC_ERR_INVALID_ARG;
    enum bc_status st =
        new_filter(h->n, h->m, h->k, h->layout, h->seed, flags, out);
    if (st == BC_OK)
        (*out)->inserts = h->inserts;
    return st;
}

enum bc_status bc_bloom_load_mem(const void *data, size_t len, unsigned flags,
                                 struct bc_bloom **out)
{
    if (!data || !out || !valid_flags(flags))
        return BC_ERR_INVALID_ARG;
    const unsigned char *p = data;
    unsigned char hdr[FILE_HEADER_BYTES] = {0};
    memcpy(hdr, p, len < sizeof(hdr) ? len : sizeof(hdr));
    struct header h;
    enum bc_status st = decode_header(hdr, len, &h);
    if (st != BC_OK)
        return st;
    size_t body = FILE_HEADER_BYTES + (size_t)h.bytes;
    if (XXH64(p, body, 0) != bc_get_le64(p + body))
        return BC_ERR_CHECKSUM;
    struct bc_bloom *b;
    st = filter_for(&h, flags, &b);
    if (st != BC_OK)
        return st;
    memcpy(b->words, p + FILE_HEADER_BYTES, (size_t)h.bytes);
    bc_words_to_le(b->words, b->nwords); /* little-endian to host order */
    *out = b;
    return BC_OK;
}

enum bc_status bc_bloom_load(const char *path, unsigned flags,
                             struct bc_bloom **out)
{
    if (!path || !out || !valid_flags(flags))
        return BC_ERR_INVALID_ARG;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BC_ERR_IO;
    struct stat sb;
    unsigned char hdr[FILE_HEADER_BYTES] = {0};
    unsigned char trailer[FILE_TRAILER_BYTES];
    struct header h;
    struct bc_bloom *b = NULL;
    enum bc_status st = BC_ERR_IO;
    if (fstat(fd, &sb) != 0)
        goto out_close;
    size_t head =
        (uint64_t)sb.st_size < sizeof(hdr) ? (size_t)sb.st_size : sizeof(hdr);
    st = bc_read_all(fd, hdr, head);
    if (st != BC_OK)
        goto out_close;
    st = decode_header(hdr, (uint64_t)sb.st_size, &h);
    if (st != BC_OK)
        goto out_close;
    st = filter_for(&h, flags, &b);
    if (st != BC_OK)
        goto out_close;
    st = bc_read_all(fd, b->words, (size_t)h.bytes);
    if (st == BC_OK)
        st = bc_read_all(fd, trailer, sizeof(trailer));
    if (st != BC_OK)
        goto out_free_filter;
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    XXH64_update(&state, hdr, sizeof(hdr));
    XXH64_update(&state, b->words, (size_t)h.bytes);
    if (XXH64_digest(&state) != bc_get_le64(trailer)) {
        st = BC_ERR_CHECKSUM;
        goto out_free_filter;
    }
    bc_words_to_le(b->words, b->nwords);
    close(fd);
    *out = b;
    return BC_OK;

out_free_filter:
    bc_bloom_free(b);
out_close:
    close(fd);
    return st;
}
