/*
 * status.c - texts for the library's one status enum.
 *
 * Written as a switch without `default:` so that -Wswitch names any status
 * added to the enum and forgotten here.
 */
#include "bloomcrawl/status.h"

const char *bc_strerror(enum bc_status status)
{
    switch (status) {
    case BC_OK:
        return "success";
    case BC_ERR_NOMEM:
        return "out of memory";
    case BC_ERR_INVALID_ARG:
        return "invalid argument";
    case BC_ERR_TOO_LARGE:
        return "size too large";
    case BC_ERR_IO:
        return "input/output error";
    case BC_ERR_FORMAT:
        return "not a bloomcrawl file (bad magic)";
    case BC_ERR_VERSION:
        return "unsupported file format version";
    case BC_ERR_TRUNCATED:
        return "file truncated";
    case BC_ERR_CHECKSUM:
        return "checksum mismatch (damaged file)";
    case BC_ERR_CORRUPT:
        return "inconsistent file header";
    case BC_ERR_NOT_FOUND:
        return "key not present";
    case BC_ERR_URL_EMPTY:
        return "empty URL";
    case BC_ERR_URL_SCHEME:
        return "unsupported scheme";
    case BC_ERR_URL_NO_BASE:
        return "relative URL without a usable base";
    case BC_ERR_URL_HOST:
        return "bad host";
    case BC_ERR_URL_PORT:
        return "bad port";
    case BC_ERR_URL_IDN:
        return "bad internationalized host name";
    case BC_ERR_URL_TOO_LONG:
        return "URL too long";
    case BC_ERR_URL_IPV4:
        return "bad IPv4 address";
    case BC_ERR_URL_IPV6:
        return "bad IPv6 address";
    case BC_ERR_URL_BUFFER:
        return "output buffer too small for the URL";
    case BC_ERR_FETCH_URL:
        return "URL refused by the fetcher";
    case BC_ERR_FETCH_DNS:
        return "could not resolve host";
    case BC_ERR_FETCH_CONNECT:
        return "could not connect";
    case BC_ERR_FETCH_TIMEOUT:
        return "timed out";
    case BC_ERR_FETCH_TOO_SLOW:
        return "transfer too slow";
    case BC_ERR_FETCH_TOO_LARGE:
        return "body larger than the limit";
    case BC_ERR_FETCH_HEADERS:
        return "headers larger than the limit";
    case BC_ERR_FETCH_TLS:
        return "TLS failure";
    case BC_ERR_FETCH_PROTOCOL:
        return "HTTP protocol error";
    case BC_ERR_FETCH_NETWORK:
        return "network error";
    case BC_ERR_FETCH_ABORTED:
        return "transfer aborted by the caller";
    case BC_ERR_FETCH_OTHER:
        return "transfer failed";
    case BC_ERR_LOCKED:
        return "in use by another process";
    case BC_ERR_MISMATCH:
        return "differs from the recorded setting";
    case BC_ERR_REDIS_CONNECT:
        return "could not connect to Redis";
    case BC_ERR_REDIS_LOST:
        return "Redis connection lost";
    case BC_ERR_REDIS_REPLY:
        return "Redis replied with an error";
    case BC_ERR_UNSUPPORTED:
        return "not supported by this object";
    }
    return "unknown status";
}
