/*
 * robots.c - robots.txt, the Robots Exclusion Protocol (RFC 9309).
 *
 * THE PROBLEM
 *
 * A site tells crawlers which of its paths they may fetch in a plain text
 * file at /robots.txt. The format dates from 1994 and was only written
 * down as a standard in 2022 (RFC 9309, "Robots Exclusion Protocol"); in
 * between every crawler read it its own way, so real files are full of
 * mistakes, odd line ends, byte order marks and garbage. A crawler must
 * read them all, never fail on one, and never let one slow it down.
 *
 * THE FORMAT
 *
 *     User-agent: bcbot          <- a group starts with one or more
 *     User-agent: otherbot          user-agent lines ...
 *     Disallow: /private/        <- ... followed by its rules
 *     Allow: /private/public.html
 *     Crawl-delay: 2             <- not in the RFC; widely used
 *
 *     User-agent: *              <- the group for every other crawler
 *     Disallow: /docs*.pdf$      <- `*` any bytes, `$` the end
 *
 *     Sitemap: https://example.com/sitemap.xml   <- belongs to no group
 *
 * Lines are `key: value # comment`; keys are case-insensitive; blank
 * lines mean nothing (they do NOT end a group); a user-agent line that
 * follows a rule starts a new group; rules before the first user-agent
 * line belong to no group and are ignored. Crawl-delay (seconds) is a
 * member of its group like a rule; when several apply, the largest wins.
 *
 * WHICH RULES APPLY (RFC 9309 2.2.1)
 *
 * A crawler's product token is the leading run of letters, `-` and `_`
 * of its user-agent string ("bcbot" in "bcbot/1.0 (+https://...)"). The
 * token is matched case-insensitively against the same token of each
 * user-agent line. The rules of ALL groups that match are merged. If none
 * matches, the rules of the `*` group(s) apply; if there is no `*` group
 * either, everything is allowed. A group that matches but holds no rules
 * still counts: it allows everything to that crawler.
 *
 * LONGEST MATCH (RFC 9309 2.2.2)
 *
 * A rule is `Allow` or `Disallow` and a path pattern. A pattern matches a
 * path when the path starts with it; `*` in a pattern matches any run of
 * bytes (also none) and a `$` at its end means "and the path ends here".
 * Of all the patterns that match, the one with the most bytes decides;
 * when an Allow and a Disallow pattern of that length both match, Allow
 * wins. No matching rule means allowed, and /robots.txt itself is always
 * allowed. Order in the file does not matter:
 *
 *     Disallow: /shop          /shop/cart   -> disallowed (5 bytes)
 *     Allow:    /shop/c*       /shop/cart   -> allowed    (8 bytes wins)
 *     Allow:    /$             /            -> allowed, / only
 *
 * Patterns and paths are compared after the same percent-encoding
 * normalization: bytes that may not appear raw in a URL (non-ASCII,
 * controls, space, " < > ^ ` { | }) are percent-encoded, hex digits are
 * uppercase, and escapes of unreserved characters (A-Z a-z 0-9 - . _ ~)
 * are decoded, since RFC 3986 says they are the same URL. The URL
 * normalizer (url.c) does exactly this to the paths it produces; this
 * file does it to patterns, where `*` and a final `$` are not bytes but
 * operators, which is why it has its own small normalizer. Reserved
 * escapes such as %2F stay escaped: /a%2Fb and /a/b are different paths.
 * The matcher canonicalizes the escapes of the path it is given as well
 * ("/%7ea" is "/~a"), but leaves its raw bytes alone: encoding them is
 * the URL normalizer's job, and Google's cases expect a raw UTF-8 path
 * not to match its encoded pattern.
 *
 * WHY 500 KiB
 *
 * RFC 9309 2.5: crawlers MUST parse at least 500 kibibytes. A limit keeps
 * a hostile or broken server from making us hold and scan megabytes per
 * host; the RFC's floor is far above what almost any real file needs.
 * What lies beyond is ignored, and so is a line that the limit cuts in
 * two (half a rule could disallow far more than the whole one).
 *
 * THE MATCHER AND ITS COST
 *
 * A pattern is literal segments joined by `*`: s0 * s1 * ... * sk, with
 * an implicit trailing `*` unless it ends in `$`. It matches iff s0 is a
 * prefix of the path, each later segment occurs after the previous one,
 * and (with `$`) sk ends the path. Taking the LEFTMOST occurrence of each
 * segment is always right: it leaves the most room for the rest. So one
 * left-to-right pass decides, with no recursion and no backtracking over
 * stars. A naive recursive glob matcher is exponential on patterns like
 * /x*a*a*a*a*a*a*b against /xaaa...a; this one is O(n) there.
 *
 * What is left is the substring search for each segment. Comparing at
 * every start costs O(n * L) for a segment of L bytes: harmless for short
 * segments, but a hostile file of 500 rules like "/x*aaa...a(1000)b"
 * would cost half a second per URL against a 2 KB path of a's. So
 * segments of 8 bytes or more are searched with Knuth-Morris-Pratt, which
 * reads each path byte once. Each search starts where the previous one
 * ended, so one rule costs O(n + m) for a path of n bytes and a pattern
 * of m (the dynamic-programming matchers are O(n * m)). The KMP table is
 * built per search on the stack, which limits it to segments of 2048
 * bytes; a longer segment (only a path longer than it can match it) is
 * searched start by start.
 *
 * The path's percent-escapes are canonicalized while it is read (a cursor
 * yields canonical bytes), so nothing is allocated per check. Rules are
 * kept sorted longest first, Allow before Disallow at equal length: the
 * first rule that matches decides and the rest are never looked at.
 *
 * MEMORY
 *
 * Parsing reads the body twice: the first pass counts the rules that
 * apply to our agent and the bytes their normalized patterns need, the
 * second copies them into one block allocated in between:
 *
 *     +-----------------+----------------------+-------------+---------+
 *     | struct bc_robots| struct rule[nrules]  | span[nsite] | text    |
 *     | counts, delay   | off, len, allow, $   | off, len    | patterns|
 *     +-----------------+----------------------+-------------+---------+
 *
 * 12 bytes per rule, 8 per sitemap, and the pattern bytes (at most 3x the
 * bytes in the file, when every byte must be percent-encoded). Rules of
 * groups for other crawlers are never stored.
 *
 * LENIENCY
 *
 * RFC 9309 asks crawlers to skip what they cannot parse. Beyond that we
 * accept a few mistakes that are common and whose intent is plain (Google
 * accepts them too): a missing colon when the line is exactly two words
 * ("Disallow /tmp"), the keys "useragent" and "user agent", and the
 * misspellings "disalow", "dissallow" and "dissalow". A UTF-8 byte order
 * mark (or a truncated one) at the start of the file is skipped. We do
 * NOT treat "Allow: /dir/index.html" as also allowing "/dir/" (a Google
 * extension that allows more than the file says).
 *
 * REFERENCES
 *
 * M. Koster, G. Illyes, H. Zeller, L. Sassman, "Robots Exclusion
 *   Protocol", RFC 9309, September 2022.
 * T. Berners-Lee, R. Fielding, L. Masinter, "Uniform Resource Identifier
 *   (URI): Generic Syntax", RFC 3986, sections 2.1-2.4 and 6.2.2.
 * google/robotstxt-spec-test: the conformance cases in tests/.
 */
#include "bloomcrawl/robots.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* One Allow/Disallow rule; its pattern lives in the text block. */
struct rule {
    uint32_t off;     /* normalized pattern: text + off */
    uint32_t len;     /* its length, a final `$` not included */
    uint8_t allow;    /* 1 Allow, 0 Disallow */
    uint8_t anchored; /* the pattern ended in `$` */
};

/* A sitemap URL in the text block (NUL-terminated there too). */
struct span {
    uint32_t off;
    uint32_t len;
};

struct bc_robots {
    struct rule *rules; /* sorted: longest first, Allow first on ties */
    struct span *sitemaps;
    char *text;
    size_t nrules;
    size_t nsitemaps;
    uint64_t delay_ms;
    bool has_delay;
    enum bc_robots_group group;
};

/* What the groups of one kind (naming our agent, or `*`) hold. */
struct tally {
    bool present; /* at least one user-agent line of this kind */
    bool has_delay;
    uint64_t delay_ms;
    size_t rules;
    size_t bytes; /* normalized pattern bytes */
};

/* The state of one pass over the body. */
struct scan {
    const char *agent; /* product token */
    size_t agent_len;

    /* Counted in pass 1. */
    struct tally named;  /* groups that name our agent */
    struct tally global; /* `*` groups */
    size_t sitemaps;
    size_t sitemap_bytes; /* including their NULs */

    /* The group being read. */
    bool have_group;   /* a user-agent line was seen */
    bool in_agents;    /* the last group line was a user-agent line */
    bool group_named;  /* the current group names our agent */
    bool group_global; /* the current group is a `*` group */

    /* Pass 2 only: where to copy. */
    struct bc_robots *out; /* NULL in pass 1 */
    bool copy_named;       /* copy the named groups, else the `*` ones */
    size_t text_used;
};

enum directive {
    DIR_UNKNOWN,
    DIR_USER_AGENT,
    DIR_ALLOW,
    DIR_DISALLOW,
    DIR_CRAWL_DELAY,
    DIR_SITEMAP
};

/* Segments of this many bytes or more are searched with KMP, up to
 * KMP_MAX (the failure table is 2 * KMP_MAX bytes of stack). */
#define KMP_MIN 8
#define KMP_MAX 2048

/* Crawl-delay saturates here (milliseconds, about 49.7 days). */
#define DELAY_MAX_MS ((uint64_t)UINT32_MAX)

/* ------------------------------------------------------------------ */
/* Characters                                                          */
/* ------------------------------------------------------------------ */

static bool is_ws(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_token_char(unsigned char c)
{
    return is_alpha(c) || c == '-' || c == '_';
}

static unsigned char to_lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

static unsigned char to_upper(unsigned char c)
{
    return (c >= 'a' && c <= 'z') ? (unsigned char)(c - ('a' - 'A')) : c;
}

static int hex_value(unsigned char c)
{
    if (is_digit(c))
        return c - '0';
    c = to_lower(c);
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* RFC 3986 2.3: escapes of these are decoded before comparing. */
static bool is_unreserved(unsigned char c)
{
    return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' ||
           c == '~';
}

/* Bytes the URL normalizer never leaves raw (docs/DESIGN.md 3.1 rule 10). */
static bool must_encode(unsigned char c)
{
    return c <= 0x20 || c >= 0x7f || c == '"' || c == '<' || c == '>' ||
           c == '^' || c == '`' || c == '{' || c == '|' || c == '}';
}

static const char hex_digits[] = "0123456789ABCDEF";

static bool equal_nocase(const unsigned char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++)
        if (to_lower(a[i]) != (unsigned char)b[i])
            return false;
    return true;
}

size_t bc_robots_product_token(const char *agent, size_t agent_len)
{
    size_t n = 0;
    if (agent == NULL)
        return 0;
    while (n < agent_len && is_token_char((unsigned char)agent[n]))
        n++;
    return n;
}

/* ------------------------------------------------------------------ */
/* Pattern normalization (RFC 9309 2.2.2)                              */
/* ------------------------------------------------------------------ */

/*
 * Normalize the pattern v[0..n) into out (when out is not NULL) and return
 * the normalized length, a final `$` excluded and reported in *anchored.
 * Escapes: hex uppercased, unreserved ones decoded, a `%` not followed by
 * two hex digits becomes "%25". Bytes that must_encode() are escaped.
 * `*` and a `$` that is not last are copied as they are. The result is at
 * most 3 * n bytes.
 */
static size_t normalize_pattern(const unsigned char *v, size_t n, char *out,
                                bool *anchored)
{
    size_t o = 0;

    *anchored = n > 0 && v[n - 1] == '$';
    if (*anchored)
        n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = v[i];
        unsigned char esc[3];
        size_t elen = 0;

        if (c == '%') {
            int hi = i + 2 < n ? hex_value(v[i + 1]) : -1;
            int lo = i + 2 < n ? hex_value(v[i + 2]) : -1;
            if (hi >= 0 && lo >= 0) {
                unsigned char d = (unsigned char)(hi * 16 + lo);
                i += 2;
                if (is_unreserved(d)) {
                    esc[0] = d;
                    elen = 1;
                } else {
                    esc[0] = '%';
                    esc[1] = (unsigned char)hex_digits[hi];
                    esc[2] = (unsigned char)hex_digits[lo];
                    elen = 3;
                }
            } else {
                memcpy(esc, "%25", 3);
                elen = 3;
            }
        } else if (must_encode(c)) {
            esc[0] = '%';
            esc[1] = (unsigned char)hex_digits[c >> 4];
            esc[2] = (unsigned char)hex_digits[c & 15];
            elen = 3;
        } else {
            esc[0] = c;
            elen = 1;
        }
        if (out != NULL)
            memcpy(out + o, esc, elen);
        o += elen;
    }
    return o;
}

/* ------------------------------------------------------------------ */
/* Parsing                                                             */
/* ------------------------------------------------------------------ */

static enum directive directive_of(const unsigned char *k, size_t n)
{
    if (equal_nocase(k, n, "user-agent") || equal_nocase(k, n, "useragent") ||
        equal_nocase(k, n, "user agent"))
        return DIR_USER_AGENT;
    if (equal_nocase(k, n, "allow"))
        return DIR_ALLOW;
    if (equal_nocase(k, n, "disallow") || equal_nocase(k, n, "disalow") ||
        equal_nocase(k, n, "dissallow") || equal_nocase(k, n, "dissalow"))
        return DIR_DISALLOW;
    if (equal_nocase(k, n, "crawl-delay"))
        return DIR_CRAWL_DELAY;
    if (equal_nocase(k, n, "sitemap"))
        return DIR_SITEMAP;
    return DIR_UNKNOWN;
}

/*
 * Crawl-delay value: seconds as digits with an optional fraction ("5",
 * "0.5", "2."), read to the millisecond (further digits are dropped) and
 * saturated at DELAY_MAX_MS. Anything else is invalid.
 */
static bool parse_delay(const unsigned char *v, size_t n, uint64_t *ms)
{
    uint64_t secs = 0, frac = 0, scale = 100;
    size_t i = 0, digits = 0;

    for (; i < n && is_digit(v[i]); i++, digits++) {
        if (secs <= DELAY_MAX_MS)
            secs = secs * 10 + (uint64_t)(v[i] - '0');
    }
    if (i < n && v[i] == '.') {
        for (i++; i < n && is_digit(v[i]); i++, digits++) {
            frac += (uint64_t)(v[i] - '0') * scale;
            scale /= 10;
        }
    }
    if (i != n || digits == 0)
        return false;
    *ms = secs > DELAY_MAX_MS / 1000 ? DELAY_MAX_MS : secs * 1000 + frac;
    if (*ms > DELAY_MAX_MS)
        *ms = DELAY_MAX_MS;
    return true;
}

/*
 * Split a line (comment already removed, trimmed, not empty) into key and
 * value. Normally at the first colon. Without one, accept whitespace as
 * the separator only when the line is exactly two words, so that
 * "Disallow /x" works and prose does not turn into rules.
 */
static bool split_line(const unsigned char *s, size_t n,
                       const unsigned char **key, size_t *klen,
                       const unsigned char **val, size_t *vlen)
{
    const unsigned char *colon = memchr(s, ':', n);
    size_t k, v;

    if (colon != NULL) {
        k = (size_t)(colon - s);
        v = k + 1;
    } else {
        /* The line is trimmed: a word, whitespace, then a last word. */
        for (k = 0; k < n && !is_ws(s[k]); k++)
            ;
        for (v = k; v < n && is_ws(s[v]); v++)
            ;
        if (v == n)
            return false;
        for (size_t i = v; i < n; i++)
            if (is_ws(s[i]))
                return false;
    }
    while (k > 0 && is_ws(s[k - 1]))
        k--;
    while (v < n && is_ws(s[v]))
        v++;
    *key = s;
    *klen = k;
    *val = s + v;
    *vlen = n - v;
    return true;
}

/* Does a user-agent line's value name our agent? Is it `*`? */
static void match_agent(const struct scan *sc, const unsigned char *v, size_t n,
                        bool *named, bool *global)
{
    size_t t = bc_robots_product_token((const char *)v, n);

    *global = n > 0 && v[0] == '*' && (n == 1 || is_ws(v[1]));
    *named = false;
    if (t == 0 || t != sc->agent_len)
        return;
    for (size_t i = 0; i < t; i++)
        if (to_lower(v[i]) != to_lower((unsigned char)sc->agent[i]))
            return;
    *named = true;
}

static void tally_delay(struct tally *t, uint64_t ms)
{
    if (!t->has_delay || ms > t->delay_ms)
        t->delay_ms = ms;
    t->has_delay = true;
}

static void add_rule(struct scan *sc, bool allow, const unsigned char *v,
                     size_t n)
{
    bool anchored;
    size_t len = normalize_pattern(v, n, NULL, &anchored);
    struct bc_robots *r = sc->out;

    if (len == 0 && !anchored)
        return; /* "Disallow:" with no path matches nothing */
    if (r == NULL) {
        if (sc->group_named) {
            sc->named.rules++;
            sc->named.bytes += len;
        }
        if (sc->group_global) {
            sc->global.rules++;
            sc->global.bytes += len;
        }
        return;
    }
    if (!(sc->copy_named ? sc->group_named : sc->group_global))
        return;
    normalize_pattern(v, n, r->text + sc->text_used, &anchored);
    r->rules[r->nrules].off = (uint32_t)sc->text_used;
    r->rules[r->nrules].len = (uint32_t)len;
    r->rules[r->nrules].allow = allow;
    r->rules[r->nrules].anchored = anchored;
    r->nrules++;
    sc->text_used += len;
}

static void add_sitemap(struct scan *sc, const unsigned char *v, size_t n)
{
    struct bc_robots *r = sc->out;

    if (n == 0)
        return;
    if (r == NULL) {
        sc->sitemaps++;
        sc->sitemap_bytes += n + 1;
        return;
    }
    memcpy(r->text + sc->text_used, v, n);
    r->text[sc->text_used + n] = '\0';
    r->sitemaps[r->nsitemaps].off = (uint32_t)sc->text_used;
    r->sitemaps[r->nsitemaps].len = (uint32_t)n;
    r->nsitemaps++;
    sc->text_used += n + 1;
}

static void parse_line(struct scan *sc, const unsigned char *s, size_t n)
{
    const unsigned char *hash = memchr(s, '#', n);
    const unsigned char *key, *val;
    size_t klen, vlen;
    bool named, global;
    uint64_t ms;
    enum directive dir;

    if (hash != NULL)
        n = (size_t)(hash - s);
    while (n > 0 && is_ws(s[n - 1]))
        n--;
    while (n > 0 && is_ws(s[0])) {
        s++;
        n--;
    }
    if (n == 0 || !split_line(s, n, &key, &klen, &val, &vlen))
        return;

    dir = directive_of(key, klen);
    switch (dir) {
    case DIR_USER_AGENT:
        if (!sc->in_agents) { /* a new group starts */
            sc->group_named = sc->group_global = false;
            sc->in_agents = sc->have_group = true;
        }
        match_agent(sc, val, vlen, &named, &global);
        sc->group_named |= named;
        sc->group_global |= global;
        sc->named.present |= named;
        sc->global.present |= global;
        break;
    case DIR_ALLOW:
    case DIR_DISALLOW:
        if (!sc->have_group)
            break; /* rules before any user-agent line: no group */
        sc->in_agents = false;
        add_rule(sc, dir == DIR_ALLOW, val, vlen);
        break;
    case DIR_CRAWL_DELAY:
        if (!sc->have_group)
            break;
        sc->in_agents = false;
        if (sc->out == NULL && parse_delay(val, vlen, &ms)) {
            if (sc->group_named)
                tally_delay(&sc->named, ms);
            if (sc->group_global)
                tally_delay(&sc->global, ms);
        }
        break;
    case DIR_SITEMAP:
        add_sitemap(sc, val, vlen);
        break;
    case DIR_UNKNOWN:
        break;
    }
}

/* Length of a UTF-8 byte order mark, or of its first bytes, at p. */
static size_t bom_length(const unsigned char *p, size_t n)
{
    static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
    size_t i = 0;

    while (i < 3 && i < n && p[i] == bom[i])
        i++;
    return i;
}

/* One pass: every line ends at CR, LF or the end; CR LF gives an empty
 * line, which means nothing. */
static void scan_body(struct scan *sc, const unsigned char *p, size_t n)
{
    size_t i = bom_length(p, n);

    sc->have_group = sc->in_agents = false;
    sc->group_named = sc->group_global = false;
    while (i < n) {
        size_t start = i;
        while (i < n && p[i] != '\n' && p[i] != '\r')
            i++;
        parse_line(sc, p + start, i - start);
        i++; /* the line end, or past the end */
    }
}

/* Sort order: longest pattern first, Allow before Disallow at equal
 * length, so the first rule that matches is the one RFC 9309 picks. */
static int rule_order(const void *a, const void *b)
{
    const struct rule *x = a, *y = b;
    uint64_t px = (uint64_t)x->len + x->anchored;
    uint64_t py = (uint64_t)y->len + y->anchored;

    if (px != py)
        return px > py ? -1 : 1;
    return (int)y->allow - (int)x->allow;
}

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

enum bc_status bc_robots_parse(const void *body, size_t len, const char *agent,
                               size_t agent_len, struct bc_robots **out)
{
    const unsigned char *p = body;
    struct scan sc;
    const struct tally *use;
    struct bc_robots *r;
    size_t n = len, nrules, rules_at, sites_at, text_at, total;

    if (out == NULL || (body == NULL && len > 0) ||
        (agent == NULL && agent_len > 0))
        return BC_ERR_INVALID_ARG;

    /* Past the limit, drop the line the limit cuts (unless the first
     * byte beyond it ends that line). */
    if (n > BC_ROBOTS_MAX_BYTES) {
        n = BC_ROBOTS_MAX_BYTES;
        if (p[n] != '\n' && p[n] != '\r') {
            while (n > 0 && p[n - 1] != '\n' && p[n - 1] != '\r')
                n--;
        }
    }

    memset(&sc, 0, sizeof(sc));
    sc.agent = agent;
    sc.agent_len = bc_robots_product_token(agent, agent_len);
    scan_body(&sc, p, n);

    use = sc.named.present ? &sc.named : &sc.global;
    nrules = use->present ? use->rules : 0;

    /* Everything is bounded by the 500 KiB limit (patterns grow at most
     * 3x), so none of these sums can overflow a size_t or a uint32_t. */
    rules_at = align_up(sizeof(*r), alignof(struct rule));
    sites_at =
        align_up(rules_at + nrules * sizeof(struct rule), alignof(struct span));
    text_at = sites_at + sc.sitemaps * sizeof(struct span);
    total = text_at + (use->present ? use->bytes : 0) + sc.sitemap_bytes;

    r = malloc(total);
    if (r == NULL)
        return BC_ERR_NOMEM;
    memset(r, 0, sizeof(*r));
    r->rules = (struct rule *)(void *)((char *)r + rules_at);
    r->sitemaps = (struct span *)(void *)((char *)r + sites_at);
    r->text = (char *)r + text_at;
    r->group = sc.named.present    ? BC_ROBOTS_GROUP_AGENT
               : sc.global.present ? BC_ROBOTS_GROUP_GLOBAL
                                   : BC_ROBOTS_GROUP_NONE;
    r->has_delay = use->present && use->has_delay;
    r->delay_ms = r->has_delay ? use->delay_ms : 0;

    /* Pass 2 copies what pass 1 counted. */
    sc.out = r;
    sc.copy_named = sc.named.present;
    if (use->present || sc.sitemaps > 0)
        scan_body(&sc, p, n);
    if (r->nrules > 1)
        qsort(r->rules, r->nrules, sizeof(*r->rules), rule_order);

    *out = r;
    return BC_OK;
}

void bc_robots_free(struct bc_robots *robots)
{
    free(robots);
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */
/* ------------------------------------------------------------------ */

/*
 * The path is read through a cursor that yields its canonical bytes:
 * "%7e" reads as "~", "%2f" as "%2F", a lone "%" as "%25"; every other
 * byte as itself. A cursor is a raw index, the offset inside the current
 * escape (0..2), and the canonical offset.
 */
struct path {
    const unsigned char *p;
    size_t n;
    size_t clen; /* canonical length */
};

struct cursor {
    size_t i;
    size_t off;
    unsigned sub;
};

/* The canonical unit at raw index i: its bytes in u, returns how many
 * (1 or 3); *adv receives the raw bytes it stands for. */
static unsigned path_unit(const struct path *pa, size_t i, unsigned char u[3],
                          size_t *adv)
{
    const unsigned char *p = pa->p;
    int hi, lo;

    if (p[i] != '%') {
        u[0] = p[i];
        *adv = 1;
        return 1;
    }
    hi = i + 2 < pa->n ? hex_value(p[i + 1]) : -1;
    lo = i + 2 < pa->n ? hex_value(p[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
        memcpy(u, "%25", 3);
        *adv = 1;
        return 3;
    }
    *adv = 3;
    u[0] = (unsigned char)(hi * 16 + lo);
    if (is_unreserved(u[0]))
        return 1;
    u[0] = '%';
    u[1] = to_upper(p[i + 1]);
    u[2] = to_upper(p[i + 2]);
    return 3;
}

/* The canonical byte under c; c must be before the end. */
static unsigned char cursor_byte(const struct path *pa, const struct cursor *c)
{
    unsigned char u[3];
    size_t adv;

    if (pa->p[c->i] != '%')
        return pa->p[c->i];
    path_unit(pa, c->i, u, &adv);
    return u[c->sub];
}

static void cursor_next(const struct path *pa, struct cursor *c)
{
    unsigned char u[3];
    size_t adv;
    unsigned ulen;

    c->off++;
    if (pa->p[c->i] != '%') {
        c->i++;
        return;
    }
    ulen = path_unit(pa, c->i, u, &adv);
    if (++c->sub == ulen) {
        c->sub = 0;
        c->i += adv;
    }
}

static void cursor_skip(const struct path *pa, struct cursor *c, size_t k)
{
    while (k-- > 0)
        cursor_next(pa, c);
}

/* Does the canonical path hold s[0..len) at *c? On success *c moves past
 * it; on failure *c is left anywhere. */
static bool segment_at(const struct path *pa, struct cursor *c, const char *s,
                       size_t len)
{
    if (pa->clen - c->off < len)
        return false;
    for (size_t k = 0; k < len; k++) {
        if (cursor_byte(pa, c) != (unsigned char)s[k])
            return false;
        cursor_next(pa, c);
    }
    return true;
}

/*
 * Find the leftmost occurrence of s[0..len) at or after *c and move *c
 * past it. Short segments are compared at each start (O(n * len), len
 * small); longer ones with Knuth-Morris-Pratt, O(n + len): the failure
 * table (fail[q] is the length of the longest proper border of s[0..q])
 * tells how far the pattern may slide after a mismatch without missing
 * an occurrence, so every path byte is read once. The table lives on the
 * stack, which bounds it to KMP_MAX bytes; a longer segment (no real
 * robots.txt has one) falls back to the start-by-start comparison.
 */
static bool segment_find_kmp(const struct path *pa, struct cursor *c,
                             const char *s, size_t len)
{
    uint16_t fail[KMP_MAX];
    size_t q = 0;

    fail[0] = 0;
    for (size_t i = 1, k = 0; i < len; i++) {
        while (k > 0 && s[i] != s[k])
            k = fail[k - 1];
        if (s[i] == s[k])
            k++;
        fail[i] = (uint16_t)k;
    }
    while (pa->clen - c->off >= len - q) {
        unsigned char b = cursor_byte(pa, c);
        while (q > 0 && (unsigned char)s[q] != b)
            q = fail[q - 1];
        if ((unsigned char)s[q] == b)
            q++;
        cursor_next(pa, c);
        if (q == len)
            return true;
    }
    return false;
}

static bool segment_find(const struct path *pa, struct cursor *c, const char *s,
                         size_t len)
{
    if (len >= KMP_MIN && len <= KMP_MAX)
        return segment_find_kmp(pa, c, s, len);
    while (pa->clen - c->off >= len) {
        struct cursor t = *c;
        if (segment_at(pa, &t, s, len)) {
            *c = t;
            return true;
        }
        cursor_next(pa, c);
    }
    return false;
}

/* Greedy leftmost segment matching; see the top of this file. */
static bool rule_matches(const struct path *pa, const char *pat, size_t len,
                         bool anchored)
{
    struct cursor c = {0, 0, 0};
    const char *star = memchr(pat, '*', len);
    size_t seg = star != NULL ? (size_t)(star - pat) : len;

    if (!segment_at(pa, &c, pat, seg))
        return false;
    if (star == NULL)
        return !anchored || pa->clen == seg;
    pat += seg + 1;
    len -= seg + 1;

    while ((star = memchr(pat, '*', len)) != NULL) {
        seg = (size_t)(star - pat);
        if (!segment_find(pa, &c, pat, seg))
            return false;
        pat += seg + 1;
        len -= seg + 1;
    }
    if (!anchored)
        return segment_find(pa, &c, pat, len);
    if (pa->clen - c.off < len)
        return false;
    cursor_skip(pa, &c, pa->clen - c.off - len);
    return segment_at(pa, &c, pat, len);
}

/* "/robots.txt", alone or with a query. */
static bool is_robots_txt(const struct path *pa)
{
    static const char name[] = "/robots.txt";
    const size_t n = sizeof(name) - 1;
    struct cursor c = {0, 0, 0};

    if (!segment_at(pa, &c, name, n))
        return false;
    return pa->clen == n || cursor_byte(pa, &c) == '?';
}

bool bc_robots_allowed(const struct bc_robots *robots, const char *path_query,
                       size_t len)
{
    struct path pa;
    struct cursor c = {0, 0, 0};

    if (robots == NULL || robots->nrules == 0)
        return true;
    if (path_query == NULL || len == 0) {
        path_query = "/";
        len = 1;
    }
    pa.p = (const unsigned char *)path_query;
    pa.n = len;
    while (c.i < pa.n)
        cursor_next(&pa, &c);
    pa.clen = c.off;

    if (is_robots_txt(&pa))
        return true;
    for (size_t i = 0; i < robots->nrules; i++) {
        const struct rule *r = &robots->rules[i];
        if (rule_matches(&pa, robots->text + r->off, r->len, r->anchored))
            return r->allow;
    }
    return true;
}

enum bc_robots_group bc_robots_group(const struct bc_robots *robots)
{
    return robots != NULL ? robots->group : BC_ROBOTS_GROUP_NONE;
}

size_t bc_robots_rule_count(const struct bc_robots *robots)
{
    return robots != NULL ? robots->nrules : 0;
}

bool bc_robots_crawl_delay(const struct bc_robots *robots, uint64_t *ms)
{
    if (robots == NULL || !robots->has_delay || ms == NULL)
        return false;
    *ms = robots->delay_ms;
    return true;
}

size_t bc_robots_sitemap_count(const struct bc_robots *robots)
{
    return robots != NULL ? robots->nsitemaps : 0;
}

const char *bc_robots_sitemap(const struct bc_robots *robots, size_t i,
                              size_t *len)
{
    const struct span *s;

    if (robots == NULL || i >= robots->nsitemaps)
        return NULL;
    s = &robots->sitemaps[i];
    if (len != NULL)
        *len = s->len;
    return robots->text + s->off;
}
