"""bloomcrawl.scrapy.FrontierScheduler (DESIGN 16.2) with Debian's
Scrapy 2.8: the scheduler alone (enqueue_request / next_request round
trips, dont_filter, filtered requests logged and counted, non-GET
requests through the dupefilter, JOBDIR) and real crawls of a tiny
http.server host on 127.0.0.1 (robots.txt obeyed, Crawl-delay honoured,
the engine woken when a host's delay ends instead of on its 5 s
heartbeat). The sample site's crawl is in test_scrapy_site.py, kill -9
in test_scrapy_kill.py.
"""
import http.server
import json
import logging
import os
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("scrapy")

from scrapy import Request, Spider  # noqa: E402
from scrapy.http import FormRequest  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from bloomcrawl.scrapy import FrontierScheduler  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class RoundTripSpider(Spider):
    name = "roundtrip"

    def parse_item(self, response, **kw):
        return []

    def on_error(self, failure):
        return []


def scheduler(settings=None, jobdir=None):
    """A FrontierScheduler of a crawler (no engine) opened on a spider;
    robots.txt off unless settings turn it on."""
    s = {"BLOOMCRAWL_OBEY_ROBOTS": False, "BLOOMCRAWL_DELAY": 0,
         "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
         "DUPEFILTER_CLASS": "bloomcrawl.scrapy.BloomDupeFilter"}
    s.update(settings or {})
    if jobdir:
        s["JOBDIR"] = jobdir
    crawler = get_crawler(RoundTripSpider, s)
    spider = RoundTripSpider.from_crawler(crawler)
    crawler.spider = spider
    sch = FrontierScheduler.from_crawler(crawler)
    sch.open(spider)
    return sch, spider, crawler.stats


def drain(sch):
    out = []
    while True:
        r = sch.next_request()
        if r is None:
            return out
        out.append(r)


def test_round_trip_keeps_every_field():
    sch, spider, stats = scheduler()
    get = Request("http://a.test/page?x=1", headers={"X-Mine": "yes"},
                  meta={"depth": 2, "mine": [1, "two"]},
                  callback=spider.parse_item, errback=spider.on_error,
                  cb_kwargs={"k": "v"}, priority=3,
                  cookies={"c": "1"})
    post = FormRequest("http://a.test/form", formdata={"q": "bloom"},
                       callback=spider.parse_item)
    assert sch.enqueue_request(get)
    assert sch.enqueue_request(post)
    assert len(sch) == 2 and sch.has_pending_requests()
    got = drain(sch)
    assert len(got) == 2 and len(sch) == 0
    g, p = got
    assert g is not get
    assert g.url == get.url and g.method == "GET"
    assert g.headers.get("X-Mine") == b"yes"
    assert g.meta["mine"] == [1, "two"] and g.meta["depth"] == 2
    assert g.callback == spider.parse_item
    assert g.errback == spider.on_error
    assert g.cb_kwargs == {"k": "v"} and g.priority == 3
    assert g.cookies == {"c": "1"}
    assert p.method == "POST" and p.body == b"q=bloom"
    assert p.headers.get("Content-Type") == \
        b"application/x-www-form-urlencoded"
    assert stats.get_value("scheduler/enqueued") == 2
    assert stats.get_value("scheduler/enqueued/bloomcrawl") == 2
    assert stats.get_value("scheduler/dequeued") == 2
    assert stats.get_value("scheduler/dequeued/bloomcrawl") == 2
    sch.close("finished")


def test_canonical_url_is_fetched():
    sch, spider, _ = scheduler()
    assert sch.enqueue_request(Request("HTTP://A.test:80/a/./b/../c#frag"))
    assert not sch.enqueue_request(Request("http://a.test/a/c"))
    (r,) = drain(sch)
    assert r.url == "http://a.test/a/c"
    sch.close("finished")


def test_duplicates_filtered_logged_and_counted(caplog):
    sch, spider, stats = scheduler()
    caplog.set_level(logging.DEBUG)
    assert sch.enqueue_request(Request("http://a.test/x"))
    assert not sch.enqueue_request(Request("http://a.test/x"))
    assert not sch.enqueue_request(Request("http://A.TEST/x#y"))
    assert stats.get_value("dupefilter/filtered") == 2
    assert "Filtered duplicate request: <GET http://A.TEST/x#y>" in \
        caplog.text or "Filtered duplicate request: <GET http://a.test/x>" \
        in caplog.text
    # dont_filter: admitted again (a retry's copy), so fetched twice.
    assert sch.enqueue_request(Request("http://a.test/x", dont_filter=True))
    assert [r.url for r in drain(sch)] == ["http://a.test/x"] * 2
    assert stats.get_value("dupefilter/filtered") == 2
    sch.close("finished")


def test_non_get_requests_go_through_the_dupefilter():
    sch, spider, stats = scheduler()
    assert sch.enqueue_request(Request("http://a.test/f"))
    post = dict(method="POST", body=b"a=1")
    # A POST to a URL fetched as a GET is another request.
    assert sch.enqueue_request(Request("http://a.test/f", **post))
    assert not sch.enqueue_request(Request("http://a.test/f", **post))
    assert sch.enqueue_request(Request("http://a.test/f", method="POST",
                                       body=b"a=2"))
    assert sch.enqueue_request(Request("http://a.test/f", dont_filter=True,
                                       **post))
    assert stats.get_value("dupefilter/filtered") == 1
    got = drain(sch)
    assert [(r.method, r.body) for r in got] == [
        ("GET", b""), ("POST", b"a=1"), ("POST", b"a=2"), ("POST", b"a=1")]
    sch.close("finished")


def test_refused_requests_are_counted():
    sch, spider, stats = scheduler({"DEPTH_LIMIT": 2})
    assert not sch.enqueue_request(Request("http://a.test/deep",
                                           meta={"depth": 3}))
    assert stats.get_value("bloomcrawl/admit/too_deep") == 1
    assert drain(sch) == []
    sch.close("finished")


def test_unserializable_request_kept_in_memory(caplog):
    sch, spider, stats = scheduler()
    r = Request("http://a.test/lambda", callback=lambda response: None)
    assert sch.enqueue_request(r)
    assert stats.get_value("scheduler/unserializable") == 1
    assert drain(sch) == [r]
    sch.close("finished")


def test_robots_job_is_a_request_of_the_scheduler():
    sch, spider, stats = scheduler({"BLOOMCRAWL_OBEY_ROBOTS": True})
    assert sch.enqueue_request(Request("http://a.test/page"))
    robots = sch.next_request()
    assert robots.url == "http://a.test/robots.txt"
    assert robots.dont_filter and robots.meta["dont_redirect"]
    # Nothing of the host before its robots.txt is answered.
    assert sch.next_request() is None
    assert sch.has_pending_requests()
    sch.close("shutdown")


def test_jobdir_keeps_the_queue_and_the_seen_test(tmp_path):
    jobdir = str(tmp_path / "job")
    sch, spider, _ = scheduler(jobdir=jobdir)
    for i in range(5):
        assert sch.enqueue_request(Request("http://a.test/%d" % i,
                                           meta={"n": i}))
    first = sch.next_request()
    assert first.meta["n"] == 0
    sch.close("shutdown")  # in flight at the stop: queued again
    sch, spider, stats = scheduler(jobdir=jobdir)
    assert not sch.enqueue_request(Request("http://a.test/3"))
    got = drain(sch)
    assert sorted(r.meta["n"] for r in got) == [0, 1, 2, 3, 4]
    assert stats.get_value("bloomcrawl/refetched") == 1
    sch.close("finished")


# -- real crawls of a tiny host ----------------------------------------------

class TinyHost(http.server.ThreadingHTTPServer):
    """127.0.0.1 on a free port: robots.txt (Disallow: /private,
    Crawl-delay: delay), / links to /p0 .. /p{n-1} and /private/x (with
    extra, also to /old, a 301 to /p0, and /busy, a 503 with
    Retry-After: 1); each request's path and time.monotonic() go to
    self.log."""

    def __init__(self, pages, delay, extra=False):
        self.pages, self.delay, self.extra, self.log = pages, delay, extra, []
        super().__init__(("127.0.0.1", 0), TinyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()


class TinyHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        srv = self.server
        srv.log.append((self.path, time.monotonic()))
        if srv.extra and self.path in ("/old", "/busy"):
            self.send_response(301 if self.path == "/old" else 503)
            if self.path == "/old":
                self.send_header("Location", "/p0")
            else:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/robots.txt":
            body = ("User-agent: *\nDisallow: /private\nCrawl-delay: %s\n"
                    % srv.delay).encode()
            ctype = "text/plain"
        else:
            links = "".join('<a href="/p%d">p</a>' % i
                            for i in range(srv.pages))
            if srv.extra:
                links = ('<a href="/busy">b</a>' + links +
                         '<a href="/old">o</a>')
            body = ("<html><body>%s<a href='/private/x'>x</a></body>"
                    "</html>" % links).encode()
            ctype = "text/html"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def tiny_crawl(tmp_path, pages, delay, options=("--checker",),
               extra=False):
    host = TinyHost(pages, delay, extra)
    try:
        out = str(tmp_path / "out.jsonl")
        seed = "http://127.0.0.1:%d/" % host.server_address[1]
        t0 = time.monotonic()
        c = subprocess.run(
            [sys.executable, os.path.join(HERE, "scrapy_site_spider.py"),
             seed, "testbot", "127.0.0.1", out,
             "bloomcrawl.scrapy.BloomDupeFilter", "3", *options,
             "--scheduler", "bloomcrawl.scrapy.FrontierScheduler",
             "--per-host", "1"],
            capture_output=True, text=True, timeout=60)
        elapsed = time.monotonic() - t0
        assert c.returncode == 0, c.stderr[-3000:]
    finally:
        host.shutdown()
        host.server_close()
    with open(out + ".stats" if "--checker" in options else out) as f:
        stats = json.loads(f.readlines()[-1])["stats"]
    return host.log, stats, elapsed


def test_robots_obeyed_crawl_delay_honoured_engine_woken(tmp_path):
    pages, delay = 8, 0.3
    log, stats, elapsed = tiny_crawl(tmp_path, pages, delay)
    paths = [p for p, _ in log]
    # robots.txt first and once; nothing it disallows; each page once.
    assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1
    assert not [p for p in paths if p.startswith("/private")]
    assert sorted(paths[1:]) == sorted(["/"] + ["/p%d" % i
                                                for i in range(pages)])
    assert stats["bloomcrawl/admit/robots"] >= 1
    # Crawl-delay: 0.3 between requests to the host (robots.txt is the
    # frontier's own request: the delay runs from the first page on).
    times = [t for p, t in log if p != "/robots.txt"]
    gaps = [b - a for a, b in zip(times, times[1:])]
    print("Crawl-delay %.1f s: %d pages, gaps %.3f .. %.3f s, crawl %.1f s"
          % (delay, len(times), min(gaps), max(gaps), elapsed))
    assert min(gaps) >= delay - 0.01
    # Woken when the delay ends: a wait left to the engine's 5 s
    # heartbeat makes gaps of 5 s (measured: 4.995 to 5.007 s with the
    # wake-up taken out), and the crawl pages x 5 s long. The margins
    # are for a loaded machine (here: 0.41 s gaps, a 4.6 s crawl).
    assert max(gaps) < delay + 2.5
    assert elapsed < pages * 5 / 2


def test_redirect_followed_once_and_retry_after_obeyed(tmp_path):
    """Scrapy's RedirectMiddleware on (the spider without --checker):
    /old's 301 to /p0, also linked, is a new request through the
    frontier's seen-test, so /p0 is fetched once; /busy's 503 with
    Retry-After: 1 (seen by the scheduler through response_downloaded)
    holds the host for 1 s (not the frontier's 60 s backoff of a 503
    without it)."""
    log, stats, _ = tiny_crawl(tmp_path, 3, 0, options=(), extra=True)
    paths = [p for p, _ in log]
    assert sorted(paths) == sorted(["/robots.txt", "/", "/p0", "/p1",
                                    "/p2", "/old", "/busy"])
    busy = [t for p, t in log if p == "/busy"][0]
    after = [t for p, t in log if t > busy]
    print("after the 503 with Retry-After: 1, the next request %.2f s "
          "later" % (min(after) - busy))
    # Retry-After, not the 60 s backoff of a 503 without one.
    assert len(after) == 4 and 0.95 <= min(after) - busy < 5
    assert stats["scheduler/dequeued/bloomcrawl"] == \
        stats["scheduler/enqueued/bloomcrawl"]


def test_state_write_failure_closes_the_spider(tmp_path):
    """A crawl state that cannot be written (here a file size limit, as a
    full disk would: the writes fail with EFBIG) stops the crawl with the
    cause in the log and finish reason bloomcrawl_state_error; it does
    not go on as if it were durable."""
    import resource
    import signal as sig

    host = TinyHost(200, 0.0)
    jobdir = str(tmp_path / "job")
    out = str(tmp_path / "out.jsonl")

    def limit():
        sig.signal(sig.SIGXFSZ, sig.SIG_IGN)  # a write fails: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (160 << 10, 160 << 10))

    try:
        seed = "http://127.0.0.1:%d/" % host.server_address[1]
        c = subprocess.run(
            [sys.executable, os.path.join(HERE, "scrapy_site_spider.py"),
             seed, "testbot", "127.0.0.1", out,
             "bloomcrawl.scrapy.BloomDupeFilter", "3", jobdir, "--checker",
             "--scheduler", "bloomcrawl.scrapy.FrontierScheduler",
             "--per-host", "1"],
            capture_output=True, text=True, timeout=60, preexec_fn=limit)
    finally:
        host.shutdown()
        host.server_close()
    with open(out + ".stats") as f:
        stats = json.loads(f.readlines()[-1])["stats"]
    assert stats.get("finish_reason") == "bloomcrawl_state_error", \
        (stats, c.stderr[-3000:])
    assert stats.get("bloomcrawl/state_errors") == 1
    assert "The crawl state in" in c.stderr and "failed" in c.stderr
    assert len(host.log) < 200  # stopped, not crawled to the end
