/*
 * status_page.h - the live status page of crawl --listen (GET /).
 *
 * One self-contained HTML document compiled into the program: it polls
 * GET /status and GET /hosts and draws them. Static, read-only, valid
 * for the life of the process.
 */
#ifndef BC_EXAMPLES_STATUS_PAGE_H
#define BC_EXAMPLES_STATUS_PAGE_H

#include <stddef.h>

/* The page's bytes; *len gets their length. */
const char *crawl_status_page(size_t *len);

#endif /* BC_EXAMPLES_STATUS_PAGE_H */
