"""A real Scrapy CrawlSpider over the sample site (examples/site) on
127.0.0.1, once with bloomcrawl.scrapy.BloomDupeFilter and once with
Scrapy's default RFPDupeFilter (DESIGN 16.1).

The site links each page under many spellings (./, ../, %2E%2e, a
default port, "  /\\n", ...: the manifest's equivalence_groups). The
server's access log says what was fetched; each request is mapped to
its canonical URL (bloomcrawl.normalize) and:
  - with BloomDupeFilter no canonical URL is fetched twice (so no
    spelling group twice), nothing robots.txt disallows is fetched, and
    every page reachable by links within the depth limit is fetched;
    run again with the same JOBDIR, it fetches nothing;
  - with RFPDupeFilter the same crawl fetches some URLs twice (spellings
    its SHA-1 of w3lib's canonicalize_url does not merge): counted and
    printed, and asserted to be more than bloomcrawl's (none), so the
    contrast stays visible in the test output; and it never fetches a
    page whose query differs from another's only in order (it sorts the
    query), also printed.
And with both components, SCHEDULER = bloomcrawl.scrapy.FrontierScheduler
and BloomDupeFilter (DESIGN 16.3), examples/site/check_crawl.py passes
on the crawl: every reachable page once, robots.txt first and once per
host, nothing disallowed, each spelling group once.
"""
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

pytest.importorskip("scrapy")

import bloomcrawl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import sample_site  # noqa: E402

DEPTH = 8
PAGES = 200  # gensite --pages: small, so both crawls take ~20 s


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("site"))
    subprocess.run([sys.executable, os.path.join(sample_site.SITE,
                                                 "gensite.py"),
                    "--pages", str(PAGES), d], check=True,
                   capture_output=True)
    with open(os.path.join(d, "manifest.json")) as f:
        return d, json.load(f)


def crawl(site, tmp_path, dupefilter, jobdir=None, port=0, options=()):
    """Serve the site (on port, if given: a resumed crawl's URLs must be
    the same), crawl it with Scrapy and dupefilter (and JOBDIR jobdir, if
    given; more scrapy_site_spider.py options in options), stop the
    server. Returns (canonical URL of each page request of the access log
    in order, the spider's stats, the port); with --checker in options,
    (the access log, the spider's output, its stats, the port)."""
    sitedir, manifest = site
    n = len([x for x in os.listdir(tmp_path) if x.startswith("access")])
    log = str(tmp_path / ("access%d.jsonl" % n))
    out = str(tmp_path / ("out%d.jsonl" % n))
    server = sample_site.Server(sitedir, log,
                                options=["--port", str(port)] if port else [])
    try:
        seed = server.args[-1]
        c = subprocess.run(
            [sys.executable, os.path.join(HERE, "scrapy_site_spider.py"),
             seed, manifest["agent"], "bloomcrawl.test", out, dupefilter,
             str(DEPTH)] + ([jobdir] if jobdir else []) + list(options),
            capture_output=True, text=True, timeout=120,
            env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                p for p in (os.environ.get("PYTHONPATH"), HERE) if p)))
        assert c.returncode == 0, c.stderr[-3000:]
    finally:
        server.stop()
    if "--checker" in options:
        with open(out + ".stats") as f:
            return log, out, json.loads(f.readline())["stats"], server.port
    with open(out) as f:
        stats = [json.loads(x) for x in f][-1]["stats"]
    reqs = sample_site.page_requests(log)
    return ([bloomcrawl.normalize("http://%s%s" % r) for r in reqs], stats,
            server.port)


def required_pages(manifest, port):
    """Pages reachable by links from the seed within the domain and
    DEPTH (the sitemaps' pages need a sitemap reader, which Scrapy's
    CrawlSpider is not)."""
    return {u.replace("{PORT}", str(port))
            for u, p in manifest["pages"].items()
            if p["depth"]["domain"] is not None and
            p["depth"]["domain"] <= DEPTH}


def repeats(fetched):
    return {u: n for u, n in Counter(fetched).items() if n > 1}


def report(name, fetched, stats, manifest, port):
    groups = {g["canonical"].replace("{PORT}", str(port))
              for g in manifest["equivalence_groups"]}
    rep = repeats(fetched)
    print("%s: %d page requests, %d distinct, %d duplicate fetches "
          "(%d URLs, %d of them spelling groups), dupefilter/filtered %s"
          % (name, len(fetched), len(set(fetched)),
             sum(rep.values()) - len(rep), len(rep),
             len(groups & set(rep)), stats.get("dupefilter/filtered")))
    return rep


def test_bloom_dupefilter_fetches_each_spelling_group_once(site, tmp_path):
    _, manifest = site
    jobdir = str(tmp_path / "job")
    fetched, stats, port = crawl(
        site, tmp_path, "bloomcrawl.scrapy.BloomDupeFilter", jobdir)
    rep = report("BloomDupeFilter", fetched, stats, manifest, port)
    assert rep == {}
    assert stats.get("dupefilter/probably_seen", 0) == 0
    assert stats["dupefilter/filtered"] > 2 * len(fetched)
    disallowed = {u.replace("{PORT}", str(port))
                  for u in manifest["disallowed"]}
    assert disallowed & set(fetched) == set()
    missing = required_pages(manifest, port) - set(fetched)
    assert missing == set()
    # The same command again: the crawl finished, its seen-test was saved
    # in JOBDIR on close and is loaded on open, so the seed is filtered
    # (PROBABLY_SEEN: the saved filter knows it, the LRU starts empty)
    # and nothing is fetched again.
    assert os.path.exists(os.path.join(jobdir, "requests.seen.bloom"))
    again, stats, _ = crawl(
        site, tmp_path, "bloomcrawl.scrapy.BloomDupeFilter", jobdir, port)
    assert again == []
    assert stats["dupefilter/filtered"] == 1
    assert stats["dupefilter/probably_seen"] == 1


def test_rfp_dupefilter_fetches_spellings_twice(site, tmp_path):
    _, manifest = site
    fetched, stats, port = crawl(
        site, tmp_path, "scrapy.dupefilters.RFPDupeFilter")
    rep = report("RFPDupeFilter (Scrapy's default)", fetched, stats,
                 manifest, port)
    # The known cost this package removes: spellings fetched again.
    assert len(rep) > 0
    # And the opposite error: w3lib's canonicalize_url sorts the query,
    # so ?sort=asc&page=2 and ?page=2&sort=asc, two pages of the site,
    # are one fingerprint and one of them is never fetched.
    from w3lib.url import canonicalize_url
    missing = required_pages(manifest, port) - set(fetched)
    merged = {canonicalize_url(u) for u in fetched}
    print("RFPDupeFilter: %d reachable pages never fetched: %s"
          % (len(missing), sorted(missing)))
    assert all(canonicalize_url(u) in merged for u in missing)


def test_frontier_scheduler_passes_the_checker(site, tmp_path):
    """SCHEDULER = FrontierScheduler and DUPEFILTER_CLASS =
    BloomDupeFilter, ROBOTSTXT_OBEY off (the frontier fetches and obeys
    robots.txt): examples/site/check_crawl.py passes on the crawl (every
    reachable page once, robots.txt first on each host and once, nothing
    disallowed, each spelling group once, redirects and errors
    recorded)."""
    sitedir, manifest = site
    log, out, stats, port = crawl(
        site, tmp_path, "bloomcrawl.scrapy.BloomDupeFilter",
        options=["--checker", "--scheduler",
                 "bloomcrawl.scrapy.FrontierScheduler", "--per-host", "8"])
    rc, text = sample_site.run_checker(
        sitedir, log, out, ["--scope", "domain", "--max-depth", str(DEPTH),
                            "--no-sitemaps", "--port", str(port)])
    print(text)
    print("FrontierScheduler: %s requests handed out, %s enqueued, %s "
          "filtered" % (stats.get("scheduler/dequeued"),
                        stats.get("scheduler/enqueued"),
                        stats.get("dupefilter/filtered")))
    assert rc == 0, text
    assert stats["scheduler/dequeued/bloomcrawl"] == \
        stats["scheduler/enqueued/bloomcrawl"]
