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
 * fed whole: chunk invariance. The split run and one whole run have a
 * text sink (on_text): its text (a hash of the runs concatenated) must
 * be the same however the input was cut, no run may be empty, and the
 * links must be those of a run without the sink.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/links.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
    size_t cap;
    uint64_t links;
    uint64_t hash; /* FNV-1a over the links in order */
    uint64_t text; /* FNV-1a over the text, runs concatenated */
    uint64_t text_len;
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

static void on_text(void *user, const char *text, size_t len)
{
    struct seen *s = user;
    if (len == 0 || text == NULL)
        abort();
    s->text = fnv(s->text, text, len);
    s->text_len += len;
}

/* Feed data in up to three pieces, with a text sink or not; 0 when
 * every call succeeded. */
static int run(struct seen *s, const uint8_t *data, size_t size, size_t cut1,
               size_t cut2, bool text, unsigned *page)
{
    struct bc_links_config cfg;
    struct bc_links *p;
    bc_links_config_init(&cfg);
    cfg.on_link = on_link;
    cfg.on_text = text ? on_text : NULL;
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
    struct seen s = {caps[data[2] & 3], 0, 14695981039346656037u,
                     14695981039346656037u, 0};
    struct seen whole = s, plain = s;
    data += 3;
    size -= 3;
    /* Scale the cut bytes to positions in the rest of the input. */
    cut1 = cut1 * size / 256;
    cut2 = cut1 + cut2 * (size - cut1) / 256;

    unsigned page_split, page_whole, page_plain;
    if (run(&s, data, size, cut1, cut2, true, &page_split) != 0 ||
        run(&whole, data, size, size, size, true, &page_whole) != 0 ||
        run(&plain, data, size, size, size, false, &page_plain) != 0)
        return 0;
    if (s.links != whole.links || s.hash != whole.hash ||
        page_split != page_whole)
        abort(); /* the links depend on where the input was cut */
    if (s.text != whole.text || s.text_len != whole.text_len)
        abort(); /* the text depends on where the input was cut */
    if (plain.links != whole.links || plain.hash != whole.hash ||
        page_plain != page_whole || plain.text_len != 0)
        abort(); /* the text sink changed the links */
    return 0;
}
