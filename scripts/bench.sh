#!/usr/bin/env bash
# scripts/bench.sh - every benchmark of the project in one run, and its report.
#
#   scripts/bench.sh [--billion] [--quick] [--no-crawl] [--only STEP,...]
#
#   --billion   also the scale run: the seen-test at n = 10^9 (batch
#               calls, then one call at a time), the exact set at n = 10^8
#               (when the memory allows), and the billion-URL run for both
#               layouts (adds about an hour and needs ~15 GB)
#   --quick     small sizes, to check this script itself (numbers are not
#               meaningful; the results go to bench/results-quick/)
#   --no-crawl  skip the crawls: against wget2 (it needs nginx and wget2),
#               the crawl with --warc and --state, and the crawl
#               workers' (nginx and redis-server)
#   --only S    run only the steps named (dedup, scale, scale-pairs, fpr,
#               window, redis_seen, handoff, url, urldedup, frontier,
#               state, links, simhash, crawl, crawl-postgres, features,
#               workers; with --billion scale-big, scale-big-scalar,
#               scale-exact, billion) and then the report;
#               CSVs of the other steps stay as the last run left them
#
# Not part of the tests. Builds in Release mode in build-rel/, runs each
# benchmark and writes bench/results/:
#   <step>.csv        the numbers (one CSV per benchmark)
#   <step>.md         the benchmark's own printed tables
#   runs.csv          when (start, UTC), at which commit and with which
#                     command each CSV was made, and how long it took
#   summary.md        the machine (CPU, cores, memory, date), every goal of
#                     issues 2-6, 12, 14, 24 and 25 beside the measured
#                     number, the tables
#   fpr.png, ns_per_url.png, bytes_per_url.png   the pictures (gnuplot)
# Every benchmark runs its baseline in the same process or script. The
# default run takes 20-25 minutes on a 2-core machine (the steps of
# issues 24 and 25 - state, links, simhash, crawl-postgres and the two
# features crawls - about 9 of them). With the
# environment variable REDISBLOOM_SRC set to a RedisBloom source tree (not
# vendored; bench/results/redis_seen-analysis.md says how to get it), the Redis
# step measures RedisBloom's BF.MADD beside the seen-test in the same run;
# without it that comparison is skipped and the summary says so.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

billion=0
quick=0
crawl=1
only=""
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --billion) billion=1; shift ;;
    --quick) quick=1; shift ;;
    --no-crawl) crawl=0; shift ;;
    --only) only=${2:-}; [ -n "$only" ] || { usage >&2; exit 2; }; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
    esac
done

say() { echo "== $*" >&2; }
die() { echo "bench.sh: $*" >&2; exit 1; }

# ---- dependencies and the Release build --------------------------------
scripts/deps.sh build
# gnuplot for the pictures, GNU time for urldedup's CPU seconds (the crawl
# benchmark installs nginx and wget2 itself).
missing=()
command -v gnuplot >/dev/null || missing+=(gnuplot-nox)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null ||
        { "${sudo_cmd[@]}" apt-get update -qq &&
            "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
                "${missing[@]}" >/dev/null; }
fi
say "Release build in build-rel/"
cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
    >/dev/null
cmake --build build-rel -j "$(nproc)" >/dev/null
bin=$root/build-rel

# ---- sizes -------------------------------------------------------------
out=bench/results
dedup_args=(--runs 3)
scale_sizes=1000000,10000000,100000000
pairs_args=(--sizes 10000000 --pairs 7)
fpr_args=()
window_args=(--full --window 1000000)
url_pairs=200000
url_runs=7
urldedup_lines=10000000
urldedup_runs=5
frontier_args=(--runs 3)
state_args=()
links_runs=5
simhash_args=(--rounds 5)
crawl_args=(--runs 3 --no-profile)
crawl_pg_args=(--runs 7 --no-profile)
features_pg_args=(--runs 7)
features_gen_args=(--runs 3)
big_sizes=1000000000
billion_args=()
if [ "$quick" = 1 ]; then
    out=bench/results-quick
    dedup_args=(--runs 1 --n 100000)
    scale_sizes=100000,1000000
    pairs_args=(--sizes 1000000 --pairs 3)
    fpr_args=(--n 100000 --queries 1000000 --from 4 --to 12)
    window_args=(--window 20000 --queries 20000 --speed-n 200000)
    url_pairs=20000
    url_runs=3
    urldedup_lines=200000
    urldedup_runs=3
    frontier_args=(--runs 1 --urls 200000 --hosts 2000)
    state_args=(--urls 200000 --hosts 2000 --drain 50000)
    links_runs=1
    simhash_args=(--rounds 1 --n 100000 --queries 10000)
    crawl_args=(--runs 1 --no-profile --pages 500)
    crawl_pg_args=(--runs 1 --no-profile)
    features_pg_args=(--runs 1)
    features_gen_args=(--runs 1 --pages 500)
    big_sizes=10000000
    billion_args=(--n 10000000 --fresh 1000000)
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shown_cmd= # step's command as runs.csv shows it, when not its arguments

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
[ -f "$out/runs.csv" ] ||
    echo "step,date_utc,commit,seconds,command" >"$out/runs.csv"

want() {
    [ -z "$only" ] && return 0
    case ",$only," in *",$1,"*) return 0 ;; esac
    return 1
}

# record_run NAME STARTED SECONDS COMMAND: the row of a step in runs.csv
# (a previous row of the same step is replaced; paths made relative).
record_run() {
    local cmd=${4//$root\//}
    cmd=${cmd//$tmp/TMP}
    grep -v "^$1," "$out/runs.csv" >"$tmp/runs.csv" || true
    printf '%s,%s,%s,%d,"%s"\n' "$1" "$2" "$commit" "$3" "$cmd" \
        >>"$tmp/runs.csv"
    cp "$tmp/runs.csv" "$out/runs.csv"
}

# step NAME COMMAND...: run a benchmark, its stdout to $out/NAME.md, and
# record it in runs.csv.
step() {
    local name=$1
    shift
    local cmd="${shown_cmd:-$*}" started
    started=$(date -u '+%Y-%m-%d %H:%M')
    say "$name: $cmd"
    local t0=$SECONDS
    "$@" >"$out/$name.md.part" || die "$name failed: $cmd"
    mv "$out/$name.md.part" "$out/$name.md"
    record_run "$name" "$started" $((SECONDS - t0)) "$cmd"
}

# ---- the seen-test's tiers, n = 10^7 -----------------------------------
want dedup && step dedup "$bin/bench/bench_dedup" "${dedup_args[@]}" \
    --csv "$out/dedup.csv"

# ---- the seen-test against n, beside an exact set ----------------------
want scale && step scale "$bin/bench/bench_scale" --sizes "$scale_sizes" \
    --exact-max 10000000 --csv "$out/scale.csv"

# ---- the seen-test against its filter, paired rounds (issue 25 sect. 3) -
want scale-pairs && step scale-pairs "$bin/bench/bench_scale" \
    "${pairs_args[@]}" --cpu-time --csv "$out/scale-pairs.csv"

# ---- false-positive rate, measured against predicted -------------------
want fpr && step fpr "$bin/bench/bench_fpr" "${fpr_args[@]}" \
    --csv "$out/fpr.csv"

# ---- the sliding-window filter against rotation (issue 14) -------------
want window && step window "$bin/bench/bench_window" "${window_args[@]}" \
    --csv "$out/window.csv" --curve "$out/window-fpr.csv"

# ---- the seen-test shared in Redis (issue 15), n = 10^7 ----------------
# (it starts its own redis-server on 127.0.0.1:6390; skipped without one)
# (--few-k 1: beside the default, bc_redis_seen_create_k() at one probe a
# key, the least server CPU for ten times the bits)
if want redis_seen && command -v redis-server >/dev/null; then
    redis_args=(--full --few-k 1)
    [ "$quick" = 1 ] && redis_args=(--few-k 1)
    step redis_seen "$bin/bench/bench_redis_seen" "${redis_args[@]}"
fi

# ---- crawl workers' handoff through Redis Streams (issue 15) -----------
# (it starts its own redis-server on a unix socket; skipped without one)
if want handoff && command -v redis-server >/dev/null; then
    handoff_args=()
    [ "$quick" = 1 ] && handoff_args=(--urls 20000)
    step handoff "$bin/bench/bench_handoff" "${handoff_args[@]}"
fi

# ---- the normalizer against libcurl's URL API --------------------------
if want url; then
    python3 bench/gen_url_corpus.py --pairs "$url_pairs" >"$tmp/pairs.tsv"
    shown_cmd="python3 bench/gen_url_corpus.py --pairs $url_pairs"
    shown_cmd+=" > TMP/pairs.tsv; build-rel/bench/bench_url TMP/pairs.tsv"
    shown_cmd+=" $url_runs --csv $out/url.csv"
    step url "$bin/bench/bench_url" "$tmp/pairs.tsv" "$url_runs" \
        --csv "$out/url.csv"
    shown_cmd=
fi

# ---- urldedup, lines per second ----------------------------------------
# run_urldedup: urldedup over the corpus urldedup_runs times; CSV of each
# run's wall and CPU seconds and lines per second, Markdown with medians.
run_urldedup() {
    local csv=$out/urldedup.csv
    echo "run,lines,wall_s,cpu_s,lines_per_s,lines_out" >"$csv.part"
    echo "## urldedup on $urldedup_lines lines (bench/gen_url_corpus.py)"
    echo
    echo "| run | wall s | user+sys s | M lines/s (wall) | lines out |"
    echo "|---:|---:|---:|---:|---:|"
    for r in $(seq 1 "$urldedup_runs"); do
        /usr/bin/time -f '%e %U %S' -o "$tmp/time" \
            "$bin/examples/urldedup" --expect 2e6 <"$tmp/urls.txt" \
            >"$tmp/urldedup.out"
        read -r wall user sys <"$tmp/time"
        local lines_out
        lines_out=$(wc -l <"$tmp/urldedup.out")
        python3 - "$r" "$urldedup_lines" "$wall" "$user" "$sys" \
            "$lines_out" "$csv.part" <<'EOF'
import sys
r, lines, wall, user, sys_s, out, csv = sys.argv[1:]
lines, wall, cpu = int(lines), float(wall), float(user) + float(sys_s)
rate = lines / wall if wall > 0 else float("nan")
with open(csv, "a") as f:
    f.write(f"{r},{lines},{wall:.2f},{cpu:.2f},{rate:.0f},{out}\n")
print(f"| {r} | {wall:.2f} | {cpu:.2f} | {rate / 1e6:.2f} | {out} |")
EOF
    done
    mv "$csv.part" "$csv"
}
if want urldedup; then
    python3 bench/gen_url_corpus.py --lines "$urldedup_lines" >"$tmp/urls.txt"
    shown_cmd="python3 bench/gen_url_corpus.py --lines $urldedup_lines"
    shown_cmd+=" > TMP/urls.txt; $urldedup_runs x: /usr/bin/time"
    shown_cmd+=" build-rel/examples/urldedup --expect 2e6 < TMP/urls.txt"
    step urldedup run_urldedup
    shown_cmd=
fi

# ---- the frontier ------------------------------------------------------
want frontier && step frontier "$bin/bench/bench_frontier" \
    "${frontier_args[@]}" --csv "$out/frontier.csv"

# ---- the crawl state's store: admissions per second (issue 25 sect. 2) --
want state && step state "$bin/bench/bench_state" --dir "$tmp/state" \
    "${state_args[@]}" --csv "$out/state.csv"
rm -rf "$tmp/state"

# ---- link extraction against libxml2, two manuals (issue 12) ------------
# (bench_links.sh builds its own Release tree with libxml2, build-bench/)
if want links; then
    shown_cmd="bench/bench_links.sh $links_runs"
    step links bench/bench_links.sh "$links_runs"
    shown_cmd=
fi

# ---- simhash: the fingerprint per byte, the index at 10^7 (issue 24) ----
if want simhash; then
    pg=/usr/share/doc/postgresql-doc-15/html
    py=/usr/share/doc/python3.11/html
    if [ -d "$pg" ] && [ -d "$py" ]; then
        step simhash "$bin/bench/bench_simhash" "${simhash_args[@]}" "$pg" "$py"
    else
        say "simhash: skipped, $pg or $py missing (bench/bench_links.sh" \
            "installs them)"
    fi
fi

# ---- the crawl against wget2 (writes crawl.md and crawl.csv itself) ----
if [ "$crawl" = 1 ] && want crawl; then
    started=$(date -u '+%Y-%m-%d %H:%M')
    if [ "$quick" = 1 ]; then
        # bench_crawl.sh writes into bench/results/; keep the real ones.
        say "crawl (quick): not run, bench_crawl.sh always writes" \
            "bench/results/; run it alone to check it"
    else
        say "crawl: bench/bench_crawl.sh ${crawl_args[*]}"
        t0=$SECONDS
        bench/bench_crawl.sh "${crawl_args[@]}" >/dev/null
        record_run crawl "$started" $((SECONDS - t0)) \
            "bench/bench_crawl.sh ${crawl_args[*]}"
    fi
fi

# ---- the PostgreSQL manual against wget2 (writes crawl-postgres.md/.csv) --
if [ "$crawl" = 1 ] && want crawl-postgres; then
    started=$(date -u '+%Y-%m-%d %H:%M')
    if [ "$quick" = 1 ]; then
        say "crawl-postgres (quick): not run, bench_crawl.sh always writes" \
            "bench/results/; run it alone to check it"
    else
        say "crawl-postgres: bench/bench_crawl.sh --site postgres" \
            "${crawl_pg_args[*]}"
        t0=$SECONDS
        bench/bench_crawl.sh --site postgres "${crawl_pg_args[@]}" >/dev/null
        record_run crawl-postgres "$started" $((SECONDS - t0)) \
            "bench/bench_crawl.sh --site postgres ${crawl_pg_args[*]}"
    fi
fi

# ---- the crawl bare, with --warc, --state and both (issue 25) -----------
if [ "$crawl" = 1 ] && want features; then
    for site in postgres generated; do
        args=("${features_pg_args[@]}")
        [ "$site" = postgres ] || args=("${features_gen_args[@]}")
        step "features-$site" bench/bench_warc.sh --site "$site" \
            "${args[@]}" --variants warc,state,all \
            --csv "$out/features-$site.csv"
    done
fi

# ---- crawl workers: 1 against 2 (writes workers.md and .csv itself) ------
if [ "$crawl" = 1 ] && want workers; then
    started=$(date -u '+%Y-%m-%d %H:%M')
    if [ "$quick" = 1 ]; then
        say "workers (quick): not run, bench_workers.py always writes" \
            "bench/results/; run it alone to check it"
    else
        say "workers: python3 bench/bench_workers.py"
        t0=$SECONDS
        python3 bench/bench_workers.py --crawl "$bin/examples/crawl" >/dev/null
        record_run workers "$started" $((SECONDS - t0)) \
            "python3 bench/bench_workers.py"
    fi
fi

# ---- the scale run (--billion) -----------------------------------------
if [ "$billion" = 1 ]; then
    want scale-big && step scale-big "$bin/bench/bench_scale" \
        --sizes "$big_sizes" --structures bloom,seen --calls batch \
        --csv "$out/scale-big.csv"
    # One call at a time at 10^9: every probe waits for DRAM (~40 minutes).
    want scale-big-scalar && step scale-big-scalar "$bin/bench/bench_scale" \
        --sizes "$big_sizes" --structures bloom,seen --calls scalar \
        --csv "$out/scale-big-scalar.csv"
    # The exact set at 10^8 needs ~15 GB: only when that much is free.
    avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
    exact_n=100000000
    [ "$quick" = 1 ] && exact_n=10000000
    if want scale-exact; then
        if [ "$avail_kb" -gt $((exact_n / 1000 * 200)) ]; then
            step scale-exact "$bin/bench/bench_scale" --sizes "$exact_n" \
                --structures exact --exact-max "$exact_n" \
                --csv "$out/scale-exact.csv"
        else
            say "exact set at n = $exact_n skipped: $avail_kb kB available"
        fi
    fi
    if want billion; then
        for layout in classic blocked; do
            step "billion-$layout" "$bin/bench/bench_scale" --billion \
                --layout "$layout" "${billion_args[@]}" \
                --csv "$out/billion-$layout.csv"
        done
    fi
fi

# ---- the report and the pictures ---------------------------------------
say "summary and plots in $out/"
python3 bench/summarize.py "$out"
# The pictures need every CSV they draw from; a first run with --only
# has some of them only.
plot_csvs=(fpr.csv scale.csv window-fpr.csv)
plot_missing=()
for f in "${plot_csvs[@]}"; do
    [ -f "$out/$f" ] || plot_missing+=("$f")
done
if [ ${#plot_missing[@]} -eq 0 ]; then
    gnuplot -e "results='$out'" bench/plots.gp
else
    say "pictures not drawn: no ${plot_missing[*]} in $out/ yet"
fi
say "done: $out/summary.md"
