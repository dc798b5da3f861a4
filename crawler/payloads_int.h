/*
 * payloads_int.h - the crawl's index of payload digests, private to the
 * crawler module (never installed): which URL's response first had each
 * payload, and which WARC record holds it (crawler.c, IDENTICAL
 * PAYLOADS). The tests include it.
 */
#ifndef BC_CRAWLER_PAYLOADS_INT_H
#define BC_CRAWLER_PAYLOADS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "bloomcrawl/status.h"
#include "bloomcrawl/warc.h"

/* The size of a payload digest: SHA-1's, as WARC-Payload-Digest's. */
#define BC_PAYLOAD_DIGEST_SIZE 20

struct bc_payloads;

/* What the index keeps of a payload's first response. The strings are the
 * index's, valid until the index is freed (an entry is never removed;
 * bc_payloads_set_record() writes id in place). */
struct bc_payload_ref {
    const char *url; /* the first URL whose response had the payload */
    const char *id;  /* its WARC-Record-ID, "" when none was written */
    time_t date;     /* its WARC-Date (the transfer's start) */
};

/* An empty index into *out (free it with bc_payloads_free()). Returns
 * BC_OK, BC_ERR_INVALID_ARG (NULL out) or BC_ERR_NOMEM. */
enum bc_status bc_payloads_create(struct bc_payloads **out);

/* Free the index; NULL is a no-op. */
void bc_payloads_free(struct bc_payloads *p);

/* Whether digest is in the index; if so *out (when not NULL) is its
 * entry. O(1) expected. */
bool bc_payloads_find(const struct bc_payloads *p,
                      const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE],
                      struct bc_payload_ref *out);

/*
 * Index digest as first seen at URL (url_len bytes, no NUL inside),
 * archived as record ID ("" or NULL: no record) fetched at DATE. A digest
 * already there is left as it is: the first URL stays. Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL argument, an id too long) or BC_ERR_NOMEM (the
 * index unchanged). O(url_len) expected.
 */
enum bc_status
bc_payloads_add(struct bc_payloads *p,
                const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE],
                const char *url, size_t url_len, const char *id, time_t date);

/*
 * Give digest's entry, indexed with no record (first seen without a WARC
 * writer), the record ID fetched at DATE: the first record that holds the
 * payload, which later revisits name. An entry with a record keeps it.
 * Returns BC_OK, BC_ERR_NOT_FOUND (no such digest) or BC_ERR_INVALID_ARG
 * (NULL argument, "" or an id too long). O(1) expected.
 */
enum bc_status
bc_payloads_set_record(struct bc_payloads *p,
                       const unsigned char digest[BC_PAYLOAD_DIGEST_SIZE],
                       const char *id, time_t date);

/* The digests indexed (0 for NULL). O(1). */
size_t bc_payloads_count(const struct bc_payloads *p);

/* The bytes the index holds in memory (0 for NULL): entries, their URLs
 * and the hash table's buckets. O(1). */
size_t bc_payloads_memory(const struct bc_payloads *p);

#endif /* BC_CRAWLER_PAYLOADS_INT_H */
