#!/usr/bin/env python3
"""refcrawl.py - a small reference crawler for the sample site, in Python.

    python3 examples/site/refcrawl.py --port N --out OUT.jsonl
        [--scope domain] [--max-depth 20] [--max-pages 10000]
        [--timeout 1.0] [--max-bytes 1048576] [--user-agent UA] SEED...

Not the product (that is examples/crawl.c): a slow, sequential, obviously
correct crawler that follows docs/DESIGN.md, so that site_selftest.py can show
that a correct crawl passes check_crawl.py -- and that the site, the
manifest and the checker agree with each other before the C crawler
exists.  It does what docs/DESIGN.md asks, in the plainest way:

- every URL goes through sitelib.normalize (docs/DESIGN.md 3.1) and an exact
  seen set (the C crawler has the Bloom filter and the LRU);
- robots.txt first for every host (2xx parse, 4xx allow all, 5xx and
  network errors disallow all), judged for the product token of the user
  agent;
- scope by host or registrable domain (here: the last two labels) or any;
- links from text/html only, with html.parser: a/area href, iframe/frame
  src, link rel=canonical/alternate/next/prev, <base href>, meta robots
  nofollow, rel=nofollow; script text and comments are not markup;
- redirects are not followed by the HTTP client: the Location is a
  discovered URL, one level deeper, like any link;
- a per-request timeout and a body limit that abort the transfer and
  report an error;
- sitemaps (unless --no-sitemaps), once a host's robots.txt is known: its
  Sitemap: lines (pages anywhere on the host), or /sitemap.xml (pages
  under its directory), each index's sitemaps on its own origin, two
  levels of index at most, each sitemap once; a body that starts with the
  gzip magic is inflated (at most 50 MiB), one with a <!DOCTYPE is
  refused; the <loc>s found before a body goes wrong are kept.  Listed
  pages are queued at depth 0 (after the sitemap URL itself has entered
  the seen set: a link to it is not a page).

Every host is reached at 127.0.0.1:PORT with its name in the Host header
(what ``crawl --resolve HOST:PORT:127.0.0.1`` does); the crawler never
connects anywhere else.
"""

import argparse
import collections
import re
import zlib
import html.parser
import http.client
import json
import os
import socket
import sys
import time

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitelib  # noqa: E402
from sitelib import normalize, split_url  # noqa: E402

HTML_TYPES = ("text/html", "application/xhtml+xml")
LINK_RELS = {"canonical", "alternate", "next", "prev"}


class LinkParser(html.parser.HTMLParser):
    """Collect (href, base) pairs the way docs/DESIGN.md 4 says."""

    def __init__(self, url):
        super().__init__(convert_charrefs=True)
        self.base = url
        self.links = []       # (href, base in force)
        self.nofollow = False

    def handle_starttag(self, tag, attrs):
        at = {k: (v if v is not None else "") for k, v in attrs}
        rel = set(at.get("rel", "").lower().split())
        if tag == "base" and "href" in at and self.base_fixed is False:
            try:
                self.base = normalize(at["href"], self.base)
                self.base_fixed = True
            except sitelib.URLError:
                pass
        elif tag == "meta" and at.get("name", "").lower() == "robots":
            words = {w.strip() for w in at.get("content", "").lower()
                     .split(",")}
            if "nofollow" in words or "none" in words:
                self.nofollow = True
        elif tag in ("a", "area") and "href" in at:
            if "nofollow" not in rel:
                self.links.append((at["href"], self.base))
        elif tag in ("iframe", "frame") and "src" in at:
            self.links.append((at["src"], self.base))
        elif tag == "link" and "href" in at and rel & LINK_RELS:
            if "nofollow" not in rel:
                self.links.append((at["href"], self.base))

    base_fixed = False

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)


def extract_links(body, url):
    """Canonical URLs a crawler must follow from an HTML body at url."""
    p = LinkParser(url)
    p.feed(body.decode("utf-8", "replace"))
    p.close()
    if p.nofollow:
        return []
    out = []
    for href, base in p.links:
        try:
            out.append(normalize(href, base))
        except sitelib.URLError:
            pass
    return out


class Fetcher:
    """One kept-alive connection per host, all to 127.0.0.1:port."""

    def __init__(self, port, ua, timeout, max_bytes):
        self.port, self.ua = port, ua
        self.timeout, self.max_bytes = timeout, max_bytes
        self.conns = {}

    def fetch(self, url, keep_partial=False):
        """-> dict(status, content_type, body, location, error).
        keep_partial: a body over the limit is cut there, not an error."""
        _, host, port, target = split_url(url)
        key = (host, port)
        res = dict(status=0, content_type=None, body=b"", location=None,
                   error=None)
        for attempt in (0, 1):  # a kept-alive connection may have closed
            conn = self.conns.get(key)
            if conn is None:
                conn = http.client.HTTPConnection("127.0.0.1", self.port,
                                                  timeout=self.timeout)
                self.conns[key] = conn
            try:
                conn.putrequest("GET", target, skip_host=True,
                                skip_accept_encoding=True)
                conn.putheader("Host", "%s:%d" % (host, port or 80))
                conn.putheader("User-Agent", self.ua)
                conn.endheaders()
                resp = conn.getresponse()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError) as e:
                conn.close()
                del self.conns[key]
                if attempt:
                    res["error"] = "connection: %s" % e
                    return res
            except (socket.timeout, OSError) as e:
                conn.close()
                del self.conns[key]
                res["error"] = "timeout" if isinstance(
                    e, socket.timeout) else "connection: %s" % e
                return res
        res["status"] = resp.status
        res["content_type"] = resp.getheader("Content-Type")
        res["location"] = resp.getheader("Location")
        length = resp.getheader("Content-Length")
        try:
            if length is not None and int(length) > self.max_bytes and \
                    not keep_partial:
                raise OverflowError
            body = resp.read(self.max_bytes + 1)
            if len(body) > self.max_bytes:
                if not keep_partial:
                    raise OverflowError
                body = body[:self.max_bytes]
                conn.close()
                del self.conns[key]
            res["body"] = body
        except OverflowError:
            res["error"] = "too large: body over %d bytes" % self.max_bytes
            conn.close()
            del self.conns[key]
        except (socket.timeout, OSError) as e:
            res["error"] = "timeout" if isinstance(e, socket.timeout) else \
                "connection: %s" % e
            conn.close()
            del self.conns[key]
        return res


def in_scope(scope, seeds, url):
    if scope == "any":
        return True
    h = split_url(url)[1]
    for s in seeds:
        sh = split_url(s)[1]
        if scope == "host" and sitelib.origin_key(s) == \
                sitelib.origin_key(url):
            return True
        if scope == "domain" and sh.split(".")[-2:] == h.split(".")[-2:]:
            return True
    return False


SITEMAP_MAX_XML = 50 << 20
SITEMAP_MAX_LEVEL = 2
LOC_RE = re.compile(r"<(sitemap|url)>.*?<loc>\s*(.*?)\s*</loc>", re.S)


def sitemap_locs(body):
    """(kind, [loc]) of a sitemap body: kind "index" or "urlset"."""
    if body[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = d.decompress(body, SITEMAP_MAX_XML)
        except zlib.error:
            body = b""
    text = body[:SITEMAP_MAX_XML].decode("utf-8", "replace")
    if "<!DOCTYPE" in text:
        return "refused", []
    kind = "index" if "<sitemapindex" in text else "urlset"
    want = "sitemap" if kind == "index" else "url"
    return kind, [html.unescape(loc) for k, loc in LOC_RE.findall(text)
                  if k == want]


def sitemaps_of(f, host_url, rb, allowed, in_scope_fn, seen_sm):
    """The page URLs the sitemaps of a host list (docs/DESIGN.md)."""
    origin = host_url.split("/", 3)
    root = origin[0] + "//" + origin[2] + "/"
    named = rb.sitemaps if rb else []
    queue = []
    for x in named:
        try:
            queue.append((normalize(x, root + "robots.txt"), 0, True, root))
        except sitelib.URLError:
            pass
    if not named:
        queue.append((root + "sitemap.xml", 0, False, root))
    pages = []
    for url, level, is_named, prefix in queue:
        if url in seen_sm or level > SITEMAP_MAX_LEVEL or \
                not in_scope_fn(url) or not allowed(url):
            continue
        seen_sm.add(url)
        r = f.fetch(url, keep_partial=True)
        if r["error"] and not r["body"] or not 200 <= r["status"] < 300:
            continue
        kind, locs = sitemap_locs(r["body"])
        for loc in locs:
            try:
                v = normalize(loc, url)
            except sitelib.URLError:
                continue
            if kind == "index":
                if sitelib.origin_key(v) == sitelib.origin_key(url):
                    queue.append((v, level + 1, is_named, prefix if is_named
                                  else v[:v.rindex("/") + 1]))
            elif v.startswith(prefix):
                pages.append(v)
    return pages


def crawl(a):
    token = a.user_agent.split("/")[0].split()[0]
    f = Fetcher(a.port, a.user_agent, a.timeout, a.max_bytes)
    seeds = [normalize(s) for s in a.seeds]
    seen = set(seeds)
    queue = collections.deque((s, 0) for s in seeds)
    robots = {}
    seen_sm = set()
    n = 0
    stats = collections.Counter()
    with open(a.out, "w", encoding="utf-8") as out:
        while queue and n < a.max_pages:
            url, depth = queue.popleft()
            origin = sitelib.origin_key(url)
            if origin not in robots:
                r = f.fetch(url.split("/", 3)[0] + "//" +
                            url.split("/", 3)[2] + "/robots.txt")
                if r["error"] or r["status"] >= 500:
                    robots[origin] = False  # unreachable: disallow all
                elif 200 <= r["status"] < 300:
                    robots[origin] = sitelib.Robots(
                        r["body"].decode("utf-8", "replace"))
                else:
                    robots[origin] = None   # unavailable: allow all
                rb = robots[origin]
                if rb is not False and not a.no_sitemaps:
                    def ok(v, rb=rb):
                        return rb is None or rb.allowed(
                            token, split_url(v)[3])
                    for v in sitemaps_of(
                            f, url, rb, ok,
                            lambda v: in_scope(a.scope, seeds, v), seen_sm):
                        if v in seen or not in_scope(a.scope, seeds, v) \
                                or not ok(v):
                            continue
                        seen.add(v)
                        queue.append((v, 0))
                    seen.update(seen_sm)
            rb = robots[origin]
            path = split_url(url)[3]
            if rb is False or (rb is not None and not rb.allowed(token, path)):
                stats["robots"] += 1
                continue
            t0 = time.monotonic()
            r = f.fetch(url)
            n += 1
            links = []
            if r["status"] in (301, 302, 303, 307, 308) and r["location"]:
                links = [r["location"]]
                try:
                    links = [normalize(r["location"], url)]
                except sitelib.URLError:
                    links = []
            elif not r["error"] and (r["content_type"] or "").split(";")[0] \
                    .strip().lower() in HTML_TYPES and r["status"] == 200:
                links = extract_links(r["body"], url)
            rec = {"url": url, "status": r["status"], "depth": depth,
                   "bytes": len(r["body"]),
                   "content_type": r["content_type"], "links": len(links),
                   "ms": round((time.monotonic() - t0) * 1000, 1)}
            if r["error"]:
                rec["error"] = r["error"]
            out.write(json.dumps(rec) + "\n")
            if depth >= a.max_depth:
                continue
            for v in links:
                if v in seen or not in_scope(a.scope, seeds, v):
                    continue
                seen.add(v)
                queue.append((v, depth + 1))
    print("refcrawl: %d pages, %d skipped by robots.txt, %d queued left" % (
        n, stats["robots"], len(queue)), file=sys.stderr)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seeds", nargs="+")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--scope", choices=("host", "domain", "any"),
                    default="domain")
    ap.add_argument("--max-depth", type=int, default=20)
    ap.add_argument("--max-pages", type=int, default=100000)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--max-bytes", type=int, default=1 << 20)
    ap.add_argument("--no-sitemaps", action="store_true")
    ap.add_argument("--user-agent",
                    default="bloomcrawl/0.1 (refcrawl; +test)")
    return crawl(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
