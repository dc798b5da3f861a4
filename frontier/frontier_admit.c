/*
 * frontier_admit.c - admission: which discovered URL enters the frontier.
 *
 * THE JOB
 * Every link a crawler finds comes through here: bc_frontier_add_request()
 * and its shorthands (bc_frontier_add() and its siblings, which differ
 * only in what travels with the URL: depth, redirect hops, referrer,
 * payload; whether it is a seed, or unfiltered). The answer is one enum
 * bc_frontier_reason: queued, or the first check the URL failed. Most links are refused
 * (duplicates, out of scope), so the order of the checks is the cost of
 * a crawl, and what is refused must not leave a trace.
 *
 * ADMISSION
 * add() runs the cheap checks first and the seen-test last, so a URL
 * refused for a limit (too deep now, a full queue) does not enter the
 * Bloom filter and can still be admitted when it comes back:
 *
 *     normalize -> length -> scope -> include/exclude -> depth
 *       -> redirect hops -> path segments -> trap guard
 *       -> partition (another worker's host: routed there, stop)
 *       -> host budget -> queue capacity
 *       -> robots.txt (if known) -> seen-test (on the seen-key) -> enqueue
 *
 * A host given up is no refusal: its URLs are admitted (seen-tested,
 * queued) and dropped at next() with the host's reason, like those queued
 * before the give-up - a URL refused at add() would be lost for good,
 * since no store would know of it.
 *
 * With a partition (crawl workers, frontier.h bc_frontier_partition), a
 * URL whose host another worker owns leaves after the checks that depend
 * on the URL alone, the same on every worker; what depends on the host
 * (its budget, its robots.txt, whether it was given up) and the seen-test
 * are the owner's, which alone holds them. So the seen-test is not asked
 * here: the owner's decides (a sender may route the same URL twice; the
 * owner admits it once).
 *
 * The trap guard refuses a path with a segment repeated more than twice
 * (/a/b/a/b/a/...), the signature of relative links that grow a path for
 * ever; depth and the host budget bound the other traps (calendars).
 *
 *
 * admit() is that ladder, one named rung a function: admit_normalize(),
 * admit_url_checks(), admit_route(), admit_host_checks(), admit_seen(),
 * admit_enqueue(); each returns BC_ADMIT_QUEUED to go on.
 *
 * INVARIANTS
 *  - The seen-test is asked last, after the host's queue has room: a key
 *    it calls NEW is always enqueued (or the store failed, which is
 *    sticky), and a URL refused before it can come back and be admitted.
 *    (A refused seed still widens the scope, and a URL refused after its
 *    host was created leaves the host.)
 *  - The scope sets (the seeds' hosts and registrable domains, libpsl)
 *    only grow.
 *  - An add call past its argument checks and the sticky store error
 *    counts once in added and once in reasons[] (add_common(); the
 *    referrer helpers count their own out-of-memory refusals).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "frontier_int.h"

bool bc_fr_name_has(struct name *set, const char *s, size_t len)
{
    struct name *n;
    HASH_FIND(hh, set, s, len, n);
    return n != NULL;
}

bool bc_fr_name_add(struct name **set, const char *s, size_t len)
{
    if (bc_fr_name_has(*set, s, len))
        return true;
    struct name *n = malloc(sizeof(*n) + len + 1);
    if (!n)
        return false;
    memcpy(n->text, s, len);
    n->text[len] = '\0';
    HASH_ADD_KEYPTR(hh, *set, n->text, len, n);
    if (n->hh.tbl == NULL) {
        free(n);
        return false;
    }
    return true;
}

/* The registrable domain of a host ("blog.example.co.uk" ->
 * "example.co.uk"); an IP address or a public suffix is its own. */
static const char *registrable(const struct bc_frontier *f,
                               const struct bc_url *u, char *buf, size_t cap,
                               size_t *len)
{
    const char *host = u->href + u->host.off;
    if (u->host.len >= cap)
        return NULL;
    memcpy(buf, host, u->host.len);
    buf[u->host.len] = '\0';
    const char *reg = NULL;
    if (u->host_type == BC_URL_HOST_NAME && f->psl)
        reg = psl_registrable_domain(f->psl, buf);
    if (!reg)
        reg = buf;
    *len = strlen(reg);
    return reg;
}

/* A seed's host and registrable domain enter the scope; false: no memory. */
bool bc_fr_scope_add(struct bc_frontier *f, const struct bc_url *u)
{
    char buf[300];
    size_t len;
    const char *reg = registrable(f, u, buf, sizeof(buf), &len);
    return bc_fr_name_add(&f->scope_hosts, u->href + u->host.off,
                          u->host.len) &&
           (!reg || bc_fr_name_add(&f->scope_domains, reg, len));
}

bool bc_fr_in_scope(const struct bc_frontier *f, const struct bc_url *u)
{
    switch (f->cfg.scope) {
    case BC_SCOPE_ANY:
        return true;
    case BC_SCOPE_HOST:
        return bc_fr_name_has(f->scope_hosts, u->href + u->host.off,
                              u->host.len);
    case BC_SCOPE_DOMAIN: {
        char buf[300];
        size_t len;
        const char *reg = registrable(f, u, buf, sizeof(buf), &len);
        return reg && bc_fr_name_has(f->scope_domains, reg, len);
    }
    }
    return false;
}

/* Glob match: '*' matches any run of bytes. Linear in practice: on a
 * mismatch it only backtracks to the last '*'. */
static bool glob_match(const char *pat, const char *s, size_t len)
{
    size_t i = 0;
    const char *star = NULL;
    size_t star_i = 0;
    while (i < len) {
        if (*pat == '*') {
            star = pat++;
            star_i = i;
        } else if (*pat && *pat == s[i]) {
            pat++;
            i++;
        } else if (star) {
            pat = star + 1;
            i = ++star_i;
        } else {
            return false;
        }
    }
    while (*pat == '*')
        pat++;
    return *pat == '\0';
}

static bool any_match(const char *const *pats, size_t count, const char *s,
                      size_t len)
{
    for (size_t i = 0; i < count; i++)
        if (pats[i] && glob_match(pats[i], s, len))
            return true;
    return false;
}

/* Path segment checks: too many segments, or one repeated > 2 times. */
static enum bc_frontier_reason check_segments(const struct bc_frontier *f,
                                              const struct bc_url *u)
{
    const char *path = u->href + u->path.off;
    size_t len = u->path.len;
    struct {
        size_t off, len;
    } seg[64];
    size_t n = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && path[i] == '/')
            i++;
        size_t start = i;
        while (i < len && path[i] != '/')
            i++;
        if (i == start)
            continue;
        if (n == sizeof(seg) / sizeof(seg[0]) || n >= f->cfg.max_segments)
            return BC_ADMIT_TOO_MANY_SEGMENTS;
        seg[n].off = start;
        seg[n].len = i - start;
        n++;
    }
    for (size_t a = 0; a < n; a++) {
        unsigned repeats = 1;
        for (size_t b = a + 1; b < n; b++)
            if (seg[b].len == seg[a].len &&
                memcmp(path + seg[a].off, path + seg[b].off, seg[a].len) == 0)
                repeats++;
        if (repeats > 2)
            return BC_ADMIT_TRAP;
    }
    return BC_ADMIT_QUEUED;
}

/* Parse base into f->base (cached: a page's links share their base). */
static enum bc_status parse_base(struct bc_frontier *f, const char *base,
                                 size_t len)
{
    if (f->base_valid && len == f->base_src_len &&
        memcmp(base, f->base_src, len) == 0)
        return BC_OK;
    f->base_valid = false;
    if (len > f->cfg.max_url_len)
        return BC_ERR_URL_TOO_LONG;
    enum bc_status st =
        bc_url_normalize(NULL, base, len, &f->cfg.url_policy, f->base_buf,
                         f->cfg.max_url_len + 1, &f->base);
    if (st != BC_OK)
        return st;
    memcpy(f->base_src, base, len);
    f->base_src_len = len;
    f->base_valid = true;
    return BC_OK;
}

/* Normalize href (against base, when given) into f->url_buf as *u;
 * *url_status gets the URL status. BC_ADMIT_QUEUED when it normalized,
 * else why not. */
static enum bc_frontier_reason
admit_normalize(struct bc_frontier *f, const char *href, size_t href_len,
                const char *base, size_t base_len, struct bc_url *u,
                enum bc_status *url_status)
{
    enum bc_status st = BC_OK;
    const struct bc_url *parsed_base = NULL;
    f->last_len = 0;
    if (base && base_len > 0) {
        st = parse_base(f, base, base_len);
        if (st == BC_OK)
            parsed_base = &f->base;
    }
    if (st == BC_OK)
        st = bc_url_normalize(parsed_base, href, href_len, &f->cfg.url_policy,
                              f->url_buf, f->cfg.max_url_len + 1, u);
    *url_status = st;
    f->last_len = st == BC_OK ? u->len : 0;
    if (st == BC_ERR_URL_TOO_LONG)
        return BC_ADMIT_TOO_LONG;
    if (st == BC_ERR_NOMEM)
        return BC_ADMIT_NOMEM;
    if (st != BC_OK)
        return BC_ADMIT_BAD_URL;
    return BC_ADMIT_QUEUED;
}

/* The checks that depend on the URL alone, the same on every worker: the
 * sitemap's scope, the crawl's scope (a seed's host and domain enter
 * it), include/exclude, depth, redirect hops, path segments, trap. */
static enum bc_frontier_reason admit_url_checks(struct bc_frontier *f,
                                                const struct bc_url *u,
                                                const struct entry_meta *m,
                                                bool seed)
{
    if (f->admit_prefix &&
        (u->len < f->admit_prefix_len ||
         memcmp(u->href, f->admit_prefix, f->admit_prefix_len) != 0))
        return BC_ADMIT_SITEMAP_SCOPE;
    if (seed) {
        if (!bc_fr_scope_add(f, u))
            return BC_ADMIT_NOMEM;
    } else if (!bc_fr_in_scope(f, u)) {
        return BC_ADMIT_OUT_OF_SCOPE;
    }
    if ((f->cfg.include_count > 0 &&
         !any_match(f->cfg.include, f->cfg.include_count, u->href, u->len)) ||
        any_match(f->cfg.exclude, f->cfg.exclude_count, u->href, u->len))
        return BC_ADMIT_EXCLUDED;
    if (m->depth > f->cfg.max_depth)
        return BC_ADMIT_TOO_DEEP;
    if (m->redirects > f->cfg.max_redirects)
        return BC_ADMIT_TOO_MANY_REDIRECTS;
    return check_segments(f, u);
}

/* The URL's origin is another worker's: hand it to route() (frontier.h:
 * bc_frontier_partition). BC_ADMIT_ROUTED, or why not. */
static enum bc_frontier_reason
admit_route(struct bc_frontier *f, const struct bc_url *u, const char *origin,
            size_t olen, const struct entry_meta *m, bool seed)
{
    const struct bc_frontier_partition *part = &f->cfg.partition;
    struct bc_frontier_entry e = {
        u->href, u->len, m->depth, m->redirects, 0,
        0,       NULL,   0,        m->payload,   m->payload_len};
    if (m->ref) {
        e.referrer = m->ref->text;
        e.referrer_len = m->ref->len;
    }
    enum bc_status st = part->route(part->ctx, origin, olen, &e, seed);
    if (st == BC_ERR_NOMEM)
        return BC_ADMIT_NOMEM;
    if (st != BC_OK) {
        f->store_status = st;
        return BC_ADMIT_STORE_ERROR;
    }
    return BC_ADMIT_ROUTED;
}

/* The checks that depend on the URL's host h (NULL: not met yet): its
 * budget, the frontier's capacity, its robots.txt if known. A host given
 * up (robots.txt unreachable, or down) is no refusal here: its URL is
 * admitted like any other and comes back from next() as a DROP with the
 * host's reason, so that a store records it among the URLs lost to
 * transient faults and a retry brings it back; found again meanwhile, it
 * is a duplicate. */
static enum bc_frontier_reason admit_host_checks(const struct bc_frontier *f,
                                                 const struct host *h,
                                                 const struct bc_url *u)
{
    if (h && f->cfg.host_budget && h->admitted >= f->cfg.host_budget)
        return BC_ADMIT_HOST_BUDGET;
    if (f->cfg.queue_capacity && f->queued >= f->cfg.queue_capacity)
        return BC_ADMIT_QUEUE_FULL;
    if (h && f->cfg.obey_robots && !bc_fr_robots_allows(h, u->href, u->len))
        return BC_ADMIT_ROBOTS;
    return BC_ADMIT_QUEUED;
}

/* The seen-test on the URL's seen-key: BC_ADMIT_QUEUED for a new one (now
 * added), else why not; unfiltered (bc_frontier_request): the key is
 * added all the same and its verdict ignored. It cannot be undone: it
 * comes last. */
static enum bc_frontier_reason
admit_seen(struct bc_frontier *f, const struct bc_url *u, bool unfiltered)
{
    size_t key_len;
    enum bc_status st = bc_url_seen_key(u, &f->cfg.url_policy, f->key_buf,
                                        f->cfg.max_url_len + 1, &key_len);
    if (st != BC_OK) /* NOMEM: a sort of more than 64 query parameters */
        return st == BC_ERR_NOMEM ? BC_ADMIT_NOMEM : BC_ADMIT_BAD_URL;
    enum bc_seen_verdict v;
    st = bc_seen_test_and_add(f->seen, f->key_buf, key_len, &v);
    if (st != BC_OK && st != BC_ERR_NOMEM) /* NOMEM: verdict still valid */
        return BC_ADMIT_NOMEM;
    if (unfiltered)
        return BC_ADMIT_QUEUED;
    /* Seen, but due all the same (a sitemap's newer <lastmod>). */
    if (v != BC_SEEN_NEW && f->admit_due &&
        f->admit_due(f->admit_due_ctx, u->href, u->len))
        return BC_ADMIT_QUEUED;
    if (v == BC_SEEN_DUPLICATE)
        return BC_ADMIT_DUPLICATE;
    if (v == BC_SEEN_PROBABLY_SEEN)
        return BC_ADMIT_PROBABLY_SEEN;
    return BC_ADMIT_QUEUED;
}

/* Queue a new URL at h's tail (the store first, which gives it its id),
 * counted in the host's budget; pl is its payload box (NULL: none, or the
 * store holds it), taken. */
static enum bc_frontier_reason
admit_enqueue(struct bc_frontier *f, struct host *h, const struct bc_url *u,
              const struct entry_meta *m, struct payload *pl, bool to_memory)
{
    struct entry_meta em = *m;
    em.pl = pl;
    if (f->store.queued) {
        struct bc_frontier_entry e = {
            u->href, u->len, m->depth, m->redirects, m->retries,
            0,       NULL,   0,        NULL,         0};
        if (m->ref) {
            e.referrer = m->ref->text;
            e.referrer_len = m->ref->len;
        }
        e.payload = m->payload;
        e.payload_len = m->payload_len;
        enum bc_status st =
            f->store.queued(f->store.ctx, h->origin, h->origin_len,
                            &h->store_host, &e, false, &em.id);
        if (st != BC_OK) {
            free(em.pl);
            f->store_status = st;
            return BC_ADMIT_STORE_ERROR;
        }
    }
    bc_fr_enqueue(f, h, u->href, u->len, &em, to_memory); /* takes em.pl */
    h->admitted++;
    bc_fr_host_schedule(f, h);
    return BC_ADMIT_QUEUED;
}

/* The ladder of ADMISSION (above): each rung returns BC_ADMIT_QUEUED to
 * go on, or the reason the URL stops there. */
static enum bc_frontier_reason
admit(struct bc_frontier *f, const char *href, size_t href_len,
      const char *base, size_t base_len, const struct entry_meta *m, bool seed,
      bool unfiltered, enum bc_status *url_status)
{
    struct bc_url u;
    enum bc_frontier_reason r =
        admit_normalize(f, href, href_len, base, base_len, &u, url_status);
    if (r == BC_ADMIT_QUEUED)
        r = admit_url_checks(f, &u, m, seed);
    if (r != BC_ADMIT_QUEUED)
        return r;
    char obuf[300];
    size_t olen;
    const char *origin = bc_url_origin(&u, obuf, sizeof(obuf), &olen);
    if (!origin)
        return BC_ADMIT_BAD_URL;
    const struct bc_frontier_partition *part = &f->cfg.partition;
    if (part->owns && !part->owns(part->ctx, origin, olen))
        return admit_route(f, &u, origin, olen, m, seed);
    struct host *h = bc_fr_host_find(f, origin, olen);
    r = admit_host_checks(f, h, &u);
    if (r != BC_ADMIT_QUEUED)
        return r;
    /* Everything that can fail goes before the seen-test, which cannot be
     * undone: a NEW key must be enqueued. (A store error after it is
     * sticky: the frontier is then unusable anyway.) */
    bool new_host = !h;
    if (!h)
        h = bc_fr_host_get(f, origin, olen);
    if (!h)
        return BC_ADMIT_NOMEM;
    if (new_host && f->cfg.sitemaps && !f->cfg.obey_robots)
        bc_fr_sitemap_default(f, h); /* no robots.txt to name any */
    bool to_memory = in_memory_next(f, h);
    if (to_memory && !bc_fr_queue_reserve(f, h, u.len))
        return BC_ADMIT_NOMEM;
    /* A payload queued in memory needs its box (PAYLOADS in frontier.c);
     * one the store holds comes back with the refill. */
    struct payload *pl = NULL;
    if (to_memory && m->payload_len > 0 &&
        !(pl = bc_fr_payload_new(m->payload, m->payload_len)))
        return BC_ADMIT_NOMEM;
    r = admit_seen(f, &u, unfiltered);
    if (r != BC_ADMIT_QUEUED) {
        free(pl);
        return r;
    }
    return admit_enqueue(f, h, &u, m, pl, to_memory);
}

enum bc_status bc_fr_add_common(struct bc_frontier *f, const char *href,
                                size_t href_len, const char *base,
                                size_t base_len, const struct entry_meta *m,
                                bool seed, bool unfiltered,
                                enum bc_frontier_reason *reason,
                                enum bc_status *url_status)
{
    if (!f || !reason || (!href && href_len > 0) || (!base && base_len > 0))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK) {
        *reason = BC_ADMIT_STORE_ERROR;
        return f->store_status;
    }
    enum bc_status ust;
    enum bc_frontier_reason r = admit(f, href ? href : "", href_len, base,
                                      base_len, m, seed, unfiltered, &ust);
    f->totals.added++;
    f->totals.reasons[r]++;
    if (r == BC_ADMIT_QUEUED)
        f->totals.admitted++;
    *reason = r;
    if (url_status)
        *url_status = ust;
    if (r == BC_ADMIT_STORE_ERROR)
        return f->store_status;
    return r == BC_ADMIT_NOMEM ? BC_ERR_NOMEM : BC_OK;
}

/* The one admission call: the add calls below are its wrappers. */
enum bc_status bc_frontier_add_request(struct bc_frontier *f,
                                       const struct bc_frontier_request *req,
                                       enum bc_frontier_reason *reason,
                                       enum bc_status *url_status)
{
    if (!f || !req || !reason || (!req->payload && req->payload_len > 0) ||
        (!req->referrer && req->referrer_len > 0) ||
        req->referrer_len > f->cfg.max_url_len)
        return BC_ERR_INVALID_ARG;
    if (req->payload_len > f->cfg.max_payload) {
        *reason = BC_ADMIT_TOO_LONG;
        return BC_ERR_TOO_LARGE;
    }
    struct entry_meta m = {req->depth,   req->redirects,   0,   0, NULL,
                           req->payload, req->payload_len, NULL};
    if (!bc_fr_text_referrer(f, req->referrer, req->referrer_len, &m, reason))
        return BC_ERR_NOMEM;
    return bc_fr_add_common(f, req->href, req->href_len, req->base,
                            req->base_len, &m, req->seed, req->unfiltered,
                            reason, url_status);
}

enum bc_status bc_frontier_add(struct bc_frontier *f, const char *href,
                               size_t href_len, const char *base,
                               size_t base_len, unsigned depth,
                               enum bc_frontier_reason *reason,
                               enum bc_status *url_status)
{
    struct bc_frontier_request req = {.href = href,
                                      .href_len = href_len,
                                      .base = base,
                                      .base_len = base_len,
                                      .depth = depth};
    return bc_frontier_add_request(f, &req, reason, url_status);
}

enum bc_status bc_frontier_add_payload(struct bc_frontier *f, const char *href,
                                       size_t href_len, const char *base,
                                       size_t base_len, unsigned depth,
                                       const void *payload, size_t payload_len,
                                       enum bc_frontier_reason *reason,
                                       enum bc_status *url_status)
{
    struct bc_frontier_request req = {.href = href,
                                      .href_len = href_len,
                                      .base = base,
                                      .base_len = base_len,
                                      .depth = depth,
                                      .payload = payload,
                                      .payload_len = payload_len};
    return bc_frontier_add_request(f, &req, reason, url_status);
}

/* The referrer that the URLs admitted from a FETCH job's page share: its
 * URL, copied once (frontier.c: REFERRERS). BC_ERR_NOMEM is counted as an
 * add refused for want of memory, as bc_fr_add_common() would. */
static enum bc_status page_referrer(struct bc_frontier *f,
                                    const struct bc_frontier_job *job,
                                    enum bc_frontier_reason *reason,
                                    struct referrer **out)
{
    struct job_url *u = job_url_of(job->url);
    if (!u->as_referrer) {
        u->as_referrer = bc_fr_referrer_new(u->text, u->len);
        if (!u->as_referrer) {
            f->totals.added++;
            f->totals.reasons[BC_ADMIT_NOMEM]++;
            *reason = BC_ADMIT_NOMEM;
            return BC_ERR_NOMEM;
        }
        u->as_referrer->refs = 1; /* the job's */
    }
    *out = u->as_referrer;
    return BC_OK;
}

/* A job of which a page's links may be added: FETCH, its url valid. */
static bool link_job_ok(const struct bc_frontier *f,
                        const struct bc_frontier_job *job,
                        const enum bc_frontier_reason *reason)
{
    return f && job && reason && job->action == BC_FRONTIER_FETCH && job->url;
}

enum bc_status bc_frontier_add_link(struct bc_frontier *f,
                                    const struct bc_frontier_job *job,
                                    const char *href, size_t href_len,
                                    const char *base, size_t base_len,
                                    enum bc_frontier_reason *reason,
                                    enum bc_status *url_status)
{
    if (!link_job_ok(f, job, reason))
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {job->depth + 1, 0, 0, 0, NULL, NULL, 0, NULL};
    if (f->store_status == BC_OK) {
        enum bc_status st = page_referrer(f, job, reason, &m.ref);
        if (st != BC_OK)
            return st;
    }
    return bc_fr_add_common(f, href, href_len, base, base_len, &m, false, false,
                            reason, url_status);
}

enum bc_status bc_frontier_add_redirect(struct bc_frontier *f,
                                        const struct bc_frontier_job *job,
                                        const char *location,
                                        size_t location_len, const char *base,
                                        size_t base_len,
                                        enum bc_frontier_reason *reason,
                                        enum bc_status *url_status)
{
    if (!link_job_ok(f, job, reason) || !base)
        return BC_ERR_INVALID_ARG;
    struct entry_meta m = {job->depth, job->redirects + 1, 0, 0, NULL, NULL, 0,
                           NULL};
    if (f->store_status == BC_OK) {
        enum bc_status st = page_referrer(f, job, reason, &m.ref);
        if (st != BC_OK)
            return st;
    }
    return bc_fr_add_common(f, location, location_len, base, base_len, &m,
                            false, false, reason, url_status);
}

/* The shared referrer for a referrer given as text (NULL: none): the
 * last one if it is the same, else a new one, kept as the last. Returns
 * false, counting the URL as refused for memory, when none could be
 * made. */
bool bc_fr_text_referrer(struct bc_frontier *f, const char *referrer,
                         size_t referrer_len, struct entry_meta *m,
                         enum bc_frontier_reason *reason)
{
    if (!referrer || f->store_status != BC_OK)
        return true;
    struct referrer *r = f->last_referrer;
    if (!(r && r->len == referrer_len &&
          memcmp(r->text, referrer, referrer_len) == 0)) {
        r = bc_fr_referrer_new(referrer, referrer_len);
        if (!r) {
            f->totals.added++;
            f->totals.reasons[BC_ADMIT_NOMEM]++;
            *reason = BC_ADMIT_NOMEM;
            return false;
        }
        r->refs = 1; /* the frontier's, until another referrer comes */
        bc_fr_referrer_release(f->last_referrer);
        f->last_referrer = r;
    }
    m->ref = r;
    return true;
}

enum bc_status bc_frontier_add_with_referrer(
    struct bc_frontier *f, const char *href, size_t href_len, const char *base,
    size_t base_len, unsigned depth, const char *referrer, size_t referrer_len,
    enum bc_frontier_reason *reason, enum bc_status *url_status)
{
    struct bc_frontier_request req = {.href = href,
                                      .href_len = href_len,
                                      .base = base,
                                      .base_len = base_len,
                                      .depth = depth,
                                      .referrer = referrer,
                                      .referrer_len = referrer_len};
    return bc_frontier_add_request(f, &req, reason, url_status);
}

enum bc_status bc_frontier_add_routed(struct bc_frontier *f, const char *url,
                                      size_t len, unsigned depth,
                                      unsigned redirects, const char *referrer,
                                      size_t referrer_len,
                                      enum bc_frontier_reason *reason,
                                      enum bc_status *url_status)
{
    struct bc_frontier_request req = {.href = url,
                                      .href_len = len,
                                      .depth = depth,
                                      .redirects = redirects,
                                      .referrer = referrer,
                                      .referrer_len = referrer_len};
    return bc_frontier_add_request(f, &req, reason, url_status);
}

enum bc_status bc_frontier_add_seed(struct bc_frontier *f, const char *url,
                                    size_t len, enum bc_frontier_reason *reason,
                                    enum bc_status *url_status)
{
    struct bc_frontier_request req = {
        .href = url, .href_len = len, .seed = true};
    return bc_frontier_add_request(f, &req, reason, url_status);
}
