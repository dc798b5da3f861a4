#!/usr/bin/env python3
"""End-to-end: the sample crawler against the sample site on 127.0.0.1.

    python3 tests/e2e_crawl.py BUILD_EXAMPLES_DIR

For each run: generate the site (examples/site/gensite.py), serve it on a
free port of 127.0.0.1 with an access log (serve.py), crawl it with
examples/crawl mapping the site's virtual hosts to 127.0.0.1 (--resolve),
stop the server, and judge the crawl with examples/site/check_crawl.py:
every reachable allowed page fetched exactly once, nothing disallowed
fetched, no URL requested twice (the server's own log), every spelling
merged, redirects through the seen-test, the trap bounded, each error kind
reported, the log and --out in agreement. Then the crawler's --stats-json
is checked against the server's log.

The runs:
  domain    --scope domain, generous concurrency: the whole checker passes.
  host      --scope host: the whole checker passes.
  tiny      a Bloom filter sized for 40 URLs and an LRU of 150 entries: the
            report shows false positives caught (while the LRU is complete)
            and PROBABLY_SEEN (after it evicted); pages are lost to false
            positives (check_crawl --lossy), but every other rule holds:
            still no URL is requested twice.
  sigint    Ctrl-C in the middle of a slow crawl: the crawler stops cleanly
            with its report and exit status 0.

Nothing here contacts an address outside 127.0.0.0/8: the site's names are
reserved (.test, .example) and mapped to 127.0.0.1.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
SLOW_SECONDS = 3
HUGE = "4M"
passes = failures = 0


def check(cond, what):
    global passes, failures
    if cond:
        passes += 1
        print("ok:", what)
    else:
        failures += 1
        print("FAIL:", what)


class Server:
    """serve.py on a free port of 127.0.0.1, with its access log."""

    def __init__(self, sitedir, log):
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(SITE, "serve.py"), sitedir,
             "--log", log, "--slow-seconds", str(SLOW_SECONDS),
             "--huge-bytes", HUGE],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError("serve.py did not start: %r" % line)
        self.port = int(line.split()[1])

    def stop(self):
        """Stop it once the slow request it may still serve is logged."""
        time.sleep(0.2)
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=SLOW_SECONDS + 5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def resolve_args(manifest, port):
    out = subprocess.run(
        [sys.executable, os.path.join(SITE, "check_crawl.py"),
         "--manifest", manifest, "--port", str(port), "--resolve-args"],
        capture_output=True, text=True, check=True).stdout.split()
    return out  # --resolve H:P:A ... and the seed URL last


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def crawl_and_check(sitedir, name, crawl_args, check_args):
    manifest = os.path.join(sitedir, "manifest.json")
    work = os.path.join(sitedir, name)
    os.makedirs(work)
    log, out, stats = (os.path.join(work, n)
                       for n in ("access.log", "out.jsonl", "stats.json"))
    server = Server(sitedir, log)
    args = resolve_args(manifest, server.port)
    cmd = [CRAWL, "--quiet", "--out", out, "--stats-json", stats,
           "--timeout", "1500", "--max-body", "1000000", *crawl_args, *args]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    elapsed = time.time() - t0
    server.stop()
    check(p.returncode == 0, "%s: crawl exits 0 (%.1f s)" % (name, elapsed))
    if p.returncode != 0:
        print(p.stderr[-2000:])
    c = subprocess.run(
        [sys.executable, os.path.join(SITE, "check_crawl.py"),
         "--manifest", manifest, "--log", log, "--out", out, *check_args],
        capture_output=True, text=True)
    print(c.stdout)
    check(c.returncode == 0, "%s: check_crawl passes" % name)
    with open(stats) as f:
        s = json.load(f)
    entries = read_log(log)
    robots = [e for e in entries if e["path"].split("?")[0] == "/robots.txt"]
    pages = [e for e in entries if e not in robots]
    with open(out) as f:
        records = [json.loads(line) for line in f if line.strip()]
    # The report's numbers against the server's own account.
    check(s["pages"] == len(records) == len(pages),
          "%s: pages in the report (%d) = --out records (%d) = requests "
          "in the server log (%d)" % (name, s["pages"], len(records),
                                      len(pages)))
    check(s["frontier"]["robots_fetches"] == len(robots),
          "%s: robots.txt fetches in the report (%d) = in the log (%d)"
          % (name, s["frontier"]["robots_fetches"], len(robots)))
    statuses = {}
    for e in pages:
        statuses[e["status"] // 100] = statuses.get(e["status"] // 100, 0) + 1
    check(s["status"]["4xx"] == statuses.get(4, 0) and
          s["status"]["5xx"] == statuses.get(5, 0),
          "%s: 4xx/5xx counts agree with the log" % name)
    targets = [(e["host"].lower(), e["path"]) for e in entries]
    check(len(targets) == len(set(targets)),
          "%s: no request target twice in the server log" % name)
    seen = s["seen"]
    check(seen["new"] + seen["duplicate"] + seen["probably_seen"] ==
          seen["tested"], "%s: verdicts add up to tests" % name)
    check(s["frontier"]["admitted"] == seen["new"],
          "%s: every NEW URL was queued" % name)
    return s, c.stdout


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    with tempfile.TemporaryDirectory(prefix="bc_e2e.") as d:
        sitedir = os.path.join(d, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir], check=True, capture_output=True)
        fast = ["--delay", "0", "--concurrency", "16", "--per-host", "4"]

        s, _ = crawl_and_check(sitedir, "domain",
                               fast + ["--scope", "domain", "--max-depth",
                                       "8"],
                               ["--scope", "domain", "--max-depth", "8"])
        check(s["seen"]["duplicate"] > 10 * s["seen"]["new"],
              "domain: most links are repeats (DUPLICATE %d, NEW %d)"
              % (s["seen"]["duplicate"], s["seen"]["new"]))
        check(s["merged"] > 0 and s["merged_absolute"] > 0,
              "domain: spellings merged by normalization (%d, %d absolute)"
              % (s["merged"], s["merged_absolute"]))
        check(s["errors"]["timeout"] >= 1 and s["errors"]["too_large"] >= 1,
              "domain: timeout and too-large errors reported")
        check(s["seen"]["lru_complete"] and s["seen"]["probably_seen"] == 0,
              "domain: the LRU stayed complete, the seen-test exact")

        crawl_and_check(sitedir, "host",
                        fast + ["--scope", "host", "--max-depth", "6"],
                        ["--scope", "host", "--max-depth", "6"])

        s, report = crawl_and_check(
            sitedir, "tiny",
            fast + ["--scope", "domain", "--max-depth", "8", "--expect",
                    "40", "--fp-rate", "0.05", "--lru", "150"],
            ["--scope", "domain", "--max-depth", "8", "--lossy"])
        seen = s["seen"]
        check(seen["fp_caught"] > 0,
              "tiny: false positives caught while the LRU was complete (%d)"
              % seen["fp_caught"])
        check(seen["probably_seen"] > 0 and not seen["lru_complete"],
              "tiny: PROBABLY_SEEN once the LRU evicted (%d)"
              % seen["probably_seen"])
        for rule in ("O3", "L2", "L3", "L4", "L6", "L7"):
            check(("ok   %s " % rule) in report,
                  "tiny: rule %s still holds" % rule)

        # Ctrl-C: a slow crawl interrupted after 1.5 s.
        log = os.path.join(d, "sigint.log")
        server = Server(sitedir, log)
        args = resolve_args(os.path.join(sitedir, "manifest.json"),
                            server.port)
        p = subprocess.Popen([CRAWL, "--delay", "300", *args],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=SLOW_SECONDS + 10)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        server.stop()
        check(p.returncode == 0 and "== bloomcrawl report" in out and
              "interrupted" in err,
              "sigint: Ctrl-C stops the crawl with the report, exit 0")
    print("%d passed, %d failed" % (passes, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
