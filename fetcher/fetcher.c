/*
 * fetcher.c - many HTTP(S) transfers on one thread: the libcurl multi API.
 *
 * THE PROBLEM
 * A crawler spends its time waiting: for DNS, for TCP and TLS handshakes,
 * for the first byte, for the rest of the body. A page takes a few hundred
 * milliseconds to arrive and a few hundred microseconds of CPU to handle.
 * To fetch hundreds of pages a second it must keep dozens to hundreds of
 * transfers in flight at once, from a few hosts or from thousands.
 *
 * WHY ONE THREAD DRIVES MANY TRANSFERS
 * A thread per transfer spends memory on stacks and time on context
 * switches to do what the kernel already does for us: tell which sockets
 * are ready. libcurl's multi interface is an event loop over every socket
 * of every transfer: curl_multi_perform() advances each transfer as far
 * as it can without blocking, curl_multi_poll() sleeps in poll(2) until a
 * socket is ready or a timer is due, and curl_multi_info_read() names the
 * transfers that finished. One thread, one poll, any number of transfers:
 *
 *     bc_fetcher_add(url) --> pending FIFO --curl_multi_add_handle-->
 *         multi: [easy 1] [easy 2] ... [easy n]   one poll(2) for all
 *             header callback: status line, Location, Retry-After, limit
 *             write callback:  body chunk --> on_body, links extractor
 *         curl_multi_info_read: DONE --> result --> on_done(result)
 *
 * The multi handle also owns what transfers share: a connection cache, so
 * a second request to a host reuses the open connection (HTTP/1.1
 * keep-alive) or, on HTTP/2, becomes one more stream on it
 * (CURLMOPT_PIPELINING = CURLPIPE_MULTIPLEX); and a DNS cache. Not
 * CURLOPT_PIPEWAIT: with it, transfers added beside a host's first one
 * wait until that connection shows whether it multiplexes, and the wait
 * counts against their own timeouts, so one slow first page (a resumed
 * crawl's first) made its neighbours fail at once, "timed out after
 * 0 ms". Without it they open connections of their own, up to
 * max_host_connections, and later transfers multiplex once HTTP/2 is
 * known.
 * A curl share object adds the TLS session cache, so reconnecting to a
 * host resumes its TLS session instead of a full handshake.
 *
 * POLITENESS IS NOT THE FETCHER'S JOB
 * The fetcher fetches what it is handed, now. How often a host may be
 * contacted, how many transfers it may have at once, what robots.txt
 * allows, what Retry-After means for the host's queue: the frontier knows,
 * and decides before it hands a URL over. The fetcher only measures (time,
 * status, Retry-After) so that the frontier can decide. Keeping the two
 * apart lets each be tested alone: politeness with a fake clock, the
 * fetcher against a local server.
 *
 * REDIRECTS ARE LINKS
 * curl does not follow redirects (FOLLOWLOCATION off): a 3xx target is a
 * URL the crawler has discovered, and must go through normalization and
 * the seen-test like any link - else two redirects to one page fetch it
 * twice, and a redirect out of scope is followed. The result carries the
 * raw Location value and the URL it is relative to.
 *
 * LIMITS, AND WHY
 * The web contains servers that never answer, answer a byte a minute,
 * send an endless body or endless headers. Each would pin a transfer slot
 * (and memory) for ever. So every transfer has:
 *   - a connect timeout and a total timeout;
 *   - a low-speed abort (under low_speed_bytes per second, averaged over
 *     low_speed_time_s seconds, once the response has begun): it catches
 *     the trickle that a total timeout alone would let run for its full
 *     length. The fetcher measures it itself in bc_fetcher_run() rather
 *     than through curl's LOW_SPEED options, because curl reports its
 *     low-speed abort with the same code as a timeout
 *     (CURLE_OPERATION_TIMEDOUT): the kind of every failure comes from a
 *     result code or from the fetcher's own reason to stop, never from
 *     timings or from curl's message text;
 *   - a maximum body size, counted after decoding (a 10 KB gzip bomb
 *     can inflate to gigabytes). The body is handed on up to the limit;
 *     the byte after it aborts the transfer and reports
 *     BC_ERR_FETCH_TOO_LARGE: a truncated page silently taken for a
 *     whole one would be a wrong answer. (curl's CURLOPT_MAXFILESIZE is
 *     not used: it refuses a long Content-Length before the first body
 *     byte, so an archive would keep a cut body of a chunked response
 *     and nothing of the same body sent with a Content-Length.) A
 *     transfer added with bc_fetcher_add_truncated() is the exception
 *     asked for: its body is read up to its own limit, whatever
 *     max_body_bytes says, and the transfer then ends successfully,
 *     marked truncated (robots.txt: RFC 9309 2.5 parses the first 500 KiB
 *     of any size of file);
 *   - a maximum size of all header lines, counted in the header callback
 *     (and a line over curl's own 100 KiB limit, which curl before 8.6
 *     reports as CURLE_OUT_OF_MEMORY before the end of the headers).
 * Only http and https may be fetched (CURLOPT_PROTOCOLS_STR): an href
 * can say file:///etc/passwd or gopher://, and libcurl speaks both.
 * Proxies are off unless configured: libcurl would otherwise read
 * http_proxy from the environment, which a library must not do.
 *
 * STREAMING, NO WHOLE-PAGE BUFFER
 * A body is never held whole: each chunk curl hands the write callback is
 * decoded (below), counted, given to on_body, and, for a 2xx text/html
 * or application/xhtml+xml response, pushed into the link extractor
 * (links.c), which reports links while the rest of the page is still on
 * the wire. Memory per transfer is curl's buffer, the inflate state
 * (about 44 KiB while a compressed body streams) and the tokenizer's
 * state.
 *
 * THE WIRE, AND DECODING IT OURSELVES
 * An archive (WARC) keeps a response as it came over the wire: the
 * status line and header lines as received, the body before content
 * decoding, with HTTP/1.1's chunked framing. The link extractor needs
 * the decoded body. If curl decoded, the wire bytes would be gone; if
 * two transfers were made, the archive would not hold what was parsed.
 * So there is one code path: curl's decoding is off for every transfer
 * (CURLOPT_HTTP_CONTENT_DECODING and CURLOPT_HTTP_TRANSFER_DECODING 0:
 * curl still parses the chunks to find the body's end, and hands them
 * over framed), the write callback sees the wire bytes, hands them to
 * on_wire_body when set, and then undoes what curl no longer does:
 *
 *     wire bytes --> on_wire_body (archive: the record's block)
 *        --> dechunk (Transfer-Encoding: chunked; chunked.c, the one
 *            decoder of the project)
 *              --> on_wire_payload (archive: the payload digest)
 *        --> inflate (Content-Encoding: gzip | deflate, zlib)
 *        --> deliver: max_body_bytes, on_body, link extractor
 *
 * The archive gets both the wire bytes and the payload from here, so the
 * framing is read once, by one decoder: a body the transfer takes is a
 * body the archive digests, and one it refuses is refused for both.
 *
 * The fetcher offers only what it decodes ("Accept-Encoding: gzip,
 * deflate"); a body in any other coding, a corrupt or unfinished
 * compressed stream, or a malformed chunk fails the transfer with
 * BC_ERR_FETCH_PROTOCOL, and bytes after the end of a compressed stream
 * are ignored (as curl did). "deflate" is meant to be a zlib stream but
 * some servers send a raw deflate stream: as curl does, a zlib header
 * error on the first body piece starts it again as raw deflate. Bodies
 * go through inflate in 16 KiB pieces of output, each counted against
 * max_body_bytes before it is handed on, so a bomb is cut after the
 * limit, not after it has been inflated whole.
 * The request head as sent comes from curl's debug callback
 * (CURLINFO_HEADER_OUT; only when on_wire_head is set, since it needs
 * CURLOPT_VERBOSE), the response head from the header callback (kept
 * from the status line of the final response: a 1xx interim response's
 * lines are dropped when the next status line begins), the peer's
 * address from CURLINFO_PRIMARY_IP.
 *
 * OUT OF MEMORY, OUT OF DESCRIPTORS: THE FETCHER'S FAULT, NOT THE PAGE'S
 * A transfer can fail because of the machine rather than the server: no
 * descriptor for its socket (EMFILE; curl says only "Couldn't connect"),
 * no memory for a buffer. Such a failure says nothing about the page, and
 * a crawler must not record it as the page's outcome (it fetches the page
 * again later: docs/DESIGN.md 9). So the result says so: every
 * allocation failure of a transfer - the fetcher's own (heads, Location),
 * zlib's (inflate; its allocator is ours, z_alloc), the link extractor's
 * (the page's links would be lost from a success), curl's
 * (CURLE_OUT_OF_MEMORY), curl_multi_add_handle's - ends it with
 * BC_ERR_NOMEM and os_errno ENOMEM, and a socket error keeps its errno in
 * os_errno: socket()'s own (EMFILE, ENFILE: the fetcher opens curl's
 * sockets, open_socket(), since curl keeps no errno for it), else curl's
 * CURLINFO_OS_ERRNO of a connect, send or receive (ECONNREFUSED,
 * ENOBUFS, ...). The caller classes the result (bc_crawler_fault_of()).
 *
 * GLOBAL STATE
 * curl_global_init() touches process-wide state and is not safe to race
 * on every platform, so it is not called here but in
 * bc_fetcher_global_init(), which the application calls once (and with
 * it libxml2's xmlInitParser(), for the sitemap parser). Everything else
 * lives in the bc_fetcher handle.
 *
 * REFERENCES
 * libcurl-multi(3), curl_multi_poll(3), CURLOPT_* man pages (everything
 * curl; https://curl.se/libcurl/c/); RFC 9110 (HTTP semantics: Location,
 * Retry-After, 3xx); RFC 9113 (HTTP/2 multiplexing).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sys/socket.h>

#include <curl/curl.h>
#include <zlib.h>

#include "bc_buf.h"
#include "bc_clock.h"
#include "bloomcrawl/fetcher.h"
#include "bloomcrawl/links.h"
#include "bloomcrawl/sitemap.h"
#include "chunked_int.h"

#define BC_FETCHER_DEFAULT_CONNECT_MS 10000u
#define BC_FETCHER_DEFAULT_TIMEOUT_MS 30000u
#define BC_FETCHER_DEFAULT_LOW_SPEED  100u
#define BC_FETCHER_DEFAULT_LOW_TIME   20u
#define BC_FETCHER_DEFAULT_MAX_BODY   (10u << 20)
#define BC_FETCHER_DEFAULT_MAX_HEADER (100u << 10)
/* Finished transfers kept, with their easy handle, for reuse. */
#define BC_FETCHER_SPARE 64u
/* Inflate output piece: decoded bytes are handed on this many at most. */
#define BC_FETCHER_ZBUF (16u << 10)
/* What the fetcher offers, and decodes itself (see THE WIRE above). */
#define BC_FETCHER_ACCEPT_ENCODING "gzip, deflate"

/* A response body's content coding, from Content-Encoding (and a
 * Transfer-Encoding other than chunked, which is refused too). */
enum coding { CODING_IDENTITY, CODING_GZIP, CODING_DEFLATE, CODING_OTHER };

struct bc_fetcher;

/* One transfer: an easy handle and what we learn while it runs. */
struct transfer {
    struct bc_fetcher *f;
    CURL *easy;
    struct transfer *next; /* pending FIFO, active list, spare list */
    struct transfer *prev; /* active list only */
    char *url;
    void *user;
    unsigned flags;
    bool body_seen;           /* the first body chunk was handled */
    bool body_2xx;            /* ... and the response's status was 2xx */
    bool headers_done;        /* the final response's headers ended */
    bool truncated;           /* stopped at keep_bytes (not an error) */
    bool skipped;             /* on_headers said stop (not an error) */
    enum bc_status abort_why; /* BC_OK, or why a callback stopped it */
    int os_errno;             /* with abort_why: the system's errno, or 0 */
    int socket_errno;         /* socket() failed with it (open_socket) */
    uint64_t keep_bytes;      /* bc_fetcher_add_truncated's limit, or 0 */
    uint64_t body_bytes;
    size_t header_bytes;
    uint64_t window_ms;    /* low-speed window start; 0: response not begun */
    uint64_t window_bytes; /* bytes received when the window started */
    char *location;
    size_t location_len;
    char *etag, *last_modified; /* the response's validators, or NULL */
    bool has_retry_after;
    uint64_t retry_after_ms;
    struct bc_links *links;
    uint64_t started_ms; /* when it entered the multi handle */
    /* Decoding (THE WIRE above). */
    enum coding coding;
    bool chunked;
    struct bc_chunked ch; /* with chunked: the framing (chunked_int.h) */
    z_stream z;           /* valid while z_ready */
    bool z_ready, z_end, z_raw;
    /* The wire hand-over (with on_wire_head). */
    struct bc_buf req, resp; /* request and response heads */
    /* bc_fetcher_add_with_headers: the fetcher's headers and the
     * transfer's own (NULL: the fetcher's alone). */
    struct curl_slist *headers;
    bool req_done;  /* req ends with its empty line */
    bool wire_sent; /* on_wire_head was called */
    char errbuf[CURL_ERROR_SIZE];
    /* Why a callback stopped the transfer: curl then writes its own
     * "Failure writing output" into errbuf, which this replaces. */
    char why[CURL_ERROR_SIZE];
};

struct bc_fetcher {
    struct bc_fetcher_config cfg; /* strings below are our copies */
    char *user_agent;
    char *proxy;
    struct curl_slist *resolve;
    struct curl_slist *headers; /* config.headers, shared by transfers */
    CURLM *multi;
    CURLSH *share;
    struct transfer *pending_head, *pending_tail;
    struct transfer *active; /* doubly linked */
    struct transfer *spare;
    size_t n_pending, n_active, n_spare;
    bool in_run;
    unsigned char *zbuf; /* BC_FETCHER_ZBUF bytes of inflate output */
};

/* --------------------------------------------------------------------- */
/* Process-wide setup and configuration.                                  */

enum bc_status bc_fetcher_global_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return BC_ERR_NOMEM;
    bc_links_global_init();
    bc_sitemap_global_init();
    return BC_OK;
}

void bc_fetcher_global_cleanup(void)
{
    curl_global_cleanup();
}

void bc_fetcher_config_init(struct bc_fetcher_config *config)
{
    if (!config)
        return;
    memset(config, 0, sizeof(*config));
    config->connect_timeout_ms = BC_FETCHER_DEFAULT_CONNECT_MS;
    config->timeout_ms = BC_FETCHER_DEFAULT_TIMEOUT_MS;
    config->low_speed_bytes = BC_FETCHER_DEFAULT_LOW_SPEED;
    config->low_speed_time_s = BC_FETCHER_DEFAULT_LOW_TIME;
    config->max_body_bytes = BC_FETCHER_DEFAULT_MAX_BODY;
    config->max_header_bytes = BC_FETCHER_DEFAULT_MAX_HEADER;
    config->max_href_bytes = BC_LINKS_DEFAULT_MAX_HREF;
    config->http2 = true;
    config->verify_tls = true;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/*
 * A resolve entry as curl's CURLOPT_RESOLVE takes it:
 * [+]HOST:PORT:ADDRESS[,ADDRESS]... or -HOST:PORT, where HOST may be a
 * bracketed IPv6 address ("[::1]") when the libcurl running takes it,
 * PORT is 1..65535 and the addresses are non-empty, comma-separated,
 * without space, CR or LF.
 */
bool bc_fetcher_check_resolve(const char *s)
{
    if (!s || !*s || strpbrk(s, " \t\r\n"))
        return false;
    bool remove = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    const char *host_end;
    if (*s == '[') {
        /* libcurl takes a bracketed IPv6 host from 8.13.0 on (curl pull
         * request 16358); an older one fails every transfer with
         * "Couldn't parse CURLOPT_RESOLVE entry". */
        if (curl_version_info(CURLVERSION_NOW)->version_num <
            BC_FETCHER_RESOLVE_IPV6_CURL)
            return false;
        host_end = strchr(s, ']');
        if (!host_end || host_end == s + 1)
            return false;
        host_end++;
    } else {
        host_end = strchr(s, ':');
        if (!host_end || host_end == s)
            return false;
    }
    if (*host_end != ':')
        return false;
    const char *port = host_end + 1;
    size_t digits = strspn(port, "0123456789");
    if (digits == 0 || digits > 5 || atol(port) < 1 || atol(port) > 65535)
        return false;
    const char *rest = port + digits;
    if (remove)
        return *rest == '\0';
    if (*rest != ':' || rest[1] == '\0' || rest[1] == ',')
        return false;
    for (const char *a = rest + 1; *a; a++)
        if (*a == ',' && (a[1] == ',' || a[1] == '\0'))
            return false;
    return true;
}

/* An extra request header: "Name: value", the name of token characters
 * (RFC 9110 5.6.2), no CR or LF anywhere. */
bool bc_fetcher_check_header(const char *s)
{
    if (!s || strpbrk(s, "\r\n"))
        return false;
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789!#$%&'*+-.^_`|~");
    return n > 0 && s[n] == ':';
}

/* A proxy URL: a scheme curl knows for proxies, a host, no space or
 * control byte. */
bool bc_fetcher_check_proxy(const char *s)
{
    static const char *const schemes[] = {"http://",   "https://",
                                          "socks4://", "socks4a://",
                                          "socks5://", "socks5h://"};
    if (!s)
        return false;
    for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        size_t n = strlen(schemes[i]);
        if (strncasecmp(s, schemes[i], n) != 0)
            continue;
        if (s[n] == '\0' || s[n] == '/' || s[n] == ':')
            return false;
        for (const char *p = s; *p; p++)
            if ((unsigned char)*p <= ' ' || *p == 0x7f)
                return false;
        return true;
    }
    return false;
}

static long clamp_long(uint64_t v)
{
    return v > (uint64_t)LONG_MAX ? LONG_MAX : (long)v;
}

/* A config bc_fetcher_create takes: on_done set, the arrays there when
 * their counts say so, every resolve entry, header and the proxy (when
 * not empty) well formed. */
static bool config_ok(const struct bc_fetcher_config *config)
{
    if (!config->on_done || (config->resolve_count && !config->resolve))
        return false;
    for (size_t i = 0; i < config->resolve_count; i++) {
        if (!bc_fetcher_check_resolve(config->resolve[i]))
            return false;
    }
    if (config->header_count && !config->headers)
        return false;
    for (size_t i = 0; i < config->header_count; i++) {
        if (!bc_fetcher_check_header(config->headers[i]))
            return false;
    }
    return !(config->proxy && *config->proxy &&
             !bc_fetcher_check_proxy(config->proxy));
}

/* Append n strings to *list (curl copies each); false when out of
 * memory, with *list holding those appended so far. */
static bool slist_append_all(struct curl_slist **list, const char *const *items,
                             size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct curl_slist *l = curl_slist_append(*list, items[i]);
        if (!l)
            return false;
        *list = l;
    }
    return true;
}

/* The multi handle (HTTP/2 multiplexing, the connection limits) and the
 * share handle (the DNS cache and TLS sessions every transfer uses);
 * false when curl cannot make them. */
static bool init_curl_handles(struct bc_fetcher *f)
{
    f->multi = curl_multi_init();
    if (!f->multi)
        return false;
    curl_multi_setopt(f->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(f->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      clamp_long(f->cfg.max_connections));
    curl_multi_setopt(f->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
                      clamp_long(f->cfg.max_host_connections));

    f->share = curl_share_init();
    if (!f->share)
        return false;
    return curl_share_setopt(f->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) ==
               CURLSHE_OK &&
           curl_share_setopt(f->share, CURLSHOPT_SHARE,
                             CURL_LOCK_DATA_SSL_SESSION) == CURLSHE_OK;
}

enum bc_status bc_fetcher_create(const struct bc_fetcher_config *config,
                                 struct bc_fetcher **out)
{
    if (!config || !out || !config_ok(config))
        return BC_ERR_INVALID_ARG;

    struct bc_fetcher *f = calloc(1, sizeof(*f));
    if (!f)
        return BC_ERR_NOMEM;
    f->cfg = *config;
    if (f->cfg.max_header_bytes == 0)
        f->cfg.max_header_bytes = BC_FETCHER_DEFAULT_MAX_HEADER;
    if (f->cfg.max_href_bytes == 0)
        f->cfg.max_href_bytes = BC_LINKS_DEFAULT_MAX_HREF;
    const char *ua = config->user_agent && *config->user_agent
                         ? config->user_agent
                         : BC_FETCHER_DEFAULT_USER_AGENT;
    f->user_agent = dup_str(ua);
    if (!f->user_agent)
        goto out_free;
    f->proxy = dup_str(config->proxy ? config->proxy : "");
    if (!f->proxy)
        goto out_free;
    f->cfg.user_agent = f->user_agent;
    f->cfg.proxy = f->proxy;
    /* The caller's arrays are not kept: curl's lists hold copies. */
    f->cfg.resolve = NULL;
    f->cfg.headers = NULL;
    if (!slist_append_all(&f->resolve, config->resolve, config->resolve_count))
        goto out_free;
    f->zbuf = malloc(BC_FETCHER_ZBUF);
    if (!f->zbuf)
        goto out_free;
    if (!slist_append_all(&f->headers, config->headers, config->header_count))
        goto out_free;
    if (!init_curl_handles(f))
        goto out_free;
    *out = f;
    return BC_OK;

out_free:
    bc_fetcher_free(f);
    return BC_ERR_NOMEM;
}

/* --------------------------------------------------------------------- */
/* Transfer lifetime.                                                     */

/* Forget the per-transfer state (not the easy handle). */
static void transfer_clear(struct transfer *t)
{
    bc_links_free(t->links);
    free(t->location);
    free(t->etag);
    free(t->last_modified);
    free(t->url);
    bc_buf_free(&t->req);
    bc_buf_free(&t->resp);
    curl_slist_free_all(t->headers);
    if (t->z_ready)
        inflateEnd(&t->z);
    struct bc_fetcher *f = t->f;
    CURL *easy = t->easy;
    memset(t, 0, sizeof(*t));
    t->f = f;
    t->easy = easy;
}

static void transfer_destroy(struct transfer *t)
{
    if (!t)
        return;
    transfer_clear(t);
    if (t->easy)
        curl_easy_cleanup(t->easy);
    free(t);
}

/* Keep a finished transfer for reuse, or destroy it. */
static void transfer_recycle(struct bc_fetcher *f, struct transfer *t)
{
    transfer_clear(t);
    if (f->n_spare >= BC_FETCHER_SPARE) {
        transfer_destroy(t);
        return;
    }
    curl_easy_reset(t->easy);
    t->next = f->spare;
    f->spare = t;
    f->n_spare++;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud);
static size_t on_write(char *data, size_t size, size_t nmemb, void *ud);

/* curl's socket opener, ours to keep socket()'s errno: curl (7.88) fails
 * the transfer with CURLE_COULDNT_CONNECT and leaves CURLINFO_OS_ERRNO 0
 * when socket() itself fails, and EMFILE there must be told from a host
 * that refuses (OUT OF MEMORY, OUT OF DESCRIPTORS above). */
static curl_socket_t open_socket(void *ud, curlsocktype purpose,
                                 struct curl_sockaddr *addr)
{
    struct transfer *t = ud;
    (void)purpose;
    int fd = socket(addr->family, addr->socktype, addr->protocol);
    if (fd < 0) {
        t->socket_errno = errno;
        return CURL_SOCKET_BAD;
    }
    return fd;
}

static int on_debug(CURL *easy, curl_infotype type, char *data, size_t size,
                    void *ud);

/* Set every option of a transfer; false when curl is out of memory. */
static bool transfer_setup(struct bc_fetcher *f, struct transfer *t)
{
    CURL *e = t->easy;
    const struct bc_fetcher_config *c = &f->cfg;
    bool ok = true;

#define SET(opt, val) ok = ok && curl_easy_setopt(e, opt, val) == CURLE_OK
    SET(CURLOPT_URL, t->url);
    SET(CURLOPT_PRIVATE, (void *)t);
    SET(CURLOPT_ERRORBUFFER, t->errbuf);
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 0L);
    /* Offer what we decode, and decode it ourselves (THE WIRE above). */
    SET(CURLOPT_ACCEPT_ENCODING, BC_FETCHER_ACCEPT_ENCODING);
    SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);
    SET(CURLOPT_HTTP_TRANSFER_DECODING, 0L);
    if (c->on_wire_head) {
        SET(CURLOPT_DEBUGFUNCTION, on_debug);
        SET(CURLOPT_DEBUGDATA, (void *)t);
        SET(CURLOPT_VERBOSE, 1L);
    }
    SET(CURLOPT_USERAGENT, f->user_agent);
    SET(CURLOPT_PROXY, f->proxy);
    SET(CURLOPT_SHARE, f->share);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, (void *)t);
    SET(CURLOPT_WRITEFUNCTION, on_write);
    SET(CURLOPT_WRITEDATA, (void *)t);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, (void *)t);
    SET(CURLOPT_CONNECTTIMEOUT_MS, clamp_long(c->connect_timeout_ms));
    SET(CURLOPT_TIMEOUT_MS, clamp_long(c->timeout_ms));
    if (f->resolve)
        SET(CURLOPT_RESOLVE, f->resolve);
    if (t->headers)
        SET(CURLOPT_HTTPHEADER, t->headers);
    else if (f->headers)
        SET(CURLOPT_HTTPHEADER, f->headers);
    if (c->http2) {
        SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    } else {
        SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    }
    if (!c->verify_tls) {
        SET(CURLOPT_SSL_VERIFYPEER, 0L);
        SET(CURLOPT_SSL_VERIFYHOST, 0L);
    }
#undef SET
    return ok;
}

static bool ascii_prefix(const char *s, size_t n, const char *prefix);

/* An explicit http or https scheme (any case). */
static bool scheme_ok(const char *url)
{
    size_t n = strlen(url);
    return ascii_prefix(url, n, "http://") || ascii_prefix(url, n, "https://");
}

static enum bc_status add_transfer(struct bc_fetcher *f, const char *url,
                                   size_t len, unsigned flags,
                                   uint64_t keep_bytes,
                                   const char *const *headers,
                                   size_t header_count, void *user)
{
    if (!f || !url || len == 0 || memchr(url, 0, len) ||
        (header_count > 0 && !headers))
        return BC_ERR_INVALID_ARG;
    for (size_t i = 0; i < header_count; i++)
        if (!headers[i] || strpbrk(headers[i], "\r\n"))
            return BC_ERR_INVALID_ARG;
    if (len == SIZE_MAX)
        return BC_ERR_TOO_LARGE;

    struct transfer *t = f->spare;
    if (t) {
        f->spare = t->next;
        f->n_spare--;
        t->next = NULL;
    } else {
        t = calloc(1, sizeof(*t));
        if (!t)
            return BC_ERR_NOMEM;
        t->f = f;
        t->easy = curl_easy_init();
        if (!t->easy)
            goto out_free_transfer;
    }
    bc_buf_init(&t->req, 0); /* bounded by curl and max_header_bytes */
    bc_buf_init(&t->resp, 0);
    t->url = malloc(len + 1);
    if (!t->url)
        goto out_recycle;
    memcpy(t->url, url, len);
    t->url[len] = 0;
    t->user = user;
    t->flags = flags;
    t->keep_bytes = keep_bytes;
    if (header_count > 0) {
        /* The transfer's own list: the fetcher's lines, then its own. */
        for (const struct curl_slist *l = f->headers; l; l = l->next)
            if (!slist_append_all(&t->headers, (const char *const *)&l->data,
                                  1))
                goto out_recycle;
        if (!slist_append_all(&t->headers, headers, header_count))
            goto out_recycle;
    }
    if (!scheme_ok(t->url)) {
        /* curl would guess http:// for "host/path": refuse instead. */
        t->abort_why = BC_ERR_FETCH_URL;
        snprintf(t->errbuf, sizeof(t->errbuf),
                 "only http:// and https:// URLs are fetched");
    }
    if (!transfer_setup(f, t)) {
        curl_easy_reset(t->easy);
        goto out_recycle;
    }

    if (f->pending_tail)
        f->pending_tail->next = t;
    else
        f->pending_head = t;
    f->pending_tail = t;
    f->n_pending++;
    return BC_OK;

out_recycle:
    transfer_recycle(f, t);
    return BC_ERR_NOMEM;
out_free_transfer:
    free(t);
    return BC_ERR_NOMEM;
}

enum bc_status bc_fetcher_add(struct bc_fetcher *f, const char *url, size_t len,
                              unsigned flags, void *user)
{
    return add_transfer(f, url, len, flags, 0, NULL, 0, user);
}

enum bc_status bc_fetcher_add_with_headers(struct bc_fetcher *f,
                                           const char *url, size_t len,
                                           unsigned flags,
                                           const char *const *headers,
                                           size_t header_count, void *user)
{
    return add_transfer(f, url, len, flags, 0, headers, header_count, user);
}

enum bc_status bc_fetcher_add_truncated(struct bc_fetcher *f, const char *url,
                                        size_t len, unsigned flags,
                                        uint64_t keep_bytes, void *user)
{
    if (keep_bytes == 0)
        return BC_ERR_INVALID_ARG;
    return add_transfer(f, url, len, flags, keep_bytes, NULL, 0, user);
}

/* --------------------------------------------------------------------- */
/* Callbacks from inside curl_multi_perform.                              */

static bool ascii_prefix(const char *s, size_t n, const char *prefix)
{
    size_t i;
    for (i = 0; prefix[i]; i++) {
        if (i >= n)
            return false;
        unsigned char a = (unsigned char)s[i];
        unsigned char b = (unsigned char)prefix[i];
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a - 'A' + 'a');
        if (a != b)
            return false;
    }
    return true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The value of a header line "Name: value\r\n", trimmed. */
static const char *header_value(const char *line, size_t n, size_t name_len,
                                size_t *len)
{
    const char *v = line + name_len;
    const char *end = line + n;
    while (v < end && is_space(*v))
        v++;
    while (end > v && is_space(end[-1]))
        end--;
    *len = (size_t)(end - v);
    return v;
}

/*
 * Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date. The delay
 * of a date is counted from now and is 0 for a date in the past.
 */
static bool parse_retry_after(const char *v, size_t n, uint64_t *ms)
{
    char buf[64];
    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, v, n);
    buf[n] = 0;

    bool digits = true;
    for (size_t i = 0; i < n; i++) {
        if (buf[i] < '0' || buf[i] > '9')
            digits = false;
    }
    if (digits) {
        uint64_t s = 0;
        for (size_t i = 0; i < n; i++) {
            if (s > UINT64_MAX / 10000)
                return false; /* absurd; treat as absent */
            s = s * 10 + (uint64_t)(buf[i] - '0');
        }
        *ms = s * 1000;
        return true;
    }
    time_t when = curl_getdate(buf, NULL);
    if (when == (time_t)-1)
        return false;
    time_t now = time(NULL);
    *ms = when > now ? (uint64_t)(when - now) * 1000 : 0;
    return true;
}

static uint64_t clock_ms(void)
{
    return bc_mono_ms();
}

/* Bytes received so far: header lines and body as it came on the wire. */
static uint64_t bytes_received(const struct transfer *t)
{
    curl_off_t body = 0;
    curl_easy_getinfo(t->easy, CURLINFO_SIZE_DOWNLOAD_T, &body);
    return t->header_bytes + (body > 0 ? (uint64_t)body : 0);
}

/* Stop a transfer from a callback with a reason and a text; out of
 * memory, the result's os_errno is ENOMEM (a local failure: OUT OF
 * MEMORY above). */
static void fail(struct transfer *t, enum bc_status why, const char *text)
{
    t->abort_why = why;
    t->os_errno = why == BC_ERR_NOMEM ? ENOMEM : 0;
    snprintf(t->why, sizeof(t->why), "%s", text);
}

/* curl's debug callback (only with on_wire_head): the request head as
 * sent. A second head (curl sending the request again on a fresh
 * connection) replaces the first. */
static int on_debug(CURL *easy, curl_infotype type, char *data, size_t size,
                    void *ud)
{
    (void)easy;
    struct transfer *t = ud;
    if (type != CURLINFO_HEADER_OUT)
        return 0;
    if (t->req_done) {
        bc_buf_clear(&t->req);
        t->req_done = false;
    }
    if (bc_buf_append(&t->req, data, size) != BC_OK) {
        /* seen at the first header line */
        fail(t, BC_ERR_NOMEM, "out of memory (request head)");
        return 0;
    }
    t->req_done = t->req.len >= 4 &&
                  memcmp(t->req.data + t->req.len - 4, "\r\n\r\n", 4) == 0;
    return 0;
}

/* One token of a comma-separated header value, trimmed; advances *v. */
static size_t next_token(const char **v, const char *end, const char **tok)
{
    const char *p = *v;
    while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
        p++;
    const char *q = p;
    while (q < end && *q != ',')
        q++;
    const char *e = q;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *tok = p;
    *v = q;
    return (size_t)(e - p);
}

static bool token_is(const char *tok, size_t n, const char *word)
{
    return n == strlen(word) && ascii_prefix(tok, n, word);
}

/* Content-Encoding: at most one coding besides identity, gzip (x-gzip)
 * or deflate; anything else is CODING_OTHER (refused at the first body
 * byte: a response without a body is fine). */
static void parse_content_encoding(struct transfer *t, const char *v, size_t n)
{
    const char *end = v + n, *tok;
    size_t len;
    while ((len = next_token(&v, end, &tok)) > 0 || v < end) {
        if (len == 0 || token_is(tok, len, "identity"))
            continue;
        enum coding c =
            token_is(tok, len, "gzip") || token_is(tok, len, "x-gzip")
                ? CODING_GZIP
            : token_is(tok, len, "deflate") ? CODING_DEFLATE
                                            : CODING_OTHER;
        t->coding = t->coding == CODING_IDENTITY ? c : CODING_OTHER;
    }
}

/* Transfer-Encoding: chunked (the only transfer coding curl speaks); any
 * other coding is refused like an unknown content coding. */
static void parse_transfer_encoding(struct transfer *t, const char *v, size_t n)
{
    const char *end = v + n, *tok;
    size_t len;
    while ((len = next_token(&v, end, &tok)) > 0 || v < end) {
        if (len == 0 || token_is(tok, len, "identity"))
            continue;
        if (token_is(tok, len, "chunked")) {
            t->chunked = true;
            bc_chunked_init(&t->ch);
        } else
            t->coding = CODING_OTHER;
    }
}

/* Count a header line against max_header_bytes; false (the transfer
 * fails) past the limit. */
static bool header_within_limit(struct transfer *t, size_t n)
{
    if (n > t->f->cfg.max_header_bytes - t->header_bytes) {
        t->abort_why = BC_ERR_FETCH_HEADERS;
        snprintf(t->why, sizeof(t->why), "headers over the %zu-byte limit",
                 t->f->cfg.max_header_bytes);
        return false;
    }
    t->header_bytes += n;
    return true;
}

/* Keep the header line for on_wire_head, until the head is handed out;
 * false when out of memory. */
static bool keep_wire_head(struct transfer *t, const char *data, size_t n,
                           bool status_line)
{
    if (!t->f->cfg.on_wire_head || t->wire_sent)
        return true;
    if (status_line) /* a new response (after 1xx): its head alone */
        bc_buf_clear(&t->resp);
    if (bc_buf_append(&t->resp, data, n) != BC_OK) {
        fail(t, BC_ERR_NOMEM, "out of memory (response head)");
        return false;
    }
    return true;
}

/*
 * The blank line: the end of a response's headers; a final one unless its
 * status is 1xx. Asks on_headers whether the body is wanted and hands out
 * the wire head; false when on_headers declined (stop: no body, no wire
 * head).
 */
static bool headers_end(struct transfer *t)
{
    const struct bc_fetcher_config *c = &t->f->cfg;
    long code = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    t->headers_done = code >= 200;
    if (!t->headers_done)
        return true;
    if (c->on_headers) {
        char *ct = NULL;
        curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ct);
        if (!c->on_headers(c->ctx, t->user, (int)code, ct)) {
            t->skipped = true;
            return false;
        }
    }
    if (c->on_wire_head && !t->wire_sent) {
        char *ip = NULL;
        curl_easy_getinfo(t->easy, CURLINFO_PRIMARY_IP, &ip);
        struct bc_fetch_wire_head h = {
            .request = t->req.data ? t->req.data : "",
            .request_len = t->req.len,
            .response = t->resp.data ? t->resp.data : "",
            .response_len = t->resp.len,
            .ip = ip ? ip : "",
            .http_status = (int)code,
        };
        t->wire_sent = true;
        c->on_wire_head(c->ctx, t->user, &h);
    }
    return true;
}

/* A new response (after 1xx): forget the previous one's fields. */
static void response_restart(struct transfer *t)
{
    free(t->location);
    t->location = NULL;
    t->location_len = 0;
    free(t->etag);
    t->etag = NULL;
    free(t->last_modified);
    t->last_modified = NULL;
    t->has_retry_after = false;
    t->coding = CODING_IDENTITY;
    t->chunked = false;
}

/* Keep a copy of the Location header's value v..v+len; false when out of
 * memory. */
static bool keep_location(struct transfer *t, const char *v, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) {
        fail(t, BC_ERR_NOMEM, "out of memory (Location)");
        return false;
    }
    memcpy(copy, v, len);
    copy[len] = 0;
    free(t->location);
    t->location = copy;
    t->location_len = len;
    return true;
}

/* Keep a copy of a validator's value v..v+len in *out (ETag,
 * Last-Modified: a conditional request's next time); false when out of
 * memory. A value with a NUL, CR or LF byte inside (curl splits header
 * lines at LF only: a bare CR stays in the value) is not kept: no request
 * line could carry it back (bc_fetcher_add_with_headers() refuses it). */
static bool keep_validator(struct transfer *t, char **out, const char *v,
                           size_t len)
{
    if (len == 0 || memchr(v, 0, len) || memchr(v, '\r', len) ||
        memchr(v, '\n', len))
        return true;
    char *copy = malloc(len + 1);
    if (!copy) {
        fail(t, BC_ERR_NOMEM, "out of memory (validator)");
        return false;
    }
    memcpy(copy, v, len);
    copy[len] = 0;
    free(*out);
    *out = copy;
    return true;
}

/* A header field line: read the fields the fetcher uses, ignore the
 * others; false when out of memory. */
static bool header_field(struct transfer *t, const char *data, size_t n)
{
    size_t len;
    const char *v;

    if (ascii_prefix(data, n, "content-encoding:")) {
        v = header_value(data, n, 17, &len);
        parse_content_encoding(t, v, len);
    } else if (ascii_prefix(data, n, "transfer-encoding:")) {
        v = header_value(data, n, 18, &len);
        parse_transfer_encoding(t, v, len);
    } else if (ascii_prefix(data, n, "location:")) {
        v = header_value(data, n, 9, &len);
        return keep_location(t, v, len);
    } else if (ascii_prefix(data, n, "etag:")) {
        v = header_value(data, n, 5, &len);
        return keep_validator(t, &t->etag, v, len);
    } else if (ascii_prefix(data, n, "last-modified:")) {
        v = header_value(data, n, 14, &len);
        return keep_validator(t, &t->last_modified, v, len);
    } else if (ascii_prefix(data, n, "retry-after:")) {
        v = header_value(data, n, 12, &len);
        t->has_retry_after = parse_retry_after(v, len, &t->retry_after_ms);
    }
    return true;
}

/* curl's header callback: one line of a response head (status line,
 * field line or the blank line), for every response, 1xx included.
 * Returns n to go on, 0 to stop the transfer. */
static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct transfer *t = ud;
    size_t n = size * nmemb;

    if (t->window_ms == 0) /* the response has begun: low-speed watch */
        t->window_ms = clock_ms();
    if (!header_within_limit(t, n))
        return 0;
    if (t->abort_why != BC_OK) /* on_debug ran out of memory */
        return 0;
    bool status_line = ascii_prefix(data, n, "http/");
    if (!keep_wire_head(t, data, n, status_line))
        return 0;

    if (n > 0 && n <= 2 && (data[0] == '\r' || data[0] == '\n'))
        return headers_end(t) ? n : 0;
    if (status_line) {
        response_restart(t);
        return n;
    }
    return header_field(t, data, n) ? n : 0;
}

/* text/html or application/xhtml+xml, parameters ignored. */
static bool is_html(const char *ct)
{
    if (!ct)
        return false;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, "; \t");
    return (n == 9 && ascii_prefix(ct, n, "text/html")) ||
           (n == 21 && ascii_prefix(ct, n, "application/xhtml+xml"));
}

static void link_bridge(void *ud, const char *href, size_t len,
                        const char *base, size_t base_len, unsigned flags)
{
    struct transfer *t = ud;
    const struct bc_fetcher_config *c = &t->f->cfg;
    c->on_link(c->ctx, t->user, href, len, base, base_len, flags);
}

static void text_bridge(void *ud, const char *text, size_t len)
{
    struct transfer *t = ud;
    const struct bc_fetcher_config *c = &t->f->cfg;
    c->on_text(c->ctx, t->user, text, len);
}

/* First body chunk: decide whether this body goes to the extractor.
 * false: no memory for the extractor (the transfer fails: its links would
 * be lost, OUT OF MEMORY above). */
static bool start_body(struct transfer *t)
{
    const struct bc_fetcher_config *c = &t->f->cfg;
    long code = 0;
    char *ct = NULL;
    char *eff = NULL;

    t->body_seen = true;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
    t->body_2xx = code >= 200 && code <= 299;
    if ((!c->on_link && !c->on_text) || (t->flags & BC_FETCH_NO_LINKS))
        return true;
    curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ct);
    if (code < 200 || code > 299 || !is_html(ct))
        return true;
    curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &eff);
    if (!eff)
        eff = t->url;

    struct bc_links_config lc;
    bc_links_config_init(&lc);
    lc.on_link = c->on_link ? link_bridge : NULL;
    lc.on_text = c->on_text ? text_bridge : NULL;
    lc.user = t;
    lc.max_href_bytes = c->max_href_bytes;
    enum bc_status st = bc_links_create(&lc, eff, strlen(eff), &t->links);
    if (st == BC_ERR_NOMEM) {
        t->links = NULL;
        fail(t, BC_ERR_NOMEM, "out of memory (link extractor)");
        return false;
    }
    if (st != BC_OK) /* a URL over 1 MiB: no base to resolve against */
        t->links = NULL;
    return true;
}

/*
 * Hand n decoded body bytes on: the limits, on_body, the link extractor.
 * Returns 0 to go on, 1 to stop reading as a success (keep_bytes reached:
 * the transfer is marked truncated), -1 to abort (abort_why says why).
 */
static int deliver(struct transfer *t, const char *data, size_t n)
{
    const struct bc_fetcher_config *c = &t->f->cfg;
    int rc = 0;

    if (t->keep_bytes && n > t->keep_bytes - t->body_bytes) {
        /* Keep what fits, then stop reading: a success, marked. */
        n = (size_t)(t->keep_bytes - t->body_bytes);
        t->truncated = true;
        rc = 1;
    } else if (!t->keep_bytes && c->max_body_bytes &&
               n > c->max_body_bytes - t->body_bytes) {
        /* Hand on what fits, then abort: the body is too large. */
        n = (size_t)(c->max_body_bytes - t->body_bytes);
        t->abort_why = BC_ERR_FETCH_TOO_LARGE;
        snprintf(t->why, sizeof(t->why), "body exceeds %llu bytes",
                 (unsigned long long)c->max_body_bytes);
        rc = -1;
    }
    if (n == 0)
        return rc;
    if (!t->body_seen && !start_body(t))
        return -1;
    t->body_bytes += n;
    if (c->on_body && (t->body_2xx || !(t->flags & BC_FETCH_BODY_2XX)) &&
        !c->on_body(c->ctx, t->user, data, n)) {
        if (rc != -1) { /* not too large already */
            fail(t, BC_ERR_FETCH_ABORTED, "aborted by the body callback");
            t->truncated = false;
        }
        return -1;
    }
    if (t->links && bc_links_feed(t->links, data, n) != BC_OK) {
        /* The extractor ran out of memory: the page's links would be
         * lost with a successful result; fail it (local, retried). */
        fail(t, BC_ERR_NOMEM, "out of memory (link extractor)");
        t->truncated = false;
        return -1;
    }
    return rc;
}

/* zlib's allocations go through malloc and free like the fetcher's own
 * (zlib's default does the same from inside libz, out of reach of the
 * tests' allocation-failure injection: tests/alloc_fail.h). */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    if (size && items > SIZE_MAX / size)
        return Z_NULL;
    return malloc((size_t)items * size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    free(p);
}

/* Undo the content coding of n body bytes (the dechunked payload) and
 * deliver() the result; returns as deliver(). */
static int decode(struct transfer *t, const char *data, size_t n)
{
    if (t->coding == CODING_IDENTITY)
        return deliver(t, data, n);
    if (t->coding == CODING_OTHER) {
        fail(t, BC_ERR_FETCH_PROTOCOL,
             "unsupported coding (only gzip and deflate are accepted)");
        return -1;
    }
    if (t->z_end || n == 0)
        return 0; /* bytes after the end of the stream are ignored */
    if (!t->z_ready) {
        memset(&t->z, 0, sizeof(t->z));
        t->z.zalloc = z_alloc;
        t->z.zfree = z_free;
        /* gzip: 15 + 16 (gzip wrapper); deflate: 15 (zlib wrapper). */
        int bits = t->coding == CODING_GZIP ? 15 + 16 : 15;
        int zrc = inflateInit2(&t->z, bits);
        if (zrc != Z_OK) {
            fail(t, zrc == Z_MEM_ERROR ? BC_ERR_NOMEM : BC_ERR_FETCH_OTHER,
                 zrc == Z_MEM_ERROR ? "out of memory (inflate)"
                                    : "inflate could not start");
            return -1;
        }
        t->z_ready = true;
    }
    bool fresh = t->z.total_in == 0; /* nothing consumed before this piece */
    unsigned char *out = t->f->zbuf;
    t->z.next_in = (Bytef *)(uintptr_t)data;
    t->z.avail_in = (uInt)n;
    for (;;) {
        t->z.next_out = out;
        t->z.avail_out = BC_FETCHER_ZBUF;
        int zrc = inflate(&t->z, Z_NO_FLUSH);
        if (zrc == Z_DATA_ERROR && t->coding == CODING_DEFLATE && !t->z_raw &&
            fresh && t->z.total_out == 0) {
            /* "deflate" without its zlib wrapper: again as raw deflate. */
            t->z_raw = true;
            if (inflateReset2(&t->z, -15) != Z_OK)
                break;
            t->z.next_in = (Bytef *)(uintptr_t)data;
            t->z.avail_in = (uInt)n;
            continue;
        }
        if (zrc == Z_MEM_ERROR) {
            fail(t, BC_ERR_NOMEM, "out of memory (inflate)");
            return -1;
        }
        if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
            break;
        size_t have = BC_FETCHER_ZBUF - t->z.avail_out;
        if (have) {
            int rc = deliver(t, (const char *)out, have);
            if (rc)
                return rc;
        }
        if (zrc == Z_STREAM_END) {
            t->z_end = true;
            return 0;
        }
        if (have == 0 || (t->z.avail_in == 0 && t->z.avail_out != 0))
            return 0; /* all input taken, all output handed on */
    }
    snprintf(t->why, sizeof(t->why), "corrupt %s body%s%s",
             t->coding == CODING_GZIP ? "gzip" : "deflate",
             t->z.msg ? ": " : "", t->z.msg ? t->z.msg : "");
    t->abort_why = BC_ERR_FETCH_PROTOCOL;
    return -1;
}

/* Tell the archive about n payload bytes (on_wire_payload); END: the
 * chunked body ended. false: it said stop (the transfer is failed). */
static bool wire_payload(struct transfer *t, const char *data, size_t n,
                         bool end)
{
    const struct bc_fetcher_config *c = &t->f->cfg;
    if (!c->on_wire_payload || (n == 0 && !end) ||
        c->on_wire_payload(c->ctx, t->user, data, n, end))
        return true;
    fail(t, BC_ERR_FETCH_ABORTED, "aborted by the wire callback");
    return false;
}

/*
 * Take the chunked framing off n wire bytes (chunked.c): the chunks' data
 * go to the archive (wire_payload) and to decode(). The whole piece is
 * framed even after decode() has stopped the transfer, since the archive
 * has all of it already: its payload is then what its block holds, and
 * it learns whether the body ended there (a sitemap parser that stopped
 * on a body's last bytes). A framing error fails the transfer with
 * BC_ERR_FETCH_PROTOCOL; one after decode() stopped it only ends the
 * archive's payload there (the archive's record is cut: no end came):
 * whether the transfer saw it would depend on where curl split the
 * bytes. Returns as deliver().
 */
static int dechunk(struct transfer *t, const char *data, size_t n)
{
    int rc = 0;
    if (t->ch.state == BC_CH_DONE)
        return 0; /* curl ends the body there: nothing should follow */
    while (n > 0) {
        const char *d;
        size_t dn, used;
        enum bc_chunked_status st =
            bc_chunked_decode(&t->ch, data, n, &used, &d, &dn);
        if (dn > 0) {
            if (!wire_payload(t, d, dn, false))
                return -1;
            if (rc == 0)
                rc = decode(t, d, dn);
        }
        data += used;
        n -= used;
        if (st == BC_CHUNKED_DONE)
            return wire_payload(t, NULL, 0, true) ? rc : -1;
        if (st == BC_CHUNKED_BAD) {
            if (rc == 0)
                fail(t, BC_ERR_FETCH_PROTOCOL, "malformed chunked body");
            return rc ? rc : -1;
        }
    }
    return rc;
}

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct transfer *t = ud;
    const struct bc_fetcher_config *c = &t->f->cfg;
    size_t n = size * nmemb;

    if (c->on_wire_body && n > 0 &&
        !c->on_wire_body(c->ctx, t->user, data, n)) {
        fail(t, BC_ERR_FETCH_ABORTED, "aborted by the wire callback");
        return 0;
    }
    if (t->chunked)
        return dechunk(t, data, n) == 0 ? n : 0;
    if (!wire_payload(t, data, n, false))
        return 0;
    return decode(t, data, n) == 0 ? n : 0;
}

/* --------------------------------------------------------------------- */
/* Completion: map curl's outcome to the library's status.                */

/* The kind of a failure, from curl's result code alone (and whether the
 * headers had ended), never from its message or from timings. */
static enum bc_status map_curl(const struct transfer *t, CURLcode code)
{
    switch ((int)code) {
    case CURLE_OK:
        return BC_OK;
    case CURLE_URL_MALFORMAT:
        return BC_ERR_FETCH_URL;
    case CURLE_UNSUPPORTED_PROTOCOL:
        /* The scheme was checked before curl saw the URL (scheme_ok): on
         * an http(s) URL this is a reply that is not HTTP (HTTP/0.9, a
         * malformed status line). */
        return BC_ERR_FETCH_PROTOCOL;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return BC_ERR_FETCH_DNS;
    case CURLE_COULDNT_CONNECT:
        return BC_ERR_FETCH_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        /* The connect or the total timeout: curl's low-speed abort is not
         * used (the fetcher measures the speed itself). */
        return BC_ERR_FETCH_TIMEOUT;
    case CURLE_FILESIZE_EXCEEDED:
        return BC_ERR_FETCH_TOO_LARGE;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
        return BC_ERR_FETCH_TLS;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_HTTP3:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_RANGE_ERROR:
        return BC_ERR_FETCH_PROTOCOL;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return BC_ERR_FETCH_NETWORK;
#if LIBCURL_VERSION_NUM >= 0x080600
    case CURLE_TOO_LARGE:
        /* curl 8.6+: a header line over its 100 KiB limit, among others. */
        return t->headers_done ? BC_ERR_FETCH_OTHER : BC_ERR_FETCH_HEADERS;
#endif
    case CURLE_OUT_OF_MEMORY:
        /* Out of memory: a local failure (OUT OF MEMORY above). But curl
         * before 8.6 also says this when one header line exceeds its
         * 100 KiB limit (8.6 says CURLE_TOO_LARGE), and its code alone
         * cannot tell the two apart: before the end of the headers, with
         * such a curl, a hostile header is taken to be the cause (a page
         * outcome, never retried for ever). */
        return t->headers_done ||
                       curl_version_info(CURLVERSION_NOW)->version_num >=
                           0x080600
                   ? BC_ERR_NOMEM
                   : BC_ERR_FETCH_HEADERS;
    case CURLE_ABORTED_BY_CALLBACK:
        return BC_ERR_FETCH_ABORTED;
    default:
        return BC_ERR_FETCH_OTHER;
    }
}

/* The errno of a failed transfer: the fetcher's own (ENOMEM), else the
 * one curl saw for its socket (CURLINFO_OS_ERRNO: EMFILE when socket()
 * found no descriptor, ECONNREFUSED, ...); ENOMEM for any failure that
 * is out of memory (curl's own allocations say nothing more). */
static int os_errno_of(const struct transfer *t, CURLcode code,
                       enum bc_status status)
{
    if (status == BC_OK)
        return 0;
    if (t->abort_why != BC_OK)
        return t->os_errno;
    if (code == CURLE_COULDNT_CONNECT && t->socket_errno)
        return t->socket_errno; /* no socket at all: EMFILE, ENFILE */
    /* curl sets it on a connect, send or receive failure and never
     * clears it (a recycled handle keeps an old one): read only then. A
     * TLS handshake that failed (CURLE_SSL_CONNECT_ERROR) may be one that
     * the network cut (a send or receive failure inside the handshake,
     * ECONNRESET): its errno tells it from a refused handshake (none);
     * certificate failures have codes of their own. */
    long err = 0;
    if ((code == CURLE_COULDNT_CONNECT || code == CURLE_SEND_ERROR ||
         code == CURLE_RECV_ERROR || code == CURLE_SSL_CONNECT_ERROR) &&
        curl_easy_getinfo(t->easy, CURLINFO_OS_ERRNO, &err) == CURLE_OK &&
        err > 0 && err <= INT_MAX)
        return (int)err;
    return status == BC_ERR_NOMEM ? ENOMEM : 0;
}

/* Deliver one finished transfer to on_done and recycle it. */
static void finish(struct bc_fetcher *f, struct transfer *t, CURLcode code)
{
    struct bc_fetch_result r;
    long http = 0;
    char *ct = NULL;
    char *eff = NULL;
    curl_off_t total_us = 0;

    memset(&r, 0, sizeof(r));
    r.user = t->user;
    r.status = t->abort_why != BC_OK        ? t->abort_why
               : t->truncated || t->skipped ? BC_OK
                                            : map_curl(t, code);
    if (r.status == BC_OK && !t->truncated && !t->skipped && t->z_ready &&
        !t->z_end) {
        /* A complete response whose compressed body stopped short. */
        r.status = BC_ERR_FETCH_PROTOCOL;
        snprintf(t->errbuf, sizeof(t->errbuf), "%s body ends early",
                 t->coding == CODING_GZIP ? "gzip" : "deflate");
    }
    if (t->abort_why != BC_OK && t->why[0])
        memcpy(t->errbuf, t->why, sizeof(t->errbuf));
    else if (r.status == BC_ERR_FETCH_HEADERS)
        /* curl's own header line limit: its text says "Out of memory"
         * (before 8.6) or nothing of headers; the fetcher's says what. */
        snprintf(t->errbuf, sizeof(t->errbuf),
                 "headers over the %d-byte limit (one line, libcurl's)",
                 CURL_MAX_HTTP_HEADER);
    r.truncated = t->truncated && r.status == BC_OK;
    r.skipped = t->skipped && r.status == BC_OK;
    if (r.status != BC_OK && !t->errbuf[0]) {
        const char *s =
            code != CURLE_OK ? curl_easy_strerror(code) : bc_strerror(r.status);
        snprintf(t->errbuf, sizeof(t->errbuf), "%s", s);
    }
    r.error = r.status == BC_OK ? "" : t->errbuf;
    r.os_errno = os_errno_of(t, code, r.status);
    r.url = t->url;
    curl_easy_getinfo(t->easy, CURLINFO_EFFECTIVE_URL, &eff);
    r.final_url = eff ? eff : t->url;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &http);
    r.http_status = http > 0 && http < 1000 ? (int)http : 0;
    curl_easy_getinfo(t->easy, CURLINFO_CONTENT_TYPE, &ct);
    r.content_type = ct;
    r.body_bytes = t->body_bytes;
    curl_easy_getinfo(t->easy, CURLINFO_TOTAL_TIME_T, &total_us);
    r.time_ms = total_us > 0 ? (uint64_t)total_us / 1000 : 0;
    if (t->abort_why == BC_ERR_FETCH_TOO_SLOW) /* stopped by check_speed */
        r.time_ms = clock_ms() - t->started_ms;
    r.has_retry_after = t->has_retry_after;
    r.retry_after_ms = t->has_retry_after ? t->retry_after_ms : 0;
    r.location = t->location;
    r.location_len = t->location ? t->location_len : 0;
    r.location_base = t->location ? r.final_url : NULL;
    r.etag = t->etag;
    r.last_modified = t->last_modified;

    if (t->links) {
        /*
         * Only a complete body is finished: the tail of an aborted one
         * may hold a tag cut in the middle, whose href would be wrong.
         */
        if (r.status == BC_OK && !r.truncated &&
            bc_links_finish(t->links) == BC_ERR_NOMEM) {
            /* The page's last links are lost: out of memory, local. */
            r.status = BC_ERR_NOMEM;
            r.os_errno = ENOMEM;
            snprintf(t->errbuf, sizeof(t->errbuf),
                     "out of memory (link extractor)");
            r.error = t->errbuf;
        }
        struct bc_links_stats st;
        bc_links_stats(t->links, &st);
        r.parsed = true;
        r.links = st.links;
        r.links_skipped = st.skipped_long;
        r.page_flags = bc_links_page_flags(t->links);
    }
    f->cfg.on_done(f->cfg.ctx, &r);
    transfer_recycle(f, t);
}

static void active_unlink(struct bc_fetcher *f, struct transfer *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else
        f->active = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->next = t->prev = NULL;
    f->n_active--;
}

/* Move the pending transfers into the multi handle. */
static void start_pending(struct bc_fetcher *f)
{
    while (f->pending_head) {
        struct transfer *t = f->pending_head;
        f->pending_head = t->next;
        if (!f->pending_head)
            f->pending_tail = NULL;
        f->n_pending--;
        t->next = NULL;

        if (t->abort_why != BC_OK) { /* refused before it started */
            finish(f, t, CURLE_UNSUPPORTED_PROTOCOL);
            continue;
        }
        if (curl_multi_add_handle(f->multi, t->easy) != CURLM_OK) {
            fail(t, BC_ERR_NOMEM, "out of memory (curl_multi_add_handle)");
            finish(f, t, CURLE_OUT_OF_MEMORY);
            continue;
        }
        t->next = f->active;
        if (f->active)
            f->active->prev = t;
        f->active = t;
        f->n_active++;
        t->started_ms = clock_ms();
    }
}

/*
 * The low-speed rule: once a transfer's response has begun, every window
 * of low_speed_time_s seconds must bring at least low_speed_bytes x
 * low_speed_time_s bytes (headers and body as received), else the
 * transfer ends with BC_ERR_FETCH_TOO_SLOW. Returns the time of the next
 * window end (UINT64_MAX: none), for bc_fetcher_run's wait.
 */
static uint64_t check_speed(struct bc_fetcher *f, uint64_t now)
{
    const struct bc_fetcher_config *c = &f->cfg;
    uint64_t next = UINT64_MAX;
    if (!c->low_speed_bytes || !c->low_speed_time_s)
        return next;
    uint64_t span = c->low_speed_time_s > UINT64_MAX / 1000
                        ? UINT64_MAX / 2
                        : c->low_speed_time_s * 1000;
    uint64_t need = c->low_speed_bytes > UINT64_MAX / c->low_speed_time_s
                        ? UINT64_MAX
                        : c->low_speed_bytes * c->low_speed_time_s;
    struct transfer *t = f->active;
    while (t) {
        struct transfer *after = t->next;
        if (t->window_ms && now - t->window_ms >= span) {
            uint64_t got = bytes_received(t);
            if (got - t->window_bytes < need) {
                curl_multi_remove_handle(f->multi, t->easy);
                active_unlink(f, t);
                t->abort_why = BC_ERR_FETCH_TOO_SLOW;
                snprintf(t->errbuf, sizeof(t->errbuf),
                         "under %llu bytes/s for %llu s",
                         (unsigned long long)c->low_speed_bytes,
                         (unsigned long long)c->low_speed_time_s);
                finish(f, t, CURLE_OK);
                t = after;
                continue;
            }
            t->window_ms = now;
            t->window_bytes = got;
        }
        if (t->window_ms && t->window_ms + span < next)
            next = t->window_ms + span;
        t = after;
    }
    return next;
}

/* Deliver every finished transfer; returns how many. */
static size_t drain(struct bc_fetcher *f)
{
    size_t done = 0;
    int left;
    CURLMsg *msg;

    while ((msg = curl_multi_info_read(f->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        CURL *easy = msg->easy_handle;
        CURLcode code = msg->data.result;
        struct transfer *t = NULL;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
        curl_multi_remove_handle(f->multi, easy);
        active_unlink(f, t);
        finish(f, t, code);
        done++;
    }
    return done;
}

static enum bc_status perform(struct bc_fetcher *f)
{
    int running;
    CURLMcode mc = curl_multi_perform(f->multi, &running);
    if (mc == CURLM_OUT_OF_MEMORY)
        return BC_ERR_NOMEM;
    return BC_OK;
}

enum bc_status bc_fetcher_run(struct bc_fetcher *f, uint64_t timeout_ms)
{
    enum bc_status st;
    if (!f || f->in_run)
        return BC_ERR_INVALID_ARG;
    f->in_run = true;

    start_pending(f);
    st = perform(f);
    size_t done = drain(f);
    start_pending(f);
    uint64_t now = clock_ms();
    uint64_t due = check_speed(f, now);
    if (st == BC_OK && done == 0 && f->n_active > 0 && timeout_ms > 0) {
        if (due <= now)
            timeout_ms = 1;
        else if (due != UINT64_MAX && due - now < timeout_ms)
            timeout_ms = due - now;
        int wait = timeout_ms > INT_MAX ? INT_MAX : (int)timeout_ms;
        if (curl_multi_poll(f->multi, NULL, 0, wait, NULL) ==
            CURLM_OUT_OF_MEMORY) {
            st = BC_ERR_NOMEM;
        } else {
            st = perform(f);
            drain(f);
            start_pending(f);
            check_speed(f, clock_ms());
        }
    }
    f->in_run = false;
    return st;
}

size_t bc_fetcher_in_flight(const struct bc_fetcher *f)
{
    return f ? f->n_pending + f->n_active : 0;
}

enum bc_status bc_fetcher_wakeup(struct bc_fetcher *f)
{
    if (!f || !f->multi)
        return BC_ERR_INVALID_ARG;
    return curl_multi_wakeup(f->multi) == CURLM_OK ? BC_OK : BC_ERR_INVALID_ARG;
}

void bc_fetcher_free(struct bc_fetcher *f)
{
    if (!f)
        return;
    while (f->active) {
        struct transfer *t = f->active;
        curl_multi_remove_handle(f->multi, t->easy);
        active_unlink(f, t);
        transfer_destroy(t);
    }
    while (f->pending_head) {
        struct transfer *t = f->pending_head;
        f->pending_head = t->next;
        transfer_destroy(t);
    }
    while (f->spare) {
        struct transfer *t = f->spare;
        f->spare = t->next;
        transfer_destroy(t);
    }
    if (f->multi)
        curl_multi_cleanup(f->multi);
    if (f->share)
        curl_share_cleanup(f->share);
    curl_slist_free_all(f->resolve);
    free(f->zbuf);
    curl_slist_free_all(f->headers);
    free(f->proxy);
    free(f->user_agent);
    free(f);
}
