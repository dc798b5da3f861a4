#!/usr/bin/env python3
"""End-to-end: a server outage in the middle of a crawl (issue 20, section
1: transient faults are retried, a host that stays down is given up and
the exit status says so).

    python3 tests/e2e_outage.py BUILD_EXAMPLES_DIR

The sample site (examples/site/, 100 pages) on a free port of 127.0.0.1,
crawled by examples/crawl in --scope host with short retry delays:

  fast      --delay 0, two transfers per host: once the crawl has made 20
            requests the server is stopped for 5 s and started again on
            the same port. Every attempt the outage refused or cut is
            retried (counted: "retried", ":retry" lines in --log), the
            host's circuit opens after 5 faults in a row and its probe
            finds the server back: every page is fetched, none is
            recorded as a connect failure, check_crawl.py passes strictly.
            The two pages the site answers badly on purpose (/error/500,
            /slow: a timeout) are given up after their retries: the
            outcome is "incomplete", exit status 4, and those two alone
            are counted as given up (retries exhausted; /slow answers at
            once when its server stops, so an attempt the outage cut may
            end it with a 200).
  polite    the same with politeness: --delay 50, one transfer per host.
  down      the server is stopped for good after 20 requests; with
            --host-give-up 2s the host is given up as down once its
            circuit's probe fails: its URLs dropped (host_down), exit 4,
            the report lists the host. A later run with the server back
            and --retry-failed --state DIR queues them again and fetches
            them: the two runs together fetched every page
            (check_crawl.py on the last record of each URL, the two
            server logs).

Nothing here contacts an address outside 127.0.0.0/8.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, summary, Run, Parts, read_stats  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
CRAWL = os.path.join(BIN, "crawl")
SERVE = ["--slow-seconds", "1", "--huge-bytes", "2M"]
# Short retries (200, 400, 800 ms), a timeout under /slow's second.
BASE = ["--quiet", "--scope", "host", "--max-depth", "6", "--timeout", "600",
        "--max-body", "1000000", "--retry-delay", "200"]
CHECK = ["--scope", "host", "--max-depth", "6"]
# A request that the stopping server read (and logged) but never answered
# may be sent again by libcurl itself on a fresh connection: it retries a
# request on a reused connection that died before any byte of the answer
# came. Such a repeat is not one of the crawler's retries (no record
# counts it); one is allowed to the outage's crawls (seen once under load).
OUTAGE_CHECK = CHECK + ["--refetch-tolerance", "1"]
OUTAGE_S = 5.0
BAD_PAGES = ("/error/500", "/slow")  # given up by design (retries exhausted)


def wait_requests(log, n, run, limit=30.0):
    """Wait until the server's log has n requests (or the crawl ended)."""
    t = time.monotonic()
    while time.monotonic() - t < limit and run.poll() is None:
        try:
            with open(log) as f:
                if sum(1 for line in f if line.strip()) >= n:
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def records(path):
    try:
        with open(path) as f:
            return [json.loads(x) for x in f if x.strip()]
    except OSError:
        return []


def path_of(url):
    return "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"


def outage(sitedir, work, name, politeness):
    os.makedirs(work)
    log, out, stats, flog = (os.path.join(work, n) for n in (
        "access.log", "out.jsonl", "stats.json", "fetch.log"))
    server = sample_site.Server(sitedir, log, SERVE)
    port = server.port
    run = Run([CRAWL, *BASE, *politeness, "--out", out, "--stats-json",
               stats, "--log", flog, *server.args], work, name)
    started = wait_requests(log, 20, run)
    check(started, "%s: the crawl made 20 requests before the outage" % name)
    sample_site.stop_process(server.proc, 5)
    t_stop = time.monotonic()
    time.sleep(OUTAGE_S)
    # Back on the same port, the same log appended to.
    proc, port2 = sample_site.start_server(sitedir, log,
                                           SERVE + ["--port", str(port)])
    check(port2 == port, "%s: the server is back on port %d after %.1f s"
          % (name, port, time.monotonic() - t_stop))
    rc = run.wait()
    sample_site.stop_process(proc, 5)
    s = read_stats(stats)
    recs = records(out)
    check(run.sane(), "%s: the crawl ended by itself, no sanitizer report"
          % name)
    given = s.get("given_up", {})
    check(rc == 4 and s.get("outcome") == "incomplete",
          "%s: exit 4, outcome incomplete (%r, %r): %s"
          % (name, rc, s.get("outcome"), run.tail()[-300:]))
    transient = sorted(path_of(r["url"]) for r in recs
                       if r.get("fault") == "transient")
    # /slow answers at once when its server stops (serve.py wakes it): an
    # attempt cut by the outage may be its last, a 200.
    slow_ok = any(path_of(r["url"]) == "/slow" and r.get("status") == 200
                  for r in recs)
    want = sorted(p for p in BAD_PAGES if p != "/slow" or not slow_ok)
    check(transient == want and given.get("total") == len(want) and
          given.get("retries_exhausted") == len(want),
          "%s: given up to transient faults: the site's /error/500 and "
          "/slow alone, their retries exhausted (%r, %r)"
          % (name, transient, given))
    lost = [r["url"] for r in recs
            if r.get("error") in ("connect", "network", "other")]
    check(not lost, "%s: no page recorded as a connect or network failure "
          "(%r)" % (name, lost[:5]))
    with open(flog) as f:
        lines = f.read().splitlines()
    refused = [x for x in lines if x.endswith(":retry") and
               "/error/500" not in x and "/slow" not in x]
    check(len(refused) >= 1 and s.get("retried", 0) >= len(refused) + 3,
          "%s: the outage's failures retried (%d attempts in --log, %r "
          "retried in all)" % (name, len(refused), s.get("retried")))
    check(s.get("transient_given_up") == len(want) and
          s.get("hosts_open") == 0 and
          s["frontier"].get("hosts_down") == 0,
          "%s: %d pages given up, no host paused or down at the end (%r)"
          % (name, len(want), {k: s.get(k) for k in ("transient_given_up",
                                                     "hosts_open")}))
    rc, text = sample_site.run_checker(
        sitedir, log, out,
        OUTAGE_CHECK + (["--no-timeout-check"] if slow_ok else []))
    check(rc == 0, "%s: check_crawl passes (every page fetched and recorded "
          "once; requests within each record's retries, and one repeat by "
          "the HTTP client)" % name)
    if rc != 0:
        print(text[-3000:])
    return s


def down(sitedir, work):
    os.makedirs(work)
    state = os.path.join(work, "state")
    log1, log2, out1, out2, stats1, stats2 = (os.path.join(work, n) for n in (
        "access1.log", "access2.log", "out1.jsonl", "out2.jsonl",
        "stats1.json", "stats2.json"))
    server = sample_site.Server(sitedir, log1, SERVE)
    port = server.port
    args = [CRAWL, *BASE, "--delay", "0", "--per-host", "2",
            "--host-give-up", "2s", "--state", state]
    # (with its report: not --quiet)
    run = Run([a for a in args if a != "--quiet"] +
              ["--out", out1, "--stats-json", stats1, *server.args],
              work, "down1")
    check(wait_requests(log1, 20, run),
          "down: the crawl made 20 requests before the server stopped")
    sample_site.stop_process(server.proc, 5)
    t0 = time.monotonic()
    rc = run.wait()
    took = time.monotonic() - t0
    s = read_stats(stats1)
    given = s.get("given_up", {})
    check(run.sane() and rc == 4 and s.get("outcome") == "incomplete",
          "down: the crawl ends by itself, exit 4, incomplete (%r, %r, "
          "%.1f s after the stop): %s" % (rc, s.get("outcome"), took,
                                          run.tail()[-300:]))
    check(given.get("hosts_down") == 1 and given.get("host_down", 0) > 0 and
          s["frontier"]["reasons"].get("host_down", 0) > 0,
          "down: the host given up as down, its URLs dropped (%r)" % given)
    report = run.stdout()
    www = [ln for ln in report.splitlines()
           if ln.startswith("  http://www.bloomcrawl.test:%d " % port)]
    check(re.search(r"^given up +%d URLs to transient faults"
                    % given.get("total", -1), report, re.M) is not None and
          any("host down (" in ln for ln in www),
          "down: the report lists the URLs given up, by host: %r" % www)

    # Later, the server back: --retry-failed fetches what was given up.
    proc, _ = sample_site.start_server(sitedir, log2,
                                       SERVE + ["--port", str(port)])
    # (the site's two bad pages alone must not give the host up again:
    # their retries are not the outage's)
    run2 = Run(args + ["--retry-failed", "--host-give-up", "1h",
                       "--host-failures", "0", "--out", out2, "--stats-json",
                       stats2, *server.args], work, "down2")
    rc2 = run2.wait()
    sample_site.stop_process(proc, 5)
    s2 = read_stats(stats2)
    err = run2.stderr()
    check(run2.sane() and "--retry-failed:" in err and "queued again" in err,
          "down: --retry-failed says how many URLs it queued again: %s"
          % err.strip()[:200])
    lost2 = sorted(path_of(r["url"]) for r in records(out2)
                   if r.get("fault") == "transient")
    check(rc2 == 4 and "/error/500" in lost2 and
          set(lost2) <= set(BAD_PAGES) and
          s2.get("given_up", {}).get("total") == len(lost2) and
          s2.get("given_up", {}).get("hosts_down") == 0,
          "down: after --retry-failed only /error/500 and /slow are given "
          "up (%r, %r, %r)" % (rc2, lost2, s2.get("given_up")))
    # Both runs: the last record of each URL, both servers' logs.
    last = {}
    for r in records(out1) + records(out2):
        last[r["url"]] = r
    merged, logs = (os.path.join(work, n) for n in ("merged.jsonl",
                                                   "access.log"))
    with open(merged, "w") as f:
        for r in last.values():
            f.write(json.dumps(r) + "\n")
    with open(logs, "w") as f:
        for p in (log1, log2):
            with open(p) as g:
                f.write(g.read())
    slow_ok = any(path_of(u) == "/slow" and r.get("status") == 200
                  for u, r in last.items())
    rc, text = sample_site.run_checker(
        sitedir, logs, merged, CHECK + ["--refetch-tolerance", "20"] +
        (["--no-timeout-check"] if slow_ok else []))
    check(rc == 0, "down: the two runs together fetched every page "
          "(check_crawl, last record of each URL)")
    if rc != 0:
        print(text[-3000:])


def main():
    if not os.path.exists(CRAWL):
        print("crawl not built at", CRAWL)
        return 1
    parts = Parts()
    with tempfile.TemporaryDirectory(prefix="bc_outage.") as d:
        sitedir = os.path.join(d, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        "--pages", "100", sitedir], check=True,
                       capture_output=True)
        parts.run("fast", outage, sitedir, os.path.join(d, "fast"), "fast",
                  ["--delay", "0", "--concurrency", "4", "--per-host", "2"])
        parts.run("polite", outage, sitedir, os.path.join(d, "polite"),
                  "polite", ["--delay", "50", "--per-host", "1"])
        parts.run("down", down, sitedir, os.path.join(d, "down"))
    print("times: " + ", ".join(parts.times))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
