"""bloomcrawl.scrapy.BloomDupeFilter in Redis mode (BLOOMCRAWL_REDIS_URL,
DESIGN 16.1) against a real redis-server on a free port of 127.0.0.1:
two filters share one set, the key prefix, no JOBDIR file, and each
failure (no server at open, another sizing, a server that stops
answering mid-crawl) named, counted and never turned into "filtered".
The crawls of two Scrapy processes are test_scrapy_redis_crawl.py."""
import logging
import os
import pickle
import signal
import time

import pytest

pytest.importorskip("scrapy")

from scrapy import Request  # noqa: E402

from bloomcrawl import (RedisConnectError, RedisMismatchError,  # noqa: E402
                        RedisSeen)
from bloomcrawl.scrapy import PENDING_FILE, SEEN_FILE  # noqa: E402

import redis_server  # noqa: E402
from test_scrapy_dupefilter import make, seen  # noqa: E402

pytestmark = pytest.mark.skipif(not redis_server.AVAILABLE,
                                reason=redis_server.SKIP)


@pytest.fixture(scope="module")
def server():
    s = redis_server.RedisServer()
    yield s
    s.stop()


def test_two_filters_share_one_set(server, tmp_path):
    settings = {"BLOOMCRAWL_REDIS_URL": server.url, "BLOOMCRAWL_EXPECT": 1000,
                "JOBDIR": str(tmp_path / "job")}
    a, ca = make(settings)
    b, cb = make(settings)
    assert a.redis_key == "bloomcrawl:t"  # "bloomcrawl:" + spider name
    assert server.command("EXISTS", "bloomcrawl:t:meta") == ":1"
    assert not seen(a, ca, Request("http://example.com/a/b"))
    # The other process's filter: the same key (request_key), filtered.
    for spelling in ("HTTP://Example.COM:80/a/./b", "http://example.com/a/b"):
        assert seen(b, cb, Request(spelling))
    assert not seen(b, cb, Request("http://example.com/c"))
    assert seen(a, ca, Request("http://example.com/c#x"))
    # POST bodies are keyed as in the local mode.
    assert not seen(a, ca, Request("http://example.com/f", method="POST",
                                   body=b"a=1"))
    assert seen(b, cb, Request("http://example.com/f", method="POST",
                               body=b"a=1"))
    assert not seen(b, cb, Request("http://example.com/f"))
    assert ca.stats.get_value("dupefilter/filtered") == 1
    assert cb.stats.get_value("dupefilter/filtered") == 3
    a.close("finished")
    b.close("finished")
    # No file in JOBDIR: the set lives in Redis, and outlives the crawl.
    assert not os.path.exists(str(tmp_path / "job" / SEEN_FILE))
    c, cc = make(settings)
    assert seen(c, cc, Request("http://example.com/c"))
    c.redis.clear()
    c.close("finished")


def test_key_setting_and_sizing(server):
    a, ca = make({"BLOOMCRAWL_REDIS_URL": server.url,
                  "BLOOMCRAWL_REDIS_KEY": "crawl7:seen",
                  "BLOOMCRAWL_EXPECT": 1000})
    assert not seen(a, ca, Request("http://example.com/"))
    assert server.command("EXISTS", "crawl7:seen:0") == ":1"
    # Every process must size it alike: another EXPECT is refused at open.
    with pytest.raises(RedisMismatchError) as e:
        make({"BLOOMCRAWL_REDIS_URL": server.url,
              "BLOOMCRAWL_REDIS_KEY": "crawl7:seen",
              "BLOOMCRAWL_EXPECT": 2000})
    assert "another filter under this prefix" in str(e.value)
    with pytest.raises(ValueError):
        make({"BLOOMCRAWL_REDIS_URL": server.url, "BLOOMCRAWL_REDIS_KEY": ""})
    with pytest.raises(ValueError):
        make({"BLOOMCRAWL_REDIS_URL": server.url,
              "BLOOMCRAWL_REDIS_TIMEOUT": -1})
    # BLOOMCRAWL_REDIS_K: one probe a key, the bits of 1 % at that k; a
    # process of the default k is refused that prefix.
    one, co = make({"BLOOMCRAWL_REDIS_URL": server.url,
                    "BLOOMCRAWL_REDIS_KEY": "crawl7:one",
                    "BLOOMCRAWL_EXPECT": 1000, "BLOOMCRAWL_REDIS_K": 1})
    assert one.redis.sizing()["k"] == 1
    assert not seen(one, co, Request("http://example.com/"))
    assert seen(one, co, Request("http://example.com/"))
    with pytest.raises(RedisMismatchError):
        make({"BLOOMCRAWL_REDIS_URL": server.url,
              "BLOOMCRAWL_REDIS_KEY": "crawl7:one",
              "BLOOMCRAWL_EXPECT": 1000})
    with pytest.raises(ValueError):
        make({"BLOOMCRAWL_REDIS_URL": server.url,
              "BLOOMCRAWL_REDIS_KEY": "crawl7:zero", "BLOOMCRAWL_REDIS_K": 0})
    one.redis.clear()
    one.close("finished")
    a.redis.clear()
    a.close("finished")


def test_no_server_at_open_raises():
    url = "redis://127.0.0.1:%d/0" % redis_server.free_port()
    with pytest.raises(RedisConnectError) as e:
        make({"BLOOMCRAWL_REDIS_URL": url})
    assert "Connection refused" in str(e.value)


def test_redis_failure_mid_crawl_is_named_not_filtered(server, caplog,
                                                       tmp_path):
    jobdir = str(tmp_path / "job")
    df, crawler = make({"BLOOMCRAWL_REDIS_URL": server.url,
                        "BLOOMCRAWL_REDIS_KEY": "fail",
                        "BLOOMCRAWL_REDIS_TIMEOUT": 0.3, "JOBDIR": jobdir})
    assert not seen(df, crawler, Request("http://example.com/1"))
    assert seen(df, crawler, Request("http://example.com/1"))
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        with caplog.at_level(logging.WARNING, logger="bloomcrawl.scrapy"):
            t0 = time.monotonic()
            # Timed out: admitted (its bits may be set), not filtered,
            # the cause logged.
            assert not seen(df, crawler, Request("http://example.com/2"))
            took = time.monotonic() - t0
            # Then each request is kept for the resume at once, Redis not
            # asked again while the spider closes: not queued, not
            # counted as filtered.
            t1 = time.monotonic()
            kept = [Request("http://example.com/1"),
                    Request("http://example.com/3", method="POST",
                            body=b"x=1", meta={"depth": 2})]
            assert all(df.request_seen(r) for r in kept)
            for r in kept:
                df.log(r, crawler.spider)
            assert time.monotonic() - t1 < 0.1
            df.close("bloomcrawl_redis_error")
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
    assert 0.25 <= took < 3
    errors = [r.getMessage() for r in caplog.records
              if r.levelno == logging.ERROR]
    assert len(errors) == 1
    assert "Redis did not answer within 300 ms" in errors[0]
    assert "bloomcrawl_redis_error" in errors[0]
    assert crawler.stats.get_value("bloomcrawl/redis_errors") == 1
    assert crawler.stats.get_value("dupefilter/filtered") == 1
    assert crawler.stats.get_value("bloomcrawl/redis_pending") == 2
    assert "did not answer" in df.redis_failed
    # Kept in JOBDIR as Scrapy's disk queues keep requests.
    with open(os.path.join(jobdir, PENDING_FILE), "rb") as f:
        dicts = pickle.load(f)
    assert [(d["url"], d["method"], d["body"], d["meta"]) for d in dicts] == \
        [("http://example.com/1", "GET", b"", {}),
         ("http://example.com/3", "POST", b"x=1", {"depth": 2})]
    assert any("2 requests yielded after the Redis failure are kept" in
               r.getMessage() for r in caplog.records)
    RedisSeen(server.url, prefix="fail").clear()


def test_refused_command_is_kept_not_admitted(server, tmp_path):
    """WRONGTYPE: the command was refused, nothing set, so the request is
    kept to be asked on resume (not admitted unchecked); without JOBDIR
    the kept requests are dropped with a warning, counted."""
    df, crawler = make({"BLOOMCRAWL_REDIS_URL": server.url,
                        "BLOOMCRAWL_REDIS_KEY": "wrong"})
    server.command("DEL", "wrong:0")
    assert server.command("RPUSH", "wrong:0", "x") == ":1"
    assert seen(df, crawler, Request("http://example.com/a"))
    assert "WRONGTYPE" in df.redis_failed
    assert crawler.stats.get_value("dupefilter/filtered") is None
    df.close("bloomcrawl_redis_error")
    assert crawler.stats.get_value("bloomcrawl/redis_pending") == 1
    server.command("DEL", "wrong:0")
