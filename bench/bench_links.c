/*
 * bench_links.c - link extraction speed: bloomcrawl's tokenizer against
 * libxml2's HTML push parser, on the same pages in the same run.
 *
 * Usage: bench_links [--rounds N] [--chunk BYTES] [--only PARSER] DIR...
 *
 * Every *.html file under the DIRs is read into memory first. A round
 * feeds every page, in chunks of --chunk bytes (16 KiB by default, about
 * what curl hands a write callback), to a fresh extractor:
 *   - bloomcrawl: bc_links_create / _feed / _finish / _free;
 *   - libxml2: htmlCreatePushParserCtxt with a SAX handler that has only
 *     startElement (what bloomcrawl's extractor did before issue 12: no
 *     tree), htmlParseChunk, the same attribute look-ups for a/area href.
 * The CPU time of each round is taken with CLOCK_PROCESS_CPUTIME_ID (the
 * machine may be shared: CPU time, not wall time); the median of
 * the rounds is reported as nanoseconds per input byte, with the links
 * each found. Prints one CSV line per parser:
 *   parser,files,bytes,links,rounds,median_s,ns_per_byte,mb_per_s
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_html_files.h"
#include "bloomcrawl/links.h"

#ifdef BC_BENCH_LIBXML2
#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#endif

struct page {
    char *data;
    size_t len;
};

static struct page *pages;
static size_t n_pages, cap_pages, total_bytes;

static void add_file(const char *path, size_t size)
{
    (void)size;
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0) {
        fclose(f);
        return;
    }
    char *buf = malloc((size_t)st.st_size);
    if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        free(buf);
        fclose(f);
        return;
    }
    fclose(f);
    if (n_pages == cap_pages) {
        cap_pages = cap_pages ? cap_pages * 2 : 1024;
        pages = realloc(pages, cap_pages * sizeof(*pages));
        if (!pages)
            exit(1);
    }
    pages[n_pages].data = buf;
    pages[n_pages].len = (size_t)st.st_size;
    n_pages++;
    total_bytes += (size_t)st.st_size;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t chunk = 16384;

static uint64_t run_bloomcrawl(void)
{
    uint64_t links = 0;
    struct bc_links_config cfg;
    bc_links_config_init(&cfg);
    for (size_t i = 0; i < n_pages; i++) {
        struct bc_links *p;
        if (bc_links_create(&cfg, "http://bench.test/", 18, &p) != BC_OK)
            exit(1);
        for (size_t off = 0; off < pages[i].len; off += chunk) {
            size_t n = pages[i].len - off < chunk ? pages[i].len - off : chunk;
            bc_links_feed(p, pages[i].data + off, n);
        }
        bc_links_finish(p);
        struct bc_links_stats st;
        bc_links_stats(p, &st);
        links += st.links;
        bc_links_free(p);
    }
    return links;
}

#ifdef BC_BENCH_LIBXML2
static void sax_start(void *ctx, const xmlChar *name, const xmlChar **atts)
{
    uint64_t *links = ctx;
    if (!atts || (strcmp((const char *)name, "a") != 0 &&
                  strcmp((const char *)name, "area") != 0))
        return;
    for (size_t i = 0; atts[i]; i += 2) {
        if (strcmp((const char *)atts[i], "href") == 0) {
            (*links)++;
            return;
        }
    }
}

static void sax_error(void *ctx, xmlErrorPtr err)
{
    (void)ctx;
    (void)err;
}

static uint64_t run_libxml2(void)
{
    uint64_t links = 0;
    xmlSetStructuredErrorFunc(NULL, sax_error);
    for (size_t i = 0; i < n_pages; i++) {
        xmlSAXHandler sax;
        memset(&sax, 0, sizeof(sax));
        sax.startElement = sax_start;
        sax.serror = sax_error;
        sax.initialized = XML_SAX2_MAGIC;
        htmlParserCtxtPtr ctxt = htmlCreatePushParserCtxt(
            &sax, &links, NULL, 0, NULL, XML_CHAR_ENCODING_NONE);
        if (!ctxt)
            exit(1);
        htmlCtxtUseOptions(ctxt, HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                     HTML_PARSE_NONET);
        for (size_t off = 0; off < pages[i].len; off += chunk) {
            size_t n = pages[i].len - off < chunk ? pages[i].len - off : chunk;
            htmlParseChunk(ctxt, pages[i].data + off, (int)n, 0);
        }
        htmlParseChunk(ctxt, "", 0, 1);
        if (ctxt->myDoc)
            xmlFreeDoc(ctxt->myDoc);
        htmlFreeParserCtxt(ctxt);
    }
    return links;
}
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void measure(const char *name, uint64_t (*fn)(void), int rounds)
{
    double *t = malloc((size_t)rounds * sizeof(double));
    uint64_t links = 0;
    if (!t)
        exit(1);
    fn(); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        links = fn();
        t[r] = now() - t0;
    }
    qsort(t, (size_t)rounds, sizeof(double), cmp_double);
    double med = t[rounds / 2];
    printf("%s,%zu,%zu,%llu,%d,%.6f,%.3f,%.1f\n", name, n_pages, total_bytes,
           (unsigned long long)links, rounds, med, med * 1e9 / total_bytes,
           total_bytes / med / 1e6);
    free(t);
}

int main(int argc, char **argv)
{
    int rounds = 11;
    const char *only = NULL; /* "bloomcrawl" or "libxml2": run just one */
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            return 2;
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--chunk") == 0)
            chunk = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
        else
            return 2;
    }
    if (i >= argc || rounds < 1 || chunk == 0) {
        fprintf(stderr, "usage: bench_links [--rounds N] [--chunk BYTES] "
                        "[--only PARSER] DIR...\n");
        return 2;
    }
    for (; i < argc; i++)
        bench_html_files(argv[i], add_file);
    if (n_pages == 0) {
        fprintf(stderr, "bench_links: no .html files\n");
        return 1;
    }
    printf("parser,files,bytes,links,rounds,median_s,ns_per_byte,mb_per_s\n");
    if (!only || strcmp(only, "bloomcrawl") == 0)
        measure("bloomcrawl", run_bloomcrawl, rounds);
#ifdef BC_BENCH_LIBXML2
    xmlInitParser();
    if (!only || strcmp(only, "libxml2") == 0)
        measure("libxml2", run_libxml2, rounds);
#endif
    for (size_t k = 0; k < n_pages; k++)
        free(pages[k].data);
    free(pages);
    return 0;
}
