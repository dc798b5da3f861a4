#!/usr/bin/env python3
"""check_crawl.py - judge a crawl of the sample site against its answer key.

    python3 examples/site/check_crawl.py --manifest SITEDIR/manifest.json \\
        --log ACCESS_LOG --out CRAWL_OUT.jsonl [--port N] [--scope domain] \\
        [--max-depth D] [--trap-limit 200] [--no-timeout-check] \\
        [--no-too-large-check] [--refetch-tolerance N]
        [--content-dups auto|on|off] [--verbose]
    python3 examples/site/check_crawl.py --manifest M --port N --resolve-args

Inputs: the manifest written by gensite.py, the access log written by
serve.py (read it after the server has exited: a /slow request is logged
when its handler ends), and the crawler's ``--out`` file: one JSON object per
fetched URL with url, status, depth, bytes, content_type, links, ms and
error when there is one (docs/DESIGN.md 5).  ``--scope`` and ``--max-depth`` must
be what the crawl was run with.  The port is read from the log's Host
headers unless ``--port`` gives it.  ``--resolve-args`` prints the crawler
flags that map every host of the site to 127.0.0.1, and the seed, then exits.

Exit status: 0 when every rule holds, 1 when one fails, 2 on a usage error
or unreadable input.  A summary line per rule goes to stdout, with the first
offending URLs of a failed rule.

The rules, and why each is fair
-------------------------------
Records of the --out file:

 O1 well-formed: every line is a JSON object with url (string), status,
    depth, bytes (integers), content_type (string or null), links (integer
    or list), ms (number), error (string, optional).  docs/DESIGN.md 5 is the
    contract; a test can only rely on what is written down.
 O2 canonical: every url is its own normalization (docs/DESIGN.md 3.1).  The
    crawler fetches the fetch URL, so it must report that form.
    Records for robots.txt, if the crawler writes any, are set aside: the
    out file is about pages, robots.txt is bookkeeping (they still must
    agree with the log, rule L2).
 O3 once: no url appears twice.  The point of the seen-test.
 O4 complete: every page the manifest says is reachable in --scope (from
    the seed, through followable links and redirects, through pages that
    robots.txt allows, outside the trap) is fetched; with --max-depth D,
    only pages whose shortest depth is <= D are required (one whose shortest
    path is longer cannot have been reached).
 O5 nothing else: every url is either such a page or under the trap
    prefix.  A url that is robots-disallowed, must-not-fetch (script,
    comment, nofollow-only, <base> decoy, non-link, inside a non-HTML body),
    out of scope, or unknown is reported with the reason.
 O6 outcome: html and file pages have status 200 and the manifest's
    content type (media type compared, parameters ignored); 404 and 500
    pages have their status; a redirect has its 3xx status; /slow and /huge
    have an error (the crawler's timeout and body limit must be below
    --slow-seconds and --huge-bytes; --no-timeout-check /
    --no-too-large-check relax this for runs with generous limits).
    Non-HTML bodies are not parsed: their links is 0 (or []).
 O7 each error kind shows: at least one 404, one 500, one timeout and one
    too-large record (when the scope reaches them).
 O8 redirects go through the seen-test: every redirect fetched has its
    target fetched (if the target is in scope, allowed and not the trap),
    and a loop (A -> B -> A) ends with A and B fetched once each.  (Follows
    from O3 and O4; reported apart so a failure says what went wrong.)
 O9 spellings merged: for every equivalence group (spellings of one URL
    on the site) whose canonical URL is required, it was fetched exactly
    once.  (Also follows from O3-O5; reported apart.)
 O10 the trap is bounded: fewer than --trap-limit fetches under the trap
    prefix.  Any finite number is correct; the crawl must stop, which it
    did if the out file is complete.
 O11 depth: with --max-depth D every record has 0 <= depth <= D; the seed
    has depth 0.

 --refetch-tolerance N is for a crawl that was killed (SIGKILL, a write
    error) and resumed from its state (crawl --state DIR): a transfer in
    flight at a kill was never committed, so the resumed crawl fetches it
    again -- at most --concurrency transfers per kill.  The access log may
    then hold a request more than once: a page, or a host's robots.txt.
    Such repeats only count against N (L3 fails beyond N) and their number
    is printed as "refetched after a kill: P pages, R robots.txt".  The out
    file still holds each URL once: a record written after the last commit
    is cut on resume, so a page whose first fetch was lost to a kill has the
    one record of the fetch that was committed.  Hence O3 is unchanged; L2
    asks for robots.txt first on each host, at least once; L4 still fails
    on two spellings of one resource; L7 counts each page request once.

 --lossy is for a crawl run on purpose with a Bloom filter far too small and
    an LRU too small to stay complete: PROBABLY_SEEN verdicts then skip some
    new pages (Bloom semantics, docs/DESIGN.md 2.4).  O4, O7, O8 and O9 only warn
    about pages not fetched (their number is the loss); every other rule,
    fetched-once above all, still holds: a false positive can lose a page,
    never fetch one twice.

Content duplicates (the manifest's content_duplicates: groups of URLs
that serve one content under URLs no normalization can merge - session
IDs in the path, a print version, a timestamp or a banner, a soft 404,
/docs/ and /docs/index.html), judged from --out's duplicate_of and
near_duplicate_of when the crawler writes them (--content-dups auto, the
default: some record has one of them; on: always; off: never; a crawler
that reports neither, as Scrapy's output, is not judged):

 D1 reported: of a group's pages the crawl fetched, at most one (the
    first fetched, the original) has neither duplicate_of nor
    near_duplicate_of.  Which one is first depends on the crawl's order,
    so the rule does not name it.  A group marked "may_miss" in the
    manifest (a copy no fingerprint can catch: too little text, or its
    own URL in it) is not judged here; how many of its copies were
    reported is printed.
 D2 nothing unrelated: every page reported as a copy is a copy of a page
    of its own group.  A page said to be a near-duplicate of an unrelated
    page fails, as does one outside every group.

The server's access log (the server's own account, independent of what the
crawler says about itself):

 L1 every request names a host of the site (Host header, any case, with
    the server's port).  Anything else means the crawler sent a wrong Host.
 L2 robots.txt first: each host that got any request got exactly one
    robots.txt request, before any other request to it.  (docs/DESIGN.md 3.3:
    a host's URLs are not handed out before its robots.txt outcome is
    known; the 24 h cache means once per crawl.)
 L3 no request target twice per host, byte for byte, but for the retries
    of a URL after transient faults: a URL whose --out record says
    "retries": N may be requested up to N + 1 times (its attempts that
    reached the server).
 L4 no resource twice per host under two spellings: targets are
    normalized (docs/DESIGN.md 3.1) before counting.  This is the check that
    normalization really merged what it had to: the server answers every
    spelling, so a missed merge shows up here as a second request.
 L5 request targets are canonical (the crawler sends its fetch URL).
 L6 nothing robots.txt disallows for the manifest's agent was requested
    (robots.txt itself excepted), judged again from the rules themselves,
    not only from the manifest's list; nothing must-not-fetch requested.
 L7 the log and the out file agree: the same set of URLs, and the number of
    non-robots requests, retries set aside (L3), equals the number of
    (non-robots) out records.
 L8 every request uses one User-Agent, and it contains the manifest's
    agent token (robots.txt was judged for that token).  Only a warning if
    the token is missing, since the crawl may have been run on purpose with
    another agent.
 L9 sitemaps (unless --no-sitemaps): every host that got a request got
    one request for each sitemap the manifest lists for it in this scope
    (hosts.H.sitemap_fetches: the robots.txt Sitemap: lines, or
    /sitemap.xml, and the sitemaps of their indexes, each once, however
    often an index names itself or another), after its robots.txt.  Those
    requests are not pages: they are set aside from L3-L7 (as robots.txt
    is from O2-O3), and the sitemap files are not pages for O4/O5.

Sitemaps change what is reachable (unless --no-sitemaps): the pages a
sitemap lists (pages.U.sitemap_listed names the scopes) are admitted at
depth 0, so pages.U.depth_sitemaps is the reachable set; O4 requires a
listed page, a page links reach within --max-depth (the seen-test keeps
its first admission, which may be by a link), and a page only listed
pages lead to, within --max-depth of them.
"""

import argparse
import collections
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sitelib  # noqa: E402
from sitelib import normalize, split_url, with_port  # noqa: E402

SHOW = 10  # offending items shown per failed rule


class Report:
    def __init__(self, verbose):
        self.rows, self.failed, self.verbose = [], False, verbose

    def rule(self, name, desc, bad, note="", soft=False):
        """bad: list of strings describing violations; soft: only warn."""
        ok = not bad
        self.failed |= not ok and not soft
        print("%-4s %-4s %s%s" % ("ok" if ok else "warn" if soft else "FAIL",
                                  name, desc,
                                  (" (%s)" % note) if note else ""))
        for b in bad[:len(bad) if self.verbose else SHOW]:
            print("           " + b)
        if len(bad) > SHOW and not self.verbose:
            print("           ... and %d more" % (len(bad) - SHOW))

    def warn(self, text):
        print("warn      " + text)


def load_manifest(path, port):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return json.loads(with_port(text, port))


def read_jsonl(path, what):
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append((n, json.loads(line)))
            except ValueError:
                rows.append((n, line.rstrip("\n")))
    return rows


def port_from_log(log):
    for _, rec in log:
        if isinstance(rec, dict):
            m = re.search(r":(\d+)$", rec.get("host", ""))
            if m:
                return int(m.group(1))
    return None


def mediatype(ct):
    return (ct or "").split(";")[0].strip().lower()


def is_robots(url):
    try:
        return split_url(url)[3] == "/robots.txt"
    except (sitelib.URLError, TypeError):
        return False


def check(a):
    try:
        log = read_jsonl(a.log, "log")
        out = read_jsonl(a.out, "out")
        with open(a.manifest, encoding="utf-8"):
            pass
    except OSError as e:
        print("check_crawl: %s" % e, file=sys.stderr)
        return 2
    port = a.port or port_from_log(log)
    if port is None:
        print("check_crawl: no port (empty log?): give --port",
              file=sys.stderr)
        return 2
    m = load_manifest(a.manifest, port)
    scope, D = a.scope, a.max_depth
    tol = a.refetch_tolerance
    rep = Report(a.verbose)
    trap = m["trap"]["prefix"]
    pages = m["pages"]
    if a.no_sitemaps:
        in_scope = {u for u, e in pages.items()
                    if e["depth"][scope] is not None}
        required = {u for u in in_scope
                    if D is None or pages[u]["depth"][scope] <= D}
    else:
        # Following sitemaps: a page a sitemap lists is admitted at depth
        # 0, and so is reached whatever its links' depth; one that links
        # also reach may be admitted at its link depth first (the
        # seen-test keeps the first), so it is required as links require
        # it; one that only sitemap-listed pages lead to, at its depth
        # from them.
        in_scope = {u for u, e in pages.items()
                    if e["depth_sitemaps"][scope] is not None}
        required = {u for u in in_scope if D is None or scope in pages[u][
            "sitemap_listed"] or (pages[u]["depth"][scope] is not None and
                                  pages[u]["depth"][scope] <= D) or
            (pages[u]["depth"][scope] is None and
             pages[u]["depth_sitemaps"][scope] <= D)}
    sitemap_paths = {} if a.no_sitemaps else {
        h: e.get("sitemap_fetches", {}).get(scope, [])
        for h, e in m["hosts"].items()}

    def depth_of(u):
        d = pages[u]["depth"][scope]
        return d if d is not None else pages[u]["depth_sitemaps"][scope]
    hosts = set(m["hosts"])
    robots = {h: sitelib.Robots(e["robots"]["text"])
              for h, e in m["hosts"].items() if e["robots"].get("text")}
    agent = m["agent"]
    print("check_crawl: scope %s, port %d, max depth %s: %d pages required, "
          "%d out records, %d log requests" % (
              scope, port, D if D is not None else "-", len(required),
              len(out), len(log)))

    def why_unexpected(url):
        if url in m["disallowed"]:
            return "robots.txt: " + m["disallowed"][url]["rule"]
        if url in m["must_not_fetch"]:
            return "must not fetch: " + m["must_not_fetch"][url]
        if url in pages:
            return "out of scope %s" % scope
        return "not linked from any page of the site"

    # -- O1 / O2 / O3 --------------------------------------------------------
    bad1, bad2, recs = [], [], []
    for n, r in out:
        if not isinstance(r, dict):
            bad1.append("line %d: not JSON: %.60s" % (n, r))
            continue
        probs = []
        for k, types in (("url", str), ("status", int), ("depth", int),
                         ("bytes", int), ("links", (int, list)),
                         ("ms", (int, float))):
            if k not in r or not isinstance(r[k], types) or \
                    isinstance(r[k], bool):
                probs.append(k)
        if "content_type" not in r or not isinstance(r["content_type"],
                                                     (str, type(None))):
            probs.append("content_type")
        if "error" in r and not isinstance(r["error"], (str, type(None))):
            probs.append("error")
        if probs:
            bad1.append("line %d: bad or missing %s" % (n, ", ".join(probs)))
            if "url" in probs:
                continue
        try:
            canon = normalize(r["url"])
        except sitelib.URLError as e:
            canon = None
            bad2.append("line %d: %s: %s" % (n, r["url"], e))
        if canon is not None and canon != r["url"]:
            bad2.append("line %d: %s is not canonical (%s)" % (
                n, r["url"], canon))
        recs.append(r)
    rep.rule("O1", "out records well-formed", bad1)
    rep.rule("O2", "out URLs canonical", bad2)
    robots_recs = [r for r in recs if is_robots(r["url"])]
    recs = [r for r in recs if not is_robots(r["url"])]
    count = collections.Counter(r["url"] for r in recs)
    rep.rule("O3", "every URL fetched once",
             ["%s fetched %d times" % (u, c) for u, c in sorted(count.items())
              if c > 1], "%d distinct" % len(count))
    byurl = {r["url"]: r for r in recs}
    got = set(byurl)

    # -- O4 / O5 -------------------------------------------------------------
    missing = sorted(required - got)
    rep.rule("O4", "every reachable allowed page fetched",
             ["%s (%s, depth %d)" % (u, pages[u]["kind"], depth_of(u))
              for u in missing], "%d of %d" % (len(required) - len(missing),
                                               len(required)), soft=a.lossy)
    extra = sorted(u for u in got - in_scope if not u.startswith(trap))
    rep.rule("O5", "nothing fetched beyond the reachable set and the trap",
             ["%s: %s" % (u, why_unexpected(u)) for u in extra])

    # -- O6 ------------------------------------------------------------------
    bad = []
    for u in sorted(got & in_scope):
        e, r = pages[u], byurl[u]
        k = e["kind"]
        if k in ("html", "file"):
            if r["status"] != 200:
                bad.append("%s: status %s, expected 200" % (u, r["status"]))
            elif mediatype(r.get("content_type")) != mediatype(
                    e.get("content_type")):
                bad.append("%s: content type %r, expected %r" % (
                    u, r.get("content_type"), e.get("content_type")))
            if k == "file" and r.get("links") not in (0, [], None):
                bad.append("%s: %s body parsed for links (%r)" % (
                    u, e.get("content_type"), r.get("links")))
        elif k in ("not_found", "server_error", "redirect"):
            if r["status"] != e["status"]:
                bad.append("%s: status %s, expected %s" % (
                    u, r["status"], e["status"]))
        elif k == "timeout" and not a.no_timeout_check:
            if not r.get("error"):
                bad.append("%s: no error reported (expected a timeout)" % u)
        elif k == "too_large" and not a.no_too_large_check:
            if not r.get("error"):
                bad.append("%s: no error reported (expected the body limit)"
                           % u)
    rep.rule("O6", "status, content type and error of each page", bad)

    # -- O7 ------------------------------------------------------------------
    bad = []
    for kind, test in (("not_found", lambda r: r["status"] == 404),
                       ("server_error", lambda r: r["status"] == 500),
                       ("timeout", lambda r: bool(r.get("error"))),
                       ("too_large", lambda r: bool(r.get("error")))):
        if kind == "timeout" and a.no_timeout_check:
            continue
        if kind == "too_large" and a.no_too_large_check:
            continue
        want = [u for u in m["expected_errors"][kind] if u in required]
        if want and not any(u in byurl and test(byurl[u]) for u in want):
            bad.append("no %s reported (expected on %s)" % (kind, want[0]))
    errs = collections.Counter(
        "error" if r.get("error") else str(r["status"]) for r in recs
        if r.get("error") or r["status"] >= 400)
    rep.rule("O7", "each error kind reported (404, 500, timeout, too large)",
             bad, ", ".join("%s: %d" % kv for kv in sorted(errs.items())),
             soft=a.lossy)

    # -- O8 ------------------------------------------------------------------
    bad = []
    for u, rd in sorted(m["redirects"].items()):
        if u not in got:
            continue
        t = rd["target"]
        if t in in_scope and (D is None or depth_of(t) <= D) \
                and t not in got:
            bad.append("%s -> %s: target not fetched" % (u, t))
        if t in m["disallowed"] and t in got:
            bad.append("%s -> %s: disallowed target fetched" % (u, t))
    loops = [u for u, rd in m["redirects"].items()
             if rd["target"] in m["redirects"]
             and m["redirects"][rd["target"]]["target"] == u]
    rep.rule("O8", "redirect targets fetched through the seen-test", bad,
             "%d redirects fetched, loop %s" % (
                 len(got & set(m["redirects"])),
                 "ended" if all(count[x] <= 1 for x in loops) else "REPEATED"),
             soft=a.lossy)

    # -- O9 ------------------------------------------------------------------
    bad, n = [], 0
    for g in m["equivalence_groups"]:
        c = g["canonical"]
        if c in required:
            n += 1
            if count[c] > 1 or (count[c] == 0 and not a.lossy):
                bad.append("%s fetched %d times (spellings: %s)" % (
                    c, count[c], ", ".join(repr(s["href"])
                                           for s in g["spellings"][:4])))
    rep.rule("O9", "each group of spellings fetched once", bad,
             "%d groups" % n, soft=a.lossy)

    # -- O10 / O11 -----------------------------------------------------------
    ntrap = sum(1 for u in got if u.startswith(trap))
    rep.rule("O10", "the trap is bounded",
             [] if ntrap < a.trap_limit else
             ["%d fetches under %s, limit %d" % (ntrap, trap, a.trap_limit)],
             "%d trap pages fetched" % ntrap)
    bad = []
    for r in recs:
        d = r.get("depth")
        if not isinstance(d, int):
            continue
        if d < 0 or (D is not None and d > D):
            bad.append("%s: depth %d" % (r["url"], d))
        if r["url"] in m["seeds"] and d != 0:
            bad.append("%s: a seed at depth %d" % (r["url"], d))
    rep.rule("O11", "depths within the limit", bad)

    # -- D1 / D2: content duplicates -------------------------------------
    groups = m.get("content_duplicates", [])
    said = {r["url"]: r.get("duplicate_of", r.get("near_duplicate_of"))
            for r in recs if "duplicate_of" in r or "near_duplicate_of" in r}
    on = a.content_dups == "on" or (a.content_dups == "auto" and said)
    if on and groups:
        group_of = {u: i for i, g in enumerate(groups) for u in g["urls"]}
        bad, may = [], []
        for g in groups:
            fetched = [u for u in g["urls"] if u in got]
            plain = [u for u in fetched if u not in said]
            if g.get("may_miss"):
                may.append("%s %d of %d" % (g["kind"],
                                            len(fetched) - len(plain),
                                            max(len(fetched) - 1, 0)))
            elif len(plain) > 1:
                bad.append("%s: %s fetched, reported as no copy"
                           % (g["kind"], ", ".join(plain[1:])))
        judged = sum(1 for g in groups if not g.get("may_miss"))
        rep.rule("D1", "content duplicates reported", bad,
                 "%d groups" % judged +
                 ("; copies reported of those that may be missed: " +
                  ", ".join(may) if may else ""))
        bad = []
        for u, of in sorted(said.items()):
            if not isinstance(of, str) or group_of.get(u) is None or \
                    group_of.get(u) != group_of.get(of):
                bad.append("%s: reported a copy of %s, not of its content"
                           % (u, of))
        rep.rule("D2", "no unrelated page reported a copy", bad)
    elif groups:
        rep.warn("D1, D2 not checked: no --out record has duplicate_of or "
                 "near_duplicate_of (--content-dups on checks anyway)"
                 if a.content_dups == "auto" else
                 "D1, D2 not checked (--content-dups off)")

    # -- the access log ------------------------------------------------------
    bad1, reqs = [], []
    for n, rec in log:
        if not isinstance(rec, dict):
            bad1.append("log line %d: not JSON" % n)
            continue
        hh = rec.get("host", "")
        mh = re.fullmatch(r"(.*?)(?::(\d+))?", hh)
        host = mh.group(1).lower().rstrip(".")
        hport = int(mh.group(2)) if mh.group(2) else 80
        if host not in hosts or hport != port:
            bad1.append("log line %d: Host %r for %s" % (n, hh,
                                                         rec.get("path")))
            continue
        reqs.append((n, host, rec))
    rep.rule("L1", "every request names a host of the site", bad1)
    # The log is written as answers are sent; "start" is when a request
    # arrived, the order the crawler asked in (L2). A line without one
    # keeps its place after the line before it.
    order, last = [], 0.0
    for x in reqs:
        last = x[2].get("start", last)
        order.append((last, x))
    reqs = [x for _, x in sorted(order, key=lambda o: o[0])]

    # L9: a crawl that follows sitemaps requests each sitemap the manifest
    # lists for a host it contacts, once; they are not pages.
    sm_reqs = [(n, h, r) for n, h, r in reqs
               if r.get("path") in sitemap_paths.get(h, ())]
    reqs = [x for x in reqs if x not in sm_reqs]
    bad = []
    sm_count = collections.Counter((h, r.get("path")) for _, h, r in sm_reqs)
    contacted = {h for _, h, _ in reqs}
    sm_repeats = 0
    for h in sorted(contacted):
        for path in sitemap_paths.get(h, ()):
            c = sm_count[(h, path)]
            if tol is not None and c > 1:
                sm_repeats += c - 1
            elif c != 1:
                bad.append("%s %s: sitemap requested %d times" % (h, path, c))
    if not a.no_sitemaps:
        rep.rule("L9", "each sitemap of a contacted host requested %s" % (
            "once" if tol is None else "at least once"), bad,
                 "%d sitemap requests" % len(sm_reqs))

    bad = []
    by_host = collections.defaultdict(list)
    for n, host, rec in reqs:
        by_host[host].append(rec)
    robots_repeats = 0
    for host, rs in sorted(by_host.items()):
        rob = [i for i, r in enumerate(rs) if r.get("path") == "/robots.txt"]
        if rob and tol is not None:
            robots_repeats += len(rob) - 1
        elif len(rob) != 1:
            bad.append("%s: robots.txt requested %d times" % (host, len(rob)))
        if rob and rob[0] != 0:
            bad.append("%s: %s requested before robots.txt" % (
                host, rs[0].get("path")))
        if not rob:
            continue
    rep.rule("L2", "robots.txt %s per host, before anything else" % (
        "once" if tol is None else "at least once"), bad,
             "hosts: %s" % ", ".join(sorted(by_host)))

    pagereqs = [(n, h, r) for n, h, r in reqs
                if r.get("path") != "/robots.txt"]
    raw = collections.Counter((h, r.get("path")) for _, h, r in pagereqs)
    # A URL retried after a transient fault (its record's "retries": N)
    # may be requested up to N + 1 times: its attempts that reached the
    # server (a refused connection never does).
    retried = {}
    for (h, p), c in raw.items():
        rec = byurl.get("http://%s:%d%s" % (h, port, p))
        allowed = rec.get("retries", 0) if rec else 0
        if isinstance(allowed, int) and allowed > 0 and c > 1:
            retried[(h, p)] = min(c - 1, allowed)
    retry_repeats = sum(retried.values())
    twice = ["%s %s requested %d times" % (h, p, c)
             for (h, p), c in sorted(raw.items())
             if c - retried.get((h, p), 0) > 1]
    page_repeats = sum(c - 1 - retried.get(k, 0) for k, c in raw.items())
    if tol is None:
        rep.rule("L3", "no request target twice per host", twice)
    else:
        n = page_repeats + robots_repeats + sm_repeats
        rep.rule("L3", "request targets repeated only within the refetch "
                 "tolerance", [] if n <= tol else
                 ["%d repeated requests, tolerance %d" % (n, tol)] + twice,
                 "refetched after a kill: %d pages, %d robots.txt; "
                 "tolerance %d" % (page_repeats, robots_repeats, tol))
    canon = collections.defaultdict(list)
    bad5 = []
    for n, h, r in pagereqs:
        p = r.get("path", "")
        try:
            c = sitelib.normalize_target(p)
        except sitelib.URLError as e:
            bad5.append("log line %d: %s: %s" % (n, p, e))
            continue
        canon[(h, c)].append(p)
        if c != p:
            bad5.append("log line %d: %s%s is not canonical (%s)" % (
                n, h, p, c))
    # (a spelling repeated by the retries of L3 is one spelling)
    rep.rule("L4", "no resource twice per host under two spellings",
             ["%s %s as %s" % (h, c, ", ".join(ps))
              for (h, c), ps in sorted(canon.items())
              if len(set(ps) if tol is not None or
                     any((h, p) in retried for p in ps) else ps) > 1])
    rep.rule("L5", "request targets canonical", bad5)

    bad = []
    for (h, c), ps in sorted(canon.items()):
        url = "http://%s:%d%s" % (h, port, c)
        rb = robots.get(h)
        if rb is not None and not rb.allowed(agent, c):
            rule = rb.rule_for(agent, c)
            bad.append("%s: robots.txt %s: %s" % (
                url, "Allow" if rule[0] else "Disallow", rule[1]))
        elif url in m["must_not_fetch"]:
            bad.append("%s: %s" % (url, m["must_not_fetch"][url]))
    rep.rule("L6", "nothing disallowed or must-not-fetch requested", bad)

    logged = {"http://%s:%d%s" % (h, port, c) for (h, c) in canon}
    bad = ["in the log, not in --out: %s" % u for u in sorted(logged - got)]
    bad += ["in --out, not in the log: %s" % u for u in sorted(got - logged)]
    once = (len(pagereqs) - retry_repeats -
            (0 if tol is None else page_repeats))
    if once != len(recs):
        bad.insert(0, "%d non-robots requests in the log%s, %d out records"
                   % (once, "" if tol is None else " (repeats counted once)",
                      len(recs)))
    for r in robots_recs:
        h = split_url(r["url"])[1]
        if not any(x.get("path") == "/robots.txt" for x in by_host.get(h, [])):
            bad.append("robots.txt of %s in --out, not in the log" % h)
    rep.rule("L7", "the log and --out agree", bad,
             "%d requests (%d of them retries), %d records"
             % (len(pagereqs), retry_repeats, len(recs)))

    uas = collections.Counter(r.get("ua", "") for _, _, r in reqs)
    rep.rule("L8", "one User-Agent for the whole crawl",
             [] if len(uas) <= 1 else ["%r: %d requests" % kv
                                        for kv in uas.most_common()],
             next(iter(uas)) if len(uas) == 1 else "")
    if uas and not any(agent.lower() in ua.lower() for ua in uas):
        rep.warn("no User-Agent contains %r: robots.txt was judged for %r"
                 % (agent, agent))

    print("check_crawl: %s" % ("FAIL" if rep.failed else "PASS"))
    return 1 if rep.failed else 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Check a crawl of the sample site (see the docstring "
                    "for every rule).")
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--log", help="serve.py's access log")
    ap.add_argument("--out", help="the crawler's --out JSON lines")
    ap.add_argument("--port", type=int, help="default: from the log")
    ap.add_argument("--scope", choices=("host", "domain", "any"),
                    default="domain")
    ap.add_argument("--max-depth", type=int)
    ap.add_argument("--no-sitemaps", action="store_true",
                    help="the crawl ran with --no-sitemaps: only links "
                         "reach pages, and no sitemap is requested")
    ap.add_argument("--trap-limit", type=int, default=200)
    ap.add_argument("--no-timeout-check", action="store_true")
    ap.add_argument("--no-too-large-check", action="store_true")
    ap.add_argument("--lossy", action="store_true",
                    help="the seen-test may skip pages (a Bloom filter "
                         "sized too small): missing pages only warn")
    ap.add_argument("--refetch-tolerance", type=int, metavar="N",
                    help="the crawl was killed and resumed: at most N "
                         "requests (pages or robots.txt) may repeat an "
                         "earlier one (in flight at a kill)")
    ap.add_argument("--content-dups", choices=("auto", "on", "off"),
                    default="auto",
                    help="rules D1 and D2; auto: when some --out record "
                         "has duplicate_of or near_duplicate_of")
    ap.add_argument("--resolve-args", action="store_true",
                    help="print --resolve flags and the seed, then exit")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="list every offending item")
    a = ap.parse_args(argv)
    if a.resolve_args:
        if not a.port:
            ap.error("--resolve-args needs --port")
        m = load_manifest(a.manifest, a.port)
        print(" ".join(["--resolve %s:%d:127.0.0.1" % (h, a.port)
                        for h in m["hosts"]] + m["seeds"]))
        return 0
    if not a.log or not a.out:
        ap.error("--log and --out are required")
    if a.refetch_tolerance is not None and a.refetch_tolerance < 0:
        ap.error("--refetch-tolerance must be >= 0")
    return check(a)


if __name__ == "__main__":
    sys.exit(main())
