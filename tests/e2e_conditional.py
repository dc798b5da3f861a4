#!/usr/bin/env python3
"""End-to-end (issue 24): recrawls send conditional requests, and a 304 is
archived as a WARC revisit record of profile server-not-modified that
names the last fetch's response record.

    python3 tests/e2e_conditional.py BUILD_EXAMPLES_DIR WORKDIR [WARCIO_DIR]

A tiny site, served by this script on a free port of 127.0.0.1 (one
thread per connection, HTTP/1.1), which logs every request's
If-None-Match and If-Modified-Since. It answers 304 to a request whose
If-None-Match names the page's ETag, or, without If-None-Match, whose
If-Modified-Since is the page's Last-Modified or later (RFC 9110 13.1.3,
13.2.2). Its pages:
    /        links to the others; ETag "root"
    /a       ETag "a" and Last-Modified
    /b       ETag "b" only
    /c       Last-Modified only
    /d       ETag "d1"; changed on the server between runs 1 and 2 (new
             body, ETag "d2")
    /e       no validators: fetched whole every time
    /f       ETag "f", but the server ignores validators: always 200
Every run: crawl --state DIR --recrawl-after 1s --warc X.warc.gz --out
--stats-json, --concurrency 1, --no-robots --no-sitemaps; the runs after
the first add --revisit, 1.5 s after the run before (every page is then
past its window and its slack: e2e_recrawl.py).
  run 1   no request carries a validator; every page a response record.
  run 2   /, /a, /b, /c and /d carry their validators (/a both, /b
          If-None-Match alone, /c If-Modified-Since alone), /e none; /,
          /a, /b and /c are answered 304: each is a revisit record of
          profile server-not-modified, with no payload digest, whose
          WARC-Refers-To is run 1's response record of that URL (and
          WARC-Refers-To-Target-URI and -Date its URI and date), read by
          warcio.js (npm, tests/warc_read.mjs; every block digest right);
          --out says status 304 and not_modified on them only; /d (changed)
          and /f (validators ignored) are fetched whole: /d a response
          record, /e and /f (their payloads unchanged) revisit records of
          profile identical-payload-digest naming run 1's records;
          --out says unchanged on /e and /f, not duplicate_of their own
          URL; the root's links were not re-extracted (its 304 has no
          body) and each page was still fetched once, by --revisit;
          --stats-json counts conditional_requests 6, not_modified 4,
          unchanged 2 and duplicates 0.
  run 3   /d's request carries run 2's ETag "d2" and is a 304 whose
          revisit names run 2's response record of /d.
  run 4   --no-conditional: no request carries a validator, no 304.
  memory  without --state, one run of --recrawl-after 1s from /mem/,
          which links to /a and /mem/late; /mem/late answers after 1.6 s
          and links to /a again, now past its window: /a is fetched a
          second time in the run, with the ETag and Last-Modified of its
          first fetch kept in memory, and answered 304.
Without node and npm, or without the registry for warcio's first install,
the test is skipped (exit 77). WARCIO_DIR: a directory where warcio is
installed already (tests/e2e_warc.py's), used if it holds it.
"""
import email.utils
import glob
import json
import os
import shutil
import subprocess
import sys
import threading
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, counter, setup_warcio, warcio_read  # noqa: E402
import e2e_check  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BIN, WORKDIR = sys.argv[1], sys.argv[2]
WARCIO_DIR = sys.argv[3] if len(sys.argv) > 3 else None
CRAWL = os.path.join(BIN, "crawl")
PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL = ("http://netpreserve.org/warc/1.1/revisit/"
             "identical-payload-digest")
LM = "Mon, 07 Nov 2022 08:49:37 GMT"
PAGES = ["/", "/a", "/b", "/c", "/d", "/e", "/f"]

class Site:
    def __init__(self):
        self.lock = threading.Lock()
        self.log = []  # (path, If-None-Match, If-Modified-Since, status)
        self.d_version = 1

    def page(self, path):
        """(ETag or None, Last-Modified or None, honours validators, body)"""
        if path == "/":
            return ('"root"', None, True, b"<html><body>" + b"".join(
                b'<a href="%s">%s</a>' % (p.encode(), p.encode())
                for p in PAGES[1:]) + b"</body></html>\n")
        body = b"<html><body><p>page %s</p></body></html>\n" % path.encode()
        if path == "/a":
            return ('"a"', LM, True, body)
        if path == "/b":
            return ('"b"', None, True, body)
        if path == "/c":
            return (None, LM, True, body)
        if path == "/d":
            v = self.d_version
            return ('"d%d"' % v, None, True, body + b"v%d\n" % v)
        if path == "/e":
            return (None, None, True, body)
        if path == "/f":
            return ('"f"', None, False, body)
        if path == "/mem/":
            return (None, None, True,
                    b'<a href="/a">a</a><a href="/mem/late">late</a>')
        if path == "/mem/late":
            return (None, None, True, b'<a href="/a">a again</a>')
        return None

    def requests(self, start=0):
        with self.lock:
            return list(self.log[start:])


def not_modified(etag, lm, inm, ims):
    """RFC 9110 13.2.2: If-None-Match first; If-Modified-Since without it."""
    if inm is not None:
        return etag is not None and etag in [x.strip() for x in
                                             inm.split(",")]
    if ims is not None and lm is not None:
        a = email.utils.parsedate_to_datetime(ims)
        b = email.utils.parsedate_to_datetime(lm)
        return b <= a
    return False


class Handler(e2e_check.SiteHandler):
    def do_GET(self):
        s = self.site
        inm = self.headers.get("If-None-Match")
        ims = self.headers.get("If-Modified-Since")
        if self.path == "/mem/late":
            time.sleep(1.6)  # /a's window (1 s and its slack) passes
        with s.lock:
            p = s.page(self.path)
        if p is None:
            status, body, etag, lm = 404, b"no\n", None, None
        else:
            etag, lm, honours, body = p
            status = 304 if honours and not_modified(etag, lm, inm,
                                                     ims) else 200
        with s.lock:
            s.log.append((self.path, inm, ims, status))
        self.send_response(status)
        if etag:
            self.send_header("ETag", etag)
        if lm:
            self.send_header("Last-Modified", lm)
        if status == 304:
            self.end_headers()
            return
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def crawl(port, d, *extra):
    cmd = [CRAWL, "--quiet", "--delay", "0", "--concurrency", "1",
           "--per-host", "1", "--no-robots", "--no-sitemaps",
           "--timeout", "10000", "--scope", "host",
           "--state", os.path.join(d, "state"), "--recrawl-after", "1s",
           "--warc", os.path.join(d, "site.warc.gz"),
           "--out", os.path.join(d, "out.jsonl"),
           "--stats-json", os.path.join(d, "stats.json"), *extra,
           "http://127.0.0.1:%d/" % port]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if "Sanitizer" in r.stderr or "runtime error:" in r.stderr:
        check(False, "sanitizer report: " + r.stderr[-600:])
    return r


def read_out(d):
    with open(os.path.join(d, "out.jsonl")) as f:
        return [json.loads(x) for x in f if x.strip()]


def records(reader, d):
    """warcio.js's records of every WARC file of the crawl, in order."""
    files = sorted(glob.glob(os.path.join(d, "site*.warc.gz")))
    recs = warcio_read(reader, files)
    check(recs and all("error" not in x and x.get("block_digest_ok")
                       for x in recs),
          "warcio.js reads %d records of %d files, every block digest "
          "right" % (len(recs), len(files)))
    return recs


def pages_of(recs):
    """{URL: [its response or revisit records, in order]}"""
    out = {}
    for x in recs:
        w = x["warc"]
        if w.get("warc-type") in ("response", "revisit"):
            out.setdefault(w.get("warc-target-uri"), []).append(x)
    return out


def main():
    if os.path.isdir(WORKDIR):
        shutil.rmtree(WORKDIR)
    os.makedirs(WORKDIR)
    reader = setup_warcio(os.path.join(WORKDIR, "warcio"), WARCIO_DIR)
    site = Site()
    httpd, port = e2e_check.serve(Handler, site)
    base = "http://127.0.0.1:%d" % port
    d = WORKDIR
    t0 = time.monotonic()
    try:
        # Run 1: every page fetched whole, no validator sent.
        r = crawl(port, d)
        check(r.returncode == 0, "run 1: exit 0 (%d: %s)"
              % (r.returncode, r.stderr[-500:]))
        log1 = site.requests()
        check(sorted(p for p, _, _, _ in log1) == sorted(PAGES) and
              all(i is None and m is None and s == 200
                  for _, i, m, s in log1),
              "run 1: each page requested once, no validator sent (%s)"
              % log1)
        n_out1 = len(read_out(d))
        recs1 = pages_of(records(reader, d))
        first = {u: v[0]["warc"] for u, v in recs1.items()}
        check(sorted(first) == sorted(base + p for p in PAGES) and
              all(w.get("warc-type") == "response" for w in first.values()),
              "run 1: a response record for each page")

        # Run 2: /d changed on the server; --revisit past the window.
        with site.lock:
            site.d_version = 2
        time.sleep(1.5)
        start = len(site.requests())
        r = crawl(port, d, "--revisit")
        check(r.returncode == 0, "run 2: exit 0 (%d: %s)"
              % (r.returncode, r.stderr[-500:]))
        log2 = {p: (i, m, s) for p, i, m, s in site.requests(start)}
        check(len(site.requests(start)) == len(PAGES) and
              sorted(log2) == sorted(PAGES),
              "run 2: each page requested once (%s)" % site.requests(start))
        want = {"/": ('"root"', None, 304), "/a": ('"a"', LM, 304),
                "/b": ('"b"', None, 304), "/c": (None, LM, 304),
                "/d": ('"d1"', None, 200), "/e": (None, None, 200),
                "/f": ('"f"', None, 200)}
        for p, w in want.items():
            check(log2.get(p) == w,
                  "run 2: %s sent If-None-Match %s, If-Modified-Since %s, "
                  "answered %d (got %s)" % (p, w[0], w[1], w[2],
                                            log2.get(p)))
        out2 = {x["url"]: x for x in read_out(d)[n_out1:]}
        nm = sorted(u for u, x in out2.items() if x.get("not_modified"))
        check(nm == sorted(base + p for p in ("/", "/a", "/b", "/c")) and
              all(out2[u].get("status") == 304 and "error" not in out2[u]
                  for u in nm),
              "run 2: --out says status 304 and not_modified on /, /a, "
              "/b, /c only (%s)" % nm)
        check(all(out2.get(base + p, {}).get("status") == 200 and
                  not out2[base + p].get("not_modified")
                  for p in ("/d", "/e", "/f")),
              "run 2: /d, /e, /f fetched whole (200)")
        check(all(out2.get(base + p, {}).get("unchanged") is True and
                  "duplicate_of" not in out2[base + p]
                  for p in ("/e", "/f")) and
              not any(x.get("unchanged") or "duplicate_of" in x
                      for u, x in out2.items()
                      if u not in (base + "/e", base + "/f")),
              "run 2: --out says unchanged on /e and /f (their own last "
              "payload), and no page is a duplicate_of its own URL")
        check(counter(d, "unchanged") == 2 and counter(d, "duplicates") == 0,
              "run 2: --stats-json unchanged 2 (%s), duplicates 0 (%s)"
              % (counter(d, "unchanged"), counter(d, "duplicates")))
        check(out2.get(base + "/", {}).get("links") == 0,
              "run 2: the root's links were not re-extracted (links %s)"
              % out2.get(base + "/", {}).get("links"))
        check(counter(d, "conditional_requests") == 6 and
              counter(d, "not_modified") == 4,
              "run 2: --stats-json conditional_requests 6 (%s), "
              "not_modified 4 (%s)" % (counter(d, "conditional_requests"),
                                       counter(d, "not_modified")))
        recs = records(reader, d)
        by_id = {x["warc"].get("warc-record-id"): x for x in recs}
        second = {u: v[1] for u, v in pages_of(recs).items() if len(v) > 1}
        check(sorted(second) == sorted(base + p for p in PAGES),
              "run 2: a second record for each page")
        for p in PAGES:
            v = second.get(base + p)
            if not v:
                continue
            w = v["warc"]
            if p in ("/", "/a", "/b", "/c"):
                o = by_id.get(w.get("warc-refers-to"), {}).get("warc", {})
                check(w.get("warc-type") == "revisit" and
                      w.get("warc-profile") == PROFILE and
                      "warc-payload-digest" not in w and
                      w.get("warc-refers-to") ==
                      first[base + p].get("warc-record-id") and
                      w.get("warc-refers-to-target-uri") == base + p and
                      w.get("warc-refers-to-date") == o.get("warc-date") and
                      (v.get("http") or {}) and
                      "304" in json.dumps(v.get("http")),
                      "run 2: %s is a revisit of profile server-not-modified"
                      " (no payload digest) whose WARC-Refers-To is run 1's "
                      "response record, URI and date (%s)" % (p, w))
            elif p == "/d":
                check(w.get("warc-type") == "response",
                      "run 2: %s (changed) is a response record" % p)
            else:
                # Fetched whole with the payload of run 1: the identical
                # payload's revisit (IDENTICAL PAYLOADS).
                check(w.get("warc-type") == "revisit" and
                      w.get("warc-profile") == IDENTICAL and
                      w.get("warc-refers-to") ==
                      first[base + p].get("warc-record-id"),
                      "run 2: %s, its payload unchanged, is a revisit of "
                      "profile identical-payload-digest naming run 1's "
                      "record" % p)
        d2 = second.get(base + "/d", {}).get("warc", {})

        # Run 3: /d's new ETag is sent, and its 304 names run 2's record.
        time.sleep(1.5)
        start = len(site.requests())
        n_out2 = len(read_out(d))
        r = crawl(port, d, "--revisit")
        log3 = {p: (i, m, s) for p, i, m, s in site.requests(start)}
        check(r.returncode == 0 and log3.get("/d") == ('"d2"', None, 304),
              "run 3: /d sent run 2's ETag \"d2\", answered 304 (%s)"
              % (log3.get("/d"),))
        out3 = {x["url"]: x for x in read_out(d)[n_out2:]}
        check(out3.get(base + "/d", {}).get("not_modified") is True,
              "run 3: --out says not_modified on /d")
        third = pages_of(records(reader, d)).get(base + "/d", [])
        w = third[2]["warc"] if len(third) > 2 else {}
        check(w.get("warc-type") == "revisit" and
              w.get("warc-refers-to") == d2.get("warc-record-id") and
              d2.get("warc-type") == "response",
              "run 3: /d's revisit names run 2's response record")

        # Run 4: --no-conditional: pages fetched whole.
        time.sleep(1.5)
        start = len(site.requests())
        r = crawl(port, d, "--revisit", "--no-conditional")
        log4 = site.requests(start)
        check(r.returncode == 0 and len(log4) == len(PAGES) and
              all(i is None and m is None and s == 200
                  for _, i, m, s in log4),
              "run 4: --no-conditional: no validator sent, every page "
              "200 (%s)" % log4)
        # Memory: no state, /a recrawled within the run.
        m = os.path.join(WORKDIR, "memory")
        os.makedirs(m)
        start = len(site.requests())
        cmd = [CRAWL, "--quiet", "--delay", "0", "--concurrency", "1",
               "--per-host", "1", "--no-robots", "--no-sitemaps",
               "--timeout", "10000", "--scope", "host",
               "--recrawl-after", "1s", "--out", os.path.join(m, "out.jsonl"),
               "--stats-json", os.path.join(m, "stats.json"),
               base + "/mem/"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        log = [(p, i, mm, st) for p, i, mm, st in site.requests(start)
               if p == "/a"]
        check(r.returncode == 0 and
              log == [("/a", None, None, 200), ("/a", '"a"', LM, 304)],
              "memory: /a fetched twice in one run without a state, the "
              "second time with its first fetch's validators, 304 (%s)"
              % log)
        out = read_out(m)
        check([x.get("not_modified") for x in out
               if x["url"] == base + "/a"] == [None, True] and
              counter(m, "not_modified") == 1,
              "memory: --out says not_modified on /a's second record, "
              "not_modified 1")
    except Exception as e:  # reported as a failure
        import traceback
        traceback.print_exc()
        check(False, "the test raised %r" % e)
    finally:
        httpd.shutdown()
    print("%.1f s; %d passed, %d failed" % (time.monotonic() - t0,
                                             e2e_check.passes,
                                             e2e_check.failures))
    return 1 if e2e_check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
