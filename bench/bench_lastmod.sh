#!/usr/bin/env bash
# bench/bench_lastmod.sh - what a sitemap's <lastmod> costs a recrawl
# (issue 24 section 1, DESIGN 11.3): the PostgreSQL 15 HTML manual (~1,170
# pages) served by a private nginx on 127.0.0.1 with a /sitemap.xml that
# lists every page with an old <lastmod>, crawled with --state
# --recrawl-after 1h (run 1: every page fetched, a fetched row written
# with each), then --revisit (run 2: the sitemap read again, every entry
# a seen page looked up, none due). This tree's binary and a base binary
# (--base, e.g. main's) alternate in each round; medians of CPU
# (user+sys) and wall time per run, and the ratios new / base.
#
#   bench/bench_lastmod.sh --base CRAWL [--runs N] [--cachegrind]
#
#   --cachegrind  then one more pair of runs of each binary under
#                 valgrind --tool=cachegrind --cache-sim=no: instructions
#                 executed (I refs), which the machine's load does not move
#
# Prints a table to stdout; writes nothing in the tree but build-rel/
# (Release, the crawl target). Needs nginx and /usr/bin/time. Nothing is
# contacted outside 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022
runs=7
base=
cachegrind=0
vg=()
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --runs) runs=${2:-}; shift 2 || true ;;
    --base) base=${2:-}; shift 2 || true ;;
    --cachegrind) cachegrind=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done
die() { echo "bench_lastmod: $*" >&2; exit 1; }
[ -n "$base" ] && [ -x "$base" ] || die "--base CRAWL is needed"
. bench/private_nginx.sh
nginx_find
[ -n "$nginx_bin" ] || die "nginx not found (bench/bench_crawl.sh installs it)"
[ -x /usr/bin/time ] || die "/usr/bin/time not found"
pgdoc=/usr/share/doc/postgresql-doc-15/html
[ -f "$pgdoc/index.html" ] || die "$pgdoc missing (apt-get install postgresql-doc-15)"

cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build-rel -j2 --target crawl >/dev/null
new_bin=$PWD/build-rel/examples/crawl

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-lastmod.XXXXXX")
chmod 755 "$tmp"
mkdir -p "$tmp/nginx" "$tmp/www" "$tmp/runs"
cleanup() {
    nginx_stop
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
port=$(free_ports 1)
cp -R "$pgdoc/." "$tmp/www/"
python3 - "$tmp/www" "$port" <<'PY'
import os, sys
root, port = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(root) if f.endswith(".html"))
with open(os.path.join(root, "sitemap.xml"), "w") as f:
    f.write('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns='
            '"http://www.sitemaps.org/schemas/sitemap/0.9">\n')
    for n in names:
        f.write("<url><loc>http://127.0.0.1:%s/%s</loc>"
                "<lastmod>2020-01-01T00:00:00Z</lastmod></url>\n" % (port, n))
    f.write("</urlset>\n")
PY
nginx_conf "$tmp/nginx" "$tmp/www" "$port" "text/html html; application/xml xml;"
nginx_start "$tmp/nginx" "$port" ||
    die "nginx did not start: $(cat "$tmp/nginx/stderr" "$tmp/nginx/error.log" 2>/dev/null)"

common=(--no-robots --delay 0 --concurrency 16 --per-host 16 --max-depth 100
    --quiet --expect 100000 --recrawl-after 1h)
names=(new base)
bins=("$new_bin" "$base")

# $1 binary index, $2 round: run 1 and the --revisit run 2 on one state;
# appends "who run cpu wall pages" twice.
run_pair() {
    local dir="$tmp/runs/$1.$2" u s e n
    mkdir -p "$dir"
    for step in 1 2; do
        local extra=("http://127.0.0.1:$port/")
        [ "$step" = 1 ] || extra=(--revisit)
        [ "$2" != cg ] || vg=(valgrind --tool=cachegrind
            --cache-sim=no --cachegrind-out-file="$tmp/cg.${names[$1]}.$step"
            --log-file="$dir/vg")
        /usr/bin/time -o "$dir/time" -f '%U %S %e' "${vg[@]}" "${bins[$1]}" \
            "${common[@]}" --state "$dir/state" \
            --stats-json "$dir/stats.json" "${extra[@]}" \
            >/dev/null 2>"$dir/stderr" ||
            die "${names[$1]} run $step: $(tail -3 "$dir/stderr")"
        read -r u s e <"$dir/time"
        n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pages"])' "$dir/stats.json")
        if [ "$2" = cg ]; then
            echo "${names[$1]} $step $(sed -n 's/.*I *refs: *//p' "$dir/vg" | tr -d ,)" >>"$tmp/irefs"
            continue
        fi
        echo "${names[$1]} $step $(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') $e $n" >>"$tmp/results"
    done
    rm -rf "$dir"
}

echo "$runs rounds, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$runs"); do
    run_pair $((r % 2)) "$r"
    run_pair $(((r + 1) % 2)) "$r"
    echo "  round $r done" >&2
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$tmp/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for who in ("new", "base"):
    for run in ("1", "2"):
        mine = [r for r in rows if r[0] == who and r[1] == run]
        med[who, run] = [statistics.median(float(r[k]) for r in mine)
                         for k in (2, 3, 4)]
print("| crawl | run | CPU s (median) | wall s (median) | pages (median) |")
print("|---|---|---:|---:|---:|")
for (who, run), (cpu, wall, n) in sorted(med.items()):
    what = "1: --state --recrawl-after 1h" if run == "1" else "2: --revisit"
    print("| %s | %s | %.3f | %.3f | %.0f |" % (who, what, cpu, wall, n))
for run in ("1", "2"):
    print("run %s: new / base = %.3fx CPU, %.3fx wall" % (
        run, med["new", run][0] / med["base", run][0],
        med["new", run][1] / med["base", run][1]))
PY

if [ "$cachegrind" = 1 ]; then
    command -v valgrind >/dev/null || die "valgrind not found"
    run_pair 0 cg
    run_pair 1 cg
    python3 - "$tmp/irefs" <<'PY'
import sys
ir = {(w, r): int(n) for w, r, n in (l.split() for l in open(sys.argv[1]))}
for run in ("1", "2"):
    new, base = ir["new", run], ir["base", run]
    print("run %s under cachegrind: %.1f M instructions new, %.1f M base, "
          "%+.1f M (%.3fx)" % (run, new / 1e6, base / 1e6,
                               (new - base) / 1e6, new / base))
PY
    for step in 1 2; do
        echo "run $step, this tree's binary: where the instructions go (top 12)"
        cg_annotate "$tmp/cg.new.$step" 2>/dev/null |
            sed -n '/^Ir/,$p' | grep -E '^ *[0-9,]+ \(' | head -12 || true
    done
fi
