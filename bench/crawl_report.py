#!/usr/bin/env python3
"""crawl_report.py - the bookkeeping of bench/bench_crawl.sh.

    crawl_report.py record --tool T --run N --order K --time FILE --log FILE
                           --expected FILE [--stats-json F | --stats-site F]
                           [--server-cpu S]               >> runs.jsonl
    crawl_report.py report --runs runs.jsonl --md OUT.md --csv OUT.csv
                           [--meta KEY=VALUE ...] [--baseline TOOL]
                           [--verdict FILE] [--real-site]
                           [--goal issue5|issue12]

``record`` turns one crawler run into one JSON line: wall time, user and
system CPU seconds and peak RSS (from the ``/usr/bin/time -f`` file), the
run's slice of nginx's access log (requests by method and status, pages =
distinct paths fetched with GET and status 200, paths fetched with GET more
than once, pages of the site never fetched, paths fetched that are not
pages of the site, connections used) and the tool's own count of pages
(bloomcrawl: ``pages`` of ``--stats-json``; wget2: GET rows with status 200
of ``--stats-site`` CSV).

``report`` takes the medians over the runs of each tool, checks that every
tool fetched exactly the site's pages (and that bloomcrawl fetched no URL
twice; with ``--real-site`` the checks of real_site_checks()), sets
bloomcrawl against the baseline with the goal of issue 5 ("at least as fast
as wget2 with less CPU per page") or, with ``--goal issue12``, of issue 12
(wall time <= the baseline's, CPU per page <= 0.8x) and writes the Markdown
report (also to stdout) and a CSV with one row per run plus one median row
per tool.  Python 3 standard library only.
"""

import argparse
import collections
import csv
import hashlib
import json
import os
import platform
import re
import statistics
import sys
import time

LOG = re.compile(r'^(\S+) (\d{3}) (\S+) (\d+) (\d+) (\d+) "(.*)" "(.*)"$')


def parse_time(path):
    """key=value tokens of a /usr/bin/time -f file (other lines ignored)."""
    out = {}
    with open(path) as fh:
        for line in fh:
            for tok in line.split():
                k, sep, v = tok.partition("=")
                if sep:
                    out[k] = float(v)
    for k in ("wall", "user", "sys", "maxrss_kb", "exit"):
        if k not in out:
            sys.exit("crawl_report: %s: no %s= in the time file" % (path, k))
    return out


def log_stats(path, expected):
    methods = collections.Counter()
    statuses = collections.Counter()
    gets = collections.Counter()
    paths, conns, first, last = set(), set(), None, None
    non_200_pages = 0
    with open(path, errors="replace") as fh:
        for line in fh:
            m = LOG.match(line.rstrip("\n"))
            if not m:
                continue
            ts, status, method, _, conn, _, uri, _ = m.groups()
            first = first or float(ts)
            last = float(ts)
            methods[method] += 1
            statuses[status] += 1
            conns.add(conn)
            paths.add(uri)
            if method == "GET" and status == "200":
                gets[uri] += 1
            elif status != "200" and uri in expected:
                non_200_pages += 1
    return {
        "requests": sum(methods.values()),
        "get": methods["GET"], "head": methods["HEAD"],
        "non_200": sum(n for s, n in statuses.items() if s != "200"),
        "pages_log": len(gets),
        "dup_gets": sum(1 for n in gets.values() if n > 1),
        "missing": len(expected - set(gets)),
        "extra": len(paths - expected),
        "extra_get": len(set(gets) - expected),
        "non_200_pages": non_200_pages,
        # the set of pages fetched (GET, 200), as one digest: equal
        # digests, equal sets
        "page_set": hashlib.sha1("\n".join(sorted(gets)).encode(
            "utf-8", "surrogateescape")).hexdigest()[:12],
        "connections": len(conns),
        "log_span_s": round(last - first, 3) if first else 0.0,
    }


def tool_pages(a):
    if a.stats_json:
        with open(a.stats_json) as fh:
            return int(json.load(fh)["pages"])
    if a.stats_site:
        with open(a.stats_site, newline="") as fh:
            rows = csv.DictReader(fh)
            # Method 1 = GET, 2 = HEAD (wget2 manual, --stats-site)
            return sum(1 for r in rows
                       if r["Method"] == "1" and r["Status"] == "200")
    return None


def cmd_record(a):
    with open(a.expected) as fh:
        expected = {line.strip() for line in fh if line.strip()}
    t = parse_time(a.time)
    rec = {"tool": a.tool, "run": a.run, "order": a.order,
           "wall_s": t["wall"], "user_s": t["user"], "sys_s": t["sys"],
           "cpu_s": round(t["user"] + t["sys"], 3),
           "maxrss_mib": round(t["maxrss_kb"] / 1024.0, 1),
           "exit": int(t["exit"]), "server_cpu_s": a.server_cpu,
           "site_pages": len(expected)}
    rec.update(log_stats(a.log, expected))
    rec["pages_tool"] = tool_pages(a)
    pages = rec["pages_log"]
    rec["pages_per_s"] = round(pages / rec["wall_s"], 1) if rec["wall_s"] else 0
    rec["cpu_ms_per_page"] = (round(1000.0 * rec["cpu_s"] / pages, 4)
                              if pages else 0)
    print(json.dumps(rec))


# ---- report ---------------------------------------------------------------

def median(runs, key):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0)
    return {"cpu": model, "cores": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M %Z"),
            "kernel": platform.release(), "load": "%.2f %.2f %.2f" % load}


def pct(a, b):
    """How much a is above (+) or below (-) b, in percent of b."""
    return 100.0 * (a - b) / b if b else float("nan")


def real_site_checks(runs, site_pages, w):
    """The checks of a real site (--real-site): every run fetched (GET,
    status 200) exactly the site's pages, the same set for every run of
    every crawler; no page answered other than 200; no page fetched twice.
    Requests for paths that are not pages (wget2 --spider's HEADs of
    stylesheets and images, a 404 for a <link rev=made> href) are counted
    but allowed, and so is the exit status they cause (wget2: 8, "server
    issued an error response").  Writes the passed line; returns the
    problems."""
    problems = []
    sets = collections.Counter(r["page_set"] for r in runs)
    for r in runs:
        who = "%s run %d" % (r["tool"], r["run"])
        if r["pages_log"] != site_pages or r["missing"] or r["extra_get"]:
            problems.append("%s fetched %d of the %d pages (%d missing, %d "
                            "GETs of paths not of the site)" % (
                                who, r["pages_log"], site_pages,
                                r["missing"], r["extra_get"]))
        if r["pages_tool"] is not None and r["pages_tool"] != r["pages_log"]:
            problems.append("%s counts %d pages itself, the server log %d"
                            % (who, r["pages_tool"], r["pages_log"]))
        if r["non_200_pages"]:
            problems.append("%s got %d responses other than 200 for pages"
                            % (who, r["non_200_pages"]))
        if r["dup_gets"]:
            problems.append("%s fetched %d URLs more than once (GET)"
                            % (who, r["dup_gets"]))
        bad_exit = r["exit"] != 0 and not (
            r["tool"].startswith("wget2") and r["exit"] == 8
            and r["non_200"] > 0)
        if bad_exit:
            problems.append("%s exited with status %d" % (who, r["exit"]))
    if len(sets) > 1:
        problems.append("the runs fetched %d different page sets: %s" % (
            len(sets), ", ".join("%s (%d runs)" % kv for kv in sets.items())))
    if not problems:
        other = sorted({(r["tool"], r["extra"] , r["non_200"], r["exit"])
                        for r in runs if r["extra"] or r["non_200"]})
        w("Passed: every run of every crawler fetched (GET, 200) exactly the "
          "site's %s pages - the same set for all (page-set digest %s), the "
          "server log and the tool's own count agree - no page was answered "
          "other than 200, and no run fetched a URL twice with GET." % (
              "{:,}".format(site_pages), runs[0]["page_set"]))
        for tool, extra, non200, code in other:
            w("\n- %s also requested %d paths that are not pages (%d "
              "answered other than 200; exit status %d)" % (
                  tool, extra, non200, code))
    return problems


def cmd_report(a):
    runs = []
    with open(a.runs) as fh:
        runs = [json.loads(line) for line in fh if line.strip()]
    if not runs:
        sys.exit("crawl_report: no runs in %s" % a.runs)
    meta = dict(kv.split("=", 1) for kv in a.meta)
    tools = list(dict.fromkeys(r["tool"] for r in runs))
    by = {t: [r for r in runs if r["tool"] == t] for t in tools}
    med = {t: {k: median(by[t], k) for k in (
        "wall_s", "pages_per_s", "cpu_s", "cpu_ms_per_page", "maxrss_mib",
        "pages_log", "pages_tool", "requests", "server_cpu_s", "user_s",
        "sys_s", "connections")} for t in tools}
    m = machine()
    site_pages = runs[0]["site_pages"]
    out = []
    w = out.append

    w("# Crawl benchmark: bloomcrawl vs wget2\n")
    w("Machine: %s, %s cores, Linux %s; %s; load average at the end %s "
      "(a shared machine: medians of %d runs per crawler, the order "
      "of the crawlers rotated every round)." % (m["cpu"], m["cores"], m["kernel"], m["date"],
                        m["load"], max(len(v) for v in by.values())))
    if meta.get("versions"):
        w("\nSoftware: %s." % meta["versions"])
    if meta.get("site"):
        w("\nSite: %s." % meta["site"])
    w("\n## Results (medians)\n")
    w("| crawler | pages fetched (log / own count) | HTTP requests | wall s "
      "| pages/s | CPU s (user+sys) | CPU s per 1,000 pages | peak RSS MiB "
      "| nginx CPU s |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in tools:
        d = med[t]
        w("| %s | %s / %s | %s | %.3f | %.0f | %.2f | %.3f | %.1f | %s |" % (
            t, "{:,}".format(int(d["pages_log"])),
            "{:,}".format(int(d["pages_tool"])) if d["pages_tool"] is not None
            else "-", "{:,}".format(int(d["requests"])), d["wall_s"],
            d["pages_per_s"], d["cpu_s"], d["cpu_ms_per_page"],
            d["maxrss_mib"], "%.2f" % d["server_cpu_s"]
            if d["server_cpu_s"] is not None else "-"))

    # ---- checks
    w("\n## Checks (every run)\n")
    problems = []
    if a.real_site:
        problems = real_site_checks(runs, site_pages, w)
    for r in ([] if a.real_site else runs):
        who = "%s run %d" % (r["tool"], r["run"])
        if r["exit"] != 0:
            problems.append("%s exited with status %d" % (who, r["exit"]))
        if r["pages_log"] != site_pages or r["missing"] or r["extra"]:
            problems.append("%s fetched %d of the %d pages (%d missing, %d "
                            "paths not of the site)" % (
                                who, r["pages_log"], site_pages,
                                r["missing"], r["extra"]))
        if r["pages_tool"] is not None and r["pages_tool"] != r["pages_log"]:
            problems.append("%s counts %d pages itself, the server log %d"
                            % (who, r["pages_tool"], r["pages_log"]))
        if r["non_200"]:
            problems.append("%s got %d responses other than 200"
                            % (who, r["non_200"]))
        if r["dup_gets"]:
            problems.append("%s fetched %d URLs more than once (GET)"
                            % (who, r["dup_gets"]))
    if problems:
        w("**FAILED:**\n")
        for p in problems:
            w("- " + p)
    elif a.real_site:
        pass
    else:
        w("Passed: every run of every crawler fetched exactly the site's "
          "%s pages (server log and the tool's own count agree), every "
          "response was 200, and no run fetched a URL twice with GET "
          "(count per path in nginx's access log)." % "{:,}".format(
              site_pages))

    # ---- the goal
    base = a.baseline if a.baseline in med else None
    bc = "bloomcrawl" if "bloomcrawl" in med else None
    verdict = None
    if bc and base:
        b, x = med[bc], med[base]
        speed = pct(b["pages_per_s"], x["pages_per_s"])
        cpu = pct(b["cpu_ms_per_page"], x["cpu_ms_per_page"])
        if a.goal == "issue12":
            fast_ok = b["wall_s"] <= x["wall_s"]
            cpu_ok = b["cpu_ms_per_page"] <= 0.8 * x["cpu_ms_per_page"]
        else:
            fast_ok = b["pages_per_s"] >= x["pages_per_s"]
            cpu_ok = b["cpu_ms_per_page"] < x["cpu_ms_per_page"]
        verdict = "MET" if fast_ok and cpu_ok and not problems else "MISSED"
        if a.goal == "issue12":
            w("\n## Goals (issue 12): CPU per page <= 0.8x wget2's, wall "
              "time <= wget2's\n")
            w("Against `%s`: **%s**.\n" % (base, verdict))
            w("- wall time: bloomcrawl %.3f s vs %.3f s: %s (%.2fx; %.0f vs "
              "%.0f pages/s)" % (
                  b["wall_s"], x["wall_s"], "met" if fast_ok else "MISSED",
                  b["wall_s"] / x["wall_s"], b["pages_per_s"],
                  x["pages_per_s"]))
            w("- CPU per page: bloomcrawl %.3f vs %.3f CPU s per 1,000 "
              "pages: %s (%.2fx, the goal 0.80x)" % (
                  b["cpu_ms_per_page"], x["cpu_ms_per_page"],
                  "met" if cpu_ok else "MISSED",
                  b["cpu_ms_per_page"] / x["cpu_ms_per_page"]))
        else:
            w("\n## Goal (issue 5): at least as fast as wget2 with less CPU "
              "per page\n")
            w("Against `%s`: **%s**.\n" % (base, verdict))
            w("- speed: bloomcrawl %.0f pages/s vs %.0f: %s (%+.0f %%, %s)" % (
                b["pages_per_s"], x["pages_per_s"],
                "met" if fast_ok else "missed", speed,
                "%.2fx" % (b["pages_per_s"] / x["pages_per_s"])))
            w("- CPU per page: bloomcrawl %.3f vs %.3f CPU s per 1,000 pages: "
              "%s (%+.0f %%, %.2fx)" % (
                  b["cpu_ms_per_page"], x["cpu_ms_per_page"],
                  "met" if cpu_ok else "missed", cpu,
                  b["cpu_ms_per_page"] / x["cpu_ms_per_page"]))
        w("- peak memory: bloomcrawl %.1f MiB vs %.1f MiB (%+.0f %%)" % (
            b["maxrss_mib"], x["maxrss_mib"],
            pct(b["maxrss_mib"], x["maxrss_mib"])))
        for other in tools:
            if other in (bc, base):
                continue
            y = med[other]
            w("- against `%s` as well: %.0f vs %.0f pages/s (%+.0f %%), "
              "%.3f vs %.3f CPU s per 1,000 pages (%+.0f %%)" % (
                  other, b["pages_per_s"], y["pages_per_s"],
                  pct(b["pages_per_s"], y["pages_per_s"]),
                  b["cpu_ms_per_page"], y["cpu_ms_per_page"],
                  pct(b["cpu_ms_per_page"], y["cpu_ms_per_page"])))

    # ---- per run
    w("\n## Every run\n")
    w("| crawler | run | order | wall s | pages (log) | requests | GET | "
      "HEAD | connections | pages/s | user s | sys s | CPU / wall | "
      "CPU s / 1,000 pages | peak RSS MiB | nginx CPU s |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
      "|---:|---:|")
    for r in sorted(runs, key=lambda r: (tools.index(r["tool"]), r["run"])):
        w("| %s | %d | %d | %.3f | %d | %d | %d | %d | %d | %.0f | %.2f | "
          "%.2f | %.2f | %.3f | %.1f | %s |" % (
              r["tool"], r["run"], r["order"], r["wall_s"], r["pages_log"],
              r["requests"], r["get"], r["head"], r["connections"],
              r["pages_per_s"], r["user_s"], r["sys_s"],
              r["cpu_s"] / r["wall_s"] if r["wall_s"] else 0,
              r["cpu_ms_per_page"],
              r["maxrss_mib"], "%.2f" % r["server_cpu_s"]
              if r["server_cpu_s"] is not None else "-"))

    # ---- commands
    cmds = [(k[4:], v) for k, v in meta.items() if k.startswith("cmd_")]
    if cmds:
        w("\n## Commands (PORT and TMP as in this run)\n")
        w("```sh")
        for k, v in cmds:
            w("# %s\n%s" % (k.replace("_", " "), v))
        w("```")
    if meta.get("notes_file") and os.path.exists(meta["notes_file"]):
        with open(meta["notes_file"]) as fh:
            w("\n" + fh.read().rstrip("\n"))

    text = "\n".join(out) + "\n"
    with open(a.md, "w") as fh:
        fh.write(text)
    sys.stdout.write(text)

    cols = ["tool", "run", "order", "wall_s", "user_s", "sys_s", "cpu_s",
            "maxrss_mib", "pages_log", "pages_tool", "site_pages",
            "requests", "get", "head", "non_200", "dup_gets", "missing",
            "extra", "connections", "pages_per_s", "cpu_ms_per_page",
            "server_cpu_s", "exit"]
    with open(a.csv, "w", newline="") as fh:
        cw = csv.writer(fh)
        cw.writerow(["# machine", m["cpu"], "cores", m["cores"], "date",
                     m["date"], "kernel", m["kernel"]])
        cw.writerow(cols)
        for r in runs:
            cw.writerow([r.get(c) for c in cols])
        for t in tools:
            row = []
            for c in cols:
                if c == "tool":
                    row.append(t)
                elif c == "run":
                    row.append("median")
                elif c in med[t]:
                    row.append(med[t][c])
                else:
                    row.append("")
            cw.writerow(row)
    if a.verdict:
        with open(a.verdict, "w") as fh:
            fh.write("%s\n" % (verdict or "NONE"))
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--tool", required=True)
    r.add_argument("--run", type=int, required=True)
    r.add_argument("--order", type=int, required=True)
    r.add_argument("--time", required=True)
    r.add_argument("--log", required=True)
    r.add_argument("--expected", required=True)
    r.add_argument("--stats-json")
    r.add_argument("--stats-site")
    r.add_argument("--server-cpu", type=float)
    p = sub.add_parser("report")
    p.add_argument("--runs", required=True)
    p.add_argument("--md", required=True)
    p.add_argument("--csv", required=True)
    p.add_argument("--meta", action="append", default=[])
    p.add_argument("--baseline", default="wget2 --spider")
    p.add_argument("--verdict", help="write MET or MISSED to this file")
    p.add_argument("--real-site", action="store_true",
                   help="a real site: the checks of real_site_checks()")
    p.add_argument("--goal", choices=("issue5", "issue12"), default="issue5",
                   help="issue5: faster and less CPU per page; issue12: "
                   "wall time <= and CPU per page <= 0.8x the baseline's")
    a = ap.parse_args()
    if a.cmd == "record":
        cmd_record(a)
        return 0
    return cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
