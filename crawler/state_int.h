/*
 * state_int.h - the crawl state's service doors, private to the project
 * (never installed): the calls the crawler (crawler.c) and the crawl
 * workers (workers/workers.c) make on a state opened by the embedder, and
 * the tests that check them. An embedder sees bloomcrawl/crawl_state.h
 * only: it opens the state, gives it to the crawler (and the workers),
 * reads its info, and closes it; everything below happens inside the
 * crawl.
 *
 * The turn of a crawl with a state (crawler.c, A CRAWL THAT SURVIVES):
 * bc_crawl_state_pin() checks the settings a resume may not change,
 * bc_crawl_state_frontier() builds (or rebuilds) the frontier with the
 * state as its store, the frontier writes through its store hooks, the
 * crawler records pages done (bc_crawl_state_page_done()), its counters
 * and per-host records, then bc_crawl_state_commit() ends the turn's
 * transaction and bc_crawl_state_snapshot() saves the seen-test now and
 * then. The workers keep their outbox here (THE OUTBOX below).
 */
#ifndef BC_CRAWLER_STATE_INT_H
#define BC_CRAWLER_STATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/counter.h"
#include "bloomcrawl/crawl_state.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/frontier_store.h"
#include "bloomcrawl/status.h"
#include "bloomcrawl/warc.h"

/*
 * Check the settings pins[0..n) that may not change on resume
 * (crawler.c's bc_crawler_pin() gives the crawler configuration's) against
 * those recorded, or record them: until a run of this state began (no
 * frontier was ever built: nothing was crawled), each pin is recorded,
 * replacing the one before, and a pin whose value is "" is not stored;
 * afterwards each is compared with the recorded value ("" when none is),
 * and then every recorded setting must be among pins or the fixed names
 * given to bc_crawl_state_open() (a setting recorded that nobody gives any
 * more is a change too). Returns BC_OK, BC_ERR_MISMATCH (*err, if not
 * NULL: option, was, now, and text, also the state's errmsg: "NAME
 * differs from the crawl in the state (was W, now N)", "" shown as
 * none), BC_ERR_INVALID_ARG (NULL state, a NULL name or value), BC_ERR_IO
 * or BC_ERR_NOMEM. Cost: O(recorded settings x n).
 */
enum bc_status bc_crawl_state_pin(struct bc_crawl_state *state,
                                  const struct bc_crawl_state_option *pins,
                                  size_t n, struct bc_crawl_state_error *err);

/*
 * The frontier of this state, at time now_ms: created from config with
 * the state as its store (window: URLs per host in memory, 0 for
 * frontier.h's default) on the first run; on resume rebuilt: the
 * seen-test loaded from bloom.snap (checked before this call writes
 * anything; sized by config when there is no snapshot yet) and the journal
 * after it replayed, the URLs in flight at the last commit queued again at
 * the head of their host's queue (bc_crawl_state_info: refetched_now), the
 * seeds' scope, the hosts with their robots.txt outcomes (expiry kept in wall-clock time)
 * and queue lengths, the counters. Once per open. Returns BC_OK (*out,
 * the caller frees it before closing the state), BC_ERR_CORRUPT / an
 * error of bc_bloom_load() (a damaged snapshot), BC_ERR_MISMATCH (a
 * snapshot of other sizing), BC_ERR_IO, errors of bc_frontier_create().
 * Cost: O(hosts + journal after the snapshot) plus loading the filter.
 */
enum bc_status bc_crawl_state_frontier(struct bc_crawl_state *state,
                                       const struct bc_frontier_config *config,
                                       size_t window, uint64_t now_ms,
                                       struct bc_frontier **out);

/*
 * The clock a time-window seen-test (bc_seen_set_clock()) reads while
 * bc_crawl_state_frontier() replays the journal after the snapshot: the
 * journal keeps no admission times, so its URLs are put back into the
 * window at now (the time of the resume), never earlier than they were
 * admitted: a URL admitted before the kill stays inside the window at
 * least until its own window ends (no false negative), and at most the
 * time between its admission and the resume longer. Not called, or 0:
 * the snapshot's clock. Call before bc_crawl_state_frontier(). NULL is a
 * no-op. O(1).
 */
void bc_crawl_state_set_seen_clock(struct bc_crawl_state *state, uint64_t now);

/* The pages of the journal that were handed out for fetching (fetched,
 * failed or dropped; not those still queued, nor those in flight at a
 * kill, which are queued again), in admission order: fn(ctx, url, len,
 * depth) for each row (a URL admitted again has a row per admission). fn
 * may admit URLs: those are not visited. BC_OK, BC_ERR_INVALID_ARG (NULL
 * state or fn) or BC_ERR_IO. Cost: O(journal). */
enum bc_status bc_crawl_state_known(struct bc_crawl_state *state,
                                    void (*fn)(void *ctx, const char *url,
                                               size_t len, unsigned depth),
                                    void *ctx);

/* Record a seed's URL (its host and domain are the scope of a resume
 * without seeds). Part of the open transaction. BC_OK or BC_ERR_IO. */
enum bc_status bc_crawl_state_add_seed(struct bc_crawl_state *state,
                                       const char *url, size_t len);

/* The seeds recorded, in order: fn(ctx, url, len) for each. BC_OK or
 * BC_ERR_IO. */
enum bc_status bc_crawl_state_seeds(struct bc_crawl_state *state,
                                    void (*fn)(void *ctx, const char *url,
                                               size_t len),
                                    void *ctx);

/* The FETCH job with this id (job.id) is done: fetched, whatever the
 * answer (a URL queued again for a retry is the frontier's, not this).
 * Part of the open transaction. BC_OK, BC_ERR_INVALID_ARG or BC_ERR_IO. */
enum bc_status bc_crawl_state_page_done(struct bc_crawl_state *state,
                                        uint64_t id);

/* The FETCH job with this id ended on a transient fault for good (its
 * retries exhausted, or its host given up as down): done as by
 * bc_crawl_state_page_done(), and recorded as given up to a transient
 * fault, for bc_crawl_state_retry_failed(). Part of the open transaction.
 * BC_OK, BC_ERR_INVALID_ARG or BC_ERR_IO. */
enum bc_status bc_crawl_state_page_failed(struct bc_crawl_state *state,
                                          uint64_t id);

/* Set a counter of the caller's (name up to 63 bytes; e.g. "pages"),
 * saved with the next commit. BC_OK, BC_ERR_INVALID_ARG, BC_ERR_NOMEM. */
enum bc_status bc_crawl_state_counter_set(struct bc_crawl_state *state,
                                          const char *name, uint64_t value);

/* A counter's saved value, 0 when never set. */
uint64_t bc_crawl_state_counter_get(const struct bc_crawl_state *state,
                                    const char *name);

/* Set every element of every TOTAL row of a counter table (n rows,
 * values in stats, the module's stats struct) under its key in group
 * (bc_counter_key(): "crawler.pages", "frontier.reason.robots"), saved
 * with the next commit. BC_OK, BC_ERR_INVALID_ARG (a key too long),
 * BC_ERR_NOMEM (counters set before it stay set). */
enum bc_status bc_crawl_state_save_totals(struct bc_crawl_state *state,
                                          const char *group,
                                          const struct bc_counter *table,
                                          size_t n, const void *stats);

/* Read them back into stats (0 where a key was never set); the other
 * fields of stats are left as they are. */
void bc_crawl_state_load_totals(const struct bc_crawl_state *state,
                                const char *group,
                                const struct bc_counter *table, size_t n,
                                void *stats);

/* Set the caller's per-host record for origin (len bytes): an opaque blob
 * of n bytes (the crawler's per-host counters), replacing the one before.
 * Part of the open transaction. BC_OK, BC_ERR_INVALID_ARG or BC_ERR_IO. */
enum bc_status bc_crawl_state_host_stats_set(struct bc_crawl_state *state,
                                             const char *origin, size_t len,
                                             const void *data, size_t n);

/* The committed per-host records: fn(ctx, origin, len, data, n) for each,
 * in no particular order (the strings valid during the call). O(hosts).
 * BC_OK, BC_ERR_INVALID_ARG or BC_ERR_IO. */
enum bc_status
bc_crawl_state_host_stats(struct bc_crawl_state *state,
                          void (*fn)(void *ctx, const char *origin, size_t len,
                                     const void *data, size_t n),
                          void *ctx);

/* The WARC writer's position (bc_warc_tell()) at the next commit: the
 * records before it belong to the pages committed with it. A position
 * that differs from the committed one makes the state pending. O(1). */
void bc_crawl_state_set_warc(struct bc_crawl_state *state,
                             const struct bc_warc_position *at);

/* Whether a commit is due: something was written since the last one (a
 * transaction is open, or the WARC position moved). O(1). */
bool bc_crawl_state_pending(const struct bc_crawl_state *state);

/* How many times anything was written to the state since it was opened
 * (every write of the hooks and doors, commits included): a caller that
 * notes it can tell later whether others wrote meanwhile (crawler.c, THE
 * TURN'S COMMIT: what was admitted between two steps is committed by the
 * next). O(1). */
uint64_t bc_crawl_state_writes(const struct bc_crawl_state *state);

/*
 * Commit the open transaction (if any), with the frontier's counters
 * (frontier may be NULL: not saved), the caller's counters, the hosts
 * changed, the out offset and the WARC position. Cost: O(changes) plus one WAL write; the
 * fsync is left to checkpoints. Returns BC_OK or BC_ERR_IO (disk full,
 * any write error: the transaction is rolled back; close the state and
 * resume later from the previous commit).
 */
enum bc_status bc_crawl_state_commit(struct bc_crawl_state *state,
                                     const struct bc_frontier *frontier);

/*
 * Save the frontier's Bloom filter to bloom.snap and record the journal
 * position it covers. Call right after bc_crawl_state_commit(), before any
 * other frontier call, so that the filter holds exactly the committed
 * admissions. Syncs the WAL first (a passive checkpoint), so the snapshot
 * never covers a commit that a power loss could undo. Cost: the
 * checkpoint, writing the filter (m/8 bytes) and its fsync; none when
 * nothing was committed since this open's last snapshot (it returns
 * BC_OK at once: the file and position would be the same). Returns
 * BC_OK, BC_ERR_INVALID_ARG (a transaction open) or BC_ERR_IO.
 */
enum bc_status bc_crawl_state_snapshot(struct bc_crawl_state *state,
                                       struct bc_frontier *frontier);

/*
 * THE OUTBOX: URLs for other crawl workers (crawler/workers), kept in the
 * state until the worker has handed them on (to Redis): a transactional
 * outbox. A row is written in the state's open transaction, so it is
 * committed with the turn that found its URL, and deleted in a later one
 * once it was sent: a kill loses no row, and may send a row twice.
 */
struct bc_crawl_state_routed {
    uint64_t id;     /* row id, increasing (set by the state; ignored by
                        bc_crawl_state_outbox_add()) */
    unsigned worker; /* destination worker index */
    const char *url; /* canonical, not NUL-terminated */
    size_t url_len;
    const char *referrer; /* NULL and 0: none */
    size_t referrer_len;
    unsigned depth, redirects;
    bool seed;
};

/*
 * Add a row to the outbox (*r's strings copied; r->id ignored): in the
 * open transaction (opened if none: the state is then pending), committed
 * by the next bc_crawl_state_commit(). Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL state or r, a NULL url, a NULL referrer with a
 * length) or BC_ERR_IO. O(log rows).
 */
enum bc_status bc_crawl_state_outbox_add(struct bc_crawl_state *state,
                                         const struct bc_crawl_state_routed *r);

/*
 * Call fn(ctx, row) for up to max rows with id > after_id, in id order
 * (the rows, committed or not, valid during the call; fn must not call
 * the state). *count (may be NULL) gets how many rows were seen. Returns
 * BC_OK, BC_ERR_INVALID_ARG (NULL state or fn) or BC_ERR_IO.
 * O(log rows + max).
 */
enum bc_status bc_crawl_state_outbox_read(
    struct bc_crawl_state *state, uint64_t after_id, size_t max,
    void (*fn)(void *ctx, const struct bc_crawl_state_routed *r), void *ctx,
    size_t *count);

/*
 * Delete the rows with id <= up_to_id (they were handed on), in the open
 * transaction (opened if none: the state is then pending). Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL state) or BC_ERR_IO. O(rows deleted x log
 * rows).
 */
enum bc_status bc_crawl_state_outbox_remove(struct bc_crawl_state *state,
                                            uint64_t up_to_id);

/* The rows in the outbox now (committed or not); 0 for NULL. O(1): a
 * counter, restored at open. */
uint64_t bc_crawl_state_outbox_count(const struct bc_crawl_state *state);

/* The frontier store hooks of this state (for a caller that creates its
 * own frontier; bc_crawl_state_frontier() sets them itself). */
void bc_crawl_state_store(struct bc_crawl_state *state, size_t window,
                          struct bc_frontier_store *out);

/* The size of a payload digest in the payload log (SHA-1's). */
#define BC_CRAWL_STATE_DIGEST_SIZE 20

/* A row of the payload log (crawler.c, IDENTICAL PAYLOADS): the first
 * URL whose response had the payload of this SHA-1, and its WARC response
 * record. The strings are valid only during a callback. */
struct bc_crawl_state_payload {
    const unsigned char *digest; /* BC_CRAWL_STATE_DIGEST_SIZE bytes */
    const char *url;             /* not NUL-terminated in a put */
    size_t url_len;
    const char *record_id; /* its WARC-Record-ID, "" when none (NUL-
                              terminated) */
    int64_t date;          /* its WARC-Date, seconds since the epoch */
};

/*
 * Write payload row p (replacing the row of its digest: an entry that
 * gained its record) in the open transaction: durable at the next commit,
 * with the page it came with. Returns BC_OK, BC_ERR_INVALID_ARG (NULL
 * argument or field) or BC_ERR_IO (sticky). Cost: one row appended to the
 * log payload_log (its last page; the replaced row stays there, unread).
 */
enum bc_status
bc_crawl_state_payload_put(struct bc_crawl_state *state,
                           const struct bc_crawl_state_payload *p);

/*
 * Call fn with every committed payload row, in the order they were put
 * (a digest put more than once comes again: its later row replaces the
 * earlier), until it returns an error, which is returned. Returns BC_OK,
 * BC_ERR_INVALID_ARG, BC_ERR_CORRUPT (a row without its 20-byte digest,
 * URL or id: the state's errmsg says so) or BC_ERR_IO. Cost: O(rows).
 */
enum bc_status bc_crawl_state_payloads(
    struct bc_crawl_state *state,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_payload *p),
    void *ctx);

/* A row of the validators table (crawler.c, CONDITIONAL RECRAWLS): the
 * ETag and Last-Modified of url's last 2xx page that had either (""
 * for the one it lacked; NUL-terminated), and the WARC response record
 * holding that page's payload: its id ("" when none was written), its
 * WARC-Target-URI and WARC-Date (seconds since the epoch). The strings
 * are valid only during a callback. */
struct bc_crawl_state_validators {
    const char *url; /* not NUL-terminated */
    size_t url_len;
    const char *etag;
    const char *last_modified;
    const char *record_id;
    const char *record_uri;
    int64_t date;
};

/*
 * Write validators row v (replacing url's row) in the open transaction:
 * durable at the next commit, with the page it came with. Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL argument or field) or BC_ERR_IO (sticky).
 * Cost: one B-tree insert.
 */
enum bc_status
bc_crawl_state_validators_put(struct bc_crawl_state *state,
                              const struct bc_crawl_state_validators *v);

/*
 * Call fn once with url's validators row (the open transaction's rows
 * included) and return what it returns. Returns BC_ERR_NOT_FOUND when
 * url has none, BC_ERR_INVALID_ARG, BC_ERR_CORRUPT (a NULL column: the
 * state's errmsg says so) or BC_ERR_IO. Cost: one B-tree lookup.
 */
enum bc_status bc_crawl_state_validators_find(
    struct bc_crawl_state *state, const char *url, size_t url_len,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_validators *v),
    void *ctx);

/* A row of the fingerprints table (crawler.c, NEAR-DUPLICATES): a page's
 * 64-bit simhash, the first of its near-duplicate cluster, and its URL.
 * The URL is valid only during a callback. */
struct bc_crawl_state_fingerprint {
    uint64_t fp;
    const char *url; /* not NUL-terminated in a put */
    size_t url_len;
};

/*
 * Append fingerprint row f in the open transaction: durable at the next
 * commit, with the page it came with. Returns BC_OK, BC_ERR_INVALID_ARG
 * (NULL argument or URL) or BC_ERR_IO (sticky). Cost: one B-tree append.
 */
enum bc_status
bc_crawl_state_fingerprint_put(struct bc_crawl_state *state,
                               const struct bc_crawl_state_fingerprint *f);

/*
 * Call fn with every committed fingerprint row, in the order they were
 * put, until it returns an error, which is returned. Returns BC_OK,
 * BC_ERR_INVALID_ARG, BC_ERR_CORRUPT (a row without its URL: the state's
 * errmsg says so) or BC_ERR_IO. Cost: O(rows).
 */
enum bc_status bc_crawl_state_fingerprints(
    struct bc_crawl_state *state,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_fingerprint *f),
    void *ctx);

/*
 * Write url's fetched row (FETCHED in state.c: when its page was last
 * fetched, or queued to be fetched again; time in seconds since the
 * epoch), replacing the one it had, in the open transaction: durable at
 * the next commit, with the page it came with. Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL argument) or BC_ERR_IO (sticky). Cost: one
 * B-tree insert.
 */
enum bc_status bc_crawl_state_fetched_put(struct bc_crawl_state *state,
                                          const char *url, size_t url_len,
                                          int64_t time);

/*
 * url's fetched row into *time (the open transaction's rows included).
 * Returns BC_OK, BC_ERR_NOT_FOUND (none: *time untouched),
 * BC_ERR_INVALID_ARG or BC_ERR_IO. Cost: one B-tree lookup.
 */
enum bc_status bc_crawl_state_fetched_find(struct bc_crawl_state *state,
                                           const char *url, size_t url_len,
                                           int64_t *time);

#endif /* BC_CRAWLER_STATE_INT_H */
