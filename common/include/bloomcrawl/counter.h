/*
 * bloomcrawl/counter.h - every counter described once.
 *
 * The modules that keep statistics (the seen-test, the frontier, the
 * crawler, the crawl workers) each publish a table of struct bc_counter
 * next to their stats struct: one row per counter, with its name, kind,
 * unit and help text, and where its value lives in the stats struct. A
 * report, a JSON document, a saved crawl state or a metrics page walks the
 * tables instead of naming counters one by one, so a counter added to a
 * table (one line) appears in all of them.
 *
 * A row may describe an array of counters, one per value of an enum (the
 * frontier's admissions per reason, the crawler's failures per error
 * kind): count is the array's length, label the label's name ("reason")
 * and label_value(i) the name of element i, as a Prometheus label.
 *
 *     size_t n;
 *     const struct bc_counter *t = bc_frontier_counter_table(&n);
 *     struct bc_frontier_stats fs;
 *     bc_frontier_counters(frontier, &fs);
 *     for (size_t i = 0; i < n; i++)
 *         for (size_t j = 0; j < t[i].count; j++)
 *             printf("%s %g\n", t[i].name, bc_counter_value(&t[i], &fs, j));
 */
#ifndef BC_COMMON_COUNTER_H
#define BC_COMMON_COUNTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bc_counter_kind {
    /* Only grows over a crawl: kept across the runs of a crawl with a
     * state (saved and restored by name), a Prometheus counter. */
    BC_COUNTER_TOTAL,
    /* Grows over this process's life only (not saved: rebuilt from the
     * state, or meaningful for this run alone), a Prometheus counter. */
    BC_COUNTER_RUN_TOTAL,
    /* A level now, may go down (never saved), a Prometheus gauge. */
    BC_COUNTER_GAUGE
};

/* The C type of the value in the stats struct. */
enum bc_counter_type {
    BC_COUNTER_U64,   /* uint64_t */
    BC_COUNTER_SIZE,  /* size_t */
    BC_COUNTER_UINT,  /* unsigned int */
    BC_COUNTER_INT,   /* int */
    BC_COUNTER_BOOL,  /* bool (0 or 1) */
    BC_COUNTER_DOUBLE /* double */
};

struct bc_counter {
    const char *name; /* snake_case, unique in its table: "handed_out" */
    enum bc_counter_kind kind;
    enum bc_counter_type type;
    /* What the value counts, plural, as a Prometheus unit suffix would:
     * "urls", "pages", "bytes", "seconds", "ratio", "hosts", ...; "" for
     * a number without one (an index, an errno, a 0/1 flag). */
    const char *unit;
    const char *help;  /* one sentence, no trailing period */
    size_t offset;     /* offsetof() the value (its first element) */
    size_t count;      /* 1, or the length of the array */
    const char *label; /* arrays: the label's name */
    const char *(*label_value)(size_t i); /* arrays: element i's name */
    /* The crawl state's key of a TOTAL counter, where it is not name (a
     * key earlier versions wrote, kept so that their states resume with
     * their counters): NULL for name. See bc_counter_key(). */
    const char *key;
    /* An array whose state keys end in "[i]" (element i's index), not in
     * "." and label_value(i): an old key, kept. */
    bool key_indexed;
};

/*
 * The rows of a table, as the modules write them: BC_COUNTER_ROW for one
 * value, field `field` of the stats struct S (kd TOTAL, RUN_TOTAL or
 * GAUGE; ty U64, SIZE, UINT, INT, BOOL or DOUBLE), BC_COUNTER_ARRAY for a
 * uint64_t total array, one element per value of an enum whose names fn
 * gives (label lb; key ky the state's key or NULL for the name).
 */
#define BC_COUNTER_ROW(S, field, nm, kd, ty, un, hl)                           \
    {                                                                          \
        .name = nm, .kind = BC_COUNTER_##kd, .type = BC_COUNTER_##ty,          \
        .unit = un, .help = hl, .offset = offsetof(S, field), .count = 1       \
    }
#define BC_COUNTER_ARRAY(S, field, nm, un, lb, fn, ky, hl)                     \
    {                                                                          \
        .name = nm, .kind = BC_COUNTER_TOTAL, .type = BC_COUNTER_U64,          \
        .unit = un, .help = hl, .offset = offsetof(S, field),                  \
        .count = sizeof(((S *)0)->field) / sizeof(uint64_t), .label = lb,      \
        .label_value = fn, .key = ky                                           \
    }

/* The value of element i (0 for a single counter) of counter c in stats
 * (the module's stats struct), as a double (exact below 2^53) or as an
 * integer (exact for the integer types; a double is truncated, a
 * negative value is 0, one of 2^64 or more UINT64_MAX). */
double bc_counter_value(const struct bc_counter *c, const void *stats,
                        size_t i);
uint64_t bc_counter_u64(const struct bc_counter *c, const void *stats,
                        size_t i);

/* Set element i of counter c in stats to v (a restore from a saved
 * state; a bool gets v != 0). */
void bc_counter_set(const struct bc_counter *c, void *stats, size_t i,
                    uint64_t v);

/*
 * The crawl state's key of element i of counter c in the table of group
 * ("crawler", "frontier"): "GROUP.KEY" for a single counter,
 * "GROUP.KEY.LABEL_VALUE" for an array ("frontier.reason.robots"), or
 * "GROUP.KEY[i]" when c->key_indexed ("crawler.status_class[2]"); KEY is
 * c->key, or c->name when that is NULL. Written to buf (size bytes, NUL
 * included); returns false, buf undefined, when it does not fit.
 */
bool bc_counter_key(const struct bc_counter *c, const char *group, size_t i,
                    char *buf, size_t size);

/* The size in bytes of a value of type t (sizeof(uint64_t), ...), 0 for a
 * value outside the enum. */
size_t bc_counter_type_size(enum bc_counter_type t);

/* Names of the kinds: "total", "run_total", "gauge". */
const char *bc_counter_kind_name(enum bc_counter_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* BC_COMMON_COUNTER_H */
