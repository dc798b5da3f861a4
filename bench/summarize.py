#!/usr/bin/env python3
"""bench/summarize.py - the summary of scripts/bench.sh's results.

    python3 bench/summarize.py bench/results

Reads the CSVs the benchmarks wrote into the results folder (dedup.csv,
scale*.csv, fpr.csv, url.csv, urldedup.csv, frontier.csv, crawl.csv,
crawl-postgres.csv, features-*.csv, state.csv, billion-*.csv, window.csv,
runs.csv) and the printed tables of the steps that write no CSV
(redis_seen.md, links.md, simhash.md), and writes summary.md there: the
machine, how and when each result was made, every goal of issues 2-6, 12,
14, 24 and 25 beside the measured number with its verdict (missed goals
say by how much), and the tables and pictures. A result that is missing
gives "not measured" rows, never a guess.
"""
import csv
import datetime
import math
import os
import re
import statistics
import subprocess
import sys

import crawl_report  # bench/crawl_report.py: machine()


def read_csv(path):
    """Rows of a CSV as dicts; [] when the file is missing. Lines starting
    with '#' are comments (crawl.csv keeps its machine line there)."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def read_long(path):
    """measure,value,unit files -> {measure: float}."""
    return {r["measure"]: float(r["value"]) for r in read_csv(path)}


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def machine():
    """crawl_report.machine() (CPU model, cores, kernel, load), plus the
    caches, memory, compiler, commit and a UTC date."""
    m = crawl_report.machine()
    caches = []
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for idx in sorted(os.listdir(base)):
            d = os.path.join(base, idx)
            with open(os.path.join(d, "level")) as f:
                level = f.read().strip()
            with open(os.path.join(d, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(d, "size")) as f:
                size = f.read().strip()
            if kind != "Instruction":
                caches.append(f"L{level} {size}")
    except OSError:
        pass
    m["caches"] = ", ".join(caches) or "unknown"
    m["mem_gib"] = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    m["mem_gib"] = int(line.split()[1]) / 1048576
    except OSError:
        pass
    try:
        m["cc"] = subprocess.run(["cc", "--version"], capture_output=True,
                                 text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        m["cc"] = "unknown compiler"
    try:
        m["commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                     capture_output=True,
                                     text=True).stdout.strip()
    except OSError:
        m["commit"] = "unknown"
    m["date"] = datetime.datetime.now(datetime.timezone.utc) \
        .strftime("%Y-%m-%d %H:%M UTC")
    return m


class Goals:
    """The goals table: each row a goal, the measured value, a verdict."""

    def __init__(self):
        self.rows = []

    def add(self, issue, goal, value, fmt, op, target, note=""):
        """op '<=' or '>=' against target; value None = not measured."""
        if value is None:
            self.rows.append((goal, issue, "not measured", "**not measured**",
                              note))
            return
        text = fmt.format(value)
        ok = value <= target if op == "<=" else value >= target
        if ok:
            verdict = "met"
        else:
            off = (value / target - 1) * 100 if op == "<=" else \
                (1 - value / target) * 100
            # one decimal for small misses (0.1 %), none for large ones
            verdict = f"**missed** by {off:.1f} %" if round(off, 1) < 10 \
                else f"**missed** by {off:.0f} %"
        self.rows.append((goal, issue, text, verdict, note))

    def add_text(self, issue, goal, text, verdict, note=""):
        self.rows.append((goal, issue, text, verdict, note))

    def markdown(self):
        out = ["| goal | issue | measured | verdict | note |",
               "|---|---:|---:|---|---|"]
        for goal, issue, text, verdict, note in self.rows:
            out.append(f"| {goal} | {issue} | {text} | {verdict} | {note} |")
        return "\n".join(out)


def scale_rows(results):
    rows = []
    for name in ("scale.csv", "scale-big.csv", "scale-big-scalar.csv",
                 "scale-exact.csv"):
        rows += read_csv(os.path.join(results, name))
    return rows


def scale_get(rows, n, structure, calls, keys, field):
    for r in rows:
        if (int(r["n"]) == n and r["structure"] == structure and
                r["calls"] == calls and r["keys"] == keys):
            return num(r[field])
    return None


def window_speed_ratios(path):
    """The (insert, query) ratios to the blocked filter of each run in
    window-speed.md (bench_window's speed tables, the row "window G = 4,
    S = 256 (batch)"); [] when the file is missing."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 4 and cells[0] == "window G = 4, S = 256 (batch)":
                a, q = (float(x) for x in cells[3].split(","))
                out.append((a, q))
    return out


def fmt_or_dash(v, fmt):
    return "-" if v is None else fmt.format(v)


def read_lines(path):
    """The lines of a step's printed output; [] when the file is missing."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


def features_medians(rows):
    """features-<site>.csv (bench_warc.sh --csv): per variant of this
    tree's build ("new"), the medians of CPU and wall seconds over the
    rounds, and the rounds counted."""
    by = {}
    for r in rows:
        if r["build"] == "new":
            by.setdefault(r["variant"], []).append(r)
    return {v: {"cpu": statistics.median(float(r["cpu_s"]) for r in rs),
                "wall": statistics.median(float(r["wall_s"]) for r in rs),
                "rounds": len(rs),
                "warc_bytes": statistics.median(float(r["warc_bytes"])
                                                for r in rs),
                "pages": statistics.median(float(r["pages"]) for r in rs)}
            for v, rs in by.items()}


def redis_medians(lines):
    """redis_seen.md: the "median NAME keys/s ... server N" lines of
    bench_redis_seen's comparison rounds -> {name: (keys/s, server ns)}."""
    out = {}
    for line in lines:
        m = re.match(r"median (.+?)\s+(\d+) keys/s\s+cpu ns/key server\s+"
                     r"(\d+)", line)
        if m:
            out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return out


def simhash_rows(lines):
    """simhash.md (bench_simhash's CSV lines): {what: row} for the text
    rows (ns_per_byte) and the index rows (median_ns_per_op)."""
    out = {}
    for line in lines:
        f = line.split(",")
        if f[0] == "text" and len(f) == 7 and f[1] != "what":
            out[f[1]] = num(f[6])
        elif f[0] == "index" and len(f) == 7 and f[1] != "what":
            out[f[1]] = num(f[5])
            if f[1].startswith("add_up_to_"):
                out["add_last"] = num(f[5])  # the last stage: the fullest
    return out


def links_medians(lines):
    """links.md (bench_links.sh): the "manual,parser,median" lines after
    its per-run CSV -> {(manual, parser): ns/byte or ratio}."""
    out = {}
    for line in lines:
        f = line.split(",")
        if len(f) == 3 and f[1] in ("bloomcrawl", "libxml2", "ratio"):
            v = num(f[2].rstrip("x"))
            if v is not None:
                out[(f[0], f[1])] = v
    return out


def main():
    results = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    m = machine()
    dedup = read_long(os.path.join(results, "dedup.csv"))
    url = read_long(os.path.join(results, "url.csv"))
    frontier = read_long(os.path.join(results, "frontier.csv"))
    fpr = read_csv(os.path.join(results, "fpr.csv"))
    window = read_long(os.path.join(results, "window.csv"))
    urldedup = read_csv(os.path.join(results, "urldedup.csv"))
    crawl = read_csv(os.path.join(results, "crawl.csv"))
    crawl_pg = read_csv(os.path.join(results, "crawl-postgres.csv"))
    features = {site: features_medians(read_csv(os.path.join(
        results, f"features-{site}.csv"))) for site in ("postgres",
                                                       "generated")}
    state = read_long(os.path.join(results, "state.csv"))
    redis = redis_medians(read_lines(os.path.join(results, "redis_seen.md")))
    simhash = simhash_rows(read_lines(os.path.join(results, "simhash.md")))
    links = links_medians(read_lines(os.path.join(results, "links.md")))
    runs = read_csv(os.path.join(results, "runs.csv"))
    scale = scale_rows(results)
    pairs = {(int(r["n"]), r["layout"]): r
             for r in read_csv(os.path.join(results, "scale-pairs.csv"))}
    billion = {lay: read_csv(os.path.join(results, f"billion-{lay}.csv"))
               for lay in ("classic", "blocked")}

    out = []
    w = out.append
    w("# bloomcrawl benchmark report\n")
    w("Written by `scripts/bench.sh` (`bench/summarize.py`); every number "
      "below comes from the CSVs beside this file, and each CSV from the "
      "command listed under *Runs*. Medians unless a row says otherwise; "
      "each benchmark measures its baseline in the same process or script.\n")
    w("## Machine\n")
    mem = f"{m['mem_gib']:.1f} GiB" if m["mem_gib"] else "unknown"
    w(f"- CPU: {m['cpu']}, {m['cores']} cores (as the OS counts them); "
      f"data caches seen by core 0: {m['caches']}")
    w(f"- memory: {mem}; kernel {m['kernel']}; compiler: {m['cc']}")
    w(f"- report written {m['date']} at commit {m['commit']}; load average "
      f"then {m['load']}")
    w("- a shared, noisy machine: other jobs may run on the other core; "
      "compare ratios within one run rather than absolute numbers across "
      "runs\n")

    w("## Runs\n")
    if runs:
        w("| step | date (UTC) | commit | seconds | command |")
        w("|---|---|---|---:|---|")
        for r in runs:
            w(f"| {r['step']} | {r['date_utc']} | {r['commit']} | "
              f"{r['seconds']} | `{r['command']}` |")
        total = sum(int(r["seconds"]) for r in runs)
        w(f"\nAll steps together: {total / 60:.1f} minutes.\n")
    else:
        w("No runs.csv: run `scripts/bench.sh`.\n")

    # ---- goals ----------------------------------------------------------
    g = Goals()
    n10 = 10000000
    # bench_dedup's n: 10^7 in a full run (the n of the goals), smaller with
    # --quick; its --billion rows are not this table's.
    dedup_ns = {int(k.split("/")[1]) for k in dedup
                if k.startswith("bloom/") and k.split("/")[1] != "1000000000"}
    n7 = min(dedup_ns) if dedup_ns else 10000000
    b = f"bloom/{n7}"
    g.add(2, "blocked batch test-and-add, prehashed key, n = 10^7",
          dedup.get(f"{b}/blocked/batch/prehashed/ns_test_and_add"),
          "{:.1f} ns", "<=", 20, "bench_dedup")
    g.add(2, "blocked batch test-and-add, URL string (hash included), "
          "n = 10^7",
          dedup.get(f"{b}/blocked/batch/strings/ns_test_and_add"),
          "{:.1f} ns", "<=", 40, "bench_dedup")
    g.add(2, "classic batch test-and-add, prehashed key, n = 10^7",
          dedup.get(f"{b}/classic/batch/prehashed/ns_test_and_add"),
          "{:.1f} ns", "<=", 60, "bench_dedup")
    n9 = 1000000000
    g.add(2, "blocked batch test-and-add, prehashed key, n = 10^9",
          scale_get(scale, n9, "blocked", "batch", "prehashed", "ns_insert"),
          "{:.1f} ns", "<=", 40, "bench_scale --sizes 1e9 (one run)")
    g.add(2, "classic batch test-and-add, prehashed key, n = 10^9",
          scale_get(scale, n9, "classic", "batch", "prehashed", "ns_insert"),
          "{:.1f} ns", "<=", 120, "bench_scale --sizes 1e9 (one run)")
    lru_ops = [dedup.get(f"lru/{op}") for op in
               ("ns_add", "ns_push", "ns_hit", "ns_miss")]
    if None in lru_ops:
        g.add(2, "LRU <= 150 ns per operation, 10^6 entries", None, "", "<=",
              150)
    else:
        g.add(2, "LRU, every operation, 10^6 entries (slowest shown)",
              max(lru_ops), "{:.0f} ns", "<=", 150,
              "add {:.0f}, push {:.0f}, hit {:.0f}, miss {:.0f} ns"
              .format(*lru_ops))
    for lay, what in (("classic", "equal to the formula rounded to 64 "
                       "bits"), ("blocked", "within 1 % of the "
                                 "Poisson-mixture requirement")):
        ex = dedup.get(f"memory/{n7}/{lay}/excess")
        g.add(2, f"{lay} memory {what}, n = 10^7",
              None if ex is None else ex * 100, "{:.3f} % over", "<=",
              0.0 if lay == "classic" else 1.0)
    sp = url.get("url/speedup_vs_libcurl")
    g.add(3, "normalizer vs libcurl's URL API", sp, "{:.1f}x", ">=", 10,
          "bench_url")
    rate = url.get("url/bloomcrawl_base_once/pairs_per_s")
    g.add(3, "normalizer, URLs per second on one core",
          None if rate is None else rate / 1e6, "{:.2f} M/s", ">=", 3.0,
          "base parsed once per page")
    ud = [num(r["lines_per_s"]) for r in urldedup]
    g.add(3, "urldedup on 10^7 lines",
          statistics.median(ud) / 1e6 if ud else None, "{:.2f} M lines/s",
          ">=", 1.5, f"median of {len(ud)}" if ud else "")
    nd = frontier.get("frontier/next_done_per_s")
    g.add(4, "frontier next+done pairs per second, 10^5 hosts",
          None if nd is None else nd / 1e6, "{:.2f} M/s", ">=", 1.0,
          "bench_frontier")
    qb, ul = frontier.get("frontier/queue_bytes_per_url"), \
        frontier.get("frontier/avg_url_bytes")
    g.add(4, "a queued URL costs at most its length + 32 bytes",
          None if qb is None else qb - ul, "length + {:.1f} bytes", "<=", 32,
          "queue bytes per queued URL")
    med = crawl_medians(crawl)
    if "bloomcrawl" in med and "wget2 --spider" in med:
        bc, wg = med["bloomcrawl"], med["wget2 --spider"]
        g.add(5, "crawl pages/s, at least wget2 --spider's "
              f"({wg['pages_per_s']:.0f})", bc["pages_per_s"], "{:.0f}",
              ">=", wg["pages_per_s"], "bench_crawl.sh, medians")
        g.add(5, "crawl CPU s per 1,000 pages, below wget2 --spider's "
              f"({wg['cpu_ms_per_page']:.3f})", bc["cpu_ms_per_page"],
              "{:.3f}", "<=", wg["cpu_ms_per_page"],
              "bench_crawl.sh, medians")
    else:
        g.add(5, "crawl at least as fast as wget2 --spider", None, "", ">=",
              0)
    for lay in ("classic", "blocked"):
        rows = billion[lay]
        r = rows[0] if rows else None
        if r and int(r["n"]) != n9:
            r = None
        g.add(6, f"billion run ({lay}): filter <= 1.25 GB",
              None if r is None else int(r["bytes"]) / 1e9, "{:.4f} GB",
              "<=", 1.25)
        g.add(6, f"billion run ({lay}): peak RSS of the whole process "
              "<= 1.25 GB",
              None if r is None else num(r["peak_rss_bytes"]) / 1e9,
              "{:.4f} GB", "<=", 1.25,
              "filter, LRU of 50,000 URLs, program")
        g.add(6, f"billion run ({lay}): peak RSS fits this machine "
              "(< 24 GiB)",
              None if r is None else num(r["peak_rss_bytes"]) / 1e9,
              "{:.3f} GB", "<=", 24 * 1.073741824, "the whole process")
        fp = None if r is None else num(r["measured_fpr"]) * 100
        g.add(6, f"billion run ({lay}): measured FPR over 10^7 fresh URLs "
              "at least 0.95 %", fp, "{:.4f} %", ">=", 0.95)
        g.add(6, f"billion run ({lay}): measured FPR at most 1.05 %", fp,
              "{:.4f} %", "<=", 1.05)
    default_steps = ("dedup", "scale", "fpr", "url", "urldedup", "frontier",
                     "crawl")
    timed = {r["step"]: int(r["seconds"]) for r in runs}
    g.add(6, "scripts/bench.sh without --billion in under 15 minutes",
          sum(timed[s] for s in default_steps) / 60
          if all(s in timed for s in default_steps) else None,
          "{:.1f} min", "<=", 15,
          "sum of the default steps in runs.csv; the build and the corpus "
          "generation come on top")
    # issue 14, section 1: the sliding-window filter (bench_window --full;
    # its times are one run, bench/results/window-speed.md has three)
    wbits = window.get("window/memory/window4")
    g.add(14, "window filter: memory per window key at p = 1 % (G = 4) "
          "<= 1.5 x 9.59 bits", wbits, "{:.2f} bits", "<=", 1.5 * 9.59,
          "bench_window --full")
    for gens in (2, 4):
        rot = window.get(f"window/memory/rotation{gens}_classic")
        g.add(14, f"window filter: memory below rotation with G = {gens} "
              "(classic filters)", None if rot is None else wbits,
              "{:.2f} bits", "<=", rot,
              "rotation: " + fmt_or_dash(rot, "{:.2f} bits"))
    gap = window.get("window/fpr/worst_relative_gap")
    g.add(14, "window filter: measured FPR within 5 % of the prediction at "
          "every checkpoint of 20 W", None if gap is None else gap * 100,
          "{:.2f} %", "<=", 5, "the worst checkpoint")
    # The times: the median of the same-run ratios of window-speed.md's
    # repeated runs when it is there, else the one run of window.csv.
    runs_w = window_speed_ratios(os.path.join(results, "window-speed.md"))
    wn = "window/speed/10000000"
    for i, op in enumerate(("insert", "query")):
        if runs_w:
            ratios = [r[i] for r in runs_w]
            g.add(14, f"window filter: {op} <= 2x the blocked filter's "
                  "batch time, n = 10^7", statistics.median(ratios),
                  "{:.2f}x", "<=", 2,
                  f"median of {len(ratios)} runs, window-speed.md: " +
                  ", ".join(f"{x:.2f}x" for x in ratios))
            continue
        win = window.get(f"{wn}/window/{op}")
        bare_w = window.get(f"{wn}/blocked/{op}")
        g.add(14, f"window filter: {op} <= 2x the blocked filter's batch "
              "time, n = 10^7",
              None if win is None or bare_w is None else win / bare_w,
              "{:.2f}x", "<=", 2,
              fmt_or_dash(win, "{:.1f}") + " against " +
              fmt_or_dash(bare_w, "{:.1f}") + " ns, one run (window.csv)")
    # issue 14, section 3: the two-tier test at Bloom speed
    two = scale_get(scale, n10, "seen-blocked", "batch", "strings",
                    "ns_insert")
    bare = scale_get(scale, n10, "blocked", "batch", "strings", "ns_insert")
    g.add(14, "two-tier seen-test (blocked), batch, URL strings, n = 10^7",
          two, "{:.1f} ns", "<=", 35,
          "bench_scale; the bare blocked filter in the same run: "
          + ("-" if bare is None else f"{bare:.1f} ns") +
          ("" if two is None or bare is None else f" ({two / bare:.2f}x)"))
    g.add(14, "two-tier seen-test (blocked), batch, URL strings, n = 10^9",
          scale_get(scale, n9, "seen-blocked", "batch", "strings",
                    "ns_insert"), "{:.1f} ns", "<=", 60,
          "bench_scale --sizes 1e9 (one run)")
    slab_ops = [dedup.get(f"lru-slab/{op}") for op in
                ("ns_add", "ns_push", "ns_hit", "ns_miss", "ns_remove")]
    if None in slab_ops:
        g.add(14, "the seen-test's LRU (slab, fingerprints), every "
              "operation, 10^6 entries", None, "", "<=", 100)
    else:
        g.add(14, "the seen-test's LRU (slab, fingerprints), every "
              "operation, 10^6 entries (slowest shown)", max(slab_ops),
              "{:.0f} ns", "<=", 100,
              "add {:.0f}, push {:.0f}, hit {:.0f}, miss {:.0f}, remove "
              "{:.0f} ns".format(*slab_ops))
    if fpr:
        worst = {}
        for r in fpr:
            pred, meas = float(r["predicted"]), float(r["measured"])
            z = (meas - pred) / math.sqrt(pred * (1 - pred) /
                                          int(r["queries"]))
            worst.setdefault(r["layout"], []).append(abs(z) > 3)
        beyond = sum(sum(v) for v in worst.values())
        g.add_text(14, "bench_fpr: no point beyond 3 standard errors, "
                   "every layout", f"{beyond} points",
                   "met" if beyond == 0 else "**missed**",
                   ", ".join(f"{lay} {sum(v)} of {len(v)}"
                             for lay, v in worst.items()))
    else:
        g.add(14, "bench_fpr: no point beyond 3 standard errors", None, "",
              "<=", 0)
    # issue 12: the real-site crawl and link extraction
    med_pg = crawl_medians(crawl_pg)
    if "bloomcrawl" in med_pg and "wget2 --spider" in med_pg:
        bc, wg = med_pg["bloomcrawl"], med_pg["wget2 --spider"]
        g.add(12, "PostgreSQL manual crawl: CPU per page <= 0.8x wget2 "
              "--spider's", bc["cpu_ms_per_page"] / wg["cpu_ms_per_page"],
              "{:.2f}x", "<=", 0.8,
              f"{bc['cpu_ms_per_page']:.3f} against "
              f"{wg['cpu_ms_per_page']:.3f} CPU s per 1,000 pages")
        g.add(12, "PostgreSQL manual crawl: wall time <= wget2 --spider's",
              bc["wall_s"] / wg["wall_s"], "{:.2f}x", "<=", 1.0,
              f"{bc['wall_s']:.3f} s against {wg['wall_s']:.3f} s")
    else:
        g.add(12, "PostgreSQL manual crawl against wget2 --spider", None, "",
              "<=", 0)
    for manual, what in (("postgresql-doc-15", "PostgreSQL 15"),
                         ("python3.11", "Python 3.11")):
        b_ns, ratio = links.get((manual, "bloomcrawl")), \
            links.get((manual, "ratio"))
        g.add(12, f"link extraction, {what} manual, ns per byte", b_ns,
              "{:.3f} ns", "<=", 1.5, "bench_links.sh, medians")
        g.add(12, f"link extraction, {what} manual, against libxml2", ratio,
              "{:.1f}x", ">=", 10, "libxml2's time / ours")
    # issue 24: simhash (bench_simhash at n = its --n, 10^7 in a full run)
    g.add(24, "simhash index insert at 10^7 fingerprints",
          None if "add_last" not in simhash else simhash["add_last"] / 1000,
          "{:.2f} us", "<=", 1, "the last tenth of the fill")
    for what, key in (("query, no match", "query_miss"),
                      ("query, a match within 3 bits", "query_hit_d1_3")):
        v = simhash.get(key)
        g.add(24, f"simhash index {what}, 10^7 fingerprints",
              None if v is None else v / 1000, "{:.2f} us", "<=", 1,
              "bench_simhash")
    g.add(24, "simhash fingerprint, ns per byte of HTML (text fed in runs, "
          "as the crawl feeds it), on top of link extraction",
          simhash.get("simhash_runs_per_html_byte"), "{:.2f} ns", "<=", 2,
          "per byte of text: " + fmt_or_dash(
              simhash.get("simhash_runs_per_text_byte"), "{:.2f} ns") +
          " in runs, " + fmt_or_dash(
              simhash.get("simhash_whole_per_text_byte"), "{:.2f} ns") +
          " whole")
    # issue 25, sections 1 and 2: the crawl with --warc and with --state
    for site, what in (("postgres", "PostgreSQL manual"),
                       ("generated", "generated site")):
        f = features[site]
        bare = f.get("bare")
        for variant, flag, key, target, unit in (
                ("warc", "--warc", "cpu", 1.5, "CPU"),
                ("state", "--state", "wall", 1.1, "wall time")):
            v = f.get(variant)
            g.add(25, f"crawl {flag} / bare, {unit}, {what}",
                  None if v is None or bare is None else
                  v[key] / bare[key], "{:.2f}x", "<=", target,
                  "" if v is None or bare is None else
                  f"{v[key]:.3f} s against {bare[key]:.3f} s, medians of "
                  f"{v['rounds']} alternating rounds (features-{site}.md)")
    g.add(25, "crawl state: admissions to the store per second, 10^7 URLs "
          "over 10^5 hosts", state.get("state/adds_per_s"), "{:,.0f}", ">=",
          200000, "bench_state")
    # issue 25, section 3: the two-tier seen-test within 2x its filter; at
    # 10^7 from the paired rounds (scale-pairs) when they were run, else
    # (and at 10^9) from the scale rows of the two structures
    for n, label in ((n10, "10^7"), (n9, "10^9")):
        for lay in ("blocked", "classic"):
            p = pairs.get((n, lay))
            if p:
                g.add(25, f"two-tier seen-test ({lay}) / its filter, batch, "
                      f"n = {label}", num(p["ratio"]), "{:.2f}x", "<=", 2,
                      f"median of {p['rounds']} paired rounds "
                      f"({num(p['ratio_min']):.2f}x-"
                      f"{num(p['ratio_max']):.2f}x): {num(p['seen_ns']):.1f} "
                      f"ns against {num(p['filter_ns']):.1f} ns "
                      "(bench_scale --pairs)")
                continue
            two = scale_get(scale, n, f"seen-{lay}", "batch", "strings",
                            "ns_insert")
            one = scale_get(scale, n, lay, "batch", "strings", "ns_insert")
            g.add(25, f"two-tier seen-test ({lay}) / its filter, batch, "
                  f"n = {label}", None if two is None or one is None else
                  two / one, "{:.2f}x", "<=", 2,
                  "" if two is None or one is None else
                  f"{two:.1f} ns against {one:.1f} ns, the two rows of "
                  "bench_scale")
    # issue 25, section 4: the Redis seen-test against RedisBloom
    ours, theirs = redis.get("bc_redis_seen"), redis.get("BF.MADD")
    if ours and not theirs:
        g.add_text(25, "Redis seen-test keys/s >= RedisBloom BF.MADD's "
                   "(>= 0.5x if a stock server cannot)", "not measured",
                   "**not measured**", "REDISBLOOM_SRC was not set")
    else:
        note = "" if not ours or not theirs else \
            f"{ours[0]:,.0f} against {theirs[0]:,.0f} keys/s; server CPU " \
            f"{ours[1]:,.0f} against {theirs[1]:,.0f} ns a key"
        for target, what in ((1, "at least"), (0.5, "at least half of")):
            g.add(25, f"Redis seen-test keys/s {what} RedisBloom BF.MADD's, "
                  "n = 10^7", None if not ours or not theirs else
                  ours[0] / theirs[0], "{:.2f}x", ">=", target, note)
        # the same at one probe a key (bench_redis_seen --few-k 1), the
        # choice bc_redis_seen_create_k() gives where the server's CPU is
        # scarcer than its memory
        one = redis.get("seen k=1")
        g.add(25, "Redis seen-test at k = 1 (bc_redis_seen_create_k, 99.5 "
              "bits a key) keys/s at least half of BF.MADD's, n = 10^7",
              None if not one or not theirs else one[0] / theirs[0],
              "{:.2f}x", ">=", 0.5,
              "" if not one or not theirs else
              f"{one[0]:,.0f} against {theirs[0]:,.0f} keys/s; server CPU "
              f"{one[1]:,.0f} against {theirs[1]:,.0f} ns a key; ten times "
              "the default's memory")
    w("## Goals of issues 2-6, 12, 14, 24 and 25\n")
    w(g.markdown())
    w("")

    # ---- the seen-test against n -----------------------------------------
    w("## 1. The seen-test against n (p = 1 %)\n")
    w("`bench_scale`: ns per test-and-add of a new URL string (XXH3 "
      "included) and bytes per URL. *Bloom* rows are tier 1 alone; "
      "*seen-test* rows are the two tiers a crawler uses (the filter plus "
      "the LRU of 50,000 URLs); *exact* is a uthash set holding a copy of "
      "every URL. Batch calls prefetch; one run at n >= 10^8.\n")
    sizes = sorted({int(r["n"]) for r in scale})
    bloom_cols = [("classic", "scalar", "Bloom classic, scalar"),
                  ("classic", "batch", "Bloom classic, batch"),
                  ("blocked", "scalar", "Bloom blocked, scalar"),
                  ("blocked", "batch", "Bloom blocked, batch")]
    seen_cols = [("seen-classic", "scalar", "seen-test classic, scalar"),
                 ("seen-classic", "batch", "seen-test classic, batch"),
                 ("seen-blocked", "scalar", "seen-test blocked, scalar"),
                 ("seen-blocked", "batch", "seen-test blocked, batch")]
    exact_col = [("exact-uthash", "scalar", "exact set")]

    def scale_table(cols, keys, field):
        """One row per n, one column per (structure, calls)."""
        w("| n | " + " | ".join(c[2] for c in cols) + " |")
        w("|---:|" + "---:|" * len(cols))
        for n in sizes:
            cells = [fmt_or_dash(scale_get(scale, n, st, calls, keys, field),
                                 "{:.1f}") for st, calls, _ in cols]
            w(f"| {n:,} | " + " | ".join(cells) + " |")

    if sizes:
        w("ns per URL (insert):\n")
        scale_table(bloom_cols + seen_cols + exact_col, "strings", "ns_insert")
        w("\nns per lookup of a URL never added (contains; the seen-test's "
          "`bc_seen_peek` is a scalar call, its batch column stays empty):\n")
        scale_table(bloom_cols + seen_cols + exact_col, "strings",
                    "ns_lookup_absent")
        w("\nPrehashed keys (the hash outside the timed region), ns per "
          "test-and-add:\n")
        scale_table(bloom_cols, "prehashed", "ns_insert")
        w("\nMemory, bytes per URL, and the measured false-positive rate "
          "of URLs never added:\n")
        mcols = [("classic", "Bloom classic"), ("blocked", "Bloom blocked"),
                 ("seen-blocked", "seen-test blocked"),
                 ("exact-uthash", "exact set")]
        w("| n | " + " | ".join(f"{c[1]} bytes/URL" for c in mcols) +
          " | classic FPR | blocked FPR |")
        w("|---:|" + "---:|" * (len(mcols) + 2))
        for n in sizes:
            cells = []
            for s, _ in mcols:
                calls = "scalar" if s == "exact-uthash" else "batch"
                cells.append(fmt_or_dash(scale_get(scale, n, s, calls,
                                                   "strings",
                                                   "bytes_per_url"),
                                         "{:.2f}"))
            for s in ("classic", "blocked"):
                v = scale_get(scale, n, s, "batch", "strings",
                              "measured_fpr")
                cells.append(fmt_or_dash(None if v is None else v * 100,
                                         "{:.4f} %"))
            w(f"| {n:,} | " + " | ".join(cells) + " |")
        w("\n![ns per URL against n](ns_per_url.png)\n")
        w("![bytes per URL against n](bytes_per_url.png)\n")
    else:
        w("Not measured: run `scripts/bench.sh --only scale`.\n")
    if pairs:
        w("The seen-test against its own filter in paired rounds "
          "(`bench_scale --pairs`, step scale-pairs, CPU time): each round "
          "one batch pass of the filter alone and one of the seen-test, "
          "seconds apart, in alternating order; the ratio is the median of "
          "the rounds' ratios (the goal of issue 25 at 10^7 reads it):\n")
        w("| n | layout | rounds | filter ns/URL | seen-test ns/URL | "
          "seen-test / filter | range |")
        w("|---:|---|---:|---:|---:|---:|---|")
        for (n, lay), r in sorted(pairs.items()):
            w(f"| {n:,} | {lay} | {r['rounds']} | {num(r['filter_ns']):.1f} "
              f"| {num(r['seen_ns']):.1f} | {num(r['ratio']):.2f}x | "
              f"{num(r['ratio_min']):.2f}x-{num(r['ratio_max']):.2f}x |")
        w("")

    # ---- the tiers at 10^7 -----------------------------------------------
    w(f"## 2. The tiers at n = {n7:,} (bench_dedup)\n")
    if dedup:
        w("| layout | calls | keys | ns/test-and-add | ns/contains (absent) "
          "| measured FPR |")
        w("|---|---|---|---:|---:|---:|")
        for keys in ("prehashed", "strings"):
            for lay in ("classic", "blocked"):
                for calls in ("scalar", "batch"):
                    p = f"{b}/{lay}/{calls}/{keys}"
                    ta, co, fr = (dedup.get(f"{p}/ns_test_and_add"),
                                  dedup.get(f"{p}/ns_contains_absent"),
                                  dedup.get(f"{p}/measured_fpr"))
                    w(f"| {lay} | {calls} | {keys} | "
                      f"{fmt_or_dash(ta, '{:.1f}')} | "
                      f"{fmt_or_dash(co, '{:.1f}')} | "
                      f"{fmt_or_dash(None if fr is None else fr * 100, '{:.4f} %')} |")
        w("\n| LRU of 10^6 entries | ns/op |\n|---|---:|")
        for key, what in (("ns_add", "add: lookup, insert, evict"),
                          ("ns_push", "push (known absent): insert, evict"),
                          ("ns_hit", "lookup, hit"),
                          ("ns_miss", "lookup, miss")):
            w(f"| {what} | {fmt_or_dash(dedup.get('lru/' + key), '{:.1f}')} |")
        w(f"\n| exact baseline, n = {n7:,} | bytes/URL | ns/insert | "
          "ns/lookup (absent) |\n|---|---:|---:|---:|")
        e = f"exact/{n7}"
        w(f"| uthash set of the URL strings | "
          f"{fmt_or_dash(dedup.get(e + '/bytes_per_url'), '{:.1f}')} | "
          f"{fmt_or_dash(dedup.get(e + '/ns_insert'), '{:.1f}')} | "
          f"{fmt_or_dash(dedup.get(e + '/ns_lookup_absent'), '{:.1f}')} |")
        for lay in ("classic", "blocked"):
            w(f"| Bloom {lay}, p = 1 % | "
              f"{fmt_or_dash(dedup.get(f'{b}/{lay}/bytes_per_url'), '{:.2f}')}"
              " | (table above) | (table above) |")
        w("")
    else:
        w("Not measured: run `scripts/bench.sh --only dedup`.\n")

    # ---- false-positive rate ---------------------------------------------
    w("## 3. False-positive rate, measured against predicted "
      "(bench_fpr)\n")
    if fpr:
        w("n = 10^6 keys added, 10^7 keys never added queried; k chosen for "
          "each layout; the lower bound 2^-b is what any structure of b bits "
          "per key must pay (b >= log2(1/p)).\n")
        w("| bits/key | classic k | predicted | measured | blocked k | "
          "predicted | measured | counting measured | lower bound 2^-b |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        by = {}
        for r in fpr:
            by.setdefault(int(r["bits_per_key"]), {})[r["layout"]] = r
        gaps = {}
        for bits in sorted(by):
            c, bl, co = (by[bits].get("classic"), by[bits].get("blocked"),
                         by[bits].get("counting"))

            def cell(r, f):
                return "-" if r is None else f"{float(r[f]):.3e}"
            for r in (c, bl, co):
                if r is None:
                    continue
                # measured - predicted in standard errors of a binomial
                # count of false positives among the queries
                pred, meas = float(r["predicted"]), float(r["measured"])
                se = math.sqrt(pred * (1 - pred) / int(r["queries"]))
                gaps.setdefault(r["layout"], []).append(
                    ((meas - pred) / se, meas / pred - 1, bits))
            w(f"| {bits} | {c['k'] if c else '-'} | {cell(c, 'predicted')} | "
              f"{cell(c, 'measured')} | {bl['k'] if bl else '-'} | "
              f"{cell(bl, 'predicted')} | {cell(bl, 'measured')} | "
              f"{cell(co, 'measured')} | {cell(c or bl, 'lower_bound')} |")
        w("\nMeasured against predicted, in standard errors z = (measured - "
          "predicted) / sqrt(p (1 - p) / queries):\n")
        w("| layout | points | points with \\|z\\| > 3 | largest \\|z\\| "
          "(bits/key) | mean relative gap |")
        w("|---|---:|---:|---:|---:|")
        for lay, gl in gaps.items():
            zmax = max(gl, key=lambda t: abs(t[0]))
            w(f"| {lay} | {len(gl)} | {sum(abs(t[0]) > 3 for t in gl)} | "
              f"{zmax[0]:+.1f} ({zmax[2]}) | "
              f"{statistics.mean(t[1] for t in gl) * 100:+.2f} % |")
        w("")
        w("![false-positive rate against bits per key](fpr.png)\n")
    else:
        w("Not measured: run `scripts/bench.sh --only fpr`.\n")

    # ---- normalizer, urldedup ---------------------------------------------
    w("## 4. URL normalization and urldedup\n")
    if url:
        w("| contender (bench_url) | M pairs/s | ns/pair |")
        w("|---|---:|---:|")
        for slug, what in (
                ("bloomcrawl_base_once", "bloomcrawl, base parsed once per "
                 "page"),
                ("bloomcrawl_base_per_href", "bloomcrawl, base parsed per "
                 "href"),
                ("libcurl_base_set", "libcurl, base set per href"),
                ("libcurl_base_dup", "libcurl, base duplicated per href")):
            ps = url.get(f"url/{slug}/pairs_per_s")
            ns = url.get(f"url/{slug}/ns_per_pair")
            w(f"| {what} | {fmt_or_dash(None if ps is None else ps / 1e6, '{:.2f}')}"
              f" | {fmt_or_dash(ns, '{:.1f}')} |")
        w("")
    if urldedup:
        w("| urldedup run | lines | wall s | CPU s | M lines/s | lines out |")
        w("|---:|---:|---:|---:|---:|---:|")
        for r in urldedup:
            w(f"| {r['run']} | {int(r['lines']):,} | {r['wall_s']} | "
              f"{r['cpu_s']} | {float(r['lines_per_s']) / 1e6:.2f} | "
              f"{int(r['lines_out']):,} |")
        w("")
    if not url and not urldedup:
        w("Not measured: run `scripts/bench.sh --only url,urldedup`.\n")

    # ---- frontier ----------------------------------------------------------
    w("## 5. The frontier (bench_frontier)\n")
    if frontier:
        w("| measure | value |\n|---|---:|")
        for key, what, f in (
                ("adds_per_s", "adds per second (normalize, limits, "
                 "seen-test, enqueue)", "{:,.0f}"),
                ("next_done_per_s", "next+done pairs per second", "{:,.0f}"),
                ("urls", "URLs added", "{:,.0f}"),
                ("hosts", "hosts", "{:,.0f}"),
                ("admitted", "admitted", "{:,.0f}"),
                ("rejected_seen", "refused as already seen", "{:,.0f}"),
                ("avg_url_bytes", "average URL length, bytes", "{:.1f}"),
                ("queue_bytes_per_url", "queue bytes per queued URL",
                 "{:.1f}"),
                ("heap_bytes_per_url", "heap bytes per queued URL", "{:.1f}"),
                ("peak_rss", "peak RSS, MiB", "{:.0f}")):
            w(f"| {what} | {fmt_or_dash(frontier.get('frontier/' + key), f)} |")
        w("")
    else:
        w("Not measured: run `scripts/bench.sh --only frontier`.\n")

    # ---- crawl -------------------------------------------------------------
    w("## 6. The crawl against wget2 (bench_crawl.sh)\n")
    if med:
        w("Full report with every run and the exact commands: "
          "[crawl.md](crawl.md).\n")
        w("| crawler | pages | requests | wall s | pages/s | CPU s per 1,000 "
          "pages | peak RSS MiB |")
        w("|---|---:|---:|---:|---:|---:|---:|")
        for tool, r in med.items():
            w(f"| {tool} | {r['pages_log']:,.0f} | {r['requests']:,.0f} | "
              f"{r['wall_s']:.2f} | {r['pages_per_s']:,.0f} | "
              f"{r['cpu_ms_per_page']:.3f} | {r['maxrss_mib']:.1f} |")
        w("")
    else:
        w("Not measured: run `scripts/bench.sh --only crawl`.\n")

    # ---- the crawl with everything on ----------------------------------------
    w("## 6b. The crawl with --warc and --state (bench_warc.sh)\n")
    if any(features.values()):
        w("The same crawl bare, with `--warc`, with `--state` (a fresh state "
          "each run) and with both, in rotating order; medians over the "
          "rounds. Printed tables: features-postgres.md, "
          "features-generated.md.\n")
        w("| site | crawl | rounds | CPU s | wall s | CPU / bare | wall / "
          "bare | WARC bytes per page |")
        w("|---|---|---:|---:|---:|---:|---:|---:|")
        for site, f in features.items():
            bare = f.get("bare")
            for variant in ("bare", "warc", "state", "all"):
                v = f.get(variant)
                if v is None or bare is None:
                    continue
                name = {"bare": "bare", "warc": "--warc", "state": "--state",
                        "all": "--warc --state"}[variant]
                bpp = f"{v['warc_bytes'] / v['pages']:,.0f}" \
                    if v["warc_bytes"] and v["pages"] else "-"
                w(f"| {site} | {name} | {v['rounds']} | {v['cpu']:.3f} | "
                  f"{v['wall']:.3f} | {v['cpu'] / bare['cpu']:.2f}x | "
                  f"{v['wall'] / bare['wall']:.2f}x | {bpp} |")
        w("")
    else:
        w("Not measured: run `scripts/bench.sh --only features`.\n")

    # ---- billion -------------------------------------------------------------
    w("## 7. The billion-URL run (`scripts/bench.sh --billion`)\n")
    if any(billion.values()):
        w("10^9 distinct generated URL strings into one seen-test sized for "
          "n = 10^9, p = 1 % (`bc_seen_test_and_add_batch`, the default LRU "
          "of 50,000 URLs), then `bc_seen_peek` of 10^7 URLs never added. "
          "One run per layout.\n")
        w("| layout | k | filter bytes | peak RSS | wall s | URLs/s (wall) | "
          "ns/URL in the seen-test | fill | predicted FPR | measured FPR |")
        w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for lay, rows in billion.items():
            for r in rows:
                w(f"| {lay} | {r['k']} | {int(r['bytes']):,} "
                  f"({int(r['bytes']) / 1e9:.3f} GB) | "
                  f"{float(r['peak_rss_bytes']) / 1e9:.3f} GB | "
                  f"{float(r['wall_s']):.0f} | "
                  f"{float(r['urls_per_s_wall']) / 1e6:.2f} M | "
                  f"{float(r.get('ns_per_url_seen') or 'nan'):.1f} | "
                  f"{float(r['fill']):.4f} | "
                  f"{float(r['predicted_fpr']) * 100:.4f} % | "
                  f"{float(r['measured_fpr']) * 100:.4f} % |")
        w("")
    else:
        w("Not run: `scripts/bench.sh --billion` (about an hour).\n")

    with open(os.path.join(results, "summary.md"), "w") as f:
        f.write("\n".join(out) + "\n")


def crawl_medians(rows):
    """Per crawler, the median of each numeric column over its runs."""
    by = {}
    for r in rows:
        by.setdefault(r["tool"], []).append(r)
    med = {}
    for tool, rs in by.items():
        med[tool] = {}
        for key in ("pages_log", "requests", "wall_s", "pages_per_s",
                    "cpu_ms_per_page", "maxrss_mib"):
            vals = [num(r[key]) for r in rs if num(r.get(key)) is not None]
            med[tool][key] = statistics.median(vals) if vals else float("nan")
    return med


if __name__ == "__main__":
    main()
