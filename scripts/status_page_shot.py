#!/usr/bin/env python3
"""status_page_shot.py - make docs/status_page.png, the README's picture of
the live status page (crawl --listen, GET /).

Generates the sample site (examples/site/gensite.py, ~2,000 pages), serves
it on 127.0.0.1, crawls it with a filter sized for 3,000 URLs so that its
fill shows (--expect 3000 --scope any --no-sitemaps --delay 25 --per-host
2), opens the page in headless Chromium (the DevTools client of
tests/e2e_status_page.py) at 1600 x 1265 CSS pixels, and takes the
screenshot 30 s into the crawl.

usage: scripts/status_page_shot.py [BINDIR [PNG]]
       (BINDIR holds crawl, default build/examples; PNG default
       docs/status_page.png)
"""
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build",
                                                         "examples")
PNG = (sys.argv[2] if len(sys.argv) > 2
       else os.path.join(ROOT, "docs", "status_page.png"))
sys.argv[1:] = []  # e2e_status_page reads its own arguments
import e2e_status_page  # noqa: E402
import sample_site  # noqa: E402


def main():
    exe = e2e_status_page.browser()
    if not exe:
        print("status_page_shot: chromium is not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bc_shot.") as work:
        site = os.path.join(work, "site")
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "site",
                                                     "gensite.py"), site],
                       check=True, capture_output=True)
        server = sample_site.Server(site, os.path.join(work, "access.log"))
        err = open(os.path.join(work, "crawl.err"), "w+")
        crawl = subprocess.Popen(
            [os.path.join(BIN, "crawl"), "--listen", "0", "--quiet",
             "--delay", "25", "--per-host", "2", "--concurrency", "6",
             "--no-sitemaps", "--scope", "any", "--max-depth", "8",
             "--expect", "3000", "--timeout", "1500", "--out", os.devnull,
             *server.args], stdout=subprocess.DEVNULL, stderr=err)
        try:
            port = None
            for _ in range(100):
                err.seek(0)
                m = re.search(r"127\.0\.0\.1:(\d+)/", err.read())
                if m:
                    port = int(m.group(1))
                    break
                time.sleep(0.05)
            if port is None:
                print("status_page_shot: crawl --listen did not start",
                      file=sys.stderr)
                return 1
            b = e2e_status_page.Browser(exe, os.path.join(work, "profile"),
                                        width=1600, height=1265)
            try:
                b.open("http://127.0.0.1:%d/" % port)
                time.sleep(30)
                b.screenshot(PNG)
            finally:
                b.close()
        finally:
            crawl.kill()
            crawl.wait()
            err.close()
            server.stop()
    print(PNG)
    return 0


if __name__ == "__main__":
    sys.exit(main())
