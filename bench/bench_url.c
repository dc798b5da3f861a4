/*
 * bench_url.c - URLs per second of frontier/url against libcurl's URL API.
 *
 * Usage: bench_url CORPUS.tsv [RUNS] [--csv FILE]
 *
 * CORPUS.tsv has one "base<TAB>href" pair per line (bench/gen_url_corpus.py
 * writes it); pairs of one page share a base and come one after another.
 * Each contender resolves and normalizes every pair, RUNS times (default 7),
 * on one thread; the median run is reported, in pairs per second:
 *
 *   bloomcrawl, base parsed once per page   bc_url_normalize() of the base
 *       when it changes, then of each href against the parsed base (how a
 *       crawler uses the API);
 *   bloomcrawl, base parsed per href        both bc_url_normalize() calls
 *       for every pair (the same work libcurl's API does);
 *   libcurl, base set per href              curl_url_set(CURLUPART_URL) of
 *       the base, of the href (libcurl resolves a relative URL against the
 *       one in the handle), curl_url_get(CURLUPART_URL), curl_free();
 *   libcurl, base duplicated per href       the base parsed once per page
 *       and curl_url_dup()'ed for each href: libcurl's fastest way to
 *       resolve many hrefs against one base.
 *
 * libcurl flags: set with CURLU_URLENCODE | CURLU_ALLOW_SPACE (encode what
 * may not stand raw, as bloomcrawl does), get with CURLU_NO_DEFAULT_PORT |
 * CURLU_PUNYCODE (drop default ports, IDN to punycode). The program also
 * counts how often the two agree on the output, for information: they
 * normalize differently (libcurl does not decode %7E, lowercase escapes or
 * handle 0x7f.1, for example) and the test suites, not this program, say
 * which is right.
 *
 * With --csv FILE (anywhere among the arguments), the numbers also go to
 * FILE, one per row under the header "measure,value,unit" (values as %.6g
 * or whole numbers):
 *   url/<slug>/pairs_per_s   per_s   each contender, from its median CPU
 *   url/<slug>/ns_per_pair   ns      time, as printed
 *   url/speedup_vs_libcurl   x       base once per page against libcurl's
 *                                    faster way (the speed-up line)
 *   url/pairs                count   pairs in the corpus
 *   url/agree                count   pairs both accepted with identical
 *                                    output
 * where <slug> is bloomcrawl_base_once, bloomcrawl_base_per_href,
 * libcurl_base_set or libcurl_base_dup: the four contenders above, in order.
 */
#define _POSIX_C_SOURCE 200809L
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_csv.h"
#include "bloomcrawl/url.h"

struct pair {
    const char *base;
    size_t base_len;
    const char *href;
    size_t href_len;
    int page; /* index of the page: pairs with one base share it */
};

/* Seconds of wall-clock time, or of CPU time of this thread. The CPU time
 * is what the report uses: on a shared machine, wall-clock time counts the
 * time slices given to other processes. */
static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The --csv file, or NULL: rows "measure,value,unit". */
static FILE *csv;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Read the corpus into memory; base and href are NUL-terminated in place
 * (libcurl needs C strings). */
static struct pair *load(const char *path, size_t *count, char **data_out)
{
    FILE *f = fopen(path, "rb");
    char *data;
    long size;
    size_t n = 0, cap = 1024;
    struct pair *pairs;

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        perror(path);
        exit(1);
    }
    data = malloc((size_t)size + 1);
    pairs = malloc(cap * sizeof *pairs);
    if (data == NULL || pairs == NULL ||
        fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "bench_url: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    data[size] = '\0';
    char *s = data, *end = data + size;
    const char *last_base = NULL;
    int page = -1;
    while (s < end) {
        char *nl = memchr(s, '\n', (size_t)(end - s));
        char *tab;
        if (nl == NULL)
            nl = end;
        *nl = '\0';
        tab = memchr(s, '\t', (size_t)(nl - s));
        if (tab != NULL) {
            *tab = '\0';
            if (n == cap) {
                cap *= 2;
                pairs = realloc(pairs, cap * sizeof *pairs);
                if (pairs == NULL)
                    exit(1);
            }
            if (last_base == NULL || strcmp(last_base, s) != 0)
                page++;
            last_base = s;
            pairs[n].base = s;
            pairs[n].base_len = (size_t)(tab - s);
            pairs[n].href = tab + 1;
            pairs[n].href_len = (size_t)(nl - tab - 1);
            pairs[n].page = page;
            n++;
        }
        s = nl + 1;
    }
    *count = n;
    *data_out = data;
    return pairs;
}

static char out[BC_URL_MAX_LEN_DEFAULT + 1];
static char base_buf[BC_URL_MAX_LEN_DEFAULT + 1];

/* bloomcrawl; reparse: parse the base for every pair. Returns the number
 * of hrefs accepted. */
static size_t run_bc(const struct pair *p, size_t n, int reparse,
                     size_t *checksum)
{
    struct bc_url base, u;
    int page = -1;
    int base_ok = 0;
    size_t ok = 0, sum = 0;

    for (size_t i = 0; i < n; i++) {
        if (reparse || p[i].page != page) {
            page = p[i].page;
            base_ok =
                bc_url_normalize(NULL, p[i].base, p[i].base_len, NULL, base_buf,
                                 sizeof base_buf, &base) == BC_OK;
        }
        if (!base_ok)
            continue;
        if (bc_url_normalize(&base, p[i].href, p[i].href_len, NULL, out,
                             sizeof out, &u) == BC_OK) {
            ok++;
            sum += u.len;
        }
    }
    *checksum = sum;
    return ok;
}

#define CURL_SET_FLAGS (CURLU_URLENCODE | CURLU_ALLOW_SPACE)
#define CURL_GET_FLAGS (CURLU_NO_DEFAULT_PORT | CURLU_PUNYCODE)

/* libcurl; dup: parse the base once per page and duplicate the handle for
 * every href, else set the base in one reused handle for every href. */
static size_t run_curl(const struct pair *p, size_t n, int dup,
                       size_t *checksum)
{
    CURLU *h = curl_url(), *base = curl_url();
    int page = -1, base_ok = 0;
    size_t ok = 0, sum = 0;

    for (size_t i = 0; i < n; i++) {
        CURLU *u = h;
        char *s = NULL;
        if (dup) {
            if (p[i].page != page) {
                page = p[i].page;
                base_ok = curl_url_set(base, CURLUPART_URL, p[i].base,
                                       CURL_SET_FLAGS) == CURLUE_OK;
            }
            if (!base_ok)
                continue;
            u = curl_url_dup(base);
        } else if (curl_url_set(h, CURLUPART_URL, p[i].base, CURL_SET_FLAGS) !=
                   CURLUE_OK) {
            continue;
        }
        if (curl_url_set(u, CURLUPART_URL, p[i].href, CURL_SET_FLAGS) ==
                CURLUE_OK &&
            curl_url_get(u, CURLUPART_URL, &s, CURL_GET_FLAGS) == CURLUE_OK) {
            ok++;
            sum += strlen(s);
            curl_free(s);
        }
        if (dup)
            curl_url_cleanup(u);
    }
    curl_url_cleanup(h);
    curl_url_cleanup(base);
    *checksum = sum;
    return ok;
}

/* How often do the two produce the same URL? */
static size_t agreement(const struct pair *p, size_t n, size_t *both)
{
    CURLU *h = curl_url();
    struct bc_url base, u;
    size_t same = 0;

    *both = 0;
    for (size_t i = 0; i < n; i++) {
        char *s = NULL;
        if (bc_url_normalize(NULL, p[i].base, p[i].base_len, NULL, base_buf,
                             sizeof base_buf, &base) != BC_OK ||
            bc_url_normalize(&base, p[i].href, p[i].href_len, NULL, out,
                             sizeof out, &u) != BC_OK)
            continue;
        if (curl_url_set(h, CURLUPART_URL, p[i].base, CURL_SET_FLAGS) !=
                CURLUE_OK ||
            curl_url_set(h, CURLUPART_URL, p[i].href, CURL_SET_FLAGS) !=
                CURLUE_OK ||
            curl_url_get(h, CURLUPART_URL, &s, CURL_GET_FLAGS) != CURLUE_OK)
            continue;
        (*both)++;
        if (strcmp(s, out) == 0)
            same++;
        curl_free(s);
    }
    curl_url_cleanup(h);
    return same;
}

struct contender {
    const char *name;
    const char *slug; /* its name in the CSV keys */
    size_t (*run)(const struct pair *, size_t, int, size_t *);
    int arg;
    double median;      /* CPU seconds */
    double median_wall; /* wall-clock seconds */
    size_t ok;
};

int main(int argc, char **argv)
{
    size_t n;
    char *data;
    int runs = 7;
    const char *corpus = NULL, *runs_arg = NULL, *csv_path = NULL;
    struct contender c[] = {
        {"bloomcrawl, base parsed once per page", "bloomcrawl_base_once",
         run_bc, 0, 0, 0, 0},
        {"bloomcrawl, base parsed per href", "bloomcrawl_base_per_href", run_bc,
         1, 0, 0, 0},
        {"libcurl, base set per href", "libcurl_base_set", run_curl, 0, 0, 0,
         0},
        {"libcurl, base duplicated per href", "libcurl_base_dup", run_curl, 1,
         0, 0, 0},
    };
    size_t nc = sizeof c / sizeof *c;

    /* CORPUS.tsv and RUNS by position, --csv FILE anywhere. */
    int bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--csv") == 0) {
            if (i + 1 < argc)
                csv_path = argv[++i];
            else
                bad = 1;
        } else if (corpus == NULL) {
            corpus = argv[i];
        } else if (runs_arg == NULL) {
            runs_arg = argv[i];
            runs = atoi(runs_arg);
        } else {
            bad = 1;
        }
    }
    if (bad || corpus == NULL || runs < 1) {
        fprintf(stderr, "usage: bench_url CORPUS.tsv [RUNS] [--csv FILE]\n");
        return 2;
    }
    csv = bench_csv_open(csv_path);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct pair *pairs = load(corpus, &n, &data);
    if (n == 0) {
        fprintf(stderr, "bench_url: no pairs in %s\n", corpus);
        return 1;
    }
    printf("corpus: %s, %zu pairs, %d pages; %d runs each, median shown\n",
           corpus, n, pairs[n - 1].page + 1, runs);
    printf("times are CPU time of the benchmark thread (wall-clock time "
           "in parentheses)\n");
    double *t = malloc((size_t)runs * sizeof *t);
    if (t == NULL)
        return 1;
    /* Interleave the contenders run by run so that drift in the machine's
     * speed affects all of them alike. */
    double *cpu = malloc(nc * (size_t)runs * sizeof *cpu);
    double *wall = malloc(nc * (size_t)runs * sizeof *wall);
    if (cpu == NULL || wall == NULL)
        return 1;
    for (int r = 0; r < runs; r++) {
        for (size_t k = 0; k < nc; k++) {
            size_t sum;
            double w0 = clock_s(CLOCK_MONOTONIC);
            double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
            c[k].ok = c[k].run(pairs, n, c[k].arg, &sum);
            cpu[k * (size_t)runs + (size_t)r] =
                clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
            wall[k * (size_t)runs + (size_t)r] = clock_s(CLOCK_MONOTONIC) - w0;
        }
    }
    printf("%-40s %10s %10s %10s %12s\n", "", "CPU ms", "M pairs/s", "ns/pair",
           "(wall ms)");
    for (size_t k = 0; k < nc; k++) {
        memcpy(t, cpu + k * (size_t)runs, (size_t)runs * sizeof *t);
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        c[k].median = t[runs / 2];
        memcpy(t, wall + k * (size_t)runs, (size_t)runs * sizeof *t);
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        c[k].median_wall = t[runs / 2];
        double per_s = (double)n / c[k].median;
        double ns_per = c[k].median / (double)n * 1e9;
        printf("%-40s %10.2f %10.2f %10.1f %12.2f   %zu accepted\n", c[k].name,
               c[k].median * 1e3, per_s / 1e6, ns_per, c[k].median_wall * 1e3,
               c[k].ok);
        char key[64];
        snprintf(key, sizeof key, "url/%s/pairs_per_s", c[k].slug);
        bench_csv_num(csv, "per_s", per_s, "%s", key);
        snprintf(key, sizeof key, "url/%s/ns_per_pair", c[k].slug);
        bench_csv_num(csv, "ns", ns_per, "%s", key);
    }
    double best_curl = c[2].median < c[3].median ? c[2].median : c[3].median;
    printf("speed-up over libcurl's faster way: %.1fx (base once per page), "
           "%.1fx (base per href)\n",
           best_curl / c[0].median, best_curl / c[1].median);
    bench_csv_num(csv, "x", best_curl / c[0].median, "url/speedup_vs_libcurl");
    bench_csv_int(csv, "count", n, "url/pairs");
    printf("goal >= 3 M pairs/s on one core: %s (%.2f M/s)\n",
           (double)n / c[0].median >= 3e6 ? "met" : "MISSED",
           (double)n / c[0].median / 1e6);
    printf("goal >= 10x libcurl: %s (%.1fx)\n",
           best_curl / c[0].median >= 10 ? "met" : "MISSED",
           best_curl / c[0].median);
    size_t both, same = agreement(pairs, n, &both);
    printf("outputs: both accepted %zu pairs, identical URL for %zu "
           "(%.1f %%)\n",
           both, same, both ? 100.0 * (double)same / (double)both : 0.0);
    bench_csv_int(csv, "count", same, "url/agree");
    int rc = bench_csv_close(csv, csv_path);
    free(cpu);
    free(wall);
    free(t);
    free(pairs);
    free(data);
    curl_global_cleanup();
    return rc;
}
