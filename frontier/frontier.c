/*
 * frontier.c - the crawl frontier: admission, per-host queues, politeness.
 *
 * THE PROBLEM
 * A crawler discovers links far faster than it may fetch them: a page has
 * ~50 links, and a polite crawler asks each server for at most one page
 * every second or so. The frontier holds everything discovered and not yet
 * fetched, and answers one question quickly and fairly, millions of times:
 * "which URL may I fetch now without hammering anyone?"
 *
 * THE IDEA (Mercator: Heydon and Najork, WWW 1999; Najork and Heydon 2001)
 * Two tiers of queues. URLs wait in one FIFO queue per host - here per
 * origin, scheme + host + port, which is what a politeness rule protects.
 * The hosts that have work wait in a min-heap ordered by the time each may
 * next be contacted:
 *
 *                 heap of hosts by next contact time
 *                 [ b.example @ 1200 ] [ a.example @ 1350 ] [ c @ 2000 ]
 *                        |                    |                  |
 *     host queues:   b: /x /y /z          a: /1 /2           c: /q
 *
 * next(now) looks at the heap's top: if its time has come, the host hands
 * out the head of its queue and leaves the heap until its transfer is done
 * (per_host_concurrency = 1) or gets a later time; if not, the caller waits
 * until that time. done() puts the host back with its next contact time:
 *
 *     next contact = now + max(min_delay, Crawl-delay (capped),
 *                              response_factor x last response time)
 *
 * and a 429 or 503 with Retry-After blocks the host until then. Both
 * operations are O(log hosts), whatever the number of queued URLs.
 *
 * TRANSIENT FAULTS (docs/DESIGN.md 3.4)
 * The caller classes each outcome (bc_frontier_outcome.fault). A URL
 * whose fetch failed with a transient fault (refused, reset, a timeout,
 * 500, 503, ...) is queued again at its host's tail, at most max_retries
 * times; the n-th retry (n = 1, 2, ...) is due
 *
 *     retry_delay_ms x 2^(n-1) x (1 + retry_jitter x (2u - 1)),  u in [0, 1)
 *
 * after the failure (u from a splitmix64 seeded by the configuration),
 * or after a 429/503's Retry-After if that is longer; and, as Heritrix
 * "snoozes" a queue, the whole host waits until then. One retry too many
 * and the fault is the URL's outcome ("retries exhausted").
 *
 * Each host also keeps a circuit breaker (Nygard, "Release It!", 2007):
 * host_failures transient faults in a row OPEN it, and nothing goes to
 * the host for an open period; then it is HALF-OPEN: one request, the
 * probe; success CLOSES it, a failure opens it again for twice as long:
 *
 *     open period k (k = 1, 2, ...) = min(host_backoff_ms x 2^(k-1),
 *                                         host_backoff_max_ms)
 *
 *      CLOSED --(host_failures faults in a row)--> OPEN --(period over)-->
 *      HALF-OPEN --(success)--> CLOSED;  HALF-OPEN --(fault)--> OPEN (x2)
 *
 * so with the defaults (5 faults, 10 s doubling to 10 min) a dead host
 * costs a request every few minutes, not one per queued URL, and a host
 * back after a 5-second outage loses nothing but an open period.
 *
 * ROBOTS.TXT FIRST
 * A host's URLs are not handed out before its robots.txt outcome is known:
 * the first next() that reaches a host with an unknown (or expired, after
 * 24 h) robots.txt returns FETCH_ROBOTS instead. RFC 9309 2.3.1: 2xx, parse
 * and obey; 4xx, "unavailable", everything allowed; 5xx or no answer,
 * "unreachable", nothing allowed until a retry; up to 5 redirects. 408 and
 * 429 are 4xx that say "later": transient faults like a 5xx (DESIGN 3.4),
 * so unreachable too, as Google reads a 429 (RFC 9309 2.3.1.3 only lets a
 * crawler fetch when robots.txt is unavailable, it never makes it). URLs
 * admitted before the rules were known are checked when they come out of
 * the queue, and those now disallowed are handed back as DROP jobs, so the
 * caller sees every URL it gave: nothing is silently lost.
 *
 * A CRAWL ALWAYS ENDS
 * An unreachable robots.txt is retried with exponential backoff: the n-th
 * retry (n = 1, 2, ...) comes robots_retry_ms x 2^(n-1) after the failure
 * before it, so with the defaults (10 s, 3 retries) a dead host is given
 * up 10 + 20 + 40 = 70 s after its first failure. A given-up host's queue
 * drains as DROP jobs (host_given_up), and so do the URLs admitted for it
 * later (queued first, so that a store keeps them among the URLs lost to
 * transient faults, for a later retry), so next() reaches DONE. A host
 * whose pages keep failing is given up the same way, as
 * down, at its first transient fault host_give_up_ms (1 h) or more after
 * its run of faults began: its queue drains as DROP jobs (host_down), and
 * so do the URLs admitted for it later (queued first, so that a store
 * keeps them for a later retry). Two more chains that would never end are
 * cut: a redirect chain is followed for at most max_redirects hops (the
 * hop count is stored with the queued URL), and a URL is retried after a
 * transient fault at most max_retries times (the count is stored with the
 * queued URL too). A job given back after a local fault
 * (bc_frontier_giveback(): ours, not the host's) is queued again as if it
 * had never been handed out: no retry, no fault counted.
 *
 * ADMISSION
 * add() runs the cheap checks first and the seen-test last, so a URL
 * refused for a limit (too deep now, a full queue) does not enter the
 * Bloom filter and can still be admitted when it comes back:
 *
 *     normalize -> length -> scope -> include/exclude -> depth
 *       -> redirect hops -> path segments -> trap guard
 *       -> partition (another worker's host: routed there, stop)
 *       -> host budget -> queue capacity
 *       -> robots.txt (if known) -> seen-test (on the seen-key) -> enqueue
 *
 * A host given up is no refusal: its URLs are admitted (seen-tested,
 * queued) and dropped at next() with the host's reason, like those queued
 * before the give-up - a URL refused at add() would be lost for good,
 * since no store would know of it.
 *
 * With a partition (crawl workers, frontier.h bc_frontier_partition), a
 * URL whose host another worker owns leaves after the checks that depend
 * on the URL alone, the same on every worker; what depends on the host
 * (its budget, its robots.txt, whether it was given up) and the seen-test
 * are the owner's, which alone holds them. So the seen-test is not asked
 * here: the owner's decides (a sender may route the same URL twice; the
 * owner admits it once).
 *
 * The trap guard refuses a path with a segment repeated more than twice
 * (/a/b/a/b/a/...), the signature of relative links that grow a path for
 * ever; depth and the host budget bound the other traps (calendars).
 *
 * MEMORY
 * A host queue is a list of byte chunks. An entry is a 2-byte length, a
 * 2-byte depth, a byte of redirect hops, a byte of retries, an
 * 8-byte pointer to its referrer and the URL bytes without a NUL: a
 * queued URL costs its length + 14 bytes, plus its share of the slack of
 * its host's chunks (an entry never straddles two). With a store
 * (frontier.h: PERSISTENCE) an entry also holds the store's 8-byte id,
 * and a host keeps only a window of its queue in chunks of at most 512
 * bytes; the rest is the store's.
 *
 * A host's first chunk is 256 bytes (most hosts queue a few URLs); each
 * later one is a quarter of the bytes of the host's chunks so far, Q_b,
 * kept within [512 bytes, 64 KiB] (or the entry, if longer). Chunks that
 * doubled cost up to 2x past a boundary: 256 + ... + 32 KiB = 65,280
 * bytes hold 971 entries of 67 bytes (53-byte URLs), the 972nd took a
 * 64 KiB chunk more, and 1,000 cost 131 bytes each where 971 took 67.4.
 * With a quarter the worst case is 5/4. For a queue only pushed to,
 * with entries of at most e bytes (B in all) in k chunks with a header
 * of hc bytes (24 on LP64): every chunk before the newest is full but for
 * a tail shorter than an entry, so Q_b <= B' = B + (k - 1)(hc + e - 1);
 * the newest adds at most max(512, Q_b / 4) + hc (or one entry + hc,
 * which B counts), hence
 *
 *     Q <= max(B' + 512, 5/4 B') + hc.
 *
 * k grows as the log of Q: at most 5 chunks are made while Q_b < 2048
 * (each adds 512 + hc or more), each later one multiplies Q by 5/4 or
 * more up to 2^18 bytes, and past that each adds 64 KiB:
 *
 *     k <= 5 + [Q >= 2048] (1 + floor(log_{5/4}(min(Q, 2^18) / 2048)))
 *            + max(0, Q - 2^18) / 65536.
 *
 * So Q/B tends to 5/4 at worst (1.34 at most from 100 to 6,000 URLs of
 * 53 bytes at a host; test_queue_memory checks both bounds after every
 * push). The cost: about twice as many chunks as doubling (20 for 1,000
 * such URLs, not 9), one malloc() each, still O(1) per push with no
 * copying. Popping frees a chunk when its last entry leaves (a host holds
 * at most one partly read chunk, at its head) and the only chunk of an
 * emptied queue is kept for reuse; as Q_b counts the chunks held now, a
 * queue that drained grows again from the one chunk it kept.
 *
 * REFERRERS
 * Each queued URL remembers the page it was found on (or that redirected
 * to it), so that the crawler can say where a URL came from. A page's
 * links all share one copy of its URL, refcounted: made by the page's
 * first bc_frontier_add_link(), one reference per queued link, and one
 * for the job that fetched the page while its URL is valid; freed when
 * the last goes. So a referrer costs 8 bytes per queued URL plus one URL
 * per page with links still queued, where a copy per link would cost the
 * URL's length again (about 60 bytes) for every queued URL. A URL handed
 * out takes its entry's reference with it (job.referrer points into it).
 * bc_frontier_add_with_referrer() (a referrer that is no job's, e.g. a
 * sitemap) keeps its last referrer and shares it with the next call that
 * names the same one.
 *
 * SITEMAPS (config.sitemaps; frontier.h: SITEMAPS)
 * A host's robots.txt outcome, once known, names its sitemaps (Sitemap:
 * lines, or /sitemap.xml). A sitemap job waits in a short FIFO of its own
 * per host (struct sitemap_item, at most sitemaps_per_host ever), beside
 * the host's URL queue: a host is in the heap while either has work, and
 * next() hands its sitemaps out first, under the same politeness. A set
 * of the sitemap URLs queued in the crawl (uthash, a few per host) makes
 * each one fetched once, however indexes loop; the job carries the prefix
 * its pages must start with, checked in admit() right after
 * normalization. A sitemap that failed with a transient fault is retried
 * as a URL is (its count in the item), at its host's sitemaps' tail; one
 * out of retries, or dropped with its host down, is given up to the fault
 * (BC_FRONTIER_SITEMAP_TRANSIENT), so the crawl is not complete.
 *
 * TIME
 * The caller passes now_ms to every call that needs time. The frontier
 * never reads a clock and never sleeps: the tests drive it with a fake
 * clock, and a crawler can replay a crawl.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include <libpsl.h>
/* An allocation failure inside uthash must not exit (its default): it
 * rolls back instead, and a failed add leaves hh.tbl NULL. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "bloomcrawl/frontier.h"
#include "bloomcrawl/robots.h"
#include "bloomcrawl/version.h"

#define CHUNK_FIRST          256u
#define CHUNK_NEXT           512u
#define CHUNK_MAX            (64u * 1024u)
#define CHUNK_MAX_WINDOW     512u
#define ENTRY_HEADER         14u /* length, depth, hops, retries, referrer */
#define ENTRY_REF_AT         6u  /* where the referrer pointer is */
#define ENTRY_ID             8u  /* with a store: the store's id of the URL */
#define NOT_IN_HEAP          SIZE_MAX
#define MAX_ROBOTS_REDIRECTS 5u

/* ---- per-host queues ------------------------------------------------- */

struct chunk {
    struct chunk *next;
    uint32_t cap;  /* bytes of data[] */
    uint32_t head; /* next entry to read */
    uint32_t tail; /* end of the entries written */
    unsigned char data[];
};

enum robots_state {
    ROBOTS_UNKNOWN = 0, /* not fetched yet (or expired, or redirected) */
    ROBOTS_FETCHING,    /* a FETCH_ROBOTS job is out */
    ROBOTS_PARSED,      /* rules known */
    ROBOTS_ALLOW_ALL,   /* 4xx (not 408, 429): unavailable, no restriction */
    ROBOTS_UNREACHABLE, /* 5xx, 408, 429, network error: nothing allowed */
    ROBOTS_GIVEN_UP     /* unreachable after every retry: host dropped */
};

/* The host's circuit breaker (A CRAWL ALWAYS ENDS); the values are
 * enum bc_frontier_circuit's. */
enum circuit {
    CIRCUIT_CLOSED = BC_FRONTIER_CIRCUIT_CLOSED, /* requests go */
    CIRCUIT_OPEN = BC_FRONTIER_CIRCUIT_OPEN,     /* none before open_until */
    CIRCUIT_HALF_OPEN = BC_FRONTIER_CIRCUIT_HALF_OPEN /* one probe out */
};

struct host {
    UT_hash_handle hh;
    char *origin; /* "https://example.com:8443", the hash key */
    size_t origin_len;
    struct chunk *first, *last;
    size_t queued;  /* URLs of the host's queue: in memory + spilled */
    size_t spilled; /* with a store: the queue's tail held by the store */
    size_t queue_bytes;
    unsigned in_flight;
    uint64_t next_ms;       /* earliest next contact */
    uint64_t blocked_until; /* Retry-After or robots unreachable */
    uint64_t admitted;      /* URLs enqueued, for the budget */
    size_t heap_pos;
    enum robots_state robots_state;
    struct bc_robots *robots;
    uint64_t robots_expires;
    uint64_t crawl_delay_ms; /* from robots.txt, capped */
    unsigned robots_redirects;
    unsigned robots_failures;        /* unreachable outcomes in a row */
    enum robots_state robots_before; /* while FETCHING: the state before,
                                        for bc_frontier_giveback() */
    uint64_t given_up_lost;          /* ROBOTS_GIVEN_UP: URLs dropped */
    /* The circuit breaker: transient faults in a row (reset by any other
     * outcome), when the first of them came, the open period now (0:
     * not opened since the last success), and the host given up (down)
     * with the URLs it lost since. */
    enum circuit circuit;
    unsigned failures;
    uint64_t streak_since, open_until, backoff;
    bool down;
    uint64_t down_lost;
    uint64_t exhausted; /* its URLs whose retries ran out */
    char *robots_url;   /* a redirect target, or NULL for origin/robots.txt */
    /* Sitemap jobs waiting (FIFO), and how many were ever queued here
     * (for sitemaps_per_host). */
    struct sitemap_item *sm_head, *sm_tail;
    unsigned sm_count;
};

/* A queued sitemap job: text holds the URL, a NUL, the scope, a NUL. */
struct sitemap_item {
    struct sitemap_item *next;
    size_t url_len, scope_len;
    unsigned level;
    unsigned retries; /* times queued again after a transient fault */
    bool named;
    char text[];
};

/* A referrer shared by the queued URLs found on one page (see REFERRERS):
 * refs references, each released with referrer_release(). */
struct referrer {
    size_t refs;
    size_t len;
    char text[]; /* NUL-terminated */
};

/*
 * The URL of a FETCH or FETCH_ROBOTS job. The frontier owns it: it is on
 * the list of jobs out until the job's done() or robots_done(), then on
 * the retired list until the next bc_frontier_next() call, so that the
 * caller can still resolve the page's links against job.url after done()
 * (frontier.h). free() releases both lists, jobs never done included.
 * from is the job's referrer (a reference taken from its queue entry),
 * as_referrer the job's URL shared by the links found on its page (made
 * by the first bc_frontier_add_link(); this job holds one reference).
 */
struct job_url {
    struct job_url *prev, *next;
    struct referrer *from, *as_referrer;
    size_t len;
    char text[];
};

/* What travels with a queued URL besides its bytes. */
struct entry_meta {
    unsigned depth;
    unsigned redirects;   /* hops of the redirect chain that led to it */
    unsigned retries;     /* times queued again after a transient fault */
    uint64_t id;          /* the store's id (0 without a store) */
    struct referrer *ref; /* its referrer or NULL: queue_push() takes a
                             reference, queue_pop() hands one out */
};

/* A string set (seed hosts and domains). */
struct name {
    UT_hash_handle hh;
    char text[];
};

struct bc_frontier {
    struct bc_frontier_config cfg;
    struct bc_frontier_store store; /* store.queued NULL: no store */
    size_t window;                  /* with a store: URLs in memory per host */
    unsigned entry_header;          /* ENTRY_HEADER (+ ENTRY_ID with a store) */
    enum bc_status store_status;    /* the first store error, sticky */
    char *user_agent;
    struct bc_url_idn_cache *idn_cache; /* hosts repeat: IDNA once each */
    struct bc_seen *seen;
    const psl_ctx_t *psl;
    struct host *hosts; /* uthash by origin */
    size_t host_count;
    struct host **heap;
    size_t heap_len, heap_cap;
    struct name *scope_hosts, *scope_domains;
    size_t queued, in_flight, queue_bytes;
    uint64_t added, admitted, handed_out, robots_fetches, retried;
    uint64_t given_back; /* jobs given back (bc_frontier_giveback()) */
    uint64_t retries_exhausted;
    uint64_t rng; /* splitmix64 state for the retry jitter */
    uint64_t robots_parsed, robots_unavailable, robots_unreachable;
    uint64_t reasons[BC_ADMIT_REASON_COUNT];
    /* Sitemaps: the URLs queued in this crawl, the counters, and while
     * bc_frontier_add_from_sitemap() runs, the prefix its URL needs. */
    struct name *sitemap_seen;
    uint64_t sitemap_fetches, sitemap_keys;
    uint64_t sitemaps[BC_FRONTIER_SITEMAP_REASON_COUNT];
    const char *admit_prefix;
    size_t admit_prefix_len;
    char *sm_buf, *sm_base_buf; /* scratch: a sitemap URL and its base */
    struct job_url *jobs_out;   /* URLs of jobs not done yet */
    struct job_url *retired;    /* URLs of jobs done since the last next() */
    /* Scratch: the last base parsed, the URL and key being admitted. */
    char *base_src, *base_buf, *url_buf, *key_buf, *drop_buf;
    /* The referrer of the last bc_frontier_add_with_referrer() (one
     * reference is the frontier's), shared with the next call's if the
     * same. */
    struct referrer *last_referrer;
    size_t base_src_len;
    struct bc_url base;
    bool base_valid;
    size_t last_len; /* url_buf holds the last canonical URL, or 0 */
};

/* Sitemaps (the section "sitemaps" below). */
static void sitemap_default(struct bc_frontier *f, struct host *h);
static void sitemap_seen_test(struct bc_frontier *f, const struct bc_url *u);
static void sitemaps_of_robots(struct bc_frontier *f, struct host *h);
static enum bc_status sitemap_next(struct bc_frontier *f, struct host *h,
                                   uint64_t now, struct bc_frontier_job *j);
static enum bc_status sitemap_giveback(struct bc_frontier *f, struct host *h,
                                       const struct bc_frontier_job *job);

const char *bc_fault_name(enum bc_fault fault)
{
    switch (fault) {
    case BC_FAULT_NONE:
        return "none";
    case BC_FAULT_PERMANENT:
        return "permanent";
    case BC_FAULT_TRANSIENT:
        return "transient";
    case BC_FAULT_LOCAL:
        return "local";
    }
    return "unknown";
}

const char *bc_frontier_reason_name(enum bc_frontier_reason reason)
{
    switch (reason) {
    case BC_ADMIT_QUEUED:
        return "queued";
    case BC_ADMIT_BAD_URL:
        return "bad_url";
    case BC_ADMIT_TOO_LONG:
        return "too_long";
    case BC_ADMIT_OUT_OF_SCOPE:
        return "out_of_scope";
    case BC_ADMIT_EXCLUDED:
        return "excluded";
    case BC_ADMIT_TOO_DEEP:
        return "too_deep";
    case BC_ADMIT_TOO_MANY_SEGMENTS:
        return "too_many_segments";
    case BC_ADMIT_TRAP:
        return "trap";
    case BC_ADMIT_HOST_BUDGET:
        return "host_budget";
    case BC_ADMIT_QUEUE_FULL:
        return "queue_full";
    case BC_ADMIT_ROBOTS:
        return "robots";
    case BC_ADMIT_DUPLICATE:
        return "duplicate";
    case BC_ADMIT_PROBABLY_SEEN:
        return "probably_seen";
    case BC_ADMIT_NOMEM:
        return "nomem";
    case BC_ADMIT_HOST_GIVEN_UP:
        return "host_given_up";
    case BC_ADMIT_TOO_MANY_REDIRECTS:
        return "too_many_redirects";
    case BC_ADMIT_STORE_ERROR:
        return "store_error";
    case BC_ADMIT_SITEMAP_SCOPE:
        return "sitemap_scope";
    case BC_ADMIT_ROUTED:
        return "routed";
    case BC_ADMIT_HOST_DOWN:
        return "host_down";
    case BC_ADMIT_REASON_COUNT:
        break;
    }
    return "unknown";
}

const char *
bc_frontier_sitemap_reason_name(enum bc_frontier_sitemap_reason reason)
{
    switch (reason) {
    case BC_FRONTIER_SITEMAP_QUEUED:
        return "queued";
    case BC_FRONTIER_SITEMAP_BAD_URL:
        return "bad_url";
    case BC_FRONTIER_SITEMAP_OUT_OF_SCOPE:
        return "out_of_scope";
    case BC_FRONTIER_SITEMAP_DUPLICATE:
        return "duplicate";
    case BC_FRONTIER_SITEMAP_TOO_DEEP:
        return "too_deep";
    case BC_FRONTIER_SITEMAP_HOST_CAP:
        return "host_cap";
    case BC_FRONTIER_SITEMAP_ROBOTS:
        return "robots";
    case BC_FRONTIER_SITEMAP_HOST_GIVEN_UP:
        return "host_given_up";
    case BC_FRONTIER_SITEMAP_NOMEM:
        return "nomem";
    case BC_FRONTIER_SITEMAP_TRANSIENT:
        return "transient";
    case BC_FRONTIER_SITEMAP_REASON_COUNT:
        break;
    }
    return "unknown";
}

void bc_frontier_config_init(struct bc_frontier_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof(*c));
    c->user_agent = "bloomcrawl/" BC_VERSION_STRING;
    c->per_host_concurrency = 1;
    c->min_delay_ms = BC_FRONTIER_DEFAULT_DELAY_MS;
    c->max_crawl_delay_ms = BC_FRONTIER_DEFAULT_MAX_CRAWL_DELAY_MS;
    c->response_factor = 0.0;
    c->backoff_ms = BC_FRONTIER_DEFAULT_BACKOFF_MS;
    c->max_retry_after_ms = BC_FRONTIER_DEFAULT_MAX_RETRY_AFTER_MS;
    c->max_retries = BC_FRONTIER_DEFAULT_MAX_RETRIES;
    c->retry_delay_ms = BC_FRONTIER_DEFAULT_RETRY_DELAY_MS;
    c->retry_jitter = BC_FRONTIER_DEFAULT_RETRY_JITTER;
    c->host_failures = BC_FRONTIER_DEFAULT_HOST_FAILURES;
    c->host_backoff_ms = BC_FRONTIER_DEFAULT_HOST_BACKOFF_MS;
    c->host_backoff_max_ms = BC_FRONTIER_DEFAULT_HOST_BACKOFF_MAX_MS;
    c->host_give_up_ms = BC_FRONTIER_DEFAULT_HOST_GIVE_UP_MS;
    c->obey_robots = true;
    c->robots_ttl_ms = BC_FRONTIER_DEFAULT_ROBOTS_TTL_MS;
    c->robots_retry_ms = BC_FRONTIER_DEFAULT_ROBOTS_RETRY_MS;
    c->robots_retries = BC_FRONTIER_DEFAULT_ROBOTS_RETRIES;
    c->scope = BC_SCOPE_HOST;
    c->max_depth = BC_FRONTIER_DEFAULT_MAX_DEPTH;
    c->max_redirects = BC_FRONTIER_DEFAULT_MAX_REDIRECTS;
    c->max_url_len = BC_URL_MAX_LEN_DEFAULT;
    c->max_segments = BC_FRONTIER_DEFAULT_MAX_SEGMENTS;
    bc_seen_config_init(&c->seen);
}

/* ---- the heap of hosts by next contact time -------------------------- */

static bool heap_less(const struct host *a, const struct host *b)
{
    return a->next_ms < b->next_ms;
}

static void heap_set(struct bc_frontier *f, size_t i, struct host *h)
{
    f->heap[i] = h;
    h->heap_pos = i;
}

static void heap_up(struct bc_frontier *f, size_t i)
{
    struct host *h = f->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_less(h, f->heap[parent]))
            break;
        heap_set(f, i, f->heap[parent]);
        i = parent;
    }
    heap_set(f, i, h);
}

static void heap_down(struct bc_frontier *f, size_t i)
{
    struct host *h = f->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= f->heap_len)
            break;
        if (child + 1 < f->heap_len &&
            heap_less(f->heap[child + 1], f->heap[child]))
            child++;
        if (!heap_less(f->heap[child], h))
            break;
        heap_set(f, i, f->heap[child]);
        i = child;
    }
    heap_set(f, i, h);
}

static bool heap_push(struct bc_frontier *f, struct host *h)
{
    if (f->heap_len == f->heap_cap) {
        size_t cap = f->heap_cap ? 2 * f->heap_cap : 64;
        struct host **heap = realloc(f->heap, cap * sizeof(*heap));
        if (!heap)
            return false;
        f->heap = heap;
        f->heap_cap = cap;
    }
    heap_set(f, f->heap_len++, h);
    heap_up(f, f->heap_len - 1);
    return true;
}

static void heap_remove(struct bc_frontier *f, struct host *h)
{
    size_t i = h->heap_pos;
    struct host *last = f->heap[--f->heap_len];
    h->heap_pos = NOT_IN_HEAP;
    if (last == h)
        return;
    heap_set(f, i, last);
    heap_up(f, i);
    heap_down(f, last->heap_pos);
}

/* A host belongs in the heap when it has queued URLs, a free transfer slot
 * and no robots.txt fetch out. Call after any change to those or to
 * next_ms. The heap's capacity is reserved when a host is created, so the
 * push cannot fail. */
static void host_schedule(struct bc_frontier *f, struct host *h)
{
    bool wanted = (h->queued > 0 || h->sm_head) &&
                  h->in_flight < f->cfg.per_host_concurrency &&
                  h->robots_state != ROBOTS_FETCHING &&
                  !(h->circuit == CIRCUIT_HALF_OPEN && h->in_flight > 0);
    if (wanted && h->heap_pos == NOT_IN_HEAP) {
        (void)heap_push(f, h);
    } else if (!wanted && h->heap_pos != NOT_IN_HEAP) {
        heap_remove(f, h);
    } else if (wanted) {
        heap_up(f, h->heap_pos);
        heap_down(f, h->heap_pos);
    }
}

/* ---- referrers -------------------------------------------------------- */

/* A new referrer of len bytes, no reference yet; NULL when out of
 * memory. */
static struct referrer *referrer_new(const char *text, size_t len)
{
    struct referrer *r = malloc(sizeof(*r) + len + 1);
    if (!r)
        return NULL;
    r->refs = 0;
    r->len = len;
    memcpy(r->text, text, len);
    r->text[len] = '\0';
    return r;
}

/* Drop one reference; the last frees it. NULL is a no-op. */
static void referrer_release(struct referrer *r)
{
    if (r && --r->refs == 0)
        free(r);
}

/* ---- host queues ----------------------------------------------------- */

/* Make room for an entry of len URL bytes at the host's tail. */
static bool queue_reserve(struct bc_frontier *f, struct host *h, size_t len)
{
    size_t need = f->entry_header + len;
    if (h->last && h->last->cap - h->last->tail >= need)
        return true;
    /* The first chunk CHUNK_FIRST, the next ones a quarter of the host's
     * queue bytes within [CHUNK_NEXT, max] (MEMORY). With a store a host
     * holds a window of a few URLs: its chunks stay small. */
    size_t max = f->store.queued ? CHUNK_MAX_WINDOW : CHUNK_MAX;
    size_t cap = h->queue_bytes / 4;
    cap = !h->last ? CHUNK_FIRST : cap < CHUNK_NEXT ? CHUNK_NEXT : cap;
    if (cap > max)
        cap = max;
    if (cap < need)
        cap = need;
    struct chunk *c = malloc(sizeof(*c) + cap);
    if (!c)
        return false;
    c->next = NULL;
    c->cap = (uint32_t)cap;
    c->head = c->tail = 0;
    if (h->last)
        h->last->next = c;
    else
        h->first = c;
    h->last = c;
    h->queue_bytes += sizeof(*c) + cap;
    f->queue_bytes += sizeof(*c) + cap;
    return true;
}

/* Append an entry; queue_reserve() must have made room. */
static void queue_push(struct bc_frontier *f, struct host *h, const char *url,
                       size_t len, const struct entry_meta *m)
{
    struct chunk *c = h->last;
    unsigned char *p = c->data + c->tail;
    p[0] = (unsigned char)(len & 0xff);
    p[1] = (unsigned char)(len >> 8);
    p[2] = (unsigned char)(m->depth & 0xff);
    p[3] = (unsigned char)(m->depth >> 8);
    p[4] = (unsigned char)m->redirects;
    p[5] = (unsigned char)m->retries;
    memcpy(p + ENTRY_REF_AT, &m->ref, sizeof(m->ref));
    if (m->ref)
        m->ref->refs++;
    if (f->entry_header > ENTRY_HEADER)
        memcpy(p + ENTRY_HEADER, &m->id, ENTRY_ID);
    memcpy(p + f->entry_header, url, len);
    c->tail += (uint32_t)(f->entry_header + len);
    h->queued++;
    f->queued++;
}

/* The head entry, left in place: its URL bytes (not NUL-terminated) and
 * their length in *len. The queue must not be empty. */
static const char *queue_peek(const struct bc_frontier *f, const struct host *h,
                              size_t *len)
{
    const struct chunk *c = h->first;
    const unsigned char *p = c->data + c->head;
    *len = (size_t)p[0] | (size_t)p[1] << 8;
    return (const char *)p + f->entry_header;
}

/* Take the head entry into buf (NUL-terminated); returns its length. */
static size_t queue_pop(struct bc_frontier *f, struct host *h, char *buf,
                        struct entry_meta *m)
{
    struct chunk *c = h->first;
    const unsigned char *p = c->data + c->head;
    size_t len = (size_t)p[0] | (size_t)p[1] << 8;
    m->depth = (unsigned)p[2] | (unsigned)p[3] << 8;
    m->redirects = p[4];
    m->retries = p[5];
    memcpy(&m->ref, p + ENTRY_REF_AT, sizeof(m->ref));
    m->id = 0;
    if (f->entry_header > ENTRY_HEADER)
        memcpy(&m->id, p + ENTRY_HEADER, ENTRY_ID);
    memcpy(buf, p + f->entry_header, len);
    buf[len] = '\0';
    c->head += (uint32_t)(f->entry_header + len);
    h->queued--;
    f->queued--;
    if (c->head == c->tail) {
        /* An empty chunk: free it, or rewind the only one. */
        if (c->next) {
            h->first = c->next;
            h->queue_bytes -= sizeof(*c) + c->cap;
            f->queue_bytes -= sizeof(*c) + c->cap;
            free(c);
        } else {
            c->head = c->tail = 0;
        }
    }
    return len;
}

/* Whether the next URL queued at the host's tail goes to memory: always
 * without a store; with one, while the host's window has room and none of
 * its queue is spilled (memory holds a prefix of the host's FIFO). */
static bool in_memory_next(const struct bc_frontier *f, const struct host *h)
{
    return !f->store.queued || (h->spilled == 0 && h->queued < f->window);
}

/* Queue a URL at the host's tail: into memory (queue_reserve() made
 * room), or, with a store, counted as spilled: the store holds it. */
static void enqueue(struct bc_frontier *f, struct host *h, const char *url,
                    size_t len, const struct entry_meta *m, bool to_memory)
{
    if (to_memory) {
        queue_push(f, h, url, len, m);
    } else {
        h->spilled++;
        h->queued++;
        f->queued++;
    }
}

static void host_free(const struct bc_frontier *f, struct host *h)
{
    struct chunk *c = h->first;
    while (c) {
        struct chunk *next = c->next;
        /* The entries' references to their referrers. */
        for (uint32_t at = c->head; at < c->tail;) {
            const unsigned char *p = c->data + at;
            struct referrer *r;
            memcpy(&r, p + ENTRY_REF_AT, sizeof(r));
            referrer_release(r);
            at += (uint32_t)(f->entry_header +
                             ((size_t)p[0] | (size_t)p[1] << 8));
        }
        free(c);
        c = next;
    }
    while (h->sm_head) {
        struct sitemap_item *it = h->sm_head;
        h->sm_head = it->next;
        free(it);
    }
    bc_robots_free(h->robots);
    free(h->robots_url);
    free(h->origin);
    free(h);
}

static struct host *host_find(struct bc_frontier *f, const char *origin,
                              size_t len)
{
    struct host *h;
    HASH_FIND(hh, f->hosts, origin, len, h);
    return h;
}

/* The host of an origin, created when new; NULL when out of memory. */
static struct host *host_get(struct bc_frontier *f, const char *origin,
                             size_t len)
{
    struct host *h = host_find(f, origin, len);
    if (h)
        return h;
    if (f->host_count + 1 > f->heap_cap) { /* reserve its heap slot now */
        size_t cap = f->heap_cap ? 2 * f->heap_cap : 64;
        struct host **heap = realloc(f->heap, cap * sizeof(*heap));
        if (!heap)
            return NULL;
        f->heap = heap;
        f->heap_cap = cap;
    }
    h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->origin = malloc(len + 1);
    if (!h->origin) {
        free(h);
        return NULL;
    }
    memcpy(h->origin, origin, len);
    h->origin[len] = '\0';
    h->origin_len = len;
    h->heap_pos = NOT_IN_HEAP;
    HASH_ADD_KEYPTR(hh, f->hosts, h->origin, len, h);
    if (h->hh.tbl == NULL) { /* uthash could not allocate its table */
        free(h->origin);
        free(h);
        return NULL;
    }
    f->host_count++;
    return h;
}

/* ---- create / free --------------------------------------------------- */

enum bc_status bc_frontier_create(const struct bc_frontier_config *config,
                                  struct bc_frontier **out)
{
    if (!config || !out || config->per_host_concurrency == 0 ||
        config->max_url_len == 0 ||
        config->max_url_len > BC_FRONTIER_MAX_URL_LEN ||
        config->max_depth > 65535 || config->max_redirects > 255 ||
        config->max_retries > 255 || !config->user_agent ||
        !(config->retry_jitter >= 0.0 && config->retry_jitter <= 1.0) ||
        config->scope > BC_SCOPE_ANY ||
        (config->partition.owns && !config->partition.route))
        return BC_ERR_INVALID_ARG;
    struct bc_frontier *f = calloc(1, sizeof(*f));
    if (!f)
        return BC_ERR_NOMEM;
    f->cfg = *config;
    f->rng = config->retry_seed;
    f->entry_header = ENTRY_HEADER;
    f->cfg.url_policy.max_len = config->max_url_len;
    size_t cap = config->max_url_len + 1;
    f->user_agent = strdup(config->user_agent);
    f->base_src = malloc(cap);
    f->base_buf = malloc(cap);
    f->url_buf = malloc(cap);
    f->key_buf = malloc(cap);
    f->drop_buf = malloc(cap);
    f->sm_buf = malloc(cap);
    f->sm_base_buf = malloc(cap);
    enum bc_status st = BC_ERR_NOMEM;
    if (!f->user_agent || !f->base_src || !f->base_buf || !f->url_buf ||
        !f->key_buf || !f->drop_buf || !f->sm_buf || !f->sm_base_buf)
        goto out_free;
    if (!f->cfg.sitemaps_per_host)
        f->cfg.sitemaps_per_host = BC_FRONTIER_DEFAULT_SITEMAPS_PER_HOST;
    f->cfg.user_agent = f->user_agent;
    /* ICU costs 0.5-1 us a host; a crawl meets the same hosts again and
     * again. The caller's own cache, if any, is used as it is. */
    if (!f->cfg.url_policy.idn_cache) {
        st = bc_url_idn_cache_create(1024, &f->idn_cache);
        if (st != BC_OK)
            goto out_free;
        f->cfg.url_policy.idn_cache = f->idn_cache;
    }
    st = bc_seen_create(&config->seen, &f->seen);
    if (st != BC_OK)
        goto out_free;
    f->psl = psl_builtin();
    *out = f;
    return BC_OK;

out_free:
    bc_frontier_free(f);
    return st;
}

static void names_free(struct name **set)
{
    struct name *n, *tmp;
    HASH_ITER(hh, *set, n, tmp)
    {
        HASH_DEL(*set, n);
        free(n);
    }
}

static void job_urls_free(struct job_url *u)
{
    while (u) {
        struct job_url *next = u->next;
        referrer_release(u->from);
        referrer_release(u->as_referrer);
        free(u);
        u = next;
    }
}

void bc_frontier_free(struct bc_frontier *f)
{
    if (!f)
        return;
    job_urls_free(f->jobs_out);
    job_urls_free(f->retired);
    struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        HASH_DEL(f->hosts, h);
        host_free(f, h);
    }
    names_free(&f->scope_hosts);
    names_free(&f->scope_domains);
    names_free(&f->sitemap_seen);
    bc_seen_free(f->seen);
    bc_url_idn_cache_free(f->idn_cache);
    free(f->heap);
    free(f->user_agent);
    free(f->base_src);
    free(f->base_buf);
    free(f->url_buf);
    free(f->key_buf);
    free(f->drop_buf);
    referrer_release(f->last_referrer);
    free(f->sm_buf);
    free(f->sm_base_buf);
    free(f);
}

const char *bc_frontier_last_url(const struct bc_frontier *f, size_t *len)
{
    if (!f || f->last_len == 0)
        return NULL;
    if (len)
        *len = f->last_len;
    return f->url_buf;
}

struct bc_seen *bc_frontier_seen(struct bc_frontier *f)
{
    return f->seen;
}

/* ---- the store (frontier.h: persistence) ------------------------------ */

enum bc_status bc_frontier_set_store(struct bc_frontier *f,
                                     const struct bc_frontier_store *store)
{
    if (!f || !store || !store->queued || !store->left || !store->host ||
        !store->refill || f->queued > 0 || f->in_flight > 0 || f->store.queued)
        return BC_ERR_INVALID_ARG;
    f->store = *store;
    f->window = store->window ? store->window : BC_FRONTIER_DEFAULT_WINDOW;
    f->entry_header = ENTRY_HEADER + ENTRY_ID;
    return BC_OK;
}

enum bc_status bc_frontier_store_status(const struct bc_frontier *f)
{
    return f ? f->store_status : BC_ERR_INVALID_ARG;
}

static enum bc_frontier_robots robots_public(enum robots_state s)
{
    switch (s) {
    case ROBOTS_PARSED:
        return BC_FRONTIER_ROBOTS_PARSED;
    case ROBOTS_ALLOW_ALL:
        return BC_FRONTIER_ROBOTS_ALLOW_ALL;
    case ROBOTS_UNREACHABLE:
        return BC_FRONTIER_ROBOTS_UNREACHABLE;
    case ROBOTS_GIVEN_UP:
        return BC_FRONTIER_ROBOTS_GIVEN_UP;
    case ROBOTS_UNKNOWN:
    case ROBOTS_FETCHING:
        break;
    }
    return BC_FRONTIER_ROBOTS_UNKNOWN;
}

/* Tell the store the host's state (robots.txt outcome, body when parsed,
 * remaining lifetime from now); a failure is sticky. No store: BC_OK. */
static enum bc_status store_host(struct bc_frontier *f, const struct host *h,
                                 uint64_t now, const void *body, size_t len)
{
    if (!f->store.queued)
        return BC_OK;
    struct bc_frontier_host_state st;
    memset(&st, 0, sizeof(st));
    st.origin = h->origin;
    st.origin_len = h->origin_len;
    st.robots = robots_public(h->robots_state);
    st.robots_body = st.robots == BC_FRONTIER_ROBOTS_PARSED ? body : NULL;
    st.robots_body_len = st.robots_body ? len : 0;
    st.robots_ttl_ms = h->robots_expires == UINT64_MAX ? UINT64_MAX
                       : h->robots_expires > now       ? h->robots_expires - now
                                                       : 0;
    st.robots_failures = h->robots_failures;
    st.given_up_lost = h->given_up_lost;
    st.admitted = h->admitted;
    st.queued = h->queued;
    enum bc_status r = f->store.host(f->store.ctx, &st);
    if (r != BC_OK)
        f->store_status = r;
    return r;
}

/* Tell the store the host's circuit at time now (times sent relative to
 * now); a failure is sticky. No store, or no circuit hook: BC_OK. */
static enum bc_status store_circuit(struct bc_frontier *f, const struct host *h,
                                    uint64_t now)
{
    if (!f->store.queued || !f->store.circuit)
        return BC_OK;
    struct bc_frontier_circuit_state c;
    memset(&c, 0, sizeof(c));
    c.circuit = (enum bc_frontier_circuit)h->circuit;
    c.failures = h->failures;
    c.failing_ms =
        h->failures && now > h->streak_since ? now - h->streak_since : 0;
    c.open_ms = h->open_until > now ? h->open_until - now : 0;
    c.backoff_ms = h->backoff;
    c.down = h->down;
    c.down_lost = h->down_lost;
    c.exhausted = h->exhausted;
    c.retry_ms = h->blocked_until > now ? h->blocked_until - now : 0;
    enum bc_status r =
        f->store.circuit(f->store.ctx, h->origin, h->origin_len, &c);
    if (r != BC_OK)
        f->store_status = r;
    return r;
}

/* ---- admission checks ------------------------------------------------ */

static bool name_has(struct name *set, const char *s, size_t len)
{
    struct name *n;
    HASH_FIND(hh, set, s, len, n);
    return n != NULL;
}

static bool name_add(struct name **set, const char *s, size_t len)
{
    if (name_has(*set, s, len))
        return true;
    struct name *n = malloc(sizeof(*n) + len + 1);
    if (!n)
        return false;
    memcpy(n->text, s, len);
    n->text[len] = '\0';
    HASH_ADD_KEYPTR(hh, *set, n->text, len, n);
    if (n->hh.tbl == NULL) {
        free(n);
        return false;
    }
    return true;
}

/* The registrable domain of a host ("blog.example.co.uk" ->
 * "example.co.uk"); an IP address or a public suffix is its own. */
static const char *registrable(const struct bc_frontier *f,
                               const struct bc_url *u, char *buf, size_t cap,
                               size_t *len)
{
    const char *host = u->href + u->host.off;
    if (u->host.len >= cap)
        return NULL;
    memcpy(buf, host, u->host.len);
    buf[u->host.len] = '\0';
    const char *reg = NULL;
    if (u->host_type == BC_URL_HOST_NAME && f->psl)
        reg = psl_registrable_domain(f->psl, buf);
    if (!reg)
        reg = buf;
    *len = strlen(reg);
    return reg;
}

/* A seed's host and registrable domain enter the scope; false: no memory. */
static bool scope_add(struct bc_frontier *f, const struct bc_url *u)
{
    char buf[300];
    size_t len;
    const char *reg = registrable(f, u, buf, sizeof(buf), &len);
    return name_add(&f->scope_hosts, u->href + u->host.off, u->host.len) &&
           (!reg || name_add(&f->scope_domains, reg, len));
}

static bool in_scope(const struct bc_frontier *f, const struct bc_url *u)
{
    switch (f->cfg.scope) {
    case BC_SCOPE_ANY:
        return true;
    case BC_SCOPE_HOST:
        return name_has(f->scope_hosts, u->href + u->host.off, u->host.len);
    case BC_SCOPE_DOMAIN: {
        char buf[300];
        size_t len;
        const char *reg = registrable(f, u, buf, sizeof(buf), &len);
        return reg && name_has(f->scope_domains, reg, len);
    }
    }
    return false;
}

/* Glob match: '*' matches any run of bytes. Linear in practice: on a
 * mismatch it only backtracks to the last '*'. */
static bool glob_match(const char *pat, const char *s, size_t len)
{
    size_t i = 0;
    const char *star = NULL;
    size_t star_i = 0;
    while (i < len) {
        if (*pat == '*') {
            star = pat++;
            star_i = i;
        } else if (*pat && *pat == s[i]) {
            pat++;
            i++;
        } else if (star) {
            pat = star + 1;
            i = ++star_i;
        } else {
            return false;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

static bool any_match(const char *const *pats, size_t count, const char *s,
                      size_t len)
{
    for (size_t i = 0; i < count; i++)
        if (pats[i] && glob_match(pats[i], s, len))
            return true;
    return false;
}

/* Path segment checks: too many segments, or one repeated > 2 times. */
static enum bc_frontier_reason check_segments(const struct bc_frontier *f,
                                              const struct bc_url *u)
{
    const char *path = u->href + u->path.off;
    size_t len = u->path.len;
    struct {
        size_t off, len;
    } seg[64];
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && path[i] == '/')
            i++;
        size_t start = i;
        while (i < len && path[i] != '/')
            i++;
        if (i == start)
            continue;
        if (n == sizeof(seg) / sizeof(seg[0]) || n >= f->cfg.max_segments)
            return BC_ADMIT_TOO_MANY_SEGMENTS;
        seg[n].off = start;
        seg[n].len = i - start;
        n++;
    }
    for (size_t a = 0; a < n; a++) {
        unsigned repeats = 1;
        for (size_t b = a + 1; b < n; b++)
            if (seg[b].len == seg[a].len &&
                memcmp(path + seg[a].off, path + seg[b].off, seg[a].len) == 0)
                repeats++;
        if (repeats > 2)
            return BC_ADMIT_TRAP;
    }
    return BC_ADMIT_QUEUED;
}

/* The path and query of a canonical URL string (for robots.txt). */
static const char *url_target(const char *url, size_t len, size_t *tlen)
{
    const char *p = memchr(url, ':', len);
    size_t i = p ? (size_t)(p - url) + 3 : 0; /* past "://" */
    while (i < len && url[i] != '/')
        i++;
    *tlen = len - i;
    return url + i;
}

/* Only known rules restrict: a URL of a host whose robots.txt is not
 * known yet (or unreachable for now) is queued, and checked again when it
 * leaves the queue, after the rules have been fetched. */
static bool robots_allows(const struct host *h, const char *url, size_t len)
{
    if (h->robots_state != ROBOTS_PARSED)
        return true;
    size_t tlen;
    const char *target = url_target(url, len, &tlen);
    return bc_robots_allowed(h->robots, target, tlen);
}

/* Parse base into f->base (cached: a page's links share their base). */
static enum bc_status parse_base(struct bc_frontier *f, const char *base,
                                 size_t len)
{
    if (f->base_valid && len == f->base_src_len &&
        memcmp(base, f->base_src, len) == 0)
        return BC_OK;
    f->base_valid = false;
    if (len > f->cfg.max_url_len)
        return BC_ERR_URL_TOO_LONG;
    enum bc_status st =
        bc_url_normalize(NULL, base, len, &f->cfg.url_policy, f->base_buf,
                         f->cfg.max_url_len + 1, &f->base);
    if (st != BC_OK)
        return st;
    memcpy(f->base_src, base, len);
    f->base_src_len = len;
    f->base_valid = true;
    return BC_OK;
}

static enum bc_frontier_reason admit(struct bc_frontier *f, const char *href,
                                     size_t href_len, const char *base,
                                     size_t base_len,
                                     const struct entry_meta *m, bool seed,
                                     enum bc_status *url_status)
{
    struct bc_url u;
    enum bc_status st = BC_OK;
    const struct bc_url *parsed_base = NULL;
    f->last_len = 0;
    if (base && base_len > 0) {
        st = parse_base(f, base, base_len);
        if (st == BC_OK)
            parsed_base = &f->base;
    }
    if (st == BC_OK)
        st = bc_url_normalize(parsed_base, href, href_len, &f->cfg.url_policy,
                              f->url_buf, f->cfg.max_url_len + 1, &u);
    *url_status = st;
    f->last_len = st == BC_OK ? u.len : 0;
    if (st == BC_ERR_URL_TOO_LONG)
        return BC_ADMIT_TOO_LONG;
    if (st == BC_ERR_NOMEM)
        return BC_ADMIT_NOMEM;
    if (st != BC_OK)
        return BC_ADMIT_BAD_URL;
    if (f->admit_prefix &&
        (u.len < f->admit_prefix_len ||
         memcmp(u.href, f->admit_prefix, f->admit_prefix_len) != 0))
        return BC_ADMIT_SITEMAP_SCOPE;

    if (seed) {
        if (!scope_add(f, &u))
            return BC_ADMIT_NOMEM;
    } else if (!in_scope(f, &u)) {
        return BC_ADMIT_OUT_OF_SCOPE;
    }
    if ((f->cfg.include_count > 0 &&
         !any_match(f->cfg.include, f->cfg.include_count, u.href, u.len)) ||
        any_match(f->cfg.exclude, f->cfg.exclude_count, u.href, u.len))
        return BC_ADMIT_EXCLUDED;
    if (m->depth > f->cfg.max_depth)
        return BC_ADMIT_TOO_DEEP;
    if (m->redirects > f->cfg.max_redirects)
        return BC_ADMIT_TOO_MANY_REDIRECTS;
    enum bc_frontier_reason r = check_segments(f, &u);
    if (r != BC_ADMIT_QUEUED)
        return r;

    char obuf[300];
    size_t olen;
    const char *origin = bc_url_origin(&u, obuf, sizeof(obuf), &olen);
    if (!origin)
        return BC_ADMIT_BAD_URL;
    const struct bc_frontier_partition *part = &f->cfg.partition;
    if (part->owns && !part->owns(part->ctx, origin, olen)) {
        struct bc_frontier_entry e = {u.href, u.len, m->depth, m->redirects,
                                      0,      0,     NULL,     0};
        if (m->ref) {
            e.referrer = m->ref->text;
            e.referrer_len = m->ref->len;
        }
        st = part->route(part->ctx, origin, olen, &e, seed);
        if (st == BC_ERR_NOMEM)
            return BC_ADMIT_NOMEM;
        if (st != BC_OK) {
            f->store_status = st;
            return BC_ADMIT_STORE_ERROR;
        }
        return BC_ADMIT_ROUTED;
    }
    /* A host given up (robots.txt unreachable, or down) is no refusal
     * here: its URL is admitted like any other and comes back from next()
     * as a DROP with the host's reason, so that a store records it among
     * the URLs lost to transient faults and a retry brings it back; found
     * again meanwhile, it is a duplicate. */
    struct host *h = host_find(f, origin, olen);
    if (h && f->cfg.host_budget && h->admitted >= f->cfg.host_budget)
        return BC_ADMIT_HOST_BUDGET;
    if (f->cfg.queue_capacity && f->queued >= f->cfg.queue_capacity)
        return BC_ADMIT_QUEUE_FULL;
    if (h && f->cfg.obey_robots && !robots_allows(h, u.href, u.len))
        return BC_ADMIT_ROBOTS;

    /* Everything that can fail goes before the seen-test, which cannot be
     * undone: a NEW key must be enqueued. (A store error after it is
     * sticky: the frontier is then unusable anyway.) */
    bool new_host = !h;
    if (!h)
        h = host_get(f, origin, olen);
    if (!h)
        return BC_ADMIT_NOMEM;
    if (new_host && f->cfg.sitemaps && !f->cfg.obey_robots)
        sitemap_default(f, h); /* no robots.txt to name any */
    bool to_memory = in_memory_next(f, h);
    if (to_memory && !queue_reserve(f, h, u.len))
        return BC_ADMIT_NOMEM;
    size_t key_len;
    st = bc_url_seen_key(&u, &f->cfg.url_policy, f->key_buf,
                         f->cfg.max_url_len + 1, &key_len);
    if (st != BC_OK) /* NOMEM: a sort of more than 64 query parameters */
        return st == BC_ERR_NOMEM ? BC_ADMIT_NOMEM : BC_ADMIT_BAD_URL;
    enum bc_seen_verdict v;
    st = bc_seen_test_and_add(f->seen, f->key_buf, key_len, &v);
    if (st != BC_OK && st != BC_ERR_NOMEM) /* NOMEM: verdict still valid */
        return BC_ADMIT_NOMEM;
    if (v == BC_SEEN_DUPLICATE)
        return BC_ADMIT_DUPLICATE;
    if (v == BC_SEEN_PROBABLY_SEEN)
        return BC_ADMIT_PROBABLY_SEEN;
    struct entry_meta em = *m;
    if (f->store.queued) {
        struct bc_frontier_entry e = {u.href,     u.len, m->depth, m->redirects,
                                      m->retries, 0,     NULL,     0};
        if (m->ref) {
            e.referrer = m->ref->text;
            e.referrer_len = m->ref->len;
        }
        st = f->store.queued(f->store.ctx, h->origin, h->origin_len, &e, false,
                             &em.id);
        if (st != BC_OK) {
            f->store_status = st;
            return BC_ADMIT_STORE_ERROR;
        }
    }
    enqueue(f, h, u.href, u.len, &em, to_memory);
    h->admitted++;
    host_schedule(f, h);
    return BC_ADMIT_QUEUED;
}

static enum bc_status add_common(struct bc_frontier *f, const char *href,
                                 size_t href_len, const char *base,
                                 size_t base_len, const struct entry_meta *m,
                                 bool seed, enum bc_frontier_reason *reason,
                                 enum bc_status *url_status)
{
    if (!f || !reason || (!href && href_len > 0) || (!base && base_len > 0))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK) {
        *reason = BC_ADMIT_STORE_ERROR;
        return f->store_status;
    }
    enum bc_status ust;
    enum bc_frontier_reason r =
        admit(f, href ? href : "", href_len, base, base_len, m, seed, &ust);
    f->added++;
    f->reasons[r]++;
    if (r == BC_ADMIT_QUEUED)
        f->admitted++;
    *reason = r;
    if (url_status)
        *url_status = ust;
    if (r == BC_ADMIT_STORE_ERROR)
        return f->store_status;
    return r == BC_ADMIT_NOMEM ? BC_ERR_NOMEM : BC_OK;
}

enum bc_status bc_frontier_add(struct bc_frontier *f, const char *href,
                               size_t href_len, const char *base,
                               size_t base_len, unsigned depth,
                               enum bc_frontier_reason *reason,
                               enum bc_status *url_status)
{
    struct entry_meta m = {depth, 0, 0, 0, NULL};
    return add_common(f, href, href_len, base, base_len, &m, false, reason,
                      url_status);
}

/* The job_url whose text is a job's url. */
static struct job_url *job_url_of(const char *text)
{
    return (struct job_url *)(void *)(text - offsetof(struct job_url, text));
}

/* The referrer that the URLs admitted from a FETCH job's page share: its
 * URL, copied once (REFERRERS). BC_ERR_NOMEM is counted as an add refused
 * for want of memory, as add_common() would. */
static enum bc_status page_referrer(struct bc_frontier *f,
                                    const struct bc_frontier_job *job,
                                    enum bc_frontier_reason *reason,
                                    struct referrer **out)
{
    struct job_url *u = job_url_of(job->url);
    if (!u->as_referrer) {
        u->as_referrer = referrer_new(u->text, u->len);
        if (!u->as_referrer) {
            f->added++;
            f->reasons[BC_ADMIT_NOMEM]++;
            *reason = BC_ADMIT_NOMEM;
            return BC_ERR_NOMEM;
        }
        u->as_referrer->refs = 1; /* the job's */
    }
    *out = u->as_referrer;
    return BC_OK;
}

/* A job of which a page's links may be added: FETCH, its url valid. */
static bool link_job_ok(const struct bc_frontier *f,
                        const struct bc_frontier_job *job,
                        const enum bc_frontier_reason *reason)
{
    return f && job && reason && job->action == BC_FRONTIER_FETCH && job->url;
}

enum bc_status bc_frontier_add_link(struct bc_frontier *f,
                                    const struct bc_frontier_job *job,
                                    const char *href, size_t href_len,
                                    const char *base, size_t base_len,
                                    enum bc_frontier_reason *reason,
                                    enum bc_status *url_status)
{
    if (!link_job_ok(f, job, reason))
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {job->depth + 1, 0, 0, 0, NULL};
    if (f->store_status == BC_OK) {
        enum bc_status st = page_referrer(f, job, reason, &m.ref);
        if (st != BC_OK)
            return st;
    }
    return add_common(f, href, href_len, base, base_len, &m, false, reason,
                      url_status);
}

enum bc_status bc_frontier_add_redirect(struct bc_frontier *f,
                                        const struct bc_frontier_job *job,
                                        const char *location,
                                        size_t location_len, const char *base,
                                        size_t base_len,
                                        enum bc_frontier_reason *reason,
                                        enum bc_status *url_status)
{
    if (!link_job_ok(f, job, reason) || !base)
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {job->depth, job->redirects + 1, 0, 0, NULL};
    if (f->store_status == BC_OK) {
        enum bc_status st = page_referrer(f, job, reason, &m.ref);
        if (st != BC_OK)
            return st;
    }
    return add_common(f, location, location_len, base, base_len, &m, false,
                      reason, url_status);
}

/* The shared referrer for a referrer given as text (NULL: none): the
 * last one if it is the same, else a new one, kept as the last. Returns
 * false, counting the URL as refused for memory, when none could be
 * made. */
static bool text_referrer(struct bc_frontier *f, const char *referrer,
                          size_t referrer_len, struct entry_meta *m,
                          enum bc_frontier_reason *reason)
{
    if (!referrer || f->store_status != BC_OK)
        return true;
    struct referrer *r = f->last_referrer;
    if (!(r && r->len == referrer_len &&
          memcmp(r->text, referrer, referrer_len) == 0)) {
        r = referrer_new(referrer, referrer_len);
        if (!r) {
            f->added++;
            f->reasons[BC_ADMIT_NOMEM]++;
            *reason = BC_ADMIT_NOMEM;
            return false;
        }
        r->refs = 1; /* the frontier's, until another referrer comes */
        referrer_release(f->last_referrer);
        f->last_referrer = r;
    }
    m->ref = r;
    return true;
}

enum bc_status bc_frontier_add_with_referrer(
    struct bc_frontier *f, const char *href, size_t href_len, const char *base,
    size_t base_len, unsigned depth, const char *referrer, size_t referrer_len,
    enum bc_frontier_reason *reason, enum bc_status *url_status)
{
    if (!f || !reason || (!referrer && referrer_len > 0) ||
        referrer_len > f->cfg.max_url_len)
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {depth, 0, 0, 0, NULL};
    if (!text_referrer(f, referrer, referrer_len, &m, reason))
        return BC_ERR_NOMEM;
    return add_common(f, href, href_len, base, base_len, &m, false, reason,
                      url_status);
}

enum bc_status bc_frontier_add_routed(struct bc_frontier *f, const char *url,
                                      size_t len, unsigned depth,
                                      unsigned redirects, const char *referrer,
                                      size_t referrer_len,
                                      enum bc_frontier_reason *reason,
                                      enum bc_status *url_status)
{
    if (!f || !reason || (!referrer && referrer_len > 0) ||
        referrer_len > f->cfg.max_url_len)
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {depth, redirects, 0, 0, NULL};
    if (!text_referrer(f, referrer, referrer_len, &m, reason))
        return BC_ERR_NOMEM;
    return add_common(f, url, len, NULL, 0, &m, false, reason, url_status);
}

enum bc_status bc_frontier_add_seed(struct bc_frontier *f, const char *url,
                                    size_t len, enum bc_frontier_reason *reason,
                                    enum bc_status *url_status)
{
    struct entry_meta m = {0, 0, 0, 0, NULL};
    return add_common(f, url, len, NULL, 0, &m, true, reason, url_status);
}

/* ---- handing out work ------------------------------------------------ */

/* The delay between two requests to a host, before the response factor. */
static uint64_t base_delay(const struct bc_frontier *f, const struct host *h)
{
    uint64_t d = f->cfg.min_delay_ms;
    return h->crawl_delay_ms > d ? h->crawl_delay_ms : d;
}

static bool robots_needed(const struct bc_frontier *f, const struct host *h,
                          uint64_t now)
{
    if (!f->cfg.obey_robots || h->robots_state == ROBOTS_GIVEN_UP || h->down)
        return false;
    return h->robots_state == ROBOTS_UNKNOWN ||
           (h->robots_state != ROBOTS_FETCHING && now >= h->robots_expires);
}

/* A job URL of len bytes (text[len] for the NUL), on the list of jobs out;
 * NULL when out of memory. */
static char *job_url_new(struct bc_frontier *f, size_t len)
{
    struct job_url *u = malloc(sizeof(*u) + len + 1);
    if (!u)
        return NULL;
    u->from = u->as_referrer = NULL;
    u->len = len;
    u->prev = NULL;
    u->next = f->jobs_out;
    if (f->jobs_out)
        f->jobs_out->prev = u;
    f->jobs_out = u;
    return u->text;
}

/* The job is done: its URL moves to the retired list, freed by the next
 * bc_frontier_next(). */
static void job_url_retire(struct bc_frontier *f, char *text)
{
    struct job_url *u = job_url_of(text);
    if (u->prev)
        u->prev->next = u->next;
    else
        f->jobs_out = u->next;
    if (u->next)
        u->next->prev = u->prev;
    u->prev = NULL;
    u->next = f->retired;
    f->retired = u;
}

/* The robots.txt URL of a host (its origin's, or a redirect target), as
 * a job URL; NULL when out of memory. */
static char *robots_url_of(struct bc_frontier *f, const struct host *h)
{
    static const char suffix[] = "/robots.txt";
    size_t len = h->robots_url ? strlen(h->robots_url)
                               : h->origin_len + sizeof(suffix) - 1;
    char *s = job_url_new(f, len);
    if (!s)
        return NULL;
    if (h->robots_url) {
        memcpy(s, h->robots_url, len + 1);
    } else {
        memcpy(s, h->origin, h->origin_len);
        memcpy(s + h->origin_len, suffix, sizeof(suffix));
    }
    return s;
}

enum bc_status bc_frontier_next(struct bc_frontier *f, uint64_t now,
                                struct bc_frontier_job *job)
{
    if (!f || !job)
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    /* The URLs of the jobs done since the last call are the caller's no
     * longer. */
    job_urls_free(f->retired);
    f->retired = NULL;
    /* Built in j and copied out on success only: a call that fails
     * leaves *job and the frontier as they were. */
    struct bc_frontier_job j;
again:
    memset(&j, 0, sizeof(j));
    if (f->heap_len == 0) {
        j.action = f->in_flight ? BC_FRONTIER_WAIT : BC_FRONTIER_DONE;
        j.wait_until_ms = UINT64_MAX;
        *job = j;
        return BC_OK;
    }
    struct host *h = f->heap[0];
    if (h->next_ms > now) {
        j.action = BC_FRONTIER_WAIT;
        j.wait_until_ms = h->next_ms;
        *job = j;
        return BC_OK;
    }
    j.host = h;
    j.started_ms = now;
    if (robots_needed(f, h, now)) {
        char *url = robots_url_of(f, h);
        if (!url)
            return BC_ERR_NOMEM;
        h->robots_before = h->robots_state;
        h->robots_state = ROBOTS_FETCHING;
        h->in_flight++;
        f->in_flight++;
        f->robots_fetches++;
        host_schedule(f, h);
        j.action = BC_FRONTIER_FETCH_ROBOTS;
        j.url = j.owned = url;
        j.url_len = strlen(url);
        j.origin = h->origin;
        j.origin_len = h->origin_len;
        *job = j;
        return BC_OK;
    }
    if (h->sm_head) {
        enum bc_status st = sitemap_next(f, h, now, &j);
        if (st == BC_ERR_NOT_FOUND)
            goto again; /* dropped: robots.txt, or its host given up */
        if (st == BC_OK)
            *job = j;
        return st;
    }
    if (h->queued == h->spilled) {
        /* The window in memory is empty: the store pushes the next URLs
         * of the host's queue back (bc_frontier_refill()). */
        enum bc_status st = f->store.refill(f->store.ctx, f, h->origin,
                                            h->origin_len, 0, f->window);
        if (st == BC_OK && h->queued == h->spilled)
            st = BC_ERR_CORRUPT; /* the store lost URLs it was given */
        if (st != BC_OK) {
            f->store_status = st;
            return st;
        }
    }
    struct entry_meta m;
    size_t len;
    const char *head = queue_peek(f, h, &len);
    bool given_up = h->robots_state == ROBOTS_GIVEN_UP;
    if (given_up || h->down ||
        (f->cfg.obey_robots && !robots_allows(h, head, len))) {
        enum bc_frontier_reason why = given_up  ? BC_ADMIT_HOST_GIVEN_UP
                                      : h->down ? BC_ADMIT_HOST_DOWN
                                                : BC_ADMIT_ROBOTS;
        queue_pop(f, h, f->drop_buf, &m);
        referrer_release(m.ref);
        f->reasons[why]++;
        if (given_up)
            h->given_up_lost++;
        else if (h->down)
            h->down_lost++;
        host_schedule(f, h);
        if (f->store.queued) {
            enum bc_status st =
                f->store.left(f->store.ctx, h->origin, h->origin_len, m.id,
                              BC_FRONTIER_DROP, why);
            if (st == BC_OK && given_up)
                st = store_host(f, h, now, NULL, 0);
            if (st == BC_OK && why == BC_ADMIT_HOST_DOWN)
                st = store_circuit(f, h, now);
            if (st != BC_OK) {
                f->store_status = st;
                return st;
            }
        }
        j.action = BC_FRONTIER_DROP;
        j.reason = why;
        j.url = f->drop_buf;
        j.url_len = len;
        j.origin = h->origin;
        j.origin_len = h->origin_len;
        j.host = NULL;
        *job = j;
        return BC_OK;
    }
    /* Allocated before the URL leaves the queue: out of memory, it stays
     * there and nothing is lost. */
    char *url = job_url_new(f, len);
    if (!url)
        return BC_ERR_NOMEM;
    queue_pop(f, h, url, &m);
    job_url_of(url)->from = m.ref; /* the entry's reference, now the job's */
    h->in_flight++;
    f->in_flight++;
    f->handed_out++;
    if (f->store.queued) {
        enum bc_status st =
            f->store.left(f->store.ctx, h->origin, h->origin_len, m.id,
                          BC_FRONTIER_FETCH, BC_ADMIT_QUEUED);
        if (st != BC_OK) {
            f->store_status = st;
            return st;
        }
    }
    /* The first request after an open period is the probe. */
    if (h->circuit == CIRCUIT_OPEN)
        h->circuit = CIRCUIT_HALF_OPEN;
    /* With several transfers per host allowed, their starts are still
     * spaced by the delay. */
    h->next_ms = now + base_delay(f, h);
    host_schedule(f, h);
    j.action = BC_FRONTIER_FETCH;
    j.url = j.owned = url;
    j.url_len = len;
    j.depth = m.depth;
    j.redirects = m.redirects;
    j.retries = m.retries;
    j.id = m.id;
    j.referrer = m.ref ? m.ref->text : NULL;
    j.referrer_len = m.ref ? m.ref->len : 0;
    j.origin = h->origin;
    j.origin_len = h->origin_len;
    *job = j;
    return BC_OK;
}

/* ---- transient faults: retries and the circuit breaker --------------- */

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): a 64-bit state stepped
 * by a constant, then mixed; any seed is good. u in [0, 1) from its top
 * 53 bits. */
static double rng_unit(struct bc_frontier *f)
{
    uint64_t z = (f->rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * The wait before retry n + 1 of a URL retried n times so far, after a
 * transient fault answered o:
 *
 *     retry_delay_ms x 2^n x (1 + retry_jitter x (2u - 1)),  u in [0, 1)
 *
 * rounded to the millisecond, so within retry_delay_ms x 2^n x (1 +/-
 * retry_jitter); 2^n stops growing at n = 40. A 429 or 503 asks for
 * Retry-After (backoff_ms without one), capped at max_retry_after_ms: the
 * longer of the two.
 */
static uint64_t retry_delay(struct bc_frontier *f, unsigned n,
                            const struct bc_frontier_outcome *o)
{
    double d =
        (double)f->cfg.retry_delay_ms * (double)(1ull << (n < 40 ? n : 40));
    if (f->cfg.retry_jitter > 0.0)
        d *= 1.0 + f->cfg.retry_jitter * (2.0 * rng_unit(f) - 1.0);
    uint64_t delay = d >= 1e15 ? (uint64_t)1e15 : (uint64_t)(d + 0.5);
    if (o->http_status == 429 || o->http_status == 503) {
        uint64_t wait =
            o->retry_after_ms ? o->retry_after_ms : f->cfg.backoff_ms;
        if (wait > f->cfg.max_retry_after_ms)
            wait = f->cfg.max_retry_after_ms;
        if (wait > delay)
            delay = wait;
    }
    return delay;
}

/* Give the host up as down at now: its queue drains as DROP jobs at once
 * (no request to the host is involved). */
static void host_down(struct host *h, uint64_t now)
{
    h->down = true;
    h->circuit = CIRCUIT_CLOSED;
    h->open_until = 0;
    h->blocked_until = 0;
    h->next_ms = now;
}

/*
 * A transient fault of the host at now: one more in its run; the run's
 * host_failures-th opens the circuit for host_backoff_ms, and a failed
 * probe (half-open) opens it again for twice the last period, at most
 * host_backoff_max_ms:
 *
 *     open period k (k = 1, 2, ...) = min(host_backoff_ms x 2^(k-1),
 *                                         host_backoff_max_ms)
 *
 * A fault host_give_up_ms or more after the run began gives the host up.
 */
static void circuit_failure(struct bc_frontier *f, struct host *h, uint64_t now)
{
    if (h->failures == 0)
        h->streak_since = now;
    if (h->failures < UINT32_MAX)
        h->failures++;
    if (f->cfg.host_give_up_ms &&
        now - h->streak_since >= f->cfg.host_give_up_ms) {
        host_down(h, now);
        return;
    }
    if (h->circuit == CIRCUIT_HALF_OPEN ||
        (h->circuit == CIRCUIT_CLOSED && f->cfg.host_failures &&
         h->failures >= f->cfg.host_failures)) {
        uint64_t max = f->cfg.host_backoff_max_ms;
        uint64_t b = h->backoff == 0        ? f->cfg.host_backoff_ms
                     : h->backoff > max / 2 ? max
                                            : 2 * h->backoff;
        h->backoff = b < max ? b : max;
        h->circuit = CIRCUIT_OPEN;
        h->open_until = now + h->backoff;
    }
}

/* Any outcome that is not a transient fault: the run ends, the circuit
 * closes. Returns whether anything changed (for the store). */
static bool circuit_success(struct host *h)
{
    if (h->failures == 0 && h->circuit == CIRCUIT_CLOSED && h->backoff == 0)
        return false;
    h->failures = 0;
    h->circuit = CIRCUIT_CLOSED;
    h->backoff = 0;
    h->open_until = 0;
    return true;
}

/* End of any job of a host: slot freed, next contact no sooner than
 * until. */
static void release(struct bc_frontier *f, struct bc_frontier_job *job,
                    uint64_t until)
{
    struct host *h = job->host;
    h->in_flight--;
    f->in_flight--;
    if (until > h->next_ms)
        h->next_ms = until;
    /* job->url stays valid until the next bc_frontier_next(). */
    job_url_retire(f, job->owned);
    job->owned = NULL;
    job->host = NULL;
}

/* The delay before the next request to h after one that ended at now
 * with o (frontier.h: bc_frontier_done()); a 429 or 503 also blocks the
 * host until then. */
static uint64_t after_request(struct bc_frontier *f, struct host *h,
                              const struct bc_frontier_outcome *o, uint64_t now)
{
    uint64_t delay = base_delay(f, h);
    double by_response = f->cfg.response_factor * (double)o->response_ms;
    if (by_response > (double)delay)
        delay = by_response > 1e15 ? (uint64_t)1e15 : (uint64_t)by_response;
    if (o->http_status == 429 || o->http_status == 503) {
        uint64_t wait =
            o->retry_after_ms ? o->retry_after_ms : f->cfg.backoff_ms;
        if (wait > f->cfg.max_retry_after_ms)
            wait = f->cfg.max_retry_after_ms;
        if (wait > delay)
            delay = wait;
        h->blocked_until = now + delay;
    }
    return delay;
}

/*
 * Queue the URL of FETCH job (of host h) again at h's tail with retries
 * (it passed admission and the seen-test already): in memory or, with a
 * store, through its queued hook with requeue true (the store gives it a
 * new id). BC_OK, BC_ERR_NOMEM (counted under BC_ADMIT_NOMEM: the URL is
 * lost, the job is done) or the store's error (sticky).
 */
static enum bc_status requeue(struct bc_frontier *f, struct host *h,
                              const struct bc_frontier_job *job,
                              unsigned retries)
{
    struct entry_meta m = {job->depth, job->redirects, retries, job->id,
                           job_url_of(job->owned)->from};
    bool to_memory = in_memory_next(f, h);
    if (to_memory && !queue_reserve(f, h, job->url_len)) {
        f->reasons[BC_ADMIT_NOMEM]++;
        return BC_ERR_NOMEM;
    }
    if (f->store.queued) {
        struct bc_frontier_entry e = {
            job->url,  job->url_len, m.depth, m.redirects,
            m.retries, job->id,      NULL,    0};
        if (m.ref) {
            e.referrer = m.ref->text;
            e.referrer_len = m.ref->len;
        }
        enum bc_status st = f->store.queued(f->store.ctx, h->origin,
                                            h->origin_len, &e, true, &m.id);
        if (st != BC_OK) {
            f->store_status = st;
            return st;
        }
    }
    enqueue(f, h, job->url, job->url_len, &m, to_memory);
    return BC_OK;
}

enum bc_status bc_frontier_done(struct bc_frontier *f,
                                struct bc_frontier_job *job,
                                const struct bc_frontier_outcome *o,
                                uint64_t now)
{
    if (!f || !job || !o || job->action != BC_FRONTIER_FETCH || !job->host)
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->host;
    enum bc_status result = BC_OK;
    uint64_t until = now + after_request(f, h, o, now);
    bool changed = false;
    job->requeued = false;
    job->retry_at_ms = 0;
    if (o->fault == BC_FAULT_TRANSIENT) {
        circuit_failure(f, h, now);
        changed = true;
        if (h->down) {
            /* Final: lost with the host (a store keeps it, as the
             * caller's record of a transient fault). */
            f->reasons[BC_ADMIT_HOST_DOWN]++;
            h->down_lost++;
            until = now;
        } else if (job->retries < f->cfg.max_retries && job->url) {
            uint64_t at = now + retry_delay(f, job->retries, o);
            result = requeue(f, h, job, job->retries + 1);
            if (result == BC_OK) {
                f->retried++;
                job->requeued = true;
                job->retry_at_ms = at;
                /* The host waits for the retry (Heritrix's snooze). */
                if (at > h->blocked_until)
                    h->blocked_until = at;
                if (at > until)
                    until = at;
            }
        } else {
            f->retries_exhausted++;
            h->exhausted++;
        }
        if (h->circuit == CIRCUIT_OPEN && h->open_until > until)
            until = h->open_until;
    } else if (o->fault != BC_FAULT_LOCAL) {
        changed = circuit_success(h);
    }
    release(f, job, until);
    host_schedule(f, h);
    if (changed) {
        enum bc_status st = store_circuit(f, h, now);
        if (st != BC_OK)
            result = st;
    }
    return result;
}

enum bc_status bc_frontier_giveback(struct bc_frontier *f,
                                    struct bc_frontier_job *job, uint64_t now)
{
    if (!f || !job || !job->host || !job->owned ||
        (job->action != BC_FRONTIER_FETCH &&
         job->action != BC_FRONTIER_FETCH_ROBOTS &&
         job->action != BC_FRONTIER_FETCH_SITEMAP))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->host;
    enum bc_status result = BC_OK;
    switch (job->action) {
    case BC_FRONTIER_FETCH:
        result = requeue(f, h, job, job->retries);
        break;
    case BC_FRONTIER_FETCH_ROBOTS:
        /* Asked for again by the next next(): the state it had before it
         * was handed out (unknown, expired, or unreachable with a retry
         * due), and no failure counted. */
        h->robots_state = h->robots_before;
        break;
    case BC_FRONTIER_FETCH_SITEMAP:
        result = sitemap_giveback(f, h, job);
        break;
    case BC_FRONTIER_DROP:
    case BC_FRONTIER_WAIT:
    case BC_FRONTIER_DONE:
        break;
    }
    if (result == BC_OK)
        f->given_back++;
    /* A probe given back was no probe: the next request is. */
    if (h->circuit == CIRCUIT_HALF_OPEN)
        h->circuit = CIRCUIT_OPEN;
    /* Not a request to the host: the delay next() set for it (starts are
     * spaced by the delay) is taken back, unless a later job of the host
     * started since. */
    if (job->action != BC_FRONTIER_FETCH_ROBOTS &&
        h->next_ms == job->started_ms + base_delay(f, h) && h->next_ms > now)
        h->next_ms = now;
    release(f, job, now);
    host_schedule(f, h);
    return result;
}

enum bc_status bc_frontier_robots_done(struct bc_frontier *f,
                                       struct bc_frontier_job *job, int status,
                                       const void *body, size_t len,
                                       const char *location,
                                       size_t location_len, uint64_t now)
{
    if (!f || !job || job->action != BC_FRONTIER_FETCH_ROBOTS || !job->host ||
        (!body && len > 0) || (!location && location_len > 0))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->host;
    enum bc_status result = BC_OK;
    uint64_t until;
    bc_robots_free(h->robots);
    h->robots = NULL;
    h->crawl_delay_ms = 0;
    if (status >= 300 && status < 400 && location_len > 0 &&
        h->robots_redirects < MAX_ROBOTS_REDIRECTS) {
        /* Follow: resolve the target against the robots.txt URL. */
        struct bc_url base, target;
        char *bbuf = malloc(f->cfg.max_url_len + 1);
        char *tbuf = malloc(f->cfg.max_url_len + 1);
        enum bc_status st = bbuf && tbuf ? BC_OK : BC_ERR_NOMEM;
        if (st == BC_OK)
            st = bc_url_normalize(NULL, job->url, job->url_len,
                                  &f->cfg.url_policy, bbuf,
                                  f->cfg.max_url_len + 1, &base);
        if (st == BC_OK)
            st = bc_url_normalize(&base, location, location_len,
                                  &f->cfg.url_policy, tbuf,
                                  f->cfg.max_url_len + 1, &target);
        free(bbuf);
        if (st == BC_OK) {
            free(h->robots_url);
            h->robots_url = tbuf;
            h->robots_redirects++;
            h->robots_state = ROBOTS_UNKNOWN;
            release(f, job, now); /* the redirect target is not this host's
                                     politeness budget: no delay */
            host_schedule(f, h);
            return BC_OK;
        }
        free(tbuf);
        if (st == BC_ERR_NOMEM) {
            /* Fail closed: out of memory is no answer from the server,
             * so the host is unreachable, never "allow all". */
            result = BC_ERR_NOMEM;
            status = 0;
        } else {
            status = 404; /* an unusable redirect: unavailable */
        }
    }
    free(h->robots_url);
    h->robots_url = NULL;
    h->robots_redirects = 0;
    bool reachable = true;
    if (status >= 200 && status < 300) {
        result = bc_robots_parse(body, len, f->user_agent,
                                 strlen(f->user_agent), &h->robots);
        reachable = result == BC_OK;
    }
    /* 408 and 429 say "later", as a 5xx does: transient faults (DESIGN
     * 3.4), so unreachable and retried, never "unavailable, allow all"
     * (which would crawl a rate-limiting site with no rules at all;
     * Google also reads a 429 robots.txt as unreachable). No Retry-After
     * reaches this call: the doubling delay below is the wait. */
    if (status == 408 || status == 429)
        reachable = false;
    if (!reachable || status < 200 || status >= 500) {
        f->robots_unreachable++;
        if (h->robots_failures >= f->cfg.robots_retries) {
            /* Every retry failed: give the host up. Its queue drains as
             * DROP jobs at once (no request to the host is involved). */
            h->robots_state = ROBOTS_GIVEN_UP;
            h->robots_expires = UINT64_MAX;
            h->blocked_until = 0;
            release(f, job, now);
            host_schedule(f, h);
            enum bc_status st = store_host(f, h, now, NULL, 0);
            return st != BC_OK ? st : result;
        }
        /* Unreachable: nothing allowed; ask again after robots_retry_ms x
         * 2^(failures so far). */
        unsigned shift = h->robots_failures < 32 ? h->robots_failures : 32;
        uint64_t wait = f->cfg.robots_retry_ms;
        wait =
            wait > (UINT64_MAX >> 2) >> shift ? UINT64_MAX >> 2 : wait << shift;
        h->robots_failures++;
        h->robots_state = ROBOTS_UNREACHABLE;
        h->robots_expires = now + wait;
        h->blocked_until = h->robots_expires;
    } else if (status >= 300) {
        /* 4xx but 408 and 429, or redirects beyond the limit:
         * unavailable, allow all. */
        h->robots_failures = 0;
        h->robots_state = ROBOTS_ALLOW_ALL;
        h->robots_expires = now + f->cfg.robots_ttl_ms;
        f->robots_unavailable++;
    } else {
        uint64_t cd;
        h->robots_failures = 0;
        h->robots_state = ROBOTS_PARSED;
        h->robots_expires = now + f->cfg.robots_ttl_ms;
        if (bc_robots_crawl_delay(h->robots, &cd))
            h->crawl_delay_ms =
                cd < f->cfg.max_crawl_delay_ms ? cd : f->cfg.max_crawl_delay_ms;
        f->robots_parsed++;
    }
    /* The robots.txt request counts as a request to the host: the next
     * one waits the delay, which now includes the Crawl-delay. */
    until = now + base_delay(f, h);
    if (h->robots_state == ROBOTS_UNREACHABLE && h->robots_expires > until)
        until = h->robots_expires;
    release(f, job, until);
    if (f->cfg.sitemaps && (h->robots_state == ROBOTS_PARSED ||
                            h->robots_state == ROBOTS_ALLOW_ALL))
        sitemaps_of_robots(f, h);
    host_schedule(f, h);
    if (h->robots_state == ROBOTS_PARSED && len > BC_ROBOTS_MAX_BYTES)
        len = BC_ROBOTS_MAX_BYTES; /* what the parser read */
    enum bc_status st = store_host(f, h, now, body, len);
    return st != BC_OK ? st : result;
}

/* ---- sitemaps ---------------------------------------------------------- */

/* Queue a sitemap (frontier.h: SITEMAPS): href resolved against base
 * (NULL: absolute), at level; scope: the prefix its pages need, or NULL
 * for the sitemap's own directory; origin: the origin it must be on, or
 * NULL. Counted under its reason. A store error is sticky (and reported
 * as NOMEM here: the callers return the store's status). */
static enum bc_frontier_sitemap_reason
sitemap_queue(struct bc_frontier *f, const char *href, size_t len,
              const char *base, size_t base_len, unsigned level, bool named,
              const char *scope, size_t scope_len, const char *origin,
              size_t origin_len)
{
    enum bc_frontier_sitemap_reason r = BC_FRONTIER_SITEMAP_BAD_URL;
    struct bc_url b, u;
    char obuf[300];
    size_t olen;
    size_t cap = f->cfg.max_url_len + 1;
    if (level > BC_FRONTIER_MAX_SITEMAP_LEVEL) {
        r = BC_FRONTIER_SITEMAP_TOO_DEEP;
        goto out;
    }
    if (base && bc_url_normalize(NULL, base, base_len, &f->cfg.url_policy,
                                 f->sm_base_buf, cap, &b) != BC_OK)
        goto out;
    if (bc_url_normalize(base ? &b : NULL, href, len, &f->cfg.url_policy,
                         f->sm_buf, cap, &u) != BC_OK)
        goto out;
    const char *o = bc_url_origin(&u, obuf, sizeof(obuf), &olen);
    if (!o)
        goto out;
    r = BC_FRONTIER_SITEMAP_OUT_OF_SCOPE;
    if ((origin && (olen != origin_len || memcmp(o, origin, olen) != 0)) ||
        !in_scope(f, &u))
        goto out;
    struct host *h = host_find(f, o, olen);
    r = BC_FRONTIER_SITEMAP_HOST_GIVEN_UP;
    if (h && h->robots_state == ROBOTS_GIVEN_UP)
        goto out;
    r = BC_FRONTIER_SITEMAP_ROBOTS;
    if (h && f->cfg.obey_robots && !robots_allows(h, u.href, u.len))
        goto out;
    r = BC_FRONTIER_SITEMAP_DUPLICATE;
    if (name_has(f->sitemap_seen, u.href, u.len))
        goto out;
    r = BC_FRONTIER_SITEMAP_NOMEM;
    if (!h && !(h = host_get(f, o, olen)))
        goto out;
    if (h->sm_count >= f->cfg.sitemaps_per_host) {
        r = BC_FRONTIER_SITEMAP_HOST_CAP;
        goto out;
    }
    if (!scope) {
        /* The sitemap's directory: up to the last '/' of its path. */
        size_t end = u.path.off + u.path.len;
        while (end > u.path.off && u.href[end - 1] != '/')
            end--;
        scope = u.href;
        scope_len = end;
    }
    struct sitemap_item *it = malloc(sizeof(*it) + u.len + scope_len + 2);
    if (!it)
        goto out;
    it->next = NULL;
    it->url_len = u.len;
    it->scope_len = scope_len;
    it->level = level;
    it->retries = 0;
    it->named = named;
    memcpy(it->text, u.href, u.len + 1);
    memcpy(it->text + u.len + 1, scope, scope_len);
    it->text[u.len + 1 + scope_len] = '\0';
    if (!name_add(&f->sitemap_seen, u.href, u.len)) {
        free(it);
        goto out;
    }
    sitemap_seen_test(f, &u);
    if (f->store.sitemap) {
        struct bc_frontier_sitemap sm = {it->text,  u.len, it->text + u.len + 1,
                                         scope_len, level, named,
                                         0,         false};
        enum bc_status st = f->store.sitemap(f->store.ctx, &sm, false);
        if (st != BC_OK) {
            f->store_status = st;
            free(it);
            goto out;
        }
    }
    if (h->sm_tail)
        h->sm_tail->next = it;
    else
        h->sm_head = it;
    h->sm_tail = it;
    h->sm_count++;
    host_schedule(f, h);
    r = BC_FRONTIER_SITEMAP_QUEUED;
out:
    f->sitemaps[r]++;
    return r;
}

/* A sitemap's URL enters the seen-test, so that a link to it (sitemaps
 * are often linked from the pages) does not fetch it again as a page. One
 * linked before it was queued stays a page too. Out of memory here costs
 * at most that second request. */
static void sitemap_seen_test(struct bc_frontier *f, const struct bc_url *u)
{
    size_t key_len;
    enum bc_seen_verdict v;
    if (bc_url_seen_key(u, &f->cfg.url_policy, f->key_buf,
                        f->cfg.max_url_len + 1, &key_len) == BC_OK &&
        bc_seen_test_and_add(f->seen, f->key_buf, key_len, &v) == BC_OK &&
        v == BC_SEEN_NEW)
        f->sitemap_keys++;
}

/* origin/sitemap.xml: the sitemap a host has when nothing names one. */
static void sitemap_default(struct bc_frontier *f, struct host *h)
{
    static const char path[] = "/sitemap.xml";
    char buf[300 + sizeof(path)];
    if (h->origin_len >= 300)
        return;
    memcpy(buf, h->origin, h->origin_len);
    memcpy(buf + h->origin_len, path, sizeof(path));
    (void)sitemap_queue(f, buf, h->origin_len + sizeof(path) - 1, NULL, 0, 0,
                        false, NULL, 0, NULL, 0);
}

/* A host's robots.txt outcome is known: its Sitemap: URLs (resolved
 * against the robots.txt URL), whose pages may be anywhere on the host,
 * or /sitemap.xml when it names none (or was unavailable). */
static void sitemaps_of_robots(struct bc_frontier *f, struct host *h)
{
    size_t n = h->robots ? bc_robots_sitemap_count(h->robots) : 0;
    if (n == 0) {
        sitemap_default(f, h);
        return;
    }
    char scope[301];
    char base[300 + sizeof("/robots.txt")];
    if (h->origin_len >= 300)
        return;
    memcpy(scope, h->origin, h->origin_len);
    scope[h->origin_len] = '/';
    memcpy(base, h->origin, h->origin_len);
    memcpy(base + h->origin_len, "/robots.txt", sizeof("/robots.txt"));
    for (size_t i = 0; i < n && f->store_status == BC_OK; i++) {
        size_t len;
        const char *url = bc_robots_sitemap(h->robots, i, &len);
        (void)sitemap_queue(f, url, len, base, strlen(base), 0, true, scope,
                            h->origin_len + 1, NULL, 0);
    }
}

/* Hand out h's next sitemap as *j (BC_OK); or drop it (robots.txt, the
 * host given up: BC_ERR_NOT_FOUND, the caller looks again); BC_ERR_NOMEM
 * (nothing changed) or a store error. */
static enum bc_status sitemap_next(struct bc_frontier *f, struct host *h,
                                   uint64_t now, struct bc_frontier_job *j)
{
    struct sitemap_item *it = h->sm_head;
    bool given_up = h->robots_state == ROBOTS_GIVEN_UP || h->down;
    if (given_up ||
        (f->cfg.obey_robots && !robots_allows(h, it->text, it->url_len))) {
        h->sm_head = it->next;
        if (!h->sm_head)
            h->sm_tail = NULL;
        /* Dropped with its host down: given up to transient faults, as
         * the host's URLs are (kept by a store for a later retry). */
        f->sitemaps[h->down    ? BC_FRONTIER_SITEMAP_TRANSIENT
                    : given_up ? BC_FRONTIER_SITEMAP_HOST_GIVEN_UP
                               : BC_FRONTIER_SITEMAP_ROBOTS]++;
        host_schedule(f, h);
        enum bc_status st = BC_ERR_NOT_FOUND;
        if (f->store.sitemap) {
            struct bc_frontier_sitemap sm = {
                it->text,      it->url_len, it->text + it->url_len + 1,
                it->scope_len, it->level,   it->named,
                it->retries,   h->down};
            enum bc_status sst = f->store.sitemap(f->store.ctx, &sm, true);
            if (sst != BC_OK)
                st = f->store_status = sst;
        }
        free(it);
        return st;
    }
    char *url = job_url_new(f, it->url_len + 1 + it->scope_len);
    if (!url)
        return BC_ERR_NOMEM;
    memcpy(url, it->text, it->url_len + 1 + it->scope_len + 1);
    h->sm_head = it->next;
    if (!h->sm_head)
        h->sm_tail = NULL;
    h->in_flight++;
    f->in_flight++;
    f->sitemap_fetches++;
    if (h->circuit == CIRCUIT_OPEN)
        h->circuit = CIRCUIT_HALF_OPEN; /* the probe */
    h->next_ms = now + base_delay(f, h);
    host_schedule(f, h);
    j->action = BC_FRONTIER_FETCH_SITEMAP;
    j->url = j->owned = url;
    j->url_len = it->url_len;
    j->scope = url + it->url_len + 1;
    j->scope_len = it->scope_len;
    j->level = it->level;
    j->named = it->named;
    j->retries = it->retries;
    free(it);
    return BC_OK;
}

/* The sitemap of job (handed out by sitemap_next()) as a new item with
 * retries, or NULL out of memory (counted under its NOMEM reason). */
static struct sitemap_item *sitemap_item_of(struct bc_frontier *f,
                                            const struct bc_frontier_job *job,
                                            unsigned retries)
{
    struct sitemap_item *it =
        malloc(sizeof(*it) + job->url_len + job->scope_len + 2);
    if (!it) {
        f->sitemaps[BC_FRONTIER_SITEMAP_NOMEM]++;
        return NULL;
    }
    it->next = NULL;
    it->url_len = job->url_len;
    it->scope_len = job->scope_len;
    it->level = job->level;
    it->retries = retries;
    it->named = job->named;
    memcpy(it->text, job->url, job->url_len);
    it->text[job->url_len] = '\0';
    if (job->scope_len)
        memcpy(it->text + job->url_len + 1, job->scope, job->scope_len);
    it->text[job->url_len + 1 + job->scope_len] = '\0';
    return it;
}

/* Put the sitemap of job (handed out by sitemap_next()) back at the head
 * of h's sitemaps, as if it had not been handed out. BC_OK or
 * BC_ERR_NOMEM (the sitemap is lost: counted under its NOMEM reason). */
static enum bc_status sitemap_giveback(struct bc_frontier *f, struct host *h,
                                       const struct bc_frontier_job *job)
{
    struct sitemap_item *it = sitemap_item_of(f, job, job->retries);
    if (!it)
        return BC_ERR_NOMEM;
    it->next = h->sm_head;
    h->sm_head = it;
    if (!h->sm_tail)
        h->sm_tail = it;
    return BC_OK;
}

static bool is_sitemap_job(const struct bc_frontier_job *job)
{
    return job && job->action == BC_FRONTIER_FETCH_SITEMAP && job->host &&
           job->scope && job->url;
}

enum bc_status bc_frontier_add_sitemap(struct bc_frontier *f,
                                       const struct bc_frontier_job *job,
                                       const char *href, size_t href_len,
                                       enum bc_frontier_sitemap_reason *reason)
{
    if (!f || !is_sitemap_job(job) || !reason || (!href && href_len > 0))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    const struct host *h = job->host;
    /* Below a named index, its scope holds; else each its own. */
    *reason = sitemap_queue(
        f, href ? href : "", href_len, job->url, job->url_len, job->level + 1,
        job->named, job->named ? job->scope : NULL,
        job->named ? job->scope_len : 0, h->origin, h->origin_len);
    if (f->store_status != BC_OK)
        return f->store_status;
    return *reason == BC_FRONTIER_SITEMAP_NOMEM ? BC_ERR_NOMEM : BC_OK;
}

enum bc_status bc_frontier_add_from_sitemap(struct bc_frontier *f,
                                            const struct bc_frontier_job *job,
                                            const char *href, size_t href_len,
                                            enum bc_frontier_reason *reason,
                                            enum bc_status *url_status)
{
    if (!is_sitemap_job(job))
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {0, 0, 0, 0, NULL};
    /* The sitemap is the referrer of the pages it lists. */
    if (f && reason && !text_referrer(f, job->url, job->url_len, &m, reason))
        return BC_ERR_NOMEM;
    if (f) {
        f->admit_prefix = job->scope;
        f->admit_prefix_len = job->scope_len;
    }
    enum bc_status st = add_common(f, href, href_len, job->url, job->url_len,
                                   &m, false, reason, url_status);
    if (f)
        f->admit_prefix = NULL;
    return st;
}

enum bc_status bc_frontier_sitemap_done(struct bc_frontier *f,
                                        struct bc_frontier_job *job,
                                        const struct bc_frontier_outcome *o,
                                        uint64_t now)
{
    if (!f || !is_sitemap_job(job) || !o)
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->host;
    uint64_t until = now + after_request(f, h, o, now);
    enum bc_status st = BC_OK;
    /* A sitemap is a request to the host: its fault counts in the host's
     * run, and it is retried as a page is (the pages only it lists are
     * lost otherwise). */
    bool changed = false, given_up = false;
    struct sitemap_item *again = NULL;
    uint64_t at = 0;
    job->requeued = false;
    job->retry_at_ms = 0;
    if (o->fault == BC_FAULT_TRANSIENT) {
        circuit_failure(f, h, now);
        changed = true;
        if (h->down) {
            given_up = true;
            until = now;
        } else if (job->retries < f->cfg.max_retries) {
            at = now + retry_delay(f, job->retries, o);
            again = sitemap_item_of(f, job, job->retries + 1);
            if (again) {
                /* The host waits for the retry (Heritrix's snooze). */
                if (at > h->blocked_until)
                    h->blocked_until = at;
                if (at > until)
                    until = at;
            } else {
                st = BC_ERR_NOMEM;
            }
        } else {
            given_up = true;
        }
        if (given_up)
            f->sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT]++;
        if (h->circuit == CIRCUIT_OPEN && h->open_until > until)
            until = h->open_until;
    } else if (o->fault != BC_FAULT_LOCAL) {
        changed = circuit_success(h);
    }
    if (changed) {
        enum bc_status cst = store_circuit(f, h, now);
        if (cst != BC_OK)
            st = cst;
    }
    if (f->store_status == BC_OK && f->store.sitemap) {
        struct bc_frontier_sitemap sm = {job->url,
                                         job->url_len,
                                         job->scope,
                                         job->scope_len,
                                         job->level,
                                         job->named,
                                         again ? again->retries : job->retries,
                                         given_up};
        enum bc_status sst = f->store.sitemap(f->store.ctx, &sm, !again);
        if (sst != BC_OK) {
            f->store_status = sst;
            st = sst;
        }
    }
    if (again && f->store_status == BC_OK) {
        if (h->sm_tail)
            h->sm_tail->next = again;
        else
            h->sm_head = again;
        h->sm_tail = again;
        job->requeued = true;
        job->retry_at_ms = at;
    } else {
        free(again);
    }
    release(f, job, until);
    host_schedule(f, h);
    return st;
}

enum bc_status bc_frontier_restore_sitemap(struct bc_frontier *f,
                                           const struct bc_frontier_sitemap *sm,
                                           bool done)
{
    if (!f || !sm || (!sm->url && sm->url_len) ||
        (!sm->scope && sm->scope_len) ||
        sm->level > BC_FRONTIER_MAX_SITEMAP_LEVEL)
        return BC_ERR_INVALID_ARG;
    struct bc_url u;
    char obuf[300];
    size_t olen;
    enum bc_status st = bc_url_normalize(NULL, sm->url ? sm->url : "",
                                         sm->url_len, &f->cfg.url_policy,
                                         f->sm_buf, f->cfg.max_url_len + 1, &u);
    if (st != BC_OK)
        return st;
    const char *o = bc_url_origin(&u, obuf, sizeof(obuf), &olen);
    if (!o)
        return BC_ERR_URL_HOST;
    if (name_has(f->sitemap_seen, u.href, u.len))
        return BC_OK;
    if (!name_add(&f->sitemap_seen, u.href, u.len))
        return BC_ERR_NOMEM;
    sitemap_seen_test(f, &u);
    struct host *h = host_get(f, o, olen);
    if (!h)
        return BC_ERR_NOMEM;
    h->sm_count++;
    if (done)
        return BC_OK;
    struct sitemap_item *it = malloc(sizeof(*it) + u.len + sm->scope_len + 2);
    if (!it)
        return BC_ERR_NOMEM;
    it->next = NULL;
    it->url_len = u.len;
    it->scope_len = sm->scope_len;
    it->level = sm->level;
    it->retries = sm->retries;
    it->named = sm->named;
    memcpy(it->text, u.href, u.len + 1);
    if (sm->scope_len)
        memcpy(it->text + u.len + 1, sm->scope, sm->scope_len);
    it->text[u.len + 1 + sm->scope_len] = '\0';
    if (h->sm_tail)
        h->sm_tail->next = it;
    else
        h->sm_head = it;
    h->sm_tail = it;
    host_schedule(f, h);
    return BC_OK;
}

void bc_frontier_stats(const struct bc_frontier *f, uint64_t now,
                       struct bc_frontier_stats *out)
{
    struct bc_frontier_stats s;
    memset(&s, 0, sizeof(s));
    s.queued = f->queued;
    s.in_flight = f->in_flight;
    s.queue_bytes = f->queue_bytes;
    s.added = f->added;
    s.admitted = f->admitted;
    s.handed_out = f->handed_out;
    s.retried = f->retried;
    s.given_back = f->given_back;
    s.retries_exhausted = f->retries_exhausted;
    s.robots_fetches = f->robots_fetches;
    s.robots_parsed = f->robots_parsed;
    s.robots_unavailable = f->robots_unavailable;
    s.robots_unreachable = f->robots_unreachable;
    memcpy(s.reasons, f->reasons, sizeof(s.reasons));
    s.sitemap_fetches = f->sitemap_fetches;
    s.sitemap_keys = f->sitemap_keys;
    memcpy(s.sitemaps, f->sitemaps, sizeof(s.sitemaps));
    const struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        s.hosts++;
        if (h->robots_state == ROBOTS_GIVEN_UP)
            s.hosts_given_up++;
        if (h->down)
            s.hosts_down++;
        else if (h->circuit != CIRCUIT_CLOSED)
            s.hosts_open++;
        if (h->queued == 0)
            continue;
        if (f->cfg.obey_robots && (h->robots_state == ROBOTS_UNKNOWN ||
                                   h->robots_state == ROBOTS_FETCHING ||
                                   h->robots_state == ROBOTS_UNREACHABLE))
            s.hosts_robots++;
        else if (h->blocked_until > now)
            s.hosts_blocked++;
        else if (h->heap_pos != NOT_IN_HEAP && h->next_ms <= now)
            s.hosts_ready++;
        else
            s.hosts_waiting++;
    }
    bc_seen_stats(f->seen, &s.seen);
    *out = s;
}

size_t bc_frontier_given_up_hosts(const struct bc_frontier *f,
                                  void (*fn)(void *ctx, const char *origin,
                                             size_t origin_len, uint64_t lost),
                                  void *ctx)
{
    size_t n = 0;
    if (!f)
        return 0;
    const struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        if (h->robots_state != ROBOTS_GIVEN_UP)
            continue;
        n++;
        if (fn)
            fn(ctx, h->origin, h->origin_len, h->given_up_lost);
    }
    return n;
}

size_t bc_frontier_hosts(const struct bc_frontier *f,
                         void (*fn)(void *ctx,
                                    const struct bc_frontier_host_info *info),
                         void *ctx)
{
    if (!f)
        return 0;
    size_t n = 0;
    const struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        n++;
        if (!fn)
            continue;
        struct bc_frontier_host_info info;
        memset(&info, 0, sizeof(info));
        info.origin = h->origin;
        info.origin_len = h->origin_len;
        info.robots = robots_public(h->robots_state);
        info.robots_fetching = h->robots_state == ROBOTS_FETCHING;
        info.queued = h->queued;
        info.in_flight = h->in_flight;
        info.admitted = h->admitted;
        info.given_up = h->robots_state == ROBOTS_GIVEN_UP;
        info.lost = h->given_up_lost;
        info.circuit = (enum bc_frontier_circuit)h->circuit;
        info.failures = h->failures;
        info.down = h->down;
        info.down_lost = h->down_lost;
        info.exhausted = h->exhausted;
        info.crawl_delay_ms = h->crawl_delay_ms;
        info.delay_ms = base_delay(f, h);
        fn(ctx, &info);
    }
    return n;
}

/* ---- restoring a frontier from its store ------------------------------ */

enum bc_status
bc_frontier_create_with_seen(const struct bc_frontier_config *config,
                             struct bc_seen *seen, struct bc_frontier **out)
{
    if (!seen)
        return BC_ERR_INVALID_ARG;
    struct bc_frontier *f;
    enum bc_status st = bc_frontier_create(config, &f);
    if (st != BC_OK)
        return st;
    bc_seen_free(f->seen);
    f->seen = seen;
    *out = f;
    return BC_OK;
}

enum bc_status bc_frontier_refill(struct bc_frontier *f, const char *origin,
                                  size_t origin_len,
                                  const struct bc_frontier_entry *e)
{
    if (!f || !origin || !e || (!e->url && e->url_len > 0) ||
        (!e->referrer && e->referrer_len > 0) ||
        e->referrer_len > f->cfg.max_url_len || !f->store.queued)
        return BC_ERR_INVALID_ARG;
    struct host *h = host_find(f, origin, origin_len);
    if (!h || h->spilled == 0 || e->url_len > f->cfg.max_url_len ||
        e->depth > 65535 || e->redirects > 255 || e->retries > 255)
        return BC_ERR_INVALID_ARG;
    if (!queue_reserve(f, h, e->url_len))
        return BC_ERR_NOMEM;
    struct entry_meta m = {e->depth, e->redirects, e->retries, e->id, NULL};
    if (e->referrer && !(m.ref = referrer_new(e->referrer, e->referrer_len)))
        return BC_ERR_NOMEM;
    h->spilled--;
    h->queued--;
    f->queued--;
    queue_push(f, h, e->url, e->url_len, &m);
    return BC_OK;
}

enum bc_status bc_frontier_restore_host(struct bc_frontier *f,
                                        const struct bc_frontier_host_state *s,
                                        uint64_t now_ms)
{
    if (!f || !s || !s->origin || (!s->robots_body && s->robots_body_len) ||
        (s->queued > 0 && !f->store.queued) ||
        s->robots > BC_FRONTIER_ROBOTS_GIVEN_UP)
        return BC_ERR_INVALID_ARG;
    struct host *h = host_get(f, s->origin, s->origin_len);
    if (!h)
        return BC_ERR_NOMEM;
    if (h->queued > 0 || h->in_flight > 0)
        return BC_ERR_INVALID_ARG; /* restored twice, or after work began */
    struct bc_robots *rules = NULL;
    if (s->robots == BC_FRONTIER_ROBOTS_PARSED) {
        enum bc_status st =
            bc_robots_parse(s->robots_body, s->robots_body_len, f->user_agent,
                            strlen(f->user_agent), &rules);
        if (st != BC_OK)
            return st;
    }
    uint64_t expires = s->robots_ttl_ms == UINT64_MAX ? UINT64_MAX
                       : s->robots_ttl_ms > UINT64_MAX - now_ms
                           ? UINT64_MAX
                           : now_ms + s->robots_ttl_ms;
    bc_robots_free(h->robots);
    h->robots = rules;
    h->crawl_delay_ms = 0;
    h->blocked_until = 0;
    h->robots_expires = expires;
    h->robots_failures = s->robots_failures;
    h->given_up_lost = s->given_up_lost;
    h->admitted = s->admitted;
    switch (s->robots) {
    case BC_FRONTIER_ROBOTS_PARSED: {
        uint64_t cd;
        h->robots_state = ROBOTS_PARSED;
        if (bc_robots_crawl_delay(rules, &cd))
            h->crawl_delay_ms =
                cd < f->cfg.max_crawl_delay_ms ? cd : f->cfg.max_crawl_delay_ms;
        break;
    }
    case BC_FRONTIER_ROBOTS_ALLOW_ALL:
        h->robots_state = ROBOTS_ALLOW_ALL;
        break;
    case BC_FRONTIER_ROBOTS_UNREACHABLE:
        h->robots_state = ROBOTS_UNREACHABLE;
        h->blocked_until = expires;
        h->next_ms = expires;
        break;
    case BC_FRONTIER_ROBOTS_GIVEN_UP:
        h->robots_state = ROBOTS_GIVEN_UP;
        h->robots_expires = UINT64_MAX;
        break;
    case BC_FRONTIER_ROBOTS_UNKNOWN:
        h->robots_state = ROBOTS_UNKNOWN;
        break;
    }
    h->queued = h->spilled = s->queued;
    f->queued += s->queued;
    host_schedule(f, h);
    return BC_OK;
}

enum bc_status bc_frontier_restore_circuit(
    struct bc_frontier *f, const char *origin, size_t origin_len,
    const struct bc_frontier_circuit_state *c, uint64_t now)
{
    if (!f || !origin || !c || c->circuit > BC_FRONTIER_CIRCUIT_HALF_OPEN)
        return BC_ERR_INVALID_ARG;
    struct host *h = host_get(f, origin, origin_len);
    if (!h)
        return BC_ERR_NOMEM;
    if (h->in_flight > 0)
        return BC_ERR_INVALID_ARG;
    h->failures = c->failures;
    h->streak_since = now > c->failing_ms ? now - c->failing_ms : 0;
    h->backoff = c->backoff_ms;
    h->down_lost = c->down_lost;
    h->exhausted = c->exhausted;
    h->circuit = CIRCUIT_CLOSED;
    h->open_until = 0;
    if (c->down) {
        host_down(h, now);
    } else if (c->circuit != BC_FRONTIER_CIRCUIT_CLOSED) {
        /* Half-open: the probe was lost with the process; open, with the
         * time it had left (none for a probe). */
        h->circuit = CIRCUIT_OPEN;
        h->open_until =
            now + (c->circuit == BC_FRONTIER_CIRCUIT_OPEN ? c->open_ms : 0);
        if (h->open_until > h->next_ms)
            h->next_ms = h->open_until;
    }
    if (!c->down && c->retry_ms) {
        /* A retry's wait (or a Retry-After) outlives the process: the
         * host is not contacted before it ends. */
        uint64_t until = now + c->retry_ms;
        if (until > h->blocked_until)
            h->blocked_until = until;
        if (until > h->next_ms)
            h->next_ms = until;
    }
    host_schedule(f, h);
    return BC_OK;
}

/* Normalize a stored absolute URL into f->url_buf (restore calls). */
static enum bc_status normalize_stored(struct bc_frontier *f, const char *url,
                                       size_t len, struct bc_url *u)
{
    f->last_len = 0;
    return bc_url_normalize(NULL, url ? url : "", len, &f->cfg.url_policy,
                            f->url_buf, f->cfg.max_url_len + 1, u);
}

enum bc_status bc_frontier_restore_scope(struct bc_frontier *f, const char *url,
                                         size_t len)
{
    if (!f || (!url && len > 0))
        return BC_ERR_INVALID_ARG;
    struct bc_url u;
    enum bc_status st = normalize_stored(f, url, len, &u);
    if (st != BC_OK)
        return st;
    return scope_add(f, &u) ? BC_OK : BC_ERR_NOMEM;
}

enum bc_status bc_frontier_restore_seen(struct bc_frontier *f, const char *url,
                                        size_t len)
{
    if (!f || (!url && len > 0))
        return BC_ERR_INVALID_ARG;
    struct bc_url u;
    enum bc_status st = normalize_stored(f, url, len, &u);
    if (st != BC_OK)
        return st;
    size_t key_len;
    st = bc_url_seen_key(&u, &f->cfg.url_policy, f->key_buf,
                         f->cfg.max_url_len + 1, &key_len);
    if (st != BC_OK)
        return st;
    enum bc_seen_verdict v;
    st = bc_seen_test_and_add(f->seen, f->key_buf, key_len, &v);
    return st == BC_ERR_NOMEM ? BC_OK : st; /* NOMEM: the filter has it */
}

void bc_frontier_restore_counters(struct bc_frontier *f,
                                  const struct bc_frontier_stats *s)
{
    if (!f || !s)
        return;
    f->sitemap_fetches = s->sitemap_fetches;
    f->sitemap_keys = s->sitemap_keys;
    memcpy(f->sitemaps, s->sitemaps, sizeof(f->sitemaps));
    f->added = s->added;
    f->admitted = s->admitted;
    f->handed_out = s->handed_out;
    f->retried = s->retried;
    f->given_back = s->given_back;
    f->retries_exhausted = s->retries_exhausted;
    f->robots_fetches = s->robots_fetches;
    f->robots_parsed = s->robots_parsed;
    f->robots_unavailable = s->robots_unavailable;
    f->robots_unreachable = s->robots_unreachable;
    memcpy(f->reasons, s->reasons, sizeof(f->reasons));
}

void bc_frontier_counters(const struct bc_frontier *f,
                          struct bc_frontier_stats *out)
{
    if (!f || !out)
        return;
    memset(out, 0, sizeof(*out));
    out->sitemap_fetches = f->sitemap_fetches;
    out->sitemap_keys = f->sitemap_keys;
    memcpy(out->sitemaps, f->sitemaps, sizeof(out->sitemaps));
    out->added = f->added;
    out->admitted = f->admitted;
    out->handed_out = f->handed_out;
    out->retried = f->retried;
    out->given_back = f->given_back;
    out->retries_exhausted = f->retries_exhausted;
    out->robots_fetches = f->robots_fetches;
    out->robots_parsed = f->robots_parsed;
    out->robots_unavailable = f->robots_unavailable;
    out->robots_unreachable = f->robots_unreachable;
    memcpy(out->reasons, f->reasons, sizeof(out->reasons));
}
