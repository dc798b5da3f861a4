#!/usr/bin/env python3
"""e2e_counters.py - every counter of the tables reaches the user.

`crawl --counters` lists every counter of the four tables (the seen-test,
the frontier, the crawler, the crawl workers: bloomcrawl/counter.h), one
tab-separated line each.  A crawl of the sample site on 127.0.0.1 must
then show each of them, under the same name, in --stats-json's "counters"
(an array as an object keyed by its label values, exactly those
--counters lists) and in the text report's counters section (a line of
its own when not zero, else in its group's "zero:" list); a TOTAL's value
is the same in both.  The workers' table appears only for a crawl worker:
a one-worker crawl (--redis, redis-server on a unix socket) checks it,
skipped without redis-server.

usage: e2e_counters.py [BINDIR]   (BINDIR holds crawl; default build/examples)
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, read_stats, summary  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
TIMEOUT = 120


def listing():
    """crawl --counters as [(group, name, kind, labels or None)]."""
    p = subprocess.run([CRAWL, "--counters"], capture_output=True,
                       text=True, timeout=30)
    check(p.returncode == 0 and p.stderr == "",
          "crawl --counters: exit 0, nothing on stderr (%d)" % p.returncode)
    rows, bad = [], []
    for line in p.stdout.splitlines():
        if line.startswith("#"):
            continue
        f = line.split("\t")
        if len(f) != 5 or not all(f) or "." not in f[0]:
            bad.append(line)
            continue
        group, name = f[0].split(".", 1)
        labels = None
        if f[4] != "-":
            labels = f[4].split(": ", 1)[1].split(",")
        rows.append((group, name, f[1], labels))
    check(not bad and len(rows) > 100,
          "--counters: %d lines of five fields (bad: %s)" % (len(rows), bad))
    groups = sorted({r[0] for r in rows})
    check(groups == ["crawler", "frontier", "seen", "workers"],
          "--counters: the four tables (%s)" % groups)
    return rows


def report_counters(text):
    """The report's counters section: {"group.name": value text} of the
    lines, and the set of "group.name" in the zero lists."""
    lines = text.splitlines()
    try:
        i = next(n for n, ln in enumerate(lines)
                 if ln.startswith("counters ("))
    except StopIteration:
        return {}, set(), 0
    shown, zero, group = {}, set(), None
    for ln in lines[i + 1:]:
        if not ln.startswith("  "):
            break
        if ln.startswith("   "):  # a zero list or an array wrapped
            if group:
                zero.update(group + "." + n.strip()
                            for n in ln.split(",") if n.strip())
        elif ", zero:" in ln:
            group, names = ln.strip().split(", zero:", 1)
            zero.update(group + "." + n.strip()
                        for n in names.split(",") if n.strip())
        else:
            name, value = ln.strip().split(None, 1)
            shown[name] = value
            group = None
    return shown, zero, max(len(ln) for ln in lines[i:])


def crawl(work, name, server, *extra):
    """One crawl: (its exit status, stdout, its --stats-json)."""
    stats = os.path.join(work, name + ".json")
    c = [CRAWL, "--stats-json", stats, "--delay", "0", "--timeout", "3000",
         "--max-depth", "2", "--concurrency", "8", "--per-host", "4", "--exclude", "*/error/*", "--exclude",
         "*/slow*", *extra, *server.args]
    p = subprocess.run(c, capture_output=True, text=True, timeout=TIMEOUT)
    clean = "Sanitizer" not in p.stderr and "runtime error:" not in p.stderr
    check(clean, name + ": no sanitizer report" +
          ("" if clean else "\n" + p.stderr[-600:]))
    return p.returncode, p.stdout, read_stats(stats)


def check_run(name, rows, rc, out, st, groups):
    check(rc == 0, "%s: exit 0 (%d)" % (name, rc))
    counters = st.get("counters", {})
    check(sorted(counters) == sorted(groups),
          "%s: --stats-json counters has %s (%s)"
          % (name, groups, sorted(counters)))
    shown, zero, width = report_counters(out)
    check(width <= 80, "%s: the counters section fits 80 columns (%d)"
          % (name, width))
    missing_json, missing_text, bad_labels, differ = [], [], [], []
    for group, cname, kind, labels in rows:
        if group not in groups:
            continue
        full = group + "." + cname
        g = counters.get(group, {})
        if cname not in g:
            missing_json.append(full)
        elif labels is not None and (not isinstance(g[cname], dict) or
                                     sorted(g[cname]) != sorted(labels)):
            bad_labels.append(full)
        if (full in shown) == (full in zero):
            missing_text.append(full)
        if (kind == "total" and labels is None and full in shown and
                cname in g and shown[full] != str(g[cname])):
            differ.append("%s %s %s" % (full, shown[full], g[cname]))
    check(not missing_json,
          "%s: every counter in --stats-json counters (missing %s)"
          % (name, missing_json[:8]))
    check(not bad_labels, "%s: arrays keyed by their label values (%s)"
          % (name, bad_labels[:8]))
    check(not missing_text,
          "%s: every counter once in the report (missing or twice %s)"
          % (name, missing_text[:8]))
    check(not differ, "%s: a total's value the same in both (%s)"
          % (name, differ[:8]))
    n = sum(1 for r in rows if r[0] in groups)
    check(len(shown) + len(zero) == n,
          "%s: the report lists %d counters, --counters %d for %s"
          % (name, len(shown) + len(zero), n, groups))
    crawler = counters.get("crawler", {})
    check(crawler.get("pages") == st.get("pages") and st.get("pages", 0) > 0,
          "%s: counters.crawler.pages is the report's pages (%s, %s)"
          % (name, crawler.get("pages"), st.get("pages")))
    check(crawler.get("status_class", {}).get("2xx") ==
          st.get("status", {}).get("2xx"),
          "%s: counters.crawler.status_class.2xx is status.2xx" % name)


def main():
    rows = listing()
    with tempfile.TemporaryDirectory(prefix="bc_counters.") as work:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", "100"], check=True,
                       capture_output=True)
        server = sample_site.Server(sitedir, os.path.join(work, "access.log"))
        try:
            rc, out, st = crawl(work, "plain", server)
            check_run("plain", rows, rc, out, st,
                      ["seen", "frontier", "crawler"])
            if shutil.which("redis-server") and shutil.which("redis-cli"):
                from e2e_workers import Redis
                redis = Redis(work)
                try:
                    rc, out, st = crawl(
                        work, "worker", server, "--redis", redis.url,
                        "--workers", "1", "--worker", "0", "--state",
                        os.path.join(work, "state"))
                    check_run("worker", rows, rc, out, st,
                              ["seen", "frontier", "crawler", "workers"])
                finally:
                    redis.shutdown()
            else:
                print("skip: the worker run (no redis-server)")
        finally:
            server.stop()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
