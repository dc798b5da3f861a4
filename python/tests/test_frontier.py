"""Unit tests of bloomcrawl.Frontier, Job and CrawlState (python/bloomcrawl/
_frontier.py): every method, bad input to each (it must raise, never
crash), politeness on made-up times, robots.txt, payloads, dont_filter,
and the crawl state: resume, in flight at a close, lock, mismatch, and a
real kill -9 of a process in the middle of a crawl."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import bloomcrawl
from bloomcrawl import (CrawlState, Error, Frontier, InvalidArgumentError,
                        Job, StateLockedError, StateMismatchError,
                        TooLargeError)

ROBOTS = b"User-agent: *\nDisallow: /private\n"


def quick(**kw):
    """A frontier without robots.txt or delay, unless asked."""
    args = dict(obey_robots=False, min_delay=0.0, expected=10_000)
    args.update(kw)
    return Frontier(**args)


def fetch(f, now=0, url=None):
    job = f.next(now)
    assert job.action == "fetch", job
    if url is not None:
        assert job.url == url
    return job


def drain(f, now=0):
    """Fetch everything left (done 200 each): [(url, payload)]."""
    got = []
    while True:
        job = f.next(now)
        if job.action == "done":
            return got
        assert job.action == "fetch", job
        got.append((job.url, job.payload))
        f.done(job, 200, now_ms=now)


# --- Frontier -------------------------------------------------------------

def test_add_next_done():
    f = quick()
    assert f.add("http://a.test/", seed=True) == "queued"
    assert f.add("http://a.test/x", depth=1) == "queued"
    assert len(f) == 2 and f.in_flight == 0
    job = fetch(f, 0, "http://a.test/")
    assert isinstance(job, Job)
    assert (job.depth, job.redirects, job.retries) == (0, 0, 0)
    assert job.origin == "http://a.test" and job.id == 0
    assert job.payload is None and job.referrer is None
    assert len(f) == 1 and f.in_flight == 1
    assert f.done(job, 200, response_ms=5, now_ms=0) is False
    job = fetch(f, 0, "http://a.test/x")
    assert job.depth == 1
    f.done(job, 404, fault="permanent", now_ms=0)
    last = f.next(0)
    assert last.action == "done" and last.url is None
    assert len(f) == 0 and f.in_flight == 0
    with pytest.raises(Exception):
        last.action = "fetch"  # a snapshot: immutable


def test_add_reasons():
    f = quick(scope="host", max_depth=2, host_budget=3,
              exclude=["*.pdf"], include=["http://a.test/*"])
    assert f.add("http://a.test/", seed=True) == "queued"
    assert f.add("http://a.test/") == "duplicate"
    assert f.add("mailto:x@a.test") == "bad_url"
    assert f.add("http://b.test/") == "out_of_scope"
    assert f.add("http://a.test/deep", depth=3) == "too_deep"
    assert f.add("http://a.test/doc.pdf") == "excluded"
    assert f.add("http://a.test/far", redirects=21) == "too_many_redirects"
    assert f.add("b", base="http://a.test/a/") == "queued"
    assert f.add("http://a.test/c") == "queued"
    assert f.add("http://a.test/d") == "host_budget"
    assert [u for u, _ in drain(f)] == [
        "http://a.test/", "http://a.test/a/b", "http://a.test/c"]
    s = f.stats()
    assert s["admitted"] == 3 and s["reasons.duplicate"] == 1
    assert s["reasons.host_budget"] == 1 and s["handed_out"] == 3


def test_politeness_min_delay():
    # Two URLs of one host come out min_delay apart, counted from the end
    # of the first transfer; another host does not wait for it.
    f = quick(min_delay=1.5)
    f.add("http://a.test/1")
    f.add("http://a.test/2")
    job = fetch(f, 1000, "http://a.test/1")
    wait = f.next(1000)
    assert wait.action == "wait" and wait.wait_until_ms is None  # busy
    f.done(job, 200, now_ms=1200)
    wait = f.next(1300)
    assert wait.action == "wait" and wait.wait_until_ms == 2700
    f.add("http://b.test/1")
    fetch(f, 1300, "http://b.test/1")
    assert f.next(2699).action == "wait"
    fetch(f, 2700, "http://a.test/2")


def test_set_host_delay():
    f = quick(min_delay=1.0)
    with pytest.raises(Error) as e:
        f.set_host_delay("http://a.test", 0.2)
    assert e.value.name == "BC_ERR_NOT_FOUND"
    f.add("http://a.test/1")
    f.add("http://a.test/2")
    f.add("http://a.test/3")
    f.set_host_delay("http://a.test", 0.25)
    f.done(fetch(f, 0), 200, now_ms=0)
    assert f.next(0).wait_until_ms == 250
    f.set_host_delay("http://a.test", None)  # back to min_delay
    f.done(fetch(f, 250), 200, now_ms=250)
    assert f.next(250).wait_until_ms == 1250
    with pytest.raises(ValueError):
        f.set_host_delay("http://a.test", -1)
    with pytest.raises(TypeError):
        f.set_host_delay(7, 1.0)


def test_robots_through_the_frontier():
    f = Frontier(min_delay=0.0, expected=10_000)
    assert f.add("http://a.test/", seed=True) == "queued"
    # Admitted before robots.txt is known: dropped when it is.
    assert f.add("http://a.test/private/x", payload=b"p") == "queued"
    job = f.next(0)
    assert job.action == "robots"
    assert job.url == "http://a.test/robots.txt"
    assert job.origin == "http://a.test"
    with pytest.raises(InvalidArgumentError):
        f.done(job, 200)  # a robots job ends with robots_done()
    f.robots_done(job, 200, ROBOTS, now_ms=0)
    job = fetch(f, 0, "http://a.test/")
    assert f.add("http://a.test/private/y") == "robots"
    # One transfer per host: the drop comes once the fetch is done.
    f.done(job, 200, now_ms=0)
    drop = f.next(0)
    assert drop.action == "drop" and drop.reason == "robots"
    assert drop.url == "http://a.test/private/x" and drop.payload is None
    assert f.next(0).action == "done"
    assert f.stats()["robots_parsed"] == 1


def test_robots_redirect_and_unavailable():
    f = Frontier(min_delay=0.0, expected=10_000)
    f.add("http://a.test/x")
    job = f.next(0)
    f.robots_done(job, 301, location="/elsewhere.txt", now_ms=0)
    job = f.next(0)
    assert job.action == "robots"
    assert job.url == "http://a.test/elsewhere.txt"
    f.robots_done(job, 404, now_ms=0)  # no file: all allowed
    fetch(f, 0, "http://a.test/x")
    with pytest.raises(TypeError):
        f.robots_done(job, 200, "a str body")


def test_payload_round_trip():
    f = quick(max_payload=1024)
    blobs = [b"\0", b"a\0b\0\xff" * 100, bytes(range(256))]
    f.add("http://a.test/0", payload=blobs[0])
    f.add("http://a.test/1", payload=bytearray(blobs[1]))
    f.add("http://a.test/2", payload=memoryview(blobs[2]))
    f.add("http://a.test/3", payload=b"")  # empty is none
    f.add("http://a.test/4", payload=b"x" * 1024)  # the limit passes
    with pytest.raises(TooLargeError):
        f.add("http://a.test/5", payload=b"x" * 1025)
    assert f.add("http://a.test/5") == "queued"  # nothing was counted
    with pytest.raises(TypeError):
        f.add("http://a.test/6", payload="text")
    got = drain(f)
    assert got == [("http://a.test/0", blobs[0]),
                   ("http://a.test/1", blobs[1]),
                   ("http://a.test/2", blobs[2]),
                   ("http://a.test/3", None),
                   ("http://a.test/4", b"x" * 1024),
                   ("http://a.test/5", None)]
    with pytest.raises(ValueError):
        quick(max_payload=16 * 1024 * 1024 + 1)


def test_referrer_redirects_and_seed_with_payload():
    f = quick(scope="host")
    assert f.add("http://a.test/", seed=True, payload=b"seed\0") == "queued"
    assert f.add("http://a.test/moved", depth=3, redirects=2,
                 referrer="http://a.test/old",
                 payload=b"\0r") == "queued"
    job = fetch(f, 0, "http://a.test/")
    assert job.payload == b"seed\0" and job.referrer is None
    f.done(job, 200, now_ms=0)
    job = fetch(f, 0, "http://a.test/moved")
    assert (job.depth, job.redirects) == (3, 2)
    assert job.referrer == "http://a.test/old" and job.payload == b"\0r"


def test_dont_filter():
    f = quick(host_budget=4)
    assert f.add("http://a.test/", payload=b"1") == "queued"
    f.done(fetch(f), 200, now_ms=0)
    assert f.add("http://a.test/", payload=b"2") == "duplicate"
    assert f.add("http://a.test/", payload=b"2", dont_filter=True) == "queued"
    assert f.add("http://a.test/n", dont_filter=True) == "queued"
    assert f.add("http://a.test/n") == "duplicate"  # it entered the test
    assert f.add("http://a.test/", dont_filter=True) == "queued"  # 4 of 4
    assert f.add("http://a.test/x", dont_filter=True) == "host_budget"
    assert drain(f) == [("http://a.test/", b"2"), ("http://a.test/n", None),
                        ("http://a.test/", None)]


def test_dont_filter_still_obeys_robots_scope_depth():
    f = Frontier(min_delay=0.0, scope="host", max_depth=1, expected=10_000)
    f.add("http://a.test/", seed=True)
    f.robots_done(f.next(0), 200, ROBOTS, now_ms=0)
    assert f.add("http://a.test/private", dont_filter=True) == "robots"
    assert f.add("http://b.test/", dont_filter=True) == "out_of_scope"
    assert f.add("http://a.test/d", depth=2, dont_filter=True) == "too_deep"


def test_retries_and_giveback():
    f = quick(max_retries=1, retry_delay=0.1)
    f.add("http://a.test/r", payload=b"req")
    job = fetch(f, 0)
    assert f.done(job, 500, fault="transient", now_ms=0) is True
    assert f.next(50).action == "wait"  # 100 ms +- 25 % jitter
    job = fetch(f, 200, "http://a.test/r")
    assert job.retries == 1 and job.payload == b"req"
    f.giveback(job, now_ms=200)  # ours: the URL is not charged
    job = fetch(f, 200, "http://a.test/r")
    assert job.retries == 1
    assert f.done(job, 0, fault="transient", now_ms=200) is False
    assert f.stats()["retries_exhausted"] == 1
    assert f.next(10_000).action == "done"


def test_sitemaps():
    f = quick(sitemaps=True)
    f.add("http://a.test/", seed=True)
    job = f.next(0)
    assert job.action == "sitemap"
    assert job.url == "http://a.test/sitemap.xml"
    assert job.scope == "http://a.test/"
    assert f.add_from_sitemap(job, "http://a.test/from-map") == "queued"
    assert f.add_from_sitemap(job, "http://b.test/") == "sitemap_scope"
    assert f.add_sitemap(job, "http://a.test/sub.xml") == "queued"
    assert f.sitemap_done(job, 200, now_ms=0) is False
    with pytest.raises(InvalidArgumentError):
        f.add_from_sitemap(job, "http://a.test/late")
    job = f.next(0)
    assert job.action == "sitemap" and job.url == "http://a.test/sub.xml"
    f.sitemap_done(job, 404, now_ms=0)
    assert [u for u, _ in drain(f)] == ["http://a.test/",
                                        "http://a.test/from-map"]


def test_job_misuse_raises():
    f, g = quick(), quick()
    f.add("http://a.test/")
    g.add("http://a.test/")
    job = fetch(f)
    with pytest.raises(InvalidArgumentError):
        g.done(job, 200)  # another frontier's
    with pytest.raises(InvalidArgumentError):
        f.robots_done(job, 200)  # not a robots job
    with pytest.raises(ValueError):
        f.done(job, 200, fault="flaky")
    with pytest.raises(ValueError):
        f.done(job, 1000)
    with pytest.raises(TypeError):
        f.done(job, "200")
    with pytest.raises(TypeError):
        f.done("http://a.test/", 200)
    f.done(job, 200, now_ms=0)  # the bad calls changed nothing
    with pytest.raises(InvalidArgumentError):
        f.done(job, 200)  # twice
    with pytest.raises(InvalidArgumentError):
        f.giveback(job)
    done = f.next(0)
    with pytest.raises(InvalidArgumentError):
        f.done(done, 200)  # not out
    forged = Job(action="fetch", url="http://a.test/")
    with pytest.raises(InvalidArgumentError):
        f.done(forged, 200)
    empty = Job.__new__(Job)  # no fields at all: was AttributeError
    with pytest.raises(InvalidArgumentError):
        f.done(empty, 200)


def test_bad_arguments_raise():
    f = quick()
    for bad in (7, None, ["http://a.test/"]):
        with pytest.raises(TypeError):
            f.add(bad)
    with pytest.raises(TypeError):
        f.add("http://a.test/", base=3)
    with pytest.raises(TypeError):
        f.add("http://a.test/", depth="1")
    with pytest.raises(ValueError):
        f.add("http://a.test/", depth=-1)
    with pytest.raises(ValueError):
        f.add("http://a.test/", redirects=1 << 40)
    with pytest.raises(TypeError):
        f.add("http://a.test/", seed="yes")
    with pytest.raises(TypeError):
        f.add("http://a.test/", referrer=5)
    with pytest.raises(UnicodeEncodeError):
        f.add("http://a.test/\udc80")
    assert f.add("http://a.test/" + "x" * 5000) == "too_long"
    assert f.add(b"http://a.test/\0nul") == "queued"  # percent-encoded
    with pytest.raises(ValueError):
        f.next(-1)
    with pytest.raises(TypeError):
        f.next("now")
    assert len(f) == 1 and f.stats()["added"] == 2
    assert fetch(f).url == "http://a.test/%00nul"
    for kwargs, exc in (({"scope": "world"}, ValueError),
                        ({"min_delay": -1}, ValueError),
                        ({"min_delay": float("nan")}, ValueError),
                        ({"min_delay": "1"}, TypeError),
                        ({"fp_rate": 1.5}, ValueError),
                        ({"expected": 0}, ValueError),
                        ({"max_retries": 256}, ValueError),
                        ({"per_host": 0}, ValueError),
                        ({"include": "http://*"}, TypeError),
                        ({"exclude": ["a\0b"]}, ValueError),
                        ({"user_agent": None}, TypeError),
                        ({"obey_robots": 1}, TypeError)):
        with pytest.raises(exc):
            Frontier(**kwargs)
    with pytest.raises(TypeError):
        Frontier(colour="blue")


def test_now_ms_and_threads():
    a = bloomcrawl.now_ms()
    b = bloomcrawl.now_ms()
    assert 0 <= b - a < 1000
    f = quick()
    f.add("http://a.test/")
    job = f.next()  # now_ms None: the clock's now
    assert job.action == "fetch"
    assert f.done(job, 200) is False


def test_threads_share_a_state_frontier(tmp_path):
    # Each object holds a lock (the state's and its frontier's is one):
    # threads adding, fetching and committing at once take turns.
    import threading
    st = CrawlState(tmp_path / "s")
    f = st.frontier(obey_robots=False, min_delay=0.0, expected=10_000,
                    per_host=1000)
    fetched = []
    errors = []

    def work(k):
        try:
            for i in range(300):
                f.add("http://t%d.test/%d" % (k, i), payload=b"%d" % i)
                job = f.next(0)
                if job.action == "fetch":
                    f.done(job, 200, now_ms=0)
                    fetched.append(job.url)
                if i % 50 == 0:
                    st.commit()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    fetched += [u for u, _ in drain(f)]
    assert len(fetched) == len(set(fetched)) == 1200
    st.close()


# --- CrawlState -----------------------------------------------------------

FR = dict(obey_robots=False, min_delay=0.0, expected=10_000, per_host=8)


def test_state_resume_queue_and_payloads(tmp_path):
    d = tmp_path / "state"
    with CrawlState(d) as st:
        assert st.info()["resumed"] is False
        f = st.frontier(**FR)
        for i in range(20):
            assert f.add("http://h%d.test/p/%d" % (i % 3, i),
                         payload=b"\0pay%d\xff" % i,
                         referrer="http://r.test/",
                         seed=i < 3) == "queued"
        st.counter_set("pages", 7)
        job = fetch(f)
        f.done(job, 200, now_ms=0)
    # __exit__ committed.
    st = CrawlState(str(d))
    info = st.info()
    assert info["resumed"] is True and info["runs"] == 2
    assert info["queued"] == 19 and info["journal"] == 20
    assert info["refetched_now"] == 0
    assert st.counter_get("pages") == 7
    f = st.frontier(**FR)
    assert len(f) == 19
    got = drain(f)
    assert len(got) == 19
    for url, payload in got:
        i = int(url.rsplit("/", 1)[1])
        assert payload == b"\0pay%d\xff" % i
    assert job.url not in [u for u, _ in got]
    # The seen-test came back: nothing admitted twice.
    assert f.add(job.url) in ("duplicate", "probably_seen")
    st.close()
    st.close()  # again: a no-op


def test_state_in_flight_at_close_is_refetched(tmp_path):
    d = str(tmp_path / "s")
    st = CrawlState(d)
    f = st.frontier(**FR)
    for i in range(4):
        f.add("http://a.test/%d" % i, payload=b"p%d" % i)
    j0, j1, j2 = fetch(f), fetch(f), fetch(f)
    f.done(j0, 200, now_ms=0)
    st.commit()
    f.done(j1, 200, now_ms=0)  # not committed: lost with the close
    st.close()
    with pytest.raises(InvalidArgumentError):
        f.done(j2, 200)  # a job of a closed state
    with pytest.raises(InvalidArgumentError):
        f.next(0)
    with pytest.raises(InvalidArgumentError):
        len(f)
    with pytest.raises(InvalidArgumentError):
        st.commit()
    with pytest.raises(InvalidArgumentError):
        st.info()

    st = CrawlState(d)
    assert st.info()["refetched_now"] == 2  # j1 and j2
    f = st.frontier(**FR)
    got = drain(f)
    assert sorted(got) == [("http://a.test/1", b"p1"),
                           ("http://a.test/2", b"p2"),
                           ("http://a.test/3", b"p3")]
    # The in-flight ones are queued at the head of their host's queue.
    assert [u for u, _ in got[:2]] == ["http://a.test/1", "http://a.test/2"]
    st.close()


def test_state_dont_filter_resume(tmp_path):
    d = str(tmp_path / "s")
    with CrawlState(d) as st:
        f = st.frontier(**FR)
        f.add("http://a.test/x")
        f.done(fetch(f), 200, now_ms=0)
        st.snapshot()
        assert f.add("http://a.test/x", payload=b"again",
                     dont_filter=True) == "queued"
    with CrawlState(d) as st:
        assert st.info()["journal"] == 2
        f = st.frontier(**FR)
        assert drain(f) == [("http://a.test/x", b"again")]
        assert f.add("http://a.test/x") in ("duplicate", "probably_seen")


def test_state_scope_of_seeds_survives(tmp_path):
    d = str(tmp_path / "s")
    with CrawlState(d) as st:
        f = st.frontier(scope="host", **FR)
        f.add("http://a.test/", seed=True)
    with CrawlState(d) as st:
        f = st.frontier(scope="host", **FR)
        assert f.add("http://a.test/next") == "queued"
        assert f.add("http://b.test/") == "out_of_scope"


def test_state_failed_page_is_not_refetched(tmp_path):
    d = str(tmp_path / "s")
    with CrawlState(d) as st:
        f = st.frontier(max_retries=0, **FR)
        f.add("http://a.test/t")
        f.add("http://a.test/ok")
        assert f.done(fetch(f), 0, fault="transient", now_ms=0) is False
        assert f.done(fetch(f), 200, now_ms=0) is False
    with CrawlState(d) as st:
        assert st.info()["refetched_now"] == 0
        assert st.info()["queued"] == 0
        f = st.frontier(max_retries=0, **FR)
        assert f.next(0).action == "done"
    # Recorded as given up to a transient fault (page_failed: the state's
    # table of those, which crawl --retry-failed queues again), the other
    # as done only.
    import sqlite3
    db = sqlite3.connect("file:%s/crawl.db?mode=ro" % d, uri=True)
    try:
        rows = db.execute("SELECT u.url FROM failed f JOIN urls u"
                          " ON u.seq = f.seq").fetchall()
    finally:
        db.close()
    assert rows == [("http://a.test/t",)]


def test_state_locked(tmp_path):
    d = str(tmp_path / "s")
    st = CrawlState(d)
    with pytest.raises(StateLockedError) as e:
        CrawlState(d)
    assert e.value.pid == os.getpid()
    assert e.value.name == "BC_ERR_LOCKED"
    # From another process too.
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, bloomcrawl
            try:
                bloomcrawl.CrawlState(sys.argv[1])
            except bloomcrawl.StateLockedError as e:
                print(e.pid)
            """), d],
        capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == str(os.getpid()), r.stderr
    st.close()
    CrawlState(d).close()


def test_state_options_mismatch(tmp_path):
    d = str(tmp_path / "s")
    with CrawlState(d, options={"--spider": "a", "--jobs": "1"}) as st:
        st.frontier(**FR)
    with pytest.raises(StateMismatchError) as e:
        CrawlState(d, options={"--spider": "b", "--jobs": "1"})
    assert (e.value.option, e.value.was, e.value.now) == ("--spider", "a",
                                                          "b")
    assert e.value.name == "BC_ERR_MISMATCH"
    # An option left out: refused when the frontier is built.
    with CrawlState(d, options={"--spider": "a"}) as st:
        with pytest.raises(StateMismatchError) as e:
            st.frontier(**FR)
        assert e.value.option == "--jobs"
    # The refusals left the state unlocked and as it was.
    with CrawlState(d, options={"--spider": "a", "--jobs": "1"}) as st:
        st.frontier(**FR)
        assert st.info()["runs"] == 2
    with pytest.raises(TypeError):
        CrawlState(d, options={"--jobs": 1})
    with pytest.raises(TypeError):
        CrawlState(d, options=["--jobs"])
    with pytest.raises(ValueError):
        CrawlState(d, options={"--scope": "host"})  # the frontier's


def test_state_frontier_settings_pinned(tmp_path):
    d = str(tmp_path / "s")
    with CrawlState(d) as st:
        st.frontier(scope="host", **FR)
    for change, option, was, now in (
            ({"expected": 50_000}, "--expect", "10000", "50000"),
            ({"scope": "domain"}, "--scope", "host", "domain"),
            ({"obey_robots": True}, "--no-robots", "yes", "no"),
            ({"exclude": ["*.pdf", "*.zip"]}, "--exclude", "",
             "*.pdf *.zip")):
        args = dict(FR, scope="host")
        args.update(change)
        with CrawlState(d) as st:
            with pytest.raises(StateMismatchError) as e:
                st.frontier(**args)
            assert (e.value.option, e.value.was, e.value.now) == (
                option, was, now)
    with CrawlState(d) as st:  # politeness may change
        st.frontier(**dict(FR, scope="host", min_delay=2.0, per_host=1))


def test_state_misuse(tmp_path):
    d = tmp_path / "s"
    st = CrawlState(d)
    with pytest.raises(InvalidArgumentError):
        st.snapshot()  # no frontier yet
    with pytest.raises(TypeError):
        st.frontier(colour="blue")
    f = st.frontier(**FR)
    with pytest.raises(InvalidArgumentError):
        st.frontier(**FR)  # once per open
    with pytest.raises(ValueError):
        st.counter_set("x" * 64, 1)
    with pytest.raises(ValueError):
        st.counter_set("pages", -1)
    with pytest.raises(TypeError):
        st.counter_get(5)
    assert st.counter_get("never") == 0
    f.add("http://a.test/")
    job = fetch(f)
    st.close()
    assert st.closed
    for call in (lambda: f.add("http://a.test/2"), lambda: f.next(0),
                 lambda: f.done(job, 200), lambda: f.giveback(job),
                 lambda: f.stats(), lambda: st.snapshot(),
                 lambda: st.counter_set("pages", 1),
                 lambda: st.frontier(**FR)):
        with pytest.raises(InvalidArgumentError):
            call()
    with pytest.raises(TypeError):
        CrawlState(5)
    with pytest.raises(ValueError):
        CrawlState("a\0b")
    (tmp_path / "file").write_text("not a state")
    with pytest.raises(Error) as e:
        CrawlState(tmp_path / "file")
    assert e.value.name == "BC_ERR_FORMAT"


def test_state_garbage_collected_unlocks(tmp_path):
    import gc
    d = str(tmp_path / "s")
    st = CrawlState(d)
    f = st.frontier(**FR)
    f.add("http://a.test/")
    fetch(f)
    del st, f
    gc.collect()
    CrawlState(d).close()  # not locked any more


# A child that crawls into a state and is killed: N URLs with payloads
# admitted and committed, then DONE of them done and IN_FLIGHT more handed
# out, committed; then, uncommitted, two more handed out and one new URL;
# then "ready", and it waits for its SIGKILL.
KILL_CHILD = r"""
import sys, time
import bloomcrawl
d, n, done_n, flight_n = sys.argv[1], *map(int, sys.argv[2:5])
st = bloomcrawl.CrawlState(d, options={"--test": "kill"})
f = st.frontier(obey_robots=False, min_delay=0.0, expected=10_000,
                per_host=64)
for i in range(n):
    assert f.add("http://h%d.test/p/%d" % (i % 3, i), seed=True,
                 payload=b"\0req%d\xff" % i) == "queued"
st.commit()
jobs = [f.next(0) for _ in range(done_n + flight_n)]
for job in jobs[:done_n]:
    assert f.done(job, 200, now_ms=0) is False
st.commit()
f.next(0)
f.next(0)
f.add("http://h0.test/uncommitted")
print(" ".join(job.url for job in jobs[done_n:]), flush=True)
time.sleep(60)
"""


def test_state_kill_9(tmp_path):
    d = str(tmp_path / "s")
    n, done_n, flight_n = 30, 8, 5
    child = subprocess.Popen(
        [sys.executable, "-c", KILL_CHILD, d, str(n), str(done_n),
         str(flight_n)], stdout=subprocess.PIPE, text=True)
    try:
        in_flight = child.stdout.readline().split()
        assert len(in_flight) == flight_n
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()

    st = CrawlState(d, options={"--test": "kill"})
    info = st.info()
    assert info["refetched_now"] == flight_n
    assert info["queued"] == n - done_n - flight_n
    f = st.frontier(obey_robots=False, min_delay=0.0, expected=10_000,
                    per_host=64)
    got = drain(f)
    urls = [u for u, _ in got]
    # Nothing lost, nothing twice: every URL not done before the kill, once,
    # with its payload; the committed in-flight ones first on their hosts.
    assert len(urls) == len(set(urls)) == n - done_n
    assert set(in_flight) <= set(urls)
    assert "http://h0.test/uncommitted" not in urls
    for url, payload in got:
        i = int(url.rsplit("/", 1)[1])
        assert payload == b"\0req%d\xff" % i
    for host in ("h0", "h1", "h2"):
        mine = [u for u in urls if "//%s." % host in u]
        first = [u for u in in_flight if "//%s." % host in u]
        assert mine[:len(first)] == first
    st.close()
