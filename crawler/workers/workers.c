/*
 * workers.c - one crawl split by host between N worker processes that meet
 * in one Redis server.
 *
 * THE PROBLEM
 * One process crawls as fast as one machine lets it. Running N copies that
 * share one seen-set (scrapy-redis, Colly's Redis storage) keeps them from
 * fetching a page twice only if the shared test is atomic - theirs ask
 * "seen?" and then say "seen!" in two commands - and it does nothing for
 * politeness: N workers hit a host N times as hard, each with its own
 * delay and its own copy of robots.txt.
 *
 * THE IDEA: PARTITION BY HOST (Mercator, UbiCrawler, BUbiNG, Heritrix)
 * Give each host to one worker: owner(origin) = XXH64(origin, 0) mod N. A
 * worker fetches only its own hosts, so its per-host politeness, its
 * robots.txt cache and its seen-test are exact, as in a single process; a
 * URL it finds for another worker's host is handed to that worker. The
 * frontier asks the partition at admission (frontier.h, struct
 * bc_frontier_partition): owns(origin)? yes: admit as always; no: route()
 * it here and refuse it locally (BC_ADMIT_ROUTED).
 *
 * HANDING URLS OVER: STREAMS, CONSUMER GROUPS, ACK AFTER COMMIT
 *
 *   worker 0                           Redis                    worker 1
 *   --------                           -----                    --------
 *   page -> links -> admit()
 *     owns? no -> route(): sender
 *     cache hit? drop; else a row in
 *     the state's outbox (committed
 *     with the page, same transaction)
 *   after the step's commit:
 *     MULTI XADD P in:1 * v 1 ---------> stream P in:1
 *       from 0 urls "l\t1\t0\turl\tref"  (group "workers")
 *       HINCRBY P w:0 sent 1 EXEC
 *     remove the rows sent (outbox)                       XREADGROUP w1 > --+
 *                                                         admit each URL    |
 *                                                         (its frontier,    |
 *                                                         its seen-test)    |
 *                                      <---------------- after the NEXT     |
 *                                        EVAL: XACK XDEL  step committed:   |
 *                                        HINCRBY acked    acknowledge  -----+
 *
 * The outbox is a transactional outbox: a URL found on a page is written
 * in the same SQLite transaction as the page's completion, so either both
 * survive a kill -9 or neither does (and the page is fetched again). Rows
 * are XADDed after each step and removed in the next transaction; a kill
 * in between sends them twice, which the owner's seen-test makes harmless.
 * The receiver acknowledges an entry only once the step after its
 * admission returned: the state committed the URLs (crawler.h,
 * "Durability"). A worker killed before that finds the entry in its
 * consumer's pending list and reads it again first when it restarts
 * (XREADGROUP ... 0). So no URL is lost by a kill of any worker, and
 * duplicates cost one seen-test each.
 *
 * A small LRU of URLs recently sent saves sending popular links again and
 * again (Broder, Najork and Wiener, "Efficient URL caching for World Wide
 * Web crawling", WWW 2003): a hit is dropped, the owner has the URL or
 * will have it. Each entry carries up to 512 URLs, and a round of sending
 * is one pipelined MULTI/EXEC, so a URL costs a fraction of a command.
 *
 * If Redis goes away, rows stay in the outbox (durable), entries stay
 * unacknowledged, and the worker keeps crawling its own hosts; it retries
 * with a backoff from 100 ms to 5 s and counts the trouble. A Redis that
 * stalls (SIGSTOP, a host swapping) is worse than one that is gone: its
 * kernel still accepts connections, and every command waits the whole
 * 2 s timeout. The round that finds the stall pays it once; after that
 * the worker reconnects only when a probe - a non-blocking connection
 * with a PING, looked at by each later call without waiting - was
 * answered, so the crawl loop goes on fetching meanwhile (it reconnected
 * straight away, and waited the timeout at every attempt).
 *
 * WHEN IS THE CRAWL OVER? A COUNTING TERMINATION TEST (Mattern 1987)
 * No worker can see the others' queues, and a URL in a stream is work
 * nobody holds. Each worker publishes in its hash P w:<i>: idle (nothing
 * queued or in flight, outbox empty, every entry read acknowledged, its
 * last read of its inbox empty), sent (entries it XADDed, counted in the
 * same MULTI as the XADD), acked (valid entries it acknowledged, counted
 * in the same script as the XACK, only when the XACK acknowledged them:
 * an acknowledgement repeated after a lost reply counts nothing) and busy
 * (how often it went from idle to busy). An idle worker takes, every
 * 250 ms, one snapshot in one MULTI (atomic on the server) of every hash
 * and every inbox's length. The crawl is over when all N workers
 * registered, all are idle, sum(sent) = sum(acked) (no entry in transit:
 * an entry read and not yet acknowledged keeps the sums apart, and its
 * reader publishes busy before it acknowledges), every inbox is empty
 * (the same, seen directly: it holds every entry not yet acknowledged,
 * also one written by hand and not counted), and the vector of every
 * idle, sent, acked and busy equals the one of its previous idle snapshot
 * (nothing happened in between). Then it sets P done; every worker that
 * sees it stops. A worker registers (busy) before its seeds are routed and
 * the test needs all N registered, so a worker started alone, or started
 * without seeds, waits for the others instead of ending an empty crawl.
 *
 * WHAT A KILL COSTS
 * The pages in flight at the kill are fetched again (the crawl state's
 * refetched count); outbox rows XADDed but not yet removed are sent again,
 * and entries admitted but not yet acknowledged are read again: both are
 * duplicates the owner's seen-test refuses. Nothing is lost.
 *
 * WHEN A REPLY IS LOST
 * A round that times out or whose connection breaks may have run on the
 * server all the same (a stalled server runs what it had received once it
 * resumes, and writes the reply to a closed socket). Every round that
 * changes the server must therefore be safe whether it ran or not:
 *
 *   round                  if it ran and the reply was lost
 *   ---------------------  ----------------------------------------------
 *   XREADGROUP ... >       its entries sit in this consumer's pending
 *                          list, which ">" never shows again: the worker
 *                          re-reads its pending entries (from 0) on every
 *                          reconnect, and an idle worker whose snapshot
 *                          finds its own inbox not empty does too. Held
 *                          entries are skipped; the seen-test absorbs an
 *                          admission repeated. (Missing, it left a crawl
 *                          idle for ever: sent 3,870, acked 3,867.)
 *   MULTI XADD, HINCRBY    the rows stay in the outbox and are sent again:
 *     sent EXEC            two entries, both counted in sent, both read
 *                          and acknowledged; duplicates for the seen-test.
 *   ack script             it acknowledged and counted; the repeat counts
 *                          only what its XACK acknowledges now: nothing.
 *   budget script          it says "my count is N (and one more?)", not
 *                          "+1": the next round states the count again,
 *                          and a sequence number drops a round that runs
 *                          after a later one. (An INCR counted again on
 *                          reconnect ended a crawl a page short.)
 *   seeds MULTI            SADD and HSET are idempotent; busy + 1 twice
 *                          only tells the others twice that it moved. The
 *                          seed is refused and added again by the caller.
 *   heartbeat, idle,       HSETs of values: the same again. A stale idle 1
 *     busy, register       cannot outlive a reconnect (register writes
 *                          idle 0 unless the worker still is idle).
 *   snapshot, SET done     reads, and an idempotent SET.
 *
 * Across connections, a stale round of the old connection normally runs
 * before the new one's: the server reads what the old socket holds in the
 * pass of its event loop that accepts the probe's connection, before it
 * can answer the probe, and the new connection is made after that answer.
 * Nothing relies on it: a stale XREADGROUP that ran after the re-read
 * leaves an entry in the inbox, which the idle worker's snapshot sees;
 * a stale budget round is dropped by its sequence number.
 */
#define _POSIX_C_SOURCE 200809L /* gethostname, clock_gettime, nanosleep */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>
#include <xxhash.h>

#include "bloomcrawl/lru.h"
#include "bloomcrawl/redis_conn.h"
#include "bloomcrawl/workers.h"
#include "bc_buf.h"
#include "bc_clock.h"
#include "state_int.h"

#define COMMAND_TIMEOUT_MS 2000u
#define BACKOFF_MIN_MS     100u
#define BACKOFF_MAX_MS     5000u
#define HEARTBEAT_MS       1000u
#define SNAPSHOT_MS        250u
#define BLOCK_MAX_MS       100u
#define READ_EVERY_MS      10u /* a busy worker's reads of its inbox, at most */
#define READ_COUNT         64u /* entries per XREADGROUP */
#define FLUSH_ROWS         4096u /* outbox rows per round of sending */
#define FLUSH_ROUNDS       8u    /* rounds of sending per step at most */
#define ENTRY_ID_MAX       48u   /* "<ms>-<seq>": at most 41 bytes */

/* An entry read and not yet acknowledged. */
struct unacked {
    char id[ENTRY_ID_MAX];
    bool valid; /* counts in acked; else in garbage */
};

/* An outbox row formatted as a line of an entry, while sending. */
struct line {
    unsigned dest;
    size_t off, len; /* in the flush buffer */
    uint64_t id;
    size_t seq; /* row order, for a stable sort */
};

struct bc_workers {
    struct bc_workers_config cfg;
    struct bc_redis_where where;
    char crawl_id[65];
    char key_meta[96], key_w[96], key_in[96], key_seeds[96], key_pages[96],
        key_done[96], key_prefix[96];
    char consumer[16];
    char errmsg[512];
    redisContext *ctx;
    redisContext *probe; /* reconnecting: is the server answering? */
    uint64_t probe_since;
    bool ever_connected;
    uint64_t retry_at, backoff; /* monotonic ms */

    struct bc_crawl_state *state;
    struct bc_crawler *crawler;
    struct bc_lru *cache;
    bool attached, started, stopping, over;

    /* The caller's callbacks, forwarded when page_budget takes ctx. */
    uint64_t (*user_clock)(void *ctx);
    void (*user_on_page)(void *ctx, const struct bc_crawler_page *page);
    void (*user_on_fetch)(void *ctx, const struct bc_crawler_page *fetch);
    uint64_t (*user_recrawl_clock)(void *ctx);
    void *user_ctx;
    /* The page budget: the pages this worker holds or spent, as it
     * knows them (offline grants included), and the sequence number of
     * its last budget script; P w:<i> budget and budget_seq are the
     * server's copy. dirty: the server may not have the count. */
    int64_t budget_net;
    uint64_t budget_seq;
    bool budget_dirty;

    /* Receiving. */
    bool pending_phase; /* re-reading this consumer's pending entries */
    char pending_after[ENTRY_ID_MAX];
    struct unacked *unacked;
    size_t n_unacked, cap_unacked;
    size_t n_committed; /* unacked[0 .. n_committed) are committed */
    bool last_read_empty;
    long long seeds_loaded; /* SCARD of P seeds at the last load; -1 */

    /* Idle and termination. */
    bool crawler_done;   /* the last step said done */
    bool published_idle; /* P w:<i> idle is 1 */
    uint64_t last_heartbeat, last_snapshot;
    uint64_t last_read; /* when the inbox was last read (mono_ms) */
    /* 5 N + 1 values: idle, sent, acked, busy, queued of each worker, and
     * P pages. */
    uint64_t *snap, *snap_prev;
    bool snap_prev_valid;

    /* Sending. */
    struct bc_buf buf; /* the lines of a round (struct line: where) */
    struct line *lines;
    size_t n_lines, cap_lines;
    uint64_t last_row; /* highest outbox id read this round */
    char *entry;       /* one entry's urls */
    size_t entry_cap;

    redisReply **replies;
    size_t n_replies, cap_replies;
    size_t queued; /* commands appended, replies not read */

    struct bc_workers_stats stats;
};

/* ---- small things ------------------------------------------------------- */

static uint64_t mono_ms(void)
{
    return bc_mono_ms();
}

static uint64_t wall_ms(void)
{
    return bc_wall_ms();
}

static void sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static void set_err(struct bc_workers *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void set_err(struct bc_workers *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->errmsg, sizeof w->errmsg, fmt, ap);
    va_end(ap);
}

/* Parse a decimal of digits only, at most max; false if not one. */
static bool parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

unsigned bc_workers_owner(const char *origin, size_t len, unsigned workers)
{
    if (workers == 0)
        return 0;
    return (unsigned)(XXH64(origin, len, 0) % workers);
}

void bc_workers_config_init(struct bc_workers_config *config)
{
    memset(config, 0, sizeof *config);
    config->workers = 1;
    config->send_cache = BC_WORKERS_SEND_CACHE;
}

static bool crawl_id_ok(const char *id)
{
    size_t len = strlen(id);
    if (len == 0 || len > 64)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* ---- Redis rounds ------------------------------------------------------- */

static void free_replies(struct bc_workers *w)
{
    for (size_t i = 0; i < w->n_replies; i++)
        freeReplyObject(w->replies[i]);
    w->n_replies = 0;
}

static void disconnect(struct bc_workers *w)
{
    free_replies(w);
    if (w->ctx)
        redisFree(w->ctx);
    w->ctx = NULL;
    w->queued = 0;
    w->stats.redis_up = false;
}

/* A round failed: count it, drop the connection, retry after a backoff. */
static void trouble(struct bc_workers *w, const char *what, const char *why)
{
    set_err(w, "Redis: %s: %s", what, why ? why : "?");
    w->stats.redis_errors++;
    disconnect(w);
    w->backoff = w->backoff == 0 ? BACKOFF_MIN_MS : w->backoff * 2;
    if (w->backoff > BACKOFF_MAX_MS)
        w->backoff = BACKOFF_MAX_MS;
    w->retry_at = mono_ms() + w->backoff;
}

/* Append a command (argv form); false: out of memory (the round is lost). */
static bool cmd_argv(struct bc_workers *w, int argc, const char **argv,
                     const size_t *lens)
{
    if (redisAppendCommandArgv(w->ctx, argc, argv, lens) != REDIS_OK)
        return false;
    w->queued++;
    w->stats.redis_commands++;
    return true;
}

/* Append a command (printf form of hiredis: %s, %b, %llu, ...). */
static bool cmd(struct bc_workers *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = redisvAppendCommand(w->ctx, fmt, ap);
    va_end(ap);
    if (r != REDIS_OK)
        return false;
    w->queued++;
    w->stats.redis_commands++;
    return true;
}

/*
 * Send what was appended and read its replies into w->replies (freed by
 * the next round or free_replies()). False on a lost connection (counted:
 * trouble()). Server errors are replies of type REDIS_REPLY_ERROR.
 */
static bool round_trip(struct bc_workers *w, const char *what)
{
    free_replies(w);
    size_t n = w->queued;
    w->queued = 0;
    if (n > w->cap_replies) {
        redisReply **r = realloc(w->replies, n * sizeof *r);
        if (!r) {
            trouble(w, what, "out of memory");
            return false;
        }
        w->replies = r;
        w->cap_replies = n;
    }
    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        void *r = NULL;
        if (redisGetReply(w->ctx, &r) != REDIS_OK || !r) {
            ok = false;
            break;
        }
        w->replies[w->n_replies++] = r;
    }
    bc_redis_sigpipe_release(&g);
    if (!ok) {
        trouble(w, what, w->ctx ? w->ctx->errstr : "connection lost");
        return false;
    }
    w->backoff = 0;
    return true;
}

/* A round that failed before it was sent (out of memory while appending). */
static bool append_failed(struct bc_workers *w, const char *what)
{
    trouble(w, what, "out of memory");
    return false;
}

/* The EXEC reply of a MULTI round whose EXEC is the last reply: an array of
 * count replies, or NULL (counted as trouble, connection kept). */
static redisReply *exec_reply(struct bc_workers *w, const char *what,
                              size_t count)
{
    redisReply *r = w->n_replies ? w->replies[w->n_replies - 1] : NULL;
    if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != count) {
        set_err(w, "Redis: %s: %s", what,
                r && r->type == REDIS_REPLY_ERROR ? r->str
                                                  : "transaction failed");
        w->stats.redis_errors++;
        return NULL;
    }
    return r;
}

static bool reply_int(const redisReply *r, uint64_t *out)
{
    if (!r)
        return false;
    if (r->type == REDIS_REPLY_INTEGER && r->integer >= 0) {
        *out = (uint64_t)r->integer;
        return true;
    }
    if (r->type == REDIS_REPLY_STRING)
        return parse_u64(r->str, r->len, UINT64_MAX, out);
    return false;
}

/* ---- connecting and registering ---------------------------------------- */

static bool locally_idle(const struct bc_workers *w);
static void publish_busy(struct bc_workers *w);

/* HSET of this worker's identity and counters now; busy + 1 when first. */
static bool append_register(struct bc_workers *w, bool first)
{
    char host[64] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    char pid[24], now[24];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    snprintf(now, sizeof now, "%llu", (unsigned long long)wall_ms());
    /* Again after a reconnect: idle only if it still is (nothing gives
     * work to a worker published idle while Redis is away - a seed is
     * refused then - but its row must never say idle when it has work). */
    bool idle = !first && w->published_idle && locally_idle(w);
    if (!cmd(w, "HSET %s pid %s host %s heartbeat %s idle %s state %s",
             w->key_w, pid, host, now, idle ? "1" : "0",
             idle ? "idle" : "crawling"))
        return false;
    if (first && (!cmd(w, "HSET %s started %s", w->key_w, now) ||
                  !cmd(w, "HINCRBY %s busy 1", w->key_w) ||
                  !cmd(w, "HSETNX %s sent 0", w->key_w) ||
                  !cmd(w, "HSETNX %s acked 0", w->key_w) ||
                  !cmd(w, "HSETNX %s garbage 0", w->key_w)))
        return false;
    return cmd(w, "XGROUP CREATE %s workers 0 MKSTREAM", w->key_in);
}

/*
 * Read this consumer's pending entries again from the first, before new
 * ones. A round trip that failed (a timeout, a cut connection) may have
 * run on the server all the same: an XREADGROUP ... > whose reply was lost
 * delivered its entries into this consumer's pending list, where ">"
 * never shows them again, and the crawl could never end (sent > acked for
 * good: issue 20, test_read_reply_lost). Entries read before and not yet
 * acknowledged are skipped (take_entry); an entry admitted twice is
 * refused by the seen-test.
 */
static void rewind_pending(struct bc_workers *w)
{
    w->pending_phase = true;
    snprintf(w->pending_after, sizeof w->pending_after, "0");
}

/*
 * The page budget, one script for every change (atomic on the server):
 * P pages counts the pages taken by all workers, P w:<i> budget those of
 * worker i. The worker sends its own count as it knows it (base: the
 * pages it holds or spent, offline grants and give-backs included) and
 * whether it takes one more; the script adds base - budget to P pages,
 * then takes the page if P pages is below the limit. Saying "my count is
 * base" instead of "one more" or "one less" makes a round whose reply was
 * lost harmless: whether it ran or not, the next one states the count
 * again (an INCR whose reply was lost, then counted again on reconnect,
 * ended a crawl a page short: test_budget_reply_lost). seq orders the
 * rounds: one that runs after a later one (a stalled connection's command
 * running late) changes nothing.
 * KEYS: P pages, P w:<i>; ARGV: seq, base, take (1/0), the limit.
 * Returns 1 taken, 0 not (refused, or not asked), -1 stale.
 */
static const char budget_script[] =
    "local seq = tonumber(ARGV[1])\n"
    "if tonumber(redis.call('HGET', KEYS[2], 'budget_seq') or '0') >= seq\n"
    "then return -1 end\n"
    "local had = tonumber(redis.call('HGET', KEYS[2], 'budget') or '0')\n"
    "local base = tonumber(ARGV[2])\n"
    "local n = redis.call('INCRBY', KEYS[1], base - had)\n"
    "local got = 0\n"
    "if ARGV[3] == '1' and n < tonumber(ARGV[4]) then\n"
    "  redis.call('INCR', KEYS[1])\n"
    "  got = 1\n"
    "end\n"
    "redis.call('HSET', KEYS[2], 'budget', base + got, 'budget_seq', seq)\n"
    "return got\n";

/* Append the budget script: this worker's count is base, take one more? */
static bool append_budget(struct bc_workers *w, int64_t base, bool take)
{
    w->budget_seq++;
    return cmd(w, "EVAL %s 2 %s %s %llu %lld %s %llu", budget_script,
               w->key_pages, w->key_w, (unsigned long long)w->budget_seq,
               (long long)base, take ? "1" : "0",
               (unsigned long long)w->cfg.max_pages);
}

/* After a reconnect: register again, settle the page budget, and re-read
 * the pending entries (whatever the lost round trip was). */
static bool resume_redis(struct bc_workers *w)
{
    rewind_pending(w);
    bool idle = w->published_idle && locally_idle(w);
    if (!append_register(w, false))
        return append_failed(w, "register");
    /* Published idle and no longer so: busy + 1, as publish_busy() does
     * (the others' snapshots must see that something moved). */
    if (w->published_idle && !idle && !cmd(w, "HINCRBY %s busy 1", w->key_w))
        return append_failed(w, "register");
    bool settle = w->budget_dirty;
    if (settle && !append_budget(w, w->budget_net, false))
        return append_failed(w, "page budget");
    if (!round_trip(w, "register"))
        return false;
    if (w->published_idle && !idle) {
        w->published_idle = false;
        w->snap_prev_valid = false;
    }
    if (settle && w->replies[w->n_replies - 1]->type != REDIS_REPLY_ERROR)
        w->budget_dirty = false;
    free_replies(w);
    return true;
}

/* Drop the probe connection, if any. */
static void probe_free(struct bc_workers *w)
{
    if (w->probe)
        redisFree(w->probe);
    w->probe = NULL;
}

/* Open a probe: a non-blocking connection with a PING written to it. */
static void probe_start(struct bc_workers *w)
{
    redisContext *c = w->where.path[0]
                          ? redisConnectUnixNonBlock(w->where.path)
                          : redisConnectNonBlock(w->where.host, w->where.port);
    if (!c) {
        trouble(w, "connect", "out of memory");
        return;
    }
    if (c->err || redisAppendCommand(c, "PING") != REDIS_OK) {
        trouble(w, "connect", c->err ? c->errstr : "out of memory");
        redisFree(c);
        return;
    }
    w->probe = c;
    w->probe_since = mono_ms();
}

/* Look at the probe without waiting: true once the server answered it
 * (any reply: +PONG, or -NOAUTH when a password is needed, says it runs);
 * a probe that failed or waited COMMAND_TIMEOUT_MS is dropped as trouble
 * (the backoff doubles). */
static bool probe_answered(struct bc_workers *w)
{
    redisContext *c = w->probe;
    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    int written = 0;
    void *reply = NULL;
    bool ok = redisBufferWrite(c, &written) == REDIS_OK;
    if (ok && written)
        ok = redisBufferRead(c) == REDIS_OK &&
             redisGetReplyFromReader(c, &reply) == REDIS_OK;
    bc_redis_sigpipe_release(&g);
    if (reply) {
        freeReplyObject(reply);
        probe_free(w);
        return true;
    }
    if (!ok || mono_ms() - w->probe_since >= COMMAND_TIMEOUT_MS) {
        char why[160];
        snprintf(why, sizeof why, "%s",
                 ok ? "no answer (stalled?)" : c->errstr);
        probe_free(w);
        trouble(w, "connect", why);
    }
    return false;
}

/*
 * Connected now? After a failed round, the next attempt waits the backoff
 * and then only opens a probe (a non-blocking connection and a PING, looked
 * at by each later call without waiting); the real connection, whose
 * commands the crawl waits for up to COMMAND_TIMEOUT_MS, is made once the
 * probe was answered. A stalled Redis (SIGSTOP, a swapping host) accepts
 * connections in its kernel and answers nothing: reconnecting straight
 * away cost the crawl loop the whole command timeout at every attempt, and
 * fetching stopped for most of the stall (issue 20). Now the stall costs
 * the one round that found it.
 */
static bool ensure_conn(struct bc_workers *w)
{
    if (w->ctx)
        return true;
    if (w->ever_connected) {
        if (!w->probe) {
            if (mono_ms() < w->retry_at)
                return false;
            probe_start(w);
            return false; /* a reply takes a round trip at least */
        }
        if (!probe_answered(w))
            return false;
    } else if (mono_ms() < w->retry_at) {
        return false;
    }
    redisContext *c = NULL;
    char err[256];
    enum bc_status st =
        bc_redis_connect(&w->where, COMMAND_TIMEOUT_MS, &c, err, sizeof err);
    if (st != BC_OK) {
        trouble(w, "connect", err);
        return false;
    }
    w->ctx = c;
    w->stats.redis_up = true;
    if (w->ever_connected) {
        w->stats.redis_reconnects++;
        if (!resume_redis(w))
            return false;
    }
    w->ever_connected = true;
    return true;
}

static struct bc_workers *alloc_workers(const struct bc_workers_config *c)
{
    struct bc_workers *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cfg = *c;
    bc_buf_init(&w->buf, 0);
    w->cfg.where = NULL;
    w->cfg.crawl_id = NULL;
    w->seeds_loaded = -1;
    w->pending_phase = true;
    snprintf(w->pending_after, sizeof w->pending_after, "0");
    w->stats.index = c->index;
    w->stats.workers = c->workers;
    return w;
}

/* Check the crawl's meta, creating it if this worker is the first. */
static enum bc_status check_meta(struct bc_workers *w)
{
    char now[24], n[24], mp[24];
    snprintf(now, sizeof now, "%llu", (unsigned long long)wall_ms());
    snprintf(n, sizeof n, "%u", w->cfg.workers);
    snprintf(mp, sizeof mp, "%llu", (unsigned long long)w->cfg.max_pages);
    if (!cmd(w, "MULTI") || !cmd(w, "HSETNX %s version 1", w->key_meta) ||
        !cmd(w, "HSETNX %s workers %s", w->key_meta, n) ||
        !cmd(w, "HSETNX %s max_pages %s", w->key_meta, mp) ||
        !cmd(w, "HSETNX %s created %s", w->key_meta, now) ||
        !cmd(w, "HMGET %s version workers max_pages", w->key_meta) ||
        !cmd(w, "GET %s", w->key_done) || !cmd(w, "EXEC"))
        return BC_ERR_NOMEM;
    if (!round_trip(w, "meta"))
        return BC_ERR_REDIS_LOST;
    redisReply *x = exec_reply(w, "meta", 6);
    if (!x)
        return BC_ERR_REDIS_REPLY;
    redisReply *m = x->element[4];
    if (m->type != REDIS_REPLY_ARRAY || m->elements != 3)
        return BC_ERR_REDIS_REPLY;
    const char *names[3] = {"version", "workers", "max_pages"};
    const char *mine[3] = {"1", n, mp};
    for (size_t i = 0; i < 3; i++) {
        const redisReply *v = m->element[i];
        const char *was = v->type == REDIS_REPLY_STRING ? v->str : "";
        if (strcmp(was, mine[i]) != 0) {
            set_err(w,
                    "crawl \"%s\" has %s %s in Redis, this worker was "
                    "given %s %s",
                    w->crawl_id, names[i], *was ? was : "(none)", names[i],
                    mine[i]);
            return BC_ERR_MISMATCH;
        }
    }
    const redisReply *d = x->element[5];
    if (d->type == REDIS_REPLY_STRING && strcmp(d->str, "1") == 0) {
        w->stats.done_seen_at_start = true;
        w->over = true;
    }
    return BC_OK;
}

/* This worker's budget count and sequence as the server has them (a run
 * before this one's, after a kill), from HMGET budget budget_seq. */
static void load_budget(struct bc_workers *w, const redisReply *h)
{
    uint64_t net = 0, seq = 0;
    if (h->type == REDIS_REPLY_ARRAY && h->elements == 2) {
        reply_int(h->element[0], &net);
        reply_int(h->element[1], &seq);
    }
    w->budget_net = (int64_t)net;
    w->budget_seq = seq;
}

/* Parse config's Redis address into w->where and check the crawl id (id)
 * and the worker numbers: BC_OK, or BC_ERR_INVALID_ARG with w's message
 * saying which is wrong and what it should be. */
static enum bc_status config_read(struct bc_workers *w,
                                  const struct bc_workers_config *config,
                                  const char *id)
{
    if (!config->where ||
        bc_redis_where_parse(config->where, &w->where) != BC_OK) {
        set_err(w,
                "not a Redis address (redis://host[:port][/db] or "
                "unix:/path): %s",
                config->where ? config->where : "(none)");
        return BC_ERR_INVALID_ARG;
    }
    if (!crawl_id_ok(id)) {
        set_err(w, "not a crawl id ([A-Za-z0-9._-]{1,64}): %s", id);
        return BC_ERR_INVALID_ARG;
    }
    if (config->workers < 1 || config->workers > BC_WORKERS_MAX ||
        config->index >= config->workers) {
        set_err(w,
                "worker %u of %u: need 1 <= workers <= %u and index < "
                "workers",
                config->index, config->workers, BC_WORKERS_MAX);
        return BC_ERR_INVALID_ARG;
    }
    return BC_OK;
}

/* Name the crawl's keys (P is "bc:<id>:", workers.h) and this worker's
 * consumer, worker index of crawl id. */
static void keys_name(struct bc_workers *w, const char *id, unsigned index)
{
    snprintf(w->crawl_id, sizeof w->crawl_id, "%s", id);
    snprintf(w->key_prefix, sizeof w->key_prefix, "bc:%s:", id);
    snprintf(w->key_meta, sizeof w->key_meta, "bc:%s:meta", id);
    snprintf(w->key_w, sizeof w->key_w, "bc:%s:w:%u", id, index);
    snprintf(w->key_in, sizeof w->key_in, "bc:%s:in:%u", id, index);
    snprintf(w->key_seeds, sizeof w->key_seeds, "bc:%s:seeds", id);
    snprintf(w->key_pages, sizeof w->key_pages, "bc:%s:pages", id);
    snprintf(w->key_done, sizeof w->key_done, "bc:%s:done", id);
    snprintf(w->consumer, sizeof w->consumer, "w%u", index);
}

/* The snapshot's two arrays (5 numbers per worker and the pages taken:
 * snapshot()) and, when config->send_cache is not 0, the sender cache.
 * false: out of memory (what was allocated is w's, freed with it). */
static bool buffers_alloc(struct bc_workers *w,
                          const struct bc_workers_config *config)
{
    size_t nsnap = 5 * (size_t)config->workers + 1;
    w->snap = calloc(nsnap, sizeof *w->snap);
    w->snap_prev = calloc(nsnap, sizeof *w->snap_prev);
    if (!w->snap || !w->snap_prev)
        return false;
    return config->send_cache == 0 ||
           bc_lru_create(config->send_cache, SIZE_MAX, &w->cache) == BC_OK;
}

/* Connect, check the crawl's meta (created by the first worker) and,
 * unless the crawl is over, register this worker and read its budget
 * back. On failure w is left unconnected, its message saying why. */
static enum bc_status join_crawl(struct bc_workers *w)
{
    char err[256];
    enum bc_status st = bc_redis_connect(&w->where, COMMAND_TIMEOUT_MS, &w->ctx,
                                         err, sizeof err);
    if (st != BC_OK) {
        w->ctx = NULL;
        set_err(w, "%s", err);
        return st;
    }
    w->ever_connected = true;
    w->stats.redis_up = true;
    st = check_meta(w);
    if (st == BC_OK && !w->over) {
        redisReply *x = NULL;
        if (!cmd(w, "MULTI") || !append_register(w, true) ||
            !cmd(w, "HMGET %s budget budget_seq", w->key_w) || !cmd(w, "EXEC"))
            st = BC_ERR_NOMEM;
        else if (!round_trip(w, "register"))
            st = BC_ERR_REDIS_LOST;
        else if (!(x = exec_reply(w, "register", 8)))
            st = BC_ERR_REDIS_REPLY;
        else
            load_budget(w, x->element[7]);
    }
    if (st != BC_OK) {
        char keep[sizeof w->errmsg];
        memcpy(keep, w->errmsg, sizeof keep);
        disconnect(w);
        memcpy(w->errmsg, keep, sizeof keep);
        return st;
    }
    free_replies(w);
    return BC_OK;
}

enum bc_status bc_workers_create(const struct bc_workers_config *config,
                                 struct bc_workers **out)
{
    if (!out)
        return BC_ERR_INVALID_ARG;
    *out = NULL;
    if (!config)
        return BC_ERR_INVALID_ARG;
    struct bc_workers *w = alloc_workers(config);
    if (!w)
        return BC_ERR_NOMEM;
    /* From here *out is w, failed or not, to say why (workers.h); a
     * failure to allocate its buffers frees it. */
    *out = w;
    const char *id = config->crawl_id ? config->crawl_id : "default";
    enum bc_status st = config_read(w, config, id);
    if (st != BC_OK)
        return st;
    keys_name(w, id, config->index);
    if (!buffers_alloc(w, config))
        goto out_free_workers;
    return join_crawl(w);

out_free_workers:
    bc_workers_free(w);
    *out = NULL;
    return BC_ERR_NOMEM;
}

void bc_workers_free(struct bc_workers *w)
{
    if (!w)
        return;
    disconnect(w);
    probe_free(w);
    free(w->replies);
    bc_lru_free(w->cache);
    free(w->unacked);
    free(w->snap);
    free(w->snap_prev);
    bc_buf_free(&w->buf);
    free(w->lines);
    free(w->entry);
    free(w);
}

const char *bc_workers_errmsg(const struct bc_workers *w)
{
    return w ? w->errmsg : "";
}

/* ---- the crawler's hooks ------------------------------------------------ */

static bool owns_cb(void *ctx, const char *origin, size_t len)
{
    const struct bc_workers *w = ctx;
    return bc_workers_owner(origin, len, w->cfg.workers) == w->cfg.index;
}

static enum bc_status route_cb(void *ctx, const char *origin, size_t len,
                               const struct bc_frontier_entry *e, bool seed)
{
    struct bc_workers *w = ctx;
    uint64_t h = 0;
    if (w->cache && !seed) {
        h = bc_lru_hash(e->url, e->url_len);
        if (bc_lru_find(w->cache, e->url, e->url_len, h)) {
            w->stats.send_cache_hits++;
            return BC_OK;
        }
    }
    struct bc_crawl_state_routed r = {
        .worker = bc_workers_owner(origin, len, w->cfg.workers),
        .url = e->url,
        .url_len = e->url_len,
        .referrer = e->referrer_len ? e->referrer : NULL,
        .referrer_len = e->referrer_len,
        .depth = e->depth,
        .redirects = e->redirects,
        .seed = seed,
    };
    enum bc_status st = bc_crawl_state_outbox_add(w->state, &r);
    if (st != BC_OK)
        return st;
    /* The most rows waiting at once is reached here, before the step's
     * end sends them. */
    uint64_t rows = bc_crawl_state_outbox_count(w->state);
    if (rows > w->stats.outbox_max)
        w->stats.outbox_max = rows;
    if (seed)
        w->stats.routed_seeds++;
    else if (w->cache && bc_lru_push(w->cache, e->url, e->url_len, h) != BC_OK)
        return BC_ERR_NOMEM;
    return BC_OK;
}

/* The global page budget (budget_script): take a page (true: taken), or
 * give one back. Redis away, or its reply lost: granted, counted here,
 * and the count is stated again to the server by the next round. */
static bool budget(struct bc_workers *w, bool take)
{
    int64_t base = w->budget_net - (take ? 0 : 1);
    if (!ensure_conn(w)) {
        w->budget_net += take ? 1 : -1;
        w->budget_dirty = true;
        return true;
    }
    if (!append_budget(w, base, take)) {
        append_failed(w, "budget");
        w->budget_net += take ? 1 : -1;
        w->budget_dirty = true;
        return true;
    }
    if (!round_trip(w, "budget")) {
        w->budget_net += take ? 1 : -1;
        w->budget_dirty = true;
        return true;
    }
    const redisReply *r = w->replies[0];
    if (r->type != REDIS_REPLY_INTEGER || r->integer < 0) {
        /* An error reply, or -1: stale (a round of this worker's killed
         * run that the server ran after this run registered): nothing
         * known, granted as offline; the next round states the count. */
        set_err(w, "Redis: budget: %s",
                r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        w->stats.redis_errors++;
        free_replies(w);
        w->budget_net += take ? 1 : -1;
        w->budget_dirty = true;
        return true;
    }
    bool got = r->integer == 1;
    free_replies(w);
    w->budget_net = base + got;
    w->budget_dirty = false;
    return !take || got;
}

/* The attached config's ctx is the worker; the caller's callbacks are
 * called with the caller's ctx through these. */
static bool budget_cb(void *ctx, bool take)
{
    return budget(ctx, take);
}

static uint64_t clock_cb(void *ctx)
{
    struct bc_workers *w = ctx;
    return w->user_clock(w->user_ctx);
}

static uint64_t recrawl_clock_cb(void *ctx)
{
    struct bc_workers *w = ctx;
    return w->user_recrawl_clock(w->user_ctx);
}

static void on_page_cb(void *ctx, const struct bc_crawler_page *page)
{
    struct bc_workers *w = ctx;
    w->user_on_page(w->user_ctx, page);
}

static void on_fetch_cb(void *ctx, const struct bc_crawler_page *fetch)
{
    struct bc_workers *w = ctx;
    w->user_on_fetch(w->user_ctx, fetch);
}

enum bc_status bc_workers_attach(struct bc_workers *w,
                                 struct bc_crawler_config *config,
                                 struct bc_crawl_state *state)
{
    if (!w || !config || !state || w->attached || config->page_budget)
        return BC_ERR_INVALID_ARG;
    config->frontier.partition.owns = owns_cb;
    config->frontier.partition.route = route_cb;
    config->frontier.partition.ctx = w;
    if (w->cfg.max_pages > 0) {
        w->user_ctx = config->ctx;
        w->user_clock = config->clock;
        w->user_on_page = config->on_page;
        w->user_on_fetch = config->on_fetch;
        w->user_recrawl_clock = config->recrawl_clock;
        config->clock = config->clock ? clock_cb : NULL;
        config->on_page = config->on_page ? on_page_cb : NULL;
        config->on_fetch = config->on_fetch ? on_fetch_cb : NULL;
        config->recrawl_clock = config->recrawl_clock ? recrawl_clock_cb : NULL;
        config->page_budget = budget_cb;
        config->ctx = w;
    }
    w->state = state;
    w->attached = true;
    return BC_OK;
}

/* ---- the global scope --------------------------------------------------- */

/* SMEMBERS P seeds into the crawler's scope; scard is what it counts. */
static enum bc_status load_scope(struct bc_workers *w, long long scard)
{
    if (!cmd(w, "SMEMBERS %s", w->key_seeds)) {
        append_failed(w, "seeds");
        return BC_OK;
    }
    if (!round_trip(w, "seeds"))
        return BC_OK;
    const redisReply *r = w->replies[0];
    if (r->type != REDIS_REPLY_ARRAY)
        return BC_OK;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *s = r->element[i];
        if (s->type != REDIS_REPLY_STRING)
            continue;
        enum bc_status st = bc_crawler_add_scope(w->crawler, s->str, s->len);
        if (st == BC_ERR_NOMEM || st == BC_ERR_INVALID_ARG)
            return st;
        /* a malformed seed: its scope is nobody's */
    }
    w->seeds_loaded = scard;
    free_replies(w);
    return BC_OK;
}

enum bc_status bc_workers_start(struct bc_workers *w,
                                struct bc_crawler *crawler)
{
    if (!w || !crawler || !w->attached || w->started)
        return BC_ERR_INVALID_ARG;
    w->crawler = crawler;
    w->started = true;
    if (w->over || !ensure_conn(w))
        return BC_OK;
    if (!cmd(w, "SCARD %s", w->key_seeds)) {
        append_failed(w, "seeds");
        return BC_OK;
    }
    if (!round_trip(w, "seeds"))
        return BC_OK;
    uint64_t scard = 0;
    if (!reply_int(w->replies[0], &scard) || scard == 0)
        return BC_OK;
    return load_scope(w, (long long)scard);
}

enum bc_status bc_workers_add_seed(struct bc_workers *w, const char *url,
                                   size_t len, enum bc_frontier_reason *reason,
                                   enum bc_status *url_status)
{
    if (!w || !w->started || !url)
        return BC_ERR_INVALID_ARG;
    /* A seed is work: the others must see this worker busy before it has
     * any (a worker published idle and given a seed while Redis is away
     * would look idle to the termination test, which could end the crawl
     * without it). So the seed goes into P seeds and this worker is
     * published busy in one transaction, or the seed is refused. */
    if (reason)
        *reason = BC_ADMIT_STORE_ERROR;
    if (url_status)
        *url_status = BC_OK;
    const char *argv[3] = {"SADD", w->key_seeds, url};
    size_t lens[3] = {4, strlen(w->key_seeds), len};
    if (!ensure_conn(w))
        return BC_ERR_REDIS_LOST;
    if (!cmd(w, "MULTI") || !cmd_argv(w, 3, argv, lens) ||
        !cmd(w, "HSET %s idle 0 state crawling", w->key_w) ||
        !cmd(w, "HINCRBY %s busy 1", w->key_w) || !cmd(w, "EXEC")) {
        append_failed(w, "seeds");
        return BC_ERR_REDIS_LOST;
    }
    bool ok = round_trip(w, "seeds") && exec_reply(w, "seeds", 3);
    free_replies(w);
    if (!ok)
        return w->ctx ? BC_ERR_REDIS_REPLY : BC_ERR_REDIS_LOST;
    w->published_idle = false;
    w->snap_prev_valid = false;
    return bc_crawler_add_seed(w->crawler, url, len, reason, url_status);
}

/* ---- sending: the outbox to the streams -------------------------------- */

struct read_ctx {
    struct bc_workers *w;
    bool nomem;
};

/* One outbox row -> a line "KIND\tDEPTH\tREDIRECTS\tURL\tREFERRER". */
static void take_row(void *ctx, const struct bc_crawl_state_routed *r)
{
    struct read_ctx *rc = ctx;
    struct bc_workers *w = rc->w;
    if (rc->nomem)
        return;
    w->last_row = r->id;
    size_t need = 2 + 2 * 20 + 3 + r->url_len + r->referrer_len + 1;
    if (w->n_lines == w->cap_lines) {
        size_t cap = w->cap_lines ? 2 * w->cap_lines : 1024;
        struct line *l = realloc(w->lines, cap * sizeof *l);
        if (!l) {
            rc->nomem = true;
            return;
        }
        w->lines = l;
        w->cap_lines = cap;
    }
    if (bc_buf_reserve(&w->buf, need) != BC_OK) {
        rc->nomem = true;
        return;
    }
    /* Reserved: the appends cannot fail. */
    size_t off = w->buf.len;
    (void)bc_buf_printf(&w->buf, "%c\t%u\t%u\t", r->seed ? 's' : 'l', r->depth,
                        r->redirects);
    (void)bc_buf_append(&w->buf, r->url, r->url_len);
    (void)bc_buf_putc(&w->buf, '\t');
    (void)bc_buf_append(&w->buf, r->referrer, r->referrer_len);
    size_t len = w->buf.len - off;
    w->lines[w->n_lines] = (struct line){.dest = r->worker,
                                         .off = off,
                                         .len = len,
                                         .id = r->id,
                                         .seq = w->n_lines};
    w->n_lines++;
}

static enum bc_status send_failed(struct bc_workers *w)
{
    append_failed(w, "send");
    return BC_OK;
}

static int line_cmp(const void *a, const void *b)
{
    const struct line *x = a, *y = b;
    if (x->dest != y->dest)
        return x->dest < y->dest ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* XADD the entry of lines[from, to) (one destination) and count it. */
static bool append_entry(struct bc_workers *w, size_t from, size_t to)
{
    size_t len = 0;
    for (size_t i = from; i < to; i++)
        len += w->lines[i].len + 1;
    if (len > w->entry_cap) {
        char *e = realloc(w->entry, len);
        if (!e)
            return false;
        w->entry = e;
        w->entry_cap = len;
    }
    size_t o = 0;
    for (size_t i = from; i < to; i++) {
        if (i > from)
            w->entry[o++] = '\n';
        memcpy(w->entry + o, w->buf.data + w->lines[i].off, w->lines[i].len);
        o += w->lines[i].len;
    }
    char key[128], idx[16];
    snprintf(key, sizeof key, "%sin:%u", w->key_prefix, w->lines[from].dest);
    snprintf(idx, sizeof idx, "%u", w->cfg.index);
    const char *argv[9] = {"XADD", key, "*",    "v",     "1",
                           "from", idx, "urls", w->entry};
    size_t lens[9] = {4, strlen(key), 1, 1, 1, 4, strlen(idx), 4, o};
    if (!cmd_argv(w, 9, argv, lens))
        return false;
    return cmd(w, "HINCRBY %s sent 1", w->key_w);
}

/*
 * One round: up to FLUSH_ROWS rows of the outbox, grouped by destination,
 * in entries of at most BC_WORKERS_ENTRY_URLS URLs and
 * BC_WORKERS_ENTRY_BYTES bytes, XADDed in one MULTI; then the rows are
 * removed (in the state's open transaction). *more: a full round was
 * read. Returns the state's error, else BC_OK (Redis trouble is counted).
 */
static enum bc_status flush_round(struct bc_workers *w, bool *more)
{
    *more = false;
    w->n_lines = 0;
    bc_buf_clear(&w->buf);
    w->last_row = 0;
    struct read_ctx rc = {w, false};
    size_t count = 0;
    enum bc_status st = bc_crawl_state_outbox_read(w->state, 0, FLUSH_ROWS,
                                                   take_row, &rc, &count);
    if (st != BC_OK)
        return st;
    if (rc.nomem)
        return BC_ERR_NOMEM;
    if (w->n_lines == 0)
        return BC_OK;
    qsort(w->lines, w->n_lines, sizeof *w->lines, line_cmp);
    size_t entries = 0, urls = 0;
    if (!cmd(w, "MULTI"))
        return send_failed(w);
    for (size_t from = 0; from < w->n_lines;) {
        size_t to = from, bytes = 0;
        while (to < w->n_lines && w->lines[to].dest == w->lines[from].dest &&
               to - from < BC_WORKERS_ENTRY_URLS &&
               (to == from ||
                bytes + w->lines[to].len + 1 <= BC_WORKERS_ENTRY_BYTES)) {
            bytes += w->lines[to].len + 1;
            to++;
        }
        if (!append_entry(w, from, to))
            return send_failed(w);
        entries++;
        urls += to - from;
        from = to;
    }
    if (!cmd(w, "EXEC"))
        return send_failed(w);
    if (!round_trip(w, "send"))
        return BC_OK;
    redisReply *x = exec_reply(w, "send", 2 * entries);
    if (!x)
        return BC_OK;
    for (size_t i = 0; i < x->elements; i++)
        if (x->element[i]->type == REDIS_REPLY_ERROR) {
            set_err(w, "Redis: send: %s", x->element[i]->str);
            w->stats.redis_errors++;
            return BC_OK;
        }
    free_replies(w);
    st = bc_crawl_state_outbox_remove(w->state, w->last_row);
    if (st != BC_OK)
        return st;
    w->stats.sent_entries += entries;
    w->stats.sent_urls += urls;
    *more = count == FLUSH_ROWS;
    return BC_OK;
}

static enum bc_status flush_outbox(struct bc_workers *w)
{
    for (unsigned round = 0; round < FLUSH_ROUNDS; round++) {
        if (bc_crawl_state_outbox_count(w->state) == 0 || !ensure_conn(w))
            return BC_OK;
        bool more = false;
        enum bc_status st = flush_round(w, &more);
        if (st != BC_OK || !more || !w->ctx)
            return st;
    }
    return BC_OK;
}

/* ---- receiving: the inbox ----------------------------------------------- */

/* Publish busy (idle 0, busy + 1) when published idle. */
static void publish_busy(struct bc_workers *w)
{
    if (!w->published_idle || !w->ctx)
        return;
    if (!cmd(w, "MULTI") ||
        !cmd(w, "HSET %s idle 0 state crawling", w->key_w) ||
        !cmd(w, "HINCRBY %s busy 1", w->key_w) || !cmd(w, "EXEC")) {
        append_failed(w, "busy");
        return;
    }
    if (round_trip(w, "busy") && exec_reply(w, "busy", 2)) {
        w->published_idle = false;
        w->snap_prev_valid = false;
    }
    free_replies(w);
}

static bool remember(struct bc_workers *w, const char *id, size_t len,
                     bool valid)
{
    if (w->n_unacked == w->cap_unacked) {
        size_t cap = w->cap_unacked ? 2 * w->cap_unacked : 64;
        struct unacked *u = realloc(w->unacked, cap * sizeof *u);
        if (!u)
            return false;
        w->unacked = u;
        w->cap_unacked = cap;
    }
    struct unacked *u = &w->unacked[w->n_unacked++];
    if (len >= sizeof u->id)
        len = sizeof u->id - 1;
    memcpy(u->id, id, len);
    u->id[len] = '\0';
    u->valid = valid;
    return true;
}

bool bc_workers_parse_line(const char *line, size_t len,
                           struct bc_workers_line *out)
{
    if (!line || !out)
        return false;
    const char *f[5];
    size_t fl[5];
    size_t nf = 0, start = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || line[i] == '\t') {
            if (nf == 5)
                return false; /* a sixth field */
            f[nf] = line + start;
            fl[nf] = i - start;
            nf++;
            start = i + 1;
        }
    uint64_t depth, hops;
    if (nf != 5 || fl[0] != 1 || (f[0][0] != 's' && f[0][0] != 'l') ||
        !parse_u64(f[1], fl[1], BC_WORKERS_MAX_DEPTH, &depth) ||
        !parse_u64(f[2], fl[2], BC_WORKERS_MAX_REDIRECTS, &hops) || fl[3] == 0)
        return false;
    out->seed = f[0][0] == 's';
    out->depth = (unsigned)depth;
    out->redirects = (unsigned)hops;
    out->url = f[3];
    out->url_len = fl[3];
    out->referrer = fl[4] ? f[4] : NULL;
    out->referrer_len = fl[4];
    return true;
}

/* Admit the lines of a valid entry's urls. */
static enum bc_status admit_lines(struct bc_workers *w, const char *s,
                                  size_t len)
{
    size_t pos = 0;
    while (pos < len) {
        const char *line = s + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t llen = nl ? (size_t)(nl - line) : len - pos;
        pos += llen + 1;
        struct bc_workers_line l;
        if (!bc_workers_parse_line(line, llen, &l)) {
            w->stats.garbage_lines++;
            continue;
        }
        w->stats.received_urls++;
        enum bc_frontier_reason reason;
        enum bc_status st = bc_crawler_add_routed(
            w->crawler, l.url, l.url_len, l.depth, l.redirects, l.referrer,
            l.referrer_len, l.seed, &reason);
        if (st == BC_ERR_NOMEM)
            return st;
        /* A URL error is the crawler's to count (bad_scheme, ...); a
         * store error is sticky and returned by the next step. */
    }
    return BC_OK;
}

/* One entry [id, [field, value, ...]]: admit it or count it garbage. */
static enum bc_status take_entry(struct bc_workers *w, const redisReply *e)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 ||
        e->element[0]->type != REDIS_REPLY_STRING)
        return BC_OK; /* no id: nothing to acknowledge */
    const redisReply *id = e->element[0];
    const redisReply *fv = e->element[1];
    if (id->len < sizeof w->pending_after)
        memcpy(w->pending_after, id->str, id->len + 1);
    if (w->pending_phase)
        for (size_t i = 0; i < w->n_unacked; i++)
            if (strcmp(w->unacked[i].id, id->str) == 0)
                return BC_OK; /* read again after a rewind: held already */
    const redisReply *v = NULL, *from = NULL, *urls = NULL;
    if (fv->type == REDIS_REPLY_ARRAY)
        for (size_t i = 0; i + 1 < fv->elements; i += 2) {
            const redisReply *k = fv->element[i], *val = fv->element[i + 1];
            if (k->type != REDIS_REPLY_STRING ||
                val->type != REDIS_REPLY_STRING)
                continue;
            if (k->len == 1 && k->str[0] == 'v')
                v = val;
            else if (k->len == 4 && memcmp(k->str, "from", 4) == 0)
                from = val;
            else if (k->len == 4 && memcmp(k->str, "urls", 4) == 0)
                urls = val;
        }
    uint64_t sender = 0;
    bool valid = v && v->len == 1 && v->str[0] == '1' && from &&
                 parse_u64(from->str, from->len, UINT64_MAX, &sender) &&
                 sender < w->cfg.workers && urls;
    w->stats.received_entries++;
    if (!remember(w, id->str, id->len, valid))
        return BC_ERR_NOMEM;
    if (!valid)
        return BC_OK;
    return admit_lines(w, urls->str, urls->len);
}

static enum bc_status read_once(struct bc_workers *w, uint64_t block_ms);

/* Read the inbox once (pending entries first: when none are left, new
 * ones in the same call), waiting up to block_ms (0: not at all), and
 * admit what came. */
static enum bc_status read_inbox(struct bc_workers *w, uint64_t block_ms)
{
    bool pending = w->pending_phase;
    enum bc_status st = read_once(w, block_ms);
    if (st == BC_OK && pending && !w->pending_phase && w->ctx)
        st = read_once(w, block_ms);
    return st;
}

/* Send one read as a round: the scope's size (SCARD seeds) and up to
 * READ_COUNT entries of the inbox (XREADGROUP: in the pending phase those
 * delivered after pending_after, else new ones, waiting up to block_ms
 * for them). false when the round failed (counted): nothing to read. */
static bool read_send(struct bc_workers *w, uint64_t block_ms)
{
    char count[16], block[24];
    snprintf(count, sizeof count, "%u", READ_COUNT);
    snprintf(block, sizeof block, "%llu", (unsigned long long)block_ms);
    const char *argv[11];
    int argc = 0;
    argv[argc++] = "XREADGROUP";
    argv[argc++] = "GROUP";
    argv[argc++] = "workers";
    argv[argc++] = w->consumer;
    argv[argc++] = "COUNT";
    argv[argc++] = count;
    if (!w->pending_phase && block_ms > 0) { /* BLOCK 0: forever */
        argv[argc++] = "BLOCK";
        argv[argc++] = block;
    }
    argv[argc++] = "STREAMS";
    argv[argc++] = w->key_in;
    argv[argc++] = w->pending_phase ? w->pending_after : ">";
    size_t lens[11];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    if (!cmd(w, "SCARD %s", w->key_seeds) || !cmd_argv(w, argc, argv, lens)) {
        append_failed(w, "read");
        return false;
    }
    return round_trip(w, "read");
}

/* The read's reply r was an error: a consumer group that is gone (a Redis
 * without our data) is created again; any other error is counted and the
 * pending list read again. Frees the replies, r with them. */
static void read_error(struct bc_workers *w, const redisReply *r)
{
    if (strncmp(r->str, "NOGROUP", 7) == 0) {
        free_replies(w);
        if (cmd(w, "XGROUP CREATE %s workers 0 MKSTREAM", w->key_in))
            round_trip(w, "group");
        free_replies(w);
        return;
    }
    set_err(w, "Redis: read: %s", r->str);
    w->stats.redis_errors++;
    free_replies(w);
    rewind_pending(w); /* cheap, and nothing is assumed of the error */
}

/* The entries of an XREADGROUP reply for one stream, [[key, [entry...]]];
 * NULL for none (a nil reply after BLOCK) or a reply of another shape. */
static const redisReply *read_entries(const redisReply *r)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 1)
        return NULL;
    const redisReply *s = r->element[0];
    if (s->type == REDIS_REPLY_ARRAY && s->elements == 2 &&
        s->element[1]->type == REDIS_REPLY_ARRAY)
        return s->element[1];
    return NULL;
}

/* One read of the inbox (read_inbox()): the scope loaded again when the
 * seed set's size changed, and the entries that came admitted. Redis
 * trouble is not an error here (counted, in w's message): BC_OK. */
static enum bc_status read_once(struct bc_workers *w, uint64_t block_ms)
{
    w->last_read_empty = false;
    if (!ensure_conn(w) || !read_send(w, block_ms))
        return BC_OK;
    uint64_t scard = 0;
    bool scope_changed = reply_int(w->replies[0], &scard) &&
                         (long long)scard != w->seeds_loaded && scard > 0;
    redisReply *r = w->replies[1];
    if (r->type == REDIS_REPLY_ERROR) {
        read_error(w, r);
        return BC_OK;
    }
    /* Keep the reply: loading the scope runs another round. */
    w->replies[1] = NULL;
    w->n_replies = 1;
    enum bc_status st = BC_OK;
    if (scope_changed)
        st = load_scope(w, (long long)scard);
    const redisReply *entries = read_entries(r);
    size_t n = entries ? entries->elements : 0;
    if (st == BC_OK && scope_changed && w->seeds_loaded != (long long)scard) {
        /* The scope could not be loaded (Redis trouble): admit nothing
         * now, or URLs of hosts in it would be refused. The entries were
         * delivered to this consumer: read them again from its pending
         * list (those read before and not yet acknowledged skipped). */
        if (n > 0) {
            w->pending_phase = true;
            snprintf(w->pending_after, sizeof w->pending_after, "0");
        }
        freeReplyObject(r);
        return BC_OK;
    }
    if (st == BC_OK && n > 0) {
        publish_busy(w);
        for (size_t i = 0; i < n && st == BC_OK; i++)
            st = take_entry(w, entries->element[i]);
    }
    freeReplyObject(r);
    if (n == 0) {
        if (w->pending_phase)
            w->pending_phase = false;
        else
            w->last_read_empty = true;
    }
    return st;
}

/*
 * The acknowledgement, one script (atomic on the server). KEYS: the inbox,
 * this worker's hash; ARGV: busy ("1": add one, the worker was published
 * idle), then a validity flag ("1" valid, "0" garbage) and an id per
 * entry. An entry counts in acked (or garbage) only when its XACK
 * acknowledged it now: a round whose reply was lost (a timeout, a cut
 * connection) ran on the server, and acknowledging it again after the
 * reconnect must not count it twice, or sum(acked) would pass sum(sent)
 * and could stand in for an entry still in a stream (test_ack_reply_lost).
 * Returns {acked, garbage} counted now.
 */
static const char ack_script[] =
    "local a, g = 0, 0\n"
    "for i = 2, #ARGV, 2 do\n"
    "  local n = redis.call('XACK', KEYS[1], 'workers', ARGV[i + 1])\n"
    "  redis.call('XDEL', KEYS[1], ARGV[i + 1])\n"
    "  if n == 1 then\n"
    "    if ARGV[i] == '1' then a = a + 1 else g = g + 1 end\n"
    "  end\n"
    "end\n"
    "redis.call('HINCRBY', KEYS[2], 'acked', a)\n"
    "redis.call('HINCRBY', KEYS[2], 'garbage', g)\n"
    "redis.call('HSET', KEYS[2], 'idle', '0', 'state', 'crawling')\n"
    "if ARGV[1] == '1' then redis.call('HINCRBY', KEYS[2], 'busy', 1) end\n"
    "return {a, g}\n";

/* Acknowledge the committed entries: XACK, XDEL, the counts and idle 0 in
 * one script (ack_script). */
static void ack(struct bc_workers *w)
{
    size_t n = w->n_committed;
    if (n == 0 || !ensure_conn(w))
        return;
    size_t argc = 6 + 2 * n; /* EVAL script 2 in w busy (flag id)... */
    const char **argv = malloc(argc * sizeof *argv);
    size_t *lens = malloc(argc * sizeof *lens);
    if (!argv || !lens) {
        free(argv);
        free(lens);
        return;
    }
    bool was_idle = w->published_idle;
    argv[0] = "EVAL";
    argv[1] = ack_script;
    argv[2] = "2";
    argv[3] = w->key_in;
    argv[4] = w->key_w;
    argv[5] = was_idle ? "1" : "0";
    uint64_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        argv[6 + 2 * i] = w->unacked[i].valid ? "1" : "0";
        argv[7 + 2 * i] = w->unacked[i].id;
        valid += w->unacked[i].valid;
    }
    for (size_t i = 0; i < argc; i++)
        lens[i] = i == 1 ? sizeof ack_script - 1 : strlen(argv[i]);
    bool ok = cmd_argv(w, (int)argc, argv, lens);
    free(argv);
    free(lens);
    if (!ok) {
        append_failed(w, "ack");
        return;
    }
    if (!round_trip(w, "ack"))
        return;
    const redisReply *r = w->replies[0];
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        set_err(w, "Redis: ack: %s",
                r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
        w->stats.redis_errors++;
        free_replies(w);
        return;
    }
    free_replies(w);
    w->published_idle = false;
    /* This run's count: every entry settled, also one whose first
     * acknowledgement's reply was lost. */
    w->stats.acked_entries += valid;
    w->stats.garbage_entries += n - valid;
    memmove(w->unacked, w->unacked + n,
            (w->n_unacked - n) * sizeof *w->unacked);
    w->n_unacked -= n;
    w->n_committed = 0;
}

/* ---- heartbeat, idle, termination -------------------------------------- */

/* Append the HSET of the row's heartbeat and counters (crawl --status). */
static bool append_row(struct bc_workers *w, const char *state)
{
    struct bc_crawler_stats cs;
    bc_crawler_stats(w->crawler, &cs);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(w->crawler), mono_ms(), &fs);
    return cmd(w,
               "HSET %s heartbeat %llu pages %llu queued %llu in_flight %llu "
               "outbox %llu redis_errors %llu state %s",
               w->key_w, (unsigned long long)wall_ms(),
               (unsigned long long)cs.pages, (unsigned long long)fs.queued,
               (unsigned long long)cs.in_flight,
               (unsigned long long)bc_crawl_state_outbox_count(w->state),
               (unsigned long long)w->stats.redis_errors, state);
}

static void heartbeat(struct bc_workers *w, const char *state)
{
    if (!append_row(w, state) || !cmd(w, "GET %s", w->key_done)) {
        append_failed(w, "heartbeat");
        return;
    }
    if (!round_trip(w, "heartbeat"))
        return;
    const redisReply *d = w->replies[1];
    if (d->type == REDIS_REPLY_STRING && strcmp(d->str, "1") == 0)
        w->over = true;
    free_replies(w);
}

/* One snapshot of every worker (idle test): the crawl is over when all N
 * are registered and idle, sum(sent) = sum(acked), every inbox is empty
 * (XLEN 0: an acknowledged entry is deleted in the same script, so a
 * stream holds exactly the entries not yet acknowledged), and nothing
 * moved since the previous idle snapshot. The inboxes' lengths make the
 * end safe even when the counts drift (a valid entry written by hand and
 * not counted in sent: test_entry_in_transit). With a global page budget,
 * an idle worker with URLs queued is one the budget refused; if P pages
 * is below the limit again (a token given back by a worker whose frontier
 * ran dry), its next step takes it, so the crawl is not over
 * (test_max_pages). */
static void snapshot(struct bc_workers *w)
{
    unsigned n = w->cfg.workers;
    if (!cmd(w, "MULTI") || !cmd(w, "GET %s", w->key_done)) {
        append_failed(w, "snapshot");
        return;
    }
    for (unsigned i = 0; i < n; i++)
        if (!cmd(w, "HMGET %sw:%u idle sent acked busy queued", w->key_prefix,
                 i) ||
            !cmd(w, "XLEN %sin:%u", w->key_prefix, i)) {
            append_failed(w, "snapshot");
            return;
        }
    if (!cmd(w, "GET %s", w->key_pages) || !cmd(w, "EXEC")) {
        append_failed(w, "snapshot");
        return;
    }
    if (!round_trip(w, "snapshot"))
        return;
    const redisReply *x = exec_reply(w, "snapshot", 2 + 2 * (size_t)n);
    if (!x)
        return;
    const redisReply *d = x->element[0];
    if (d->type == REDIS_REPLY_STRING && strcmp(d->str, "1") == 0) {
        w->over = true;
        free_replies(w);
        return;
    }
    bool all = true, empty = true, waiting = false, mine = false;
    uint64_t sent = 0, acked = 0;
    for (unsigned i = 0; i < n; i++) {
        const redisReply *h = x->element[1 + 2 * i];
        uint64_t *v = &w->snap[5 * i];
        for (unsigned f = 0; f < 5; f++) {
            v[f] = 0;
            if ((h->type != REDIS_REPLY_ARRAY || h->elements != 5 ||
                 !reply_int(h->element[f], &v[f])) &&
                f < 4)
                all = false; /* not registered (nil); queued may be nil */
        }
        if (v[0] != 1)
            all = false;
        sent += v[1];
        acked += v[2];
        waiting = waiting || v[4] > 0;
        uint64_t len = 0;
        if (!reply_int(x->element[2 + 2 * i], &len) || len != 0) {
            empty = false;
            mine = mine || i == w->cfg.index;
        }
    }
    uint64_t pages = 0; /* nil: no page taken yet */
    reply_int(x->element[1 + 2 * (size_t)n], &pages);
    w->snap[5 * (size_t)n] = pages;
    free_replies(w);
    size_t bytes = (5 * (size_t)n + 1) * sizeof *w->snap;
    bool same = w->snap_prev_valid && memcmp(w->snap, w->snap_prev, bytes) == 0;
    memcpy(w->snap_prev, w->snap, bytes);
    w->snap_prev_valid = all;
    if (mine && w->n_unacked == 0) {
        /* Idle, nothing held, and an entry in its own inbox: one that
         * came since the last read, or one delivered into a reply that
         * was lost and missed by the re-read after it (a belt and braces:
         * that re-read should have found it). Read pending ones again;
         * ">" follows in the same read. */
        rewind_pending(w);
        return;
    }
    bool budget_left = w->cfg.max_pages && pages < w->cfg.max_pages;
    if (!all || sent != acked || !empty || !same || (waiting && budget_left))
        return;
    if (cmd(w, "SET %s 1", w->key_done) && round_trip(w, "done"))
        w->over = true;
    free_replies(w);
}

static bool locally_idle(const struct bc_workers *w)
{
    return w->crawler_done && !w->pending_phase && w->n_unacked == 0 &&
           w->last_read_empty && bc_crawl_state_outbox_count(w->state) == 0;
}

/* The crawl is over: stop the crawler, sync its state, say done. */
static enum bc_status finish(struct bc_workers *w)
{
    bc_crawler_stop(w->crawler);
    enum bc_status st = bc_crawler_sync(w->crawler);
    if (w->ctx || ensure_conn(w)) {
        uint64_t pages = 0;
        if (w->cfg.max_pages && cmd(w, "GET %s", w->key_pages) &&
            round_trip(w, "budget") && reply_int(w->replies[0], &pages))
            w->stats.budget_spent = pages >= w->cfg.max_pages;
        free_replies(w);
        heartbeat(w, "done");
        if (w->ctx && cmd(w, "HSET %s idle 1", w->key_w))
            round_trip(w, "done");
        free_replies(w);
    }
    return st;
}

/* Step the crawler (up to timeout_ms; *done as bc_crawler_step() says:
 * its crawl is over for now), acknowledge the entries its commit covers
 * and flush the state's outbox to the other workers' inboxes; *outbox:
 * what is left in it. */
static enum bc_status crawler_step(struct bc_workers *w, uint64_t timeout_ms,
                                   bool *done, uint64_t *outbox)
{
    enum bc_status st = bc_crawler_step(w->crawler, timeout_ms, done);
    if (st != BC_OK)
        return st;
    w->crawler_done = *done;
    /* Everything read before this step is committed now. */
    w->n_committed = w->n_unacked;
    ack(w);
    st = flush_outbox(w);
    if (st != BC_OK)
        return st;
    *outbox = bc_crawl_state_outbox_count(w->state);
    w->stats.outbox = *outbox;
    if (*outbox > w->stats.outbox_max)
        w->stats.outbox_max = *outbox;
    return BC_OK;
}

/* A stopping worker's step after the crawler's: whether it is over (the
 * crawler done, and every entry it held acknowledged or Redis away), then
 * published "stopped". */
static bool stop_if_drained(struct bc_workers *w, bool done)
{
    if (!done || (w->n_unacked != 0 && w->ctx))
        return false;
    if (w->ctx || ensure_conn(w)) {
        heartbeat(w, "stopped");
        free_replies(w);
    }
    return true;
}

/* Read the inbox when it is due: a busy worker reads it every
 * READ_EVERY_MS, not after every step (a step may last microseconds, and
 * each read is a round trip that the crawl waits for); an idle one (done,
 * nothing held, an empty outbox: it waits for entries up to timeout_ms,
 * at most BLOCK_MAX_MS), one re-reading its pending entries, or one whose
 * last read found entries reads at once. */
static enum bc_status read_if_due(struct bc_workers *w, uint64_t timeout_ms,
                                  bool done, uint64_t outbox)
{
    uint64_t wait = 0;
    if (done && !w->pending_phase && w->n_unacked == 0 && outbox == 0)
        wait = timeout_ms < BLOCK_MAX_MS ? timeout_ms : BLOCK_MAX_MS;
    bool read_due = wait > 0 || w->pending_phase || !w->last_read_empty ||
                    mono_ms() - w->last_read >= READ_EVERY_MS;
    if (read_due && (w->ctx || ensure_conn(w))) {
        w->last_read = mono_ms();
        return read_inbox(w, wait);
    }
    if (read_due && wait > 0)
        sleep_ms(wait); /* idle, Redis away: do not spin */
    return BC_OK;
}

/* Tell the others what this worker is: busy again, its heartbeat every
 * HEARTBEAT_MS, and, when it is idle, idle once and then a snapshot of
 * the crawl every SNAPSHOT_MS (which may find the crawl over). */
static void publish(struct bc_workers *w)
{
    uint64_t now = mono_ms();
    bool idle = locally_idle(w);
    if (w->published_idle && !idle)
        publish_busy(w);
    if (now - w->last_heartbeat >= HEARTBEAT_MS && (w->ctx || ensure_conn(w))) {
        heartbeat(w, w->published_idle ? "idle" : "crawling");
        w->last_heartbeat = now;
    }
    if (!idle || w->over || !w->ctx)
        return;
    if (!w->published_idle) {
        /* With the row's counters of now, not of the last heartbeat
         * (idle beside a stale queue in crawl --status). */
        if (!append_row(w, "idle") || !cmd(w, "HSET %s idle 1", w->key_w)) {
            append_failed(w, "idle");
        } else if (round_trip(w, "idle")) {
            w->published_idle = true;
            w->snap_prev_valid = false;
            w->last_snapshot = 0;
        }
        free_replies(w);
    }
    if (w->published_idle && w->ctx &&
        (w->last_snapshot == 0 || now - w->last_snapshot >= SNAPSHOT_MS)) {
        snapshot(w);
        w->last_snapshot = now;
    }
}

enum bc_status bc_workers_step(struct bc_workers *w, uint64_t timeout_ms,
                               bool *over)
{
    if (over)
        *over = false;
    if (!w || !w->started)
        return BC_ERR_INVALID_ARG;
    if (w->over) {
        if (over)
            *over = true;
        return BC_OK;
    }
    bool done = false;
    uint64_t outbox = 0;
    enum bc_status st =
        crawler_step(w, locally_idle(w) ? 0 : timeout_ms, &done, &outbox);
    if (st != BC_OK)
        return st;
    if (w->stopping) {
        if (stop_if_drained(w, done) && over)
            *over = true;
        return BC_OK;
    }
    st = read_if_due(w, timeout_ms, done, outbox);
    if (st != BC_OK)
        return st;
    publish(w);
    if (w->over) {
        st = finish(w);
        if (st != BC_OK)
            return st;
        if (over)
            *over = true;
    }
    return BC_OK;
}

void bc_workers_stop(struct bc_workers *w)
{
    if (!w)
        return;
    w->stopping = true;
    if (w->crawler)
        bc_crawler_stop(w->crawler);
}

void bc_workers_stats(const struct bc_workers *w, struct bc_workers_stats *out)
{
    *out = w->stats;
    out->outbox = w->state ? bc_crawl_state_outbox_count(w->state) : 0;
    out->redis_up = w->ctx != NULL;
}

/* ---- the status table --------------------------------------------------- */

static void row_field(struct bc_workers_row *row, const redisReply *k,
                      const redisReply *v)
{
    if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
        return;
    const char *name = k->str;
    uint64_t n = 0;
    bool num = parse_u64(v->str, v->len, UINT64_MAX, &n);
    if (strcmp(name, "pid") == 0 && num)
        row->pid = (long)n;
    else if (strcmp(name, "host") == 0)
        snprintf(row->host, sizeof row->host, "%s", v->str);
    else if (strcmp(name, "state") == 0)
        snprintf(row->state, sizeof row->state, "%s", v->str);
    else if (strcmp(name, "idle") == 0)
        row->idle = num && n == 1;
    else if (!num)
        return;
    else if (strcmp(name, "pages") == 0)
        row->pages = n;
    else if (strcmp(name, "queued") == 0)
        row->queued = n;
    else if (strcmp(name, "in_flight") == 0)
        row->in_flight = n;
    else if (strcmp(name, "sent") == 0)
        row->sent = n;
    else if (strcmp(name, "acked") == 0)
        row->acked = n;
    else if (strcmp(name, "garbage") == 0)
        row->garbage = n;
    else if (strcmp(name, "outbox") == 0)
        row->outbox = n;
    else if (strcmp(name, "heartbeat") == 0)
        row->heartbeat_ms = n;
}

enum bc_status bc_workers_status(const char *where, const char *crawl_id,
                                 unsigned *workers, bool *done,
                                 struct bc_workers_row *rows, size_t max_rows,
                                 char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    const char *id = crawl_id ? crawl_id : "default";
    struct bc_redis_where wh;
    if (!where || !workers || !done || (!rows && max_rows > 0) ||
        !crawl_id_ok(id) || bc_redis_where_parse(where, &wh) != BC_OK) {
        if (err && err_size)
            snprintf(err, err_size, "bad arguments");
        return BC_ERR_INVALID_ARG;
    }
    redisContext *c = NULL;
    enum bc_status st =
        bc_redis_connect(&wh, COMMAND_TIMEOUT_MS, &c, err, err_size);
    if (st != BC_OK)
        return st;
    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    redisReply *m = redisCommand(c, "HGET bc:%s:meta workers", id);
    redisReply *d = m ? redisCommand(c, "GET bc:%s:done", id) : NULL;
    uint64_t n = 0;
    if (!m || !d) {
        st = BC_ERR_REDIS_LOST;
        if (err && err_size)
            snprintf(err, err_size, "Redis connection lost: %s", c->errstr);
    } else if (m->type != REDIS_REPLY_STRING ||
               !parse_u64(m->str, m->len, BC_WORKERS_MAX, &n) || n == 0) {
        st = m->type == REDIS_REPLY_ERROR ? BC_ERR_REDIS_REPLY
                                          : BC_ERR_NOT_FOUND;
        if (err && err_size)
            snprintf(err, err_size, "no crawl \"%s\" in this Redis", id);
    }
    size_t want = 0;
    if (st == BC_OK) {
        want = n < max_rows ? n : max_rows;
        for (size_t i = 0; i < want; i++)
            if (redisAppendCommand(c, "HGETALL bc:%s:w:%u", id, (unsigned)i) !=
                REDIS_OK) {
                st = BC_ERR_NOMEM;
                break;
            }
    }
    for (size_t i = 0; st == BC_OK && i < want; i++) {
        void *r = NULL;
        if (redisGetReply(c, &r) != REDIS_OK || !r) {
            st = BC_ERR_REDIS_LOST;
            if (err && err_size)
                snprintf(err, err_size, "Redis connection lost: %s", c->errstr);
            break;
        }
        redisReply *h = r;
        struct bc_workers_row *row = &rows[i];
        memset(row, 0, sizeof *row);
        row->index = (unsigned)i;
        if (h->type == REDIS_REPLY_ARRAY && h->elements > 0) {
            row->registered = true;
            for (size_t f = 0; f + 1 < h->elements; f += 2)
                row_field(row, h->element[f], h->element[f + 1]);
        }
        freeReplyObject(h);
    }
    bc_redis_sigpipe_release(&g);
    if (st == BC_OK) {
        *workers = (unsigned)n;
        *done = d->type == REDIS_REPLY_STRING && strcmp(d->str, "1") == 0;
    }
    freeReplyObject(m);
    freeReplyObject(d);
    redisFree(c);
    return st;
}
