/*
 * payloads.c - the index of payload digests (payloads_int.h).
 *
 * The problem: the web serves the same bytes under many URLs (mirrors,
 * session IDs in paths, print versions, sort orders) that no URL
 * normalization can prove equal. A crawl that archives each of them
 * stores the same payload again and again. The WARC writer already
 * hashes every payload (the SHA-1 of WARC-Payload-Digest); if the crawl
 * remembers, for each digest, the first response that had it, a later
 * response with the same digest can be archived as a revisit record that
 * names that first one (WARC 1.1 section 6.7.2), as Heritrix and wget
 * --warc-dedup do.
 *
 * The idea: a hash table keyed by the 20-byte digest (uthash; the key is
 * already uniformly random, so any hash of it spreads well), the value
 * what a revisit record needs of the original: its WARC-Record-ID, its
 * target URI and its date. Entries are never removed (a crawl's payloads
 * only grow) and each is one allocation, so a pointer to an entry's
 * strings stays valid for the index's life.
 *
 * Why exact SHA-1 and not a Bloom filter of digests: a false positive
 * here would archive a page as a revisit of a record that holds other
 * bytes, losing the page; a false positive of the URL seen-test only
 * skips a URL. SHA-1 collisions are only a concern against an adversary
 * who crafts two pages, each of which the crawl would then keep once:
 * the WARC format names SHA-1, and readers compare it.
 *
 * MEMORY: an entry is one allocation of 136 bytes (the hash handle, 56
 * on LP64; the date, 8; the record id, 48; the digest, 20; padded to 8)
 * plus its URL and NUL; the table adds a bucket of 16 bytes for every 1
 * to 10 entries (uthash doubles its buckets as its chains grow). Counted
 * by bc_payloads_memory(): 146.5 bytes an entry beside its URL at 10^5
 * entries (tests/test_payloads.c checks 137 to 152), to which malloc
 * adds about 16 bytes an allocation: 10^6 distinct payloads with 60-byte
 * URLs hold about 220 MB. The crawl state keeps the same rows on disk
 * (crawler/state.c's payloads table), read back into this index when a
 * crawl resumes.
 */
#include "payloads_int.h"

#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

struct entry {
    UT_hash_handle hh;
    time_t date;
    char id[BC_WARC_ID_SIZE];
    unsigned char digest[BC_PAYLOAD_DIGEST_SIZE];
    char url[]; /* NUL-terminated */
};

struct bc_payloads {
    struct entry *table;
    size_t bytes; /* entries and their URLs */
};

enum bc_status bc_payloads_create(struct bc_payloads **out)
{
    if (!out)
        return BC_ERR_INVALID_ARG;
    struct bc_payloads *p = calloc(1, sizeof(*p));
    if (!p)
        return BC_ERR_NOMEM;
    *out = p;
    return BC_OK;
}

void bc_payloads_free(struct bc_payloads *p)
{
    if (!p)
        return;
    struct entry *e, *tmp;
    HASH_ITER(hh, p->table, e, tmp)
    {
        HASH_DEL(p->table, e);
        free(e);
    }
    free(p);
}

static struct entry *find(const struct bc_payloads *p,
                          const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE])
{
    struct entry *e = NULL;
    HASH_FIND(hh, p->table, digest, BC_PAYLOAD_DIGEST_SIZE, e);
    return e;
}

bool bc_payloads_find(const struct bc_payloads *p,
                      const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE],
                      struct bc_payload_ref *out)
{
    if (!p || !digest)
        return false;
    struct entry *e = find(p, digest);
    if (e && out)
        *out = (struct bc_payload_ref){e->url, e->id, e->date};
    return e != NULL;
}

enum bc_status
bc_payloads_add(struct bc_payloads *p,
                const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE],
                const char *url, size_t url_len, const char *id, time_t date)
{
    if (!p || !digest || !url || (id && strlen(id) >= BC_WARC_ID_SIZE) ||
        url_len > SIZE_MAX - sizeof(struct entry) - 1)
        return BC_ERR_INVALID_ARG;
    if (find(p, digest))
        return BC_OK; /* the first URL stays */
    size_t size = sizeof(struct entry) + url_len + 1;
    struct entry *e = calloc(1, size);
    if (!e)
        return BC_ERR_NOMEM;
    memcpy(e->digest, digest, BC_PAYLOAD_DIGEST_SIZE);
    memcpy(e->url, url, url_len);
    if (id)
        memcpy(e->id, id, strlen(id) + 1);
    e->date = date;
    HASH_ADD_KEYPTR(hh, p->table, e->digest, BC_PAYLOAD_DIGEST_SIZE, e);
    if (e->hh.tbl == NULL) { /* uthash could not allocate its table */
        free(e);
        return BC_ERR_NOMEM;
    }
    p->bytes += size;
    return BC_OK;
}

enum bc_status
bc_payloads_set_record(struct bc_payloads *p,
                       const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE],
                       const char *id, time_t date)
{
    if (!p || !digest || !id || !*id || strlen(id) >= BC_WARC_ID_SIZE)
        return BC_ERR_INVALID_ARG;
    struct entry *e = find(p, digest);
    if (!e)
        return BC_ERR_NOT_FOUND;
    if (!e->id[0]) {
        memcpy(e->id, id, strlen(id) + 1);
        e->date = date;
    }
    return BC_OK;
}

size_t bc_payloads_count(const struct bc_payloads *p)
{
    return p ? HASH_COUNT(p->table) : 0;
}

size_t bc_payloads_memory(const struct bc_payloads *p)
{
    if (!p || !p->table)
        return p ? sizeof(*p) : 0;
    return sizeof(*p) + p->bytes +
           p->table->hh.tbl->num_buckets * sizeof(struct UT_hash_bucket) +
           sizeof(UT_hash_table);
}
