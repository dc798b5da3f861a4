/*
 * bloomcrawl/robots.h - robots.txt (RFC 9309) rules for one crawler.
 *
 * bc_robots_parse() reads a robots.txt body (any bytes) for ONE crawler
 * user agent and keeps only what applies to it: the rules of every group
 * that names the agent's product token (merged), or else those of the `*`
 * group(s), or else nothing (everything allowed). Sitemap lines are kept
 * too, they belong to no group. Choosing the agent at parse time means a
 * URL check never rescans groups: it walks the selected rules, longest
 * pattern first, and stops at the first match. A crawler has one agent; a
 * tool that asks about several agents parses once per agent (cheap).
 *
 * Paths are compared after the percent-encoding normalization of
 * RFC 9309 section 2.2.2: pass the path and query as the URL normalizer
 * (bloomcrawl/url.h) produces them. Patterns are normalized by the very
 * rule the URL normalizer applies to paths and queries, so a pattern
 * written the way a page links to a path matches that page's canonical
 * path ("Disallow: /a[1]" matches /a%5B1%5D, the canonical form of
 * http://h/a[1]). See bc_robots_allowed() for exactly what is compared.
 *
 * Memory: one allocation per parsed object: a small header, 12 bytes per
 * selected rule, 8 bytes per sitemap, and the rule patterns (normalized,
 * at most 3 times their length in the file) and sitemap URLs. Parsing
 * makes no other allocation.
 *
 * Thread safety: a parsed struct bc_robots is never modified after
 * bc_robots_parse() returns; any number of threads may query it at once.
 */
#ifndef BC_FRONTIER_ROBOTS_H
#define BC_FRONTIER_ROBOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of a body that are parsed; the rest is ignored (RFC 9309 2.5
 * asks for at least 500 kibibytes). When a body is longer, a line cut by
 * the limit is ignored too, so a rule is never read half. */
#define BC_ROBOTS_MAX_BYTES ((size_t)500 * 1024)

/* The parsed rules that apply to one crawler. Opaque, immutable. */
struct bc_robots;

/* Which groups of the file apply to the agent given to bc_robots_parse(). */
enum bc_robots_group {
    BC_ROBOTS_GROUP_NONE,   /* no group names the agent, no `*` group */
    BC_ROBOTS_GROUP_GLOBAL, /* no group names the agent; `*` group(s) */
    BC_ROBOTS_GROUP_AGENT   /* one or more groups name the agent */
};

/*
 * The product token of a user-agent string: its prefix up to the first
 * space, TAB or '/', e.g. 7 for "bcbot-x/1.0 (+url)" ("bcbot-x") and 7
 * for "MJ12bot/v1.4" ("MJ12bot"). A group applies when its user-agent
 * line's token equals the crawler's token, whole and case-insensitively;
 * digits are part of a name, so a group for MJ12bot does not apply to
 * MJ99bot. (RFC 9309 2.2.1 allows only letters, `_` and `-` in a token;
 * Google's parser cuts a group's value at any other character and wants
 * the crawler's name made of those only, which in effect ignores groups
 * such as MJ12bot's. robots.c explains the difference.) An agent that
 * starts with a space or '/' has an empty token and is governed by the
 * `*` group only, as is an agent named "*". A NULL agent gives 0.
 * Cost O(token).
 */
size_t bc_robots_product_token(const char *agent, size_t agent_len);

/*
 * Parse a robots.txt body for one crawler.
 *
 * body, len:  the body as fetched, any bytes (NUL, invalid UTF-8, a UTF-8
 *             BOM, CR, LF or CRLF line ends); body may be NULL when len
 *             is 0 (an empty file: everything allowed). Only the first
 *             BC_ROBOTS_MAX_BYTES are parsed; when len is larger, the
 *             byte after them is read too (does it end the line the
 *             limit cuts?), so body must hold at least
 *             min(len, BC_ROBOTS_MAX_BYTES + 1) bytes.
 * agent:      the crawler's user-agent string or just its product token;
 *             only the token (bc_robots_product_token()) is used.
 * out:        receives the new object, to be freed with bc_robots_free().
 *
 * Content never makes parsing fail: lines that cannot be understood are
 * skipped, as RFC 9309 asks. A few common mistakes are accepted (see
 * robots.c): a missing colon ("Disallow /x"), "useragent", "user agent",
 * and the misspellings "disalow", "dissallow", "dissalow".
 *
 * Returns BC_OK, BC_ERR_INVALID_ARG (out NULL, or body or agent NULL
 * with a non-zero length) or BC_ERR_NOMEM; *out is written only on
 * success. Cost O(len), two passes, one allocation.
 */
enum bc_status bc_robots_parse(const void *body, size_t len, const char *agent,
                               size_t agent_len, struct bc_robots **out);

/* Free a parsed object; NULL is a no-op. */
void bc_robots_free(struct bc_robots *robots);

/*
 * May the crawler fetch this path?
 *
 * path_query, len: the URL's path and query ("/a/b?x=1"), no fragment,
 * as the URL normalizer produces it; an empty or NULL one (whatever len)
 * is read as "/".
 * Percent-escapes in it are compared in canonical form (hex digits
 * uppercase, escapes of unreserved characters decoded, a `%` that starts
 * no escape read as "%25"), as patterns are, so "/%7Ea" and "/~a" are the
 * same path. Other bytes are compared as they are: raw non-ASCII bytes do
 * not match the percent-encoded form that patterns are stored in, which
 * is why the input should come from the URL normalizer.
 *
 * Returns true when no rule matches, when the longest matching pattern
 * is an Allow rule (Allow wins a tie), and always for /robots.txt itself.
 * robots NULL answers true (no robots.txt, no restriction).
 * Cost: O(len) plus, for each rule tried, O(len + pattern length) (a
 * pattern with a literal run over 2048 bytes: O(len * pattern length));
 * never exponential, no allocation, about 4 KiB of stack.
 */
bool bc_robots_allowed(const struct bc_robots *robots, const char *path_query,
                       size_t len);

/* Which groups apply (see enum bc_robots_group). O(1). */
enum bc_robots_group bc_robots_group(const struct bc_robots *robots);

/* Number of Allow/Disallow rules that apply (empty patterns are not
 * kept: they match nothing). O(1). */
size_t bc_robots_rule_count(const struct bc_robots *robots);

/*
 * The Crawl-delay of the applicable groups, in milliseconds (the file
 * gives seconds, fractions allowed: "0.5" is 500). When several lines
 * apply, the largest wins. Very large values saturate at UINT32_MAX ms
 * (about 50 days); capping to something sensible is the caller's policy.
 * Returns false and leaves *ms alone when no valid Crawl-delay applies,
 * robots is NULL or ms is NULL.
 */
bool bc_robots_crawl_delay(const struct bc_robots *robots, uint64_t *ms);

/* Number of Sitemap lines in the file (all groups; in file order). */
size_t bc_robots_sitemap_count(const struct bc_robots *robots);

/*
 * The i-th Sitemap URL as written (surrounding whitespace and a trailing
 * comment removed), NUL-terminated, owned by robots and valid until
 * bc_robots_free(). *len (when len is not NULL) receives its length.
 * Returns NULL, and leaves *len alone, when i >= bc_robots_sitemap_count()
 * (robots NULL: 0).
 */
const char *bc_robots_sitemap(const struct bc_robots *robots, size_t i,
                              size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* BC_FRONTIER_ROBOTS_H */
