#!/usr/bin/env python3
"""serve.py - serve the bloomcrawl sample site on 127.0.0.1.

    python3 examples/site/serve.py SITEDIR [--port 0] [--log FILE]
        [--slow-seconds 5] [--huge-bytes 8388608] [--bind 127.0.0.1]

SITEDIR is what gensite.py wrote.  The server binds a loopback address only
(127.0.0.0/8), on a free port unless --port says otherwise, and prints
``PORT <n>`` on stdout once it listens, so a test can start it and read the
port.  SIGTERM or SIGINT stop it cleanly: it stops accepting, wakes the slow
handler, closes kept-alive connections, waits for the handler threads and
closes the log, then exits 0.

Virtual hosts.  One server, one port, three sites chosen by the Host header
(www.bloomcrawl.test, blog.bloomcrawl.test, other.example; any case, with or
without the port, a trailing dot ignored).  Any other Host gets 421
Misdirected Request.  A crawler reaches them with
``--resolve HOST:PORT:127.0.0.1`` for each host (as curl's option).

How a request finds its resource.  The request target is normalized the way
docs/DESIGN.md 3.1 says (sitelib.normalize): ``/%7Ealice/``, ``/%7ealice/`` and
``/~alice/`` are one resource, like on a real server, so a crawler that
fails to merge spellings gets the same page twice -- and the checker sees
it in the log.  Reserved escapes stay as they are: ``/enc/a%2Fb.html`` and
``/enc/a/b.html`` are different resources.  A query the site does not know
is ignored for a static page (as a real server does).

Routes (routes.json, from gensite.py):
    html, file      a file under SITEDIR; {PORT} in text bodies is replaced
                    by the port the server listens on
    redirect        status 301/302/307/308 and a Location ({PORT} replaced)
    server_error    500 with a small HTML body without links
    timeout         /slow: the answer comes after --slow-seconds (a crawler
                    with a shorter timeout gives up)
    too_large       /huge: an HTML body of --huge-bytes, streamed in 64 KiB
                    chunks with its Content-Length (a crawler with a smaller
                    body limit aborts; the server then stops writing)
    gzip            a sitemap.xml.gz: the file, {PORT} replaced, gzipped
                    as it is served (Content-Type application/gzip)
    gzip_bomb       a 5 GB sitemap made on the fly: a gzip stream of a
                    urlset head and 5 GiB of spaces, written until the
                    client stops reading (no Content-Length)
    calendar        the spider trap: /calendar/ and /calendar/YYYY/MM/ for
                    any year >= 1, each month linking to the previous and the
                    next month: an endless chain generated on the fly
    (none)          404 with a small HTML body without links

Every response but the gzip_bomb's has a Content-Length and the server speaks HTTP/1.1 with
keep-alive (idle connections are closed after 30 s).

The access log (--log FILE): one JSON object per request, written when the
response is done (or abandoned):
    {"time": 1700000000.123, "host": "<Host header as sent>",
     "method": "GET", "path": "<request target as received, raw>",
     "status": 200, "bytes": <body bytes written>, "ua": "<User-Agent>",
     "ms": <handling time>, "error": "<why the body was cut>" (if so)}
check_crawl.py reads it: it is the server's own account of what a crawler
fetched, independent of what the crawler reports.
"""

import argparse
import datetime
import gzip
import html
import http.server
import ipaddress
import json
import os
import re
import signal
import socket
import sys
import struct
import threading
import time
import zlib

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitelib  # noqa: E402

CAL_RE = re.compile(r"^/calendar/(\d{4,})/(\d\d)/$")
CAL_START = (2024, 6)
HTML_TYPE = "text/html; charset=utf-8"

# The gzip_bomb's pieces (RFC 1952): a gzip member header (deflate, no
# flags, no mtime, unknown OS), and 1 MiB of spaces compressed once as raw
# deflate ending in a full flush, so that the copies can follow each other.
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
BOMB_SPACES = b" " * (1 << 20)
_bomb = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
BOMB_BLOCK = _bomb.compress(BOMB_SPACES) + _bomb.flush(zlib.Z_FULL_FLUSH)
del _bomb


def page_html(title, nav, body):
    return ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">'
            "\n<title>%s</title>\n</head>\n<body>\n<h1>%s</h1>\n<nav>%s</nav>"
            "\n%s\n</body>\n</html>\n" % (html.escape(title),
                                          html.escape(title), nav, body))


class Site:
    """routes.json plus the options, shared by all handler threads."""

    def __init__(self, root, slow_seconds, huge_bytes):
        self.root = root
        with open(os.path.join(root, "routes.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        self.routes = cfg["hosts"]
        self.nav = cfg["nav"]
        self.prefixes = cfg["prefixes"]
        self.slow_seconds = slow_seconds
        self.huge_bytes = huge_bytes
        self.port = 0
        self.stopping = threading.Event()
        self.log_lock = threading.Lock()
        self.log = None

    def sub(self, text):
        return sitelib.with_port(text, self.port)

    def write_log(self, rec):
        if self.log is None:
            return
        line = json.dumps(rec, ensure_ascii=False) + "\n"
        with self.log_lock:
            self.log.write(line)
            self.log.flush()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "bloomcrawl-sample-site/1"

    def version_string(self):
        return self.server_version
    timeout = 30  # idle keep-alive connections are closed after this
    # headers and body are two writes: without TCP_NODELAY, Nagle and the
    # client's delayed ACK add ~40 ms to every kept-alive response
    disable_nagle_algorithm = True

    # -- plumbing ----------------------------------------------------------
    def setup(self):
        super().setup()
        with self.server.conns_lock:
            self.server.conns.add(self.connection)

    def finish(self):
        try:
            super().finish()
        finally:
            with self.server.conns_lock:
                self.server.conns.discard(self.connection)

    def log_message(self, fmt, *args):  # no stderr chatter per request
        pass

    def send_error(self, code, message=None, explain=None):
        # requests that never reach do_GET (malformed, bad method) are
        # logged too, so the log accounts for every request
        if not getattr(self, "_in_get", False):
            self.server.site.write_log({
                "time": round(time.time(), 3),
                "host": self.headers.get("Host", "") if hasattr(
                    self, "headers") and self.headers else "",
                "method": getattr(self, "command", None) or "",
                "path": getattr(self, "path", ""), "status": code,
                "bytes": 0, "ua": "", "ms": 0, "error": "bad request"})
        super().send_error(code, message, explain)

    def do_HEAD(self):
        self.do_GET(head=True)

    # -- one request -------------------------------------------------------
    def do_GET(self, head=False):
        self._in_get = True
        site = self.server.site
        t0 = time.monotonic()
        # When the request arrived (wall time, so that it orders the logs
        # of several server runs too): a request is logged when its answer
        # is sent, and two threads may log out of arrival order (a
        # robots.txt answered, then a page asked right after it, may be
        # logged first).
        start = round(time.time(), 6)
        self._status, self._bytes, self._error = 0, 0, None
        try:
            self.route(site, head)
        except (BrokenPipeError, ConnectionResetError, socket.timeout) as e:
            self._error = "client went away: %s" % type(e).__name__
            self.close_connection = True
        finally:
            rec = {"time": round(time.time(), 3),
                   "host": self.headers.get("Host", ""),
                   "method": self.command, "path": self.path,
                   "status": self._status, "bytes": self._bytes,
                   "ua": self.headers.get("User-Agent", ""),
                   "ms": round((time.monotonic() - t0) * 1000, 1),
                   "start": start}
            if self._error:
                rec["error"] = self._error
            site.write_log(rec)
            self._in_get = False

    def respond(self, status, ctype, body, head, extra=()):
        self._status = status
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(body)
            self._bytes = len(body)

    def route(self, site, head):
        host = self.headers.get("Host", "").strip().lower()
        host = re.sub(r":\d*$", "", host).rstrip(".")
        if host not in site.routes:
            return self.respond(421, "text/plain; charset=utf-8",
                                b"421 Misdirected Request: unknown host\n",
                                head)
        try:
            target = sitelib.normalize_target(self.path)
        except sitelib.URLError as e:
            return self.respond(400, "text/plain; charset=utf-8",
                                ("400 Bad Request: %s\n" % e).encode(), head)
        routes = site.routes[host]
        r = routes.get(target)
        if r is None and "?" in target:
            r = routes.get(target.split("?")[0])
            if r is not None and r["kind"] not in ("html", "file"):
                r = None
        if r is None:
            for prefix, kind in site.prefixes.get(host, {}).items():
                if target.startswith(prefix):
                    r = {"kind": kind}
        if r is None:
            return self.not_found(site, head)
        kind = r["kind"]
        if kind in ("html", "file"):
            with open(os.path.join(site.root, r["file"]), "rb") as f:
                body = f.read()
            if r["type"].startswith(("text/", "application/xml",
                                     "application/rss", "application/pdf",
                                     "application/javascript")):
                body = body.replace(sitelib.PORT_PLACEHOLDER.encode(),
                                    str(site.port).encode())
            return self.respond(200, r["type"], body, head)
        if kind == "redirect":
            loc = site.sub(r["location"])
            body = page_html("Moved", "", '<p>Moved <a href="%s">here</a>.'
                             "</p>" % html.escape(loc)).encode()
            return self.respond(r["status"], HTML_TYPE, body, head,
                                [("Location", loc)])
        if kind == "server_error":
            return self.respond(500, HTML_TYPE, page_html(
                "500 Internal Server Error", "",
                "<p>Something broke (on purpose).</p>").encode(), head)
        if kind == "timeout":
            # wait, but wake up at once when the server is stopping
            site.stopping.wait(site.slow_seconds)
            return self.respond(200, HTML_TYPE, page_html(
                "Slow page", site.sub(site.nav[host]),
                "<p>This page took %g s.</p>" % site.slow_seconds).encode(),
                head)
        if kind == "gzip":
            # a .xml.gz sitemap: the XML with the port in it, compressed
            # here (mtime 0: the same bytes every time)
            with open(os.path.join(site.root, r["file"]), "rb") as f:
                body = f.read().replace(sitelib.PORT_PLACEHOLDER.encode(),
                                        str(site.port).encode())
            return self.respond(200, r["type"], gzip.compress(body, mtime=0),
                                head)
        if kind == "gzip_bomb":
            return self.gzip_bomb(site, r, head)
        if kind == "too_large":
            return self.huge(site, host, head)
        if kind == "calendar":
            return self.calendar(site, host, target, head)
        return self.not_found(site, head)

    def not_found(self, site, head):
        self.respond(404, HTML_TYPE, page_html(
            "404 Not Found", "", "<p>No such page.</p>").encode(), head)

    def huge(self, site, host, head):
        top = page_html("Huge page", site.sub(site.nav[host]),
                        "<pre>").encode()
        top = top[:top.rindex(b"</body>")]
        tail = b"</pre>\n</body>\n</html>\n"
        n = max(site.huge_bytes, len(top) + len(tail))
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", HTML_TYPE)
        self.send_header("Content-Length", str(n))
        self.end_headers()
        if head:
            return
        line = b"all work and no play makes a crawler a dull crawler\n"
        chunk = line * (65536 // len(line))
        left = n - len(top) - len(tail)
        self.wfile.write(top)
        self._bytes += len(top)
        while left > 0:
            if site.stopping.is_set():
                raise BrokenPipeError("server stopping")
            part = chunk[:left]
            self.wfile.write(part)
            self._bytes += len(part)
            left -= len(part)
        self.wfile.write(tail)
        self._bytes += len(tail)

    def gzip_bomb(self, site, r, head):
        """A 5 GB sitemap as a gzip stream made on the fly (never held):
        a urlset head, then 5 GiB of spaces, 1 MiB at a time, each
        compressing to about 1 KiB.  No Content-Length: the body ends
        when the connection closes, or when the client gives up.

        The stream is framed by hand (RFC 1952: a header, raw deflate
        data, the CRC-32 and the length mod 2^32) so that the MiB of
        spaces is compressed once (BOMB_BLOCK): each copy of it ends in a
        full flush, which empties the compressor's window, so every copy
        is the same bytes and decodes on its own.  Compressing the 50 MiB
        a crawler reads before it cuts a sitemap took the server 0.5 s of
        CPU per request, which under load outran the tests' 1.5 s
        timeout; the copies cost a CRC-32 pass (40 ms)."""
        self._status = 200
        self.send_response(200)
        self.send_header("Content-Type", r["type"])
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if head:
            return
        first = site.sub(r["head"]).encode()
        z = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        out = GZIP_HEADER + z.compress(first) + z.flush(zlib.Z_FULL_FLUSH)
        crc, size = zlib.crc32(first), len(first)
        for _ in range(5 << 10):
            if site.stopping.is_set():
                raise BrokenPipeError("server stopping")
            self.wfile.write(out)
            self._bytes += len(out)
            out = BOMB_BLOCK
            crc = zlib.crc32(BOMB_SPACES, crc)
            size += len(BOMB_SPACES)
        last = b"</urlset>\n"
        out += z.compress(last) + z.flush()
        crc = zlib.crc32(last, crc)
        size += len(last)
        out += struct.pack("<II", crc, size & 0xFFFFFFFF)
        self.wfile.write(out)
        self._bytes += len(out)


    def calendar(self, site, host, target, head):
        """The spider trap: every month links to its neighbours."""
        if target == "/calendar/":
            y, m = CAL_START
            body = ('<p>Events by month: <a href="%04d/%02d/">%04d-%02d</a>'
                    "</p>" % (y, m, y, m))
            return self.respond(200, HTML_TYPE, page_html(
                "Calendar", site.sub(site.nav[host]), body).encode(), head)
        mt = CAL_RE.match(target)
        if not mt or not 1 <= int(mt.group(2)) <= 12 or int(mt.group(1)) < 1:
            return self.not_found(site, head)
        y, m = int(mt.group(1)), int(mt.group(2))
        py, pm = (y, m - 1) if m > 1 else (y - 1, 12)
        ny, nm = (y, m + 1) if m < 12 else (y + 1, 1)
        links = []
        if py >= 1:  # previous month: relative spelling
            links.append('<a href="../../%04d/%02d/">&larr; %04d-%02d</a>'
                         % (py, pm, py, pm))
        links.append('<a href="/calendar/%04d/%02d/">%04d-%02d &rarr;</a>'
                     % (ny, nm, ny, nm))  # next month: absolute path
        days = " ".join(str(d) for d in range(1, 29))
        body = "<p>%s</p>\n<p>No events on days %s.</p>" % (
            " | ".join(links), days)
        return self.respond(200, HTML_TYPE, page_html(
            "Calendar %04d-%02d" % (y, m), site.sub(site.nav[host]),
            body).encode(), head)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = False   # server_close() waits for handler threads
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, addr, site):
        self.site = site
        self.conns = set()
        self.conns_lock = threading.Lock()
        super().__init__(addr, Handler)

    def handle_error(self, request, client_address):
        # a client that resets a kept-alive connection is normal for a
        # crawler that aborts a transfer; anything else is a real bug
        if isinstance(sys.exc_info()[1], (ConnectionError, socket.timeout)):
            return
        super().handle_error(request, client_address)

    def close_connections(self):
        with self.conns_lock:
            conns = list(self.conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def size_arg(text):
    """8388608, 8M, 8MiB, 512k -> bytes."""
    m = re.fullmatch(r"(\d+)\s*([kKmMgG]?)(i?[bB])?", text.strip())
    if not m:
        raise argparse.ArgumentTypeError("not a size: " + text)
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20,
                              "g": 1 << 30}[m.group(2).lower()]


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Serve the bloomcrawl sample site on 127.0.0.1.")
    ap.add_argument("sitedir", help="directory written by gensite.py")
    ap.add_argument("--bind", default="127.0.0.1",
                    help="loopback address to bind (127.0.0.0/8 only)")
    ap.add_argument("--port", type=int, default=0,
                    help="port (default 0: a free port, printed as PORT n)")
    ap.add_argument("--log", help="access log, one JSON object per request")
    ap.add_argument("--slow-seconds", type=float, default=5.0,
                    help="how long /slow takes (default 5)")
    ap.add_argument("--huge-bytes", type=size_arg, default=8 << 20,
                    help="size of /huge (default 8MiB)")
    a = ap.parse_args(argv)
    if not ipaddress.ip_address(a.bind) in ipaddress.ip_network("127.0.0.0/8"):
        ap.error("--bind must be a loopback address (127.0.0.0/8)")
    if not os.path.exists(os.path.join(a.sitedir, "routes.json")):
        ap.error("%s has no routes.json: run gensite.py first" % a.sitedir)

    site = Site(a.sitedir, a.slow_seconds, a.huge_bytes)
    try:
        server = Server((a.bind, a.port), site)
    except OSError as e:
        print("serve.py: cannot listen on %s:%d: %s" % (a.bind, a.port, e),
              file=sys.stderr)
        return 1
    site.port = server.server_address[1]
    if a.log:
        site.log = open(a.log, "a", encoding="utf-8")

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    thread = threading.Thread(target=server.serve_forever,
                              kwargs={"poll_interval": 0.1})
    thread.start()
    print("PORT %d" % site.port, flush=True)
    print("serve.py: %s on http://%s:%d/ (hosts: %s); %s" % (
        datetime.datetime.now().strftime("%H:%M:%S"), a.bind, site.port,
        ", ".join(sorted(site.routes)),
        "log " + a.log if a.log else "no log"), file=sys.stderr, flush=True)
    while not stop.wait(1.0):
        pass
    server.shutdown()          # stop accepting; serve_forever returns
    thread.join()
    site.stopping.set()        # wake /slow, stop /huge
    server.close_connections()  # end kept-alive connections
    server.server_close()      # join the handler threads
    if site.log:
        site.log.close()
    print("serve.py: stopped", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
