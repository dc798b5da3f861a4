#!/usr/bin/env python3
"""End-to-end: the sample crawler against servers that misbehave.

    python3 tests/e2e_hostile.py BUILD_EXAMPLES_DIR

Each case starts tests/http_fixture_server.py (or closes a port) on
127.0.0.1, runs examples/crawl against it and checks its exit status, its
--stats-json and its --out records:

  closed      a port where nothing listens: robots.txt is retried
              --robots-retries times, the host is given up, the crawl ends
              by itself with exit status 3
  robots503   robots.txt answers 503: the same, after 1 + 3 tries
  two-seeds   a live host and a dead one: the live host is crawled, the dead
              one given up (listed in the report with the URLs it lost),
              exit 4: incomplete (its URL was lost to a transient fault)
  robots-big  a robots.txt of 600 KiB (Content-Length, then chunked) with
              --max-body 1000: its first 500 KiB are obeyed, not "allow all"
  redirects   an endless redirect chain /r/0 -> /r/1 -> ...: cut after
              --max-redirects hops, reported as its own error kind
  retry       a 429 URL is fetched again after its Retry-After, at most
              --max-retries times (one --out record, its final outcome,
              with its retries; then given up: exit 4, incomplete);
              Retry-After: 999999 is capped by --max-retry-after
  kill        crawl --out killed with SIGKILL at random moments: every line
              of the file is a whole JSON record
  sitemaps    robots.txt 404, so /sitemap.xml: an index of a plain and a
              gzipped sitemap, itself, a 404, an entity bomb and a 5 GiB
              gzip stream: the crawl ends (exit 0), the bomb and the
              stream cut with their reasons, the index fetched once, the
              pages listed within scope fetched (the one the stream lists
              before its spaces too); the other cases run --no-sitemaps

Nothing here contacts an address outside 127.0.0.0/8. The retry delays are
short (--robots-retry-delay 50, --delay 0): the whole file runs in seconds.
"""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
SERVER = os.path.join(ROOT, "tests", "http_fixture_server.py")
# The fixture server's /sitemap.xml is an index of hostile sitemaps: the
# cases about other things do not follow it (case_sitemaps does).
FAST = ["--delay", "0", "--robots-retry-delay", "50", "--timeout", "5000",
        "--no-sitemaps"]


class Server:
    def __init__(self, robots="404"):
        self.proc = subprocess.Popen(
            [sys.executable, SERVER, "--robots", robots],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = int(self.proc.stdout.readline())
        self.base = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def crawl(work, name, args, timeout=60):
    """Run crawl; returns (exit status, stats, --out records, stdout, err);
    exit status None when it did not end within timeout seconds."""
    out = os.path.join(work, name + ".jsonl")
    stats = os.path.join(work, name + ".json")
    cmd = [CRAWL, "--out", out, "--stats-json", stats, *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        print("  crawl did not end within %d s: %s" % (timeout, " ".join(cmd)))
        return None, {}, [], "", ""
    s = {}
    if os.path.exists(stats):
        with open(stats) as f:
            s = json.load(f)
    records = []
    if os.path.exists(out):
        with open(out) as f:
            records = [json.loads(line) for line in f if line.strip()]
    return p.returncode, s, records, p.stdout, p.stderr


def reason(s, name):
    return s.get("frontier", {}).get("reasons", {}).get(name, 0)


def case_closed(work):
    port = closed_port()
    rc, s, records, out, err = crawl(
        work, "closed", FAST + ["http://127.0.0.1:%d/" % port])
    check(rc == 3, "closed: the crawl of a closed port ends by itself, "
          "exit 3 (got %s)" % rc)
    check(s.get("frontier", {}).get("robots_fetches") == 4,
          "closed: robots.txt tried 1 + 3 times")
    check(s.get("frontier", {}).get("hosts_given_up") == 1 and
          reason(s, "host_given_up") == 1 and records == [],
          "closed: the host given up, its URL dropped, nothing fetched")
    check("given up 1" in err, "closed: the progress line shows it")


def case_robots503(work):
    srv = Server("503")
    try:
        rc, s, records, out, err = crawl(
            work, "robots503",
            FAST + ["--robots-retries", "2", srv.base + "/ok"])
    finally:
        srv.stop()
    check(rc == 3, "robots503: exit 3 (got %s)" % rc)
    check(s.get("frontier", {}).get("robots_fetches") == 3 and
          s["frontier"]["robots_unreachable"] == 3,
          "robots503: robots.txt tried 1 + 2 times (--robots-retries 2)")
    check(records == [], "robots503: no page fetched while unreachable")


def case_two_seeds(work):
    srv = Server()
    port = closed_port()
    dead = "http://127.0.0.1:%d" % port
    try:
        rc, s, records, out, err = crawl(
            work, "two-seeds",
            FAST + ["--exclude", "http://127.0.0.1/*", srv.base + "/ok",
                    dead + "/a"])
    finally:
        srv.stop()
    urls = sorted(r["url"] for r in records)
    check(rc == 4 and s.get("outcome") == "incomplete" and
          s.get("given_up", {}).get("robots_unreachable") == 1,
          "two-seeds: exit 4, incomplete: the dead host's URL lost (got %s, "
          "%r)" % (rc, s.get("given_up")))
    check(urls == sorted([srv.base + "/ok", srv.base + "/page1",
                          srv.base + "/page2?a=1&b=2"]),
          "two-seeds: the live host crawled fully (%s)" % urls)
    check(s.get("frontier", {}).get("hosts_given_up") == 1,
          "two-seeds: the dead host given up")
    check("hosts given up       1" in out and
          ("  %s  1 URLs lost" % dead) in out,
          "two-seeds: the report names the host and its lost URLs")


def case_robots_big(work):
    for mode in ("big", "big-chunked"):
        srv = Server(mode)
        try:
            rc, s, records, out, err = crawl(
                work, "robots-" + mode,
                FAST + ["--quiet", "--max-body", "1000", "--exclude",
                        "http://127.0.0.1/*", srv.base + "/ok",
                        srv.base + "/private/x"])
        finally:
            srv.stop()
        urls = [r["url"] for r in records]
        check(rc == 0 and srv.base + "/ok" in urls and
              srv.base + "/private/x" not in urls,
              "robots-%s: a 600 KiB robots.txt with --max-body 1000 is "
              "obeyed: /private/x not fetched (%s)" % (mode, urls))
        check(s.get("frontier", {}).get("robots_parsed") == 1 and
              reason(s, "robots") >= 1,
              "robots-%s: parsed (its first 500 KiB), /private/x refused"
              % mode)


def case_redirects(work):
    srv = Server()
    try:
        rc, s, records, out, err = crawl(
            work, "redirects",
            FAST + ["--quiet", "--max-redirects", "5", "--max-pages", "100",
                    srv.base + "/r/0"])
    finally:
        srv.stop()
    urls = [r["url"] for r in records]
    check(rc == 0 and urls == [srv.base + "/r/%d" % i for i in range(6)],
          "redirects: /r/0 and 5 hops fetched, no more (%d pages)"
          % len(urls))
    last = records[-1] if records else {}
    check(last.get("error") == "too_many_redirects" and
          s.get("errors", {}).get("too_many_redirects") == 1,
          "redirects: the 6th hop reported as too_many_redirects")


def case_retry(work):
    srv = Server()
    try:
        t0 = time.time()
        rc, s, records, out, err = crawl(
            work, "retry",
            FAST + ["--quiet", "--max-retries", "2", "--max-retry-after",
                    "300", "--retry-delay", "100", "--host-failures", "0",
                    srv.base + "/retry-1", srv.base + "/retry-huge"])
        elapsed = time.time() - t0
    finally:
        srv.stop()
    urls = [r["url"] for r in records]
    check(rc == 4 and sorted(urls) == [srv.base + "/retry-1",
                                       srv.base + "/retry-huge"] and
          all(r.get("retries") == 2 and r.get("status") == 429 and
              r.get("fault") == "transient" for r in records),
          "retry: each 429 URL fetched 1 + 2 times, one record with its "
          "retries, given up: exit 4 (%s, %s)" % (rc, records))
    check(s.get("retried") == 4 and
          s.get("given_up", {}).get("retries_exhausted") == 2,
          "retry: 4 attempts retried, 2 URLs' retries exhausted")
    check(s.get("frontier", {}).get("retried") == 4,
          "retry: 4 retries counted")
    check(elapsed < 30, "retry: Retry-After 999999 capped by "
          "--max-retry-after (%.1f s)" % elapsed)


def case_kill(work):
    srv = Server()
    cut = whole = 0
    rng = random.Random(10)
    try:
        for i in range(8):
            out = os.path.join(work, "kill%d.jsonl" % i)
            p = subprocess.Popen(
                [CRAWL, "--quiet", "--delay", "0", "--per-host", "4",
                 "--concurrency", "8", "--max-depth", "100", "--out", out,
                 srv.base + "/fan/1"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.3, 1.5))
            p.send_signal(signal.SIGKILL)
            p.wait()
            with open(out, "rb") as f:
                data = f.read()
            lines = data.split(b"\n")
            if lines[-1] != b"":
                cut += 1
            for line in lines[:-1]:
                try:
                    json.loads(line)
                    whole += 1
                except ValueError:
                    cut += 1
    finally:
        srv.stop()
    check(whole > 100, "kill: %d records written before the kills" % whole)
    check(cut == 0, "kill: no partial record after 8 SIGKILLs (%d cut)" % cut)


def case_sitemaps(work):
    srv = Server()
    try:
        rc, s, records, out, err = crawl(
            work, "sitemaps", [a for a in FAST if a != "--no-sitemaps"] +
            ["--max-body", "1000", srv.base + "/text"])
    finally:
        srv.stop()
    urls = sorted(r["url"][len(srv.base):] for r in records)
    sm = s.get("sitemaps", {})
    check(rc == 0 and urls == ["/sm/page1", "/sm/page2", "/sm/page3",
                               "/sm/page4", "/text"],
          "sitemaps: exit 0, the listed pages fetched, no sitemap in --out "
          "(%s, %s)" % (rc, urls))
    check(sm.get("cut") == {"doctype": 1, "too_large": 1},
          "sitemaps: the entity bomb and the 5 GiB stream cut, by reason "
          "(%r)" % sm.get("cut"))
    check(sm.get("started") == 6 and sm.get("fetched") == 5 and
          sm.get("errors", {}).get("http") == 1 and
          sm.get("refused", {}).get("duplicate") == 1,
          "sitemaps: 6 fetched once each (the index names itself), one "
          "a 404 (%r)" % sm)
    check(sm.get("rejected") == {"sitemap_scope": 1} and
          s.get("discovered_via_sitemap") == 4,
          "sitemaps: /ok, outside the sitemap's directory, refused; 4 "
          "pages discovered via sitemap, --max-body not applied to them")
    check("sitemaps cut          too_large 1, doctype 1" in out or
          "sitemaps cut          doctype 1, too_large 1" in out,
          "sitemaps: the report says what was cut")


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    with tempfile.TemporaryDirectory(prefix="bc_hostile.") as work:
        for case in (case_closed, case_robots503, case_two_seeds,
                     case_robots_big, case_redirects, case_retry, case_kill,
                     case_sitemaps):
            case(work)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
