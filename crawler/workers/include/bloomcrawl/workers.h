/*
 * bloomcrawl/workers.h - crawl workers: one crawl split by host between N
 * processes (on any machines) that meet in one Redis server.
 *
 * Worker I of N fetches only the hosts it owns (bc_workers_owner()), so
 * politeness, robots.txt and the seen-test stay local and exact, as in one
 * process. A URL found for another worker's host goes through this
 * worker's crawl state (its outbox) to that worker's inbox, a Redis
 * stream; the owner admits it through its own frontier and acknowledges it
 * once its own state committed it. The crawl is over when every worker is
 * idle and every entry sent was acknowledged (a counting termination
 * test). crawler/workers/workers.c explains the protocol; docs/DESIGN.md
 * ("Crawl workers") has the keys.
 *
 * THE PARTITION (the same on every machine, in any language)
 *   owner(origin) = XXH64(origin bytes, seed 0) mod N
 * origin exactly as the frontier writes it (bc_url_origin()): the
 * lowercase scheme, "://", the canonical host (A-labels, an IPv6 address in
 * brackets) and ":port" only when it is not the scheme's default, e.g.
 * "http://a.test:8080" or "https://example.com".
 *
 * REDIS KEYS (P = "bc:" + crawl id + ":", the id [A-Za-z0-9._-]{1,64},
 * "default" when none is given)
 *   P meta      hash: version "1", workers N, max_pages (0: none),
 *               created (ms since the epoch); set by the first worker.
 *   P w:<i>     hash of worker i: pid, host, started, heartbeat (ms since
 *               the epoch, every second), idle 0|1, busy (idle -> busy
 *               transitions), sent (entries it XADDed), acked (valid
 *               entries it XACKed), garbage (invalid entries it skipped),
 *               pages, queued, in_flight, outbox, redis_errors, state
 *               ("crawling" | "idle" | "done" | "stopped": by a
 *               signal, it will come back); with a global --max-pages,
 *               budget (the pages it took: held or spent) and
 *               budget_seq (the sequence of its last budget round).
 *   P in:<i>    stream: worker i's inbox; consumer group "workers",
 *               consumer "w<i>".
 *   P seeds     set: every seed any worker was given (the global scope).
 *   P pages     counter: pages taken from the global --max-pages budget
 *               (the sum of the workers' budget, plus any hand edit).
 *   P done      "1" once the crawl is over.
 *
 * A STREAM ENTRY (what another program writes to feed a worker)
 *   fields  v     "1"
 *           from  the sender's index, decimal, < N
 *           urls  lines separated by "\n", each
 *                 KIND \t DEPTH \t REDIRECTS \t URL \t REFERRER
 *                 KIND "s" (a seed) or "l" (a link, redirect or sitemap
 *                 URL), DEPTH and REDIRECTS decimal, URL absolute and
 *                 canonical, REFERRER a URL or empty.
 *   At most BC_WORKERS_ENTRY_URLS lines and BC_WORKERS_ENTRY_BYTES bytes of
 *   urls. An entry without v = "1", a valid from or urls is garbage:
 *   counted (garbage), acknowledged, never in acked (so hand-written
 *   entries cannot unbalance the termination count). A malformed line of a
 *   valid entry is counted (garbage_lines) and skipped; the rest is
 *   admitted. A program that feeds a worker counts its entry as a sender
 *   does, HINCRBY P w:<from> sent 1 in the MULTI of its XADD: the crawl
 *   ends when sum(sent) = sum(acked), so a valid entry nobody counted in
 *   sent keeps it from ending.
 *
 * USE (examples/crawl.c is the whole program)
 *   bc_fetcher_global_init();                once, before any crawler
 *   bc_workers_config_init(&wc); wc.where = ...; wc.workers = N; ...
 *   bc_workers_create(&wc, &w);              connect, meta, register
 *                                            (failed: bc_workers_errmsg(w),
 *                                            then bc_workers_free(w))
 *   bc_crawl_state_open(dir, fixed, ...);    this worker's own state; fixed
 *                                            holds N, index and crawl id
 *                                            (crawl.c: "--workers", ...)
 *                                            so a resume cannot change them
 *   bc_crawler_config_init(&crawler_config); the same crawl settings on
 *                                            every worker (scope, agent,
 *                                            resolve: not shared by Redis)
 *   bc_workers_attach(w, &crawler_config, state);
 *   bc_crawler_create(&crawler_config, &crawler);
 *   bc_workers_start(w, crawler);
 *   bc_workers_add_seed(w, url, len, ...);   for this worker's seeds
 *   while (!over) bc_workers_step(w, 100, &over);
 *   bc_crawler_free(crawler); bc_workers_free(w); bc_crawl_state_close(..)
 *
 * Redis trouble after bc_workers_create() is never an error of a call: the
 * worker keeps crawling its own hosts, keeps what it must send in its
 * state, retries with a backoff from 100 ms to 5 s, and counts it
 * (redis_errors, redis_reconnects). A Redis that stops answering (a
 * stall, SIGSTOP) costs one step the 2 s command timeout, once: the
 * worker then reconnects only after a probe (a PING on a non-blocking
 * connection, looked at without waiting) was answered. A round whose
 * reply was lost loses and double-counts nothing: on every reconnect the
 * worker reads its pending entries again (an XREADGROUP whose reply was
 * lost delivered entries there), and every other round is one the server
 * may run twice or once without harm (docs/DESIGN.md 14, "Lost
 * replies"). docs/DESIGN.md section 14 has the protocol and the
 * termination test. The library never prints. Not
 * thread-safe: one worker, one thread (the crawler's).
 */
#ifndef BC_CRAWLER_WORKERS_H
#define BC_CRAWLER_WORKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/crawl_state.h"
#include "bloomcrawl/crawler.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define BC_WORKERS_MAX         1024u          /* workers in a crawl */
#define BC_WORKERS_ENTRY_URLS  512u           /* URLs per stream entry */
#define BC_WORKERS_ENTRY_BYTES (1024u * 1024) /* urls bytes per entry */
#define BC_WORKERS_SEND_CACHE  65536u         /* sender cache default */

/*
 * The worker that owns origin (len bytes, as bc_url_origin() writes it)
 * among workers (>= 1): XXH64(origin, seed 0) mod workers; 0 when workers
 * is 0. E.g. "http://a.test" hashes to 0x13afff6c0ad7323e: worker 0 of 3,
 * 574 of 1024 (tests/test_workers.c checks it). O(len).
 */
unsigned bc_workers_owner(const char *origin, size_t len, unsigned workers);

#define BC_WORKERS_MAX_DEPTH     1000000u /* DEPTH of a line, at most */
#define BC_WORKERS_MAX_REDIRECTS 1000u    /* REDIRECTS of a line, at most */

/* One line of a stream entry's urls field (bc_workers_parse_line()). */
struct bc_workers_line {
    bool seed;                 /* KIND "s"; "l" (a link) otherwise */
    unsigned depth, redirects; /* decimal, at most the limits above */
    const char *url;           /* inside the line, not NUL-terminated */
    size_t url_len;            /* > 0 */
    const char *referrer;      /* inside the line; NULL when empty */
    size_t referrer_len;
};

/*
 * Parse one line (len bytes, without its "\n") of an entry's urls field:
 * KIND \t DEPTH \t REDIRECTS \t URL \t REFERRER, KIND "s" or "l",
 * DEPTH and REDIRECTS decimal (digits only, within the limits), URL not
 * empty, exactly five fields. Returns true and fills *out for a line of
 * that form, false for any other (a garbage line: the worker counts it
 * and skips it). Checks the form only; the URL is the crawler's to
 * check. Never reads outside line[0, len). O(len).
 */
bool bc_workers_parse_line(const char *line, size_t len,
                           struct bc_workers_line *out);

struct bc_workers_config {
    /* "redis://host[:port][/db]" or "unix:/path", with a password as
     * redis_conn.h says */
    const char *where;
    const char *crawl_id; /* NULL: "default"; [A-Za-z0-9._-]{1,64} */
    unsigned workers;     /* N, 1 .. BC_WORKERS_MAX */
    unsigned index;       /* this worker, 0 .. N-1 */
    uint64_t max_pages;   /* pages of the whole crawl; 0: none */
    size_t send_cache;    /* sender cache entries (65536); 0: none */
};

/* Fill *config with the defaults: where NULL, crawl_id NULL, workers 1,
 * index 0, max_pages 0, send_cache BC_WORKERS_SEND_CACHE. */
void bc_workers_config_init(struct bc_workers_config *config);

struct bc_workers;

/*
 * Make worker config->index of a crawl: connect to config->where (2 s
 * limit per command), check the crawl's meta or create it (atomically,
 * the first worker does), and, unless the crawl is over already, register
 * (P w:<i>: busy, not idle; its budget count read back) and create the
 * inbox's consumer group. The
 * config's strings are copied. Returns BC_OK with *out, or:
 *   BC_ERR_INVALID_ARG    a bad where, crawl id, workers or index
 *   BC_ERR_REDIS_CONNECT  Redis is unreachable (errmsg: "cannot connect to
 *                         Redis at unix:/x: Connection refused")
 *   BC_ERR_MISMATCH       the crawl was created with another N or
 *                         max_pages, or by another version (errmsg says
 *                         which, with both values)
 *   BC_ERR_REDIS_LOST, BC_ERR_REDIS_REPLY, BC_ERR_NOMEM.
 * On failure too *out is set (NULL only for BC_ERR_NOMEM and a NULL out),
 * to a worker that can do nothing but say why (bc_workers_errmsg()).
 * Either way free it with bc_workers_free(). Cost: a connect and two
 * round trips.
 */
enum bc_status bc_workers_create(const struct bc_workers_config *config,
                                 struct bc_workers **out);

/* Free the worker (its connection, cache, buffers); entries read and not
 * acknowledged stay pending in Redis, delivered again to the next worker
 * on this inbox. Does not free the crawler or the state. NULL: no-op. */
void bc_workers_free(struct bc_workers *w);

/* Why bc_workers_create() failed, or the last Redis trouble since ("" if
 * none); owned by w, valid until its next call. "" for NULL. */
const char *bc_workers_errmsg(const struct bc_workers *w);

/*
 * Set config's hooks for this worker, before bc_crawler_create() and after
 * the caller set its own callbacks and ctx: config->frontier.partition
 * (owns and route), and, when max_pages is not 0, config->page_budget
 * (the global budget, P pages). page_budget is called with config->ctx,
 * so then config->ctx becomes the worker, and the caller's clock,
 * on_page, on_fetch and recrawl_clock (those set) are replaced by
 * functions of the worker that call them with the caller's ctx: the
 * caller sees no difference. state (the crawler's, non-NULL: a worker
 * needs a state) holds the outbox; not owned. Returns BC_OK or
 * BC_ERR_INVALID_ARG (NULL argument, attached already, or page_budget
 * set already). O(1).
 */
enum bc_status bc_workers_attach(struct bc_workers *w,
                                 struct bc_crawler_config *config,
                                 struct bc_crawl_state *state);

/*
 * Hand the crawler (made with the attached config; not owned, it must
 * outlive the worker's last step) to the worker and load the crawl's
 * global scope (P seeds) into it. Returns BC_OK, BC_ERR_INVALID_ARG (NULL
 * argument, not attached, started already) or an error of
 * bc_crawler_add_scope(). Redis unreachable: not an error (the scope is
 * loaded on reconnect). O(seeds).
 */
enum bc_status bc_workers_start(struct bc_workers *w,
                                struct bc_crawler *crawler);

/*
 * Add a seed given to this worker: in one transaction SADD it to P seeds
 * (the global scope) and publish this worker busy, then
 * bc_crawler_add_seed() (admitted here, or routed to its owner).
 * Arguments and returns as bc_crawler_add_seed(); BC_ERR_INVALID_ARG
 * before bc_workers_start(). Redis unreachable: BC_ERR_REDIS_LOST (or
 * BC_ERR_REDIS_REPLY for an error reply) and nothing is added (*reason
 * BC_ADMIT_STORE_ERROR): a seed is work, and a worker must be seen busy
 * before it has work, or the others could end the crawl without it; call
 * again later (the connection is retried with the backoff). One round
 * trip.
 */
enum bc_status bc_workers_add_seed(struct bc_workers *w, const char *url,
                                   size_t len, enum bc_frontier_reason *reason,
                                   enum bc_status *url_status);

/*
 * One turn: bc_crawler_step(timeout_ms) (0 when this worker is idle: it
 * waits on its inbox instead, at most min(timeout_ms, 100) ms), then
 * acknowledge the entries admitted before the step (committed now), send
 * the outbox, read the inbox (its pending entries first after a start,
 * after every reconnect, and when an idle worker finds its own inbox not
 * empty; a busy worker at most every 10 ms, sooner when its last read
 * found entries), heartbeat, and the idle and termination test. *over (may be NULL) is
 * set true when the crawl is over for every worker (P done, set by this
 * worker or another; the crawler was stopped and synced), or, after
 * bc_workers_stop(), when this worker has nothing in flight (the crawl
 * goes on without it). Returns BC_OK, or an error of bc_crawler_step(),
 * bc_crawler_sync() or the state (fatal: close the state and resume
 * later), or BC_ERR_INVALID_ARG (not started). Redis errors are not
 * returned: they are counted and retried. Cost: the step's, plus a few
 * pipelined round trips.
 */
enum bc_status bc_workers_step(struct bc_workers *w, uint64_t timeout_ms,
                               bool *over);

/* Stop this worker cleanly (a signal): the crawler starts no transfer,
 * the inbox is not read any more (entries stay for the next run), what
 * can be sent and acknowledged still is; bc_workers_step() then reports
 * *over once nothing is in flight. It does not end the crawl. NULL:
 * no-op. */
void bc_workers_stop(struct bc_workers *w);

struct bc_workers_stats {
    unsigned index, workers;
    uint64_t sent_entries;    /* stream entries XADDed */
    uint64_t sent_urls;       /* URLs in them */
    uint64_t send_cache_hits; /* URLs not sent: sent recently */
    uint64_t routed_seeds;    /* seeds given here and routed to others */
    uint64_t received_entries, received_urls; /* read from the inbox */
    uint64_t acked_entries;                   /* valid entries acknowledged */
    uint64_t garbage_entries; /* invalid entries skipped and acknowledged */
    uint64_t garbage_lines;   /* malformed lines of valid entries */
    uint64_t outbox;          /* rows waiting now */
    uint64_t outbox_max;      /* most rows waiting at once */
    uint64_t redis_errors;    /* failed rounds of commands (and probes) */
    uint64_t redis_reconnects;
    bool redis_up;           /* connected now */
    uint64_t redis_commands; /* commands sent (MULTI and EXEC included) */
    bool done_seen_at_start; /* the crawl was over when this one started */
    /* With a global max_pages: the crawl ended with the budget spent (P
     * pages at the limit when this worker saw it over; every worker of
     * the crawl says the same). */
    bool budget_spent;
};

/* Fill *out with the worker's counters (this run's). O(1). */
void bc_workers_stats(const struct bc_workers *w, struct bc_workers_stats *out);

/* The table of the counters above (bloomcrawl/counter.h), in a static
 * array: its length in *n (n may be NULL). O(1). */
const struct bc_counter *bc_workers_counter_table(size_t *n);

/* One worker as Redis shows it (crawl --status). */
struct bc_workers_row {
    unsigned index;
    bool registered; /* P w:<i> exists; the rest is 0 when not */
    long pid;
    char host[64];
    uint64_t pages, queued, in_flight, sent, acked, garbage, outbox;
    uint64_t heartbeat_ms; /* last heartbeat, ms since the epoch */
    bool idle;
    char state[16]; /* "crawling", "idle", "done", "stopped" */
};

/*
 * Read a crawl's workers from Redis without being one: *workers gets N,
 * *done whether the crawl is over, rows[0 .. min(N, max_rows)) the
 * workers in index order. Returns BC_OK, BC_ERR_INVALID_ARG (a bad where
 * or crawl id, NULL pointers other than rows with max_rows 0),
 * BC_ERR_NOT_FOUND (no such crawl: P meta is missing),
 * BC_ERR_REDIS_CONNECT, BC_ERR_REDIS_LOST, BC_ERR_REDIS_REPLY,
 * BC_ERR_NOMEM; err (err_size bytes, may be NULL) says why. Cost: a
 * connect and three round trips.
 */
enum bc_status bc_workers_status(const char *where, const char *crawl_id,
                                 unsigned *workers, bool *done,
                                 struct bc_workers_row *rows, size_t max_rows,
                                 char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* BC_CRAWLER_WORKERS_H */
