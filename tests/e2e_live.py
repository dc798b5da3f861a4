#!/usr/bin/env python3
"""e2e_live.py - live statistics without a server (issue 22, section 2).

A crawl of the sample site on 127.0.0.1, slowed by --delay so that it is
watched while it runs:

  live    --stats-json FILE with --stats-interval 1 and --state: FILE parses
          from the start and says "outcome": "running", "exit_status":
          null, its pages growing; a reader opening it in a tight loop
          while SIGUSR1 (every 10 ms) has it rewritten many times a second
          never sees a half-written document nor a missing file; `crawl
          --status --state DIR` beside the running crawl says running (its
          pid) with pages that grow, and once it is over says stopped with
          the final --stats-json's numbers (pages, queued, hosts, runs);
          --log gets statistics lines in the documented key=value format,
          and SIGHUP after the log was renamed makes the crawl write a new
          file at the old name (every line of both whole, the last
          statistics line's pages the final count); no FILE.tmp is left.
  kill9   kill -9 at three moments while SIGUSR1 has FILE rewritten as
          fast as it goes: FILE is always the last complete document.
  usr1    --stats-interval 0: FILE is written at the start and then not
          again, until SIGUSR1 has it written at once (within a second);
          SIGINT ends the crawl with "interrupted", exit 130 in FILE.
  early   SIGUSR1 and SIGHUP while the crawl starts (reading --seeds from
          a FIFO): caught, the crawl goes on.
  usage   a bad --stats-interval, --status without --redis or --state
          (exit 2), --status --state on a directory that is no state (1).

usage: e2e_live.py [BINDIR]   (BINDIR holds crawl; default build/examples)
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import Parts, Run, check, read_stats, summary  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")

# A crawl of about ten seconds: 60 pages of one host, 150 ms apart.
SLOW = ["--quiet", "--delay", "150", "--timeout", "1500", "--max-body",
        "1000000", "--max-pages", "60", "--retry-delay", "100",
        "--exclude", "*/slow*", "--exclude", "*/error/*"]

# The documented --log statistics line (crawl.c, log_stats()).
STATS_KEYS = ["elapsed_s", "pages", "pages_per_s", "bytes", "queued",
              "in_flight", "hosts", "errors", "given_up", "new", "duplicate",
              "probably_seen", "fill", "fpr"]
STATS_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ stats (.*)$")
FETCH_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \d{3} \d+ \d+ "
                        r"\S+( \S+)?$")


def stats_fields(line):
    """A statistics line's {key: number}, or None if it is not one in the
    documented format (the keys in order, every value a number)."""
    m = STATS_LINE.match(line)
    if not m:
        return None
    pairs = [p.split("=", 1) for p in m.group(1).split(" ")]
    if [p[0] for p in pairs] != STATS_KEYS or any(len(p) != 2 for p in pairs):
        return None
    try:
        return {k: float(v) for k, v in pairs}
    except ValueError:
        return None


def status(state):
    """crawl --status --state DIR: (exit status, {field: text}, stdout)."""
    p = subprocess.run([CRAWL, "--status", "--state", state],
                       capture_output=True, text=True, timeout=30)
    rows = {}
    for ln in p.stdout.splitlines()[1:]:
        k, _, v = ln.strip().partition("  ")
        rows[k.strip()] = v.strip()
    head = p.stdout.splitlines()[0] if p.stdout else ""
    rows["_head"] = head
    return p.returncode, rows, p.stdout + p.stderr


class Reader(threading.Thread):
    """Reads path in a tight loop until stop(): counts the reads, the
    documents that did not parse, and the times the file was missing
    (after it first appeared)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.reads, self.bad, self.missing = path, 0, [], 0
        self.outcomes = set()
        self.halt = threading.Event()

    def run(self):
        seen = False
        while not self.halt.is_set():
            try:
                with open(self.path) as f:
                    text = f.read()
            except FileNotFoundError:
                self.missing += seen
                continue
            seen = True
            self.reads += 1
            try:
                self.outcomes.add(json.loads(text)["outcome"])
            except (ValueError, KeyError):
                self.bad.append(text[-80:])

    def stop(self):
        self.halt.set()
        self.join()


class Spammer(threading.Thread):
    """Sends SIGUSR1 to proc every interval seconds until stop()."""

    def __init__(self, proc, interval=0.01):
        super().__init__(daemon=True)
        self.proc, self.interval, self.sent = proc, interval, 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set() and self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGUSR1)
                self.sent += 1
            except ProcessLookupError:
                break
            time.sleep(self.interval)

    def stop(self):
        self.halt.set()
        self.join()


def wait_for(cond, limit=20.0, step=0.05):
    """Wait until cond() is true (at most limit seconds); its last value."""
    end = time.monotonic() + limit
    v = cond()
    while not v and time.monotonic() < end:
        time.sleep(step)
        v = cond()
    return v


def test_live(work, server):
    d = os.path.join(work, "live")
    os.mkdir(d)
    stats, state = os.path.join(d, "stats.json"), os.path.join(d, "state")
    flog = os.path.join(d, "fetch.log")
    run = Run([CRAWL, "--state", state, "--stats-json", stats,
               "--stats-interval", "1", "--log", flog, "--out",
               os.path.join(d, "out.jsonl"), *SLOW, *server.args], d, "live")
    first = wait_for(lambda: read_stats(stats).get("pages", 0) >= 3 and
                     read_stats(stats))
    check(first and first.get("outcome") == "running" and
          first.get("exit_status", 0) is None and "updated_at" in first and
          "counters" in first,
          "live: --stats-json parses during the crawl: outcome running, "
          "exit_status null (%r)" % {k: first.get(k) for k in (
              "outcome", "exit_status", "pages")} if first else None)
    rc1, st1, out1 = status(state)
    check(rc1 == 0 and st1["_head"].endswith(
        "running (pid %d)" % run.proc.pid),
        "live: crawl --status --state says running, with the crawl's pid "
        "(%r)" % out1[:300])
    # A tight reader while SIGUSR1 has FILE rewritten many times a second.
    reader, spam = Reader(stats), Spammer(run.proc)
    reader.start()
    spam.start()
    time.sleep(2.0)
    # logrotate's create mode: rename, then SIGHUP.
    os.rename(flog, flog + ".1")
    run.proc.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    spam.stop()
    later = read_stats(stats)
    rc2, st2, out2 = status(state)
    check(rc2 == 0 and "running" in st2["_head"] and
          int(st2.get("pages", 0)) > int(st1.get("pages", 0)) and
          int(st2.get("admitted", 0)) >= int(st1.get("admitted", 0)),
          "live: a second crawl --status: still running, pages grew (%s -> "
          "%s)" % (st1.get("pages"), st2.get("pages")))
    check(later.get("pages", 0) > first.get("pages", 0),
          "live: --stats-json's pages grew while it ran (%s -> %s)"
          % (first.get("pages"), later.get("pages")))
    rc = run.wait()
    reader.stop()
    check(rc == 0 and run.sane(), "live: the crawl ended, exit 0 (%r) %s"
          % (rc, run.tail()[-300:]))
    check(reader.reads > 200 and not reader.bad and reader.missing == 0,
          "live: %d reads in a tight loop while %d SIGUSR1 had it rewritten:"
          " never a parse error (%d: %r), never missing (%d)"
          % (reader.reads, spam.sent, len(reader.bad), reader.bad[:1],
             reader.missing))
    final = read_stats(stats)
    check(final.get("outcome") == "limit" and final.get("exit_status") == 0,
          "live: the last document is the end's: outcome limit, exit 0 (%r)"
          % final.get("outcome"))
    check(not os.path.exists(stats + ".tmp"), "live: no FILE.tmp is left")
    rc3, st3, out3 = status(state)
    fr = final.get("frontier", {})
    want = {"pages": final.get("pages"), "queued": fr.get("queued"),
            "hosts": fr.get("hosts"), "runs": final.get("runs")}
    got = {k: int(st3.get(k, -1)) for k in want}
    check(rc3 == 0 and st3["_head"].endswith("stopped") and got == want,
          "live: crawl --status --state after the crawl: stopped, the "
          "final --stats-json's numbers (%r, %r)" % (got, want))
    check(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(\d+\.\d s ago\)$",
                   st3.get("last commit", "")) is not None,
          "live: --status names the last commit's time (%r)"
          % st3.get("last commit"))
    # The log: both files whole lines, statistics lines in the format.
    old = open(flog + ".1").read().splitlines()
    new = open(flog).read().splitlines() if os.path.exists(flog) else []
    bad = [ln for ln in old + new
           if not FETCH_LINE.match(ln) and stats_fields(ln) is None]
    check(not bad, "live: every --log line is a fetch line or a statistics "
          "line in the documented format (%r)" % bad[:2])
    old_stats = [stats_fields(ln) for ln in old if stats_fields(ln)]
    new_stats = [stats_fields(ln) for ln in new if stats_fields(ln)]
    check(len(old_stats) >= 2 and
          all(a["pages"] <= b["pages"] for a, b in zip(old_stats,
                                                       old_stats[1:])),
          "live: --log has statistics lines, pages never decreasing (%d)"
          % len(old_stats))
    check(any(FETCH_LINE.match(ln) for ln in new) and new_stats and
          new_stats[-1]["pages"] == final.get("pages"),
          "live: after the rename and SIGHUP, a new --log at the old name "
          "(%d lines), its last statistics line the final pages (%r, %r)"
          % (len(new), new_stats[-1]["pages"] if new_stats else None,
             final.get("pages")))


def test_kill9(work, server):
    for n, after in enumerate((0.3, 0.9, 1.7)):
        d = os.path.join(work, "kill9-%d" % n)
        os.mkdir(d)
        stats = os.path.join(d, "stats.json")
        run = Run([CRAWL, "--stats-json", stats, "--stats-interval", "1",
                   *SLOW, *server.args], d, "kill9")
        wait_for(lambda: read_stats(stats).get("pages", 0) >= 2)
        spam = Spammer(run.proc, 0.002)
        spam.start()
        time.sleep(after)
        rc = run.kill(signal.SIGKILL)
        spam.stop()
        s = read_stats(stats)
        check(rc == -signal.SIGKILL and s.get("outcome") == "running" and
              s.get("pages", 0) >= 2 and "per_host" in s,
              "kill9: killed -9 %.1f s into a storm of SIGUSR1 (%d sent): "
              "FILE is a complete document, outcome running, %s pages"
              % (after, spam.sent, s.get("pages")))


def test_usr1(work, server):
    d = os.path.join(work, "usr1")
    os.mkdir(d)
    stats = os.path.join(d, "stats.json")
    run = Run([CRAWL, "--stats-json", stats, "--stats-interval", "0",
               *SLOW, *server.args], d, "usr1")
    s0 = wait_for(lambda: read_stats(stats))
    check(s0.get("outcome") == "running",
          "usr1: FILE written at the start, outcome running")
    time.sleep(2.0)
    s1 = read_stats(stats)
    check(s1.get("elapsed_ms") == s0.get("elapsed_ms"),
          "usr1: --stats-interval 0: not written again by itself (%r, %r)"
          % (s0.get("elapsed_ms"), s1.get("elapsed_ms")))
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGUSR1)
    s2 = wait_for(lambda: read_stats(stats).get("elapsed_ms") !=
                  s0.get("elapsed_ms") and read_stats(stats), limit=5)
    took = time.monotonic() - sent
    check(s2 and took < 1.5 and s2.get("pages", 0) > s0.get("pages", 0),
          "usr1: SIGUSR1 has it written at once (%.2f s; pages %r -> %r)"
          % (took, s0.get("pages"), s2.get("pages") if s2 else None))
    run.proc.send_signal(signal.SIGINT)
    rc = run.wait()
    s3 = read_stats(stats)
    check(rc == 130 and s3.get("outcome") == "interrupted" and
          s3.get("exit_status") == 130,
          "usr1: SIGINT: exit 130, outcome interrupted in FILE (%r, %r)"
          % (rc, s3.get("outcome")))


def test_early(work, server):
    """SIGUSR1 and SIGHUP while the crawl starts (here: reading --seeds
    from a FIFO, before the crawl loop) only set their flags: the crawl
    goes on (before they were caught from the loop's start on, their
    default action killed it)."""
    d = os.path.join(work, "early")
    os.mkdir(d)
    stats, fifo = os.path.join(d, "stats.json"), os.path.join(d, "seeds")
    os.mkfifo(fifo)
    seed = server.args[-1]
    run = Run([CRAWL, "--stats-json", stats, "--log",
               os.path.join(d, "fetch.log"), "--seeds", fifo,
               *SLOW, "--max-pages", "3", *server.args[:-1]], d,
              "early")
    # The crawl has opened the FIFO once this open returns: it is in
    # main(), reading its seeds.
    try:
        with open(fifo, "w") as f:
            run.proc.send_signal(signal.SIGUSR1)
            run.proc.send_signal(signal.SIGHUP)
            time.sleep(0.3)
            f.write(seed + "\n")
    except BrokenPipeError:
        pass  # killed by the signal: no reader left
    rc = run.wait()
    s = read_stats(stats)
    check(rc == 0 and s.get("outcome") == "limit" and s.get("pages") == 3,
          "early: SIGUSR1 and SIGHUP while the seeds are read do not kill "
          "the crawl (exit %r, %r)" % (rc, s.get("outcome")))


def test_usage(work):
    p = subprocess.run([CRAWL, "--stats-interval", "x", "http://a.test/"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "--stats-interval" in p.stderr,
          "usage: a bad --stats-interval is refused, exit 2")
    p = subprocess.run([CRAWL, "--status"], capture_output=True, text=True,
                       timeout=30)
    check(p.returncode == 2 and "--redis URL or --state DIR" in p.stderr,
          "usage: --status needs --redis or --state, exit 2 (%r)"
          % p.stderr.strip())
    empty = os.path.join(work, "nostate")
    os.mkdir(empty)
    p = subprocess.run([CRAWL, "--status", "--state", empty],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 1 and "not a crawl state" in p.stderr and
          os.listdir(empty) == [],
          "usage: --status --state on a directory that is no state: exit 1,"
          " nothing written (%r)" % p.stderr.strip())


def main():
    if not os.access(CRAWL, os.X_OK):
        print("no crawl binary at", CRAWL)
        return 1
    work = tempfile.mkdtemp(prefix="bc-e2e-live-")
    parts = Parts()
    server = None
    try:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", "100"], check=True,
                       stdout=subprocess.DEVNULL)
        server = sample_site.Server(sitedir, os.path.join(work, "access.log"))
        parts.run("live", test_live, work, server)
        parts.run("kill9", test_kill9, work, server)
        parts.run("usr1", test_usr1, work, server)
        parts.run("early", test_early, work, server)
        parts.run("usage", test_usage, work)
    finally:
        if server:
            server.stop()
        print("times:", ", ".join(parts.times))
        rc = summary()
        if rc == 0:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept:", work)
    return rc


if __name__ == "__main__":
    sys.exit(main())
