"""bloomcrawl.scrapy.BloomDupeFilter against Debian's Scrapy 2.8 (DESIGN
16.1): its keys, verdicts, stats, settings and JOBDIR persistence."""
import os

import pytest

scrapy = pytest.importorskip("scrapy")

from scrapy import Request  # noqa: E402
from scrapy.settings import Settings  # noqa: E402
from scrapy.spiders import Spider  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from bloomcrawl.scrapy import SEEN_FILE, BloomDupeFilter  # noqa: E402


def make(settings=None):
    """A filter made as Scrapy's scheduler makes it (from_crawler), and
    the crawler, whose stats it counts in."""
    crawler = get_crawler(Spider, dict(settings or {}))
    crawler.spider = Spider("t")
    crawler.spider.crawler = crawler
    df = BloomDupeFilter.from_crawler(crawler)
    df.open()
    return df, crawler


def seen(df, crawler, request):
    """request_seen, and log() when it is, as the scheduler does."""
    if df.request_seen(request):
        df.log(request, crawler.spider)
        return True
    return False


def test_two_spellings_are_one_request():
    df, crawler = make()
    assert not seen(df, crawler, Request("http://example.com/a/b?x=1"))
    for spelling in ("HTTP://Example.COM:80/a/./b?x=1",
                     "http://example.com/a/c/../b?x=1#frag",
                     "http://example.com/a/%62?x=1"):
        assert seen(df, crawler, Request(spelling)), spelling
    assert crawler.stats.get_value("dupefilter/filtered") == 3
    assert crawler.stats.get_value("dupefilter/probably_seen") is None


def test_normalize_rules_setting():
    plain, _ = make()
    assert (plain.request_key(Request("http://e.com/?b=1&a=2")) ==
            "http://e.com/?b=1&a=2")
    df, crawler = make({"BLOOMCRAWL_NORMALIZE": {"sort_query": True}})
    assert df.request_key(Request("http://e.com/?b=1&a=2")) == \
        "http://e.com/?a=2&b=1"
    assert not seen(df, crawler, Request("http://e.com/?b=1&a=2"))
    assert seen(df, crawler, Request("http://e.com/?a=2&b=1"))
    with pytest.raises(TypeError):
        make({"BLOOMCRAWL_NORMALIZE": {"no_such_rule": True}})


def test_post_bodies_and_methods():
    df, crawler = make()
    url = "http://example.com/form"
    assert not seen(df, crawler, Request(url, method="POST", body=b"a=1"))
    assert not seen(df, crawler, Request(url, method="POST", body=b"a=2"))
    assert seen(df, crawler, Request("HTTP://EXAMPLE.com" + "/form",
                                     method="POST", body=b"a=1"))
    # Neither a GET nor a PUT of the same URL is that POST.
    assert not seen(df, crawler, Request(url))
    assert not seen(df, crawler, Request(url, method="PUT", body=b"a=1"))
    key = df.request_key(Request(url, method="POST", body=b"a=1"))
    assert key.startswith("POST http://example.com/form #")
    assert len(key.split("#")[1]) == 32  # BLAKE2b-128 in hex


def test_url_normalize_refuses_is_keyed_raw():
    df, crawler = make()
    r = Request("data:text/plain,hello")
    assert df.request_key(r) == "raw data:text/plain,hello"
    assert not seen(df, crawler, r)
    assert seen(df, crawler, Request("data:text/plain,hello"))


def test_settings_size_the_seen_test():
    df, _ = make({"BLOOMCRAWL_EXPECT": 1234, "BLOOMCRAWL_FP_RATE": 0.001,
                  "BLOOMCRAWL_LRU": 7, "DUPEFILTER_DEBUG": True,
                  "BLOOMCRAWL_SAVE_INTERVAL": 2.5})
    assert (df.expect, df.fp_rate, df.lru) == (1234, 0.001, 7)
    assert df.debug and df.save_interval == 2.5 and df.file is None
    with pytest.raises(ValueError):
        make({"BLOOMCRAWL_FP_RATE": 1.5})
    with pytest.raises(ValueError):
        make({"BLOOMCRAWL_SAVE_INTERVAL": -1})


def test_probably_seen_is_filtered_and_counted():
    # A filter for 50 keys at 30% and an LRU of 1 entry: after 2000 keys
    # the filter is full, most new keys find their bits set and the LRU
    # (holding only the last key) cannot settle it: PROBABLY_SEEN.
    df, crawler = make({"BLOOMCRAWL_EXPECT": 50, "BLOOMCRAWL_FP_RATE": 0.3,
                        "BLOOMCRAWL_LRU": 1})
    filtered = sum(seen(df, crawler, Request("http://e.com/%d" % i))
                   for i in range(2000))
    probably = crawler.stats.get_value("dupefilter/probably_seen")
    assert probably == filtered > 1000
    assert crawler.stats.get_value("dupefilter/filtered") == filtered
    df.close("finished")
    assert crawler.stats.get_value("dupefilter/fp_caught") == \
        df.seen.stats()["fp_caught"]


def test_log_once_unless_debug(caplog):
    df, crawler = make()
    caplog.set_level("DEBUG", logger="bloomcrawl.scrapy")
    for _ in range(3):
        seen(df, crawler, Request("http://example.com/"))
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 1 and "no more duplicates" in msgs[0]
    caplog.clear()
    df, crawler = make({"DUPEFILTER_DEBUG": True})
    for _ in range(3):
        seen(df, crawler, Request("http://example.com/"))
    assert len(caplog.records) == 2  # both repeats, with their referer
    assert "referer: None" in caplog.records[0].getMessage()


def test_jobdir_round_trip(tmp_path):
    jobdir = str(tmp_path / "job")
    df, crawler = make({"JOBDIR": jobdir})
    for i in range(100):
        assert not seen(df, crawler, Request("http://e.com/%d" % i))
    path = os.path.join(jobdir, SEEN_FILE)
    assert not os.path.exists(path)  # saved on close only (interval 0)
    df.close("shutdown")
    assert os.path.exists(path)
    assert [n for n in os.listdir(jobdir) if ".tmp." in n] == []
    # The same JOBDIR again: everything seen before is filtered (the
    # loaded filter's "maybe" with an empty LRU: PROBABLY_SEEN), new URLs
    # are not.
    df, crawler = make({"JOBDIR": jobdir})
    assert all(seen(df, crawler, Request("HTTP://E.COM/%d" % i))
               for i in range(100))
    assert crawler.stats.get_value("dupefilter/filtered") == 100
    assert not seen(df, crawler, Request("http://e.com/new"))
    df.close("finished")
    df, crawler = make({"JOBDIR": jobdir})
    assert seen(df, crawler, Request("http://e.com/new"))


def test_save_interval_saves_while_running(tmp_path):
    jobdir = str(tmp_path / "job")
    df, crawler = make({"JOBDIR": jobdir,
                        "BLOOMCRAWL_SAVE_INTERVAL": 0.000001})
    path = os.path.join(jobdir, SEEN_FILE)
    assert not seen(df, crawler, Request("http://e.com/1"))
    assert os.path.exists(path)  # no close(): a kill -9 here keeps it
    # What a process killed now would resume with: a new filter on the
    # same JOBDIR finds the request seen.
    df2, crawler2 = make({"JOBDIR": jobdir})
    assert seen(df2, crawler2, Request("http://e.com/1"))


def test_default_settings_from_scrapy():
    s = Settings({"DUPEFILTER_CLASS": "bloomcrawl.scrapy.BloomDupeFilter"})
    df = BloomDupeFilter.from_settings(s)
    assert (df.expect, df.fp_rate, df.lru, df.save_interval) == \
        (1000000, 0.01, 50000, 0.0)
    # request_seen before open() opens it (the scheduler opens it first).
    assert not df.request_seen(Request("http://example.com/"))
    assert df.request_seen(Request("http://example.com/"))
    df.close("finished")
