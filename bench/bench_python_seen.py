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

The set side does per URL what RFPDupeFilter.request_seen() does after
the fingerprint's canonicalization: sha1 of the URL's UTF-8 bytes, its
hexdigest, a membership test and an add. The Seen side uses the package's
defaults, which a Scrapy user would keep: Seen(N, 0.01), an LRU of 50,000
recent keys.

The two sides run RUNS times each (5 by default), alternating, each run
a fresh process; the medians are compared. "seen-parts" (not part of the
comparison) prints what the Seen side's memory is made of.

Usage: PYTHONPATH=build/python python3 bench/bench_python_seen.py [N [RUNS]]
       PYTHONPATH=build/python python3 bench/bench_python_seen.py \
           seen-parts [N]
"""
import hashlib
import subprocess
import sys
import time


def rss_kib(field="VmRSS:"):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def peak_kib(before):
    """The peak RSS (VmHWM) above the reading before: what the adds held
    at their most, temporary buffers included (the URL list was made,
    and the peak reached, before that reading)."""
    return rss_kib("VmHWM:") - before


def urls(n):
    return ["https://www.example%d.com/path/to/page-%d.html?id=%d"
            % (i % 5000, i, i * 7) for i in range(n)]


def run_set(n):
    keys = urls(n)
    before = rss_kib()
    t0 = time.perf_counter()
    c0 = time.process_time()
    fingerprints = set()
    dup = 0
    for url in keys:
        fp = hashlib.sha1(url.encode()).hexdigest()
        if fp in fingerprints:
            dup += 1
        else:
            fingerprints.add(fp)
    t = time.perf_counter() - t0
    cpu = time.process_time() - c0
    assert dup == 0 and len(fingerprints) == n
    return t, cpu, rss_kib() - before, peak_kib(before)


def run_seen(n, lru=50000):
    import bloomcrawl
    keys = urls(n)
    before = rss_kib()
    t0 = time.perf_counter()
    c0 = time.process_time()
    seen = bloomcrawl.Seen(n, 0.01, lru=lru)
    verdicts = seen.test_and_add_batch(keys)
    t = time.perf_counter() - t0
    cpu = time.process_time() - c0
    # Every URL is distinct: NEW, or PROBABLY_SEEN for a false positive of
    # the filter that the LRU (50,000 recent keys) cannot disprove.
    new = verdicts.count(bloomcrawl.Verdict.NEW)
    probably = verdicts.count(bloomcrawl.Verdict.PROBABLY_SEEN)
    assert new + probably == n
    sys.stderr.write("seen: %d NEW, %d PROBABLY_SEEN (false positives)\n"
                     % (new, probably))
    del verdicts
    return t, cpu, rss_kib() - before, peak_kib(before)


def run_seen_parts(n):
    """What the Seen side's RSS growth is made of: the same run with no
    LRU (lru=0: the Bloom filter alone) and with the default LRU, each in
    its own process (in one process, the second Seen would reuse pages
    the first one freed)."""
    res = {}
    for mode in ("seen", "seen-lru0"):
        out = subprocess.run([sys.executable, __file__, mode, str(n)],
                             check=True, capture_output=True, text=True)
        res[mode] = int(out.stdout.split()[2])
    print("Seen(%d, 0.01): %d KiB RSS growth; with lru=0 (the filter "
          "alone): %d KiB; so the LRU of 50,000: %d KiB"
          % (n, res["seen"], res["seen-lru0"],
             res["seen"] - res["seen-lru0"]))


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def main():
    if len(sys.argv) == 3 and sys.argv[1] in ("set", "seen", "seen-lru0"):
        n = int(sys.argv[2])
        if sys.argv[1] == "set":
            t, cpu, kib, peak = run_set(n)
        else:
            t, cpu, kib, peak = run_seen(n, 0 if "lru0" in sys.argv[1]
                                         else 50000)
        print("%.3f %.3f %d %d" % (t, cpu, kib, peak))
        return
    if len(sys.argv) >= 2 and sys.argv[1] == "seen-parts":
        run_seen_parts(int(sys.argv[2]) if len(sys.argv) > 2 else 1000000)
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    res = {"set": [], "seen": []}
    for _ in range(runs):
        for mode in ("set", "seen"):
            out = subprocess.run([sys.executable, __file__, mode, str(n)],
                                 check=True, capture_output=True, text=True)
            t, cpu, kib, peak = out.stdout.split()
            res[mode].append((float(t), float(cpu), int(kib), int(peak)))
            sys.stderr.write(out.stderr)
            print("%-5s %d URLs: %.3f s (CPU %.3f s), %.1f MiB RSS growth, "
                  "%.1f MiB peak" % (mode, n, float(t), float(cpu),
                                     int(kib) / 1024, int(peak) / 1024))
    med = {m: tuple(median([x[i] for x in r]) for i in range(4))
           for m, r in res.items()}
    for m in ("set", "seen"):
        print("median %-5s: %.3f s (CPU %.3f s), %.1f MiB RSS growth, "
              "%.1f MiB peak" % (m, med[m][0], med[m][1], med[m][2] / 1024,
                                 med[m][3] / 1024))
    print("Seen.test_and_add_batch (medians of %d runs): %.1fx faster "
          "(CPU time: %.1fx), %.1fx less memory (peak: %.1fx)"
          % (runs, med["set"][0] / med["seen"][0],
             med["set"][1] / med["seen"][1],
             med["set"][2] / max(med["seen"][2], 1),
             med["set"][3] / max(med["seen"][3], 1)))


if __name__ == "__main__":
    main()
