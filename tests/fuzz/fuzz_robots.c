/*
 * fuzz_robots.c - libFuzzer target for frontier/robots.c.
 *
 * Input: the first byte picks the crawler's user agent, the rest is a
 * robots.txt body. The body is parsed, then paths taken from the input
 * itself are matched (the values of its lines, so patterns meet paths
 * they nearly match, and the whole body as one long path). Beyond "never
 * crash, leak or trip a sanitizer" it checks what must always hold:
 * /robots.txt is allowed, an answer does not change when asked twice,
 * and the accessors stay within what the parser reported.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/robots.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const agents[] = {
    "FooBot",    "foobot/1.0 (+https://example.test/bot)",
    "",          "*",
    "bar-bot_x", "Googlebot",
    "a",         "bloomcrawl/0.1",
};

static void check(const struct bc_robots *r, const char *path, size_t len)
{
    bool a = bc_robots_allowed(r, path, len);
    if (a != bc_robots_allowed(r, path, len))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *agent, *body;
    struct bc_robots *r = NULL;
    size_t n, lines = 0;
    uint64_t ms = 0;

    if (size == 0)
        return 0;
    agent = agents[data[0] % (sizeof(agents) / sizeof(agents[0]))];
    body = (const char *)data + 1;
    n = size - 1;
    if (bc_robots_parse(body, n, agent, strlen(agent), &r) != BC_OK)
        return 0;

    if (!bc_robots_allowed(r, "/robots.txt", 11))
        abort();
    check(r, "", 0);
    check(r, "/", 1);
    check(r, body, n);
    /* Each line's value (after its first ':'), as a path. */
    for (size_t i = 0; i < n && lines < 64; lines++) {
        size_t end = i, v;
        while (end < n && body[end] != '\n' && body[end] != '\r')
            end++;
        for (v = i; v < end && body[v] != ':'; v++)
            ;
        v = v < end ? v + 1 : i;
        while (v < end && body[v] == ' ')
            v++;
        check(r, body + v, end - v);
        check(r, body + i, end - i);
        i = end + 1;
    }

    if (bc_robots_crawl_delay(r, &ms) && ms > UINT32_MAX)
        abort();
    for (size_t i = 0; i < bc_robots_sitemap_count(r); i++) {
        size_t len = 0;
        const char *s = bc_robots_sitemap(r, i, &len);
        if (s == NULL || len == 0 || s[len] != '\0')
            abort();
    }
    if (bc_robots_sitemap(r, bc_robots_sitemap_count(r), NULL) != NULL)
        abort();
    if (bc_robots_group(r) != BC_ROBOTS_GROUP_AGENT &&
        bc_robots_group(r) != BC_ROBOTS_GROUP_GLOBAL &&
        bc_robots_rule_count(r) != 0)
        abort();
    bc_robots_free(r);
    return 0;
}
