"""A Scrapy CrawlSpider over the sample site (examples/site), run by
test_scrapy_site.py in a subprocess (a Twisted reactor runs once a
process):

    python3 scrapy_site_spider.py SEED AGENT DOMAIN OUT.jsonl DUPEFILTER \
        DEPTH [JOBDIR]

Every name of the site is resolved to 127.0.0.1 (LocalResolver), so
nothing leaves the machine. Follows every link within DOMAIN, obeys
robots.txt for AGENT, goes at most DEPTH links deep, retries nothing (a
retry would be a second fetch the dupefilter did not admit). Writes one
JSON object per response to OUT.jsonl (url, status, depth) and, last,
{"stats": the crawler's stats}. With JOBDIR, Scrapy's JOBDIR setting.
SEED may be several URLs separated by spaces (start requests in that
order); the environment's SCRAPY_SITE_SETTINGS, a JSON object, adds
settings or overrides these (e.g. BLOOMCRAWL_REDIS_URL). With
SCRAPY_SITE_GO=PATH in the environment, the spider, once open, creates
PATH.ready.PID and waits (at most 60 s) for PATH to exist before its first
start request: a start barrier for several processes.
"""
import json
import os
import sys
import time

from scrapy import Request
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor
from scrapy.resolver import CachingThreadedResolver
from scrapy.spiders import CrawlSpider, Rule
from twisted.internet import defer


class LocalResolver(CachingThreadedResolver):
    """Scrapy's DNS_RESOLVER with every name at 127.0.0.1 (crawl
    --resolve does the same for examples/crawl)."""

    def getHostByName(self, name, timeout=()):
        return defer.succeed("127.0.0.1")


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
                  callback="parse_page", follow=True),)

    def __init__(self, seed, domain, out, **kw):
        self.start_urls = seed.split()
        self.allowed_domains = [domain]
        self.out = out
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
        self.out.write(json.dumps({
            "url": response.url, "status": response.status,
            "depth": response.meta.get("depth", 0)}) + "\n")
        return []


def main():
    seed, agent, domain, out_path, dupefilter = sys.argv[1:6]
    settings = {
        "DUPEFILTER_CLASS": dupefilter,
        "ROBOTSTXT_OBEY": True,
        "USER_AGENT": agent + "/1.0",
        "ROBOTSTXT_USER_AGENT": agent,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_TIMEOUT": 2,            # the site's /slow is slower
        "DOWNLOAD_MAXSIZE": 1 << 20,      # and its /huge larger
        "RETRY_ENABLED": False,
        "HTTPERROR_ALLOW_ALL": True,
        "DNS_RESOLVER": "__main__.LocalResolver",
        "DEPTH_LIMIT": int(sys.argv[6]),  # the site has a crawler trap
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    if len(sys.argv) > 7:
        settings["JOBDIR"] = sys.argv[7]
    settings.update(json.loads(os.environ.get("SCRAPY_SITE_SETTINGS", "{}")))
    with open(out_path, "w") as out:
        process = CrawlerProcess(settings)
        crawler = process.create_crawler(SiteSpider)
        process.crawl(crawler, seed=seed, domain=domain, out=out)
        process.start()
        out.write(json.dumps({"stats": {
            k: v for k, v in crawler.stats.get_stats().items()
            if isinstance(v, (int, float, str))}}) + "\n")


if __name__ == "__main__":
    main()
