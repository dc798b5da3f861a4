/*
 * url.c - resolve an href against its page and normalize it, in one pass.
 *
 * THE PROBLEM
 *
 * A web page is named by many strings. All of these fetch the same page:
 *
 *     HTTP://Example.COM:80/a/./b/../c/%7Efred?x=1#top
 *     http://example.com/a/c/~fred?x=1
 *     http://example.com./a/c/%7efred?x=1
 *
 * A crawler that deduplicates on the raw string fetches that page three
 * times; one that merges too eagerly (lowercasing the path, dropping
 * "www.", sorting every query) merges pages that differ and never fetches
 * some of them. URL normalization picks, for each page, one canonical
 * spelling, using only rules that cannot merge two different pages. It sits
 * ahead of both tiers of the seen-test (docs/DESIGN.md 1): the Bloom filter and
 * the LRU see canonical keys only.
 *
 * RESOLUTION (RFC 3986 section 5.2)
 *
 * An href is a reference: absolute ("https://b.org/x"), network-path
 * ("//b.org/x"), absolute-path ("/x"), relative-path ("x", "../x"), query
 * only ("?q") or empty. The target is built from the reference's parts where
 * it has them and the base's parts otherwise:
 *
 *     reference has        scheme    authority  path                query
 *     scheme + authority   ref       ref        ref                 ref
 *     authority ("//")     base      ref        ref                 ref
 *     path "/..."          base      base       ref                 ref
 *     path "x..."          base      base       merge(base, ref)    ref
 *     no path              base      base       base                ref or base
 *
 * merge() keeps the base path up to its last '/' and appends the reference
 * path; remove_dot_segments() then deletes "." segments and lets ".." delete
 * the segment before it, never above the root: /b/c/./../g -> /b/g. The 42
 * examples of section 5.4 are the test (tests/test_url.c); the only place we
 * follow browsers instead of the strict parser is "http:g", which against an
 * http base is the relative "g" (section 5.2.2 allows it "for backward
 * compatibility"), and the backslash, which browsers read as '/'.
 *
 * NORMALIZATION (RFC 3986 section 6; docs/DESIGN.md 3.1)
 *
 * Section 6.2.2 lists the rules that keep meaning for every URI: case of
 * the scheme and host, uppercase hex in escapes, decoding escapes of
 * unreserved characters (A-Z a-z 0-9 - . _ ~), dot-segment removal.
 * Section 6.2.3 adds the scheme-based ones for http(s): the default port
 * (80, 443) and an empty path are the same as none and "/". On top of those
 * the default policy does what every browser does before sending a request,
 * so it merges only spellings that reach the server identically:
 *
 *   - TAB, CR and LF are removed anywhere, C0 controls and spaces trimmed
 *     at both ends (HTML attribute values carry them);
 *   - non-ASCII hosts become punycode as browsers convert them (UTS #46,
 *     non-transitional, through ICU: see INTERNATIONALIZED HOSTS below);
 *     escapes in a host are decoded first;
 *   - hosts that end in a number are IPv4 addresses in any form a browser
 *     accepts and become dotted decimal (0x7f.1, 0177.0.0.1, 2130706433 ->
 *     127.0.0.1); IPv6 literals take their RFC 5952 form ([2001:db8::1]),
 *     IPv4-mapped ones in hex as browsers write them ([::ffff:c000:201],
 *     not the mixed notation RFC 5952 section 5 suggests);
 *   - bytes that may not appear raw (controls, space, " < > [ \ ] ^ ` { | },
 *     DEL, bytes >= 0x80) are percent-encoded; a '%' that starts no escape is
 *     a literal percent sign, "%25" (the rule is frontier/pct_int.h, which
 *     robots.c applies to robots.txt patterns too);
 *   - userinfo is written as browsers serialize it: the first ':' splits
 *     username from password, a ':' ';' '=' or '@' inside either is
 *     escaped (%3A ...), an empty password loses its ':' and an empty
 *     userinfo its '@' (a:@h is a@h, :@h is h);
 *   - the fragment is dropped: it is never sent to the server;
 *   - one trailing dot of the host is dropped (example.com. is example.com
 *     for every resolver).
 *
 * What stays apart, on purpose: escapes of reserved characters (%2F is not
 * '/', %3D is not '=': decoding them changes how the server splits the
 * path or the query), the case of the path, a trailing '/', "www.", the
 * order of query parameters, "index.html", http versus https. Each can name
 * a different resource on some server.
 *
 * INTERNATIONALIZED HOSTS (UTS #46 as browsers apply it)
 *
 * DNS carries ASCII only, so a Unicode host name is sent as ASCII: each
 * label is mapped (case, width and compatibility forms: BÜCHER and
 * ｂüｃｈｅｒ are bücher, ℡ is tel, the ideographic full stop '。' is a
 * dot), normalized to NFC, checked, and, if still non-ASCII, written in
 * Punycode (RFC 3492) behind "xn--": bücher.de -> xn--bcher-kva.de,
 * i❤.ws -> xn--i-7iq.ws.
 *
 * Two standards say which labels are valid. IDNA2008 (RFC 5890-5893)
 * classifies every code point from its Unicode properties: letters, marks
 * and digits are PVALID, symbols, emoji, uppercase and compatibility
 * forms DISALLOWED, and it maps nothing (it leaves that to applications).
 * UTS #46 (Unicode IDNA Compatibility Processing) defines the mapping and
 * its own table of valid code points, which keeps the symbols and emoji
 * that IDNA2003 allowed and that registries had sold names with: ☃, ♥,
 * 💩 are valid in UTS #46 and DISALLOWED in IDNA2008. Browsers follow the
 * WHATWG URL Standard, whose "domain to ASCII" is UTS #46 ToASCII alone,
 * with these flags:
 *
 *     Transitional_Processing  false  ß ς ZWJ ZWNJ are kept:
 *                                     faß.de -> xn--fa-hia.de, not fass.de
 *     CheckBidi                true   right-to-left labels (RFC 5893)
 *     CheckJoiners             true   ZWJ/ZWNJ only where RFC 5892
 *                                     CONTEXTJ allows (after a virama, ...)
 *     CheckHyphens             false  "-a-" and "ab--c" are accepted
 *     UseSTD3ASCIIRules        false  ASCII beyond letters, digits, '-'
 *                                     is left to the next step
 *     VerifyDnsLength          false  empty or long labels are accepted
 *
 * and then rejects a result that contains a forbidden domain code point
 * (controls, space, % / : ? # @ [ \ ] ^ | < > and DEL): "a％b" maps to
 * "a%b" and fails. A library that adds the IDNA2008 check on top of UTS
 * #46 (libidn2, which this file called before) rejects i❤.ws, a link
 * that every browser follows.
 *
 * This file calls ICU's UTS #46 implementation (what Chromium and WebKit
 * call for this step) with those flags and ignores the error bits of the
 * two checks that are off (hyphens, DNS lengths). The ASCII result then
 * meets the rules every host meets here: one trailing dot dropped, and a
 * DNS host name of letters, digits, '-', '_' and '.', with no empty label,
 * labels of at most 63 bytes, at most 253 in all. Those are stricter than
 * browsers, which accept "a..b", "a!b" and 64-byte labels: names that no
 * resolver looks up as a host; they fail with BC_ERR_URL_HOST (which also
 * covers the forbidden code points), IDNA errors with BC_ERR_URL_IDN.
 *
 * An ASCII host skips all this (lowercasing is its whole mapping), unless
 * a label starts with "xn--": then the punycode is decoded and checked
 * like any other label, so "xn--a" and "xn--zz-" fail as in browsers. The
 * tests compare a table of hosts from both sides (accepted with their
 * ASCII form, and rejected) with the reference implementation of the URL
 * Standard: tests/data/idn/, where the README lists the hosts on which a
 * newer Unicode version answers differently.
 *
 * THE OPT-IN RULES (the seen-key, bc_url_seen_key)
 *
 * Sorting the query, dropping tracking or session parameters, collapsing
 * "//" and dropping userinfo make the key coarser: on most sites they merge
 * only copies of one page, on some they merge different pages (a server may
 * read parameters in order; "//" may be meaningful to it). A crawler that
 * accepts that risk deduplicates on the seen-key and still fetches the fetch
 * URL. The query rules read the query as application/x-www-form-urlencoded:
 * empty pairs ("&&") are dropped, and with sorting "b=" is written "b" (the
 * same pair to a form decoder); the sort is by name and stable, so repeated
 * names keep their order (a=2&a=1 is a list, not a set). It is a bottom-up
 * merge sort of the parameters' spans (sort_params()): O(n log n) for n
 * parameters, on the stack up to 64 and in one malloc above, where the
 * selection sort it replaced was O(n^2) (32,000 parameters: 8 ms at -O2,
 * against 20 to 47 s). This is the only allocation of bc_url_seen_key().
 *
 * THE SINGLE-PASS DESIGN
 *
 * The output is written left to right into the caller's buffer while the
 * href is read left to right; nothing is copied into an intermediate
 * structure and nothing is allocated:
 *
 *     href:  ../d/%7Ex/./y?q=%zz#f        base: http://h/a/b/c
 *              |   |    |   |    |
 *     out:   http://h/a/ -> http://h/a/d/~x/y?q=%25zz
 *            (base prefix and directory are copied, then each segment is
 *             written as it is read; "." and ".." are recognized after
 *             decoding, on the bytes just written, and undone by moving the
 *             write position back to the previous '/')
 *
 * A dot-segment test on the output sees "%2e%2E" as "..", since the escape
 * was decoded while writing. The base is a struct bc_url that an earlier
 * call produced: already canonical, with the offsets of its parts, so
 * resolving a page's links copies its prefix instead of parsing it again.
 * Canonical input means that the output of a call is a fixed point:
 * normalize(normalize(x)) == normalize(x), which the tests and the fuzzer
 * check on millions of inputs.
 *
 * Per byte, one table lookup (url_class, in pct_int.h) says whether the
 * byte is copied as it is in the current component; the rare bytes go to a
 * switch.
 * Hosts are short and take a slower path through a small stack buffer;
 * only a non-ASCII host, or one with an "xn--" label, calls ICU.
 *
 * CONFORMANCE (tests/test_url_conformance.c; data in tests/data/conformance)
 *
 *   RFC 3986 5.4, the 42 examples                42 of 42
 *   crawler-commons url-resolve.csv              22 of 22 (the expected URL
 *                                                without its fragment, hex
 *                                                in uppercase; a file: base
 *                                                is rejected)
 *   crawler-commons weirdToNormalizedUrls.csv    101 of 104 http(s) rows,
 *                                                with the sort and collapse
 *                                                rules where a row needs them
 *   crawler-commons invalidUrls.csv              2 of 2 rejected
 *
 * Where the policy differs from crawler-commons, on purpose: a scheme-less
 * "foo.com/index.html" is a relative reference (RFC 3986 4.2), not
 * http://foo.com/index.html; the sort keeps a pair with an empty name
 * ("=1": a form decoder yields it); other schemes (file:, ftp:) and empty
 * hosts ("http:////") are rejected rather than normalized.
 *
 * REFERENCES
 *
 *   RFC 3986  Uniform Resource Identifier: Generic Syntax (5.2, 5.4, 6)
 *   RFC 9110  HTTP Semantics, 4.2 (http and https URIs, default ports)
 *   RFC 5952  A Recommendation for IPv6 Address Text Representation
 *   UTS #46   Unicode IDNA Compatibility Processing
 *   RFC 5890-5893  IDNA2008 (5892: CONTEXTJ; 5893: the bidi rule)
 *   RFC 3492  Punycode
 *   WHATWG URL Standard (host parsing, domain to ASCII, the IPv4 number
 *             forms, backslash)
 */
#include "bloomcrawl/url.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/uidna.h>

/* The byte classes (url_class), hex helpers and the percent-encoding
 * rule, shared with robots.c. */
#include "pct_int.h"
#include "bc_hex.h"

/* A host is decoded (escapes, IDNA) in a stack buffer of this size; a host
 * that does not fit is rejected (BC_ERR_URL_HOST). Only a host padded with
 * hundreds of code points that UTS #46 ignores (soft hyphens, variation
 * selectors) could still map to a DNS name of at most 253 bytes. */
#define HOST_SCRATCH 1024
/* An href with TAB/CR/LF is copied without them: on the stack up to this
 * size, into one malloc'ed block above it. */
#define CLEAN_SCRATCH 4096
#define DNS_NAME_MAX  253
#define DNS_LABEL_MAX 63

/* The output buffer and how far it may be filled. */
struct writer {
    char *buf;
    size_t pos;
    size_t cap;          /* bytes usable for text: out_size - 1 */
    enum bc_status full; /* what running out of cap means */
};

static bool is_slash(char c)
{
    return c == '/' || c == '\\';
}

static bool put_bytes(struct writer *w, const char *s, size_t n)
{
    if (w->cap - w->pos < n)
        return false;
    memcpy(w->buf + w->pos, s, n);
    w->pos += n;
    return true;
}

static bool put_char(struct writer *w, char c)
{
    if (w->pos >= w->cap)
        return false;
    w->buf[w->pos++] = c;
    return true;
}

static bool put_decimal(struct writer *w, unsigned long v)
{
    char tmp[24];
    size_t n = 0;

    do {
        tmp[sizeof tmp - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return put_bytes(w, tmp + sizeof tmp - n, n);
}

/* What ends a component: the delimiters of copy_component(). */
enum stop {
    STOP_NONE,  /* userinfo: the caller gives exactly its bytes */
    STOP_PATH,  /* '/' '\' '?' '#' */
    STOP_QUERY, /* '#' */
};

static bool is_stop(unsigned char c, enum stop stop)
{
    switch (stop) {
    case STOP_NONE:
        return false;
    case STOP_PATH:
        return c == '/' || c == '\\' || c == '?' || c == '#';
    case STOP_QUERY:
        return c == '#';
    }
    return false;
}

/*
 * Copy one component (userinfo, path segment, query) from p up to e or to
 * its first delimiter: bytes of class `keep` as they are, escapes
 * normalized (rule 9), other bytes percent-encoded (rule 10). Returns the
 * stop position, or NULL when the buffer is full.
 *
 * The common case, a run of bytes that stay as they are, is one scan and
 * one copy; the switch sees only the rare bytes.
 */
static const char *copy_component(struct writer *w, const char *p,
                                  const char *e, unsigned keep, enum stop stop)
{
    char *out = w->buf;
    size_t o = w->pos;
    size_t cap = w->cap;

    while (p < e) {
        /* A run of plain bytes, copied while scanned, as far as both the
         * input and the buffer go. */
        size_t room = cap - o, left = (size_t)(e - p);
        size_t lim = left < room ? left : room, i = 0;
        while (i < lim && (url_class[(unsigned char)p[i]] & keep)) {
            out[o + i] = p[i];
            i++;
        }
        p += i;
        o += i;
        if (p == e)
            break;
        unsigned char c = (unsigned char)*p;
        if (url_class[c] & keep)
            return NULL; /* the buffer is full */
        if (c == '%') {
            /* RFC 3986 6.2.2.2: an escaped unreserved character is that
             * character; other escapes get uppercase hex; a lone '%' is
             * a literal percent sign, %25. */
            bool raw;
            p += pct_escape(p, (size_t)(e - p), &c, &raw);
            if (raw) {
                if (o >= cap)
                    return NULL;
                out[o++] = (char)c;
                continue;
            }
        } else if (is_stop(c, stop)) {
            break;
        } else {
            p++;
        }
        if (cap - o < 3)
            return NULL;
        pct_put(out + o, c);
        o += 3;
    }
    w->pos = o;
    return p;
}

/* Is s..s+n the segment "." or ".."? */
static bool is_dot_segment(const char *s, size_t n)
{
    return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

/*
 * Write the path: the caller has written the root '/' at `root` (or copied
 * a base directory ending in '/') and w->pos is where the next segment
 * starts; p is the first byte of that segment in the href. Segments are
 * written one by one; a segment that reads "." or ".." once written (so
 * after decoding %2e) is removed, ".." with the segment before it, never
 * past the root (RFC 3986 5.2.4). Stops at '?', '#' or e; *pp receives the
 * stop position.
 */
static bool write_path(struct writer *w, size_t root, const char **pp,
                       const char *e)
{
    const char *p = *pp;

    for (;;) {
        size_t seg = w->pos;
        p = copy_component(w, p, e, CL_PATH, STOP_PATH);
        if (p == NULL)
            return false;
        size_t n = w->pos - seg;
        bool at_slash = p < e && is_slash(*p);
        if (is_dot_segment(w->buf + seg, n)) {
            w->pos = seg;
            if (n == 2 && seg - 1 > root) {
                /* Pop the segment before: back to the '/' ending it,
                 * then to just after the '/' starting it. */
                size_t o = seg - 1;
                while (w->buf[o - 1] != '/')
                    o--;
                w->pos = o;
            }
        } else if (at_slash) {
            if (!put_char(w, '/'))
                return false;
        }
        if (!at_slash)
            break;
        p++;
    }
    *pp = p;
    return true;
}

/* Write "?query" from p (at '?') up to '#' or e; an empty query is
 * dropped. Returns false when the buffer is full. */
static bool write_query(struct writer *w, const char **pp, const char *e,
                        struct bc_url_part *query)
{
    const char *p = *pp + 1;
    size_t q = w->pos;

    if (!put_char(w, '?'))
        return false;
    p = copy_component(w, p, e, CL_QUERY, STOP_QUERY);
    if (p == NULL)
        return false;
    if (w->pos == q + 1) {
        w->pos = q; /* rule 11: drop an empty '?' */
    } else {
        query->off = q + 1;
        query->len = w->pos - q - 1;
    }
    *pp = p;
    return true;
}

/* ---- hosts ---- */

/*
 * Parse one part of an IPv4 address the way browsers do: "0x" or "0X"
 * starts hex (digits may follow or not: "0x" is 0), another leading '0'
 * octal, anything else decimal. Values above 2^32 saturate (they fail the
 * range checks anyway). Returns false on an empty part or a bad digit.
 */
static bool ipv4_number(const char *s, size_t n, uint64_t *value)
{
    unsigned radix = 10;
    uint64_t v = 0;

    if (n == 0)
        return false;
    if (n >= 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
        radix = 16;
        s += 2;
        n -= 2;
    } else if (n >= 2 && s[0] == '0') {
        radix = 8;
        s++;
        n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        unsigned d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (radix == 16 && (url_class[c] & CL_HEX))
            d = (unsigned)hex_value(c);
        else
            return false;
        if (d >= radix)
            return false;
        v = v * radix + d;
        if (v > UINT64_C(0xffffffff))
            v = UINT64_C(0x100000000); /* saturate */
    }
    *value = v;
    return true;
}

/*
 * Does the host name end in a number (WHATWG "ends in a number")? Then it
 * is an IPv4 address or nothing: "foo.123" is rejected, as browsers do.
 * The caller has removed one trailing dot.
 */
static bool ends_in_number(const char *s, size_t n)
{
    size_t i = n;
    uint64_t v;

    while (i > 0 && s[i - 1] != '.')
        i--;
    if (i == n)
        return false; /* empty last label */
    bool digits = true;
    for (size_t j = i; j < n; j++)
        if (s[j] < '0' || s[j] > '9')
            digits = false;
    if (digits)
        return true;
    return n - i >= 2 && s[i] == '0' && (s[i + 1] | 0x20) == 'x' &&
           ipv4_number(s + i, n - i, &v);
}

/*
 * Parse an IPv4 host of 1 to 4 parts: a.b.c.d, a.b.c (c is 16 bits),
 * a.b (b is 24 bits), a (32 bits). All parts but the last are at most 255;
 * the last is below 256^(5 - parts).
 */
static bool ipv4_parse(const char *s, size_t n, uint32_t *addr)
{
    uint64_t part[4];
    size_t count = 0, start = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != '.')
            continue;
        if (count == 4)
            return false;
        if (!ipv4_number(s + start, i - start, &part[count]))
            return false;
        count++;
        start = i + 1;
    }
    uint64_t v = 0;
    for (size_t i = 0; i + 1 < count; i++) {
        if (part[i] > 255)
            return false;
        v |= part[i] << (8 * (3 - i));
    }
    if (part[count - 1] >= UINT64_C(1) << (8 * (5 - count)))
        return false;
    *addr = (uint32_t)(v + part[count - 1]);
    return true;
}

/*
 * Parse an IPv6 literal (without brackets) into 8 groups: hex groups of 1 to
 * 4 digits, one "::" standing for one or more zero groups, and optionally
 * a dotted-decimal IPv4 address for the last two groups (decimal parts
 * without leading zeros, as browsers accept).
 */
static bool ipv6_parse(const char *s, size_t n, uint16_t group[8])
{
    const char *p = s, *e = s + n;
    int count = 0, gap = -1;

    if (p == e)
        return false;
    if (*p == ':') {
        if (e - p < 2 || p[1] != ':')
            return false;
        gap = 0;
        p += 2;
    }
    while (p < e) {
        const char *q = p;
        unsigned v = 0;
        while (q < e && q - p < 4 && (url_class[(unsigned char)*q] & CL_HEX))
            v = v * 16 + (unsigned)hex_value((unsigned char)*q++);
        if (q < e && *q == '.') {
            /* Embedded IPv4: the rest is a.b.c.d. */
            unsigned byte[4];
            int parts = 0;
            if (count > 6)
                return false;
            while (parts < 4) {
                unsigned b = 0;
                const char *d = p;
                while (p < e && *p >= '0' && *p <= '9' && p - d < 3)
                    b = b * 10 + (unsigned)(*p++ - '0');
                if (p == d || b > 255 || (p - d > 1 && *d == '0'))
                    return false;
                byte[parts++] = b;
                if (parts < 4) {
                    if (p == e || *p != '.')
                        return false;
                    p++;
                }
            }
            if (p != e)
                return false;
            group[count++] = (uint16_t)(byte[0] << 8 | byte[1]);
            group[count++] = (uint16_t)(byte[2] << 8 | byte[3]);
            break;
        }
        if (q == p || count == 8)
            return false;
        group[count++] = (uint16_t)v;
        p = q;
        if (p == e)
            break;
        if (*p != ':')
            return false;
        p++;
        if (p < e && *p == ':') {
            if (gap >= 0)
                return false;
            gap = count;
            p++;
        } else if (p == e) {
            return false; /* a trailing single ':' */
        }
    }
    if (gap >= 0) {
        if (count > 7)
            return false;
        int tail = count - gap;
        memmove(group + 8 - tail, group + gap, (size_t)tail * sizeof *group);
        for (int i = gap; i < 8 - tail; i++)
            group[i] = 0;
    } else if (count != 8) {
        return false;
    }
    return true;
}

/* Write [groups] in RFC 5952 form: lowercase hex without leading zeros, the
 * longest run of two or more zero groups (the first of equals) as "::". */
static bool write_ipv6(struct writer *w, const uint16_t group[8])
{
    int best = -1, best_len = 1;
    char tmp[48];
    size_t n = 0;

    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && group[j] == 0)
            j++;
        if (j - i > best_len) {
            best = i;
            best_len = j - i;
        }
        i = j > i ? j : i + 1;
    }
    tmp[n++] = '[';
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            tmp[n++] = ':';
            if (i == 0)
                tmp[n++] = ':';
            i += best_len - 1;
            continue;
        }
        unsigned g = group[i];
        bool lead = true;
        for (int shift = 12; shift >= 0; shift -= 4) {
            unsigned d = (g >> shift) & 15;
            if (d == 0 && lead && shift > 0)
                continue;
            lead = false;
            tmp[n++] = bc_hex_lower[d];
        }
        if (i < 7)
            tmp[n++] = ':';
    }
    tmp[n++] = ']';
    return put_bytes(w, tmp, n);
}

/*
 * Does a label of the host s..s+n start with "xn--", in any case? Such an
 * ASCII host still goes through UTS #46, which decodes and checks the
 * punycode: browsers reject "xn--a" and "xn--zz-".
 */
static bool has_ace_label(const char *s, size_t n)
{
    for (size_t i = 0; i + 4 <= n; i++)
        if ((i == 0 || s[i - 1] == '.') && (s[i] | 0x20) == 'x' &&
            (s[i + 1] | 0x20) == 'n' && s[i + 2] == '-' && s[i + 3] == '-')
            return true;
    return false;
}

/*
 * Write the host name that starts at s, in one pass: ASCII letters are
 * lowercased, digits, '-', '_' and '.' copied, up to ':' or e (*end
 * receives where it stopped). Then one trailing dot goes (rule 12); a host
 * that ends in a number is an IPv4 address and is rewritten in dotted
 * decimal; anything else must be a DNS name (no empty label, labels of at
 * most 63 bytes, at most 253 bytes in all).
 *
 * A '%' or a non-ASCII byte, or a label that starts with "xn--", stops the
 * pass with *slow set (the caller decodes and converts the host, then
 * calls again with slow == NULL: then '%' and non-ASCII bytes are errors
 * and "xn--" labels were checked); any other byte is an error.
 */
static enum bc_status write_host_name(struct writer *w, const char *s,
                                      const char *e, const char **end,
                                      bool *slow, struct bc_url *u)
{
    char *out = w->buf + w->pos;
    size_t room = w->cap - w->pos, left = (size_t)(e - s);
    size_t lim = left < room ? left : room, n = 0;
    const char *p = s;

    /* Copy and lowercase: A-Z has CL_UPPER (0x40), and (0x40 >> 1) is the
     * 0x20 that makes it a-z. */
    for (; n < lim; n++) {
        unsigned c = (unsigned char)s[n];
        unsigned cls = url_class[c];
        if (!(cls & (CL_HOST | CL_UPPER)))
            break;
        out[n] = (char)(c | ((cls & CL_UPPER) >> 1));
    }
    p = s + n;
    if (p < e && *p != ':') {
        unsigned c = (unsigned char)*p;
        if (n == room && (url_class[c] & (CL_HOST | CL_UPPER)))
            return w->full;
        if ((c == '%' || c >= 0x80) && slow != NULL) {
            *slow = true;
            return BC_OK;
        }
        return BC_ERR_URL_HOST;
    }
    if (slow != NULL && has_ace_label(out, n)) {
        *slow = true;
        return BC_OK;
    }
    *end = p;
    if (n > 0 && out[n - 1] == '.')
        n--; /* rule 12 */
    if (n == 0)
        return BC_ERR_URL_HOST;
    u->host.off = w->pos;
    if (ends_in_number(out, n)) {
        uint32_t a;
        if (!ipv4_parse(out, n, &a))
            return BC_ERR_URL_IPV4;
        for (int i = 3; i >= 0; i--) {
            if (!put_decimal(w, (a >> (8 * i)) & 255))
                return w->full;
            if (i > 0 && !put_char(w, '.'))
                return w->full;
        }
        u->host.len = w->pos - u->host.off;
        u->host_type = BC_URL_HOST_IPV4;
        return BC_OK;
    }
    /* A DNS name: no empty label ("a..b", ".a", and "a.." which is "a."
     * after rule 12), labels of at most 63 bytes, 253 in all. */
    if (n > DNS_NAME_MAX || out[n - 1] == '.')
        return BC_ERR_URL_HOST;
    size_t label = 0;
    for (size_t i = 0; i < n; i++) {
        if (out[i] != '.') {
            if (++label > DNS_LABEL_MAX)
                return BC_ERR_URL_HOST;
        } else if (label == 0) {
            return BC_ERR_URL_HOST;
        } else {
            label = 0;
        }
    }
    u->host.len = n;
    u->host_type = BC_URL_HOST_NAME;
    w->pos += n;
    return BC_OK;
}

/*
 * UTS #46 as the URL Standard's "domain to ASCII" runs it: non-transitional
 * (the deviation characters stay), CheckBidi and CheckJoiners on,
 * UseSTD3ASCIIRules off (no UIDNA_USE_STD3_RULES). ICU always checks
 * hyphens and DNS lengths; CheckHyphens and VerifyDnsLength are off for
 * browsers, so those error bits are ignored here (the DNS lengths are
 * checked afterwards by write_host_name(), on the ASCII result).
 */
#define IDNA_OPTIONS                                                           \
    (UIDNA_NONTRANSITIONAL_TO_ASCII | UIDNA_CHECK_BIDI | UIDNA_CHECK_CONTEXTJ)
#define IDNA_IGNORED_ERRORS                                                    \
    ((uint32_t)(UIDNA_ERROR_LEADING_HYPHEN | UIDNA_ERROR_TRAILING_HYPHEN |     \
                UIDNA_ERROR_HYPHEN_3_4 | UIDNA_ERROR_EMPTY_LABEL |             \
                UIDNA_ERROR_LABEL_TOO_LONG |                                   \
                UIDNA_ERROR_DOMAIN_NAME_TOO_LONG))

/* Open ICU's UTS #46 handle. ICU allocates it (and, at the first open in
 * the process, loads its normalization data). */
static enum bc_status idna_open(UIDNA **out)
{
    UErrorCode err = U_ZERO_ERROR;
    UIDNA *idna = uidna_openUTS46(IDNA_OPTIONS, &err);

    if (U_FAILURE(err))
        return err == U_MEMORY_ALLOCATION_ERROR ? BC_ERR_NOMEM : BC_ERR_URL_IDN;
    *out = idna;
    return BC_OK;
}

/*
 * ToASCII of the UTF-8 host in (len bytes, 0 < len < HOST_SCRATCH) into
 * ascii (DNS_NAME_MAX + 2 bytes, NUL-terminated on success), *ascii_len
 * its length. ICU maps, normalizes, checks and encodes in one call; it
 * decodes invalid UTF-8 as U+FFFD, which is disallowed.
 *
 * ICU allocates as soon as a label is not ASCII (UTF-16 copies of the
 * host), and reports a failed allocation in two ways:
 * U_MEMORY_ALLOCATION_ERROR, or U_ILLEGAL_ARGUMENT_ERROR when the string
 * it could not allocate is then passed on as an argument (a "bogus"
 * UnicodeString). Our arguments are always legal (a non-NULL input of a
 * known length, a separate output of a fixed capacity), so both are
 * BC_ERR_NOMEM; tests/test_url_idn.c fails each of ICU's allocations in
 * turn to check it. A result longer than a DNS name with a trailing dot
 * (253 + 1 bytes) does not fit: BC_ERR_URL_HOST, after the IDNA errors,
 * which take precedence.
 */
static enum bc_status idna_to_ascii(const UIDNA *idna, const char *in,
                                    size_t len, char *ascii, size_t *ascii_len)
{
    UErrorCode err = U_ZERO_ERROR;
    UIDNAInfo info = UIDNA_INFO_INITIALIZER;
    int32_t n = uidna_nameToASCII_UTF8(idna, in, (int32_t)len, ascii,
                                       DNS_NAME_MAX + 1, &info, &err);

    if (err == U_MEMORY_ALLOCATION_ERROR || err == U_ILLEGAL_ARGUMENT_ERROR)
        return BC_ERR_NOMEM;
    if (U_FAILURE(err) && err != U_BUFFER_OVERFLOW_ERROR)
        return BC_ERR_URL_IDN;
    if (info.errors & ~IDNA_IGNORED_ERRORS)
        return BC_ERR_URL_IDN;
    if (err == U_BUFFER_OVERFLOW_ERROR)
        return BC_ERR_URL_HOST; /* too long for any DNS name */
    ascii[n] = '\0';
    *ascii_len = (size_t)n;
    return BC_OK;
}

/*
 * The IDN cache: slot = FNV-1a(decoded host) mod size. A slot holds the
 * decoded (UTF-8) host and the answer of UTS #46 for it, success or
 * failure. The cache also keeps the ICU handle, opened at its first
 * conversion, so that a crawl opens it once.
 */
#define IDN_KEY_MAX 255 /* longer decoded hosts are not cached */

struct idn_slot {
    uint64_t hash;
    uint16_t key_len; /* 0: empty slot */
    uint16_t ascii_len;
    int status; /* BC_OK, BC_ERR_URL_IDN or BC_ERR_URL_HOST */
    char key[IDN_KEY_MAX];
    char ascii[DNS_NAME_MAX + 2];
};

struct bc_url_idn_cache {
    size_t mask;
    struct idn_slot *slot;
    UIDNA *idna; /* NULL until the first conversion */
};

enum bc_status bc_url_idn_cache_create(size_t entries,
                                       struct bc_url_idn_cache **out)
{
    struct bc_url_idn_cache *c;
    size_t n = 1;

    if (out == NULL || entries == 0 || entries > ((size_t)1 << 20))
        return BC_ERR_INVALID_ARG;
    while (n < entries)
        n *= 2;
    c = malloc(sizeof *c);
    if (c == NULL)
        return BC_ERR_NOMEM;
    c->slot = calloc(n, sizeof *c->slot);
    if (c->slot == NULL) {
        free(c);
        return BC_ERR_NOMEM;
    }
    c->mask = n - 1;
    c->idna = NULL;
    *out = c;
    return BC_OK;
}

void bc_url_idn_cache_free(struct bc_url_idn_cache *cache)
{
    if (cache == NULL)
        return;
    uidna_close(cache->idna);
    free(cache->slot);
    free(cache);
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/*
 * The decoded host buf (len bytes of UTF-8, NUL-terminated, in a buffer of
 * HOST_SCRATCH bytes) becomes ASCII in buf, as browsers convert it (see
 * "INTERNATIONALIZED HOSTS" above). With a cache, a host met before costs
 * a hash and a compare, and the ICU handle is the cache's; without one, a
 * handle is opened and closed for the call.
 */
static enum bc_status idn_to_ascii(char *buf, size_t *len,
                                   struct bc_url_idn_cache *cache)
{
    struct idn_slot *slot = NULL;
    uint64_t h = 0;

    if (cache != NULL && *len <= IDN_KEY_MAX) {
        h = fnv1a(buf, *len);
        slot = &cache->slot[h & cache->mask];
        if (slot->key_len == *len && slot->hash == h &&
            memcmp(slot->key, buf, *len) == 0) {
            if (slot->status != BC_OK)
                return (enum bc_status)slot->status;
            memcpy(buf, slot->ascii, slot->ascii_len);
            buf[slot->ascii_len] = '\0';
            *len = slot->ascii_len;
            return BC_OK;
        }
    }

    char ascii[DNS_NAME_MAX + 2];
    size_t n = 0;
    enum bc_status st;
    if (cache != NULL) {
        if (cache->idna == NULL) {
            st = idna_open(&cache->idna);
            if (st != BC_OK)
                return st;
        }
        st = idna_to_ascii(cache->idna, buf, *len, ascii, &n);
    } else {
        UIDNA *idna;
        st = idna_open(&idna);
        if (st != BC_OK)
            return st;
        st = idna_to_ascii(idna, buf, *len, ascii, &n);
        uidna_close(idna);
    }
    if (st == BC_ERR_NOMEM)
        return st; /* not cached: it may work next time */
    if (slot != NULL) {
        memcpy(slot->key, buf, *len);
        slot->key_len = (uint16_t)*len;
        slot->hash = h;
        slot->status = (int)st;
        slot->ascii_len = (uint16_t)n;
        if (st == BC_OK)
            memcpy(slot->ascii, ascii, n);
    }
    if (st == BC_OK) {
        memcpy(buf, ascii, n + 1);
        *len = n;
    }
    return st;
}

/*
 * Write the host that starts at s and ends at ':' or e; *end receives
 * where it ended. Brackets: IPv6. Escapes, non-ASCII bytes or an "xn--"
 * label: decode the escapes (rule 9: example%2Ecom is example.com),
 * convert with UTS #46 (ICU) when non-ASCII or with an "xn--" label (rule
 * 4), then write as a plain name.
 */
static enum bc_status write_host(struct writer *w, const char *s, const char *e,
                                 const char **end,
                                 struct bc_url_idn_cache *cache,
                                 struct bc_url *u)
{
    if (s < e && *s == '[') {
        uint16_t group[8];
        const char *q = s;
        while (q < e && *q != ']')
            q++;
        if (q == e || (q + 1 < e && q[1] != ':') ||
            !ipv6_parse(s + 1, (size_t)(q - s - 1), group))
            return BC_ERR_URL_IPV6;
        *end = q + 1;
        u->host.off = w->pos;
        if (!write_ipv6(w, group))
            return w->full;
        u->host.len = w->pos - u->host.off;
        u->host_type = BC_URL_HOST_IPV6;
        return BC_OK;
    }

    bool slow = false;
    enum bc_status st = write_host_name(w, s, e, end, &slow, u);
    if (!slow)
        return st;

    const char *q = s;
    while (q < e && *q != ':')
        q++;
    *end = q;
    char buf[HOST_SCRATCH];
    size_t len = 0;
    bool ascii = true;
    for (const char *p = s; p < q; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '%' && q - p >= 3 &&
            (url_class[(unsigned char)p[1]] & CL_HEX) &&
            (url_class[(unsigned char)p[2]] & CL_HEX)) {
            c = (unsigned char)(hex_value((unsigned char)p[1]) * 16 +
                                hex_value((unsigned char)p[2]));
            p += 2;
        }
        if (c == 0 || len + 1 >= sizeof buf)
            return BC_ERR_URL_HOST;
        if (c >= 0x80)
            ascii = false;
        buf[len++] = (char)c;
    }
    buf[len] = '\0';
    if (!ascii || has_ace_label(buf, len)) {
        st = idn_to_ascii(buf, &len, cache);
        if (st != BC_OK)
            return st;
    }
    const char *stop;
    st = write_host_name(w, buf, buf + len, &stop, NULL, u);
    if (st == BC_OK && stop != buf + len)
        return BC_ERR_URL_HOST; /* a decoded ':' */
    return st;
}

/*
 * Write the userinfo s..at (at is the '@' that ends it) as the WHATWG URL
 * Standard serializes it: the first ':' splits it into a username and a
 * password, each written with the userinfo rule of pct_int.h (so a ':',
 * '@', ';' or '=' inside them is %3A, %40, %3B, %3D); ":password" only
 * when the password is not empty, and "@" only when one of the two is not.
 * So "a:@h" is "a@h", ":@h" is "h" and "a:b:c@h" is "a:b%3Ac@h", as in
 * browsers. u->userinfo receives the part (len 0: none).
 */
static bool write_userinfo(struct writer *w, const char *s, const char *at,
                           struct bc_url *u)
{
    const char *colon = memchr(s, ':', (size_t)(at - s));
    const char *user_end = colon != NULL ? colon : at;
    bool password = colon != NULL && colon + 1 < at;
    size_t start = w->pos;

    u->userinfo.off = u->userinfo.len = 0;
    if (user_end == s && !password)
        return true; /* nothing: "@", ":@" */
    if (copy_component(w, s, user_end, CL_USER, STOP_NONE) == NULL)
        return false;
    if (password) {
        if (!put_char(w, ':') ||
            copy_component(w, colon + 1, at, CL_USER, STOP_NONE) == NULL)
            return false;
    }
    u->userinfo.off = start;
    u->userinfo.len = w->pos - start;
    return put_char(w, '@');
}

/*
 * Write "userinfo@host:port" from the authority s..e (the bytes between the
 * slashes and the first '/', '\', '?' or '#'); at is its last '@' or NULL.
 * The last '@' ends the userinfo (earlier ones are data, written %40), which
 * write_userinfo() puts in canonical form. The port is decimal digits only;
 * an empty or default port is dropped.
 */
static enum bc_status write_authority(struct writer *w, const char *s,
                                      const char *e, const char *at,
                                      struct bc_url_idn_cache *cache,
                                      struct bc_url *u)
{
    u->userinfo.off = u->userinfo.len = 0;
    if (at != NULL) {
        if (!write_userinfo(w, s, at, u))
            return w->full;
        s = at + 1;
    }

    const char *host_end;
    enum bc_status st = write_host(w, s, e, &host_end, cache, u);
    if (st != BC_OK)
        return st;

    unsigned long port = u->https ? 443 : 80;
    u->port.off = u->port.len = 0;
    if (host_end < e) { /* at ':' */
        const char *d = host_end + 1;
        if (d < e) {
            port = 0;
            for (; d < e; d++) {
                if (*d < '0' || *d > '9')
                    return BC_ERR_URL_PORT;
                port = port * 10 + (unsigned long)(*d - '0');
                if (port > 65535)
                    return BC_ERR_URL_PORT;
            }
        }
    }
    u->port_number = (uint16_t)port;
    if (port != (u->https ? 443u : 80u)) {
        if (!put_char(w, ':'))
            return w->full;
        u->port.off = w->pos;
        if (!put_decimal(w, port))
            return w->full;
        u->port.len = w->pos - u->port.off;
    }
    return BC_OK;
}

/* The scheme of s..e, if it has one: 1 http, 2 https, -1 another scheme,
 * 0 none (no "alpha *(alnum / + - .) :" prefix). *rest receives the byte
 * after ':'. */
static int parse_scheme(const char *s, const char *e, const char **rest)
{
    const char *p = s;

    if (p == e || ((unsigned char)*p | 0x20) < 'a' ||
        ((unsigned char)*p | 0x20) > 'z')
        return 0; /* a scheme starts with a letter */
    while (p < e && (url_class[(unsigned char)*p] & CL_SCHEME))
        p++;
    if (p == e || *p != ':')
        return 0;
    *rest = p + 1;
    size_t n = (size_t)(p - s);
    if (n == 4 && (s[0] | 0x20) == 'h' && (s[1] | 0x20) == 't' &&
        (s[2] | 0x20) == 't' && (s[3] | 0x20) == 'p')
        return 1;
    if (n == 5 && (s[0] | 0x20) == 'h' && (s[1] | 0x20) == 't' &&
        (s[2] | 0x20) == 't' && (s[3] | 0x20) == 'p' && (s[4] | 0x20) == 's')
        return 2;
    return -1;
}

/* Copy base's scheme, userinfo, host and port (the prefix before its path)
 * and the parts describing them. */
static bool copy_base_prefix(struct writer *w, const struct bc_url *base,
                             struct bc_url *u)
{
    if (!put_bytes(w, base->href, base->path.off))
        return false;
    u->scheme = base->scheme;
    u->userinfo = base->userinfo;
    u->host = base->host;
    u->port = base->port;
    u->port_number = base->port_number;
    u->https = base->https;
    u->host_type = base->host_type;
    return true;
}

/*
 * How the cleaned href s..e starts: its scheme (parse_scheme's answer in
 * *scheme) and whether it is relative to base (*relative). *p receives
 * where the rest begins: after the scheme's ':', or s.
 */
static enum bc_status classify_href(const struct bc_url *base, const char *s,
                                    const char *e, int *scheme, bool *relative,
                                    const char **p)
{
    const char *rest = NULL;

    *p = s;
    *scheme = parse_scheme(s, e, &rest);
    if (*scheme < 0)
        return BC_ERR_URL_SCHEME;
    if (*scheme > 0) {
        *p = rest;
        /* "http:g" against an http base is relative (RFC 3986 5.2.2,
         * browsers); "http:g" elsewhere has the authority "g". */
        *relative = base != NULL && base->https == (*scheme == 2) &&
                    !(e - rest >= 2 && is_slash(rest[0]) && is_slash(rest[1]));
        return BC_OK;
    }
    if (s == e && base == NULL)
        return BC_ERR_URL_EMPTY;
    if (base == NULL)
        return BC_ERR_URL_NO_BASE;
    *relative = !(e - s >= 2 && is_slash(s[0]) && is_slash(s[1]));
    return BC_OK;
}

/*
 * An href with an authority of its own ("http://h/x", "//h/x"), whose
 * slashes begin at *p: write the scheme (the href's, or the base's for
 * "//h"), the authority and the path; *p is left after the path, *root
 * receives the offset of the path's '/'.
 */
static enum bc_status write_absolute(const struct bc_url *base, int scheme,
                                     const char **p, const char *e,
                                     struct bc_url_idn_cache *cache,
                                     struct writer *w, struct bc_url *u,
                                     size_t *root)
{
    const char *q = *p;

    u->https = scheme > 0 ? scheme == 2 : base->https;
    if (!put_bytes(w, u->https ? "https://" : "http://", u->https ? 8 : 7))
        return w->full;
    u->scheme.off = 0;
    u->scheme.len = u->https ? 5 : 4;
    /* Browsers skip any number of slashes here. */
    while (q < e && is_slash(*q))
        q++;
    /* The authority ends at '/', '\', '?' or '#'; note its last '@' on
     * the way. */
    const char *a = q, *at = NULL;
    for (;;) {
        while (q < e && !(url_class[(unsigned char)*q] & CL_AUTH))
            q++;
        if (q < e && *q == '@') {
            at = q++;
            continue;
        }
        break;
    }
    enum bc_status st = write_authority(w, a, q, at, cache, u);
    if (st != BC_OK)
        return st;
    *root = w->pos;
    if (!put_char(w, '/'))
        return w->full;
    if (q < e && is_slash(*q))
        q++;
    *p = q;
    if (!write_path(w, *root, p, e))
        return w->full;
    return BC_OK;
}

/*
 * An href relative to base (its scheme, if any, already read): write
 * the base's scheme and authority, then the path: the href's absolute
 * path, the base's path (and query, unless the href has one) when the
 * href has none, or the href's path merged with the base's directory.
 * *p is left after the href's path, *root receives the offset of the
 * path's '/'. False when w is full.
 */
static bool write_relative(const struct bc_url *base, const char **p,
                           const char *e, struct writer *w, struct bc_url *u,
                           size_t *root)
{
    const char *q = *p;

    if (!copy_base_prefix(w, base, u))
        return false;
    if (q < e && is_slash(*q)) {
        /* Absolute path. */
        *root = w->pos;
        (*p)++;
        return put_char(w, '/') && write_path(w, *root, p, e);
    }
    *root = base->path.off;
    if (q == e || *q == '?' || *q == '#') {
        /* No path: the base's path, and its query unless the href has
         * one. */
        if (!put_bytes(w, base->href + base->path.off, base->path.len))
            return false;
        if ((q == e || *q == '#') && base->query.len > 0) {
            u->query.off = w->pos + 1;
            u->query.len = base->query.len;
            if (!put_bytes(w, base->href + base->query.off - 1,
                           base->query.len + 1))
                return false;
        }
        return true;
    }
    /* Relative path: merge with the base's directory. */
    size_t dir = base->path.len;
    while (base->href[base->path.off + dir - 1] != '/')
        dir--;
    return put_bytes(w, base->href + base->path.off, dir) &&
           write_path(w, *root, p, e);
}

/*
 * Resolve and normalize the cleaned href s..e (trimmed, no TAB/CR/LF)
 * against base (may be NULL) into w; fill u.
 */
static enum bc_status resolve(const struct bc_url *base, const char *s,
                              const char *e, struct bc_url_idn_cache *cache,
                              struct writer *w, struct bc_url *u)
{
    const char *p;
    size_t root;
    int scheme;
    bool relative;

    u->query.off = u->query.len = 0;
    enum bc_status st = classify_href(base, s, e, &scheme, &relative, &p);
    if (st != BC_OK)
        return st;
    if (!relative) {
        st = write_absolute(base, scheme, &p, e, cache, w, u, &root);
        if (st != BC_OK)
            return st;
    } else if (!write_relative(base, &p, e, w, u, &root)) {
        return w->full;
    }
    u->path.off = root;
    u->path.len = (u->query.len > 0 ? u->query.off - 1 : w->pos) - root;
    if (p < e && *p == '?') {
        if (!write_query(w, &p, e, &u->query))
            return w->full;
    }
    /* Rule 11: whatever follows is the fragment; it is dropped. */
    return BC_OK;
}

/*
 * Does s..e contain TAB, LF or CR? Eight bytes at a time first: for a
 * 64-bit word x, (x - 0x0e0e...0e) & ~x & 0x8080...80 is non-zero exactly
 * when some byte of x is below 0x0e (a byte >= 0x0e neither borrows nor,
 * if it is >= 0x80, passes the ~x mask). Almost every href has no byte
 * below 0x0e; a word that has one is looked at byte by byte.
 */
static bool has_tab_or_newline(const char *s, const char *e)
{
    const uint64_t ones = UINT64_C(0x0101010101010101);
    const uint64_t highs = UINT64_C(0x8080808080808080);

    while (e - s >= 8) {
        uint64_t x;
        memcpy(&x, s, sizeof x);
        if (((x - ones * 0x0e) & ~x & highs) != 0)
            break;
        s += 8;
    }
    for (; s < e; s++)
        if (pct_is_removed((unsigned char)*s))
            return true;
    return false;
}

enum bc_status bc_url_normalize(const struct bc_url *base, const char *href,
                                size_t href_len,
                                const struct bc_url_policy *policy, char *out,
                                size_t out_size, struct bc_url *url)
{
    size_t max_len = policy != NULL && policy->max_len != 0
                         ? policy->max_len
                         : BC_URL_MAX_LEN_DEFAULT;
    char stack_copy[CLEAN_SCRATCH];
    char *heap_copy = NULL;
    struct bc_url u;

    if ((href == NULL && href_len != 0) || out == NULL || out_size == 0 ||
        url == NULL ||
        (policy != NULL && policy->strip_params == NULL &&
         policy->strip_params_count > 0))
        return BC_ERR_INVALID_ARG;
    if (href == NULL)
        href = "";

    /* Rule 1: trim C0 controls and spaces at both ends... */
    const char *s = href, *e = href + href_len;
    while (s < e && (unsigned char)*s <= 0x20)
        s++;
    while (e > s && (unsigned char)e[-1] <= 0x20)
        e--;
    /* ...and remove TAB, CR and LF everywhere (rare: copy without them). */
    if (has_tab_or_newline(s, e)) {
        char *copy = stack_copy;
        if ((size_t)(e - s) > sizeof stack_copy) {
            heap_copy = malloc((size_t)(e - s));
            if (heap_copy == NULL)
                return BC_ERR_NOMEM;
            copy = heap_copy;
        }
        size_t n = 0;
        for (const char *q = s; q < e; q++)
            if (!pct_is_removed((unsigned char)*q))
                copy[n++] = *q;
        s = copy;
        e = copy + n;
    }

    struct writer w = {out, 0, out_size - 1,
                       out_size - 1 >= max_len ? BC_ERR_URL_TOO_LONG
                                               : BC_ERR_URL_BUFFER};
    enum bc_status st =
        resolve(base, s, e, policy != NULL ? policy->idn_cache : NULL, &w, &u);
    if (heap_copy != NULL)
        free(heap_copy);
    if (st != BC_OK)
        return st;
    if (w.pos > max_len)
        return BC_ERR_URL_TOO_LONG;
    out[w.pos] = '\0';
    u.href = out;
    u.len = w.pos;
    *url = u;
    return BC_OK;
}

/* ---- the seen-key ---- */

static bool ci_equal(const char *a, size_t n, const char *b, size_t m)
{
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (url_class[x] & CL_UPPER)
            x |= 0x20;
        if (url_class[y] & CL_UPPER)
            y |= 0x20;
        if (x != y)
            return false;
    }
    return true;
}

static const char *const session_params[] = {"jsessionid", "phpsessid", "sid",
                                             "sessionid"};

/* Is the parameter name s..s+n one that policy drops? */
static bool param_stripped(const char *s, size_t n,
                           const struct bc_url_policy *policy)
{
    if (policy->rules & BC_URL_STRIP_SESSION_IDS) {
        for (size_t i = 0; i < sizeof session_params / sizeof *session_params;
             i++)
            if (ci_equal(s, n, session_params[i], strlen(session_params[i])))
                return true;
    }
    for (size_t i = 0; i < policy->strip_params_count; i++) {
        const char *pat = policy->strip_params[i];
        size_t m;
        if (pat == NULL)
            continue;
        m = strlen(pat);
        if (m > 0 && pat[m - 1] == '*') {
            if (n >= m - 1 && ci_equal(s, m - 1, pat, m - 1))
                return true;
        } else if (ci_equal(s, n, pat, m)) {
            return true;
        }
    }
    return false;
}

/* One query parameter: bytes [off, off + len) of the query, name_len bytes
 * of name before '=' (or all of it). */
struct param {
    size_t off, len, name_len;
};

/* The next parameter at or after *pos in q (n bytes); false at the end. */
static bool next_param(const char *q, size_t n, size_t *pos, struct param *p)
{
    if (*pos > n)
        return false;
    size_t i = *pos;
    while (i < n && q[i] != '&')
        i++;
    p->off = *pos;
    p->len = i - *pos;
    p->name_len = 0;
    while (p->name_len < p->len && q[p->off + p->name_len] != '=')
        p->name_len++;
    *pos = i + 1;
    return true;
}

/* Order of two parameters' names: bytewise, a name before every longer
 * name it is a prefix of ("a" < "ab" < "b" < "ba"). Equal names compare
 * equal: the merge sort below keeps them in query order. */
static int param_cmp(const char *q, const struct param *a,
                     const struct param *b)
{
    size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
    int c = memcmp(q + a->off, q + b->off, n);
    if (c != 0)
        return c;
    return (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

static bool param_kept(const char *q, const struct param *p,
                       const struct bc_url_policy *policy)
{
    /* Empty pairs go; with sorting "=" is an empty pair too (it is
     * written without its '=', like "b=", so it would leave nothing). */
    if (p->len == 0 || (p->len == 1 && (policy->rules & BC_URL_SORT_QUERY) &&
                        q[p->off] == '='))
        return false;
    return !param_stripped(q + p->off, p->name_len, policy);
}

/*
 * Sort a[0..n) by name, stably, with tmp[0..n) as scratch: a bottom-up
 * merge sort, runs of 1, 2, 4, ... merged pairwise, each pass from one
 * array into the other; ties are taken from the left run, which keeps
 * repeated names in query order. ceil(log2 n) passes, each of n moves
 * and fewer than n comparisons: O(n log n). The result ends in a or tmp;
 * the return value says which.
 */
static struct param *sort_params(const char *q, struct param *a,
                                 struct param *tmp, size_t n)
{
    struct param *src = a, *dst = tmp;

    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = mid + width < n ? mid + width : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] =
                    param_cmp(q, &src[j], &src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
        }
        struct param *t = src;
        src = dst;
        dst = t;
    }
    return src;
}

/* Parameters sorted on the stack up to this many; more take one malloc. */
#define SORT_STACK_PARAMS 64

/*
 * Write the parameters of query q (n bytes) that policy keeps, sorted if
 * it says so, as "?a=1&b=2"; nothing when none is kept. Returns BC_OK,
 * BC_ERR_URL_BUFFER when w is full, BC_ERR_NOMEM when the sort of more
 * than SORT_STACK_PARAMS parameters could not allocate.
 */
static enum bc_status write_params(struct writer *w, const char *q, size_t n,
                                   const struct bc_url_policy *policy)
{
    bool sort = (policy->rules & BC_URL_SORT_QUERY) != 0;
    struct param stack[2 * SORT_STACK_PARAMS], *all = stack, *sorted, p;
    size_t count, kept = 0, pos = 0;
    enum bc_status st = BC_OK;

    if (!sort) {
        bool first = true;
        while (next_param(q, n, &pos, &p)) {
            if (!param_kept(q, &p, policy))
                continue;
            if (!put_char(w, first ? '?' : '&') ||
                !put_bytes(w, q + p.off, p.len))
                return BC_ERR_URL_BUFFER;
            first = false;
        }
        return BC_OK;
    }

    /* One parameter per '&', and one more. */
    count = 1;
    for (const char *c = q, *e = q + n;
         (c = memchr(c, '&', (size_t)(e - c))) != NULL; c++)
        count++;
    if (count > SORT_STACK_PARAMS) {
        if (count > SIZE_MAX / (2 * sizeof *all))
            return BC_ERR_NOMEM;
        all = malloc(2 * count * sizeof *all);
        if (all == NULL)
            return BC_ERR_NOMEM;
    }
    while (next_param(q, n, &pos, &p))
        if (param_kept(q, &p, policy))
            all[kept++] = p;
    sorted = sort_params(q, all, all + count, kept);
    for (size_t i = 0; i < kept; i++) {
        size_t len = sorted[i].len;
        if (len == sorted[i].name_len + 1)
            len--; /* "b=" is "b" to a form decoder */
        if (!put_char(w, i == 0 ? '?' : '&') ||
            !put_bytes(w, q + sorted[i].off, len)) {
            st = BC_ERR_URL_BUFFER;
            break;
        }
    }
    if (all != stack)
        free(all);
    return st;
}

enum bc_status bc_url_seen_key(const struct bc_url *url,
                               const struct bc_url_policy *policy, char *out,
                               size_t out_size, size_t *key_len)
{
    static const struct bc_url_policy none = {0, 0, NULL, 0, NULL};

    if (url == NULL || url->href == NULL || out == NULL || out_size == 0 ||
        key_len == NULL)
        return BC_ERR_INVALID_ARG;
    if (policy == NULL)
        policy = &none;
    if (policy->strip_params == NULL && policy->strip_params_count > 0)
        return BC_ERR_INVALID_ARG;

    const char *h = url->href;
    unsigned rules = policy->rules;
    struct writer w = {out, 0, out_size - 1, BC_ERR_URL_BUFFER};

    if (!put_bytes(&w, h, url->scheme.len + 3))
        return BC_ERR_URL_BUFFER;
    if (url->userinfo.len > 0 && !(rules & BC_URL_STRIP_USERINFO)) {
        if (!put_bytes(&w, h + url->userinfo.off, url->userinfo.len + 1))
            return BC_ERR_URL_BUFFER;
    }
    if (!put_bytes(&w, h + url->host.off, url->path.off - url->host.off))
        return BC_ERR_URL_BUFFER;

    /* The path, with "//" collapsed and ";jsessionid=..." dropped (unless
     * that would leave a "." or ".." segment, which the key must not
     * contain: it would not be canonical any more). */
    const char *p = h + url->path.off, *pe = p + url->path.len;
    size_t seg = w.pos + 1;
    if (!(rules & (BC_URL_COLLAPSE_SLASHES | BC_URL_STRIP_SESSION_IDS))) {
        if (!put_bytes(&w, p, url->path.len))
            return BC_ERR_URL_BUFFER;
        p = pe;
    }
    while (p < pe) {
        if (*p == '/') {
            if ((rules & BC_URL_COLLAPSE_SLASHES) && p > h + url->path.off &&
                w.buf[w.pos - 1] == '/') {
                p++;
                continue;
            }
            seg = w.pos + 1;
        } else if (*p == ';' && (rules & BC_URL_STRIP_SESSION_IDS) &&
                   pe - p > 11 && ci_equal(p + 1, 11, "jsessionid=", 11) &&
                   !is_dot_segment(w.buf + seg, w.pos - seg)) {
            p++;
            while (p < pe && *p != '/' && *p != ';')
                p++;
            continue;
        }
        if (!put_char(&w, *p++))
            return BC_ERR_URL_BUFFER;
    }

    if (url->query.len > 0) {
        const char *q = h + url->query.off;
        bool rewrite =
            (rules & (BC_URL_SORT_QUERY | BC_URL_STRIP_SESSION_IDS)) ||
            policy->strip_params_count > 0;
        if (!rewrite) {
            if (!put_bytes(&w, q - 1, url->query.len + 1))
                return BC_ERR_URL_BUFFER;
        } else {
            enum bc_status st = write_params(&w, q, url->query.len, policy);
            if (st != BC_OK)
                return st;
        }
    }
    out[w.pos] = '\0';
    *key_len = w.pos;
    return BC_OK;
}

const char *bc_url_origin(const struct bc_url *url, char *buf, size_t buf_size,
                          size_t *len)
{
    size_t n;

    if (url->userinfo.len == 0) {
        *len = url->path.off;
        return url->href;
    }
    n = url->scheme.len + 3 + (url->path.off - url->host.off);
    if (buf == NULL || buf_size <= n)
        return NULL;
    memcpy(buf, url->href, url->scheme.len + 3);
    memcpy(buf + url->scheme.len + 3, url->href + url->host.off,
           url->path.off - url->host.off);
    buf[n] = '\0';
    *len = n;
    return buf;
}

const char *bc_url_target(const struct bc_url *url, size_t *len)
{
    *len = url->len - url->path.off;
    return url->href + url->path.off;
}
