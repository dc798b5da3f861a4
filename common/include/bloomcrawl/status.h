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

enum bc_status {
    BC_OK = 0,

    /* General. */
    BC_ERR_NOMEM,       /* an allocation failed */
    BC_ERR_INVALID_ARG, /* NULL handle, n = 0, p outside (0, 1), ... */
    BC_ERR_TOO_LARGE,   /* a size overflows or exceeds the sane cap */
    BC_ERR_IO,          /* open/read/write/fsync/rename failed (errno) */

    /* Loading saved state. */
    BC_ERR_FORMAT,    /* not a bloomcrawl file (wrong magic) */
    BC_ERR_VERSION,   /* a file format version this build cannot read */
    BC_ERR_TRUNCATED, /* the file is shorter than its header says */
    BC_ERR_CHECKSUM,  /* the checksum does not match: damaged file */
    BC_ERR_CORRUPT,   /* header fields inconsistent (size, k, layout) */

    /* Set membership. */
    BC_ERR_NOT_FOUND, /* remove of a key the filter reports absent */

    /* URLs (frontier/url). */
    BC_ERR_URL_EMPTY,    /* nothing left after trimming */
    BC_ERR_URL_SCHEME,   /* not http or https */
    BC_ERR_URL_NO_BASE,  /* a relative reference and no usable base */
    BC_ERR_URL_HOST,     /* missing or malformed host */
    BC_ERR_URL_PORT,     /* port not a number in 0..65535 */
    BC_ERR_URL_IDN,      /* IDNA (UTS-46) rejected the host */
    BC_ERR_URL_TOO_LONG, /* the canonical URL exceeds the maximum length */
    BC_ERR_URL_IPV4,     /* host ends in a number but is no IPv4 address */
    BC_ERR_URL_IPV6,     /* bracketed host is no IPv6 address */
    BC_ERR_URL_BUFFER,   /* the caller's output buffer is too small */

    /* Fetching (fetcher/): why a transfer failed. An HTTP error status
     * (404, 500, ...) is not one of these: it is a completed transfer. */
    BC_ERR_FETCH_URL,       /* curl refused the URL (malformed, scheme) */
    BC_ERR_FETCH_DNS,       /* the host name could not be resolved */
    BC_ERR_FETCH_CONNECT,   /* the connection was refused or failed */
    BC_ERR_FETCH_TIMEOUT,   /* connect or total timeout expired */
    BC_ERR_FETCH_TOO_SLOW,  /* below the low-speed limit for too long */
    BC_ERR_FETCH_TOO_LARGE, /* the body exceeded the maximum size */
    BC_ERR_FETCH_HEADERS,   /* the headers exceeded the maximum size */
    BC_ERR_FETCH_TLS,       /* TLS handshake or certificate failure */
    BC_ERR_FETCH_PROTOCOL,  /* malformed HTTP, bad encoding, HTTP/2 error */
    BC_ERR_FETCH_NETWORK,   /* send/receive failed, connection cut */
    BC_ERR_FETCH_ABORTED,   /* the caller's body callback stopped it */
    BC_ERR_FETCH_OTHER,     /* any other libcurl failure (see its text) */

    /* Crawl state (crawler/state.c). */
    BC_ERR_LOCKED,   /* another process holds the state's lock */
    BC_ERR_MISMATCH, /* a setting differs from the one recorded */

    /* Redis (dedup/redis/). */
    BC_ERR_REDIS_CONNECT, /* could not connect to the Redis server */
    BC_ERR_REDIS_LOST,    /* the connection failed during a command */
    BC_ERR_REDIS_REPLY,   /* the server answered with an error */

    /* Capabilities. */
    BC_ERR_UNSUPPORTED /* this object cannot do that (e.g. forget a key
                          in a plain Bloom filter) */
};

/* Short English description of a status; never NULL, never freed. */
const char *bc_strerror(enum bc_status status);

#ifdef __cplusplus
}
#endif

#endif /* BC_COMMON_STATUS_H */
