/*
 * bench_handoff.c - crawl workers' handoff alone: URLs per second through
 * the Redis streams, batched (bloomcrawl/workers.h).
 *
 *   bench_handoff [--full] [--urls K]
 *
 * Starts its own redis-server (a unix socket in a temporary directory, no
 * TCP, no persistence) and two workers of one crawl in this process, each
 * with its own crawler and crawl state (temporary directories). Worker 0,
 * the sender, is given K distinct URLs on hosts worker 1 owns, as links
 * found on pages are (bc_crawler_add_routed(): normalized, scope, the
 * partition, route(): the sender cache and an outbox row in the state),
 * in chunks of 4,096, each followed by one bc_workers_step() (the commit
 * and the XADD of the outbox, 512 URLs an entry). Then worker 1, the
 * receiver, is stepped until it has read, admitted (its frontier: the
 * seen-test, a host queue, the state's journal) and acknowledged every
 * entry. Its crawler fetches nothing (max_pages 1, the hosts resolved to
 * a closed port, robots.txt not asked for): the handoff is measured
 * alone. Printed: URLs per second for sending and for receive + ack, CPU
 * of this process and of the server per URL, and Redis commands per URL
 * on each side. Default K = 500,000 (about 5 s); --full K = 2,000,000.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tests/redis_server.h"
#include "bench_redis.h"
#include "bloomcrawl/fetcher.h"
#include "bloomcrawl/workers.h"

#define CHUNK 4096u
#define HOSTS 64u

struct node {
    char dir[64];
    struct bc_crawl_state *state;
    struct bc_crawler *crawler;
    struct bc_workers *w;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int die(const char *what, enum bc_status st, const char *detail)
{
    fprintf(stderr, "bench_handoff: %s: %s%s%s\n", what, bc_strerror(st),
            detail && *detail ? ": " : "", detail ? detail : "");
    return 1;
}

static int node_open(struct node *n, const char *where, unsigned index,
                     const char *const *resolve, size_t resolve_count)
{
    snprintf(n->dir, sizeof n->dir, "/tmp/bc_handoff_XXXXXX");
    if (!mkdtemp(n->dir))
        return die("mkdtemp", BC_ERR_IO, NULL);
    char sdir[96];
    snprintf(sdir, sizeof sdir, "%s/state", n->dir);
    struct bc_crawl_state_error err;
    enum bc_status st = bc_crawl_state_open(sdir, NULL, 0, &n->state, &err);
    if (st != BC_OK)
        return die("bc_crawl_state_open", st, err.text);
    struct bc_workers_config wc;
    bc_workers_config_init(&wc);
    wc.where = where;
    wc.crawl_id = "handoff";
    wc.workers = 2;
    wc.index = index;
    st = bc_workers_create(&wc, &n->w);
    if (st != BC_OK)
        return die("bc_workers_create", st, bc_workers_errmsg(n->w));
    struct bc_crawler_config cfg;
    bc_crawler_config_init(&cfg);
    cfg.frontier.scope = BC_SCOPE_ANY;
    cfg.frontier.obey_robots = false;
    cfg.frontier.min_delay_ms = 0;
    cfg.max_pages = 1;
    cfg.fetcher.resolve = resolve;
    cfg.fetcher.resolve_count = resolve_count;
    cfg.fetcher.connect_timeout_ms = 1000;
    cfg.state = n->state;
    if ((st = bc_workers_attach(n->w, &cfg, n->state)) != BC_OK ||
        (st = bc_crawler_create(&cfg, &n->crawler)) != BC_OK ||
        (st = bc_workers_start(n->w, n->crawler)) != BC_OK)
        return die("worker", st, NULL);
    return 0;
}

static void node_close(struct node *n)
{
    bc_crawler_free(n->crawler);
    bc_workers_free(n->w);
    bc_crawl_state_close(n->state);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", n->dir);
    if (n->dir[0] && system(cmd) != 0)
        fprintf(stderr, "bench_handoff: could not remove %s\n", n->dir);
}

int main(int argc, char **argv)
{
    unsigned long long urls = 500000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            urls = 2000000;
        else if (strcmp(argv[i], "--urls") == 0 && i + 1 < argc)
            urls = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_handoff [--full] [--urls K]\n");
            return 2;
        }
    }
    if (!bc_redis_server_available()) {
        fprintf(stderr, "bench_handoff: redis-server not installed\n");
        return 1;
    }
    struct bc_redis_server server;
    if (!bc_redis_server_start(&server, 0))
        return 1;
    int rc = 1;
    if (bc_fetcher_global_init() != BC_OK)
        goto out_server;

    /* HOSTS hosts that worker 1 owns, resolved to a closed port. */
    static char names[HOSTS][32], resolve_buf[HOSTS][64];
    static const char *resolve[HOSTS];
    unsigned found = 0;
    for (unsigned h = 0; found < HOSTS; h++) {
        char origin[48];
        snprintf(origin, sizeof origin, "http://h%u.test", h);
        if (bc_workers_owner(origin, strlen(origin), 2) != 1)
            continue;
        snprintf(names[found], sizeof names[found], "h%u.test", h);
        snprintf(resolve_buf[found], sizeof resolve_buf[found],
                 "h%u.test:80:127.0.0.1", h);
        resolve[found] = resolve_buf[found];
        found++;
    }
    struct node sender = {0}, receiver = {0};
    if (node_open(&sender, server.where, 0, resolve, HOSTS) != 0 ||
        node_open(&receiver, server.where, 1, resolve, HOSTS) != 0)
        goto out_nodes;

    double srv0 = bench_redis_cpu(server.sock), cpu0 = bench_cpu_self(),
           t0 = now();
    char url[96];
    for (unsigned long long i = 0; i < urls; i++) {
        int len =
            snprintf(url, sizeof url, "http://%s/p/%llu", names[i % HOSTS], i);
        enum bc_frontier_reason why;
        enum bc_status st =
            bc_crawler_add_routed(sender.crawler, url, (size_t)len, 1, 0,
                                  "http://h0.test/", 15, false, &why);
        if (st != BC_OK || why != BC_ADMIT_ROUTED) {
            die("bc_crawler_add_routed", st, bc_frontier_reason_name(why));
            goto out_nodes;
        }
        if ((i + 1) % CHUNK == 0 || i + 1 == urls) {
            bool over;
            st = bc_workers_step(sender.w, 0, &over);
            if (st != BC_OK) {
                die("bc_workers_step", st, NULL);
                goto out_nodes;
            }
        }
    }
    struct bc_workers_stats s;
    for (int i = 0; i < 1000; i++) {
        bc_workers_stats(sender.w, &s);
        if (s.outbox == 0)
            break;
        bool over;
        if (bc_workers_step(sender.w, 0, &over) != BC_OK)
            goto out_nodes;
    }
    double t1 = now(), cpu1 = bench_cpu_self(),
           srv1 = bench_redis_cpu(server.sock);
    struct bc_workers_stats ss;
    bc_workers_stats(sender.w, &ss);

    struct bc_workers_stats rs;
    for (;;) {
        bool over;
        enum bc_status st = bc_workers_step(receiver.w, 0, &over);
        if (st != BC_OK) {
            die("bc_workers_step", st, NULL);
            goto out_nodes;
        }
        bc_workers_stats(receiver.w, &rs);
        if (rs.acked_entries >= ss.sent_entries)
            break;
    }
    double t2 = now(), cpu2 = bench_cpu_self(),
           srv2 = bench_redis_cpu(server.sock);
    struct bc_crawler_stats cs;
    bc_crawler_stats(receiver.crawler, &cs);

    double k = (double)urls;
    printf("urls=%llu hosts=%u entries=%llu urls_per_entry=%.1f "
           "transport=unix redis=no-persistence\n",
           urls, HOSTS, (unsigned long long)ss.sent_entries,
           (double)ss.sent_urls / (double)ss.sent_entries);
    printf("send_urls_per_s=%.0f (admit + route + outbox + commit + XADD)\n",
           k / (t1 - t0));
    printf("receive_ack_urls_per_s=%.0f (XREADGROUP + admit + commit + "
           "XACK)\n",
           k / (t2 - t1));
    printf("send_cpu_ns_per_url client=%.0f server=%.0f\n",
           (cpu1 - cpu0) * 1e9 / k, (srv1 - srv0) * 1e9 / k);
    printf("receive_cpu_ns_per_url client=%.0f server=%.0f\n",
           (cpu2 - cpu1) * 1e9 / k, (srv2 - srv1) * 1e9 / k);
    printf("redis_commands_per_url send=%.4f receive=%.4f\n",
           (double)ss.redis_commands / k, (double)rs.redis_commands / k);
    printf("received_urls=%llu routed_in=%llu acked_entries=%llu "
           "garbage=%llu\n",
           (unsigned long long)rs.received_urls,
           (unsigned long long)cs.routed_in,
           (unsigned long long)rs.acked_entries,
           (unsigned long long)rs.garbage_entries);
    rc = rs.received_urls == urls ? 0 : 1;
out_nodes:
    node_close(&sender);
    node_close(&receiver);
    bc_fetcher_global_cleanup();
out_server:
    bc_redis_server_stop(&server);
    return rc;
}
