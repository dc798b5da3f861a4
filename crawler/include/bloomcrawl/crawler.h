/*
 * bloomcrawl/crawler.h - the crawl loop as a library: frontier + fetcher.
 *
 * A crawler wires the two halves that never see each other: the frontier
 * (bloomcrawl/frontier.h) decides what to fetch and when, the fetcher
 * (bloomcrawl/fetcher.h) fetches it on one thread with libcurl and
 * reports links, redirects and outcomes, which go back into the frontier.
 * The caller gives seeds, then either runs the crawl to its end with
 * bc_crawler_run(), or drives it from an event loop of its own with
 * bc_crawler_step(). Each fetched page's result comes to on_page (what a
 * crawler writes to its log: URL, status, depth, bytes, links, ...); the
 * loop's counters are read with bc_crawler_stats(), the frontier's (queue,
 * hosts, robots.txt, seen-test) through bc_crawler_frontier().
 * README.md ("Embedding the crawler") shows a whole crawler in a few
 * lines; tests/test_crawler.c compiles and runs that block as written.
 *
 * The process-wide bc_fetcher_global_init() must have been called before
 * bc_crawler_create() (see fetcher.h). The crawler never prints, never
 * sleeps longer than the timeout it is given, and reads the time from
 * CLOCK_MONOTONIC unless the configuration gives it a clock.
 *
 * A clean stop: bc_crawler_stop() hands out no new transfer; those in
 * flight finish and are reported; then the crawl is over (step's *done,
 * run returns). Freeing the crawler while transfers are in flight abandons
 * them (no on_page for those).
 *
 * Thread safety: none; one crawler is used by one thread (its callbacks
 * run on that thread, from bc_crawler_step() or bc_crawler_run()).
 */
#ifndef BC_CRAWLER_CRAWLER_H
#define BC_CRAWLER_CRAWLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bloomcrawl/crawl_state.h"
#include "bloomcrawl/fetcher.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/sitemap.h"
#include "bloomcrawl/status.h"
#include "bloomcrawl/warc.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Why a fetch failed, as a crawler counts it: the fetcher's status sorted
 * into a few kinds (bc_crawler_error_kind_of()), plus a redirect the
 * frontier refused for its chain length. The order is stable (a report
 * may list them in it). One list, X(NAME, "name") in the order of their
 * values from 0, makes the enum and bc_crawler_error_kind_name().
 */
/* clang-format off */
#define BC_CRAWLER_ERROR_KIND_LIST(X)                                         \
    X(BC_CRAWLER_ERR_TIMEOUT, "timeout")     /* BC_ERR_FETCH_TIMEOUT */       \
    X(BC_CRAWLER_ERR_TOO_LARGE, "too_large") /* body or headers over limit */ \
    X(BC_CRAWLER_ERR_TOO_SLOW, "too_slow")   /* BC_ERR_FETCH_TOO_SLOW */      \
    X(BC_CRAWLER_ERR_CONNECT, "connect")     /* BC_ERR_FETCH_CONNECT */       \
    X(BC_CRAWLER_ERR_DNS, "dns")             /* BC_ERR_FETCH_DNS */           \
    X(BC_CRAWLER_ERR_TLS, "tls")             /* BC_ERR_FETCH_TLS */           \
    X(BC_CRAWLER_ERR_PROTOCOL, "protocol")   /* BC_ERR_FETCH_PROTOCOL */      \
    X(BC_CRAWLER_ERR_NETWORK, "network")     /* BC_ERR_FETCH_NETWORK */       \
    X(BC_CRAWLER_ERR_OTHER, "other")         /* any other failure */          \
    X(BC_CRAWLER_ERR_TOO_MANY_REDIRECTS, "too_many_redirects")                \
        /* a 3xx beyond max_redirects hops */

#define BC_CRAWLER_ERROR_KIND_ENUM_(name, text) name,
enum bc_crawler_error_kind {
    BC_CRAWLER_ERROR_KIND_LIST(BC_CRAWLER_ERROR_KIND_ENUM_)
    BC_CRAWLER_ERR_KIND_COUNT
};
#undef BC_CRAWLER_ERROR_KIND_ENUM_
/* clang-format on */

/*
 * The kind of a failed transfer's status: BC_ERR_FETCH_TIMEOUT ->
 * BC_CRAWLER_ERR_TIMEOUT, BC_ERR_FETCH_TOO_LARGE and BC_ERR_FETCH_HEADERS ->
 * BC_CRAWLER_ERR_TOO_LARGE, and so on; every other status (BC_OK included)
 * -> BC_CRAWLER_ERR_OTHER. O(1).
 */
enum bc_crawler_error_kind bc_crawler_error_kind_of(enum bc_status status);

/*
 * The fault class of a finished transfer (docs/DESIGN.md 3.4, the one
 * table): status the fetcher's, http_status the response's (0: none),
 * os_errno the system's (bc_fetch_result.os_errno). BC_FAULT_NONE for an
 * answer that is the page's outcome. O(1).
 */
enum bc_fault bc_crawler_fault_of(enum bc_status status, int http_status,
                                  int os_errno);

/*
 * The kind's name in snake case, as crawl's --out and --stats-json write
 * it: "timeout", "too_large", "too_slow", "connect", "dns", "tls",
 * "protocol", "network", "other", "too_many_redirects"; "unknown" for a
 * value outside the enum. Never NULL, never freed.
 */
const char *bc_crawler_error_kind_name(enum bc_crawler_error_kind kind);

/* What a finished transfer fetched (on_fetch says it). */
enum bc_crawler_fetch_kind {
    BC_CRAWLER_FETCH_PAGE = 0, /* a page: a FETCH job (on_page too) */
    BC_CRAWLER_FETCH_ROBOTS,   /* a robots.txt */
    BC_CRAWLER_FETCH_SITEMAP   /* a sitemap (or sitemap index) */
};

/*
 * One fetched page, as on_page receives it: every FETCH job the frontier
 * handed out and the fetcher finished, whatever the outcome (robots.txt
 * and sitemap fetches are not pages; on_fetch sees them too, as this
 * struct with kind BC_CRAWLER_FETCH_ROBOTS or BC_CRAWLER_FETCH_SITEMAP,
 * depth 0, no referrer, no links). The strings are valid only during the
 * call.
 */
struct bc_crawler_page {
    const char *url;       /* the canonical URL fetched (NUL-terminated) */
    size_t url_len;        /* its length */
    unsigned depth;        /* seeds are 0 */
    unsigned redirects;    /* redirect hops that led to this URL */
    unsigned retries;      /* times it was queued again after a transient
                              fault (429, 503, refused, timeout, ...) */
    enum bc_status status; /* the fetcher's: BC_OK if an HTTP response came */
    int http_status;       /* 200, 301, 404, ...; 0 if none came */
    const char *content_type; /* Content-Type value, or NULL */
    uint64_t bytes;           /* body bytes received (after decoding) */
    uint64_t links;           /* links found on the page (nofollow too) */
    uint64_t ms;              /* transfer time */
    const char *location;     /* raw Location of a response, or NULL */
    size_t location_len;      /* its length */
    bool failed;              /* the fetch failed: error_kind, error_text */
    enum bc_crawler_error_kind error_kind; /* when failed */
    /* When failed: the fetcher's text for status, or, for
     * BC_CRAWLER_ERR_TOO_MANY_REDIRECTS, "redirect chain longer than
     * max_redirects"; "" otherwise. */
    const char *error_text;
    time_t fetched_at; /* wall-clock time (UTC) its transfer started */
    /* With a WARC writer: the file and the byte offset of this page's
     * response record (bc_warc_record_end()); NULL and 0 when none was
     * written (a failed fetch, or no writer). */
    const char *warc_file;
    uint64_t warc_offset;
    /* The canonical URL of the page it was found on or that redirected to
     * it (NUL-terminated); NULL for a seed. */
    const char *referrer;
    size_t referrer_len;
    /* Its Content-Type was refused (config.accept_types, reject_types):
     * the transfer stopped once the headers were in; bytes 0, no links. */
    bool skipped;
    enum bc_crawler_fetch_kind kind;
    const char *origin; /* its host's origin ("http://a.test:8080") */
    size_t origin_len;
    /* How it failed (bc_crawler_fault_of(); BC_FAULT_PERMANENT also for a
     * redirect chain too long): BC_FAULT_NONE for an answer that is its
     * outcome. A page whose final fault is BC_FAULT_TRANSIENT was given
     * up to it (retries exhausted, or its host down): with a state it is
     * kept for bc_crawl_state_retry_failed(). */
    enum bc_fault fault;
    /* on_fetch only: this attempt failed with a transient fault and the
     * URL was queued again, to be fetched not before retry_at_ms (the
     * crawler's clock); no on_page call for it. */
    bool retry;
    uint64_t retry_at_ms;
    /* With config.payload_dedup: the canonical URL (NUL-terminated) of
     * the first page whose 2xx response had the same payload (its SHA-1,
     * WARC-Payload-Digest's) when this one's is a duplicate, in this run
     * or, with a state, an earlier one; NULL otherwise. */
    const char *duplicate_of;
    size_t duplicate_of_len;
    /* With config.payload_dedup: a recrawl of this URL answered in full
     * (2xx) with the payload of its own last fetch. Not a duplicate (no
     * duplicate_of): the page did not change; with a WARC writer it is
     * archived as an identical-payload revisit of that fetch's record. */
    bool unchanged;
    /* With config.conditional: the request carried the validators of the
     * URL's last 2xx page (If-None-Match, If-Modified-Since) and the
     * server answered 304 Not Modified: the page is unchanged since that
     * fetch (http_status 304, no body, no links: those of the last fetch
     * were admitted then). Not a failure. */
    bool not_modified;

    /* With config.near_dedup: the canonical URL (NUL-terminated) of the
     * first page whose visible text's simhash lies within near_k bits of
     * this one's (crawler.c, NEAR-DUPLICATES), in this run or, with a
     * state, an earlier one, and the Hamming distance between the two;
     * NULL and 0 otherwise. Never set beside duplicate_of: a page with a
     * payload seen before is an exact duplicate, not also a near one.
     * near_links_skipped: its links not admitted (near_mode SKIP_LINKS;
     * counted in links as found). */
    const char *near_duplicate_of;
    size_t near_duplicate_of_len;
    unsigned near_distance;
    uint64_t near_links_skipped;
};

/* The loop's counters (the frontier keeps its own: bc_crawler_frontier()).
 * Every counter starts at 0 when the crawler is created. */
struct bc_crawler_stats {
    uint64_t seeds;          /* bc_crawler_add_seed() calls */
    uint64_t seeds_admitted; /* of which queued, or a duplicate of one */
    /* FETCH jobs started, less those given back and the attempts queued
     * again for a retry: the pages max_pages counts (each URL once). */
    uint64_t handed_out;
    uint64_t pages;              /* FETCH jobs finished (on_page calls: a
                                final outcome, not a retried attempt) */
    uint64_t retried;            /* attempts queued again for a retry (a
                                transient fault; on_fetch with retry) */
    uint64_t transient_given_up; /* pages whose final outcome is a transient
                                    fault (of pages) */
    uint64_t bytes;              /* their body bytes */
    /* Pages with an HTTP response (and no error kind) by status class:
     * [2] 2xx, [3] 3xx, [4] 4xx, [5] 5xx, [0] anything else, [1] 1xx. */
    uint64_t status_class[6];
    uint64_t errors[BC_CRAWLER_ERR_KIND_COUNT]; /* failed pages by kind */
    uint64_t links;            /* links found on pages (nofollow too) */
    uint64_t nofollow_skipped; /* of which rel=nofollow or meta nofollow */
    uint64_t links_nomem;      /* of which lost: no memory to hold them */
    uint64_t redirects;        /* 3xx with a Location, admitted as a URL */
    /* Links and redirect targets that the seen-test recognized as already
     * seen although not written in canonical form: spellings merged by
     * normalization; merged_absolute counts the absolute URLs among them
     * (those a crawler comparing raw strings would have fetched again). */
    uint64_t merged, merged_absolute;
    /* URLs refused as BC_ADMIT_BAD_URL (seeds, links, redirect targets):
     * unsupported scheme (mailto:, javascript:, ...) or malformed. */
    uint64_t bad_scheme, bad_malformed;
    uint64_t robots_fetched;    /* robots.txt transfers started */
    uint64_t dropped;           /* DROP jobs: disallowed by robots.txt */
    uint64_t given_up_dropped;  /* DROP jobs: their host was given up */
    uint64_t host_down_dropped; /* DROP jobs: their host was given up as
                                   down (BC_ADMIT_HOST_DOWN) */
    /* Jobs whose transfer could not be started for a reason other than
     * memory (a URL curl cannot take): reported to the frontier as failed
     * (no response), not counted as pages. */
    uint64_t not_started;
    /* Local failures (LOCAL FAILURES in bc_crawler_step()): transfers that
     * failed for want of a resource of this machine (descriptors,
     * memory, a WARC spool) or could not start for want of memory, each
     * given back to the frontier (fetched again later, never a page's
     * outcome, no on_page), and fetcher runs out of memory. local_errno:
     * the errno of the last one (EMFILE, ENFILE, ENOMEM, ENOBUFS, an
     * errno of a spool; 0 before any). Over all runs with a state. */
    uint64_t local_failures;
    int local_errno;
    /* The intake now: transfers the crawler lets in flight at most,
     * config.concurrency halved by each local failure (at least 1), one
     * more per transfer that completes without one (a gauge). */
    unsigned intake;
    /* With a WARC writer (all runs, like every counter): files created,
     * records written (warcinfo records included), bytes written. */
    uint64_t warc_files, warc_records, warc_bytes;
    /* Pages whose Content-Type was refused (page.skipped); also counted
     * under pages and their status class. */
    uint64_t skipped_content_type;
    /* Sitemaps (config.frontier.sitemaps): not pages, not on_page. */
    uint64_t sitemaps_started; /* sitemap transfers started */
    uint64_t sitemaps_fetched; /* of which a 2xx body was parsed */
    uint64_t sitemap_urls;     /* page <loc>s found in urlsets */
    uint64_t sitemap_admitted; /* of which queued: discovered via sitemap */
    /* The page <loc>s not queued, per reason of bc_frontier_add() (or
     * BC_ADMIT_SITEMAP_SCOPE). */
    uint64_t sitemap_rejected[BC_ADMIT_REASON_COUNT];
    uint64_t sitemap_indexed; /* sitemap <loc>s found in indexes */
    /* Files the parser stopped before their end, per reason ([0], "none",
     * stays 0): too many URLs, too large, malformed, DOCTYPE, ... */
    uint64_t sitemap_cut[BC_SITEMAP_STOP_COUNT];
    uint64_t sitemap_errors[BC_CRAWLER_ERR_KIND_COUNT]; /* failed fetches */
    uint64_t sitemap_http_errors; /* answered, not 2xx (404, 500, 3xx) */
    uint64_t sitemap_not_found;   /* of those, 404 or 410: no sitemap there
                                     (a guessed /sitemap.xml, mostly) */
    size_t in_flight;             /* transfers now in flight */
    /* Crawl workers (config.frontier.partition): URLs handed to route()
     * (the frontier's BC_ADMIT_ROUTED, seeds included), and
     * bc_crawler_add_routed() calls. */
    uint64_t routed_out, routed_in;
    /* With config.payload_dedup: pages whose payload a page before them
     * had (page.duplicate_of), and their payload bytes not stored again
     * (archived as revisit records, or no WARC writer; a duplicate whose
     * original has no record is archived whole and not counted here);
     * the distinct payloads in the index now (a gauge). */
    uint64_t duplicates, duplicate_bytes;
    size_t payload_digests;
    /* Recrawled pages answered in full with their own last payload
     * (page.unchanged); not in duplicates. */
    uint64_t unchanged;
    /* With config.conditional: recrawled pages sent with their last
     * fetch's validators, and those answered 304 (page.not_modified). */
    uint64_t conditional_requests, not_modified;
    /* With a state, recrawl_after_ms and frontier.sitemaps: pages queued
     * again because a sitemap's <lastmod> was later than their last
     * fetch, before their window passed (DESIGN 11.3). */
    uint64_t lastmod_due;

    /* With config.near_dedup: pages reported with near_duplicate_of,
     * HTML pages whose text was too short to fingerprint (fewer than
     * BC_SIMHASH_DEFAULT_MIN_SHINGLES shingles), and the links of
     * near-duplicate (or duplicate) pages not admitted under
     * BC_CRAWLER_NEAR_SKIP_LINKS; the fingerprints in the index now (a
     * gauge: the first page of each near-duplicate cluster). */
    uint64_t near_duplicates, too_short, near_links_skipped;
    size_t fingerprints;
    /* Pages the payload index or the near-duplicate index could not take
     * for want of memory: a later copy of one is not reported (and is
     * archived whole). With a state, a resume indexes them from their
     * rows. */
    uint64_t dedup_unindexed;
};

/* What a near-duplicate page's links become (config.near_mode). */
enum bc_crawler_near_mode {
    BC_CRAWLER_NEAR_FOLLOW = 0, /* admitted as any page's (the default) */
    BC_CRAWLER_NEAR_SKIP_LINKS  /* not admitted, counted: a session-ID
                                   space or a calendar ends at its first
                                   copy */
};

/* What the crawler is configured with; bc_crawler_config_init() fills the
 * defaults, the caller changes what it needs. */
struct bc_crawler_config {
    /* The frontier's configuration (bc_frontier_config_init defaults):
     * politeness, robots.txt, limits, scope, the seen-test's sizing. Its
     * user_agent names the crawler to robots.txt. */
    struct bc_frontier_config frontier;
    /* The fetcher's (bc_fetcher_config_init defaults): timeouts, body
     * limits, --resolve entries, TLS. Its callbacks and ctx belong to
     * the crawler and must be left NULL. A NULL user_agent sends the
     * frontier's, so the server sees the agent whose robots.txt rules are
     * obeyed. */
    struct bc_fetcher_config fetcher;
    unsigned concurrency; /* transfers in flight in all, >= 1 (8) */
    uint64_t max_pages;   /* FETCH jobs handed out at most; 0: no limit */
    /* The clock, in milliseconds, monotonic; NULL: CLOCK_MONOTONIC. Called
     * with ctx. Politeness delays are measured with it (a test may give a
     * fake one); the time the crawler sleeps and the fetcher's timeouts
     * are real time whatever it says. */
    uint64_t (*clock)(void *ctx);
    /* Called once per page with its final outcome, from
     * bc_crawler_step()/run(), after the frontier was told it is done
     * and its links and redirect target were admitted (an attempt queued
     * again for a retry is no page: on_fetch only); may be NULL. May call
     * bc_crawler_stop() and bc_crawler_stats(); must not call step, run
     * or free. */
    void (*on_page)(void *ctx, const struct bc_crawler_page *page);
    /* Called once per finished transfer of any kind (pages, retried
     * attempts of pages, robots.txt, sitemaps), after on_page for a page;
     * kind says which; may be NULL (a log of
     * every request). Same rules as on_page. */
    void (*on_fetch)(void *ctx, const struct bc_crawler_page *fetch);
    void *ctx; /* first argument of clock, on_page and on_fetch */
    /* Pages by media type of their 2xx response's Content-Type (compared
     * case-insensitively, parameters ignored; none counts as
     * application/octet-stream): each pattern "type/subtype", or a type
     * with the subtype "*" (any subtype of it), or "*" alone (any type;
     * bc_crawler_media_type_ok()). A page whose type matches no
     * accept pattern (when any is given) or some reject pattern is not
     * downloaded: the transfer stops once its headers are in, no link is
     * taken from it, and it is reported with skipped set. Other statuses,
     * robots.txt and the transfers of the crawler's own are never
     * filtered. Not copied: must outlive the crawler. */
    const char *const *accept_types;
    size_t accept_type_count;
    const char *const *reject_types;
    size_t reject_type_count;
    /* A crawl state (bloomcrawl/crawl_state.h) opened by the caller, or
     * NULL. With one, the crawl survives a kill: the frontier is the
     * state's (created, or rebuilt on resume, with its seeds' scope and
     * counters), the loop's counters continue from the state's (and
     * max_pages counts the pages of every run), bc_crawler_step()
     * commits the jobs it hands out before their transfers start, with
     * the pages completed since the last commit and their links (a
     * completed page waits at most 10 ms for a commit: see Durability at
     * bc_crawler_step()), and the seen-test is snapshotted every few
     * seconds and by bc_crawler_sync(). A resume may not change the
     * settings listed at bc_crawler_pin() (bc_crawler_create() refuses
     * it). Not owned: close it after bc_crawler_free(). */
    struct bc_crawl_state *state;
    /* A WARC writer (bloomcrawl/warc.h) opened by the caller, or NULL.
     * With one, every transfer the crawler starts (pages, robots.txt)
     * that gets a response is archived when it completes, in the same
     * turn: a request record (the request head as sent) and a response
     * record (the response head and body as received, before decoding),
     * each WARC-Concurrent-To the other, WARC-Date the transfer's start,
     * WARC-IP-Address the peer's. A failed transfer leaves no record,
     * except one cut by max_body_bytes (BC_ERR_FETCH_TOO_LARGE), which
     * keeps what was read, marked "WARC-Truncated: length", as is a
     * robots.txt cut at its 500 KiB. With a state too, each commit
     * records the writer's position (the state's private door): the
     * caller reopens the writer there on resume (bc_warc_open_at() with
     * bc_crawl_state_info()'s warc). A record's spool that cannot be
     * opened or written (EMFILE, ENOSPC) is a local failure of its
     * transfer (LOCAL FAILURES in bc_crawler_step()); a write error of
     * the WARC file stops the crawl
     * (bc_crawler_warc_error()). Not owned: free it after
     * bc_crawler_free(). */
    struct bc_warc *warc;
    /* Identical payloads (crawler.c, IDENTICAL PAYLOADS; default false):
     * index the SHA-1 of every page's whole 2xx payload of at least one
     * byte (the WARC writer's payload digest, or the crawler's own
     * without a writer), in memory and, with a state, in it; a page whose
     * payload is indexed already is reported with duplicate_of and, with
     * a WARC writer, archived as a revisit record (profile
     * identical-payload-digest) naming the first response's record. */
    bool payload_dedup;
    /* Conditional recrawls (crawler.c, CONDITIONAL RECRAWLS; default
     * false; it applies only with recrawl_after_ms, without which no
     * page is fetched twice): keep the ETag and Last-Modified of each
     * page's last 2xx response (with a state, in it; without one, in
     * memory), and
     * send them as If-None-Match and If-Modified-Since when the page is
     * fetched again (a recrawl, bc_crawler_revisit()); a 304 is reported
     * with not_modified and, with a WARC writer, archived as a revisit
     * record of profile server-not-modified naming the last fetch's
     * record. */
    bool conditional;

    /* Near-duplicates (crawler.c, NEAR-DUPLICATES; default false): take a
     * 64-bit simhash of every whole 2xx HTML page's visible text while the
     * link extractor reads it (no second pass), and look it up among the
     * earlier pages' (a bc_simhash_index, in memory and, with a state, in
     * it): a page within near_k bits of an earlier one is reported with
     * near_duplicate_of and near_distance, and under near_mode
     * BC_CRAWLER_NEAR_SKIP_LINKS its links are not admitted. near_k: 0 to
     * BC_SIMHASH_MAX_K (8); bc_crawler_config_init() sets
     * BC_SIMHASH_DEFAULT_K (3). */
    bool near_dedup;
    unsigned near_k;
    enum bc_crawler_near_mode near_mode;
    /* Recrawl after a window (DESIGN 2.5): a URL stays a duplicate for
     * recrawl_after_ms after its admission; once older than that and the
     * window's slack (at most ceil(recrawl_after_ms / 3) more: window.h,
     * G = 4), it is admitted again when it is met again (a link, a
     * redirect, a sitemap entry, a seed), so its page is fetched again.
     * 0 (the default): the seen-test never forgets. With it the frontier's seen-test is a time
     * window (frontier.seen.kind = BC_SEEN_WINDOW_TIME, window =
     * recrawl_after_ms; frontier.seen.expected is then the most URLs
     * admitted within any generation of it, recrawl_after_ms / 3 at G = 4
     * - a run that admits all its URLs at once counts them all: the
     * window is sized for (G - 1) x expected, 3x the memory) on
     * recrawl_clock, which the crawler
     * reads before every admission. The window counts from a URL's
     * admission, not from its fetch: a page waits in the queue before it
     * is fetched. With a state the window is saved in its snapshot and
     * survives a resume: the crawler gives the resume's time to the
     * state's replay of the journal (DESIGN 2.5), so no URL leaves its
     * window early. */
    uint64_t recrawl_after_ms;
    /* The window's clock: milliseconds since the epoch (wall time, so the
     * time between two runs of a resumed crawl counts), called with ctx;
     * NULL: CLOCK_REALTIME. A test may give a fake one. */
    uint64_t (*recrawl_clock)(void *ctx);
    /* A page budget shared with others (crawl workers' global
     * --max-pages), called with ctx. NULL: none (max_pages alone). When
     * set, the crawler holds at most one page "token": before asking the
     * frontier for a job while it holds none, it calls
     * page_budget(ctx, true); true grants one, false means the shared
     * budget is spent now: the crawler hands out no more FETCH jobs in
     * this step (as when max_pages is reached: the step says the crawl
     * is over once nothing is in flight, robots.txt and sitemap jobs
     * included), and asks once again at each later step (a token another
     * holder gave back can still be granted: the caller decides when to
     * stop stepping). A FETCH job whose transfer starts consumes the token; when
     * the frontier says DONE, or the crawl is stopped, while a token is
     * held, the crawler gives it back with page_budget(ctx, false) (the
     * return value ignored). A token held when the crawler is freed or
     * killed is not given back. */
    bool (*page_budget)(void *ctx, bool take);
    /* How long local failures may go on with no transfer completing
     * without one (LOCAL FAILURES in bc_crawler_step()) before a step
     * returns the local error (bc_crawler_local_error()); 0: for ever.
     * Default BC_CRAWLER_DEFAULT_LOCAL_WAIT_MS. */
    uint64_t local_wait_ms;
};

/* Is pattern a media type pattern of accept_types/reject_types:
 * "type/subtype" with both parts of token characters (RFC 9110 5.6.2), a
 * subtype "*" for any, or "*" alone? NULL: false. O(length). */
bool bc_crawler_media_type_ok(const char *pattern);

/* Default transfers in flight in all. */
#define BC_CRAWLER_DEFAULT_CONCURRENCY 8u

/* Default local_wait_ms: one minute. */
#define BC_CRAWLER_DEFAULT_LOCAL_WAIT_MS 60000u

/* Fill *config with the defaults documented above. NULL is a no-op. */
void bc_crawler_config_init(struct bc_crawler_config *config);

struct bc_crawler;

/*
 * Create a crawler: a frontier and a fetcher from config (copied; the
 * frontier's include/exclude arrays must outlive the crawler, as
 * frontier.h says). bc_fetcher_global_init() must have been called.
 * Returns BC_OK and sets *out; BC_ERR_INVALID_ARG (NULL config or out,
 * concurrency 0, a fetcher callback or ctx set, a bad media type
 * pattern), BC_ERR_MISMATCH (with config.state: a pinned setting changed,
 * bc_crawler_pin()), the errors of
 * bc_frontier_create() and bc_fetcher_create(), or BC_ERR_NOMEM; *out is
 * written only on success. Free with bc_crawler_free().
 */
enum bc_status bc_crawler_create(const struct bc_crawler_config *config,
                                 struct bc_crawler **out);

/*
 * PINNED SETTINGS: record, or check on resume, the settings of config that
 * a crawl with a state may not change, because the state's seen-test,
 * queue and hosts were made under them (a snapshot of other sizing cannot
 * be loaded; a changed scope, pattern, agent or robots.txt rule would make
 * one crawl of two rule sets). Named as crawl's options, with the value
 * as recorded:
 *   --scope          frontier.scope            host, domain or any
 *   --include        frontier.include          the patterns, space-joined
 *   --exclude        frontier.exclude          the same
 *   --expect         frontier.seen.expected    decimal
 *   --fp-rate        frontier.seen.fp_rate     %.17g
 *   --layout         frontier.seen.kind        classic (BC_SEEN_BLOOM_CLASSIC)
 *                                              or blocked (any other)
 *   --lru            frontier.seen.lru_capacity decimal
 *   --user-agent     frontier.user_agent       the string
 *   --no-robots      frontier.obey_robots      yes (not obeyed) or no
 *   --sitemaps       frontier.sitemaps         yes or no
 *   --recrawl-after  recrawl_after_ms          "<ms>ms"; not recorded
 *                                              when 0, so a state from
 *                                              before resumes as it was
 * Until a run of the state began (nothing was crawled), they are recorded,
 * replacing those before; afterwards each is compared with the recorded
 * one, and a setting recorded that neither these nor the open's own fixed
 * settings (crawl_state.h) give any more is a change too. Everything else
 * (politeness, limits, retries, the fetcher's settings) may change on
 * resume. bc_crawler_create() calls it with config.state set; an embedder
 * calls it earlier to refuse a resume before touching its own outputs.
 * Returns BC_OK, BC_ERR_MISMATCH (*err, if not NULL: option, was, now,
 * text "--scope differs from the crawl in the state (was domain, now
 * host)", the same text as bc_crawl_state_errmsg(); "" as none),
 * BC_ERR_INVALID_ARG (NULL config, or no config.state), BC_ERR_IO,
 * BC_ERR_NOMEM. Cost: O(recorded settings x 11).
 */
enum bc_status bc_crawler_pin(const struct bc_crawler_config *config,
                              struct bc_crawl_state_error *err);

/*
 * Free the crawler, its frontier and its fetcher. Transfers in flight are
 * abandoned without on_page. NULL is a no-op. Must not be called from a
 * callback.
 */
void bc_crawler_free(struct bc_crawler *crawler);

/*
 * Admit a seed URL (len bytes; an absolute http or https URL) at depth 0:
 * bc_frontier_add_seed(), counted in the stats (seeds, seeds_admitted,
 * bad_scheme/bad_malformed). *reason (may be NULL) says what the frontier
 * did; for BC_ADMIT_BAD_URL and BC_ADMIT_TOO_LONG, *url_status (may be
 * NULL) says why. Returns BC_OK whatever the reason, BC_ERR_INVALID_ARG
 * (NULL crawler or url), BC_ERR_NOMEM (*reason BC_ADMIT_NOMEM), or the
 * frontier's sticky store error (a state write or a route() failed, e.g.
 * BC_ERR_IO: *reason BC_ADMIT_STORE_ERROR, the seed not queued; the
 * state's bc_crawl_state_errmsg() says more, and the next step returns
 * it too). May be called at any time, also during a crawl. With a partition
 * (frontier.partition), a seed of another worker's host is routed there
 * (BC_ADMIT_ROUTED); its host and domain enter this crawler's scope all
 * the same, and the state keeps them for a resume.
 */
enum bc_status bc_crawler_add_seed(struct bc_crawler *crawler, const char *url,
                                   size_t len, enum bc_frontier_reason *reason,
                                   enum bc_status *url_status);

/*
 * Admit a URL another crawl worker routed here (crawler/workers):
 * bc_frontier_add_routed() of url (len bytes, absolute, canonical) at
 * depth with referrer (referrer_len bytes; NULL and 0: none; one longer
 * than the frontier's max_url_len is dropped and the URL admitted without
 * it) and redirects hops (the chain length it carries), counted in the
 * stats (routed_in, and bad_scheme/bad_malformed like a link); seed true:
 * bc_crawler_add_seed() instead (depth, redirects and referrer ignored).
 * *reason (may be NULL) says what the frontier did. Returns BC_OK
 * whatever the reason, BC_ERR_INVALID_ARG (NULL crawler or url, a NULL
 * referrer with a length, called from a callback), BC_ERR_NOMEM (*reason
 * BC_ADMIT_NOMEM), or the frontier's sticky error (a state write or a
 * route() failed: *reason BC_ADMIT_STORE_ERROR; the next step returns it
 * too). May be called between steps. With a state, the admission is
 * committed by the next bc_crawler_step() that returns BC_OK. Cost: one
 * admission.
 */
enum bc_status bc_crawler_add_routed(struct bc_crawler *crawler,
                                     const char *url, size_t len,
                                     unsigned depth, unsigned redirects,
                                     const char *referrer, size_t referrer_len,
                                     bool seed,
                                     enum bc_frontier_reason *reason);

/*
 * Put a seed's host and registrable domain in the scope without admitting
 * it (bc_frontier_restore_scope()): the seeds other workers were given.
 * Returns BC_OK, BC_ERR_INVALID_ARG (NULL crawler or url), a URL error
 * (the seed is malformed), or BC_ERR_NOMEM. O(URL length).
 */
enum bc_status bc_crawler_add_scope(struct bc_crawler *crawler, const char *url,
                                    size_t len);

/*
 * Revisit (DESIGN 2.5): offer every known page of the crawl's state
 * (its journal's pages handed out in an earlier turn or run) to
 * admission again, at its depth, at the recrawl clock: a page admitted
 * longer ago than recrawl_after_ms (and the window's slack) is due and
 * queued again; the others are duplicates. So a page's next fetch is due
 * recrawl_after_ms (plus at most the slack) after its admission, as
 * URLFrontier's nextFetchDate is fetch time + interval; nothing waits for a page not yet due: a crawl
 * that calls this at each start (crawl --revisit from cron) fetches what
 * is due then. For the pages a sitemap lists as changed since their
 * last fetch (its <lastmod>) to be due too, call
 * bc_crawl_state_sitemaps_again() before bc_crawler_create(): the run then
 * reads the sitemaps again (with frontier.sitemaps; DESIGN 11.3). A page
 * queued here has its last-fetch time stamped now, so a sitemap read in
 * this run does not queue it twice. *known (may be NULL) counts the rows
 * offered, *due (may be NULL) those queued. Needs a state and
 * recrawl_after_ms; call it before the first step. Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL crawler, no state, no recrawl_after_ms, or
 * inside a step), BC_ERR_IO, BC_ERR_NOMEM. Cost: O(journal) rows read and
 * seen-tests, and with a sitemap's <lastmod> (above) a row written per
 * page queued.
 */
enum bc_status bc_crawler_revisit(struct bc_crawler *crawler, uint64_t *known,
                                  uint64_t *due);

/*
 * One turn of the crawl: start transfers while there is room (concurrency,
 * max_pages, the page budget, not stopped) and the frontier has work that
 * may be fetched now, then do the network I/O that is ready, waiting at most timeout_ms
 * for it, or sleep until the frontier's next host is due when nothing is
 * in flight (never longer than timeout_ms; 0 does not wait). Finished
 * transfers call on_page from inside. *done (may be NULL) is set true when
 * the crawl is over: the frontier has nothing left, or max_pages were
 * handed out, or bc_crawler_stop() was called, and no transfer is in
 * flight; false otherwise. Returns BC_OK, BC_ERR_INVALID_ARG (NULL
 * crawler, or called from a callback), the local error
 * (bc_crawler_local_error(): BC_ERR_NOMEM or BC_ERR_IO, below), or, with
 * a crawl state, the state's error (BC_ERR_IO and the like: a write
 * failed; the crawl cannot go on, and the state resumes from its last
 * commit), the WARC writer's error (bc_crawler_warc_error()), or the
 * embedder's (bc_crawler_fail()): nothing is committed after any of
 * them. The frontier's own running out of memory is not an error: it is
 * tried again 100 ms later.
 *
 * LOCAL FAILURES. A transfer that fails for want of a resource of this
 * machine - a descriptor for its socket or its WARC spool (EMFILE,
 * ENFILE), memory (ENOMEM, ENOBUFS), a local port (EADDRNOTAVAIL:
 * bc_crawler_fault_of() says
 * BC_FAULT_LOCAL), a WARC spool that cannot be opened or written - or
 * that cannot start for want of memory, says nothing about its page: its
 * job is given back to the frontier (bc_frontier_giveback(): fetched
 * again later, no on_page or on_fetch, nothing counted against the page
 * or its host) and counted (stats local_failures, local_errno). The
 * crawl then slows its intake, additive increase, multiplicative
 * decrease as TCP does (RFC 5681): each local failure halves the
 * transfers let in flight (stats intake, at least 1), each transfer that
 * completes without one adds one back (up to concurrency); and after a
 * local failure no transfer starts for a pause of 100 ms, doubled by
 * each local failure in a row up to 1 s, so the loop never spins. When
 * local failures go on for local_wait_ms with no transfer completing
 * without one, the step returns the local error and the crawl cannot go
 * on (with a state, it resumes from its last commit once the resource is
 * there); a fetcher run out of memory counts as a local failure.
 *
 * Durability, with a state: everything admitted between two calls is
 * committed when the next call that returns BC_OK returns: the seeds, the
 * routed URLs (bc_crawler_add_routed()), the route() calls of those
 * admissions and what they wrote to the state (its outbox rows). A
 * process killed after such a return resumes with all of it; a caller
 * may act on it then (acknowledge the routed URLs). A job is committed
 * as in flight before its transfer starts; the pages that finish inside
 * a step, with their links and the outbox rows of their route() calls,
 * are committed by the first later step that hands a job out or that
 * comes 10 ms or more after the last commit (until then the step hands
 * nothing out while fewer than half the transfer slots are free: one
 * commit then covers several turns' pages), by the crawl's end, or by
 * bc_crawler_sync(). A kill before that fetches them again (they were in
 * flight at the last commit: at most concurrency pages a kill), so rows
 * of the outbox handed on before it may be handed on twice, which their
 * owner's seen-test absorbs.
 */
enum bc_status bc_crawler_step(struct bc_crawler *crawler, uint64_t timeout_ms,
                               bool *done);

/*
 * Crawl until the crawl is over (see bc_crawler_step()'s *done): steps of
 * up to one second. Returns BC_OK, or the first error of a step.
 */
enum bc_status bc_crawler_run(struct bc_crawler *crawler);

/*
 * Stop cleanly: no new transfer is started; those in flight finish (their
 * pages reported and their links admitted as usual), then the crawl is
 * over. May be called from on_page. Cannot be undone. NULL is a no-op.
 * Not for signal handlers: set a flag there and call this between steps.
 */
void bc_crawler_stop(struct bc_crawler *crawler);

/*
 * Pause (paused true) or resume: while paused no job is handed out (no
 * page, robots.txt or sitemap transfer starts); the transfers in flight
 * finish as usual, and the crawl is not over while paused (a step waits
 * its timeout). A stop while paused ends the crawl. May be called from
 * on_page. NULL is a no-op. Not for signal handlers nor other threads.
 */
void bc_crawler_pause(struct bc_crawler *crawler, bool paused);

/*
 * Make a bc_crawler_step() that waits for its transfers return early
 * (bc_fetcher_wakeup()): the one call that is safe from another thread,
 * for an embedder whose other threads queue work for the loop. A step
 * that sleeps with no transfer in flight (only politeness to wait for)
 * sleeps on: give such steps a short timeout. Returns BC_OK or
 * BC_ERR_INVALID_ARG (NULL).
 */
enum bc_status bc_crawler_wakeup(struct bc_crawler *crawler);

/*
 * With a crawl state: commit what is not committed yet and snapshot the
 * seen-test (a clean stop calls it last). Without one: BC_OK. Returns
 * BC_OK, BC_ERR_INVALID_ARG (NULL, or called from a callback), the WARC
 * writer's error (nothing committed: bc_crawler_warc_error()), the
 * embedder's (nothing committed: bc_crawler_fail()), or the
 * state's error (BC_ERR_IO: bc_crawl_state_errmsg() says what failed).
 */
enum bc_status bc_crawler_sync(struct bc_crawler *crawler);

/*
 * The first WARC write error, or BC_OK: once one happened no more records
 * are written, the step that saw it and every later step and sync return
 * it, and nothing is committed after it (the state resumes from before
 * it). *err_no (may be NULL) gets errno as the writer left it (0 when
 * none). BC_OK for NULL.
 */
enum bc_status bc_crawler_warc_error(const struct bc_crawler *crawler,
                                     int *err_no);

/*
 * Fail the crawl from a callback (on_page, on_fetch) that could not keep
 * what it was given: e.g. crawl's --out record of the page was not
 * written whole (a full disk). Sticky: from the step whose callback
 * called it, every bc_crawler_step() and bc_crawler_sync() returns status
 * without committing anything, so the pages finished since the last
 * commit (the one whose record was lost among them) stay in flight in the
 * state and are fetched again when it resumes. The first call wins (its
 * status and err_no are kept; later calls change nothing). status: any
 * error (BC_ERR_IO for a write); err_no: errno of the failure, or 0.
 * Returns BC_OK, or BC_ERR_INVALID_ARG (NULL crawler, status BC_OK).
 * May be called from a callback or between steps. O(1).
 */
enum bc_status bc_crawler_fail(struct bc_crawler *crawler,
                               enum bc_status status, int err_no);

/*
 * The failure given to bc_crawler_fail(), or BC_OK (also for NULL);
 * *err_no (may be NULL) gets its err_no (0 when none). O(1).
 */
enum bc_status bc_crawler_failure(const struct bc_crawler *crawler,
                                  int *err_no);

/*
 * The local error that stopped the crawl (LOCAL FAILURES in
 * bc_crawler_step()), or BC_OK: BC_ERR_NOMEM for memory (ENOMEM,
 * ENOBUFS), BC_ERR_IO for the rest (descriptors: EMFILE, ENFILE; a
 * spool's write). Once set, every later step returns it. *err_no (may be
 * NULL) gets the errno of the last local failure, *for_ms (may be NULL)
 * how long they went on. BC_OK for NULL. O(1).
 */
enum bc_status bc_crawler_local_error(const struct bc_crawler *crawler,
                                      int *err_no, uint64_t *for_ms);

/*
 * What a local failure's errno ran out of, for a message: "file
 * descriptors" (EMFILE), "the system's open file table" (ENFILE),
 * "memory" (ENOMEM), "network buffer space" (ENOBUFS), "local ports"
 * (EADDRNOTAVAIL), "disk space" (ENOSPC, EDQUOT), else "a local
 * resource". Never NULL. O(1).
 */
const char *bc_crawler_resource_name(int err_no);

/* Fill *out with the loop's counters (all zero for a NULL crawler). O(1). */
void bc_crawler_stats(const struct bc_crawler *crawler,
                      struct bc_crawler_stats *out);

/* The table of the counters above (bloomcrawl/counter.h), in a static
 * array: its length in *n (n may be NULL). O(1). */
const struct bc_counter *bc_crawler_counter_table(size_t *n);

/*
 * One host of the crawl, as bc_crawler_hosts() reports it: the loop's
 * per-host counters (pages fetched from it) beside the frontier's state
 * of the host (bc_frontier_hosts()). With a crawl state the counters
 * continue across resumes (committed with the pages).
 */
struct bc_crawler_host {
    const char *origin; /* "http://a.test:8080", valid until
                           bc_crawler_free() */
    size_t origin_len;
    uint64_t pages, bytes;    /* pages finished, their body bytes */
    uint64_t status_class[6]; /* as bc_crawler_stats.status_class */
    uint64_t errors[BC_CRAWLER_ERR_KIND_COUNT]; /* failed pages by kind */
    uint64_t skipped_content_type;
    /* Response times of its pages (transfer time, failed ones too): the
     * mean, and the 95th percentile (nearest rank) from a log-scale
     * histogram, within 6.25 % (exact below 16 ms); 0 without pages. */
    double ms_mean;
    uint64_t ms_p95;
    /* The frontier's: robots.txt outcome (bc_frontier_host_info). */
    enum bc_frontier_robots robots;
    bool robots_fetching;
    size_t queued; /* URLs still queued */
    bool given_up; /* robots.txt unreachable after every retry */
    uint64_t lost; /* given up: URLs dropped or refused */
    /* Transient faults (bc_frontier_host_info): its circuit breaker,
     * faults in a row, given up as down with the URLs lost since, and its
     * URLs whose retries ran out. */
    enum bc_frontier_circuit circuit;
    unsigned failures;
    bool down;
    uint64_t down_lost;
    uint64_t exhausted;
    /* Politeness (bc_frontier_host_info): its robots.txt Crawl-delay (0:
     * none), the delay between two requests to it, and when a request
     * to it may start next (next_contact_ms, the crawler's clock:
     * bc_mono_ms()). */
    uint64_t crawl_delay_ms;
    uint64_t delay_ms;
    uint64_t next_contact_ms;
};

/*
 * Call fn(ctx, host) for every host the frontier knows, in no particular
 * order (host valid during the call, its origin until bc_crawler_free()).
 * fn may be NULL. Returns how many hosts. Cost O(hosts x 176) (each
 * host's histogram is read); nothing is allocated.
 */
size_t bc_crawler_hosts(const struct bc_crawler *crawler,
                        void (*fn)(void *ctx,
                                   const struct bc_crawler_host *host),
                        void *ctx);

/*
 * The crawler's frontier, to read its counters (bc_frontier_stats(),
 * bc_frontier_given_up_hosts()) and its seen-test (bc_frontier_seen()).
 * Owned by the crawler; the caller must not add, next, done or free
 * through it (seeds go through bc_crawler_add_seed()). NULL for NULL.
 */
struct bc_frontier *bc_crawler_frontier(struct bc_crawler *crawler);

#ifdef __cplusplus
}
#endif

#endif /* BC_CRAWLER_CRAWLER_H */
