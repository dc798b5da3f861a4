/*
 * listen.h - the HTTP server of crawl --listen (libmicrohttpd).
 *
 * THREADS. The crawl runs on its own thread (the crawl loop, crawl.c);
 * libmicrohttpd serves each connection on a thread of its own. The two
 * share nothing but this module's state, under one mutex:
 *
 *   reads     GET /metrics, /status, /hosts answer from the last SNAPSHOT
 *             the loop published with their DOCUMENT (listen_publish():
 *             text it formatted, immutable, reference-counted; a response
 *             serves from it in place and holds a reference until sent).
 *             A reader that finds its document older than LISTEN_FRESH_MS
 *             asks for it (listen_wanted(): a LISTEN_DOC_* bit), wakes the
 *             loop and waits up to LISTEN_FRESH_WAIT_MS for it, so a crawl
 *             without readers formats nothing, a reader of /metrics does
 *             not pay for /status, and a poller gets numbers at most
 *             LISTEN_FRESH_MS old.
 *   control   POST /pause, ... become COMMANDS queued for the loop, which
 *             takes them between two steps (listen_take()), carries them
 *             out and answers (listen_reply()); the connection's thread
 *             waits for that answer (LISTEN_COMMAND_WAIT_MS at most, then
 *             503), and the loop is woken (config.wake) so it does not
 *             wait for its current step's timeout.
 *
 * The crawl's data is never read by a server thread: whatever a response
 * holds was formatted by the loop. tests/tsan_listen.sh checks it under
 * ThreadSanitizer (ctest's e2e_listen_tsan).
 *
 * BOUNDS. Connections (LISTEN_CONNECTIONS at once, LISTEN_CONNECTIONS / 4
 * per client address), a connection's memory (its request line and headers:
 * LISTEN_HEADER_MAX), a request body (LISTEN_BODY_MAX: 413 beyond), a
 * connection's idle time (LISTEN_TIMEOUT_S) and a request's whole time
 * (LISTEN_REQUEST_MAX_MS from the connection's accept or its previous
 * request's end: a client that trickles a header line now and then is
 * not idle, yet is cut there; a watchdog thread shuts its socket down).
 * A route or token error is answered before the body is read.
 */
#ifndef BC_EXAMPLES_LISTEN_H
#define BC_EXAMPLES_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "listen_req.h"

#define LISTEN_FRESH_MS        250u
#define LISTEN_FRESH_WAIT_MS   500u
#define LISTEN_COMMAND_WAIT_MS 10000u
#define LISTEN_CONNECTIONS     64u
#define LISTEN_HEADER_MAX      (16u * 1024u)
#define LISTEN_BODY_MAX        (64u * 1024u)
#define LISTEN_TIMEOUT_S       10u
/* Above LISTEN_COMMAND_WAIT_MS: a command's answer comes before it. */
#define LISTEN_REQUEST_MAX_MS 30000u

struct listen_config {
    /* Where: a numeric IPv4 or IPv6 address and a port (0: any free
     * port; listen_port() says which). */
    const char *address;
    uint16_t port;
    /* The bearer token of the control endpoints, and whether the reads
     * need it too (any address but a loopback one). */
    const char *token;
    size_t token_len;
    bool reads_need_token;
    /* Called from a server thread when a command is queued or a
     * snapshot wanted: must be thread-safe (bc_crawler_wakeup()). */
    void (*wake)(void *ctx);
    void *wake_ctx;
    /* A request's whole time, 0 for LISTEN_REQUEST_MAX_MS (tests set it
     * shorter). */
    uint64_t request_max_ms;
    /* GET /: the page and its length (status_page.h). */
    const char *page;
    size_t page_len;
};

/* One row of GET /hosts: the host's JSON object and its sort keys. */
struct listen_host {
    char *json; /* malloc'd, owned by the snapshot */
    size_t json_len;
    uint64_t key[4]; /* by enum listen_sort */
};

/* The documents a snapshot may hold (bits of listen_wanted()). */
#define LISTEN_DOC_METRICS     1u /* metrics */
#define LISTEN_DOC_OPENMETRICS 2u /* openmetrics */
#define LISTEN_DOC_STATUS      4u /* status */
#define LISTEN_DOC_HOSTS       8u /* hosts, host_count */
#define LISTEN_DOC_ALL         15u

/* What the loop publishes: the documents named in docs (the others'
 * fields NULL/0), every buffer malloc'd, owned by the module once
 * published. */
struct listen_snapshot {
    unsigned docs; /* LISTEN_DOC_* */
    char *metrics; /* text format 0.0.4 */
    size_t metrics_len;
    char *openmetrics; /* OpenMetrics 1.0 */
    size_t openmetrics_len;
    char *status; /* the --stats-json document */
    size_t status_len;
    struct listen_host *hosts; /* malloc'd array */
    size_t host_count;
};

/* A command for the loop. The loop reads the request's fields and
 * answers with listen_reply(); it must not free it. */
enum listen_command_kind {
    LISTEN_CMD_PAUSE,
    LISTEN_CMD_RESUME,
    LISTEN_CMD_SEEDS,
    LISTEN_CMD_DELAY,
    LISTEN_CMD_STOP
};
struct listen_command {
    enum listen_command_kind kind;
    const char *body; /* LISTEN_CMD_SEEDS: the body */
    size_t body_len;
    char host[LISTEN_HOST_MAX + 1]; /* LISTEN_CMD_DELAY: decoded HOST */
    size_t host_len;
    uint64_t delay_ms; /* LISTEN_CMD_DELAY */
    /* Private to listen.c. */
    struct listen_command *next;
    unsigned status;
    char *reply;
    size_t reply_len;
    bool done, abandoned;
};

struct listen_server;

/*
 * Start serving. Returns the server, or NULL with a reason in err (cap
 * bytes): the address, a bind failure (the port taken), no memory.
 * The configuration's token is copied; page is kept by pointer (it must
 * outlive the server: the compiled-in page does).
 */
struct listen_server *listen_start(const struct listen_config *config,
                                   char *err, size_t cap);

/* The port it listens on (the one chosen for port 0). */
uint16_t listen_port(const struct listen_server *server);

/* Publish a snapshot (ownership of its buffers passes; *snap is zeroed):
 * it becomes the current one of each document in snap->docs, the others
 * stay. Readers that asked are woken. */
void listen_publish(struct listen_server *server, struct listen_snapshot *snap);

/* The documents (LISTEN_DOC_* bits) readers asked for and not yet
 * published since; 0 when none. */
unsigned listen_wanted(struct listen_server *server);

/* The next queued command, or NULL. */
struct listen_command *listen_take(struct listen_server *server);

/* Answer cmd with an HTTP status and a body (malloc'd, ownership passes;
 * may be NULL). Wakes the connection waiting for it. */
void listen_reply(struct listen_server *server, struct listen_command *cmd,
                  unsigned status, char *reply, size_t reply_len);

/* Wait until a command is queued, a snapshot is wanted or ms elapse
 * (after the crawl: the server's own loop while it lingers). */
void listen_wait(struct listen_server *server, uint64_t ms);

/* Stop: queued commands are answered 503, connections closed, the
 * threads joined, everything freed. NULL is a no-op. */
void listen_stop(struct listen_server *server);

#endif /* BC_EXAMPLES_LISTEN_H */
