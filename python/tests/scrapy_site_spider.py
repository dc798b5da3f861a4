"""A Scrapy CrawlSpider over the sample site (examples/site), run by
test_scrapy_site.py in a subprocess (a Twisted reactor runs once a
process):

    python3 scrapy_site_spider.py SEED AGENT DOMAIN OUT.jsonl DUPEFILTER \
        DEPTH [JOBDIR] [--scheduler CLASS] [--checker] [--delay S] \
        [--per-host N] [--concurrency N] [--set NAME=JSON ...]

Every name of the site is resolved to 127.0.0.1 (LocalResolver), so
nothing leaves the machine. Follows every link within DOMAIN, obeys
robots.txt for AGENT, goes at most DEPTH links deep, retries nothing (a
retry would be a second fetch the dupefilter did not admit). Writes one
JSON object per response to OUT.jsonl (url, status, depth) and, last,
{"stats": the crawler's stats} (--checker: to OUT.jsonl.stats). With
JOBDIR, Scrapy's JOBDIR setting.
SEED may be several URLs separated by spaces (start requests in that
order); the environment's SCRAPY_SITE_SETTINGS, a JSON object, adds
settings or overrides these (e.g. BLOOMCRAWL_REDIS_URL; --set comes
last). With SCRAPY_SITE_GO=PATH in the environment, the spider, once
open, creates PATH.ready.PID and waits (at most 60 s) for PATH to exist
before its first start request: a start barrier for several processes.

--scheduler: Scrapy's SCHEDULER (bloomcrawl.scrapy.FrontierScheduler:
then robots.txt is the frontier's, ROBOTSTXT_OBEY is off, and --delay
and --per-host are BLOOMCRAWL_DELAY and BLOOMCRAWL_PER_HOST).
--checker: the output is what examples/site/check_crawl.py reads (one
record per request sent: url, status, depth, bytes, content_type, links
0, ms, and error for a failed download); redirects are not followed by
Scrapy's RedirectMiddleware but recorded with their 3xx status and their
Location followed as a link (the site's checker counts a redirect as a
page); links are extracted by bloomcrawl.links (BloomLinkExtractor).
The output file is opened for appending, so the records of a crawl
killed and resumed add up.
--concurrency: CONCURRENT_REQUESTS (and _PER_DOMAIN), 16 by default.
--set NAME=JSON: any Scrapy setting (last, over the above).
"""
import json
import os
import sys
import time

from scrapy import Request
from scrapy.crawler import CrawlerProcess
from scrapy.http import HtmlResponse
from scrapy.link import Link
from scrapy.linkextractors import LinkExtractor
from scrapy.resolver import CachingThreadedResolver
from scrapy.spiders import CrawlSpider, Rule
from twisted.internet import defer

import bloomcrawl


class LocalResolver(CachingThreadedResolver):
    """Scrapy's DNS_RESOLVER with every name at 127.0.0.1 (crawl
    --resolve does the same for examples/crawl)."""

    def getHostByName(self, name, timeout=()):
        return defer.succeed("127.0.0.1")


class BloomLinkExtractor:
    """A LinkExtractor (extract_links(response) -> [Link]) on
    bloomcrawl.links, the extractor examples/crawl uses and the site's
    checker describes: <a>, <area>, <iframe src>, <link href> but
    stylesheets, <base href> honoured, rel=nofollow and <meta robots
    nofollow> left out, a "\\" in an href read as "/" (as browsers do;
    w3lib's joining sends it as %5C)."""

    def extract_links(self, response):
        if not isinstance(response, HtmlResponse):
            return []
        return [Link(u) for u in bloomcrawl.links(response.body,
                                                   response.url)]


class SiteSpider(CrawlSpider):
    name = "site"
    # The links the site's checker counts as followable: <a>, <area>,
    # <iframe src>, <link href>, whatever the extension (.pdf too); not
    # deduplicated per page (unique=True would merge a page's links by
    # w3lib's canonicalize_url, which sorts the query: ?b=1&a=2 and
    # ?a=2&b=1 are two pages on this site), so the dupefilter decides.
    rules = (Rule(LinkExtractor(tags=("a", "area", "iframe", "link"),
                                attrs=("href", "src"), deny_extensions=(),
                                unique=False),
                  callback="parse_page", follow=True, errback="failed"),)

    def __init__(self, seed, domain, out, checker=False, **kw):
        self.start_urls = seed.split()
        self.allowed_domains = [domain]
        self.out = out
        self.checker = checker
        if checker:
            self.rules = (Rule(BloomLinkExtractor(), callback="parse_page",
                               follow=True, errback="failed"),)
        super().__init__(**kw)

    def start_requests(self):
        go = os.environ.get("SCRAPY_SITE_GO")
        if go:
            open("%s.ready.%d" % (go, os.getpid()), "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.01)
        # Scrapy's start requests are dont_filter=True: they bypass any
        # dupefilter, and the seed, linked again from the site, would be
        # fetched twice. Through the dupefilter, it is fetched once.
        for url in self.start_urls:
            yield Request(url, dont_filter=False)

    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        record = {"url": response.url, "status": response.status,
                  "depth": response.meta.get("depth", 0)}
        if not self.checker:
            self.out.write(json.dumps(record) + "\n")
            return []
        ctype = response.headers.get("Content-Type")
        record.update(bytes=len(response.body), links=0,
                      content_type=ctype.decode("latin-1") if ctype
                      else None,
                      ms=round(1000 * response.meta.get("download_latency",
                                                        0), 1))
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()
        location = response.headers.get("Location")
        if 300 <= response.status < 400 and location:
            # As CrawlSpider builds the requests of its links.
            return [self._build_request(0, Link(response.urljoin(
                location.decode("latin-1"))))]
        return []

    def failed(self, failure):
        request = failure.request
        self.out.write(json.dumps({
            "url": request.url, "status": 0,
            "depth": request.meta.get("depth", 0), "bytes": 0,
            "content_type": None, "links": 0, "ms": 0,
            "error": failure.getErrorMessage() or repr(failure.value)}) +
            "\n")
        self.out.flush()


def main():
    args, opts, i = [], {}, 1
    sets = {}
    while i < len(sys.argv):
        a = sys.argv[i]
        if a == "--checker":
            opts[a] = True
        elif a == "--set":
            name, _, value = sys.argv[i + 1].partition("=")
            sets[name] = json.loads(value)
            i += 1
        elif a.startswith("--"):
            opts[a] = sys.argv[i + 1]
            i += 1
        else:
            args.append(a)
        i += 1
    seed, agent, domain, out_path, dupefilter = args[:5]
    concurrency = int(opts.get("--concurrency", 16))
    settings = {
        "DUPEFILTER_CLASS": dupefilter,
        "ROBOTSTXT_OBEY": True,
        "USER_AGENT": agent + "/1.0",
        "ROBOTSTXT_USER_AGENT": agent,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_TIMEOUT": 2,            # the site's /slow is slower
        "DOWNLOAD_MAXSIZE": 1 << 20,      # and its /huge larger
        "RETRY_ENABLED": False,
        "HTTPERROR_ALLOW_ALL": True,
        "DNS_RESOLVER": "__main__.LocalResolver",
        "DEPTH_LIMIT": int(args[5]),  # the site has a crawler trap
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    if len(args) > 6:
        settings["JOBDIR"] = args[6]
    if "--scheduler" in opts:
        settings["SCHEDULER"] = opts["--scheduler"]
        if "FrontierScheduler" in opts["--scheduler"]:
            settings["ROBOTSTXT_OBEY"] = False
            settings["BLOOMCRAWL_DELAY"] = float(opts.get("--delay", 0))
            settings["BLOOMCRAWL_PER_HOST"] = int(opts.get("--per-host", 4))
    checker = "--checker" in opts
    if checker:
        settings["REDIRECT_ENABLED"] = False
    settings.update(json.loads(os.environ.get("SCRAPY_SITE_SETTINGS", "{}")))
    settings.update(sets)
    with open(out_path, "a" if checker else "w") as out:
        process = CrawlerProcess(settings)
        crawler = process.create_crawler(SiteSpider)
        process.crawl(crawler, seed=seed, domain=domain, out=out,
                      checker=checker)
        process.start()
    stats = json.dumps({"stats": {
        k: v for k, v in crawler.stats.get_stats().items()
        if isinstance(v, (int, float, str))}}) + "\n"
    # The checker reads records only: there, the stats go beside.
    with open(out_path + ".stats" if checker else out_path, "a") as f:
        f.write(stats)


if __name__ == "__main__":
    main()
