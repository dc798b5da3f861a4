"""The sample site's server for the tests: serve.py (examples/site/) on a
free port of 127.0.0.1, and the crawl options that reach it.

One place for what every end-to-end test of the sample site does first:
start the server, read the port it chose (it prints "PORT N"), and ask the
checker for crawl's --resolve options and seed URL on that port; and last:
stop it (Server.stop, stop_process), read its log (page_requests) and run
the checker on the crawl (run_checker).
"""
import json
import os
import signal
import subprocess
import sys
import time

SITE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), "examples", "site")


def start_server(sitedir, log=None, options=(), stderr=subprocess.DEVNULL):
    """Start serve.py for sitedir (its access log in log, if given; more
    serve.py options in options). Returns (process, port); the caller
    stops the process. Raises RuntimeError if it does not start."""
    cmd = [sys.executable, os.path.join(SITE, "serve.py"), sitedir]
    if log:
        cmd += ["--log", log]
    proc = subprocess.Popen(cmd + list(options), stdout=subprocess.PIPE,
                            stderr=stderr, text=True)
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        proc.wait()
        raise RuntimeError("serve.py did not start: %r" % line)
    return proc, int(line.split()[1])


def resolve_args(manifest, port):
    """crawl's options that reach the site of manifest (its manifest.json)
    on port: --resolve HOST:PORT:127.0.0.1 for each of its hosts, then the
    seed URL last (check_crawl.py --resolve-args)."""
    return subprocess.run(
        [sys.executable, os.path.join(SITE, "check_crawl.py"),
         "--manifest", manifest, "--port", str(port), "--resolve-args"],
        capture_output=True, text=True, check=True).stdout.split()


def run_checker(sitedir, log, out, options=(), timeout=120):
    """check_crawl.py on a crawl of the site in sitedir: the server's log
    log, crawl's --out out, more of its options (--scope ...) in options;
    at most timeout seconds.  Returns (exit status, its stdout + stderr)."""
    c = subprocess.run(
        [sys.executable, os.path.join(SITE, "check_crawl.py"),
         "--manifest", os.path.join(sitedir, "manifest.json"),
         "--log", log, "--out", out, *options],
        capture_output=True, text=True, timeout=timeout)
    return c.returncode, c.stdout + c.stderr


def sitemap_targets(manifest):
    """(host, path) of every sitemap of the site of manifest (its
    manifest.json): the crawl fetches them (unless --no-sitemaps) but
    they are not pages."""
    with open(manifest) as f:
        return {(url.split("/")[2].split(":")[0], "/" + url.split("/", 3)[3])
                for url in json.load(f)["sitemaps"]}


def page_requests(log, sitemaps=()):
    """(host, path) of every request in serve.py's log log but robots.txt
    and the sitemaps (sitemap_targets), in order."""
    with open(log) as f:
        entries = [json.loads(x) for x in f if x.strip()]
    reqs = [(e["host"].lower(), e["path"]) for e in entries
            if e["path"] != "/robots.txt"]
    return [r for r in reqs if (r[0].split(":")[0], r[1]) not in sitemaps]


def stop_process(proc, timeout=10, sig=signal.SIGTERM):
    """Send sig to proc (unless it has ended) and wait for it at most
    timeout seconds, then kill it.  Returns its exit status; None if it
    had to be killed."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


class Server:
    """serve.py for sitedir on a free port of 127.0.0.1, its access log in
    log, more serve.py options in options; port, and args: crawl's
    options that reach it (resolve_args).  stop() waits stop_timeout
    seconds for it to end before it kills it."""

    def __init__(self, sitedir, log, options=(), stop_timeout=10):
        self.log, self.stop_timeout = log, stop_timeout
        self.proc, self.port = start_server(sitedir, log, options)
        self.args = resolve_args(os.path.join(sitedir, "manifest.json"),
                                 self.port)

    def log_size(self, settle=0.3):
        """Bytes in the log once the requests in progress are logged."""
        time.sleep(settle)
        return os.path.getsize(self.log) if os.path.exists(self.log) else 0

    def requests_since(self, t, settle=0.3):
        """The log's records of the requests that arrived at wall time t
        or later (their "start"), once the requests in progress are
        logged. A request is logged when its answer ends, so a /slow one
        that a crawl before t gave up on is logged seconds later: counting
        bytes of the log would take it for a new request."""
        time.sleep(settle)
        if not os.path.exists(self.log):
            return []
        with open(self.log, encoding="utf-8") as f:
            recs = [json.loads(line) for line in f if line.strip()]
        return [r for r in recs if r.get("start", r.get("time", 0)) >= t]

    def stop(self, settle=0.2):
        """Stop it settle seconds from now (the last requests are logged);
        the slow request it may still serve is woken, logged."""
        if self.proc.poll() is not None:
            return
        time.sleep(settle)
        stop_process(self.proc, self.stop_timeout)
