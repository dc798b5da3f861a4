"""Scrapy components on bloomcrawl (docs/DESIGN.md 16.1 and 16.2).

BloomDupeFilter is a DUPEFILTER_CLASS: two settings lines make a Scrapy
project (2.8's dupefilter interface, scrapy/dupefilters.py) test its
requests with bloomcrawl's URL normalization and two-tier seen-test
instead of a Python set of SHA-1 fingerprints:

    DUPEFILTER_CLASS = "bloomcrawl.scrapy.BloomDupeFilter"
    BLOOMCRAWL_EXPECT = 10_000_000          # requests the crawl may see

FrontierScheduler is a SCHEDULER: its requests wait in bloomcrawl's
frontier (per-host FIFO queues, robots.txt, Crawl-delay, the seen-test)
and, with JOBDIR, in a bloomcrawl crawl state that survives kill -9:

    SCHEDULER = "bloomcrawl.scrapy.FrontierScheduler"
    JOBDIR = "crawls/myspider-1"            # optional: durable

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
import weakref
from typing import Any, Dict, List, Optional

from scrapy import signals
from scrapy.core.scheduler import BaseScheduler
from scrapy.dupefilters import BaseDupeFilter
from scrapy.http.request import Request
from scrapy.spiders import Spider
from scrapy.utils.job import job_dir
from scrapy.utils.misc import create_instance, load_object
from scrapy.utils.request import referer_str, request_from_dict

from . import (Error, FileError, RedisError, RedisLostError, RedisSeen, Seen,
               URLError, Verdict, normalize)

__all__ = ["BloomDupeFilter", "FrontierScheduler"]

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
    server. BLOOMCRAWL_REDIS_K (default: the k of the least memory) sets
    the probes a key, with the bits that keep BLOOMCRAWL_FP_RATE at that
    k: where the server's CPU is scarcer than its memory, 1 costs it about
    a quarter of the default's CPU a key for ten times the bits (the same
    in every process, as the sizing is).

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
                 redis_timeout: float = 5.0, redis_k: Optional[int] = None,
                 crawler=None) -> None:
        # Redis mode: the set lives in the server, JOBDIR keeps no file.
        self.redis_url = redis_url or None
        self.redis_key = redis_key
        self.redis_timeout = redis_timeout
        self.redis_k = redis_k
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
                   redis_k=(settings.getint("BLOOMCRAWL_REDIS_K")
                            if settings.get("BLOOMCRAWL_REDIS_K") is not None
                            else None),
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
                                       timeout=self.redis_timeout or None,
                                       k=self.redis_k)
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


# Where FrontierScheduler keeps its crawl state in JOBDIR.
STATE_DIR = "bloomcrawl"

# The prefix of a payload that stands for a request kept in memory (one
# Request.to_dict cannot serialize, or too large for the frontier): a
# pickle (protocol 4) always starts with b"\x80".
MEMORY_PAYLOAD = b"mem:"


class FrontierScheduler(BaseScheduler):
    """Scrapy's SCHEDULER on bloomcrawl's frontier (DESIGN 16.3).

    enqueue_request() admits a request to the frontier: its URL is
    normalized and goes through robots.txt (when its host's is known),
    the frontier's limits and its seen-test; the request itself,
    serialized as Scrapy's disk queues do (Request.to_dict, pickle
    protocol 4), is the URL's payload. next_request() hands out what the
    frontier says is due: one host's requests in FIFO order, at most
    BLOOMCRAWL_PER_HOST at a time, BLOOMCRAWL_DELAY seconds apart (or
    the host's robots.txt Crawl-delay, capped at
    BLOOMCRAWL_MAX_CRAWL_DELAY), each host's robots.txt fetched first
    (through Scrapy's downloader, by a request the scheduler makes) and
    obeyed. The request handed out is the payload's, its URL replaced by
    the frontier's canonical fetch URL (the one the seen-test keyed).
    At most BLOOMCRAWL_MAX_IN_PROGRESS requests (default
    CONCURRENT_REQUESTS; 0: no cap) are out at once, counting those
    downloaded and waiting for the spider (Scrapy's engine would
    otherwise download ahead of a busy spider, up to 5 MB of responses):
    the bound of what a kill -9 repeats.

    Done: a request is done when it leaves the engine's
    slot.inprogress, i.e. once its response (or failure) went through
    the spider's callback (or errback) and every request the callback
    made was enqueued; then frontier.done() with the HTTP status the
    downloader saw (0 and fault "permanent" without a response).
    Retries are Scrapy's (RetryMiddleware enqueues a dont_filter copy).

    Seeds: the spider's start requests are admitted as seeds through the
    seen-test even when dont_filter (Scrapy's default for them), so the
    seed linked back from a page is not fetched twice and a resumed
    crawl, which runs start_requests() again, does not fetch them again.
    Every other dont_filter request is admitted unfiltered.

    Non-GET requests (or any with a body): the frontier's seen-test keys
    URLs, so such a request is first asked to the dupefilter Scrapy gives
    every scheduler (DUPEFILTER_CLASS; unless dont_filter), then
    admitted unfiltered. Their duplicate detection is the dupefilter's,
    and so is its durability.

    JOBDIR: the frontier lives in the crawl state JOBDIR/bloomcrawl
    (bloomcrawl.CrawlState), committed before a request is handed out
    and at the end of each reactor turn in which requests were done or
    handed out (when something changed), and on close; snapshotted every
    BLOOMCRAWL_SNAPSHOT_INTERVAL seconds and on close. After kill -9 the same command resumes: the
    requests queued at the last commit are queued again, and so are
    those in flight then (fetched twice: at most BLOOMCRAWL_MAX_IN_PROGRESS
    a kill); the stats key bloomcrawl/refetched counts them.
    """

    def __init__(self, crawler, dupefilter, jobdir: Optional[str] = None,
                 *, stats=None, frontier_options: Optional[Dict] = None,
                 snapshot_interval: float = 60.0,
                 max_in_progress: int = 0) -> None:
        self.crawler = crawler
        self.df = dupefilter
        self.jobdir = jobdir
        self.stats = stats
        self.options = dict(frontier_options or {})
        self.snapshot_interval = float(snapshot_interval)
        self.max_in_progress = int(max_in_progress)
        self.logger = logging.getLogger(__name__)
        self.spider: Optional[Spider] = None
        self.slot = None         # the engine's slot (inprogress, nextcall)
        self.state = None
        self.state_failed: Optional[str] = None  # the cause, once failed
        self.frontier = None
        # Request handed out -> its Job (fetch or robots); the request
        # -> (status, Retry-After ms) of the response the downloader got.
        self._jobs: Dict[Request, Any] = {}
        self._status: "weakref.WeakKeyDictionary" = \
            weakref.WeakKeyDictionary()
        # Start requests not yet enqueued (seeds): see _tag_seeds.
        self._seeds: "weakref.WeakSet" = weakref.WeakSet()
        # Requests kept in memory (MEMORY_PAYLOAD + their number).
        self._memory: Dict[int, Request] = {}
        self._memory_next = 0
        self._names: Dict[Any, str] = {}   # _method_name's cache
        self._dirty = False
        self._last_snapshot = time.monotonic()
        self._wake = None        # the pending reactor.callLater, if any
        self._wake_at = None     # its bloomcrawl.now_ms() deadline
        self._commit_call = None  # the pending commit (_commit_soon)
        self._robots_answered: "weakref.WeakSet" = weakref.WeakSet()

    @classmethod
    def from_crawler(cls, crawler) -> "FrontierScheduler":
        s = crawler.settings
        df_cls = load_object(s["DUPEFILTER_CLASS"])
        delay = s.getfloat("BLOOMCRAWL_DELAY",
                           s.getfloat("DOWNLOAD_DELAY", 0.0))
        depth = s.getint("DEPTH_LIMIT", 0)
        obey = s.getbool("BLOOMCRAWL_OBEY_ROBOTS", True)
        options = {
            # robots.txt is judged for the product token of USER_AGENT
            # (ROBOTSTXT_USER_AGENT, when set, as Scrapy's middleware).
            "user_agent": s.get("ROBOTSTXT_USER_AGENT") or
            s.get("USER_AGENT") or "Scrapy",
            "min_delay": delay,
            "max_crawl_delay": s.getfloat("BLOOMCRAWL_MAX_CRAWL_DELAY",
                                          30.0),
            "obey_robots": obey,
            # Scrapy's OffsiteMiddleware (allowed_domains) is the scope.
            "scope": "any",
            # DEPTH_LIMIT 0 is Scrapy's "no limit" (the DepthMiddleware
            # enforces a set one before the scheduler sees a request):
            # the frontier's largest, 65535.
            "max_depth": min(depth, 65535) if depth > 0 else 65535,
            "host_budget": s.getint("BLOOMCRAWL_HOST_BUDGET", 0),
            "expected": s.getint("BLOOMCRAWL_EXPECT", 1000000),
            "fp_rate": s.getfloat("BLOOMCRAWL_FP_RATE", 0.01),
            "lru": s.getint("BLOOMCRAWL_LRU", 50000),
            "max_payload": s.getint("BLOOMCRAWL_MAX_PAYLOAD", 1 << 20),
            "per_host": s.getint(
                "BLOOMCRAWL_PER_HOST",
                s.getint("CONCURRENT_REQUESTS_PER_DOMAIN", 1) or 1),
        }
        if obey and s.getbool("ROBOTSTXT_OBEY"):
            logging.getLogger(__name__).warning(
                "ROBOTSTXT_OBEY and BLOOMCRAWL_OBEY_ROBOTS are both on: "
                "robots.txt is fetched twice per host (set ROBOTSTXT_OBEY "
                "= False: the frontier obeys it)")
        return cls(crawler, create_instance(df_cls, s, crawler),
                   job_dir(s), stats=crawler.stats,
                   frontier_options=options,
                   snapshot_interval=s.getfloat(
                       "BLOOMCRAWL_SNAPSHOT_INTERVAL", 60.0),
                   max_in_progress=s.getint(
                       "BLOOMCRAWL_MAX_IN_PROGRESS",
                       s.getint("CONCURRENT_REQUESTS", 16)))

    # -- opening and closing ------------------------------------------------

    def open(self, spider: Spider):
        from . import CrawlState, Frontier
        self.spider = spider
        if self.jobdir:
            path = os.path.join(self.jobdir, STATE_DIR)
            os.makedirs(path, exist_ok=True)
            self.state = CrawlState(path, options={
                "scrapy.spider": spider.name})
            self.frontier = self.state.frontier(**self.options)
            info = self.state.info()
            if info.get("resumed"):
                refetched = int(info.get("refetched_now", 0))
                self._inc("bloomcrawl/refetched", refetched)
                self.logger.info(
                    "Resuming crawl from %(path)s (%(queued)d requests "
                    "queued, %(refetched)d of them in flight at the "
                    "last stop)", {"path": path, "queued": len(
                        self.frontier), "refetched": refetched},
                    extra={"spider": spider})
        else:
            self.frontier = Frontier(**self.options)
        engine = getattr(self.crawler, "engine", None)
        slot = self.slot = getattr(engine, "slot", None)
        if slot is not None:
            # The engine calls slot.remove_request(request) once the
            # request's callback output is processed: that is done().
            remove = slot.remove_request

            def remove_request(request, _remove=remove):
                self._finished(request)
                _remove(request)
            slot.remove_request = remove_request
            if slot.start_requests is not None:
                slot.start_requests = self._tag_seeds(slot.start_requests)
        self.crawler.signals.connect(self._downloaded,
                                     signal=signals.response_downloaded)
        return self.df.open()

    def close(self, reason: str):
        for call in (self._wake, self._commit_call):
            if call is not None and call.active():
                call.cancel()
        self._wake = self._commit_call = None
        if self.frontier is not None:
            for name, value in self.frontier.stats().items():
                if value:
                    self._set("bloomcrawl/" + name, value)
        if self.state is not None:
            if not self.state_failed:
                self.state.commit()
                self.state.snapshot()
            self.state.close()  # after a failure: back to the last commit
            self.state = None
        self.frontier = None
        self.crawler.signals.disconnect(self._downloaded,
                                        signal=signals.response_downloaded)
        return self.df.close(reason)

    def _tag_seeds(self, start_requests):
        """The spider's start requests, each remembered as a seed until
        the engine enqueues it (it does so as soon as it takes it)."""
        for request in start_requests:
            if isinstance(request, Request):
                self._seeds.add(request)
            yield request

    # -- the queue -----------------------------------------------------------

    def has_pending_requests(self) -> bool:
        return self.frontier is not None and len(self.frontier) > 0

    def __len__(self) -> int:
        return len(self.frontier) if self.frontier is not None else 0

    def enqueue_request(self, request: Request) -> bool:
        seed = request in self._seeds
        if seed:
            self._seeds.discard(request)
        plain = request.method == "GET" and not request.body
        if not plain:
            # The frontier keys URLs: the dupefilter keys the method and
            # body (BloomDupeFilter: "METHOD URL #hash").
            if not request.dont_filter and self.df.request_seen(request):
                self.df.log(request, self.spider)
                return False
        if self.state_failed is not None:
            # The state failed and the spider is closing: the links of
            # the pages still arriving are not admitted (their store
            # refuses every write), as the uncommitted work is fetched
            # again by the resume. Raised from here, the error left the
            # spider open, the engine waiting on the scraper.
            return False
        payload = self._payload(request)
        referrer = request.headers.get("Referer")
        try:
            reason = self.frontier.add(
                request.url, depth=int(request.meta.get("depth", 0)),
                payload=payload,
                referrer=referrer.decode("latin-1") if referrer else None,
                seed=seed, dont_filter=(not plain) or (
                    request.dont_filter and not seed),
                redirects=min(len(request.meta.get("redirect_urls", ())),
                              255))
        except FileError as e:
            if self.state is None:
                raise
            self._state_failure(e)  # the store's write failed
            return False
        self._dirty = True
        if reason == "queued":
            self._inc("scheduler/enqueued")
            self._inc("scheduler/enqueued/bloomcrawl")
            return True
        if payload.startswith(MEMORY_PAYLOAD):
            del self._memory[int(payload[len(MEMORY_PAYLOAD):])]
        if reason in ("duplicate", "probably_seen"):
            if reason == "probably_seen":
                self._inc("bloomcrawl/admit/probably_seen")
            self.df.log(request, self.spider)
            return False
        self._inc("bloomcrawl/admit/" + reason)
        self.logger.debug("Not scheduled (%(reason)s): %(request)s",
                          {"reason": reason, "request": request},
                          extra={"spider": self.spider})
        return False

    def _method_name(self, func):
        """The name of the spider's method func (None: None), as
        Request.to_dict finds it, but cached: Scrapy 2.8's _find_method
        walks inspect.getmembers(spider) on each call, which was 13 % of
        a crawl's CPU time here (two calls a request). ValueError when
        func is not a method of the spider."""
        if func is None or not callable(func):
            return func
        f = getattr(func, "__func__", None)
        if f is None or getattr(func, "__self__", None) is not self.spider:
            raise ValueError("%r is not a method of the spider" % (func,))
        name = self._names.get(f)
        if name is None:
            name = f.__name__
            bound = getattr(self.spider, name, None)
            if getattr(bound, "__func__", None) is not f:
                # An alias, or a name-mangled __method: Scrapy's search.
                name = Request("http://x/", callback=func).to_dict(
                    spider=self.spider)["callback"]
            self._names[f] = name
        return name

    def _to_dict(self, request: Request) -> dict:
        """Request.to_dict(spider=...) of Scrapy 2.8, line for line, with
        the cached method names (_method_name)."""
        d = {"url": request.url,
             "callback": self._method_name(request.callback),
             "errback": self._method_name(request.errback),
             "headers": dict(request.headers)}
        for attr in request.attributes:
            d.setdefault(attr, getattr(request, attr))
        if type(request) is not Request:
            d["_class"] = (type(request).__module__ + "." +
                           type(request).__name__)
        return d

    def _payload(self, request: Request) -> bytes:
        try:
            payload = pickle.dumps(self._to_dict(request), protocol=4)
            if len(payload) <= self.options.get("max_payload", 65536):
                return payload
            why = "larger than BLOOMCRAWL_MAX_PAYLOAD"
        except (ValueError, TypeError, AttributeError,
                pickle.PicklingError) as e:
            why = str(e)
        # As Scrapy's scheduler falls back to its memory queue.
        self._inc("scheduler/unserializable")
        self.logger.warning("Request kept in memory only (not durable: "
                            "%(why)s): %(request)s",
                            {"why": why, "request": request},
                            extra={"spider": self.spider})
        n = self._memory_next
        self._memory_next += 1
        self._memory[n] = request
        return MEMORY_PAYLOAD + str(n).encode()

    def next_request(self) -> Optional[Request]:
        if self.frontier is None:
            return None
        if (self.max_in_progress and self.slot is not None and
                len(self.slot.inprogress) >= self.max_in_progress):
            # Asked again when one of them is done (the engine schedules
            # its next call then).
            return None
        if self.state is not None:
            self._commit()
            if (not self.state_failed and time.monotonic() -
                    self._last_snapshot >= self.snapshot_interval):
                try:
                    self.state.snapshot()
                except Error as e:
                    self._state_failure(e)
                self._last_snapshot = time.monotonic()
            if self.state_failed:
                return None
        while True:
            job = self.frontier.next()
            if job.action == "fetch":
                request = self._request(job)
                if request is None:
                    continue
                self._jobs[request] = job
                self._dirty = True
                self._commit_soon()
                self._inc("scheduler/dequeued")
                self._inc("scheduler/dequeued/bloomcrawl")
                return request
            if job.action == "robots":
                request = self._robots_request(job)
                self._jobs[request] = job
                self._dirty = True
                self._commit_soon()
                return request
            if job.action == "drop":
                self._dirty = True
                self._inc("bloomcrawl/dropped/%s" % job.reason)
                self.logger.debug("Dropped (%(reason)s): %(url)s",
                                  {"reason": job.reason, "url": job.url},
                                  extra={"spider": self.spider})
                continue
            if job.action == "wait":
                self._wake_up_at(job.wait_until_ms)
            # "wait" or "done" ("sitemap" is never handed out: the
            # frontier is made without sitemaps).
            return None

    def _request(self, job) -> Optional[Request]:
        """The Scrapy request of a fetch job (None: it cannot be made
        again, and the job is done)."""
        payload = job.payload or b""
        if payload.startswith(MEMORY_PAYLOAD):
            request = self._memory.pop(
                int(payload[len(MEMORY_PAYLOAD):]), None)
            if request is None:
                # Kept in memory by a run before a kill or a stop.
                self._inc("bloomcrawl/memory_lost")
                self.logger.warning("A request kept in memory by an "
                                    "earlier run is lost: %(url)s",
                                    {"url": job.url},
                                    extra={"spider": self.spider})
                self.frontier.done(job, 0, fault="permanent")
                self._dirty = True
                return None
        else:
            d = pickle.loads(payload)
            d["url"] = job.url
            request = request_from_dict(d, spider=self.spider)
        if request.url != job.url:
            request = request.replace(url=job.url)
        return request

    # -- done ----------------------------------------------------------------

    def _commit(self) -> None:
        """Commit the crawl state if anything changed since the last
        commit (one SQLite transaction, WAL, no fsync)."""
        self._commit_call = None
        if self.state is not None and self._dirty and not self.state_failed:
            try:
                self.state.commit()
            except Error as e:
                self._state_failure(e)
                return
            self._dirty = False

    def _state_failure(self, error: Exception) -> None:
        """The crawl state (JOBDIR) could not be written (a full disk, a
        file size limit, an I/O error: the message names it). Log the
        cause, count it and close the spider (finish reason
        bloomcrawl_state_error), once: nothing more is handed out, and
        what was done since the last commit is fetched again when the
        same command resumes from that commit, once the cause is gone.
        Never a crawl that goes on as if it were durable."""
        if self.state_failed is not None:
            return
        self.state_failed = str(error)
        self._inc("bloomcrawl/state_errors")
        self.logger.error(
            "The crawl state in %(dir)s failed: %(error)s. Closing the "
            "spider (finish reason bloomcrawl_state_error); the same "
            "command resumes from the last commit",
            {"dir": self.jobdir, "error": error})
        crawler = self.crawler
        from twisted.internet import reactor

        def close() -> None:
            engine = getattr(crawler, "engine", None)
            spider = getattr(crawler, "spider", None)
            if engine is not None and engine.slot is not None and \
                    spider is not None:
                engine.close_spider(spider, "bloomcrawl_state_error")

        reactor.callLater(0, close)

    def _commit_soon(self) -> None:
        """Commit once the reactor's current turn is over: the dones and
        hand-outs of one turn go in one transaction. Not left to
        next_request(): the engine does not call it while the downloader
        is full, and a page done but not committed is fetched again after
        a kill. A hand-out committed is counted in bloomcrawl/refetched
        if a kill comes before its done (one not committed yet is queued
        again all the same, uncounted)."""
        from twisted.internet import reactor
        if self.state is not None and self._commit_call is None:
            self._commit_call = reactor.callLater(0, self._commit)

    def _downloaded(self, response, request, spider) -> None:
        retry_after = 0
        if response.status in (429, 503):
            value = response.headers.get("Retry-After")
            try:
                retry_after = max(0, int(value)) * 1000 if value else 0
            except ValueError:
                retry_after = 0
        self._status[request] = (response.status, retry_after)

    def _finished(self, request: Request) -> None:
        job = self._jobs.pop(request, None)
        if job is None or self.frontier is None:
            return
        try:
            self._dirty = True
            self._commit_soon()
            if job.action == "robots":
                # Answered by its callback or errback, unless the request
                # was dropped on its way (then: unreachable, retried).
                self._robots_done(request, job, 0, b"", None)
                return
            status, retry_after = self._status.pop(request, (0, 0))
            self.frontier.done(job, status,
                               fault="none" if status else "permanent",
                               retry_after_ms=retry_after)
        except Exception as e:
            if isinstance(e, Error) and self.state is not None:
                self._state_failure(e)  # the state's store refused it
                return
            self.logger.exception("bloomcrawl: done() of %(request)s "
                                  "failed", {"request": request},
                                  extra={"spider": self.spider})

    def _robots_request(self, job) -> Request:
        """The request of a robots job: its callback and errback report
        the answer to the frontier (and output nothing); no redirect, no
        retry (the frontier decides both), any status to the callback."""
        request = Request(job.url, dont_filter=True, meta={
            "dont_redirect": True, "dont_retry": True,
            "handle_httpstatus_all": True, "dont_obey_robotstxt": True,
            "bloomcrawl_robots": True})

        def answered(response):
            location = response.headers.get("Location")
            self._robots_done(request, job, response.status, response.body,
                              location.decode("latin-1") if location
                              else None)

        def failed(failure):
            response = getattr(failure.value, "response", None)
            if response is not None:
                return answered(response)
            self._robots_done(request, job, 0, b"", None)
        request.callback, request.errback = answered, failed
        return request

    def _robots_done(self, request, job, status, body, location) -> None:
        if self.frontier is None or request in self._robots_answered:
            return
        self._robots_answered.add(request)
        self.frontier.robots_done(job, status, body, location=location)
        self._dirty = True

    # -- waking the engine ---------------------------------------------------

    def _wake_up_at(self, when_ms: Optional[int]) -> None:
        """Have the engine ask again at when_ms: it polls a scheduler
        that returned nothing only on its 5 s heartbeat, or when a
        download ends (None: only then)."""
        from twisted.internet import reactor

        from . import now_ms
        if when_ms is None:
            return
        if self._wake is not None and self._wake.active():
            if self._wake_at <= when_ms:
                return
            self._wake.cancel()
        delay = max(0, when_ms - now_ms()) / 1000.0
        self._wake_at = when_ms
        self._wake = reactor.callLater(delay, self._wake_engine)

    def _wake_engine(self) -> None:
        self._wake = None
        if self.slot is not None:
            self.slot.nextcall.schedule()

    # -- stats ---------------------------------------------------------------

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(key, count, spider=self.spider)

    def _set(self, key: str, value) -> None:
        if self.stats is not None:
            self.stats.set_value(key, value, spider=self.spider)
