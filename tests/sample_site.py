"""The sample site's server for the tests: serve.py (examples/site/) on a
free port of 127.0.0.1, and the crawl options that reach it.

One place for what every end-to-end test of the sample site does first:
start the server, read the port it chose (it prints "PORT N"), and ask the
checker for crawl's --resolve options and seed URL on that port.
"""
import os
import subprocess
import sys

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
