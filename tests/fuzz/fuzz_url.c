/*
 * fuzz_url.c - libFuzzer target for frontier/url: resolve + normalize.
 *
 * The first input byte picks a base URL (or none), a maximum length and the
 * opt-in rules; the rest is the href. Checked on every input:
 *   - no crash, no sanitizer report;
 *   - a result is printable ASCII and within the maximum length;
 *   - idempotence: normalize(normalize(x)) == normalize(x), with equal parts;
 *   - resolving "" against the result gives the result;
 *   - the seen-key re-normalizes to a URL with the same seen-key.
 * A violation aborts (the fuzzer reports the input).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const bases[] = {"http://a/b/c/d;p?q",
                                    "https://u:p@example.com:8443/x/y/z?k=v",
                                    "http://[::1]/",
                                    "http://127.0.0.1:8080/a//b/",
                                    "https://xn--bcher-kva.de/",
                                    "http://h/%7Ea/%2e%2F/?%zz"};

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char base_buf[BC_URL_MAX_LEN_DEFAULT + 1];
    static char out[2 * BC_URL_MAX_LEN_DEFAULT],
        again[2 * BC_URL_MAX_LEN_DEFAULT];
    static char key[2 * BC_URL_MAX_LEN_DEFAULT],
        key2[2 * BC_URL_MAX_LEN_DEFAULT];
    static const char *const strip[] = {"utm_*", "gclid"};
    struct bc_url base, u, v, k;
    const struct bc_url *bp = NULL;
    size_t nbases = sizeof bases / sizeof *bases;

    if (size == 0)
        return 0;
    unsigned sel = data[0];
    data++;
    size--;
    if (sel % 8 < nbases) {
        const char *b = bases[sel % 8];
        check(bc_url_normalize(NULL, b, strlen(b), NULL, base_buf,
                               sizeof base_buf, &base) == BC_OK);
        bp = &base;
    }
    struct bc_url_policy policy = {.rules = (sel >> 3) & 15,
                                   .strip_params = strip,
                                   .strip_params_count = 2};
    if (sel & 0x80)
        policy.max_len = 64;
    /* Half the inputs go through a tiny IDN cache (kept across inputs, so
     * hosts replace each other); the result must be the same. */
    static struct bc_url_idn_cache *cache;
    if (cache == NULL)
        check(bc_url_idn_cache_create(2, &cache) == BC_OK);
    if (size % 2 == 1)
        policy.idn_cache = cache;
    size_t max_len = policy.max_len ? policy.max_len : BC_URL_MAX_LEN_DEFAULT;
    /* Half the time the buffer is exactly max_len + 1, else larger. */
    size_t out_size = (sel & 0x40) ? max_len + 1 : sizeof out;

    enum bc_status st = bc_url_normalize(bp, (const char *)data, size, &policy,
                                         out, out_size, &u);
    /* With the cache or without, the same answer. */
    struct bc_url_policy other = policy;
    other.idn_cache = policy.idn_cache != NULL ? NULL : cache;
    enum bc_status st2 = bc_url_normalize(bp, (const char *)data, size, &other,
                                          again, out_size, &v);
    check(st == st2);
    check(st != BC_OK || (v.len == u.len && memcmp(out, again, u.len) == 0));
    if (st != BC_OK)
        return 0;
    check(u.href == out && u.len == strlen(out) && u.len <= max_len);
    for (size_t i = 0; i < u.len; i++)
        check(out[i] > 0x20 && out[i] < 0x7f && out[i] != '#' &&
              out[i] != '\\');
    check(out[u.path.off] == '/' && u.host.len > 0);

    /* Idempotence, with the same parts. */
    st = bc_url_normalize(NULL, out, u.len, &policy, again, sizeof again, &v);
    check(st == BC_OK && v.len == u.len && memcmp(out, again, u.len) == 0);
    check(memcmp(&u.scheme, &v.scheme,
                 offsetof(struct bc_url, host_type) -
                     offsetof(struct bc_url, scheme)) == 0 &&
          u.host_type == v.host_type);

    /* "" against the URL is the URL. */
    st = bc_url_normalize(&u, "", 0, &policy, again, sizeof again, &v);
    check(st == BC_OK && strcmp(again, out) == 0);

    /* The seen-key: no longer than the URL, and a fixed point. */
    size_t kl, kl2;
    check(bc_url_seen_key(&u, &policy, key, sizeof key, &kl) == BC_OK);
    check(kl <= u.len && strlen(key) == kl);
    st = bc_url_normalize(NULL, key, kl, NULL, again, sizeof again, &k);
    check(st == BC_OK);
    check(bc_url_seen_key(&k, &policy, key2, sizeof key2, &kl2) == BC_OK);
    check(kl == kl2 && memcmp(key, key2, kl) == 0);
    return 0;
}
