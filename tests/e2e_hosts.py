#!/usr/bin/env python3
"""End-to-end: crawl's per-host report, referrers, its log and the
options of issue 13 section 3, through the tool.

    python3 tests/e2e_hosts.py BUILD_EXAMPLES_DIR

  report    the sample site (examples/site) crawled with --stats-json,
            --out and --log: "per_host" agrees host by host with the
            server's own access log (pages, 4xx, 5xx, robots.txt parsed),
            is sorted by pages, and the text report shows the table;
            every --out record has a referrer, null for the seed only,
            each one a page fetched (a redirect target's: the URL that
            redirected); --log has one line per request of the server's
            log (pages and robots.txt) in the documented format.
  types     --accept-type text/html: every other page is skipped (--out
            "skipped": "content_type", bytes 0, counted in --stats-json),
            robots.txt still parsed; --reject-type 'text/*' the same with
            text/html pages skipped.
  proxy     --proxy to a local server acting as an HTTP proxy: it sees
            absolute-form requests for a host that resolves nowhere, with
            --header's headers; -v writes the log lines on stderr.
  given up  a host whose robots.txt answers 503 is given up, its URLs
            listed per host; with --state, the URLs it lost (found before
            and after the give-up) all come back with --retry-failed.
  resume    --state: a crawl stopped by --max-pages and resumed with a
            changed --log and -v: per_host continues (its pages add up to
            the server's log of both runs), referrers still written.

Nothing here contacts an address outside 127.0.0.0/8.
"""
import http.server
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, summary  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \d{3} \d+ \d+ "
                      r"(https?://\S+)( [a-z_:]+)?$")
# --log's statistics lines (every --stats-interval and at the end: TIME
# stats KEY=VALUE...; tests/e2e_live.py checks them) are not fetches.
STATS_LINE = re.compile(r"^\S+ stats ")


def fetch_lines(path):
    """The fetch lines of the --log at path, its statistics lines left
    out."""
    with open(path) as f:
        return [ln for ln in f.read().splitlines()
                if not STATS_LINE.match(ln)]


class Server(sample_site.Server):
    """serve.py with its access log on port (0: a free one)."""

    def __init__(self, sitedir, log, port=0):
        super().__init__(sitedir, log, ["--port", str(port), "--slow-seconds",
                                        "3", "--huge-bytes", "2M"])


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def crawl(args, timeout=180):
    p = subprocess.run([CRAWL, *args], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def per_host_of_log(entries, sitemaps):
    """{origin: {"pages", "4xx", "5xx", "robots"}} from serve.py's log;
    sitemap requests are not pages."""
    hosts = {}
    for e in entries:
        origin = "http://" + e["host"].lower()
        h = hosts.setdefault(origin, {"pages": 0, "4xx": 0, "5xx": 0,
                                      "robots": None})
        if e["path"].split("?")[0] == "/robots.txt":
            h["robots"] = e["status"]
            continue
        if (e["host"].split(":")[0].lower(), e["path"]) in sitemaps:
            continue
        h["pages"] += 1
        if e["status"] // 100 in (4, 5):
            h["%dxx" % (e["status"] // 100)] += 1
    return hosts


# --retries 0: the site's /error/500 and /slow (a timeout) are given up at
# their first failure (one request each, as the per-host counts against
# the server's log expect), so a crawl that reaches them ends incomplete,
# exit 4 (docs/DESIGN.md 3.4).
FAST = ["--delay", "0", "--concurrency", "16", "--per-host", "4",
        "--timeout", "1500", "--max-body", "1000000", "--scope", "domain",
        "--max-depth", "8", "--retries", "0"]
FINISHED_RC = 4


def test_report(d, sitedir, manifest):
    log, out, stats, flog = (os.path.join(d, n) for n in (
        "report.access.log", "report.out", "report.json", "report.log"))
    server = Server(sitedir, log)
    args = server.args
    rc, report, err = crawl(FAST + ["--out", out, "--stats-json", stats,
                                    "--log", flog, *args])
    server.stop()
    check(rc == FINISHED_RC, "report: crawl exits %d, incomplete (%s) %s"
          % (FINISHED_RC, rc, err[-300:]))
    s = json.load(open(stats))
    entries = read_jsonl(log)
    want = per_host_of_log(entries, sample_site.sitemap_targets(manifest))
    got = {h["host"]: h for h in s.get("per_host", [])}
    check(set(got) == set(want),
          "report: per_host has the hosts of the server's log (%s vs %s)"
          % (sorted(got), sorted(want)))
    for origin, w in sorted(want.items()):
        g = got.get(origin, {})
        check(g.get("pages") == w["pages"] and
              g.get("status", {}).get("4xx") == w["4xx"] and
              g.get("status", {}).get("5xx") == w["5xx"],
              "report: %s: pages %r, 4xx %r, 5xx %r = the log's %r"
              % (origin, g.get("pages"), g.get("status", {}).get("4xx"),
                 g.get("status", {}).get("5xx"), w))
        check(g.get("robots") == ("parsed" if w["robots"] == 200 else
                                  "unavailable"),
              "report: %s: robots %r (log: %r)" % (origin, g.get("robots"),
                                                   w["robots"]))
        check(g.get("queued") == 0 and g.get("given_up") is False and
              g.get("given_up_urls") == 0,
              "report: %s: nothing queued, not given up" % origin)
        check(isinstance(g.get("ms_mean"), (int, float)) and
              isinstance(g.get("ms_p95"), int) and
              set(g) == {"host", "pages", "bytes", "errors", "status",
                         "robots", "ms_mean", "ms_p95", "queued",
                         "given_up", "given_up_urls", "circuit", "failures",
                         "down", "down_urls", "retries_exhausted",
                         "delay_ms", "crawl_delay_ms", "next_fetch_in_ms"},
              "report: %s: the contract's keys %s" % (origin, sorted(g)))
    rows = s.get("per_host", [])
    check(rows == sorted(rows, key=lambda h: (-h["pages"], h["host"])),
          "report: per_host sorted by pages, then host")
    check(sum(h["pages"] for h in rows) == s["pages"] and
          sum(h["bytes"] for h in rows) == s["bytes"],
          "report: per_host pages and bytes add up to the totals")
    errs = {}
    for h in rows:
        for k, n in h["errors"].items():
            check(n > 0, "report: only error kinds with n > 0 (%s)" % k)
            errs[k] = errs.get(k, 0) + n
    check(errs == {k: n for k, n in s["errors"].items() if n},
          "report: per_host errors add up to the totals (%r)" % errs)
    check(s.get("skipped_content_type") == 0,
          "report: skipped_content_type 0 without a filter")
    # The text report's table.
    check(re.search(r"^hosts \(top %d of %d by pages\)$" % (len(rows),
                                                            len(rows)),
                    report, re.M) is not None,
          "report: the text report has the hosts table")
    for h in rows:
        check(re.search(r"^  %s +%d " % (re.escape(h["host"]), h["pages"]),
                        report, re.M) is not None,
              "report: the table's row of %s" % h["host"])
    # Referrers.
    records = read_jsonl(out)
    by_url = {r["url"]: r for r in records}
    seeds = [r for r in records if r["referrer"] is None]
    check(len(seeds) == 1 and seeds[0]["url"] == args[-1],
          "report: only the seed has referrer null (%d)" % len(seeds))
    sitemap_urls = {r for r in (r["referrer"] for r in records)
                    if r and r not in by_url}
    check(sitemap_urls and all(
        (u.split("/")[2].split(":")[0], "/" + u.split("/", 3)[3]) in
        sample_site.sitemap_targets(manifest) for u in sitemap_urls),
        "report: every referrer is a page fetched, or a sitemap (%d)"
        % len(sitemap_urls))
    redirected = [r for r in records if r["referrer"] in by_url and
                  by_url[r["referrer"]]["status"] in (301, 302, 303, 307,
                                                      308)]
    check(len(redirected) > 0 and all(
        by_url[r["referrer"]].get("location") for r in redirected),
        "report: redirect targets name the URL that redirected (%d)"
        % len(redirected))
    check(all(r["depth"] == by_url[r["referrer"]]["depth"] + 1 or
              r in redirected for r in records if r["referrer"] in by_url),
          "report: a link is one deeper than its referrer")
    check(all(r["depth"] == 0 for r in records if r["referrer"] in
              sitemap_urls),
          "report: a page listed by a sitemap is at depth 0")
    # --log: a line per request the server saw.
    lines = fetch_lines(flog)
    bad = [ln for ln in lines if not LOG_LINE.match(ln)]
    check(not bad, "report: --log lines in the documented format (%r)"
          % bad[:2])
    check(len(lines) == len(entries),
          "report: --log has a line per request (%d) of the server's "
          "log (%d)" % (len(lines), len(entries)))
    logged = {LOG_LINE.match(ln).group(1) for ln in lines if
              LOG_LINE.match(ln)}
    check(set(by_url) <= logged and
          sum(u.endswith("/robots.txt") for u in logged) ==
          s["frontier"]["robots_fetches"] and
          sitemap_urls <= logged,
          "report: --log names every page, robots.txt and sitemap")
    check(any(ln.endswith(" timeout") for ln in lines) and
          any(ln.endswith(" too_large") for ln in lines),
          "report: --log ends a failed fetch's line with its error kind")


def test_types(d, sitedir):
    for name, opt, want_skip in (
            ("accept", ["--accept-type", "text/html"],
             lambda t: t != "text/html"),
            ("reject", ["--reject-type", "TEXT/*"],
             lambda t: t.startswith("text/"))):
        log, out, stats = (os.path.join(d, name + n) for n in (
            ".access.log", ".out", ".json"))
        server = Server(sitedir, log)
        args = server.args
        rc, _, err = crawl(FAST + ["--quiet", "--no-sitemaps", "--out", out,
                                   "--stats-json", stats, *opt, *args])
        server.stop()
        check(rc == FINISHED_RC or name == "reject",
              "%s: crawl exits %d (%s)" % (name, FINISHED_RC, rc))
        s = json.load(open(stats))
        records = read_jsonl(out)
        ok = [r for r in records if 200 <= r["status"] < 300 and
              "error" not in r]
        mtype = [((r["content_type"] or "application/octet-stream")
                  .split(";")[0].strip().lower(), r) for r in ok]
        skipped = [r for t, r in mtype if want_skip(t)]
        check(skipped and all(r.get("skipped") == "content_type" and
                              r["bytes"] == 0 and r["links"] == 0
                              for r in skipped),
              "%s: %d pages of another type skipped, no body, no links"
              % (name, len(skipped)))
        check(all("skipped" not in r for t, r in mtype if not want_skip(t)),
              "%s: the others are not skipped" % name)
        check(s["skipped_content_type"] == len(skipped) ==
              sum(1 for r in records if "skipped" in r),
              "%s: skipped_content_type %d = the records skipped"
              % (name, s["skipped_content_type"]))
        check(all(h["robots"] == "parsed" for h in s["per_host"]),
              "%s: robots.txt (text/plain) never filtered: parsed" % name)
    # reject text/*: the seed itself is skipped, so nothing else is found.
    check(s["pages"] == 1, "reject: a skipped seed yields no links (%d "
          "pages)" % s["pages"])


class Proxy:
    """An HTTP server that answers any absolute-form request as a proxy
    would, recording the request targets and headers."""

    def __init__(self):
        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                seen.append((self.path, dict(self.headers)))
                if not self.path.startswith("http://"):
                    body, status = b"not a proxy request", 400
                elif self.path.endswith("/robots.txt"):
                    body, status = b"User-agent: *\nDisallow: /no\n", 200
                else:
                    body = b'<a href="/a">a</a> <a href="/no/x">x</a>'
                    status = 200
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_proxy(d):
    proxy = Proxy()
    stats = os.path.join(d, "proxy.json")
    rc, _, err = crawl(["--quiet", "--delay", "0", "-v", "--stats-json",
                        stats, "--proxy", "http://127.0.0.1:%d" % proxy.port,
                        "--header", "X-Bc-Test: one",
                        "--header", "X-Bc-Other: two: three",
                        "http://nowhere.bloomcrawl.test/"], timeout=60)
    proxy.stop()
    targets = [t for t, _ in proxy.seen]
    check(rc == 0 and targets == ["http://nowhere.bloomcrawl.test/robots.txt",
                                  "http://nowhere.bloomcrawl.test/sitemap.xml",
                                  "http://nowhere.bloomcrawl.test/",
                                  "http://nowhere.bloomcrawl.test/a"],
          "proxy: every request through --proxy, in absolute form (%s, %r)"
          % (rc, targets))
    check(all(h.get("X-Bc-Test") == "one" and
              h.get("X-Bc-Other") == "two: three" and
              h.get("User-Agent", "").startswith("bloomcrawl/")
              for _, h in proxy.seen),
          "proxy: --header's headers on every request, the user agent kept")
    lines = [ln for ln in err.splitlines() if LOG_LINE.match(ln)]
    check(len(lines) == 4 and lines[0].split()[4].endswith("/robots.txt")
          and lines[1].split()[4].endswith("/sitemap.xml") and
          len(lines[1].split()) == 5,
          "proxy: -v writes a log line per fetch on stderr, the sitemap's "
          "(not XML: cut, counted, not an error) too (%r)" % lines)
    s = json.load(open(stats))
    check([h["host"] for h in s["per_host"]] ==
          ["http://nowhere.bloomcrawl.test"] and
          s["per_host"][0]["pages"] == 2,
          "proxy: per_host names the host as crawled, not the proxy")
    # A proxy with a password: curl sends it to the proxy, but the WARC's
    # request records (kept, shared) do not carry Proxy-Authorization.
    proxy = Proxy()
    warc = os.path.join(d, "proxy.warc")
    rc, _, err = crawl(["--quiet", "--delay", "0", "--warc", warc,
                        "--proxy", "http://u:s3cret@127.0.0.1:%d" % proxy.port,
                        "http://nowhere.bloomcrawl.test/"], timeout=60)
    proxy.stop()
    data = open(warc, "rb").read()
    check(rc == 0 and len(proxy.seen) == 4 and
          all(h.get("Proxy-Authorization") == "Basic dTpzM2NyZXQ="
              for _, h in proxy.seen),
          "proxy: the proxy's credentials went to the proxy (%s)" % rc)
    check(data.count(b"WARC-Type: request\r\n") >= 3 and
          b"dTpzM2NyZXQ=" not in data and b"s3cret" not in data and
          b"\r\nproxy-authorization:" not in data.lower(),
          "proxy: no record of the WARC holds the proxy's credentials "
          "(%d request records)" % data.count(b"WARC-Type: request\r\n"))


def test_given_up(d):
    """A host whose robots.txt answers 503, --robots-retries 0: it is given
    up, and per_host says how many of its URLs were lost with it."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(503 if self.path == "/robots.txt" else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    origin = "http://127.0.0.1:%d" % httpd.server_address[1]
    stats = os.path.join(d, "given_up.json")
    rc, report, err = crawl(["--delay", "0", "--no-sitemaps",
                             "--robots-retries", "0", "--stats-json", stats,
                             origin + "/a", origin + "/b", origin + "/c"],
                            timeout=60)
    httpd.shutdown()
    httpd.server_close()
    rows = json.load(open(stats))["per_host"]
    check(len(rows) == 1 and rows[0]["given_up"] is True and
          rows[0]["given_up_urls"] == 3 and rows[0]["queued"] == 0,
          "given up: per_host says the host was given up with its 3 URLs "
          "(%s, %r)" % (rc, rows))
    check(re.search(r"^  %s .* given up \(3 URLs\)$" % re.escape(origin),
                    report, re.M) is not None,
          "given up: the text table's row says so: %r"
          % [ln for ln in report.splitlines() if origin in ln])


def test_given_up_retry(d):
    """A host given up for its robots.txt (503, --robots-retries 0) loses
    no URL for good: b1 (queued before the give-up) and b2 (found on A's
    second page after it) are both kept in the state's failed table, the
    crawl exits 4, and once B answers, --retry-failed fetches both and the
    run is complete. (b2 used to be refused at admission: counted lost,
    never stored, and the retry fetched b1 alone and said complete.)"""
    b_paths = []
    b_ok = [False]

    class BHandler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            b_paths.append(self.path)
            if self.path == "/robots.txt":
                self.send_response(404 if b_ok[0] else 503)
            else:
                self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    hb = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BHandler)
    b = "http://127.0.0.1:%d" % hb.server_address[1]

    class AHandler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            pages = {"/": '<a href="%s/b1">b1</a><a href="/a2">a2</a>' % b,
                     "/a2": '<a href="%s/b2">b2</a>' % b}
            body = pages.get(self.path)
            self.send_response(200 if body is not None else 404)
            body = (body or "").encode()
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    ha = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AHandler)
    for h in (ha, hb):
        threading.Thread(target=h.serve_forever, daemon=True).start()
    a = "http://127.0.0.1:%d" % ha.server_address[1]
    state = os.path.join(d, "given_up_state")
    args = [a + "/", "--scope", "any", "--delay", "300", "--robots-retries",
            "0", "--no-sitemaps", "--state", state]
    try:
        rc, report, err = crawl(args, timeout=60)
        check(rc == 4 and "/b1" not in b_paths and "/b2" not in b_paths,
              "given up, retry: the first run is incomplete (exit 4), no "
              "page of B fetched (%s, %r, %s)" % (rc, b_paths, err.strip()))
        db = sqlite3.connect(os.path.join(state, "crawl.db"))
        failed = db.execute("SELECT count(*) FROM failed").fetchone()[0]
        lost = db.execute("SELECT given_up_lost FROM hosts WHERE origin = ?",
                          (b,)).fetchone()
        db.close()
        check(failed == 2 and lost is not None and lost[0] == 2,
              "given up, retry: failed holds both of B's URLs, as many as "
              "given_up_lost (%d, %r)" % (failed, lost))
        b_ok[0] = True
        del b_paths[:]
        rc, report, err = crawl(args + ["--retry-failed"], timeout=60)
        check(rc == 0 and sorted(p for p in b_paths if p != "/robots.txt") ==
              ["/b1", "/b2"],
              "given up, retry: --retry-failed fetches b1 and b2, exit 0 "
              "(%s, %r, %s)" % (rc, b_paths, err.strip()))
    finally:
        for h in (ha, hb):
            h.shutdown()
            h.server_close()


def test_resume(d, sitedir, manifest):
    state = os.path.join(d, "state")
    logs = [os.path.join(d, "resume%d.access.log" % i) for i in (1, 2)]
    out = os.path.join(d, "resume.out")
    stats = os.path.join(d, "resume.json")
    flog = os.path.join(d, "resume.log")
    server = Server(sitedir, logs[0])
    args = server.args
    rc, _, err = crawl(FAST + ["--quiet", "--state", state, "--out", out,
                               "--max-pages", "40", *args])
    server.stop()
    check(rc == 0, "resume: first run stops at --max-pages (%s) %s"
          % (rc, err[-200:]))
    # The server comes back on the same port (an origin includes it).
    server = Server(sitedir, logs[1], server.port)
    rc, report, err = crawl(FAST + ["--state", state, "--out", out,
                                    "--stats-json", stats, "--log", flog,
                                    "-v", *args])
    server.stop()
    check(rc == FINISHED_RC, "resume: second run completes, incomplete (%s) "
          "%s" % (rc, err[-200:]))
    s = json.load(open(stats))
    entries = read_jsonl(logs[0]) + read_jsonl(logs[1])
    want = per_host_of_log(entries, sample_site.sitemap_targets(manifest))
    got = {h["host"]: h for h in s["per_host"]}
    check(all(got.get(o, {}).get("pages") == w["pages"] for o, w in
              want.items()) and set(got) == set(want),
          "resume: per_host pages continue across the resume (= both "
          "server logs: %r vs %r)" % ({o: g["pages"] for o, g in got.items()},
                                      {o: w["pages"] for o, w in
                                       want.items()}))
    records = read_jsonl(out)
    check(len(records) == s["pages"] and
          sum(r["referrer"] is None for r in records) == 1,
          "resume: --out whole, referrers written after the resume too")
    lines = fetch_lines(flog)
    check(len(lines) == len(read_jsonl(logs[1])) and
          len([ln for ln in err.splitlines() if LOG_LINE.match(ln)]) ==
          len(lines),
          "resume: --log and -v added on resume log the second run")
    check("hosts (top" in report, "resume: the report's table")


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    with tempfile.TemporaryDirectory(prefix="bc_hosts.") as d:
        sitedir = os.path.join(d, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir], check=True, capture_output=True)
        manifest = os.path.join(sitedir, "manifest.json")
        test_report(d, sitedir, manifest)
        test_types(d, sitedir)
        test_proxy(d)
        test_given_up(d)
        test_given_up_retry(d)
        test_resume(d, sitedir, manifest)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
