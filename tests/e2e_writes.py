#!/usr/bin/env python3
"""End-to-end: a write error stops the crawl, and the resume loses nothing
(issue 20, section 2).

    python3 tests/e2e_writes.py BUILD_EXAMPLES_DIR

The sample site (examples/site, 300 pages) is served on a free port of
127.0.0.1 with an access log (tests/sample_site.py) and crawled with the
options of tests/e2e_state.py (--delay 0, --concurrency 8, --scope domain,
--max-depth 8).  Each file the crawl writes is put, in its turn, on a
small tmpfs that fills up (mounted by the test, unmounted in a finally;
root only: without a permitted mount the test is skipped, exit 77), or
under a file-size limit (RLIMIT_FSIZE with SIGXFSZ ignored: EFBIG):

  out       --out on a 24 KiB tmpfs, the state elsewhere: exit 1 with
            "crawl: writing OUT: No space left on device" while the crawl
            is still going (before the site is done), --out holds whole
            records only; the tmpfs grown, the same command: exit 0, the
            checker passes strictly on --out (every reachable page once,
            no record lost or torn) with --refetch-tolerance concurrency
            (the pages in flight at the failure are fetched again), pages
            in --stats-json = records in --out.
  out-fsize --out under RLIMIT_FSIZE 20,000 without a state: exit 1 with
            "crawl: writing OUT: File too large", --out whole records only
            and at most the limit.
  log       --log on a 16 KiB tmpfs: exit 1, "crawl: writing LOG: No space
            left on device", the log whole lines only; grown: the resume
            completes as for out.
  stats     --stats-json on a full tmpfs: the crawl completes, then exit 1
            with "crawl: writing STATS: No space left on device"; room
            made: the finished state run again writes it (exit 0, outcome
            complete), --out checked strictly without tolerance.
  warc      --warc FILE.warc.gz on a 96 KiB tmpfs: exit 1, "crawl: --warc
            FILE: writing failed: No space left on device"; grown: the
            resume completes as for out, and every gzip member of the WARC
            is whole, one response (or revisit) record per --out record
            at its warc_offset.
  state     --state DIR on a tmpfs that fills up (a Bloom filter small
            enough that crawl.db and its WAL fill it): exit 1 with "crawl:
            --state DIR: ... No space left on device"; the tmpfs then grown
            to what DIR uses plus the headroom docs/DESIGN.md section 10
            says a resume needs (one more bloom.snap, the WAL's bound, and
            what the rest of the crawl adds to crawl.db, measured by a
            reference crawl of the same site) and no more: the same command
            completes, checked as for out.

Before issue 20 a failed --out write did not stop the crawl (every page
was committed without its record: the resume lost them), the messages had
no errno text, and the WAL kept a high-water mark that a resume could not
find room for.  Every process is waited for with a time limit.

"Finished" above is exit 0, outcome complete; with the retries of
transient faults (issue 20 section 1: crawl --help lists exit status 4)
the site's /error/500 and /slow are given up after their retries and a
finished crawl is exit 4, outcome incomplete: the test reads which from
crawl --help (and then retries after 100 ms, hosts never paused, to stay
lean), and counts a page's failed tries' response records in the WARC.
"""
import json
import os
import re
import resource
import shutil
import signal
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
CRAWL = os.path.join(BIN, "crawl")
PAGES = 300
SLOW_SECONDS = 3     # serve.py's /slow; the crawl's timeout is below it
CONC = 8
CHECK = ["--scope", "domain", "--max-depth", "8"]
SKIP = 77
ENOSPC = os.strerror(28)   # "No space left on device"
EFBIG = os.strerror(27)    # "File too large"

# The headroom a state needs to resume after a full disk, besides what
# the rest of the crawl adds to crawl.db: docs/DESIGN.md section 10.  One
# more bloom.snap (written beside the old one, then renamed) and the WAL's
# bound W = (1,024 + T) x (8,192 + 24) + 32 with T, the pages of one
# commit, at most 64 here (a turn of the crawl loop: the few pages it
# completed, their links, the cursors, the counters).
WAL_BOUND = (1024 + 64) * (8192 + 24) + 32

# How a crawl of the site that runs to its end exits (set by main() from
# crawl --help): 0 and complete, or with the retries of transient faults
# 4 and incomplete; and the options that keep those retries short.
FINISHED, FINISHED_RC = "complete", 0
RETRY_OPTIONS = {}


def options(**over):
    o = {"quiet": True, "delay": "0", "concurrency": str(CONC),
         "per-host": "4", "timeout": "1500", "max-body": "1000000",
         "scope": "domain", "max-depth": "8"}
    o.update(RETRY_OPTIONS)
    o.update({k.replace("_", "-"): v for k, v in over.items()})
    args = []
    for k, v in o.items():
        if v is True:
            args.append("--" + k)
        elif v is not None:
            args += ["--" + k, v]
    return args


class Server(sample_site.Server):
    def __init__(self, sitedir, log):
        super().__init__(sitedir, log, ["--slow-seconds", str(SLOW_SECONDS),
                                        "--huge-bytes", "2M"],
                         SLOW_SECONDS + 5)


class Tmpfs:
    """A tmpfs of size bytes at path; grow() remounts it larger; always
    unmounted by close()."""

    def __init__(self, path, size):
        os.makedirs(path)
        self.path = path
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % size,
                        "tmpfs", path], check=True, capture_output=True)

    def grow(self, size):
        subprocess.run(["mount", "-o", "remount,size=%d" % size, self.path],
                       check=True, capture_output=True)

    def used(self):
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def close(self):
        subprocess.run(["umount", self.path], capture_output=True)


def mount_works(work):
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    probe = os.path.join(work, "probe")
    os.makedirs(probe)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                         probe], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", probe], capture_output=True)
    return ok


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def whole_lines(name, path, what):
    """Every line of path ends with a newline and is JSON (what: json) or
    a log line (TIME STATUS BYTES MS URL ...)."""
    data = read_bytes(path)
    lines = data.split(b"\n")
    ok = data == b"" or data.endswith(b"\n")
    for line in lines[:-1]:
        if what == "json":
            try:
                ok = ok and isinstance(json.loads(line), dict)
            except ValueError:
                ok = False
        else:
            ok = ok and len(line.split(b" ")) >= 5
    check(ok, "%s: %s holds whole %s lines only (%d bytes, %d lines)"
          % (name, os.path.basename(path), what, len(data), len(lines) - 1))
    return len(lines) - 1


def run_checker(sitedir, log, out, tolerance):
    extra = ["--refetch-tolerance", str(tolerance)] if tolerance else []
    rc, report = sample_site.run_checker(sitedir, log, out,
                                         [*CHECK, *extra], RUN_TIMEOUT)
    return rc, report


def judge(name, sitedir, log, out, stats, tolerance):
    """The resumed (or finished) crawl: the checker strict on --out, the
    counts agree, outcome complete."""
    rc, report = run_checker(sitedir, log, out, tolerance)
    if not check(rc == 0, "%s: check_crawl passes (strict on --out; "
                 "--refetch-tolerance %d)" % (name, tolerance)):
        print(report)
    n = whole_lines(name, out, "json")
    s = read_stats(stats)
    check(s.get("pages") == n,
          "%s: pages in --stats-json (%r) = records in --out (%d)"
          % (name, s.get("pages"), n))
    check(s.get("outcome") == FINISHED and
          s.get("exit_status") == FINISHED_RC,
          "%s: outcome %s, exit status %d (%r, %r)"
          % (name, FINISHED, FINISHED_RC, s.get("outcome"),
             s.get("exit_status")))


def failed_run(name, cmd, d, want, preexec_fn=None):
    """A crawl that must stop with exit 1 and the message want."""
    r = Run(cmd, d, "failed", preexec_fn=preexec_fn)
    r.wait()
    err = r.stderr()
    if not check(r.rc == 1 and r.sane() and want in err,
                 "%s: exit 1 with %r (%s: %r)"
                 % (name, want, r.rc, err.strip()[-300:])):
        print(r.tail())
    return r


def resumed_run(name, cmd, d):
    r = Run(cmd, d, "resume")
    r.wait()
    if not check(r.rc == FINISHED_RC and r.sane(),
                 "%s: the same command with room: exit %d (%s)"
                 % (name, FINISHED_RC, r.rc)):
        print(r.tail())


def part_dir(work, name):
    d = os.path.join(work, name)
    os.makedirs(d)
    return d


def files(d):
    return (os.path.join(d, n) for n in ("out.jsonl", "stats.json",
                                         "access.log", "state"))


def out_on_tmpfs(sitedir, work, total):
    name = "out"
    d = part_dir(work, name)
    _, stats, log, state = files(d)
    fs = Tmpfs(os.path.join(d, "mnt"), 24 << 10)
    out = os.path.join(fs.path, "out.jsonl")
    server = Server(sitedir, log)
    try:
        cmd = [CRAWL, "--state", state, "--out", out, "--stats-json", stats,
               *options(), *server.args]
        failed_run(name, cmd, d, "crawl: writing %s: %s" % (out, ENOSPC))
        n = whole_lines(name, out, "json")
        check(n < total, "%s: stopped before the end (%d of %d records)"
              % (name, n, total))
        fs.grow(4 << 20)
        resumed_run(name, cmd, d)
        server.stop()
        judge(name, sitedir, log, out, stats, CONC)
    finally:
        server.stop()
        fs.close()


def out_fsize(sitedir, work, total):
    name = "out-fsize"
    d = part_dir(work, name)
    out, stats, log, _ = files(d)
    limit = 20000
    server = Server(sitedir, log)
    try:
        cmd = [CRAWL, "--out", out, "--stats-json", stats, *options(),
               *server.args]

        def limited():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        failed_run(name, cmd, d, "crawl: writing %s: %s" % (out, EFBIG),
                   limited)
        n = whole_lines(name, out, "json")
        size = os.path.getsize(out)
        check(0 < n < total and size <= limit,
              "%s: %d whole records, %d bytes <= the limit %d"
              % (name, n, size, limit))
    finally:
        server.stop()


def log_on_tmpfs(sitedir, work, total):
    name = "log"
    d = part_dir(work, name)
    out, stats, log, state = files(d)
    fs = Tmpfs(os.path.join(d, "mnt"), 16 << 10)
    flog = os.path.join(fs.path, "fetch.log")
    server = Server(sitedir, log)
    try:
        cmd = [CRAWL, "--state", state, "--out", out, "--stats-json", stats,
               "--log", flog, *options(), *server.args]
        failed_run(name, cmd, d, "crawl: writing %s: %s" % (flog, ENOSPC))
        whole_lines(name, flog, "log")
        n = count_lines(out)
        check(n < total, "%s: stopped before the end (%d of %d records)"
              % (name, n, total))
        fs.grow(4 << 20)
        resumed_run(name, cmd, d)
        whole_lines(name, flog, "log")
        server.stop()
        judge(name, sitedir, log, out, stats, CONC)
    finally:
        server.stop()
        fs.close()


def stats_on_tmpfs(sitedir, work, total):
    name = "stats"
    d = part_dir(work, name)
    out, _, log, state = files(d)
    fs = Tmpfs(os.path.join(d, "mnt"), 64 << 10)
    stats = os.path.join(fs.path, "stats.json")
    filler = os.path.join(fs.path, "filler")
    server = None
    try:
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:   # fill the tmpfs to its last byte
            while os.write(fd, b"x" * 4096) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        server = Server(sitedir, log)
        cmd = [CRAWL, "--state", state, "--out", out, "--stats-json", stats,
               *options(), *server.args]
        failed_run(name, cmd, d, "crawl: writing %s: %s" % (stats, ENOSPC))
        check(count_lines(out) == total,
              "%s: the crawl itself completed (%d of %d records)"
              % (name, count_lines(out), total))
        os.unlink(filler)
        resumed_run(name, cmd, d)
        server.stop()
        judge(name, sitedir, log, out, stats, 0)
    finally:
        if server:
            server.stop()
        fs.close()


def gzip_members(data):
    """The WARC's gzip members, decompressed; None if one is torn."""
    members, pos = [], 0
    while pos < len(data):
        z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            body = z.decompress(data[pos:])
        except zlib.error:
            return None
        if not z.eof:
            return None
        members.append((pos, body))
        pos = len(data) - len(z.unused_data)
    return members


def check_warc(name, out, warc):
    members = gzip_members(read_bytes(warc))
    if not check(members is not None, "%s: every gzip member of the WARC is "
                 "whole (%d)" % (name, len(members or []))):
        return
    responses = {}
    for pos, body in members:
        head = body.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        fields = dict(line.split(": ", 1) for line in head.split("\r\n")[1:]
                      if ": " in line)
        length = int(fields.get("Content-Length", "-1"))
        block = body.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in body else b""
        if len(block) != length + 4 or not block.endswith(b"\r\n\r\n"):
            check(False, "%s: record at %d has its Content-Length" % (name,
                                                                       pos))
            return
        # A page whose payload an earlier page had is a revisit record
        # (issue 24): its response record here.
        if fields.get("WARC-Type") in ("response", "revisit"):
            responses.setdefault(fields["WARC-Target-URI"], []).append(pos)
    bad = []
    n = 0
    pages = set()
    with open(out) as f:
        for line in f:
            rec = json.loads(line)
            pages.add(rec["url"])
            if "warc_offset" not in rec:
                continue
            n += 1
            # Its own at its offset; one more for each failed try that
            # got a response (a 500 retried), when there are retries.
            at = responses.get(rec["url"], [])
            if rec["warc_offset"] not in at or \
                    len(at) > 1 + rec.get("retries", 0):
                bad.append(rec["url"])
    # Besides the pages: robots.txt and sitemaps, archived too.
    of_pages = sum(len(v) for k, v in responses.items() if k in pages)
    check(n > 0 and not bad and n <= of_pages,
          "%s: one response record per --out record, at its warc_offset "
          "(%d records, %d responses of pages; wrong: %s)"
          % (name, n, of_pages, bad[:3]))


def warc_on_tmpfs(sitedir, work, total):
    name = "warc"
    d = part_dir(work, name)
    out, stats, log, state = files(d)
    fs = Tmpfs(os.path.join(d, "mnt"), 96 << 10)
    warc = os.path.join(fs.path, "crawl.warc.gz")
    server = Server(sitedir, log)
    try:
        cmd = [CRAWL, "--state", state, "--out", out, "--stats-json", stats,
               "--warc", warc, *options(), *server.args]
        failed_run(name, cmd, d, "crawl: --warc %s: writing failed: %s"
                   % (warc, ENOSPC))
        n = count_lines(out)
        check(n < total, "%s: stopped before the end (%d of %d records)"
              % (name, n, total))
        fs.grow(16 << 20)
        resumed_run(name, cmd, d)
        server.stop()
        judge(name, sitedir, log, out, stats, CONC)
        check_warc(name, out, warc)
    finally:
        server.stop()
        fs.close()


def state_on_tmpfs(sitedir, work, total):
    name = "state"
    d = part_dir(work, name)
    out, stats, log, _ = files(d)
    # A filter of 12 KiB (--expect 10000): crawl.db and its WAL fill the
    # disk, not the snapshot.
    over = {"expect": "10000"}
    # The reference: the same crawl with room, for crawl.db's final size
    # and bloom.snap's.
    ref = os.path.join(d, "ref")
    server = Server(sitedir, os.path.join(d, "ref.log"))
    try:
        r = Run([CRAWL, "--state", ref, "--stats-json",
                 os.path.join(d, "ref.json"), *options(**over),
                 *server.args], d, "reference")
        r.wait()
        check(r.rc == FINISHED_RC, "%s: the reference crawl: exit %d (%s)"
              % (name, FINISHED_RC, r.rc))
    finally:
        server.stop()
    db_final = os.path.getsize(os.path.join(ref, "crawl.db"))
    snap = os.path.getsize(os.path.join(ref, "bloom.snap"))
    # Room for the state's creation and a part of the crawl: the WAL of
    # a few seconds of commits fills the rest.
    fs = Tmpfs(os.path.join(d, "mnt"), db_final + 2 * snap + (64 << 10))
    state = os.path.join(fs.path, "state")
    server = Server(sitedir, log)
    try:
        cmd = [CRAWL, "--state", state, "--out", out, "--stats-json", stats,
               *options(**over), *server.args]
        r = failed_run(name, cmd, d, "crawl: --state %s: " % state)
        check(ENOSPC in r.stderr(), "%s: the message has the errno text %r"
              % (name, ENOSPC))
        db_now = os.path.getsize(os.path.join(state, "crawl.db"))
        used = fs.used()
        headroom = snap + WAL_BOUND + max(0, db_final - db_now)
        size = (used + headroom + 4095) // 4096 * 4096
        print("%s: uses %d bytes, crawl.db %d of %d; headroom %d = "
              "bloom.snap %d + WAL bound %d + crawl.db to come %d; tmpfs "
              "grown to %d" % (name, used, db_now, db_final, headroom, snap,
                               WAL_BOUND, max(0, db_final - db_now), size))
        fs.grow(size)
        resumed_run(name, cmd, d)
        server.stop()
        judge(name, sitedir, log, out, stats, CONC)
    finally:
        server.stop()
        fs.close()


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    global FINISHED, FINISHED_RC
    helptext = subprocess.run([CRAWL, "--help"], capture_output=True,
                              text=True).stdout
    if re.search(r"^  4 .*given up", helptext, re.M):
        FINISHED, FINISHED_RC = "incomplete", 4
    if "--retry-delay" in helptext:
        RETRY_OPTIONS.update({"retry-delay": "100", "host-failures": "0"})
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bc_writes.") as work:
        if not mount_works(work):
            print("SKIP: e2e_writes needs root and a permitted mount "
                  "(tmpfs)")
            return SKIP
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", str(PAGES)], check=True,
                       capture_output=True)
        # Records of a whole crawl: from a crawl without a state.
        d = part_dir(work, "whole")
        out, stats, log, _ = files(d)
        server = Server(sitedir, log)
        try:
            r = Run([CRAWL, "--out", out, *options(), *server.args], d,
                    "whole")
            r.wait()
        finally:
            server.stop()
        total = count_lines(out)
        check(r.rc == FINISHED_RC and total > 100,
              "a whole crawl: exit %d, %d records" % (FINISHED_RC, total))
        parts = Parts()
        for fn in (out_on_tmpfs, out_fsize, log_on_tmpfs, stats_on_tmpfs,
                   warc_on_tmpfs, state_on_tmpfs):
            parts.run(fn.__name__, fn, sitedir, work, total)
    print("times: %s; total %.1f s" % (", ".join(parts.times),
                                       time.monotonic() - t0))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
