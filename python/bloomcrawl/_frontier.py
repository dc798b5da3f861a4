"""bloomcrawl._frontier - the crawl frontier and the crawl state, from
Python (re-exported by bloomcrawl: Job, Frontier, CrawlState, now_ms,
StateLockedError, StateMismatchError). docs/DESIGN.md 16 tells the design.

A Frontier decides which URL to fetch next (bloomcrawl/frontier.h):
add() admits a URL (normalization, scope, limits, robots.txt, the
seen-test), next() hands out a Job, and done(), robots_done() or
giveback() reports how it went. The caller fetches; the frontier never
does I/O and never reads a clock of its own: every call that depends on
time takes now_ms (bloomcrawl.now_ms() by default), so politeness can be
tested with made-up times.

A Job is a snapshot: plain Python values copied from the C job when
next() handed it out (the C job's strings belong to the frontier and die
with its next calls). The Frontier keeps the C job of every job it
handed out and not finished, keyed by the Job object itself, so done(job)
finds it; a Job that is not out (finished already, of another frontier,
of a closed state) raises InvalidArgumentError instead of reaching C.

A CrawlState is a crawl state directory (crawl --state DIR's format,
bloomcrawl/crawl_state.h): its frontier writes every admission, hand-out
and drop to SQLite, commit() ends a transaction (cheap: WAL, no fsync),
and after a kill -9 the same CrawlState(path).frontier() resumes with the
committed queue, payloads, seen-test and hosts; the jobs in flight at the
last commit are queued again (info()["refetched_now"]). It works through
the state's private doors (crawler/state_int.h) as crawl does: the
Python package is part of the project.
"""
import inspect
import math
import threading
import weakref
from dataclasses import dataclass
from typing import Dict, Mapping, Optional, Sequence, Union

from ._native import ffi, lib
from . import (Error, InvalidArgumentError, Key, Path, _count, _key, _path,
               _raise, _rate)

__all__ = ["Job", "Frontier", "CrawlState", "StateLockedError",
           "StateMismatchError", "now_ms"]

_UINT_MAX = (1 << (8 * ffi.sizeof("unsigned"))) - 1
_U64_MAX = (1 << 64) - 1
_SIZE_MAX = (1 << (8 * ffi.sizeof("size_t"))) - 1
_OK = lib.BC_OK
_INVALID = lib.BC_ERR_INVALID_ARG


def _status_name(status: int) -> str:
    """"BC_ERR_LOCKED" for a status (the enum in the cdef names only a
    few of its values)."""
    name = lib.bcpy_status_name(status)
    return ffi.string(name).decode() if name else ""



_ACTIONS = {
    lib.BC_FRONTIER_FETCH: "fetch",
    lib.BC_FRONTIER_FETCH_ROBOTS: "robots",
    lib.BC_FRONTIER_FETCH_SITEMAP: "sitemap",
    lib.BC_FRONTIER_DROP: "drop",
    lib.BC_FRONTIER_WAIT: "wait",
    lib.BC_FRONTIER_DONE: "done",
}
# The actions whose job is out until a done() (or giveback()).
_OUT = (lib.BC_FRONTIER_FETCH, lib.BC_FRONTIER_FETCH_ROBOTS,
        lib.BC_FRONTIER_FETCH_SITEMAP)
_SCOPES = {"host": lib.BC_SCOPE_HOST, "domain": lib.BC_SCOPE_DOMAIN,
           "any": lib.BC_SCOPE_ANY}
_FAULTS = {"none": lib.BC_FAULT_NONE, "permanent": lib.BC_FAULT_PERMANENT,
           "transient": lib.BC_FAULT_TRANSIENT, "local": lib.BC_FAULT_LOCAL}
for _name, _value in _FAULTS.items():  # the names are the C library's
    assert ffi.string(lib.bc_fault_name(_value)).decode() == _name
del _name, _value


def now_ms() -> int:
    """bloomcrawl's monotonic clock (CLOCK_MONOTONIC), in milliseconds:
    the clock of every now_ms argument when it is None."""
    return int(lib.bc_mono_ms())


def _now(value: Optional[int]) -> int:
    if value is None:
        return int(lib.bc_mono_ms())
    return _count(value, "now_ms")


def _ms(seconds: float, what: str) -> int:
    """Seconds (a float of the Python API) as the C library's ms."""
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool):
        raise TypeError("%s must be a number of seconds, not %s"
                        % (what, type(seconds).__name__))
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError("%s must be a finite number >= 0, not %r"
                         % (what, seconds))
    ms = int(round(seconds * 1000.0))
    if ms > _U64_MAX:
        raise ValueError("%s is too large: %r" % (what, seconds))
    return ms


def _bytes_arg(value, what: str) -> bytes:
    """A payload or a body: bytes-like only (a str would need an encoding
    the caller did not choose)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    raise TypeError("%s must be bytes, not %s" % (what, type(value).__name__))


def _text(ptr, n: int) -> Optional[str]:
    if ptr == ffi.NULL:
        return None
    return ffi.unpack(ptr, n).decode("utf-8", "surrogateescape")


def _reason_name(reason: int) -> str:
    return ffi.string(lib.bc_frontier_reason_name(reason)).decode()


def _flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError("%s must be a bool, not %s"
                        % (what, type(value).__name__))
    return value


@dataclass(frozen=True, eq=False)
class Job:
    """What Frontier.next() hands out: a plain, immutable snapshot.

    action is "fetch" (fetch url, then Frontier.done()), "robots" (url is
    a robots.txt: fetch it, then robots_done()), "sitemap" (with
    sitemaps=True: url is a sitemap; add_from_sitemap() what it lists,
    then sitemap_done()), "drop" (url is dropped for reason, e.g.
    "robots": nothing to do), "wait" (nothing is ready before
    wait_until_ms; None: until a job out is done) or "done" (nothing is
    queued or out: the crawl is over). payload is the bytes given to
    add(), byte for byte (None when none, or empty); id the crawl state's
    id of the URL (0 without a state). Jobs compare and hash by identity:
    the frontier keeps the C job of each one out, keyed by the Job."""
    action: str
    url: Optional[str] = None
    depth: int = 0
    redirects: int = 0
    retries: int = 0
    reason: Optional[str] = None
    wait_until_ms: Optional[int] = None
    id: int = 0
    referrer: Optional[str] = None
    payload: Optional[bytes] = None
    origin: Optional[str] = None
    scope: Optional[str] = None  # sitemap: the prefix its pages must have


def _job_of(cj) -> Job:
    """The snapshot of C job cj (its strings copied)."""
    action = _ACTIONS.get(cj.action)
    if action is None:
        raise Error(lib.BC_ERR_INVALID_ARG, "Frontier.next: unknown action")
    payload = None
    if action == "fetch" and cj.payload_len:
        payload = ffi.unpack(ffi.cast("char *", cj.payload), cj.payload_len)
    has_url = action in ("fetch", "robots", "sitemap", "drop")
    return Job(
        action=action,
        url=_text(cj.url, cj.url_len) if has_url else None,
        depth=cj.depth if action == "fetch" else 0,
        redirects=cj.redirects if action == "fetch" else 0,
        retries=cj.retries if action in ("fetch", "sitemap") else 0,
        reason=_reason_name(cj.reason) if action == "drop" else None,
        wait_until_ms=(None if action != "wait"
                       or cj.wait_until_ms == _U64_MAX
                       else int(cj.wait_until_ms)),
        id=int(cj.id) if action == "fetch" else 0,
        referrer=(_text(cj.referrer, cj.referrer_len)
                  if action == "fetch" else None),
        payload=payload,
        origin=(_text(cj.origin, cj.origin_len)
                if action in ("fetch", "robots", "drop") else None),
        scope=_text(cj.scope, cj.scope_len) if action == "sitemap" else None)


def _patterns(patterns: Sequence[str], what: str):
    """(cdata array, its strings) of include/exclude patterns: the
    frontier does not copy them, so they live as long as it does."""
    if isinstance(patterns, (str, bytes)):
        raise TypeError("%s must be a list of patterns" % what)
    items = [_key(p, "an %s pattern" % what) for p in patterns]
    for p in items:
        if b"\0" in p:
            raise ValueError("an %s pattern contains a NUL byte" % what)
    strings = [ffi.new("char[]", p) for p in items]
    return ffi.new("const char *[]", strings or 1), strings, len(items)


def _config(user_agent: str, min_delay: float, max_crawl_delay: float,
            obey_robots: bool, scope: str, max_depth: int, host_budget: int,
            queue_capacity: int, max_retries: int, retry_delay: float,
            max_payload: int, expected: int, fp_rate: float, lru: int,
            include: Sequence[str], exclude: Sequence[str], sitemaps: bool,
            per_host: int, max_redirects: int):
    """A struct bc_frontier_config and what must outlive the frontier."""
    c = ffi.new("struct bc_frontier_config *")
    lib.bc_frontier_config_init(c)
    agent = _key(user_agent, "user_agent")
    if b"\0" in agent:
        raise ValueError("user_agent contains a NUL byte")
    agent_c = ffi.new("char[]", agent)
    c.user_agent = agent_c
    c.per_host_concurrency = _count(per_host, "per_host", 1, _UINT_MAX)
    c.min_delay_ms = _ms(min_delay, "min_delay")
    c.max_crawl_delay_ms = _ms(max_crawl_delay, "max_crawl_delay")
    c.obey_robots = _flag(obey_robots, "obey_robots")
    if scope not in _SCOPES:
        raise ValueError("scope must be 'host', 'domain' or 'any', not %r"
                         % (scope,))
    c.scope = _SCOPES[scope]
    c.max_depth = _count(max_depth, "max_depth", 0, _UINT_MAX)
    c.max_redirects = _count(max_redirects, "max_redirects", 0, 255)
    c.host_budget = _count(host_budget, "host_budget")
    c.queue_capacity = _count(queue_capacity, "queue_capacity", 0, _SIZE_MAX)
    c.max_retries = _count(max_retries, "max_retries", 0, 255)
    c.retry_delay_ms = _ms(retry_delay, "retry_delay")
    c.max_payload = _count(max_payload, "max_payload", 0,
                           lib.BC_FRONTIER_MAX_PAYLOAD)
    c.seen.expected = _count(expected, "expected", 1)
    c.seen.fp_rate = _rate(fp_rate)
    c.seen.lru_capacity = _count(lru, "lru", 0, 1 << 40)
    inc, inc_s, inc_n = _patterns(include, "include")
    exc, exc_s, exc_n = _patterns(exclude, "exclude")
    c.include, c.include_count = inc, inc_n
    c.exclude, c.exclude_count = exc, exc_n
    c.sitemaps = _flag(sitemaps, "sitemaps")
    return c, (agent_c, inc, inc_s, exc, exc_s)


# The frontier's counter table as (name, counter, element) rows: an array
# counter gives one row per element, "reasons.robots".
_COUNTERS = []


def _counter_rows():
    if not _COUNTERS:
        n = ffi.new("size_t *")
        table = lib.bc_frontier_counter_table(n)
        for r in range(n[0]):
            c = table + r
            name = ffi.string(c.name).decode()
            if c.count == 1:
                _COUNTERS.append((name, c, 0))
            else:
                for i in range(c.count):
                    label = ffi.string(c.label_value(i)).decode()
                    _COUNTERS.append(("%s.%s" % (name, label), c, i))
    return _COUNTERS


class Frontier:
    """The crawl frontier (bloomcrawl/frontier.h): per-host FIFO queues,
    politeness (one request at a time per host, min_delay seconds apart,
    robots.txt Crawl-delay honoured up to max_crawl_delay), robots.txt
    fetched through the frontier and obeyed, the two-tier seen-test
    (expected, fp_rate, lru), scope ("host", "domain" or "any", around
    the seeds), limits (max_depth, host_budget, queue_capacity,
    include/exclude globs), retries of transient faults (max_retries,
    retry_delay seconds, doubled each time), a payload of up to
    max_payload bytes per URL, sitemaps when asked. per_host requests may
    be out per host at once.

    Without a state it lives in memory; CrawlState.frontier() gives one
    that survives a kill. Not for several threads at once: each call
    takes the object's lock."""

    def __init__(self, *, user_agent: str = "bloomcrawl",
                 min_delay: float = 1.0, max_crawl_delay: float = 30.0,
                 obey_robots: bool = True, scope: str = "any",
                 max_depth: int = 16, host_budget: int = 0,
                 queue_capacity: int = 0, max_retries: int = 3,
                 retry_delay: float = 1.0, max_payload: int = 65536,
                 expected: int = 1_000_000, fp_rate: float = 0.01,
                 lru: int = 50_000, include: Sequence[str] = (),
                 exclude: Sequence[str] = (), sitemaps: bool = False,
                 per_host: int = 1, max_redirects: int = 20) -> None:
        config, keep = _config(user_agent, min_delay, max_crawl_delay,
                               obey_robots, scope, max_depth, host_budget,
                               queue_capacity, max_retries, retry_delay,
                               max_payload, expected, fp_rate, lru, include,
                               exclude, sitemaps, per_host, max_redirects)
        out = ffi.new("struct bc_frontier **")
        st = lib.bc_frontier_create(config, out)
        if st != _OK:
            _raise(st, "Frontier")
        self._setup(ffi.gc(out[0], lib.bc_frontier_free), keep, None,
                    threading.RLock())

    def _setup(self, handle, keep, state: Optional["CrawlState"],
               lock) -> None:
        self._h = handle
        self._keep = keep
        self._state = state
        self._lock = lock
        self._out: Dict[Job, object] = {}

    def _handle(self, what: str):
        if self._h is None:
            raise InvalidArgumentError(
                _INVALID, "Frontier.%s: the frontier is closed (its "
                "CrawlState was closed)" % what)
        return self._h

    def _job(self, job: Job, what: str, actions) -> object:
        """The C job of job, which must be out and of one of actions."""
        if not isinstance(job, Job):
            raise TypeError("job must be a bloomcrawl.Job, not %s"
                            % type(job).__name__)
        cj = self._out.get(job)
        if cj is None:
            # A Job made without next() (Job.__new__) has no fields.
            raise InvalidArgumentError(
                _INVALID, "Frontier.%s: the job is not out (done already, "
                "a %s job, or another frontier's)"
                % (what, getattr(job, "action", "hand-made")))
        if cj.action not in actions:
            raise InvalidArgumentError(
                _INVALID, "Frontier.%s: not for a %s job" % (what, job.action))
        return cj

    def add(self, url: Key, base: Optional[Key] = None, *, depth: int = 0,
            payload: Optional[bytes] = None, referrer: Optional[Key] = None,
            seed: bool = False, dont_filter: bool = False,
            redirects: int = 0) -> str:
        """Admit url (resolved against base when given) at depth; returns
        the reason name: "queued", or why not ("duplicate",
        "probably_seen", "robots", "out_of_scope", "too_deep", "bad_url",
        "host_budget", ...). payload (bytes, NULs allowed, up to
        max_payload: TooLargeError beyond) comes back in the fetch job;
        referrer is kept with the URL (Job.referrer). seed: the URL's host
        and registrable domain enter the scope (recorded in the state, so
        a resume keeps the scope). dont_filter: the seen-test's verdict
        is ignored (Scrapy's dont_filter): a URL seen before is queued
        again; scope, limits and robots.txt still refuse it. Raises only
        for a C error (no memory, a store error, TooLargeError) or bad
        arguments."""
        href = _key(url, "url")
        b = _key(base, "base") if base is not None else None
        ref = _key(referrer, "referrer") if referrer is not None else None
        pl = _bytes_arg(payload, "payload") if payload is not None else None
        req = ffi.new("struct bc_frontier_request *")
        req.depth = _count(depth, "depth", 0, _UINT_MAX)
        req.redirects = _count(redirects, "redirects", 0, _UINT_MAX)
        req.seed = _flag(seed, "seed")
        req.unfiltered = _flag(dont_filter, "dont_filter")
        keep = []
        for name, value in (("href", href), ("base", b), ("referrer", ref),
                            ("payload", pl)):
            if value is None:
                continue
            buf = ffi.from_buffer("char[]", value)
            keep.append(buf)
            setattr(req, name, buf)
            setattr(req, name + "_len", len(value))
        reason = ffi.new("enum bc_frontier_reason *")
        with self._lock:
            h = self._handle("add")
            st = lib.bc_frontier_add_request(h, req, reason, ffi.NULL)
            if (st == _OK and seed and self._state is not None
                    and reason[0] == lib.BC_ADMIT_QUEUED):
                n = ffi.new("size_t *")
                canon = lib.bc_frontier_last_url(h, n)
                st = lib.bc_crawl_state_add_seed(self._state._c(), canon,
                                                 n[0])
                if st != _OK:
                    self._state._fail(st, "Frontier.add (the seed)")
        if st != _OK:
            _raise(st, "Frontier.add")
        return _reason_name(reason[0])

    def next(self, now_ms: Optional[int] = None) -> Job:
        """The next thing to do at now_ms (see Job). A fetch, robots or
        sitemap job stays out until its done() (or giveback())."""
        now = _now(now_ms)
        cj = ffi.new("struct bc_frontier_job *")
        with self._lock:
            st = lib.bc_frontier_next(self._handle("next"), now, cj)
            if st != _OK:
                _raise(st, "Frontier.next")
            job = _job_of(cj)
            if cj.action in _OUT:
                self._out[job] = cj
        return job

    def _outcome(self, http_status: int, fault: str, response_ms: int,
                 retry_after_ms: int):
        if fault not in _FAULTS:
            raise ValueError("fault must be one of %s, not %r"
                             % (", ".join(_FAULTS), fault))
        o = ffi.new("struct bc_frontier_outcome *")
        o.http_status = _count(http_status, "http_status", 0, 999)
        o.response_ms = _count(response_ms, "response_ms")
        o.retry_after_ms = _count(retry_after_ms, "retry_after_ms")
        o.fault = _FAULTS[fault]
        return o

    def done(self, job: Job, http_status: int, *, fault: str = "none",
             response_ms: int = 0, retry_after_ms: int = 0,
             now_ms: Optional[int] = None) -> bool:
        """A fetch job ended: http_status (0: no response), fault "none"
        (the answer is the URL's outcome), "permanent", "transient" (may
        work later: retried up to max_retries times) or "local" (use
        giveback()); response_ms and retry_after_ms (a 429/503's
        Retry-After) feed politeness. Returns True when the URL was
        queued again for a retry. With a CrawlState, a job that ends here
        is recorded as done (or, a transient fault with no retry left, as
        failed: crawl --retry-failed queues it again)."""
        o = self._outcome(http_status, fault, response_ms, retry_after_ms)
        now = _now(now_ms)
        with self._lock:
            h = self._handle("done")
            cj = self._job(job, "done", (lib.BC_FRONTIER_FETCH,))
            st = lib.bc_frontier_done(h, cj, o, now)
            if st != _INVALID:
                del self._out[job]
            requeued = bool(cj.requeued)
            if (st in (_OK, lib.BC_ERR_NOMEM) and self._state is not None
                    and cj.id and not requeued):
                s = self._state._c()
                if o.fault == lib.BC_FAULT_TRANSIENT:
                    sst = lib.bc_crawl_state_page_failed(s, cj.id)
                else:
                    sst = lib.bc_crawl_state_page_done(s, cj.id)
                if sst != _OK:
                    self._state._fail(sst, "Frontier.done")
        if st != _OK:
            _raise(st, "Frontier.done")
        return requeued

    def giveback(self, job: Job, now_ms: Optional[int] = None) -> None:
        """Give a fetch, robots or sitemap job back after a failure of
        the caller's own (no memory, no descriptors): as if it had never
        been handed out; nothing counts against the host or the URL."""
        now = _now(now_ms)
        with self._lock:
            h = self._handle("giveback")
            cj = self._job(job, "giveback", _OUT)
            st = lib.bc_frontier_giveback(h, cj, now)
            if st != _INVALID:
                del self._out[job]
        if st != _OK:
            _raise(st, "Frontier.giveback")

    def robots_done(self, job: Job, http_status: int, body: bytes = b"",
                    location: Optional[Key] = None,
                    now_ms: Optional[int] = None) -> None:
        """A robots job ended (RFC 9309): 2xx parses body; 3xx follows
        location; 4xx allows everything; 5xx, 408, 429 or 0 (no answer)
        allow nothing and ask again later, and give the host up at
        last."""
        status = _count(http_status, "http_status", 0, 999)
        data = _bytes_arg(body, "body")
        loc = _key(location, "location") if location is not None else None
        now = _now(now_ms)
        with self._lock:
            h = self._handle("robots_done")
            cj = self._job(job, "robots_done", (lib.BC_FRONTIER_FETCH_ROBOTS,))
            st = lib.bc_frontier_robots_done(
                h, cj, status, data, len(data),
                loc if loc is not None else ffi.NULL,
                len(loc) if loc is not None else 0, now)
            if st != _INVALID:
                del self._out[job]
        if st != _OK:
            _raise(st, "Frontier.robots_done")

    def add_from_sitemap(self, job: Job, href: Key) -> str:
        """Admit a page listed by the sitemap of job (out, not done): as
        add() at depth 0, refused "sitemap_scope" outside job.scope."""
        u = _key(href, "href")
        reason = ffi.new("enum bc_frontier_reason *")
        with self._lock:
            h = self._handle("add_from_sitemap")
            cj = self._job(job, "add_from_sitemap",
                           (lib.BC_FRONTIER_FETCH_SITEMAP,))
            st = lib.bc_frontier_add_from_sitemap(h, cj, u, len(u), reason,
                                                  ffi.NULL)
        if st != _OK:
            _raise(st, "Frontier.add_from_sitemap")
        return _reason_name(reason[0])

    def add_sitemap(self, job: Job, href: Key) -> str:
        """Queue a sitemap listed by the sitemap index of job (out, not
        done); returns the sitemap reason name ("queued", "duplicate",
        "too_deep", ...)."""
        u = _key(href, "href")
        reason = ffi.new("enum bc_frontier_sitemap_reason *")
        with self._lock:
            h = self._handle("add_sitemap")
            cj = self._job(job, "add_sitemap",
                           (lib.BC_FRONTIER_FETCH_SITEMAP,))
            st = lib.bc_frontier_add_sitemap(h, cj, u, len(u), reason)
        if st != _OK:
            _raise(st, "Frontier.add_sitemap")
        return ffi.string(
            lib.bc_frontier_sitemap_reason_name(reason[0])).decode()

    def sitemap_done(self, job: Job, http_status: int, *,
                     fault: str = "none", response_ms: int = 0,
                     retry_after_ms: int = 0,
                     now_ms: Optional[int] = None) -> bool:
        """A sitemap job ended (after add_from_sitemap() of what it
        listed); as done(): True when it was queued again for a retry."""
        o = self._outcome(http_status, fault, response_ms, retry_after_ms)
        now = _now(now_ms)
        with self._lock:
            h = self._handle("sitemap_done")
            cj = self._job(job, "sitemap_done",
                           (lib.BC_FRONTIER_FETCH_SITEMAP,))
            st = lib.bc_frontier_sitemap_done(h, cj, o, now)
            if st != _INVALID:
                del self._out[job]
        if st != _OK:
            _raise(st, "Frontier.sitemap_done")
        return bool(cj.requeued)

    def set_host_delay(self, origin: Key, seconds: Optional[float]) -> None:
        """Override the politeness delay of a known host ("http://h:port",
        as Job.origin spells it); None removes the override. Never below
        its robots.txt Crawl-delay. Raises Error (BC_ERR_NOT_FOUND) for a
        host the frontier does not know."""
        o = _key(origin, "origin")
        ms = 0 if seconds is None else _ms(seconds, "seconds")
        if seconds is not None and ms == 0:
            ms = 1  # 0 would remove the override: the shortest delay
        with self._lock:
            st = lib.bc_frontier_set_host_delay(self._handle("set_host_delay"),
                                                o, len(o), ms, ffi.NULL)
        if st != _OK:
            _raise(st, "Frontier.set_host_delay")

    def stats(self, now_ms: Optional[int] = None) -> Dict[str, int]:
        """The frontier's counters (bc_frontier_counter_table), name ->
        value; an array counter gives one entry per element
        ("reasons.robots"). O(hosts)."""
        now = _now(now_ms)
        s = ffi.new("struct bc_frontier_stats *")
        with self._lock:
            lib.bc_frontier_stats(self._handle("stats"), now, s)
        return {name: int(lib.bc_counter_u64(c, s, i))
                for name, c, i in _counter_rows()}

    def __len__(self) -> int:
        """URLs queued (in memory or in the state). O(1)."""
        with self._lock:
            return int(lib.bc_frontier_queued(self._handle("__len__"),
                                              ffi.NULL))

    @property
    def in_flight(self) -> int:
        """Jobs handed out and not done (fetch, robots, sitemap)."""
        with self._lock:
            return len(self._out)


class StateLockedError(Error):
    """BC_ERR_LOCKED: another process (pid, 0 if unknown) has the crawl
    state open, or another CrawlState object of this one."""

    def __init__(self, status: int, context: str = "", pid: int = 0) -> None:
        super().__init__(status, context)
        self.pid = pid


class StateMismatchError(Error):
    """BC_ERR_MISMATCH: a setting differs from the one the crawl state
    was made with (option, was, now: "" for none)."""

    def __init__(self, status: int, context: str = "", option: str = "",
                 was: str = "", now: str = "") -> None:
        super().__init__(status, context)
        self.option = option
        self.was = was
        self.now = now


def _err_text(buf) -> str:
    return ffi.string(buf).decode("utf-8", "replace")


def _open_error(st: int, err, what: str) -> None:
    text = _err_text(err.text)
    context = "%s: %s" % (what, text) if text else what
    if _status_name(st) == "BC_ERR_LOCKED":
        raise StateLockedError(st, context, int(err.pid))
    if _status_name(st) == "BC_ERR_MISMATCH":
        raise StateMismatchError(st, context, _err_text(err.option),
                                 _err_text(err.was), _err_text(err.now))
    _raise(st, context)


def _options_array(pins):
    """A struct bc_crawl_state_option array of (name, value) bytes pairs,
    and the strings it points to."""
    arr = ffi.new("struct bc_crawl_state_option[]", len(pins) or 1)
    strings = []
    for i, (name, value) in enumerate(pins):
        strings += [ffi.new("char[]", name), ffi.new("char[]", value)]
        arr[i].name, arr[i].value = strings[-2], strings[-1]
    return arr, strings


# The frontier's settings a resume may not change, under crawl's names
# and spelled as crawl records them (crawler.c, bc_crawler_pin(); crawler.h
# PINNED SETTINGS), so that crawl and Python agree on a state's settings.
_PINNED = ("--scope", "--include", "--exclude", "--expect", "--fp-rate",
           "--layout", "--lru", "--user-agent", "--no-robots", "--sitemaps",
           "--recrawl-after")


def _frontier_pins(config, args):
    def text(ptr):
        return ffi.string(ptr) if ptr != ffi.NULL else b""

    def joined(arr, n):
        return b" ".join(text(arr[i]) for i in range(n))

    scope = {lib.BC_SCOPE_HOST: b"host", lib.BC_SCOPE_DOMAIN: b"domain"}
    values = (
        scope.get(config.scope, b"any"),
        joined(config.include, config.include_count),
        joined(config.exclude, config.exclude_count),
        b"%d" % config.seen.expected,
        b"%.17g" % config.seen.fp_rate,
        b"classic" if config.seen.kind == lib.BC_SEEN_BLOOM_CLASSIC
        else b"blocked",
        b"%d" % config.seen.lru_capacity,
        text(config.user_agent),
        b"no" if config.obey_robots else b"yes",
        b"yes" if config.sitemaps else b"no",
        b"",  # no recrawl window: not recorded
    )
    return [(name.encode(), value) for name, value in zip(_PINNED, values)]


class _Handles:
    """The C handles of a CrawlState, closed by close() or the garbage
    collector (weakref.finalize): the frontier first, then the state."""

    def __init__(self, state) -> None:
        self.state = state
        self.frontier = None
        self.keep = None


def _release(handles: _Handles) -> None:
    if handles.frontier is not None:
        lib.bc_frontier_free(handles.frontier)
        handles.frontier = None
    if handles.state is not None:
        lib.bc_crawl_state_close(handles.state)
        handles.state = None
    handles.keep = None


class CrawlState:
    """A crawl state directory (crawl --state DIR's format): created when
    path does not exist (or is empty), resumed when it holds a state.
    options (name -> value) are the caller's settings that may not change
    on resume (the spider's name, say): recorded on creation, compared
    by every later open (StateMismatchError with .option, .was, .now); a
    setting recorded and no longer given is refused by frontier(). The
    frontier's own settings (scope, include, exclude, expected, fp_rate,
    lru, user_agent, obey_robots, sitemaps) are pinned by frontier() under
    crawl's names (crawler.h, PINNED SETTINGS: --scope, --expect, ...,
    which options may not use). StateLockedError (.pid) when another
    process, or another CrawlState object, has it open.

    frontier() gives its Frontier (created, or rebuilt on resume);
    commit() makes what happened durable (a kill -9 loses what came
    after the last commit only); close() rolls back what was not
    committed. As a context manager it commits on a clean exit, then
    closes. The state and its frontier share one lock."""

    def __init__(self, path: Path, *,
                 options: Optional[Mapping[str, str]] = None) -> None:
        p = _path(path)
        pins = self._pins(options)
        self._lock = threading.RLock()
        self._frontier: Optional[Frontier] = None
        self._counters_dirty = False
        err = ffi.new("struct bc_crawl_state_error *")
        out = ffi.new("struct bc_crawl_state **")
        arr, _strings = _options_array(pins)
        st = lib.bc_crawl_state_open(p, arr, len(pins), out, err)
        if st != _OK:
            _open_error(st, err, "CrawlState")
        self._fixed = [name for name, _ in pins]
        self._handles = _Handles(out[0])
        self._finalizer = weakref.finalize(self, _release, self._handles)

    @staticmethod
    def _pins(options: Optional[Mapping[str, str]]):
        if options is None:
            return []
        if not isinstance(options, Mapping):
            raise TypeError("options must be a dict of str to str, not %s"
                            % type(options).__name__)
        pins = []
        for name, value in options.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise TypeError("options must be a dict of str to str")
            n, v = name.encode("utf-8"), value.encode("utf-8")
            if not n or b"\0" in n or b"\0" in v:
                raise ValueError("an option name must be non-empty, and "
                                 "neither name nor value hold a NUL byte")
            if name in _PINNED:
                raise ValueError("option %s is the frontier's (frontier() "
                                 "pins it)" % name)
            pins.append((n, v))
        return pins

    def _c(self):
        """The C state; raises once closed."""
        s = self._handles.state
        if s is None:
            raise InvalidArgumentError(_INVALID,
                                       "CrawlState: the state is closed")
        return s

    def _fail(self, st: int, what: str) -> None:
        msg = ffi.string(lib.bc_crawl_state_errmsg(self._c())).decode(
            "utf-8", "replace")
        _raise(st, "%s: %s" % (what, msg) if msg else what)

    def frontier(self, *, window: int = 0, now_ms: Optional[int] = None,
                 **frontier_kwargs) -> Frontier:
        """The state's Frontier, once per open, with Frontier()'s keyword
        arguments: created on the first run; on resume rebuilt (the
        seen-test from its snapshot and the journal after it, the queues
        with their payloads, the hosts, the seeds' scope, the counters)
        with the URLs in flight at the last commit queued again at the
        head of their hosts' queues. window: URLs per host kept in memory
        (0: frontier.h's default, 8); the rest stay in SQLite. Raises
        StateMismatchError when a setting differs from the state's:
        scope, include, exclude, expected, fp_rate, lru, user_agent,
        obey_robots, sitemaps (as crawl refuses them: a resume may not
        change the rules of the crawl, nor the sizing of its seen-test),
        or one of the open's options recorded but not given."""
        unknown = set(frontier_kwargs) - set(_FRONTIER_KWARGS)
        if unknown:
            raise TypeError("frontier() got unexpected keyword arguments: %s"
                            % ", ".join(sorted(unknown)))
        args = dict(_FRONTIER_KWARGS)
        args.update(frontier_kwargs)
        config, keep = _config(**args)
        win = _count(window, "window", 0, _SIZE_MAX)
        now = _now(now_ms)
        out = ffi.new("struct bc_frontier **")
        with self._lock:
            s = self._c()
            if self._frontier is not None:
                raise InvalidArgumentError(
                    _INVALID, "CrawlState.frontier: made already (once per "
                    "open)")
            pins = _frontier_pins(config, args)
            arr, _strings = _options_array(pins)
            err = ffi.new("struct bc_crawl_state_error *")
            st = lib.bc_crawl_state_pin(s, arr, len(pins), err)
            if st != _OK:
                _open_error(st, err, "CrawlState.frontier")
            st = lib.bc_crawl_state_frontier(s, config, win, now, out)
            if _status_name(st) == "BC_ERR_MISMATCH":
                msg = ffi.string(lib.bc_crawl_state_errmsg(s)).decode(
                    "utf-8", "replace")
                raise StateMismatchError(st, "CrawlState.frontier: " + msg)
            if st != _OK:
                self._fail(st, "CrawlState.frontier")
            self._handles.frontier = out[0]
            self._handles.keep = keep
            f = Frontier.__new__(Frontier)
            f._setup(out[0], keep, self, self._lock)
            self._frontier = f
        return f

    def commit(self) -> None:
        """Commit what changed since the last commit (if anything did):
        the frontier's writes, the pages done, the counters. Durable
        against a kill of the process at once (WAL, no fsync: a power
        loss may lose the last commits, never leave the state
        inconsistent)."""
        with self._lock:
            s = self._c()
            if not (lib.bc_crawl_state_pending(s) or self._counters_dirty):
                return
            st = lib.bc_crawl_state_commit(
                s, self._handles.frontier or ffi.NULL)
            if st != _OK:
                self._fail(st, "CrawlState.commit")
            self._counters_dirty = False

    def snapshot(self) -> None:
        """Commit, then save the seen-test's filter (DIR/bloom.snap,
        fsynced) so that a resume replays only the journal after it. Costs
        the filter's size in writes: now and then (every minute), not
        every turn."""
        with self._lock:
            self.commit()
            if self._handles.frontier is None:
                raise InvalidArgumentError(
                    _INVALID, "CrawlState.snapshot: no frontier yet")
            st = lib.bc_crawl_state_snapshot(self._c(),
                                             self._handles.frontier)
            if st != _OK:
                self._fail(st, "CrawlState.snapshot")

    def info(self) -> Dict[str, Union[int, bool]]:
        """bc_crawl_state_info: resumed (the state existed at this open),
        runs, refetched_now (URLs in flight at the last commit of the run
        before, queued again), refetched (over all runs), queued, journal
        (URLs ever admitted), snapshot_pos, elapsed_before_ms."""
        i = ffi.new("struct bc_crawl_state_info *")
        with self._lock:
            lib.bc_crawl_state_info(self._c(), i)
        return {"resumed": bool(i.resumed), "runs": int(i.runs),
                "refetched_now": int(i.refetched_now),
                "refetched": int(i.refetched), "queued": int(i.queued),
                "journal": int(i.journal),
                "snapshot_pos": int(i.snapshot_pos),
                "elapsed_before_ms": int(i.elapsed_before_ms)}

    @staticmethod
    def _counter_name(name: str) -> bytes:
        if not isinstance(name, str):
            raise TypeError("a counter name must be str, not %s"
                            % type(name).__name__)
        n = name.encode("utf-8")
        if not n or b"\0" in n or len(n) > 63:
            raise ValueError("a counter name must be 1 to 63 bytes without "
                             "NUL, not %r" % (name,))
        return n

    def counter_set(self, name: str, value: int) -> None:
        """Set a counter of the caller's ("pages"), saved with the next
        commit and read back by counter_get() after a resume."""
        n = self._counter_name(name)
        v = _count(value, "value")
        with self._lock:
            st = lib.bc_crawl_state_counter_set(self._c(), n, v)
            if st != _OK:
                self._fail(st, "CrawlState.counter_set")
            self._counters_dirty = True

    def counter_get(self, name: str) -> int:
        """A counter's value (0 when never set)."""
        n = self._counter_name(name)
        with self._lock:
            return int(lib.bc_crawl_state_counter_get(self._c(), n))

    @property
    def closed(self) -> bool:
        return self._handles.state is None

    def close(self) -> None:
        """Free the frontier (its jobs out become unusable), roll back
        what was not committed, unlock the directory. Again: no-op."""
        with self._lock:
            if self._frontier is not None:
                self._frontier._h = None
                self._frontier._out.clear()
            self._finalizer()

    def __enter__(self) -> "CrawlState":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None and not self.closed:
                self.commit()
        finally:
            self.close()


# Frontier()'s keyword arguments and their defaults, for
# CrawlState.frontier().
_FRONTIER_KWARGS = {
    name: p.default
    for name, p in inspect.signature(Frontier.__init__).parameters.items()
    if p.kind == p.KEYWORD_ONLY}
