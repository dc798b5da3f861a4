/*
 * listen_req.c - the requests of crawl --listen, parsed (listen_req.h).
 */
#include "listen_req.h"

#include <string.h>
#include <strings.h>

#include "bc_hex.h"

static bool is_get(const char *m)
{
    return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0;
}

/* Percent-decode s (len bytes) into out (LISTEN_HOST_MAX + 1 bytes).
 * False for a bad escape, a NUL, a '/' left after decoding that is not
 * part of "://", an empty or too long result. */
static bool decode_host(const char *s, size_t len,
                        char out[LISTEN_HOST_MAX + 1], size_t *out_len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= len ||
                (hi = bc_hex_value((unsigned char)s[i + 1])) < 0 ||
                (lo = bc_hex_value((unsigned char)s[i + 2])) < 0)
                return false;
            c = hi * 16 + lo;
            i += 2;
        }
        if (c == 0 || c <= ' ' || c == 0x7f || n == LISTEN_HOST_MAX)
            return false;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    if (n == 0)
        return false;
    /* A slash only in the origin's "://". */
    const char *sep = strstr(out, "://");
    for (size_t i = 0; i < n; i++)
        if (out[i] == '/' && !(sep && out + i >= sep + 1 && out + i <= sep + 2))
            return false;
    *out_len = n;
    return true;
}

enum listen_route listen_route_of(const char *method, const char *path,
                                  char host[LISTEN_HOST_MAX + 1],
                                  size_t *host_len)
{
    static const struct {
        const char *path;
        enum listen_route route;
        bool post;
    } fixed[] = {
        {"/", LISTEN_PAGE, false},         {"/metrics", LISTEN_METRICS, false},
        {"/status", LISTEN_STATUS, false}, {"/hosts", LISTEN_HOSTS, false},
        {"/pause", LISTEN_PAUSE, true},    {"/resume", LISTEN_RESUME, true},
        {"/seeds", LISTEN_SEEDS, true},    {"/stop", LISTEN_STOP, true},
    };
    bool get = is_get(method), post = strcmp(method, "POST") == 0;
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        if (strcmp(path, fixed[i].path) == 0) {
            if (fixed[i].post ? post : get)
                return fixed[i].route;
            return LISTEN_BAD_METHOD;
        }
    /* /hosts/HOST/delay: HOST is one segment (its slashes escaped). */
    static const char prefix[] = "/hosts/", suffix[] = "/delay";
    size_t len = strlen(path), pl = sizeof(prefix) - 1, sl = sizeof(suffix) - 1;
    if (len <= pl + sl || memcmp(path, prefix, pl) != 0 ||
        memcmp(path + len - sl, suffix, sl) != 0)
        return LISTEN_NOT_FOUND;
    const char *seg = path + pl;
    size_t seg_len = len - pl - sl;
    if (memchr(seg, '/', seg_len)) {
        /* libmicrohttpd decodes %2F in the path: an origin arrives with
         * its "://" as such. Accept exactly one, as in "http://a:1". */
        const char *sep = strstr(seg, "://");
        if (!sep || sep + 3 > seg + seg_len ||
            memchr(sep + 3, '/', (size_t)(seg + seg_len - sep - 3)) ||
            memchr(seg, '/', (size_t)(sep - seg)))
            return LISTEN_NOT_FOUND;
    }
    if (!post)
        return LISTEN_BAD_METHOD;
    if (!decode_host(seg, seg_len, host, host_len))
        return LISTEN_BAD_PATH;
    return LISTEN_HOST_DELAY;
}

const char *listen_allow_of(const char *path)
{
    char host[LISTEN_HOST_MAX + 1];
    size_t host_len;
    return listen_route_of("GET", path, host, &host_len) == LISTEN_BAD_METHOD
               ? "POST"
               : "GET, HEAD";
}

bool listen_route_is_control(enum listen_route route)
{
    switch (route) {
    case LISTEN_PAUSE:
    case LISTEN_RESUME:
    case LISTEN_SEEDS:
    case LISTEN_HOST_DELAY:
    case LISTEN_STOP:
        return true;
    case LISTEN_PAGE:
    case LISTEN_METRICS:
    case LISTEN_STATUS:
    case LISTEN_HOSTS:
    case LISTEN_NOT_FOUND:
    case LISTEN_BAD_METHOD:
    case LISTEN_BAD_PATH:
        return false;
    }
    return false;
}

/* Decimal digits only, at most max: *v. */
static bool parse_uint(const char *s, size_t len, uint64_t max, uint64_t *v)
{
    if (len == 0 || len > 19)
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(s[i] - '0'); /* 19 digits: no overflow */
    }
    if (x > max)
        return false;
    *v = x;
    return true;
}

bool listen_hosts_query(const char *sort_value, const char *limit_value,
                        enum listen_sort *sort, size_t *limit)
{
    static const char *const names[] = {"pages", "bytes", "errors", "queued"};
    enum listen_sort s = LISTEN_SORT_PAGES;
    if (sort_value) {
        size_t i = 0;
        while (i < 4 && strcmp(sort_value, names[i]) != 0)
            i++;
        if (i == 4)
            return false;
        s = (enum listen_sort)i;
    }
    uint64_t l = LISTEN_HOSTS_LIMIT_DEFAULT;
    if (limit_value && (!parse_uint(limit_value, strlen(limit_value),
                                    LISTEN_HOSTS_LIMIT_MAX, &l) ||
                        l == 0))
        return false;
    *sort = s;
    *limit = (size_t)l;
    return true;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool listen_delay_parse(const char *s, size_t len, uint64_t *ms)
{
    while (len > 0 && blank(s[len - 1]))
        len--;
    while (len > 0 && blank(*s))
        s++, len--;
    return parse_uint(s, len, LISTEN_DELAY_MAX_MS, ms);
}

bool listen_seeds_next(const char *body, size_t len, size_t *pos,
                       const char **url, size_t *url_len)
{
    while (*pos < len) {
        size_t start = *pos;
        const char *nl = memchr(body + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - body) : len;
        *pos = nl ? end + 1 : len;
        while (start < end && (body[start] == ' ' || body[start] == '\t'))
            start++;
        while (end > start && blank(body[end - 1]))
            end--;
        if (end == start || body[start] == '#')
            continue;
        *url = body + start;
        *url_len = end - start;
        return true;
    }
    return false;
}

bool listen_token_ok(const char *authorization, const char *token,
                     size_t token_len)
{
    static const char scheme[] = "Bearer ";
    if (!authorization || token_len == 0 ||
        strncasecmp(authorization, scheme, sizeof(scheme) - 1) != 0)
        return false;
    const char *given = authorization + sizeof(scheme) - 1;
    size_t given_len = strlen(given);
    if (given_len != token_len)
        return false; /* the length is no secret: tokens have one */
    unsigned char diff = 0;
    for (size_t i = 0; i < token_len; i++)
        diff |= (unsigned char)(given[i] ^ token[i]);
    return diff == 0;
}

bool listen_wants_openmetrics(const char *accept)
{
    return accept && strstr(accept, "application/openmetrics-text") != NULL;
}
