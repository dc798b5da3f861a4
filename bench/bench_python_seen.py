#!/usr/bin/env python3
"""bench/bench_python_seen.py - bloomcrawl.Seen.test_and_add_batch against
the dupefilter of Scrapy (RFPDupeFilter: a Python set of SHA-1 hex
fingerprints), on N distinct URL strings (10^6 by default).

Each side runs in its own process, so its memory is its own: the resident
set growth (VmRSS from /proc/self/status) from before the structure is
made to after every URL went in. The URL list is made before the first
reading and is not counted; the time is that of the adds only (the
SHA-1 fingerprints included, as Scrapy computes them per request; Scrapy
also canonicalizes the URL first, left out here, which favours the set).

Usage: PYTHONPATH=build/python python3 bench/bench_python_seen.py [N]
"""
import hashlib
import subprocess
import sys
import time


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def urls(n):
    return ["https://www.example%d.com/path/to/page-%d.html?id=%d"
            % (i % 5000, i, i * 7) for i in range(n)]


def run_set(n):
    keys = urls(n)
    before = rss_kib()
    t0 = time.perf_counter()
    fingerprints = set()
    dup = 0
    for url in keys:
        fp = hashlib.sha1(url.encode()).hexdigest()
        if fp in fingerprints:
            dup += 1
        else:
            fingerprints.add(fp)
    t = time.perf_counter() - t0
    assert dup == 0 and len(fingerprints) == n
    return t, rss_kib() - before


def run_seen(n):
    import bloomcrawl
    keys = urls(n)
    before = rss_kib()
    t0 = time.perf_counter()
    seen = bloomcrawl.Seen(n, 0.01)
    verdicts = seen.test_and_add_batch(keys)
    t = time.perf_counter() - t0
    # Every URL is distinct: NEW, or PROBABLY_SEEN for a false positive of
    # the filter that the LRU (50,000 recent keys) cannot disprove.
    new = verdicts.count(bloomcrawl.Verdict.NEW)
    probably = verdicts.count(bloomcrawl.Verdict.PROBABLY_SEEN)
    assert new + probably == n
    sys.stderr.write("seen: %d NEW, %d PROBABLY_SEEN (false positives)\n"
                     % (new, probably))
    del verdicts
    return t, rss_kib() - before


def main():
    if len(sys.argv) == 3:
        fn = run_set if sys.argv[1] == "set" else run_seen
        t, kib = fn(int(sys.argv[2]))
        print("%.3f %d" % (t, kib))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    res = {}
    for mode in ("set", "seen"):
        out = subprocess.run([sys.executable, __file__, mode, str(n)],
                             check=True, capture_output=True, text=True)
        t, kib = out.stdout.split()
        res[mode] = (float(t), int(kib))
        sys.stderr.write(out.stderr)
        print("%-5s %d URLs: %.3f s, %.1f MiB RSS growth"
              % (mode, n, float(t), int(kib) / 1024))
    print("Seen.test_and_add_batch: %.1fx faster, %.1fx less memory"
          % (res["set"][0] / res["seen"][0],
             res["set"][1] / max(res["seen"][1], 1)))


if __name__ == "__main__":
    main()
