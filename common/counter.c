/*
 * counter.c - reading and writing a counter described by a table row.
 */
#include "bloomcrawl/counter.h"

#include <string.h>

static const unsigned char *at(const struct bc_counter *c, const void *stats,
                               size_t i, size_t size)
{
    return (const unsigned char *)stats + c->offset + i * size;
}

size_t bc_counter_type_size(enum bc_counter_type t)
{
    switch (t) {
    case BC_COUNTER_U64:
        return sizeof(uint64_t);
    case BC_COUNTER_SIZE:
        return sizeof(size_t);
    case BC_COUNTER_UINT:
        return sizeof(unsigned);
    case BC_COUNTER_INT:
        return sizeof(int);
    case BC_COUNTER_BOOL:
        return sizeof(bool);
    case BC_COUNTER_DOUBLE:
        return sizeof(double);
    }
    return 0;
}

/* A value as read: unsigned, signed or floating. */
struct raw {
    enum { RAW_UNSIGNED, RAW_SIGNED, RAW_DOUBLE } kind;
    uint64_t u;
    int64_t s;
    double d;
};

static struct raw load(const struct bc_counter *c, const void *stats, size_t i)
{
    const unsigned char *p = at(c, stats, i, bc_counter_type_size(c->type));
    struct raw r = {RAW_UNSIGNED, 0, 0, 0.0};
    switch (c->type) {
    case BC_COUNTER_U64:
        memcpy(&r.u, p, sizeof(r.u));
        break;
    case BC_COUNTER_SIZE: {
        size_t v;
        memcpy(&v, p, sizeof(v));
        r.u = v;
        break;
    }
    case BC_COUNTER_UINT: {
        unsigned v;
        memcpy(&v, p, sizeof(v));
        r.u = v;
        break;
    }
    case BC_COUNTER_INT: {
        int v;
        memcpy(&v, p, sizeof(v));
        r.kind = RAW_SIGNED;
        r.s = v;
        break;
    }
    case BC_COUNTER_BOOL: {
        bool v;
        memcpy(&v, p, sizeof(v));
        r.u = v ? 1 : 0;
        break;
    }
    case BC_COUNTER_DOUBLE:
        r.kind = RAW_DOUBLE;
        memcpy(&r.d, p, sizeof(r.d));
        break;
    }
    return r;
}

double bc_counter_value(const struct bc_counter *c, const void *stats, size_t i)
{
    struct raw r = load(c, stats, i);
    switch (r.kind) {
    case RAW_UNSIGNED:
        return (double)r.u;
    case RAW_SIGNED:
        return (double)r.s;
    case RAW_DOUBLE:
        return r.d;
    }
    return 0.0;
}

uint64_t bc_counter_u64(const struct bc_counter *c, const void *stats, size_t i)
{
    /* Each integer type read as itself: through a double, a size_t above
     * 2^53 would lose its low bits. */
    struct raw r = load(c, stats, i);
    switch (r.kind) {
    case RAW_UNSIGNED:
        return r.u;
    case RAW_SIGNED:
        return r.s > 0 ? (uint64_t)r.s : 0;
    case RAW_DOUBLE:
        /* 2^64 and above do not fit (the conversion would be undefined);
         * NaN and negatives are 0. */
        if (!(r.d > 0))
            return 0;
        return r.d >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)r.d;
    }
    return 0;
}

void bc_counter_set(const struct bc_counter *c, void *stats, size_t i,
                    uint64_t v)
{
    unsigned char *p =
        (unsigned char *)stats + c->offset + i * bc_counter_type_size(c->type);
    switch (c->type) {
    case BC_COUNTER_U64:
        memcpy(p, &v, sizeof(v));
        return;
    case BC_COUNTER_SIZE: {
        size_t s = (size_t)v;
        memcpy(p, &s, sizeof(s));
        return;
    }
    case BC_COUNTER_UINT: {
        unsigned u = (unsigned)v;
        memcpy(p, &u, sizeof(u));
        return;
    }
    case BC_COUNTER_INT: {
        int n = (int)v;
        memcpy(p, &n, sizeof(n));
        return;
    }
    case BC_COUNTER_BOOL: {
        bool b = v != 0;
        memcpy(p, &b, sizeof(b));
        return;
    }
    case BC_COUNTER_DOUBLE: {
        double d = (double)v;
        memcpy(p, &d, sizeof(d));
        return;
    }
    }
}

const char *bc_counter_kind_name(enum bc_counter_kind kind)
{
    switch (kind) {
    case BC_COUNTER_TOTAL:
        return "total";
    case BC_COUNTER_RUN_TOTAL:
        return "run_total";
    case BC_COUNTER_GAUGE:
        return "gauge";
    }
    return "?";
}

/* Append the n bytes of s at *at in buf (size bytes), if they fit with a
 * NUL after them; false otherwise. */
static bool append(char *buf, size_t size, size_t *at, const char *s, size_t n)
{
    if (n >= size - *at)
        return false;
    memcpy(buf + *at, s, n);
    *at += n;
    return true;
}

/* Written by hand, not with snprintf: the crawl state forms every total's
 * key at each commit (about 90 of them), and snprintf took several
 * times as long (38 against 8 us for the crawler's 88 keys). */
bool bc_counter_key(const struct bc_counter *c, const char *group, size_t i,
                    char *buf, size_t size)
{
    const char *key = c->key ? c->key : c->name;
    size_t at = 0;
    if (size == 0 || !append(buf, size, &at, group, strlen(group)) ||
        !append(buf, size, &at, ".", 1) ||
        !append(buf, size, &at, key, strlen(key)))
        return false;
    if (c->label && c->key_indexed) {
        char digits[24];
        size_t n = sizeof(digits);
        digits[--n] = ']';
        do
            digits[--n] = (char)('0' + i % 10);
        while ((i /= 10) != 0);
        digits[--n] = '[';
        if (!append(buf, size, &at, digits + n, sizeof(digits) - n))
            return false;
    } else if (c->label) {
        const char *v = c->label_value(i);
        if (!append(buf, size, &at, ".", 1) ||
            !append(buf, size, &at, v, strlen(v)))
            return false;
    }
    buf[at] = '\0';
    return true;
}
