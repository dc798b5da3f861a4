/*
 * test_links.c - the streaming HTML link extractor.
 *
 * Fixtures in tests/data/html/NAME.html come with NAME.html.expected:
 *   link <TAB> FLAG|FLAG <TAB> href <TAB> base ("-": the document URL)
 *   page <TAB> NOFOLLOW|NOINDEX (or 0)
 * (\n, \t and \\ escapes in href and base). Every fixture is fed whole,
 * in 1-byte and 7-byte chunks and in seeded random chunks, and must give
 * the same links every time. Generated inputs test the limits: hrefs at
 * and over the length cap, megabyte attributes, deep nesting; and nothing
 * may ever be printed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "skip.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bloomcrawl/links.h"
#include "strbuf.h"

#define DOC_URL  "http://example.test/dir/page.html"
#define HTML_DIR BC_SOURCE_DIR "/tests/data/html/"

/* ------------------------------------------------------------------ */
/* Collecting links as text lines "FLAGS\thref\tbase\n".               */

static const struct {
    unsigned bit;
    const char *name;
} link_names[] = {
    {BC_LINK_ANCHOR, "ANCHOR"},
    {BC_LINK_FRAME, "FRAME"},
    {BC_LINK_REL_CANONICAL, "CANONICAL"},
    {BC_LINK_REL_ALTERNATE, "ALTERNATE"},
    {BC_LINK_REL_NEXT, "NEXT"},
    {BC_LINK_REL_PREV, "PREV"},
    {BC_LINK_NOFOLLOW, "NOFOLLOW"},
    {BC_LINK_PAGE_NOFOLLOW, "PAGE_NOFOLLOW"},
    {BC_LINK_BASE_HREF, "BASE_HREF"},
};

static void flags_text(struct strbuf *b, unsigned flags)
{
    bool first = true;
    for (size_t i = 0; i < sizeof(link_names) / sizeof(link_names[0]); i++) {
        if (flags & link_names[i].bit) {
            if (!first)
                strbuf_str(b, "|");
            strbuf_str(b, link_names[i].name);
            first = false;
            flags &= ~link_names[i].bit;
        }
    }
    assert_int_equal(flags, 0); /* no unknown bits */
    if (first)
        strbuf_str(b, "0");
}

/* Append s with \n, \t, \\ escaped. */
static void escaped(struct strbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            strbuf_str(b, "\\n");
        else if (s[i] == '\t')
            strbuf_str(b, "\\t");
        else if (s[i] == '\\')
            strbuf_str(b, "\\\\");
        else
            strbuf_add(b, s + i, 1);
    }
}

struct collect {
    struct strbuf out;
    size_t max_len; /* longest href seen */
    size_t count;
};

static void on_link(void *user, const char *href, size_t len, const char *base,
                    size_t base_len, unsigned flags)
{
    struct collect *c = user;
    c->count++;
    if (len > c->max_len)
        c->max_len = len;
    strbuf_str(&c->out, "link\t");
    flags_text(&c->out, flags);
    strbuf_str(&c->out, "\t");
    escaped(&c->out, href, len);
    strbuf_str(&c->out, "\t");
    if (!(flags & BC_LINK_BASE_HREF)) {
        /* Without a <base>, the base is exactly the document URL. */
        assert_int_equal(base_len, strlen(DOC_URL));
        assert_memory_equal(base, DOC_URL, base_len);
        strbuf_str(&c->out, "-");
    } else {
        escaped(&c->out, base, base_len);
    }
    strbuf_str(&c->out, "\n");
}

/* Parse data in chunks (chunk 0: whole; SIZE_MAX: seeded random sizes). */
static void extract(const char *data, size_t len, size_t chunk, unsigned seed,
                    struct collect *c, struct bc_links_stats *stats,
                    unsigned *page)
{
    struct bc_links_config cfg;
    struct bc_links *p = NULL;
    bc_links_config_init(&cfg);
    cfg.on_link = on_link;
    cfg.user = c;
    assert_int_equal(bc_links_create(&cfg, DOC_URL, strlen(DOC_URL), &p),
                     BC_OK);
    size_t off = 0;
    while (off < len) {
        size_t n = chunk ? chunk : len;
        if (chunk == SIZE_MAX) {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 97;
        }
        if (n > len - off)
            n = len - off;
        assert_int_equal(bc_links_feed(p, data + off, n), BC_OK);
        off += n;
    }
    assert_int_equal(bc_links_finish(p), BC_OK);
    if (stats)
        bc_links_stats(p, stats);
    if (page)
        *page = bc_links_page_flags(p);
    bc_links_free(p);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    struct strbuf b = {0};
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
        strbuf_add(&b, tmp, n);
    fclose(f);
    if (!b.p)
        strbuf_add(&b, "", 0);
    *len = b.len;
    return b.p;
}

/* The expected file without comment lines. */
static char *read_expected(const char *path)
{
    size_t len;
    char *raw = read_file(path, &len);
    struct strbuf b = {0};
    strbuf_add(&b, "", 0);
    for (char *line = raw; *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) + 1 : strlen(line);
        if (line[0] != '#')
            strbuf_add(&b, line, n);
        line += n;
    }
    free(raw);
    return b.p;
}

static void page_text(struct strbuf *b, unsigned page)
{
    strbuf_str(b, "page\t");
    if (page == 0)
        strbuf_str(b, "0");
    if (page & BC_PAGE_NOFOLLOW)
        strbuf_str(b, page & BC_PAGE_NOINDEX ? "NOFOLLOW|NOINDEX" : "NOFOLLOW");
    else if (page & BC_PAGE_NOINDEX)
        strbuf_str(b, "NOINDEX");
    strbuf_str(b, "\n");
}

/* ------------------------------------------------------------------ */
/* Stderr must stay silent while parsing.                              */

static int stderr_saved = -1;
static FILE *stderr_file;

static void stderr_capture(void)
{
    fflush(stderr);
    stderr_file = tmpfile();
    assert_non_null(stderr_file);
    stderr_saved = dup(2);
    assert_true(stderr_saved >= 0);
    assert_true(dup2(fileno(stderr_file), 2) >= 0);
}

static void stderr_assert_silent(void)
{
    fflush(stderr);
    assert_true(dup2(stderr_saved, 2) >= 0);
    close(stderr_saved);
    long size = ftell(stderr_file);
    if (fseek(stderr_file, 0, SEEK_END) == 0)
        size = ftell(stderr_file);
    fclose(stderr_file);
    assert_int_equal(size, 0);
}

/* ------------------------------------------------------------------ */
/* Fixtures.                                                           */

static const char *const fixtures[] = {
    "soup",   "base", "fake",    "robots", "meta_none",
    "frames", "nul",  "badutf8", "badenc", NULL,
};

static void check_fixture(const char *name)
{
    char path[512];
    size_t len;
    snprintf(path, sizeof(path), HTML_DIR "%s.html", name);
    char *html = read_file(path, &len);
    snprintf(path, sizeof(path), HTML_DIR "%s.html.expected", name);
    char *expected = read_expected(path);

    static const size_t chunks[] = {0, 1, 7, 4096, SIZE_MAX};
    for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        for (unsigned seed = 1; seed <= (chunks[i] == SIZE_MAX ? 5u : 1u);
             seed++) {
            struct collect c = {0};
            unsigned page;
            stderr_capture();
            extract(html, len, chunks[i], seed, &c, NULL, &page);
            stderr_assert_silent();
            page_text(&c.out, page);
            if (strcmp(c.out.p, expected) != 0) {
                fail_msg("%s, chunk %zu (seed %u):\n--- got\n%s--- expected"
                         "\n%s",
                         name, chunks[i], seed, c.out.p, expected);
            }
            free(c.out.p);
        }
    }
    free(expected);
    free(html);
}

static void test_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; fixtures[i]; i++)
        check_fixture(fixtures[i]);
}

/* ------------------------------------------------------------------ */
/* Limits.                                                             */

/* "<a href="/" + n x's + "">" as a string. */
static void add_anchor(struct strbuf *b, size_t n, char fill)
{
    strbuf_str(b, "<a href=\"/");
    for (size_t i = 0; i < n; i++)
        strbuf_add(b, &fill, 1);
    strbuf_str(b, "\">x</a>\n");
}

static void test_href_cap_boundary(void **state)
{
    (void)state;
    struct strbuf html = {0};
    add_anchor(&html, BC_LINKS_DEFAULT_MAX_HREF - 1, 'a'); /* len = cap */
    add_anchor(&html, BC_LINKS_DEFAULT_MAX_HREF, 'b');     /* cap + 1 */
    strbuf_str(&html, "<a href=\"/after\">");

    static const size_t chunks[] = {0, 1, 7};
    for (size_t i = 0; i < 3; i++) {
        struct collect c = {0};
        struct bc_links_stats st;
        extract(html.p, html.len, chunks[i], 0, &c, &st, NULL);
        assert_int_equal(c.count, 2);
        assert_int_equal(c.max_len, BC_LINKS_DEFAULT_MAX_HREF);
        assert_int_equal(st.links, 2);
        assert_int_equal(st.skipped_long, 1);
        assert_int_equal(st.bytes, html.len);
        assert_non_null(strstr(c.out.p, "\t/after\t"));
        free(c.out.p);
    }
    free(html.p);
}

static void test_huge_attributes(void **state)
{
    (void)state;
    struct strbuf html = {0};
    strbuf_str(&html, "<a href=\"/first\">1</a>");
    add_anchor(&html, 1u << 20, 'x'); /* a 1 MiB href */
    strbuf_str(&html, "<p title=\"");
    for (size_t i = 0; i < (1u << 20); i++)
        strbuf_add(&html, "y", 1);
    strbuf_str(&html, "\">text</p><base href=\"/");
    for (size_t i = 0; i < 10000; i++)
        strbuf_add(&html, "b", 1);
    strbuf_str(&html, "/\"><a href=\"/last\">2</a>");

    static const size_t chunks[] = {0, 1, 7, 65536};
    for (size_t i = 0; i < 4; i++) {
        struct collect c = {0};
        struct bc_links_stats st;
        extract(html.p, html.len, chunks[i], 0, &c, &st, NULL);
        assert_string_equal(c.out.p, "link\tANCHOR\t/first\t-\n"
                                     "link\tANCHOR\t/last\t-\n");
        assert_int_equal(st.skipped_long, 2); /* the href and the base */
        free(c.out.p);
    }
    free(html.p);
}

static void test_small_cap(void **state)
{
    (void)state;
    const char *html = "<a href=\"12345\"></a><a href=\"123456\"></a>"
                       "<base href=\"123456\"><a href=\"1\"></a>"
                       "<base href=\"12345\"><a href=\"2\"></a>";
    struct collect c = {0};
    struct bc_links_config cfg;
    struct bc_links *p;
    struct bc_links_stats st;
    bc_links_config_init(&cfg);
    cfg.on_link = on_link;
    cfg.user = &c;
    cfg.max_href_bytes = 5;
    assert_int_equal(bc_links_create(&cfg, DOC_URL, strlen(DOC_URL), &p),
                     BC_OK);
    assert_int_equal(bc_links_feed(p, html, strlen(html)), BC_OK);
    assert_int_equal(bc_links_finish(p), BC_OK);
    bc_links_stats(p, &st);
    /* A base over the cap is ignored; the next <base> then counts. */
    assert_string_equal(c.out.p, "link\tANCHOR\t12345\t-\n"
                                 "link\tANCHOR\t1\t-\n"
                                 "link\tANCHOR|BASE_HREF\t2\t12345\n");
    assert_int_equal(st.skipped_long, 2);
    assert_int_equal(st.links, 3);
    bc_links_free(p);
    free(c.out.p);
}

/*
 * The tag buffer of links.h: 4 * (max_href_bytes + 1) + 65536 bytes of
 * tag name, attribute names and kept values. With max_href_bytes 5 that
 * is 65560: "<a" (1), 250 attribute names of total length names, and
 * href=12345 (4 + 5). The link is reported while 1 + names + 9 <= 65560
 * and skipped as too long one byte later.
 */
static void tag_buffer_case(size_t names, bool reported)
{
    struct strbuf html = {0};
    strbuf_str(&html, "<a");
    size_t left = names;
    for (int i = 0; i < 250; i++) {
        char head[16];
        int n = snprintf(head, sizeof(head), " n%d", i);
        size_t len = i < 249 ? 262 : left; /* name bytes, 'n' + digits + x */
        strbuf_add(&html, head, (size_t)n);
        for (size_t k = (size_t)n - 1; k < len; k++)
            strbuf_add(&html, "x", 1);
        left -= len;
    }
    strbuf_str(&html, " href=12345>");
    static const size_t chunks[] = {0, 1, 7};
    for (size_t j = 0; j < 3; j++) {
        struct collect c = {0};
        struct bc_links_config cfg;
        struct bc_links *p;
        struct bc_links_stats st;
        bc_links_config_init(&cfg);
        cfg.on_link = on_link;
        cfg.user = &c;
        cfg.max_href_bytes = 5;
        assert_int_equal(bc_links_create(&cfg, DOC_URL, strlen(DOC_URL), &p),
                         BC_OK);
        for (size_t off = 0; off < html.len;) {
            size_t n = chunks[j] ? chunks[j] : html.len;
            if (n > html.len - off)
                n = html.len - off;
            assert_int_equal(bc_links_feed(p, html.p + off, n), BC_OK);
            off += n;
        }
        assert_int_equal(bc_links_finish(p), BC_OK);
        bc_links_stats(p, &st);
        bc_links_free(p);
        assert_int_equal(st.links, reported ? 1 : 0);
        assert_int_equal(st.skipped_long, reported ? 0 : 1);
        free(c.out.p);
    }
    free(html.p);
}

static void test_tag_buffer(void **state)
{
    (void)state;
    tag_buffer_case(65560 - 1 - 9, true);
    tag_buffer_case(65560 - 1 - 9 + 1, false);
}

static void test_deep_nesting(void **state)
{
    (void)state;
    struct strbuf html = {0};
    for (int i = 0; i < 100000; i++)
        strbuf_str(&html, i % 2 ? "<div>" : "<span><b><i>");
    strbuf_str(&html, "<a href=\"/deep\">deep</a>");
    for (int i = 0; i < 100000; i++)
        strbuf_str(&html, "</div>");
    strbuf_str(&html, "<a href=\"/after\">after</a>");

    static const size_t chunks[] = {0, 7, 4096};
    for (size_t i = 0; i < 3; i++) {
        struct collect c = {0};
        extract(html.p, html.len, chunks[i], 0, &c, NULL, NULL);
        assert_string_equal(c.out.p, "link\tANCHOR\t/deep\t-\n"
                                     "link\tANCHOR\t/after\t-\n");
        free(c.out.p);
    }
    free(html.p);
}

static void test_many_links(void **state)
{
    (void)state;
    struct strbuf html = {0};
    char tmp[64];
    strbuf_str(&html, "<html><body>");
    for (int i = 0; i < 20000; i++) {
        snprintf(tmp, sizeof(tmp), "<a href=\"/p%d\">%d</a> &amp; ", i, i);
        strbuf_str(&html, tmp);
    }
    struct collect c = {0};
    struct bc_links_stats st;
    extract(html.p, html.len, 1000, 0, &c, &st, NULL);
    assert_int_equal(c.count, 20000);
    assert_int_equal(st.links, 20000);
    assert_non_null(strstr(c.out.p, "\t/p19999\t"));
    free(c.out.p);
    free(html.p);
}

/*
 * Garbage of every byte value: no crash, nothing printed, every href
 * within the cap, and the same links whole and in random chunks.
 */
static void test_random_bytes(void **state)
{
    (void)state;
    unsigned seed = 12345;
    static const char *const bits[] = {
        "<a href=",
        "\"",
        "'",
        ">",
        "<",
        "</",
        "<!--",
        "-->",
        "<script>",
        "</script>",
        "<base href=x>",
        "&amp;",
        "&#",
        "\xff",
        "\xc3",
        "\0",
        "</html>",
        "<meta name=robots content=none>",
        " ",
        "=",
    };
    char *data = malloc(200000);
    assert_non_null(data);
    for (int round = 0; round < 20; round++) {
        size_t len = 0;
        while (len < 190000) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = seed >> 8;
            if (r % 3 == 0) {
                data[len++] = (char)(r >> 8);
            } else {
                const char *s = bits[(r >> 4) % 20];
                size_t n = strcmp(s, "") == 0 ? 1 : strlen(s);
                memcpy(data + len, s, n);
                len += n;
            }
        }
        struct collect a = {0}, b = {0};
        stderr_capture();
        extract(data, len, 0, 0, &a, NULL, NULL);
        extract(data, len, SIZE_MAX, (unsigned)round, &b, NULL, NULL);
        stderr_assert_silent();
        assert_true(a.max_len <= BC_LINKS_DEFAULT_MAX_HREF);
        assert_true(b.max_len <= BC_LINKS_DEFAULT_MAX_HREF);
        assert_string_equal(a.out.p ? a.out.p : "", b.out.p ? b.out.p : "");
        free(a.out.p);
        free(b.out.p);
    }
    free(data);
}

/* ------------------------------------------------------------------ */
/* API contract.                                                       */

static void test_api(void **state)
{
    (void)state;
    struct bc_links_config cfg;
    struct bc_links *p = NULL;
    struct bc_links_stats st;

    bc_links_config_init(NULL);
    bc_links_config_init(&cfg);
    assert_null(cfg.on_link);
    assert_int_equal(cfg.max_href_bytes, BC_LINKS_DEFAULT_MAX_HREF);

    assert_int_equal(bc_links_create(NULL, "", 0, &p), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_links_create(&cfg, "", 0, NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_links_create(&cfg, NULL, 3, &p), BC_ERR_INVALID_ARG);
    cfg.max_href_bytes = 0;
    assert_int_equal(bc_links_create(&cfg, "", 0, &p), BC_ERR_INVALID_ARG);
    assert_null(p); /* untouched on error */
    cfg.max_href_bytes = 100;

    /* No callback: links are only counted. An empty document URL. */
    assert_int_equal(bc_links_create(&cfg, NULL, 0, &p), BC_OK);
    assert_int_equal(bc_links_feed(p, NULL, 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_links_feed(p, NULL, 0), BC_OK);
    const char *html = "<meta name=robots content=noindex><a href=x>";
    assert_int_equal(bc_links_feed(p, html, strlen(html)), BC_OK);
    assert_int_equal(bc_links_page_flags(p), BC_PAGE_NOINDEX);
    assert_int_equal(bc_links_finish(p), BC_OK);
    assert_int_equal(bc_links_finish(p), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_links_feed(p, "x", 1), BC_ERR_INVALID_ARG);
    bc_links_stats(p, &st);
    assert_int_equal(st.links, 1);
    assert_int_equal(st.bytes, strlen(html));
    bc_links_free(p);

    /* Finish without any input. */
    assert_int_equal(bc_links_create(&cfg, "u", 1, &p), BC_OK);
    assert_int_equal(bc_links_finish(p), BC_OK);
    bc_links_free(p);

    assert_int_equal(bc_links_feed(NULL, "x", 1), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_links_finish(NULL), BC_ERR_INVALID_ARG);
    assert_int_equal(bc_links_page_flags(NULL), 0);
    memset(&st, 0xff, sizeof(st));
    bc_links_stats(NULL, &st);
    assert_int_equal(st.links, 0);
    bc_links_stats(NULL, NULL);
    bc_links_free(NULL);
}

/* A tag cut at every possible position still gives the same link. */
static void test_every_split(void **state)
{
    (void)state;
    const char *html = "<p>x</p></BODY><LINK rel=\"next canonical\" "
                       "href=\"/a?b=1&amp;c=2\"></html><a href=/z>";
    size_t len = strlen(html);
    struct collect whole = {0};
    extract(html, len, 0, 0, &whole, NULL, NULL);
    assert_string_equal(whole.out.p, "link\tCANONICAL|NEXT\t/a?b=1&c=2\t-\n"
                                     "link\tANCHOR\t/z\t-\n");
    for (size_t cut = 1; cut < len; cut++) {
        struct collect c = {0};
        struct bc_links_config cfg;
        struct bc_links *p;
        bc_links_config_init(&cfg);
        cfg.on_link = on_link;
        cfg.user = &c;
        assert_int_equal(bc_links_create(&cfg, DOC_URL, strlen(DOC_URL), &p),
                         BC_OK);
        assert_int_equal(bc_links_feed(p, html, cut), BC_OK);
        assert_int_equal(bc_links_feed(p, html + cut, len - cut), BC_OK);
        assert_int_equal(bc_links_finish(p), BC_OK);
        bc_links_free(p);
        assert_string_equal(c.out.p, whole.out.p);
        free(c.out.p);
    }
    free(whole.out.p);
}

/* ------------------------------------------------------------------ */
/* Tag soup as a browser reads it (the HTML Standard's tokenizer).     */

struct soup_case {
    const char *what;
    const char *html;
    const char *links; /* the expected lines */
};

/*
 * Cases where an HTML4-era parser (libxml2's) and a browser disagree;
 * the expected links are those of a browser's tree (parse5 agrees).
 * The first 11 are the differences issue 12 counted.
 */
static const struct soup_case soup_cases[] = {
    {"link-looking text inside <textarea> is text",
     "<textarea><a href=/no-textarea></textarea><a href=/yes1>",
     "link\tANCHOR\t/yes1\t-\n"},
    {"inside <title>", "<title><a href=/no-title></title><a href=/yes2>",
     "link\tANCHOR\t/yes2\t-\n"},
    {"inside <xmp>", "<xmp><a href=/no-xmp></xmp><a href=/yes3>",
     "link\tANCHOR\t/yes3\t-\n"},
    {"inside <noembed>", "<noembed><a href=/no-noembed></noembed>", ""},
    {"inside <iframe> text", "<iframe><a href=/no-iframe></iframe>x", ""},
    {"inside an escaped script",
     "<script><!--<script></script><a href=/no-escaped>--></script>"
     "<a href=/yes6>",
     "link\tANCHOR\t/yes6\t-\n"},
    {"escaped script with upper case and a dash",
     "<script><!-- x <SCRIPT>a</SCRIPT> <a href=/no-esc2> -"
     "-></script><a href=/yes7>",
     "link\tANCHOR\t/yes7\t-\n"},
    {"after the abrupt comment <!-->", "<!--><a href=/after-abrupt>",
     "link\tANCHOR\t/after-abrupt\t-\n"},
    {"after the abrupt comment <!--->", "<!---><a href=/after-abrupt2>",
     "link\tANCHOR\t/after-abrupt2\t-\n"},
    {"<a/href=...>", "<a/href=/slash>", "link\tANCHOR\t/slash\t-\n"},
    {"<a/href=... /> quoted", "<a/href=\"/slash2\"/>",
     "link\tANCHOR\t/slash2\t-\n"},
    /* More of the standard's rules. */
    {"comment closed by --!>", "<!-- x --!><a href=/after-bang>",
     "link\tANCHOR\t/after-bang\t-\n"},
    {"<noscript> as a browser with scripting",
     "<noscript><a href=/no-noscript></noscript><a href=/yes-ns>",
     "link\tANCHOR\t/yes-ns\t-\n"},
    {"<noframes> is raw text", "<noframes><a href=/no-nf></noframes>", ""},
    {"<plaintext> to the end",
     "<a href=/before-pt><plaintext></plaintext><a href=/no-pt>",
     "link\tANCHOR\t/before-pt\t-\n"},
    {"CDATA in svg is text",
     "<svg><![CDATA[<a href=/no-cdata>]]></svg><a href=/after-svg>",
     "link\tANCHOR\t/after-svg\t-\n"},
    {"CDATA in HTML is a bogus comment up to its first '>'",
     "<![CDATA[<a href=/no-bogus>]]><a href=/after-bogus>",
     "link\tANCHOR\t/after-bogus\t-\n"},
    {"svg <a> with href and xlink:href",
     "<svg><a href=/svg-a></a><a xlink:href=/svg-xlink></a></svg>",
     "link\tANCHOR\t/svg-a\t-\nlink\tANCHOR\t/svg-xlink\t-\n"},
    {"textarea in an svg integration point is RCDATA",
     "<svg><foreignObject><textarea><a href=/no-fo></textarea>"
     "</foreignObject></svg><a href=/after-fo>",
     "link\tANCHOR\t/after-fo\t-\n"},
    {"svg <title> is not RCDATA; a <div> breaks out of svg",
     "<svg><title><a href=/svg-title></a></title><div>"
     "<textarea><a href=/no-ta></textarea><a href=/after-div>",
     "link\tANCHOR\t/svg-title\t-\nlink\tANCHOR\t/after-div\t-\n"},
    {"math CDATA, then HTML again after </math>",
     "<math><mi><![CDATA[<a href=/mi-bogus>]]></mi><![CDATA[<a "
     "href=/no-math>]]></math><![CDATA[<a href=/no-html>]]><a href=/end>",
     "link\tANCHOR\t/end\t-\n"},
    {"character references: a legacy name without ';' stays literal "
     "before '=' or a letter in a value",
     "<a href=\"?a=1&copy=2&not;3&notit;&#x41;&#128;\">",
     "link\tANCHOR\t?a=1&copy=2\xc2\xac"
     "3&notit;A\xe2\x82\xac\t-\n"},
    {"the first of duplicate attributes wins, any case",
     "<A HREF=/first href=/second>", "link\tANCHOR\t/first\t-\n"},
    {"end tag in RCDATA must match the open element",
     "<title>x</titlex><a href=/no-t></ti tle></title><a href=/yes-t>",
     "link\tANCHOR\t/yes-t\t-\n"},
    {"a DOCTYPE with quoted '>' ends at the first '>'",
     "<!DOCTYPE html PUBLIC \"a>b\"><a href=/after-doctype>",
     "link\tANCHOR\t/after-doctype\t-\n"},
    {"<frame> counts in a frameset, after a meta nofollow too",
     "<meta name=robots content=nofollow><frameset><frame src=/f>",
     "link\tFRAME|PAGE_NOFOLLOW\t/f\t-\n"},
    {"<frame> outside a frameset is dropped by the tree builder",
     "<body><frame src=/no-frame><iframe src=/yes-iframe>",
     "link\tFRAME\t/yes-iframe\t-\n"},
    {"<? processing instruction is a bogus comment",
     "<?xml <a href=/no-pi>?><a href=/after-pi>",
     "link\tANCHOR\t/after-pi\t-\n"},
    /* Issue 21: a template's contents are not in the tree, and the
     * tree builder's frameset-ok flag (parse5 agrees on every one). */
    {"a <base> in a template is not the document's base",
     "<template><base href=/tb/></template><a href=/x>",
     "link\tANCHOR\t/x\t-\n"},
    {"the first <base> outside templates counts",
     "<template><base href=/tb/><a href=/in-t></template>"
     "<base href=/b/><a href=/x>",
     "link\tANCHOR\t/in-t\t-\nlink\tANCHOR|BASE_HREF\t/x\t/b/\n"},
    {"</template> closes the svg inside it",
     "<template><svg></template><base href=/b/><a href=/x>",
     "link\tANCHOR|BASE_HREF\t/x\t/b/\n"},
    {"a template in an svg integration point",
     "<svg><foreignObject><template><base href=/tb/></template>"
     "</foreignObject></svg><base href=/b2/><a href=/x>",
     "link\tANCHOR|BASE_HREF\t/x\t/b2/\n"},
    {"a frameset after body text is ignored, and its frames",
     "<p>text</p><frameset><frame src=/no-f></frameset>", ""},
    {"a frameset after an <img> is ignored", "<img><frameset><frame src=/no>",
     ""},
    {"a frameset after <body> is ignored", "<body><frameset><frame src=/no>",
     ""},
    {"a frameset after </br> is ignored", "</br><frameset><frame src=/no>", ""},
    {"a frameset after a character reference is ignored",
     "&amp;<frameset><frame src=/no>", ""},
    {"a frameset after text in svg is ignored",
     "<svg>x</svg><frameset><frame src=/no>", ""},
    {"a frameset after <input> is ignored", "<input><frameset><frame src=/no>",
     ""},
    {"a frameset in a template is ignored",
     "<template><frameset><frame src=/no></template>", ""},
    {"a frameset after a template and a <div> is ignored",
     "<template></template><div><frameset><frame src=/no>", ""},
    {"a frameset after a <div> replaces the body",
     "<div><frameset><frame src=/f>", "link\tFRAME\t/f\t-\n"},
    {"a frameset after whitespace, head elements and a hidden input",
     " \n<title>t</title><script>s</script><style>x</style>"
     "<input type=HIDDEN><frameset><frame src=/f>",
     "link\tFRAME\t/f\t-\n"},
    {"a frameset after a UTF-8 BOM", "\xEF\xBB\xBF<frameset><frame src=/f>",
     "link\tFRAME\t/f\t-\n"},
    {"a frameset after a template in head (the body is not made yet)",
     "<head><template>x</template></head><frameset><frame src=/f>",
     "link\tFRAME\t/f\t-\n"},
    {"a frameset at a MathML integration point",
     "<math><mi><frameset><frame src=/f>", "link\tFRAME\t/f\t-\n"},
    {"in a frameset only frames count; after it, nothing",
     "<frameset><a href=/no-a><iframe src=/no-if><frame src=/f2><title>"
     "<frame src=/f3><frameset><frame src=/f4></frameset><frame src=/f5>"
     "</frameset><frame src=/no-after><a href=/no-a2><noframes>"
     "<a href=/no-nf></noframes>",
     "link\tFRAME\t/f2\t-\nlink\tFRAME\t/f3\t-\nlink\tFRAME\t/f4\t-\n"
     "link\tFRAME\t/f5\t-\n"},
    {"after a template in head, a <noscript> after </head> makes the body",
     "<head><template></template></head><noscript></noscript>"
     "<frameset><frame src=/no>",
     ""},
    {"... and one before </head> does not",
     "<head><template></template><noscript></noscript></head>"
     "<frameset><frame src=/f>",
     "link\tFRAME\t/f\t-\n"},
    {"<frameset/> opens a frameset all the same",
     "<frameset><frameset/><frame src=/a></frameset><frame src=/b>"
     "</frameset><frame src=/no>",
     "link\tFRAME\t/a\t-\nlink\tFRAME\t/b\t-\n"},
    {"a <base> in a frameset is ignored",
     "<frameset><base href=/b/><frame src=/f>", "link\tFRAME\t/f\t-\n"},
};

static void test_browser_soup(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(soup_cases) / sizeof(soup_cases[0]); i++) {
        const struct soup_case *k = &soup_cases[i];
        static const size_t chunks[] = {0, 1, 2, 3};
        for (size_t j = 0; j < 4; j++) {
            struct collect c = {0};
            strbuf_add(&c.out, "", 0);
            extract(k->html, strlen(k->html), chunks[j], 0, &c, NULL, NULL);
            if (strcmp(c.out.p, k->links) != 0)
                fail_msg("%s (chunk %zu):\n%s\n--- got\n%s--- expected\n%s",
                         k->what, chunks[j], k->html, c.out.p, k->links);
            free(c.out.p);
        }
    }
}

/*
 * Chunk invariance: for every document of a set (the fixtures and the
 * tag-soup cases) and every split point, two chunks give the same links
 * and page flags as the whole document.
 */
static void check_splits(const char *html, size_t len, const char *what)
{
    struct collect whole = {0};
    unsigned page_whole;
    strbuf_add(&whole.out, "", 0);
    extract(html, len, 0, 0, &whole, NULL, &page_whole);
    for (size_t cut = 1; cut < len; cut++) {
        struct collect c = {0};
        struct bc_links_config cfg;
        struct bc_links *p;
        strbuf_add(&c.out, "", 0);
        bc_links_config_init(&cfg);
        cfg.on_link = on_link;
        cfg.user = &c;
        assert_int_equal(bc_links_create(&cfg, DOC_URL, strlen(DOC_URL), &p),
                         BC_OK);
        assert_int_equal(bc_links_feed(p, html, cut), BC_OK);
        assert_int_equal(bc_links_feed(p, html + cut, len - cut), BC_OK);
        assert_int_equal(bc_links_finish(p), BC_OK);
        assert_int_equal(bc_links_page_flags(p), page_whole);
        bc_links_free(p);
        if (strcmp(c.out.p, whole.out.p) != 0)
            fail_msg("%s split at %zu:\n--- got\n%s--- whole\n%s", what, cut,
                     c.out.p, whole.out.p);
        free(c.out.p);
    }
    free(whole.out.p);
}

static void test_chunk_invariance(void **state)
{
    (void)state;
    for (size_t i = 0; fixtures[i]; i++) {
        char path[512];
        size_t len;
        snprintf(path, sizeof(path), HTML_DIR "%s.html", fixtures[i]);
        char *html = read_file(path, &len);
        check_splits(html, len, fixtures[i]);
        free(html);
    }
    for (size_t i = 0; i < sizeof(soup_cases) / sizeof(soup_cases[0]); i++)
        check_splits(soup_cases[i].html, strlen(soup_cases[i].html),
                     soup_cases[i].what);
}

/* ------------------------------------------------------------------ */
/* UTF-16 pages are decoded, not parsed as garbage.                    */

/* s (ASCII or UTF-8 of BMP/astral code points) as UTF-16 in out. */
static size_t to_utf16(const char *s, bool big, bool bom, char *out)
{
    size_t n = 0;
    const unsigned char *u = (const unsigned char *)s;
    unsigned units[2];
    if (bom) {
        out[n++] = (char)(big ? 0xFE : 0xFF);
        out[n++] = (char)(big ? 0xFF : 0xFE);
    }
    while (*u) {
        unsigned cp;
        if (*u < 0x80) {
            cp = *u++;
        } else if (*u < 0xE0) {
            cp = (unsigned)(u[0] & 0x1F) << 6 | (u[1] & 0x3F);
            u += 2;
        } else if (*u < 0xF0) {
            cp = (unsigned)(u[0] & 0x0F) << 12 | (unsigned)(u[1] & 0x3F) << 6 |
                 (u[2] & 0x3F);
            u += 3;
        } else {
            cp = (unsigned)(u[0] & 0x07) << 18 | (unsigned)(u[1] & 0x3F) << 12 |
                 (unsigned)(u[2] & 0x3F) << 6 | (u[3] & 0x3F);
            u += 4;
        }
        size_t k = 0;
        if (cp >= 0x10000) {
            units[k++] = 0xD800 + ((cp - 0x10000) >> 10);
            units[k++] = 0xDC00 + ((cp - 0x10000) & 0x3FF);
        } else {
            units[k++] = cp;
        }
        for (size_t j = 0; j < k; j++) {
            out[n++] = (char)(big ? units[j] >> 8 : units[j] & 0xFF);
            out[n++] = (char)(big ? units[j] & 0xFF : units[j] >> 8);
        }
    }
    return n;
}

static void test_utf16(void **state)
{
    (void)state;
    const char *page = "<html><title>\xc3\xa9t\xc3\xa9</title>"
                       "<a href=\"/caf\xc3\xa9?q=\xf0\x9f\x98\x80\">x</a>"
                       "<a href=/two>";
    const char *want = "link\tANCHOR\t/caf\xc3\xa9?q=\xf0\x9f\x98\x80\t-\n"
                       "link\tANCHOR\t/two\t-\n";
    char u16[512];
    for (int big = 0; big < 2; big++) {
        for (int bom = 0; bom < 2; bom++) {
            size_t n = to_utf16(page, big, bom, u16);
            static const size_t chunks[] = {0, 1, 3};
            for (size_t j = 0; j < 3; j++) {
                struct collect c = {0};
                strbuf_add(&c.out, "", 0);
                extract(u16, n, chunks[j], 0, &c, NULL, NULL);
                assert_string_equal(c.out.p, want);
                free(c.out.p);
            }
            check_splits(u16, n, "utf-16 page");
        }
    }
    /* A lone surrogate and an odd last byte become U+FFFD. */
    static const char lone[] = "\xff\xfe<\0a\0 \0h\0r\0e\0f\0=\0/\0\x00\xd8"
                               "x\0>\0<\0a\0 \0h\0r\0e\0f\0=\0z\0>\0!";
    struct collect c = {0};
    struct bc_links_stats st;
    strbuf_add(&c.out, "", 0);
    extract(lone, sizeof(lone) - 1, 0, 0, &c, &st, NULL);
    assert_string_equal(c.out.p, "link\tANCHOR\t/\xef\xbf\xbdx\t-\n"
                                 "link\tANCHOR\tz\t-\n");
    assert_int_equal(st.parse_errors, 2);
    free(c.out.p);
}

/* ------------------------------------------------------------------ */
/* The text sink: on_text gets the visible text.                       */

/* Links in c->out, text in text (each run checked non-empty). */
struct text_collect {
    struct collect links;
    struct strbuf text;
    size_t runs;
};

static void on_link_tc(void *user, const char *href, size_t len,
                       const char *base, size_t base_len, unsigned flags)
{
    struct text_collect *tc = user;
    on_link(&tc->links, href, len, base, base_len, flags);
}

static void on_text(void *user, const char *text, size_t len)
{
    struct text_collect *tc = user;
    assert_true(len > 0);
    tc->runs++;
    strbuf_add(&tc->text, text, len);
}

/*
 * Extract with a text sink, cut at the given points (ncut of them, in
 * order): the text and the links into *tc (which the caller frees).
 */
static void extract_text(const char *html, size_t len, const size_t *cuts,
                         size_t ncut, struct text_collect *tc)
{
    struct bc_links_config cfg;
    struct bc_links *p;
    memset(tc, 0, sizeof(*tc));
    strbuf_add(&tc->links.out, "", 0);
    strbuf_add(&tc->text, "", 0);
    bc_links_config_init(&cfg);
    assert_null(cfg.on_text);
    cfg.on_link = on_link_tc;
    cfg.on_text = on_text;
    cfg.user = tc;
    assert_int_equal(bc_links_create(&cfg, DOC_URL, strlen(DOC_URL), &p),
                     BC_OK);
    size_t off = 0;
    for (size_t i = 0; i <= ncut; i++) {
        size_t to = i < ncut ? cuts[i] : len;
        assert_int_equal(bc_links_feed(p, html + off, to - off), BC_OK);
        off = to;
    }
    assert_int_equal(bc_links_finish(p), BC_OK);
    bc_links_free(p);
}

static void text_free(struct text_collect *tc)
{
    free(tc->links.out.p);
    free(tc->text.p);
}

/* Every element whose text is kept or left out (links.h), entities. */
static const char text_page[] =
    "<!DOCTYPE html><html><head><title>Caf&eacute; &amp; bar</title>"
    "<style>p { color: red }</style><script>var a = \"<p>no</p>\";</script>"
    "<noscript>enable scripts</noscript></head>"
    "<body><!-- a comment --><h1>Fish&nbsp;&#38; chips</h1>"
    "<p>One <b>W</b>ord, &lt;tag&gt; &#x263A;</p><a href=/x>link</a>"
    "<template><p>stamped later</p><script>x</script></template>"
    "<iframe src=/f>no frames</iframe><textarea>typed &amp; kept</textarea>"
    "<xmp>shown <b>raw</b></xmp>"
    "<svg><style>.x{}</style><script>s()</script><text>drawn</text>"
    "<![CDATA[ and cdata ]]></svg>"
    "<script><!--<script></script>still script--></script>end"
    "<noembed>e</noembed><noframes>f</noframes>"
    "<plaintext>last <p> &amp;";

static const char text_want[] = "Caf\xc3\xa9 & bar"
                                " Fish\xc2\xa0& chips"
                                " One Word, <tag> \xe2\x98\xba"
                                " link"
                                " typed & kept"
                                " shown <b>raw</b>"
                                " drawn"
                                " and cdata "
                                "end"
                                " last <p> &amp;";

static void test_text(void **state)
{
    (void)state;
    size_t len = sizeof(text_page) - 1;
    struct text_collect whole;
    extract_text(text_page, len, NULL, 0, &whole);
    assert_string_equal(whole.text.p, text_want);
    assert_string_equal(whole.links.out.p, "link\tANCHOR\t/x\t-\n"
                                           "link\tFRAME\t/f\t-\n");

    /* Any cut, and every byte apart, gives the same text and links. */
    for (size_t cut = 1; cut < len; cut++) {
        struct text_collect c;
        extract_text(text_page, len, &cut, 1, &c);
        if (strcmp(c.text.p, text_want) != 0)
            fail_msg("split at %zu:\n%s", cut, c.text.p);
        assert_string_equal(c.links.out.p, whole.links.out.p);
        text_free(&c);
    }
    size_t *cuts = malloc(len * sizeof(*cuts));
    assert_non_null(cuts);
    for (size_t i = 0; i + 1 < len; i++)
        cuts[i] = i + 1;
    struct text_collect bytes;
    extract_text(text_page, len, cuts, len - 1, &bytes);
    free(cuts);
    assert_string_equal(bytes.text.p, text_want);
    assert_string_equal(bytes.links.out.p, whole.links.out.p);
    assert_true(bytes.runs > whole.runs);
    text_free(&bytes);
    text_free(&whole);

    /* A frameset document drops text after its <frameset>; one that
     * comes after text is ignored, and the text goes on. */
    static const struct {
        const char *html, *text;
    } cases[] = {
        {"<title>T</title><frameset><frame src=a><noframes>no</noframes>"
         "x</frameset>y",
         "T"},
        {"<p>x</p><frameset><frame src=/a></frameset>y", "x y"},
        {"a<template>b<template>c</template>d</template>e", "ae"},
        {"<math><mi>m</mi><style>s</style></math>z", "mz"},
        {"<svg><foreignObject><style>s</style>t</foreignObject></svg>u", "tu"},
        {"<script>a</script b></script>c", "c"},
        {"<style>a</STYLE>b<iframe>c</iframe >d", "b d"},
        {"<title>a&b</title>", "a&b"},
        {"x\xef\xbb\xbfy", "x\xef\xbb\xbfy"},
        {"\xef\xbb\xbfz", "z"},
        {"<p>no end", "no end"},
        /* Words apart where rendering breaks them (TEXT in links.c): at
         * the tags of blocks, cells, items, <br>; joined across inline
         * and boxless elements; no space before the first word or after
         * the last. */
        {"<title>Home</title><ul><li>Alpha</li><li>Beta</li></ul><table>"
         "<tr><td>one</td><td>two</td></tr></table>Hello<br>world<p></p>",
         "Home Alpha Beta one two Hello world"},
        {"<p>W<b>or</b><span>d</span>s<script>x</script>!</p>", "Words!"},
        {"<div>a<template>t</template>b<noscript>n</noscript>c</div>", "abc"},
        {"a<img src=x>b<br/>c<svg><text>d</text><text>e</text></svg>f",
         "a b cdef"},
        {"<P>x</P><DIV>y", "x y"},
        {"", ""},
    };
    /* NUL: as it is in ordinary text, U+FFFD in a title (links.h). */
    static const char nul_page[] = "a\0b<title>c\0d</title>";
    static const char nul_text[] = "a\0b c\xef\xbf\xbd"
                                   "d";
    struct text_collect nc;
    extract_text(nul_page, sizeof(nul_page) - 1, NULL, 0, &nc);
    assert_int_equal(nc.text.len, sizeof(nul_text) - 1);
    assert_memory_equal(nc.text.p, nul_text, sizeof(nul_text) - 1);
    text_free(&nc);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct text_collect c;
        extract_text(cases[i].html, strlen(cases[i].html), NULL, 0, &c);
        if (strcmp(c.text.p, cases[i].text) != 0)
            fail_msg("%s: got \"%s\", want \"%s\"", cases[i].html, c.text.p,
                     cases[i].text);
        text_free(&c);
    }
}

/*
 * The text sink changes no link: every fixture and tag-soup case gives
 * the same links and page flags with on_text as without, and its text
 * fed in 7-byte chunks is the text fed whole.
 */
static void check_text_same_links(const char *html, size_t len,
                                  const char *what)
{
    struct collect plain = {0};
    strbuf_add(&plain.out, "", 0);
    extract(html, len, 0, 0, &plain, NULL, NULL);
    struct text_collect whole, chunked;
    extract_text(html, len, NULL, 0, &whole);
    size_t cuts[4096], n = 0;
    for (size_t at = 7; at < len && n < 4096; at += 7)
        cuts[n++] = at;
    extract_text(html, len, cuts, n, &chunked);
    if (strcmp(whole.links.out.p, plain.out.p) != 0)
        fail_msg("%s: links with on_text:\n%s--- without\n%s", what,
                 whole.links.out.p, plain.out.p);
    if (strcmp(chunked.text.p, whole.text.p) != 0)
        fail_msg("%s: text in 7-byte chunks differs", what);
    free(plain.out.p);
    text_free(&whole);
    text_free(&chunked);
}

static void test_text_same_links(void **state)
{
    (void)state;
    for (size_t i = 0; fixtures[i]; i++) {
        char path[512];
        size_t len;
        snprintf(path, sizeof(path), HTML_DIR "%s.html", fixtures[i]);
        char *html = read_file(path, &len);
        check_text_same_links(html, len, fixtures[i]);
        free(html);
    }
    for (size_t i = 0; i < sizeof(soup_cases) / sizeof(soup_cases[0]); i++)
        check_text_same_links(soup_cases[i].html, strlen(soup_cases[i].html),
                              soup_cases[i].what);
}

int main(void)
{
    bc_links_global_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_href_cap_boundary),
        cmocka_unit_test(test_huge_attributes),
        cmocka_unit_test(test_small_cap),
        cmocka_unit_test(test_tag_buffer),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_many_links),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_every_split),
        cmocka_unit_test(test_browser_soup),
        cmocka_unit_test(test_chunk_invariance),
        cmocka_unit_test(test_utf16),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_text_same_links),
    };
    return bc_test_status(cmocka_run_group_tests(tests, NULL, NULL));
}
