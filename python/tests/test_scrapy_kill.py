"""kill -9 of a real Scrapy crawl of the sample site (examples/site), at
5 random moments, each time resumed with the same command and JOBDIR
until it finishes (issue 23 section 3; DESIGN 16.3). Its own ctest
entry (python_scrapy_kill): about 35 s.

With bloomcrawl.scrapy.FrontierScheduler: every page reachable within
the depth limit is fetched (the "every reachable page" rule of
examples/site/check_crawl.py, judged from the server's access log), and
a request is sent twice only when it was in flight at a kill: the
repeats are counted, printed, and at most kills x CONCURRENT_REQUESTS.

With Scrapy's own scheduler (SCHEDULER left alone, JOBDIR set, its
RFPDupeFilter) the same kills show the loss this package fixes: its disk
queue's index (requests.queue/active.json) is written on close only, so
each resume starts with an empty queue (asserted: Scrapy logs no
"Resuming crawl"), and the crawl starts again from its start request:
pages whose fingerprints reached requests.seen are filtered and what
only they led to is never fetched, the others are fetched again. Both
are printed and asserted as a KNOWN LOSS (one of them at least), so the
contrast stays visible in the output; should a seed show neither, the
test is xfailed with the reason.

The kill moments are random but seeded: BLOOMCRAWL_KILL_SEED=N replays
a run (the seed is printed). A kill comes after a random number of
requests in the access log since the (re)start, so it falls mid-crawl.
"""
import json
import os
import random
import re
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("scrapy")

import bloomcrawl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
from test_scrapy_site import (DEPTH, required_pages, sample_site,  # noqa
                              site)

KILLS = 5
CONCURRENCY = 8
HOSTS = ("www.bloomcrawl.test", "blog.bloomcrawl.test")  # in DEPTH# FrontierScheduler's log line on resume, and Scrapy's scheduler's (only
# when its queue is not empty).
RESUMED = re.compile(r"Resuming crawl from .* (\d+) of them in flight")
SCRAPY_RESUMED = re.compile(r"Resuming crawl \((\d+) requests scheduled\)")


def log_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def killed_crawl(sitedir, manifest, tmp_path, scheduler, rng, name):
    """Crawl with scheduler and a JOBDIR, kill -9 it KILLS times (after a
    random 5..30 requests of each run), resume it with the same command
    until it exits. Returns (canonical URLs of the page requests in
    order, the host of each robots.txt request, kills made, the port,
    the log (stderr) of each run)."""
    log = str(tmp_path / ("%s-access.jsonl" % name))
    out = str(tmp_path / ("%s-out.jsonl" % name))
    jobdir = str(tmp_path / ("%s-job" % name))
    server = sample_site.Server(sitedir, log)
    kills, runs, logs = 0, 0, []
    try:
        cmd = [sys.executable, os.path.join(HERE, "scrapy_site_spider.py"),
               server.args[-1], manifest["agent"], "bloomcrawl.test", out,
               "scrapy.dupefilters.RFPDupeFilter" if scheduler is None
               else "bloomcrawl.scrapy.BloomDupeFilter", str(DEPTH), jobdir,
               "--checker", "--concurrency", str(CONCURRENCY)]
        if scheduler:
            cmd += ["--scheduler", scheduler, "--per-host",
                    str(CONCURRENCY)]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            p for p in (os.environ.get("PYTHONPATH"), HERE) if p))
        while True:
            runs += 1
            assert runs <= KILLS + 3, "%s: the crawl never ends" % name
            start = log_lines(log)
            target = start + rng.randint(5, 30) if kills < KILLS else None
            errlog = str(tmp_path / ("%s-run%d.log" % (name, runs)))
            with open(errlog, "w") as errf:
                proc = subprocess.Popen(cmd, env=env,
                                        stdout=subprocess.DEVNULL,
                                        stderr=errf)
            deadline = time.monotonic() + 120
            while proc.poll() is None and time.monotonic() < deadline:
                if target is not None and log_lines(log) >= target:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
                    break
                time.sleep(0.005)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                pytest.fail("%s: run %d did not end" % (name, runs))
            with open(errlog) as f:
                err = f.read()
            logs.append(err)
            if proc.returncode == -signal.SIGKILL:
                continue
            # Finished: after the last kill, or before its kill moment.
            assert proc.returncode == 0, err[-3000:]
            break
    finally:
        server.stop()
    reqs = sample_site.page_requests(log)
    with open(log) as f:
        entries = [json.loads(x) for x in f if x.strip()]
    robots = [e["host"].lower() for e in entries
              if e["path"] == "/robots.txt"]
    return ([bloomcrawl.normalize("http://%s%s" % r) for r in reqs],
            robots, kills, server.port, logs)


@pytest.fixture(scope="module")
def rng_seed():
    seed = int(os.environ.get("BLOOMCRAWL_KILL_SEED",
                              random.SystemRandom().randrange(1 << 31)))
    print("kill moments: BLOOMCRAWL_KILL_SEED=%d" % seed)
    return seed


def test_frontier_scheduler_loses_nothing(site, tmp_path, rng_seed):
    sitedir, manifest = site
    fetched, robots, kills, port, logs = killed_crawl(
        sitedir, manifest, tmp_path, "bloomcrawl.scrapy.FrontierScheduler",
        random.Random(rng_seed), "frontier")
    refetched = [int(m.group(1)) for m in map(RESUMED.search, logs) if m]
    print("in flight at the last commit before each kill, queued again "
          "on resume: %s" % refetched)
    missing = required_pages(manifest, port) - set(fetched)
    repeats = len(fetched) - len(set(fetched))
    robots_repeats = len(robots) - len(set(robots))
    print("FrontierScheduler (seed %d): %d kills, %d page requests, %d "
          "distinct, %d fetched again after a kill and %d robots.txt "
          "(bound %d), %d reachable pages missing"
          % (rng_seed, kills, len(fetched), len(set(fetched)), repeats,
             robots_repeats, kills * CONCURRENCY, len(missing)))
    assert kills == KILLS
    assert missing == set(), sorted(missing)
    # Fetched again: only what was in flight at a kill, at most
    # CONCURRENT_REQUESTS (BLOOMCRAWL_MAX_IN_PROGRESS's default) a kill,
    # robots.txt included (a request handed out is committed at the end
    # of the reactor's turn: one that reached the server before that is
    # in flight at the kill too, and queued again, but not in the
    # frontier's refetched count).
    assert len(refetched) == kills
    assert all(n <= CONCURRENCY for n in refetched)
    assert repeats + robots_repeats <= kills * CONCURRENCY
    disallowed = {u.replace("{PORT}", str(port))
                  for u in manifest["disallowed"]}
    assert disallowed & set(fetched) == set()


def test_scrapy_scheduler_known_loss(site, tmp_path, rng_seed):
    """Scrapy's scheduler after each kill: the queue it resumes with
    (logged by Scrapy when not empty), the pages fetched again beyond
    what was in flight (the queue lost: the crawl starts again from its
    start request) and the pages never fetched (filtered by the
    fingerprints requests.seen kept). Pages RFPDupeFilter never fetches
    even without a kill (w3lib's canonicalize_url sorts the query and
    merges two pages of the site: test_scrapy_site.py) are set apart."""
    from w3lib.url import canonicalize_url
    sitedir, manifest = site
    fetched, robots, kills, port, logs = killed_crawl(
        sitedir, manifest, tmp_path, None, random.Random(rng_seed),
        "scrapy")
    queues = [int(m.group(1)) if m else 0
              for m in map(SCRAPY_RESUMED.search, logs[1:])]
    missing = required_pages(manifest, port) - set(fetched)
    merged = {u for u in missing if canonicalize_url(u) in
              {canonicalize_url(f) for f in fetched}}
    lost = missing - merged
    repeats = len(fetched) - len(set(fetched))
    beyond = max(0, repeats - kills * CONCURRENCY)
    print("KNOWN LOSS: Scrapy's scheduler with JOBDIR (seed %d): %d kills, "
          "requests queued at each resume %s, %d page requests for %d "
          "pages: %d fetched again beyond the in-flight bound (%d), %d "
          "reachable pages never fetched (and %d its dupefilter merges "
          "anyway)" % (rng_seed, kills, queues, len(fetched),
                       len(set(fetched)), beyond, kills * CONCURRENCY,
                       len(lost), len(merged)))
    # Its disk queue's index is written on close only: after kill -9 it
    # resumes with no queue at all.
    assert queues == [0] * len(queues)
    if kills == 0 or not (lost or beyond):
        pytest.xfail("seed %d: Scrapy's scheduler, though it lost its "
                     "queue at each of %d kills, lost no page and "
                     "fetched nothing again beyond the in-flight bound "
                     "this time" % (rng_seed, kills))
    assert lost or beyond
