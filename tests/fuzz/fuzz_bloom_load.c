/*
 * fuzz_bloom_load.c - libFuzzer target for the Bloom filter file loader.
 *
 * Any byte string given to bc_bloom_load_mem() must either be refused with
 * an error (and nothing allocated) or give a filter that works: queries,
 * inserts and statistics on it must not crash, and saving it must give
 * back an image that loads again to the same filter.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/bloom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bc_bloom *b = NULL;
    enum bc_status st = bc_bloom_load_mem(data, size, 0, &b);
    if (st != BC_OK) {
        if (b != NULL)
            abort(); /* *out must be untouched on error */
        return 0;
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
    return 0;
}
