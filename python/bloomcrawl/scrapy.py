"""Scrapy components on bloomcrawl (docs/DESIGN.md 16.1).

BloomDupeFilter is a DUPEFILTER_CLASS: two settings lines make a Scrapy
project (2.8's dupefilter interface, scrapy/dupefilters.py) test its
requests with bloomcrawl's URL normalization and two-tier seen-test
instead of a Python set of SHA-1 fingerprints:

    DUPEFILTER_CLASS = "bloomcrawl.scrapy.BloomDupeFilter"
    BLOOMCRAWL_EXPECT = 10_000_000          # requests the crawl may see

This module imports scrapy; `import bloomcrawl` does not.
"""
import hashlib
import logging
import os
import time
from typing import Any, Dict, Optional

from scrapy.dupefilters import BaseDupeFilter
from scrapy.http.request import Request
from scrapy.spiders import Spider
from scrapy.utils.job import job_dir
from scrapy.utils.request import referer_str

from . import Seen, URLError, Verdict, normalize

__all__ = ["BloomDupeFilter"]

# The file of the seen-test in JOBDIR (RFPDupeFilter's is requests.seen).
SEEN_FILE = "requests.seen.bloom"


class BloomDupeFilter(BaseDupeFilter):
    """Scrapy's DUPEFILTER_CLASS on bloomcrawl's seen-test.

    The key of a request (request_key) is its URL as bloomcrawl.normalize
    makes it (the fetch URL: scheme and host lower case, default port
    dropped, dot segments resolved, percent-encoding made canonical, the
    fragment dropped; BLOOMCRAWL_NORMALIZE adds the opt-in rules as
    keyword arguments, e.g. {"sort_query": True, "strip_params":
    ["utm_*"]}). A GET with an empty body is keyed by that URL alone, so
    "HTTP://Example.COM:80/a/./b" and "http://example.com/a/b" are one
    request. Any other request is keyed by
    "METHOD URL #" + the hex BLAKE2b-128 of its body: two POSTs to one
    URL with different bodies are two requests, and a POST is never the
    GET of its URL. A URL that normalize() refuses (a data: URL, a scheme
    it does not fetch) is keyed as "raw " + request.url, the exact string.
    Headers and cookies are not part of the key (RFPDupeFilter leaves them
    out by default too).

    The keys go through bloomcrawl.Seen(BLOOMCRAWL_EXPECT,
    BLOOMCRAWL_FP_RATE, lru=BLOOMCRAWL_LRU). Its NEW admits the request;
    DUPLICATE (found in the exact LRU of recent keys) filters it; so does
    PROBABLY_SEEN (the Bloom filter says yes and the LRU, having evicted,
    cannot tell): then the request is counted also in the stats key
    "dupefilter/probably_seen". Those are repeats of requests older than
    the LRU (rightly filtered) and new requests lost to a false positive
    (about a fraction BLOOMCRAWL_FP_RATE of the new ones while the crawl
    stays within BLOOMCRAWL_EXPECT): the count bounds from above what the
    filter's size costs. Every filtered
    request counts in "dupefilter/filtered" (Scrapy's key, incremented by
    log() as RFPDupeFilter does); on close "dupefilter/fp_caught" is how
    many Bloom false positives the LRU caught (requests admitted that a
    filter alone would have lost).

    With JOBDIR the seen-test is JOBDIR/requests.seen.bloom: loaded by
    open() if it exists (its own sizing, saved with it, wins over the
    settings), saved by close(). The save is atomic (bc_bloom_save writes
    a temporary file beside it, fsyncs it and renames it over the old
    one), so a kill -9 during a save leaves the previous file whole. The
    LRU is not saved: after a load every key of the file is answered
    PROBABLY_SEEN, filtered all the same.

    BLOOMCRAWL_SAVE_INTERVAL (seconds, default 0: on close only) saves
    it also from request_seen when that many seconds have passed since
    the last save, so a kill -9 loses at most the requests seen in the
    last interval. It is off by default on purpose: Scrapy's own scheduler
    does not keep its disk queue across a kill -9 (queuelib writes the
    queue's index on close), and a seen-test saved ahead of the queue
    would filter, on resume, the rediscovered requests that the queue
    lost: pages never fetched. Saved on close only, the file stays as old
    as the queue it belongs to. Turn it on with a scheduler that persists
    its queue at least as often.
    """

    def __init__(self, path: Optional[str] = None, debug: bool = False, *,
                 expect: int = 1000000, fp_rate: float = 0.01,
                 lru: int = 50000, save_interval: float = 0.0,
                 normalize_rules: Optional[Dict[str, Any]] = None,
                 stats=None) -> None:
        self.file = os.path.join(path, SEEN_FILE) if path else None
        self.debug = debug
        self.logdupes = True
        self.expect, self.fp_rate, self.lru = expect, fp_rate, lru
        self.save_interval = float(save_interval)
        self.rules = dict(normalize_rules or {})
        self.stats = stats
        self.logger = logging.getLogger(__name__)
        self.seen: Optional[Seen] = None
        self._last_save = time.monotonic()
        # Checked here, so a wrong setting fails when the crawler starts.
        normalize("http://example.com/", **self.rules)
        if self.save_interval < 0:
            raise ValueError("BLOOMCRAWL_SAVE_INTERVAL must be >= 0")

    @classmethod
    def from_settings(cls, settings, *, stats=None) -> "BloomDupeFilter":
        return cls(job_dir(settings), settings.getbool("DUPEFILTER_DEBUG"),
                   expect=settings.getint("BLOOMCRAWL_EXPECT", 1000000),
                   fp_rate=settings.getfloat("BLOOMCRAWL_FP_RATE", 0.01),
                   lru=settings.getint("BLOOMCRAWL_LRU", 50000),
                   save_interval=settings.getfloat(
                       "BLOOMCRAWL_SAVE_INTERVAL", 0.0),
                   normalize_rules=settings.getdict("BLOOMCRAWL_NORMALIZE"),
                   stats=stats)

    @classmethod
    def from_crawler(cls, crawler) -> "BloomDupeFilter":
        return cls.from_settings(crawler.settings, stats=crawler.stats)

    def request_key(self, request: Request) -> str:
        """The seen-test's key of request (see the class's docstring)."""
        try:
            url = normalize(request.url, **self.rules)
        except URLError:
            url = "raw " + request.url
        if request.method == "GET" and not request.body:
            return url
        return "%s %s #%s" % (request.method, url, hashlib.blake2b(
            request.body, digest_size=16).hexdigest())

    def open(self) -> None:
        if self.seen is not None:
            return
        if self.file and os.path.exists(self.file):
            self.seen = Seen.load(self.file, lru=self.lru)
            self.logger.info("Loaded the seen-test of %s", self.file)
        else:
            self.seen = Seen(self.expect, self.fp_rate, lru=self.lru)
        self._last_save = time.monotonic()

    def request_seen(self, request: Request) -> bool:
        if self.seen is None:
            self.open()
        verdict = self.seen.test_and_add(self.request_key(request))
        if verdict == Verdict.PROBABLY_SEEN and self.stats is not None:
            self.stats.inc_value("dupefilter/probably_seen")
        if (self.file and self.save_interval > 0 and
                time.monotonic() - self._last_save >= self.save_interval):
            self.save()
        return verdict != Verdict.NEW

    def save(self) -> None:
        """Save the seen-test to JOBDIR now (atomically); nothing without
        JOBDIR."""
        if self.file and self.seen is not None:
            self.seen.save(self.file)
            self._last_save = time.monotonic()

    def close(self, reason: str) -> None:
        if self.seen is None:
            return
        if self.stats is not None:
            self.stats.set_value("dupefilter/fp_caught",
                                 self.seen.stats()["fp_caught"])
        self.save()

    def log(self, request: Request, spider: Spider) -> None:
        if self.debug:
            msg = ("Filtered duplicate request: %(request)s"
                   " (referer: %(referer)s)")
            args = {"request": request, "referer": referer_str(request)}
            self.logger.debug(msg, args, extra={"spider": spider})
        elif self.logdupes:
            msg = ("Filtered duplicate request: %(request)s"
                   " - no more duplicates will be shown"
                   " (see DUPEFILTER_DEBUG to show all duplicates)")
            self.logger.debug(msg, {"request": request},
                              extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
