/*
 * fuzz_window_load.c - libFuzzer target for the window filter's file
 * loader (bc_window_load_mem) and, on the same bytes, the counting
 * filter's (bc_cbloom_load_mem).
 *
 * Any byte string must either be refused with an error (nothing
 * allocated) or give a filter that works: queries, inserts at several
 * clocks, advances and statistics on it must not crash.
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

#include "bloomcrawl/cbloom.h"
#include "bloomcrawl/window.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void try_image(const uint8_t *data, size_t size)
{
    struct bc_window *w = NULL;
    if (bc_window_load_mem(data, size, &w) == BC_OK) {
        struct bc_window_stats st;
        uint64_t now = size > 16 ? data[16] * UINT64_C(977) : 5;
        for (unsigned i = 0; i < 40; i++) {
            char key[8] = {(char)i, 'k'};
            bc_window_test_and_add(w, key, sizeof(key), now + i * 101);
            (void)bc_window_contains(w, key, sizeof(key), now);
        }
        bc_window_advance(w, now + 100000);
        bc_window_stats(w, now + 100000, &st);
        bc_window_free(w);
    }
    struct bc_cbloom *c = NULL;
    if (bc_cbloom_load_mem(data, size, &c) == BC_OK) {
        bc_cbloom_add(c, "a", 1);
        (void)bc_cbloom_contains(c, "a", 1);
        (void)bc_cbloom_remove(c, "a", 1);
        bc_cbloom_free(c);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_image(data, size);
    if (size < 64 || size > (1u << 20))
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
