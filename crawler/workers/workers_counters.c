/*
 * workers_counters.c - a crawl worker's counters, described once.
 *
 * One row per field of struct bc_workers_stats (workers.h). crawl's
 * report, its --stats-json "counters" and --counters walk this table (see
 * bloomcrawl/counter.h). None is saved in a crawl state: the streams live
 * in Redis, and these count this worker's run (RUN_TOTAL) or say how it is
 * now (GAUGE).
 *
 * To add a counter: add its field to struct bc_workers_stats, count it in
 * workers.c, and add one row below (name, kind, type, unit, help).
 */
#include "bloomcrawl/workers.h"

#include <stddef.h>

#define ROW(nm, kd, ty, un, hl)                                                \
    BC_COUNTER_ROW(struct bc_workers_stats, nm, #nm, kd, ty, un, hl)

static const struct bc_counter table[] = {
    ROW(index, GAUGE, UINT, "", "This worker's index, 0 to workers - 1"),
    ROW(workers, GAUGE, UINT, "workers", "Workers of the crawl"),
    ROW(sent_entries, RUN_TOTAL, U64, "entries", "Stream entries sent"),
    ROW(sent_urls, RUN_TOTAL, U64, "urls", "URLs sent in stream entries"),
    ROW(send_cache_hits, RUN_TOTAL, U64, "urls",
        "URLs not sent: sent recently"),
    ROW(routed_seeds, RUN_TOTAL, U64, "urls",
        "Seeds given here and routed to other workers"),
    ROW(received_entries, RUN_TOTAL, U64, "entries",
        "Stream entries read from the inbox"),
    ROW(received_urls, RUN_TOTAL, U64, "urls", "URLs read from the inbox"),
    ROW(acked_entries, RUN_TOTAL, U64, "entries",
        "Valid stream entries acknowledged"),
    ROW(garbage_entries, RUN_TOTAL, U64, "entries",
        "Invalid stream entries skipped and acknowledged"),
    ROW(garbage_lines, RUN_TOTAL, U64, "lines",
        "Malformed lines of valid entries"),
    ROW(outbox, GAUGE, U64, "rows", "Outbox rows waiting now"),
    ROW(outbox_max, GAUGE, U64, "rows", "Most outbox rows waiting at once"),
    ROW(redis_errors, RUN_TOTAL, U64, "rounds",
        "Failed rounds of Redis commands (and probes)"),
    ROW(redis_reconnects, RUN_TOTAL, U64, "connections",
        "Reconnections to Redis"),
    ROW(redis_up, GAUGE, BOOL, "", "1 while connected to Redis"),
    ROW(redis_commands, RUN_TOTAL, U64, "commands",
        "Redis commands sent, MULTI and EXEC included"),
    ROW(done_seen_at_start, GAUGE, BOOL, "",
        "1 when the crawl was over as this worker started"),
    ROW(budget_spent, GAUGE, BOOL, "",
        "1 when the crawl ended with the global page budget spent"),
};

const struct bc_counter *bc_workers_counter_table(size_t *n)
{
    if (n)
        *n = sizeof(table) / sizeof(table[0]);
    return table;
}
