/*
 * bench_state.c - the frontier with its SQLite store (crawler/state.c):
 * bounded memory, admission and hand-out rates, resume time.
 *
 *   bench_state --dir DIR [--urls N] [--hosts H] [--drain D] [--window W]
 *               [--batch B] [--random-hosts] [--csv FILE]
 *
 * DIR must not exist (it becomes the crawl state). Adds N generated URLs
 * (default 10^7; the URLs of bench_frontier: every tenth a repeat in
 * another spelling) over H hosts (default 10^5) through bc_frontier_add()
 * with the store, committing every B events (default 1000); then hands
 * out and completes D URLs (default 10^6: next, done, page_done, a commit
 * every B); then closes the state and times its resume: open (with
 * PRAGMA quick_check), the Bloom snapshot loaded, the hosts rebuilt. Prints
 * the rates, the peak RSS of the process and the Bloom filter's size (the
 * goal counts memory besides the filter).
 *
 * The stream admits round-robin over the hosts in the order they were
 * made (URL i belongs to host i % H), so a commit's admissions fall on
 * consecutive hosts, a contiguous slice of the store's per-host index. A
 * crawl's links do not come that way: with --random-hosts the same N
 * URLs are admitted in a pseudo-random order (URL perm(i) at step i,
 * perm a fixed permutation of [0, N): random_index() below), so a
 * commit's admissions fall on hosts spread over the whole index.
 *
 * With --csv FILE, rows "measure,value,unit":
 *   state/adds_per_s, state/next_done_per_s     per_s
 *   state/add_cpu_us                            us (CPU per add, all
 *                                               threads)
 *   state/commit_ms                             ms (mean per commit)
 *   state/resume_s, state/open_s                s
 *   state/peak_rss, state/bloom                 mib
 *   state/db                                    mib (crawl.db + WAL)
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "bench_csv.h"
#include "bloomcrawl/crawl_state.h"
#include "state_int.h"
#include "bench_urls.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the process so far, user and system, all its threads
 * (the state's checkpointer too). */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static double file_mib(const char *dir, const char *name)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    struct stat sb;
    return stat(p, &sb) == 0 ? (double)sb.st_size / (1024.0 * 1024.0) : 0;
}

static void die(const char *what, enum bc_status st,
                const struct bc_crawl_state *s)
{
    fprintf(stderr, "bench_state: %s: %s %s\n", what, bc_strerror(st),
            s ? bc_crawl_state_errmsg(s) : "");
    exit(1);
}

static const struct bc_crawl_state_option fixed[] = {{"bench", "1"}};

/* A bijection of [0, 2^bits): multiplications by odd constants and
 * xor-shifts to the right, each invertible on bits bits. */
static uint64_t mix_bits(uint64_t x, unsigned bits)
{
    uint64_t mask = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    unsigned shift = bits / 2 + 1;
    x = (x * UINT64_C(0x9E3779B97F4A7C15)) & mask;
    x ^= x >> shift;
    x = (x * UINT64_C(0xBF58476D1CE4E5B9)) & mask;
    x ^= x >> shift;
    return x;
}

/* The bits of the smallest power of two >= n (at least 1). */
static unsigned index_bits(uint64_t n)
{
    unsigned bits = 1;
    while (bits < 64 && (UINT64_C(1) << bits) < n)
        bits++;
    return bits;
}

/* --random-hosts: the index admitted at step i of n, a fixed permutation
 * of [0, n) (cycle-walking: mix_bits() over 2^bits >= n, bits =
 * index_bits(n), applied again while the result is n or more; a
 * bijection of a larger set walked this way stays one of [0, n)). */
static uint64_t random_index(uint64_t i, uint64_t n, unsigned bits)
{
    uint64_t x = i;
    do
        x = mix_bits(x, bits);
    while (x >= n);
    return x;
}

int main(int argc, char **argv)
{
    uint64_t urls = 10000000, hosts = 100000, drain = 1000000, batch = 1000;
    size_t window = 0;
    bool random_hosts = false;
    const char *dir = NULL, *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--urls") && i + 1 < argc)
            urls = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--hosts") && i + 1 < argc)
            hosts = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--drain") && i + 1 < argc)
            drain = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc)
            window = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
            csv_path = argv[++i];
        else if (!strcmp(argv[i], "--random-hosts"))
            random_hosts = true;
        else
            dir = NULL, i = argc;
    }
    if (!dir || hosts == 0 || urls < hosts || batch == 0) {
        fprintf(stderr, "usage: bench_state --dir DIR [--urls N] [--hosts H] "
                        "[--drain D] [--window W] [--batch B] "
                        "[--random-hosts] [--csv FILE]\n");
        return 2;
    }
    struct stat sb;
    if (stat(dir, &sb) == 0) {
        fprintf(stderr, "bench_state: %s exists\n", dir);
        return 2;
    }
    FILE *csv = bench_csv_open(csv_path);
    struct bc_frontier_config c;
    bc_frontier_config_init(&c);
    c.scope = BC_SCOPE_ANY;
    c.obey_robots = false;
    c.max_depth = 1000;
    c.seen.expected = urls;

    struct bc_crawl_state *s;
    struct bc_crawl_state_error err;
    enum bc_status st = bc_crawl_state_open(dir, fixed, 1, &s, &err);
    if (st != BC_OK) {
        fprintf(stderr, "bench_state: %s: %s\n", dir, err.text);
        return 1;
    }
    struct bc_frontier *f;
    if ((st = bc_crawl_state_frontier(s, &c, window, 0, &f)) != BC_OK)
        die("frontier", st, s);
    char url[160];
    uint64_t commits = 0;
    double commit_time = 0;
    double t0 = now_s(), c0_add = cpu_s();
    unsigned perm_bits = index_bits(urls);
    for (uint64_t i = 0; i < urls; i++) {
        int n = make_url(url, sizeof(url),
                         random_hosts ? random_index(i, urls, perm_bits) : i,
                         hosts);
        enum bc_frontier_reason reason;
        st = bc_frontier_add(f, url, (size_t)n, NULL, 0, 1, &reason, NULL);
        if (st != BC_OK)
            die("add", st, s);
        if (i % batch == batch - 1) {
            double c0 = now_s();
            if ((st = bc_crawl_state_commit(s, f)) != BC_OK)
                die("commit", st, s);
            commit_time += now_s() - c0;
            commits++;
        }
    }
    if ((st = bc_crawl_state_commit(s, f)) != BC_OK)
        die("commit", st, s);
    double t1 = now_s(), add_cpu = cpu_s() - c0_add;
    if ((st = bc_crawl_state_snapshot(s, f)) != BC_OK)
        die("snapshot", st, s);
    double t1s = now_s();
    struct bc_frontier_stats fs;
    bc_frontier_stats(f, 0, &fs);
    double rss_fill = rss_mib();
    double bloom = (double)fs.seen.bloom.bytes / (1024.0 * 1024.0);

    uint64_t clock = 0, pairs = 0;
    double t2 = now_s();
    while (pairs < drain) {
        struct bc_frontier_job job;
        if ((st = bc_frontier_next(f, clock, &job)) != BC_OK)
            die("next", st, s);
        if (job.action == BC_FRONTIER_DONE)
            break;
        if (job.action == BC_FRONTIER_WAIT) {
            clock = job.wait_until_ms;
            continue;
        }
        if (job.action != BC_FRONTIER_FETCH)
            continue;
        struct bc_frontier_outcome o = {200, 5, 0, BC_FAULT_NONE};
        if ((st = bc_frontier_done(f, &job, &o, clock)) != BC_OK ||
            (st = bc_crawl_state_page_done(s, job.id)) != BC_OK)
            die("done", st, s);
        if (++pairs % batch == 0) {
            double c0 = now_s();
            if ((st = bc_crawl_state_commit(s, f)) != BC_OK)
                die("commit", st, s);
            commit_time += now_s() - c0;
            commits++;
        }
    }
    if ((st = bc_crawl_state_commit(s, f)) != BC_OK)
        die("commit", st, s);
    double t3 = now_s();
    double rss_drain = rss_mib();
    bc_frontier_free(f);
    bc_crawl_state_close(s);
    double db = file_mib(dir, "crawl.db") + file_mib(dir, "crawl.db-wal");

    /* Resume. */
    double t4 = now_s();
    if ((st = bc_crawl_state_open(dir, fixed, 1, &s, &err)) != BC_OK) {
        fprintf(stderr, "bench_state: reopen: %s\n", err.text);
        return 1;
    }
    double t5 = now_s();
    if ((st = bc_crawl_state_frontier(s, &c, window, 0, &f)) != BC_OK)
        die("resume", st, s);
    struct bc_frontier_job job;
    if ((st = bc_frontier_next(f, 0, &job)) != BC_OK ||
        job.action != BC_FRONTIER_FETCH)
        die("next after resume", st, s);
    double t6 = now_s();
    struct bc_crawl_state_info info;
    bc_crawl_state_info(s, &info);
    bc_frontier_free(f);
    bc_crawl_state_close(s);

    double adds = (double)urls / (t1 - t0);
    double nd = (double)pairs / (t3 - t2);
    double cm = commits ? commit_time * 1000.0 / (double)commits : 0;
    double rss = rss_mib();
    printf("## bench_state: %llu adds over %llu hosts%s, %llu next+done, "
           "a commit every %llu events\n\n",
           (unsigned long long)urls, (unsigned long long)hosts,
           random_hosts ? " in random host order" : "",
           (unsigned long long)pairs, (unsigned long long)batch);
    printf("| measure | value | goal |\n|---|---:|---:|\n");
    printf("| adds per second with the store (incl. commits) | %.0f | >= "
           "200000 |\n",
           adds);
    printf("| CPU of the adds (all threads), per add | %.2f us | |\n",
           add_cpu * 1e6 / (double)urls);
    printf("| URLs queued after the adds | %zu | |\n", fs.queued);
    printf("| next+done+page_done per second (incl. commits) | %.0f | >= "
           "200000 |\n",
           nd);
    printf("| mean commit (%llu events) | %.2f ms | |\n",
           (unsigned long long)batch, cm);
    printf("| snapshot (bloom.snap) | %.2f s | |\n", t1s - t1);
    printf("| peak RSS after the adds | %.0f MiB | |\n", rss_fill);
    printf("| peak RSS after the next+done | %.0f MiB | |\n", rss_drain);
    printf("| peak RSS overall (with the resume) | %.0f MiB | |\n", rss);
    printf("| of which the Bloom filter | %.0f MiB | |\n", bloom);
    printf("| peak RSS besides the Bloom filter | %.0f MiB | <= 256 MiB |\n",
           rss - bloom);
    printf("| crawl.db + WAL | %.0f MiB | |\n", db);
    printf("| resume: open + quick_check + in-flight requeue | %.2f s | |\n",
           t5 - t4);
    printf("| resume total (with %llu queued), to the first job | %.2f s | "
           "<= 10 s |\n",
           (unsigned long long)info.queued, t6 - t4);
    bench_csv_num(csv, "per_s", adds, "state/adds_per_s");
    bench_csv_num(csv, "us", add_cpu * 1e6 / (double)urls, "state/add_cpu_us");
    bench_csv_num(csv, "per_s", nd, "state/next_done_per_s");
    bench_csv_num(csv, "ms", cm, "state/commit_ms");
    bench_csv_num(csv, "s", t6 - t4, "state/resume_s");
    bench_csv_num(csv, "s", t5 - t4, "state/open_s");
    bench_csv_num(csv, "mib", rss, "state/peak_rss");
    bench_csv_num(csv, "mib", bloom, "state/bloom");
    bench_csv_num(csv, "mib", db, "state/db");
    return bench_csv_close(csv, csv_path);
}
