#!/usr/bin/env python3
"""python/bloomcrawl_build.py - build bloomcrawl's Python extension (cffi).

cffi in API mode (out of line): the C compiler reads the project's own
public headers, so every struct layout and enum value the bindings use
comes from the headers, never from a copy typed here (a field declared
below with "...;" has its offset taken from the compiler).

The extension, bloomcrawl._native, is compiled together with the C
sources of the modules it binds (common, dedup, the frontier, fetcher's
links extractor, the crawl state crawler/state.c, the Redis seen-test on
hiredis), with the compiler's default flags for extensions (-fPIC, no
sanitizer). Linking the project's static libraries instead does not
work in two builds out of two: they are not position-independent (a
shared object cannot take them), and scripts/test.sh builds them with
ASan, which a plain python3 cannot load. Compiling the 27 files once
more costs about 12 s of CPU time.

Usage: bloomcrawl_build.py OUTDIR
  OUTDIR receives the package: OUTDIR/bloomcrawl/*.py and the extension;
  PYTHONPATH=OUTDIR python3 -c 'import bloomcrawl' then works. The
  generated headers the sources need (html_entities.h, by
  fetcher/gen_entities.py; bloomcrawl/version.h, from its template) are
  generated into OUTDIR/tmp, as the CMake build does.
CMake runs it (target bloomcrawl_python, python/CMakeLists.txt). setup.py
reads its ffibuilder instead (pip install --no-build-isolation ./python).
"""
import os
import re
import shutil
import subprocess
import sys

import cffi

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The library sources compiled into the extension, relative to ROOT.
SOURCES = [
    "common/bigarray.c", "common/buf.c", "common/clock.c",
    "common/counter.c", "common/hex.c", "common/io.c", "common/status.c",
    "dedup/bloom.c", "dedup/bloom_math.c", "dedup/cbloom.c", "dedup/lru.c",
    "dedup/seen.c", "dedup/seen_counters.c", "dedup/window.c",
    "frontier/url.c", "frontier/robots.c",
    "fetcher/links.c", "fetcher/html_tokenizer.c",
    # frontier and crawl state
    "frontier/frontier.c", "frontier/frontier_admit.c",
    "frontier/frontier_counters.c", "frontier/frontier_robots.c",
    "frontier/frontier_sitemap.c", "frontier/frontier_store.c",
    "crawler/state.c",
]
INCLUDES = [
    "common/include", "common/internal", "dedup/include", "dedup",
    "frontier/include", "frontier", "fetcher/include", "fetcher",
    "crawler/include", "crawler",
]
PKGS = ["libxxhash", "icu-uc"]
PKGS += ["libpsl", "sqlite3"]  # frontier and crawl state
# The Redis seen-test (bloomcrawl.RedisSeen): bc_redis_seen and the
# address parsing it shares with the crawl workers, on hiredis.
REDIS_SOURCES = ["dedup/redis/redis_conn.c", "dedup/redis/redis_seen.c"]
REDIS_INCLUDES = ["dedup/redis/include"]
REDIS_PKGS = ["hiredis"]
SOURCES += REDIS_SOURCES
INCLUDES += REDIS_INCLUDES
PKGS += REDIS_PKGS

# The declarations the bindings call. Structs end in "...;" and enums in
# "...": cffi asks the compiler for the real layout and values.
CDEF = """
enum bc_status { BC_OK, BC_ERR_INVALID_ARG, BC_ERR_NOMEM, ... };
const char *bc_strerror(enum bc_status status);
const char *bcpy_status_name(int status);

#define BC_URL_SORT_QUERY ...
#define BC_URL_STRIP_SESSION_IDS ...
#define BC_URL_COLLAPSE_SLASHES ...
#define BC_URL_STRIP_USERINFO ...
#define BC_URL_MAX_LEN_DEFAULT ...
struct bc_url_policy {
    size_t max_len;
    unsigned rules;
    const char *const *strip_params;
    size_t strip_params_count;
    ...;
};
struct bc_url { const char *href; size_t len; ...; };
enum bc_status bc_url_normalize(const struct bc_url *base, const char *href,
                                size_t href_len,
                                const struct bc_url_policy *policy, char *out,
                                size_t out_size, struct bc_url *url);
enum bc_status bc_url_seen_key(const struct bc_url *url,
                               const struct bc_url_policy *policy, char *out,
                               size_t out_size, size_t *key_len);
const char *bc_url_target(const struct bc_url *url, size_t *len);

enum bc_bloom_layout { BC_BLOOM_CLASSIC, BC_BLOOM_BLOCKED, ... };
struct bc_bloom;
struct bc_bloom_stats {
    uint64_t m_bits; uint64_t bytes; unsigned k; uint64_t n_expected;
    uint64_t inserts; uint64_t bits_set; double fill; double fpr_estimated;
    double n_estimated; double fpr_predicted; ...;
};
enum bc_status bc_bloom_create(uint64_t n, double p,
                               enum bc_bloom_layout layout, uint64_t seed,
                               unsigned flags, struct bc_bloom **out);
void bc_bloom_free(struct bc_bloom *bloom);
void bc_bloom_add(struct bc_bloom *bloom, const void *key, size_t len);
bool bc_bloom_contains(const struct bc_bloom *bloom, const void *key,
                       size_t len);
bool bc_bloom_test_and_add(struct bc_bloom *bloom, const void *key,
                           size_t len);
void bc_bloom_stats(const struct bc_bloom *bloom, struct bc_bloom_stats *out);
uint64_t bc_bloom_inserts(const struct bc_bloom *bloom);
enum bc_status bc_bloom_save(const struct bc_bloom *bloom, const char *path);
enum bc_status bc_bloom_load(const char *path, unsigned flags,
                             struct bc_bloom **out);

enum bc_seen_verdict { BC_SEEN_NEW, BC_SEEN_DUPLICATE,
                       BC_SEEN_PROBABLY_SEEN, ... };
enum bc_seen_kind { BC_SEEN_BLOOM_CLASSIC, BC_SEEN_BLOOM_BLOCKED, ... };
struct bc_seen_config {
    enum bc_seen_kind kind; uint64_t expected; double fp_rate; uint64_t seed;
    size_t lru_capacity; size_t lru_max_bytes; ...;
};
struct bc_seen;
struct bc_seen_stats {
    uint64_t tested; uint64_t verdict_new; uint64_t duplicate;
    uint64_t probably_seen; uint64_t fp_caught; bool lru_complete; ...;
};
void bc_seen_config_init(struct bc_seen_config *config);
enum bc_status bc_seen_create(const struct bc_seen_config *config,
                              struct bc_seen **out);
enum bc_status bc_seen_load(const char *path,
                            const struct bc_seen_config *config,
                            struct bc_seen **out);
enum bc_status bc_seen_save(const struct bc_seen *seen, const char *path);
void bc_seen_free(struct bc_seen *seen);
enum bc_status bc_seen_test_and_add(struct bc_seen *seen, const void *key,
                                    size_t len,
                                    enum bc_seen_verdict *verdict);
enum bc_status bc_seen_test_and_add_batch(struct bc_seen *seen,
                                          const char *const *keys,
                                          const size_t *lens, size_t count,
                                          enum bc_seen_verdict *verdicts);
enum bc_status bc_seen_peek(const struct bc_seen *seen, const void *key,
                            size_t len, enum bc_seen_verdict *verdict);
void bc_seen_stats(const struct bc_seen *seen, struct bc_seen_stats *out);
enum bc_status bcpy_seen_batch(struct bc_seen *seen, const char *buf,
                               const size_t *lens, size_t count,
                               unsigned char *verdicts);
enum bc_status bcpy_seen_batch_nul(struct bc_seen *seen, const char *buf,
                                   size_t len, size_t count,
                                   unsigned char *verdicts);

struct bc_robots;
enum bc_status bc_robots_parse(const void *body, size_t len,
                               const char *agent, size_t agent_len,
                               struct bc_robots **out);
void bc_robots_free(struct bc_robots *robots);
bool bc_robots_allowed(const struct bc_robots *robots,
                       const char *path_query, size_t len);
bool bc_robots_crawl_delay(const struct bc_robots *robots, uint64_t *ms);

#define BC_LINK_NOFOLLOW ...
#define BC_LINK_PAGE_NOFOLLOW ...
#define BC_LINK_BASE_HREF ...
enum bc_status bcpy_links(const char *html, size_t len, const char *doc,
                          size_t doc_len, char **out, size_t *out_len);
void bcpy_free(void *p);

"""

# frontier and crawl state
CDEF += """
uint64_t bc_mono_ms(void);

enum bc_counter_type { BC_COUNTER_U64, BC_COUNTER_DOUBLE, ... };
struct bc_counter {
    const char *name; enum bc_counter_type type; size_t count;
    const char *(*label_value)(size_t i); ...;
};
uint64_t bc_counter_u64(const struct bc_counter *c, const void *stats,
                        size_t i);

enum bc_frontier_scope { BC_SCOPE_HOST, BC_SCOPE_DOMAIN, BC_SCOPE_ANY, ... };
enum bc_frontier_reason { BC_ADMIT_QUEUED, BC_ADMIT_REASON_COUNT, ... };
enum bc_frontier_action { BC_FRONTIER_FETCH, BC_FRONTIER_FETCH_ROBOTS,
                          BC_FRONTIER_DROP, BC_FRONTIER_WAIT,
                          BC_FRONTIER_DONE, BC_FRONTIER_FETCH_SITEMAP, ... };
enum bc_fault { BC_FAULT_NONE, BC_FAULT_PERMANENT, BC_FAULT_TRANSIENT,
                BC_FAULT_LOCAL, ... };
enum bc_frontier_sitemap_reason { BC_FRONTIER_SITEMAP_QUEUED,
                                  BC_FRONTIER_SITEMAP_REASON_COUNT, ... };
#define BC_FRONTIER_MAX_PAYLOAD ...
#define BC_FRONTIER_MAX_URL_LEN ...
struct bc_frontier_config {
    const char *user_agent; unsigned per_host_concurrency;
    uint64_t min_delay_ms; uint64_t max_crawl_delay_ms; unsigned max_retries;
    uint64_t retry_delay_ms; bool obey_robots; enum bc_frontier_scope scope;
    unsigned max_depth; unsigned max_redirects; size_t max_payload;
    uint64_t host_budget; size_t queue_capacity;
    const char *const *include; size_t include_count;
    const char *const *exclude; size_t exclude_count; bool sitemaps;
    struct bc_seen_config seen; ...;
};
struct bc_frontier;
struct bc_frontier_request {
    const char *href; size_t href_len; const char *base; size_t base_len;
    unsigned depth; unsigned redirects;
    const char *referrer; size_t referrer_len;
    const void *payload; size_t payload_len; bool seed; bool unfiltered; ...;
};
struct bc_frontier_job {
    enum bc_frontier_action action; const char *url; size_t url_len;
    unsigned depth; unsigned redirects; unsigned retries;
    enum bc_frontier_reason reason; uint64_t wait_until_ms; uint64_t id;
    const char *referrer; size_t referrer_len;
    const void *payload; size_t payload_len;
    const char *origin; size_t origin_len;
    const char *scope; size_t scope_len; unsigned level;
    bool requeued; uint64_t retry_at_ms; ...;
};
struct bc_frontier_outcome {
    int http_status; uint64_t response_ms; uint64_t retry_after_ms;
    enum bc_fault fault; ...;
};
struct bc_frontier_stats { size_t queued; ...; };
void bc_frontier_config_init(struct bc_frontier_config *config);
enum bc_status bc_frontier_create(const struct bc_frontier_config *config,
                                  struct bc_frontier **out);
void bc_frontier_free(struct bc_frontier *frontier);
enum bc_status bc_frontier_add_request(struct bc_frontier *frontier,
                                       const struct bc_frontier_request *req,
                                       enum bc_frontier_reason *reason,
                                       enum bc_status *url_status);
const char *bc_frontier_last_url(const struct bc_frontier *frontier,
                                 size_t *len);
const char *bc_frontier_reason_name(enum bc_frontier_reason reason);
const char *bc_fault_name(enum bc_fault fault);
const char *
bc_frontier_sitemap_reason_name(enum bc_frontier_sitemap_reason reason);
enum bc_status bc_frontier_next(struct bc_frontier *frontier, uint64_t now_ms,
                                struct bc_frontier_job *job);
enum bc_status bc_frontier_done(struct bc_frontier *frontier,
                                struct bc_frontier_job *job,
                                const struct bc_frontier_outcome *outcome,
                                uint64_t now_ms);
enum bc_status bc_frontier_giveback(struct bc_frontier *frontier,
                                    struct bc_frontier_job *job,
                                    uint64_t now_ms);
enum bc_status bc_frontier_robots_done(struct bc_frontier *frontier,
                                       struct bc_frontier_job *job,
                                       int http_status, const void *body,
                                       size_t len, const char *location,
                                       size_t location_len, uint64_t now_ms);
enum bc_status bc_frontier_add_sitemap(
    struct bc_frontier *frontier, const struct bc_frontier_job *job,
    const char *href, size_t href_len,
    enum bc_frontier_sitemap_reason *reason);
enum bc_status bc_frontier_add_from_sitemap(struct bc_frontier *frontier,
                                            const struct bc_frontier_job *job,
                                            const char *href, size_t href_len,
                                            enum bc_frontier_reason *reason,
                                            enum bc_status *url_status);
enum bc_status bc_frontier_sitemap_done(struct bc_frontier *frontier,
                                        struct bc_frontier_job *job,
                                        const struct bc_frontier_outcome *o,
                                        uint64_t now_ms);
void bc_frontier_stats(const struct bc_frontier *frontier, uint64_t now_ms,
                       struct bc_frontier_stats *out);
const struct bc_counter *bc_frontier_counter_table(size_t *n);
size_t bc_frontier_queued(const struct bc_frontier *frontier,
                          size_t *in_flight);
enum bc_status bc_frontier_set_host_delay(struct bc_frontier *frontier,
                                          const char *origin, size_t len,
                                          uint64_t delay_ms,
                                          uint64_t *effective_ms);

struct bc_crawl_state;
struct bc_crawl_state_option { const char *name; const char *value; };
struct bc_crawl_state_error {
    char text[512]; char option[64]; char was[256]; char now[256]; long pid;
    ...;
};
struct bc_crawl_state_info {
    bool resumed; uint64_t runs; uint64_t refetched_now; uint64_t refetched;
    uint64_t queued; uint64_t journal; uint64_t snapshot_pos;
    uint64_t elapsed_before_ms; ...;
};
enum bc_status bc_crawl_state_open(const char *dir,
                                   const struct bc_crawl_state_option *fixed,
                                   size_t count, struct bc_crawl_state **out,
                                   struct bc_crawl_state_error *err);
void bc_crawl_state_close(struct bc_crawl_state *state);
const char *bc_crawl_state_errmsg(const struct bc_crawl_state *state);
void bc_crawl_state_info(const struct bc_crawl_state *state,
                         struct bc_crawl_state_info *out);
enum bc_status bc_crawl_state_pin(struct bc_crawl_state *state,
                                  const struct bc_crawl_state_option *pins,
                                  size_t n, struct bc_crawl_state_error *err);
enum bc_status bc_crawl_state_frontier(struct bc_crawl_state *state,
                                       const struct bc_frontier_config *config,
                                       size_t window, uint64_t now_ms,
                                       struct bc_frontier **out);
enum bc_status bc_crawl_state_add_seed(struct bc_crawl_state *state,
                                       const char *url, size_t len);
enum bc_status bc_crawl_state_page_done(struct bc_crawl_state *state,
                                        uint64_t id);
enum bc_status bc_crawl_state_page_failed(struct bc_crawl_state *state,
                                          uint64_t id);
enum bc_status bc_crawl_state_counter_set(struct bc_crawl_state *state,
                                          const char *name, uint64_t value);
uint64_t bc_crawl_state_counter_get(const struct bc_crawl_state *state,
                                    const char *name);
bool bc_crawl_state_pending(const struct bc_crawl_state *state);
enum bc_status bc_crawl_state_commit(struct bc_crawl_state *state,
                                     const struct bc_frontier *frontier);
enum bc_status bc_crawl_state_snapshot(struct bc_crawl_state *state,
                                       struct bc_frontier *frontier);
"""

# Redis seen-test
CDEF += """
struct bc_bloom_sizing {
    uint64_t n; double p; uint64_t m_bits; uint64_t bytes; unsigned k;
    double fpr_predicted; ...;
};
#define BC_REDIS_SEEN_MAX_TIMEOUT_MS ...
#define BC_BLOOM_MAX_K ...
enum bc_redis_seen_answer { BC_REDIS_SEEN_DUPLICATE, BC_REDIS_SEEN_NEW,
                            ... };
struct bc_redis_seen;
enum bc_status bc_redis_seen_create(const char *where, const char *prefix,
                                    uint64_t n, double p, uint64_t seed,
                                    struct bc_redis_seen **out);
enum bc_status bc_redis_seen_create_k(const char *where, const char *prefix,
                                      uint64_t n, double p, unsigned k,
                                      uint64_t seed,
                                      struct bc_redis_seen **out);
enum bc_status bc_redis_seen_connect(struct bc_redis_seen *rs);
enum bc_status bc_redis_seen_set_timeout(struct bc_redis_seen *rs,
                                         uint64_t timeout_ms);
void bc_redis_seen_free(struct bc_redis_seen *rs);
void bc_redis_seen_sizing(const struct bc_redis_seen *rs,
                          struct bc_bloom_sizing *out);
enum bc_status bc_redis_seen_clear(struct bc_redis_seen *rs);
const char *bc_redis_seen_errmsg(const struct bc_redis_seen *rs);
enum bc_status bcpy_redis_seen_batch(struct bc_redis_seen *rs,
                                     const char *buf, const size_t *lens,
                                     size_t count, unsigned char *answers,
                                     int add);
"""

# C compiled into the extension beside the declarations' headers: the
# status names (the header's X-macro list, so never a copy that drifts).
SOURCE = r"""
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/status.h"
#include "bloomcrawl/bloom.h"
#include "bloomcrawl/seen.h"
#include "bloomcrawl/url.h"
#include "bloomcrawl/robots.h"
#include "bloomcrawl/links.h"

#define BCPY_NAME_(name, text) #name,
static const char *const bcpy_names[] = {BC_STATUS_LIST(BCPY_NAME_)};
#undef BCPY_NAME_

/* The enumerator's name of a status ("BC_ERR_IO"), NULL outside the enum. */
static const char *bcpy_status_name(int status)
{
    if (status < 0 ||
        (size_t)status >= sizeof bcpy_names / sizeof bcpy_names[0])
        return NULL;
    return bcpy_names[status];
}

/*
 * bc_seen_test_and_add_batch() over count keys laid end to end in buf
 * (key i is lens[i] bytes), verdicts as bytes: the key pointers are made
 * here, in C, where 10^6 of them cost a few milliseconds (in Python, a
 * cffi array of char * cannot take bytes objects). Called without the GIL.
 */
static enum bc_status bcpy_seen_batch(struct bc_seen *seen, const char *buf,
                                      const size_t *lens, size_t count,
                                      unsigned char *verdicts)
{
    enum { CHUNK = 1024 };
    const char *keys[CHUNK];
    enum bc_seen_verdict v[CHUNK];
    enum bc_status worst = BC_OK;
    for (size_t done = 0; done < count;) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        for (size_t i = 0; i < n; i++) {
            keys[i] = buf;
            buf += lens[done + i];
        }
        enum bc_status st =
            bc_seen_test_and_add_batch(seen, keys, lens + done, n, v);
        if (st == BC_ERR_INVALID_ARG)
            return st;
        if (st != BC_OK)
            worst = st;
        for (size_t i = 0; i < n; i++)
            verdicts[done + i] = (unsigned char)v[i];
        done += n;
    }
    return worst;
}

/*
 * bcpy_seen_batch() for count keys joined by NUL bytes ("a\0b\0c": no
 * lengths to pass, the split is a memchr per key). The caller checked
 * that no key holds a NUL; if buf (len bytes) still does not split into
 * exactly count keys, nothing is tested: BC_ERR_INVALID_ARG.
 */
static enum bc_status bcpy_seen_batch_nul(struct bc_seen *seen, const char *buf,
                                          size_t len, size_t count,
                                          unsigned char *verdicts)
{
    enum { CHUNK = 1024 };
    const char *keys[CHUNK];
    size_t lens[CHUNK];
    enum bc_seen_verdict v[CHUNK];
    enum bc_status worst = BC_OK;
    const char *end = buf + len;
    size_t nuls = 0;
    for (const char *p = buf; (p = memchr(p, 0, (size_t)(end - p))); p++)
        nuls++;
    if (count == 0 || nuls != count - 1)
        return BC_ERR_INVALID_ARG;
    for (size_t done = 0; done < count;) {
        size_t n = count - done < CHUNK ? count - done : CHUNK;
        for (size_t i = 0; i < n; i++) {
            const char *nul = memchr(buf, 0, (size_t)(end - buf));
            const char *stop = nul ? nul : end;
            keys[i] = buf;
            lens[i] = (size_t)(stop - buf);
            buf = nul ? nul + 1 : end;
        }
        enum bc_status st = bc_seen_test_and_add_batch(seen, keys, lens, n, v);
        if (st == BC_ERR_INVALID_ARG)
            return st;
        if (st != BC_OK)
            worst = st;
        for (size_t i = 0; i < n; i++)
            verdicts[done + i] = (unsigned char)v[i];
        done += n;
    }
    return worst;
}

/* The links of one page as records, for bcpy_links(). */
struct bcpy_links_out {
    char *data;
    size_t len, cap;
    int nomem;
};

static void bcpy_put(struct bcpy_links_out *o, const void *p, size_t n)
{
    if (o->nomem)
        return;
    if (o->cap - o->len < n) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap - o->len < n)
            cap *= 2;
        char *d = realloc(o->data, cap);
        if (!d) {
            o->nomem = 1;
            return;
        }
        o->data = d;
        o->cap = cap;
    }
    memcpy(o->data + o->len, p, n);
    o->len += n;
}

/* A record: flags, href length, href, base length, base (uint64 each). */
static void bcpy_on_link(void *user, const char *href, size_t len,
                         const char *base, size_t base_len, unsigned flags)
{
    struct bcpy_links_out *o = user;
    uint64_t f = flags, hl = len, bl = base_len;
    bcpy_put(o, &f, sizeof f);
    bcpy_put(o, &hl, sizeof hl);
    bcpy_put(o, href, len);
    bcpy_put(o, &bl, sizeof bl);
    bcpy_put(o, base, base_len);
}

/*
 * Extract the links of a whole HTML document (doc is its URL, the first
 * base) into *out (*out_len bytes of records, free with bcpy_free()).
 * Called without the GIL: the tokenizer runs while other threads do.
 */
static enum bc_status bcpy_links(const char *html, size_t len,
                                 const char *doc, size_t doc_len, char **out,
                                 size_t *out_len)
{
    struct bcpy_links_out o = {0};
    struct bc_links_config config;
    struct bc_links *links;
    bc_links_config_init(&config);
    config.on_link = bcpy_on_link;
    config.user = &o;
    enum bc_status st = bc_links_create(&config, doc, doc_len, &links);
    if (st != BC_OK)
        return st;
    st = bc_links_feed(links, html, len);
    if (st == BC_OK)
        st = bc_links_finish(links);
    bc_links_free(links);
    if (st == BC_OK && o.nomem)
        st = BC_ERR_NOMEM;
    if (st != BC_OK) {
        free(o.data);
        return st;
    }
    *out = o.data;
    *out_len = o.len;
    return BC_OK;
}

static void bcpy_free(void *p)
{
    free(p);
}

/* frontier and crawl state (the state's private doors: docs/DESIGN.md 16) */
#include "bc_clock.h"
#include "bloomcrawl/counter.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/crawl_state.h"
#include "state_int.h"
"""

# Redis seen-test
SOURCE += r"""
#include "bloomcrawl/redis_seen.h"

/*
 * bc_redis_seen_test_and_add() (add) or _contains() over count keys laid
 * end to end in buf (key i is lens[i] bytes), answers as bytes
 * (BC_REDIS_SEEN_NEW 1, _DUPLICATE 0): the key pointers are made here,
 * all at once, so that the whole batch is one pipeline. Called without
 * the GIL. answers is written only on success.
 */
static enum bc_status bcpy_redis_seen_batch(struct bc_redis_seen *rs,
                                            const char *buf,
                                            const size_t *lens, size_t count,
                                            unsigned char *answers, int add)
{
    if (count == 0)
        return BC_OK;
    if (count > SIZE_MAX / sizeof(enum bc_redis_seen_answer))
        return BC_ERR_TOO_LARGE;
    const void **keys = malloc(count * sizeof *keys);
    enum bc_redis_seen_answer *a = malloc(count * sizeof *a);
    enum bc_status st = BC_ERR_NOMEM;
    if (keys && a) {
        for (size_t i = 0; i < count; i++) {
            keys[i] = buf;
            buf += lens[i];
        }
        st = add ? bc_redis_seen_test_and_add(rs, keys, lens, count, a)
                 : bc_redis_seen_contains(rs, keys, lens, count, a);
        if (st == BC_OK)
            for (size_t i = 0; i < count; i++)
                answers[i] = (unsigned char)a[i];
    }
    free(keys);
    free(a);
    return st;
}
"""


def write_version_h(generated):
    """bloomcrawl/version.h (frontier.c includes it) from its template,
    with the version of project(... VERSION x.y.z), as CMake's
    configure_file() makes it."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        version = re.search(r"project\(bloomcrawl VERSION ([0-9]+)\.([0-9]+)"
                            r"\.([0-9]+)", f.read()).groups()
    with open(os.path.join(ROOT, "common", "include", "bloomcrawl",
                           "version.h.in")) as f:
        text = f.read()
    for name, value in (("PROJECT_VERSION_MAJOR", version[0]),
                        ("PROJECT_VERSION_MINOR", version[1]),
                        ("PROJECT_VERSION_PATCH", version[2]),
                        ("PROJECT_VERSION", ".".join(version))):
        text = text.replace("@%s@" % name, value)
    os.makedirs(os.path.join(generated, "bloomcrawl"), exist_ok=True)
    with open(os.path.join(generated, "bloomcrawl", "version.h"), "w") as f:
        f.write(text)


def pkg_config(args):
    return subprocess.run(["pkg-config"] + args + PKGS, check=True,
                          capture_output=True, text=True).stdout.split()


def make_builder(generated_includes):
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    flags = pkg_config(["--cflags"])
    libs = pkg_config(["--libs"])
    ffi.set_source(
        "bloomcrawl._native", SOURCE,
        sources=[os.path.join(ROOT, s) for s in SOURCES],
        include_dirs=[os.path.join(ROOT, d) for d in INCLUDES]
        + list(generated_includes),
        extra_compile_args=["-std=c11", "-O2"] + flags,
        libraries=[f[2:] for f in libs if f.startswith("-l")] + ["m"],
        extra_link_args=["-pthread"])
    return ffi


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    out = os.path.abspath(argv[1])
    pkg_out = os.path.join(out, "bloomcrawl")
    os.makedirs(pkg_out, exist_ok=True)
    src_pkg = os.path.join(HERE, "bloomcrawl")
    for name in os.listdir(src_pkg):
        if name.endswith((".py", ".pyi")) or name == "py.typed":
            shutil.copy2(os.path.join(src_pkg, name), pkg_out)
    tmp = os.path.join(out, "tmp")
    generated = os.path.join(tmp, "generated")
    os.makedirs(generated, exist_ok=True)
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "fetcher", "gen_entities.py"),
                    os.path.join(generated, "html_entities.h")], check=True)
    write_version_h(generated)
    ffi = make_builder([generated])
    ffi.compile(tmpdir=tmp, verbose=False,
                target=os.path.join(out, "bloomcrawl",
                                    "_native.*"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
else:
    # Read by setup.py's cffi_modules ("bloomcrawl_build.py:ffibuilder",
    # for pip install ./python): html_entities.h is generated into a
    # temporary directory removed when the build's process ends.
    import atexit
    import tempfile
    _generated = tempfile.mkdtemp(prefix="bloomcrawl-gen-")
    atexit.register(shutil.rmtree, _generated, True)
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "fetcher", "gen_entities.py"),
                    os.path.join(_generated, "html_entities.h")], check=True)
    write_version_h(_generated)
    ffibuilder = make_builder([_generated])
