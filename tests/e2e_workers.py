#!/usr/bin/env python3
"""End-to-end: crawl workers that split a crawl by host through Redis
(`crawl --redis URL --workers N --worker I --state DIR`, issue 15).

    python3 tests/e2e_workers.py BUILD_EXAMPLES_DIR

Starts its own redis-server (found on the PATH; the test is skipped, exit
77, without it) in a temporary directory, on a unix socket only (--port 0:
no TCP), with --appendonly yes --appendfsync always so that a restart keeps
what it acknowledged; and the sample site (examples/site, 300 pages on
three virtual hosts of one port) with an access log.  Every crawl runs with
--scope any (the three hosts: the partition is real), --max-depth 8,
--concurrency 8, --per-host 4, a 1.5 s timeout and a 1 MB body limit.

Which worker owns which host depends on the port the site got, so the test
computes the owners with the documented function, owner(origin) =
XXH64(origin, seed 0) mod N (crawler/workers/include/bloomcrawl/workers.h),
through libxxhash itself (ctypes): an independent reading of the contract.
Whatever the partition (a worker may own no host), the checks hold.

The parts, each with its own --crawl-id in the one Redis:
  basic     3 workers, the seed given to worker 0 only: all three exit 0
            by themselves; check_crawl.py passes on the union of their
            --out files (every reachable page, nothing else, one record
            per URL, the log and the records agree); every page requested
            exactly once in the server's log; each --out record and each
            host of a worker's "per_host" belongs to that worker (the
            function above), and its "hosts_owned" are those hosts; the
            entries sent and acknowledged agree in total; crawl --status
            prints the three workers, their pages and "crawl: over".  Then:
            worker 0 run again with the same command exits 0 at once ("the
            crawl is over", and another --crawl-id starts a new one),
            nothing requested; --worker changed on its
            state: exit 2, "--worker differs"; a worker with --workers 2
            joining the 3-worker crawl: exit 2.
  kill      the same with the owner of the seed's host killed (SIGKILL)
            once its --out holds 20 records, then started again with the
            same command: all exit 0; the checker passes with
            --refetch-tolerance 8 (the transfers in flight at the kill);
            the pages requested twice in the server's log (P) <= the killed
            worker's refetched_after_restart (S) <= --concurrency (8).
            While it is down, crawl --status says the crawl is not over,
            and on a terminal (a pseudo-terminal) redraws its table until
            SIGINT, then exits 0.
  restart   Redis stopped (SHUTDOWN) once a quarter of the pages are in,
            started again on the same socket 1.5 s later: all workers exit
            0; the checker passes without tolerance (nothing lost, nothing
            fetched twice); the workers counted the lost connection
            (redis_errors).
  garbage   two hand-written entries in worker 1's inbox (redis-cli XADD:
            no fields of the format; a "from" that is no worker) before the
            workers start: worker 1 counts them ("garbage": 2) and skips
            them; the crawl ends normally and passes the checker.  At the
            same time, a second crawl id in the same Redis (2 workers,
            --scope domain, its own server) runs to its end, checked alike:
            the crawls are independent.
  limit     3 workers with --max-pages 40: 40 pages in all (records,
            the reports' pages, the budget's counter in Redis, the server's
            log), each URL once, each by its owner; all exit 0.
  errors    Redis unreachable (a socket that does not exist, a closed TCP
            port of 127.0.0.1): exit 1, "crawl: --redis URL: cannot
            connect", --state DIR not created; usage errors (exit 2);
            crawl --status with Redis unreachable, or of a crawl id that
            does not exist: exit 1.

Nothing here contacts an address outside 127.0.0.0/8.  Every process is
waited for with a time limit: a crawl that hangs is killed and fails the
test, it never hangs it.
"""
import collections
import ctypes
import ctypes.util
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import (Parts, Run, check, count_lines,  # noqa: E402
                       read_stats, summary)
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
SKIP = 77
PAGES = 300          # gensite.py --pages
SLOW_SECONDS = 3     # serve.py's /slow; the crawl's timeout is below it
CONC = 8             # --concurrency
RUN_TIMEOUT = 90     # seconds any crawl may take before it is called hung


# -- the partition function, read from the contract -------------------------

def load_xxh64():
    """XXH64(data, seed) of libxxhash (the library the workers use)."""
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.XXH64.restype = ctypes.c_uint64
        lib.XXH64.argtypes = (ctypes.c_char_p, ctypes.c_size_t,
                              ctypes.c_uint64)
        return lambda data, seed=0: lib.XXH64(data, len(data), seed)
    return None


XXH64 = load_xxh64()


def owner(origin, workers):
    """The worker that owns origin ("http://host:port"): XXH64 of its
    bytes, seed 0, mod workers."""
    return XXH64(origin.encode(), 0) % workers


def origin_of(url):
    """scheme://host[:port] of an absolute canonical URL."""
    scheme, rest = url.split("://", 1)
    return scheme + "://" + rest.split("/", 1)[0]


# -- processes ----------------------------------------------------------------

class Redis:
    """redis-server in DIR, on DIR/redis.sock only (--port 0)."""

    def __init__(self, work):
        self.dir = os.path.join(work, "redis")
        os.makedirs(self.dir)
        self.sock = os.path.join(self.dir, "redis.sock")
        self.url = "unix:" + self.sock
        self.proc = None
        self.start()

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock,
             "--unixsocketperm", "700", "--dir", self.dir, "--save", "",
             "--appendonly", "yes", "--appendfsync", "always",
             "--daemonize", "no", "--logfile",
             os.path.join(self.dir, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            if self.cli("PING").strip() == "PONG":
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start on " + self.sock)

    def cli(self, *args):
        p = subprocess.run(["redis-cli", "-s", self.sock, *args],
                           capture_output=True, text=True, timeout=30)
        return p.stdout

    def shutdown(self):
        """SHUTDOWN (the append-only file is written), then wait."""
        self.cli("SHUTDOWN")
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        if self.proc:
            sample_site.stop_process(self.proc, 20)


def finished_rc(stats):
    """The exit status of a worker that ran to the end: 4 (incomplete)
    when it gave URLs up to transient faults, else 0."""
    return 4 if stats.get("given_up", {}).get("total") else 0


class Server(sample_site.Server):
    """serve.py with its access log, /slow and /huge as the workers
    expect."""

    def __init__(self, sitedir, log):
        super().__init__(sitedir, log, ["--slow-seconds", str(SLOW_SECONDS),
                                        "--huge-bytes", "4M"],
                         SLOW_SECONDS + 5)


def run_once(cmd, timeout=RUN_TIMEOUT):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, None, "", "timed out")


# -- reading the results ------------------------------------------------------

def read_records(path):
    recs = []
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    recs.append(json.loads(line))
    except (OSError, ValueError):
        pass
    return recs


# (host, path) of the site's sitemaps (from the manifest, in main()):
# the crawl follows them, and their requests are not pages.
SITEMAP_TARGETS = set()


def run_checker(sitedir, log, out, scope, extra=()):
    return sample_site.run_checker(
        sitedir, log, out, ["--scope", scope, "--max-depth", "8", *extra],
        RUN_TIMEOUT)


REFETCHED = re.compile(r"refetched after a kill: (\d+) pages, (\d+) robots")


class Crawl:
    """N workers of one crawl id on one server: their commands, files and
    the checks of the end."""

    def __init__(self, name, work, sitedir, redis, server, workers,
                 scope="any", extra=()):
        self.name, self.sitedir, self.redis = name, sitedir, redis
        self.server, self.n, self.scope = server, workers, scope
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir)
        self.extra = list(extra)
        self.runs = [None] * workers
        self.kills = 0

    def path(self, i, what):
        return os.path.join(self.dir, "w%d.%s" % (i, what))

    def cmd(self, i, **change):
        """Worker i's command; the seed (the last of the server's args)
        goes to worker 0 only. change: option -> value (None: dropped)."""
        opts = {"--redis": self.redis.url, "--workers": str(self.n),
                "--worker": str(i), "--crawl-id": self.name,
                "--state": self.path(i, "state"),
                "--out": self.path(i, "out.jsonl"),
                "--stats-json": self.path(i, "stats.json"),
                "--scope": self.scope, "--max-depth": "8",
                "--concurrency": str(CONC), "--per-host": "4",
                "--delay": "0", "--timeout": "1500",
                "--max-body": "1000000",
                # the site's /error/500 and /slow fail on every try:
                # given up at once (one request each); their worker's
                # crawl ends incomplete, exit 4 (docs/DESIGN.md 3.4)
                "--retries": "0"}
        opts.update(change)
        args = [CRAWL, "--quiet"]
        for k, v in opts.items():
            if v is not None:
                args += [k, v]
        site = self.server.args if i == 0 else self.server.args[:-1]
        return args + self.extra + site

    def start(self, i, label=None):
        self.runs[i] = Run(self.cmd(i), self.dir, label or "w%d" % i,
                           RUN_TIMEOUT)
        return self.runs[i]

    def start_all(self):
        for i in range(self.n):
            self.start(i)

    def wait_all(self):
        for i, r in enumerate(self.runs):
            rc = r.wait()
            want = finished_rc(read_stats(self.path(i, "stats.json")))
            if not check(rc == want and r.sane(),
                         "%s: worker %d exits %d by itself (%r)"
                         % (self.name, i, want, rc)):
                print(r.tail())

    def union(self):
        """The --out files of all workers in one file, for the checker."""
        path = os.path.join(self.dir, "union.jsonl")
        with open(path, "wb") as u:
            for i in range(self.n):
                try:
                    with open(self.path(i, "out.jsonl"), "rb") as f:
                        u.write(f.read())
                except OSError:
                    pass
        return path

    def judge(self, log, tolerance=0):
        """The checks every crawl of a part gets once all have exited."""
        name, n = self.name, self.n
        extra = ["--refetch-tolerance", str(tolerance)] if tolerance else []
        rc, report = run_checker(self.sitedir, log, self.union(), self.scope,
                                 extra)
        print(report)
        check(rc == 0, "%s: check_crawl passes on the union of the %d "
              "workers' --out files%s" % (name, n, " (--refetch-tolerance "
                                          "%d)" % tolerance if tolerance
                                          else ""))
        stats = [read_stats(self.path(i, "stats.json")) for i in range(n)]
        recs = [read_records(self.path(i, "out.jsonl")) for i in range(n)]
        total = sum(len(r) for r in recs)
        reqs = collections.Counter(sample_site.page_requests(
            log, SITEMAP_TARGETS))
        twice = sorted(r for r, c in reqs.items() if c > 1)
        if not tolerance:
            check(not twice and sum(reqs.values()) == total,
                  "%s: every page requested exactly once in the server's "
                  "log (%d requests, %d records; twice: %s)"
                  % (name, sum(reqs.values()), total, twice[:5]))
        # Each worker fetched its own hosts only.
        wrong = ["w%d %s" % (i, r["url"]) for i in range(n)
                 for r in recs[i] if owner(origin_of(r["url"]), n) != i]
        check(not wrong, "%s: every --out record is its worker's host "
              "(XXH64(origin) mod %d; others: %s)" % (name, n, wrong[:5]))
        bad_hosts, owned_ok = [], True
        for i, s in enumerate(stats):
            hosts = {h.get("host") for h in s.get("per_host", [])}
            bad_hosts += ["w%d %s" % (i, h) for h in hosts if owner(h, n) != i]
            owned = set(s.get("workers", {}).get("hosts_owned", [None]))
            owned_ok = owned_ok and owned == hosts
        check(not bad_hosts and owned_ok,
              "%s: each worker's per_host (robots.txt, sitemaps, pages) "
              "holds its own hosts only, and its hosts_owned lists them "
              "(%s)" % (name, bad_hosts[:5]))
        w = [s.get("workers", {}) for s in stats]
        check(all(x.get("index") == i and x.get("workers") == n
                  for i, x in enumerate(w)),
              "%s: --stats-json \"workers\" names each worker I of %d"
              % (name, n))
        # The termination count, as Redis holds it (all runs of each
        # worker), and as the reports say it when each worker ran once.
        # Only worker 0 has the seed: another worker's pages came to it
        # through its stream (the partition may give worker 0 every host).
        routed = any(recs[i] for i in range(1, n))
        counts = [self.redis.cli("HMGET", "bc:%s:w:%d" % (name, i), "sent",
                                 "acked").split() for i in range(n)]
        try:
            sent = sum(int(x[0]) for x in counts)
            acked = sum(int(x[1]) for x in counts)
        except (ValueError, IndexError):
            sent, acked = -1, -2
        check(sent == acked and (sent > 0 or not routed),
              "%s: in Redis, the stream entries sent (%d) = acknowledged "
              "(%d) over all workers" % (name, sent, acked))
        if not self.kills:
            sent = sum(x.get("sent_entries", -1) for x in w)
            acked = sum(x.get("acked_entries", -2) for x in w)
            # A report counts the sends Redis confirmed. A send whose
            # EXEC Redis applied but whose reply a dropped connection lost
            # (Redis stopped: redis_errors) is sent again, and both copies
            # are acknowledged (the receiver's seen-test takes the URLs
            # once): then the reports may count fewer sent than acked,
            # while Redis's own counts, checked above, stay equal.
            lost = sum(x.get("redis_errors", 0) for x in w)
            ok = sent == acked if lost == 0 else 0 <= sent <= acked
            check(ok and (sent > 0 or not routed),
                  "%s: the reports' stream entries sent (%d) = acknowledged "
                  "(%d) over all workers, or no more when a reply was lost "
                  "(redis_errors %d)" % (name, sent, acked, lost))
        check(all((s.get("outcome"), s.get("exit_status")) ==
                  (("incomplete", 4) if finished_rc(s) else ("complete", 0))
                  for s in stats) and
              # given up: pages (each a record with a transient fault)
              # and sitemaps (no record: a loaded machine may time one
              # out on every try)
              sum(s.get("given_up", {}).get("total", 0) -
                  s.get("given_up", {}).get("sitemaps", 0) for s in stats) ==
              sum(r.get("fault") == "transient" for rs in recs for r in rs),
              "%s: each --stats-json says outcome complete, exit status 0, "
              "or incomplete, 4, for the worker that gave up the site's "
              "failing pages (%s)" % (name, [(s.get("outcome"),
                                             s.get("exit_status"))
                                            for s in stats]))
        check(all(x.get("outbox") == 0 for x in w),
              "%s: every outbox empty at the end (%s)"
              % (name, [x.get("outbox") for x in w]))
        # What a worker sent waited in its outbox first.
        check(all(x.get("outbox_max", 0) > 0 for x in w
                  if x.get("sent_urls", 0) > 0),
              "%s: a worker that sent URLs has outbox_max > 0 (%s)"
              % (name, [(x.get("sent_urls"), x.get("outbox_max"))
                        for x in w]))
        return stats, reqs, total


# -- the parts ----------------------------------------------------------------

def basic(work, sitedir, redis):
    log = os.path.join(work, "basic.log")
    server = Server(sitedir, log)
    c = Crawl("basic", work, sitedir, redis, server, 3)
    origins = sorted("http://%s:%d" % (a.split(":")[0], server.port)
                     for a in server.args if a.endswith(":127.0.0.1"))
    print("basic: owners: %s" % ", ".join("%s -> %d" % (o, owner(o, 3))
                                         for o in origins))
    t = time.monotonic()
    c.start_all()
    c.wait_all()
    print("basic: the crawl took %.1f s" % (time.monotonic() - t))
    server.stop()
    stats, reqs, total = c.judge(log)
    # robots.txt and the sitemaps too are fetched by the owner alone: one
    # request each in the server's log, not one per worker.
    with open(log) as f:
        entries = [json.loads(x) for x in f if x.strip()]
    meta = collections.Counter(
        (e["host"].lower().split(":")[0], e["path"]) for e in entries
        if e["path"] == "/robots.txt" or
        (e["host"].lower().split(":")[0], e["path"]) in SITEMAP_TARGETS)
    robots = [h for h, p in meta if p == "/robots.txt"]
    check(robots and all(n == 1 for n in meta.values()),
          "basic: robots.txt of each host (%d) and each sitemap (%d) "
          "requested once in all (more: %s)"
          % (len(robots), len(meta) - len(robots),
             sorted(k for k, n in meta.items() if n > 1)[:5]))

    st = run_once([CRAWL, "--redis", redis.url, "--crawl-id", "basic",
                   "--status"])
    rows = [ln for ln in st.stdout.splitlines() if re.match(r"\s*\d+\s", ln)]
    m = re.search(r"^total\s+(\d+)", st.stdout, re.M)
    check(st.returncode == 0 and len(rows) == 3 and
          "crawl: over" in st.stdout and m and int(m.group(1)) == total,
          "basic: crawl --status: exit 0, three workers, total pages %d, "
          "\"crawl: over\" (%r)\n%s" % (total, st.returncode, st.stdout))

    # The finished crawl: worker 0 again exits 0 at once, fetches nothing.
    size = os.path.getsize(log)
    server = Server(sitedir, log)
    again = run_once(c.cmd(0, **{"--out": os.path.join(c.dir, "again.jsonl"),
                                 "--stats-json": None}))
    server.stop()
    want = finished_rc(read_stats(c.path(0, "stats.json")))
    check(again.returncode == want and "over" in again.stderr and
          "another --crawl-id" in again.stderr and
          os.path.getsize(log) == size,
          "basic: worker 0 run again on the finished crawl: exit 0 (4 if "
          "it gave URLs up), says "
          "the crawl is over and that another --crawl-id starts a new "
          "one, nothing requested (%r: %s)"
          % (again.returncode, again.stderr.strip()[-300:]))
    other = run_once(c.cmd(0, **{"--worker": "1", "--stats-json": None}))
    check(other.returncode == 2 and "--worker differs" in other.stderr,
          "basic: worker 0's state with --worker 1: exit 2, \"--worker "
          "differs\" (%r: %s)" % (other.returncode, other.stderr.strip()))
    two = run_once(c.cmd(1, **{"--workers": "2", "--state":
                                os.path.join(c.dir, "two.state"),
                                "--stats-json": None}))
    check(two.returncode == 2 and "3" in two.stderr,
          "basic: a worker with --workers 2 joining the crawl of 3: exit 2 "
          "(%r: %s)" % (two.returncode, two.stderr.strip()))


CLEAR = b"\033[H\033[2J"  # what --status writes before each redraw


def status_on_tty(redis, crawl_id):
    """crawl --status with a pseudo-terminal as its stdout, read until it
    has drawn the table twice (30 s at most), then SIGINT: (what it wrote,
    its exit status)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([CRAWL, "--redis", redis.url, "--crawl-id",
                          crawl_id, "--status"], stdout=slave,
                         stderr=subprocess.DEVNULL)
    os.close(slave)
    screen, deadline = b"", time.monotonic() + 30
    while screen.count(CLEAR) < 2 and time.monotonic() < deadline:
        if select.select([master], [], [], 1)[0]:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            screen += data
    rc = sample_site.stop_process(p, 20, signal.SIGINT)
    os.close(master)
    return screen, rc


def mid_crawl(c, k, records=20):
    """Wait until worker k's --out holds records records (or it has ended,
    or RUN_TIMEOUT has passed); whether it is still running."""
    out = c.path(k, "out.jsonl")
    deadline = time.monotonic() + RUN_TIMEOUT
    while count_lines(out) < records and c.runs[k].poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.01)
    return c.runs[k].poll() is None


def kill(work, sitedir, redis):
    log = os.path.join(work, "kill.log")
    server = Server(sitedir, log)
    c = Crawl("kill", work, sitedir, redis, server, 3)
    seed = server.args[-1]
    k = owner(origin_of(seed), 3)
    c.start_all()
    out = c.path(k, "out.jsonl")
    running = mid_crawl(c, k)
    rc = c.runs[k].kill()
    killed_at = time.monotonic()
    c.kills += 1
    check(running and rc == -signal.SIGKILL,
          "kill: worker %d (owner of the seed's host) killed with SIGKILL "
          "mid-crawl, %d records in its --out (%r)"
          % (k, count_lines(out), rc))
    st = run_once([CRAWL, "--redis", redis.url, "--crawl-id", "kill",
                   "--status"])
    check(st.returncode == 0 and "crawl: over" not in st.stdout,
          "kill: crawl --status while worker %d is down: exit 0, the crawl "
          "not over\n%s" % (k, st.stdout))
    screen, rc = status_on_tty(redis, "kill")
    check(rc == 0 and screen.count(CLEAR) >= 2 and b"worker" in screen and
          b"crawl: over" not in screen,
          "kill: crawl --status on a terminal redraws the table (%d times) "
          "until Ctrl-C: exit 0 (%r)" % (screen.count(CLEAR), rc))
    # No heartbeat for over 5 s: the row says so.
    time.sleep(max(0.0, killed_at + 5.5 - time.monotonic()))
    st = run_once([CRAWL, "--redis", redis.url, "--crawl-id", "kill",
                   "--status"])
    row = [line for line in st.stdout.splitlines()
           if line.split()[:1] == [str(k)]]
    check(len(row) == 1 and row[0].endswith(", silent"),
          "kill: crawl --status shows worker %d silent 5 s after the kill "
          "(%s)" % (k, row))
    c.start(k, "w%d.again" % k)
    c.wait_all()
    server.stop()
    stats, reqs, total = c.judge(log, tolerance=CONC)
    rc, report = run_checker(sitedir, log, c.union(), "any",
                             ["--refetch-tolerance", str(CONC)])
    m = REFETCHED.search(report)
    got = stats[k].get("refetched_after_restart")
    if check(m is not None and isinstance(got, int),
             "kill: refetches counted by the checker (%s) and reported by "
             "worker %d (%r)" % (m and m.group(0), k, got)):
        p = int(m.group(1))
        check(p <= got <= CONC,
              "kill: pages requested twice in the log (%d) <= worker %d's "
              "refetched_after_restart (%d) <= --concurrency (%d)"
              % (p, k, got, CONC))
    check(stats[k].get("runs") == 2,
          "kill: worker %d's state counts 2 runs (%r)"
          % (k, stats[k].get("runs")))


def interrupt(work, sitedir, redis):
    """SIGINT stops one worker cleanly: exit 130, its row says "stopped"
    and the crawl is not over; run again, it ends with the others."""
    log = os.path.join(work, "sigint.log")
    server = Server(sitedir, log)
    c = Crawl("sigint", work, sitedir, redis, server, 3)
    k = owner(origin_of(server.args[-1]), 3)
    c.start_all()
    running = mid_crawl(c, k)
    rc = c.runs[k].kill(signal.SIGINT)
    state = redis.cli("HGET", "bc:sigint:w:%d" % k, "state").strip()
    st = run_once([CRAWL, "--redis", redis.url, "--crawl-id", "sigint",
                   "--status"])
    check(running and rc == 130 and state == "stopped" and
          "stopped" in st.stdout and "crawl: over" not in st.stdout,
          "sigint: worker %d stopped by SIGINT mid-crawl: exit 130 (%r), "
          "its row's state \"stopped\" (%r), the crawl not over\n%s"
          % (k, rc, state, st.stdout))
    c.kills += 1  # two runs: the reports count the last one only
    c.start(k, "w%d.again" % k)
    c.wait_all()
    server.stop()
    c.judge(log)


def restart(work, sitedir, redis, expected):
    log = os.path.join(work, "restart.log")
    server = Server(sitedir, log)
    c = Crawl("restart", work, sitedir, redis, server, 3,
              extra=["--delay", "10"])
    c.start_all()
    deadline = time.monotonic() + RUN_TIMEOUT
    while sum(count_lines(c.path(i, "out.jsonl")) for i in range(3)) < \
            expected // 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    running = [r.poll() is None for r in c.runs]
    redis.shutdown()
    check(any(running), "restart: Redis stopped mid-crawl (SHUTDOWN), "
          "workers running: %s" % running)
    time.sleep(1.5)
    redis.start()
    c.wait_all()
    server.stop()
    stats, _, _ = c.judge(log)
    errors = [s.get("workers", {}).get("redis_errors", 0) for s in stats]
    check(sum(errors) > 0, "restart: the workers counted the lost "
          "connection (redis_errors %s)" % errors)


def garbage(work, sitedir, redis):
    # Two entries a worker must count and skip: fields that are not the
    # format, and a "from" that is no worker of the crawl.
    redis.cli("XADD", "bc:garbage:in:1", "*", "foo", "bar")
    redis.cli("XADD", "bc:garbage:in:1", "*", "v", "1", "from", "7", "urls",
              "l\t0\t0\thttp://www.bloomcrawl.test/\t")
    log = os.path.join(work, "garbage.log")
    server = Server(sitedir, log)
    log2 = os.path.join(work, "pair.log")
    server2 = Server(sitedir, log2)
    c = Crawl("garbage", work, sitedir, redis, server, 3)
    c2 = Crawl("pair", work, sitedir, redis, server2, 2, scope="domain")
    c.start_all()
    c2.start_all()
    c.wait_all()
    c2.wait_all()
    server.stop()
    server2.stop()
    stats, _, _ = c.judge(log)
    w1 = stats[1].get("workers", {})
    check(w1.get("garbage") == 2,
          "garbage: worker 1 counted the two hand-written entries "
          "(\"garbage\": %r) and skipped them" % w1.get("garbage"))
    c2.judge(log2)


def limit(work, sitedir, redis):
    log = os.path.join(work, "limit.log")
    server = Server(sitedir, log)
    c = Crawl("limit", work, sitedir, redis, server, 3,
              extra=["--max-pages", "40"])
    c.start_all()
    c.wait_all()
    server.stop()
    recs = [read_records(c.path(i, "out.jsonl")) for i in range(3)]
    urls = [r["url"] for rs in recs for r in rs]
    pages = [read_stats(c.path(i, "stats.json")).get("pages") for i in
             range(3)]
    taken = redis.cli("GET", "bc:limit:pages").strip()
    check(len(urls) == 40 and len(set(urls)) == 40 and sum(pages) == 40
          and taken == "40",
          "limit: --max-pages 40 is global: 40 records in the union, each "
          "URL once, pages %s, the budget in Redis %r" % (pages, taken))
    wrong = ["w%d %s" % (i, r["url"]) for i in range(3) for r in recs[i]
             if owner(origin_of(r["url"]), 3) != i]
    check(not wrong, "limit: every record is its worker's host (%s)"
          % wrong[:5])
    reqs = sample_site.page_requests(log, SITEMAP_TARGETS)
    check(len(reqs) == 40, "limit: 40 page requests in the server's log "
          "(%d)" % len(reqs))
    outcomes = [read_stats(c.path(i, "stats.json")).get("outcome") for i in
                range(3)]
    check(outcomes == ["limit"] * 3, "limit: every worker's outcome is "
          "\"limit\" (%s)" % outcomes)


def errors(work, redis):
    state = os.path.join(work, "nowhere.state")
    for url in ("unix:" + os.path.join(work, "no-such.sock"),
                "redis://127.0.0.1:1/0"):
        p = run_once([CRAWL, "--redis", url, "--workers", "2", "--worker",
                      "0", "--state", state, "http://www.bloomcrawl.test/"])
        check(p.returncode == 1 and
              ("crawl: --redis %s: cannot connect: " % url) in p.stderr and
              not os.path.exists(state),
              "errors: Redis unreachable at %s: exit 1, \"cannot connect\", "
              "--state not created (%r: %s)"
              % (url, p.returncode, p.stderr.strip()))
    # A password in --redis is never shown: "***" in every message.
    for url, rc in (("redis://:s3cret@127.0.0.1:1/0", 1),
                    ("redis://crawler:s3cret@127.0.0.1:99999", 2)):
        p = run_once([CRAWL, "--redis", url, "--workers", "2", "--worker",
                      "0", "--state", state, "http://www.bloomcrawl.test/"])
        check(p.returncode == rc and "s3cret" not in p.stderr and
              ":***@127.0.0.1:" in p.stderr,
              "errors: --redis %s: exit %d, the password hidden (%r: %s)"
              % (url, rc, p.returncode, p.stderr.strip()))
    usage = [
        (["--redis", redis.url, "--workers", "2", "--worker", "0"],
         "--state"),
        (["--redis", redis.url, "--workers", "2", "--worker", "2",
          "--state", state], "--worker"),
        (["--redis", redis.url, "--workers", "0", "--worker", "0",
          "--state", state], "--workers"),
        (["--redis", redis.url, "--workers", "2", "--worker", "0",
          "--crawl-id", "no spaces", "--state", state], "--crawl-id"),
        (["--workers", "2", "--worker", "0", "--state", state], "--redis"),
        (["--redis", "tcp://x", "--workers", "2", "--worker", "0",
          "--state", state], "--redis"),
        (["--status"], "--redis"),
    ]
    for args, word in usage:
        p = run_once([CRAWL, *args, "http://www.bloomcrawl.test/"])
        check(p.returncode == 2 and word in p.stderr and
              not os.path.exists(state),
              "errors: crawl %s: exit 2 naming %s (%r: %s)"
              % (" ".join(args), word, p.returncode, p.stderr.strip()))
    url = "unix:" + os.path.join(work, "no-such.sock")
    p = run_once([CRAWL, "--redis", url, "--status"])
    check(p.returncode == 1 and
          ("crawl: --redis %s: cannot connect: " % url) in p.stderr,
          "errors: crawl --status with Redis unreachable: exit 1, \"cannot "
          "connect\" (%r: %s)" % (p.returncode, p.stderr.strip()))
    p = run_once([CRAWL, "--redis", redis.url, "--crawl-id", "nosuch",
                  "--status"])
    check(p.returncode == 1 and "nosuch" in p.stderr,
          "errors: crawl --status of a crawl id that does not exist: exit "
          "1 (%r: %s)" % (p.returncode, p.stderr.strip()))


def main():
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        print("skip: redis-server or redis-cli is not installed")
        return SKIP
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    if XXH64 is None:
        print("libxxhash not found (ctypes): the owners cannot be computed")
        return 1
    check(XXH64(b"", 0) == 0xEF46DB3751D8E999,
          "XXH64 of the empty string, seed 0, is the reference "
          "0xEF46DB3751D8E999")
    helptext = run_once([CRAWL, "--help"]).stdout
    if not check("--redis" in helptext and "--status" in helptext,
                 "crawl --help documents --redis and --status (issue 15)"):
        return summary() or 1
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bc_workers.") as work:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", str(PAGES)], check=True,
                       capture_output=True)
        with open(os.path.join(sitedir, "manifest.json")) as f:
            manifest = json.load(f)
        SITEMAP_TARGETS.update(sample_site.sitemap_targets(
            os.path.join(sitedir, "manifest.json")))
        expected = manifest["scopes"]["any"]["pages"]
        redis = Redis(work)
        parts = Parts()
        part = parts.run

        try:
            part("errors", errors, work, redis)
            part("basic", basic, work, sitedir, redis)
            part("kill", kill, work, sitedir, redis)
            part("sigint", interrupt, work, sitedir, redis)
            part("restart", restart, work, sitedir, redis, expected)
            part("garbage", garbage, work, sitedir, redis)
            part("limit", limit, work, sitedir, redis)
        finally:
            redis.stop()
    print("times: %s; total %.1f s" % (", ".join(parts.times),
                                       time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
