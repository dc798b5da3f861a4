/*
 * bench_simhash.c - the simhash fingerprint's cost per byte of text, and
 * the index's insert and query times at 10^7 fingerprints (issue 24).
 *
 * Usage: bench_simhash [--rounds N] [--n N] [--blocks B] [--queries Q]
 *                      [--only text|index] DIR...
 *
 * text: every *.html file under the DIRs is read into memory, and its
 * text is cut out the way the crawler's tokenizer hands it over: the runs
 * between tags, outside script, style and template, each run one
 * bc_simhash_feed_text() call (entities left as they are). A round
 * fingerprints every page; the CPU time of each round
 * (CLOCK_PROCESS_CPUTIME_ID: the machine is shared) is divided by the
 * bytes of text, and by the bytes of HTML. Baselines in the same run, on
 * the same bytes: XXH3-64 over each page's text (one pass at memory
 * speed), and - when built with the fetcher - bloomcrawl's link extractor
 * over each page's HTML (what the crawl already does per byte).
 * Medians of the rounds:
 *   text,what,pages,bytes,rounds,median_s,ns_per_byte
 *
 * index: n random fingerprints (--n, 10^7 by default) are added to an
 * index of the default layout for n (or --blocks B); the adds are timed
 * in slices of n/10 (CPU time per add of each slice), then rounds of Q
 * queries (--queries, 10^6) are timed: misses (random fingerprints),
 * hits (a stored fingerprint with 1 to 3 bits flipped) and
 * test_and_add of new random fingerprints. A brute-force scan of the n
 * fingerprints is the baseline (100 queries). Medians of the rounds:
 *   index,what,n,tables,rounds,median_ns_per_op,probes_per_op
 * and the memory per fingerprint.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bench_html_files.h"
#include "bloomcrawl/simhash.h"
#ifdef BC_BENCH_LINKS
#include "bloomcrawl/links.h"
#endif

struct page {
    char *html;
    size_t len;
    char *text;   /* the text runs, back to back */
    size_t *runs; /* each run's length */
    size_t nruns, text_len;
};

static struct page *pages;
static size_t n_pages, cap_pages, html_bytes, text_bytes;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "bench_simhash: out of memory\n");
        exit(1);
    }
    return p;
}

/* Does the tag at s (after '<') open or close name? */
static int tag_is(const char *s, const char *end, const char *name)
{
    size_t n = strlen(name);
    if ((size_t)(end - s) < n + 1)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((s[i] | 0x20) != name[i])
            return 0;
    char c = s[n];
    return c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '/';
}

/* The text runs of an HTML page: between tags, outside script, style and
 * template elements and comments. A rough cut for the benchmark only. */
static void extract(struct page *p)
{
    const char *s = p->html, *end = s + p->len;
    p->text = xrealloc(NULL, p->len);
    size_t cap = 64;
    p->runs = xrealloc(NULL, cap * sizeof(size_t));
    const char *skip_to = NULL; /* "</script" etc. while inside one */
    while (s < end) {
        if (skip_to) {
            const char *e = s;
            size_t n = strlen(skip_to);
            while (e + n <= end && strncasecmp(e, skip_to, n) != 0)
                e++;
            s = e + n <= end ? e + n : end;
            skip_to = NULL;
            continue;
        }
        if (*s == '<') {
            if (end - s >= 4 && memcmp(s, "<!--", 4) == 0) {
                skip_to = "-->";
                continue;
            }
            if (tag_is(s + 1, end, "script"))
                skip_to = "</script";
            else if (tag_is(s + 1, end, "style"))
                skip_to = "</style";
            else if (tag_is(s + 1, end, "template"))
                skip_to = "</template";
            const char *gt = memchr(s, '>', (size_t)(end - s));
            s = gt ? gt + 1 : end;
            continue;
        }
        const char *lt = memchr(s, '<', (size_t)(end - s));
        const char *e = lt ? lt : end;
        size_t n = (size_t)(e - s);
        memcpy(p->text + p->text_len, s, n);
        p->text_len += n;
        if (p->nruns == cap) {
            cap *= 2;
            p->runs = xrealloc(p->runs, cap * sizeof(size_t));
        }
        p->runs[p->nruns++] = n;
        s = e;
    }
}

static void add_file(const char *path, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char *buf = xrealloc(NULL, size);
    size_t got = fread(buf, 1, size, f);
    fclose(f);
    if (n_pages == cap_pages) {
        cap_pages = cap_pages ? cap_pages * 2 : 1024;
        pages = xrealloc(pages, cap_pages * sizeof(*pages));
    }
    struct page *p = &pages[n_pages++];
    memset(p, 0, sizeof(*p));
    p->html = buf;
    p->len = got;
    extract(p);
    html_bytes += got;
    text_bytes += p->text_len;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(*t), cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* ---- text ------------------------------------------------------------ */

static volatile uint64_t sink;

static void run_simhash_runs(void)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n_pages; i++) {
        struct bc_simhash sh;
        bc_simhash_init(&sh, NULL);
        const char *t = pages[i].text;
        for (size_t r = 0; r < pages[i].nruns; r++) {
            bc_simhash_feed_text(&sh, t, pages[i].runs[r]);
            t += pages[i].runs[r];
        }
        uint64_t fp = 0;
        if (bc_simhash_final(&sh, &fp))
            acc ^= fp;
    }
    sink = acc;
}

static void run_simhash_whole(void)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n_pages; i++) {
        struct bc_simhash sh;
        bc_simhash_init(&sh, NULL);
        bc_simhash_feed_text(&sh, pages[i].text, pages[i].text_len);
        uint64_t fp = 0;
        if (bc_simhash_final(&sh, &fp))
            acc ^= fp;
    }
    sink = acc;
}

static void run_xxh3(void)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n_pages; i++)
        acc ^= XXH3_64bits(pages[i].text, pages[i].text_len);
    sink = acc;
}

#ifdef BC_BENCH_LINKS
static void run_links(void)
{
    struct bc_links_config cfg;
    bc_links_config_init(&cfg);
    uint64_t links = 0;
    for (size_t i = 0; i < n_pages; i++) {
        struct bc_links *p;
        if (bc_links_create(&cfg, "http://bench.test/", 18, &p) != BC_OK)
            exit(1);
        bc_links_feed(p, pages[i].html, pages[i].len);
        bc_links_finish(p);
        struct bc_links_stats st;
        bc_links_stats(p, &st);
        links += st.links;
        bc_links_free(p);
    }
    sink = links;
}
#endif

static void measure_text(const char *what, void (*fn)(void), int rounds,
                         size_t bytes)
{
    double *t = xrealloc(NULL, (size_t)rounds * sizeof(double));
    fn(); /* warm the caches */
    for (int r = 0; r < rounds; r++) {
        double t0 = cpu_now();
        fn();
        t[r] = cpu_now() - t0;
    }
    double med = median(t, rounds);
    printf("text,%s,%zu,%zu,%d,%.6f,%.3f\n", what, n_pages, bytes, rounds, med,
           med * 1e9 / (double)bytes);
    free(t);
}

static void bench_text(int rounds)
{
    size_t runs = 0, short_pages = 0;
    for (size_t i = 0; i < n_pages; i++) {
        runs += pages[i].nruns;
        struct bc_simhash sh;
        bc_simhash_init(&sh, NULL);
        bc_simhash_feed_text(&sh, pages[i].text, pages[i].text_len);
        uint64_t fp;
        short_pages += !bc_simhash_final(&sh, &fp);
    }
    printf("# %zu pages, %zu bytes of HTML, %zu bytes of text in %zu runs "
           "(%.1f bytes a run); %zu pages too short for a fingerprint\n",
           n_pages, html_bytes, text_bytes, runs,
           (double)text_bytes / (double)runs, short_pages);
    printf("text,what,pages,bytes,rounds,median_s,ns_per_byte\n");
    measure_text("simhash_runs_per_text_byte", run_simhash_runs, rounds,
                 text_bytes);
    measure_text("simhash_whole_per_text_byte", run_simhash_whole, rounds,
                 text_bytes);
    measure_text("xxh3_per_text_byte", run_xxh3, rounds, text_bytes);
    measure_text("simhash_runs_per_html_byte", run_simhash_runs, rounds,
                 html_bytes);
#ifdef BC_BENCH_LINKS
    measure_text("links_per_html_byte", run_links, rounds, html_bytes);
#endif
}

/* ---- index ----------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t flip(uint64_t *rng, uint64_t fp, unsigned d)
{
    uint64_t mask = 0;
    while ((unsigned)__builtin_popcountll(mask) < d)
        mask |= UINT64_C(1) << (splitmix(rng) & 63);
    return fp ^ mask;
}

/* The baseline: every fingerprint compared, with the popcnt instruction
 * where the index's scan has it. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("popcnt")))
#endif
static uint64_t
scan_all(const uint64_t *fps, uint64_t n, uint64_t q)
{
    uint64_t hits = 0;
    for (uint64_t i = 0; i < n; i++)
        hits += (unsigned)__builtin_popcountll(fps[i] ^ q) <= 3;
    return hits;
}

static void bench_index(uint64_t n, unsigned blocks, int rounds,
                        uint64_t queries)
{
    struct bc_simhash_index_config c;
    bc_simhash_index_config_init(&c);
    c.n_expected = n;
    c.blocks = blocks;
    struct bc_simhash_index *x;
    if (bc_simhash_index_create(&c, &x) != BC_OK) {
        fprintf(stderr, "bench_simhash: cannot create the index\n");
        exit(1);
    }
    struct bc_simhash_layout l;
    bc_simhash_index_get_layout(x, &l);
    uint64_t *fps = xrealloc(NULL, n * sizeof(*fps));
    uint64_t rng = 1;
    for (uint64_t i = 0; i < n; i++)
        fps[i] = splitmix(&rng);
    printf("# index: n = %llu, k = %u, b = %u, t = %u tables, key bits >= "
           "%u, bucket bits <= %u, predicted probes %.1f\n",
           (unsigned long long)n, l.k, l.blocks, l.tables, l.key_bits,
           l.bucket_bits, l.probes);
    printf("index,what,n,tables,rounds,median_ns_per_op,probes_per_op\n");
    uint64_t slice = n / 10 ? n / 10 : 1;
    for (uint64_t i = 0; i < n; i += slice) {
        uint64_t end = i + slice < n ? i + slice : n;
        double t0 = cpu_now();
        for (uint64_t j = i; j < end; j++)
            if (bc_simhash_index_add(x, fps[j], j) != BC_OK) {
                fprintf(stderr, "bench_simhash: add failed\n");
                exit(1);
            }
        double dt = cpu_now() - t0;
        printf("index,add_up_to_%llu,%llu,%u,1,%.1f,\n",
               (unsigned long long)end, (unsigned long long)n, l.tables,
               dt * 1e9 / (double)(end - i));
    }
    size_t mem = bc_simhash_index_memory(x);
    printf("# memory: %zu bytes, %.1f bytes per fingerprint (formula: 16 + "
           "8 t = %u, plus spare room and buckets)\n",
           mem, (double)mem / (double)n, l.bytes_per_fp);

    static const char *const names[] = {"query_miss", "query_hit_d1_3",
                                        "test_and_add_new"};
    double *t = xrealloc(NULL, (size_t)rounds * sizeof(double));
    for (int kind = 0; kind < 3; kind++) {
        uint64_t probes_total = 0, found = 0;
        for (int r = 0; r < rounds; r++) {
            uint64_t *q = xrealloc(NULL, queries * sizeof(*q));
            for (uint64_t i = 0; i < queries; i++)
                q[i] = kind == 1 ? flip(&rng, fps[splitmix(&rng) % n],
                                        1 + (unsigned)(splitmix(&rng) % 3))
                                 : splitmix(&rng);
            double t0 = cpu_now();
            for (uint64_t i = 0; i < queries; i++) {
                if (kind == 2) {
                    bool f;
                    if (bc_simhash_index_test_and_add(x, q[i], n + i, NULL,
                                                      &f) != BC_OK)
                        exit(1);
                    found += f;
                } else {
                    uint64_t p;
                    found += bc_simhash_index_query(x, q[i], NULL, &p);
                    probes_total += p;
                }
            }
            t[r] = (cpu_now() - t0) * 1e9 / (double)queries;
            free(q);
        }
        printf("index,%s,%llu,%u,%d,%.1f,%.1f\n", names[kind],
               (unsigned long long)n, l.tables, rounds, median(t, rounds),
               (double)probes_total / (double)(rounds * queries));
        if (kind == 1 && found != (uint64_t)rounds * queries)
            fprintf(stderr, "bench_simhash: a hit was missed\n");
    }
    /* The baseline: a scan of all n. */
    const int scans = 100;
    double t0 = cpu_now();
    uint64_t hits = 0;
    for (int s = 0; s < scans; s++)
        hits += scan_all(fps, n, splitmix(&rng));
    sink = hits;
    printf("index,brute_force_scan,%llu,0,1,%.1f,%llu\n", (unsigned long long)n,
           (cpu_now() - t0) * 1e9 / scans, (unsigned long long)n);
    free(t);
    free(fps);
    bc_simhash_index_free(x);
}

int main(int argc, char **argv)
{
    int rounds = 5;
    uint64_t n = 10000000, queries = 1000000;
    unsigned blocks = 0;
    const char *only = NULL;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            return 2;
        if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--n") == 0)
            n = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--queries") == 0)
            queries = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--blocks") == 0)
            blocks = (unsigned)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
        else
            return 2;
    }
    if (rounds < 1 || n < 1 || queries < 1) {
        fprintf(stderr, "usage: bench_simhash [--rounds N] [--n N] "
                        "[--blocks B] [--queries Q] [--only text|index] "
                        "DIR...\n");
        return 2;
    }
    if (!only || strcmp(only, "text") == 0) {
        for (; i < argc; i++)
            bench_html_files(argv[i], add_file);
        if (n_pages == 0) {
            fprintf(stderr, "bench_simhash: no .html files\n");
            return 1;
        }
        bench_text(rounds);
        for (size_t k = 0; k < n_pages; k++) {
            free(pages[k].html);
            free(pages[k].text);
            free(pages[k].runs);
        }
        free(pages);
    }
    if (!only || strcmp(only, "index") == 0)
        bench_index(n, blocks, rounds, queries);
    return 0;
}
