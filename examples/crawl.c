/*
 * crawl - the sample crawler: the whole URL-seen pipeline at work.
 *
 *     crawl [options] URL...
 *
 * The crawl loop is the library's (bloomcrawl/crawler.h, crawler/crawler.c):
 * it wires the frontier (normalization, limits, robots.txt, the two-tier
 * seen-test, per-host politeness), which decides what to fetch and when,
 * to the fetcher (libcurl multi, streaming link extraction), which fetches
 * it and reports links, redirects and outcomes back into the frontier.
 * This file is its command line: options, progress, output formats,
 * signals and the report. It drives the crawler with bc_crawler_step(),
 * so that a signal is seen between steps, and writes each page the
 * crawler reports (its on_page) to --out.
 *
 * Only this file prints. It shows progress on stderr while it runs (one
 * refreshing line on a terminal, a line every 5 s otherwise), writes one
 * JSON object per fetched URL with --out (each record written whole, in
 * one write(2), so a killed crawl leaves no half record; a write that
 * fails stops the crawl before the page is committed: write_failed()),
 * all counters with --stats-json,
 * and ends with a report of every tier. Ctrl-C stops it cleanly: no new
 * transfers, the ones in flight finish, then the report (a second Ctrl-C
 * abandons them).
 *
 * Defaults are polite for the real web: one transfer at a time per host,
 * 1 s between requests to a host, robots.txt obeyed, and a user agent that
 * names the crawler and a contact placeholder you should replace with
 * --user-agent.
 *
 * Exit status: 0 finished (everything fetched, or --max-pages reached),
 * 1 runtime failure, 2 usage error, 3 finished but nothing could be
 * fetched (no seed admitted, no page got an HTTP response, e.g. because
 * every host was given up), 4 finished but URLs were given up to
 * transient faults (retries exhausted, hosts down, robots.txt
 * unreachable), 130 after SIGINT and 143 after SIGTERM (once the clean
 * stop is over). --stats-json records it with the outcome: complete,
 * incomplete, limit, interrupted or failed.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "bc_clock.h"
#include "bc_hex.h"
#include "bc_io.h"
#include "bloomcrawl/crawler.h"
#include "bloomcrawl/redis_conn.h"
#include "bloomcrawl/simhash.h"
#include "bloomcrawl/version.h"
#include "bloomcrawl/workers.h"
#include "listen.h"
#include "status_page.h"

/* Bounds of option values: a --delay beyond an hour is a mistake (1e15
 * would make the crawl wait for ever), and so is a page limit beyond
 * 10^12. */
#define CRAWL_MAX_DELAY_MS 3600000u
#define CRAWL_MAX_PAGES    1000000000000u

/* --stats-interval: --stats-json rewritten and a statistics line in --log
 * every 10 s by default (Heritrix's progress-statistics.log: every 20 s);
 * at most once a day. */
#define STATS_INTERVAL_MS    10000u
#define STATS_INTERVAL_MAX_S 86400u

#define DEFAULT_USER_AGENT                                                     \
    "bloomcrawl/" BC_VERSION_STRING                                            \
    " (sample crawler; +https://example.invalid/contact)"

static void usage(FILE *f)
{
    fputs(
        "usage: crawl [options] URL...\n"
        "       crawl --state DIR [options] [URL...]\n"
        "       crawl --redis URL --workers N --worker I --state DIR "
        "[options] [URL...]\n"
        "       crawl --redis URL [--crawl-id NAME] --status\n"
        "       crawl --state DIR --status\n"
        "\n"
        "Crawl from the seed URLs, politely: robots.txt first, one request\n"
        "at a time per host, a delay between requests to a host.\n"
        "\n"

        "Seeds and limits:\n"
        "  --seeds FILE         more seed URLs, one per line\n"
        "  --max-pages N        stop after N pages (default 0: no limit)\n"
        "  --max-depth N        links deeper than N are not followed (16;\n"
        "                       0..65535)\n"
        "  --scope S            host | domain | any (host: the seeds' hosts;\n"
        "                       domain: their registrable domains)\n"
        "  --include PATTERN    only URLs matching it ('*' wildcard); "
        "repeatable\n"
        "  --exclude PATTERN    no URL matching it; repeatable\n"
        "  --host-budget N      at most N URLs per host (default: no limit)\n"
        "  --sitemaps           follow sitemaps (the default): a host's\n"
        "                       robots.txt Sitemap: lines, else its\n"
        "                       /sitemap.xml (also with --no-robots); the\n"
        "                       pages they list are admitted at depth 0\n"
        "  --no-sitemaps        fetch no sitemap\n"
        "Politeness:\n"
        "  --concurrency N      transfers in flight in all (8; 1..10000)\n"
        "  --per-host N         transfers in flight per host (1; 1..1000)\n"
        "  --delay MS           between requests to one host (1000; at\n"
        "                       most 3600000, one hour); a host's\n"
        "                       robots.txt Crawl-delay, when longer, is\n"
        "                       obeyed (up to 30 s; the report's delay s)\n"
        "  --no-robots          do not fetch or obey robots.txt\n"
        "  --robots-retries N   an unreachable robots.txt (5xx, no answer)\n"
        "                       is asked again N times, then its host is\n"
        "                       given up: its URLs are dropped (3)\n"
        "  --robots-retry-delay MS  the first of those waits, doubled after\n"
        "                       each (10000)\n"
        "  --max-retry-after MS cap on a 429/503's Retry-After (3600000)\n",
        f);
    fputs("  --retries N          a URL whose fetch failed with a transient\n"
          "                       fault (refused, reset, timeout, DNS, empty\n"
          "                       reply, a TLS handshake cut, 408, 429, 500,\n"
          "                       502, 503, 504, 522, 524) is fetched again,\n"
          "                       at most N times (3; 0..255; --max-retries\n"
          "                       is the same option); its host waits\n"
          "                       meanwhile\n"
          "  --retry-delay MS     the first retry's wait, doubled for each\n"
          "                       next one, +/- 25 % jitter; a 429/503's\n"
          "                       Retry-After if longer, 60 s without one\n"
          "                       (1000)\n"
          "  --host-failures N    after N transient faults in a row a host\n"
          "                       is paused (its circuit opens) for 10 s,\n"
          "                       twice that each time it fails again, at\n"
          "                       most 10 min, then probed with one request\n"
          "                       (5; 0: never paused)\n"
          "  --host-give-up D     a host failing for D (1h; 30m, 90s, ...; 0:\n"
          "                       never) is given up as down: its URLs are\n"
          "                       dropped (host_down) and the crawl ends\n"
          "                       incomplete\n",
          f);
    fprintf(
        f,
        "  --user-agent S       identify yourself! (default: %s)\n"
        "Seen-test:\n"
        "  --expect N           URLs the Bloom filter is sized for (10^6)\n"
        "  --fp-rate P          its false-positive rate (0.01)\n"
        "  --layout L           classic | blocked (blocked)\n"
        "  --lru N              entries of the LRU of recent URLs (50000)\n"
        "  --recrawl-after D    forget a URL D after its admission (7d, 12h,\n"
        "                       30m, 2s; units ms s m h d w): met again\n"
        "                       later (link, redirect, sitemap, seed), it\n"
        "                       is admitted and fetched again; inside D it\n"
        "                       stays a duplicate. The seen-test is then a\n"
        "                       sliding time window on the wall clock\n"
        "                       (--expect: URLs admitted within any D/3,\n"
        "                       so a run that admits all its URLs at once\n"
        "                       is covered; 3x the memory of --expect); a\n"
        "                       URL comes back between D and 4/3 D after\n"
        "                       its admission (the window's slack). The\n"
        "                       report's \"recrawled\" counts those\n"
        "                       admitted twice within this run\n"
        "  --revisit            with --state and --recrawl-after: at the\n"
        "                       start of the run, queue again every page\n"
        "                       of the state fetched longer ago than the\n"
        "                       window (its next fetch is due D after its\n"
        "                       admission); the others wait for a later\n"
        "                       run: the run ends when nothing due is left\n"
        "                       (run it from cron; it never waits). The\n"
        "                       sitemaps are read again: a page whose\n"
        "                       <lastmod> is later than its last fetch is\n"
        "                       due at once (lastmod_due)\n"
        "Fetching:\n"
        "  --timeout MS         per transfer (30000)\n"
        "  --max-body BYTES     abort bodies larger than this (10485760;\n"
        "                       robots.txt: its first 500 KiB are read,\n"
        "                       whatever its size; sitemaps: up to 50 MiB\n"
        "                       of XML, after gzip; --warc keeps what was\n"
        "                       read, marked WARC-Truncated: length)\n"
        "  --max-redirects N    hops of a redirect chain followed (20)\n"
        "  --resolve H:P:A      connect to address A for host H, port P\n"
        "                       (as curl's option); repeatable\n",
        DEFAULT_USER_AGENT);
    fputs(
        "  --proxy URL          every transfer through this proxy (http://,\n"
        "                       https://, socks4://, socks4a://, socks5://,\n"
        "                       socks5h://)\n"
        "  --header 'Name: value'  an extra request header; repeatable (not\n"
        "                       User-Agent: use --user-agent)\n"
        "  --accept-type TYPE   only pages of this media type (text/html,\n"
        "                       text/*, *); repeatable\n"
        "  --reject-type TYPE   no page of this media type; repeatable. By\n"
        "                       the Content-Type of a 2xx response, any case,\n"
        "                       parameters ignored (none: application/\n"
        "                       octet-stream); a page refused is not\n"
        "                       downloaded (stopped once its headers are in),\n"
        "                       its links are not followed, --out says\n"
        "                       \"skipped\": \"content_type\". robots.txt is\n"
        "                       never filtered\n"
        "  --local-wait D       how long this machine may refuse what a\n"
        "                       transfer needs (a descriptor: EMFILE;\n"
        "                       memory) with none succeeding before the\n"
        "                       crawl stops, exit 1 (1m; 30s, 5m, ...).\n"
        "                       Such a transfer is never a page's failure:\n"
        "                       it is fetched again later, fewer at once.\n"
        "                       --concurrency is lowered at the start to\n"
        "                       what the descriptor limit\n"
        "                       (RLIMIT_NOFILE, its soft limit raised up\n"
        "                       to the hard one) allows, with a note\n"
        "Output:\n"
        "  --out FILE           one JSON object per fetched URL\n"
        "  --stats-json FILE    all counters as one JSON object (with\n"
        "                       \"per_host\": every host, and \"counters\":\n"
        "                       every counter of --counters), rewritten\n"
        "                       while the crawl runs (below)\n"
        "  --counters           list every counter (name, kind, unit, what\n"
        "                       it counts, labels) and exit\n"
        "  --warc FILE          archive every transfer (pages, robots.txt,\n"
        "                       sitemaps) as WARC/1.1: request and response\n"
        "                       records, the response as received (before\n"
        "                       decoding); FILE ending in .warc.gz gets one\n"
        "                       gzip member per record, any other name is\n"
        "                       plain. --out records then give warc_file\n"
        "                       and warc_offset of each page's response\n"
        "                       record; a page whose payload an earlier\n"
        "                       page had is a revisit record naming it\n"
        "  --no-payload-dedup   do not index payload digests: no\n"
        "                       duplicate_of, no revisit records\n"
        "  --no-conditional     a recrawl (--recrawl-after, --revisit)\n"
        "                       fetches pages whole: no If-None-Match or\n"
        "                       If-Modified-Since from the last fetch, no\n"
        "                       304 revisit records (not_modified)\n",
        f);
    fputs(
        "  --near-duplicates follow|skip-links  a page whose visible\n"
        "                       text's simhash lies within --near-k bits of\n"
        "                       an earlier page's is reported with\n"
        "                       near_duplicate_of (the first page's URL) and\n"
        "                       near_duplicate_distance in --out; skip-links:\n"
        "                       the links of a near-duplicate or duplicate\n"
        "                       page are not admitted, counted (follow)\n"
        "  --near-k K           Hamming distance of a near-duplicate, 0..8\n"
        "                       (3)\n"
        "  --no-near-dedup      take no simhash: no near_duplicate_of\n",
        f);
    fputs("  --warc-max-size BYTES  rotate: FILE-00000.warc.gz,\n"
          "                       FILE-00001.warc.gz, ... each about BYTES\n"
          "                       (K, M, G suffixes: KiB, MiB, GiB); 0: one\n"
          "                       file (0)\n"
          "  --log FILE           one line per finished fetch (pages,\n"
          "                       robots.txt, sitemaps), appended to FILE:\n"
          "                       TIME STATUS BYTES MS URL [ERROR]\n"
          "                       TIME the UTC end (2026-01-02T03:04:05Z),\n"
          "                       STATUS the HTTP status (000: none), BYTES\n"
          "                       the body bytes, MS the transfer time, ERROR\n"
          "                       the error kind of a failed fetch (timeout,\n"
          "                       connect, ...) or skipped:content_type; an\n"
          "                       attempt to be retried ends in \":retry\"\n"
          "                       (connect:retry; retry alone for a 503);\n"
          "                       statistics lines too (below)\n"
          "  -v                   the same lines on stderr\n"
          "  --quiet              no progress line, no report\n"
          "  --help               this text\n"
          "  --version            the version\n"
          "\n"
          "A bad seed is reported (with its line in --seeds) and skipped. The\n"
          "output files and --seeds are opened before the crawl starts. A\n"
          "warning says when the Bloom filter holds more URLs than --expect.\n",
          f);
    fputs(
        "\n"
        "Watching and steering (an HTTP server in the crawl; with --redis\n"
        "each worker serves its own, on a port of its own):\n"
        "  --listen [ADDR:]PORT serve on ADDR (127.0.0.1 unless named; an\n"
        "                       IPv6 address in brackets) port PORT (0: any\n"
        "                       free port; the URL is said on stderr):\n"
        "    GET  /             the live status page\n"
        "    GET  /metrics      Prometheus text format 0.0.4 (OpenMetrics\n"
        "                       1.0 when Accept asks for it): every counter\n"
        "                       of crawl --counters as bloomcrawl_GROUP_NAME,\n"
        "                       bloomcrawl_pages_fetched_total and others\n"
        "    GET  /status       the --stats-json document, live\n"
        "    GET  /hosts?sort=pages|bytes|errors|queued&limit=N\n"
        "                       the per-host table (limit 100 by default)\n"
        "    POST /pause        hand out no job; transfers in flight finish\n"
        "    POST /resume       hand jobs out again\n"
        "    POST /seeds        the body's URLs (one a line) admitted as\n"
        "                       --seeds lines, each answered with its reason;\n"
        "                       with --state, committed before the answer\n"
        "    POST /hosts/HOST/delay  the host's delay in ms (body or ?ms=;\n"
        "                       0: back to --delay), never below its\n"
        "                       robots.txt Crawl-delay; with --state,\n"
        "                       committed before the answer and kept by a\n"
        "                       resume\n"
        "    POST /stop         the clean stop of SIGINT (exit 130)\n"
        "                       POST needs \"Authorization: Bearer TOKEN\";\n"
        "                       GET too on an address not loopback. 401\n"
        "                       without it, 404 unknown path, 405 wrong\n"
        "                       method, 413 a body over 64 KiB, 400 bad\n"
        "                       values. The token is random, written 0600 to\n"
        "                       DIR/listen.token with --state, else printed\n"
        "                       once on stderr\n"
        "  --listen-token-file FILE  the token: FILE's first line (16\n"
        "                       characters at least)\n"
        "  --metrics-hosts N    per-host series for the top N hosts by pages\n"
        "                       (20; 0..10000)\n"
        "  --listen-linger D    after the crawl, keep serving its final\n"
        "                       numbers for D (\"30s\"), or until POST /stop\n"
        "  A crawl worker's     /metrics adds its counters\n"
        "  endpoints            (bloomcrawl_workers_*) and\n"
        "                       "
        "bloomcrawl_worker_info{index,workers,crawl_id};\n"
        "                       /pause, /resume and /stop act on this worker\n"
        "                       (the crawl waits for a paused one); /seeds\n"
        "                       go as its --seeds do (to their owners through\n"
        "                       Redis); a host another worker owns: 409\n",
        f);
    fputs("\n"
          "Live statistics (no server needed):\n"
          "  --stats-interval S   every S seconds (10; 0..86400; 0: only at\n"
          "                       the start, on SIGUSR1 and at the end):\n"
          "                       --stats-json is written whole to\n"
          "                       FILE.tmp, fsync'ed and renamed over FILE\n"
          "                       (a reader never sees half a document; a\n"
          "                       kill -9 leaves the last whole one), with\n"
          "                       \"outcome\": \"running\", \"exit_status\":\n"
          "                       null and \"updated_at\" while it runs; and\n"
          "                       --log gets a line TIME stats KEY=VALUE...:\n"
          "                       elapsed_s pages pages_per_s bytes queued\n"
          "                       in_flight hosts errors given_up new\n"
          "                       duplicate probably_seen fill fpr (keys\n"
          "                       only added at the end), at the end too\n"
          "  SIGUSR1              write them now\n"
          "  SIGHUP               reopen --log by its name (logrotate:\n"
          "                       create with postrotate kill -HUP, or\n"
          "                       copytruncate); --out is not reopened\n"
          "  --status             with --state DIR: the state of a running\n"
          "                       or stopped crawl, read-only, its lock not\n"
          "                       held (tried for an instant): running\n"
          "                       (pid) or stopped, pages,\n"
          "                       queued, in flight, errors, given up,\n"
          "                       admitted, hosts, runs, elapsed, created,\n"
          "                       last commit; redrawn every second on a\n"
          "                       terminal while it runs; exit 1 if DIR is\n"
          "                       not a crawl state\n",
          f);
    /* Split: a C11 compiler need not support a string literal over 4,095
     * bytes (-Woverlength-strings); no format, the text has no '%'. */
    fprintf(
        f,
        "\n"
        "Exit status (and \"outcome\" in --stats-json):\n"
        "  0    the crawl finished: nothing left to fetch (complete) or\n"
        "       --max-pages reached (limit); a worker (--redis): the\n"
        "       crawl is over for all its workers\n"
        "  1    runtime failure (failed): out of memory, I/O, the fetcher;\n"
        "       Redis unreachable at the start (--redis, --status); a write\n"
        "       error (--out, --log, --stats-json, --warc, --state: a full\n"
        "       disk) stops the crawl at once, naming the file and the\n"
        "       reason (\"crawl: writing out.jsonl: No space left on\n"
        "       device\"); with --state the same command resumes once there\n"
        "       is room, every committed page's record written, none torn;\n"
        "       this machine refused descriptors or memory for --local-wait\n"
        "       (resume with --state once there are more)\n"
        "  2    usage error: unknown option, bad value, unusable file\n"
        "  3    finished, but nothing could be fetched: no seed admitted,\n"
        "       or no page got an HTTP response (every fetch failed); never\n"
        "       for a worker (one may own no host); outcome incomplete\n"
        "       when URLs were given up to transient faults (as for 4)\n"
        "  4    finished, but URLs were given up to transient faults\n"
        "       (incomplete): retries exhausted, hosts given up as down\n"
        "       (--host-give-up), hosts whose robots.txt stayed\n"
        "       unreachable; the report lists them by host, and\n"
        "       --retry-failed with --state fetches them again later\n"
        "  130  stopped by SIGINT (Ctrl-C), 143 by SIGTERM, after the clean\n"
        "       stop: transfers in flight finish, the report is written\n"
        "       (interrupted)\n");
    fputs(
        "\n"
        "Crash safety:\n"
        "  --state DIR          keep the crawl in DIR (created, mode 0700:\n"
        "                       crawl.db, SQLite; bloom.snap; lock) and\n"
        "                       resume it when run again with the same\n"
        "                       command: after a kill -9 or a reboot,\n"
        "                       nothing fetched and committed is fetched\n"
        "                       again (only the pages in flight at the kill,\n"
        "                       at most --concurrency: \"refetched after\n"
        "                       restart\"), nothing queued is lost, --out is\n"
        "                       appended (a record not committed is cut) and\n"
        "                       every counter continues. Seeds may be left\n"
        "                       out on resume. May change on resume:\n"
        "                       --max-pages (counts all runs), --max-depth,\n"
        "                       --concurrency, --per-host, --delay,\n"
        "                       --timeout, --max-body, --max-redirects,\n"
        "                       --retries (--max-retries), --retry-delay,\n"
        "                       --host-failures, --host-give-up,\n"
        "                       --retry-failed, --max-retry-after,\n"
        "                       --robots-retries, --robots-retry-delay,\n"
        "                       --host-budget, --quiet, --out, --stats-json,\n"
        "                       --resolve, --proxy, --header, --accept-type,\n"
        "                       --reject-type, -v, --log, --revisit,\n"
        "                       --local-wait. May\n"
        "                       not (refused,\n"
        "                       exit 2):\n"
        "                       --scope, --include, --exclude, --expect,\n"
        "                       --fp-rate, --layout, --lru, --user-agent,\n"
        "                       --no-robots, --sitemaps/--no-sitemaps,\n"
        "                       --recrawl-after (its window is in the\n"
        "                       state and counts the time between runs),\n"
        "                       --warc, --warc-max-size (the WARC is cut\n"
        "                       back to its last committed record and\n"
        "                       appended to, like --out), --workers,\n"
        "                       --worker, --crawl-id. A DIR that is\n"
        "                       not a crawl state, is damaged or is in use\n"
        "                       by another crawl is refused (exit 1) and\n"
        "                       left as it is\n"
        "  --retry-failed       with --state: before crawling, queue again\n"
        "                       every URL the state's earlier runs gave up\n"
        "                       to transient faults (retries exhausted,\n"
        "                       hosts down, robots.txt unreachable), their\n"
        "                       retries from 0, those hosts no longer\n"
        "                       given up; says how many on stderr\n",
        f);
    fputs("\n"
          "Many workers (one crawl split by host, through Redis):\n"
          "  --redis URL          the crawl's Redis: redis://HOST[:PORT][/DB]\n"
          "                       or unix:/PATH; needs --workers, --worker\n"
          "                       and --state (may change on resume). Worker\n"
          "                       I of N fetches only the hosts it owns:\n"
          "                       XXH64(\"scheme://host[:port]\", seed 0)\n"
          "                       mod N, the same on every machine; so\n"
          "                       politeness, robots.txt and the seen-test\n"
          "                       stay local. URLs of other hosts go to\n"
          "                       their owner through Redis Streams, kept in\n"
          "                       --state until Redis has them (a kill -9,\n"
          "                       or a restart of an appendonly Redis, loses\n"
          "                       none). Seeds may be given to any worker.\n"
          "                       Every worker exits 0 once the whole crawl\n"
          "                       is done, its report with a \"workers\"\n"
          "                       block; --max-pages counts the pages of\n"
          "                       all the workers. Redis\n"
          "                       unreachable at the start: exit 1, nothing\n"
          "                       written; lost later: the worker crawls on\n"
          "                       and retries\n"
          "  --workers N          the crawl's workers, 1..1024 (the same for\n"
          "                       all of them)\n"
          "  --worker I           this worker, 0..N-1\n"
          "  --crawl-id NAME      the crawl's keys in Redis (bc:NAME:...), so\n"
          "                       that crawls can share one Redis: letters,\n"
          "                       digits, '.', '_', '-', up to 64 (default)\n"
          "  --status             with --redis [--crawl-id]: the workers'\n"
          "                       table (pages, queue, in flight, stream\n"
          "                       entries sent and acknowledged, outbox, last\n"
          "                       heartbeat, state), redrawn every second on\n"
          "                       a terminal until the crawl is over (Ctrl-C\n"
          "                       ends it), printed once otherwise; exit 1 if\n"
          "                       Redis is unreachable or there is no such\n"
          "                       crawl\n",
          f);
}

/* ---- options --------------------------------------------------------- */

#define MAX_LIST 64

struct options {
    const char *seeds_file;
    const char *seed[MAX_LIST];
    size_t seed_count;
    const char *include[MAX_LIST], *exclude[MAX_LIST], *resolve[MAX_LIST];
    size_t include_count, exclude_count, resolve_count;
    uint64_t max_pages;
    unsigned max_depth;
    enum bc_frontier_scope scope;
    uint64_t host_budget;
    unsigned concurrency, per_host;
    uint64_t delay_ms;
    uint64_t recrawl_ms; /* --recrawl-after, 0: never */
    const char *recrawl_text;
    bool no_robots;
    bool no_sitemaps;
    bool revisit;          /* --revisit */
    bool no_payload_dedup; /* --no-payload-dedup */
    bool no_conditional;   /* --no-conditional */
    bool no_near_dedup;    /* --no-near-dedup */
    bool near_skip_links;  /* --near-duplicates skip-links */
    unsigned near_k;       /* --near-k */
    uint64_t robots_retries, robots_retry_ms, max_retry_after_ms;
    uint64_t max_retries, max_redirects;
    uint64_t retry_delay_ms, host_failures, host_give_up_ms;
    bool retry_failed; /* --retry-failed */
    const char *user_agent;
    uint64_t expect;
    double fp_rate;
    enum bc_bloom_layout layout;
    uint64_t lru;
    uint64_t timeout_ms, max_body;
    uint64_t local_wait_ms; /* --local-wait */
    const char *out_file, *stats_file;
    uint64_t stats_interval_ms; /* --stats-interval; 0: never by itself */
    const char *warc_file;
    uint64_t warc_max_size;
    const char *state_dir;
    bool quiet;
    const char *proxy, *log_file;
    const char *header[MAX_LIST], *accept_type[MAX_LIST],
        *reject_type[MAX_LIST];
    size_t header_count, accept_type_count, reject_type_count;
    bool verbose;
    const char *expect_text, *fp_rate_text; /* as given, for messages */
    const char *redis;     /* --redis URL: a crawl worker; NULL: alone */
    char redis_shown[512]; /* it in messages, its password "***" */
    unsigned workers;      /* --workers N, 0 when not given */
    unsigned worker;       /* --worker I */
    bool worker_given;     /* --worker was given */
    const char *crawl_id;  /* --crawl-id, "default" */
    bool crawl_id_given;
    bool status;                   /* --status */
    const char *listen;            /* --listen as given, or NULL */
    char listen_addr[64];          /* its address, "127.0.0.1" by default */
    uint16_t listen_port;          /* its port (0: any free one) */
    const char *listen_token_file; /* --listen-token-file */
    uint64_t metrics_hosts;        /* --metrics-hosts N (20) */
    uint64_t listen_linger_ms;     /* --listen-linger D (0) */
};

static int add_to_list(const char **list, size_t *count, const char *v)
{
    if (*count == MAX_LIST)
        return -1;
    list[(*count)++] = v;
    return 0;
}

static void shown_arg(FILE *f, const char *prev, const char *arg);

/* --redis URL: the workers' own parser says whether it is one
 * (bloomcrawl/redis_conn.h); messages show it with its password hidden.
 * Returns true when it is bad. */
static bool redis_option(struct options *o, const char *v)
{
    struct bc_redis_where w;
    o->redis = v;
    FILE *f = fmemopen(o->redis_shown, sizeof o->redis_shown, "w");
    if (f) {
        shown_arg(f, "--redis", v);
        fclose(f);
    }
    return bc_redis_where_parse(v, &w) != BC_OK;
}

/* A --crawl-id: [A-Za-z0-9._-]{1,64} (it is part of Redis keys). */
/* --listen PORT (on 127.0.0.1), ADDR:PORT or [ADDR6]:PORT: a numeric
 * address (another than loopback must be named), a port 0 to 65535 (0:
 * any free one, said on stderr). Returns false when malformed. */
static bool listen_option(struct options *o, const char *v)
{
    const char *colon = strrchr(v, ':');
    const char *port = colon ? colon + 1 : v;
    size_t alen = colon ? (size_t)(colon - v) : 0;
    const char *addr = v;
    if (alen >= 2 && v[0] == '[' && v[alen - 1] == ']')
        addr++, alen -= 2;
    if (colon && (alen == 0 || alen >= sizeof(o->listen_addr)))
        return false;
    if (!colon)
        addr = "127.0.0.1", alen = 9;
    uint64_t n = 0;
    if (!*port || strspn(port, "0123456789") != strlen(port) ||
        strlen(port) > 5 || (n = strtoull(port, NULL, 10)) > 65535)
        return false;
    memcpy(o->listen_addr, addr, alen);
    o->listen_addr[alen] = '\0';
    o->listen_port = (uint16_t)n;
    o->listen = v;
    return true;
}

static bool crawl_id_ok(const char *v)
{
    size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789._-");
    return n >= 1 && n <= 64 && v[n] == '\0';
}

/* A size in bytes: digits, optionally followed by K, M or G (KiB, MiB,
 * GiB). Returns 0 and writes *out, or -1. */
static int parse_size(const char *v, uint64_t *out)
{
    size_t digits = strspn(v, "0123456789");
    if (digits == 0 || digits > 19)
        return -1;
    uint64_t n = strtoull(v, NULL, 10);
    unsigned shift = 0;
    const char *unit = v + digits;
    if (*unit == 'K' || *unit == 'k')
        shift = 10;
    else if (*unit == 'M' || *unit == 'm')
        shift = 20;
    else if (*unit == 'G' || *unit == 'g')
        shift = 30;
    else if (*unit != '\0')
        return -1;
    if (shift && unit[1] != '\0')
        return -1;
    if (n > (UINT64_MAX >> shift))
        return -1;
    *out = n << shift;
    return 0;
}

/* A --header: as the fetcher takes it (bc_fetcher_check_header()), and
 * not User-Agent (--user-agent names the crawler to robots.txt and to
 * servers alike). */
static bool header_is_user_agent(const char *v)
{
    return strncasecmp(v, "User-Agent", 10) == 0 && v[10] == ':';
}

/*
 * 0 on success, 1 to exit 0 after --help, 3 after --version, 4 after
 * --counters, -1 on a usage error (after a message naming the option).
 */
static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){
        .max_depth = BC_FRONTIER_DEFAULT_MAX_DEPTH,
        .concurrency = 8,
        .per_host = 1,
        .delay_ms = 1000,
        .user_agent = DEFAULT_USER_AGENT,
        .expect = BC_SEEN_DEFAULT_EXPECTED,
        .near_k = BC_SIMHASH_DEFAULT_K,
        .fp_rate = BC_SEEN_DEFAULT_FP_RATE,
        .layout = BC_BLOOM_BLOCKED,
        .lru = BC_SEEN_DEFAULT_LRU,
        .timeout_ms = 30000,
        .max_body = 10u << 20,
        .local_wait_ms = BC_CRAWLER_DEFAULT_LOCAL_WAIT_MS,
        .robots_retries = BC_FRONTIER_DEFAULT_ROBOTS_RETRIES,
        .robots_retry_ms = BC_FRONTIER_DEFAULT_ROBOTS_RETRY_MS,
        .max_retry_after_ms = BC_FRONTIER_DEFAULT_MAX_RETRY_AFTER_MS,
        .max_retries = BC_FRONTIER_DEFAULT_MAX_RETRIES,
        .retry_delay_ms = BC_FRONTIER_DEFAULT_RETRY_DELAY_MS,
        .host_failures = BC_FRONTIER_DEFAULT_HOST_FAILURES,
        .host_give_up_ms = BC_FRONTIER_DEFAULT_HOST_GIVE_UP_MS,
        .max_redirects = BC_FRONTIER_DEFAULT_MAX_REDIRECTS,
        .stats_interval_ms = STATS_INTERVAL_MS,
        .crawl_id = "default",
        .metrics_hosts = 20};
    for (int i = 1; i < argc; i++) {
        char name[32];
        const char *inline_v;
        const char *a = args_option(argv[i], name, sizeof(name), &inline_v);
        const char *v = inline_v ? inline_v : i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n = 0;
        int bad = 0, takes = inline_v ? 0 : 1, unknown = 0, is_flag = 0;
        const char *range = NULL; /* the values allowed, for a message */
        /* Without a value, a value option is still recognized (and told it
         * needs one) by parsing "" as its value. */
        bool no_value = v == NULL;
        if (no_value)
            v = "";
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        else if (!strcmp(a, "--version"))
            return 3;
        else if (!strcmp(a, "--counters"))
            return 4;
        else if (!strcmp(a, "--no-robots"))
            o->no_robots = true, is_flag = 1;
        else if (!strcmp(a, "--sitemaps"))
            o->no_sitemaps = false, is_flag = 1;
        else if (!strcmp(a, "--no-sitemaps"))
            o->no_sitemaps = true, is_flag = 1;
        else if (!strcmp(a, "--revisit"))
            o->revisit = true, is_flag = 1;
        else if (!strcmp(a, "--no-payload-dedup"))
            o->no_payload_dedup = true, is_flag = 1;
        else if (!strcmp(a, "--no-conditional"))
            o->no_conditional = true, is_flag = 1;
        else if (!strcmp(a, "--no-near-dedup"))
            o->no_near_dedup = true, is_flag = 1;
        else if (!strcmp(a, "--retry-failed"))
            o->retry_failed = true, is_flag = 1;
        else if (!strcmp(a, "--quiet"))
            o->quiet = true, is_flag = 1;
        else if (!strcmp(a, "-v"))
            o->verbose = true, is_flag = 1;
        else if (!strcmp(a, "--status"))
            o->status = true, is_flag = 1;
        else if (a[0] != '-')
            bad = add_to_list(o->seed, &o->seed_count, a), takes = 0,
            no_value = false;
        else if (!strcmp(a, "--seeds"))
            o->seeds_file = v;
        else if (!strcmp(a, "--max-pages"))
            bad = args_count(v, true, &o->max_pages) ||
                  o->max_pages > CRAWL_MAX_PAGES,
            range = "0..10^12; 0: no limit";
        else if (!strcmp(a, "--max-depth"))
            bad = args_count(v, true, &n) || n > 65535,
            o->max_depth = (unsigned)n, range = "0..65535";
        else if (!strcmp(a, "--near-k"))
            bad = args_count(v, true, &n) || n > BC_SIMHASH_MAX_K,
            o->near_k = (unsigned)n, range = "0..8";
        else if (!strcmp(a, "--near-duplicates")) {
            if (!strcmp(v, "follow"))
                o->near_skip_links = false;
            else if (!strcmp(v, "skip-links"))
                o->near_skip_links = true;
            else
                bad = 1, range = "follow or skip-links";
        } else if (!strcmp(a, "--scope")) {
            if (!strcmp(v, "host"))
                o->scope = BC_SCOPE_HOST;
            else if (!strcmp(v, "domain"))
                o->scope = BC_SCOPE_DOMAIN;
            else if (!strcmp(v, "any"))
                o->scope = BC_SCOPE_ANY;
            else
                bad = 1, range = "host, domain or any";
        } else if (!strcmp(a, "--include"))
            bad = add_to_list(o->include, &o->include_count, v);
        else if (!strcmp(a, "--exclude"))
            bad = add_to_list(o->exclude, &o->exclude_count, v);
        else if (!strcmp(a, "--resolve"))
            bad = !bc_fetcher_check_resolve(v) ||
                  add_to_list(o->resolve, &o->resolve_count, v);
        else if (!strcmp(a, "--host-budget"))
            bad = args_count(v, true, &o->host_budget);
        else if (!strcmp(a, "--concurrency"))
            bad = args_count(v, true, &n) || n < 1 || n > 10000,
            o->concurrency = (unsigned)n, range = "1..10000";
        else if (!strcmp(a, "--per-host"))
            bad = args_count(v, true, &n) || n < 1 || n > 1000,
            o->per_host = (unsigned)n, range = "1..1000";
        else if (!strcmp(a, "--delay"))
            bad = args_count(v, true, &o->delay_ms) ||
                  o->delay_ms > CRAWL_MAX_DELAY_MS,
            range = "0..3600000 ms, one hour";
        else if (!strcmp(a, "--recrawl-after"))
            bad = args_duration(v, &o->recrawl_ms) != 0, o->recrawl_text = v;
        else if (!strcmp(a, "--robots-retries"))
            bad = args_count(v, true, &o->robots_retries) ||
                  o->robots_retries > 1000;
        else if (!strcmp(a, "--robots-retry-delay"))
            bad = args_count(v, true, &o->robots_retry_ms);
        else if (!strcmp(a, "--max-retry-after"))
            bad = args_count(v, true, &o->max_retry_after_ms);
        else if (!strcmp(a, "--retries") || !strcmp(a, "--max-retries"))
            bad = args_count(v, true, &o->max_retries) || o->max_retries > 255;
        else if (!strcmp(a, "--retry-delay"))
            bad = args_count(v, true, &o->retry_delay_ms);
        else if (!strcmp(a, "--host-failures"))
            bad = args_count(v, true, &o->host_failures) ||
                  o->host_failures > 1000000;
        else if (!strcmp(a, "--host-give-up"))
            bad = strcmp(v, "0") == 0 ? (o->host_give_up_ms = 0, 0)
                                      : args_duration(v, &o->host_give_up_ms);
        else if (!strcmp(a, "--max-redirects"))
            bad = args_count(v, true, &o->max_redirects) ||
                  o->max_redirects > 255;
        else if (!strcmp(a, "--user-agent"))
            o->user_agent = v;
        else if (!strcmp(a, "--expect"))
            bad = args_count(v, true, &o->expect) || o->expect == 0,
            o->expect_text = v;
        else if (!strcmp(a, "--fp-rate"))
            bad = args_rate(v, &o->fp_rate), o->fp_rate_text = v;
        else if (!strcmp(a, "--layout")) {
            if (!strcmp(v, "classic"))
                o->layout = BC_BLOOM_CLASSIC;
            else if (!strcmp(v, "blocked"))
                o->layout = BC_BLOOM_BLOCKED;
            else
                bad = 1;
        } else if (!strcmp(a, "--lru"))
            bad = args_count(v, true, &o->lru);
        else if (!strcmp(a, "--timeout"))
            bad = args_count(v, true, &o->timeout_ms) || o->timeout_ms == 0;
        else if (!strcmp(a, "--local-wait"))
            bad = args_duration(v, &o->local_wait_ms) != 0;
        else if (!strcmp(a, "--max-body"))
            bad = args_count(v, true, &o->max_body);
        else if (!strcmp(a, "--out"))
            o->out_file = v;
        else if (!strcmp(a, "--stats-json"))
            o->stats_file = v, bad = *v == '\0';
        else if (!strcmp(a, "--stats-interval"))
            bad = args_count(v, true, &n) || n > STATS_INTERVAL_MAX_S,
            o->stats_interval_ms = n * 1000u, range = "0..86400 s";
        else if (!strcmp(a, "--warc"))
            o->warc_file = v, bad = *v == '\0' || strpbrk(v, "\r\n") != NULL;
        else if (!strcmp(a, "--warc-max-size"))
            bad = parse_size(v, &o->warc_max_size);
        else if (!strcmp(a, "--state"))
            o->state_dir = v, bad = *v == '\0';
        else if (!strcmp(a, "--proxy"))
            o->proxy = v, bad = !bc_fetcher_check_proxy(v);
        else if (!strcmp(a, "--header")) {
            if (header_is_user_agent(v)) {
                fprintf(stderr, "crawl: --header User-Agent: use "
                                "--user-agent (it names the crawler to "
                                "robots.txt and to servers alike)\n");
                return -1;
            }
            bad = !bc_fetcher_check_header(v) ||
                  add_to_list(o->header, &o->header_count, v);
        } else if (!strcmp(a, "--accept-type"))
            bad = !bc_crawler_media_type_ok(v) ||
                  add_to_list(o->accept_type, &o->accept_type_count, v);
        else if (!strcmp(a, "--reject-type"))
            bad = !bc_crawler_media_type_ok(v) ||
                  add_to_list(o->reject_type, &o->reject_type_count, v);
        else if (!strcmp(a, "--log"))
            o->log_file = v, bad = *v == '\0';
        else if (!strcmp(a, "--redis"))
            bad = redis_option(o, v);
        else if (!strcmp(a, "--workers"))
            bad = args_count(v, false, &n) || n > 1024,
            o->workers = (unsigned)n;
        else if (!strcmp(a, "--worker"))
            bad = args_count(v, true, &n) || n > 1023, o->worker = (unsigned)n,
            o->worker_given = true;
        else if (!strcmp(a, "--crawl-id"))
            o->crawl_id = v, o->crawl_id_given = true, bad = !crawl_id_ok(v);
        else if (!strcmp(a, "--listen"))
            bad = !listen_option(o, v);
        else if (!strcmp(a, "--listen-token-file"))
            o->listen_token_file = v, bad = *v == '\0';
        else if (!strcmp(a, "--metrics-hosts"))
            bad = args_count(v, true, &o->metrics_hosts) ||
                  o->metrics_hosts > 10000,
            range = "0..10000";
        else if (!strcmp(a, "--listen-linger"))
            bad = args_duration(v, &o->listen_linger_ms);
        else
            unknown = 1;
        if (unknown) {
            fprintf(stderr, "crawl: unknown option %s (see --help)\n", a);
            return -1;
        }
        if (is_flag)
            takes = 0, no_value = false;
        if (is_flag && inline_v) {
            fprintf(stderr, "crawl: %s takes no value\n", a);
            return -1;
        }
        if (no_value) {
            fprintf(stderr, "crawl: %s needs a value\n", a);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "crawl: bad value for %s: ", a);
            shown_arg(stderr, a, v); /* a secret in it hidden */
            if (range)
                fprintf(stderr, " (allowed: %s)", range);
            if (!strcmp(a, "--resolve") && v[*v == '+' || *v == '-'] == '[')
                fputs(" (a bracketed IPv6 host needs libcurl 8.13.0 or "
                      "later)",
                      stderr);
            fputc('\n', stderr);
            return -1;
        }
        i += takes;
    }
    if (o->status) {
        if (!o->redis && !o->state_dir) {
            fprintf(stderr,
                    "crawl: --status needs --redis URL or --state DIR\n");
            return -1;
        }
        return 0;
    }
    if (!o->redis && (o->workers || o->worker_given || o->crawl_id_given)) {
        fprintf(stderr, "crawl: --workers, --worker and --crawl-id need "
                        "--redis URL\n");
        return -1;
    }
    if (o->redis && (!o->workers || !o->worker_given || !o->state_dir)) {
        fprintf(stderr, "crawl: --redis needs --workers N, --worker I and "
                        "--state DIR\n");
        return -1;
    }
    if (o->redis && o->worker >= o->workers) {
        fprintf(stderr,
                "crawl: bad value for --worker: %u (0..%u with "
                "--workers %u)\n",
                o->worker, o->workers - 1, o->workers);
        return -1;
    }
    if (!o->listen && (o->listen_token_file || o->listen_linger_ms)) {
        fprintf(stderr, "crawl: --listen-token-file and --listen-linger "
                        "need --listen\n");
        return -1;
    }
    if (o->retry_failed && !o->state_dir) {
        fprintf(stderr, "crawl: --retry-failed needs --state DIR\n");
        return -1;
    }
    if (o->revisit && (!o->state_dir || !o->recrawl_ms)) {
        fprintf(stderr, "crawl: --revisit needs --state DIR and "
                        "--recrawl-after D\n");
        return -1;
    }
    if (o->seed_count == 0 && !o->seeds_file && !o->state_dir) {
        fprintf(stderr, "crawl: no seed URL (see --help)\n");
        return -1;
    }
    return 0;
}

/* ---- the crawl's state ----------------------------------------------- */

/* The progress line's rate is the pages of the last 10 s (a resumed or a
 * long run's average says little of now); samples are kept at each
 * progress line (every 0.5 s on a terminal, every 5 s otherwise). */
#define RATE_WINDOW_MS 10000u
#define RATE_SAMPLES   64u

/* POST /seeds and /hosts/HOST/delay commands waiting for a commit at
 * once (more: 503). */
#define LISTEN_PENDING_MAX 16u

/*
 * The near-duplicate clusters of this run, for the report and
 * --stats-json: the first page's URL and its near-duplicates met in this
 * run (a resumed crawl counts the copies it fetched itself), and the same
 * by host: a near-duplicate page counts under its own host (the origin of
 * its URL: a mirror's copies under the mirror, naming the original on
 * its own host), in a second table keyed "ORIGIN ORIGINAL-URL" (a space
 * is in no canonical URL). Open-addressing tables of FNV-1a hashes,
 * doubled at half full; no memory for them only leaves the report's lists
 * short.
 */
struct cluster {
    char *url; /* NULL: an empty slot */
    uint64_t copies;
};

struct clusters {
    struct cluster *slot;
    size_t cap, used; /* cap: a power of two, or 0 */
};

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return h;
}

static struct cluster *clusters_slot(struct cluster *slot, size_t cap,
                                     const char *url, size_t len)
{
    size_t i = (size_t)fnv1a(url, len) & (cap - 1);
    while (slot[i].url &&
           (strlen(slot[i].url) != len || memcmp(slot[i].url, url, len)))
        i = (i + 1) & (cap - 1);
    return &slot[i];
}

/* n more copies under key url (len bytes). */
static void clusters_add(struct clusters *t, const char *url, size_t len,
                         uint64_t n)
{
    if (2 * (t->used + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct cluster *slot = calloc(cap, sizeof(*slot));
        if (!slot)
            return;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i].url)
                *clusters_slot(slot, cap, t->slot[i].url,
                               strlen(t->slot[i].url)) = t->slot[i];
        free(t->slot);
        t->slot = slot;
        t->cap = cap;
    }
    struct cluster *e = clusters_slot(t->slot, t->cap, url, len);
    if (!e->url) {
        if (!(e->url = strndup(url, len)))
            return;
        t->used++;
    }
    e->copies += n;
}

static void clusters_free(struct clusters *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slot[i].url);
    free(t->slot);
}

/* The origin of canonical URL u (scheme://authority): its length. */
static size_t origin_len(const char *u, size_t len)
{
    const char *p = memchr(u, ':', len);
    if (!p || (size_t)(p - u) + 3 > len || memcmp(p, "://", 3) != 0)
        return len;
    const char *slash = memchr(p + 3, '/', len - (size_t)(p + 3 - u));
    return slash ? (size_t)(slash - u) : len;
}

/* A near-duplicate page at url (len bytes) of the cluster whose first
 * page is orig: counted in both tables. */
static void clusters_count(struct clusters *t, struct clusters *by_host,
                           const char *url, size_t len, const char *orig,
                           size_t orig_len)
{
    clusters_add(t, orig, orig_len, 1);
    size_t o = origin_len(url, len);
    char *key = malloc(o + 1 + orig_len);
    if (!key)
        return;
    memcpy(key, url, o);
    key[o] = ' ';
    memcpy(key + o + 1, orig, orig_len);
    clusters_add(by_host, key, o + 1 + orig_len, 1);
    free(key);
}

/* The at most k entries of t with the most copies whose key starts with
 * prefix (plen bytes; 0: all), most first, ties in the keys' byte order
 * (a selection: k passes over the table). Returns how many. */
static size_t clusters_top(const struct clusters *t, const char *prefix,
                           size_t plen, const struct cluster **out, size_t k)
{
    size_t n = 0;
    for (; n < k; n++) {
        const struct cluster *best = NULL;
        for (size_t i = 0; i < t->cap; i++) {
            const struct cluster *e = &t->slot[i];
            if (!e->url || (plen && strncmp(e->url, prefix, plen) != 0))
                continue;
            /* Below the last one taken, in the order of the list. */
            const struct cluster *last = n ? out[n - 1] : NULL;
            if (last &&
                (e->copies > last->copies ||
                 (e->copies == last->copies && strcmp(e->url, last->url) <= 0)))
                continue;
            if (!best || e->copies > best->copies ||
                (e->copies == best->copies && strcmp(e->url, best->url) < 0))
                best = e;
        }
        if (!best)
            break;
        out[n] = best;
    }
    return n;
}

#define NEAR_TOP_CLUSTERS  5 /* the largest clusters of the crawl */
#define NEAR_TOP_HOSTS     5 /* the hosts with the most near-duplicates */
#define NEAR_HOST_CLUSTERS 3 /* and the largest clusters of each */

/* The hosts' totals of by_host (the table "ORIGIN ORIGINAL" above) into
 * hosts, keyed by origin. */
static void clusters_hosts(const struct clusters *by_host,
                           struct clusters *hosts)
{
    for (size_t i = 0; i < by_host->cap; i++) {
        const struct cluster *e = &by_host->slot[i];
        if (e->url)
            clusters_add(hosts, e->url, strcspn(e->url, " "), e->copies);
    }
}

/* The report's lines of the largest clusters, and of the hosts with the
 * most near-duplicate pages with their largest clusters. */
static void clusters_report(const struct clusters *t,
                            const struct clusters *by_host, FILE *f)
{
    const struct cluster *top[NEAR_TOP_CLUSTERS];
    size_t n = clusters_top(t, NULL, 0, top, NEAR_TOP_CLUSTERS);
    if (n)
        fprintf(f, "  largest clusters (this run's copies):\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %8llu copies of %s\n", (unsigned long long)top[i]->copies,
                top[i]->url);
    struct clusters hosts = {0};
    clusters_hosts(by_host, &hosts);
    const struct cluster *h[NEAR_TOP_HOSTS];
    size_t nh = clusters_top(&hosts, NULL, 0, h, NEAR_TOP_HOSTS);
    if (nh)
        fprintf(f, "  by host (this run's near-duplicate pages, %zu hosts):\n",
                hosts.used);
    for (size_t i = 0; i < nh; i++) {
        fprintf(f, "  %8llu pages on %s\n", (unsigned long long)h[i]->copies,
                h[i]->url);
        size_t plen = strlen(h[i]->url);
        char *prefix = malloc(plen + 2);
        if (!prefix)
            continue;
        memcpy(prefix, h[i]->url, plen);
        memcpy(prefix + plen, " ", 2);
        const struct cluster *c[NEAR_HOST_CLUSTERS];
        size_t nc =
            clusters_top(by_host, prefix, plen + 1, c, NEAR_HOST_CLUSTERS);
        for (size_t j = 0; j < nc; j++)
            fprintf(f, "  %12llu copies of %s\n",
                    (unsigned long long)c[j]->copies, c[j]->url + plen + 1);
        free(prefix);
    }
    clusters_free(&hosts);
}

struct crawl {
    struct options opt;
    struct clusters clusters;     /* near-duplicates, for the report */
    struct clusters near_by_host; /* the same, by the copies' hosts */
    struct bc_crawler *crawler;   /* the loop: bloomcrawl/crawler.h */
    struct bc_frontier *frontier; /* the crawler's, for its counters */
    int out_fd;                   /* --out, O_APPEND; -1 without */
    uint64_t start_ms;
    uint64_t pages_before; /* pages of earlier runs of a --state crawl */
    uint64_t revisit_known, revisit_due; /* --revisit at the start */
    uint64_t revisit_sitemaps;   /* sitemaps queued again by --revisit */
    uint64_t lastmod_due_before; /* lastmod_due of the runs before */
    bool saturation_warned;
    bool seed_lost; /* a worker's seed found no Redis (add_seed) */
    FILE *seeds_in;
    char *stats_tmp;        /* --stats-json's FILE.tmp, renamed over FILE */
    int stats_fd;           /* the descriptor kept for it: -1 without */
    bool stats_warned;      /* a live --stats-json write failed: said once */
    uint64_t last_stats;    /* when the last statistics were written */
    uint64_t last_pages;    /* pages then: the rate of the --log line */
    uint64_t last_progress; /* when the progress line was last written */
    bool stderr_tty;        /* refresh one line, or print one every 5 s */
    /* The recent rate: (time, pages) at the last RATE_SAMPLES progress
     * lines, a ring; the rate shown is over the last RATE_WINDOW_MS. */
    uint64_t rate_ms[RATE_SAMPLES], rate_pages[RATE_SAMPLES];
    size_t rate_count, rate_next;
    /* With --state: the time of the runs before this one (the state's
     * elapsed_before_ms: each commit records it). */
    uint64_t elapsed_before;
    /* The first --out or --log write that failed: the file and errno.
     * Sticky: nothing is written to either after it, and the crawler is
     * failed (bc_crawler_fail()) so the pages since the last commit,
     * the lost record's among them, are never committed. */
    const char *write_failed;
    int write_errno;
    struct bc_crawl_state *state; /* --state, or NULL */
    uint64_t out_offset;          /* --out's length: records written */
    struct bc_warc *warc;         /* --warc, or NULL */
    int argc;                     /* the command line, for the warcinfo */
    char **argv;
    int log_fd;                 /* --log, O_APPEND; -1 without */
    struct bc_workers *workers; /* --redis: this worker of the crawl */
    bool over;                  /* the crawl is over for all its workers */
    bool over_at_start;         /* ... already when this worker started */
    /* --listen: the server, the control token, paused by POST /pause,
     * and the POST /seeds and delays answered after the next step's
     * commit. */
    struct listen_server *listen;
    char listen_token[256];
    bool listen_paused;
    size_t listen_pending;
    struct listen_command *listen_cmd[LISTEN_PENDING_MAX];
    char *listen_buf[LISTEN_PENDING_MAX];
    size_t listen_len[LISTEN_PENDING_MAX];
};

static volatile sig_atomic_t interrupted, stop_signal;
static volatile sig_atomic_t stats_asked, log_reopen;

/* SIGINT and SIGTERM: the first stops the crawl cleanly, the second
 * abandons the transfers in flight. The exit status is 128 + the first. */
static void on_signal(int sig)
{
    if (!interrupted)
        stop_signal = sig;
    interrupted++;
}

/* SIGUSR1: write --stats-json (and a --log statistics line) now; SIGHUP:
 * reopen --log (logrotate). A handler only sets a flag (async-signal-
 * safe); the loop does the work between steps (live_stats()), within the
 * step's wait (at most 1 s). */
static void on_stats_signal(int sig)
{
    if (sig == SIGUSR1)
        stats_asked = 1;
    else
        log_reopen = 1;
}

static uint64_t now_ms(void)
{
    return bc_mono_ms();
}

/* ---- output ------------------------------------------------------------ */

static void json_string(FILE *f, const char *s, size_t len)
{
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* Write all of buf to fd. Returns 0, or errno of the write that failed
 * (EIO for one that wrote nothing without an error); *done (may be NULL)
 * gets the bytes written, all of len or the part before the failure.
 * (It was write_all(), true on success: renamed with its new return so
 * that no caller reads 0 as a failure.) */
static int write_fully(int fd, const char *buf, size_t len, size_t *done)
{
    return bc_write_all_count(fd, buf, len, done) == BC_OK ? 0 : errno;
}

/*
 * A write to --out or --log failed (file its name, err its errno): the
 * first one is kept for run()'s message, and the crawler is failed, so the
 * step returns before the next commit: the page whose record was lost is
 * not committed and the resume fetches it again (with --state; without
 * one the crawl just stops). Writes to both files stop here.
 */
static void write_failed(struct crawl *c, const char *file, int err)
{
    if (c->write_failed)
        return;
    c->write_failed = file;
    c->write_errno = err;
    (void)bc_crawler_fail(c->crawler, BC_ERR_IO, err);
}

/* The --out keys of where a page came from and what was kept of it:
 * "referrer" (the page it was found on, or that redirected to it; null
 * for a seed) and "skipped": "content_type" (--accept-type/--reject-type
 * refused it). */
static void out_page_source(FILE *f, const struct bc_crawler_page *p)
{
    fputs(", \"referrer\": ", f);
    if (p->referrer)
        json_string(f, p->referrer, p->referrer_len);
    else
        fputs("null", f);
    if (p->skipped)
        fputs(", \"skipped\": \"content_type\"", f);
}

/*
 * One line of --log and -v for every finished fetch (the crawler's
 * on_fetch): TIME STATUS BYTES MS URL [ERROR], written whole in one
 * write(2) (--log is O_APPEND, like --out).
 */
static void on_fetch(void *ctx, const struct bc_crawler_page *p)
{
    struct crawl *c = ctx;
    if ((c->log_fd < 0 || c->write_failed) && !c->opt.verbose)
        return;
    char when[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    const char *extra = p->failed    ? bc_crawler_error_kind_name(p->error_kind)
                        : p->skipped ? "skipped:content_type"
                                     : NULL;
    const char *retry = !p->retry ? "" : extra ? ":retry" : "retry";
    char *line = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&line, &n);
    if (!f) {
        if (c->log_fd >= 0)
            write_failed(c, c->opt.log_file, errno);
        return;
    }
    fprintf(f, "%s %03d %llu %llu ", when, p->http_status,
            (unsigned long long)p->bytes, (unsigned long long)p->ms);
    fwrite(p->url, 1, p->url_len, f); /* canonical: no space, no control */
    fprintf(f, "%s%s%s\n", extra || p->retry ? " " : "", extra ? extra : "",
            retry);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        if (c->log_fd >= 0)
            write_failed(c, c->opt.log_file, ENOMEM);
        free(line);
        return;
    }
    size_t put;
    int err;
    if (c->log_fd >= 0 && !c->write_failed &&
        (err = write_fully(c->log_fd, line, n, &put)) != 0) {
        /* A line cut short is the file's last bytes (O_APPEND): cut them
         * off, so the log holds whole lines only. */
        struct stat sb;
        if (put > 0 && fstat(c->log_fd, &sb) == 0 &&
            (uint64_t)sb.st_size >= put)
            (void)!ftruncate(c->log_fd, sb.st_size - (off_t)put);
        write_failed(c, c->opt.log_file, err);
    }
    if (c->opt.verbose)
        fprintf(stderr, "%s%s",
                c->stderr_tty && !c->opt.quiet ? "\r\033[K" : "", line);
    free(line);
}

/*
 * One --out record, for each page the crawler reports (its on_page). It
 * is formatted in memory and handed to the kernel in one write(2) on an
 * O_APPEND descriptor: no stdio buffer holds part of a record, so a crawl
 * killed at any moment leaves whole records only (it may lose the last
 * ones).
 */
static void on_page(void *ctx, const struct bc_crawler_page *p)
{
    struct crawl *c = ctx;
    if (p->near_duplicate_of)
        clusters_count(&c->clusters, &c->near_by_host, p->url, p->url_len,
                       p->near_duplicate_of, p->near_duplicate_of_len);
    if (c->out_fd < 0 || c->write_failed)
        return;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        write_failed(c, c->opt.out_file, errno);
        return;
    }
    fputs("{\"url\": ", f);
    json_string(f, p->url, p->url_len);
    fprintf(f,
            ", \"status\": %d, \"depth\": %u, \"bytes\": %llu, "
            "\"content_type\": ",
            p->http_status, p->depth, (unsigned long long)p->bytes);
    if (p->content_type)
        json_string(f, p->content_type, strlen(p->content_type));
    else
        fputs("null", f);
    fprintf(f, ", \"links\": %llu, \"ms\": %llu", (unsigned long long)p->links,
            (unsigned long long)p->ms);
    char when[32];
    struct tm tm;
    gmtime_r(&p->fetched_at, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(f, ", \"fetched_at\": \"%s\"", when);
    if (p->warc_file) {
        fputs(", \"warc_file\": ", f);
        json_string(f, p->warc_file, strlen(p->warc_file));
        fprintf(f, ", \"warc_offset\": %llu",
                (unsigned long long)p->warc_offset);
    }
    if (p->location) {
        fputs(", \"location\": ", f);
        json_string(f, p->location, p->location_len);
    }
    if (p->duplicate_of) {
        fputs(", \"duplicate_of\": ", f);
        json_string(f, p->duplicate_of, p->duplicate_of_len);
    }
    if (p->not_modified)
        fputs(", \"not_modified\": true", f);
    if (p->unchanged)
        fputs(", \"unchanged\": true", f);
    if (p->near_duplicate_of) {
        fputs(", \"near_duplicate_of\": ", f);
        json_string(f, p->near_duplicate_of, p->near_duplicate_of_len);
        fprintf(f, ", \"near_duplicate_distance\": %u", p->near_distance);
    }
    if (p->near_links_skipped)
        fprintf(f, ", \"links_skipped\": %llu",
                (unsigned long long)p->near_links_skipped);
    if (p->failed) {
        const char *kind = bc_crawler_error_kind_name(p->error_kind);
        const char *text = p->error_kind == BC_CRAWLER_ERR_TOO_MANY_REDIRECTS
                               ? "redirect chain longer than --max-redirects"
                               : p->error_text;
        fputs(", \"error\": ", f);
        json_string(f, kind, strlen(kind));
        fputs(", \"error_text\": ", f);
        json_string(f, text, strlen(text));
    }
    /* "fault" for a failure (a transient one was given up: retries
     * exhausted, or its host down), and the retries it had. */
    if (p->fault != BC_FAULT_NONE)
        fprintf(f, ", \"fault\": \"%s\"", bc_fault_name(p->fault));
    fprintf(f, ", \"retries\": %u", p->retries);
    out_page_source(f, p);
    fputs("}\n", f);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) {
        free(buf);
        write_failed(c, c->opt.out_file, ENOMEM);
        return;
    }
    size_t put;
    int err = write_fully(c->out_fd, buf, len, &put);
    free(buf);
    if (err) {
        /* Not written whole (a full disk, a file-size limit): the offset
         * stays at the last whole record, a torn one is cut off when the
         * file lets us, and the crawl stops before this page is
         * committed; its resume cuts the file back to the last commit
         * anyway, and fetches the page again. */
        if (put > 0)
            (void)!ftruncate(c->out_fd, (off_t)c->out_offset);
        write_failed(c, c->opt.out_file, err);
        return;
    }
    /* The record belongs to the page's transaction: committed with it,
     * or cut on resume. */
    c->out_offset += len;
    if (c->state)
        bc_crawl_state_set_out_offset(c->state, c->out_offset);
}

/* ---- progress and report --------------------------------------------- */

/* URLs admitted again after the window (--recrawl-after): NEW although
 * the LRU still held them (a NEW key the LRU lacked is inserted; one it
 * holds is only refreshed). A URL the LRU evicted, or one admitted before
 * a resume (the LRU is not saved), counts as new when it comes back: this
 * run's count, a lower bound when the LRU has evicted. */
static uint64_t recrawled(const struct bc_seen_stats *v)
{
    return v->verdict_new - v->lru.inserts;
}

/* A worker with nothing of its own to do: nothing queued, nothing in
 * flight, its outbox empty; it waits for URLs from the others or for the
 * end of the crawl. */
static bool worker_idle(const struct bc_frontier_stats *s,
                        const struct bc_crawler_stats *k,
                        const struct bc_workers_stats *w)
{
    return s->queued == 0 && k->in_flight == 0 && w->outbox == 0;
}

/* The width of the terminal on stderr: TIOCGWINSZ, else $COLUMNS, else
 * 80. */
static size_t term_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *env = getenv("COLUMNS");
    long cols = env ? strtol(env, NULL, 10) : 0;
    return cols > 0 && cols < 10000 ? (size_t)cols : 80;
}

/* Pages per second over the last RATE_WINDOW_MS (or since the start of
 * this run when it is younger): a sample of (now, pages) is added. */
static double recent_rate(struct crawl *c, uint64_t now, uint64_t pages)
{
    /* From the newest sample back to the first one older than the
     * window (or the start of the run, when every sample is younger). */
    uint64_t from_ms = c->start_ms, from_pages = c->pages_before;
    for (size_t i = 0; i < c->rate_count; i++) {
        size_t j = (c->rate_next + RATE_SAMPLES - 1 - i) % RATE_SAMPLES;
        if (now - c->rate_ms[j] > RATE_WINDOW_MS ||
            (i + 1 == c->rate_count && c->rate_count == RATE_SAMPLES)) {
            from_ms = c->rate_ms[j], from_pages = c->rate_pages[j];
            break;
        }
    }
    c->rate_ms[c->rate_next] = now;
    c->rate_pages[c->rate_next] = pages;
    c->rate_next = (c->rate_next + 1) % RATE_SAMPLES;
    if (c->rate_count < RATE_SAMPLES)
        c->rate_count++;
    double secs = (double)(now - from_ms) / 1000.0;
    return secs > 0 && pages >= from_pages ? (double)(pages - from_pages) / secs
                                           : 0.0;
}

/* The progress line: on a terminal it is fitted to the width (parts
 * dropped from the least useful, then cut) so that it never wraps, which
 * would leave stale rows behind its refresh. */
static void progress(struct crawl *c, uint64_t now, bool final)
{
    bool tty = c->stderr_tty;
    if (c->opt.quiet ||
        (!final && now - c->last_progress < (tty ? 500u : 5000u)))
        return;
    c->last_progress = now;
    struct bc_frontier_stats s;
    bc_frontier_stats(c->frontier, now, &s);
    struct bc_crawler_stats k;
    bc_crawler_stats(c->crawler, &k);
    double rate = recent_rate(c, now, k.pages);
    char lead[160] = "", hosts[160], seen[160], fill[64], line[640];
    if (c->workers) {
        struct bc_workers_stats w;
        bc_workers_stats(c->workers, &w);
        snprintf(lead, sizeof(lead), "worker %u/%u  %s%s", c->opt.worker,
                 c->opt.workers,
                 c->over                   ? "the crawl is over  "
                 : worker_idle(&s, &k, &w) ? "idle, waiting for the others  "
                                           : "",
                 w.redis_up ? "" : "Redis lost, retrying  ");
    }
    snprintf(hosts, sizeof(hosts),
             " (robots.txt %zu, blocked %zu, given up %zu, paused %zu, "
             "down %zu)",
             s.hosts_robots, s.hosts_blocked, s.hosts_given_up, s.hosts_open,
             s.hosts_down);
    snprintf(seen, sizeof(seen), "  new %llu dup %llu probably-seen %llu",
             (unsigned long long)s.seen.verdict_new,
             (unsigned long long)s.seen.duplicate,
             (unsigned long long)s.seen.probably_seen);
    snprintf(fill, sizeof(fill), "  %s %.1f %%",
             s.seen.kind == BC_SEEN_WINDOW_TIME ? "window" : "bloom",
             s.seen.kind == BC_SEEN_WINDOW_TIME
                 ? s.seen.window.capacity
                       ? 100.0 * (double)s.seen.window.live_keys /
                             (double)s.seen.window.capacity
                       : 0.0
                 : 100.0 * s.seen.bloom.fill);
    /* Dropped in this order while the line is too wide for the terminal:
     * the hosts' detail, the verdicts, the filter's fill. */
    const char *parts[3] = {hosts, seen, fill};
    size_t width = tty ? term_width() : SIZE_MAX;
    for (int drop = 0; drop <= 3; drop++) {
        snprintf(line, sizeof(line),
                 "%s%llu pages  %.1f/s  queue %zu  hosts %zu%s%s%s", lead,
                 (unsigned long long)k.pages, rate, s.queued, s.hosts,
                 drop < 1 ? parts[0] : "", drop < 2 ? parts[1] : "",
                 drop < 3 ? parts[2] : "");
        if (strlen(line) < width)
            break;
    }
    if (width != SIZE_MAX && strlen(line) >= width)
        line[width > 1 ? width - 1 : 0] = '\0'; /* ASCII: bytes = columns */
    fprintf(stderr, "%s%s%s", tty ? "\r\033[K" : "", line,
            c->stderr_tty && !final ? "" : "\n");
}

/* What the crawl gave up to transient faults (all runs, with a state):
 * pages whose final fault was transient (retries exhausted, or their host
 * down), URLs dropped with their host down, the URLs lost with the
 * hosts whose robots.txt stayed unreachable (queued, then dropped: those
 * found after the give-up too, so --retry-failed has them all), and
 * sitemaps (retries exhausted, or their host down). */
struct given_up {
    uint64_t exhausted, down, robots, sitemaps, total;
    size_t hosts_down, hosts_robots;
};

static void sum_robots_lost(void *ctx, const char *origin, size_t len,
                            uint64_t lost)
{
    (void)origin;
    (void)len;
    *(uint64_t *)ctx += lost;
}

static struct given_up given_up_of(struct crawl *c)
{
    struct bc_frontier_stats s;
    bc_frontier_stats(c->frontier, now_ms(), &s);
    struct given_up g = {0, 0, 0, 0, 0, s.hosts_down, s.hosts_given_up};
    g.exhausted = s.retries_exhausted;
    g.down = s.reasons[BC_ADMIT_HOST_DOWN];
    g.sitemaps = s.sitemaps[BC_FRONTIER_SITEMAP_TRANSIENT];
    bc_frontier_given_up_hosts(c->frontier, sum_robots_lost, &g.robots);
    g.total = g.exhausted + g.down + g.robots + g.sitemaps;
    return g;
}

static void report_given_up(void *ctx, const char *origin, size_t len,
                            uint64_t lost)
{
    fprintf(ctx, "  %.*s  %llu URLs lost\n", (int)len, origin,
            (unsigned long long)lost);
}

/* "name n, name n" for the non-zero counters of an array; "none". */
static void print_counts(FILE *f, const uint64_t *v, size_t n, size_t from,
                         const char *(*name)(size_t i), bool json)
{
    bool any = false;
    for (size_t i = from; i < n; i++) {
        if (!v[i])
            continue;
        if (json)
            fprintf(f, "%s\"%s\": %llu", any ? ", " : "", name(i),
                    (unsigned long long)v[i]);
        else
            fprintf(f, "%s%s %llu", any ? ", " : "", name(i),
                    (unsigned long long)v[i]);
        any = true;
    }
    if (!any && !json)
        fputs("none", f);
}

static const char *admit_reason_name(size_t i)
{
    return bc_frontier_reason_name((enum bc_frontier_reason)i);
}

static const char *sitemap_reason_name(size_t i)
{
    return bc_frontier_sitemap_reason_name((enum bc_frontier_sitemap_reason)i);
}

static const char *sitemap_stop_name(size_t i)
{
    return bc_sitemap_stop_name((enum bc_sitemap_stop)i);
}

static const char *error_kind_name(size_t i)
{
    return bc_crawler_error_kind_name((enum bc_crawler_error_kind)i);
}

/* ---- the per-host table ------------------------------------------------ */

/* Every host of the crawl (bc_crawler_hosts()), sorted by pages, most
 * first, then by origin; origins valid until the crawler is freed. */
struct host_table {
    struct bc_crawler_host *row;
    size_t count, cap;
    bool nomem;
};

static void host_table_add(void *ctx, const struct bc_crawler_host *h)
{
    struct host_table *t = ctx;
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct bc_crawler_host *row = realloc(t->row, cap * sizeof(*row));
        if (!row) {
            t->nomem = true;
            return;
        }
        t->row = row;
        t->cap = cap;
    }
    t->row[t->count++] = *h;
}

static int host_order(const void *pa, const void *pb)
{
    const struct bc_crawler_host *a = pa, *b = pb;
    if (a->pages != b->pages)
        return a->pages > b->pages ? -1 : 1;
    return strcmp(a->origin, b->origin);
}

static void host_table_fill(struct crawl *c, struct host_table *t)
{
    memset(t, 0, sizeof(*t));
    bc_crawler_hosts(c->crawler, host_table_add, t);
    if (t->count > 1)
        qsort(t->row, t->count, sizeof(*t->row), host_order);
}

/* A host's robots.txt as the report says it: parsed, unavailable (4xx:
 * all allowed), unreachable (5xx or no answer; given up or to be asked
 * again), pending (being fetched, or due before the host's URLs),
 * disabled (--no-robots), none (never needed). */
static const char *robots_word(const struct crawl *c,
                               const struct bc_crawler_host *h)
{
    if (c->opt.no_robots)
        return "disabled";
    switch (h->robots) {
    case BC_FRONTIER_ROBOTS_PARSED:
        return "parsed";
    case BC_FRONTIER_ROBOTS_ALLOW_ALL:
        return "unavailable";
    case BC_FRONTIER_ROBOTS_UNREACHABLE:
    case BC_FRONTIER_ROBOTS_GIVEN_UP:
        return "unreachable";
    case BC_FRONTIER_ROBOTS_UNKNOWN:
        break;
    }
    return h->robots_fetching || h->queued > 0 ? "pending" : "none";
}

static uint64_t host_errors(const struct bc_crawler_host *h)
{
    uint64_t n = 0;
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        n += h->errors[e];
    return n;
}

#define REPORT_TOP_HOSTS 20

/* The report's lines on what was given up to transient faults, with the
 * counts by host (every such host, however many). */
static void report_transient(struct crawl *c, FILE *f,
                             const struct bc_frontier_stats *s)
{
    struct given_up g = given_up_of(c);
    if (s->hosts_open)
        fprintf(f,
                "hosts paused         %zu (circuit open after %llu transient "
                "faults in a row)\n",
                s->hosts_open, (unsigned long long)c->opt.host_failures);
    if (g.total == 0)
        return;
    fprintf(f,
            "given up             %llu URLs to transient faults: %llu "
            "retries exhausted, %llu with their host down (%zu hosts), "
            "%llu with robots.txt unreachable (%zu hosts), %llu "
            "sitemaps; crawl --retry-failed --state DIR fetches them "
            "again\n",
            (unsigned long long)g.total, (unsigned long long)g.exhausted,
            (unsigned long long)g.down, g.hosts_down,
            (unsigned long long)g.robots, g.hosts_robots,
            (unsigned long long)g.sitemaps);
    struct host_table t;
    host_table_fill(c, &t);
    for (size_t i = 0; i < t.count; i++) {
        const struct bc_crawler_host *h = &t.row[i];
        uint64_t robots = h->given_up ? h->lost : 0;
        if (!h->exhausted && !h->down && !robots)
            continue;
        fprintf(f, "  %-36s %llu URLs:", h->origin,
                (unsigned long long)(h->exhausted + h->down_lost + robots));
        if (h->exhausted)
            fprintf(f, " %llu retries exhausted",
                    (unsigned long long)h->exhausted);
        if (h->down)
            fprintf(f, "%s host down (%llu URLs)", h->exhausted ? "," : "",
                    (unsigned long long)h->down_lost);
        if (robots)
            fprintf(f, "%s robots.txt unreachable (%llu URLs)",
                    h->exhausted || h->down ? "," : "",
                    (unsigned long long)robots);
        fputc('\n', f);
    }
    free(t.row);
}

/* The report's table: the top 20 hosts by pages. */
static void report_hosts(struct crawl *c, FILE *f)
{
    struct host_table t;
    host_table_fill(c, &t);
    fprintf(f, "\nhosts (top %zu of %zu by pages)\n",
            t.count < REPORT_TOP_HOSTS ? t.count : (size_t)REPORT_TOP_HOSTS,
            t.count);
    fprintf(f, "  %-36s %7s %11s %6s %6s %6s %6s %6s %-11s %8s %7s %7s %7s\n",
            "host", "pages", "bytes", "2xx", "3xx", "4xx", "5xx", "errors",
            "robots.txt", "ms mean", "ms p95", "queued", "delay s");
    for (size_t i = 0; i < t.count && i < REPORT_TOP_HOSTS; i++) {
        const struct bc_crawler_host *h = &t.row[i];
        fprintf(f,
                "  %-36s %7llu %11llu %6llu %6llu %6llu %6llu %6llu %-11s "
                "%8.1f %7llu %7zu %7.1f",
                h->origin, (unsigned long long)h->pages,
                (unsigned long long)h->bytes,
                (unsigned long long)h->status_class[2],
                (unsigned long long)h->status_class[3],
                (unsigned long long)h->status_class[4],
                (unsigned long long)h->status_class[5],
                (unsigned long long)host_errors(h), robots_word(c, h),
                h->ms_mean, (unsigned long long)h->ms_p95, h->queued,
                (double)h->delay_ms / 1000.0);
        /* The delay is robots.txt's when its Crawl-delay is the larger */
        if (h->crawl_delay_ms && h->crawl_delay_ms >= h->delay_ms)
            fprintf(f, "  Crawl-delay %.1f s",
                    (double)h->crawl_delay_ms / 1000.0);
        if (h->given_up)
            fprintf(f, "  given up (%llu URLs)", (unsigned long long)h->lost);
        if (h->down)
            fprintf(f, "  down (%llu URLs)", (unsigned long long)h->down_lost);
        else if (h->circuit != BC_FRONTIER_CIRCUIT_CLOSED)
            fputs("  paused", f);
        fputc('\n', f);
    }
    if (t.nomem)
        fprintf(f, "  (out of memory: some hosts are missing)\n");
    free(t.row);
}

static const char *circuit_name(enum bc_frontier_circuit circuit)
{
    switch (circuit) {
    case BC_FRONTIER_CIRCUIT_CLOSED:
        return "closed";
    case BC_FRONTIER_CIRCUIT_OPEN:
        return "open";
    case BC_FRONTIER_CIRCUIT_HALF_OPEN:
        return "half_open";
    }
    return "unknown";
}

/* One host's object of "per_host" (and of crawl --listen's GET /hosts). */
static void write_host_json(const struct crawl *c, FILE *f,
                            const struct bc_crawler_host *h)
{
    /* "next_fetch_in_ms": how long until a request to it may start (0:
     * it may now, whether it has a URL queued or not). */
    uint64_t now = now_ms();
    fputs("{\"host\": ", f);
    json_string(f, h->origin, h->origin_len);
    fprintf(f, ", \"pages\": %llu, \"bytes\": %llu, \"errors\": {",
            (unsigned long long)h->pages, (unsigned long long)h->bytes);
    print_counts(f, h->errors, BC_CRAWLER_ERR_KIND_COUNT, 0, error_kind_name,
                 true);
    fprintf(
        f,
        "}, \"status\": {\"2xx\": %llu, \"3xx\": %llu, \"4xx\": "
        "%llu, \"5xx\": %llu}, \"robots\": \"%s\", "
        "\"ms_mean\": %.1f, \"ms_p95\": %llu, \"queued\": %zu, "
        "\"given_up\": %s, \"given_up_urls\": %llu, "
        "\"circuit\": \"%s\", \"failures\": %u, \"down\": %s, "
        "\"down_urls\": %llu, \"retries_exhausted\": %llu, "
        "\"delay_ms\": %llu, \"crawl_delay_ms\": %llu, "
        "\"next_fetch_in_ms\": %llu}",
        (unsigned long long)h->status_class[2],
        (unsigned long long)h->status_class[3],
        (unsigned long long)h->status_class[4],
        (unsigned long long)h->status_class[5], robots_word(c, h), h->ms_mean,
        (unsigned long long)h->ms_p95, h->queued,
        h->given_up ? "true" : "false", (unsigned long long)h->lost,
        circuit_name(h->circuit), h->failures, h->down ? "true" : "false",
        (unsigned long long)h->down_lost, (unsigned long long)h->exhausted,
        (unsigned long long)h->delay_ms, (unsigned long long)h->crawl_delay_ms,
        (unsigned long long)(h->next_contact_ms > now ? h->next_contact_ms - now
                                                      : 0));
}

/* --stats-json's "per_host": every host, in the table's order. */
static void write_hosts_json(struct crawl *c, FILE *f)
{
    struct host_table t;
    host_table_fill(c, &t);
    fputs("\"per_host\": [", f);
    for (size_t i = 0; i < t.count; i++) {
        if (i)
            fputs(", ", f);
        write_host_json(c, f, &t.row[i]);
    }
    fputs("]", f);
    free(t.row);
}

/* ---- crawl workers (--redis) ------------------------------------------- */

/* The report's "workers" block. The hosts this worker owns are those of
 * its frontier: it admits no other. */
static void report_workers(struct crawl *c, FILE *f,
                           const struct bc_crawler_stats *k)
{
    struct bc_workers_stats w;
    bc_workers_stats(c->workers, &w);
    struct host_table t;
    host_table_fill(c, &t);
    fprintf(f,
            "\nworkers              worker %u of %u, crawl %s at %s%s\n"
            "  hosts owned        %zu",
            w.index, w.workers, c->opt.crawl_id, c->opt.redis_shown,
            c->over_at_start ? " (over when this run started)"
            : c->over        ? " (the crawl is over)"
                             : "",
            t.count);
    for (size_t i = 0; i < t.count && i < REPORT_TOP_HOSTS; i++)
        fprintf(f, "%s%s", i ? ", " : ": ", t.row[i].origin);
    if (t.count > REPORT_TOP_HOSTS)
        fputs(", ...", f);
    free(t.row);
    fprintf(f,
            "\n  routed             %llu URLs out to other workers (%llu "
            "seeds), %llu in from them\n",
            (unsigned long long)k->routed_out,
            (unsigned long long)w.routed_seeds,
            (unsigned long long)k->routed_in);
    fprintf(f,
            "  stream entries     %llu sent (%llu URLs; %llu URLs sent "
            "recently not sent again), %llu received (%llu URLs), %llu "
            "acknowledged\n",
            (unsigned long long)w.sent_entries, (unsigned long long)w.sent_urls,
            (unsigned long long)w.send_cache_hits,
            (unsigned long long)w.received_entries,
            (unsigned long long)w.received_urls,
            (unsigned long long)w.acked_entries);
    fprintf(f,
            "  garbage            %llu entries, %llu lines (skipped)\n"
            "  outbox             %llu URLs waiting for Redis (at most "
            "%llu)\n"
            "  redis              %llu commands, %llu errors, %llu "
            "reconnects; %s\n",
            (unsigned long long)w.garbage_entries,
            (unsigned long long)w.garbage_lines, (unsigned long long)w.outbox,
            (unsigned long long)w.outbox_max,
            (unsigned long long)w.redis_commands,
            (unsigned long long)w.redis_errors,
            (unsigned long long)w.redis_reconnects,
            w.redis_up ? "connected" : "not connected");
}

/* --stats-json's "workers": {...}. */
static void write_workers_json(struct crawl *c, FILE *f,
                               const struct bc_crawler_stats *k)
{
    struct bc_workers_stats w;
    bc_workers_stats(c->workers, &w);
    fprintf(f, "\"workers\": {\"index\": %u, \"workers\": %u, \"crawl_id\": ",
            w.index, w.workers);
    json_string(f, c->opt.crawl_id, strlen(c->opt.crawl_id));
    fputs(", \"hosts_owned\": [", f);
    struct host_table t;
    host_table_fill(c, &t);
    for (size_t i = 0; i < t.count; i++) {
        fputs(i ? ", " : "", f);
        json_string(f, t.row[i].origin, t.row[i].origin_len);
    }
    free(t.row);
    fprintf(
        f,
        "], \"routed_out\": %llu, \"routed_in\": %llu, "
        "\"routed_seeds\": %llu, \"sent_entries\": %llu, "
        "\"sent_urls\": %llu, \"send_cache_hits\": %llu, "
        "\"received_entries\": %llu, \"received_urls\": %llu, "
        "\"acked_entries\": %llu, \"garbage\": %llu, "
        "\"garbage_lines\": %llu, \"outbox\": %llu, "
        "\"outbox_max\": %llu, \"redis_errors\": %llu, "
        "\"redis_reconnects\": %llu, \"redis_commands\": %llu, "
        "\"redis_up\": %s, \"over\": %s, \"over_at_start\": %s}, ",
        (unsigned long long)k->routed_out, (unsigned long long)k->routed_in,
        (unsigned long long)w.routed_seeds, (unsigned long long)w.sent_entries,
        (unsigned long long)w.sent_urls, (unsigned long long)w.send_cache_hits,
        (unsigned long long)w.received_entries,
        (unsigned long long)w.received_urls,
        (unsigned long long)w.acked_entries,
        (unsigned long long)w.garbage_entries,
        (unsigned long long)w.garbage_lines, (unsigned long long)w.outbox,
        (unsigned long long)w.outbox_max, (unsigned long long)w.redis_errors,
        (unsigned long long)w.redis_reconnects,
        (unsigned long long)w.redis_commands, w.redis_up ? "true" : "false",
        c->over ? "true" : "false", c->over_at_start ? "true" : "false");
}

/* ---- the counter tables ------------------------------------------------ */

/* One module's counter table (bloomcrawl/counter.h) and its stats. */
struct counter_group {
    const char *name; /* "seen", "frontier", "crawler", "workers" */
    const struct bc_counter *t;
    size_t n;
    const void *stats;
};

/* The tables in the order the report, --stats-json and --counters show
 * them; the workers' only for a crawl worker (w not NULL). Returns how
 * many. */
static size_t counter_groups(struct counter_group g[4],
                             const struct bc_frontier_stats *s,
                             const struct bc_crawler_stats *k,
                             const struct bc_workers_stats *w)
{
    size_t n = 0;
    g[n].name = "seen", g[n].stats = s ? &s->seen : NULL;
    g[n].t = bc_seen_counter_table(&g[n].n), n++;
    g[n].name = "frontier", g[n].stats = s;
    g[n].t = bc_frontier_counter_table(&g[n].n), n++;
    g[n].name = "crawler", g[n].stats = k;
    g[n].t = bc_crawler_counter_table(&g[n].n), n++;
    if (w || !s) {
        g[n].name = "workers", g[n].stats = w;
        g[n].t = bc_workers_counter_table(&g[n].n), n++;
    }
    return n;
}

/* Element i of counter c into buf: an integer as such, a double with %g
 * (JSON has no NaN nor infinity: null). */
static const char *counter_text(char buf[32], const struct bc_counter *c,
                                const void *stats, size_t i)
{
    double d = bc_counter_value(c, stats, i);
    if (c->type == BC_COUNTER_DOUBLE && !isfinite(d))
        snprintf(buf, 32, "null");
    else if (c->type == BC_COUNTER_DOUBLE)
        snprintf(buf, 32, "%.6g", d);
    else if (c->type == BC_COUNTER_INT)
        snprintf(buf, 32, "%lld", (long long)d);
    else
        snprintf(buf, 32, "%llu",
                 (unsigned long long)bc_counter_u64(c, stats, i));
    return buf;
}

/* crawl --counters: every counter, one line each, tab-separated: its
 * name (as the report and --stats-json's "counters" spell it), kind,
 * unit, help, and an array's label with its values. */
static void print_counter_tables(FILE *f)
{
    struct counter_group g[4];
    size_t ng = counter_groups(g, NULL, NULL, NULL);
    fputs("# counter\tkind\tunit\thelp\tlabel: values\n", f);
    for (size_t a = 0; a < ng; a++)
        for (size_t r = 0; r < g[a].n; r++) {
            const struct bc_counter *c = &g[a].t[r];
            fprintf(f, "%s.%s\t%s\t%s\t%s\t", g[a].name, c->name,
                    bc_counter_kind_name(c->kind), *c->unit ? c->unit : "-",
                    c->help);
            if (c->label) {
                fprintf(f, "%s:", c->label);
                for (size_t i = 0; i < c->count; i++)
                    fprintf(f, "%s%s", i ? "," : " ", c->label_value(i));
            } else
                fputc('-', f);
            fputc('\n', f);
        }
}

/* --stats-json's "counters": {"seen": {"tested": N, ...}, ...}, every
 * counter of the tables, an array as an object keyed by label value. */
static void write_counters_json(FILE *f, const struct bc_frontier_stats *s,
                                const struct bc_crawler_stats *k,
                                const struct bc_workers_stats *w)
{
    struct counter_group g[4];
    size_t ng = counter_groups(g, s, k, w);
    char v[32];
    fputs("\"counters\": {", f);
    for (size_t a = 0; a < ng; a++) {
        fprintf(f, "%s\"%s\": {", a ? ", " : "", g[a].name);
        for (size_t r = 0; r < g[a].n; r++) {
            const struct bc_counter *c = &g[a].t[r];
            fprintf(f, "%s\"%s\": ", r ? ", " : "", c->name);
            if (!c->label) {
                fputs(counter_text(v, c, g[a].stats, 0), f);
                continue;
            }
            fputc('{', f);
            for (size_t i = 0; i < c->count; i++) {
                fprintf(f, "%s\"%s\": %s", i ? ", " : "", c->label_value(i),
                        counter_text(v, c, g[a].stats, i));
            }
            fputc('}', f);
        }
        fputc('}', f);
    }
    fputs("}, ", f);
}

/* Whether every element of counter c is zero. */
static bool counter_zero(const struct bc_counter *c, const void *stats)
{
    for (size_t i = 0; i < c->count; i++)
        if (bc_counter_value(c, stats, i) != 0.0)
            return false;
    return true;
}

/* The report's "counters" section: a line per counter that is not zero,
 * "GROUP.NAME  VALUE" or, for an array, its non-zero elements as "LABEL
 * VALUE, ..."; then per group the names of those that are zero, so that
 * every counter of crawl --counters is there. */
static void report_counters(FILE *f, const struct bc_frontier_stats *s,
                            const struct bc_crawler_stats *k,
                            const struct bc_workers_stats *w)
{
    struct counter_group g[4];
    size_t ng = counter_groups(g, s, k, w);
    char v[32];
    fputs("\ncounters (crawl --counters says what each counts)\n", f);
    for (size_t a = 0; a < ng; a++) {
        for (size_t r = 0; r < g[a].n; r++) {
            const struct bc_counter *c = &g[a].t[r];
            if (counter_zero(c, g[a].stats))
                continue;
            int len = fprintf(f, "  %s.%s", g[a].name, c->name);
            size_t col = len < 34 ? 34 : (size_t)len + 1;
            fprintf(f, "%*s", (int)col - len, "");
            if (!c->label)
                fputs(counter_text(v, c, g[a].stats, 0), f);
            /* An array: its elements that are not zero, wrapped at 78
             * columns (a comma included). */
            for (size_t i = 0, shown = 0; c->label && i < c->count; i++) {
                if (bc_counter_value(c, g[a].stats, i) == 0.0)
                    continue;
                const char *label = c->label_value(i);
                counter_text(v, c, g[a].stats, i);
                size_t width = strlen(label) + 1 + strlen(v);
                if (shown && col + 2 + width + 1 > 78)
                    fprintf(f, ",\n%34s", ""), col = 34;
                else if (shown)
                    fputs(", ", f), col += 2;
                fprintf(f, "%s %s", label, v);
                col += width;
                shown++;
            }
            fputc('\n', f);
        }
        /* The zero ones, wrapped at 78 columns. */
        size_t col = 0;
        for (size_t r = 0; r < g[a].n; r++) {
            const struct bc_counter *c = &g[a].t[r];
            if (!counter_zero(c, g[a].stats))
                continue;
            if (col == 0)
                col = (size_t)fprintf(f, "  %s, zero:", g[a].name);
            else if (col + 2 + strlen(c->name) + 1 > 78)
                fputs(",\n   ", f), col = 3;
            else
                col += (size_t)fprintf(f, ",");
            col += (size_t)fprintf(f, " %s", c->name);
        }
        if (col)
            fputc('\n', f);
    }
}

/* The sitemaps' lines of the report. */
static void report_sitemaps(FILE *f, const struct bc_frontier_stats *s,
                            const struct bc_crawler_stats *k)
{
    /* A sitemap that is not there (404, 410: a guessed /sitemap.xml
     * mostly) is no failure. */
    uint64_t errors = k->sitemap_http_errors - k->sitemap_not_found;
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        errors += k->sitemap_errors[e];
    fprintf(f,
            "sitemaps             %llu fetched (%llu queued, %llu not found, "
            "%llu failed); "
            "%llu page URLs listed, %llu discovered via sitemap; %llu "
            "sitemaps listed by indexes\n",
            (unsigned long long)k->sitemaps_fetched,
            (unsigned long long)s->sitemaps[BC_FRONTIER_SITEMAP_QUEUED],
            (unsigned long long)k->sitemap_not_found,
            (unsigned long long)errors, (unsigned long long)k->sitemap_urls,
            (unsigned long long)k->sitemap_admitted,
            (unsigned long long)k->sitemap_indexed);
    fputs("  listed, not admitted  ", f);
    print_counts(f, k->sitemap_rejected, BC_ADMIT_REASON_COUNT, 0,
                 admit_reason_name, false);
    fputs("\n  sitemaps refused      ", f);
    print_counts(f, s->sitemaps, BC_FRONTIER_SITEMAP_REASON_COUNT, 1,
                 sitemap_reason_name, false);
    fputs("\n  sitemaps cut          ", f);
    print_counts(f, k->sitemap_cut, BC_SITEMAP_STOP_COUNT, 1, sitemap_stop_name,
                 false);
    fputc('\n', f);
}

static void report(struct crawl *c, FILE *f, uint64_t now)
{
    struct bc_frontier_stats s;
    bc_frontier_stats(c->frontier, now, &s);
    struct bc_crawler_stats k;
    bc_crawler_stats(c->crawler, &k);
    const struct bc_seen_stats *v = &s.seen;
    double secs = (double)(now - c->start_ms) / 1000.0;
    uint64_t lookups = v->lru.hits + v->lru.misses;
    fprintf(f, "\n== bloomcrawl report\n");
    fprintf(f,
            "time                 %.1f s, %llu pages (%.1f pages/s), %.2f "
            "MiB of bodies\n",
            secs, (unsigned long long)k.pages,
            secs > 0 ? (double)(k.pages - c->pages_before) / secs : 0.0,
            (double)k.bytes / 1048576.0);
    if (c->pages_before || c->elapsed_before)
        fprintf(f,
                "                     (this run: %llu pages; the time and "
                "the rate are this run's; all runs: %.1f s)\n",
                (unsigned long long)(k.pages - c->pages_before),
                (double)(c->elapsed_before + now - c->start_ms) / 1000.0);
    fprintf(f,
            "\nURLs discovered      %llu (%llu seeds, %llu links, %llu "
            "redirect targets; %llu nofollow links not followed)\n",
            (unsigned long long)s.added, (unsigned long long)k.seeds,
            (unsigned long long)k.links, (unsigned long long)k.redirects,
            (unsigned long long)k.nofollow_skipped);
    fprintf(f,
            "spellings merged     %llu links not written in canonical "
            "form were an already-seen URL (%llu of them absolute URLs)\n",
            (unsigned long long)k.merged,
            (unsigned long long)k.merged_absolute);
    if (k.dropped)
        fprintf(f,
                "dropped              %llu queued URLs disallowed once "
                "robots.txt was known\n",
                (unsigned long long)k.dropped);
    if (s.hosts_given_up) {
        fprintf(f,
                "hosts given up       %zu (robots.txt unreachable after %llu "
                "retries; %llu queued URLs dropped)\n",
                s.hosts_given_up, (unsigned long long)c->opt.robots_retries,
                (unsigned long long)k.given_up_dropped);
        bc_frontier_given_up_hosts(c->frontier, report_given_up, f);
    }
    if (!c->opt.no_sitemaps)
        report_sitemaps(f, &s, &k);
    if (k.retried)
        fprintf(f,
                "retried              %llu attempts failed with a transient "
                "fault and queued again (at most %llu retries a URL, the "
                "first after %llu ms, doubling)\n",
                (unsigned long long)k.retried,
                (unsigned long long)c->opt.max_retries,
                (unsigned long long)c->opt.retry_delay_ms);
    report_transient(c, f, &s);
    if (c->state) {
        struct bc_crawl_state_info si;
        bc_crawl_state_info(c->state, &si);
        fprintf(f,
                "state                %s, run %llu; refetched after restart "
                "%llu (pages in flight at a kill, over all runs)\n",
                c->opt.state_dir, (unsigned long long)si.runs,
                (unsigned long long)si.refetched);
    }
    if (c->opt.revisit)
        fprintf(f,
                "revisit              %llu due of %llu known pages (queued "
                "again at the start of this run), %llu sitemaps read again; "
                "%llu pages due by a sitemap's newer lastmod in this run\n",
                (unsigned long long)c->revisit_due,
                (unsigned long long)c->revisit_known,
                (unsigned long long)c->revisit_sitemaps,
                (unsigned long long)(k.lastmod_due - c->lastmod_due_before));
    if (c->warc)
        fprintf(f,
                "warc                 %s%s: %llu records in %llu files, "
                "%.2f MiB\n",
                bc_warc_file(c->warc),
                c->opt.warc_max_size ? " (the last file)" : "",
                (unsigned long long)k.warc_records,
                (unsigned long long)k.warc_files,
                (double)k.warc_bytes / 1048576.0);
    if (!c->opt.no_payload_dedup) {
        fprintf(f,
                "identical payloads   %llu pages had an earlier page's "
                "payload (%s), %.2f MiB %s; %llu distinct payloads",
                (unsigned long long)k.duplicates,
                c->warc ? "revisit records" : "duplicate_of in --out",
                (double)k.duplicate_bytes / 1048576.0,
                c->warc ? "not stored again" : "of duplicate payloads",
                (unsigned long long)k.payload_digests);
        if (k.unchanged)
            fprintf(f, "; %llu recrawled pages unchanged (unchanged in --out)",
                    (unsigned long long)k.unchanged);
        fputc('\n', f);
    }
    if (!c->opt.no_conditional && k.conditional_requests)
        fprintf(f,
                "conditional requests %llu recrawled pages sent with their "
                "validators, %llu answered 304 Not Modified\n",
                (unsigned long long)k.conditional_requests,
                (unsigned long long)k.not_modified);

    if (!c->opt.no_near_dedup) {
        fprintf(f,
                "near-duplicates      %llu pages within %u bits of an "
                "earlier page's simhash (near_duplicate_of in --out); %llu "
                "fingerprints, %llu pages too short to take one",
                (unsigned long long)k.near_duplicates, c->opt.near_k,
                (unsigned long long)k.fingerprints,
                (unsigned long long)k.too_short);
        if (c->opt.near_skip_links)
            fprintf(f, "; %llu links of copies not followed",
                    (unsigned long long)k.near_links_skipped);
        fputc('\n', f);
        clusters_report(&c->clusters, &c->near_by_host, f);
    }
    if (k.dedup_unindexed)
        fprintf(f,
                "not indexed          %llu pages the duplicate indexes "
                "could not take (out of memory): a later copy of one is "
                "not reported\n",
                (unsigned long long)k.dedup_unindexed);
    if (c->workers)
        report_workers(c, f, &k);
    fprintf(f, "\nadmission (frontier)\n");
    for (int r = 0; r < BC_ADMIT_REASON_COUNT; r++) {
        if (!s.reasons[r])
            continue;
        fprintf(f, "  %-19s %llu",
                bc_frontier_reason_name((enum bc_frontier_reason)r),
                (unsigned long long)s.reasons[r]);
        if (r == BC_ADMIT_BAD_URL)
            fprintf(f,
                    " (unsupported scheme %llu: mailto:, javascript:, ...; "
                    "malformed %llu)",
                    (unsigned long long)k.bad_scheme,
                    (unsigned long long)k.bad_malformed);
        fputc('\n', f);
    }
    fprintf(f, "\nseen-test (tier 1 Bloom filter, tier 2 LRU)\n");
    fprintf(f, "  tested             %llu\n", (unsigned long long)v->tested);
    fprintf(f,
            "  NEW                %llu (false positives caught by the "
            "complete LRU: %llu)\n",
            (unsigned long long)v->verdict_new,
            (unsigned long long)v->fp_caught);
    fprintf(f, "  DUPLICATE          %llu\n", (unsigned long long)v->duplicate);
    fprintf(f, "  PROBABLY_SEEN      %llu\n",
            (unsigned long long)v->probably_seen);
    if (v->kind == BC_SEEN_WINDOW_TIME)
        fprintf(f,
                "  window filter      %llu ms, G = %u, %.1f KiB, k = %u, "
                "%llu live keys of %llu, FPR now %.2g (peak %.2g)\n"
                "  recrawled          %llu (admitted again after the "
                "window)\n",
                (unsigned long long)v->window.window, v->window.generations,
                (double)v->window.bytes / 1024.0, v->window.k,
                (unsigned long long)v->window.live_keys,
                (unsigned long long)v->window.capacity, v->window.fpr_predicted,
                v->window.fpr_peak, (unsigned long long)recrawled(v));
    else
        fprintf(f,
                "  Bloom filter       %s, %llu bits (%.1f KiB), k = %u, %llu "
                "keys, fill %.1f %%, estimated FPR %.2g\n",
                v->bloom.layout == BC_BLOOM_CLASSIC ? "classic" : "blocked",
                (unsigned long long)v->bloom.m_bits,
                (double)v->bloom.bytes / 1024.0, v->bloom.k,
                (unsigned long long)v->bloom.inserts, 100.0 * v->bloom.fill,
                v->bloom.fpr_estimated);
    /* The LRU is not saved: after a resume it is not complete although
     * it may not have evicted anything in this run. */
    struct bc_crawl_state_info si;
    bc_crawl_state_info(c->state, &si); /* zeros without a state */
    fprintf(f,
            "  LRU                %zu of %zu entries, hit rate %.1f %%, "
            "%llu evictions, %s%s\n",
            v->lru.count, v->lru.capacity,
            lookups ? 100.0 * (double)v->lru.hits / (double)lookups : 0.0,
            (unsigned long long)v->lru.evictions,
            v->lru_complete ? "complete (exact)"
            : si.resumed    ? "not restored on resume (the URLs of earlier "
                              "runs are tested by the Bloom filter alone)"
                            : "has evicted",
            !v->lru_complete && si.resumed && v->lru.evictions ? "; has evicted"
                                                               : "");
    fprintf(f,
            "\nfetches              %llu pages: 2xx %llu, 3xx %llu, 4xx "
            "%llu, 5xx %llu\n",
            (unsigned long long)k.pages, (unsigned long long)k.status_class[2],
            (unsigned long long)k.status_class[3],
            (unsigned long long)k.status_class[4],
            (unsigned long long)k.status_class[5]);
    fprintf(f, "  errors            ");
    uint64_t errors = 0;
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++) {
        if (k.errors[e])
            fprintf(f, " %s %llu",
                    bc_crawler_error_kind_name((enum bc_crawler_error_kind)e),
                    (unsigned long long)k.errors[e]);
        errors += k.errors[e];
    }
    fprintf(f, "%s\n", errors ? "" : " none");
    fprintf(f,
            "  robots.txt         %llu fetched: %llu parsed, %llu "
            "unavailable (allow all), %llu unreachable\n",
            (unsigned long long)s.robots_fetches,
            (unsigned long long)s.robots_parsed,
            (unsigned long long)s.robots_unavailable,
            (unsigned long long)s.robots_unreachable);
    fprintf(f, "  hosts              %zu; %zu URLs still queued\n", s.hosts,
            s.queued);
    if (k.skipped_content_type)
        fprintf(f,
                "  skipped            %llu pages of a refused content type "
                "(--accept-type, --reject-type)\n",
                (unsigned long long)k.skipped_content_type);
    report_hosts(c, f);
    struct bc_workers_stats w;
    if (c->workers)
        bc_workers_stats(c->workers, &w);
    report_counters(f, &s, &k, c->workers ? &w : NULL);
}

/* "sitemaps": {...}, "discovered_via_sitemap": N, (DESIGN.md, crawl). */
static void write_sitemaps_json(FILE *f, const struct bc_frontier_stats *s,
                                const struct bc_crawler_stats *k)
{
    fprintf(f,
            "\"sitemaps\": {\"queued\": %llu, \"seen_keys\": %llu, "
            "\"started\": %llu, "
            "\"fetched\": %llu, \"urls\": %llu, \"admitted\": %llu, "
            "\"index_entries\": %llu, \"rejected\": {",
            (unsigned long long)s->sitemaps[BC_FRONTIER_SITEMAP_QUEUED],
            (unsigned long long)s->sitemap_keys,
            (unsigned long long)k->sitemaps_started,
            (unsigned long long)k->sitemaps_fetched,
            (unsigned long long)k->sitemap_urls,
            (unsigned long long)k->sitemap_admitted,
            (unsigned long long)k->sitemap_indexed);
    print_counts(f, k->sitemap_rejected, BC_ADMIT_REASON_COUNT, 0,
                 admit_reason_name, true);
    fputs("}, \"refused\": {", f);
    print_counts(f, s->sitemaps, BC_FRONTIER_SITEMAP_REASON_COUNT, 1,
                 sitemap_reason_name, true);
    fputs("}, \"cut\": {", f);
    print_counts(f, k->sitemap_cut, BC_SITEMAP_STOP_COUNT, 1, sitemap_stop_name,
                 true);
    fputs("}, \"errors\": {", f);
    print_counts(f, k->sitemap_errors, BC_CRAWLER_ERR_KIND_COUNT, 0,
                 error_kind_name, true);
    bool any = false;
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        any = any || k->sitemap_errors[e];
    fprintf(f,
            "%s\"http\": %llu}, \"not_found\": %llu}, "
            "\"discovered_via_sitemap\": %llu, ",
            any ? ", " : "", (unsigned long long)k->sitemap_http_errors,
            (unsigned long long)k->sitemap_not_found,
            (unsigned long long)k->sitemap_admitted);
}

/* ---- local resources ---------------------------------------------------- */

/* The symbol of the errnos a local failure names; NULL for others. */
static const char *errno_name(int e)
{
    switch (e) {
    case EMFILE:
        return "EMFILE";
    case ENFILE:
        return "ENFILE";
    case ENOMEM:
        return "ENOMEM";
    case ENOBUFS:
        return "ENOBUFS";
    case EADDRNOTAVAIL:
        return "EADDRNOTAVAIL";
    case ENOSPC:
        return "ENOSPC";
    case EDQUOT:
        return "EDQUOT";
    case EIO:
        return "EIO";
    default:
        return NULL;
    }
}

/* The crawl stopped: this machine refused a resource for --local-wait. */
static void local_error(const struct crawl *c, int err, uint64_t for_ms)
{
    const char *name = errno_name(err);
    char sym[32];
    if (!name) {
        snprintf(sym, sizeof(sym), "errno %d", err);
        name = sym;
    }
    fprintf(stderr,
            "crawl: out of %s (%s, %s) for %llu s: stopping; %s once there "
            "are more\n",
            bc_crawler_resource_name(err), strerror(err), name,
            (unsigned long long)((for_ms + 500) / 1000),
            c->opt.state_dir ? "resume with the same command"
                             : "run it again (with --state DIR, a crawl "
                               "resumes where it stopped)");
}

/*
 * Descriptors each transfer may hold at once, measured (docs/DESIGN.md 5,
 * crawl): its socket, and its WARC spool with --warc, or before it
 * connects its DNS resolver's socket pair (curl's threaded resolver).
 * Idle keep-alive connections are bounded by the fetcher's
 * max_connections, set to the concurrency. Beside the transfers: curl's
 * multi handle (a socket pair, opened with the crawler), with --state
 * SQLite's -wal and -shm (opened at the first write) and the seen-test's
 * snapshot file (written every few seconds), a WARC request record's
 * spool (one at a time, at completion), and a margin.
 */
#define FDS_PER_TRANSFER 2u
#define FDS_RESERVED     4u

/* How many descriptors are open now (/proc/self/fd, less its own); 0
 * when that cannot be read. */
static unsigned fds_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n > 0 ? n - 1 : 0;
}

/*
 * Fit --concurrency in the descriptor limit (RLIMIT_NOFILE). The soft
 * limit is first raised as far as the crawl needs, up to the hard limit
 * (a process may; the soft limit is often 1024 under a hard one of
 * 65536 or more, and curl polls with poll(), not select(), so numbers
 * past 1024 are fine). What still does not fit lowers the concurrency,
 * with a note on stderr: a crawl asking for more transfers than it has
 * descriptors would have them refused (EMFILE) - given back and retried,
 * but slowly. Called once the output files, the state and the WARC are
 * open, before the crawler is created.
 */
static unsigned clamp_concurrency(const struct crawl *c, unsigned want)
{
    struct rlimit lim;
    unsigned open_now = fds_open();
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
        open_now == 0)
        return want;
    uint64_t reserved = (uint64_t)open_now + FDS_RESERVED +
                        (c->state ? 3u : 0u) + (c->warc ? 1u : 0u);
    uint64_t need = reserved + (uint64_t)want * FDS_PER_TRANSFER;
    rlim_t soft = lim.rlim_cur;
    if ((uint64_t)lim.rlim_cur < need && lim.rlim_max != lim.rlim_cur) {
        struct rlimit raised = lim;
        raised.rlim_cur =
            lim.rlim_max == RLIM_INFINITY || (uint64_t)lim.rlim_max > need
                ? (rlim_t)need
                : lim.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0)
            lim = raised;
    }
    uint64_t room = (uint64_t)lim.rlim_cur > reserved
                        ? (uint64_t)lim.rlim_cur - reserved
                        : 0;
    uint64_t fit = room / FDS_PER_TRANSFER;
    if (fit >= want)
        return want;
    unsigned n = fit > 0 ? (unsigned)fit : 1u;
    char raised[64] = "";
    if (lim.rlim_cur != soft)
        snprintf(raised, sizeof(raised), ", raised from %llu to the hard one",
                 (unsigned long long)soft);
    fprintf(stderr,
            "crawl: note: --concurrency %u lowered to %u: the descriptor "
            "limit (ulimit -n) is %llu%s, %u are open, and each transfer "
            "takes up to %u%s\n",
            want, n, (unsigned long long)lim.rlim_cur, raised, open_now,
            FDS_PER_TRANSFER,
            fit > 0 ? "" : " (too few even for one: it may stop, exit 1)");
    return n;
}

/* An ISO 8601 UTC time of the wall clock, now: 2026-01-02T03:04:05Z. */
static void utc_now(char when[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/*
 * The --stats-json document, into f (a file, or memory: open_memstream).
 * now is now_ms(); outcome and exit_status are the crawl's at its end
 * (main()), or "running" and -1 while it runs: then "exit_status" is
 * null (a crawl in progress has none yet). "updated_at" is the wall
 * clock when it was written.
 */
/* --stats-json's "near_duplicates" (DESIGN 11.4): this run's
 * near-duplicate pages, the hosts they are on, the largest clusters, and
 * the hosts with the most with their largest clusters. */
static void clusters_json(const struct clusters *t,
                          const struct clusters *by_host, FILE *f)
{
    uint64_t pages = 0;
    for (size_t i = 0; i < t->cap; i++)
        pages += t->slot[i].url ? t->slot[i].copies : 0;
    struct clusters hosts = {0};
    clusters_hosts(by_host, &hosts);
    fprintf(f,
            "\"near_duplicates\": {\"pages\": %llu, \"hosts\": %zu, "
            "\"largest\": [",
            (unsigned long long)pages, hosts.used);
    const struct cluster *top[NEAR_TOP_CLUSTERS];
    size_t n = clusters_top(t, NULL, 0, top, NEAR_TOP_CLUSTERS);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", {\"url\": " : "{\"url\": ", f);
        json_string(f, top[i]->url, strlen(top[i]->url));
        fprintf(f, ", \"copies\": %llu}", (unsigned long long)top[i]->copies);
    }
    fputs("], \"by_host\": [", f);
    const struct cluster *h[NEAR_TOP_HOSTS];
    size_t nh = clusters_top(&hosts, NULL, 0, h, NEAR_TOP_HOSTS);
    for (size_t i = 0; i < nh; i++) {
        size_t plen = strlen(h[i]->url);
        fputs(i ? ", {\"host\": " : "{\"host\": ", f);
        json_string(f, h[i]->url, plen);
        fprintf(f, ", \"pages\": %llu, \"clusters\": [",
                (unsigned long long)h[i]->copies);
        char *prefix = malloc(plen + 2);
        size_t nc = 0;
        const struct cluster *c[NEAR_HOST_CLUSTERS];
        if (prefix) {
            memcpy(prefix, h[i]->url, plen);
            memcpy(prefix + plen, " ", 2);
            nc = clusters_top(by_host, prefix, plen + 1, c, NEAR_HOST_CLUSTERS);
            free(prefix);
        }
        for (size_t j = 0; j < nc; j++) {
            fputs(j ? ", {\"url\": " : "{\"url\": ", f);
            json_string(f, c[j]->url + plen + 1, strlen(c[j]->url) - plen - 1);
            fprintf(f, ", \"copies\": %llu}", (unsigned long long)c[j]->copies);
        }
        fputs("]}", f);
    }
    fputs("]}, ", f);
    clusters_free(&hosts);
}

static void write_stats_json(struct crawl *c, FILE *f, uint64_t now,
                             const char *outcome, int exit_status)
{
    struct bc_frontier_stats s;
    bc_frontier_stats(c->frontier, now, &s);
    struct bc_crawler_stats k;
    bc_crawler_stats(c->crawler, &k);
    const struct bc_seen_stats *v = &s.seen;
    char when[32], status[16] = "null";
    utc_now(when);
    if (exit_status >= 0)
        snprintf(status, sizeof(status), "%d", exit_status);
    fprintf(f,
            "{\"outcome\": \"%s\", \"exit_status\": %s, "
            "\"updated_at\": \"%s\", \"elapsed_ms\": %llu, "
            "\"pages\": %llu, \"bytes\": %llu, ",
            outcome, status, when, (unsigned long long)(now - c->start_ms),
            (unsigned long long)k.pages, (unsigned long long)k.bytes);
    if (c->state) {
        struct bc_crawl_state_info si;
        bc_crawl_state_info(c->state, &si);
        fprintf(f, "\"runs\": %llu, \"refetched_after_restart\": %llu, ",
                (unsigned long long)si.runs, (unsigned long long)si.refetched);
    }
    if (c->opt.revisit)
        fprintf(f, "\"revisit\": {\"known\": %llu, \"due\": %llu}, ",
                (unsigned long long)c->revisit_known,
                (unsigned long long)c->revisit_due);
    if (!c->opt.no_near_dedup)
        clusters_json(&c->clusters, &c->near_by_host, f);
    if (c->warc)
        fprintf(f,
                "\"warc\": {\"files\": %llu, \"records\": %llu, "
                "\"bytes\": %llu}, ",
                (unsigned long long)k.warc_files,
                (unsigned long long)k.warc_records,
                (unsigned long long)k.warc_bytes);
    fprintf(f,
            "\"bad_url\": {\"unsupported_scheme\": %llu, \"malformed\": "
            "%llu}, ",
            (unsigned long long)k.bad_scheme,
            (unsigned long long)k.bad_malformed);
    write_sitemaps_json(f, &s, &k);
    struct given_up g = given_up_of(c);
    fprintf(f,
            "\"retried\": %llu, \"transient_given_up\": %llu, "
            "\"given_up\": {\"total\": %llu, \"retries_exhausted\": %llu, "
            "\"host_down\": %llu, \"robots_unreachable\": %llu, "
            "\"sitemaps\": %llu, "
            "\"hosts_down\": %zu, \"hosts_robots_unreachable\": %zu}, "
            "\"hosts_open\": %zu, ",
            (unsigned long long)k.retried,
            (unsigned long long)k.transient_given_up,
            (unsigned long long)g.total, (unsigned long long)g.exhausted,
            (unsigned long long)g.down, (unsigned long long)g.robots,
            (unsigned long long)g.sitemaps, g.hosts_down, g.hosts_robots,
            s.hosts_open);
    fprintf(f,
            "\"seeds\": %llu, \"links\": %llu, \"redirects\": %llu, "
            "\"nofollow_skipped\": %llu, \"dropped\": %llu, "
            "\"merged\": %llu, \"merged_absolute\": %llu, ",
            (unsigned long long)k.seeds, (unsigned long long)k.links,
            (unsigned long long)k.redirects,
            (unsigned long long)k.nofollow_skipped,
            (unsigned long long)k.dropped, (unsigned long long)k.merged,
            (unsigned long long)k.merged_absolute);
    fprintf(f,
            "\"status\": {\"2xx\": %llu, \"3xx\": %llu, \"4xx\": %llu, "
            "\"5xx\": %llu}, \"errors\": {",
            (unsigned long long)k.status_class[2],
            (unsigned long long)k.status_class[3],
            (unsigned long long)k.status_class[4],
            (unsigned long long)k.status_class[5]);
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        fprintf(f, "%s\"%s\": %llu", e ? ", " : "",
                bc_crawler_error_kind_name((enum bc_crawler_error_kind)e),
                (unsigned long long)k.errors[e]);
    /* Local failures: given back, fetched again (never a page's error). */
    const char *lerr = errno_name(k.local_errno);
    fprintf(f, "}, \"local\": {\"failures\": %llu, \"errno\": %s%s%s",
            (unsigned long long)k.local_failures, lerr ? "\"" : "",
            lerr ? lerr : "null", lerr ? "\"" : "");
    fprintf(f, ", \"intake\": %u", k.intake);
    fprintf(f,
            "}, \"frontier\": {\"added\": %llu, \"admitted\": %llu, "
            "\"queued\": %zu, \"hosts\": %zu, \"hosts_given_up\": %zu, "
            "\"retried\": %llu, \"retries_exhausted\": %llu, "
            "\"hosts_open\": %zu, \"hosts_down\": %zu, "
            "\"given_back\": %llu, \"robots_fetches\": %llu, "
            "\"robots_parsed\": %llu, \"robots_unavailable\": %llu, "
            "\"robots_unreachable\": %llu, \"reasons\": {",
            (unsigned long long)s.added, (unsigned long long)s.admitted,
            s.queued, s.hosts, s.hosts_given_up, (unsigned long long)s.retried,
            (unsigned long long)s.retries_exhausted, s.hosts_open, s.hosts_down,
            (unsigned long long)s.given_back,
            (unsigned long long)s.robots_fetches,
            (unsigned long long)s.robots_parsed,
            (unsigned long long)s.robots_unavailable,
            (unsigned long long)s.robots_unreachable);
    for (int r = 0; r < BC_ADMIT_REASON_COUNT; r++)
        fprintf(f, "%s\"%s\": %llu", r ? ", " : "",
                bc_frontier_reason_name((enum bc_frontier_reason)r),
                (unsigned long long)s.reasons[r]);
    fprintf(
        f,
        "}}, \"seen\": {\"tested\": %llu, \"new\": %llu, "
        "\"duplicate\": %llu, \"probably_seen\": %llu, "
        "\"fp_caught\": %llu, \"lru_complete\": %s, ",
        (unsigned long long)v->tested, (unsigned long long)v->verdict_new,
        (unsigned long long)v->duplicate, (unsigned long long)v->probably_seen,
        (unsigned long long)v->fp_caught, v->lru_complete ? "true" : "false");
    fprintf(f,
            "\"lru\": {\"count\": %zu, \"capacity\": %zu, \"hits\": %llu, "
            "\"misses\": %llu, \"evictions\": %llu}, ",
            v->lru.count, v->lru.capacity, (unsigned long long)v->lru.hits,
            (unsigned long long)v->lru.misses,
            (unsigned long long)v->lru.evictions);
    fprintf(f,
            "\"bloom\": {\"layout\": \"%s\", \"m_bits\": %llu, "
            "\"bytes\": %llu, \"k\": %u, \"inserts\": %llu, "
            "\"fill\": %.6f, \"fpr_estimated\": %.6g, "
            "\"fpr_target\": %.6g}}, ",
            v->bloom.layout == BC_BLOOM_CLASSIC ? "classic" : "blocked",
            (unsigned long long)v->bloom.m_bits,
            (unsigned long long)v->bloom.bytes, v->bloom.k,
            (unsigned long long)v->bloom.inserts, v->bloom.fill,
            v->bloom.fpr_estimated, c->opt.fp_rate);
    if (v->kind == BC_SEEN_WINDOW_TIME)
        fprintf(f,
                "\"seen_window\": {\"ms\": %llu, \"generations\": %u, "
                "\"bytes\": %llu, \"k\": %u, \"live_keys\": %llu, "
                "\"capacity\": %llu, \"fpr_predicted\": %.6g, "
                "\"fpr_peak\": %.6g}, \"recrawled\": %llu, ",
                (unsigned long long)v->window.window, v->window.generations,
                (unsigned long long)v->window.bytes, v->window.k,
                (unsigned long long)v->window.live_keys,
                (unsigned long long)v->window.capacity, v->window.fpr_predicted,
                v->window.fpr_peak, (unsigned long long)recrawled(v));
    fprintf(f, "\"skipped_content_type\": %llu, ",
            (unsigned long long)k.skipped_content_type);
    if (c->workers)
        write_workers_json(c, f, &k);
    struct bc_workers_stats w;
    if (c->workers)
        bc_workers_stats(c->workers, &w);
    write_counters_json(f, &s, &k, c->workers ? &w : NULL);
    write_hosts_json(c, f);
    fputs("}\n", f);
}

/* ---- seeds ------------------------------------------------------------- */

/* The most of a refused seed a message shows (a binary "line" can be
 * megabytes): longer ones are cut, with their length said. */
#define SEED_SHOWN_MAX 200u

/* The length of the valid UTF-8 sequence at s (at most len bytes) and its
 * code point in *cp, or 0 when the bytes there are not one (a stray
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut
 * short). */
static size_t utf8_sequence(const unsigned char *s, size_t len, uint32_t *cp)
{
    size_t n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (n == 0 || n > len || s[0] > 0xf4)
        return 0;
    uint32_t c = s[0] & (0x7fu >> n);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = c << 6 | (s[i] & 0x3fu);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < least[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* A seed as given, so that a bad line cannot move the cursor, recolour
 * the terminal or hide in it: control bytes (C0, DEL) and bytes that are
 * not UTF-8 written as \xNN, C1 controls and the invisible or reordering
 * format characters (U+FEFF, a byte order mark; zero-width, line and
 * paragraph separators, bidirectional controls) as \u{XXXX}, a backslash
 * doubled; at most SEED_SHOWN_MAX
 * bytes of it, then "...". Returns true when it was cut. */
static bool print_escaped(FILE *f, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < len && i < SEED_SHOWN_MAX) {
        uint32_t cp;
        size_t n;
        if (u[i] == '\\')
            fputs("\\\\", f), n = 1;
        else if (u[i] < 0x20 || u[i] == 0x7f)
            fprintf(f, "\\x%02x", u[i]), n = 1;
        else if (u[i] < 0x80)
            fputc(u[i], f), n = 1;
        else if ((n = utf8_sequence(u + i, len - i, &cp)) == 0)
            fprintf(f, "\\x%02x", u[i]), n = 1;
        else if (cp < 0xa0 || (cp >= 0x200b && cp <= 0x200f) ||
                 (cp >= 0x2028 && cp <= 0x202e) ||
                 (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff)
            fprintf(f, "\\u{%04x}", (unsigned)cp);
        else
            fwrite(u + i, 1, n, f);
        i += n;
    }
    if (i < len)
        fputs("...", f);
    return i < len;
}

/* How long a worker waits for Redis to take a seed before it gives up. */
#define SEED_REDIS_WAIT_MS 60000u

/* Add one seed; file and line say where it came from (file NULL: the
 * command line). A refused seed is reported and skipped. A worker's seed
 * needs Redis (workers.h): without it for SEED_REDIS_WAIT_MS the seed is
 * not added and c->seed_lost is set. */
static void add_seed(struct crawl *c, const char *file, uint64_t line,
                     const char *url, size_t len)
{
    enum bc_frontier_reason reason = BC_ADMIT_NOMEM;
    enum bc_status ust = BC_OK;
    if (c->workers) { /* in Redis's set of seeds, then routed or admitted */
        enum bc_status st;
        uint64_t since = now_ms();
        while ((st = bc_workers_add_seed(c->workers, url, len, &reason,
                                         &ust)) == BC_ERR_REDIS_LOST ||
               st == BC_ERR_REDIS_REPLY) {
            if (now_ms() - since >= SEED_REDIS_WAIT_MS) {
                fprintf(stderr,
                        "crawl: --redis %s: %s: seeds not added; run the "
                        "same command again\n",
                        c->opt.redis_shown, bc_workers_errmsg(c->workers));
                c->seed_lost = true;
                return;
            }
            struct timespec ts = {0, 100 * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (reason == BC_ADMIT_STORE_ERROR)
            ust = st;
    } else {
        enum bc_status st =
            bc_crawler_add_seed(c->crawler, url, len, &reason, &ust);
        if (reason == BC_ADMIT_STORE_ERROR)
            ust = st; /* the store's status, shown with the state's text */
    }
    if (reason == BC_ADMIT_QUEUED || reason == BC_ADMIT_DUPLICATE ||
        reason == BC_ADMIT_ROUTED)
        return;
    struct bc_crawl_state_info si;
    bc_crawl_state_info(c->state, &si); /* zeros without a state */
    if (si.resumed && reason == BC_ADMIT_PROBABLY_SEEN)
        return; /* a seed of the crawl being resumed */
    if (file)
        fprintf(stderr, "crawl: %s:%llu: seed \"", file,
                (unsigned long long)line);
    else
        fputs("crawl: seed \"", stderr);
    if (print_escaped(stderr, url, len))
        fprintf(stderr, "\" (%zu bytes, cut)", len);
    else
        fputc('"', stderr);
    const char *why_text = "";
    if (reason == BC_ADMIT_BAD_URL)
        why_text = bc_strerror(ust);
    else if (reason == BC_ADMIT_STORE_ERROR)
        why_text = c->state && *bc_crawl_state_errmsg(c->state)
                       ? bc_crawl_state_errmsg(c->state)
                       : bc_strerror(ust);
    fprintf(stderr, " not queued: %s%s%s\n", bc_frontier_reason_name(reason),
            *why_text ? ", " : "", why_text);
}

/* The --seeds file (opened by open_files): one URL per line, blank lines
 * and lines starting with '#' skipped. Returns 0, or -1 on a read error. */
static int read_seeds(struct crawl *c, const char *path)
{
    FILE *f = c->seeds_in;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t line_no = 0;
    while (!c->seed_lost && (n = getline(&line, &cap, f)) > 0) {
        line_no++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
                         line[n - 1] == ' ' || line[n - 1] == '\t'))
            n--;
        size_t start = 0;
        /* A UTF-8 byte order mark (as some editors write it) is not part of
         * the first seed. */
        if (line_no == 1 && n >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
            start = 3;
        start += strspn(line + start, " \t");
        if ((size_t)n > start && line[start] != '#')
            add_seed(c, path, line_no, line + start, (size_t)n - start);
    }
    free(line);
    if (ferror(f)) {
        fprintf(stderr, "crawl: --seeds %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Open --seeds, --out, --log and --stats-json before anything else is
 * done, so a wrong path costs nothing. Returns 0, or -1 after a message. */
static int open_files(struct crawl *c)
{
    const struct options *o = &c->opt;
    struct stat st;
    if (o->seeds_file) {
        c->seeds_in = fopen(o->seeds_file, "r");
        int err = c->seeds_in ? 0 : errno;
        if (c->seeds_in && fstat(fileno(c->seeds_in), &st) == 0 &&
            S_ISDIR(st.st_mode))
            err = EISDIR;
        if (err) {
            fprintf(stderr, "crawl: --seeds %s: %s\n", o->seeds_file,
                    strerror(err));
            return -1;
        }
    }
    /* With --state, --out is cut to its committed length once the state
     * is open (and left alone if it is refused). */
    int trunc = o->state_dir ? 0 : O_TRUNC;
    if (o->out_file &&
        (c->out_fd = open(o->out_file,
                          O_WRONLY | O_CREAT | trunc | O_APPEND | O_CLOEXEC,
                          0644)) < 0) {
        fprintf(stderr, "crawl: --out %s: %s\n", o->out_file, strerror(errno));
        return -1;
    }
    if (o->log_file &&
        (c->log_fd = open(o->log_file,
                          O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) <
            0) {
        fprintf(stderr, "crawl: --log %s: %s\n", o->log_file, strerror(errno));
        return -1;
    }
    /* --stats-json is written to FILE.tmp and renamed over FILE
     * (write_stats_file()): FILE.tmp must be creatable, FILE no
     * directory. FILE itself is left as it is until the crawl starts. */
    if (o->stats_file) {
        size_t n = strlen(o->stats_file) + sizeof(".tmp");
        int fd = -1, err = ENOMEM;
        if ((c->stats_tmp = malloc(n)) != NULL) {
            snprintf(c->stats_tmp, n, "%s.tmp", o->stats_file);
            fd = open(c->stats_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                      0644);
            err = fd < 0 ? errno : 0;
            if (!err && stat(o->stats_file, &st) == 0 && S_ISDIR(st.st_mode))
                err = EISDIR;
        }
        if (fd >= 0)
            unlink(c->stats_tmp);
        c->stats_fd = fd; /* kept: write_stats_file() */
        if (err) {
            fprintf(stderr, "crawl: --stats-json %s: %s\n", o->stats_file,
                    strerror(err));
            return -1;
        }
    }
    return 0;
}

/*
 * Warn once when the Bloom filter holds more URLs than --expect, or its
 * rate estimated from the fill is over twice --fp-rate: new URLs are then
 * lost as PROBABLY_SEEN once the LRU has evicted. The count is O(1); the
 * fill (an O(m) popcount) is read when the count is over and at the end
 * (full).
 */
static void check_saturation(struct crawl *c, bool full)
{
    if (c->saturation_warned)
        return;
    const struct bc_window *w = bc_seen_window(bc_frontier_seen(c->frontier));
    if (w) { /* --recrawl-after: at the end, the window's own verdict */
        struct bc_window_stats ws;
        if (!full)
            return;
        bc_window_stats(w, 0, &ws);
        if (!ws.over_capacity)
            return;
        c->saturation_warned = true;
        fprintf(stderr,
                "%scrawl: warning: the window filter is over capacity: "
                "more than --expect (%llu) URLs were admitted within one "
                "third of --recrawl-after: its false-positive rate is %.3g "
                "against %.3g (--fp-rate); raise --expect\n",
                c->stderr_tty && !c->opt.quiet ? "\r\033[K" : "",
                (unsigned long long)c->opt.expect, ws.fpr_predicted,
                c->opt.fp_rate);
        return;
    }
    const struct bc_bloom *b = bc_seen_bloom(bc_frontier_seen(c->frontier));
    uint64_t inserts = bc_bloom_inserts(b);
    if (!full && inserts <= c->opt.expect)
        return;
    struct bc_bloom_stats s;
    bc_bloom_stats(b, &s);
    if (inserts <= c->opt.expect && !(s.fpr_estimated > 2.0 * c->opt.fp_rate))
        return;
    c->saturation_warned = true;
    fprintf(stderr,
            "%scrawl: warning: the Bloom filter is saturated: %llu URLs in a "
            "filter sized for %llu (--expect), estimated false-positive rate "
            "%.3g against %.3g (--fp-rate); new URLs are lost as probably "
            "seen once the LRU evicts: raise --expect\n",
            c->stderr_tty && !c->opt.quiet ? "\r\033[K" : "",
            (unsigned long long)inserts, (unsigned long long)c->opt.expect,
            s.fpr_estimated, c->opt.fp_rate);
}

/* ---- the crawl state (--state) ---------------------------------------- */

static void state_error(struct crawl *c, enum bc_status st)
{
    const char *msg = bc_crawl_state_errmsg(c->state);
    fprintf(stderr, "crawl: --state %s: %s\n", c->opt.state_dir,
            *msg ? msg : bc_strerror(st));
}

/* A setting that may not change on resume was changed: exit status 2. */
static int state_mismatch(const struct crawl *c,
                          const struct bc_crawl_state_error *err)
{
    const char *dir = c->opt.state_dir;
    fprintf(stderr,
            "crawl: --state %s: %s differs from the crawl in %s (was %s, "
            "now %s)\n",
            dir, err->option, dir, *err->was ? err->was : "none",
            *err->now ? err->now : "none");
    return 2;
}

/*
 * Open --state DIR with crawl's own options that may not change on resume
 * (the library pins the crawler configuration's: pin_state()): the WARC
 * file, and a worker's place in its crawl (--redis itself may change).
 * Returns 0, or the exit status after a message: 2 for a changed option,
 * 1 for a DIR that is not a usable state.
 */
static int open_state(struct crawl *c)
{
    const struct options *o = &c->opt;
    char warc_max[32], workers[16], worker[16];
    snprintf(warc_max, sizeof(warc_max), "%llu",
             (unsigned long long)o->warc_max_size);
    snprintf(workers, sizeof(workers), "%u", o->workers);
    snprintf(worker, sizeof(worker), "%u", o->worker);
    struct bc_crawl_state_option fixed[] = {
        {"--warc", o->warc_file ? o->warc_file : ""},
        {"--warc-max-size", warc_max},
        {"--workers", workers},
        {"--worker", worker},
        {"--crawl-id", o->crawl_id ? o->crawl_id : ""},
    };
    size_t count = o->redis ? 5 : 2;
    struct bc_crawl_state_error err;
    enum bc_status st =
        bc_crawl_state_open(o->state_dir, fixed, count, &c->state, &err);
    if (st == BC_ERR_MISMATCH)
        return state_mismatch(c, &err);
    if (st != BC_OK) {
        fprintf(stderr, "crawl: --state %s: %s\n", o->state_dir,
                *err.text ? err.text : bc_strerror(st));
        return 1;
    }
    return 0;
}

/* Refuse a resume that changes a setting the library pins (crawler.h,
 * bc_crawler_pin()), before --out or the WARC is touched. Returns 0, 2
 * after the message of a changed setting, 1 after another failure. */
static int pin_state(struct crawl *c, const struct bc_crawler_config *cc)
{
    struct bc_crawl_state_error err;
    enum bc_status st = bc_crawler_pin(cc, &err);
    if (st == BC_ERR_MISMATCH)
        return state_mismatch(c, &err);
    if (st != BC_OK) {
        state_error(c, st);
        return 1;
    }
    return 0;
}

/* The state is open and its frontier rebuilt: cut --out back to what the
 * last commit recorded (a record written after it belongs to a page that
 * will be fetched again). Returns 0, or 1 after a message. */
static int resume_out(struct crawl *c)
{
    struct bc_crawl_state_info si;
    bc_crawl_state_info(c->state, &si);
    if (c->out_fd < 0)
        return 0;
    struct stat sb;
    if (fstat(c->out_fd, &sb) != 0) {
        fprintf(stderr, "crawl: --out %s: %s\n", c->opt.out_file,
                strerror(errno));
        return 1;
    }
    uint64_t keep = si.resumed ? si.out_offset : 0;
    if ((uint64_t)sb.st_size > keep && ftruncate(c->out_fd, (off_t)keep) != 0) {
        fprintf(stderr, "crawl: --out %s: %s\n", c->opt.out_file,
                strerror(errno));
        return 1;
    }
    c->out_offset = (uint64_t)sb.st_size < keep ? (uint64_t)sb.st_size : keep;
    bc_crawl_state_set_out_offset(c->state, c->out_offset);
    return 0;
}

/* ---- the WARC (--warc) -------------------------------------------------- */

/* Append "name: value\r\n" to a warcinfo block, CR and LF in the value
 * made spaces (a field is one line). */
static void warc_field(FILE *f, const char *name, const char *value)
{
    fprintf(f, "%s: ", name);
    for (const char *p = value; *p; p++)
        fputc(*p == '\r' || *p == '\n' ? ' ' : *p, f);
    fputs("\r\n", f);
}

/* The secret in a command-line argument (prev: the option before it), as
 * arg[*keep, *resume), or *keep = strlen(arg) when none: the password of
 * a --proxy or --redis URL (scheme://user:PASSWORD@host, the last '@'
 * before the path) and the value of a --header Authorization,
 * Proxy-Authorization or Cookie. */
static void secret_span(const char *prev, const char *arg, size_t *keep,
                        size_t *resume)
{
    *keep = *resume = strlen(arg);
    if (prev && (!strcmp(prev, "--proxy") || !strcmp(prev, "--redis"))) {
        const char *s = strstr(arg, "://");
        const char *host = s ? s + 3 : arg;
        size_t authority = strcspn(host, "/");
        const char *at = NULL;
        for (size_t i = 0; i < authority; i++)
            if (host[i] == '@')
                at = host + i;
        const char *colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
        if (colon)
            *keep = (size_t)(colon + 1 - arg), *resume = (size_t)(at - arg);
    } else if (prev && !strcmp(prev, "--header")) {
        size_t name = strcspn(arg, ":");
        static const char *const secret[] = {"authorization",
                                             "proxy-authorization", "cookie"};
        for (size_t i = 0; i < sizeof(secret) / sizeof(*secret); i++)
            if (name == strlen(secret[i]) &&
                !strncasecmp(arg, secret[i], name) && arg[name] == ':')
                *keep = name + 1 + strspn(arg + name + 1, " \t");
    }
}

/* Write one command-line argument as it may be shown (in the warcinfo's
 * options, in a message): CR and LF made spaces, its secret (secret_span)
 * "***". The WARC is kept and shared; what the site was sent is in the
 * request records. */
static void shown_arg(FILE *f, const char *prev, const char *arg)
{
    size_t keep, resume;
    secret_span(prev, arg, &keep, &resume);
    for (size_t i = 0; arg[i]; i++) {
        if (i == keep) {
            fputs("***", f);
            i = resume;
            if (!arg[i])
                break;
        }
        fputc(arg[i] == '\r' || arg[i] == '\n' ? ' ' : arg[i], f);
    }
}

/*
 * Open --warc: afresh, or with --state on resume at the position the last
 * commit recorded (cut back to it, appended to). Its warcinfo block names
 * the software, the format, the command line (its secrets hidden:
 * shown_arg()), the robots policy and the user agent. Returns 0, or the exit status after a message: 2 for a file
 * that cannot be created, 1 for one that cannot be resumed.
 */
static int open_warc(struct crawl *c)
{
    const struct options *o = &c->opt;
    if (!o->warc_file)
        return 0;
    char *info = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&info, &len);
    if (!f) {
        fprintf(stderr, "crawl: --warc %s: %s\n", o->warc_file,
                strerror(errno));
        return 1;
    }
    warc_field(f, "software", "bloomcrawl/" BC_VERSION_STRING);
    warc_field(f, "format", "WARC File Format 1.1");
    warc_field(f, "conformsTo",
               "http://iipc.github.io/warc-specifications/specifications/"
               "warc-format/warc-1.1/");
    fputs("options: crawl", f);
    for (int i = 1; i < c->argc; i++) {
        fputc(' ', f);
        shown_arg(f, i > 1 ? c->argv[i - 1] : NULL, c->argv[i]);
    }
    fputs("\r\n", f);
    warc_field(f, "robots", o->no_robots ? "ignore" : "obey");
    warc_field(f, "http-header-user-agent", o->user_agent);
    if (fclose(f) != 0) {
        free(info);
        fprintf(stderr, "crawl: --warc %s: out of memory\n", o->warc_file);
        return 1;
    }
    struct bc_crawl_state_info si;
    bc_crawl_state_info(c->state, &si);
    enum bc_status st =
        si.resumed
            ? bc_warc_open_at(o->warc_file, o->warc_max_size, info, &si.warc,
                              &c->warc)
            : bc_warc_create(o->warc_file, o->warc_max_size, info, &c->warc);
    int err = errno;
    free(info);
    if (st == BC_OK)
        return 0;
    if (st == BC_ERR_TRUNCATED)
        fprintf(stderr,
                "crawl: --warc %s: shorter than the crawl in %s recorded "
                "(file %u, %llu bytes): not this crawl's WARC\n",
                o->warc_file, o->state_dir, si.warc.seq,
                (unsigned long long)si.warc.offset);
    else
        fprintf(stderr, "crawl: --warc %s: %s\n", o->warc_file,
                st == BC_ERR_IO ? strerror(err) : bc_strerror(st));
    /* This machine's resources (descriptors, memory) are no usage error:
     * the same command works once they are there. */
    bool local = st == BC_ERR_NOMEM ||
                 (st == BC_ERR_IO && (err == EMFILE || err == ENFILE ||
                                      err == ENOMEM || err == ENOSPC));
    return si.resumed || local ? 1 : 2;
}

/* ---- crawl workers: Redis (--redis) ------------------------------------ */

/* A Redis error of --redis: "cannot connect: WHY" when it could not be
 * reached (WHY the library's text without its "cannot connect to Redis at
 * ADDRESS: "), else the library's text. */
static void redis_error(const char *where, enum bc_status st, const char *why)
{
    static const char lead[] = "cannot connect to Redis at ";
    const char *rest;
    if (!why || !*why)
        why = bc_strerror(st);
    else if (!strncmp(why, lead, sizeof(lead) - 1) &&
             (rest = strstr(why + sizeof(lead) - 1, ": ")) != NULL)
        why = rest + 2;
    else if (!strncmp(why, "cannot connect", 14))
        st = BC_OK; /* the text says it already */
    fprintf(stderr, "crawl: --redis %s: %s%s\n", where,
            st == BC_ERR_REDIS_CONNECT ? "cannot connect: " : "", why);
}

/*
 * Join the crawl in Redis as worker --worker of --workers (connect, check
 * or create the crawl's settings, register), before anything is written:
 * Redis unreachable costs nothing. Returns 0, or the exit status after a
 * message: 2 when the crawl in Redis has other settings (--workers,
 * --max-pages), 1 otherwise.
 */
static int open_workers(struct crawl *c)
{
    const struct options *o = &c->opt;
    struct bc_workers_config wc;
    bc_workers_config_init(&wc);
    wc.where = o->redis;
    wc.crawl_id = o->crawl_id;
    wc.workers = o->workers;
    wc.index = o->worker;
    wc.max_pages = o->max_pages;
    enum bc_status st = bc_workers_create(&wc, &c->workers);
    if (st == BC_OK)
        return 0;
    redis_error(o->redis_shown, st,
                c->workers ? bc_workers_errmsg(c->workers) : "");
    bc_workers_free(c->workers);
    c->workers = NULL;
    return st == BC_ERR_MISMATCH ? 2 : 1;
}

/* The most workers --status shows (--workers is at most 1024). */
#define STATUS_MAX_ROWS 1024

static uint64_t wall_ms(void)
{
    return bc_wall_ms();
}

/* A worker whose heartbeat (every second) is older than this is shown
 * "silent": killed, hung, or cut off from Redis. */
#define STATUS_SILENT_MS 5000u

/* The workers' table of crawl --status: one row per worker, a total, and
 * "crawl: over" once it is. */
static void print_status(FILE *f, const struct options *o, unsigned workers,
                         bool done, const struct bc_workers_row *rows,
                         size_t count)
{
    uint64_t now = wall_ms();
    uint64_t pages = 0, queued = 0, in_flight = 0, sent = 0, acked = 0,
             outbox = 0;
    fprintf(f, "crawl %s at %s: %u workers\n", o->crawl_id, o->redis_shown,
            workers);
    fprintf(f, "%6s %8s %-20s %9s %8s %9s %8s %8s %7s %10s  %s\n", "worker",
            "pid", "host", "pages", "queue", "in flight", "sent", "acked",
            "outbox", "heartbeat", "state");
    for (size_t i = 0; i < count; i++) {
        const struct bc_workers_row *r = &rows[i];
        if (!r->registered) {
            fprintf(f, "%6u %8s %-20s %9s %8s %9s %8s %8s %7s %10s  %s\n",
                    r->index, "-", "-", "-", "-", "-", "-", "-", "-", "-",
                    "not started");
            continue;
        }
        double age = now > r->heartbeat_ms && r->heartbeat_ms
                         ? (double)(now - r->heartbeat_ms) / 1000.0
                         : 0.0;
        bool working =
            !strcmp(r->state, "crawling") || !strcmp(r->state, "idle");
        bool silent = working && age * 1000.0 > STATUS_SILENT_MS;
        fprintf(f,
                "%6u %8ld %-20.20s %9llu %8llu %9llu %8llu %8llu %7llu "
                "%8.1f s  %s%s\n",
                r->index, r->pid, r->host, (unsigned long long)r->pages,
                (unsigned long long)r->queued, (unsigned long long)r->in_flight,
                (unsigned long long)r->sent, (unsigned long long)r->acked,
                (unsigned long long)r->outbox, age,
                r->idle && !strcmp(r->state, "crawling") ? "idle" : r->state,
                silent ? ", silent" : "");
        pages += r->pages;
        queued += r->queued;
        in_flight += r->in_flight;
        sent += r->sent;
        acked += r->acked;
        outbox += r->outbox;
    }
    fprintf(f, "%-36s %9llu %8llu %9llu %8llu %8llu %7llu\n", "total",
            (unsigned long long)pages, (unsigned long long)queued,
            (unsigned long long)in_flight, (unsigned long long)sent,
            (unsigned long long)acked, (unsigned long long)outbox);
    if (done)
        fputs("crawl: over\n", f);
}

/*
 * crawl --redis URL [--crawl-id NAME] --status: the table once, or on a
 * terminal redrawn every second until the crawl is over or a signal ends
 * it. Returns the exit status: 0, or 1 after a message (Redis
 * unreachable, no such crawl).
 */
static int show_status(const struct options *o)
{
    struct bc_workers_row *rows = calloc(STATUS_MAX_ROWS, sizeof(*rows));
    if (!rows) {
        fprintf(stderr, "crawl: --status: out of memory\n");
        return 1;
    }
    bool tty = isatty(STDOUT_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = 0;
    for (;;) {
        unsigned workers = 0;
        bool done = false;
        char err[256] = "";
        enum bc_status st =
            bc_workers_status(o->redis, o->crawl_id, &workers, &done, rows,
                              STATUS_MAX_ROWS, err, sizeof(err));
        if (st == BC_ERR_NOT_FOUND || (st == BC_OK && workers == 0)) {
            fprintf(stderr, "crawl: --redis %s: no crawl \"%s\" there\n",
                    o->redis_shown, o->crawl_id);
            rc = 1;
            break;
        }
        if (st != BC_OK) {
            redis_error(o->redis_shown, st, err);
            rc = 1;
            break;
        }
        if (tty)
            fputs("\033[H\033[2J", stdout); /* home, clear the screen */
        print_status(stdout, o, workers, done, rows,
                     workers < STATUS_MAX_ROWS ? workers : STATUS_MAX_ROWS);
        fflush(stdout);
        if (!tty || done || interrupted)
            break;
        struct timespec second = {1, 0};
        nanosleep(&second, NULL);
        if (interrupted)
            break;
    }
    free(rows);
    return rc;
}

/* The --stats-json document in memory (malloc'd, *len bytes), as the
 * file (write_stats()) and crawl --listen's GET /status give it; NULL
 * when out of memory. */
static char *stats_json_text(struct crawl *c, uint64_t now, const char *outcome,
                             int rc, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    if (!m)
        return NULL;
    write_stats_json(c, m, now, outcome, rc);
    bool ok = !ferror(m);
    if (fclose(m) != 0 || !ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* A wall-clock time in ms as ISO 8601 UTC, or "-" for 0 (unknown). */
static const char *utc_of_ms(char when[32], uint64_t ms)
{
    if (!ms)
        return "-";
    time_t t = (time_t)(ms / 1000u);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return when;
}

/* The table of crawl --status --state DIR (bc_crawl_state_peek()). */
static void print_state_status(FILE *f, const char *dir,
                               const struct bc_crawl_state_summary *m)
{
    char created[32], committed[32], ago[48] = "";
    uint64_t now = wall_ms();
    if (m->committed_ms && now >= m->committed_ms)
        snprintf(ago, sizeof(ago), " (%.1f s ago)",
                 (double)(now - m->committed_ms) / 1000.0);
    fprintf(f, "crawl state %s: ", dir);
    if (m->running)
        fprintf(f, "running (pid %ld)\n", m->pid);
    else
        fputs("stopped\n", f);
    fprintf(f,
            "  pages        %llu\n"
            "  queued       %llu\n"
            "  in flight    %llu\n"
            "  errors       %llu\n"
            "  given up     %llu\n"
            "  admitted     %llu\n"
            "  hosts        %llu\n"
            "  runs         %llu\n"
            "  elapsed      %.1f s\n"
            "  created      %s\n"
            "  last commit  %s%s\n",
            (unsigned long long)m->pages, (unsigned long long)m->queued,
            (unsigned long long)m->in_flight, (unsigned long long)m->errors,
            (unsigned long long)m->given_up, (unsigned long long)m->admitted,
            (unsigned long long)m->hosts, (unsigned long long)m->runs,
            (double)m->elapsed_ms / 1000.0, utc_of_ms(created, m->created_ms),
            utc_of_ms(committed, m->committed_ms), ago);
}

/*
 * crawl --status --state DIR: a single-process crawl's state, read-only
 * and without its lock (bc_crawl_state_peek()), so the crawl may be
 * running: printed once, or on a terminal redrawn every second until the
 * crawl stops or a signal ends it, as --status of --redis workers.
 * Returns the exit status: 0, or 1 after a message (no crawl state).
 */
static int show_state_status(const struct options *o)
{
    bool tty = isatty(STDOUT_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    for (;;) {
        struct bc_crawl_state_summary m;
        struct bc_crawl_state_error err;
        enum bc_status st = bc_crawl_state_peek(o->state_dir, &m, &err);
        if (st != BC_OK) {
            fprintf(stderr, "crawl: --state %s: %s\n", o->state_dir,
                    *err.text ? err.text : bc_strerror(st));
            return 1;
        }
        if (tty)
            fputs("\033[H\033[2J", stdout); /* home, clear the screen */
        print_state_status(stdout, o->state_dir, &m);
        fflush(stdout);
        if (!tty || !m.running || interrupted)
            return 0;
        struct timespec second = {1, 0};
        nanosleep(&second, NULL);
        if (interrupted)
            return 0;
    }
}

/*
 * --stats-json FILE: the document formatted in memory (write_stats_json()),
 * written whole to FILE.tmp in one write(2) (a full disk or a file-size
 * limit is seen with its errno, which stdio's buffer would lose), fsync'ed,
 * then renamed over FILE. rename(2) replaces FILE atomically: a reader
 * opens the old document or the new one, never a part of one, and a kill
 * at any moment (even -9) leaves the last complete one (and perhaps a
 * FILE.tmp, which the next write truncates). Returns 0 or errno; FILE is
 * then as it was.
 *
 * A descriptor is kept for it from the start (c->stats_fd: the one of
 * open_files()' check, then the last FILE.tmp's, FILE once renamed; never
 * written through again) and closed just before FILE.tmp is opened,
 * which takes its slot: a crawl that has used every other descriptor
 * (EMFILE: tests/e2e_fds.py) still writes its statistics, as it did when
 * FILE was held open from the start.
 */
static int write_stats_file(struct crawl *c, uint64_t now, const char *outcome,
                            int exit_status)
{
    size_t len;
    int err = 0;
    char *buf = stats_json_text(c, now, outcome, exit_status, &len);
    if (!buf)
        return ENOMEM;
    if (c->stats_fd >= 0)
        close(c->stats_fd);
    int fd = c->stats_fd =
        open(c->stats_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        err = errno;
        goto out_free;
    }
    err = write_fully(fd, buf, len, NULL);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (!err && rename(c->stats_tmp, c->opt.stats_file) != 0)
        err = errno;
    if (err)
        (void)unlink(c->stats_tmp); /* a part of a document: never read */
out_free:
    free(buf);
    return err;
}

/* ---- crawl --listen: the HTTP server's side in the loop ------------------
 *
 * The server (listen.c) runs on threads of its own and never reads the
 * crawl: the loop formats a snapshot when a reader asked for one
 * (listen_wanted()) and carries out the commands it queued, between two
 * steps (listen_turn()). */

/* A Prometheus sample value: integers as such, doubles with every digit,
 * NaN and infinities as the exposition formats spell them. */
static void metric_value(FILE *f, const struct bc_counter *c, const void *stats,
                         size_t i)
{
    double d = bc_counter_value(c, stats, i);
    if (c->type != BC_COUNTER_DOUBLE)
        fprintf(f, "%llu", (unsigned long long)bc_counter_u64(c, stats, i));
    else if (isnan(d))
        fputs("NaN", f);
    else if (isinf(d))
        fputs(d > 0 ? "+Inf" : "-Inf", f);
    else
        fprintf(f, "%.17g", d);
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/*
 * The Prometheus name of counter c of group g, as
 * https://prometheus.io/docs/practices/naming/ and promtool's linter ask:
 * bloomcrawl_GROUP_NAME, where NAME's words that the linter reads as a
 * unit or a summary's suffix are spelled out ("m", the size of a filter,
 * becomes "size"; "bits" "bit_slots"; a last "count" "entries"), then the
 * unit when it is a base unit (bytes, seconds, ratio) that NAME does not
 * end with, then _total for a counter (a TOTAL or RUN_TOTAL row):
 * "seen.bloom_fill" (ratio) is bloomcrawl_seen_bloom_fill_ratio,
 * "crawler.bytes" bloomcrawl_crawler_bytes_total, "seen.bloom_m_bits"
 * bloomcrawl_seen_bloom_size_bit_slots. Each family's HELP ends with the
 * counter's name as crawl --counters spells it ("[seen.bloom_m_bits]"),
 * for a reader (and tests/e2e_listen.py) to find it. family: the name
 * without _total (OpenMetrics' TYPE line).
 */
static void metric_name(char name[128], char family[128], const char *group,
                        const struct bc_counter *c)
{
    static const char *const base_units[] = {"bytes", "seconds", "ratio"};
    int n = snprintf(family, 128, "bloomcrawl_%s", group);
    const char *w = c->name;
    while (*w && n < 128) {
        size_t len = strcspn(w, "_");
        const char *word = w;
        int wl = (int)len;
        if (len == 1 && *w == 'm')
            word = "size", wl = 4;
        else if (len == 4 && memcmp(w, "bits", 4) == 0)
            word = "bit_slots", wl = 9;
        else if (len == 5 && memcmp(w, "count", 5) == 0 && !w[5])
            word = "entries", wl = 7;
        n += snprintf(family + n, 128 - (size_t)n, "_%.*s", wl, word);
        w += len + (w[len] == '_');
    }
    for (size_t u = 0; u < 3 && n < 128; u++) {
        char tail[16];
        snprintf(tail, sizeof(tail), "_%s", base_units[u]);
        if (strcmp(c->unit, base_units[u]) == 0 && !ends_with(family, tail))
            n += snprintf(family + n, 128 - (size_t)n, "%s", tail);
    }
    snprintf(name, 128, "%s%s", family,
             c->kind == BC_COUNTER_GAUGE ? "" : "_total");
}

/* A label value, escaped as both formats ask (\\, \" and \n). */
static void label_value(FILE *f, const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (v[i] == '\\' || v[i] == '"')
            fputc('\\', f);
        if (v[i] == '\n')
            fputs("\\n", f);
        else
            fputc(v[i], f);
    }
}

/* One family's HELP and TYPE lines (OpenMetrics: family without _total). */
static void metric_head(FILE *f, bool om, const char *name, const char *family,
                        bool counter, const char *help)
{
    const char *n = om ? family : name;
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", n, help, n,
            counter ? "counter" : "gauge");
}

/* A named metric of one sample (no label). */
static void metric_one(FILE *f, bool om, const char *family, bool counter,
                       const char *help, double v)
{
    char name[128];
    snprintf(name, sizeof(name), "%s%s", family, counter ? "_total" : "");
    metric_head(f, om, name, family, counter, help);
    if (isnan(v))
        fprintf(f, "%s NaN\n", name);
    else
        fprintf(f, "%s %.17g\n", name, v);
}

/* The per-host series of the top hosts (by pages), at most
 * --metrics-hosts of them: label cardinality stays bounded however many
 * hosts the crawl meets. */
static void write_host_metrics(struct crawl *c, FILE *f, bool om,
                               const struct host_table *t)
{
    static const struct {
        const char *family, *help;
        bool counter;
    } m[] = {
        {"bloomcrawl_host_pages", "Pages fetched from the host", true},
        {"bloomcrawl_host_bytes", "Body bytes fetched from the host", true},
        {"bloomcrawl_host_errors", "Failed pages of the host", true},
        {"bloomcrawl_host_queued_urls", "URLs of the host still queued", false},
        {"bloomcrawl_host_delay_seconds",
         "Delay between two requests to the host", false},
        {"bloomcrawl_host_response_mean_seconds",
         "Mean response time of the host's pages", false},
    };
    size_t n = t->count < c->opt.metrics_hosts ? t->count
                                               : (size_t)c->opt.metrics_hosts;
    for (size_t k = 0; k < sizeof(m) / sizeof(m[0]) && n > 0; k++) {
        char name[128];
        snprintf(name, sizeof(name), "%s%s", m[k].family,
                 m[k].counter ? "_total" : "");
        metric_head(f, om, name, m[k].family, m[k].counter, m[k].help);
        for (size_t i = 0; i < n; i++) {
            const struct bc_crawler_host *h = &t->row[i];
            double v = k == 0   ? (double)h->pages
                       : k == 1 ? (double)h->bytes
                       : k == 2 ? (double)host_errors(h)
                       : k == 3 ? (double)h->queued
                       : k == 4 ? (double)h->delay_ms / 1000.0
                                : h->ms_mean / 1000.0;
            fprintf(f, "%s{host=\"", name);
            label_value(f, h->origin, h->origin_len);
            fprintf(f, "\"} %.17g\n", v);
        }
    }
}

/* GET /metrics: every counter of the tables (bloomcrawl_GROUP_*), the
 * named ones a dashboard starts from, the top hosts' series; the text
 * format 0.0.4, or OpenMetrics 1.0 (om). */
static void write_metrics(struct crawl *c, FILE *f, bool om, uint64_t now,
                          const struct host_table *t)
{
    struct bc_frontier_stats s;
    bc_frontier_stats(c->frontier, now, &s);
    struct bc_crawler_stats k;
    bc_crawler_stats(c->crawler, &k);
    metric_one(f, om, "bloomcrawl_pages_fetched", true,
               "Pages fetched (a response or an error)", (double)k.pages);
    metric_one(f, om, "bloomcrawl_fetched_bytes", true,
               "Body bytes of the pages fetched", (double)k.bytes);
    metric_one(f, om, "bloomcrawl_elapsed_seconds", false,
               "Time since this run started", (now - c->start_ms) / 1000.0);
    metric_one(f, om, "bloomcrawl_queued_urls", false,
               "URLs queued in the frontier", (double)s.queued);
    metric_one(f, om, "bloomcrawl_in_flight_transfers", false,
               "Transfers in flight", (double)k.in_flight);
    metric_one(f, om, "bloomcrawl_paused", false,
               "1 while paused by POST /pause", c->listen_paused ? 1 : 0);
    metric_one(f, om, "bloomcrawl_bloom_fill_ratio", false,
               "Fraction of the Bloom filter's bits set", s.seen.bloom.fill);
    metric_one(f, om, "bloomcrawl_bloom_fpr_estimated_ratio", false,
               "The Bloom filter's false-positive rate, estimated from its "
               "fill",
               s.seen.bloom.fpr_estimated);
    metric_one(f, om, "bloomcrawl_bloom_fpr_target_ratio", false,
               "The false-positive rate the filter was sized for (--fp-rate)",
               c->opt.fp_rate);
    metric_one(f, om, "bloomcrawl_lru_entries", false,
               "Keys in the seen-test's LRU", (double)s.seen.lru.count);
    uint64_t lookups = s.seen.lru.hits + s.seen.lru.misses;
    metric_one(f, om, "bloomcrawl_lru_hit_ratio", false,
               "LRU hits over LRU lookups (NaN before the first)",
               lookups ? (double)s.seen.lru.hits / (double)lookups : NAN);
    metric_one(f, om, "bloomcrawl_warc_bytes", true, "Bytes written to WARC",
               (double)k.warc_bytes);
    metric_head(f, om, "bloomcrawl_seen_tests_total", "bloomcrawl_seen_tests",
                true, "Seen-tests of URLs by verdict");
    fprintf(f,
            "bloomcrawl_seen_tests_total{verdict=\"new\"} %llu\n"
            "bloomcrawl_seen_tests_total{verdict=\"duplicate\"} %llu\n"
            "bloomcrawl_seen_tests_total{verdict=\"probably_seen\"} %llu\n",
            (unsigned long long)s.seen.verdict_new,
            (unsigned long long)s.seen.duplicate,
            (unsigned long long)s.seen.probably_seen);
    /* Hosts by robots.txt state, a label each. */
    static const char *const robots[] = {
        "parsed", "unavailable", "unreachable", "pending", "none", "disabled"};
    size_t by_robots[6] = {0};
    for (size_t i = 0; i < t->count; i++) {
        const char *w = robots_word(c, &t->row[i]);
        for (size_t r = 0; r < 6; r++)
            if (strcmp(w, robots[r]) == 0)
                by_robots[r]++;
    }
    metric_head(f, om, "bloomcrawl_hosts", "bloomcrawl_hosts", false,
                "Hosts by robots.txt state");
    for (size_t r = 0; r < 6; r++)
        fprintf(f, "bloomcrawl_hosts{robots=\"%s\"} %zu\n", robots[r],
                by_robots[r]);
    /* A crawl worker: which one, as a constant series to join on (several
     * workers' endpoints scraped into one Prometheus tell their series
     * apart by their instance label; this one says which worker an
     * instance is), and its own group of counters below. */
    struct bc_workers_stats ws;
    if (c->workers) {
        bc_workers_stats(c->workers, &ws);
        metric_head(f, om, "bloomcrawl_worker_info", "bloomcrawl_worker_info",
                    false,
                    "This crawl worker (--redis): 1, its labels say "
                    "which");
        fprintf(f,
                "bloomcrawl_worker_info{index=\"%u\",workers=\"%u\","
                "crawl_id=\"",
                ws.index, ws.workers);
        label_value(f, c->opt.crawl_id, strlen(c->opt.crawl_id));
        fputs("\"} 1\n", f);
    }
    /* Every counter of the tables (a worker's own among them). */
    struct counter_group g[4];
    size_t ng = counter_groups(g, &s, &k, c->workers ? &ws : NULL);
    for (size_t a = 0; a < ng; a++)
        for (size_t r = 0; r < g[a].n; r++) {
            const struct bc_counter *ct = &g[a].t[r];
            char name[128], family[128];
            metric_name(name, family, g[a].name, ct);
            char help[512];
            snprintf(help, sizeof(help), "%s [%s.%s]", ct->help, g[a].name,
                     ct->name);
            metric_head(f, om, name, family, ct->kind != BC_COUNTER_GAUGE,
                        help);
            for (size_t i = 0; i < ct->count; i++) {
                fputs(name, f);
                if (ct->label)
                    fprintf(f, "{%s=\"%s\"}", ct->label, ct->label_value(i));
                fputc(' ', f);
                metric_value(f, ct, g[a].stats, i);
                fputc('\n', f);
            }
        }
    write_host_metrics(c, f, om, t);
    if (om)
        fputs("# EOF\n", f);
}

/* The metrics (write_metrics()) into a malloc'd buffer; false when out
 * of memory. */
static bool format_into(char **buf, size_t *len, struct crawl *c, bool om,
                        uint64_t now, const struct host_table *t)
{
    *buf = NULL;
    FILE *m = open_memstream(buf, len);
    if (!m)
        return false;
    write_metrics(c, m, om, now, t);
    bool ok = !ferror(m);
    if (fclose(m) != 0 || !ok) {
        free(*buf);
        *buf = NULL;
        return false;
    }
    return true;
}

/* The table's rows put in order (host_order) as far as its first n:
 * those are the n first of the whole order, sorted; the rest in any
 * order. Quickselect (three-way partitions around the middle row: each
 * keeps the side holding the n-th row) then a sort of the n rows: O(count)
 * comparisons on average plus n log n, where sorting the table is
 * count log count. */
static void host_table_top(struct host_table *t, size_t n)
{
    struct bc_crawler_host *row = t->row;
    size_t lo = 0, hi = t->count;
    if (n > hi)
        n = hi;
    while (n > lo && hi - lo > 1) {
        /* [lo, lt) before the pivot, [lt, gt) equal, [gt, hi) after. */
        struct bc_crawler_host pivot = row[lo + (hi - lo) / 2], tmp;
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            int o = host_order(&row[i], &pivot);
            if (o < 0) {
                tmp = row[lt], row[lt++] = row[i], row[i++] = tmp;
            } else if (o > 0) {
                tmp = row[--gt], row[gt] = row[i], row[i] = tmp;
            } else {
                i++;
            }
        }
        if (n <= lt)
            hi = lt;
        else if (n >= gt)
            lo = gt;
        else
            break; /* the n-th row is among the equal ones */
    }
    if (n > 1)
        qsort(row, n, sizeof(*row), host_order);
}

/* Publish a snapshot of the documents docs (LISTEN_DOC_*: those readers
 * asked for, or all at the end): the metrics in either format, the
 * --stats-json document (its outcome "running" until the end), the
 * hosts' rows. Only what is asked is formatted: /metrics' per-host series
 * take the top --metrics-hosts hosts without sorting all of them. */
static void listen_publish_now(struct crawl *c, uint64_t now,
                               const char *outcome, int rc, unsigned docs)
{
    struct listen_snapshot snap;
    memset(&snap, 0, sizeof(snap));
    snap.docs = docs;
    struct host_table t;
    memset(&t, 0, sizeof(t));
    if (docs & LISTEN_DOC_HOSTS)
        host_table_fill(c, &t);
    else if (docs & (LISTEN_DOC_METRICS | LISTEN_DOC_OPENMETRICS)) {
        bc_crawler_hosts(c->crawler, host_table_add, &t);
        host_table_top(&t, (size_t)c->opt.metrics_hosts);
    }
    bool ok = !t.nomem;
    if (ok && (docs & LISTEN_DOC_METRICS))
        ok = format_into(&snap.metrics, &snap.metrics_len, c, false, now, &t);
    if (ok && (docs & LISTEN_DOC_OPENMETRICS))
        ok = format_into(&snap.openmetrics, &snap.openmetrics_len, c, true, now,
                         &t);
    if (ok && (docs & LISTEN_DOC_STATUS))
        ok = (snap.status =
                  stats_json_text(c, now, outcome, rc, &snap.status_len));
    if (ok && (docs & LISTEN_DOC_HOSTS) && t.count &&
        !(snap.hosts = calloc(t.count, sizeof(*snap.hosts))))
        ok = false;
    for (size_t i = 0; ok && (docs & LISTEN_DOC_HOSTS) && i < t.count; i++) {
        struct listen_host *lh = &snap.hosts[i];
        FILE *m = open_memstream(&lh->json, &lh->json_len);
        if (!m) {
            ok = false;
            break;
        }
        write_host_json(c, m, &t.row[i]);
        ok = !ferror(m) && fclose(m) == 0;
        snap.host_count = i + 1;
        lh->key[LISTEN_SORT_PAGES] = t.row[i].pages;
        lh->key[LISTEN_SORT_BYTES] = t.row[i].bytes;
        lh->key[LISTEN_SORT_ERRORS] = host_errors(&t.row[i]);
        lh->key[LISTEN_SORT_QUEUED] = t.row[i].queued;
    }
    free(t.row);
    if (ok)
        listen_publish(c->listen, &snap);
    else { /* out of memory: the readers keep the last one */
        free(snap.metrics);
        free(snap.openmetrics);
        free(snap.status);
        for (size_t i = 0; i < snap.host_count; i++)
            free(snap.hosts[i].json);
        free(snap.hosts);
    }
}

/* A reply's JSON into a malloc'd buffer, or NULL (the server then answers
 * with an empty body). */
static char *reply_text(size_t *len, const char *fmt, ...)
{
    char *buf = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(buf = malloc((size_t)n + 1)))
        return NULL;
    va_start(ap, fmt);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    va_end(ap);
    *len = (size_t)n;
    return buf;
}

/* POST /seeds: each line admitted as a --seeds line is (bc_crawler_add_seed:
 * durable with --state once the next step commits), answered with its
 * admission reason: {"seeds": [{"url": U, "reason": R[, "detail": D]}],
 * "queued": N}. */
static void listen_seeds(struct crawl *c, struct listen_command *cmd)
{
    char *buf = NULL;
    size_t len = 0, pos = 0, queued = 0, url_len;
    const char *url;
    FILE *m = open_memstream(&buf, &len);
    if (!m) {
        listen_reply(c->listen, cmd, 500, NULL, 0);
        return;
    }
    fputs("{\"seeds\": [", m);
    for (size_t n = 0; listen_seeds_next(cmd->body ? cmd->body : "",
                                         cmd->body_len, &pos, &url, &url_len);
         n++) {
        enum bc_frontier_reason reason = BC_ADMIT_NOMEM;
        enum bc_status ust = BC_OK;
        /* A worker's seed as add_seed() gives it (into Redis's scope,
         * then admitted here or routed to its owner), tried once: Redis
         * away answers store_error with its reason, to be sent again. */
        enum bc_status st =
            c->workers
                ? bc_workers_add_seed(c->workers, url, url_len, &reason, &ust)
                : bc_crawler_add_seed(c->crawler, url, url_len, &reason, &ust);
        if (reason == BC_ADMIT_STORE_ERROR)
            ust = st;
        queued += reason == BC_ADMIT_QUEUED;
        fputs(n ? ", {\"url\": " : "{\"url\": ", m);
        json_string(m, url, url_len);
        fprintf(m, ", \"reason\": \"%s\"", bc_frontier_reason_name(reason));
        if (reason == BC_ADMIT_BAD_URL || reason == BC_ADMIT_STORE_ERROR)
            fprintf(m, ", \"detail\": \"%s\"", bc_strerror(ust));
        fputc('}', m);
    }
    fprintf(m, "], \"queued\": %zu}\n", queued);
    bool ok = !ferror(m);
    if (fclose(m) != 0 || !ok) {
        free(buf);
        listen_reply(c->listen, cmd, 500, NULL, 0);
        return;
    }
    /* Answered once the next step has committed them (with --state). */
    c->listen_buf[c->listen_pending] = buf;
    c->listen_len[c->listen_pending] = len;
    c->listen_cmd[c->listen_pending++] = cmd;
}

/* POST /hosts/HOST/delay: HOST an origin ("http://a.test:8080") or a
 * host[:port], tried as http:// then https://. Answered, as POST /seeds,
 * once the next step has committed it (durable with --state). */
static void listen_delay(struct crawl *c, struct listen_command *cmd)
{
    char origin[LISTEN_HOST_MAX + 16];
    uint64_t eff = 0;
    enum bc_status st = BC_ERR_NOT_FOUND;
    static const char *const schemes[] = {"", "http://", "https://"};
    bool has_scheme = strstr(cmd->host, "://") != NULL;
    for (size_t i = has_scheme ? 0 : 1;
         i < (has_scheme ? 1u : 3u) && st == BC_ERR_NOT_FOUND; i++) {
        snprintf(origin, sizeof(origin), "%s%s", schemes[i], cmd->host);
        st = bc_frontier_set_host_delay(c->frontier, origin, strlen(origin),
                                        cmd->delay_ms, &eff);
    }
    size_t len = 0;
    char *r;
    if (st != BC_OK) {
        r = st == BC_ERR_NOT_FOUND
                ? reply_text(&len,
                             "{\"error\": \"no such host in the crawl\"}\n")
                : reply_text(&len, "{\"error\": \"%s\"}\n", bc_strerror(st));
        listen_reply(c->listen, cmd, st == BC_ERR_NOT_FOUND ? 404 : 500, r,
                     len);
        return;
    }
    r = reply_text(&len,
                   "{\"host\": \"%s\", \"delay_ms\": %llu, "
                   "\"effective_ms\": %llu}\n",
                   origin, (unsigned long long)cmd->delay_ms,
                   (unsigned long long)eff);
    c->listen_buf[c->listen_pending] = r;
    c->listen_len[c->listen_pending] = len;
    c->listen_cmd[c->listen_pending++] = cmd;
}

/* POST /hosts/HOST/delay to a crawl worker: the worker that owns HOST
 * (bc_workers_owner() of its origin, tried as listen_delay() tries it: as
 * given when it names its scheme, else as http:// then https://). This
 * worker's index when it owns one of them: a host another worker owns
 * is never in this worker's frontier, and its delay is set through that
 * worker's --listen. */
static unsigned delay_owner(const struct crawl *c, const char *host)
{
    static const char *const schemes[] = {"", "http://", "https://"};
    bool has_scheme = strstr(host, "://") != NULL;
    unsigned first = c->opt.worker;
    for (size_t i = has_scheme ? 0 : 1; i < (has_scheme ? 1u : 3u); i++) {
        char origin[LISTEN_HOST_MAX + 16];
        int n = snprintf(origin, sizeof(origin), "%s%s", schemes[i], host);
        unsigned w = bc_workers_owner(origin, (size_t)n, c->opt.workers);
        if (w == c->opt.worker)
            return w;
        if (i == (has_scheme ? 0u : 1u))
            first = w;
    }
    return first;
}

/* Carry out the queued commands; over: the crawl is over (they are
 * refused, but /stop, which ends the lingering). Returns true when a
 * /stop came. */
static bool listen_commands(struct crawl *c, bool over)
{
    bool stop = false;
    struct listen_command *cmd;
    while ((cmd = listen_take(c->listen))) {
        size_t len = 0;
        char *r;
        unsigned owner; /* a crawl worker's POST /hosts/HOST/delay */
        if (cmd->kind == LISTEN_CMD_STOP) {
            stop = true;
            r = reply_text(&len, "{\"stopping\": true}\n");
            listen_reply(c->listen, cmd, 200, r, len);
        } else if (over) {
            r = reply_text(&len, "{\"error\": \"the crawl is over\"}\n");
            listen_reply(c->listen, cmd, 409, r, len);
        } else if (cmd->kind == LISTEN_CMD_PAUSE ||
                   cmd->kind == LISTEN_CMD_RESUME) {
            c->listen_paused = cmd->kind == LISTEN_CMD_PAUSE;
            bc_crawler_pause(c->crawler, c->listen_paused);
            r = reply_text(&len, "{\"paused\": %s}\n",
                           c->listen_paused ? "true" : "false");
            listen_reply(c->listen, cmd, 200, r, len);
        } else if (cmd->kind == LISTEN_CMD_DELAY && c->workers &&
                   (owner = delay_owner(c, cmd->host)) != c->opt.worker) {
            r = reply_text(&len,
                           "{\"error\": \"the host is worker %u's, not "
                           "this worker's (%u): ask worker %u's --listen\", "
                           "\"owner\": %u}\n",
                           owner, c->opt.worker, owner, owner);
            listen_reply(c->listen, cmd, 409, r, len);
        } else if (c->listen_pending == LISTEN_PENDING_MAX) {
            r = reply_text(&len, "{\"error\": \"busy: try again\"}\n");
            listen_reply(c->listen, cmd, 503, r, len);
        } else if (cmd->kind == LISTEN_CMD_DELAY)
            listen_delay(c, cmd);
        else
            listen_seeds(c, cmd);
    }
    return stop;
}

/* Answer the POST /seeds and /hosts/HOST/delay that waited for a step's
 * commit. */
static void listen_committed(struct crawl *c)
{
    for (size_t i = 0; i < c->listen_pending; i++)
        listen_reply(c->listen, c->listen_cmd[i], 200, c->listen_buf[i],
                     c->listen_len[i]);
    c->listen_pending = 0;
}

/* One turn of the loop's server work: the commands, then a snapshot when
 * a reader asked (after them: a GET right after a POST sees its effect). */
static void listen_turn(struct crawl *c, uint64_t now)
{
    if (listen_commands(c, false) && !interrupted) {
        interrupted = 1; /* the clean stop of SIGINT */
        stop_signal = SIGINT;
    }
    unsigned docs = listen_wanted(c->listen);
    if (docs) /* "exit_status": null while running, as in the file */
        listen_publish_now(c, now, "running", -1, docs);
}

/* bc_crawler_wakeup() for the server's threads. */
static void listen_wake(void *ctx)
{
    struct crawl *c = ctx;
    (void)bc_crawler_wakeup(c->crawler);
}

/* The control token: --listen-token-file's first line, or 32 random bytes
 * from getrandom(2) in hex, written 0600 to DIR/listen.token with
 * --state, else printed once on stderr. Returns 0 or -1 after a message. */
static int listen_token(struct crawl *c, bool *print)
{
    const struct options *o = &c->opt;
    *print = false;
    if (o->listen_token_file) {
        FILE *f = fopen(o->listen_token_file, "r");
        char *line = NULL;
        size_t cap = 0;
        if (!f || getline(&line, &cap, f) <= 0) {
            fprintf(stderr, "crawl: --listen-token-file %s: %s\n",
                    o->listen_token_file, f ? "empty" : strerror(errno));
            free(line);
            if (f)
                fclose(f);
            return -1;
        }
        fclose(f);
        /* The whole first line: a longer token is refused, not cut. */
        size_t len = strcspn(line, "\r\n");
        if (len >= sizeof(c->listen_token)) {
            fprintf(stderr,
                    "crawl: --listen-token-file %s: the token is %zu "
                    "characters at most (its first line has %zu)\n",
                    o->listen_token_file, sizeof(c->listen_token) - 1, len);
            free(line);
            return -1;
        }
        memcpy(c->listen_token, line, len);
        c->listen_token[len] = '\0';
        free(line);
        if (strlen(c->listen_token) < 16) {
            fprintf(stderr,
                    "crawl: --listen-token-file %s: the token is 16 "
                    "characters at least\n",
                    o->listen_token_file);
            return -1;
        }
        return 0;
    }
    unsigned char r[32];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        fprintf(stderr, "crawl: --listen: getrandom: %s\n", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof(r); i++) {
        c->listen_token[2 * i] = bc_hex_lower[r[i] >> 4];
        c->listen_token[2 * i + 1] = bc_hex_lower[r[i] & 15];
    }
    c->listen_token[2 * sizeof(r)] = '\0';
    if (!o->state_dir) {
        *print = true;
        return 0;
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/listen.token", o->state_dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    size_t n = strlen(c->listen_token);
    c->listen_token[n] = '\n';
    int err = fd < 0 ? errno
              : fchmod(fd, 0600) != 0
                  ? errno
                  : write_fully(fd, c->listen_token, n + 1, NULL);
    c->listen_token[n] = '\0';
    if (fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    if (err) {
        fprintf(stderr, "crawl: --listen: writing %s: %s\n", path,
                strerror(err));
        return -1;
    }
    return 0;
}

/* Whether a numeric address is a loopback one (127.0.0.0/8, ::1). */
static bool loopback_address(const char *a)
{
    return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
}

/* Start the server (--listen). Returns 0 or -1 after a message. */
static int listen_open(struct crawl *c)
{
    const struct options *o = &c->opt;
    bool print;
    if (listen_token(c, &print) != 0)
        return -1;
    struct listen_config lc = {
        .address = o->listen_addr,
        .port = o->listen_port,
        .token = c->listen_token,
        .token_len = strlen(c->listen_token),
        .reads_need_token = !loopback_address(o->listen_addr),
        .wake = listen_wake,
        .wake_ctx = c,
    };
    lc.page = crawl_status_page(&lc.page_len);
    /* A request's whole time: LISTEN_REQUEST_MAX_MS, or (for the tests:
     * tests/e2e_listen.py's trickling clients) BC_LISTEN_REQUEST_MAX_MS. */
    const char *req_max = getenv("BC_LISTEN_REQUEST_MAX_MS");
    if (req_max)
        lc.request_max_ms = strtoull(req_max, NULL, 10);
    char err[256];
    if (!(c->listen = listen_start(&lc, err, sizeof(err)))) {
        fprintf(stderr, "crawl: --listen %s: %s\n", o->listen, err);
        return -1;
    }
    bool v6 = strchr(o->listen_addr, ':') != NULL;
    fprintf(stderr, "crawl: listening on http://%s%s%s:%u/", v6 ? "[" : "",
            o->listen_addr, v6 ? "]" : "", (unsigned)listen_port(c->listen));
    if (print)
        fprintf(stderr, " (control token: %s)\n", c->listen_token);
    else if (o->listen_token_file)
        fprintf(stderr, " (control token from %s)\n", o->listen_token_file);
    else
        fprintf(stderr, " (control token in %s/listen.token)\n", o->state_dir);
    return 0;
}

/* After the crawl: the final snapshot (its outcome and exit status), kept
 * served for --listen-linger or until POST /stop or a signal; then the
 * server stops. */
static void listen_close(struct crawl *c, uint64_t end, const char *outcome,
                         int rc)
{
    if (!c->listen)
        return;
    listen_committed(c);
    listen_publish_now(c, end, outcome, rc, LISTEN_DOC_ALL);
    uint64_t until = now_ms() + c->opt.listen_linger_ms;
    int seen = interrupted;
    while (interrupted == seen && now_ms() < until) {
        if (listen_commands(c, true))
            break;
        unsigned docs = listen_wanted(c->listen);
        if (docs)
            listen_publish_now(c, end, outcome, rc, docs);
        listen_wait(c->listen, 100);
    }
    listen_stop(c->listen);
    c->listen = NULL;
}

/*
 * The --log statistics line, every --stats-interval and at the end (as
 * Heritrix's progress-statistics.log, in the same file as the fetches):
 * TIME "stats" then space-separated key=value pairs, in this order (keys
 * may be added at the end, never renamed):
 *   elapsed_s    seconds since this run started
 *   pages        pages fetched (all runs, with --state)
 *   pages_per_s  pages per second since the previous statistics line
 *                (or the start of the run)
 *   bytes        body bytes fetched
 *   queued       URLs waiting in the frontier
 *   in_flight    transfers under way
 *   hosts        hosts known to the frontier
 *   errors       fetches ended by an error (timeout, connect, ...)
 *   given_up     URLs given up to transient faults
 *   new, duplicate, probably_seen  the seen-test's verdicts
 *   fill         the seen-test's filter's fill, 0..1 (the Bloom filter's
 *                bits set; with --recrawl-after the window's live keys
 *                over its capacity)
 *   fpr          its estimated false-positive rate (the window's
 *                predicted one)
 * A fetch line's second field is a 3-digit status, so "stats" tells the
 * two apart. Written whole in one write(2), like a fetch line.
 */
static void log_stats(struct crawl *c, uint64_t now)
{
    if (c->log_fd < 0 || c->write_failed)
        return;
    struct bc_frontier_stats s;
    bc_frontier_stats(c->frontier, now, &s);
    struct bc_crawler_stats k;
    bc_crawler_stats(c->crawler, &k);
    const struct bc_seen_stats *v = &s.seen;
    uint64_t since = c->last_stats > c->start_ms ? c->last_stats : c->start_ms;
    double secs = (double)(now - since) / 1000.0;
    double rate = secs > 0 && k.pages >= c->last_pages
                      ? (double)(k.pages - c->last_pages) / secs
                      : 0.0;
    uint64_t errors = 0;
    for (int e = 0; e < BC_CRAWLER_ERR_KIND_COUNT; e++)
        errors += k.errors[e];
    bool window = v->kind == BC_SEEN_WINDOW_TIME;
    double fill = !window ? v->bloom.fill
                  : v->window.capacity
                      ? (double)v->window.live_keys / (double)v->window.capacity
                      : 0.0;
    double fpr = window ? v->window.fpr_predicted : v->bloom.fpr_estimated;
    char when[32], line[640];
    utc_now(when);
    int n = snprintf(
        line, sizeof(line),
        "%s stats elapsed_s=%.1f pages=%llu pages_per_s=%.2f bytes=%llu "
        "queued=%zu in_flight=%zu hosts=%zu errors=%llu given_up=%llu "
        "new=%llu duplicate=%llu probably_seen=%llu fill=%.6f fpr=%.3g\n",
        when, (double)(now - c->start_ms) / 1000.0, (unsigned long long)k.pages,
        rate, (unsigned long long)k.bytes, s.queued, k.in_flight, s.hosts,
        (unsigned long long)errors, (unsigned long long)given_up_of(c).total,
        (unsigned long long)v->verdict_new, (unsigned long long)v->duplicate,
        (unsigned long long)v->probably_seen, fill, isfinite(fpr) ? fpr : 0.0);
    c->last_pages = k.pages;
    if (n < 0 || (size_t)n >= sizeof(line))
        return; /* cannot be: the fields are numbers */
    size_t put;
    int err = write_fully(c->log_fd, line, (size_t)n, &put);
    if (err) {
        struct stat sb; /* a line cut short is cut off, as on_fetch() */
        if (put > 0 && fstat(c->log_fd, &sb) == 0 &&
            (uint64_t)sb.st_size >= put)
            (void)!ftruncate(c->log_fd, sb.st_size - (off_t)put);
        write_failed(c, c->opt.log_file, err);
    }
}

/*
 * SIGHUP: open --log again by its name, so that logrotate can rename the
 * file and have the crawl write a new one at the old name (its "create"
 * mode, with "postrotate kill -HUP PID"; "copytruncate" works without a
 * signal too, the file being O_APPEND). The next line goes to the new
 * file; a line is written whole to one file or the other. A file that
 * cannot be opened is said once and the old one kept. --out is not
 * reopened: it is the crawl's output, not a log (with --state its length
 * is part of what a commit records), and the WARC rotates itself
 * (--warc-max-size).
 */
static void reopen_log(struct crawl *c)
{
    if (c->log_fd < 0 || c->write_failed)
        return;
    int fd =
        open(c->opt.log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr,
                "%scrawl: warning: SIGHUP: cannot reopen --log %s (%s): "
                "still writing the file open before\n",
                c->stderr_tty && !c->opt.quiet ? "\r\033[K" : "",
                c->opt.log_file, strerror(errno));
        return;
    }
    close(c->log_fd);
    c->log_fd = fd;
}

/*
 * Between steps: reopen --log after a SIGHUP; every --stats-interval, or
 * at once after a SIGUSR1, rewrite --stats-json ("outcome": "running")
 * and add a --log statistics line. A live --stats-json that cannot be
 * written is said once on stderr and the crawl goes on (the last complete
 * document stays; the one at the end must be written, or exit 1).
 */
static void live_stats(struct crawl *c, uint64_t now)
{
    if (log_reopen) {
        log_reopen = 0;
        reopen_log(c);
    }
    bool due = c->opt.stats_interval_ms &&
               now - c->last_stats >= c->opt.stats_interval_ms;
    if (!due && !stats_asked)
        return;
    stats_asked = 0;
    log_stats(c, now);
    c->last_stats = now;
    int err = c->opt.stats_file ? write_stats_file(c, now, "running", -1) : 0;
    if (err && !c->stats_warned) {
        c->stats_warned = true;
        fprintf(stderr,
                "%scrawl: warning: writing %s: %s (the crawl goes on; "
                "tried again every --stats-interval)\n",
                c->stderr_tty && !c->opt.quiet ? "\r\033[K" : "",
                c->opt.stats_file, strerror(err));
    }
}

/* ---- the loop ----------------------------------------------------------- */

/*
 * Say why a step or the last sync failed, when it was a write: --out or
 * --log (write_failed()), or the WARC, each with its errno's text
 * ("crawl: writing out.jsonl: No space left on device"). Returns true when
 * it said so; false leaves the message to the caller (the state's, the
 * fetcher's).
 */
static bool write_error(const struct crawl *c, enum bc_status st)
{
    int err;
    if (c->write_failed) {
        fprintf(stderr, "crawl: writing %s: %s\n", c->write_failed,
                strerror(c->write_errno));
        return true;
    }
    if (bc_crawler_warc_error(c->crawler, &err) != BC_OK) {
        fprintf(stderr, "crawl: --warc %s: writing failed: %s\n",
                bc_warc_file(c->warc), err ? strerror(err) : bc_strerror(st));
        return true;
    }
    return false;
}

/*
 * Drive the crawler (bloomcrawl/crawler.h) one step at a time, so that a
 * signal is seen between steps: the first SIGINT/SIGTERM stops it cleanly,
 * a second abandons the transfers in flight. Returns 0, or -1 after a
 * message when the fetcher fails.
 */
static int run(struct crawl *c)
{
    bool stopped = false;
    for (;;) {
        if (c->listen)
            listen_turn(c, now_ms());
        if (interrupted && !stopped) {
            if (c->workers)
                bc_workers_stop(c->workers); /* stops its crawler */
            else
                bc_crawler_stop(c->crawler);
            stopped = true;
        }
        if (interrupted > 1)
            return 0;
        bool done;
        /* A worker steps through the module (Redis between the crawler's
         * steps, 100 ms apart at most when idle) until the whole crawl is
         * over, or, stopped, until nothing of its own is in flight (the
         * crawl goes on without it). */
        enum bc_status st =
            c->workers
                ? bc_workers_step(c->workers, 100, &done)
                : bc_crawler_step(c->crawler, c->listen ? 100 : 1000, &done);
        if (c->workers && done && !stopped)
            c->over = true;
        if (st != BC_OK && write_error(c, st))
            return -1;
        int err;
        uint64_t for_ms;
        if (st != BC_OK &&
            bc_crawler_local_error(c->crawler, &err, &for_ms) != BC_OK) {
            local_error(c, err, for_ms);
            return -1;
        }
        if (st != BC_OK && c->state && st != BC_ERR_NOMEM) {
            state_error(c, st);
            return -1;
        }
        if (st != BC_OK) {
            fprintf(stderr, "crawl: fetcher: %s\n", bc_strerror(st));
            return -1;
        }
        if (c->listen) /* POST /seeds' seeds and delays are committed */
            listen_committed(c);
        if (done)
            return 0;
        check_saturation(c, false);
        uint64_t now = now_ms();
        progress(c, now, false);
        live_stats(c, now);
    }
}

int main(int argc, char **argv)
{
    struct crawl c;
    memset(&c, 0, sizeof(c));
    c.out_fd = -1;
    c.argc = argc;
    c.argv = argv;
    c.log_fd = -1;
    c.stats_fd = -1;
    int rc = parse_options(argc, argv, &c.opt);
    if (rc == 1)
        usage(stdout);
    if (rc == 3)
        args_print_version("crawl");
    if (rc == 4)
        print_counter_tables(stdout);
    if (rc)
        return rc > 0 ? 0 : 2;
    const struct options *o = &c.opt;
    if (o->status)
        return o->redis ? show_status(o) : show_state_status(o);
    /* SIGUSR1 and SIGHUP only set flags, acted on once the crawl runs:
     * caught from here on, so that one sent early (a logrotate at the
     * wrong moment) does not kill the crawl, their default action. */
    struct sigaction usr;
    memset(&usr, 0, sizeof(usr));
    usr.sa_handler = on_stats_signal;
    sigaction(SIGUSR1, &usr, NULL);
    sigaction(SIGHUP, &usr, NULL);
    if (o->redis && (rc = open_workers(&c)) != 0)
        goto out_close;
    if (open_files(&c) != 0) {
        rc = 2;
        goto out_close;
    }

    /* A filter that cannot be sized is a bad --expect or --fp-rate. */
    struct bc_bloom_sizing sizing;
    enum bc_status st =
        bc_bloom_size(o->expect, o->fp_rate, o->layout, &sizing);
    if (st != BC_OK) {
        fprintf(stderr,
                "crawl: bad value for --expect or --fp-rate: no Bloom filter "
                "for --expect %s URLs at --fp-rate %s (%s)\n",
                o->expect_text ? o->expect_text : "1000000",
                o->fp_rate_text ? o->fp_rate_text : "0.01", bc_strerror(st));
        rc = 2;
        goto out_close;
    }

    struct bc_crawler_config cc;
    bc_crawler_config_init(&cc);
    struct bc_frontier_config *fc = &cc.frontier;
    fc->user_agent = o->user_agent;
    fc->per_host_concurrency = o->per_host;
    fc->min_delay_ms = o->delay_ms;
    fc->obey_robots = !o->no_robots;
    fc->sitemaps = !o->no_sitemaps;
    fc->robots_retries = (unsigned)o->robots_retries;
    fc->robots_retry_ms = o->robots_retry_ms;
    fc->max_retry_after_ms = o->max_retry_after_ms;
    fc->max_retries = (unsigned)o->max_retries;
    fc->retry_delay_ms = o->retry_delay_ms;
    fc->retry_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    fc->host_failures = (unsigned)o->host_failures;
    fc->host_give_up_ms = o->host_give_up_ms;
    fc->max_redirects = (unsigned)o->max_redirects;
    fc->scope = o->scope;
    fc->max_depth = o->max_depth;
    fc->host_budget = o->host_budget;
    fc->include = o->include;
    fc->include_count = o->include_count;
    fc->exclude = o->exclude;
    fc->exclude_count = o->exclude_count;
    fc->seen.expected = o->expect;
    fc->seen.fp_rate = o->fp_rate;
    fc->seen.kind = o->layout == BC_BLOOM_CLASSIC ? BC_SEEN_BLOOM_CLASSIC
                                                  : BC_SEEN_BLOOM_BLOCKED;
    fc->seen.lru_capacity = (size_t)o->lru;
    cc.recrawl_after_ms = o->recrawl_ms;
    struct bc_fetcher_config *xc = &cc.fetcher;
    xc->user_agent = o->user_agent;
    xc->timeout_ms = o->timeout_ms;
    xc->max_body_bytes = o->max_body;
    xc->max_host_connections = o->per_host;
    xc->resolve = o->resolve;
    xc->resolve_count = o->resolve_count;
    xc->proxy = o->proxy;
    xc->headers = o->header;
    xc->header_count = o->header_count;
    cc.concurrency = o->concurrency;
    cc.local_wait_ms = o->local_wait_ms;
    cc.max_pages = o->redis ? 0 : o->max_pages; /* a worker's is global */
    cc.on_page = on_page;
    cc.on_fetch = on_fetch;
    cc.ctx = &c;
    cc.accept_types = o->accept_type;
    cc.accept_type_count = o->accept_type_count;
    cc.reject_types = o->reject_type;
    cc.reject_type_count = o->reject_type_count;
    st = bc_fetcher_global_init();
    if (st != BC_OK) {
        fprintf(stderr, "crawl: fetcher: %s\n", bc_strerror(st));
        rc = 1;
        goto out_close;
    }
    if (o->state_dir && (rc = open_state(&c)) != 0)
        goto out_free;
    cc.state = c.state;
    if (c.state && (rc = pin_state(&c, &cc)) != 0)
        goto out_free;
    if (o->retry_failed) {
        uint64_t n = 0;
        st = bc_crawl_state_retry_failed(c.state, &n);
        if (st != BC_OK) {
            state_error(&c, st);
            rc = 1;
            goto out_free;
        }
        fprintf(stderr,
                "crawl: --retry-failed: %llu URLs given up to transient "
                "faults queued again\n",
                (unsigned long long)n);
    }
    /* A recrawl run reads the sitemaps again, for the <lastmod>s written
     * since (DESIGN 11.3): a page listed as changed is due at once. */
    if (o->revisit && !o->no_sitemaps) {
        uint64_t n = 0;
        st = bc_crawl_state_sitemaps_again(c.state, &n);
        if (st != BC_OK) {
            state_error(&c, st);
            rc = 1;
            goto out_free;
        }
        c.revisit_sitemaps = n;
    }
    if ((rc = open_warc(&c)) != 0)
        goto out_free;
    cc.warc = c.warc;
    cc.payload_dedup = !o->no_payload_dedup;
    cc.conditional = !o->no_conditional;
    cc.near_dedup = !o->no_near_dedup;
    cc.near_k = o->near_k;
    cc.near_mode = o->near_skip_links ? BC_CRAWLER_NEAR_SKIP_LINKS
                                      : BC_CRAWLER_NEAR_FOLLOW;
    cc.concurrency = clamp_concurrency(&c, cc.concurrency);
    /* Idle keep-alive connections count against the descriptors too: at
     * most one connection per transfer in flight (curl closes the oldest
     * idle one to open another). */
    xc->max_connections = cc.concurrency;
    if (c.workers &&
        (st = bc_workers_attach(c.workers, &cc, c.state)) != BC_OK) {
        redis_error(o->redis_shown, st, bc_workers_errmsg(c.workers));
        rc = 1;
        goto out_free;
    }
    /* Invalid arguments can only be the frontier's (the seen-test's sizing:
     * --expect, --fp-rate, --lru): --resolve, --header and --proxy were
     * checked by parse_options() with the fetcher's own validators
     * (bc_fetcher_check_resolve() and its siblings). */
    st = bc_crawler_create(&cc, &c.crawler);
    if (st != BC_OK && c.state && *bc_crawl_state_errmsg(c.state)) {
        state_error(&c, st); /* bloom.snap or crawl.db refused */
        rc = 1;
        goto out_free;
    }
    if (st == BC_ERR_INVALID_ARG || st == BC_ERR_TOO_LARGE) {
        fprintf(stderr,
                "crawl: cannot create the frontier (--expect, "
                "--fp-rate, --lru): %s\n",
                bc_strerror(st));
        rc = 2;
        goto out_free;
    }
    if (st != BC_OK) {
        fprintf(stderr, "crawl: cannot create the crawler: %s\n",
                bc_strerror(st));
        rc = 1;
        goto out_free;
    }
    c.frontier = bc_crawler_frontier(c.crawler);
    if (c.state && resume_out(&c) != 0) {
        rc = 1;
        goto out_free;
    }
    if (c.workers) {
        st = bc_workers_start(c.workers, c.crawler);
        if (st != BC_OK) {
            redis_error(o->redis_shown, st, bc_workers_errmsg(c.workers));
            rc = 1;
            goto out_free;
        }
        struct bc_workers_stats ws;
        bc_workers_stats(c.workers, &ws);
        c.over = c.over_at_start = ws.done_seen_at_start;
        if (c.over)
            fprintf(stderr,
                    "crawl: the crawl \"%s\" is over (all its workers "
                    "finished): nothing to do; another --crawl-id starts "
                    "a new crawl\n",
                    o->crawl_id);
    }
    if (!o->quiet && strcmp(o->user_agent, DEFAULT_USER_AGENT) == 0)
        fprintf(stderr,
                "crawl: note: crawling as \"%s\"; identify yourself "
                "with --user-agent \"name/1.0 (+your contact URL)\" "
                "before crawling others' sites\n",
                DEFAULT_USER_AGENT);

    c.start_ms = now_ms();
    if (c.state) {
        struct bc_crawl_state_info si;
        bc_crawl_state_info(c.state, &si);
        c.elapsed_before = si.elapsed_before_ms;
    }
    struct bc_crawler_stats at_start;
    bc_crawler_stats(c.crawler, &at_start);
    c.pages_before = at_start.pages;
    c.lastmod_due_before = at_start.lastmod_due;
    c.stderr_tty = isatty(STDERR_FILENO);
    if (o->revisit) {
        enum bc_status vst =
            bc_crawler_revisit(c.crawler, &c.revisit_known, &c.revisit_due);
        if (vst != BC_OK) { /* the state's text says what failed */
            const char *msg = bc_crawl_state_errmsg(c.state);
            fprintf(stderr, "crawl: --revisit: %s\n",
                    *msg ? msg : bc_strerror(vst));
            rc = 1;
            goto out_free;
        }
    }
    for (size_t i = 0; i < o->seed_count && !c.over && !c.seed_lost; i++)
        add_seed(&c, NULL, 0, o->seed[i], strlen(o->seed[i]));
    if (o->seeds_file && !c.over && !c.seed_lost &&
        read_seeds(&c, o->seeds_file) != 0) {
        rc = 2;
        goto out_free;
    }
    if (c.seed_lost) {
        rc = 1;
        goto out_free;
    }

    if (o->listen && listen_open(&c) != 0) {
        rc = 2;
        goto out_free;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* The first live --stats-json: FILE parses from the start on. */
    c.last_stats = now_ms();
    c.last_pages = c.pages_before;
    if (o->stats_file) {
        int err = write_stats_file(&c, c.last_stats, "running", -1);
        if (err) {
            c.stats_warned = true;
            fprintf(stderr,
                    "crawl: warning: writing %s: %s (the crawl goes on; "
                    "tried again every --stats-interval)\n",
                    o->stats_file, strerror(err));
        }
    }

    /* The outcome and the exit status (see usage()). */
    const char *outcome = "complete";
    if (!c.over && run(&c) != 0) {
        outcome = "failed";
        rc = 1;
    } else if (interrupted) {
        outcome = "interrupted";
        rc = 128 + stop_signal;
    } else if (c.workers) { /* a worker may own no host, get no seed */
        struct bc_workers_stats ws;
        bc_workers_stats(c.workers, &ws);
        if (ws.budget_spent)
            outcome = "limit";
    } else {
        struct bc_crawler_stats k;
        bc_crawler_stats(c.crawler, &k);
        uint64_t responses = 0;
        for (int i = 0; i < 6; i++)
            responses += k.status_class[i];
        if (o->max_pages && k.handed_out >= o->max_pages)
            outcome = "limit";
        if (k.seeds_admitted == 0) {
            fprintf(stderr, "crawl: no seed was admitted: nothing to crawl\n");
            rc = 3;
        } else if (responses == 0) {
            fprintf(stderr, "crawl: nothing could be fetched: no page got an "
                            "HTTP response\n");
            rc = 3;
        }
    }
    /* Truthful: a crawl that gave URLs up to transient faults is not
     * complete (DESIGN 3.4). */
    struct given_up g = given_up_of(&c);
    if ((rc == 0 || rc == 3) && g.total > 0 &&
        strcmp(outcome, "complete") == 0) {
        /* Exit 3 (nothing could be fetched) says more than 4 and stays;
         * the outcome says what was lost either way. */
        outcome = "incomplete";
        rc = rc == 3 ? 3 : 4;
        fprintf(stderr,
                "crawl: incomplete: %llu URLs given up to transient faults "
                "(see the report; --retry-failed with --state tries them "
                "again)\n",
                (unsigned long long)g.total);
    }
    if (c.state && rc != 1) {
        /* Commit and snapshot what the last steps left (a second signal
         * abandons transfers: those stay in flight, fetched on resume). */
        st = bc_crawler_sync(c.crawler);
        if (st != BC_OK && write_error(&c, st)) {
            outcome = "failed";
            rc = 1;
        } else if (st != BC_OK) {
            state_error(&c, st);
            outcome = "failed";
            rc = 1;
        }
    }
    struct bc_crawler_stats k;
    bc_crawler_stats(c.crawler, &k);
    if (k.not_started)
        fprintf(stderr, "crawl: %llu fetches could not be started\n",
                (unsigned long long)k.not_started);
    if (k.local_failures && !o->quiet)
        fprintf(stderr,
                "crawl: note: %llu transfers were refused %s by this "
                "machine (last: %s), given back and fetched again\n",
                (unsigned long long)k.local_failures,
                bc_crawler_resource_name(k.local_errno),
                strerror(k.local_errno));
    uint64_t end = now_ms();
    log_stats(&c, end); /* the run's last statistics line */
    check_saturation(&c, true);
    progress(&c, end, true);
    if (interrupted && !o->quiet)
        fprintf(stderr, "crawl: interrupted\n");
    if (!o->quiet)
        report(&c, stdout, end);
    if (c.write_failed && rc != 1) { /* a second signal: not said yet */
        write_error(&c, BC_ERR_IO);
        outcome = "failed";
        rc = 1;
    }
    if (o->stats_file) {
        int err = write_stats_file(&c, end, outcome, rc);
        if (err) {
            fprintf(stderr, "crawl: writing %s: %s\n", o->stats_file,
                    strerror(err));
            rc = 1;
        }
    }
    listen_close(&c, end, outcome, rc);

out_free:
    listen_close(&c, now_ms(), "failed", rc); /* a failed start */
    bc_crawler_free(c.crawler); /* the worker outlives its crawler */
    bc_workers_free(c.workers);
    c.workers = NULL;
    if (c.warc && bc_warc_free(c.warc) != BC_OK) {
        fprintf(stderr, "crawl: --warc %s: closing failed: %s\n", o->warc_file,
                strerror(errno));
        rc = 1;
    }
    bc_crawl_state_close(c.state);
    bc_fetcher_global_cleanup();
out_close:
    bc_workers_free(c.workers);
    if (c.out_fd >= 0)
        close(c.out_fd);
    if (c.log_fd >= 0)
        close(c.log_fd);
    if (c.stats_fd >= 0)
        close(c.stats_fd);
    free(c.stats_tmp);
    clusters_free(&c.clusters);
    clusters_free(&c.near_by_host);
    if (c.seeds_in)
        fclose(c.seeds_in);
    return rc;
}
