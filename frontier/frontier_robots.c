/*
 * frontier_robots.c - robots.txt per host: when the frontier asks for a
 * host's robots.txt, what each answer means, and what it allows. The
 * rules themselves are robots.c's (bloomcrawl/robots.h: the parser and
 * the matcher); this file keeps one per host, with its state.
 *
 * ROBOTS.TXT FIRST
 * A host's URLs are not handed out before its robots.txt outcome is known:
 * the first next() that reaches a host with an unknown (or expired, after
 * 24 h) robots.txt returns FETCH_ROBOTS instead. RFC 9309 2.3.1: 2xx, parse
 * and obey; 4xx, "unavailable", everything allowed; 5xx or no answer,
 * "unreachable", nothing allowed until a retry; up to 5 redirects. 408 and
 * 429 are 4xx that say "later": transient faults like a 5xx (DESIGN 3.4),
 * so unreachable too, as Google reads a 429 (RFC 9309 2.3.1.3 only lets a
 * crawler fetch when robots.txt is unavailable, it never makes it). URLs
 * admitted before the rules were known are checked when they come out of
 * the queue, and those now disallowed are handed back as DROP jobs, so the
 * caller sees every URL it gave: nothing is silently lost.
 *
 *
 * THE STATES OF A HOST'S ROBOTS.TXT (enum robots_state, h->robots_state),
 * each arrow labelled with the function that makes it:
 *
 *                  bc_fr_robots_next()
 *      +---------+ (bc_frontier_next())  +----------+ bc_frontier_giveback()
 *      | UNKNOWN |---------------------->| FETCHING |----> robots_before
 *      +---------+                       +----------+     (the state it had)
 *           ^                              |  |  |  |
 *           |  robots_redirect()           |  |  |  |  robots_known(): 2xx
 *           +--(3xx + Location, < 5 hops)--+  |  |  +-------------------+
 *                                             |  |  robots_known():    |
 *              robots_unreachable(): 5xx,     |  |  4xx but 408, 429, |
 *              408, 429, no answer, no        |  |  a 3xx not         |
 *              memory (failures < retries)    |  |  followed          |
 *                    +------------------------+  |                    |
 *                    v                           v                    v
 *             +-------------+             +-----------+         +--------+
 *             | UNREACHABLE |             | ALLOW_ALL |         | PARSED |
 *             +-------------+             +-----------+         +--------+
 *                    |     \________________________|____________/
 *                    |      robots_expires passed: bc_fr_robots_next()
 *                    |      (bc_frontier_next()) -> FETCHING again
 *                    |
 *   robots_unreachable(), from FETCHING, failures = robots_retries:
 *                    v
 *             +----------+
 *             | GIVEN_UP |  final: no more fetches; the host's URLs,
 *             +----------+  queued or admitted later, leave as DROP jobs
 *
 * All three of robots_redirect(), robots_known() and robots_unreachable()
 * run inside bc_frontier_robots_done(). bc_frontier_restore_host()
 * (frontier_store.c) sets any state but FETCHING from a store.
 *
 * INVARIANTS
 *  - FETCHING exactly while a FETCH_ROBOTS job of the host is out; then
 *    the host is out of the heap (bc_fr_host_schedule()) and
 *    robots_before holds the state to go back to on a give-back.
 *  - Only PARSED restricts (bc_fr_robots_allows()): URLs admitted before
 *    the rules were known are checked again when they leave the queue.
 *  - h->robots is non-NULL only in PARSED (a 2xx that parsed), and in
 *    the FETCHING that follows it (the old rules, freed when the answer
 *    comes).
 *  - robots_failures counts unreachable answers in a row; any other
 *    answer resets it; GIVEN_UP comes after robots_retries retries.
 *  - Nothing asks for robots.txt without obey_robots, nor for a host
 *    given up (GIVEN_UP, or down: robots_needed(), frontier_int.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "frontier_int.h"

enum bc_frontier_robots bc_fr_robots_public(enum robots_state s)
{
    switch (s) {
    case ROBOTS_PARSED:
        return BC_FRONTIER_ROBOTS_PARSED;
    case ROBOTS_ALLOW_ALL:
        return BC_FRONTIER_ROBOTS_ALLOW_ALL;
    case ROBOTS_UNREACHABLE:
        return BC_FRONTIER_ROBOTS_UNREACHABLE;
    case ROBOTS_GIVEN_UP:
        return BC_FRONTIER_ROBOTS_GIVEN_UP;
    case ROBOTS_UNKNOWN:
    case ROBOTS_FETCHING:
        break;
    }
    return BC_FRONTIER_ROBOTS_UNKNOWN;
}

/* The path and query of a canonical URL string (for robots.txt). */
static const char *url_target(const char *url, size_t len, size_t *tlen)
{
    const char *p = memchr(url, ':', len);
    size_t i = p ? (size_t)(p - url) + 3 : 0; /* past "://" */
    while (i < len && url[i] != '/')
        i++;
    *tlen = len - i;
    return url + i;
}

/* Only known rules restrict: a URL of a host whose robots.txt is not
 * known yet (or unreachable for now) is queued, and checked again when it
 * leaves the queue, after the rules have been fetched. */
bool bc_fr_robots_allows(const struct host *h, const char *url, size_t len)
{
    if (h->robots_state != ROBOTS_PARSED)
        return true;
    size_t tlen;
    const char *target = url_target(url, len, &tlen);
    return bc_robots_allowed(h->robots, target, tlen);
}

/* The robots.txt URL of a host (its origin's, or a redirect target), as
 * a job URL; NULL when out of memory. */
static char *robots_url_of(struct bc_frontier *f, const struct host *h)
{
    static const char suffix[] = "/robots.txt";
    size_t len = h->robots_url ? strlen(h->robots_url)
                               : h->origin_len + sizeof(suffix) - 1;
    char *s = bc_fr_job_url_new(f, len);
    if (!s)
        return NULL;
    if (h->robots_url) {
        memcpy(s, h->robots_url, len + 1);
    } else {
        memcpy(s, h->origin, h->origin_len);
        memcpy(s + h->origin_len, suffix, sizeof(suffix));
    }
    return s;
}

/* UNKNOWN (or PARSED, ALLOW_ALL, UNREACHABLE expired) -> FETCHING: hand
 * h's robots.txt out as a FETCH_ROBOTS job *j (bc_frontier_next()).
 * BC_OK, or BC_ERR_NOMEM with nothing changed. */
enum bc_status bc_fr_robots_next(struct bc_frontier *f, struct host *h,
                                 struct bc_frontier_job *j)
{
    char *url = robots_url_of(f, h);
    if (!url)
        return BC_ERR_NOMEM;
    h->robots_before = h->robots_state;
    h->robots_state = ROBOTS_FETCHING;
    h->in_flight++;
    f->in_flight++;
    f->totals.robots_fetches++;
    bc_fr_host_schedule(f, h);
    j->action = BC_FRONTIER_FETCH_ROBOTS;
    j->url = j->internal.owned = url;
    j->url_len = strlen(url);
    j->origin = h->origin;
    j->origin_len = h->origin_len;
    return BC_OK;
}

/* FETCHING -> UNKNOWN: h's robots.txt answered 3xx with location; the
 * target, resolved against the robots.txt URL, becomes h's robots.txt URL
 * and the next next() fetches it (no delay: the target is not this
 * host's politeness budget). Returns BC_OK (followed: the job is done),
 * BC_ERR_NOMEM or a URL error (not followed, nothing changed). */
static enum bc_status robots_redirect(struct bc_frontier *f, struct host *h,
                                      struct bc_frontier_job *job,
                                      const char *location, size_t location_len,
                                      uint64_t now)
{
    struct bc_url base, target;
    char *bbuf = malloc(f->cfg.max_url_len + 1);
    char *tbuf = malloc(f->cfg.max_url_len + 1);
    enum bc_status st = bbuf && tbuf ? BC_OK : BC_ERR_NOMEM;
    if (st == BC_OK)
        st = bc_url_normalize(NULL, job->url, job->url_len, &f->cfg.url_policy,
                              bbuf, f->cfg.max_url_len + 1, &base);
    if (st == BC_OK)
        st = bc_url_normalize(&base, location, location_len, &f->cfg.url_policy,
                              tbuf, f->cfg.max_url_len + 1, &target);
    free(bbuf);
    if (st != BC_OK) {
        free(tbuf);
        return st;
    }
    free(h->robots_url);
    h->robots_url = tbuf;
    h->robots_redirects++;
    h->robots_state = ROBOTS_UNKNOWN;
    bc_fr_release(f, job, now);
    bc_fr_host_schedule(f, h);
    return BC_OK;
}

/* Whether an answer with status (2xx: body parsed into h->robots, its
 * error in *result) leaves h's robots.txt reachable. 408 and 429 say
 * "later", as a 5xx does: transient faults (DESIGN 3.4), so unreachable
 * and retried, never "unavailable, allow all" (which would crawl a
 * rate-limiting site with no rules at all; Google also reads a 429
 * robots.txt as unreachable). */
static bool robots_reachable(struct bc_frontier *f, struct host *h, int status,
                             const void *body, size_t len,
                             enum bc_status *result)
{
    bool reachable = true;
    if (status >= 200 && status < 300) {
        *result = bc_robots_parse(body, len, f->user_agent,
                                  strlen(f->user_agent), &h->robots);
        reachable = *result == BC_OK;
    }
    if (status == 408 || status == 429)
        reachable = false;
    return reachable && status >= 200 && status < 500;
}

/* FETCHING -> UNREACHABLE, or -> GIVEN_UP once every retry failed (the
 * job is then done and true returned: the host's queue drains as DROP
 * jobs at once, no request to the host is involved). Unreachable, nothing
 * is allowed until robots_retry_ms x 2^(failures so far) have passed; no
 * Retry-After reaches bc_frontier_robots_done(): the doubling is the
 * wait. */
static bool robots_unreachable(struct bc_frontier *f, struct host *h,
                               struct bc_frontier_job *job, uint64_t now)
{
    f->totals.robots_unreachable++;
    if (h->robots_failures >= f->cfg.robots_retries) {
        h->robots_state = ROBOTS_GIVEN_UP;
        h->robots_expires = UINT64_MAX;
        h->blocked_until = 0;
        bc_fr_release(f, job, now);
        bc_fr_host_schedule(f, h);
        return true;
    }
    unsigned shift = h->robots_failures < 32 ? h->robots_failures : 32;
    uint64_t wait = f->cfg.robots_retry_ms;
    wait = wait > (UINT64_MAX >> 2) >> shift ? UINT64_MAX >> 2 : wait << shift;
    h->robots_failures++;
    h->robots_state = ROBOTS_UNREACHABLE;
    h->robots_expires = now + wait;
    h->blocked_until = h->robots_expires;
    return false;
}

/* FETCHING -> ALLOW_ALL (4xx but 408 and 429, or redirects beyond the
 * limit: unavailable) or -> PARSED (2xx: its Crawl-delay, capped, joins
 * the host's delay); both for robots_ttl_ms. */
static void robots_known(struct bc_frontier *f, struct host *h, int status,
                         uint64_t now)
{
    h->robots_failures = 0;
    h->robots_expires = now + f->cfg.robots_ttl_ms;
    if (status >= 300) {
        h->robots_state = ROBOTS_ALLOW_ALL;
        f->totals.robots_unavailable++;
        return;
    }
    uint64_t cd;
    h->robots_state = ROBOTS_PARSED;
    if (bc_robots_crawl_delay(h->robots, &cd))
        h->crawl_delay_ms =
            cd < f->cfg.max_crawl_delay_ms ? cd : f->cfg.max_crawl_delay_ms;
    f->totals.robots_parsed++;
}

enum bc_status bc_frontier_robots_done(struct bc_frontier *f,
                                       struct bc_frontier_job *job, int status,
                                       const void *body, size_t len,
                                       const char *location,
                                       size_t location_len, uint64_t now)
{
    if (!f || !job || job->action != BC_FRONTIER_FETCH_ROBOTS ||
        !job->internal.host || (!body && len > 0) ||
        (!location && location_len > 0))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->internal.host;
    enum bc_status result = BC_OK;
    bc_robots_free(h->robots);
    h->robots = NULL;
    h->crawl_delay_ms = 0;
    if (status >= 300 && status < 400 && location_len > 0 &&
        h->robots_redirects < MAX_ROBOTS_REDIRECTS) {
        enum bc_status st =
            robots_redirect(f, h, job, location, location_len, now);
        if (st == BC_OK)
            return BC_OK;
        if (st == BC_ERR_NOMEM) {
            /* Fail closed: out of memory is no answer from the server,
             * so the host is unreachable, never "allow all". */
            result = BC_ERR_NOMEM;
            status = 0;
        } else {
            status = 404; /* an unusable redirect: unavailable */
        }
    }
    free(h->robots_url);
    h->robots_url = NULL;
    h->robots_redirects = 0;
    if (!robots_reachable(f, h, status, body, len, &result)) {
        if (robots_unreachable(f, h, job, now)) {
            enum bc_status st = bc_fr_store_host(f, h, now, NULL, 0);
            return st != BC_OK ? st : result;
        }
    } else {
        robots_known(f, h, status, now);
    }
    /* The robots.txt request counts as a request to the host: the next
     * one waits the delay, which now includes the Crawl-delay. */
    uint64_t until = now + base_delay(f, h);
    if (h->robots_state == ROBOTS_UNREACHABLE && h->robots_expires > until)
        until = h->robots_expires;
    bc_fr_release(f, job, until);
    if (f->cfg.sitemaps && (h->robots_state == ROBOTS_PARSED ||
                            h->robots_state == ROBOTS_ALLOW_ALL))
        bc_fr_sitemaps_of_robots(f, h);
    bc_fr_host_schedule(f, h);
    if (h->robots_state == ROBOTS_PARSED && len > BC_ROBOTS_MAX_BYTES)
        len = BC_ROBOTS_MAX_BYTES; /* what the parser read */
    enum bc_status st = bc_fr_store_host(f, h, now, body, len);
    return st != BC_OK ? st : result;
}
