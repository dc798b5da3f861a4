#!/usr/bin/env python3
"""scripts/fds_peak.py - the descriptors a crawl holds at its peak, by kind.

    scripts/fds_peak.py BUILD_EXAMPLES_DIR [--pages N] [CONCURRENCY...]

For each concurrency (default 1 8 32 64), crawls the sample site
(examples/site: generated with N pages, default 400, and served on
127.0.0.1) three times - plain, with --warc, and with --warc --state --log
--stats-json - and samples /proc/PID/fd every 2 ms: the peak count and
what the descriptors were at that moment (sockets, WARC spools, the
state's files, ...). How crawl's --concurrency clamp (examples/crawl.c,
FDS_PER_TRANSFER and FDS_RESERVED; docs/DESIGN.md 5) was measured.
Linux only (/proc).
"""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import sample_site  # noqa: E402


def kind(target):
    if "spool" in target:
        return "spool"
    if ":" in target:
        return target.split(":")[0]  # socket, pipe, anon_inode
    return os.path.basename(target)


def peak(crawl, sitedir, conc, extra):
    with tempfile.TemporaryDirectory(prefix="bc_fds.") as work:
        server = sample_site.Server(sitedir, os.path.join(work, "access.log"))
        args = [a.replace("WORK", work) for a in extra]
        cmd = [crawl, "--quiet", "--delay", "0", "--concurrency", str(conc),
               "--per-host", "8", "--scope", "domain", "--timeout", "1500",
               "--out", os.path.join(work, "out.jsonl"), *args, *server.args]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        top, kinds = 0, {}
        while p.poll() is None:
            try:
                fds = os.listdir("/proc/%d/fd" % p.pid)
            except OSError:
                break
            if len(fds) > top:
                seen = {}
                for fd in fds:
                    try:
                        k = kind(os.readlink("/proc/%d/fd/%s" % (p.pid, fd)))
                    except OSError:
                        continue
                    seen[k] = seen.get(k, 0) + 1
                top, kinds = len(fds), seen
            time.sleep(0.002)
        server.stop()
        return p.returncode, top, kinds


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    crawl = os.path.join(sys.argv[1], "crawl")
    rest = sys.argv[2:]
    pages = "400"
    if rest[:1] == ["--pages"]:
        pages, rest = rest[1], rest[2:]
    concs = [int(c) for c in rest] or [1, 8, 32, 64]
    runs = [("plain", []),
            ("--warc", ["--warc", "WORK/a.warc.gz"]),
            ("--warc --state --log --stats-json",
             ["--warc", "WORK/a.warc.gz", "--state", "WORK/state", "--log",
              "WORK/log", "--stats-json", "WORK/stats.json"])]
    with tempfile.TemporaryDirectory(prefix="bc_fds_site.") as d:
        sitedir = os.path.join(d, "site")
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "examples", "site", "gensite.py"),
                        "--pages", pages, sitedir], check=True,
                       capture_output=True)
        for conc in concs:
            for name, extra in runs:
                rc, top, kinds = peak(crawl, sitedir, conc, extra)
                print("--concurrency %-3d %-34s exit %d  peak %3d  %s"
                      % (conc, name, rc, top,
                         ", ".join("%s %d" % kv for kv in
                                   sorted(kinds.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
