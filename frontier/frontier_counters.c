/*
 * frontier_counters.c - the frontier's counters, described once.
 *
 * One row per field of struct bc_frontier_stats (frontier.h), but for
 * .seen (the seen-test's own table, seen_counters.c). crawl's report, its
 * --stats-json "counters", --counters and the crawl state walk this table
 * (see bloomcrawl/counter.h). The TOTALs are saved in a crawl state as
 * "frontier.NAME" (arrays: "frontier.KEY.LABEL_VALUE", KEY the row's key,
 * e.g. "frontier.reason.robots") and restored on resume; the GAUGEs are
 * the queues and hosts now, rebuilt from the state.
 *
 * To add a counter: add its field to struct bc_frontier_stats, count it
 * where its event happens (a total in f->totals, in whichever frontier*.c
 * file has the job), and add one row below (name, kind, type, unit, help). A
 * TOTAL is then saved and restored by its name with no other change.
 */
#include "bloomcrawl/frontier.h"

#include <stddef.h>

static const char *reason_name(size_t i)
{
    return bc_frontier_reason_name((enum bc_frontier_reason)i);
}

static const char *sitemap_reason_name(size_t i)
{
    return bc_frontier_sitemap_reason_name((enum bc_frontier_sitemap_reason)i);
}

#define ROW(nm, kd, ty, un, hl)                                                \
    BC_COUNTER_ROW(struct bc_frontier_stats, nm, #nm, kd, ty, un, hl)
#define ARRAY(nm, un, lb, fn, ky, hl)                                          \
    BC_COUNTER_ARRAY(struct bc_frontier_stats, nm, #nm, un, lb, fn, ky, hl)

static const struct bc_counter table[] = {
    ROW(queued, GAUGE, SIZE, "urls", "URLs waiting in host queues"),
    ROW(in_flight, GAUGE, SIZE, "jobs",
        "FETCH and FETCH_ROBOTS jobs handed out and not done"),
    ROW(hosts, GAUGE, SIZE, "hosts", "Hosts known"),
    ROW(hosts_ready, GAUGE, SIZE, "hosts",
        "Hosts with queued URLs that may be contacted now"),
    ROW(hosts_waiting, GAUGE, SIZE, "hosts",
        "Hosts with queued URLs in their politeness delay"),
    ROW(hosts_blocked, GAUGE, SIZE, "hosts",
        "Hosts with queued URLs blocked by Retry-After or a retry's wait"),
    ROW(hosts_robots, GAUGE, SIZE, "hosts",
        "Hosts with queued URLs whose robots.txt is not known yet"),
    ROW(hosts_given_up, GAUGE, SIZE, "hosts",
        "Hosts whose robots.txt was unreachable after every retry"),
    ROW(hosts_open, GAUGE, SIZE, "hosts",
        "Hosts whose circuit is open or half-open"),
    ROW(hosts_down, GAUGE, SIZE, "hosts",
        "Hosts given up as down after transient faults"),
    ROW(queue_bytes, GAUGE, SIZE, "bytes", "Memory of the host queues"),
    ROW(added, TOTAL, U64, "urls", "URLs offered (bc_frontier_add calls)"),
    ROW(admitted, TOTAL, U64, "urls", "URLs offered and enqueued"),
    ARRAY(reasons, "urls", "reason", reason_name, "reason",
          "URLs offered, by admission verdict (drops included)"),
    ROW(handed_out, TOTAL, U64, "jobs", "FETCH jobs handed out"),
    ROW(retried, TOTAL, U64, "urls",
        "URLs queued again after a transient fault"),
    ROW(given_back, TOTAL, U64, "jobs",
        "Jobs given back (bc_frontier_giveback)"),
    ROW(retries_exhausted, TOTAL, U64, "urls",
        "Transient faults with no retry left"),
    ROW(robots_fetches, TOTAL, U64, "jobs", "FETCH_ROBOTS jobs handed out"),
    ROW(robots_parsed, TOTAL, U64, "fetches",
        "robots.txt fetches answered 2xx and parsed"),
    ROW(robots_unavailable, TOTAL, U64, "fetches",
        "robots.txt fetches answered 3xx or 4xx: everything allowed"),
    ROW(robots_unreachable, TOTAL, U64, "fetches",
        "robots.txt fetches failed: 5xx, 408, 429 or no answer"),
    ROW(sitemap_fetches, TOTAL, U64, "jobs", "FETCH_SITEMAP jobs handed out"),
    ROW(sitemap_keys, TOTAL, U64, "urls",
        "Sitemap URLs the seen-test found new"),
    ARRAY(sitemaps, "sitemaps", "reason", sitemap_reason_name, "sitemap",
          "Sitemap URLs found, queued or refused and why"),
};

const struct bc_counter *bc_frontier_counter_table(size_t *n)
{
    if (n)
        *n = sizeof(table) / sizeof(table[0]);
    return table;
}
