#!/usr/bin/env python3
"""End-to-end (issue 24 section 2): near-duplicates found during the
crawl. A page's visible text gets a simhash while the link extractor reads
it; --out names the first page within --near-k bits (near_duplicate_of,
near_duplicate_distance); --near-duplicates skip-links leaves a copy's
links unadmitted, counted; the index survives kill -9 in the crawl state.

    python3 tests/e2e_nearcrawl.py BUILD_EXAMPLES_DIR WORKDIR

A tiny site, served by this script on a free port of 127.0.0.1, with its
access log in memory. Its root links, in this order, to:
    /orig            an article of 800 words (the original)
    /edit            the same with one word changed
    /dup             /orig's bytes exactly: duplicate_of, not also near
    /other           an unrelated article
    /short           a page of five words (too short to fingerprint)
    /s/SID123/orig   /orig's text with a session ID in its links, which
                     lead to /s/SID123/more1 and /s/SID123/more2
The crawls run with --concurrency 1 --per-host 1 (link order), no
robots.txt or sitemaps.

The parts:
  kill9      --state DIR: the server holds /s/SID123/orig until the crawl
             is killed with SIGKILL (/orig was committed before, its
             fingerprint row with it); the same command resumes (exit 0):
             /orig was requested once, and --out has near_duplicate_of
             /orig on /edit (distance 1..3) and /s/SID123/orig (distance
             0), duplicate_of /orig on /dup, nothing on /other, /short or
             /; the copy's links were followed; --stats-json counts
             near_duplicates 2, fingerprints 2 (/orig, /other), too_short
             4 (/, /short and the copy's two pages of two words).
  skip       --near-duplicates skip-links: the copy's two links are not
             requested, its --out record says links_skipped 2, and
             near_links_skipped counts 4 (/edit's and /dup's link too: an
             exact copy's links are a copy's).
  off        --no-near-dedup: no near_duplicate_of, near_duplicates 0.
  recrawl    --state with --recrawl-after 1s and skip-links, then the
             same command with --revisit: no page fetched again is reported
             a near-duplicate of its own URL (/orig has a new comment, so
             its payload differs and its text does not), and the root
             page, unchanged
             (its payload the first fetch's), has its links admitted.
  hosts      --scope any from /hosts/, which links to /orig, /edit,
             /other, /s/SID123/orig and, last, /hosts/more; that links to
             three copies on another host, localhost (the same server):
             /m/orig and /m/edit (/orig's and /edit's text, other links)
             and /m/other (/other's). --stats-json's near_duplicates says
             this run's 5 near-duplicate pages on 2 hosts, the largest
             clusters (/orig 4 copies, /other 1), and by host: localhost
             first with 3 pages (/orig 2, /other 1), then 127.0.0.1 with 2
             (/orig 2); the report lists the same.
  site       the sample site's content duplicates (examples/site): within
             each group at most 3 bits apart, groups more than 3 apart
             (neardup --fingerprints on the generated files), so that
             check_crawl.py's D1 and D2 hold for any crawl order and port.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, counter  # noqa: E402
import e2e_check  # noqa: E402

BIN, WORKDIR = sys.argv[1], sys.argv[2]
CRAWL = os.path.join(BIN, "crawl")
LINKS = ["/orig", "/edit", "/dup", "/other", "/short", "/s/SID123/orig"]

rng = random.Random(24)
VOCAB = ["w%03d" % i for i in range(400)]
WORDS = [rng.choice(VOCAB) for _ in range(800)]
OTHER = [rng.choice(VOCAB) for _ in range(800)]
EDITED = list(WORDS)
EDITED[500] = "changed"  # 2 bits from /orig (0 is possible for an edit)


def page(words, links=()):
    return ("<!doctype html><html><head><title>t</title>"
            "<script>var x = 'not text';</script></head><body><p>%s</p>%s"
            "</body></html>\n" % (" ".join(words), "".join(
                '<a href="%s"></a>' % h for h in links))).encode()


BODIES = {
    "/orig": page(WORDS, ["/orig"]),
    "/edit": page(EDITED, ["/orig"]),
    "/other": page(OTHER),
    "/short": page(["five", "words", "are", "too", "short"]),
    "/s/SID123/orig": page(WORDS, ["/s/SID123/more1", "/s/SID123/more2"]),
    "/s/SID123/more1": page(["more", "one"]),
    "/s/SID123/more2": page(["more", "two"]),
}
BODIES["/dup"] = BODIES["/orig"]
# The hosts part: copies on localhost whose text is /orig's, /edit's and
# /other's (their links differ: not identical payloads).
BODIES["/m/orig"] = page(WORDS, ["/m/other"])
BODIES["/m/edit"] = page(EDITED, ["/m/orig"])
BODIES["/m/other"] = page(OTHER, ["/m/edit"])
HOSTS_LINKS = ["/orig", "/edit", "/other", "/s/SID123/orig", "/hosts/more"]

class Site:
    def __init__(self):
        self.log = []
        self.lock = threading.Lock()
        self.hold = threading.Event()
        self.release = threading.Event()
        self.arrived = threading.Event()
        self.comment = False  # /orig gains a comment (bytes, not text)

    def requests(self, path):
        with self.lock:
            return self.log.count(path)

    def clear(self):
        with self.lock:
            self.log = []


class Handler(e2e_check.SiteHandler):
    def do_GET(self):
        s = self.site
        with s.lock:
            s.log.append(self.path)
        if self.path == "/s/SID123/orig" and s.hold.is_set():
            s.arrived.set()
            s.release.wait(30)  # the crawl is killed meanwhile
            self.close_connection = True
            return
        if self.path in ("/", "/hosts/", "/hosts/more"):
            links = {"/": LINKS, "/hosts/": HOSTS_LINKS,
                     "/hosts/more": ["http://localhost:%d%s" % (
                         self.server.server_address[1], p)
                         for p in ("/m/orig", "/m/edit", "/m/other")]}
            body = ("<html><body>%s</body></html>\n" % "".join(
                '<a href="%s">%s</a>' % (p, p)
                for p in links[self.path])).encode()
        else:
            body = BODIES.get(self.path)
        if self.path == "/orig" and s.comment:
            body = body.replace(b"</body>", b"<!-- again --></body>")
        self.send_response(200 if body else 404)
        body = body or b"<html><body>no</body></html>"
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


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


def near_of(out):
    return {u: (r["near_duplicate_of"], r["near_duplicate_distance"])
            for u, r in out.items() if "near_duplicate_of" in r}


def kill9(port, site):
    d = os.path.join(WORKDIR, "kill9")
    os.makedirs(d)
    cmd = crawl_cmd(port, d, "--state", os.path.join(d, "state"))
    site.hold.set()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    arrived = site.arrived.wait(20)
    p.send_signal(signal.SIGKILL)
    p.wait()
    site.hold.clear()
    site.release.set()
    check(arrived and site.requests("/orig") == 1,
          "kill9: the first run was killed while the copy was in flight, "
          "after /orig")
    r = subprocess.run(cmd, stderr=subprocess.PIPE, timeout=60)
    check(r.returncode == 0, "kill9: the resumed crawl exits 0 (%d: %s)"
          % (r.returncode, r.stderr.decode(errors="replace")[-500:]))
    check(site.requests("/orig") == 1,
          "kill9: /orig requested once over both runs")
    base = "http://127.0.0.1:%d" % port
    out = read_out(d)
    near = near_of(out)
    check(set(near) == {base + "/edit", base + "/s/SID123/orig"} and
          near[base + "/edit"][0] == base + "/orig" and
          1 <= near[base + "/edit"][1] <= 3 and
          near[base + "/s/SID123/orig"] == (base + "/orig", 0),
          "kill9: near_duplicate_of /orig on /edit (distance 1..3) and on "
          "the session copy (0, found through the state), on no other "
          "page (%s)" % near)
    check(out.get(base + "/dup", {}).get("duplicate_of") == base + "/orig"
          and "near_duplicate_of" not in out.get(base + "/dup", {}),
          "kill9: /dup is duplicate_of /orig and not also near")
    check(site.requests("/s/SID123/more1") == 1,
          "kill9: follow: the copy's links were followed")
    got = {n: counter(d, n) for n in ("near_duplicates", "fingerprints",
                                      "too_short", "near_links_skipped")}
    check(got == {"near_duplicates": 2, "fingerprints": 2, "too_short": 4,
                  "near_links_skipped": 0},
          "kill9: --stats-json near_duplicates 2, fingerprints 2, "
          "too_short 4, near_links_skipped 0 (%s)" % got)


def skip(port, site):
    d = os.path.join(WORKDIR, "skip")
    os.makedirs(d)
    site.clear()
    r = subprocess.run(crawl_cmd(port, d, "--near-duplicates",
                                 "skip-links"),
                       stderr=subprocess.PIPE, timeout=60)
    check(r.returncode == 0, "skip: exit 0 (%d)" % r.returncode)
    base = "http://127.0.0.1:%d" % port
    out = read_out(d)
    check(site.requests("/s/SID123/more1") == 0 and
          site.requests("/s/SID123/more2") == 0 and
          out.get(base + "/s/SID123/orig", {}).get("links_skipped") == 2,
          "skip: the copy's two links were not requested, its record says "
          "links_skipped 2")
    check(counter(d, "near_links_skipped") == 4 and
          site.requests("/orig") == 1,
          "skip: near_links_skipped 4 (/edit's, /dup's and the copy's "
          "two are not admitted; /orig is admitted anyway through /), "
          "got %s" % counter(d, "near_links_skipped"))


def off(port, site):
    d = os.path.join(WORKDIR, "off")
    os.makedirs(d)
    r = subprocess.run(crawl_cmd(port, d, "--no-near-dedup"),
                       stderr=subprocess.PIPE, timeout=60)
    out = read_out(d)
    check(r.returncode == 0 and not near_of(out) and
          counter(d, "near_duplicates") == 0,
          "off: --no-near-dedup: no near_duplicate_of, near_duplicates 0")


def recrawl(port, site):
    """A recrawl of the same state (--recrawl-after, --revisit) with
    skip-links: a page fetched again is no copy of its own first fetch."""
    d = os.path.join(WORKDIR, "recrawl")
    os.makedirs(d)
    cmd = crawl_cmd(port, d, "--state", os.path.join(d, "state"),
                    "--recrawl-after", "1s", "--near-duplicates",
                    "skip-links")
    r1 = subprocess.run(cmd, stderr=subprocess.PIPE, timeout=60)
    time.sleep(2.5)  # past the window and its slack (1/3 s)
    site.clear()
    site.comment = True  # /orig's bytes change, its text does not
    r2 = subprocess.run(cmd + ["--revisit"], stderr=subprocess.PIPE,
                        timeout=60)
    site.comment = False
    base = "http://127.0.0.1:%d" % port
    with open(os.path.join(d, "out.jsonl")) as f:
        recs = [json.loads(x) for x in f if x.strip()]
    again = [r for r in recs[len(LINKS) + 1:]]
    self_near = [r["url"] for r in recs
                 if r.get("near_duplicate_of") == r["url"]]
    check(r1.returncode == 0 and r2.returncode == 0 and
          site.requests("/orig") == 1 and len(again) > 1 and not self_near,
          "recrawl: the pages fetched again (%d records; /orig with a new "
          "comment: other bytes, the same text) name no earlier fetch of "
          "their own URL as near_duplicate_of (%s)"
          % (len(again), self_near))
    skipped = [r["url"] for r in again if r.get("links_skipped") and
               r.get("duplicate_of", r.get("near_duplicate_of")) is None]
    root = [r for r in again if r["url"] == base + "/"]
    check(not skipped and root and not root[0].get("links_skipped"),
          "recrawl: skip-links keeps the links of a page unchanged since "
          "its first fetch (/ fetched again, its links admitted; %s)"
          % skipped)


def hosts(port, site):
    """Near-duplicates by host: copies on a second host (localhost)."""
    d = os.path.join(WORKDIR, "hosts")
    os.makedirs(d)
    cmd = crawl_cmd(port, d, "--scope", "any")
    cmd[-1] = "http://127.0.0.1:%d/hosts/" % port
    r = subprocess.run(cmd, stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                       timeout=60)
    a, b = "http://127.0.0.1:%d" % port, "http://localhost:%d" % port
    near = near_of(read_out(d))
    check(r.returncode == 0 and {u: o for u, (o, _) in near.items()} == {
        a + "/edit": a + "/orig", a + "/s/SID123/orig": a + "/orig",
        b + "/m/orig": a + "/orig", b + "/m/edit": a + "/orig",
        b + "/m/other": a + "/other"},
          "hosts: exit 0, the copies on both hosts name the originals on "
          "127.0.0.1 (%d; %s)" % (r.returncode, near))
    with open(os.path.join(d, "stats.json")) as f:
        nd = json.load(f).get("near_duplicates")
    want = {"pages": 5, "hosts": 2,
            "largest": [{"url": a + "/orig", "copies": 4},
                        {"url": a + "/other", "copies": 1}],
            "by_host": [{"host": b, "pages": 3,
                         "clusters": [{"url": a + "/orig", "copies": 2},
                                      {"url": a + "/other", "copies": 1}]},
                        {"host": a, "pages": 2,
                         "clusters": [{"url": a + "/orig", "copies": 2}]}]}
    check(nd == want, "hosts: --stats-json near_duplicates: 5 pages on 2 "
          "hosts, localhost's 3 first (%s)" % nd)
    # The report (stderr; --quiet leaves it out: run it again without).
    cmd = [x for x in crawl_cmd(port, os.path.join(d, "again"), "--scope",
                                "any") if x != "--quiet"]
    os.makedirs(os.path.join(d, "again"))
    cmd[-1] = "http://127.0.0.1:%d/hosts/" % port
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    rep = r.stdout + r.stderr
    want_lines = ["by host (this run's near-duplicate pages, 2 hosts):",
                  "3 pages on " + b, "2 copies of " + a + "/orig",
                  "1 copies of " + a + "/other", "2 pages on " + a]
    at = 0
    for x in want_lines:  # each after the one before
        at = rep.find(x, at) if at >= 0 else -1
    check(at >= 0,
          "hosts: the report lists the hosts in order with their largest "
          "clusters (%s)" % rep[rep.find("near-duplicates  "):][:900])


def site_groups():
    """The sample site's content duplicates (examples/site/gensite.py,
    content_duplicates), fingerprinted by neardup from the generated files:
    every two pages of a group within 3 bits (whichever a crawl fetches
    first), every two pages of different groups farther apart. The
    footers of these pages leave the URL (and so the port) out, so the
    distances are the text's alone."""
    site = os.path.join(WORKDIR, "site")
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                       "examples", "site", "gensite.py")
    subprocess.run([sys.executable, gen, site, "--pages", "200"],
                   check=True, capture_output=True, timeout=60)
    with open(os.path.join(site, "manifest.json")) as f:
        groups = [g for g in json.load(f)["content_duplicates"]
                  if g["kind"] != "index_html" and not g.get("may_miss")]
    root = os.path.join(site, "hosts", "www.bloomcrawl.test")
    files = [os.path.join(root, u.split("}", 1)[1].lstrip("/"))
             for g in groups for u in g["urls"]]
    r = subprocess.run([os.path.join(BIN, "neardup"), "--fingerprints",
                        *files], capture_output=True, text=True, timeout=60)
    fp = {}
    for line in r.stdout.splitlines():
        f = line.split("\t")
        if f[0] != "-":
            fp[f[2]] = int(f[0], 16)
    check(r.returncode == 0 and len(fp) == len(files),
          "site: neardup fingerprints the %d pages of %d groups"
          % (len(files), len(groups)))
    inside, across, k = 0, 64, 0
    where = {}
    for i, g in enumerate(groups):
        for _ in g["urls"]:
            where[files[k]] = i
            k += 1
    for a in files:
        for b in files:
            if a < b and a in fp and b in fp:
                d = bin(fp[a] ^ fp[b]).count("1")
                if where[a] == where[b]:
                    inside = max(inside, d)
                else:
                    across = min(across, d)
    check(inside <= 3 and across > 3,
          "site: within a group at most %d bits apart (<= 3), across groups "
          "at least %d (> 3)" % (inside, across))


def main():
    if os.path.isdir(WORKDIR):
        shutil.rmtree(WORKDIR)
    os.makedirs(WORKDIR)
    site = Site()
    httpd, port = e2e_check.serve(Handler, site)
    t0 = time.monotonic()
    try:
        for name, fn in (("kill9", kill9), ("skip", skip), ("off", off),
                         ("recrawl", recrawl), ("hosts", hosts),
                         ("site", None)):
            try:
                fn(port, site) if fn else site_groups()
            except Exception as e:
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
