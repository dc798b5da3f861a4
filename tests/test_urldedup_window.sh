#!/usr/bin/env bash
# tests/test_urldedup_window.sh URLDEDUP - urldedup that forgets (issue 14,
# docs/DESIGN.md 5.2): --window N, --window-time D with --state and a
# given --clock, --forget with --layout counting, and the refusals.
# Registered with ctest.
set -euo pipefail
bin=$1
. "$(dirname "$0")/check.sh"

for i in $(seq 1 300); do echo "http://a.example/p$i"; done >"$tmp/300"
head -n 1 "$tmp/300" >"$tmp/first"

# ---- --window N: a URL comes out again once N + slack new URLs passed ----
# Without a window: printed once.
check "no window: once" 300 "$(cat "$tmp/300" "$tmp/300" | "$bin" | wc -l)"
# --window 1000 holds all 300: the repeat is a duplicate.
check "window 1000: once" 300 \
    "$(cat "$tmp/300" "$tmp/300" | "$bin" --window 1000 | wc -l)"
# --window 30 (G = 4, g = 10): p1 is forgotten after at most 40 new URLs,
# kept through 30: every line of the second pass is new again.
check "window 30: again" 600 \
    "$(cat "$tmp/300" "$tmp/300" | "$bin" --window 30 --fp-rate 1e-4 | wc -l)"
# Inside the window: p1, then 29 others, then p1 again is a duplicate.
out=$( (cat "$tmp/first"; sed -n 2,30p "$tmp/300"; cat "$tmp/first") |
    "$bin" --window 30 | wc -l)
check "window 30: p1 inside the window" 30 "$out"

# ---- --window-time D with --state and --clock ----
st="$tmp/s.win"
check "time: first run prints all" 300 \
    "$("$bin" --window-time 1h --fp-rate 1e-4 --state "$st" --clock 1000000000 <"$tmp/300" |
        wc -l)"
check "time: exactly 1h later nothing is new" 0 \
    "$("$bin" --window-time 1h --state "$st" --clock 1003600000 \
        <"$tmp/300" | wc -l)"
# G = 4, d = 20 min: gone once 4 generations old, at most 80 min.
# D has passed but not the slack: the URLs' generation (833, from
# 999,600,000 ms) lives until 1,004,400,000 ms, 74 min after the run.
check "time: 70 min later, D passed, still remembered (the slack)" 0 \
    "$("$bin" --window-time 1h --state "$st" --clock 1004200000 --dry-run \
        <"$tmp/300" | wc -l)"
check "time: --help states the slack of --window-time" 1 \
    "$("$bin" --help | grep -c 'between D and 4/3 D')"
check "time: 81 min later all are new again" 300 \
    "$("$bin" --window-time 1h --state "$st" --clock 1004860000 \
        <"$tmp/300" | wc -l)"
check "time: the clock never goes back" 0 \
    "$("$bin" --window-time 1h --state "$st" --clock 1000000000 \
        <"$tmp/300" | wc -l)"
# A burst: --expect 300 within 1 h is ceil(300 / 3) = 100 per generation
# of 20 min; 300 URLs at one moment put all 300 in one generation (the
# rate far above --fp-rate): a warning on stderr, as for a saturated
# Bloom filter, not only under --stats.
check "time: a burst over a generation's capacity is warned about" 1 \
    "$("$bin" --window-time 1h --expect 300 --clock 1000000000 \
        <"$tmp/300" 2>&1 >/dev/null | grep -c 'warning: the window filter')"
check "time: within its capacity, no warning" 0 \
    "$(head -n 100 "$tmp/300" | "$bin" --window-time 1h --expect 300 \
        --clock 1000000000 2>&1 >/dev/null | grep -c 'warning' || true)"
check "time: --expect on an existing window state: a note says it is ignored" 1 \
    "$("$bin" --window-time 1h --expect 5 --state "$st" </dev/null 2>&1 |
        grep -c 'note: --expect, --fp-rate and --layout are ignored')"
check "time: another window on the state exits 2" 2 \
    "$(status "$bin" --window-time 2h --state "$st")"
check "count window on a time state exits 2" 2 \
    "$(status "$bin" --window 10 --state "$st")"
check "bad --window-time exits 2" 2 "$(status "$bin" --window-time 7)"
check "bad --window exits 2" 2 "$(status "$bin" --window 0)"
check "--canonical --window exits 2" 2 \
    "$(status "$bin" --canonical --window 5)"

# ---- --forget ----
cb="$tmp/s.cb"
check "counting: first run" 300 \
    "$("$bin" --layout counting --state "$cb" <"$tmp/300" | wc -l)"
check "counting: --fp-rate on an existing state: a note says it is ignored" 1 \
    "$("$bin" --fp-rate 0.5 --state "$cb" </dev/null 2>&1 |
        grep -c 'note: --expect, --fp-rate and --layout are ignored')"
echo "HTTP://A.EXAMPLE:80/p7" >"$tmp/gone" # p7, spelled otherwise
check "forget: the forgotten URL is new again" "http://a.example/p7" \
    "$("$bin" --state "$cb" --forget "$tmp/gone" <"$tmp/300")"
check "forget: and remembered again" "" \
    "$("$bin" --state "$cb" <"$tmp/300")"
check "forget on a Bloom layout exits 2" 2 \
    "$(status "$bin" --forget "$tmp/gone")"
check "forget on a Bloom state exits 2" 2 \
    "$(status "$bin" --state "$st" --forget "$tmp/gone")"
msg=$("$bin" --layout blocked --forget "$tmp/gone" </dev/null 2>&1 || true)
case $msg in
*"cannot forget"*) ;;
*) check "forget refusal says why" "cannot forget" "$msg" ;;
esac
check "forget: unreadable file exits 1" 1 \
    "$(status "$bin" --layout counting --forget "$tmp/none")"
check "counting with a window exits 2" 2 \
    "$(status "$bin" --layout counting --window 5)"

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "all urldedup window checks passed"
