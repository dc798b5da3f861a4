#!/usr/bin/env python3
"""bench_listen.py - what crawl --listen costs a crawl (issue 22).

The generated static site of the crawl benchmark (gen_static_site.py,
served by a private nginx on 127.0.0.1, as bench_crawl.sh does it) is
crawled, politeness off, 32 transfers, in three ways, in rotating order:

  plain    crawl as bench_crawl.sh runs it
  listen   the same with --listen 0 (the server up, nobody asking)
  polled   --listen 0 and a scraper asking for /metrics and /status
           every 100 ms (a new connection each time, as Prometheus and
           the status page do)

and prints the median pages/s of each (pages from --stats-json, over the
wall time of the process).

With --hosts N, instead: a crawl of N seeds http://hK.invalid/ (N hosts
at once, their names never resolving), and what one GET of each document
takes (its median time over 5) and what polling /metrics every 100 ms
costs the crawl's process (CPU seconds per second, against 10 s without
readers): the cost of a scrape as hosts grow.

usage: bench_listen.py CRAWL [--pages N] [--runs N] [--hosts N]
       (CRAWL: a crawl binary, best a Release build)
"""
import argparse
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CONF = """worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    types {{ text/html html; }}
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 65s;
    keepalive_requests 1000000;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
        etag off;
        gzip off;
    }}
}}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def crawl(binary, seed, work, mode):
    stats = os.path.join(work, "stats.json")
    cmd = [binary, "--no-robots", "--delay", "0", "--concurrency", "32",
           "--per-host", "32", "--max-depth", "100", "--quiet", "--expect",
           "100000", "--stats-json", stats, seed]
    if mode != "plain":
        cmd[1:1] = ["--listen", "0"]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    polls, stop = [0], threading.Event()
    if mode != "plain":
        line = p.stderr.readline()
        port = int(re.search(r":(\d+)/", line).group(1))

        def poller():
            i = 0
            while not stop.is_set():
                try:
                    c = http.client.HTTPConnection("127.0.0.1", port,
                                                   timeout=5)
                    c.request("GET", ("/metrics", "/status")[i % 2])
                    c.getresponse().read()
                    c.close()
                    polls[0] += 1
                except OSError:
                    pass
                i += 1
                stop.wait(0.1)
        if mode == "polled":
            t = threading.Thread(target=poller)
            t.start()
    p.stderr.read()
    p.wait()
    wall = time.monotonic() - t0
    stop.set()
    if mode == "polled":
        t.join()
    with open(stats) as f:
        pages = json.load(f)["pages"]
    return pages / wall, pages, polls[0]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def many_hosts(binary, hosts):
    with tempfile.TemporaryDirectory(prefix="bc_bench_hosts.") as tmp:
        seeds = os.path.join(tmp, "seeds.txt")
        with open(seeds, "w") as f:
            f.writelines("http://h%d.invalid/\n" % i for i in range(hosts))
        p = subprocess.Popen([binary, "--listen", "0", "--quiet",
                              "--no-robots", "--retries", "0", "--expect",
                              str(max(hosts * 20, 100000)), "--seeds", seeds],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             text=True)
        m = None
        while not m:  # seed refusals may come first
            line = p.stderr.readline()
            if not line:
                raise SystemExit("crawl --listen did not say its URL")
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
        port = int(m.group(1))
        threading.Thread(target=p.stderr.read, daemon=True).start()

        def get(path):
            t0 = time.monotonic()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", path)
            n = len(c.getresponse().read())
            c.close()
            return time.monotonic() - t0, n
        try:
            time.sleep(8)  # the seeds admitted
            for path in ("/metrics", "/hosts?limit=1", "/status"):
                runs = []
                for _ in range(5):
                    runs.append(get(path))
                    time.sleep(0.3)  # past LISTEN_FRESH_MS: built anew
                print("%-16s median %.3f s, %d bytes"
                      % (path, statistics.median(r[0] for r in runs),
                         runs[-1][1]), flush=True)
            c0, t0 = cpu_seconds(p.pid), time.monotonic()
            while time.monotonic() - t0 < 10:
                get("/metrics")
                time.sleep(0.1)
            polled = (cpu_seconds(p.pid) - c0) / (time.monotonic() - t0)
            c0, t0 = cpu_seconds(p.pid), time.monotonic()
            time.sleep(10)
            idle = (cpu_seconds(p.pid) - c0) / (time.monotonic() - t0)
            print("crawl CPU: %.3f s/s with /metrics every 100 ms, %.3f s/s "
                  "without readers (%d hosts)" % (polled, idle, hosts))
        finally:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("crawl")
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hosts", type=int, default=0)
    a = ap.parse_args()
    if a.hosts:
        many_hosts(a.crawl, a.hosts)
        return
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    os.umask(0o022)  # nginx's workers (user nobody) read the site
    with tempfile.TemporaryDirectory(prefix="bc_bench_listen.") as tmp:
        os.chmod(tmp, 0o755)
        port = free_port()
        site = os.path.join(tmp, "site")
        subprocess.run([sys.executable, os.path.join(HERE,
                                                     "gen_static_site.py"),
                        site, "--port", str(port), "--pages",
                        str(a.pages)], check=True, stdout=subprocess.DEVNULL)
        nd = os.path.join(tmp, "nginx")
        os.makedirs(nd)
        with open(os.path.join(nd, "nginx.conf"), "w") as f:
            f.write(CONF.format(d=nd, port=port,
                                root=os.path.join(site, "www")))
        ng = subprocess.Popen([nginx, "-p", nd, "-c",
                               os.path.join(nd, "nginx.conf"), "-e",
                               os.path.join(nd, "error.log")],
                              stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        seed = "http://127.0.0.1:%d/" % port
        modes = ["plain", "listen", "polled"]
        res = {m: [] for m in modes}
        try:
            for r in range(a.runs):
                for m in modes[r % 3:] + modes[:r % 3]:
                    work = os.path.join(tmp, "run")
                    os.makedirs(work, exist_ok=True)
                    rate, pages, polls = crawl(a.crawl, seed, work, m)
                    res[m].append(rate)
                    print("run %d %-7s %7.0f pages/s (%d pages, %d polls)"
                          % (r + 1, m, rate, pages, polls), flush=True)
        finally:
            ng.terminate()
            ng.wait()
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    base = statistics.median(res["plain"])
    for m in modes:
        med = statistics.median(res[m])
        print("%-7s median %7.0f pages/s (%+.1f %%)"
              % (m, med, 100.0 * (med - base) / base))


if __name__ == "__main__":
    main()
