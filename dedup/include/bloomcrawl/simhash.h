/*
 * bloomcrawl/simhash.h - near-duplicate text: 64-bit simhash fingerprints
 * and an index that finds earlier fingerprints within Hamming distance k.
 *
 * The fingerprint (Charikar 2002) maps a text to 64 bits so that similar
 * texts get fingerprints differing in few bits: two texts whose shingle
 * vectors are at angle theta differ in each bit with probability
 * theta / pi. The index (Manku, Jain and Das Sarma 2007) answers "which
 * earlier fingerprint lies within k bits of this one?" without a scan.
 * dedup/simhash.c teaches both; this header is the contract.
 *
 * The fingerprint is computed while the text streams in:
 *
 *     struct bc_simhash sh;            (on the caller's stack, < 800 bytes)
 *     bc_simhash_init(&sh, NULL);      (NULL: the default configuration)
 *     for each text chunk of the page:
 *         bc_simhash_feed_text(&sh, chunk, len);
 *     uint64_t fp;
 *     if (bc_simhash_final(&sh, &fp))  (false: too short, no fingerprint)
 *         ... compare fp with earlier fingerprints ...
 *
 * Chunks may split a word anywhere (in the middle of a UTF-8 sequence,
 * too): the fingerprint depends on the text's bytes only, never on where
 * it was cut. Feeding allocates nothing and cannot fail.
 *
 * Words: a byte is a word byte if it is an ASCII letter or digit (letters
 * folded to lower case) or any byte >= 0x80 (UTF-8 sequences, kept whole
 * and not case-folded); every other byte separates words. A feature is a
 * shingle of shingle_words consecutive words (3 by default), hashed with
 * XXH3-64; every shingle weighs 1.
 */
#ifndef BC_DEDUP_SIMHASH_H
#define BC_DEDUP_SIMHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the fingerprint ------------------------------------------------- */

/* Words per shingle: 3 by default, 1 to 8 accepted. */
#define BC_SIMHASH_DEFAULT_SHINGLE_WORDS 3u
#define BC_SIMHASH_MAX_SHINGLE_WORDS     8u
/* Shingles below which no fingerprint is taken (simhash.c says why). */
#define BC_SIMHASH_DEFAULT_MIN_SHINGLES 32u
/* Bytes of a word buffered before they are hashed on (longer words are
 * hashed in pieces of this size, chained: any length is one word). */
#define BC_SIMHASH_WORD_PIECE 32u

struct bc_simhash_config {
    unsigned shingle_words; /* 1..BC_SIMHASH_MAX_SHINGLE_WORDS */
    uint64_t min_shingles;  /* >= 1; fewer shingles: no fingerprint */
    uint64_t seed;          /* XXH3 seed of the word and shingle hashes;
                               fingerprints compare only under one seed */
};

/* The defaults: 3 words a shingle, 32 shingles at least, seed 0. */
void bc_simhash_config_init(struct bc_simhash_config *config);

/*
 * The state of one fingerprint in progress. Its size is public so that it
 * can live on the caller's stack; its fields are not: read it only
 * through the functions below (the layout may change in any version).
 */
struct bc_simhash {
    uint64_t lanes[8];   /* 64 8-bit counters of recent shingles */
    uint64_t ones[64];   /* shingles with bit i set, flushed from lanes */
    uint64_t shingles;   /* shingles counted */
    uint64_t words;      /* words ended */
    uint64_t piece_seed; /* chained hash of the word's earlier pieces */
    uint64_t seed;
    uint64_t min_shingles;
    uint64_t window[BC_SIMHASH_MAX_SHINGLE_WORDS]; /* last words' hashes */
    unsigned shingle_words;
    unsigned lane_fill; /* shingles in lanes since the last flush */
    unsigned word_len;  /* bytes of the current word in word[] */
    unsigned ready;     /* set by a successful init */
    unsigned char word[BC_SIMHASH_WORD_PIECE];
};

/*
 * Start a fingerprint with config (NULL: the defaults). BC_OK;
 * BC_ERR_INVALID_ARG for a NULL state, shingle_words outside 1..8 or
 * min_shingles 0 (the state is then unusable: feeding it does nothing and
 * final finds it too short). No allocation: nothing to free.
 */
enum bc_status bc_simhash_init(struct bc_simhash *state,
                               const struct bc_simhash_config *config);

/*
 * Feed the next len bytes of text (any bytes; NUL is a separator). A NULL
 * or uninitialised state, or NULL text with len > 0, is ignored. Cost:
 * linear in len, no allocation.
 */
void bc_simhash_feed_text(struct bc_simhash *state, const char *text,
                          size_t len);

/*
 * The fingerprint of the text fed so far (the last word ends here; the
 * state is not changed, so feeding may go on). true with *fp written when
 * the text had at least min_shingles shingles; false, *fp untouched, when
 * it had fewer ("too short": no fingerprint is taken) or when state or fp
 * is NULL.
 */
bool bc_simhash_final(const struct bc_simhash *state, uint64_t *fp);

/* Shingles of the text fed so far, the last word included as final()
 * would (0 for a NULL state): what final() compares to min_shingles. */
uint64_t bc_simhash_shingles(const struct bc_simhash *state);

/* The Hamming distance of two fingerprints: the bits in which they differ
 * (0..64). */
unsigned bc_simhash_distance(uint64_t a, uint64_t b);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_SIMHASH_H */
