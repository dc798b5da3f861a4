/*
 * test_crawler.c - the crawl loop module (bloomcrawl/crawler.h) in-process,
 * against a real HTTP server.
 *
 * The group setup starts tests/http_fixture_server.py (python3, found by
 * CMake) on 127.0.0.1 on a free port and reads the port from its stdout;
 * the teardown kills it. Its routes make small sites: /ok links four
 * pages of which one is nofollow, /r/N redirects to /r/N+1 for ever,
 * /fan/N links ten new pages (an endless site). Every crawl is kept on the
 * server with an include pattern, so nothing outside 127.0.0.0/8 is ever
 * contacted. Politeness delays are zero (or measured by a fake clock), so
 * the tests take a fraction of a second each; nothing asserts on timings.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bloomcrawl/crawler.h"
#include "bloomcrawl/simhash.h"
#include "alloc_fail.h"
#include "fd_limit.h"
#include "fixture_server.h"
#include "latency_int.h"
#include "skip.h"
#include "state_int.h"

static char include_pattern[64]; /* the server's URLs, "...:PORT/" + "*" */
static const char *include_list[1] = {include_pattern};

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

#define MAX_PAGES 64

struct seen_page {
    char path[128]; /* the URL's path and query */
    int http;
    unsigned depth, redirects;
    uint64_t links;
    bool failed;
    enum bc_crawler_error_kind kind;
    char location[64];
    char referrer[128]; /* its path, "" for none */
    bool skipped;
    uint64_t bytes;
    unsigned retries;
    enum bc_fault fault;
    unsigned retry_fetches; /* on_fetch calls with retry before this page */
    char near_of[128];      /* near_duplicate_of's path, "" for none */
    unsigned near_distance;
    uint64_t near_links_skipped;
};

struct run {
    struct bc_crawler *crawler;
    struct seen_page page[MAX_PAGES];
    size_t pages;
    size_t stop_after;      /* on_page calls bc_crawler_stop() at this count */
    size_t pause_after;     /* on_page calls bc_crawler_pause() at this count */
    uint64_t seeds;         /* seeds added */
    bool check_one_event;   /* compare the frontier's adds in on_page */
    enum bc_status step_in; /* bc_crawler_step() from on_page */
    uint64_t fake_now;      /* the fake clock, when used */
    uint64_t clock_calls;
    uint64_t fetches, robots_fetches, sitemap_fetches; /* on_fetch calls */
    uint64_t wall; /* the fake recrawl clock (ms since the epoch) */
    /* The shared page budget (page_budget): at most budget_max tokens
     * out at once; takes granted, refused, tokens given back. */
    uint64_t budget_max, budget_used, takes, refusals, gives;
    /* on_fetch calls of attempts queued again (page.retry), by path. */
    char retry_path[MAX_PAGES * 4][128];
    size_t retry_count;
};

static void on_page(void *ctx, const struct bc_crawler_page *p)
{
    struct run *r = ctx;
    assert_true(r->pages < MAX_PAGES);
    struct seen_page *s = &r->page[r->pages++];
    const char *path = strchr(p->url + strlen("http://"), '/');
    assert_non_null(path);
    assert_int_equal(strlen(p->url), p->url_len);
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->http = p->http_status;
    s->depth = p->depth;
    s->redirects = p->redirects;
    s->links = p->links;
    s->failed = p->failed;
    s->kind = p->error_kind;
    s->skipped = p->skipped;
    s->bytes = p->bytes;
    s->retries = p->retries;
    s->fault = p->fault;
    assert_false(p->retry); /* a retried attempt is no page */
    for (size_t i = 0; i < r->retry_count; i++)
        s->retry_fetches += strcmp(r->retry_path[i], s->path) == 0;
    assert_int_equal(p->kind, BC_CRAWLER_FETCH_PAGE);
    assert_int_equal(strlen(p->origin), p->origin_len);
    assert_memory_equal(p->url, p->origin, p->origin_len);
    if (p->referrer) {
        assert_int_equal(strlen(p->referrer), p->referrer_len);
        snprintf(s->referrer, sizeof(s->referrer), "%s",
                 strchr(p->referrer + strlen("http://"), '/'));
    }
    if (p->location)
        snprintf(s->location, sizeof(s->location), "%.*s", (int)p->location_len,
                 p->location);
    assert_non_null(p->error_text);
    assert_true(p->failed == (p->error_text[0] != 0));
    if (p->near_duplicate_of) {
        assert_int_equal(strlen(p->near_duplicate_of),
                         p->near_duplicate_of_len);
        assert_null(p->duplicate_of); /* exact, or near: never both */
        snprintf(s->near_of, sizeof(s->near_of), "%s",
                 strchr(p->near_duplicate_of + strlen("http://"), '/'));
    }
    s->near_distance = p->near_distance;
    s->near_links_skipped = p->near_links_skipped;

    struct bc_crawler_stats st;
    bc_crawler_stats(r->crawler, &st);
    assert_int_equal(st.pages, r->pages); /* counted before on_page */
    if (r->check_one_event) {
        /* The page's links were admitted before on_page, and no link of a
         * page still in flight was: every bc_frontier_add so far is a
         * seed, a link of a reported page or a redirect target. */
        struct bc_frontier_stats fs;
        bc_frontier_stats(bc_crawler_frontier(r->crawler), 0, &fs);
        assert_int_equal(fs.added, r->seeds + st.links - st.nofollow_skipped +
                                       st.redirects);
    }
    r->step_in = bc_crawler_step(r->crawler, 0, NULL);
    if (r->stop_after && r->pages == r->stop_after)
        bc_crawler_stop(r->crawler);
    if (r->pause_after && r->pages == r->pause_after)
        bc_crawler_pause(r->crawler, true);
}

static void on_fetch(void *ctx, const struct bc_crawler_page *p)
{
    struct run *r = ctx;
    r->fetches++;
    if (p->kind == BC_CRAWLER_FETCH_ROBOTS) {
        r->robots_fetches++;
        assert_null(p->referrer);
        assert_non_null(strstr(p->url, "/robots.txt"));
    } else if (p->kind == BC_CRAWLER_FETCH_SITEMAP) {
        r->sitemap_fetches++;
        assert_null(p->referrer);
        assert_true(strstr(p->url, "/sitemap.xml") || strstr(p->url, "/sm/") ||
                    strstr(p->url, "/sm.xml"));
    } else if (p->retry) {
        /* An attempt queued again: on_fetch only, before its page. */
        assert_true(r->retry_count <
                    sizeof(r->retry_path) / sizeof(r->retry_path[0]));
        assert_int_equal(p->fault, BC_FAULT_TRANSIENT);
        snprintf(r->retry_path[r->retry_count++], sizeof(r->retry_path[0]),
                 "%s", strchr(p->url + strlen("http://"), '/'));
    } else {
        /* After on_page, for the same page. */
        assert_true(r->pages > 0);
        assert_non_null(strstr(p->url, r->page[r->pages - 1].path));
    }
}

static uint64_t fake_clock(void *ctx)
{
    struct run *r = ctx;
    r->clock_calls++;
    r->fake_now += 600000; /* ten minutes per look at the clock */
    return r->fake_now;
}

/* A configuration for the fixture server: no politeness delay, robots.txt
 * (a 404 there: allow all) obeyed, the crawl kept on the server. */
static void config_for_server(struct bc_crawler_config *cfg, struct run *r)
{
    bc_crawler_config_init(cfg);
    cfg->frontier.user_agent = "test_crawler/1.0";
    cfg->frontier.min_delay_ms = 0;
    cfg->frontier.include = include_list;
    cfg->frontier.include_count = 1;
    cfg->fetcher.timeout_ms = 10000;
    cfg->on_page = on_page;
    cfg->on_fetch = on_fetch;
    cfg->ctx = r;
}

static void add_seed(struct run *r, const char *path)
{
    char url[128];
    url_of(url, sizeof(url), path);
    enum bc_frontier_reason why;
    assert_int_equal(
        bc_crawler_add_seed(r->crawler, url, strlen(url), &why, NULL), BC_OK);
    assert_int_equal(why, BC_ADMIT_QUEUED);
    r->seeds++;
}

/* What find() gives for a page on_page never saw: never NULL, so that a
 * test can read it after checking it (the compiler cannot know that a
 * failed cmocka assertion does not return). */
static const struct seen_page no_page;

static const struct seen_page *find(const struct run *r, const char *path)
{
    for (size_t i = 0; i < r->pages; i++)
        if (strcmp(r->page[i].path, path) == 0)
            return &r->page[i];
    return &no_page;
}

/* ---- a small site, run to its end ------------------------------------ */

static void test_small_site(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.concurrency = 3;
    cfg.frontier.per_host_concurrency = 3;
    r.check_one_event = true;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/ok");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);

    /* /ok (depth 0) links /page1 and /page2?a=1&b=2 (both 404 here), /ext
     * (nofollow: not followed) and, through <link rel=canonical>, itself
     * on port 80, outside the include pattern (a stylesheet is no link).
     * The 404 pages' bodies are not searched for links. */
    const struct seen_page *ok = find(&r, "/ok");
    assert_true(ok != &no_page);
    assert_int_equal(ok->http, 200);
    assert_int_equal(ok->depth, 0);
    assert_int_equal(ok->links, 4);
    assert_false(ok->failed);
    assert_string_equal(ok->referrer, ""); /* a seed */
    assert_int_equal(r.pages, 3);
    assert_int_equal(r.fetches, 4); /* on_fetch: the pages and robots.txt */
    assert_int_equal(r.robots_fetches, 1);
    const char *const page404[] = {"/page1", "/page2?a=1&b=2"};
    for (size_t i = 0; i < 2; i++) {
        const struct seen_page *p = find(&r, page404[i]);
        assert_true(p != &no_page);
        assert_int_equal(p->http, 404);
        assert_int_equal(p->depth, 1);
        assert_int_equal(p->links, 0); /* links of 2xx pages only */
        assert_false(p->failed);
        assert_string_equal(p->referrer, "/ok");
    }
    assert_true(find(&r, "/ext") == &no_page);

    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.seeds, 1);
    assert_int_equal(s.seeds_admitted, 1);
    assert_int_equal(s.pages, 3);
    assert_int_equal(s.handed_out, 3);
    assert_int_equal(s.status_class[2], 1);
    assert_int_equal(s.status_class[4], 2);
    assert_int_equal(s.robots_fetched, 1);
    assert_int_equal(s.links, 4);
    assert_int_equal(s.nofollow_skipped, 1);
    assert_int_equal(s.redirects, 0);
    assert_int_equal(s.in_flight, 0);
    assert_int_equal(s.not_started, 0);
    for (int k = 0; k < BC_CRAWLER_ERR_KIND_COUNT; k++)
        assert_int_equal(s.errors[k], 0);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.queued, 0);
    assert_int_equal(fs.handed_out, 3);
    assert_int_equal(fs.reasons[BC_ADMIT_EXCLUDED], 1); /* port 80 */
    assert_int_equal(fs.robots_fetches, 1);
    assert_int_equal(fs.robots_unavailable, 1); /* 404: allow all */

    /* Over: another step does nothing and says so. */
    bool done = false;
    assert_int_equal(bc_crawler_step(r.crawler, 0, &done), BC_OK);
    assert_true(done);
    assert_int_equal(r.pages, 3);
    /* on_page may not step the crawler it is called from. */
    assert_int_equal(r.step_in, BC_ERR_INVALID_ARG);
    bc_crawler_free(r.crawler);
}

/* ---- near-duplicates (crawler.c, NEAR-DUPLICATES) --------------------- */

/* Crawl the fixture's /near/ pages (one at a time, in link order) with
 * near_dedup on (mode), or off. */
static void near_crawl(struct run *r, bool on, enum bc_crawler_near_mode mode)
{
    memset(r, 0, sizeof(*r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, r);
    cfg.concurrency = 1;
    cfg.frontier.per_host_concurrency = 1;
    cfg.near_dedup = on;
    cfg.near_mode = mode;
    assert_int_equal(bc_crawler_create(&cfg, &r->crawler), BC_OK);
    add_seed(r, "/near/index");
    assert_int_equal(bc_crawler_run(r->crawler), BC_OK);
}

/* The crawler's bookkeeping of near-duplicates: /near/edit (one word of
 * 400 changed) and /near/sid1 (the same text, other links) name
 * /near/orig, the first page of their cluster, with their distances (the
 * fixture's edit is 1 bit, the copy 0); /near/other starts a cluster of
 * its own; the pages of fewer than 32 shingles (the index, /near/short,
 * the copy's two pages) are counted too short. The index holds one
 * fingerprint per cluster. SKIP_LINKS: the copy's two links are not
 * admitted (counted on the page and in the stats), so its pages are
 * never fetched. Off: nothing reported, nothing counted. */
static void test_near_duplicates(void **state)
{
    (void)state;
    static struct run r;
    near_crawl(&r, true, BC_CRAWLER_NEAR_FOLLOW);
    assert_int_equal(r.pages, 8);
    assert_string_equal(find(&r, "/near/orig")->near_of, "");
    assert_string_equal(find(&r, "/near/edit")->near_of, "/near/orig");
    assert_int_equal(find(&r, "/near/edit")->near_distance, 1);
    assert_string_equal(find(&r, "/near/sid1")->near_of, "/near/orig");
    assert_int_equal(find(&r, "/near/sid1")->near_distance, 0);
    assert_int_equal(find(&r, "/near/sid1")->near_links_skipped, 0);
    assert_string_equal(find(&r, "/near/other")->near_of, "");
    assert_string_equal(find(&r, "/near/short")->near_of, "");
    assert_true(find(&r, "/near/sid1/x") != &no_page);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.near_duplicates, 2);
    assert_int_equal(s.fingerprints, 2);
    assert_int_equal(s.too_short, 4);
    assert_int_equal(s.near_links_skipped, 0);
    bc_crawler_free(r.crawler);

    near_crawl(&r, true, BC_CRAWLER_NEAR_SKIP_LINKS);
    assert_int_equal(r.pages, 6);
    assert_true(find(&r, "/near/sid1/x") == &no_page);
    assert_true(find(&r, "/near/sid1/y") == &no_page);
    assert_int_equal(find(&r, "/near/sid1")->near_links_skipped, 2);
    assert_int_equal(find(&r, "/near/sid1")->links, 2); /* found */
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.near_duplicates, 2);
    assert_int_equal(s.near_links_skipped, 2);
    assert_int_equal(s.too_short, 2);
    bc_crawler_free(r.crawler);

    near_crawl(&r, false, BC_CRAWLER_NEAR_FOLLOW);
    assert_int_equal(r.pages, 8);
    assert_string_equal(find(&r, "/near/edit")->near_of, "");
    assert_string_equal(find(&r, "/near/sid1")->near_of, "");
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.near_duplicates + s.fingerprints + s.too_short, 0);
    bc_crawler_free(r.crawler);

    /* near_k beyond BC_SIMHASH_MAX_K: refused by the index. */
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.near_dedup = true;
    cfg.near_k = BC_SIMHASH_MAX_K + 1;
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    assert_null(c);
}

/* The process's virtual size in bytes (VmSize of /proc/self/status). */
static uint64_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    assert_non_null(f);
    char line[256];
    uint64_t kib = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmSize: %" SCNu64, &kib) == 1)
            break;
    fclose(f);
    assert_true(kib > 0);
    return kib * 1024;
}

/* What bc_crawler_create() reserves for a crawl that expects 10^9 URLs. */
static uint64_t reserved_at_expect_1e9(bool near)
{
    struct bc_crawler_config cfg;
    bc_crawler_config_init(&cfg);
    cfg.frontier.seen.expected = 1000000000;
    cfg.near_dedup = near;
    uint64_t before = vm_size();
    struct bc_crawler *c;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    uint64_t grown = vm_size() - before;
    bc_crawler_free(c);
    return grown;
}

/* The near-duplicate index is sized for at most 10^7 fingerprints: a
 * large --expect sizes the seen-test, not 8.6 GB of buckets (it did). */
static void test_near_index_bounded(void **state)
{
    (void)state;
    uint64_t off = reserved_at_expect_1e9(false);
    uint64_t on = reserved_at_expect_1e9(true);
    assert_true(on < off + (uint64_t)64 * 1024 * 1024);
}

/* ---- redirects: admitted as URLs, hop counts, the chain cut ----------- */

static void test_redirect_chain(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_redirects = 3;
    r.check_one_event = true;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/r/0");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);

    /* /r/0 -> /r/1 -> /r/2 -> /r/3 are fetched, each one hop further at
     * the seed's depth; /r/3's target would be hop 4: refused, and /r/3
     * is the error. */
    assert_int_equal(r.pages, 4);
    for (unsigned i = 0; i < 4; i++) {
        char path[16], next[16];
        snprintf(path, sizeof(path), "/r/%u", i);
        snprintf(next, sizeof(next), "/r/%u", i + 1);
        const struct seen_page *p = find(&r, path);
        assert_true(p != &no_page);
        assert_int_equal(p->http, 301);
        assert_int_equal(p->depth, 0);
        assert_int_equal(p->redirects, i);
        assert_string_equal(p->location, next);
        assert_int_equal(p->failed, i == 3);
        /* A redirect target's referrer: the URL that redirected. */
        char from[16];
        snprintf(from, sizeof(from), "/r/%u", i - 1);
        assert_string_equal(p->referrer, i == 0 ? "" : from);
    }
    assert_int_equal(find(&r, "/r/3")->kind, BC_CRAWLER_ERR_TOO_MANY_REDIRECTS);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.redirects, 4);
    assert_int_equal(s.status_class[3], 3);
    assert_int_equal(s.errors[BC_CRAWLER_ERR_TOO_MANY_REDIRECTS], 1);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.reasons[BC_ADMIT_TOO_MANY_REDIRECTS], 1);
    bc_crawler_free(r.crawler);
}

/* ---- a clean stop in the middle of an endless site -------------------- */

/* bc_crawler_pause(): nothing handed out while paused, from the start or
 * mid-crawl (the transfers in flight finish and are reported), the crawl
 * not over while paused; resumed, it goes on; a stop while paused ends
 * it. */
static void test_pause(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.concurrency = 4;
    cfg.frontier.per_host_concurrency = 4;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/fan/1");
    bc_crawler_pause(r.crawler, true);
    bool done = true;
    struct bc_crawler_stats s;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(bc_crawler_step(r.crawler, 20, &done), BC_OK);
        assert_false(done);
    }
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(r.fetches, 0); /* not even robots.txt */
    assert_int_equal(s.handed_out, 0);

    /* Resumed, then paused from on_page at the tenth page. */
    r.pause_after = 10;
    bc_crawler_pause(r.crawler, false);
    while (r.pages < 10) {
        assert_int_equal(bc_crawler_step(r.crawler, 100, &done), BC_OK);
        assert_false(done);
    }
    for (int i = 0; i < 20; i++) /* the transfers in flight finish */
        assert_int_equal(bc_crawler_step(r.crawler, 20, &done), BC_OK);
    assert_false(done);
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.in_flight, 0);
    assert_true(r.pages >= 10 && r.pages <= 10 + 3);
    assert_int_equal(s.handed_out, r.pages);
    uint64_t fetches = r.fetches;
    for (int i = 0; i < 3; i++)
        assert_int_equal(bc_crawler_step(r.crawler, 20, &done), BC_OK);
    assert_false(done);
    assert_int_equal(r.fetches, fetches); /* nothing while paused */

    /* Resumed: pages again; stopped while paused: over. */
    bc_crawler_pause(r.crawler, false);
    size_t before = r.pages;
    while (r.pages < before + 3)
        assert_int_equal(bc_crawler_step(r.crawler, 100, &done), BC_OK);
    bc_crawler_pause(r.crawler, true);
    bc_crawler_stop(r.crawler);
    for (int i = 0; i < 50 && !done; i++)
        assert_int_equal(bc_crawler_step(r.crawler, 100, &done), BC_OK);
    assert_true(done);
    bc_crawler_pause(NULL, true); /* a no-op */
    assert_int_equal(bc_crawler_wakeup(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawler_wakeup(r.crawler), BC_OK);
    bc_crawler_free(r.crawler);
}

static void test_stop_mid_crawl(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.concurrency = 4;
    cfg.frontier.per_host_concurrency = 4;
    r.stop_after = 10;
    r.check_one_event = true;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/fan/1");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);

    /* No transfer started after the stop; those in flight finished and
     * were reported: every page handed out came back, at most
     * concurrency - 1 of them after the tenth. */
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_true(r.pages >= 10);
    assert_true(r.pages <= 10 + 3);
    assert_int_equal(s.pages, r.pages);
    assert_int_equal(s.handed_out, s.pages);
    assert_int_equal(s.in_flight, 0);
    assert_int_equal(s.status_class[2], s.pages);
    /* Each /fan page links ten new pages. */
    assert_int_equal(s.links, 10 * s.pages);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.in_flight, 0);
    assert_int_equal(fs.queued, 1 + 10 * s.pages - s.pages);

    /* Stopped for good: more steps start nothing. */
    bool done = false;
    assert_int_equal(bc_crawler_step(r.crawler, 0, &done), BC_OK);
    assert_true(done);
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.handed_out, r.pages);
    bc_crawler_free(r.crawler);
}

/* ---- the caller's own loop, the caller's clock ------------------------ */

static void test_step_own_loop_fake_clock(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    /* Ten minutes between requests to a host: only a clock that moves ten
     * minutes per reading lets this crawl end within the test. */
    cfg.frontier.min_delay_ms = 600000;
    cfg.frontier.max_depth = 1;
    cfg.clock = fake_clock;
    cfg.max_pages = 3;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/ok");
    bool done = false;
    unsigned steps = 0;
    while (!done) {
        assert_int_equal(bc_crawler_step(r.crawler, 20, &done), BC_OK);
        steps++;
        assert_true(steps < 100000);
    }
    /* max_pages: three pages handed out, all reported. */
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.handed_out, 3);
    assert_int_equal(s.pages, 3);
    assert_int_equal(r.pages, 3);
    assert_true(find(&r, "/ok") != &no_page);
    assert_true(r.clock_calls >= 3);
    bc_crawler_free(r.crawler);
}

/* ---- freeing with transfers in flight --------------------------------- */

static void test_free_in_flight(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.obey_robots = false;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/slow"); /* answers after 5 s */
    bool done = true;
    assert_int_equal(bc_crawler_step(r.crawler, 0, &done), BC_OK);
    assert_false(done);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.in_flight, 1);
    /* Abandoned: no on_page, nothing leaked (AddressSanitizer). */
    bc_crawler_free(r.crawler);
    assert_int_equal(r.pages, 0);
}

/* ---- failures: error kinds through the crawler ------------------------ */

static void test_error_kind(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.obey_robots = false;
    cfg.fetcher.max_body_bytes = 1 << 20;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/big"); /* 2 MiB */
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 1);
    assert_true(r.page[0].failed);
    assert_int_equal(r.page[0].kind, BC_CRAWLER_ERR_TOO_LARGE);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.errors[BC_CRAWLER_ERR_TOO_LARGE], 1);
    assert_int_equal(s.status_class[2], 0);
    bc_crawler_free(r.crawler);
}

/* ---- transient faults retried -------------------------------------------- */

/*
 * Each transient kind against a path that fails twice, then answers 200:
 * a reset, an empty reply, a timeout, 408, 429, 500, 502, 503, 504 (no
 * Retry-After: backoff_ms). Each page is reported once (on_page), fetched
 * with its 2 retries; its 2 failed attempts are on_fetch calls with retry
 * set. A path that fails more often than max_retries is given up: its
 * page's fault is transient, after max_retries retries.
 */
static void test_transient_retried(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.obey_robots = false;
    cfg.frontier.sitemaps = false;
    cfg.frontier.retry_delay_ms = 10;
    cfg.frontier.retry_jitter = 0.0;
    cfg.frontier.backoff_ms = 20;
    cfg.frontier.max_retries = 3;
    cfg.frontier.host_failures = 0; /* no pause: the kinds interleave */
    cfg.frontier.per_host_concurrency = 4;
    cfg.concurrency = 4;
    cfg.fetcher.timeout_ms = 1000; /* timeout: 3 s */
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    static const char *const kinds[] = {
        "reset", "empty", "timeout", "408", "429", "500", "502", "503", "504"};
    const size_t nk = sizeof(kinds) / sizeof(kinds[0]);
    char path[64];
    for (size_t i = 0; i < nk; i++) {
        snprintf(path, sizeof(path), "/flaky/%s/2/p", kinds[i]);
        add_seed(&r, path);
    }
    add_seed(&r, "/flaky/500/9/p"); /* more failures than retries */
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);

    assert_int_equal(r.pages, nk + 1);
    for (size_t i = 0; i < nk; i++) {
        snprintf(path, sizeof(path), "/flaky/%s/2/p", kinds[i]);
        const struct seen_page *p = find(&r, path);
        if (p == &no_page || p->http != 200 || p->retries != 2 ||
            p->retry_fetches != 2)
            print_error("%s: http %d, retries %u, retried fetches %u\n", path,
                        p->http, p->retries, p->retry_fetches);
        assert_int_equal(p->http, 200);
        assert_false(p->failed);
        assert_int_equal(p->fault, BC_FAULT_NONE);
        assert_int_equal(p->retries, 2);
        assert_int_equal(p->retry_fetches, 2);
    }
    const struct seen_page *lost = find(&r, "/flaky/500/9/p");
    assert_int_equal(lost->http, 500);
    assert_int_equal(lost->fault, BC_FAULT_TRANSIENT);
    assert_int_equal(lost->retries, 3);
    assert_int_equal(lost->retry_fetches, 3);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.retried, 2 * nk + 3);
    assert_int_equal(s.transient_given_up, 1);
    assert_int_equal(s.pages, nk + 1);
    assert_int_equal(s.handed_out, nk + 1); /* a page once, retries aside */
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.retried, 2 * nk + 3);
    assert_int_equal(fs.retries_exhausted, 1);
    bc_crawler_free(r.crawler);
}

/*
 * max_pages counts pages, not attempts: a URL retried twice is one of the
 * 4 pages of a crawl limited to 4 (the retried attempts spent the limit:
 * the retried URL was never fetched, 3 pages).
 */
static void test_max_pages_retries(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.obey_robots = false;
    cfg.frontier.sitemaps = false;
    cfg.frontier.retry_delay_ms = 10;
    cfg.frontier.retry_jitter = 0.0;
    cfg.frontier.backoff_ms = 20;
    cfg.max_pages = 4;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/flaky/503/2/m");
    add_seed(&r, "/flaky/503/0/a");
    add_seed(&r, "/flaky/503/0/b");
    add_seed(&r, "/flaky/503/0/c");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 4);
    const struct seen_page *m = find(&r, "/flaky/503/2/m");
    assert_int_equal(m->http, 200);
    assert_int_equal(m->retries, 2);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.handed_out, 4);
    assert_int_equal(s.retried, 2);
    bc_crawler_free(r.crawler);
}

/* The fault table (DESIGN 3.4), row by row: every fetch status and the
 * HTTP statuses that say "later", with and without a system errno. */
static void test_fault_table(void **state)
{
    (void)state;
    static const struct {
        enum bc_status st;
        int http, err;
        enum bc_fault want;
    } rows[] = {
        {BC_OK, 200, 0, BC_FAULT_NONE},
        {BC_OK, 404, 0, BC_FAULT_NONE},
        {BC_OK, 501, 0, BC_FAULT_NONE},
        {BC_OK, 408, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 429, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 500, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 502, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 503, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 504, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 522, 0, BC_FAULT_TRANSIENT},
        {BC_OK, 524, 0, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_DNS, 0, 0, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_CONNECT, 0, ECONNREFUSED, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_CONNECT, 0, EMFILE, BC_FAULT_LOCAL},
        {BC_ERR_FETCH_CONNECT, 0, ENFILE, BC_FAULT_LOCAL},
        {BC_ERR_FETCH_CONNECT, 0, EADDRNOTAVAIL, BC_FAULT_LOCAL},
        {BC_ERR_FETCH_TIMEOUT, 0, 0, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_TOO_SLOW, 0, 0, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_NETWORK, 0, ECONNRESET, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_TLS, 0, ECONNRESET, BC_FAULT_TRANSIENT},
        {BC_ERR_FETCH_TLS, 0, 0, BC_FAULT_PERMANENT},
        {BC_ERR_FETCH_PROTOCOL, 0, 0, BC_FAULT_PERMANENT},
        {BC_ERR_FETCH_TOO_LARGE, 200, 0, BC_FAULT_PERMANENT},
        {BC_ERR_FETCH_HEADERS, 0, 0, BC_FAULT_PERMANENT},
        {BC_ERR_FETCH_URL, 0, 0, BC_FAULT_PERMANENT},
        {BC_ERR_FETCH_OTHER, 0, 0, BC_FAULT_PERMANENT},
        {BC_ERR_NOMEM, 0, ENOMEM, BC_FAULT_LOCAL},
        {BC_ERR_NOMEM, 0, 0, BC_FAULT_LOCAL},
        {BC_ERR_IO, 0, ENOSPC, BC_FAULT_LOCAL},
        {BC_OK, 200, ENOBUFS, BC_FAULT_LOCAL},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        enum bc_fault got =
            bc_crawler_fault_of(rows[i].st, rows[i].http, rows[i].err);
        if (got != rows[i].want)
            print_error("row %zu: %s, %d, errno %d: %s, want %s\n", i,
                        bc_strerror(rows[i].st), rows[i].http, rows[i].err,
                        bc_fault_name(got), bc_fault_name(rows[i].want));
        assert_int_equal(got, rows[i].want);
    }
    assert_string_equal(bc_fault_name(BC_FAULT_NONE), "none");
    assert_string_equal(bc_fault_name(BC_FAULT_PERMANENT), "permanent");
    assert_string_equal(bc_fault_name(BC_FAULT_TRANSIENT), "transient");
    assert_string_equal(bc_fault_name(BC_FAULT_LOCAL), "local");
}

static void test_error_kind_names(void **state)
{
    (void)state;
    static const struct {
        enum bc_status st;
        enum bc_crawler_error_kind kind;
        const char *name;
    } map[] = {
        {BC_ERR_FETCH_TIMEOUT, BC_CRAWLER_ERR_TIMEOUT, "timeout"},
        {BC_ERR_FETCH_TOO_LARGE, BC_CRAWLER_ERR_TOO_LARGE, "too_large"},
        {BC_ERR_FETCH_HEADERS, BC_CRAWLER_ERR_TOO_LARGE, "too_large"},
        {BC_ERR_FETCH_TOO_SLOW, BC_CRAWLER_ERR_TOO_SLOW, "too_slow"},
        {BC_ERR_FETCH_CONNECT, BC_CRAWLER_ERR_CONNECT, "connect"},
        {BC_ERR_FETCH_DNS, BC_CRAWLER_ERR_DNS, "dns"},
        {BC_ERR_FETCH_TLS, BC_CRAWLER_ERR_TLS, "tls"},
        {BC_ERR_FETCH_PROTOCOL, BC_CRAWLER_ERR_PROTOCOL, "protocol"},
        {BC_ERR_FETCH_NETWORK, BC_CRAWLER_ERR_NETWORK, "network"},
        {BC_ERR_FETCH_OTHER, BC_CRAWLER_ERR_OTHER, "other"},
        {BC_ERR_FETCH_ABORTED, BC_CRAWLER_ERR_OTHER, "other"},
        {BC_ERR_FETCH_URL, BC_CRAWLER_ERR_OTHER, "other"},
        {BC_ERR_NOMEM, BC_CRAWLER_ERR_OTHER, "other"},
        {BC_OK, BC_CRAWLER_ERR_OTHER, "other"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        assert_int_equal(bc_crawler_error_kind_of(map[i].st), map[i].kind);
        assert_string_equal(bc_crawler_error_kind_name(map[i].kind),
                            map[i].name);
    }
    assert_string_equal(
        bc_crawler_error_kind_name(BC_CRAWLER_ERR_TOO_MANY_REDIRECTS),
        "too_many_redirects");
    assert_string_equal(bc_crawler_error_kind_name(BC_CRAWLER_ERR_KIND_COUNT),
                        "unknown");
    /* Every kind has its own name. */
    for (int a = 0; a < BC_CRAWLER_ERR_KIND_COUNT; a++)
        for (int b = a + 1; b < BC_CRAWLER_ERR_KIND_COUNT; b++)
            assert_string_not_equal(
                bc_crawler_error_kind_name((enum bc_crawler_error_kind)a),
                bc_crawler_error_kind_name((enum bc_crawler_error_kind)b));
}

/* ---- content types, per-host counters ---------------------------------- */

/* /mixed links a 2 MiB application/octet-stream (/big), a text/plain
 * (/text) and an XHTML page (/xhtml, which links a 404). */
static void crawl_mixed(struct run *r, const char *const *accept,
                        size_t n_accept, const char *const *reject,
                        size_t n_reject)
{
    memset(r, 0, sizeof(*r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, r);
    cfg.frontier.max_depth = 1;
    cfg.accept_types = accept;
    cfg.accept_type_count = n_accept;
    cfg.reject_types = reject;
    cfg.reject_type_count = n_reject;
    assert_int_equal(bc_crawler_create(&cfg, &r->crawler), BC_OK);
    add_seed(r, "/mixed");
    assert_int_equal(bc_crawler_run(r->crawler), BC_OK);
}

static void test_content_types(void **state)
{
    (void)state;
    static struct run r;
    /* Reject application/octet-stream (any case): /big stops at its
     * headers, nothing of its body read; the others as usual. */
    static const char *const reject[] = {"APPLICATION/Octet-Stream"};
    crawl_mixed(&r, NULL, 0, reject, 1);
    assert_int_equal(r.pages, 4);
    const struct seen_page *big = find(&r, "/big");
    assert_true(big != &no_page);
    assert_true(big->skipped);
    assert_int_equal(big->http, 200);
    assert_int_equal(big->bytes, 0);
    assert_false(big->failed);
    assert_false(find(&r, "/text")->skipped);
    assert_true(find(&r, "/text")->bytes > 0);
    assert_false(find(&r, "/xhtml")->skipped);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.skipped_content_type, 1);
    assert_int_equal(s.status_class[2], 4);
    bc_crawler_free(r.crawler);

    /* Accept text/html only: the three others skipped. */
    static const char *const html[] = {"text/html"};
    crawl_mixed(&r, html, 1, NULL, 0);
    assert_int_equal(r.pages, 4);
    assert_true(find(&r, "/big")->skipped);
    assert_true(find(&r, "/text")->skipped);
    assert_true(find(&r, "/xhtml")->skipped);
    assert_int_equal(find(&r, "/text")->bytes, 0);
    assert_false(find(&r, "/mixed")->skipped);
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.skipped_content_type, 3);
    bc_crawler_free(r.crawler);

    /* Accept any text type but reject text/plain; and a seed skipped yields no
     * links at all. */
    static const char *const text_any[] = {"text/*"};
    static const char *const plain[] = {"text/plain"};
    crawl_mixed(&r, text_any, 1, plain, 1);
    assert_true(find(&r, "/text")->skipped);
    assert_true(find(&r, "/big")->skipped);
    assert_true(find(&r, "/xhtml")->skipped);
    assert_false(find(&r, "/mixed")->skipped);
    bc_crawler_free(r.crawler);
    static const char *const none[] = {"image/png"};
    crawl_mixed(&r, none, 1, NULL, 0);
    assert_int_equal(r.pages, 1);
    assert_true(find(&r, "/mixed")->skipped);
    assert_int_equal(find(&r, "/mixed")->links, 0);
    bc_crawler_free(r.crawler);

    assert_true(bc_crawler_media_type_ok("text/html"));
    assert_true(bc_crawler_media_type_ok("text/*"));
    assert_true(bc_crawler_media_type_ok("*"));
    assert_true(bc_crawler_media_type_ok("application/vnd.api+json"));
    static const char *const bad[] = {
        "",       "text",           "text/",      "/html",
        "*/html", "text/html; q=1", "te xt/html", "text/html/x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(bc_crawler_media_type_ok(bad[i]));
    assert_false(bc_crawler_media_type_ok(NULL));
    struct bc_crawler_config cfg;
    bc_crawler_config_init(&cfg);
    struct bc_crawler *c = NULL;
    cfg.accept_types = &bad[1];
    cfg.accept_type_count = 1;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    assert_null(c);
}

struct host_row {
    int count;
    struct bc_crawler_host h;
    char origin[64];
};

static void collect_host(void *ctx, const struct bc_crawler_host *h)
{
    struct host_row *row = ctx;
    row->count++;
    row->h = *h;
    snprintf(row->origin, sizeof(row->origin), "%s", h->origin);
}

/* The per-host counters of a small site, and again after a resume from
 * the crawl state (they continue, not restart). */
static void test_hosts(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    char dir[] = "/tmp/bc_crawler_hosts_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sdir[64];
    snprintf(sdir, sizeof(sdir), "%s/state", dir);
    struct bc_crawl_state *st = NULL;
    struct bc_crawl_state_error err;
    assert_int_equal(bc_crawl_state_open(sdir, NULL, 0, &st, &err), BC_OK);
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.state = st;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/ok");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    struct host_row row = {0};
    assert_int_equal(bc_crawler_hosts(r.crawler, collect_host, &row), 1);
    char origin[64];
    snprintf(origin, sizeof(origin), "http://127.0.0.1:%d", server_port);
    assert_string_equal(row.origin, origin);
    assert_int_equal(row.h.pages, 3);
    assert_int_equal(row.h.status_class[2], 1);
    assert_int_equal(row.h.status_class[4], 2);
    assert_int_equal(row.h.robots, BC_FRONTIER_ROBOTS_ALLOW_ALL); /* 404 */
    assert_false(row.h.robots_fetching);
    assert_int_equal(row.h.queued, 0);
    assert_false(row.h.given_up);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(row.h.bytes, s.bytes);
    assert_true(row.h.ms_mean >= 0.0);
    struct bc_crawler_host first = row.h;
    assert_int_equal(bc_crawler_sync(r.crawler), BC_OK);
    bc_crawler_free(r.crawler);
    bc_crawl_state_close(st);

    /* Resumed: the same numbers, before any page. */
    memset(&r, 0, sizeof(r));
    assert_int_equal(bc_crawl_state_open(sdir, NULL, 0, &st, &err), BC_OK);
    config_for_server(&cfg, &r);
    cfg.state = st;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    memset(&row, 0, sizeof(row));
    assert_int_equal(bc_crawler_hosts(r.crawler, collect_host, &row), 1);
    assert_int_equal(row.h.pages, 3);
    assert_int_equal(row.h.bytes, first.bytes);
    assert_int_equal(row.h.status_class[4], 2);
    assert_true(row.h.ms_mean == first.ms_mean);
    assert_int_equal(row.h.ms_p95, first.ms_p95);
    assert_int_equal(row.h.robots, BC_FRONTIER_ROBOTS_ALLOW_ALL);
    bc_crawler_free(r.crawler);
    bc_crawl_state_close(st);
    assert_int_equal(bc_crawler_hosts(NULL, collect_host, &row), 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* latency_int.h: the bucket formula at its edges, exact below 16 ms, and
 * the 95th percentile within 6.25 % of the exact nearest-rank one for
 * random samples of several shapes (seeded). */
static void test_latency_histogram(void **state)
{
    (void)state;
    static const struct {
        uint64_t v;
        unsigned bucket;
    } edges[] = {{0, 0},          {15, 15},
                 {16, 16},        {17, 16},
                 {18, 17},        {31, 23},
                 {32, 24},        {35, 24},
                 {36, 25},        {(1u << 24) - 1, 175},
                 {1u << 24, 175}, {UINT64_MAX, 175}};
    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
        assert_int_equal(bc_latency_bucket(edges[i].v), edges[i].bucket);
    for (unsigned i = 0; i < BC_LATENCY_BUCKETS - 1; i++) {
        /* Buckets are consecutive: each value falls in its own bucket. */
        assert_int_equal(bc_latency_bucket(bc_latency_value(i)), i);
        assert_true(bc_latency_value(i) < bc_latency_value(i + 1));
    }
    /* Every v up to 2^20: the reported value within v / 16. */
    for (uint64_t v = 0; v < (1u << 20); v++) {
        uint64_t got = bc_latency_value(bc_latency_bucket(v));
        uint64_t diff = got > v ? got - v : v - got;
        assert_true(16 * diff <= v);
    }
    struct bc_latency h;
    memset(&h, 0, sizeof(h));
    assert_int_equal(bc_latency_percentile(&h, 95), 0);
    static uint64_t sample[2000];
    unsigned seed = 12345;
    for (int shape = 0; shape < 4; shape++) {
        for (size_t n = 1; n <= 2000; n = n * 3 + 1) {
            memset(&h, 0, sizeof(h));
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                uint64_t x = (seed >> 8) & 0xffff;
                uint64_t v = shape == 0   ? x % 15
                             : shape == 1 ? 5 + x % 1000
                             : shape == 2 ? (x * x) >> 12
                                          : (x % 7 == 0 ? 30000 + x : x % 50);
                sample[i] = v;
                bc_latency_add(&h, v);
            }
            /* The exact nearest-rank p95: sort (insertion, n small). */
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && sample[j - 1] > sample[j]; j--) {
                    uint64_t t = sample[j];
                    sample[j] = sample[j - 1];
                    sample[j - 1] = t;
                }
            size_t rank = (95 * n + 99) / 100;
            uint64_t want = sample[rank - 1];
            uint64_t got = bc_latency_percentile(&h, 95);
            uint64_t diff = got > want ? got - want : want - got;
            if (shape == 0)
                assert_int_equal(got, want); /* exact below 16 ms */
            else
                assert_true(16 * diff <= want);
        }
    }
}

/* ---- bad seeds, invalid configurations, NULL ------------------------- */

static void test_seeds_counted(void **state)
{
    (void)state;
    struct bc_crawler_config cfg;
    bc_crawler_config_init(&cfg);
    struct bc_crawler *c;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    enum bc_frontier_reason why;
    enum bc_status ust;
    static const char mailto[] = "mailto:a@example.test";
    static const char bad[] = "http://[::1/";
    static const char good[] = "http://a.test/";
    assert_int_equal(bc_crawler_add_seed(c, mailto, strlen(mailto), &why, &ust),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_BAD_URL);
    assert_int_equal(ust, BC_ERR_URL_SCHEME);
    assert_int_equal(bc_crawler_add_seed(c, bad, strlen(bad), NULL, NULL),
                     BC_OK);
    assert_int_equal(bc_crawler_add_seed(c, good, strlen(good), &why, NULL),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawler_add_seed(c, good, strlen(good), &why, NULL),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_DUPLICATE);
    struct bc_crawler_stats s;
    bc_crawler_stats(c, &s);
    assert_int_equal(s.seeds, 4);
    assert_int_equal(s.seeds_admitted, 2);
    assert_int_equal(s.bad_scheme, 1);
    assert_int_equal(s.bad_malformed, 1);
    assert_int_equal(bc_crawler_add_seed(c, NULL, 0, &why, NULL),
                     BC_ERR_INVALID_ARG);
    bc_crawler_free(c);
}

static void noop_done(void *ctx, const struct bc_fetch_result *r)
{
    (void)ctx;
    (void)r;
}

static void test_invalid_config(void **state)
{
    (void)state;
    struct bc_crawler *sentinel = (struct bc_crawler *)&sentinel;
    struct bc_crawler *c = sentinel;
    struct bc_crawler_config cfg;
    bc_crawler_config_init(&cfg);
    assert_int_equal(cfg.concurrency, BC_CRAWLER_DEFAULT_CONCURRENCY);
    assert_int_equal(cfg.max_pages, 0);
    assert_null(cfg.clock);
    assert_null(cfg.on_page);

    assert_int_equal(bc_crawler_create(NULL, &c), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawler_create(&cfg, NULL), BC_ERR_INVALID_ARG);
    cfg.concurrency = 0;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    cfg.concurrency = 1;
    cfg.fetcher.on_done = noop_done; /* the crawler's own */
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    cfg.fetcher.on_done = NULL;
    cfg.fetcher.ctx = &cfg;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    cfg.fetcher.ctx = NULL;
    cfg.frontier.per_host_concurrency = 0; /* the frontier's error */
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    cfg.frontier.per_host_concurrency = 1;
    cfg.frontier.seen.fp_rate = 1.5; /* the seen-test's */
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    cfg.frontier.seen.fp_rate = 0.01;
    static const char *const bad_resolve[] = {"no-port"};
    cfg.fetcher.resolve = bad_resolve; /* the fetcher's */
    cfg.fetcher.resolve_count = 1;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_ERR_INVALID_ARG);
    assert_ptr_equal(c, sentinel); /* never written on failure */
    cfg.fetcher.resolve_count = 0;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    bc_crawler_free(c);
    bc_crawler_config_init(NULL); /* no-op */
}

static void test_null(void **state)
{
    (void)state;
    bc_crawler_free(NULL);
    bc_crawler_stop(NULL);
    struct bc_crawler_stats s;
    memset(&s, 0xff, sizeof(s));
    bc_crawler_stats(NULL, &s);
    assert_int_equal(s.pages, 0);
    assert_int_equal(s.in_flight, 0);
    bc_crawler_stats(NULL, NULL);
    assert_null(bc_crawler_frontier(NULL));
    bool done = true;
    assert_int_equal(bc_crawler_step(NULL, 0, &done), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawler_run(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_crawler_add_seed(NULL, "http://a.test/", 14, NULL, NULL),
        BC_ERR_INVALID_ARG);
}

/* ---- the README's crawler, as written ---------------------------------
 * tests/extract_sketch.py copies the C block under "Embedding the crawler"
 * in README.md into sketch_crawler.inc: a callback and crawl(seed). It runs
 * here with its polite defaults (robots.txt, 1 s between requests) on a
 * two-page site, its stdout caught in a file. */

int crawl(const char *seed);
#include "sketch_crawler.inc"

static void test_readme_crawler(void **state)
{
    (void)state;
    char url[128], want[256];
    url_of(url, sizeof(url), "/xhtml"); /* links /x1, a 404 */
    FILE *out = tmpfile();
    assert_non_null(out);
    fflush(stdout);
    int saved = dup(1);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(out), 1) >= 0);
    int rc = crawl(url);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    assert_int_equal(rc, 0);

    char text[1024] = {0};
    rewind(out);
    size_t n = fread(text, 1, sizeof(text) - 1, out);
    fclose(out);
    text[n] = 0;
    snprintf(want, sizeof(want), "200 %s (1 links)\n", url);
    assert_non_null(strstr(text, want));
    url_of(url, sizeof(url), "/x1");
    snprintf(want, sizeof(want), "404 %s (0 links)\n", url);
    assert_non_null(strstr(text, want));
}

/* ---- sitemaps ---------------------------------------------------------- */

/* robots.txt is a 404: the crawler asks for /sitemap.xml, an index of a
 * plain and a gzipped sitemap, itself, a 404, an entity bomb and a 5 GiB
 * gzip stream. The pages they list within their scope are fetched at
 * depth 0; the index is fetched once; the bomb and the stream are cut,
 * the page listed before the stream's spaces kept; no sitemap is a page. */
static void test_sitemaps(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.sitemaps = true;
    cfg.concurrency = 3;
    cfg.frontier.per_host_concurrency = 3;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/text");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);

    const char *const listed[] = {"/sm/page1", "/sm/page2", "/sm/page3",
                                  "/sm/page4"};
    for (size_t i = 0; i < 4; i++) {
        const struct seen_page *p = find(&r, listed[i]);
        assert_true(p != &no_page);
        assert_int_equal(p->http, 200);
        assert_int_equal(p->depth, 0);
        /* The sitemap that listed it is its referrer. */
        assert_non_null(strstr(p->referrer, "/sm/"));
        assert_non_null(strstr(p->referrer, ".xml"));
    }
    assert_true(find(&r, "/text") != &no_page);
    assert_true(find(&r, "/ok") == &no_page); /* outside /sm/ */
    assert_true(find(&r, "/sitemap.xml") == &no_page);
    assert_int_equal(r.pages, 5);
    assert_int_equal(r.sitemap_fetches, 6); /* on_fetch, kind SITEMAP */

    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.pages, 5);
    assert_int_equal(s.handed_out, 5);
    assert_int_equal(s.sitemaps_started, 6);
    assert_int_equal(s.sitemaps_fetched, 5);
    assert_int_equal(s.sitemap_http_errors, 1); /* /sm/missing.xml */
    assert_int_equal(s.sitemap_indexed, 6);
    assert_int_equal(s.sitemap_urls, 5);
    assert_int_equal(s.sitemap_admitted, 4);
    assert_int_equal(s.sitemap_rejected[BC_ADMIT_SITEMAP_SCOPE], 1);
    assert_int_equal(s.sitemap_cut[BC_SITEMAP_STOP_DOCTYPE], 1);
    assert_int_equal(s.sitemap_cut[BC_SITEMAP_STOP_TOO_LARGE], 1);
    uint64_t cut = 0;
    for (int k = 0; k < BC_SITEMAP_STOP_COUNT; k++)
        cut += s.sitemap_cut[k];
    assert_int_equal(cut, 2); /* the 404's body never reached a parser */
    for (int k = 0; k < BC_CRAWLER_ERR_KIND_COUNT; k++)
        assert_int_equal(s.sitemap_errors[k], 0);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 6);
    assert_int_equal(fs.sitemaps[BC_FRONTIER_SITEMAP_DUPLICATE], 1);
    assert_int_equal(fs.sitemap_fetches, 6);
    assert_int_equal(fs.handed_out, 5);
    assert_int_equal(fs.in_flight, 0);
    bc_crawler_free(r.crawler);
}

/* A fixture server of its own with --robots MODE: its port (its pid in
 * *pid), or 0. */
static int own_server(const char *mode, pid_t *pid)
{
    int fds[2];
    *pid = -1;
    if (pipe(fds) != 0)
        return 0;
    *pid = fork();
    if (*pid < 0)
        return 0;
    if (*pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(BC_PYTHON3, BC_PYTHON3, SERVER_SCRIPT, "--robots", mode,
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
    return atoi(line);
}

/* A crawl of a server whose robots.txt names /flaky/503/1/sm.xml (a 503
 * once, then a urlset of /only.html) with max_retries; the run in *r. */
static void crawl_flaky_sitemap(struct run *r, unsigned max_retries)
{
    pid_t pid;
    int port = own_server("sitemap-flaky", &pid);
    assert_true(port > 0);
    char pattern[64], seed[64];
    snprintf(pattern, sizeof(pattern), "http://127.0.0.1:%d/*", port);
    snprintf(seed, sizeof(seed), "http://127.0.0.1:%d/only.html?seed", port);
    const char *list[1] = {pattern};
    struct bc_crawler_config cfg;
    config_for_server(&cfg, r);
    cfg.frontier.include = list;
    cfg.frontier.sitemaps = true;
    cfg.frontier.retry_delay_ms = 10;
    cfg.frontier.retry_jitter = 0.0;
    cfg.frontier.backoff_ms = 20; /* a 503 without Retry-After */
    cfg.frontier.max_retries = max_retries;
    cfg.frontier.host_failures = 0;
    assert_int_equal(bc_crawler_create(&cfg, &r->crawler), BC_OK);
    assert_int_equal(
        bc_crawler_add_seed(r->crawler, seed, strlen(seed), NULL, NULL), BC_OK);
    assert_int_equal(bc_crawler_run(r->crawler), BC_OK);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

/* A sitemap that fails with a transient fault (a 503) is retried, so the
 * page only it lists is fetched; with no retry allowed it is given up to
 * the transient fault (BC_FRONTIER_SITEMAP_TRANSIENT: the crawl is not
 * complete), its page never requested. */
static void test_sitemap_retried(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    crawl_flaky_sitemap(&r, 3);
    const struct seen_page *p = find(&r, "/only.html");
    assert_true(p != &no_page);
    assert_int_equal(p->http, 200);
    assert_int_equal(r.sitemap_fetches, 2); /* the 503, then the urlset */
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.sitemaps_started, 2);
    assert_int_equal(s.sitemaps_fetched, 1);
    assert_int_equal(s.sitemap_http_errors, 1);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.sitemap_fetches, 2);
    assert_int_equal(fs.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT], 0);
    assert_int_equal(fs.in_flight, 0);
    bc_crawler_free(r.crawler);

    memset(&r, 0, sizeof(r));
    crawl_flaky_sitemap(&r, 0);
    assert_true(find(&r, "/only.html") == &no_page);
    assert_int_equal(r.sitemap_fetches, 1);
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_int_equal(fs.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT], 1);
    bc_crawler_free(r.crawler);
}

/* ---- recrawl after a window: a fake wall clock ------------------------ */

static uint64_t fake_wall(void *ctx)
{
    return ((struct run *)ctx)->wall;
}

static size_t count_path(const struct run *r, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < r->pages; i++)
        n += strcmp(r->page[i].path, path) == 0;
    return n;
}

static enum bc_frontier_reason seed_again(struct run *r, const char *path)
{
    char url[128];
    url_of(url, sizeof(url), path);
    enum bc_frontier_reason why;
    assert_int_equal(
        bc_crawler_add_seed(r->crawler, url, strlen(url), &why, NULL), BC_OK);
    return why;
}

/* URLs the seen-test admitted again: NEW while the LRU still held them
 * (what crawl reports as "recrawled"). */
static uint64_t readmitted(const struct run *r)
{
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r->crawler), 0, &fs);
    return fs.seen.verdict_new - fs.seen.lru.inserts;
}

static void test_recrawl_after(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.recrawl_after_ms = 1000;
    cfg.recrawl_clock = fake_wall;
    r.wall = 1000000;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    assert_non_null(bc_seen_window(bc_frontier_seen(
        bc_crawler_frontier(r.crawler)))); /* the seen-test is a window */
    add_seed(&r, "/ok");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    const char *const site[] = {"/ok", "/page1", "/page2?a=1&b=2"};
    assert_int_equal(r.pages, 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(count_path(&r, site[i]), 1);
    assert_int_equal(readmitted(&r), 0);

    /* Inside the window (its last millisecond included): a duplicate. */
    r.wall += 1000;
    assert_int_equal(seed_again(&r, "/ok"), BC_ADMIT_DUPLICATE);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 3);

    /* Past the window and its slack (a key is gone once G d = 4 *
     * ceil(1000 / 3) = 1336 ms old): the seed is admitted again, and so
     * are the links met on it: the site comes back once, each page. */
    r.wall += 400;
    assert_int_equal(seed_again(&r, "/ok"), BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 6);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(count_path(&r, site[i]), 2);
    assert_int_equal(readmitted(&r), 3);
    /* Admitted again at the new time: inside their new window now. */
    assert_int_equal(seed_again(&r, "/ok"), BC_ADMIT_DUPLICATE);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 6);
    bc_crawler_free(r.crawler);

    /* Without the option the same clock changes nothing: no window. */
    memset(&r, 0, sizeof(r));
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    assert_null(
        bc_seen_window(bc_frontier_seen(bc_crawler_frontier(r.crawler))));
    add_seed(&r, "/ok");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(seed_again(&r, "/ok"), BC_ADMIT_DUPLICATE);
    assert_int_equal(r.pages, 3);
    bc_crawler_free(r.crawler);
}

/* ---- crawl workers' hooks ---------------------------------------------- */

static bool budget(void *ctx, bool take)
{
    struct run *r = ctx;
    if (!take) {
        assert_true(r->budget_used > 0);
        r->budget_used--;
        r->gives++;
        return true;
    }
    if (r->budget_used >= r->budget_max) {
        r->refusals++;
        return false;
    }
    r->budget_used++;
    r->takes++;
    return true;
}

/* page_budget: a budget of 3 over a site of 11 pages fetches 3; a refusal
 * holds for one step, and a token the budget gets back (here: raised by
 * 2) is granted at a later step; a budget larger than the site fetches it all and
 * gives back the token it held when the frontier said DONE. Robots.txt
 * takes no token. */
static void test_page_budget(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1; /* /fan/1 and the ten pages it links */
    cfg.frontier.per_host_concurrency = 2;
    cfg.concurrency = 2;
    cfg.page_budget = budget;
    r.budget_max = 3;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/fan/1");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 3);
    assert_int_equal(r.robots_fetches, 1);
    assert_int_equal(r.takes, 3);
    uint64_t refused = r.refusals; /* once a step, from the 4th page on */
    assert_true(refused >= 1);
    assert_int_equal(r.gives, 0);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.handed_out, 3);
    struct bc_frontier_stats fs;
    bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
    assert_true(fs.queued > 0); /* left for the budget's sake */
    bool done = false;
    assert_int_equal(bc_crawler_step(r.crawler, 0, &done), BC_OK);
    assert_true(done);
    assert_int_equal(r.refusals, refused + 1); /* asked again, refused */
    r.budget_max = 5; /* two tokens back: the crawl goes on */
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 5);
    bc_crawler_free(r.crawler);

    memset(&r, 0, sizeof(r));
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.page_budget = budget;
    r.budget_max = 100;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/fan/1");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 11);
    assert_int_equal(r.takes, 12); /* the last one found nothing to fetch */
    assert_int_equal(r.gives, 1);
    assert_int_equal(r.budget_used, 11);
    assert_int_equal(r.refusals, 0);
    bc_crawler_free(r.crawler);

    /* A stop gives the token held back. */
    memset(&r, 0, sizeof(r));
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.page_budget = budget;
    r.budget_max = 100;
    r.stop_after = 2;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/fan/1");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.budget_used, r.pages);
    bc_crawler_free(r.crawler);
}

/* A partition for the crawler tests: the server's origin is this
 * worker's when own_server; route() keeps each URL in the outbox of
 * state (when one is given: as a crawl worker does), worker 1. */
struct part {
    bool own_server;
    struct bc_crawl_state *state;
    int routed;
};

static bool part_owns(void *ctx, const char *origin, size_t len)
{
    const struct part *p = ctx;
    char own[64];
    int n = snprintf(own, sizeof(own), "http://127.0.0.1:%d", server_port);
    return p->own_server && (size_t)n == len && memcmp(own, origin, len) == 0;
}

static enum bc_status part_route(void *ctx, const char *origin, size_t len,
                                 const struct bc_frontier_entry *e, bool seed)
{
    (void)origin;
    (void)len;
    struct part *p = ctx;
    p->routed++;
    if (!p->state)
        return BC_OK;
    struct bc_crawl_state_routed row = {0,           1,
                                        e->url,      e->url_len,
                                        e->referrer, e->referrer_len,
                                        e->depth,    e->redirects,
                                        seed};
    return bc_crawl_state_outbox_add(p->state, &row);
}

static enum bc_status part_route_fails(void *ctx, const char *origin,
                                       size_t len,
                                       const struct bc_frontier_entry *e,
                                       bool seed)
{
    (void)ctx;
    (void)origin;
    (void)len;
    (void)e;
    (void)seed;
    return BC_ERR_IO;
}

/* A seed the frontier could not store (here: its route() failed with an
 * I/O error, sticky like a state write) is BC_ADMIT_STORE_ERROR with the
 * store's status, not BC_ADMIT_NOMEM (issue 21: "seed not queued:
 * nomem" for an I/O failure). */
static void test_add_seed_store_error(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    struct part p = {false, NULL, 0};
    cfg.frontier.partition.owns = part_owns;
    cfg.frontier.partition.route = part_route_fails;
    cfg.frontier.partition.ctx = &p;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    char url[128];
    url_of(url, sizeof(url), "/");
    enum bc_frontier_reason why = BC_ADMIT_QUEUED;
    assert_int_equal(
        bc_crawler_add_seed(r.crawler, url, strlen(url), &why, NULL),
        BC_ERR_IO);
    assert_int_equal(why, BC_ADMIT_STORE_ERROR);
    /* Sticky: the next seed says the same. */
    why = BC_ADMIT_QUEUED;
    assert_int_equal(
        bc_crawler_add_seed(r.crawler, url, strlen(url), &why, NULL),
        BC_ERR_IO);
    assert_int_equal(why, BC_ADMIT_STORE_ERROR);
    bc_crawler_free(r.crawler);
}

/* add_routed: admitted at the given depth, with the referrer and the
 * redirect hops it carries (which come back in the page), counted
 * (routed_in; bad URLs like a link's); a routed seed is a seed. Seeds of
 * another worker's host are routed and counted (routed_out). */
static void test_add_routed(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 2;
    cfg.frontier.max_redirects = 3;
    struct part p = {true, NULL, 0};
    /* b.test is included, and routed away: never contacted. */
    const char *include[] = {include_pattern, "http://b.test/*"};
    cfg.frontier.include = include;
    cfg.frontier.include_count = 2;
    cfg.frontier.partition.owns = part_owns;
    cfg.frontier.partition.route = part_route;
    cfg.frontier.partition.ctx = &p;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    char url[128], ref[128];
    enum bc_frontier_reason why;
    url_of(url, sizeof(url), "/page1");
    /* Out of scope before a seed of the host is known. */
    assert_int_equal(bc_crawler_add_routed(r.crawler, url, strlen(url), 2, 0,
                                           NULL, 0, false, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_OUT_OF_SCOPE);
    url_of(ref, sizeof(ref), "/from-elsewhere");
    assert_int_equal(bc_crawler_add_routed(r.crawler, ref, strlen(ref), 0, 0,
                                           NULL, 0, true, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_QUEUED); /* a seed: 404, no links */
    assert_int_equal(bc_crawler_add_routed(r.crawler, url, strlen(url), 2, 0,
                                           ref, strlen(ref), false, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_QUEUED);
    /* A referrer too long for this frontier is dropped, not the URL. */
    static char long_ref[3000];
    memset(long_ref, 'a', sizeof(long_ref));
    memcpy(long_ref, "http://b.test/", 14);
    assert_int_equal(bc_crawler_add_routed(r.crawler, url, strlen(url), 2, 0,
                                           long_ref, sizeof(long_ref), false,
                                           &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_DUPLICATE);
    url_of(url, sizeof(url), "/r/2");
    assert_int_equal(bc_crawler_add_routed(r.crawler, url, strlen(url), 1, 2,
                                           ref, strlen(ref), false, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawler_add_routed(r.crawler, "mailto:a@b.test", 15, 1,
                                           0, NULL, 0, false, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_BAD_URL);
    assert_int_equal(bc_crawler_add_routed(r.crawler, url, strlen(url), 1, 0,
                                           NULL, 3, false, &why),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawler_add_routed(NULL, url, strlen(url), 1, 0, NULL,
                                           0, false, &why),
                     BC_ERR_INVALID_ARG);
    /* Another worker's seed: routed, its host in the scope here too. */
    assert_int_equal(
        bc_crawler_add_seed(r.crawler, "http://b.test/", 14, &why, NULL),
        BC_OK);
    assert_int_equal(why, BC_ADMIT_ROUTED);
    assert_int_equal(p.routed, 1);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);

    const struct seen_page *pg = find(&r, "/page1");
    assert_true(pg != &no_page);
    assert_int_equal(pg->depth, 2);
    assert_int_equal(pg->redirects, 0);
    assert_string_equal(pg->referrer, "/from-elsewhere");
    /* /r/2 arrived two hops into its chain: /r/3 is hop 3, /r/4 hop 4 is
     * refused. */
    pg = find(&r, "/r/2");
    assert_true(pg != &no_page);
    assert_int_equal(pg->redirects, 2);
    assert_int_equal(pg->depth, 1);
    assert_string_equal(pg->referrer, "/from-elsewhere");
    pg = find(&r, "/r/3");
    assert_true(pg != &no_page);
    assert_int_equal(pg->redirects, 3);
    assert_int_equal(pg->kind, BC_CRAWLER_ERR_TOO_MANY_REDIRECTS);
    assert_true(find(&r, "/r/4") == &no_page);
    assert_int_equal(r.pages, 4);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.routed_in, 6);
    assert_int_equal(s.routed_out, 1);
    assert_int_equal(s.seeds, 2);
    assert_int_equal(s.bad_scheme, 1);
    bc_crawler_free(r.crawler);
}

/* add_scope: a host of another worker's seed enters the scope, so a link
 * to it is admitted (here: crawled, the partition owning it). */
static void test_add_scope(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    char url[128], ok[128];
    enum bc_frontier_reason why;
    url_of(ok, sizeof(ok), "/ok");
    assert_int_equal(bc_crawler_add_routed(r.crawler, ok, strlen(ok), 0, 0,
                                           NULL, 0, false, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_OUT_OF_SCOPE);
    url_of(url, sizeof(url), "/elsewhere");
    assert_int_equal(bc_crawler_add_scope(r.crawler, url, strlen(url)), BC_OK);
    assert_int_equal(bc_crawler_add_routed(r.crawler, ok, strlen(ok), 0, 0,
                                           NULL, 0, false, &why),
                     BC_OK);
    assert_int_equal(why, BC_ADMIT_QUEUED);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 3); /* /ok and its two links */
    assert_int_not_equal(bc_crawler_add_scope(r.crawler, "http://[::1/", 12),
                         BC_OK);
    assert_int_equal(bc_crawler_add_scope(NULL, url, strlen(url)),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawler_add_scope(r.crawler, NULL, 0),
                     BC_ERR_INVALID_ARG);
    bc_crawler_free(r.crawler);
}

/* --revisit: known pages queued again from the state once due. */
static struct bc_crawl_state *state_at(const char *dir)
{
    static const struct bc_crawl_state_option fixed[] = {{"t", "1"}};
    struct bc_crawl_state *s = NULL;
    struct bc_crawl_state_error err;
    assert_int_equal(bc_crawl_state_open(dir, fixed, 1, &s, &err), BC_OK);
    return s;
}

static void pin_fp_rate(struct bc_crawler_config *c)
{
    c->frontier.seen.fp_rate = 0.01;
}

static void pin_scope(struct bc_crawler_config *c)
{
    c->frontier.scope = BC_SCOPE_DOMAIN;
}

static void pin_expect(struct bc_crawler_config *c)
{
    c->frontier.seen.expected = 20000;
}

static void pin_exclude(struct bc_crawler_config *c)
{
    static const char *const list[] = {"*/a/*", "*/b/*"};
    c->frontier.exclude = list;
    c->frontier.exclude_count = 2;
}

static void pin_robots(struct bc_crawler_config *c)
{
    c->frontier.obey_robots = false;
}

static void pin_recrawl(struct bc_crawler_config *c)
{
    c->recrawl_after_ms = 60000;
}

/* Create a crawler on the state in dir with cfg and free it (the run
 * begins: its frontier is built). Returns bc_crawler_create()'s status;
 * *msg gets the state's text. */
static enum bc_status pinned_run(const char *dir, struct bc_crawler_config *cfg,
                                 char *msg, size_t cap)
{
    struct bc_crawl_state *s = state_at(dir);
    cfg->state = s;
    struct bc_crawler *c = NULL;
    enum bc_status st = bc_crawler_create(cfg, &c);
    snprintf(msg, cap, "%s", bc_crawl_state_errmsg(s));
    bc_crawler_free(c);
    bc_crawl_state_close(s);
    cfg->state = NULL;
    return st;
}

/* PINNED SETTINGS (crawler.h): the library, not each embedder, refuses a
 * resume that changes the seen-test's sizing, the scope, the patterns,
 * the agent, the robots.txt and sitemap rules or the recrawl window,
 * naming the setting with the values; the same configuration resumes,
 * and settings not pinned may change. Before, an embedder that gave its
 * own fixed list (or none) resumed with another scope or fp_rate. */
static void test_pinned_settings(void **state)
{
    (void)state;
    char dir[] = "/tmp/bc_pin_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[64], msg[512];
    snprintf(sub, sizeof(sub), "%s/s", dir);
    struct bc_crawler_config cfg;
    bc_crawler_config_init(&cfg);
    cfg.frontier.seen.expected = 10000;
    cfg.frontier.seen.fp_rate = 0.001;
    cfg.frontier.scope = BC_SCOPE_HOST;
    assert_int_equal(pinned_run(sub, &cfg, msg, sizeof(msg)), BC_OK);

    /* The same configuration, and one that changes only what may change. */
    cfg.concurrency = 3;
    cfg.max_pages = 7;
    cfg.frontier.min_delay_ms = 5;
    assert_int_equal(pinned_run(sub, &cfg, msg, sizeof(msg)), BC_OK);

    struct {
        const char *option, *was, *now, *text;
        void (*change)(struct bc_crawler_config *c);
    } const cases[] = {
        {"--fp-rate", "0.001", "0.01",
         "--fp-rate differs from the crawl in the state (was 0.001, now "
         "0.01)",
         pin_fp_rate},
        {"--scope", "host", "domain",
         "--scope differs from the crawl in the state (was host, now "
         "domain)",
         pin_scope},
        {"--expect", "10000", "20000", NULL, pin_expect},
        {"--exclude", "", "*/a/* */b/*",
         "--exclude differs from the crawl in the state (was none, now "
         "*/a/* */b/*)",
         pin_exclude},
        {"--no-robots", "no", "yes", NULL, pin_robots},
        {"--recrawl-after", "", "60000ms", NULL, pin_recrawl},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct bc_crawler_config other = cfg;
        cases[i].change(&other);
        assert_int_equal(pinned_run(sub, &other, msg, sizeof(msg)),
                         BC_ERR_MISMATCH);
        if (cases[i].text)
            assert_string_equal(msg, cases[i].text);
        /* bc_crawler_pin() says the same through its error record. */
        struct bc_crawl_state *s = state_at(sub);
        other.state = s;
        struct bc_crawl_state_error err;
        assert_int_equal(bc_crawler_pin(&other, &err), BC_ERR_MISMATCH);
        assert_string_equal(err.option, cases[i].option);
        assert_string_equal(err.was, cases[i].was);
        assert_string_equal(err.now, cases[i].now);
        bc_crawl_state_close(s);
    }
    /* Refused resumes changed nothing: the first configuration resumes. */
    assert_int_equal(pinned_run(sub, &cfg, msg, sizeof(msg)), BC_OK);

    /* Until a run begins nothing was crawled: the pins are recorded again
     * by the next open (a crawl killed before its frontier was built). */
    snprintf(sub, sizeof(sub), "%s/t", dir);
    struct bc_crawl_state *s = state_at(sub);
    struct bc_crawler_config other = cfg;
    pin_recrawl(&other);
    other.state = s;
    assert_int_equal(bc_crawler_pin(&other, NULL), BC_OK);
    bc_crawl_state_close(s);
    /* The run that began had another scope and no recrawl window: those
     * are what its resume must give. */
    other = cfg;
    pin_scope(&other);
    assert_int_equal(pinned_run(sub, &other, msg, sizeof(msg)), BC_OK);
    assert_int_equal(pinned_run(sub, &other, msg, sizeof(msg)), BC_OK);
    assert_int_equal(pinned_run(sub, &cfg, msg, sizeof(msg)), BC_ERR_MISMATCH);
    assert_int_equal(bc_crawler_pin(NULL, NULL), BC_ERR_INVALID_ARG);
    cfg.state = NULL;
    assert_int_equal(bc_crawler_pin(&cfg, NULL), BC_ERR_INVALID_ARG);
}

static void revisit_run(struct run *r, const char *dir, uint64_t wall,
                        uint64_t *known, uint64_t *due)
{
    struct bc_crawler_config cfg;
    config_for_server(&cfg, r);
    cfg.frontier.max_depth = 1;
    cfg.recrawl_after_ms = 1000;
    cfg.recrawl_clock = fake_wall;
    cfg.state = state_at(dir);
    r->wall = wall;
    assert_int_equal(bc_crawler_create(&cfg, &r->crawler), BC_OK);
    assert_int_equal(bc_crawler_revisit(r->crawler, known, due), BC_OK);
    assert_int_equal(bc_crawler_run(r->crawler), BC_OK);
    bc_crawler_free(r->crawler);
    bc_crawl_state_close(cfg.state);
}

static void test_revisit(void **state)
{
    (void)state;
    char dir[] = "/tmp/bc_revisit_XXXXXX";
    assert_non_null(mkdtemp(dir));
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.state = state_at(dir);
    /* Without a recrawl window, or without a state: refused. */
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    assert_int_equal(bc_crawler_revisit(r.crawler, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    bc_crawler_free(r.crawler);
    bc_crawl_state_close(cfg.state);
    cfg.state = NULL;
    cfg.recrawl_after_ms = 1000;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    assert_int_equal(bc_crawler_revisit(r.crawler, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    bc_crawler_free(r.crawler);
    assert_int_equal(bc_crawler_revisit(NULL, NULL, NULL), BC_ERR_INVALID_ARG);

    char sub[64];
    snprintf(sub, sizeof(sub), "%s/s", dir);
    /* Run 1: the site, three pages. */
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.recrawl_after_ms = 1000;
    cfg.recrawl_clock = fake_wall;
    cfg.state = state_at(sub);
    r.wall = 1000000;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    uint64_t known = 9, due = 9;
    assert_int_equal(bc_crawler_revisit(r.crawler, &known, &due), BC_OK);
    assert_int_equal(known, 0); /* a new state knows nothing */
    assert_int_equal(due, 0);
    add_seed(&r, "/ok");
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 3);
    bc_crawler_free(r.crawler);
    bc_crawl_state_close(cfg.state);

    /* Run 2, no seed, inside the window: nothing due, nothing fetched. */
    revisit_run(&r, sub, 1000000 + 1000, &known, &due);
    assert_int_equal(known, 3);
    assert_int_equal(due, 0);
    assert_int_equal(r.pages, 3);

    /* Run 3, past the window and its slack: all three due, fetched once
     * more each (the links met on /ok are inside their new window). */
    revisit_run(&r, sub, 1000000 + 1400, &known, &due);
    assert_int_equal(known, 3);
    assert_int_equal(due, 3);
    assert_int_equal(r.pages, 6);
    const char *const site[] = {"/ok", "/page1", "/page2?a=1&b=2"};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(count_path(&r, site[i]), 2);

    /* Run 4, at once: the journal now has six rows; none due. */
    revisit_run(&r, sub, 1000000 + 1500, &known, &due);
    assert_int_equal(known, 6);
    assert_int_equal(due, 0);
    assert_int_equal(r.pages, 6);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* The outbox rows of a state, as "seed depth redirects url referrer". */
static void outbox_line(void *ctx, const struct bc_crawl_state_routed *row)
{
    char *out = ctx;
    size_t n = strlen(out);
    snprintf(out + n, 1024 - n, "%c %u %u %.*s %.*s\n", row->seed ? 's' : 'l',
             row->depth, row->redirects, (int)row->url_len, row->url,
             row->referrer ? (int)row->referrer_len : 1,
             row->referrer ? row->referrer : "-");
}

/* The include pattern of test_durability's crawl: pinned, so its resume
 * gives it too (bc_crawler_pin()). */
static const char *durable_include[] = {"http://127.0.0.1*"};

/* The child of test_durability: admit, route, step until a page's links
 * were admitted, step once more, then die by SIGKILL with nothing closed.
 * Exits 2 (never killed) if anything goes wrong. */
static void durability_child(const char *dir, bool step_after)
{
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.on_page = NULL;
    cfg.on_fetch = NULL;
    cfg.frontier.max_depth = 1;
    /* The server on port 80 (the canonical link of /ok) is included and
     * another worker's: routed, never contacted. */
    cfg.frontier.include = durable_include;
    static struct part p = {true, NULL, 0};
    cfg.frontier.partition.owns = part_owns;
    cfg.frontier.partition.route = part_route;
    cfg.frontier.partition.ctx = &p;
    cfg.state = state_at(dir);
    p.state = cfg.state;
    if (bc_crawler_create(&cfg, &r.crawler) != BC_OK)
        _exit(2);
    char url[128], ref[128];
    enum bc_frontier_reason why;
    url_of(url, sizeof(url), "/ok");
    if (bc_crawler_add_seed(r.crawler, url, strlen(url), &why, NULL) != BC_OK ||
        why != BC_ADMIT_QUEUED)
        _exit(2);
    if (bc_crawler_add_seed(r.crawler, "http://127.0.0.1/", 17, &why, NULL) !=
            BC_OK ||
        why != BC_ADMIT_ROUTED)
        _exit(2);
    url_of(url, sizeof(url), "/page1");
    if (bc_crawler_add_routed(r.crawler, url, strlen(url), 1, 0,
                              "http://127.0.0.1/x", 18, false, &why) != BC_OK ||
        why != BC_ADMIT_QUEUED)
        _exit(2);
    if (!step_after) { /* admitted, never stepped: nothing committed */
        raise(SIGKILL);
        _exit(2);
    }
    /* Step until /ok is done (its links admitted, one routed), then
     * once more: that step hands out /ok's link, so it commits. */
    struct bc_crawler_stats st;
    do {
        bool done;
        if (bc_crawler_step(r.crawler, 100, &done) != BC_OK || done)
            _exit(2);
        bc_crawler_stats(r.crawler, &st);
    } while (st.links == 0);
    if (bc_crawler_step(r.crawler, 0, NULL) != BC_OK)
        _exit(2);
    /* Admitted after the last step: not committed. */
    url_of(ref, sizeof(ref), "/late");
    if (bc_crawler_add_routed(r.crawler, ref, strlen(ref), 1, 0, NULL, 0, false,
                              &why) != BC_OK ||
        why != BC_ADMIT_QUEUED)
        _exit(2);
    raise(SIGKILL);
    _exit(2);
}

static void run_killed_child(const char *dir, bool step_after)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        durability_child(dir, step_after);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* bc_crawler_step()'s durability guarantee: the seeds, the routed URLs
 * and the route() calls (their outbox rows) admitted before a step that
 * returned BC_OK, and the links of a page finished before a step that
 * handed a job out (the child's last step hands out a link of /ok), are
 * in the state after a SIGKILL; what came after the last step is not. */
static void test_durability(void **state)
{
    (void)state;
    char dir[] = "/tmp/bc_durable_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[64];
    /* Killed before any step: nothing at all. */
    snprintf(sub, sizeof(sub), "%s/a", dir);
    run_killed_child(sub, false);
    struct bc_crawl_state *s = state_at(sub);
    assert_int_equal(bc_crawl_state_outbox_count(s), 0);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.journal, 0);
    bc_crawl_state_close(s);

    snprintf(sub, sizeof(sub), "%s/b", dir);
    run_killed_child(sub, true);
    s = state_at(sub);
    /* The routed seed and the routed canonical link of /ok. */
    char rows[1024] = "";
    size_t count = 0;
    assert_int_equal(
        bc_crawl_state_outbox_read(s, 0, 100, outbox_line, rows, &count),
        BC_OK);
    char want[1024];
    snprintf(want, sizeof(want),
             "s 0 0 http://127.0.0.1/ -\n"
             "l 1 0 http://127.0.0.1/ok http://127.0.0.1:%d/ok\n",
             server_port);
    assert_string_equal(rows, want);
    assert_int_equal(count, 2);
    assert_int_equal(bc_crawl_state_outbox_count(s), 2);
    assert_int_equal(bc_crawl_state_counter_get(s, "crawler.routed_in"), 1);
    assert_int_equal(bc_crawl_state_counter_get(s, "crawler.routed_out"), 2);
    /* /ok, /page1 (routed in), /page2?a=1&b=2 (a link of /ok): not /late. */
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.journal, 3);

    /* Resumed: what was committed is crawled, /page1 with the referrer it
     * was routed with; the counters continue. */
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.max_depth = 1;
    cfg.frontier.include = durable_include;
    cfg.state = s;
    /* The child's pages count (on_page compares): /ok, done before. */
    r.pages = (size_t)bc_crawl_state_counter_get(s, "crawler.pages");
    assert_int_equal(r.pages, 1);
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_int_equal(r.pages, 3);
    const struct seen_page *pg = find(&r, "/page1");
    assert_true(pg != &no_page);
    assert_string_equal(pg->referrer, "/x");
    assert_true(find(&r, "/page2?a=1&b=2") != &no_page);
    assert_true(find(&r, "/late") == &no_page);
    struct bc_crawler_stats st;
    bc_crawler_stats(r.crawler, &st);
    assert_int_equal(st.routed_in, 1);
    assert_int_equal(st.routed_out, 2);
    bc_crawler_free(r.crawler);
    bc_crawl_state_close(s);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- the turn's commit (crawler.c, THE TURN'S COMMIT) ----------------- */

/* A clock that moves only when the test moves it. */
static uint64_t frozen_now;
static uint64_t frozen_clock(void *ctx)
{
    (void)ctx;
    return frozen_now;
}

/* The size of DIR/crawl.db-wal: every commit appends to it. */
static long long wal_size(const char *dir)
{
    char p[128];
    snprintf(p, sizeof(p), "%s/crawl.db-wal", dir);
    struct stat st;
    return stat(p, &st) == 0 ? (long long)st.st_size : -1;
}

/* Step once without waiting; the transfers handed out so far. */
static uint64_t step_handed(struct run *r)
{
    bool done;
    assert_int_equal(bc_crawler_step(r->crawler, 0, &done), BC_OK);
    assert_false(done);
    struct bc_crawler_stats st;
    bc_crawler_stats(r->crawler, &st);
    return st.handed_out;
}

/* Step (up to 100 ms a step) until pages are done. */
static void step_until_pages(struct run *r, uint64_t pages)
{
    struct bc_crawler_stats st;
    unsigned steps = 0;
    do {
        bool done;
        assert_int_equal(bc_crawler_step(r->crawler, 100, &done), BC_OK);
        bc_crawler_stats(r->crawler, &st);
        assert_true(++steps < 100);
    } while (st.pages < pages);
}

/* With a crawl state a step commits when it hands a transfer out (before
 * it starts), when others wrote to the state since the last step, when
 * the crawl is over, and once COMMIT_HOLD_MS (10 ms) passed since the last
 * commit; and while fewer than half the transfer slots are free, it hands
 * nothing out until then. Three /stall transfers (a few bytes, then 5 s of
 * silence) hold three of the four slots; the clock is the test's; the
 * crawler is freed with them in flight. */
static void test_commit_waits(void **state)
{
    (void)state;
    char dir[] = "/tmp/bc_commit_XXXXXX";
    assert_non_null(mkdtemp(dir));
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    config_for_server(&cfg, &r);
    cfg.frontier.obey_robots = false;
    cfg.frontier.max_depth = 1;
    cfg.frontier.per_host_concurrency = 4;
    cfg.concurrency = 4;
    cfg.clock = frozen_clock;
    frozen_now = 1000;
    cfg.state = state_at(dir);
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/stall?1");
    add_seed(&r, "/stall?2");
    add_seed(&r, "/stall?3");
    add_seed(&r, "/ok");
    /* All four handed out and committed before they start. */
    assert_int_equal(step_handed(&r), 4);
    long long wal = wal_size(dir);
    assert_true(wal > 0);
    /* /ok done, its links admitted: one slot of four free. Within 10 ms
     * of the last commit the step hands nothing out and commits nothing:
     * /ok's completion waits in the open transaction (a kill would fetch
     * it again: it is in flight in the last commit). */
    step_until_pages(&r, 1);
    wal = wal_size(dir);
    assert_true(bc_crawl_state_pending(cfg.state));
    assert_int_equal(step_handed(&r), 4);
    assert_int_equal(step_handed(&r), 4);
    assert_int_equal(wal_size(dir), wal);
    assert_true(bc_crawl_state_pending(cfg.state));
    /* 10 ms later: the free slot gets a link of /ok, committed first. */
    frozen_now += 10;
    assert_int_equal(step_handed(&r), 5);
    assert_true(wal_size(dir) > wal);
    /* That link done: held again, until a seed is admitted between two
     * steps: the next step hands a job out, and commits, at once. */
    step_until_pages(&r, 2);
    wal = wal_size(dir);
    assert_int_equal(step_handed(&r), 5);
    assert_int_equal(wal_size(dir), wal);
    add_seed(&r, "/only.html");
    assert_int_equal(step_handed(&r), 6);
    assert_true(wal_size(dir) > wal);
    bc_crawler_free(r.crawler);
    bc_crawl_state_close(cfg.state);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- bc_crawler_fail(): the embedder's write error ------------------- */

/* An on_page that "writes" each page and fails on the fail_at-th, as
 * crawl's --out does on a full disk. */
struct fail_run {
    struct bc_crawler *crawler;
    size_t pages, fail_at;
    char path[MAX_PAGES][128]; /* the pages on_page saw, in order */
    enum bc_status fail_ret;
};

static void fail_on_page(void *ctx, const struct bc_crawler_page *p)
{
    struct fail_run *f = ctx;
    assert_true(f->pages < MAX_PAGES);
    snprintf(f->path[f->pages++], sizeof(f->path[0]), "%s",
             strchr(p->url + strlen("http://"), '/'));
    if (f->pages == f->fail_at)
        f->fail_ret = bc_crawler_fail(f->crawler, BC_ERR_IO, ENOSPC);
}

static void fail_config(struct bc_crawler_config *cfg, struct fail_run *f,
                        struct bc_crawl_state *s)
{
    struct run unused;
    config_for_server(cfg, &unused);
    cfg->on_page = fail_on_page;
    cfg->on_fetch = NULL;
    cfg->ctx = f;
    cfg->concurrency = 1; /* one page completes per step */
    cfg->max_pages = 12;
    cfg->state = s;
}

/* A callback fails on the 5th page: the step returns the failure, so do
 * every later step and sync, and nothing more is committed: the state
 * holds exactly the 4 pages before it (one transfer at a time: each page
 * is committed by the step after the one it completed in, before the
 * next can complete). The resume fetches the 5th again, first (it was in
 * flight at the last commit), and completes the crawl. */
static void test_fail(void **state)
{
    (void)state;
    static struct fail_run f;
    memset(&f, 0, sizeof(f));
    char dir[] = "/tmp/bc_crawler_fail_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char sub[64];
    snprintf(sub, sizeof(sub), "%s/state", dir);
    struct bc_crawler_config cfg;
    fail_config(&cfg, &f, state_at(sub));
    f.fail_at = 5;
    assert_int_equal(bc_crawler_create(&cfg, &f.crawler), BC_OK);
    assert_int_equal(bc_crawler_failure(f.crawler, NULL), BC_OK);
    char url[128];
    url_of(url, sizeof(url), "/fan/0");
    assert_int_equal(
        bc_crawler_add_seed(f.crawler, url, strlen(url), NULL, NULL), BC_OK);
    assert_int_equal(bc_crawler_run(f.crawler), BC_ERR_IO);
    assert_int_equal(f.fail_ret, BC_OK);
    assert_int_equal(f.pages, 5);
    int err = 0;
    assert_int_equal(bc_crawler_failure(f.crawler, &err), BC_ERR_IO);
    assert_int_equal(err, ENOSPC);
    /* The first failure stays the cause; BC_OK is not a failure. */
    assert_int_equal(bc_crawler_fail(f.crawler, BC_ERR_NOMEM, EIO), BC_OK);
    assert_int_equal(bc_crawler_fail(f.crawler, BC_OK, 0), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_crawler_failure(f.crawler, &err), BC_ERR_IO);
    assert_int_equal(err, ENOSPC);
    bool done = true;
    assert_int_equal(bc_crawler_step(f.crawler, 0, &done), BC_ERR_IO);
    assert_int_equal(bc_crawler_sync(f.crawler), BC_ERR_IO);
    assert_int_equal(f.pages, 5); /* no more pages after it */
    char lost[128];
    snprintf(lost, sizeof(lost), "%s", f.path[4]);
    bc_crawler_free(f.crawler);
    bc_crawl_state_close(cfg.state);

    /* The state: the 4 pages before it, the 5th in flight. */
    struct bc_crawl_state *s = state_at(sub);
    assert_int_equal(bc_crawl_state_counter_get(s, "crawler.pages"), 4);
    memset(&f, 0, sizeof(f));
    fail_config(&cfg, &f, s);
    assert_int_equal(bc_crawler_create(&cfg, &f.crawler), BC_OK);
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    assert_int_equal(info.refetched_now, 1);
    assert_int_equal(bc_crawler_run(f.crawler), BC_OK);
    assert_int_equal(bc_crawler_sync(f.crawler), BC_OK);
    assert_int_equal(f.pages, 8); /* 12 in all */
    assert_string_equal(f.path[0], lost);
    struct bc_crawler_stats st;
    bc_crawler_stats(f.crawler, &st);
    assert_int_equal(st.pages, 12);
    bc_crawler_free(f.crawler);
    bc_crawl_state_close(s);
    /* NULL */
    assert_int_equal(bc_crawler_fail(NULL, BC_ERR_IO, 0), BC_ERR_INVALID_ARG);
    err = 1;
    assert_int_equal(bc_crawler_failure(NULL, &err), BC_OK);
    assert_int_equal(err, 0);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- local failures: the machine's, never the page's -------------------- */

/* The small site of test_small_site (/ok at depth 0, its two 404 pages at
 * depth 1) as every crawl of it must end: each page once, none failed. */
static void assert_small_site_whole(const struct run *r)
{
    static const char *const paths[] = {"/ok", "/page1", "/page2?a=1&b=2"};
    assert_int_equal(r->pages, 3);
    for (size_t i = 0; i < 3; i++) {
        const struct seen_page *p = find(r, paths[i]);
        assert_true(p != &no_page);
        assert_false(p->failed);
        assert_int_equal(p->http, i == 0 ? 200 : 404);
    }
}

static void small_site_config(struct bc_crawler_config *cfg, struct run *r)
{
    config_for_server(cfg, r);
    cfg->frontier.max_depth = 1;
    cfg->concurrency = 8;
    cfg->frontier.per_host_concurrency = 4;
    cfg->fetcher.max_host_connections = 4;
    cfg->payload_dedup = true;
    cfg->near_dedup = true;
}

static void oom_crawls(bool archive)
{
    static struct run r;
    long calls = alloc_calls;
    struct bc_crawler_config cfg;
    memset(&r, 0, sizeof(r));
    small_site_config(&cfg, &r);
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    bc_crawler_free(r.crawler);
    if (alloc_calls == calls)
        BC_SKIP(); /* not linked with the wrappers */
    char dir[] = "/tmp/test_crawler_oom.XXXXXX", name[64];
    assert_non_null(mkdtemp(dir));
    snprintf(name, sizeof(name), "%s/oom.warc.gz", dir);
    uint64_t local = 0;
    /* The entries of the payload and near-duplicate indexes, with those
     * counted as left out (dedup_unindexed): the fewest of any whole
     * crawl, and the last crawl's (no allocation failed). */
    uint64_t indexed_min = UINT64_MAX, indexed_all = 0;
    for (long n = 0;; n++) {
        memset(&r, 0, sizeof(r));
        small_site_config(&cfg, &r);
        cfg.clock = fake_clock; /* the pauses pass at once */
        cfg.local_wait_ms = 0;
        struct bc_warc *w = NULL;
        if (archive) {
            unlink(name);
            assert_int_equal(bc_warc_create(name, 0, "x: y\r\n", &w), BC_OK);
            cfg.warc = w;
        }
        assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
        add_seed(&r, "/ok");
        long failures = alloc_failures;
        fail_after = n;
        enum bc_status run = bc_crawler_run(r.crawler);
        fail_after = -1;
        bool failed = alloc_failures != failures;
        /* Only the WARC file's own write may stop the crawl (sticky by
         * design: a record may be half written); never a page. */
        int err;
        if (run != BC_OK) {
            assert_int_equal(bc_crawler_warc_error(r.crawler, &err), run);
            assert_int_equal(run, BC_ERR_NOMEM);
        }
        struct bc_crawler_stats st;
        bc_crawler_stats(r.crawler, &st);
        struct bc_frontier_stats fs;
        bc_frontier_stats(bc_crawler_frontier(r.crawler), 0, &fs);
        for (size_t i = 0; i < r.pages; i++) {
            if (r.page[i].failed)
                print_error("allocation %ld: %s failed\n", n, r.page[i].path);
            assert_false(r.page[i].failed);
        }
        for (int k = 0; k < BC_CRAWLER_ERR_KIND_COUNT; k++)
            assert_int_equal(st.errors[k], 0);
        if (run == BC_OK && st.links_nomem == 0 &&
            fs.reasons[BC_ADMIT_NOMEM] == 0 &&
            fs.reasons[BC_ADMIT_STORE_ERROR] == 0) {
            if (r.pages != 3)
                print_error("allocation %ld: %zu pages\n", n, r.pages);
            assert_small_site_whole(&r);
            uint64_t indexed =
                st.payload_digests + st.fingerprints + st.dedup_unindexed;
            if (indexed < indexed_min)
                indexed_min = indexed;
            indexed_all = st.payload_digests + st.fingerprints;
        }
        if (run == BC_OK)
            assert_int_equal(st.handed_out, st.pages);
        assert_int_equal(st.not_started, 0);
        local += st.local_failures;
        if (st.local_failures)
            assert_int_equal(st.local_errno, ENOMEM);
        bc_crawler_free(r.crawler);
        assert_int_equal(bc_warc_free(w), BC_OK);
        if (!failed)
            break; /* past the crawl's last allocation */
    }
    assert_true(local > 0); /* transfers were given back */
    /* A page an index could not take is counted, never silently left out
     * (the last crawl, with no failure, indexed every page). */
    assert_true(indexed_all > 0);
    assert_true(indexed_min >= indexed_all);
    unlink(name);
    assert_int_equal(rmdir(dir), 0);
}

/*
 * Out of memory anywhere in the crawl (the crawler's, the frontier's, the
 * fetcher's allocations, each failed in turn through tests/alloc_fail.h):
 * never a page's outcome. A transfer that could not start or that ran
 * out of memory is given back and fetched later (local_failures); only an
 * admission that found no memory may lose a URL, and then it is counted
 * (links_nomem, BC_ADMIT_NOMEM); a page the payload or near-duplicate
 * index could not take is counted too (dedup_unindexed, which did not
 * exist before: such a page was left out silently). Before local
 * failures were given back,
 * a transfer that could not start was done as a failure (its URL never
 * fetched) and one that ran out of memory was its page's error.
 */
static void test_local_out_of_memory(void **state)
{
    (void)state;
    oom_crawls(false);
}

/*
 * The same with a WARC writer: the archive's allocations for a transfer
 * (its request head, its records and their spools) failed in turn are
 * local failures of that transfer too; only an allocation of the WARC
 * file's own write (the record going to the file) stops the crawl, as a
 * sticky WARC error.
 */
static void test_local_out_of_memory_warc(void **state)
{
    (void)state;
    oom_crawls(true);
}

/*
 * Out of descriptors (RLIMIT_NOFILE with room for one socket, eight
 * transfers wanted): curl fails the others' connect with EMFILE, which
 * the crawler gives back and fetches later, slowing its intake; the crawl
 * ends with every page fetched and none failed. Before, each was its
 * page's "connect" failure (a crawl at ulimit -n 30 recorded 997).
 */
static void test_local_descriptors(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    small_site_config(&cfg, &r);
    cfg.frontier.max_depth = 2;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/ok");
    struct rlimit saved;
    limit_fds(1, &saved);
    enum bc_status st = bc_crawler_run(r.crawler);
    release_fds(&saved);
    assert_int_equal(st, BC_OK);
    assert_small_site_whole(&r);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_true(s.local_failures > 0);
    assert_int_equal(s.local_errno, EMFILE);
    assert_int_equal(s.errors[BC_CRAWLER_ERR_CONNECT], 0);
    assert_true(s.intake >= 1 && s.intake <= 8);
    assert_int_equal(bc_crawler_local_error(r.crawler, NULL, NULL), BC_OK);
    bc_crawler_free(r.crawler);
}

/*
 * The intake, AIMD (LOCAL FAILURES in crawler.h): halved at each local
 * failure (one cut per pause) down to 1 - 8, 4, 2, 1 - then one more per
 * transfer that completes without one: robots.txt and the three pages
 * once descriptors are back, 1 + 4 = 5 (under concurrency 8).
 */
static void test_local_aimd(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    small_site_config(&cfg, &r);
    cfg.local_wait_ms = 0; /* for ever */
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/ok");
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.intake, 8);
    struct rlimit saved;
    limit_fds(0, &saved);
    unsigned seen[4] = {8, 0, 0, 0}, n = 1;
    for (int i = 0; i < 200 && s.intake > 1; i++) {
        assert_int_equal(bc_crawler_step(r.crawler, 100, NULL), BC_OK);
        bc_crawler_stats(r.crawler, &s);
        if (s.intake != seen[n - 1] && n < 4)
            seen[n++] = s.intake;
    }
    release_fds(&saved);
    assert_int_equal(n, 4); /* 8, 4, 2, 1: halved, one step at a time */
    assert_int_equal(seen[1], 4);
    assert_int_equal(seen[2], 2);
    assert_int_equal(seen[3], 1);
    assert_int_equal(r.pages, 0);
    assert_int_equal(bc_crawler_run(r.crawler), BC_OK);
    assert_small_site_whole(&r);
    bc_crawler_stats(r.crawler, &s);
    assert_int_equal(s.intake, 1 + 4);
    bc_crawler_free(r.crawler);
}

/*
 * No descriptor at all, for longer than local_wait_ms: the step returns
 * the local error (BC_ERR_IO, EMFILE: "file descriptors"), no page was
 * reported, the intake is down to 1, and every later step says the same.
 */
static void test_local_wait(void **state)
{
    (void)state;
    static struct run r;
    memset(&r, 0, sizeof(r));
    struct bc_crawler_config cfg;
    small_site_config(&cfg, &r);
    cfg.local_wait_ms = 300;
    assert_int_equal(bc_crawler_create(&cfg, &r.crawler), BC_OK);
    add_seed(&r, "/ok");
    struct rlimit saved;
    limit_fds(0, &saved);
    enum bc_status st = bc_crawler_run(r.crawler);
    release_fds(&saved);
    assert_int_equal(st, BC_ERR_IO);
    int err = 0;
    uint64_t for_ms = 0;
    assert_int_equal(bc_crawler_local_error(r.crawler, &err, &for_ms),
                     BC_ERR_IO);
    assert_int_equal(err, EMFILE);
    assert_true(for_ms >= 300);
    assert_string_equal(bc_crawler_resource_name(err), "file descriptors");
    assert_string_equal(bc_crawler_resource_name(ENOMEM), "memory");
    /* The one table: a socket's errno of this machine is local, of the
     * peer transient. */
    assert_int_equal(bc_crawler_fault_of(BC_ERR_FETCH_CONNECT, 0, EMFILE),
                     BC_FAULT_LOCAL);
    assert_int_equal(
        bc_crawler_fault_of(BC_ERR_FETCH_CONNECT, 0, EADDRNOTAVAIL),
        BC_FAULT_LOCAL);
    assert_int_equal(bc_crawler_fault_of(BC_ERR_FETCH_OTHER, 0, ENOMEM),
                     BC_FAULT_LOCAL);
    assert_int_equal(bc_crawler_fault_of(BC_ERR_NOMEM, 0, 0), BC_FAULT_LOCAL);
    assert_int_equal(bc_crawler_fault_of(BC_ERR_FETCH_CONNECT, 0, ECONNREFUSED),
                     BC_FAULT_TRANSIENT);
    assert_string_equal(bc_crawler_resource_name(EADDRNOTAVAIL), "local ports");
    assert_int_equal(r.pages, 0);
    struct bc_crawler_stats s;
    bc_crawler_stats(r.crawler, &s);
    assert_true(s.local_failures >= 2);
    assert_int_equal(s.intake, 1);
    assert_int_equal(bc_crawler_step(r.crawler, 0, NULL), BC_ERR_IO);
    bc_crawler_free(r.crawler);
    assert_int_equal(bc_crawler_local_error(NULL, &err, NULL), BC_OK);
    assert_int_equal(err, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_site),
        cmocka_unit_test(test_near_duplicates),
        cmocka_unit_test(test_near_index_bounded),
        cmocka_unit_test(test_sitemaps),
        cmocka_unit_test(test_sitemap_retried),
        cmocka_unit_test(test_redirect_chain),
        cmocka_unit_test(test_stop_mid_crawl),
        cmocka_unit_test(test_pause),
        cmocka_unit_test(test_step_own_loop_fake_clock),
        cmocka_unit_test(test_free_in_flight),
        cmocka_unit_test(test_error_kind),
        cmocka_unit_test(test_error_kind_names),
        cmocka_unit_test(test_fault_table),
        cmocka_unit_test(test_transient_retried),
        cmocka_unit_test(test_max_pages_retries),
        cmocka_unit_test(test_seeds_counted),
        cmocka_unit_test(test_invalid_config),
        cmocka_unit_test(test_null),
        cmocka_unit_test(test_readme_crawler),
        cmocka_unit_test(test_content_types),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_latency_histogram),
        cmocka_unit_test(test_recrawl_after),
        cmocka_unit_test(test_revisit),
        cmocka_unit_test(test_page_budget),
        cmocka_unit_test(test_add_routed),
        cmocka_unit_test(test_add_seed_store_error),
        cmocka_unit_test(test_add_scope),
        cmocka_unit_test(test_durability),
        cmocka_unit_test(test_commit_waits),
        cmocka_unit_test(test_pinned_settings),
        cmocka_unit_test(test_fail),
        cmocka_unit_test(test_local_descriptors),
        cmocka_unit_test(test_local_wait),
        cmocka_unit_test(test_local_aimd),
        cmocka_unit_test(test_local_out_of_memory),
        cmocka_unit_test(test_local_out_of_memory_warc),
    };
    return bc_test_status(
        cmocka_run_group_tests(tests, server_start, server_stop));
}
