#!/usr/bin/env python3
"""neardup end to end: HTML files made here, and a WARC that crawl --warc
writes of a small site served on 127.0.0.1 (docs/DESIGN.md 5, neardup).

    python3 tests/test_neardup.py BUILD_EXAMPLES_DIR

The pages (a seeded text of 1,500 words in paragraphs, with a script, a
style, a comment and a template around it):
  a.html         the page
  a_copy.html    a byte-for-byte copy: distance 0
  a_edit.html    one word of the text changed: 2 bits away
  a_script.html  other script, style, comment and template contents: the
                 text sink leaves them out, so the same fingerprint
  b.html         an unrelated text: no cluster
  short.html     ten words: too short for a fingerprint

Checked on the files: the clusters (one of four pages, distances as
above, nothing else printed), --all (b alone, short with "-"),
--fingerprints (one line per page; the short page "-" with its shingle
count), --k 0 (the edited page leaves the cluster), the summary, and the
exit statuses (2 for a missing input, a bad --k, no input).

Checked on the WARC: the same pages served by a server of this test, each
in another framing (plain, chunked, gzip, chunked and gzip, deflate; a
mirror copy under /mirror/), crawled by crawl --warc into a .warc.gz and
into a plain .warc: every page's fingerprint from the WARC is its file's
(the chunks and codings were taken off), the cluster holds the four pages
and the mirror, and a .warc.gz cut short is exit 1, named, with the pages
before the cut still read. /mirror/a.html and /a_copy.html have one
payload (the same bytes, chunked or not), so the crawl archives the later
of them as a revisit record of the other: that copy is in its original's
cluster at distance 0, with its fingerprint, and the summary counts it.

Checked on a WARC written here: revisit records of profiles
identical-payload-digest and server-not-modified are pages of the record
they refer to (its fingerprint, its cluster, its distance to the
cluster's first page); a revisit of a record not read, or of none, is
counted apart in the summary; one whose head is not a 2xx HTML page, or
of another profile, is not a page. A URI is one page: in a recrawl's
WARC a 304 of a page's own record and a second response of a URI are
counted apart, not clustered with their own page (they were).
"""
import gzip
import http.server
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zlib

BIN = sys.argv[1]
NEARDUP = os.path.join(BIN, "neardup")
CRAWL = os.path.join(BIN, "crawl")
failures = passes = 0


def check(cond, what):
    global failures, passes
    if cond:
        passes += 1
        print("ok:", what)
    else:
        failures += 1
        print("FAIL:", what)
    return cond


def run(*args, timeout=60):
    p = subprocess.run([NEARDUP, *args], capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def words(seed, n):
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                     for _ in range(rng.randint(2, 9))) for _ in range(3000)]
    return [rng.choice(vocab) for _ in range(n)]


def page(title, text, css="p { margin: 0 }", js="var x = 1;",
         comment="built", template="<p>stamped later</p>"):
    paras = "\n".join("<p>%s</p>" % " ".join(text[i:i + 50])
                      for i in range(0, len(text), 50))
    return ("<!DOCTYPE html>\n<html><head><title>%s</title>"
            "<style>%s</style><script>%s</script></head>\n<body>"
            "<nav><a href=\"/\">Home</a></nav>\n%s\n<!-- %s -->"
            "<template>%s</template></body></html>\n"
            % (title, css, js, paras, comment, template)).encode()


text_a = words(24, 1500)
text_e = list(text_a)
# One word of 1,500: 3 of 1,498 shingles change, E[d] = 64 acos(1495 /
# 1498) / pi = 1.3 bits. Word 707, where the fingerprint moves by 2 (at
# 700 it happens not to move: 0 bits), so that --k 0 has a page to split.
text_e[707] = "changedword"
PAGES = {
    "a.html": page("Page A", text_a),
    "a_copy.html": page("Page A", text_a),
    "a_edit.html": page("Page A", text_e),
    "a_script.html": page("Page A", text_a, css="body { color: red }",
                          js="document.write('<p>other words here</p>')",
                          comment="another build",
                          template="<p>a whole other template</p>"),
    "b.html": page("Page B", words(25, 1500)),
    "short.html": page("Short", words(26, 10)),
}

work = tempfile.mkdtemp(prefix="test_neardup.")
try:
    site = os.path.join(work, "site")
    os.makedirs(site)
    for name, body in PAGES.items():
        with open(os.path.join(site, name), "wb") as f:
            f.write(body)

    # ---- HTML files -------------------------------------------------
    rc, out, err = run("--fingerprints", site)
    lines = [l.split("\t") for l in out.splitlines()]
    check(rc == 0 and len(lines) == 6 and all(len(l) == 3 for l in lines),
          "--fingerprints: one line per page, three fields (rc %s)" % rc)
    fps = {os.path.basename(l[2]): l for l in lines}
    check(sorted(fps) == sorted(PAGES) and
          [os.path.basename(l[2]) for l in lines] == sorted(PAGES),
          "--fingerprints: every page, in the directory's name order")
    check(fps.get("short.html", ["x"])[0] == "-" and
          int(fps["short.html"][1]) == 12 - 3 + 1,
          "--fingerprints: the short page has no fingerprint, and its "
          "shingles counted (title, nav and ten words: 12 words, 10 "
          "shingles: %s)"
          % fps.get("short.html"))
    hexfp = {n: int(l[0], 16) for n, l in fps.items() if l[0] != "-"}
    check(all(re.fullmatch(r"[0-9a-f]{16}", l[0]) for n, l in fps.items()
              if n != "short.html"), "--fingerprints: 16 hex digits")

    def dist(a, b):
        return bin(hexfp[a] ^ hexfp[b]).count("1")

    check(hexfp["a.html"] == hexfp["a_copy.html"] ==
          hexfp["a_script.html"],
          "a copy, and a page that differs only in script, style, comment "
          "and template, have the page's fingerprint")
    d_edit = dist("a.html", "a_edit.html")
    check(d_edit == 2, "one word changed in 1,500: %d bits (2)" % d_edit)
    check(dist("a.html", "b.html") > 10, "an unrelated page: %d bits"
          % dist("a.html", "b.html"))

    rc, out, err = run(site)
    want = ["1\t0\t%s/a.html" % site, "1\t0\t%s/a_copy.html" % site,
            "1\t%d\t%s/a_edit.html" % (d_edit, site),
            "1\t0\t%s/a_script.html" % site]
    check(rc == 0 and out.splitlines() == want,
          "clusters: the four pages of A, distances to a.html (rc %s):\n%s"
          % (rc, out))
    check("6 pages" in err and "1 too short" in err and
          "1 clusters of 2 or more holding 4 pages" in err and
          "1 pages alone" in err, "the summary on stderr: %r" % err)

    rc, out, err = run("--all", "--quiet", site)
    check(rc == 0 and err == "" and out.splitlines() == want + [
        "2\t0\t%s/b.html" % site, "-\t-\t%s/short.html" % site],
        "--all: b alone as cluster 2, short with '-'; --quiet: no "
        "summary:\n%s" % out)

    rc, out, _ = run("--k", "0", "--all", site)
    check(rc == 0 and "2\t0\t%s/a_edit.html" % site in out.splitlines(),
          "--k 0: the edited page is a cluster of its own")

    rc, out, _ = run(os.path.join(site, "b.html"),
                     os.path.join(site, "a.html"), "--k=3",
                     os.path.join(site, "a_edit.html"))
    check(rc == 0 and out.splitlines() == [
        "1\t0\t%s/a.html" % site, "1\t%d\t%s/a_edit.html" % (d_edit, site)],
        "files in the order given, options among them")

    rc, out, err = run(site, os.path.join(work, "missing.html"))
    check(rc == 2 and out == "" and "missing.html" in err,
          "a missing input: exit 2 before any output")
    rc, _, err = run()
    check(rc == 2 and "no input" in err, "no input: exit 2")
    rc, _, err = run("--k", "9", site)
    check(rc == 2 and "--k" in err, "--k 9: exit 2")

    # ---- a WARC of the same pages, as crawl --warc writes it -----------
    def chunked(body, size=777):
        out = b""
        for i in range(0, len(body), size):
            part = body[i:i + size]
            out += b"%x\r\n%s\r\n" % (len(part), part)
        return out + b"0\r\n\r\n"

    # path -> (file, content coding, chunked)
    ROUTES = {
        "/a.html": ("a.html", "gzip", True),
        "/mirror/a.html": ("a.html", None, False),
        "/a_copy.html": ("a_copy.html", None, True),
        "/a_edit.html": ("a_edit.html", "gzip", False),
        "/a_script.html": ("a_script.html", "deflate", True),
        "/b.html": ("b.html", None, False),
        "/short.html": ("short.html", "gzip", True),
    }
    index = ("<html><body>%s</body></html>" % "".join(
        "<a href=\"%s\">%s</a> " % (p, p) for p in ROUTES)).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/":
                name, coding, chunk, body = None, None, False, index
            elif path in ROUTES:
                name, coding, chunk = ROUTES[path]
                body = PAGES[name]
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if coding == "gzip":
                body = gzip.compress(body)
            elif coding == "deflate":
                body = zlib.compress(body)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            if coding:
                self.send_header("Content-Encoding", coding)
            if chunk:
                self.send_header("Transfer-Encoding", "chunked")
                body = chunked(body)
            else:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % httpd.server_address[1]
    warcs = {}
    try:
        for ext in (".warc.gz", ".warc"):
            path = os.path.join(work, "site" + ext)
            p = subprocess.run([CRAWL, "--warc", path, "--quiet", "--delay",
                                "0", "--max-pages", "50", base + "/"],
                               capture_output=True, timeout=60)
            check(p.returncode == 0 and os.path.exists(path),
                  "crawl --warc %s exits 0 (%s: %s)"
                  % (ext, p.returncode, p.stderr.decode()[-300:]))
            warcs[ext] = path
    finally:
        httpd.shutdown()

    def warc_records(path):
        """The WARC headers of a file, as dicts of their fields."""
        with open(path, "rb") as f:
            data = f.read()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        heads = []
        for m in re.finditer(rb"WARC/1\.[01]\r\n(.*?)\r\n\r\n", data,
                             re.S):
            fields = {}
            for line in m.group(1).split(b"\r\n"):
                k, _, v = line.decode().partition(":")
                fields[k.strip()] = v.strip()
            if "WARC-Type" in fields:
                heads.append(fields)
        return heads

    for ext, path in warcs.items():
        # The copy the crawl archived as a revisit (the later of
        # /mirror/a.html and /a_copy.html) is a page, in the cluster of
        # the record it refers to at distance 0.
        recs = warc_records(path)
        ids = {r.get("WARC-Record-ID"): r for r in recs}
        revisits = [r for r in recs if r["WARC-Type"] == "revisit"]
        copies = {base + "/mirror/a.html", base + "/a_copy.html"}
        check(len(revisits) == 1 and
              revisits[0].get("WARC-Target-URI") in copies and
              revisits[0].get("WARC-Profile", "").endswith(
                  "/revisit/identical-payload-digest") and
              ids.get(revisits[0].get("WARC-Refers-To"), {}).get(
                  "WARC-Target-URI") in copies,
              "%s: the crawl archived one copy as a revisit of the other: "
              "%s" % (ext, revisits))
        rc, out, err = run("--all", path)
        rows = {l.split("\t")[2]: l.split("\t")[:2]
                for l in out.splitlines()}
        if revisits:
            orig = ids.get(revisits[0].get("WARC-Refers-To"), {}).get(
                "WARC-Target-URI")
            copy = revisits[0].get("WARC-Target-URI")
            check(rc == 0 and copy in rows and rows[copy] == ["1", "0"] and
                  rows.get(orig) == ["1", "0"],
                  "%s: the revisit %s is in its original's cluster at "
                  "distance 0:\n%s" % (ext, copy, out))
            check("1 revisit records: 1 read as their original's page, "
                  "0 of a record not read" in err,
                  "%s: the summary counts the revisit: %r" % (ext, err))
        rc, out, err = run("--fingerprints", path)
        got = {l.split("\t")[2]: l.split("\t")[0] for l in out.splitlines()}
        want_fp = {base + p: fps[f][0] for p, (f, _, _) in ROUTES.items()}
        check(rc == 0 and all(got.get(u) == fp for u, fp in want_fp.items()),
              "%s: every page's fingerprint is its file's (plain, chunked, "
              "gzip, deflate taken off): %s" % (ext, sorted(
                  u for u in want_fp if got.get(u) != want_fp[u])))
        check(set(got) == set(want_fp) | {base + "/"},
              "%s: the pages are the 2xx HTML responses (robots.txt's 404 "
              "skipped): %s" % (ext, sorted(set(got) ^ (set(want_fp) |
                                                       {base + "/"}))))
        rc, out, err = run(path)
        rows = [l.split("\t") for l in out.splitlines()]
        cluster = {r[2] for r in rows}
        check(rc == 0 and cluster == {base + p for p in (
            "/a.html", "/mirror/a.html", "/a_copy.html", "/a_edit.html",
            "/a_script.html")} and {r[0] for r in rows} == {"1"},
            "%s: one cluster, the page, its mirror, copy, edit and "
            "script variant:\n%s" % (ext, out))
        check("WARC records" in err and "not HTML pages" in err,
              "%s: the summary counts the records skipped: %r" % (ext, err))

    # A .warc.gz cut short: exit 1, the file and offset named, the pages
    # of the records before the cut read, and the other inputs too.
    with open(warcs[".warc.gz"], "rb") as f:
        data = f.read()
    cut = os.path.join(work, "cut.warc.gz")
    with open(cut, "wb") as f:
        f.write(data[:len(data) * 2 // 3])
    rc, out, err = run("--fingerprints", cut, os.path.join(site, "b.html"))
    n = len(out.splitlines())
    check(rc == 1 and "cut.warc.gz: at byte" in err and n >= 2 and
          out.splitlines()[-1].endswith("/b.html"),
          "a .warc.gz cut short: exit 1, named (%r), %d pages before the "
          "cut and the next input read" % (err.strip()[:120], n - 1))
    # A WARC written here: a resource record of an HTML page is a page;
    # a warcinfo, a 404, an image, a revisit and a response in a
    # transfer coding other than chunked alone ("gzip", "gzip, chunked")
    # are not.
    def record(kind, uri, ctype, block):
        head = ("WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:"
                "%s>\r\n" % (kind, "0" * 36))
        if uri:
            head += "WARC-Target-URI: %s\r\n" % uri
        head += "Content-Type: %s\r\nContent-Length: %d\r\n\r\n" % (
            ctype, len(block))
        return head.encode() + block + b"\r\n\r\n"

    def response(status, ctype, body, extra=b""):
        return (b"HTTP/1.1 %s\r\nContent-Type: %s\r\n%sContent-Length: %d"
                b"\r\n\r\n" % (status, ctype, extra, len(body))) + body

    http = "application/http; msgtype=response"
    hand = os.path.join(work, "hand.warc")
    with open(hand, "wb") as f:
        f.write(record("warcinfo", None, "application/warc-fields",
                       b"software: test\r\n"))
        f.write(record("resource", "http://r.test/page", "text/html",
                       PAGES["b.html"]))
        f.write(record("response", "http://r.test/404", http, response(
            b"404 Not Found", b"text/html", PAGES["a.html"])))
        f.write(record("response", "http://r.test/img", http, response(
            b"200 OK", b"image/png", PAGES["a.html"])))
        f.write(record("revisit", "http://r.test/again", http, response(
            b"200 OK", b"text/html", b"")))
        f.write(record("response", "http://r.test/te", http, response(
            b"200 OK", b"text/html", gzip.compress(PAGES["a.html"]),
            b"Transfer-Encoding: gzip\r\n")))
        gz = gzip.compress(PAGES["a.html"])
        f.write(record("response", "http://r.test/te2", http, (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
            b"Transfer-Encoding: gzip, chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n"
            % (len(gz), gz))))
        f.write(record("response", "http://r.test/ok", http, response(
            b"200 OK", b"application/xhtml+xml", PAGES["a_edit.html"])))
    rc, out, err = run("--fingerprints", hand)
    check(rc == 0 and out.splitlines() == [
        "%s\t%s\thttp://r.test/page" % tuple(fps["b.html"][:2]),
        "%s\t%s\thttp://r.test/ok" % tuple(fps["a_edit.html"][:2])] and
        "8 WARC records, 6 not HTML pages" in err,
        "a WARC's pages: a resource record of HTML and a 200 of "
        "application/xhtml+xml; not a warcinfo, a 404, an image, a "
        "revisit, a gzip transfer coding (chunked or not):\n%s%s"
        % (out, err))

    # Revisit records written here: pages of the record they refer to.
    def revisit(uri, profile, refers, head):
        rec = record("revisit", uri, http, head)
        return rec.replace(b"Content-Type:", (
            "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/%s\r\n"
            "WARC-Refers-To: <urn:uuid:%s>\r\nContent-Type:"
            % (profile, refers)).encode(), 1)

    def with_id(rec, uid):
        return rec.replace(b"0" * 36, uid.encode(), 1)

    ID_A, ID_E, ID_B = ("%036d" % i for i in (1, 2, 3))
    ok_head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    revs = os.path.join(work, "revisits.warc")
    with open(revs, "wb") as f:
        f.write(with_id(record("response", "http://v.test/a", http, response(
            b"200 OK", b"text/html", PAGES["a.html"])), ID_A))
        f.write(with_id(record("response", "http://v.test/e", http, response(
            b"200 OK", b"text/html", PAGES["a_edit.html"])), ID_E))
        f.write(with_id(record("response", "http://v.test/b", http, response(
            b"200 OK", b"text/html", PAGES["b.html"])), ID_B))
        # A copy of a, of the edit (2 bits from a), and a 304 of b.
        f.write(revisit("http://v.test/a2", "identical-payload-digest", ID_A,
                        ok_head))
        f.write(revisit("http://v.test/e2", "identical-payload-digest", ID_E,
                        ok_head))
        f.write(revisit("http://v.test/b2", "server-not-modified", ID_B,
                        b"HTTP/1.1 304 Not Modified\r\n\r\n"))
        # Of a record not read, and of none: counted apart.
        f.write(revisit("http://v.test/x", "identical-payload-digest",
                        "9" * 36, ok_head))
        f.write(revisit("http://v.test/y", "identical-payload-digest",
                        "9" * 36, ok_head).replace(
                            b"WARC-Refers-To: <urn:uuid:%s>\r\n" % (
                                b"9" * 36), b""))
        # A 404 and an image with a's payload, a 200 that says
        # server-not-modified, another profile: not pages.
        f.write(revisit("http://v.test/404", "identical-payload-digest",
                        ID_A, b"HTTP/1.1 404 Not Found\r\n"
                        b"Content-Type: text/html\r\n\r\n"))
        f.write(revisit("http://v.test/img", "identical-payload-digest",
                        ID_A, b"HTTP/1.1 200 OK\r\n"
                        b"Content-Type: image/png\r\n\r\n"))
        f.write(revisit("http://v.test/nm", "server-not-modified", ID_A,
                        ok_head))
        f.write(revisit("http://v.test/other", "uri-agnostic-identical-"
                        "payload-digest", ID_A, ok_head))
    rc, out, err = run("--all", revs)
    check(rc == 0 and out.splitlines() == [
        "1\t0\thttp://v.test/a", "1\t%d\thttp://v.test/e" % d_edit,
        "1\t0\thttp://v.test/a2", "1\t%d\thttp://v.test/e2" % d_edit,
        "2\t0\thttp://v.test/b", "2\t0\thttp://v.test/b2"],
        "revisits: a copy in its original's cluster at distance 0, a copy "
        "of the edit at the edit's distance, a 304 with its page:\n%s"
        % out)
    check("6 pages (6 from 1 WARC files" in err and
          "12 WARC records, 4 not HTML pages" in err and
          "5 revisit records: 3 read as their original's page, 2 of a "
          "record not read" in err,
          "revisits: the summary counts them: %r" % err)
    rc, out, err = run("--fingerprints", revs, revs)
    lines = out.splitlines()
    check(rc == 0 and len(lines) == 6 and
          lines[3] == "%s\t%s\thttp://v.test/a2" % tuple(fps["a.html"][:2])
          and lines[5] == "%s\t%s\thttp://v.test/b2"
          % tuple(fps["b.html"][:2]) and
          "6 records of a URI read before" in err and
          "7 revisit records: 3 read as their original's page, 4 of a "
          "record not read" in err,
          "revisits --fingerprints: the original's fingerprint; the file "
          "given twice, its pages' URIs taken the first time (6 records "
          "read before), its revisits of x and of none unread both "
          "times:\n%s%s" % (out, err))

    # A recrawl's WARC: a 304 revisit of a's own record and a changed b
    # fetched whole again are no pages of their own (their URI is taken,
    # as the crawler never makes a page its own near-duplicate); c, a
    # copy of b's second response, resolves to b's page and cluster.
    ID_B2 = "%036d" % 4
    recrawl = os.path.join(work, "recrawl.warc")
    with open(recrawl, "wb") as f:
        f.write(with_id(record("response", "http://v.test/a", http, response(
            b"200 OK", b"text/html", PAGES["a.html"])), ID_A))
        f.write(with_id(record("response", "http://v.test/b", http, response(
            b"200 OK", b"text/html", PAGES["b.html"])), ID_B))
        f.write(revisit("http://v.test/a", "server-not-modified", ID_A,
                        b"HTTP/1.1 304 Not Modified\r\n\r\n"))
        f.write(with_id(record("response", "http://v.test/b", http, response(
            b"200 OK", b"text/html", PAGES["a_edit.html"])), ID_B2))
        f.write(revisit("http://v.test/c", "identical-payload-digest", ID_B2,
                        ok_head))
    rc, out, err = run("--all", recrawl)
    check(rc == 0 and out.splitlines() == [
        "1\t0\thttp://v.test/a", "2\t0\thttp://v.test/b",
        "2\t0\thttp://v.test/c"] and
        "3 pages (3 from 1 WARC files" in err and
        "2 records of a URI read before" in err,
        "a recrawl: each URI one page, no page clustered with itself, a "
        "revisit of a recrawled record in its URI's cluster:\n%s%s"
        % (out, err))

    bad = os.path.join(work, "bad.warc")
    with open(bad, "wb") as f:
        f.write(b"WARC/1.1\r\nWARC-Type: response\r\n\r\nno length")
    rc, _, err = run(bad)
    check(rc == 1 and "Content-Length" in err,
          "a WARC record without Content-Length: exit 1 (%r)" % err.strip())
finally:
    shutil.rmtree(work, ignore_errors=True)

print("%d passed, %d failed" % (passes, failures))
sys.exit(1 if failures else 0)
