/*
 * bloomcrawl/frontier_store.h - the frontier's door for a crawl-state
 * store: the hooks a store gives the frontier, and the calls that rebuild
 * a frontier from what the store kept.
 *
 * This is not an embedder's header. A crawler that wants its crawl to
 * survive a restart uses a crawl state (bloomcrawl/crawl_state.h, whose
 * crawler/state.c is the one store of this project, in SQLite) and never
 * calls these; a program that writes a store of its own (another
 * database, tests/test_frontier.c's in-memory fake) includes this header.
 * Everything here works on the frontier of bloomcrawl/frontier.h.
 */
#ifndef BC_FRONTIER_FRONTIER_STORE_H
#define BC_FRONTIER_FRONTIER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/frontier.h"
#include "bloomcrawl/seen.h"
#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * PERSISTENCE: a store, and bounded memory.
 *
 * The frontier does no I/O; a caller that wants a crawl to survive a
 * restart gives it a store (crawler/state.c keeps one in SQLite;
 * tests/test_frontier.c an in-memory fake), hooks that the frontier calls
 * on every change that must survive:
 *
 *   queued   a URL entered a host queue: admitted (requeue false; it
 *            passed the seen-test), or queued again at the queue's tail
 *            after a transient fault or given back (requeue true; e->id
 *            is the id it had). The store
 *            records it at the tail of the origin's FIFO and writes its id
 *            (non-zero) to *id. e->payload is the URL's payload
 *            (bc_frontier_add_payload(); NULL for none), the same bytes
 *            at a requeue as at the admission: a store keeps it with
 *            the URL and gives it back to bc_frontier_refill().
 *   left     the URL with this id left the origin's queue: handed out as a
 *            FETCH job (reason BC_ADMIT_QUEUED), or DROPped (reason;
 *            BC_ADMIT_HOST_DOWN and BC_ADMIT_HOST_GIVEN_UP: lost to
 *            transient faults, worth keeping for a retry). The
 *            end of a FETCH is the caller's to record (job.id).
 *   host     the host's state that must survive changed: a robots.txt
 *            outcome (with the body it parsed and the remaining lifetime),
 *            a given-up host's lost count. Not called for every admission:
 *            the store counts a host's admissions (its budget) itself.
 *   refill   the host's window in memory ran empty while the store holds
 *            more of its queue: push (bc_frontier_refill()) up to max of
 *            the host's queued URLs in FIFO order, after the first skip.
 *   circuit  (optional) a host's circuit breaker changed (transient
 *            faults, given up as down); a resume gives it back with
 *            bc_frontier_restore_circuit().
 *   delay    (optional) a host's delay override was set, or removed
 *            (bc_frontier_set_host_delay(); 0: removed); a resume gives
 *            it back with bc_frontier_restore_host() (delay_override_ms).
 *   sitemap  (optional) a sitemap job was queued, or is done. A resume
 *            gives every sitemap back (bc_frontier_restore_sitemap()):
 *            the done ones only to the set of sitemaps seen, the others
 *            queued again (a sitemap in flight at a kill is fetched
 *            again: its URLs meet the seen-test).
 *
 * THE HOST SLOT. queued and left, the hooks called for every URL, are
 * given a slot of the frontier's own record of the origin (host): NULL at
 * the first call for that origin; whatever the store writes there the
 * frontier keeps, never reads, and hands back at every later queued and
 * left call of the same origin, until the frontier is freed. A store
 * keeps its record of the host there (crawler/state.c its struct shost),
 * so that it finds it without looking the origin up again: the frontier
 * has just done so, and with 10^5 hosts each lookup is a few cache
 * misses (bench_state, BENCHMARKS 3b). What the slot points to must live
 * as long as the frontier; a store that wants none leaves it NULL.
 *
 * BOUNDED MEMORY. With a store, a host keeps at most window URLs of its
 * queue in memory: a prefix of its FIFO. Further URLs are only counted
 * ("spilled"); the store holds them all, and when the window is empty at
 * next() the store pushes the next ones back. The order of the URLs a
 * host hands out is the same FIFO as without a store.
 *
 * A hook returns BC_OK or an error (BC_ERR_IO for a failed write). An
 * error is sticky: the frontier is then unusable, and every later add,
 * next, done and robots_done returns that error; only free() is left.
 * The caller stops, and resumes from the store's last commit.
 *
 * RESUMING. A new frontier (bc_frontier_create_with_seen() with the
 * seen-test loaded from a snapshot) is given its store, then its hosts
 * (bc_frontier_restore_host(): state, and how many URLs the store holds
 * queued for each, which come back through refill without the
 * seen-test), the seeds' scope, the admissions the snapshot lacks
 * (bc_frontier_restore_seen()) and its counters.
 */
#define BC_FRONTIER_DEFAULT_WINDOW 8u

/* A sitemap job as the store sees it (the strings not NUL-terminated). */
struct bc_frontier_sitemap {
    const char *url; /* canonical */
    size_t url_len;
    const char *scope; /* the prefix of its pages (job.scope) */
    size_t scope_len;
    unsigned level;
    bool named;
    unsigned retries; /* times queued again after a transient fault */
    bool given_up;    /* done: given up to transient faults (retries ran
                         out, or its host down), for a later retry */
};

/* The circuit of a host as a store keeps it (bc_frontier_store.circuit,
 * bc_frontier_restore_circuit()). Times are relative to now_ms, so that
 * the store can keep them as wall-clock times. */
struct bc_frontier_circuit_state {
    enum bc_frontier_circuit circuit;
    unsigned failures;   /* transient faults in a row */
    uint64_t failing_ms; /* failures > 0: since when (now - first) */
    uint64_t open_ms;    /* OPEN: how long it stays open from now */
    uint64_t backoff_ms; /* the open period now (0: not opened since the
                            last success) */
    bool down;           /* given up as down */
    uint64_t down_lost;  /* down: URLs lost since (final or dropped) */
    uint64_t exhausted;  /* its URLs whose retries ran out */
    uint64_t retry_ms;   /* the host waits for a retry (a transient
                            fault's backoff, a Retry-After): how long from
                            now (0: no wait) */
};

/* The state of a host that must survive a restart. */
struct bc_frontier_host_state {
    const char *origin; /* "http://a.test:8080", not NUL-terminated */
    size_t origin_len;
    enum bc_frontier_robots robots;
    const void *robots_body; /* PARSED: the body parsed (else NULL) */
    size_t robots_body_len;
    uint64_t robots_ttl_ms;   /* how long the outcome holds from now
                                 (UINT64_MAX: for ever) */
    unsigned robots_failures; /* unreachable outcomes in a row */
    uint64_t given_up_lost;   /* GIVEN_UP: URLs dropped */
    uint64_t admitted;        /* URLs admitted, for the host budget */
    uint64_t queued;          /* URLs in the host's queue */
    /* The delay override of bc_frontier_set_host_delay() (0: none); the
     * delay hook reports its changes. */
    uint64_t delay_override_ms;
};

struct bc_frontier_store {
    void *ctx;     /* passed to every hook */
    size_t window; /* URLs per host in memory (0: the default, 8) */
    /* host: the origin's host slot (THE HOST SLOT above). */
    enum bc_status (*queued)(void *ctx, const char *origin, size_t origin_len,
                             void **host, const struct bc_frontier_entry *e,
                             bool requeue, uint64_t *id);
    enum bc_status (*left)(void *ctx, const char *origin, size_t origin_len,
                           void **host, uint64_t id,
                           enum bc_frontier_action action,
                           enum bc_frontier_reason reason);
    enum bc_status (*host)(void *ctx, const struct bc_frontier_host_state *st);
    enum bc_status (*refill)(void *ctx, struct bc_frontier *frontier,
                             const char *origin, size_t origin_len, size_t skip,
                             size_t max);
    /* Optional (NULL: sitemap jobs are not kept): a sitemap job was
     * queued (done false), or its sitemap_done() came (done true). */
    enum bc_status (*sitemap)(void *ctx, const struct bc_frontier_sitemap *sm,
                              bool done);
    /* Optional (NULL: circuits are not kept): the circuit of the host
     * changed (a transient fault, the first success after some, given up
     * as down, a URL lost while down). */
    enum bc_status (*circuit)(void *ctx, const char *origin, size_t origin_len,
                              const struct bc_frontier_circuit_state *c);
    /* Optional (NULL: overrides are not kept): the host's delay override
     * was set to delay_ms, or removed (0), by bc_frontier_set_host_delay(). */
    enum bc_status (*delay)(void *ctx, const char *origin, size_t origin_len,
                            uint64_t delay_ms);
};

/*
 * Give the frontier a store (copied; ctx must outlive the frontier).
 * Only on a frontier with nothing queued or in flight, once. Returns
 * BC_OK or BC_ERR_INVALID_ARG (NULL, a NULL hook, too late). Each queued
 * URL then costs 8 more bytes in memory (its id).
 */
enum bc_status bc_frontier_set_store(struct bc_frontier *frontier,
                                     const struct bc_frontier_store *store);

/*
 * For the refill hook: push the next URL e of the origin's queue back into
 * memory, at the window's tail, with its referrer and payload (copied).
 * Returns BC_OK, BC_ERR_INVALID_ARG (no store, an unknown origin, more URLs
 * than the store held for it, limits exceeded: max_url_len, max_payload)
 * or BC_ERR_NOMEM (nothing changed). O(URL length + payload length).
 */
enum bc_status bc_frontier_refill(struct bc_frontier *frontier,
                                  const char *origin, size_t origin_len,
                                  const struct bc_frontier_entry *e);

/*
 * bc_frontier_create() with a seen-test of the caller's (e.g. from
 * bc_seen_load()): the frontier owns seen from a BC_OK return on (frees
 * it); on an error the caller still does. Errors as bc_frontier_create().
 */
enum bc_status
bc_frontier_create_with_seen(const struct bc_frontier_config *config,
                             struct bc_seen *seen, struct bc_frontier **out);

/*
 * Rebuild a host from its stored state at time now_ms: robots.txt outcome
 * (the body parsed again; ttl counted from now_ms), failures, lost count,
 * budget count, delay override (the delay used never below the
 * robots.txt Crawl-delay, as with bc_frontier_set_host_delay()), and
 * st->queued URLs the store holds in its queue (they come back through
 * refill, without the seen-test; needs a store when non-zero). Once per
 * host, before any work. Returns BC_OK, BC_ERR_INVALID_ARG, BC_ERR_NOMEM,
 * or an error of bc_robots_parse().
 */
enum bc_status bc_frontier_restore_host(struct bc_frontier *frontier,
                                        const struct bc_frontier_host_state *st,
                                        uint64_t now_ms);

/*
 * Rebuild a host's circuit from its stored state at time now_ms (after
 * bc_frontier_restore_host(), before any work): a half-open circuit (its
 * probe was lost) comes back open with no time left, so one probe goes
 * again; a retry's wait still running (c->retry_ms) blocks the host until
 * it ends. Returns BC_OK, BC_ERR_INVALID_ARG or BC_ERR_NOMEM.
 */
enum bc_status bc_frontier_restore_circuit(
    struct bc_frontier *frontier, const char *origin, size_t origin_len,
    const struct bc_frontier_circuit_state *c, uint64_t now_ms);

/* Replay an admission into the seen-test (a canonical URL admitted after
 * the snapshot the seen-test was loaded from). Returns BC_OK,
 * BC_ERR_INVALID_ARG, or a URL error. O(URL length). */
enum bc_status bc_frontier_restore_seen(struct bc_frontier *frontier,
                                        const char *url, size_t len);

/*
 * Give back a sitemap the store kept: into the set of sitemaps seen, and,
 * unless done, queued on its host (after bc_frontier_restore_host()).
 * Returns BC_OK, BC_ERR_INVALID_ARG, a URL error, or BC_ERR_NOMEM.
 */
enum bc_status bc_frontier_restore_sitemap(struct bc_frontier *frontier,
                                           const struct bc_frontier_sitemap *sm,
                                           bool done);

/* Set the cumulative counters (every TOTAL row of
 * bc_frontier_counter_table()) from a stats record saved earlier; the gauges
 * (queued, hosts, ...) and the seen-test's counters are not touched. */
void bc_frontier_restore_counters(struct bc_frontier *frontier,
                                  const struct bc_frontier_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* BC_FRONTIER_FRONTIER_STORE_H */
