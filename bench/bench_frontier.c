/*
 * bench_frontier.c - the frontier's admission and hand-out rates.
 *
 *   bench_frontier [--urls N] [--hosts H] [--runs R] [--csv FILE]
 *   bench_frontier --link-memory [--hosts H] [--runs R]
 *
 * Adds N generated URLs (default 10^7) spread over H hosts (default 10^5)
 * through bc_frontier_add() - normalization, limits and the seen-test
 * included, every tenth one a repeat of an earlier URL in another spelling
 * - then drains the frontier with next/done pairs on a fake clock (1 s
 * politeness delay, 1 transfer per host; the clock jumps when the
 * frontier says WAIT). Prints adds per second, next+done pairs per second,
 * and the memory per queued URL (queue bytes from the frontier's own
 * count, and the process's peak RSS). Medians of R runs.
 *
 * With --csv FILE, the numbers also go to FILE, one per row under the
 * header "measure,value,unit" (values as %.6g or whole numbers):
 *   frontier/adds_per_s, frontier/next_done_per_s        per_s
 *   frontier/admitted, frontier/rejected_seen            count
 *   frontier/hosts, frontier/urls                        count
 *   frontier/avg_url_bytes                               bytes
 *   frontier/queue_bytes_per_url                         bytes
 *   frontier/heap_bytes_per_url                          bytes
 *   frontier/peak_rss                                    mib
 * (rejected_seen: the adds refused as duplicates or as probably seen.)
 *
 * --link-memory measures the heap bytes per queued URL of queues of links
 * with referrers, as a crawl makes them: 20,000 pages (jobs out at once,
 * from one page host) give 50 links each through bc_frontier_add_link(),
 * 10^6 links of 53 bytes, link i on host i % H, for H = 100, 300, 1000,
 * 3000 and 10000 (10^4 down to 100 URLs per host), or the H given (at
 * most 10^5, which keeps the links at 53 bytes). The heap bytes are
 * mallinfo2()'s uordblks (bytes in use, malloc's per-block overhead
 * included) after the adds less before them: the queues, the link hosts,
 * the referrers (one per page) and the seen-test's growth. Prints, per H,
 * the medians of R runs of those bytes and of the frontier's own queue
 * bytes per queued URL, and the adds per second. The per-URL memory should
 * change smoothly with URLs per host: a queue whose chunks double jumps
 * by up to 2x where a host's queue crosses a chunk boundary.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bench_csv.h"
#include "bloomcrawl/frontier.h"
#include "bench_urls.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The --csv file, or NULL: rows "measure,value,unit". */
static FILE *csv;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define LM_PAGES 20000u
#define LM_LINKS 50u

/* One --link-memory run at `hosts` link hosts: heap and queue bytes per
 * queued URL and add_link calls per second into *heap, *queue, *rate. */
static void link_memory_run(uint64_t hosts, double *heap, double *queue,
                            double *rate)
{
    struct bc_frontier_config c;
    bc_frontier_config_init(&c);
    c.scope = BC_SCOPE_ANY;
    c.obey_robots = false;
    c.min_delay_ms = 0;
    c.per_host_concurrency = LM_PAGES;
    c.seen.expected = LM_PAGES * (LM_LINKS + 1);
    struct bc_frontier *f;
    if (bc_frontier_create(&c, &f) != BC_OK) {
        fprintf(stderr, "bench_frontier: create failed\n");
        exit(1);
    }
    static struct bc_frontier_job jobs[LM_PAGES];
    char url[160];
    for (unsigned p = 0; p < LM_PAGES; p++) {
        int n = snprintf(url, sizeof(url), "http://pages.example.org/%u", p);
        enum bc_frontier_reason why;
        bc_frontier_add(f, url, (size_t)n, NULL, 0, 0, &why, NULL);
    }
    for (unsigned p = 0; p < LM_PAGES; p++) {
        if (bc_frontier_next(f, 0, &jobs[p]) != BC_OK ||
            jobs[p].action != BC_FRONTIER_FETCH) {
            fprintf(stderr, "bench_frontier: page %u not handed out\n", p);
            exit(1);
        }
    }
    size_t heap0 = mallinfo2().uordblks;
    double t0 = now_s();
    for (uint64_t i = 0; i < (uint64_t)LM_PAGES * LM_LINKS; i++) {
        /* 53 bytes: http://www.hostNNNNN.example.com/s/pNNNNNNNNNNNN.html */
        int n =
            snprintf(url, sizeof(url),
                     "http://www.host%05llu.example.com/s/p%012llu.html",
                     (unsigned long long)(i % hosts), (unsigned long long)i);
        const struct bc_frontier_job *j = &jobs[i / LM_LINKS];
        enum bc_frontier_reason why;
        bc_frontier_add_link(f, j, url, (size_t)n, j->url, j->url_len, &why,
                             NULL);
    }
    double t1 = now_s();
    struct bc_frontier_stats s;
    bc_frontier_stats(f, 0, &s);
    *heap = (double)(mallinfo2().uordblks - heap0) / (double)s.queued;
    *queue = (double)s.queue_bytes / (double)s.queued;
    *rate = (double)LM_PAGES * LM_LINKS / (t1 - t0);
    bc_frontier_free(f);
}

static int link_memory(int runs, uint64_t one_h)
{
    static const uint64_t sweep[] = {100, 300, 1000, 3000, 10000};
    const uint64_t *host_counts = one_h ? &one_h : sweep;
    size_t counts = one_h ? 1 : sizeof(sweep) / sizeof(*sweep);
    printf("## bench_frontier --link-memory: %u pages x %u links with "
           "referrers, medians of %d runs\n\n",
           LM_PAGES, LM_LINKS, runs);
    printf("| hosts | URLs per host | heap bytes per queued URL (mallinfo2) "
           "| queue bytes per queued URL | add_link per second |\n"
           "|---:|---:|---:|---:|---:|\n");
    for (size_t k = 0; k < counts; k++) {
        double heap[15], queue[15], rate[15];
        for (int r = 0; r < runs; r++)
            link_memory_run(host_counts[k], &heap[r], &queue[r], &rate[r]);
        printf("| %llu | %llu | %.1f | %.1f | %.0f |\n",
               (unsigned long long)host_counts[k],
               (unsigned long long)(LM_PAGES * LM_LINKS / host_counts[k]),
               median(heap, runs), median(queue, runs), median(rate, runs));
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t urls = 10000000, hosts = 100000;
    bool hosts_given = false;
    int runs = 3;
    const char *csv_path = NULL;
    bool link_mem = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--link-memory"))
            link_mem = true;
        else if (!strcmp(argv[i], "--urls") && i + 1 < argc)
            urls = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--hosts") && i + 1 < argc)
            hosts = strtoull(argv[++i], NULL, 10), hosts_given = true;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else {
            fprintf(stderr, "usage: bench_frontier [--urls N] [--hosts H] "
                            "[--runs R] [--csv FILE]\n"
                            "       bench_frontier --link-memory [--hosts H] "
                            "[--runs R]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 15 || hosts == 0 || urls < hosts ||
        (link_mem && hosts > 100000)) {
        fprintf(stderr, "bench_frontier: bad arguments\n");
        return 2;
    }
    if (link_mem)
        return link_memory(runs, hosts_given ? hosts : 0);
    csv = bench_csv_open(csv_path);
    double add_rate[15], pair_rate[15], queue_per_url = 0, heap_per_url = 0;
    uint64_t admitted = 0, dups = 0, len_sum = 0;
    for (int r = 0; r < runs; r++) {
        struct bc_frontier_config c;
        bc_frontier_config_init(&c);
        c.scope = BC_SCOPE_ANY;
        c.obey_robots = false;
        c.max_depth = 1000;
        c.seen.expected = urls;
        struct bc_frontier *f;
        size_t heap0 = mallinfo2().uordblks;
        if (bc_frontier_create(&c, &f) != BC_OK) {
            fprintf(stderr, "bench_frontier: create failed\n");
            return 1;
        }
        char url[160];
        double t0 = now_s();
        for (uint64_t i = 0; i < urls; i++) {
            int n = make_url(url, sizeof(url), i, hosts);
            if (r == 0)
                len_sum += (uint64_t)n;
            enum bc_frontier_reason reason;
            bc_frontier_add(f, url, (size_t)n, NULL, 0, 1, &reason, NULL);
        }
        double t1 = now_s();
        struct bc_frontier_stats s;
        bc_frontier_stats(f, 0, &s);
        admitted = s.admitted;
        dups =
            s.reasons[BC_ADMIT_DUPLICATE] + s.reasons[BC_ADMIT_PROBABLY_SEEN];
        queue_per_url = (double)s.queue_bytes / (double)s.queued;
        heap_per_url =
            (double)(mallinfo2().uordblks - heap0) / (double)s.queued;
        /* Drain with a fake clock. */
        uint64_t clock = 0, pairs = 0;
        double t2 = now_s();
        for (;;) {
            struct bc_frontier_job job;
            if (bc_frontier_next(f, clock, &job) != BC_OK) {
                fprintf(stderr, "bench_frontier: out of memory\n");
                exit(1);
            }
            if (job.action == BC_FRONTIER_DONE)
                break;
            if (job.action == BC_FRONTIER_WAIT) {
                clock = job.wait_until_ms;
                continue;
            }
            if (job.action != BC_FRONTIER_FETCH)
                continue;
            struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
            bc_frontier_done(f, &job, &o, clock);
            pairs++;
        }
        double t3 = now_s();
        add_rate[r] = (double)urls / (t1 - t0);
        pair_rate[r] = (double)pairs / (t3 - t2);
        bc_frontier_free(f);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("## bench_frontier: %llu adds over %llu hosts, medians of %d "
           "runs\n\n",
           (unsigned long long)urls, (unsigned long long)hosts, runs);
    double adds_per_s = median(add_rate, runs);
    double pairs_per_s = median(pair_rate, runs);
    double avg_len = (double)len_sum / (double)urls;
    double rss_mib = (double)ru.ru_maxrss / 1024.0;
    printf("| measure | value |\n|---|---:|\n");
    printf("| adds per second (normalize + limits + seen-test + enqueue) "
           "| %.0f |\n",
           adds_per_s);
    printf("| URLs admitted / refused as already seen (repeats and Bloom false "
           "positives) | %llu / "
           "%llu |\n",
           (unsigned long long)admitted, (unsigned long long)dups);
    printf("| next+done pairs per second (%llu hosts) | %.0f |\n",
           (unsigned long long)hosts, pairs_per_s);
    printf("| average URL length | %.1f bytes |\n", avg_len);
    printf("| queue bytes per queued URL | %.1f |\n", queue_per_url);
    printf("| heap bytes per queued URL (queues, hosts, seen-test) | %.1f "
           "|\n",
           heap_per_url);
    printf("| peak RSS | %.0f MiB |\n", rss_mib);
    bench_csv_num(csv, "per_s", adds_per_s, "frontier/adds_per_s");
    bench_csv_int(csv, "count", admitted, "frontier/admitted");
    bench_csv_int(csv, "count", dups, "frontier/rejected_seen");
    bench_csv_num(csv, "per_s", pairs_per_s, "frontier/next_done_per_s");
    bench_csv_int(csv, "count", hosts, "frontier/hosts");
    bench_csv_int(csv, "count", urls, "frontier/urls");
    bench_csv_num(csv, "bytes", avg_len, "frontier/avg_url_bytes");
    bench_csv_num(csv, "bytes", queue_per_url, "frontier/queue_bytes_per_url");
    bench_csv_num(csv, "bytes", heap_per_url, "frontier/heap_bytes_per_url");
    bench_csv_num(csv, "mib", rss_mib, "frontier/peak_rss");
    return bench_csv_close(csv, csv_path);
}
