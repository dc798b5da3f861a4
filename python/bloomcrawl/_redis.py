"""bloomcrawl.RedisSeen: the seen-test shared in Redis
(bloomcrawl/redis_seen.h), for several processes - on one machine or many
- that must admit each key once between them.

A blocked Bloom filter whose bits live in Redis strings under a key
prefix: "P:meta" records its sizing (m, k, seed; the first client writes
it, every later one must find the same, else RedisMismatchError), "P:0",
"P:1", ... hold 64 MiB of bits each. Test-and-add is one BITFIELD
command per Redis string (SET of each bit, which replies with the bit's
old value): Redis runs a command whole, so of several clients racing on
one key exactly one is told "new" - there is no check-then-set window. A
batch is one pipeline: one round trip for any number of keys.

Errors name their cause (bc_redis_seen_errmsg() is in the message and in
.errmsg): RedisConnectError (no server there: refused, no such socket),
RedisLostError (the connection broke, or with a timeout the server did
not answer in time: RedisTimeoutError, a subclass; some keys of the
failed call may have been added, and will answer "seen" from then on),
RedisReplyError (the server refused a command, e.g. WRONGTYPE when a
string of the filter holds another type), RedisMismatchError (another
filter lives under the prefix). After an error the next call reconnects.
Every wait on the server is limited by `timeout` (seconds, per read or
write of a command's bytes): a stopped server raises RedisTimeoutError
instead of blocking the caller.
"""
import array
import threading
from typing import Dict, Iterable, List, Optional, Union

from . import (Error, Key, _SIZE_T, _count, _key, _raise, _rate, ffi, lib)

__all__ = ["RedisSeen", "RedisError", "RedisConnectError", "RedisLostError",
           "RedisTimeoutError", "RedisReplyError", "RedisMismatchError"]

# The start of bc_redis_seen_errmsg() after a timeout (redis_seen.h,
# bc_redis_seen_set_timeout).
_TIMEOUT_TEXT = "Redis did not answer within "


class RedisError(Error):
    """A Redis seen-test call failed. Besides Error's status, name and
    message, errmsg is the server's or hiredis's text of the failure
    (bc_redis_seen_errmsg), also in str(e)."""

    def __init__(self, status: int, context: str = "",
                 errmsg: str = "") -> None:
        super().__init__(status, context)
        self.errmsg = errmsg
        if errmsg:
            self.args = ("%s (%s)" % (self.args[0], errmsg),)


class RedisConnectError(RedisError, ConnectionError):
    """BC_ERR_REDIS_CONNECT: no connection to the server (refused, no
    such socket, a bad host)."""


class RedisLostError(RedisError, ConnectionError):
    """BC_ERR_REDIS_LOST: the connection broke during a call (some keys
    of it may have been added)."""


class RedisTimeoutError(RedisLostError, TimeoutError):
    """The server did not answer within the timeout (a RedisLostError:
    the connection was dropped)."""


class RedisReplyError(RedisError):
    """BC_ERR_REDIS_REPLY: the server answered a command with an error
    (e.g. WRONGTYPE, AUTH refused)."""


class RedisMismatchError(RedisError):
    """BC_ERR_MISMATCH: "P:meta" records a filter of another sizing or
    seed (every client of a prefix must use the same expected, fp_rate
    and seed)."""


def _redis_error(status: int, context: str, errmsg: str) -> RedisError:
    name = lib.bcpy_status_name(status)
    name = ffi.string(name).decode() if name else ""
    if name == "BC_ERR_REDIS_LOST":
        cls = (RedisTimeoutError if errmsg.startswith(_TIMEOUT_TEXT)
               else RedisLostError)
    elif name == "BC_ERR_REDIS_CONNECT":
        cls = RedisConnectError
    elif name == "BC_ERR_REDIS_REPLY":
        cls = RedisReplyError
    elif name == "BC_ERR_MISMATCH":
        cls = RedisMismatchError
    else:
        cls = RedisError
    return cls(status, context, errmsg)


def _text(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s"
                        % (what, type(value).__name__))
    b = value.encode("utf-8")
    if b"\0" in b:
        raise ValueError("%s contains a NUL byte" % what)
    return b


class RedisSeen:
    """A Bloom filter in Redis shared by every client of url and prefix,
    sized for `expected` keys at `fp_rate` (redis_seen.h).

    url: "redis://[[user]:password@]host[:port][/db]" (port 6379, db 0 by
    default) or "unix:/path/to/socket". The constructor connects (and
    records or checks the filter's sizing in "prefix:meta"), so a wrong
    address raises here. timeout: the limit on each wait on the server,
    in seconds (None or 0: none). k: probes a key (None: the k that needs
    the least memory); a smaller k, with the bits that keep fp_rate at
    that k (bc_redis_seen_create_k()), costs the server less CPU a key
    for more memory - k=1 takes 99.5 bits a key at 1 %, ten times the
    default, for about a quarter of its server CPU; every client of a
    prefix must give the same. test_and_add(key) is True when the key
    was new (nobody had added it); `key in rs` asks without adding. Keys
    are str (UTF-8) or bytes. The Redis keys stay after close(); clear()
    deletes them."""

    def __init__(self, url: str = "redis://127.0.0.1:6379", *,
                 prefix: str = "bloomcrawl", expected: int = 1000000,
                 fp_rate: float = 0.01, seed: int = 0,
                 timeout: Optional[float] = 5.0,
                 k: Optional[int] = None) -> None:
        where = _text(url, "url")
        pre = _text(prefix, "prefix")
        if not pre:
            raise ValueError("prefix must not be empty")
        _count(expected, "expected", 1)
        fp_rate = _rate(fp_rate)
        _count(seed, "seed")
        if k is not None:
            _count(k, "k", 1, lib.BC_BLOOM_MAX_K)
        if timeout is None:
            ms = 0
        elif isinstance(timeout, (int, float)) and \
                not isinstance(timeout, bool):
            if not 0 <= timeout <= lib.BC_REDIS_SEEN_MAX_TIMEOUT_MS / 1000:
                raise ValueError("timeout must be 0..%d s, not %r"
                                 % (lib.BC_REDIS_SEEN_MAX_TIMEOUT_MS // 1000,
                                    timeout))
            ms = int(round(timeout * 1000)) or (1 if timeout > 0 else 0)
        else:
            raise TypeError("timeout must be seconds (a float) or None")
        out = ffi.new("struct bc_redis_seen **")
        if k is None:
            st = lib.bc_redis_seen_create(where, pre, expected, fp_rate,
                                          seed, out)
        else:
            st = lib.bc_redis_seen_create_k(where, pre, expected, fp_rate, k,
                                            seed, out)
        if st != lib.BC_OK:
            # The numbers were checked above, so BC_ERR_INVALID_ARG
            # (InvalidArgumentError) is the address (not shown: it may
            # hold a password).
            _raise(st, "RedisSeen: not a Redis address (want "
                   "redis://[[user]:password@]host[:port][/db] or "
                   "unix:/path)")
        self._h = ffi.gc(out[0], lib.bc_redis_seen_free)
        self._lock = threading.Lock()
        self.prefix = prefix
        self.timeout = ms / 1000.0 if ms else None
        lib.bc_redis_seen_set_timeout(self._h, ms)
        with self._lock:
            self._check(lib.bc_redis_seen_connect(self._h), "RedisSeen")

    def _check(self, st: int, context: str) -> None:
        """Raise the error of status st (the lock held: errmsg is the
        handle's)."""
        if st != lib.BC_OK:
            errmsg = ffi.string(lib.bc_redis_seen_errmsg(self._h)).decode(
                "utf-8", "replace")
            raise _redis_error(st, context, errmsg)

    def _handle(self):
        if self._h is None:
            raise ValueError("RedisSeen is closed")
        return self._h

    def _batch(self, keys: List[bytes], add: bool, context: str
               ) -> bytearray:
        lens = array.array(_SIZE_T, map(len, keys))
        buf = b"".join(keys)
        out = bytearray(len(keys))
        with self._lock:
            h = self._handle()
            st = lib.bcpy_redis_seen_batch(
                h, buf, ffi.from_buffer("size_t[]", lens), len(keys),
                ffi.from_buffer("unsigned char[]", out), 1 if add else 0)
            self._check(st, context)
        return out

    def test_and_add(self, key: Key) -> bool:
        """Add key; True when it was new (before anyone added it)."""
        k = _key(key)
        return self._batch([k], True, "RedisSeen.test_and_add")[0] == \
            lib.BC_REDIS_SEEN_NEW

    def test_and_add_batch(self, keys: Iterable[Key]) -> List[bool]:
        """test_and_add of each key, in order, in one pipeline (one
        round trip; one BITFIELD command per Redis string and 1024
        keys, each atomic): result[i] is True when keys[i] was new -
        not added before by anyone, nor earlier in this batch. A key of
        the wrong type refuses the whole batch before anything is sent.
        On an error nothing is returned; with RedisLostError some keys
        may have been added."""
        if isinstance(keys, (str, bytes)):
            raise TypeError("keys must be a list of str or bytes")
        ks = [_key(k) for k in keys]
        if not ks:
            return []
        new = lib.BC_REDIS_SEEN_NEW
        return [a == new for a in self._batch(
            ks, True, "RedisSeen.test_and_add_batch")]

    def __contains__(self, key: Key) -> bool:
        """Whether key may have been added (a Bloom filter: a "yes" is
        wrong at the filter's false-positive rate); adds nothing."""
        k = _key(key)
        return self._batch([k], False, "RedisSeen.__contains__")[0] != \
            lib.BC_REDIS_SEEN_NEW

    def clear(self) -> None:
        """Delete the filter's strings and its meta key from Redis
        (UNLINK): empty for every client. The next call records the
        sizing again."""
        with self._lock:
            self._check(lib.bc_redis_seen_clear(self._handle()),
                        "RedisSeen.clear")

    def sizing(self) -> Dict[str, Union[int, float]]:
        """The filter's m_bits, bytes (in Redis, once every string is
        written), k, n (expected) and fpr_predicted at n."""
        s = ffi.new("struct bc_bloom_sizing *")
        with self._lock:
            lib.bc_redis_seen_sizing(self._handle(), s)
        return {f: getattr(s, f) for f in ("m_bits", "bytes", "k", "n",
                                            "fpr_predicted")}

    def close(self) -> None:
        """Close the connection (the keys stay in Redis). Idempotent;
        any other call afterwards raises ValueError."""
        with self._lock:
            h, self._h = self._h, None
        if h is not None:
            ffi.release(h)

    def __enter__(self) -> "RedisSeen":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<RedisSeen prefix=%r%s>" % (
            self.prefix, " closed" if self._h is None else "")
