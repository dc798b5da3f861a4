/*
 * bloom_math.c - how big a Bloom filter must be, and how wrong it will be.
 *
 * The classic analysis (Bloom 1970; Broder and Mitzenmacher 2004). Insert n
 * keys into m bits, each key setting k bits chosen uniformly. One given bit
 * stays zero with probability (1 - 1/m)^(k n) ~ e^(-k n / m). A key never
 * inserted is a false positive when its k bits are all set:
 *
 *     f(n, m, k) = (1 - e^(-k n / m))^k                              (1)
 *
 * For fixed m/n, f is smallest at k_opt = (m / n) ln 2, where every bit is
 * set with probability 1/2 and f = 2^(-k) = e^(-(m/n) (ln 2)^2). Solving
 * that for m gives the size for a target rate p:
 *
 *     m = ceil(-n ln p / (ln 2)^2),    k = round((m / n) ln 2) >= 1    (2)
 *
 * so each key costs -ln p / (ln 2)^2 = 1.44 log2(1/p) bits: 9.59 at 1 %,
 * 19.17 at 0.01 %, whatever the key's length. That is 44 % above the
 * information-theoretic floor log2(1/p) of any structure that answers with
 * one-sided error rate p.
 *
 * Worked examples (tests/test_bloom.c checks each):
 *     n = 10^6, p = 10^-4  ->  m = 19,170,117 bits = 2.29 MiB, k = 13
 *                              (k_opt = 13.29)
 *     n = 10^9, p = 10^-2  ->  m = 9.585 * 10^9 bits = 1.198 GB, k = 7
 *     m = 20 n, k = 10     ->  f = (1 - e^(-1/2))^10 = 8.89 * 10^-5
 *
 * (1) treats the k n bit-settings as independent, which they are not quite;
 * the exact rate is a little higher. Goel and Gupta (2010) bound it from
 * above by
 *
 *     (1 - e^(-k (n + 0.5) / (m - 1)))^k                             (3)
 *
 * which differs from (1) in the fourth significant digit for m ~ 10^7.
 *
 * The blocked layout (Putze, Sanders and Singler 2007) puts all k bits of a
 * key into one block of B = 512 bits (a cache line) picked by the hash. A
 * block then holds a Poisson number of keys with mean lambda = B n / m, and
 * crowded blocks answer "maybe" more often than (1) predicts. The usual
 * mixture takes each block's fill at its mean given i keys:
 *
 *     f_mean = sum_i Pois(i; lambda) (1 - (1 - 1/B)^(k i))^k            (4)
 *
 * But the fill X of a block with i keys is itself random - the number of
 * distinct bits that k i uniform offsets set - and a query's rate (X/B)^k
 * is convex in X, so by Jensen's inequality E[(X/B)^k] > (E[X]/B)^k and
 * (4) runs under the truth: by 0.9 % of the rate at 1 % (m = 9.9 n,
 * k = 6), 2.2 % at 0.12 % (m = 15 n, k = 9) - 3 to 5 standard errors of
 * a 10^7-query measurement (bench_fpr, before this was fixed).
 * We take the distribution of X instead:
 *
 *     f_blocked = sum_i Pois(i; lambda) E[(X_(k i) / B)^k]              (4')
 *
 * computed without the 513-state distribution of X: a query of k uniform
 * offsets falls on j distinct bits with probability q_j, and is a false
 * positive when those j bits are all set; by symmetry, when c of k fixed
 * bits are set, j of those k taken at random are all set with chance
 * C(c, j) / C(k, j). So
 *
 *     E[(X/B)^k] = sum_c P(c of k fixed bits set) w_c,
 *     w_c = sum_j q_j C(c, j) / C(k, j)                                  (5)
 *
 * where q_j follows from k steps of q'_j = q_j j/B + q_(j-1) (B - j + 1)/B
 * and the k+1 states "c of k fixed bits set" advance by one offset at a
 * time (c -> c + 1 with chance (k - c)/B): O(k^2) per key of the mixture,
 * all terms positive. (4') needs about 9.92 bits per key at 1 % and 22.0
 * at 0.01 % (against 9.6 and 19.2 for the classic layout; (4) said 9.90
 * and 21.9): the price of one cache miss per query instead of k. There is
 * no closed form for m; bc_bloom_size() searches for the least number of
 * blocks whose rate (4'), at its best k, is at most p.
 */
#include <math.h>

#include "bloomcrawl/bloom.h"

/* ln 2 and (ln 2)^2 (M_LN2 is not in strict C11). */
#define BC_LN2         0.693147180559945309417
#define BC_LN2_SQUARED (BC_LN2 * BC_LN2)

double bc_bloom_fpr_classic(double n, double m, double k)
{
    return pow(1.0 - exp(-k * n / m), k);
}

double bc_bloom_fpr_classic_upper(double n, double m, double k)
{
    return pow(1.0 - exp(-k * (n + 0.5) / (m - 1.0)), k);
}

double bc_bloom_fpr_blocked(double n, double m, double k)
{
    const double b = BC_BLOOM_BLOCK_BITS;
    double lambda = b * n / m;
    /* Beyond 10^4 keys per block (m/n < 0.05 bits per key: a filter far
     * past saturation) every block is full, the mixture equals (1) (both
     * are 1 to within 10^-8 at the best k), and summing its terms would only
     * cost time. */
    if (lambda > 1e4)
        return bc_bloom_fpr_classic(n, m, k);
    if (!(k >= 0.5))
        return 1.0; /* no probe: every query says "maybe" */
    unsigned kk = k > BC_BLOOM_MAX_K ? BC_BLOOM_MAX_K : (unsigned)(k + 0.5);

    /* q[j]: P(the kk query offsets fall on exactly j distinct bits), built
     * one offset at a time. */
    double q[BC_BLOOM_MAX_K + 1] = {1.0};
    for (unsigned d = 0; d < kk; d++) {
        for (unsigned j = d + 1; j >= 1; j--)
            q[j] = q[j] * j / b + q[j - 1] * (b - (j - 1)) / b;
        q[0] = 0.0;
    }
    /* w[c] = sum_j q[j] C(c, j) / C(kk, j): the rate of a query given
     * that c of kk fixed bits are set (5). */
    double w[BC_BLOOM_MAX_K + 1];
    for (unsigned c = 0; c <= kk; c++) {
        double ratio = 1.0; /* C(c, j) / C(kk, j), from j = 0 */
        w[c] = 0.0;
        for (unsigned j = 0; j <= c; j++) {
            w[c] += q[j] * ratio;
            if (j < c)
                ratio *= (double)(c - j) / (double)(kk - j);
        }
    }
    /* cov[c]: P(c of kk fixed bits are set) after i keys (kk i offsets)
     * in the block, advanced key by key; term i of (4') is
     * Pois(i; lambda) sum_c cov[c] w[c]. Terms far from lambda are
     * skipped, but the chain still runs through them. */
    double cov[BC_BLOOM_MAX_K + 1] = {1.0};
    double stay[BC_BLOOM_MAX_K + 1], move[BC_BLOOM_MAX_K + 1];
    for (unsigned c = 0; c <= kk; c++) {
        stay[c] = 1.0 - (kk - c) / b; /* the offset hits a set bit */
        move[c] = (kk - c) / b;       /* it sets one more of the kk */
    }
    double log_lambda = log(lambda); /* once, not once per term */
    double spread = 12.0 * sqrt(lambda) + 30.0;
    double lo = floor(lambda - spread), hi = ceil(lambda + spread);
    double sum = 0.0;
    for (double i = 0.0; i <= hi; i += 1.0) {
        if (i >= lo) {
            double log_pois = i * log_lambda - lambda - lgamma(i + 1.0);
            if (lambda == 0.0)
                log_pois = i == 0.0 ? 0.0 : -INFINITY;
            double rate = 0.0;
            for (unsigned c = 0; c <= kk; c++)
                rate += cov[c] * w[c];
            sum += exp(log_pois) * rate;
        }
        for (unsigned d = 0; d < kk; d++) {
            for (unsigned c = kk; c >= 1; c--)
                cov[c] = cov[c] * stay[c] + cov[c - 1] * move[c - 1];
            cov[0] *= stay[0];
        }
    }
    return sum;
}

static bool bad_rate(double p)
{
    return !(p > 0.0 && p < 1.0); /* also catches NaN */
}

/* Fill the fields every layout shares, from n, m_bits, k already set. */
static void finish_sizing(struct bc_bloom_sizing *s)
{
    double n = (double)s->n, m = (double)s->m_bits, k = s->k;
    s->k_opt = m / n * BC_LN2;
    s->bits_per_key = m / n;
    if (s->layout == BC_BLOOM_CLASSIC) {
        s->bytes = (s->m_bits + 63) / 64 * 8;
        s->fpr_predicted = bc_bloom_fpr_classic(n, m, k);
        s->fpr_upper_bound = bc_bloom_fpr_classic_upper(n, m, k);
    } else {
        s->bytes = s->m_bits / 8;
        s->fpr_predicted = bc_bloom_fpr_blocked(n, m, k);
        s->fpr_upper_bound = s->fpr_predicted;
    }
}

/* The best k for a blocked filter of m bits: rate (4) is unimodal in k. */
static unsigned blocked_best_k(double n, double m, double *rate)
{
    unsigned best = 1;
    double best_rate = bc_bloom_fpr_blocked(n, m, 1);
    for (unsigned k = 2; k <= BC_BLOOM_MAX_K; k++) {
        double r = bc_bloom_fpr_blocked(n, m, k);
        if (r >= best_rate)
            break;
        best = k;
        best_rate = r;
    }
    *rate = best_rate;
    return best;
}

static enum bc_status size_classic(uint64_t n, double p,
                                   struct bc_bloom_sizing *s)
{
    double m = ceil(-(double)n * log(p) / BC_LN2_SQUARED);
    if (m > (double)BC_BLOOM_MAX_BITS)
        return BC_ERR_TOO_LARGE;
    double k = round(m / (double)n * BC_LN2);
    if (k < 1.0)
        k = 1.0;
    if (k > BC_BLOOM_MAX_K)
        return BC_ERR_TOO_LARGE;
    s->m_bits = (uint64_t)m;
    s->k = (unsigned)k;
    return BC_OK;
}

/* classic at k given: (1 - e^(-k n / m))^k <= p is e^(-k n / m) >=
 * 1 - p^(1/k), so m = ceil(-k n / ln(1 - p^(1/k))); the rate is checked
 * and m stepped up where rounding left it a hair above p. */
static enum bc_status size_classic_k(uint64_t n, double p, unsigned k,
                                     struct bc_bloom_sizing *s)
{
    double m = ceil(-(double)k * (double)n / log1p(-pow(p, 1.0 / k)));
    while (m <= (double)BC_BLOOM_MAX_BITS &&
           bc_bloom_fpr_classic((double)n, m, k) > p)
        m += 1.0;
    if (m > (double)BC_BLOOM_MAX_BITS)
        return BC_ERR_TOO_LARGE;
    s->m_bits = (uint64_t)m;
    s->k = k;
    return BC_OK;
}

/* A blocked filter of m bits: its rate at k probes, or at its best k
 * when k is 0 (then *best is that k). */
static double blocked_rate(uint64_t n, uint64_t m, unsigned k, unsigned *best)
{
    double rate;
    if (k)
        return bc_bloom_fpr_blocked((double)n, (double)m, k);
    *best = blocked_best_k((double)n, (double)m, &rate);
    return rate;
}

/* blocked: the least number of blocks whose rate (4') is at most p, at k
 * probes, or at the best k for each size when k is 0. Searched up from
 * the classic m (at k, or formula (2)'s) in whole blocks, rounded down: a
 * blocked filter never beats a classic one of its size, so those blocks
 * do not suffice. */
static enum bc_status size_blocked(uint64_t n, double p, unsigned k,
                                   struct bc_bloom_sizing *s)
{
    const uint64_t b = BC_BLOOM_BLOCK_BITS;
    const uint64_t max_blocks = BC_BLOOM_MAX_BITS / b;
    struct bc_bloom_sizing c = {0};
    if (k) {
        enum bc_status st = size_classic_k(n, p, k, &c);
        if (st != BC_OK)
            return st;
    } else {
        double m = ceil(-(double)n * log(p) / BC_LN2_SQUARED);
        if (m > (double)BC_BLOOM_MAX_BITS)
            return BC_ERR_TOO_LARGE;
        c.m_bits = (uint64_t)m;
    }
    unsigned best = k;
    uint64_t lo = c.m_bits / b > 0 ? c.m_bits / b : 1, hi = lo;
    while (blocked_rate(n, hi * b, k, &best) > p) {
        if (hi >= max_blocks)
            return BC_ERR_TOO_LARGE;
        lo = hi;
        hi = hi > max_blocks / 2 ? max_blocks : hi * 2;
    }
    /* Invariant: hi blocks suffice; lo blocks may not. */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (blocked_rate(n, mid * b, k, &best) <= p)
            hi = mid;
        else
            lo = mid + 1;
    }
    s->m_bits = hi * b;
    blocked_rate(n, s->m_bits, k, &best);
    s->k = best;
    return BC_OK;
}

/* Size for n and p at the layout's best k (k = 0) or at k. */
static enum bc_status size_filter(uint64_t n, double p, unsigned k,
                                  enum bc_bloom_layout layout,
                                  struct bc_bloom_sizing *out)
{
    if (!out || n == 0 || bad_rate(p))
        return BC_ERR_INVALID_ARG;
    struct bc_bloom_sizing s = {.layout = layout, .n = n, .p = p};
    enum bc_status st;
    switch (layout) {
    case BC_BLOOM_CLASSIC:
        st = k ? size_classic_k(n, p, k, &s) : size_classic(n, p, &s);
        break;
    case BC_BLOOM_BLOCKED:
        st = size_blocked(n, p, k, &s);
        break;
    default:
        return BC_ERR_INVALID_ARG;
    }
    if (st != BC_OK)
        return st;
    finish_sizing(&s);
    *out = s;
    return BC_OK;
}

enum bc_status bc_bloom_size(uint64_t n, double p, enum bc_bloom_layout layout,
                             struct bc_bloom_sizing *out)
{
    return size_filter(n, p, 0, layout, out);
}

enum bc_status bc_bloom_size_k(uint64_t n, double p, unsigned k,
                               enum bc_bloom_layout layout,
                               struct bc_bloom_sizing *out)
{
    if (k == 0 || k > BC_BLOOM_MAX_K)
        return BC_ERR_INVALID_ARG;
    return size_filter(n, p, k, layout, out);
}

enum bc_status bc_bloom_rate(uint64_t n, uint64_t m, unsigned k,
                             enum bc_bloom_layout layout,
                             struct bc_bloom_sizing *out)
{
    if (!out || n == 0 || m == 0 || k == 0 || k > BC_BLOOM_MAX_K)
        return BC_ERR_INVALID_ARG;
    if (layout != BC_BLOOM_CLASSIC && layout != BC_BLOOM_BLOCKED)
        return BC_ERR_INVALID_ARG;
    if (m > BC_BLOOM_MAX_BITS)
        return BC_ERR_TOO_LARGE;
    struct bc_bloom_sizing s = {.layout = layout, .n = n, .m_bits = m, .k = k};
    if (layout == BC_BLOOM_BLOCKED) {
        const uint64_t b = BC_BLOOM_BLOCK_BITS;
        s.m_bits = (m + b - 1) / b * b;
    }
    finish_sizing(&s);
    *out = s;
    return BC_OK;
}
