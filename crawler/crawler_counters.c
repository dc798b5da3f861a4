/*
 * crawler_counters.c - the crawl loop's counters, described once.
 *
 * One row per field of struct bc_crawler_stats (crawler.h). crawl's
 * report, its --stats-json "counters", --counters and the crawl state walk
 * this table (see bloomcrawl/counter.h). The TOTALs are saved in a crawl
 * state at each commit as "crawler.NAME" (arrays: "crawler.NAME.LABEL",
 * e.g. "crawler.errors.timeout"; the status classes keep their old keys
 * "crawler.status_class[2]") and restored on resume, so they count over
 * all the runs of a crawl; the GAUGEs are levels of this process.
 *
 * To add a counter: add its field to struct bc_crawler_stats, count it in
 * crawler.c, and add one row below (name, kind, type, unit, help). A TOTAL
 * is then saved and restored by its name with no other change.
 */
#include "bloomcrawl/crawler.h"

#include <stddef.h>

/* status_class's index is the first digit of the status; [0] is anything
 * outside 100-599. */
static const char *status_class_name(size_t i)
{
    static const char *const names[6] = {"other", "1xx", "2xx",
                                         "3xx",   "4xx", "5xx"};
    return i < 6 ? names[i] : "?";
}

static const char *error_kind_name(size_t i)
{
    return bc_crawler_error_kind_name((enum bc_crawler_error_kind)i);
}

static const char *admit_name(size_t i)
{
    return bc_frontier_reason_name((enum bc_frontier_reason)i);
}

static const char *stop_name(size_t i)
{
    return bc_sitemap_stop_name((enum bc_sitemap_stop)i);
}

#define ROW(nm, kd, ty, un, hl)                                                \
    BC_COUNTER_ROW(struct bc_crawler_stats, nm, #nm, kd, ty, un, hl)
#define ARRAY(nm, un, lb, fn, hl)                                              \
    BC_COUNTER_ARRAY(struct bc_crawler_stats, nm, #nm, un, lb, fn, NULL, hl)

static const struct bc_counter table[] = {
    ROW(seeds, TOTAL, U64, "urls", "Seeds given (bc_crawler_add_seed calls)"),
    ROW(seeds_admitted, TOTAL, U64, "urls",
        "Seeds queued, or a duplicate of a queued URL"),
    ROW(handed_out, TOTAL, U64, "pages",
        "Fetches started, less those given back and retried"),
    ROW(pages, TOTAL, U64, "pages", "Pages finished with a final outcome"),
    ROW(retried, TOTAL, U64, "fetches",
        "Fetches queued again for a retry after a transient fault"),
    ROW(transient_given_up, TOTAL, U64, "pages",
        "Pages whose final outcome is a transient fault"),
    ROW(bytes, TOTAL, U64, "bytes", "Body bytes of the pages"),
    {.name = "status_class",
     .kind = BC_COUNTER_TOTAL,
     .type = BC_COUNTER_U64,
     .unit = "pages",
     .help = "Pages with an HTTP response, by status class",
     .offset = offsetof(struct bc_crawler_stats, status_class),
     .count = 6,
     .label = "class",
     .label_value = status_class_name,
     .key_indexed = true},
    ARRAY(errors, "pages", "kind", error_kind_name,
          "Pages failed without a response, by error kind"),
    ROW(links, TOTAL, U64, "links", "Links found on pages, nofollow too"),
    ROW(nofollow_skipped, TOTAL, U64, "links",
        "Links not followed: rel=nofollow or meta nofollow"),
    ROW(links_nomem, TOTAL, U64, "links",
        "Links lost for want of memory to hold them"),
    ROW(redirects, TOTAL, U64, "urls", "Redirect targets admitted as URLs"),
    ROW(merged, TOTAL, U64, "urls",
        "Links seen before in another spelling, merged by normalization"),
    ROW(merged_absolute, TOTAL, U64, "urls",
        "Merged links that were absolute URLs"),
    ROW(bad_scheme, TOTAL, U64, "urls",
        "URLs refused for an unsupported scheme (mailto:, ...)"),
    ROW(bad_malformed, TOTAL, U64, "urls", "URLs refused as malformed"),
    ROW(robots_fetched, TOTAL, U64, "fetches", "robots.txt transfers started"),
    ROW(dropped, TOTAL, U64, "urls", "URLs disallowed by robots.txt"),
    ROW(given_up_dropped, TOTAL, U64, "urls",
        "URLs dropped: robots.txt of their host unreachable"),
    ROW(host_down_dropped, TOTAL, U64, "urls",
        "URLs dropped: their host given up as down"),
    ROW(not_started, TOTAL, U64, "fetches",
        "Transfers that could not start (a URL curl cannot take)"),
    ROW(local_failures, TOTAL, U64, "fetches",
        "Transfers given back for want of a local resource"),
    ROW(local_errno, GAUGE, INT, "", "errno of the last local failure, or 0"),
    ROW(intake, GAUGE, UINT, "transfers",
        "Transfers let in flight at most now (halved by a local failure)"),
    ROW(warc_files, TOTAL, U64, "files", "WARC files created"),
    ROW(warc_records, TOTAL, U64, "records", "WARC records written"),
    ROW(warc_bytes, TOTAL, U64, "bytes", "WARC bytes written"),
    ROW(skipped_content_type, TOTAL, U64, "pages",
        "Pages whose Content-Type was refused"),
    ROW(sitemaps_started, TOTAL, U64, "fetches", "Sitemap transfers started"),
    ROW(sitemaps_fetched, TOTAL, U64, "sitemaps",
        "Sitemaps answered 2xx and parsed"),
    ROW(sitemap_urls, TOTAL, U64, "urls", "Page locations found in sitemaps"),
    ROW(sitemap_admitted, TOTAL, U64, "urls",
        "Page locations from sitemaps queued"),
    ARRAY(sitemap_rejected, "urls", "reason", admit_name,
          "Page locations from sitemaps not queued, by reason"),
    ROW(sitemap_indexed, TOTAL, U64, "sitemaps",
        "Sitemap locations found in sitemap indexes"),
    ARRAY(sitemap_cut, "sitemaps", "reason", stop_name,
          "Sitemaps the parser stopped before their end, by reason"),
    ARRAY(sitemap_errors, "sitemaps", "kind", error_kind_name,
          "Sitemap fetches failed without a response, by error kind"),
    ROW(sitemap_http_errors, TOTAL, U64, "sitemaps",
        "Sitemaps answered with a status other than 2xx"),
    ROW(sitemap_not_found, TOTAL, U64, "sitemaps",
        "Sitemaps answered 404 or 410"),
    ROW(in_flight, GAUGE, SIZE, "transfers", "Transfers in flight now"),
    ROW(routed_out, TOTAL, U64, "urls", "URLs handed to another crawl worker"),
    ROW(routed_in, TOTAL, U64, "urls",
        "URLs taken from other crawl workers (bc_crawler_add_routed)"),
    ROW(duplicates, TOTAL, U64, "pages",
        "Pages whose payload an earlier page had (identical payload digest)"),
    ROW(duplicate_bytes, TOTAL, U64, "bytes",
        "Payload bytes of duplicate pages not stored again"),
    ROW(payload_digests, GAUGE, SIZE, "payloads",
        "Distinct payloads in the crawl's index now"),
    ROW(unchanged, TOTAL, U64, "pages",
        "Recrawled pages answered in full with their own last payload"),
    ROW(conditional_requests, TOTAL, U64, "pages",
        "Recrawled pages requested with their last fetch's validators"),
    ROW(not_modified, TOTAL, U64, "pages",
        "Recrawled pages answered 304 Not Modified (no body sent)"),
    ROW(lastmod_due, TOTAL, U64, "pages",
        "Pages made due by a sitemap's lastmod later than their last fetch"),
    ROW(near_duplicates, TOTAL, U64, "pages",
        "Pages whose text's simhash lies within k bits of an earlier page's"),
    ROW(too_short, TOTAL, U64, "pages",
        "HTML pages with too little text to fingerprint"),
    ROW(near_links_skipped, TOTAL, U64, "links",
        "Links of (near-)duplicate pages not admitted (skip-links)"),
    ROW(fingerprints, GAUGE, SIZE, "fingerprints",
        "Simhash fingerprints in the crawl's index now (one per cluster)"),
    ROW(dedup_unindexed, TOTAL, U64, "pages",
        "Pages the payload or near-duplicate index could not take (no "
        "memory): a later copy of one is not reported"),
};

const struct bc_counter *bc_crawler_counter_table(size_t *n)
{
    if (n)
        *n = sizeof(table) / sizeof(table[0]);
    return table;
}
