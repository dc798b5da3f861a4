/*
 * frontier_sitemap.c - sitemap jobs: the URLs a site lists for crawlers
 * (sitemaps.org), fetched as jobs of their own beside the host's pages.
 *
 * THE JOB
 * A sitemap names pages that links may never reach. The frontier queues
 * the sitemaps a host's robots.txt names (or /sitemap.xml), hands them
 * out as FETCH_SITEMAP jobs under the host's politeness, admits the pages
 * they list under the sitemap's scope, follows indexes a bounded number
 * of levels, and retries a sitemap lost to a transient fault as it would
 * a page.
 *
 * SITEMAPS (config.sitemaps; frontier.h: SITEMAPS)
 * A host's robots.txt outcome, once known, names its sitemaps (Sitemap:
 * lines, or /sitemap.xml). A sitemap job waits in a short FIFO of its own
 * per host (struct sitemap_item, at most sitemaps_per_host ever), beside
 * the host's URL queue: a host is in the heap while either has work, and
 * next() hands its sitemaps out first, under the same politeness. A set
 * of the sitemap URLs queued in the crawl (uthash, a few per host) makes
 * each one fetched once, however indexes loop; the job carries the prefix
 * its pages must start with, checked in admit() right after
 * normalization. A sitemap that failed with a transient fault is retried
 * as a URL is (its count in the item), at its host's sitemaps' tail; one
 * out of retries, or dropped with its host down, is given up to the fault
 * (BC_FRONTIER_SITEMAP_TRANSIENT), so the crawl is not complete.
 *
 *
 * INVARIANTS
 *  - A sitemap URL enters f->sitemap_seen once per crawl (and the
 *    seen-test with it): an index that lists itself is fetched once.
 *  - h->sm_count counts every sitemap queued for h in the crawl (the
 *    restored ones included), so it only grows; h->sm_head..sm_tail
 *    holds those waiting, in FIFO order.
 *  - A sitemap queued counts under QUEUED; one dropped when handed out
 *    (robots.txt, its host given up or down) or given up after its
 *    retries counts again under that reason.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "frontier_int.h"

/* A new sitemap item: url (url_len bytes), a NUL, scope (scope_len
 * bytes), a NUL; not on any list. NULL when out of memory. */
struct sitemap_item *bc_fr_sitemap_item_new(const char *url, size_t url_len,
                                            const char *scope, size_t scope_len,
                                            unsigned level, unsigned retries,
                                            bool named)
{
    struct sitemap_item *it = malloc(sizeof(*it) + url_len + scope_len + 2);
    if (!it)
        return NULL;
    it->next = NULL;
    it->url_len = url_len;
    it->scope_len = scope_len;
    it->level = level;
    it->retries = retries;
    it->named = named;
    memcpy(it->text, url, url_len);
    it->text[url_len] = '\0';
    if (scope_len)
        memcpy(it->text + url_len + 1, scope, scope_len);
    it->text[url_len + 1 + scope_len] = '\0';
    return it;
}

/* Put it at the tail of h's sitemaps (the caller counts and schedules). */
void bc_fr_sitemap_append(struct host *h, struct sitemap_item *it)
{
    if (h->sm_tail)
        h->sm_tail->next = it;
    else
        h->sm_head = it;
    h->sm_tail = it;
}

/* Whether a sitemap href may be queued: normalized (against base, when
 * given) into f->sm_buf as *u with its origin *op (*olen bytes; in u's
 * text, or written to obuf, 300 bytes),
 * on origin when given, in the crawl's scope, its host (*hp, NULL when
 * not met yet) not given up, robots.txt not against it, not queued
 * before. BC_FRONTIER_SITEMAP_QUEUED to go on, else the reason. */
static enum bc_frontier_sitemap_reason
sitemap_check(struct bc_frontier *f, const char *href, size_t len,
              const char *base, size_t base_len, const char *origin,
              size_t origin_len, struct bc_url *u, char *obuf, const char **op,
              size_t *olen, struct host **hp)
{
    struct bc_url b;
    size_t cap = f->cfg.max_url_len + 1;
    if (base && bc_url_normalize(NULL, base, base_len, &f->cfg.url_policy,
                                 f->sm_base_buf, cap, &b) != BC_OK)
        return BC_FRONTIER_SITEMAP_BAD_URL;
    if (bc_url_normalize(base ? &b : NULL, href, len, &f->cfg.url_policy,
                         f->sm_buf, cap, u) != BC_OK)
        return BC_FRONTIER_SITEMAP_BAD_URL;
    const char *o = *op = bc_url_origin(u, obuf, 300, olen);
    if (!o)
        return BC_FRONTIER_SITEMAP_BAD_URL;
    if ((origin && (*olen != origin_len || memcmp(o, origin, *olen) != 0)) ||
        !bc_fr_in_scope(f, u))
        return BC_FRONTIER_SITEMAP_OUT_OF_SCOPE;
    struct host *h = *hp = bc_fr_host_find(f, o, *olen);
    if (h && h->robots_state == ROBOTS_GIVEN_UP)
        return BC_FRONTIER_SITEMAP_HOST_GIVEN_UP;
    if (h && f->cfg.obey_robots && !bc_fr_robots_allows(h, u->href, u->len))
        return BC_FRONTIER_SITEMAP_ROBOTS;
    if (bc_fr_name_has(f->sitemap_seen, u->href, u->len))
        return BC_FRONTIER_SITEMAP_DUPLICATE;
    return BC_FRONTIER_SITEMAP_QUEUED;
}

/* Queue the sitemap u (checked by sitemap_check(); h its host or NULL)
 * at its host's tail, into the set of sitemaps seen, the seen-test and
 * the store. BC_FRONTIER_SITEMAP_QUEUED, HOST_CAP or NOMEM (also for a
 * store error, which is sticky). */
static enum bc_frontier_sitemap_reason
sitemap_add(struct bc_frontier *f, const struct bc_url *u, const char *o,
            size_t olen, struct host *h, unsigned level, bool named,
            const char *scope, size_t scope_len)
{
    if (!h && !(h = bc_fr_host_get(f, o, olen)))
        return BC_FRONTIER_SITEMAP_NOMEM;
    if (h->sm_count >= f->cfg.sitemaps_per_host)
        return BC_FRONTIER_SITEMAP_HOST_CAP;
    if (!scope) {
        /* The sitemap's directory: up to the last '/' of its path. */
        size_t end = u->path.off + u->path.len;
        while (end > u->path.off && u->href[end - 1] != '/')
            end--;
        scope = u->href;
        scope_len = end;
    }
    struct sitemap_item *it = bc_fr_sitemap_item_new(
        u->href, u->len, scope, scope_len, level, 0, named);
    if (!it)
        return BC_FRONTIER_SITEMAP_NOMEM;
    if (!bc_fr_name_add(&f->sitemap_seen, u->href, u->len)) {
        free(it);
        return BC_FRONTIER_SITEMAP_NOMEM;
    }
    bc_fr_sitemap_seen_test(f, u);
    if (f->store.sitemap) {
        struct bc_frontier_sitemap sm = {
            it->text, u->len, it->text + u->len + 1, scope_len, level, named,
            0,        false};
        enum bc_status st = f->store.sitemap(f->store.ctx, &sm, false);
        if (st != BC_OK) {
            f->store_status = st;
            free(it);
            return BC_FRONTIER_SITEMAP_NOMEM;
        }
    }
    bc_fr_sitemap_append(h, it);
    h->sm_count++;
    bc_fr_host_schedule(f, h);
    return BC_FRONTIER_SITEMAP_QUEUED;
}

/* Queue a sitemap (frontier.h: SITEMAPS): href resolved against base
 * (NULL: absolute), at level; scope: the prefix its pages need, or NULL
 * for the sitemap's own directory; origin: the origin it must be on, or
 * NULL. Counted under its reason. A store error is sticky (and reported
 * as NOMEM here: the callers return the store's status). */
static enum bc_frontier_sitemap_reason
sitemap_queue(struct bc_frontier *f, const char *href, size_t len,
              const char *base, size_t base_len, unsigned level, bool named,
              const char *scope, size_t scope_len, const char *origin,
              size_t origin_len)
{
    struct bc_url u;
    char obuf[300];
    const char *o = NULL;
    size_t olen = 0;
    struct host *h = NULL;
    enum bc_frontier_sitemap_reason r =
        level > BC_FRONTIER_MAX_SITEMAP_LEVEL
            ? BC_FRONTIER_SITEMAP_TOO_DEEP
            : sitemap_check(f, href, len, base, base_len, origin, origin_len,
                            &u, obuf, &o, &olen, &h);
    if (r == BC_FRONTIER_SITEMAP_QUEUED)
        r = sitemap_add(f, &u, o, olen, h, level, named, scope, scope_len);
    f->totals.sitemaps[r]++;
    return r;
}

/* A sitemap's URL enters the seen-test, so that a link to it (sitemaps
 * are often linked from the pages) does not fetch it again as a page. One
 * linked before it was queued stays a page too. Out of memory here costs
 * at most that second request. */
void bc_fr_sitemap_seen_test(struct bc_frontier *f, const struct bc_url *u)
{
    size_t key_len;
    enum bc_seen_verdict v;
    if (bc_url_seen_key(u, &f->cfg.url_policy, f->key_buf,
                        f->cfg.max_url_len + 1, &key_len) == BC_OK &&
        bc_seen_test_and_add(f->seen, f->key_buf, key_len, &v) == BC_OK &&
        v == BC_SEEN_NEW)
        f->totals.sitemap_keys++;
}

/* origin/sitemap.xml: the sitemap a host has when nothing names one. */
void bc_fr_sitemap_default(struct bc_frontier *f, struct host *h)
{
    static const char path[] = "/sitemap.xml";
    char buf[300 + sizeof(path)];
    if (h->origin_len >= 300)
        return;
    memcpy(buf, h->origin, h->origin_len);
    memcpy(buf + h->origin_len, path, sizeof(path));
    (void)sitemap_queue(f, buf, h->origin_len + sizeof(path) - 1, NULL, 0, 0,
                        false, NULL, 0, NULL, 0);
}

/* A host's robots.txt outcome is known: its Sitemap: URLs (resolved
 * against the robots.txt URL), whose pages may be anywhere on the host,
 * or /sitemap.xml when it names none (or was unavailable). */
void bc_fr_sitemaps_of_robots(struct bc_frontier *f, struct host *h)
{
    size_t n = h->robots ? bc_robots_sitemap_count(h->robots) : 0;
    if (n == 0) {
        bc_fr_sitemap_default(f, h);
        return;
    }
    char scope[301];
    char base[300 + sizeof("/robots.txt")];
    if (h->origin_len >= 300)
        return;
    memcpy(scope, h->origin, h->origin_len);
    scope[h->origin_len] = '/';
    memcpy(base, h->origin, h->origin_len);
    memcpy(base + h->origin_len, "/robots.txt", sizeof("/robots.txt"));
    for (size_t i = 0; i < n && f->store_status == BC_OK; i++) {
        size_t len;
        const char *url = bc_robots_sitemap(h->robots, i, &len);
        (void)sitemap_queue(f, url, len, base, strlen(base), 0, true, scope,
                            h->origin_len + 1, NULL, 0);
    }
}

/* Hand out h's next sitemap as *j (BC_OK); or drop it (robots.txt, the
 * host given up: BC_ERR_NOT_FOUND, the caller looks again); BC_ERR_NOMEM
 * (nothing changed) or a store error. */
enum bc_status bc_fr_sitemap_next(struct bc_frontier *f, struct host *h,
                                  uint64_t now, struct bc_frontier_job *j)
{
    struct sitemap_item *it = h->sm_head;
    bool given_up = h->robots_state == ROBOTS_GIVEN_UP || h->down;
    if (given_up || (f->cfg.obey_robots &&
                     !bc_fr_robots_allows(h, it->text, it->url_len))) {
        h->sm_head = it->next;
        if (!h->sm_head)
            h->sm_tail = NULL;
        /* Dropped with its host down: given up to transient faults, as
         * the host's URLs are (kept by a store for a later retry). */
        f->totals.sitemaps[h->down    ? BC_FRONTIER_SITEMAP_TRANSIENT
                           : given_up ? BC_FRONTIER_SITEMAP_HOST_GIVEN_UP
                                      : BC_FRONTIER_SITEMAP_ROBOTS]++;
        bc_fr_host_schedule(f, h);
        enum bc_status st = BC_ERR_NOT_FOUND;
        if (f->store.sitemap) {
            struct bc_frontier_sitemap sm = {
                it->text,      it->url_len, it->text + it->url_len + 1,
                it->scope_len, it->level,   it->named,
                it->retries,   h->down};
            enum bc_status sst = f->store.sitemap(f->store.ctx, &sm, true);
            if (sst != BC_OK)
                st = f->store_status = sst;
        }
        free(it);
        return st;
    }
    char *url = bc_fr_job_url_new(f, it->url_len + 1 + it->scope_len);
    if (!url)
        return BC_ERR_NOMEM;
    memcpy(url, it->text, it->url_len + 1 + it->scope_len + 1);
    h->sm_head = it->next;
    if (!h->sm_head)
        h->sm_tail = NULL;
    h->in_flight++;
    f->in_flight++;
    f->totals.sitemap_fetches++;
    if (h->circuit == CIRCUIT_OPEN)
        h->circuit = CIRCUIT_HALF_OPEN; /* the probe */
    h->next_ms = now + base_delay(f, h);
    bc_fr_host_schedule(f, h);
    j->action = BC_FRONTIER_FETCH_SITEMAP;
    j->url = j->internal.owned = url;
    j->url_len = it->url_len;
    j->scope = url + it->url_len + 1;
    j->scope_len = it->scope_len;
    j->level = it->level;
    j->named = it->named;
    j->retries = it->retries;
    free(it);
    return BC_OK;
}

/* The sitemap of job (handed out by bc_fr_sitemap_next()) as a new item with
 * retries, or NULL out of memory (counted under its NOMEM reason). */
static struct sitemap_item *sitemap_item_of(struct bc_frontier *f,
                                            const struct bc_frontier_job *job,
                                            unsigned retries)
{
    struct sitemap_item *it =
        bc_fr_sitemap_item_new(job->url, job->url_len, job->scope,
                               job->scope_len, job->level, retries, job->named);
    if (!it)
        f->totals.sitemaps[BC_FRONTIER_SITEMAP_NOMEM]++;
    return it;
}

/* Put the sitemap of job (handed out by bc_fr_sitemap_next()) back at the head
 * of h's sitemaps, as if it had not been handed out. BC_OK or
 * BC_ERR_NOMEM (the sitemap is lost: counted under its NOMEM reason). */
enum bc_status bc_fr_sitemap_giveback(struct bc_frontier *f, struct host *h,
                                      const struct bc_frontier_job *job)
{
    struct sitemap_item *it = sitemap_item_of(f, job, job->retries);
    if (!it)
        return BC_ERR_NOMEM;
    it->next = h->sm_head;
    h->sm_head = it;
    if (!h->sm_tail)
        h->sm_tail = it;
    return BC_OK;
}

static bool is_sitemap_job(const struct bc_frontier_job *job)
{
    return job && job->action == BC_FRONTIER_FETCH_SITEMAP &&
           job->internal.host && job->scope && job->url;
}

enum bc_status bc_frontier_add_sitemap(struct bc_frontier *f,
                                       const struct bc_frontier_job *job,
                                       const char *href, size_t href_len,
                                       enum bc_frontier_sitemap_reason *reason)
{
    if (!f || !is_sitemap_job(job) || !reason || (!href && href_len > 0))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    const struct host *h = job->internal.host;
    /* Below a named index, its scope holds; else each its own. */
    *reason = sitemap_queue(
        f, href ? href : "", href_len, job->url, job->url_len, job->level + 1,
        job->named, job->named ? job->scope : NULL,
        job->named ? job->scope_len : 0, h->origin, h->origin_len);
    if (f->store_status != BC_OK)
        return f->store_status;
    return *reason == BC_FRONTIER_SITEMAP_NOMEM ? BC_ERR_NOMEM : BC_OK;
}

enum bc_status bc_frontier_add_from_sitemap(struct bc_frontier *f,
                                            const struct bc_frontier_job *job,
                                            const char *href, size_t href_len,
                                            enum bc_frontier_reason *reason,
                                            enum bc_status *url_status)
{
    return bc_frontier_add_from_sitemap_due(f, job, href, href_len, NULL, NULL,
                                            reason, url_status);
}

enum bc_status bc_frontier_add_from_sitemap_due(
    struct bc_frontier *f, const struct bc_frontier_job *job, const char *href,
    size_t href_len, bc_frontier_due_fn due, void *due_ctx,
    enum bc_frontier_reason *reason, enum bc_status *url_status)
{
    if (!is_sitemap_job(job))
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {0, 0, 0, 0, NULL, NULL, 0, NULL};
    /* The sitemap is the referrer of the pages it lists. */
    if (f && reason &&
        !bc_fr_text_referrer(f, job->url, job->url_len, &m, reason))
        return BC_ERR_NOMEM;
    if (f) {
        f->admit_prefix = job->scope;
        f->admit_prefix_len = job->scope_len;
        f->admit_due = due;
        f->admit_due_ctx = due_ctx;
    }
    enum bc_status st =
        bc_fr_add_common(f, href, href_len, job->url, job->url_len, &m, false,
                         false, reason, url_status);
    if (f) {
        f->admit_prefix = NULL;
        f->admit_due = NULL;
    }
    return st;
}

/* A transient fault of sitemap job (of host h) at now: one more in the
 * host's run, and the sitemap retried as a page is (the pages only it
 * lists are lost otherwise): *again, a new item due at *at (the host
 * waits for it: Heritrix's snooze), or, with no retry left or its host
 * down, given up (*given_up, counted). *until: the host's next contact.
 * BC_OK, or BC_ERR_NOMEM (no item for the retry). */
static enum bc_status sitemap_fault(struct bc_frontier *f, struct host *h,
                                    const struct bc_frontier_job *job,
                                    const struct bc_frontier_outcome *o,
                                    uint64_t now, uint64_t *until,
                                    struct sitemap_item **again, uint64_t *at,
                                    bool *given_up)
{
    enum bc_status st = BC_OK;
    bc_fr_circuit_failure(f, h, now);
    if (h->down) {
        *given_up = true;
        *until = now;
    } else if (job->retries < f->cfg.max_retries) {
        *at = now + bc_fr_retry_delay(f, job->retries, o);
        *again = sitemap_item_of(f, job, job->retries + 1);
        if (*again) {
            if (*at > h->blocked_until)
                h->blocked_until = *at;
            if (*at > *until)
                *until = *at;
        } else {
            st = BC_ERR_NOMEM;
        }
    } else {
        *given_up = true;
    }
    if (*given_up)
        f->totals.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT]++;
    if (h->circuit == CIRCUIT_OPEN && h->open_until > *until)
        *until = h->open_until;
    return st;
}

/* Tell the store (if it keeps sitemaps, and is still sound) what became
 * of job: queued again (again), or done (given up or not). Returns its
 * status (sticky when an error). */
static enum bc_status sitemap_store_done(struct bc_frontier *f,
                                         const struct bc_frontier_job *job,
                                         const struct sitemap_item *again,
                                         bool given_up)
{
    if (f->store_status != BC_OK || !f->store.sitemap)
        return BC_OK;
    struct bc_frontier_sitemap sm = {job->url,
                                     job->url_len,
                                     job->scope,
                                     job->scope_len,
                                     job->level,
                                     job->named,
                                     again ? again->retries : job->retries,
                                     given_up};
    enum bc_status st = f->store.sitemap(f->store.ctx, &sm, !again);
    if (st != BC_OK)
        f->store_status = st;
    return st;
}

enum bc_status bc_frontier_sitemap_done(struct bc_frontier *f,
                                        struct bc_frontier_job *job,
                                        const struct bc_frontier_outcome *o,
                                        uint64_t now)
{
    if (!f || !is_sitemap_job(job) || !o)
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->internal.host;
    uint64_t until = now + bc_fr_after_request(f, h, o, now);
    enum bc_status st = BC_OK;
    /* A sitemap is a request to the host: its fault counts in the host's
     * run, and it is retried as a page is. */
    bool changed = false, given_up = false;
    struct sitemap_item *again = NULL;
    uint64_t at = 0;
    job->requeued = false;
    job->retry_at_ms = 0;
    if (o->fault == BC_FAULT_TRANSIENT) {
        changed = true;
        st = sitemap_fault(f, h, job, o, now, &until, &again, &at, &given_up);
    } else if (o->fault != BC_FAULT_LOCAL) {
        changed = bc_fr_circuit_success(h);
    }
    if (changed) {
        enum bc_status cst = bc_fr_store_circuit(f, h, now);
        if (cst != BC_OK)
            st = cst;
    }
    enum bc_status sst = sitemap_store_done(f, job, again, given_up);
    if (sst != BC_OK)
        st = sst;
    if (again && f->store_status == BC_OK) {
        bc_fr_sitemap_append(h, again);
        job->requeued = true;
        job->retry_at_ms = at;
    } else {
        free(again);
    }
    bc_fr_release(f, job, until);
    bc_fr_host_schedule(f, h);
    return st;
}
