/*
 * neardup - near-duplicate pages in WARC files and HTML files: urldedup's
 * sibling for content.
 *
 * Reads WARC files (.warc.gz, one gzip member per record as crawl --warc
 * writes them, or plain .warc) and HTML files, given as files or
 * directories (walked in name order), and takes each page's visible text
 * through the link extractor's text sink (links.h, on_text: no script,
 * style, template, ...) into a 64-bit simhash (dedup/simhash.h). Each
 * fingerprint is looked up in a bc_simhash_index among the earlier pages'
 * (within --k bits, 3 by default): a page within k of an earlier one joins
 * that page's cluster, any other page starts a cluster of its own. So a
 * cluster is its first page (in input order) and the pages within k bits
 * of it - the seen-test a crawl would apply, one page at a time.
 *
 *   neardup crawl.warc.gz                  clusters of 2 pages or more:
 *                                          "cluster <TAB> distance to the
 *                                          cluster's first page <TAB> URL"
 *   neardup --all site/                    every page (singletons too)
 *   neardup --fingerprints a.warc.gz dir/  "fingerprint <TAB> shingles
 *                                          <TAB> name", one per page
 *
 * A WARC's pages are its response records (application/http; msgtype=
 * response) with a 2xx status and an HTML Content-Type, and resource
 * records of an HTML type. A response record keeps the body as it came
 * over the wire (crawler/warc.c, PAYLOAD): the chunked framing is taken
 * off with the fetcher's decoder (fetcher/chunked.c) and a gzip or deflate
 * Content-Encoding inflated here, as the fetcher does for the live page.
 *
 * REVISITS: crawl --warc archives a page whose payload it archived before
 * as a revisit record of profile identical-payload-digest (crawler/warc.c,
 * REVISIT): its block is the HTTP head alone, and WARC-Refers-To names
 * the original's response record. A 304 to a conditional recrawl is a
 * revisit of profile server-not-modified, which names the record of the
 * last whole fetch the same way. Either is the same page as the record it
 * refers to: each response record taken as a page is remembered by its
 * WARC-Record-ID (a uthash table: the id, the fingerprint, the page), and
 * a revisit of one read earlier, in this input or an earlier one, is a
 * page with that record's fingerprint, in its cluster at its distance (0
 * from the record itself). An identical-payload-digest revisit is a page
 * when its head would make a response one (2xx, HTML); a
 * server-not-modified one when its head is a 304 (which need not carry a
 * Content-Type: the page is its original's). A revisit whose original
 * was not read (in an input not given, or given after it; or not an HTML
 * page), or that names none (no WARC-Refers-To), has no fingerprint to
 * take: it is counted apart, in the summary.
 *
 * Every other record (request, warcinfo, metadata, a revisit of another
 * profile, a 404, an image) is skipped and counted. A page's name is its
 * WARC-Target-URI, or the path of its HTML file as given (joined with the
 * directory walk).
 *
 * RECRAWLS: a URI is one page, its first record's. A later record of the
 * same URI (a recrawl's response or revisit, in this input or a later
 * one) is no page of its own - else an unchanged page would cluster with
 * itself, which the crawler never reports (crawler.c, NEAR-DUPLICATES) -
 * and is counted apart; a response among them is still remembered by its
 * id, as the URI's page, so that a revisit naming it resolves.
 *
 * Pages with fewer than --min-shingles shingles get no fingerprint (too
 * short: simhash.c, WHAT IS LOST) and join no cluster.
 *
 * Exit status: 0 success, 1 runtime failure (an input that cannot be read
 * or is not a well-formed WARC: reported, the other inputs still read and
 * the output still written; out of memory; a write error), 2 usage error
 * (an unknown option, a bad value, no input, an input path that does not
 * exist: checked before any input is read).
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <zlib.h>

#include "args.h"
#include "bloomcrawl/links.h"
#include "bloomcrawl/simhash.h"
#include "chunked_int.h"

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#define READ_BUF    (64u << 10) /* the input buffer */
#define MAX_HEADER  (1u << 20)  /* longest WARC header or HTTP head */
#define INFLATE_BUF (16u << 10) /* inflated bytes handed on at a time */

/* The revisit profiles taken (REVISITS above), WARC 1.1's and 1.0's. */
#define PROFILE_IDENTICAL    "/revisit/identical-payload-digest"
#define PROFILE_NOT_MODIFIED "/revisit/server-not-modified"

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: neardup [options] FILE|DIR...\n"
        "\n"
        "Finds near-duplicate pages. Reads WARC files (.warc.gz or .warc:\n"
        "their 2xx HTML response records, de-chunked and inflated, and\n"
        "revisit records as the page of the record they refer to) and HTML\n"
        "files; a directory is walked in name order for *.warc, *.warc.gz,\n"
        "*.html, *.htm and *.xhtml. Each page's visible text (no script,\n"
        "style or template) gets a 64-bit simhash; a page within --k bits\n"
        "of an earlier page joins that page's cluster. Prints one line per\n"
        "page of each cluster of 2 or more:\n"
        "    cluster <TAB> distance to the cluster's first page <TAB> name\n"
        "(name: the WARC-Target-URI, or the file's path), and a summary on\n"
        "stderr.\n"
        "\n"
        "Options:\n"
        "  --k N              the Hamming distance of a near-duplicate, 0 to\n"
        "                     8 (default %u)\n"
        "  --all              print every page: singletons too, and pages\n"
        "                     too short for a fingerprint with \"-\" as\n"
        "                     cluster and distance\n"
        "  --fingerprints     print \"fingerprint <TAB> shingles <TAB> "
        "name\"\n"
        "                     per page instead (16 hex digits, or \"-\" when\n"
        "                     too short), in input order; no clustering\n"
        "  --shingle-words N  words per shingle, 1 to 8 (default %u)\n"
        "  --min-shingles N   fewer shingles: no fingerprint (default %u)\n"
        "  --quiet            no summary on stderr\n"
        "\n"
        "  --help             this text\n"
        "  --version          the version\n"
        "\n"
        "Exit status: 0 success, 1 runtime failure (an input unreadable or\n"
        "not a well-formed WARC: reported, the rest still read), 2 usage\n"
        "error (unknown option, bad value, no input, a missing input).\n",
        BC_SIMHASH_DEFAULT_K, BC_SIMHASH_DEFAULT_SHINGLE_WORDS,
        BC_SIMHASH_DEFAULT_MIN_SHINGLES);
}

struct options {
    unsigned k;
    bool all, fingerprints, quiet;
    struct bc_simhash_config sh;
};

/* A page read: its name, and its fingerprint if it has one. */
struct page {
    char *name;
    uint64_t fp;
    uint64_t shingles;
    bool has_fp;
    size_t leader; /* the index of its cluster's first page */
    unsigned distance;
};

/* A response record taken as a page, by its WARC-Record-ID (REVISITS). */
struct record {
    UT_hash_handle hh;
    uint64_t fp, shingles;
    bool has_fp;
    size_t page; /* its index in run.pages (not kept with --fingerprints) */
    char id[];   /* the key, NUL-terminated */
};

/* A page's name, to take each URI once (RECRAWLS). */
struct name_seen {
    UT_hash_handle hh;
    size_t page; /* its index in run.pages (not kept with --fingerprints) */
    char name[]; /* the key, NUL-terminated */
};

struct counters {
    uint64_t warc_files, html_files, records, pages_warc;
    uint64_t refetched;  /* records of a URI already taken (RECRAWLS) */
    uint64_t revisits;   /* of them, revisit records of a page read */
    uint64_t unresolved; /* revisit records of a record not read */
    uint64_t skipped;    /* records that are no HTML page */
    uint64_t too_short;
    uint64_t failed_inputs;
};

struct run {
    const struct options *opt;
    struct counters count;
    struct page *pages;
    size_t n_pages, cap_pages;
    struct bc_simhash_index *index;
    struct record *records;  /* uthash table of the pages' record ids */
    struct name_seen *names; /* uthash table of the pages' names */
    bool nomem;
    bool write_failed;
    unsigned char *buf; /* READ_BUF */
};

/* ------------------------------------------------------------------ */
/* One page's text into a fingerprint.                                 */

/* The text sink of the link extractor feeds the simhash. */
static void on_text(void *user, const char *text, size_t len)
{
    bc_simhash_feed_text(user, text, len);
}

struct fingerprinter {
    struct bc_simhash sh;
    struct bc_links *links;
};

static enum bc_status fp_start(struct fingerprinter *f, const struct run *r,
                               const char *name)
{
    struct bc_links_config cfg;
    bc_links_config_init(&cfg);
    cfg.on_text = on_text;
    cfg.user = &f->sh;
    enum bc_status st = bc_simhash_init(&f->sh, &r->opt->sh);
    if (st != BC_OK)
        return st;
    return bc_links_create(&cfg, name, strlen(name), &f->links);
}

static enum bc_status fp_feed(struct fingerprinter *f, const void *p, size_t n)
{
    return bc_links_feed(f->links, p, n);
}

/* A name and the line's end; \t, \n and \ in it escaped as \t, \n
 * and \\, so that a line is always one page. */
static void print_name(const char *s)
{
    for (; *s; s++) {
        if (*s == '\t')
            fputs("\\t", stdout);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else if (*s == '\\')
            fputs("\\\\", stdout);
        else
            putchar(*s);
    }
    putchar('\n');
}

/* One line of --fingerprints. */
static void print_fingerprint(struct run *r, const struct page *pg)
{
    if (pg->has_fp)
        printf("%016" PRIx64 "\t%" PRIu64 "\t", pg->fp, pg->shingles);
    else
        printf("-\t%" PRIu64 "\t", pg->shingles);
    print_name(pg->name);
    if (ferror(stdout))
        r->write_failed = true;
}

/*
 * The page is complete: take its fingerprint, find its cluster, keep it.
 * Frees the extractor. Returns BC_OK or BC_ERR_NOMEM.
 */
/* A new page named name at the end of r->pages, zeroed but for its name
 * and leader (itself); not counted in r->n_pages yet. Returns BC_OK or
 * BC_ERR_NOMEM. */
static enum bc_status new_page(struct run *r, const char *name,
                               struct page **out)
{
    if (r->n_pages == r->cap_pages) {
        size_t cap = r->cap_pages ? 2 * r->cap_pages : 1024;
        struct page *p = realloc(r->pages, cap * sizeof(*p));
        if (p == NULL)
            return BC_ERR_NOMEM;
        r->pages = p;
        r->cap_pages = cap;
    }
    size_t len = strlen(name);
    struct name_seen *n = malloc(sizeof(*n) + len + 1);
    if (n == NULL)
        return BC_ERR_NOMEM;
    n->page = r->n_pages;
    memcpy(n->name, name, len + 1);
    HASH_ADD_KEYPTR(hh, r->names, n->name, len, n);
    if (n->hh.tbl == NULL) {
        free(n); /* no first table (HASH_NONFATAL_OOM) */
        return BC_ERR_NOMEM;
    }
    struct page *pg = &r->pages[r->n_pages];
    memset(pg, 0, sizeof(*pg));
    pg->name = strdup(name);
    if (pg->name == NULL)
        return BC_ERR_NOMEM;
    pg->leader = r->n_pages;
    *out = pg;
    return BC_OK;
}

/* The page already taken under name (RECRAWLS), or NULL. */
static const struct name_seen *name_taken(const struct run *r, const char *name)
{
    struct name_seen *n;
    HASH_FIND(hh, r->names, name, strlen(name), n);
    return n;
}

/* The page is kept: counted, or with --fingerprints printed and
 * forgotten. */
static void keep_page(struct run *r, struct page *pg)
{
    r->n_pages++;
    if (r->opt->fingerprints) {
        print_fingerprint(r, pg);
        free(pg->name);
        r->n_pages--;
    }
}

/*
 * Remember pg, the page at index page of r->pages (not kept with
 * --fingerprints), as the page of WARC record id (REVISITS). An id seen
 * before keeps its first page. Returns BC_OK or BC_ERR_NOMEM.
 */
static enum bc_status remember_record(struct run *r, const char *id,
                                      const struct page *pg, size_t page)
{
    size_t len = strlen(id);
    struct record *e;
    HASH_FIND(hh, r->records, id, len, e);
    if (e != NULL)
        return BC_OK;
    e = malloc(sizeof(*e) + len + 1);
    if (e == NULL)
        return BC_ERR_NOMEM;
    memset(e, 0, sizeof(*e));
    memcpy(e->id, id, len + 1);
    e->fp = pg->fp;
    e->shingles = pg->shingles;
    e->has_fp = pg->has_fp;
    e->page = page;
    HASH_ADD_KEYPTR(hh, r->records, e->id, len, e);
    if (e->hh.tbl == NULL) {
        /* uthash could not allocate its first table (HASH_NONFATAL_OOM),
         * so the table is still empty. */
        free(e);
        return BC_ERR_NOMEM;
    }
    return BC_OK;
}

/*
 * A revisit record of the record id: when that record was read, a page
 * named name with its fingerprint, in its cluster at its distance
 * (true in *found); otherwise nothing. Returns BC_OK or BC_ERR_NOMEM.
 */
static enum bc_status revisit_page(struct run *r, const char *id,
                                   const char *name, bool *found)
{
    struct record *e;
    struct page *pg;
    HASH_FIND(hh, r->records, id, strlen(id), e);
    *found = e != NULL;
    if (e == NULL)
        return BC_OK;
    if (name_taken(r, name)) {
        r->count.refetched++; /* its URI's page is taken (RECRAWLS) */
        return BC_OK;
    }
    enum bc_status st = new_page(r, name, &pg);
    if (st != BC_OK)
        return st;
    pg->fp = e->fp;
    pg->shingles = e->shingles;
    pg->has_fp = e->has_fp;
    if (!pg->has_fp) {
        r->count.too_short++;
    } else if (!r->opt->fingerprints) {
        pg->leader = r->pages[e->page].leader;
        pg->distance = r->pages[e->page].distance;
    }
    keep_page(r, pg);
    return BC_OK;
}

/*
 * The page is complete: take its fingerprint, find its cluster, keep it;
 * remember it as the page of WARC record id when id is not NULL. Frees
 * the extractor. Returns BC_OK or BC_ERR_NOMEM.
 */
static enum bc_status fp_end(struct fingerprinter *f, struct run *r,
                             const char *name, const char *id)
{
    struct page *pg;
    enum bc_status st = bc_links_finish(f->links);
    bc_links_free(f->links);
    f->links = NULL;
    if (st != BC_OK)
        return st;
    const struct name_seen *taken = name_taken(r, name);
    if (taken) {
        /* A recrawl of a URI already taken: no page; its response is the
         * URI's page for the revisits that name it (RECRAWLS). */
        r->count.refetched++;
        struct page again = {.shingles = bc_simhash_shingles(&f->sh)};
        again.has_fp = bc_simhash_final(&f->sh, &again.fp);
        return id != NULL && id[0] != '\0'
                   ? remember_record(r, id, &again, taken->page)
                   : BC_OK;
    }
    st = new_page(r, name, &pg);
    if (st != BC_OK)
        return st;
    size_t page = r->n_pages;
    pg->shingles = bc_simhash_shingles(&f->sh);
    pg->has_fp = bc_simhash_final(&f->sh, &pg->fp);
    if (!pg->has_fp) {
        r->count.too_short++;
    } else if (!r->opt->fingerprints) {
        struct bc_simhash_match m;
        bool found;
        st = bc_simhash_index_test_and_add(r->index, pg->fp, r->n_pages, &m,
                                           &found);
        if (st != BC_OK) {
            free(pg->name);
            return st;
        }
        if (found) {
            pg->leader = (size_t)m.id;
            pg->distance = m.distance;
        }
    }
    keep_page(r, pg);
    return id != NULL && id[0] != '\0' ? remember_record(r, id, pg, page)
                                       : BC_OK;
}

/* ------------------------------------------------------------------ */
/* Input: a buffered reader over zlib's gzFile (which reads a plain file */
/* as it is, and gzip members one after the other).                   */

struct reader {
    gzFile gz;
    const char *path;
    unsigned char *buf;
    size_t pos, len;
    uint64_t offset; /* uncompressed bytes consumed before buf[pos] */
    bool eof, error;
};

/* Refill when empty; false at the end or on an error (r->error). */
static bool rd_fill(struct reader *rd)
{
    if (rd->pos < rd->len)
        return true;
    if (rd->eof || rd->error)
        return false;
    int n = gzread(rd->gz, rd->buf, READ_BUF);
    if (n < 0) {
        rd->error = true;
        return false;
    }
    rd->pos = 0;
    rd->len = (size_t)n;
    if (n == 0) {
        int zerr;
        gzerror(rd->gz, &zerr);
        if (zerr != Z_OK)
            rd->error = true; /* e.g. a gzip member cut short */
        rd->eof = true;
        return false;
    }
    return true;
}

static void rd_skip(struct reader *rd, size_t n)
{
    rd->pos += n;
    rd->offset += n;
}

/*
 * Read bytes up to and including the first empty line (CRLF CRLF, or LF
 * LF), at most limit of them, into *out (NUL-terminated, *out_len bytes,
 * the empty line included; *cap its allocation). true when the empty
 * line came; false at the end of input (before any byte: *out_len 0),
 * after limit bytes, or when *out could not grow (*out_len < limit and
 * input left).
 */
static bool rd_head(struct reader *rd, char **out, size_t *out_len, size_t *cap,
                    uint64_t limit)
{
    size_t len = 0;
    *out_len = 0;
    while (len < limit && rd_fill(rd)) {
        unsigned char c = rd->buf[rd->pos];
        rd_skip(rd, 1);
        if (len + 2 > *cap) {
            size_t ncap = *cap ? 2 * *cap : 4096;
            char *p = realloc(*out, ncap);
            if (p == NULL)
                return false;
            *out = p;
            *cap = ncap;
        }
        (*out)[len++] = (char)c;
        (*out)[len] = '\0';
        *out_len = len;
        if (c == '\n' &&
            ((len >= 2 && (*out)[len - 2] == '\n') ||
             (len >= 3 && (*out)[len - 2] == '\r' && (*out)[len - 3] == '\n')))
            return true;
    }
    return false;
}

/*
 * The value of header field name in a head (lines "Name: value"), with
 * blanks trimmed, copied into out (cap bytes, cut to fit); false when
 * the field is absent. The first line (start line) is not a field.
 */
static bool field(const char *head, const char *name, char *out, size_t cap)
{
    size_t nlen = strlen(name);
    const char *line = strchr(head, '\n');
    while (line != NULL && line[1] != '\0') {
        line++;
        const char *eol = strchr(line, '\n');
        if (eol == NULL)
            eol = line + strlen(line);
        if ((size_t)(eol - line) > nlen && line[nlen] == ':' &&
            strncasecmp(line, name, nlen) == 0) {
            const char *v = line + nlen + 1;
            const char *e = eol;
            while (v < e && (*v == ' ' || *v == '\t'))
                v++;
            while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
                e--;
            size_t n = (size_t)(e - v) < cap - 1 ? (size_t)(e - v) : cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return true;
        }
        line = *eol ? eol : NULL;
    }
    return false;
}

/* Does the list s (comma-separated, any case) hold token tok? */
static bool has_token(const char *s, const char *tok)
{
    size_t n = strlen(tok);
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        const char *start = s;
        while (*s && *s != ',' && *s != ';')
            s++;
        const char *end = s;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if ((size_t)(end - start) == n && strncasecmp(start, tok, n) == 0)
            return true;
        while (*s && *s != ',')
            s++;
    }
    return false;
}

/* Does s end with suffix (any case)? */
static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* Is this media type HTML (text/html, application/xhtml+xml)? */
static bool html_type(const char *type)
{
    return strncasecmp(type, "text/html", 9) == 0 ||
           strncasecmp(type, "application/xhtml+xml", 21) == 0;
}

/* ------------------------------------------------------------------ */
/* A response record's block: HTTP head, then the body de-chunked and  */
/* inflated into the fingerprinter.                                    */

struct body {
    struct fingerprinter fp;
    bool started;   /* fp_start() succeeded */
    bool chunked;   /* Transfer-Encoding: chunked */
    bool inflating; /* Content-Encoding: gzip, x-gzip or deflate */
    bool raw_tried; /* deflate restarted as a raw stream */
    bool bad;       /* framing or coding broken: the rest is ignored */
    bool ended;
    struct bc_chunked ch;
    z_stream z;
    unsigned char *zout; /* INFLATE_BUF */
};

/* Decoded body bytes into the extractor. */
static enum bc_status body_decoded(struct body *b, const unsigned char *p,
                                   size_t n)
{
    if (!b->inflating)
        return fp_feed(&b->fp, p, n);
    bool first = b->z.total_in == 0 && !b->raw_tried;
    b->z.next_in = (unsigned char *)(uintptr_t)p;
    b->z.avail_in = (uInt)n;
    while (b->z.avail_in > 0 && !b->ended) {
        b->z.next_out = b->zout;
        b->z.avail_out = INFLATE_BUF;
        int zr = inflate(&b->z, Z_NO_FLUSH);
        if (zr == Z_DATA_ERROR && first) {
            /* "deflate" sent as a raw stream, as some servers do: start
             * again without the zlib header (the fetcher does too). */
            b->raw_tried = true;
            inflateEnd(&b->z);
            memset(&b->z, 0, sizeof(b->z));
            if (inflateInit2(&b->z, -15) != Z_OK)
                return BC_ERR_NOMEM;
            b->z.next_in = (unsigned char *)(uintptr_t)p;
            b->z.avail_in = (uInt)n;
            first = false;
            continue;
        }
        if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
            b->bad = true;
            return zr == Z_MEM_ERROR ? BC_ERR_NOMEM : BC_OK;
        }
        size_t got = INFLATE_BUF - b->z.avail_out;
        if (got > 0) {
            enum bc_status st = fp_feed(&b->fp, b->zout, got);
            if (st != BC_OK)
                return st;
        }
        if (zr == Z_STREAM_END)
            b->ended = true; /* bytes after the stream are ignored */
        else if (zr == Z_BUF_ERROR)
            break;
    }
    return BC_OK;
}

/* Body bytes as archived (framing and coding on) into the pipeline. */
static enum bc_status body_wire(struct body *b, const unsigned char *p,
                                size_t n)
{
    if (b->bad)
        return BC_OK;
    if (!b->chunked)
        return body_decoded(b, p, n);
    while (n > 0) {
        const char *d;
        size_t dn, used;
        enum bc_chunked_status cs =
            bc_chunked_decode(&b->ch, (const char *)p, n, &used, &d, &dn);
        if (dn > 0) {
            enum bc_status st = body_decoded(b, (const unsigned char *)d, dn);
            if (st != BC_OK)
                return st;
        }
        p += used;
        n -= used;
        if (cs == BC_CHUNKED_BAD)
            b->bad = true;
        if (cs != BC_CHUNKED_MORE)
            break;
    }
    return BC_OK;
}

/*
 * Decide from the HTTP head whether the block is an HTML page; start its
 * decoding. Returns true when the body is to be read.
 */
static bool body_start(struct body *b, const char *head)
{
    char v[256];
    unsigned status = 0;
    if (strncmp(head, "HTTP/", 5) != 0)
        return false;
    const char *sp = strchr(head, ' ');
    if (sp == NULL || sscanf(sp + 1, "%3u", &status) != 1 || status < 200 ||
        status > 299)
        return false;
    if (!field(head, "Content-Type", v, sizeof(v)) || !html_type(v))
        return false;
    if (field(head, "Transfer-Encoding", v, sizeof(v))) {
        if (strcasecmp(v, "chunked") != 0)
            return false; /* another transfer coding: not decoded here */
        b->chunked = true;
        bc_chunked_init(&b->ch);
    }
    if (field(head, "Content-Encoding", v, sizeof(v)) &&
        !has_token(v, "identity")) {
        if (!has_token(v, "gzip") && !has_token(v, "x-gzip") &&
            !has_token(v, "deflate"))
            return false; /* br, zstd, ...: the crawl does not offer them */
        b->inflating = true;
    }
    return true;
}

/*
 * Is the head of a revisit record of profile a page (REVISITS)? An
 * identical-payload-digest revisit when a response with this head would
 * be one (2xx, HTML: its payload is the original's, so no coding is
 * decoded); a server-not-modified revisit when its head is a 304.
 */
static bool revisit_start(const char *head, const char *profile)
{
    unsigned status = 0;
    const char *sp = strchr(head, ' ');
    if (strncmp(head, "HTTP/", 5) != 0 || sp == NULL ||
        sscanf(sp + 1, "%3u", &status) != 1)
        return false;
    if (ends_with(profile, PROFILE_NOT_MODIFIED))
        return status == 304;
    char v[256];
    return status >= 200 && status <= 299 &&
           field(head, "Content-Type", v, sizeof(v)) && html_type(v);
}

/* ------------------------------------------------------------------ */
/* WARC files.                                                         */

/* A failed input: said on stderr, counted. */
static void input_error(struct run *r, const char *path, uint64_t offset,
                        const char *what)
{
    fprintf(stderr, "neardup: %s: at byte %" PRIu64 " (uncompressed): %s\n",
            path, offset, what);
    r->count.failed_inputs++;
}

/* Consume n bytes of block, handing each piece to b (NULL: skip). */
static enum bc_status consume_block(struct reader *rd, uint64_t n,
                                    struct body *b, bool *cut)
{
    *cut = false;
    while (n > 0) {
        if (!rd_fill(rd)) {
            *cut = true;
            return BC_OK;
        }
        size_t avail = rd->len - rd->pos;
        size_t take = avail < n ? avail : (size_t)n;
        if (b != NULL) {
            enum bc_status st = body_wire(b, rd->buf + rd->pos, take);
            if (st != BC_OK)
                return st;
        }
        rd_skip(rd, take);
        n -= take;
    }
    return BC_OK;
}

/*
 * One record's block: for an HTML page, its head and then its body into
 * a fingerprint. Returns BC_OK (page taken or skipped), BC_ERR_NOMEM, or
 * BC_ERR_TRUNCATED (the input ended inside the block).
 */
static enum bc_status warc_block(struct run *r, struct reader *rd,
                                 const char *whead, uint64_t len, char **hbuf,
                                 size_t *hcap)
{
    char type[64], ctype[256], uri[8192], id[512], refers[512], profile[256];
    bool cut = false;
    enum bc_status st = BC_OK;
    if (!field(whead, "WARC-Type", type, sizeof(type)))
        type[0] = '\0';
    if (!field(whead, "Content-Type", ctype, sizeof(ctype)))
        ctype[0] = '\0';
    if (!field(whead, "WARC-Record-ID", id, sizeof(id)))
        id[0] = '\0';
    if (!field(whead, "WARC-Refers-To", refers, sizeof(refers)))
        refers[0] = '\0';
    if (!field(whead, "WARC-Profile", profile, sizeof(profile)))
        profile[0] = '\0';
    bool http = strncasecmp(ctype, "application/http", 16) == 0;
    bool response = strcmp(type, "response") == 0 && http;
    bool resource = strcmp(type, "resource") == 0 && html_type(ctype);
    bool revisit = strcmp(type, "revisit") == 0 && http &&
                   (ends_with(profile, PROFILE_IDENTICAL) ||
                    ends_with(profile, PROFILE_NOT_MODIFIED));
    if ((!response && !resource && !revisit) ||
        !field(whead, "WARC-Target-URI", uri, sizeof(uri))) {
        r->count.skipped++;
        st = consume_block(rd, len, NULL, &cut);
        return st != BC_OK ? st : cut ? BC_ERR_TRUNCATED : BC_OK;
    }
    struct body b;
    memset(&b, 0, sizeof(b));
    uint64_t left = len;
    if (response || revisit) {
        /* The HTTP head: up to its empty line, inside the block. */
        size_t hlen = 0;
        uint64_t limit = len < MAX_HEADER ? len : MAX_HEADER;
        bool whole = rd_head(rd, hbuf, &hlen, hcap, limit);
        left = len - hlen;
        if (!whole) {
            if (hlen < limit && (rd->eof || rd->error))
                return BC_ERR_TRUNCATED;
            if (hlen < limit)
                return BC_ERR_NOMEM;
            /* No empty line in the block, or a head over MAX_HEADER:
             * no page. */
            r->count.skipped++;
            st = consume_block(rd, left, NULL, &cut);
            return st != BC_OK ? st : cut ? BC_ERR_TRUNCATED : BC_OK;
        }
        if (revisit) {
            /* The head says whether it is a page; the rest of the block
             * (nothing, as crawl writes it) is not read. */
            bool page = revisit_start(*hbuf, profile);
            st = consume_block(rd, left, NULL, &cut);
            if (st != BC_OK || cut)
                return st != BC_OK ? st : BC_ERR_TRUNCATED;
            bool found = false;
            uint64_t refetched = r->count.refetched;
            if (page)
                st = revisit_page(r, refers, uri, &found);
            if (!page)
                r->count.skipped++;
            else if (!found)
                r->count.unresolved++;
            else if (r->count.refetched == refetched)
                r->count.revisits++;
            if (found && r->count.refetched == refetched)
                r->count.pages_warc++;
            return st;
        }
        if (!body_start(&b, *hbuf)) {
            r->count.skipped++;
            st = consume_block(rd, left, NULL, &cut);
            return st != BC_OK ? st : cut ? BC_ERR_TRUNCATED : BC_OK;
        }
    }
    if (b.inflating) {
        b.zout = malloc(INFLATE_BUF);
        if (b.zout == NULL || inflateInit2(&b.z, 15 + 32) != Z_OK) {
            free(b.zout);
            return BC_ERR_NOMEM;
        }
    }
    st = fp_start(&b.fp, r, uri);
    if (st == BC_OK) {
        b.started = true;
        st = consume_block(rd, left, &b, &cut);
    }
    if (b.started && st == BC_OK && !cut) {
        uint64_t refetched = r->count.refetched;
        st = fp_end(&b.fp, r, uri, response ? id : NULL);
        r->count.pages_warc += r->count.refetched == refetched;
    } else if (b.started) {
        bc_links_free(b.fp.links);
    }
    if (b.inflating) {
        inflateEnd(&b.z);
        free(b.zout);
    }
    return st != BC_OK ? st : cut ? BC_ERR_TRUNCATED : BC_OK;
}

/* Every record of a WARC file. Returns false after a message. */
static bool read_warc(struct run *r, struct reader *rd)
{
    char *whead = NULL, *hbuf = NULL;
    size_t wcap = 0, hcap = 0, wlen;
    bool ok = true;
    r->count.warc_files++;
    for (;;) {
        uint64_t at = rd->offset;
        if (!rd_head(rd, &whead, &wlen, &wcap, MAX_HEADER)) {
            if (wlen == 0 && !rd->error && rd->eof)
                break; /* the end, between records */
            if (wlen < MAX_HEADER && !rd->eof && !rd->error) {
                r->nomem = true;
                ok = false;
                break;
            }
            input_error(r, rd->path, at,
                        rd->error            ? "read error or damaged gzip"
                        : wlen >= MAX_HEADER ? "WARC header over 1 MiB"
                                             : "WARC header cut short");
            ok = false;
            break;
        }
        if (strncmp(whead, "WARC/1.", 7) != 0) {
            input_error(r, rd->path, at, "not a WARC record (no WARC/1.x)");
            ok = false;
            break;
        }
        char v[32];
        char *end;
        if (!field(whead, "Content-Length", v, sizeof(v)) || v[0] < '0' ||
            v[0] > '9') {
            input_error(r, rd->path, at, "record without a Content-Length");
            ok = false;
            break;
        }
        errno = 0;
        unsigned long long len = strtoull(v, &end, 10);
        if (errno != 0 || *end != '\0') {
            input_error(r, rd->path, at, "bad Content-Length");
            ok = false;
            break;
        }
        r->count.records++;
        enum bc_status st = warc_block(r, rd, whead, len, &hbuf, &hcap);
        if (st == BC_ERR_NOMEM) {
            r->nomem = true;
            ok = false;
            break;
        }
        if (st != BC_OK) {
            input_error(r, rd->path, at,
                        rd->error ? "read error or damaged gzip"
                                  : "record cut short");
            ok = false;
            break;
        }
        /* The record ends with CRLF CRLF. */
        for (int i = 0; i < 4 && ok; i++) {
            if (!rd_fill(rd) || rd->buf[rd->pos] != "\r\n\r\n"[i]) {
                input_error(r, rd->path, rd->offset,
                            "record not followed by CRLF CRLF");
                ok = false;
            } else {
                rd_skip(rd, 1);
            }
        }
        if (!ok)
            break;
    }
    free(whead);
    free(hbuf);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Files and directories.                                              */

/* The names a directory walk takes. */
static bool wanted_name(const char *name)
{
    return ends_with(name, ".warc") || ends_with(name, ".warc.gz") ||
           ends_with(name, ".html") || ends_with(name, ".htm") ||
           ends_with(name, ".xhtml");
}

/* One file: a WARC if its (decompressed) bytes start with "WARC/", else
 * an HTML page. */
static void read_file(struct run *r, const char *path)
{
    struct reader rd;
    memset(&rd, 0, sizeof(rd));
    rd.path = path;
    rd.buf = r->buf;
    rd.gz = gzopen(path, "rb");
    if (rd.gz == NULL) {
        fprintf(stderr, "neardup: %s: %s\n", path,
                errno ? strerror(errno) : "out of memory");
        r->count.failed_inputs++;
        return;
    }
    gzbuffer(rd.gz, READ_BUF);
    bool filled = rd_fill(&rd);
    if (filled && rd.len - rd.pos >= 5 &&
        memcmp(rd.buf + rd.pos, "WARC/", 5) == 0) {
        read_warc(r, &rd);
    } else if (rd.error) {
        input_error(r, path, 0, "read error or damaged gzip");
    } else {
        struct fingerprinter f = {.links = NULL};
        enum bc_status st = fp_start(&f, r, path);
        r->count.html_files++;
        while (st == BC_OK && rd_fill(&rd)) {
            st = fp_feed(&f, rd.buf + rd.pos, rd.len - rd.pos);
            rd_skip(&rd, rd.len - rd.pos);
        }
        if (st == BC_OK && rd.error) {
            input_error(r, path, rd.offset, "read error or damaged gzip");
            bc_links_free(f.links);
        } else if (st == BC_OK) {
            st = fp_end(&f, r, path, NULL);
        } else {
            bc_links_free(f.links);
        }
        if (st == BC_ERR_NOMEM)
            r->nomem = true;
    }
    gzclose(rd.gz);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory, in name order, its subdirectories walked too (symbolic
 * links to directories are not followed: no loops). */
static void read_dir(struct run *r, const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL) {
        fprintf(stderr, "neardup: %s: %s\n", path, strerror(errno));
        r->count.failed_inputs++;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && !r->nomem) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            char **p = realloc(names, ncap * sizeof(*p));
            if (p == NULL) {
                r->nomem = true;
                break;
            }
            names = p;
            cap = ncap;
        }
        size_t len = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (names[n] == NULL) {
            r->nomem = true;
            break;
        }
        snprintf(names[n], len, "%s%s%s", path, ends_with(path, "/") ? "" : "/",
                 e->d_name);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof(*names), cmp_str);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (!r->nomem && lstat(names[i], &st) == 0) {
            if (S_ISDIR(st.st_mode))
                read_dir(r, names[i]);
            else if (wanted_name(names[i]) && stat(names[i], &st) == 0 &&
                     S_ISREG(st.st_mode))
                read_file(r, names[i]);
        }
        free(names[i]);
    }
    free(names);
}

/* ------------------------------------------------------------------ */
/* Output.                                                             */

/*
 * The clusters, in order of their first pages, each page in input order:
 * a counting sort of the pages by leader. Returns the clusters of 2 or
 * more, and their pages and the largest in *in_clusters and *largest.
 */
static size_t print_clusters(struct run *r, size_t *in_clusters,
                             size_t *largest)
{
    size_t n = r->n_pages, clusters = 0;
    size_t *size = calloc(n + 1, sizeof(*size));
    size_t *start = calloc(n + 1, sizeof(*start));
    size_t *order = malloc((n + 1) * sizeof(*order));
    *in_clusters = 0;
    *largest = 0;
    if (size == NULL || start == NULL || order == NULL) {
        r->nomem = true;
        goto out_free;
    }
    for (size_t i = 0; i < n; i++)
        size[r->pages[i].leader]++;
    for (size_t i = 0, at = 0; i < n; i++) {
        start[i] = at;
        at += size[i];
    }
    for (size_t i = 0; i < n; i++)
        order[start[r->pages[i].leader]++] = i;
    size_t id = 0;
    for (size_t i = 0, at = 0; i < n; i++) {
        size_t s = size[i];
        if (s == 0)
            continue;
        const struct page *lead = &r->pages[i];
        bool shown = s >= 2 || r->opt->all;
        if (s >= 2) {
            clusters++;
            *in_clusters += s;
            if (s > *largest)
                *largest = s;
        }
        if (shown && lead->has_fp)
            id++;
        for (size_t j = at; j < at + s && shown; j++) {
            const struct page *pg = &r->pages[order[j]];
            if (pg->has_fp)
                printf("%zu\t%u\t", id, pg->distance);
            else
                fputs("-\t-\t", stdout);
            print_name(pg->name);
        }
        at += s;
    }
    if (ferror(stdout))
        r->write_failed = true;
out_free:
    free(size);
    free(start);
    free(order);
    return clusters;
}

/* ------------------------------------------------------------------ */

/* Parse the command line; 0, 2 after a message, -1 after --help or
 * --version. The inputs (arguments not options, and all after "--")
 * go to inputs[0 .. *n_inputs). */
static int parse_args(int argc, char **argv, struct options *o, char **inputs,
                      size_t *n_inputs)
{
    bool options_done = false;
    o->k = BC_SIMHASH_DEFAULT_K;
    bc_simhash_config_init(&o->sh);
    *n_inputs = 0;
    for (int i = 1; i < argc; i++) {
        char name[32];
        const char *val;
        if (options_done || argv[i][0] != '-') {
            inputs[(*n_inputs)++] = argv[i];
            continue;
        }
        if (strcmp(argv[i], "--") == 0) {
            options_done = true;
            continue;
        }
        const char *arg = args_option(argv[i], name, sizeof name, &val);
        bool flag = true;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(arg, "--version") == 0) {
            args_print_version("neardup");
            return -1;
        } else if (strcmp(arg, "--all") == 0) {
            o->all = true;
        } else if (strcmp(arg, "--fingerprints") == 0) {
            o->fingerprints = true;
        } else if (strcmp(arg, "--quiet") == 0) {
            o->quiet = true;
        } else {
            flag = false;
        }
        if (flag) {
            if (val != NULL) {
                fprintf(stderr, "neardup: %s takes no value\n", arg);
                return 2;
            }
            continue;
        }
        if (strcmp(arg, "--k") != 0 && strcmp(arg, "--shingle-words") != 0 &&
            strcmp(arg, "--min-shingles") != 0) {
            fprintf(stderr, "neardup: unknown option %s (see --help)\n", arg);
            return 2;
        }
        if (val == NULL) {
            if (i + 1 >= argc) {
                fprintf(stderr, "neardup: %s needs a value (see --help)\n",
                        arg);
                return 2;
            }
            val = argv[++i];
        }
        uint64_t n;
        if (strcmp(arg, "--k") == 0) {
            if (args_count(val, true, &n) != 0 || n > BC_SIMHASH_MAX_K) {
                fprintf(stderr, "neardup: bad --k: %s (0 to %u)\n", val,
                        BC_SIMHASH_MAX_K);
                return 2;
            }
            o->k = (unsigned)n;
        } else if (strcmp(arg, "--shingle-words") == 0) {
            if (args_count(val, false, &n) != 0 ||
                n > BC_SIMHASH_MAX_SHINGLE_WORDS) {
                fprintf(stderr, "neardup: bad --shingle-words: %s (1 to %u)\n",
                        val, BC_SIMHASH_MAX_SHINGLE_WORDS);
                return 2;
            }
            o->sh.shingle_words = (unsigned)n;
        } else {
            if (args_count(val, false, &n) != 0) {
                fprintf(stderr, "neardup: bad --min-shingles: %s\n", val);
                return 2;
            }
            o->sh.min_shingles = n;
        }
    }
    if (o->fingerprints && o->all) {
        fprintf(stderr, "neardup: --fingerprints prints every page already: "
                        "it takes no --all\n");
        return 2;
    }
    if (*n_inputs == 0) {
        fprintf(stderr, "neardup: no input (see --help)\n");
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;
    struct run r;
    size_t n_inputs;
    int rc = 1;
    char **inputs = calloc((size_t)argc + 1, sizeof(*inputs));

    memset(&opt, 0, sizeof(opt));
    memset(&r, 0, sizeof(r));
    if (inputs == NULL) {
        fprintf(stderr, "neardup: out of memory\n");
        return 1;
    }
    int prc = parse_args(argc, argv, &opt, inputs, &n_inputs);
    if (prc != 0) {
        free(inputs);
        return prc < 0 ? 0 : prc;
    }
    /* Every input exists, before any is read. */
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat st;
        if (stat(inputs[i], &st) != 0) {
            fprintf(stderr, "neardup: %s: %s\n", inputs[i], strerror(errno));
            free(inputs);
            return 2;
        }
    }
    r.opt = &opt;
    r.buf = malloc(READ_BUF);
    struct bc_simhash_index_config icfg;
    bc_simhash_index_config_init(&icfg);
    icfg.k = opt.k;
    enum bc_status st =
        r.buf ? bc_simhash_index_create(&icfg, &r.index) : BC_ERR_NOMEM;
    if (st != BC_OK) {
        fprintf(stderr, "neardup: cannot create the index: %s\n",
                bc_strerror(st));
        goto out_free;
    }
    for (size_t i = 0; i < n_inputs && !r.nomem; i++) {
        struct stat sb;
        if (stat(inputs[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            read_dir(&r, inputs[i]);
        else
            read_file(&r, inputs[i]);
    }
    if (r.nomem) {
        fprintf(stderr, "neardup: out of memory\n");
        goto out_free;
    }
    size_t clusters = 0, in_clusters = 0, largest = 0;
    if (!opt.fingerprints)
        clusters = print_clusters(&r, &in_clusters, &largest);
    if (r.nomem) {
        fprintf(stderr, "neardup: out of memory\n");
        goto out_free;
    }
    if (fflush(stdout) != 0 || ferror(stdout) || r.write_failed) {
        fprintf(stderr, "neardup: write error: %s\n", strerror(errno));
        goto out_free;
    }
    if (!opt.quiet) {
        uint64_t pages = r.count.pages_warc + r.count.html_files;
        fprintf(stderr,
                "neardup: %" PRIu64 " pages (%" PRIu64 " from %" PRIu64
                " WARC files, %" PRIu64 " HTML files), %" PRIu64
                " too short (under %" PRIu64 " shingles)",
                pages, r.count.pages_warc, r.count.warc_files,
                r.count.html_files, r.count.too_short, opt.sh.min_shingles);
        if (r.count.warc_files > 0)
            fprintf(stderr,
                    "; %" PRIu64 " WARC records, %" PRIu64 " not HTML pages",
                    r.count.records, r.count.skipped);
        fputc('\n', stderr);
        if (r.count.refetched > 0)
            fprintf(stderr,
                    "neardup: %" PRIu64 " records of a URI read before "
                    "(recrawls: no page of their own)\n",
                    r.count.refetched);
        if (r.count.revisits + r.count.unresolved > 0)
            fprintf(stderr,
                    "neardup: %" PRIu64 " revisit records: %" PRIu64
                    " read as their original's page, %" PRIu64
                    " of a record not read (no page)\n",
                    r.count.revisits + r.count.unresolved, r.count.revisits,
                    r.count.unresolved);
        if (!opt.fingerprints)
            fprintf(stderr,
                    "neardup: k %u: %zu clusters of 2 or more holding %zu "
                    "pages (the largest %zu), %zu pages alone\n",
                    opt.k, clusters, in_clusters, largest,
                    (size_t)(pages - r.count.too_short) - in_clusters);
    }
    rc = r.count.failed_inputs > 0 ? 1 : 0;

out_free:
    for (size_t i = 0; i < r.n_pages; i++)
        free(r.pages[i].name);
    struct record *e, *tmp;
    HASH_ITER(hh, r.records, e, tmp)
    {
        HASH_DEL(r.records, e);
        free(e);
    }
    struct name_seen *n, *ntmp;
    HASH_ITER(hh, r.names, n, ntmp)
    {
        HASH_DEL(r.names, n);
        free(n);
    }
    free(r.pages);
    bc_simhash_index_free(r.index);
    free(r.buf);
    free(inputs);
    return rc;
}
