/*
 * state.c - the crawl state: the frontier's store in SQLite, the seen-test's
 * snapshot, the lock. A crawl that survives kill -9.
 *
 * THE PROBLEM
 * A crawl of days is stopped, killed and rebooted, and its frontier
 * outgrows memory. Everything that decides what is fetched next (the
 * seen-test, the host queues, the robots.txt outcomes, the budgets, the
 * counters) must be on disk, consistent at every instant a kill can come,
 * and cheap to keep there: a page costs milliseconds to fetch, its
 * bookkeeping must cost microseconds.
 *
 * THE IDEA
 * One SQLite database in WAL mode holds the journal of every URL admitted,
 * in admission order, and per host a cursor into it:
 *
 *     urls:   id (admission order) | host | seq (FIFO position) | url ...
 *             | referrer (the page it was found on; NULL for a seed)
 *             | payload (the caller's bytes, bc_frontier_add_payload();
 *             NULL for none)
 *     hosts:  id | origin | robots.txt outcome ... | cursor
 *             | delay_override (bc_frontier_set_host_delay(), ms; 0: none)
 *     flight: seq | host | requeued      (handed out, not completed)
 *     host_stats: origin | data          (the crawler's per-host counters,
 *                                          a blob it defines, per commit)
 *     sitemaps: url | scope | level | named | done | retries (sitemap
 *             jobs; done 2: given up to transient faults, for
 *             --retry-failed)
 *     outbox: id | worker | url | referrer | depth | redirects | seed
 *             (URLs for other crawl workers, until they were sent)
 *     circuits: host | state | failures | failing_since | open_until
 *             | backoff | down | down_lost | retry_until (a host's
 *             circuit breaker and the end of its wait for a retry, times
 *             wall-clock ms)
 *     failed: seq | host  (URLs given up to transient faults: retries
 *             exhausted, or dropped with their host down or its robots.txt
 *             unreachable; bc_crawl_state_retry_failed() queues them again)
 *
 * A host's queue is its URLs with seq > cursor, in seq order (in the index
 * urls_queue, a range per generation of seqs: THE QUEUE'S GENERATIONS),
 * after the URLs requeued at its head by a resume.
 * The frontier hands a host's URLs out in exactly that order, so a
 * hand-out only moves the cursor (in memory, written at commit) and adds
 * a flight row; a completion deletes it. A URL row is rewritten only when
 * its URL is queued again (its seq and retries: S_REQUEUE, I2).
 *
 * The frontier tells the store of each change (frontier.h's hooks); the
 * changes between two commits (a turn of the crawl loop, or a few turns
 * that handed nothing out: crawler.c, THE TURN'S COMMIT) go into one
 * transaction, and a commit makes them durable together. So a page's
 * completion (its flight row deleted) and the admission of its links (new
 * rows) are kept or lost together, and a URL handed out is committed as
 * in flight before its transfer starts: after a kill, the flight rows are
 * exactly the transfers that may have happened without being recorded,
 * and a resume queues them again at the head of their host's queue. At
 * most the crawl's concurrency of them per kill.
 *
 * The seen-test's Bloom filter is too big to write per commit (it is m/8
 * bytes, written whole). It is saved now and then, right after a commit,
 * with bc_seen_save (a temporary file, fsync, rename): at that moment the
 * filter holds exactly the committed admissions, ids 1..P, and P is
 * recorded (meta snapshot_pos) after the file is in place. A resume loads
 * the snapshot and replays the journal's URLs after P. A kill between the
 * rename and the recording of P replays a few admissions twice, which a
 * Bloom filter absorbs; the other order, never.
 *
 * CRASH-CONSISTENCY INVARIANTS
 * What a kill at any instant may rely on; the code that keeps each one
 * cites it ("I3").
 *   I1 A flight row exists exactly while a job is handed out and not
 *      completed: added when a URL leaves its queue to be fetched
 *      (hook_left), deleted when it completes (page_done, page_failed) or
 *      is queued again (hook_queued's requeue); a resume's rows stay,
 *      marked requeued, until handed out again or dropped.
 *   I2 The journal only grows: a URL row is inserted once, at its
 *      admission, and its id is its admission order; afterwards only its
 *      seq and retries change, when it is queued again (S_REQUEUE).
 *   I3 A host's queue is its requeued flight rows, oldest first, then
 *      its URL rows with seq > cursor in seq order; the frontier hands
 *      them out in that order, so the cursor only moves forward, to the
 *      seq of the URL that left.
 *   I4 Every write of the hooks between two commits is in the
 *      transaction ensure_txn() opened, and bc_crawl_state_commit() adds
 *      the cursors, counters, next_seq, the --out offset and the WARC
 *      position and commits all of it or nothing (a failure is sticky:
 *      nothing later is committed). So a page's completion and its links
 *      are durable together, and a URL handed out is in flight on disk
 *      once the turn that handed it out commits, before its transfer
 *      starts (crawler.c commits in every turn that hands one out).
 *   I5 bloom.snap holds every admission whose id is at most
 *      snapshot_pos: the position moves only after the file is in place,
 *      and a resume replays the journal after it.
 *   I6 bloom.snap knows no admission a power loss could take from
 *      crawl.db: the WAL is synced before it is written.
 *   I7 A resume queues again exactly the flight rows, at the head of
 *      their hosts' queues: a kill costs at most the transfers in flight,
 *      and refetched counts those (not the rows an earlier resume had
 *      already requeued and no run handed out since).
 *
 * BOUNDED MEMORY
 * The frontier keeps a window of each host's queue in memory and asks the
 * store for more (refill) when it runs empty: range scans of the index
 * urls_queue after the cursor, one per generation (below). Per host the
 * store keeps its row id, cursor, requeued URLs and two counters in
 * memory (queue length, admissions for the budget); the counters are not
 * written per commit (that would double the writes) but counted again on
 * resume: the queue lengths in one scan of urls_queue, the admissions by
 * a scan of the journal when a host budget is set.
 *
 * THE QUEUE'S GENERATIONS
 * The index urls_queue keeps every host's FIFO. Until format version 4 it
 * was (host, seq): each host's queue one range, so an admission went to
 * the end of its host's range, and the 1,000 admissions of a commit,
 * spread over as many hosts, landed on as many places of the index. Once
 * the index outgrew the page cache (64 MiB; urls_queue is about 150 MiB
 * at 10^7 URLs) each place was a leaf read back from the OS, written whole
 * into the WAL (8 KiB for a 16-byte entry) and copied again by a
 * checkpoint: bench_state at 10^7 URLs over 10^5 hosts made 3.4 million
 * pwrite and 2.1 million pread calls of a page (about 300 and 190 a
 * commit), and the kernel's copies were a third of its time.
 *
 * Now the index leads with a URL's generation, its seq >> 18 (generation
 * g holds the seqs g x 2^18 to (g + 1) x 2^18 - 1): (generation, host,
 * seq). A seq only grows (next_seq, for an admission and a requeue
 * alike), so every write lands in the last generation, a slice of the
 * index of at most 2^18 entries (about 5 MiB) that stays in the cache,
 * and a commit touches a few of its leaves: the same bench_state made
 * 0.67 million pwrite and 0.4 million pread calls, and an admission took
 * 5.9 us of CPU instead of 8.8 (medians of 3 runs each; 1.44x the adds a
 * second; bench/results/state-analysis.md). The
 * order is kept: every seq of generation g is below those of g + 1, so a
 * host's queue is its range in the cursor's generation, then its range
 * in each later one. What that costs is on the reading side: a refill
 * seeks one range per generation from the cursor's until it has its URLs
 * or has seen all the host's queued ones (h->queued), about 4 for a
 * window of 8 in bench_state at 10^7 (2.6 URLs of a host a generation),
 * where one seek did; and a host's queue is no longer one range to
 * count, so the resume counts all queues in one scan of the index from
 * the smallest cursor's generation on (count_queued()), and a peek in one
 * scan of it all (peek_queued(): 1.5 s at 10^7 URLs where the range
 * counts took 0.6-0.9). 2^18: each
 * generation must fit in the cache with room to spare, and the fewer
 * generations a queue spans the cheaper its refills (2^20, one run at
 * 10^7 on a busier machine, admitted 130,045 URLs/s at 6.15 us an add
 * against 2^18's 185,125 at 5.45: not taken, not settled either). A
 * state of
 * version 3 is migrated at its first open (migrate_queue(): the index
 * rebuilt, the rows unchanged). That transaction holds the whole new
 * index, the one exception to A BOUNDED WAL: the WAL is checkpointed and
 * cut to 0 bytes right after it, and the disk needs room for it once
 * (172 MiB at 10^7 URLs; the open took 16.5 s instead of 3).
 *
 * DURABILITY
 * synchronous=NORMAL: a commit appends to the WAL without an fsync. A
 * killed process loses nothing committed (the OS has the pages); a power
 * loss or OS crash can lose the commits since the WAL was last synced
 * (by a checkpoint: the checkpointer's, every WAL_BACKGROUND_STEP pages
 * of WAL, and the bound's at WAL_AUTOCHECKPOINT pages; and by every
 * snapshot, which begins with it), and never corrupts the database. The
 * snapshot is taken after the WAL's sync, so it never knows admissions
 * that a power loss could take from the database: such URLs would be
 * refused as seen and never fetched. The snapshot syncs the WAL and does
 * not checkpoint it: the sync is all I6 needs, and the checkpoint's copy
 * into crawl.db, crawl.db's sync and the WAL's truncation (a TRUNCATE
 * checkpoint until issue 25) cost the loop 3 more waits for the disk at
 * every snapshot, and a fourth at the next commit (the restarted WAL's
 * header sync).
 *
 * CHECKPOINTS OFF THE LOOP
 * A checkpoint syncs the WAL (fdatasync), copies its pages into crawl.db
 * and syncs that. On the PostgreSQL manual's crawl (1,170 pages, about a
 * WAL page per page fetched, 0.165 s bare) SQLite's own, at 1,024 pages
 * of WAL, stopped the loop for 19 ms (under strace: the WAL's fdatasync
 * 17.5 ms, crawl.db's 1 ms), and cutting the WAL's file back to 8 MiB at
 * its restart, its pages still unsynced, 11 ms more. So the
 * state checkpoints from a thread of its own, the checkpointer, on a
 * connection of its own: the loop's connection has no autocheckpoint but
 * a hook (wal_hook()) that SQLite calls after each commit with the pages
 * in the WAL, and it wakes the checkpointer every WAL_BACKGROUND_STEP
 * (256) pages. A PASSIVE checkpoint never blocks the writer: the loop
 * goes on committing while the checkpointer syncs and copies, and what a
 * kill or a power loss can cost is what it was (the checkpointer syncs
 * before it copies, as every checkpoint does). The loop still
 * checkpoints itself at WAL_AUTOCHECKPOINT pages, as SQLite did, after
 * waiting for the checkpointer's checkpoint in progress (ckpt_mu: the two
 * never run at once, so neither sees SQLITE_BUSY from the other), which
 * keeps the WAL's bound below; by then the checkpointer has copied and
 * synced most pages, so that one is short. The WAL starts again from its
 * start only after a checkpoint copied all of it and before the next
 * commit: a loop that commits during the checkpointer's work keeps the
 * WAL growing to the bound's checkpoint, which is then the one that lets
 * it restart. A checkpointer that cannot be started (a thread, a
 * connection) leaves every checkpoint to the loop, as before.
 *
 * A BOUNDED WAL
 * A commit appends its pages to crawl.db-wal; a checkpoint copies them
 * into crawl.db, and the next commit writes the WAL from its start again,
 * but the file keeps the largest size it ever had unless something cuts
 * it. With SQLite's checkpoint every 16,384 pages (128 MiB of 8 KiB
 * pages) and nothing to cut it, a fast crawl kept a ~135 MB WAL: after a
 * full disk, the resume (which copies the WAL into crawl.db before it
 * can remove it) needed over 64 MiB free. Now two things bound it: the
 * loop checkpoints at WAL_AUTOCHECKPOINT pages (1,024: 8 MiB;
 * CHECKPOINTS OFF THE LOOP), and the file is cut back to WAL_SIZE_LIMIT
 * (8 MiB) whenever the WAL restarts (journal_size_limit). So the WAL
 * holds at most 1,024 pages plus the last commit's (W = (1,024 + T) x
 * (8,192 + 24) + 32 bytes, T the pages of one commit), whatever the
 * crawl's rate or size; docs/DESIGN.md section 10 has the free space a
 * resume needs. (Until issue 25 the checkpoint of every snapshot was
 * also a TRUNCATE, which cut the file to 0 bytes every 2 s of a crawl:
 * freeing 8 MiB of blocks cost the loop 5-16 ms on ext4, and the bound
 * holds without it.)
 *
 * THE END OF A CRAWL
 * A clean end commits, takes a snapshot (the WAL synced, bloom.snap
 * written, its position committed) and closes, and the close does not
 * checkpoint a WAL that holds anything (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE):
 * crawl.db-wal and its index crawl.db-shm stay beside crawl.db, the WAL
 * at most W bytes, and the next open reads it (SQLite rebuilds the index
 * from it, as after a kill). An empty WAL (an open that wrote nothing:
 * a state refused) SQLite removes at the close with its index, with no
 * sync, so that state stays as it was. SQLite's checkpoint at the last
 * close and the WAL's removal were 2 syncs and the freeing of up to 8 MiB
 * of blocks; with the snapshot's TRUNCATE checkpoint and the restarted
 * WAL's header sync, the end of a crawl of the PostgreSQL manual (0.2 s)
 * waited for the disk in 12 calls: 3.8 ms on a quiet disk, 12-30 ms on a
 * busy one. It waits in 3 now, the WAL's sync and bloom.snap's two: 2.8
 * ms on the quiet disk, 4-9 ms on the busy one
 * (bench/results/state-analysis.md). What a kill or a power loss can
 * cost is unchanged: every commit the snapshot covers was synced before
 * it. crawl.db alone is not the state (it never was while a crawl
 * ran): a page the WAL holds is read from the WAL, so damage to
 * crawl.db's older copy of it is harmless (a checkpoint overwrites it)
 * and is not refused; damage to a page read from crawl.db is (CHECKS).
 *
 * CHECKS
 * crawl.db carries application_id 0x62437374 ("bCst") and user_version
 * BC_CRAWL_STATE_VERSION: another SQLite file is refused as not a crawl
 * state, another version as incompatible (version 2 added urls.referrer
 * and host_stats, version 3 the outbox: an older state is refused with a
 * message saying which version made it; version 4 THE QUEUE'S
 * GENERATIONS: a state of version 3 is migrated at its open, after the
 * checks below, in one transaction; the
 * tables sitemaps, circuits, failed, payload_log, validators,
 * fingerprints and fetched came later
 * and are made when missing, the columns hosts.delay_override and urls.payload added, so no
 * version was needed). PRAGMA quick_check runs before anything is written (a
 * truncated or byte-flipped database is refused).
 * bloom.snap carries its own checksum (bc_bloom_load).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "bloomcrawl/crawl_state.h"
#include "bloomcrawl/frontier_store.h"
#include "bloomcrawl/seen.h"
#include "bc_clock.h"
#include "state_int.h"

#define APP_ID       0x62437374 /* "bCst" */
#define DB_PAGE_SIZE "8192"
/* The WAL's bound (A BOUNDED WAL above): the loop's own checkpoint at
 * this many pages of WAL, and the size its file is cut back to when the
 * WAL restarts (1,024 pages of 8 KiB). */
#define WAL_AUTOCHECKPOINT 1024
#define WAL_SIZE_LIMIT     "8388608"
/* The checkpointer's step (CHECKPOINTS OFF THE LOOP): it is woken each
 * time the WAL has grown by this many pages since it was last woken. */
#define WAL_BACKGROUND_STEP 256
/* THE QUEUE'S GENERATIONS (above): a URL's generation is its seq >>
 * QUEUE_GEN_BITS, the first column of the index urls_queue; SEQ_GEN is
 * that expression as the schema and the statements write it (SQLite uses
 * an index on an expression only for the same expression). */
#define QUEUE_GEN_BITS 18
#define SQL_INT_(x)    #x
#define SQL_INT(x)     SQL_INT_(x)
#define GEN_OF(x)      "(" x " >> " SQL_INT(QUEUE_GEN_BITS) ")"
#define SEQ_GEN        GEN_OF("seq")
/* The format version that made urls_queue an index of generations; an
 * older state of the version before it is migrated at its open. */
#define QUEUE_GEN_VERSION 4
_Static_assert(QUEUE_GEN_VERSION == BC_CRAWL_STATE_VERSION,
               "migrate_queue() records QUEUE_GEN_VERSION");
/* A host as the store keeps it in memory. */
struct shost {
    UT_hash_handle hh;
    sqlite3_int64 id;
    uint64_t admitted, queued; /* kept in memory, counted on resume */
    sqlite3_int64 cursor;      /* seq of the last URL that left the queue */
    struct shost *next_dirty;  /* cursor moved since the last commit */
    bool dirty;
    /* URLs in flight at the last kill, queued again at the head, oldest
     * first: seqs requeued[requeued_head .. requeued_len). */
    sqlite3_int64 *requeued;
    size_t requeued_head, requeued_len, requeued_cap;
    size_t origin_len;
    char origin[];
};

/* A counter of the caller's (or the frontier's, "frontier.*"). */
struct counter {
    UT_hash_handle hh;
    uint64_t value;
    bool dirty;
    char name[64];
};

/* The counters of one table of totals given to bc_crawl_state_save_totals()
 * (its group and rows), in the order of its elements: after the first
 * call, each commit compares the values with these and forms no key and
 * hashes no name (forming and finding the crawler's and the frontier's
 * 120 keys was 78 K instructions a commit, a third of it). The modules'
 * tables are static: the same rows at every call. */
struct totals {
    const struct bc_counter *table;
    size_t rows;
    char group[16];
    struct counter **slot;
    size_t slots;
};
#define TOTALS_CACHED 4 /* tables: the crawler's and the frontier's */

/* The meta rows every commit keeps (bc_crawl_state_commit()), and the
 * value each had at the last commit that wrote it: a row is written only
 * when its value changed (the WARC's and --out's positions, runs and
 * refetched seldom do), 4.5 K instructions a row saved. */
enum meta_id {
    META_NEXT_SEQ,
    META_OUT_OFFSET,
    META_WARC_SEQ,
    META_WARC_OFFSET,
    META_WARC_RECORDS,
    META_RUNS,
    META_REFETCHED,
    META_COMMITTED
};
static const char *const meta_key[META_COMMITTED] = {
    "next_seq",     "out_offset", "warc_seq",  "warc_offset",
    "warc_records", "runs",       "refetched",
};
struct meta_value {
    sqlite3_int64 value; /* written in this transaction, or committed */
    bool known;          /* value is committed */
    bool pending;        /* value is written in the open transaction */
};

enum stmt_id {
    S_INS_URL,
    S_REQUEUE,
    S_FLIGHT_ADD,
    S_FLIGHT_DEL,
    S_FLIGHT_TAKEN,
    S_REFILL,
    S_ONE,
    S_HOST_CURSOR,
    S_INS_HOST,
    S_HOST_ROBOTS,
    S_SET_META,
    S_INS_SEED,
    S_SET_COUNTER,
    S_SET_HOST_STATS,
    S_OUTBOX_ADD,
    S_OUTBOX_READ,
    S_OUTBOX_DEL,
    S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
    "INSERT INTO urls(host, seq, depth, redirects, retries, url, referrer, "
    "payload) VALUES(?, ?, ?, ?, ?, ?, ?, ?)",
    "UPDATE urls SET seq = ?1, retries = ?2 WHERE " SEQ_GEN
    " = " GEN_OF("?4") " AND host = ?3 AND seq = ?4",
    "INSERT INTO flight(seq, host, requeued) VALUES(?, ?, 0)",
    "DELETE FROM flight WHERE seq = ?",
    "UPDATE flight SET requeued = 0 WHERE seq = ?",
    "SELECT seq, url, depth, redirects, retries, referrer, payload FROM urls "
    "WHERE " SEQ_GEN " = ?1 AND host = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4",
    "SELECT seq, url, depth, redirects, retries, referrer, payload FROM urls "
    "WHERE " SEQ_GEN " = " GEN_OF("?2") " AND host = ?1 AND seq = ?2",
    "UPDATE hosts SET cursor = ? WHERE id = ?",
    "INSERT INTO hosts(origin) VALUES(?)",
    "UPDATE hosts SET robots = ?, robots_body = ?, robots_expires = ?, "
    "robots_failures = ?, given_up_lost = ? WHERE id = ?",
    "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)",
    "INSERT OR IGNORE INTO seeds(url) VALUES(?)",
    "INSERT OR REPLACE INTO counters(name, value) VALUES(?, ?)",
    "INSERT OR REPLACE INTO host_stats(origin, data) VALUES(?, ?)",
    "INSERT INTO outbox(worker, url, referrer, depth, redirects, seed) "
    "VALUES(?, ?, ?, ?, ?, ?)",
    "SELECT id, worker, url, referrer, depth, redirects, seed FROM outbox "
    "WHERE id > ? ORDER BY id LIMIT ?",
    "DELETE FROM outbox WHERE id <= ?",
};

/* The checkpointer (CHECKPOINTS OFF THE LOOP): a thread with its own
 * connection. mu guards wanted and stop; ckpt_mu is held through every
 * checkpoint of either connection, so that one never finds the other's
 * running (SQLITE_BUSY) and the bound's checkpoint waits for it. */
struct checkpointer {
    pthread_t thread;
    pthread_mutex_t mu, ckpt_mu;
    pthread_cond_t cv;
    sqlite3 *db;
    bool wanted, stop, started;
    int woken_at; /* the WAL's pages when it was last woken */
};

struct bc_crawl_state {
    char *dir;
    int lock_fd;
    sqlite3 *db;
    struct checkpointer ckpt;
    sqlite3_stmt *stmt[S_COUNT];
    bool in_txn;
    bool failed;     /* a write failed: only close is left */
    uint64_t writes; /* ensure_txn() calls: bc_crawl_state_writes() */
    char errmsg[512];
    struct shost *hosts;      /* by origin */
    struct shost *dirty;      /* hosts whose cursor moved */
    struct counter *counters; /* by name */
    struct totals totals[TOTALS_CACHED];
    size_t totals_count;
    struct meta_value meta[META_COMMITTED]; /* commit_meta() */
    sqlite3_stmt *payload_put; /* prepared at its first use (PAYLOADS) */
    /* Prepared at their first use (VALIDATORS). */
    sqlite3_stmt *validators_put, *validators_find;
    sqlite3_stmt *fetched_put, *fetched_find;
    sqlite3_stmt *fingerprint_put; /* prepared at its first use */
    sqlite3_int64 next_seq;        /* the next queue position given out */
    uint64_t journal, committed_journal, snapshot_pos;
    uint64_t out_offset, runs, refetched, refetched_now, queued;
    struct bc_warc_position warc; /* the WARC writer's, at the next commit */
    bool warc_dirty;              /* warc changed since the last commit */
    bool resumed, frontier_made;
    /* A snapshot of this open holds every commit since: the next one has
     * nothing to add (bc_crawl_state_snapshot()). */
    bool snapshot_current;
    bool run_begun;      /* begin_run() queued refetched_now again */
    uint64_t seen_clock; /* bc_crawl_state_set_seen_clock(), 0: none */
    uint64_t outbox;     /* rows in the outbox, committed or not */
    /* The names given to bc_crawl_state_open() as fixed, for the check of
     * recorded settings no longer given (bc_crawl_state_pin()). */
    char **fixed_names;
    size_t fixed_count;
    bool first_run; /* no run began before this open: pins are recorded */
    /* The time the state was open in the runs before this one (as of
     * their last commits), and when this open was made (mono_ms()). */
    uint64_t elapsed_before, opened_ms;
};

static const char schema_sql[] =
    "PRAGMA application_id = 1648587636;" /* APP_ID */
    "PRAGMA user_version = 4;"            /* BC_CRAWL_STATE_VERSION */
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
    "CREATE TABLE config(name TEXT PRIMARY KEY, value TEXT NOT NULL)"
    " WITHOUT ROWID;"
    "CREATE TABLE seeds(url TEXT NOT NULL UNIQUE);"
    "CREATE TABLE hosts(id INTEGER PRIMARY KEY, origin TEXT NOT NULL UNIQUE,"
    " robots INTEGER NOT NULL DEFAULT 0, robots_body BLOB,"
    " robots_expires INTEGER, robots_failures INTEGER NOT NULL DEFAULT 0,"
    " given_up_lost INTEGER NOT NULL DEFAULT 0,"
    " cursor INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE urls(id INTEGER PRIMARY KEY, host INTEGER NOT NULL,"
    " seq INTEGER NOT NULL, depth INTEGER NOT NULL,"
    " redirects INTEGER NOT NULL, retries INTEGER NOT NULL,"
    " url TEXT NOT NULL, referrer TEXT, payload BLOB);"
    "CREATE UNIQUE INDEX urls_queue ON urls(" SEQ_GEN ", host, seq);"
    "CREATE TABLE flight(seq INTEGER PRIMARY KEY, host INTEGER NOT NULL,"
    " requeued INTEGER NOT NULL);"
    "CREATE VIEW queue AS SELECT u.* FROM urls u JOIN hosts h"
    " ON h.id = u.host WHERE u.seq > h.cursor"
    " OR u.seq IN (SELECT seq FROM flight WHERE requeued = 1);"
    "CREATE TABLE counters(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    " WITHOUT ROWID;"
    "CREATE TABLE host_stats(origin TEXT PRIMARY KEY, data BLOB NOT NULL)"
    " WITHOUT ROWID;"
    /* AUTOINCREMENT: an id is never given twice, even once the rows
     * before it were deleted, so a reader's "after id" stays valid. */
    "CREATE TABLE outbox(id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " worker INTEGER NOT NULL, url TEXT NOT NULL, referrer TEXT,"
    " depth INTEGER NOT NULL, redirects INTEGER NOT NULL,"
    " seed INTEGER NOT NULL);";
_Static_assert(BC_CRAWL_STATE_VERSION == 4,
               "schema_sql and create_db() write the format version");

/* ---- errors ---------------------------------------------------------- */

static void set_err(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

/*
 * The errno of a short or failed write: the unix VFS reports a write cut
 * short as SQLITE_FULL without an errno, and on a regular file that is a
 * full disk (ENOSPC) or the file-size limit (EFBIG). Disk full when dir's file
 * system has less than a page left (for root, the blocks reserved for
 * root count as free), else the limit when one is set; 0: neither.
 */
static int short_write_errno(const char *dir)
{
    struct statvfs fs;
    if (dir && statvfs(dir, &fs) == 0) {
        uint64_t free_blocks = geteuid() == 0 ? fs.f_bfree : fs.f_bavail;
        if (free_blocks * fs.f_frsize < 8192 + 24)
            return ENOSPC;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        return EFBIG;
    return 0;
}

/*
 * The system's reason for a failed SQLite call on the state in dir, or
 * NULL: the errno of an I/O error ("disk I/O error" says nothing of a
 * file-size limit or a permission), or for SQLITE_FULL and a failed write
 * whose errno SQLite did not keep (it keeps errno only as it is when the
 * statement ends), the short write's (short_write_errno()).
 */
static const char *db_reason(sqlite3 *db, const char *dir)
{
    int ext = sqlite3_extended_errcode(db), rc = ext & 0xff;
    int sys = sqlite3_system_errno(db);
    if (!sys && (rc == SQLITE_FULL || ext == SQLITE_IOERR_WRITE))
        sys = short_write_errno(dir);
    if ((rc == SQLITE_FULL || rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN) &&
        sys)
        return strerror(sys);
    return NULL;
}

/* SQLite's text of the last failure, with the system's reason when there
 * is one, into buf: "database or disk is full (No space left on device)".
 * Returns buf. */
static const char *db_text(struct bc_crawl_state *s, char *buf, size_t cap)
{
    const char *why = db_reason(s->db, s->dir);
    snprintf(buf, cap, "%s%s%s%s", sqlite3_errmsg(s->db), why ? " (" : "",
             why ? why : "", why ? ")" : "");
    return buf;
}

/* A failed SQLite call: its text, with the system's reason, into errmsg;
 * BC_ERR_IO, or NOMEM. */
static enum bc_status db_fail(struct bc_crawl_state *s, const char *what)
{
    int rc = sqlite3_extended_errcode(s->db);
    char text[320];
    set_err(s->errmsg, sizeof(s->errmsg), "crawl.db: %s: %s", what,
            db_text(s, text, sizeof(text)));
    return rc == SQLITE_NOMEM ? BC_ERR_NOMEM : BC_ERR_IO;
}

/* What bloom.snap's save or load failed with: errno's text for an I/O
 * error ("bloom.snap: Permission denied"), the library's otherwise. */
static const char *snap_reason(enum bc_status st, int err)
{
    return st == BC_ERR_IO && err ? strerror(err) : bc_strerror(st);
}

static uint64_t wall_ms(void)
{
    return bc_wall_ms();
}

/* Milliseconds on the monotonic clock: durations within one run. */
static uint64_t mono_ms(void)
{
    return bc_mono_ms();
}

/* ---- small SQL helpers ----------------------------------------------- */

static enum bc_status exec(struct bc_crawl_state *s, const char *sql)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, sql);
    return BC_OK;
}

/* Run a prepared statement that returns no rows, and reset it; a
 * failure is reported as writing what. */
static enum bc_status step_done(struct bc_crawl_state *s, sqlite3_stmt *q,
                                const char *what)
{
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    if (rc != SQLITE_DONE)
        return db_fail(s, what);
    return BC_OK;
}

static enum bc_status run(struct bc_crawl_state *s, enum stmt_id id)
{
    return step_done(s, s->stmt[id], "write");
}

/* A row written with its page (payloads, validators, fetched,
 * fingerprints): a failure marks the state failed. */
static enum bc_status write_row(struct bc_crawl_state *s, sqlite3_stmt *q,
                                const char *table)
{
    enum bc_status st = step_done(s, q, table);
    if (st != BC_OK)
        s->failed = true;
    return st;
}

/* Open the transaction the hooks write in, if none is: the turn's one
 * transaction (I4); after a failure none is opened again. */
static enum bc_status ensure_txn(struct bc_crawl_state *s)
{
    if (s->failed)
        return BC_ERR_IO;
    s->writes++;
    if (s->in_txn)
        return BC_OK;
    enum bc_status st = exec(s, "BEGIN");
    if (st == BC_OK)
        s->in_txn = true;
    else
        s->failed = true;
    return st;
}

static enum bc_status set_meta(struct bc_crawl_state *s, const char *key,
                               sqlite3_int64 value)
{
    sqlite3_stmt *st = s->stmt[S_SET_META];
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, value);
    return run(s, S_SET_META);
}

/* Meta row id at value in the open transaction, unless the last commit
 * wrote it with that value already. */
static enum bc_status commit_meta(struct bc_crawl_state *s, enum meta_id id,
                                  sqlite3_int64 value)
{
    struct meta_value *m = &s->meta[id];
    if ((m->known || m->pending) && m->value == value)
        return BC_OK;
    enum bc_status st = set_meta(s, meta_key[id], value);
    if (st == BC_OK) {
        m->value = value;
        m->known = false;
        m->pending = true;
    }
    return st;
}

/* A meta value as an integer; def when absent. */
static sqlite3_int64 get_meta(struct bc_crawl_state *s, const char *key,
                              sqlite3_int64 def)
{
    sqlite3_stmt *st;
    sqlite3_int64 v = def;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?", -1,
                           &st, NULL) != SQLITE_OK)
        return def;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* ---- hosts and counters in memory ------------------------------------ */

static struct shost *shost_new(struct bc_crawl_state *s, sqlite3_int64 id,
                               const char *origin, size_t len)
{
    struct shost *h = calloc(1, sizeof(*h) + len + 1);
    if (!h)
        return NULL;
    h->id = id;
    memcpy(h->origin, origin, len);
    h->origin_len = len;
    HASH_ADD_KEYPTR(hh, s->hosts, h->origin, len, h);
    if (h->hh.tbl == NULL) {
        free(h);
        return NULL;
    }
    return h;
}

/* The host of an origin, its row inserted when new; NULL on failure
 * (s->errmsg says why). */
static struct shost *host_of(struct bc_crawl_state *s, const char *origin,
                             size_t len)
{
    struct shost *h;
    HASH_FIND(hh, s->hosts, origin, len, h);
    if (h)
        return h;
    sqlite3_stmt *st = s->stmt[S_INS_HOST];
    sqlite3_bind_text(st, 1, origin, (int)len, SQLITE_STATIC);
    if (run(s, S_INS_HOST) != BC_OK)
        return NULL;
    h = shost_new(s, sqlite3_last_insert_rowid(s->db), origin, len);
    if (!h)
        set_err(s->errmsg, sizeof(s->errmsg), "out of memory");
    return h;
}

static struct counter *counter_find(const struct bc_crawl_state *s,
                                    const char *name)
{
    struct counter *c;
    HASH_FIND_STR(s->counters, name, c);
    return c;
}

static enum bc_status counter_put(struct bc_crawl_state *s, const char *name,
                                  uint64_t value, bool dirty)
{
    size_t len = strlen(name);
    if (len >= sizeof(((struct counter *)0)->name))
        return BC_ERR_INVALID_ARG;
    struct counter *c = counter_find(s, name);
    if (!c) {
        c = calloc(1, sizeof(*c));
        if (!c)
            return BC_ERR_NOMEM;
        memcpy(c->name, name, len + 1);
        HASH_ADD_STR(s->counters, name, c);
        if (c->hh.tbl == NULL) {
            free(c);
            return BC_ERR_NOMEM;
        }
    }
    if (c->value != value || !dirty) {
        c->value = value;
        c->dirty = c->dirty || dirty;
    }
    return BC_OK;
}

/* ---- the frontier's store hooks -------------------------------------- */

static void mark_dirty(struct bc_crawl_state *s, struct shost *h)
{
    if (h->dirty)
        return;
    h->dirty = true;
    h->next_dirty = s->dirty;
    s->dirty = h;
}

/* Run a statement of seq (and perhaps host) bindings; failure sticky. */
static enum bc_status run_seq(struct bc_crawl_state *s, enum stmt_id id,
                              sqlite3_int64 seq, const struct shost *h)
{
    sqlite3_bind_int64(s->stmt[id], 1, seq);
    if (h)
        sqlite3_bind_int64(s->stmt[id], 2, h->id);
    enum bc_status st = run(s, id);
    if (st != BC_OK)
        s->failed = true;
    return st;
}

/* What a store hook of a host does first: the turn's transaction opened
 * and the origin's host (its row inserted when new) in *out. A failure
 * marks the state failed. */
static enum bc_status host_hook_begin(struct bc_crawl_state *s,
                                      const char *origin, size_t len,
                                      struct shost **out)
{
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    *out = host_of(s, origin, len);
    if (!*out) {
        s->failed = true;
        return BC_ERR_IO;
    }
    return BC_OK;
}

/* The host of the frontier's host slot (frontier_store.h: THE HOST SLOT):
 * the store's record kept there at the origin's first queued or left
 * call, so that later calls skip host_of()'s lookup (with 10^5 hosts
 * round-robin every lookup missed the cache: 6 % of bench_state's
 * samples at 10^6). The records live until close, and the frontier is freed
 * before (bc_crawl_state_frontier()). The turn's transaction opened
 * first, as host_hook_begin(). */
static enum bc_status host_hook_slot(struct bc_crawl_state *s,
                                     const char *origin, size_t len,
                                     void **slot, struct shost **out)
{
    if (*slot) {
        enum bc_status st = ensure_txn(s);
        *out = *slot;
        return st;
    }
    enum bc_status st = host_hook_begin(s, origin, len, out);
    if (st == BC_OK)
        *slot = *out;
    return st;
}

static enum bc_status hook_queued(void *ctx, const char *origin, size_t len,
                                  void **slot,
                                  const struct bc_frontier_entry *e,
                                  bool requeue, uint64_t *id)
{
    struct bc_crawl_state *s = ctx;
    struct shost *h;
    enum bc_status st = host_hook_slot(s, origin, len, slot, &h);
    if (st != BC_OK)
        return st;
    sqlite3_int64 seq = s->next_seq++;
    sqlite3_stmt *q;
    if (requeue) {
        /* Handed out, then retried (a transient fault) or given back: to
         * the tail, no longer in flight (I1); the row keeps its id, only
         * seq and retries change (I2): its payload stays in the row, so
         * e->payload is not written again. */
        q = s->stmt[S_REQUEUE];
        sqlite3_bind_int64(q, 1, seq);
        sqlite3_bind_int(q, 2, (int)e->retries);
        sqlite3_bind_int64(q, 3, h->id);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)e->id);
        st = run(s, S_REQUEUE);
        if (st == BC_OK)
            st = run_seq(s, S_FLIGHT_DEL, (sqlite3_int64)e->id, NULL);
    } else {
        /* Admitted: a row inserted once, its id the admission order
         * (I2). */
        q = s->stmt[S_INS_URL];
        sqlite3_bind_int64(q, 1, h->id);
        sqlite3_bind_int64(q, 2, seq);
        sqlite3_bind_int(q, 3, (int)e->depth);
        sqlite3_bind_int(q, 4, (int)e->redirects);
        sqlite3_bind_int(q, 5, (int)e->retries);
        sqlite3_bind_text(q, 6, e->url, (int)e->url_len, SQLITE_STATIC);
        if (e->referrer)
            sqlite3_bind_text(q, 7, e->referrer, (int)e->referrer_len,
                              SQLITE_STATIC);
        else
            sqlite3_bind_null(q, 7);
        /* The payload beside its URL, in the same row (I2: written once,
         * here); a zero-length blob for an empty one would read back as
         * NULL anyway, so none is NULL. */
        if (e->payload_len > 0)
            sqlite3_bind_blob(q, 8, e->payload, (int)e->payload_len,
                              SQLITE_STATIC);
        else
            sqlite3_bind_null(q, 8);
        st = run(s, S_INS_URL);
    }
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    *id = (uint64_t)seq; /* the frontier's id of a URL is its seq */
    if (!requeue) {
        s->journal = (uint64_t)sqlite3_last_insert_rowid(s->db);
        h->admitted++;
    }
    h->queued++;
    s->queued++;
    return BC_OK;
}

/* The tables that came after version 3 (sitemaps has its own): the
 * circuits of the hosts and the URLs given up to transient faults. Made,
 * if missing, by begin_run and bc_crawl_state_retry_failed(). */
static const char faults_sql[] =
    "CREATE TABLE IF NOT EXISTS circuits(host INTEGER PRIMARY KEY,"
    " state INTEGER NOT NULL, failures INTEGER NOT NULL,"
    " failing_since INTEGER NOT NULL, open_until INTEGER NOT NULL,"
    " backoff INTEGER NOT NULL, down INTEGER NOT NULL,"
    " down_lost INTEGER NOT NULL, exhausted INTEGER NOT NULL,"
    " retry_until INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS failed(seq INTEGER PRIMARY KEY,"
    " host INTEGER NOT NULL);";

/* Run sql (rare statements: prepared per call) with n integer
 * parameters; failure sticky. */
static enum bc_status run_ints(struct bc_crawl_state *s, const char *sql,
                               const sqlite3_int64 *v, int n)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK) {
        s->failed = true;
        return db_fail(s, sql);
    }
    for (int i = 0; i < n; i++)
        sqlite3_bind_int64(q, i + 1, v[i]);
    int rc = sqlite3_step(q);
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        s->failed = true;
        return db_fail(s, sql);
    }
    return BC_OK;
}

/* The URL of seq (host hid) was given up to a transient fault. */
static enum bc_status failed_add(struct bc_crawl_state *s, sqlite3_int64 seq,
                                 sqlite3_int64 hid)
{
    const sqlite3_int64 v[] = {seq, hid};
    return run_ints(s, "INSERT OR IGNORE INTO failed(seq, host) VALUES(?, ?)",
                    v, 2);
}

/* The head of the host's requeued list is seq? Then take it off. */
static bool requeued_take(struct shost *h, sqlite3_int64 seq)
{
    if (h->requeued_head == h->requeued_len ||
        h->requeued[h->requeued_head] != seq)
        return false;
    h->requeued_head++;
    return true;
}

/*
 * A URL left its host's queue. The queue is the host's requeued list,
 * then the URLs after its cursor in seq order, and the frontier hands
 * them out in that order: so the cursor just moves to seq (I3). A URL
 * handed out is recorded in flight (a requeued one is already there), and
 * one dropped leaves it (I1).
 */
static enum bc_status hook_left(void *ctx, const char *origin, size_t len,
                                void **slot, uint64_t id,
                                enum bc_frontier_action action,
                                enum bc_frontier_reason reason)
{
    struct bc_crawl_state *s = ctx;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    struct shost *h = *slot;
    if (!h)
        HASH_FIND(hh, s->hosts, origin, len, h);
    if (!h) {
        s->failed = true;
        set_err(s->errmsg, sizeof(s->errmsg), "crawl.db: no host %.*s",
                (int)(len < 200 ? len : 200), origin);
        return BC_ERR_CORRUPT;
    }
    *slot = h;
    sqlite3_int64 seq = (sqlite3_int64)id;
    bool fetch = action == BC_FRONTIER_FETCH;
    if (!fetch &&
        (reason == BC_ADMIT_HOST_DOWN || reason == BC_ADMIT_HOST_GIVEN_UP)) {
        /* Lost to a transient fault: kept for --retry-failed. */
        st = failed_add(s, seq, h->id);
        if (st != BC_OK)
            return st;
    }
    if (requeued_take(h, seq)) {
        st = run_seq(s, fetch ? S_FLIGHT_TAKEN : S_FLIGHT_DEL, seq, NULL);
    } else {
        if (seq > h->cursor) {
            h->cursor = seq;
            mark_dirty(s, h);
        }
        st = fetch ? run_seq(s, S_FLIGHT_ADD, seq, h) : BC_OK;
    }
    if (st != BC_OK)
        return st;
    if (h->queued > 0) {
        h->queued--;
        s->queued--;
    }
    return BC_OK;
}

static enum bc_status hook_host(void *ctx,
                                const struct bc_frontier_host_state *hs)
{
    struct bc_crawl_state *s = ctx;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    struct shost *h = host_of(s, hs->origin, hs->origin_len);
    if (!h) {
        s->failed = true;
        return BC_ERR_IO;
    }
    sqlite3_stmt *q = s->stmt[S_HOST_ROBOTS];
    sqlite3_bind_int(q, 1, (int)hs->robots);
    if (hs->robots_body)
        sqlite3_bind_blob(q, 2, hs->robots_body, (int)hs->robots_body_len,
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(q, 2);
    if (hs->robots_ttl_ms >= (uint64_t)INT64_MAX / 2)
        sqlite3_bind_null(q, 3); /* for ever */
    else
        sqlite3_bind_int64(q, 3,
                           (sqlite3_int64)(wall_ms() + hs->robots_ttl_ms));
    sqlite3_bind_int(q, 4, (int)hs->robots_failures);
    sqlite3_bind_int64(q, 5, (sqlite3_int64)hs->given_up_lost);
    sqlite3_bind_int64(q, 6, h->id);
    st = run(s, S_HOST_ROBOTS);
    if (st != BC_OK)
        s->failed = true;
    return st;
}

static sqlite3_int64 clamp64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

/* A host's circuit changed: one row per host, times made wall-clock. */
static enum bc_status hook_circuit(void *ctx, const char *origin, size_t len,
                                   const struct bc_frontier_circuit_state *c)
{
    struct bc_crawl_state *s = ctx;
    struct shost *h;
    enum bc_status st = host_hook_begin(s, origin, len, &h);
    if (st != BC_OK)
        return st;
    uint64_t wall = wall_ms();
    const sqlite3_int64 v[] = {
        h->id,
        (sqlite3_int64)c->circuit,
        (sqlite3_int64)c->failures,
        c->failures ? clamp64(wall > c->failing_ms ? wall - c->failing_ms : 0)
                    : 0,
        c->open_ms ? clamp64(wall + c->open_ms) : 0,
        clamp64(c->backoff_ms),
        c->down,
        clamp64(c->down_lost),
        clamp64(c->exhausted),
        c->retry_ms ? clamp64(wall + c->retry_ms) : 0};
    return run_ints(s,
                    "INSERT OR REPLACE INTO circuits(host, state, failures,"
                    " failing_since, open_until, backoff, down, down_lost,"
                    " exhausted, retry_until)"
                    " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    v, 10);
}

/* The sitemaps table: every sitemap job queued in the crawl, in order,
 * and whether its sitemap_done() was committed. Made, if missing,
 * by begin_run. */
static const char sitemaps_sql[] =
    "CREATE TABLE IF NOT EXISTS sitemaps(id INTEGER PRIMARY KEY,"
    " url TEXT NOT NULL UNIQUE, scope TEXT NOT NULL,"
    " level INTEGER NOT NULL, named INTEGER NOT NULL,"
    " done INTEGER NOT NULL DEFAULT 0, retries INTEGER NOT NULL DEFAULT 0)";

/* Add column (with its declaration decl) to table unless it has it: the
 * states of earlier versions open, the column at its default. */
static enum bc_status add_column(struct bc_crawl_state *s, const char *table,
                                 const char *column, const char *decl)
{
    char sql[256];
    sqlite3_stmt *q;
    snprintf(sql, sizeof(sql), "SELECT %s FROM %s LIMIT 0", column, table);
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) == SQLITE_OK) {
        sqlite3_finalize(q);
        return BC_OK;
    }
    snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", table, column,
             decl);
    return exec(s, sql);
}

/* PAYLOADS: the crawl's index of payload digests (crawler.c, IDENTICAL
 * PAYLOADS): per SHA-1 of a payload, the first URL that had it and its
 * WARC response record (its id, "" when none was written, and date). A
 * row is written in the turn's transaction with its page, so the index
 * on disk holds exactly the committed pages' payloads.
 *
 * The rows are a log, appended in the order they are put (payload_log,
 * its rowid that order); an entry that gains its record is a second row
 * of its digest, and the last row of a digest is its entry. A table keyed
 * by the digest (payloads, before) put each row on a random leaf: a
 * commit of the PostgreSQL manual's crawl (14 pages a turn) wrote most of
 * its leaves to the WAL, and the checkpoints copied them again: a third
 * of the crawl's page writes (700 of 2,200 pwrite calls). The log's rows
 * land on its last page (test_payload_log_moved). It is read whole at
 * resume, in its order (bc_crawl_state_payloads(): a scan of the rowid,
 * no sort), the later row of a digest replacing the earlier in the
 * caller's index, so no index is needed. Made, if missing, by begin_run: a state
 * of an earlier crawl gains it, the rows of its payloads table moved into
 * it (one a digest) and that table dropped. */
static const char payloads_sql[] =
    "CREATE TABLE IF NOT EXISTS payload_log(id INTEGER PRIMARY KEY,"
    " digest BLOB NOT NULL, url TEXT NOT NULL, record_id TEXT NOT NULL,"
    " date INTEGER NOT NULL)";

static enum bc_status query_int(struct bc_crawl_state *s, const char *sql,
                                sqlite3_int64 *out);

/* The table of the states made before payload_log, if it is there: its
 * rows into payload_log, then dropped (in begin_run's transaction). */
static enum bc_status payloads_move(struct bc_crawl_state *s)
{
    sqlite3_int64 n = 0;
    enum bc_status st = query_int(s,
                                  "SELECT count(*) FROM sqlite_master"
                                  " WHERE type = 'table' AND name = 'payloads'",
                                  &n);
    if (st != BC_OK || n == 0)
        return st;
    st = exec(s, "INSERT INTO payload_log(digest, url, record_id, date)"
                 " SELECT digest, url, record_id, date FROM payloads");
    if (st == BC_OK)
        st = exec(s, "DROP TABLE payloads");
    return st;
}

/* VALIDATORS: per URL, the ETag and Last-Modified of its last 2xx page
 * that had either ("" for the one it lacked), and the WARC response
 * record that holds that page's payload (its id, "" when none was
 * written, its WARC-Target-URI and date): what a recrawl's conditional
 * request sends, and what a 304's revisit record names (crawler.c,
 * CONDITIONAL RECRAWLS). Written in the turn's transaction with its page;
 * made, if missing, by begin_run: a state of an earlier crawl gains it,
 * empty. */
static const char validators_sql[] =
    "CREATE TABLE IF NOT EXISTS validators(url TEXT PRIMARY KEY,"
    " etag TEXT NOT NULL, last_modified TEXT NOT NULL,"
    " record_id TEXT NOT NULL, record_uri TEXT NOT NULL,"
    " date INTEGER NOT NULL) WITHOUT ROWID";

/* FETCHED: per URL, when its page was last fetched (its request sent)
 * with a whole 2xx or a 304 answer, or queued to be fetched again (by a
 * sitemap's newer <lastmod>, or by a revisit), in seconds since the epoch:
 * what a sitemap's <lastmod> is compared with (crawler.c, LASTMOD). Kept
 * only in a crawl with a recrawl window that reads sitemaps. Written in
 * the turn's transaction with its page; made, if missing, by begin_run: a
 * state of an earlier crawl gains it, empty. */
static const char fetched_sql[] =
    "CREATE TABLE IF NOT EXISTS fetched(url TEXT PRIMARY KEY,"
    " time INTEGER NOT NULL) WITHOUT ROWID";

/* FINGERPRINTS: the crawl's index of near-duplicates (crawler.c,
 * NEAR-DUPLICATES): the simhash of each page that started a cluster
 * (none earlier within k bits), as a signed 64-bit integer (SQLite has no
 * unsigned one; the bits are kept), and its URL, in the order they were
 * found (the rowid), which is the order a resume adds them back in. A row
 * is written in the turn's transaction with its page. Made, if missing,
 * by begin_run: a state of an earlier crawl gains it, empty. */
static const char fingerprints_sql[] =
    "CREATE TABLE IF NOT EXISTS fingerprints(fp INTEGER NOT NULL,"
    " url TEXT NOT NULL)";

/* The tables sitemaps, circuits, failed, payload_log, validators,
 * fingerprints and fetched, with every column, and the columns added to
 * hosts. */
static enum bc_status make_fault_tables(struct bc_crawl_state *s)
{
    enum bc_status st = exec(s, sitemaps_sql);
    if (st == BC_OK)
        st = exec(s, payloads_sql);
    if (st == BC_OK)
        st = payloads_move(s);
    if (st == BC_OK)
        st = exec(s, validators_sql);
    if (st == BC_OK)
        st = exec(s, fingerprints_sql);
    if (st == BC_OK)
        st = exec(s, fetched_sql);
    if (st == BC_OK)
        st = exec(s, faults_sql);
    if (st == BC_OK)
        st = add_column(s, "sitemaps", "retries", "INTEGER NOT NULL DEFAULT 0");
    if (st == BC_OK)
        st = add_column(s, "circuits", "retry_until",
                        "INTEGER NOT NULL DEFAULT 0");
    if (st == BC_OK)
        st = add_column(s, "hosts", "delay_override",
                        "INTEGER NOT NULL DEFAULT 0");
    return st;
}

/* A host's delay override was set (or removed: 0), through the turn's
 * transaction like every other change (I4): durable at the next commit. */
static enum bc_status hook_delay(void *ctx, const char *origin, size_t len,
                                 uint64_t delay_ms)
{
    struct bc_crawl_state *s = ctx;
    struct shost *h;
    enum bc_status st = host_hook_begin(s, origin, len, &h);
    if (st != BC_OK)
        return st;
    const sqlite3_int64 v[] = {clamp64(delay_ms), h->id};
    return run_ints(s, "UPDATE hosts SET delay_override = ? WHERE id = ?", v,
                    2);
}

/* A sitemap job was queued (a row), or is done (marked). Rare (a few
 * per host): the statement is prepared per call. */
static enum bc_status
hook_sitemap(void *ctx, const struct bc_frontier_sitemap *sm, bool done)
{
    struct bc_crawl_state *s = ctx;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    sqlite3_stmt *q;
    /* Queued again for a retry (done false, retries > 0): the row is
     * there already; its retries are updated. */
    const char *sql =
        done ? "UPDATE sitemaps SET done = ?2 WHERE url = ?1"
        : sm->retries
            ? "UPDATE sitemaps SET retries = ?2, done = 0 WHERE url = ?1"
            : "INSERT OR IGNORE INTO sitemaps(url, scope, level, named)"
              " VALUES(?, ?, ?, ?)";
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK) {
        s->failed = true;
        return db_fail(s, "sitemaps");
    }
    sqlite3_bind_text(q, 1, sm->url, (int)sm->url_len, SQLITE_STATIC);
    if (done) {
        sqlite3_bind_int(q, 2, sm->given_up ? 2 : 1);
    } else if (sm->retries) {
        sqlite3_bind_int(q, 2, (int)sm->retries);
    } else {
        sqlite3_bind_text(q, 2, sm->scope, (int)sm->scope_len, SQLITE_STATIC);
        sqlite3_bind_int(q, 3, (int)sm->level);
        sqlite3_bind_int(q, 4, sm->named);
    }
    int rc = sqlite3_step(q);
    sqlite3_finalize(q);
    if (rc != SQLITE_DONE) {
        s->failed = true;
        return db_fail(s, "sitemaps");
    }
    return BC_OK;
}

/* Push the URL row of q (seq, url, depth, redirects, retries, referrer,
 * payload) back. */
static enum bc_status refill_row(struct bc_crawl_state *s, sqlite3_stmt *q,
                                 struct bc_frontier *f, const char *origin,
                                 size_t len)
{
    struct bc_frontier_entry e;
    e.id = (uint64_t)sqlite3_column_int64(q, 0);
    e.url = (const char *)sqlite3_column_text(q, 1);
    e.url_len = (size_t)sqlite3_column_bytes(q, 1);
    e.depth = (unsigned)sqlite3_column_int(q, 2);
    e.redirects = (unsigned)sqlite3_column_int(q, 3);
    e.retries = (unsigned)sqlite3_column_int(q, 4);
    e.referrer = (const char *)sqlite3_column_text(q, 5); /* NULL: none */
    e.referrer_len = e.referrer ? (size_t)sqlite3_column_bytes(q, 5) : 0;
    e.payload = sqlite3_column_blob(q, 6); /* NULL: none */
    e.payload_len = e.payload ? (size_t)sqlite3_column_bytes(q, 6) : 0;
    enum bc_status st =
        e.url ? bc_frontier_refill(f, origin, len, &e) : BC_ERR_NOMEM;
    if (st != BC_OK)
        set_err(s->errmsg, sizeof(s->errmsg), "refill: %s", bc_strerror(st));
    return st;
}

static enum bc_status hook_refill(void *ctx, struct bc_frontier *f,
                                  const char *origin, size_t len, size_t skip,
                                  size_t max)
{
    struct bc_crawl_state *s = ctx;
    struct shost *h;
    HASH_FIND(hh, s->hosts, origin, len, h);
    if (!h) {
        set_err(s->errmsg, sizeof(s->errmsg), "crawl.db: no host %.*s",
                (int)(len < 200 ? len : 200), origin);
        return BC_ERR_CORRUPT;
    }
    enum bc_status st = BC_OK;
    int rc = SQLITE_DONE;
    /* First the URLs requeued at the head, then those after the cursor. */
    for (size_t i = h->requeued_head; i < h->requeued_len && max > 0; i++) {
        if (skip > 0) {
            skip--;
            continue;
        }
        sqlite3_stmt *q = s->stmt[S_ONE];
        sqlite3_bind_int64(q, 1, h->id);
        sqlite3_bind_int64(q, 2, h->requeued[i]);
        rc = sqlite3_step(q);
        if (rc == SQLITE_ROW) {
            st = refill_row(s, q, f, origin, len);
            rc = SQLITE_DONE;
        } else if (rc == SQLITE_DONE) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg),
                    "crawl.db: a URL in flight is missing");
        }
        sqlite3_reset(q);
        if (st != BC_OK || rc != SQLITE_DONE)
            break;
        max--;
    }
    /* Then the URLs after the cursor, generation by generation (THE
     * QUEUE'S GENERATIONS): from the cursor's to the last one given out,
     * and no further once all the host's queued URLs after its cursor
     * were seen (h->queued counts them with the requeued ones). */
    size_t pending = h->requeued_len - h->requeued_head;
    uint64_t after = h->queued > pending ? h->queued - pending : 0;
    sqlite3_int64 gen = h->cursor >> QUEUE_GEN_BITS;
    sqlite3_int64 last = (s->next_seq - 1) >> QUEUE_GEN_BITS;
    sqlite3_stmt *q = s->stmt[S_REFILL];
    for (; st == BC_OK && rc == SQLITE_DONE && max > 0 && after > 0 &&
           gen <= last;
         gen++) {
        sqlite3_bind_int64(q, 1, gen);
        sqlite3_bind_int64(q, 2, h->id);
        sqlite3_bind_int64(q, 3, h->cursor);
        sqlite3_bind_int64(q, 4, (sqlite3_int64)(max + skip));
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
            if (after > 0)
                after--;
            if (skip > 0) {
                skip--;
                continue;
            }
            if ((st = refill_row(s, q, f, origin, len)) != BC_OK)
                break;
            max--;
        }
        sqlite3_reset(q);
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "refill");
    return st;
}

void bc_crawl_state_store(struct bc_crawl_state *s, size_t window,
                          struct bc_frontier_store *out)
{
    memset(out, 0, sizeof(*out));
    out->ctx = s;
    out->window = window;
    out->queued = hook_queued;
    out->left = hook_left;
    out->host = hook_host;
    out->refill = hook_refill;
    out->sitemap = hook_sitemap;
    out->circuit = hook_circuit;
    out->delay = hook_delay;
}

/* ---- open ------------------------------------------------------------ */

static char *path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* Whether dir holds nothing but (perhaps) a lock file and the remains of
 * a creation killed before crawl.db appeared: a directory made for the
 * state. false with *error set (errno) when it cannot be read. */
static bool dir_is_fresh(const char *dir, int *error)
{
    DIR *d = opendir(dir);
    if (!d) {
        *error = errno;
        return false;
    }
    bool fresh = true;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strcmp(e->d_name, "lock") &&
            strncmp(e->d_name, "crawl.db.new", 12) != 0)
            fresh = false;
    }
    closedir(d);
    return fresh;
}

static bool dir_has(const char *dir, const char *name)
{
    char *p = path_join(dir, name);
    struct stat sb;
    bool has = p && stat(p, &sb) == 0;
    free(p);
    return has;
}

/* Whether path is an SQLite database with our application_id, read
 * without writing anything (a database not in WAL mode). */
static bool looks_ours(const char *path)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    bool ours = false;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        ours = sqlite3_column_int64(st, 0) == APP_ID;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ours;
}

#define LOCK_RETRIES  50
#define LOCK_RETRY_MS 2

/* Take DIR/lock (flock, non-blocking) and write our pid into it. */
static enum bc_status take_lock(struct bc_crawl_state *s,
                                struct bc_crawl_state_error *err)
{
    char *path = path_join(s->dir, "lock");
    if (!path)
        return BC_ERR_NOMEM;
    s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    free(path);
    if (s->lock_fd < 0) {
        set_err(err->text, sizeof(err->text), "cannot open lock: %s",
                strerror(errno));
        return BC_ERR_IO;
    }
    /* A reader's probe (bc_crawl_state_peek()) holds a shared lock for
     * microseconds: it is waited for, LOCK_RETRIES times LOCK_RETRY_MS;
     * a crawl holds its lock for the whole run. */
    int locked, tries = 0;
    while ((locked = flock(s->lock_fd, LOCK_EX | LOCK_NB)) != 0 &&
           errno == EWOULDBLOCK && ++tries < LOCK_RETRIES) {
        struct timespec ts = {0, LOCK_RETRY_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (locked != 0) {
        if (errno != EWOULDBLOCK) {
            set_err(err->text, sizeof(err->text), "cannot lock: %s",
                    strerror(errno));
            return BC_ERR_IO;
        }
        char buf[32] = "";
        ssize_t n = pread(s->lock_fd, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        err->pid = strtol(buf, NULL, 10);
        set_err(err->text, sizeof(err->text),
                "in use by another crawl (pid %ld)", err->pid);
        return BC_ERR_LOCKED;
    }
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (ftruncate(s->lock_fd, 0) != 0 ||
        pwrite(s->lock_fd, buf, (size_t)n, 0) != n) {
        set_err(err->text, sizeof(err->text), "cannot write lock: %s",
                strerror(errno));
        return BC_ERR_IO;
    }
    return BC_OK;
}

static enum bc_status prepare_all(struct bc_crawl_state *s)
{
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &s->stmt[i],
                               NULL) != SQLITE_OK)
            return db_fail(s, "prepare");
    return BC_OK;
}

/* One integer from a query (a PRAGMA); BC_ERR_IO when it fails. */
static enum bc_status query_int(struct bc_crawl_state *s, const char *sql,
                                sqlite3_int64 *out)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, sql);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return db_fail(s, sql);
    return BC_OK;
}

/* The checks of an existing crawl.db, before anything is written; its
 * format version in *version (BC_CRAWL_STATE_VERSION, or
 * QUEUE_GEN_VERSION - 1: migrate_queue()). */
static enum bc_status check_db(struct bc_crawl_state *s,
                               struct bc_crawl_state_error *err,
                               sqlite3_int64 *version_out)
{
    sqlite3_int64 app = 0, version = 0;
    int rc = SQLITE_OK;
    if (query_int(s, "PRAGMA application_id", &app) != BC_OK) {
        rc = sqlite3_errcode(s->db);
        set_err(err->text, sizeof(err->text), "crawl.db is %s (%s)",
                rc == SQLITE_NOTADB ? "not a crawl state database, or damaged"
                                    : "damaged",
                sqlite3_errmsg(s->db));
        return rc == SQLITE_NOTADB ? BC_ERR_FORMAT : BC_ERR_CORRUPT;
    }
    if (app != APP_ID) {
        set_err(err->text, sizeof(err->text),
                "crawl.db is not a crawl state database");
        return BC_ERR_FORMAT;
    }
    if (query_int(s, "PRAGMA user_version", &version) != BC_OK) {
        set_err(err->text, sizeof(err->text), "crawl.db is damaged (%s)",
                sqlite3_errmsg(s->db));
        return BC_ERR_CORRUPT;
    }
    if (version != BC_CRAWL_STATE_VERSION && version != QUEUE_GEN_VERSION - 1) {
        set_err(err->text, sizeof(err->text),
                "crawl state format version %lld, this build reads versions "
                "%d and %d only: finish that crawl with the bloomcrawl that "
                "made it, or start afresh in another directory",
                (long long)version, QUEUE_GEN_VERSION - 1,
                BC_CRAWL_STATE_VERSION);
        return BC_ERR_VERSION;
    }
    *version_out = version;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &st, NULL) !=
        SQLITE_OK) {
        set_err(err->text, sizeof(err->text), "crawl.db is damaged (%s)",
                sqlite3_errmsg(s->db));
        return BC_ERR_CORRUPT;
    }
    rc = sqlite3_step(st);
    const char *res =
        rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    bool ok = res && strcmp(res, "ok") == 0;
    if (!ok)
        set_err(err->text, sizeof(err->text), "crawl.db is damaged (%s)",
                res ? res : sqlite3_errmsg(s->db));
    sqlite3_finalize(st);
    return ok ? BC_OK : BC_ERR_CORRUPT;
}

/* Compare the recorded fixed settings with the given ones. */
static enum bc_status check_config(struct bc_crawl_state *s,
                                   const struct bc_crawl_state_option *fixed,
                                   size_t count,
                                   struct bc_crawl_state_error *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM config WHERE name = ?", -1,
                           &st, NULL) != SQLITE_OK) {
        set_err(err->text, sizeof(err->text), "crawl.db is damaged (%s)",
                sqlite3_errmsg(s->db));
        return BC_ERR_CORRUPT;
    }
    enum bc_status result = BC_OK;
    for (size_t i = 0; i < count && result == BC_OK; i++) {
        sqlite3_bind_text(st, 1, fixed[i].name, -1, SQLITE_STATIC);
        int rc = sqlite3_step(st);
        const char *was =
            rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            set_err(err->text, sizeof(err->text), "crawl.db is damaged (%s)",
                    sqlite3_errmsg(s->db));
            result = BC_ERR_CORRUPT;
        } else if (!was || strcmp(was, fixed[i].value) != 0) {
            snprintf(err->option, sizeof(err->option), "%s", fixed[i].name);
            snprintf(err->was, sizeof(err->was), "%s", was ? was : "");
            snprintf(err->now, sizeof(err->now), "%s", fixed[i].value);
            set_err(err->text, sizeof(err->text),
                    "%s differs from the crawl in the state (was %s, now %s)",
                    err->option, err->was, err->now);
            result = BC_ERR_MISMATCH;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return result;
}

/* A recorded setting differs: fill *err and the state's message ("" is
 * shown as none: a pin not given). */
static enum bc_status pin_mismatch(struct bc_crawl_state *s,
                                   struct bc_crawl_state_error *err,
                                   const char *name, const char *was,
                                   const char *now)
{
    snprintf(err->option, sizeof(err->option), "%s", name);
    snprintf(err->was, sizeof(err->was), "%s", was);
    snprintf(err->now, sizeof(err->now), "%s", now);
    set_err(err->text, sizeof(err->text),
            "%s differs from the crawl in the state (was %s, now %s)", name,
            *was ? was : "none", *now ? now : "none");
    snprintf(s->errmsg, sizeof(s->errmsg), "%s", err->text);
    return BC_ERR_MISMATCH;
}

/* Is name one of pins[0..n) or of the fixed names given to the open? */
static bool pin_given(const struct bc_crawl_state *s,
                      const struct bc_crawl_state_option *pins, size_t n,
                      const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(pins[i].name, name) == 0)
            return true;
    for (size_t i = 0; i < s->fixed_count; i++)
        if (strcmp(s->fixed_names[i], name) == 0)
            return true;
    return false;
}

/* Record one pin: its row set, or deleted when its value is "". */
static enum bc_status record_pin(struct bc_crawl_state *s,
                                 const struct bc_crawl_state_option *pin)
{
    sqlite3_stmt *q;
    const char *sql = *pin->value ? "INSERT OR REPLACE INTO config(name, "
                                    "value) VALUES(?, ?)"
                                  : "DELETE FROM config WHERE name = ?";
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "config");
    sqlite3_bind_text(q, 1, pin->name, -1, SQLITE_STATIC);
    if (*pin->value)
        sqlite3_bind_text(q, 2, pin->value, -1, SQLITE_STATIC);
    enum bc_status st =
        sqlite3_step(q) == SQLITE_DONE ? BC_OK : db_fail(s, "config");
    sqlite3_finalize(q);
    return st;
}

enum bc_status bc_crawl_state_pin(struct bc_crawl_state *s,
                                  const struct bc_crawl_state_option *pins,
                                  size_t n, struct bc_crawl_state_error *err)
{
    struct bc_crawl_state_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    if (!s || (!pins && n > 0))
        return BC_ERR_INVALID_ARG;
    for (size_t i = 0; i < n; i++)
        if (!pins[i].name || !pins[i].value)
            return BC_ERR_INVALID_ARG;
    /* Until a run began nothing was crawled: record, replacing what an
     * open before recorded (a pin given as "" is no row). */
    if (s->first_run) {
        enum bc_status st = BC_OK;
        for (size_t i = 0; st == BC_OK && i < n; i++)
            st = record_pin(s, &pins[i]);
        return st;
    }
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM config WHERE name = ?", -1,
                           &q, NULL) != SQLITE_OK)
        return db_fail(s, "config");
    enum bc_status st = BC_OK;
    for (size_t i = 0; st == BC_OK && i < n; i++) {
        sqlite3_bind_text(q, 1, pins[i].name, -1, SQLITE_STATIC);
        int rc = sqlite3_step(q);
        const char *was =
            rc == SQLITE_ROW ? (const char *)sqlite3_column_text(q, 0) : "";
        if (rc != SQLITE_ROW && rc != SQLITE_DONE)
            st = db_fail(s, "config");
        else if (strcmp(was ? was : "", pins[i].value) != 0)
            st = pin_mismatch(s, err, pins[i].name, was ? was : "",
                              pins[i].value);
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    if (st != BC_OK)
        return st;
    /* A setting recorded that nobody gives now (neither these pins nor
     * the open's fixed settings). */
    if (sqlite3_prepare_v2(s->db, "SELECT name, value FROM config", -1, &q,
                           NULL) != SQLITE_OK)
        return db_fail(s, "config");
    while (st == BC_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        const char *was = (const char *)sqlite3_column_text(q, 1);
        if (name && !pin_given(s, pins, n, name))
            st = pin_mismatch(s, err, name, was ? was : "", "");
    }
    sqlite3_finalize(q);
    return st;
}

static enum bc_status create_db(struct bc_crawl_state *s,
                                const struct bc_crawl_state_option *fixed,
                                size_t count)
{
    char created[128];
    snprintf(created, sizeof(created),
             "INSERT INTO meta(key, value) VALUES('created', %llu)",
             (unsigned long long)wall_ms());
    /* No journal and no sync while it is built: a failure leaves only
     * crawl.db.new, which is removed (create_atomically() syncs the file
     * once, whole, before the rename). */
    enum bc_status st = exec(s, "PRAGMA page_size = " DB_PAGE_SIZE ";"
                                "PRAGMA journal_mode = OFF;"
                                "PRAGMA synchronous = OFF");
    if (st == BC_OK)
        st = exec(s, "BEGIN");
    if (st == BC_OK)
        st = exec(s, schema_sql);
    if (st == BC_OK)
        st = exec(s, "INSERT INTO meta(key, value) VALUES"
                     "('format', 'bloomcrawl crawl state'), ('version', 3)");
    if (st == BC_OK)
        st = exec(s, created);
    sqlite3_stmt *q = NULL;
    if (st == BC_OK &&
        sqlite3_prepare_v2(s->db,
                           "INSERT INTO config(name, value) VALUES(?, ?)", -1,
                           &q, NULL) != SQLITE_OK)
        st = db_fail(s, "config");
    for (size_t i = 0; st == BC_OK && i < count; i++) {
        sqlite3_bind_text(q, 1, fixed[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(q, 2, fixed[i].value, -1, SQLITE_STATIC);
        if (sqlite3_step(q) != SQLITE_DONE)
            st = db_fail(s, "config");
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    if (st == BC_OK)
        st = exec(s, "COMMIT");
    /* WAL from the start (the mode is kept in the file): the first open
     * converts nothing. */
    if (st == BC_OK)
        st = exec(s, "PRAGMA journal_mode = WAL");
    return st;
}

/* fsync the file at path: BC_OK, or BC_ERR_IO with errno set. */
static enum bc_status sync_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return BC_ERR_IO;
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    errno = err;
    return rc == 0 ? BC_OK : BC_ERR_IO;
}

/* Create crawl.db whole or not at all: built as crawl.db.new (no journal,
 * no sync: nothing else reads it), closed, synced once and renamed. A
 * creation killed or failed half way leaves no crawl.db, and the next run
 * starts afresh. (It was built with a rollback journal, then converted to
 * WAL by the first open: eight fsyncs, 3 ms of a 165 ms crawl; now one.) */
static enum bc_status
create_atomically(struct bc_crawl_state *s, const char *db_path,
                  const struct bc_crawl_state_option *fixed, size_t count,
                  struct bc_crawl_state_error *err)
{
    size_t len = strlen(db_path);
    char *tmp = malloc(len + 16);
    if (!tmp)
        return BC_ERR_NOMEM;
    static const char *const leftovers[] = {"", "-journal", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof(leftovers) / sizeof(leftovers[0]); i++) {
        snprintf(tmp, len + 16, "%s.new%s", db_path, leftovers[i]);
        (void)unlink(tmp);
    }
    snprintf(tmp, len + 16, "%s.new", db_path);
    enum bc_status st = BC_OK;
    if (sqlite3_open_v2(tmp, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        NULL) != SQLITE_OK) {
        set_err(err->text, sizeof(err->text), "cannot create crawl.db: %s",
                s->db ? db_text(s, s->errmsg, sizeof(s->errmsg))
                      : "out of memory");
        st = BC_ERR_IO;
    } else if ((st = create_db(s, fixed, count)) != BC_OK) {
        snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
    }
    if (s->db && sqlite3_close(s->db) != SQLITE_OK && st == BC_OK) {
        set_err(err->text, sizeof(err->text), "cannot create crawl.db");
        st = BC_ERR_IO;
    }
    s->db = NULL;
    /* The close copied the WAL into the file and removed it; one left
     * means the copy failed, and the file lacks what it holds. */
    snprintf(tmp, len + 16, "%s.new-wal", db_path);
    if (st == BC_OK && access(tmp, F_OK) == 0) {
        set_err(err->text, sizeof(err->text),
                "cannot create crawl.db: its WAL was not copied");
        st = BC_ERR_IO;
    }
    snprintf(tmp, len + 16, "%s.new", db_path);
    if (st == BC_OK && sync_file(tmp) != BC_OK) {
        set_err(err->text, sizeof(err->text), "cannot create crawl.db: %s",
                strerror(errno));
        st = BC_ERR_IO;
    }
    if (st == BC_OK && rename(tmp, db_path) != 0) {
        set_err(err->text, sizeof(err->text), "cannot create crawl.db: %s",
                strerror(errno));
        st = BC_ERR_IO;
    }
    if (st != BC_OK)
        (void)unlink(tmp);
    free(tmp);
    return st;
}

/* An array id -> host of s's hosts (*max_id its last index), or NULL
 * when out of memory. */
static struct shost **host_map(const struct bc_crawl_state *s,
                               sqlite3_int64 *max_id)
{
    struct shost *h, *tmp;
    *max_id = 0;
    HASH_ITER(hh, s->hosts, h, tmp)
    {
        if (h->id > *max_id)
            *max_id = h->id;
    }
    struct shost **map = calloc((size_t)*max_id + 1, sizeof(*map));
    if (!map)
        return NULL;
    HASH_ITER(hh, s->hosts, h, tmp)
    {
        if (h->id >= 0)
            map[h->id] = h;
    }
    return map;
}

/* The admissions of each host (a query of rows host, count, perhaps
 * several per host: they are added) into the hosts' admitted counts. */
static enum bc_status count_admitted(struct bc_crawl_state *s, const char *sql)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "count");
    sqlite3_int64 max_id;
    struct shost **map = host_map(s, &max_id);
    if (!map) {
        sqlite3_finalize(q);
        return BC_ERR_NOMEM;
    }
    for (sqlite3_int64 id = 0; id <= max_id; id++)
        if (map[id])
            map[id]->admitted = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        sqlite3_int64 id = sqlite3_column_int64(q, 0);
        if (id >= 0 && id <= max_id && map[id])
            map[id]->admitted += (uint64_t)sqlite3_column_int64(q, 1);
    }
    free(map);
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? BC_OK : db_fail(s, "count");
}

/* count_queued()'s SQL function queued_one(host, seq): the URL row of
 * host and seq counts in its host's queue if it lies after the host's
 * cursor. */
struct queued_count {
    struct bc_crawl_state *s;
    struct shost **map;
    sqlite3_int64 max_id;
};

static void queued_one(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    struct queued_count *c = sqlite3_user_data(ctx);
    sqlite3_int64 id = sqlite3_value_int64(argv[0]);
    struct shost *h = id >= 0 && id <= c->max_id ? c->map[id] : NULL;
    if (h && sqlite3_value_int64(argv[1]) > h->cursor) {
        h->queued++;
        c->s->queued++;
    }
    sqlite3_result_null(ctx);
}

/* Each host's queue length: the URLs after its cursor, counted in one
 * scan of the index urls_queue by an SQL function of this connection,
 * from the generation of the smallest cursor on (THE QUEUE'S
 * GENERATIONS: the URLs of earlier generations all left their queues).
 * The index leads with the generation, so a host's URLs are no longer one
 * range to count; a GROUP BY of generation and host read back row by row
 * took 1.7-2.7 s at 10^7 URLs where the function took 0.7 s
 * (bench/results/state-analysis.md). */
static enum bc_status count_queued(struct bc_crawl_state *s)
{
    struct queued_count c = {s, NULL, 0};
    if (!(c.map = host_map(s, &c.max_id)))
        return BC_ERR_NOMEM;
    sqlite3_int64 first = INT64_MAX;
    for (sqlite3_int64 id = 0; id <= c.max_id; id++)
        if (c.map[id] && c.map[id]->cursor < first)
            first = c.map[id]->cursor;
    enum bc_status st = BC_OK;
    sqlite3_stmt *q = NULL;
    if (sqlite3_create_function(s->db, "queued_one", 2, SQLITE_UTF8, &c,
                                queued_one, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db,
                           "SELECT count(queued_one(host, seq)) FROM urls"
                           " WHERE " SEQ_GEN " >= ?",
                           -1, &q, NULL) != SQLITE_OK)
        st = db_fail(s, "count");
    if (st == BC_OK) {
        sqlite3_bind_int64(q, 1,
                           first == INT64_MAX ? 0 : first >> QUEUE_GEN_BITS);
        if (sqlite3_step(q) != SQLITE_ROW)
            st = db_fail(s, "count");
    }
    sqlite3_finalize(q);
    (void)sqlite3_create_function(s->db, "queued_one", 2, SQLITE_UTF8, NULL,
                                  NULL, NULL, NULL);
    free(c.map);
    return st;
}

static bool requeued_push(struct shost *h, sqlite3_int64 seq)
{
    if (h->requeued_len == h->requeued_cap) {
        size_t cap = h->requeued_cap ? 2 * h->requeued_cap : 4;
        sqlite3_int64 *p = realloc(h->requeued, cap * sizeof(*p));
        if (!p)
            return false;
        h->requeued = p;
        h->requeued_cap = cap;
    }
    h->requeued[h->requeued_len++] = seq;
    return true;
}

/* Load the hosts, counters and meta of an existing state into memory. */
static enum bc_status load_state(struct bc_crawl_state *s)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, "SELECT id, origin, cursor FROM hosts", -1,
                           &q, NULL) != SQLITE_OK)
        return db_fail(s, "hosts");
    int rc;
    enum bc_status st = BC_OK;
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *o = (const char *)sqlite3_column_text(q, 1);
        size_t len = (size_t)sqlite3_column_bytes(q, 1);
        struct shost *h =
            o ? shost_new(s, sqlite3_column_int64(q, 0), o, len) : NULL;
        if (!h) {
            st = BC_ERR_NOMEM;
            break;
        }
        h->cursor = sqlite3_column_int64(q, 2);
    }
    sqlite3_finalize(q);
    if (st == BC_OK)
        st = count_queued(s);
    if (st != BC_OK)
        return st;
    if (sqlite3_prepare_v2(s->db, "SELECT name, value FROM counters", -1, &q,
                           NULL) != SQLITE_OK)
        return db_fail(s, "counters");
    while (st == BC_OK && sqlite3_step(q) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(q, 0);
        if (name)
            st = counter_put(s, name, (uint64_t)sqlite3_column_int64(q, 1),
                             false);
    }
    sqlite3_finalize(q);
    if (st != BC_OK)
        return st;
    s->next_seq = get_meta(s, "next_seq", 1);
    s->snapshot_pos = (uint64_t)get_meta(s, "snapshot_pos", 0);
    s->out_offset = (uint64_t)get_meta(s, "out_offset", 0);
    s->warc.seq = (unsigned)get_meta(s, "warc_seq", 0);
    s->warc.offset = (uint64_t)get_meta(s, "warc_offset", 0);
    s->warc.records = (uint64_t)get_meta(s, "warc_records", 0);
    s->runs = (uint64_t)get_meta(s, "runs", 0);
    s->refetched = (uint64_t)get_meta(s, "refetched", 0);
    sqlite3_int64 max_id = 0, outbox = 0;
    st = query_int(s, "SELECT coalesce(max(id), 0) FROM urls", &max_id);
    s->journal = s->committed_journal = (uint64_t)max_id;
    if (st == BC_OK)
        st = query_int(s, "SELECT count(*) FROM outbox", &outbox);
    s->outbox = (uint64_t)outbox;
    return st;
}

/* The URLs in flight at the last commit that this run queues again:
 * those requeued by an earlier run and not handed out since were not
 * requested, they are not refetches. */
static enum bc_status count_in_flight(struct bc_crawl_state *s,
                                      sqlite3_int64 *n)
{
    return query_int(s, "SELECT count(*) FROM flight WHERE requeued = 0", n);
}

/*
 * This open is a run, counted from the open on (crawl_state.h): runs and
 * refetched_now are right before bc_crawl_state_frontier() is called,
 * though the open writes nothing to an existing state. begin_run() stores
 * the count when the run begins; an open that builds no frontier crawled
 * nothing and is not stored, so the next open counts the same run number
 * and the same URLs in flight.
 */
static enum bc_status count_run(struct bc_crawl_state *s)
{
    sqlite3_int64 n = 0;
    enum bc_status st = count_in_flight(s, &n);
    if (st != BC_OK)
        return st;
    s->first_run = s->runs == 0;
    s->runs++;
    s->refetched_now = (uint64_t)n;
    return BC_OK;
}

/* This run begins: store its count (count_run() counted it at the open),
 * and queue the URLs in flight at the last commit again at the head of
 * their host's queue, oldest first. */
static enum bc_status begin_run(struct bc_crawl_state *s)
{
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    sqlite3_int64 n = 0;
    st = make_fault_tables(s);
    if (st == BC_OK)
        st = count_in_flight(s, &n);
    /* I7: every flight row is queued again at its host's head, and
     * counted as a refetch unless an earlier resume requeued it. */
    if (st == BC_OK)
        st = exec(s, "UPDATE flight SET requeued = 1");
    sqlite3_stmt *q;
    if (st == BC_OK &&
        sqlite3_prepare_v2(s->db, "SELECT seq, host FROM flight ORDER BY seq",
                           -1, &q, NULL) != SQLITE_OK)
        st = db_fail(s, "in flight");
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    /* An array id -> host for the lookups. */
    struct shost *h, *tmp, **map = NULL;
    sqlite3_int64 max_id = 0;
    HASH_ITER(hh, s->hosts, h, tmp)
    {
        if (h->id > max_id)
            max_id = h->id;
    }
    map = calloc((size_t)max_id + 1, sizeof(*map));
    if (!map)
        st = BC_ERR_NOMEM;
    HASH_ITER(hh, s->hosts, h, tmp)
    {
        if (map && h->id >= 0)
            map[h->id] = h;
    }
    int rc = SQLITE_DONE;
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        sqlite3_int64 hid = sqlite3_column_int64(q, 1);
        h = hid >= 0 && hid <= max_id ? map[hid] : NULL;
        if (!h) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg),
                    "crawl.db: a URL in flight has no host");
        } else if (!requeued_push(h, sqlite3_column_int64(q, 0))) {
            st = BC_ERR_NOMEM;
        } else {
            h->queued++;
            s->queued++;
        }
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "in flight");
    free(map);
    sqlite3_finalize(q);
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    s->refetched_now = (uint64_t)n;
    s->refetched += s->refetched_now;
    s->run_begun = true;
    return bc_crawl_state_commit(s, NULL);
}

/*
 * What dir is (db_path its crawl.db): *fresh true for a state to make (dir
 * created now, or holding nothing but what dir_is_fresh() allows), false
 * for one to resume. Each failure names the file and says why (errno's
 * text): a directory the user may not read is "Permission denied", not
 * "not a crawl state", and "cannot create" only when dir was being
 * created. Nothing is written but the directory made for a new state.
 */
static enum bc_status dir_examine(const char *dir, const char *db_path,
                                  bool *fresh, struct bc_crawl_state_error *err)
{
    struct stat sb;
    int dir_errno = 0;
    if (stat(dir, &sb) != 0) {
        if (errno != ENOENT) {
            set_err(err->text, sizeof(err->text),
                    "cannot access the directory: %s", strerror(errno));
            return BC_ERR_IO;
        }
        if (mkdir(dir, 0700) != 0) {
            set_err(err->text, sizeof(err->text),
                    "cannot create the directory: %s", strerror(errno));
            return BC_ERR_IO;
        }
        *fresh = true;
    } else if (!S_ISDIR(sb.st_mode)) {
        set_err(err->text, sizeof(err->text),
                "not a crawl state (not a directory)");
        return BC_ERR_FORMAT;
    } else if (stat(db_path, &sb) == 0) {
        *fresh = false;
    } else if (errno != ENOENT) {
        set_err(err->text, sizeof(err->text), "cannot access crawl.db: %s",
                strerror(errno));
        return BC_ERR_IO;
    } else if (dir_is_fresh(dir, &dir_errno)) {
        *fresh = true;
    } else if (dir_errno != 0) {
        set_err(err->text, sizeof(err->text), "cannot read the directory: %s",
                strerror(dir_errno));
        return BC_ERR_IO;
    } else {
        set_err(err->text, sizeof(err->text),
                "not a crawl state (no crawl.db in a directory that is not "
                "empty)");
        return BC_ERR_FORMAT;
    }
    /* A crawl.db without a lock file beside it was never opened as a
     * state: look before the lock is created, so a foreign one is left
     * exactly as it was. */
    if (!*fresh && !dir_has(dir, "lock") && !looks_ours(db_path)) {
        set_err(err->text, sizeof(err->text),
                "not a crawl state (crawl.db is not a crawl state database)");
        return BC_ERR_FORMAT;
    }
    return BC_OK;
}

/* Open crawl.db (db_path) read-write as s->db, made first (with fixed's
 * settings) when fresh. Called with the lock held. */
static enum bc_status db_open(struct bc_crawl_state *s, const char *db_path,
                              bool fresh,
                              const struct bc_crawl_state_option *fixed,
                              size_t count, struct bc_crawl_state_error *err)
{
    enum bc_status st;
    if (fresh &&
        (st = create_atomically(s, db_path, fixed, count, err)) != BC_OK)
        return st;
    /* NOMUTEX: a state is used by one thread at a time (crawl_state.h),
     * so the connection's mutex, taken by every bind, step and reset,
     * guards nothing (3 % of bench_state's adds; the checkpointer has a
     * connection of its own). */
    if (sqlite3_open_v2(db_path, &s->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        set_err(err->text, sizeof(err->text), "cannot open crawl.db: %s",
                s->db ? db_text(s, s->errmsg, sizeof(s->errmsg))
                      : "out of memory");
        return BC_ERR_IO;
    }
    return BC_OK;
}

/* A new state's database: WAL, its statements prepared. */
static enum bc_status db_start(struct bc_crawl_state *s,
                               struct bc_crawl_state_error *err)
{
    s->next_seq = 1; /* a URL's seq is its id for the frontier: not 0 */
    if (exec(s, "PRAGMA journal_mode = WAL") != BC_OK ||
        prepare_all(s) != BC_OK) {
        snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
        return BC_ERR_IO;
    }
    return BC_OK;
}

/* A state of version 3 made before THE QUEUE'S GENERATIONS: its index
 * urls_queue (host, seq) rebuilt as (generation, host, seq), and the
 * version it has then recorded, in one transaction, before anything reads
 * the queue (a sort of the journal's seqs: one write at the first open of
 * such a state, nothing lost if a kill stops it; 16 s at 10^7 URLs, where
 * the open takes 3). The rows do not change: every queue and cursor stays
 * what it was. */
static enum bc_status migrate_queue(struct bc_crawl_state *s)
{
    enum bc_status st = exec(s, "BEGIN IMMEDIATE");
    if (st == BC_OK)
        st = exec(s, "DROP INDEX urls_queue;"
                     "CREATE UNIQUE INDEX urls_queue ON urls(" SEQ_GEN
                     ", host, seq);"
                     "PRAGMA user_version = " SQL_INT(QUEUE_GEN_VERSION));
    if (st == BC_OK)
        st = exec(s, "COMMIT");
    if (st != BC_OK) {
        (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return st;
    }
    /* That commit put the whole new index in the WAL (172 MiB at 10^7
     * URLs), the one transaction larger than A BOUNDED WAL's T: copied
     * into crawl.db and the file cut to 0 bytes here, before the crawl's
     * commits and the checkpointer begin. */
    return exec(s, "PRAGMA wal_checkpoint(TRUNCATE)");
}

/* A state to resume: its database checked, the settings pinned in it
 * compared with fixed's, WAL, its statements prepared, and what it holds
 * loaded into s. */
static enum bc_status db_resume(struct bc_crawl_state *s,
                                const struct bc_crawl_state_option *fixed,
                                size_t count, struct bc_crawl_state_error *err)
{
    s->resumed = true;
    sqlite3_int64 version = 0;
    enum bc_status st = check_db(s, err, &version);
    if (st == BC_OK)
        st = check_config(s, fixed, count, err);
    if (st == BC_OK && version < QUEUE_GEN_VERSION &&
        migrate_queue(s) != BC_OK) {
        snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
        st = BC_ERR_IO;
    }
    /* urls.payload came after version 3: a state made before opens with
     * the column added, NULL in every row (no payloads). Before the
     * statements that name it are prepared. */
    if (st == BC_OK && (exec(s, "PRAGMA journal_mode = WAL") != BC_OK ||
                        add_column(s, "urls", "payload", "BLOB") != BC_OK ||
                        prepare_all(s) != BC_OK)) {
        snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
        st = BC_ERR_IO;
    }
    if (st == BC_OK) {
        st = load_state(s);
        if (st != BC_OK)
            snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
    }
    return st;
}

/* The connection's settings, for new and resumed states alike (its
 * checkpoints are wal_hook()'s: checkpointer_start()). */
static enum bc_status db_tune(struct bc_crawl_state *s,
                              struct bc_crawl_state_error *err)
{
    if (exec(s, "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536;"
                "PRAGMA journal_size_limit = " WAL_SIZE_LIMIT) != BC_OK) {
        snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
        return BC_ERR_IO;
    }
    return BC_OK;
}

/* ---- checkpoints off the loop ----------------------------------------- */

/* The checkpointer thread: a PASSIVE checkpoint of its own connection
 * each time it is woken, until told to stop. Its errors are not kept: a
 * checkpoint that fails leaves the pages in the WAL, where the bound's
 * checkpoint and the snapshot's find them (and report theirs). */
static void *checkpointer_main(void *arg)
{
    struct checkpointer *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->wanted && !c->stop)
            pthread_cond_wait(&c->cv, &c->mu);
        if (c->stop)
            break;
        c->wanted = false;
        pthread_mutex_unlock(&c->mu);
        pthread_mutex_lock(&c->ckpt_mu);
        (void)sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
                                        NULL, NULL);
        pthread_mutex_unlock(&c->ckpt_mu);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* A checkpoint of the loop's own connection (the bound's; a snapshot's
 * when the WAL has no handle: wal_sync()): after the checkpointer's
 * current one, if it runs. */
static int checkpoint_now(struct bc_crawl_state *s, int mode)
{
    struct checkpointer *c = &s->ckpt;
    if (c->started)
        pthread_mutex_lock(&c->ckpt_mu);
    int rc = sqlite3_wal_checkpoint_v2(s->db, NULL, mode, NULL, NULL);
    if (c->started)
        pthread_mutex_unlock(&c->ckpt_mu);
    return rc;
}

/* SQLite calls this after each commit of the loop's connection, its
 * write lock released, with the pages now in the WAL (CHECKPOINTS OFF
 * THE LOOP): at WAL_AUTOCHECKPOINT pages the bound's checkpoint, here,
 * as SQLite's own autocheckpoint did (its failure ignored, as SQLite
 * ignores its own); every WAL_BACKGROUND_STEP pages more, the
 * checkpointer is woken. */
static int wal_hook(void *ctx, sqlite3 *db, const char *name, int pages)
{
    struct bc_crawl_state *s = ctx;
    struct checkpointer *c = &s->ckpt;
    (void)db;
    (void)name;
    if (pages >= WAL_AUTOCHECKPOINT) {
        (void)checkpoint_now(s, SQLITE_CHECKPOINT_PASSIVE);
        c->woken_at = 0;
        return SQLITE_OK;
    }
    if (pages < c->woken_at)
        c->woken_at = 0; /* the WAL began again from its start */
    if (c->started && pages - c->woken_at >= WAL_BACKGROUND_STEP) {
        c->woken_at = pages;
        pthread_mutex_lock(&c->mu);
        c->wanted = true;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    return SQLITE_OK;
}

/* Take over the loop's connection's checkpoints (wal_hook()) and start
 * the checkpointer on a connection of its own to db_path. Without it (a
 * connection, mutex or thread that cannot be had) the state works as
 * before it: every checkpoint in the loop. */
static void checkpointer_start(struct bc_crawl_state *s, const char *db_path)
{
    struct checkpointer *c = &s->ckpt;
    sqlite3_wal_hook(s->db, wal_hook, s);
    if (sqlite3_open_v2(db_path, &c->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_exec(c->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) !=
            SQLITE_OK)
        goto out_close_db;
    if (pthread_mutex_init(&c->mu, NULL) != 0)
        goto out_close_db;
    if (pthread_mutex_init(&c->ckpt_mu, NULL) != 0)
        goto out_destroy_mu;
    if (pthread_cond_init(&c->cv, NULL) != 0)
        goto out_destroy_ckpt_mu;
    if (pthread_create(&c->thread, NULL, checkpointer_main, c) != 0)
        goto out_destroy_cv;
    c->started = true;
    return;

out_destroy_cv:
    pthread_cond_destroy(&c->cv);
out_destroy_ckpt_mu:
    pthread_mutex_destroy(&c->ckpt_mu);
out_destroy_mu:
    pthread_mutex_destroy(&c->mu);
out_close_db:
    sqlite3_close(c->db);
    c->db = NULL;
}

/* Stop the checkpointer (its checkpoint in progress ends first) and close
 * its connection. */
static void checkpointer_stop(struct checkpointer *c)
{
    if (c->started) {
        pthread_mutex_lock(&c->mu);
        c->stop = true;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
        pthread_cond_destroy(&c->cv);
        pthread_mutex_destroy(&c->ckpt_mu);
        pthread_mutex_destroy(&c->mu);
        c->started = false;
    }
    sqlite3_close(c->db);
    c->db = NULL;
}

/* This open is a run (count_run()), timed from now on top of the time of
 * the runs before. */
static enum bc_status run_open(struct bc_crawl_state *s,
                               struct bc_crawl_state_error *err)
{
    enum bc_status st = count_run(s);
    if (st != BC_OK) {
        snprintf(err->text, sizeof(err->text), "%s", s->errmsg);
        return st;
    }
    /* Kept as meta elapsed_ms; a state from before kept it as crawl's
     * counter crawl.elapsed_ms. */
    s->opened_ms = mono_ms();
    if (s->resumed)
        s->elapsed_before = (uint64_t)get_meta(
            s, "elapsed_ms",
            (sqlite3_int64)bc_crawl_state_counter_get(s, "crawl.elapsed_ms"));
    return BC_OK;
}

/* Copies of the names of the pinned settings (s->fixed_names, with
 * s->fixed_count of them: as many as were copied when one fails). */
static enum bc_status
fixed_names_copy(struct bc_crawl_state *s,
                 const struct bc_crawl_state_option *fixed, size_t count)
{
    if (count > 0 && !(s->fixed_names = calloc(count, sizeof(char *))))
        return BC_ERR_NOMEM;
    for (; s->fixed_count < count; s->fixed_count++)
        if (!(s->fixed_names[s->fixed_count] =
                  strdup(fixed[s->fixed_count].name)))
            return BC_ERR_NOMEM;
    return BC_OK;
}

enum bc_status bc_crawl_state_open(const char *dir,
                                   const struct bc_crawl_state_option *fixed,
                                   size_t count, struct bc_crawl_state **out,
                                   struct bc_crawl_state_error *err)
{
    struct bc_crawl_state_error dummy;
    if (!err)
        err = &dummy;
    memset(err, 0, sizeof(*err));
    if (!dir || !out || (!fixed && count > 0))
        return BC_ERR_INVALID_ARG;
    for (size_t i = 0; i < count; i++)
        if (!fixed[i].name || !fixed[i].value)
            return BC_ERR_INVALID_ARG;
    struct bc_crawl_state *s = calloc(1, sizeof(*s));
    if (!s)
        return BC_ERR_NOMEM;
    s->lock_fd = -1;
    s->dir = strdup(dir);
    char *db_path = s->dir ? path_join(dir, "crawl.db") : NULL;
    enum bc_status st = BC_ERR_NOMEM;
    if (!db_path)
        goto out_close_state;
    bool fresh = false;
    st = dir_examine(dir, db_path, &fresh, err);
    if (st != BC_OK)
        goto out_close_state;
    st = take_lock(s, err);
    if (st != BC_OK)
        goto out_close_state;
    st = db_open(s, db_path, fresh, fixed, count, err);
    if (st != BC_OK)
        goto out_close_state;
    st = fresh ? db_start(s, err) : db_resume(s, fixed, count, err);
    if (st != BC_OK)
        goto out_close_state;
    st = db_tune(s, err);
    if (st != BC_OK)
        goto out_close_state;
    checkpointer_start(s, db_path);
    st = run_open(s, err);
    if (st != BC_OK)
        goto out_close_state;
    st = fixed_names_copy(s, fixed, count);
    if (st != BC_OK)
        goto out_close_state;
    free(db_path);
    *out = s;
    return BC_OK;

out_close_state:
    free(db_path);
    bc_crawl_state_close(s);
    return st;
}

/* Whether DIR/crawl.db-wal holds anything (its size: SQLite writes its
 * header with the first frame). */
static bool wal_written(const char *dir)
{
    char *path = dir ? path_join(dir, "crawl.db-wal") : NULL;
    struct stat sb;
    bool written = !path || stat(path, &sb) != 0 || sb.st_size > 0;
    free(path);
    return written;
}

void bc_crawl_state_close(struct bc_crawl_state *s)
{
    if (!s)
        return;
    checkpointer_stop(&s->ckpt);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(s->stmt[i]);
    sqlite3_finalize(s->payload_put);
    sqlite3_finalize(s->validators_put);
    sqlite3_finalize(s->validators_find);
    sqlite3_finalize(s->fetched_put);
    sqlite3_finalize(s->fetched_find);
    sqlite3_finalize(s->fingerprint_put);
    if (s->db) {
        if (s->in_txn)
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        /* No checkpoint at the last close: the WAL stays for the next
         * open (THE END OF A CRAWL). An empty one (an open that wrote
         * nothing, e.g. refused) SQLite removes with its index, with no
         * sync: a state refused stays as it was. */
        if (wal_written(s->dir))
            sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
        sqlite3_close(s->db);
    }
    if (s->lock_fd >= 0)
        close(s->lock_fd); /* releases the flock */
    struct shost *h, *htmp;
    HASH_ITER(hh, s->hosts, h, htmp)
    {
        HASH_DEL(s->hosts, h);
        free(h->requeued);
        free(h);
    }
    struct counter *c, *ctmp;
    HASH_ITER(hh, s->counters, c, ctmp)
    {
        HASH_DEL(s->counters, c);
        free(c);
    }
    for (size_t i = 0; i < s->fixed_count; i++)
        free(s->fixed_names[i]);
    free(s->fixed_names);
    for (size_t i = 0; i < s->totals_count; i++)
        free(s->totals[i].slot);
    free(s->dir);
    free(s);
}

bool bc_crawl_state_pending(const struct bc_crawl_state *s)
{
    return s && (s->in_txn || s->warc_dirty);
}

uint64_t bc_crawl_state_writes(const struct bc_crawl_state *s)
{
    return s ? s->writes : 0;
}

const char *bc_crawl_state_errmsg(const struct bc_crawl_state *s)
{
    return s ? s->errmsg : "";
}

void bc_crawl_state_info(const struct bc_crawl_state *s,
                         struct bc_crawl_state_info *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!s)
        return;
    out->resumed = s->resumed;
    out->runs = s->runs;
    out->refetched_now = s->refetched_now;
    /* From the open on, this run's refetches count in the total, though
     * they are stored only once queued again. */
    out->refetched = s->refetched + (s->run_begun ? 0 : s->refetched_now);
    out->out_offset = s->out_offset;
    out->warc = s->warc;
    out->queued = s->queued;
    out->journal = s->journal;
    out->snapshot_pos = s->snapshot_pos;
    out->elapsed_before_ms = s->elapsed_before;
}

/* ---- the frontier of the state --------------------------------------- */

/* The frontier's TOTAL counters under "frontier.*". */
static enum bc_status save_frontier_counters(struct bc_crawl_state *s,
                                             const struct bc_frontier *f)
{
    struct bc_frontier_stats fs;
    bc_frontier_counters(f, &fs);
    size_t n;
    const struct bc_counter *t = bc_frontier_counter_table(&n);
    return bc_crawl_state_save_totals(s, "frontier", t, n, &fs);
}

/* The frontier's TOTAL counters from the state (0 where a key is missing),
 * everything else zero. */
static void load_frontier_counters(const struct bc_crawl_state *s,
                                   struct bc_frontier_stats *fs)
{
    memset(fs, 0, sizeof(*fs));
    size_t n;
    const struct bc_counter *t = bc_frontier_counter_table(&n);
    bc_crawl_state_load_totals(s, "frontier", t, n, fs);
}

struct scope_ctx {
    struct bc_frontier *f;
    enum bc_status st;
};

static void restore_scope(void *ctx, const char *url, size_t len)
{
    struct scope_ctx *c = ctx;
    enum bc_status st = bc_frontier_restore_scope(c->f, url, len);
    if (st == BC_ERR_NOMEM && c->st == BC_OK)
        c->st = st;
}

static enum bc_status restore_hosts(struct bc_crawl_state *s,
                                    struct bc_frontier *f, uint64_t now_ms)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT origin, robots, robots_body, robots_expires,"
                           " robots_failures, given_up_lost, id,"
                           " delay_override FROM hosts",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "hosts");
    uint64_t wall = wall_ms();
    enum bc_status st = BC_OK;
    int rc;
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct bc_frontier_host_state hs;
        memset(&hs, 0, sizeof(hs));
        hs.origin = (const char *)sqlite3_column_text(q, 0);
        hs.origin_len = (size_t)sqlite3_column_bytes(q, 0);
        int robots = sqlite3_column_int(q, 1);
        hs.robots = robots >= 0 && robots <= BC_FRONTIER_ROBOTS_GIVEN_UP
                        ? (enum bc_frontier_robots)robots
                        : BC_FRONTIER_ROBOTS_UNKNOWN;
        hs.robots_body = sqlite3_column_blob(q, 2);
        hs.robots_body_len = (size_t)sqlite3_column_bytes(q, 2);
        if (!hs.robots_body)
            hs.robots_body_len = 0;
        if (sqlite3_column_type(q, 3) == SQLITE_NULL) {
            hs.robots_ttl_ms = UINT64_MAX;
        } else {
            sqlite3_int64 exp = sqlite3_column_int64(q, 3);
            hs.robots_ttl_ms =
                exp > (sqlite3_int64)wall ? (uint64_t)exp - wall : 0;
        }
        if (hs.robots == BC_FRONTIER_ROBOTS_PARSED && !hs.robots_body)
            hs.robots = BC_FRONTIER_ROBOTS_UNKNOWN; /* ask again */
        hs.robots_failures = (unsigned)sqlite3_column_int(q, 4);
        hs.given_up_lost = (uint64_t)sqlite3_column_int64(q, 5);
        sqlite3_int64 delay = sqlite3_column_int64(q, 7);
        hs.delay_override_ms = delay > 0 ? (uint64_t)delay : 0;
        struct shost *h;
        HASH_FIND(hh, s->hosts, hs.origin, hs.origin_len, h);
        if (!hs.origin || !h) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg), "crawl.db: hosts damaged");
            break;
        }
        hs.admitted = h->admitted;
        hs.queued = h->queued;
        st = bc_frontier_restore_host(f, &hs, now_ms);
        if (st != BC_OK)
            set_err(s->errmsg, sizeof(s->errmsg), "host %s: %s", h->origin,
                    bc_strerror(st));
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "hosts");
    sqlite3_finalize(q);
    return st;
}

/* The hosts' circuits, their wall-clock times made relative to now. */
static enum bc_status restore_circuits(struct bc_crawl_state *s,
                                       struct bc_frontier *f, uint64_t now_ms)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT h.origin, c.state, c.failures,"
                           " c.failing_since, c.open_until, c.backoff, c.down,"
                           " c.down_lost, c.exhausted, c.retry_until"
                           " FROM circuits c"
                           " JOIN hosts h ON h.id = c.host",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "circuits");
    uint64_t wall = wall_ms();
    enum bc_status st = BC_OK;
    int rc;
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *origin = (const char *)sqlite3_column_text(q, 0);
        size_t len = (size_t)sqlite3_column_bytes(q, 0);
        int state = sqlite3_column_int(q, 1);
        sqlite3_int64 since = sqlite3_column_int64(q, 3);
        sqlite3_int64 until = sqlite3_column_int64(q, 4);
        struct bc_frontier_circuit_state c;
        memset(&c, 0, sizeof(c));
        c.circuit = state >= 0 && state <= BC_FRONTIER_CIRCUIT_HALF_OPEN
                        ? (enum bc_frontier_circuit)state
                        : BC_FRONTIER_CIRCUIT_CLOSED;
        c.failures = (unsigned)sqlite3_column_int64(q, 2);
        c.failing_ms =
            since > 0 && (uint64_t)since < wall ? wall - (uint64_t)since : 0;
        c.open_ms =
            until > 0 && (uint64_t)until > wall ? (uint64_t)until - wall : 0;
        c.backoff_ms = (uint64_t)sqlite3_column_int64(q, 5);
        c.down = sqlite3_column_int(q, 6) != 0;
        c.down_lost = (uint64_t)sqlite3_column_int64(q, 7);
        c.exhausted = (uint64_t)sqlite3_column_int64(q, 8);
        sqlite3_int64 retry = sqlite3_column_int64(q, 9);
        c.retry_ms =
            retry > 0 && (uint64_t)retry > wall ? (uint64_t)retry - wall : 0;
        st = origin ? bc_frontier_restore_circuit(f, origin, len, &c, now_ms)
                    : BC_ERR_CORRUPT;
        if (st != BC_OK)
            set_err(s->errmsg, sizeof(s->errmsg), "circuit of %s: %s",
                    origin ? origin : "?", bc_strerror(st));
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "circuits");
    sqlite3_finalize(q);
    return st;
}

/* The sitemaps of the crawl, in the order they were queued: the done
 * ones into the set of sitemaps seen, the others queued again. */
static enum bc_status restore_sitemaps(struct bc_crawl_state *s,
                                       struct bc_frontier *f)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT url, scope, level, named, done, retries"
                           " FROM sitemaps ORDER BY id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "sitemaps");
    enum bc_status st = BC_OK;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        int level = sqlite3_column_int(q, 2);
        int retries = sqlite3_column_int(q, 5);
        struct bc_frontier_sitemap sm = {
            (const char *)sqlite3_column_text(q, 0),
            (size_t)sqlite3_column_bytes(q, 0),
            (const char *)sqlite3_column_text(q, 1),
            (size_t)sqlite3_column_bytes(q, 1),
            level >= 0 ? (unsigned)level : 0,
            sqlite3_column_int(q, 3) != 0,
            retries > 0 && retries < 256 ? (unsigned)retries : 0,
            false};
        /* done 1, or 2: given up (only a retry-failed run resets it). */
        st = bc_frontier_restore_sitemap(f, &sm, sqlite3_column_int(q, 4) != 0);
        if (st == BC_ERR_NOMEM)
            break;
        st = BC_OK; /* a row that no longer normalizes: skipped */
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "sitemaps");
    sqlite3_finalize(q);
    return st;
}

/* The admissions after the snapshot (ids > snapshot_pos) into the loaded
 * seen-test: with I5 it then knows every committed admission. */
static enum bc_status replay_journal(struct bc_crawl_state *s,
                                     struct bc_frontier *f)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT url FROM urls WHERE id > ? ORDER BY id", -1,
                           &q, NULL) != SQLITE_OK)
        return db_fail(s, "journal");
    sqlite3_bind_int64(q, 1, (sqlite3_int64)s->snapshot_pos);
    enum bc_status st = BC_OK;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(q, 0);
        st = bc_frontier_restore_seen(f, url,
                                      (size_t)sqlite3_column_bytes(q, 0));
        if (st == BC_ERR_NOMEM)
            break;
        st = BC_OK; /* a URL that no longer normalizes: nothing to add */
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "journal");
    sqlite3_finalize(q);
    return st;
}

void bc_crawl_state_set_seen_clock(struct bc_crawl_state *s, uint64_t now)
{
    if (s)
        s->seen_clock = now;
}

enum bc_status bc_crawl_state_frontier(struct bc_crawl_state *s,
                                       const struct bc_frontier_config *config,
                                       size_t window, uint64_t now_ms,
                                       struct bc_frontier **out)
{
    if (!s || !config || !out || s->frontier_made || s->failed)
        return BC_ERR_INVALID_ARG;
    s->errmsg[0] = '\0';
    char *snap = path_join(s->dir, "bloom.snap");
    if (!snap)
        return BC_ERR_NOMEM;
    struct bc_seen *seen = NULL;
    struct bc_frontier *f = NULL;
    struct stat sb;
    enum bc_status st;
    if (stat(snap, &sb) == 0) {
        errno = 0;
        st = bc_seen_load(snap, &config->seen, &seen);
        if (st != BC_OK)
            set_err(s->errmsg, sizeof(s->errmsg), "bloom.snap: %s",
                    snap_reason(st, errno));
    } else if (s->snapshot_pos > 0) {
        st = BC_ERR_CORRUPT;
        set_err(s->errmsg, sizeof(s->errmsg), "bloom.snap: missing");
    } else {
        /* No snapshot yet: the frontier's own empty seen-test. (Made
         * here and handed to bc_frontier_create_with_seen(), it was
         * sized twice, the frontier's own made and freed: 9.3 M
         * instructions, 1 % of a crawl of the PostgreSQL manual.) */
        st = bc_frontier_create(config, &f);
    }
    free(snap);
    /* Everything checked: this run begins (the first write to an
     * existing state). */
    if (st == BC_OK)
        st = begin_run(s);
    if (st != BC_OK) {
        bc_seen_free(seen);
        bc_frontier_free(f);
        return st;
    }
    if (!f && (st = bc_frontier_create_with_seen(config, seen, &f)) != BC_OK) {
        bc_seen_free(seen);
        return st;
    }
    struct bc_frontier_store store;
    bc_crawl_state_store(s, window, &store);
    st = bc_frontier_set_store(f, &store);
    /* The budget counts: a scan of the index urls_queue (its rows of a
     * host in each generation added), only when there is a budget to
     * keep. */
    if (st == BC_OK && s->resumed && config->host_budget > 0)
        st = count_admitted(
            s, "SELECT host, count(*) FROM urls GROUP BY " SEQ_GEN ", host");
    struct scope_ctx sc = {f, BC_OK};
    if (st == BC_OK)
        st = bc_crawl_state_seeds(s, restore_scope, &sc);
    if (st == BC_OK)
        st = sc.st;
    if (st == BC_OK && s->seen_clock)
        bc_seen_set_clock(bc_frontier_seen(f), s->seen_clock);
    if (st == BC_OK)
        st = replay_journal(s, f);
    if (st == BC_OK)
        st = restore_hosts(s, f, now_ms);
    if (st == BC_OK)
        st = restore_circuits(s, f, now_ms);
    if (st == BC_OK)
        st = restore_sitemaps(s, f);
    if (st != BC_OK) {
        bc_frontier_free(f);
        return st;
    }
    struct bc_frontier_stats fs;
    load_frontier_counters(s, &fs);
    bc_frontier_restore_counters(f, &fs);
    s->frontier_made = true;
    *out = f;
    return BC_OK;
}

/* ---- writing --------------------------------------------------------- */

enum bc_status bc_crawl_state_add_seed(struct bc_crawl_state *s,
                                       const char *url, size_t len)
{
    if (!s || !url)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    sqlite3_bind_text(s->stmt[S_INS_SEED], 1, url, (int)len, SQLITE_STATIC);
    st = run(s, S_INS_SEED);
    if (st != BC_OK)
        s->failed = true;
    return st;
}

enum bc_status bc_crawl_state_seeds(struct bc_crawl_state *s,
                                    void (*fn)(void *ctx, const char *url,
                                               size_t len),
                                    void *ctx)
{
    if (!s || !fn)
        return BC_ERR_INVALID_ARG;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, "SELECT url FROM seeds ORDER BY rowid", -1,
                           &q, NULL) != SQLITE_OK)
        return db_fail(s, "seeds");
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        fn(ctx, (const char *)sqlite3_column_text(q, 0),
           (size_t)sqlite3_column_bytes(q, 0));
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? BC_OK : db_fail(s, "seeds");
}

enum bc_status bc_crawl_state_known(struct bc_crawl_state *s,
                                    void (*fn)(void *ctx, const char *url,
                                               size_t len, unsigned depth),
                                    void *ctx)
{
    if (!s || !fn)
        return BC_ERR_INVALID_ARG;
    sqlite3_stmt *q;
    /* Handed out (at or below the host's cursor) and not queued again: the
     * rows admitted during the scan have larger ids and are left out. */
    if (sqlite3_prepare_v2(
            s->db,
            "SELECT u.url, u.depth FROM urls u JOIN hosts h ON h.id = u.host"
            " WHERE u.id <= (SELECT max(id) FROM urls) AND u.seq <= h.cursor"
            " AND u.seq NOT IN (SELECT seq FROM flight WHERE requeued = 1)"
            " ORDER BY u.id",
            -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "journal");
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW)
        fn(ctx, (const char *)sqlite3_column_text(q, 0),
           (size_t)sqlite3_column_bytes(q, 0),
           (unsigned)sqlite3_column_int64(q, 1));
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? BC_OK : db_fail(s, "journal");
}

enum bc_status bc_crawl_state_page_done(struct bc_crawl_state *s, uint64_t id)
{
    if (!s || id == 0)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    /* Completed: its flight row goes (I1). Only a URL in flight: one
     * queued again for a retry has left the flight table already. */
    return run_seq(s, S_FLIGHT_DEL, (sqlite3_int64)id, NULL);
}

enum bc_status bc_crawl_state_page_failed(struct bc_crawl_state *s, uint64_t id)
{
    if (!s || id == 0)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    const sqlite3_int64 v[] = {(sqlite3_int64)id};
    st = run_ints(s,
                  "INSERT OR IGNORE INTO failed(seq, host)"
                  " SELECT seq, host FROM flight WHERE seq = ?",
                  v, 1);
    if (st != BC_OK)
        return st;
    return run_seq(s, S_FLIGHT_DEL, (sqlite3_int64)id, NULL); /* I1 */
}

/* A change of the state's rows made before the frontier (--retry-failed,
 * --revisit's sitemaps): in a transaction, with the tables of faults made
 * if an older state lacks them. */
static enum bc_status before_frontier_begin(struct bc_crawl_state *s)
{
    enum bc_status st = ensure_txn(s);
    if (st == BC_OK)
        st = make_fault_tables(s);
    return st;
}

/* Its end: a failure is the state's (sticky); else it is committed and
 * *n gets count. */
static enum bc_status before_frontier_end(struct bc_crawl_state *s,
                                          enum bc_status st, uint64_t count,
                                          uint64_t *n)
{
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    st = bc_crawl_state_commit(s, NULL);
    if (st == BC_OK)
        *n = count;
    return st;
}

enum bc_status bc_crawl_state_retry_failed(struct bc_crawl_state *s,
                                           uint64_t *n)
{
    if (!s || !n || s->frontier_made || s->failed)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = before_frontier_begin(s);
    sqlite3_stmt *q = NULL;
    if (st == BC_OK &&
        sqlite3_prepare_v2(s->db,
                           "SELECT f.seq, f.host, h.origin FROM failed f"
                           " JOIN hosts h ON h.id = f.host ORDER BY f.seq",
                           -1, &q, NULL) != SQLITE_OK)
        st = db_fail(s, "failed");
    uint64_t count = 0;
    int rc = SQLITE_DONE;
    /* Each to the tail of its host's queue (a new seq, after the
     * cursor), its retries from 0. */
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *origin = (const char *)sqlite3_column_text(q, 2);
        struct shost *h = NULL;
        if (origin)
            HASH_FIND(hh, s->hosts, origin, (size_t)sqlite3_column_bytes(q, 2),
                      h);
        if (!h) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg), "crawl.db: failed damaged");
            break;
        }
        sqlite3_stmt *u = s->stmt[S_REQUEUE];
        sqlite3_bind_int64(u, 1, s->next_seq++);
        sqlite3_bind_int(u, 2, 0);
        sqlite3_bind_int64(u, 3, h->id);
        sqlite3_bind_int64(u, 4, sqlite3_column_int64(q, 0));
        st = run(s, S_REQUEUE);
        if (st == BC_OK && sqlite3_changes(s->db) == 1) {
            h->queued++;
            s->queued++;
            count++;
        }
    }
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "failed");
    sqlite3_finalize(q);
    /* The hosts given up (down, or robots.txt unreachable: robots 4)
     * start again. */
    _Static_assert(BC_FRONTIER_ROBOTS_GIVEN_UP == 4, "hosts.robots");
    if (st == BC_OK)
        st = exec(s, "DELETE FROM failed;"
                     "DELETE FROM circuits WHERE down = 1;"
                     "UPDATE circuits SET exhausted = 0;"
                     "UPDATE sitemaps SET done = 0, retries = 0"
                     " WHERE done = 2;"
                     "UPDATE hosts SET robots = 0, robots_failures = 0,"
                     " given_up_lost = 0 WHERE robots = 4;");
    /* Nothing is given up any more: the counters of what was start
     * again (the frontier's and the crawler's, by the names they save). */
    static const char *const given_up[] = {
        "frontier.retries_exhausted",    "frontier.reason.host_down",
        "frontier.reason.host_given_up", "crawler.transient_given_up",
        "crawler.host_down_dropped",     "crawler.given_up_dropped",
        "frontier.sitemap.transient"};
    for (size_t i = 0; st == BC_OK && i < sizeof(given_up) / sizeof(*given_up);
         i++)
        if (counter_find(s, given_up[i]))
            st = counter_put(s, given_up[i], 0, true);
    return before_frontier_end(s, st, count, n);
}

enum bc_status bc_crawl_state_sitemaps_again(struct bc_crawl_state *s,
                                             uint64_t *n)
{
    if (!s || !n || s->frontier_made || s->failed)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = before_frontier_begin(s);
    /* Done ones only (1): one given up to transient faults (2) waits for
     * --retry-failed, as its host's URLs do. */
    if (st == BC_OK)
        st = exec(s, "UPDATE sitemaps SET done = 0, retries = 0"
                     " WHERE done = 1");
    uint64_t count = st == BC_OK ? (uint64_t)sqlite3_changes(s->db) : 0;
    return before_frontier_end(s, st, count, n);
}

enum bc_status bc_crawl_state_counter_set(struct bc_crawl_state *s,
                                          const char *name, uint64_t value)
{
    if (!s || !name)
        return BC_ERR_INVALID_ARG;
    return counter_put(s, name, value, true);
}

uint64_t bc_crawl_state_counter_get(const struct bc_crawl_state *s,
                                    const char *name)
{
    const struct counter *c = s && name ? counter_find(s, name) : NULL;
    return c ? c->value : 0;
}

/* The cached counters of table (rows rows) in group, or NULL. */
static struct totals *totals_find(struct bc_crawl_state *s, const char *group,
                                  const struct bc_counter *t, size_t n)
{
    for (size_t i = 0; i < s->totals_count; i++)
        if (s->totals[i].table == t && s->totals[i].rows == n &&
            strcmp(s->totals[i].group, group) == 0)
            return &s->totals[i];
    return NULL;
}

/* The number of elements of the TOTAL rows of t. */
static size_t totals_elements(const struct bc_counter *t, size_t n)
{
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        if (t[r].kind == BC_COUNTER_TOTAL)
            k += t[r].count;
    return k;
}

enum bc_status bc_crawl_state_save_totals(struct bc_crawl_state *s,
                                          const char *group,
                                          const struct bc_counter *t, size_t n,
                                          const void *stats)
{
    if (!s || !group || (!t && n) || !stats)
        return BC_ERR_INVALID_ARG;
    struct totals *tc = totals_find(s, group, t, n);
    if (tc) {
        size_t k = 0;
        for (size_t r = 0; r < n; r++) {
            for (size_t i = 0; t[r].kind == BC_COUNTER_TOTAL && i < t[r].count;
                 i++) {
                struct counter *c = tc->slot[k++];
                uint64_t v = bc_counter_u64(&t[r], stats, i);
                if (c->value != v) { /* as counter_put(..., true) */
                    c->value = v;
                    c->dirty = true;
                }
            }
        }
        return BC_OK;
    }
    /* The first call of this table: by key, each counter's place kept
     * (when there is room and memory for it). */
    size_t slots = totals_elements(t, n);
    struct counter **slot = NULL;
    if (s->totals_count < TOTALS_CACHED && strlen(group) < 16 && slots > 0)
        slot = calloc(slots, sizeof(*slot));
    size_t k = 0;
    for (size_t r = 0; r < n; r++) {
        for (size_t i = 0; t[r].kind == BC_COUNTER_TOTAL && i < t[r].count;
             i++) {
            char key[64];
            if (!bc_counter_key(&t[r], group, i, key, sizeof(key))) {
                free(slot);
                return BC_ERR_INVALID_ARG;
            }
            enum bc_status st =
                counter_put(s, key, bc_counter_u64(&t[r], stats, i), true);
            if (st != BC_OK) {
                free(slot);
                return st;
            }
            if (slot)
                slot[k++] = counter_find(s, key);
        }
    }
    if (slot) {
        tc = &s->totals[s->totals_count++];
        tc->table = t;
        tc->rows = n;
        memcpy(tc->group, group, strlen(group) + 1);
        tc->slot = slot;
        tc->slots = slots;
    }
    return BC_OK;
}

void bc_crawl_state_load_totals(const struct bc_crawl_state *s,
                                const char *group, const struct bc_counter *t,
                                size_t n, void *stats)
{
    if (!s || !group || !t || !stats)
        return;
    for (size_t r = 0; r < n; r++) {
        for (size_t i = 0; t[r].kind == BC_COUNTER_TOTAL && i < t[r].count;
             i++) {
            char key[64];
            if (bc_counter_key(&t[r], group, i, key, sizeof(key)))
                bc_counter_set(&t[r], stats, i,
                               bc_crawl_state_counter_get(s, key));
        }
    }
}

enum bc_status bc_crawl_state_host_stats_set(struct bc_crawl_state *s,
                                             const char *origin, size_t len,
                                             const void *data, size_t n)
{
    if (!s || !origin || (!data && n > 0) || len > INT32_MAX || n > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    sqlite3_stmt *q = s->stmt[S_SET_HOST_STATS];
    sqlite3_bind_text(q, 1, origin, (int)len, SQLITE_STATIC);
    sqlite3_bind_blob(q, 2, n ? data : "", (int)n, SQLITE_STATIC);
    st = run(s, S_SET_HOST_STATS);
    if (st != BC_OK)
        s->failed = true;
    return st;
}

enum bc_status
bc_crawl_state_host_stats(struct bc_crawl_state *s,
                          void (*fn)(void *ctx, const char *origin, size_t len,
                                     const void *data, size_t n),
                          void *ctx)
{
    if (!s || !fn)
        return BC_ERR_INVALID_ARG;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db, "SELECT origin, data FROM host_stats", -1, &q,
                           NULL) != SQLITE_OK)
        return db_fail(s, "host_stats");
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *origin = (const char *)sqlite3_column_text(q, 0);
        const void *data = sqlite3_column_blob(q, 1);
        if (origin)
            fn(ctx, origin, (size_t)sqlite3_column_bytes(q, 0), data,
               (size_t)sqlite3_column_bytes(q, 1));
    }
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? BC_OK : db_fail(s, "host_stats");
}

/* ---- payloads (PAYLOADS above) ---------------------------------------- */

enum bc_status
bc_crawl_state_payload_put(struct bc_crawl_state *s,
                           const struct bc_crawl_state_payload *p)
{
    if (!s || !p || !p->digest || !p->url || !p->record_id ||
        p->url_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    if (!s->payload_put &&
        sqlite3_prepare_v3(s->db,
                           "INSERT INTO payload_log(digest, url,"
                           " record_id, date) VALUES(?, ?, ?, ?)",
                           -1, SQLITE_PREPARE_PERSISTENT, &s->payload_put,
                           NULL) != SQLITE_OK) {
        s->failed = true;
        return db_fail(s, "payloads");
    }
    sqlite3_stmt *q = s->payload_put;
    sqlite3_bind_blob(q, 1, p->digest, BC_CRAWL_STATE_DIGEST_SIZE,
                      SQLITE_STATIC);
    sqlite3_bind_text(q, 2, p->url, (int)p->url_len, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, p->record_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 4, (sqlite3_int64)p->date);
    return write_row(s, q, "payloads");
}

enum bc_status bc_crawl_state_payloads(
    struct bc_crawl_state *s,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_payload *p),
    void *ctx)
{
    if (!s || !fn)
        return BC_ERR_INVALID_ARG;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT digest, url, record_id, date"
                           " FROM payload_log ORDER BY id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "payloads");
    int rc;
    enum bc_status st = BC_OK;
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const unsigned char *d = sqlite3_column_blob(q, 0);
        const char *url = (const char *)sqlite3_column_text(q, 1);
        const char *id = (const char *)sqlite3_column_text(q, 2);
        if (!d || sqlite3_column_bytes(q, 0) != BC_CRAWL_STATE_DIGEST_SIZE ||
            !url || !id) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg),
                    "crawl.db: a payloads row is malformed");
            break;
        }
        struct bc_crawl_state_payload p = {
            .digest = d,
            .url = url,
            .url_len = (size_t)sqlite3_column_bytes(q, 1),
            .record_id = id,
            .date = sqlite3_column_int64(q, 3),
        };
        st = fn(ctx, &p);
    }
    sqlite3_finalize(q);
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "payloads");
    return st;
}

/* ---- validators (VALIDATORS above) ---------------------------------- */

/* Prepare *q once (SQLITE_PREPARE_PERSISTENT); false (sticky) when it
 * cannot be. */
static bool prepare_once(struct bc_crawl_state *s, sqlite3_stmt **q,
                         const char *sql)
{
    if (*q)
        return true;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, q,
                           NULL) == SQLITE_OK)
        return true;
    s->failed = true;
    return false;
}

enum bc_status
bc_crawl_state_validators_put(struct bc_crawl_state *s,
                              const struct bc_crawl_state_validators *v)
{
    if (!s || !v || !v->url || !v->etag || !v->last_modified || !v->record_id ||
        !v->record_uri || v->url_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    if (!prepare_once(s, &s->validators_put,
                      "INSERT OR REPLACE INTO validators(url, etag,"
                      " last_modified, record_id, record_uri, date)"
                      " VALUES(?, ?, ?, ?, ?, ?)"))
        return db_fail(s, "validators");
    sqlite3_stmt *q = s->validators_put;
    sqlite3_bind_text(q, 1, v->url, (int)v->url_len, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, v->etag, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, v->last_modified, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 4, v->record_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 5, v->record_uri, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 6, (sqlite3_int64)v->date);
    return write_row(s, q, "validators");
}

enum bc_status bc_crawl_state_validators_find(
    struct bc_crawl_state *s, const char *url, size_t url_len,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_validators *v),
    void *ctx)
{
    if (!s || !url || !fn || url_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    if (!prepare_once(s, &s->validators_find,
                      "SELECT etag, last_modified, record_id, record_uri,"
                      " date FROM validators WHERE url = ?"))
        return db_fail(s, "validators");
    sqlite3_stmt *q = s->validators_find;
    sqlite3_bind_text(q, 1, url, (int)url_len, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    enum bc_status st = BC_ERR_NOT_FOUND;
    if (rc == SQLITE_ROW) {
        struct bc_crawl_state_validators v = {
            .url = url,
            .url_len = url_len,
            .etag = (const char *)sqlite3_column_text(q, 0),
            .last_modified = (const char *)sqlite3_column_text(q, 1),
            .record_id = (const char *)sqlite3_column_text(q, 2),
            .record_uri = (const char *)sqlite3_column_text(q, 3),
            .date = sqlite3_column_int64(q, 4),
        };
        if (!v.etag || !v.last_modified || !v.record_id || !v.record_uri) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg),
                    "crawl.db: a validators row is malformed");
        } else {
            st = fn(ctx, &v);
        }
    } else if (rc != SQLITE_DONE) {
        st = db_fail(s, "validators");
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return st;
}

/* ---- fetched (FETCHED above) ----------------------------------------- */

enum bc_status bc_crawl_state_fetched_put(struct bc_crawl_state *s,
                                          const char *url, size_t url_len,
                                          int64_t time)
{
    if (!s || !url || url_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    if (!prepare_once(s, &s->fetched_put,
                      "INSERT OR REPLACE INTO fetched(url, time) VALUES(?, ?)"))
        return db_fail(s, "fetched");
    sqlite3_stmt *q = s->fetched_put;
    sqlite3_bind_text(q, 1, url, (int)url_len, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, (sqlite3_int64)time);
    return write_row(s, q, "fetched");
}

enum bc_status bc_crawl_state_fetched_find(struct bc_crawl_state *s,
                                           const char *url, size_t url_len,
                                           int64_t *time)
{
    if (!s || !url || !time || url_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    if (!prepare_once(s, &s->fetched_find,
                      "SELECT time FROM fetched WHERE url = ?"))
        return db_fail(s, "fetched");
    sqlite3_stmt *q = s->fetched_find;
    sqlite3_bind_text(q, 1, url, (int)url_len, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    enum bc_status st = BC_ERR_NOT_FOUND;
    if (rc == SQLITE_ROW) {
        *time = sqlite3_column_int64(q, 0);
        st = BC_OK;
    } else if (rc != SQLITE_DONE) {
        st = db_fail(s, "fetched");
    }
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    return st;
}

/* ---- fingerprints (FINGERPRINTS above) ------------------------------- */

enum bc_status
bc_crawl_state_fingerprint_put(struct bc_crawl_state *s,
                               const struct bc_crawl_state_fingerprint *f)
{
    if (!s || !f || !f->url || f->url_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    if (!s->fingerprint_put &&
        sqlite3_prepare_v3(s->db,
                           "INSERT INTO fingerprints(fp, url) VALUES(?, ?)", -1,
                           SQLITE_PREPARE_PERSISTENT, &s->fingerprint_put,
                           NULL) != SQLITE_OK) {
        s->failed = true;
        return db_fail(s, "fingerprints");
    }
    sqlite3_stmt *q = s->fingerprint_put;
    sqlite3_bind_int64(q, 1, (sqlite3_int64)f->fp);
    sqlite3_bind_text(q, 2, f->url, (int)f->url_len, SQLITE_STATIC);
    return write_row(s, q, "fingerprints");
}

enum bc_status bc_crawl_state_fingerprints(
    struct bc_crawl_state *s,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_fingerprint *f),
    void *ctx)
{
    if (!s || !fn)
        return BC_ERR_INVALID_ARG;
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT fp, url FROM fingerprints ORDER BY rowid",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "fingerprints");
    int rc;
    enum bc_status st = BC_OK;
    while (st == BC_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        const char *url = (const char *)sqlite3_column_text(q, 1);
        if (!url || sqlite3_column_type(q, 0) != SQLITE_INTEGER) {
            st = BC_ERR_CORRUPT;
            set_err(s->errmsg, sizeof(s->errmsg),
                    "crawl.db: a fingerprints row is malformed");
            break;
        }
        struct bc_crawl_state_fingerprint f = {
            .fp = (uint64_t)sqlite3_column_int64(q, 0),
            .url = url,
            .url_len = (size_t)sqlite3_column_bytes(q, 1),
        };
        st = fn(ctx, &f);
    }
    sqlite3_finalize(q);
    if (st == BC_OK && rc != SQLITE_DONE)
        st = db_fail(s, "fingerprints");
    return st;
}

/* ---- the outbox ------------------------------------------------------ */

enum bc_status bc_crawl_state_outbox_add(struct bc_crawl_state *s,
                                         const struct bc_crawl_state_routed *r)
{
    if (!s || !r || !r->url || (!r->referrer && r->referrer_len > 0) ||
        r->url_len > INT32_MAX || r->referrer_len > INT32_MAX)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    sqlite3_stmt *q = s->stmt[S_OUTBOX_ADD];
    sqlite3_bind_int64(q, 1, (sqlite3_int64)r->worker);
    sqlite3_bind_text(q, 2, r->url, (int)r->url_len, SQLITE_STATIC);
    if (r->referrer)
        sqlite3_bind_text(q, 3, r->referrer, (int)r->referrer_len,
                          SQLITE_STATIC);
    else
        sqlite3_bind_null(q, 3);
    sqlite3_bind_int64(q, 4, (sqlite3_int64)r->depth);
    sqlite3_bind_int64(q, 5, (sqlite3_int64)r->redirects);
    sqlite3_bind_int(q, 6, r->seed ? 1 : 0);
    st = run(s, S_OUTBOX_ADD);
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    s->outbox++;
    return BC_OK;
}

enum bc_status bc_crawl_state_outbox_read(
    struct bc_crawl_state *s, uint64_t after_id, size_t max,
    void (*fn)(void *ctx, const struct bc_crawl_state_routed *r), void *ctx,
    size_t *count)
{
    if (!s || !fn)
        return BC_ERR_INVALID_ARG;
    size_t n = 0;
    if (count)
        *count = 0;
    if (max == 0)
        return BC_OK;
    sqlite3_stmt *q = s->stmt[S_OUTBOX_READ];
    sqlite3_bind_int64(
        q, 1, after_id > INT64_MAX ? INT64_MAX : (sqlite3_int64)after_id);
    sqlite3_bind_int64(q, 2, max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max);
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        struct bc_crawl_state_routed r;
        r.id = (uint64_t)sqlite3_column_int64(q, 0);
        r.worker = (unsigned)sqlite3_column_int64(q, 1);
        r.url = (const char *)sqlite3_column_text(q, 2);
        r.url_len = (size_t)sqlite3_column_bytes(q, 2);
        r.referrer = (const char *)sqlite3_column_text(q, 3);
        r.referrer_len = r.referrer ? (size_t)sqlite3_column_bytes(q, 3) : 0;
        r.depth = (unsigned)sqlite3_column_int64(q, 4);
        r.redirects = (unsigned)sqlite3_column_int64(q, 5);
        r.seed = sqlite3_column_int(q, 6) != 0;
        if (!r.url)
            continue; /* NOT NULL: only out of memory */
        fn(ctx, &r);
        n++;
    }
    sqlite3_reset(q);
    if (count)
        *count = n;
    return rc == SQLITE_DONE ? BC_OK : db_fail(s, "outbox");
}

enum bc_status bc_crawl_state_outbox_remove(struct bc_crawl_state *s,
                                            uint64_t up_to_id)
{
    if (!s)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st != BC_OK)
        return st;
    sqlite3_int64 id =
        up_to_id > INT64_MAX ? INT64_MAX : (sqlite3_int64)up_to_id;
    st = run_seq(s, S_OUTBOX_DEL, id, NULL);
    if (st != BC_OK)
        return st;
    uint64_t gone = (uint64_t)sqlite3_changes(s->db);
    s->outbox -= gone < s->outbox ? gone : s->outbox;
    return BC_OK;
}

uint64_t bc_crawl_state_outbox_count(const struct bc_crawl_state *s)
{
    return s ? s->outbox : 0;
}

void bc_crawl_state_set_out_offset(struct bc_crawl_state *s, uint64_t offset)
{
    if (s)
        s->out_offset = offset;
}

void bc_crawl_state_set_warc(struct bc_crawl_state *s,
                             const struct bc_warc_position *at)
{
    if (!s || !at)
        return;
    if (at->seq != s->warc.seq || at->offset != s->warc.offset ||
        at->records != s->warc.records)
        s->warc_dirty = true;
    s->warc = *at;
}

enum bc_status bc_crawl_state_commit(struct bc_crawl_state *s,
                                     const struct bc_frontier *f)
{
    if (!s)
        return BC_ERR_INVALID_ARG;
    enum bc_status st = ensure_txn(s);
    if (st == BC_OK && f)
        st = save_frontier_counters(s, f);
    struct counter *c, *ctmp;
    HASH_ITER(hh, s->counters, c, ctmp)
    {
        if (st != BC_OK || !c->dirty)
            continue;
        sqlite3_stmt *q = s->stmt[S_SET_COUNTER];
        sqlite3_bind_text(q, 1, c->name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(q, 2, (sqlite3_int64)c->value);
        st = run(s, S_SET_COUNTER);
    }
    if (st == BC_OK)
        st = commit_meta(s, META_NEXT_SEQ, s->next_seq);
    /* The cursors that moved. */
    for (struct shost *h = s->dirty; st == BC_OK && h; h = h->next_dirty)
        st = run_seq(s, S_HOST_CURSOR, h->cursor, h);
    if (st == BC_OK)
        st = commit_meta(s, META_OUT_OFFSET, (sqlite3_int64)s->out_offset);
    if (st == BC_OK)
        st = commit_meta(s, META_WARC_SEQ, (sqlite3_int64)s->warc.seq);
    if (st == BC_OK)
        st = commit_meta(s, META_WARC_OFFSET, (sqlite3_int64)s->warc.offset);
    if (st == BC_OK)
        st = commit_meta(s, META_WARC_RECORDS, (sqlite3_int64)s->warc.records);
    if (st == BC_OK)
        st = commit_meta(s, META_RUNS, (sqlite3_int64)s->runs);
    if (st == BC_OK)
        st = commit_meta(s, META_REFETCHED, (sqlite3_int64)s->refetched);
    if (st == BC_OK)
        st = set_meta(
            s, "elapsed_ms",
            (sqlite3_int64)(s->elapsed_before + mono_ms() - s->opened_ms));
    /* When, on the wall clock: bc_crawl_state_peek()'s last commit. */
    if (st == BC_OK)
        st = set_meta(s, "committed_ms", (sqlite3_int64)wall_ms());
    if (st == BC_OK)
        st = exec(s, "COMMIT"); /* the turn, whole (I4) */
    if (st != BC_OK) {
        if (s->in_txn && sqlite3_get_autocommit(s->db) == 0)
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        s->in_txn = false;
        s->failed = true;
        return st;
    }
    s->in_txn = false;
    s->warc_dirty = false;
    s->snapshot_current = false;
    for (int i = 0; i < META_COMMITTED; i++)
        if (s->meta[i].pending) {
            s->meta[i].pending = false;
            s->meta[i].known = true;
        }
    while (s->dirty) {
        struct shost *h = s->dirty;
        s->dirty = h->next_dirty;
        h->dirty = false;
        h->next_dirty = NULL;
    }
    HASH_ITER(hh, s->counters, c, ctmp)
    c->dirty = false;
    s->committed_journal = s->journal;
    return BC_OK;
}

/*
 * Make every commit in the WAL durable (I6): one fdatasync of
 * crawl.db-wal, through SQLite's own handle of the file
 * (SQLITE_FCNTL_JOURNAL_POINTER): the sync a checkpoint begins with,
 * without the checkpoint (DURABILITY). The open's PRAGMA journal_mode =
 * WAL opened the WAL; should SQLite give no handle all the same, a
 * PASSIVE checkpoint, which syncs the WAL when it holds frames not yet in
 * crawl.db (and when it holds none, the checkpoint that copied them
 * synced crawl.db).
 */
static enum bc_status wal_sync(struct bc_crawl_state *s)
{
    sqlite3_file *wal = NULL;
    if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_JOURNAL_POINTER,
                             &wal) != SQLITE_OK ||
        !wal || !wal->pMethods) {
        if (checkpoint_now(s, SQLITE_CHECKPOINT_PASSIVE) != SQLITE_OK)
            return db_fail(s, "checkpoint");
        return BC_OK;
    }
    int rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
    if (rc != SQLITE_OK) {
        /* The file keeps the errno of its failed call; the handle's
         * error state (db_reason()) never saw this one. */
        int err = 0;
        if (wal->pMethods->xFileControl(wal, SQLITE_FCNTL_LAST_ERRNO, &err) !=
            SQLITE_OK)
            err = 0;
        set_err(s->errmsg, sizeof(s->errmsg), "crawl.db-wal: sync: %s%s%s%s",
                sqlite3_errstr(rc), err ? " (" : "", err ? strerror(err) : "",
                err ? ")" : "");
        return BC_ERR_IO;
    }
    return BC_OK;
}

enum bc_status bc_crawl_state_snapshot(struct bc_crawl_state *s,
                                       struct bc_frontier *f)
{
    if (!s || !f || s->in_txn || s->failed)
        return BC_ERR_INVALID_ARG;
    /* Nothing committed since this open's last snapshot: bloom.snap and
     * snapshot_pos are those it would write (a crawl's end syncs, then
     * its embedder syncs again). */
    if (s->snapshot_current)
        return BC_OK;
    /* I6. The WAL is synced first: every commit the snapshot covers is
     * then on disk, so a power loss cannot leave a snapshot that knows
     * admissions the database lost (their URLs would never be fetched).
     * Synced, not checkpointed: copying it into crawl.db is the
     * checkpointer's work, off the loop (DURABILITY). */
    enum bc_status st = wal_sync(s);
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    char *snap = path_join(s->dir, "bloom.snap");
    if (!snap)
        return BC_ERR_NOMEM;
    errno = 0;
    st = bc_seen_save(bc_frontier_seen(f), snap);
    int err = errno;
    free(snap);
    if (st != BC_OK) {
        set_err(s->errmsg, sizeof(s->errmsg), "bloom.snap: %s",
                snap_reason(st, err));
        return st;
    }
    /* The file is in place: only now may the position move (I5). */
    st = ensure_txn(s);
    if (st == BC_OK)
        st = set_meta(s, "snapshot_pos", (sqlite3_int64)s->committed_journal);
    if (st == BC_OK)
        st = exec(s, "COMMIT");
    if (st != BC_OK) {
        s->failed = true;
        return st;
    }
    s->in_txn = false;
    s->snapshot_pos = s->committed_journal;
    s->snapshot_current = true;
    return BC_OK;
}

/* ---- a look from outside (crawl --status --state DIR) ----------------- */

/*
 * Whether a process holds DIR/lock, and its pid (the lock file's). The
 * probe is a shared flock taken without waiting and dropped at once: it
 * fails exactly while a crawl holds its exclusive lock. A crawl opening
 * the state in those microseconds waits for it (take_lock()'s retries).
 * A missing lock file: nobody has the state open.
 */
static enum bc_status peek_lock(const char *dir, bool *running, long *pid,
                                struct bc_crawl_state_error *err)
{
    *running = false;
    *pid = 0;
    char *path = path_join(dir, "lock");
    if (!path)
        return BC_ERR_NOMEM;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0 && errno == ENOENT)
        return BC_OK;
    if (fd < 0) {
        set_err(err->text, sizeof(err->text), "cannot open lock: %s",
                strerror(errno));
        return BC_ERR_IO;
    }
    enum bc_status st = BC_OK;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
        flock(fd, LOCK_UN);
    } else if (errno == EWOULDBLOCK) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
        buf[n > 0 ? n : 0] = '\0';
        *running = true;
        *pid = strtol(buf, NULL, 10);
    } else {
        set_err(err->text, sizeof(err->text), "cannot lock: %s",
                strerror(errno));
        st = BC_ERR_IO;
    }
    close(fd);
    return st;
}

/* One integer of a read-only query of db; 0 when the query has no row. */
static bool peek_int(sqlite3 *db, const char *sql, uint64_t *out)
{
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
        return false;
    int rc = sqlite3_step(q);
    *out = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(q, 0) : 0;
    sqlite3_finalize(q);
    return rc == SQLITE_ROW || rc == SQLITE_DONE;
}

/* The path of DIR's crawl.db (malloc'd) in *db_path, after checking that
 * DIR is a directory holding one. */
static enum bc_status peek_db_path(const char *dir, char **db_path,
                                   struct bc_crawl_state_error *err)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        int e = errno;
        set_err(err->text, sizeof(err->text), "%s", strerror(e));
        return e == ENOENT ? BC_ERR_NOT_FOUND : BC_ERR_IO;
    }
    if (!S_ISDIR(sb.st_mode)) {
        set_err(err->text, sizeof(err->text), "not a directory");
        return BC_ERR_FORMAT;
    }
    char *path = path_join(dir, "crawl.db");
    if (!path)
        return BC_ERR_NOMEM;
    if (stat(path, &sb) != 0) {
        free(path);
        set_err(err->text, sizeof(err->text),
                "not a crawl state (no crawl.db)");
        return BC_ERR_FORMAT;
    }
    *db_path = path;
    return BC_OK;
}

/* Is db a crawl state of the version this build reads? BC_OK, or
 * BC_ERR_FORMAT / BC_ERR_VERSION with the text in err, or BC_ERR_IO with
 * *ok false (a query failed: the caller says how). */
static enum bc_status peek_format(sqlite3 *db, bool *ok,
                                  struct bc_crawl_state_error *err)
{
    uint64_t app = 0, version = 0;
    *ok = peek_int(db, "PRAGMA application_id", &app);
    if (*ok && app != APP_ID) {
        set_err(err->text, sizeof(err->text),
                "crawl.db is not a crawl state database");
        return BC_ERR_FORMAT;
    }
    *ok = *ok && peek_int(db, "PRAGMA user_version", &version);
    if (*ok && version != BC_CRAWL_STATE_VERSION &&
        version != QUEUE_GEN_VERSION - 1) {
        set_err(err->text, sizeof(err->text),
                "crawl state format version %llu, this build reads versions "
                "%d and %d only",
                (unsigned long long)version, QUEUE_GEN_VERSION - 1,
                BC_CRAWL_STATE_VERSION);
        return BC_ERR_VERSION;
    }
    return *ok ? BC_OK : BC_ERR_IO;
}

/* peek_queued()'s SQL function after_cursor(host, seq): 1 for the URL
 * row of host and seq if it lies after its host's cursor, else 0. */
struct peek_cursors {
    sqlite3_int64 *cursor; /* by host id */
    sqlite3_int64 max_id;
};

static void after_cursor(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const struct peek_cursors *c = sqlite3_user_data(ctx);
    sqlite3_int64 id = sqlite3_value_int64(argv[0]);
    sqlite3_result_int(ctx, id >= 0 && id <= c->max_id &&
                                sqlite3_value_int64(argv[1]) > c->cursor[id]);
}

/* The queue's URL rows as the frontier rebuilds it (I3): each host's URLs
 * after its cursor, in one scan of urls_queue (a state of version 3 or
 * 4), the hosts' cursors in an array and compared by after_cursor() (as
 * count_queued() does: at 10^7 URLs 0.7 s, where a join finding each
 * entry's host took 1.5 s). False when a query failed, or the array
 * could not be allocated. */
static bool peek_queued(sqlite3 *db, uint64_t *out)
{
    uint64_t max_id = 0;
    if (!peek_int(db, "SELECT coalesce(max(id), 0) FROM hosts", &max_id))
        return false;
    struct peek_cursors c = {calloc((size_t)max_id + 1, sizeof(*c.cursor)),
                             (sqlite3_int64)max_id};
    sqlite3_stmt *q = NULL;
    bool ok = c.cursor && sqlite3_prepare_v2(db, "SELECT id, cursor FROM hosts",
                                             -1, &q, NULL) == SQLITE_OK;
    int rc = SQLITE_DONE;
    while (ok && (rc = sqlite3_step(q)) == SQLITE_ROW) {
        sqlite3_int64 id = sqlite3_column_int64(q, 0);
        if (id >= 0 && id <= c.max_id)
            c.cursor[id] = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    ok = ok && rc == SQLITE_DONE &&
         sqlite3_create_function(db, "after_cursor", 2, SQLITE_UTF8, &c,
                                 after_cursor, NULL, NULL) == SQLITE_OK &&
         peek_int(db, "SELECT count(*) FROM urls WHERE after_cursor(host, seq)",
                  out);
    (void)sqlite3_create_function(db, "after_cursor", 2, SQLITE_UTF8, NULL,
                                  NULL, NULL, NULL);
    free(c.cursor);
    return ok;
}

/* The summary's numbers, read in the caller's one transaction; false when
 * a query failed. */
static bool peek_numbers(sqlite3 *db, struct bc_crawl_state_summary *sum)
{
    uint64_t failed_table = 0, requeued = 0;
    /* The queue (I3): the URL rows after their hosts' cursors and the
     * requeued flight rows; in flight: the flight rows not requeued. */
    if (!peek_queued(db, &sum->queued) ||
        !peek_int(db, "SELECT count(*) FROM flight WHERE requeued = 1",
                  &requeued))
        return false;
    sum->queued += requeued;
    return peek_int(db, "SELECT count(*) FROM flight WHERE requeued = 0",
                    &sum->in_flight) &&
           peek_int(db, "SELECT coalesce(max(id), 0) FROM urls",
                    &sum->admitted) &&
           peek_int(db, "SELECT count(*) FROM hosts", &sum->hosts) &&
           peek_int(db,
                    "SELECT value FROM counters WHERE name = 'crawler.pages'",
                    &sum->pages) &&
           peek_int(db,
                    "SELECT coalesce(sum(value), 0) FROM counters"
                    " WHERE name LIKE 'crawler.errors.%'",
                    &sum->errors) &&
           peek_int(db, "SELECT value FROM meta WHERE key = 'runs'",
                    &sum->runs) &&
           peek_int(db, "SELECT value FROM meta WHERE key = 'elapsed_ms'",
                    &sum->elapsed_ms) &&
           peek_int(db, "SELECT value FROM meta WHERE key = 'created'",
                    &sum->created_ms) &&
           peek_int(db, "SELECT value FROM meta WHERE key = 'committed_ms'",
                    &sum->committed_ms) &&
           peek_int(db,
                    "SELECT count(*) FROM sqlite_master"
                    " WHERE type = 'table' AND name = 'failed'",
                    &failed_table) &&
           (!failed_table ||
            peek_int(db, "SELECT count(*) FROM failed", &sum->given_up));
}

enum bc_status bc_crawl_state_peek(const char *dir,
                                   struct bc_crawl_state_summary *out,
                                   struct bc_crawl_state_error *err)
{
    if (!dir || !out || !err)
        return BC_ERR_INVALID_ARG;
    memset(err, 0, sizeof(*err));
    struct bc_crawl_state_summary sum;
    memset(&sum, 0, sizeof(sum));
    char *db_path = NULL;
    enum bc_status st = peek_db_path(dir, &db_path, err);
    if (st == BC_OK)
        st = peek_lock(dir, &sum.running, &sum.pid, err);
    if (st != BC_OK) {
        free(db_path);
        return st;
    }
    /* Read-only: SQLite's shared read lock in WAL mode is all it takes,
     * and it blocks no writer (a checkpoint copies only the frames before
     * the reader's, and the WAL restarts once it is gone). One read
     * transaction: every number is of the same commit. */
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL);
    free(db_path);
    if (rc != SQLITE_OK) {
        set_err(err->text, sizeof(err->text), "cannot open crawl.db: %s",
                db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return db ? BC_ERR_IO : BC_ERR_NOMEM;
    }
    sqlite3_busy_timeout(db, 2000);
    bool ok = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    if (ok) {
        st = peek_format(db, &ok, err);
        if (st != BC_OK && ok)
            goto out_close;
    }
    ok = ok && peek_numbers(db, &sum);
    if (!ok) {
        set_err(err->text, sizeof(err->text), "cannot read crawl.db: %s",
                sqlite3_errmsg(db));
        st = sqlite3_errcode(db) == SQLITE_NOMEM    ? BC_ERR_NOMEM
             : sqlite3_errcode(db) == SQLITE_NOTADB ? BC_ERR_FORMAT
                                                    : BC_ERR_IO;
        goto out_close;
    }
    st = BC_OK;
    *out = sum;
out_close:
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    return st;
}
