"""kill -9 of a real Scrapy crawl of the sample site (examples/site), at
5 random moments, each time resumed with the same command and JOBDIR
until it finishes (issue 23 section 3; DESIGN 16.2). Its own ctest
entry (python_scrapy_kill): it takes about a minute.

With bloomcrawl.scrapy.FrontierScheduler: every page reachable within
the depth limit is fetched (the "every reachable page" rule of
examples/site/check_crawl.py, judged from the server's access log), and
a page is fetched twice only when it was in flight at a kill: the
repeats are counted, printed, and at most kills x CONCURRENT_REQUESTS.

With Scrapy's own scheduler (SCHEDULER left alone, JOBDIR set) the same
kills lose pages: its disk queue's index (requests.queue/active.json) is
written on close only, so a resume starts with an empty queue, while
RFPDupeFilter's requests.seen, appended as the crawl goes, filters the
pages rediscovered. The pages missing after the resumes are printed and
asserted as a KNOWN LOSS, so the contrast stays visible in the output
(should a seed lose nothing, the test is xfailed with the reason).

The kill moments are random but seeded: BLOOMCRAWL_KILL_SEED=N replays
a run (the seed is printed). A kill comes after a random number of
requests in the access log since the (re)start, so it falls mid-crawl.
"""
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
# FrontierScheduler's log line on resume.
RESUMED = re.compile(r"Resuming crawl from .* (\d+) of them in flight")


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
    order, robots.txt requests, kills made, the port)."""
    log = str(tmp_path / ("%s-access.jsonl" % name))
    out = str(tmp_path / ("%s-out.jsonl" % name))
    jobdir = str(tmp_path / ("%s-job" % name))
    server = sample_site.Server(sitedir, log)
    kills, runs, refetched = 0, 0, []
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
            m = RESUMED.search(err)
            if m:
                refetched.append(int(m.group(1)))
            if proc.returncode == -signal.SIGKILL:
                continue
            assert proc.returncode == 0, err[-3000:]
            if target is None or kills >= KILLS:
                break
            # It finished before the kill moment: the kills are done.
            break
    finally:
        server.stop()
    reqs = sample_site.page_requests(log)
    robots = log_lines(log) - len(reqs)
    return ([bloomcrawl.normalize("http://%s%s" % r) for r in reqs],
            robots, kills, server.port, refetched)


@pytest.fixture(scope="module")
def rng_seed():
    seed = int(os.environ.get("BLOOMCRAWL_KILL_SEED",
                              random.SystemRandom().randrange(1 << 31)))
    print("kill moments: BLOOMCRAWL_KILL_SEED=%d" % seed)
    return seed


def test_frontier_scheduler_loses_nothing(site, tmp_path, rng_seed):
    sitedir, manifest = site
    fetched, robots, kills, port, refetched = killed_crawl(
        sitedir, manifest, tmp_path, "bloomcrawl.scrapy.FrontierScheduler",
        random.Random(rng_seed), "frontier")
    print("in flight at each kill, queued again on resume: %s" % refetched)
    missing = required_pages(manifest, port) - set(fetched)
    repeats = len(fetched) - len(set(fetched))
    print("FrontierScheduler (seed %d): %d kills, %d page requests, %d "
          "distinct, %d fetched again after a kill (bound %d), %d "
          "robots.txt requests, %d reachable pages missing"
          % (rng_seed, kills, len(fetched), len(set(fetched)), repeats,
             kills * CONCURRENCY, robots, len(missing)))
    assert kills == KILLS
    assert missing == set(), sorted(missing)
    # Fetched again: only what was in flight at the last commit before a
    # kill (some of it may not have reached the server), at most
    # CONCURRENT_REQUESTS (BLOOMCRAWL_MAX_IN_PROGRESS's default) a kill.
    assert len(refetched) == kills
    assert all(n <= CONCURRENCY for n in refetched)
    assert repeats <= sum(refetched)
    assert repeats <= kills * CONCURRENCY
    disallowed = {u.replace("{PORT}", str(port))
                  for u in manifest["disallowed"]}
    assert disallowed & set(fetched) == set()


def test_scrapy_scheduler_known_loss(site, tmp_path, rng_seed):
    sitedir, manifest = site
    fetched, robots, kills, port, _ = killed_crawl(
        sitedir, manifest, tmp_path, None, random.Random(rng_seed),
        "scrapy")
    missing = required_pages(manifest, port) - set(fetched)
    print("KNOWN LOSS: Scrapy's scheduler with JOBDIR (seed %d): %d "
          "kills, %d page requests, %d distinct, %d of %d reachable "
          "pages never fetched after the resumes"
          % (rng_seed, kills, len(fetched), len(set(fetched)),
             len(missing), len(required_pages(manifest, port))))
    if not missing:
        pytest.xfail("seed %d: Scrapy's scheduler lost no page this time "
                     "(%d kills); the loss shows on most seeds"
                     % (rng_seed, kills))
    assert missing
