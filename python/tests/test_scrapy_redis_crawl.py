"""Two Scrapy processes with bloomcrawl.scrapy.BloomDupeFilter in Redis
mode (DESIGN 16.1) crawl the sample site at the same time through one
redis-server, started here on a free port of 127.0.0.1 (skipped without
redis-server); and one whose redis-server is killed mid-crawl.

The site and the spider are test_scrapy_site.py's (scrapy_site_spider.py
in a subprocess, every name at 127.0.0.1). Both processes get the seed
and the seed's 20-odd linked pages as start requests, in opposite
orders, so each has work of its own from the start and both then race
on the links they find. The server's access log holds what both
fetched: mapped to canonical URLs, no URL is fetched twice (each request
admitted once across the two), nothing disallowed, and every page
reachable within the depth limit is fetched by one or the other.
(examples/site/check_crawl.py needs crawl's --out records, which a
Scrapy spider does not write: the test checks its rules O3, O4 and the
robots rule on the access log, as test_scrapy_site.py does.)
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("scrapy")

import redis_server  # noqa: E402
# test_scrapy_site puts ROOT/tests (sample_site) on the path.
from test_scrapy_site import (DEPTH, HERE, repeats,  # noqa: E402,F401
                              required_pages, sample_site, site)

import bloomcrawl  # noqa: E402

pytestmark = pytest.mark.skipif(not redis_server.AVAILABLE,
                                reason=redis_server.SKIP)

DUPEFILTER = "bloomcrawl.scrapy.BloomDupeFilter"


def spider(seeds, manifest, out, redis_url, key, go="", jobdir=None,
           timeout=5.0):
    """Start scrapy_site_spider.py on seeds with the Redis dupefilter
    (waiting for the file go before its start requests, if given; with
    JOBDIR jobdir; BLOOMCRAWL_REDIS_TIMEOUT timeout)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (os.environ.get("PYTHONPATH"), HERE) if p),
        SCRAPY_SITE_GO=go,
        SCRAPY_SITE_SETTINGS=json.dumps({
            "BLOOMCRAWL_REDIS_URL": redis_url, "BLOOMCRAWL_REDIS_KEY": key,
            "BLOOMCRAWL_EXPECT": 10000, "BLOOMCRAWL_REDIS_TIMEOUT": timeout}))
    return subprocess.Popen(
        [sys.executable, os.path.join(HERE, "scrapy_site_spider.py"),
         " ".join(seeds), manifest["agent"], "bloomcrawl.test", out,
         DUPEFILTER, str(DEPTH)] + ([jobdir] if jobdir else []),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env=env)


def results(out):
    """(page URLs of the spider's responses, its stats)."""
    with open(out) as f:
        rows = [json.loads(x) for x in f]
    return [r["url"] for r in rows if "url" in r], rows[-1]["stats"]


def test_two_processes_admit_each_request_once(site, tmp_path):
    sitedir, manifest = site
    redis = redis_server.RedisServer()
    log = str(tmp_path / "access.jsonl")
    server = sample_site.Server(sitedir, log)
    try:
        port = server.port
        seed = server.args[-1]
        linked = [u.replace("{PORT}", str(port))
                  for u, p in manifest["pages"].items()
                  if p["depth"]["domain"] == 1 and p["kind"] == "html"
                  and p["status"] == 200]
        seeds = [seed] + sorted(linked)
        outs = [str(tmp_path / ("out%d.jsonl" % i)) for i in (0, 1)]
        t0 = time.monotonic()
        go = str(tmp_path / "go")
        procs = [spider(seeds, manifest, outs[0], redis.url, "site", go),
                 spider(seeds[::-1], manifest, outs[1], redis.url, "site",
                        go)]
        # Both open (Scrapy's start-up takes about a second) before either
        # asks for its first start request: else the first one up admits
        # every seed and the second has nothing to do.
        deadline = time.monotonic() + 60
        while len(glob.glob(go + ".ready.*")) < 2:
            assert time.monotonic() < deadline
            assert all(p.poll() is None for p in procs)
            time.sleep(0.01)
        open(go, "w").close()
        errs = [p.communicate(timeout=120)[1] for p in procs]
        took = time.monotonic() - t0
        for p, err in zip(procs, errs):
            assert p.returncode == 0, err[-3000:]
    finally:
        server.stop()
        redis.stop()
    fetched = [bloomcrawl.normalize("http://%s%s" % r)
               for r in sample_site.page_requests(log)]
    mine = [results(o) for o in outs]
    print("two processes, one redis-server: %d page requests in %.1f s, "
          "%d distinct; responses per process %s; dupefilter/filtered %s"
          % (len(fetched), took, len(set(fetched)),
             [len(urls) for urls, _ in mine],
             [st.get("dupefilter/filtered") for _, st in mine]))
    assert repeats(fetched) == {}
    # Both worked, and each response was one process's only.
    assert all(len(urls) > 0 for urls, _ in mine)
    assert set(mine[0][0]) & set(mine[1][0]) == set()
    assert all(st["finish_reason"] == "finished" for _, st in mine)
    disallowed = {u.replace("{PORT}", str(port))
                  for u in manifest["disallowed"]}
    assert disallowed & set(fetched) == set()
    assert required_pages(manifest, port) - set(fetched) == set()


def test_redis_killed_mid_crawl_closes_the_spider(site, tmp_path):
    sitedir, manifest = site
    redis = redis_server.RedisServer()
    log = str(tmp_path / "access.jsonl")
    out = str(tmp_path / "out.jsonl")
    server = sample_site.Server(sitedir, log)
    try:
        p = spider([server.args[-1]], manifest, out, redis.url, "killed")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.poll() is None:
            if os.path.exists(log) and sum(1 for _ in open(log)) >= 20:
                break
            time.sleep(0.02)
        redis.proc.kill()
        redis.proc.wait()
        err = p.communicate(timeout=60)[1]
        assert p.returncode == 0, err[-3000:]
    finally:
        server.stop()
        redis.stop()
    urls, stats = results(out)
    fetched = [bloomcrawl.normalize("http://%s%s" % r)
               for r in sample_site.page_requests(log)]
    print("Redis killed after ~20 requests: %d pages fetched, finish "
          "reason %s, bloomcrawl/redis_errors %s"
          % (len(fetched), stats.get("finish_reason"),
             stats.get("bloomcrawl/redis_errors")))
    assert stats["finish_reason"] == "bloomcrawl_redis_error"
    assert stats["bloomcrawl/redis_errors"] == 1
    assert "The Redis seen-test failed: " in err
    assert "Redis connection lost" in err or "cannot connect" in err
    assert repeats(fetched) == {}, err[-6000:]
    # It stopped: far from the whole site.
    assert len(fetched) < len(required_pages(manifest, server.port))


def wait_for_requests(log, proc, n):
    """Until the access log has n entries (or proc ended, or 60 s)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(log):
            with open(log) as f:
                if sum(1 for _ in f) >= n:
                    return
        time.sleep(0.02)


def test_redis_stopped_then_resumed_with_jobdir(site, tmp_path):
    """redis-server stops answering (SIGSTOP) mid-crawl: the spider
    closes after the timeout, naming it; the request whose command failed
    is in JOBDIR's queue, those yielded while the spider closed in
    JOBDIR/requests.redis-pending. Redis back, the same command checks
    those and finishes the crawl: every reachable page fetched, none
    twice but, possibly, the one whose command failed (it is admitted
    unchecked: its bits may have been set)."""
    sitedir, manifest = site
    redis = redis_server.RedisServer()
    jobdir = str(tmp_path / "job")
    logs = [str(tmp_path / ("access%d.jsonl" % i)) for i in (0, 1)]
    outs = [str(tmp_path / ("out%d.jsonl" % i)) for i in (0, 1)]
    errs = []
    try:
        server = sample_site.Server(sitedir, logs[0])
        port, seed = server.port, server.args[-1]
        try:
            p = spider([seed], manifest, outs[0], redis.url, "stopped",
                       jobdir=jobdir, timeout=0.5)
            wait_for_requests(logs[0], p, 20)
            os.kill(redis.proc.pid, signal.SIGSTOP)
            try:
                errs.append(p.communicate(timeout=60)[1])
            finally:
                os.kill(redis.proc.pid, signal.SIGCONT)
            assert p.returncode == 0, errs[0][-3000:]
        finally:
            server.stop()
        server = sample_site.Server(sitedir, logs[1],
                                    options=["--port", str(port)])
        try:
            p = spider([seed], manifest, outs[1], redis.url, "stopped",
                       jobdir=jobdir, timeout=0.5)
            errs.append(p.communicate(timeout=120)[1])
            assert p.returncode == 0, errs[1][-3000:]
        finally:
            server.stop()
    finally:
        redis.stop()
    stats = [results(o)[1] for o in outs]
    fetched = [[bloomcrawl.normalize("http://%s%s" % r)
                for r in sample_site.page_requests(log)] for log in logs]
    both = fetched[0] + fetched[1]
    rep = repeats(both)
    print("Redis stopped after ~20 requests: %d pages fetched, %d "
          "requests kept; after the resume %d fetched; fetched twice %s; "
          "finish reasons %s"
          % (len(fetched[0]), stats[0].get("bloomcrawl/redis_pending", 0),
             len(fetched[1]), rep,
             [st.get("finish_reason") for st in stats]))
    assert stats[0]["finish_reason"] == "bloomcrawl_redis_error"
    assert "Redis did not answer within 500 ms" in errs[0]
    assert stats[1]["finish_reason"] == "finished"
    assert stats[1].get("bloomcrawl/redis_errors") is None
    assert stats[1].get("bloomcrawl/redis_replayed", 0) == \
        stats[0].get("bloomcrawl/redis_pending", 0)
    assert not os.path.exists(os.path.join(jobdir, "requests.redis-pending"))
    assert len(rep) <= 1 and all(n == 2 for n in rep.values())
    assert required_pages(manifest, port) - set(both) == set()
