/*
 * test_crawl_warc.c - the crawler with a WARC writer (config.warc), in
 * process, against tests/http_fixture_server.py on 127.0.0.1.
 *
 * Each crawl's WARC is read back with the tests' own reader
 * (warc_reader.h: zlib member by member, Content-Length and both digests
 * recomputed with libcrypto) and checked against what on_page reported:
 * one response record per page that got a response, at the file and
 * offset the page was given, request and response records paired by
 * WARC-Concurrent-To, WARC-Date the page's fetched_at, robots.txt
 * archived, a body cut by max_body_bytes marked WARC-Truncated, failed
 * fetches without records, bodies as they were sent (gzip, chunked).
 * Then rotation, a kill and resume with a crawl state (the WARC cut back
 * to the committed position, nothing duplicated, nothing torn), and a
 * write error. Nothing here contacts an address outside 127.0.0.0/8.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bloomcrawl/crawler.h"
#include "fd_limit.h"
#include "fixture_server.h"
#include "warc_reader.h"

#define UA "test_crawl_warc/1.0"

static char include_pattern[64];
static const char *include_list[1] = {include_pattern};
static char base[256]; /* a temporary directory for the files */

static int server_start(void **state)
{
    (void)state;
    if (fixture_server_start() != 0)
        return -1;
    snprintf(include_pattern, sizeof(include_pattern), "http://127.0.0.1:%d/*",
             server_port);
    return bc_fetcher_global_init() == BC_OK ? 0 : -1;
}

static int server_stop(void **state)
{
    (void)state;
    fixture_server_stop();
    bc_fetcher_global_cleanup();
    return 0;
}

/* ---- what on_page saw ------------------------------------------------- */

#define MAX_PAGES 128

struct page {
    char url[160];
    bool failed;
    enum bc_crawler_error_kind kind;
    int http;
    time_t fetched_at;
    char warc_file[512]; /* "" when none */
    uint64_t warc_offset;
};

struct run {
    struct page page[MAX_PAGES];
    size_t pages;
};

static void on_page(void *ctx, const struct bc_crawler_page *p)
{
    struct run *r = ctx;
    assert_true(r->pages < MAX_PAGES);
    struct page *s = &r->page[r->pages++];
    snprintf(s->url, sizeof(s->url), "%s", p->url);
    s->failed = p->failed;
    s->kind = p->error_kind;
    s->http = p->http_status;
    s->fetched_at = p->fetched_at;
    s->warc_file[0] = 0;
    if (p->warc_file)
        snprintf(s->warc_file, sizeof(s->warc_file), "%s", p->warc_file);
    else
        assert_int_equal(p->warc_offset, 0);
    s->warc_offset = p->warc_offset;
}

static const char info[] = "software: test_crawl_warc\r\n";

static void config(struct bc_crawler_config *cfg, struct run *r,
                   struct bc_warc *w)
{
    bc_crawler_config_init(cfg);
    cfg->frontier.user_agent = UA;
    cfg->frontier.min_delay_ms = 0;
    cfg->frontier.per_host_concurrency = 4;
    cfg->frontier.include = include_list;
    cfg->frontier.include_count = 1;
    cfg->fetcher.timeout_ms = 10000;
    cfg->fetcher.max_host_connections = 4;
    cfg->concurrency = 4;
    cfg->on_page = on_page;
    cfg->ctx = r;
    cfg->warc = w;
}

static void add_seed(struct bc_crawler *c, const char *path)
{
    char url[128];
    url_of(url, sizeof(url), path);
    assert_int_equal(bc_crawler_add_seed(c, url, strlen(url), NULL, NULL),
                     BC_OK);
}

static const struct page *find_page(const struct run *r, const char *path)
{
    char url[160];
    url_of(url, sizeof(url), path);
    for (size_t i = 0; i < r->pages; i++)
        if (strcmp(r->page[i].url, url) == 0)
            return &r->page[i];
    fail_msg("no page %s", path);
    abort(); /* not reached: fail_msg() leaves the test */
}

/* ---- reading a crawl's WARC back ---------------------------------------- */

#define MAX_RECS 512

struct warc_file {
    unsigned char *raw, *plain;
    size_t raw_len;
    struct rec recs[MAX_RECS];
    size_t starts[MAX_RECS]; /* the gzip member of each record */
    int count;
};

/* Read and check a whole .warc.gz: every record parsed (digests and
 * lengths checked by parse()), one gzip member per record, a warcinfo
 * first and nowhere else. */
static void read_warc(const char *name, struct warc_file *wf)
{
    size_t un;
    int members = 0;
    wf->raw = slurp(name, &wf->raw_len);
    wf->plain = gunzip_all(wf->raw, wf->raw_len, &un, &members, wf->starts);
    wf->count = parse(wf->plain, un, wf->recs, MAX_RECS);
    assert_int_equal(members, wf->count);
    assert_string_equal(wf->recs[0].type, "warcinfo");
    assert_int_equal(wf->recs[0].block_len, strlen(info));
    for (int i = 1; i < wf->count; i++)
        assert_string_not_equal(wf->recs[i].type, "warcinfo");
}

static void free_warc(struct warc_file *wf)
{
    free(wf->plain);
    free(wf->raw);
}

static const struct rec *by_id(const struct warc_file *wf, const char *id)
{
    for (int i = 0; i < wf->count; i++)
        if (strcmp(wf->recs[i].id, id) == 0)
            return &wf->recs[i];
    return NULL;
}

/* Responses with this target URI. */
static int responses_for(const struct warc_file *wf, const char *uri)
{
    int n = 0;
    for (int i = 0; i < wf->count; i++)
        n += strcmp(wf->recs[i].type, "response") == 0 &&
             strcmp(wf->recs[i].uri, uri) == 0;
    return n;
}

/* Requests and responses come in pairs linked both ways, with one target,
 * one date, the peer's address; requests carry the user agent. Returns
 * the number of response records. */
static int check_pairs(const struct warc_file *wf)
{
    int responses = 0, requests = 0;
    for (int i = 1; i < wf->count; i++) {
        const struct rec *r = &wf->recs[i];
        bool resp = strcmp(r->type, "response") == 0;
        assert_true(resp || strcmp(r->type, "request") == 0);
        const struct rec *o = by_id(wf, r->concurrent);
        assert_non_null(o);
        assert_string_equal(o->concurrent, r->id);
        assert_string_equal(o->type, resp ? "request" : "response");
        assert_string_equal(o->uri, r->uri);
        assert_string_equal(o->date, r->date);
        assert_string_equal(r->ip, "127.0.0.1");
        /* A payload digest on every record (read_warc checked its value):
         * the crawler's records never lose it. */
        assert_true(r->payload_digest[0] != '\0');
        if (resp) {
            responses++;
            assert_memory_equal(r->block, "HTTP/1.1 ", 9);
        } else {
            requests++;
            assert_memory_equal(r->block, "GET /", 5);
            char *ua =
                strstr((const char *)r->block, "\r\nUser-Agent: " UA "\r\n");
            assert_true(ua &&
                        (const unsigned char *)ua < r->block + r->block_len);
        }
    }
    assert_int_equal(requests, responses);
    return responses;
}

/* The record that starts at a page's warc_offset: its response. */
static const struct rec *at_offset(const struct warc_file *wf,
                                   const struct page *p)
{
    for (int i = 0; i < wf->count; i++)
        if (wf->starts[i] == p->warc_offset) {
            assert_string_equal(wf->recs[i].type, "response");
            assert_string_equal(wf->recs[i].uri, p->url);
            char date[32];
            struct tm tm;
            gmtime_r(&p->fetched_at, &tm);
            strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
            assert_string_equal(wf->recs[i].date, date);
            return &wf->recs[i];
        }
    fail_msg("no record at offset %llu for %s",
             (unsigned long long)p->warc_offset, p->url);
    abort(); /* not reached: fail_msg() leaves the test */
}

/* The payload of a response record (after the HTTP head). */
static const unsigned char *payload(const struct rec *r, size_t *len)
{
    for (size_t i = 0; i + 4 <= r->block_len; i++)
        if (memcmp(r->block + i, "\r\n\r\n", 4) == 0) {
            *len = r->block_len - i - 4;
            return r->block + i + 4;
        }
    fail_msg("no HTTP head in %s", r->uri);
    abort(); /* not reached: fail_msg() leaves the test */
}

static bool head_has(const struct rec *r, const char *line)
{
    size_t plen;
    const unsigned char *p = payload(r, &plen);
    size_t hlen = (size_t)(p - r->block);
    size_t n = strlen(line);
    for (size_t i = 0; i + n <= hlen; i++)
        if (memcmp(r->block + i, line, n) == 0)
            return true;
    return false;
}

/* ---- the tests ---------------------------------------------------------- */

static const char gzip_html[] = "<html><body><a href=\"/gz1\">gz1</a>\n"
                                "<a href=\"/gz2\">gz2</a></body></html>\n";

/* A small crawl of every kind of outcome, archived. */
static void test_crawl_archived(void **state)
{
    (void)state;
    static struct run r;
    static struct warc_file wf;
    memset(&r, 0, sizeof(r));
    char name[300];
    snprintf(name, sizeof(name), "%s/crawl.warc.gz", base);
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    struct bc_crawler_config cfg;
    config(&cfg, &r, w);
    cfg.fetcher.max_body_bytes = 100000;
    struct bc_crawler *c = NULL;
    time_t t0 = time(NULL);
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    static const char *const seeds[] = {
        "/ok",  "/gzip",         "/chunked", "/chunked-crcrlf", "/redirect",
        "/big", "/gzip-corrupt", "/nothing", "/chunked-5x"};
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
        add_seed(c, seeds[i]);
    assert_int_equal(bc_crawler_run(c), BC_OK);
    struct bc_crawler_stats st;
    bc_crawler_stats(c, &st);
    bc_crawler_free(c);
    assert_int_equal(bc_warc_free(w), BC_OK);

    read_warc(name, &wf);
    int responses = check_pairs(&wf);
    assert_int_equal(st.warc_files, 1);
    assert_int_equal(st.warc_records, (uint64_t)wf.count);
    assert_int_equal(st.warc_bytes, wf.raw_len);

    /* One response per page that has a record, at its offset; none for a
     * failed fetch; robots.txt archived too. */
    int with_record = 0;
    for (size_t i = 0; i < r.pages; i++) {
        const struct page *p = &r.page[i];
        assert_true(p->fetched_at >= t0 && p->fetched_at <= time(NULL));
        if (!p->warc_file[0]) {
            assert_true(p->failed);
            assert_int_equal(responses_for(&wf, p->url), 0);
            continue;
        }
        with_record++;
        assert_string_equal(p->warc_file, name);
        assert_int_equal(responses_for(&wf, p->url), 1);
        const struct rec *rec = at_offset(&wf, p);
        assert_int_equal(rec->truncated,
                         p->failed && p->kind == BC_CRAWLER_ERR_TOO_LARGE);
    }
    char robots[128];
    url_of(robots, sizeof(robots), "/robots.txt");
    assert_int_equal(responses_for(&wf, robots), 1);
    assert_int_equal(responses, with_record + 1);
    assert_true(with_record >= 10); /* the seeds, their links, the target */

    assert_false(find_page(&r, "/gzip-corrupt")->warc_file[0]);
    assert_int_equal(find_page(&r, "/gzip-corrupt")->kind,
                     BC_CRAWLER_ERR_PROTOCOL);
    assert_false(find_page(&r, "/nothing")->warc_file[0]);
    /* A chunk-size line "5x" (malformed: RFC 9112 7.1) fails the page, as
     * any body that cannot be decoded: no record, no payload digest of a
     * payload nobody could tell. */
    assert_false(find_page(&r, "/chunked-5x")->warc_file[0]);
    assert_int_equal(find_page(&r, "/chunked-5x")->kind,
                     BC_CRAWLER_ERR_PROTOCOL);

    /* A body over max_body_bytes: the page fails, its record is kept. */
    const struct page *big = find_page(&r, "/big");
    assert_true(big->failed);
    assert_int_equal(big->kind, BC_CRAWLER_ERR_TOO_LARGE);
    const struct rec *rec = at_offset(&wf, big);
    assert_true(rec->truncated);
    size_t plen;
    const unsigned char *pl = payload(rec, &plen);
    assert_true(plen >= 100000 && plen < (2u << 20));
    assert_true(head_has(rec, "\r\nContent-Length: 2097152\r\n"));
    (void)pl;

    /* The payload as sent: gzip stays gzip, and inflates to the page. */
    rec = at_offset(&wf, find_page(&r, "/gzip"));
    assert_true(head_has(rec, "\r\nContent-Encoding: gzip\r\n"));
    pl = payload(rec, &plen);
    unsigned char out[256];
    z_stream z = {0};
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)pl;
    z.avail_in = (uInt)plen;
    z.next_out = out;
    z.avail_out = sizeof(out);
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, strlen(gzip_html));
    assert_memory_equal(out, gzip_html, strlen(gzip_html));
    inflateEnd(&z);

    /* Chunked framing as it came: 7-byte chunks, a trailer. */
    rec = at_offset(&wf, find_page(&r, "/chunked"));
    assert_true(head_has(rec, "\r\nTransfer-Encoding: chunked\r\n"));
    pl = payload(rec, &plen);
    assert_memory_equal(pl, "7\r\n<!DOCTY\r\n7;ext=1\r\n", 21);
    assert_memory_equal(pl + plen - 21, "0\r\nX-Trailer: yes\r\n\r\n", 21);

    /* CR CR LF after chunk data ends the line (RFC 9112 2.2, as curl
     * reads it): the page was fetched and parsed, and its record has the
     * payload digest of the chunks' data (read_warc checks its value).
     * The writer's own decoder gave up there and left the digest out. */
    rec = at_offset(&wf, find_page(&r, "/chunked-crcrlf"));
    assert_false(find_page(&r, "/chunked-crcrlf")->failed);
    pl = payload(rec, &plen);
    assert_memory_equal(pl, "9\r\n<!DOCTYPE\r\r\n", 15);
    assert_true(rec->payload_digest[0] != '\0');

    /* Redirects are archived as they came. */
    rec = at_offset(&wf, find_page(&r, "/redirect"));
    assert_memory_equal(rec->block, "HTTP/1.1 301 ", 13);
    assert_true(head_has(rec, "\r\nLocation: /ok?from=redirect\r\n"));
    free_warc(&wf);
}

/* A robots.txt over 500 KiB (a fixture server of its own, --robots big):
 * its first 500 KiB are read, and its response record keeps what came,
 * marked truncated, as its page is not a failure. */
static void test_robots_cut(void **state)
{
    (void)state;
    static struct run r;
    static struct warc_file wf;
    memset(&r, 0, sizeof(r));
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(BC_PYTHON3, BC_PYTHON3, SERVER_SCRIPT, "--robots", "big",
              (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char line[32] = {0};
    size_t k = 0;
    while (k < sizeof(line) - 1 && read(fds[0], line + k, 1) == 1 &&
           line[k] != '\n')
        k++;
    close(fds[0]);
    int port = atoi(line);
    assert_true(port > 0);

    char name[300], pattern[64], seed[64];
    snprintf(name, sizeof(name), "%s/robots.warc.gz", base);
    snprintf(pattern, sizeof(pattern), "http://127.0.0.1:%d/*", port);
    snprintf(seed, sizeof(seed), "http://127.0.0.1:%d/ok", port);
    const char *list[1] = {pattern};
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    struct bc_crawler_config cfg;
    config(&cfg, &r, w);
    cfg.frontier.include = list;
    cfg.max_pages = 1;
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    assert_int_equal(bc_crawler_add_seed(c, seed, strlen(seed), NULL, NULL),
                     BC_OK);
    assert_int_equal(bc_crawler_run(c), BC_OK);
    bc_crawler_free(c);
    assert_int_equal(bc_warc_free(w), BC_OK);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);

    read_warc(name, &wf);
    assert_int_equal(check_pairs(&wf), 2); /* robots.txt and /ok */
    assert_int_equal(r.pages, 1);
    assert_false(at_offset(&wf, &r.page[0])->truncated);
    const struct rec *robots = NULL;
    for (int i = 0; i < wf.count; i++)
        if (strcmp(wf.recs[i].type, "response") == 0 &&
            strstr(wf.recs[i].uri, "/robots.txt"))
            robots = &wf.recs[i];
    if (robots == NULL) {
        fail_msg("no response for /robots.txt");
        abort(); /* not reached: fail_msg() leaves the test */
    }
    assert_true(robots->truncated);
    assert_true(head_has(robots, "\r\nContent-Length: 614400\r\n"));
    size_t plen;
    const unsigned char *pl = payload(robots, &plen);
    assert_true(plen >= 500u << 10 && plen < 600u << 10);
    assert_memory_equal(pl, "User-agent: *\nDisallow: /private\n", 33);
    free_warc(&wf);
}

/* A sitemap its parser cut (the fixture's /sm/bomb.xml: a DOCTYPE; its
 * /sm/big.xml.gz: 50 MiB of XML) was answered: archived as far as it was
 * read, marked WARC-Truncated: length only if that is short of the body
 * sent. The bomb is small and came whole (its Content-Length of bytes)
 * before the parser stopped: not marked (before the fix it was); the big
 * one, streamed without a length, is. */
static void test_sitemap_cut_archived(void **state)
{
    (void)state;
    static struct run r;
    static struct warc_file wf;
    memset(&r, 0, sizeof(r));
    char name[300];
    snprintf(name, sizeof(name), "%s/sitemaps.warc.gz", base);
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    struct bc_crawler_config cfg;
    config(&cfg, &r, w);
    cfg.frontier.sitemaps = true;
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    add_seed(c, "/text");
    assert_int_equal(bc_crawler_run(c), BC_OK);
    struct bc_crawler_stats st;
    bc_crawler_stats(c, &st);
    bc_crawler_free(c);
    assert_int_equal(bc_warc_free(w), BC_OK);
    assert_int_equal(st.sitemap_cut[BC_SITEMAP_STOP_DOCTYPE], 1);
    assert_int_equal(st.sitemap_cut[BC_SITEMAP_STOP_TOO_LARGE], 1);

    read_warc(name, &wf);
    int bomb = 0, big = 0;
    for (int i = 0; i < wf.count; i++) {
        const struct rec *x = &wf.recs[i];
        if (strcmp(x->type, "response") != 0)
            continue;
        if (strstr(x->uri, "/sm/bomb.xml")) {
            bomb++;
            assert_false(x->truncated);
            size_t plen;
            (void)payload(x, &plen);
            char cl[64];
            snprintf(cl, sizeof(cl), "\r\nContent-Length: %zu\r\n", plen);
            assert_true(plen > 0 && head_has(x, cl));
        } else if (strstr(x->uri, "/sm/big.xml.gz")) {
            big++;
            assert_true(x->truncated);
        } else {
            assert_false(x->truncated);
        }
    }
    assert_int_equal(bomb, 1);
    assert_int_equal(big, 1);
    free_warc(&wf);
}

/* Rotation: each file opens with a warcinfo; pages name their file. */
static void test_crawl_rotation(void **state)
{
    (void)state;
    static struct run r;
    static struct warc_file wf;
    memset(&r, 0, sizeof(r));
    char name[300];
    snprintf(name, sizeof(name), "%s/rot.warc.gz", base);
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 1, info, &w), BC_OK);
    struct bc_crawler_config cfg;
    config(&cfg, &r, w);
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    add_seed(c, "/ok");
    assert_int_equal(bc_crawler_run(c), BC_OK);
    struct bc_crawler_stats st;
    bc_crawler_stats(c, &st);
    bc_crawler_free(c);
    assert_int_equal(bc_warc_free(w), BC_OK);
    /* max_size 1: a warcinfo and one pair per file: a response stays
     * beside its request (before the fix, one record per file: a
     * request ended a file and its response began the next). */
    uint64_t files = 0, records = 0;
    for (;; files++) {
        char file[320];
        snprintf(file, sizeof(file), "%s/rot-%05llu.warc.gz", base,
                 (unsigned long long)files);
        if (access(file, F_OK) != 0)
            break;
        read_warc(file, &wf);
        assert_int_equal(wf.count, 3);
        assert_int_equal(check_pairs(&wf), 1);
        records += (uint64_t)wf.count;
        for (size_t i = 0; i < r.pages; i++)
            if (strcmp(r.page[i].warc_file, file) == 0)
                at_offset(&wf, &r.page[i]);
        free_warc(&wf);
    }
    assert_int_equal(st.warc_files, files);
    assert_int_equal(st.warc_records, records);
    /* robots.txt and /ok's five pages: a request and a response each. */
    assert_int_equal(files, 1 + r.pages);
    for (size_t i = 0; i < r.pages; i++)
        assert_non_null(strstr(r.page[i].warc_file, "/rot-0000"));
}

/* A crawl with a state, "killed" (freed without a commit) just after a
 * turn that completed pages, a torn record appended; then resumed at the
 * committed WARC position: exactly one response record per page, at the
 * offset its page was given, and none torn. */
static void test_crawl_resume(void **state)
{
    (void)state;
    static struct run r1, r2;
    static struct warc_file wf;
    memset(&r1, 0, sizeof(r1));
    memset(&r2, 0, sizeof(r2));
    char dir[300], name[300];
    snprintf(dir, sizeof(dir), "%s/state", base);
    snprintf(name, sizeof(name), "%s/res.warc.gz", base);
    struct bc_crawl_state_error err;

    /* Run 1: until at least 12 pages, then the kill. */
    struct bc_crawl_state *s = NULL;
    assert_int_equal(bc_crawl_state_open(dir, NULL, 0, &s, &err), BC_OK);
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    struct bc_crawler_config cfg;
    config(&cfg, &r1, w);
    cfg.state = s;
    cfg.max_pages = 40;
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    add_seed(c, "/fan/1");
    bool done = false;
    while (!done && r1.pages < 12)
        assert_int_equal(bc_crawler_step(c, 1000, &done), BC_OK);
    assert_false(done);
    bc_crawler_free(c);
    assert_int_equal(bc_warc_free(w), BC_OK);
    bc_crawl_state_close(s);
    FILE *f = fopen(name, "ab");
    assert_non_null(f);
    fputs("\x1f\x8b\x08 a torn record", f);
    fclose(f);

    /* Run 2: resume at the committed position. */
    assert_int_equal(bc_crawl_state_open(dir, NULL, 0, &s, &err), BC_OK);
    struct bc_crawl_state_info si;
    bc_crawl_state_info(s, &si);
    assert_true(si.resumed);
    assert_true(si.warc.offset > 0);
    size_t before;
    free(slurp(name, &before));
    assert_true(before > si.warc.offset); /* uncommitted records to cut */
    assert_int_equal(bc_warc_open_at(name, 0, info, &si.warc, &w), BC_OK);
    config(&cfg, &r2, w);
    cfg.state = s;
    cfg.max_pages = 40;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    assert_int_equal(bc_crawler_run(c), BC_OK);
    bc_crawl_state_info(s, &si);
    assert_true(si.refetched_now >= 1); /* the last turn of run 1 */
    bc_crawler_free(c);
    assert_int_equal(bc_warc_free(w), BC_OK);
    bc_crawl_state_close(s);

    /* The crawl's pages: run 1's that were committed (not fetched again)
     * and run 2's; 40 in all, each URL once. */
    static struct page all[MAX_PAGES];
    size_t n = 0;
    for (size_t i = 0; i < r1.pages; i++) {
        bool again = false;
        for (size_t j = 0; j < r2.pages; j++)
            again = again || strcmp(r1.page[i].url, r2.page[j].url) == 0;
        if (!again)
            all[n++] = r1.page[i];
    }
    assert_true(n < r1.pages);
    for (size_t j = 0; j < r2.pages; j++)
        all[n++] = r2.page[j];
    assert_int_equal(n, 40);

    read_warc(name, &wf); /* no torn record: every record parses */
    int responses = check_pairs(&wf);
    char robots[128];
    url_of(robots, sizeof(robots), "/robots.txt");
    assert_int_equal(responses_for(&wf, robots), 1);
    assert_int_equal(responses, 40 + 1);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(all[i].warc_file, name);
        assert_int_equal(responses_for(&wf, all[i].url), 1);
        at_offset(&wf, &all[i]);
    }
    free_warc(&wf);
}

/*
 * Records are held in memory up to 1 MiB (warc.c, MEMORY FIRST): a crawl
 * of small pages opens no spool, so with room for a socket and one more
 * descriptor it completes, as with room for three: one response record
 * per page. (Before, with room for two every transfer found no descriptor
 * for its request record's spool and was given back; a spool that cannot
 * be opened, now only for a block over 1 MiB, is still a local failure of
 * its transfer: test_warc's test_spool_emfile.)
 */
static void test_spool_descriptors(void **state)
{
    (void)state;
    static struct run r;
    static struct warc_file wf;
    char name[300];
    snprintf(name, sizeof(name), "%s/fds.warc.gz", base);
    for (unsigned spare = 2; spare <= 3; spare++) {
        memset(&r, 0, sizeof(r));
        unlink(name);
        struct bc_warc *w = NULL;
        assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
        struct bc_crawler_config cfg;
        config(&cfg, &r, w);
        cfg.frontier.max_depth = 1;
        cfg.local_wait_ms = 300;
        struct bc_crawler *c = NULL;
        assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
        add_seed(c, "/ok");
        struct rlimit saved;
        limit_fds(spare, &saved);
        enum bc_status st = bc_crawler_run(c);
        release_fds(&saved);
        int err = 0;
        assert_int_equal(bc_crawler_warc_error(c, &err), BC_OK);
        struct bc_crawler_stats s;
        bc_crawler_stats(c, &s);
        assert_int_equal(st, BC_OK);
        assert_int_equal(s.local_failures, 0);
        assert_int_equal(r.pages, 3);
        for (size_t i = 0; i < r.pages; i++)
            assert_false(r.page[i].failed);
        bc_crawler_free(c);
        assert_int_equal(bc_warc_free(w), BC_OK);
        read_warc(name, &wf); /* every record whole */
        int responses = check_pairs(&wf);
        /* The pages and robots.txt, once each. */
        assert_int_equal(responses, 3 + 1);
        for (size_t i = 0; i < r.pages; i++) {
            assert_int_equal(responses_for(&wf, r.page[i].url), 1);
            at_offset(&wf, &r.page[i]);
        }
        free_warc(&wf);
    }
}

/* A write error stops the crawl: the step reports it, with errno, and
 * nothing more is written. */
static void test_write_error(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    char name[300];
    snprintf(name, sizeof(name), "%s/full.warc", base);
    struct bc_warc *w = NULL;
    assert_int_equal(bc_warc_create(name, 0, info, &w), BC_OK);
    struct bc_crawler_config cfg;
    config(&cfg, &r, w);
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    assert_int_equal(bc_crawler_warc_error(c, NULL), BC_OK);
    add_seed(c, "/ok");
    /* Files may not grow past 1 KiB: the first record fails (EFBIG). */
    struct rlimit old, small = {1024, 1024};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    enum bc_status st = BC_OK;
    bool done = false;
    for (int i = 0; i < 100 && st == BC_OK && !done; i++)
        st = bc_crawler_step(c, 1000, &done);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    assert_int_equal(st, BC_ERR_IO);
    int e = 0;
    assert_int_equal(bc_crawler_warc_error(c, &e), BC_ERR_IO);
    assert_int_equal(e, EFBIG);
    assert_int_equal(bc_crawler_step(c, 0, &done), BC_ERR_IO); /* sticky */
    assert_int_equal(bc_crawler_sync(c), BC_ERR_IO);
    bc_crawler_free(c);
    bc_warc_free(w);
    int e2 = 0;
    assert_int_equal(bc_crawler_warc_error(NULL, &e2), BC_OK);
    assert_int_equal(e2, 0);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof(base), "%s/test_crawl_warc.XXXXXX",
             tmp ? tmp : "/tmp");
    if (!mkdtemp(base))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crawl_archived),
        cmocka_unit_test(test_crawl_rotation),
        cmocka_unit_test(test_robots_cut),
        cmocka_unit_test(test_sitemap_cut_archived),
        cmocka_unit_test(test_crawl_resume),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_spool_descriptors),
    };
    int rc = cmocka_run_group_tests(tests, server_start, server_stop);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
