/*
 * validators.c - the ETag and Last-Modified of each URL's last 2xx page,
 * in memory (validators_int.h; crawler.c, CONDITIONAL RECRAWLS).
 *
 * A uthash table keyed by the URL. An entry is one allocation: the hash
 * handle, the date, and the URL, ETag, Last-Modified, record id and
 * record URI one after the other, each NUL-terminated. Only a crawl that
 * can fetch a URL again within its run and has no state keeps it
 * (--recrawl-after without --state): with a state the validators table
 * holds the rows, and a crawl without a recrawl window never asks.
 */
#include "validators_int.h"

#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

struct entry {
    UT_hash_handle hh;
    int64_t date;
    size_t url_len;
    const char *etag, *last_modified, *record_id, *record_uri;
    char url[]; /* the key, then the other strings */
};

struct bc_validators {
    struct entry *table;
    size_t count;
};

enum bc_status bc_validators_create(struct bc_validators **out)
{
    if (!out)
        return BC_ERR_INVALID_ARG;
    struct bc_validators *v = calloc(1, sizeof(*v));
    if (!v)
        return BC_ERR_NOMEM;
    *out = v;
    return BC_OK;
}

void bc_validators_free(struct bc_validators *v)
{
    if (!v)
        return;
    struct entry *e, *tmp;
    HASH_ITER(hh, v->table, e, tmp)
    {
        HASH_DEL(v->table, e);
        free(e);
    }
    free(v);
}

/* Copy s (with its NUL) to *at and move *at past it; returns the copy. */
static const char *pack(char **at, const char *s, size_t len)
{
    char *copy = *at;
    memcpy(copy, s, len);
    copy[len] = '\0';
    *at += len + 1;
    return copy;
}

enum bc_status bc_validators_put(struct bc_validators *v,
                                 const struct bc_crawl_state_validators *row)
{
    if (!v || !row || !row->url || !row->etag || !row->last_modified ||
        !row->record_id || !row->record_uri)
        return BC_ERR_INVALID_ARG;
    size_t n[4] = {strlen(row->etag), strlen(row->last_modified),
                   strlen(row->record_id), strlen(row->record_uri)};
    size_t size = sizeof(struct entry) + row->url_len + 1;
    for (int i = 0; i < 4; i++) {
        if (n[i] > SIZE_MAX - size - 1)
            return BC_ERR_NOMEM;
        size += n[i] + 1;
    }
    struct entry *e = malloc(size);
    if (!e)
        return BC_ERR_NOMEM;
    char *at = e->url;
    (void)pack(&at, row->url, row->url_len);
    e->url_len = row->url_len;
    e->etag = pack(&at, row->etag, n[0]);
    e->last_modified = pack(&at, row->last_modified, n[1]);
    e->record_id = pack(&at, row->record_id, n[2]);
    e->record_uri = pack(&at, row->record_uri, n[3]);
    e->date = row->date;
    struct entry *old = NULL;
    HASH_REPLACE(hh, v->table, url, e->url_len, e, old);
    if (e->hh.tbl == NULL) {
        /* uthash could not allocate its first table (HASH_NONFATAL_OOM:
         * a full table that cannot grow still takes the entry), so the
         * table was empty: there was no old entry either. */
        free(e);
        return BC_ERR_NOMEM;
    }
    if (old)
        free(old);
    else
        v->count++;
    return BC_OK;
}

enum bc_status bc_validators_find(
    const struct bc_validators *v, const char *url, size_t url_len,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_validators *r),
    void *ctx)
{
    if (!v || !url || !fn)
        return BC_ERR_INVALID_ARG;
    struct entry *e = NULL;
    HASH_FIND(hh, v->table, url, url_len, e);
    if (!e)
        return BC_ERR_NOT_FOUND;
    struct bc_crawl_state_validators r = {
        .url = e->url,
        .url_len = e->url_len,
        .etag = e->etag,
        .last_modified = e->last_modified,
        .record_id = e->record_id,
        .record_uri = e->record_uri,
        .date = e->date,
    };
    return fn(ctx, &r);
}

size_t bc_validators_count(const struct bc_validators *v)
{
    return v ? v->count : 0;
}
