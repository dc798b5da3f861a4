/*
 * test_frontier.c - the frontier's admission and politeness rules, driven
 * by a fake clock: every rule of docs/DESIGN.md 3.3 is checked by the times at
 * which next() hands out URLs, without sleeping.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/crawler.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/frontier_store.h"

#include "alloc_fail.h"
#include "strbuf.h"

/* A frontier with the defaults, politeness delay 1000 ms. */
static struct bc_frontier *make(struct bc_frontier_config *c)
{
    struct bc_frontier *f;
    assert_int_equal(bc_frontier_create(c, &f), BC_OK);
    return f;
}

static struct bc_frontier_config defaults(void)
{
    struct bc_frontier_config c;
    bc_frontier_config_init(&c);
    c.seen.expected = 10000;
    return c;
}

static enum bc_frontier_reason seed(struct bc_frontier *f, const char *url)
{
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_seed(f, url, strlen(url), &r, NULL),
                     BC_OK);
    return r;
}

static enum bc_frontier_reason add(struct bc_frontier *f, const char *href,
                                   const char *base, unsigned depth)
{
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add(f, href, strlen(href), base,
                                     base ? strlen(base) : 0, depth, &r, NULL),
                     BC_OK);
    return r;
}

static struct bc_frontier_job next(struct bc_frontier *f, uint64_t now)
{
    struct bc_frontier_job job;
    assert_int_equal(bc_frontier_next(f, now, &job), BC_OK);
    return job;
}

/* Expect a FETCH_ROBOTS job for url at now and answer it. */
static void robots(struct bc_frontier *f, uint64_t now, const char *url,
                   int status, const char *body)
{
    struct bc_frontier_job job = next(f, now);
    assert_int_equal(job.action, BC_FRONTIER_FETCH_ROBOTS);
    assert_string_equal(job.url, url);
    assert_int_equal(bc_frontier_robots_done(f, &job, status, body,
                                             body ? strlen(body) : 0, NULL, 0,
                                             now),
                     BC_OK);
}

static struct bc_frontier_job expect_fetch(struct bc_frontier *f, uint64_t now,
                                           const char *url)
{
    struct bc_frontier_job job = next(f, now);
    if (job.action != BC_FRONTIER_FETCH || strcmp(job.url, url) != 0) {
        print_error("at %llu: expected FETCH %s, got action %d %s\n",
                    (unsigned long long)now, url, job.action,
                    job.url ? job.url : "(none)");
        fail();
    }
    return job;
}

static void done(struct bc_frontier *f, struct bc_frontier_job *job,
                 uint64_t now, int status, uint64_t response_ms,
                 uint64_t retry_after_ms)
{
    /* The answer's fault as a crawl classes it (the crawler's one table,
     * DESIGN 3.4). */
    struct bc_frontier_outcome o = {status, response_ms, retry_after_ms,
                                    bc_crawler_fault_of(BC_OK, status, 0)};
    assert_int_equal(bc_frontier_done(f, job, &o, now), BC_OK);
}

static void expect_wait(struct bc_frontier *f, uint64_t now, uint64_t until)
{
    struct bc_frontier_job job = next(f, now);
    assert_int_equal(job.action, BC_FRONTIER_WAIT);
    assert_int_equal(job.wait_until_ms, until);
}

/* robots.txt first; then one fetch per host per delay, counted from the
 * end of the previous transfer. */
static void test_delay_between_fetches(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    struct bc_frontier *f = make(&c);
    assert_int_equal(seed(f, "http://a.test/"), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "/one", "http://a.test/", 1), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "two", "http://a.test/", 1), BC_ADMIT_QUEUED);
    /* Nothing is handed out before robots.txt. */
    robots(f, 0, "http://a.test/robots.txt", 404, NULL);
    expect_wait(f, 0, 1000); /* robots.txt was a request too */
    expect_wait(f, 999, 1000);
    struct bc_frontier_job j = expect_fetch(f, 1000, "http://a.test/");
    assert_int_equal(j.depth, 0);
    expect_wait(f, 1000, UINT64_MAX); /* one transfer per host */
    done(f, &j, 1300, 200, 300, 0);
    expect_wait(f, 1300, 2300);
    j = expect_fetch(f, 2300, "http://a.test/one");
    assert_int_equal(j.depth, 1);
    done(f, &j, 2400, 200, 100, 0);
    j = expect_fetch(f, 3400, "http://a.test/two");
    done(f, &j, 3500, 200, 100, 0);
    struct bc_frontier_job end = next(f, 3500);
    assert_int_equal(end.action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
}

/* Several hosts: each keeps its own clock; they interleave. */
static void test_hosts_interleave(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    c.obey_robots = false;
    struct bc_frontier *f = make(&c);
    const char *hosts[] = {"http://a.test", "http://b.test", "http://c.test"};
    char url[64];
    for (int h = 0; h < 3; h++) {
        for (int i = 0; i < 3; i++) {
            snprintf(url, sizeof(url), "%s/%d", hosts[h], i);
            assert_int_equal(seed(f, url), BC_ADMIT_QUEUED);
        }
    }
    /* At t = 0 every host is ready: one URL from each, then wait. */
    struct bc_frontier_job j[3];
    bool seen_host[3] = {false, false, false};
    for (int k = 0; k < 3; k++) {
        j[k] = next(f, 0);
        assert_int_equal(j[k].action, BC_FRONTIER_FETCH);
        for (int h = 0; h < 3; h++)
            if (strncmp(j[k].url, hosts[h], strlen(hosts[h])) == 0)
                seen_host[h] = true;
    }
    assert_true(seen_host[0] && seen_host[1] && seen_host[2]);
    expect_wait(f, 0, UINT64_MAX);
    char first_host[16];
    memcpy(first_host, j[0].url, 13); /* "http://x.test" */
    first_host[13] = '\0';
    /* They finish at different times; each host's next is 1 s later. */
    done(f, &j[0], 100, 200, 100, 0);
    done(f, &j[1], 200, 200, 200, 0);
    done(f, &j[2], 300, 200, 300, 0);
    expect_wait(f, 300, 1100);
    struct bc_frontier_job k = next(f, 1100);
    assert_int_equal(k.action, BC_FRONTIER_FETCH);
    assert_memory_equal(k.url, first_host, 13);
    expect_wait(f, 1100, 1200);
    done(f, &k, 1150, 200, 50, 0);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 1150, &s);
    assert_int_equal(s.hosts, 3);
    assert_int_equal(s.queued, 5);
    assert_int_equal(s.in_flight, 0);
    assert_int_equal(s.hosts_waiting, 3);
    assert_int_equal(s.hosts_ready, 0);
    bc_frontier_stats(f, 1200, &s);
    assert_int_equal(s.hosts_ready, 1);
    bc_frontier_free(f);
}

/* per_host_concurrency = 2: two transfers at once, starts spaced by the
 * delay. */
static void test_per_host_concurrency(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.per_host_concurrency = 2;
    c.obey_robots = false;
    c.min_delay_ms = 100;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/");
    add(f, "/1", "http://a.test/", 1);
    add(f, "/2", "http://a.test/", 1);
    struct bc_frontier_job a = expect_fetch(f, 0, "http://a.test/");
    expect_wait(f, 0, 100);
    struct bc_frontier_job b = expect_fetch(f, 100, "http://a.test/1");
    expect_wait(f, 1000, UINT64_MAX); /* both slots taken */
    done(f, &a, 1000, 200, 1000, 0);
    struct bc_frontier_job d = expect_fetch(f, 1100, "http://a.test/2");
    done(f, &b, 1200, 200, 1100, 0);
    done(f, &d, 1300, 200, 200, 0);
    assert_int_equal(next(f, 1300).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
}

/* Crawl-delay from robots.txt, capped at max_crawl_delay_ms. */
static void test_crawl_delay_and_cap(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.max_crawl_delay_ms = 30000;
    c.scope = BC_SCOPE_ANY;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/x");
    seed(f, "http://a.test/y");
    seed(f, "http://b.test/x");
    seed(f, "http://b.test/y");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "User-agent: *\nCrawl-delay: 5\n");
    robots(f, 0, "http://b.test/robots.txt", 200,
           "User-agent: bloomcrawl\nCrawl-delay: 100\n"
           "User-agent: *\nCrawl-delay: 1\n");
    /* a: 5 s after robots.txt; b: its own group, capped at 30 s. */
    struct bc_frontier_job j = expect_fetch(f, 5000, "http://a.test/x");
    done(f, &j, 5000, 200, 10, 0);
    expect_wait(f, 5000, 10000);
    j = expect_fetch(f, 10000, "http://a.test/y");
    done(f, &j, 10000, 200, 10, 0);
    expect_wait(f, 10000, 30000);
    j = expect_fetch(f, 30000, "http://b.test/x");
    done(f, &j, 30000, 200, 10, 0);
    expect_wait(f, 30000, 60000);
    bc_frontier_free(f);
}

/* bc_frontier_set_host_delay(): a host's min_delay_ms overridden, never
 * below its robots.txt Crawl-delay; 0 removes the override. */
static void test_host_delay_override(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    c.min_delay_ms = 1000;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/1");
    seed(f, "http://b.test/1");
    seed(f, "http://b.test/2");
    seed(f, "http://b.test/3");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "User-agent: *\nCrawl-delay: 2\n");
    robots(f, 0, "http://b.test/robots.txt", 200, "User-agent: *\n");
    uint64_t eff = 0;
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://c.test", 13, 5, &eff),
        BC_ERR_NOT_FOUND);
    assert_int_equal(bc_frontier_set_host_delay(f, NULL, 0, 5, &eff),
                     BC_ERR_INVALID_ARG);
    /* a: 100 ms asked, its Crawl-delay (2 s) holds; 5 s is above it. */
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://a.test", 13, 100, &eff), BC_OK);
    assert_int_equal(eff, 2000);
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://a.test", 13, 5000, &eff), BC_OK);
    assert_int_equal(eff, 5000);
    /* b: 300 ms from its next request on (the one scheduled by its
     * robots.txt at 0 + 1 s keeps its time). */
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://b.test", 13, 300, &eff), BC_OK);
    assert_int_equal(eff, 300);
    struct bc_frontier_job j = expect_fetch(f, 1000, "http://b.test/1");
    done(f, &j, 1000, 200, 10, 0);
    expect_wait(f, 1000, 1300);
    j = expect_fetch(f, 1300, "http://b.test/2");
    /* 0: back to min_delay_ms. */
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://b.test", 13, 0, &eff), BC_OK);
    assert_int_equal(eff, 1000);
    done(f, &j, 1300, 200, 10, 0);
    expect_wait(f, 1300, 2000); /* a's Crawl-delay comes first */
    j = expect_fetch(f, 2000, "http://a.test/1");
    done(f, &j, 2000, 200, 10, 0);
    expect_wait(f, 2000, 2300);
    expect_fetch(f, 2300, "http://b.test/3");
    bc_frontier_free(f);
}

/* The response-time factor: a slow server gets a longer pause. */
static void test_response_factor(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.response_factor = 10.0;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/1");
    seed(f, "http://a.test/2");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/1");
    done(f, &j, 500, 200, 500, 0); /* 10 x 500 ms = 5 s > 1 s */
    expect_wait(f, 500, 5500);
    bc_frontier_free(f);
}

/* 429/503: Retry-After blocks the host; without it, the backoff. */
static void test_retry_after(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.backoff_ms = 60000;
    c.max_retry_after_ms = 3600000;
    struct bc_frontier *f = make(&c);
    for (int i = 0; i < 4; i++) {
        char url[32];
        snprintf(url, sizeof(url), "http://a.test/%d", i);
        seed(f, url);
    }
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/0");
    done(f, &j, 100, 429, 100, 7000);
    expect_wait(f, 100, 7100);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 200, &s);
    assert_int_equal(s.hosts_blocked, 1);
    j = expect_fetch(f, 7100, "http://a.test/1");
    done(f, &j, 7200, 503, 100, 0);
    expect_wait(f, 7200, 67200);
    j = expect_fetch(f, 67200, "http://a.test/2");
    done(f, &j, 67300, 503, 100, UINT64_C(100) * 3600000); /* capped */
    expect_wait(f, 67300, 67300 + 3600000);
    bc_frontier_free(f);
}

/* robots.txt disallowing all: URLs queued before it is known come back as
 * DROP jobs; later ones are refused at once. Sitemap and allow rules. */
static void test_robots_disallow(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.min_delay_ms = 0;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/");
    add(f, "/private/x", "http://a.test/", 1);
    add(f, "/public", "http://a.test/", 1);
    robots(f, 0, "http://a.test/robots.txt", 200,
           "User-agent: *\nDisallow: /private/\n");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    done(f, &j, 0, 200, 1, 0);
    j = next(f, 0);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_ROBOTS);
    assert_string_equal(j.url, "http://a.test/private/x");
    j = expect_fetch(f, 0, "http://a.test/public");
    done(f, &j, 0, 200, 1, 0);
    /* Now the rules are known: refused at admission, never queued. */
    assert_int_equal(add(f, "/private/y", "http://a.test/", 1),
                     BC_ADMIT_ROBOTS);
    assert_int_equal(add(f, "/robots.txt", "http://a.test/", 1),
                     BC_ADMIT_QUEUED);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.reasons[BC_ADMIT_ROBOTS], 2);
    assert_int_equal(s.robots_parsed, 1);
    bc_frontier_free(f);
}

/* 5xx: unreachable, nothing handed out; robots.txt retried later. 4xx:
 * allow all. Redirects are followed, at most 5. */
static void test_robots_outcomes(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.min_delay_ms = 0;
    c.robots_retry_ms = 300000;
    c.scope = BC_SCOPE_ANY;
    struct bc_frontier *f = make(&c);
    seed(f, "http://down.test/");
    robots(f, 0, "http://down.test/robots.txt", 503, NULL);
    expect_wait(f, 0, 300000);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 1, &s);
    assert_int_equal(s.hosts_robots, 1); /* waiting for robots.txt */
    assert_int_equal(s.hosts_blocked, 0);
    assert_int_equal(s.robots_unreachable, 1);
    /* After the retry delay robots.txt is asked for again. */
    robots(f, 300000, "http://down.test/robots.txt", 404, NULL);
    struct bc_frontier_job j = expect_fetch(f, 300000, "http://down.test/");
    done(f, &j, 300001, 200, 1, 0);

    /* A redirect chain: followed up to 5 times, then "unavailable". */
    seed(f, "http://r.test/page");
    j = next(f, 400000);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
    for (int i = 0; i < 6; i++) {
        char loc[32];
        snprintf(loc, sizeof(loc), "/robots%d.txt", i + 1);
        assert_int_equal(bc_frontier_robots_done(f, &j, 301, NULL, 0, loc,
                                                 strlen(loc), 400000),
                         BC_OK);
        j = next(f, 400000);
        if (i < 5) {
            assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
            assert_string_equal(j.url + strlen("http://r.test/robots"),
                                loc + strlen("/robots"));
        }
    }
    /* The sixth redirect was not followed: allow all. */
    assert_int_equal(j.action, BC_FRONTIER_FETCH);
    assert_string_equal(j.url, "http://r.test/page");
    done(f, &j, 400001, 200, 1, 0);
    bc_frontier_stats(f, 400001, &s);
    assert_int_equal(s.robots_unavailable, 2);
    bc_frontier_free(f);
}

/* robots.txt answering 429 (Too Many Requests) or 408 (Request Timeout):
 * transient faults (DESIGN 3.4), so unreachable like a 5xx - nothing
 * fetched, asked again after robots_retry_ms then twice that, the host
 * given up after robots_retries - never "unavailable, allow all", which
 * would crawl a rate-limiting site with no rules at all. Other 4xx still
 * allow all. */
static void test_robots_transient_4xx(void **state)
{
    (void)state;
    static const int transient[] = {408, 429};
    for (size_t i = 0; i < 2; i++) {
        struct bc_frontier_config c = defaults();
        c.min_delay_ms = 0;
        c.robots_retry_ms = 1000;
        c.robots_retries = 2;
        struct bc_frontier *f = make(&c);
        seed(f, "http://rl.test/");
        robots(f, 0, "http://rl.test/robots.txt", transient[i], NULL);
        expect_wait(f, 0, 1000);
        struct bc_frontier_stats s;
        bc_frontier_stats(f, 1, &s);
        assert_int_equal(s.robots_unreachable, 1);
        assert_int_equal(s.robots_unavailable, 0);
        assert_int_equal(s.hosts_robots, 1); /* waiting for robots.txt */
        robots(f, 1000, "http://rl.test/robots.txt", transient[i], NULL);
        expect_wait(f, 1000, 1000 + 2000); /* doubled */
        robots(f, 3000, "http://rl.test/robots.txt", transient[i], NULL);
        struct bc_frontier_job j = next(f, 3000); /* every retry failed */
        assert_int_equal(j.action, BC_FRONTIER_DROP);
        assert_int_equal(j.reason, BC_ADMIT_HOST_GIVEN_UP);
        assert_int_equal(next(f, 3000).action, BC_FRONTIER_DONE);
        bc_frontier_stats(f, 3000, &s);
        assert_int_equal(s.robots_unreachable, 3);
        assert_int_equal(s.robots_unavailable, 0);
        assert_int_equal(s.hosts_given_up, 1);
        bc_frontier_free(f);
    }
    /* Either side of them: 407 and 410 allow all, and so does 428. */
    static const int unavailable[] = {407, 410, 428};
    for (size_t i = 0; i < 3; i++) {
        struct bc_frontier_config c = defaults();
        c.min_delay_ms = 0;
        struct bc_frontier *f = make(&c);
        seed(f, "http://ok.test/");
        robots(f, 0, "http://ok.test/robots.txt", unavailable[i], NULL);
        struct bc_frontier_job j = expect_fetch(f, 0, "http://ok.test/");
        done(f, &j, 1, 200, 1, 0);
        struct bc_frontier_stats s;
        bc_frontier_stats(f, 1, &s);
        assert_int_equal(s.robots_unavailable, 1);
        assert_int_equal(s.robots_unreachable, 0);
        bc_frontier_free(f);
    }
}

struct lost {
    char origin[64];
    uint64_t lost;
    int calls;
};

static void on_given_up(void *ctx, const char *origin, size_t len,
                        uint64_t lost)
{
    struct lost *l = ctx;
    snprintf(l->origin, sizeof(l->origin), "%.*s", (int)len, origin);
    l->lost = lost;
    l->calls++;
}

/* A dead host (robots.txt 503 or no answer) beside a live one: robots.txt
 * is retried robots_retries times after 1000, 2000, 4000 ms (each delay
 * twice the last), then the host is given up: its queued URLs come back as
 * DROP jobs, and so do later ones (admitted, then dropped), the live host
 * is crawled and the crawl ends - next() says DONE. The clock is fake: it
 * jumps to each WAIT's time. */
static void test_robots_give_up(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.min_delay_ms = 0;
    c.robots_retry_ms = 1000;
    c.robots_retries = 3;
    c.scope = BC_SCOPE_ANY;
    struct bc_frontier *f = make(&c);
    seed(f, "http://dead.test/");
    assert_int_equal(add(f, "/a", "http://dead.test/", 1), BC_ADMIT_QUEUED);
    seed(f, "http://live.test/");
    assert_int_equal(add(f, "/b", "http://live.test/", 1), BC_ADMIT_QUEUED);
    uint64_t now = 0, tries[8];
    int ntries = 0, fetched = 0, drops = 0, steps = 0;
    bool saw_waiting = false;
    for (;;) {
        assert_true(++steps < 100);
        struct bc_frontier_job j = next(f, now);
        if (j.action == BC_FRONTIER_DONE)
            break;
        if (j.action == BC_FRONTIER_WAIT) {
            struct bc_frontier_stats s;
            bc_frontier_stats(f, now, &s);
            if (s.hosts_robots == 1 && s.hosts_given_up == 0)
                saw_waiting = true;
            assert_true(j.wait_until_ms != UINT64_MAX);
            now = j.wait_until_ms;
            continue;
        }
        if (j.action == BC_FRONTIER_DROP) {
            assert_int_equal(j.reason, BC_ADMIT_HOST_GIVEN_UP);
            assert_non_null(strstr(j.url, "dead.test"));
            drops++;
            continue;
        }
        bool dead = strstr(j.url, "dead.test") != NULL;
        if (j.action == BC_FRONTIER_FETCH_ROBOTS) {
            if (dead) {
                assert_true(ntries < 8);
                tries[ntries++] = now;
            }
            /* dead: 503, then no answer at all (status 0) */
            assert_int_equal(bc_frontier_robots_done(
                                 f, &j, dead ? (ntries == 1 ? 503 : 0) : 404,
                                 NULL, 0, NULL, 0, now),
                             BC_OK);
            continue;
        }
        assert_false(dead);
        fetched++;
        done(f, &j, now, 200, 1, 0);
    }
    assert_int_equal(ntries, 4); /* the first try and 3 retries */
    assert_int_equal(tries[0], 0);
    assert_int_equal(tries[1], 1000);
    assert_int_equal(tries[2], 1000 + 2000);
    assert_int_equal(tries[3], 1000 + 2000 + 4000);
    assert_true(saw_waiting);
    assert_int_equal(fetched, 2);
    assert_int_equal(drops, 2);
    /* Later URLs of the host are admitted (seen-tested, queued) and come
     * back as DROP jobs with the same reason, so that a store keeps them
     * for a retry like the others; found again, a URL is a duplicate. */
    assert_int_equal(add(f, "/c", "http://dead.test/", 1), BC_ADMIT_QUEUED);
    struct bc_frontier_job d = next(f, now);
    assert_int_equal(d.action, BC_FRONTIER_DROP);
    assert_int_equal(d.reason, BC_ADMIT_HOST_GIVEN_UP);
    assert_string_equal(d.url, "http://dead.test/c");
    assert_int_equal(add(f, "/c", "http://dead.test/", 1), BC_ADMIT_DUPLICATE);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, now, &s);
    assert_int_equal(s.hosts_given_up, 1);
    assert_int_equal(s.hosts_robots, 0);
    assert_int_equal(s.reasons[BC_ADMIT_HOST_GIVEN_UP], 3);
    assert_int_equal(s.reasons[BC_ADMIT_DUPLICATE], 1);
    assert_int_equal(s.robots_unreachable, 4);
    assert_int_equal(s.queued, 0);
    struct lost l = {{0}, 0, 0};
    assert_int_equal(bc_frontier_given_up_hosts(f, on_given_up, &l), 1);
    assert_int_equal(l.calls, 1);
    assert_string_equal(l.origin, "http://dead.test");
    assert_int_equal(l.lost, 3);
    assert_int_equal(bc_frontier_given_up_hosts(f, NULL, NULL), 1);
    assert_int_equal(next(f, now).action, BC_FRONTIER_DONE);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_HOST_GIVEN_UP),
                        "host_given_up");
    bc_frontier_free(f);

    /* robots_retries 0: given up at the first failure; a success between
     * failures starts the count again. */
    c.robots_retries = 0;
    f = make(&c);
    seed(f, "http://dead.test/");
    robots(f, 0, "http://dead.test/robots.txt", 500, NULL);
    struct bc_frontier_job j = next(f, 0);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(next(f, 0).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);

    /* The defaults (frontier.c, A CRAWL ALWAYS ENDS): 3 retries after 10,
     * 20, 40 s: a dead host is given up 70 s after its first failure. */
    c = defaults();
    assert_int_equal(c.robots_retries, 3);
    assert_int_equal(c.robots_retry_ms, 10000);
    f = make(&c);
    seed(f, "http://dead.test/");
    now = 0;
    for (int i = 0; i < 4; i++) {
        j = next(f, now);
        if (j.action == BC_FRONTIER_WAIT) {
            now = j.wait_until_ms;
            j = next(f, now);
        }
        assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
        assert_int_equal(
            bc_frontier_robots_done(f, &j, 0, NULL, 0, NULL, 0, now), BC_OK);
    }
    assert_int_equal(now, 70000);
    assert_int_equal(next(f, now).action, BC_FRONTIER_DROP);
    assert_int_equal(next(f, now).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);

    c.min_delay_ms = 0;
    c.scope = BC_SCOPE_ANY;
    c.robots_retry_ms = 1000;
    c.robots_retries = 1;
    c.robots_ttl_ms = 10000;
    f = make(&c);
    seed(f, "http://flaky.test/");
    add(f, "/1", "http://flaky.test/", 1);
    add(f, "/2", "http://flaky.test/", 1);
    robots(f, 0, "http://flaky.test/robots.txt", 503, NULL);
    robots(f, 1000, "http://flaky.test/robots.txt", 404, NULL);
    j = expect_fetch(f, 1000, "http://flaky.test/");
    done(f, &j, 1000, 200, 1, 0);
    /* Expired after 10 s: one failure, retried, not given up. */
    robots(f, 11000, "http://flaky.test/robots.txt", 503, NULL);
    robots(f, 12000, "http://flaky.test/robots.txt", 404, NULL);
    j = expect_fetch(f, 12000, "http://flaky.test/1");
    done(f, &j, 12000, 200, 1, 0);
    bc_frontier_stats(f, 12000, &s);
    assert_int_equal(s.hosts_given_up, 0);
    bc_frontier_free(f);
}

/* Redirect hops travel with the queued URL: a chain is cut after
 * max_redirects hops, before the seen-test; a page's links start anew. */
static void test_redirect_hops(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.max_redirects = 2;
    struct bc_frontier *f = make(&c);
    enum bc_frontier_reason r;
    seed(f, "http://a.test/r/0");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/r/0");
    assert_int_equal(j.redirects, 0);
    for (unsigned hop = 1; hop <= 3; hop++) {
        char loc[32];
        snprintf(loc, sizeof(loc), "/r/%u", hop);
        assert_int_equal(bc_frontier_add_redirect(f, &j, loc, strlen(loc),
                                                  j.url, j.url_len, &r, NULL),
                         BC_OK);
        if (hop == 3) {
            assert_int_equal(r, BC_ADMIT_TOO_MANY_REDIRECTS);
            break;
        }
        assert_int_equal(r, BC_ADMIT_QUEUED);
        done(f, &j, 0, 301, 1, 0);
        snprintf(loc, sizeof(loc), "http://a.test/r/%u", hop);
        j = expect_fetch(f, 0, loc);
        assert_int_equal(j.redirects, hop);
        assert_int_equal(j.depth, 0); /* the depth of the first page */
    }
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.seen.tested, 3); /* /r/3 never reached the filter */
    assert_int_equal(s.reasons[BC_ADMIT_TOO_MANY_REDIRECTS], 1);
    /* A link of the last page is a new chain. */
    assert_int_equal(add(f, "/r/3", j.url, j.depth + 1), BC_ADMIT_QUEUED);
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://a.test/r/3");
    assert_int_equal(j.redirects, 0);
    assert_int_equal(j.depth, 1);
    assert_int_equal(
        bc_frontier_add_redirect(f, NULL, "/x", 2, j.url, j.url_len, &r, NULL),
        BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_frontier_add_redirect(f, &j, "/x", 2, NULL, 0, &r, NULL),
        BC_ERR_INVALID_ARG);
    done(f, &j, 0, 200, 1, 0);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_TOO_MANY_REDIRECTS),
                        "too_many_redirects");
    bc_frontier_free(f);

    c.max_redirects = 256;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
}

/* A URL answered 429 or 503 is queued again after the host's wait, at
 * most max_retries times; the job says which try it is. */
static void test_retry_url(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.max_retries = 2;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/x");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/x");
    assert_int_equal(j.retries, 0);
    done(f, &j, 10, 429, 10, 5000);
    expect_wait(f, 10, 5010);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 20, &s);
    assert_int_equal(s.hosts_blocked, 1);
    assert_int_equal(s.queued, 1);
    j = expect_fetch(f, 5010, "http://a.test/x");
    assert_int_equal(j.retries, 1);
    done(f, &j, 5020, 503, 10, 0); /* 503 without Retry-After: backoff */
    expect_wait(f, 5020, 5020 + c.backoff_ms);
    j = expect_fetch(f, 5020 + c.backoff_ms, "http://a.test/x");
    assert_int_equal(j.retries, 2);
    done(f, &j, 70000, 429, 10, 1000);
    /* Retried twice: not queued again. */
    assert_int_equal(next(f, 71000).action, BC_FRONTIER_DONE);
    bc_frontier_stats(f, 71000, &s);
    assert_int_equal(s.retried, 2);
    assert_int_equal(s.handed_out, 3);
    bc_frontier_free(f);

    c.max_retries = 0; /* no retry at all */
    f = make(&c);
    seed(f, "http://a.test/x");
    j = expect_fetch(f, 0, "http://a.test/x");
    done(f, &j, 10, 429, 10, 0);
    assert_int_equal(next(f, 100000).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
    c.max_retries = 256;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
}

/* A job given back after a local failure (bc_frontier_giveback()) is as if
 * it had not been handed out: a FETCH's URL queued again (at the host's
 * tail) with its retries unchanged, a robots.txt asked for again with no
 * failure counted, a sitemap queued again; the host's next contact is not
 * delayed; counted in given_back. */
static void test_giveback(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.sitemaps = true;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/x");
    assert_int_equal(add(f, "/y", "http://a.test/x", 1), BC_ADMIT_QUEUED);
    /* robots.txt given back: asked again at once, no failure counted. */
    struct bc_frontier_job j = next(f, 0);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
    assert_int_equal(bc_frontier_giveback(f, &j, 5), BC_OK);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 5, &s);
    assert_int_equal(s.given_back, 1);
    assert_int_equal(s.robots_unreachable, 0);
    assert_int_equal(s.in_flight, 0);
    robots(f, 5, "http://a.test/robots.txt", 404, NULL);
    /* The sitemap (/sitemap.xml, robots.txt named none) given back: handed
     * out again once the robots.txt delay is over, not later. */
    j = next(f, 1005);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/sitemap.xml");
    assert_int_equal(bc_frontier_giveback(f, &j, 1010), BC_OK);
    j = next(f, 1010);
    assert_int_equal(j.action, BC_FRONTIER_FETCH_SITEMAP);
    assert_string_equal(j.url, "http://a.test/sitemap.xml");
    assert_string_equal(j.scope, "http://a.test/");
    struct bc_frontier_outcome o = {404, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_sitemap_done(f, &j, &o, 1020), BC_OK);
    /* A FETCH given back goes to the tail of its host's queue, with its
     * retries, and may be handed out again at once. */
    j = expect_fetch(f, 2020, "http://a.test/x");
    assert_int_equal(bc_frontier_giveback(f, &j, 2030), BC_OK);
    /* job.url stays valid until the next next() */
    assert_string_equal(j.url, "http://a.test/x");
    j = expect_fetch(f, 2030, "http://a.test/y");
    done(f, &j, 2040, 200, 10, 0);
    j = expect_fetch(f, 3040, "http://a.test/x");
    assert_int_equal(j.retries, 0);
    assert_int_equal(j.depth, 0);
    done(f, &j, 3050, 200, 10, 0);
    assert_int_equal(next(f, 9000).action, BC_FRONTIER_DONE);
    bc_frontier_stats(f, 9000, &s);
    assert_int_equal(s.given_back, 3);
    assert_int_equal(s.handed_out, 3);
    assert_int_equal(s.retried, 0);
    /* Not a job out: refused. */
    assert_int_equal(bc_frontier_giveback(f, &j, 9000), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_frontier_giveback(NULL, &j, 9000), BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
}

static enum bc_frontier_reason
add_payload(struct bc_frontier *f, const char *url, const void *p, size_t n)
{
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_payload(f, url, strlen(url), NULL, 0, 1, p,
                                             n, &r, NULL),
                     BC_OK);
    return r;
}

static void expect_payload(const struct bc_frontier_job *j, const void *p,
                           size_t n)
{
    assert_int_equal(j->payload_len, n);
    if (n == 0)
        assert_null(j->payload);
    else
        assert_memory_equal(j->payload, p, n);
}

/* A URL's payload (bc_frontier_add_payload()) comes back byte for byte
 * with its FETCH job, NUL bytes included, and stays with it through a
 * retry and a give-back; a URL without one gets NULL and 0; a payload
 * over max_payload is refused before anything is counted. Leaks (a
 * payload dropped, refused as a duplicate, queued or out at free()) are
 * the sanitizer build's to see. */
static void test_payload(void **state)
{
    (void)state;
    static const unsigned char p1[] = {'r', 0, 'e', 0, 0, 'q', 0xff};
    static const unsigned char p3[] = {0};
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.max_retries = 2;
    c.max_payload = 16;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/");
    assert_int_equal(add_payload(f, "http://a.test/p1", p1, sizeof(p1)),
                     BC_ADMIT_QUEUED);
    assert_int_equal(add_payload(f, "http://a.test/p2", NULL, 0),
                     BC_ADMIT_QUEUED);
    assert_int_equal(add_payload(f, "http://a.test/p3", p3, sizeof(p3)),
                     BC_ADMIT_QUEUED);
    /* A duplicate's payload is dropped with it. */
    assert_int_equal(add_payload(f, "http://a.test/p1", p3, sizeof(p3)),
                     BC_ADMIT_DUPLICATE);
    /* max_payload bytes pass, one more is refused, nothing counted. */
    unsigned char big[17];
    memset(big, 'x', sizeof(big));
    struct bc_frontier_stats before, after;
    bc_frontier_stats(f, 0, &before);
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_payload(f, "http://a.test/big", 17, NULL,
                                             0, 1, big, 17, &r, NULL),
                     BC_ERR_TOO_LARGE);
    assert_int_equal(r, BC_ADMIT_TOO_LONG);
    bc_frontier_stats(f, 0, &after);
    assert_int_equal(after.added, before.added);
    assert_int_equal(after.queued, before.queued);
    assert_int_equal(bc_frontier_add_payload(f, "http://a.test/big", 17, NULL,
                                             0, 1, NULL, 3, &r, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(add_payload(f, "http://a.test/big", big, 16),
                     BC_ADMIT_QUEUED);

    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    expect_payload(&j, NULL, 0); /* a seed has none */
    done(f, &j, 1, 200, 1, 0);
    j = expect_fetch(f, 1, "http://a.test/p1");
    expect_payload(&j, p1, sizeof(p1));
    done(f, &j, 2, 503, 1, 10); /* retried: to the tail with its payload */
    j = expect_fetch(f, 5000, "http://a.test/p2");
    expect_payload(&j, NULL, 0);
    done(f, &j, 5001, 200, 1, 0);
    j = expect_fetch(f, 5001, "http://a.test/p3");
    expect_payload(&j, p3, sizeof(p3));
    assert_int_equal(bc_frontier_giveback(f, &j, 5002), BC_OK);
    j = expect_fetch(f, 5002, "http://a.test/big");
    expect_payload(&j, big, 16);
    done(f, &j, 5003, 200, 1, 0);
    j = expect_fetch(f, 5003, "http://a.test/p1");
    assert_int_equal(j.retries, 1);
    expect_payload(&j, p1, sizeof(p1));
    done(f, &j, 5004, 200, 1, 0);
    j = expect_fetch(f, 5004, "http://a.test/p3");
    expect_payload(&j, p3, sizeof(p3));
    /* Freed with one payload in flight and one queued. */
    assert_int_equal(add_payload(f, "http://a.test/p4", p1, sizeof(p1)),
                     BC_ADMIT_QUEUED);
    bc_frontier_free(f);

    /* A payload queued with a URL that robots.txt then refuses goes with
     * its DROP. */
    c = defaults();
    f = make(&c);
    seed(f, "http://a.test/");
    assert_int_equal(add_payload(f, "http://a.test/private/x", p1, sizeof(p1)),
                     BC_ADMIT_QUEUED);
    robots(f, 0, "http://a.test/robots.txt", 200,
           "User-agent: *\nDisallow: /private\n");
    j = expect_fetch(f, 1000, "http://a.test/");
    done(f, &j, 1001, 200, 1, 0);
    j = next(f, 2001);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_ROBOTS);
    assert_null(j.payload);
    bc_frontier_free(f);

    /* max_payload 0: no payloads; over the hard limit: refused. */
    c.max_payload = 0;
    f = make(&c);
    assert_int_equal(bc_frontier_add_payload(f, "http://a.test/", 14, NULL, 0,
                                             0, p3, 1, &r, NULL),
                     BC_ERR_TOO_LARGE);
    bc_frontier_free(f);
    c.max_payload = BC_FRONTIER_MAX_PAYLOAD + 1;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
}

/* Budget, depth, segment and trap limits, scope, patterns, queue size. */
static void test_admission_limits(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    static const char *const exclude[] = {"*.pdf", "*/logout*"};
    c.host_budget = 3;
    c.max_depth = 2;
    c.max_segments = 4;
    c.exclude = exclude;
    c.exclude_count = 2;
    struct bc_frontier *f = make(&c);
    const char *base = "http://a.test/dir/";
    assert_int_equal(seed(f, base), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "x", base, 2), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "y", base, 3), BC_ADMIT_TOO_DEEP);
    assert_int_equal(add(f, "/a/b/c/d/e", base, 1), BC_ADMIT_TOO_MANY_SEGMENTS);
    assert_int_equal(add(f, "/a/b/c/d", base, 1), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "/t/a/t/t", base, 1), BC_ADMIT_TRAP);
    assert_int_equal(add(f, "/t/a/t", base, 1), BC_ADMIT_HOST_BUDGET);
    assert_int_equal(add(f, "/r.pdf", base, 1), BC_ADMIT_EXCLUDED);
    assert_int_equal(add(f, "/logout?x", base, 1), BC_ADMIT_EXCLUDED);
    /* The budget: 3 URLs of a.test are queued. */
    assert_int_equal(add(f, "/more", base, 1), BC_ADMIT_HOST_BUDGET);
    /* Scope: the seed's host only. */
    assert_int_equal(add(f, "http://b.test/", base, 1), BC_ADMIT_OUT_OF_SCOPE);
    assert_int_equal(add(f, "mailto:x@a.test", base, 1), BC_ADMIT_BAD_URL);
    enum bc_frontier_reason r;
    enum bc_status ust;
    assert_int_equal(
        bc_frontier_add(f, "ftp://a.test/", 13, NULL, 0, 1, &r, &ust), BC_OK);
    assert_int_equal(r, BC_ADMIT_BAD_URL);
    assert_int_equal(ust, BC_ERR_URL_SCHEME);
    char longurl[3000];
    memset(longurl, 'a', sizeof(longurl) - 1);
    longurl[sizeof(longurl) - 1] = '\0';
    assert_int_equal(add(f, longurl, base, 1), BC_ADMIT_TOO_LONG);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, 3);
    assert_int_equal(s.admitted, 3);
    assert_int_equal(s.added, 14);
    assert_int_equal(s.reasons[BC_ADMIT_EXCLUDED], 2);
    bc_frontier_free(f);

    /* Queue capacity. */
    c = defaults();
    c.queue_capacity = 2;
    f = make(&c);
    seed(f, "http://a.test/1");
    seed(f, "http://a.test/2");
    assert_int_equal(seed(f, "http://a.test/3"), BC_ADMIT_QUEUE_FULL);
    bc_frontier_free(f);
}

static void test_scope_domain(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_DOMAIN;
    struct bc_frontier *f = make(&c);
    seed(f, "https://www.example.co.uk/");
    assert_int_equal(add(f, "https://blog.example.co.uk/", NULL, 1),
                     BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "http://example.co.uk:8080/", NULL, 1),
                     BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "https://other.co.uk/", NULL, 1),
                     BC_ADMIT_OUT_OF_SCOPE);
    bc_frontier_free(f);

    c.scope = BC_SCOPE_HOST;
    f = make(&c);
    seed(f, "https://www.example.co.uk/");
    assert_int_equal(add(f, "https://blog.example.co.uk/", NULL, 1),
                     BC_ADMIT_OUT_OF_SCOPE);
    assert_int_equal(add(f, "http://WWW.Example.CO.UK:80/x", NULL, 1),
                     BC_ADMIT_QUEUED);
    bc_frontier_free(f);
}

/* Equivalent spellings become one URL; the seen-test merges them. */
static void test_spellings_merge(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/~user/page");
    const char *same[] = {"HTTP://A.TEST:80/%7Euser/page",
                          "http://a.test/~user/./page#top", "/~user/x/../page",
                          "page"};
    for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
        assert_int_equal(add(f, same[i], "http://a.test/~user/", 1),
                         BC_ADMIT_DUPLICATE);
    assert_int_equal(add(f, "/~user/Page", NULL, 1), BC_ADMIT_BAD_URL);
    assert_int_equal(add(f, "/~user/Page", "http://a.test/", 1),
                     BC_ADMIT_QUEUED);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.seen.duplicate, 4);
    assert_int_equal(s.seen.verdict_new, 2);
    bc_frontier_free(f);
}

/* A queued URL costs its length + 4 bytes plus chunk slack: on average
 * well under length + 32. */
static void test_queue_memory(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    struct bc_frontier *f = make(&c);
    size_t total = 0;
    char url[64];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(url, sizeof(url), "http://a.test/page/%d.html", i);
        seed(f, url);
        total += (size_t)n;
    }
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, 5000);
    /* MEMORY in frontier.c: length + 14 bytes a URL, plus chunk tails. */
    assert_true(s.queue_bytes >= total + 14 * 5000);
    assert_true(s.queue_bytes <= total + 32 * 5000);
    print_message("    %zu URLs, %zu bytes of URLs, queue %zu bytes "
                  "(%.1f bytes per URL above its length)\n",
                  s.queued, total, s.queue_bytes,
                  (double)(s.queue_bytes - total) / 5000.0);
    /* Drain: the memory goes back down. */
    for (int i = 0; i < 5000; i++) {
        struct bc_frontier_job j = next(f, (uint64_t)i * 1000);
        assert_int_equal(j.action, BC_FRONTIER_FETCH);
        done(f, &j, (uint64_t)i * 1000, 200, 1, 0);
    }
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, 0);
    assert_true(s.queue_bytes <= 64 * 1024 + 64);
    bc_frontier_free(f);

    /* MEMORY in frontier.c: a host's queue only pushed to, of k chunks
     * with a header of hc bytes each, holding entries of e bytes (B bytes
     * in all), takes at most
     *     Q <= max(B' + 512, 5/4 B') + hc,   B' = B + (k - 1)(hc + e - 1),
     *     k <= 5 + [Q >= 2048] (1 + floor(log_{5/4}(min(Q, 2^18) / 2048)))
     *            + max(0, Q - 2^18) / 65536
     * bytes. Checked after each of 6000 pushes of 53-byte URLs (e = 67,
     * past 2^18 bytes). The doubling chunks of old broke it after each
     * boundary from 11 URLs on; at 1000, a 64 KiB chunk for the 67000
     * bytes that just missed the 65280 before it (2x B). */
    f = make(&c);
    const double e = 53 + 14;
    const double hc =
        (double)((sizeof(void *) + 3 * sizeof(uint32_t) + sizeof(void *) - 1) /
                 sizeof(void *) * sizeof(void *));
    double worst = 0;
    for (int i = 1; i <= 6000; i++) {
        int n = snprintf(url, sizeof(url), "http://a.test/p/%037d", i);
        assert_int_equal(n, 53);
        seed(f, url);
        bc_frontier_stats(f, 0, &s);
        double q = (double)s.queue_bytes, b = e * i;
        double k = 5; /* the bound on k above, without libm */
        if (q >= 2048) {
            k++;
            for (double x = 2048 * 1.25; x <= q && x <= 262144; x *= 1.25)
                k++;
        }
        if (q > 262144)
            k += (q - 262144) / 65536;
        double b1 = b + (k - 1) * (hc + e - 1);
        assert_true(q <= (b1 + 512 > 1.25 * b1 ? b1 + 512 : 1.25 * b1) + hc);
        if (i >= 100 && q / b > worst)
            worst = q / b;
    }
    print_message("    100..6000 URLs at a host: queue bytes at most %.3f x "
                  "the entries' bytes\n",
                  worst);
    bc_frontier_free(f);
}

/* Links and redirect targets remember the page they came from; seeds and
 * plain adds have none. One page's links share one copy of its URL, which
 * lives as long as the last of them is queued (ASan checks the frees). */
static void test_referrer(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.retry_delay_ms = 0; /* the 429 below waits its Retry-After only */
    struct bc_frontier *f = make(&c);
    enum bc_frontier_reason r;
    seed(f, "http://a.test/");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    assert_null(j.referrer);
    assert_int_equal(j.referrer_len, 0);
    assert_string_equal(j.origin, "http://a.test");
    assert_int_equal(j.origin_len, 13);
    struct bc_frontier_stats before, after;
    bc_frontier_stats(f, 0, &before);
    static const char *const links[] = {"/1", "/2", "/3retry", "/4"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(bc_frontier_add_link(f, &j, links[i], strlen(links[i]),
                                              j.url, j.url_len, &r, NULL),
                         BC_OK);
        assert_int_equal(r, BC_ADMIT_QUEUED);
    }
    /* A duplicate shares nothing and queues nothing. */
    assert_int_equal(
        bc_frontier_add_link(f, &j, "/1", 2, j.url, j.url_len, &r, NULL),
        BC_OK);
    assert_int_equal(r, BC_ADMIT_DUPLICATE);
    /* The queue grows by length + 14 bytes a URL (MEMORY): the referrer is
     * a pointer, not a copy. */
    bc_frontier_stats(f, 0, &after);
    assert_int_equal(after.queued, 4);
    done(f, &j, 0, 200, 1, 0);
    /* After done(), until the next next(), its links may still come. */
    assert_int_equal(
        bc_frontier_add_link(f, &j, "/5", 2, j.url, j.url_len, &r, NULL),
        BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    struct bc_frontier_job k = expect_fetch(f, 10, "http://a.test/1");
    assert_string_equal(k.referrer, "http://a.test/");
    assert_int_equal(k.referrer_len, 14);
    assert_int_equal(k.depth, 1);
    /* A redirect target's referrer is the URL that redirected. */
    assert_int_equal(bc_frontier_add_redirect(f, &k, "/moved", 6, k.url,
                                              k.url_len, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    done(f, &k, 10, 301, 1, 0);
    k = expect_fetch(f, 20, "http://a.test/2");
    assert_string_equal(k.referrer, "http://a.test/");
    done(f, &k, 20, 200, 1, 0);
    /* A 429 queues the URL again with its referrer. */
    k = expect_fetch(f, 30, "http://a.test/3retry");
    done(f, &k, 30, 429, 1, 5);
    k = expect_fetch(f, 40, "http://a.test/4");
    assert_string_equal(k.referrer, "http://a.test/");
    done(f, &k, 40, 200, 1, 0);
    k = expect_fetch(f, 50, "http://a.test/5");
    assert_string_equal(k.referrer, "http://a.test/");
    done(f, &k, 50, 200, 1, 0);
    k = expect_fetch(f, 60, "http://a.test/moved");
    assert_string_equal(k.referrer, "http://a.test/1");
    assert_int_equal(k.redirects, 1);
    done(f, &k, 60, 200, 1, 0);
    k = expect_fetch(f, 70, "http://a.test/3retry");
    assert_string_equal(k.referrer, "http://a.test/");
    assert_int_equal(k.retries, 1);
    /* Plain adds have no referrer; and a frontier freed with referrers
     * queued and a job out leaks nothing. */
    add(f, "http://a.test/plain", NULL, 1);
    assert_int_equal(
        bc_frontier_add_link(f, &k, "/6", 2, k.url, k.url_len, &r, NULL),
        BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    done(f, &k, 70, 200, 1, 0);
    k = expect_fetch(f, 80, "http://a.test/plain");
    assert_null(k.referrer);
    /* Not a FETCH job: refused. */
    struct bc_frontier_job w = {0};
    w.action = BC_FRONTIER_WAIT;
    assert_int_equal(
        bc_frontier_add_link(f, &w, "/7", 2, k.url, k.url_len, &r, NULL),
        BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_frontier_add_link(f, NULL, "/7", 2, k.url, k.url_len, &r, NULL),
        BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
}

/* bc_frontier_add_with_referrer(): a referrer given as text, shared by
 * consecutive calls that name the same (the queue grows by the entries
 * alone), none with NULL. */
static void test_referrer_given(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    struct bc_frontier *f = make(&c);
    enum bc_frontier_reason r;
    static const char sm[] = "http://a.test/sitemap.xml";
    static const char other[] = "http://a.test/other.xml";
    seed(f, "http://a.test/");
    const char *const urls[] = {"http://a.test/1", "http://a.test/2",
                                "http://a.test/3", "http://a.test/4"};
    const char *const refs[] = {sm, sm, other, NULL};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(bc_frontier_add_with_referrer(
                             f, urls[i], strlen(urls[i]), NULL, 0, 0, refs[i],
                             refs[i] ? strlen(refs[i]) : 0, &r, NULL),
                         BC_OK);
        assert_int_equal(r, BC_ADMIT_QUEUED);
    }
    assert_int_equal(bc_frontier_add_with_referrer(f, "/x", 2, NULL, 0, 0, NULL,
                                                   3, &r, NULL),
                     BC_ERR_INVALID_ARG);
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    assert_null(j.referrer);
    done(f, &j, 0, 200, 1, 0);
    for (size_t i = 0; i < 4; i++) {
        j = expect_fetch(f, 10 * (i + 1), urls[i]);
        if (refs[i])
            assert_string_equal(j.referrer, refs[i]);
        else
            assert_null(j.referrer);
        assert_int_equal(j.depth, 0);
        done(f, &j, 10 * (i + 1), 200, 1, 0);
    }
    /* Queued ones with the last referrer still held: freed cleanly. */
    assert_int_equal(bc_frontier_add_with_referrer(f, "http://a.test/5", 15,
                                                   NULL, 0, 1, other,
                                                   strlen(other), &r, NULL),
                     BC_OK);
    bc_frontier_free(f);
}

/* bc_frontier_add_link() out of memory for the shared copy: refused as
 * BC_ADMIT_NOMEM, counted, nothing queued; the next call succeeds. */
static void test_referrer_nomem(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    long before = alloc_calls;
    struct bc_frontier *f = make(&c);
    if (alloc_calls == before) {
        bc_frontier_free(f);
        BC_SKIP(); /* not linked with --wrap */
    }
    seed(f, "http://a.test/");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    enum bc_frontier_reason r;
    struct bc_frontier_stats s;
    fail_after = 0;
    assert_int_equal(
        bc_frontier_add_link(f, &j, "/1", 2, j.url, j.url_len, &r, NULL),
        BC_ERR_NOMEM);
    fail_after = -1;
    assert_int_equal(r, BC_ADMIT_NOMEM);
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, 0);
    assert_int_equal(s.reasons[BC_ADMIT_NOMEM], 1);
    assert_int_equal(
        bc_frontier_add_link(f, &j, "/1", 2, j.url, j.url_len, &r, NULL),
        BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    bc_frontier_free(f);
}

/* Out of memory for a payload's box: the add says BC_ERR_NOMEM and the
 * URL neither queued nor in the seen-test (the box is made before it),
 * so the same add succeeds later. */
static void test_payload_nomem(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    long before = alloc_calls;
    struct bc_frontier *f = make(&c);
    if (alloc_calls == before) {
        bc_frontier_free(f);
        BC_SKIP(); /* not linked with --wrap */
    }
    seed(f, "http://a.test/"); /* the host and its first chunk exist */
    enum bc_frontier_reason r;
    fail_after = 0;
    assert_int_equal(bc_frontier_add_payload(f, "http://a.test/1", 15, NULL, 0,
                                             1, "p\0q", 3, &r, NULL),
                     BC_ERR_NOMEM);
    fail_after = -1;
    assert_int_equal(r, BC_ADMIT_NOMEM);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, 1);
    assert_int_equal(add_payload(f, "http://a.test/1", "p\0q", 3),
                     BC_ADMIT_QUEUED);
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    done(f, &j, 1, 200, 1, 0);
    j = expect_fetch(f, 2000, "http://a.test/1");
    expect_payload(&j, "p\0q", 3);
    bc_frontier_free(f);
}

struct host_seen {
    char origin[64];
    struct bc_frontier_host_info info;
};

static void collect_host(void *ctx, const struct bc_frontier_host_info *i)
{
    struct host_seen *hs = ctx;
    while (hs->origin[0])
        hs++;
    assert_int_equal(strlen(i->origin), i->origin_len);
    snprintf(hs->origin, sizeof(hs->origin), "%s", i->origin);
    hs->info = *i;
}

static const struct bc_frontier_host_info *host_info(struct host_seen *hs,
                                                     const char *origin)
{
    for (; hs->origin[0]; hs++)
        if (strcmp(hs->origin, origin) == 0)
            return &hs->info;
    fail_msg("no host %s", origin);
    abort(); /* not reached: fail_msg() leaves the test */
}

/* bc_frontier_hosts(): every host, its robots.txt state, queue and
 * given-up flag. */
static void test_hosts_iteration(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    c.robots_retries = 0;
    struct bc_frontier *f = make(&c);
    assert_int_equal(bc_frontier_hosts(f, NULL, NULL), 0);
    seed(f, "http://a.test/");
    add(f, "http://a.test/2", NULL, 1);
    add(f, "http://b.test:8080/", NULL, 1);
    add(f, "http://c.test/", NULL, 1);
    add(f, "http://c.test/x", NULL, 1);
    add(f, "http://c.test/y", NULL, 1);
    /* Three robots.txt jobs: a parsed, b being fetched, c unreachable. */
    struct bc_frontier_job ra = next(f, 0), rb = next(f, 0), rc = next(f, 0);
    assert_int_equal(ra.action, BC_FRONTIER_FETCH_ROBOTS);
    assert_int_equal(rb.action, BC_FRONTIER_FETCH_ROBOTS);
    assert_int_equal(rc.action, BC_FRONTIER_FETCH_ROBOTS);
    struct bc_frontier_job *jobs[] = {&ra, &rb, &rc};
    for (int i = 0; i < 3; i++) {
        struct bc_frontier_job *jb = jobs[i];
        if (strcmp(jb->origin, "http://a.test") == 0)
            assert_int_equal(
                bc_frontier_robots_done(f, jb, 200, "", 0, NULL, 0, 0), BC_OK);
        else if (strcmp(jb->origin, "http://c.test") == 0)
            assert_int_equal(
                bc_frontier_robots_done(f, jb, 503, "", 0, NULL, 0, 0), BC_OK);
    }
    struct host_seen seen[8];
    memset(seen, 0, sizeof(seen));
    assert_int_equal(bc_frontier_hosts(f, collect_host, seen), 3);
    const struct bc_frontier_host_info *a = host_info(seen, "http://a.test");
    const struct bc_frontier_host_info *b =
        host_info(seen, "http://b.test:8080");
    const struct bc_frontier_host_info *ch = host_info(seen, "http://c.test");
    assert_int_equal(a->robots, BC_FRONTIER_ROBOTS_PARSED);
    assert_false(a->robots_fetching);
    assert_int_equal(a->queued, 2);
    assert_int_equal(a->admitted, 2);
    assert_int_equal(a->in_flight, 0);
    assert_false(a->given_up);
    assert_int_equal(b->robots, BC_FRONTIER_ROBOTS_UNKNOWN);
    assert_true(b->robots_fetching);
    assert_int_equal(b->in_flight, 1);
    assert_int_equal(b->queued, 1);
    /* robots_retries 0: c's first failure gives it up; its URLs drain. */
    assert_int_equal(ch->robots, BC_FRONTIER_ROBOTS_GIVEN_UP);
    assert_true(ch->given_up);
    assert_int_equal(ch->queued, 3);
    for (;;) {
        struct bc_frontier_job d = next(f, 0);
        if (d.action != BC_FRONTIER_DROP)
            break;
        assert_string_equal(d.origin, "http://c.test");
    }
    memset(seen, 0, sizeof(seen));
    bc_frontier_hosts(f, collect_host, seen);
    ch = host_info(seen, "http://c.test");
    assert_int_equal(ch->queued, 0);
    assert_int_equal(ch->lost, 3);
    bc_frontier_free(f);
}

/* The next contact time of the only host (bc_frontier_hosts()). */
static void next_contact_of(void *ctx, const struct bc_frontier_host_info *i)
{
    *(uint64_t *)ctx = i->next_contact_ms;
}

/* bc_frontier_host_info.next_contact_ms: when the host's next request may
 * start, the time the frontier's WAIT names, after a request's spacing
 * and after a 503's block (the later of next_ms and blocked_until). */
static void test_hosts_next_contact(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 100;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/");
    add(f, "/1", "http://a.test/", 1);
    add(f, "/2", "http://a.test/", 1);
    uint64_t at = 0;
    struct bc_frontier_job a = expect_fetch(f, 1000, "http://a.test/");
    assert_int_equal(bc_frontier_hosts(f, next_contact_of, &at), 1);
    assert_int_equal(at, 1000 + 100); /* its start plus the delay */
    done(f, &a, 1050, 200, 50, 0);
    bc_frontier_hosts(f, next_contact_of, &at);
    struct bc_frontier_job w = next(f, 1050);
    assert_int_equal(w.action, BC_FRONTIER_WAIT);
    assert_int_equal(at, w.wait_until_ms);
    struct bc_frontier_job b = expect_fetch(f, at, "http://a.test/1");
    /* A 503 with Retry-After: 5 s blocks the host past its spacing. */
    done(f, &b, at + 10, 503, 10, 5000);
    uint64_t blocked;
    bc_frontier_hosts(f, next_contact_of, &blocked);
    assert_true(blocked >= at + 10 + 5000);
    w = next(f, at + 10);
    assert_int_equal(w.action, BC_FRONTIER_WAIT);
    assert_int_equal(blocked, w.wait_until_ms);
    bc_frontier_free(f);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    struct bc_frontier *f = NULL;
    c.per_host_concurrency = 0;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
    c = defaults();
    c.max_url_len = 70000;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
    c = defaults();
    c.seen.fp_rate = 0;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
    assert_null(f);
    bc_frontier_free(NULL);
    c = defaults();
    f = make(&c);
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add(f, NULL, 3, NULL, 0, 0, &r, NULL),
                     BC_ERR_INVALID_ARG);
    struct bc_frontier_job j;
    memset(&j, 0, sizeof(j));
    struct bc_frontier_outcome o = {200, 1, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_done(f, &j, &o, 0), BC_ERR_INVALID_ARG);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_TRAP), "trap");
    /* The sentinel counts the reasons: each below it has its own name. */
    for (int a = 0; a < BC_ADMIT_REASON_COUNT; a++) {
        const char *na = bc_frontier_reason_name((enum bc_frontier_reason)a);
        assert_string_not_equal(na, "unknown");
        for (int b = 0; b < a; b++)
            assert_string_not_equal(
                na, bc_frontier_reason_name((enum bc_frontier_reason)b));
    }
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_REASON_COUNT),
                        "unknown");
    bc_frontier_free(f);
}

/* The three name tables, made from frontier.h's X-macro lists: every
 * value of each enum has its own name, the names and values are the ones
 * the switches before the lists gave (spelled out here, not taken from
 * the lists), and a value outside the enum is "unknown". */
static void test_name_tables(void **state)
{
    (void)state;
    static const char *const reasons[] = {"queued",
                                          "bad_url",
                                          "too_long",
                                          "out_of_scope",
                                          "excluded",
                                          "too_deep",
                                          "too_many_segments",
                                          "trap",
                                          "host_budget",
                                          "queue_full",
                                          "robots",
                                          "duplicate",
                                          "probably_seen",
                                          "nomem",
                                          "host_given_up",
                                          "too_many_redirects",
                                          "store_error",
                                          "sitemap_scope",
                                          "routed",
                                          "host_down"};
    static const char *const sitemaps[] = {
        "queued",   "bad_url", "out_of_scope",  "duplicate", "too_deep",
        "host_cap", "robots",  "host_given_up", "nomem",     "transient"};
    static const char *const faults[] = {"none", "permanent", "transient",
                                         "local"};
    assert_int_equal(BC_ADMIT_REASON_COUNT,
                     sizeof(reasons) / sizeof(reasons[0]));
    assert_int_equal(BC_FRONTIER_SITEMAP_REASON_COUNT,
                     sizeof(sitemaps) / sizeof(sitemaps[0]));
    for (int i = 0; i < BC_ADMIT_REASON_COUNT; i++)
        assert_string_equal(bc_frontier_reason_name((enum bc_frontier_reason)i),
                            reasons[i]);
    for (int i = 0; i < BC_FRONTIER_SITEMAP_REASON_COUNT; i++)
        assert_string_equal(
            bc_frontier_sitemap_reason_name((enum bc_frontier_sitemap_reason)i),
            sitemaps[i]);
    for (int i = 0; i < 4; i++)
        assert_string_equal(bc_fault_name((enum bc_fault)i), faults[i]);
    /* A few values by name: the lists keep their order and values. */
    assert_int_equal(BC_ADMIT_QUEUED, 0);
    assert_int_equal(BC_ADMIT_HOST_DOWN, 19);
    assert_int_equal(BC_FRONTIER_SITEMAP_TRANSIENT, 9);
    assert_int_equal(BC_FAULT_LOCAL, 3);
    /* Every constant of each list has the name the list gives it. */
#define CHECK_REASON(constant, name)                                           \
    assert_string_equal(bc_frontier_reason_name(constant), name);
#define CHECK_SITEMAP(constant, name)                                          \
    assert_string_equal(bc_frontier_sitemap_reason_name(constant), name);
#define CHECK_FAULT(constant, name)                                            \
    assert_string_equal(bc_fault_name(constant), name);
    BC_FRONTIER_REASON_LIST(CHECK_REASON)
    BC_FRONTIER_SITEMAP_REASON_LIST(CHECK_SITEMAP)
    BC_FAULT_LIST(CHECK_FAULT)
#undef CHECK_REASON
#undef CHECK_SITEMAP
#undef CHECK_FAULT
    /* Outside the enums. */
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_REASON_COUNT),
                        "unknown");
    assert_string_equal(
        bc_frontier_sitemap_reason_name(BC_FRONTIER_SITEMAP_REASON_COUNT),
        "unknown");
    assert_string_equal(bc_fault_name((enum bc_fault)4), "unknown");
    assert_string_equal(bc_fault_name((enum bc_fault) - 1), "unknown");
    assert_string_equal(bc_frontier_reason_name((enum bc_frontier_reason) - 1),
                        "unknown");
}

/* Every allocation of create, and of adds that create hosts and chunks,
 * failed in turn: BC_ERR_NOMEM (reason nomem), nothing leaked, and the
 * frontier still works afterwards. */
static void test_allocation_failure(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    long before = alloc_calls;
    bc_frontier_free(make(&c));
    if (alloc_calls == before)
        BC_SKIP(); /* not linked with --wrap */
    for (long n = 0;; n++) {
        struct bc_frontier *f = NULL;
        fail_after = n;
        enum bc_status st = bc_frontier_create(&c, &f);
        fail_after = -1;
        if (st == BC_ERR_NOMEM) {
            assert_null(f);
            continue;
        }
        assert_int_equal(st, BC_OK);
        bc_frontier_free(f);
        break;
    }
    struct bc_frontier *f = make(&c);
    char url[64];
    unsigned queued = 0;
    for (long n = 0; n < 40; n++) {
        enum bc_frontier_reason r;
        snprintf(url, sizeof(url), "http://h%ld.test/p", n);
        fail_after = n % 2 ? n % 6 : -1; /* every other add fails once */
        enum bc_status st = bc_frontier_add_seed(f, url, strlen(url), &r, NULL);
        fail_after = -1;
        if (st == BC_ERR_NOMEM) {
            assert_int_equal(r, BC_ADMIT_NOMEM);
        } else {
            assert_int_equal(st, BC_OK);
            assert_int_equal(r, BC_ADMIT_QUEUED);
            queued++;
        }
    }
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, queued);
    assert_true(queued > 0 && queued < 40);
    bc_frontier_free(f);
}

/* Out of memory while following a robots.txt redirect fails closed: the
 * call says BC_ERR_NOMEM and the host is unreachable (nothing handed
 * out), never "unavailable" (everything allowed). Every allocation of the
 * redirect is failed in turn. */
static void test_robots_redirect_nomem(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    long before = alloc_calls;
    bc_frontier_free(make(&c));
    if (alloc_calls == before)
        skip(); /* not linked with --wrap */
    c.min_delay_ms = 0;
    long failures = 0;
    for (long n = 0;; n++) {
        struct bc_frontier *f = make(&c);
        seed(f, "http://r.test/page");
        struct bc_frontier_job j = next(f, 0);
        assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
        fail_after = n;
        enum bc_status st =
            bc_frontier_robots_done(f, &j, 301, NULL, 0, "/moved.txt", 10, 0);
        bool injected = fail_after == -1;
        fail_after = -1;
        if (!injected) { /* every allocation has been failed once */
            assert_int_equal(st, BC_OK);
            j = next(f, 0);
            assert_int_equal(j.action, BC_FRONTIER_FETCH_ROBOTS);
            assert_string_equal(j.url, "http://r.test/moved.txt");
            bc_frontier_free(f);
            break;
        }
        failures++;
        assert_int_equal(st, BC_ERR_NOMEM);
        struct bc_frontier_stats s;
        bc_frontier_stats(f, 0, &s);
        assert_int_equal(s.robots_unreachable, 1);
        assert_int_equal(s.robots_unavailable, 0);
        assert_int_equal(s.hosts_robots, 1);
        j = next(f, 0);
        assert_int_equal(j.action, BC_FRONTIER_WAIT);
        assert_true(j.wait_until_ms > 0);
        bc_frontier_free(f);
    }
    assert_true(failures >= 2); /* the base and the target buffers */
}

/* next() out of memory: BC_ERR_NOMEM, *job not written, the frontier
 * unchanged (the URL stays queued), and the next call works. */
static void test_next_nomem(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    long before = alloc_calls;
    bc_frontier_free(make(&c));
    if (alloc_calls == before)
        skip(); /* not linked with --wrap */
    c.min_delay_ms = 0;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/1");
    add(f, "/2", "http://a.test/", 1);
    struct bc_frontier_job j, sentinel;
    memset(&sentinel, 0xa5, sizeof(sentinel));

    /* The robots.txt URL. */
    j = sentinel;
    fail_after = 0;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_ERR_NOMEM);
    fail_after = -1;
    assert_memory_equal(&j, &sentinel, sizeof(j));
    robots(f, 0, "http://a.test/robots.txt", 404, NULL);

    /* The URL of a FETCH job. */
    fail_after = 0;
    assert_int_equal(bc_frontier_next(f, 0, &j), BC_ERR_NOMEM);
    fail_after = -1;
    assert_memory_equal(&j, &sentinel, sizeof(j));
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.queued, 2);
    assert_int_equal(s.in_flight, 0);
    assert_int_equal(s.handed_out, 0);
    assert_int_equal(s.reasons[BC_ADMIT_NOMEM], 0);
    j = expect_fetch(f, 0, "http://a.test/1");
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://a.test/2");
    done(f, &j, 0, 200, 1, 0);
    assert_int_equal(next(f, 0).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
}

/* A crawl of three hosts (one robots.txt disallowing some URLs queued
 * before it was known, one redirected) driven twice by a fake clock:
 * once as it is, once with the first allocation of every next() call
 * failed. Each failed call must change nothing, so the two runs hand out
 * the same jobs in the same order. */
static void replay_crawl(bool inject, char *log, size_t cap)
{
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    c.min_delay_ms = 10;
    struct bc_frontier *f = make(&c);
    const char *urls[] = {"http://a.test/",    "http://a.test/x/1",
                          "http://a.test/y",   "http://b.test/1",
                          "http://b.test/x/2", "http://c.test/"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        seed(f, urls[i]);
    size_t used = 0;
    uint64_t now = 0;
    log[0] = '\0';
    for (int steps = 0; steps < 100; steps++) {
        struct bc_frontier_job j;
        bool have = false;
        if (inject) {
            /* A call without allocation (WAIT, DONE, DROP) just works. */
            fail_after = 0;
            enum bc_status st = bc_frontier_next(f, now, &j);
            bool injected = fail_after == -1;
            fail_after = -1;
            assert_int_equal(st, injected ? BC_ERR_NOMEM : BC_OK);
            have = !injected;
        }
        if (!have)
            j = next(f, now);
        used += (size_t)snprintf(log + used, cap - used, "%llu %d %s\n",
                                 (unsigned long long)now, j.action,
                                 j.url ? j.url : "-");
        assert_true(used < cap);
        if (j.action == BC_FRONTIER_DONE)
            break;
        if (j.action == BC_FRONTIER_WAIT) {
            now = j.wait_until_ms;
        } else if (j.action == BC_FRONTIER_FETCH_ROBOTS) {
            const char *body = "User-agent: *\nDisallow: /x/\n";
            if (strncmp(j.url, "http://c.test/", 14) == 0 &&
                strcmp(j.url, "http://c.test/moved.txt") != 0) {
                assert_int_equal(bc_frontier_robots_done(f, &j, 302, NULL, 0,
                                                         "/moved.txt", 10, now),
                                 BC_OK);
            } else {
                assert_int_equal(bc_frontier_robots_done(f, &j, 200, body,
                                                         strlen(body), NULL, 0,
                                                         now),
                                 BC_OK);
            }
        } else if (j.action == BC_FRONTIER_FETCH) {
            done(f, &j, now + 1, 200, 1, 0);
            now++;
        }
    }
    bc_frontier_free(f);
}

static void test_next_allocation_failure_replay(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    long before = alloc_calls;
    bc_frontier_free(make(&c));
    if (alloc_calls == before)
        skip(); /* not linked with --wrap */
    static char plain[4096], injected[4096];
    long failures = alloc_failures;
    replay_crawl(false, plain, sizeof(plain));
    assert_int_equal(alloc_failures, failures);
    replay_crawl(true, injected, sizeof(injected));
    assert_true(alloc_failures - failures >= 6); /* 3 robots.txt, 3 FETCH */
    assert_string_equal(injected, plain);
    /* Both runs fetched what robots.txt allows, and dropped the rest. */
    assert_non_null(strstr(plain, " 0 http://a.test/y\n"));
    assert_non_null(strstr(plain, " 2 http://b.test/x/2\n"));
    assert_non_null(strstr(plain, " 1 http://c.test/moved.txt\n"));
}

/* ---- the crawl-loop sketches of README.md and frontier.h, as written --
 * tests/extract_sketch.py copies them into sketch_readme.inc and
 * sketch_header.inc; they run here against a fake site and a fake clock,
 * under AddressSanitizer in the test build: the links of a page are added
 * after its done(), with job.url as their base. */

static uint64_t fake_now;

static uint64_t now_ms(void)
{
    return fake_now;
}

static void sleep_until(uint64_t t)
{
    assert_true(t != UINT64_MAX); /* one fetch at a time: never in flight */
    if (t > fake_now)
        fake_now = t;
}

/* What the sketches' fetch() returns: any HTTP client's answer. */
struct response {
    int status;
    const char *body;
    size_t body_len;
    const char *location;
    size_t location_len;
    uint64_t ms;
    uint64_t retry_after_ms;
    const char *const *links;
    size_t link_count;
    enum bc_fault fault; /* how a failed fetch failed (BC_FAULT_NONE) */
};

struct fake_page {
    const char *url;
    int status;
    const char *body;     /* robots.txt */
    const char *location; /* 3xx */
    const char *const *links;
    size_t link_count;
};

static const char *const home_links[] = {"a/", "b.html", "/private/x", "a/",
                                         "http://elsewhere.test/"};
static const char *const a_links[] = {"c.html", "../b.html", "../d.html"};
static const char *const c_links[] = {"../a/", "./c.html"};
static const struct fake_page site[] = {
    {"http://site.test/robots.txt", 301, NULL, "/real-robots.txt", NULL, 0},
    {"http://site.test/real-robots.txt", 200,
     "User-agent: *\nDisallow: /private/\n", NULL, NULL, 0},
    {"http://site.test/", 200, NULL, NULL, home_links, 5},
    {"http://site.test/a/", 200, NULL, NULL, a_links, 3},
    {"http://site.test/a/c.html", 200, NULL, NULL, c_links, 2},
    {"http://site.test/b.html", 200, NULL, NULL, NULL, 0},
    {"http://site.test/d.html", 200, NULL, NULL, NULL, 0},
};

static char fetched[16][64];
static size_t fetched_count;

static struct response fetch(const char *url)
{
    struct response r = {404, NULL, 0, NULL, 0, 5, 0, NULL, 0, BC_FAULT_NONE};
    assert_true(fetched_count < 16);
    snprintf(fetched[fetched_count++], sizeof(fetched[0]), "%s", url);
    for (size_t i = 0; i < sizeof(site) / sizeof(site[0]); i++) {
        if (strcmp(site[i].url, url) != 0)
            continue;
        r.status = site[i].status;
        r.body = site[i].body;
        r.body_len = r.body ? strlen(r.body) : 0;
        r.location = site[i].location;
        r.location_len = r.location ? strlen(r.location) : 0;
        r.links = site[i].links;
        r.link_count = site[i].link_count;
    }
    return r;
}

/* The README's block, in a function of its own. */
static int readme_sketch(const char *seed)
{
#include "sketch_readme.inc"
    return 0;
}

/* The loop of frontier.h's opening comment. */
static void header_sketch(struct bc_frontier *f)
{
    enum bc_frontier_reason why;
#include "sketch_header.inc"
}

static void check_site_crawled(void)
{
    static const char *const want[] = {
        "http://site.test/robots.txt", "http://site.test/real-robots.txt",
        "http://site.test/",           "http://site.test/a/",
        "http://site.test/b.html",     "http://site.test/a/c.html",
        "http://site.test/d.html"};
    assert_int_equal(fetched_count, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < fetched_count; i++)
        assert_string_equal(fetched[i], want[i]);
}

static void test_readme_sketch(void **state)
{
    (void)state;
    fake_now = 0;
    fetched_count = 0;
    assert_int_equal(readme_sketch("http://site.test/"), 0);
    check_site_crawled();
}

static void test_header_sketch(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    struct bc_frontier *f = make(&c);
    fake_now = 0;
    fetched_count = 0;
    assert_int_equal(seed(f, "http://site.test/"), BC_ADMIT_QUEUED);
    header_sketch(f);
    bc_frontier_free(f);
    check_site_crawled();
}

/* Thousands of hosts: the hosts' table doubles its buckets as they come
 * (frontier.c: THE HOSTS' TABLE) and every origin is still found, not
 * made twice: a second URL of each joins its host's queue. */
static void test_many_hosts(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    c.obey_robots = false;
    struct bc_frontier *f = make(&c);
    char url[64];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 3000; i++) {
            snprintf(url, sizeof(url), "http://h%d.test/%s", i,
                     pass ? "b" : "a");
            assert_int_equal(add(f, url, NULL, 1), BC_ADMIT_QUEUED);
        }
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.hosts, 3000);
    assert_int_equal(s.queued, 6000);
    for (int i = 0; i < 3000; i += 997) {
        snprintf(url, sizeof(url), "http://H%d.test:80/a", i);
        assert_int_equal(add(f, url, NULL, 1), BC_ADMIT_DUPLICATE);
    }
    bc_frontier_free(f);
}

/* ---- the store: an in-memory fake of crawler/state.c ------------------ */

#define FAKE_MAX 512

/* Every URL ever queued, by id (1-based); state 0 queued, 1 in flight,
 * 2 done or dropped; seq orders a host's FIFO. */
struct fake_url {
    char origin[64], url[128], referrer[128]; /* referrer "": none */
    unsigned char payload[64];                /* payload_len 0: none */
    size_t payload_len;
    unsigned depth, redirects, retries;
    int state;
    long seq;
};

struct fake_store {
    struct fake_url urls[FAKE_MAX + 1];
    uint64_t count;
    long next_seq, low_seq;
    struct {
        char origin[64];
        struct bc_frontier_host_state st;
        char body[256];
        struct bc_frontier_circuit_state circuit;
        size_t circuit_calls;
        size_t delay_calls;
    } hosts[16];
    size_t host_count;
    size_t refills, max_refill_skip;
    size_t hook_calls; /* queued and left calls */
    size_t slot_calls; /* of them, those that found their host slot set */
    bool fail;         /* every hook fails with BC_ERR_IO */
};

static size_t fake_host(struct fake_store *fs, const char *origin, size_t len)
{
    for (size_t i = 0; i < fs->host_count; i++)
        if (strlen(fs->hosts[i].origin) == len &&
            memcmp(fs->hosts[i].origin, origin, len) == 0)
            return i;
    assert_true(fs->host_count < 16 && len < 64);
    size_t i = fs->host_count++;
    memset(&fs->hosts[i], 0, sizeof(fs->hosts[i]));
    memcpy(fs->hosts[i].origin, origin, len);
    return i;
}

/* The host slot (frontier_store.h: THE HOST SLOT): NULL at an origin's
 * first queued or left call of this frontier, then always what the store
 * wrote there for that origin. */
static void fake_slot(struct fake_store *fs, size_t h, void **slot)
{
    fs->hook_calls++;
    if (*slot) {
        assert_ptr_equal(*slot, &fs->hosts[h]);
        fs->slot_calls++;
    }
    *slot = &fs->hosts[h];
}

static enum bc_status fake_queued(void *ctx, const char *origin, size_t len,
                                  void **slot,
                                  const struct bc_frontier_entry *e,
                                  bool requeue, uint64_t *id)
{
    struct fake_store *fs = ctx;
    if (fs->fail)
        return BC_ERR_IO;
    size_t h = fake_host(fs, origin, len);
    fake_slot(fs, h, slot);
    struct fake_url *u;
    if (requeue) {
        assert_true(e->id >= 1 && e->id <= fs->count);
        u = &fs->urls[e->id];
        assert_int_equal(u->state, 1);
        *id = e->id;
    } else {
        assert_true(fs->count < FAKE_MAX && e->url_len < 128);
        *id = ++fs->count;
        u = &fs->urls[*id];
        memset(u, 0, sizeof(*u));
        memcpy(u->origin, origin, len);
        memcpy(u->url, e->url, e->url_len);
        assert_true(e->referrer_len < sizeof(u->referrer));
        if (e->referrer)
            memcpy(u->referrer, e->referrer, e->referrer_len);
        assert_true(e->payload_len <= sizeof(u->payload));
        if (e->payload_len)
            memcpy(u->payload, e->payload, e->payload_len);
        u->payload_len = e->payload_len;
        fs->hosts[h].st.admitted++;
    }
    /* A URL queued again keeps its payload. */
    assert_int_equal(e->payload_len, u->payload_len);
    if (u->payload_len)
        assert_memory_equal(e->payload, u->payload, u->payload_len);
    /* A URL queued again keeps its referrer. */
    assert_int_equal(strlen(u->referrer), e->referrer ? e->referrer_len : 0);
    u->depth = e->depth;
    u->redirects = e->redirects;
    u->retries = e->retries;
    u->state = 0;
    u->seq = fs->next_seq++;
    return BC_OK;
}

static enum bc_status fake_left(void *ctx, const char *origin, size_t len,
                                void **slot, uint64_t id,
                                enum bc_frontier_action action,
                                enum bc_frontier_reason reason)
{
    struct fake_store *fs = ctx;
    (void)reason;
    if (fs->fail)
        return BC_ERR_IO;
    fake_slot(fs, fake_host(fs, origin, len), slot);
    assert_true(id >= 1 && id <= fs->count);
    assert_int_equal(strlen(fs->urls[id].origin), len);
    assert_memory_equal(fs->urls[id].origin, origin, len);
    assert_int_equal(fs->urls[id].state, 0);
    fs->urls[id].state = action == BC_FRONTIER_FETCH ? 1 : 2;
    return BC_OK;
}

static enum bc_status fake_host_hook(void *ctx,
                                     const struct bc_frontier_host_state *st)
{
    struct fake_store *fs = ctx;
    if (fs->fail)
        return BC_ERR_IO;
    size_t h = fake_host(fs, st->origin, st->origin_len);
    uint64_t admitted = fs->hosts[h].st.admitted;
    fs->hosts[h].st = *st;
    fs->hosts[h].st.admitted = admitted; /* the store counts them itself */
    assert_true(st->robots_body_len < sizeof(fs->hosts[h].body));
    if (st->robots_body)
        memcpy(fs->hosts[h].body, st->robots_body, st->robots_body_len);
    fs->hosts[h].st.robots_body = st->robots_body ? fs->hosts[h].body : NULL;
    return BC_OK;
}

static enum bc_status
fake_circuit_hook(void *ctx, const char *origin, size_t len,
                  const struct bc_frontier_circuit_state *c)
{
    struct fake_store *fs = ctx;
    if (fs->fail)
        return BC_ERR_IO;
    size_t h = fake_host(fs, origin, len);
    fs->hosts[h].circuit = *c;
    fs->hosts[h].circuit_calls++;
    return BC_OK;
}

static enum bc_status fake_delay_hook(void *ctx, const char *origin, size_t len,
                                      uint64_t delay_ms)
{
    struct fake_store *fs = ctx;
    if (fs->fail)
        return BC_ERR_IO;
    size_t h = fake_host(fs, origin, len);
    fs->hosts[h].st.delay_override_ms = delay_ms;
    fs->hosts[h].delay_calls++;
    return BC_OK;
}

/* The queued URL of origin with the smallest seq above after (or NULL). */
static struct fake_url *fake_after(struct fake_store *fs, const char *origin,
                                   long after)
{
    struct fake_url *best = NULL;
    for (uint64_t i = 1; i <= fs->count; i++) {
        struct fake_url *u = &fs->urls[i];
        if (u->state == 0 && strcmp(u->origin, origin) == 0 && u->seq > after &&
            (!best || u->seq < best->seq))
            best = u;
    }
    return best;
}

static enum bc_status fake_refill(void *ctx, struct bc_frontier *f,
                                  const char *origin, size_t len, size_t skip,
                                  size_t max)
{
    struct fake_store *fs = ctx;
    char o[64];
    assert_true(len < sizeof(o));
    memcpy(o, origin, len);
    o[len] = '\0';
    fs->refills++;
    if (skip > fs->max_refill_skip)
        fs->max_refill_skip = skip;
    long after = -1000000;
    struct fake_url *u;
    for (size_t i = 0; i < skip + max && (u = fake_after(fs, o, after)); i++) {
        after = u->seq;
        if (i < skip)
            continue;
        struct bc_frontier_entry e = {u->url,     strlen(u->url),
                                      u->depth,   u->redirects,
                                      u->retries, (uint64_t)(u - fs->urls),
                                      NULL,       0,
                                      NULL,       0};
        if (u->referrer[0]) {
            e.referrer = u->referrer;
            e.referrer_len = strlen(u->referrer);
        }
        if (u->payload_len) {
            e.payload = u->payload;
            e.payload_len = u->payload_len;
        }
        assert_int_equal(bc_frontier_refill(f, origin, len, &e), BC_OK);
    }
    return BC_OK;
}

static struct bc_frontier_store fake_store_of(struct fake_store *fs,
                                              size_t window)
{
    struct bc_frontier_store st = {
        fs,          window, fake_queued,       fake_left,      fake_host_hook,
        fake_refill, NULL,   fake_circuit_hook, fake_delay_hook};
    return st;
}

/* What a crash leaves: URLs in flight go back to the head of their
 * host's queue (what crawler/state.c does on resume). */
static void fake_crash(struct fake_store *fs)
{
    for (uint64_t i = fs->count; i >= 1; i--)
        if (fs->urls[i].state == 1) {
            fs->urls[i].state = 0;
            fs->urls[i].seq = --fs->low_seq;
        }
}

/* Rebuild a frontier from the fake store: seen-test by replaying every
 * admission, hosts with their queued counts, the seed's scope. */
static struct bc_frontier *fake_resume(struct fake_store *fs,
                                       struct bc_frontier_config *c,
                                       size_t window, const char *seed_url,
                                       uint64_t now)
{
    struct bc_frontier *f = make(c);
    struct bc_frontier_store st = fake_store_of(fs, window);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    assert_int_equal(bc_frontier_restore_scope(f, seed_url, strlen(seed_url)),
                     BC_OK);
    for (uint64_t i = 1; i <= fs->count; i++)
        assert_int_equal(bc_frontier_restore_seen(f, fs->urls[i].url,
                                                  strlen(fs->urls[i].url)),
                         BC_OK);
    for (size_t h = 0; h < fs->host_count; h++) {
        struct bc_frontier_host_state hs = fs->hosts[h].st;
        hs.origin = fs->hosts[h].origin;
        hs.origin_len = strlen(hs.origin);
        hs.queued = 0;
        for (uint64_t i = 1; i <= fs->count; i++)
            hs.queued += fs->urls[i].state == 0 &&
                         strcmp(fs->urls[i].origin, hs.origin) == 0;
        assert_int_equal(bc_frontier_restore_host(f, &hs, now), BC_OK);
        assert_int_equal(
            bc_frontier_restore_circuit(f, hs.origin, hs.origin_len,
                                        &fs->hosts[h].circuit, now),
            BC_OK);
    }
    return f;
}

/* The store whose FETCH jobs step() records as done, or NULL. */
static struct fake_store *step_store;

/* One job, answered: FETCH done with a 200 (a 429 for URLs ending in
 * "retry"), FETCH_ROBOTS with robots_body. Appends "action url" lines to
 * log. Returns false at DONE. */
static bool step(struct bc_frontier *f, uint64_t *clock, char *log, size_t cap,
                 const char *robots_body)
{
    struct bc_frontier_job j = next(f, *clock);
    size_t used = strlen(log);
    switch (j.action) {
    case BC_FRONTIER_DONE:
        return false;
    case BC_FRONTIER_WAIT:
        assert_true(j.wait_until_ms != UINT64_MAX);
        *clock = j.wait_until_ms;
        return true;
    case BC_FRONTIER_DROP:
        snprintf(log + used, cap - used, "DROP %s\n", j.url);
        return true;
    case BC_FRONTIER_FETCH_SITEMAP:
        fail_msg("a sitemap job without config.sitemaps: %s", j.url);
        return false;
    case BC_FRONTIER_FETCH_ROBOTS:
        assert_int_equal(bc_frontier_robots_done(f, &j, 200, robots_body,
                                                 strlen(robots_body), NULL, 0,
                                                 *clock),
                         BC_OK);
        return true;
    case BC_FRONTIER_FETCH: {
        if (j.referrer)
            snprintf(log + used, cap - used, "FETCH %s %u %u <- %.*s\n", j.url,
                     j.depth, j.retries, (int)j.referrer_len, j.referrer);
        else
            snprintf(log + used, cap - used, "FETCH %s %u %u\n", j.url, j.depth,
                     j.retries);
        size_t n = strlen(j.url);
        /* Links of the pages /p2 and /p4 of each host: they remember it
         * as their referrer, through the store and its refills. */
        if (n > 3 && (strcmp(j.url + n - 3, "/p2") == 0 ||
                      strcmp(j.url + n - 3, "/p4") == 0)) {
            static const char *const links[] = {"l1", "l2retry", "/private/l3",
                                                "http://c.test/l4"};
            for (size_t i = 0; i < 4; i++) {
                enum bc_frontier_reason r;
                assert_int_equal(bc_frontier_add_link(f, &j, links[i],
                                                      strlen(links[i]), j.url,
                                                      n, &r, NULL),
                                 BC_OK);
            }
        }
        int status = n > 5 && strcmp(j.url + n - 5, "retry") == 0 ? 429 : 200;
        struct bc_frontier_outcome o = {status, 5, 100,
                                        bc_crawler_fault_of(BC_OK, status, 0)};
        assert_int_equal(bc_frontier_done(f, &j, &o, *clock), BC_OK);
        /* The end of a FETCH is the caller's to record (unless it was
         * queued again). */
        if (step_store && step_store->urls[j.id].state == 1)
            step_store->urls[j.id].state = 2;
        return true;
    }
    }
    return false;
}

static const char store_robots[] = "User-agent: *\nDisallow: /private\n";

/* The URLs of the store tests: 3 hosts, 30 each, some disallowed, some
 * answered 429, a few repeats. */
static void store_fill(struct bc_frontier *f)
{
    static const char *const hosts[] = {"a", "b", "c"};
    char url[128];
    seed(f, "http://a.test/");
    for (int i = 0; i < 30; i++) {
        for (int h = 0; h < 3; h++) {
            snprintf(url, sizeof(url), "http://%s.test/%s%d%s", hosts[h],
                     i % 7 == 3 ? "private/" : "p", i,
                     i % 11 == 5 ? "retry" : "");
            add(f, url, NULL, 1 + (unsigned)h);
        }
        snprintf(url, sizeof(url), "http://a.test/p%d", i / 2);
        add(f, url, NULL, 1); /* a repeat or a new one */
    }
}

static struct bc_frontier_config store_config(void)
{
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    c.min_delay_ms = 10;
    c.max_retries = 1;
    return c;
}

static char log_plain[65536], log_store[65536];

/* With a store and a tiny window, the jobs (FETCH and DROP, in order) are
 * exactly those without one, and memory never holds more than the window
 * per host. */
static void test_store_window_fifo(void **state)
{
    (void)state;
    struct bc_frontier_config c = store_config();
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *plain = make(&c), *stored = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 4);
    assert_int_equal(bc_frontier_set_store(stored, &st), BC_OK);
    step_store = NULL;
    assert_int_equal(bc_frontier_set_store(stored, &st), BC_ERR_INVALID_ARG);
    store_fill(plain);
    store_fill(stored);
    struct bc_frontier_stats sp, ss;
    bc_frontier_stats(plain, 0, &sp);
    bc_frontier_stats(stored, 0, &ss);
    assert_int_equal(sp.queued, ss.queued);
    assert_int_equal(sp.admitted, ss.admitted);
    assert_true(ss.queue_bytes < sp.queue_bytes);
    assert_int_equal(fs.count, ss.admitted);
    log_plain[0] = log_store[0] = '\0';
    uint64_t clock_p = 0, clock_s = 0;
    step_store = NULL;
    while (step(plain, &clock_p, log_plain, sizeof(log_plain), store_robots))
        ;
    step_store = &fs;
    while (step(stored, &clock_s, log_store, sizeof(log_store), store_robots)) {
        bc_frontier_stats(stored, clock_s, &ss);
        assert_true(ss.queue_bytes <= 3 * 2 * 256); /* <= 2 chunks a host */
    }
    assert_string_equal(log_plain, log_store);
    assert_true(strstr(log_store, "DROP http://a.test/private/3\n") != NULL);
    assert_true(strstr(log_store, "FETCH http://b.test/p5retry 2 1\n") != NULL);
    /* Referrers through the store: kept by a refill and by a 429. */
    assert_true(strstr(log_store, "FETCH http://c.test/l2retry 4 1 <- "
                                  "http://c.test/p2\n") != NULL);
    assert_true(strstr(log_store, "FETCH http://c.test/l4 4 0 <- "
                                  "http://c.test/p2\n") != NULL);
    assert_true(fs.refills > 3);
    for (uint64_t i = 1; i <= fs.count; i++)
        assert_int_not_equal(fs.urls[i].state, 0); /* none left queued */
    /* The host slot: empty at each of the 3 hosts' first call only. */
    assert_true(fs.hook_calls > 2 * fs.count);
    assert_int_equal(fs.slot_calls, fs.hook_calls - 3);
    bc_frontier_stats(stored, clock_s, &ss);
    bc_frontier_stats(plain, clock_p, &sp);
    assert_int_equal(ss.handed_out, sp.handed_out);
    assert_int_equal(ss.retried, sp.retried);
    assert_true(ss.retried > 0);
    bc_frontier_free(plain);
    bc_frontier_free(stored);
}

/* With a store, a FETCH given back goes through the queued hook with
 * requeue true (its id kept), retries unchanged, and comes out again. */
static void test_giveback_store(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 100;
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/x");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/x");
    uint64_t id = j.id;
    assert_int_equal(fs.urls[id].state, 1); /* handed out */
    assert_int_equal(bc_frontier_giveback(f, &j, 10), BC_OK);
    assert_int_equal(fs.urls[id].state, 0); /* queued again */
    assert_int_equal(fs.urls[id].retries, 0);
    j = expect_fetch(f, 10, "http://a.test/x");
    assert_int_equal(j.id, id);
    assert_int_equal(j.retries, 0);
    done(f, &j, 20, 200, 10, 0);
    assert_int_equal(next(f, 1000).action, BC_FRONTIER_DONE);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 1000, &s);
    assert_int_equal(s.given_back, 1);
    /* A store failure is sticky. */
    seed(f, "http://a.test/z");
    j = expect_fetch(f, 1000, "http://a.test/z");
    fs.fail = true;
    assert_int_equal(bc_frontier_giveback(f, &j, 1010), BC_ERR_IO);
    assert_int_equal(bc_frontier_store_status(f), BC_ERR_IO);
    bc_frontier_free(f);
}

/* With a store, a payload goes to the store with its URL's admission,
 * and comes back with it from memory and from the store alike (a window
 * of 2: the third URL on is spilled and refilled), through a give-back,
 * and after a crash and a resume. */
static void test_payload_store(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    static const char *const pl[] = {"one\0x", "", "three", "\0\0\0\0"};
    static const size_t pn[] = {5, 0, 5, 4};
    char url[64];
    for (int i = 0; i < 4; i++) {
        snprintf(url, sizeof(url), "http://a.test/p%d", i);
        assert_int_equal(add_payload(f, url, pl[i], pn[i]), BC_ADMIT_QUEUED);
        assert_int_equal(fs.urls[fs.count].payload_len, pn[i]);
    }
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    done(f, &j, 1, 200, 1, 0);
    fs.urls[j.id].state = 2; /* a done is the caller's to record */
    j = expect_fetch(f, 1, "http://a.test/p0");
    expect_payload(&j, pl[0], pn[0]);
    /* Given back with the window full: the store holds it (and its
     * payload, fake_queued checks) at the tail. */
    assert_int_equal(bc_frontier_giveback(f, &j, 2), BC_OK);
    j = expect_fetch(f, 2, "http://a.test/p1");
    expect_payload(&j, NULL, 0);
    done(f, &j, 3, 200, 1, 0);
    fs.urls[j.id].state = 2;
    j = expect_fetch(f, 3, "http://a.test/p2"); /* refilled */
    expect_payload(&j, pl[2], pn[2]);
    /* A crash with p2 in flight: the resumed frontier hands out p2, p3
     * and p0 with their payloads, all from the store. */
    bc_frontier_free(f);
    fake_crash(&fs);
    f = fake_resume(&fs, &c, 2, "http://a.test/", 100);
    j = expect_fetch(f, 100, "http://a.test/p2");
    expect_payload(&j, pl[2], pn[2]);
    done(f, &j, 101, 200, 1, 0);
    j = expect_fetch(f, 101, "http://a.test/p3");
    expect_payload(&j, pl[3], pn[3]);
    done(f, &j, 102, 200, 1, 0);
    j = expect_fetch(f, 102, "http://a.test/p0");
    expect_payload(&j, pl[0], pn[0]);
    done(f, &j, 103, 200, 1, 0);
    assert_int_equal(next(f, 200).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
}

/* ---- transient faults: retries, the circuit breaker, hosts down ------- */

static void fail_transient(struct bc_frontier *f, struct bc_frontier_job *job,
                           uint64_t now, int status, uint64_t retry_after_ms)
{
    struct bc_frontier_outcome o = {status, 5, retry_after_ms,
                                    BC_FAULT_TRANSIENT};
    if (job->action != BC_FRONTIER_FETCH)
        print_error("at %llu: not a FETCH job: %d\n", (unsigned long long)now,
                    job->action);
    assert_int_equal(bc_frontier_done(f, job, &o, now), BC_OK);
}

struct circuit_seen {
    enum bc_frontier_circuit circuit;
    unsigned failures;
    bool down;
    uint64_t down_lost, exhausted;
};

static void circuit_of(void *ctx, const struct bc_frontier_host_info *info)
{
    struct circuit_seen *c = ctx;
    c->circuit = info->circuit;
    c->failures = info->failures;
    c->down = info->down;
    c->down_lost = info->down_lost;
    c->exhausted = info->exhausted;
}

static struct circuit_seen circuit(const struct bc_frontier *f)
{
    struct circuit_seen c;
    memset(&c, 0, sizeof(c));
    assert_int_equal(bc_frontier_hosts(f, circuit_of, &c), 1);
    return c;
}

/* frontier.h RETRIES, jitter 0: the n-th retry (n = 1, 2, 3) comes
 * retry_delay_ms x 2^(n-1) after the failure before it, the host waits
 * until then (its other URLs too), and the failure after max_retries
 * retries is final. */
static void test_retry_transient(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 10;
    c.retry_jitter = 0.0;
    c.host_failures = 0; /* no circuit breaker here */
    assert_int_equal(c.max_retries, 3);
    assert_int_equal(c.retry_delay_ms, 1000);
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/x");
    add(f, "/y", "http://a.test/x", 1);
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/x");
    fail_transient(f, &j, 5, 0, 0);
    assert_true(j.requeued);
    assert_int_equal(j.retry_at_ms, 5 + 1000);
    expect_wait(f, 5, 1005); /* the host is snoozed: /y waits too */
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 6, &s);
    assert_int_equal(s.hosts_blocked, 1);
    j = expect_fetch(f, 1005, "http://a.test/y"); /* x went to the tail */
    done(f, &j, 1010, 200, 5, 0);
    assert_false(j.requeued);
    j = expect_fetch(f, 1020, "http://a.test/x");
    assert_int_equal(j.retries, 1);
    fail_transient(f, &j, 1030, 0, 0);
    assert_int_equal(j.retry_at_ms, 1030 + 2000);
    expect_wait(f, 1030, 3030);
    j = expect_fetch(f, 3030, "http://a.test/x");
    assert_int_equal(j.retries, 2);
    fail_transient(f, &j, 3040, 500, 0);
    assert_int_equal(j.retry_at_ms, 3040 + 4000);
    j = expect_fetch(f, 7040, "http://a.test/x");
    assert_int_equal(j.retries, 3);
    fail_transient(f, &j, 7050, 502, 0);
    assert_false(j.requeued); /* retries exhausted: final */
    assert_int_equal(j.retry_at_ms, 0);
    assert_int_equal(next(f, 7060).action, BC_FRONTIER_DONE);
    bc_frontier_stats(f, 7060, &s);
    assert_int_equal(s.retried, 3);
    assert_int_equal(s.retries_exhausted, 1);
    assert_int_equal(s.handed_out, 5);
    struct circuit_seen cs = circuit(f);
    assert_int_equal(cs.exhausted, 1); /* per host too */
    bc_frontier_free(f);

    /* A 429/503 waits for the longer of the backoff and its Retry-After
     * (capped at max_retry_after_ms; backoff_ms without one). */
    c.max_retry_after_ms = 8000;
    f = make(&c);
    seed(f, "http://a.test/x");
    j = expect_fetch(f, 0, "http://a.test/x");
    fail_transient(f, &j, 0, 503, 5000);
    assert_int_equal(j.retry_at_ms, 5000); /* 5000 > 1000 */
    j = expect_fetch(f, 5000, "http://a.test/x");
    fail_transient(f, &j, 5000, 429, 0);
    assert_int_equal(j.retry_at_ms, 5000 + 8000); /* backoff 60 s, capped */
    j = expect_fetch(f, 13000, "http://a.test/x");
    fail_transient(f, &j, 13000, 503, 100);
    assert_int_equal(j.retry_at_ms, 13000 + 4000); /* 4000 > 100 */
    /* No fault: a 503 is then the page's outcome (no retry), though the
     * host still waits its Retry-After. */
    j = expect_fetch(f, 17000, "http://a.test/x");
    done(f, &j, 17000, 404, 5, 0);
    assert_int_equal(next(f, 17010).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);

    /* max_retries 0: the first transient fault is final. */
    c.max_retries = 0;
    f = make(&c);
    seed(f, "http://a.test/x");
    j = expect_fetch(f, 0, "http://a.test/x");
    fail_transient(f, &j, 0, 0, 0);
    assert_false(j.requeued);
    assert_int_equal(next(f, 10).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
    c.retry_jitter = 1.5;
    assert_int_equal(bc_frontier_create(&c, &f), BC_ERR_INVALID_ARG);
}

/* With jitter j the wait before retry n is within retry_delay_ms x
 * 2^(n-1) x (1 +/- j), spread over that range, and the same seed gives
 * the same waits. */
static void test_retry_jitter(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.retry_jitter = 0.25;
    c.retry_seed = 42;
    c.host_failures = 0;
    c.max_retries = 255;
    uint64_t waits[2][6];
    for (int run = 0; run < 2; run++) {
        struct bc_frontier *f = make(&c);
        seed(f, "http://a.test/x");
        uint64_t now = 0;
        for (unsigned i = 0; i < 6; i++) {
            struct bc_frontier_job j = next(f, now);
            assert_int_equal(j.action, BC_FRONTIER_FETCH);
            assert_int_equal(j.retries, i);
            fail_transient(f, &j, now, 0, 0);
            uint64_t wait = j.retry_at_ms - now;
            waits[run][i] = wait;
            uint64_t base = 1000ull << i; /* retry i + 1 */
            assert_true(wait >= base - base / 4);
            assert_true(wait <= base + base / 4);
            now = j.retry_at_ms;
        }
        bc_frontier_free(f);
    }
    assert_memory_equal(waits[0], waits[1], sizeof(waits[0]));
    /* The first wait over many URLs (many hosts: each its first retry):
     * within [750, 1250], spread over both halves. */
    struct bc_frontier *f = make(&c);
    char url[64];
    for (int i = 0; i < 400; i++) {
        snprintf(url, sizeof(url), "http://h%d.test/", i);
        seed(f, url);
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < 400; i++) {
        struct bc_frontier_job j = next(f, 0);
        assert_int_equal(j.action, BC_FRONTIER_FETCH);
        fail_transient(f, &j, 0, 0, 0);
        uint64_t wait = j.retry_at_ms;
        assert_true(wait >= 750 && wait <= 1250);
        lo = wait < lo ? wait : lo;
        hi = wait > hi ? wait : hi;
    }
    assert_true(lo < 800 && hi > 1200);
    bc_frontier_free(f);
}

/* The circuit breaker: host_failures transient faults in a row open it for
 * host_backoff_ms; then one probe (half-open, even with two transfers per
 * host allowed); a failed probe opens it for twice the last period,
 * capped at host_backoff_max_ms; a success closes it and resets the
 * period. */
static void test_circuit_breaker(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.per_host_concurrency = 2;
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 10;
    c.max_retries = 255;
    c.host_failures = 3;
    c.host_backoff_ms = 100;
    c.host_backoff_max_ms = 300;
    c.host_give_up_ms = 0;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/1");
    for (int i = 2; i <= 4; i++) {
        char u[32];
        snprintf(u, sizeof(u), "/%d", i);
        add(f, u, "http://a.test/1", 1);
    }
    struct bc_frontier_job a = next(f, 0), b = next(f, 0);
    assert_int_equal(b.action, BC_FRONTIER_FETCH);
    fail_transient(f, &a, 0, 0, 0);
    fail_transient(f, &b, 0, 0, 0);
    assert_int_equal(circuit(f).failures, 2);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_CLOSED);
    a = next(f, 10);
    b = next(f, 10);
    assert_int_equal(b.action, BC_FRONTIER_FETCH);
    fail_transient(f, &a, 10, 0, 0); /* the third: open for 100 ms */
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_OPEN);
    fail_transient(f, &b, 10, 0, 0); /* a straggler: still open */
    expect_wait(f, 10, 110);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 10, &s);
    assert_int_equal(s.hosts_open, 1);
    /* Half-open: one probe, not two. */
    a = next(f, 110);
    assert_int_equal(a.action, BC_FRONTIER_FETCH);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_HALF_OPEN);
    expect_wait(f, 110, UINT64_MAX);
    fail_transient(f, &a, 110, 0, 0); /* open again, 200 ms */
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_OPEN);
    expect_wait(f, 110, 310);
    a = next(f, 310);
    fail_transient(f, &a, 310, 0, 0); /* 400 capped at 300 */
    expect_wait(f, 310, 610);
    a = next(f, 610);
    assert_int_equal(a.action, BC_FRONTIER_FETCH);
    done(f, &a, 610, 200, 5, 0); /* closed */
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_CLOSED);
    assert_int_equal(circuit(f).failures, 0);
    bc_frontier_stats(f, 610, &s);
    assert_int_equal(s.hosts_open, 0);
    /* Two at a time again; three faults open it for 100 ms again. */
    a = next(f, 610);
    b = next(f, 610);
    assert_int_equal(b.action, BC_FRONTIER_FETCH);
    fail_transient(f, &a, 610, 0, 0);
    fail_transient(f, &b, 610, 0, 0);
    /* (the URLs' own retry waits have grown: 10 ms x 2^retries) */
    uint64_t t = next(f, 610).wait_until_ms;
    a = next(f, t);
    fail_transient(f, &a, t, 0, 0);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_OPEN);
    expect_wait(f, t, t + 100);
    /* A probe given back (a local fault: ours) is no probe: the circuit
     * stays open (no time left), and the next request is the probe. */
    a = next(f, t + 100);
    assert_int_equal(a.action, BC_FRONTIER_FETCH);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_HALF_OPEN);
    assert_int_equal(bc_frontier_giveback(f, &a, t + 100), BC_OK);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_OPEN);
    assert_int_equal(circuit(f).failures, 3); /* no fault counted */
    /* A permanent failure is an outcome: it closes the circuit too. */
    a = next(f, t + 100);
    struct bc_frontier_outcome o = {0, 5, 0, BC_FAULT_PERMANENT};
    assert_int_equal(bc_frontier_done(f, &a, &o, t + 100), BC_OK);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_CLOSED);
    bc_frontier_free(f);
}

/* A host failing for host_give_up_ms is given up as down at its next
 * transient fault: that URL is final, its queued URLs come back as DROP
 * jobs (BC_ADMIT_HOST_DOWN), and so do those admitted later; the crawl
 * ends. */
static void test_host_down(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 100;
    c.max_retries = 1;
    c.host_failures = 2;
    c.host_backoff_ms = 1000;
    c.host_give_up_ms = 1500;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/1");
    add(f, "/2", "http://a.test/1", 1);
    add(f, "/3", "http://a.test/1", 1);
    add(f, "/4", "http://a.test/1", 1);
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/1");
    fail_transient(f, &j, 0, 0, 0); /* the run begins at 0 */
    j = expect_fetch(f, 100, "http://a.test/2");
    fail_transient(f, &j, 100, 0, 0); /* open until 1100 */
    j = expect_fetch(f, 1100, "http://a.test/3");
    fail_transient(f, &j, 1100, 0, 0); /* 1100 < 1500: open until 3100 */
    assert_false(circuit(f).down);
    j = expect_fetch(f, 3100, "http://a.test/4");
    fail_transient(f, &j, 3100, 0, 0); /* 3100 >= 1500: down */
    assert_false(j.requeued);
    assert_true(circuit(f).down);
    static const char *const drops[] = {"http://a.test/1", "http://a.test/2",
                                        "http://a.test/3"};
    for (size_t i = 0; i < 3; i++) {
        j = next(f, 3100);
        assert_int_equal(j.action, BC_FRONTIER_DROP);
        assert_int_equal(j.reason, BC_ADMIT_HOST_DOWN);
        assert_string_equal(j.url, drops[i]);
    }
    assert_int_equal(next(f, 3100).action, BC_FRONTIER_DONE);
    /* Later admissions: dropped with the same reason. */
    assert_int_equal(add(f, "/5", "http://a.test/1", 1), BC_ADMIT_QUEUED);
    j = next(f, 3200);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_HOST_DOWN);
    assert_int_equal(next(f, 3200).action, BC_FRONTIER_DONE);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 3200, &s);
    assert_int_equal(s.hosts_down, 1);
    assert_int_equal(s.hosts_open, 0);
    assert_int_equal(s.reasons[BC_ADMIT_HOST_DOWN], 5);
    assert_int_equal(s.retries_exhausted, 0);
    assert_int_equal(circuit(f).down_lost, 5);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_HOST_DOWN),
                        "host_down");
    bc_frontier_free(f);

    /* host_give_up_ms 0: never given up. */
    c.host_give_up_ms = 0;
    c.max_retries = 255;
    f = make(&c);
    seed(f, "http://a.test/1");
    uint64_t now = 0;
    for (int i = 0; i < 30; i++) {
        j = next(f, now);
        if (j.action == BC_FRONTIER_WAIT) {
            now = j.wait_until_ms;
            j = next(f, now);
        }
        assert_int_equal(j.action, BC_FRONTIER_FETCH);
        fail_transient(f, &j, now, 0, 0);
    }
    assert_false(circuit(f).down);
    assert_true(now > 3600u * 1000u); /* open 1 s, 2 s, ... 10 min */
    bc_frontier_free(f);
}

/* The circuit through a store: a frontier stopped while a host's circuit
 * is open resumes with it open for the time it had left and its run of
 * faults; a host down stays down, its queue drains as DROP jobs. */
static void test_circuit_store(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 10;
    c.host_failures = 2;
    c.host_backoff_ms = 1000;
    c.host_give_up_ms = 5000;
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/1");
    add(f, "/2", "http://a.test/1", 1);
    add(f, "/3", "http://a.test/1", 1);
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/1");
    fail_transient(f, &j, 0, 0, 0);
    j = expect_fetch(f, 10, "http://a.test/2");
    fail_transient(f, &j, 10, 0, 0); /* open until 1010 */
    assert_int_equal(fs.hosts[0].circuit.circuit, BC_FRONTIER_CIRCUIT_OPEN);
    assert_int_equal(fs.hosts[0].circuit.open_ms, 1000);
    assert_int_equal(fs.hosts[0].circuit.failures, 2);
    assert_int_equal(fs.urls[j.id].retries, 1); /* the retry count too */
    bc_frontier_free(f);                        /* killed */
    fake_crash(&fs);
    f = fake_resume(&fs, &c, 2, "http://a.test/1", 50000);
    expect_wait(f, 50000, 51000); /* the 1000 ms it had left */
    assert_int_equal(circuit(f).failures, 2);
    assert_int_equal(circuit(f).circuit, BC_FRONTIER_CIRCUIT_OPEN);
    j = expect_fetch(f, 51000, "http://a.test/3");
    /* The run began 10 ms before the stop, 51000 - 50000 + 10 >= 5000?
     * No: open again for 2000 ms. */
    fail_transient(f, &j, 51000, 0, 0);
    assert_int_equal(fs.hosts[0].circuit.backoff_ms, 2000);
    assert_int_equal(fs.hosts[0].circuit.failing_ms, 1010);
    j = next(f, 53000);
    assert_int_equal(j.action, BC_FRONTIER_FETCH);
    fail_transient(f, &j, 56000, 0, 0); /* 6010 ms of faults: down */
    assert_true(fs.hosts[0].circuit.down);
    assert_false(j.requeued);
    fs.urls[j.id].state = 3; /* the caller records its final outcome */
    bc_frontier_free(f);
    fake_crash(&fs);
    f = fake_resume(&fs, &c, 2, "http://a.test/1", 0);
    assert_true(circuit(f).down);
    struct bc_frontier_circuit_state bad = {3, 0, 0, 0, 0, false, 0, 0, 0};
    assert_int_equal(
        bc_frontier_restore_circuit(f, "http://a.test", 13, &bad, 0),
        BC_ERR_INVALID_ARG);
    assert_int_equal(bc_frontier_restore_circuit(NULL, "http://a.test", 13,
                                                 &fs.hosts[0].circuit, 0),
                     BC_ERR_INVALID_ARG);
    j = next(f, 0);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_HOST_DOWN);
    j = next(f, 0);
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(next(f, 0).action, BC_FRONTIER_DONE);
    assert_int_equal(fs.hosts[0].circuit.down_lost, 3);
    for (uint64_t i = 1; i <= fs.count; i++)
        assert_int_not_equal(fs.urls[i].state, 0); /* none left */
    bc_frontier_free(f);
}

/* Stopped (freed, as by a kill) at several points and rebuilt from the
 * store, a frontier fetches per host the same URLs in the same order as
 * one never stopped: the one in flight at the stop first again, nothing
 * fetched twice otherwise, nothing lost; robots.txt is not asked again;
 * the seen-test remembers every admission; counters continue. */
static void test_store_restore(void **state)
{
    (void)state;
    struct bc_frontier_config c = store_config();
    struct bc_frontier *plain = make(&c);
    store_fill(plain);
    log_plain[0] = '\0';
    uint64_t clock = 0;
    step_store = NULL;
    while (step(plain, &clock, log_plain, sizeof(log_plain), store_robots))
        ;
    bc_frontier_free(plain);

    for (int stop_after = 1; stop_after < 120; stop_after += 17) {
        static struct fake_store fs;
        memset(&fs, 0, sizeof(fs));
        struct bc_frontier *f = make(&c);
        struct bc_frontier_store st = fake_store_of(&fs, 3);
        assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
        store_fill(f);
        log_store[0] = '\0';
        clock = 0;
        step_store = &fs;
        /* Run, then leave one FETCH in flight and stop. */
        bool more = true;
        for (int i = 0; i < stop_after && more; i++)
            more = step(f, &clock, log_store, sizeof(log_store), store_robots);
        struct bc_frontier_job inflight = next(f, clock + 1000);
        char line[200] = ""; /* its log line: the URL dies with f */
        if (inflight.action == BC_FRONTIER_FETCH)
            snprintf(line, sizeof(line), "FETCH %s %u %u\n", inflight.url,
                     inflight.depth, inflight.retries);
        else if (inflight.action == BC_FRONTIER_DROP)
            snprintf(line, sizeof(line), "DROP %s\n", inflight.url);
        struct bc_frontier_stats saved;
        bc_frontier_stats(f, clock, &saved);
        bc_frontier_free(f);
        fake_crash(&fs);
        uint64_t parsed = 0;
        for (size_t h = 0; h < fs.host_count; h++)
            parsed += fs.hosts[h].st.robots == BC_FRONTIER_ROBOTS_PARSED;

        f = fake_resume(&fs, &c, 3, "http://a.test/", 0);
        bc_frontier_restore_counters(f, &saved);
        assert_int_equal(add(f, "http://a.test/p1", NULL, 1),
                         BC_ADMIT_DUPLICATE); /* replayed into the LRU too */
        assert_int_equal(add(f, "http://elsewhere.test/", NULL, 1),
                         BC_ADMIT_QUEUED); /* scope ANY */
        char rest[16384] = "";
        clock = 0;
        while (step(f, &clock, rest, sizeof(rest), store_robots))
            ;
        /* The URL in flight at the stop is fetched again, at the head of
         * its host's queue: drop its first FETCH line from rest, then
         * before + rest (less the new URL) = the uninterrupted log, per
         * host. */
        char *again = NULL;
        if (inflight.action == BC_FRONTIER_FETCH) {
            again = strstr(rest, line);
            assert_non_null(again);
            size_t n = strlen(line);
            memmove(again, again + n, strlen(again + n) + 1);
            /* before holds it as done by the uninterrupted run. */
            size_t used = strlen(log_store);
            snprintf(log_store + used, sizeof(log_store) - used, "%s", line);
        }
        if (inflight.action == BC_FRONTIER_DROP) { /* done before the stop */
            size_t used = strlen(log_store);
            snprintf(log_store + used, sizeof(log_store) - used, "%s", line);
        }
        char *extra = strstr(rest, "FETCH http://elsewhere.test/ 1 0\n");
        assert_non_null(extra);
        memmove(extra, extra + 33, strlen(extra + 33) + 1);
        static const char *const hosts[] = {"http://a.test/", "http://b.test/",
                                            "http://c.test/"};
        for (int h = 0; h < 3; h++) {
            char want[8192] = "", got[8192] = "";
            const char *logs[] = {log_plain, log_store, rest};
            for (int which = 0; which < 3; which++) {
                char *out = which == 0 ? want : got;
                const char *p = logs[which];
                while (*p) {
                    const char *eol = strchr(p, '\n');
                    if (strstr(p, hosts[h]) && strstr(p, hosts[h]) < eol)
                        strncat(out, p, (size_t)(eol - p + 1));
                    p = eol + 1;
                }
            }
            if (strcmp(want, got) != 0)
                fprintf(stderr,
                        "stop after %d, host %s:\nwant:\n%s\ngot:\n%s\n"
                        "before:\n%s\nrest:\n%s\n",
                        stop_after, hosts[h], want, got, log_store, rest);
            assert_string_equal(want, got);
        }
        struct bc_frontier_stats s;
        bc_frontier_stats(f, clock, &s);
        /* robots.txt again only for the hosts whose rules were not
         * stored yet, and for the new host. */
        assert_int_equal(s.robots_fetches,
                         saved.robots_fetches + (3 - parsed) + 1);
        assert_true(s.handed_out > saved.handed_out);
        bc_frontier_free(f);
    }
}

/* Every robots.txt outcome survives a restore: rules parsed (no second
 * fetch, the rules obeyed), unreachable (nothing before its retry time,
 * then asked again), given up (its URLs dropped, no fetch at all); a restore
 * counts its ttl from the new clock. */
static void test_store_restore_robots(void **state)
{
    (void)state;
    struct bc_frontier_config c = store_config();
    c.robots_retries = 0; /* the first failure gives a host up */
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    add(f, "http://b.test/x", NULL, 1);
    robots(f, 0, "http://a.test/robots.txt", 200, store_robots);
    robots(f, 0, "http://b.test/robots.txt", 503, NULL); /* given up */
    struct bc_frontier_job d = next(f, 10);
    assert_int_equal(d.action, BC_FRONTIER_DROP); /* b.test/x */
    assert_int_equal(d.reason, BC_ADMIT_HOST_GIVEN_UP);
    expect_fetch(f, 10, "http://a.test/");
    bc_frontier_free(f); /* a kill: a.test/ in flight */
    fake_crash(&fs);
    assert_int_equal(fs.hosts[1].st.robots, BC_FRONTIER_ROBOTS_GIVEN_UP);

    c.robots_retries = 3;
    f = fake_resume(&fs, &c, 2, "http://a.test/", 5000);
    expect_fetch(f, 5000, "http://a.test/"); /* rules known: no robots */
    assert_int_equal(add(f, "http://a.test/private/z", NULL, 1),
                     BC_ADMIT_ROBOTS);
    /* b.test/y: admitted (the store holds it), then dropped through the
     * left hook with the host's reason - a store keeps it as failed. */
    uint64_t before = fs.count;
    assert_int_equal(add(f, "http://b.test/y", NULL, 1), BC_ADMIT_QUEUED);
    assert_int_equal(fs.count, before + 1);
    d = next(f, 6000);
    assert_int_equal(d.action, BC_FRONTIER_DROP);
    assert_int_equal(d.reason, BC_ADMIT_HOST_GIVEN_UP);
    assert_string_equal(d.url, "http://b.test/y");
    assert_int_equal(fs.urls[fs.count].state, 2); /* left: dropped */
    assert_int_equal(fs.hosts[1].st.given_up_lost, 2);
    assert_int_equal(next(f, 6000).action, BC_FRONTIER_WAIT); /* a.test/ */
    assert_int_equal(bc_frontier_given_up_hosts(f, NULL, NULL), 1);
    bc_frontier_free(f);

    /* Unreachable, not given up: blocked until its retry, from the new
     * clock. */
    memset(&fs, 0, sizeof(fs));
    f = make(&c);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://c.test/");
    robots(f, 0, "http://c.test/robots.txt", 500, NULL);
    bc_frontier_free(f);
    assert_int_equal(fs.hosts[0].st.robots, BC_FRONTIER_ROBOTS_UNREACHABLE);
    assert_int_equal(fs.hosts[0].st.robots_ttl_ms, c.robots_retry_ms);
    f = fake_resume(&fs, &c, 2, "http://c.test/", 100000);
    struct bc_frontier_job w = next(f, 100000);
    assert_int_equal(w.action, BC_FRONTIER_WAIT);
    assert_int_equal(w.wait_until_ms, 100000 + c.robots_retry_ms);
    robots(f, 100000 + c.robots_retry_ms, "http://c.test/robots.txt", 404,
           NULL);
    expect_fetch(f, 100000 + c.robots_retry_ms + c.min_delay_ms,
                 "http://c.test/");
    bc_frontier_free(f);
}

static void delay_of_host(void *ctx, const struct bc_frontier_host_info *i)
{
    uint64_t *d = ctx;
    d[i->origin[7] - 'a'] = i->delay_ms; /* "http://a.test": d[0] */
}

/* The delay override goes to the store's delay hook (set, and removed
 * with 0) and comes back with bc_frontier_restore_host(), where the
 * Crawl-delay of the stored robots.txt still wins when larger. A failing
 * hook is sticky: the next call changes nothing. */
static void test_store_delay_override(void **state)
{
    (void)state;
    struct bc_frontier_config c = store_config();
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    seed(f, "http://b.test/");
    seed(f, "http://c.test/");
    robots(f, 0, "http://a.test/robots.txt", 404, NULL);
    robots(f, 0, "http://c.test/robots.txt", 404, NULL);
    robots(f, 0, "http://b.test/robots.txt", 200,
           "User-agent: *\nCrawl-delay: 2\n");
    uint64_t eff = 0;
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://a.test", 13, 700, &eff), BC_OK);
    assert_int_equal(eff, 700);
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://b.test", 13, 500, &eff), BC_OK);
    assert_int_equal(eff, 2000);
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://c.test", 13, 900, &eff), BC_OK);
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://c.test", 13, 0, &eff), BC_OK);
    assert_int_equal(eff, 10);
    assert_int_equal(fs.hosts[0].st.delay_override_ms, 700);
    assert_int_equal(fs.hosts[1].st.delay_override_ms, 500);
    assert_int_equal(fs.hosts[2].st.delay_override_ms, 0);
    assert_int_equal(fs.hosts[2].delay_calls, 2);
    bc_frontier_free(f);

    f = fake_resume(&fs, &c, 2, "http://a.test/", 5000);
    uint64_t d[3] = {0, 0, 0};
    assert_int_equal(bc_frontier_hosts(f, delay_of_host, d), 3);
    assert_int_equal(d[0], 700);
    assert_int_equal(d[1], 2000); /* its Crawl-delay, above the 500 */
    assert_int_equal(d[2], 10);
    fs.fail = true;
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://a.test", 13, 100, &eff),
        BC_ERR_IO);
    assert_int_equal(bc_frontier_store_status(f), BC_ERR_IO);
    assert_int_equal(
        bc_frontier_set_host_delay(f, "http://c.test", 13, 100, &eff),
        BC_ERR_IO);
    bc_frontier_hosts(f, delay_of_host, d);
    assert_int_equal(d[2], 10); /* unchanged */
    bc_frontier_free(f);
}

/* A failing store is sticky: add, next, done report its error. */
static void test_store_error(void **state)
{
    (void)state;
    struct bc_frontier_config c = store_config();
    c.obey_robots = false;
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    assert_int_equal(j.id, 1);
    fs.fail = true;
    enum bc_frontier_reason r;
    assert_int_equal(
        bc_frontier_add(f, "http://a.test/x", 15, NULL, 0, 1, &r, NULL),
        BC_ERR_IO);
    assert_int_equal(r, BC_ADMIT_STORE_ERROR);
    assert_int_equal(bc_frontier_store_status(f), BC_ERR_IO);
    fs.fail = false; /* still failed: sticky */
    struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_done(f, &j, &o, 10), BC_ERR_IO);
    struct bc_frontier_job k;
    assert_int_equal(bc_frontier_next(f, 10, &k), BC_ERR_IO);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_STORE_ERROR),
                        "store_error");
    bc_frontier_free(f);
}

/* ---- sitemaps ------------------------------------------------------------ */

static struct bc_frontier_config sitemap_config(void)
{
    struct bc_frontier_config c = defaults();
    c.sitemaps = true;
    return c;
}

static struct bc_frontier_job expect_sitemap(struct bc_frontier *f,
                                             uint64_t now, const char *url,
                                             const char *scope, unsigned level,
                                             bool named)
{
    struct bc_frontier_job job = next(f, now);
    if (job.action != BC_FRONTIER_FETCH_SITEMAP || strcmp(job.url, url) != 0) {
        print_error("at %llu: expected FETCH_SITEMAP %s, got action %d %s\n",
                    (unsigned long long)now, url, job.action,
                    job.url ? job.url : "(none)");
        fail();
    }
    assert_string_equal(job.scope, scope);
    assert_int_equal(job.scope_len, strlen(scope));
    assert_int_equal(job.level, level);
    assert_int_equal(job.named, named);
    return job;
}

static enum bc_frontier_reason from_sitemap(struct bc_frontier *f,
                                            const struct bc_frontier_job *job,
                                            const char *href)
{
    enum bc_frontier_reason r;
    assert_int_equal(
        bc_frontier_add_from_sitemap(f, job, href, strlen(href), &r, NULL),
        BC_OK);
    return r;
}

static enum bc_frontier_sitemap_reason
index_entry(struct bc_frontier *f, const struct bc_frontier_job *job,
            const char *href)
{
    enum bc_frontier_sitemap_reason r;
    assert_int_equal(bc_frontier_add_sitemap(f, job, href, strlen(href), &r),
                     BC_OK);
    return r;
}

static void sitemap_done(struct bc_frontier *f, struct bc_frontier_job *job,
                         uint64_t now, int status)
{
    struct bc_frontier_outcome o = {status, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_sitemap_done(f, job, &o, now), BC_OK);
}

/* Sitemap: lines become jobs, handed out before the host's pages, with
 * politeness; an index's sitemaps one level down, up to the cap. */
static void test_sitemaps_from_robots(void **state)
{
    (void)state;
    struct bc_frontier_config c = sitemap_config();
    struct bc_frontier *f = make(&c);
    assert_int_equal(seed(f, "http://a.test/"), BC_ADMIT_QUEUED);
    robots(f, 0, "http://a.test/robots.txt", 200,
           "User-agent: *\nDisallow: /private\n"
           "Sitemap: http://a.test/maps/s.xml\n"
           "Sitemap: /rel.xml\n"
           "Sitemap: http://other.test/x.xml\n"
           "Sitemap: http://a.test/maps/s.xml\n"
           "Sitemap: http://a.test/private/s.xml\n"
           "Sitemap: ftp://a.test/s.xml\n");
    struct bc_frontier_stats st;
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 2);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_OUT_OF_SCOPE], 1);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_DUPLICATE], 1);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_ROBOTS], 1);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_BAD_URL], 1);

    /* A link to a sitemap does not fetch it again as a page. */
    assert_int_equal(add(f, "http://a.test/maps/s.xml", NULL, 1),
                     BC_ADMIT_DUPLICATE);
    /* The robots.txt request counts: the sitemap waits the delay. */
    expect_wait(f, 0, 1000);
    struct bc_frontier_job j = expect_sitemap(
        f, 1000, "http://a.test/maps/s.xml", "http://a.test/", 0, true);
    expect_wait(f, 1000, UINT64_MAX);
    /* Named by robots.txt: anywhere on a.test. */
    assert_int_equal(from_sitemap(f, &j, "http://a.test/deep/page"),
                     BC_ADMIT_QUEUED);
    assert_int_equal(from_sitemap(f, &j, "/deep/rel"), BC_ADMIT_QUEUED);
    assert_int_equal(from_sitemap(f, &j, "http://b.test/x"),
                     BC_ADMIT_SITEMAP_SCOPE);
    assert_int_equal(from_sitemap(f, &j, "https://a.test/x"),
                     BC_ADMIT_SITEMAP_SCOPE);
    assert_int_equal(from_sitemap(f, &j, "http://a.test/private/p"),
                     BC_ADMIT_ROBOTS);
    assert_int_equal(from_sitemap(f, &j, "http://a.test/deep/page"),
                     BC_ADMIT_DUPLICATE);
    assert_int_equal(index_entry(f, &j, "child.xml"),
                     BC_FRONTIER_SITEMAP_QUEUED);
    assert_int_equal(index_entry(f, &j, "http://a.test/maps/s.xml"),
                     BC_FRONTIER_SITEMAP_DUPLICATE); /* itself */
    assert_int_equal(index_entry(f, &j, "http://other.test/c.xml"),
                     BC_FRONTIER_SITEMAP_OUT_OF_SCOPE);
    sitemap_done(f, &j, 1010, 200);
    assert_string_equal(j.url, "http://a.test/maps/s.xml"); /* still valid */

    j = expect_sitemap(f, 2010, "http://a.test/rel.xml", "http://a.test/", 0,
                       true);
    sitemap_done(f, &j, 2010, 200);
    j = expect_sitemap(f, 3010, "http://a.test/maps/child.xml",
                       "http://a.test/", 1, true);
    assert_int_equal(index_entry(f, &j, "grand.xml"),
                     BC_FRONTIER_SITEMAP_QUEUED);
    /* A loop back to its parent: fetched once. */
    assert_int_equal(index_entry(f, &j, "s.xml"),
                     BC_FRONTIER_SITEMAP_DUPLICATE);
    sitemap_done(f, &j, 3010, 200);
    j = expect_sitemap(f, 4010, "http://a.test/maps/grand.xml",
                       "http://a.test/", 2, true);
    assert_int_equal(index_entry(f, &j, "great.xml"),
                     BC_FRONTIER_SITEMAP_TOO_DEEP);
    /* Not a page job: done() refuses it, and the reverse. */
    struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_done(f, &j, &o, 4010), BC_ERR_INVALID_ARG);
    sitemap_done(f, &j, 4010, 200);

    /* Then the pages, at depth 0. */
    struct bc_frontier_job p = expect_fetch(f, 5010, "http://a.test/");
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_from_sitemap(f, &p, "x", 1, &r, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_frontier_sitemap_done(f, &p, &o, 5010),
                     BC_ERR_INVALID_ARG);
    done(f, &p, 5010, 200, 5, 0);
    p = expect_fetch(f, 6010, "http://a.test/deep/page");
    assert_int_equal(p.depth, 0);
    done(f, &p, 6010, 200, 5, 0);
    p = expect_fetch(f, 7010, "http://a.test/deep/rel");
    done(f, &p, 7010, 200, 5, 0);
    assert_int_equal(next(f, 8010).action, BC_FRONTIER_DONE);
    bc_frontier_stats(f, 8010, &st);
    assert_int_equal(st.sitemap_fetches, 4);
    assert_int_equal(st.sitemap_keys, 4);
    assert_int_equal(st.seen.verdict_new, st.admitted + st.sitemap_keys);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 4);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_TOO_DEEP], 1);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_DUPLICATE], 3);
    assert_int_equal(st.reasons[BC_ADMIT_SITEMAP_SCOPE], 2);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_SITEMAP_SCOPE),
                        "sitemap_scope");
    bc_frontier_free(f);
}

/* /sitemap.xml when robots.txt names none (or is unavailable, or is not
 * fetched at all); none while it is unreachable. A sitemap not named by
 * robots.txt lists pages under its own directory only. */
static void test_sitemap_default_and_scope(void **state)
{
    (void)state;
    struct bc_frontier_config c = sitemap_config();
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/");
    robots(f, 0, "http://a.test/robots.txt", 404, NULL);
    seed(f, "http://b.test/");
    robots(f, 0, "http://b.test/robots.txt", 200, "User-agent: *\n");
    seed(f, "http://c.test/");
    robots(f, 0, "http://c.test/robots.txt", 500, NULL);
    struct bc_frontier_job a = expect_sitemap(
        f, 1000, "http://a.test/sitemap.xml", "http://a.test/", 0, false);
    struct bc_frontier_job b = expect_sitemap(
        f, 1000, "http://b.test/sitemap.xml", "http://b.test/", 0, false);
    assert_int_equal(index_entry(f, &a, "/sub/s.xml"),
                     BC_FRONTIER_SITEMAP_QUEUED);
    assert_int_equal(index_entry(f, &a, "http://b.test/sub/s.xml"),
                     BC_FRONTIER_SITEMAP_OUT_OF_SCOPE); /* another origin */
    sitemap_done(f, &a, 1000, 200);
    sitemap_done(f, &b, 1000, 404);
    struct bc_frontier_job s = expect_sitemap(
        f, 2000, "http://a.test/sub/s.xml", "http://a.test/sub/", 1, false);
    assert_int_equal(from_sitemap(f, &s, "http://a.test/other/p"),
                     BC_ADMIT_SITEMAP_SCOPE);
    assert_int_equal(from_sitemap(f, &s, "http://a.test/sub"),
                     BC_ADMIT_SITEMAP_SCOPE);
    assert_int_equal(from_sitemap(f, &s, "http://a.test/sub/p?q=1"),
                     BC_ADMIT_QUEUED);
    sitemap_done(f, &s, 2000, 200);
    bc_frontier_free(f);

    /* Without robots.txt: /sitemap.xml as soon as the host is met. */
    c.obey_robots = false;
    f = make(&c);
    seed(f, "http://a.test/page");
    struct bc_frontier_job j = expect_sitemap(f, 0, "http://a.test/sitemap.xml",
                                              "http://a.test/", 0, false);
    sitemap_done(f, &j, 0, 200);
    expect_fetch(f, 1000, "http://a.test/page");
    bc_frontier_free(f);

    /* Off: no sitemap job at all. */
    c = defaults();
    f = make(&c);
    seed(f, "http://a.test/");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "Sitemap: http://a.test/s.xml\n");
    expect_fetch(f, 1000, "http://a.test/");
    bc_frontier_free(f);
}

/* The caller's answer for a page seen before: the URLs it is asked
 * about, and the one it calls due. */
struct due_ctx {
    char asked[4][64];
    size_t n;
    const char *due;
};

static bool due_answer(void *ctx, const char *url, size_t len)
{
    struct due_ctx *d = ctx;
    if (d->n < 4)
        snprintf(d->asked[d->n++], 64, "%.*s", (int)len, url);
    return d->due && strlen(d->due) == len && memcmp(d->due, url, len) == 0;
}

/* bc_frontier_add_from_sitemap_due(): a page the seen-test calls seen is
 * queued when the caller says it is due (a sitemap's newer <lastmod>),
 * asked with its canonical URL, only for a seen page that passed every
 * other check; a new page is queued without asking. */
static void test_sitemap_due(void **state)
{
    (void)state;
    struct bc_frontier_config c = sitemap_config();
    c.obey_robots = false;
    struct bc_frontier *f = make(&c);
    assert_int_equal(seed(f, "http://a.test/"), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "http://a.test/x", NULL, 1), BC_ADMIT_QUEUED);
    assert_int_equal(add(f, "http://a.test/y", NULL, 1), BC_ADMIT_QUEUED);
    struct bc_frontier_job j = expect_sitemap(f, 0, "http://a.test/sitemap.xml",
                                              "http://a.test/", 0, false);
    struct due_ctx d = {.due = "http://a.test/x"};
    enum bc_frontier_reason r;
    const char *hrefs[] = {"HTTP://A.test:80/x#frag", "http://a.test/y",
                           "http://a.test/new", "http://b.test/x"};
    const enum bc_frontier_reason want[] = {BC_ADMIT_QUEUED, BC_ADMIT_DUPLICATE,
                                            BC_ADMIT_QUEUED,
                                            BC_ADMIT_SITEMAP_SCOPE};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(
            bc_frontier_add_from_sitemap_due(f, &j, hrefs[i], strlen(hrefs[i]),
                                             due_answer, &d, &r, NULL),
            BC_OK);
        assert_int_equal(r, want[i]);
    }
    /* Asked about the two seen pages only, by their canonical URLs. */
    assert_int_equal(d.n, 2);
    assert_string_equal(d.asked[0], "http://a.test/x");
    assert_string_equal(d.asked[1], "http://a.test/y");
    /* Without a callback, as bc_frontier_add_from_sitemap(). */
    assert_int_equal(
        bc_frontier_add_from_sitemap_due(f, &j, "/x", 2, NULL, NULL, &r, NULL),
        BC_OK);
    assert_int_equal(r, BC_ADMIT_DUPLICATE);
    sitemap_done(f, &j, 0, 200);
    /* The hook is the call's alone: a link to x later is a duplicate. */
    assert_int_equal(add(f, "http://a.test/x", NULL, 1), BC_ADMIT_DUPLICATE);
    assert_int_equal(d.n, 2);
    /* x twice: its first admission and the due one. */
    const char *order[] = {"http://a.test/", "http://a.test/x",
                           "http://a.test/y", "http://a.test/x",
                           "http://a.test/new"};
    for (size_t i = 0; i < 5; i++) {
        struct bc_frontier_job p = expect_fetch(f, 1000 * (i + 1), order[i]);
        done(f, &p, 1000 * (i + 1), 200, 5, 0);
    }
    assert_int_equal(next(f, 10000).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
}

/* sitemaps_per_host sitemaps queued per host, not one more. */
static void test_sitemap_host_cap(void **state)
{
    (void)state;
    struct bc_frontier_config c = sitemap_config();
    c.sitemaps_per_host = 2;
    struct bc_frontier *f = make(&c);
    seed(f, "http://a.test/");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "Sitemap: http://a.test/1.xml\nSitemap: http://a.test/2.xml\n"
           "Sitemap: http://a.test/3.xml\n");
    struct bc_frontier_stats st;
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 2);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_HOST_CAP], 1);
    bc_frontier_free(f);
    c.sitemaps_per_host = 0; /* the default, 1000 */
    f = make(&c);
    seed(f, "http://a.test/");
    struct strbuf body = {0};
    for (int i = 0; i < 1001; i++) {
        char line[64];
        snprintf(line, sizeof(line), "Sitemap: http://a.test/%d.xml\n", i);
        strbuf_str(&body, line);
    }
    robots(f, 0, "http://a.test/robots.txt", 200, body.p);
    free(body.p);
    bc_frontier_stats(f, 0, &st);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_QUEUED], 1000);
    assert_int_equal(st.sitemaps[BC_FRONTIER_SITEMAP_HOST_CAP], 1);
    bc_frontier_free(f);
}

/* A store's sitemap hook; a resume gives the sitemaps back. */
struct sitemap_log {
    char queued[8][128];
    int nqueued;
    char done[8][128];
    bool given_up[8]; /* of done[i] */
    int ndone;
    struct bc_frontier_sitemap sm[8];
    char scope[8][128];
};

static enum bc_status
log_sitemap(void *ctx, const struct bc_frontier_sitemap *sm, bool is_done)
{
    struct sitemap_log *l = ctx;
    if (is_done) {
        assert_true(l->ndone < 8 && sm->url_len < 128);
        l->given_up[l->ndone] = sm->given_up;
        memcpy(l->done[l->ndone++], sm->url, sm->url_len);
        return BC_OK;
    }
    assert_true(l->nqueued < 8 && sm->url_len < 128 && sm->scope_len < 128);
    int i = l->nqueued++;
    memcpy(l->queued[i], sm->url, sm->url_len);
    memcpy(l->scope[i], sm->scope, sm->scope_len);
    l->sm[i] = *sm;
    l->sm[i].url = l->queued[i];
    l->sm[i].scope = l->scope[i];
    return BC_OK;
}

static struct sitemap_log *fs_sitemap_log;

static enum bc_status
fs_log_sitemap(void *ctx, const struct bc_frontier_sitemap *sm, bool is_done)
{
    (void)ctx;
    return log_sitemap(fs_sitemap_log, sm, is_done);
}

static bool logged_done(const struct sitemap_log *l, const char *url)
{
    for (int i = 0; i < l->ndone; i++)
        if (strcmp(l->done[i], url) == 0)
            return true;
    return false;
}

static void test_sitemap_store(void **state)
{
    (void)state;
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct sitemap_log log;
    memset(&log, 0, sizeof(log));
    struct bc_frontier_config c = sitemap_config();
    struct bc_frontier *f = make(&c);
    /* The URL hooks are the fake store's (ctx fs); the sitemap hook
     * writes to log. */
    struct bc_frontier_store st = fake_store_of(&fs, 4);
    st.sitemap = fs_log_sitemap;
    fs_sitemap_log = &log;
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "Sitemap: http://a.test/a.xml\nSitemap: http://a.test/m/b.xml\n");
    assert_int_equal(log.nqueued, 2);
    assert_string_equal(log.queued[1], "http://a.test/m/b.xml");
    assert_string_equal(log.scope[1], "http://a.test/");
    struct bc_frontier_job j = expect_sitemap(f, 1000, "http://a.test/a.xml",
                                              "http://a.test/", 0, true);
    assert_int_equal(index_entry(f, &j, "c.xml"), BC_FRONTIER_SITEMAP_QUEUED);
    sitemap_done(f, &j, 1000, 200);
    assert_true(logged_done(&log, "http://a.test/a.xml"));
    /* b.xml is handed out, and the process is killed before its done(). */
    j = expect_sitemap(f, 2000, "http://a.test/m/b.xml", "http://a.test/", 0,
                       true);
    bc_frontier_free(f);

    /* Resume: done ones are known, the others queued again. */
    f = make(&c);
    for (int i = 0; i < log.nqueued; i++)
        assert_int_equal(bc_frontier_restore_sitemap(
                             f, &log.sm[i], logged_done(&log, log.queued[i])),
                         BC_OK);
    seed(f, "http://a.test/");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "Sitemap: http://a.test/a.xml\nSitemap: http://a.test/m/b.xml\n");
    struct bc_frontier_stats fst;
    bc_frontier_stats(f, 0, &fst);
    assert_int_equal(fst.sitemaps[BC_FRONTIER_SITEMAP_DUPLICATE], 2);
    assert_int_equal(add(f, "http://a.test/c.xml", NULL, 1),
                     BC_ADMIT_DUPLICATE);
    j = expect_sitemap(f, 1000, "http://a.test/m/b.xml", "http://a.test/", 0,
                       true);
    sitemap_done(f, &j, 1000, 200);
    j = expect_sitemap(f, 2000, "http://a.test/c.xml", "http://a.test/", 1,
                       true);
    sitemap_done(f, &j, 2000, 200);
    expect_fetch(f, 3000, "http://a.test/");
    struct bc_frontier_sitemap bad = {
        "http://a.test/x", 15, "", 0, 3, false, 0, false};
    assert_int_equal(bc_frontier_restore_sitemap(f, &bad, false),
                     BC_ERR_INVALID_ARG);
    bc_frontier_free(f);
}

static void sitemap_fail(struct bc_frontier *f, struct bc_frontier_job *job,
                         uint64_t now, int status)
{
    struct bc_frontier_outcome o = {status, 5, 0, BC_FAULT_TRANSIENT};
    assert_int_equal(bc_frontier_sitemap_done(f, job, &o, now), BC_OK);
}

/* A sitemap whose fetch failed with a transient fault is retried as a
 * page is (retry_delay_ms x 2^(n-1) after the fault, the host snoozed
 * meanwhile), so the pages only it lists are not lost; one whose retries
 * ran out, or whose host was given up as down, is counted as given up
 * to transient faults (BC_FRONTIER_SITEMAP_TRANSIENT), and a store
 * keeps its retry count and that it was given up. */
static void test_sitemap_retry(void **state)
{
    (void)state;
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct sitemap_log log;
    memset(&log, 0, sizeof(log));
    fs_sitemap_log = &log;
    struct bc_frontier_config c = sitemap_config();
    c.obey_robots = false; /* origin/sitemap.xml with the host */
    c.min_delay_ms = 10;
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 1000;
    c.max_retries = 2;
    c.host_failures = 0;
    c.host_give_up_ms = 0;
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 4);
    st.sitemap = fs_log_sitemap;
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    struct bc_frontier_job j = expect_sitemap(f, 0, "http://a.test/sitemap.xml",
                                              "http://a.test/", 0, false);
    assert_int_equal(j.retries, 0);
    sitemap_fail(f, &j, 5, 500);
    assert_true(j.requeued);
    assert_int_equal(j.retry_at_ms, 5 + 1000);
    assert_int_equal(log.ndone, 0); /* not done: queued again */
    assert_int_equal(log.nqueued, 2);
    assert_int_equal(log.sm[1].retries, 1);
    expect_wait(f, 5, 1005); /* the host waits for the retry */
    j = expect_sitemap(f, 1005, "http://a.test/sitemap.xml", "http://a.test/",
                       0, false);
    assert_int_equal(j.retries, 1);
    assert_int_equal(from_sitemap(f, &j, "/only"), BC_ADMIT_QUEUED);
    sitemap_fail(f, &j, 1010, 0); /* a cut read: retried again */
    assert_int_equal(j.retry_at_ms, 1010 + 2000);
    expect_wait(f, 1010, 3010);
    j = expect_sitemap(f, 3010, "http://a.test/sitemap.xml", "http://a.test/",
                       0, false);
    assert_int_equal(j.retries, 2);
    sitemap_fail(f, &j, 3020, 504);
    assert_false(j.requeued); /* retries ran out: given up */
    assert_int_equal(log.ndone, 1);
    assert_true(log.given_up[0]);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 3020, &s);
    assert_int_equal(s.sitemap_fetches, 3);
    assert_int_equal(s.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT], 1);
    assert_int_equal(s.retries_exhausted, 0); /* URLs only */
    assert_string_equal(
        bc_frontier_sitemap_reason_name(BC_FRONTIER_SITEMAP_TRANSIENT),
        "transient");
    /* The pages: the seed, then what the sitemap listed before its cut. */
    j = expect_fetch(f, 3030, "http://a.test/");
    done(f, &j, 3030, 200, 5, 0);
    j = expect_fetch(f, 3040, "http://a.test/only");
    done(f, &j, 3040, 200, 5, 0);
    assert_int_equal(next(f, 3050).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);

    /* Killed while a retry waits: the resume hands it out with its
     * retry count. */
    memset(&fs, 0, sizeof(fs));
    memset(&log, 0, sizeof(log));
    f = make(&c);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/");
    j = expect_sitemap(f, 0, "http://a.test/sitemap.xml", "http://a.test/", 0,
                       false);
    sitemap_fail(f, &j, 0, 502);
    bc_frontier_free(f);
    f = make(&c);
    assert_int_equal(bc_frontier_restore_sitemap(f, &log.sm[1], false), BC_OK);
    j = expect_sitemap(f, 0, "http://a.test/sitemap.xml", "http://a.test/", 0,
                       false);
    assert_int_equal(j.retries, 1);
    struct bc_frontier_outcome ok = {200, 5, 0, BC_FAULT_NONE};
    assert_int_equal(bc_frontier_sitemap_done(f, &j, &ok, 10), BC_OK);
    assert_false(j.requeued);
    bc_frontier_free(f);

    /* A host given up as down: the sitemap that failed then is given
     * up, and so is the one still queued (dropped), as its pages are. */
    memset(&log, 0, sizeof(log));
    c.obey_robots = true;
    c.max_retries = 5;
    c.host_give_up_ms = 1500;
    f = make(&c);
    seed(f, "http://a.test/");
    robots(f, 0, "http://a.test/robots.txt", 200,
           "Sitemap: http://a.test/a.xml\nSitemap: http://a.test/b.xml\n");
    j = expect_sitemap(f, 10, "http://a.test/a.xml", "http://a.test/", 0, true);
    sitemap_fail(f, &j, 10, 0); /* the run begins; a.xml retried at 1010 */
    assert_true(j.requeued);
    j = expect_sitemap(f, 1010, "http://a.test/b.xml", "http://a.test/", 0,
                       true);
    sitemap_fail(f, &j, 1600, 0); /* 1590 ms of faults: down */
    assert_false(j.requeued);
    assert_true(circuit(f).down);
    j = next(f, 1600); /* a.xml dropped, then the seed */
    assert_int_equal(j.action, BC_FRONTIER_DROP);
    assert_int_equal(j.reason, BC_ADMIT_HOST_DOWN);
    assert_string_equal(j.url, "http://a.test/");
    assert_int_equal(next(f, 1600).action, BC_FRONTIER_DONE);
    bc_frontier_stats(f, 1600, &s);
    assert_int_equal(s.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT], 2);
    assert_int_equal(s.sitemaps[BC_FRONTIER_SITEMAP_HOST_GIVEN_UP], 0);
    bc_frontier_free(f);
}

/* The wait for a retry outlives the process: the circuit hook carries it
 * (retry_ms, from the time of the hook), and a resume blocks the host
 * until it ends rather than fetching the URL at once. */
static void test_retry_wait_store(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.retry_jitter = 0.0;
    c.retry_delay_ms = 10000;
    c.host_failures = 0; /* no circuit breaker: only the retry waits */
    static struct fake_store fs;
    memset(&fs, 0, sizeof(fs));
    struct bc_frontier *f = make(&c);
    struct bc_frontier_store st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/1");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/1");
    fail_transient(f, &j, 100, 0, 0);
    assert_int_equal(j.retry_at_ms, 10100);
    assert_int_equal(fs.hosts[0].circuit.retry_ms, 10000);
    assert_int_equal(fs.hosts[0].circuit.circuit, BC_FRONTIER_CIRCUIT_CLOSED);
    bc_frontier_free(f); /* killed */
    fake_crash(&fs);
    f = fake_resume(&fs, &c, 2, "http://a.test/1", 50000);
    expect_wait(f, 50000, 60000); /* the 10000 ms it had left */
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 50000, &s);
    assert_int_equal(s.hosts_blocked, 1);
    j = expect_fetch(f, 60000, "http://a.test/1");
    assert_int_equal(j.retries, 1);
    done(f, &j, 60000, 200, 5, 0);
    bc_frontier_free(f);

    /* A Retry-After (a 503 asking for an hour) too. */
    memset(&fs, 0, sizeof(fs));
    c.max_retry_after_ms = 3600u * 1000u;
    f = make(&c);
    st = fake_store_of(&fs, 2);
    assert_int_equal(bc_frontier_set_store(f, &st), BC_OK);
    seed(f, "http://a.test/1");
    j = expect_fetch(f, 0, "http://a.test/1");
    fail_transient(f, &j, 0, 503, 3600u * 1000u);
    assert_int_equal(fs.hosts[0].circuit.retry_ms, 3600u * 1000u);
    bc_frontier_free(f);
    fake_crash(&fs);
    f = fake_resume(&fs, &c, 2, "http://a.test/1", 7);
    expect_wait(f, 7, 7 + 3600u * 1000u);
    bc_frontier_free(f);
}

/* A partition for the tests: this frontier owns the origin "own"; route()
 * logs each URL handed to it as "origin seed depth redirects url referrer"
 * and returns fail. */
struct partition_log {
    const char *own;
    struct strbuf log;
    enum bc_status fail;
    int calls;
};

static bool part_owns(void *ctx, const char *origin, size_t len)
{
    const struct partition_log *p = ctx;
    return strlen(p->own) == len && memcmp(p->own, origin, len) == 0;
}

static enum bc_status part_route(void *ctx, const char *origin, size_t len,
                                 const struct bc_frontier_entry *e, bool seed)
{
    struct partition_log *p = ctx;
    p->calls++;
    if (p->fail != BC_OK)
        return p->fail;
    assert_int_equal(e->id, 0);
    assert_int_equal(e->retries, 0);
    char head[64];
    strbuf_add(&p->log, origin, len);
    snprintf(head, sizeof(head), " %c %u %u ", seed ? 's' : 'l', e->depth,
             e->redirects);
    strbuf_str(&p->log, head);
    strbuf_add(&p->log, e->url, e->url_len);
    strbuf_str(&p->log, " ");
    if (e->referrer)
        strbuf_add(&p->log, e->referrer, e->referrer_len);
    else
        strbuf_str(&p->log, "-");
    strbuf_str(&p->log, "\n");
    return BC_OK;
}

static struct bc_frontier *partitioned(struct bc_frontier_config *c,
                                       struct partition_log *p)
{
    c->obey_robots = false;
    c->min_delay_ms = 0;
    c->partition.owns = part_owns;
    c->partition.route = part_route;
    c->partition.ctx = p;
    return make(c);
}

/* owns/route: a URL of another worker's host is routed after the checks
 * of the URL alone (scope, include/exclude, depth, redirects, segments,
 * trap) and before those of the host and the seen-test, with its depth,
 * redirect hops and referrer; the same URL routed twice is routed twice;
 * a seed's host enters the local scope all the same. */
static void test_partition_route(void **state)
{
    (void)state;
    struct partition_log p = {"http://a.test", {NULL, 0, 0}, BC_OK, 0};
    struct bc_frontier_config c = defaults();
    c.max_depth = 3;
    c.max_redirects = 1;
    c.host_budget = 2;
    static const char *const exclude[] = {"*/private/*"};
    c.exclude = exclude;
    c.exclude_count = 1;
    struct bc_frontier *f = partitioned(&c, &p);
    enum bc_frontier_reason r;

    assert_int_equal(seed(f, "http://a.test/"), BC_ADMIT_QUEUED);
    assert_int_equal(seed(f, "http://B.test:80/s"), BC_ADMIT_ROUTED);
    assert_string_equal(bc_frontier_reason_name(BC_ADMIT_ROUTED), "routed");
    /* b.test is in the scope now (its seed was routed, its scope kept);
     * c.test is not, and is not routed. */
    assert_int_equal(add(f, "http://c.test/", NULL, 1), BC_ADMIT_OUT_OF_SCOPE);
    assert_int_equal(add(f, "http://b.test/private/x", NULL, 1),
                     BC_ADMIT_EXCLUDED);
    assert_int_equal(add(f, "http://b.test/deep", NULL, 4), BC_ADMIT_TOO_DEEP);
    assert_int_equal(add(f, "http://b.test/x/y/x/y/x/y", NULL, 1),
                     BC_ADMIT_TRAP);
    /* Routed twice: the owner's seen-test decides. The host budget (2,
     * six URLs of b.test routed) and the host are the owner's. */
    assert_int_equal(add(f, "http://b.test/twice", NULL, 2), BC_ADMIT_ROUTED);
    assert_int_equal(add(f, "http://b.test/twice", NULL, 2), BC_ADMIT_ROUTED);
    /* A link and a redirect of a page: depth + 1 with the page as
     * referrer; the redirect one hop further, refused beyond
     * max_redirects before routing. */
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    assert_int_equal(bc_frontier_add_link(f, &j, "//b.test/link", 13, j.url,
                                          j.url_len, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_ROUTED);
    assert_int_equal(bc_frontier_add_redirect(f, &j, "http://b.test/moved", 19,
                                              j.url, j.url_len, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_ROUTED);
    /* A referrer given as text. */
    assert_int_equal(
        bc_frontier_add_with_referrer(f, "http://b.test/sm", 16, NULL, 0, 1,
                                      "http://a.test/m", 15, &r, NULL),
        BC_OK);
    assert_int_equal(r, BC_ADMIT_ROUTED);
    assert_string_equal(p.log.p, "http://b.test s 0 0 http://b.test/s -\n"
                                 "http://b.test l 2 0 http://b.test/twice -\n"
                                 "http://b.test l 2 0 http://b.test/twice -\n"
                                 "http://b.test l 1 0 http://b.test/link "
                                 "http://a.test/\n"
                                 "http://b.test l 0 1 http://b.test/moved "
                                 "http://a.test/\n"
                                 "http://b.test l 1 0 http://b.test/sm "
                                 "http://a.test/m\n");
    done(f, &j, 0, 301, 1, 0);
    /* The redirected page's target, one hop more than max_redirects. */
    assert_int_equal(add(f, "http://a.test/r", NULL, 1), BC_ADMIT_QUEUED);
    j = expect_fetch(f, 0, "http://a.test/r");
    j.redirects = 1; /* as if it were the end of a one-hop chain */
    assert_int_equal(bc_frontier_add_redirect(f, &j, "http://b.test/far", 17,
                                              j.url, j.url_len, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_TOO_MANY_REDIRECTS);
    j.redirects = 0;
    done(f, &j, 0, 200, 1, 0);
    assert_int_equal(p.calls, 6);

    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.reasons[BC_ADMIT_ROUTED], 6);
    assert_int_equal(s.seen.tested, 2); /* a.test/ and a.test/r */
    assert_int_equal(bc_frontier_hosts(f, NULL, NULL), 1); /* no b.test */
    assert_int_equal(next(f, 0).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
    free(p.log.p);
}

/* route() failing: BC_ERR_NOMEM is a refusal for memory (the frontier
 * goes on); any other error is sticky like a store error. */
static void test_partition_route_errors(void **state)
{
    (void)state;
    struct partition_log p = {"http://a.test", {NULL, 0, 0}, BC_ERR_NOMEM, 0};
    struct bc_frontier_config c = defaults();
    c.scope = BC_SCOPE_ANY;
    struct bc_frontier *f = partitioned(&c, &p);
    enum bc_frontier_reason r;
    assert_int_equal(
        bc_frontier_add(f, "http://b.test/", 14, NULL, 0, 1, &r, NULL),
        BC_ERR_NOMEM);
    assert_int_equal(r, BC_ADMIT_NOMEM);
    assert_int_equal(bc_frontier_add_seed(f, "http://b.test/", 14, &r, NULL),
                     BC_ERR_NOMEM);
    assert_int_equal(r, BC_ADMIT_NOMEM);
    assert_int_equal(bc_frontier_store_status(f), BC_OK);
    p.fail = BC_OK;
    assert_int_equal(add(f, "http://b.test/", NULL, 1), BC_ADMIT_ROUTED);
    p.fail = BC_ERR_IO;
    assert_int_equal(
        bc_frontier_add(f, "http://b.test/2", 15, NULL, 0, 1, &r, NULL),
        BC_ERR_IO);
    assert_int_equal(r, BC_ADMIT_STORE_ERROR);
    assert_int_equal(bc_frontier_store_status(f), BC_ERR_IO);
    /* Sticky: even an owned URL is refused now, without route(). */
    int calls = p.calls;
    assert_int_equal(
        bc_frontier_add(f, "http://a.test/", 14, NULL, 0, 1, &r, NULL),
        BC_ERR_IO);
    assert_int_equal(r, BC_ADMIT_STORE_ERROR);
    assert_int_equal(p.calls, calls);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.reasons[BC_ADMIT_NOMEM], 2);
    assert_int_equal(s.reasons[BC_ADMIT_ROUTED], 1);
    bc_frontier_free(f);
    free(p.log.p);
    /* owns without route: refused at create. */
    c = defaults();
    c.partition.owns = part_owns;
    struct bc_frontier *g = NULL;
    assert_int_equal(bc_frontier_create(&c, &g), BC_ERR_INVALID_ARG);
    assert_null(g);
}

/* The owner's side: bc_frontier_add_routed() admits at the given depth
 * with the referrer and the redirect hops (refused beyond max_redirects),
 * and its seen-test makes a second delivery a duplicate. */
static void test_add_routed(void **state)
{
    (void)state;
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.max_redirects = 2;
    struct bc_frontier *f = make(&c);
    enum bc_frontier_reason r;
    enum bc_status ust;
    seed(f, "http://b.test/");
    static const char ref[] = "http://a.test/page";
    assert_int_equal(bc_frontier_add_routed(f, "http://b.test/moved", 19, 4, 2,
                                            ref, strlen(ref), &r, &ust),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_QUEUED);
    assert_int_equal(bc_frontier_add_routed(f, "http://b.test/moved", 19, 4, 2,
                                            ref, strlen(ref), &r, &ust),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_DUPLICATE);
    assert_int_equal(bc_frontier_add_routed(f, "http://b.test/far", 17, 1, 3,
                                            NULL, 0, &r, &ust),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_TOO_MANY_REDIRECTS);
    assert_int_equal(bc_frontier_add_routed(f, "mailto:x@b.test", 15, 1, 0,
                                            NULL, 0, &r, &ust),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_BAD_URL);
    assert_int_equal(ust, BC_ERR_URL_SCHEME);
    assert_int_equal(
        bc_frontier_add_routed(f, "/x", 2, 1, 0, NULL, 3, &r, &ust),
        BC_ERR_INVALID_ARG);
    assert_int_equal(
        bc_frontier_add_routed(NULL, "/x", 2, 1, 0, NULL, 0, &r, &ust),
        BC_ERR_INVALID_ARG);
    struct bc_frontier_job j = expect_fetch(f, 0, "http://b.test/");
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://b.test/moved");
    assert_int_equal(j.depth, 4);
    assert_int_equal(j.redirects, 2);
    assert_string_equal(j.referrer, ref);
    /* One more hop from it is one too many. */
    assert_int_equal(bc_frontier_add_redirect(f, &j, "/again", 6, j.url,
                                              j.url_len, &r, NULL),
                     BC_OK);
    assert_int_equal(r, BC_ADMIT_TOO_MANY_REDIRECTS);
    done(f, &j, 0, 200, 1, 0);
    bc_frontier_free(f);
}

/* bc_frontier_add_request() for req (the reason; its status asserted). */
static enum bc_frontier_reason add_req(struct bc_frontier *f,
                                       const struct bc_frontier_request *req,
                                       enum bc_status want)
{
    enum bc_frontier_reason r = BC_ADMIT_QUEUED;
    assert_int_equal(bc_frontier_add_request(f, req, &r, NULL), want);
    return r;
}

static struct bc_frontier_request request(const char *url, unsigned depth)
{
    struct bc_frontier_request req = {0};
    req.href = url;
    req.href_len = strlen(url);
    req.depth = depth;
    return req;
}

/* A request carries what no shorthand can: a seed with a payload (the
 * seed's host enters the scope), a routed URL with its hops, referrer and
 * payload; a relative href against a base. Bad arguments are refused
 * before anything is counted. */
static void test_add_request_payload(void **state)
{
    (void)state;
    static const unsigned char p1[] = {'s', 0, 'e', 'e', 'd', 0xfe};
    static const unsigned char p2[] = {0, 0, 'r', 0};
    struct bc_frontier_config c = defaults();
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.scope = BC_SCOPE_HOST;
    c.max_payload = 8;
    struct bc_frontier *f = make(&c);

    struct bc_frontier_request req = request("http://a.test/", 0);
    req.seed = true;
    req.payload = p1;
    req.payload_len = sizeof(p1);
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_QUEUED);
    /* Only the seed's host is in scope. */
    req = request("http://b.test/", 1);
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_OUT_OF_SCOPE);
    static const char ref[] = "http://elsewhere.test/page";
    req = request("http://a.test/moved", 3);
    req.redirects = 2;
    req.referrer = ref;
    req.referrer_len = strlen(ref);
    req.payload = p2;
    req.payload_len = sizeof(p2);
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_QUEUED);
    req = request("rel", 1);
    req.base = "http://a.test/dir/";
    req.base_len = strlen(req.base);
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_QUEUED);

    /* Refused before anything is counted. */
    struct bc_frontier_stats before, after;
    bc_frontier_stats(f, 0, &before);
    enum bc_frontier_reason r;
    assert_int_equal(bc_frontier_add_request(f, NULL, &r, NULL),
                     BC_ERR_INVALID_ARG);
    req = request("http://a.test/x", 1);
    assert_int_equal(bc_frontier_add_request(NULL, &req, &r, NULL),
                     BC_ERR_INVALID_ARG);
    assert_int_equal(bc_frontier_add_request(f, &req, NULL, NULL),
                     BC_ERR_INVALID_ARG);
    req.payload_len = 1;
    assert_int_equal(bc_frontier_add_request(f, &req, &r, NULL),
                     BC_ERR_INVALID_ARG);
    req.payload_len = 0;
    req.referrer_len = 1;
    assert_int_equal(bc_frontier_add_request(f, &req, &r, NULL),
                     BC_ERR_INVALID_ARG);
    req.referrer_len = 0;
    req.href = NULL;
    req.href_len = 3;
    assert_int_equal(bc_frontier_add_request(f, &req, &r, NULL),
                     BC_ERR_INVALID_ARG);
    req = request("http://a.test/big", 1);
    unsigned char big[9] = {0};
    req.payload = big;
    req.payload_len = sizeof(big);
    assert_int_equal(add_req(f, &req, BC_ERR_TOO_LARGE), BC_ADMIT_TOO_LONG);
    bc_frontier_stats(f, 0, &after);
    assert_int_equal(after.added, before.added);
    assert_int_equal(after.queued, before.queued);

    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    assert_int_equal(j.depth, 0);
    assert_null(j.referrer);
    expect_payload(&j, p1, sizeof(p1));
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://a.test/moved");
    assert_int_equal(j.depth, 3);
    assert_int_equal(j.redirects, 2);
    assert_string_equal(j.referrer, ref);
    expect_payload(&j, p2, sizeof(p2));
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://a.test/dir/rel");
    expect_payload(&j, NULL, 0);
    done(f, &j, 0, 200, 1, 0);
    assert_int_equal(next(f, 0).action, BC_FRONTIER_DONE);
    bc_frontier_free(f);
}

/* An unfiltered request (Scrapy's dont_filter) queues a URL seen before,
 * with its own payload, and enters the seen-test like any admission; it
 * skips the seen-test's verdict only: robots.txt, scope, depth and the
 * host budget still refuse it. */
static void test_add_request_unfiltered(void **state)
{
    (void)state;
    static const unsigned char p1[] = {'a', 0, 'g', 'a', 'i', 'n'};
    struct bc_frontier_config c = defaults();
    c.min_delay_ms = 0;
    c.scope = BC_SCOPE_HOST;
    c.max_depth = 2;
    c.host_budget = 4;
    struct bc_frontier *f = make(&c);
    assert_int_equal(seed(f, "http://a.test/"), BC_ADMIT_QUEUED);
    robots(f, 0, "http://a.test/robots.txt", 200,
           "User-agent: *\nDisallow: /private\n");
    struct bc_frontier_job j = expect_fetch(f, 0, "http://a.test/");
    done(f, &j, 0, 200, 1, 0);

    /* Seen before: refused filtered, queued unfiltered (budget: 2 of 4). */
    struct bc_frontier_request req = request("http://a.test/", 1);
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_DUPLICATE);
    req.unfiltered = true;
    req.payload = p1;
    req.payload_len = sizeof(p1);
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_QUEUED);
    /* A new URL unfiltered enters the seen-test (budget: 3 of 4). */
    req = request("http://a.test/new", 1);
    req.unfiltered = true;
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_QUEUED);
    req.unfiltered = false;
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_DUPLICATE);

    /* Every other check still holds. */
    req = request("http://a.test/private/x", 1);
    req.unfiltered = true;
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_ROBOTS);
    req = request("http://b.test/", 1);
    req.unfiltered = true;
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_OUT_OF_SCOPE);
    req = request("http://a.test/deep", 3);
    req.unfiltered = true;
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_TOO_DEEP);
    req = request("http://a.test/", 1);
    req.unfiltered = true;
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_QUEUED); /* 4 of 4 */
    assert_int_equal(add_req(f, &req, BC_OK), BC_ADMIT_HOST_BUDGET);

    /* The seen URL comes back with its payload, then again without. */
    size_t in_flight = 9;
    assert_int_equal(bc_frontier_queued(f, &in_flight), 3);
    assert_int_equal(in_flight, 0);
    j = expect_fetch(f, 0, "http://a.test/");
    assert_int_equal(bc_frontier_queued(f, &in_flight), 2);
    assert_int_equal(in_flight, 1);
    assert_int_equal(bc_frontier_queued(f, NULL), 2);
    assert_int_equal(j.depth, 1);
    expect_payload(&j, p1, sizeof(p1));
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://a.test/new");
    done(f, &j, 0, 200, 1, 0);
    j = expect_fetch(f, 0, "http://a.test/");
    expect_payload(&j, NULL, 0);
    done(f, &j, 0, 200, 1, 0);
    assert_int_equal(next(f, 0).action, BC_FRONTIER_DONE);
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    assert_int_equal(s.admitted, 4);
    assert_int_equal(s.reasons[BC_ADMIT_DUPLICATE], 2);
    assert_int_equal(bc_frontier_queued(f, &in_flight), 0);
    assert_int_equal(in_flight, 0);
    assert_int_equal(bc_frontier_queued(NULL, &in_flight), 0);
    bc_frontier_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delay_between_fetches),
        cmocka_unit_test(test_hosts_interleave),
        cmocka_unit_test(test_per_host_concurrency),
        cmocka_unit_test(test_crawl_delay_and_cap),
        cmocka_unit_test(test_host_delay_override),
        cmocka_unit_test(test_response_factor),
        cmocka_unit_test(test_retry_after),
        cmocka_unit_test(test_robots_disallow),
        cmocka_unit_test(test_robots_outcomes),
        cmocka_unit_test(test_robots_transient_4xx),
        cmocka_unit_test(test_robots_give_up),
        cmocka_unit_test(test_redirect_hops),
        cmocka_unit_test(test_retry_url),
        cmocka_unit_test(test_giveback),
        cmocka_unit_test(test_payload),
        cmocka_unit_test(test_payload_nomem),
        cmocka_unit_test(test_giveback_store),
        cmocka_unit_test(test_payload_store),
        cmocka_unit_test(test_retry_transient),
        cmocka_unit_test(test_retry_jitter),
        cmocka_unit_test(test_circuit_breaker),
        cmocka_unit_test(test_host_down),
        cmocka_unit_test(test_circuit_store),
        cmocka_unit_test(test_admission_limits),
        cmocka_unit_test(test_scope_domain),
        cmocka_unit_test(test_spellings_merge),
        cmocka_unit_test(test_queue_memory),
        cmocka_unit_test(test_referrer),
        cmocka_unit_test(test_referrer_nomem),
        cmocka_unit_test(test_referrer_given),
        cmocka_unit_test(test_hosts_iteration),
        cmocka_unit_test(test_hosts_next_contact),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_allocation_failure),
        cmocka_unit_test(test_robots_redirect_nomem),
        cmocka_unit_test(test_next_nomem),
        cmocka_unit_test(test_next_allocation_failure_replay),
        cmocka_unit_test(test_readme_sketch),
        cmocka_unit_test(test_header_sketch),
        cmocka_unit_test(test_many_hosts),
        cmocka_unit_test(test_store_window_fifo),
        cmocka_unit_test(test_store_restore),
        cmocka_unit_test(test_store_restore_robots),
        cmocka_unit_test(test_store_delay_override),
        cmocka_unit_test(test_store_error),
        cmocka_unit_test(test_sitemaps_from_robots),
        cmocka_unit_test(test_sitemap_default_and_scope),
        cmocka_unit_test(test_sitemap_due),
        cmocka_unit_test(test_sitemap_host_cap),
        cmocka_unit_test(test_sitemap_store),
        cmocka_unit_test(test_sitemap_retry),
        cmocka_unit_test(test_retry_wait_store),
        cmocka_unit_test(test_partition_route),
        cmocka_unit_test(test_partition_route_errors),
        cmocka_unit_test(test_add_routed),
        cmocka_unit_test(test_add_request_payload),
        cmocka_unit_test(test_add_request_unfiltered),
        cmocka_unit_test(test_name_tables),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
