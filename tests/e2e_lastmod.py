#!/usr/bin/env python3
"""End-to-end (issue 24 section 1): a sitemap's <lastmod> later than a
page's last fetch makes the page due at once in a recrawl run, however
young in its window; an older one does not.

    python3 tests/e2e_lastmod.py BUILD_EXAMPLES_DIR WORKDIR

A tiny site, served by this script on a free port of 127.0.0.1 (one
thread per connection, HTTP/1.1), which logs every request (path,
If-None-Match) and answers 304 to a matching If-None-Match. Its
/sitemap.xml lists five pages (/a twice), whose <lastmod>s the test
changes between runs:
    /a   changed on the server after run 1 (new body, ETag "a2"); its
         <lastmod> moved to the time of the change, written with the
         zone +01:00
    /b   <lastmod> 2020-05-01 (a date alone): older than its fetch
    /c   <lastmod> a day in the future: ignored (no evidence of a change)
    /d   <lastmod> of the change time without a time zone designator:
         no W3C datetime, ignored (counted by the parser)
    /e   no <lastmod>
and / links to all of them. Every run: crawl --state DIR --recrawl-after
1h --no-robots (so /sitemap.xml is the host's sitemap) --out
--stats-json, --concurrency 1.
  run 1   seed /: the sitemap and the six pages, each requested once.
  run 2   --revisit, no seed, 1.1 s later (so /a's new <lastmod>, at
          second precision, is later than run 1's fetch of it): the
          sitemap is requested again (the run reads it again), /a is
          requested once, with run 1's ETag "a1" (a recrawl is a
          conditional request as any), and answered 200; / and /b to /e
          are not requested (inside the 1 h window, their <lastmod> not
          later than their fetch, in the future, malformed or absent);
          /a once, though listed twice (made due, its row is stamped with
          the time it was queued);
          --out has /a only; the counters say lastmod_due 1 and the
          revisit found no page due by its window.
  run 3   --revisit again, nothing changed: the sitemap again, no page
          (/a's last fetch, in run 2, is now later than its <lastmod>);
          lastmod_due still 1 (a state's counters are over all runs);
          the report's revisit line: 7 known pages (run 2's refetch of /a
          is a journal row of its own), 1 sitemap read again, 0 pages due
          by a newer lastmod in this run.
  window  another state, --recrawl-after 1s: run 1, then 1.5 s later
          (past the window and its slack) /a's <lastmod> moved to now
          and --revisit: every page due by its window, queued by the
          revisit, which stamps each row; so /a, listed as changed, is
          requested once, not twice; lastmod_due 0.
"""
import datetime
import json
import os
import shutil
import subprocess
import sys
import threading
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, summary  # noqa: E402
import e2e_check  # noqa: E402

BIN, WORKDIR = sys.argv[1], sys.argv[2]
CRAWL = os.path.join(BIN, "crawl")
PAGES = ["/", "/a", "/b", "/c", "/d", "/e"]


class Site:
    def __init__(self):
        self.lock = threading.Lock()
        self.log = []  # (path, If-None-Match, status)
        self.a_version = 1
        self.lastmod = {"/a": "2020-05-01T10:00:00Z", "/b": "2020-05-01",
                        "/c": "2020-05-01", "/d": "2020-05-01"}

    def sitemap(self):
        urls = []
        for p in PAGES[1:] + ["/a"]:  # /a twice
            lm = self.lastmod.get(p)
            urls.append("<url><loc>http://%s%s</loc>%s</url>" % (
                self.host, p, "<lastmod>%s</lastmod>" % lm if lm else ""))
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
                '"http://www.sitemaps.org/schemas/sitemap/0.9">%s</urlset>\n'
                % "".join(urls)).encode()

    def page(self, path):
        """(ETag or None, Content-Type, body) or None"""
        if path == "/sitemap.xml":
            return (None, "application/xml", self.sitemap())
        if path == "/":
            return ('"root"', "text/html", b"<html><body>" + b"".join(
                b'<a href="%s">%s</a>' % (p.encode(), p.encode())
                for p in PAGES[1:]) + b"</body></html>\n")
        if path in PAGES:
            v = self.a_version if path == "/a" else 1
            body = b"<html><body><p>page %s v%d</p></body></html>\n" % (
                path.encode(), v)
            return ('"%s%d"' % (path[1:], v), "text/html", body)
        return None

    def requests(self, start=0):
        time.sleep(0.2)  # a request is logged when its answer is sent
        with self.lock:
            return list(self.log[start:])


class Handler(e2e_check.SiteHandler):
    def do_GET(self):
        s = self.site
        inm = self.headers.get("If-None-Match")
        with s.lock:
            p = s.page(self.path)
        if p is None:
            status, etag, ctype, body = 404, None, "text/plain", b"no\n"
        else:
            etag, ctype, body = p
            status = 304 if etag and inm == etag else 200
        with s.lock:
            s.log.append((self.path, inm, status))
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        if status == 304:
            self.end_headers()
            return
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def crawl(port, d, *extra, quiet=True, window="1h"):
    cmd = [CRAWL, *(["--quiet"] if quiet else []), "--delay", "0",
           "--concurrency", "1",
           "--per-host", "1", "--no-robots", "--timeout", "10000",
           "--scope", "host", "--state", os.path.join(d, "state"),
           "--recrawl-after", window, "--out", os.path.join(d, "out.jsonl"),
           "--stats-json", os.path.join(d, "stats.json"), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if "Sanitizer" in r.stderr or "runtime error:" in r.stderr:
        check(False, "sanitizer report: " + r.stderr[-600:])
    return r


def stats(d):
    with open(os.path.join(d, "stats.json")) as f:
        return json.load(f)


def out_urls(d, skip):
    with open(os.path.join(d, "out.jsonl")) as f:
        return [json.loads(x)["url"] for x in f if x.strip()][skip:]


def out_len(d):
    with open(os.path.join(d, "out.jsonl")) as f:
        return sum(1 for x in f if x.strip())


def w3c(t, offset_hours):
    """t (seconds since the epoch) as YYYY-MM-DDThh:mm:ss+hh:mm."""
    tz = datetime.timezone(datetime.timedelta(hours=offset_hours))
    return datetime.datetime.fromtimestamp(t, tz).isoformat()


def main():
    if os.path.isdir(WORKDIR):
        shutil.rmtree(WORKDIR)
    os.makedirs(WORKDIR)
    site = Site()
    httpd, port = e2e_check.serve(Handler, site)
    site.host = "127.0.0.1:%d" % port
    base = "http://" + site.host
    d = WORKDIR
    try:
        r = crawl(port, d, base + "/")
        check(r.returncode == 0, "run 1: exit 0 (%d: %s)"
              % (r.returncode, r.stderr[-500:]))
        log1 = site.requests()
        check(sorted(p for p, _, _ in log1) ==
              sorted(PAGES + ["/sitemap.xml"]),
              "run 1: the sitemap and each page requested once (%s)" % log1)

        # /a changes on the server, and its <lastmod> says so; /c's is a
        # day ahead, /d's has no time zone designator.
        time.sleep(1.1)
        now = int(time.time())
        with site.lock:
            site.a_version = 2
            site.lastmod["/a"] = w3c(now, 1)
            site.lastmod["/c"] = w3c(now + 86400, 0)
            site.lastmod["/d"] = w3c(now, 0)[:19]
        check(site.lastmod["/a"].endswith("+01:00") and
              "+" not in site.lastmod["/d"],
              "the new lastmods: %s (/a), %s (/c), %s (/d)"
              % (site.lastmod["/a"], site.lastmod["/c"], site.lastmod["/d"]))
        start, n_out = len(site.requests()), out_len(d)
        r = crawl(port, d, "--revisit")
        check(r.returncode == 0, "run 2: exit 0 (%d: %s)"
              % (r.returncode, r.stderr[-500:]))
        log2 = site.requests(start)
        check(sorted(p for p, _, _ in log2) == ["/a", "/sitemap.xml"],
              "run 2: the sitemap read again and /a, its lastmod later than "
              "its fetch, requested; /b (older), /c (future), /d "
              "(malformed), /e (none) and / not (%s)" % log2)
        check([(i, s) for p, i, s in log2 if p == "/a"] == [('"a1"', 200)],
              "run 2: /a's request carries run 1's ETag, answered 200 (%s)"
              % log2)
        check(out_urls(d, n_out) == [base + "/a"],
              "run 2: --out has /a only (%s)" % out_urls(d, n_out))
        s = stats(d)
        check(s["counters"]["crawler"].get("lastmod_due") == 1 and
              s.get("revisit") == {"known": 6, "due": 0},
              "run 2: lastmod_due 1, no page due by its window (%s, %s)"
              % (s["counters"]["crawler"].get("lastmod_due"),
                 s.get("revisit")))

        start, n_out = len(site.requests()), out_len(d)
        r = crawl(port, d, "--revisit", quiet=False)
        log3 = site.requests(start)
        check(r.returncode == 0 and [p for p, _, _ in log3] ==
              ["/sitemap.xml"],
              "run 3: nothing changed: the sitemap again, no page (/a's "
              "fetch in run 2 is later than its lastmod) (%s)" % log3)
        check(out_len(d) == n_out and
              stats(d)["counters"]["crawler"].get("lastmod_due") == 1,
              "run 3: --out unchanged, lastmod_due still 1 (a state's "
              "counters are over all its runs)")
        check("0 due of 7 known pages (queued again at the start of this "
              "run), 1 sitemaps read again; 0 pages due by a sitemap's newer "
              "lastmod in this run" in r.stdout,
              "run 3: the report's revisit line says this run's (%s)"
              % [x for x in r.stdout.splitlines() if "revisit" in x])

        # A page queued by the revisit is not queued again by a newer
        # <lastmod> read in the same run.
        w = os.path.join(d, "window")
        os.makedirs(w)
        with site.lock:
            site.lastmod["/a"] = "2020-05-01T10:00:00Z"
        start = len(site.requests())
        r = crawl(port, w, base + "/", window="1s")
        check(r.returncode == 0 and len(site.requests(start)) == 7,
              "window: run 1 fetched the sitemap and the six pages (%d: %s)"
              % (r.returncode, site.requests(start)))
        time.sleep(1.5)
        with site.lock:
            site.a_version = 3
            site.lastmod["/a"] = w3c(int(time.time()), 0)
        start = len(site.requests())
        r = crawl(port, w, "--revisit", window="1s")
        logw = site.requests(start)
        check(r.returncode == 0 and
              sorted(p for p, _, _ in logw) == sorted(PAGES + ["/sitemap.xml"])
              and stats(w).get("revisit") == {"known": 6, "due": 6} and
              stats(w)["counters"]["crawler"].get("lastmod_due") == 0,
              "window: --revisit past the window: each page once, /a not "
              "twice though listed as changed (%s; %s; %s)"
              % (logw, stats(w).get("revisit"), r.stderr[-300:]))
    finally:
        httpd.shutdown()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
