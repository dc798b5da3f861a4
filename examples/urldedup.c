/*
 * urldedup - a streaming `sort -u` for URLs that knows equivalent spellings.
 *
 * Reads one URL per line on stdin. By default writes each URL whose seen-key
 * is new, in canonical form, to stdout: the URL is resolved (against --base)
 * and normalized by frontier/url, its seen-key (the canonical URL with the
 * opt-in rules applied) goes through the two-tier seen-test of dedup/seen
 * (Bloom filter, then an exact LRU), and only NEW keys are printed.
 *
 *   urldedup < urls                       new URLs, canonical
 *   urldedup --canonical < urls           one line out per line in: the
 *                                         canonical URL or ERROR <reason>
 *   urldedup --state seen.bloom < urls    remember across runs
 *   urldedup --state seen.bloom --dry-run < more
 *                                         what would be new, changing
 *                                         nothing
 *   urldedup --window 100000 < urls       a sort -u that forgets: a URL
 *                                         comes out again once 100000
 *                                         other new URLs came out
 *   urldedup --window-time 7d --state s.win < urls
 *                                         ... once 7 days have passed
 *   urldedup --layout counting --state s.cb --forget gone.txt < urls
 *                                         the URLs of gone.txt are new
 *                                         again
 *
 * Invalid lines never stop the run: each is reported on stderr with its
 * line number and counted. Lines may be of any length and contain any byte
 * (NUL included); a line longer than the read buffer (4 MiB) is rejected
 * as too long. Input is read in large blocks and output written in large
 * blocks.
 *
 * A Bloom filter that holds more URLs than it was sized for is never
 * silent: one warning on stderr (then new URLs are lost as probably seen).
 *
 * Exit status: 0 success (invalid lines included), 1 runtime failure (I/O,
 * a damaged state file, out of memory), 2 usage error (an unknown option,
 * a bad value, a --state that cannot be read or written: checked before
 * any input is read).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bc_clock.h"
#include "args.h"
#include "bloomcrawl/seen.h"
#include "bloomcrawl/url.h"

#define READ_BUF  (4u << 20) /* also the longest line accepted */
#define WRITE_BUF (1u << 20)

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: urldedup [options] < urls > new-urls\n"
        "\n"
        "Reads one URL per line. Writes each URL seen for the first time, in\n"
        "canonical form (RFC 3986 resolution and normalization: case, "
        "escapes,\n"
        "dot-segments, default ports, IDN, IP addresses, no fragment), so "
        "that\n"
        "equivalent spellings count once. Invalid lines are reported on "
        "stderr\n"
        "with their line number and skipped.\n"
        "\n"
        "Modes:\n"
        "  --canonical        no dedup: one line out per line in, the "
        "canonical\n"
        "                     URL or \"ERROR <reason>\"\n"
        "  --dry-run          print what would be new; add nothing to the\n"
        "                     filter or the state (each line is tested "
        "against\n"
        "                     the state as loaded, so a repeat within the "
        "input\n"
        "                     is printed again)\n"
        "  --stats            print every counter to stderr at the end\n"
        "\n"
        "Resolution:\n"
        "  --base URL         resolve each line against URL (a blank line "
        "is URL\n"
        "                     itself, RFC 3986 5.4.1; without --base it is "
        "an error)\n"
        "  --max-length N     longest canonical URL accepted (default %u)\n"
        "\n"
        "Seen-test (Bloom filter, then an exact LRU of recent URLs):\n"
        "  --expect N         URLs to size the Bloom filter for (default %u)\n"
        "  --fp-rate P        its false-positive rate (default %g, or 1%%)\n"
        "  --lru N            LRU entries (default %u; 0: no LRU)\n"
        "  --layout L         classic, blocked (default) or counting (4x "
        "the\n"
        "                     memory of classic; the only one that can "
        "--forget)\n"
        "  --state FILE       load the filter from FILE if it exists\n"
        "                     (its sizing then wins over --expect, --fp-rate\n"
        "                     and --layout), save it back at the end\n"
        "                     (atomically)\n"
        "\n"
        "Forgetting:\n"
        "  --window N         remember only the last N new URLs: a URL is "
        "not\n"
        "                     printed again before N other new URLs were,\n"
        "                     and is once 4/3 N + 3 were (the slack)\n"
        "  --window-time D    remember a URL for D (e.g. 7d, 12h, 30m, 45s):\n"
        "                     it comes out again between D and 4/3 D\n"
        "                     after it came out (the slack). Kept in\n"
        "                     generations of D/3: --fp-rate holds\n"
        "                     while no D/3 prints more than --expect/3\n"
        "                     URLs (--expect spread over D; a burst of\n"
        "                     more: a warning); with --state across runs\n"
        "  --clock MS         the time now, ms since the epoch, instead of "
        "the\n"
        "                     system clock (replays, tests)\n"
        "  --forget FILE      forget the URLs of FILE (one per line) before\n"
        "                     reading: they are new again (--layout "
        "counting)\n"
        "\n"
        "Opt-in rules (they change which URLs count as the same, never the\n"
        "URL printed; each may merge different pages on some sites):\n"
        "  --sort-query           sort query parameters by name (stable)\n"
        "  --strip-param NAME     drop query parameter NAME; NAME* is a "
        "prefix\n"
        "                         (repeatable: --strip-param 'utm_*')\n"
        "  --strip-session-ids    drop jsessionid, phpsessid, sid, sessionid\n"
        "  --collapse-slashes     \"//\" in the path counts as \"/\"\n"
        "  --strip-userinfo       ignore user:password@\n"
        "\n"
        "  --help             this text\n"
        "  --version          the version\n"
        "\n"
        "Exit status: 0 success, 1 runtime failure, 2 usage error (unknown\n"
        "option, bad value, a --state that cannot be read or written).\n",
        BC_URL_MAX_LEN_DEFAULT, BC_SEEN_DEFAULT_EXPECTED,
        BC_SEEN_DEFAULT_FP_RATE, BC_SEEN_DEFAULT_LRU);
}

/* The statuses a line can be rejected with: the reason word of
 * "ERROR <reason>" and the --stats counters. (A table, not a switch: the
 * library's status enum also holds codes no line can get.) */
static const struct {
    enum bc_status status;
    const char *reason;
} line_errors[] = {
    {BC_ERR_URL_EMPTY, "empty"},
    {BC_ERR_URL_SCHEME, "unsupported-scheme"},
    {BC_ERR_URL_NO_BASE, "no-base"},
    {BC_ERR_URL_HOST, "bad-host"},
    {BC_ERR_URL_PORT, "bad-port"},
    {BC_ERR_URL_IDN, "bad-idn"},
    {BC_ERR_URL_IPV4, "bad-ipv4"},
    {BC_ERR_URL_IPV6, "bad-ipv6"},
    {BC_ERR_URL_TOO_LONG, "too-long"},
    {BC_ERR_URL_BUFFER, "too-long"},
    {BC_ERR_NOMEM, "out-of-memory"},
};
#define N_LINE_ERRORS (sizeof line_errors / sizeof *line_errors)

static size_t error_index(enum bc_status st)
{
    for (size_t i = 0; i < N_LINE_ERRORS; i++)
        if (line_errors[i].status == st)
            return i;
    return N_LINE_ERRORS; /* "error" */
}

static const char *reason(enum bc_status st)
{
    size_t i = error_index(st);
    return i < N_LINE_ERRORS ? line_errors[i].reason : "error";
}

struct options {
    bool canonical, dry_run, stats;
    bool sized; /* --expect, --fp-rate or --layout given */
    const char *base, *state;
    const char *forget;         /* --forget FILE */
    bool has_clock;             /* --clock given */
    uint64_t clock;             /* its value */
    struct bc_seen_config seen; /* seen.kind: a window's, else layout */
    enum bc_seen_kind layout;   /* --layout's kind */
    struct bc_url_policy policy;
};

/* Is tier 1 of this kind a window filter (count or time)? */
static bool windowed(enum bc_seen_kind kind)
{
    return kind == BC_SEEN_WINDOW_COUNT || kind == BC_SEEN_WINDOW_TIME;
}

struct counters {
    uint64_t lines, valid, invalid, by_error[N_LINE_ERRORS + 1];
    uint64_t verdict[3]; /* by enum bc_seen_verdict */
    uint64_t written;
};

/* Buffered stdout: one fwrite per megabyte. */
struct output {
    char *buf;
    size_t len;
    bool failed;
};

static void out_flush(struct output *o)
{
    if (o->len > 0 && !o->failed && fwrite(o->buf, 1, o->len, stdout) != o->len)
        o->failed = true;
    o->len = 0;
}

static void out_line(struct output *o, const char *s, size_t n)
{
    if (WRITE_BUF - o->len < n + 1) {
        out_flush(o);
        if (n + 1 > WRITE_BUF) {
            if (!o->failed &&
                (fwrite(s, 1, n, stdout) != n || fputc('\n', stdout) == EOF))
                o->failed = true;
            return;
        }
    }
    memcpy(o->buf + o->len, s, n);
    o->buf[o->len + n] = '\n';
    o->len += n + 1;
}

/* Parse the command line; returns 0, or 2 after a message (usage error),
 * or -1 after --help. */
static int parse_args(int argc, char **argv, struct options *o,
                      const char **strip)
{
    static const char *const value_options[] = {
        "--base",    "--state",       "--strip-param", "--expect",
        "--fp-rate", "--lru",         "--max-length",  "--layout",
        "--window",  "--window-time", "--clock",       "--forget"};
    bc_seen_config_init(&o->seen);
    o->layout = o->seen.kind;
    for (int i = 1; i < argc; i++) {
        char name[32];
        const char *val;
        const char *arg = args_option(argv[i], name, sizeof name, &val);
        bool flag = true;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(arg, "--version") == 0) {
            args_print_version("urldedup");
            return -1;
        } else if (strcmp(arg, "--canonical") == 0) {
            o->canonical = true;
        } else if (strcmp(arg, "--dry-run") == 0) {
            o->dry_run = true;
        } else if (strcmp(arg, "--stats") == 0) {
            o->stats = true;
        } else if (strcmp(arg, "--sort-query") == 0) {
            o->policy.rules |= BC_URL_SORT_QUERY;
        } else if (strcmp(arg, "--strip-session-ids") == 0) {
            o->policy.rules |= BC_URL_STRIP_SESSION_IDS;
        } else if (strcmp(arg, "--collapse-slashes") == 0) {
            o->policy.rules |= BC_URL_COLLAPSE_SLASHES;
        } else if (strcmp(arg, "--strip-userinfo") == 0) {
            o->policy.rules |= BC_URL_STRIP_USERINFO;
        } else {
            flag = false;
        }
        if (flag) {
            if (val != NULL) {
                fprintf(stderr, "urldedup: %s takes no value\n", arg);
                return 2;
            }
            continue;
        }
        size_t known = 0;
        while (known < sizeof value_options / sizeof *value_options &&
               strcmp(arg, value_options[known]) != 0)
            known++;
        if (known == sizeof value_options / sizeof *value_options) {
            fprintf(stderr, "urldedup: unknown option %s (see --help)\n", arg);
            return 2;
        }
        if (val == NULL) {
            if (i + 1 >= argc) {
                fprintf(stderr, "urldedup: %s needs a value (see --help)\n",
                        arg);
                return 2;
            }
            val = argv[++i];
        }
        uint64_t n;
        if (strcmp(arg, "--base") == 0) {
            o->base = val;
        } else if (strcmp(arg, "--state") == 0) {
            o->state = val;
        } else if (strcmp(arg, "--strip-param") == 0) {
            if (val[0] == '\0') {
                fprintf(stderr, "urldedup: --strip-param needs a name\n");
                return 2;
            }
            strip[o->policy.strip_params_count++] = val;
        } else if (strcmp(arg, "--expect") == 0) {
            if (args_count(val, false, &n) != 0) {
                fprintf(stderr, "urldedup: bad --expect: %s\n", val);
                return 2;
            }
            o->seen.expected = n;
            o->sized = true;
        } else if (strcmp(arg, "--fp-rate") == 0) {
            if (args_rate(val, &o->seen.fp_rate) != 0) {
                fprintf(stderr,
                        "urldedup: bad --fp-rate: %s (want 0 < P < 1)\n", val);
                return 2;
            }
            o->sized = true;
        } else if (strcmp(arg, "--lru") == 0) {
            if (args_count(val, true, &n) != 0 || n > SIZE_MAX / 2) {
                fprintf(stderr, "urldedup: bad --lru: %s\n", val);
                return 2;
            }
            o->seen.lru_capacity = (size_t)n;
        } else if (strcmp(arg, "--max-length") == 0) {
            if (args_count(val, false, &n) != 0 || n > (1u << 20)) {
                fprintf(stderr, "urldedup: bad --max-length: %s\n", val);
                return 2;
            }
            o->policy.max_len = (size_t)n;
        } else if (strcmp(arg, "--layout") == 0) {
            o->sized = true;
            if (strcmp(val, "classic") == 0)
                o->layout = BC_SEEN_BLOOM_CLASSIC;
            else if (strcmp(val, "blocked") == 0)
                o->layout = BC_SEEN_BLOOM_BLOCKED;
            else if (strcmp(val, "counting") == 0)
                o->layout = BC_SEEN_COUNTING;
            else {
                fprintf(stderr,
                        "urldedup: bad --layout: %s "
                        "(classic, blocked or counting)\n",
                        val);
                return 2;
            }
        } else if (strcmp(arg, "--window") == 0) {
            if (args_count(val, false, &n) != 0) {
                fprintf(stderr, "urldedup: bad --window: %s\n", val);
                return 2;
            }
            o->seen.kind = BC_SEEN_WINDOW_COUNT;
            o->seen.window = n;
        } else if (strcmp(arg, "--window-time") == 0) {
            if (args_duration(val, &n) != 0) {
                fprintf(stderr,
                        "urldedup: bad --window-time: %s (want e.g. 7d, "
                        "12h, 30m, 45s, 500ms)\n",
                        val);
                return 2;
            }
            o->seen.kind = BC_SEEN_WINDOW_TIME;
            o->seen.window = n;
        } else if (strcmp(arg, "--clock") == 0) {
            if (args_count(val, true, &n) != 0) {
                fprintf(stderr, "urldedup: bad --clock: %s\n", val);
                return 2;
            }
            o->has_clock = true;
            o->clock = n;
        } else if (strcmp(arg, "--forget") == 0) {
            o->forget = val;
        }
    }
    if (o->canonical && (o->dry_run || o->state != NULL)) {
        fprintf(stderr, "urldedup: --canonical does no dedup: it takes "
                        "neither --dry-run nor --state\n");
        return 2;
    }
    if (o->canonical && (windowed(o->seen.kind) || o->forget != NULL)) {
        fprintf(stderr, "urldedup: --canonical does no dedup: it takes "
                        "neither --window, --window-time nor --forget\n");
        return 2;
    }
    if (o->layout == BC_SEEN_COUNTING && windowed(o->seen.kind)) {
        fprintf(stderr, "urldedup: --layout counting and a window do not "
                        "go together (a window forgets on its own)\n");
        return 2;
    }
    if (!windowed(o->seen.kind)) /* a window takes the place of a layout */
        o->seen.kind = o->layout;
    if (o->policy.strip_params_count > 0)
        o->policy.strip_params = strip;
    return 0;
}

/* --state names a file to be loaded (if it exists) and saved in place:
 * not a directory, readable if it exists, in a directory where files can
 * be created. Returns 0, or 2 after a message. */
static int check_state_path(const char *path)
{
    struct stat st;
    int err = 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            err = EISDIR;
        else if (access(path, R_OK) != 0)
            err = errno;
    } else if (errno != ENOENT) {
        err = errno;
    }
    char *copy = strdup(path);
    if (err == 0 && copy == NULL)
        err = ENOMEM;
    if (err == 0 && access(dirname(copy), W_OK | X_OK) != 0)
        err = errno;
    free(copy);
    if (err == 0)
        return 0;
    fprintf(stderr, "urldedup: --state %s: %s\n", path, strerror(err));
    return 2;
}

/* Report an invalid line on stderr: number, reason, the start of the line
 * with unprintable bytes as '?'. */
static void report_invalid(uint64_t line_no, enum bc_status st, const char *s,
                           size_t n)
{
    char shown[81];
    size_t k = 0;
    for (; k < n && k < 80; k++)
        shown[k] = (s[k] >= 0x20 && s[k] < 0x7f) ? s[k] : '?';
    shown[k] = '\0';
    fprintf(stderr, "urldedup: line %llu: %s: %s%s\n",
            (unsigned long long)line_no, bc_strerror(st), shown,
            n > 80 ? "..." : "");
}

/* Lines are tested in batches: the seen-test then fetches the memory of
 * the next keys while it tests the current one. */
#define BATCH 64

struct run {
    struct options *opt;
    struct counters *count;
    struct output *out;
    struct bc_seen *seen;
    const struct bc_url *base;
    char *slots; /* BATCH slots of 2 * buf_size: canonical URL, seen-key */
    size_t buf_size;
    size_t pending; /* lines waiting in the batch */
    const char *href[BATCH], *key[BATCH];
    size_t href_len[BATCH], key_len[BATCH];
    enum bc_seen_verdict verdict[BATCH];
    bool nomem_warned;
    uint64_t sized_n;  /* the n the Bloom filter was sized for */
    double target_fpr; /* its predicted rate at sized_n */
    bool saturation_warned;
};

/*
 * Warn once when the Bloom filter holds more keys than it was sized for,
 * or its rate estimated from the fill is over twice its target: new URLs
 * are then lost as PROBABLY_SEEN. The count is O(1) and checked after
 * each batch; the fill (an O(m) popcount) is read when the count is over,
 * at the start and at the end (full). A time window is sized for --expect
 * URLs spread over D, a third of them per generation of D/3: a burst of
 * more in one generation (over capacity) raises its rate; that is checked
 * at the start and at the end. A count window is never over capacity.
 */
static void check_saturation(struct run *r, bool full)
{
    if (r->seen == NULL || r->saturation_warned)
        return;
    const struct bc_window *w = bc_seen_window(r->seen);
    if (w != NULL) {
        struct bc_seen_stats ws;
        if (!full)
            return;
        bc_seen_stats(r->seen, &ws);
        if (!ws.window.over_capacity)
            return;
        r->saturation_warned = true;
        fprintf(stderr,
                "urldedup: warning: the window filter is over capacity: more "
                "than a third of --expect (%llu) URLs came out within one "
                "third of --window-time; its false-positive rate is %.3g "
                "against %.3g (--fp-rate): new URLs are being lost as "
                "probably seen: raise --expect%s\n",
                (unsigned long long)ws.window.capacity, ws.window.fpr_predicted,
                ws.window.p,
                r->opt->state ? " and use a new --state file" : "");
        return;
    }
    const struct bc_bloom *b = bc_seen_bloom(r->seen);
    if (b == NULL) /* a counting filter: --stats */
        return;
    uint64_t inserts = bc_bloom_inserts(b);
    if (!full && inserts <= r->sized_n)
        return;
    struct bc_bloom_stats s;
    bc_bloom_stats(b, &s);
    if (inserts <= r->sized_n && !(s.fpr_estimated > 2.0 * r->target_fpr))
        return;
    r->saturation_warned = true;
    fprintf(stderr,
            "urldedup: warning: the Bloom filter is saturated: %llu URLs in "
            "a filter sized for %llu (--expect), estimated false-positive "
            "rate %.3g against %.3g (--fp-rate); new URLs are being lost as "
            "probably seen: size it for more with --expect%s\n",
            (unsigned long long)inserts, (unsigned long long)r->sized_n,
            s.fpr_estimated, r->target_fpr,
            r->opt->state ? " and a new --state file" : "");
}

/* The system clock in ms since the epoch: what a time window reads. */
static uint64_t now_ms(void)
{
    return bc_wall_ms();
}

/* Test the pending lines and write the new ones, in input order. */
static void flush_batch(struct run *r)
{
    if (r->pending == 0)
        return;
    if (!r->opt->has_clock)
        bc_seen_set_clock(r->seen, now_ms());
    enum bc_status st = bc_seen_test_and_add_batch(r->seen, r->key, r->key_len,
                                                   r->pending, r->verdict);
    if (st != BC_OK && !r->nomem_warned) {
        fprintf(stderr, "urldedup: %s: the LRU stops being exact\n",
                bc_strerror(st));
        r->nomem_warned = true;
    }
    check_saturation(r, false);
    for (size_t i = 0; i < r->pending; i++) {
        r->count->verdict[r->verdict[i]]++;
        if (r->verdict[i] == BC_SEEN_NEW) {
            out_line(r->out, r->href[i], r->href_len[i]);
            r->count->written++;
        }
    }
    r->pending = 0;
}

static void count_error(struct counters *c, enum bc_status st)
{
    c->invalid++;
    c->by_error[error_index(st)]++;
}

static void reject_line(struct run *r, enum bc_status st, const char *s,
                        size_t n)
{
    count_error(r->count, st);
    report_invalid(r->count->lines, st, s, n);
    if (r->opt->canonical) {
        char msg[64];
        int m = snprintf(msg, sizeof msg, "ERROR %s", reason(st));
        out_line(r->out, msg, (size_t)m);
        r->count->written++;
    }
}

static void do_line(struct run *r, const char *s, size_t n)
{
    struct bc_url u;
    enum bc_status st;

    r->count->lines++;
    /* A blank line is the empty reference: with --base it resolves to the
     * base itself (RFC 3986 5.4.1), which the library does; without one it
     * names nothing and is reported as empty. */
    size_t k = 0;
    while (k < n && (unsigned char)s[k] <= 0x20)
        k++;
    if (k == n && r->base == NULL) {
        reject_line(r, BC_ERR_URL_EMPTY, s, n);
        return;
    }
    char *url_buf = r->slots + r->pending * 2 * r->buf_size;
    char *key_buf = url_buf + r->buf_size;
    st = bc_url_normalize(r->base, s, n, &r->opt->policy, url_buf, r->buf_size,
                          &u);
    if (st != BC_OK) {
        reject_line(r, st, s, n);
        return;
    }
    r->count->valid++;
    if (r->opt->canonical) {
        out_line(r->out, u.href, u.len);
        r->count->written++;
        return;
    }
    /* Without opt-in rules the seen-key is the canonical URL itself. */
    const char *key = u.href;
    size_t klen = u.len;
    if (r->opt->policy.rules != 0 || r->opt->policy.strip_params_count > 0) {
        st = bc_url_seen_key(&u, &r->opt->policy, key_buf, r->buf_size, &klen);
        if (st != BC_OK) { /* only BC_ERR_NOMEM: the buffer is large enough */
            reject_line(r, st, s, n);
            return;
        }
        key = key_buf;
    }
    if (r->opt->dry_run) {
        /* Cannot fail: the seen-test and the key are set. */
        enum bc_seen_verdict v = BC_SEEN_NEW;
        (void)bc_seen_peek(r->seen, key, klen, &v);
        r->count->verdict[v]++;
        if (v == BC_SEEN_NEW) {
            out_line(r->out, u.href, u.len);
            r->count->written++;
        }
        return;
    }
    r->href[r->pending] = u.href;
    r->href_len[r->pending] = u.len;
    r->key[r->pending] = key;
    r->key_len[r->pending] = klen;
    if (++r->pending == BATCH)
        flush_batch(r);
}

/* Read stdin in blocks and hand each line (without '\n') to do_line. A
 * line longer than the buffer is rejected as too long. Returns false on a
 * read error. */
static bool read_lines(struct run *r)
{
    char *buf = malloc(READ_BUF);
    size_t have = 0, start = 0;
    bool skipping = false, ok = true;

    if (buf == NULL) {
        fprintf(stderr, "urldedup: out of memory\n");
        return false;
    }
    for (;;) {
        char *nl = memchr(buf + start, '\n', have - start);
        if (nl != NULL) {
            size_t len = (size_t)(nl - (buf + start));
            if (skipping) {
                r->count->lines++;
                reject_line(r, BC_ERR_URL_TOO_LONG, buf + start, len);
                skipping = false;
            } else {
                do_line(r, buf + start, len);
            }
            start += len + 1;
            continue;
        }
        /* No complete line left: keep the partial one, read more. */
        memmove(buf, buf + start, have - start);
        have -= start;
        start = 0;
        if (have == READ_BUF) {
            skipping = true; /* report it when its end comes */
            have = 0;
        }
        size_t got = fread(buf + have, 1, READ_BUF - have, stdin);
        if (got == 0) {
            if (ferror(stdin)) {
                fprintf(stderr, "urldedup: read error: %s\n", strerror(errno));
                ok = false;
            } else if (have > 0 || skipping) {
                /* the last line, without '\n' */
                if (skipping) {
                    r->count->lines++;
                    reject_line(r, BC_ERR_URL_TOO_LONG, buf, have);
                } else {
                    do_line(r, buf, have);
                }
            }
            break;
        }
        have += got;
    }
    free(buf);
    return ok;
}

static void print_stats(const struct options *o, const struct counters *c,
                        const struct bc_seen *seen, double secs)
{
    FILE *f = stderr;

    fprintf(f, "urldedup: lines %llu, valid %llu, invalid %llu, written %llu",
            (unsigned long long)c->lines, (unsigned long long)c->valid,
            (unsigned long long)c->invalid, (unsigned long long)c->written);
    fprintf(f, "; %.3f s, %.2f M lines/s\n", secs,
            secs > 0 ? (double)c->lines / secs / 1e6 : 0.0);
    fprintf(f, "urldedup: invalid by reason:");
    for (size_t i = 0; i < N_LINE_ERRORS; i++) {
        /* BC_ERR_URL_BUFFER shares "too-long" with the one before */
        uint64_t n = c->by_error[i];
        if (i + 1 < N_LINE_ERRORS &&
            strcmp(line_errors[i].reason, line_errors[i + 1].reason) == 0)
            n += c->by_error[++i];
        fprintf(f, " %s %llu", line_errors[i].reason, (unsigned long long)n);
    }
    fprintf(f, " other %llu\n", (unsigned long long)c->by_error[N_LINE_ERRORS]);
    if (seen == NULL)
        return;

    struct bc_seen_stats s;
    bc_seen_stats(seen, &s);
    fprintf(f,
            "urldedup: verdicts%s: new %llu, duplicate %llu, "
            "probably-seen %llu; false positives caught %llu\n",
            o->dry_run ? " (dry run, nothing added)" : "",
            (unsigned long long)c->verdict[BC_SEEN_NEW],
            (unsigned long long)c->verdict[BC_SEEN_DUPLICATE],
            (unsigned long long)c->verdict[BC_SEEN_PROBABLY_SEEN],
            (unsigned long long)s.fp_caught);
    fprintf(f,
            "urldedup: lru: %zu of %zu entries, %zu key bytes, hits %llu, "
            "misses %llu, evictions %llu, complete %s\n",
            s.lru.count, s.lru.capacity, s.lru.key_bytes,
            (unsigned long long)s.lru.hits, (unsigned long long)s.lru.misses,
            (unsigned long long)s.lru.evictions, s.lru_complete ? "yes" : "no");
    if (windowed(s.kind)) {
        fprintf(f,
                "urldedup: window: %s %llu%s, %u generations, k %u, %.2f MiB, "
                "sized for %llu keys in the window at %.3g; live keys %llu, "
                "predicted FPR now %.3g%s\n",
                s.window.kind == BC_WINDOW_COUNT ? "last" : "time",
                (unsigned long long)s.window.window,
                s.window.kind == BC_WINDOW_COUNT ? " URLs" : " ms",
                s.window.generations, s.window.k,
                (double)s.window.bytes / (1024.0 * 1024.0),
                (unsigned long long)s.window.capacity, s.window.p,
                (unsigned long long)s.window.live_keys, s.window.fpr_predicted,
                s.window.over_capacity ? " (over capacity: raise --expect)"
                                       : "");
        return;
    }
    if (s.kind == BC_SEEN_COUNTING) {
        fprintf(f,
                "urldedup: counting: %llu counters (%.2f MiB), k %u, keys "
                "%llu, forgotten %llu, saturated counters %llu, estimated "
                "FPR now %.3g\n",
                (unsigned long long)s.cbloom.m,
                (double)s.cbloom.bytes / (1024.0 * 1024.0), s.cbloom.k,
                (unsigned long long)s.cbloom.keys,
                (unsigned long long)s.forgotten,
                (unsigned long long)s.cbloom.saturated, s.cbloom.fpr_estimated);
        return;
    }
    fprintf(f,
            "urldedup: bloom: %s, %llu bits (%.2f MiB), k %u, seed %llu, "
            "sized for %llu keys\n",
            s.bloom.layout == BC_BLOOM_BLOCKED ? "blocked" : "classic",
            (unsigned long long)s.bloom.m_bits,
            (double)s.bloom.bytes / (1024.0 * 1024.0), s.bloom.k,
            (unsigned long long)s.bloom.seed,
            (unsigned long long)s.bloom.n_expected);
    fprintf(f,
            "urldedup: bloom: inserts %llu, bits set %llu, fill %.4f, "
            "estimated keys %.0f, estimated FPR now %.3g, predicted FPR at "
            "%llu keys %.3g\n",
            (unsigned long long)s.bloom.inserts,
            (unsigned long long)s.bloom.bits_set, s.bloom.fill,
            s.bloom.n_estimated, s.bloom.fpr_estimated,
            (unsigned long long)s.bloom.n_expected, s.bloom.fpr_predicted);
}

/*
 * The state file decides the filter's kind: a --window, --window-time or
 * --forget that it cannot honour is a usage error (2), said before any
 * input is read. Returns 0 or 2 after a message.
 */
static int check_kind(const struct options *o, const struct bc_seen *seen,
                      bool loaded)
{
    const struct bc_window *w = bc_seen_window(seen);
    struct bc_seen_stats s;
    bc_seen_stats(seen, &s);
    if (o->forget != NULL && s.kind != BC_SEEN_COUNTING) {
        fprintf(stderr,
                "urldedup: --forget: %s cannot forget a URL: only "
                "--layout counting can (a window forgets on its own)\n",
                w ? "a window filter" : "a Bloom filter");
        return 2;
    }
    if (!loaded || !windowed(o->seen.kind))
        return 0;
    enum bc_window_kind want =
        o->seen.kind == BC_SEEN_WINDOW_COUNT ? BC_WINDOW_COUNT : BC_WINDOW_TIME;
    if (w == NULL || s.window.kind != want ||
        s.window.window != o->seen.window) {
        fprintf(stderr,
                "urldedup: %s %s holds %s: use the same window or a new "
                "--state file\n",
                want == BC_WINDOW_COUNT ? "--window" : "--window-time",
                o->state,
                w == NULL ? "no window"
                          : (s.window.kind == BC_WINDOW_COUNT
                                 ? "another --window"
                                 : "another --window-time"));
        return 2;
    }
    return 0;
}

/*
 * --forget FILE: each line, normalized as the input is, is forgotten.
 * Lines that are invalid or not held are counted, not errors. Returns 0,
 * or 1 after a message (FILE unreadable).
 */
static int forget_file(struct run *r)
{
    FILE *f = fopen(r->opt->forget, "rb");
    if (f == NULL) {
        fprintf(stderr, "urldedup: --forget %s: %s\n", r->opt->forget,
                strerror(errno));
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t forgotten = 0, unknown = 0, invalid = 0;
    char *url_buf = r->slots, *key_buf = r->slots + r->buf_size;
    while ((n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] == '\n')
            n--;
        struct bc_url u;
        if (bc_url_normalize(r->base, line, (size_t)n, &r->opt->policy, url_buf,
                             r->buf_size, &u) != BC_OK) {
            invalid++;
            continue;
        }
        const char *key = u.href;
        size_t klen = u.len;
        if ((r->opt->policy.rules != 0 ||
             r->opt->policy.strip_params_count > 0) &&
            bc_url_seen_key(&u, &r->opt->policy, key_buf, r->buf_size, &klen) ==
                BC_OK)
            key = key_buf;
        if (bc_seen_forget(r->seen, key, klen) == BC_OK)
            forgotten++;
        else
            unknown++;
    }
    free(line);
    bool bad = ferror(f) != 0;
    fclose(f);
    if (bad) {
        fprintf(stderr, "urldedup: --forget %s: read error\n", r->opt->forget);
        return 1;
    }
    if (r->opt->stats)
        fprintf(stderr,
                "urldedup: forget: %llu forgotten, %llu not held, %llu "
                "invalid\n",
                (unsigned long long)forgotten, (unsigned long long)unknown,
                (unsigned long long)invalid);
    return 0;
}

int main(int argc, char **argv)
{
    struct options opt;
    struct counters count;
    struct output out = {NULL, 0, false};
    struct bc_url base;
    struct bc_url_idn_cache *idn_cache = NULL;
    struct run r;
    const char **strip = calloc((size_t)argc + 1, sizeof *strip);
    char *base_buf = NULL;
    int rc = 1, prc;
    struct timespec t0, t1;

    memset(&opt, 0, sizeof opt);
    memset(&count, 0, sizeof count);
    memset(&r, 0, sizeof r);
    if (strip == NULL) {
        fprintf(stderr, "urldedup: out of memory\n");
        return 1;
    }
    prc = parse_args(argc, argv, &opt, strip);
    if (prc == 0 && opt.state != NULL)
        prc = check_state_path(opt.state);
    if (prc != 0) {
        free(strip);
        return prc < 0 ? 0 : prc;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);

    size_t max_len =
        opt.policy.max_len ? opt.policy.max_len : BC_URL_MAX_LEN_DEFAULT;
    r.opt = &opt;
    r.count = &count;
    r.out = &out;
    r.buf_size = max_len + 1;
    r.slots = malloc(BATCH * 2 * r.buf_size);
    out.buf = malloc(WRITE_BUF);
    if (r.slots == NULL || out.buf == NULL) {
        fprintf(stderr, "urldedup: out of memory\n");
        goto out_free;
    }

    /* Absolute URLs with IDN hosts cost ICU 0.5 to 1 us each; hosts
     * repeat, so remember the last conversions. */
    if (bc_url_idn_cache_create(4096, &idn_cache) != BC_OK) {
        fprintf(stderr, "urldedup: out of memory\n");
        goto out_free;
    }
    opt.policy.idn_cache = idn_cache;

    if (opt.base != NULL) {
        enum bc_status st;
        base_buf = malloc(r.buf_size);
        if (base_buf == NULL) {
            fprintf(stderr, "urldedup: out of memory\n");
            goto out_free;
        }
        st = bc_url_normalize(NULL, opt.base, strlen(opt.base), &opt.policy,
                              base_buf, r.buf_size, &base);
        if (st != BC_OK) {
            fprintf(stderr, "urldedup: --base %s: %s\n", opt.base,
                    bc_strerror(st));
            rc = 2;
            goto out_free;
        }
        r.base = &base;
    }

    if (!opt.canonical) {
        enum bc_status st;
        bool loaded = opt.state != NULL && access(opt.state, F_OK) == 0;
        if (loaded) {
            st = bc_seen_load(opt.state, &opt.seen, &r.seen);
            if (st != BC_OK) {
                fprintf(stderr, "urldedup: cannot load state %s: %s\n",
                        opt.state, bc_strerror(st));
                goto out_free;
            }
        } else {
            st = bc_seen_create(&opt.seen, &r.seen);
            if (st == BC_ERR_INVALID_ARG || st == BC_ERR_TOO_LARGE) {
                fprintf(stderr,
                        "urldedup: bad value for --expect, --fp-rate or "
                        "--window: no filter for %llu URLs at a rate of %g "
                        "(%s)\n",
                        (unsigned long long)opt.seen.expected, opt.seen.fp_rate,
                        bc_strerror(st));
                rc = 2;
                goto out_free;
            }
            if (st != BC_OK) {
                fprintf(stderr, "urldedup: cannot create the seen-test: %s\n",
                        bc_strerror(st));
                goto out_free;
            }
        }
        if (bc_seen_bloom(r.seen) != NULL) {
            struct bc_bloom_stats bs;
            bc_bloom_stats(bc_seen_bloom(r.seen), &bs);
            r.sized_n = bs.n_expected;
            r.target_fpr = bs.fpr_predicted;
            if (loaded && opt.sized)
                fprintf(stderr,
                        "urldedup: note: --expect, --fp-rate and --layout "
                        "are ignored: %s already exists, a filter sized for "
                        "%llu URLs at a rate of %.3g\n",
                        opt.state, (unsigned long long)bs.n_expected,
                        bs.fpr_predicted);
        } else if (loaded && opt.sized) { /* a window or counting filter */
            struct bc_seen_stats ss;
            bc_seen_stats(r.seen, &ss);
            fprintf(stderr,
                    "urldedup: note: --expect, --fp-rate and --layout are "
                    "ignored: %s already exists, a %s filter sized for %llu "
                    "URLs\n",
                    opt.state, windowed(ss.kind) ? "window" : "counting",
                    (unsigned long long)(windowed(ss.kind)
                                             ? ss.window.capacity
                                             : ss.cbloom.n_expected));
        }
        if (check_kind(&opt, r.seen, loaded) != 0) {
            rc = 2;
            goto out_free;
        }
        bc_seen_set_clock(r.seen, opt.has_clock ? opt.clock : now_ms());
        if (opt.forget != NULL && forget_file(&r) != 0)
            goto out_free;
        check_saturation(&r, true);
    }

    if (!read_lines(&r))
        goto out_free;
    flush_batch(&r);
    check_saturation(&r, true);
    out_flush(&out);
    if (out.failed || fflush(stdout) != 0) {
        fprintf(stderr, "urldedup: write error: %s\n", strerror(errno));
        goto out_free;
    }
    if (opt.state != NULL && !opt.dry_run) {
        enum bc_status st = bc_seen_save(r.seen, opt.state);
        if (st != BC_OK) {
            fprintf(stderr, "urldedup: cannot save state %s: %s (%s)\n",
                    opt.state, bc_strerror(st), strerror(errno));
            goto out_free;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (opt.stats)
        print_stats(&opt, &count, r.seen,
                    (double)(t1.tv_sec - t0.tv_sec) +
                        (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    rc = 0;

out_free:
    bc_seen_free(r.seen);
    bc_url_idn_cache_free(idn_cache);
    free(base_buf);
    free(out.buf);
    free(r.slots);
    free(strip);
    return rc;
}
