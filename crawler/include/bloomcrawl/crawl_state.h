/*
 * bloomcrawl/crawl_state.h - a crawl that survives: the frontier's store in
 * SQLite, and the seen-test's snapshot, in one state directory.
 *
 * A state directory DIR holds
 *
 *   DIR/crawl.db    SQLite (WAL): the configuration the crawl was started
 *                   with, its seeds, its hosts (robots.txt outcomes, budget
 *                   counts), every URL ever admitted (the journal: queued,
 *                   in flight, fetched or dropped, in admission order), the
 *                   sitemap jobs (queued or done), the counters, and the
 *                   outbox of a crawl worker (below). docs/DESIGN.md
 *                   documents the schema.
 *   DIR/bloom.snap  the seen-test's filter, Bloom or (a recrawl window,
 *                   crawler.h recrawl_after_ms) window (bc_seen_save: atomic,
 *                   checksummed), covering the admissions up to a journal
 *                   position recorded in crawl.db; later ones are replayed
 *                   from the journal on resume.
 *   DIR/lock        flock()ed while a process has the state open, holding
 *                   its pid.
 *
 * The caller (the crawler) opens the state, gets its frontier from it
 * (bc_crawl_state_frontier(): created, or rebuilt on resume), and crawls.
 * The frontier writes to the state through its store hooks (frontier.h)
 * inside a transaction that the first write opens; bc_crawl_state_commit()
 * ends it. A kill loses the uncommitted transaction only: a page's
 * completion (bc_crawl_state_page_done()) and the admission of its links
 * belong in one. URLs handed out and not recorded as fetched by the last
 * commit are the crawl's "in flight": a resume puts them back at the head
 * of their host's queue and counts them (refetched_after_restart).
 *
 * Durability: WAL with synchronous=NORMAL. A commit survives the process
 * being killed (the WAL is in the OS's page cache); a power loss or an OS
 * crash can lose the last commits (those since the last sync of the WAL,
 * at a checkpoint or a snapshot), never leave the database inconsistent,
 * never leave a snapshot that knows more than the database.
 *
 * The library never prints: every failure is a status, with a text
 * (bc_crawl_state_errmsg(), or the error record of bc_crawl_state_open()).
 * Not thread-safe: one state, one thread.
 */
#ifndef BC_CRAWLER_CRAWL_STATE_H
#define BC_CRAWLER_CRAWL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/frontier.h"
#include "bloomcrawl/status.h"
#include "bloomcrawl/warc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this build writes and reads (meta "version"). */
#define BC_CRAWL_STATE_VERSION 3

/* A setting that may not change on resume, e.g. {"scope", "host"}. */
struct bc_crawl_state_option {
    const char *name;
    const char *value;
};

/* Why bc_crawl_state_open() failed, for the caller's message. */
struct bc_crawl_state_error {
    char text[512];  /* what failed, one line without the directory */
    char option[64]; /* BC_ERR_MISMATCH: the option's name */
    char was[256];   /* BC_ERR_MISMATCH: the recorded value ("" if none) */
    char now[256];   /* BC_ERR_MISMATCH: the value given ("" if none) */
    long pid;        /* BC_ERR_LOCKED: the holder's pid, 0 if unknown */
};

struct bc_crawl_state;

/*
 * Open the state in dir, creating it (mode 0700) when dir does not exist
 * or is an empty directory; fixed[0..count) are the settings that may not
 * change: recorded on creation, compared on resume (in order; the first
 * difference, a missing or an extra name, is the error). Checks crawl.db
 * (PRAGMA quick_check: O(size of the database)) and writes nothing to an
 * existing state (bc_crawl_state_frontier() begins the run).
 * Returns BC_OK (*out: close with bc_crawl_state_close()), or, with *err
 * filled and dir left as it was:
 *   BC_ERR_FORMAT    dir is not a crawl state (a file, a directory with
 *                    other contents and no crawl.db, a crawl.db not ours)
 *   BC_ERR_VERSION   a crawl state of another format version
 *   BC_ERR_CORRUPT   crawl.db is damaged (or bloom.snap missing)
 *   BC_ERR_LOCKED    another process has it open (err->pid)
 *   BC_ERR_MISMATCH  a fixed setting differs (err->option, was, now)
 *   BC_ERR_IO        a file could not be created, read or written:
 *                    err->text names it and gives errno's text
 *                    ("cannot access crawl.db: Permission denied")
 *   BC_ERR_INVALID_ARG, BC_ERR_NOMEM.
 */
enum bc_status bc_crawl_state_open(const char *dir,
                                   const struct bc_crawl_state_option *fixed,
                                   size_t count, struct bc_crawl_state **out,
                                   struct bc_crawl_state_error *err);

/* Roll back what was not committed, close, unlock; NULL is a no-op. */
void bc_crawl_state_close(struct bc_crawl_state *state);

/* The text of the last failure of a call on state ("" if none); owned by
 * the state, valid until its next call. */
const char *bc_crawl_state_errmsg(const struct bc_crawl_state *state);

struct bc_crawl_state_info {
    bool resumed; /* the state existed before this open */
    /* From the open on (before bc_crawl_state_frontier()): */
    uint64_t runs;          /* runs of this state, this one included (a
                               run is an open that built its frontier) */
    uint64_t refetched_now; /* URLs in flight at the last commit (a kill
                               left them unfinished), which
                               bc_crawl_state_frontier() queues again */
    uint64_t refetched;     /* the same, over all runs, this one included */
    uint64_t out_offset;    /* the --out offset of the last commit */
    /* The WARC writer's position at the last commit (all zero when none
     * was committed): where bc_warc_open_at() resumes. */
    struct bc_warc_position warc;
    uint64_t queued;       /* URLs queued (in memory or not) */
    uint64_t journal;      /* URLs ever admitted (the journal's length) */
    uint64_t snapshot_pos; /* journal entries the snapshot covers */
};

/* Fill *out (all zero for a NULL state). O(1). */
void bc_crawl_state_info(const struct bc_crawl_state *state,
                         struct bc_crawl_state_info *out);

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

/*
 * Queue again every URL given up to a transient fault in earlier runs
 * (bc_crawl_state_page_failed(), and the URLs dropped because their host
 * was given up as down or its robots.txt stayed unreachable), at the tail
 * of its host's queue with its retries reset, and let the hosts given up
 * start again (circuit closed, robots.txt asked again); the counters of
 * what was given up (frontier.retries_exhausted, frontier.reason.host_down,
 * frontier.reason.host_given_up, crawler.transient_given_up,
 * crawler.host_down_dropped, crawler.given_up_dropped) start from 0. Call after
 * bc_crawl_state_open(), before bc_crawl_state_frontier(). *n receives
 * how many URLs were queued again. Commits. BC_OK, BC_ERR_INVALID_ARG
 * (NULL, or the frontier made already), BC_ERR_IO, BC_ERR_CORRUPT.
 * O(URLs given up).
 */
enum bc_status bc_crawl_state_retry_failed(struct bc_crawl_state *state,
                                           uint64_t *n);

/* Set a counter of the caller's (name up to 63 bytes; e.g. "pages"),
 * saved with the next commit. BC_OK, BC_ERR_INVALID_ARG, BC_ERR_NOMEM. */
enum bc_status bc_crawl_state_counter_set(struct bc_crawl_state *state,
                                          const char *name, uint64_t value);

/* A counter's saved value, 0 when never set. */
uint64_t bc_crawl_state_counter_get(const struct bc_crawl_state *state,
                                    const char *name);

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

/* The --out file's length at the next commit. */
void bc_crawl_state_set_out_offset(struct bc_crawl_state *state,
                                   uint64_t offset);

/* The WARC writer's position (bc_warc_tell()) at the next commit: the
 * records before it belong to the pages committed with it. A position
 * that differs from the committed one makes the state pending. O(1). */
void bc_crawl_state_set_warc(struct bc_crawl_state *state,
                             const struct bc_warc_position *at);

/* Whether a commit is due: something was written since the last one (a
 * transaction is open, or the WARC position moved). O(1). */
bool bc_crawl_state_pending(const struct bc_crawl_state *state);

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
 * checkpoint, writing the filter (m/8 bytes) and its fsync. Returns
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

struct bc_frontier_store; /* bloomcrawl/frontier_store.h */

/* The frontier store hooks of this state (for a caller that creates its
 * own frontier; bc_crawl_state_frontier() sets them itself). */
void bc_crawl_state_store(struct bc_crawl_state *state, size_t window,
                          struct bc_frontier_store *out);

#ifdef __cplusplus
}
#endif

#endif /* BC_CRAWLER_CRAWL_STATE_H */
