#!/usr/bin/env bash
# scripts/demo.sh - the README's first command: watch the URL-seen pipeline
# crawl a web site.
#
#   scripts/demo.sh            crawl the bundled sample site on 127.0.0.1
#   scripts/demo.sh --workers N  the same with N crawl workers (crawl
#                              --redis) sharing a private redis-server
#   scripts/demo.sh --scrapy   crawl it with Scrapy (Debian's 2.8) and
#                              bloomcrawl's scheduler and dupefilter
#   scripts/demo.sh URL...     crawl those URLs instead, with the polite
#                              defaults (1 request at a time per host, 1 s
#                              apart, robots.txt obeyed); stop with Ctrl-C
#
# Installs what is missing, builds in build/ (Release), then for the sample
# site: generates it (examples/site/gensite.py, ~2,000 pages on three
# virtual hosts, with equivalent spellings, redirects, robots.txt, errors
# and a spider trap), serves it on a free port of 127.0.0.1, crawls it with
# settings fit for a local demo (with --listen: the URL of the live status
# page is printed first, to open in a browser), archives every transfer in
# a WARC file (build/demo/crawl.warc.gz: one gzip member per record),
# prints the crawler's report of every tier, the checker's verdict and what
# the WARC holds, and stops the server. The second crawl, with
# a filter far too small, is checked with check_crawl.py --lossy, which
# counts the pages lost. The third, with --state DIR, is killed with SIGKILL
# halfway and resumed with the same command; the checker then confirms
# every page fetched and recorded once, with the in-flight tolerance (pages
# in flight at the kill may be requested again: at most --concurrency).
# The fourth crawl loses its server: stopped for 5 s once a third of the
# pages are in, then started again on the same port; the crawl retries
# the refused fetches (its circuit breaker pauses the host) and the
# checker confirms every page fetched and recorded once.
#
# With --workers N: starts redis-server in a temporary directory (on a unix
# socket only, --port 0; append-only file), the sample site, and N crawl
# workers of one crawl (--redis, --workers N, --worker I, each its own
# --state and --out; the seed given to worker 0 only), shows crawl
# --status while they run and once they are done, then the checker's
# verdict on the union of their --out files.
#
# With --scrapy: builds the Python package (build/python), serves the
# sample site, crawls it with a Scrapy CrawlSpider
# (python/tests/scrapy_site_spider.py: every link within the site's
# domain, depth limit 8) whose settings name SCHEDULER =
# bloomcrawl.scrapy.FrontierScheduler and DUPEFILTER_CLASS =
# bloomcrawl.scrapy.BloomDupeFilter (robots.txt fetched and obeyed by the
# frontier), prints Scrapy's scheduler, dupefilter and bloomcrawl stats,
# then the checker's verdict on the server's log and the spider's output.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

workers=0
scrapy=0
if [ "${1:-}" = --scrapy ]; then
    scrapy=1
    shift
    [ $# -eq 0 ] || { echo "demo: --scrapy takes nothing more" >&2; exit 2; }
fi
if [ "${1:-}" = --workers ]; then
    workers=${2:-}
    case $workers in
    [1-9] | 1[0-6]) ;;
    *)
        echo "usage: scripts/demo.sh --workers N   (N from 1 to 16)" >&2
        exit 2
        ;;
    esac
    shift 2
    [ $# -eq 0 ] || { echo "demo: --workers N takes nothing more" >&2; exit 2; }
fi

if [ "$workers" -gt 0 ]; then
    scripts/deps.sh workers
elif [ "$scrapy" -eq 1 ]; then
    scripts/deps.sh build
    scripts/deps.sh scrapy
else
    scripts/deps.sh build
fi
echo "== building in build/" >&2
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j "$jobs" >/dev/null
bin=build/examples

if [ $# -gt 0 ]; then
    exec "$bin/crawl" "$@"
fi

demo=build/demo
[ "$workers" -gt 0 ] && demo=build/demo-workers
[ "$scrapy" -eq 1 ] && demo=build/demo-scrapy
rm -rf "$demo"
mkdir -p "$demo"
echo "== generating the sample site in $demo/site" >&2
python3 examples/site/gensite.py "$demo/site" >&2

server=
start_server() { # $1: access log (appended to), $2: a port (a free one)
    rm -f "$demo/serve.out"
    python3 examples/site/serve.py "$demo/site" --log "$1" \
        --slow-seconds 3 --huge-bytes 8MiB ${2:+--port "$2"} \
        >"$demo/serve.out" 2>/dev/null &
    server=$!
    for _ in $(seq 50); do
        grep -q '^PORT ' "$demo/serve.out" 2>/dev/null && break
        sleep 0.1
    done
    port=$(awk '/^PORT /{print $2}' "$demo/serve.out")
    [ -n "$port" ] || { echo "demo: the site server did not start" >&2; exit 1; }
    read -r -a site_args < <(python3 examples/site/check_crawl.py \
        --manifest "$demo/site/manifest.json" --port "$port" --resolve-args)
}
stop_server() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap stop_server EXIT
common=(--scope domain --max-depth 8 --concurrency 16 --per-host 4 --delay 0
    --timeout 1500 --max-body 1000000)
# A crawl of the sample site that runs to its end exits 4, "incomplete":
# the site's /error/500 and /slow fail on every try (transient faults),
# so they are given up after their retries, and the report lists them.
finished() { "$@" || [ $? -eq 4 ]; }

if [ "$workers" -gt 0 ]; then
    redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/bc_demo_redis.XXXXXX")
    sock=$redis_dir/redis.sock
    redis=
    pids=()
    stop_all() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
        stop_server
        if [ -n "$redis" ]; then
            kill "$redis" 2>/dev/null || true
            wait "$redis" 2>/dev/null || true
        fi
        rm -rf "$redis_dir"
    }
    trap stop_all EXIT
    redis-server --port 0 --unixsocket "$sock" --unixsocketperm 700 \
        --dir "$redis_dir" --save "" --appendonly yes --appendfsync always \
        --daemonize no --logfile "$redis_dir/redis.log" &
    redis=$!
    for _ in $(seq 100); do
        [ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] && break
        sleep 0.1
    done
    [ "$(redis-cli -s "$sock" ping 2>/dev/null)" = PONG ] ||
        { echo "demo: redis-server did not start" >&2; exit 1; }
    start_server "$demo/access.log"
    any=(--scope any --max-depth 8 --concurrency 8 --per-host 4 --delay 0
        --timeout 1500 --max-body 1000000)
    seed=${site_args[${#site_args[@]} - 1]}
    resolve=("${site_args[@]:0:${#site_args[@]}-1}")
    cat >&2 <<MSG
== redis-server on the unix socket $sock (no TCP: --port 0),
   append-only file in $redis_dir
== serving the sample site on 127.0.0.1:$port (virtual hosts
   www.bloomcrawl.test, blog.bloomcrawl.test, other.example)
== $workers crawl workers of one crawl, scope any (all three hosts): each
   host belongs to one worker, XXH64("http://host:$port", seed 0) mod
   $workers; links to another worker's host go to it through a Redis
   stream. Only worker 0 is given the seed.
MSG
    for ((i = 0; i < workers; i++)); do
        args=("$bin/crawl" --redis "unix:$sock" --workers "$workers"
            --worker "$i" --crawl-id demo --state "$demo/w$i.state"
            --out "$demo/w$i.jsonl" --stats-json "$demo/w$i.json" --quiet
            "${any[@]}" "${resolve[@]}")
        shown="crawl --redis unix:$sock --workers $workers --worker $i"
        shown+=" --state $demo/w$i.state --out $demo/w$i.jsonl ..."
        if [ "$i" -eq 0 ]; then
            args+=("$seed")
            shown+=" $seed"
        fi
        echo "\$ $shown" >&2
        "${args[@]}" &
        pids+=($!)
    done
    status=("$bin/crawl" --redis "unix:$sock" --crawl-id demo --status)
    sleep 1.5
    echo
    echo "== while they crawl: crawl --redis unix:$sock --crawl-id demo --status"
    "${status[@]}" | cat || true
    failed=0
    for ((i = 0; i < workers; i++)); do
        rc=0
        wait "${pids[$i]}" || rc=$?
        echo "worker $i: exit $rc"
        [ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || failed=1
    done
    pids=()
    stop_server
    echo
    echo "== once they are done: crawl --status"
    "${status[@]}" | cat || failed=1
    echo
    echo "== the hosts each worker owned and fetched (its --stats-json)"
    python3 - "$demo" "$workers" <<'PY'
import json, sys
demo, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    s = json.load(open("%s/w%d.json" % (demo, i)))
    w = s["workers"]
    print("worker %d: %d pages, hosts %s; URLs routed out %d, in %d; "
          "stream entries sent %d, acknowledged %d"
          % (i, s["pages"], ", ".join(w["hosts_owned"]) or "none",
             w["routed_out"], w["routed_in"], w["sent_entries"],
             w["acked_entries"]))
PY
    cat "$demo"/w*.jsonl >"$demo/union.jsonl"
    echo
    echo "== checking the union of their --out files against the site's answer"
    echo "   key and the server's log: every page fetched and recorded once"
    python3 examples/site/check_crawl.py --manifest "$demo/site/manifest.json" \
        --log "$demo/access.log" --out "$demo/union.jsonl" --scope any \
        --max-depth 8 || failed=1
    echo
    echo "Files: $demo/w*.jsonl (each worker's pages), $demo/w*.json (their"
    echo "counters, with \"workers\"), $demo/access.log (the server's log)."
    exit "$failed"
fi

if [ "$scrapy" -eq 1 ]; then
    [ -f build/python/bloomcrawl/__init__.py ] || {
        echo "demo: the Python package was not built (python3-cffi?)" >&2
        exit 1
    }
    start_server "$demo/access.log"
    # /usr/bin/python3: Debian's, where python3-scrapy is installed.
    py=/usr/bin/python3
    cat >&2 <<MSG
== serving the sample site on 127.0.0.1:$port
== crawling it with Scrapy: a CrawlSpider whose settings say
       SCHEDULER = "bloomcrawl.scrapy.FrontierScheduler"
       DUPEFILTER_CLASS = "bloomcrawl.scrapy.BloomDupeFilter"
       ROBOTSTXT_OBEY = False       # the frontier fetches and obeys robots.txt
       BLOOMCRAWL_DELAY = 0         # our own server: no delay,
       BLOOMCRAWL_PER_HOST = 4      # 4 requests at a time per host
       DEPTH_LIMIT = 8
\$ PYTHONPATH=build/python $py python/tests/scrapy_site_spider.py \\
    ${site_args[-1]} bloomcrawl bloomcrawl.test $demo/scrapy.jsonl \\
    bloomcrawl.scrapy.BloomDupeFilter 8 --checker \\
    --scheduler bloomcrawl.scrapy.FrontierScheduler --per-host 4
MSG
    PYTHONPATH=build/python${PYTHONPATH:+:$PYTHONPATH} "$py" \
        python/tests/scrapy_site_spider.py "${site_args[-1]}" bloomcrawl \
        bloomcrawl.test "$demo/scrapy.jsonl" \
        bloomcrawl.scrapy.BloomDupeFilter 8 --checker \
        --scheduler bloomcrawl.scrapy.FrontierScheduler --per-host 4 \
        2>"$demo/scrapy.log" || {
        tail -20 "$demo/scrapy.log" >&2
        exit 1
    }
    stop_server
    echo
    echo "== Scrapy's stats of the crawl (full log: $demo/scrapy.log)"
    "$py" - "$demo/scrapy.jsonl.stats" <<'PY'
import json, sys
stats = json.loads(open(sys.argv[1]).readline())["stats"]
for k in sorted(stats):
    if k.startswith(("scheduler/", "dupefilter/", "bloomcrawl/")) or k in (
            "response_received_count", "elapsed_time_seconds",
            "finish_reason"):
        print("  %-40s %s" % (k, stats[k]))
PY
    echo
    echo "== checking the crawl against the site's answer key and the server's log"
    "$py" examples/site/check_crawl.py --manifest "$demo/site/manifest.json" \
        --log "$demo/access.log" --out "$demo/scrapy.jsonl" --scope domain \
        --max-depth 8 --no-sitemaps
    exit
fi

start_server "$demo/access.log"
cat >&2 <<MSG
== serving the sample site on 127.0.0.1:$port (virtual hosts
   www.bloomcrawl.test, blog.bloomcrawl.test, other.example)
== crawling it: scope domain, 16 transfers (4 per host), no delay (it is
   our own server), a 1.5 s timeout and a 1 MB body limit (to meet the
   site's slow and huge pages), depth limit 8, every transfer archived
   in $demo/crawl.warc.gz
MSG
# Watch it: crawl --listen serves the live status page (GET /), /metrics
# and /status on 127.0.0.1, on a port free now. On a terminal the page
# stays up 20 s after the crawl (--listen-linger) so that there is time
# to look at the end.
listen=()
if "$bin/crawl" --help 2>&1 | grep -q -- '--listen '; then
    lport=$(python3 -c 'import socket; s = socket.socket()
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    listen=(--listen "$lport")
    [ -t 1 ] && listen+=(--listen-linger 20s)
    echo "== watch it live: open http://127.0.0.1:$lport/ in a browser" \
        "(Prometheus metrics at /metrics)" >&2
fi
cat >&2 <<MSG
\$ crawl ${common[*]} ${listen[*]} --out $demo/crawl.jsonl \\
    --warc $demo/crawl.warc.gz ${site_args[*]}
MSG
finished "$bin/crawl" "${common[@]}" "${listen[@]}" \
    --out "$demo/crawl.jsonl" --stats-json "$demo/stats.json" \
    --warc "$demo/crawl.warc.gz" "${site_args[@]}"
stop_server

echo
echo "== checking the crawl against the site's answer key and the server's log"
python3 examples/site/check_crawl.py --manifest "$demo/site/manifest.json" \
    --log "$demo/access.log" --out "$demo/crawl.jsonl" --scope domain \
    --max-depth 8

echo
echo "== the WARC archive of that crawl (ISO 28500, WARC/1.1)"
python3 - "$demo/crawl.warc.gz" "$demo/crawl.jsonl" <<'PY'
import collections, json, os, sys, zlib
path, out = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
kinds, pos, heads = collections.Counter(), 0, {}
while pos < len(data):  # one gzip member per record
    d, parts, used = zlib.decompressobj(31), [], pos
    while not d.eof and used < len(data):
        piece = data[used:used + 65536]
        parts.append(d.decompress(piece))
        used += len(piece) - len(d.unused_data)
    record = b"".join(parts)
    head = record[:record.find(b"\r\n\r\n")].decode(errors="replace")
    fields = dict(line.split(": ", 1) for line in head.split("\r\n")[1:])
    kinds[fields.get("WARC-Type", "?")] += 1
    heads[pos] = (head, record[len(head) + 4:].split(b"\r\n", 1)[0])
    pos = used
print("%s: %d bytes, %d records (%s), one gzip member each"
      % (path, len(data), sum(kinds.values()),
         ", ".join("%d %s" % (n, k) for k, n in kinds.most_common())))
seed = json.loads(open(out).readline())
for line in open(out):
    page = json.loads(line)
    if page.get("referrer") is None:  # the seed (sitemap pages have one)
        seed = page
off = seed.get("warc_offset")
if off in heads:
    head, status = heads[off]
    print("the seed page's response record, at the offset --out gives it "
          "(warc_offset %d):" % off)
    for line in head.split("\r\n"):
        print("    " + line)
    print("    (block: %s, its headers, the body as served)"
          % status.decode(errors="replace"))
PY

start_server "$demo/access-small.log"
cat >&2 <<MSG

== the same crawl with a Bloom filter sized for 300 URLs (the site has
   ~1,900) and an LRU of 600: while the LRU holds every URL it catches the
   filter's false positives; once it evicts, "maybe" can no longer be
   disproved, URLs come out PROBABLY_SEEN and pages are lost - but still
   none is fetched twice.
\$ crawl ... --expect 300 --fp-rate 0.01 --lru 600
MSG
finished "$bin/crawl" "${common[@]}" --expect 300 --fp-rate 0.01 --lru 600 \
    --out "$demo/crawl-small.jsonl" --stats-json "$demo/stats-small.json" \
    "${site_args[@]}" 2>"$demo/crawl-small.err" |
    sed -n '/^seen-test/,/^  LRU/p;/^time/p'
stop_server
grep -h 'warning' "$demo/crawl-small.err" >&2 || true

echo
echo "== checking it: with --lossy, pages lost to false positives only warn;"
echo "   every other rule (no URL fetched twice above all) must still hold"
python3 examples/site/check_crawl.py --manifest "$demo/site/manifest.json" \
    --log "$demo/access-small.log" --out "$demo/crawl-small.jsonl" \
    --scope domain --max-depth 8 --lossy | tee "$demo/check-small.txt"
# "warn O4 every reachable allowed page fetched (FETCHED of REQUIRED)"
read -r fetched required < <(sed -n \
    's/.* O4 .*(\([0-9]*\) of \([0-9]*\)).*/\1 \2/p' "$demo/check-small.txt") ||
    true
if [ -n "${required:-}" ]; then
    echo "pages lost: $((required - fetched)) of $required reachable pages" \
        "were never fetched: lost to the filter's false positives (once" \
        "the LRU could no longer disprove them), directly or because the" \
        "pages that linked them were lost"
fi

start_server "$demo/access-state.log"
expected=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["scopes"]["domain"]["pages"])' \
    "$demo/site/manifest.json")
half=$((expected / 2))
state_out="$demo/crawl-state.jsonl"
state_cmd=("$bin/crawl" "${common[@]}" --quiet --state "$demo/state"
    --out "$state_out" --stats-json "$demo/stats-state.json" "${site_args[@]}")
cat >&2 <<MSG

== a crawl that survives kill -9: the first crawl again, with --state
   $demo/state (its queues, robots.txt outcomes, counters and journal in
   SQLite, the Bloom filter in a checksummed snapshot). Once --out holds
   $half of the $expected reachable pages it is killed with SIGKILL, then
   the same command resumes it.
\$ crawl ... --state $demo/state --out $state_out
MSG
"${state_cmd[@]}" &
crawler=$!
lines=0
while kill -0 "$crawler" 2>/dev/null && [ "$lines" -lt "$half" ]; do
    [ -f "$state_out" ] && lines=$(wc -l <"$state_out")
    sleep 0.01
done
kill -KILL "$crawler" 2>/dev/null || true
status=0
wait "$crawler" 2>/dev/null || status=$? # without the "Killed" notice
if [ "$status" -ne 137 ]; then
    echo "demo: the crawl ended by itself (exit $status) before the kill" >&2
    exit 1
fi
echo "killed: exit status 137 (128 + 9, SIGKILL) with" \
    "$(wc -l <"$state_out") records in --out; the same command again:"
finished "${state_cmd[@]}"
stop_server
python3 - "$demo/stats-state.json" "$state_out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
records = sum(1 for _ in open(sys.argv[2]))
print("resumed: exit %d, outcome %s, %d runs, %d pages in all = %d records "
      "in --out, refetched after restart %d (in flight at the kill)"
      % (s["exit_status"], s["outcome"], s["runs"], s["pages"], records,
         s["refetched_after_restart"]))
PY
tolerance=16 # --concurrency 16 x 1 kill: at most the transfers in flight
echo
echo "== checking it with an in-flight tolerance of $tolerance requests"
echo "   (--concurrency 16 x 1 kill): every page fetched and recorded once"
python3 examples/site/check_crawl.py --manifest "$demo/site/manifest.json" \
    --log "$demo/access-state.log" --out "$state_out" --scope domain \
    --max-depth 8 --refetch-tolerance "$tolerance"
start_server "$demo/access-outage.log"
outage_out="$demo/crawl-outage.jsonl"
third=$((expected / 3))
cat >&2 <<MSG

== a server that goes away: the first crawl again; once --out holds
   $third pages the site's server is stopped for 5 s, then started again
   on the same port. The refused connections are transient faults: each
   URL is retried with a doubling delay (--retries, --retry-delay), and
   after 5 failures in a row (--host-failures) the host is paused (its
   circuit breaker opens) and probed with one request before the crawl
   goes on: nothing is lost.
\$ crawl ... --out $outage_out
MSG
"$bin/crawl" "${common[@]}" --quiet --out "$outage_out" \
    --stats-json "$demo/stats-outage.json" "${site_args[@]}" &
crawler=$!
lines=0
while kill -0 "$crawler" 2>/dev/null && [ "$lines" -lt "$third" ]; do
    [ -f "$outage_out" ] && lines=$(wc -l <"$outage_out")
    sleep 0.01
done
stop_server
echo "server stopped with $(wc -l <"$outage_out") records in --out;" \
    "back in 5 s"
sleep 5
start_server "$demo/access-outage.log" "$port"
status=0
wait "$crawler" || status=$?
stop_server
python3 - "$demo/stats-outage.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
g = s.get("given_up", {})
print("the crawl ended by itself: exit %d, outcome %s, %d pages, %d attempts "
      "retried, %d URLs given up (the site's always-failing pages)"
      % (s["exit_status"], s["outcome"], s["pages"], s.get("retried", 0),
         g.get("total", 0)))
PY
[ "$status" -eq 0 ] || [ "$status" -eq 4 ] ||
    { echo "demo: the crawl failed (exit $status)" >&2; exit 1; }
echo
echo "== checking it: every page fetched and recorded once (a request the"
echo "   stopping server read but never answered may be sent again: 1)"
python3 examples/site/check_crawl.py --manifest "$demo/site/manifest.json" \
    --log "$demo/access-outage.log" --out "$outage_out" --scope domain \
    --max-depth 8 --refetch-tolerance 1
trap - EXIT
echo
echo "Files: $demo/crawl.jsonl (one line per page), $demo/stats.json,"
echo "$demo/crawl.warc.gz (every transfer, WARC/1.1: replay it with any"
echo "WARC tool, e.g. pywb or warcio), $demo/access.log (the server's log)."
echo "Crawl your own seeds with"
echo "scripts/demo.sh https://example.org/  (polite defaults; set --user-agent)."
