#!/usr/bin/env python3
"""gen_url_corpus.py - a seeded corpus of (base URL, href) pairs for bench_url.

Usage: bench/gen_url_corpus.py [--pairs N] [--seed S] > corpus.tsv
       bench/gen_url_corpus.py --lines N [--seed S] > urls.txt

Writes one pair per line, "base<TAB>href". The pairs come in pages: a base
URL followed by the links found on that page (20 to 120 of them), as a
crawler meets them, so a normalizer may parse each base once. The mix
follows what link extraction on real HTML gives: mostly relative and
root-relative links, absolute links to the same and other hosts in mixed
case, dot-segments, escapes (some of unreserved characters, some lowercase
hex, some stray '%'), spaces and non-ASCII bytes that need encoding, ports
(default and not), queries with tracking parameters, fragments, a few IDN
and IP-literal hosts, and a few links that are not http(s) at all
(mailto:, javascript:, tel:). Python 3 standard library only; the same
seed gives the same file.

With --lines N it writes N absolute URLs, one per line, for urldedup: a
crawl's stream of discovered links, where popular URLs come back often and
under several spellings. A pool of distinct pages is drawn first (about
one page for every eight lines); each line then picks a page with a skewed
(power-law) choice and writes it as it is, or respelled (case of scheme
and host, a default port, an escaped '~', a fragment, a "./" segment).
"""
import argparse
import random
import sys

HOSTS = [
    "www.example.com", "example.com", "blog.example.org", "shop.example.net",
    "news.example.co.uk", "docs.example.io", "cdn.example-static.com",
    "static.example.com", "forum.example.de", "wiki.example.fr",
    "api.example.dev", "m.example.jp", "img.example.cn", "www.example.edu",
]
IDN_HOSTS = ["bücher.de", "münchen.example", "пример.рф", "例え.jp",
             "xn--bcher-kva.de", "Bücher.DE", "b%C3%BCcher.de"]
IP_HOSTS = ["127.0.0.1", "10.0.0.5", "0x7f.1", "192.168.1.1", "[::1]",
            "[2001:DB8:0:0:0:0:0:1]", "[2001:db8::7]"]
WORDS = [
    "about", "contact", "blog", "news", "products", "category", "item",
    "search", "index.html", "page", "archive", "2023", "2024", "05", "12",
    "tag", "user", "profile", "images", "css", "js", "static", "docs",
    "api", "v1", "help", "faq", "login", "cart", "checkout", "post",
    "comments", "feed", "rss", "sitemap.xml", "main.css", "app.js",
    "logo.png", "photo.jpg", "Report_2023.pdf", "README", "FAQ",
    "the-quick-brown-fox", "how-to-crawl", "caf%C3%A9", "%7Euser",
    "%7euser", "a%2Fb", "file%20name.txt", "über", "naïve", "Ω",
]
PARAMS = ["q", "page", "id", "sort", "lang", "ref", "utm_source",
          "utm_medium", "utm_campaign", "gclid", "fbclid", "sid", "session",
          "s", "p", "cat", "tag", "offset", "limit", "view"]
VALUES = ["1", "2", "10", "42", "en", "de", "asc", "desc", "newsletter",
          "twitter", "a+b", "a%20b", "caf%C3%A9", "x%2Fy", "%", "hello world",
          "true", "", "abc123", "ÄÖÜ"]


def path(rng, depth=None):
    depth = rng.randint(0, 4) if depth is None else depth
    segs = [rng.choice(WORDS) for _ in range(depth)]
    p = "/" + "/".join(segs)
    if segs and rng.random() < 0.25:
        p += "/"
    return p


def query(rng):
    if rng.random() < 0.7:
        return ""
    n = rng.randint(1, 4)
    pairs = []
    for _ in range(n):
        k = rng.choice(PARAMS)
        v = rng.choice(VALUES)
        pairs.append(k if rng.random() < 0.05 else k + "=" + v)
    return "?" + "&".join(pairs)


def fragment(rng):
    if rng.random() < 0.85:
        return ""
    return "#" + rng.choice(["top", "section-2", "comments", "", "a/../b"])


def mixed_case(rng, s):
    if rng.random() < 0.8:
        return s
    return "".join(c.upper() if rng.random() < 0.5 else c for c in s)


def host(rng):
    r = rng.random()
    if r < 0.02:
        return rng.choice(IDN_HOSTS)
    if r < 0.04:
        return rng.choice(IP_HOSTS)
    return rng.choice(HOSTS)


def port(rng, scheme):
    r = rng.random()
    if r < 0.03:
        return ":" + rng.choice(["8080", "8443", "3000", "81"])
    if r < 0.06:
        return ":80" if scheme == "http" else ":443"
    return ""


def absolute(rng, h=None):
    scheme = "https" if rng.random() < 0.7 else "http"
    h = h or host(rng)
    return (mixed_case(rng, scheme) + "://" + mixed_case(rng, h) +
            port(rng, scheme) + path(rng) + query(rng) + fragment(rng))


def relative(rng):
    r = rng.random()
    if r < 0.35:
        segs = [rng.choice(WORDS) for _ in range(rng.randint(1, 3))]
        return "/".join(segs) + query(rng) + fragment(rng)
    if r < 0.55:
        ups = "../" * rng.randint(1, 3)
        return ups + rng.choice(WORDS) + query(rng) + fragment(rng)
    if r < 0.65:
        return "./" + rng.choice(WORDS) + "/./" + rng.choice(WORDS)
    if r < 0.75:
        return rng.choice(WORDS) + "/../" + rng.choice(WORDS) + fragment(rng)
    if r < 0.85:
        return query(rng) or "?page=2"
    if r < 0.95:
        return "#" + rng.choice(["top", "main", "footer"])
    return rng.choice(WORDS) + " " + rng.choice(WORDS) + ".html"


def href(rng, base_host):
    r = rng.random()
    if r < 0.40:
        return relative(rng)
    if r < 0.65:
        return path(rng, rng.randint(1, 4)) + query(rng) + fragment(rng)
    if r < 0.80:
        return absolute(rng, base_host)
    if r < 0.92:
        return absolute(rng)
    if r < 0.97:
        return "//" + host(rng) + path(rng) + query(rng)
    if r < 0.985:
        return rng.choice(["mailto:info@example.com", "javascript:void(0)",
                           "tel:+1-555-0100", "javascript:history.back()"])
    # leading/trailing spaces, as HTML attributes carry them
    return "  " + path(rng, 2) + " "


def respell(rng, url):
    """An equivalent spelling of an absolute URL (same canonical form)."""
    r = rng.random()
    if r < 0.5:
        return url
    scheme, rest = url.split("://", 1)
    host, slash, tail = rest.partition("/")
    if r < 0.6:
        return scheme.upper() + "://" + host.upper() + slash + tail
    if r < 0.7 and ":" not in host and "]" not in host:
        port = ":443" if scheme.lower() == "https" else ":80"
        return scheme + "://" + host + port + slash + tail
    if r < 0.8:
        return url.split("#")[0] + "#" + rng.choice(["top", "x", ""])
    if r < 0.9:
        return scheme + "://" + host + "/./" + tail
    return url.replace("~", "%7E")


def write_lines(rng, count, out):
    pool_size = max(1, count // 8)
    pool = [absolute(rng) for _ in range(pool_size)]
    rand = rng.random
    for _ in range(count):
        # index ~ pool_size * u^3: a few pages very often, most rarely
        url = pool[int(pool_size * rand() ** 3)]
        out.write(respell(rng, url) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=200000)
    ap.add_argument("--lines", type=int, default=0,
                    help="write N absolute URLs, one per line, instead")
    ap.add_argument("--seed", type=int, default=20240501)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    if args.lines > 0:
        write_lines(rng, args.lines, out)
        return
    written = 0
    while written < args.pairs:
        h = rng.choice(HOSTS)
        scheme = "https" if rng.random() < 0.8 else "http"
        base = scheme + "://" + h + path(rng, rng.randint(1, 4)) + query(rng)
        for _ in range(rng.randint(20, 120)):
            if written == args.pairs:
                break
            out.write(base + "\t" + href(rng, h) + "\n")
            written += 1


if __name__ == "__main__":
    main()
