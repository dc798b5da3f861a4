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
 * beside it; both rare enough to leave). ASCII folding makes "Next Page"
 * and "next page," one shingle: markup changes case and punctuation more
 * than it changes words. A word is hashed with XXH3-64 (the project's
 * hash, as bloom.c); a word longer than 32 bytes is hashed in 32-byte
 * pieces, each piece's hash the seed of the next, so a word of any length
 * is one word and the state stays small.
 *
 * A shingle is w = 3 consecutive words (Broder's w-shingles), hashed with
 * XXH3-64 over its words' hashes. Single words (w = 1) ignore order: two
 * pages of one site's vocabulary look alike. Larger w makes each edit cost
 * more: changing one word of a text of N shingles replaces w of them, so
 * cos theta = (N - w) / N. With w = 3 and N = 498 (a 500-word page),
 * E[d] = 64 acos(495/498) / pi = 2.24 bits; with w = 4 it is 2.59, with
 * w = 8 (common for Jaccard shingling) 3.67, beyond k = 3 on average.
 * Three words keep order and keep one edit below k.
 *
 * THE COUNTERS
 * Adding +-1 to 64 counters per shingle is the cost that matters (a page
 * has about one shingle per 6-7 bytes of text). We count ones instead:
 * V[i] = 2 ones[i] - N, so bit i = 1 when 2 ones[i] > N. The ones are
 * kept as 64 byte-wide counters packed in eight 64-bit words (lanes):
 * byte i of lane j counts bit 8j+i. A table maps each byte value of a
 * hash to its bits spread one per byte (0x05 -> 0x0000000000010001),
 * so a shingle costs eight loads and eight additions. Every 255
 * shingles, before a byte could overflow, the lanes are added into 64-bit
 * counters and cleared. The state lives on the caller's stack (under
 * 800 bytes); feeding allocates nothing and never fails. Chunks may split a
 * word anywhere: the word's bytes wait in the state.
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
 * 4 x 152.6 = 610 probes; b = 5 gives 10 tables of 25- or 26-bit keys and
 * 10 x 0.3 probes but 2.5 times the memory; b = 6, 20 tables of 32 bits.
 * A probe is a popcount on a contiguous array (well under a nanosecond);
 * a table costs a cache miss or two. bc_simhash_index_layout() takes the
 * fewest tables (the least memory) whose probes per table stay below
 * max_probes (256) at n_expected, within 64 tables; for k = 3 that is
 * b = 4 up to n = 1.7 10^7 (256 x 2^16), b = 5 beyond. b blocks of 64 / b
 * bits: the first 64 mod b blocks get one bit more; k = 0 is one table
 * keyed on all 64 bits.
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
 * A bucket is one allocation, grown by half when full:
 *
 *     bucket:  | len | cap | fp[0] ... fp[cap-1] | row[0] ... row[cap-1] |
 *                 4     4     8 bytes each          4 bytes each
 *     rows:    | fp | id |  per fingerprint, 16 bytes, in order of adds
 *
 * Queries scan the fps (contiguous, 8 bytes each) and read a row only on
 * a match. Insert: one append per table. Memory per fingerprint:
 * 16 + 12 t bytes with full buckets (64 for t = 4, 136 for t = 10), plus
 * up to half of the buckets' part as spare capacity, plus 8 bytes per
 * bucket per table and malloc's header per bucket. A query returns the
 * nearest match (ties: the earliest added), and stops after a table in
 * which it found distance 0 (every exact copy is in every table's bucket
 * of q). test_and_add adds only fingerprints it did not find: a session-
 * ID space of 10^5 copies of one page is one entry, not 10^5 in one
 * bucket of every table.
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
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bc_bigarray.h"
#include "bloom_int.h"
#include "bloomcrawl/simhash.h"

/* ---- words ----------------------------------------------------------- */

/* The byte a word keeps for c, 0 for a separator: digits and bytes >=
 * 0x80 as they are, ASCII letters in lower case. */
#define FOLD(c)                                                                \
    ((c) >= 0x80                  ? (c)                                        \
     : (c) >= 0x30 && (c) <= 0x39 ? (c)                                        \
     : (c) >= 0x61 && (c) <= 0x7a ? (c)                                        \
     : (c) >= 0x41 && (c) <= 0x5a ? (c) + 0x20                                 \
                                  : 0)
#define FOLD4(c)  FOLD(c), FOLD((c) + 1), FOLD((c) + 2), FOLD((c) + 3)
#define FOLD16(c) FOLD4(c), FOLD4((c) + 4), FOLD4((c) + 8), FOLD4((c) + 12)
#define FOLD64(c)                                                              \
    FOLD16(c), FOLD16((c) + 16), FOLD16((c) + 32), FOLD16((c) + 48)
static const unsigned char fold[256] = {FOLD64(0), FOLD64(64), FOLD64(128),
                                        FOLD64(192)};

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

static void count_shingle(struct bc_simhash *st, uint64_t h)
{
    for (unsigned j = 0; j < 8; j++)
        st->lanes[j] += spread[(h >> (8 * j)) & 0xff];
    st->shingles++;
    if (++st->lane_fill == LANE_MAX)
        flush_lanes(st);
}

/* The current word (len bytes in st->word, after the pieces chained into
 * st->piece_seed) has ended: slide it into the window, count a shingle. */
static void end_word(struct bc_simhash *st, unsigned len)
{
    uint64_t h = XXH3_64bits_withSeed(st->word, len, st->piece_seed);
    unsigned w = st->shingle_words;
    st->piece_seed = st->seed;
    memmove(st->window, st->window + 1, (w - 1) * sizeof(st->window[0]));
    st->window[w - 1] = h;
    if (++st->words < w)
        return;
    unsigned char buf[8 * BC_SIMHASH_MAX_SHINGLE_WORDS];
    for (unsigned i = 0; i < w; i++)
        bc_put_le64(buf + 8 * i, st->window[i]);
    count_shingle(st, XXH3_64bits_withSeed(buf, 8 * (size_t)w, st->seed));
}

void bc_simhash_feed_text(struct bc_simhash *state, const char *text,
                          size_t len)
{
    if (!state || !state->ready || (!text && len > 0))
        return;
    const unsigned char *p = (const unsigned char *)text;
    const unsigned char *end = p + len;
    unsigned wl = state->word_len; /* > 0 exactly while inside a word */
    while (p < end) {
        unsigned char c = fold[*p++];
        if (c) {
            if (wl == BC_SIMHASH_WORD_PIECE) {
                /* A long word: hash the full piece into the next's seed. */
                state->piece_seed = XXH3_64bits_withSeed(
                    state->word, BC_SIMHASH_WORD_PIECE, state->piece_seed);
                wl = 0;
            }
            state->word[wl++] = c;
        } else if (wl) {
            end_word(state, wl);
            wl = 0;
        }
    }
    state->word_len = wl;
}

/* A copy of state with its last word ended, as final() sees it. */
static void finished(const struct bc_simhash *state, struct bc_simhash *out)
{
    *out = *state;
    if (out->word_len) {
        end_word(out, out->word_len);
        out->word_len = 0;
    }
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
