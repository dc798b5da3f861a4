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
 *     struct bc_simhash sh;            (on the caller's stack, < 1 KB)
 *     bc_simhash_init(&sh, NULL);      (NULL: the default configuration)
 *     for each text chunk of the page:
 *         bc_simhash_feed_text(&sh, chunk, len);
 *     uint64_t fp;
 *     if (bc_simhash_final(&sh, &fp))  (false: too short, no fingerprint)
 *         bc_simhash_index_test_and_add(index, fp, page_id, &m, &found);
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
 *
 * The index keeps (fingerprint, id) pairs; the id is the caller's
 * reference to the page (a row, a journal id), returned on a match. Not
 * thread-safe. A NULL index is an empty index: queries find nothing, the
 * count and memory are 0; calls that change it return BC_ERR_INVALID_ARG.
 * Functions returning enum bc_status write their outputs only on BC_OK
 * and leave the index unchanged on failure.
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
    /* The last w words' hashes, oldest first. */
    uint64_t window[BC_SIMHASH_MAX_SHINGLE_WORDS];
    unsigned shingle_words;
    unsigned lane_fill; /* shingles in lanes since the last flush */
    unsigned word_len;  /* bytes of the current word in word[] */
    unsigned ready;     /* set by a successful init */
    unsigned chained;   /* the current word has hashed pieces */
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
 * state, a state bc_simhash_init() refused, or NULL text with len > 0 is
 * ignored (a state never initialised is not detected: init it). Cost:
 * linear in len, no allocation (BENCHMARKS.md section 10.0: about 22
 * instructions per byte of text fed whole and 32 fed in 15-byte runs;
 * 2.4 and 4.0 ns measured in a busy hour on a 2.45 GHz VM, 0.64 and 0.79
 * times the earlier code's 2.6 and 4.0 of a quieter one).
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

/* ---- the index ------------------------------------------------------- */

/* Hamming distance searched: 3 by default, 0 to 8 accepted. */
#define BC_SIMHASH_DEFAULT_K 3u
#define BC_SIMHASH_MAX_K     8u
/* Fingerprints compared per table, at n_expected, that the layout aims
 * below (see bc_simhash_index_layout()). */
#define BC_SIMHASH_DEFAULT_MAX_PROBES 256u
/* The most tables a layout may have, and fingerprints an index holds. */
#define BC_SIMHASH_MAX_TABLES 64u
#define BC_SIMHASH_MAX_COUNT  (UINT64_C(0xffffffff))

struct bc_simhash_index_config {
    unsigned k;          /* find fingerprints within k bits; 0..8 */
    uint64_t n_expected; /* fingerprints expected; >= 1 (more may be added,
                          each query then compares more) */
    unsigned blocks;     /* 0: chosen from k and n_expected; else the
                            number of blocks b, k < b <= 64 with
                            C(b, k) <= 64 tables (k = 0: 1 block) */
    uint64_t max_probes; /* 0: BC_SIMHASH_DEFAULT_MAX_PROBES */
};

/* The defaults: k = 3, n_expected = 10^6, blocks chosen, max_probes 256. */
void bc_simhash_index_config_init(struct bc_simhash_index_config *config);

/* The layout a configuration gives (simhash.c, THE INDEX). */
struct bc_simhash_layout {
    unsigned k;
    unsigned blocks;      /* b: the 64 bits cut into b blocks */
    unsigned tables;      /* t = C(b, k): one per choice of b - k blocks */
    unsigned key_bits;    /* the fewest key bits of a table */
    unsigned bucket_bits; /* the most bucket bits of a table */
    /* Fingerprints one query compares at n_expected:
   * sum over tables of n_expected / 2^(that table's bucket bits). */
    double probes;
    /* Bytes per fingerprint, buckets full: 16 + 8 t. */
    unsigned bytes_per_fp;
};

/*
 * Derive the layout of config (NULL: the defaults) into *out. BC_OK;
 * BC_ERR_INVALID_ARG for k > 8, n_expected 0, blocks <= k or > 64, or a
 * layout of more than BC_SIMHASH_MAX_TABLES tables asked for by blocks.
 */
enum bc_status
bc_simhash_index_layout(const struct bc_simhash_index_config *config,
                        struct bc_simhash_layout *out);

struct bc_simhash_index;

/*
 * Create an empty index (config NULL: the defaults), to be freed with
 * bc_simhash_index_free(). BC_OK, BC_ERR_INVALID_ARG (as
 * bc_simhash_index_layout(), or out NULL), BC_ERR_NOMEM. It allocates
 * 16 bytes per bucket of every table at once (2^bucket_bits per table).
 */
enum bc_status
bc_simhash_index_create(const struct bc_simhash_index_config *config,
                        struct bc_simhash_index **out);

/* Free an index; NULL is a no-op. */
void bc_simhash_index_free(struct bc_simhash_index *index);

/* A fingerprint found by a query. */
struct bc_simhash_match {
    uint64_t fp;       /* the earlier fingerprint */
    uint64_t id;       /* its id, as added */
    unsigned distance; /* bc_simhash_distance(query, fp) <= k */
};

/*
 * Add fp with the caller's id (any value; the same fp may be added more
 * than once). BC_OK, BC_ERR_INVALID_ARG (NULL index), BC_ERR_TOO_LARGE
 * (BC_SIMHASH_MAX_COUNT fingerprints already), BC_ERR_NOMEM. Cost:
 * one append to one bucket per table.
 */
enum bc_status bc_simhash_index_add(struct bc_simhash_index *index, uint64_t fp,
                                    uint64_t id);

/*
 * Find the NEAREST fingerprint within k bits of fp (ties: the one added
 * first). true with *match written (match may be NULL), false when none
 * is within k. probes (may be NULL) gets the fingerprints compared, what
 * the layout's probes predicts. Cost: one bucket per table.
 */
bool bc_simhash_index_query(const struct bc_simhash_index *index, uint64_t fp,
                            struct bc_simhash_match *match, uint64_t *probes);

/*
 * The seen-test for content: query fp, and add (fp, id) only if nothing
 * within k was found. BC_OK with *found (true: *match written, nothing
 * added; false: added) - match may be NULL; the errors of add.
 */
enum bc_status bc_simhash_index_test_and_add(struct bc_simhash_index *index,
                                             uint64_t fp, uint64_t id,
                                             struct bc_simhash_match *match,
                                             bool *found);

/* Fingerprints added. */
size_t bc_simhash_index_count(const struct bc_simhash_index *index);

/* Bytes the index holds: its struct, bucket arrays, buckets (with their
 * spare capacity) and the table of added pairs. */
size_t bc_simhash_index_memory(const struct bc_simhash_index *index);

/* The layout of index into *out (zeros for a NULL index). */
void bc_simhash_index_get_layout(const struct bc_simhash_index *index,
                                 struct bc_simhash_layout *out);

/*
 * Save to path atomically (a temporary file renamed over it; simhash.c
 * has the format). BC_OK, BC_ERR_INVALID_ARG, BC_ERR_IO (errno set),
 * BC_ERR_NOMEM.
 */
enum bc_status bc_simhash_index_save(const struct bc_simhash_index *index,
                                     const char *path);

/*
 * Load an index saved by bc_simhash_index_save() (from a file, or from
 * len bytes in memory), to be freed with bc_simhash_index_free(). BC_OK,
 * BC_ERR_INVALID_ARG, BC_ERR_IO, BC_ERR_NOMEM, and for a bad file
 * BC_ERR_FORMAT (magic), BC_ERR_VERSION, BC_ERR_TRUNCATED, BC_ERR_CORRUPT
 * (header fields, length) or BC_ERR_CHECKSUM; nothing is handed out then.
 * Cost: every pair is added again (the tables are rebuilt).
 */
enum bc_status bc_simhash_index_load(const char *path,
                                     struct bc_simhash_index **out);
enum bc_status bc_simhash_index_load_mem(const void *data, size_t len,
                                         struct bc_simhash_index **out);

#ifdef __cplusplus
}
#endif

#endif /* BC_DEDUP_SIMHASH_H */
