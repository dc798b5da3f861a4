#!/usr/bin/env python3
"""e2e_listen_workers.py - crawl --listen on crawl workers (--redis).

    python3 tests/e2e_listen_workers.py BINDIR   (BINDIR holds crawl)

Each crawl worker serves its own endpoints, on a port of its own.  Two
workers of one crawl split the sample site (examples/site, three virtual
hosts of one port) through a private redis-server on a unix socket (found
on the PATH; the test is skipped, exit 77, without it), each with
--listen 0 (a free port of 127.0.0.1, said on stderr) and --state (the
control token in DIR/listen.token).  Which worker owns which host depends
on the port the site got (owner(origin) = XXH64(origin, seed 0) mod N,
read through libxxhash as tests/e2e_workers.py does): the site is started
again on another port until each worker owns a host, so that a pause of
one can be told from the other going on.  --delay 100 keeps the crawl
going for the checks.

  metrics   GET /metrics of each: the workers group (bloomcrawl_workers_*,
            every counter of its "counters"."workers" in --stats-json's
            /status, same value names) and bloomcrawl_worker_info{index=
            "I",workers="2",crawl_id="..."} 1; promtool check metrics
            accepts it (when promtool is installed).
  status    GET /status: that worker's document ("workers"."index").
  (P is paused first, while it surely has work left; the checks below
  run during its pause.)
  seeds     POST /seeds to worker P: a new URL of its own host is
            "queued", one of the other worker's host "routed" (and that
            worker fetches it: the site's log shows it).
  delay     POST /hosts/HOST/delay to P for a host the other worker owns:
            409 naming the owner; to the other worker (its owner): 200.
  pause     POST /pause to P: for 2.5 s the site's log shows no request
            to P's hosts started after the pause was answered (the log's
            "start" times), while P holds queued URLs and the other
            worker's hosts still get requests; bloomcrawl_paused 1.
            POST /resume: P's hosts are requested again.
  stop      POST /stop to each: the clean stop of SIGINT for a worker
            (exit 130, its --stats-json says "interrupted").

Nothing here contacts an address outside 127.0.0.0/8; about 15 s.
"""
import ctypes
import ctypes.util
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import Run, check, read_stats, summary  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
SKIP = 77
N = 2
CRAWL_ID = "lw"


def load_xxh64():
    for name in (ctypes.util.find_library("xxhash"), "libxxhash.so.0"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.XXH64.restype = ctypes.c_uint64
        lib.XXH64.argtypes = (ctypes.c_char_p, ctypes.c_size_t,
                              ctypes.c_uint64)
        return lambda data: lib.XXH64(data, len(data), 0)
    return None


XXH64 = load_xxh64()


def owner(origin):
    return XXH64(origin.encode()) % N


def read_log(path):
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.strip()]
    except (OSError, ValueError):
        return []


class Redis:
    """redis-server in DIR on DIR/redis.sock only (--port 0)."""

    def __init__(self, work):
        d = os.path.join(work, "redis")
        os.makedirs(d)
        self.sock = os.path.join(d, "redis.sock")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock,
             "--unixsocketperm", "700", "--dir", d, "--save", "",
             "--appendonly", "no", "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            p = subprocess.run(["redis-cli", "-s", self.sock, "PING"],
                               capture_output=True, text=True)
            if p.stdout.strip() == "PONG":
                return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop(self):
        sample_site.stop_process(self.proc, 20)


class Worker(Run):
    """Worker i with --listen 0: its port from stderr, its token from
    DIR/listen.token."""

    def __init__(self, i, work, redis, server):
        self.i = i
        self.dir = os.path.join(work, "w%d" % i)
        self.stats = self.dir + ".stats.json"
        args = [CRAWL, "--quiet", "--listen", "0", "--redis",
                "unix:" + redis.sock, "--workers", str(N), "--worker",
                str(i), "--crawl-id", CRAWL_ID, "--state", self.dir,
                "--out", self.dir + ".out.jsonl", "--stats-json",
                self.stats, "--scope", "any", "--max-depth", "8",
                "--concurrency", "4", "--per-host", "2", "--delay", "100",
                "--timeout", "1500", "--retries", "0"]
        site = server.args if i == 0 else server.args[:-1]
        super().__init__(args + site, work, "w%d" % i, 60)
        self.port = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.poll() is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/ "
                          r"\(control token in (\S+)\)", self.stderr())
            if m:
                self.port = int(m.group(1))
                with open(m.group(2)) as f:
                    self.token = f.read().strip()
                break
            time.sleep(0.05)
        if self.port is None:
            raise RuntimeError("worker %d did not say its URL: %s"
                               % (i, self.tail()))

    def http(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=15)
        try:
            c.request(method, path, body=body,
                      headers={"Authorization": "Bearer " + self.token})
            r = c.getresponse()
            return r.status, r.read().decode()
        finally:
            c.close()

    def json(self, method, path, body=None):
        st, b = self.http(method, path, body)
        try:
            return st, json.loads(b)
        except ValueError:
            return st, {}

    def get(self, path, parse=False, tries=50):
        """GET path, asked again while the server answers 503 "no
        snapshot yet: try again" (its loop did not publish one within
        500 ms, as a loaded machine may make it); (status, text or
        parsed JSON)."""
        for _ in range(tries):
            st, b = self.json("GET", path) if parse else self.http("GET", path)
            if st != 503:
                break
            time.sleep(0.1)
        return st, b


def split_server(work, sitedir, log):
    """The site on a port where each worker owns at least one host:
    (server, {host:port: owner})."""
    for _ in range(20):
        server = sample_site.Server(sitedir, log)
        hosts = {}
        for a in server.args:
            m = re.match(r"([^:]+):(\d+):127\.0\.0\.1$", a)
            if m:
                hp = "%s:%s" % (m.group(1), m.group(2))
                hosts[hp] = owner("http://" + hp)
        if len(set(hosts.values())) == N:
            return server, hosts
        server.stop()
    raise RuntimeError("no port split the hosts between the workers")


def main():
    if not shutil.which("redis-server") or not shutil.which("redis-cli"):
        print("SKIP: redis-server not installed")
        return SKIP
    if XXH64 is None:
        print("SKIP: libxxhash not found")
        return SKIP
    work = tempfile.mkdtemp(prefix="bc_listen_workers.")
    sitedir = os.path.join(work, "site")
    subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                    sitedir, "--pages", "300"], check=True,
                   stdout=subprocess.DEVNULL)
    log = os.path.join(work, "access.log")
    redis = Redis(work)
    server, hosts = split_server(work, sitedir, log)
    workers = []
    try:
        workers = [Worker(i, work, redis, server) for i in range(N)]
        run(workers, hosts, log)
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
        server.stop()
        redis.stop()
    if summary() == 0:
        shutil.rmtree(work, ignore_errors=True)
        return 0
    print("kept " + work)
    return 1


def requests_by_worker(log, hosts, since=0.0):
    """Requests in the site's log that started after since (time.time()),
    per owner of their host."""
    n = [0] * N
    for e in read_log(log):
        o = hosts.get(e["host"].lower())
        if o is not None and e.get("start", 0) > since:
            n[o] += 1
    return n


def wait_for(pred, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def run(workers, hosts, log):
    check(wait_for(lambda: all(requests_by_worker(log, hosts)), 20),
          "both workers fetch their hosts")

    # P: the worker that is paused; Q: the other.  Paused first, while it
    # surely has work left; the other checks run during its pause.
    p, q = workers[0], workers[1]
    p_host = next(h for h, o in hosts.items() if o == p.i)
    q_host = next(h for h, o in hosts.items() if o == q.i)
    t = time.monotonic()
    st, r = p.json("POST", "/pause")
    paused_at = time.time()  # no transfer of P starts after this
    ms = (time.monotonic() - t) * 1000
    # The worker's loop steps 100 ms at most (bc_crawler_wakeup() cuts a
    # busy step; an idle worker's inbox wait is 100 ms at most).
    check(st == 200 and r.get("paused") is True and ms < 1000,
          "pause: answered in %.0f ms" % ms)

    # metrics and status
    for w in workers:
        st, text = w.get("/metrics")
        info = 'bloomcrawl_worker_info{index="%d",workers="%d",' \
               'crawl_id="%s"} 1' % (w.i, N, CRAWL_ID)
        check(st == 200 and info in text.splitlines(),
              "worker %d: /metrics has %s" % (w.i, info))
        st, doc = w.get("/status", parse=True)
        wc = doc.get("counters", {}).get("workers", {})
        fams = set(re.findall(r"^# HELP (\S+) .*\[workers\.(\w+)\]$", text,
                              re.M))
        check(st == 200 and doc.get("workers", {}).get("index") == w.i
              and wc and {n for _, n in fams} == set(wc),
              "worker %d: /status (HTTP %d) is its own document, and "
              "/metrics has a bloomcrawl_workers_* family for each of its "
              "%d workers counters (%d)" % (w.i, st, len(wc), len(fams)))
        check(all(f.startswith("bloomcrawl_workers_") for f, _ in fams),
              "worker %d: the workers group is named bloomcrawl_workers_*"
              % w.i)
        if shutil.which("promtool"):
            pt = subprocess.run(["promtool", "check", "metrics"], input=text,
                                capture_output=True, text=True, timeout=30)
            check(pt.returncode == 0, "worker %d: promtool check metrics "
                  "accepts /metrics (%s)" % (w.i, pt.stdout + pt.stderr))

    # seeds: own host queued (fetched once P resumes), the other's routed
    # (and fetched by Q).
    routed = p.json("GET", "/status")[1]["counters"]["workers"][
        "routed_seeds"]
    body = "http://%s/listen-seed-own\nhttp://%s/listen-seed-routed\n" % (
        p_host, q_host)
    st, r = p.json("POST", "/seeds", body)
    reasons = [x.get("reason") for x in r.get("seeds", [])]
    check(st == 200 and reasons == ["queued", "routed"],
          "seeds: P's own host queued, Q's routed (%d %s)" % (st, reasons))

    # delay for a host Q owns, asked of P: 409 naming Q.  (The origin with
    # its scheme: a bare HOST:PORT is tried as http:// then https://, and
    # the two may have different owners.)
    q_origin = urllib.parse.quote("http://" + q_host, safe="")
    st, r = p.json("POST", "/hosts/%s/delay?ms=500" % q_origin)
    check(st == 409 and r.get("owner") == q.i,
          "delay: a host of worker %d asked of worker %d: 409 naming its "
          "owner (%d %s)" % (q.i, p.i, st, r))

    # The pause: 2.5 s at least, then no request of P's hosts started
    # since it was answered, while Q's still got some.
    time.sleep(max(0.0, paused_at + 2.5 - time.time()))
    _, text = p.http("GET", "/metrics")
    check("bloomcrawl_paused 1" in text.splitlines(),
          "pause: P's /metrics says bloomcrawl_paused 1")
    queued = re.search(r"^bloomcrawl_queued_urls (\d+)$", text, re.M)
    check(queued and int(queued.group(1)) > 0,
          "pause: P holds queued URLs (%s): its silence is the pause's"
          % (queued and queued.group(1)))
    time.sleep(0.3)  # the requests in progress are logged
    n = requests_by_worker(log, hosts, paused_at)
    check(n[p.i] == 0 and n[q.i] > 0,
          "pause: no request to P's hosts started in the %.1f s since the "
          "pause (%d) while Q's got %d" % (time.time() - paused_at, n[p.i],
                                           n[q.i]))
    t = time.monotonic()
    st, r = p.json("POST", "/resume")
    resumed_at = time.time()
    ms = (time.monotonic() - t) * 1000
    check(st == 200 and r.get("paused") is False and ms < 1000,
          "resume: answered in %.0f ms" % ms)
    check(wait_for(lambda: requests_by_worker(log, hosts,
                                              resumed_at)[p.i] > 0, 10),
          "resume: P's hosts are requested again")

    # The seed routed to Q is fetched by Q (its host is Q's), behind the
    # URLs Q had queued: Q's delay for that host is cut (Q owns it: 200)
    # to make it sooner.
    st, r = q.json("POST", "/hosts/%s/delay?ms=10" % q_origin)
    check(st == 200, "delay: a host of worker %d asked of it: 200 (%d %s)"
          % (q.i, st, r))
    _, text = p.http("GET", "/metrics")
    check("bloomcrawl_workers_routed_seeds_total %d" % (routed + 1)
          in text.splitlines(), "seeds: P counts the seed it routed (%d "
          "before)" % routed)
    check(wait_for(lambda: any(e["path"] == "/listen-seed-routed"
                               and e["host"].lower() == q_host
                               for e in read_log(log)), 25),
          "seeds: the URL routed to Q is fetched")

    # stop: each worker's clean stop (exit 130, "interrupted").
    for w in workers:
        st, r = w.json("POST", "/stop")
        check(st == 200 and r.get("stopping") is True,
              "stop: worker %d answers" % w.i)
    for w in workers:
        rc = w.wait(30)
        outcome = read_stats(w.stats).get("outcome")
        check(rc == 130 and outcome == "interrupted" and w.sane(),
              "stop: worker %d exits 130 (%r), outcome %r"
              % (w.i, rc, outcome))

if __name__ == "__main__":
    sys.exit(main())
