/*
 * fuzz_sitemap.c - libFuzzer target for fetcher/sitemap.c.
 *
 * Input: the first byte picks the chunk size (1..256) and small limits
 * (so that max_urls and max_bytes are reached), the rest is a sitemap
 * body, plain or gzip. Beyond "never crash, leak or trip a sanitizer" it
 * checks what must always hold: no entry beyond max_urls, no <loc> empty
 * or longer than max_loc_bytes, never more XML parsed than max_bytes,
 * and a stop reason inside the enum.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/sitemap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    const struct bc_sitemap_config *cfg;
    uint64_t entries;
};

static void on_entry(void *user, const struct bc_sitemap_entry *e)
{
    struct seen *s = user;
    s->entries++;
    if (s->entries > s->cfg->max_urls || e->loc_len == 0 ||
        e->loc_len > s->cfg->max_loc_bytes || e->loc == NULL ||
        (e->kind != BC_SITEMAP_URLSET && e->kind != BC_SITEMAP_INDEX))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    size_t chunk = 1 + (data[0] & 0x0f) * 16;
    if (data[0] & 0x10)
        cfg.max_urls = 3;
    if (data[0] & 0x20)
        cfg.max_bytes = 512;
    if (data[0] & 0x40)
        cfg.max_loc_bytes = 8;
    struct seen s = {&cfg, 0};
    cfg.on_entry = on_entry;
    cfg.user = &s;
    struct bc_sitemap *sm;
    if (bc_sitemap_create(&cfg, &sm) != BC_OK)
        return 0;
    for (size_t at = 1; at < size; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        if (bc_sitemap_feed(sm, data + at, n) != BC_OK)
            abort();
    }
    if (bc_sitemap_finish(sm) != BC_OK)
        abort();
    struct bc_sitemap_stats st;
    bc_sitemap_stats(sm, &st);
    if (st.entries != s.entries || st.bytes_xml > cfg.max_bytes ||
        st.bytes_in != size - 1 ||
        bc_sitemap_stopped(sm) >= BC_SITEMAP_STOP_COUNT)
        abort();
    bc_sitemap_free(sm);
    return 0;
}
