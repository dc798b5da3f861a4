/*
 * status_page.c - the bytes of examples/status_page.html, compiled in.
 *
 * status_page_html.inc is generated in the build directory from the HTML
 * file by cmake/embed_file.cmake each time the HTML changes: the file's
 * bytes as hex constants, then a 0 so that the page is also a C string.
 * Editing the page is editing the HTML; nothing here changes.
 */
#include "status_page.h"

static const unsigned char page[] = {
#include "status_page_html.inc"
};

const char *crawl_status_page(size_t *len)
{
    /* The last byte is the terminating 0 the generator appends. */
    *len = sizeof page - 1;
    return (const char *)page;
}
