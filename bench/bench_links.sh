#!/usr/bin/env bash
# bench/bench_links.sh - link extraction speed on two real manuals:
# bloomcrawl's WHATWG tokenizer against libxml2's HTML push parser, in
# the same process, alternating (bench/bench_links.c).
#
# Installs what it needs when missing (Debian: postgresql-doc-15,
# python3.11-doc for the pages; libxml2-dev for the comparison), builds a
# Release tree in build-bench/, and runs RUNS (default 5) alternating runs
# of `bench_links --rounds 11` on each manual. Prints the CSV lines and the
# medians. Usage: bench/bench_links.sh [RUNS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
pg=/usr/share/doc/postgresql-doc-15/html
py=/usr/share/doc/python3.11/html

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
need=()
[ -d "$pg" ] || need+=(postgresql-doc-15)
[ -d "$py" ] || need+=(python3.11-doc)
dpkg-query -W -f='${Status}' libxml2-dev 2>/dev/null | grep -q 'ok installed' ||
    need+=(libxml2-dev)
if [ ${#need[@]} -gt 0 ]; then
    $sudo apt-get install -y --no-install-recommends "${need[@]}"
fi

cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_TESTING=OFF >/dev/null
cmake --build "$root/build-bench" -j2 --target bench_links >/dev/null
bin=$root/build-bench/bench/bench_links

out=$(mktemp)
for ((i = 1; i <= runs; i++)); do
    for d in "$pg" "$py"; do
        "$bin" --rounds 11 "$d" | tail -n +2 | sed "s|^|$(basename "$(dirname "$d")"),|"
    done
done | tee "$out"
echo
echo "manual,parser,median ns/byte over $runs runs"
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r[0], r[1]), []).append(float(r[7]))
for m in sorted({k[0] for k in by}):
    b = statistics.median(by[(m, "bloomcrawl")])
    line = "%s,bloomcrawl,%.3f" % (m, b)
    if (m, "libxml2") in by:
        x = statistics.median(by[(m, "libxml2")])
        line += "\n%s,libxml2,%.3f\n%s,ratio,%.1fx" % (m, x, m, x / b)
    print(line)
PY
rm -f "$out"
