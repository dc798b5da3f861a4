/*
 * bloomcrawl/url.h - URL resolution and normalization for a crawler.
 *
 * A crawler meets one page under many spellings: HTTP://Example.COM:80/a/./b,
 * http://example.com/a/b#top, http://example.com/%61/b. Before a URL reaches
 * the seen-test it must be reduced to one canonical spelling, or the crawler
 * fetches the same page many times. This unit turns an href, as found on a
 * page, into two strings:
 *
 *   the fetch URL  the href resolved against the page's base URL (RFC 3986
 *                  section 5.2) and normalized with the safe rules of
 *                  docs/DESIGN.md 3.1 (RFC 3986 section 6): what the crawler
 *                  fetches;
 *   the seen-key   the fetch URL with the opt-in rules applied (sorted
 *                  query, dropped parameters, ...): what the crawler
 *                  deduplicates on.
 *
 * frontier/url.c explains every rule and why it is safe or opt-in.
 *
 * Usage, for the links of one page:
 *
 *     char base_buf[BC_URL_MAX_LEN_DEFAULT + 1];
 *     char buf[BC_URL_MAX_LEN_DEFAULT + 1], key[BC_URL_MAX_LEN_DEFAULT + 1];
 *     struct bc_url base, url;
 *     size_t key_len;
 *     bc_url_normalize(NULL, page_url, page_len, NULL, base_buf,
 *                      sizeof base_buf, &base);
 *     for (each href on the page) {
 *         if (bc_url_normalize(&base, href, href_len, &policy, buf,
 *                              sizeof buf, &url) != BC_OK)
 *             continue;             (count the reason, skip the link)
 *         bc_url_seen_key(&url, &policy, key, sizeof key, &key_len);
 *         (seen-test on key; fetch url.href)
 *     }
 *
 * The base is parsed once: a struct bc_url made by bc_url_normalize() is
 * itself the parsed base for the next calls, so resolving the hundreds of
 * links of one page never reparses the page URL.
 *
 * Only http and https URLs come out. Output strings are NUL-terminated and
 * contain only printable ASCII (every other byte is percent-encoded).
 *
 * Thread safety: no function keeps state; calls on different output buffers
 * may run concurrently, unless their policy names the same IDN cache (a
 * cache is written by every call that uses it). A struct bc_url points into
 * the buffer it was made in and is valid only as long as that buffer is
 * unchanged.
 *
 * Cost: one pass over the href, O(length), no allocation, except (a) hosts
 * with non-ASCII characters or an "xn--" label, which go through ICU's
 * UTS #46 (it allocates, and takes 0.5 to 1 us a host: give the policy a
 * struct bc_url_idn_cache when many absolute URLs have IDN hosts), and
 * (b) hrefs longer than 4 KiB that
 * contain TAB, CR or LF, which are copied once without them (one malloc).
 * Sorting the query (opt-in, bc_url_seen_key()) is a stable merge sort,
 * O(n log n) for n parameters, on the stack up to 64 parameters and in
 * one malloc above.
 */
#ifndef BC_FRONTIER_URL_H
#define BC_FRONTIER_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default maximum length of an output URL, in bytes (NUL not counted). */
#define BC_URL_MAX_LEN_DEFAULT 2048u

/* Opt-in rules for the seen-key (struct bc_url_policy.rules). Each one may
 * merge URLs of different pages on some sites; none is applied to the fetch
 * URL. */
#define BC_URL_SORT_QUERY        0x01u /* stable sort of query parameters */
#define BC_URL_STRIP_SESSION_IDS 0x02u /* jsessionid phpsessid sid sessionid */
#define BC_URL_COLLAPSE_SLASHES  0x04u /* "//" in the path becomes "/" */
#define BC_URL_STRIP_USERINFO    0x08u /* drop "user:password@" */

/*
 * What to normalize and how far. A zeroed struct (or a NULL pointer) is the
 * default policy: BC_URL_MAX_LEN_DEFAULT, no opt-in rule.
 */
struct bc_url_policy {
    /* Longest fetch URL accepted, in bytes; 0 means the default. A longer
     * URL is rejected with BC_ERR_URL_TOO_LONG, never truncated. */
    size_t max_len;
    /* BC_URL_* opt-in rules for bc_url_seen_key(), or-ed. */
    unsigned rules;
    /* Query parameters bc_url_seen_key() drops, by name, compared ASCII
     * case-insensitively with the name as it stands in the fetch URL. A
     * trailing '*' makes a prefix: "utm_*"; a NULL entry is skipped. Not
     * copied: the strings must outlive every call that uses the policy.
     * strip_params may be NULL only when strip_params_count is 0: both
     * functions below refuse such a policy with BC_ERR_INVALID_ARG. */
    const char *const *strip_params;
    size_t strip_params_count;
    /* Optional cache of IDN conversions for bc_url_normalize(), or NULL.
     * The cache is written by every call that uses the policy: such a
     * policy must not be used by two threads at once. */
    struct bc_url_idn_cache *idn_cache;
};

/*
 * A cache of IDN host conversions (UTS #46 through ICU, 0.5 to 1 us a
 * host) for crawls that meet the same non-ASCII hosts again and again in
 * absolute URLs. Direct-mapped: `entries` slots (rounded up to a power of
 * two, at most 2^20), about 530 bytes each; a new host replaces the one in
 * its slot. The cache also holds the ICU handle, opened at its first
 * conversion (without a cache each conversion opens and closes one).
 * Results are the same with and without a cache. Not thread-safe. Errors:
 * BC_ERR_INVALID_ARG (out NULL, entries 0 or above 2^20), BC_ERR_NOMEM.
 * Free with bc_url_idn_cache_free().
 */
struct bc_url_idn_cache;
enum bc_status bc_url_idn_cache_create(size_t entries,
                                       struct bc_url_idn_cache **out);
/* Free a cache; NULL is a no-op. */
void bc_url_idn_cache_free(struct bc_url_idn_cache *cache);

/* What kind of host a URL names. */
enum bc_url_host_type {
    BC_URL_HOST_NAME = 0, /* a DNS name (IDNs in punycode) */
    BC_URL_HOST_IPV4 = 1, /* dotted decimal, e.g. 127.0.0.1 */
    BC_URL_HOST_IPV6 = 2  /* bracketed, RFC 5952 form, e.g. [2001:db8::1] */
};

/* A part of a canonical URL: bytes [off, off + len) of href. */
struct bc_url_part {
    size_t off;
    size_t len;
};

/*
 * A canonical fetch URL and its parsed parts, filled by bc_url_normalize().
 *
 *     https://user:pw@example.com:8443/a/b?x=1
 *     \___/   \_____/ \_________/ \__/\__/ \_/
 *     scheme  userinfo   host     port path query
 *
 * The politeness key (scheme, host and port) is bc_url_origin(); the
 * request target that robots.txt rules match (path and query) is
 * bc_url_target(). Both cost nothing when there is no userinfo.
 */
struct bc_url {
    const char *href; /* the canonical URL, NUL-terminated, in the caller's
                         output buffer */
    size_t len;       /* strlen(href) */
    struct bc_url_part scheme;   /* "http" or "https" */
    struct bc_url_part userinfo; /* without '@'; len 0: none */
    struct bc_url_part host;     /* never empty */
    struct bc_url_part port;     /* digits without ':'; len 0: default */
    struct bc_url_part path;     /* starts with '/', never empty */
    struct bc_url_part query;    /* without '?'; len 0: no query */
    uint16_t port_number;        /* the port to connect to (80, 443, ...) */
    bool https;
    enum bc_url_host_type host_type;
};

/*
 * Resolve href against base and normalize it into the canonical fetch URL.
 *
 * base   a URL made by an earlier bc_url_normalize() (the page's URL, or its
 *        <base href>), or NULL when href must be absolute.
 * href   href_len bytes, anything (NUL, controls, non-ASCII included).
 * policy max_len is used here; NULL means the default policy.
 * out    out_size bytes; receives the NUL-terminated URL. out_size of
 *        max_len + 1 always suffices. The base's buffer may not be out.
 * url    receives the parts; url->href == out.
 *
 * Returns BC_OK, or why the href cannot be fetched:
 *   BC_ERR_URL_EMPTY     nothing left after trimming, and no base;
 *   BC_ERR_URL_SCHEME    a scheme other than http/https (mailto:, ftp:, ...);
 *   BC_ERR_URL_NO_BASE   a relative reference and base is NULL;
 *   BC_ERR_URL_HOST      missing host, or not a DNS name, also once IDN
 *                        conversion made it ASCII (characters other than
 *                        letters, digits, '-', '_', '.'; an empty label;
 *                        a label over 63 or a name over 253 bytes);
 *   BC_ERR_URL_IPV4      a host ending in a number that is no valid IPv4
 *                        address (1.2.3.256, 1.2.3.4.5, foo.123, 0x1g.1);
 *                        a last label that is no number, decimal or
 *                        0x hex (0x1g, 1.0x1g), makes the host a DNS
 *                        name, as in the WHATWG URL Standard;
 *   BC_ERR_URL_IPV6      a bracketed host that is no valid IPv6 address;
 *   BC_ERR_URL_PORT      a port that is not a number in 0..65535;
 *   BC_ERR_URL_IDN       UTS #46, as browsers apply it (non-transitional,
 *                        bidi and joiner checks), rejected the host: a
 *                        disallowed code point, invalid UTF-8, invalid
 *                        punycode in an "xn--" label; or ICU could not
 *                        load its data;
 *   BC_ERR_URL_TOO_LONG  the URL exceeds policy->max_len (checked on every
 *                        intermediate form: a segment that a later ".."
 *                        would remove still counts);
 *   BC_ERR_URL_BUFFER    out_size is too small (and less than max_len + 1)
 *                        but not 0;
 *   BC_ERR_INVALID_ARG   href, out or url NULL (href may be NULL when
 *                        href_len is 0), out_size 0, or a policy whose
 *                        strip_params is NULL with a strip_params_count
 *                        that is not 0;
 *   BC_ERR_NOMEM         ICU, or the copy of a long href with TAB/CR/LF,
 *                        could not allocate.
 * On error *url is unchanged; out may hold garbage.
 */
enum bc_status bc_url_normalize(const struct bc_url *base, const char *href,
                                size_t href_len,
                                const struct bc_url_policy *policy, char *out,
                                size_t out_size, struct bc_url *url);

/*
 * Write the seen-key of a canonical URL: url->href with policy's opt-in
 * rules applied. With no opt-in rule it is a copy of url->href.
 *
 * out_size of url->len + 1 always suffices (no rule lengthens the URL).
 * *key_len receives the length without the NUL. Returns BC_OK, or
 *   BC_ERR_URL_BUFFER    out is too small (out_size not 0);
 *   BC_ERR_INVALID_ARG   url, url->href, out or key_len NULL, out_size 0,
 *                        or a policy whose strip_params is NULL with a
 *                        strip_params_count that is not 0;
 *   BC_ERR_NOMEM         BC_URL_SORT_QUERY on a query of more than 64
 *                        parameters, and their array could not be
 *                        allocated.
 * On error *key_len is unchanged; out may hold garbage. Cost: O(len), or
 * O(len + n log n) with BC_URL_SORT_QUERY for n query parameters (a
 * stable merge sort; above 64 parameters one malloc of 6 size_t each).
 */
enum bc_status bc_url_seen_key(const struct bc_url *url,
                               const struct bc_url_policy *policy, char *out,
                               size_t out_size, size_t *key_len);

/*
 * The politeness key of a URL: "scheme://host" plus ":port" when the port
 * is not the default, as the canonical URL spells them (so two URLs share a
 * key exactly when they share scheme, host and port). Without userinfo it is
 * the prefix url->href[0, url->path.off) and this returns a pointer into
 * url->href; with userinfo it is written to buf (buf_size bytes; 270
 * always suffice) and buf is returned. *len receives the length. Returns
 * NULL only when buf is needed and too small.
 */
const char *bc_url_origin(const struct bc_url *url, char *buf, size_t buf_size,
                          size_t *len);

/* The request target, path and query ("/a/b?x=1"), as robots.txt rules
 * match it: a pointer into url->href; *len receives its length. */
const char *bc_url_target(const struct bc_url *url, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* BC_FRONTIER_URL_H */
