#!/usr/bin/env python3
"""End-to-end: `crawl --warc FILE` writes WARC files that an independent
reader accepts, with every digest valid and the bodies that were served.

    python3 tests/e2e_warc.py BUILD_EXAMPLES_DIR WORKDIR [SEED [PARTS]]

PARTS: a comma-separated choice of sample, docs, kill9 (default: all).

The reader is warcio.js (Webrecorder's WARC library, package `warcio` of
the npm registry), installed by npm into WORKDIR/warcio on the first run
(as tests/diff_parse5.py installs parse5); without node and npm, or
without the registry for that first install, the test is skipped (exit
77). tests/warc_read.mjs drives it: every record of every file, and the
one record at an offset (a seek). warcio.js does not verify digests, so
warc_read.mjs computes the SHA-1 (base32) of each block and payload itself
from the bytes warcio parsed. Beside it, this script frames every file on
its own (Python's zlib and a parser of the WARC header): one gzip member
per record in a .warc.gz, every record whole (WARC/1.1 line, header,
Content-Length bytes, CRLF CRLF), nothing after the last: a torn record
fails, which warcio.js alone would not notice (it stops quietly at a cut
gzip member). Both must find the same records at the same offsets.

Every crawl's files are checked for (the "common checks"):
  - framing as above; warcio reads every record, prints no warning, its
    HTTP head ends where the block's first CRLF CRLF does;
  - every record WARC/1.1 with a unique WARC-Record-ID (<urn:uuid:...>),
    a WARC-Date (YYYY-MM-DDThh:mm:ssZ), Content-Length = the block's
    length, WARC-Block-Digest = sha1 base32 of the block, and for request
    and response records WARC-Payload-Digest = that of the bytes after the
    HTTP head (de-chunked when chunked), WARC-Target-URI, WARC-IP-Address 127.0.0.1 and Content-Type
    application/http with msgtype request or response;
  - the first record of each file is its warcinfo, the only one (a
    resumed crawl may add one per run): its WARC-Filename is the file's
    name; its fields name the software
    bloomcrawl/VERSION (crawl --version), "format: WARC File Format 1.1",
    the user agent and the robots policy ("obey");
  - revisit records (issue 24: a page whose payload an earlier page had):
    profile identical-payload-digest, the HTTP head alone as block, and a
    WARC-Refers-To naming a response record of the files with the same
    payload digest (verified on its bytes), URI and date; they count as
    responses below, and a page's --out record has duplicate_of (the
    original's URI) exactly when its record is a revisit;
  - WARC-Concurrent-To pairs each response with one request record (and
    back, when the request names its response): same Target-URI and
    WARC-Date; no request or response left without its pair (failed
    fetches write neither); the request line is "GET <path?query>
    HTTP/1.x" for the Target-URI, with the crawl's User-Agent and a Host;
  - --out: every record has "fetched_at" (YYYY-MM-DDThh:mm:ssZ); a record
    with an HTTP status and no error has "warc_file" and "warc_offset";
    the record of warcio's scan at that file and offset is the response
    for its url, with its status, and WARC-Date = fetched_at; a reader
    seeking there (warc_read.mjs FILE@OFFSET: the stream starts at the
    offset) reads that record, digests valid. An error record (timeout,
    connect, ...) has no warc_file and no response record exists for its
    url, except too_large and too_many_redirects (the response came): if
    archived, the record has warc_file and a too_large body carries
    "WARC-Truncated: length";
  - one response record per page of --out (a URL that is also a sitemap
    may have two: one page fetch, one sitemap fetch); robots.txt archived
    once for each host of --out; any other response record is a sitemap
    (XML or gzip, or "sitemap" in its path), never a page missing from
    --out;
  - (sample and docs) --stats-json "warc": files = the files written,
    records = the records in them (with or without the warcinfo records),
    bytes = their size (on disk, or of the records uncompressed).

The parts:
  sample   the sample site (examples/site, 600 pages) served by serve.py on
           127.0.0.1, crawled three times (--scope domain, --max-depth 8,
           --user-agent naming this test): with --warc X.warc.gz, with a
           plain X.warc (no gzip magic), and with --warc-max-size 48K
           (files X-00000.warc.gz, X-00001...: more than two; each but the
           last holds at least 48 KiB and less than 48 KiB before its last
           record, each holds a record besides its warcinfo). Each: exit 0,
           check_crawl.py passes (the WARC does not change the crawl), the
           common checks, and every archived body of a file the site serves
           (html and file routes, robots.txt) equals that file byte for
           byte, port placeholder substituted as serve.py does; a redirect's
           Location is the route's. Bodies generated on the fly by serve.py
           (404, 500, the calendar trap, /slow, /huge) have no file to
           compare with: they are excepted (their digests still checked).
  docs     a real documentation tree (Debian's postgresql-doc-15 HTML, else
           python3.11-doc's; the part is skipped when neither is installed),
           served by nginx with gzip on (else python3 -m http.server),
           crawled with --max-pages 300: the common checks, and every 200
           page's archived body, de-chunked when its bytes are chunked and
           decoded per Content-Encoding (gzip) here, and also as warcio.js
           decodes it, equals the file on disk byte for byte; with nginx,
           most HTML bodies are archived gzip-encoded (the payload is kept
           before content decoding).
  kill9    --state DIR and --warc X.warc.gz, killed with SIGKILL at seeded
           moments (a random delay, or right after the WARC files grew by
           a random number of bytes, so that a kill may fall while a record
           is being written) up to 6 times (a run that ends by itself ends
           the series), resumed with the same command to the end; then the
           same with --warc-max-size 48K (up to 4 kills). Then: exit 0,
           check_crawl.py passes with --refetch-tolerance concurrency x
           kills, the common checks (no torn record, warcio reads every
           file, exactly one response per page of --out, none for a page
           not in --out).

Nothing here contacts an address outside 127.0.0.0/8. Every process is
waited for with a time limit: a crawl that hangs is killed and fails the
test. A crawl without --warc in its --help fails at once.
"""
import base64
import gzip
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import (RUN_TIMEOUT, SANITIZER, Parts, Run,  # noqa: E402
                       check, read_stats, setup_warcio, summary,
                       warcio_read)
import sample_site  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SITE = os.path.join(ROOT, "examples", "site")
sys.path.insert(0, SITE)
sys.dont_write_bytecode = True
import sitelib  # noqa: E402

PAGES = 600            # gensite.py --pages
SLOW_SECONDS = 3       # serve.py's /slow; the crawl's timeout is below it
CONC = 8               # --concurrency
ROTATE = 48 << 10      # --warc-max-size of the rotating runs (48K)
UA = "bloomcrawl-e2e-warc/1.0 (+http://www.bloomcrawl.test/contact)"
DOC_TREES = ["/usr/share/doc/postgresql-doc-15/html",
             "/usr/share/doc/python3.11/html"]
DOC_PAGES = 300
DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
RECORD_ID = re.compile(r"^<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-"
                       r"[0-9a-f]{4}-[0-9a-f]{12}>$")
# serve.py substitutes the port placeholder in bodies of these types
PORT_TYPES = ("text/", "application/xml", "application/rss",
              "application/pdf", "application/javascript")
# the routes whose bodies serve.py generates instead of reading a file
DYNAMIC = {"not_found": "a 404 page serve.py writes",
           "server_error": "a 500 page serve.py writes",
           "calendar": "the calendar trap, generated per month",
           "timeout": "/slow, generated after a wait",
           "too_large": "/huge, generated in 64 KiB pieces",
           "redirect": "a 'Moved' page serve.py writes (Location checked)"}

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
WORKDIR = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    ROOT, "build", "tests", "e2e_warc")
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
PARTS = sys.argv[4].split(",") if len(sys.argv) > 4 else [
    "sample", "docs", "kill9"]
CRAWL = os.path.join(BIN, "crawl")


# -- the reader: warcio.js, installed once ------------------------------------

# -- framing, independently of warcio -----------------------------------------

class Torn(Exception):
    pass


def parse_record(data, where):
    """One WARC record in data (exactly): (header fields, block)."""
    end = data.find(b"\r\n\r\n")
    if not data.startswith(b"WARC/1.1\r\n") or end < 0:
        raise Torn("%s: no WARC/1.1 header" % where)
    fields = {}
    for line in data[10:end].split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep:
            raise Torn("%s: header line without ':': %r" % (where, line))
        fields[name.decode().strip().lower()] = value.decode().strip()
    try:
        n = int(fields["content-length"])
    except (KeyError, ValueError):
        raise Torn("%s: no Content-Length" % where)
    start = end + 4
    if len(data) != start + n + 4 or data[start + n:] != b"\r\n\r\n":
        raise Torn("%s: %d bytes after the header, Content-Length %d + 4"
                   % (where, len(data) - start, n))
    return fields, data[start:start + n]


def frame(path):
    """Every record of a WARC file: [(offset, size, fields)], or Torn."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    pos = 0
    if path.endswith(".warc.gz"):
        while pos < len(data):
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            parts, used = [], pos
            while not d.eof and used < len(data):
                piece = data[used:used + 65536]
                parts.append(d.decompress(piece))
                used += len(piece) - len(d.unused_data)
            if not d.eof:
                raise Torn("%s: the gzip member at %d is cut" % (path, pos))
            fields, _ = parse_record(b"".join(parts),
                                     "%s member at %d" % (path, pos))
            out.append((pos, used - pos, fields))
            pos = used
    else:
        if data[:2] == b"\x1f\x8b":
            raise Torn("%s: a plain .warc name, gzip content" % path)
        while pos < len(data):
            end = data.find(b"\r\n\r\n", pos)
            head = data[pos:end if end >= 0 else len(data)]
            m = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
            if end < 0 or not m:
                raise Torn("%s: the record at %d has no whole header"
                           % (path, pos))
            size = end + 4 - pos + int(m.group(1)) + 4
            if pos + size > len(data):
                raise Torn("%s: the record at %d is cut" % (path, pos))
            fields, _ = parse_record(data[pos:pos + size],
                                     "%s record at %d" % (path, pos))
            out.append((pos, size, fields))
            pos += size
    return out


# -- processes ----------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds=10):
    t = time.monotonic() + seconds
    while time.monotonic() < t and proc.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def stop(proc):
    sample_site.stop_process(proc, SLOW_SECONDS + 5)


class SampleSite(sample_site.Server):
    """serve.py on a free port, its routes, and the crawl's site options."""

    def __init__(self, sitedir, log):
        super().__init__(sitedir, log, ["--slow-seconds", str(SLOW_SECONDS),
                                        "--huge-bytes", "4M"],
                         SLOW_SECONDS + 5)
        self.dir = sitedir
        with open(os.path.join(sitedir, "routes.json")) as f:
            cfg = json.load(f)
        self.routes, self.prefixes = cfg["hosts"], cfg["prefixes"]

    def route(self, url):
        """serve.py's resource for a canonical URL (as its route() finds
        it): a routes.json entry, {"kind": prefix kind} or None (404)."""
        _, host, _, target = sitelib.split_url(url)
        routes = self.routes.get(host)
        if routes is None:
            return None
        r = routes.get(target)
        if r is None and "?" in target:
            r = routes.get(target.split("?")[0])
            if r is not None and r["kind"] not in ("html", "file"):
                r = None
        if r is None:
            for prefix, kind in self.prefixes.get(host, {}).items():
                if target.startswith(prefix):
                    r = {"kind": kind}
        return r

    def expected(self, url):
        """(body bytes the server sends for url, None) for a file route,
        else (None, why not) -- or (b"", ...) never."""
        r = self.route(url)
        if r is None:
            return None, DYNAMIC["not_found"]
        if r["kind"] not in ("html", "file"):
            return None, DYNAMIC.get(r["kind"], r["kind"])
        with open(os.path.join(self.dir, r["file"]), "rb") as f:
            body = f.read()
        if r["type"].startswith(PORT_TYPES):
            body = body.replace(sitelib.PORT_PLACEHOLDER.encode(),
                                str(self.port).encode())
        return body, None


# --retries 0: the site's /error/500 and /slow (a timeout) are given up at
# their first failure, each archived once; a crawl of the site that runs to
# its end is then incomplete: exit 4 (docs/DESIGN.md 3.4).
FINISHED_RC = 4


def site_options(**over):
    o = {"quiet": True, "delay": "0", "concurrency": str(CONC),
         "per-host": "4", "timeout": "1500", "max-body": "1000000",
         "scope": "domain", "max-depth": "8", "user-agent": UA,
         "retries": "0"}
    o.update({k.replace("_", "-"): v for k, v in over.items()})
    args = []
    for k, v in o.items():
        if v is True:
            args.append("--" + k)
        elif v is not None:
            args += ["--" + k, v]
    return args


def run_checker(sitedir, log, out, extra=()):
    return sample_site.run_checker(
        sitedir, log, out, ["--scope", "domain", "--max-depth", "8", *extra],
        RUN_TIMEOUT)


def read_out(path):
    recs = []
    with open(path, "rb") as f:
        for line in f:
            recs.append(json.loads(line))
    return recs


def warc_files(path, rotating):
    """The files of --warc PATH: PATH itself, or with rotation
    NAME-00000.warc.gz, NAME-00001.warc.gz, ... in order."""
    if not rotating:
        return [path] if os.path.exists(path) else []
    d, base = os.path.split(path)
    for ext in (".warc.gz", ".warc"):
        if base.endswith(ext):
            stem, suffix = base[:-len(ext)], ext
            break
    else:
        stem, suffix = base, ""
    pat = re.compile(re.escape(stem) + r"-(\d{5})" + re.escape(suffix) + "$")
    names = sorted(n for n in os.listdir(d) if pat.match(n))
    return [os.path.join(d, n) for n in names]


# -- the common checks --------------------------------------------------------

def dechunk(data):
    """The body of a chunked transfer coding, or None if data is not one."""
    out, pos = [], 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            return None
        try:
            size = int(data[pos:eol].split(b";")[0], 16)
        except ValueError:
            return None
        pos = eol + 2
        if size == 0:
            return b"".join(out) if data.endswith(b"\r\n") else None
        if data[pos + size:pos + size + 2] != b"\r\n":
            return None
        out.append(data[pos:pos + size])
        pos += size + 2


class Verdict:
    """What verify() found, for the part's own further checks."""

    def __init__(self, files):
        self.files = files
        self.records = []      # warcio's records, all files, in order
        self.responses = {}    # target URI -> [response records]
        self.by_place = {}     # (file, offset) -> response record


class Problems:
    """The failed conditions of many records, reported as one check."""

    def __init__(self):
        self.list = []

    def need(self, cond, rec, what):
        if not cond:
            self.list.append("%s at %s@%d (%s): %s" % (
                rec["warc"].get("warc-type"), os.path.basename(rec["file"]),
                rec["offset"], rec["warc"].get("warc-target-uri", ""), what))
        return cond

    def add(self, what):
        self.list.append(what)

    def text(self):
        bad = self.list
        return "" if not bad else ":\n  " + "\n  ".join(bad[:25]) + (
            "\n  ... %d in all" % len(bad) if len(bad) > 25 else "")


def http_line(rec):
    return rec.get("http", {}).get("line", "")


def http_headers(rec):
    return rec.get("http", {}).get("headers", {})


def sitemapish(rec):
    ctype = http_headers(rec).get("content-type", "").lower()
    path = urllib.parse.urlsplit(rec["warc"].get("warc-target-uri", "")).path
    return "sitemap" in path.lower() or any(
        t in ctype for t in ("xml", "gzip"))


def verify(name, reader, files, out_path, version, gz=True, robots=True,
           stats=None, resumed=False):
    """The common checks (module docstring) of one crawl's WARC files and
    --out; returns a Verdict (None when nothing could be read). resumed:
    the crawl ran more than once (a resumed run may open with a warcinfo
    record of its own)."""
    if not check(files, "%s: the crawl wrote its WARC file(s)" % name):
        return None
    v = Verdict(files)
    framed = check_framing(name, reader, files, gz, v)
    bad = Problems()
    check_records(v.records, bad)
    check_warcinfo(name, files, v.records, version, robots, resumed)
    reqs, resps = check_pairs(v, bad)
    outs, seeks = check_out(name, reader, v, out_path, robots, bad)
    resolve_revisits(v.records, bad)
    check(not bad.list, "%s: %d records (%d responses, %d requests), %d "
          "--out records, %d seeks: ids, dates, lengths, both digests, "
          "pairs, request lines and User-Agent, --out's warc_file/"
          "warc_offset/fetched_at, one response per page%s" % (
              name, len(v.records), len(resps), len(reqs), len(outs),
              seeks, bad.text()))
    if stats is not None:
        check_stats(name, stats, files, framed, v.records, gz)
    return v


def check_framing(name, reader, files, gz, v):
    """Each file framed here and read by warcio.js (v.records); the two
    agree. Returns {file: frame(file)} for the files framed whole."""
    framed, torn = {}, []
    for f in files:
        try:
            framed[f] = frame(f)
        except Torn as e:
            torn.append(str(e))
        if gz != (open(f, "rb").read(2) == b"\x1f\x8b"):
            torn.append("%s is %s" % (f, "plain" if gz else "gzip"))
    check(not torn, "%s: %d file(s), %d records, each whole%s, nothing after "
          "the last%s" % (name, len(files), sum(map(len, framed.values())),
                          " and one gzip member" if gz else ", not gzip",
                          "" if not torn else ": " + "; ".join(torn)))
    recs = warcio_read(reader, files)
    errors = [r for r in recs if "error" in r]
    check(not errors, "%s: warcio.js reads every file to its end%s" % (
        name, "" if not errors else ": " + errors[0]["error"][:600]))
    v.records = [r for r in recs if "error" not in r]
    differ = [f for f in framed if [o for o, _, _ in framed[f]] !=
              [r["offset"] for r in v.records if r["file"] == f]]
    check(framed and not differ, "%s: warcio.js and the framing here find "
          "the same records at the same offsets in %d file(s)%s" % (
              name, len(framed), "" if not differ else
              ": not in " + ", ".join(differ)))
    return framed


def check_records(recs, bad):
    """The fields and digests of every record."""
    ids = set()
    for r in recs:
        w = r["warc"]
        bad.need(r["version"] == "WARC/1.1", r, "version %r" % r["version"])
        bad.need(not r["warnings"], r, "warcio warned: %s" % r["warnings"])
        bad.need(RECORD_ID.match(w.get("warc-record-id", "")), r,
                 "WARC-Record-ID %r" % w.get("warc-record-id"))
        bad.need(w.get("warc-record-id") not in ids, r, "record id twice")
        ids.add(w.get("warc-record-id"))
        bad.need(DATE.match(w.get("warc-date", "")), r,
                 "WARC-Date %r" % w.get("warc-date"))
        bad.need(r["content_length"] == r["block_length"], r,
                 "Content-Length %d, block %d" % (r["content_length"],
                                                  r["block_length"]))
        bad.need(r["block_digest_ok"] is True, r, "WARC-Block-Digest %r, "
                 "computed %s" % (w.get("warc-block-digest"),
                                  r["block_sha1"]))
        t = w.get("warc-type")
        if t not in ("request", "response", "revisit"):
            continue
        if t == "revisit":
            # Issue 24: the HTTP head alone; its payload digest is its
            # original's (resolve_revisits() compares them).
            bad.need(w.get("warc-profile") == PROFILE, r,
                     "WARC-Profile %r" % w.get("warc-profile"))
            bad.need(payload(r) == b"", r, "a revisit block with a body")
            t = "response"
        else:
            bad.need(r["payload_digest_ok"] is True, r,
                     "WARC-Payload-Digest %r, computed %s" % (
                         w.get("warc-payload-digest"), r["payload_sha1"]))
        bad.need("http" in r and r.get("head_agrees") is True, r,
                 "warcio's HTTP head does not end at the block's CRLF CRLF")
        bad.need(w.get("warc-ip-address") == "127.0.0.1", r,
                 "WARC-IP-Address %r" % w.get("warc-ip-address"))
        ct = w.get("content-type", "").replace(" ", "").lower()
        bad.need(ct.startswith("application/http") and
                 "msgtype=" + t in ct, r, "Content-Type %r" % ct)
        bad.need(w.get("warc-target-uri", "").startswith("http://"), r,
                 "WARC-Target-URI %r" % w.get("warc-target-uri"))


def resolve_revisits(recs, bad):
    """Issue 24: every revisit record names by WARC-Refers-To a response
    record of these files, with its payload digest (warcio read both; the
    original's digest was verified against its bytes by check_records),
    its Target-URI and its Date."""
    by_id = {r["warc"].get("warc-record-id"): r for r in recs}
    for r in recs:
        w = r["warc"]
        if w.get("warc-type") != "revisit":
            continue
        o = by_id.get(w.get("warc-refers-to"))
        if not bad.need(o is not None and
                        o["warc"].get("warc-type") == "response", r,
                        "WARC-Refers-To %r names no response record"
                        % w.get("warc-refers-to")):
            continue
        ow = o["warc"]
        bad.need(ow.get("warc-payload-digest") ==
                 w.get("warc-payload-digest") and o["payload_digest_ok"] and
                 ow.get("warc-target-uri") ==
                 w.get("warc-refers-to-target-uri") and
                 ow.get("warc-date") == w.get("warc-refers-to-date"), r,
                 "its original %s has another payload digest, URI or date"
                 % ow.get("warc-target-uri"))


def check_warcinfo(name, files, recs, version, robots, resumed):
    """Each file opens with its warcinfo; what the first one says."""
    heads = []
    for f in files:
        mine = [r for r in recs if r["file"] == f]
        n = sum(r["warc"].get("warc-type") == "warcinfo" for r in mine)
        if not mine or mine[0]["warc"].get("warc-type") != "warcinfo" or \
                (n != 1 and not resumed) or \
                mine[0]["warc"].get("warc-filename") != os.path.basename(f):
            heads.append(os.path.basename(f))
    check(not heads, "%s: each file opens with its warcinfo record, %s, "
          "whose WARC-Filename is the file's name%s" % (
              name, "the only one" if not resumed else
              "(more may follow: one per run)",
              "" if not heads else ": not " + ", ".join(heads)))
    infos = [r for r in recs if r["warc"].get("warc-type") == "warcinfo"]
    if infos:
        text = warcinfo_text(infos[0])
        want = ["software: bloomcrawl/" + version,
                "format: WARC File Format 1.1", UA,
                "obey" if robots else "ignore"]
        missing = [x for x in want if x.lower() not in text.lower()]
        check(not missing, "%s: warcinfo names %s%s" % (
            name, want, "" if not missing else "; missing %s in %r"
            % (missing, text[:600])))


def check_pairs(v, bad):
    """WARC-Concurrent-To pairs every response with its request; fills
    v.responses and v.by_place. Returns (requests by id, responses)."""
    recs = v.records
    reqs = {r["warc"]["warc-record-id"]: r for r in recs
            if r["warc"].get("warc-type") == "request"}
    resps = [r for r in recs
             if r["warc"].get("warc-type") in ("response", "revisit")]
    paired = set()
    for r in resps:
        to = r["warc"].get("warc-concurrent-to", "")
        q = reqs.get(to)
        if not bad.need(q is not None, r, "WARC-Concurrent-To %r names no "
                        "request record" % to):
            continue
        bad.need(to not in paired, r, "a second response for request %s"
                 % to)
        paired.add(to)
        back = q["warc"].get("warc-concurrent-to")
        bad.need(back in (None, r["warc"]["warc-record-id"]), q,
                 "its WARC-Concurrent-To %r is not its response" % back)
        bad.need(q["warc"].get("warc-target-uri") ==
                 r["warc"].get("warc-target-uri") and
                 q["warc"].get("warc-date") == r["warc"].get("warc-date"),
                 r, "its request has another Target-URI or Date")
        check_request(q, bad)
    for rid, q in reqs.items():
        bad.need(rid in paired, q, "a request record without its response")
    for r in resps:
        v.responses.setdefault(r["warc"]["warc-target-uri"], []).append(r)
        v.by_place[(os.path.abspath(r["file"]), r["offset"])] = r
    return reqs, resps


def check_out(name, reader, v, out_path, robots, bad):
    """--out against the response records; a reader seeking to each
    warc_offset. Returns (--out records, seeks made)."""
    outs = read_out(out_path)
    seeks = []
    for o in outs:
        fa = o.get("fetched_at")
        if not DATE.match(fa or ""):
            bad.add("--out %s: fetched_at %r" % (o["url"], fa))
        err = o.get("error")
        has = "warc_file" in o or "warc_offset" in o
        if err is None and o.get("status", 0) > 0:
            if not has:
                bad.add("--out %s (status %s): no warc_file/warc_offset"
                        % (o["url"], o.get("status")))
                continue
        elif err in ("too_large", "too_many_redirects"):
            if not has and any(not sitemapish(r) for r in
                               v.responses.get(o["url"], [])):
                bad.add("--out %s (%s): a response record, but no "
                        "warc_file" % (o["url"], err))
                continue
        else:
            if has or o["url"] in v.responses:
                bad.add("--out %s failed (%s) but has a response record"
                        % (o["url"], err))
            continue
        if not has:
            continue
        r = v.by_place.get((os.path.abspath(str(o.get("warc_file"))),
                            o.get("warc_offset")))
        if r is None:
            bad.add("--out %s: no response record at %s@%s" % (
                o["url"], o.get("warc_file"), o.get("warc_offset")))
            continue
        seeks.append((o, r))
        bad.need(r["warc"].get("warc-target-uri") == o["url"], r,
                 "--out says it is %s's" % o["url"])
        revisit = r["warc"].get("warc-type") == "revisit"
        bad.need(revisit == ("duplicate_of" in o) and (
            not revisit or r["warc"].get("warc-refers-to-target-uri") ==
            o["duplicate_of"]), r, "--out's duplicate_of %r, the record "
            "a %s" % (o.get("duplicate_of"), r["warc"].get("warc-type")))
        bad.need(r["warc"].get("warc-date") == fa, r,
                 "WARC-Date is not --out's fetched_at %s" % fa)
        bad.need(http_line(r).split(" ")[1:2] == [str(o.get("status"))], r,
                 "status line %r, --out status %s" % (http_line(r),
                                                       o.get("status")))
        if err == "too_large":
            bad.need(r["warc"].get("warc-truncated") == "length", r,
                     "a body cut by --max-body without WARC-Truncated: "
                     "length")
        n = len(v.responses.get(o["url"], []))
        bad.need(n == 1 or (n == 2 and sitemapish(r)), r,
                 "%d response records for this page of --out" % n)
    in_out = {o["url"] for o in outs}
    for uri, rs in v.responses.items():
        if uri in in_out:
            continue
        if urllib.parse.urlsplit(uri).path == "/robots.txt":
            if robots:
                bad.need(len(rs) == 1, rs[0], "robots.txt archived %d times"
                         % len(rs))
            continue
        for r in rs:
            bad.need(sitemapish(r), r, "a response record for a URL that "
                     "is not in --out and is neither robots.txt nor a "
                     "sitemap")
        bad.need(len(rs) == 1, rs[0], "archived %d times" % len(rs))
    if robots:
        hosts = {sitelib.origin_key(o["url"]) for o in outs}
        missing = [h for h in hosts if "http://%s/robots.txt" % h
                   not in v.responses]
        check(not missing, "%s: robots.txt archived for every host of "
              "--out (%d)%s" % (name, len(hosts),
                                "" if not missing else ": not " +
                                ", ".join(missing)))
    if seeks:
        got = warcio_read(reader, ["%s@%d" % (o["warc_file"],
                                              o["warc_offset"])
                                   for o, _ in seeks])
        for (o, r), g in zip(seeks, got):
            if "error" in g or \
                    g["warc"].get("warc-record-id") != \
                    r["warc"]["warc-record-id"] or \
                    not g["block_digest_ok"] or \
                    not (g["payload_digest_ok"] or
                         g["warc"].get("warc-type") == "revisit"):
                bad.add("--out %s: a reader seeking to %s@%s does not "
                        "read its record (%s)" % (
                            o["url"], o["warc_file"], o["warc_offset"],
                            g.get("error", "")[:300]))
        if len(got) != len(seeks):
            bad.add("%d seeks, %d records read" % (len(seeks), len(got)))
    return outs, len(seeks)


def check_stats(name, stats, files, framed, recs, gz):
    """--stats-json's "warc" object against the files."""
    s = read_stats(stats).get("warc")
    infos = sum(r["warc"].get("warc-type") == "warcinfo" for r in recs)
    total = sum(os.path.getsize(f) for f in files)
    plain = total if not gz else sum(
        len(gzip.decompress(open(f, "rb").read())) for f in files)
    check(isinstance(s, dict) and s.get("files") == len(files) and
          s.get("records") in (len(recs), len(recs) - infos) and
          s.get("bytes") in (total, plain),
          "%s: --stats-json warc %r: files %d, records %d (or %d without "
          "warcinfo), bytes %d (or %d uncompressed)" % (
              name, s, len(files), len(recs), len(recs) - infos, total,
              plain))


def warcinfo_text(rec):
    """The warcinfo block (warc_read.mjs gives no payload for it: read the
    record raw here, from the framing)."""
    with open(rec["file"], "rb") as f:
        f.seek(rec["offset"])
        data = f.read(1 << 20)
    if rec["file"].endswith(".gz"):
        data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data)
    end = data.find(b"\r\n\r\n")
    return data[end + 4:end + 4 + rec["content_length"]].decode(
        errors="replace")


def check_request(q, bad):
    """The request line and headers of a request record."""
    uri = q["warc"].get("warc-target-uri", "")
    u = urllib.parse.urlsplit(uri)
    target = (u.path or "/") + ("?" + u.query if u.query else "")
    line = http_line(q)
    parts = line.split(" ")
    bad.need(len(parts) == 3 and parts[0] == "GET" and parts[1] == target
             and parts[2].startswith("HTTP/1."), q,
             "request line %r for %s" % (line, target))
    h = http_headers(q)
    bad.need(h.get("user-agent") == UA, q, "User-Agent %r"
             % h.get("user-agent"))
    bad.need(h.get("host", "").lower() == u.netloc.lower(), q,
             "Host %r" % h.get("host"))


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y),
                min(len(a), len(b)))


PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def payload(rec):
    return base64.b64decode(rec.get("payload_b64", ""))


def content(rec):
    return base64.b64decode(rec.get("content_b64", ""))


# -- the sample site ----------------------------------------------------------

def sample_bodies(name, v, site):
    """Every archived body of a file route equals the file; redirects."""
    same = excepted = 0
    reasons = {}
    bad = []
    for uri, rs in sorted(v.responses.items()):
        for r in rs:
            status = (http_line(r).split(" ") + [""])[1]
            h = http_headers(r)
            if r["warc"].get("warc-truncated"):
                reasons["cut by --max-body"] = reasons.get(
                    "cut by --max-body", 0) + 1
                excepted += 1
                continue
            if r["warc"].get("warc-type") == "revisit":
                # Its body is its original's, compared there (and
                # resolve_revisits() checked they are the same payload).
                reasons["revisit"] = reasons.get("revisit", 0) + 1
                excepted += 1
                continue
            body = payload(r)
            if "content-encoding" in h or "transfer-encoding" in h:
                bad.append("%s: encoded (%s) though serve.py encodes nothing"
                           % (uri, h))
            if "content-length" in h and int(h["content-length"]) != len(body):
                bad.append("%s: Content-Length %s, %d bytes archived"
                           % (uri, h["content-length"], len(body)))
            route = site.route(uri)
            if route and route["kind"] == "redirect":
                loc = sitelib.with_port(route["location"], site.port)
                if status != str(route["status"]) or \
                        h.get("location") != loc:
                    bad.append("%s: %s Location %r, the route says %s %r"
                               % (uri, status, h.get("location"),
                                  route["status"], loc))
            want, why = site.expected(uri)
            if want is None:
                reasons[why] = reasons.get(why, 0) + 1
                excepted += 1
                continue
            if body != want or content(r) != want or status != "200":
                bad.append("%s: %s, %d bytes archived (warcio decodes %d), "
                           "the file has %d, first difference at byte %d"
                           % (uri, status, len(body), len(content(r)),
                              len(want), first_difference(body, want)))
            else:
                same += 1
    check(not bad and same > 0,
          "%s: %d archived bodies equal the files served, byte for byte; "
          "%d excepted (%s)%s" % (
              name, same, excepted,
              "; ".join("%s: %d" % kv for kv in sorted(reasons.items())),
              "" if not bad else ":\n  " + "\n  ".join(bad[:20])))


def sample(reader, sitedir, work, version):
    d = os.path.join(work, "sample")
    os.makedirs(d)
    runs = [("gz", "site.warc.gz", {}),
            ("plain", "site.warc", {}),
            ("rotate", "rot.warc.gz", {"warc_max_size": "48K"})]
    for label, warc, over in runs:
        log = os.path.join(d, label + ".access.log")
        out = os.path.join(d, label + ".out.jsonl")
        stats = os.path.join(d, label + ".stats.json")
        path = os.path.join(d, warc)
        site = SampleSite(sitedir, log)
        try:
            r = Run([CRAWL, "--warc", path, "--out", out, "--stats-json",
                     stats, *site_options(**over), *site.args], d, label)
            r.wait()
        finally:
            site.stop()
        name = "sample/" + label
        if not check(r.rc == FINISHED_RC and r.sane(), "%s: crawl --warc %s "
                     "exits %d (%s)" % (name, warc, FINISHED_RC, r.rc)):
            print(r.tail())
            continue
        rc, report = run_checker(sitedir, log, out)
        if not check(rc == 0, "%s: check_crawl passes: the WARC does not "
                     "change the crawl" % name):
            print(report)
        files = warc_files(path, "warc_max_size" in over)
        v = verify(name, reader, files, out, version, gz=warc.endswith(".gz"),
                   stats=stats)
        if v is None:
            continue
        sample_bodies(name, v, site)
        if label == "rotate":
            rotation(name, files)


def rotation(name, files):
    """warc.h's rule: a record goes to the next file when the current one
    holds a record besides its warcinfo and has reached the size, except
    a response ended right after its request (WARC-Concurrent-To naming
    it), which stays beside it: each file holds whole request/response
    pairs, and is under the size before its last pair."""
    sizes = [(os.path.getsize(f), frame(f)) for f in files]
    ok = len(files) > 2
    why = []
    for i, (size, recs) in enumerate(sizes):
        if len(recs) < 3:
            ok = False
            why.append("%s holds %d records" % (files[i], len(recs)))
            continue
        after = recs[1:]
        types = [r[2].get("warc-type") for r in after]
        pairs = len(after) % 2 == 0 and all(
            types[k] == "request" and
            types[k + 1] in ("response", "revisit") and
            after[k + 1][2].get("warc-concurrent-to") ==
            after[k][2].get("warc-record-id")
            for k in range(0, len(after), 2))
        if not pairs:
            ok = False
            why.append("%s: records %s, not request/response pairs" % (
                os.path.basename(files[i]), types))
        if i < len(sizes) - 1:
            last = recs[-1][1] + recs[-2][1]
            if not (size >= ROTATE and size - last < ROTATE):
                ok = False
                why.append("%s: %d bytes, its last pair %d" % (
                    os.path.basename(files[i]), size, last))
    check(ok, "%s: %d files NAME-00000.warc.gz...; each but the last holds "
          ">= %d bytes and < %d before its last pair; each whole "
          "request/response pairs besides its warcinfo%s" % (
              name, len(files), ROTATE, ROTATE,
              "" if ok else ": " + "; ".join(why)))


# -- a real documentation tree ----------------------------------------------

NGINX_CONF = """daemon off;
master_process off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx.error.log;
events {{ worker_connections 256; }}
http {{
    {types}
    default_type application/octet-stream;
    access_log {work}/nginx.access.log;
    client_body_temp_path {work}/tmp/body;
    proxy_temp_path {work}/tmp/proxy;
    fastcgi_temp_path {work}/tmp/fastcgi;
    uwsgi_temp_path {work}/tmp/uwsgi;
    scgi_temp_path {work}/tmp/scgi;
    gzip on;
    gzip_min_length 1;
    gzip_types text/css text/plain text/xml application/javascript
               application/json application/xml image/svg+xml;
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {root};
        index index.html;
    }}
}}
"""


def doc_server(root, work):
    """(process, port, kind): nginx with gzip on, else python3 -m
    http.server; None when neither starts."""
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx:
        os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
        types = "include /etc/nginx/mime.types;" if os.path.exists(
            "/etc/nginx/mime.types") else \
            "types { text/html html htm; text/css css; " \
            "application/javascript js; image/png png; image/svg+xml svg; }"
        for _ in range(5):
            port = free_port()
            conf = os.path.join(work, "nginx.conf")
            with open(conf, "w") as f:
                f.write(NGINX_CONF.format(work=work, port=port, root=root,
                                          types=types))
            p = subprocess.Popen([nginx, "-c", conf, "-p", work, "-e",
                                  os.path.join(work, "nginx.error.log")],
                                 stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            if wait_port(port, p):
                return p, port, "nginx (gzip on)"
            stop(p)
        print("note: nginx did not start (%s); python3 -m http.server "
              "instead" % os.path.join(work, "nginx.error.log"))
    p = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0",
                          "--bind", "127.0.0.1", "--directory", root],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True)
    m = re.search(r"port (\d+)", p.stdout.readline())
    if not m:
        stop(p)
        return None
    return p, int(m.group(1)), "python3 -m http.server (no gzip)"


def docs(reader, work, version):
    root = next((t for t in DOC_TREES if os.path.isfile(
        os.path.join(t, "index.html"))), None)
    if root is None:
        print("skip: docs: none of %s is installed (scripts/deps.sh test "
              "installs them)" % ", ".join(DOC_TREES))
        return
    d = os.path.join(work, "docs")
    os.makedirs(d)
    server = doc_server(root, d)
    if not check(server is not None, "docs: a server for %s starts" % root):
        return
    proc, port, kind = server
    print("docs: %s served by %s on 127.0.0.1:%d" % (root, kind, port))
    out, stats = os.path.join(d, "out.jsonl"), os.path.join(d, "stats.json")
    path = os.path.join(d, "docs.warc.gz")
    try:
        r = Run([CRAWL, "--warc", path, "--out", out, "--stats-json", stats,
                 "--quiet", "--delay", "0", "--concurrency", str(CONC),
                 "--per-host", str(CONC), "--max-pages", str(DOC_PAGES),
                 "--user-agent", UA, "--max-body", "20000000",
                 "http://127.0.0.1:%d/index.html" % port], d, "docs")
        r.wait()
    finally:
        stop(proc)
    if not check(r.rc == 0 and r.sane(), "docs: crawl --warc of %d pages "
                 "exits 0 (%s)" % (DOC_PAGES, r.rc)):
        print(r.tail())
        return
    v = verify("docs", reader, warc_files(path, False), out, version,
               stats=stats)
    if v is None:
        return
    same, gzipped, html, bad, skipped = 0, 0, 0, [], 0
    by_id = {r["warc"].get("warc-record-id"): r for r in v.records}
    for uri, rs in sorted(v.responses.items()):
        r = rs[0]
        status = (http_line(r).split(" ") + [""])[1]
        if r["warc"].get("warc-type") == "revisit":
            # Issue 24: the body its original holds (the same payload:
            # resolve_revisits()), with the original's coding.
            r = by_id[r["warc"]["warc-refers-to"]]
        u = urllib.parse.urlsplit(uri)
        rel = urllib.parse.unquote(u.path).lstrip("/")
        if status != "200" or u.path == "/robots.txt":
            skipped += 1
            continue
        if rel == "" or rel.endswith("/"):
            rel += "index.html"
        disk = os.path.join(root, rel)
        if not os.path.isfile(disk):
            bad.append("%s: 200 but no file %s" % (uri, disk))
            continue
        with open(disk, "rb") as f:
            want = f.read()
        h = http_headers(r)
        body = payload(r)
        if h.get("transfer-encoding", "").lower() == "chunked":
            body = dechunk(body) if dechunk(body) is not None else body
        enc = h.get("content-encoding", "").lower()
        try:
            if enc == "gzip":
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
                gzipped += 1
            elif enc:
                bad.append("%s: Content-Encoding %s" % (uri, enc))
                continue
        except zlib.error as e:
            bad.append("%s: gzip body does not inflate: %s" % (uri, e))
            continue
        if rel.endswith(".html"):
            html += 1
        if body == want and content(r) == want:
            same += 1
        else:
            bad.append("%s: %d bytes decoded here, %d by warcio, the file "
                       "%d, first difference at byte %d" % (
                           uri, len(body), len(content(r)), len(want),
                           first_difference(body, want)))
    check(not bad and same >= DOC_PAGES // 2,
          "docs: %d archived bodies (%d of them gzip-encoded) equal the "
          "files on disk byte for byte once decoded, here and by warcio.js; "
          "%d not 200 or robots.txt%s" % (
              same, gzipped, skipped,
              "" if not bad else ":\n  " + "\n  ".join(bad[:20])))
    if kind.startswith("nginx"):
        check(gzipped >= html // 2 and gzipped > 0,
              "docs: nginx's gzip answers are archived gzip-encoded (%d of "
              "%d HTML pages): the payload is kept before content decoding"
              % (gzipped, html))


# -- kill -9 and resume -------------------------------------------------------

def kill_series(reader, sitedir, work, version, label, kills, over, seed):
    d = os.path.join(work, label)
    os.makedirs(d)
    rng = random.Random(seed)
    state, out, stats, log = (os.path.join(d, n) for n in (
        "state", "out.jsonl", "stats.json", "access.log"))
    path = os.path.join(d, "crawl.warc.gz")
    rotating = "warc_max_size" in over
    site = SampleSite(sitedir, log)
    landed = 0
    try:
        cmd = [CRAWL, "--state", state, "--warc", path, "--out", out,
               "--stats-json", stats, *site_options(**over), *site.args]
        for i in range(kills):
            r = Run(cmd, d, "run%d" % i)
            how = rng.choice(["delay", "grew"])
            until = time.monotonic() + rng.uniform(0.05, 0.6)
            grow = rng.randint(1, 40000)
            base = sum(os.path.getsize(f) for f in
                       warc_files(path, rotating)) if i else 0
            while r.poll() is None:
                if how == "delay" and time.monotonic() >= until:
                    break
                if how == "grew":
                    now = sum(os.path.getsize(f) for f in
                              warc_files(path, rotating))
                    if now - base >= grow:
                        break
                    if time.monotonic() >= until + 5:
                        break
                time.sleep(0.002)
            if r.poll() is None:
                r.proc.send_signal(signal.SIGKILL)
                landed += 1
            r.wait()
            if r.rc not in (-signal.SIGKILL, FINISHED_RC) or \
                    SANITIZER.search(r.stderr()):
                check(False, "%s: run %d: killed or exit %d (%s)" % (
                    label, i, FINISHED_RC, r.rc))
                print(r.tail())
                return
            if r.rc == FINISHED_RC:
                break
        final = Run(cmd, d, "final")
        final.wait()
    finally:
        site.stop()
    if not check(final.rc == FINISHED_RC and final.sane(),
                 "%s: %d kills landed; the same command resumes to the end: "
                 "exit %d (%s)" % (label, landed, FINISHED_RC, final.rc)):
        print(final.tail())
        return
    bound = CONC * max(landed, 1)
    rc, report = run_checker(sitedir, log, out,
                             ["--refetch-tolerance", str(bound)])
    if not check(rc == 0, "%s: check_crawl passes with --refetch-tolerance "
                 "%d" % (label, bound)):
        print(report)
    verify(label, reader, warc_files(path, rotating), out, version,
           resumed=True)


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    helptext = subprocess.run([CRAWL, "--help"], capture_output=True,
                              text=True).stdout
    if not check("--warc" in helptext and "--warc-max-size" in helptext,
                 "crawl --help documents --warc FILE and --warc-max-size "
                 "(issue 13)"):
        return summary() or 1
    version = subprocess.run([CRAWL, "--version"], capture_output=True,
                             text=True).stdout.split()[-1]
    reader = setup_warcio(os.path.join(WORKDIR, "warcio"))
    print("e2e_warc: seed %d (again: %s %s %s %d)" % (
        SEED, sys.argv[0], BIN, WORKDIR, SEED))
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bc_warc.") as work:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", str(PAGES)], check=True,
                       capture_output=True)
        parts = Parts()

        def part(name, fn, *args):
            if name.split("-")[0] in PARTS:
                parts.run(name, fn, *args)

        part("sample", sample, reader, sitedir, work, version)
        part("docs", docs, reader, work, version)
        part("kill9", kill_series, reader, sitedir, work, version, "kill9",
             6, {}, SEED)
        part("kill9-rotate", kill_series, reader, sitedir, work, version,
             "kill9-rotate", 4, {"warc_max_size": "48K"}, SEED + 1)
    print("times: %s; total %.1f s" % (", ".join(parts.times),
                                       time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
