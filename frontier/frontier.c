/*
 * frontier.c - the crawl frontier: per-host queues, politeness, hand-out.
 *
 * THE PROBLEM
 * A crawler discovers links far faster than it may fetch them: a page has
 * ~50 links, and a polite crawler asks each server for at most one page
 * every second or so. The frontier holds everything discovered and not yet
 * fetched, and answers one question quickly and fairly, millions of times:
 * "which URL may I fetch now without hammering anyone?"
 *
 * THE IDEA (Mercator: Heydon and Najork, WWW 1999; Najork and Heydon 2001)
 * Two tiers of queues. URLs wait in one FIFO queue per host - here per
 * origin, scheme + host + port, which is what a politeness rule protects.
 * The hosts that have work wait in a min-heap ordered by the time each may
 * next be contacted:
 *
 *                 heap of hosts by next contact time
 *                 [ b.example @ 1200 ] [ a.example @ 1350 ] [ c @ 2000 ]
 *                        |                    |                  |
 *     host queues:   b: /x /y /z          a: /1 /2           c: /q
 *
 * next(now) looks at the heap's top: if its time has come, the host hands
 * out the head of its queue and leaves the heap until its transfer is done
 * (per_host_concurrency = 1) or gets a later time; if not, the caller waits
 * until that time. done() puts the host back with its next contact time:
 *
 *     next contact = now + max(min_delay, Crawl-delay (capped),
 *                              response_factor x last response time)
 *
 * and a 429 or 503 with Retry-After blocks the host until then. Both
 * operations are O(log hosts), whatever the number of queued URLs.
 *
 * TRANSIENT FAULTS (docs/DESIGN.md 3.4)
 * The caller classes each outcome (bc_frontier_outcome.fault). A URL
 * whose fetch failed with a transient fault (refused, reset, a timeout,
 * 500, 503, ...) is queued again at its host's tail, at most max_retries
 * times; the n-th retry (n = 1, 2, ...) is due
 *
 *     retry_delay_ms x 2^(n-1) x (1 + retry_jitter x (2u - 1)),  u in [0, 1)
 *
 * after the failure (u from a splitmix64 seeded by the configuration),
 * or after a 429/503's Retry-After if that is longer; and, as Heritrix
 * "snoozes" a queue, the whole host waits until then. One retry too many
 * and the fault is the URL's outcome ("retries exhausted").
 *
 * Each host also keeps a circuit breaker (Nygard, "Release It!", 2007):
 * host_failures transient faults in a row OPEN it, and nothing goes to
 * the host for an open period; then it is HALF-OPEN: one request, the
 * probe; success CLOSES it, a failure opens it again for twice as long:
 *
 *     open period k (k = 1, 2, ...) = min(host_backoff_ms x 2^(k-1),
 *                                         host_backoff_max_ms)
 *
 *      CLOSED --(host_failures faults in a row)--> OPEN --(period over)-->
 *      HALF-OPEN --(success)--> CLOSED;  HALF-OPEN --(fault)--> OPEN (x2)
 *
 * so with the defaults (5 faults, 10 s doubling to 10 min) a dead host
 * costs a request every few minutes, not one per queued URL, and a host
 * back after a 5-second outage loses nothing but an open period.
 *
 * A CRAWL ALWAYS ENDS
 * An unreachable robots.txt is retried with exponential backoff: the n-th
 * retry (n = 1, 2, ...) comes robots_retry_ms x 2^(n-1) after the failure
 * before it, so with the defaults (10 s, 3 retries) a dead host is given
 * up 10 + 20 + 40 = 70 s after its first failure. A given-up host's queue
 * drains as DROP jobs (host_given_up), and so do the URLs admitted for it
 * later (queued first, so that a store keeps them among the URLs lost to
 * transient faults, for a later retry), so next() reaches DONE. A host
 * whose pages keep failing is given up the same way, as
 * down, at its first transient fault host_give_up_ms (1 h) or more after
 * its run of faults began: its queue drains as DROP jobs (host_down), and
 * so do the URLs admitted for it later (queued first, so that a store
 * keeps them for a later retry). Two more chains that would never end are
 * cut: a redirect chain is followed for at most max_redirects hops (the
 * hop count is stored with the queued URL), and a URL is retried after a
 * transient fault at most max_retries times (the count is stored with the
 * queued URL too). A job given back after a local fault
 * (bc_frontier_giveback(): ours, not the host's) is queued again as if it
 * had never been handed out: no retry, no fault counted.
 *
 * MEMORY
 * A host queue is a list of byte chunks. An entry is a 2-byte length, a
 * 2-byte depth, a byte of redirect hops, a byte of retries, an
 * 8-byte pointer to its referrer and the URL bytes without a NUL: a
 * queued URL costs its length + 14 bytes, plus its share of the slack of
 * its host's chunks (an entry never straddles two). With a store
 * (frontier_store.h: PERSISTENCE) an entry also holds the store's 8-byte id,
 * and a host keeps only a window of its queue in chunks of at most 512
 * bytes; the rest is the store's.
 *
 * A host's first chunk is 256 bytes (most hosts queue a few URLs); each
 * later one is a quarter of the bytes of the host's chunks so far, Q_b,
 * kept within [512 bytes, 64 KiB] (or the entry, if longer). Chunks that
 * doubled cost up to 2x past a boundary: 256 + ... + 32 KiB = 65,280
 * bytes hold 971 entries of 67 bytes (53-byte URLs), the 972nd took a
 * 64 KiB chunk more, and 1,000 cost 131 bytes each where 971 took 67.4.
 * With a quarter the worst case is 5/4. For a queue only pushed to,
 * with entries of at most e bytes (B in all) in k chunks with a header
 * of hc bytes (24 on LP64): every chunk before the newest is full but for
 * a tail shorter than an entry, so Q_b <= B' = B + (k - 1)(hc + e - 1);
 * the newest adds at most max(512, Q_b / 4) + hc (or one entry + hc,
 * which B counts), hence
 *
 *     Q <= max(B' + 512, 5/4 B') + hc.
 *
 * k grows as the log of Q: at most 5 chunks are made while Q_b < 2048
 * (each adds 512 + hc or more), each later one multiplies Q by 5/4 or
 * more up to 2^18 bytes, and past that each adds 64 KiB:
 *
 *     k <= 5 + [Q >= 2048] (1 + floor(log_{5/4}(min(Q, 2^18) / 2048)))
 *            + max(0, Q - 2^18) / 65536.
 *
 * So Q/B tends to 5/4 at worst (1.34 at most from 100 to 6,000 URLs of
 * 53 bytes at a host; test_queue_memory checks both bounds after every
 * push). The cost: about twice as many chunks as doubling (20 for 1,000
 * such URLs, not 9), one malloc() each, still O(1) per push with no
 * copying. Popping frees a chunk when its last entry leaves (a host holds
 * at most one partly read chunk, at its head) and the only chunk of an
 * emptied queue is kept for reuse; as Q_b counts the chunks held now, a
 * queue that drained grows again from the one chunk it kept.
 *
 * REFERRERS
 * Each queued URL remembers the page it was found on (or that redirected
 * to it), so that the crawler can say where a URL came from. A page's
 * links all share one copy of its URL, refcounted: made by the page's
 * first bc_frontier_add_link(), one reference per queued link, and one
 * for the job that fetched the page while its URL is valid; freed when
 * the last goes. So a referrer costs 8 bytes per queued URL plus one URL
 * per page with links still queued, where a copy per link would cost the
 * URL's length again (about 60 bytes) for every queued URL. A URL handed
 * out takes its entry's reference with it (job.referrer points into it).
 * bc_frontier_add_with_referrer() (a referrer that is no job's, e.g. a
 * sitemap) keeps its last referrer and shares it with the next call that
 * names the same one.
 *
 * PAYLOADS
 * A caller may queue bytes of its own beside a URL
 * (bc_frontier_add_payload(): a serialized request, say) and get them
 * back with the job. Most URLs carry none, and they must not pay for the
 * few that do: the payload lives in a box of its own (struct payload,
 * one malloc() of 16 + len bytes), and the entry's pointer slot, which
 * otherwise holds the referrer, points to the box with its low bit set
 * (malloc() returns pointers aligned to 8 or more, so a real referrer's
 * low bit is 0); the box holds the referrer instead. So an entry keeps
 * its size, a URL without a payload costs the same bytes and a few
 * instructions more (a test of a bit at push and pop, two more job
 * fields: docs/DESIGN.md 3.3 has the count), and the box moves with the
 * URL from queue to job (job.payload points into it) and back on a retry
 * or a give-back, never copied.
 *
 * THE HOSTS' TABLE
 * Every admission looks its origin up among the hosts (uthash, by the
 * origin's bytes), and a crawl of many hosts finds each one cold: with
 * 10^5 hosts admitted round-robin (bench_state) every entry of a bucket
 * chain it walks is a cache miss. uthash doubles its buckets only when
 * one chain reaches 10 entries, which left 10^5 hosts on 32,768 buckets
 * (3.05 a bucket) and walked 2.53 entries per lookup (counted for the
 * origins of bench_urls.h). bc_fr_host_get() doubles the table as soon
 * as the hosts outnumber the buckets: 131,072 buckets for 10^5 hosts,
 * 1.38 entries walked, for 16 to 32 bytes of buckets a host. A host's
 * origin lies right after its hash handle, at the end of the host, so
 * that the key compare of the entry found reads the cache line of the
 * handle's hash (or the next) instead of missing again. bench_state at
 * 10^6 URLs over 10^5 hosts: 0.87x the CPU per add
 * (bench/results/state-analysis.md).
 *
 * TIME
 * The caller passes now_ms to every call that needs time. The frontier
 * never reads a clock and never sleeps: the tests drive it with a fake
 * clock, and a crawler can replay a crawl.
 *
 * THE FILES
 * This file hands work out and takes it back; the frontier's other jobs
 * live beside it, around frontier_int.h (the layouts they share):
 * admission in frontier_admit.c, robots.txt per host (its state machine
 * drawn) in frontier_robots.c, sitemap jobs in frontier_sitemap.c, and
 * the store and the restore calls in frontier_store.c.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/version.h"
#include "frontier_int.h"

/* ---- names ---------------------------------------------------------- */

/* Each table is made from its enum's list in frontier.h, so it has a name
 * for every value, in the enum's order (the static_asserts check the
 * count where the enum has one). */
#define NAME_OF(constant, name) name,

static const char *const fault_names[] = {BC_FAULT_LIST(NAME_OF)};
static const char *const reason_names[] = {BC_FRONTIER_REASON_LIST(NAME_OF)};
static const char *const sitemap_reason_names[] = {
    BC_FRONTIER_SITEMAP_REASON_LIST(NAME_OF)};

_Static_assert(sizeof(reason_names) / sizeof(reason_names[0]) ==
                   BC_ADMIT_REASON_COUNT,
               "a name for every enum bc_frontier_reason value");
_Static_assert(sizeof(sitemap_reason_names) / sizeof(sitemap_reason_names[0]) ==
                   BC_FRONTIER_SITEMAP_REASON_COUNT,
               "a name for every enum bc_frontier_sitemap_reason value");

const char *bc_fault_name(enum bc_fault fault)
{
    size_t i = (size_t)fault;
    return i < sizeof(fault_names) / sizeof(fault_names[0]) ? fault_names[i]
                                                            : "unknown";
}

const char *bc_frontier_reason_name(enum bc_frontier_reason reason)
{
    size_t i = (size_t)reason;
    return i < BC_ADMIT_REASON_COUNT ? reason_names[i] : "unknown";
}

const char *
bc_frontier_sitemap_reason_name(enum bc_frontier_sitemap_reason reason)
{
    size_t i = (size_t)reason;
    return i < BC_FRONTIER_SITEMAP_REASON_COUNT ? sitemap_reason_names[i]
                                                : "unknown";
}

void bc_frontier_config_init(struct bc_frontier_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof(*c));
    c->user_agent = "bloomcrawl/" BC_VERSION_STRING;
    c->per_host_concurrency = 1;
    c->min_delay_ms = BC_FRONTIER_DEFAULT_DELAY_MS;
    c->max_crawl_delay_ms = BC_FRONTIER_DEFAULT_MAX_CRAWL_DELAY_MS;
    c->response_factor = 0.0;
    c->backoff_ms = BC_FRONTIER_DEFAULT_BACKOFF_MS;
    c->max_retry_after_ms = BC_FRONTIER_DEFAULT_MAX_RETRY_AFTER_MS;
    c->max_retries = BC_FRONTIER_DEFAULT_MAX_RETRIES;
    c->retry_delay_ms = BC_FRONTIER_DEFAULT_RETRY_DELAY_MS;
    c->retry_jitter = BC_FRONTIER_DEFAULT_RETRY_JITTER;
    c->host_failures = BC_FRONTIER_DEFAULT_HOST_FAILURES;
    c->host_backoff_ms = BC_FRONTIER_DEFAULT_HOST_BACKOFF_MS;
    c->host_backoff_max_ms = BC_FRONTIER_DEFAULT_HOST_BACKOFF_MAX_MS;
    c->host_give_up_ms = BC_FRONTIER_DEFAULT_HOST_GIVE_UP_MS;
    c->obey_robots = true;
    c->robots_ttl_ms = BC_FRONTIER_DEFAULT_ROBOTS_TTL_MS;
    c->robots_retry_ms = BC_FRONTIER_DEFAULT_ROBOTS_RETRY_MS;
    c->robots_retries = BC_FRONTIER_DEFAULT_ROBOTS_RETRIES;
    c->scope = BC_SCOPE_HOST;
    c->max_depth = BC_FRONTIER_DEFAULT_MAX_DEPTH;
    c->max_redirects = BC_FRONTIER_DEFAULT_MAX_REDIRECTS;
    c->max_url_len = BC_URL_MAX_LEN_DEFAULT;
    c->max_payload = BC_FRONTIER_DEFAULT_MAX_PAYLOAD;
    c->max_segments = BC_FRONTIER_DEFAULT_MAX_SEGMENTS;
    bc_seen_config_init(&c->seen);
}

static bool heap_less(const struct host *a, const struct host *b)
{
    return a->next_ms < b->next_ms;
}

static void heap_set(struct bc_frontier *f, size_t i, struct host *h)
{
    f->heap[i] = h;
    h->heap_pos = i;
}

static void heap_up(struct bc_frontier *f, size_t i)
{
    struct host *h = f->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!heap_less(h, f->heap[parent]))
            break;
        heap_set(f, i, f->heap[parent]);
        i = parent;
    }
    heap_set(f, i, h);
}

static void heap_down(struct bc_frontier *f, size_t i)
{
    struct host *h = f->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= f->heap_len)
            break;
        if (child + 1 < f->heap_len &&
            heap_less(f->heap[child + 1], f->heap[child]))
            child++;
        if (!heap_less(f->heap[child], h))
            break;
        heap_set(f, i, f->heap[child]);
        i = child;
    }
    heap_set(f, i, h);
}

/* Room for one more host in the heap (doubling). */
static bool heap_reserve(struct bc_frontier *f, size_t n)
{
    if (n <= f->heap_cap)
        return true;
    size_t cap = f->heap_cap ? 2 * f->heap_cap : 64;
    struct host **heap = realloc(f->heap, cap * sizeof(*heap));
    if (!heap)
        return false;
    f->heap = heap;
    f->heap_cap = cap;
    return true;
}

static bool heap_push(struct bc_frontier *f, struct host *h)
{
    if (!heap_reserve(f, f->heap_len + 1))
        return false;
    heap_set(f, f->heap_len++, h);
    heap_up(f, f->heap_len - 1);
    return true;
}

static void heap_remove(struct bc_frontier *f, struct host *h)
{
    size_t i = h->heap_pos;
    struct host *last = f->heap[--f->heap_len];
    h->heap_pos = NOT_IN_HEAP;
    if (last == h)
        return;
    heap_set(f, i, last);
    heap_up(f, i);
    heap_down(f, last->heap_pos);
}

/* A host belongs in the heap when it has queued URLs, a free transfer slot
 * and no robots.txt fetch out. Call after any change to those or to
 * next_ms. The heap's capacity is reserved when a host is created, so the
 * push cannot fail. */
void bc_fr_host_schedule(struct bc_frontier *f, struct host *h)
{
    bool wanted = (h->queued > 0 || h->sm_head) &&
                  h->in_flight < f->cfg.per_host_concurrency &&
                  h->robots_state != ROBOTS_FETCHING &&
                  !(h->circuit == CIRCUIT_HALF_OPEN && h->in_flight > 0);
    if (wanted && h->heap_pos == NOT_IN_HEAP) {
        (void)heap_push(f, h);
    } else if (!wanted && h->heap_pos != NOT_IN_HEAP) {
        heap_remove(f, h);
    } else if (wanted) {
        heap_up(f, h->heap_pos);
        heap_down(f, h->heap_pos);
    }
}

/* A new referrer of len bytes, no reference yet; NULL when out of
 * memory. */
struct referrer *bc_fr_referrer_new(const char *text, size_t len)
{
    struct referrer *r = malloc(sizeof(*r) + len + 1);
    if (!r)
        return NULL;
    r->refs = 0;
    r->len = len;
    memcpy(r->text, text, len);
    r->text[len] = '\0';
    return r;
}

/* Drop one reference; the last frees it. NULL is a no-op. */
void bc_fr_referrer_release(struct referrer *r)
{
    if (r && --r->refs == 0)
        free(r);
}

/* A payload box holding a copy of len bytes at data, no referrer yet;
 * NULL when out of memory. */
struct payload *bc_fr_payload_new(const void *data, size_t len)
{
    struct payload *pl = malloc(sizeof(*pl) + len);
    if (!pl)
        return NULL;
    pl->ref = NULL;
    pl->len = len;
    memcpy(pl->data, data, len);
    return pl;
}

/* The entry's pointer slot (PAYLOADS): its referrer, or its payload box
 * tagged with the low bit. */
static void slot_write(unsigned char *p, struct referrer *ref,
                       struct payload *pl)
{
    uintptr_t v = (uintptr_t)ref;
    if (pl) {
        pl->ref = ref;
        v = (uintptr_t)pl | 1u;
    }
    memcpy(p + ENTRY_REF_AT, &v, sizeof(v));
}

static void slot_read(const unsigned char *p, struct referrer **ref,
                      struct payload **pl)
{
    uintptr_t v;
    memcpy(&v, p + ENTRY_REF_AT, sizeof(v));
    if (v & 1u) {
        *pl = (struct payload *)(v & ~(uintptr_t)1u);
        *ref = (*pl)->ref;
        (*pl)->ref = NULL;
    } else {
        *pl = NULL;
        *ref = (struct referrer *)v;
    }
}

/* Make room for an entry of len URL bytes at the host's tail. */
bool bc_fr_queue_reserve(struct bc_frontier *f, struct host *h, size_t len)
{
    size_t need = f->entry_header + len;
    if (h->last && h->last->cap - h->last->tail >= need)
        return true;
    /* The first chunk CHUNK_FIRST, the next ones a quarter of the host's
     * queue bytes within [CHUNK_NEXT, max] (MEMORY). With a store a host
     * holds a window of a few URLs: its chunks stay small. */
    size_t max = f->store.queued ? CHUNK_MAX_WINDOW : CHUNK_MAX;
    size_t cap = h->queue_bytes / 4;
    cap = !h->last ? CHUNK_FIRST : cap < CHUNK_NEXT ? CHUNK_NEXT : cap;
    if (cap > max)
        cap = max;
    if (cap < need)
        cap = need;
    struct chunk *c = malloc(sizeof(*c) + cap);
    if (!c)
        return false;
    c->next = NULL;
    c->cap = (uint32_t)cap;
    c->head = c->tail = 0;
    if (h->last)
        h->last->next = c;
    else
        h->first = c;
    h->last = c;
    h->queue_bytes += sizeof(*c) + cap;
    f->queue_bytes += sizeof(*c) + cap;
    return true;
}

/* Append an entry; bc_fr_queue_reserve() must have made room. */
void bc_fr_queue_push(struct bc_frontier *f, struct host *h, const char *url,
                      size_t len, const struct entry_meta *m)
{
    struct chunk *c = h->last;
    unsigned char *p = c->data + c->tail;
    p[0] = (unsigned char)(len & 0xff);
    p[1] = (unsigned char)(len >> 8);
    p[2] = (unsigned char)(m->depth & 0xff);
    p[3] = (unsigned char)(m->depth >> 8);
    p[4] = (unsigned char)m->redirects;
    p[5] = (unsigned char)m->retries;
    slot_write(p, m->ref, m->pl);
    if (m->ref)
        m->ref->refs++;
    if (f->entry_header > ENTRY_HEADER)
        memcpy(p + ENTRY_HEADER, &m->id, ENTRY_ID);
    memcpy(p + f->entry_header, url, len);
    c->tail += (uint32_t)(f->entry_header + len);
    h->queued++;
    f->queued++;
}

/* The head entry, left in place: its URL bytes (not NUL-terminated) and
 * their length in *len. The queue must not be empty. */
static const char *queue_peek(const struct bc_frontier *f, const struct host *h,
                              size_t *len)
{
    const struct chunk *c = h->first;
    const unsigned char *p = c->data + c->head;
    *len = (size_t)p[0] | (size_t)p[1] << 8;
    return (const char *)p + f->entry_header;
}

/* Take the head entry into buf (NUL-terminated); returns its length. The
 * caller owns m->ref's reference and m->pl. */
static size_t queue_pop(struct bc_frontier *f, struct host *h, char *buf,
                        struct entry_meta *m)
{
    struct chunk *c = h->first;
    const unsigned char *p = c->data + c->head;
    size_t len = (size_t)p[0] | (size_t)p[1] << 8;
    m->depth = (unsigned)p[2] | (unsigned)p[3] << 8;
    m->redirects = p[4];
    m->retries = p[5];
    slot_read(p, &m->ref, &m->pl); /* m->payload is not set: m->pl says */
    m->id = 0;
    if (f->entry_header > ENTRY_HEADER)
        memcpy(&m->id, p + ENTRY_HEADER, ENTRY_ID);
    memcpy(buf, p + f->entry_header, len);
    buf[len] = '\0';
    c->head += (uint32_t)(f->entry_header + len);
    h->queued--;
    f->queued--;
    if (c->head == c->tail) {
        /* An empty chunk: free it, or rewind the only one. */
        if (c->next) {
            h->first = c->next;
            h->queue_bytes -= sizeof(*c) + c->cap;
            f->queue_bytes -= sizeof(*c) + c->cap;
            free(c);
        } else {
            c->head = c->tail = 0;
        }
    }
    return len;
}

/* Queue a URL at the host's tail: into memory (bc_fr_queue_reserve() made
 * room), or, with a store, counted as spilled: the store holds it. */
void bc_fr_enqueue(struct bc_frontier *f, struct host *h, const char *url,
                   size_t len, const struct entry_meta *m, bool to_memory)
{
    if (to_memory) {
        bc_fr_queue_push(f, h, url, len, m);
    } else {
        h->spilled++;
        h->queued++;
        f->queued++;
    }
}

static void host_free(const struct bc_frontier *f, struct host *h)
{
    struct chunk *c = h->first;
    while (c) {
        struct chunk *next = c->next;
        /* The entries' references to their referrers. */
        for (uint32_t at = c->head; at < c->tail;) {
            const unsigned char *p = c->data + at;
            struct referrer *r;
            struct payload *pl;
            slot_read(p, &r, &pl);
            bc_fr_referrer_release(r);
            free(pl);
            at += (uint32_t)(f->entry_header +
                             ((size_t)p[0] | (size_t)p[1] << 8));
        }
        free(c);
        c = next;
    }
    while (h->sm_head) {
        struct sitemap_item *it = h->sm_head;
        h->sm_head = it->next;
        free(it);
    }
    bc_robots_free(h->robots);
    free(h->robots_url);
    free(h);
}

struct host *bc_fr_host_find(struct bc_frontier *f, const char *origin,
                             size_t len)
{
    struct host *h;
    HASH_FIND(hh, f->hosts, origin, len, h);
    return h;
}

/* The host of an origin, created when new; NULL when out of memory. */
struct host *bc_fr_host_get(struct bc_frontier *f, const char *origin,
                            size_t len)
{
    struct host *h = bc_fr_host_find(f, origin, len);
    if (h)
        return h;
    if (!heap_reserve(f, f->host_count + 1)) /* its heap slot, now */
        return NULL;
    h = calloc(1, sizeof(*h) + len + 1);
    if (!h)
        return NULL;
    memcpy(h->origin, origin, len);
    h->origin_len = len;
    h->heap_pos = NOT_IN_HEAP;
    HASH_ADD_KEYPTR(hh, f->hosts, h->origin, len, h);
    if (h->hh.tbl == NULL) { /* uthash could not allocate its table */
        free(h);
        return NULL;
    }
    f->host_count++;
    /* At most a host per bucket on average (THE HOSTS' TABLE). Out of
     * memory, the table keeps its buckets: only its chains are longer. */
    UT_hash_table *tbl = f->hosts->hh.tbl;
    if (tbl->num_items > tbl->num_buckets && !tbl->noexpand) {
        int oomed = 0;
        HASH_EXPAND_BUCKETS(hh, tbl, oomed);
        (void)oomed;
    }
    return h;
}

enum bc_status bc_frontier_create(const struct bc_frontier_config *config,
                                  struct bc_frontier **out)
{
    if (!config || !out || config->per_host_concurrency == 0 ||
        config->max_url_len == 0 ||
        config->max_url_len > BC_FRONTIER_MAX_URL_LEN ||
        config->max_payload > BC_FRONTIER_MAX_PAYLOAD ||
        config->max_depth > 65535 || config->max_redirects > 255 ||
        config->max_retries > 255 || !config->user_agent ||
        !(config->retry_jitter >= 0.0 && config->retry_jitter <= 1.0) ||
        config->scope > BC_SCOPE_ANY ||
        (config->partition.owns && !config->partition.route))
        return BC_ERR_INVALID_ARG;
    struct bc_frontier *f = calloc(1, sizeof(*f));
    if (!f)
        return BC_ERR_NOMEM;
    f->cfg = *config;
    f->rng = config->retry_seed;
    f->entry_header = ENTRY_HEADER;
    f->cfg.url_policy.max_len = config->max_url_len;
    size_t cap = config->max_url_len + 1;
    f->user_agent = strdup(config->user_agent);
    f->base_src = malloc(cap);
    f->base_buf = malloc(cap);
    f->url_buf = malloc(cap);
    f->key_buf = malloc(cap);
    f->drop_buf = malloc(cap);
    f->sm_buf = malloc(cap);
    f->sm_base_buf = malloc(cap);
    enum bc_status st = BC_ERR_NOMEM;
    if (!f->user_agent || !f->base_src || !f->base_buf || !f->url_buf ||
        !f->key_buf || !f->drop_buf || !f->sm_buf || !f->sm_base_buf)
        goto out_free;
    if (!f->cfg.sitemaps_per_host)
        f->cfg.sitemaps_per_host = BC_FRONTIER_DEFAULT_SITEMAPS_PER_HOST;
    f->cfg.user_agent = f->user_agent;
    /* ICU costs 0.5-1 us a host; a crawl meets the same hosts again and
     * again. The caller's own cache, if any, is used as it is. */
    if (!f->cfg.url_policy.idn_cache) {
        st = bc_url_idn_cache_create(1024, &f->idn_cache);
        if (st != BC_OK)
            goto out_free;
        f->cfg.url_policy.idn_cache = f->idn_cache;
    }
    st = bc_seen_create(&config->seen, &f->seen);
    if (st != BC_OK)
        goto out_free;
    f->psl = psl_builtin();
    *out = f;
    return BC_OK;

out_free:
    bc_frontier_free(f);
    return st;
}

static void names_free(struct name **set)
{
    struct name *n, *tmp;
    HASH_ITER(hh, *set, n, tmp)
    {
        HASH_DEL(*set, n);
        free(n);
    }
}

static void job_urls_free(struct job_url *u)
{
    while (u) {
        struct job_url *next = u->next;
        bc_fr_referrer_release(u->from);
        bc_fr_referrer_release(u->as_referrer);
        if (u->pl) /* rare: no call to free() for most */
            free(u->pl);
        free(u);
        u = next;
    }
}

void bc_frontier_free(struct bc_frontier *f)
{
    if (!f)
        return;
    job_urls_free(f->jobs_out);
    job_urls_free(f->retired);
    struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        HASH_DEL(f->hosts, h);
        host_free(f, h);
    }
    names_free(&f->scope_hosts);
    names_free(&f->scope_domains);
    names_free(&f->sitemap_seen);
    bc_seen_free(f->seen);
    bc_url_idn_cache_free(f->idn_cache);
    free(f->heap);
    free(f->user_agent);
    free(f->base_src);
    free(f->base_buf);
    free(f->url_buf);
    free(f->key_buf);
    free(f->drop_buf);
    bc_fr_referrer_release(f->last_referrer);
    free(f->sm_buf);
    free(f->sm_base_buf);
    free(f);
}

const char *bc_frontier_last_url(const struct bc_frontier *f, size_t *len)
{
    if (!f || f->last_len == 0)
        return NULL;
    if (len)
        *len = f->last_len;
    return f->url_buf;
}

struct bc_seen *bc_frontier_seen(struct bc_frontier *f)
{
    return f->seen;
}

/* A job URL of len bytes (text[len] for the NUL), on the list of jobs out;
 * NULL when out of memory. */
char *bc_fr_job_url_new(struct bc_frontier *f, size_t len)
{
    struct job_url *u = malloc(sizeof(*u) + len + 1);
    if (!u)
        return NULL;
    u->from = u->as_referrer = NULL;
    u->pl = NULL;
    u->len = len;
    u->prev = NULL;
    u->next = f->jobs_out;
    if (f->jobs_out)
        f->jobs_out->prev = u;
    f->jobs_out = u;
    return u->text;
}

/* The job is done: its URL moves to the retired list, freed by the next
 * bc_frontier_next(). */
static void job_url_retire(struct bc_frontier *f, char *text)
{
    struct job_url *u = job_url_of(text);
    if (u->prev)
        u->prev->next = u->next;
    else
        f->jobs_out = u->next;
    if (u->next)
        u->next->prev = u->prev;
    u->prev = NULL;
    u->next = f->retired;
    f->retired = u;
}

/* Nothing is due at now: *j says WAIT (until the heap's top host is due,
 * or until a transfer in flight is done) or DONE, and true is returned;
 * false when a host is due. */
static bool next_idle(const struct bc_frontier *f, uint64_t now,
                      struct bc_frontier_job *j)
{
    if (f->heap_len == 0) {
        j->action = f->in_flight ? BC_FRONTIER_WAIT : BC_FRONTIER_DONE;
        j->wait_until_ms = UINT64_MAX;
        return true;
    }
    if (f->heap[0]->next_ms > now) {
        j->action = BC_FRONTIER_WAIT;
        j->wait_until_ms = f->heap[0]->next_ms;
        return true;
    }
    return false;
}

/* The window in memory of h is empty: the store pushes the next URLs of
 * the host's queue back (bc_frontier_refill()). BC_OK, or the store's
 * error (sticky; BC_ERR_CORRUPT when it gave back none of the URLs it
 * holds). */
static enum bc_status refill_window(struct bc_frontier *f, struct host *h)
{
    if (h->queued != h->spilled)
        return BC_OK;
    enum bc_status st = f->store.refill(f->store.ctx, f, h->origin,
                                        h->origin_len, 0, f->window);
    if (st == BC_OK && h->queued == h->spilled)
        st = BC_ERR_CORRUPT; /* the store lost URLs it was given */
    if (st != BC_OK)
        f->store_status = st;
    return st;
}

/* Why h's head URL (its length in *len) must be dropped rather than
 * fetched (its host given up, or down, or robots.txt now disallows it),
 * or BC_ADMIT_QUEUED. */
static enum bc_frontier_reason drop_reason(const struct bc_frontier *f,
                                           const struct host *h, size_t *len)
{
    const char *head = queue_peek(f, h, len);
    if (h->robots_state == ROBOTS_GIVEN_UP)
        return BC_ADMIT_HOST_GIVEN_UP;
    if (h->down)
        return BC_ADMIT_HOST_DOWN;
    if (f->cfg.obey_robots && !bc_fr_robots_allows(h, head, *len))
        return BC_ADMIT_ROBOTS;
    return BC_ADMIT_QUEUED;
}

/* Take h's head URL out of its queue as a DROP job *j for why; the
 * store hears of it (and of the host's state that the loss changed). */
static enum bc_status next_drop(struct bc_frontier *f, struct host *h,
                                uint64_t now, enum bc_frontier_reason why,
                                struct bc_frontier_job *j)
{
    struct entry_meta m;
    size_t len = queue_pop(f, h, f->drop_buf, &m);
    bc_fr_referrer_release(m.ref);
    free(m.pl); /* dropped with its URL */
    f->totals.reasons[why]++;
    if (why == BC_ADMIT_HOST_GIVEN_UP)
        h->given_up_lost++;
    else if (why == BC_ADMIT_HOST_DOWN)
        h->down_lost++;
    bc_fr_host_schedule(f, h);
    if (f->store.queued) {
        enum bc_status st =
            f->store.left(f->store.ctx, h->origin, h->origin_len,
                          &h->store_host, m.id, BC_FRONTIER_DROP, why);
        if (st == BC_OK && why == BC_ADMIT_HOST_GIVEN_UP)
            st = bc_fr_store_host(f, h, now, NULL, 0);
        if (st == BC_OK && why == BC_ADMIT_HOST_DOWN)
            st = bc_fr_store_circuit(f, h, now);
        if (st != BC_OK) {
            f->store_status = st;
            return st;
        }
    }
    j->action = BC_FRONTIER_DROP;
    j->reason = why;
    j->url = f->drop_buf;
    j->url_len = len;
    j->origin = h->origin;
    j->origin_len = h->origin_len;
    j->internal.host = NULL;
    return BC_OK;
}

/* Hand h's head URL (len bytes) out as a FETCH job *j: one transfer
 * more in flight, the host's next start a delay away. */
static enum bc_status next_fetch(struct bc_frontier *f, struct host *h,
                                 uint64_t now, size_t len,
                                 struct bc_frontier_job *j)
{
    struct entry_meta m;
    /* Allocated before the URL leaves the queue: out of memory, it stays
     * there and nothing is lost. */
    char *url = bc_fr_job_url_new(f, len);
    if (!url)
        return BC_ERR_NOMEM;
    queue_pop(f, h, url, &m);
    job_url_of(url)->from = m.ref; /* the entry's reference, now the job's */
    job_url_of(url)->pl = m.pl;    /* and its payload */
    h->in_flight++;
    f->in_flight++;
    f->totals.handed_out++;
    if (f->store.queued) {
        enum bc_status st = f->store.left(f->store.ctx, h->origin,
                                          h->origin_len, &h->store_host, m.id,
                                          BC_FRONTIER_FETCH, BC_ADMIT_QUEUED);
        if (st != BC_OK) {
            f->store_status = st;
            return st;
        }
    }
    /* The first request after an open period is the probe. */
    if (h->circuit == CIRCUIT_OPEN)
        h->circuit = CIRCUIT_HALF_OPEN;
    /* With several transfers per host allowed, their starts are still
     * spaced by the delay. */
    h->next_ms = now + base_delay(f, h);
    bc_fr_host_schedule(f, h);
    j->action = BC_FRONTIER_FETCH;
    j->url = j->internal.owned = url;
    j->url_len = len;
    j->depth = m.depth;
    j->redirects = m.redirects;
    j->retries = m.retries;
    j->id = m.id;
    j->referrer = m.ref ? m.ref->text : NULL;
    j->referrer_len = m.ref ? m.ref->len : 0;
    j->payload = m.pl ? m.pl->data : NULL;
    j->payload_len = m.pl ? m.pl->len : 0;
    j->origin = h->origin;
    j->origin_len = h->origin_len;
    return BC_OK;
}

/* One step of bc_frontier_next(): the job of the host due at now, in the
 * order robots.txt, sitemaps, then its URLs (dropped or fetched). *again:
 * a sitemap was dropped, look again. */
static enum bc_status next_job(struct bc_frontier *f, uint64_t now,
                               struct bc_frontier_job *j, bool *again)
{
    if (next_idle(f, now, j))
        return BC_OK;
    struct host *h = f->heap[0];
    j->internal.host = h;
    j->started_ms = now;
    if (robots_needed(f, h, now))
        return bc_fr_robots_next(f, h, j);
    if (h->sm_head) {
        enum bc_status st = bc_fr_sitemap_next(f, h, now, j);
        /* Dropped (robots.txt, or its host given up): look again. */
        *again = st == BC_ERR_NOT_FOUND;
        return st;
    }
    enum bc_status st = refill_window(f, h);
    if (st != BC_OK)
        return st;
    size_t len;
    enum bc_frontier_reason why = drop_reason(f, h, &len);
    if (why != BC_ADMIT_QUEUED)
        return next_drop(f, h, now, why, j);
    return next_fetch(f, h, now, len, j);
}

enum bc_status bc_frontier_next(struct bc_frontier *f, uint64_t now,
                                struct bc_frontier_job *job)
{
    if (!f || !job)
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    /* The URLs of the jobs done since the last call are the caller's no
     * longer. */
    job_urls_free(f->retired);
    f->retired = NULL;
    /* Built in j and copied out on success only: a call that fails
     * leaves *job and the frontier as they were. */
    struct bc_frontier_job j;
    enum bc_status st;
    bool again;
    do {
        memset(&j, 0, sizeof(j));
        again = false;
        st = next_job(f, now, &j, &again);
    } while (again);
    if (st == BC_OK)
        *job = j;
    return st;
}

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): a 64-bit state stepped
 * by a constant, then mixed; any seed is good. u in [0, 1) from its top
 * 53 bits. */
static double rng_unit(struct bc_frontier *f)
{
    uint64_t z = (f->rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* The wait a 429 or 503 asks for: its Retry-After, or the configured
 * backoff without one, at most max_retry_after_ms; 0 for any other
 * answer. */
static uint64_t retry_after_wait(const struct bc_frontier *f,
                                 const struct bc_frontier_outcome *o)
{
    if (o->http_status != 429 && o->http_status != 503)
        return 0;
    uint64_t wait = o->retry_after_ms ? o->retry_after_ms : f->cfg.backoff_ms;
    return wait > f->cfg.max_retry_after_ms ? f->cfg.max_retry_after_ms : wait;
}

/*
 * The wait before retry n + 1 of a URL retried n times so far, after a
 * transient fault answered o:
 *
 *     retry_delay_ms x 2^n x (1 + retry_jitter x (2u - 1)),  u in [0, 1)
 *
 * rounded to the millisecond, so within retry_delay_ms x 2^n x (1 +/-
 * retry_jitter); 2^n stops growing at n = 40. A 429 or 503 asks for
 * Retry-After (backoff_ms without one), capped at max_retry_after_ms: the
 * longer of the two.
 */
uint64_t bc_fr_retry_delay(struct bc_frontier *f, unsigned n,
                           const struct bc_frontier_outcome *o)
{
    double d =
        (double)f->cfg.retry_delay_ms * (double)(1ull << (n < 40 ? n : 40));
    if (f->cfg.retry_jitter > 0.0)
        d *= 1.0 + f->cfg.retry_jitter * (2.0 * rng_unit(f) - 1.0);
    uint64_t delay = d >= 1e15 ? (uint64_t)1e15 : (uint64_t)(d + 0.5);
    uint64_t wait = retry_after_wait(f, o);
    return wait > delay ? wait : delay;
}

/* Give the host up as down at now: its queue drains as DROP jobs at once
 * (no request to the host is involved). */
void bc_fr_host_down(struct host *h, uint64_t now)
{
    h->down = true;
    h->circuit = CIRCUIT_CLOSED;
    h->open_until = 0;
    h->blocked_until = 0;
    h->next_ms = now;
}

/*
 * A transient fault of the host at now: one more in its run; the run's
 * host_failures-th opens the circuit for host_backoff_ms, and a failed
 * probe (half-open) opens it again for twice the last period, at most
 * host_backoff_max_ms:
 *
 *     open period k (k = 1, 2, ...) = min(host_backoff_ms x 2^(k-1),
 *                                         host_backoff_max_ms)
 *
 * A fault host_give_up_ms or more after the run began gives the host up.
 */
void bc_fr_circuit_failure(struct bc_frontier *f, struct host *h, uint64_t now)
{
    if (h->failures == 0)
        h->streak_since = now;
    if (h->failures < UINT32_MAX)
        h->failures++;
    if (f->cfg.host_give_up_ms &&
        now - h->streak_since >= f->cfg.host_give_up_ms) {
        bc_fr_host_down(h, now);
        return;
    }
    if (h->circuit == CIRCUIT_HALF_OPEN ||
        (h->circuit == CIRCUIT_CLOSED && f->cfg.host_failures &&
         h->failures >= f->cfg.host_failures)) {
        uint64_t max = f->cfg.host_backoff_max_ms;
        uint64_t b = h->backoff == 0        ? f->cfg.host_backoff_ms
                     : h->backoff > max / 2 ? max
                                            : 2 * h->backoff;
        h->backoff = b < max ? b : max;
        h->circuit = CIRCUIT_OPEN;
        h->open_until = now + h->backoff;
    }
}

/* Any outcome that is not a transient fault: the run ends, the circuit
 * closes. Returns whether anything changed (for the store). */
bool bc_fr_circuit_success(struct host *h)
{
    if (h->failures == 0 && h->circuit == CIRCUIT_CLOSED && h->backoff == 0)
        return false;
    h->failures = 0;
    h->circuit = CIRCUIT_CLOSED;
    h->backoff = 0;
    h->open_until = 0;
    return true;
}

/* End of any job of a host: slot freed, next contact no sooner than
 * until. */
void bc_fr_release(struct bc_frontier *f, struct bc_frontier_job *job,
                   uint64_t until)
{
    struct host *h = job->internal.host;
    h->in_flight--;
    f->in_flight--;
    if (until > h->next_ms)
        h->next_ms = until;
    /* job->url stays valid until the next bc_frontier_next(). */
    job_url_retire(f, job->internal.owned);
    job->internal.owned = NULL;
    job->internal.host = NULL;
}

/* The delay before the next request to h after one that ended at now
 * with o (frontier.h: bc_frontier_done()); a 429 or 503 also blocks the
 * host until then. */
uint64_t bc_fr_after_request(struct bc_frontier *f, struct host *h,
                             const struct bc_frontier_outcome *o, uint64_t now)
{
    uint64_t delay = base_delay(f, h);
    double by_response = f->cfg.response_factor * (double)o->response_ms;
    if (by_response > (double)delay)
        delay = by_response > 1e15 ? (uint64_t)1e15 : (uint64_t)by_response;
    if (o->http_status == 429 || o->http_status == 503) {
        uint64_t wait = retry_after_wait(f, o);
        if (wait > delay)
            delay = wait;
        h->blocked_until = now + delay;
    }
    return delay;
}

/*
 * Queue the URL of FETCH job (of host h) again at h's tail with retries
 * (it passed admission and the seen-test already): in memory or, with a
 * store, through its queued hook with requeue true (the store gives it a
 * new id). BC_OK, BC_ERR_NOMEM (counted under BC_ADMIT_NOMEM: the URL is
 * lost, the job is done) or the store's error (sticky).
 */
static enum bc_status requeue(struct bc_frontier *f, struct host *h,
                              const struct bc_frontier_job *job,
                              unsigned retries)
{
    struct job_url *u = job_url_of(job->internal.owned);
    struct entry_meta m = {job->depth, job->redirects, retries, job->id,
                           u->from,    NULL,           0,       NULL};
    if (u->pl) {
        m.payload = u->pl->data;
        m.payload_len = u->pl->len;
    }
    bool to_memory = in_memory_next(f, h);
    if (to_memory && !bc_fr_queue_reserve(f, h, job->url_len)) {
        f->totals.reasons[BC_ADMIT_NOMEM]++;
        return BC_ERR_NOMEM;
    }
    if (f->store.queued) {
        struct bc_frontier_entry e = {
            job->url, job->url_len, m.depth, m.redirects, m.retries,
            job->id,  NULL,         0,       NULL,        0};
        if (m.ref) {
            e.referrer = m.ref->text;
            e.referrer_len = m.ref->len;
        }
        e.payload = m.payload;
        e.payload_len = m.payload_len;
        enum bc_status st =
            f->store.queued(f->store.ctx, h->origin, h->origin_len,
                            &h->store_host, &e, true, &m.id);
        if (st != BC_OK) {
            f->store_status = st;
            return st;
        }
    }
    if (to_memory) { /* the box goes back to the queue with its URL */
        m.pl = u->pl;
        u->pl = NULL;
    }
    bc_fr_enqueue(f, h, job->url, job->url_len, &m, to_memory);
    return BC_OK;
}

enum bc_status bc_frontier_done(struct bc_frontier *f,
                                struct bc_frontier_job *job,
                                const struct bc_frontier_outcome *o,
                                uint64_t now)
{
    if (!f || !job || !o || job->action != BC_FRONTIER_FETCH ||
        !job->internal.host)
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->internal.host;
    enum bc_status result = BC_OK;
    uint64_t until = now + bc_fr_after_request(f, h, o, now);
    bool changed = false;
    job->requeued = false;
    job->retry_at_ms = 0;
    if (o->fault == BC_FAULT_TRANSIENT) {
        bc_fr_circuit_failure(f, h, now);
        changed = true;
        if (h->down) {
            /* Final: lost with the host (a store keeps it, as the
             * caller's record of a transient fault). */
            f->totals.reasons[BC_ADMIT_HOST_DOWN]++;
            h->down_lost++;
            until = now;
        } else if (job->retries < f->cfg.max_retries && job->url) {
            uint64_t at = now + bc_fr_retry_delay(f, job->retries, o);
            result = requeue(f, h, job, job->retries + 1);
            if (result == BC_OK) {
                f->totals.retried++;
                job->requeued = true;
                job->retry_at_ms = at;
                /* The host waits for the retry (Heritrix's snooze). */
                if (at > h->blocked_until)
                    h->blocked_until = at;
                if (at > until)
                    until = at;
            }
        } else {
            f->totals.retries_exhausted++;
            h->exhausted++;
        }
        if (h->circuit == CIRCUIT_OPEN && h->open_until > until)
            until = h->open_until;
    } else if (o->fault != BC_FAULT_LOCAL) {
        changed = bc_fr_circuit_success(h);
    }
    bc_fr_release(f, job, until);
    bc_fr_host_schedule(f, h);
    if (changed) {
        enum bc_status st = bc_fr_store_circuit(f, h, now);
        if (st != BC_OK)
            result = st;
    }
    return result;
}

enum bc_status bc_frontier_giveback(struct bc_frontier *f,
                                    struct bc_frontier_job *job, uint64_t now)
{
    if (!f || !job || !job->internal.host || !job->internal.owned ||
        (job->action != BC_FRONTIER_FETCH &&
         job->action != BC_FRONTIER_FETCH_ROBOTS &&
         job->action != BC_FRONTIER_FETCH_SITEMAP))
        return BC_ERR_INVALID_ARG;
    if (f->store_status != BC_OK)
        return f->store_status;
    struct host *h = job->internal.host;
    enum bc_status result = BC_OK;
    switch (job->action) {
    case BC_FRONTIER_FETCH:
        result = requeue(f, h, job, job->retries);
        break;
    case BC_FRONTIER_FETCH_ROBOTS:
        /* Asked for again by the next next(): the state it had before it
         * was handed out (unknown, expired, or unreachable with a retry
         * due), and no failure counted. */
        h->robots_state = h->robots_before;
        break;
    case BC_FRONTIER_FETCH_SITEMAP:
        result = bc_fr_sitemap_giveback(f, h, job);
        break;
    case BC_FRONTIER_DROP:
    case BC_FRONTIER_WAIT:
    case BC_FRONTIER_DONE:
        break;
    }
    if (result == BC_OK)
        f->totals.given_back++;
    /* A probe given back was no probe: the next request is. */
    if (h->circuit == CIRCUIT_HALF_OPEN)
        h->circuit = CIRCUIT_OPEN;
    /* Not a request to the host: the delay next() set for it (starts are
     * spaced by the delay) is taken back, unless a later job of the host
     * started since. */
    if (job->action != BC_FRONTIER_FETCH_ROBOTS &&
        h->next_ms == job->started_ms + base_delay(f, h) && h->next_ms > now)
        h->next_ms = now;
    bc_fr_release(f, job, now);
    bc_fr_host_schedule(f, h);
    return result;
}

void bc_frontier_stats(const struct bc_frontier *f, uint64_t now,
                       struct bc_frontier_stats *out)
{
    if (!out)
        return;
    if (!f) {
        memset(out, 0, sizeof(*out));
        return;
    }
    struct bc_frontier_stats s = f->totals; /* the totals; gauges 0 */
    s.queued = f->queued;
    s.in_flight = f->in_flight;
    s.queue_bytes = f->queue_bytes;
    const struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        s.hosts++;
        if (h->robots_state == ROBOTS_GIVEN_UP)
            s.hosts_given_up++;
        if (h->down)
            s.hosts_down++;
        else if (h->circuit != CIRCUIT_CLOSED)
            s.hosts_open++;
        if (h->queued == 0)
            continue;
        if (f->cfg.obey_robots && (h->robots_state == ROBOTS_UNKNOWN ||
                                   h->robots_state == ROBOTS_FETCHING ||
                                   h->robots_state == ROBOTS_UNREACHABLE))
            s.hosts_robots++;
        else if (h->blocked_until > now)
            s.hosts_blocked++;
        else if (h->heap_pos != NOT_IN_HEAP && h->next_ms <= now)
            s.hosts_ready++;
        else
            s.hosts_waiting++;
    }
    bc_seen_stats(f->seen, &s.seen);
    *out = s;
}

size_t bc_frontier_queued(const struct bc_frontier *f, size_t *in_flight)
{
    if (in_flight)
        *in_flight = f ? f->in_flight : 0;
    return f ? f->queued : 0;
}

size_t bc_frontier_given_up_hosts(const struct bc_frontier *f,
                                  void (*fn)(void *ctx, const char *origin,
                                             size_t origin_len, uint64_t lost),
                                  void *ctx)
{
    size_t n = 0;
    if (!f)
        return 0;
    const struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        if (h->robots_state != ROBOTS_GIVEN_UP)
            continue;
        n++;
        if (fn)
            fn(ctx, h->origin, h->origin_len, h->given_up_lost);
    }
    return n;
}

enum bc_status bc_frontier_set_host_delay(struct bc_frontier *f,
                                          const char *origin, size_t len,
                                          uint64_t delay_ms,
                                          uint64_t *effective_ms)
{
    if (!f || !origin)
        return BC_ERR_INVALID_ARG;
    struct host *h = bc_fr_host_find(f, origin, len);
    if (!h)
        return BC_ERR_NOT_FOUND;
    if (f->store_status != BC_OK)
        return f->store_status;
    h->delay_override_ms = delay_ms;
    if (effective_ms)
        *effective_ms = base_delay(f, h);
    return bc_fr_store_delay(f, h);
}

size_t bc_frontier_hosts(const struct bc_frontier *f,
                         void (*fn)(void *ctx,
                                    const struct bc_frontier_host_info *info),
                         void *ctx)
{
    if (!f)
        return 0;
    size_t n = 0;
    const struct host *h, *tmp;
    HASH_ITER(hh, f->hosts, h, tmp)
    {
        n++;
        if (!fn)
            continue;
        struct bc_frontier_host_info info;
        memset(&info, 0, sizeof(info));
        info.origin = h->origin;
        info.origin_len = h->origin_len;
        info.robots = bc_fr_robots_public(h->robots_state);
        info.robots_fetching = h->robots_state == ROBOTS_FETCHING;
        info.queued = h->queued;
        info.in_flight = h->in_flight;
        info.admitted = h->admitted;
        info.given_up = h->robots_state == ROBOTS_GIVEN_UP;
        info.lost = h->given_up_lost;
        info.circuit = (enum bc_frontier_circuit)h->circuit;
        info.failures = h->failures;
        info.down = h->down;
        info.down_lost = h->down_lost;
        info.exhausted = h->exhausted;
        info.crawl_delay_ms = h->crawl_delay_ms;
        info.delay_ms = base_delay(f, h);
        info.next_contact_ms =
            h->blocked_until > h->next_ms ? h->blocked_until : h->next_ms;
        fn(ctx, &info);
    }
    return n;
}

void bc_frontier_counters(const struct bc_frontier *f,
                          struct bc_frontier_stats *out)
{
    if (!f || !out)
        return;
    *out = f->totals; /* its gauges and seen-test counters are 0 */
}
