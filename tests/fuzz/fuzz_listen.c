/*
 * fuzz_listen.c - libFuzzer target for examples/listen_req.c, the part of
 * crawl --listen's request handling that crawl writes itself (the HTTP
 * parsing is libmicrohttpd's).
 *
 * Input: the first byte picks the method, then NUL-separated fields: the
 * path, a sort value, a limit value, an Authorization value; the rest is
 * a body, read as POST /seeds and as a delay. Beyond "never crash, leak
 * or trip a sanitizer" it checks what must always hold: a decoded HOST
 * fits and has no control byte, a route is what its method allows, every
 * seed lies inside the body on one line, trimmed and not a comment, the
 * seeds end, a delay parsed is within bounds, and a token is accepted
 * when it is given and refused when one byte differs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "listen_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The next NUL-terminated field of *p (copied into buf, cap bytes). */
static const char *field(const uint8_t **p, size_t *left, char *buf, size_t cap)
{
    size_t n = 0;
    while (*left > 0 && **p != 0 && n + 1 < cap) {
        buf[n++] = (char)**p;
        (*p)++, (*left)--;
    }
    if (*left > 0)
        (*p)++, (*left)--;
    buf[n] = '\0';
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"GET", "HEAD",   "POST",
                                          "PUT", "DELETE", ""};
    if (size < 1)
        return 0;
    const char *method = methods[data[0] % 6];
    const uint8_t *p = data + 1;
    size_t left = size - 1;
    char path[1024], sort[64], limit[64], auth[256];
    field(&p, &left, path, sizeof(path));
    field(&p, &left, sort, sizeof(sort));
    field(&p, &left, limit, sizeof(limit));
    field(&p, &left, auth, sizeof(auth));
    const char *body = (const char *)p;

    char host[LISTEN_HOST_MAX + 1];
    size_t host_len = 0;
    enum listen_route r = listen_route_of(method, path, host, &host_len);
    if (r == LISTEN_HOST_DELAY) {
        if (host_len == 0 || host_len > LISTEN_HOST_MAX ||
            strlen(host) != host_len)
            abort();
        for (size_t i = 0; i < host_len; i++)
            if ((unsigned char)host[i] <= ' ' || host[i] == 0x7f)
                abort();
    }
    if (listen_route_is_control(r) && strcmp(method, "POST") != 0)
        abort();
    if (r <= LISTEN_HOSTS && strcmp(method, "GET") != 0 &&
        strcmp(method, "HEAD") != 0)
        abort();

    enum listen_sort s;
    size_t l;
    if (listen_hosts_query(*sort ? sort : NULL, *limit ? limit : NULL, &s,
                           &l) &&
        (l == 0 || l > LISTEN_HOSTS_LIMIT_MAX || s > LISTEN_SORT_QUEUED))
        abort();

    size_t pos = 0, count = 0, url_len;
    const char *url;
    while (listen_seeds_next(body, left, &pos, &url, &url_len)) {
        if (url < body || url + url_len > body + left || url_len == 0 ||
            memchr(url, '\n', url_len) || url[0] == '#' || url[0] == ' ' ||
            url[url_len - 1] == ' ' || url[url_len - 1] == '\r')
            abort();
        if (++count > left)
            abort(); /* at most a seed a byte: the loop ends */
    }

    uint64_t ms;
    if (listen_delay_parse(body, left, &ms) && ms > LISTEN_DELAY_MAX_MS)
        abort();

    size_t tl = strlen(auth);
    char bearer[300];
    memcpy(bearer, "Bearer ", 7);
    memcpy(bearer + 7, auth, tl + 1);
    if (tl > 0) {
        if (!listen_token_ok(bearer, auth, tl))
            abort();
        bearer[7 + tl - 1] ^= 1;
        if (listen_token_ok(bearer, auth, tl))
            abort();
    }
    (void)listen_token_ok(auth, "0123456789abcdef", 16);
    (void)listen_wants_openmetrics(auth);
    return 0;
}
