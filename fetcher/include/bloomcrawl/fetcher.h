/*
 * bloomcrawl/fetcher.h - many HTTP(S) transfers on one thread (libcurl).
 *
 * A fetcher runs many transfers at once on the calling thread: the
 * application adds URLs with bc_fetcher_add() and drives the I/O with
 * bc_fetcher_run(), which delivers each finished transfer to the on_done
 * callback. Bodies stream through: HTML (text/html, application/xhtml+xml)
 * of 2xx responses goes chunk by chunk through the link extractor
 * (bloomcrawl/links.h), whose links arrive at on_link (and its visible
 * text at on_text, for a fingerprint of the page); every body chunk
 * can also be seen through on_body. Bodies are never buffered whole.
 *
 * Content coding: the fetcher offers "Accept-Encoding: gzip, deflate" and
 * decodes those itself (zlib; libcurl's own decoding is off), so that an
 * archive can see the body as it came over the wire (the wire callbacks
 * below, for WARC) while on_body, the link extractor, body_bytes and
 * max_body_bytes see the decoded body. A body whose coding is corrupt,
 * ends early or is not gzip, deflate or identity fails the transfer with
 * BC_ERR_FETCH_PROTOCOL.
 *
 * Out of memory anywhere in a transfer (the fetcher's buffers, inflate,
 * the link extractor, curl's own allocations) ends it with BC_ERR_NOMEM
 * and os_errno ENOMEM, never with another kind and never as a success
 * that lost part of its page (its links): a failure of this machine, not
 * of the page, which a crawler fetches again later. A socket that could
 * not be opened says EMFILE or ENFILE in os_errno (curl's kind is
 * BC_ERR_FETCH_CONNECT). libcurl before 8.6 reports a header line over
 * its 100 KiB limit as out of memory: with such a curl, out of memory
 * before the end of the headers is BC_ERR_FETCH_HEADERS (os_errno 0).
 *
 * What it does not do, by design:
 *   - follow redirects: a 3xx response is a completed transfer whose
 *     result carries the raw Location value (and the URL it is relative
 *     to); the caller resolves and normalizes it and puts it through the
 *     seen-test like any link;
 *   - politeness (per-host delays and concurrency, robots.txt): that is
 *     the frontier's job; the fetcher fetches what it is given, now;
 *   - treat 4xx/5xx as failures: a transfer that got a complete HTTP
 *     response has status BC_OK, whatever the HTTP status.
 *
 * Only http and https are fetched. Proxies are not used unless
 * configured (the environment's http_proxy is ignored: the library never
 * reads the environment). Limits apply to every transfer: connect and
 * total timeouts, a low-speed abort, a maximum body size (counted after
 * decoding; the body is read up to it, then one more byte aborts the
 * transfer with BC_ERR_FETCH_TOO_LARGE - a body is never silently
 * truncated, except
 * where asked for with bc_fetcher_add_truncated(), and then marked) and a
 * maximum header size (BC_ERR_FETCH_HEADERS). The kind of a failure is
 * taken from libcurl's result code (or the fetcher's own reason to stop),
 * never from timings or message texts.
 *
 * Process-wide setup: call bc_fetcher_global_init() once, from the main
 * thread, before any fetcher is created (it runs curl_global_init, which
 * is not safe to race with other threads on every platform), and bc_fetcher_global_cleanup() once at exit after every
 * fetcher is freed. bc_fetcher_create() does not do it for you.
 *
 * Thread safety: a fetcher and everything it calls back run on the
 * thread that calls bc_fetcher_run(); one fetcher must not be used by two
 * threads at once (bc_fetcher_wakeup() excepted). Separate fetchers are
 * independent and may run on separate threads.
 */
#ifndef BC_FETCHER_FETCHER_H
#define BC_FETCHER_FETCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/links.h"
#include "bloomcrawl/status.h"
#include "bloomcrawl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The outcome of one transfer, as given to on_done. */
struct bc_fetch_result {
    void *user;                /* the pointer given to bc_fetcher_add() */
    enum bc_status status;     /* BC_OK: a complete HTTP response came */
    int os_errno;              /* a failed transfer's errno, when the system
                                  gave one (EMFILE, ENFILE, ECONNREFUSED,
                                  ...: curl's CURLINFO_OS_ERRNO of a
                                  connect, send or receive failure);
                                  ENOMEM with BC_ERR_NOMEM; else 0 */
    const char *error;         /* libcurl's (or the fetcher's) text; "" if OK */
    const char *url;           /* the URL as added (NUL-terminated) */
    const char *final_url;     /* the URL fetched (curl's effective URL) */
    int http_status;           /* 200, 301, 404, ...; 0 if none came */
    const char *content_type;  /* Content-Type header value, or NULL */
    uint64_t body_bytes;       /* body bytes received (after decoding) */
    bool truncated;            /* bc_fetcher_add_truncated's limit reached:
                                  body_bytes = the limit, the rest unread */
    bool skipped;              /* on_headers returned false: status BC_OK,
                                  the body was not read (body_bytes 0) */
    uint64_t time_ms;          /* from start to end of the transfer */
    bool has_retry_after;      /* a valid Retry-After header came */
    uint64_t retry_after_ms;   /* its delay: seconds, or HTTP-date - now */
    const char *location;      /* raw Location header value, or NULL */
    size_t location_len;       /* its length in bytes */
    const char *location_base; /* the URL location is relative to */
    const char *etag;          /* the final response's ETag value (as sent,
                                  quotes kept), or NULL */
    const char *last_modified; /* its Last-Modified value, or NULL */
    bool parsed;               /* the body went through the link extractor */
    uint64_t links;            /* links reported through on_link */
    uint64_t links_skipped;    /* links skipped as too long */
    unsigned page_flags;       /* BC_PAGE_* from meta robots */
};

/*
 * A transfer as it went over the wire (on_wire_head's argument): the
 * request head exactly as sent, the final response's head exactly as
 * received (after any 1xx interim responses, which are not included) and
 * the peer's address. The strings are valid only during the call.
 */
struct bc_fetch_wire_head {
    const char *request;  /* request line, header lines, empty line */
    size_t request_len;   /* its length in bytes */
    const char *response; /* status line, header lines, empty line */
    size_t response_len;  /* its length in bytes */
    const char *ip;       /* the peer's IP address, "" if unknown */
    int http_status;      /* the final response's status (>= 200) */
};

/* Flags of bc_fetcher_add(). */
enum bc_fetch_flag {
    BC_FETCH_NO_LINKS = 1u << 0, /* do not run the link extractor */
    BC_FETCH_BODY_2XX = 1u << 1  /* on_body only for a 2xx response's body */
};

struct bc_fetcher_config {
    /* Sent as User-Agent; NULL or "" for BC_FETCHER_DEFAULT_USER_AGENT. */
    const char *user_agent;
    uint64_t connect_timeout_ms; /* 0: no connect timeout; default 10 s */
    uint64_t timeout_ms;         /* whole transfer; 0: none; default 30 s */
    /* Once the response has begun (its first header line), abort with
     * BC_ERR_FETCH_TOO_SLOW when a window of low_speed_time_s seconds
     * brings fewer than low_speed_bytes x low_speed_time_s bytes (header
     * lines and body as received); 0 disables; 100 B/s, 20 s. A server
     * that never begins its response meets the total timeout. */
    uint64_t low_speed_bytes;
    uint64_t low_speed_time_s;
    uint64_t max_body_bytes; /* 0: unlimited; default 10 MiB */
    size_t max_header_bytes; /* all header lines; 0: 100 KiB */
    size_t max_href_bytes;   /* link extractor's href cap; 0: 8 KiB */
    /* Connections: total (0: unlimited) and per host (0: unlimited). */
    size_t max_connections;
    size_t max_host_connections;
    /* curl --resolve style "HOST:PORT:ADDRESS[,ADDRESS]..." entries that
     * override DNS for those host:port pairs; resolve_count of them, each
     * as bc_fetcher_check_resolve() accepts it. The strings are copied by
     * bc_fetcher_create. */
    const char *const *resolve;
    size_t resolve_count;
    /* A proxy URL for every transfer, as bc_fetcher_check_proxy()
     * accepts it; NULL or "": no proxy. */
    const char *proxy;
    /* Extra request headers, "Name: value" each, header_count of them,
     * sent with every request (copied by bc_fetcher_create). A name
     * that curl sends itself (Accept, ...) replaces its value; a
     * User-Agent replaces user_agent. No CR or LF; a name of token
     * characters before the ':' (bc_fetcher_check_header()). */
    const char *const *headers;
    size_t header_count;
    bool http2;      /* offer HTTP/2 (ALPN on https); default true */
    bool verify_tls; /* verify certificates and host names; default true */

    /* Called once per finished transfer, from bc_fetcher_run(). The
     * result and its strings are valid only during the call. The callback
     * may call bc_fetcher_add(). Must be set. */
    void (*on_done)(void *ctx, const struct bc_fetch_result *result);
    /* Called once per link found in an HTML body, with the transfer's
     * user pointer (see links.h for the arguments); may be NULL. */
    void (*on_link)(void *ctx, void *user, const char *href, size_t len,
                    const char *base, size_t base_len, unsigned flags);
    /* Called with the visible text of the same HTML bodies, run by run
     * as the link extractor reads it (links.h, on_text: no script,
     * style, template, ...), with the transfer's user pointer; may be
     * NULL (the default: the extractor skips text as without it). Either
     * on_link or on_text runs the extractor. */
    void (*on_text)(void *ctx, void *user, const char *text, size_t len);
    /* Called with every body chunk of every response (any status, any
     * type; after decoding); return false to abort the transfer with
     * BC_ERR_FETCH_ABORTED. May be NULL. */
    bool (*on_body)(void *ctx, void *user, const void *data, size_t len);
    /* The wire hand-over, for an archive (WARC); each may be NULL.
     * on_wire_head: once per transfer whose final response's headers all
     * came, before any body byte (a transfer that fails earlier, or
     * that on_headers stops, has no call). on_wire_body: then every body byte as received, before
     * content decoding and with the chunked framing of HTTP/1.1
     * (Transfer-Encoding: chunked) as it came, in pieces of any size;
     * return false to abort the transfer with BC_ERR_FETCH_ABORTED. The
     * bytes come before the fetcher decodes them, so a transfer that then
     * fails (a corrupt coding, max_body_bytes, a timeout) has had some
     * wire bytes handed over: its result says so. Setting on_wire_head
     * turns on curl's debug callback for the request head (a little CPU
     * per transfer). */
    void (*on_wire_head)(void *ctx, void *user,
                         const struct bc_fetch_wire_head *head);
    bool (*on_wire_body)(void *ctx, void *user, const void *data, size_t len);
    /* The payload, for an archive's payload digest (WARC): the body
     * on_wire_body sees, with its transfer coding taken off and its
     * content coding kept (the chunks' data of a chunked body; a body
     * without transfer coding is its own payload), each piece right after
     * the wire bytes that carried it. The fetcher frames every wire byte
     * it hands over, even past the point where it stops reading, so the
     * payload is all the wire bytes hold. END is true on one last call
     * (len 0) once a chunked body's last chunk and trailer section came:
     * that body is whole by its own framing. A chunked body whose framing
     * breaks fails the transfer with BC_ERR_FETCH_PROTOCOL ("malformed
     * chunked body"; the rules: docs/DESIGN.md 4.1), its payload cut
     * where it broke; past a stop already made (max_body_bytes,
     * keep_bytes, a callback) the break only ends the payload, and the
     * result is the stop's. Return false to abort the transfer with
     * BC_ERR_FETCH_ABORTED. */
    bool (*on_wire_payload)(void *ctx, void *user, const void *data, size_t len,
                            bool end);
    /* Called once per transfer when the final response's headers are in
     * (1xx responses are not final), before any of its body: its status
     * and Content-Type (NULL when none). Return false to stop the
     * transfer there: the body is not read (the connection is closed),
     * and the result has status BC_OK and skipped set. May be NULL. */
    bool (*on_headers)(void *ctx, void *user, int http_status,
                       const char *content_type);
    void *ctx; /* first argument of the callbacks */
};

#define BC_FETCHER_DEFAULT_USER_AGENT                                          \
    "bloomcrawl/" BC_VERSION_STRING                                            \
    " (+https://example.invalid/set-your-contact-url)"

struct bc_fetcher;

/* The first libcurl version (8.13.0, as curl's LIBCURL_VERSION_NUM) that
 * takes a bracketed IPv6 host in a resolve entry. */
#define BC_FETCHER_RESOLVE_IPV6_CURL 0x080d00

/*
 * Process-wide initialization of libcurl (and of libxml2, for
 * bloomcrawl/sitemap.h); call once from the main thread before creating
 * fetchers. Returns BC_OK or BC_ERR_NOMEM
 * (curl_global_init failed).
 */
enum bc_status bc_fetcher_global_init(void);

/* The counterpart of bc_fetcher_global_init(), once at exit. */
void bc_fetcher_global_cleanup(void);

/* Fill *config with the defaults documented above (no callbacks). */
void bc_fetcher_config_init(struct bc_fetcher_config *config);

/*
 * Is entry a resolve entry the fetcher takes (config.resolve), in curl's
 * CURLOPT_RESOLVE forms: [+]HOST:PORT:ADDRESS[,ADDRESS]... to add, or
 * -HOST:PORT to remove? HOST is a name, or a bracketed IPv6 address
 * ("[::1]:443:127.0.0.1") when the libcurl running is
 * BC_FETCHER_RESOLVE_IPV6_CURL (8.13.0) or later (an older one fails
 * every transfer on it); PORT 1..65535, the addresses non-empty and
 * comma-separated; no space, tab, CR or LF. false for NULL. Cost: one
 * pass over the string. A tool checks its options with it so that
 * bc_fetcher_create() refuses nothing it took.
 */
bool bc_fetcher_check_resolve(const char *entry);

/*
 * Is header an extra request header the fetcher takes (config.headers):
 * "Name: value" (the value may be empty), the name of RFC 9110 token
 * characters, no CR or LF anywhere? false for NULL. Cost: one pass.
 */
bool bc_fetcher_check_header(const char *header);

/*
 * Is url a proxy the fetcher takes (config.proxy): a scheme among http,
 * https, socks4, socks4a, socks5, socks5h (any case) followed by "://"
 * and a host, no space or control byte? false for NULL. Cost: one pass.
 */
bool bc_fetcher_check_proxy(const char *url);

/*
 * Create a fetcher. The configuration is copied. Returns BC_OK and sets
 * *out; BC_ERR_INVALID_ARG (NULL config or out, no on_done, a resolve
 * entry, header or proxy that bc_fetcher_check_resolve(),
 * bc_fetcher_check_header() or bc_fetcher_check_proxy() refuses) or
 * BC_ERR_NOMEM. Free with bc_fetcher_free().
 */
enum bc_status bc_fetcher_create(const struct bc_fetcher_config *config,
                                 struct bc_fetcher **out);

/*
 * Queue a transfer of url (len bytes, copied; no NUL byte inside). It
 * starts at the next bc_fetcher_run(), and its result (success or
 * failure, including a URL curl refuses) comes to on_done with user.
 * flags: BC_FETCH_* or-ed. May be called from the fetcher's callbacks.
 * Returns BC_OK, BC_ERR_INVALID_ARG (NULL fetcher or url, empty url, a
 * NUL inside) or BC_ERR_NOMEM (nothing queued: no memory for the
 * transfer or its curl handle). A transfer that curl then cannot take
 * (curl_multi_add_handle) comes to on_done with BC_ERR_NOMEM.
 */
enum bc_status bc_fetcher_add(struct bc_fetcher *fetcher, const char *url,
                              size_t len, unsigned flags, void *user);

/*
 * Queue a transfer as bc_fetcher_add() does, whose body is read up to
 * keep_bytes bytes (after decoding) whatever max_body_bytes says, with or
 * without Content-Length: a longer body is cut there, the rest is not
 * read, and the transfer ends with status BC_OK and result.truncated set
 * (on_body sees exactly the first keep_bytes bytes). For a file of which
 * only a prefix counts (robots.txt: RFC 9309 2.5). Returns as
 * bc_fetcher_add(); BC_ERR_INVALID_ARG also for keep_bytes 0.
 */
enum bc_status bc_fetcher_add_truncated(struct bc_fetcher *fetcher,
                                        const char *url, size_t len,
                                        unsigned flags, uint64_t keep_bytes,
                                        void *user);

/*
 * Queue a transfer as bc_fetcher_add() does, whose request also carries
 * header_count extra header lines (each "Name: value", no CR or LF; a
 * conditional request's If-None-Match and If-Modified-Since), sent after
 * the configuration's headers. The lines are copied. header_count 0 is
 * bc_fetcher_add(). Returns as bc_fetcher_add(); BC_ERR_INVALID_ARG also
 * for a NULL headers with header_count > 0, a NULL line or one with CR or
 * LF (nothing queued).
 */
enum bc_status bc_fetcher_add_with_headers(struct bc_fetcher *fetcher,
                                           const char *url, size_t len,
                                           unsigned flags,
                                           const char *const *headers,
                                           size_t header_count, void *user);

/*
 * Drive the transfers: start the queued ones, wait up to timeout_ms for
 * network activity (less if a curl timer or a low-speed check is due; 0
 * does not wait), do
 * the I/O that is ready and call on_done for every transfer that
 * finished. Link and body callbacks run from inside this call. Returns
 * BC_OK, BC_ERR_INVALID_ARG (NULL, or called from a callback) or
 * BC_ERR_NOMEM. Cost: the I/O that is ready; it does not loop until the
 * transfers are done - call it while bc_fetcher_in_flight() is non-zero.
 */
enum bc_status bc_fetcher_run(struct bc_fetcher *fetcher, uint64_t timeout_ms);

/* Transfers added and not yet delivered to on_done (0 for NULL). */
size_t bc_fetcher_in_flight(const struct bc_fetcher *fetcher);

/*
 * Make a bc_fetcher_run() that is waiting return early (curl_multi_wakeup).
 * The only call that may come from another thread; not for signal
 * handlers (set a flag there and run with a short timeout instead).
 * Returns BC_OK or BC_ERR_INVALID_ARG.
 */
enum bc_status bc_fetcher_wakeup(struct bc_fetcher *fetcher);

/*
 * Free a fetcher. Transfers still in flight are cancelled without a call
 * to on_done. NULL is a no-op. Must not be called from a callback.
 */
void bc_fetcher_free(struct bc_fetcher *fetcher);

#ifdef __cplusplus
}
#endif

#endif /* BC_FETCHER_FETCHER_H */
