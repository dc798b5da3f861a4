/*
 * window.c - a Bloom filter over a sliding window of the key stream.
 *
 * THE PROBLEM
 * A Bloom filter only fills. A crawler that must fetch a page again after
 * a week, or a "sort -u" over an endless stream that may print a line
 * again once it is old, needs a seen-test that forgets: "was this key
 * inserted within the last W insertions" (a count window), or "within the
 * last T of the caller's clock" (a time window), with no false negative
 * inside the window and a false-positive rate at or below p at every
 * moment - not only on average.
 *
 * THE ANCHORS
 * - Generation rotation: G filters, insert into the newest, query all,
 *   drop the oldest every W/(G-1) insertions. A key lives G-1 to G
 *   generations, so the window W is kept with slack W/(G-1); the rate is
 *   1 - (1 - p_g)^G ~ G p_g, so each filter is sized for p/G:
 *       bits/key = G/(G-1) * log2(G/p) / ln 2     (classic filters)
 *   = 22.05 (G = 2) and 16.62 (G = 4) at p = 1 %. A query costs G
 *   filters, i.e. G cache misses in the blocked layout, k G classic.
 * - Stable Bloom filters (Deng and Rafiei, SIGMOD 2006) decrement random
 *   cells: bounded rate, but false negatives inside any window. Refused.
 * - Age-Partitioned Bloom Filters (Shtul, Baquero, Almeida, 2020,
 *   arXiv 2001.03147): k + l one-bit-per-key slices shifted one at a
 *   time; a key is found if k consecutive slices hold it. Slack 1/l. At
 *   p = 1 % the best (k, l) needs 19.6 bits per window key (k = 11,
 *   l = 62; our own evaluation of its rate with every slice at its
 *   peak fill), and a query touches up to k + l slices.
 * - Time-limited Bloom Filter (Rodrigues et al., 2023, arXiv 2306.06742):
 *   time windows under variable insert rates.
 *
 * THE DESIGN: GENERATION-PARTITIONED BLOCKED FILTER
 * Generation rotation, but the G filters are interleaved block by block,
 * so that all generations of a key sit side by side:
 *
 *     block b (G * 256 bits, 2 cache lines for G = 4):
 *     +-----------+-----------+-----------+-----------+
 *     | segment 0 | segment 1 | segment 2 | segment 3 |   256 bits each
 *     +-----------+-----------+-----------+-----------+
 *       gen 4,8..   gen 1,5..   gen 2,6..   gen 3,7..   (gen x: x mod G)
 *
 * A key picks one block (fastrange of h1) and k bit offsets in 0..255
 * (the top 8 bits of the LCG states of bloom_int.h started at h2); the
 * same offsets in every segment. (A segment may also be S = 128 bits,
 * offsets the top 7 bits: then a block of G = 4 is one cache line.) Insert sets them in the current
 * generation's segment; a query tests the G segments of its one block
 * (1-2 cache misses, against G for rotation). Generation x lives in
 * segment x mod G; when generation x begins, segment x mod G (which held
 * generation x - G, now expired) is cleared in every block: a strided
 * pass over the array, once per g insertions.
 *
 * THE WINDOW GUARANTEE
 * Count windows: generation of insertion number i (from 0) is
 * floor(i / g), with g = ceil(W / (G - 1)). Time windows: the generation
 * of clock t is floor(t / d), with d = ceil(T / (G - 1)). A key is found
 * while its generation is at most G - 1 behind the current one. For a key
 * of age a = now - t (or a = n - i insertions) inside the window, a <= T:
 *     floor(now / d) - floor(t / d) <= ceil(a / d) <= ceil(T / d) <= G - 1,
 * so it is found: no false negative inside the window. Once G generations
 * behind (at an age below G g insertions, or G d clock units) it is gone.
 *
 * THE RATE (written for S = 256; a 128-bit segment reads 128 for 256)
 * One generation's segments hold n keys over B blocks. The query's block
 * holds i of them, i ~ Binomial(n, 1/B). Those k i probes set X distinct
 * bits of the 256; the query's k offsets are independent uniform draws,
 * so it is a false positive with probability (X / 256)^k. Hence
 *     F(n, B, k) = sum_i Bin(i; n, 1/B) E[(X_(k i) / 256)^k]
 * where X_t, the distinct bits after t uniform throws into 256, comes from
 * the occupancy recurrence
 *     P(X_(t+1) = x) = P(X_t = x) x/256 + P(X_t = x-1) (257 - x)/256.
 * This uses the distribution of a block's fill, not its mean (taking each
 * block's fill at its mean under-predicts). The query's block is the same
 * in every generation, but the keys of different generations are
 * different keys, so the counts in the query's block are independent
 * across generations and
 *     FPR = 1 - prod over live generations j of (1 - F(n_j, B, k)).
 * The peak, every one of the G generations holding g keys, is
 *     FPR_peak = 1 - (1 - F(g, B, k))^G.
 * That is the mean over where the keys fell. One filter's actual rate is
 * the mean over its B blocks of P_b = 1 - prod_j (1 - a_j), a_j = (X_j /
 * 256)^k in block b, and scatters around it. Were the blocks independent,
 * its variance would be Var(P_b) / B, with (independent generations)
 *     Var(P_b) = prod_j (1 - 2 E[a_j] + E[a_j^2]) - prod_j (1 - E[a_j])^2
 * (E[a_j^2]: the mixture with exponent 2k). But each generation's counts
 * sum to n_j: the part of P_b that moves with the count i_j averages out.
 * Taking it away (a regression on each count, the delta method):
 *     Var(rate) = (Var(P_b) - sum_j c_j^2 Cov(a_j, i_j)^2 / Var(i_j)) / B
 * with c_j = prod over l != j of (1 - E[a_l]), Var(i_j) = n_j/B (1 - 1/B).
 * A measurement with Q queries then has variance F (1 - F) / Q + Var(rate)
 * about the prediction (fpr_state_sd is the square root of the second
 * term); at W = 10^7 (B ~ 1.8 10^5 blocks) that term is negligible.
 *
 * SIZING (bits per key against W, p and slack)
 * For each k in 1..16, find the largest mean load lambda = g / B with
 * 1 - (1 - F_pois(lambda, k))^G <= p (F with i Poisson(lambda)), then
 * B = ceil(g / lambda) (grown while the binomial F misses p); keep the k
 * with the least B. Memory:
 *     bits per window key = B G S / W = G/(G-1) * S / lambda.
 * The slack 1/(G-1) costs the factor G/(G-1); p and the block size set
 * lambda. At p = 1 %: G = 4 gives k = 8, lambda = 18.37, 18.6 bits per
 * key (slack 1/3); G = 2 gives 24.0 (slack 1); G = 4 with 128-bit
 * segments (one cache line per block) 20.5. B is then rounded up so the
 * array is whole 64-byte lines. The small segments cost about 2 bits
 * per key over classic rotation at G = 4 (16.6), 4 with S = 128: what
 * one block per operation buys. The bench (bench_window) reports it.
 *
 * TIME WINDOWS AND CAPACITY
 * A time window is sized for capacity keys within any T, g = capacity /
 * (G - 1) per generation: the promise of p needs them spread so that no
 * generation holds more than g. A burst above g in one generation raises
 * the rate above p (never loses a key); capacity keys at one moment put
 * (G - 1) g into one generation (at G = 4, p = 1 %, a rate of about 20 %).
 * The statistics report the rate predicted from the real counts and an
 * over-capacity flag.
 *
 * FILE FORMAT (version 1; all integers little-endian)
 *
 *     offset  size  field
 *          0     8  magic "BCWINDOW"
 *          8     4  version = 1
 *         12     4  kind: 0 count, 1 time
 *         16     8  window (W or T)
 *         24     8  capacity
 *         32     8  p (IEEE-754 double bits)
 *         40     4  G
 *         44     4  k
 *         48     4  hash id: 2 = XXH3-128 + the probes above
 *         52     4  segment bits S (256 or 128)
 *         56     8  seed
 *         64     8  g, keys per generation
 *         72     8  generation span (count: g; time: d)
 *         80     8  blocks B
 *         88     8  insertions
 *         96     8  latest clock
 *        104     8  array bytes A = B G S / 8
 *        112   128  generation held by segment j (j = 0..15; all ones: none)
 *        240   128  keys inserted into segment j
 *        368     A  the array, as 64-bit little-endian words
 *    368 + A     8  XXH64 (seed 0) of every byte before it
 *
 * Saved atomically like bc_bloom_save (temporary, fsync, rename).
 *
 * EXPECTED WORKLOAD
 * A crawl that refetches after a week: 10^6-10^8 URLs per window, tests at
 * 10^4-10^5 per second, the clock in milliseconds. urldedup --window N:
 * up to 10^7 lines per second in batch.
 *
 * REFERENCES
 * A. Shtul, C. Baquero, P. S. Almeida, "Age-Partitioned Bloom Filters",
 * arXiv 2001.03147, 2020. A. Rodrigues, A. Shtul, C. Baquero, P. S.
 * Almeida, "Time-limited Bloom Filter", ACM SAC 2023, arXiv 2306.06742.
 * F. Deng, D. Rafiei, "Approximately detecting duplicates for streaming
 * data using stable Bloom filters", SIGMOD 2006. F. Putze, P. Sanders,
 * J. Singler, "Cache-, hash- and space-efficient Bloom filters", WEA 2007.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bc_bigarray.h"
#include "bloom_int.h"
#include "bloomcrawl/window.h"

/* The largest segment: 256 bits, four 64-bit words. */
#define SEG_MAX_BITS  256u
#define SEG_MAX_WORDS (SEG_MAX_BITS / 64)
#define NO_GEN        UINT64_MAX
/* Blocks of keys hashed ahead in the batch call. */
#define PREFETCH_AHEAD 32

#define FILE_MAGIC   "BCWINDOW" /* 8 bytes, no NUL */
#define FILE_VERSION 1u
#define FILE_HASH_ID 2u
#define FILE_HEADER  368u
#define FILE_TRAILER 8u

struct bc_window {
    enum bc_window_kind kind;
    uint64_t window, capacity;
    double p;
    unsigned gens, k;
    uint64_t seed;
    uint64_t gen_keys, gen_span, blocks;
    unsigned seg_bits;  /* S: 256 or 128 */
    unsigned seg_words; /* S / 64 */
    unsigned seg_shift; /* 64 - log2(S): a probe's offset is x >> seg_shift */
    uint64_t *words;    /* blocks * gens * seg_words */
    size_t nwords;
    struct bc_bigarray mem; /* words' memory (bc_bigarray.h: huge pages) */
    uint64_t inserts;
    uint64_t count_gen;  /* count windows: inserts / gen_span, kept */
    uint64_t count_left; /* insertions left in that generation */
    uint64_t live_gen;   /* the generation live_segs was computed at */
    unsigned live_segs;  /* the live segments then, a bit set */
    uint64_t now;
    uint64_t seg_gen[BC_WINDOW_MAX_GENERATIONS];
    uint64_t seg_keys[BC_WINDOW_MAX_GENERATIONS];
    double fpr_peak;
};

/* ---- the rate -------------------------------------------------------- */

/* E[(X_(k i) / S)^power] for i = 0..imax: the occupancy recurrence of
 * the teaching comment for S bits, run for k * imax throws. NULL on
 * allocation failure. */
/* A probability below this is taken as 0 in the recurrence: far below
 * any rate it yields (>= 10^-20 matters), and above the subnormal range,
 * whose arithmetic costs a hundred times more (the tails of the
 * occupancy distribution fall there within a few hundred throws). */
#define NEGLIGIBLE 1e-250

static double *occupancy_moments(unsigned seg, unsigned k, size_t imax,
                                 unsigned power)
{
    double *mom = malloc((imax + 1) * sizeof(*mom));
    /* Two buffers of P(X = x) at [x + 1]: a zero before x = 0 and zeros
     * beyond top, so one throw is the same two products for every x,
     * with no branch (the loop vectorizes; it is most of the cost of
     * sizing a window filter). */
    double a[SEG_MAX_BITS + 2] = {0.0, 1.0}, b[SEG_MAX_BITS + 2] = {0.0};
    double *d = a, *nd = b; /* P(X = x) at d[x + 1] */
    if (!mom)
        return NULL;
    double frac_k[SEG_MAX_BITS + 1], stay[SEG_MAX_BITS + 1],
        grow[SEG_MAX_BITS + 1];
    for (unsigned x = 0; x <= seg; x++) {
        frac_k[x] = pow((double)x / seg, (double)power);
        /* A throw lands on one of the x set bits, or on one of the
         * seg - (x - 1) clear ones of X = x - 1. S is a power of two, so
         * x / S is exact and d x / S equals d (x / S) bit for bit. */
        stay[x] = (double)x / seg;
        grow[x] = (double)(seg - x + 1) / seg;
    }
    unsigned top = 0; /* the largest x with P(X = x) > 0 */
    for (size_t i = 0; i <= imax; i++) {
        double m = 0;
        for (unsigned x = 0; x <= top; x++)
            m += d[x + 1] * frac_k[x];
        mom[i] = m;
        if (i == imax)
            break;
        for (unsigned t = 0; t < k; t++) {
            unsigned ntop = top < seg ? top + 1 : seg;
            for (unsigned x = 0; x <= ntop; x++) {
                double v = d[x + 1] * stay[x] + d[x] * grow[x];
                nd[x + 1] = v >= NEGLIGIBLE ? v : 0.0;
            }
            top = ntop;
            double *swap = d;
            d = nd;
            nd = swap;
        }
    }
    return mom;
}

/* Keys per block worth summing: the tail beyond is below 1e-20. */
static size_t tail_limit(double lambda)
{
    return (size_t)ceil(lambda + 12.0 * sqrt(lambda) + 30.0);
}

/* More throws than this fill 256 bits with certainty for the rate (the
 * chance of a zero bit after 2^14 throws is below 256 e^(-64) < 10^-25):
 * it also bounds the recurrence's cost for any count. */
#define SATURATED_THROWS (UINT64_C(1) << 14)

/* E[(X / 256)^power] over the query's block (k probes per key): k gives
 * the segment's rate F, 2 k the mean of the square of its a. With
 * by_count, E[i (X / 256)^power] instead (i the keys in the block). */
static double segment_moment(unsigned seg, double keys, double blocks,
                             unsigned k, unsigned power, bool by_count)
{
    keys = floor(keys);
    if (keys == 0)
        return 0.0;
    if (blocks == 1) { /* every key in the query's block */
        if (keys * k > (double)SATURATED_THROWS)
            return by_count ? keys : 1.0;
        size_t n = (size_t)keys;
        double *mom = occupancy_moments(seg, k, n, power);
        double f = mom ? mom[n] * (by_count ? keys : 1.0) : NAN;
        free(mom);
        return f;
    }
    double q = 1.0 / blocks;
    double lambda = keys * q;
    /* All but 10^-20 of the mass lies above lambda - 12 sqrt(lambda):
     * when even that many keys saturate the segment, the rate is 1. */
    double lowest = lambda - 12.0 * sqrt(lambda);
    if (lowest * k > (double)SATURATED_THROWS)
        return by_count ? lambda : 1.0;
    size_t imax = tail_limit(lambda);
    if ((double)imax > keys)
        imax = (size_t)keys;
    double *mom = occupancy_moments(seg, k, imax, power);
    if (!mom)
        return NAN;
    double pr = exp(keys * log1p(-q)), f = 0;
    for (size_t i = 0; i <= imax; i++) {
        f += pr * mom[i] * (by_count ? (double)i : 1.0);
        pr *= (keys - (double)i) / (double)(i + 1) * q / (1 - q);
    }
    free(mom);
    return f;
}

static bool valid_segment(unsigned seg)
{
    return seg == 128 || seg == 256;
}

double bc_window_fpr_segment(double keys, double blocks, unsigned k,
                             unsigned segment_bits)
{
    if (k < 1 || k > BC_WINDOW_MAX_K || !(blocks >= 1) || !(keys >= 0) ||
        !valid_segment(segment_bits))
        return NAN;
    return segment_moment(segment_bits, keys, blocks, k, k, false);
}

/* The rate of one generation with Poisson(lambda) keys per block. */
static double fpr_poisson(double lambda, const double *mom, size_t imax)
{
    double pr = exp(-lambda), f = 0;
    for (size_t i = 0; i <= imax; i++) {
        f += pr * mom[i];
        pr *= lambda / (double)(i + 1);
    }
    return f;
}

static double peak_rate(double f, unsigned gens)
{
    return 1.0 - pow(1.0 - f, (double)gens);
}

/* The largest load lambda (<= 128) whose peak rate is at most p, for k. */
#define LAMBDA_MAX 128.0
static double best_lambda(double p, unsigned gens, const double *mom,
                          size_t imax)
{
    double lo = 0, hi = LAMBDA_MAX;
    for (int it = 0; it < 60; it++) {
        double mid = (lo + hi) / 2;
        if (peak_rate(fpr_poisson(mid, mom, imax), gens) <= p)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

enum bc_status bc_window_size(uint64_t capacity, double p, unsigned generations,
                              unsigned segment_bits,
                              struct bc_window_sizing *out)
{
    unsigned seg = segment_bits ? segment_bits : BC_WINDOW_SEGMENT_BITS;
    if (!out || capacity == 0 || !(p > 0 && p < 1) ||
        generations < BC_WINDOW_MIN_GENERATIONS ||
        generations > BC_WINDOW_MAX_GENERATIONS || !valid_segment(seg))
        return BC_ERR_INVALID_ARG;
    uint64_t g =
        capacity / (generations - 1) + (capacity % (generations - 1) != 0);
    size_t imax = tail_limit(LAMBDA_MAX);
    double best_blocks = INFINITY;
    unsigned best_k = 0;
    for (unsigned k = 1; k <= BC_WINDOW_MAX_K; k++) {
        double *mom = occupancy_moments(seg, k, imax, k);
        if (!mom)
            return BC_ERR_NOMEM;
        double lambda = best_lambda(p, generations, mom, imax);
        free(mom);
        if (lambda <= 0)
            continue;
        double blocks = ceil((double)g / lambda);
        if (blocks < best_blocks) {
            best_blocks = blocks;
            best_k = k;
        }
    }
    if (best_k == 0 ||
        best_blocks * generations * seg > (double)BC_BLOOM_MAX_BITS)
        return BC_ERR_TOO_LARGE;
    /* The Poisson load is the large-B limit: grow B while the exact
     * binomial rate misses p (a block or two for small windows). */
    uint64_t blocks = (uint64_t)best_blocks;
    double f =
        segment_moment(seg, (double)g, (double)blocks, best_k, best_k, false);
    while (!(peak_rate(f, generations) <= p)) {
        blocks += 1 + blocks / 1024;
        f = segment_moment(seg, (double)g, (double)blocks, best_k, best_k,
                           false);
    }
    /* Whole cache lines: the array is allocated in 64-byte units. */
    while (blocks * generations * seg % 512 != 0)
        blocks++;
    f = segment_moment(seg, (double)g, (double)blocks, best_k, best_k, false);
    if ((double)blocks * generations * seg > (double)BC_BLOOM_MAX_BITS)
        return BC_ERR_TOO_LARGE;
    struct bc_window_sizing s = {
        .capacity = capacity,
        .p = p,
        .generations = generations,
        .k = best_k,
        .segment_bits = seg,
        .gen_keys = g,
        .blocks = blocks,
        .bytes = blocks * generations * (seg / 8),
        .fpr_peak = peak_rate(f, generations),
    };
    s.bits_per_key = 8.0 * (double)s.bytes / (double)capacity;
    *out = s;
    return BC_OK;
}

/* ---- creation -------------------------------------------------------- */

void bc_window_config_init(struct bc_window_config *config)
{
    if (!config)
        return;
    config->kind = BC_WINDOW_COUNT;
    config->window = 1000000;
    config->capacity = 0;
    config->p = 0.01;
    config->generations = BC_WINDOW_DEFAULT_GENERATIONS;
    config->segment_bits = BC_WINDOW_SEGMENT_BITS;
    config->seed = 0;
}

/* A filter with an all-zero array of blocks * gens segments. */
static enum bc_status new_window(uint64_t blocks, unsigned gens, unsigned seg,
                                 struct bc_window **out)
{
    struct bc_window *w = calloc(1, sizeof(*w));
    if (!w)
        return BC_ERR_NOMEM;
    size_t bytes = (size_t)(blocks * gens * (seg / 8));
    /* Large arrays get huge pages, as bloom.c's: a query's block is then
     * rarely a TLB miss too. */
    if (!bc_bigarray_alloc(&w->mem, bytes)) {
        free(w);
        return BC_ERR_NOMEM;
    }
    w->words = w->mem.p;
    w->nwords = bytes / 8;
    w->blocks = blocks;
    w->gens = gens;
    w->seg_bits = seg;
    w->seg_words = seg / 64;
    w->seg_shift = seg == 128 ? 57 : 56;
    for (unsigned j = 0; j < BC_WINDOW_MAX_GENERATIONS; j++)
        w->seg_gen[j] = NO_GEN;
    w->live_gen = NO_GEN;
    *out = w;
    return BC_OK;
}

enum bc_status bc_window_create(const struct bc_window_config *config,
                                uint64_t now, struct bc_window **out)
{
    if (!config || !out || config->window == 0 ||
        (config->kind != BC_WINDOW_COUNT && config->kind != BC_WINDOW_TIME))
        return BC_ERR_INVALID_ARG;
    uint64_t capacity =
        config->kind == BC_WINDOW_COUNT ? config->window : config->capacity;
    struct bc_window_sizing s;
    enum bc_status st = bc_window_size(capacity, config->p, config->generations,
                                       config->segment_bits, &s);
    if (st != BC_OK)
        return st;
    uint64_t blocks = s.blocks; /* the array is whole cache lines */
    struct bc_window *w;
    st = new_window(blocks, s.generations, s.segment_bits, &w);
    if (st != BC_OK)
        return st;
    w->kind = config->kind;
    w->window = config->window;
    w->capacity = capacity;
    w->p = config->p;
    w->k = s.k;
    w->seed = config->seed;
    w->gen_keys = s.gen_keys;
    uint64_t span = config->window / (s.generations - 1) +
                    (config->window % (s.generations - 1) != 0);
    w->gen_span = config->kind == BC_WINDOW_COUNT ? s.gen_keys : span;
    w->count_left = w->gen_span;
    w->now = now;
    w->fpr_peak = s.fpr_peak;
    *out = w;
    return BC_OK;
}

void bc_window_free(struct bc_window *window)
{
    if (!window)
        return;
    bc_bigarray_free(&window->mem);
    free(window);
}

/* ---- the operations -------------------------------------------------- */

struct bc_hash128 bc_window_hash(const struct bc_window *window,
                                 const void *key, size_t len)
{
    if (!window || (!key && len > 0)) {
        struct bc_hash128 none = {0, 0};
        return none;
    }
    XXH128_hash_t x = XXH3_128bits_withSeed(len ? key : "", len, window->seed);
    struct bc_hash128 h = {x.low64, x.high64};
    return h;
}

/* The current generation's number at clock now (never before w->now). */
static uint64_t generation_at(const struct bc_window *w, uint64_t now)
{
    if (w->kind == BC_WINDOW_COUNT)
        return w->count_gen; /* = inserts / gen_span, without a division */
    return (now > w->now ? now : w->now) / w->gen_span;
}

static bool live(const struct bc_window *w, unsigned j, uint64_t cur)
{
    return w->seg_gen[j] != NO_GEN && cur - w->seg_gen[j] < w->gens;
}

static uint64_t *block_of(const struct bc_window *w, struct bc_hash128 h)
{
    return w->words +
           bc_fastrange64(h.lo, w->blocks) * (uint64_t)w->gens * w->seg_words;
}

/* The k offsets of a key in a segment, as (up to) four 64-bit masks: the
 * top 8 bits (S = 256) or 7 bits (S = 128) of the LCG states of
 * bloom_int.h. Built in registers (a shifted
 * comparison per word, no branch), not through an indexed array: stores
 * to a variable index, and the loads after them, were half of an insert's
 * time. */
struct masks {
    uint64_t w[SEG_MAX_WORDS];
};

static struct masks segment_masks(struct bc_hash128 h, unsigned k,
                                  unsigned shift_out)
{
    uint64_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;
    for (unsigned i = 0; i < k; i++) {
        uint64_t x = bc_lcg_steps[i].mul * h.hi + bc_lcg_steps[i].add;
        unsigned bit = (unsigned)(x >> shift_out), word = bit >> 6;
        unsigned shift = bit & 63;
        m0 |= (uint64_t)(word == 0) << shift;
        m1 |= (uint64_t)(word == 1) << shift;
        m2 |= (uint64_t)(word == 2) << shift;
        m3 |= (uint64_t)(word == 3) << shift;
    }
    struct masks m = {{m0, m1, m2, m3}};
    return m;
}

static bool segment_holds(const uint64_t *seg, const struct masks *m,
                          unsigned words)
{
    uint64_t miss = (m->w[0] & ~seg[0]) | (m->w[1] & ~seg[1]);
    if (words == 4)
        miss |= (m->w[2] & ~seg[2]) | (m->w[3] & ~seg[3]);
    return miss == 0;
}

/* The live segments at generation cur, as a bit set (cached: it changes
 * once per generation; seg_gen changes only when the generation does). */
static unsigned live_set(const struct bc_window *w, uint64_t cur)
{
    if (cur == w->live_gen)
        return w->live_segs;
    unsigned set = 0;
    for (unsigned j = 0; j < w->gens; j++)
        set |= (unsigned)live(w, j, cur) << j;
    return set;
}

static void cache_live(struct bc_window *w, uint64_t cur)
{
    w->live_gen = NO_GEN;
    w->live_segs = live_set(w, cur);
    w->live_gen = cur;
}

/* Does a live segment of the key's block hold its bits? */
static bool contains_masks(const struct bc_window *w, struct bc_hash128 h,
                           const struct masks *m, unsigned live_segments)
{
    const uint64_t *block = block_of(w, h);
    unsigned words = w->seg_words;
    for (unsigned j = 0; j < w->gens; j++)
        if ((live_segments >> j & 1) &&
            segment_holds(block + j * words, m, words))
            return true;
    return false;
}

static bool contains_at(const struct bc_window *w, struct bc_hash128 h,
                        uint64_t cur)
{
    struct masks m = segment_masks(h, w->k, w->seg_shift);
    return contains_masks(w, h, &m, live_set(w, cur));
}

/* Zero segment j in every block. */
static void clear_segment(struct bc_window *w, unsigned j)
{
    uint64_t stride = (uint64_t)w->gens * w->seg_words;
    for (uint64_t b = 0; b < w->blocks; b++)
        memset(w->words + b * stride + j * w->seg_words, 0, w->seg_words * 8u);
    w->seg_gen[j] = NO_GEN;
    w->seg_keys[j] = 0;
    w->live_gen = NO_GEN;
}

void bc_window_advance(struct bc_window *window, uint64_t now)
{
    if (!window || window->kind != BC_WINDOW_TIME)
        return;
    if (now > window->now)
        window->now = now;
    uint64_t cur = generation_at(window, now);
    for (unsigned j = 0; j < window->gens; j++)
        if (window->seg_gen[j] != NO_GEN && !live(window, j, cur))
            clear_segment(window, j);
}

/* Insert into the current generation (the window is at cur). */
static void insert_masks(struct bc_window *w, struct bc_hash128 h,
                         const struct masks *m, uint64_t cur)
{
    unsigned j = (unsigned)(cur % w->gens);
    if (w->seg_gen[j] != cur) {
        if (w->seg_gen[j] != NO_GEN)
            clear_segment(w, j);
        w->seg_gen[j] = cur;
        w->live_gen = NO_GEN;
    }
    uint64_t *seg = block_of(w, h) + j * w->seg_words;
    for (unsigned i = 0; i < w->seg_words; i++)
        seg[i] |= m->w[i];
    w->inserts++;
    w->seg_keys[j]++;
    if (w->kind == BC_WINDOW_COUNT && --w->count_left == 0) {
        w->count_gen++;
        w->count_left = w->gen_span;
    }
}

bool bc_window_contains_hash(const struct bc_window *window,
                             struct bc_hash128 h, uint64_t now)
{
    if (!window)
        return false;
    return contains_at(window, h, generation_at(window, now));
}

bool bc_window_test_and_add_hash(struct bc_window *window, struct bc_hash128 h,
                                 uint64_t now)
{
    if (!window)
        return false;
    bc_window_advance(window, now);
    uint64_t cur = generation_at(window, now);
    if (cur != window->live_gen)
        cache_live(window, cur);
    struct masks m = segment_masks(h, window->k, window->seg_shift);
    if (contains_masks(window, h, &m, window->live_segs))
        return false;
    insert_masks(window, h, &m, cur);
    return true;
}

void bc_window_add_hash(struct bc_window *window, struct bc_hash128 h,
                        uint64_t now)
{
    if (!window)
        return;
    bc_window_advance(window, now);
    struct masks m = segment_masks(h, window->k, window->seg_shift);
    insert_masks(window, h, &m, generation_at(window, now));
}

bool bc_window_contains(const struct bc_window *window, const void *key,
                        size_t len, uint64_t now)
{
    if (!key && len > 0)
        return false;
    return bc_window_contains_hash(window, bc_window_hash(window, key, len),
                                   now);
}

bool bc_window_test_and_add(struct bc_window *window, const void *key,
                            size_t len, uint64_t now)
{
    if (!key && len > 0)
        return false;
    return bc_window_test_and_add_hash(window, bc_window_hash(window, key, len),
                                       now);
}

void bc_window_add(struct bc_window *window, const void *key, size_t len,
                   uint64_t now)
{
    if (!key && len > 0)
        return;
    bc_window_add_hash(window, bc_window_hash(window, key, len), now);
}

void bc_window_prefetch(const struct bc_window *window, struct bc_hash128 h)
{
    if (!window)
        return;
    const uint64_t *block = block_of(window, h);
    size_t bytes = (size_t)window->gens * (window->seg_bits / 8);
    for (size_t off = 0; off < bytes; off += 64)
        __builtin_prefetch((const char *)block + off, 1, 3);
}

void bc_window_test_and_add_batch(struct bc_window *window,
                                  const struct bc_hash128 *hashes, size_t count,
                                  uint64_t now, bool *was_new)
{
    if (!hashes || !was_new)
        return;
    if (!window) {
        memset(was_new, 0, count * sizeof(*was_new));
        return;
    }
    for (size_t i = 0; i < count && i < PREFETCH_AHEAD; i++)
        bc_window_prefetch(window, hashes[i]);
    for (size_t i = 0; i < count; i++) {
        if (i + PREFETCH_AHEAD < count)
            bc_window_prefetch(window, hashes[i + PREFETCH_AHEAD]);
        was_new[i] = bc_window_test_and_add_hash(window, hashes[i], now);
    }
}

void bc_window_contains_batch(const struct bc_window *window,
                              const struct bc_hash128 *hashes, size_t count,
                              uint64_t now, bool *present)
{
    if (!hashes || !present)
        return;
    if (!window) {
        memset(present, 0, count * sizeof(*present));
        return;
    }
    unsigned live_segments = live_set(window, generation_at(window, now));
    for (size_t i = 0; i < count && i < PREFETCH_AHEAD; i++)
        bc_window_prefetch(window, hashes[i]);
    for (size_t i = 0; i < count; i++) {
        if (i + PREFETCH_AHEAD < count)
            bc_window_prefetch(window, hashes[i + PREFETCH_AHEAD]);
        struct masks m = segment_masks(hashes[i], window->k, window->seg_shift);
        present[i] = contains_masks(window, hashes[i], &m, live_segments);
    }
}

void bc_window_stats(const struct bc_window *window, uint64_t now,
                     struct bc_window_stats *out)
{
    if (!out)
        return;
    if (!window) {
        memset(out, 0, sizeof(*out));
        return;
    }
    const struct bc_window *w = window;
    uint64_t cur = generation_at(w, now);
    struct bc_window_stats s = {
        .kind = w->kind,
        .window = w->window,
        .capacity = w->capacity,
        .p = w->p,
        .generations = w->gens,
        .segment_bits = w->seg_bits,
        .k = w->k,
        .blocks = w->blocks,
        .bytes = (uint64_t)w->nwords * 8,
        .gen_keys = w->gen_keys,
        .gen_span = w->gen_span,
        .generation = cur,
        .inserts = w->inserts,
        .now = now > w->now ? now : w->now,
        .fpr_peak = w->fpr_peak,
    };
    double pass = 1.0, pass2 = 1.0, a1[BC_WINDOW_MAX_GENERATIONS] = {0};
    double cov[BC_WINDOW_MAX_GENERATIONS] = {0};
    double var_i[BC_WINDOW_MAX_GENERATIONS] = {0};
    double blocks = (double)w->blocks;
    for (unsigned j = 0; j < w->gens; j++) {
        if (!live(w, j, cur))
            continue;
        s.live_keys += w->seg_keys[j];
        if (w->seg_keys[j] > w->gen_keys)
            s.over_capacity = true;
        double keys = (double)w->seg_keys[j];
        a1[j] = segment_moment(w->seg_bits, keys, blocks, w->k, w->k, false);
        double a2 =
            segment_moment(w->seg_bits, keys, blocks, w->k, 2 * w->k, false);
        double ia = segment_moment(w->seg_bits, keys, blocks, w->k, w->k, true);
        cov[j] = ia - a1[j] * keys / blocks;
        var_i[j] = keys / blocks * (1 - 1 / blocks);
        pass *= 1.0 - a1[j];
        pass2 *= 1.0 - 2.0 * a1[j] + a2;
    }
    s.fpr_predicted = 1.0 - pass;
    /* Var(P_b) less its part along each generation's count (fixed in
     * total), over B. */
    double var = pass2 - pass * pass;
    for (unsigned j = 0; j < w->gens; j++) {
        if (var_i[j] <= 0)
            continue;
        double others = pass / (1.0 - a1[j]); /* prod over l != j */
        var -= others * others * cov[j] * cov[j] / var_i[j];
    }
    var /= blocks;
    s.fpr_state_sd = var > 0 ? sqrt(var) : 0.0;
    if (w->kind == BC_WINDOW_COUNT)
        s.now = 0;
    *out = s;
}

/* ---- persistence ----------------------------------------------------- */

static void encode_header(const struct bc_window *w,
                          unsigned char hdr[FILE_HEADER])
{
    memset(hdr, 0, FILE_HEADER);
    memcpy(hdr, FILE_MAGIC, 8);
    bc_put_le32(hdr + 8, FILE_VERSION);
    bc_put_le32(hdr + 12, (uint32_t)w->kind);
    bc_put_le64(hdr + 16, w->window);
    bc_put_le64(hdr + 24, w->capacity);
    uint64_t pbits;
    memcpy(&pbits, &w->p, 8);
    bc_put_le64(hdr + 32, pbits);
    bc_put_le32(hdr + 40, w->gens);
    bc_put_le32(hdr + 44, w->k);
    bc_put_le32(hdr + 48, FILE_HASH_ID);
    bc_put_le32(hdr + 52, w->seg_bits);
    bc_put_le64(hdr + 56, w->seed);
    bc_put_le64(hdr + 64, w->gen_keys);
    bc_put_le64(hdr + 72, w->gen_span);
    bc_put_le64(hdr + 80, w->blocks);
    bc_put_le64(hdr + 88, w->inserts);
    bc_put_le64(hdr + 96, w->now);
    bc_put_le64(hdr + 104, (uint64_t)w->nwords * 8);
    for (unsigned j = 0; j < BC_WINDOW_MAX_GENERATIONS; j++) {
        bc_put_le64(hdr + 112 + 8 * j, w->seg_gen[j]);
        bc_put_le64(hdr + 240 + 8 * j, w->seg_keys[j]);
    }
}

static enum bc_status write_window(int fd, const void *ctx)
{
    const struct bc_window *w = ctx; /* words swapped and restored */
    unsigned char hdr[FILE_HEADER], trailer[FILE_TRAILER];
    encode_header(w, hdr);
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    XXH64_update(&state, hdr, sizeof(hdr));
    bc_words_to_le(w->words, w->nwords);
    XXH64_update(&state, w->words, w->nwords * 8);
    enum bc_status st = bc_write_all(fd, hdr, sizeof(hdr));
    if (st == BC_OK)
        st = bc_write_all(fd, w->words, w->nwords * 8);
    bc_words_to_le(w->words, w->nwords);
    if (st != BC_OK)
        return st;
    bc_put_le64(trailer, XXH64_digest(&state));
    return bc_write_all(fd, trailer, sizeof(trailer));
}

enum bc_status bc_window_save(const struct bc_window *window, const char *path)
{
    if (!window || !path)
        return BC_ERR_INVALID_ARG;
    return bc_save_atomic(path, write_window, window);
}

enum bc_status bc_window_load_mem(const void *data, size_t len,
                                  struct bc_window **out)
{
    if (!data || !out)
        return BC_ERR_INVALID_ARG;
    const unsigned char *p = data;
    if (len < 8)
        return memcmp(p, FILE_MAGIC, len) == 0 ? BC_ERR_TRUNCATED
                                               : BC_ERR_FORMAT;
    if (memcmp(p, FILE_MAGIC, 8) != 0)
        return BC_ERR_FORMAT;
    if (len < FILE_HEADER + FILE_TRAILER)
        return BC_ERR_TRUNCATED;
    if (bc_get_le32(p + 8) != FILE_VERSION)
        return BC_ERR_VERSION;
    uint64_t bytes = bc_get_le64(p + 104);
    if (bytes > BC_BLOOM_MAX_BITS / 8)
        return BC_ERR_CORRUPT;
    if (len < FILE_HEADER + bytes + FILE_TRAILER)
        return BC_ERR_TRUNCATED;
    if (len > FILE_HEADER + bytes + FILE_TRAILER)
        return BC_ERR_CORRUPT;
    size_t body = FILE_HEADER + (size_t)bytes;
    if (XXH64(p, body, 0) != bc_get_le64(p + body))
        return BC_ERR_CHECKSUM;
    uint32_t kind = bc_get_le32(p + 12), gens = bc_get_le32(p + 40);
    uint32_t k = bc_get_le32(p + 44);
    uint64_t pbits = bc_get_le64(p + 32), blocks = bc_get_le64(p + 80);
    double rate;
    memcpy(&rate, &pbits, 8);
    uint64_t window = bc_get_le64(p + 16), capacity = bc_get_le64(p + 24);
    uint64_t gen_keys = bc_get_le64(p + 64), gen_span = bc_get_le64(p + 72);
    if (kind > BC_WINDOW_TIME || gens < BC_WINDOW_MIN_GENERATIONS ||
        gens > BC_WINDOW_MAX_GENERATIONS || k < 1 || k > BC_WINDOW_MAX_K ||
        bc_get_le32(p + 48) != FILE_HASH_ID ||
        !valid_segment(bc_get_le32(p + 52)) || !(rate > 0 && rate < 1) ||
        window == 0 || capacity == 0 || gen_keys == 0 || gen_span == 0 ||
        blocks == 0 || blocks > bytes ||
        bytes != blocks * gens * (bc_get_le32(p + 52) / 8) || bytes % 64 != 0)
        return BC_ERR_CORRUPT;
    uint64_t seg_gen[BC_WINDOW_MAX_GENERATIONS];
    for (unsigned j = 0; j < BC_WINDOW_MAX_GENERATIONS; j++) {
        seg_gen[j] = bc_get_le64(p + 112 + 8 * j);
        if (seg_gen[j] != NO_GEN && (j >= gens || seg_gen[j] % gens != j))
            return BC_ERR_CORRUPT;
    }
    struct bc_window *w;
    enum bc_status st = new_window(blocks, gens, bc_get_le32(p + 52), &w);
    if (st != BC_OK)
        return st;
    w->kind = kind == 0 ? BC_WINDOW_COUNT : BC_WINDOW_TIME;
    w->window = window;
    w->capacity = capacity;
    w->p = rate;
    w->k = k;
    w->seed = bc_get_le64(p + 56);
    w->gen_keys = gen_keys;
    w->gen_span = gen_span;
    w->inserts = bc_get_le64(p + 88);
    w->count_gen = w->inserts / gen_span;
    w->count_left = gen_span - w->inserts % gen_span;
    w->now = bc_get_le64(p + 96);
    for (unsigned j = 0; j < BC_WINDOW_MAX_GENERATIONS; j++) {
        w->seg_gen[j] = seg_gen[j];
        w->seg_keys[j] = bc_get_le64(p + 240 + 8 * j);
    }
    memcpy(w->words, p + FILE_HEADER, (size_t)bytes);
    bc_words_to_le(w->words, w->nwords);
    w->fpr_peak = peak_rate(segment_moment(w->seg_bits, (double)gen_keys,
                                           (double)blocks, k, k, false),
                            gens);
    *out = w;
    return BC_OK;
}

enum bc_status bc_window_load(const char *path, struct bc_window **out)
{
    if (!path || !out)
        return BC_ERR_INVALID_ARG;
    unsigned char *buf;
    size_t len;
    enum bc_status st = bc_read_file(
        path, BC_BLOOM_MAX_BITS / 8 + FILE_HEADER + 64, &buf, &len);
    if (st != BC_OK)
        return st;
    st = bc_window_load_mem(buf, len, out);
    free(buf);
    return st;
}
