/*
 * robotstxt - may this user agent fetch this URL, says this robots.txt?
 *
 *     robotstxt ROBOTS_FILE USER_AGENT URL
 *
 * Prints "allowed" (exit 0) or "disallowed" (exit 1), the convention of
 * Google's robots.txt test harness; exit 2 on a usage or file error.
 *
 * URL is an absolute http(s) URL or a path ("/a/b?q"), resolved against
 * http://example.invalid/ in that case. It goes through the URL normalizer
 * (bloomcrawl/url.h), exactly as the crawler's URLs do, and its path and
 * query are what the rules are matched against: so "/%7Ea" and "/~a", or a
 * raw non-ASCII path and its percent-encoded spelling, are the same path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bc_buf.h"
#include "bloomcrawl/robots.h"
#include "bloomcrawl/url.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: robotstxt ROBOTS_FILE USER_AGENT URL\n"
            "\n"
            "Checks URL against the robots.txt rules in ROBOTS_FILE (RFC "
            "9309)\n"
            "for the crawler USER_AGENT (its product token, all before the "
            "first '/'\n"
            "or space, is what groups are matched on, whole and "
            "case-insensitively).\n"
            "URL is an absolute http(s) URL or a path such as /a/b?q.\n"
            "\n"
            "Prints \"allowed\" and exits 0, or \"disallowed\" and exits "
            "1;\n"
            "exits 2 on a usage or file error. At most %zu bytes of the "
            "file\n"
            "are read (RFC 9309 2.5). --version prints the version.\n",
            BC_ROBOTS_MAX_BYTES);
}

/* Read at most max bytes of a file into a new buffer (the caller frees
 * it); -1 with errno set on failure. */
static int read_file(const char *name, size_t max, char **buf, size_t *len)
{
    FILE *f = fopen(name, "rb");
    struct bc_buf b;
    char chunk[4096];
    size_t got;

    if (f == NULL)
        return -1;
    bc_buf_init(&b, max);
    while (b.len < max) {
        size_t want = max - b.len < sizeof(chunk) ? max - b.len : sizeof(chunk);
        got = fread(chunk, 1, want, f);
        if (got == 0)
            break;
        if (bc_buf_append(&b, chunk, got) != BC_OK) {
            errno = ENOMEM;
            goto out_free_buf;
        }
    }
    if (ferror(f))
        goto out_free_buf;
    if (bc_buf_detach(&b, buf, len) != BC_OK) {
        errno = ENOMEM;
        goto out_free_buf;
    }
    fclose(f);
    return 0;

out_free_buf:
    bc_buf_free(&b);
    fclose(f);
    return -1;
}

int main(int argc, char **argv)
{
    struct bc_robots *robots;
    enum bc_status st;
    const char *path;
    size_t plen, len;
    char *body;
    bool ok;

    const char *pos[3];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        char name[16];
        const char *val;
        const char *a = args_option(argv[i], name, sizeof(name), &val);
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            args_print_version("robotstxt");
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "robotstxt: unknown option %s (see --help)\n", a);
            return 2;
        } else if (npos == 3) {
            usage(stderr);
            return 2;
        }
        pos[npos++] = argv[i];
    }
    if (npos != 3) {
        usage(stderr);
        return 2;
    }
    /* One byte past the limit tells the parser that the file went on. */
    if (read_file(pos[0], BC_ROBOTS_MAX_BYTES + 1, &body, &len) != 0) {
        fprintf(stderr, "robotstxt: %s: %s\n", pos[0], strerror(errno));
        return 2;
    }
    st = bc_robots_parse(body, len, pos[1], strlen(pos[1]), &robots);
    free(body);
    if (st != BC_OK) {
        fprintf(stderr, "robotstxt: %s: %s\n", pos[0], bc_strerror(st));
        return 2;
    }
    static const char base_text[] = "http://example.invalid/";
    char base_buf[sizeof(base_text)], url_buf[BC_URL_MAX_LEN_DEFAULT + 1];
    struct bc_url base, url;
    st = bc_url_normalize(NULL, base_text, strlen(base_text), NULL, base_buf,
                          sizeof(base_buf), &base);
    if (st == BC_OK)
        st = bc_url_normalize(&base, pos[2], strlen(pos[2]), NULL, url_buf,
                              sizeof(url_buf), &url);
    if (st != BC_OK) {
        bc_robots_free(robots);
        fprintf(stderr, "robotstxt: %s: %s\n", pos[2], bc_strerror(st));
        return 2;
    }
    path = bc_url_target(&url, &plen);
    ok = bc_robots_allowed(robots, path, plen);
    bc_robots_free(robots);
    puts(ok ? "allowed" : "disallowed");
    return ok ? 0 : 1;
}
