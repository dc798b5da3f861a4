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
 * The embedder opens the state, gives it to the crawler (crawler.h:
 * config.state) and, for a crawl worker, to the workers (workers.h),
 * reads bc_crawl_state_info() to resume its own outputs, and closes the
 * state after freeing them. The crawler does the rest through the state's
 * private doors (crawler/state_int.h, not installed): it checks the
 * settings a resume may not change (crawler.h, PINNED SETTINGS), gets its
 * frontier from the state (created, or rebuilt on resume), and commits
 * each turn: a kill loses the uncommitted turn only, and the URLs handed
 * out and not recorded as fetched by the last commit are the crawl's "in
 * flight": a resume puts them back at the head of their host's queue and
 * counts them (refetched_after_restart).
 *
 * Durability: WAL with synchronous=NORMAL. A commit survives the process
 * being killed (the WAL is in the OS's page cache); a power loss or an OS
 * crash can lose the last commits (those since the last sync of the WAL,
 * at a checkpoint or a snapshot), never leave the database inconsistent,
 * never leave a snapshot that knows more than the database.
 *
 * The library never prints: every failure is a status, with a text
 * (bc_crawl_state_errmsg(), or the error record of bc_crawl_state_open()).
 * Not thread-safe: one state, one thread at a time. (The state runs its
 * checkpoints on a thread of its own, with a connection of its own; no
 * call of the caller's runs on it: docs/DESIGN.md section 10.)
 */
#ifndef BC_CRAWLER_CRAWL_STATE_H
#define BC_CRAWLER_CRAWL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"
#include "bloomcrawl/warc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this build writes and reads (meta "version"). */
#define BC_CRAWL_STATE_VERSION 4

/* A setting that may not change on resume, e.g. {"--warc", "a.warc"}. */
struct bc_crawl_state_option {
    const char *name;
    const char *value;
};

/* Why bc_crawl_state_open() (or bc_crawler_pin()) failed, for the
 * caller's message. */
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
 * or is an empty directory. fixed[0..count) are the caller's own settings
 * that may not change, those the library does not know (crawl gives its
 * --warc, --warc-max-size and a worker's --workers, --worker, --crawl-id):
 * recorded on creation, compared on resume (in order; the first
 * difference, or a name not recorded, is the error). The crawler's
 * configuration is pinned by the library itself when the crawler is made
 * (crawler.h, bc_crawler_pin()), which also refuses a recorded setting
 * that neither gives any more; names beginning with "--" other than those
 * of crawler.h's list are free for the caller. Checks crawl.db (PRAGMA
 * quick_check: O(size of the database)) and writes nothing to an
 * existing state (the crawler begins the run).
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
    /* From the open on (before the crawler builds its frontier): */
    uint64_t runs;          /* runs of this state, this one included (a
                               run is an open that built its frontier) */
    uint64_t refetched_now; /* URLs in flight at the last commit (a kill
                               left them unfinished), which the
                               crawler queues again */
    uint64_t refetched;     /* the same, over all runs, this one included */
    uint64_t out_offset;    /* the --out offset of the last commit */
    /* The WARC writer's position at the last commit (all zero when none
     * was committed): where bc_warc_open_at() resumes. */
    struct bc_warc_position warc;
    uint64_t queued;       /* URLs queued (in memory or not) */
    uint64_t journal;      /* URLs ever admitted (the journal's length) */
    uint64_t snapshot_pos; /* journal entries the snapshot covers */
    /* The time the state was open in the runs before this one, as of
     * their last commits (each commit records the runs before plus the
     * time since this open): a tool's total time across runs. */
    uint64_t elapsed_before_ms;
};

/* Fill *out (all zero for a NULL state). O(1). */
void bc_crawl_state_info(const struct bc_crawl_state *state,
                         struct bc_crawl_state_info *out);

/*
 * Queue again every URL given up to a transient fault in earlier runs
 * (retries exhausted, or dropped because its host was given up as down or
 * its robots.txt stayed unreachable), at the tail of its host's queue with
 * its retries reset, and let the hosts given up start again (circuit
 * closed, robots.txt asked again); the counters of what was given up
 * (frontier.retries_exhausted, frontier.reason.host_down,
 * frontier.reason.host_given_up, frontier.sitemap.transient,
 * crawler.transient_given_up, crawler.host_down_dropped,
 * crawler.given_up_dropped) start from 0.
 * Public because it is the embedder's decision about a state before any
 * crawler exists (crawl --retry-failed): call it after
 * bc_crawl_state_open(), before bc_crawler_create() builds the frontier.
 * *n receives how many URLs were queued again. Commits. BC_OK,
 * BC_ERR_INVALID_ARG (NULL, or the frontier made already), BC_ERR_IO,
 * BC_ERR_CORRUPT. O(URLs given up).
 */
enum bc_status bc_crawl_state_retry_failed(struct bc_crawl_state *state,
                                           uint64_t *n);

/*
 * Queue again every sitemap of the crawl that was fetched (done) in an
 * earlier run, so that this run reads it again: a recrawl run (crawl
 * --revisit) sees the <lastmod>s written since, and the pages listed as
 * changed since their last fetch become due (DESIGN 11.3). A sitemap
 * given up to transient faults waits for bc_crawl_state_retry_failed(),
 * as its host's URLs do. Call it after bc_crawl_state_open(), before
 * bc_crawler_create() builds the frontier. *n receives how many were
 * queued again. Commits. BC_OK, BC_ERR_INVALID_ARG (NULL, or the frontier
 * made already), BC_ERR_IO. O(sitemaps).
 */
enum bc_status bc_crawl_state_sitemaps_again(struct bc_crawl_state *state,
                                             uint64_t *n);

/* The length of the caller's own output file (crawl's --out) at the next
 * commit: bc_crawl_state_info()'s out_offset on resume, where the caller
 * cuts the file back to. O(1). */
void bc_crawl_state_set_out_offset(struct bc_crawl_state *state,
                                   uint64_t offset);

/* A crawl state seen from outside, as of its last commit
 * (bc_crawl_state_peek()). Counts are over all runs. */
struct bc_crawl_state_summary {
    /* A process holds the state (DIR/lock), and its pid (the lock file's;
     * 0 when none does). */
    bool running;
    long pid;
    uint64_t runs;       /* runs of the state (meta runs) */
    uint64_t pages;      /* pages fetched (the counter crawler.pages) */
    uint64_t errors;     /* fetches ended by an error (crawler.errors.*) */
    uint64_t given_up;   /* URLs given up to transient faults */
    uint64_t queued;     /* URLs waiting (a resume would queue them) */
    uint64_t in_flight;  /* URLs handed out and not done at the commit */
    uint64_t admitted;   /* URLs ever admitted (the journal's length) */
    uint64_t hosts;      /* hosts known */
    uint64_t elapsed_ms; /* the time the state was open, all runs */
    /* Wall clock, ms since 1970: the state's creation, and its last
     * commit (0 if unknown: last committed by a build before issue 22). */
    uint64_t created_ms;
    uint64_t committed_ms;
};

/*
 * Read the state in dir without opening it for a crawl: crawl.db opened
 * read-only (SQLite's shared read lock of WAL mode, which stops no
 * writer), DIR/lock probed, not taken (a shared lock tried without
 * waiting and dropped at once; a crawl opening the state at that moment
 * waits the microseconds out). So it may run beside the crawl that has
 * the state open, as often as one likes, and changes nothing in dir
 * (but for SQLite's side files: a stopped state gets an empty
 * crawl.db-wal and its index crawl.db-shm, as any reader makes them).
 * The numbers are those of one commit: at most one turn of the crawl
 * loop, or 10 ms, old. No integrity check (bc_crawl_state_open() has one).
 * Returns BC_OK (*out filled), or with err->text saying why and *out
 * unchanged: BC_ERR_NOT_FOUND (no dir), BC_ERR_FORMAT (not a crawl
 * state), BC_ERR_VERSION, BC_ERR_IO (cannot read), BC_ERR_NOMEM,
 * BC_ERR_INVALID_ARG (a NULL). O(queued URLs + hosts): the queue is
 * counted, a range of an index per host.
 */
enum bc_status bc_crawl_state_peek(const char *dir,
                                   struct bc_crawl_state_summary *out,
                                   struct bc_crawl_state_error *err);

#ifdef __cplusplus
}
#endif

#endif /* BC_CRAWLER_CRAWL_STATE_H */
