/*
 * latency_int.h - response times in bounded memory: a log-scale histogram
 * (private to the crawler module; tests/test_crawler.c checks it).
 *
 * A host's 95th percentile response time must not cost memory that grows
 * with its pages. The histogram keeps counts in 176 buckets (704 bytes):
 * the times 0..15 ms have a bucket each; above, every power of two
 * [2^e, 2^(e+1)) for e = 4..23 is cut into 8 buckets of equal width
 * 2^(e-3) (the idea of HdrHistogram, with 3 bits of sub-bucket):
 *
 *     bucket(v) = v                                        for v < 16
 *               = 16 + 8 (e - 4) + ((v >> (e - 3)) & 7)    e = floor(log2 v)
 *
 * A bucket [low, low + width) reports its midpoint low + width / 2. Its
 * width is at most low / 8, so the reported value is within width / 2 <=
 * v / 16 of any v in it: 6.25 % at worst, exact below 16 ms. Times of
 * 2^24 ms (4.7 hours) and more, far above any transfer timeout, all count
 * in the last bucket. A percentile is the nearest-rank one (the
 * ceil(p n / 100)-th smallest time): the bucket where the running count reaches
 * that rank holds that time, so the percentile too is within 6.25 %.
 * Counts saturate at UINT32_MAX.
 */
#ifndef BC_CRAWLER_LATENCY_INT_H
#define BC_CRAWLER_LATENCY_INT_H

#include <stdint.h>

#define BC_LATENCY_BUCKETS 176u

struct bc_latency {
    uint32_t count[BC_LATENCY_BUCKETS];
};

/* The bucket of a time of v ms. */
static inline unsigned bc_latency_bucket(uint64_t v)
{
    if (v < 16)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v);
    if (e > 23)
        return BC_LATENCY_BUCKETS - 1;
    return 16u + 8u * (e - 4u) + (unsigned)((v >> (e - 3u)) & 7u);
}

/* The value a bucket reports: itself below 16, else its midpoint. */
static inline uint64_t bc_latency_value(unsigned i)
{
    if (i < 16)
        return i;
    unsigned e = 4u + (i - 16u) / 8u, sub = (i - 16u) % 8u;
    uint64_t width = (uint64_t)1 << (e - 3u);
    return (8u + sub) * width + width / 2u;
}

static inline void bc_latency_add(struct bc_latency *h, uint64_t v)
{
    uint32_t *n = &h->count[bc_latency_bucket(v)];
    if (*n < UINT32_MAX)
        (*n)++;
}

/* The nearest-rank percentile p (1..100) of the times added: the value
 * of the ceil(p n / 100)-th smallest; 0 when none were. O(buckets). */
static inline uint64_t bc_latency_percentile(const struct bc_latency *h,
                                             unsigned p)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < BC_LATENCY_BUCKETS; i++)
        total += h->count[i];
    if (total == 0)
        return 0;
    uint64_t rank = (p * total + 99u) / 100u;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned i = 0; i < BC_LATENCY_BUCKETS; i++) {
        seen += h->count[i];
        if (seen >= rank)
            return bc_latency_value(i);
    }
    return bc_latency_value(BC_LATENCY_BUCKETS - 1);
}

#endif /* BC_CRAWLER_LATENCY_INT_H */
