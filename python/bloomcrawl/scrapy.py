"""Scrapy components on bloomcrawl (docs/DESIGN.md 16.1).

BloomDupeFilter is a DUPEFILTER_CLASS: two settings lines make a Scrapy
project (2.8's dupefilter interface, scrapy/dupefilters.py) test its
requests with bloomcrawl's URL normalization and two-tier seen-test
instead of a Python set of SHA-1 fingerprints:

    DUPEFILTER_CLASS = "bloomcrawl.scrapy.BloomDupeFilter"
    BLOOMCRAWL_EXPECT = 10_000_000          # requests the crawl may see

With BLOOMCRAWL_REDIS_URL the seen-test is a bloomcrawl.RedisSeen that
several Scrapy processes share: each request is admitted once among them
(see BloomDupeFilter's docstring, "Redis mode").

This module imports scrapy; `import bloomcrawl` does not.
"""
import hashlib
import logging
import os
import pickle
import time
from typing import Any, Dict, List, Optional

from scrapy.dupefilters import BaseDupeFilter
from scrapy.http.request import Request
from scrapy.spiders import Spider
from scrapy.utils.job import job_dir
from scrapy import signals
from scrapy.utils.request import referer_str, request_from_dict

from . import (RedisError, RedisLostError, RedisSeen, Seen, URLError,
               Verdict, normalize)

__all__ = ["BloomDupeFilter"]

# The file of the seen-test in JOBDIR (RFPDupeFilter's is requests.seen).
SEEN_FILE = "requests.seen.bloom"
# Redis mode: the requests yielded after a Redis failure, for the resume.
PENDING_FILE = "requests.redis-pending"


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

    Redis mode. With BLOOMCRAWL_REDIS_URL (e.g. "redis://127.0.0.1:6379/0",
    "redis://:password@host:6379/0" or "unix:/path/redis.sock") the keys
    go instead through a bloomcrawl.RedisSeen (bloomcrawl/redis_seen.h):
    a Bloom filter of BLOOMCRAWL_EXPECT keys at BLOOMCRAWL_FP_RATE whose
    bits live in that server under the key prefix BLOOMCRAWL_REDIS_KEY
    (default "bloomcrawl:" + the spider's name): "PREFIX:meta" records
    its sizing, "PREFIX:0", "PREFIX:1", ... hold 64 MiB of bits each.
    Every Scrapy process given the same URL and prefix shares one filter,
    and test-and-add is one BITFIELD command on the server (it sets the
    key's bits and replies with their old values, and Redis runs a command
    whole), so of several processes offering one request at the same
    moment exactly one is told new: each request is admitted once among
    them, with no check-then-set race. Every process must use the same
    BLOOMCRAWL_EXPECT and BLOOMCRAWL_FP_RATE (a different sizing under the
    prefix is refused when the spider opens). There is no LRU: a "seen"
    is final, so a false positive (about BLOOMCRAWL_FP_RATE of the new
    requests while the crawl stays within BLOOMCRAWL_EXPECT) filters a new
    request, counted in "dupefilter/filtered" with the rest. The filter
    outlives the crawl (a second run of the spider filters what the first
    admitted); delete it with bloomcrawl.RedisSeen(url, prefix=...).clear()
    or UNLINK of its keys; it is as durable as the server's persistence.
    JOBDIR keeps no seen-test file in this mode: the set lives in Redis
    (Scrapy's scheduler still keeps its queue there).
    BLOOMCRAWL_REDIS_TIMEOUT (seconds, default 5) bounds each wait on the
    server.

    When Redis fails: open() connects, so an unreachable server, a
    refused AUTH or a filter of another sizing under the prefix stops the
    crawl before it starts, with the cause in the exception. When Redis
    fails during the crawl (the server gone, killed or restarted, no
    answer within the timeout, a command refused), the dupefilter logs an
    ERROR naming the cause, counts "bloomcrawl/redis_errors", and closes
    the spider with the finish reason "bloomcrawl_redis_error". No
    request is filtered for the failure. When the connection broke or
    timed out (RedisLostError), the request being tested is admitted (its
    command may have set its bits, so asking again later could wrongly
    say "seen"): with JOBDIR it is saved in the scheduler's queue and
    fetched on resume, at worst twice among the processes; when the
    command was refused or never sent, it is kept as the next ones are.
    The requests the spider yields while it closes (the rest of the
    responses in progress) are not asked about (each would wait out the
    timeout) but kept aside, neither queued nor counted as filtered: with
    JOBDIR they are written on close to JOBDIR/requests.redis-pending
    (Request.to_dict, pickled, as Scrapy's disk queues do; counted in
    "bloomcrawl/redis_pending"), and the resumed crawl (the same command,
    Redis back) hands each to the engine when the spider opens, so it
    goes through the seen-test then: none lost, none fetched twice.
    Without JOBDIR they are dropped with the scheduler's memory queue,
    counted and logged. A kill -9 while the spider closes loses them, as
    it loses Scrapy's own queue.
    """

    def __init__(self, path: Optional[str] = None, debug: bool = False, *,
                 expect: int = 1000000, fp_rate: float = 0.01,
                 lru: int = 50000, save_interval: float = 0.0,
                 normalize_rules: Optional[Dict[str, Any]] = None,
                 stats=None, redis_url: Optional[str] = None,
                 redis_key: str = "bloomcrawl:dupefilter",
                 redis_timeout: float = 5.0, crawler=None) -> None:
        # Redis mode: the set lives in the server, JOBDIR keeps no file.
        self.redis_url = redis_url or None
        self.redis_key = redis_key
        self.redis_timeout = redis_timeout
        self.crawler = crawler
        self.redis: Optional[RedisSeen] = None
        self.redis_failed: Optional[str] = None  # the cause, once failed
        self.pending: List[Request] = []  # yielded after the failure
        self._pending_ids = set()  # their id()s (alive: in the list)
        self.pending_file: Optional[str] = None
        if self.redis_url:
            if path:
                self.pending_file = os.path.join(path, PENDING_FILE)
            path = None
            if not isinstance(redis_key, str) or not redis_key:
                raise ValueError("BLOOMCRAWL_REDIS_KEY must be a non-empty "
                                 "string")
            if redis_timeout < 0:
                raise ValueError("BLOOMCRAWL_REDIS_TIMEOUT must be >= 0")
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
    def from_settings(cls, settings, *, stats=None,
                      crawler=None) -> "BloomDupeFilter":
        spider = getattr(crawler, "spider", None)
        name = getattr(spider, "name", None) or "dupefilter"
        return cls(job_dir(settings), settings.getbool("DUPEFILTER_DEBUG"),
                   expect=settings.getint("BLOOMCRAWL_EXPECT", 1000000),
                   fp_rate=settings.getfloat("BLOOMCRAWL_FP_RATE", 0.01),
                   lru=settings.getint("BLOOMCRAWL_LRU", 50000),
                   save_interval=settings.getfloat(
                       "BLOOMCRAWL_SAVE_INTERVAL", 0.0),
                   normalize_rules=settings.getdict("BLOOMCRAWL_NORMALIZE"),
                   stats=stats,
                   redis_url=settings.get("BLOOMCRAWL_REDIS_URL"),
                   redis_key=settings.get("BLOOMCRAWL_REDIS_KEY",
                                          "bloomcrawl:" + name),
                   redis_timeout=settings.getfloat(
                       "BLOOMCRAWL_REDIS_TIMEOUT", 5.0),
                   crawler=crawler)

    @classmethod
    def from_crawler(cls, crawler) -> "BloomDupeFilter":
        return cls.from_settings(crawler.settings, stats=crawler.stats,
                                 crawler=crawler)

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
        if self.redis_url:
            if self.redis is None:
                # Connects: a wrong address or sizing fails here, before
                # the crawl starts (the exception names the cause).
                self.redis = RedisSeen(self.redis_url, prefix=self.redis_key,
                                       expected=self.expect,
                                       fp_rate=self.fp_rate,
                                       timeout=self.redis_timeout or None)
                self.logger.info("Seen-test in Redis under %s:*",
                                 self.redis_key)
                if self.pending_file and os.path.exists(self.pending_file) \
                        and self.crawler is not None:
                    self.crawler.signals.connect(
                        self._replay_pending, signal=signals.spider_opened)
            return
        if self.seen is not None:
            return
        if self.file and os.path.exists(self.file):
            self.seen = Seen.load(self.file, lru=self.lru)
            self.logger.info("Loaded the seen-test of %s", self.file)
        else:
            self.seen = Seen(self.expect, self.fp_rate, lru=self.lru)
        self._last_save = time.monotonic()

    def _redis_seen(self, request: Request) -> bool:
        """request_seen in Redis mode (the class's docstring)."""
        if self.redis_failed is not None:
            # Closing for a failure: kept for the resume. True keeps it
            # out of the queue; log() does not count it as filtered.
            self._keep(request)
            return True
        try:
            if self.redis is None:
                self.open()
            return not self.redis.test_and_add(self.request_key(request))
        except RedisLostError as e:
            # The command may have set the key's bits: admitted (asked
            # again on resume, it could be told "seen" and be lost).
            self._redis_failure(e, request)
            return False
        except RedisError as e:
            # Refused or never sent (e.g. WRONGTYPE, no connection): kept,
            # as the requests after it, to be asked on resume.
            self._redis_failure(e, request)
            self._keep(request)
            return True

    def _redis_failure(self, error: Exception, request: Request) -> None:
        """Log the cause, count it, close the spider (once)."""
        self.redis_failed = str(error)
        if self.stats is not None:
            self.stats.inc_value("bloomcrawl/redis_errors")
        self.logger.error(
            "The Redis seen-test failed: %(error)s. Closing the spider "
            "(finish reason bloomcrawl_redis_error); the requests yielded "
            "while it closes are kept for the resume (JOBDIR), none is "
            "filtered (%(request)s is the first)",
            {"error": error, "request": request})
        crawler = self.crawler
        if crawler is None:
            return

        def close() -> None:
            engine, spider = crawler.engine, crawler.spider
            if engine is not None and engine.slot is not None and \
                    spider is not None:
                engine.close_spider(spider, "bloomcrawl_redis_error")

        # Now, while a response's callback output is being enqueued (its
        # request is in the engine's inprogress set, so closing cannot
        # complete under our feet, and the engine hands out no more
        # requests from here on); else, as for a start request, from the
        # reactor's next turn, not from inside enqueue_request.
        slot = getattr(crawler.engine, "slot", None)
        if slot is not None and slot.inprogress:
            close()
        else:
            from twisted.internet import reactor
            reactor.callLater(0, close)

    def _keep(self, request: Request) -> None:
        self.pending.append(request)
        self._pending_ids.add(id(request))

    def _replay_pending(self, spider: Spider) -> None:
        """On spider_opened of a resumed crawl: the requests kept at the
        last run's Redis failure, handed to the engine, so that each goes
        through the scheduler and this seen-test now."""
        with open(self.pending_file, "rb") as f:
            dicts = pickle.load(f)
        os.remove(self.pending_file)
        self.logger.info("Checking %d requests kept at a Redis failure of "
                         "the last run (%s)", len(dicts), self.pending_file)
        if self.stats is not None:
            self.stats.set_value("bloomcrawl/redis_replayed", len(dicts))
        for d in dicts:
            self.crawler.engine.crawl(request_from_dict(d, spider=spider))

    def _save_pending(self) -> None:
        """On close: the requests kept since a Redis failure, to JOBDIR
        (atomically: a temporary file renamed), or dropped and said."""
        if not self.pending:
            return
        if self.stats is not None:
            self.stats.set_value("bloomcrawl/redis_pending",
                                 len(self.pending))
        if not self.pending_file:
            self.logger.warning(
                "%d requests yielded after the Redis failure are dropped "
                "with the scheduler's queue (no JOBDIR to keep them)",
                len(self.pending))
            return
        spider = getattr(self.crawler, "spider", None)
        dicts = []
        for r in self.pending:
            try:
                dicts.append(r.to_dict(spider=spider))
            except ValueError as e:  # a callback that is not the spider's
                self.logger.warning("Cannot keep %s for the resume: %s",
                                    r, e)
        if os.path.exists(self.pending_file):  # a replay failed again
            with open(self.pending_file, "rb") as f:
                dicts = pickle.load(f) + dicts
        tmp = self.pending_file + ".tmp"
        with open(tmp, "wb") as f:
            pickle.dump(dicts, f, protocol=4)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.pending_file)
        self.logger.warning(
            "%d requests yielded after the Redis failure are kept in %s; "
            "the same command, Redis back, checks and crawls them",
            len(dicts), self.pending_file)

    def request_seen(self, request: Request) -> bool:
        if self.redis_url:
            return self._redis_seen(request)
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
        if self.redis_url:
            if self.redis is not None:
                self.redis.close()  # the set stays in Redis
            self._save_pending()
            return
        if self.seen is None:
            return
        if self.stats is not None:
            self.stats.set_value("dupefilter/fp_caught",
                                 self.seen.stats()["fp_caught"])
        self.save()

    def log(self, request: Request, spider: Spider) -> None:
        if id(request) in self._pending_ids:
            return  # kept at a Redis failure, not filtered
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
