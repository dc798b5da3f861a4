/*
 * bloomcrawl/redis_conn.h - where a Redis server is, and a connection to it:
 * the one piece of code that bc_redis_seen (redis_seen.h) and the crawl
 * workers (workers.h) share for it.
 *
 * An address is "unix:/path/to/socket" or "redis://host[:port][/db]"
 * (port 6379 and db 0 by default; host a name or an IPv4 address); with a
 * password (Redis's requirepass, or an ACL user's), "redis://[[user]:
 * password@]host[:port][/db]" or "unix://[[user]:password@]/path", the
 * user and password percent-encoded where they hold ':', '@', '/' or '%'.
 * bc_redis_connect() opens a hiredis connection to it, with a time limit
 * on connecting and on every later command, authenticates (AUTH) and
 * selects the database. hiredis's redisContext is named here as an incomplete
 * struct only: this header needs no hiredis header, the modules that speak
 * hiredis include <hiredis/hiredis.h> themselves.
 *
 * hiredis writes with write(2): a server gone mid-command raises SIGPIPE,
 * which would kill the process. The library may not change a process-wide
 * signal disposition, so every round of I/O runs between
 * bc_redis_sigpipe_hold() and bc_redis_sigpipe_release(), which block
 * SIGPIPE in the calling thread and consume a SIGPIPE raised meanwhile.
 */
#ifndef BC_REDIS_REDIS_CONN_H
#define BC_REDIS_REDIS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A parsed address. */
struct bc_redis_where {
    char host[256];     /* "" for a unix socket */
    char path[108];     /* the unix socket's path, "" for TCP */
    int port;           /* TCP port (6379) */
    long db;            /* the database SELECTed after connecting (0) */
    char user[128];     /* AUTH's user ("": the default user) */
    char password[256]; /* AUTH's password ("": no AUTH) */
};

/*
 * Parse where (the forms above) into *out, user and password decoded.
 * Returns BC_OK, or BC_ERR_INVALID_ARG (NULL, another scheme, an empty
 * host or path, a port outside 1..65535, a db that is not a number >= 0,
 * anything after the db, a host, path, user or password too long for
 * *out, a bad percent-escape, a user without a password); *out is
 * written only on success. O(length of where).
 */
enum bc_status bc_redis_where_parse(const char *where,
                                    struct bc_redis_where *out);

/* Write where as "unix:/path" or "host:port" into buf (size bytes, cut and
 * NUL-terminated), for messages: never the user or the password. */
void bc_redis_where_text(const struct bc_redis_where *where, char *buf,
                         size_t size);

struct redisContext; /* hiredis's connection */

/*
 * Connect to where, waiting at most timeout_ms for the connection and then
 * for each command's reply (0: no limit), AUTH with its password (and
 * user) when it has one, and SELECT its db when not 0.
 * Returns BC_OK with *out (free it with hiredis's redisFree()), or:
 *   BC_ERR_REDIS_CONNECT  no connection; err says where and why, e.g.
 *                         "cannot connect to Redis at unix:/x: No such
 *                         file or directory"
 *   BC_ERR_REDIS_REPLY    AUTH or SELECT was refused (err has the
 *                         server's text, never the password)
 *   BC_ERR_REDIS_LOST     the connection broke during AUTH or SELECT
 *   BC_ERR_NOMEM, BC_ERR_INVALID_ARG (NULL where or out).
 * err (err_size bytes, may be NULL) is "" on success. Cost: one connect,
 * plus one round trip for AUTH and one when db is not 0.
 */
enum bc_status bc_redis_connect(const struct bc_redis_where *where,
                                uint64_t timeout_ms, struct redisContext **out,
                                char *err, size_t err_size);

/* What bc_redis_sigpipe_hold() found, for bc_redis_sigpipe_release(). */
struct bc_redis_sigpipe {
    bool was_blocked; /* SIGPIPE was blocked in this thread already */
    bool was_pending; /* and one was pending */
};

/* Block SIGPIPE in the calling thread, remembering how it was. O(1). */
void bc_redis_sigpipe_hold(struct bc_redis_sigpipe *guard);

/* Consume a SIGPIPE raised since the hold (not one pending before it),
 * then unblock SIGPIPE unless it was blocked before. O(1). */
void bc_redis_sigpipe_release(const struct bc_redis_sigpipe *guard);

#ifdef __cplusplus
}
#endif

#endif /* BC_REDIS_REDIS_CONN_H */
