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
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bloomcrawl/crawler.h"
#include "fixture_server.h"

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
};

struct run {
    struct bc_crawler *crawler;
    struct seen_page page[MAX_PAGES];
    size_t pages;
    size_t stop_after;      /* on_page calls bc_crawler_stop() at this count */
    uint64_t seeds;         /* seeds added */
    bool check_one_event;   /* compare the frontier's adds in on_page */
    enum bc_status step_in; /* bc_crawler_step() from on_page */
    uint64_t fake_now;      /* the fake clock, when used */
    uint64_t clock_calls;
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
    if (p->location)
        snprintf(s->location, sizeof(s->location), "%.*s", (int)p->location_len,
                 p->location);
    assert_non_null(p->error_text);
    assert_true(p->failed == (p->error_text[0] != 0));

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
    assert_int_equal(r.pages, 3);
    const char *const page404[] = {"/page1", "/page2?a=1&b=2"};
    for (size_t i = 0; i < 2; i++) {
        const struct seen_page *p = find(&r, page404[i]);
        assert_true(p != &no_page);
        assert_int_equal(p->http, 404);
        assert_int_equal(p->depth, 1);
        assert_int_equal(p->links, 0); /* links of 2xx pages only */
        assert_false(p->failed);
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
    }
    assert_true(find(&r, "/text") != &no_page);
    assert_true(find(&r, "/ok") == &no_page); /* outside /sm/ */
    assert_true(find(&r, "/sitemap.xml") == &no_page);
    assert_int_equal(r.pages, 5);

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_site),
        cmocka_unit_test(test_sitemaps),
        cmocka_unit_test(test_redirect_chain),
        cmocka_unit_test(test_stop_mid_crawl),
        cmocka_unit_test(test_step_own_loop_fake_clock),
        cmocka_unit_test(test_free_in_flight),
        cmocka_unit_test(test_error_kind),
        cmocka_unit_test(test_error_kind_names),
        cmocka_unit_test(test_seeds_counted),
        cmocka_unit_test(test_invalid_config),
        cmocka_unit_test(test_null),
        cmocka_unit_test(test_readme_crawler),
    };
    return cmocka_run_group_tests(tests, server_start, server_stop);
}
