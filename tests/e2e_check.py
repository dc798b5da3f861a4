"""e2e_check.py - the verdict bookkeeping of the end-to-end test scripts,
and the crawl process they wait for.

check(cond, what) prints "ok: what" or "FAIL: what" and counts it;
summary() prints the totals and returns the script's exit status (1 when
anything failed).  Run is one crawl process whose hang fails the test
instead of hanging it; read_stats and count_lines read its files; Parts
runs the parts of a test, one's exception failing that part only.  Shared
by the tests/e2e_*.py scripts.
"""
import json
import os
import re
import signal
import subprocess
import time
import traceback

RUN_TIMEOUT = 120    # seconds a crawl may take before it is called hung
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


def read_stats(path):
    """A run's --stats-json; {} if it is missing or not whole."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


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
