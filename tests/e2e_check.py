"""e2e_check.py - the verdict bookkeeping of the end-to-end test scripts,
and the crawl process they wait for.

check(cond, what) prints "ok: what" or "FAIL: what" and counts it;
summary() prints the totals and returns the script's exit status (1 when
anything failed).  Run is one crawl process whose hang fails the test
instead of hanging it; read_stats, counter and count_lines read its
files; Parts runs the parts of a test, one's exception failing that part
only; serve starts a test's own small HTTP server.
setup_warcio and warcio_read drive the independent WARC reader, warcio.js
(npm, tests only), through tests/warc_read.mjs.  Shared by the
tests/e2e_*.py scripts.
"""
import http.server
import json
import os
import re
import shutil
import signal
import socketserver
import subprocess
import sys
import threading
import time
import traceback

RUN_TIMEOUT = 120    # seconds a crawl may take before it is called hung
SKIP = 77            # ctest's SKIP_RETURN_CODE for these scripts
WARCIO = "warcio@2.4.11"  # the npm package of the independent WARC reader
HERE = os.path.dirname(os.path.abspath(__file__))
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|runtime error:")

passes = failures = 0


def check(cond, what):
    global passes, failures
    if cond:
        passes += 1
        print("ok:", what, flush=True)
    else:
        failures += 1
        print("FAIL:", what, flush=True)
    return cond


def summary():
    print("%d passed, %d failed" % (passes, failures))
    return 1 if failures else 0


def setup_warcio(install_dir, *found_dirs):
    """(node, a directory holding node_modules/warcio): the first of
    found_dirs and install_dir that has it (e2e_warc's install serves the
    other tests), else install_dir after npm installs it there. Exits
    SKIP when node or npm is missing or the install fails."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        print("SKIP: node and npm are needed for the WARC reader warcio.js "
              "(scripts/deps.sh test installs them)")
        sys.exit(SKIP)
    for d in (*found_dirs, install_dir):
        if d and os.path.isdir(os.path.join(d, "node_modules", "warcio")):
            return node, d
    os.makedirs(install_dir, exist_ok=True)
    r = subprocess.run([npm, "install", "--prefix", install_dir, "--no-audit",
                        "--no-fund", "--no-save", WARCIO],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print("SKIP: npm install %s failed:\n%s" % (WARCIO, r.stderr[-2000:]))
        sys.exit(SKIP)
    return node, install_dir


def warcio_read(reader, args):
    """warc_read.mjs on args (FILE or FILE@OFFSET): its records (dicts)."""
    node, d = reader
    r = subprocess.run([node, os.path.join(HERE, "warc_read.mjs"), d, *args],
                       capture_output=True, timeout=RUN_TIMEOUT)
    if r.returncode != 0:
        raise RuntimeError("warc_read.mjs failed (%d): %s" % (
            r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    return [json.loads(x) for x in r.stdout.decode().splitlines() if x]


def read_stats(path):
    """A run's --stats-json; {} if it is missing or not whole."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def counter(d, name):
    """A counter of the --stats-json file d/stats.json's "counters",
    wherever it is nested (a group's rows, a labelled array's); None if
    there is no such counter."""
    with open(os.path.join(d, "stats.json")) as f:
        stack = [json.load(f)["counters"]]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            if name in o and isinstance(o[name], int):
                return o[name]
            stack.extend(o.values())
    return None


class SiteHandler(http.server.BaseHTTPRequestHandler):
    """The base of a test's own small site's handler: HTTP/1.1 (kept-alive
    connections, as a crawl uses them), quiet, and the test's site object
    as self.site (serve() sets it)."""
    protocol_version = "HTTP/1.1"
    site = None

    def log_message(self, *args):
        pass


def serve(handler, site=None):
    """Serve handler (a SiteHandler class, site its site) on 127.0.0.1 at
    a free port, a thread per connection, from a daemon thread: (httpd,
    port); httpd.shutdown() stops it."""
    handler.site = site
    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, httpd.server_address[1]


def count_lines(path):
    """Lines in the file at path (0 if there is none)."""
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


class Run:
    """One crawl process, its stdout and stderr in files beside work
    (LABEL.stdout, LABEL.stderr).  timeout: the seconds wait() waits by
    default; preexec_fn: as subprocess.Popen's."""

    def __init__(self, cmd, work, label, timeout=RUN_TIMEOUT,
                 preexec_fn=None):
        self.cmd, self.label, self.timeout = cmd, label, timeout
        self.out_path = os.path.join(work, label + ".stdout")
        self.err_path = os.path.join(work, label + ".stderr")
        with open(self.out_path, "w") as o, open(self.err_path, "w") as e:
            self.proc = subprocess.Popen(cmd, stdout=o, stderr=e,
                                         preexec_fn=preexec_fn)
        self.rc = None

    def poll(self):
        return self.proc.poll()

    def wait(self, timeout=None):
        """The exit status (negative: a signal); None if it had to be
        killed after timeout seconds (self.timeout if None), a failure
        of its own."""
        timeout = self.timeout if timeout is None else timeout
        try:
            self.rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            check(False, "%s: still running after %d s, killed"
                  % (self.label, timeout))
            self.rc = None
        return self.rc

    def kill(self, sig=signal.SIGKILL):
        """Send sig, then wait() as above."""
        self.proc.send_signal(sig)
        return self.wait()

    def stdout(self):
        with open(self.out_path, errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def sane(self):
        """No sanitizer report, not ended by a signal it was not sent."""
        return self.rc is not None and self.rc >= 0 and \
            not SANITIZER.search(self.stderr())

    def tail(self):
        return self.stderr().strip()[-800:]


class Parts:
    """The parts of one test: run() runs one, an exception fails it (its
    traceback printed) and the others still run; times lists each part's
    "NAME S.S s"."""

    def __init__(self):
        self.times = []

    def run(self, name, fn, *args):
        """fn(*args)'s result; None if it raised."""
        t = time.monotonic()
        try:
            res = fn(*args)
        except Exception:
            traceback.print_exc()
            check(False, "%s: the test raised an exception (above)" % name)
            res = None
        self.times.append("%s %.1f s" % (name, time.monotonic() - t))
        return res
