/*
 * bloom_int.h - probe positions shared by bloom.c and cbloom.c. Private to
 * dedup (never installed); tests include it to check the formulas.
 *
 * Every key is hashed once with XXH3-128 into (h1, h2) = (lo, hi). The k
 * probe positions of the classic layout come from enhanced double hashing
 * (Dillinger and Manolios, FMCAD 2004):
 *
 *     g_i = h1 + i h2 + (i^3 - i) / 6        (mod 2^64, h2 forced odd)
 *
 * computed incrementally with two additions per probe, and reduced to
 * [0, m) by multiply-shift ("fastrange", Lemire 2016):
 *
 *     pos_i = floor(g_i * m / 2^64)
 *
 * which uses the high bits of g_i, costs one multiplication, and works for
 * any m up to 2^64 - no `%`, no 32-bit truncation.
 *
 * The blocked layout picks its 512-bit block with fastrange(h1, blocks) and
 * draws the k bit offsets inside the block from h2 with a 64-bit linear
 * congruential generator, taking the top 9 bits of each state: offsets that
 * behave as independent uniform draws, which is what the Poisson-mixture
 * rate formula assumes.
 */
#ifndef BC_DEDUP_BLOOM_INT_H
#define BC_DEDUP_BLOOM_INT_H

#include <stdint.h>

#include "bloomcrawl/bloom.h"

__extension__ typedef unsigned __int128 bc_u128;

/* floor(x * m / 2^64): x uniform in [0, 2^64) becomes uniform in [0, m). */
static inline uint64_t bc_fastrange64(uint64_t x, uint64_t m)
{
    return (uint64_t)(((bc_u128)x * m) >> 64);
}

/* State of the classic probe sequence g_0, g_1, ... of one key. */
struct bc_probe {
    uint64_t g;     /* g_i */
    uint64_t delta; /* g_(i+1) - g_i = h2 + i (i + 1) / 2 */
    uint64_t i;
};

static inline void bc_probe_init(struct bc_probe *p, struct bc_hash128 h)
{
    p->g = h.lo;
    p->delta = h.hi | 1;
    p->i = 0;
}

/* The next position in [0, m). g_(i+1) - g_i = h2 + (3i^2 + 3i)/6, so the
 * difference itself grows by i + 1 each step. */
static inline uint64_t bc_probe_next(struct bc_probe *p, uint64_t m)
{
    uint64_t pos = bc_fastrange64(p->g, m);
    p->g += p->delta;
    p->i++;
    p->delta += p->i;
    return pos;
}

/* Blocked layout: the block of a key, in [0, blocks). */
static inline uint64_t bc_block_index(struct bc_hash128 h, uint64_t blocks)
{
    return bc_fastrange64(h.lo, blocks);
}

/* Knuth's MMIX linear congruential generator constants. */
#define BC_LCG_MUL UINT64_C(6364136223846793005)
#define BC_LCG_ADD UINT64_C(1442695040888963407)

/* The k bit offsets of a key inside its block, as eight 64-bit masks. */
static inline void bc_block_masks(struct bc_hash128 h, unsigned k,
                                  uint64_t mask[8])
{
    uint64_t x = h.hi;
    for (unsigned w = 0; w < 8; w++)
        mask[w] = 0;
    for (unsigned i = 0; i < k; i++) {
        x = x * BC_LCG_MUL + BC_LCG_ADD;
        unsigned bit = (unsigned)(x >> 55); /* top 9 bits: 0..511 */
        mask[bit >> 6] |= UINT64_C(1) << (bit & 63);
    }
}

#endif /* BC_DEDUP_BLOOM_INT_H */
