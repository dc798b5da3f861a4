#!/usr/bin/env python3
"""gen_static_site.py - a large static site for the crawl benchmark.

    python3 bench/gen_static_site.py OUTDIR --port PORT [--pages 20000]
                                            [--seed 1] [--hosts P1,P2,...]

Writes OUTDIR/www/ (the document root, one file per page, served as static
files by nginx on http://127.0.0.1:PORT/) and OUTDIR/expected.txt (the path
of every reachable page, one per line, sorted) and OUTDIR/site.json (page
count, link count, bytes, the deepest page's depth).

Why not examples/site/gensite.py: its site lives on three name-based
virtual hosts (www.bloomcrawl.test, ...) that a crawler reaches with
``--resolve``; wget2 has no such option and the benchmark may not edit
/etc/hosts.  Its redirects, trap, slow and huge pages also need serve.py's
dynamic routes, and its deliberately odd spellings (``%7E``, ``%2E%2E``,
backslashes, TAB inside hrefs) are normalized differently by wget2, so the
two crawlers would not fetch the same page set.  This site keeps what
makes a crawl's seen-test busy -- navigation and "popular" links repeated
on every page, paginated listings and tag pages that list every article,
articles linking to each other, the same URL written many ways -- with only
spellings that RFC 3986 resolution plus dropping the fragment makes equal,
which both crawlers implement: absolute URL, absolute path, relative path,
``./`` and ``../`` paths, and a ``#fragment`` on any of them.  Every link
is an ``<a href>`` or a ``<link rel=canonical|next|prev>`` (no images,
stylesheets or scripts: wget2's recursive mode would fetch those and
bloomcrawl by design does not).  Every page is HTML with status 200; there
are no redirects (directory links always end in ``/``) and no broken links.

The site (N = --pages articles; about N + N/50 + 3N/50 + tags + 3 pages):
    /                              home: listing page 1 teaser, tag cloud
    /about.html, /tags/            about page, index of every tag
    /list/, /list/page/K/          K = 2..N/50: 50 articles each, a pager
                                   (first, last, +-1, +-2, +-10, +-100)
    /tags/T/, /tags/T/page/K/      each tag's articles, 50 a page, pager
    /articles/SSS/slug-NNNNN.html  N articles in N/100 directories: nav,
                                   3 tags, prev/next, 8 related, 5 popular,
                                   canonical, ~3 KiB of text
Deterministic: the same seed, pages and port give the same bytes.

--hosts P1,P2,... (the crawl-workers benchmark, bench/bench_workers.sh):
the same files are served on every one of these ports (--port is one of
them), so each port is a host of its own; a link spelled as an absolute
URL points at the host chosen by the CRC-32 of its path
(P[crc32(path) mod count]), so about 15 % of the links cross hosts, as on a
web of many sites.  expected-urls.txt then lists every reachable
(host, path) as a URL, from a crawl seeded with every host's "/".  Without
--hosts the bytes are those of a one-host site, as before.
"""

import argparse
import collections
import json
import os
import random
import sys
import zlib

WORDS = """bloom filter hash crawl frontier queue seen test url host robots
politeness lru cache bit array probe shard merge spider trap redirect link
anchor page index sitemap escape domain scheme query fragment segment path
delay budget depth fetch parse stream chunk gzip socket server client
""".split()
PER_PAGE = 50     # articles per listing / tag page
PER_DIR = 100     # articles per /articles/SSS/ directory
N_TAGS = 100


def relpath(from_path, to_path):
    """A relative reference from the document at from_path to to_path."""
    fdir = from_path.split("/")[1:-1]
    tparts = to_path.split("/")[1:]
    k = 0
    while k < len(fdir) and k < len(tparts) - 1 and fdir[k] == tparts[k]:
        k += 1
    rel = "../" * (len(fdir) - k) + "/".join(tparts[k:])
    return rel if rel else "./"


class Site:
    def __init__(self, npages, port, seed, ports=None):
        self.n, self.port = npages, port
        self.rng = random.Random(seed)
        self.origin = "http://127.0.0.1:%d" % port
        self.origins = ["http://127.0.0.1:%d" % p for p in ports or [port]]
        self.pages = {}   # path -> (title, [(kind, target path)], text)
        self.slugs = ["%s-%s-%05d" % (self.rng.choice(WORDS),
                                      self.rng.choice(WORDS), i)
                      for i in range(npages)]
        self.tags = ["%s-%02d" % (WORDS[i % len(WORDS)], i)
                     for i in range(N_TAGS)]
        self.art_tags = [self.rng.sample(range(N_TAGS), 3)
                         for _ in range(npages)]
        self.popular = self.rng.sample(range(npages), 5)

    def art(self, i):
        return "/articles/%03d/%s.html" % (i // PER_DIR, self.slugs[i])

    @staticmethod
    def listing(prefix, k):
        return prefix if k == 1 else "%spage/%d/" % (prefix, k)

    def pager(self, links, prefix, k, last):
        for d in (-100, -10, -2, -1, 1, 2, 10, 100):
            if 1 <= k + d <= last:
                links.append(("a", self.listing(prefix, k + d)))
        for j in (1, last):
            if j != k:
                links.append(("a", self.listing(prefix, j)))
        if k > 1:
            links.append(("prev", self.listing(prefix, k - 1)))
        if k < last:
            links.append(("next", self.listing(prefix, k + 1)))

    def nav(self):
        return [("a", "/"), ("a", "/list/"), ("a", "/tags/"),
                ("a", "/about.html")]

    def text(self, rng, words):
        ws, out, i = rng.choices(WORDS, k=words), [], 0
        while i < words:
            k = rng.randint(40, 90)
            out.append(" ".join(ws[i:i + k]).capitalize() + ".")
            i += k
        return out

    def build(self):
        n, rng = self.n, self.rng
        n_list = max(1, (n + PER_PAGE - 1) // PER_PAGE)
        # home: the first listing page
        links = self.nav() + [("a", self.art(i)) for i in range(min(n, 20))]
        links += [("a", "/tags/%s/" % t) for t in self.tags[:30]]
        self.pages["/"] = ("bloomcrawl benchmark site", links,
                           self.text(rng, 120))
        self.pages["/about.html"] = ("About", self.nav(), self.text(rng, 300))
        self.pages["/tags/"] = ("Tags", self.nav() + [
            ("a", "/tags/%s/" % t) for t in self.tags], [])
        # the list of all articles, newest first
        for k in range(1, n_list + 1):
            lo = (k - 1) * PER_PAGE
            links = self.nav() + [("a", self.art(i))
                                  for i in range(lo, min(n, lo + PER_PAGE))]
            self.pager(links, "/list/", k, n_list)
            self.pages[self.listing("/list/", k)] = (
                "Articles, page %d" % k, links, [])
        # one paginated listing per tag
        by_tag = collections.defaultdict(list)
        for i, ts in enumerate(self.art_tags):
            for t in ts:
                by_tag[t].append(i)
        for t, name in enumerate(self.tags):
            arts = by_tag[t]
            last = max(1, (len(arts) + PER_PAGE - 1) // PER_PAGE)
            prefix = "/tags/%s/" % name
            for k in range(1, last + 1):
                chunk = arts[(k - 1) * PER_PAGE:k * PER_PAGE]
                links = self.nav() + [("a", self.art(i)) for i in chunk]
                self.pager(links, prefix, k, last)
                self.pages[self.listing(prefix, k)] = (
                    "Tag %s, page %d" % (name, k), links, [])
        # the articles
        for i in range(n):
            links = self.nav() + [("canonical", self.art(i))]
            links += [("a", "/tags/%s/" % self.tags[t])
                      for t in self.art_tags[i]]
            for j in (i - 1, i + 1):
                if 0 <= j < n:
                    links.append(("a", self.art(j)))
            # related: mostly nearby (same or next directory), some anywhere
            for _ in range(8):
                if rng.random() < 0.6:
                    j = min(n - 1, max(0, i + rng.randint(-150, 150)))
                else:
                    j = rng.randrange(n)
                links.append(("a", self.art(j)))
            links += [("a", self.art(j)) for j in self.popular]
            self.pages[self.art(i)] = (
                self.slugs[i].replace("-", " ").title(), links,
                self.text(rng, rng.randint(350, 650)))

    def host_for(self, target):
        """The origin an absolute link to target names (--hosts)."""
        if len(self.origins) == 1:
            return self.origin
        return self.origins[zlib.crc32(target.encode()) % len(self.origins)]

    def spelled(self, path):
        """The links of page path as rendered: (kind, target, href)."""
        rng = random.Random("%d|%s" % (self.n, path))
        return [(kind, target, self.spell(rng, path, target))
                for kind, target in self.pages[path][1]]

    def reachable_urls(self):
        """Every (origin, path) reachable from each origin's "/", as URLs:
        a relative link stays on its page's host, an absolute one goes
        to the host it names."""
        seen = set((o, "/") for o in self.origins)
        queue = collections.deque(seen)
        while queue:
            origin, p = queue.popleft()
            for _, target, href in self.spelled(p):
                o = self.host_for(target) if href.startswith("http") else origin
                if (o, target) not in seen:
                    seen.add((o, target))
                    queue.append((o, target))
        return sorted(o + p for o, p in seen)

    def spell(self, rng, base, target):
        """One of the spellings of target on page base (all RFC 3986-equal)."""
        r = rng.random()
        if r < 0.40:
            href = relpath(base, target)
        elif r < 0.70:
            href = target
        elif r < 0.85:
            href = self.host_for(target) + target
        else:
            rel = relpath(base, target)
            href = rel if rel.startswith(".") else "./" + rel
        if rng.random() < 0.1:
            href += "#" + rng.choice(WORDS)
        return href

    def render(self, path):
        title, _, text = self.pages[path]
        h = ['<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">'
             '\n<title>%s</title>\n' % title]
        body = []
        for kind, target, href in self.spelled(path):
            if kind == "a":
                words = [w for w in target.split("/") if w]
                body.append('<li><a href="%s">%s</a></li>\n'
                            % (href, words[-1] if words else "home"))
            else:
                h.append('<link rel="%s" href="%s">\n' % (kind, href))
        h.append('</head>\n<body>\n<h1>%s</h1>\n<nav><ul>\n' % title)
        h.extend(body)
        h.append("</ul></nav>\n<article>\n")
        h.extend("<p>%s</p>\n" % p for p in text)
        h.append("</article>\n<footer><p>bloomcrawl benchmark site</p>"
                 "</footer>\n</body>\n</html>\n")
        return "".join(h)

    def depths(self):
        """Breadth-first depth of every page from / (the crawl's seed)."""
        depth, queue = {"/": 0}, collections.deque(["/"])
        while queue:
            p = queue.popleft()
            for _, t in self.pages[p][1]:
                if t not in depth:
                    depth[t] = depth[p] + 1
                    queue.append(t)
        return depth


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pages", type=int, default=20000,
                    help="number of articles (default 20000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hosts", default="",
                    help="ports serving the same files (--port among them)")
    a = ap.parse_args()
    if a.pages < 1 or not 0 < a.port < 65536:
        ap.error("--pages must be >= 1 and --port in 1..65535")
    try:
        ports = [int(p) for p in a.hosts.split(",")] if a.hosts else None
    except ValueError:
        ap.error("--hosts: a comma-separated list of ports")
    if ports and (a.port not in ports or not all(0 < p < 65536 for p in ports)):
        ap.error("--hosts must list ports in 1..65535, --port among them")
    site = Site(a.pages, a.port, a.seed, ports)
    site.build()
    depth = site.depths()
    missing = set(site.pages) - set(depth)
    if missing:
        sys.exit("gen_static_site: unreachable pages: %s" % sorted(missing)[:5])
    root = os.path.join(a.outdir, "www")
    total_bytes = total_links = 0
    for path in site.pages:
        fs = path + "index.html" if path.endswith("/") else path
        f = os.path.join(root, fs.lstrip("/"))
        os.makedirs(os.path.dirname(f), exist_ok=True)
        data = site.render(path).encode()
        with open(f, "wb") as fh:
            fh.write(data)
        total_bytes += len(data)
        total_links += len(site.pages[path][1])
    with open(os.path.join(a.outdir, "expected.txt"), "w") as fh:
        fh.write("".join(p + "\n" for p in sorted(site.pages)))
    if ports:
        urls = site.reachable_urls()
        with open(os.path.join(a.outdir, "expected-urls.txt"), "w") as fh:
            fh.write("".join(u + "\n" for u in urls))
    info = {"origin": site.origin, "articles": a.pages,
            "pages": len(site.pages), "links": total_links,
            "bytes": total_bytes, "max_depth": max(depth.values()),
            "seed": a.seed}
    with open(os.path.join(a.outdir, "site.json"), "w") as fh:
        json.dump(info, fh, indent=1)
        fh.write("\n")
    print("gen_static_site: %d pages (%d articles), %d links, %.1f MiB, "
          "max depth %d" % (info["pages"], a.pages, total_links,
                            total_bytes / 1048576, info["max_depth"]),
          file=sys.stderr)


if __name__ == "__main__":
    main()
