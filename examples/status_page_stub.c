/*
 * status_page_stub.c - a minimal GET / for crawl --listen, until the live
 * page (examples/status_page.html, issue 22 section 1) replaces this
 * file: it only links the endpoints the real page will draw.
 */
#include "status_page.h"

static const char page[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\"><head><meta charset=\"utf-8\">"
    "<title>bloomcrawl</title></head>\n"
    "<body><h1>bloomcrawl: crawl --listen</h1>\n"
    "<ul><li><a href=\"/status\">/status</a>: the --stats-json document, "
    "live</li>\n"
    "<li><a href=\"/hosts?sort=pages&amp;limit=20\">/hosts</a>: the "
    "per-host table</li>\n"
    "<li><a href=\"/metrics\">/metrics</a>: Prometheus metrics</li></ul>\n"
    "</body></html>\n";

const char *crawl_status_page(size_t *len)
{
    *len = sizeof(page) - 1;
    return page;
}
