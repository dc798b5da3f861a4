/*
 * bench_redis.h - what the Redis benchmarks measure besides time: the CPU
 * of the benchmark's own process and of the redis-server it talks to
 * (bench_redis_seen.c, bench_handoff.c).
 */
#ifndef BC_BENCH_REDIS_H
#define BC_BENCH_REDIS_H

#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>
#include <sys/resource.h>

/* CPU seconds (user + system) of this process. */
static inline double bench_cpu_self(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 +
           (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
}

/* CPU seconds of the redis-server on the unix socket sock (INFO cpu:
 * used_cpu_sys + used_cpu_user); -1 when it does not answer. */
static inline double bench_redis_cpu(const char *sock)
{
    double total = -1.0;
    redisContext *c = redisConnectUnix(sock);
    if (!c || c->err)
        goto out;
    redisReply *r = redisCommand(c, "INFO cpu");
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *sys = strstr(r->str, "used_cpu_sys:");
        const char *user = strstr(r->str, "used_cpu_user:");
        if (sys && user)
            total = atof(sys + 13) + atof(user + 14);
    }
    freeReplyObject(r);
out:
    redisFree(c);
    return total;
}

#endif /* BC_BENCH_REDIS_H */
