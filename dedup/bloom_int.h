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

#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/bloom.h"
#include "bc_io.h" /* bc_write_all, bc_read_all */

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

/* Knuth's MMIX linear congruential generator: x' = MUL x + ADD. */
#define BC_LCG_MUL UINT64_C(6364136223846793005)
#define BC_LCG_ADD UINT64_C(1442695040888963407)

/*
 * The i-th state of that generator started at h is an affine function of h,
 *     x_i = MUL^i h + ADD (MUL^(i-1) + ... + MUL + 1)    (mod 2^64),
 * so the k states can be computed independently - k multiplications that
 * run in parallel - instead of as a chain of k dependent steps. Row i - 1
 * of this table holds (MUL^i, ADD (MUL^(i-1) + ... + 1)); a test checks it
 * against the recurrence.
 */
static const struct bc_lcg_step {
    uint64_t mul, add;
} bc_lcg_steps[BC_BLOOM_MAX_K] = {
    {UINT64_C(0x5851f42d4c957f2d), UINT64_C(0x14057b7ef767814f)},
    {UINT64_C(0x685f98a2018fade9), UINT64_C(0x1a08ee1184ba6d32)},
    {UINT64_C(0x0b046976f22528f5), UINT64_C(0x9af678222e728119)},
    {UINT64_C(0xfb4d3ae39272be11), UINT64_C(0x66b61ae97f2099b4)},
    {UINT64_C(0x696d29da565ad7fd), UINT64_C(0x62354cda6226d1f3)},
    {UINT64_C(0xf08d02b0115f7a79), UINT64_C(0x8f947f36d0d0f606)},
    {UINT64_C(0x798e21c49ff78e45), UINT64_C(0x144093704fadba5d)},
    {UINT64_C(0xb59dda5f38413d21), UINT64_C(0x5b21778e3c8666a8)},
    {UINT64_C(0x5b5fee90a1001dcd), UINT64_C(0x7b985bc1e7bce4d7)},
    {UINT64_C(0xc07a0e3e901ef009), UINT64_C(0x7252e9376e45641a)},
    {UINT64_C(0x1cca61580fc1a895), UINT64_C(0xa220229ec164ffe1)},
    {UINT64_C(0x2baa1c4032658d31), UINT64_C(0x5d7d4da4cb0e1adc)},
    {UINT64_C(0xbc2bd0ebf66a209d), UINT64_C(0x0c73aa0d9a415dfb)},
    {UINT64_C(0x384115c58e369e99), UINT64_C(0x18e9107ab99b8b6e)},
    {UINT64_C(0x549e870bd354c7e5), UINT64_C(0xe9bcd26890f095a5)},
    {UINT64_C(0x8d5e2ddc895abe41), UINT64_C(0x329cb23ce0f7aa50)},
    {UINT64_C(0xe94bbfa1312ab06d), UINT64_C(0x8362aa9340fe215f)},
    {UINT64_C(0x98f1d81bdd781629), UINT64_C(0xf986342416ec8002)},
    {UINT64_C(0x68e4567292f73c35), UINT64_C(0x368083376ba4ffa9)},
    {UINT64_C(0xcaf41223432ce051), UINT64_C(0x6912b247b79a4904)},
    {UINT64_C(0x2eafbc79ad509d3d), UINT64_C(0xaefab65d77135303)},
    {UINT64_C(0x3b0114b115ade6b9), UINT64_C(0xbfc7666ab0ba95d6)},
    {UINT64_C(0xadf89e1d4ab45585), UINT64_C(0xdec3f99f561701ed)},
    {UINT64_C(0x6ea923efda890361), UINT64_C(0x307892d5fe586af8)},
    {UINT64_C(0xe70939602637b70d), UINT64_C(0x7c15eb1a6c5b56e7)},
    {UINT64_C(0x55c522eac22ba049), UINT64_C(0x74078c767c0560ea)},
    {UINT64_C(0x69cb5166bcac63d5), UINT64_C(0x2d2acce24f9fa071)},
    {UINT64_C(0x9ec7d51306cd3771), UINT64_C(0x6f47682e14d3c42c)},
    {UINT64_C(0xe398397bd158cddd), UINT64_C(0x13621127ec8ed10b)},
    {UINT64_C(0x493d9145485dd2d9), UINT64_C(0x9a109dfc559db53e)},
    {UINT64_C(0xfdd0c56d6864b725), UINT64_C(0x4ab009d226201f35)},
    {UINT64_C(0x96481983e5188c81), UINT64_C(0x0da130a0806148a0)},
    {UINT64_C(0xa92932838619b1ad), UINT64_C(0xa8f485b490a8a56f)},
    {UINT64_C(0x5e43edc2175a0e69), UINT64_C(0x2dd1b3c84cb9a6d2)},
    {UINT64_C(0xdd9404da57179f75), UINT64_C(0xac82b442fe060239)},
    {UINT64_C(0x85846b3d925b1291), UINT64_C(0xba09c177d0bd2c54)},
    {UINT64_C(0x1b59156fc29d327d), UINT64_C(0xb18070243e89f813)},
    {UINT64_C(0xa36c2aa5b06ee2f9), UINT64_C(0x8b9a402e6ec889a6)},
    {UINT64_C(0x829887580d046cc5), UINT64_C(0x81dc3a61528f0d7d)},
    {UINT64_C(0x2dd93f6e4665d9a1), UINT64_C(0x20670ecc67fee348)},
    {UINT64_C(0x2502c67f5d93204d), UINT64_C(0x148943805ade2cf7)},
    {UINT64_C(0x97e2499118b3e089), UINT64_C(0x0b623237a886f1ba)},
    {UINT64_C(0xc708bd31efbf6f15), UINT64_C(0x3596d7e2724d4501)},
    {UINT64_C(0x3bcdf1cdfffaf1b1), UINT64_C(0x200951a3d9cd217c)},
    {UINT64_C(0x1187601fb5084b1d), UINT64_C(0x8364db7a513ee81b)},
    {UINT64_C(0x0fe84c9b43999719), UINT64_C(0x39c53d919052b30e)},
    {UINT64_C(0x6532d2797181f665), UINT64_C(0xca6ee36ebbeaecc5)},
    {UINT64_C(0x0f607833d1dd6ac1), UINT64_C(0x7fe0e5d6d5d1daf0)},
    {UINT64_C(0xf4ca6fb62a3682ed), UINT64_C(0x0e9872a956980d7f)},
    {UINT64_C(0xd3ebaa38067996a9), UINT64_C(0x5abe9b0d2dbee1a2)},
    {UINT64_C(0xa8d82443517a52b5), UINT64_C(0xcc90a3111f2e88c9)},
    {UINT64_C(0x4bf48fd1e0e154d1), UINT64_C(0xfdb739ffd16e43a4)},
    {UINT64_C(0xabd54b85ba5497bd), UINT64_C(0xf6d06b7289cbc123)},
    {UINT64_C(0x0967fe7325266f39), UINT64_C(0xf78231121267d176)},
    {UINT64_C(0x795bc314411bd405), UINT64_C(0x1f75e527a63edd0d)},
    {UINT64_C(0x2e9487e122fbbfe1), UINT64_C(0xcab61a6fe4aecf98)},
    {UINT64_C(0xf344daf88466598d), UINT64_C(0x67d900b4d6966707)},
    {UINT64_C(0xc6a45b4f077bb0c9), UINT64_C(0x2953a6185807168a)},
    {UINT64_C(0x4c3efc693e6eca55), UINT64_C(0x89d196850b26ed91)},
    {UINT64_C(0x9d4c63f6ef52bbf1), UINT64_C(0x756ef4168e7f32cc)},
    {UINT64_C(0x45b8ab720c0c985d), UINT64_C(0x025ea5203eb2a32b)},
    {UINT64_C(0xd054e3efa7edeb59), UINT64_C(0xd27bb23d57c784de)},
    {UINT64_C(0xe4a3876cf36085a5), UINT64_C(0x57e7846b9d99fe55)},
    {UINT64_C(0x4425ebbf6f4d5901), UINT64_C(0x933550ac541e6140)},
};

/* Bit offset i (0 <= i < k) of a key inside its block: the top 9 bits of
 * the generator's (i+1)-th state from h2. */
static inline unsigned bc_block_bit(struct bc_hash128 h, unsigned i)
{
    uint64_t x = bc_lcg_steps[i].mul * h.hi + bc_lcg_steps[i].add;
    return (unsigned)(x >> 55); /* 0..511 */
}

/* The k bit offsets of a key inside its block, as eight 64-bit masks. */
static inline void bc_block_masks(struct bc_hash128 h, unsigned k,
                                  uint64_t mask[8])
{
    for (unsigned w = 0; w < 8; w++)
        mask[w] = 0;
    for (unsigned i = 0; i < k; i++) {
        unsigned bit = bc_block_bit(h, i);
        mask[bit >> 6] |= UINT64_C(1) << (bit & 63);
    }
}

/*
 * The atomic save of every dedup file (bloom.c): write(fd, ctx) fills
 * "path.tmp.<pid>", which is fsync'ed, renamed over path, and the
 * directory fsync'ed; stale temporaries of dead processes are removed
 * first. On failure the temporary is removed and errno kept.
 */
enum bc_status bc_save_atomic(const char *path,
                              enum bc_status (*write)(int fd, const void *ctx),
                              const void *ctx);
/*
 * Read the whole file at path into a new buffer (*data, freed by the
 * caller; *len bytes), for the loaders that check a file in memory.
 * Returns BC_OK, BC_ERR_IO (cannot open or read), BC_ERR_CORRUPT (longer
 * than max_len: no file of the format is), BC_ERR_TRUNCATED (it shrank
 * while read) or BC_ERR_NOMEM.
 */
enum bc_status bc_read_file(const char *path, uint64_t max_len,
                            unsigned char **data, size_t *len);

/* Little-endian integers of the dedup file formats. */
static inline void bc_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void bc_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t bc_get_le32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t bc_get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* A filter's array as little-endian bytes, as the files hold it: on a
 * little-endian host the words themselves; on a big-endian host each word
 * swapped in place (and swapped back by a second call). */
static inline void bc_words_to_le(uint64_t *words, uint64_t count)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (uint64_t i = 0; i < count; i++)
        words[i] = __builtin_bswap64(words[i]);
#else
    (void)words;
    (void)count;
#endif
}

#endif /* BC_DEDUP_BLOOM_INT_H */
