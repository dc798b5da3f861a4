#!/usr/bin/env python3
"""e2e_listen.py - crawl --listen, watched and steered over HTTP.

Crawls of the sample site (examples/site, serve.py on 127.0.0.1) with
crawl --listen 0 (a free port of 127.0.0.1, said on stderr with the
control token).  One part per run, named on the command line (ctest runs
the three in parallel, each well under a minute):

  prometheus  a real Prometheus (Debian's prometheus, scrape interval 1 s,
              its own temporary storage and free port) scrapes /metrics;
              after the crawl its HTTP API's bloomcrawl_pages_fetched_total
              is the number of records in --out; promtool check metrics
              accepts the exposition; every counter of --stats-json's
              "counters" has its metric (found by the "[group.name]" its
              HELP ends with) with the same value; OpenMetrics when asked.
  control     POST /pause: the site's log shows no request while paused;
              /resume: requests again; /seeds while paused: each URL
              answered with its reason (queued, excluded, bad_url); kill -9
              and a resume of the --state: the seed added through the API
              is fetched; /hosts/HOST/delay: the log's spacing follows the
              override, never below what it says, and still after another
              kill -9 and resume; /stop: the clean stop of SIGINT (exit
              130, outcome "interrupted").
  security    no token, a wrong token: 401; 404, 405, 400; a body over
              64 KiB: 413; a slow client is dropped after the server's
              timeout; 1,000 connections at once are bounded (the reads
              still answer from another loopback address); the crawl is
              unaffected: its exit status and check_crawl.py as without
              --listen.

  poll        (tests/tsan_listen.sh, with crawl built with
              -fsanitize=thread) two readers and a controller on every
              endpoint every 50 ms during a crawl: no data race reported.

usage: e2e_listen.py BINDIR PART   (BINDIR holds crawl)
"""
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import Run, check, count_lines, read_stats, summary  # noqa
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
PART = sys.argv[2] if len(sys.argv) > 2 else "control"
SLOW_SECONDS = 3
# As tests/e2e_crawl.py crawls the site: /error/500 and /slow given up
# after one retry (exit 4), everything else fetched.
CRAWL_ARGS = ["--timeout", "1500", "--max-body", "1000000", "--retries",
              "1", "--retry-delay", "100"]


class Server(sample_site.Server):
    def __init__(self, sitedir, log):
        super().__init__(sitedir, log, ["--slow-seconds", str(SLOW_SECONDS),
                                        "--huge-bytes", "4M"],
                         SLOW_SECONDS + 5)


def gensite(work, pages=100):
    sitedir = os.path.join(work, "site")
    subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                    sitedir, "--pages", str(pages)], check=True,
                   stdout=subprocess.DEVNULL)
    return sitedir


def read_log(path):
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.strip()]
    except OSError:
        return []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Crawl(Run):
    """crawl --listen 0: the Run, with its URL's port and its token read
    from the first line of its stderr."""

    def __init__(self, args, work, label, timeout=90):
        super().__init__([CRAWL, "--listen", "0", *args], work, label,
                         timeout)
        self.port = self.token = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and self.port is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/ "
                          r"\(control token(?:: (\w+)| in (\S+)\))",
                          self.stderr())
            if m:
                self.port = int(m.group(1))
                if m.group(2):
                    self.token = m.group(2)
                else:
                    with open(m.group(3)) as f:
                        self.token = f.read().strip()
            elif self.poll() is not None:
                break
            else:
                time.sleep(0.05)
        if self.port is None:
            raise RuntimeError("crawl --listen did not say its URL: "
                               + self.tail())

    def http(self, method, path, body=None, token=True, headers=None,
             source="127.0.0.1", timeout=15):
        """(status, headers dict, body bytes) of one request."""
        h = dict(headers or {})
        if token is True:
            token = self.token
        if token:
            h["Authorization"] = "Bearer " + token
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=timeout,
                                       source_address=(source, 0))
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def json(self, method, path, body=None):
        st, _, b = self.http(method, path, body)
        try:
            return st, json.loads(b)
        except ValueError:
            return st, {}


def wait_for(pred, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def pages_in_log(log):
    return [e for e in read_log(log) if e["path"] != "/robots.txt"]


# ---- prometheus ---------------------------------------------------------

def parse_metrics(text):
    """{sample name with labels: value} and {"group.name": family}."""
    samples, families = {}, {}
    for ln in text.splitlines():
        m = re.match(r"# HELP (\S+) .*\[(\w+\.\w+)\]$", ln)
        if m:
            families[m.group(2)] = m.group(1)
        if ln and not ln.startswith("#"):
            name, value = ln.rsplit(" ", 1)
            samples[name] = float(value)
    return samples, families


def same(a, b):
    if a is None:  # JSON null: NaN or an infinity
        return b != b or b in (float("inf"), float("-inf"))
    if isinstance(a, bool):
        a = int(a)
    # --stats-json writes a double with %.6g: six significant digits, off
    # by at most half a unit of the sixth (5e-6 of the value).
    return abs(float(a) - b) <= 5e-6 * abs(b) + 1e-12


def counters_agree(stats, text):
    samples, families = parse_metrics(text)
    missing, differ, n = [], [], 0
    for group, rows in stats.get("counters", {}).items():
        for cname, v in rows.items():
            fam = families.get(group + "." + cname)
            if fam is None:
                missing.append(group + "." + cname)
                continue
            items = v.items() if isinstance(v, dict) else [(None, v)]
            for label, x in items:
                key = fam
                if label is not None:
                    lname = next((k.split("{")[1].split("=")[0]
                                  for k in samples
                                  if k.startswith(fam + "{")), "")
                    key = '%s{%s="%s"}' % (fam, lname, label)
                n += 1
                if key not in samples or not same(x, samples[key]):
                    differ.append((key, x, samples.get(key)))
    check(n > 150 and not missing and not differ,
          "prometheus: every --stats-json counter has its metric, same "
          "value (%d samples; missing %s; differ %s)"
          % (n, missing[:5], differ[:5]))


def prometheus_part(work):
    if not shutil.which("prometheus") or not shutil.which("promtool"):
        print("SKIP: prometheus or promtool not installed (Debian "
              "prometheus)")
        return
    sitedir = gensite(work)
    log, out, stats = (os.path.join(work, n)
                       for n in ("access.log", "out.jsonl", "stats.json"))
    server = Server(sitedir, log)
    prom = None
    try:
        crawl = Crawl(["--quiet", "--out", out, "--stats-json", stats,
                       "--delay", "30", "--listen-linger", "60s",
                       *CRAWL_ARGS, *server.args], work, "prom")
        cfg = os.path.join(work, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: bloomcrawl\n"
                    "    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % crawl.port)
        pport = free_port()
        plog = open(os.path.join(work, "prometheus.log"), "w")
        prom = subprocess.Popen(
            ["prometheus", "--config.file", cfg, "--storage.tsdb.path",
             os.path.join(work, "tsdb"), "--web.listen-address",
             "127.0.0.1:%d" % pport, "--log.level", "warn"],
            stdout=plog, stderr=plog)

        def query(q):
            try:
                c = http.client.HTTPConnection("127.0.0.1", pport, timeout=5)
                c.request("GET", "/api/v1/query?query=" +
                          urllib.parse.quote(q))
                r = json.loads(c.getresponse().read())
                c.close()
                res = r["data"]["result"]
                return float(res[0]["value"][1]) if res else None
            except (OSError, ValueError, KeyError, IndexError):
                return None

        # The crawl is over when /status gives its outcome (it lingers).
        final = wait_for(lambda: crawl.json("GET", "/status")[1].get(
            "outcome", "running") != "running", 60, 0.5)
        check(final, "prometheus: the crawl ends, its final numbers served")
        records = count_lines(out)
        got = wait_for(lambda: query("bloomcrawl_pages_fetched_total") ==
                       records, 20, 0.5)
        check(got and records > 100,
              "prometheus: Prometheus's bloomcrawl_pages_fetched_total is "
              "the %d records of --out (%s)"
              % (records, query("bloomcrawl_pages_fetched_total")))
        up = query('up{job="bloomcrawl"}')
        check(up == 1, "prometheus: the target is up (%s)" % up)
        st, hdr, body = crawl.http("GET", "/metrics", token=None)
        text = body.decode()
        check(st == 200 and hdr.get("Content-Type", "").startswith(
            "text/plain; version=0.0.4"), "prometheus: GET /metrics 200, "
              "text format 0.0.4 (%s)" % hdr.get("Content-Type"))
        p = subprocess.run(["promtool", "check", "metrics"], input=text,
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 0, "prometheus: promtool check metrics "
              "accepts it%s" % ("" if p.returncode == 0 else
                                ": " + (p.stdout + p.stderr)[-600:]))
        st, hdr, om = crawl.http("GET", "/metrics", token=None, headers={
            "Accept": "application/openmetrics-text; version=1.0.0"})
        check(st == 200 and "openmetrics-text" in hdr.get(
            "Content-Type", "") and om.endswith(b"# EOF\n"),
              "prometheus: OpenMetrics when Accept asks, ending in # EOF")
        code, _ = crawl.json("POST", "/stop")
        rc = crawl.wait()
        check(code == 200 and rc == 4,
              "prometheus: POST /stop ends the lingering; exit 4 as the "
              "crawl was (/error/500 and /slow given up) (%s, %s)"
              % (code, rc))
        written = read_stats(stats)
        counters_agree(written, text)
        check(written.get("pages") == records,
              "prometheus: --stats-json's pages are the records (%s, %d)"
              % (written.get("pages"), records))
    finally:
        if prom:
            sample_site.stop_process(prom)
        server.stop()


# ---- control ------------------------------------------------------------

def control_part(work):
    sitedir = gensite(work)
    log, state = os.path.join(work, "access.log"), os.path.join(work, "st")
    server = Server(sitedir, log)
    origin = server.args[-1].split("/")[2]  # www.bloomcrawl.test:PORT
    seed_a = "http://%s/added-through-the-api" % origin
    args = ["--quiet", "--state", state, "--delay", "60", "--exclude",
            "*/refused/*", *CRAWL_ARGS, *server.args]
    try:
        crawl = Crawl(args, work, "control1")
        check(os.stat(os.path.join(state, "listen.token")).st_mode & 0o777
              == 0o600, "control: --state: the token in DIR/listen.token, "
              "mode 0600")
        check(wait_for(lambda: len(pages_in_log(log)) >= 5, 20),
              "control: the crawl runs")
        code, body = crawl.json("POST", "/pause")
        check(code == 200 and body.get("paused") is True,
              "control: POST /pause (%s %s)" % (code, body))
        time.sleep(0.6)  # the transfers in flight finish
        n0 = len(read_log(log))
        time.sleep(2)
        n1 = len(read_log(log))
        check(n1 == n0, "control: no request while paused (%d, then %d)"
              % (n0, n1))
        _, status = crawl.json("GET", "/status")
        check(status.get("outcome") == "running",
              "control: GET /status while paused: running")
        code, body = crawl.json("POST", "/resume")
        check(code == 200 and body.get("paused") is False and
              wait_for(lambda: len(read_log(log)) > n1, 5),
              "control: POST /resume: requests again")
        crawl.json("POST", "/pause")
        time.sleep(0.6)
        code, body = crawl.json("POST", "/seeds", (
            "# a comment, then a blank line\n\n%s\n"
            "http://%s/refused/x\nftp://nowhere.test/\n" % (seed_a, origin)
        ).encode())
        reasons = [s.get("reason") for s in body.get("seeds", [])]
        check(code == 200 and reasons == ["queued", "excluded", "bad_url"]
              and body.get("queued") == 1,
              "control: POST /seeds answers each URL with its reason (%s)"
              % body)
        crawl.kill()  # SIGKILL, paused: the seed is only in the state
        fetched = [e["path"] for e in read_log(log)]
        check("/added-through-the-api" not in fetched,
              "control: killed (-9) before fetching the added seed")

        crawl = Crawl(args, work, "control2")
        host = urllib.parse.quote(origin, safe="")
        code, body = crawl.json("POST", "/hosts/%s/delay" % host, b"400\n")
        check(code == 200 and body.get("effective_ms") == 400,
              "control: POST /hosts/HOST/delay 400 (%s %s)" % (code, body))
        def spacing(what):
            t_set = time.time()
            time.sleep(3)
            times = [e["start"] for e in pages_in_log(log)
                     if e["start"] > t_set + 0.5]
            gaps = [b - a for a, b in zip(times, times[1:])]
            check(len(gaps) >= 2 and min(gaps) >= 0.38,
                  "control: %s (%s s)"
                  % (what, ", ".join("%.2f" % g for g in gaps)))
        spacing("the log's spacing follows the override")
        # Answered after its commit: the override survives a kill -9.
        crawl.kill()
        crawl = Crawl(args, work, "control3")
        spacing("the override survived kill -9: the resumed crawl's "
                "spacing still follows it")
        code, body = crawl.json("POST", "/hosts/nowhere.test/delay?ms=5")
        check(code == 404, "control: a host the crawl does not know: 404")
        code, body = crawl.json("POST", "/hosts/%s/delay?ms=0" % host)
        check(code == 200 and body.get("effective_ms") == 60,
              "control: delay 0: back to --delay (%s)" % body)
        check(wait_for(lambda: any(e["path"] == "/added-through-the-api"
                                   for e in read_log(log)), 40, 0.3),
              "control: the seed added through the API survived kill -9: "
              "fetched by the resumed crawl")
        code, body = crawl.json("POST", "/stop")
        rc = crawl.wait()
        check(code == 200 and rc in (130, 4),
              "control: POST /stop: a clean stop (%s, exit %s)" % (code, rc))
        check(crawl.sane(), "control: no sanitizer report")
    finally:
        server.stop()


# ---- security -----------------------------------------------------------

def security_part(work):
    # A --listen-token-file whose first line is longer than a token may be
    # is refused with a reason, not cut to its first 255 characters.
    long_token = os.path.join(work, "long.token")
    with open(long_token, "w") as f:
        f.write("a" * 300 + "\n")
    p = subprocess.run([CRAWL, "--listen", "0", "--listen-token-file",
                        long_token, "--quiet", "http://127.0.0.1:9/"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "255 characters at most" in p.stderr,
          "security: a 300-character token file refused (%s: %s)"
          % (p.returncode, p.stderr.strip()[-200:]))
    trickle_part(work)
    sitedir = gensite(work)
    log, out, stats = (os.path.join(work, n)
                       for n in ("access.log", "out.jsonl", "stats.json"))
    server = Server(sitedir, log)
    try:
        crawl = Crawl(["--quiet", "--out", out, "--stats-json", stats,
                       "--delay", "40", "--scope", "host", "--max-depth",
                       "6", *CRAWL_ARGS, *server.args], work, "security")
        for token, what in ((None, "no token"), ("x" * 64, "a wrong token"),
                            (crawl.token[:-1] + "0" if crawl.token[-1] != "0"
                             else crawl.token[:-1] + "1", "one digit off")):
            st, hdr, _ = crawl.http("POST", "/pause", token=token)
            check(st == 401 and hdr.get("WWW-Authenticate") == "Bearer",
                  "security: POST /pause with %s: 401 (%s)" % (what, st))
        st, _, body = crawl.http("GET", "/status", token=None)
        check(st == 200, "security: reads on loopback need no token")
        # While running, "exit_status" is null as in --stats-json's file
        # (it said 0 once).
        live = json.loads(body)
        written = read_stats(stats) if os.path.exists(stats) else {}
        check(live.get("outcome") == "running" and
              live.get("exit_status", 0) is None and
              (written.get("outcome") != "running" or
               written.get("exit_status", 0) is None),
              "security: GET /status while running: exit_status null, as "
              "the file's (%r, file %r)" % (live.get("exit_status", 0),
                                            written.get("exit_status", 0)))
        # /hosts rows say when the host may be asked next.
        st, rows = crawl.json("GET", "/hosts?limit=1")
        row = (rows.get("per_host") or [{}])[0]
        check(st == 200 and isinstance(row.get("next_fetch_in_ms"), int) and
              0 <= row["next_fetch_in_ms"] <= 60000,
              "security: a /hosts row has next_fetch_in_ms (%r)"
              % row.get("next_fetch_in_ms"))
        # 405's Allow names the path's methods, whatever the refused one.
        for method, path, allow in (("PUT", "/metrics", "GET, HEAD"),
                                    ("DELETE", "/status", "GET, HEAD"),
                                    ("POST", "/hosts", "GET, HEAD"),
                                    ("GET", "/stop", "POST"),
                                    ("PUT", "/pause", "POST"),
                                    ("DELETE", "/hosts/a.test/delay",
                                     "POST")):
            st, hdr, _ = crawl.http(method, path)
            check(st == 405 and hdr.get("Allow") == allow,
                  "security: %s %s: 405, Allow: %s (%s, %r)"
                  % (method, path, allow, st, hdr.get("Allow")))
        for method, path, want in (("GET", "/nope", 404),
                                   ("GET", "/pause", 405),
                                   ("POST", "/metrics", 405),
                                   ("GET", "/hosts?sort=name", 400),
                                   ("GET", "/hosts?limit=0", 400),
                                   ("POST", "/hosts/a%2/delay", 400),
                                   # "://" across the segment's end: an
                                   # over-read before fuzz_listen found it
                                   ("POST", "/hosts/x://delay", 404)):
            st, _, _ = crawl.http(method, path)
            check(st == want, "security: %s %s: %d (%s)"
                  % (method, path, want, st))
        st, _, _ = crawl.http("POST", "/hosts/x/delay", b"soon")
        check(st == 400, "security: a delay that is no number: 400")
        st, _, _ = crawl.http("POST", "/seeds", b"http://a.test/\n" * 6000)
        check(st == 413, "security: a body over 64 KiB: 413 (%s)" % st)
        # Chunked (no Content-Length): counted as it comes.
        c = socket.create_connection(("127.0.0.1", crawl.port))
        c.sendall(b"POST /seeds HTTP/1.1\r\nHost: x\r\nAuthorization: "
                  b"Bearer " + crawl.token.encode() +
                  b"\r\nTransfer-Encoding: chunked\r\n\r\n" +
                  (b"1000\r\n" + b"#" * 4096 + b"\r\n") * 20 + b"0\r\n\r\n")
        c.settimeout(10)
        reply = c.recv(200)
        c.close()
        check(reply.startswith(b"HTTP/1.1 413"),
              "security: a chunked body over 64 KiB: 413 (%r)" % reply[:20])
        st, _, _ = crawl.http("GET", "/status", headers={"X-Big": "a" * 20000})
        check(st in (413, 431), "security: headers over 16 KiB refused (%s)"
              % st)
        # A slow client: half a request line, then nothing.
        slow = socket.create_connection(("127.0.0.1", crawl.port))
        slow.sendall(b"GET /metr")
        t0 = time.monotonic()
        # 1,000 connections at once from 127.0.0.1, held open.
        flood = []
        for _ in range(1000):
            try:
                flood.append(socket.create_connection(
                    ("127.0.0.1", crawl.port), timeout=2))
            except OSError:
                break
        check(len(flood) > 0, "security: %d connections opened" % len(flood))
        t1 = time.monotonic()
        st, _, body = crawl.http("GET", "/metrics", source="127.0.0.2",
                                 timeout=10)
        check(st == 200 and b"bloomcrawl_pages_fetched_total" in body,
              "security: with 1,000 connections held, GET /metrics from "
              "127.0.0.2 still answers (%.1f s)" % (time.monotonic() - t1))
        slow.settimeout(15)
        try:
            closed = slow.recv(100) == b""
        except OSError:
            closed = True
        waited = time.monotonic() - t0
        check(closed and waited < 12,
              "security: the slow client is dropped (%.1f s)" % waited)
        served = 0
        for s in flood:
            try:
                s.sendall(b"GET /status HTTP/1.0\r\n\r\n")
                s.settimeout(0.2)
                served += s.recv(12).startswith(b"HTTP/1.1 200")
            except OSError:
                pass
            s.close()
        check(served <= 64, "security: at most 64 of the 1,000 connections "
              "served at once (%d)" % served)
        rc = crawl.wait()
        check(rc == 4 and crawl.sane(),
              "security: the crawl ends as without --listen: exit 4, "
              "/error/500 and /slow given up (%s)" % rc)
        code, report = sample_site.run_checker(
            sitedir, log, out, ["--scope", "host", "--max-depth", "6"])
        check(code == 0, "security: check_crawl.py passes" +
              ("" if code == 0 else "\n" + report[-1500:]))
    finally:
        server.stop()


def trickle_part(work):
    """16 clients from one address (its limit) each send a header line
    every second and never end their request: never idle, so the idle
    timeout spares them; the request time limit (3 s here, through
    BC_LISTEN_REQUEST_MAX_MS) cuts them, and that address is served
    again."""
    os.makedirs(os.path.join(work, "trickle"))
    sitedir = gensite(os.path.join(work, "trickle"))
    log = os.path.join(work, "trickle.log")
    server = Server(sitedir, log)
    os.environ["BC_LISTEN_REQUEST_MAX_MS"] = "3000"
    try:
        # --delay 300: running still when the clients are cut. 40 more
        # hosts (closed ports: a page each, an error) for the top
        # --metrics-hosts selection.
        crawl = Crawl(["--quiet", "--delay", "300", "--metrics-hosts", "5",
                       *CRAWL_ARGS, *server.args] +
                      ["http://127.0.0.1:%d/" % p for p in range(1, 41)],
                      work, "trickle")
    finally:
        del os.environ["BC_LISTEN_REQUEST_MAX_MS"]
    try:
        src = "127.0.0.3"
        conns = []
        for _ in range(16):
            c = socket.create_connection(("127.0.0.1", crawl.port),
                                         timeout=2, source_address=(src, 0))
            c.sendall(b"GET /status HTTP/1.1\r\nHost: x\r\n")
            conns.append(c)
        t0 = time.monotonic()
        cut = set()
        while time.monotonic() - t0 < 6 and len(cut) < len(conns):
            time.sleep(1)
            for i, c in enumerate(conns):
                if i in cut:
                    continue
                try:
                    c.sendall(b"X-Trickle: %d\r\n" % i)
                except OSError:
                    cut.add(i)
                    continue
                c.setblocking(False)
                try:
                    if c.recv(100) == b"":
                        cut.add(i)
                except BlockingIOError:
                    pass
                except OSError:
                    cut.add(i)
                c.setblocking(True)
        waited = time.monotonic() - t0
        check(len(cut) == 16 and waited < 6,
              "security: 16 trickling clients cut at the request time limit "
              "(%d cut in %.1f s)" % (len(cut), waited))
        try:
            st, _, _ = crawl.http("GET", "/status", source=src, timeout=5)
        except OSError as e:
            st = repr(e)
        check(st == 200, "security: their address is served again (%s)"
              % st)
        for c in conns:
            c.close()

        # /metrics' per-host series are the --metrics-hosts first rows of
        # /hosts (pages descending, then origin), chosen without sorting
        # every host.
        def top_agree():
            _, _, m = crawl.http("GET", "/metrics")
            got = re.findall(r'^bloomcrawl_host_pages_total\{host="([^"]+)"'
                             r'\} (\S+)$', m.decode(), re.M)
            _, rows = crawl.json("GET", "/hosts?limit=5")
            want = [(h["host"], h["pages"])
                    for h in rows.get("per_host", [])]
            return ([(h, int(float(v))) for h, v in got] == want and
                    len(want) == 5 and rows.get("hosts") == 41, got, want)
        ok = wait_for(lambda: top_agree()[0], 10, 0.5)
        check(ok, "security: /metrics' 5 host series are /hosts' first 5 "
              "of 41 hosts %r" % (top_agree()[1:],))
        code, _ = crawl.json("POST", "/stop")
        crawl.wait()
        check(code == 200, "security: the trickled crawl stops (%s)" % code)
    finally:
        server.stop()


# ---- poll (tests/tsan_listen.sh) ----------------------------------------

def poll_part(work):
    """A crawl with a poller on every endpoint, reads and control, every
    50 ms from two threads: built with -fsanitize=thread by
    tests/tsan_listen.sh, ThreadSanitizer must say nothing."""
    import threading
    sitedir = gensite(work)
    log, out = os.path.join(work, "access.log"), os.path.join(work, "o")
    server = Server(sitedir, log)
    origin = urllib.parse.quote(server.args[-1].split("/")[2], safe="")
    try:
        crawl = Crawl(["--quiet", "--out", out, "--delay", "20", "--scope",
                       "host", "--max-depth", "6", *CRAWL_ARGS,
                       *server.args], work, "poll", timeout=240)
        done, answers, errors = threading.Event(), [], []

        def reader():
            paths = ("/", "/metrics", "/status", "/hosts?sort=errors",
                     "/hosts?sort=queued&limit=3")
            i = 0
            while not done.is_set():
                try:
                    h = {"Accept": "application/openmetrics-text"} \
                        if i % 7 == 0 else None
                    answers.append(crawl.http("GET", paths[i % len(paths)],
                                              headers=h)[0])
                except OSError as e:
                    errors.append(e)
                i += 1
                time.sleep(0.05)

        def controller():
            cmds = (("/pause", None), ("/resume", None),
                    ("/hosts/%s/delay" % origin, b"30"),
                    ("/seeds", b"http://a.test/\nftp://x/\n"))
            i = 0
            while not done.is_set():
                try:
                    answers.append(crawl.http("POST", cmds[i % 4][0],
                                              cmds[i % 4][1])[0])
                except OSError as e:
                    errors.append(e)
                i += 1
                time.sleep(0.05)

        threads = [threading.Thread(target=reader),
                   threading.Thread(target=reader),
                   threading.Thread(target=controller)]
        for t in threads:
            t.start()
        time.sleep(4)
        crawl.json("POST", "/resume")
        done.set()
        for t in threads:
            t.join()
        crawl.json("POST", "/resume")
        rc = crawl.wait()
        err = crawl.stderr()
        check("ThreadSanitizer" not in err and crawl.sane(),
              "poll: no sanitizer report (%d answers, %d refused)%s"
              % (len(answers), len(errors),
                 "" if "Sanitizer" not in err else "\n" + err[-3000:]))
        check(rc in (0, 4) and set(answers) <= {200, 404},
              "poll: the crawl ends (%s); answers %s"
              % (rc, sorted(set(answers))))
    finally:
        server.stop()


def main():
    parts = {"prometheus": prometheus_part, "control": control_part,
             "security": security_part, "poll": poll_part}
    if PART not in parts:
        print("usage: e2e_listen.py BINDIR prometheus|control|security|poll")
        return 2
    t = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bc_listen.") as work:
        parts[PART](work)
    print("%s: %.1f s" % (PART, time.monotonic() - t))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
