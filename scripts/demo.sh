#!/usr/bin/env bash
# scripts/demo.sh - the README's first command: see the URL-seen pipeline
# at work. Installs what is missing, builds in build/ (Release), then
#   1. bloomcalc on the worked examples of the sizing math;
#   2. seendemo: a synthetic crawl's link stream through the two-tier
#      seen-test, once well sized and once with a filter far too small and
#      a tiny LRU, so that every verdict and counter shows up.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

scripts/deps.sh build
echo "== building in build/"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j "$jobs" >/dev/null
bin=build/examples

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"; "${@:2}"; }

step "10^6 URLs at 0.01 %: 2.29 MiB and k = 13" \
    $bin/bloomcalc -n 1e6 -p 0.0001
step "10^9 URLs at 1 %: 1.198 GB and k = 7" \
    $bin/bloomcalc -n 1e9 -p 0.01
step "k = 10, m = 20 n: rate 8.89e-5" \
    $bin/bloomcalc -n 1000 -m 20000 -k 10
step "a crawl's link stream, filter and LRU sized for it" \
    $bin/seendemo --pages 20000
step "the same stream, filter sized for 2,000 URLs, LRU of 5,000" \
    $bin/seendemo --pages 20000 --expect 2000 --lru 5000
step "the same stream, filter for 2,000 URLs, LRU big enough to stay complete" \
    $bin/seendemo --pages 20000 --expect 2000 --lru 100000
