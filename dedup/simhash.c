/*
 * simhash.c - near-duplicate pages: 64-bit simhash fingerprints and an
 * index of them by Hamming distance, the seen-test for content.
 *
 * THE PROBLEM
 * URL normalization merges the spellings it can prove equal. The same text
 * also sits behind URLs no rule can merge: session IDs in paths, mirrors,
 * print versions, calendars, pages that differ only in a timestamp or a
 * banner. Broder et al. (1997) found about a third of the pages they
 * crawled near-duplicates of others. A digest of the bytes (sha1) catches
 * exact copies only: one changed timestamp gives another digest. We want a
 * short fingerprint that changes a little when the text changes a little,
 * and a way to ask "did I see a fingerprint close to this one?" among
 * millions, as fast as the URL seen-test.
 *
 * THE IDEA (Charikar, STOC 2002)
 * Describe a text by a vector x of features: here each shingle (w
 * consecutive words) is a coordinate, its count the value. Similar texts
 * have vectors at a small angle theta, cos theta = x.y / (|x| |y|). Draw a
 * random hyperplane through the origin, with normal r: the two vectors
 * fall on different sides of it exactly when the hyperplane passes
 * between them, and for a uniformly random direction that happens with
 * probability theta / pi (in the plane of x and y, the hyperplane's trace
 * is a line through the origin at a uniform angle; it separates them for
 * an arc of 2 theta out of 2 pi). So with 64 hyperplanes, bit i being the
 * side of x on the i-th (sign of r_i . x), two fingerprints differ in
 *
 *     E[d] = 64 theta / pi     bits,  theta = acos(cos similarity)
 *
 * on average, each bit independently (Binomial(64, theta/pi)).
 * Computing r_i . x needs no r_i in memory: r_i's coordinate for a feature
 * is +1 or -1 from bit i of the feature's 64-bit hash, so
 *
 *     V[i] = sum over shingles s of (bit i of hash(s) ? +1 : -1)
 *     fingerprint bit i = 1 if V[i] > 0, else 0 (a tie, V[i] = 0, is 0)
 *
 * Random +-1 coordinates are not Gaussian directions, but over many
 * features the sums are close to normal and theta / pi holds;
 * test_simhash checks E[d] against 64 theta / pi on texts of known
 * overlap. Unrelated texts (theta = pi/2) differ in 32 bits on average,
 * with a variance of 16.
 *
 *     text:  "the quick brown fox jumps over"
 *     shingles (w = 3):   the quick brown | quick brown fox | ...
 *     hash(s)  1 0 1 1 ... 0        each bit votes +1 (1) or -1 (0)
 *     V        +3 -1 +1 -5 ... +2   summed over the shingles
 *     fp       1  0  1  0  ...  1   the signs
 *
 * WORDS AND SHINGLES
 * A word is a run of word bytes: ASCII letters (folded to lower case),
 * ASCII digits, and every byte >= 0x80. Punctuation, spaces and controls
 * separate. Bytes >= 0x80 are kept whole because they are UTF-8: "Café"
 * and "日本語" stay one word each instead of breaking into ASCII
 * fragments, with no Unicode tables and no decoding (they are not case-
 * folded, and a non-ASCII space or dash - U+00A0, U+2014 - joins the words
 * beside it: not rare, the PostgreSQL manual's pages have 33,984 U+00A0,
 * but the same in every copy of a text, so copies still agree; left so
 * that the scan decodes no UTF-8). ASCII folding makes "Next Page"
 * and "next page," one shingle: markup changes case and punctuation more
 * than it changes words. A word is hashed with XXH3-64 (the project's
 * hash, as bloom.c): a word of up to 16 bytes (almost all) zero-padded to
 * 16 with its length in the seed, so that every short word takes the same
 * path through XXH3 and no branch is mispredicted on its length; a longer
 * one as it is, in 32-byte pieces chained (each piece's hash the seed of
 * the next) beyond 32 bytes, so a word of any length is one word and the
 * state stays small.
 *
 * A shingle is w = 3 consecutive words (Broder's w-shingles), hashed with
 * XXH3-64 over its words' hashes. Single words (w = 1) ignore order: two
 * pages of one site's vocabulary look alike. Larger w makes each edit cost
 * more: changing one word of a text of N shingles replaces w of them, so
 * cos theta = (N - w) / N. A 500-word page has N = 501 - w shingles: with
 * w = 3, N = 498 and E[d] = 64 acos(495/498) / pi = 2.24 bits; with w = 4
 * (N = 497) it is 2.59, with w = 8 (N = 493, common for Jaccard
 * shingling) 3.67, beyond k = 3 on average.
 * Three words keep order and keep one edit below k.
 *
 * THE COUNTERS
 * Adding +-1 to 64 counters per shingle is the cost that matters (a page
 * has about one shingle per 6-7 bytes of text). We count ones instead:
 * V[i] = 2 ones[i] - N, so bit i = 1 when 2 ones[i] > N. The ones are
 * kept as 64 byte-wide counters (lanes), byte i counting bit i, all 64
 * in registers while a block's shingles are counted. With SSE2 (every
 * x86-64) the hash's 8 bytes are each copied 8 times across four 16-byte
 * registers (three rounds of unpacking), lane i's copy ANDed with bit
 * i mod 8 and compared with it, which gives -1 (0xff) where the bit is
 * set: subtracting that adds 1 to the lanes of the set bits, a shingle
 * in about 20 instructions with no table. Elsewhere a table maps each
 * byte value of a hash to its bits spread one per byte (0x05 ->
 * 0x0000000000010001), in eight 64-bit words: eight loads and eight
 * additions. Every 255 shingles, before a byte could overflow, the lanes
 * are added into 64-bit counters and cleared.
 *
 * THE SCAN
 * Text is read 64 bytes at a time: each byte folded and classified (word
 * byte or not) into a 64-bit mask - 16 bytes per step with SSE2 on
 * x86-64, a table elsewhere - and the words are the runs of ones: a word
 * starts at a 1 after a 0 (mask & ~(mask << 1)) and ends at a 1 before a
 * 0 (mask & ~(mask >> 1)), and the two masks are walked together with
 * count-trailing-zeros, a word a step: a branch per word, not per byte.
 * The last w words' hashes wait in a window, oldest first; the default w
 * has a copy of the loop of its own, in which the window's moves and the
 * shingle's XXH3 call (3 x 8 bytes) are compiled for it. Words inside
 * the block are hashed where they lie; a word that touches the block's end
 * may go on in the next bytes (or the next call), so its bytes wait in the
 * state (32 bytes of them, then chained as above). Chunks may split a word
 * anywhere. The state lives on the caller's stack (under 1 KB); feeding
 * allocates nothing and never fails. Cost: BENCHMARKS.md section 10.
 *
 * WHY k = 3 IN 64 BITS (Manku, Jain, Das Sarma, WWW 2007)
 * Google's crawler used 64-bit simhash over 8 billion pages, and a human-
 * judged sample put precision and recall both near 0.75 at k = 3: larger k
 * finds more near-duplicates and more unrelated pages, smaller k fewer of
 * both. Chance alone rarely lands within 3: two unrelated fingerprints
 * are within k with probability sum_{i<=k} C(64, i) / 2^64, for k = 3
 * 43745 / 2^64 = 2.4e-15; against 10^7 stored fingerprints a query meets
 * one by chance with probability 2.4e-8. What lands within 3 is similar
 * text - or the same boilerplate (below).
 *
 * WHAT IS LOST
 * Short pages. With N shingles one changed word moves the fingerprint by
 * E[d] = 64 acos((N - 3) / N) / pi bits: 8.9 at N = 32, 5.0 at N = 100,
 * 3.0 at N = 280, 2.2 at N = 498. Below a few hundred words only copies
 * with (almost) no change are found; and a page that short is mostly its
 * site's template (an error page, a login form, "page 2 of 2"), so two
 * different short pages share most of their shingles and would be called
 * duplicates of each other - a crawl that skips a near-duplicate's links
 * would lose real pages. So below min_shingles (32 by default, where one
 * edit already costs 3k bits) final() takes no fingerprint: the page is
 * neither a duplicate nor remembered. The same arithmetic is why recall
 * is not 1 even for long pages: at N = 498 one edit stays within 3 bits
 * with probability 0.82 (the binomial tail), not always. And weights are
 * all 1: boilerplate counts as much as content, and an edit to a long
 * navigation block moves the fingerprint as much as one to the article.
 *
 * THE INDEX: PERMUTED TABLES (Manku et al. 2007, section 3)
 * Which stored fingerprint is within k bits of q? Cut the 64 bits into b
 * blocks (b > k). A fingerprint within k of q differs from it in at most
 * k bits, so in at most k blocks: at least b - k blocks are equal to q's.
 * Keep one table per choice of b - k blocks, t = C(b, k) tables, each
 * keyed on the bits of its blocks (in the paper: a permutation brings them
 * to the front and the table is sorted). Whatever the k differing bits
 * are, the table of some b - k untouched blocks has the same key for q
 * and the match: looking up q's key in every table and comparing what is
 * there finds every fingerprint within k - none is missed.
 *
 *     k = 3, b = 4, 16-bit blocks A B C D: t = C(4, 3) = 4 tables
 *     a match differs in <= 3 bits, so in at most 3 of A, B, C, D:
 *     one block is untouched, and table "A" or "B" or "C" or "D" has it
 *     [A|B|C|D]  key A   key B   key C   key D
 *
 * Each table's bucket of q holds about n / 2^key_bits fingerprints (keys
 * of random fingerprints are uniform), so a query compares
 *
 *     probes = t n / 2^key_bits,   key_bits ~ 64 (b - k) / b,
 *
 * and memory is t entries per fingerprint. More blocks trade memory for
 * probes: for k = 3 and n = 10^7, b = 4 gives 4 tables of 16-bit keys and
 * 4 x 152.6 = 610 probes; b = 5 gives 10 tables of 25- or 26-bit keys,
 * 10 x 0.3 probes if every key had a bucket (10 x 9.5 with the buckets
 * of about 16 below), for 2 times the memory; b = 6, 20 tables of 31
 * to 33 bits. A probe is a test of 4 bytes in a contiguous array (16 at a
 * time, well under a nanosecond each); a table costs a cache miss or two
 * (BENCHMARKS.md section 10 measures both layouts). bc_simhash_index_layout()
 * takes the fewest tables (the least memory) whose probes per table stay
 * at or below max_probes (256) at n_expected, within 64 tables; for k = 3
 * that is b = 4 up to n = 256 x 2^16 = 1.7 10^7, b = 5 beyond. b blocks
 * of 64 / b bits: the first 64 mod b blocks get one bit more (b = 5:
 * 13, 13, 13, 13, 12); k = 0 is one table keyed on all 64 bits.
 *
 * BUCKETS, NOT SORTED ARRAYS
 * The paper's tables are sorted arrays built in batch. A crawl adds one
 * fingerprint at a time and queries in between; a sorted array costs O(n)
 * per insert, and a sorted array plus an unsorted tail makes every query
 * scan the tail. Here each table is a hash table of buckets selected by
 * the key's bits: 2^bucket_bits buckets, bucket_bits = min(key_bits,
 * ceil(log2(n_expected / 16)), clamped to 4..26), so a bucket is the
 * whole key (the key taken as it is) when there are enough fingerprints,
 * and a multiply-shift hash of the key into fewer buckets (about 16
 * fingerprints each) when there are not, to keep the bucket array small.
 * A table is an array of 2^bucket_bits buckets of 16 bytes; a bucket's
 * entries are one allocation, grown by half when full:
 *
 *     table:   | sig -> | len | cap |  ... 2^bucket_bits of them
 *                  |
 *                  v
 *     entries: | sig[0] ... sig[cap-1] | row[0] ... row[cap-1] |
 *                 4 bytes each            4 bytes each
 *     rows:    | fp | id |  per fingerprint, 16 bytes, in order of adds
 *
 * A bucket keeps each fingerprint folded to 32 bits, sig = low ^ high
 * (bit i is bit i xor bit i + 32). Folding never adds a difference: a sig
 * bit differs only if exactly one of its two fingerprint bits does, so
 * popcount(sig ^ sig') <= popcount(fp ^ fp'), and every fingerprint
 * within k of q has a sig within k of q's - none is missed. A far one
 * passes with probability sum_{i<=k} C(32, i) / 2^32 = 1.3e-6 (k = 3,
 * b = 4: bits i and i + 32 are never both key bits of one table, so all
 * 32 sig bits vary inside a bucket; with longer keys a few pairs are, and
 * the rate is somewhat higher), and its row, read to take the whole
 * distance, turns it away. Half the bytes to scan and to keep, for one
 * more read per match.
 *
 * A query computes its t buckets, prefetches them and then every line of
 * their entries (so that the cache misses overlap), scans each bucket's
 * sigs - contiguous, 16 tested at a time (scan_k()) - and reads a row only
 * when a sig is within k: the candidates of all t buckets are collected
 * first and their rows read together (verify_pending()), since each is two
 * misses in a row (the row's index, then the row) and a stored fingerprint
 * near q is a candidate in several tables. An add appends to one bucket
 * per table, its tails prefetched the same way. Memory per fingerprint:
 * 16 + 8 t bytes with full buckets (48 for t = 4, 96 for t = 10), plus up to
 * half of the entries' part as spare capacity and the rows' up to
 * doubling, plus malloc's header per bucket; and 16 bytes per bucket per
 * table from the start (4 MiB for t = 4 and 16-bit buckets). A query
 * returns the nearest match (ties: the earliest added). test_and_add adds
 * only fingerprints it did not find: a session-ID space of 10^5 copies of
 * one page is one entry, not 10^5 in one bucket of every table.
 *
 * FILE FORMAT (version 1; all integers little-endian)
 *
 *     offset  size  field
 *          0     8  magic "BCSIMHX\0"
 *          8     4  version = 1
 *         12     4  k
 *         16     4  b, the blocks of the layout
 *         20     4  zero (reserved)
 *         24     8  n_expected
 *         32     8  max_probes
 *         40     8  count n
 *         48    16  zero (reserved)
 *         64  16 n  n pairs (fp, id), 8 bytes each, in order of adds
 *  64 + 16 n     8  XXH64 (seed 0) of every byte before it
 *
 * The tables are not saved: loading adds the pairs again, in order, so
 * the rows (and the ties of queries) are as they were. Saving is atomic
 * (bc_save_atomic(), as bloom.c). The fingerprint's own configuration
 * (seed, w) is not in the file: fingerprints taken under another one do
 * not compare, and the caller records it (as the crawl state records its
 * settings).
 *
 * REFERENCES
 * M. S. Charikar, "Similarity estimation techniques from rounding
 * algorithms", STOC 2002. G. S. Manku, A. Jain, A. Das Sarma, "Detecting
 * near-duplicates for web crawling", WWW 2007. A. Z. Broder, S. C.
 * Glassman, M. S. Manasse, G. Zweig, "Syntactic clustering of the Web",
 * WWW 1997. M. X. Goemans, D. P. Williamson, "Improved approximation
 * algorithms for maximum cut...", JACM 42(6), 1995 (the hyperplane
 * argument). Y. Collet, xxHash. Redis's hyperloglog.c, for the shape of
 * this comment.
 */
#define _POSIX_C_SOURCE 200809L

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "bc_bigarray.h"
#include "bloom_int.h"
#include "bloomcrawl/simhash.h"

/* ---- words ----------------------------------------------------------- */

/* The byte a word keeps for c, 0 for a separator: digits and bytes >=
 * 0x80 as they are, ASCII letters in lower case. (The & 0xff changes no
 * value: clang checks the arm's constant for every c of the table, also
 * those that never take it, and would warn about 0xe0 + 0x20.) */
#define FOLD(c)                                                                \
    ((c) >= 0x80                  ? (c)                                        \
     : (c) >= 0x30 && (c) <= 0x39 ? (c)                                        \
     : (c) >= 0x61 && (c) <= 0x7a ? (c)                                        \
     : (c) >= 0x41 && (c) <= 0x5a ? ((c) + 0x20) & 0xff                        \
                                  : 0)
#define FOLD4(c)  FOLD(c), FOLD((c) + 1), FOLD((c) + 2), FOLD((c) + 3)
#define FOLD16(c) FOLD4(c), FOLD4((c) + 4), FOLD4((c) + 8), FOLD4((c) + 12)
#define FOLD64(c)                                                              \
    FOLD16(c), FOLD16((c) + 16), FOLD16((c) + 32), FOLD16((c) + 48)
static const unsigned char fold[256] = {FOLD64(0), FOLD64(64), FOLD64(128),
                                        FOLD64(192)};

#if !defined(__SSE2__)
/* spread[v]: bit i of the byte v moved to bit 8i (one per byte). */
#define SPREAD(v)                                                              \
    ((uint64_t)((v)&1) | (uint64_t)(((v) >> 1) & 1) << 8 |                     \
     (uint64_t)(((v) >> 2) & 1) << 16 | (uint64_t)(((v) >> 3) & 1) << 24 |     \
     (uint64_t)(((v) >> 4) & 1) << 32 | (uint64_t)(((v) >> 5) & 1) << 40 |     \
     (uint64_t)(((v) >> 6) & 1) << 48 | (uint64_t)(((v) >> 7) & 1) << 56)
#define SPREAD4(v) SPREAD(v), SPREAD((v) + 1), SPREAD((v) + 2), SPREAD((v) + 3)
#define SPREAD16(v)                                                            \
    SPREAD4(v), SPREAD4((v) + 4), SPREAD4((v) + 8), SPREAD4((v) + 12)
#define SPREAD64(v)                                                            \
    SPREAD16(v), SPREAD16((v) + 16), SPREAD16((v) + 32), SPREAD16((v) + 48)
static const uint64_t spread[256] = {SPREAD64(0), SPREAD64(64), SPREAD64(128),
                                     SPREAD64(192)};
#endif

/* Byte counters hold up to 255: flush the lanes after this many. */
#define LANE_MAX 255u

void bc_simhash_config_init(struct bc_simhash_config *config)
{
    if (!config)
        return;
    config->shingle_words = BC_SIMHASH_DEFAULT_SHINGLE_WORDS;
    config->min_shingles = BC_SIMHASH_DEFAULT_MIN_SHINGLES;
    config->seed = 0;
}

enum bc_status bc_simhash_init(struct bc_simhash *state,
                               const struct bc_simhash_config *config)
{
    if (!state)
        return BC_ERR_INVALID_ARG;
    struct bc_simhash_config def;
    if (!config) {
        bc_simhash_config_init(&def);
        config = &def;
    }
    memset(state, 0, sizeof(*state));
    if (config->shingle_words < 1 ||
        config->shingle_words > BC_SIMHASH_MAX_SHINGLE_WORDS ||
        config->min_shingles < 1)
        return BC_ERR_INVALID_ARG;
    state->shingle_words = config->shingle_words;
    state->min_shingles = config->min_shingles;
    state->seed = config->seed;
    state->piece_seed = config->seed;
    state->ready = 1;
    return BC_OK;
}

static void flush_lanes(struct bc_simhash *st)
{
    for (unsigned j = 0; j < 8; j++) {
        for (unsigned i = 0; i < 8; i++)
            st->ones[8 * j + i] += (st->lanes[j] >> (8 * i)) & 0xff;
        st->lanes[j] = 0;
    }
    st->lane_fill = 0;
}

/* Count n shingle hashes: the lanes in registers for up to 255 of them,
 * then back in the state (flushed when full). */
static void count_shingles(struct bc_simhash *st, const uint64_t *h, size_t n)
{
#if defined(__SSE2__)
    /* byte i of a 16-byte register, bit i mod 8 */
    const __m128i bit =
        _mm_set1_epi64x((long long)UINT64_C(0x8040201008040201));
    __m128i *lanes = (__m128i *)(void *)st->lanes;
#endif
    while (n > 0) {
        size_t m = LANE_MAX - st->lane_fill;
        if (m > n)
            m = n;
#if defined(__SSE2__)
        __m128i l0 = _mm_loadu_si128(lanes), l1 = _mm_loadu_si128(lanes + 1),
                l2 = _mm_loadu_si128(lanes + 2),
                l3 = _mm_loadu_si128(lanes + 3);
        for (size_t i = 0; i < m; i++) {
            /* each byte of the hash 8 times: bytes 0-1, 2-3, 4-5, 6-7 */
            __m128i x = _mm_loadl_epi64((const __m128i *)(const void *)(h + i));
            x = _mm_unpacklo_epi8(x, x);
            __m128i lo = _mm_unpacklo_epi16(x, x),
                    hi = _mm_unpackhi_epi16(x, x);
            __m128i b01 = _mm_unpacklo_epi32(lo, lo);
            __m128i b23 = _mm_unpackhi_epi32(lo, lo);
            __m128i b45 = _mm_unpacklo_epi32(hi, hi);
            __m128i b67 = _mm_unpackhi_epi32(hi, hi);
            /* -1 where the lane's bit is set: subtracted, it counts 1 */
            l0 = _mm_sub_epi8(l0, _mm_cmpeq_epi8(_mm_and_si128(b01, bit), bit));
            l1 = _mm_sub_epi8(l1, _mm_cmpeq_epi8(_mm_and_si128(b23, bit), bit));
            l2 = _mm_sub_epi8(l2, _mm_cmpeq_epi8(_mm_and_si128(b45, bit), bit));
            l3 = _mm_sub_epi8(l3, _mm_cmpeq_epi8(_mm_and_si128(b67, bit), bit));
        }
        _mm_storeu_si128(lanes, l0);
        _mm_storeu_si128(lanes + 1, l1);
        _mm_storeu_si128(lanes + 2, l2);
        _mm_storeu_si128(lanes + 3, l3);
#else
        uint64_t l0 = st->lanes[0], l1 = st->lanes[1], l2 = st->lanes[2],
                 l3 = st->lanes[3], l4 = st->lanes[4], l5 = st->lanes[5],
                 l6 = st->lanes[6], l7 = st->lanes[7];
        for (size_t i = 0; i < m; i++) {
            uint64_t x = h[i];
            l0 += spread[x & 0xff];
            l1 += spread[(x >> 8) & 0xff];
            l2 += spread[(x >> 16) & 0xff];
            l3 += spread[(x >> 24) & 0xff];
            l4 += spread[(x >> 32) & 0xff];
            l5 += spread[(x >> 40) & 0xff];
            l6 += spread[(x >> 48) & 0xff];
            l7 += spread[x >> 56];
        }
        st->lanes[0] = l0;
        st->lanes[1] = l1;
        st->lanes[2] = l2;
        st->lanes[3] = l3;
        st->lanes[4] = l4;
        st->lanes[5] = l5;
        st->lanes[6] = l6;
        st->lanes[7] = l7;
#endif
        st->shingles += m;
        st->lane_fill += (unsigned)m;
        if (st->lane_fill == LANE_MAX)
            flush_lanes(st);
        h += m;
        n -= m;
    }
}

/* A word's hash has come: put it in the window (the others move down
 * one), and when w words are there, hash the last w of them (oldest
 * first, as little-endian bytes) into *shingle and return true. w is a
 * constant where this is inlined for the default (block_words()): the
 * window's moves and XXH3's branches on the length then compile away. */
static inline __attribute__((always_inline)) bool
push_word_w(struct bc_simhash *st, uint64_t h, uint64_t *shingle, unsigned w)
{
    for (unsigned i = 0; i + 1 < w; i++)
        st->window[i] = st->window[i + 1];
    st->window[w - 1] = h;
    if (++st->words < w)
        return false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const void *bytes = st->window;
#else
    unsigned char bytes[8 * BC_SIMHASH_MAX_SHINGLE_WORDS];
    for (unsigned i = 0; i < w; i++)
        bc_put_le64(bytes + 8 * i, st->window[i]);
#endif
    *shingle = XXH3_64bits_withSeed(bytes, 8 * (size_t)w, st->seed);
    return true;
}

/* push_word_w() for the state's w, not inlined (a word cut by a chunk's
 * end). */
static bool push_word(struct bc_simhash *st, uint64_t h, uint64_t *shingle)
{
    return push_word_w(st, h, shingle, st->shingle_words);
}

/* Words of up to this many bytes are hashed as one 16-byte block. */
#define SHORT_WORD 16u

/* word_mask[len]: the first len bytes of 16 (little-endian), as two
 * 64-bit masks: word_hash()'s padding with no branch on the length.
 * M(b): the first b bytes of 8 (all 8 for b >= 8). (The & 63 changes no
 * value that is used: clang checks the shift of every arm, also of those
 * a b never takes, as in FOLD.) */
#define M(b)                                                                   \
    (((UINT64_C(1) << ((8 * (b)) & 63)) - 1) | ((b) >= 8 ? ~UINT64_C(0) : 0))
#define WM(len)                                                                \
    {                                                                          \
        M(len), (len) <= 8 ? 0 : M((len)-8)                                    \
    }
static const uint64_t word_mask[SHORT_WORD + 1][2] = {
    WM(0), WM(1),  WM(2),  WM(3),  WM(4),  WM(5),  WM(6),  WM(7), WM(8),
    WM(9), WM(10), WM(11), WM(12), WM(13), WM(14), WM(15), WM(16)};
#undef WM
#undef M

/*
 * The hash of a whole word of len folded bytes at p, where 16 bytes are
 * readable from p whatever len is. Up to 16 bytes: the bytes zero-padded
 * to 16, hashed with the length xor'ed into the seed (so "a" and "a\0"
 * differ) - one XXH3 call of a fixed length, whose path does not depend
 * on the word (no branch mispredicted per word). Longer: 32-byte pieces
 * chained, each piece's hash the seed of the next, then the last piece
 * (17 to 32 bytes, or fewer after a piece) hashed with the seed they
 * left.
 */
static inline uint64_t word_hash(const unsigned char *p, size_t len,
                                 uint64_t seed)
{
    if (len <= SHORT_WORD) {
        unsigned char pad[SHORT_WORD];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        uint64_t lo, hi;
        memcpy(&lo, p, 8);
        memcpy(&hi, p + 8, 8);
        /* keep the first len bytes */
        lo &= word_mask[len][0];
        hi &= word_mask[len][1];
        memcpy(pad, &lo, 8);
        memcpy(pad + 8, &hi, 8);
#else
        memset(pad, 0, sizeof(pad));
        memcpy(pad, p, len);
#endif
        return XXH3_64bits_withSeed(pad, SHORT_WORD, seed ^ len);
    }
    while (len > BC_SIMHASH_WORD_PIECE) {
        seed = XXH3_64bits_withSeed(p, BC_SIMHASH_WORD_PIECE, seed);
        p += BC_SIMHASH_WORD_PIECE;
        len -= BC_SIMHASH_WORD_PIECE;
    }
    return XXH3_64bits_withSeed(p, len, seed);
}

/* Bytes of a word that may go on in the next chunk: into st->word; a full
 * piece is chained into st->piece_seed when more bytes come, as
 * word_hash() chains it. */
static void word_append(struct bc_simhash *st, const unsigned char *p, size_t n)
{
    if (st->word_len + n <= SHORT_WORD) {
        /* The common case: a fixed-size copy (p has 16 readable bytes,
         * st->word room for them), without a call to memcpy. */
        memcpy(st->word + st->word_len, p, SHORT_WORD);
        st->word_len += (unsigned)n;
        return;
    }
    while (n > 0) {
        if (st->word_len == BC_SIMHASH_WORD_PIECE) {
            st->piece_seed = XXH3_64bits_withSeed(
                st->word, BC_SIMHASH_WORD_PIECE, st->piece_seed);
            st->word_len = 0;
            st->chained = 1;
        }
        size_t k = BC_SIMHASH_WORD_PIECE - st->word_len;
        if (k > n)
            k = n;
        memcpy(st->word + st->word_len, p, k);
        st->word_len += (unsigned)k;
        p += k;
        n -= k;
    }
}

/* The word waiting in st->word has ended: its shingle, if it makes one,
 * goes to *shingle (true) to be counted by the caller. */
static bool word_end(struct bc_simhash *st, uint64_t *shingle)
{
    /* st->word holds 32 bytes: word_hash() may read 16 of them whatever
     * the length. After chained pieces, the last piece is hashed by its
     * length, as word_hash() hashes it. */
    uint64_t h = st->chained ? XXH3_64bits_withSeed(st->word, st->word_len,
                                                    st->piece_seed)
                             : word_hash(st->word, st->word_len, st->seed);
    st->chained = 0;
    st->piece_seed = st->seed;
    st->word_len = 0;
    return push_word(st, h, shingle);
}

#if defined(__SSE2__)
/* 16 bytes classified at once: *folded gets them with 'A'..'Z' + 0x20;
 * bit i of the result is set when byte i is a word byte: in '0'..'9' or
 * 'a'..'z' once folded (signed compares, in which bytes >= 0x80 are
 * negative and outside both), or >= 0x80 (its sign bit). */
static inline unsigned classify16(__m128i v, __m128i *folded)
{
    const __m128i a1 = _mm_set1_epi8(0x40), z1 = _mm_set1_epi8(0x5b);
    const __m128i la = _mm_set1_epi8(0x60), lz = _mm_set1_epi8(0x7b);
    const __m128i d0 = _mm_set1_epi8(0x2f), d9 = _mm_set1_epi8(0x3a);
    __m128i up = _mm_and_si128(_mm_cmpgt_epi8(v, a1), _mm_cmplt_epi8(v, z1));
    __m128i f = _mm_add_epi8(v, _mm_and_si128(up, _mm_set1_epi8(0x20)));
    __m128i lo = _mm_and_si128(_mm_cmpgt_epi8(f, la), _mm_cmplt_epi8(f, lz));
    __m128i dg = _mm_and_si128(_mm_cmpgt_epi8(f, d0), _mm_cmplt_epi8(f, d9));
    *folded = f;
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(lo, dg), v));
}
#endif

/*
 * Classify n <= 64 bytes at p: out gets them folded (word bytes as the
 * word keeps them, separators anything), and bit i of the result is set
 * when byte i is a word byte - the answer of the table fold[]. With SSE2
 * (every x86-64), 16 bytes at a time, the last 16 again when n is not a
 * multiple (the same answer twice for the bytes in both); under 16
 * bytes - the text between two tags is often that short - the first and
 * last 8 (or 4) bytes side by side in one register, overlapping.
 */
static uint64_t classify(const unsigned char *p, size_t n, unsigned char *out)
{
#if defined(__SSE2__)
    __m128i f;
    if (n >= 16) {
        uint64_t mask = 0;
        for (size_t i = 0;; i += 16) {
            if (i + 16 > n)
                i = n - 16;
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            mask |= (uint64_t)classify16(v, &f) << i;
            _mm_storeu_si128((__m128i *)(void *)(out + i), f);
            if (i + 16 == n)
                return mask;
        }
    }
    if (n >= 8) {
        __m128i v = _mm_unpacklo_epi64(
            _mm_loadl_epi64((const __m128i *)(const void *)p),
            _mm_loadl_epi64((const __m128i *)(const void *)(p + n - 8)));
        unsigned m = classify16(v, &f);
        _mm_storel_epi64((__m128i *)(void *)out, f);
        _mm_storel_epi64((__m128i *)(void *)(out + n - 8),
                         _mm_unpackhi_epi64(f, f));
        return (m & 0xffu) | (uint64_t)(m >> 8) << (n - 8);
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        __m128i v = _mm_unpacklo_epi32(_mm_cvtsi32_si128((int)a),
                                       _mm_cvtsi32_si128((int)b));
        unsigned m = classify16(v, &f);
        a = (uint32_t)_mm_cvtsi128_si32(f);
        b = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(f, 4));
        memcpy(out, &a, 4);
        memcpy(out + n - 4, &b, 4);
        return (m & 0xfu) | (uint64_t)((m >> 4) & 0xfu) << (n - 4);
    }
#endif
    uint64_t mask = 0;
    for (size_t i = 0; i < n; i++) {
        out[i] = fold[p[i]];
        mask |= (uint64_t)(out[i] != 0) << i;
    }
    return mask;
}

/*
 * The whole words of n <= 64 classified bytes f (word bytes where mask
 * has a 1, none before the first word of this block): a word starts at a
 * 1 after a 0, mask & ~(mask << 1), and ends at a 1 before a 0, mask &
 * ~(mask >> 1); the two are walked together, a word a step. A word
 * touching the end (bit n - 1) may go on in the next bytes: it waits in
 * st->word. The shingles made go to shingles[ns...]; returns the new ns.
 */
static inline __attribute__((always_inline)) size_t
block_words(struct bc_simhash *st, const unsigned char *f, size_t n,
            uint64_t mask, uint64_t *shingles, size_t ns, unsigned w)
{
    uint64_t starts = mask & ~(mask << 1), ends = mask & ~(mask >> 1);
    unsigned open = 64;
    if (mask >> (n - 1) & 1) { /* the last word may go on */
        open = 63 - (unsigned)__builtin_clzll(starts);
        starts &= ~(UINT64_C(1) << open);
        ends &= ~(UINT64_C(1) << (n - 1));
    }
    while (starts) {
        unsigned s = (unsigned)__builtin_ctzll(starts);
        unsigned e = (unsigned)__builtin_ctzll(ends) + 1;
        ns += push_word_w(st, word_hash(f + s, e - s, st->seed), &shingles[ns],
                          w);
        starts &= starts - 1;
        ends &= ends - 1;
    }
    if (open < 64)
        word_append(st, f + open, n - open);
    return ns;
}

/* The words of n <= 64 classified bytes f (word bytes where mask has a
 * 1). A word touching the end may go on: it waits in st->word. The block's
 * shingles (at most 32: a word ending here and its separator take 2
 * bytes, or 1 for the word of earlier bytes) are counted together. */
static void feed_block(struct bc_simhash *st, const unsigned char *f, size_t n,
                       uint64_t mask)
{
    uint64_t shingles[32];
    size_t ns = 0;
    unsigned s = 0;
    if (st->word_len > 0) { /* the word of earlier bytes goes on */
        uint64_t run = ~mask;
        unsigned e = run ? (unsigned)__builtin_ctzll(run) : 64;
        if (e >= n) {
            word_append(st, f, n);
            return;
        }
        word_append(st, f, e);
        ns += word_end(st, &shingles[ns]);
        s = e;
    }
    mask &= ~UINT64_C(0) << s; /* s < n <= 64 */
    if (st->shingle_words == BC_SIMHASH_DEFAULT_SHINGLE_WORDS)
        ns = block_words(st, f, n, mask, shingles, ns,
                         BC_SIMHASH_DEFAULT_SHINGLE_WORDS);
    else
        ns = block_words(st, f, n, mask, shingles, ns, st->shingle_words);
    if (ns > 0)
        count_shingles(st, shingles, ns);
}

void bc_simhash_feed_text(struct bc_simhash *state, const char *text,
                          size_t len)
{
    if (!state || !state->ready || (!text && len > 0))
        return;
    const unsigned char *p = (const unsigned char *)text;
    /* word_hash() and word_append() read 16 bytes from a word's start:
     * the 16 after the block are zeroed, so that they read no garbage. */
    unsigned char folded[64 + SHORT_WORD];
    while (len > 0) {
        size_t n = len < 64 ? len : 64;
        uint64_t mask = classify(p, n, folded);
        memset(folded + n, 0, SHORT_WORD);
        feed_block(state, folded, n, mask);
        p += n;
        len -= n;
    }
}

/* A copy of state with its last word ended, as final() sees it. */
static void finished(const struct bc_simhash *state, struct bc_simhash *out)
{
    *out = *state;
    uint64_t shingle;
    if (out->word_len && word_end(out, &shingle))
        count_shingles(out, &shingle, 1);
}

uint64_t bc_simhash_shingles(const struct bc_simhash *state)
{
    if (!state || !state->ready)
        return 0;
    struct bc_simhash s;
    finished(state, &s);
    return s.shingles;
}

bool bc_simhash_final(const struct bc_simhash *state, uint64_t *fp)
{
    if (!state || !fp || !state->ready)
        return false;
    struct bc_simhash s;
    finished(state, &s);
    if (s.shingles < s.min_shingles)
        return false;
    flush_lanes(&s);
    uint64_t out = 0;
    for (unsigned i = 0; i < 64; i++)
        if (2 * s.ones[i] > s.shingles) /* V[i] = 2 ones - N > 0 */
            out |= UINT64_C(1) << i;
    *fp = out;
    return true;
}

unsigned bc_simhash_distance(uint64_t a, uint64_t b)
{
    return (unsigned)__builtin_popcountll(a ^ b);
}

/* ---- the index: layout ----------------------------------------------- */

/* Buckets aim at about this many fingerprints each when the keys allow
 * more buckets than that (THE INDEX: BUCKETS, NOT SORTED ARRAYS). */
#define BUCKET_FILL      16u
#define BUCKET_BITS_MIN  4u
#define BUCKET_BITS_MAX  26u
#define MAX_SEGMENTS     (BC_SIMHASH_MAX_K + 1)
#define MULTIPLY_SHIFT_C UINT64_C(0x9e3779b97f4a7c15)

/* A run of adjacent blocks of one table's key: width bits from shift. */
struct segment {
    unsigned shift, width;
};

struct table_layout {
    struct segment seg[MAX_SEGMENTS];
    unsigned nseg;
    unsigned key_bits;
    unsigned bucket_bits;
};

static uint64_t binomial(unsigned n, unsigned k)
{
    uint64_t c = 1;
    for (unsigned i = 1; i <= k; i++)
        c = c * (n - k + i) / i; /* exact: C(n-k+i, i) at every step */
    return c;
}

/* Bits of block i of b: 64 / b, one more for the first 64 mod b. */
static unsigned block_bits(unsigned b, unsigned i)
{
    return 64 / b + (i < 64 % b ? 1 : 0);
}

/* The fewest key bits of a table: b - k blocks, the smallest ones. */
static unsigned min_key_bits(unsigned b, unsigned k)
{
    unsigned sum = 0;
    for (unsigned i = k; i < b; i++) /* blocks sorted by size, largest 1st */
        sum += block_bits(b, i);
    return sum;
}

/* ceil(log2(n / BUCKET_FILL)), clamped to BUCKET_BITS_MIN..MAX. */
static unsigned bucket_bits_for(uint64_t n)
{
    unsigned bits = 0;
    while (bits < BUCKET_BITS_MAX &&
           ((uint64_t)BUCKET_FILL << bits) < n) /* 16 * 2^bits < n */
        bits++;
    return bits < BUCKET_BITS_MIN ? BUCKET_BITS_MIN : bits;
}

/* The table of the idx-th k-subset of omitted blocks (in lexicographic
 * order, omit[] updated to the next one); false when there is none. */
static bool next_subset(unsigned *omit, unsigned k, unsigned b)
{
    if (k == 0)
        return false;
    int i = (int)k - 1;
    while (i >= 0 && omit[i] == b - k + (unsigned)i)
        i--;
    if (i < 0)
        return false;
    omit[i]++;
    for (unsigned j = (unsigned)i + 1; j < k; j++)
        omit[j] = omit[j - 1] + 1;
    return true;
}

/* The key of the table that leaves out the blocks omit[0..k-1]. */
static void table_of(unsigned b, unsigned k, const unsigned *omit,
                     unsigned cap_bits, struct table_layout *t)
{
    memset(t, 0, sizeof(*t));
    unsigned start = 0, o = 0;
    bool in_run = false;
    for (unsigned i = 0; i < b; i++) {
        unsigned w = block_bits(b, i);
        if (o < k && omit[o] == i) {
            o++;
            in_run = false;
        } else if (in_run) {
            t->seg[t->nseg - 1].width += w;
            t->key_bits += w;
        } else {
            t->seg[t->nseg].shift = start;
            t->seg[t->nseg].width = w;
            t->nseg++;
            t->key_bits += w;
            in_run = true;
        }
        start += w;
    }
    t->bucket_bits = t->key_bits < cap_bits ? t->key_bits : cap_bits;
}

static enum bc_status choose_blocks(const struct bc_simhash_index_config *c,
                                    unsigned *blocks)
{
    if (c->k > BC_SIMHASH_MAX_K || c->n_expected < 1)
        return BC_ERR_INVALID_ARG;
    if (c->k == 0) { /* one table keyed on everything */
        if (c->blocks > 1)
            return BC_ERR_INVALID_ARG;
        *blocks = 1;
        return BC_OK;
    }
    if (c->blocks) {
        if (c->blocks <= c->k || c->blocks > 64 ||
            binomial(c->blocks, c->k) > BC_SIMHASH_MAX_TABLES)
            return BC_ERR_INVALID_ARG;
        *blocks = c->blocks;
        return BC_OK;
    }
    uint64_t max_probes =
        c->max_probes ? c->max_probes : BC_SIMHASH_DEFAULT_MAX_PROBES;
    unsigned cap = bucket_bits_for(c->n_expected);
    unsigned best = c->k + 1;
    for (unsigned b = c->k + 1; b <= 64; b++) {
        if (binomial(b, c->k) > BC_SIMHASH_MAX_TABLES)
            break;
        best = b;
        unsigned bits = min_key_bits(b, c->k);
        if (bits > cap)
            bits = cap;
        /* probes per table, n / 2^bits, within the target */
        if (ldexp((double)c->n_expected, -(int)bits) <= (double)max_probes)
            break;
    }
    *blocks = best;
    return BC_OK;
}

enum bc_status
bc_simhash_index_layout(const struct bc_simhash_index_config *config,
                        struct bc_simhash_layout *out)
{
    struct bc_simhash_index_config def;
    if (!out)
        return BC_ERR_INVALID_ARG;
    if (!config) {
        bc_simhash_index_config_init(&def);
        config = &def;
    }
    unsigned b;
    enum bc_status st = choose_blocks(config, &b);
    if (st != BC_OK)
        return st;
    unsigned k = config->k, cap = bucket_bits_for(config->n_expected);
    unsigned omit[BC_SIMHASH_MAX_K] = {0};
    for (unsigned i = 0; i < k; i++)
        omit[i] = i;
    struct bc_simhash_layout l = {.k = k, .blocks = b, .key_bits = 64};
    do {
        struct table_layout t;
        table_of(b, k, omit, cap, &t);
        l.tables++;
        if (t.key_bits < l.key_bits)
            l.key_bits = t.key_bits;
        if (t.bucket_bits > l.bucket_bits)
            l.bucket_bits = t.bucket_bits;
        l.probes += ldexp((double)config->n_expected, -(int)t.bucket_bits);
    } while (next_subset(omit, k, b));
    l.bytes_per_fp = 16 + 8 * l.tables;
    *out = l;
    return BC_OK;
}

void bc_simhash_index_config_init(struct bc_simhash_index_config *config)
{
    if (!config)
        return;
    config->k = BC_SIMHASH_DEFAULT_K;
    config->n_expected = 1000000;
    config->blocks = 0;
    config->max_probes = 0;
}

/* ---- the index: tables ----------------------------------------------- */

struct row {
    uint64_t fp, id;
};

/* A bucket, as the table holds it (16 bytes): its entries live in one
 * allocation, cap signatures then cap rows. */
struct bucket {
    uint32_t *sig; /* NULL while empty */
    uint32_t len, cap;
};

static uint32_t *bucket_rows(const struct bucket *b)
{
    return b->sig + b->cap;
}

static size_t entries_bytes(uint32_t cap)
{
    return (size_t)cap * (4 + 4);
}

/* A fingerprint folded to 32 bits: bit i is bit i xor bit i + 32. */
static inline uint32_t fold32(uint64_t fp)
{
    return (uint32_t)(fp ^ (fp >> 32));
}

struct table {
    struct table_layout l;
    struct bucket *buckets; /* 2^bucket_bits, in mem */
    struct bc_bigarray mem;
};

struct bc_simhash_index {
    struct bc_simhash_index_config config; /* blocks resolved */
    struct bc_simhash_layout layout;
    struct table *tables;
    struct row *rows;
    size_t count, cap;
    size_t bucket_mem; /* bytes of all buckets' entries */
};

/* The bucket of fp in table t: its key bits gathered, taken as they are
 * when they fit, else hashed down by multiply-shift. */
static uint64_t bucket_index(const struct table *t, uint64_t fp)
{
    uint64_t key = 0;
    for (unsigned s = 0; s < t->l.nseg; s++) {
        unsigned w = t->l.seg[s].width;
        uint64_t part =
            w == 64 ? fp : (fp >> t->l.seg[s].shift) & ((UINT64_C(1) << w) - 1);
        key = w == 64 ? part : (key << w) | part;
    }
    if (t->l.key_bits == t->l.bucket_bits)
        return key;
    return (key * MULTIPLY_SHIFT_C) >> (64 - t->l.bucket_bits);
}

/* Candidates of one query whose rows are still to be read: verify()
 * reads a row index, then the row - two misses in a row - so a query
 * collects its candidates (at most this many at a time) and reads them
 * together, prefetched, instead of one chain after another. */
#define QUERY_PENDING 16u

/* A query under way: its fingerprint, the best match so far, and the
 * candidates not yet verified (their row index's address). */
struct query {
    const struct row *rows;
    uint64_t fp;
    unsigned k, best_d; /* best_d: k + 1 or more while none */
    uint32_t best_row;
    unsigned pending;
    const uint32_t *slot[QUERY_PENDING];
};

/* Verify the pending candidates: the whole distance from each one's row,
 * kept when nearest (ties: the earliest added). Their row indexes were
 * prefetched when found; the rows are prefetched here, all before any is
 * read. */
static void verify_pending(struct query *q)
{
    uint32_t r[QUERY_PENDING];
    for (unsigned j = 0; j < q->pending; j++) {
        r[j] = *q->slot[j];
        __builtin_prefetch(&q->rows[r[j]]);
    }
    for (unsigned j = 0; j < q->pending; j++) {
        unsigned d = (unsigned)__builtin_popcountll(q->rows[r[j]].fp ^ q->fp);
        if (d <= q->k &&
            (d < q->best_d || (d == q->best_d && r[j] < q->best_row))) {
            q->best_d = d;
            q->best_row = r[j];
        }
    }
    q->pending = 0;
}

/* Candidate i of bucket b (its sig within k of the query's). */
static inline void candidate(struct query *q, const struct bucket *b,
                             uint32_t i)
{
    const uint32_t *slot = bucket_rows(b) + i;
    __builtin_prefetch(slot);
    q->slot[q->pending++] = slot;
    if (q->pending == QUERY_PENDING)
        verify_pending(q);
}

/* Every candidate of a mask of them, bit j for entry i + j. */
static inline void candidates(struct query *q, const struct bucket *b,
                              uint32_t i, unsigned hit)
{
    while (hit) {
        candidate(q, b, i + (unsigned)__builtin_ctz(hit));
        hit &= hit - 1;
    }
}

#if defined(__SSE2__)
/*
 * Which of 16 sigs at s are within k bits of q (bit j for s[j]): a sig is
 * when popcount(sig ^ q) <= k, that is when clearing its lowest set bit k
 * times (x &= x - 1) leaves 0 - with no popcount instruction (x86-64's
 * baseline has none: the compiler would call a library routine per sig)
 * and no branch per sig.
 */
static inline __attribute__((always_inline)) unsigned
near16(const uint32_t *s, __m128i vq, unsigned k)
{
    const __m128i one = _mm_set1_epi32(1), zero = _mm_setzero_si128();
    const __m128i *v = (const __m128i *)(const void *)s;
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128(v), vq);
    __m128i x1 = _mm_xor_si128(_mm_loadu_si128(v + 1), vq);
    __m128i x2 = _mm_xor_si128(_mm_loadu_si128(v + 2), vq);
    __m128i x3 = _mm_xor_si128(_mm_loadu_si128(v + 3), vq);
    for (unsigned j = 0; j < k; j++) {
        x0 = _mm_and_si128(x0, _mm_sub_epi32(x0, one));
        x1 = _mm_and_si128(x1, _mm_sub_epi32(x1, one));
        x2 = _mm_and_si128(x2, _mm_sub_epi32(x2, one));
        x3 = _mm_and_si128(x3, _mm_sub_epi32(x3, one));
    }
    __m128i lo =
        _mm_packs_epi32(_mm_cmpeq_epi32(x0, zero), _mm_cmpeq_epi32(x1, zero));
    __m128i hi =
        _mm_packs_epi32(_mm_cmpeq_epi32(x2, zero), _mm_cmpeq_epi32(x3, zero));
    return (unsigned)_mm_movemask_epi8(_mm_packs_epi16(lo, hi));
}

/*
 * Scan a bucket 16 sigs at a time. The last 16 overlap the ones before
 * when the length is not a multiple (the lanes seen already masked off);
 * a bucket of fewer than 16 is copied into 16 slots, the rest filled with
 * ~q, which differs from q in all 32 bits. k is a constant where this is
 * inlined (scan_bucket()): the loop of near16() then unrolls.
 */
static inline __attribute__((always_inline)) void
scan_k(struct query *q, const struct bucket *b, unsigned k)
{
    const uint32_t *sig = b->sig;
    uint32_t sq = fold32(q->fp), n = b->len, i = 0;
    const __m128i vq = _mm_set1_epi32((int)sq);
    for (; i + 16 <= n; i += 16)
        candidates(q, b, i, near16(sig + i, vq, k));
    if (i == n)
        return;
    if (n >= 16) {
        unsigned seen = i - (n - 16); /* lanes of the last 16 done */
        candidates(q, b, n - 16, near16(sig + n - 16, vq, k) >> seen << seen);
        return;
    }
    uint32_t pad[16];
    for (unsigned j = 0; j < 16; j++)
        pad[j] = j < n ? sig[j] : ~sq;
    candidates(q, b, 0, near16(pad, vq, k));
}
#else
/* One popcount per sig. */
static inline void scan_k(struct query *q, const struct bucket *b, unsigned k)
{
    uint32_t sq = fold32(q->fp);
    for (uint32_t i = 0; i < b->len; i++)
        if ((unsigned)__builtin_popcount(b->sig[i] ^ sq) <= k)
            candidate(q, b, i);
}
#endif

/* Scan one bucket for candidates within k of the query: the default k
 * with a copy of its own (its tests unrolled), any other k with one. */
static void scan_bucket(struct query *q, const struct bucket *b)
{
    if (q->k == BC_SIMHASH_DEFAULT_K)
        scan_k(q, b, BC_SIMHASH_DEFAULT_K);
    else
        scan_k(q, b, q->k);
}

void bc_simhash_index_free(struct bc_simhash_index *index)
{
    if (!index)
        return;
    if (index->tables) {
        for (unsigned i = 0; i < index->layout.tables; i++) {
            struct table *t = &index->tables[i];
            if (!t->buckets)
                continue;
            size_t nb = (size_t)1 << t->l.bucket_bits;
            for (size_t j = 0; j < nb; j++)
                free(t->buckets[j].sig);
            bc_bigarray_free(&t->mem);
        }
        free(index->tables);
    }
    free(index->rows);
    free(index);
}

enum bc_status
bc_simhash_index_create(const struct bc_simhash_index_config *config,
                        struct bc_simhash_index **out)
{
    struct bc_simhash_index_config def;
    if (!out)
        return BC_ERR_INVALID_ARG;
    if (!config) {
        bc_simhash_index_config_init(&def);
        config = &def;
    }
    struct bc_simhash_layout l;
    enum bc_status st = bc_simhash_index_layout(config, &l);
    if (st != BC_OK)
        return st;
    struct bc_simhash_index *x = calloc(1, sizeof(*x));
    if (!x)
        return BC_ERR_NOMEM;
    x->config = *config;
    x->config.blocks = l.blocks;
    x->layout = l;
    x->tables = calloc(l.tables, sizeof(*x->tables));
    if (!x->tables)
        goto out_nomem;
    unsigned omit[BC_SIMHASH_MAX_K] = {0};
    for (unsigned i = 0; i < l.k; i++)
        omit[i] = i;
    unsigned cap = bucket_bits_for(config->n_expected);
    for (unsigned i = 0; i < l.tables; i++) {
        struct table *t = &x->tables[i];
        table_of(l.blocks, l.k, omit, cap, &t->l);
        next_subset(omit, l.k, l.blocks);
        if (!bc_bigarray_alloc(&t->mem, sizeof(struct bucket)
                                            << t->l.bucket_bits))
            goto out_nomem;
        t->buckets = t->mem.p;
    }
    *out = x;
    return BC_OK;
out_nomem:
    bc_simhash_index_free(x);
    return BC_ERR_NOMEM;
}

/* Room for one more entry in b; false when out of memory (the bucket is
 * then as it was). Grows by half (at least to 4). */
static bool bucket_reserve(struct bc_simhash_index *x, struct bucket *b)
{
    if (b->len < b->cap)
        return true;
    uint32_t old = b->cap;
    if (old == UINT32_MAX)
        return false;
    uint64_t want = old < 4 ? 4 : (uint64_t)old + old / 2;
    uint32_t cap = want > UINT32_MAX ? UINT32_MAX : (uint32_t)want;
    uint32_t *sig = malloc(entries_bytes(cap));
    if (!sig)
        return false;
    if (b->sig) {
        memcpy(sig, b->sig, (size_t)b->len * 4);
        memcpy(sig + cap, bucket_rows(b), (size_t)b->len * 4);
        free(b->sig);
    }
    x->bucket_mem += entries_bytes(cap) - entries_bytes(old);
    b->sig = sig;
    b->cap = cap;
    return true;
}

enum bc_status bc_simhash_index_add(struct bc_simhash_index *index, uint64_t fp,
                                    uint64_t id)
{
    if (!index)
        return BC_ERR_INVALID_ARG;
    struct bc_simhash_index *x = index;
    if (x->count >= BC_SIMHASH_MAX_COUNT)
        return BC_ERR_TOO_LARGE;
    if (x->count == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 1024;
        if (cap > BC_SIMHASH_MAX_COUNT)
            cap = BC_SIMHASH_MAX_COUNT;
        if (cap > SIZE_MAX / sizeof(struct row))
            return BC_ERR_TOO_LARGE;
        struct row *r = realloc(x->rows, cap * sizeof(struct row));
        if (!r)
            return BC_ERR_NOMEM;
        x->rows = r;
        x->cap = cap;
    }
    unsigned nt = x->layout.tables;
    struct bucket *b[BC_SIMHASH_MAX_TABLES];
    for (unsigned i = 0; i < nt; i++) {
        b[i] = &x->tables[i].buckets[bucket_index(&x->tables[i], fp)];
        __builtin_prefetch(b[i], 1);
    }
    /* The tails written next: their misses overlap. */
    for (unsigned i = 0; i < nt; i++) {
        if (b[i]->len < b[i]->cap) {
            __builtin_prefetch(b[i]->sig + b[i]->len, 1);
            __builtin_prefetch(bucket_rows(b[i]) + b[i]->len, 1);
        }
    }
    for (unsigned i = 0; i < nt; i++)
        if (!bucket_reserve(x, b[i]))
            return BC_ERR_NOMEM; /* grown buckets: spare room, no change */
    uint32_t row = (uint32_t)x->count, sig = fold32(fp);
    for (unsigned i = 0; i < nt; i++) {
        b[i]->sig[b[i]->len] = sig;
        bucket_rows(b[i])[b[i]->len] = row;
        b[i]->len++;
    }
    x->rows[x->count].fp = fp;
    x->rows[x->count].id = id;
    x->count++;
    return BC_OK;
}

bool bc_simhash_index_query(const struct bc_simhash_index *index, uint64_t fp,
                            struct bc_simhash_match *match, uint64_t *probes)
{
    uint64_t compared = 0;
    unsigned best_d = 65;
    if (index) {
        const struct bc_simhash_index *x = index;
        const struct bucket *b[BC_SIMHASH_MAX_TABLES];
        unsigned nt = x->layout.tables;
        for (unsigned i = 0; i < nt; i++) {
            b[i] = &x->tables[i].buckets[bucket_index(&x->tables[i], fp)];
            __builtin_prefetch(b[i]);
        }
        /* Every line of every table's bucket at once: the misses
         * overlap instead of coming one bucket after another. */
        for (unsigned i = 0; i < nt; i++) {
            const char *p = (const char *)b[i]->sig;
            for (size_t off = 0; off < (size_t)b[i]->len * 4; off += 64)
                __builtin_prefetch(p + off);
        }
        struct query q = {.rows = x->rows,
                          .fp = fp,
                          .k = x->layout.k,
                          .best_d = 65,
                          .best_row = UINT32_MAX};
        for (unsigned i = 0; i < nt; i++) {
            scan_bucket(&q, b[i]);
            compared += b[i]->len;
        }
        verify_pending(&q);
        best_d = q.best_d;
        if (best_d <= x->layout.k && match) {
            match->fp = x->rows[q.best_row].fp;
            match->id = x->rows[q.best_row].id;
            match->distance = best_d;
        }
    }
    if (probes)
        *probes = compared;
    return best_d <= 64; /* 65: none within k */
}

enum bc_status bc_simhash_index_test_and_add(struct bc_simhash_index *index,
                                             uint64_t fp, uint64_t id,
                                             struct bc_simhash_match *match,
                                             bool *found)
{
    if (!index || !found)
        return BC_ERR_INVALID_ARG;
    struct bc_simhash_match m;
    if (bc_simhash_index_query(index, fp, &m, NULL)) {
        if (match)
            *match = m;
        *found = true;
        return BC_OK;
    }
    enum bc_status st = bc_simhash_index_add(index, fp, id);
    if (st == BC_OK)
        *found = false;
    return st;
}

size_t bc_simhash_index_count(const struct bc_simhash_index *index)
{
    return index ? index->count : 0;
}

size_t bc_simhash_index_memory(const struct bc_simhash_index *index)
{
    if (!index)
        return 0;
    size_t bytes = sizeof(*index) + index->bucket_mem +
                   index->cap * sizeof(struct row) +
                   index->layout.tables * sizeof(struct table);
    for (unsigned i = 0; i < index->layout.tables; i++)
        bytes += index->tables[i].mem.bytes;
    return bytes;
}

void bc_simhash_index_get_layout(const struct bc_simhash_index *index,
                                 struct bc_simhash_layout *out)
{
    if (!out)
        return;
    if (!index) {
        memset(out, 0, sizeof(*out));
        return;
    }
    *out = index->layout;
}

/* ---- the index: its file --------------------------------------------- */

#define FILE_MAGIC         "BCSIMHX"
#define FILE_VERSION       1u
#define FILE_HEADER_BYTES  64u
#define FILE_TRAILER_BYTES 8u
#define FILE_ROW_BYTES     16u
#define FILE_MAX_BYTES                                                         \
    (FILE_HEADER_BYTES + FILE_ROW_BYTES * BC_SIMHASH_MAX_COUNT +               \
     FILE_TRAILER_BYTES)
/* Rows converted per write. */
#define WRITE_ROWS 4096u

static void encode_header(const struct bc_simhash_index *x,
                          unsigned char hdr[FILE_HEADER_BYTES])
{
    memset(hdr, 0, FILE_HEADER_BYTES);
    memcpy(hdr, FILE_MAGIC, sizeof(FILE_MAGIC)); /* with its NUL: 8 bytes */
    bc_put_le32(hdr + 8, FILE_VERSION);
    bc_put_le32(hdr + 12, x->layout.k);
    bc_put_le32(hdr + 16, x->layout.blocks);
    bc_put_le64(hdr + 24, x->config.n_expected);
    bc_put_le64(hdr + 32, x->config.max_probes);
    bc_put_le64(hdr + 40, (uint64_t)x->count);
}

static enum bc_status write_index(int fd, const void *ctx)
{
    const struct bc_simhash_index *x = ctx;
    unsigned char hdr[FILE_HEADER_BYTES];
    encode_header(x, hdr);
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    XXH64_update(&state, hdr, sizeof(hdr));
    enum bc_status st = bc_write_all(fd, hdr, sizeof(hdr));
    unsigned char *buf = malloc(WRITE_ROWS * FILE_ROW_BYTES);
    if (!buf)
        return BC_ERR_NOMEM;
    for (size_t i = 0; st == BC_OK && i < x->count; i += WRITE_ROWS) {
        size_t n = x->count - i < WRITE_ROWS ? x->count - i : WRITE_ROWS;
        for (size_t j = 0; j < n; j++) {
            bc_put_le64(buf + FILE_ROW_BYTES * j, x->rows[i + j].fp);
            bc_put_le64(buf + FILE_ROW_BYTES * j + 8, x->rows[i + j].id);
        }
        XXH64_update(&state, buf, n * FILE_ROW_BYTES);
        st = bc_write_all(fd, buf, n * FILE_ROW_BYTES);
    }
    free(buf);
    if (st != BC_OK)
        return st;
    unsigned char trailer[FILE_TRAILER_BYTES];
    bc_put_le64(trailer, XXH64_digest(&state));
    return bc_write_all(fd, trailer, sizeof(trailer));
}

enum bc_status bc_simhash_index_save(const struct bc_simhash_index *index,
                                     const char *path)
{
    if (!index || !path)
        return BC_ERR_INVALID_ARG;
    return bc_save_atomic(path, write_index, index);
}

static bool all_zero(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i])
            return false;
    return true;
}

enum bc_status bc_simhash_index_load_mem(const void *data, size_t len,
                                         struct bc_simhash_index **out)
{
    if (!data || !out)
        return BC_ERR_INVALID_ARG;
    const unsigned char *p = data;
    size_t magic_len = sizeof(FILE_MAGIC);
    if (len < magic_len)
        return memcmp(p, FILE_MAGIC, len) == 0 ? BC_ERR_TRUNCATED
                                               : BC_ERR_FORMAT;
    if (memcmp(p, FILE_MAGIC, magic_len) != 0)
        return BC_ERR_FORMAT;
    if (len < FILE_HEADER_BYTES + FILE_TRAILER_BYTES)
        return BC_ERR_TRUNCATED;
    if (bc_get_le32(p + 8) != FILE_VERSION)
        return BC_ERR_VERSION;
    uint64_t count = bc_get_le64(p + 40);
    if (count > BC_SIMHASH_MAX_COUNT)
        return BC_ERR_CORRUPT;
    uint64_t want =
        FILE_HEADER_BYTES + FILE_ROW_BYTES * count + FILE_TRAILER_BYTES;
    if ((uint64_t)len < want)
        return BC_ERR_TRUNCATED;
    if ((uint64_t)len > want)
        return BC_ERR_CORRUPT;
    struct bc_simhash_index_config c = {
        .k = bc_get_le32(p + 12),
        .blocks = bc_get_le32(p + 16),
        .n_expected = bc_get_le64(p + 24),
        .max_probes = bc_get_le64(p + 32),
    };
    struct bc_simhash_layout l;
    if (!all_zero(p + 20, 4) || !all_zero(p + 48, 16) || c.blocks == 0 ||
        bc_simhash_index_layout(&c, &l) != BC_OK)
        return BC_ERR_CORRUPT;
    size_t body = (size_t)(want - FILE_TRAILER_BYTES);
    if (XXH64(p, body, 0) != bc_get_le64(p + body))
        return BC_ERR_CHECKSUM;
    struct bc_simhash_index *x;
    enum bc_status st = bc_simhash_index_create(&c, &x);
    if (st != BC_OK)
        return st;
    for (uint64_t i = 0; i < count; i++) {
        const unsigned char *r = p + FILE_HEADER_BYTES + FILE_ROW_BYTES * i;
        st = bc_simhash_index_add(x, bc_get_le64(r), bc_get_le64(r + 8));
        if (st != BC_OK) {
            bc_simhash_index_free(x);
            return st;
        }
    }
    *out = x;
    return BC_OK;
}

enum bc_status bc_simhash_index_load(const char *path,
                                     struct bc_simhash_index **out)
{
    if (!path || !out)
        return BC_ERR_INVALID_ARG;
    unsigned char *data;
    size_t len;
    enum bc_status st = bc_read_file(path, FILE_MAX_BYTES, &data, &len);
    if (st != BC_OK)
        return st;
    st = bc_simhash_index_load_mem(data, len, out);
    free(data);
    return st;
}
