#!/usr/bin/env python3
"""End-to-end: the sample crawler against the sample site on 127.0.0.1.

    python3 tests/e2e_crawl.py BUILD_EXAMPLES_DIR

For each run: generate the site (examples/site/gensite.py), serve it on a
free port of 127.0.0.1 with an access log (serve.py), crawl it with
examples/crawl mapping the site's virtual hosts to 127.0.0.1 (--resolve),
stop the server, and judge the crawl with examples/site/check_crawl.py:
every reachable allowed page fetched exactly once, nothing disallowed
fetched, no URL requested twice (the server's own log), every spelling
merged, redirects through the seen-test, the trap bounded, each error kind
reported, the log and --out in agreement (but for a URL's retries after
transient faults: /error/500 and /slow are retried, then given up, so a
crawl that reaches them ends incomplete, exit 4). Then the crawler's
--stats-json is checked against the server's log.

The runs:
  domain    --scope domain, generous concurrency: the whole checker passes.
  host      --scope host: the whole checker passes.
  any       --scope any: also other.example, whose sitemap index lists
            hostile sitemaps (an entity bomb, an index of itself, a loop,
            a 5 GB gzip stream, malformed XML): the crawl survives each,
            counted by reason, and the checker passes.
  (domain, host and any follow the site's sitemaps: pages only they list
  are fetched; tiny runs with --no-sitemaps.)
  tiny      a Bloom filter sized for 40 URLs and an LRU of 150 entries: the
            report shows false positives caught (while the LRU is complete)
            and PROBABLY_SEEN (after it evicted); pages are lost to false
            positives (check_crawl --lossy), but every other rule holds:
            still no URL is requested twice.
  sigint    Ctrl-C in the middle of a slow crawl: the crawler stops cleanly
            with its report, exit status 130, outcome "interrupted" in
            --stats-json; SIGTERM the same with 143.
  limit     --max-pages: exit 0, outcome "limit".
  nothing   exit status 3 when nothing could be fetched: every seed
            refused; a closed port (--no-robots; outcome incomplete, its
            URL given up to transient faults); a seed whose body is over
            --max-body.

Nothing here contacts an address outside 127.0.0.0/8: the site's names are
reserved (.test, .example) and mapped to 127.0.0.1.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, summary  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
SLOW_SECONDS = 3
HUGE = "4M"


class Server(sample_site.Server):
    """serve.py with its access log, /slow and /huge as the parts expect."""

    def __init__(self, sitedir, log):
        super().__init__(sitedir, log, ["--slow-seconds", str(SLOW_SECONDS),
                                        "--huge-bytes", HUGE],
                         SLOW_SECONDS + 5)


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def free_port():
    """A port of 127.0.0.1 that nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# One retry of the site's always-failing pages (/error/500, /slow: a
# 1.5 s timeout each time), 100 ms after the first try: the same path
# through the retries, a crawl seconds shorter (e2e_outage and
# test_crawler test the counts and delays themselves).
RETRY = ["--retries", "1", "--retry-delay", "100"]


def crawl_only(work, name, args, timeout=120):
    """Run crawl --quiet with --stats-json: (exit status, stats, stderr)."""
    stats = os.path.join(work, name + ".stats.json")
    p = subprocess.run([CRAWL, "--quiet", "--stats-json", stats, *RETRY,
                        *args],
                       capture_output=True, text=True, timeout=timeout)
    s = {"pages": -1, "errors": {}}
    if os.path.exists(stats) and os.path.getsize(stats):
        with open(stats) as f:
            s = json.load(f)
    return p.returncode, s, p.stderr


def crawl_and_check(sitedir, name, crawl_args, check_args):
    manifest = os.path.join(sitedir, "manifest.json")
    work = os.path.join(sitedir, name)
    os.makedirs(work)
    log, out, stats = (os.path.join(work, n)
                       for n in ("access.log", "out.jsonl", "stats.json"))
    server = Server(sitedir, log)
    args = server.args
    cmd = [CRAWL, "--quiet", "--out", out, "--stats-json", stats,
           "--timeout", "1500", "--max-body", "1000000", *RETRY, *crawl_args,
           *args]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    elapsed = time.time() - t0
    server.stop()
    # The site's /error/500 and /slow (a timeout) fail on every try: they
    # are given up after their retries, and the crawl says so (exit 4,
    # incomplete). Each retry is a request in the server's log.
    with open(out) as f:
        given_up = sorted("/" + r["url"].split("/", 3)[3] for r in
                          (json.loads(x) for x in f if x.strip())
                          if r.get("fault") == "transient")
    want = 4 if given_up else 0
    check(p.returncode == want and
          set(given_up) <= {"/error/500", "/slow"},
          "%s: crawl exits %d (%.1f s): given up after their retries: %r"
          % (name, want, elapsed, given_up))
    if p.returncode != want:
        print(p.stderr[-2000:])
    crawl_and_check.stderr = p.stderr
    c = subprocess.run(
        [sys.executable, os.path.join(SITE, "check_crawl.py"),
         "--manifest", manifest, "--log", log, "--out", out,
         # bloomcrawl's own crawl reports content duplicates: D1 and D2
         # are checked, never skipped for want of a report
         "--content-dups", "on", *check_args],
        capture_output=True, text=True)
    print(c.stdout)
    check(c.returncode == 0, "%s: check_crawl passes" % name)
    with open(stats) as f:
        s = json.load(f)
    outcome = "incomplete" if given_up else "complete"
    check(s.get("outcome") == outcome and s.get("exit_status") == want,
          "%s: --stats-json says outcome %s, exit status %d (%r, %r)"
          % (name, outcome, want, s.get("outcome"), s.get("exit_status")))
    given = s.get("given_up", {})
    check(given.get("total") == given.get("retries_exhausted") ==
          len(given_up),
          "%s: given up: %r, their retries exhausted (%r)"
          % (name, given_up, given))
    bad = s.get("bad_url", {})
    check(bad.get("unsupported_scheme", -1) + bad.get("malformed", -1) ==
          s["frontier"]["reasons"]["bad_url"],
          "%s: bad_url split into unsupported scheme (%r) and malformed (%r)"
          % (name, bad.get("unsupported_scheme"), bad.get("malformed")))
    entries = read_log(log)
    robots = [e for e in entries if e["path"].split("?")[0] == "/robots.txt"]
    sitemaps = sample_site.sitemap_targets(os.path.join(sitedir,
                                                        "manifest.json"))
    if "--no-sitemaps" in crawl_args:
        sitemaps = set()  # /sitemap.xml is then a page (it is linked)
    smreqs = [e for e in entries if (e["host"].split(":")[0].lower(),
                                     e["path"]) in sitemaps]
    pages = [e for e in entries if e not in robots and e not in smreqs]
    sm = s["sitemaps"]
    check(sm["started"] == len(smreqs),
          "%s: sitemap fetches in the report (%d) = in the log (%d)"
          % (name, sm["started"], len(smreqs)))
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    # The report's numbers against the server's own account: a URL's
    # retries (its record's "retries") are requests too.
    retries = sum(r.get("retries", 0) for r in records)
    check(s["pages"] == len(records) == len(pages) - retries and
          s.get("retried") == retries,
          "%s: pages in the report (%d) = --out records (%d) = requests "
          "in the server log (%d) - retries (%d)"
          % (name, s["pages"], len(records), len(pages), retries))
    check(s["frontier"]["robots_fetches"] == len(robots),
          "%s: robots.txt fetches in the report (%d) = in the log (%d)"
          % (name, s["frontier"]["robots_fetches"], len(robots)))
    statuses = {}
    last = {(e["host"].lower(), e["path"]): e for e in pages}  # final tries
    for e in last.values():
        statuses[e["status"] // 100] = statuses.get(e["status"] // 100, 0) + 1
    check(s["status"]["4xx"] == statuses.get(4, 0) and
          s["status"]["5xx"] == statuses.get(5, 0),
          "%s: 4xx/5xx counts agree with the log" % name)
    targets = [(e["host"].lower(), e["path"]) for e in entries]
    check(len(targets) - retries == len(set(targets)),
          "%s: no request target twice in the server log, but for the "
          "retries" % name)
    seen = s["seen"]
    check(seen["new"] + seen["duplicate"] + seen["probably_seen"] ==
          seen["tested"], "%s: verdicts add up to tests" % name)
    check(s["frontier"]["admitted"] + sm["seen_keys"] == seen["new"],
          "%s: every NEW URL was queued (or a sitemap's)" % name)
    return s, c.stdout


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    with tempfile.TemporaryDirectory(prefix="bc_e2e.") as d:
        sitedir = os.path.join(d, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir], check=True, capture_output=True)
        fast = ["--delay", "0", "--concurrency", "16", "--per-host", "4"]

        s, _ = crawl_and_check(sitedir, "domain",
                               fast + ["--scope", "domain", "--max-depth",
                                       "8"],
                               ["--scope", "domain", "--max-depth", "8"])
        check(s["seen"]["duplicate"] > 10 * s["seen"]["new"],
              "domain: most links are repeats (DUPLICATE %d, NEW %d)"
              % (s["seen"]["duplicate"], s["seen"]["new"]))
        check(s["merged"] > 0 and s["merged_absolute"] > 0,
              "domain: spellings merged by normalization (%d, %d absolute)"
              % (s["merged"], s["merged_absolute"]))
        check(s["errors"]["timeout"] >= 1 and s["errors"]["too_large"] >= 1,
              "domain: timeout and too-large errors reported")
        check(s["seen"]["lru_complete"] and s["seen"]["probably_seen"] == 0,
              "domain: the LRU stayed complete, the seen-test exact")
        check(s.get("bad_url", {}).get("unsupported_scheme", 0) >= 3,
              "domain: mailto:, javascript:, tel: links counted as "
              "unsupported scheme (%d)" % s.get("bad_url", {}).get("unsupported_scheme", 0))
        check("warning" not in crawl_and_check.stderr,
              "domain: no saturation warning for a filter big enough")
        sm = s["sitemaps"]
        check(sm["fetched"] == 5 and sm["started"] == 5,
              "domain: 5 sitemaps fetched: www's /sitemap.xml, its index, "
              "a plain and a gzipped sitemap, blog's /sitemap.xml (%r)" % sm)
        # Sitemaps come right after robots.txt: the pages they list are
        # discovered there first (the 10 only they list among them; the
        # checker's O4 saw those fetched).
        check(s["discovered_via_sitemap"] == sm["admitted"] >= 10 and
              sm["urls"] == sm["admitted"] + sum(sm["rejected"].values()),
              "domain: listed pages discovered via sitemap (%d of %d)"
              % (s["discovered_via_sitemap"], sm["urls"]))
        check(sm["rejected"].get("robots") == 1 and
              sm["rejected"].get("sitemap_scope") == 1,
              "domain: a disallowed URL and one of another host refused "
              "by reason (%r)" % sm["rejected"])
        check(sm["refused"].get("duplicate") == 1 and sm["cut"] == {} and
              sm["errors"] == {"http": 0},
              "domain: an index that lists itself is fetched once; nothing "
              "cut, no error (%r)" % sm)

        crawl_and_check(sitedir, "host",
                        fast + ["--scope", "host", "--max-depth", "6"],
                        ["--scope", "host", "--max-depth", "6"])

        # --scope any reaches other.example, whose /sitemap.xml (it has no
        # robots.txt) is an index of hostile sitemaps.
        s, _ = crawl_and_check(sitedir, "any",
                               fast + ["--scope", "any", "--max-depth", "8"],
                               ["--scope", "any", "--max-depth", "8"])
        sm = s["sitemaps"]
        check(sm["cut"] == {"too_large": 1, "malformed": 1, "doctype": 1},
              "any: the 5 GB gzip stream cut at 50 MiB, the malformed "
              "sitemap and the entity bomb stopped, by reason (%r)"
              % sm["cut"])
        check(sm["refused"].get("duplicate", 0) >= 2 and
              sm["refused"].get("too_deep") == 1,
              "any: an index of itself and a loop fetched once each, "
              "nesting capped (%r)" % sm["refused"])
        check(sm["urls"] == sm["admitted"] + sum(sm["rejected"].values()),
              "any: every listed URL admitted or refused by reason")

        s, report = crawl_and_check(
            sitedir, "tiny",
            fast + ["--scope", "domain", "--max-depth", "8", "--expect",
                    "40", "--fp-rate", "0.05", "--lru", "150",
                    "--no-sitemaps"],
            ["--scope", "domain", "--max-depth", "8", "--lossy",
             "--no-sitemaps"])
        seen = s["seen"]
        check(seen["fp_caught"] > 0,
              "tiny: false positives caught while the LRU was complete (%d)"
              % seen["fp_caught"])
        check(seen["probably_seen"] > 0 and not seen["lru_complete"],
              "tiny: PROBABLY_SEEN once the LRU evicted (%d)"
              % seen["probably_seen"])
        for rule in ("O3", "L2", "L3", "L4", "L6", "L7"):
            check(("ok   %s " % rule) in report,
                  "tiny: rule %s still holds" % rule)
        err = crawl_and_check.stderr
        check(err.count("warning: the Bloom filter") == 1 and
              "--expect" in err,
              "tiny: one warning that the filter is saturated: %r"
              % err.strip()[-300:])

        # Ctrl-C (SIGINT) and SIGTERM: a slow crawl stopped after 1.5 s.
        for sig, name, want in ((signal.SIGINT, "sigint", 130),
                                (signal.SIGTERM, "sigterm", 143)):
            log = os.path.join(d, name + ".log")
            stats = os.path.join(d, name + ".stats.json")
            server = Server(sitedir, log)
            args = server.args
            p = subprocess.Popen([CRAWL, "--delay", "300", "--stats-json",
                                  stats, *args],
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            time.sleep(1.5)
            p.send_signal(sig)
            try:
                out, err = p.communicate(timeout=SLOW_SECONDS + 10)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            server.stop()
            check(p.returncode == want and "== bloomcrawl report" in out and
                  "interrupted" in err,
                  "%s: stops the crawl with the report, exit %d (got %s)"
                  % (name, want, p.returncode))
            with open(stats) as f:
                s = json.load(f)
            check(s.get("outcome") == "interrupted" and s.get("exit_status") == want,
                  "%s: --stats-json outcome interrupted, exit_status %d"
                  % (name, want))

        # --max-pages: a limit reached is a success with its own outcome.
        log = os.path.join(d, "limit.log")
        server = Server(sitedir, log)
        args = server.args
        rc, s, _ = crawl_only(d, "limit", fast + ["--max-pages", "5", *args])
        server.stop()
        check(rc == 0 and s.get("outcome") == "limit" and s["pages"] == 5,
              "limit: --max-pages 5 exits 0 with outcome limit (%s, %r)"
              % (rc, s.get("outcome")))

        # Nothing could be fetched: exit status 3.
        rc, s, err = crawl_only(d, "refused", ["ftp://a.test/",
                                               "mailto:x@a.test"])
        check(rc == 3 and "no seed" in err and s["pages"] == 0,
              "refused: every seed refused exits 3 (%s, %r)"
              % (rc, err.strip()[-200:]))
        port = free_port()
        rc, s, _ = crawl_only(d, "closed", ["--no-robots", "--timeout",
                                            "5000",
                                            "http://127.0.0.1:%d/" % port])
        # Its one URL given up to transient faults (refused, retried):
        # outcome incomplete, exit 3 (nothing could be fetched) all the same.
        check(rc == 3 and s.get("outcome") == "incomplete" and
              s["errors"].get("connect") == 1 and s.get("exit_status") == 3,
              "closed: a closed port (--no-robots) exits 3, outcome "
              "incomplete (%s, %r)" % (rc, s.get("outcome")))
        log = os.path.join(d, "huge.log")
        server = Server(sitedir, log)
        args = server.args
        seed = args[-1].rstrip("/") + "/huge"
        rc, s, _ = crawl_only(d, "huge", fast + ["--max-body", "1000",
                                                 "--max-depth", "0",
                                                 "--no-sitemaps",
                                                 *args[:-1], seed])
        server.stop()
        check(rc == 3 and s["errors"].get("too_large") == 1,
              "huge: a seed over --max-body, nothing else: exit 3 (%s)" % rc)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
