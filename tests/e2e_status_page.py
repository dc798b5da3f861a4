#!/usr/bin/env python3
"""e2e_status_page.py - the live status page in a real browser.

Headless Chromium loads GET / of a crawl of the sample site on 127.0.0.1
while the crawl runs, driven through its DevTools protocol over a pipe
(stdlib only), in real time: the page polls /status and /hosts once a
second until every chart has drawn 3 points or more (each SVG says how
many in data-points).  The test then reads the DOM: the totals and the
per-host table hold the crawl's numbers (its hosts, each with pages > 0,
within what /hosts said after; the page's pages between two /status
reads around it), the false-positive chart's target is --fp-rate, the
page names no other server; a click on a column's name sorts the table.
A screenshot of the page is kept in the build directory
(status_page.png), and every metric README.md and
docs/grafana-bloomcrawl.json name is checked against GET /metrics; with
Debian's prometheus installed, README.md's scrape configuration passes
promtool check config and each of the dashboard's queries is valid PromQL
(a Prometheus on 127.0.0.1 answers it).

The crawl: `crawl --listen 0` (the page is the one compiled into crawl),
slowed down (--delay 100, one transfer per host) so that it runs while the
browser watches, and kept serving by --listen-linger until POST /stop.

Skipped (exit 77) when chromium is not installed.

usage: e2e_status_page.py [BINDIR [SCREENSHOT]]
       (BINDIR holds crawl; default build/examples)
"""
import base64
import fcntl
import html.parser
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
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_check import check, summary  # noqa: E402
import sample_site  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SITE = os.path.join(ROOT, "examples", "site")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
SHOT = (sys.argv[2] if len(sys.argv) > 2
        else os.path.join(BIN, "status_page.png"))
CRAWL = os.path.join(BIN, "crawl")
CHARTS = ["c-pages", "c-queue", "c-fill", "c-fpr", "c-verdicts", "c-lru",
          "c-errors", "c-reasons"]
# The --fp-rate of the test's crawls: the page's target line.
FP_RATE = 0.001


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """Headless Chromium driven through its DevTools protocol over a pipe
    (--remote-debugging-pipe: JSON messages, each ended by a NUL byte, read
    by Chromium on its fd 3 and written on its fd 4), stdlib only: open a
    page, evaluate JavaScript in it while it runs in real time, take a
    screenshot."""

    def __init__(self, exe, profile, width=1400, height=1900):
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()

        def child_fds():  # fd 3: Chromium reads; fd 4: it writes
            a = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10)  # clear of 3 and 4
            b = fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu",
             "--user-data-dir=" + profile, "--no-first-run",
             "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync",
             "--hide-scrollbars", "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=child_fds,
            close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.w, self.r = os.fdopen(to_w, "wb"), os.fdopen(from_r, "rb")
        self.next_id, self.buf, self.session = 0, b"", None
        self.errors = []  # the page's uncaught script errors
        self.size = (width, height)

    def call(self, method, timeout=20, **params):
        """Send a command (to the page once attached); its result."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self.w.write(json.dumps(msg).encode() + b"\0")
        self.w.flush()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while b"\0" not in self.buf:
                chunk = os.read(self.r.fileno(), 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed its pipe")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(line)
            if reply.get("method") == "Runtime.exceptionThrown":
                d = reply["params"]["exceptionDetails"]
                self.errors.append(d.get("exception", {}).get(
                    "description", d.get("text")))
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
        raise RuntimeError("%s: no answer in %d s" % (method, timeout))

    def open(self, url):
        target = self.call("Target.createTarget", url="about:blank")
        self.session = self.call("Target.attachToTarget",
                                 targetId=target["targetId"],
                                 flatten=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", width=self.size[0],
                  height=self.size[1], deviceScaleFactor=1, mobile=False)
        self.call("Runtime.enable")  # its exceptions come as events
        self.call("Page.navigate", url=url)

    def eval(self, expression):
        r = self.call("Runtime.evaluate", expression=expression,
                      returnByValue=True)
        return r.get("result", {}).get("value")

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, OSError):
            pass
        for f in (self.w, self.r):
            try:
                f.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Dom(html.parser.HTMLParser):
    """What the test reads from the dumped DOM: elements by id (their
    attributes and text), the host table's rows and any URL the page
    names in src or href."""

    def __init__(self):
        super().__init__()
        self.ids, self.rows, self.links = {}, [], []
        self.stack = []  # [(tag, id or None)]
        self.cell = None  # (row dict, data-key) while in a cell

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if a.get(k):
                self.links.append(a[k])
        if tag == "tr" and "data-host" in a:
            self.rows.append({"host": a["data-host"]})
        if tag in ("td", "th") and self.rows and "data-key" in a and \
                any(t == "tr" for t, _ in self.stack):
            self.cell = (self.rows[-1], a["data-key"])
            self.rows[-1][a["data-key"]] = ""
        if a.get("id"):
            self.ids[a["id"]] = {"attrs": a, "text": ""}
        if tag not in ("br", "meta", "link", "img", "input", "path", "line"):
            self.stack.append((tag, a.get("id")))

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break
        if tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        for _, i in self.stack:
            if i:
                self.ids[i]["text"] += data
        if self.cell:
            row, key = self.cell
            row[key] += data


def count(text):
    """'1,234' -> 1234 (None if not a count)."""
    t = text.strip().replace(",", "")
    return int(t) if re.fullmatch(r"\d+", t) else None


def check_page(dom, label, hosts_expected, pages_max, elapsed_ms):
    """The checks on one dumped DOM, of a crawl that had run elapsed_ms
    when it was read; returns the table's rows."""
    d = Dom()
    d.feed(dom)
    for c in CHARTS:
        attrs = d.ids.get(c, {}).get("attrs", {})
        pts = int(attrs.get("data-points", "0"))
        span = int(attrs.get("data-span-ms", "0"))
        # the first sample has no rate: a rate chart draws one point less
        check(pts >= 3, "%s: chart %s drew points (%d)" % (label, c, pts))
        # the time axis is the crawl's clock (a first sample at 0 ms once
        # took the wall clock: an axis of 500,000 hours)
        check(1000 <= span <= elapsed_ms,
              "%s: chart %s spans 1 s to the crawl's %d ms (%d)"
              % (label, c, elapsed_ms, span))
    conn = d.ids.get("conn", {}).get("text", "")
    check(conn.startswith("crawling") or conn.startswith("finished"),
          "%s: the page reached the crawl (%r)" % (label, conn))
    pages = count(d.ids.get("t-pages", {}).get("text", ""))
    check(pages is not None and 0 < pages <= pages_max,
          "%s: total pages shown, 0 < %s <= %d" % (label, pages, pages_max))
    rows = d.rows
    hosts = sorted(r["host"] for r in rows)
    check(hosts and set(hosts) <= set(hosts_expected),
          "%s: the host table's hosts are the crawl's (%s)" % (label, hosts))
    bad = [r for r in rows if not (count(r.get("pages", "")) or 0) > 0]
    check(rows and not bad,
          "%s: every host row has pages > 0 (%s)" % (label, bad[:2]))
    in_table = sum(count(r.get("pages", "")) or 0 for r in rows)
    check(0 < in_table <= pages_max,
          "%s: the table's pages add up to 0 < %d <= %d"
          % (label, in_table, pages_max))
    fpr = d.ids.get("n-fpr", {}).get("text", "")
    check("(target %g)" % FP_RATE in fpr,
          "%s: the false-positive chart's target is --fp-rate %g (%r)"
          % (label, FP_RATE, fpr))
    external = [u for u in d.links
                if re.match(r"(?i)^(https?:)?//", u)]
    check(not external, "%s: the page names no other server (%s)"
          % (label, external))
    return rows


def crawl_cmd(work, server, *extra):
    return [CRAWL, "--delay", "0", "--timeout", "3000", "--concurrency", "4",
            "--per-host", "2", "--scope", "any", "--exclude", "*/slow*",
            "--fp-rate", str(FP_RATE),
            "--out", os.path.join(work, "out.jsonl"), *extra, *server.args]


# What the page shows now, read by the test: each chart's points, the
# connection badge, the rows' hosts in table order.
PROBE = """JSON.stringify({
  points: Object.fromEntries(%s.map(function (id) {
    return [id, +(document.getElementById(id).getAttribute('data-points')
                  || 0)]; })),
  conn: document.getElementById('conn').textContent,
  hosts: Array.from(document.querySelectorAll('#hosts-body tr'))
    .map(function (tr) { return tr.getAttribute('data-host'); })
})""" % json.dumps(CHARTS)


def watch(exe, work, url, label):
    """Open url in headless Chromium and let it run in real time until
    every chart has 3 points or more (the page polls once a second; 25 s
    at most). Returns the browser (the caller closes it) and the DOM."""
    b = Browser(exe, os.path.join(work, "profile-" + label))
    b.open(url)
    end, probe = time.monotonic() + 25, {}
    while time.monotonic() < end:
        time.sleep(0.5)
        probe = json.loads(b.eval(PROBE) or "{}")
        if probe and min(probe["points"].values()) >= 3 and probe["hosts"]:
            break
    dom = b.eval("document.documentElement.outerHTML")
    check(bool(dom), "%s: the browser rendered the page (%s)"
          % (label, probe.get("conn")))
    check(not b.errors, "%s: no script error in the page (%s)"
          % (label, b.errors[:3]))
    return b, dom or ""


def check_sorting(b, label):
    """Clicking a column's name sorts the table by it: Host ascending, then
    Pages descending; aria-sort says which."""
    def order(key):
        b.eval("document.querySelector('th[data-key=%s] button').click()"
               % key)
        return json.loads(b.eval(
            "JSON.stringify([Array.from(document.querySelectorAll("
            "'#hosts-body tr [data-key=%s]')).map(function (c) {"
            " return c.textContent; }), document.querySelector("
            "'th[data-key=%s]').getAttribute('aria-sort')])" % (key, key)))
    hosts, sort = order("host")
    check(hosts == sorted(hosts) and sort == "ascending",
          "%s: a click on Host sorts by host, ascending (%s, %s)"
          % (label, hosts, sort))
    pages, sort = order("pages")
    counts = [count(p) for p in pages]
    check(counts == sorted(counts, reverse=True) and sort == "descending",
          "%s: a click on Pages sorts by pages, descending (%s, %s)"
          % (label, counts, sort))


def ask(port, path, token=None, method="GET"):
    """(status, parsed JSON or text) of path on 127.0.0.1:port."""
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 method=method,
                                 data=b"" if method == "POST" else None)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read().decode()
            kind = r.headers.get("Content-Type", "")
            return r.status, json.loads(body) if "json" in kind else body
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def hosts_of(doc):
    """/hosts's rows by host: {"sort", "hosts": N, "per_host": [rows]}."""
    return {h["host"]: h for h in doc["per_host"]}


def documented_metrics():
    """The metric names README.md's "Watching a crawl" and the Grafana
    dashboard (docs/grafana-bloomcrawl.json) use."""
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    sec = readme.split("## Watching a crawl", 1)[1].split("\n## ", 1)[0]
    with open(os.path.join(ROOT, "docs", "grafana-bloomcrawl.json")) as f:
        dash = json.load(f)
    exprs = " ".join(t["expr"] for p in dash["panels"]
                     for t in p.get("targets", []))
    names = set(re.findall(r"\bbloomcrawl_[a-z0-9_]*[a-z0-9]", sec + exprs))
    return names


def check_metric_names(port):
    """Every metric the README and the dashboard name is one that
    /metrics exposes."""
    code, text = ask(port, "/metrics")
    check(code == 200, "live: /metrics answers 200 (%d)" % code)
    have = set(re.findall(r"^(bloomcrawl_[a-z0-9_]+)", text, re.M))
    names = documented_metrics()
    missing = sorted(names - have)
    check(len(names) > 20 and not missing,
          "live: the %d metrics README.md and docs/grafana-bloomcrawl.json "
          "name are in /metrics (missing %s)" % (len(names), missing))


def check_queries(work):
    """README.md's scrape configuration passes promtool check config, and
    every query of the Grafana dashboard is valid PromQL: a Prometheus
    (no target, 127.0.0.1, a free port) answers each with success."""
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        print("skip: the dashboard's queries (no prometheus, promtool)")
        return
    with open(os.path.join(ROOT, "README.md")) as f:
        sec = f.read().split("## Watching a crawl", 1)[1]
    conf = os.path.join(work, "readme-prometheus.yml")
    with open(conf, "w") as f:
        f.write(sec.split("```yaml\n", 1)[1].split("```", 1)[0])
    p = subprocess.run(["promtool", "check", "config", conf],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "README.md's scrape configuration passes "
          "promtool check config%s" % ("" if p.returncode == 0
                                       else "\n" + p.stdout + p.stderr))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    empty = os.path.join(work, "empty-prometheus.yml")
    with open(empty, "w") as f:
        f.write("scrape_configs: []\n")
    prom = subprocess.Popen(
        ["prometheus", "--config.file=" + empty,
         "--storage.tsdb.path=" + os.path.join(work, "prometheus"),
         "--web.listen-address=127.0.0.1:%d" % port],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 20
        while time.monotonic() < end:
            try:
                if ask(port, "/-/ready")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        with open(os.path.join(ROOT, "docs", "grafana-bloomcrawl.json")) as f:
            dash = json.load(f)
        exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
        bad = []
        for e in exprs:
            q = urllib.parse.urlencode({"query":
                                        e.replace("$instance", ".*")})
            try:
                code, r = ask(port, "/api/v1/query?" + q)
            except OSError as err:
                code, r = 0, str(err)
            if code != 200 or r.get("status") != "success":
                bad.append((e, r))
        check(len(exprs) > 15 and not bad,
              "the dashboard's %d queries are valid PromQL (bad: %s)"
              % (len(exprs), bad[:2]))
    finally:
        sample_site.stop_process(prom)


def run_live(exe, work, server):
    """The page served by crawl --listen during a crawl of the sample
    site, slowed down (--delay, one transfer per host) so that it runs
    while the browser watches; --listen-linger keeps the final numbers
    served until POST /stop."""
    err = open(os.path.join(work, "crawl.err"), "w+")
    crawl = subprocess.Popen(
        crawl_cmd(work, server, "--listen", "0", "--listen-linger", "60s",
                  "--stats-json", os.path.join(work, "live.json"))
        + ["--delay", "100", "--per-host", "1"],
        stdout=subprocess.DEVNULL, stderr=err)
    try:
        port = token = None
        deadline = time.monotonic() + 10
        while port is None and time.monotonic() < deadline:
            err.seek(0)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/ "
                          r"\(control token: (\w+)\)", err.read())
            if m:
                port, token = int(m.group(1)), m.group(2)
            elif crawl.poll() is not None:
                break
            time.sleep(0.05)
        check(port is not None, "live: crawl --listen said its URL")
        if port is None:
            return
        # Let the crawl get going: the charts start from a moving crawl.
        before = {}
        while time.monotonic() < deadline + 10:
            code, before = ask(port, "/status")
            if code == 200 and before.get("pages", 0) >= 10:
                break
            time.sleep(0.1)
        check(before.get("outcome") == "running",
              "live: the crawl runs when the browser loads the page (%s, "
              "%s pages)" % (before.get("outcome"), before.get("pages")))
        url = "http://127.0.0.1:%d/" % port
        b, dom = watch(exe, work, url, "live")
        code, after = ask(port, "/status")
        hcode, hdoc = ask(port, "/hosts?sort=pages&limit=100")
        check(code == 200 and hcode == 200, "live: /status and /hosts "
              "answer 200 (%d, %d)" % (code, hcode))
        live_hosts = hosts_of(hdoc)
        target = after.get("seen", {}).get("bloom", {}).get("fpr_target")
        check(target == FP_RATE, "live: /status's seen.bloom.fpr_target is "
              "--fp-rate (%s)" % target)
        rows = check_page(dom, "live", list(live_hosts), after["pages"],
                          after["elapsed_ms"])
        d = Dom()
        d.feed(dom)
        shown = count(d.ids["t-pages"]["text"]) or 0
        check(before["pages"] <= shown <= after["pages"],
              "live: the page's pages are the live count (%d <= %d <= %d)"
              % (before["pages"], shown, after["pages"]))
        bad = [r["host"] for r in rows
               if not (count(r["pages"]) or 0) <=
               live_hosts[r["host"]]["pages"]]
        check(not bad, "live: each host row's pages within /hosts' (%s)"
              % bad)
        try:
            b.screenshot(SHOT)
            check(os.path.getsize(SHOT) > 10000,
                  "live: the screenshot %s" % SHOT)
            check_sorting(b, "live")
        finally:
            b.close()
        check_metric_names(port)
        # POST /stop: the clean stop of the crawl if it still runs, the
        # end of --listen-linger once it is over.
        for _ in range(3):
            try:
                code, _ = ask(port, "/stop", token, "POST")
                check(code == 200, "live: POST /stop answered 200 (%d)"
                      % code)
            except (OSError, http.client.HTTPException):
                pass  # it ended as it answered
            try:
                crawl.wait(timeout=10)
                break
            except subprocess.TimeoutExpired:
                pass
        check(crawl.poll() is not None,
              "live: the crawl ended after POST /stop (exit %s)"
              % crawl.poll())
    finally:
        if crawl.poll() is None:
            crawl.kill()
            crawl.wait()
        err.seek(0)
        text = err.read()
        err.close()
        check("Sanitizer" not in text and "runtime error:" not in text,
              "live: no sanitizer report" + ("" if "Sanitizer" not in text
                                             else "\n" + text[-800:]))


def main():
    exe = browser()
    if not exe:
        print("skip: chromium is not installed (scripts/deps.sh test)")
        return 77
    with tempfile.TemporaryDirectory(prefix="bc_page.") as work:
        sitedir = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(SITE, "gensite.py"),
                        sitedir, "--pages", "150"], check=True,
                       capture_output=True)
        check_queries(work)
        server = sample_site.Server(sitedir, os.path.join(work, "access.log"))
        try:
            run_live(exe, work, server)
        finally:
            server.stop()
    return summary()


if __name__ == "__main__":
    sys.exit(main())
