#!/usr/bin/env python3
"""End-to-end (issue 24): identical payloads under different URLs become
WARC revisit records that an independent reader resolves to their
originals, and --out names the first URL; the index of payloads survives
kill -9 in the crawl state.

    python3 tests/e2e_revisit.py BUILD_EXAMPLES_DIR WORKDIR [WARCIO_DIR]

A tiny site, served by this script on a free port of 127.0.0.1 (one
thread per connection, HTTP/1.1), with its access log in memory. Its
root links, in this order, to:
    /a        an HTML page X (Content-Length)
    /b        X again: a duplicate of /a
    /c        X again, sent chunked: the same payload in other framing
    /d        another page
    /empty1, /empty2      200 with an empty body (never duplicates)
    /missing1, /missing2  404 with the same body (never duplicates)
    /r1, /r2  301 to /d with the same body (never duplicates: a redirect's
              meaning is its Location)
The crawls run with --concurrency 1 --per-host 1 (so the pages are
fetched in link order: /a is the first with X), --no-robots
--no-sitemaps.

The parts:
  kill9     crawl --warc X.warc.gz --state DIR --out --stats-json; the
            server holds /b's response until the crawl is killed with
            SIGKILL (the crawler commits the pages completed before it
            starts a transfer: /a's payload row is in the state by then);
            the same command resumes and ends (exit 0). Then: /a was
            requested once (so its record and its index row came from the
            first run, and the second run's revisits were found through
            the state); --out has duplicate_of "/a" on /b and /c and on no
            other record; warcio.js (npm, tests/warc_read.mjs) reads the
            WARC: one response record for each page but /b and /c, which
            are revisit records (profile identical-payload-digest) whose
            block is the response head alone (/c's names its chunked
            coding), whose WARC-Refers-To is /a's response record, with
            WARC-Refers-To-Target-URI and -Date its URI and date, and
            whose WARC-Payload-Digest equals the original's, which
            warc_read.mjs recomputed from /a's bytes; every block digest
            checks out; --stats-json counts duplicates 2 and
            duplicate_bytes 2 x len(X).
  nowarc    the same site without --warc: --out still names /a on /b
            and /c (the crawler hashes the payload itself).
  off       --warc with --no-payload-dedup: no revisit record, no
            duplicate_of, duplicates 0.
Without node and npm, or without the registry for warcio's first install,
the test is skipped (exit 77). WARCIO_DIR: a directory where warcio is
installed already (tests/e2e_warc.py's), used if it holds it.
"""
import base64
import hashlib
import json
import os
import shutil
import signal
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
PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
X = (b"<!doctype html><html><head><title>same</title></head><body>"
     b"<p>The same page under three URLs.</p></body></html>\n")
D = b"<!doctype html><html><body><p>Another page.</p></body></html>\n"
MISSING = b"<html><body>Not here.</body></html>\n"
MOVED = b"<html><body>Moved.</body></html>\n"
LINKS = ["/a", "/b", "/c", "/d", "/empty1", "/empty2", "/missing1",
         "/missing2", "/r1", "/r2"]

class Site:
    """The site's state: its access log, and the gate that holds /b."""

    def __init__(self):
        self.log = []
        self.lock = threading.Lock()
        self.hold_b = threading.Event()   # set: /b waits for release
        self.release = threading.Event()
        self.b_arrived = threading.Event()

    def requests(self, path):
        with self.lock:
            return self.log.count(path)


class Handler(e2e_check.SiteHandler):
    def send(self, status, body, headers=(), chunked=False):
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        for k, v in headers:
            self.send_header(k, v)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 40):
                part = body[i:i + 40]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def do_GET(self):
        s = self.site
        path = self.path
        with s.lock:
            s.log.append(path)
        if path == "/":
            self.send(200, b"<html><body>" + b"".join(
                b'<a href="%s">%s</a>' % (p.encode(), p.encode())
                for p in LINKS) + b"</body></html>\n")
        elif path in ("/a", "/b", "/c"):
            if path == "/b" and s.hold_b.is_set():
                s.b_arrived.set()
                s.release.wait(30)  # the crawl is killed meanwhile
                self.close_connection = True
                return
            self.send(200, X, chunked=path == "/c")
        elif path == "/d":
            self.send(200, D)
        elif path.startswith("/empty"):
            self.send(200, b"")
        elif path.startswith("/missing"):
            self.send(404, MISSING)
        elif path.startswith("/r"):
            self.send(301, MOVED, [("Location", "/d")])
        else:
            self.send(404, MISSING)


def crawl_cmd(port, d, *extra):
    return [CRAWL, "--quiet", "--delay", "0", "--concurrency", "1",
            "--per-host", "1", "--no-robots", "--no-sitemaps",
            "--timeout", "10000", "--scope", "host",
            "--out", os.path.join(d, "out.jsonl"),
            "--stats-json", os.path.join(d, "stats.json"), *extra,
            "http://127.0.0.1:%d/" % port]


def read_out(d):
    with open(os.path.join(d, "out.jsonl")) as f:
        return {json.loads(x)["url"]: json.loads(x) for x in f if x.strip()}


def check_dups(name, out, base):
    dups = {u: r["duplicate_of"] for u, r in out.items()
            if "duplicate_of" in r}
    want = {base + "/b": base + "/a", base + "/c": base + "/a"}
    check(dups == want and len(out) == len(LINKS) + 1,
          "%s: --out has duplicate_of %s/a on /b and /c only (%d records; "
          "got %s)" % (name, base, len(out), dups))


def kill9(reader, port, site):
    d = os.path.join(WORKDIR, "kill9")
    os.makedirs(d)
    warc = os.path.join(d, "site.warc.gz")
    cmd = crawl_cmd(port, d, "--warc", warc, "--state",
                    os.path.join(d, "state"))
    site.hold_b.set()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    arrived = site.b_arrived.wait(20)
    p.send_signal(signal.SIGKILL)
    p.wait()
    site.hold_b.clear()
    site.release.set()
    check(arrived and site.requests("/a") == 1,
          "kill9: the first run was killed while /b was in flight, after "
          "/a")
    r = subprocess.run(cmd, stderr=subprocess.PIPE, timeout=60)
    check(r.returncode == 0, "kill9: the resumed crawl exits 0 (%d: %s)"
          % (r.returncode, r.stderr.decode(errors="replace")[-500:]))
    check(site.requests("/a") == 1 and site.requests("/b") == 2,
          "kill9: /a requested once over both runs, /b again (%d, %d): "
          "the second run found /a's payload through the state"
          % (site.requests("/a"), site.requests("/b")))
    base = "http://127.0.0.1:%d" % port
    check_dups("kill9", read_out(d), base)

    recs = warcio_read(reader, [warc])
    check(recs and all("error" not in x and x.get("block_digest_ok")
                       for x in recs),
          "kill9: warcio.js reads %d records, every block digest right"
          % len(recs))
    by_id = {x["warc"].get("warc-record-id"): x for x in recs}
    typed = {}
    for x in recs:
        w = x["warc"]
        if w.get("warc-type") in ("response", "revisit"):
            typed.setdefault(w.get("warc-target-uri"), []).append(x)
    pages = [base + "/"] + [base + p for p in LINKS]
    check(sorted(typed) == sorted(pages) and
          all(len(v) == 1 for v in typed.values()),
          "kill9: one response or revisit record per page (%s)"
          % {k: len(v) for k, v in typed.items()})
    revisits = sorted(u for u, v in typed.items()
                      if v[0]["warc"].get("warc-type") == "revisit")
    check(revisits == [base + "/b", base + "/c"],
          "kill9: revisit records for /b and /c only (%s)" % revisits)
    orig = typed.get(base + "/a", [{}])[0]
    ow = orig.get("warc", {})
    x_digest = "sha1:" + base64.b32encode(hashlib.sha1(X).digest()).decode()
    check(ow.get("warc-type") == "response" and orig.get("payload_digest_ok")
          and ow.get("warc-payload-digest") == x_digest,
          "kill9: /a's response record holds X, its payload digest right")
    for u in revisits:
        v = typed[u][0]
        w = v["warc"]
        o = by_id.get(w.get("warc-refers-to"), {})
        head = base64.b64decode(v.get("payload_b64", ""))
        check(w.get("warc-profile") == PROFILE and o is orig and
              w.get("warc-payload-digest") ==
              o["warc"].get("warc-payload-digest") and
              w.get("warc-refers-to-target-uri") == ow.get("warc-target-uri")
              and w.get("warc-refers-to-date") == ow.get("warc-date") and
              head == b"" and v.get("http") and
              v.get("content_length") == v.get("block_length"),
              "kill9: %s's revisit resolves by WARC-Refers-To to /a's "
              "response, the same payload digest, URI and date; its block "
              "the HTTP head alone" % u)
    c = typed.get(base + "/c", [{}])[0]
    check("chunked" in json.dumps(c.get("http", {})).lower(),
          "kill9: /c's revisit keeps its head's chunked coding")
    check(counter(d, "duplicates") == 2 and
          counter(d, "duplicate_bytes") == 2 * len(X),
          "kill9: --stats-json counts duplicates 2 (%s), duplicate_bytes "
          "%d (%s)" % (counter(d, "duplicates"), 2 * len(X),
                       counter(d, "duplicate_bytes")))


def nowarc(port):
    d = os.path.join(WORKDIR, "nowarc")
    os.makedirs(d)
    r = subprocess.run(crawl_cmd(port, d), stderr=subprocess.PIPE,
                       timeout=60)
    check(r.returncode == 0, "nowarc: exit 0 (%d)" % r.returncode)
    check_dups("nowarc", read_out(d), "http://127.0.0.1:%d" % port)


def off(reader, port):
    d = os.path.join(WORKDIR, "off")
    os.makedirs(d)
    warc = os.path.join(d, "site.warc.gz")
    r = subprocess.run(crawl_cmd(port, d, "--warc", warc,
                                 "--no-payload-dedup"),
                       stderr=subprocess.PIPE, timeout=60)
    out = read_out(d)
    types = [x["warc"].get("warc-type") for x in warcio_read(reader, [warc])]
    check(r.returncode == 0 and not any("duplicate_of" in x
                                        for x in out.values()) and
          "revisit" not in types and
          types.count("response") == len(LINKS) + 1 and
          counter(d, "duplicates") == 0,
          "off: --no-payload-dedup: every page a response record, no "
          "duplicate_of, duplicates 0")


def main():
    if os.path.isdir(WORKDIR):
        shutil.rmtree(WORKDIR)
    os.makedirs(WORKDIR)
    reader = setup_warcio(os.path.join(WORKDIR, "warcio"), WARCIO_DIR)
    site = Site()
    httpd, port = e2e_check.serve(Handler, site)
    t0 = time.monotonic()
    try:
        for name, fn, args in (("kill9", kill9, (reader, port, site)),
                               ("nowarc", nowarc, (port,)),
                               ("off", off, (reader, port))):
            try:
                fn(*args)
            except Exception as e:  # a part's failure, reported
                import traceback
                traceback.print_exc()
                check(False, "%s: the test raised %r" % (name, e))
    finally:
        site.release.set()
        httpd.shutdown()
    print("%.1f s; %d passed, %d failed" % (time.monotonic() - t0,
                                             e2e_check.passes,
                                             e2e_check.failures))
    return 1 if e2e_check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
