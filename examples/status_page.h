/*
 * status_page.h - the live status page of crawl --listen (GET /).
 *
 * The page is examples/status_page.html: one self-contained HTML file
 * (inline CSS and script, no external fetch) that polls the crawl's
 * /status and /hosts and draws the crawl as it goes. The build compiles
 * it into crawl (cmake/embed_file.cmake makes a C array of it), so the
 * program serves it with no file to find at run time.
 */
#ifndef BC_EXAMPLES_STATUS_PAGE_H
#define BC_EXAMPLES_STATUS_PAGE_H

#include <stddef.h>

/*
 * The page's bytes (static storage, never freed; NUL-terminated after
 * its *len bytes) and its length in *len.
 */
const char *crawl_status_page(size_t *len);

#endif /* BC_EXAMPLES_STATUS_PAGE_H */
