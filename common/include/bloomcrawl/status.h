/*
 * bloomcrawl/status.h - the one status enum of the whole library.
 *
 * Every bloomcrawl function that can fail returns an enum bc_status.
 * BC_OK is zero, every error is non-zero, and bc_strerror() gives a short
 * English text for each. Results go out through pointers that are written
 * only on success: a failed call leaves its outputs and its object as they
 * were.
 */
#ifndef BC_COMMON_STATUS_H
#define BC_COMMON_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Every status once, in the order of their values: X(NAME, "text"), each
 * with what it means. The enum and bc_strerror()'s texts are generated
 * from this list, so a status cannot be added without its text. */
/* clang-format off */
#define BC_STATUS_LIST(X)                                                     \
    X(BC_OK, "success")                                                       \
    /* General. */                                                            \
    X(BC_ERR_NOMEM, "out of memory")                                          \
        /* an allocation failed */                                            \
    X(BC_ERR_INVALID_ARG, "invalid argument")                                 \
        /* NULL handle, n = 0, p outside (0, 1), ... */                       \
    X(BC_ERR_TOO_LARGE, "size too large")                                     \
        /* a size overflows or exceeds the sane cap */                        \
    X(BC_ERR_IO, "input/output error")                                        \
        /* open/read/write/fsync/rename failed (errno) */                     \
    /* Loading saved state. */                                                \
    X(BC_ERR_FORMAT, "not a bloomcrawl file (bad magic)")                     \
        /* not a bloomcrawl file (wrong magic) */                             \
    X(BC_ERR_VERSION, "unsupported file format version")                      \
        /* a file format version this build cannot read */                    \
    X(BC_ERR_TRUNCATED, "file truncated")                                     \
        /* the file is shorter than its header says */                        \
    X(BC_ERR_CHECKSUM, "checksum mismatch (damaged file)")                    \
        /* the checksum does not match: damaged file */                       \
    X(BC_ERR_CORRUPT, "inconsistent file header")                             \
        /* header fields inconsistent (size, k, layout) */                    \
    /* Set membership. */                                                     \
    X(BC_ERR_NOT_FOUND, "key not present")                                    \
        /* remove of a key the filter reports absent */                       \
    /* URLs (frontier/url). */                                                \
    X(BC_ERR_URL_EMPTY, "empty URL")                                          \
        /* nothing left after trimming */                                     \
    X(BC_ERR_URL_SCHEME, "unsupported scheme")                                \
        /* not http or https */                                               \
    X(BC_ERR_URL_NO_BASE, "relative URL without a usable base")               \
        /* a relative reference and no usable base */                         \
    X(BC_ERR_URL_HOST, "bad host")                                            \
        /* missing or malformed host */                                       \
    X(BC_ERR_URL_PORT, "bad port")                                            \
        /* port not a number in 0..65535 */                                   \
    X(BC_ERR_URL_IDN, "bad internationalized host name")                      \
        /* IDNA (UTS-46) rejected the host */                                 \
    X(BC_ERR_URL_TOO_LONG, "URL too long")                                    \
        /* the canonical URL exceeds the maximum length */                    \
    X(BC_ERR_URL_IPV4, "bad IPv4 address")                                    \
        /* host ends in a number but is no IPv4 address */                    \
    X(BC_ERR_URL_IPV6, "bad IPv6 address")                                    \
        /* bracketed host is no IPv6 address */                               \
    X(BC_ERR_URL_BUFFER, "output buffer too small for the URL")               \
        /* the caller's output buffer is too small */                         \
    /* Fetching (fetcher/): why a transfer failed. An HTTP error              \
     * status (404, 500, ...) is not one of these: it is a completed          \
     * transfer. */                                                           \
    X(BC_ERR_FETCH_URL, "URL refused by the fetcher")                         \
        /* curl refused the URL (malformed, scheme) */                        \
    X(BC_ERR_FETCH_DNS, "could not resolve host")                             \
        /* the host name could not be resolved */                             \
    X(BC_ERR_FETCH_CONNECT, "could not connect")                              \
        /* the connection was refused or failed */                            \
    X(BC_ERR_FETCH_TIMEOUT, "timed out")                                      \
        /* connect or total timeout expired */                                \
    X(BC_ERR_FETCH_TOO_SLOW, "transfer too slow")                             \
        /* below the low-speed limit for too long */                          \
    X(BC_ERR_FETCH_TOO_LARGE, "body larger than the limit")                   \
        /* the body exceeded the maximum size */                              \
    X(BC_ERR_FETCH_HEADERS, "headers larger than the limit")                  \
        /* the headers exceeded the maximum size */                           \
    X(BC_ERR_FETCH_TLS, "TLS failure")                                        \
        /* TLS handshake or certificate failure */                            \
    X(BC_ERR_FETCH_PROTOCOL, "HTTP protocol error")                           \
        /* malformed HTTP, bad encoding, HTTP/2 error */                      \
    X(BC_ERR_FETCH_NETWORK, "network error")                                  \
        /* send/receive failed, connection cut */                             \
    X(BC_ERR_FETCH_ABORTED, "transfer aborted by the caller")                 \
        /* the caller's body callback stopped it */                           \
    X(BC_ERR_FETCH_OTHER, "transfer failed")                                  \
        /* any other libcurl failure (see its text) */                        \
    /* Crawl state (crawler/state.c). */                                      \
    X(BC_ERR_LOCKED, "in use by another process")                             \
        /* another process holds the state's lock */                          \
    X(BC_ERR_MISMATCH, "differs from the recorded setting")                   \
        /* a setting differs from the one recorded */                         \
    /* Redis (dedup/redis/). */                                               \
    X(BC_ERR_REDIS_CONNECT, "could not connect to Redis")                     \
        /* could not connect to the Redis server */                           \
    X(BC_ERR_REDIS_LOST, "Redis connection lost")                             \
        /* the connection failed during a command */                          \
    X(BC_ERR_REDIS_REPLY, "Redis replied with an error")                      \
        /* the server answered with an error */                               \
    /* Capabilities. */                                                       \
    X(BC_ERR_UNSUPPORTED, "not supported by this object")                     \
        /* this object cannot do that (e.g. forget a key in a plain Bloom     \
         * filter) */
/* clang-format on */

#define BC_STATUS_ENUM_(name, text) name,
enum bc_status { BC_STATUS_LIST(BC_STATUS_ENUM_) };
#undef BC_STATUS_ENUM_

/* Short English description of a status; never NULL, never freed. */
const char *bc_strerror(enum bc_status status);

#ifdef __cplusplus
}
#endif

#endif /* BC_COMMON_STATUS_H */
