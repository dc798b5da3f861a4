#!/usr/bin/env python3
"""End-to-end: crawl workers outlive a stalled Redis (issue 20 section 3).

    python3 tests/e2e_workers_stall.py BUILD_EXAMPLES_DIR [STALL_SECONDS]

Three workers (`crawl --redis --workers 3`) crawl the sample site (300
pages on three virtual hosts, --scope any: the partition is real and the
pages link across hosts, so URLs are handed between workers all the time)
through a private redis-server, as tests/e2e_workers.py runs them (its
Redis, Server and Crawl are used here).  Once a quarter of the pages are
in, the moment a stream entry waits in an inbox (or once two thirds are
in, if none was seen), redis-server is stopped with SIGSTOP for
STALL_SECONDS (5 by default: longer than the workers' 2 s command
timeout), then resumed with SIGCONT.
A stalled Redis keeps accepting connections in its kernel and answers
nothing: the workers' reads, sends and heartbeats time out, and the ones
that were on their way run on the server once it resumes, their replies
lost.  An XREADGROUP whose reply was lost had delivered its entries into
the consumer's pending list, which a worker re-read only at start: it then
waited for ever for entries it held (sent 3,870, acked 3,867).  Against
the build before the fix (4578137) the workers hung in 6 runs of 8 (sent
50, acked 49); the race is the stall's timing, the deterministic test is
test_workers's test_read_reply_lost.

Then the same crawl (another --crawl-id) with Redis killed (SIGKILL) once
a quarter of the pages are in and started again 1.5 s later on its
append-only file (appendfsync always), checked alike.

Checked: every worker exits 0 by itself (no hang: each is killed after
RUN_TIMEOUT and fails the test); check_crawl.py passes strictly on the
union of their --out files (every reachable page, each requested once in
the server's log); in Redis, sent = acknowledged; the workers counted the
stall (redis_errors).  Printed, not judged (timing on a shared machine):
the pages fetched per second in the 2 s before the stall and during it
(the crawl loop does not wait for Redis at every step; DESIGN.md 14).

Nothing here contacts an address outside 127.0.0.0/8.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import Parts, check, count_lines, read_stats, summary  # noqa
import e2e_workers as ew  # noqa: E402
import sample_site  # noqa: E402

STALL = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
RUN_TIMEOUT = 60   # seconds a worker may take before it is called hung
DELAY = "40"       # --delay MS: the crawl lasts long enough to stall it


# The entries waiting in the three inboxes, in one round trip.
INBOXES = ("return redis.call('XLEN', KEYS[1]) + redis.call('XLEN', KEYS[2])"
           " + redis.call('XLEN', KEYS[3])")


class Resp:
    """A connection to redis-server speaking RESP itself: a command is a
    round trip of well under a millisecond (redis-cli starts a process)."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.f = self.sock.makefile("rwb")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()
        self.sock.close()

    def cmd(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.f.write(out)
        self.f.flush()
        line = self.f.readline()
        if line[:1] == b":":
            return int(line[1:])
        raise RuntimeError("Redis: %r" % line)


def stall(work, sitedir, redis, expected):
    log = os.path.join(work, "stall.log")
    server = ew.Server(sitedir, log)
    c = ew.Crawl("stall", work, sitedir, redis, server, 3,
                 extra=["--delay", DELAY])
    c.start_all()

    def pages():
        return sum(count_lines(c.path(i, "out.jsonl")) for i in range(3))

    history = []  # (time, pages)
    deadline = time.monotonic() + RUN_TIMEOUT
    while pages() < expected // 4 and time.monotonic() < deadline:
        history.append((time.monotonic(), pages()))
        time.sleep(0.02)
    # Stop it the moment an entry waits in an inbox: its reader's next
    # XREADGROUP (a busy worker reads every 10 ms) goes out during the
    # stall and runs when Redis resumes, its reply lost.
    # (An entry spends some milliseconds there: keep looking until
    # two thirds of the pages are in.)
    inflight = 0
    with Resp(redis.sock) as r:
        while inflight == 0 and pages() < expected * 2 // 3 and \
                time.monotonic() < deadline:
            history.append((time.monotonic(), pages()))
            for _ in range(200):
                inflight = r.cmd("EVAL", INBOXES, "3",
                                 *["bc:stall:in:%d" % i for i in range(3)])
                if inflight:
                    break
        history.append((time.monotonic(), pages()))
        running = [p.poll() is None for p in c.runs]
        os.kill(redis.proc.pid, signal.SIGSTOP)
    t_stop, at_stop = history[-1]
    try:
        time.sleep(STALL)
        during = pages() - at_stop
    finally:
        os.kill(redis.proc.pid, signal.SIGCONT)
    check(all(running), "stall: Redis stopped (SIGSTOP) for %.1f s at %d "
          "of %d pages, all workers running (%s), %d entries in the "
          "inboxes" % (STALL, at_stop, expected, running, inflight))
    before = [p for t, p in history if t >= t_stop - 2.0]
    span = t_stop - min((t for t, _ in history if t >= t_stop - 2.0),
                        default=t_stop)
    rate_before = (at_stop - before[0]) / span if before and span else 0.0
    print("stall: pages/s in the 2 s before the stall %.1f, during the "
          "%.1f s stall %.1f (%d pages)"
          % (rate_before, STALL, during / STALL, during))
    # One deadline for all (a hung crawl hangs every worker: waiting
    # RUN_TIMEOUT for each in turn would triple the time of a failure).
    end = time.monotonic() + RUN_TIMEOUT
    for r in c.runs:
        r.timeout = max(1.0, end - time.monotonic())
    c.wait_all()
    server.stop()
    # The reports count the entries each worker knows it sent: an XADD
    # whose reply the stall took ran on the server (counted in Redis,
    # where judge() checks sent = acknowledged) and was sent again.
    c.kills += 1
    stats, _, _ = c.judge(log)
    errors = [s.get("workers", {}).get("redis_errors", 0) for s in stats]
    check(sum(errors) > 0, "stall: the workers counted the stall "
          "(redis_errors %s)" % errors)


def crash(work, sitedir, redis, expected):
    """Redis killed with SIGKILL mid-crawl and started again on its
    append-only file (appendfsync always: what it answered is on disk)."""
    log = os.path.join(work, "crash.log")
    server = ew.Server(sitedir, log)
    c = ew.Crawl("crash", work, sitedir, redis, server, 3,
                 extra=["--delay", DELAY])
    c.start_all()
    deadline = time.monotonic() + RUN_TIMEOUT
    while sum(count_lines(c.path(i, "out.jsonl")) for i in range(3)) < \
            expected // 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    running = [r.poll() is None for r in c.runs]
    redis.proc.kill()
    redis.proc.wait()
    check(all(running), "crash: Redis killed (SIGKILL) mid-crawl, all "
          "workers running (%s)" % running)
    time.sleep(1.5)
    redis.start()
    end = time.monotonic() + RUN_TIMEOUT
    for r in c.runs:
        r.timeout = max(1.0, end - time.monotonic())
    c.wait_all()
    server.stop()
    c.kills += 1  # the reports: as in stall()
    stats, _, _ = c.judge(log)
    errors = [s.get("workers", {}).get("redis_errors", 0) for s in stats]
    check(sum(errors) > 0, "crash: the workers counted the lost Redis "
          "(redis_errors %s)" % errors)


def main():
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        print("skip: redis-server or redis-cli is not installed")
        return ew.SKIP
    if not os.path.exists(ew.CRAWL):
        print("crawl not built at", ew.CRAWL)
        return 1
    if ew.XXH64 is None:
        print("libxxhash not found (ctypes): the owners cannot be computed")
        return 1
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bc_stall.") as work:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(ew.SITE, "gensite.py"),
                        sitedir, "--pages", str(ew.PAGES)], check=True,
                       capture_output=True)
        manifest = os.path.join(sitedir, "manifest.json")
        ew.SITEMAP_TARGETS.update(sample_site.sitemap_targets(manifest))
        expected = read_stats(manifest)["scopes"]["any"]["pages"]
        redis = ew.Redis(work)
        parts = Parts()
        try:
            parts.run("stall", stall, work, sitedir, redis, expected)
            parts.run("crash", crash, work, sitedir, redis, expected)
        finally:
            redis.proc.send_signal(signal.SIGCONT)
            redis.stop()
    print("times: %s; total %.1f s" % (", ".join(parts.times),
                                       time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
