/*
 * validators_int.h - the ETag and Last-Modified of each URL's last 2xx
 * page, in memory, private to the crawler module (never installed): what
 * a recrawl's conditional request sends when the crawl has no state
 * (crawler.c, CONDITIONAL RECRAWLS; with a state the validators table
 * holds them). The tests include it.
 */
#ifndef BC_CRAWLER_VALIDATORS_INT_H
#define BC_CRAWLER_VALIDATORS_INT_H

#include <stddef.h>

#include "bloomcrawl/status.h"
#include "state_int.h"

struct bc_validators;

/* An empty table into *out (free it with bc_validators_free()). Returns
 * BC_OK, BC_ERR_INVALID_ARG (NULL out) or BC_ERR_NOMEM. */
enum bc_status bc_validators_create(struct bc_validators **out);

/* Free the table; NULL is a no-op. */
void bc_validators_free(struct bc_validators *v);

/* Keep row (its strings copied; a URL's earlier row replaced). Returns
 * BC_OK, BC_ERR_INVALID_ARG (NULL argument or field) or BC_ERR_NOMEM
 * (the table left as it was). O(1) expected. */
enum bc_status bc_validators_put(struct bc_validators *v,
                                 const struct bc_crawl_state_validators *row);

/* Call fn once with url's row and return what it returns, as
 * bc_crawl_state_validators_find() does; BC_ERR_NOT_FOUND when url has
 * none, BC_ERR_INVALID_ARG for a NULL argument. O(1) expected. */
enum bc_status bc_validators_find(
    const struct bc_validators *v, const char *url, size_t url_len,
    enum bc_status (*fn)(void *ctx, const struct bc_crawl_state_validators *r),
    void *ctx);

/* The rows kept. O(1). */
size_t bc_validators_count(const struct bc_validators *v);

#endif /* BC_CRAWLER_VALIDATORS_INT_H */
