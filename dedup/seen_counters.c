/*
 * seen_counters.c - the seen-test's counters, described once.
 *
 * One row per field of struct bc_seen_stats (seen.h), its tiers' included
 * (lru_*, bloom_*, window_*, cbloom_*: the name is the path, '.' as '_').
 * crawl's report, its --stats-json "counters" and --counters walk this
 * table (see bloomcrawl/counter.h). None is saved in a crawl state: the
 * tallies (RUN_TOTAL) count this process's calls; the levels and the
 * filter's sizing are GAUGEs. Not here: the tier 1 kind, the filter's
 * layout and the window's kind (a configuration, not a count), and the
 * hash seed.
 *
 * To add a counter: add its field to struct bc_seen_stats, fill it in
 * bc_seen_stats(), and add one row below (name, kind, type, unit, help).
 */
#include "bloomcrawl/seen.h"

#include <stddef.h>

#define ROW(nm, kd, ty, un, field, hl)                                         \
    BC_COUNTER_ROW(struct bc_seen_stats, field, nm, kd, ty, un, hl)

static const struct bc_counter table[] = {
    ROW("tested", RUN_TOTAL, U64, "keys", tested, "Keys tested (test_and_add)"),
    ROW("verdict_new", RUN_TOTAL, U64, "keys", verdict_new,
        "Keys found new, false positives caught included"),
    ROW("duplicate", RUN_TOTAL, U64, "keys", duplicate,
        "Keys found certainly seen before (DUPLICATE)"),
    ROW("probably_seen", RUN_TOTAL, U64, "keys", probably_seen,
        "Keys the filter says seen and the LRU cannot confirm"),
    ROW("fp_caught", RUN_TOTAL, U64, "keys", fp_caught,
        "Bloom false positives proven wrong by a complete LRU"),
    ROW("lru_complete", GAUGE, BOOL, "", lru_complete,
        "1 while the LRU holds every key added (it never evicted)"),
    ROW("forgotten", RUN_TOTAL, U64, "keys", forgotten,
        "Keys forgotten by bc_seen_forget"),
    /* Tier 2: the LRU of exact keys. */
    ROW("lru_count", GAUGE, SIZE, "keys", lru.count, "Keys the LRU holds now"),
    ROW("lru_capacity", GAUGE, SIZE, "keys", lru.capacity,
        "Keys the LRU holds at most"),
    ROW("lru_key_bytes", GAUGE, SIZE, "bytes", lru.key_bytes,
        "Bytes of key data the LRU holds now"),
    ROW("lru_max_bytes", GAUGE, SIZE, "bytes", lru.max_bytes,
        "Key bytes the LRU holds at most (0: no byte limit)"),
    ROW("lru_hits", RUN_TOTAL, U64, "lookups", lru.hits,
        "LRU lookups that found the key"),
    ROW("lru_misses", RUN_TOTAL, U64, "lookups", lru.misses,
        "LRU lookups that did not find the key"),
    ROW("lru_inserts", RUN_TOTAL, U64, "keys", lru.inserts,
        "Keys added to the LRU that were not in it"),
    ROW("lru_evictions", RUN_TOTAL, U64, "keys", lru.evictions,
        "Keys evicted from the LRU to make room"),
    ROW("lru_bytes", GAUGE, SIZE, "bytes", lru.bytes,
        "Memory the LRU holds (slab or entries, and its buckets)"),
    /* Tier 1 as a Bloom filter (all zero for another kind). */
    ROW("bloom_m_bits", GAUGE, U64, "bits", bloom.m_bits,
        "Bits of the Bloom filter addressed by the probes"),
    ROW("bloom_bytes", GAUGE, U64, "bytes", bloom.bytes,
        "Memory of the Bloom filter's bit array"),
    ROW("bloom_k", GAUGE, UINT, "probes", bloom.k,
        "Probes of the Bloom filter per key"),
    ROW("bloom_n_expected", GAUGE, U64, "keys", bloom.n_expected,
        "Keys the Bloom filter was sized for"),
    ROW("bloom_inserts", RUN_TOTAL, U64, "keys", bloom.inserts,
        "Keys the Bloom filter found new, and adds"),
    ROW("bloom_bits_set", GAUGE, U64, "bits", bloom.bits_set,
        "Bits set in the Bloom filter (a popcount)"),
    ROW("bloom_fill", GAUGE, DOUBLE, "ratio", bloom.fill,
        "Fraction of the Bloom filter's bits set"),
    ROW("bloom_fpr_estimated", GAUGE, DOUBLE, "ratio", bloom.fpr_estimated,
        "False positive rate now, estimated from the fill"),
    ROW("bloom_n_estimated", GAUGE, DOUBLE, "keys", bloom.n_estimated,
        "Distinct keys estimated from the fill"),
    ROW("bloom_fpr_predicted", GAUGE, DOUBLE, "ratio", bloom.fpr_predicted,
        "False positive rate predicted at the expected keys"),
    ROW("bloom_concurrent", GAUGE, BOOL, "", bloom.concurrent,
        "1 when the Bloom filter takes concurrent adds"),
    ROW("bloom_mmapped", GAUGE, BOOL, "", bloom.mmapped,
        "1 when the Bloom filter's array is mmap'ed"),
    /* Tier 1 as a window filter (all zero for another kind). */
    ROW("window_window", GAUGE, U64, "", window.window,
        "The window: W keys (count) or T clock units (time)"),
    ROW("window_capacity", GAUGE, U64, "keys", window.capacity,
        "Keys per window the window filter was sized for"),
    ROW("window_p", GAUGE, DOUBLE, "ratio", window.p,
        "Target false positive rate of the window filter"),
    ROW("window_generations", GAUGE, UINT, "generations", window.generations,
        "Generations of the window filter (G)"),
    ROW("window_segment_bits", GAUGE, UINT, "bits", window.segment_bits,
        "Bits per generation segment of the window filter (S)"),
    ROW("window_k", GAUGE, UINT, "probes", window.k,
        "Probes of the window filter per key"),
    ROW("window_blocks", GAUGE, U64, "blocks", window.blocks,
        "Blocks of the window filter"),
    ROW("window_bytes", GAUGE, U64, "bytes", window.bytes,
        "Memory of the window filter's array"),
    ROW("window_gen_keys", GAUGE, U64, "keys", window.gen_keys,
        "Keys per generation the window filter was sized for (g)"),
    ROW("window_gen_span", GAUGE, U64, "", window.gen_span,
        "A generation's span: g insertions, or T/(G-1) clock units"),
    ROW("window_generation", GAUGE, U64, "", window.generation,
        "The current generation's number"),
    ROW("window_inserts", RUN_TOTAL, U64, "keys", window.inserts,
        "Insertions into the window filter (keys found new, and adds)"),
    ROW("window_live_keys", GAUGE, U64, "keys", window.live_keys,
        "Keys in the window filter's live generations"),
    ROW("window_now", GAUGE, U64, "", window.now,
        "The latest clock the window filter saw (time windows)"),
    ROW("window_fpr_predicted", GAUGE, DOUBLE, "ratio", window.fpr_predicted,
        "False positive rate now, from the live generations' keys"),
    ROW("window_fpr_state_sd", GAUGE, DOUBLE, "ratio", window.fpr_state_sd,
        "Standard deviation of this filter's rate about the predicted"),
    ROW("window_fpr_peak", GAUGE, DOUBLE, "ratio", window.fpr_peak,
        "False positive rate of the sizing, all generations full"),
    ROW("window_over_capacity", GAUGE, BOOL, "", window.over_capacity,
        "1 when a live generation holds more keys than it was sized for"),
    /* Tier 1 as a counting filter (all zero for another kind). */
    ROW("cbloom_m", GAUGE, U64, "counters", cbloom.m,
        "Counters of the counting filter"),
    ROW("cbloom_k", GAUGE, UINT, "probes", cbloom.k,
        "Probes of the counting filter per key"),
    ROW("cbloom_bytes", GAUGE, U64, "bytes", cbloom.bytes,
        "Memory of the counting filter's counters"),
    ROW("cbloom_n_expected", GAUGE, U64, "keys", cbloom.n_expected,
        "Keys the counting filter was sized for"),
    ROW("cbloom_keys", GAUGE, U64, "keys", cbloom.keys,
        "Keys in the counting filter: adds less removes"),
    ROW("cbloom_nonzero", GAUGE, U64, "counters", cbloom.nonzero,
        "Counters of the counting filter above zero"),
    ROW("cbloom_saturated", GAUGE, U64, "counters", cbloom.saturated,
        "Counters of the counting filter stuck at 15"),
    ROW("cbloom_fpr_estimated", GAUGE, DOUBLE, "ratio", cbloom.fpr_estimated,
        "False positive rate now: (nonzero / m)^k"),
};

const struct bc_counter *bc_seen_counter_table(size_t *n)
{
    if (n)
        *n = sizeof(table) / sizeof(table[0]);
    return table;
}
