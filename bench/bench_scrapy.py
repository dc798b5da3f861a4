#!/usr/bin/env python3
"""bench/bench_scrapy.py - pages/s of one Scrapy CrawlSpider over the
sample site (examples/site, served by serve.py on 127.0.0.1) with
Scrapy's default scheduler and with bloomcrawl.scrapy.FrontierScheduler.

The spider is the tests' (python/tests/scrapy_site_spider.py: every
link followed within the site's domain, DEPTH_LIMIT 8, no retries,
DOWNLOAD_TIMEOUT 2 s, CONCURRENT_REQUESTS 16 and 16 per domain), with
BloomDupeFilter on both sides, so the pages fetched are the same and the
scheduler is the only difference. Politeness is the same: no delay
(DOWNLOAD_DELAY 0; BLOOMCRAWL_DELAY 0), 16 requests at a time per host
(CONCURRENT_REQUESTS_PER_DOMAIN; BLOOMCRAWL_PER_HOST 16), robots.txt
obeyed (Scrapy's RobotsTxtMiddleware; the frontier's own). No JOBDIR.

pages/s = the spider's responses / the crawl's elapsed_time_seconds
(Scrapy's stat: from the spider's opening to its closing); CPU a page =
the Scrapy process's user + system time (its start included) / its
responses. The sides
alternate, RUNS each (3 by default), each run a fresh Scrapy process and
a fresh server; the medians are compared.

Usage: PYTHONPATH=build/python python3 bench/bench_scrapy.py [PAGES [RUNS]] \
           [--set NAME=JSON ...]        # more settings, frontier side
       ... bench/bench_scrapy.py --profile PAGES   # cProfile of one
                                                   # FrontierScheduler run
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPIDER = os.path.join(ROOT, "python", "tests", "scrapy_site_spider.py")
sys.path.insert(0, os.path.join(ROOT, "tests"))
import sample_site  # noqa: E402

SIDES = {"default": "scrapy.core.scheduler.Scheduler",
         "frontier": "bloomcrawl.scrapy.FrontierScheduler"}


def run(sitedir, manifest, side, workdir, n, profile=None, sets=()):
    log = os.path.join(workdir, "access-%s-%d.jsonl" % (side, n))
    out = os.path.join(workdir, "out-%s-%d.jsonl" % (side, n))
    server = sample_site.Server(sitedir, log,
                                options=["--slow-seconds", "3"])
    try:
        cmd = [sys.executable] + (
            ["-m", "cProfile", "-s", "tottime", "-o", profile]
            if profile else []) + [
            SPIDER, server.args[-1], manifest["agent"], "bloomcrawl.test",
            out, "bloomcrawl.scrapy.BloomDupeFilter", "8",
            "--scheduler", SIDES[side], "--per-host", "16"]
        for x in sets:
            cmd += ["--set", x]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (os.environ.get("PYTHONPATH"),
                        os.path.dirname(SPIDER)) if p))
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=600)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if c.returncode != 0:
            sys.exit("%s run failed:\n%s" % (side, c.stderr[-3000:]))
    finally:
        server.stop()
    with open(out) as f:
        rows = [json.loads(x) for x in f]
    stats = rows[-1]["stats"]
    pages = len(rows) - 1
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return pages, stats["elapsed_time_seconds"], cpu


def main():
    args, sets = [], []
    argv = sys.argv[1:]
    while argv:
        a = argv.pop(0)
        if a == "--set":
            sets.append(argv.pop(0))
        else:
            args.append(a)
    profile = args and args[0] == "--profile"
    if profile:
        args = args[1:]
    pages = int(args[0]) if args else 2000
    runs = int(args[1]) if len(args) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        sitedir = os.path.join(tmp, "site")
        subprocess.run([sys.executable, os.path.join(sample_site.SITE,
                                                     "gensite.py"),
                        "--pages", str(pages), sitedir], check=True,
                       capture_output=True)
        with open(os.path.join(sitedir, "manifest.json")) as f:
            manifest = json.load(f)
        if profile:
            prof = os.path.join(tmp, "frontier.prof")
            # Under cProfile __main__ is cProfile: the resolver by its
            # module's name.
            run(sitedir, manifest, "frontier", tmp, 0, prof, sets=[
                'DNS_RESOLVER="scrapy_site_spider.LocalResolver"'])
            import pstats
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
            return
        rates = {side: [] for side in SIDES}
        cpus = {side: [] for side in SIDES}
        for n in range(runs):
            for side in SIDES:
                got, secs, cpu = run(sitedir, manifest, side, tmp, n,
                                     sets=sets if side == "frontier"
                                     else ())
                rates[side].append(got / secs)
                cpus[side].append(cpu / got)
                print("run %d %-8s %5d pages in %6.2f s: %7.1f pages/s, "
                      "CPU %.2f s (%.2f ms a page)"
                      % (n + 1, side, got, secs, got / secs, cpu,
                         1000 * cpu / got), flush=True)
        med = {side: statistics.median(r) for side, r in rates.items()}
        mcpu = {side: statistics.median(r) for side, r in cpus.items()}
        if sets:
            print("frontier side with --set %s" % " --set ".join(sets))
        for side in SIDES:
            print("median %-8s %7.1f pages/s, %.2f ms CPU a page (%s)" % (
                side, med[side], 1000 * mcpu[side], SIDES[side]))
        print("ratio frontier/default: %.2f pages/s, %.2f CPU a page"
              % (med["frontier"] / med["default"],
                 mcpu["frontier"] / mcpu["default"]))


if __name__ == "__main__":
    main()
