/*
 * listen_req.h - the requests of crawl --listen, parsed without a server.
 *
 * libmicrohttpd (listen.c) parses HTTP itself: the request line, the
 * headers, the query string into key/value pairs, chunked bodies. What
 * is left to crawl is what its own routes mean, and that part lives
 * here, apart from the server, so that a fuzzer (tests/fuzz/fuzz_listen.c)
 * can drive it with arbitrary bytes:
 *
 *     route       "GET /hosts", "POST /hosts/HOST/delay", ... -> a route,
 *                 or 404 (no such path) / 405 (the path, another method)
 *     /hosts      sort=pages|bytes|errors|queued, limit=N
 *     delay       a number of milliseconds (body or ?ms=)
 *     seeds body  one URL a line, as a --seeds file
 *     token       "Authorization: Bearer TOKEN", compared in constant time
 *
 * Nothing here allocates, prints or keeps state.
 */
#ifndef BC_EXAMPLES_LISTEN_REQ_H
#define BC_EXAMPLES_LISTEN_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The routes; LISTEN_NOT_FOUND and LISTEN_BAD_METHOD are answers. */
enum listen_route {
    LISTEN_PAGE,       /* GET /: the live page */
    LISTEN_METRICS,    /* GET /metrics */
    LISTEN_STATUS,     /* GET /status */
    LISTEN_HOSTS,      /* GET /hosts */
    LISTEN_PAUSE,      /* POST /pause */
    LISTEN_RESUME,     /* POST /resume */
    LISTEN_SEEDS,      /* POST /seeds */
    LISTEN_HOST_DELAY, /* POST /hosts/HOST/delay */
    LISTEN_STOP,       /* POST /stop */
    LISTEN_NOT_FOUND,  /* 404 */
    LISTEN_BAD_METHOD, /* 405: the path exists, not with this method */
    LISTEN_BAD_PATH    /* 400: a HOST that does not decode */
};

/* The longest HOST of /hosts/HOST/delay, decoded (an origin,
 * "https://name:port"; a DNS name is at most 253 bytes). */
#define LISTEN_HOST_MAX 300u

/*
 * The route of method (NUL-terminated, "GET", "HEAD", "POST", ...) on
 * path (the URL's path as the server decoded it, without the query).
 * HEAD is served as GET. For LISTEN_HOST_DELAY the HOST segment is
 * percent-decoded into host (LISTEN_HOST_MAX + 1 bytes, NUL-terminated)
 * and its length into *host_len: "127.0.0.1:8080" or
 * "http%3A%2F%2F127.0.0.1%3A8080" (an origin, when the scheme matters).
 * Whether a route changes the crawl: listen_route_is_control().
 */
enum listen_route listen_route_of(const char *method, const char *path,
                                  char host[LISTEN_HOST_MAX + 1],
                                  size_t *host_len);

/* The Allow header of a 405 on path (its route LISTEN_BAD_METHOD): the
 * methods of the path's route, "GET, HEAD" for a read path, "POST" for a
 * control one, whatever the method refused. */
const char *listen_allow_of(const char *path);

/* Whether route is a control endpoint (POST: the token is required). */
bool listen_route_is_control(enum listen_route route);

/* The orders of GET /hosts. */
enum listen_sort {
    LISTEN_SORT_PAGES,
    LISTEN_SORT_BYTES,
    LISTEN_SORT_ERRORS,
    LISTEN_SORT_QUEUED
};

/* The most rows GET /hosts answers, and its default limit. */
#define LISTEN_HOSTS_LIMIT_MAX     100000u
#define LISTEN_HOSTS_LIMIT_DEFAULT 100u

/*
 * GET /hosts's query values (each NULL when absent): sort (default
 * pages) and limit (1 to LISTEN_HOSTS_LIMIT_MAX, default
 * LISTEN_HOSTS_LIMIT_DEFAULT). Returns false (a 400) for any other value;
 * *sort and *limit are written only on success.
 */
bool listen_hosts_query(const char *sort_value, const char *limit_value,
                        enum listen_sort *sort, size_t *limit);

/* The largest host delay an override may set: one hour. */
#define LISTEN_DELAY_MAX_MS 3600000u

/*
 * A delay in milliseconds: decimal digits, optionally surrounded by
 * blanks and line ends (a body "250\n"), 0 to LISTEN_DELAY_MAX_MS (0:
 * back to the crawl's --delay). s need not be NUL-terminated. Returns
 * false for anything else; *ms written only on success.
 */
bool listen_delay_parse(const char *s, size_t len, uint64_t *ms);

/*
 * The next seed of a POST /seeds body (len bytes from *pos, which it
 * advances): a line's URL without its line end and surrounding blanks;
 * blank lines and lines starting with '#' are skipped, as in a --seeds
 * file. Returns true with *url and *url_len set, false at the end.
 */
bool listen_seeds_next(const char *body, size_t len, size_t *pos,
                       const char **url, size_t *url_len);

/*
 * Whether an Authorization header value (NULL when absent) is "Bearer "
 * followed by exactly token (token_len bytes; the scheme's case is
 * ignored, RFC 9110 11.1). The token's bytes are compared in a time that
 * does not depend on where they differ.
 */
bool listen_token_ok(const char *authorization, const char *token,
                     size_t token_len);

/* The Prometheus exposition format an Accept header (NULL when absent)
 * asks for: true for OpenMetrics 1.0 (application/openmetrics-text),
 * false for the text format 0.0.4. */
bool listen_wants_openmetrics(const char *accept);

#endif /* BC_EXAMPLES_LISTEN_REQ_H */
