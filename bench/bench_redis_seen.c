/*
 * bench_redis_seen.c - the seen-test shared in Redis: test-and-add per
 * second from one client over loopback TCP, and the measured false-positive
 * rate against the prediction.
 *
 *   bench_redis_seen [--full] [--port P]
 *
 * Starts its own redis-server on 127.0.0.1:P (default 6390) and a unix
 * socket in a temporary directory. Default n = 10^6 at p = 1 %; --full
 * n = 10^7 (the goal's size). Test-and-add runs in batches of 10^4 keys
 * (10 pipelined BITFIELD commands), then n other keys are queried with
 * contains: the share answered DUPLICATE is the measured rate.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/hiredis.h>

#include "../tests/redis_server.h"
#include "bench_redis.h"
#include "bloomcrawl/redis_seen.h"

#define BATCH 10000u

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Run count keys "u/<first + i>" through test-and-add (set) or contains;
 * returns the DUPLICATE answers, or -1 on error. */
static long long run(struct bc_redis_seen *rs, unsigned long long first,
                     unsigned long long count, bool set)
{
    static char buf[BATCH][32];
    static const void *keys[BATCH];
    static size_t lens[BATCH];
    static enum bc_redis_seen_answer ans[BATCH];
    long long dups = 0;
    for (unsigned long long done = 0; done < count; done += BATCH) {
        size_t n = count - done < BATCH ? (size_t)(count - done) : BATCH;
        for (size_t i = 0; i < n; i++) {
            int len = snprintf(buf[i], sizeof buf[i], "https://h/%llu",
                               first + done + i);
            keys[i] = buf[i];
            lens[i] = (size_t)len;
        }
        enum bc_status st =
            set ? bc_redis_seen_test_and_add(rs, keys, lens, n, ans)
                : bc_redis_seen_contains(rs, keys, lens, n, ans);
        if (st != BC_OK) {
            fprintf(stderr, "bench_redis_seen: %s: %s\n", bc_strerror(st),
                    bc_redis_seen_errmsg(rs));
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            dups += ans[i] == BC_REDIS_SEEN_DUPLICATE;
    }
    return dups;
}

int main(int argc, char **argv)
{
    unsigned long long n = 1000000;
    int port = 6390;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            n = 10000000;
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_redis_seen [--full] [--port P]\n");
            return 2;
        }
    }
    if (!bc_redis_server_available()) {
        fprintf(stderr, "bench_redis_seen: redis-server not installed\n");
        return 77;
    }
    struct bc_redis_server server;
    if (!bc_redis_server_start(&server, port))
        return 1;
    int rc = 1;
    char where[64];
    snprintf(where, sizeof where, "redis://127.0.0.1:%d", port);
    struct bc_redis_seen *rs = NULL;
    enum bc_status st = bc_redis_seen_create(where, "bench", n, 0.01, 1, &rs);
    if (st == BC_OK)
        st = bc_redis_seen_connect(rs);
    if (st != BC_OK) {
        fprintf(stderr, "bench_redis_seen: %s: %s\n", bc_strerror(st),
                rs ? bc_redis_seen_errmsg(rs) : "");
        goto out_stop;
    }
    struct bc_bloom_sizing sz;
    bc_redis_seen_sizing(rs, &sz);

    double s0 = bench_redis_cpu(server.sock), c0 = bench_cpu_self();
    double t0 = now();
    long long dup_in = run(rs, 0, n, true);
    double t1 = now();
    double s1 = bench_redis_cpu(server.sock), c1 = bench_cpu_self();
    long long fp = run(rs, n, n, false);
    double t2 = now();
    if (dup_in < 0 || fp < 0)
        goto out_stop;
    double rate = (double)n / (t1 - t0);
    double fpr = (double)fp / (double)n;
    printf("n=%llu p=0.01 m=%llu k=%u batch=%u chunk=%u transport=tcp "
           "127.0.0.1\n",
           n, (unsigned long long)sz.m_bits, sz.k, BATCH, BC_REDIS_SEEN_CHUNK);
    printf("test_and_add_per_s=%.0f (goal 500000; RedisBloom BF.ADD ~510000)\n",
           rate);
    printf("test_and_add_cpu_ns_per_key client=%.0f server=%.0f\n",
           (c1 - c0) * 1e9 / (double)n, (s1 - s0) * 1e9 / (double)n);
    printf("contains_per_s=%.0f\n", (double)n / (t2 - t1));
    printf("duplicates_among_new_keys=%lld\n", dup_in);
    printf("fpr_measured=%.6f fpr_predicted=%.6f ratio=%.4f (goal within "
           "5%%)\n",
           fpr, sz.fpr_predicted, fpr / sz.fpr_predicted);
    rc = 0;
out_stop:
    bc_redis_seen_free(rs);
    bc_redis_server_stop(&server);
    return rc;
}
