/*
 * frontier_int.h - what the parts of the frontier share: the layouts of
 * the frontier, its hosts and their queue entries, and the helpers one
 * part calls in another. Private to frontier/ (never installed).
 *
 * THE PARTS (each file's top comment teaches its job):
 *
 *   frontier.c          hand-out and politeness: the host queues, the
 *                       heap of hosts by next contact time, next(),
 *                       done(), giveback(), retries and the circuit
 *                       breaker, the stats calls
 *   frontier_counters.c the table of the frontier's counters
 *   frontier_admit.c    admission: normalization, scope (libpsl),
 *                       include/exclude, limits, traps, the partition,
 *                       the seen-test; the add calls
 *   frontier_robots.c   robots.txt per host: its state machine
 *   frontier_sitemap.c  sitemap jobs: their per-host FIFO and scope
 *   frontier_store.c    persistence: the store hooks and the restore
 *                       calls (bloomcrawl/frontier_store.h)
 *
 * A helper one file defines and another calls is named bc_fr_* (the
 * project's prefix: the library links beside others); a small one that
 * the hot paths call in several files is static inline below. Everything
 * else is static in its file.
 *
 * INVARIANTS every part keeps:
 *  - f->queued is the sum of the hosts' queued; h->queued counts the
 *    entries in h's chunks plus h->spilled (those the store holds).
 *  - A host is in the heap (heap_pos != NOT_IN_HEAP) exactly when
 *    bc_fr_host_schedule() wants it there: call it after any change to
 *    a host's queue, sitemaps, in_flight, robots_state, circuit or next_ms.
 *  - f->store_status, once not BC_OK, stays so: every later add, next,
 *    done, giveback, robots_done and sitemap_done call returns it.
 *  - The URL of a FETCH, FETCH_ROBOTS or FETCH_SITEMAP job is on
 *    f->jobs_out until its done-call (or give-back), then on f->retired
 *    until the next bc_frontier_next(); a DROP's is f->drop_buf.
 */
#ifndef BC_FRONTIER_FRONTIER_INT_H
#define BC_FRONTIER_FRONTIER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpsl.h>
/* An allocation failure inside uthash must not exit (its default): it
 * rolls back instead, and a failed add leaves hh.tbl NULL. */
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "bloomcrawl/frontier.h"
#include "bloomcrawl/frontier_store.h"
#include "bloomcrawl/robots.h"

#define CHUNK_FIRST          256u
#define CHUNK_NEXT           512u
#define CHUNK_MAX            (64u * 1024u)
#define CHUNK_MAX_WINDOW     512u
#define ENTRY_HEADER         14u /* length, depth, hops, retries, referrer */
#define ENTRY_REF_AT         6u  /* where the referrer pointer is */
#define ENTRY_ID             8u  /* with a store: the store's id of the URL */
#define NOT_IN_HEAP          SIZE_MAX
#define MAX_ROBOTS_REDIRECTS 5u

/* ---- the layouts --------------------------------------------------- */

/* A chunk of a host queue (frontier.c: MEMORY). */
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

/* The host's circuit breaker (frontier.c: TRANSIENT FAULTS); the values
 * are enum bc_frontier_circuit's. */
enum circuit {
    CIRCUIT_CLOSED = BC_FRONTIER_CIRCUIT_CLOSED, /* requests go */
    CIRCUIT_OPEN = BC_FRONTIER_CIRCUIT_OPEN,     /* none before open_until */
    CIRCUIT_HALF_OPEN = BC_FRONTIER_CIRCUIT_HALF_OPEN /* one probe out */
};

struct host {
    size_t origin_len; /* of origin[], last below */
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
    uint64_t crawl_delay_ms;    /* from robots.txt, capped */
    uint64_t delay_override_ms; /* bc_frontier_set_host_delay(); 0: none */
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
    /* The store's record of this host (frontier_store.h: the host slot
     * of the queued and left hooks): NULL until the store sets it, then
     * handed back to it unread, so that the store does not look the
     * origin up again (with 10^5 hosts a lookup is a few cache misses). */
    void *store_host;
    /* Last, so that a lookup's walk down a bucket chain (hh's hashv, then
     * the key) reads the origin from the same or the next cache line as
     * the handle, not from an allocation of its own (frontier.c: THE
     * HOSTS' TABLE). */
    UT_hash_handle hh;
    /* "https://example.com:8443", NUL-terminated: the hash key. */
    char origin[];
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

/* A referrer shared by the queued URLs found on one page (frontier.c:
 * REFERRERS): refs references, each released with
 * bc_fr_referrer_release(). */
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
    struct payload *pl; /* the job's payload, or NULL (job.payload) */
    size_t len;
    char text[];
};

/* What travels with a queued URL besides its bytes. */
struct entry_meta {
    unsigned depth;
    unsigned redirects; /* hops of the redirect chain that led to it */
    unsigned retries;   /* times queued again after a transient fault */
    uint64_t id;        /* the store's id (0 without a store) */
    /* Its referrer or NULL: bc_fr_queue_push() takes a reference,
     * frontier.c's queue_pop() hands one out. */
    struct referrer *ref;
    /* The caller's payload (bc_frontier_add_payload()): its bytes, for
     * the store and the box (NULL and 0: none; set by the add calls and
     * requeue, not by queue_pop()), and the box that holds them in memory
     * (NULL: none; bc_fr_queue_push() takes it, queue_pop() hands it
     * out). */
    const void *payload;
    size_t payload_len;
    struct payload *pl;
};

/*
 * A queued URL's payload (frontier.c: PAYLOADS). The entry's pointer
 * slot (ENTRY_REF_AT) holds either its referrer or, tagged with its low
 * bit set, a payload box that holds the referrer in ref: a URL without
 * a payload costs nothing more. Owned by one entry or one job at a time.
 */
struct payload {
    struct referrer *ref; /* while queued: the entry's referrer */
    size_t len;
    unsigned char data[];
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
    /* The counters that only grow (the TOTAL rows of
     * bc_frontier_counter_table(): added, admitted, reasons[], handed_out,
     * retried, given_back, ..., sitemaps[]) kept where the stats calls
     * copy them from and a restore writes them to; its gauges and seen
     * stay 0. */
    struct bc_frontier_stats totals;
    uint64_t rng; /* splitmix64 state for the retry jitter */
    /* Sitemaps: the URLs queued in this crawl, and while
     * bc_frontier_add_from_sitemap() runs, the prefix its URL needs. */
    struct name *sitemap_seen;
    const char *admit_prefix;
    size_t admit_prefix_len;
    /* bc_frontier_add_from_sitemap_due(): asked whether a page seen
     * before is due all the same (NULL outside that call). */
    bc_frontier_due_fn admit_due;
    void *admit_due_ctx;
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

/* ---- small helpers of the hot paths --------------------------------- */

/* Whether the next URL queued at the host's tail goes to memory: always
 * without a store; with one, while the host's window has room and none of
 * its queue is spilled (memory holds a prefix of the host's FIFO). */
static inline bool in_memory_next(const struct bc_frontier *f,
                                  const struct host *h)
{
    return !f->store.queued || (h->spilled == 0 && h->queued < f->window);
}

/* The delay between two requests to a host, before the response factor:
 * min_delay_ms or the host's override, never below its Crawl-delay. */
static inline uint64_t base_delay(const struct bc_frontier *f,
                                  const struct host *h)
{
    uint64_t d =
        h->delay_override_ms ? h->delay_override_ms : f->cfg.min_delay_ms;
    return h->crawl_delay_ms > d ? h->crawl_delay_ms : d;
}

/* Whether h's robots.txt must be fetched before anything else of h's is
 * handed out at now (frontier_robots.c: UNKNOWN, or a known outcome
 * expired; never without obey_robots, nor for a host given up). */
static inline bool robots_needed(const struct bc_frontier *f,
                                 const struct host *h, uint64_t now)
{
    if (!f->cfg.obey_robots || h->robots_state == ROBOTS_GIVEN_UP || h->down)
        return false;
    return h->robots_state == ROBOTS_UNKNOWN ||
           (h->robots_state != ROBOTS_FETCHING && now >= h->robots_expires);
}

/* The job_url whose text is a job's url. */
static inline struct job_url *job_url_of(const char *text)
{
    return (struct job_url *)(void *)(text - offsetof(struct job_url, text));
}

/* ---- frontier.c: hosts, queues, jobs, faults ------------------------ */

void bc_fr_host_schedule(struct bc_frontier *f, struct host *h);
struct host *bc_fr_host_find(struct bc_frontier *f, const char *origin,
                             size_t len);
struct host *bc_fr_host_get(struct bc_frontier *f, const char *origin,
                            size_t len);
struct referrer *bc_fr_referrer_new(const char *text, size_t len);
void bc_fr_referrer_release(struct referrer *r);
struct payload *bc_fr_payload_new(const void *data, size_t len);
bool bc_fr_queue_reserve(struct bc_frontier *f, struct host *h, size_t len);
void bc_fr_queue_push(struct bc_frontier *f, struct host *h, const char *url,
                      size_t len, const struct entry_meta *m);
void bc_fr_enqueue(struct bc_frontier *f, struct host *h, const char *url,
                   size_t len, const struct entry_meta *m, bool to_memory);
char *bc_fr_job_url_new(struct bc_frontier *f, size_t len);
void bc_fr_release(struct bc_frontier *f, struct bc_frontier_job *job,
                   uint64_t until);
uint64_t bc_fr_after_request(struct bc_frontier *f, struct host *h,
                             const struct bc_frontier_outcome *o, uint64_t now);
uint64_t bc_fr_retry_delay(struct bc_frontier *f, unsigned n,
                           const struct bc_frontier_outcome *o);
void bc_fr_host_down(struct host *h, uint64_t now);
void bc_fr_circuit_failure(struct bc_frontier *f, struct host *h, uint64_t now);
bool bc_fr_circuit_success(struct host *h);

/* ---- frontier_admit.c: scope and the add calls ---------------------- */

bool bc_fr_name_has(struct name *set, const char *s, size_t len);
bool bc_fr_name_add(struct name **set, const char *s, size_t len);
bool bc_fr_scope_add(struct bc_frontier *f, const struct bc_url *u);
bool bc_fr_in_scope(const struct bc_frontier *f, const struct bc_url *u);
enum bc_status bc_fr_add_common(struct bc_frontier *f, const char *href,
                                size_t href_len, const char *base,
                                size_t base_len, const struct entry_meta *m,
                                bool seed, bool unfiltered,
                                enum bc_frontier_reason *reason,
                                enum bc_status *url_status);
bool bc_fr_text_referrer(struct bc_frontier *f, const char *referrer,
                         size_t referrer_len, struct entry_meta *m,
                         enum bc_frontier_reason *reason);

/* ---- frontier_robots.c: robots.txt per host ------------------------- */

enum bc_frontier_robots bc_fr_robots_public(enum robots_state s);
bool bc_fr_robots_allows(const struct host *h, const char *url, size_t len);
enum bc_status bc_fr_robots_next(struct bc_frontier *f, struct host *h,
                                 struct bc_frontier_job *j);

/* ---- frontier_sitemap.c: sitemap jobs ------------------------------- */

void bc_fr_sitemap_default(struct bc_frontier *f, struct host *h);
void bc_fr_sitemap_seen_test(struct bc_frontier *f, const struct bc_url *u);
void bc_fr_sitemaps_of_robots(struct bc_frontier *f, struct host *h);
enum bc_status bc_fr_sitemap_next(struct bc_frontier *f, struct host *h,
                                  uint64_t now, struct bc_frontier_job *j);
enum bc_status bc_fr_sitemap_giveback(struct bc_frontier *f, struct host *h,
                                      const struct bc_frontier_job *job);
struct sitemap_item *bc_fr_sitemap_item_new(const char *url, size_t url_len,
                                            const char *scope, size_t scope_len,
                                            unsigned level, unsigned retries,
                                            bool named);
void bc_fr_sitemap_append(struct host *h, struct sitemap_item *it);

/* ---- frontier_store.c: the store hooks ------------------------------ */

enum bc_status bc_fr_store_host(struct bc_frontier *f, const struct host *h,
                                uint64_t now, const void *body, size_t len);
enum bc_status bc_fr_store_circuit(struct bc_frontier *f, const struct host *h,
                                   uint64_t now);
/* Tell the store h's delay override (0: none); a failure is sticky. No
 * store, or no delay hook: BC_OK. */
enum bc_status bc_fr_store_delay(struct bc_frontier *f, const struct host *h);

#endif /* BC_FRONTIER_FRONTIER_INT_H */
