/*
 * frontier_store.c - persistence: the frontier's side of a crawl-state
 * store (bloomcrawl/frontier_store.h: PERSISTENCE).
 *
 * THE JOB
 * The frontier does no I/O. A store (crawler/state.c's, in SQLite) gets
 * a hook call for every change that must survive a kill -9 - a URL
 * queued or leaving its queue, a host's robots.txt outcome, its circuit
 * breaker, its delay override, a sitemap queued or done - and a resumed
 * crawl rebuilds a frontier from what the store kept: hosts (with their
 * overrides), circuits, scope, sitemaps, admissions after the
 * seen-test's snapshot, counters.
 *
 * WHY A WINDOW
 * With a store a host keeps only a window of its queue in memory (a
 * prefix of its FIFO, f->window URLs); the rest is counted as spilled
 * and pushed back by the store (bc_frontier_refill()) when the window
 * runs dry, so a crawl of 10^8 queued URLs does not need them in memory.
 *
 * INVARIANTS
 *  - h->spilled > 0 only with a store, and then h's memory queue holds
 *    h->queued - h->spilled URLs, the head of its FIFO.
 *  - A hook's error is sticky (f->store_status): every later call
 *    returns it, and the caller resumes from the store's last commit.
 *  - The restore calls come before any work (nothing in flight).
 *  - Times go to the store relative to now (the store keeps wall-clock
 *    times; the frontier's clock is the caller's and restarts).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "frontier_int.h"

enum bc_status bc_frontier_set_store(struct bc_frontier *f,
                                     const struct bc_frontier_store *store)
{
    if (!f || !store || !store->queued || !store->left || !store->host ||
        !store->refill || f->queued > 0 || f->in_flight > 0 || f->store.queued)
        return BC_ERR_INVALID_ARG;
    f->store = *store;
    f->window = store->window ? store->window : BC_FRONTIER_DEFAULT_WINDOW;
    f->entry_header = ENTRY_HEADER + ENTRY_ID;
    return BC_OK;
}

enum bc_status bc_frontier_store_status(const struct bc_frontier *f)
{
    return f ? f->store_status : BC_ERR_INVALID_ARG;
}

/* Tell the store the host's state (robots.txt outcome, body when parsed,
 * remaining lifetime from now); a failure is sticky. No store: BC_OK. */
enum bc_status bc_fr_store_host(struct bc_frontier *f, const struct host *h,
                                uint64_t now, const void *body, size_t len)
{
    if (!f->store.queued)
        return BC_OK;
    struct bc_frontier_host_state st;
    memset(&st, 0, sizeof(st));
    st.origin = h->origin;
    st.origin_len = h->origin_len;
    st.robots = bc_fr_robots_public(h->robots_state);
    st.robots_body = st.robots == BC_FRONTIER_ROBOTS_PARSED ? body : NULL;
    st.robots_body_len = st.robots_body ? len : 0;
    st.robots_ttl_ms = h->robots_expires == UINT64_MAX ? UINT64_MAX
                       : h->robots_expires > now       ? h->robots_expires - now
                                                       : 0;
    st.robots_failures = h->robots_failures;
    st.given_up_lost = h->given_up_lost;
    st.admitted = h->admitted;
    st.queued = h->queued;
    st.delay_override_ms = h->delay_override_ms;
    enum bc_status r = f->store.host(f->store.ctx, &st);
    if (r != BC_OK)
        f->store_status = r;
    return r;
}

/* Tell the store the host's circuit at time now (times sent relative to
 * now); a failure is sticky. No store, or no circuit hook: BC_OK. */
enum bc_status bc_fr_store_circuit(struct bc_frontier *f, const struct host *h,
                                   uint64_t now)
{
    if (!f->store.queued || !f->store.circuit)
        return BC_OK;
    struct bc_frontier_circuit_state c;
    memset(&c, 0, sizeof(c));
    c.circuit = (enum bc_frontier_circuit)h->circuit;
    c.failures = h->failures;
    c.failing_ms =
        h->failures && now > h->streak_since ? now - h->streak_since : 0;
    c.open_ms = h->open_until > now ? h->open_until - now : 0;
    c.backoff_ms = h->backoff;
    c.down = h->down;
    c.down_lost = h->down_lost;
    c.exhausted = h->exhausted;
    c.retry_ms = h->blocked_until > now ? h->blocked_until - now : 0;
    enum bc_status r =
        f->store.circuit(f->store.ctx, h->origin, h->origin_len, &c);
    if (r != BC_OK)
        f->store_status = r;
    return r;
}

enum bc_status bc_fr_store_delay(struct bc_frontier *f, const struct host *h)
{
    if (!f->store.queued || !f->store.delay)
        return BC_OK;
    enum bc_status r = f->store.delay(f->store.ctx, h->origin, h->origin_len,
                                      h->delay_override_ms);
    if (r != BC_OK)
        f->store_status = r;
    return r;
}

enum bc_status
bc_frontier_create_with_seen(const struct bc_frontier_config *config,
                             struct bc_seen *seen, struct bc_frontier **out)
{
    if (!seen)
        return BC_ERR_INVALID_ARG;
    struct bc_frontier *f;
    enum bc_status st = bc_frontier_create(config, &f);
    if (st != BC_OK)
        return st;
    bc_seen_free(f->seen);
    f->seen = seen;
    *out = f;
    return BC_OK;
}

enum bc_status bc_frontier_refill(struct bc_frontier *f, const char *origin,
                                  size_t origin_len,
                                  const struct bc_frontier_entry *e)
{
    if (!f || !origin || !e || (!e->url && e->url_len > 0) ||
        (!e->referrer && e->referrer_len > 0) ||
        e->referrer_len > f->cfg.max_url_len ||
        (!e->payload && e->payload_len > 0) ||
        e->payload_len > f->cfg.max_payload || !f->store.queued)
        return BC_ERR_INVALID_ARG;
    struct host *h = bc_fr_host_find(f, origin, origin_len);
    if (!h || h->spilled == 0 || e->url_len > f->cfg.max_url_len ||
        e->depth > 65535 || e->redirects > 255 || e->retries > 255)
        return BC_ERR_INVALID_ARG;
    if (!bc_fr_queue_reserve(f, h, e->url_len))
        return BC_ERR_NOMEM;
    struct entry_meta m = {e->depth, e->redirects, e->retries,     e->id,
                           NULL,     e->payload,   e->payload_len, NULL};
    if (e->payload_len > 0 &&
        !(m.pl = bc_fr_payload_new(e->payload, e->payload_len)))
        return BC_ERR_NOMEM;
    if (e->referrer &&
        !(m.ref = bc_fr_referrer_new(e->referrer, e->referrer_len))) {
        free(m.pl);
        return BC_ERR_NOMEM;
    }
    h->spilled--;
    h->queued--;
    f->queued--;
    bc_fr_queue_push(f, h, e->url, e->url_len, &m);
    return BC_OK;
}

enum bc_status bc_frontier_restore_host(struct bc_frontier *f,
                                        const struct bc_frontier_host_state *s,
                                        uint64_t now_ms)
{
    if (!f || !s || !s->origin || (!s->robots_body && s->robots_body_len) ||
        (s->queued > 0 && !f->store.queued) ||
        s->robots > BC_FRONTIER_ROBOTS_GIVEN_UP)
        return BC_ERR_INVALID_ARG;
    struct host *h = bc_fr_host_get(f, s->origin, s->origin_len);
    if (!h)
        return BC_ERR_NOMEM;
    if (h->queued > 0 || h->in_flight > 0)
        return BC_ERR_INVALID_ARG; /* restored twice, or after work began */
    struct bc_robots *rules = NULL;
    if (s->robots == BC_FRONTIER_ROBOTS_PARSED) {
        enum bc_status st =
            bc_robots_parse(s->robots_body, s->robots_body_len, f->user_agent,
                            strlen(f->user_agent), &rules);
        if (st != BC_OK)
            return st;
    }
    uint64_t expires = s->robots_ttl_ms == UINT64_MAX ? UINT64_MAX
                       : s->robots_ttl_ms > UINT64_MAX - now_ms
                           ? UINT64_MAX
                           : now_ms + s->robots_ttl_ms;
    bc_robots_free(h->robots);
    h->robots = rules;
    h->crawl_delay_ms = 0;
    h->blocked_until = 0;
    h->robots_expires = expires;
    h->robots_failures = s->robots_failures;
    h->given_up_lost = s->given_up_lost;
    h->admitted = s->admitted;
    /* The delay used is still never below the Crawl-delay: base_delay()
     * takes the larger, with whatever robots.txt is read from here on. */
    h->delay_override_ms = s->delay_override_ms;
    switch (s->robots) {
    case BC_FRONTIER_ROBOTS_PARSED: {
        uint64_t cd;
        h->robots_state = ROBOTS_PARSED;
        if (bc_robots_crawl_delay(rules, &cd))
            h->crawl_delay_ms =
                cd < f->cfg.max_crawl_delay_ms ? cd : f->cfg.max_crawl_delay_ms;
        break;
    }
    case BC_FRONTIER_ROBOTS_ALLOW_ALL:
        h->robots_state = ROBOTS_ALLOW_ALL;
        break;
    case BC_FRONTIER_ROBOTS_UNREACHABLE:
        h->robots_state = ROBOTS_UNREACHABLE;
        h->blocked_until = expires;
        h->next_ms = expires;
        break;
    case BC_FRONTIER_ROBOTS_GIVEN_UP:
        h->robots_state = ROBOTS_GIVEN_UP;
        h->robots_expires = UINT64_MAX;
        break;
    case BC_FRONTIER_ROBOTS_UNKNOWN:
        h->robots_state = ROBOTS_UNKNOWN;
        break;
    }
    h->queued = h->spilled = s->queued;
    f->queued += s->queued;
    bc_fr_host_schedule(f, h);
    return BC_OK;
}

enum bc_status bc_frontier_restore_circuit(
    struct bc_frontier *f, const char *origin, size_t origin_len,
    const struct bc_frontier_circuit_state *c, uint64_t now)
{
    if (!f || !origin || !c || c->circuit > BC_FRONTIER_CIRCUIT_HALF_OPEN)
        return BC_ERR_INVALID_ARG;
    struct host *h = bc_fr_host_get(f, origin, origin_len);
    if (!h)
        return BC_ERR_NOMEM;
    if (h->in_flight > 0)
        return BC_ERR_INVALID_ARG;
    h->failures = c->failures;
    h->streak_since = now > c->failing_ms ? now - c->failing_ms : 0;
    h->backoff = c->backoff_ms;
    h->down_lost = c->down_lost;
    h->exhausted = c->exhausted;
    h->circuit = CIRCUIT_CLOSED;
    h->open_until = 0;
    if (c->down) {
        bc_fr_host_down(h, now);
    } else if (c->circuit != BC_FRONTIER_CIRCUIT_CLOSED) {
        /* Half-open: the probe was lost with the process; open, with the
         * time it had left (none for a probe). */
        h->circuit = CIRCUIT_OPEN;
        h->open_until =
            now + (c->circuit == BC_FRONTIER_CIRCUIT_OPEN ? c->open_ms : 0);
        if (h->open_until > h->next_ms)
            h->next_ms = h->open_until;
    }
    if (!c->down && c->retry_ms) {
        /* A retry's wait (or a Retry-After) outlives the process: the
         * host is not contacted before it ends. */
        uint64_t until = now + c->retry_ms;
        if (until > h->blocked_until)
            h->blocked_until = until;
        if (until > h->next_ms)
            h->next_ms = until;
    }
    bc_fr_host_schedule(f, h);
    return BC_OK;
}

/* Normalize a stored absolute URL into f->url_buf (restore calls). */
static enum bc_status normalize_stored(struct bc_frontier *f, const char *url,
                                       size_t len, struct bc_url *u)
{
    f->last_len = 0;
    return bc_url_normalize(NULL, url ? url : "", len, &f->cfg.url_policy,
                            f->url_buf, f->cfg.max_url_len + 1, u);
}

enum bc_status bc_frontier_restore_scope(struct bc_frontier *f, const char *url,
                                         size_t len)
{
    if (!f || (!url && len > 0))
        return BC_ERR_INVALID_ARG;
    struct bc_url u;
    enum bc_status st = normalize_stored(f, url, len, &u);
    if (st != BC_OK)
        return st;
    return bc_fr_scope_add(f, &u) ? BC_OK : BC_ERR_NOMEM;
}

enum bc_status bc_frontier_restore_seen(struct bc_frontier *f, const char *url,
                                        size_t len)
{
    if (!f || (!url && len > 0))
        return BC_ERR_INVALID_ARG;
    struct bc_url u;
    enum bc_status st = normalize_stored(f, url, len, &u);
    if (st != BC_OK)
        return st;
    size_t key_len;
    st = bc_url_seen_key(&u, &f->cfg.url_policy, f->key_buf,
                         f->cfg.max_url_len + 1, &key_len);
    if (st != BC_OK)
        return st;
    enum bc_seen_verdict v;
    st = bc_seen_test_and_add(f->seen, f->key_buf, key_len, &v);
    return st == BC_ERR_NOMEM ? BC_OK : st; /* NOMEM: the filter has it */
}

enum bc_status bc_frontier_restore_sitemap(struct bc_frontier *f,
                                           const struct bc_frontier_sitemap *sm,
                                           bool done)
{
    if (!f || !sm || (!sm->url && sm->url_len) ||
        (!sm->scope && sm->scope_len) ||
        sm->level > BC_FRONTIER_MAX_SITEMAP_LEVEL)
        return BC_ERR_INVALID_ARG;
    struct bc_url u;
    char obuf[300];
    size_t olen;
    enum bc_status st = bc_url_normalize(NULL, sm->url ? sm->url : "",
                                         sm->url_len, &f->cfg.url_policy,
                                         f->sm_buf, f->cfg.max_url_len + 1, &u);
    if (st != BC_OK)
        return st;
    const char *o = bc_url_origin(&u, obuf, sizeof(obuf), &olen);
    if (!o)
        return BC_ERR_URL_HOST;
    if (bc_fr_name_has(f->sitemap_seen, u.href, u.len))
        return BC_OK;
    if (!bc_fr_name_add(&f->sitemap_seen, u.href, u.len))
        return BC_ERR_NOMEM;
    bc_fr_sitemap_seen_test(f, &u);
    struct host *h = bc_fr_host_get(f, o, olen);
    if (!h)
        return BC_ERR_NOMEM;
    h->sm_count++;
    if (done)
        return BC_OK;
    struct sitemap_item *it =
        bc_fr_sitemap_item_new(u.href, u.len, sm->scope, sm->scope_len,
                               sm->level, sm->retries, sm->named);
    if (!it)
        return BC_ERR_NOMEM;
    bc_fr_sitemap_append(h, it);
    bc_fr_host_schedule(f, h);
    return BC_OK;
}

void bc_frontier_restore_counters(struct bc_frontier *f,
                                  const struct bc_frontier_stats *s)
{
    if (!f || !s)
        return;
    /* Every total of the table, and nothing else: a gauge is of now. */
    size_t n;
    const struct bc_counter *t = bc_frontier_counter_table(&n);
    for (size_t i = 0; i < n; i++)
        if (t[i].kind == BC_COUNTER_TOTAL)
            for (size_t j = 0; j < t[i].count; j++)
                bc_counter_set(&t[i], &f->totals, j,
                               bc_counter_u64(&t[i], s, j));
}
