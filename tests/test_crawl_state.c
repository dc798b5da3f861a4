/*
 * test_crawl_state.c - the crawl state (crawler/state.c) with real files:
 * create and resume, the in-flight URLs of a kill, the configuration
 * check, the lock, refusal of what is not a state or is damaged, a write
 * error that leaves a state that still resumes, a failed sync named by
 * its errno.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* syscall() */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "bloomcrawl/crawl_state.h"
#include "state_int.h"

static char base[256];
static char dir[300];
static int dir_serial;

/*
 * fsync() and fdatasync() of this executable: the libraries it loads,
 * SQLite's too, call these instead of the C library's. While
 * fail_sync_suffix is set, a sync of a file whose path ends with it fails
 * with EIO, as a disk's write error reports it; any other goes to the
 * kernel.
 */
static const char *volatile fail_sync_suffix;

static bool sync_fails(int fd)
{
    const char *suffix = fail_sync_suffix;
    if (!suffix)
        return false;
    char link[64], path[1024];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n < 0)
        return false;
    path[n] = '\0';
    size_t len = strlen(suffix);
    return (size_t)n >= len && strcmp(path + n - (ssize_t)len, suffix) == 0;
}

int fsync(int fd)
{
    if (sync_fails(fd)) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

int fdatasync(int fd)
{
    if (sync_fails(fd)) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fdatasync, fd);
}

/* Run sql on DIR/crawl.db with SQLite itself, as an older build or
 * another program would have left it (the state closed). */
static void state_db_exec(const char *state_dir, const char *sql)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/crawl.db", state_dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* Copy the WAL of the state in state_dir, open or not, into crawl.db and
 * cut its file to 0 bytes, from a connection of the test's own (a
 * TRUNCATE checkpoint; retried while the state's checkpointer runs one). */
static void state_wal_empty(const char *state_dir)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/crawl.db", state_dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    /* A read first: SQLite opens the WAL at the connection's first read,
     * and checkpoints nothing before. */
    assert_int_equal(sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    int rc = SQLITE_BUSY;
    for (int i = 0; i < 500 && rc == SQLITE_BUSY; i++) {
        rc = sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE,
                                       NULL, NULL);
        if (rc == SQLITE_BUSY) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    assert_int_equal(rc, SQLITE_OK);
    sqlite3_close(db);
}

/* A fresh path for a state directory (not created). */
static const char *new_dir(void)
{
    snprintf(dir, sizeof(dir), "%s/s%d", base, ++dir_serial);
    return dir;
}

static const struct bc_crawl_state_option fixed[] = {
    {"--scope", "any"}, {"--expect", "10000"}, {"--user-agent", "t/1"}};
#define NFIXED (sizeof(fixed) / sizeof(fixed[0]))

static struct bc_frontier_config config(void)
{
    struct bc_frontier_config c;
    bc_frontier_config_init(&c);
    c.seen.expected = 10000;
    c.scope = BC_SCOPE_ANY;
    c.obey_robots = false;
    c.min_delay_ms = 0;
    return c;
}

static struct bc_crawl_state *open_ok(const char *d)
{
    struct bc_crawl_state *s = NULL;
    struct bc_crawl_state_error err;
    enum bc_status st = bc_crawl_state_open(d, fixed, NFIXED, &s, &err);
    if (st != BC_OK)
        print_error("open %s: %s: %s\n", d, bc_strerror(st), err.text);
    assert_int_equal(st, BC_OK);
    return s;
}

static struct bc_frontier *frontier_of(struct bc_crawl_state *s)
{
    struct bc_frontier_config c = config();
    struct bc_frontier *f = NULL;
    enum bc_status st = bc_crawl_state_frontier(s, &c, 4, 0, &f);
    if (st != BC_OK)
        print_error("frontier: %s: %s\n", bc_strerror(st),
                    bc_crawl_state_errmsg(s));
    assert_int_equal(st, BC_OK);
    return f;
}

static enum bc_frontier_reason add(struct bc_frontier *f, const char *url)
{
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add(f, url, strlen(url), NULL, 0, 1, &r, NULL),
                     BC_OK);
    return r;
}

static struct bc_frontier_job fetch(struct bc_frontier *f)
{
    struct bc_frontier_job j;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH);
    return j;
}

static void done(struct bc_crawl_state *s, struct bc_frontier *f,
                 struct bc_frontier_job *j)
{
    struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_done(f, j, &o, 0), BC_OK);
    assert_int_equal(bc_crawl_state_page_done(s, j->id), BC_OK);
}

static void add_pages(struct bc_frontier *f, const char *host, int n)
{
    char url[200];
    for (int i = 0; i < n; i++) {
        snprintf(url, sizeof(url), "http://%s/page/%d", host, i);
        assert_int_equal(add(f, url), BC_ADMIT_QUEUED);
    }
}

static void test_create_resume(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct stat sb;
    assert_int_equal(stat(d, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    struct bc_frontier *f = frontier_of(s);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_false(info.resumed);
    assert_int_equal(info.runs, 1);
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_seed(f, "http://a.test/", 14, &r, NULL),
                     BC_OK);
    assert_int_equal(bc_crawl_state_add_seed(s, "http://a.test/", 14), BC_OK);
    add_pages(f, "a.test", 10); /* window 4: 6 of them spill */
    add_pages(f, "b.test", 3);
    struct bc_frontier_job j1 = fetch(f); /* a.test/ */
    assert_string_equal(j1.url, "http://a.test/");
    done(s, f, &j1);
    struct bc_frontier_job j2 = fetch(f); /* b.test/page/0 */
    assert_string_equal(j2.url, "http://b.test/page/0");
    assert_int_equal(bc_crawl_state_counter_set(s, "pages", 1), BC_OK);
    bc_crawl_state_set_out_offset(s, 1234);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    /* After the snapshot: admitted, committed, replayed on resume. */
    assert_int_equal(add(f, "http://c.test/late"), BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* Not committed: lost with the "kill". */
    assert_int_equal(add(f, "http://c.test/uncommitted"), BC_ADMIT_QUEUED);
    struct bc_frontier_job j3 = fetch(f);
    (void)j3;
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* rolls back, as a kill would lose it */

    s = open_ok(d);
    assert_int_equal(bc_crawl_state_counter_get(s, "pages"), 1);
    f = frontier_of(s);
    bc_crawl_state_info(s, &info);
    assert_true(info.resumed);
    assert_int_equal(info.runs, 2);
    assert_int_equal(info.refetched_now, 1); /* b.test/page/0 */
    assert_int_equal(info.refetched, 1);
    assert_int_equal(info.out_offset, 1234);
    assert_int_equal(info.journal, 15);
    assert_int_equal(info.snapshot_pos, 14);
    assert_int_equal(info.queued, 10 + 3 + 1);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_int_equal(fs.queued, 14);
    assert_int_equal(fs.admitted, 15);
    assert_int_equal(fs.handed_out, 2);
    /* The seen-test: from the snapshot and from the replay. */
    assert_int_not_equal(add(f, "http://a.test/page/3"), BC_ADMIT_QUEUED);
    assert_int_not_equal(add(f, "http://c.test/late"), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "http://c.test/uncommitted"), BC_ADMIT_QUEUED);
    /* Drain: b.test/page/0 first again on its host, a.test in order. */
    char got[64][64];
    int n = 0;
    for (;;) {
        struct bc_frontier_job j;
        assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
        if (j.action == BC_FRONTIER_DONE)
            break;
        assert_int_equal(j.action, BC_FRONTIER_FETCH);
        assert_true(n < 64);
        snprintf(got[n++], sizeof(got[0]), "%s", j.url);
        done(s, f, &j);
        assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    }
    assert_int_equal(n, 15);
    int a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        char want[64];
        if (strncmp(got[i], "http://a.test/", 14) == 0) {
            snprintf(want, sizeof(want), "http://a.test/page/%d", a++);
            assert_string_equal(got[i], want);
        } else if (strncmp(got[i], "http://b.test/", 14) == 0) {
            snprintf(want, sizeof(want), "http://b.test/page/%d", b++);
            assert_string_equal(got[i], want);
        }
    }
    assert_int_equal(a, 10);
    assert_int_equal(b, 3);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* A clean stop: nothing in flight, nothing refetched; a seed-less
     * resume keeps the scope (HOST scope: a.test only). */
    s = open_ok(d);
    struct bc_frontier_config c = config();
    c.scope = BC_SCOPE_HOST;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.refetched_now, 0);
    assert_int_equal(info.refetched, 1);
    assert_int_equal(info.queued, 0);
    assert_int_equal(
        bc_crawl_state_frontier(s, &c, 4, 0, &f) == BC_ERR_INVALID_ARG, 1);
    assert_int_equal(add(f, "http://a.test/new"), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "http://zzz.test/new"), BC_ADMIT_OUT_OF_SCOPE);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

static void test_config_mismatch(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    bc_frontier_free(frontier_of(s));
    bc_crawl_state_close(s);
    struct bc_crawl_state_option other[NFIXED];
    memcpy(other, fixed, sizeof(other));
    other[1].value = "20000";
    s = NULL;
    struct bc_crawl_state_error err;
    assert_int_equal(bc_crawl_state_open(d, other, NFIXED, &s, &err),
                     BC_ERR_MISMATCH);
    assert_null(s);
    assert_string_equal(err.option, "--expect");
    assert_string_equal(err.was, "10000");
    assert_string_equal(err.now, "20000");
    /* One fewer: the open checks what is given; the recorded one nobody
     * gives any more is named by the pin check (the crawler's, when it
     * is made: bc_crawler_pin()). */
    assert_int_equal(bc_crawl_state_open(d, fixed, NFIXED - 1, &s, &err),
                     BC_OK);
    assert_int_equal(bc_crawl_state_pin(s, NULL, 0, &err), BC_ERR_MISMATCH);
    assert_string_equal(err.option, "--user-agent");
    assert_string_equal(err.now, "");
    assert_string_equal(bc_crawl_state_errmsg(s), err.text);
    bc_crawl_state_close(s);
    /* Untouched: the runs count did not move. */
    s = open_ok(d);
    bc_frontier_free(frontier_of(s));
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.runs, 2);
    bc_crawl_state_close(s);
}

static void test_lock(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d), *s2 = NULL;
    struct bc_crawl_state_error err;
    assert_int_equal(bc_crawl_state_open(d, fixed, NFIXED, &s2, &err),
                     BC_ERR_LOCKED);
    assert_null(s2);
    assert_int_equal(err.pid, (long)getpid());
    bc_crawl_state_close(s);
    s = open_ok(d); /* released by close */
    bc_crawl_state_close(s);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static bool exists(const char *d, const char *name)
{
    char p[400];
    snprintf(p, sizeof(p), "%s/%s", d, name);
    struct stat sb;
    return stat(p, &sb) == 0;
}

static enum bc_status open_err(const char *d, struct bc_crawl_state_error *err)
{
    struct bc_crawl_state *s = NULL;
    enum bc_status st = bc_crawl_state_open(d, fixed, NFIXED, &s, err);
    assert_true(st != BC_OK || s != NULL);
    bc_crawl_state_close(s);
    return st;
}

/*
 * crawl_state.h: runs counts the runs of a state, this one included, and
 * refetched_now the URLs in flight at the last commit - both from the
 * open on, before the frontier is built (issue 21: right after an open
 * runs gave 0, 1, 2 and refetched_now 0 after a kill -9 until
 * bc_crawl_state_frontier()).
 */
static void test_info_at_open(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state_info info;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct bc_crawl_state *s = NULL;
        if (bc_crawl_state_open(d, fixed, NFIXED, &s, NULL) != BC_OK)
            _exit(10);
        bc_crawl_state_info(s, &info);
        if (info.runs != 1 || info.refetched_now != 0 || info.refetched != 0)
            _exit(11);
        struct bc_frontier_config c = config();
        struct bc_frontier *f = NULL;
        if (bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
            _exit(12);
        char url[64];
        for (int i = 0; i < 3; i++) {
            enum bc_frontier_reason r;
            snprintf(url, sizeof(url), "http://a%d.test/", i);
            if (bc_frontier_add(f, url, strlen(url), NULL, 0, 1, &r, NULL) !=
                BC_OK)
                _exit(13);
        }
        struct bc_frontier_job j;
        for (int i = 0; i < 2; i++) /* two in flight */
            if (bc_frontier_next(f, 0, &j) != BC_OK ||
                j.action != BC_FRONTIER_FETCH)
                _exit(14);
        if (bc_crawl_state_commit(s, f) != BC_OK)
            _exit(15);
        kill(getpid(), SIGKILL);
        _exit(16);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    /* After the kill: the second open, two URLs to fetch again. */
    struct bc_crawl_state *s = open_ok(d);
    bc_crawl_state_info(s, &info);
    assert_true(info.resumed);
    assert_int_equal(info.runs, 2);
    assert_int_equal(info.refetched_now, 2);
    assert_int_equal(info.refetched, 2);
    struct bc_frontier *f = frontier_of(s);
    bc_crawl_state_info(s, &info); /* the same once the frontier is built */
    assert_int_equal(info.runs, 2);
    assert_int_equal(info.refetched_now, 2);
    assert_int_equal(info.refetched, 2);
    assert_int_equal(info.queued, 3);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* An open that builds no frontier crawled nothing: it writes nothing
     * and is not counted by the next open. The two URLs were queued again
     * by the second run and not handed out since: not in flight. */
    for (int i = 0; i < 2; i++) {
        s = open_ok(d);
        bc_crawl_state_info(s, &info);
        assert_int_equal(info.runs, 3);
        assert_int_equal(info.refetched_now, 0);
        assert_int_equal(info.refetched, 2);
        if (i == 0)
            bc_crawl_state_close(s);
    }
    bc_crawl_state_close(s);
}

/* The payload of test URL i (NUL and 0xff bytes in it; URL 2 has none):
 * its length. */
static size_t payload_of(int i, unsigned char *buf)
{
    if (i == 2)
        return 0;
    size_t n = 0;
    for (int k = 0; k <= i; k++) {
        buf[n++] = 'p';
        buf[n++] = 0;
        buf[n++] = (unsigned char)('a' + i);
        buf[n++] = 0xff;
    }
    return n;
}

/* Hand out every URL left and check each one's payload; returns how many
 * there were (each URL once). */
static int fetch_payloads(struct bc_crawl_state *s, struct bc_frontier *f,
                          const char *host)
{
    bool got[8] = {false};
    int n = 0;
    struct bc_frontier_job j;
    while (bc_frontier_next(f, 0, &j) == BC_OK &&
           j.action == BC_FRONTIER_FETCH) {
        char prefix[64];
        int plen = snprintf(prefix, sizeof(prefix), "http://%s/u/", host);
        assert_int_equal(strncmp(j.url, prefix, (size_t)plen), 0);
        int i = atoi(j.url + plen);
        assert_true(i >= 0 && i < 8 && !got[i]);
        got[i] = true;
        unsigned char want[64];
        size_t len = payload_of(i, want);
        assert_int_equal(j.payload_len, len);
        if (len)
            assert_memory_equal(j.payload, want, len);
        else
            assert_null(j.payload);
        done(s, f, &j);
        n++;
    }
    return n;
}

/* Payloads (bc_frontier_add_payload()) are kept with their URLs' journal
 * rows: after a commit and a kill -9, the resumed frontier hands each
 * URL left out with its payload, byte for byte - those in flight at the
 * kill (queued again, I7) and those queued, in memory (the window of 4)
 * or only in the store. */
static void test_payload_kill(void **state)
{
    (void)state;
    const char *d = new_dir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct bc_crawl_state *s = NULL;
        if (bc_crawl_state_open(d, fixed, NFIXED, &s, NULL) != BC_OK)
            _exit(10);
        struct bc_frontier_config c = config();
        c.per_host_concurrency = 3;
        struct bc_frontier *f = NULL;
        if (bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
            _exit(12);
        char url[64];
        unsigned char pl[64];
        for (int i = 0; i < 8; i++) {
            enum bc_frontier_reason r;
            snprintf(url, sizeof(url), "http://a.test/u/%d", i);
            size_t n = payload_of(i, pl);
            if (bc_frontier_add_payload(f, url, strlen(url), NULL, 0, 1, pl, n,
                                        &r, NULL) != BC_OK ||
                r != BC_ADMIT_QUEUED)
                _exit(13);
        }
        struct bc_frontier_job j;
        uint64_t first = 0;
        for (int i = 0; i < 3; i++) { /* u/0 done; u/1, u/2 in flight */
            if (bc_frontier_next(f, 0, &j) != BC_OK ||
                j.action != BC_FRONTIER_FETCH)
                _exit(14);
            if (i == 0)
                first = j.id;
        }
        if (bc_crawl_state_page_done(s, first) != BC_OK)
            _exit(15);
        if (bc_crawl_state_commit(s, f) != BC_OK)
            _exit(16);
        kill(getpid(), SIGKILL);
        _exit(17);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFEXITED(status))
        print_error("child exited %d\n", WEXITSTATUS(status));
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    assert_int_equal(fetch_payloads(s, f, "a.test"), 7); /* all but u/0 */
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* An unfiltered admission (bc_frontier_request.unfiltered, Scrapy's
 * dont_filter) of a URL already journaled and fetched is a journal row of
 * its own: committed, it survives a close and comes back queued, with its
 * payload, in the rebuilt frontier; the resumed seen-test still says seen
 * for a filtered add of it. */
static void test_unfiltered_resume(void **state)
{
    (void)state;
    static const unsigned char pl[] = {'d', 0, 'f', 0xff};
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    assert_int_equal(add(f, "http://a.test/x"), BC_ADMIT_QUEUED);
    struct bc_frontier_job j = fetch(f);
    assert_string_equal(j.url, "http://a.test/x");
    done(s, f, &j);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    assert_int_equal(add(f, "http://a.test/x"), BC_ADMIT_DUPLICATE);
    struct bc_frontier_request req = {0};
    req.href = "http://a.test/x";
    req.href_len = strlen(req.href);
    req.depth = 2;
    req.payload = pl;
    req.payload_len = sizeof(pl);
    req.unfiltered = true;
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_request(f, &req, &r, NULL), BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    s = open_ok(d);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_true(info.resumed);
    assert_int_equal(info.journal, 2);
    assert_int_equal(info.queued, 1);
    assert_int_equal(info.refetched_now, 0);
    f = frontier_of(s);
    j = fetch(f);
    assert_string_equal(j.url, "http://a.test/x");
    assert_int_equal(j.depth, 2);
    assert_int_equal(j.payload_len, sizeof(pl));
    assert_memory_equal(j.payload, pl, sizeof(pl));
    done(s, f, &j);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_DONE);
    /* The exact tier starts empty on resume: the Bloom filter says it. */
    r = add(f, "http://a.test/x");
    assert_true(r == BC_ADMIT_DUPLICATE || r == BC_ADMIT_PROBABLY_SEEN);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* A state made before urls.payload opens: the column is added, its rows
 * have no payload, and payloads queued from then on are kept. */
static void test_payload_old_state(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    assert_int_equal(add(f, "http://b.test/u/2"), BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    state_db_exec(d, "ALTER TABLE urls DROP COLUMN payload");

    s = open_ok(d);
    f = frontier_of(s);
    unsigned char pl[64];
    size_t n = payload_of(5, pl);
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_payload(f, "http://b.test/u/5", 17, NULL,
                                             0, 1, pl, n, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(d);
    f = frontier_of(s);
    assert_int_equal(fetch_payloads(s, f, "b.test"), 2);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* The payloads table's rows, copied (IDENTICAL PAYLOADS, crawler.c). */
struct digest_rows {
    size_t n, rows; /* digests, rows read */
    unsigned char digest[8][20];
    char url[8][64], id[8][64];
    int64_t date[8];
};

static enum bc_status digest_row(void *ctx,
                                 const struct bc_crawl_state_payload *p)
{
    struct digest_rows *o = ctx;
    assert_true(o->n < 8 && p->url_len < 64 && strlen(p->record_id) < 64);
    /* A digest's later row replaces its earlier one (state_int.h). */
    o->rows++;
    size_t i = 0;
    while (i < o->n && memcmp(o->digest[i], p->digest, 20) != 0)
        i++;
    if (i == o->n)
        o->n++;
    memcpy(o->digest[i], p->digest, 20);
    memcpy(o->url[i], p->url, p->url_len);
    o->url[i][p->url_len] = '\0';
    strcpy(o->id[i], p->record_id);
    o->date[i] = p->date;
    return BC_OK;
}

static struct digest_rows digest_rows_of(struct bc_crawl_state *s)
{
    struct digest_rows o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(bc_crawl_state_payloads(s, digest_row, &o), BC_OK);
    return o;
}

/* A payload row is durable with the commit of its turn, like the page it
 * came with: one committed comes back after a reopen, one written after
 * the last commit (a kill) does not; a put of the same digest replaces
 * the row (an entry that gained its WARC record). A state made before
 * the table existed gains it, empty, when opened. */
static void test_payload_digests(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    unsigned char d1[20], d2[20];
    memset(d1, 0xa1, 20);
    memset(d2, 0xb2, 20);
    struct bc_crawl_state_payload row = {d1, "http://a.test/x", 15, "", 1700};
    assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    row = (struct bc_crawl_state_payload){d1, "http://a.test/x", 15,
                                          "<urn:uuid:1>", 1800};
    assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    row = (struct bc_crawl_state_payload){d2, "http://a.test/y", 15, "", 1900};
    assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_OK);
    row.digest = NULL;
    assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_payloads(s, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* d2's row never committed: a kill */

    s = open_ok(d);
    f = frontier_of(s);
    struct digest_rows o = digest_rows_of(s);
    assert_int_equal(o.n, 1);
    assert_memory_equal(o.digest[0], d1, 20);
    assert_string_equal(o.url[0], "http://a.test/x");
    assert_string_equal(o.id[0], "<urn:uuid:1>");
    assert_int_equal(o.date[0], 1800);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* A state of a build before the table: made when opened. */
    state_db_exec(d, "DROP TABLE payload_log");
    s = open_ok(d);
    f = frontier_of(s);
    assert_int_equal(digest_rows_of(s).n, 0);
    row = (struct bc_crawl_state_payload){d2, "http://a.test/y", 15, "", 1900};
    assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(digest_rows_of(s).n, 1);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

static long long file_size(const char *d, const char *name);

/* The number of pages of table (or index) name in the database at path
 * (the dbstat table). */
static long long table_pages(const char *path, const char *name)
{
    sqlite3 *db;
    sqlite3_stmt *q;
    long long n = -1;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT count(*) FROM dbstat"
                                        " WHERE name = ?",
                                        -1, &q, NULL),
                     SQLITE_OK);
    sqlite3_bind_text(q, 1, name, -1, SQLITE_STATIC);
    if (sqlite3_step(q) == SQLITE_ROW)
        n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(db);
    return n;
}

/* A digest whose bytes come from a seeded xorshift64: random keys. */
static void random_digest(uint64_t *x, unsigned char d[20])
{
    for (int i = 0; i < 20; i++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        d[i] = (unsigned char)*x;
    }
}

/*
 * The payload rows are a log (state.c, PAYLOADS): a state made before it
 * (its table payloads keyed by the digest, WITHOUT ROWID) is opened with
 * its rows moved into payload_log and the old table dropped; a put of a
 * digest already there (an entry that gained its record) appends a row,
 * and the last row of a digest is the entry read back.
 */
static void test_payload_log_moved(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    state_db_exec(d, "DROP TABLE payload_log;"
                     "CREATE TABLE payloads(digest BLOB PRIMARY KEY,"
                     " url TEXT NOT NULL, record_id TEXT NOT NULL,"
                     " date INTEGER NOT NULL) WITHOUT ROWID;"
                     "INSERT INTO payloads VALUES"
                     "(zeroblob(20), 'http://a.test/0', '', 10),"
                     "(x'ffffffffffffffffffffffffffffffffffffffff',"
                     " 'http://a.test/f', '<urn:uuid:f>', 20)");

    s = open_ok(d);
    f = frontier_of(s);
    struct digest_rows o = digest_rows_of(s);
    assert_int_equal(o.n, 2);
    unsigned char zero[20] = {0};
    assert_memory_equal(o.digest[0], zero, 20);
    assert_string_equal(o.url[0], "http://a.test/0");
    assert_string_equal(o.id[0], "");
    assert_int_equal(o.date[0], 10);
    assert_string_equal(o.url[1], "http://a.test/f");
    assert_string_equal(o.id[1], "<urn:uuid:f>");
    assert_int_equal(o.date[1], 20);
    /* The zero digest's entry gains its record: a second row, read. */
    struct bc_crawl_state_payload row = {zero, "http://a.test/0", 15,
                                         "<urn:uuid:0>", 30};
    assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    char p[400];
    snprintf(p, sizeof(p), "%s/crawl.db", d);
    assert_int_equal(table_pages(p, "payloads"), 0); /* dropped */

    s = open_ok(d);
    f = frontier_of(s);
    o = digest_rows_of(s);
    assert_int_equal(o.rows, 3); /* the log: the zero digest twice */
    assert_int_equal(o.n, 2);
    assert_string_equal(o.url[0], "http://a.test/0");
    assert_string_equal(o.id[0], "<urn:uuid:0>");
    assert_int_equal(o.date[0], 30);
    assert_string_equal(o.id[1], "<urn:uuid:f>");

    /* Appended: 2,000 rows of random digests (12 pages of rows), then the
     * WAL emptied (the test's checkpoint) and a snapshot (its commit
     * writes one frame). A commit of 20 more rows adds their page of the log,
     * perhaps the next one and the B-tree's interior page, and meta's and
     * counters' pages: at most 5 frames of 8,192 + 24 bytes. Keyed by the
     * digest (before), the 20 rows fell on most of the 12 leaves. */
    uint64_t x = 88172645463325252u;
    unsigned char dg[20];
    for (int i = 0; i < 2020; i++) {
        if (i == 2000) {
            state_wal_empty(d);
            assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
            assert_int_equal(file_size(d, "crawl.db-wal"), 32 + 8192 + 24);
        }
        random_digest(&x, dg);
        row = (struct bc_crawl_state_payload){dg, "http://a.test/p", 15, "", i};
        assert_int_equal(bc_crawl_state_payload_put(s, &row), BC_OK);
        if (i % 20 == 19)
            assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    }
    long long frames = (file_size(d, "crawl.db-wal") - 32) / (8192 + 24) - 1;
    assert_true(frames >= 2 && frames <= 5);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    /* 2,022 rows of about 48 bytes (with their cell pointers): 12 full
     * leaves of 8 KiB (SQLite splits an appended B-tree at its last row)
     * and the interior page. */
    long long pages = table_pages(p, "payload_log");
    assert_true(pages >= 12 && pages <= 14);
}

/* A module's stats and its table of totals, for save_totals. */
struct two_totals {
    uint64_t pages, bytes;
};
static const struct bc_counter two_totals_table[] = {
    BC_COUNTER_ROW(struct two_totals, pages, "pages", TOTAL, U64, "pages",
                   "pages done"),
    BC_COUNTER_ROW(struct two_totals, bytes, "bytes", TOTAL, U64, "bytes",
                   "bytes read"),
};

/* A table of totals saved at every commit (state.c, struct totals: its
 * counters found by key at the first call, compared in place after it):
 * the values of each commit are durable, a value that did not change is
 * kept, and a second group with the same table has counters of its own. */
static void test_totals_saved(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    struct two_totals t = {1, 100}, u = {7, 700};
    for (int i = 0; i < 3; i++) {
        t.pages += (uint64_t)i; /* 1, 2, 4 */
        if (i == 2)
            t.bytes = 300; /* 100, 100, 300 */
        assert_int_equal(
            bc_crawl_state_save_totals(s, "mod", two_totals_table, 2, &t),
            BC_OK);
        assert_int_equal(
            bc_crawl_state_save_totals(s, "other", two_totals_table, 2, &u),
            BC_OK);
        assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
        assert_int_equal(bc_crawl_state_counter_get(s, "mod.pages"), t.pages);
    }
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(d);
    struct two_totals back = {0, 0};
    bc_crawl_state_load_totals(s, "mod", two_totals_table, 2, &back);
    assert_int_equal(back.pages, 4);
    assert_int_equal(back.bytes, 300);
    bc_crawl_state_load_totals(s, "other", two_totals_table, 2, &back);
    assert_int_equal(back.pages, 7);
    assert_int_equal(back.bytes, 700);
    bc_crawl_state_close(s);
}

/* A validators row, copied (CONDITIONAL RECRAWLS, crawler.c). */
struct validators_row {
    char etag[64], lm[64], id[64], uri[64];
    int64_t date;
};

static enum bc_status validators_row(void *ctx,
                                     const struct bc_crawl_state_validators *v)
{
    struct validators_row *o = ctx;
    assert_true(strlen(v->etag) < 64 && strlen(v->last_modified) < 64 &&
                strlen(v->record_id) < 64 && strlen(v->record_uri) < 64);
    strcpy(o->etag, v->etag);
    strcpy(o->lm, v->last_modified);
    strcpy(o->id, v->record_id);
    strcpy(o->uri, v->record_uri);
    o->date = v->date;
    return BC_OK;
}

/* A validators row is durable with the commit of its turn, like the page
 * it came with: one committed comes back after a reopen, one written
 * after the last commit (a kill) does not; a find sees the open
 * transaction's rows, a put replaces the URL's row; a URL without a row
 * is BC_ERR_NOT_FOUND. A state made before the table existed gains it,
 * empty, when opened. */
static void test_validators(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    struct validators_row o;
    struct bc_crawl_state_validators v = {
        "http://a.test/x", 15, "\"v1\"", "", "", "http://a.test/x", 1700};
    assert_int_equal(bc_crawl_state_validators_put(s, &v), BC_OK);
    memset(&o, 0, sizeof(o));
    assert_int_equal(bc_crawl_state_validators_find(s, "http://a.test/x", 15,
                                                    validators_row, &o),
                     BC_OK);
    assert_string_equal(o.etag, "\"v1\"");
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    v = (struct bc_crawl_state_validators){"http://a.test/x",
                                           15,
                                           "\"v2\"",
                                           "Mon, 07 Nov 1994 08:49:37 GMT",
                                           "<urn:uuid:1>",
                                           "http://a.test/z",
                                           1800};
    assert_int_equal(bc_crawl_state_validators_put(s, &v), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    v = (struct bc_crawl_state_validators){
        "http://a.test/y", 15, "\"y\"", "", "", "http://a.test/y", 1900};
    assert_int_equal(bc_crawl_state_validators_put(s, &v), BC_OK);
    v.etag = NULL;
    assert_int_equal(bc_crawl_state_validators_put(s, &v), BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_crawl_state_validators_find(s, "http://a.test/x", 15, NULL, NULL),
        BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* y's row never committed: a kill */

    s = open_ok(d);
    f = frontier_of(s);
    memset(&o, 0, sizeof(o));
    assert_int_equal(bc_crawl_state_validators_find(s, "http://a.test/x", 15,
                                                    validators_row, &o),
                     BC_OK);
    assert_string_equal(o.etag, "\"v2\"");
    assert_string_equal(o.lm, "Mon, 07 Nov 1994 08:49:37 GMT");
    assert_string_equal(o.id, "<urn:uuid:1>");
    assert_string_equal(o.uri, "http://a.test/z");
    assert_int_equal(o.date, 1800);
    assert_int_equal(bc_crawl_state_validators_find(s, "http://a.test/y", 15,
                                                    validators_row, &o),
                     BC_ERR_NOT_FOUND);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* A state of a build before the table: made when opened. */
    state_db_exec(d, "DROP TABLE validators");
    s = open_ok(d);
    f = frontier_of(s);
    assert_int_equal(bc_crawl_state_validators_find(s, "http://a.test/x", 15,
                                                    validators_row, &o),
                     BC_ERR_NOT_FOUND);
    v = (struct bc_crawl_state_validators){
        "http://a.test/y", 15, "\"y\"", "", "", "http://a.test/y", 1900};
    assert_int_equal(bc_crawl_state_validators_put(s, &v), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_validators_find(s, "http://a.test/y", 15,
                                                    validators_row, &o),
                     BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* The fetched table (crawler.c, LASTMOD): a row durable with its commit
 * only, a find that sees the open transaction, a put that replaces, an
 * older state that gains the table. */
static void test_fetched_rows(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    int64_t t = 42;
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/x", 15, &t),
                     BC_ERR_NOT_FOUND);
    assert_int_equal(t, 42);
    assert_int_equal(bc_crawl_state_fetched_put(s, "http://a.test/x", 15, 1700),
                     BC_OK);
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/x", 15, &t),
                     BC_OK);
    assert_int_equal(t, 1700);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_fetched_put(s, "http://a.test/x", 15, 1800),
                     BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* A prefix of x's URL is a key of its own. */
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/", 14, &t),
                     BC_ERR_NOT_FOUND);
    assert_int_equal(bc_crawl_state_fetched_put(s, "http://a.test/y", 15, 1900),
                     BC_OK);
    assert_int_equal(bc_crawl_state_fetched_put(s, NULL, 0, 1),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_crawl_state_fetched_find(s, "http://a.test/x", 15, NULL),
        BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* y's row never committed: a kill */

    s = open_ok(d);
    f = frontier_of(s);
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/x", 15, &t),
                     BC_OK);
    assert_int_equal(t, 1800);
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/y", 15, &t),
                     BC_ERR_NOT_FOUND);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* A state of a build before the table: made when opened. */
    state_db_exec(d, "DROP TABLE fetched");
    s = open_ok(d);
    f = frontier_of(s);
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/x", 15, &t),
                     BC_ERR_NOT_FOUND);
    assert_int_equal(bc_crawl_state_fetched_put(s, "http://a.test/x", 15, 2000),
                     BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_fetched_find(s, "http://a.test/x", 15, &t),
                     BC_OK);
    assert_int_equal(t, 2000);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* The fingerprints table's rows, copied (NEAR-DUPLICATES, crawler.c). */
struct fp_rows {
    size_t n;
    uint64_t fp[8];
    char url[8][64];
};

static enum bc_status fp_row(void *ctx,
                             const struct bc_crawl_state_fingerprint *f)
{
    struct fp_rows *o = ctx;
    assert_true(o->n < 8 && f->url_len < 64);
    size_t i = o->n++;
    o->fp[i] = f->fp;
    memcpy(o->url[i], f->url, f->url_len);
    o->url[i][f->url_len] = '\0';
    return BC_OK;
}

static struct fp_rows fp_rows_of(struct bc_crawl_state *s)
{
    struct fp_rows o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(bc_crawl_state_fingerprints(s, fp_row, &o), BC_OK);
    return o;
}

/* A fingerprint row is durable with the commit of its turn: rows
 * committed come back after a reopen in the order they were put, every
 * bit of the 64 kept (the top bit set: SQLite's integers are signed); one
 * written after the last commit (a kill) does not. A state made before
 * the table existed gains it, empty, when opened. */
static void test_fingerprint_rows(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    const uint64_t a = UINT64_C(0xfedcba9876543210), b = 1, c = UINT64_MAX;
    struct bc_crawl_state_fingerprint row = {a, "http://a.test/x", 15};
    assert_int_equal(bc_crawl_state_fingerprint_put(s, &row), BC_OK);
    row = (struct bc_crawl_state_fingerprint){b, "http://a.test/y", 15};
    assert_int_equal(bc_crawl_state_fingerprint_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    row = (struct bc_crawl_state_fingerprint){c, "http://a.test/z", 15};
    assert_int_equal(bc_crawl_state_fingerprint_put(s, &row), BC_OK);
    row.url = NULL;
    assert_int_equal(bc_crawl_state_fingerprint_put(s, &row),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_fingerprints(s, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* c's row never committed: a kill */

    s = open_ok(d);
    f = frontier_of(s);
    struct fp_rows o = fp_rows_of(s);
    assert_int_equal(o.n, 2);
    assert_true(o.fp[0] == a && o.fp[1] == b);
    assert_string_equal(o.url[0], "http://a.test/x");
    assert_string_equal(o.url[1], "http://a.test/y");
    row = (struct bc_crawl_state_fingerprint){c, "http://a.test/z", 15};
    assert_int_equal(bc_crawl_state_fingerprint_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    o = fp_rows_of(s);
    assert_true(o.n == 3 && o.fp[2] == c);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* A state of a build before the table: made when opened. */
    state_db_exec(d, "DROP TABLE fingerprints");
    s = open_ok(d);
    f = frontier_of(s);
    assert_int_equal(fp_rows_of(s).n, 0);
    row = (struct bc_crawl_state_fingerprint){a, "http://a.test/x", 15};
    assert_int_equal(bc_crawl_state_fingerprint_put(s, &row), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(fp_rows_of(s).n, 1);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* Hold a shared flock on DIR/lock in a child for ms milliseconds (as
 * bc_crawl_state_peek()'s probe does for microseconds); returns the child
 * once it holds it. */
static pid_t hold_shared_lock(const char *d, int ms)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char p[400];
        snprintf(p, sizeof(p), "%s/lock", d);
        int fd = open(p, O_RDONLY);
        if (fd < 0 || flock(fd, LOCK_SH) != 0)
            _exit(1);
        (void)!write(fds[1], "x", 1);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        _exit(0);
    }
    close(fds[1]);
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1);
    close(fds[0]);
    return pid;
}

/*
 * bc_crawl_state_peek(): a state seen from outside, the crawl holding it
 * (a child, killed -9 at the end) or not; the numbers of the last commit,
 * read-only; the lock probed, not taken; and a crawl opening the state
 * while a probe holds its shared lock waits it out instead of being
 * refused (before take_lock()'s retries: BC_ERR_LOCKED).
 */
static void test_peek(void **state)
{
    (void)state;
    struct bc_crawl_state_summary m;
    struct bc_crawl_state_error err;
    const char *d = new_dir();
    assert_int_equal(bc_crawl_state_peek(d, &m, &err), BC_ERR_NOT_FOUND);
    assert_int_equal(mkdir(d, 0700), 0);
    assert_int_equal(bc_crawl_state_peek(d, &m, &err), BC_ERR_FORMAT);
    assert_int_equal(bc_crawl_state_peek(NULL, &m, &err), BC_ERR_INVALID_ARG);
    assert_int_equal(rmdir(d), 0);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t before = (uint64_t)ts.tv_sec * 1000u - 1000u;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the crawl: 5 URLs of 2 hosts, 1 done, 1 in flight */
        struct bc_crawl_state *s = NULL;
        struct bc_frontier_config c = config();
        struct bc_frontier *f = NULL;
        if (bc_crawl_state_open(d, fixed, NFIXED, &s, NULL) != BC_OK ||
            bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
            _exit(10);
        const char *urls[] = {"http://a.test/1", "http://a.test/2",
                              "http://a.test/3", "http://b.test/1",
                              "http://b.test/2"};
        for (int i = 0; i < 5; i++) {
            enum bc_frontier_reason r;
            if (bc_frontier_add(f, urls[i], strlen(urls[i]), NULL, 0, 1, &r,
                                NULL) != BC_OK)
                _exit(11);
        }
        struct bc_frontier_job j;
        struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
        if (bc_frontier_next(f, 0, &j) != BC_OK ||
            bc_frontier_done(f, &j, &o, 0) != BC_OK ||
            bc_crawl_state_page_done(s, j.id) != BC_OK ||
            bc_frontier_next(f, 0, &j) != BC_OK)
            _exit(12);
        if (bc_crawl_state_counter_set(s, "crawler.pages", 7) != BC_OK ||
            bc_crawl_state_counter_set(s, "crawler.errors.timeout", 2) !=
                BC_OK ||
            bc_crawl_state_counter_set(s, "crawler.errors.dns", 1) != BC_OK ||
            bc_crawl_state_counter_set(s, "crawler.bytes", 99) != BC_OK ||
            bc_crawl_state_commit(s, f) != BC_OK)
            _exit(13);
        (void)!write(fds[1], "x", 1);
        pause(); /* until the parent kills it */
        _exit(14);
    }
    close(fds[1]);
    char ch;
    assert_int_equal(read(fds[0], &ch, 1), 1);
    close(fds[0]);

    for (int pass = 0; pass < 2; pass++) {
        memset(&m, 0xff, sizeof(m));
        enum bc_status st = bc_crawl_state_peek(d, &m, &err);
        if (st != BC_OK)
            print_error("peek: %s: %s\n", bc_strerror(st), err.text);
        assert_int_equal(st, BC_OK);
        assert_int_equal(m.running, pass == 0);
        assert_int_equal(m.pid, pass == 0 ? (long)pid : 0);
        assert_int_equal(m.runs, 1);
        assert_int_equal(m.pages, 7);
        assert_int_equal(m.errors, 3); /* crawler.errors.*, not bytes */
        assert_int_equal(m.given_up, 0);
        assert_int_equal(m.admitted, 5);
        assert_int_equal(m.queued, 3);
        assert_int_equal(m.in_flight, 1);
        assert_int_equal(m.hosts, 2);
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t after = (uint64_t)ts.tv_sec * 1000u + 1000u;
        assert_true(m.created_ms >= before && m.created_ms <= after);
        assert_true(m.committed_ms >= m.created_ms && m.committed_ms <= after);
        if (pass == 0) { /* the crawl killed: its lock goes with it */
            int status;
            kill(pid, SIGKILL);
            assert_int_equal(waitpid(pid, &status, 0), pid);
        }
    }

    /* The resume counts the URL in flight at the kill as queued again:
     * what peek() called queued + in flight. */
    struct bc_crawl_state *s = open_ok(d);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.queued + info.refetched_now, 4);
    bc_crawl_state_close(s);

    /* A probe's shared lock (30 ms here) is waited for; a lock held
     * longer than the retries (take_lock(): 100 ms) is a crawl's. */
    pid_t holder = hold_shared_lock(d, 30);
    s = open_ok(d);
    bc_crawl_state_close(s);
    int status;
    assert_int_equal(waitpid(holder, &status, 0), holder);
    holder = hold_shared_lock(d, 1000);
    struct bc_crawl_state *s2 = NULL;
    assert_int_equal(bc_crawl_state_open(d, fixed, NFIXED, &s2, &err),
                     BC_ERR_LOCKED);
    assert_int_equal(waitpid(holder, &status, 0), holder);
}

static void test_not_a_state(void **state)
{
    (void)state;
    struct bc_crawl_state_error err;
    char p[400];
    /* A directory with other files. */
    const char *d = new_dir();
    assert_int_equal(mkdir(d, 0700), 0);
    snprintf(p, sizeof(p), "%s/notes.txt", d);
    write_file(p, "mine\n");
    assert_int_equal(open_err(d, &err), BC_ERR_FORMAT);
    assert_non_null(strstr(err.text, "not a crawl state"));
    assert_false(exists(d, "lock"));
    assert_false(exists(d, "crawl.db"));
    /* A file. */
    assert_int_equal(open_err(p, &err), BC_ERR_FORMAT);
    /* An empty directory is adopted. */
    d = new_dir();
    assert_int_equal(mkdir(d, 0700), 0);
    assert_int_equal(open_err(d, &err), BC_OK);
    /* Another SQLite database named crawl.db. */
    d = new_dir();
    assert_int_equal(mkdir(d, 0700), 0);
    state_db_exec(d, "CREATE TABLE t(x)");
    assert_int_equal(open_err(d, &err), BC_ERR_FORMAT);
    assert_false(exists(d, "lock")); /* left exactly as it was */
    /* A text file named crawl.db. */
    snprintf(p, sizeof(p), "%s/crawl.db", d);
    write_file(p, "hello, I am not a database, but long enough to look at\n");
    assert_int_equal(open_err(d, &err), BC_ERR_FORMAT);
    /* Another format version. */
    d = new_dir();
    bc_crawl_state_close(open_ok(d));
    state_db_exec(d, "PRAGMA user_version = 99");
    assert_int_equal(open_err(d, &err), BC_ERR_VERSION);
    assert_non_null(strstr(err.text, "version 99"));
    /* A state of format version 1 (before referrers and per-host
     * counters): refused, the message says what to do. */
    d = new_dir();
    bc_crawl_state_close(open_ok(d));
    state_db_exec(d, "PRAGMA user_version = 1");
    assert_int_equal(open_err(d, &err), BC_ERR_VERSION);
    assert_non_null(
        strstr(err.text, "version 1, this build reads versions 3 and 4"));
    assert_non_null(strstr(err.text, "start afresh"));
    /* A state of format version 2 (before the outbox): refused, no
     * migration. */
    d = new_dir();
    bc_crawl_state_close(open_ok(d));
    state_db_exec(d, "DROP TABLE outbox; "
                     "PRAGMA user_version = 2");
    assert_int_equal(open_err(d, &err), BC_ERR_VERSION);
    assert_non_null(
        strstr(err.text, "version 2, this build reads versions 3 and 4"));
}

/* The rows bc_crawl_state_outbox_read() gave, copied. */
struct outbox_seen {
    size_t n;
    uint64_t id[16];
    unsigned worker[16], depth[16], redirects[16];
    bool seed[16], has_referrer[16];
    char url[16][64], referrer[16][64];
};

static void outbox_cb(void *ctx, const struct bc_crawl_state_routed *r)
{
    struct outbox_seen *o = ctx;
    assert_true(o->n < 16 && r->url_len < 64 && r->referrer_len < 64);
    size_t i = o->n++;
    o->id[i] = r->id;
    o->worker[i] = r->worker;
    o->depth[i] = r->depth;
    o->redirects[i] = r->redirects;
    o->seed[i] = r->seed;
    memcpy(o->url[i], r->url, r->url_len);
    o->url[i][r->url_len] = '\0';
    o->has_referrer[i] = r->referrer != NULL;
    if (r->referrer)
        memcpy(o->referrer[i], r->referrer, r->referrer_len);
    o->referrer[i][r->referrer_len] = '\0';
}

static struct outbox_seen outbox_all(struct bc_crawl_state *s, uint64_t after,
                                     size_t max)
{
    struct outbox_seen o;
    memset(&o, 0, sizeof(o));
    size_t count = 99;
    assert_int_equal(
        bc_crawl_state_outbox_read(s, after, max, outbox_cb, &o, &count),
        BC_OK);
    assert_int_equal(count, o.n);
    return o;
}

static void outbox_add(struct bc_crawl_state *s, unsigned worker,
                       const char *url, const char *referrer, unsigned depth,
                       unsigned redirects, bool seed)
{
    struct bc_crawl_state_routed r = {
        12345,       worker,    url,
        strlen(url), referrer,  referrer ? strlen(referrer) : 0,
        depth,       redirects, seed};
    assert_int_equal(bc_crawl_state_outbox_add(s, &r), BC_OK);
}

/* The outbox: rows added in the open transaction (pending), read in id
 * order after an id and up to a count, removed up to an id, counted in
 * O(1); committed rows survive a close and a reopen with their count,
 * uncommitted ones do not; ids are never given twice. */
static void test_outbox(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    assert_false(bc_crawl_state_pending(s));
    assert_int_equal(bc_crawl_state_outbox_count(s), 0);
    assert_int_equal(bc_crawl_state_outbox_count(NULL), 0);
    outbox_add(s, 2, "http://b.test/x", "http://a.test/", 3, 0, false);
    assert_true(bc_crawl_state_pending(s));
    outbox_add(s, 1, "http://c.test/", NULL, 0, 0, true);
    outbox_add(s, 2, "http://b.test/moved", "http://a.test/r", 1, 2, false);
    assert_int_equal(bc_crawl_state_outbox_count(s), 3);

    struct outbox_seen o = outbox_all(s, 0, 100);
    assert_int_equal(o.n, 3);
    assert_true(o.id[0] > 0 && o.id[0] < o.id[1] && o.id[1] < o.id[2]);
    assert_int_equal(o.worker[0], 2);
    assert_string_equal(o.url[0], "http://b.test/x");
    assert_true(o.has_referrer[0]);
    assert_string_equal(o.referrer[0], "http://a.test/");
    assert_int_equal(o.depth[0], 3);
    assert_false(o.seed[0]);
    assert_int_equal(o.worker[1], 1);
    assert_false(o.has_referrer[1]);
    assert_true(o.seed[1]);
    assert_int_equal(o.redirects[2], 2);
    assert_int_equal(o.depth[2], 1);
    /* After an id, and at most max rows. */
    struct outbox_seen o2 = outbox_all(s, o.id[0], 1);
    assert_int_equal(o2.n, 1);
    assert_int_equal(o2.id[0], o.id[1]);
    assert_int_equal(outbox_all(s, o.id[2], 100).n, 0);
    assert_int_equal(outbox_all(s, 0, 0).n, 0);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);

    /* Removed up to an id, in the open transaction. */
    assert_int_equal(bc_crawl_state_outbox_remove(s, o.id[0]), BC_OK);
    assert_true(bc_crawl_state_pending(s));
    assert_int_equal(bc_crawl_state_outbox_count(s), 2);
    assert_int_equal(outbox_all(s, 0, 100).n, 2);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* Added and not committed: lost at the close. */
    outbox_add(s, 0, "http://lost.test/", NULL, 1, 0, false);
    assert_int_equal(bc_crawl_state_outbox_count(s), 3);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    s = open_ok(d);
    assert_int_equal(bc_crawl_state_outbox_count(s), 2); /* restored */
    f = frontier_of(s);
    o2 = outbox_all(s, 0, 100);
    assert_int_equal(o2.n, 2);
    assert_int_equal(o2.id[0], o.id[1]);
    assert_string_equal(o2.url[0], "http://c.test/");
    assert_string_equal(o2.url[1], "http://b.test/moved");
    assert_string_equal(o2.referrer[1], "http://a.test/r");
    /* All removed: the next row still gets a larger id. */
    assert_int_equal(bc_crawl_state_outbox_remove(s, o.id[2]), BC_OK);
    assert_int_equal(bc_crawl_state_outbox_count(s), 0);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    outbox_add(s, 0, "http://d.test/", NULL, 1, 0, false);
    o2 = outbox_all(s, o.id[2], 100);
    assert_int_equal(o2.n, 1);
    assert_true(o2.id[0] > o.id[2]);
    /* Removing nothing is no error; the count stays. */
    assert_int_equal(bc_crawl_state_outbox_remove(s, 0), BC_OK);
    assert_int_equal(bc_crawl_state_outbox_count(s), 1);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);

    /* Bad arguments. */
    struct bc_crawl_state_routed bad = {0, 0, NULL, 0, NULL, 0, 0, 0, false};
    assert_int_equal(bc_crawl_state_outbox_add(s, &bad), BC_ERR_INVALID_ARG);
    bad.url = "http://e.test/";
    bad.url_len = strlen(bad.url);
    bad.referrer_len = 3;
    assert_int_equal(bc_crawl_state_outbox_add(s, &bad), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_outbox_add(NULL, &bad), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_outbox_add(s, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_outbox_read(s, 0, 1, NULL, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_crawl_state_outbox_read(NULL, 0, 1, outbox_cb, NULL, NULL),
        BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_outbox_remove(NULL, 1), BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_outbox_count(s), 1);
    bc_crawl_state_close(s);
}

struct stats_seen {
    int count;
    char origin[64];
    char data[64];
    size_t n;
};

static void stats_cb(void *ctx, const char *origin, size_t len,
                     const void *data, size_t n)
{
    struct stats_seen *ss = ctx;
    ss->count++;
    assert_true(len < sizeof(ss->origin) && n <= sizeof(ss->data));
    memcpy(ss->origin, origin, len);
    ss->origin[len] = '\0';
    memcpy(ss->data, data, n);
    ss->n = n;
}

/* The referrer of a queued URL survives a resume (urls.referrer, given
 * back by the refill), and so do the per-host records, committed ones
 * only. */
static void test_referrer_and_host_stats(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 2);
    struct bc_frontier_job j = fetch(f);
    assert_string_equal(j.url, "http://a.test/page/0");
    assert_null(j.referrer);
    char url[64];
    for (int i = 0; i < 10; i++) {
        enum bc_frontier_reason r;
        snprintf(url, sizeof(url), "/from0/%d", i);
        assert_int_equal(bc_frontier_add_link(f, &j, url, strlen(url), j.url,
                                              j.url_len, &r, NULL),
                         BC_OK);
        assert_int_equal(r, BC_ADMIT_QUEUED);
    }
    done(s, f, &j);
    assert_int_equal(
        bc_crawl_state_host_stats_set(s, "http://a.test", 13, "v1", 2), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* Not committed: lost with the kill. */
    assert_int_equal(
        bc_crawl_state_host_stats_set(s, "http://a.test", 13, "v2!", 3), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    s = open_ok(d);
    struct stats_seen ss = {0};
    assert_int_equal(bc_crawl_state_host_stats(s, stats_cb, &ss), BC_OK);
    assert_int_equal(ss.count, 1);
    assert_string_equal(ss.origin, "http://a.test");
    assert_int_equal(ss.n, 2);
    assert_memory_equal(ss.data, "v1", 2);
    f = frontier_of(s); /* window 4: most links come back by refills */
    j = fetch(f);
    assert_string_equal(j.url, "http://a.test/page/1");
    assert_null(j.referrer);
    done(s, f, &j);
    for (int i = 0; i < 10; i++) {
        j = fetch(f);
        snprintf(url, sizeof(url), "http://a.test/from0/%d", i);
        assert_string_equal(j.url, url);
        assert_non_null(j.referrer);
        assert_string_equal(j.referrer, "http://a.test/page/0");
        assert_int_equal(j.referrer_len, strlen("http://a.test/page/0"));
        done(s, f, &j);
    }
    assert_int_equal(bc_crawl_state_host_stats(NULL, stats_cb, &ss),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_host_stats_set(NULL, "x", 1, "", 0),
                     BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* A state with a few hundred URLs over several pages of the database,
 * closed cleanly (the WAL checkpointed into crawl.db), with a snapshot. */
static const char *make_state(void)
{
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 300);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    return d;
}

static void flip(const char *path, long offset)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, offset), 1);
    c ^= 0xff;
    assert_int_equal(pwrite(fd, &c, 1, offset), 1);
    close(fd);
}

/* The page size of an SQLite database (its header, bytes 16-17). */
static long page_size(const char *path)
{
    unsigned char h[18];
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    assert_int_equal(fread(h, 1, sizeof(h), fp), sizeof(h));
    fclose(fp);
    long n = (long)h[16] << 8 | h[17];
    return n == 1 ? 65536 : n;
}

/*
 * A --state directory the user cannot read (issue 21: "not a crawl state
 * (no crawl.db in a directory that is not empty)", and "cannot create"
 * where nothing was being created): the error names the file (err.text
 * leaves out the directory, which the caller prints) and says why. Root reads everything, so the test
 * drops to nobody (uid 65534) in a child, as a user whose state another
 * user made; and a path through a regular file (ENOTDIR) that no one can
 * open.
 */
static int open_as_nobody(const char *d, const char *want1, const char *want2)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(77);
        struct bc_crawl_state *s = NULL;
        struct bc_crawl_state_error err;
        enum bc_status st = bc_crawl_state_open(d, fixed, NFIXED, &s, &err);
        if (write(fds[1], err.text, strlen(err.text)) < 0)
            _exit(3);
        bc_crawl_state_close(s);
        _exit(st == BC_ERR_IO ? 0 : 1);
    }
    close(fds[1]);
    char text[512] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(text) - 1 &&
           (n = read(fds[0], text + got, sizeof(text) - 1 - got)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        return 77; /* cannot drop privileges here */
    print_message("as nobody: %s: \"%s\"\n", d, text);
    assert_int_equal(WEXITSTATUS(status), 0); /* BC_ERR_IO */
    assert_non_null(strstr(text, want1));
    assert_non_null(strstr(text, want2));
    assert_null(strstr(text, "not a crawl state"));
    assert_null(strstr(text, "cannot create"));
    return 0;
}

static void test_unreadable(void **state)
{
    (void)state;
    struct bc_crawl_state_error err;
    char p[400], q[450];
    /* Through a regular file: ENOTDIR, nothing created, none claimed. */
    const char *d = new_dir();
    assert_int_equal(mkdir(d, 0700), 0);
    snprintf(p, sizeof(p), "%s/file", d);
    write_file(p, "x\n");
    snprintf(q, sizeof(q), "%s/state", p);
    assert_int_equal(open_err(q, &err), BC_ERR_IO);
    assert_string_equal(err.text,
                        "cannot access the directory: Not a directory");
    /* A missing parent: that is a creation that failed. */
    snprintf(q, sizeof(q), "%s/missing/state", d);
    assert_int_equal(open_err(q, &err), BC_ERR_IO);
    assert_string_equal(
        err.text, "cannot create the directory: No such file or directory");

    /* A state of root's (0700) that nobody opens: permission denied on
     * crawl.db, named; and an empty directory of root's likewise on the
     * directory. The way down to them must be open to nobody. */
    assert_int_equal(chmod(base, 0711), 0);
    d = new_dir();
    bc_crawl_state_close(open_ok(d));
    int rc = open_as_nobody(d, "crawl.db", strerror(EACCES));
    if (rc == 0) {
        d = new_dir();
        assert_int_equal(mkdir(d, 0700), 0);
        assert_int_equal(open_as_nobody(d, "crawl.db", strerror(EACCES)), 0);
    }
    assert_int_equal(chmod(base, 0700), 0);
    if (rc == 77)
        skip();
}

static void test_damaged(void **state)
{
    (void)state;
    struct bc_crawl_state_error err;
    char p[400];
    /* Truncated database. crawl.db as a checkpoint leaves it (the close
     * leaves the WAL, whose pages are read before crawl.db's: damage to
     * crawl.db's copy of one of them is not damage; THE END OF A CRAWL). */
    const char *d = make_state();
    state_wal_empty(d);
    snprintf(p, sizeof(p), "%s/crawl.db", d);
    struct stat sb;
    assert_int_equal(stat(p, &sb), 0);
    assert_true(sb.st_size > 4 * page_size(p));
    assert_int_equal(truncate(p, sb.st_size / 2), 0);
    enum bc_status st = open_err(d, &err);
    assert_true(st == BC_ERR_CORRUPT);
    assert_non_null(strstr(err.text, "damaged"));
    /* A b-tree page's header byte flipped. */
    d = make_state();
    state_wal_empty(d);
    snprintf(p, sizeof(p), "%s/crawl.db", d);
    flip(p, 3 * page_size(p)); /* the page type byte of page 4 */
    assert_int_equal(open_err(d, &err), BC_ERR_CORRUPT);
    /* The database's header flipped. */
    d = make_state();
    state_wal_empty(d);
    snprintf(p, sizeof(p), "%s/crawl.db", d);
    flip(p, 0);
    st = open_err(d, &err);
    assert_true(st == BC_ERR_FORMAT || st == BC_ERR_CORRUPT);
    /* A byte of the snapshot flipped: refused by its checksum. */
    d = make_state();
    snprintf(p, sizeof(p), "%s/bloom.snap", d);
    assert_int_equal(stat(p, &sb), 0);
    flip(p, (long)sb.st_size / 2);
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier_config c = config();
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_ERR_CHECKSUM);
    assert_null(f);
    assert_non_null(strstr(bc_crawl_state_errmsg(s), "bloom.snap"));
    bc_crawl_state_close(s);
    /* The snapshot truncated, then removed. */
    assert_int_equal(truncate(p, sb.st_size / 3), 0);
    s = open_ok(d);
    assert_int_not_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    bc_crawl_state_close(s);
    assert_int_equal(unlink(p), 0);
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_ERR_CORRUPT);
    assert_non_null(strstr(bc_crawl_state_errmsg(s), "missing"));
    bc_crawl_state_close(s);
}

/* A write error (the file-size limit of a child process) fails the
 * commit with BC_ERR_IO; the state then resumes from its last commit. */
static void test_write_error(void **state)
{
    (void)state;
    const char *d = make_state();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct bc_crawl_state *s = NULL;
        if (bc_crawl_state_open(d, fixed, NFIXED, &s, NULL) != BC_OK)
            _exit(10);
        struct bc_frontier_config c = config();
        struct bc_frontier *f = NULL;
        if (bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
            _exit(11);
        struct rlimit rl = {64 * 1024, 64 * 1024}; /* the WAL's limit */
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(12);
        char url[1200];
        memset(url, 'x', sizeof(url));
        enum bc_status st = BC_OK;
        for (int i = 0; i < 2000 && st == BC_OK; i++) {
            int n = snprintf(url, sizeof(url), "http://w.test/%d/", i);
            url[n] = 'x'; /* a long URL: ~1 KiB per row */
            enum bc_frontier_reason r;
            st = bc_frontier_add(f, url, 1000, NULL, 0, 1, &r, NULL);
            if (st == BC_OK && i % 10 == 9)
                st = bc_crawl_state_commit(s, f);
        }
        int code = st == BC_ERR_IO ? 0 : 13;
        if (code == 0 && strstr(bc_crawl_state_errmsg(s), "crawl.db") == NULL)
            code = 14;
        /* The errno's text, not only SQLite's "disk I/O error". */
        if (code == 0 &&
            strstr(bc_crawl_state_errmsg(s), strerror(EFBIG)) == NULL)
            code = 15;
        bc_frontier_free(f);
        bc_crawl_state_close(s);
        _exit(code);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* Resumes: the 300 URLs, plus whatever the child committed. */
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_true(fs.queued >= 300);
    assert_int_equal(fs.queued % 10, 0); /* whole commits only */
    struct bc_frontier_job j = fetch(f);
    assert_string_equal(j.url, "http://a.test/page/0");
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* A creation that fails half way (the file-size limit) leaves no crawl.db
 * behind: the next open creates the state afresh. */
static void test_create_write_error(void **state)
{
    (void)state;
    const char *d = new_dir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {16 * 1024, 16 * 1024};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(12);
        struct bc_crawl_state *s = NULL;
        struct bc_crawl_state_error err;
        enum bc_status st = bc_crawl_state_open(d, fixed, NFIXED, &s, &err);
        bc_crawl_state_close(s);
        _exit(st == BC_ERR_IO ? 0 : 13);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_false(exists(d, "crawl.db"));
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_false(info.resumed);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* Sitemap jobs survive a kill: one queued (or in flight) at the last
 * commit comes back queued, one done does not come back, and both stay
 * known (to the sitemap set and to the seen-test). */
static void test_sitemap_jobs_survive(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_frontier_config c = config();
    c.sitemaps = true;
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_seed(f, "http://a.test/", 14, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    struct bc_frontier_job j;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/sitemap.xml");
    enum bc_frontier_sitemap_reason why;
    assert_int_equal(bc_frontier_add_sitemap(f, &j, "/s2.xml", 7, &why), BC_OK);
    assert_int_equal(why, BC_FRONTIER_SITEMAP_QUEUED);
    assert_int_equal(bc_frontier_add_from_sitemap(f, &j, "/p1", 3, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_sitemap_done(f, &j, &o, 0), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/s2.xml");
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* Killed with s2.xml in flight. */
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    s = open_ok(d);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/s2.xml");
    assert_string_equal(j.scope, "http://a.test/");
    assert_int_equal(j.level, 1);
    assert_int_equal(bc_frontier_add_sitemap(f, &j, "/sitemap.xml", 12, &why),
                     BC_OK);
    assert_int_equal(why, BC_FRONTIER_SITEMAP_DUPLICATE);
    assert_int_equal(add(f, "http://a.test/sitemap.xml"), BC_ADMIT_DUPLICATE);
    assert_int_equal(bc_frontier_sitemap_done(f, &j, &o, 0), BC_OK);
    struct bc_frontier_stats st;
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 2);
    assert_int_equal(st.sitemap_fetches, 3); /* s2.xml twice */
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* Only before the frontier is made. */
    uint64_t n = 7;
    assert_int_equal(bc_crawl_state_sitemaps_again(s, &n), BC_ERR_INVALID_ARG);
    assert_int_equal(n, 7);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* A recrawl run (bc_crawl_state_sitemaps_again()): both sitemaps,
     * done, are queued again in the order they were first queued, each
     * once however the index lists them; the pages they list are
     * duplicates. */
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_sitemaps_again(s, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_sitemaps_again(s, &n), BC_OK);
    assert_int_equal(n, 2);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/sitemap.xml");
    assert_int_equal(bc_frontier_add_sitemap(f, &j, "/s2.xml", 7, &why), BC_OK);
    assert_int_equal(why, BC_FRONTIER_SITEMAP_DUPLICATE);
    assert_int_equal(bc_frontier_add_from_sitemap(f, &j, "/p1", 3, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_DUPLICATE);
    assert_int_equal(bc_frontier_sitemap_done(f, &j, &o, 0), BC_OK);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/s2.xml");
    assert_int_equal(j.level, 1);
    assert_int_equal(bc_frontier_sitemap_done(f, &j, &o, 0), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 2);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* A sitemap out of retries is kept as given up (done 2) in a state of
 * an earlier build too (its new columns added on open), counted as
 * such on resume and not fetched; --retry-failed queues it again. */
static void test_sitemap_given_up_survives(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_frontier_config c = config();
    c.sitemaps = true;
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 100;
    c.max_retries = 1;
    c.host_failures = 0;
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(add(f, "http://a.test/"), BC_ADMIT_QUEUED);
    struct bc_frontier_outcome o = {500, 5, 0, BC_FAULT_TRANSIENT};
    struct bc_frontier_job j;
    for (unsigned i = 0; i < 2; i++) {
        assert_int_equal(bc_frontier_next(f, 100 * i, &j), BC_OK);
        assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
        assert_int_equal(j.retries, i);
        assert_int_equal(bc_frontier_sitemap_done(f, &j, &o, 100 * i), BC_OK);
        assert_int_equal(j.requeued, i == 0);
        assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    }
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    /* As a state of the build before: without the new columns. */
    state_db_exec(d, "ALTER TABLE sitemaps DROP COLUMN retries;"
                     "ALTER TABLE circuits DROP COLUMN retry_until");

    s = open_ok(d);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    struct bc_frontier_stats st;
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT], 1);
    assert_int_equal(bc_frontier_next(f, 1000, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH); /* not the sitemap */
    assert_string_equal(j.url, "http://a.test/");
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* not committed */

    /* Given up: not read again by a recrawl run (retry-failed's). */
    s = open_ok(d);
    uint64_t n = 1;
    assert_int_equal(bc_crawl_state_sitemaps_again(s, &n), BC_OK);
    assert_int_equal(n, 0);
    assert_int_equal(bc_crawl_state_retry_failed(s, &n), BC_OK);
    assert_int_equal(n, 0); /* URLs: none */
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT], 0);
    assert_int_equal(bc_frontier_next(f, 1000, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/sitemap.xml");
    assert_int_equal(j.retries, 0);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* ---- transient faults ---------------------------------------------------- */

static struct bc_frontier_config fault_config(void)
{
    struct bc_frontier_config c = config();
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 100;
    c.max_retries = 2;
    c.host_failures = 3;
    c.host_backoff_ms = 600000;
    c.host_give_up_ms = 1500;
    return c;
}

/* The next job at now must be a FETCH of url; it fails with a transient
 * fault; a final one is recorded with bc_crawl_state_page_failed(). */
static void fail_at(struct bc_crawl_state *s, struct bc_frontier *f,
                    uint64_t now, const char *url, bool final)
{
    struct bc_frontier_job j;
    assert_int_equal(bc_frontier_next(f, now, &j), BC_OK);
    if (j.action != BC_FRONTIER_FETCH || strcmp(j.url, url) != 0)
        print_error("at %llu: want %s, got %d %s\n", (unsigned long long)now,
                    url, j.action, j.url ? j.url : "-");
    assert_int_equal(j.action, BC_FRONTIER_FETCH);
    assert_string_equal(j.url, url);
    struct bc_frontier_outcome o = {0, 5, 0, BC_FAULT_TRANSIENT}; /* refused */
    assert_int_equal(bc_frontier_done(f, &j, &o, now), BC_OK);
    assert_int_equal(j.requeued, !final);
    if (final)
        assert_int_equal(bc_crawl_state_page_failed(s, j.id), BC_OK);
}

struct host_circuits {
    enum bc_frontier_circuit a, b;
    unsigned a_failures;
    bool c_down;
};

static void host_circuit(void *ctx, const struct bc_frontier_host_info *i)
{
    struct host_circuits *hc = ctx;
    if (strcmp(i->origin, "http://a.test") == 0) {
        hc->a = i->circuit;
        hc->a_failures = i->failures;
    } else if (strcmp(i->origin, "http://b.test") == 0) {
        hc->b = i->circuit;
    } else if (strcmp(i->origin, "http://c.test") == 0) {
        hc->c_down = i->down;
    }
}

/*
 * A crawl killed (SIGKILL) after transient faults loses none of them:
 * the retry counts, each host's circuit (open for the time it had left,
 * its failures), the host given up as down, the URLs given up (retries
 * exhausted, dropped with their host down); bc_crawl_state_retry_failed()
 * then queues those URLs again with their retries reset and lets the host
 * down start again.
 */
static void test_transient_survives_kill(void **state)
{
    (void)state;
    const char *d = new_dir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct bc_crawl_state *s = open_ok(d);
        struct bc_frontier_config c = fault_config();
        struct bc_frontier *f = NULL;
        if (bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
            _exit(10);
        /* a: three faults within 1500 ms: open for 10 min. */
        add(f, "http://a.test/1");
        add(f, "http://a.test/2");
        fail_at(s, f, 0, "http://a.test/1", false);
        fail_at(s, f, 100, "http://a.test/2", false);
        fail_at(s, f, 200, "http://a.test/1", false);
        /* b: its URL's retries exhausted. */
        add(f, "http://b.test/1");
        fail_at(s, f, 300, "http://b.test/1", false);
        fail_at(s, f, 400, "http://b.test/1", false);
        fail_at(s, f, 600, "http://b.test/1", true);
        /* c: failing for 2000 ms: down. */
        add(f, "http://c.test/1");
        add(f, "http://c.test/2");
        fail_at(s, f, 1000, "http://c.test/1", false);
        fail_at(s, f, 1100, "http://c.test/2", false);
        fail_at(s, f, 3000, "http://c.test/1", true);
        struct bc_frontier_job j;
        if (bc_frontier_next(f, 3000, &j) != BC_OK ||
            j.action != BC_FRONTIER_DROP || j.reason != BC_ADMIT_HOST_DOWN)
            _exit(11);
        if (bc_crawl_state_commit(s, f) != BC_OK)
            _exit(12);
        kill(getpid(), SIGKILL);
        _exit(13);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier_config c = fault_config();
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    struct host_circuits hc;
    memset(&hc, 0, sizeof(hc));
    assert_int_equal(bc_frontier_hosts(f, host_circuit, &hc), 3);
    assert_int_equal(hc.a, BC_FRONTIER_CIRCUIT_OPEN);
    assert_int_equal(hc.a_failures, 3);
    assert_int_equal(hc.b, BC_FRONTIER_CIRCUIT_OPEN);
    assert_true(hc.c_down);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_int_equal(fs.retried, 3 + 2 + 2);
    assert_int_equal(fs.retries_exhausted, 1);
    assert_int_equal(fs.hosts_down, 1);
    assert_int_equal(fs.hosts_open, 2);
    /* a: open for what was left of its 10 minutes (the test took less
     * than a minute), then its URLs with their retries. */
    struct bc_frontier_job j;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_WAIT);
    assert_true(j.wait_until_ms > 540000 && j.wait_until_ms <= 600000);
    assert_int_equal(bc_frontier_next(f, 700000, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH);
    assert_string_equal(j.url, "http://a.test/2");
    assert_int_equal(j.retries, 1);
    bc_frontier_free(f);
    bc_crawl_state_close(s); /* not committed */

    /* --retry-failed: b/1 (exhausted), c/1 (final with its host down) and
     * c/2 (dropped) queued again, retries 0; c starts again. */
    s = open_ok(d);
    uint64_t n = 0;
    assert_int_equal(bc_crawl_state_retry_failed(s, &n), BC_OK);
    assert_int_equal(n, 3);
    assert_int_equal(bc_crawl_state_retry_failed(NULL, &n), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(bc_crawl_state_retry_failed(s, &n), BC_ERR_INVALID_ARG);
    memset(&hc, 0, sizeof(hc));
    bc_frontier_hosts(f, host_circuit, &hc);
    assert_false(hc.c_down);
    static const char *const want[] = {"http://c.test/1", "http://c.test/2"};
    for (size_t i = 0; i < 2; i++) {
        j = fetch(f);
        assert_string_equal(j.url, want[i]);
        assert_int_equal(j.retries, 0);
        done(s, f, &j);
    }
    /* b: after its open time (a's URLs too) */
    bool b_seen = false;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(bc_frontier_next(f, 700000 + 1000 * (uint64_t)i, &j),
                         BC_OK);
        if (j.action != BC_FRONTIER_FETCH)
            continue;
        if (strcmp(j.url, "http://b.test/1") == 0) {
            assert_int_equal(j.retries, 0);
            b_seen = true;
        }
        done(s, f, &j);
    }
    assert_true(b_seen);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    /* Done once: nothing left to retry. */
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_retry_failed(s, &n), BC_OK);
    assert_int_equal(n, 0);
    bc_crawl_state_close(s);
}

/*
 * A host given up because its robots.txt stayed unreachable loses no URL
 * for good: the ones queued before the give-up and the ones found after
 * it are all dropped into the failed table (the second kind used to be
 * refused at admission, counted lost but never stored), and
 * bc_crawl_state_retry_failed() queues every one again.
 */
static void test_given_up_retry_failed(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier_config c = config();
    c.obey_robots = true;
    c.sitemaps = false;
    c.robots_retries = 0; /* given up at the first failure */
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(add(f, "http://b.test/1"), BC_ADMIT_QUEUED);
    struct bc_frontier_job j;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
    assert_int_equal(bc_frontier_robots_done(f, &j, 503, NULL, 0, NULL, 0, 0),
                     BC_OK);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_HOST_GIVEN_UP);
    assert_string_equal(j.url, "http://b.test/1");
    /* Found after the give-up (on another host's page): kept too. */
    assert_int_equal(add(f, "http://b.test/2"), BC_ADMIT_QUEUED);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_HOST_GIVEN_UP);
    assert_string_equal(j.url, "http://b.test/2");
    assert_int_equal(add(f, "http://b.test/2"), BC_ADMIT_DUPLICATE);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_DONE);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_int_equal(fs.reasons[BC_ADMIT_HOST_GIVEN_UP], 2);
    assert_int_equal(bc_frontier_given_up_hosts(f, NULL, NULL), 1);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* The failed table holds both, as many as the host lost. */
    char path[400];
    snprintf(path, sizeof(path), "%s/crawl.db", d);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (SELECT count(*) FROM failed),"
                                        " (SELECT given_up_lost FROM hosts"
                                        "  WHERE origin = 'http://b.test')",
                                        -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(q, 0), 2);
    assert_int_equal(sqlite3_column_int64(q, 1), 2);
    sqlite3_finalize(q);
    sqlite3_close(db);

    /* --retry-failed: both queued again; the host starts again with its
     * robots.txt, which answers now. */
    s = open_ok(d);
    uint64_t n = 0;
    assert_int_equal(bc_crawl_state_retry_failed(s, &n), BC_OK);
    assert_int_equal(n, 2);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(bc_frontier_given_up_hosts(f, NULL, NULL), 0);
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
    assert_int_equal(bc_frontier_robots_done(f, &j, 404, NULL, 0, NULL, 0, 0),
                     BC_OK);
    static const char *const want[] = {"http://b.test/1", "http://b.test/2"};
    for (size_t i = 0; i < 2; i++) {
        j = fetch(f);
        assert_string_equal(j.url, want[i]);
        done(s, f, &j);
    }
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_DONE);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* The same for a host given up as down: c/1 final, c/2 queued
     * before, c/3 found after - all three kept. */
    d = new_dir();
    s = open_ok(d);
    c = fault_config();
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    add(f, "http://c.test/1");
    add(f, "http://c.test/2");
    fail_at(s, f, 1000, "http://c.test/1", false);
    fail_at(s, f, 1100, "http://c.test/2", false);
    fail_at(s, f, 3000, "http://c.test/1", true); /* down */
    assert_int_equal(add(f, "http://c.test/3"), BC_ADMIT_QUEUED);
    static const char *const dropped[] = {"http://c.test/2", "http://c.test/3"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(bc_frontier_next(f, 3000, &j), BC_OK);
        assert_int_equal(j.action, BC_FRONTIER_DROP);
        assert_int_equal(j.reason, BC_ADMIT_HOST_DOWN);
        assert_string_equal(j.url, dropped[i]);
    }
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_retry_failed(s, &n), BC_OK);
    assert_int_equal(n, 3);
    bc_crawl_state_close(s);
}

/* The wait before a retry survives kill -9 (circuits.retry_until, wall
 * clock): a URL that got a 503 with Retry-After 5 min (one fault, the
 * circuit still closed) is not fetched at once by the resume, but when
 * what is left of its wait has passed. */
static void test_retry_wait_survives_kill(void **state)
{
    (void)state;
    const char *d = new_dir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct bc_crawl_state *s = open_ok(d);
        struct bc_frontier_config c = fault_config();
        struct bc_frontier *f = NULL;
        if (bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
            _exit(10);
        add(f, "http://d.test/1");
        struct bc_frontier_job j;
        if (bc_frontier_next(f, 0, &j) != BC_OK ||
            j.action != BC_FRONTIER_FETCH)
            _exit(11);
        struct bc_frontier_outcome o = {503, 5, 300000, BC_FAULT_TRANSIENT};
        if (bc_frontier_done(f, &j, &o, 0) != BC_OK || !j.requeued ||
            j.retry_at_ms != 300000)
            _exit(12);
        if (bc_crawl_state_commit(s, f) != BC_OK)
            _exit(13);
        kill(getpid(), SIGKILL);
        _exit(14);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier_config c = fault_config();
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    struct bc_frontier_job j;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
    if (j.action != BC_FRONTIER_WAIT)
        print_error("resume: action %d %s, want a WAIT\n", j.action,
                    j.url ? j.url : "-");
    assert_int_equal(j.action, BC_FRONTIER_WAIT);
    /* What was left of the 5 minutes (the test took less than one). */
    assert_true(j.wait_until_ms > 240000 && j.wait_until_ms <= 300000);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_int_equal(fs.hosts_blocked, 1);
    assert_int_equal(bc_frontier_next(f, 300000, &j), BC_OK);
    assert_int_equal(j.action, BC_FRONTIER_FETCH);
    assert_string_equal(j.url, "http://d.test/1");
    assert_int_equal(j.retries, 1);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* ---- a host's delay override across a kill (issue 22) ----------------- */

/* The delay in force for origin (bc_frontier_host_info.delay_ms). */
struct host_delay {
    const char *origin;
    uint64_t delay_ms;
    bool found;
};

static void host_delay_of(void *ctx, const struct bc_frontier_host_info *i)
{
    struct host_delay *hd = ctx;
    if (strcmp(i->origin, hd->origin) == 0) {
        hd->delay_ms = i->delay_ms;
        hd->found = true;
    }
}

static uint64_t delay_of(struct bc_frontier *f, const char *origin)
{
    struct host_delay hd = {origin, 0, false};
    bc_frontier_hosts(f, host_delay_of, &hd);
    assert_true(hd.found);
    return hd.delay_ms;
}

static struct bc_frontier_config delay_config(void)
{
    struct bc_frontier_config c = config();
    c.min_delay_ms = 100;
    return c;
}

/* A child: the overrides set (a.test 2500 ms, b.test 700 ms then
 * removed) and committed, then killed; c.test's 900 ms set after the
 * commit dies with the process. */
static void delay_child(const char *d)
{
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier_config c = delay_config();
    struct bc_frontier *f = NULL;
    uint64_t eff = 0;
    if (bc_crawl_state_frontier(s, &c, 4, 0, &f) != BC_OK)
        _exit(10);
    add(f, "http://a.test/1");
    add(f, "http://b.test/1");
    add(f, "http://c.test/1");
    if (bc_frontier_set_host_delay(f, "http://a.test", 13, 2500, &eff) !=
            BC_OK ||
        eff != 2500)
        _exit(11);
    if (bc_frontier_set_host_delay(f, "http://b.test", 13, 700, &eff) !=
            BC_OK ||
        bc_frontier_set_host_delay(f, "http://b.test", 13, 0, &eff) != BC_OK ||
        eff != 100)
        _exit(12);
    if (bc_crawl_state_commit(s, f) != BC_OK)
        _exit(13);
    if (bc_frontier_set_host_delay(f, "http://c.test", 13, 900, &eff) != BC_OK)
        _exit(14);
    kill(getpid(), SIGKILL);
    _exit(15);
}

/*
 * POST /hosts/HOST/delay's override survives kill -9 (hosts.delay_override,
 * committed like any change of the turn): a.test comes back at 2500 ms,
 * b.test's removed override at the default, c.test's uncommitted one not
 * at all. A later removal is committed too; and a state of the build
 * before (no column) opens, every host at the default.
 */
static void test_delay_override_survives_kill(void **state)
{
    (void)state;
    const char *d = new_dir();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        delay_child(d);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status))
        print_error("child exit %d\n", WEXITSTATUS(status));
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);

    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier_config c = delay_config();
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(delay_of(f, "http://a.test"), 2500);
    assert_int_equal(delay_of(f, "http://b.test"), 100);
    assert_int_equal(delay_of(f, "http://c.test"), 100);
    /* The override spaces a.test's requests: none before 2500 ms. */
    struct bc_frontier_job j = fetch(f);
    assert_string_equal(j.url, "http://a.test/1");
    add(f, "http://a.test/2");
    done(s, f, &j);
    struct bc_frontier_job k;
    for (;;) {
        assert_int_equal(bc_frontier_next(f, 0, &k), BC_OK);
        if (k.action != BC_FRONTIER_FETCH)
            break;
        assert_string_not_equal(k.url, "http://a.test/2");
        done(s, f, &k);
    }
    assert_int_equal(k.action, BC_FRONTIER_WAIT);
    assert_int_equal(k.wait_until_ms, 2500);
    /* Removed, and that committed: the default after the next resume. */
    uint64_t eff = 0;
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://a.test", 13, 0, &eff), BC_OK);
    assert_int_equal(eff, 100);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(delay_of(f, "http://a.test"), 100);
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://b.test", 13, 3000, &eff), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* As a state of the build before: without the column. */
    state_db_exec(d, "ALTER TABLE hosts DROP COLUMN "
                     "delay_override");
    s = open_ok(d);
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(delay_of(f, "http://b.test"), 100);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* ---- a recrawl window across a kill and a resume (issue 14) ---------- */

static struct bc_frontier *window_frontier(struct bc_crawl_state *s)
{
    struct bc_frontier_config c = config();
    c.seen.kind = BC_SEEN_WINDOW_TIME;
    c.seen.window = 1000; /* ms; G = 4: a key is gone once 1336 ms old */
    struct bc_frontier *f = NULL;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_non_null(bc_seen_window(bc_frontier_seen(f)));
    return f;
}

static void test_window_resume(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = window_frontier(s);
    bc_seen_set_clock(bc_frontier_seen(f), 10000);
    assert_int_equal(add(f, "http://a.test/1"), BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK); /* clock 10000 */
    bc_seen_set_clock(bc_frontier_seen(f), 10900);
    assert_int_equal(add(f, "http://a.test/2"), BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* Killed: a/2 is in the journal after the snapshot, not in it. */
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    /* Resumed at 11800: a/2, admitted 900 ms ago, is inside its window (a
     * replay at the snapshot's clock, 10000, would make it 1800 ms old:
     * gone, a false negative); a/1, 1800 ms old, is past it: admitted
     * again. */
    s = open_ok(d);
    bc_crawl_state_set_seen_clock(s, 11800);
    f = window_frontier(s);
    bc_seen_set_clock(bc_frontier_seen(f), 11800);
    enum bc_frontier_reason r2 = add(f, "http://a.test/2");
    assert_true(r2 == BC_ADMIT_DUPLICATE || r2 == BC_ADMIT_PROBABLY_SEEN);
    assert_int_equal(add(f, "http://a.test/1"), BC_ADMIT_QUEUED);
    /* Still inside at the end of a/2's window, gone after its slack. */
    bc_seen_set_clock(bc_frontier_seen(f), 11800 + 1000);
    r2 = add(f, "http://a.test/2");
    assert_true(r2 == BC_ADMIT_DUPLICATE || r2 == BC_ADMIT_PROBABLY_SEEN);
    bc_seen_set_clock(bc_frontier_seen(f), 11800 + 1400);
    assert_int_equal(add(f, "http://a.test/2"), BC_ADMIT_QUEUED);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* Hand out and complete every URL of f (a commit after each), into
 * got[0 .. *n) in the order handed out. */
static void drain_urls(struct bc_crawl_state *s, struct bc_frontier *f,
                       char got[][64], int cap, int *n)
{
    *n = 0;
    for (;;) {
        struct bc_frontier_job j;
        assert_int_equal(bc_frontier_next(f, 0, &j), BC_OK);
        if (j.action == BC_FRONTIER_DONE)
            break;
        assert_int_equal(j.action, BC_FRONTIER_FETCH);
        assert_true(*n < cap);
        snprintf(got[(*n)++], 64, "%s", j.url);
        done(s, f, &j);
        assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    }
}

/* The queued URLs of host in got[0 .. n), in order: page/first[0],
 * page/first[1], ... (count of them). */
static void assert_host_order(char got[][64], int n, const char *host,
                              const int *pages, int count)
{
    int k = 0;
    size_t hl = strlen(host);
    for (int i = 0; i < n; i++) {
        if (strncmp(got[i] + 7, host, hl) != 0 || got[i][7 + hl] != '/')
            continue;
        assert_true(k < count);
        char want[64];
        snprintf(want, sizeof(want), "http://%s/page/%d", host, pages[k++]);
        assert_string_equal(got[i], want);
    }
    assert_int_equal(k, count);
}

/* Move the next seq a closed state gives out to seq, as a crawl that
 * admitted that many URLs would have left it. */
static void set_next_seq(const char *d, long long seq)
{
    char sql[128];
    snprintf(sql, sizeof(sql),
             "UPDATE meta SET value = %lld WHERE key = 'next_seq'", seq);
    state_db_exec(d, sql);
}

/*
 * THE QUEUE'S GENERATIONS (state.c): the index urls_queue leads with a
 * URL's generation, seq >> 18, and a host's queue is read back across
 * them. Here a.test's URLs lie in generations 0, 1 and 5 (the next seq
 * moved on the closed state, as 1.3 million admissions would have moved
 * it), with generations 2-4 empty, and b.test's in 0 and 5; a refill of
 * 4 (the window) reads across the boundaries and the gap, a resume counts
 * each queue again (its first host's cursor in generation 0, the rest
 * after it), and a URL given back moves from generation 0 to the tail in
 * generation 5 (its row's seq rewritten: S_REQUEUE finds it by its
 * generation), and a host budget counts a host's admissions again over
 * all its generations.
 */
static void test_queue_generations(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 3); /* seqs 1-3, generation 0 */
    add_pages(f, "b.test", 2); /* seqs 4-5 */
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    set_next_seq(d, (1 << 18) - 2);
    s = open_ok(d);
    f = frontier_of(s);
    char url[64];
    for (int i = 3; i <= 6; i++) { /* 262142, 262143 | 262144, 262145 */
        snprintf(url, sizeof(url), "http://a.test/page/%d", i);
        assert_int_equal(add(f, url), BC_ADMIT_QUEUED);
    }
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    set_next_seq(d, 5LL << 18);
    s = open_ok(d);
    f = frontier_of(s);
    for (int i = 7; i <= 12; i++) {
        snprintf(url, sizeof(url), "http://a.test/page/%d", i);
        assert_int_equal(add(f, url), BC_ADMIT_QUEUED);
    }
    for (int i = 2; i <= 3; i++) {
        snprintf(url, sizeof(url), "http://b.test/page/%d", i);
        assert_int_equal(add(f, url), BC_ADMIT_QUEUED);
    }
    /* a.test/page/0 out and given back: to the tail, after page/12. */
    struct bc_frontier_job j = fetch(f);
    assert_string_equal(j.url, "http://a.test/page/0");
    assert_int_equal(bc_frontier_giveback(f, &j, 0), BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    /* And b.test/page/0 done: b's cursor in generation 0. */
    j = fetch(f);
    assert_string_equal(j.url, "http://b.test/page/0");
    done(s, f, &j);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    s = open_ok(d);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.queued, 13 + 3);
    /* A budget of 14 URLs a host: a.test's 13 admissions, counted again
     * over its three generations, leave room for one. */
    struct bc_frontier_config c = config();
    c.host_budget = 14;
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_OK);
    assert_int_equal(add(f, "http://a.test/page/13"), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "http://a.test/page/14"), BC_ADMIT_HOST_BUDGET);
    char got[32][64];
    int n = 0;
    drain_urls(s, f, got, 32, &n);
    assert_int_equal(n, 17);
    static const int a_order[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 13};
    static const int b_order[] = {1, 2, 3};
    assert_host_order(got, n, "a.test", a_order, 14);
    assert_host_order(got, n, "b.test", b_order, 3);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/* The first column of the first row of sql on a closed state's crawl.db,
 * as text, into out. */
static void state_db_text(const char *state_dir, const char *sql, char *out,
                          size_t cap)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/crawl.db", state_dir);
    sqlite3 *db;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open(p, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    const char *t = (const char *)sqlite3_column_text(q, 0);
    snprintf(out, cap, "%s", t ? t : "");
    sqlite3_finalize(q);
    sqlite3_close(db);
}

/*
 * A state of format version 3, made before THE QUEUE'S GENERATIONS (its
 * index urls_queue on (host, seq), as every build before wrote it): peeked
 * as it is, migrated at its open (the index rebuilt on (generation, host,
 * seq), version 4 recorded), and resumed with its queues, cursors and the
 * URL in flight as they were.
 */
static void test_queue_old_state(void **state)
{
    (void)state;
    const char *d = new_dir();
    struct bc_crawl_state *s = open_ok(d);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 6); /* window 4: 2 of them spill */
    add_pages(f, "b.test", 2);
    struct bc_frontier_job j = fetch(f);
    assert_string_equal(j.url, "http://a.test/page/0");
    done(s, f, &j);
    j = fetch(f);
    assert_string_equal(j.url, "http://b.test/page/0");
    done(s, f, &j);
    j = fetch(f); /* in flight at the "kill" */
    assert_string_equal(j.url, "http://a.test/page/1");
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    state_db_exec(d, "DROP INDEX urls_queue;"
                     "CREATE UNIQUE INDEX urls_queue ON urls(host, seq);"
                     "PRAGMA user_version = 3");

    struct bc_crawl_state_summary m;
    struct bc_crawl_state_error err;
    assert_int_equal(bc_crawl_state_peek(d, &m, &err), BC_OK);
    assert_int_equal(m.queued, 4 + 1); /* a/2-5, b/1 */
    assert_int_equal(m.in_flight, 1);

    s = open_ok(d);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.queued, 4 + 1);
    f = frontier_of(s);
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.queued, 4 + 1 + 1); /* and a/1 requeued */
    char got[16][64];
    int n = 0;
    drain_urls(s, f, got, 16, &n);
    assert_int_equal(n, 6);
    static const int a_order[] = {1, 2, 3, 4, 5};
    static const int b_order[] = {1};
    assert_host_order(got, n, "a.test", a_order, 5);
    assert_host_order(got, n, "b.test", b_order, 1);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    char text[256];
    state_db_text(d, "PRAGMA user_version", text, sizeof(text));
    assert_string_equal(text, "4");
    state_db_text(d, "SELECT sql FROM sqlite_schema WHERE name = 'urls_queue'",
                  text, sizeof(text));
    assert_non_null(strstr(text, "(seq >> 18), host, seq"));
    assert_int_equal(bc_crawl_state_peek(d, &m, &err), BC_OK);
    assert_int_equal(m.queued, 0);
}

/* The size of DIR/name, 0 when it does not exist. */
static long long file_size(const char *d, const char *name)
{
    char path[800];
    snprintf(path, sizeof(path), "%s/%s", d, name);
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : 0;
}

/*
 * The WAL is bounded (state.c, A BOUNDED WAL): 12,000 URLs of 1 KiB
 * committed 100 at a time (about 12 MiB of rows, more than SQLite's own
 * checkpoint of 1,024 pages lets the WAL hold), and after every commit
 * the WAL's file is at most W = (1,024 + T) x (8,192 + 24) + 32 bytes,
 * T = 64 pages of one commit here (100 rows of 1 KiB are 13 pages, plus
 * the index's and the counters'), and so after a snapshot (which syncs
 * the WAL and commits its position: no checkpoint cuts the file since
 * issue 25) and after the close, which leaves it. With the checkpoint at
 * 16,384 pages and no size limit (before issue 20) it grew past 12 MiB.
 */
static void test_wal_bounded(void **state)
{
    (void)state;
    const char *d = new_dir();
    char path[400];
    snprintf(path, sizeof(path), "%s", d);
    struct bc_crawl_state *s = open_ok(path);
    struct bc_frontier *f = frontier_of(s);
    const long long bound = (1024LL + 64) * (8192 + 24) + 32;
    long long peak = 0;
    char url[1100];
    memset(url, 'x', sizeof(url));
    for (int i = 0; i < 12000; i++) {
        int n = snprintf(url, sizeof(url), "http://w%d.test/%d/", i % 50, i);
        url[n] = 'x';
        enum bc_frontier_reason r;
        assert_int_equal(bc_frontier_add(f, url, 1024, NULL, 0, 1, &r, NULL),
                         BC_OK);
        if (i % 100 == 99) {
            assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
            long long wal = file_size(path, "crawl.db-wal");
            peak = wal > peak ? wal : peak;
        }
    }
    assert_true(peak <= bound);
    assert_true(peak > bound / 2); /* the bound was reached, not missed */
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    assert_true(file_size(path, "crawl.db-wal") <= bound);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    long long wal = file_size(path, "crawl.db-wal");
    assert_true(wal > 32 && wal <= bound);
}

/*
 * The end of a crawl (state.c, THE END OF A CRAWL): the close does not
 * checkpoint, so the WAL and its index stay beside crawl.db (before issue
 * 25 SQLite's checkpoint at the close copied the WAL into crawl.db and
 * removed both: 2 syncs and the freeing of its blocks), and the next open
 * reads every commit from it: 200 URLs committed and snapshotted, closed,
 * then opened again: the journal, the snapshot's position and the queue
 * are whole. And the snapshot wrote nothing into crawl.db (no
 * checkpoint; the checkpointer is woken at 256 pages, far more than
 * these): its size is the creation's.
 */
static void test_close_keeps_wal(void **state)
{
    (void)state;
    const char *d = new_dir();
    char path[400];
    snprintf(path, sizeof(path), "%s", d);
    struct bc_crawl_state *s = open_ok(path);
    long long db0 = file_size(path, "crawl.db");
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 200);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    assert_int_equal(file_size(path, "crawl.db"), db0);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    assert_true(file_size(path, "crawl.db-wal") > 32 + 8192 + 24);
    assert_true(file_size(path, "crawl.db-shm") > 0);
    assert_int_equal(file_size(path, "crawl.db"), db0);

    s = open_ok(path);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.journal, 200);
    assert_int_equal(info.snapshot_pos, 200);
    assert_int_equal(info.queued, 200);
    f = frontier_of(s);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_int_equal(fs.queued, 200);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

/*
 * Checkpoints off the loop (state.c, CHECKPOINTS OFF THE LOOP): more
 * than 256 pages of WAL committed (3,000 URLs of 1 KiB), fewer than the
 * bound's 1,024 (both checked), and then nothing more is called; the
 * checkpointer copies them into crawl.db all the same (the file grows by
 * at least 1 MiB within 10 s). When every checkpoint was the loop's
 * (before), crawl.db kept its size until the WAL reached 1,024 pages.
 */
static void test_checkpointer(void **state)
{
    (void)state;
    const char *d = new_dir();
    char path[400];
    snprintf(path, sizeof(path), "%s", d);
    struct bc_crawl_state *s = open_ok(path);
    struct bc_frontier *f = frontier_of(s);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    long long db0 = file_size(path, "crawl.db");
    char url[1100];
    memset(url, 'x', sizeof(url));
    for (int i = 0; i < 3000; i++) {
        int n = snprintf(url, sizeof(url), "http://c%d.test/%d/", i % 50, i);
        url[n] = 'x';
        enum bc_frontier_reason r;
        assert_int_equal(bc_frontier_add(f, url, 1024, NULL, 0, 1, &r, NULL),
                         BC_OK);
        if (i % 100 == 99)
            assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    }
    long long wal = file_size(path, "crawl.db-wal");
    assert_true(wal > 256LL * (8192 + 24));  /* the checkpointer was woken */
    assert_true(wal < 1024LL * (8192 + 24)); /* the bound's never ran */
    long long db = file_size(path, "crawl.db");
    for (int i = 0; i < 1000 && db < db0 + (1 << 20); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
        db = file_size(path, "crawl.db");
    }
    assert_true(db >= db0 + (1 << 20));
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

static long long file_inode(const char *d, const char *name)
{
    char path[800];
    snprintf(path, sizeof(path), "%s/%s", d, name);
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_ino : -1;
}

/* A snapshot with nothing committed since the last one writes nothing
 * (bloom.snap keeps its inode: a save replaces it by a rename); one after
 * a commit writes it again. Before, every call wrote and synced it and
 * checkpointed (a crawl's end did twice). */
static void test_snapshot_idle(void **state)
{
    (void)state;
    const char *d = new_dir();
    char path[400];
    snprintf(path, sizeof(path), "%s", d);
    struct bc_crawl_state *s = open_ok(path);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 3);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    long long ino = file_inode(path, "bloom.snap");
    assert_true(ino >= 0);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    assert_true(file_inode(path, "bloom.snap") == ino);
    add_pages(f, "b.test", 1);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_OK);
    assert_true(file_inode(path, "bloom.snap") != ino);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    /* The last snapshot covers all four admissions. */
    s = open_ok(path);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.snapshot_pos, 4);
    assert_int_equal(info.journal, 4);
    bc_crawl_state_close(s);
}

/* bloom.snap's errors keep errno's text: a directory in its place makes
 * the snapshot's rename fail (EISDIR) and then the load's read. */
static void test_snapshot_errno(void **state)
{
    (void)state;
    const char *d = new_dir();
    char path[400], snap[800];
    snprintf(path, sizeof(path), "%s", d);
    struct bc_crawl_state *s = open_ok(path);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 3);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    snprintf(snap, sizeof(snap), "%s/bloom.snap", path);
    assert_int_equal(mkdir(snap, 0700), 0);
    assert_int_equal(bc_crawl_state_snapshot(s, f), BC_ERR_IO);
    char want[128];
    snprintf(want, sizeof(want), "bloom.snap: %s", strerror(EISDIR));
    assert_string_equal(bc_crawl_state_errmsg(s), want);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(path);
    struct bc_frontier_config c = config();
    assert_int_equal(bc_crawl_state_frontier(s, &c, 4, 0, &f), BC_ERR_IO);
    assert_string_equal(bc_crawl_state_errmsg(s), want);
    bc_crawl_state_close(s);
}

/* A snapshot whose first step, the WAL's sync (I6), fails names the file
 * and errno's text, not only SQLite's "disk I/O error"; the state is then
 * failed, and what was committed resumes. */
static void test_wal_sync_errno(void **state)
{
    (void)state;
    const char *d = new_dir();
    char path[400];
    snprintf(path, sizeof(path), "%s", d);
    struct bc_crawl_state *s = open_ok(path);
    struct bc_frontier *f = frontier_of(s);
    add_pages(f, "a.test", 3);
    assert_int_equal(bc_crawl_state_commit(s, f), BC_OK);
    fail_sync_suffix = "/crawl.db-wal";
    enum bc_status st = bc_crawl_state_snapshot(s, f);
    fail_sync_suffix = NULL;
    assert_int_equal(st, BC_ERR_IO);
    char want[160];
    snprintf(want, sizeof(want), "crawl.db-wal: sync: %s (%s)",
             sqlite3_errstr(SQLITE_IOERR_FSYNC), strerror(EIO));
    assert_string_equal(bc_crawl_state_errmsg(s), want);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    s = open_ok(path);
    f = frontier_of(s);
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    assert_int_equal(fs.queued, 3);
    bc_frontier_free(f);
    bc_crawl_state_close(s);
}

int main(void)
{
    snprintf(base, sizeof(base), "%s/bc_state_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(base)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_resume),
        cmocka_unit_test(test_info_at_open),
        cmocka_unit_test(test_payload_kill),
        cmocka_unit_test(test_payload_old_state),
        cmocka_unit_test(test_payload_digests),
        cmocka_unit_test(test_payload_log_moved),
        cmocka_unit_test(test_totals_saved),
        cmocka_unit_test(test_validators),
        cmocka_unit_test(test_fetched_rows),
        cmocka_unit_test(test_fingerprint_rows),
        cmocka_unit_test(test_unfiltered_resume),
        cmocka_unit_test(test_sitemap_jobs_survive),
        cmocka_unit_test(test_config_mismatch),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_not_a_state),
        cmocka_unit_test(test_unreadable),
        cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_wal_bounded),
        cmocka_unit_test(test_close_keeps_wal),
        cmocka_unit_test(test_checkpointer),
        cmocka_unit_test(test_snapshot_idle),
        cmocka_unit_test(test_snapshot_errno),
        cmocka_unit_test(test_wal_sync_errno),
        cmocka_unit_test(test_create_write_error),
        cmocka_unit_test(test_referrer_and_host_stats),
        cmocka_unit_test(test_window_resume),
        cmocka_unit_test(test_queue_generations),
        cmocka_unit_test(test_queue_old_state),
        cmocka_unit_test(test_transient_survives_kill),
        cmocka_unit_test(test_given_up_retry_failed),
        cmocka_unit_test(test_retry_wait_survives_kill),
        cmocka_unit_test(test_delay_override_survives_kill),
        cmocka_unit_test(test_sitemap_given_up_survives),
        cmocka_unit_test(test_outbox),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    if (rc == 0 && system(cmd) != 0)
        return 1;
    return rc;
}
