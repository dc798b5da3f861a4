#!/usr/bin/env python3
"""End-to-end: `crawl --state DIR` survives kill -9, stops cleanly, refuses
what it must refuse.

    python3 tests/e2e_state.py BUILD_EXAMPLES_DIR [SEED]

The sample site (examples/site, 600 pages) is served on a free port of
127.0.0.1 with an access log, as in tests/e2e_crawl.py, and crawled with
--state DIR, --out and --stats-json (--scope domain, --max-depth 8,
--concurrency 8, --per-host 4, no delay).  The tests rely only on the
command-line contract of --state (crawl --help): exit statuses, messages,
--stats-json's "refetched_after_restart", "runs" and "pages", the files
DIR/crawl.db, DIR/crawl.db-wal (WAL mode), DIR/bloom.snap, DIR/lock; never
on the database's schema.  Randomness is seeded (SEED, default 1; printed).

The parts:
  kill9     12 runs killed with SIGKILL at seeded moments, then a run to
            the end; each resumes with the same command.  The moments: a
            short random delay after the start (the state being created,
            robots.txt in flight), a random delay mid-crawl, right after
            the --out file grew by a random number of records (completions
            written, maybe not committed), right after DIR/crawl.db-wal
            changed (a commit), right after a snapshot of the Bloom filter
            began (a bloom.snap.tmp.* file) or ended (bloom.snap replaced).
            Each killed run is held to a few dozen pages of progress, so
            the kills spread over the crawl.  Then: the last run exits 4
            (incomplete: the site's /error/500 and /slow are given up
            after their retries, as in every run below that finishes);
            check_crawl.py passes with --refetch-tolerance concurrency x
            kills (every reachable page fetched, nothing disallowed, one
            valid record per URL in --out, the log and --out agree);
            the repeated page requests in the server's log (P) are at
            most the crawler's refetched_after_restart (S), which is at
            most concurrency x kills (P < S when a kill fell between the
            commit that recorded jobs in flight and the requests: those
            were never sent); pages in --stats-json = records in
            --out; 2 <= runs <= runs started; --out ends with a newline.
            Then the finished state run again (without --quiet): exit 4,
            outcome incomplete, nothing requested, --out unchanged, its
            report says "refetched after restart S".  The runs write
            --warc FILE.warc.gz (issue 13): after the last one every gzip
            member is whole (no torn record), every record's length and
            digests check out (hashlib), one warcinfo opens the file and
            no other follows, requests and responses (or revisit
            records, issue 24) pair by WARC-Concurrent-To, each revisit
            names a response record of the file with its payload digest,
            URI and date, and each --out record with a warc_file has
            exactly one response record for its URL in the file, the one
            at its warc_offset (a revisit when the record has
            duplicate_of, naming that URL); the finished run again leaves
            the WARC as
            it was; every --out record has fetched_at, the WARC-Date of its
            response record.  (tests/e2e_warc.py reads it with an outside
            reader.)
  sigint    SIGINT once a third of the pages are in --out: exit 130,
            outcome interrupted; the same command again: exit 4, the
            checker passes without tolerance (no request twice),
            refetched_after_restart 0; the finished state run again:
            exit 4, outcome incomplete, runs 3, nothing requested, --out
            unchanged.
  sigterm   the same with SIGTERM (143), the first run with --delay 100;
            while it runs, a second crawl on the same DIR is refused at
            once: exit 1, "in use by another crawl (pid N)" with the first
            one's pid.  The resume runs with --delay 0 (an option that may
            change on resume); runs 2.
  refuse    a state stopped by --max-pages 30, then: an undamaged copy is
            accepted (exit 0, outcome limit, nothing fetched); a copy with
            crawl.db truncated (to half, to nothing), its header magic or
            its first page's b-tree header flipped, or the b-tree page type
            of a table's root page flipped (crawl.db as a checkpoint leaves
            it: a clean stop leaves the WAL, whose pages are read before
            crawl.db's, so damage to crawl.db's older copy of one is no
            damage); with bloom.snap truncated or a byte flipped: exit 1,
            a message naming the file, no crash (no signal, no sanitizer
            report), nothing requested, DIR and --out byte for byte as
            before (DIR/lock's content excepted: it may name the last pid
            that held it; and crawl.db-shm's, the WAL's index, which
            SQLite rebuilds at the first open).  A directory that is not a
            state (other files; a foreign SQLite crawl.db) and a regular
            file: exit 1, a message naming it, untouched (lock included).
            --scope, --expect, --user-agent, --no-robots, --exclude,
            --warc, --warc-max-size changed: exit 2, "--OPTION differs",
            untouched.  Then the state resumed
            with --max-pages 60 and --concurrency 4: exit 0, outcome limit,
            60 pages and 60 records (counters continue), runs 2, no page
            requested twice over both runs.
  fsize     a file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) of half the
            crawl.db of a finished crawl, with a Bloom filter small enough
            to fit under it: exit 1 with a "crawl: --state ..." (or
            "crawl: writing OUT: File too large") message; resumed
            without the limit: exit 4 (the site's /error/500 and /slow
            are given up), the checker passes with
            --refetch-tolerance concurrency, P <= S <= concurrency.
  tmpfs     (as root, when mount works) DIR on a 2 MiB tmpfs, the default
            1.2 MB Bloom filter: the disk fills, exit 1 with "crawl: --state
            DIR: ..."; the tmpfs grown to 64 MiB (remount), the same command
            completes, checked as for fsize.

Nothing here contacts an address outside 127.0.0.0/8.  Every process is
waited for with a time limit: a crawl that hangs is killed and fails the
test, it never hangs it.
"""
import base64
import collections
import errno
import hashlib
import json
import os
import random
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import (RUN_TIMEOUT, Parts, Run, check,  # noqa: E402
                       count_lines, read_stats, summary)
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
CRAWL = os.path.join(BIN, "crawl")
PAGES = 600          # gensite.py --pages
SLOW_SECONDS = 3     # serve.py's /slow; the crawl's timeout is below it
CONC = 8             # --concurrency
KILLS = 12           # SIGKILLs in the kill9 part (at least 10 must land)
CHECK = ["--scope", "domain", "--max-depth", "8"]
# A crawl of the site that runs to its end gives up /error/500 and /slow
# (they fail on every try: transient faults, retried, then given up), so
# it ends incomplete, exit 4 (docs/DESIGN.md 3.4); limits stay exit 0.
FINISHED, FINISHED_RC = "incomplete", 4


def options(**over):
    """The crawl options of every run; over replaces or adds some
    (name with _ for -, value None to drop, True for a flag)."""
    o = {"quiet": True, "delay": "0", "concurrency": str(CONC),
         "per-host": "4", "timeout": "1500", "max-body": "1000000",
         "scope": "domain", "max-depth": "8", "retry-delay": "100",
         "host-failures": "0"}
    o.update({k.replace("_", "-"): v for k, v in over.items()})
    args = []
    for k, v in o.items():
        if v is True:
            args.append("--" + k)
        elif v is not None and v is not False:
            args += ["--" + k, v]
    return args


class Server(sample_site.Server):
    """serve.py with its access log, /slow and /huge as the runs expect."""

    def __init__(self, sitedir, log):
        super().__init__(sitedir, log, ["--slow-seconds", str(SLOW_SECONDS),
                                        "--huge-bytes", "4M"],
                         SLOW_SECONDS + 5)


def crawl(state, out, stats, server, **over):
    return [CRAWL, "--state", state, "--out", out, "--stats-json", stats,
            *options(**over), *server.args]


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


# (host, path) of the site's sitemaps (from the manifest, in main()):
# the crawl follows them, and their requests are not pages.
SITEMAP_TARGETS = set()


class Lines:
    """Counts the lines of a file another process appends to (and may cut
    back), reading only what was added since the last call."""

    def __init__(self, path):
        self.path, self.off, self.n = path, 0, 0

    def count(self):
        try:
            size = os.path.getsize(self.path)
        except OSError:
            return self.n
        if size < self.off:
            self.off, self.n = 0, 0
        if size > self.off:
            with open(self.path, "rb") as f:
                f.seek(self.off)
                data = f.read(size - self.off)
            self.n += data.count(b"\n")
            self.off += len(data)
        return self.n


def file_sig(path):
    """What changes when a file is written or replaced; None if absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def run_checker(sitedir, log, out, extra=()):
    return sample_site.run_checker(sitedir, log, out, [*CHECK, *extra],
                                   RUN_TIMEOUT)


REFETCHED = re.compile(r"refetched after a kill: (\d+) pages, (\d+) robots")


def judge_resumed(name, sitedir, log, out, stats, kills):
    """The checks after a crawl that was stopped by kills (or a write
    error) and resumed to the end: the checker with the in-flight
    tolerance, and the refetch count against the server's log."""
    bound = CONC * kills
    rc, report = run_checker(sitedir, log, out,
                             ["--refetch-tolerance", str(bound)])
    print(report)
    check(rc == 0, "%s: check_crawl passes with --refetch-tolerance %d "
          "(concurrency %d x %d kills)" % (name, bound, CONC, kills))
    m = REFETCHED.search(report)
    s = read_stats(stats)
    got = s.get("refetched_after_restart")
    if check(m is not None and isinstance(got, int),
             "%s: refetches counted by the checker (%s) and reported by "
             "the crawler (%r)" % (name, m and m.group(0), got)):
        p, r = int(m.group(1)), int(m.group(2))
        check(p <= got <= bound and p + r <= bound,
              "%s: pages requested again in the log (%d) <= "
              "refetched_after_restart (%d) <= concurrency x kills (%d); "
              "with robots.txt (%d) <= %d" % (name, p, got, bound, r, bound))
    data = read_bytes(out) or b""
    lines = data.split(b"\n")
    check(data.endswith(b"\n") and b"" not in lines[:-1],
          "%s: --out ends with a newline, no empty or torn line" % name)
    check(s.get("pages") == data.count(b"\n"),
          "%s: pages in --stats-json (%r) = records in --out (%d)"
          % (name, s.get("pages"), data.count(b"\n")))
    check(s.get("outcome") == FINISHED and
          s.get("exit_status") == FINISHED_RC,
          "%s: outcome %s, exit status %d (%r, %r)"
          % (name, FINISHED, FINISHED_RC, s.get("outcome"),
             s.get("exit_status")))
    return s


# -- the WARC of a resumed crawl ---------------------------------------------

def read_warc(path):
    """The records of a .warc.gz: (offset of its gzip member, header
    fields, block), each member inflated whole and each record's
    Content-Length and digests checked; a torn member or a bad record
    fails the one check and ends the list there."""
    data = read_bytes(path) or b""
    recs, pos = [], 0

    def b32sha1(b):
        return "sha1:" + base64.b32encode(hashlib.sha1(b).digest()).decode()

    while pos < len(data):
        d, parts, p = zlib.decompressobj(31), [], pos
        while not d.eof and p < len(data):
            parts.append(d.decompress(data[p:p + 65536]))
            p += 65536
        if not d.eof:
            break
        end = min(p, len(data)) - len(d.unused_data)
        rec = b"".join(parts)
        head, sep, rest = rec.partition(b"\r\n\r\n")
        lines = head.decode("utf-8", "replace").split("\r\n")
        fields = dict(ln.split(": ", 1) for ln in lines[1:] if ": " in ln)
        n = int(fields.get("Content-Length", "-1"))
        block = rest[:n]
        ok = lines[0] == "WARC/1.1" and sep and len(rest) == n + 4 and \
            rest[n:] == b"\r\n\r\n" and \
            fields.get("WARC-Block-Digest") == b32sha1(block)
        # A revisit record's block is the HTTP head alone: its payload
        # digest is its original's (check_warc compares them).
        if ok and "WARC-Payload-Digest" in fields and \
                fields.get("WARC-Type") != "revisit":
            ok = fields["WARC-Payload-Digest"] == b32sha1(
                block.partition(b"\r\n\r\n")[2])
        if not ok:
            break
        recs.append((pos, fields, block))
        pos = end
    check(pos == len(data) and recs,
          "warc: %s: %d records, each a whole gzip member with its length, "
          "framing and digests right (stopped at %d of %d bytes)"
          % (path, len(recs), pos, len(data)))
    return recs


def check_warc(name, out, warc):
    """The WARC of a crawl that was killed and resumed against its --out
    (see kill9 above)."""
    recs = read_warc(warc)
    types = [f.get("WARC-Type") for _, f, _ in recs]
    check(types[:1] == ["warcinfo"] and "warcinfo" not in types[1:],
          "%s: one warcinfo, first (%d records)" % (name, len(recs)))
    by_id = {f.get("WARC-Record-ID"): f for _, f, _ in recs}
    unpaired = [f.get("WARC-Record-ID") for _, f, _ in recs[1:]
                if by_id.get(f.get("WARC-Concurrent-To"), {}).get(
                    "WARC-Concurrent-To") != f.get("WARC-Record-ID")]
    check(not unpaired and types.count("request") ==
          types.count("response") + types.count("revisit"),
          "%s: requests and responses (or revisits) pair both ways (%d "
          "unpaired)" % (name, len(unpaired)))
    # Issue 24: a revisit names a response record of this file with the
    # same payload digest, URI and date (the original survived the kills).
    orphans = [f.get("WARC-Target-URI") for _, f, _ in recs
               if f.get("WARC-Type") == "revisit" and not (
                   by_id.get(f.get("WARC-Refers-To"), {}).get("WARC-Type") ==
                   "response" and
                   by_id[f["WARC-Refers-To"]].get("WARC-Payload-Digest") ==
                   f.get("WARC-Payload-Digest") and
                   by_id[f["WARC-Refers-To"]].get("WARC-Target-URI") ==
                   f.get("WARC-Refers-To-Target-URI") and
                   by_id[f["WARC-Refers-To"]].get("WARC-Date") ==
                   f.get("WARC-Refers-To-Date"))]
    check(not orphans,
          "%s: %d revisit records, each naming a response of the file with "
          "its payload digest, URI and date (%d not: %s)"
          % (name, types.count("revisit"), len(orphans), orphans[:3]))
    at = {pos: f for pos, f, _ in recs}
    responses = collections.Counter(
        f.get("WARC-Target-URI") for _, f, _ in recs
        if f.get("WARC-Type") in ("response", "revisit"))
    bad, records = [], 0
    with open(out, "rb") as f:
        for line in f:
            r = json.loads(line)
            if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ",
                                r.get("fetched_at", "")):
                bad.append(("fetched_at", r["url"], r.get("fetched_at")))
            if "warc_file" not in r:
                if "error" not in r:
                    bad.append(("no record", r["url"]))
                continue
            records += 1
            rec = at.get(r["warc_offset"], {})
            want = "revisit" if "duplicate_of" in r else "response"
            if r["warc_file"] != warc or \
                    rec.get("WARC-Type") != want or \
                    rec.get("WARC-Refers-To-Target-URI") != \
                    r.get("duplicate_of") or \
                    rec.get("WARC-Target-URI") != r["url"] or \
                    rec.get("WARC-Date") != r["fetched_at"] or \
                    not 1 <= responses[r["url"]] <= 1 + r.get("retries", 0):
                bad.append((r["url"], r["warc_offset"],
                            responses[r["url"]]))
    check(records > 0 and not bad,
          "%s: every --out record has a fetched_at; each of the %d with a "
          "warc_file has one response record (one more per retry), its "
          "own at its warc_offset, its WARC-Date the fetched_at (%d "
          "wrong: %s)"
          % (name, records, len(bad), bad[:3]))


# -- kill -9 and resume ------------------------------------------------------

def wait_trigger(run, what, rng, lines, state, step):
    """Wait for the moment to kill run.  Returns what came: the trigger
    what, "progress" (the run added step records first), "stalled" (10 s
    without either) or "exit" (the run ended by itself)."""
    t0 = time.monotonic()
    base = lines.count()
    until = t0 + (rng.uniform(0.0, 0.1) if what == "start" else
                  rng.uniform(0.02, 0.3))
    goal = rng.randint(1, step)
    commits = rng.randint(1, 3)
    wal = os.path.join(state, "crawl.db-wal")
    snap = os.path.join(state, "bloom.snap")
    last_wal, last_snap, seen = file_sig(wal), file_sig(snap), 0
    while True:
        if run.poll() is not None:
            return "exit"
        now = time.monotonic()
        n = lines.count()
        base = min(base, n)  # cut back on resume
        if what in ("start", "delay") and now >= until:
            return what
        if what == "out" and n - base >= goal:
            return what
        if what == "wal":
            sig = file_sig(wal)
            if sig != last_wal and sig is not None:
                seen += 1
                if seen >= commits:
                    return what
            last_wal = sig
        if what == "snap":
            sig = file_sig(snap)
            try:
                names = os.listdir(state)
            except OSError:
                names = []
            if (sig is not None and sig != last_snap) or any(
                    x.startswith("bloom.snap.tmp.") for x in names):
                return what
        if n - base >= step:
            return "progress"
        if now - t0 > 10:
            return "stalled"
        time.sleep(0.0005)


def kill9(sitedir, work, manifest):
    d = os.path.join(work, "kill9")
    os.makedirs(d)
    state, out, stats, log = (os.path.join(d, n) for n in (
        "state", "out.jsonl", "stats.json", "access.log"))
    rng = random.Random(SEED)
    server = Server(sitedir, log)
    warc = os.path.join(d, "crawl.warc.gz")
    cmd = crawl(state, out, stats, server, warc=warc)
    required = manifest["scopes"]["domain"]["pages"]
    step = max(2, required // (2 * KILLS))
    rest = ["start", "delay", "delay", "out", "out", "out", "wal", "wal",
            "wal", "snap", "snap"]
    rng.shuffle(rest)
    plan = ["start"] + rest
    hits = collections.Counter()
    lines = Lines(out)
    kills, runs, last = 0, 0, None
    t0 = time.monotonic()
    while runs < KILLS + 5:
        runs += 1
        r = Run(cmd, d, "run%d" % runs)
        if kills < len(plan):
            hit = wait_trigger(r, plan[kills], rng, lines, state, step)
            if hit != "exit":
                r.kill()
                kills += 1
                hits[hit] += 1
                continue
        last = r
        r.wait()
        break
    elapsed = time.monotonic() - t0
    final = os.path.join(d, "stats-final.json")
    if os.path.exists(stats):
        shutil.copy(stats, final)
    s = read_stats(final)
    print("kill9: %d runs, %d kills in %.1f s; kill moments: %s (planned %s)"
          % (runs, kills, elapsed, dict(hits), dict(collections.Counter(
              plan))))
    ok = check(last is not None and last.rc == FINISHED_RC and last.sane(),
               "kill9: after %d kills, run %d exits %d (%s)"
               % (kills, runs, FINISHED_RC, last and last.rc))
    if not ok and last is not None:
        print(last.tail())
    check(kills >= 10, "kill9: at least 10 kills landed before the end (%d)"
          % kills)
    if ok:
        check_warc("kill9", out, warc)
        t0, out_bytes = time.time(), read_bytes(out)
        warc_bytes = read_bytes(warc)
        again = Run([a for a in cmd if a != "--quiet"], d, "finished")
        again.wait()
        m = re.search(r"refetched after restart\s+(\d+)", again.stdout())
        s2 = read_stats(stats)
        check(again.rc == FINISHED_RC and again.sane() and
              s2.get("outcome") == FINISHED,
              "kill9: the finished state run again exits %d, outcome "
              "%s (%s, %r)" % (FINISHED_RC, FINISHED, again.rc,
                              s2.get("outcome")))
        new = server.requests_since(t0)
        check(not new and read_bytes(out) == out_bytes,
              "kill9: ... and requests nothing, --out unchanged (%r)"
              % [r["path"] for r in new])
        check(read_bytes(warc) == warc_bytes, "kill9: ... --warc unchanged")
        check(s2.get("pages") == s.get("pages") and
              s2.get("runs") == s.get("runs", -1) + 1,
              "kill9: ... pages unchanged (%r), runs one more (%r -> %r)"
              % (s2.get("pages"), s.get("runs"), s2.get("runs")))
        check(m is not None and int(m.group(1)) ==
              s.get("refetched_after_restart"),
              "kill9: ... its report says refetched after restart %r (%s)"
              % (s.get("refetched_after_restart"), m and m.group(0)))
        # The rate is this run's pages over this run's time: a run that
        # fetched nothing reports 0 pages/s, not the total over its time.
        rate = re.search(r"pages \(([0-9.]+) pages/s\)", again.stdout())
        this_run = re.search(r"this run: (\d+) pages", again.stdout())
        check(rate is not None and float(rate.group(1)) == 0.0 and
              this_run is not None and this_run.group(1) == "0",
              "kill9: ... its report says 0 pages this run, 0 pages/s (%s; %s)"
              % (rate and rate.group(0), this_run and this_run.group(0)))
    server.stop()
    s = judge_resumed("kill9", sitedir, log, out, final, kills)
    check(isinstance(s.get("runs"), int) and 2 <= s["runs"] <= runs,
          "kill9: runs in --stats-json (%r) counts the runs that opened "
          "the state (2 <= runs <= %d)" % (s.get("runs"), runs))


# -- SIGINT / SIGTERM and the lock -------------------------------------------

def clean_stop(sitedir, work, manifest, sig, want):
    name = signal.Signals(sig).name.lower()
    d = os.path.join(work, name)
    os.makedirs(d)
    state, out, stats, log = (os.path.join(d, n) for n in (
        "state", "out.jsonl", "stats.json", "access.log"))
    server = Server(sitedir, log)
    required = manifest["scopes"]["domain"]["pages"]
    lock_test = sig == signal.SIGTERM
    first = crawl(state, out, stats, server,
                  delay="100" if lock_test else "0")
    r = Run(first, d, "first")
    lines = Lines(out)
    goal = 10 if lock_test else required // 3
    t0 = time.monotonic()
    while r.poll() is None and lines.count() < goal and \
            time.monotonic() - t0 < RUN_TIMEOUT:
        time.sleep(0.002)
    if lock_test and r.poll() is None:
        second = Run(first, d, "second")
        second.wait(60)
        check(second.rc == 1 and second.sane() and
              "in use by another crawl (pid %d)" % r.proc.pid in
              second.stderr(),
              "%s: a second crawl on the same DIR is refused: exit 1, "
              "'in use by another crawl (pid %d)' (%s, %r)"
              % (name, r.proc.pid, second.rc, second.tail()))
        check(r.poll() is None, "%s: ... and the first one runs on" % name)
    running = r.poll() is None
    r.kill(sig)
    s = read_stats(stats)
    if not check(running and r.rc == want and r.sane() and
                 s.get("outcome") == "interrupted" and
                 s.get("exit_status") == want,
                 "%s: stopped after %d records: exit %d, outcome "
                 "interrupted (%s, %r)" % (name, lines.count(), want, r.rc,
                                           s.get("outcome"))):
        print(r.tail())
    again = Run(crawl(state, out, stats, server), d, "resume")
    again.wait()
    if not check(again.rc == FINISHED_RC and again.sane(),
                 "%s: the same command resumes and exits %d (%s)"
                 % (name, FINISHED_RC, again.rc)):
        print(again.tail())
    if sig == signal.SIGINT and again.rc == FINISHED_RC:
        t0, out_bytes = time.time(), read_bytes(out)
        third = Run(crawl(state, out, stats, server), d, "finished")
        third.wait()
        s3 = read_stats(stats)
        check(third.rc == FINISHED_RC and third.sane() and
              s3.get("outcome") == FINISHED and s3.get("runs") == 3,
              "%s: the finished state run again exits %d, outcome %s, "
              "runs 3 (%s, %r, %r)" % (name, FINISHED_RC, FINISHED, third.rc,
                                       s3.get("outcome"), s3.get("runs")))
        new = server.requests_since(t0)
        check(not new and read_bytes(out) == out_bytes,
              "%s: ... requests nothing, --out unchanged (%r)"
              % (name, [r["path"] for r in new]))
    server.stop()
    rc, report = run_checker(sitedir, log, out)
    print(report)
    check(rc == 0, "%s: check_crawl passes without tolerance: no request "
          "twice" % name)
    s = read_stats(stats)
    check(s.get("refetched_after_restart") == 0 and
          s.get("pages") == count_lines(out) and
          s.get("outcome") == FINISHED,
          "%s: refetched_after_restart 0 (%r), pages %r = records %d, "
          "outcome %s" % (name, s.get("refetched_after_restart"),
                          s.get("pages"), count_lines(out), FINISHED))
    if sig == signal.SIGTERM:
        check(s.get("runs") == 2, "%s: runs 2 (%r)" % (name, s.get("runs")))
    db = os.path.join(state, "crawl.db")
    return os.path.getsize(db) if os.path.exists(db) else 0


# -- damage, foreign directories, changed configuration ----------------------

def snapshot(path, skip=()):
    """A directory's entries with their bytes (entries in skip: by name
    only), or a file's bytes."""
    if not os.path.isdir(path):
        return read_bytes(path)
    return {n: None if n in skip else read_bytes(os.path.join(path, n))
            for n in sorted(os.listdir(path))}


def flip(path, offset):
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))


def truncate(path, size):
    os.truncate(path, size)


def table_root_offset(db, rng):
    """The offset of the b-tree page type byte of one table's root page
    (seeded choice), read from a copy opened immutable: no write."""
    with open(db, "rb") as f:
        head = f.read(100)
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    c = sqlite3.connect("file:%s?immutable=1" % db, uri=True)
    try:
        roots = sorted(r for (r,) in c.execute(
            "SELECT rootpage FROM sqlite_schema WHERE type = 'table' "
            "AND rootpage > 1"))
    finally:
        c.close()
    root = rng.choice(roots or [1])  # page 1 (schema): byte 100
    return max(100, (root - 1) * page), root


def refusals(sitedir, work):
    d = os.path.join(work, "refuse")
    os.makedirs(d)
    base, out, stats, log = (os.path.join(d, n) for n in (
        "state", "out.jsonl", "stats.json", "access.log"))
    rng = random.Random(SEED + 1)
    server = Server(sitedir, log)
    r = Run(crawl(base, out, stats, server, max_pages="30"), d, "base")
    r.wait()
    s = read_stats(stats)
    if not check(r.rc == 0 and r.sane() and s.get("outcome") == "limit" and
                 s.get("pages") == 30,
                 "refuse: a state stopped by --max-pages 30: exit 0, outcome "
                 "limit, 30 pages (%s, %r, %r)" % (r.rc, s.get("outcome"),
                                                   s.get("pages"))):
        print(r.tail())
        server.stop()
        return
    names = set(os.listdir(base))
    check({"crawl.db", "bloom.snap", "lock"} <= names and
          os.stat(base).st_mode & 0o777 == 0o700,
          "refuse: DIR (mode %o) holds crawl.db, bloom.snap, lock: %s"
          % (os.stat(base).st_mode & 0o777, sorted(names)))

    def attempt(label, state, want_rc, want_msgs,
                skip=("lock", "crawl.db-shm"), pristine=None, **over):
        """Run on state (a copy of base unless pristine); expect want_rc,
        every string of want_msgs in stderr, state and --out untouched,
        nothing requested."""
        o2, st2 = os.path.join(d, label + ".out"), os.path.join(
            d, label + ".stats")
        shutil.copy(out, o2)
        before, out_before = snapshot(state, skip), read_bytes(o2)
        t0 = time.time()
        r = Run(crawl(state, o2, st2, server, max_pages="30", **over), d,
                label)
        r.wait(60)
        err = r.stderr()
        ok = check(r.rc == want_rc and r.sane() and
                   all(m in err for m in want_msgs),
                   "refuse: %s: exit %d, message with %s, no crash (%s: %r)"
                   % (label, want_rc, want_msgs, r.rc, err.strip()[-300:]))
        if want_rc != 0:
            check(snapshot(state, skip) == before and
                  read_bytes(o2) == out_before,
                  "refuse: %s: %s and --out untouched%s" % (
                      label, "DIR" if os.path.isdir(state) else "the file",
                      " (but the content of %s)" % ", ".join(skip)
                      if skip else ""))
        new = server.requests_since(t0, 0.1)
        check(not new, "refuse: %s: nothing requested (%r)"
              % (label, [r["path"] for r in new]))
        return ok, read_stats(st2)

    def copy(label, damage=None, src=base):
        dst = os.path.join(d, label)
        shutil.copytree(src, dst)
        if damage:
            damage(dst)
        return dst

    def wal_into_db(state):
        """Copy state's WAL into its crawl.db and remove it, as a
        checkpoint at the last close would (a read first: SQLite opens
        the WAL at a connection's first read)."""
        c = sqlite3.connect(os.path.join(state, "crawl.db"))
        c.execute("SELECT count(*) FROM sqlite_schema").fetchall()
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        c.close()

    ok, s = attempt("copy", copy("copy"), 0, [])
    check(ok and s.get("outcome") == "limit" and s.get("pages") == 30,
          "refuse: an undamaged copy of the state is accepted, --max-pages "
          "30 already reached: outcome limit, pages 30 (%r, %r)"
          % (s.get("outcome"), s.get("pages")))
    damages = []
    whole = copy("checkpointed")
    wal_into_db(whole)
    if "crawl.db" in names:
        db_size = os.path.getsize(os.path.join(whole, "crawl.db"))
        offset, root = table_root_offset(os.path.join(whole, "crawl.db"),
                                         rng)
        damages += [
            ("db-half", "crawl.db", lambda p: truncate(p, db_size // 2)),
            ("db-empty", "crawl.db", lambda p: truncate(p, 0)),
            ("db-magic", "crawl.db", lambda p: flip(p, 0)),
            ("db-page1", "crawl.db", lambda p: flip(p, 100)),
            ("db-root%d" % root, "crawl.db", lambda p: flip(p, offset))]
    if "bloom.snap" in names:
        snap_size = os.path.getsize(os.path.join(base, "bloom.snap"))
        damages += [
            ("snap-half", "bloom.snap",
             lambda p: truncate(p, snap_size // 2)),
            ("snap-bit", "bloom.snap",
             lambda p: flip(p, rng.randrange(64, snap_size - 8))),
            ("snap-sum", "bloom.snap", lambda p: flip(p, snap_size - 1))]
    for label, name, damage in damages:
        state = copy(label, lambda dst: damage(os.path.join(dst, name)),
                     whole if name == "crawl.db" else base)
        attempt(label, state, 1, ["crawl:", state, name])

    other = os.path.join(d, "not-a-state")
    os.makedirs(other)
    with open(os.path.join(other, "notes.txt"), "w") as f:
        f.write("my notes, not a crawl\n")
    attempt("other-files", other, 1, ["crawl:", other], skip=())
    foreign = os.path.join(d, "foreign-db")
    os.makedirs(foreign)
    c = sqlite3.connect(os.path.join(foreign, "crawl.db"))
    c.execute("CREATE TABLE t (x TEXT)")
    c.execute("INSERT INTO t VALUES ('someone else''s data')")
    c.commit()
    c.close()
    attempt("foreign-db", foreign, 1, ["crawl:", foreign], skip=())
    plain = os.path.join(d, "plain-file")
    with open(plain, "w") as f:
        f.write("a file, not a directory\n")
    attempt("plain-file", plain, 1, ["crawl:", plain], skip=())

    for opt, over, msgs in (
            ("scope", {"scope": "host"}, ["was domain", "now host"]),
            ("expect", {"expect": "5000"}, []),
            ("user-agent", {"user_agent": "otherbot/1.0 (+test)"}, []),
            ("no-robots", {"no_robots": True}, []),
            ("sitemaps", {"no_sitemaps": True}, ["was yes", "now no"]),
            ("exclude", {"exclude": "*/calendar/*"}, []),
            ("warc", {"warc": os.path.join(d, "x.warc.gz")}, []),
            ("warc-max-size", {"warc_max_size": "1M"},
             ["was 0", "now 1048576"])):
        state = copy("config-" + opt)
        attempt("config-" + opt, state, 2,
                ["--%s differs from the crawl in" % opt, state] + msgs,
                **over)

    r = Run(crawl(base, out, stats, server, max_pages="60",
                  concurrency="4"), d, "continue")
    r.wait()
    server.stop()
    s = read_stats(stats)
    pages = sample_site.page_requests(log, SITEMAP_TARGETS)
    check(r.rc == 0 and r.sane() and s.get("outcome") == "limit" and
          s.get("pages") == 60 == count_lines(out) and s.get("runs") == 2,
          "refuse: resumed with --max-pages 60 --concurrency 4: exit 0, "
          "outcome limit, pages 60 = records (%s, %r, %r, %d), runs 2 (%r)"
          % (r.rc, s.get("outcome"), s.get("pages"), count_lines(out),
             s.get("runs")))
    check(len(pages) == len(set(pages)) == 60,
          "refuse: 60 pages requested over both runs, none twice (%d, %d "
          "distinct)" % (len(pages), len(set(pages))))


# -- write errors ------------------------------------------------------------

def write_error(sitedir, work, name, limit=None, tmpfs=False):
    """A crawl that meets a write error, then resumes.  limit: bytes of
    RLIMIT_FSIZE; tmpfs: DIR on a 2 MiB tmpfs (the caller checked that
    mount works)."""
    d = os.path.join(work, name)
    os.makedirs(d)
    out, stats, log = (os.path.join(d, n) for n in (
        "out.jsonl", "stats.json", "access.log"))
    state = os.path.join(d, "state")
    mnt = None
    if tmpfs:
        mnt = os.path.join(d, "mnt")
        os.makedirs(mnt)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs",
                        mnt], check=True, capture_output=True)
        state = os.path.join(mnt, "state")
    server = Server(sitedir, log)
    try:
        over = {} if tmpfs else {"expect": "20000"}
        cmd = crawl(state, out, stats, server, **over)

        def limited():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        r = Run(cmd, d, "limited", preexec_fn=limited if limit else None)
        r.wait()
        err = r.stderr()
        # The state's file or --out hits the limit first (issue 20: "crawl:
        # writing OUT: File too large", the errno's text).
        want = ["crawl: --state"] if tmpfs else [
            "crawl: --state", "crawl: writing %s: %s" % (out, os.strerror(
                errno.EFBIG))]
        if not check(r.rc == 1 and r.sane() and any(w in err for w in want),
                     "%s: a write error stops the crawl: exit 1, message "
                     "%s (%s: %r)" % (name, " or ".join(want), r.rc,
                                      err.strip()[-300:])):
            print(r.tail())
        if tmpfs:
            subprocess.run(["mount", "-o", "remount,size=64m", mnt],
                           check=True, capture_output=True)
        again = Run(cmd, d, "resume")
        again.wait()
        if not check(again.rc == FINISHED_RC and again.sane(),
                     "%s: resumed with room to write: exit %d (%s)"
                     % (name, FINISHED_RC, again.rc)):
            print(again.tail())
    finally:
        server.stop()
        if mnt:
            subprocess.run(["umount", mnt], capture_output=True)
    judge_resumed(name, sitedir, log, out, stats, 1)


def tmpfs_works(work):
    """Root, and a tmpfs can be mounted here (not in every container)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    mnt = os.path.join(work, "probe")
    os.makedirs(mnt)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs",
                         mnt], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", mnt], capture_output=True)
    return ok


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    helptext = subprocess.run([CRAWL, "--help"], capture_output=True,
                              text=True).stdout
    if not check("--state" in helptext,
                 "crawl --help documents --state DIR (issue 11)"):
        return summary() or 1
    print("e2e_state: seed %d (again: %s %s %d)" % (SEED, sys.argv[0], BIN,
                                                    SEED))
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bc_state.") as work:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", str(PAGES)], check=True,
                       capture_output=True)
        with open(os.path.join(sitedir, "manifest.json")) as f:
            manifest = json.load(f)
        SITEMAP_TARGETS.update(sample_site.sitemap_targets(
            os.path.join(sitedir, "manifest.json")))
        parts = Parts()
        part = parts.run

        part("kill9", kill9, sitedir, work, manifest)
        db_size = part("sigint", clean_stop, sitedir, work, manifest,
                       signal.SIGINT, 130)
        part("sigterm", clean_stop, sitedir, work, manifest, signal.SIGTERM,
             143)
        part("refuse", refusals, sitedir, work)
        part("fsize", write_error, sitedir, work, "fsize",
             max(64 << 10, (db_size or 0) // 2))
        if tmpfs_works(work):
            part("tmpfs", write_error, sitedir, work, "tmpfs", None, True)
        else:
            print("skip: tmpfs: not root, or mount is not permitted here "
                  "(the file-size limit covers write errors)")
    print("times: %s; total %.1f s" % (", ".join(parts.times),
                                       time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
