"""Unit tests of the bloomcrawl Python package (python/bloomcrawl): every
wrapper, and bad input to each (it must raise, never crash)."""
import sys
import threading

import pytest

import bloomcrawl
from bloomcrawl import (BloomFilter, Error, FileError, InvalidArgumentError,
                        Robots, Seen, URLError, Verdict, links, normalize)


# --- normalize -----------------------------------------------------------

def test_normalize_safe_rules():
    assert normalize("HTTP://Example.COM:80/a/./b/../c#top") == \
        "http://example.com/a/c"
    assert normalize(b"http://example.com/%7euser") == \
        "http://example.com/~user"


def test_normalize_resolves_against_base():
    assert normalize("../c?x=1", base="http://x.com/a/b/") == \
        "http://x.com/a/c?x=1"
    assert normalize("//other.org/p", base="https://x.com/") == \
        "https://other.org/p"


def test_normalize_opt_in_rules():
    url = "http://u:pw@x.com//a//b?z=1&utm_source=m&a=2&jsessionid=9"
    assert normalize(url) == url
    assert normalize(url, sort_query=True) == \
        "http://u:pw@x.com//a//b?a=2&jsessionid=9&utm_source=m&z=1"
    assert normalize(url, strip_params=["utm_*"], strip_session_ids=True,
                     collapse_slashes=True, strip_userinfo=True) == \
        "http://x.com/a/b?z=1&a=2"


def test_normalize_errors_carry_the_status():
    with pytest.raises(URLError) as e:
        normalize("mailto:a@b.c")
    assert e.value.name == "BC_ERR_URL_SCHEME"
    assert e.value.message == "unsupported scheme"
    assert isinstance(e.value, Error) and isinstance(e.value, ValueError)
    for bad, name in (("relative/path", "BC_ERR_URL_NO_BASE"),
                      ("", "BC_ERR_URL_EMPTY"),
                      ("http://x.com:99999/", "BC_ERR_URL_PORT"),
                      ("http://1.2.3.256/", "BC_ERR_URL_IPV4"),
                      ("http://[::g]/", "BC_ERR_URL_IPV6"),
                      ("http://a b/", "BC_ERR_URL_HOST")):
        with pytest.raises(URLError) as e:
            normalize(bad)
        assert e.value.name == name, bad
    with pytest.raises(URLError) as e:
        normalize("http://x.com/" + "a" * 100, max_len=50)
    assert e.value.name == "BC_ERR_URL_TOO_LONG"
    with pytest.raises(URLError):
        normalize("x", base="ftp://x.com/")


def test_normalize_bad_input_raises():
    for bad in (None, 1, 1.5, ["http://x.com/"], object()):
        with pytest.raises(TypeError):
            normalize(bad)
    with pytest.raises(TypeError):
        normalize("a", base=5)
    with pytest.raises(ValueError):
        normalize("http://x.com/", max_len=-1)
    with pytest.raises(ValueError):
        normalize("http://x.com/", max_len=1 << 62)
    with pytest.raises(TypeError):
        normalize("http://x.com/", strip_params="utm_*")
    with pytest.raises(ValueError):
        normalize("http://x.com/?a\0b=1", strip_params=["a\0b"])
    with pytest.raises(UnicodeEncodeError):
        normalize("http://x.com/\ud800")
    # Anything in bytes is a URL the C side must handle: never a crash.
    for junk in (b"\0\0\0", b"http://\xff\xfe/", bytes(range(256)) * 40,
                 b"http://" + b"a." * 5000):
        with pytest.raises(URLError):
            normalize(junk)
    assert normalize(b"http://x.com/\xc3\xa9\0x") == \
        "http://x.com/%C3%A9%00x"


# --- BloomFilter ---------------------------------------------------------

def test_bloom_add_contains_len(tmp_path):
    f = BloomFilter(10000, 0.01)
    keys = ["http://x.com/%d" % i for i in range(5000)]
    for k in keys:
        f.add(k)
    assert all(k in f for k in keys)
    false_pos = sum(("http://y.com/%d" % i) in f for i in range(10000))
    assert false_pos < 300  # p = 0.01 of 10000 is 100 expected
    # len: the keys that found a zero bit; a false positive at its add
    # (p = 0.01 at the end, less before) is not counted.
    assert 4950 <= len(f) <= 5000
    assert abs(f.estimated_count() - 5000) < 250
    assert f.test_and_add(b"new key") is True
    assert f.test_and_add(b"new key") is False
    f.save(tmp_path / "f.bloom")
    g = BloomFilter.load(str(tmp_path / "f.bloom"))
    assert all(k in g for k in keys) and b"new key" in g
    assert g.stats()["m_bits"] == f.stats()["m_bits"]


def test_bloom_bad_input(tmp_path):
    for args in ((0, 0.01), (10, 0.0), (10, 1.0), (10, -1), (-5, 0.1)):
        with pytest.raises(ValueError):
            BloomFilter(*args)
    for args in ((None, 0.01), ("10", 0.01), (10, None), (10, "x")):
        with pytest.raises(TypeError):
            BloomFilter(*args)
    with pytest.raises((Error, ValueError, OverflowError)):
        BloomFilter(1 << 63, 1e-9)  # far beyond memory: refused, no crash
    with pytest.raises(ValueError):
        BloomFilter(10, 0.1, layout="spiral")
    f = BloomFilter(10, 0.1)
    for bad in (None, 5, ["a"]):
        with pytest.raises(TypeError):
            f.add(bad)
        with pytest.raises(TypeError):
            bad in f
    with pytest.raises(FileError) as e:
        BloomFilter.load(tmp_path / "missing")
    assert e.value.name == "BC_ERR_IO"
    (tmp_path / "junk").write_bytes(b"not a filter" * 10)
    with pytest.raises(FileError) as e:
        BloomFilter.load(tmp_path / "junk")
    assert e.value.name == "BC_ERR_FORMAT"
    with pytest.raises(FileError):
        f.save(tmp_path / "no" / "such" / "dir")
    with pytest.raises(ValueError):
        f.save("a\0b")
    with pytest.raises(TypeError):
        f.save(None)


# --- Seen ----------------------------------------------------------------

def test_seen_verdicts_and_peek():
    s = Seen(1000, 0.01, lru=100)
    assert s.test_and_add("http://x.com/") is Verdict.NEW
    assert s.test_and_add(b"http://x.com/") is Verdict.DUPLICATE
    assert "http://x.com/" in s
    assert "http://y.com/" not in s
    assert s.peek("http://y.com/") is Verdict.NEW
    assert "http://y.com/" not in s  # peek added nothing
    st = s.stats()
    assert st["tested"] == 2 and st["duplicate"] == 1


def test_seen_batch_same_as_singles():
    keys = ["k%d" % (i % 700) for i in range(2000)] + [b"", b"\0x\0"] * 2
    a, b = Seen(5000, 0.01, lru=300), Seen(5000, 0.01, lru=300)
    batch = a.test_and_add_batch(keys)
    assert batch == [b.test_and_add(k) for k in keys]
    assert batch[:700] == [Verdict.NEW] * 700
    assert set(batch[700:2000]) <= {Verdict.DUPLICATE, Verdict.PROBABLY_SEEN}
    assert batch[2000:] == [Verdict.NEW, Verdict.NEW, Verdict.DUPLICATE,
                            Verdict.DUPLICATE]
    assert a.test_and_add_batch([]) == []
    # The str path (NUL-joined slices) and the other one (a key each) agree.
    mixed = ["caf\u00e9", "caf\u00e9".encode(), "ascii", bytearray(b"ascii"),
             memoryview(b"x\0y"), "x\0y"]
    c, d = Seen(100, 0.01), Seen(100, 0.01)
    assert c.test_and_add_batch(mixed) == [d.test_and_add(k) for k in mixed]
    assert c.test_and_add_batch(("caf\u00e9", "ascii", "new")) == [
        Verdict.DUPLICATE, Verdict.DUPLICATE, Verdict.NEW]
    assert a.test_and_add_batch(iter(["fresh"])) == [Verdict.NEW]


def test_seen_batch_slices_same_as_singles():
    # Batches longer than one slice (_BATCH_SLICE keys per C call): the
    # str path (NUL-joined slices, ASCII and not) and the path of a key
    # each (a bytes key or a str holding a NUL sends the batch there)
    # give the single calls' verdicts, in order, across slice borders.
    step = bloomcrawl._BATCH_SLICE
    n = 2 * step + 123
    base = ["http://h%d.com/p%d" % (i % 50, i % (step + 7)) for i in range(n)]
    cases = [base, ["\u00e9%d" % (i % 3000) for i in range(n)],
             base[:-1] + [b"bytes"], base[:-1] + ["nul\0key"],
             base[:step] + [""] * 3 + base[step:]]
    for keys in cases:
        a, b = Seen(20000, 0.01, lru=500), Seen(20000, 0.01, lru=500)
        batch = a.test_and_add_batch(keys)
        singles = [b.test_and_add(k) for k in keys]
        assert len(batch) == len(keys)
        assert batch == singles and list(batch) == singles
        assert bytes(batch.codes) == bytes(int(v) for v in singles)
        assert batch[step - 1] is singles[step - 1]
        assert batch[-1] is singles[-1]
        for v in Verdict:
            assert batch.count(v) == singles.count(v)
        assert a.stats() == b.stats()


def test_seen_batch_verdicts_sequence():
    s = Seen(100, 0.01)
    v = s.test_and_add_batch(["a", "b", "a"])
    assert isinstance(v, bloomcrawl.Verdicts) and len(v) == 3
    assert v[0] is Verdict.NEW and v[2] is Verdict.DUPLICATE
    assert v[1:] == [Verdict.NEW, Verdict.DUPLICATE]
    assert v == (Verdict.NEW, Verdict.NEW, Verdict.DUPLICATE)
    assert v != [Verdict.NEW] * 3 and v != [Verdict.NEW] * 2
    assert v.count(Verdict.NEW) == 2 and v.count(0) == 2
    assert v.count("x") == 0 and v.index(Verdict.DUPLICATE) == 2
    assert Verdict.DUPLICATE in v and Verdict.PROBABLY_SEEN not in v
    assert list(reversed(v))[0] is Verdict.DUPLICATE
    assert v.codes.readonly and v.codes.tolist() == [0, 0, 1]
    with pytest.raises(IndexError):
        v[3]
    with pytest.raises(TypeError):
        v[0] = Verdict.NEW
    assert repr(v).startswith("Verdicts([")


def test_seen_batch_refused_before_testing():
    # A bad key after the first slice still refuses the whole batch.
    step = bloomcrawl._BATCH_SLICE
    s = Seen(100000, 0.01)
    good = ["k%d" % i for i in range(2 * step)]
    with pytest.raises(TypeError):
        s.test_and_add_batch(good + [None])
    with pytest.raises(UnicodeEncodeError):
        s.test_and_add_batch(good + ["\ud800"])
    with pytest.raises(UnicodeEncodeError):
        s.test_and_add_batch(good + ["\0", "\ud800"])
    assert s.stats()["tested"] == 0


def test_seen_batch_releases_the_gil():
    # With a switch interval of 100 s the interpreter never takes the GIL
    # from the main thread on its own: the ticking thread runs during the
    # batch only if the C call releases the GIL (cffi does, around every
    # call in API mode: Py_BEGIN_ALLOW_THREADS in the generated code).
    s = Seen(4000000, 0.01, lru=0)
    keys = ["http://x.com/%d" % i for i in range(2000000)]
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.0005)
    old = sys.getswitchinterval()
    t = threading.Thread(target=tick)
    t.start()
    sys.setswitchinterval(100)
    try:
        before = len(ticks)
        s.test_and_add_batch(keys)
        during = len(ticks) - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
    assert during >= 2


def test_seen_save_load(tmp_path):
    s = Seen(1000, 0.01)
    s.test_and_add_batch(["a", "b", "c"])
    s.save(tmp_path / "seen")
    t = Seen.load(tmp_path / "seen", lru=10)
    assert t.test_and_add("a") is Verdict.PROBABLY_SEEN  # LRU starts empty
    assert t.test_and_add("zzz") is Verdict.NEW


def test_seen_bad_input(tmp_path):
    with pytest.raises(ValueError):
        Seen(0)
    with pytest.raises(ValueError):
        Seen(100, 1.5)
    with pytest.raises(ValueError):
        Seen(100, 0.01, lru=-1)
    with pytest.raises(TypeError):
        Seen(None)
    with pytest.raises((Error, ValueError, OverflowError)):
        Seen(1 << 63, 1e-12)
    s = Seen(100, 0.01)
    for bad in (None, 3, 4.5):
        with pytest.raises(TypeError):
            s.test_and_add(bad)
        with pytest.raises(TypeError):
            bad in s
    with pytest.raises(TypeError):
        s.test_and_add_batch("abc")
    with pytest.raises(TypeError):
        s.test_and_add_batch(["a", None])
    with pytest.raises(TypeError):
        s.test_and_add_batch(None)
    assert s.stats()["tested"] == 0  # a refused batch tested nothing
    with pytest.raises(FileError):
        Seen.load(tmp_path / "missing")
    with pytest.raises(InvalidArgumentError) as e:
        s.save("/" + "x" * 5000)
    assert e.value.name == "BC_ERR_INVALID_ARG"


def test_seen_shared_by_threads():
    # The object's lock makes threads take turns: no race in C.
    s = Seen(100000, 0.01, lru=1000)
    batches = [["t%d-%d" % (t, i) for i in range(20000)] for t in range(4)]
    out = [None] * 4

    def run(t):
        out[t] = s.test_and_add_batch(batches[t])
    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert s.stats()["tested"] == 80000
    assert sum(v.count(Verdict.NEW) for v in out) > 79000


# --- Robots --------------------------------------------------------------

ROBOTS = b"""User-agent: *
Disallow: /private
Allow: /private/open
Crawl-delay: 1.5

User-agent: strictbot
Disallow: /
"""


def test_robots():
    r = Robots(ROBOTS)
    assert r.allowed("mybot/1.0", "http://x.com/public")
    assert not r.allowed("mybot/1.0", "http://x.com/private/a")
    assert r.allowed("mybot/1.0", "/private/open/b")
    assert r.allowed("mybot/1.0", "http://x.com/%70rivate/open")
    assert not r.allowed("StrictBot", "/anything")
    assert r.allowed("StrictBot", "/robots.txt")
    assert r.crawl_delay("mybot") == 1.5
    assert r.crawl_delay("strictbot") is None
    assert Robots("").allowed("a", "/x")


def test_robots_bad_input():
    with pytest.raises(TypeError):
        Robots(None)
    r = Robots(bytes(range(256)) * 100)
    assert r.allowed("a", "/x") in (True, False)
    with pytest.raises(TypeError):
        r.allowed(None, "/x")
    with pytest.raises(TypeError):
        r.allowed("a", None)
    with pytest.raises(URLError):
        r.allowed("a", "mailto:x@y")


# --- links ---------------------------------------------------------------

PAGE = b"""<html><head><base href="/d/"></head><body>
<a href="x">1</a> <a href="mailto:a@b.c">2</a>
<a rel="nofollow" href="/no">3</a> <iframe src="http://o.org/f"></iframe>
<a href="HTTP://O.ORG:80/a/../b#frag">4</a>
</body></html>"""


def test_links():
    assert links(PAGE, "http://h.com/p/q") == [
        "http://h.com/d/x", "http://o.org/f", "http://o.org/b"]
    assert "http://h.com/no" in links(PAGE, "http://h.com/p", nofollow=True)
    meta = b'<meta name="robots" content="nofollow"><a href="/a">a</a>'
    assert links(meta, "http://h.com/") == []
    assert links(b"", "http://h.com/") == []


def test_links_large_page():
    page = b"".join(b'<a href="/p%d">x</a>' % i for i in range(50000))
    out = links(page, "http://h.com/")
    assert len(out) == 50000 and out[-1] == "http://h.com/p49999"


def test_links_releases_the_gil():
    # As test_seen_batch_releases_the_gil: a thread ticks while the
    # extractor runs in C on a 12 MB page. The page has no link, so no
    # other C call (the normalizing of each link, which releases the GIL
    # too) runs: the ticks are the extractor's.
    page = b"<p>" + b"<i class='x'>text</i> <b>more text</b> " * 300000
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.0005)
    old = sys.getswitchinterval()
    t = threading.Thread(target=tick)
    t.start()
    sys.setswitchinterval(100)
    try:
        before = len(ticks)
        found = links(page, "http://h.com/", nofollow=True)
        during = len(ticks) - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
    assert found == []
    assert during >= 2


def test_links_bad_input():
    with pytest.raises(TypeError):
        links(None, "http://h.com/")
    with pytest.raises(TypeError):
        links(b"<a href=x>", None)
    with pytest.raises(URLError):
        links(b"<a href=x>", "not a url")
    assert links(bytes(range(256)) * 200, "http://h.com/") is not None
    assert links(b"<a href='" + b"x" * 100000 + b"'>", "http://h.com/") == []


def test_error_of_an_unknown_status():
    e = Error(10000)
    assert e.name == "BC_UNKNOWN"
    assert bloomcrawl.Error is Error
