#!/usr/bin/env python3
"""perf_breakdown.py - where a crawl's CPU time goes, by pipeline stage.

    perf script -F comm,tid,ip,sym,dso -i perf.data \
        | python3 bench/perf_breakdown.py [--cpu-seconds S] [--pages N]

Reads the call stacks of ``perf record --call-graph dwarf`` (as printed by
``perf script``) of one ``crawl`` run and charges each sample to one stage
of the pipeline: walking the stack from the sampled function outwards, the
first frame that belongs to a stage decides (so a malloc called by the
normalizer is normalization, a send() called by libcurl is the fetcher).
Prints a Markdown table: stage, share of samples, and -- given the run's
CPU seconds (user+sys) and page count -- CPU seconds and microseconds per
page.  Then the ten hottest functions by self time.
"""

import argparse
import collections
import re
import sys

# (stage, test on one frame "symbol (dso)"), checked in this order per frame.
STAGES = [
    ("normalization (frontier/url: bc_url_*)",
     lambda s, d: s.startswith("bc_url_") or s in ("copy_component",)),
    ("seen-test (dedup: Bloom filter + LRU)",
     lambda s, d: s.startswith(("bc_seen_", "bc_bloom_", "bc_lru_"))
     or s in ("lookup.isra.0", "lookup")),
    ("frontier (admission, queues, politeness) + crawl loop",
     lambda s, d: s.startswith("bc_frontier_") or s.startswith("host_")
     or s in ("admit", "on_link", "link_bridge", "dispatch", "on_done")),
    ("link extraction: WHATWG tokenizer (fetcher/html_tokenizer.c)",
     lambda s, d: s.startswith("bc_html_") or s in (
         "find1", "find3", "emit_tag", "value_put", "name_put",
         "attr_name_put", "attr_name_done", "attr_begin", "buf_room")),
    ("link extraction: tags to links (fetcher/links.c)",
     lambda s, d: s.startswith("bc_links_") or s in (
         "on_token", "on_start", "on_end", "on_link_tag", "html_start",
         "feed_input", "report", "attr", "rel_flags", "token_flags")),
    ("fetcher: libcurl, sockets, kernel network I/O",
     lambda s, d: "libcurl" in d or s.startswith(("curl_", "bc_fetcher_"))
     or s in ("on_write", "on_header")),
]
OTHER = "other (startup, libc/kernel outside the stages)"
FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpu-seconds", type=float, default=0.0)
    ap.add_argument("--pages", type=int, default=0)
    ap.add_argument("--comm", default="crawl",
                    help="only samples of this command (default crawl)")
    a = ap.parse_args()

    stages = collections.Counter()
    selfs = collections.Counter()
    total = 0
    frames, keep = [], False

    def flush():
        nonlocal total
        if not keep or not frames:
            return
        total += 1
        selfs["%s (%s)" % (frames[0][0], frames[0][1].rsplit("/", 1)[-1])] += 1
        for sym, dso in frames:
            for name, test in STAGES:
                if test(sym, dso):
                    stages[name] += 1
                    return
        stages[OTHER] += 1

    for line in sys.stdin:
        if not line.strip():
            flush()
            frames, keep = [], False
        elif not line[0].isspace():
            keep = line.split()[0] == a.comm
        else:
            m = FRAME.match(line)
            if m:
                frames.append((m.group(1).split("+0x")[0], m.group(2)))
    flush()
    if total == 0:
        sys.exit("perf_breakdown: no samples of %r" % a.comm)

    per = a.cpu_seconds / total if a.cpu_seconds else 0.0
    print("| stage | share of CPU samples | CPU s | µs per page |")
    print("|---|---:|---:|---:|")
    for name, _ in STAGES + [(OTHER, None)]:
        n = stages[name]
        cpu = n * per
        us = "%.0f" % (cpu / a.pages * 1e6) if per and a.pages else "-"
        print("| %s | %.1f %% | %s | %s |" % (
            name, 100.0 * n / total, "%.2f" % cpu if per else "-", us))
    print("| total (%d samples) | 100 %% | %s | %s |" % (
        total, "%.2f" % a.cpu_seconds if per else "-",
        "%.0f" % (a.cpu_seconds / a.pages * 1e6) if per and a.pages else "-"))
    print("\nHottest functions (self time):\n")
    print("| function (object) | share |")
    print("|---|---:|")
    for sym, n in selfs.most_common(10):
        print("| `%s` | %.1f %% |" % (sym, 100.0 * n / total))


if __name__ == "__main__":
    main()
