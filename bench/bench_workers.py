#!/usr/bin/env python3
"""bench_workers.py - crawl workers (issue 15): 1 worker against 2 workers.

    python3 bench/bench_workers.py [--hosts 16] [--pages 2000] [--runs 3]
                                   [--transfers 16] [--per-host 4]
                                   [--ways W,W] [--crawl PATH] [--keep]

Serves the crawl benchmark's generated site (bench/gen_static_site.py) as
--hosts hosts: one nginx, one server block per port, the same files on
each, and a link spelled as an absolute URL names one host by its path's
CRC-32 (gen_static_site.py --hosts), so about 15 % of the links cross
hosts, as between the sites of a web.  Then it crawls the whole of it
(every host's "/" is a seed), --runs times in rotating order, three ways:

    process    one crawl process without Redis
    state      the same with --state (which every worker needs: the
               baseline of what the workers' protocol costs)
    1 worker   crawl --redis --workers 1 --worker 0 (every URL stays local:
               the cost of registering, heartbeats and the idle protocol)
    2 workers  crawl --redis --workers 2 --worker 0 and --worker 1, at once,
               the seeds given to worker 0 (so they are routed too)

and measures, per way (a crawl with politeness off, so CPU-bound: on a
real web the workers wait on hosts' delays and scale with their number): wall time from the first start to the last exit,
pages fetched (nginx's access log: every (host, path) once, checked against
the generator's list), pages per second, the crawlers' CPU time per page
(user + sys of every worker, from wait4), redis-server's CPU time and
commands per page (INFO stats before and after), and the URLs handed
between workers per page (the workers' --stats-json).  Everything is on
127.0.0.1 and a unix socket; redis-server runs with --appendonly yes
(appendfsync everysec), as a crawl that must survive a Redis restart
would.  Writes bench/results/workers.md and .csv; prints the exact
commands.  Needs nginx and redis-server (scripts/deps.sh test installs
both) and a Release build of crawl (built in build-rel/ unless --crawl).
"""

import argparse
import csv
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def say(msg):
    print("== " + msg, file=sys.stderr, flush=True)


def free_ports(count):
    socks, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def proc_cpu(pid):
    """CPU seconds (user + sys) used so far by process pid."""
    with open("/proc/%d/stat" % pid) as fh:
        fields = fh.read().rsplit(") ", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def wait_for(pred, what, seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    sys.exit("bench_workers: %s did not start" % what)


class Nginx:
    def __init__(self, tmp, root, ports):
        self.dir = os.path.join(tmp, "nginx")
        os.makedirs(self.dir)
        self.log = os.path.join(self.dir, "access.log")
        servers = "".join(
            "    server { listen 127.0.0.1:%d; root %s; index index.html;"
            " etag off; gzip off; }\n" % (p, root) for p in ports)
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as fh:
            fh.write("""worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    log_format bench '$msec $server_port $status $request_method "$request_uri"';
    access_log {log} bench;
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
{servers}}}
""".format(d=self.dir, log=self.log, servers=servers))
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.cmd = [nginx, "-p", self.dir, "-c", conf, "-e",
                    os.path.join(self.dir, "error.log")]
        self.proc = subprocess.Popen(self.cmd)
        wait_for(lambda: self._answers(ports[0]), "nginx")

    @staticmethod
    def _answers(port):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            return False

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


class Redis:
    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "redis")
        os.makedirs(self.dir)
        self.sock = os.path.join(self.dir, "redis.sock")
        self.cmd = ["redis-server", "--port", "0", "--unixsocket", self.sock,
                    "--unixsocketperm", "700", "--dir", self.dir,
                    "--save", "", "--appendonly", "yes",
                    "--appendfsync", "everysec", "--logfile",
                    os.path.join(self.dir, "redis.log")]
        self.proc = subprocess.Popen(self.cmd)
        wait_for(lambda: os.path.exists(self.sock) and self.ping(), "redis")

    def cli(self, *args):
        return subprocess.run(["redis-cli", "-s", self.sock] + list(args),
                              capture_output=True, text=True).stdout

    def ping(self):
        return self.cli("PING").strip() == "PONG"

    def commands(self):
        for line in self.cli("INFO", "stats").splitlines():
            if line.startswith("total_commands_processed:"):
                return int(line.split(":")[1])
        return 0

    def cpu(self):
        return proc_cpu(self.proc.pid)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def show_cmd(cmd, tmp):
    """A command line as the report prints it (TMP for the temp folder)."""
    return " ".join(cmd).replace(tmp, "TMP").replace(ROOT + "/", "")


def log_size(path):
    return os.path.getsize(path) if os.path.exists(path) else 0


def crawl_cmd(args, seeds, rundir, name, redis=None, workers=0, index=0,
              state=False):
    cmd = [args.crawl, "--no-robots", "--no-sitemaps", "--delay", "0",
           "--concurrency", str(args.transfers),
           "--per-host", str(args.per_host), "--max-depth", "100",
           "--quiet", "--expect", "100000",
           "--stats-json", os.path.join(rundir, name + ".json")]
    if redis:
        cmd += ["--redis", "unix:" + redis.sock, "--workers", str(workers),
                "--worker", str(index),
                "--crawl-id", os.path.basename(rundir)]
    if redis or state:
        cmd += ["--state", os.path.join(rundir, name + ".state")]
    return cmd + (seeds if index == 0 else [])


def run_way(args, way, run, tmp, nginx, redis, seeds):
    rundir = os.path.join(tmp, "runs", "%s-%d" % (way.replace(" ", ""), run))
    os.makedirs(rundir)
    if way in ("process", "state"):
        cmds = [crawl_cmd(args, seeds, rundir, "p", state=way == "state")]
    else:
        n = int(way.split()[0])
        cmds = [crawl_cmd(args, seeds, rundir, "w%d" % i, redis, n, i)
                for i in range(n)]
    off = log_size(nginx.log)
    c0, r0 = redis.commands(), redis.cpu()
    t0 = time.monotonic()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(rundir, "stderr%d" % i),
                                          "w"))
             for i, c in enumerate(cmds)]
    cpu, left = 0.0, {p.pid: i for i, p in enumerate(procs)}
    while left:
        pid, status, ru = os.wait4(-1, 0)
        if pid not in left:
            continue
        i = left.pop(pid)
        cpu += ru.ru_utime + ru.ru_stime
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            with open(os.path.join(rundir, "stderr%d" % i)) as fh:
                sys.exit("bench_workers: %s run %d: %s exit %d: %s" % (
                    way, run, show_cmd(cmds[i], tmp), code, fh.read()[-800:]))
    wall = time.monotonic() - t0
    time.sleep(0.3)  # nginx logs a request just after its response
    c1, r1 = redis.commands(), redis.cpu()
    with open(nginx.log) as fh:
        fh.seek(off)
        lines = fh.read().splitlines()
    gets = [l for l in lines if " GET " in l]
    fetched = [l.split()[1] + " " + l.split('"')[1] for l in gets]
    stamps = [float(l.split()[0]) for l in gets]
    span = max(stamps) - min(stamps) if len(stamps) > 1 else wall
    handed = 0
    for i in range(len(cmds)):
        name = "p" if way in ("process", "state") else "w%d" % i
        stats = json.load(open(os.path.join(rundir, name + ".json")))
        handed += stats.get("workers", {}).get("sent_urls", 0)
    pages = len(fetched)
    commands = c1 - c0 - 2  # the two INFO calls themselves
    return {"way": way, "run": run, "wall_s": wall, "pages": pages,
            "unique": len(set(fetched)), "pages_per_s": pages / wall,
            "fetch_pages_per_s": pages / span,
            "cpu_ms_per_page": 1000 * cpu / pages,
            "redis_us_per_page": 1e6 * (r1 - r0) / pages,
            "redis_cmds_per_page": (commands if "worker" in way else 0) / pages,
            "handed_per_page": handed / pages, "cmds": cmds}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=16)
    ap.add_argument("--pages", type=int, default=2000,
                    help="articles per host (gen_static_site --pages)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--transfers", type=int, default=16)
    ap.add_argument("--per-host", type=int, default=4)
    ap.add_argument("--crawl", help="the crawl binary (default: build-rel)")
    ap.add_argument("--ways", default="process,state,1 worker,2 workers",
                    help="which of the three ways to run (comma-separated)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    for tool in ("redis-server", "redis-cli"):
        if not shutil.which(tool):
            sys.exit("bench_workers: %s missing (scripts/deps.sh test)" % tool)
    if not args.crawl:
        say("building crawl in build-rel/ (Release)")
        subprocess.run(["cmake", "-S", ROOT, "-B", os.path.join(ROOT, "build-rel"),
                        "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", os.path.join(ROOT, "build-rel"),
                        "-j2", "--target", "crawl"], check=True,
                       stdout=subprocess.DEVNULL)
        args.crawl = os.path.join(ROOT, "build-rel", "examples", "crawl")
    tmp = tempfile.mkdtemp(prefix="bench-workers.")
    os.chmod(tmp, 0o755)
    nginx = redis = None
    try:
        ports = free_ports(args.hosts)
        site = os.path.join(tmp, "site")
        say("generating %d hosts x %d articles" % (args.hosts, args.pages))
        gen = [sys.executable, os.path.join(ROOT, "bench", "gen_static_site.py"),
               site, "--port", str(ports[0]), "--pages", str(args.pages),
               "--hosts", ",".join(map(str, ports))]
        subprocess.run(gen, check=True)
        os.chmod(site, 0o755)
        for d, _, files in os.walk(site):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        expected = open(os.path.join(site, "expected-urls.txt")).read().split()
        nginx = Nginx(tmp, os.path.join(site, "www"), ports)
        redis = Redis(tmp)
        seeds = ["http://127.0.0.1:%d/" % p for p in ports]
        ways = [w.strip() for w in args.ways.split(",")]
        if not set(ways) <= {"process", "state", "1 worker", "2 workers"}:
            sys.exit("bench_workers: --ways: process, state, 1 worker, "
                     "2 workers")
        rows = []
        say("crawling %d pages: %d ways x %d runs (load average %s)" % (
            len(expected), len(ways), args.runs,
            open("/proc/loadavg").read().split()[0]))
        for run in range(1, args.runs + 1):
            for k in range(len(ways)):
                way = ways[(k + run - 1) % len(ways)]
                r = run_way(args, way, run, tmp, nginx, redis, seeds)
                if r["pages"] != len(expected) or r["unique"] != r["pages"]:
                    sys.exit("bench_workers: %s run %d fetched %d pages "
                             "(%d distinct), the site has %d" % (
                                 way, run, r["pages"], r["unique"],
                                 len(expected)))
                rows.append(r)
                say("%-9s run %d: %6.2f s %6d pages %6.0f pages/s %6.3f CPU "
                    "ms/page  redis %5.1f us/page %5.2f cmds/page" % (
                        way, run, r["wall_s"], r["pages"], r["pages_per_s"],
                        r["cpu_ms_per_page"], r["redis_us_per_page"],
                        r["redis_cmds_per_page"]))
        report(args, rows, ways, expected, gen, nginx, redis, tmp)
    finally:
        if nginx:
            nginx.stop()
        if redis:
            redis.stop()
        if args.keep:
            say("kept " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(args, rows, ways, expected, gen, nginx, redis, tmp):
    keys = ["wall_s", "pages_per_s", "fetch_pages_per_s", "cpu_ms_per_page", "redis_us_per_page",
            "redis_cmds_per_page", "handed_per_page"]
    med = {w: {k: statistics.median(r[k] for r in rows if r["way"] == w)
               for k in keys} for w in ways}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "workers.csv"), "w",
              newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["way", "run"] + keys + ["pages"])
        for r in rows:
            w.writerow([r["way"], r["run"]] + ["%.4f" % r[k] for k in keys]
                       + [r["pages"]])

    def show(cmd):
        return show_cmd(cmd, tmp)

    base_way = "state" if "state" in ways else ways[0]
    base = med[base_way]["pages_per_s"]
    out = ["# Crawl workers: 1 against 2 (issue 15)", "",
           "Command: `python3 bench/bench_workers.py --hosts %d --pages %d "
           "--runs %d --transfers %d --per-host %d`" % (
               args.hosts, args.pages, args.runs, args.transfers,
               args.per_host), "",
           "Site: %d pages on %d hosts (%s), served by one nginx; "
           "redis-server %s on a unix socket. Machine: %d cores, load "
           "average %s at the end. Medians of %d runs:" % (
               len(expected), args.hosts, show(["python3"] + gen[1:]),
               redis.cli("INFO", "server").split("redis_version:")[1].split()[0]
               if "redis_version:" in redis.cli("INFO", "server") else "?",
               os.cpu_count(), open("/proc/loadavg").read().split()[0],
               args.runs), "",
           "| way | wall s | pages/s | vs %s | pages/s while fetching | "
           "crawl CPU ms/page | redis CPU us/page | redis commands/page | "
           "URLs handed/page |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    out[-2] = out[-2] % base_way
    for w in ways:
        m = med[w]
        out.append("| %s | %.2f | %.0f | %.2fx | %.0f | %.3f | %.1f | %.2f | "
                   "%.3f |" % (
            w, m["wall_s"], m["pages_per_s"], m["pages_per_s"] / base,
            m["fetch_pages_per_s"],
            m["cpu_ms_per_page"], m["redis_us_per_page"],
            m["redis_cmds_per_page"], m["handed_per_page"]))
    rc = med[ways[-1]]["redis_us_per_page"]
    out += ["", "wall s: from the first worker's start to the last one's "
            "exit (the workers' start, and the end: the idle snapshots, "
            "250 ms apart, that prove the crawl over, included); pages/s "
            "while fetching: pages over the time from the first request "
            "nginx logged to the last."]
    out += ["", "One Redis core at the cost of '%s' (%.1f us of its CPU "
            "per page) carries about %s pages/s (1 / that cost)." % (
                ways[-1], rc, format(int(1e6 / rc), ",") if rc > 0 else "?"), "",
            "Every run fetched each of the %d (host, path) pages exactly "
            "once (nginx's log; checked)." % len(expected), "",
            "Commands (TMP is the temporary folder):", ""]
    for w in ways:
        r = next(r for r in rows if r["way"] == w)
        for c in r["cmds"]:
            out.append("    " + show(c))
    out += ["    " + show(redis.cmd), "    " + show(nginx.cmd), ""]
    text = "\n".join(out)
    with open(os.path.join(ROOT, "bench", "results", "workers.md"), "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
