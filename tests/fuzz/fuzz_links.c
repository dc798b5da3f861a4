/*
 * fuzz_links.c - libFuzzer target for the streaming HTML link extractor.
 *
 * The input's first two bytes choose where to cut the rest into up to
 * three chunks (so the fuzzer explores chunk boundaries inside tags,
 * comments and entities); the third chooses a small href cap. The
 * extractor must never crash or leak, must report every link and base
 * within the cap (and NUL-free: the tokenizer turns NUL into U+FFFD),
 * its counters must agree with the callbacks, and the links (a hash of
 * href, base and flags in order) must be the same as when the input is
 * fed whole: chunk invariance.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/links.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    size_t cap;
    uint64_t links;
    uint64_t hash; /* FNV-1a over the links in order */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211u;
    return h;
}

static void on_link(void *user, const char *href, size_t len, const char *base,
                    size_t base_len, unsigned flags)
{
    struct seen *s = user;
    if (len > s->cap || base == NULL)
        abort();
    if ((flags & BC_LINK_BASE_HREF) && base_len > s->cap)
        abort();
    if (memchr(href, 0, len) || memchr(base, 0, base_len))
        abort();
    if (flags & ~0x1ffu)
        abort(); /* unknown flag bits */
    s->links++;
    s->hash = fnv(s->hash, href, len);
    s->hash = fnv(s->hash, "\0", 1);
    s->hash = fnv(s->hash, base, base_len);
    s->hash = fnv(s->hash, &flags, sizeof(flags));
}

/* Feed data in up to three pieces; 0 when every call succeeded. */
static int run(struct seen *s, const uint8_t *data, size_t size, size_t cut1,
               size_t cut2, unsigned *page)
{
    struct bc_links_config cfg;
    struct bc_links *p;
    bc_links_config_init(&cfg);
    cfg.on_link = on_link;
    cfg.user = s;
    cfg.max_href_bytes = s->cap;
    if (bc_links_create(&cfg, "http://fuzz.test/", 17, &p) != BC_OK)
        return -1;
    if (bc_links_feed(p, data, cut1) != BC_OK ||
        bc_links_feed(p, data + cut1, cut2 - cut1) != BC_OK ||
        bc_links_feed(p, data + cut2, size - cut2) != BC_OK ||
        bc_links_finish(p) != BC_OK)
        abort(); /* only out of memory may fail, and it does not here */
    struct bc_links_stats st;
    bc_links_stats(p, &st);
    if (st.links != s->links || st.bytes != size)
        abort();
    *page = bc_links_page_flags(p);
    if (*page & ~3u)
        abort();
    bc_links_free(p);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t cut1 = data[0];
    size_t cut2 = data[1];
    size_t caps[] = {BC_LINKS_DEFAULT_MAX_HREF, 1, 16, 64};
    struct seen s = {caps[data[2] & 3], 0, 14695981039346656037u};
    struct seen whole = s;
    data += 3;
    size -= 3;
    /* Scale the cut bytes to positions in the rest of the input. */
    cut1 = cut1 * size / 256;
    cut2 = cut1 + cut2 * (size - cut1) / 256;

    unsigned page_split, page_whole;
    if (run(&s, data, size, cut1, cut2, &page_split) != 0 ||
        run(&whole, data, size, size, size, &page_whole) != 0)
        return 0;
    if (s.links != whole.links || s.hash != whole.hash ||
        page_split != page_whole)
        abort(); /* the links depend on where the input was cut */
    return 0;
}
