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
page.  Then the same samples by the object their innermost frame (the
function running when sampled) is in -- bloomcrawl's own code, split into
the HTML tokenizer and the rest, libc, the kernel, libcurl, sqlite, other
libraries -- and the ten hottest functions by self time.
"""

import argparse
import collections
import re
import sys

# libc's wrappers of the socket and poll system calls: perf's DWARF unwinder
# stops in Debian's libc, so a sample in the kernel under one of these has no
# caller; only libcurl calls them in a crawl.
SOCKET_CALLS = ("__libc_send", "__libc_recv", "__GI___poll", "__poll",
                "__libc_sendto", "__libc_recvfrom", "__libc_connect",
                "__libc_sendmsg", "__libc_recvmsg", "__GI___socket",
                "__socket", "__GI___close", "__GI___getsockopt",
                "__GI___setsockopt", "__GI___getsockname", "__GI___getpeername")

# (stage, test on one frame "symbol (dso)"), checked in this order per frame.
STAGES = [
    ("process start: dynamic linking, Bloom filter sizing",
     lambda s, d: "ld-linux" in d or s.startswith("_dl_") or s in (
         "bc_bloom_size", "bc_bloom_fpr_blocked", "blocked_best_k",
         "size_blocked")),
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
     or s in ("on_write", "on_header") or s in SOCKET_CALLS),
]
OTHER = "other (startup, libc/kernel outside the stages)"

TOKENIZER = dict(STAGES)[
    "link extraction: WHATWG tokenizer (fetcher/html_tokenizer.c)"]
OBJECTS = [
    "bloomcrawl: HTML tokenizer (fetcher/html_tokenizer.c)",
    "bloomcrawl: all its other code (crawl binary)",
    "libc (libc.so)",
    "kernel",
    "libcurl",
    "sqlite (libsqlite3)",
    "libxml2",
    "other objects",
]


def object_of(sym, dso):
    """The OBJECTS row of a sampled (innermost) frame."""
    base = dso.rsplit("/", 1)[-1]
    if "kernel" in base or base.startswith("[") or sym.startswith(
            ("entry_SYSCALL", "__x64_sys")):
        return OBJECTS[3]
    if base.startswith("libc.so") or base.startswith("libc-"):
        return OBJECTS[2]
    if base.startswith("libcurl"):
        return OBJECTS[4]
    if base.startswith("libsqlite3"):
        return OBJECTS[5]
    if base.startswith("libxml2"):
        return OBJECTS[6]
    if base == "crawl" or base.startswith("libbloomcrawl"):
        return OBJECTS[0] if TOKENIZER(sym, dso) else OBJECTS[1]
    return OBJECTS[7]
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
    objs = collections.Counter()
    other_objs = collections.Counter()
    total = 0
    frames, keep = [], False

    def flush():
        nonlocal total
        if not keep or not frames:
            return
        total += 1
        selfs["%s (%s)" % (frames[0][0], frames[0][1].rsplit("/", 1)[-1])] += 1
        # perf lists a function inlined into another as a frame of its own,
        # object "(inlined)", before the real one: the object is that one's
        real = next((f for f in frames if f[1] != "inlined"), frames[0])
        obj = object_of(*real)
        objs[obj] += 1
        if obj == OBJECTS[-1]:
            other_objs[real[1].rsplit("/", 1)[-1]] += 1
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
    print("\nBy object (self time: where the sampled function lives):\n")
    print("| object | share of CPU samples | µs per page |")
    print("|---|---:|---:|")
    for name in OBJECTS:
        n = objs[name]
        us = ("%.1f" % (n * per / a.pages * 1e6) if per and a.pages
              else "-")
        extra = ""
        if name == OBJECTS[-1] and other_objs:
            extra = ": " + ", ".join("%s %.1f %%" % (o, 100.0 * k / total)
                                     for o, k in other_objs.most_common(5))
        print("| %s%s | %.1f %% | %s |" % (name, extra, 100.0 * n / total, us))
    print("\nHottest functions (self time):\n")
    print("| function (object) | share |")
    print("|---|---:|")
    for sym, n in selfs.most_common(15):
        print("| `%s` | %.1f %% |" % (sym, 100.0 * n / total))


if __name__ == "__main__":
    main()
