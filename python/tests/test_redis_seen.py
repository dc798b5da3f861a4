"""bloomcrawl.RedisSeen (the seen-test shared in Redis) against a real
redis-server on a free port of 127.0.0.1, started and stopped here
(skipped when redis-server is not installed): every method, bad input,
each failure caused for real (a refused port, a server killed with
SIGKILL, one stopped with SIGSTOP, a string of the filter holding a
list, another filter under the prefix), and two processes racing on the
same 20,000 keys.
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from bloomcrawl import (InvalidArgumentError, RedisConnectError, RedisError,
                        RedisLostError, RedisMismatchError, RedisReplyError,
                        RedisSeen, RedisTimeoutError)

import redis_server

pytestmark = pytest.mark.skipif(not redis_server.AVAILABLE,
                                reason=redis_server.SKIP)


@pytest.fixture(scope="module")
def server():
    s = redis_server.RedisServer()
    yield s
    s.stop()


def test_test_and_add_contains_batch_clear(server):
    with RedisSeen(server.url, prefix="basic", expected=10000,
                   fp_rate=1e-6) as rs:
        assert "http://a.example/" not in rs
        assert rs.test_and_add("http://a.example/") is True
        assert rs.test_and_add("http://a.example/") is False
        assert "http://a.example/" in rs
        # str is its UTF-8 bytes: one key.
        assert rs.test_and_add("http://b.example/\u00e9") is True
        assert rs.test_and_add("http://b.example/\u00e9".encode()) is False
        assert rs.test_and_add(bytearray(b"")) is True  # the empty key
        assert b"" in rs
        # A batch: new ones True, a repeat within it and an old key False.
        keys = ["k%d" % i for i in range(3000)]
        got = rs.test_and_add_batch(keys + ["k0", "http://a.example/"])
        assert got == [True] * 3000 + [False, False]
        assert rs.test_and_add_batch(iter(keys[:5])) == [False] * 5
        assert rs.test_and_add_batch([]) == []
        assert all(k in rs for k in keys[:100])
        # Written to Redis under the prefix, as the header says.
        assert server.command("EXISTS", "basic:meta") == ":1"
        assert server.command("EXISTS", "basic:0") == ":1"
        sz = rs.sizing()
        assert sz["n"] == 10000 and sz["m_bits"] % 512 == 0
        assert sz["k"] >= 1 and 0 < sz["fpr_predicted"] <= 1e-5
        # clear(): empty for every client.
        other = RedisSeen(server.url, prefix="basic", expected=10000,
                          fp_rate=1e-6)
        assert other.test_and_add("k1") is False
        rs.clear()
        assert server.command("EXISTS", "basic:0") == ":0"
        assert "k1" not in other
        assert other.test_and_add("k1") is True
        other.close()
        assert "RedisSeen" in repr(rs)
    # Closed by the with: every call refuses, close() again is harmless.
    for call in (lambda: rs.test_and_add("x"), lambda: "x" in rs,
                 lambda: rs.test_and_add_batch(["x"]), rs.clear, rs.sizing):
        with pytest.raises(ValueError):
            call()
    rs.close()
    assert "closed" in repr(rs)


def test_one_probe_a_key(server):
    # k=1: bc_redis_seen_create_k()'s sizing (99.5 bits a key at 1 %),
    # every key added held, about 1 % of the others answered seen (200 of
    # 20,000, three standard deviations 42); a client of the default k
    # is refused the prefix.
    with RedisSeen(server.url, prefix="one", expected=20000, k=1) as rs:
        sz = rs.sizing()
        assert sz["k"] == 1 and sz["n"] == 20000
        assert 99.0 <= sz["m_bits"] / 20000 <= 100.5
        keys = ["https://one/%d" % i for i in range(40000)]
        rs.test_and_add_batch(keys[:20000])
        assert all(k in rs for k in keys[:20000:97])
        assert 200 - 42 <= sum(k in rs for k in keys[20000:]) <= 200 + 42
        with pytest.raises(RedisMismatchError):
            RedisSeen(server.url, prefix="one", expected=20000)
        rs.clear()


def test_bad_arguments(server):
    for url in ("", "http://127.0.0.1:6379", "redis://", "redis://h:0",
                "redis://h:65536", "redis://h/x", "redis://h/0/more",
                "unix:", "redis://:%zz@h"):
        with pytest.raises(InvalidArgumentError) as e:
            RedisSeen(url)
        assert "not a Redis address" in str(e.value)
    with pytest.raises(TypeError):
        RedisSeen(6379)
    with pytest.raises(ValueError):
        RedisSeen("redis://127.0.0.1\0:1")
    with pytest.raises(TypeError):
        RedisSeen(server.url, prefix=b"p")
    with pytest.raises(ValueError):
        RedisSeen(server.url, prefix="")
    with pytest.raises(ValueError):
        RedisSeen(server.url, expected=0)
    with pytest.raises(TypeError):
        RedisSeen(server.url, expected=1.5)
    with pytest.raises(ValueError):
        RedisSeen(server.url, fp_rate=1.0)
    with pytest.raises(ValueError):
        RedisSeen(server.url, seed=-1)
    with pytest.raises(ValueError):
        RedisSeen(server.url, k=0)
    with pytest.raises(ValueError):
        RedisSeen(server.url, k=65)
    with pytest.raises(TypeError):
        RedisSeen(server.url, k=1.0)
    with pytest.raises(TypeError):
        RedisSeen(server.url, timeout="1")
    with pytest.raises(ValueError):
        RedisSeen(server.url, timeout=-1)
    with pytest.raises(ValueError):
        RedisSeen(server.url, timeout=366 * 86400 + 1)
    RedisSeen(server.url, prefix="bad", timeout=366 * 86400).close()
    rs = RedisSeen(server.url, prefix="bad", timeout=None)
    assert rs.timeout is None
    for key in (5, None, 1.0, ["a"]):
        with pytest.raises(TypeError):
            rs.test_and_add(key)
        with pytest.raises(TypeError):
            key in rs
    with pytest.raises(UnicodeEncodeError):
        rs.test_and_add("\ud800")
    for keys in ("abc", b"abc", ["a", 5], 7):
        with pytest.raises(TypeError):
            rs.test_and_add_batch(keys)
    # The refused batches sent nothing.
    assert "a" not in rs
    rs.clear()
    rs.close()


def test_refused_port_raises_at_once():
    port = redis_server.free_port()
    t0 = time.monotonic()
    with pytest.raises(RedisConnectError) as e:
        RedisSeen("redis://127.0.0.1:%d" % port, timeout=2)
    assert time.monotonic() - t0 < 2
    assert e.value.name == "BC_ERR_REDIS_CONNECT"
    assert "127.0.0.1:%d" % port in e.value.errmsg
    assert "refused" in str(e.value)
    assert isinstance(e.value, ConnectionError)
    with pytest.raises(RedisConnectError):
        RedisSeen("unix:/nonexistent/redis.sock")


def test_wrong_type_and_mismatch(server):
    assert server.command("RPUSH", "wt:0", "x") == ":1"
    rs = RedisSeen(server.url, prefix="wt", expected=1000)
    with pytest.raises(RedisReplyError) as e:
        rs.test_and_add("a")
    assert "WRONGTYPE" in e.value.errmsg and "WRONGTYPE" in str(e.value)
    with pytest.raises(RedisReplyError):
        rs.test_and_add_batch(["a", "b"])
    # The handle still works: clear() deletes the list with the filter.
    rs.clear()
    assert rs.test_and_add("a") is True
    # Another sizing under the same prefix is refused, naming it.
    with pytest.raises(RedisMismatchError) as e:
        RedisSeen(server.url, prefix="wt", expected=5000)
    assert "another filter under this prefix" in e.value.errmsg
    rs.clear()
    rs.close()


def test_stopped_server_times_out(server):
    rs = RedisSeen(server.url, prefix="stop", expected=1000, timeout=0.3)
    assert rs.timeout == 0.3
    assert rs.test_and_add("a") is True
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        with pytest.raises(RedisTimeoutError) as e:
            rs.test_and_add_batch(["b", "c"])
        took = time.monotonic() - t0
        t1 = time.monotonic()
        with pytest.raises(RedisTimeoutError):
            RedisSeen(server.url, prefix="stop", expected=1000, timeout=0.2)
        took_new = time.monotonic() - t1
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
    assert 0.25 <= took < 3 and 0.15 <= took_new < 3
    assert isinstance(e.value, RedisLostError)
    assert isinstance(e.value, TimeoutError)
    assert "did not answer within 300 ms" in str(e.value)
    # The server is back: the next call reconnects.
    assert rs.test_and_add("a") is False
    rs.clear()
    rs.close()


def test_killed_server_raises_then_reconnects():
    s = redis_server.RedisServer()
    try:
        rs = RedisSeen(s.url, prefix="kill", expected=1000, timeout=2)
        assert rs.test_and_add("a") is True
        s.proc.kill()
        s.proc.wait()
        t0 = time.monotonic()
        with pytest.raises(RedisError) as e:
            rs.test_and_add("b")
        assert time.monotonic() - t0 < 2
        assert isinstance(e.value, (RedisLostError, RedisConnectError))
        assert e.value.errmsg
        # Nobody listens now: refused.
        with pytest.raises(RedisConnectError):
            rs.test_and_add("b")
        rs.close()
    finally:
        s.stop()


CHILD = r"""
import json, random, sys
import bloomcrawl
url, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rs = bloomcrawl.RedisSeen(url, prefix="race", expected=n, fp_rate=1e-9)
keys = ["https://h%d.example/p/%d" % (i % 97, i) for i in range(n)]
if mode == "shuffled":  # the same keys in another order, 2 a batch
    order = list(range(n))
    random.Random(7).shuffle(order)
print("ready", flush=True)
sys.stdin.readline()
new = []
if mode == "single":
    for i, k in enumerate(keys):
        if rs.test_and_add(k):
            new.append(i)
else:
    for b in range(0, n, 2):
        part = order[b:b + 2]
        new += [i for i, a in zip(part, rs.test_and_add_batch(
            [keys[i] for i in part])) if a]
print(json.dumps(new), flush=True)
"""


def test_racing_processes_each_key_new_once(server):
    """Three processes test-and-add the same 20,000 keys, started
    together: two one key at a time in the same order (neck and neck,
    they race on the same key), the third 2 keys a batch in a shuffled
    order (it claims keys ahead of them and they of it). Every key is
    reported new exactly once in total. With a check-then-set in two
    commands both would see some key absent. The filter is sized for
    1e-9, so a false positive (a key new zero times) is not expected."""
    n = 20000
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, server.url, mode,
                               str(n)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
             for mode in ("single", "single", "shuffled")]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    news = []
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0
        news.append(json.loads(out))
    print("race: keys new in each process (single, single, shuffled): %s"
          % [len(x) for x in news])
    everything = [i for x in news for i in x]
    assert sorted(everything) == list(range(n))
    RedisSeen(server.url, prefix="race", expected=n, fp_rate=1e-9).clear()
