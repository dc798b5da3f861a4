/*
 * fuzz_simhash.c - libFuzzer target for the simhash fingerprint's text
 * input path (bc_simhash_feed_text), and the index behind it.
 *
 * The input's first three bytes choose the shingle size (1..8), the
 * minimum of shingles (1..4) and where to cut the rest into up to three
 * chunks, so that the fuzzer explores cuts inside words, inside UTF-8
 * sequences, across the scan's 64-byte blocks and at the 16- and 32-byte
 * word lengths. The fingerprint and the shingle count must not depend on
 * the cut: fed whole, in three chunks and one byte at a time, the answers
 * must be the same; final() must agree with the shingle count and leave
 * the state alone. The fingerprint then goes through an index (k = 3)
 * beside its one-bit neighbours: each must be found within distance 1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/simhash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct answer {
    bool taken;
    uint64_t fp, shingles;
};

static struct answer finish(const struct bc_simhash *sh)
{
    struct answer a = {false, 0, bc_simhash_shingles(sh)};
    a.taken = bc_simhash_final(sh, &a.fp);
    struct answer again = {false, 0, bc_simhash_shingles(sh)};
    again.taken = bc_simhash_final(sh, &again.fp);
    if (a.taken != again.taken || a.fp != again.fp ||
        a.shingles != again.shingles)
        abort(); /* final() changed the state */
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    struct bc_simhash_config cfg;
    bc_simhash_config_init(&cfg);
    cfg.shingle_words = 1 + data[0] % BC_SIMHASH_MAX_SHINGLE_WORDS;
    cfg.min_shingles = 1 + data[1] % 4;
    const char *text = (const char *)data + 3;
    size_t len = size - 3;
    size_t cut1 = len ? data[2] % (len + 1) : 0;
    size_t cut2 = cut1 + (len - cut1) / 2;

    struct bc_simhash whole, chunks, bytes;
    if (bc_simhash_init(&whole, &cfg) != BC_OK ||
        bc_simhash_init(&chunks, &cfg) != BC_OK ||
        bc_simhash_init(&bytes, &cfg) != BC_OK)
        abort();
    bc_simhash_feed_text(&whole, text, len);
    bc_simhash_feed_text(&chunks, text, cut1);
    bc_simhash_feed_text(&chunks, text + cut1, cut2 - cut1);
    bc_simhash_feed_text(&chunks, text + cut2, len - cut2);
    for (size_t i = 0; i < len; i++)
        bc_simhash_feed_text(&bytes, text + i, 1);

    struct answer a = finish(&whole), b = finish(&chunks), c = finish(&bytes);
    if (a.taken != b.taken || a.fp != b.fp || a.shingles != b.shingles ||
        a.taken != c.taken || a.fp != c.fp || a.shingles != c.shingles)
        abort(); /* the fingerprint depends on the cut */
    if (a.taken != (a.shingles >= cfg.min_shingles))
        abort(); /* the too-short rule */
    if (!a.taken)
        return 0;

    struct bc_simhash_index_config icfg;
    bc_simhash_index_config_init(&icfg);
    icfg.n_expected = 100;
    struct bc_simhash_index *x = NULL;
    if (bc_simhash_index_create(&icfg, &x) != BC_OK)
        abort();
    for (unsigned bit = 0; bit < 64; bit += 9)
        if (bc_simhash_index_add(x, a.fp ^ (UINT64_C(1) << bit), bit) != BC_OK)
            abort();
    struct bc_simhash_match m;
    if (!bc_simhash_index_query(x, a.fp, &m, NULL) || m.distance != 1 ||
        m.id != 0 || bc_simhash_distance(m.fp, a.fp) != 1)
        abort(); /* the nearest, ties: the first added */
    bc_simhash_index_free(x);
    return 0;
}
