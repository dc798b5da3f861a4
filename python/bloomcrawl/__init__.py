"""bloomcrawl: URL normalization, Bloom filters, the two-tier seen-test,
robots.txt and link extraction of the bloomcrawl C library, from Python.

Every call goes to the C library through cffi (bloomcrawl._native, built
by python/bloomcrawl_build.py); cffi releases the GIL around each C call,
so a batch test-and-add or the link extraction of a large page lets other
threads run. Each object holds a lock, so two threads sharing one object
take turns instead of racing in C (the C objects are not thread-safe).

Errors of the C library raise a subclass of bloomcrawl.Error carrying the
bc_status enumerator's name (e.g. "BC_ERR_URL_SCHEME") and bc_strerror()'s
message. Arguments of the wrong type raise TypeError, out-of-range numbers
ValueError or OverflowError, before any C call.
"""
import array
import enum
import os
import sys
import threading
from typing import (Dict, Iterable, Iterator, List, Optional, Sequence,
                    Union, overload)

from ._native import ffi, lib

__all__ = ["Error", "InvalidArgumentError", "URLError", "FileError",
           "NoMemoryError", "TooLargeError", "normalize", "BloomFilter",
           "Seen", "Verdict", "Verdicts", "Robots", "links"]

Key = Union[str, bytes, bytearray, memoryview]
Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# The longest URL normalize() accepts as max_len (16 MiB): larger asks
# would make the output buffer the allocation, not the URL.
MAX_URL_LEN = 1 << 24


class Error(Exception):
    """A bloomcrawl C call failed: status (int), name ("BC_ERR_..."),
    message (bc_strerror's text)."""

    def __init__(self, status: int, context: str = "") -> None:
        self.status = status
        name = lib.bcpy_status_name(status)
        self.name = ffi.string(name).decode() if name else "BC_UNKNOWN"
        self.message = ffi.string(lib.bc_strerror(status)).decode()
        text = "%s: %s" % (self.name, self.message)
        super().__init__(context + ": " + text if context else text)


class InvalidArgumentError(Error, ValueError):
    """BC_ERR_INVALID_ARG."""


class URLError(Error, ValueError):
    """BC_ERR_URL_*: the URL cannot be fetched."""


class FileError(Error, OSError):
    """BC_ERR_IO and the file format errors (FORMAT, VERSION, TRUNCATED,
    CHECKSUM, CORRUPT)."""


class NoMemoryError(Error, MemoryError):
    """BC_ERR_NOMEM."""


class TooLargeError(Error, ValueError):
    """BC_ERR_TOO_LARGE."""


_FILE_ERRORS = {"BC_ERR_IO", "BC_ERR_FORMAT", "BC_ERR_VERSION",
                "BC_ERR_TRUNCATED", "BC_ERR_CHECKSUM", "BC_ERR_CORRUPT"}


def _raise(status: int, context: str = "") -> None:
    """Raise the Error subclass of a status other than BC_OK."""
    name = lib.bcpy_status_name(status)
    name = ffi.string(name).decode() if name else ""
    if name == "BC_ERR_INVALID_ARG":
        cls = InvalidArgumentError
    elif name.startswith("BC_ERR_URL_"):
        cls = URLError
    elif name in _FILE_ERRORS:
        cls = FileError
    elif name == "BC_ERR_NOMEM":
        cls = NoMemoryError
    elif name == "BC_ERR_TOO_LARGE":
        cls = TooLargeError
    else:
        cls = Error
    raise cls(status, context)


def _key(key: Key, what: str = "key") -> bytes:
    """A key as bytes: str is encoded as UTF-8 (lone surrogates raise
    UnicodeEncodeError, a ValueError)."""
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, bytes):
        return key
    if isinstance(key, (bytearray, memoryview)):
        return bytes(key)
    raise TypeError("%s must be str or bytes, not %s"
                    % (what, type(key).__name__))


def _path(path: Path) -> bytes:
    p = os.fsencode(path)
    if b"\0" in p:
        raise ValueError("path contains a NUL byte")
    return p


def _count(value: int, what: str, low: int = 0,
           high: int = (1 << 64) - 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError("%s must be an int, not %s"
                        % (what, type(value).__name__))
    if not low <= value <= high:
        raise ValueError("%s must be in %d..%d, not %d"
                         % (what, low, high, value))
    return value


def _rate(value: float, what: str = "fp_rate") -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError("%s must be a float, not %s"
                        % (what, type(value).__name__))
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError("%s must be in (0, 1), not %r" % (what, value))
    return value


# --- URL normalization -------------------------------------------------

class _Policy:
    """A struct bc_url_policy and the strings it points to (kept alive
    as long as the policy)."""

    def __init__(self, max_len: int = 0, sort_query: bool = False,
                 strip_session_ids: bool = False,
                 collapse_slashes: bool = False, strip_userinfo: bool = False,
                 strip_params: Sequence[str] = ()) -> None:
        self.max_len = _count(max_len, "max_len", 0, MAX_URL_LEN)
        if isinstance(strip_params, (str, bytes)):
            raise TypeError("strip_params must be a list of names")
        names = [_key(n, "a strip_params name") for n in strip_params]
        for n in names:
            if b"\0" in n:
                raise ValueError("a strip_params name contains a NUL byte")
        self.c = ffi.new("struct bc_url_policy *")
        self.c.max_len = self.max_len
        rules = 0
        for flag, value in ((lib.BC_URL_SORT_QUERY, sort_query),
                            (lib.BC_URL_STRIP_SESSION_IDS, strip_session_ids),
                            (lib.BC_URL_COLLAPSE_SLASHES, collapse_slashes),
                            (lib.BC_URL_STRIP_USERINFO, strip_userinfo)):
            if value:
                rules |= flag
        self.c.rules = rules
        self._names = [ffi.new("char[]", n) for n in names]
        self._array = ffi.new("const char *[]", self._names or 1)
        self.c.strip_params = self._array
        self.c.strip_params_count = len(names)
        self.size = (self.max_len or lib.BC_URL_MAX_LEN_DEFAULT) + 1


def _parse(base, href: bytes, policy: _Policy):
    """bc_url_normalize(): (buffer, struct bc_url *) or raise URLError."""
    out = ffi.new("char[]", policy.size)
    url = ffi.new("struct bc_url *")
    st = lib.bc_url_normalize(base, href, len(href), policy.c, out,
                              policy.size, url)
    if st != lib.BC_OK:
        _raise(st, "normalize")
    return out, url


def normalize(url: Key, base: Optional[Key] = None, *, max_len: int = 0,
              sort_query: bool = False, strip_session_ids: bool = False,
              collapse_slashes: bool = False, strip_userinfo: bool = False,
              strip_params: Sequence[str] = ()) -> str:
    """The canonical form of url (resolved against base when given), as
    bc_url_normalize() and bc_url_seen_key() make it: with no rule, the
    canonical fetch URL; with rules (the opt-in rules of docs/DESIGN.md
    3.1: sort_query, strip_session_ids, collapse_slashes, strip_userinfo,
    strip_params=["utm_*", ...]), the seen-key. Raises URLError (the
    BC_ERR_URL_* status in .name) for a URL that cannot be fetched."""
    policy = _Policy(max_len, sort_query, strip_session_ids,
                     collapse_slashes, strip_userinfo, strip_params)
    href = _key(url, "url")
    base_ref = ffi.NULL
    if base is not None:
        _base_buf, base_ref = _parse(ffi.NULL, _key(base, "base"), policy)
    buf, parsed = _parse(base_ref, href, policy)
    key = ffi.new("char[]", policy.size)
    key_len = ffi.new("size_t *")
    st = lib.bc_url_seen_key(parsed, policy.c, key, policy.size, key_len)
    if st != lib.BC_OK:
        _raise(st, "normalize")
    del buf
    return ffi.unpack(key, key_len[0]).decode("ascii")


# --- Bloom filter --------------------------------------------------------

_LAYOUTS = {"blocked": "BC_BLOOM_BLOCKED", "classic": "BC_BLOOM_CLASSIC"}


class BloomFilter:
    """A Bloom filter sized for n keys at false-positive rate p
    (bloomcrawl/bloom.h): add, `key in f`, test_and_add, save/load.
    len(f) is the number of adds that found their key new (at least one
    bit zero: bc_bloom_inserts, O(1)), so a key that was a false positive
    when added is not counted; estimated_count() estimates the distinct
    keys from the fill of the bit array (O(m))."""

    def __init__(self, n: int, p: float, *, layout: str = "blocked",
                 seed: int = 0) -> None:
        _count(n, "n", 1)
        p = _rate(p, "p")
        _count(seed, "seed")
        if layout not in _LAYOUTS:
            raise ValueError("layout must be 'blocked' or 'classic'")
        out = ffi.new("struct bc_bloom **")
        st = lib.bc_bloom_create(n, p, getattr(lib, _LAYOUTS[layout]), seed,
                                 0, out)
        if st != lib.BC_OK:
            _raise(st, "BloomFilter")
        self._init(out[0])

    def _init(self, handle) -> None:
        self._h = ffi.gc(handle, lib.bc_bloom_free)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path) -> "BloomFilter":
        """A filter saved by save() (checked: magic, version, checksum)."""
        out = ffi.new("struct bc_bloom **")
        st = lib.bc_bloom_load(_path(path), 0, out)
        if st != lib.BC_OK:
            _raise(st, "BloomFilter.load")
        self = cls.__new__(cls)
        self._init(out[0])
        return self

    def save(self, path: Path) -> None:
        """Save atomically (bc_bloom_save: a temporary file renamed)."""
        p = _path(path)
        with self._lock:
            st = lib.bc_bloom_save(self._h, p)
        if st != lib.BC_OK:
            _raise(st, "BloomFilter.save")

    def add(self, key: Key) -> None:
        k = _key(key)
        with self._lock:
            lib.bc_bloom_add(self._h, k, len(k))

    def test_and_add(self, key: Key) -> bool:
        """Add the key; True when it was new (a bit was zero)."""
        k = _key(key)
        with self._lock:
            return bool(lib.bc_bloom_test_and_add(self._h, k, len(k)))

    def __contains__(self, key: Key) -> bool:
        k = _key(key)
        with self._lock:
            return bool(lib.bc_bloom_contains(self._h, k, len(k)))

    def __len__(self) -> int:
        with self._lock:
            return int(lib.bc_bloom_inserts(self._h))

    def stats(self) -> Dict[str, Union[int, float, bool]]:
        """bc_bloom_stats as a dict (O(m): a popcount of the array)."""
        s = ffi.new("struct bc_bloom_stats *")
        with self._lock:
            lib.bc_bloom_stats(self._h, s)
        return {f: getattr(s, f) for f in (
            "m_bits", "bytes", "k", "n_expected", "inserts", "bits_set",
            "fill", "fpr_estimated", "n_estimated", "fpr_predicted")}

    def estimated_count(self) -> float:
        """Distinct keys estimated from the fill, -(m/k) ln(1 - X/m)."""
        return float(self.stats()["n_estimated"])


# --- seen-test -----------------------------------------------------------

class Verdict(enum.IntEnum):
    """enum bc_seen_verdict."""
    NEW = lib.BC_SEEN_NEW
    DUPLICATE = lib.BC_SEEN_DUPLICATE
    PROBABLY_SEEN = lib.BC_SEEN_PROBABLY_SEEN


_VERDICTS = {int(v): v for v in Verdict}
_VERDICT_OF = tuple(_VERDICTS[i] for i in range(len(_VERDICTS)))
# The array typecode of size_t (the lengths of a batch, read in place).
_SIZE_T = next(t for t in "LQ"
               if array.array(t).itemsize == ffi.sizeof("size_t"))


# Keys per C call of a batch of str: 4096 URLs of 60 bytes make buffers of
# 240 KiB, which stay in the cache between the join, the encode and the C
# call (one join of 10^6 such keys takes 2.5 times as long: 60 MB of new
# pages for the str and again for its bytes).
_BATCH_SLICE = 4096


class Verdicts(Sequence[Verdict]):
    """The verdicts of Seen.test_and_add_batch, in the keys' order: a
    read-only sequence of Verdict stored as one byte per key (the
    bc_seen_verdict values, Verdict.NEW == 0, ...), so a batch of 10^6
    keys makes no 10^6 Python objects. v[i] is a Verdict, v[i:j] a list
    of them; v.count(Verdict.NEW) counts the bytes; v == [Verdict, ...]
    compares item by item; v.codes is the bytes themselves (a read-only
    memoryview)."""

    __slots__ = ("_codes",)

    def __init__(self, codes: bytearray) -> None:
        self._codes = codes

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, i: int) -> Verdict: ...

    @overload
    def __getitem__(self, i: slice) -> List[Verdict]: ...

    def __getitem__(self, i: Union[int, slice]
                    ) -> Union[Verdict, List[Verdict]]:
        if isinstance(i, slice):
            return list(map(_VERDICT_OF.__getitem__, self._codes[i]))
        return _VERDICT_OF[self._codes[i]]

    def __iter__(self) -> Iterator[Verdict]:
        return map(_VERDICT_OF.__getitem__, self._codes)

    def count(self, value: object) -> int:
        # As list.count, by ==: Verdict.NEW and 0 count the same bytes.
        if isinstance(value, int) and 0 <= value < 256:
            return self._codes.count(value)
        return 0

    @property
    def codes(self) -> memoryview:
        return memoryview(self._codes).toreadonly()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Verdicts):
            return self._codes == other._codes
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and all(
                a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "Verdicts(%r)" % (list(self),)


class Seen:
    """The two-tier seen-test (bloomcrawl/seen.h): a Bloom filter sized
    for `expected` keys at `fp_rate`, and an exact LRU of `lru` recent
    keys that settles the filter's "maybe". test_and_add() returns a
    Verdict; `key in seen` peeks (changes nothing); save/load keep the
    filter (the LRU is a cache and starts empty after load)."""

    def __init__(self, expected: int = 1000000, fp_rate: float = 0.01, *,
                 lru: int = 50000, seed: int = 0) -> None:
        config = self._config(lru)
        config.expected = _count(expected, "expected", 1)
        config.fp_rate = _rate(fp_rate)
        config.seed = _count(seed, "seed")
        out = ffi.new("struct bc_seen **")
        st = lib.bc_seen_create(config, out)
        if st != lib.BC_OK:
            _raise(st, "Seen")
        self._init(out[0])

    @staticmethod
    def _config(lru: int):
        config = ffi.new("struct bc_seen_config *")
        lib.bc_seen_config_init(config)
        config.lru_capacity = _count(lru, "lru", 0, 1 << 40)
        return config

    def _init(self, handle) -> None:
        self._h = ffi.gc(handle, lib.bc_seen_free)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: Path, *, lru: int = 50000) -> "Seen":
        config = cls._config(lru)
        out = ffi.new("struct bc_seen **")
        st = lib.bc_seen_load(_path(path), config, out)
        if st != lib.BC_OK:
            _raise(st, "Seen.load")
        self = cls.__new__(cls)
        self._init(out[0])
        return self

    def save(self, path: Path) -> None:
        p = _path(path)
        with self._lock:
            st = lib.bc_seen_save(self._h, p)
        if st != lib.BC_OK:
            _raise(st, "Seen.save")

    def test_and_add(self, key: Key) -> Verdict:
        k = _key(key)
        v = ffi.new("enum bc_seen_verdict *")
        with self._lock:
            st = lib.bc_seen_test_and_add(self._h, k, len(k), v)
        if st != lib.BC_OK:
            _raise(st, "Seen.test_and_add")
        return _VERDICTS[v[0]]

    def test_and_add_batch(self, keys: Iterable[Key]) -> "Verdicts":
        """test_and_add for each key in order, the C calls made without
        the GIL (the same verdicts as single calls), as a Verdicts: a
        sequence of Verdict read from one byte per key. A key of the wrong
        type (TypeError) or a str that UTF-8 cannot encode (a lone
        surrogate: UnicodeEncodeError) refuses the whole batch before any
        key is tested. The list is read twice (a check pass, then the C
        calls), not copied: another thread must not change it meanwhile."""
        if isinstance(keys, (str, bytes)):
            raise TypeError("keys must be a list of str or bytes")
        if not isinstance(keys, (list, tuple)):
            keys = list(keys)
        n = len(keys)
        out = bytearray(n)
        if n == 0:
            return Verdicts(out)
        if self._str_batch_ok(keys):
            self._batch_str(keys, out)
        else:
            self._batch_any(keys, out)
        return Verdicts(out)

    @staticmethod
    def _str_batch_ok(keys: Sequence[Key]) -> bool:
        """All keys are str without a NUL (so a NUL can separate them)
        and UTF-8 encodes them all. Checked a slice at a time with the
        work the batch itself does (a join; an encode only when a slice
        is not all ASCII), so that the batch raises before it tests."""
        step = _BATCH_SLICE
        for i in range(0, len(keys), step):
            try:
                s = "".join(keys[i:i + step])
            except TypeError:
                return False  # not all str: _batch_any() raises or copes
            if "\0" in s:
                return False
            if not s.isascii():
                s.encode("utf-8")  # a lone surrogate raises here
        return True

    def _batch_str(self, keys: Sequence[Key], out: bytearray) -> None:
        """The keys a slice at a time, each slice joined by NULs and
        encoded: buffers of about _BATCH_SLICE keys, which stay in the
        cache, instead of the whole batch's 2 copies (a str and its bytes,
        60 MB each for 10^6 URLs of 60 bytes)."""
        step = _BATCH_SLICE
        verdicts = ffi.from_buffer("unsigned char[]", out)
        with self._lock:
            for i in range(0, len(keys), step):
                part = keys[i:i + step]
                buf = "\0".join(part).encode("utf-8")
                st = lib.bcpy_seen_batch_nul(self._h, buf, len(buf),
                                             len(part), verdicts + i)
                if st != lib.BC_OK:
                    _raise(st, "Seen.test_and_add_batch")

    def _batch_any(self, keys: Sequence[Key], out: bytearray) -> None:
        """Keys of any Key type (or str holding NULs): each as bytes, laid
        end to end, with their lengths."""
        ks = [_key(k) for k in keys]
        lens = array.array(_SIZE_T, map(len, ks))
        buf = b"".join(ks)
        del ks
        with self._lock:
            st = lib.bcpy_seen_batch(self._h, buf,
                                     ffi.from_buffer("size_t[]", lens),
                                     len(lens),
                                     ffi.from_buffer("unsigned char[]", out))
        if st != lib.BC_OK:
            _raise(st, "Seen.test_and_add_batch")

    def peek(self, key: Key) -> Verdict:
        """The verdict test_and_add would give now, changing nothing."""
        k = _key(key)
        v = ffi.new("enum bc_seen_verdict *")
        with self._lock:
            st = lib.bc_seen_peek(self._h, k, len(k), v)
        if st != lib.BC_OK:
            _raise(st, "Seen.peek")
        return _VERDICTS[v[0]]

    def __contains__(self, key: Key) -> bool:
        return self.peek(key) != Verdict.NEW

    def stats(self) -> Dict[str, Union[int, float, bool]]:
        s = ffi.new("struct bc_seen_stats *")
        with self._lock:
            lib.bc_seen_stats(self._h, s)
        return {f: getattr(s, f) for f in (
            "tested", "verdict_new", "duplicate", "probably_seen",
            "fp_caught", "lru_complete")}


# --- robots.txt ----------------------------------------------------------

class Robots:
    """A robots.txt body (bytes as fetched, or str), parsed for each
    agent on first use (bloomcrawl/robots.h, RFC 9309)."""

    def __init__(self, body: Key) -> None:
        self._body = _key(body, "body")
        self._parsed = {}
        self._lock = threading.Lock()

    def _for(self, agent: Key):
        a = _key(agent, "agent")
        with self._lock:
            r = self._parsed.get(a)
            if r is None:
                out = ffi.new("struct bc_robots **")
                st = lib.bc_robots_parse(self._body, len(self._body), a,
                                         len(a), out)
                if st != lib.BC_OK:
                    _raise(st, "Robots")
                r = self._parsed[a] = ffi.gc(out[0], lib.bc_robots_free)
            return r

    def allowed(self, agent: Key, url: Key) -> bool:
        """May agent fetch url? url is normalized first (an absolute URL,
        or a path such as "/a?b"); a URL that cannot be normalized raises
        URLError."""
        u = _key(url, "url")
        if u.startswith(b"/") and not u.startswith(b"//"):
            u = b"http://robots.invalid" + u
        policy = _Policy()
        _buf, parsed = _parse(ffi.NULL, u, policy)
        n = ffi.new("size_t *")
        target = lib.bc_url_target(parsed, n)
        r = self._for(agent)
        return bool(lib.bc_robots_allowed(r, target, n[0]))

    def crawl_delay(self, agent: Key) -> Optional[float]:
        """The Crawl-delay that applies to agent, in seconds, or None."""
        ms = ffi.new("uint64_t *")
        if lib.bc_robots_crawl_delay(self._for(agent), ms):
            return ms[0] / 1000.0
        return None


# --- link extraction -----------------------------------------------------

_ORDER = sys.byteorder  # bcpy_links writes its uint64 fields natively

def links(html: Key, base: Key, *, nofollow: bool = False) -> List[str]:
    """The links of an HTML page (bytes as fetched) whose URL is base,
    resolved and normalized, in document order (duplicates kept). Links
    marked nofollow (rel=nofollow, or after <meta name=robots
    content=nofollow>) are left out unless nofollow=True; hrefs that
    cannot be fetched (mailto:, bad hosts) are skipped, as the crawler
    skips them. The extraction runs without the GIL."""
    page = _key(html, "html")
    doc = _key(base, "base")
    policy = _Policy()
    doc_buf, doc_url = _parse(ffi.NULL, doc, policy)
    out = ffi.new("char **")
    out_len = ffi.new("size_t *")
    st = lib.bcpy_links(page, len(page), doc, len(doc), out, out_len)
    if st != lib.BC_OK:
        _raise(st, "links")
    try:
        data = ffi.unpack(out[0], out_len[0]) if out_len[0] else b""
    finally:
        lib.bcpy_free(out[0])
    skip = 0 if nofollow else (lib.BC_LINK_NOFOLLOW |
                               lib.BC_LINK_PAGE_NOFOLLOW)
    result = []
    bases = {}
    pos = 0
    end = len(data)
    while pos < end:
        flags = int.from_bytes(data[pos:pos + 8], _ORDER)
        hl = int.from_bytes(data[pos + 8:pos + 16], _ORDER)
        href = data[pos + 16:pos + 16 + hl]
        pos += 16 + hl
        bl = int.from_bytes(data[pos:pos + 8], _ORDER)
        b = data[pos + 8:pos + 8 + bl]
        pos += 8 + bl
        if flags & skip:
            continue
        ref = doc_url
        if flags & lib.BC_LINK_BASE_HREF:
            # A <base href>, resolved against the page's URL; an unusable
            # one is ignored, as browsers (and crawler.c) do.
            if b not in bases:
                try:
                    bases[b] = _parse(doc_url, b, policy)
                except URLError:
                    bases[b] = None
            if bases[b] is not None:
                ref = bases[b][1]
        try:
            buf, u = _parse(ref, href, policy)
        except URLError:
            continue
        result.append(ffi.string(u.href).decode("ascii"))
    del doc_buf
    return result


# --- frontier and crawl state (bloomcrawl/_frontier.py) -----------------

from ._frontier import (CrawlState, Frontier, Job,  # noqa: E402
                        StateLockedError, StateMismatchError, now_ms)

__all__ += ["Job", "Frontier", "CrawlState", "StateLockedError",
            "StateMismatchError", "now_ms"]


# --- the Redis seen-test (bloomcrawl/_redis.py) -------------------------

from ._redis import (RedisConnectError, RedisError,  # noqa: E402
                     RedisLostError, RedisMismatchError, RedisReplyError,
                     RedisSeen, RedisTimeoutError)

__all__ += ["RedisSeen", "RedisError", "RedisConnectError", "RedisLostError",
            "RedisTimeoutError", "RedisReplyError", "RedisMismatchError"]
