/*
 * bloomcrawl/frontier.h - the crawl frontier: which URL to fetch next.
 *
 * The frontier admits discovered links through URL normalization, crawl
 * limits, robots.txt and the two-tier seen-test, keeps the admitted URLs
 * in one FIFO queue per host (scheme + host + port), and hands them out
 * politely: at most per_host_concurrency transfers per host, a delay
 * between requests to one host, robots.txt fetched and obeyed first.
 * frontier/frontier.c explains the design (Mercator's two tiers of queues).
 *
 * Time is the caller's: every call that depends on it takes now_ms, any
 * monotonic millisecond clock. So every politeness rule can be tested with
 * a fake clock, and the frontier never sleeps, never reads a clock, never
 * does I/O. The caller fetches; the frontier decides.
 *
 * The crawl loop of a crawler that fetches one URL at a time, with a
 * fetch() and a clock of its own (tests/test_frontier.c compiles and runs
 * this very text):
 *
 *     for (;;) {
 *         struct bc_frontier_job job;
 *         if (bc_frontier_next(f, now_ms(), &job) != BC_OK) {
 *             sleep_until(now_ms() + 100);
 *             continue;
 *         }
 *         if (job.action == BC_FRONTIER_DONE)
 *             break;
 *         if (job.action == BC_FRONTIER_WAIT) {
 *             sleep_until(job.wait_until_ms);
 *             continue;
 *         }
 *         if (job.action == BC_FRONTIER_DROP)
 *             continue;
 *         struct response r = fetch(job.url);
 *         if (job.action == BC_FRONTIER_FETCH_ROBOTS) {
 *             bc_frontier_robots_done(f, &job, r.status, r.body, r.body_len,
 *                                     r.location, r.location_len, now_ms());
 *             continue;
 *         }
 *         struct bc_frontier_outcome outcome = {r.status, r.ms,
 *                                               r.retry_after_ms, r.fault};
 *         bc_frontier_done(f, &job, &outcome, now_ms());
 *         for (size_t i = 0; i < r.link_count; i++)
 *             bc_frontier_add_link(f, &job, r.links[i], strlen(r.links[i]),
 *                                  job.url, job.url_len, &why, NULL);
 *     }
 *
 * next() fails only when memory runs out, and then changes nothing: call
 * it again later. FETCH: fetch job.url; then bc_frontier_done(), and
 * bc_frontier_add_link() each link with job.url as base (and
 * bc_frontier_add_redirect() the Location of a 3xx response): both keep
 * job.url as the referrer of what they queue.
 * FETCH_ROBOTS: job.url is a robots.txt; then bc_frontier_robots_done().
 * DROP: job.url was admitted before its host's robots.txt was known and
 * is now disallowed, or its host was given up (job.reason); no done()
 * call. WAIT: nothing is ready before job.wait_until_ms (UINT64_MAX: until
 * a transfer in flight completes, for a crawler with several). DONE: the
 * crawl is over. FETCH_SITEMAP (only with config.sitemaps, see SITEMAPS
 * below): job.url is a sitemap; add what it lists with
 * bc_frontier_add_from_sitemap() and bc_frontier_add_sitemap(), then
 * bc_frontier_sitemap_done().
 *
 * A job's url is owned by the frontier and stays valid until the first
 * bc_frontier_next() call after the job's done(), robots_done() or
 * sitemap_done() (a DROP's until the next bc_frontier_next()), or until
 * bc_frontier_free():
 * so the links of a page can be added after its done(), with job.url as
 * their base. A crawler with transfers in flight keeps each job's url
 * until that job is done, however many next() calls come in between.
 *
 * A crawl always ends. A host whose robots.txt is unreachable (5xx, 408,
 * 429, no answer) is asked again robots_retries times, after
 * robots_retry_ms, then twice that, and so on (RFC 9309 2.3.1.4: nothing
 * is fetched meanwhile); after the last failure the host is given up: its
 * queued URLs come back as DROP jobs (BC_ADMIT_HOST_GIVEN_UP), and so do
 * the ones added later (admitted, then dropped: a store keeps them for a
 * retry), and next() says DONE once only given-up hosts remain. A URL
 * whose fetch failed with a transient fault is queued again, at most
 * max_retries times (RETRIES below), and a host that keeps failing is
 * paused by its circuit breaker and at last given up as down. A redirect
 * chain longer than max_redirects hops is not followed.
 *
 * Thread safety: none; one frontier per thread, or a lock around it.
 */
#ifndef BC_FRONTIER_FRONTIER_H
#define BC_FRONTIER_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/seen.h"
#include "bloomcrawl/status.h"
#include "bloomcrawl/url.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which hosts a crawl may enter, relative to the hosts of its seeds. */
enum bc_frontier_scope {
    BC_SCOPE_HOST = 0,   /* the seeds' hosts (scheme and port may differ) */
    BC_SCOPE_DOMAIN = 1, /* the seeds' registrable domains (libpsl) */
    BC_SCOPE_ANY = 2     /* anywhere */
};

/*
 * Why bc_frontier_add() did or did not enqueue a URL. One list,
 * X(constant, name) per reason in the order of their values (the first
 * is 0): the enum below and bc_frontier_reason_name() are both made from
 * it, so a reason cannot be added without its name (test_frontier checks
 * every value has one).
 */
#define BC_FRONTIER_REASON_LIST(X)                                             \
    X(BC_ADMIT_QUEUED, "queued")     /* enqueued: it will be fetched */        \
    X(BC_ADMIT_BAD_URL, "bad_url")   /* normalization failed (see status) */   \
    X(BC_ADMIT_TOO_LONG, "too_long") /* the URL exceeds max_url_len */         \
    X(BC_ADMIT_OUT_OF_SCOPE, "out_of_scope") /* host outside the scope */      \
    /* matches an exclude pattern, or no include */                            \
    X(BC_ADMIT_EXCLUDED, "excluded")                                           \
    X(BC_ADMIT_TOO_DEEP, "too_deep") /* depth > max_depth */                   \
    /* more path segments than max_segments */                                 \
    X(BC_ADMIT_TOO_MANY_SEGMENTS, "too_many_segments")                         \
    X(BC_ADMIT_TRAP, "trap") /* a path segment repeated more than twice */     \
    /* the host's budget of URLs is spent */                                   \
    X(BC_ADMIT_HOST_BUDGET, "host_budget")                                     \
    /* the frontier holds queue_capacity URLs */                               \
    X(BC_ADMIT_QUEUE_FULL, "queue_full")                                       \
    X(BC_ADMIT_ROBOTS, "robots")               /* robots.txt disallows it */   \
    X(BC_ADMIT_DUPLICATE, "duplicate")         /* seen-test: DUPLICATE */      \
    X(BC_ADMIT_PROBABLY_SEEN, "probably_seen") /* seen-test: PROBABLY_SEEN */  \
    X(BC_ADMIT_NOMEM, "nomem") /* out of memory: nothing changed */            \
    /* a DROP's: robots.txt stayed unreachable */                              \
    X(BC_ADMIT_HOST_GIVEN_UP, "host_given_up")                                 \
    /* more than max_redirects hops */                                         \
    X(BC_ADMIT_TOO_MANY_REDIRECTS, "too_many_redirects")                       \
    /* the store failed (see the status) */                                    \
    X(BC_ADMIT_STORE_ERROR, "store_error")                                     \
    /* a sitemap's URL outside the sitemap's scope */                          \
    X(BC_ADMIT_SITEMAP_SCOPE, "sitemap_scope")                                 \
    /* Handed to another crawl worker (config.partition.route). */             \
    X(BC_ADMIT_ROUTED, "routed")                                               \
    /* A DROP job's: its host was given up as down (transient faults for */    \
    /* host_give_up_ms); a store keeps the URL for a later retry. */           \
    X(BC_ADMIT_HOST_DOWN, "host_down")

/* Makes an enum from a list of this header: one constant per X(). */
#define BC_FRONTIER_ENUM_VALUE(constant, name) constant,
enum bc_frontier_reason {
    BC_FRONTIER_REASON_LIST(BC_FRONTIER_ENUM_VALUE)
    /* the number of reasons, not a reason */
    BC_ADMIT_REASON_COUNT
};

/* A short name for a reason ("queued", "bad_url", ...; the list above);
 * "unknown" outside the enum. Never NULL. */
const char *bc_frontier_reason_name(enum bc_frontier_reason reason);

/* Defaults of struct bc_frontier_config (bc_frontier_config_init). */
#define BC_FRONTIER_DEFAULT_DELAY_MS            1000u
#define BC_FRONTIER_DEFAULT_MAX_CRAWL_DELAY_MS  30000u
#define BC_FRONTIER_DEFAULT_MAX_DEPTH           16u
#define BC_FRONTIER_DEFAULT_MAX_SEGMENTS        32u
#define BC_FRONTIER_DEFAULT_ROBOTS_TTL_MS       (24u * 3600u * 1000u)
#define BC_FRONTIER_DEFAULT_ROBOTS_RETRY_MS     (10u * 1000u)
#define BC_FRONTIER_DEFAULT_ROBOTS_RETRIES      3u
#define BC_FRONTIER_DEFAULT_MAX_RETRY_AFTER_MS  (3600u * 1000u)
#define BC_FRONTIER_DEFAULT_MAX_RETRIES         3u
#define BC_FRONTIER_DEFAULT_RETRY_DELAY_MS      1000u
#define BC_FRONTIER_DEFAULT_RETRY_JITTER        0.25
#define BC_FRONTIER_DEFAULT_HOST_FAILURES       5u
#define BC_FRONTIER_DEFAULT_HOST_BACKOFF_MS     (10u * 1000u)
#define BC_FRONTIER_DEFAULT_HOST_BACKOFF_MAX_MS (10u * 60u * 1000u)
#define BC_FRONTIER_DEFAULT_HOST_GIVE_UP_MS     (3600u * 1000u)
#define BC_FRONTIER_DEFAULT_MAX_REDIRECTS       20u
#define BC_FRONTIER_DEFAULT_BACKOFF_MS          (60u * 1000u)
#define BC_FRONTIER_MAX_URL_LEN                 65535u /* hard limit of the queue format */
#define BC_FRONTIER_DEFAULT_SITEMAPS_PER_HOST   1000u
#define BC_FRONTIER_DEFAULT_MAX_PAYLOAD         (64u * 1024u)
#define BC_FRONTIER_MAX_PAYLOAD                 (16u * 1024u * 1024u)
#define BC_FRONTIER_MAX_SITEMAP_LEVEL           2u

struct bc_frontier_entry; /* below */

/*
 * A partition of the hosts between crawl workers (crawler/workers): each
 * origin belongs to one worker, which alone fetches it, so politeness,
 * robots.txt and the seen-test stay local. admit() asks owns() once a URL
 * has passed normalization, the sitemap scope, the seeds' scope (a seed's
 * host and domain enter the scope here, whoever owns it), include/exclude,
 * depth, redirects, segments and trap, and has its origin; a URL whose
 * origin is another's is then handed to route() and refused here with
 * BC_ADMIT_ROUTED, before the host's budget, the queue's capacity,
 * robots.txt, the host's creation and the seen-test: those are the
 * owner's, whose seen-test decides whether the URL is new (so the same
 * URL routed twice is routed twice). route() runs synchronously inside
 * the add call.
 */
struct bc_frontier_partition {
    /* Is origin ("http://a.test:8080", origin_len bytes, not
     * NUL-terminated) this frontier's? NULL: all are. */
    bool (*owns)(void *ctx, const char *origin, size_t origin_len);
    /* Take a URL whose origin is another's: e (canonical url, depth,
     * redirects, referrer, payload; id 0, retries 0; valid during the call), seed
     * true for bc_frontier_add_seed(). Returns BC_OK, BC_ERR_NOMEM (the
     * add: BC_ADMIT_NOMEM) or any other error (the add:
     * BC_ADMIT_STORE_ERROR, sticky like a store error). Must be set when
     * owns is. */
    enum bc_status (*route)(void *ctx, const char *origin, size_t origin_len,
                            const struct bc_frontier_entry *e, bool seed);
    void *ctx; /* passed to owns and route */
};

struct bc_frontier_config {
    /* Identity: the user-agent string (its product token selects the
     * robots.txt group). Copied at create. */
    const char *user_agent;
    /* Politeness. */
    unsigned per_host_concurrency; /* transfers in flight per host (1) */
    uint64_t min_delay_ms;         /* between requests to one host (1000) */
    uint64_t max_crawl_delay_ms;   /* cap on robots.txt Crawl-delay (30 s) */
    double response_factor;        /* delay >= factor x last response (0) */
    uint64_t backoff_ms;           /* 429/503 without Retry-After (60 s) */
    uint64_t max_retry_after_ms;   /* cap on Retry-After (1 h) */
    /* Transient faults (RETRIES below). A URL whose fetch failed with
     * BC_FAULT_TRANSIENT is queued again up to max_retries times, 0..255
     * (3); the n-th retry (n = 1, 2, ...) not before retry_delay_ms x
     * 2^(n-1) x (1 + retry_jitter x (2u - 1)) after the failure, u uniform
     * in [0, 1) from a generator seeded with retry_seed (retry_jitter in
     * [0, 1]; 0: exact). 1000 ms, 0.25, seed 0. */
    unsigned max_retries;
    uint64_t retry_delay_ms;
    double retry_jitter;
    uint64_t retry_seed;
    /* The circuit breaker: host_failures transient faults in a row (5; 0:
     * never open) open it for host_backoff_ms (10 s), twice that each
     * time it opens again, at most host_backoff_max_ms (10 min); a host
     * failing for host_give_up_ms (1 h; 0: never) is given up as down. */
    unsigned host_failures;
    uint64_t host_backoff_ms;
    uint64_t host_backoff_max_ms;
    uint64_t host_give_up_ms;
    bool obey_robots;         /* fetch and obey robots.txt (true) */
    uint64_t robots_ttl_ms;   /* robots.txt cache lifetime (24 h) */
    uint64_t robots_retry_ms; /* first retry after 5xx/unreachable (10 s);
                                 each next retry waits twice the last */
    unsigned robots_retries;  /* retries before the host is given up (3) */
    /* Limits. 0 means "no limit" for budget and capacity. */
    enum bc_frontier_scope scope; /* BC_SCOPE_HOST */
    unsigned max_depth;           /* seeds are depth 0 (16) */
    unsigned max_redirects;       /* hops of a redirect chain, 0..255 (20) */
    size_t max_url_len;           /* bytes (2048) */
    /* bytes of a URL's payload (bc_frontier_add_payload()), at most
     * BC_FRONTIER_MAX_PAYLOAD (64 KiB; 0: no payloads) */
    size_t max_payload;
    unsigned max_segments; /* path segments (32) */
    uint64_t host_budget;  /* URLs admitted per host (0) */
    size_t queue_capacity; /* URLs queued in all (0) */
    /* Include/exclude patterns on the fetch URL: '*' matches any run of
     * bytes, everything else itself; a URL must match some include (when
     * any is given) and no exclude. Not copied: must outlive the frontier. */
    const char *const *include;
    size_t include_count;
    const char *const *exclude;
    size_t exclude_count;
    /* Sitemaps (SITEMAPS below): follow them (false); at most
     * sitemaps_per_host sitemap files queued per host (0: 1000). */
    bool sitemaps;
    unsigned sitemaps_per_host;
    /* Normalization (max_len is taken from max_url_len; without an
     * idn_cache the frontier keeps one of its own) and the seen-test's
     * sizing. */
    struct bc_url_policy url_policy;
    struct bc_seen_config seen;
    /* The hosts of this frontier among crawl workers (zeroed by
     * bc_frontier_config_init: no partition, every host is its own). */
    struct bc_frontier_partition partition;
};

/* Fill *config with the defaults above (user agent "bloomcrawl/VERSION"). */
void bc_frontier_config_init(struct bc_frontier_config *config);

struct bc_frontier;

/*
 * Create an empty frontier. Errors: BC_ERR_INVALID_ARG (NULL, zero
 * concurrency, max_url_len over BC_FRONTIER_MAX_URL_LEN, max_redirects or
 * max_retries over 255), those of
 * bc_seen_create(), BC_ERR_NOMEM. Free with bc_frontier_free().
 */
enum bc_status bc_frontier_create(const struct bc_frontier_config *config,
                                  struct bc_frontier **out);

/* Free the frontier, its queues, its seen-test and the URLs of all jobs,
 * done or not; NULL is a no-op. Jobs handed out and not done become
 * invalid. */
void bc_frontier_free(struct bc_frontier *frontier);

/*
 * Admit a discovered URL: normalize href against base (the page's URL or
 * its <base href>; base NULL and base_len 0: href must be absolute), check
 * the limits, robots.txt (when known), then the seen-test, and enqueue it
 * (or, with a partition, route a URL of another worker's host once the
 * limits of the URL itself are checked: bc_frontier_partition).
 * depth: the page's depth + 1 for a link (a redirect target goes through
 * bc_frontier_add_redirect()). *reason says what happened; when it is
 * BC_ADMIT_BAD_URL or BC_ADMIT_TOO_LONG, *url_status (may be NULL) says
 * why. Returns BC_OK whatever the reason, except BC_ERR_INVALID_ARG for
 * NULL arguments, BC_ERR_NOMEM (*reason BC_ADMIT_NOMEM; the URL was not
 * queued) and the store's status once the store failed (a write of the
 * store, or the partition's route(): *reason BC_ADMIT_STORE_ERROR, the
 * URL not queued; sticky: every later add returns it). Cost: O(URL
 * length) plus one seen-test.
 */
enum bc_status bc_frontier_add(struct bc_frontier *frontier, const char *href,
                               size_t href_len, const char *base,
                               size_t base_len, unsigned depth,
                               enum bc_frontier_reason *reason,
                               enum bc_status *url_status);

/*
 * Admit the target of a redirect: location (a Location header value)
 * resolved against base (the URL that answered 3xx; may not be NULL), at
 * the depth of job (the FETCH job that got the 3xx, not yet done) and one
 * hop further in its redirect chain: job->redirects + 1 hops, refused with
 * BC_ADMIT_TOO_MANY_REDIRECTS beyond max_redirects (before the seen-test,
 * which it does not enter). The hop count travels with the queued URL and
 * comes back in the job that fetches it; links found on a page start a
 * new chain (0 hops). The target's referrer is job->url (as
 * bc_frontier_add_link() keeps it). Otherwise as bc_frontier_add().
 */
struct bc_frontier_job; /* below */
enum bc_status bc_frontier_add_redirect(struct bc_frontier *frontier,
                                        const struct bc_frontier_job *job,
                                        const char *location,
                                        size_t location_len, const char *base,
                                        size_t base_len,
                                        enum bc_frontier_reason *reason,
                                        enum bc_status *url_status);

/*
 * Admit a link found on the page of job (a FETCH job of this frontier
 * whose url is still valid: before its done(), or after it until the next
 * bc_frontier_next()): as bc_frontier_add() at depth job->depth + 1, with
 * job->url kept as the queued URL's referrer (it comes back as
 * job.referrer when the URL is handed out). The referrer costs a queued
 * URL 8 bytes (a pointer): the links of one page share one refcounted
 * copy of its URL, made at the page's first call and freed with the last
 * of its links to leave the queue. Returns as bc_frontier_add();
 * BC_ERR_INVALID_ARG also for a NULL job or one that is not FETCH.
 */
enum bc_status bc_frontier_add_link(struct bc_frontier *frontier,
                                    const struct bc_frontier_job *job,
                                    const char *href, size_t href_len,
                                    const char *base, size_t base_len,
                                    enum bc_frontier_reason *reason,
                                    enum bc_status *url_status);

/*
 * Admit a URL found somewhere that is not a FETCH job's page (a sitemap,
 * say): as bc_frontier_add() at depth, with referrer (referrer_len bytes,
 * copied; NULL and 0: none) kept as its referrer. Consecutive calls with
 * the same referrer share one copy of it. Returns as bc_frontier_add();
 * BC_ERR_INVALID_ARG also for a NULL referrer with a length, or one
 * longer than max_url_len.
 */
enum bc_status bc_frontier_add_with_referrer(
    struct bc_frontier *frontier, const char *href, size_t href_len,
    const char *base, size_t base_len, unsigned depth, const char *referrer,
    size_t referrer_len, enum bc_frontier_reason *reason,
    enum bc_status *url_status);

/*
 * Admit a URL with a payload: as bc_frontier_add(), and payload_len bytes
 * at payload (any bytes, NUL included; copied) travel with the URL. They
 * come back byte for byte in the FETCH job that hands it out
 * (job.payload, job.payload_len), stay with it when it is queued again
 * (a retry after a transient fault, bc_frontier_giveback()), are dropped
 * with it (a DROP job, a duplicate refused at admission) and, with a
 * store, are kept beside it (bc_frontier_entry.payload), so a resumed
 * crawl hands them out too. A caller queues its own request data so
 * (a serialized request: method, headers, body, callback). payload_len 0
 * is bc_frontier_add(). Memory: a URL with a payload costs a box of 16 +
 * payload_len bytes (one malloc()); one without costs nothing more.
 * Returns as bc_frontier_add(); BC_ERR_INVALID_ARG also for a NULL
 * payload with a length, BC_ERR_TOO_LARGE (*reason BC_ADMIT_TOO_LONG;
 * nothing queued, nor counted, the seen-test untouched) for payload_len
 * over max_payload.
 */
enum bc_status bc_frontier_add_payload(struct bc_frontier *frontier,
                                       const char *href, size_t href_len,
                                       const char *base, size_t base_len,
                                       unsigned depth, const void *payload,
                                       size_t payload_len,
                                       enum bc_frontier_reason *reason,
                                       enum bc_status *url_status);

/*
 * Admit a seed: an absolute URL at depth 0, whose host and registrable
 * domain enter the scope (BC_SCOPE_HOST, BC_SCOPE_DOMAIN). Otherwise as
 * bc_frontier_add().
 */
enum bc_status bc_frontier_add_seed(struct bc_frontier *frontier,
                                    const char *url, size_t len,
                                    enum bc_frontier_reason *reason,
                                    enum bc_status *url_status);

/*
 * Admit a URL another crawl worker routed here (its
 * bc_frontier_partition.route got it): as bc_frontier_add_with_referrer()
 * (url absolute, no base), and redirects hops into its redirect chain
 * (the hop count it carries: refused with BC_ADMIT_TOO_MANY_REDIRECTS
 * beyond max_redirects; it comes back in the job that fetches it).
 * Returns as bc_frontier_add_with_referrer().
 */
enum bc_status bc_frontier_add_routed(struct bc_frontier *frontier,
                                      const char *url, size_t len,
                                      unsigned depth, unsigned redirects,
                                      const char *referrer, size_t referrer_len,
                                      enum bc_frontier_reason *reason,
                                      enum bc_status *url_status);

/*
 * THE ONE ADMISSION CALL. Every add call above is a shorthand for
 * bc_frontier_add_request() with some fields of a bc_frontier_request set
 * (bc_frontier_add_link() and _add_redirect() fill them from a job).
 * A caller with more to say than one shorthand allows (a seed with a
 * payload, a routed URL with its payload, a URL to fetch again) fills the
 * request itself. It is what an embedder's scheduler calls: each field is
 * something a crawler's request carries beside its URL.
 *
 *  - payload: the caller's bytes for the URL (bc_frontier_add_payload()):
 *    URLFrontier's per-URL "metadata", or a serialized Scrapy Request
 *    (method, headers, body, callback, meta), so the scheduler of another
 *    crawler can keep its whole queue in the frontier and get each
 *    request back, byte for byte, when its URL is due; with a store, also
 *    after a restart.
 *  - unfiltered: Scrapy's Request(dont_filter=True). The seen-test is
 *    still asked (the URL is added to it), but its verdict does not
 *    refuse the URL: a URL seen before is queued again. That is how a
 *    caller fetches a URL again on purpose (its own retry of a failed
 *    request, a form posted twice, a page to check again), while every
 *    other check still holds: scope, include/exclude, depth, redirect
 *    hops, the trap guard, the host budget (each admission counts), the
 *    queue's capacity and robots.txt. With a store, each unfiltered
 *    admission is a row of its own in the journal, as a recrawl's is, so
 *    a resumed crawl queues it again if it was not handed out before the
 *    stop. With a partition, a URL routed to another worker leaves
 *    without its unfiltered flag: the owner's seen-test decides.
 */
struct bc_frontier_request {
    const char *href; /* required (not NUL-terminated) */
    size_t href_len;
    const char *base; /* NULL and 0: href is absolute */
    size_t base_len;
    unsigned depth;       /* as bc_frontier_add() */
    unsigned redirects;   /* hops so far (as bc_frontier_add_routed()) */
    const char *referrer; /* NULL and 0: none (copied) */
    size_t referrer_len;
    const void *payload; /* NULL and 0: none (copied) */
    size_t payload_len;
    /* A seed: its host and registrable domain enter the scope (as
     * bc_frontier_add_seed(); depth 0 is not implied: set depth). */
    bool seed;
    /* Skip the seen-test's verdict (the URL is still added to it):
     * admitted even if seen before; every other check applies. */
    bool unfiltered;
};

/*
 * Admit the URL of *req (zero it, or = {0}, and set what applies): as
 * bc_frontier_add(), with everything the request carries (above).
 * Returns as bc_frontier_add(); BC_ERR_INVALID_ARG also for a NULL req,
 * a NULL referrer or payload with a length, a referrer longer than
 * max_url_len; BC_ERR_TOO_LARGE (*reason BC_ADMIT_TOO_LONG; nothing
 * queued, nor counted, the seen-test untouched) for payload_len over
 * max_payload. *req's strings are copied: they need not outlive the
 * call. Cost: as bc_frontier_add(), plus copying the referrer (when it
 * differs from the last call's) and the payload.
 */
enum bc_status bc_frontier_add_request(struct bc_frontier *frontier,
                                       const struct bc_frontier_request *req,
                                       enum bc_frontier_reason *reason,
                                       enum bc_status *url_status);

/*
 * The canonical fetch URL of the last bc_frontier_add() or _add_seed()
 * call, when it got past normalization (NULL otherwise): owned by the
 * frontier, valid until the next add. *len receives its length.
 */
const char *bc_frontier_last_url(const struct bc_frontier *frontier,
                                 size_t *len);

enum bc_frontier_action {
    BC_FRONTIER_FETCH = 0,    /* fetch url, then bc_frontier_done() */
    BC_FRONTIER_FETCH_ROBOTS, /* fetch url (robots.txt), then robots_done() */
    BC_FRONTIER_DROP,         /* url dropped for reason; no done() */
    BC_FRONTIER_WAIT,         /* nothing ready before wait_until_ms */
    BC_FRONTIER_DONE,         /* no URL queued, none in flight */
    BC_FRONTIER_FETCH_SITEMAP /* fetch url (a sitemap), then sitemap_done() */
};

/* What bc_frontier_next() hands out. */
struct bc_frontier_job {
    enum bc_frontier_action action;
    const char *url; /* FETCH, FETCH_ROBOTS, DROP: NUL-terminated,
                        owned by the frontier, valid until the first
                        next() after the job's done() (DROP: until the
                        next next()), or until free() */
    size_t url_len;
    unsigned depth;     /* FETCH: the URL's depth */
    unsigned redirects; /* FETCH: redirect hops that led to the URL */
    unsigned retries;   /* FETCH, FETCH_SITEMAP: times it was queued
                           again after a transient fault */
    enum bc_frontier_reason reason; /* DROP: why */
    uint64_t wait_until_ms;         /* WAIT: UINT64_MAX = until a done() */
    uint64_t started_ms;            /* FETCH, FETCH_ROBOTS: now_ms of next() */
    uint64_t id; /* FETCH: the store's id of the URL (0 without a store) */
    /* FETCH: the canonical URL of the page the URL was found on, or that
     * redirected to it (bc_frontier_add_link(), _add_redirect()); NULL
     * for a seed or a URL added with bc_frontier_add(). Valid as url. */
    const char *referrer;
    size_t referrer_len;
    /* FETCH: the URL's payload (bc_frontier_add_payload()), byte for
     * byte, or NULL and 0 for none. Owned by the frontier, valid until
     * the job's done() or giveback() (not after, unlike url). */
    const void *payload;
    size_t payload_len;
    /* FETCH, FETCH_ROBOTS, DROP: the host's origin ("http://a.test:8080",
     * NUL-terminated), valid until bc_frontier_free(). */
    const char *origin;
    size_t origin_len;
    /* FETCH_SITEMAP: the prefix the sitemap's page URLs must start with
     * (NUL-terminated, owned and valid as url), its nesting level (0:
     * named by robots.txt, or /sitemap.xml; + 1 per index) and whether it
     * descends from a robots.txt Sitemap: line. */
    const char *scope;
    size_t scope_len;
    unsigned level;
    bool named;
    /* FETCH, FETCH_SITEMAP, written by bc_frontier_done() and
     * bc_frontier_sitemap_done(): the URL was queued again to be retried
     * (a transient fault with retries left), not before retry_at_ms. */
    bool requeued;
    uint64_t retry_at_ms;
    /* Private: the frontier's own (the host the job belongs to, and the
     * buffer behind url). An embedder neither reads nor writes them; they
     * are here only so that a job can live on the caller's stack. */
    struct {
        void *host;
        char *owned;
    } internal;
};

/*
 * The next thing to do at time now_ms (see the crawl loop above). Writes
 * *job. The URLs of jobs done since the previous call become invalid.
 * Returns BC_OK, BC_ERR_INVALID_ARG (NULL argument) or BC_ERR_NOMEM (no
 * memory for the job's URL: *job is not written, nothing else changes,
 * the URL stays queued; call again later). O(log hosts), one allocation
 * for a FETCH or FETCH_ROBOTS job.
 */
enum bc_status bc_frontier_next(struct bc_frontier *frontier, uint64_t now_ms,
                                struct bc_frontier_job *job);

/*
 * How a fetch failed, which decides what becomes of its URL (the caller
 * classes each outcome; the crawler with bc_crawler_fault_of(), one
 * table: docs/DESIGN.md 3.4). One list, X(constant, name) per fault in
 * the order of their values (the first is 0), makes the enum and
 * bc_fault_name().
 */
#define BC_FAULT_LIST(X)                                                       \
    /* an answer that is the URL's outcome (200, 404) */                       \
    X(BC_FAULT_NONE, "none")                                                   \
    /* failed for good (protocol violation, too large, ...): the URL's */      \
    /* outcome */                                                              \
    X(BC_FAULT_PERMANENT, "permanent")                                         \
    /* may work later (refused, reset, timeouts, 500, 502, 503, 504, 408, */   \
    /* 429): retried by bc_frontier_done() */                                  \
    X(BC_FAULT_TRANSIENT, "transient")                                         \
    /* ours (no descriptors, no memory, a spool write): never the URL's */     \
    /* outcome: bc_frontier_giveback() */                                      \
    X(BC_FAULT_LOCAL, "local")

enum bc_fault { BC_FAULT_LIST(BC_FRONTIER_ENUM_VALUE) };

/* "none", "permanent", "transient", "local" (the list above); "unknown"
 * outside the enum. Never NULL. */
const char *bc_fault_name(enum bc_fault fault);

/* How a fetch went, for the politeness and retry rules. */
struct bc_frontier_outcome {
    int http_status;         /* 0 when no response (network error) */
    uint64_t response_ms;    /* how long the transfer took */
    uint64_t retry_after_ms; /* Retry-After, 0 when absent */
    enum bc_fault fault;     /* BC_FAULT_NONE when zeroed */
};

/*
 * Report the end of a FETCH job at time now_ms: frees the host's slot and
 * sets when the host may be contacted next: now + max(min delay,
 * Crawl-delay (capped), factor x response time); a 429 or 503 blocks the
 * host until now + Retry-After (capped at max_retry_after_ms), or now +
 * backoff_ms without one.
 *
 * RETRIES. outcome->fault decides what becomes of the URL. BC_FAULT_NONE
 * and BC_FAULT_PERMANENT: the fetch is its outcome, and the host's run of
 * transient faults ends (its circuit closes). BC_FAULT_TRANSIENT: while
 * job->retries < max_retries, the URL is queued again at the tail of its
 * host's queue (job.retries + 1; with a store through its queued hook,
 * requeue true), job->requeued is set and job->retry_at_ms is when it
 * may be fetched: now + retry_delay_ms x 2^job->retries x (1 + jitter),
 * or the 429/503 wait above if longer; the whole host waits until then
 * (Heritrix's snooze). With no retry left the fault is final: counted in
 * retries_exhausted. Each transient fault also counts against the host:
 * after host_failures in a row its circuit opens (no request for
 * host_backoff_ms, doubled each time it opens again, capped at
 * host_backoff_max_ms), then one probe (half-open) closes it on success
 * or opens it again; a transient fault host_give_up_ms or more after the
 * host's run of faults began gives the host up as down: the URL is final
 * (not queued again), its queued URLs come back as DROP jobs
 * (BC_ADMIT_HOST_DOWN), and so do the URLs admitted later (queued, so
 * that a store keeps them for a retry, and dropped at the next next()).
 *
 * job->url stays valid until the next bc_frontier_next() call, so it can
 * be the base of the page's links. Returns BC_OK, BC_ERR_INVALID_ARG (a
 * NULL argument, or a job that is not an undone FETCH job), BC_ERR_NOMEM:
 * the job is done but the URL could not be queued again (counted under
 * BC_ADMIT_NOMEM; job->requeued false), or the store's sticky error.
 */
enum bc_status bc_frontier_done(struct bc_frontier *frontier,
                                struct bc_frontier_job *job,
                                const struct bc_frontier_outcome *outcome,
                                uint64_t now_ms);

/*
 * Give a FETCH, FETCH_ROBOTS or FETCH_SITEMAP job back at time now_ms
 * after a local failure (BC_FAULT_LOCAL: the fault was ours, not the
 * host's): as if it had not been handed out. A FETCH job's URL is queued
 * again with its retries unchanged (with a store, through its queued hook
 * with requeue true, as a retry), a robots.txt is asked for again, a
 * sitemap queued again; no failure is counted against the host or the
 * URL, and the host's next contact is not delayed by it. job->url stays
 * valid until the next bc_frontier_next(). Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL, a job not out), BC_ERR_NOMEM (the URL could
 * not be queued again: counted under BC_ADMIT_NOMEM, the job is done) or
 * the store's sticky error.
 */
enum bc_status bc_frontier_giveback(struct bc_frontier *frontier,
                                    struct bc_frontier_job *job,
                                    uint64_t now_ms);

/*
 * Report the end of a FETCH_ROBOTS job (RFC 9309 2.3.1): 2xx parses body
 * (len bytes); 3xx with location (relative to job->url) makes the next
 * next() fetch that URL as robots.txt, up to 5 redirects, beyond which the
 * file counts as unavailable; 4xx other than 408 and 429: unavailable,
 * everything allowed; 5xx, 408, 429 (transient faults: "later", not
 * "no file") or no response (http_status 0): unreachable, nothing allowed,
 * tried again after robots_retry_ms, then twice that after each further
 * failure (a Retry-After is not given to this call, so not honoured); the
 * failure after robots_retries retries gives the host up (see the crawl
 * loop above): its queued URLs, and those admitted for it later, come
 * back as DROP jobs (BC_ADMIT_HOST_GIVEN_UP). A success resets the count.
 * The outcome is cached for robots_ttl_ms. job->url stays valid until the
 * next bc_frontier_next() call. Returns BC_OK, BC_ERR_INVALID_ARG, or
 * BC_ERR_NOMEM (no memory to parse the body or to follow a redirect: the
 * host is then treated as unreachable, nothing allowed, never as "allow
 * all").
 */
enum bc_status bc_frontier_robots_done(struct bc_frontier *frontier,
                                       struct bc_frontier_job *job,
                                       int http_status, const void *body,
                                       size_t len, const char *location,
                                       size_t location_len, uint64_t now_ms);

/*
 * SITEMAPS (config.sitemaps). When a host's robots.txt outcome is known
 * (parsed, or unavailable: 4xx), each of its Sitemap: URLs (resolved
 * against the robots.txt URL) becomes a sitemap job, or, when it names
 * none, origin/sitemap.xml; a host whose robots.txt stays unreachable
 * gets none. Without robots.txt (obey_robots false) a host gets
 * origin/sitemap.xml when it is first met. A sitemap job is a request to
 * the host it is fetched from: it waits for that host's robots.txt and
 * politeness delay like a page, is handed out before the host's pages
 * (FETCH_SITEMAP), and ends with bc_frontier_sitemap_done(). It is not a
 * page (no budget, no depth), but its URL enters the seen-test when it is
 * queued: a page that links to the sitemap does not fetch it again.
 *
 * A sitemap URL is queued once per crawl (a set of the sitemap URLs
 * queued: an index that lists itself, or two that list each other, are
 * fetched once each), only in the crawl's scope, at most
 * sitemaps_per_host per host it is fetched from, at most
 * BC_FRONTIER_MAX_SITEMAP_LEVEL levels of index below the named one, and
 * not when robots.txt disallows it (checked when queued if known, and when
 * handed out). An index's sitemap must be on the index's own origin
 * (sitemaps.org: "the same site").
 *
 * SCOPE (sitemaps.org, "Sitemap file location" and "Sitemaps & Cross
 * Submits"): the pages a sitemap lists must be under the directory of the
 * sitemap's URL (a sitemap at http://h/a/s.xml lists http://h/a/...),
 * except that a sitemap named by host H's robots.txt may list any URL of
 * H (robots.txt vouches for it), and so may the sitemaps of an index
 * named that way. job.scope is that prefix (canonical form);
 * bc_frontier_add_from_sitemap() refuses the others with
 * BC_ADMIT_SITEMAP_SCOPE.
 *
 * What became of a sitemap: one list, X(constant, name) per reason in the
 * order of their values (the first is 0), makes the enum and
 * bc_frontier_sitemap_reason_name().
 */
#define BC_FRONTIER_SITEMAP_REASON_LIST(X)                                     \
    X(BC_FRONTIER_SITEMAP_QUEUED, "queued")   /* queued: it will be fetched */ \
    X(BC_FRONTIER_SITEMAP_BAD_URL, "bad_url") /* does not normalize */         \
    /* outside the crawl's scope, or an index's sitemap on another origin */   \
    X(BC_FRONTIER_SITEMAP_OUT_OF_SCOPE, "out_of_scope")                        \
    /* queued before in this crawl */                                          \
    X(BC_FRONTIER_SITEMAP_DUPLICATE, "duplicate")                              \
    /* beyond BC_FRONTIER_MAX_SITEMAP_LEVEL */                                 \
    X(BC_FRONTIER_SITEMAP_TOO_DEEP, "too_deep")                                \
    /* sitemaps_per_host reached */                                            \
    X(BC_FRONTIER_SITEMAP_HOST_CAP, "host_cap")                                \
    /* robots.txt disallows it */                                              \
    X(BC_FRONTIER_SITEMAP_ROBOTS, "robots")                                    \
    /* its host was given up */                                                \
    X(BC_FRONTIER_SITEMAP_HOST_GIVEN_UP, "host_given_up")                      \
    /* out of memory: not queued */                                            \
    X(BC_FRONTIER_SITEMAP_NOMEM, "nomem")                                      \
    /* given up to transient faults: its retries ran out, or its host was */   \
    /* given up as down (the crawl is incomplete) */                           \
    X(BC_FRONTIER_SITEMAP_TRANSIENT, "transient")

enum bc_frontier_sitemap_reason {
    BC_FRONTIER_SITEMAP_REASON_LIST(BC_FRONTIER_ENUM_VALUE)
    /* the number of reasons */
    BC_FRONTIER_SITEMAP_REASON_COUNT
};

/* A short name for a sitemap reason ("queued", "bad_url", "out_of_scope",
 * "duplicate", "too_deep", "host_cap", "robots", "host_given_up",
 * "nomem", "transient": the list above); "unknown" outside the enum.
 * Never NULL. */
const char *
bc_frontier_sitemap_reason_name(enum bc_frontier_sitemap_reason reason);

/*
 * Queue a sitemap listed by the sitemap index of job (a FETCH_SITEMAP job
 * not yet done): href resolved against job->url, one level below it, on
 * job's origin. *reason says what happened. Returns BC_OK whatever the
 * reason, BC_ERR_INVALID_ARG (NULL arguments, not a FETCH_SITEMAP job),
 * BC_ERR_NOMEM (*reason NOMEM) or a store error. O(URL length).
 */
enum bc_status bc_frontier_add_sitemap(struct bc_frontier *frontier,
                                       const struct bc_frontier_job *job,
                                       const char *href, size_t href_len,
                                       enum bc_frontier_sitemap_reason *reason);

/*
 * Admit a page listed by the sitemap of job (a FETCH_SITEMAP job not yet
 * done): as bc_frontier_add() at depth 0 with job->url as the base (a
 * relative <loc>, which the protocol does not allow, resolves against
 * the sitemap) and as its referrer (job.referrer when handed out),
 * refused with BC_ADMIT_SITEMAP_SCOPE when its canonical URL does not
 * start with job->scope. Returns as bc_frontier_add(), and
 * BC_ERR_INVALID_ARG for a job that is not a FETCH_SITEMAP job.
 */
enum bc_status bc_frontier_add_from_sitemap(struct bc_frontier *frontier,
                                            const struct bc_frontier_job *job,
                                            const char *href, size_t href_len,
                                            enum bc_frontier_reason *reason,
                                            enum bc_status *url_status);

/* Whether the page at url (canonical, len bytes), which the seen-test
 * says was seen, is due all the same: bc_frontier_add_from_sitemap_due(). */
typedef bool (*bc_frontier_due_fn)(void *ctx, const char *url, size_t len);

/*
 * As bc_frontier_add_from_sitemap(), and a page the seen-test says was
 * seen (DUPLICATE or PROBABLY_SEEN) is queued all the same when due
 * (not NULL) returns true for its canonical URL: a page the sitemap says
 * changed since its last fetch (its <lastmod>; DESIGN 11.3). due is
 * called only after every other check passed, at most once; the key is
 * in the seen-test either way. A page so queued counts as admitted
 * (BC_ADMIT_QUEUED; its seen-test verdict still counts as seen, as an
 * unfiltered request's does) and, with a store, is a journal row of its
 * own, as a recrawl's is. Returns as bc_frontier_add_from_sitemap().
 * Cost: as bc_frontier_add_from_sitemap(), plus due's.
 */
enum bc_status bc_frontier_add_from_sitemap_due(
    struct bc_frontier *frontier, const struct bc_frontier_job *job,
    const char *href, size_t href_len, bc_frontier_due_fn due, void *due_ctx,
    enum bc_frontier_reason *reason, enum bc_status *url_status);

/*
 * Report the end of a FETCH_SITEMAP job at time now_ms: frees the host's
 * slot and sets its next contact as bc_frontier_done() does (a 429 or 503
 * blocks the host). A transient fault counts against the host's circuit
 * and, like a page's, is retried: with job->retries < max_retries the
 * sitemap is queued again at the tail of its host's sitemaps (retries + 1,
 * job->requeued, job->retry_at_ms as bc_frontier_done(); with a store
 * through its sitemap hook, done false); with none left, or its host
 * given up as down, it is given up (counted under
 * BC_FRONTIER_SITEMAP_TRANSIENT; with a store, done with given_up set).
 * Otherwise, with a store, the sitemap is recorded as done. job->url and
 * job->scope stay valid until the next bc_frontier_next() call. Returns
 * BC_OK, BC_ERR_INVALID_ARG (not an undone FETCH_SITEMAP job),
 * BC_ERR_NOMEM (a retry could not be queued: counted under
 * BC_FRONTIER_SITEMAP_NOMEM) or a store error.
 */
enum bc_status bc_frontier_sitemap_done(struct bc_frontier *frontier,
                                        struct bc_frontier_job *job,
                                        const struct bc_frontier_outcome *o,
                                        uint64_t now_ms);

struct bc_frontier_stats {
    size_t queued;         /* URLs waiting in host queues */
    size_t in_flight;      /* FETCH and FETCH_ROBOTS jobs not done */
    size_t hosts;          /* hosts known */
    size_t hosts_ready;    /* with queued URLs, may be contacted now */
    size_t hosts_waiting;  /* with queued URLs, politeness delay */
    size_t hosts_blocked;  /* with queued URLs, Retry-After (429/503) or
                              a retry's wait (snoozed) */
    size_t hosts_robots;   /* with queued URLs, robots.txt not known yet
                             (being fetched, or unreachable: a retry due) */
    size_t hosts_given_up; /* robots.txt unreachable after every retry */
    size_t hosts_open;     /* circuit open or half-open (not down) */
    size_t hosts_down;     /* given up as down (transient faults) */
    size_t queue_bytes;    /* memory of the host queues */
    uint64_t added;        /* bc_frontier_add() calls */
    uint64_t admitted;     /* of which enqueued */
    uint64_t reasons[BC_ADMIT_REASON_COUNT]; /* per reason, incl. drops */
    uint64_t handed_out;                     /* FETCH jobs */
    uint64_t retried;           /* URLs queued again after a transient fault */
    uint64_t given_back;        /* jobs given back (bc_frontier_giveback()) */
    uint64_t retries_exhausted; /* transient faults with no retry left */
    uint64_t robots_fetches;    /* FETCH_ROBOTS jobs */
    uint64_t robots_parsed, robots_unavailable, robots_unreachable;
    uint64_t sitemap_fetches; /* FETCH_SITEMAP jobs */
    uint64_t sitemap_keys;    /* sitemap URLs the seen-test found NEW (so
                                 seen.new = admitted + sitemap_keys) */
    /* Sitemap URLs (from robots.txt, /sitemap.xml, indexes) per
     * bc_frontier_sitemap_reason: queued, or refused and why. */
    uint64_t sitemaps[BC_FRONTIER_SITEMAP_REASON_COUNT];
    struct bc_seen_stats seen; /* the seen-test's counters */
};

/* Fill *out at time now_ms (all zero for a NULL frontier; a NULL out is a
 * no-op). Cost O(hosts) plus the Bloom popcount. */
void bc_frontier_stats(const struct bc_frontier *frontier, uint64_t now_ms,
                       struct bc_frontier_stats *out);

/* The table of the counters above but .seen (bc_seen_counter_table() has
 * those; bloomcrawl/counter.h), in a static array: its length in *n (n
 * may be NULL). O(1). */
const struct bc_counter *bc_frontier_counter_table(size_t *n);

/*
 * Call fn(ctx, origin, origin_len, lost) for each host given up (robots.txt
 * unreachable after every retry), with its origin ("http://a.test:8080",
 * valid during the call) and the URLs it lost: the DROP jobs of its URLs
 * (BC_ADMIT_HOST_GIVEN_UP), queued before the give-up or admitted after
 * it; fn may be NULL. Returns how many hosts were given up. Cost
 * O(hosts).
 */
size_t bc_frontier_given_up_hosts(const struct bc_frontier *frontier,
                                  void (*fn)(void *ctx, const char *origin,
                                             size_t origin_len, uint64_t lost),
                                  void *ctx);

/* The seen-test inside (owned by the frontier), e.g. to save it. */
struct bc_seen *bc_frontier_seen(struct bc_frontier *frontier);

/* A queued URL as a store (bloomcrawl/frontier_store.h) or a partition's
 * route() sees it. */
struct bc_frontier_entry {
    const char *url; /* canonical, not NUL-terminated */
    size_t url_len;
    unsigned depth, redirects, retries;
    uint64_t id; /* the store's id; 0 for a new admission */
    /* The referrer (job.referrer): canonical, not NUL-terminated; NULL
     * (and 0) for none. The store keeps it with the URL and gives it back
     * to bc_frontier_refill(). */
    const char *referrer;
    size_t referrer_len;
    /* The payload (job.payload; bc_frontier_add_payload()), NULL (and 0)
     * for none. The store keeps it with the URL and gives it back to
     * bc_frontier_refill(). */
    const void *payload;
    size_t payload_len;
};

/* A host's robots.txt outcome, as a store keeps it. */
enum bc_frontier_robots {
    BC_FRONTIER_ROBOTS_UNKNOWN = 0, /* not known (or being fetched) */
    BC_FRONTIER_ROBOTS_PARSED,      /* rules from robots_body */
    BC_FRONTIER_ROBOTS_ALLOW_ALL,   /* 4xx (not 408, 429): all allowed */
    BC_FRONTIER_ROBOTS_UNREACHABLE, /* nothing allowed until ttl ends */
    BC_FRONTIER_ROBOTS_GIVEN_UP     /* unreachable after every retry */
};

/* A host's circuit breaker (bc_frontier_done(): RETRIES). */
enum bc_frontier_circuit {
    BC_FRONTIER_CIRCUIT_CLOSED = 0, /* requests go */
    BC_FRONTIER_CIRCUIT_OPEN,       /* paused after transient faults */
    BC_FRONTIER_CIRCUIT_HALF_OPEN   /* one probe out */
};

/* One host as bc_frontier_hosts() reports it. */
struct bc_frontier_host_info {
    const char *origin; /* "http://a.test:8080", NUL-terminated, valid
                           until bc_frontier_free() */
    size_t origin_len;
    /* Its robots.txt outcome (BC_FRONTIER_ROBOTS_UNKNOWN also while it
     * is being fetched: robots_fetching), whatever obey_robots says. */
    enum bc_frontier_robots robots;
    bool robots_fetching; /* a FETCH_ROBOTS job of the host is out */
    size_t queued;        /* URLs in its queue (memory and store) */
    unsigned in_flight;   /* its FETCH and FETCH_ROBOTS jobs not done */
    uint64_t admitted;    /* URLs admitted to its queue (its budget) */
    bool given_up;        /* robots.txt unreachable after every retry */
    uint64_t lost;        /* given up: its URLs dropped */
    enum bc_frontier_circuit circuit; /* its circuit breaker */
    unsigned failures;                /* transient faults in a row */
    bool down;                        /* given up as down (transient faults) */
    uint64_t down_lost; /* down: URLs lost since (final or dropped) */
    uint64_t exhausted; /* its URLs whose retries ran out */
    /* Politeness: its robots.txt Crawl-delay (capped at
     * max_crawl_delay_ms; 0: none, or robots.txt not read), and the delay
     * between two requests to it, the larger of that and min_delay_ms (a
     * slow response, a 429 or 503 can make one wait longer). */
    uint64_t crawl_delay_ms;
    uint64_t delay_ms;
    /* When a request to it may start next (the clock of the now
     * arguments): the later of its spacing's next slot (a request's start
     * plus the delay) and the end of a 429 or 503's block. */
    uint64_t next_contact_ms;
};

/*
 * Call fn(ctx, info) for every host the frontier knows (hosts are never
 * forgotten), in no particular order; info is valid during the call, its
 * origin until bc_frontier_free(). fn may be NULL (count only). Returns
 * how many hosts. Cost O(hosts); nothing is allocated.
 */
size_t bc_frontier_hosts(const struct bc_frontier *frontier,
                         void (*fn)(void *ctx,
                                    const struct bc_frontier_host_info *info),
                         void *ctx);

/*
 * Override one known host's politeness delay (min_delay_ms) with
 * delay_ms; 0 removes the override. The delay used is never below the
 * host's robots.txt Crawl-delay (as capped), however small delay_ms is;
 * *effective_ms (may be NULL) gets the delay now in force. It applies
 * from the host's next request on (the one already scheduled keeps its
 * time). With a store that has the delay hook (a crawl state's), the
 * store is told, so the override is committed with the next commit and
 * a resume gives it back. Returns BC_OK, BC_ERR_NOT_FOUND (no host of
 * that origin: "http://a.test:8080", as bc_frontier_hosts() spells it),
 * BC_ERR_INVALID_ARG, or the store's error (sticky: after a store's
 * failure nothing is changed; when the hook itself fails, the override
 * is in force in memory only). Cost O(1) and the hook.
 */
enum bc_status bc_frontier_set_host_delay(struct bc_frontier *frontier,
                                          const char *origin, size_t len,
                                          uint64_t delay_ms,
                                          uint64_t *effective_ms);

/* The sticky store error, BC_OK while there is none (BC_ERR_INVALID_ARG
 * for NULL). */
enum bc_status bc_frontier_store_status(const struct bc_frontier *frontier);

/* Put a seed's host and registrable domain in the scope, without
 * admitting it (a resume without its seeds). Returns BC_OK,
 * BC_ERR_INVALID_ARG, a URL error, or BC_ERR_NOMEM. */
enum bc_status bc_frontier_restore_scope(struct bc_frontier *frontier,
                                         const char *url, size_t len);

/* Fill the cumulative counters of *out (every TOTAL row of
 * bc_frontier_counter_table(): added, admitted, reasons, handed_out, ...),
 * zero the rest:
 * bc_frontier_stats() without its O(hosts) gauges, for saving often.
 * O(1). */
void bc_frontier_counters(const struct bc_frontier *frontier,
                          struct bc_frontier_stats *out);

/* The gauges queued and in_flight of bc_frontier_stats() (URLs waiting in
 * host queues, in memory or in a store; FETCH and FETCH_ROBOTS jobs not
 * done) without its O(hosts) walk, for a caller that asks on every turn
 * (a scheduler's "anything pending?"); in_flight may be NULL. 0 for a
 * NULL frontier. O(1). */
size_t bc_frontier_queued(const struct bc_frontier *frontier,
                          size_t *in_flight);

#ifdef __cplusplus
}
#endif

#endif /* BC_FRONTIER_FRONTIER_H */
