# bench/plots.gp - the pictures of scripts/bench.sh, from its CSVs.
#
#   gnuplot -e "results='bench/results'" bench/plots.gp
#
# fpr.png            measured (points) and predicted (lines) false-positive
#                    rate against bits per key, classic, blocked and
#                    counting filters, with the lower bound 2^-b that no
#                    structure of b bits per key can beat (fpr.csv)
# ns_per_url.png     ns per test-and-add of a new URL string against n, for
#                    each layout (bare filter and two-tier seen-test) and the
#                    exact hash set (scale*.csv)
# bytes_per_url.png  memory per URL against n, the same structures
# window-fpr.png     false-positive rate over one stream of 20 W keys: a
#                    plain filter sized for W (climbing), generation
#                    rotation G = 2 and 4 (saw-tooth) and the sliding
#                    window (rotation's G = 4 teeth, at or below p; points
#                    W/4 apart alias its W/3 generations), with the
#                    window's prediction (window-fpr.csv, bench_window
#                    --curve)
if (!exists("results")) results = 'bench/results'

set terminal pngcairo size 1000,650 font "Sans,11"
set datafile separator ","
set key bottom left box opaque
set grid

# ---- false-positive rate against bits per key --------------------------
fpr = results . '/fpr.csv'
sel(layout) = sprintf("< awk -F, '$2 == \"%s\"' %s", layout, fpr)
set output results . '/fpr.png'
set title "False-positive rate against memory, n = 10^6 keys, 10^7 absent keys queried"
set xlabel "bits per key (m / n)"
set ylabel "false-positive rate (log scale)"
set logscale y
set format y "10^{%L}"
set xrange [3.5:24.5]
set xtics 4,2,24
plot sel("classic")  using 1:5 with lines lw 2 lc rgb "#1f77b4" title "classic, predicted (1 - e^{-kn/m})^k", \
     sel("classic")  using 1:6 with points pt 7 ps 1.1 lc rgb "#1f77b4" title "classic, measured", \
     sel("blocked")  using 1:5 with lines lw 2 lc rgb "#d62728" title "blocked (512-bit blocks), predicted (Poisson mixture)", \
     sel("blocked")  using 1:6 with points pt 5 ps 1.1 lc rgb "#d62728" title "blocked, measured", \
     sel("counting") using 1:6 with points pt 6 ps 1.8 lc rgb "#2ca02c" title "counting (4-bit counters, 4x memory), measured", \
     sel("classic")  using 1:9 with lines lw 2 dt 2 lc rgb "black" title "lower bound 2^{-b} (b >= log_2(1/p))"

# ---- ns per URL against n ----------------------------------------------
scale = "cat " . results . "/scale.csv " . results . "/scale-big.csv " . results . "/scale-big-scalar.csv " . results . "/scale-exact.csv 2>/dev/null"
row(structure, calls) = sprintf("< %s | awk -F, '$2 == \"%s\" && $3 == \"%s\" && $4 == \"strings\"' | sort -t, -k1,1n", scale, structure, calls)
unset logscale
unset format
set xtics autofreq
set autoscale
set output results . '/ns_per_url.png'
set title "Time per new URL (test-and-add of a URL string, XXH3 hash included) against n, p = 1 %"
set xlabel "n, URLs inserted (log scale)"
set ylabel "ns per URL (log scale)"
set logscale xy
set format x "10^{%L}"
set format y "%g"
set xrange [*:*]
set autoscale xfix
set offsets graph 0.05, graph 0.05, 0, 0
set key top left box opaque
plot row("classic", "scalar")      using 1:5 with linespoints lw 2 pt 7 dt 2 lc rgb "#1f77b4" title "Bloom classic, one call per URL", \
     row("classic", "batch")       using 1:5 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "Bloom classic, batch", \
     row("blocked", "scalar")      using 1:5 with linespoints lw 2 pt 5 dt 2 lc rgb "#d62728" title "Bloom blocked, one call per URL", \
     row("blocked", "batch")       using 1:5 with linespoints lw 2 pt 5 lc rgb "#d62728" title "Bloom blocked, batch", \
     row("seen-classic", "batch")  using 1:5 with linespoints lw 2 pt 9 lc rgb "#9467bd" title "seen-test (classic + LRU 50,000), batch", \
     row("seen-blocked", "batch")  using 1:5 with linespoints lw 2 pt 11 lc rgb "#ff7f0e" title "seen-test (blocked + LRU 50,000), batch", \
     row("exact-uthash", "scalar") using 1:5 with linespoints lw 2 pt 13 lc rgb "black" title "exact set (uthash, key copies)"

# ---- memory per URL against n ------------------------------------------
set output results . '/bytes_per_url.png'
set title "Memory per URL against n, p = 1 %"
set ylabel "bytes per URL (log scale)"
set key top right box opaque
set yrange [0.5:1000]
plot row("classic", "batch")       using 1:9 with linespoints lw 2 pt 7 lc rgb "#1f77b4" title "Bloom classic", \
     row("blocked", "batch")       using 1:9 with linespoints lw 2 pt 5 lc rgb "#d62728" title "Bloom blocked", \
     row("seen-blocked", "batch")  using 1:9 with linespoints lw 2 pt 11 lc rgb "#ff7f0e" title "seen-test: blocked filter + LRU of 50,000 URLs", \
     row("exact-uthash", "scalar") using 1:9 with linespoints lw 2 pt 13 lc rgb "black" title "exact set (uthash, key copies)"

# ---- false-positive rate over time: plain, rotation, window ------------
wfpr = results . '/window-fpr.csv'
if (system("test -f " . wfpr . " && echo yes") eq "yes") {
    set output results . '/window-fpr.png'
    set title "False-positive rate over one stream, window W, target p = 1 % (keys never inserted, queried every W/4)"
    set xlabel "insertions / W"
    set ylabel "false-positive rate (log scale)"
    unset offsets
    set logscale y
    unset logscale x
    set format x "%g"
    set format y "%g"
    set xrange [0:20.5]
    set yrange [0.0005:1.5]
    set xtics 0,2,20
    set key bottom right box opaque
    plot wfpr using 1:2 skip 1 with linespoints lw 2 pt 7 ps 0.6 lc rgb "black" title "plain blocked filter sized for W (never forgets)", \
         wfpr using 1:3 skip 1 with linespoints lw 2 pt 9 ps 0.6 lc rgb "#1f77b4" title "rotation, G = 2 classic filters (22.1 bits/key)", \
         wfpr using 1:4 skip 1 with linespoints lw 2 pt 5 ps 0.6 lc rgb "#2ca02c" title "rotation, G = 4 classic filters (16.6 bits/key)", \
         wfpr using 1:5 skip 1 with linespoints lw 2 pt 11 ps 0.8 lc rgb "#d62728" title "sliding window, G = 4 (18.6 bits/key), measured", \
         wfpr using 1:6 skip 1 with lines lw 1 dt 2 lc rgb "#d62728" title "sliding window, predicted", \
         0.01 with lines lw 1 dt 3 lc rgb "gray" title "target p = 1 %"
}
