#!/usr/bin/env python3
"""HTTP fixture server for tests/test_fetcher.c (python3 standard library).

Listens on 127.0.0.1 on a free port, prints the port on stdout (one line),
then serves until killed. HTTP/1.1 with keep-alive, one thread per
connection. Each route shows one kind of result the fetcher must report:

  /ok             200 text/html with links
  /xhtml          200 application/xhtml+xml with a link
  /redirect       301 with a relative Location
  /slow           sleeps 5 s before answering (longer than the timeout)
  /big            200 with Content-Length over the body limit (2 MiB)
  /big-stream     200 without Content-Length, 2 MiB, then close
  /gzip           200 text/html, Content-Encoding: gzip, with links
  /gzip-bomb      200, Content-Encoding: gzip, 2 MiB of zeros compressed
  /retry          429 with Retry-After: 7
  /retry-date     503 with Retry-After: an HTTP-date 120 s ahead
  /500, /404      those statuses, with an HTML body that has a link
  /headers-huge   200 with 200 header lines of 1000 bytes each
  /text           200 text/plain that looks like HTML (not parsed)
  /near/NAME      near-duplicates (test_crawler's test_near_duplicates):
                  /near/index links orig, edit, sid1, other and short;
                  orig has 400 words of text, edit the same with one
                  word changed, sid1 orig's text with links to
                  /near/sid1/x and /near/sid1/y (two words each), other
                  400 other words, short five words
  /stall          200 headers and 10 bytes of a 100000-byte body, then
                  nothing for 5 s (low-speed abort)
  /ua             200 text/plain: the request's User-Agent
  /validator-cr   200 whose ETag and Last-Modified have a bare CR inside
  /conditional    ETag "v1": 304 to If-None-Match "v1", else 200 (with
                  Last-Modified) echoing X-Bc-Test|If-None-Match|
                  If-Modified-Since
  /peer           200 text/plain "PORT": the client's port (keep-alive)
  /trickle        200 headers, then 1 byte of 100000 every 0.25 s (4 B/s)
  /header-line-huge  200 with one header line of 1 MiB
  /cut            200, Content-Length 100000, 100 bytes sent, then close
  /nothing        the connection closed without a response
  /garbage        "garbage" instead of an HTTP response (HTTP/0.9)
  /bad-status     "HTTP/1.1 2x0 OK": a malformed status line
  /bad-gzip       Content-Encoding: gzip on a body that is not gzip
  /big-text N     (path /big-text/N) 200 text/plain of N bytes, the first
                  line "Disallow: /private"; chunked with ?chunked=1
  /r/N            301 to /r/N+1, for ever (a redirect chain)
  /retry-1        429 with Retry-After: 1
  /retry-huge     429 with Retry-After: 999999
  /fan/N          200 text/html linking /fan/10N .. /fan/10N+9 (endless)
  /sitemap.xml    a sitemap index of the /sm/ sitemaps below and of itself
  /sm/plain.xml   a urlset: /sm/page1, /sm/page2 and /ok (outside /sm/)
  /sm/gz.xml.gz   a gzipped urlset (application/gzip): /sm/page3
  /sm/bomb.xml    billion laughs (a DOCTYPE of nested entities)
  /sm/big.xml.gz  a gzip stream made as it is sent: a urlset with
                  /sm/page4, then up to 5 GiB of spaces (no Content-Length)
  /sm/pageN       200 text/html without links
  /flaky/KIND/N/...  fails N times (counted per path), then 200 text/html
                  "ok": KIND reset (the connection reset: RST), empty (closed
                  without a response), timeout (3 s before anything), or a
                  status: 408, 429, 500, 502, 503, 504 (no Retry-After);
                  a path ending in .xml then answers a urlset of /only.html
  /only.html      200 text/html without links (listed by a flaky sitemap)

The wire (bodies sent coded; /wire/NAME answers 200
application/octet-stream with exactly the body bytes route /NAME sent,
framing included, so a test can compare what it received on the wire):
  /chunked        200 text/html, chunked in 7-byte chunks, one chunk
                  extension and a trailer line
  /chunked-crcrlf 200 text/html, chunked in 9-byte chunks, each chunk's
                  data followed by CR CR LF (a line end: RFC 9112 2.2)
  /chunked-5x     200, chunked with the size line "5x" (malformed)
  /gzip-chunked   200 text/html, gzip, chunked
  /deflate        200 text/html, Content-Encoding: deflate (zlib stream)
  /deflate-raw    200 text/html, Content-Encoding: deflate, raw deflate
  /gzip-corrupt   200, gzip whose deflate data is damaged in the middle
  /gzip-short     200, gzip cut before its end (Content-Length agrees)
  /brotli         200, Content-Encoding: br (not offered, not decoded)
  /early-hints    103 Early Hints (a Link header), then 200 text/html

Options: --robots MODE serves /robots.txt as 404 (default), 503, or
big (600 KiB: "User-agent: *", "Disallow: /private", then comments;
?chunked=1 style chunked when MODE is big-chunked), closed (the
connection closed without a response), or sitemap-flaky (200, naming
the sitemap /flaky/503/1/sm.xml: a 503 once, then a urlset of
/only.html). --tls serves HTTPS with a
self-signed certificate made by openssl(1) for the run (port 0 printed
when openssl is missing).
"""
import argparse
import gzip
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OK_HTML = b"""<!DOCTYPE html><html><head><title>ok</title>
<link rel="canonical" href="http://127.0.0.1/ok">
<link rel="stylesheet" href="/style.css">
</head><body>
<a href="/page1">one</a> <a href="page2?a=1&amp;b=2">two</a>
<a href="/ext" rel="nofollow">ext</a>
<!-- <a href="/commented">no</a> -->
</body></html>
"""

GZIP_HTML = b"""<html><body><a href="/gz1">gz1</a>
<a href="/gz2">gz2</a></body></html>
"""


def chunk_frame(body, size=7, data_end=b"\r\n"):
    """body in chunks of size bytes, the second with an extension, and a
    trailer line after the last chunk; data_end after each chunk's
    data."""
    out = b""
    for n, i in enumerate(range(0, len(body), size)):
        part = body[i:i + size]
        ext = b";ext=1" if n == 1 else b""
        out += b"%x%s\r\n%s%s" % (len(part), ext, part, data_end)
    return out + b"0\r\nX-Trailer: yes\r\n\r\n"


def raw_deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


GZIP_BODY = gzip.compress(GZIP_HTML, mtime=0)
CORRUPT = bytearray(gzip.compress(OK_HTML * 20, mtime=0))
CORRUPT[40:60] = b"\xff" * 20
# route -> (Content-Encoding or None, chunked, body bytes as sent)
WIRE = {
    "chunked": (None, True, chunk_frame(OK_HTML)),
    # CR CR LF after each chunk's data: a line end (RFC 9112 2.2).
    "chunked-crcrlf": (None, True, chunk_frame(OK_HTML, 9, b"\r\r\n")),
    # A size line "5x": not a chunk-size (RFC 9112 7.1).
    "chunked-5x": (None, True, b"5x\r\nhello\r\n0\r\n\r\n"),
    "gzip-chunked": ("gzip", True, chunk_frame(GZIP_BODY, 10)),
    "deflate": ("deflate", False, zlib.compress(GZIP_HTML)),
    "deflate-raw": ("deflate", False, raw_deflate(GZIP_HTML)),
    "gzip-corrupt": ("gzip", False, bytes(CORRUPT)),
    "gzip-short": ("gzip", False, GZIP_BODY[:-12]),
    "brotli": ("br", False, b"\x0b\x02\x80hello\x03"),
}


ROBOTS_MODE = "404"
FLAKY = {}  # /flaky/ path -> requests so far
FLAKY_LOCK = threading.Lock()


def near_words(seed, n):
    """n pseudo-random words of a 500-word vocabulary (an LCG: the same
    on every Python)."""
    out, x = [], seed
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        out.append("w%03d" % ((x >> 33) % 500))
    return out


def near_page(name):
    """The body of /near/NAME, or None."""
    words, links = None, []
    if name == "index":
        words = ["index"]
        links = ["/near/" + n for n in ("orig", "edit", "sid1", "other",
                                         "short")]
    elif name in ("orig", "edit", "sid1"):
        words = near_words(24, 400)
        if name == "edit":
            words[100] = "changed"
        if name == "sid1":
            links = ["/near/sid1/x", "/near/sid1/y"]
    elif name == "other":
        words = near_words(42, 400)
    elif name == "short":
        words = ["five", "words", "are", "too", "short"]
    elif name in ("sid1/x", "sid1/y"):
        words = ["copy", name[-1]]
    if words is None:
        return None
    return ("<html><head><style>p { margin: 0 }</style></head><body><p>%s"
            "</p>%s</body></html>" % (" ".join(words), "".join(
                '<a href="%s"></a>' % h for h in links))).encode()


def big_text(size):
    head = b"User-agent: *\nDisallow: /private\n"
    filler = b"# " + b"x" * 77 + b"\n"
    body = head + filler * ((size - len(head)) // len(filler) + 1)
    return body[:size]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send_chunked(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for i in range(0, len(body), 8192):
                part = body[i:i + 8192]
                self.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def raw(self, data):
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def big_gzip(self, head):
        """A gzip stream of head and 5 GiB of spaces, compressed as it is
        sent (1 MiB at a time), until the client goes away."""
        self.send_response(200)
        self.send_header("Content-Type", "application/gzip")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        spaces = b" " * (1 << 20)
        try:
            self.wfile.write(z.compress(head))
            for _ in range(5 << 10):
                self.wfile.write(z.compress(spaces))
            self.wfile.write(z.compress(b"</urlset>") + z.flush())
        except OSError:
            pass

    def log_message(self, fmt, *args):  # keep the test output clean
        pass

    def send_body(self, status, ctype, body, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def flaky(self, path):
        """/flaky/KIND/N/...: KIND N times, then 200. Every answer closes
        its connection: a failure on a reused one would make curl send
        the request again by itself, unseen by the crawler."""
        parts = path.split("/")
        kind, n = parts[2], int(parts[3])
        with FLAKY_LOCK:
            seen = FLAKY.get(path, 0)
            FLAKY[path] = seen + 1
        self.close_connection = True
        close = [("Connection", "close")]
        if seen >= n and path.endswith(".xml"):
            self.send_body(200, "application/xml", sitemap_doc(
                "urlset", "url", self.base(), ["/only.html"]), close)
        elif seen >= n:
            self.send_body(200, "text/html; charset=utf-8", b"<p>ok</p>",
                           close)
        elif kind == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            self.close_connection = True
        elif kind == "empty":
            self.close_connection = True
        elif kind == "timeout":
            time.sleep(3)
            self.close_connection = True
        else:
            self.send_body(int(kind), "text/plain", b"flaky", close)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        query = self.path.split("?", 1)[1] if "?" in self.path else ""
        html = "text/html; charset=utf-8"
        if path == "/robots.txt" and ROBOTS_MODE != "404":
            if ROBOTS_MODE == "503":
                self.send_body(503, "text/plain", b"busy")
            elif ROBOTS_MODE == "closed":
                self.close_connection = True
            elif ROBOTS_MODE == "sitemap-flaky":
                self.send_body(200, "text/plain",
                               b"User-agent: *\nSitemap: /flaky/503/1/sm.xml\n")
            elif ROBOTS_MODE == "big-chunked":
                self.send_chunked(200, "text/plain", big_text(600 << 10))
            else:
                self.send_body(200, "text/plain", big_text(600 << 10))
        elif path.startswith("/flaky/"):
            self.flaky(path)
        elif path.startswith("/near/") and near_page(path[6:]):
            self.send_body(200, html, near_page(path[6:]))
        elif path.startswith("/big-text/"):
            body = big_text(int(path.rsplit("/", 1)[1]))
            if "chunked=1" in query:
                self.send_chunked(200, "text/plain", body)
            else:
                self.send_body(200, "text/plain", body)
        elif path.startswith("/r/"):
            n = int(path.rsplit("/", 1)[1])
            self.send_body(301, "text/plain", b"moved",
                           [("Location", "/r/%d" % (n + 1))])
        elif path == "/retry-1":
            self.send_body(429, "text/plain", b"slow down",
                           [("Retry-After", "1")])
        elif path == "/retry-huge":
            self.send_body(429, "text/plain", b"go away",
                           [("Retry-After", "999999")])
        elif path.startswith("/fan/"):
            n = int(path.rsplit("/", 1)[1])
            links = "".join('<a href="/fan/%d">%d</a>\n' % (n * 10 + i, i)
                            for i in range(10))
            self.send_body(200, html, ("<html><body>%s</body></html>"
                                       % links).encode())
        elif path.startswith("/mh/"):
            # A site over hosts h0.test .. h3.test (the client resolves them
            # here): page n lives on host h<n % 4> and links to pages 2n+1
            # and 2n+2 (below 40) on theirs, and back to page 0.
            n = int(path.rsplit("/", 1)[1])
            port = self.server.server_address[1]
            links = "".join(
                '<a href="http://h%d.test:%d/mh/%d">p</a>\n' % (m % 4, port, m)
                for m in (2 * n + 1, 2 * n + 2, 0) if m < 40)
            self.send_body(200, html, ("<html><body>%s</body></html>"
                                       % links).encode())
        elif path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Type", html)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(20):
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.25)
            except OSError:
                pass
            self.close_connection = True
        elif path == "/header-line-huge":
            self.send_body(200, html, b"<a href=/never>x</a>",
                           [("X-Huge", "h" * (1 << 20))])
        elif path == "/cut":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.raw(b"c" * 100)
        elif path == "/nothing":
            self.close_connection = True
        elif path == "/garbage":
            self.raw(b"garbage\r\n\r\n")
        elif path == "/bad-status":
            self.raw(b"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n")
        elif path == "/bad-gzip":
            self.send_body(200, html, b"this is not gzip at all" * 10,
                           [("Content-Encoding", "gzip")])
        elif path == "/ok":
            self.send_body(200, html, OK_HTML)
        elif path == "/only.html":
            self.send_body(200, html, b"<p>listed by a flaky sitemap</p>")
        elif path == "/sitemap.xml":
            self.send_body(200, "application/xml", sitemap_doc(
                "sitemapindex", "sitemap", self.base(),
                ["/sm/plain.xml", "/sm/gz.xml.gz", "/sitemap.xml",
                 "/sm/missing.xml", "/sm/bomb.xml", "/sm/big.xml.gz"]))
        elif path == "/sm/plain.xml":
            self.send_body(200, "application/xml", sitemap_doc(
                "urlset", "url", self.base(),
                ["/sm/page1", "/sm/page2", "/ok"]))
        elif path == "/sm/gz.xml.gz":
            self.send_body(200, "application/gzip", gzip.compress(
                sitemap_doc("urlset", "url", self.base(), ["/sm/page3"])))
        elif path == "/sm/bomb.xml":
            self.send_body(200, "application/xml", BOMB)
        elif path == "/sm/big.xml.gz":
            self.big_gzip(sitemap_doc("urlset", "url", self.base(),
                                      ["/sm/page4"]).replace(b"</urlset>",
                                                             b""))
        elif path.startswith("/sm/page"):
            self.send_body(200, html, b"<p>listed in a sitemap</p>")
        elif path == "/xhtml":
            self.send_body(200, "application/xhtml+xml",
                           b'<html xmlns="http://www.w3.org/1999/xhtml">'
                           b'<body><a href="/x1">x</a></body></html>')
        elif path == "/redirect":
            self.send_body(301, html, b'<a href="/moved-body">moved</a>',
                           [("Location", "/ok?from=redirect")])
        elif path == "/slow":
            time.sleep(5)
            self.send_body(200, html, b"late")
        elif path == "/big":
            size = 2 << 20
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.write(b"x" * size)
        elif path == "/big-stream":
            self.send_response(200)
            self.send_header("Content-Type", html)
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for _ in range(64):
                    self.wfile.write(b"<p>" + b"y" * 32765)
            except OSError:
                pass
            self.close_connection = True
        elif path == "/gzip":
            self.send_body(200, html, GZIP_BODY,
                           [("Content-Encoding", "gzip")])
        elif path[1:] in WIRE:
            coding, chunked, body = WIRE[path[1:]]
            self.send_response(200)
            self.send_header("Content-Type", html)
            if coding:
                self.send_header("Content-Encoding", coding)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path.startswith("/wire/"):
            name = path[len("/wire/"):]
            body = GZIP_BODY if name == "gzip" else WIRE[name][2]
            self.send_body(200, "application/octet-stream", body)
        elif path == "/early-hints":
            body = b'<html><a href="/hinted">h</a></html>'
            self.raw(b"HTTP/1.1 103 Early Hints\r\n"
                     b"Link: </style.css>; rel=preload\r\n\r\n"
                     b"HTTP/1.1 200 OK\r\n"
                     b"Content-Type: text/html\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        elif path == "/gzip-bomb":
            self.send_body(200, "application/octet-stream",
                           gzip.compress(b"\0" * (2 << 20)),
                           [("Content-Encoding", "gzip")])
        elif path == "/retry":
            self.send_body(429, "text/plain", b"slow down",
                           [("Retry-After", "7")])
        elif path == "/retry-date":
            when = formatdate(time.time() + 120, usegmt=True)
            self.send_body(503, "text/plain", b"later",
                           [("Retry-After", when)])
        elif path == "/500":
            self.send_body(500, html, b'<a href="/from-500">x</a>')
        elif path == "/headers-huge":
            extra = [("X-Filler-%d" % i, "z" * 1000) for i in range(200)]
            self.send_body(200, html, b"<a href=/never>x</a>", extra)
        elif path == "/text":
            self.send_body(200, "text/plain",
                           b'<html><a href="/not-a-link">x</a></html>')
        elif path == "/stall":
            self.send_response(200)
            self.send_header("Content-Type", html)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"<html><a ")
            self.wfile.flush()
            time.sleep(5)
            self.close_connection = True
        elif path == "/mixed":
            # pages of three types: HTML, text/plain, octet-stream (2 MiB)
            self.send_body(200, html, b'<a href="/big">b</a>'
                           b'<a href="/text">t</a><a href="/xhtml">x</a>')
        elif path == "/echo-header":
            # the extra request headers a test sent (fetcher.headers)
            self.send_body(200, "text/plain",
                           ("%s|%s" % (self.headers.get("X-Bc-Test", ""),
                                       self.headers.get("Accept", ""))
                            ).encode())
        elif path == "/validator-cr":
            # an ETag with a bare CR inside: no request could send it back
            self.send_body(200, "text/plain", b"x",
                           [("ETag", '"a\rb"'), ("Last-Modified", "x\ry")])
        elif path == "/conditional":
            # ETag "v1": 304 to a matching If-None-Match, else 200 whose
            # body echoes X-Bc-Test, If-None-Match and If-Modified-Since
            if self.headers.get("If-None-Match", "") == '"v1"':
                self.send_response(304)
                self.send_header("ETag", '"v1"')
                self.end_headers()
            else:
                self.send_body(200, "text/plain",
                               ("%s|%s|%s" % (
                                   self.headers.get("X-Bc-Test", ""),
                                   self.headers.get("If-None-Match", ""),
                                   self.headers.get("If-Modified-Since", ""))
                                ).encode(),
                               [("ETag", '"v1"'), ("Last-Modified",
                                 "Mon, 07 Nov 1994 08:49:37 GMT")])
        elif path.startswith("http://"):
            # absolute-form request target: we are being used as a proxy
            self.send_body(200, "text/plain", ("proxied " + path).encode())
        elif path == "/ua":
            self.send_body(200, "text/plain",
                           self.headers.get("User-Agent", "").encode())
        elif path == "/peer":
            self.send_body(200, "text/plain",
                           str(self.client_address[1]).encode())
        else:
            self.send_body(404, html, b'<a href="/from-404">x</a>')


def sitemap_doc(root, entry, base, paths):
    locs = "".join("<%s><loc>%s%s</loc></%s>" % (entry, base, p, entry)
                   for p in paths)
    return ('<?xml version="1.0"?><%s xmlns="http://www.sitemaps.org/'
            'schemas/sitemap/0.9">%s</%s>' % (root, locs, root)).encode()


BOMB = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' +
        "".join('<!ENTITY lol%d "%s">' % (
            i, ("&lol%s;" % ("" if i == 1 else i - 1)) * 10)
            for i in range(1, 10)) +
        ']><urlset><url><loc>&lol9;</loc></url></urlset>').encode()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global ROBOTS_MODE
    ap = argparse.ArgumentParser()
    ap.add_argument("--robots", default="404",
                    choices=["404", "503", "big", "big-chunked", "closed",
                             "sitemap-flaky"])
    ap.add_argument("--tls", action="store_true")
    args = ap.parse_args()
    ROBOTS_MODE = args.robots
    server = Server(("127.0.0.1", 0), Handler)
    if args.tls:
        if not shutil.which("openssl"):
            print(0, flush=True)
            return 0
        d = tempfile.mkdtemp(prefix="bc_tls.")
        key, cert = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                        "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
                        "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        shutil.rmtree(d)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
