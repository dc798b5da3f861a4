/*
 * test_counters.c - the counter tables (bloomcrawl/counter.h): each
 * module's table describes its stats struct soundly (names and units that
 * Prometheus takes, rows inside the struct and not overlapping, a label
 * for every element of an array), and the crawl state saves and restores
 * every TOTAL counter under the keys earlier versions wrote, so that an
 * existing state resumes with its counters.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/counter.h"
#include "bloomcrawl/crawl_state.h"
#include "bloomcrawl/crawler.h"
#include "bloomcrawl/frontier.h"
#include "bloomcrawl/seen.h"
#include "bloomcrawl/workers.h"
#include "state_int.h" /* the state's counters and commit */

struct group {
    const char *name;
    const struct bc_counter *(*table)(size_t *n);
    size_t size; /* sizeof the stats struct */
};

static const struct group groups[] = {
    {"seen", bc_seen_counter_table, sizeof(struct bc_seen_stats)},
    {"frontier", bc_frontier_counter_table, sizeof(struct bc_frontier_stats)},
    {"crawler", bc_crawler_counter_table, sizeof(struct bc_crawler_stats)},
    {"workers", bc_workers_counter_table, sizeof(struct bc_workers_stats)},
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

/* A Prometheus metric or label name fragment: [a-z_][a-z0-9_]* (lower
 * case only, the project's spelling). */
static bool fragment_ok(const char *s)
{
    if (!s || !*s || isdigit((unsigned char)s[0]))
        return false;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) ||
              *s == '_'))
            return false;
    return true;
}

/* Is the 8-byte word at offset w of group's stats struct one a table
 * leaves out: a configuration, not a count (seen: the tier-1 kind, the
 * filter's layout, the window's kind, the hash seed), or another table's
 * struct (the frontier's seen)? */
static bool left_out(const char *group, size_t w)
{
    struct span {
        size_t off, size;
    };
#define SPAN(S, f)                                                             \
    {                                                                          \
        offsetof(S, f), sizeof(((S *)0)->f)                                    \
    }
    static const struct span seen[] = {
        SPAN(struct bc_seen_stats, kind),
        SPAN(struct bc_seen_stats, bloom.layout),
        SPAN(struct bc_seen_stats, bloom.seed),
        SPAN(struct bc_seen_stats, window.kind),
    };
    static const struct span frontier[] = {
        SPAN(struct bc_frontier_stats, seen),
    };
#undef SPAN
    const struct span *t = NULL;
    size_t n = 0;
    if (!strcmp(group, "seen"))
        t = seen, n = sizeof(seen) / sizeof(seen[0]);
    else if (!strcmp(group, "frontier"))
        t = frontier, n = sizeof(frontier) / sizeof(frontier[0]);
    for (size_t i = 0; i < n; i++)
        if (w < t[i].off + t[i].size && t[i].off < w + 8)
            return true;
    return false;
}

static void test_tables_sound(void **state)
{
    (void)state;
    for (size_t g = 0; g < NGROUPS; g++) {
        size_t n = 0;
        const struct bc_counter *t = groups[g].table(&n);
        assert_non_null(t);
        assert_true(n > 0);
        assert_ptr_equal(groups[g].table(NULL), t); /* n may be NULL */
        unsigned char *used = calloc(1, groups[g].size);
        assert_non_null(used);
        for (size_t r = 0; r < n; r++) {
            const struct bc_counter *c = &t[r];
            if (!fragment_ok(c->name))
                fail_msg("%s: bad name '%s'", groups[g].name, c->name);
            for (size_t q = 0; q < r; q++)
                if (!strcmp(t[q].name, c->name))
                    fail_msg("%s.%s twice", groups[g].name, c->name);
            /* A unit is a plural word, or none ("": an index, an errno). */
            assert_non_null(c->unit);
            if (*c->unit && !fragment_ok(c->unit))
                fail_msg("%s.%s: bad unit '%s'", groups[g].name, c->name,
                         c->unit);
            if (!c->help || !*c->help || c->help[strlen(c->help) - 1] == '.')
                fail_msg("%s.%s: help missing or ends in '.'", groups[g].name,
                         c->name);
            assert_true(c->kind == BC_COUNTER_TOTAL ||
                        c->kind == BC_COUNTER_RUN_TOTAL ||
                        c->kind == BC_COUNTER_GAUGE);
            /* A TOTAL is saved and restored as an integer. */
            if (c->kind == BC_COUNTER_TOTAL)
                assert_int_equal(c->type, BC_COUNTER_U64);
            size_t size = bc_counter_type_size(c->type);
            assert_true(size > 0);
            assert_true(c->count >= 1);
            assert_int_equal(c->offset % size, 0); /* aligned */
            if (c->offset + c->count * size > groups[g].size)
                fail_msg("%s.%s outside its struct", groups[g].name, c->name);
            /* No two rows share a byte. */
            for (size_t b = c->offset; b < c->offset + c->count * size; b++) {
                if (used[b])
                    fail_msg("%s.%s overlaps another row", groups[g].name,
                             c->name);
                used[b] = 1;
            }
            if (c->count > 1 || c->label) {
                if (!fragment_ok(c->label) || !strncmp(c->label, "__", 2))
                    fail_msg("%s.%s: bad label", groups[g].name, c->name);
                assert_non_null(c->label_value);
                for (size_t i = 0; i < c->count; i++) {
                    const char *v = c->label_value(i);
                    if (!v || !*v || !strcmp(v, "?") || !strcmp(v, "unknown"))
                        fail_msg("%s.%s[%zu]: no label value", groups[g].name,
                                 c->name, i);
                    for (size_t j = 0; j < i; j++)
                        if (!strcmp(c->label_value(j), v))
                            fail_msg("%s.%s: label value %s twice",
                                     groups[g].name, c->name, v);
                }
            } else {
                assert_null(c->label_value);
                assert_false(c->key_indexed);
            }
        }
        /* Every field has a row: each 8-byte word of the struct holds a
         * row's byte (a field, or a small one and its padding), but for
         * the fields a table leaves out on purpose. A TOTAL without a row
         * would be neither reported nor saved. */
        for (size_t w = 0; w < groups[g].size; w += 8) {
            bool covered = false;
            for (size_t b = w; b < w + 8 && b < groups[g].size; b++)
                covered = covered || used[b];
            if (!covered && !left_out(groups[g].name, w))
                fail_msg("%s: the field at offset %zu has no row",
                         groups[g].name, w);
        }
        free(used);
    }
}

static const char *label_i(size_t i)
{
    static const char *const v[] = {"i0", "i1", "i2", "i3", "i4",  "i5",
                                    "i6", "i7", "i8", "i9", "i10", "i11"};
    return i < 12 ? v[i] : "?";
}

/* The keys the state uses: "GROUP.KEY", "GROUP.KEY.LABEL", "GROUP.KEY[i]",
 * unique, at most 63 bytes (the state's limit). */
static void test_keys(void **state)
{
    (void)state;
    size_t n;
    const struct bc_counter *t = bc_frontier_counter_table(&n);
    char key[64];
    bool added = false, robots = false;
    for (size_t r = 0; r < n; r++) {
        if (!strcmp(t[r].name, "added")) {
            assert_true(bc_counter_key(&t[r], "frontier", 0, key, sizeof(key)));
            assert_string_equal(key, "frontier.added");
            added = true;
            /* Too small a buffer: false. */
            assert_false(bc_counter_key(&t[r], "frontier", 0, key, 14));
            assert_true(bc_counter_key(&t[r], "frontier", 0, key, 15));
        }
        if (!strcmp(t[r].name, "reasons")) {
            assert_true(bc_counter_key(&t[r], "frontier", BC_ADMIT_ROBOTS, key,
                                       sizeof(key)));
            assert_string_equal(key, "frontier.reason.robots");
            robots = true;
        }
    }
    assert_true(added && robots);
    t = bc_crawler_counter_table(&n);
    bool status = false;
    for (size_t r = 0; r < n; r++)
        if (!strcmp(t[r].name, "status_class")) {
            assert_true(bc_counter_key(&t[r], "crawler", 2, key, sizeof(key)));
            assert_string_equal(key, "crawler.status_class[2]");
            assert_string_equal(t[r].label_value(2), "2xx");
            status = true;
        }
    assert_true(status);
    /* An index of two digits, and the limits of the buffer: a key of n
     * bytes needs n + 1. */
    const struct bc_counter idx = {.name = "x",
                                   .count = 12,
                                   .label = "i",
                                   .label_value = label_i,
                                   .key_indexed = true};
    assert_true(bc_counter_key(&idx, "g", 11, key, sizeof(key)));
    assert_string_equal(key, "g.x[11]");
    assert_true(bc_counter_key(&idx, "g", 0, key, 7));
    assert_string_equal(key, "g.x[0]");
    assert_false(bc_counter_key(&idx, "g", 0, key, 6));
    assert_false(bc_counter_key(&idx, "g", 0, key, 0));
    const struct bc_counter lab = {.name = "x",
                                   .count = 12,
                                   .label = "i",
                                   .label_value = label_i,
                                   .key = "y"};
    assert_true(bc_counter_key(&lab, "g", 3, key, 7));
    assert_string_equal(key, "g.y.i3");
    assert_false(bc_counter_key(&lab, "g", 3, key, 6));

    for (size_t g = 0; g < NGROUPS; g++) {
        t = groups[g].table(&n);
        size_t total = 0;
        for (size_t r = 0; r < n; r++)
            total += t[r].count;
        char(*keys)[64] = calloc(total, sizeof(*keys));
        assert_non_null(keys);
        size_t k = 0;
        for (size_t r = 0; r < n; r++)
            for (size_t i = 0; i < t[r].count; i++, k++) {
                assert_true(bc_counter_key(&t[r], groups[g].name, i, keys[k],
                                           sizeof(keys[k])));
                for (size_t j = 0; j < k; j++)
                    if (!strcmp(keys[j], keys[k]))
                        fail_msg("key %s twice", keys[k]);
            }
        free(keys);
    }
}

/* bc_counter_value/u64/set on each type, element i of an array. */
struct all_types {
    uint64_t u[3];
    size_t z;
    unsigned ui;
    int i;
    bool b;
    double d;
};

static void test_value_types(void **state)
{
    (void)state;
    struct all_types s;
    memset(&s, 0, sizeof(s));
    const struct bc_counter u = {.type = BC_COUNTER_U64,
                                 .offset = offsetof(struct all_types, u),
                                 .count = 3};
    bc_counter_set(&u, &s, 2, UINT64_MAX);
    assert_true(s.u[2] == UINT64_MAX && s.u[1] == 0);
    assert_true(bc_counter_u64(&u, &s, 2) == UINT64_MAX);
    const struct bc_counter z = {.type = BC_COUNTER_SIZE,
                                 .offset = offsetof(struct all_types, z)};
    bc_counter_set(&z, &s, 0, 12345);
    assert_true(s.z == 12345 && bc_counter_value(&z, &s, 0) == 12345.0);
    const struct bc_counter ui = {.type = BC_COUNTER_UINT,
                                  .offset = offsetof(struct all_types, ui)};
    bc_counter_set(&ui, &s, 0, 7);
    assert_true(s.ui == 7 && bc_counter_u64(&ui, &s, 0) == 7);
    const struct bc_counter i = {.type = BC_COUNTER_INT,
                                 .offset = offsetof(struct all_types, i)};
    s.i = -5; /* a negative int reads as 0 in integers */
    assert_true(bc_counter_value(&i, &s, 0) == -5.0);
    assert_true(bc_counter_u64(&i, &s, 0) == 0);
    const struct bc_counter b = {.type = BC_COUNTER_BOOL,
                                 .offset = offsetof(struct all_types, b)};
    bc_counter_set(&b, &s, 0, 2);
    assert_true(s.b && bc_counter_value(&b, &s, 0) == 1.0);
    const struct bc_counter d = {.type = BC_COUNTER_DOUBLE,
                                 .offset = offsetof(struct all_types, d)};
    s.d = 2.75; /* truncated as an integer */
    assert_true(bc_counter_value(&d, &s, 0) == 2.75);
    assert_true(bc_counter_u64(&d, &s, 0) == 2);
    assert_string_equal(bc_counter_kind_name(BC_COUNTER_TOTAL), "total");
    assert_string_equal(bc_counter_kind_name(BC_COUNTER_RUN_TOTAL),
                        "run_total");
    assert_string_equal(bc_counter_kind_name(BC_COUNTER_GAUGE), "gauge");
}

/* ---- the crawl state ------------------------------------------------- */

static char base[] = "/tmp/test_counters_XXXXXX";

/* The keys as the code before the tables wrote them, spelled out (a state
 * written by that code must resume with its counters): crawler.c's
 * stat_fields and its arrays, state.c's frontier list and arrays. */
static const char *const old_crawler[] = {"seeds",
                                          "seeds_admitted",
                                          "handed_out",
                                          "pages",
                                          "bytes",
                                          "status_class[0]",
                                          "status_class[1]",
                                          "status_class[2]",
                                          "status_class[3]",
                                          "status_class[4]",
                                          "status_class[5]",
                                          "links",
                                          "nofollow_skipped",
                                          "links_nomem",
                                          "redirects",
                                          "merged",
                                          "merged_absolute",
                                          "bad_scheme",
                                          "bad_malformed",
                                          "robots_fetched",
                                          "dropped",
                                          "given_up_dropped",
                                          "not_started",
                                          "local_failures",
                                          "warc_files",
                                          "warc_records",
                                          "warc_bytes",
                                          "skipped_content_type",
                                          "sitemaps_started",
                                          "sitemaps_fetched",
                                          "sitemap_urls",
                                          "sitemap_admitted",
                                          "sitemap_indexed",
                                          "sitemap_http_errors",
                                          "sitemap_not_found",
                                          "routed_out",
                                          "routed_in",
                                          "retried",
                                          "transient_given_up",
                                          "host_down_dropped"};
static const char *const old_frontier[] = {"added",
                                           "admitted",
                                           "handed_out",
                                           "retried",
                                           "given_back",
                                           "retries_exhausted",
                                           "robots_fetches",
                                           "robots_parsed",
                                           "robots_unavailable",
                                           "robots_unreachable",
                                           "sitemap_fetches",
                                           "sitemap_keys"};

struct old_key {
    char name[64];
    uint64_t value;
};

/* "GROUP.A" or, with b, "GROUP.A.B". */
static size_t add_key(struct old_key *k, size_t n, const char *group,
                      const char *a, const char *b)
{
    snprintf(k[n].name, sizeof(k[n].name), "%s.%s%s%s", group, a, b ? "." : "",
             b ? b : "");
    k[n].value = 1000 + 17 * (uint64_t)n; /* distinct */
    return n + 1;
}

/* Every key the old code wrote, each with a distinct value. */
static size_t old_keys(struct old_key *k)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof(old_crawler) / sizeof(old_crawler[0]); i++)
        n = add_key(k, n, "crawler", old_crawler[i], NULL);
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        n = add_key(k, n, "crawler", "errors",
                    bc_crawler_error_kind_name((enum bc_crawler_error_kind)e));
    for (int r = 0; r < BC_ADMIT_REASON_COUNT; r++)
        n = add_key(k, n, "crawler", "sitemap_rejected",
                    bc_frontier_reason_name((enum bc_frontier_reason)r));
    for (int r = 0; r < BC_SITEMAP_STOP_COUNT; r++)
        n = add_key(k, n, "crawler", "sitemap_cut",
                    bc_sitemap_stop_name((enum bc_sitemap_stop)r));
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        n = add_key(k, n, "crawler", "sitemap_errors",
                    bc_crawler_error_kind_name((enum bc_crawler_error_kind)e));
    for (size_t i = 0; i < sizeof(old_frontier) / sizeof(old_frontier[0]); i++)
        n = add_key(k, n, "frontier", old_frontier[i], NULL);
    for (int r = 0; r < BC_ADMIT_REASON_COUNT; r++)
        n = add_key(k, n, "frontier", "reason",
                    bc_frontier_reason_name((enum bc_frontier_reason)r));
    for (int r = 0; r < BC_FRONTIER_SITEMAP_REASON_COUNT; r++)
        n = add_key(k, n, "frontier", "sitemap",
                    bc_frontier_sitemap_reason_name(
                        (enum bc_frontier_sitemap_reason)r));
    return n;
}

/* The old key name's index in k, or n when it is none. */
static size_t old_index(const struct old_key *k, size_t n, const char *name)
{
    size_t i = 0;
    while (i < n && strcmp(k[i].name, name))
        i++;
    return i;
}

/* The TOTAL elements of a table, with their keys. */
static size_t total_keys(const char *group, const struct bc_counter *t,
                         size_t n, char (*keys)[64], size_t *row, size_t *elem,
                         size_t max)
{
    size_t k = 0;
    for (size_t r = 0; r < n; r++)
        for (size_t i = 0; t[r].kind == BC_COUNTER_TOTAL && i < t[r].count;
             i++) {
            assert_true(k < max);
            assert_true(bc_counter_key(&t[r], group, i, keys[k], 64));
            row[k] = r;
            elem[k++] = i;
        }
    return k;
}

#define MAXKEYS 512

/* The crawl's configuration on state s. */
static void config_on(struct bc_crawler_config *cfg, struct bc_crawl_state *s)
{
    bc_crawler_config_init(cfg);
    cfg->frontier.user_agent = "test_counters/1";
    cfg->state = s;
}

static struct bc_crawler *crawler_on(struct bc_crawl_state *s)
{
    struct bc_crawler_config cfg;
    config_on(&cfg, s);
    struct bc_crawler *c = NULL;
    assert_int_equal(bc_crawler_create(&cfg, &c), BC_OK);
    return c;
}

/* A key's value in the test: the old key's, or for a key of a counter
 * added since (not in the old list) another distinct one. */
static uint64_t key_value(const struct old_key *old, size_t n_old,
                          const char *key, size_t k)
{
    size_t i = old_index(old, n_old, key);
    return i < n_old ? old[i].value : 5000000 + 17 * (uint64_t)k;
}

/*
 * A state written the old way (every old key set by name, a distinct
 * value each; a TOTAL added since by its table key) resumes with every
 * TOTAL counter of the frontier's and the crawler's tables (the expected
 * struct filled by bc_counter_set); a commit then writes each back under
 * the same key, and a third open reads them all again. Every old key is
 * the key of a TOTAL element of a table.
 */
static void test_state_round_trip(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof(dir), "%s/state", base);
    static struct old_key old[MAXKEYS];
    size_t n_old = old_keys(old);
    assert_true(n_old < MAXKEYS);

    /* The tables' TOTAL keys: every old key among them. */
    static char fkeys[MAXKEYS][64], ckeys[MAXKEYS][64];
    static size_t frow[MAXKEYS], felem[MAXKEYS], crow[MAXKEYS], celem[MAXKEYS];
    size_t fn, cn;
    const struct bc_counter *ft = bc_frontier_counter_table(&fn);
    const struct bc_counter *ct = bc_crawler_counter_table(&cn);
    size_t nf = total_keys("frontier", ft, fn, fkeys, frow, felem, MAXKEYS);
    size_t nc = total_keys("crawler", ct, cn, ckeys, crow, celem, MAXKEYS);
    for (size_t i = 0; i < n_old; i++) {
        bool found = false;
        for (size_t k = 0; !found && k < nf; k++)
            found = !strcmp(fkeys[k], old[i].name);
        for (size_t k = 0; !found && k < nc; k++)
            found = !strcmp(ckeys[k], old[i].name);
        if (!found)
            fail_msg("old key %s is no TOTAL of a table", old[i].name);
    }

    /* Run 0: an old state's counters, and the totals added since. */
    struct bc_crawl_state *s = NULL;
    struct bc_crawl_state_error err;
    assert_int_equal(bc_crawl_state_open(dir, NULL, 0, &s, &err), BC_OK);
    struct bc_crawler_config cfg0;
    config_on(&cfg0, s); /* its settings recorded, as its crawl did */
    assert_int_equal(bc_crawler_pin(&cfg0, NULL), BC_OK);
    for (size_t i = 0; i < n_old; i++)
        assert_int_equal(
            bc_crawl_state_counter_set(s, old[i].name, old[i].value), BC_OK);
    for (size_t k = 0; k < nf; k++)
        if (old_index(old, n_old, fkeys[k]) == n_old)
            assert_int_equal(
                bc_crawl_state_counter_set(s, fkeys[k],
                                           key_value(old, n_old, fkeys[k], k)),
                BC_OK);
    for (size_t k = 0; k < nc; k++)
        if (old_index(old, n_old, ckeys[k]) == n_old)
            assert_int_equal(
                bc_crawl_state_counter_set(
                    s, ckeys[k], key_value(old, n_old, ckeys[k], nf + k)),
                BC_OK);
    assert_int_equal(bc_crawl_state_commit(s, NULL), BC_OK);
    bc_crawl_state_close(s);

    struct bc_frontier_stats fwant;
    struct bc_crawler_stats cwant;
    memset(&fwant, 0, sizeof(fwant));
    memset(&cwant, 0, sizeof(cwant));
    for (size_t k = 0; k < nf; k++)
        bc_counter_set(&ft[frow[k]], &fwant, felem[k],
                       key_value(old, n_old, fkeys[k], k));
    for (size_t k = 0; k < nc; k++)
        bc_counter_set(&ct[crow[k]], &cwant, celem[k],
                       key_value(old, n_old, ckeys[k], nf + k));
    /* Derived on load, not restored: pages in flight are handed out again
     * (handed_out restarts from the pages completed), and routed_out is
     * the frontier's reason "routed". */
    cwant.handed_out = cwant.pages + cwant.not_started;
    cwant.routed_out = fwant.reasons[BC_ADMIT_ROUTED];

    /* Run 1: the crawler resumes with them. */
    assert_int_equal(bc_crawl_state_open(dir, NULL, 0, &s, &err), BC_OK);
    struct bc_crawler *c = crawler_on(s);
    struct bc_frontier_stats fs;
    bc_frontier_counters(bc_crawler_frontier(c), &fs);
    struct bc_crawler_stats cs;
    bc_crawler_stats(c, &cs);
    for (size_t k = 0; k < nf; k++)
        if (bc_counter_u64(&ft[frow[k]], &fs, felem[k]) !=
            bc_counter_u64(&ft[frow[k]], &fwant, felem[k]))
            fail_msg("%s not restored", fkeys[k]);
    for (size_t k = 0; k < nc; k++)
        if (bc_counter_u64(&ct[crow[k]], &cs, celem[k]) !=
            bc_counter_u64(&ct[crow[k]], &cwant, celem[k]))
            fail_msg("%s not restored", ckeys[k]);
    /* Something to commit (a WARC position), then the commit saves the
     * counters through the tables. */
    struct bc_warc_position at;
    memset(&at, 0, sizeof(at));
    at.offset = 1;
    bc_crawl_state_set_warc(s, &at);
    assert_true(bc_crawl_state_pending(s));
    assert_int_equal(bc_crawler_sync(c), BC_OK);
    bc_crawler_free(c);
    bc_crawl_state_close(s);

    /* Run 2: the same keys, the same values. */
    assert_int_equal(bc_crawl_state_open(dir, NULL, 0, &s, &err), BC_OK);
    for (size_t k = 0; k < nf; k++)
        if (bc_crawl_state_counter_get(s, fkeys[k]) !=
            bc_counter_u64(&ft[frow[k]], &fwant, felem[k]))
            fail_msg("%s not saved", fkeys[k]);
    for (size_t k = 0; k < nc; k++)
        if (bc_crawl_state_counter_get(s, ckeys[k]) !=
            bc_counter_u64(&ct[crow[k]], &cwant, celem[k]))
            fail_msg("%s not saved", ckeys[k]);
    bc_crawl_state_close(s);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(base) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_sound),
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_value_types),
        cmocka_unit_test(test_state_round_trip),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
