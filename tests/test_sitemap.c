/*
 * test_sitemap.c - the streaming sitemap parser (fetcher/sitemap.c).
 *
 * Every document is fed whole, in 1-byte and 7-byte chunks and in seeded
 * random chunks, plain and gzip-compressed (the test compresses with
 * zlib itself), and must give the same entries every time. Both sides
 * of each limit are tested: max_urls and max_urls + 1 entries (with the
 * protocol's 50,000 too), max_bytes and max_bytes + 1 bytes, a <loc> of
 * max_loc_bytes and one byte more; the hostile cases (an entity bomb,
 * external entities, a gzip bomb, malformed XML) stop with their reason,
 * keeping the entries found before, and nothing is ever printed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "bloomcrawl/sitemap.h"
#include "strbuf.h"

#define NS "xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\""

/* Entries as lines "KIND loc lastmod|-\n". */
static void collect(void *user, const struct bc_sitemap_entry *e)
{
    struct strbuf *b = user;
    char tail[64];
    strbuf_str(b, e->kind == BC_SITEMAP_URLSET ? "url " : "sitemap ");
    strbuf_add(b, e->loc, e->loc_len);
    if (e->has_lastmod)
        snprintf(tail, sizeof(tail), " %lld\n", (long long)e->lastmod);
    else
        snprintf(tail, sizeof(tail), " -\n");
    strbuf_str(b, tail);
}

struct result {
    struct strbuf out;
    enum bc_sitemap_stop stop;
    enum bc_sitemap_kind kind;
    struct bc_sitemap_stats stats;
};

/* Parse doc fed in chunks of chunk bytes (0: whole; SIZE_MAX: seeded
 * random sizes 1..64) with cfg's limits. */
static void parse(const struct bc_sitemap_config *limits, const void *doc,
                  size_t len, size_t chunk, struct result *r)
{
    struct bc_sitemap_config cfg;
    if (limits)
        cfg = *limits;
    else
        bc_sitemap_config_init(&cfg);
    memset(r, 0, sizeof(*r));
    strbuf_str(&r->out, "");
    cfg.on_entry = collect;
    cfg.user = &r->out;
    struct bc_sitemap *sm;
    assert_int_equal(bc_sitemap_create(&cfg, &sm), BC_OK);
    const unsigned char *p = doc;
    unsigned seed = 12345;
    size_t at = 0;
    while (at < len) {
        size_t n = len - at;
        if (chunk == SIZE_MAX) {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 64;
        } else if (chunk) {
            n = chunk;
        }
        if (n > len - at)
            n = len - at;
        assert_int_equal(bc_sitemap_feed(sm, p + at, n), BC_OK);
        at += n;
    }
    assert_int_equal(bc_sitemap_finish(sm), BC_OK);
    assert_int_equal(bc_sitemap_feed(sm, "x", 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_sitemap_finish(sm), BC_ERR_INVALID_ARG);
    r->stop = bc_sitemap_stopped(sm);
    r->kind = bc_sitemap_kind(sm);
    bc_sitemap_stats(sm, &r->stats);
    bc_sitemap_free(sm);
}

/* gzip-compress len bytes (members: 1, or 2 halves). Caller frees. */
static unsigned char *gzip(const void *data, size_t len, int members,
                           size_t *out_len)
{
    size_t cap = len + len / 100 + 1024, used = 0;
    unsigned char *out = malloc(cap);
    assert_non_null(out);
    for (int m = 0; m < members; m++) {
        size_t from = m == 0 ? 0 : len / 2;
        size_t to = members == 1 || m == 1 ? len : len / 2;
        z_stream z;
        memset(&z, 0, sizeof(z));
        assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8,
                                      Z_DEFAULT_STRATEGY),
                         Z_OK);
        z.next_in = (Bytef *)(uintptr_t)data + from;
        z.avail_in = (uInt)(to - from);
        z.next_out = out + used;
        z.avail_out = (uInt)(cap - used);
        assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
        used = cap - z.avail_out;
        deflateEnd(&z);
    }
    *out_len = used;
    return out;
}

/* The same entries and stop whatever the chunking and compression. */
static void parse_all_ways(const struct bc_sitemap_config *limits,
                           const char *doc, const char *want,
                           enum bc_sitemap_stop stop)
{
    static const size_t chunks[] = {0, 1, 7, SIZE_MAX};
    size_t len = strlen(doc);
    for (int z = 0; z < 3; z++) {
        size_t n = len;
        unsigned char *body = z ? gzip(doc, len, z, &n) : NULL;
        for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
            struct result r;
            parse(limits, body ? body : (const unsigned char *)doc, n,
                  chunks[c], &r);
            if (strcmp(r.out.p, want) != 0 || r.stop != stop)
                fail_msg("gzip members %d chunk %zu: stop %s\n%s\nwant %s\n%s",
                         z, chunks[c], bc_sitemap_stop_name(r.stop), r.out.p,
                         bc_sitemap_stop_name(stop), want);
            assert_int_equal(r.stats.gzip, z != 0);
            free(r.out.p);
        }
        free(body);
    }
}

static void test_urlset(void **state)
{
    (void)state;
    const char *doc =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<urlset " NS " xmlns:image=\"http://www.google.com/schemas/"
        "sitemap-image/1.1\">\n"
        "  <url>\n    <loc>\n   http://a.test/one?x=1&amp;y=2  </loc>\n"
        "    <lastmod>2024-01-01T00:00:00Z</lastmod>\n"
        "    <changefreq>daily</changefreq>\n  </url>\n"
        "  <url><image:image><image:loc>http://a.test/img.png</image:loc>"
        "</image:image><loc><![CDATA[http://a.test/two]]></loc>"
        "<lastmod>2024-01-01T01:00:00+01:00</lastmod></url>\n"
        "  <url><lastmod>nonsense</lastmod><loc>http://a.test/&#x33;</loc>"
        "<loc>http://a.test/second-loc-ignored</loc></url>\n"
        "  <url><lastmod>2024-01-01</lastmod></url>\n"
        "  <url><loc>   </loc></url>\n"
        "  <other><loc>http://a.test/not-an-entry</loc></other>\n"
        "</urlset>\n";
    parse_all_ways(NULL, doc,
                   "url http://a.test/one?x=1&y=2 1704067200\n"
                   "url http://a.test/two 1704067200\n"
                   "url http://a.test/3 -\n",
                   BC_SITEMAP_STOP_NONE);
    struct result r;
    parse(NULL, doc, strlen(doc), 0, &r);
    assert_int_equal(r.kind, BC_SITEMAP_URLSET);
    assert_int_equal(r.stats.entries, 3);
    assert_int_equal(r.stats.no_loc, 2);
    assert_int_equal(r.stats.bad_lastmod, 1);
    assert_int_equal(r.stats.bytes_in, strlen(doc));
    assert_int_equal(r.stats.bytes_xml, strlen(doc));
    free(r.out.p);
}

static void test_index_and_no_namespace(void **state)
{
    (void)state;
    parse_all_ways(NULL,
                   "<sitemapindex " NS "><sitemap><loc>http://a.test/s1.xml"
                   "</loc><lastmod>2005-01-01</lastmod></sitemap>"
                   "<sitemap><loc>http://a.test/s2.xml.gz</loc></sitemap>"
                   "<url><loc>http://a.test/not-in-an-index</loc></url>"
                   "</sitemapindex>",
                   "sitemap http://a.test/s1.xml 1104537600\n"
                   "sitemap http://a.test/s2.xml.gz -\n",
                   BC_SITEMAP_STOP_NONE);
    /* No namespace: accepted; another namespace: not a sitemap (issue
     * 21: it gave no entries and no stop reason). */
    parse_all_ways(NULL, "<urlset><url><loc>u</loc></url></urlset>",
                   "url u -\n", BC_SITEMAP_STOP_NONE);
    parse_all_ways(NULL,
                   "<x:urlset xmlns:x=\"urn:other\"><x:url><x:loc>u</x:loc>"
                   "</x:url></x:urlset>",
                   "", BC_SITEMAP_STOP_NOT_SITEMAP);
    parse_all_ways(NULL, "<html><body><a href=/x>x</a></body></html>", "",
                   BC_SITEMAP_STOP_NOT_SITEMAP);
}

/* max_urls entries pass, the next one stops the parser. */
static void test_max_urls(void **state)
{
    (void)state;
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    assert_int_equal(cfg.max_urls, 50000);
    assert_int_equal(cfg.max_bytes, 52428800);
    cfg.max_urls = 3;
    const char *three = "<urlset " NS "><url><loc>a</loc></url><url><loc>b"
                        "</loc></url><url><loc>c</loc></url></urlset>";
    const char *four = "<urlset " NS "><url><loc>a</loc></url><url><loc>b"
                       "</loc></url><url><loc>c</loc></url><url><loc>d</loc>"
                       "</url><url><loc>e</loc></url></urlset>";
    parse_all_ways(&cfg, three, "url a -\nurl b -\nurl c -\n",
                   BC_SITEMAP_STOP_NONE);
    parse_all_ways(&cfg, four, "url a -\nurl b -\nurl c -\n",
                   BC_SITEMAP_STOP_TOO_MANY_URLS);

    /* The protocol's 50,000 and 50,001. */
    for (unsigned n = 50000; n <= 50001; n++) {
        struct strbuf doc = {0};
        strbuf_str(&doc, "<urlset " NS ">");
        for (unsigned i = 0; i < n; i++) {
            char line[64];
            snprintf(line, sizeof(line),
                     "<url><loc>http://a.test/%u</loc>"
                     "</url>\n",
                     i);
            strbuf_str(&doc, line);
        }
        strbuf_str(&doc, "</urlset>");
        struct result r;
        parse(NULL, doc.p, doc.len, 4096, &r);
        assert_int_equal(r.stats.entries, 50000);
        assert_int_equal(r.stop, n == 50000 ? BC_SITEMAP_STOP_NONE
                                            : BC_SITEMAP_STOP_TOO_MANY_URLS);
        free(r.out.p);
        free(doc.p);
    }
}

/* max_bytes of XML parse; one more byte stops with too_large. */
static void test_max_bytes(void **state)
{
    (void)state;
    const char *doc = "<urlset " NS "><url><loc>a</loc></url></urlset>";
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    cfg.max_bytes = strlen(doc);
    parse_all_ways(&cfg, doc, "url a -\n", BC_SITEMAP_STOP_NONE);
    cfg.max_bytes = strlen(doc) - 1;
    parse_all_ways(&cfg, doc, "url a -\n", BC_SITEMAP_STOP_TOO_LARGE);
    struct result r;
    parse(&cfg, doc, strlen(doc), 0, &r);
    assert_int_equal(r.stats.bytes_xml, strlen(doc) - 1);
    free(r.out.p);
}

/* A gzip bomb: 200 MB of whitespace inside a valid urlset, compressed
 * ~1000:1, is cut at exactly 50 MiB of XML (the default max_bytes). */
static void test_gzip_bomb(void **state)
{
    (void)state;
    const char *head = "<urlset " NS "><url><loc>http://a.test/x</loc></url>";
    size_t body = 200u * 1024 * 1024;
    size_t len = strlen(head) + body;
    char *doc = malloc(len);
    assert_non_null(doc);
    memcpy(doc, head, strlen(head));
    memset(doc + strlen(head), ' ', body);
    size_t zlen;
    unsigned char *z = gzip(doc, len, 1, &zlen);
    free(doc);
    assert_true(zlen < len / 100);
    struct result r;
    parse(NULL, z, zlen, 65536, &r);
    assert_int_equal(r.stop, BC_SITEMAP_STOP_TOO_LARGE);
    assert_string_equal(r.out.p, "url http://a.test/x -\n");
    assert_int_equal(r.stats.bytes_xml, BC_SITEMAP_MAX_BYTES);
    assert_true(r.stats.gzip);
    free(r.out.p);
    free(z);
}

static void test_gzip_errors(void **state)
{
    (void)state;
    const char *doc = "<urlset " NS "><url><loc>a</loc></url>"
                      "<url><loc>b</loc></url></urlset>";
    size_t zlen;
    unsigned char *z = gzip(doc, strlen(doc), 1, &zlen);
    struct result r;
    /* Cut short: the entries inflated so far, then "gzip". */
    parse(NULL, z, zlen - 12, 0, &r);
    assert_int_equal(r.stop, BC_SITEMAP_STOP_GZIP);
    free(r.out.p);
    /* Corrupt deflate data after the header. */
    for (size_t i = 12; i < zlen; i++)
        z[i] ^= 0x55;
    parse(NULL, z, zlen, 0, &r);
    assert_int_equal(r.stop, BC_SITEMAP_STOP_GZIP);
    assert_string_equal(r.out.p, "");
    free(r.out.p);
    free(z);
    /* A single byte 0x1f is no gzip: a text file, and no URL list. */
    parse(NULL, "\x1f", 1, 0, &r);
    assert_int_equal(r.stop, BC_SITEMAP_STOP_NOT_SITEMAP);
    assert_false(r.stats.gzip);
    free(r.out.p);
}

/* Billion laughs, external entities, any DOCTYPE: refused at once. */
static void test_doctype_refused(void **state)
{
    (void)state;
    struct strbuf bomb = {0};
    strbuf_str(&bomb, "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n"
                      " <!ENTITY lol \"lol\">\n");
    for (int i = 1; i < 10; i++) {
        char line[200];
        snprintf(line, sizeof(line), " <!ENTITY lol%d \"", i);
        strbuf_str(&bomb, line);
        for (int k = 0; k < 10; k++) {
            if (i == 1)
                snprintf(line, sizeof(line), "&lol;");
            else
                snprintf(line, sizeof(line), "&lol%d;", i - 1);
            strbuf_str(&bomb, line);
        }
        strbuf_str(&bomb, "\">\n");
    }
    strbuf_str(&bomb, "]>\n<urlset " NS "><url><loc>&lol9;</loc></url>"
                      "</urlset>\n");
    parse_all_ways(NULL, bomb.p, "", BC_SITEMAP_STOP_DOCTYPE);
    free(bomb.p);
    parse_all_ways(NULL,
                   "<?xml version=\"1.0\"?><!DOCTYPE urlset SYSTEM "
                   "\"file:///etc/passwd\"><urlset " NS "><url><loc>a</loc>"
                   "</url></urlset>",
                   "", BC_SITEMAP_STOP_DOCTYPE);
    parse_all_ways(NULL,
                   "<urlset " NS "><url><loc>a</loc></url><url><loc>&xxe;"
                   "</loc></url></urlset>",
                   "url a -\n", BC_SITEMAP_STOP_MALFORMED);
}

static void test_malformed_keeps_entries(void **state)
{
    (void)state;
    parse_all_ways(NULL,
                   "<urlset " NS "><url><loc>a</loc></url><url><loc>b</loc>"
                   "</url><url><loc>c</loc></oops></url></urlset>",
                   "url a -\nurl b -\n", BC_SITEMAP_STOP_MALFORMED);
    /* Truncated: the end of the document never came. */
    parse_all_ways(NULL, "<urlset " NS "><url><loc>a</loc></url><url><lo",
                   "url a -\n", BC_SITEMAP_STOP_MALFORMED);
    parse_all_ways(NULL, "", "", BC_SITEMAP_STOP_MALFORMED);
    /* Empty, or a BOM and whitespace alone: no document at all. */
    parse_all_ways(NULL, "\xEF\xBB\xBF \n\t", "", BC_SITEMAP_STOP_MALFORMED);
    /* Text that is not a list of URLs: not a sitemap. */
    parse_all_ways(NULL, "not xml at all\n", "", BC_SITEMAP_STOP_NOT_SITEMAP);
}

/* ---- issue 21: the other formats of sitemaps.org ----------------------- */

/* Parse doc whole and check its format, kind and counters. */
static struct result parse_whole(const struct bc_sitemap_config *cfg,
                                 const char *doc)
{
    struct result r;
    parse(cfg, doc, strlen(doc), 0, &r);
    return r;
}

static void test_text(void **state)
{
    (void)state;
    /* A BOM, blank lines, CR LF, whitespace around, upper-case schemes;
     * lines that are no absolute http(s) URL are skipped and counted;
     * the last line needs no LF. Plain and gzipped, any chunking. */
    const char *doc = "\xEF\xBB\xBF  \n"
                      "http://a.test/1\r\n"
                      "https://a.test/2?x=1&y=2\n"
                      "\n"
                      "  HTTP://A.test/3  \n"
                      "not a url\n"
                      "ftp://a.test/x\n"
                      "http://\n"
                      "/relative\n"
                      "http://a.test/has space\n"
                      "http://a.test/last";
    const char *want = "url http://a.test/1 -\n"
                       "url https://a.test/2?x=1&y=2 -\n"
                       "url HTTP://A.test/3 -\n"
                       "url http://a.test/last -\n";
    parse_all_ways(NULL, doc, want, BC_SITEMAP_STOP_NONE);
    struct result r = parse_whole(NULL, doc);
    assert_int_equal(r.kind, BC_SITEMAP_URLSET);
    assert_int_equal(r.stats.entries, 4);
    assert_int_equal(r.stats.not_url, 5);
    assert_int_equal(r.stats.bytes_xml, strlen(doc));
    free(r.out.p);
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    struct bc_sitemap *sm;
    assert_int_equal(bc_sitemap_create(&cfg, &sm), BC_OK);
    assert_int_equal(bc_sitemap_format(sm), BC_SITEMAP_FORMAT_UNKNOWN);
    assert_int_equal(bc_sitemap_feed(sm, "\n \n", 3), BC_OK);
    assert_int_equal(bc_sitemap_format(sm), BC_SITEMAP_FORMAT_UNKNOWN);
    assert_int_equal(bc_sitemap_feed(sm, "http://a.test/", 14), BC_OK);
    assert_int_equal(bc_sitemap_format(sm), BC_SITEMAP_FORMAT_TEXT);
    assert_int_equal(bc_sitemap_finish(sm), BC_OK);
    bc_sitemap_free(sm);
    assert_string_equal(bc_sitemap_format_name(BC_SITEMAP_FORMAT_TEXT), "text");

    /* The first line decides: a text file that is no URL list (an error
     * page, a robots.txt) is not a sitemap. */
    parse_all_ways(NULL, "User-agent: *\nhttp://a.test/1\n", "",
                   BC_SITEMAP_STOP_NOT_SITEMAP);
    r = parse_whole(NULL, "Not found\n");
    assert_int_equal(r.stop, BC_SITEMAP_STOP_NOT_SITEMAP);
    assert_int_equal(r.kind, BC_SITEMAP_UNKNOWN);
    free(r.out.p);
}

static void test_text_limits(void **state)
{
    (void)state;
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    /* max_urls and max_urls + 1. */
    cfg.max_urls = 3;
    parse_all_ways(&cfg, "http://h/a\nhttp://h/b\nhttp://h/c\n",
                   "url http://h/a -\nurl http://h/b -\nurl http://h/c -\n",
                   BC_SITEMAP_STOP_NONE);
    parse_all_ways(&cfg, "http://h/a\nhttp://h/b\nhttp://h/c\nhttp://h/d\n",
                   "url http://h/a -\nurl http://h/b -\nurl http://h/c -\n",
                   BC_SITEMAP_STOP_TOO_MANY_URLS);
    /* max_bytes and max_bytes + 1 (the bytes after inflation). */
    const char *doc = "http://h/a\nhttp://h/b\n";
    bc_sitemap_config_init(&cfg);
    cfg.max_bytes = strlen(doc);
    parse_all_ways(&cfg, doc, "url http://h/a -\nurl http://h/b -\n",
                   BC_SITEMAP_STOP_NONE);
    cfg.max_bytes = strlen(doc) - 1;
    parse_all_ways(&cfg, doc, "url http://h/a -\n", BC_SITEMAP_STOP_TOO_LARGE);
    /* A line of max_loc_bytes is a URL; one byte more is skipped. */
    bc_sitemap_config_init(&cfg);
    cfg.max_loc_bytes = 16;
    parse_all_ways(&cfg, "http://h/1234567\nhttp://h/12345678\nhttp://h/b\n",
                   "url http://h/1234567 -\nurl http://h/b -\n",
                   BC_SITEMAP_STOP_NONE);
    struct result r =
        parse_whole(&cfg, "http://h/1234567\nhttp://h/12345678\nhttp://h/b\n");
    assert_int_equal(r.stats.skipped_long, 1);
    free(r.out.p);
    /* The protocol's 50,000 and 50,001, gzipped. */
    for (unsigned n = 50000; n <= 50001; n++) {
        struct strbuf text = {0};
        for (unsigned i = 0; i < n; i++) {
            char line[64];
            snprintf(line, sizeof(line), "http://a.test/%u\n", i);
            strbuf_str(&text, line);
        }
        size_t zlen;
        unsigned char *z = gzip(text.p, text.len, 1, &zlen);
        parse(NULL, z, zlen, 4096, &r);
        assert_true(r.stats.gzip);
        assert_int_equal(r.stats.entries, 50000);
        assert_int_equal(r.stop, n == 50000 ? BC_SITEMAP_STOP_NONE
                                            : BC_SITEMAP_STOP_TOO_MANY_URLS);
        free(r.out.p);
        free(z);
        free(text.p);
    }
}

static void test_rss(void **state)
{
    (void)state;
    const char *doc =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\">\n"
        "<channel><title>t</title><link>http://a.test/channel</link>\n"
        " <atom:link href=\"http://a.test/feed\" rel=\"self\"/>\n"
        " <item><title>1</title><link> http://a.test/1?a=1&amp;b=2 </link>"
        "<pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>\n"
        " <item><atom:link href=\"http://a.test/no\"/><guid isPermaLink="
        "\"true\">http://a.test/guid</guid></item>\n"
        " <item><link><![CDATA[http://a.test/2]]></link>"
        "<link>http://a.test/second-link</link></item>\n"
        "</channel>\n"
        "<item><link>http://a.test/outside-channel</link></item>\n"
        "</rss>\n";
    parse_all_ways(NULL, doc,
                   "url http://a.test/1?a=1&b=2 -\nurl http://a.test/2 -\n",
                   BC_SITEMAP_STOP_NONE);
    struct result r = parse_whole(NULL, doc);
    assert_int_equal(r.kind, BC_SITEMAP_URLSET);
    assert_int_equal(r.stats.no_loc, 1);
    free(r.out.p);
    /* An <rss> in a namespace is not RSS 2.0. */
    parse_all_ways(NULL,
                   "<rss xmlns=\"urn:x\"><channel><item><link>http://a/"
                   "</link></item></channel></rss>",
                   "", BC_SITEMAP_STOP_NOT_SITEMAP);
}

static void test_atom(void **state)
{
    (void)state;
    const char *doc =
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
        "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n"
        " <title>t</title><link href=\"http://a.test/\"/>\n"
        " <link rel=\"self\" href=\"http://a.test/atom.xml\"/>\n"
        " <entry><title>1</title>"
        "<link rel=\"self\" href=\"http://a.test/self\"/>"
        "<link rel=\"alternate\" type=\"text/html\" "
        "href=\"http://a.test/1?a=1&amp;b=2&#38;c&lt;\"/>"
        "<link href=\"http://a.test/second\"/>"
        "<updated>2024-01-01T00:00:00Z</updated></entry>\n"
        " <entry><link href=\"http://a.test/2\"/></entry>\n"
        " <entry><link rel=\"enclosure\" href=\"http://a.test/e.mp3\"/>"
        "</entry>\n"
        " <entry><x:link xmlns:x=\"urn:x\" href=\"http://a.test/no\"/>"
        "</entry>\n"
        "</feed>\n";
    parse_all_ways(NULL, doc,
                   "url http://a.test/1?a=1&b=2&c< 1704067200\n"
                   "url http://a.test/2 -\n",
                   BC_SITEMAP_STOP_NONE);
    struct result r = parse_whole(NULL, doc);
    assert_int_equal(r.kind, BC_SITEMAP_URLSET);
    assert_int_equal(r.stats.no_loc, 2);
    free(r.out.p);
    /* Atom 0.3: its namespace, <modified>. */
    parse_all_ways(NULL,
                   "<feed version=\"0.3\" xmlns=\"http://purl.org/atom/ns#\">"
                   "<entry><link rel=\"alternate\" type=\"text/html\" "
                   "href=\"http://a.test/03\"/><modified>2024-01-01</modified>"
                   "</entry></feed>",
                   "url http://a.test/03 1704067200\n", BC_SITEMAP_STOP_NONE);
    /* A <feed> in no namespace is no Atom feed. */
    parse_all_ways(NULL,
                   "<feed><entry><link href=\"http://a/\"/></entry></feed>", "",
                   BC_SITEMAP_STOP_NOT_SITEMAP);
}

/* The old Google namespace 0.84, for a urlset and an index. */
static void test_namespace_084(void **state)
{
    (void)state;
    parse_all_ways(NULL,
                   "<urlset xmlns=\"http://www.google.com/schemas/sitemap/"
                   "0.84\"><url><loc>http://a.test/1</loc><lastmod>2024-01-01"
                   "</lastmod></url></urlset>",
                   "url http://a.test/1 1704067200\n", BC_SITEMAP_STOP_NONE);
    parse_all_ways(NULL,
                   "<sitemapindex xmlns=\"http://www.google.com/schemas/"
                   "sitemap/0.84\"><sitemap><loc>http://a.test/s.xml</loc>"
                   "</sitemap></sitemapindex>",
                   "sitemap http://a.test/s.xml -\n", BC_SITEMAP_STOP_NONE);
}

/* Every format is told apart, and every stop has a name of its own. */
static void test_formats_and_stops(void **state)
{
    (void)state;
    static const struct {
        const char *doc;
        enum bc_sitemap_format format;
    } docs[] = {
        {"<urlset " NS "/>", BC_SITEMAP_FORMAT_XML},
        {"<urlset xmlns=\"http://www.google.com/schemas/sitemap/0.84\"/>",
         BC_SITEMAP_FORMAT_XML},
        {"http://a.test/\n", BC_SITEMAP_FORMAT_TEXT},
        {"<rss version=\"2.0\"><channel/></rss>", BC_SITEMAP_FORMAT_RSS},
        {"<feed xmlns=\"http://www.w3.org/2005/Atom\"/>",
         BC_SITEMAP_FORMAT_ATOM},
        {"<feed xmlns=\"http://purl.org/atom/ns#\"/>", BC_SITEMAP_FORMAT_ATOM},
        {"<html/>", BC_SITEMAP_FORMAT_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        struct bc_sitemap_config cfg;
        struct bc_sitemap *sm;
        bc_sitemap_config_init(&cfg);
        assert_int_equal(bc_sitemap_create(&cfg, &sm), BC_OK);
        assert_int_equal(bc_sitemap_feed(sm, docs[i].doc, strlen(docs[i].doc)),
                         BC_OK);
        assert_int_equal(bc_sitemap_finish(sm), BC_OK);
        if (bc_sitemap_format(sm) != docs[i].format)
            fail_msg("%s: format %s", docs[i].doc,
                     bc_sitemap_format_name(bc_sitemap_format(sm)));
        assert_int_equal(bc_sitemap_stopped(sm),
                         docs[i].format == BC_SITEMAP_FORMAT_UNKNOWN
                             ? BC_SITEMAP_STOP_NOT_SITEMAP
                             : BC_SITEMAP_STOP_NONE);
        bc_sitemap_free(sm);
    }
    assert_int_equal(bc_sitemap_format(NULL), BC_SITEMAP_FORMAT_UNKNOWN);
    assert_string_equal(bc_sitemap_format_name((enum bc_sitemap_format)99),
                        "unknown");
    for (int a = 1; a < BC_SITEMAP_STOP_COUNT; a++) {
        const char *na = bc_sitemap_stop_name((enum bc_sitemap_stop)a);
        assert_string_not_equal(na, "unknown");
        for (int b = 0; b < a; b++)
            assert_string_not_equal(
                na, bc_sitemap_stop_name((enum bc_sitemap_stop)b));
    }
}

static void test_loc_length(void **state)
{
    (void)state;
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    cfg.max_loc_bytes = 10;
    parse_all_ways(&cfg,
                   "<urlset " NS "><url><loc> 0123456789 </loc></url>"
                   "<url><loc>0123456789A</loc></url>"
                   "<url><loc>01234    X</loc></url>"
                   "<url><loc>01234     X</loc></url></urlset>",
                   "url 0123456789 -\nurl 01234    X -\n",
                   BC_SITEMAP_STOP_NONE);
    struct result r;
    const char *doc = "<urlset " NS "><url><loc>0123456789A</loc></url>"
                      "</urlset>";
    parse(&cfg, doc, strlen(doc), 1, &r);
    assert_int_equal(r.stats.skipped_long, 1);
    free(r.out.p);
}

static void test_datetime(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        long long want; /* -1: refused */
    } cases[] = {
        {"1970", 0},
        {"1970-01", 0},
        {"1970-01-01", 0},
        {"1970-01-02", 86400},
        {"2000-02-29", 951782400},
        {"2024-01-01T00:00:00Z", 1704067200},
        {"2024-01-01T00:00Z", 1704067200},
        {"2024-01-01T01:00:00+01:00", 1704067200},
        {"2023-12-31T19:00:00.123-05:00", 1704067200},
        {"1969-12-31T23:59:59Z", -1},
        {"1900-03-01", -2203891200LL},
        {"2023-02-29", -2},
        {"2024-13-01", -2},
        {"2024-00-01", -2},
        {"2024-01-32", -2},
        {"2024-01-01T10:00", -2},
        {"2024-01-01T24:00Z", -2},
        {"2024-01-01T10:00:00.Z", -2},
        {"2024-1-01", -2},
        {"24", -2},
        {"", -2},
        {"2024-01-01Z", -2},
        {"2024-01-01T10:00:00+0100", -2},
        {"2024-01-01T10:00:00Zx", -2},
        /* The sitemap protocol's formats (W3C datetime), one each more:
         * a month, a fraction of many digits with a half-hour zone, the
         * leap second, a negative zone of minutes only. */
        {"2024-03", 1709251200},
        {"2024-02-29T12:30:45.123456789+05:30", 1709190045},
        {"2024-12-31T23:59:60Z", 1735689600},
        {"2024-06-01T00:00-00:30", 1717201800},
        {"2024-06-01T00:00:00.5Z", 1717200000},
        /* Refused: lower-case t or z, a space for T, hours alone, a
         * fraction without seconds or without a zone, an offset of hours
         * alone, minutes 60, hours 24, a signed or 5-digit year, a
         * trailing space, a time without a date's day. */
        {"2024-06-01t00:00Z", -2},
        {"2024-06-01T00:00z", -2},
        {"2024-06-01 00:00Z", -2},
        {"2024-06-01T10Z", -2},
        {"2024-06-01T10:00.5Z", -2},
        {"2024-06-01T10:00:00.5", -2},
        {"2024-06-01T10:00+01", -2},
        {"2024-06-01T10:00+01:60", -2},
        {"2024-06-01T10:00+24:00", -2},
        {"-2024-06-01", -2},
        {"+2024", -2},
        {"20240", -2},
        {"2024-06-01T10:00Z ", -2},
        {"2024-06T10:00Z", -2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t t = 42;
        bool ok = bc_sitemap_parse_datetime(cases[i].s, strlen(cases[i].s), &t);
        if (cases[i].want == -2) {
            if (ok || t != 42)
                fail_msg("%s accepted", cases[i].s);
        } else if (!ok || t != cases[i].want) {
            fail_msg("%s: %lld, want %lld", cases[i].s, (long long)t,
                     cases[i].want);
        }
    }
}

/* libxml2's errors never reach stderr. */
static void test_never_prints(void **state)
{
    (void)state;
    char path[] = "/tmp/test_sitemap_stderr.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    struct result r;
    const char *bad[] = {"<urlset><url><loc>a</loc></url></oops>",
                         "<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>",
                         "<urlset>&undefined;</urlset>", "\xff\xfe<\x00x",
                         "<?xml version=\"1.0\" encoding=\"nope\"?><x/>"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        parse(NULL, bad[i], strlen(bad[i]), 3, &r);
        free(r.out.p);
    }
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    off_t size = lseek(fd, 0, SEEK_END);
    close(fd);
    unlink(path);
    assert_int_equal(size, 0);
}

static void test_args(void **state)
{
    (void)state;
    struct bc_sitemap *sm;
    struct bc_sitemap_config cfg;
    bc_sitemap_config_init(&cfg);
    assert_int_equal(bc_sitemap_create(NULL, &sm), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_sitemap_create(&cfg, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_sitemap_feed(NULL, "x", 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_sitemap_finish(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_sitemap_stopped(NULL), BC_SITEMAP_STOP_NONE);
    assert_int_equal(bc_sitemap_kind(NULL), BC_SITEMAP_UNKNOWN);
    struct bc_sitemap_stats st;
    memset(&st, 0xff, sizeof(st));
    bc_sitemap_stats(NULL, &st);
    assert_int_equal(st.entries, 0);
    bc_sitemap_free(NULL);
    assert_int_equal(bc_sitemap_create(&cfg, &sm), BC_OK);
    assert_int_equal(bc_sitemap_feed(sm, NULL, 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_sitemap_feed(sm, NULL, 0), BC_OK);
    bc_sitemap_free(sm); /* never finished: fine */
    for (int s = 0; s <= BC_SITEMAP_STOP_COUNT; s++)
        assert_non_null(bc_sitemap_stop_name((enum bc_sitemap_stop)s));
    assert_string_equal(bc_sitemap_stop_name(BC_SITEMAP_STOP_COUNT), "unknown");
}

/* The names of the stop reasons and formats (made from one list each in
 * sitemap.h), and "unknown" outside the enums. */
static void test_names(void **state)
{
    (void)state;
    const char *stops[] = {"none",    "too_many_urls", "too_large", "malformed",
                           "doctype", "not_sitemap",   "gzip",      "nomem"};
    assert_int_equal(sizeof(stops) / sizeof(stops[0]), BC_SITEMAP_STOP_COUNT);
    for (int i = 0; i < BC_SITEMAP_STOP_COUNT; i++)
        assert_string_equal(bc_sitemap_stop_name((enum bc_sitemap_stop)i),
                            stops[i]);
    assert_string_equal(bc_sitemap_stop_name(BC_SITEMAP_STOP_COUNT), "unknown");
    assert_string_equal(bc_sitemap_stop_name((enum bc_sitemap_stop) - 1),
                        "unknown");
    assert_string_equal(bc_sitemap_format_name(BC_SITEMAP_FORMAT_UNKNOWN),
                        "unknown");
    assert_string_equal(bc_sitemap_format_name(BC_SITEMAP_FORMAT_XML), "xml");
    assert_string_equal(bc_sitemap_format_name(BC_SITEMAP_FORMAT_TEXT), "text");
    assert_string_equal(bc_sitemap_format_name(BC_SITEMAP_FORMAT_RSS), "rss");
    assert_string_equal(bc_sitemap_format_name(BC_SITEMAP_FORMAT_ATOM), "atom");
    assert_string_equal(bc_sitemap_format_name((enum bc_sitemap_format)(
                            BC_SITEMAP_FORMAT_ATOM + 1)),
                        "unknown");
}

int main(void)
{
    bc_sitemap_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urlset),
        cmocka_unit_test(test_index_and_no_namespace),
        cmocka_unit_test(test_max_urls),
        cmocka_unit_test(test_max_bytes),
        cmocka_unit_test(test_gzip_bomb),
        cmocka_unit_test(test_gzip_errors),
        cmocka_unit_test(test_doctype_refused),
        cmocka_unit_test(test_malformed_keeps_entries),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_limits),
        cmocka_unit_test(test_rss),
        cmocka_unit_test(test_atom),
        cmocka_unit_test(test_namespace_084),
        cmocka_unit_test(test_formats_and_stops),
        cmocka_unit_test(test_loc_length),
        cmocka_unit_test(test_datetime),
        cmocka_unit_test(test_never_prints),
        cmocka_unit_test(test_args),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
