#!/usr/bin/env bash
# bench/bench_warc.sh - what `crawl --warc` and `crawl --state` cost
# (issue 25 sections 1 and 2): the same crawl bare, with --warc
# FILE.warc.gz, with --state DIR (a fresh state each run), or with both,
# alternately, on the PostgreSQL 15 HTML manual or the generated site,
# served by a private nginx on 127.0.0.1; medians of CPU (user+sys of the
# crawl process, in microseconds from wait4(), not GNU time's hundredths:
# a bare crawl of the manual is 0.2 s) and wall time, and each variant's
# ratios to bare. Goals: --warc <= 1.5x the bare crawl's CPU, --state
# <= 1.1x its wall time.
#
#   bench/bench_warc.sh [--site postgres | --site generated] [--runs N]
#                       [--pages N] [--variants LIST] [--base CRAWL]
#                       [--csv FILE] [--perf]
#
#   --site S     postgres (default): the manual (Debian postgresql-doc-15,
#                ~1,170 pages), 16 transfers; generated: the site of
#                bench/gen_static_site.py --hosts (--pages articles,
#                default 20000: ~21,800 pages on each of 4 ports, every
#                port a host), 32 transfers
#   --runs N     rounds (default 7); each round runs every variant once,
#                in rotating order
#   --variants L which crawls, comma-separated, from bare, warc, state
#                and all (--warc and --state together); default bare,warc
#                (bare is always run: the ratios are to it)
#   --base CRAWL a second crawl binary (e.g. the main branch's, built in
#                another tree): its bare and --warc crawls join each
#                round, so before and after are measured in the same run
#   --csv FILE   also write every run as CSV (site, build, variant, round,
#                cpu_s, wall_s, warc_bytes, pages), for bench/summarize.py
#   --perf       record one more --warc crawl of this tree's binary with
#                perf and print its top functions and libraries
#
# Prints a table of medians (and the bytes of WARC per page) to stdout;
# writes nothing in the tree but the --csv file. Builds this tree's
# crawler in build-rel/ (Release). Needs nginx (bench/bench_crawl.sh
# installs it) and python3. Nothing is contacted outside 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

site=postgres
runs=7
pages=20000
base=
perf=0
csv=
kinds=bare,warc
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --site) site=${2:-}; shift 2 || true ;;
    --runs) runs=${2:-}; shift 2 || true ;;
    --pages) pages=${2:-}; shift 2 || true ;;
    --base) base=${2:-}; shift 2 || true ;;
    --variants) kinds=${2:-}; shift 2 || true ;;
    --csv) csv=${2:-}; shift 2 || true ;;
    --perf) perf=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
case "$site" in
postgres) transfers=16 ;;
generated) transfers=32 ;;
*) usage >&2; exit 2 ;;
esac
die() { echo "bench_warc: $*" >&2; exit 1; }
kind_list=(bare)
for k in ${kinds//,/ }; do
    case "$k" in
    bare) ;;
    warc | state | all) kind_list+=("$k") ;;
    *) usage >&2; exit 2 ;;
    esac
done
. bench/private_nginx.sh
nginx_find
[ -n "$nginx_bin" ] || die "nginx not found (bench/bench_crawl.sh installs it)"
pgdoc=/usr/share/doc/postgresql-doc-15/html
[ "$site" != postgres ] || [ -f "$pgdoc/index.html" ] ||
    die "$pgdoc missing (apt-get install postgresql-doc-15)"

cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build-rel -j2 --target crawl >/dev/null
new_bin=$PWD/build-rel/examples/crawl

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-warc.XXXXXX")
chmod 755 "$tmp"
mkdir -p "$tmp/nginx" "$tmp/www" "$tmp/runs"
# rtime.py OUT CMD...: run CMD, write "user sys wall" (seconds, from
# wait4()'s rusage: microseconds) to OUT, exit with CMD's status.
cat >"$tmp/rtime.py" <<'PY'
import os, sys, time
t = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write("%.6f %.6f %.6f\n" % (ru.ru_utime, ru.ru_stime, time.monotonic() - t))
sys.exit(os.waitstatus_to_exitcode(status) & 255)
PY
cleanup() {
    nginx_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

read -r -a ports <<<"$(free_ports 4)"
port=${ports[0]}
seeds=("http://127.0.0.1:$port/")
served=$port
if [ "$site" = postgres ]; then
    cp -R "$pgdoc/." "$tmp/www/"
else
    # the same files on 4 ports, each a host of its own, every host's "/"
    # a seed (as bench/bench_workers.sh crawls it)
    hosts=$(IFS=,; echo "${ports[*]}")
    python3 bench/gen_static_site.py "$tmp/site" --port "$port" \
        --hosts "$hosts" --pages "$pages" >/dev/null
    rmdir "$tmp/www"
    ln -s "$tmp/site/www" "$tmp/www"
    served="${ports[*]}" seeds=()
    for p in "${ports[@]}"; do
        seeds+=("http://127.0.0.1:$p/")
    done
fi
nginx_conf "$tmp/nginx" "$tmp/www" "$served" "text/html html;" "" "etag off;"
nginx_start "$tmp/nginx" "$port" ||
    die "nginx did not start: $(cat "$tmp/nginx/stderr" "$tmp/nginx/error.log" 2>/dev/null)"

common=(--no-robots --delay 0 --concurrency "$transfers" --per-host
    "$transfers" --max-depth 100 --quiet --expect 100000)
variants=() bins=()
for k in "${kind_list[@]}"; do
    variants+=("new $k") bins+=("$new_bin")
done
[ -z "$base" ] || for k in "${kind_list[@]}"; do
    variants+=("base $k") bins+=("$base")
done
nv=${#variants[@]}

run_one() { # $1 variant index, $2 round; appends "variant cpu wall bytes pages"
    local dir="$tmp/runs/$1.$2" extra=()
    mkdir -p "$dir"
    case "${variants[$1]}" in
    *warc) extra=(--warc "$dir/out.warc.gz") ;;
    *state) extra=(--state "$dir/state") ;;
    *all) extra=(--warc "$dir/out.warc.gz" --state "$dir/state") ;;
    esac
    python3 "$tmp/rtime.py" "$dir/time" "${bins[$1]}" "${common[@]}" \
        "${extra[@]}" --stats-json "$dir/stats.json" "${seeds[@]}" \
        >/dev/null 2>"$dir/stderr" || die "${variants[$1]}: $(tail -3 "$dir/stderr")"
    local u s e bytes=0 n
    read -r u s e <"$dir/time"
    [ ! -f "$dir/out.warc.gz" ] || bytes=$(stat -c %s "$dir/out.warc.gz")
    n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pages"])' "$dir/stats.json" 2>/dev/null || echo 0)
    echo "$1 $2 $(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.6f", u + s }') $e $bytes $n" >>"$tmp/results"
    rm -rf "$dir"
}

echo "site $site, $runs rounds, $transfers transfers, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$runs"); do
    for k in $(seq 0 $((nv - 1))); do
        run_one $(((k + r) % nv)) "$r"
    done
    echo "  round $r done" >&2
done

python3 - "$tmp/results" "$site" "$csv" "${variants[@]}" <<'PY'
import statistics, sys
path, site, csv, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [l.split() for l in open(path)]
if csv:
    with open(csv, "w") as f:
        f.write("site,build,variant,round,cpu_s,wall_s,warc_bytes,pages\n")
        for r in rows:
            build, kind = names[int(r[0])].split()
            f.write(",".join([site, build, kind] + r[1:]) + "\n")
med = {}
for i, name in enumerate(names):
    mine = [r for r in rows if int(r[0]) == i]
    med[name] = tuple(statistics.median(float(r[k]) for r in mine)
                      for k in (2, 3, 4, 5))
print("| crawl | CPU s (median) | wall s (median) | WARC bytes/page | pages |")
print("|---|---:|---:|---:|---:|")
for name in names:
    cpu, wall, b, n = med[name]
    bpp = "%.0f" % (b / n) if b and n else "-"
    print("| %s | %.4f | %.4f | %s | %.0f |" % (name, cpu, wall, bpp, n))
goal = {"warc": "goal: <= 1.5x CPU", "state": "goal: <= 1.1x wall",
        "all": "no goal of its own"}
for who in ("new", "base"):
    for kind in ("warc", "state", "all"):
        if "%s %s" % (who, kind) not in med:
            continue
        mine, bare = med["%s %s" % (who, kind)], med[who + " bare"]
        flag = "--warc --state" if kind == "all" else "--" + kind
        print("%s: %s / bare = %.2fx CPU, %.2fx wall (%s)"
              % (who, flag, mine[0] / bare[0], mine[1] / bare[1], goal[kind]))
for kind in ("warc", "state", "all"):
    if "base " + kind in med:
        print("new %s / base %s CPU = %.2fx" % (kind, kind,
              med["new " + kind][0] / med["base " + kind][0]))
PY

if [ "$perf" = 1 ]; then
    command -v perf >/dev/null || die "perf not found"
    perf record -q -o "$tmp/perf.data" -- "$new_bin" "${common[@]}" \
        --warc "$tmp/p.warc.gz" "${seeds[@]}" >/dev/null 2>&1
    echo "--warc crawl, by library (self CPU):"
    perf report -i "$tmp/perf.data" --sort dso --stdio 2>/dev/null |
        grep '%' | head -12 || true
    echo "--warc crawl, top functions (self CPU):"
    perf report -i "$tmp/perf.data" --sort dso,sym --stdio 2>/dev/null |
        grep '%' | head -30 || true
fi
