/*
 * app.c - an outside program built against an installed bloomcrawl
 * (tests/test_install.sh): with find_package(bloomcrawl) through
 * tests/install/CMakeLists.txt, and with `pkg-config --cflags --libs
 * bloomcrawl`. It calls into every module, so that every library and each
 * of their outside dependencies (xxHash, libm, ICU, libpsl, libcurl,
 * hiredis) must be on the link line, and prints "ok VERSION". The crawler
 * is created and given a seed, never run: nothing is fetched.
 */
#include <stdio.h>
#include <string.h>

#include <bloomcrawl/crawler.h>
#include <bloomcrawl/fetcher.h>
#include <bloomcrawl/frontier.h>
#include <bloomcrawl/links.h>
#include <bloomcrawl/redis_seen.h>
#include <bloomcrawl/seen.h>
#include <bloomcrawl/status.h>
#include <bloomcrawl/url.h>
#include <bloomcrawl/version.h>
#include <bloomcrawl/workers.h>

static int fail(const char *what, enum bc_status st)
{
    fprintf(stderr, "app: %s: %s\n", what, bc_strerror(st));
    return 1;
}

int main(void)
{
    enum bc_status st;

    /* common: the headers and the library are one release. */
    if (strcmp(bc_version(), BC_VERSION_STRING) != 0) {
        fprintf(stderr, "app: library %s, headers %s\n", bc_version(),
                BC_VERSION_STRING);
        return 1;
    }

    /* dedup: the seen-test (xxHash, libm for the sizing). */
    struct bc_seen_config sc;
    bc_seen_config_init(&sc);
    sc.expected = 1000;
    struct bc_seen *seen;
    if ((st = bc_seen_create(&sc, &seen)) != BC_OK)
        return fail("bc_seen_create", st);
    enum bc_seen_verdict v1, v2;
    bc_seen_test_and_add(seen, "a", 1, &v1);
    bc_seen_test_and_add(seen, "a", 1, &v2);
    bc_seen_free(seen);
    if (v1 != BC_SEEN_NEW || v2 != BC_SEEN_DUPLICATE)
        return fail("seen-test verdicts", BC_ERR_INVALID_ARG);

    /* redis: a handle whose connection fails (hiredis); nothing else is
     * contacted than a socket path that does not exist. */
    struct bc_redis_seen *rs;
    if ((st = bc_redis_seen_create("unix:/nonexistent/bloomcrawl.sock", "app",
                                   1000, 0.01, 1, &rs)) != BC_OK)
        return fail("bc_redis_seen_create", st);
    st = bc_redis_seen_connect(rs);
    bc_redis_seen_free(rs);
    if (st != BC_ERR_REDIS_CONNECT)
        return fail("bc_redis_seen_connect", st);

    /* frontier: an IDN host (ICU) and a frontier (libpsl). */
    char buf[256];
    struct bc_url u;
    static const char idn[] = "HTTP://B\xc3\xbc"
                              "cher.example/a/../b";
    if ((st = bc_url_normalize(NULL, idn, strlen(idn), NULL, buf, sizeof(buf),
                               &u)) != BC_OK)
        return fail("bc_url_normalize", st);
    if (strcmp(u.href, "http://xn--bcher-kva.example/b") != 0) {
        fprintf(stderr, "app: normalized to %s\n", u.href);
        return 1;
    }
    struct bc_frontier_config fc;
    bc_frontier_config_init(&fc);
    fc.scope = BC_SCOPE_DOMAIN;
    struct bc_frontier *f;
    if ((st = bc_frontier_create(&fc, &f)) != BC_OK)
        return fail("bc_frontier_create", st);
    enum bc_frontier_reason why;
    st = bc_frontier_add_seed(f, "http://a.example/", 17, &why, NULL);
    bc_frontier_free(f);
    if (st != BC_OK || why != BC_ADMIT_QUEUED)
        return fail("bc_frontier_add_seed", st);

    /* fetcher: libcurl, and the link extractor. */
    if ((st = bc_fetcher_global_init()) != BC_OK)
        return fail("bc_fetcher_global_init", st);
    struct bc_links_config lc;
    bc_links_config_init(&lc);
    struct bc_links *links;
    static const char html[] = "<a href=x>x</a><a href=y>y</a>";
    if ((st = bc_links_create(&lc, "http://a.example/", 17, &links)) != BC_OK)
        return fail("bc_links_create", st);
    st = bc_links_feed(links, html, sizeof(html) - 1);
    if (st == BC_OK)
        st = bc_links_finish(links);
    struct bc_links_stats ls;
    bc_links_stats(links, &ls);
    bc_links_free(links);
    if (st != BC_OK || ls.links != 2)
        return fail("bc_links", st);

    /* crawler: the frontier and the fetcher wired. */
    struct bc_crawler_config cc;
    bc_crawler_config_init(&cc);
    struct bc_crawler *c;
    if ((st = bc_crawler_create(&cc, &c)) != BC_OK)
        return fail("bc_crawler_create", st);
    st = bc_crawler_add_seed(c, "http://a.example/", 17, &why, NULL);
    struct bc_crawler_stats cs;
    bc_crawler_stats(c, &cs);
    bc_crawler_free(c);
    if (st != BC_OK || why != BC_ADMIT_QUEUED || cs.seeds_admitted != 1)
        return fail("bc_crawler_add_seed", st);
    if (strcmp(bc_crawler_error_kind_name(BC_CRAWLER_ERR_TIMEOUT), "timeout"))
        return fail("bc_crawler_error_kind_name", BC_ERR_INVALID_ARG);
    bc_fetcher_global_cleanup();

    /* workers: the partition function (xxHash), a worker whose Redis is
     * unreachable (hiredis). */
    if (bc_workers_owner("http://a.test", 13, 1024) != 574)
        return fail("bc_workers_owner", BC_ERR_INVALID_ARG);
    struct bc_workers_config wc;
    bc_workers_config_init(&wc);
    wc.where = "unix:/nonexistent/bloomcrawl.sock";
    struct bc_workers *w;
    st = bc_workers_create(&wc, &w);
    bc_workers_free(w);
    if (st != BC_ERR_REDIS_CONNECT)
        return fail("bc_workers_create", st);

    printf("ok %s\n", bc_version());
    return 0;
}
