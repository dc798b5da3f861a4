#!/usr/bin/env bash
# bench/bench_crawl.sh - the crawl benchmark of issue 5: bloomcrawl against
# wget2 on a 20,000-article static site served by nginx on 127.0.0.1.
#
#   bench/bench_crawl.sh [--site generated | --site postgres] [--runs N]
#                        [--pages N] [--profile | --no-profile] [--keep]
#
#   --site S      generated (default): the site below, 32 transfers;
#                 postgres: the real-site mode of issue 12, the PostgreSQL
#                 15 HTML manual (Debian postgresql-doc-15, 1,169 pages,
#                 installed when missing) with 16 transfers, bloomcrawl
#                 against wget2 --spider only, 20 runs each by default
#                 (about 35 s, 1 min with --profile); goals of issue 12;
#                 writes bench/results/crawl-postgres.md and .csv
#   --runs N      crawls per crawler (default 5, postgres 20); medians
#   --pages N     articles in the generated site (default 20000; the site
#                 has about 8 % more pages: listings, tags, index pages)
#   --profile     always profile bloomcrawl with perf (default: only when
#                 the goal is missed); --no-profile: never
#   --keep        keep the temporary folder (site, logs, perf data)
#
# One run of this script, on this machine:
#   1. installs what is missing (the build's packages via scripts/deps.sh,
#      then nginx, wget2 and GNU time), with sudo when not root;
#   2. builds the sample crawler in Release mode in build-rel/;
#   3. starts a private nginx (its own nginx.conf in a temporary folder,
#      in the foreground, 127.0.0.1 only, a free port, keep-alive on, an
#      access log that records method, status, connection and path);
#   4. generates the site (bench/gen_static_site.py: ~21,700 pages, every
#      link an <a href> or <link rel> spelled one of the RFC 3986-equal
#      ways) into nginx's document root;
#   5. crawls it --runs times (default 5) with each crawler, in rotating
#      order, politeness off and 32 transfers in flight:
#        bloomcrawl               build-rel/examples/crawl
#        wget2 --spider           the issue's baseline (HEAD, then GET for
#                                 every HTML page)
#        wget2 -r --delete-after  wget2 downloading (one GET per page, each
#                                 page written to disk and deleted)
#      measuring wall time, CPU (user+sys) and peak RSS of the crawler with
#      /usr/bin/time, the pages each fetched from nginx's access log and
#      from the crawler's own output, and nginx's CPU time;
#   6. writes the medians, the checks (same page set for everyone, no URL
#      fetched twice), the goal's verdict and the exact commands to stdout,
#      bench/results/crawl.md and bench/results/crawl.csv;
#   7. when the goal is missed (or with --profile), records one more
#      bloomcrawl crawl with perf and appends where its CPU time goes, by
#      pipeline stage, to bench/results/crawl.md.
# Nothing is contacted outside 127.0.0.1. Takes 2-4 minutes. The machine's
# other load shows in the numbers: compare medians, and re-run when the
# load average (printed in the report) was high.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022 # nginx's workers (user nobody) must read the generated site

runs=
articles=20000
site=generated
profile=auto
keep=0
usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=${2:-}; shift 2 || true ;;
    --site) site=${2:-}; shift 2 || true ;;
    --pages) articles=${2:-}; shift 2 || true ;;
    --profile) profile=yes; shift ;;
    --no-profile) profile=no; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
case "$site" in
generated) runs=${runs:-5}; transfers=32; out=crawl ;;
postgres) runs=${runs:-20}; transfers=16; out=crawl-postgres ;;
*) usage >&2; exit 2 ;;
esac
pgdoc=/usr/share/doc/postgresql-doc-15/html
case "$runs$articles" in *[!0-9]*|"") usage >&2; exit 2 ;; esac
if [ "$runs" -lt 1 ] || [ "$articles" -lt 100 ]; then
    usage >&2
    exit 2
fi

say() { echo "== $*" >&2; }
die() { echo "bench_crawl: $*" >&2; exit 1; }

# ---- 1. dependencies ---------------------------------------------------
scripts/deps.sh build

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    sudo_cmd=(sudo)
fi
. bench/private_nginx.sh
nginx_find
need=()
[ -n "$nginx_bin" ] || need+=(nginx-light)
command -v wget2 >/dev/null || need+=(wget2)
[ -x /usr/bin/time ] || need+=(time)
[ "$site" != postgres ] || [ -f "$pgdoc/index.html" ] || need+=(postgresql-doc-15)
if [ ${#need[@]} -gt 0 ]; then
    if [ ${#sudo_cmd[@]} -gt 0 ] && ! command -v sudo >/dev/null; then
        die "need root or sudo to install: ${need[*]}"
    fi
    say "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Installing nginx starts the distribution's own nginx service on port
    # 80 of every address. The standard Debian way to keep a package's
    # service from starting at install time is a policy-rc.d that says 101
    # ("action not allowed"); put one in place only for the install, and
    # only when there is none already.
    policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee "$policy" >/dev/null
        "${sudo_cmd[@]}" chmod 755 "$policy"
    fi
    rc=0
    "${sudo_cmd[@]}" apt-get update -qq || rc=$?
    if [ $rc -eq 0 ]; then
        "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
            "${need[@]}" >/dev/null || {
            # nginx-light is not in every release: fall back to nginx.
            need=("${need[@]/nginx-light/nginx}")
            "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
                "${need[@]}" >/dev/null || rc=$?
        }
    fi
    [ -z "$policy" ] || "${sudo_cmd[@]}" rm -f "$policy"
    [ $rc -eq 0 ] || die "could not install ${need[*]}"
    nginx_find
fi
[ -n "$nginx_bin" ] || die "nginx not found"

# ---- 2. build (Release; reuses build-rel/ when present) ----------------
say "building the crawler in build-rel/ (Release)"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build-rel -j "$(nproc 2>/dev/null || echo 2)" --target crawl >/dev/null
crawl_bin=$PWD/build-rel/examples/crawl

# ---- 3. a private nginx on 127.0.0.1 -----------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-crawl.XXXXXX")
chmod 755 "$tmp"
mkdir -p "$tmp/nginx" "$tmp/site/www" "$tmp/runs"
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    nginx_stop
    if [ "$keep" = 1 ]; then
        echo "bench_crawl: kept $tmp" >&2
    else
        rm -rf "$tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# nginx.conf (bench/private_nginx.sh: one worker, sendfile, no gzip -
# both crawlers ask for it, so both get identity), and here: no ETag (wget2 --spider
# skips the GET of a page whose ETag it has seen before, and nginx's ETags
# - mtime and size - repeat across a generated site), an access log
# without buffering so each run's lines can be cut out by offset.
log_conf="log_format bench '\$msec \$status \$request_method \$body_bytes_sent '
                     '\$connection \$connection_requests \"\$request_uri\" '
                     '\"\$http_user_agent\"';
    access_log $tmp/nginx/access.log bench;
    tcp_nopush on;
    keepalive_timeout 65s;"
for _ in 1 2 3; do # a port taken between free_ports and nginx: another
    port=$(free_ports 1)
    nginx_conf "$tmp/nginx" "$tmp/site/www" "$port" "text/html html;" \
        "$log_conf" "etag off;"
    nginx_start "$tmp/nginx" "$port" && break
done
[ -n "$nginx_pid" ] || {
    cat "$tmp/nginx/error.log" "$tmp/nginx/stderr" >&2 2>/dev/null || true
    die "nginx did not start"
}
seed="http://127.0.0.1:$port/"
say "nginx (pid $nginx_pid) serves $tmp/site/www on $seed"

# CPU seconds used so far by nginx's worker processes (the master's
# children), from /proc/PID/stat fields 14 and 15 (utime, stime).
clk=$(getconf CLK_TCK)
nginx_cpu() {
    local kids files=()
    read -r -a kids <<<"$(cat /proc/"$nginx_pid"/task/*/children 2>/dev/null || true)"
    for k in "${kids[@]}"; do files+=("/proc/$k/stat"); done
    if [ ${#files[@]} -eq 0 ]; then
        echo 0
        return
    fi
    # the command name (field 2) may hold spaces: drop up to ") " first
    awk -v hz="$clk" '{ sub(/^.*\) /, ""); t += $12 + $13 }
        END { printf "%.2f\n", t / hz }' "${files[@]}"
}

# ---- 4. the site ---------------------------------------------------------
if [ "$site" = postgres ]; then
    # A copy, so that nginx's workers (user nobody) read it under the
    # umask above. The expected pages: every HTML file of the manual, plus
    # "/" (the seed, served as index.html; /index.html is linked too).
    say "copying the PostgreSQL manual ($pgdoc)"
    cp -R "$pgdoc/." "$tmp/site/www/"
    (cd "$tmp/site/www" && { echo /; find . -name '*.html' -printf '/%P\n'; } |
        LC_ALL=C sort) >"$tmp/site/expected.txt"
else
    say "generating the site ($articles articles)"
    python3 bench/gen_static_site.py "$tmp/site" --port "$port" --pages "$articles"
fi
python3 - "$seed" <<'PY' || die "nginx does not serve the site (permissions of $tmp?)"
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
    assert r.status == 200 and b"<html" in r.read(200)
PY
site_pages=$(wc -l <"$tmp/site/expected.txt")

# ---- 5. the crawls -------------------------------------------------------
# The commands, as arrays; DIR is replaced by each run's folder.
cmd_bloomcrawl=("$crawl_bin" --no-robots --delay 0 --concurrency "$transfers"
    --per-host "$transfers" --max-depth 100 --quiet --expect 100000
    --stats-json DIR/stats.json "$seed")
cmd_wget2_spider=(wget2 --no-config --spider --recursive --level=inf
    --no-parent --robots=off --max-threads="$transfers" --no-verbose --no-local-db
    --stats-site=csv:DIR/stats-site.csv "$seed")
cmd_wget2_download=(wget2 --no-config --recursive --level=inf --no-parent
    --robots=off --max-threads="$transfers" --no-verbose --no-local-db --delete-after
    --directory-prefix=DIR/files --stats-site=csv:DIR/stats-site.csv "$seed")
tools=("bloomcrawl" "wget2 --spider" "wget2 -r --delete-after")
vars=(cmd_bloomcrawl cmd_wget2_spider cmd_wget2_download)
if [ "$site" = postgres ]; then # issue 12: against wget2 --spider only
    tools=("${tools[@]:0:2}")
    vars=("${vars[@]:0:2}")
fi

# Print an array as one shell command line, with TMP for the temp folder.
show() {
    local s
    s=$(printf '%q ' "$@")
    s=${s% }
    s=${s//$tmp/TMP}
    echo "${s//$PWD\//}"
}

log="$tmp/nginx/access.log"
run_one() { # $1: index into tools, $2: run number, $3: position in the round
    local name=${tools[$1]} var=${vars[$1]} dir rc=0 off end c0 c1
    dir="$tmp/runs/$1.$2"
    mkdir -p "$dir"
    local -n arr=$var
    local cmd=("${arr[@]//DIR/$dir}")
    off=$(stat -c %s "$log")
    c0=$(nginx_cpu)
    t0=$(date +%s%N)
    (cd "$dir" && timeout 600 /usr/bin/time -o "$dir/time" \
        -f 'wall=%e user=%U sys=%S maxrss_kb=%M exit=%x' \
        "${cmd[@]}" >"$dir/stdout" 2>"$dir/stderr") || rc=$?
    t1=$(date +%s%N)
    # GNU time prints the wall time in 10 ms steps: a real-site crawl takes
    # a few of them, so its wall time is taken here, in microseconds (the
    # later wall= overrides; it includes starting /usr/bin/time, ~1 ms)
    [ "$site" != postgres ] || [ ! -s "$dir/time" ] ||
        echo "wall=$(((t1 - t0) / 1000))e-6" >>"$dir/time"
    sleep 0.3 # nginx logs a request just after its response: let it finish
    end=$(stat -c %s "$log")
    c1=$(nginx_cpu)
    grep -q '^wall=' "$dir/time" 2>/dev/null ||
        die "$name run $2 did not finish (status $rc): $(tail -3 "$dir/stderr")"
    tail -c +$((off + 1)) "$log" | head -c $((end - off)) >"$dir/access.log"
    local own=(--stats-json "$dir/stats.json")
    [ "$1" = 0 ] || own=(--stats-site "$dir/stats-site.csv")
    python3 bench/crawl_report.py record --tool "$name" --run "$2" \
        --order "$3" --time "$dir/time" --log "$dir/access.log" \
        --expected "$tmp/site/expected.txt" "${own[@]}" \
        --server-cpu "$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')" \
        >>"$tmp/runs.jsonl"
    tail -1 "$tmp/runs.jsonl" | python3 -c '
import json, sys
r = json.load(sys.stdin)
print("   %-24s run %d: %6.2f s  %5d pages  %6.0f pages/s  %.3f CPU s/1000 pages  %5.1f MiB" % (
    r["tool"], r["run"], r["wall_s"], r["pages_log"], r["pages_per_s"],
    r["cpu_ms_per_page"], r["maxrss_mib"]))' >&2
}

say "crawling $site_pages pages: ${#tools[@]} crawlers x $runs runs (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
for r in $(seq 1 "$runs"); do
    # Rotate the order each round, so that no crawler always runs first
    # (after an idle server) or right after another one.
    for pos in $(seq 0 $((${#tools[@]} - 1))); do
        run_one $(((pos + r - 1) % ${#tools[@]})) "$r" $((pos + 1))
    done
done

# ---- 6. the report -------------------------------------------------------
mkdir -p bench/results
notes="$tmp/notes.md"
cat >"$notes" <<'NOTES'
## What differs between the crawlers' settings

- **Requests per page.** `wget2 --spider` sends a HEAD for every URL and
  then, because the page is text/html, a GET to parse it: two requests per
  page (see HTTP requests). bloomcrawl sends one GET. `wget2 -r
  --delete-after` sends one GET but writes every page to disk (under TMP)
  and deletes it again, which costs it system time.
- **Concurrency model.** bloomcrawl: one thread, libcurl's multi interface,
  32 transfers in flight (`--concurrency 32 --per-host 32`). wget2: 32
  download threads (`--max-threads=32`), each with its own connection; its
  parser and URL queue run in those threads, so it can use both cores.
  Both keep their connections alive (see connections per run). On a
  loaded machine this also matters for the wall time: the scheduler shares
  CPU time per thread, so a crawler with 32 runnable threads gets a larger
  share than a single-threaded one (bloomcrawl's CPU / wall can never
  exceed 1.0; see the per-run table).
- **Seen-test.** bloomcrawl: normalization, then a Bloom filter sized for
  `--expect 100000` URLs at 1 % plus the exact LRU of 50,000 URLs. wget2:
  an exact hash table of every URL it has queued.
- **Link extraction.** bloomcrawl: its own streaming WHATWG tokenizer,
  `a`/`area` href, `frame`/`iframe` src, `link` rel canonical/alternate/
  next/prev. wget2: its own HTML tokenizer, which also follows `img`,
  `script`, stylesheets and more. The site has only `<a href>` and
  `<link rel=canonical|next|prev>`, so both find the same links.
- **Limits.** bloomcrawl `--max-depth 100`, wget2 `--level=inf`; the
  site's deepest page is at depth 10, so neither limit applies. Both stay
  on the seed's host (bloomcrawl's default `--scope host`, wget2 without
  `--span-hosts`); `--no-parent` has no effect from `/`.
- **robots.txt** is off for both (`--no-robots`, `--robots=off`): no
  request for /robots.txt. Politeness delay: none for either.
- **Output.** Each crawler writes only its statistics (bloomcrawl
  `--stats-json`, wget2 `--stats-site` CSV, one line per request), used for
  the "own count" of pages; nothing else is printed.
- **Server.** nginx 1 worker process, `etag off` (otherwise `wget2
  --spider` skips the GET of pages whose ETag - mtime and size in nginx -
  it has already seen, and crawls only part of the site), no gzip.
NOTES
if [ "$site" = postgres ]; then
    cat >"$notes" <<'NOTES'
## What differs between the crawlers' settings

- **Transfers: 16 for both** (`--concurrency 16 --per-host 16`,
  `--max-threads=16`), as issue 12 asks. The whole site is one host on
  127.0.0.1, so the per-host cap is the total: a crawler that capped one
  host lower would not be compared at 16 transfers.
- **Politeness: none for either.** bloomcrawl's default delay between two
  requests to a host is 1 s (it is a polite sample crawler), which would make
  a 1,170-page crawl of one host last 20 minutes; `--delay 0` matches wget2,
  whose default is no wait (`--wait=0`). robots.txt is off for both
  (`--no-robots`, `--robots=off`).
- **Requests per page.** `wget2 --spider` sends a HEAD for every URL and,
  for text/html, a GET: two requests per page. bloomcrawl sends one GET.
- **What is followed.** Both fetch the same 1,170 HTML pages (checked
  above, by the set of paths fetched with GET). wget2 also sends a HEAD for
  the stylesheet and the three SVG images, and for the `href` of every
  page's `<link rev="made" href="pgsql-docs@lists.postgresql.org">`, a
  relative URL that nginx answers 404 (hence wget2's exit status 8).
  bloomcrawl follows `link` only for rel canonical/alternate/next/prev.
- **Concurrency model.** bloomcrawl: one thread, libcurl's multi interface.
  wget2: 16 threads with a connection each, so it can use both cores; its
  CPU time is the sum over its threads.
- **Timing.** CPU (user+sys) and peak RSS from GNU time (`/usr/bin/time
  -f`), which prints CPU seconds in 10 ms steps: a crawl here costs a few
  steps, so compare the medians, not one run. The wall time is measured by
  the script in microseconds around `/usr/bin/time` (GNU time's own wall
  time has the same 10 ms steps).
- **Server.** nginx, 1 worker process, `etag off`, no gzip; the manual is
  copied as it is into the document root.
NOTES
fi

versions="$("$crawl_bin" --help >/dev/null && echo "bloomcrawl $(git rev-parse --short HEAD 2>/dev/null || echo '?')")"
versions+=", $(wget2 --version 2>/dev/null | head -1 | sed 's/ - .*//')"
versions+=", $("$nginx_bin" -v 2>&1 | sed 's/^nginx version: //')"
versions+=", libcurl $(pkg-config --modversion libcurl 2>/dev/null || echo '?')"
if [ "$site" = postgres ]; then
    site_desc="the PostgreSQL $(dpkg-query -W -f='${Version}' postgresql-doc-15 2>/dev/null || echo 15) HTML manual ($pgdoc, Debian postgresql-doc-15): $(($(wc -l <"$tmp/site/expected.txt") - 1)) HTML files, $(du -sm "$tmp/site/www" | cut -f1) MB, served as static files by nginx; the seed is / (index.html), so a crawl fetches $site_pages pages"
else
site_desc=$(python3 - "$tmp/site/site.json" "$articles" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("%s pages (%s articles plus listing, tag and index pages), %s links "
      "(%.0f per page), %.0f MiB of HTML (%.1f KiB per page), deepest page "
      "at depth %d; generated by `bench/gen_static_site.py --pages %s` and "
      "served as static files by nginx" % (
          format(s["pages"], ","), format(s["articles"], ","),
          format(s["links"], ","), s["links"] / s["pages"],
          s["bytes"] / 2**20, s["bytes"] / s["pages"] / 1024,
          s["max_depth"], sys.argv[2]))
PY
)
fi
cmd_bench="bench/bench_crawl.sh --runs $runs --pages $articles"
cmd_site="python3 bench/gen_static_site.py TMP/site --port $port --pages $articles"
extra=()
if [ "$site" = postgres ]; then
    cmd_bench="bench/bench_crawl.sh --site postgres --runs $runs"
    cmd_site="cp -R $pgdoc/. TMP/site/www/"
    extra=(--real-site --goal issue12)
fi
rc=0
python3 bench/crawl_report.py report --runs "$tmp/runs.jsonl" \
    --md "bench/results/$out.md" --csv "bench/results/$out.csv" \
    --baseline "wget2 --spider" --verdict "$tmp/verdict" "${extra[@]}" \
    --meta "versions=$versions" --meta "site=$site_desc" \
    --meta "cmd_bench=$cmd_bench" \
    --meta "cmd_site=$cmd_site" \
    --meta "cmd_nginx=$(show "$nginx_bin" -p TMP/nginx -c TMP/nginx/nginx.conf -e TMP/nginx/error.log)" \
    --meta "cmd_bloomcrawl=$(show "${cmd_bloomcrawl[@]//DIR/TMP/run}")" \
    --meta "cmd_wget2_spider=$(show "${cmd_wget2_spider[@]//DIR/TMP/run}")" \
    ${tools[2]:+--meta "cmd_wget2_download=$(show "${cmd_wget2_download[@]//DIR/TMP/run}")"} \
    --meta "notes_file=$notes" || rc=$?

# ---- 7. profile: where bloomcrawl's CPU time goes --------------------------
verdict=$(cat "$tmp/verdict" 2>/dev/null || echo NONE)
if [ "$profile" = yes ] || { [ "$profile" = auto ] && [ "$verdict" = MISSED ]; }; then
    if ! command -v perf >/dev/null; then
        say "perf is not installed: no profile (apt-get install linux-perf)"
    else
        say "profiling one more bloomcrawl crawl with perf"
        dir="$tmp/runs/profile"
        mkdir -p "$dir"
        pcmd=("${cmd_bloomcrawl[@]//DIR/$dir}")
        # A crawl of the real site takes a few tens of ms of CPU: profile
        # 10 crawls in a row, sampled at 4999 Hz, for a few thousand samples.
        freq=499 reps=1
        [ "$site" != postgres ] || { freq=4999; reps=10; }
        # shellcheck disable=SC2016 # the loop's $1 and $@ are bash -c's
        if perf record -q -F "$freq" --call-graph dwarf,16384 -o "$dir/perf.data" \
            -- bash -c 'for _ in $(seq "$1"); do "${@:2}" || exit; done' \
            _ "$reps" "${pcmd[@]}" >"$dir/stdout" 2>"$dir/perf.err"; then
            med_cpu=$(python3 -c '
import json, statistics, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
print(int(sys.argv[2]) * statistics.median(r["cpu_s"] for r in rs if r["tool"] == "bloomcrawl"))' "$tmp/runs.jsonl" "$reps")
            {
                echo
                echo "## Where bloomcrawl's CPU time goes (perf)"
                echo
                echo "$reps more crawl(s) of the same site under \`perf record -F $freq"
                echo "--call-graph dwarf\`; each sample is charged to the innermost"
                echo "pipeline stage on its call stack (bench/perf_breakdown.py). CPU"
                echo "seconds are the shares applied to $reps x the median CPU time above"
                echo "($med_cpu s for $((reps * site_pages)) pages). Debian's libcurl"
                echo "is stripped: its static functions show as [unknown]."
                echo
                perf script -F comm,tid,ip,sym,dso -i "$dir/perf.data" 2>/dev/null |
                    python3 bench/perf_breakdown.py --cpu-seconds "$med_cpu" \
                        --pages "$((reps * site_pages))"
            } >"$dir/profile.md"
            cat "$dir/profile.md" >>"bench/results/$out.md"
            cat "$dir/profile.md"
        else
            say "perf record failed (perf_event_paranoid?): $(tail -2 "$dir/perf.err")"
        fi
    fi
fi
say "wrote bench/results/$out.md and bench/results/$out.csv"
exit $rc
