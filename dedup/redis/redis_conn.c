/*
 * redis_conn.c - parse a Redis address, connect with a time limit, and
 * keep SIGPIPE from killing the process while hiredis writes. Shared by
 * redis_seen.c and the crawl workers (crawler/workers/workers.c).
 */
#define _POSIX_C_SOURCE 200809L /* sigtimedwait, pthread_sigmask */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <hiredis/hiredis.h>
#include <pthread.h>

#include "bc_hex.h"
#include "bloomcrawl/redis_conn.h"

/* Decode n bytes of s (percent-escapes) into out (size bytes, with its
 * NUL); false for a bad escape, a NUL, or too long a result. */
static bool decode(const char *s, size_t n, char *out, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int ch = (unsigned char)s[i];
        if (ch == '%') {
            int hi = i + 2 < n ? bc_hex_value((unsigned char)s[i + 1]) : -1;
            int lo = i + 2 < n ? bc_hex_value((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            ch = hi * 16 + lo;
            i += 2;
        }
        if (ch == 0 || k + 1 >= size)
            return false;
        out[k++] = (char)ch;
    }
    out[k] = '\0';
    return true;
}

/* The userinfo "[user]:password" of n bytes at s into w; false if bad. */
static bool userinfo(const char *s, size_t n, struct bc_redis_where *w)
{
    const char *colon = memchr(s, ':', n);
    if (!colon)
        return false; /* a user without a password */
    size_t ulen = (size_t)(colon - s);
    return decode(s, ulen, w->user, sizeof w->user) &&
           decode(colon + 1, n - ulen - 1, w->password, sizeof w->password) &&
           w->password[0] != '\0';
}

enum bc_status bc_redis_where_parse(const char *where,
                                    struct bc_redis_where *out)
{
    if (!where || !out)
        return BC_ERR_INVALID_ARG;
    struct bc_redis_where w;
    memset(&w, 0, sizeof w);
    w.port = 6379;
    if (strncmp(where, "unix://", 7) == 0) {
        const char *rest = where + 7;
        const char *at = strchr(rest, '@');
        const char *slash = strchr(rest, '/');
        if (at && (!slash || at < slash)) {
            if (!userinfo(rest, (size_t)(at - rest), &w))
                return BC_ERR_INVALID_ARG;
            rest = at + 1;
        }
        size_t len = strlen(rest);
        if (rest[0] != '/' || len >= sizeof w.path)
            return BC_ERR_INVALID_ARG;
        memcpy(w.path, rest, len + 1);
        *out = w;
        return BC_OK;
    }
    if (strncmp(where, "unix:", 5) == 0) {
        size_t len = strlen(where + 5);
        if (len == 0 || len >= sizeof w.path)
            return BC_ERR_INVALID_ARG;
        memcpy(w.path, where + 5, len + 1);
        *out = w;
        return BC_OK;
    }
    if (strncmp(where, "redis://", 8) != 0)
        return BC_ERR_INVALID_ARG;
    const char *h = where + 8;
    size_t authority = strcspn(h, "/");
    const char *at = NULL;
    for (size_t i = 0; i < authority; i++)
        if (h[i] == '@')
            at = h + i; /* the last one: the host holds none */
    if (at) {
        if (!userinfo(h, (size_t)(at - h), &w))
            return BC_ERR_INVALID_ARG;
        h = at + 1;
    }
    size_t hlen = strcspn(h, ":/");
    if (hlen == 0 || hlen >= sizeof w.host)
        return BC_ERR_INVALID_ARG;
    const char *rest = h + hlen;
    if (*rest == ':') {
        char *end;
        errno = 0;
        long port = strtol(rest + 1, &end, 10);
        if (end == rest + 1 || errno || port < 1 || port > 65535)
            return BC_ERR_INVALID_ARG;
        w.port = (int)port;
        rest = end;
    }
    if (*rest == '/' && rest[1] != '\0') {
        char *end;
        errno = 0;
        long db = strtol(rest + 1, &end, 10);
        if (end == rest + 1 || *end != '\0' || errno || db < 0 || db > INT_MAX)
            return BC_ERR_INVALID_ARG;
        w.db = db;
        rest = end;
    } else if (*rest == '/') {
        rest++;
    }
    if (*rest != '\0')
        return BC_ERR_INVALID_ARG;
    memcpy(w.host, h, hlen);
    w.host[hlen] = '\0';
    *out = w;
    return BC_OK;
}

void bc_redis_where_text(const struct bc_redis_where *where, char *buf,
                         size_t size)
{
    if (!buf || size == 0)
        return;
    if (where->path[0])
        snprintf(buf, size, "unix:%s", where->path);
    else
        snprintf(buf, size, "%s:%d", where->host, where->port);
}

static void put_err(char *err, size_t err_size, const char *what,
                    const char *where, const char *detail)
{
    if (err && err_size)
        snprintf(err, err_size, "%s%s%s%s", what, where,
                 detail && *detail ? ": " : "", detail ? detail : "");
}

/* One command of the connection's setup (AUTH, SELECT): BC_OK, or the
 * status with err saying what (the server's text, never the arguments). */
static enum bc_status setup_command(redisContext *c, int argc,
                                    const char **argv, const size_t *lens,
                                    const char *what, char *err,
                                    size_t err_size)
{
    struct bc_redis_sigpipe g;
    bc_redis_sigpipe_hold(&g);
    redisReply *r = redisCommandArgv(c, argc, argv, lens);
    bc_redis_sigpipe_release(&g);
    enum bc_status st = BC_OK;
    if (!r) {
        st = c->err == REDIS_ERR_OOM ? BC_ERR_NOMEM : BC_ERR_REDIS_LOST;
        put_err(err, err_size, "Redis connection lost during ", what,
                c->errstr);
    } else if (r->type == REDIS_REPLY_ERROR) {
        st = BC_ERR_REDIS_REPLY;
        put_err(err, err_size, "Redis refused ", what, r->str);
    }
    freeReplyObject(r);
    return st;
}

enum bc_status bc_redis_connect(const struct bc_redis_where *where,
                                uint64_t timeout_ms, struct redisContext **out,
                                char *err, size_t err_size)
{
    if (err && err_size)
        err[0] = '\0';
    if (!where || !out)
        return BC_ERR_INVALID_ARG;
    struct timeval tv = {(time_t)(timeout_ms / 1000),
                         (suseconds_t)(timeout_ms % 1000) * 1000};
    redisContext *c;
    if (timeout_ms == 0)
        c = where->path[0] ? redisConnectUnix(where->path)
                           : redisConnect(where->host, where->port);
    else
        c = where->path[0]
                ? redisConnectUnixWithTimeout(where->path, tv)
                : redisConnectWithTimeout(where->host, where->port, tv);
    if (!c) {
        put_err(err, err_size, "cannot allocate a Redis context", "", NULL);
        return BC_ERR_NOMEM;
    }
    if (c->err) {
        char at[400];
        bc_redis_where_text(where, at, sizeof at);
        put_err(err, err_size, "cannot connect to Redis at ", at, c->errstr);
        redisFree(c);
        return BC_ERR_REDIS_CONNECT;
    }
    if (timeout_ms != 0 && redisSetTimeout(c, tv) != REDIS_OK) {
        put_err(err, err_size, "cannot set the Redis timeout", "", c->errstr);
        redisFree(c);
        return BC_ERR_REDIS_CONNECT;
    }
    enum bc_status st = BC_OK;
    if (where->password[0]) { /* AUTH [user] password */
        const char *argv[3] = {"AUTH", where->user, where->password};
        size_t lens[3] = {4, strlen(where->user), strlen(where->password)};
        int argc = 3;
        if (!where->user[0]) {
            argv[1] = where->password;
            lens[1] = lens[2];
            argc = 2;
        }
        st = setup_command(c, argc, argv, lens, "AUTH", err, err_size);
    }
    if (st == BC_OK && where->db != 0) {
        char db[24];
        snprintf(db, sizeof db, "%ld", where->db);
        const char *argv[2] = {"SELECT", db};
        size_t lens[2] = {6, strlen(db)};
        st = setup_command(c, 2, argv, lens, "SELECT", err, err_size);
    }
    if (st != BC_OK) {
        redisFree(c);
        return st;
    }
    *out = c;
    return BC_OK;
}

void bc_redis_sigpipe_hold(struct bc_redis_sigpipe *g)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    g->was_blocked = sigismember(&old, SIGPIPE) == 1;
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE) == 1;
}

void bc_redis_sigpipe_release(const struct bc_redis_sigpipe *g)
{
    sigset_t pipe_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    if (!g->was_pending && sigismember(&pending, SIGPIPE) == 1) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&pipe_set, NULL, &zero) == -1 && errno == EINTR)
            ;
    }
    if (!g->was_blocked)
        pthread_sigmask(SIG_UNBLOCK, &pipe_set, NULL);
}
