/*
 * listen.c - the HTTP server of crawl --listen (listen.h).
 *
 * libmicrohttpd in thread-per-connection mode: its polling thread
 * accepts, each connection gets a thread that may block (a command waits
 * for the crawl loop's answer) without holding up the others. Every
 * request goes through answer(), called by libmicrohttpd several times:
 * first with the headers (route, token and Content-Length are checked
 * there, so a refused request's body is never read), then with each
 * piece of the body, then once with nothing left (the answer).
 */
#define _GNU_SOURCE
#include "listen.h"

#include "bc_clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* A connection open, for the watchdog: since when its request runs. */
struct conn_rec {
    int fd;
    uint64_t since_ms; /* its accept, or its previous request's end */
    bool cut;          /* shut down by the watchdog */
    struct conn_rec *prev, *next;
};

/* A published snapshot, shared by the document slots that point to it
 * and by the responses that serve from it (each holds a reference, given
 * back by response_done() when libmicrohttpd destroys the response): a
 * response's body is never a copy. */
struct snap {
    struct listen_snapshot s;
    unsigned refs;
    uint64_t at_ms;
};

/* The documents, a slot each: LISTEN_DOC_* is 1 << its slot. */
#define DOCS 4u

struct listen_server {
    struct MHD_Daemon *daemon;
    uint16_t port;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* any change: snapshot, command, answer, stop */
    /* By document: the last snapshot published with it, or NULL; how
     * many such publications so far. */
    struct snap *cur[DOCS];
    uint64_t seq[DOCS];
    unsigned wanted; /* LISTEN_DOC_* a reader asked for since */
    struct listen_command *head, *tail; /* queued, not taken */
    bool closing;
    /* Commands answered whose response is not delivered yet (their
     * connection not completed): listen_stop() waits for them. */
    unsigned delivering;
    char *token;
    size_t token_len;
    bool reads_need_token;
    void (*wake)(void *ctx);
    void *wake_ctx;
    const char *page;
    size_t page_len;
    /* The connections open (their conn_rec), and the watchdog thread
     * that cuts those whose request is older than request_max_ms. */
    struct conn_rec *conns;
    uint64_t request_max_ms;
    pthread_t watchdog;
    bool watching;
};

/* One request, over answer()'s calls. */
struct req {
    enum listen_route route;
    char host[LISTEN_HOST_MAX + 1];
    size_t host_len;
    char *body;
    size_t len;
    bool too_big;
    bool answered;   /* a refusal was queued at the first call */
    bool delivering; /* a command's answer, counted in s->delivering */
};

static uint64_t mono_ms(void)
{
    return bc_mono_ms(); /* the clock of the condition's waits */
}

/* Wait on the server's condition until the monotonic time deadline. */
static void wait_until(struct listen_server *s, uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000),
                          (long)(deadline % 1000) * 1000000L};
    pthread_cond_timedwait(&s->cond, &s->mu, &ts);
}

static void snap_free_parts(struct listen_snapshot *s)
{
    free(s->metrics);
    free(s->openmetrics);
    free(s->status);
    for (size_t i = 0; i < s->host_count; i++)
        free(s->hosts[i].json);
    free(s->hosts);
}

static void snap_free(struct snap *p)
{
    snap_free_parts(&p->s);
    free(p);
}

/* Drop a reference (the lock held). */
static void snap_unref(struct snap *p)
{
    if (p && --p->refs == 0)
        snap_free(p);
}

/* ---- responses ---------------------------------------------------------- */

static enum MHD_Result respond_allow(struct MHD_Connection *conn,
                                     unsigned status, const char *type,
                                     char *body, size_t len, const char *allow)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, body, body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (status == MHD_HTTP_UNAUTHORIZED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (allow) /* 405 (RFC 9110 15.5.6) */
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result respond(struct MHD_Connection *conn, unsigned status,
                               const char *type, char *body, size_t len)
{
    return respond_allow(conn, status, type, body, len, NULL);
}

/* A response's reference to a snapshot. */
struct hold {
    struct listen_server *s;
    struct snap *p;
};

static void snap_release(struct listen_server *s, struct snap *p);

/* libmicrohttpd destroys a response served from a snapshot. */
static void response_done(void *cls)
{
    struct hold *h = cls;
    snap_release(h->s, h->p);
    free(h);
}

/* 200 with len bytes at body, inside snapshot p: the response takes over
 * the caller's reference to p. */
static enum MHD_Result respond_snap(struct listen_server *s,
                                    struct MHD_Connection *conn,
                                    const char *type, struct snap *p,
                                    const char *body, size_t len)
{
    struct hold *h = malloc(sizeof(*h));
    struct MHD_Response *r =
        h ? MHD_create_response_from_buffer_with_free_callback_cls(
                len, (void *)body, response_done, h)
          : NULL;
    if (!r) {
        free(h);
        snap_release(s, p);
        return MHD_NO;
    }
    h->s = s;
    h->p = p;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r); /* response_done() once delivered */
    return ret;
}

/* A short JSON error: {"error": "why"}, with an Allow header or not. */
static enum MHD_Result refuse_allow(struct MHD_Connection *conn,
                                    unsigned status, const char *why,
                                    const char *allow)
{
    char *body = NULL;
    int n = asprintf(&body, "{\"error\": \"%s\"}\n", why);
    if (n < 0)
        return MHD_NO;
    return respond_allow(conn, status, "application/json", body, (size_t)n,
                         allow);
}

static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned status,
                              const char *why)
{
    return refuse_allow(conn, status, why, NULL);
}

/* ---- reads -------------------------------------------------------------- */

/* The slot of a document (one LISTEN_DOC_* bit). */
static unsigned doc_slot(unsigned doc)
{
    unsigned k = 0;
    while (k < DOCS - 1 && !(doc & (1u << k)))
        k++;
    return k;
}

/* A reference to a snapshot holding doc (one LISTEN_DOC_*) at most
 * LISTEN_FRESH_MS old, after asking the loop for it and waiting if need
 * be (the one there is otherwise, or NULL before the first). Release
 * with snap_release(). */
static struct snap *snap_fresh(struct listen_server *s, unsigned doc)
{
    unsigned k = doc_slot(doc);
    pthread_mutex_lock(&s->mu);
    uint64_t now = mono_ms();
    if (!s->closing &&
        (!s->cur[k] || now - s->cur[k]->at_ms >= LISTEN_FRESH_MS)) {
        uint64_t seq = s->seq[k];
        s->wanted |= doc;
        pthread_cond_broadcast(&s->cond); /* a lingering loop waits */
        pthread_mutex_unlock(&s->mu);
        s->wake(s->wake_ctx);
        pthread_mutex_lock(&s->mu);
        uint64_t deadline = now + LISTEN_FRESH_WAIT_MS;
        while (s->seq[k] == seq && !s->closing && mono_ms() < deadline)
            wait_until(s, deadline);
    }
    struct snap *p = s->cur[k];
    if (p)
        p->refs++;
    pthread_mutex_unlock(&s->mu);
    return p;
}

static void snap_release(struct listen_server *s, struct snap *p)
{
    pthread_mutex_lock(&s->mu);
    snap_unref(p);
    pthread_mutex_unlock(&s->mu);
}

static enum listen_sort sort_by; /* for host_cmp: set under sort_mu */
static pthread_mutex_t sort_mu = PTHREAD_MUTEX_INITIALIZER;

static int host_cmp(const void *pa, const void *pb)
{
    const struct listen_host *a = *(const struct listen_host *const *)pa;
    const struct listen_host *b = *(const struct listen_host *const *)pb;
    if (a->key[sort_by] != b->key[sort_by])
        return a->key[sort_by] > b->key[sort_by] ? -1 : 1;
    /* Then the snapshot's order: pages descending, then origin. */
    return a < b ? -1 : a > b;
}

/* GET /hosts: {"sort": "...", "hosts": N, "per_host": [rows]}. */
static enum MHD_Result answer_hosts(struct MHD_Connection *conn,
                                    const struct snap *p, enum listen_sort by,
                                    size_t limit)
{
    static const char *const names[] = {"pages", "bytes", "errors", "queued"};
    size_t n = p ? p->s.host_count : 0;
    const struct listen_host **row = malloc((n ? n : 1) * sizeof(*row));
    if (!row)
        return MHD_NO;
    for (size_t i = 0; i < n; i++)
        row[i] = &p->s.hosts[i];
    pthread_mutex_lock(&sort_mu);
    sort_by = by;
    qsort(row, n, sizeof(*row), host_cmp);
    pthread_mutex_unlock(&sort_mu);
    if (limit > n)
        limit = n;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        free(row);
        return MHD_NO;
    }
    fprintf(f, "{\"sort\": \"%s\", \"hosts\": %zu, \"per_host\": [", names[by],
            n);
    for (size_t i = 0; i < limit; i++) {
        if (i)
            fputs(", ", f);
        fwrite(row[i]->json, 1, row[i]->json_len, f);
    }
    fputs("]}\n", f);
    bool ok = !ferror(f);
    fclose(f);
    free(row);
    if (!ok) {
        free(buf);
        return MHD_NO;
    }
    return respond(conn, MHD_HTTP_OK, "application/json", buf, len);
}

static enum MHD_Result answer_read(struct listen_server *s,
                                   struct MHD_Connection *conn,
                                   const struct req *r)
{
    if (r->route == LISTEN_PAGE) { /* compiled in: served in place */
        struct MHD_Response *pr = MHD_create_response_from_buffer(
            s->page_len, (void *)s->page, MHD_RESPMEM_PERSISTENT);
        if (!pr)
            return MHD_NO;
        MHD_add_response_header(pr, MHD_HTTP_HEADER_CONTENT_TYPE,
                                "text/html; charset=utf-8");
        MHD_add_response_header(pr, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, pr);
        MHD_destroy_response(pr);
        return ret;
    }
    enum listen_sort by = LISTEN_SORT_PAGES;
    size_t limit = 0;
    if (r->route == LISTEN_HOSTS &&
        !listen_hosts_query(
            MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "sort"),
            MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit"),
            &by, &limit))
        return refuse(conn, MHD_HTTP_BAD_REQUEST,
                      "sort is pages, bytes, errors or queued; limit 1 to "
                      "100000");
    bool om = r->route == LISTEN_METRICS &&
              listen_wants_openmetrics(MHD_lookup_connection_value(
                  conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
    unsigned doc = r->route == LISTEN_HOSTS    ? LISTEN_DOC_HOSTS
                   : r->route == LISTEN_STATUS ? LISTEN_DOC_STATUS
                   : om                        ? LISTEN_DOC_OPENMETRICS
                                               : LISTEN_DOC_METRICS;
    struct snap *p = snap_fresh(s, doc);
    if (!p) {
        return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                      "no snapshot yet: try again");
    }
    if (r->route == LISTEN_HOSTS) {
        enum MHD_Result ret = answer_hosts(conn, p, by, limit);
        snap_release(s, p);
        return ret;
    }
    /* The response serves the snapshot's text and keeps the reference. */
    if (r->route == LISTEN_STATUS)
        return respond_snap(s, conn, "application/json", p, p->s.status,
                            p->s.status_len);
    if (om)
        return respond_snap(s, conn,
                            "application/openmetrics-text; version=1.0.0; "
                            "charset=utf-8",
                            p, p->s.openmetrics, p->s.openmetrics_len);
    return respond_snap(s, conn, "text/plain; version=0.0.4", p, p->s.metrics,
                        p->s.metrics_len);
}

/* ---- commands ----------------------------------------------------------- */

static void command_free(struct listen_command *cmd)
{
    free((char *)cmd->body);
    free(cmd->reply);
    free(cmd);
}

static enum MHD_Result answer_command(struct listen_server *s,
                                      struct MHD_Connection *conn,
                                      struct req *r)
{
    struct listen_command *cmd = calloc(1, sizeof(*cmd));
    if (!cmd)
        return MHD_NO;
    switch (r->route) {
    case LISTEN_PAUSE:
        cmd->kind = LISTEN_CMD_PAUSE;
        break;
    case LISTEN_RESUME:
        cmd->kind = LISTEN_CMD_RESUME;
        break;
    case LISTEN_STOP:
        cmd->kind = LISTEN_CMD_STOP;
        break;
    case LISTEN_SEEDS:
        cmd->kind = LISTEN_CMD_SEEDS;
        break;
    case LISTEN_HOST_DELAY: {
        cmd->kind = LISTEN_CMD_DELAY;
        const char *q =
            MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "ms");
        bool ok = q ? listen_delay_parse(q, strlen(q), &cmd->delay_ms)
                    : listen_delay_parse(r->body ? r->body : "", r->len,
                                         &cmd->delay_ms);
        if (!ok) {
            free(cmd);
            return refuse(conn, MHD_HTTP_BAD_REQUEST,
                          "the delay is milliseconds, 0 to 3600000, in the "
                          "body or ?ms=");
        }
        memcpy(cmd->host, r->host, r->host_len + 1);
        cmd->host_len = r->host_len;
        break;
    }
    case LISTEN_PAGE:
    case LISTEN_METRICS:
    case LISTEN_STATUS:
    case LISTEN_HOSTS:
    case LISTEN_NOT_FOUND:
    case LISTEN_BAD_METHOD:
    case LISTEN_BAD_PATH:
        free(cmd);
        return MHD_NO;
    }
    /* The command owns the body: it may outlive the connection. */
    cmd->body = r->body;
    cmd->body_len = r->len;
    r->body = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->closing) {
        pthread_mutex_unlock(&s->mu);
        command_free(cmd);
        return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "the crawl is over");
    }
    if (s->tail)
        s->tail->next = cmd;
    else
        s->head = cmd;
    s->tail = cmd;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mu);
    s->wake(s->wake_ctx);
    pthread_mutex_lock(&s->mu);
    uint64_t deadline = mono_ms() + LISTEN_COMMAND_WAIT_MS;
    while (!cmd->done && !s->closing && mono_ms() < deadline)
        wait_until(s, deadline);
    if (!cmd->done) {
        cmd->abandoned = true; /* listen_reply() or listen_stop() frees */
        pthread_mutex_unlock(&s->mu);
        return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                      "the crawl did not answer in time");
    }
    r->delivering = true; /* counted by reply_locked() */
    pthread_mutex_unlock(&s->mu);
    char *reply = cmd->reply;
    size_t reply_len = cmd->reply_len;
    unsigned status = cmd->status;
    cmd->reply = NULL;
    command_free(cmd);
    return respond(conn, status, "application/json", reply, reply_len);
}

/* ---- the request handler ------------------------------------------------ */

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls)
{
    (void)version;
    struct listen_server *s = cls;
    struct req *r = *con_cls;
    if (!r) { /* the headers are in: route, token, Content-Length */
        if (!(r = calloc(1, sizeof(*r))))
            return MHD_NO;
        *con_cls = r;
        r->route = listen_route_of(method, url, r->host, &r->host_len);
        r->answered = true;
        if (r->route == LISTEN_NOT_FOUND)
            return refuse(conn, MHD_HTTP_NOT_FOUND, "no such path");
        if (r->route == LISTEN_BAD_METHOD)
            /* The read paths take GET and HEAD, the control ones POST. */
            return refuse_allow(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                                "not with this method", listen_allow_of(url));
        if (r->route == LISTEN_BAD_PATH)
            return refuse(conn, MHD_HTTP_BAD_REQUEST, "bad host in the path");
        if ((listen_route_is_control(r->route) || s->reads_need_token) &&
            !listen_token_ok(
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                            MHD_HTTP_HEADER_AUTHORIZATION),
                s->token, s->token_len))
            return refuse(conn, MHD_HTTP_UNAUTHORIZED,
                          "Authorization: Bearer TOKEN needed");
        const char *cl = MHD_lookup_connection_value(
            conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > LISTEN_BODY_MAX)
            return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                          "the body is 64 KiB at most");
        r->answered = false;
        return MHD_YES;
    }
    if (r->answered) { /* refused: the rest of the body is dropped */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a piece of the body */
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (r->too_big || r->len + n > LISTEN_BODY_MAX) {
            r->too_big = true; /* a chunked body: no Content-Length */
            return MHD_YES;
        }
        if (!r->body && !(r->body = malloc(LISTEN_BODY_MAX)))
            return MHD_NO;
        memcpy(r->body + r->len, upload_data, n);
        r->len += n;
        return MHD_YES;
    }
    r->answered = true;
    if (r->too_big)
        return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                      "the body is 64 KiB at most");
    if (listen_route_is_control(r->route))
        return answer_command(s, conn, r);
    return answer_read(s, conn, r);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)toe;
    struct listen_server *s = cls;
    struct req *r = *con_cls;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct conn_rec *rec = ci ? ci->socket_context : NULL;
    pthread_mutex_lock(&s->mu);
    if (rec) /* the next request's time starts now */
        rec->since_ms = mono_ms();
    if (r && r->delivering) {
        s->delivering--;
        pthread_cond_broadcast(&s->cond);
    }
    pthread_mutex_unlock(&s->mu);
    if (r) {
        free(r->body);
        free(r);
        *con_cls = NULL;
    }
}

/* A connection opens (its record is its socket context) or closes
 * (libmicrohttpd closes its socket after this: the watchdog never shuts
 * down a descriptor reused by another file). */
static void notify_connection(void *cls, struct MHD_Connection *conn,
                              void **socket_context,
                              enum MHD_ConnectionNotificationCode code)
{
    struct listen_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct conn_rec *rec = ci ? calloc(1, sizeof(*rec)) : NULL;
        *socket_context = rec;
        if (!rec)
            return; /* not watched: its idle timeout still holds */
        rec->fd = ci->connect_fd;
        pthread_mutex_lock(&s->mu);
        rec->since_ms = mono_ms();
        rec->next = s->conns;
        if (s->conns)
            s->conns->prev = rec;
        s->conns = rec;
        pthread_mutex_unlock(&s->mu);
        return;
    }
    struct conn_rec *rec = *socket_context;
    if (!rec)
        return;
    pthread_mutex_lock(&s->mu);
    if (rec->prev)
        rec->prev->next = rec->next;
    else
        s->conns = rec->next;
    if (rec->next)
        rec->next->prev = rec->prev;
    pthread_mutex_unlock(&s->mu);
    free(rec);
    *socket_context = NULL;
}

/* The watchdog: every tenth of the limit (100 ms at least), shut down
 * the sockets of connections whose request has run request_max_ms; the
 * connection's thread then sees the end of its stream and closes it. */
static void *watchdog_main(void *arg)
{
    struct listen_server *s = arg;
    uint64_t step = s->request_max_ms / 10 > 100 ? s->request_max_ms / 10 : 100;
    pthread_mutex_lock(&s->mu);
    while (!s->closing) {
        wait_until(s, mono_ms() + step);
        uint64_t now = mono_ms();
        for (struct conn_rec *c = s->conns; c; c = c->next)
            if (!c->cut && now - c->since_ms >= s->request_max_ms) {
                shutdown(c->fd, SHUT_RDWR);
                c->cut = true;
            }
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- the module --------------------------------------------------------- */

struct listen_server *listen_start(const struct listen_config *cfg, char *err,
                                   size_t cap)
{
    struct sockaddr_storage sa;
    memset(&sa, 0, sizeof(sa));
    struct sockaddr_in *v4 = (struct sockaddr_in *)&sa;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&sa;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    if (inet_pton(AF_INET, cfg->address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(cfg->port);
    } else if (inet_pton(AF_INET6, cfg->address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(cfg->port);
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(err, cap, "%s: not a numeric IPv4 or IPv6 address",
                 cfg->address);
        return NULL;
    }
    struct listen_server *s = calloc(1, sizeof(*s));
    if (!s || !(s->token = malloc(cfg->token_len + 1))) {
        free(s);
        snprintf(err, cap, "%s", strerror(ENOMEM));
        return NULL;
    }
    memcpy(s->token, cfg->token, cfg->token_len);
    s->token[cfg->token_len] = '\0';
    s->token_len = cfg->token_len;
    s->reads_need_token = cfg->reads_need_token;
    s->wake = cfg->wake;
    s->wake_ctx = cfg->wake_ctx;
    s->page = cfg->page;
    s->page_len = cfg->page_len;
    s->request_max_ms =
        cfg->request_max_ms ? cfg->request_max_ms : LISTEN_REQUEST_MAX_MS;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cond, &ca);
    pthread_condattr_destroy(&ca);
    s->daemon = MHD_start_daemon(
        flags, cfg->port, NULL, NULL, answer, s, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)LISTEN_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)(LISTEN_CONNECTIONS / 4), MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)LISTEN_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)LISTEN_HEADER_MAX, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s, MHD_OPTION_END);
    if (!s->daemon) {
        int e = errno;
        snprintf(err, cap, "cannot listen on %s port %u: %s", cfg->address,
                 (unsigned)cfg->port, e ? strerror(e) : "libmicrohttpd failed");
        listen_stop(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : cfg->port;
    int e = pthread_create(&s->watchdog, NULL, watchdog_main, s);
    if (e) {
        snprintf(err, cap, "cannot start the watchdog: %s", strerror(e));
        listen_stop(s);
        return NULL;
    }
    s->watching = true;
    return s;
}

uint16_t listen_port(const struct listen_server *s)
{
    return s->port;
}

void listen_publish(struct listen_server *s, struct listen_snapshot *snap)
{
    struct snap *p = calloc(1, sizeof(*p));
    if (!p) { /* the old ones stay */
        snap_free_parts(snap);
        memset(snap, 0, sizeof(*snap));
        return;
    }
    p->s = *snap;
    memset(snap, 0, sizeof(*snap));
    p->at_ms = mono_ms();
    pthread_mutex_lock(&s->mu);
    for (unsigned k = 0; k < DOCS; k++)
        if (p->s.docs & (1u << k)) {
            p->refs++;
            snap_unref(s->cur[k]);
            s->cur[k] = p;
            s->seq[k]++;
        }
    s->wanted &= ~p->s.docs;
    if (p->refs == 0)
        snap_free(p); /* it held no document */
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->mu);
}

unsigned listen_wanted(struct listen_server *s)
{
    pthread_mutex_lock(&s->mu);
    unsigned w = s->wanted;
    pthread_mutex_unlock(&s->mu);
    return w;
}

struct listen_command *listen_take(struct listen_server *s)
{
    pthread_mutex_lock(&s->mu);
    struct listen_command *cmd = s->head;
    if (cmd) {
        s->head = cmd->next;
        if (!s->head)
            s->tail = NULL;
        cmd->next = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    return cmd;
}

/* Answer cmd (the lock held). */
static void reply_locked(struct listen_server *s, struct listen_command *cmd,
                         unsigned status, char *reply, size_t reply_len)
{
    if (cmd->abandoned) {
        free(reply);
        command_free(cmd);
        return;
    }
    cmd->status = status;
    cmd->reply = reply;
    cmd->reply_len = reply ? reply_len : 0;
    cmd->done = true;
    s->delivering++; /* until its connection completes */
    pthread_cond_broadcast(&s->cond);
}

void listen_reply(struct listen_server *s, struct listen_command *cmd,
                  unsigned status, char *reply, size_t reply_len)
{
    pthread_mutex_lock(&s->mu);
    reply_locked(s, cmd, status, reply, reply_len);
    pthread_mutex_unlock(&s->mu);
}

void listen_wait(struct listen_server *s, uint64_t ms)
{
    pthread_mutex_lock(&s->mu);
    uint64_t deadline = mono_ms() + ms;
    while (!s->head && !s->wanted && mono_ms() < deadline)
        wait_until(s, deadline);
    pthread_mutex_unlock(&s->mu);
}

void listen_stop(struct listen_server *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    struct listen_command *cmd;
    while ((cmd = s->head)) {
        s->head = cmd->next;
        char *why = strdup("{\"error\": \"the crawl is over\"}\n");
        reply_locked(s, cmd, MHD_HTTP_SERVICE_UNAVAILABLE, why,
                     why ? strlen(why) : 0);
    }
    s->tail = NULL;
    pthread_cond_broadcast(&s->cond);
    /* The answers given (a POST /stop's last of all) reach their clients
     * before the connections are closed: a second at most. */
    uint64_t deadline = mono_ms() + 1000;
    while (s->delivering > 0 && mono_ms() < deadline)
        wait_until(s, deadline);
    pthread_mutex_unlock(&s->mu);
    if (s->watching)
        pthread_join(s->watchdog, NULL); /* it sees closing */
    if (s->daemon)
        MHD_stop_daemon(s->daemon); /* joins the connections' threads */
    for (unsigned k = 0; k < DOCS; k++)
        snap_unref(s->cur[k]);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->mu);
    free(s->token);
    free(s);
}
