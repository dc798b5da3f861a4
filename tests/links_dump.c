/*
 * links_dump.c - print the links bloomcrawl extracts from a corpus, for
 * the parse5 differential test (tests/diff_parse5.py).
 *
 * Usage: links_dump CORPUS
 * CORPUS holds documents as "LENGTH\n" followed by LENGTH bytes. Each
 * document is fed in 7-byte chunks (so chunk boundaries fall everywhere)
 * to an extractor with the document URL "http://doc.test/"; the output
 * is, per document:
 *   doc N
 *   link KIND HREF          (KIND: ANCHOR, FRAME or LINK; HREF escaped)
 *   base HREF               (the <base href> the links after it carry)
 *   end
 * with bytes outside printable ASCII, and backslash, written \xHH.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/links.h"

static void esc(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > 0x20 && c < 0x7F && c != '\\')
            putchar(c);
        else
            printf("\\x%02x", c);
    }
}

struct state {
    const char *base;
    size_t base_len;
};

static void on_link(void *user, const char *href, size_t len, const char *base,
                    size_t base_len, unsigned flags)
{
    struct state *st = user;
    const char *kind = (flags & BC_LINK_ANCHOR)  ? "ANCHOR"
                       : (flags & BC_LINK_FRAME) ? "FRAME"
                                                 : "LINK";
    printf("link %s ", kind);
    esc(href, len);
    putchar('\n');
    if ((flags & BC_LINK_BASE_HREF) && !st->base) {
        st->base = base;
        st->base_len = base_len;
        printf("base ");
        esc(base, base_len);
        putchar('\n');
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: links_dump CORPUS\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t len;
    unsigned long doc = 0;
    while (fscanf(f, "%zu", &len) == 1 && fgetc(f) == '\n') {
        char *buf = malloc(len ? len : 1);
        if (!buf || fread(buf, 1, len, f) != len) {
            fprintf(stderr, "links_dump: short document %lu\n", doc);
            return 1;
        }
        struct state st = {NULL, 0};
        struct bc_links_config cfg;
        struct bc_links *p;
        bc_links_config_init(&cfg);
        cfg.on_link = on_link;
        cfg.user = &st;
        if (bc_links_create(&cfg, "http://doc.test/", 16, &p) != BC_OK)
            return 1;
        printf("doc %lu\n", doc++);
        for (size_t off = 0; off < len; off += 7)
            bc_links_feed(p, buf + off, len - off < 7 ? len - off : 7);
        bc_links_finish(p);
        bc_links_free(p);
        printf("end\n");
        free(buf);
    }
    fclose(f);
    return 0;
}
