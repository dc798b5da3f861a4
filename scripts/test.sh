#!/usr/bin/env bash
# scripts/test.sh - the README's test command (and all that .ci/run runs).
#
# Installs what is missing, checks formatting, builds with warnings as
# errors and AddressSanitizer + UndefinedBehaviorSanitizer in build-test/,
# runs every test with ctest, then builds the libFuzzer targets with clang
# (when available) and runs each for BC_FUZZ_SECONDS (default 15).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc 2>/dev/null || echo 2)

scripts/deps.sh test

echo "== format check (clang-format, .clang-format)"
mapfile -t sources < <(git ls-files '*.c' '*.h' 2>/dev/null ||
    find dedup frontier fetcher tests examples bench -name '*.[ch]')
if [ ${#sources[@]} -gt 0 ]; then
    clang-format --dry-run --Werror "${sources[@]}"
fi

echo "== build (Werror, ASan+UBSan) in build-test/"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBC_WERROR=ON -DBC_SANITIZE=address,undefined >/dev/null
cmake --build build-test -j "$jobs"

echo "== tests"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# One test more than cores: most end-to-end tests wait on their servers
# and sleeps, so a third runs beside two busy ones.
(cd build-test && ctest --output-on-failure -j "$((jobs + 1))")

if command -v clang >/dev/null &&
    [ -n "$(find /usr/lib/llvm-*/lib/clang -name 'libclang_rt.fuzzer*' \
        2>/dev/null | head -1)" ]; then
    echo "== fuzzers (clang, libFuzzer) in build-fuzz/"
    cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBC_FUZZ=ON -DBUILD_TESTING=OFF \
        -DBC_BUILD_BENCH=OFF -DBC_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build build-fuzz -j "$jobs"
    secs=${BC_FUZZ_SECONDS:-15}
    # One fuzzer per core at a time: each runs secs seconds of its own.
    fuzz_one() {
        local f=$1 name work corpus
        name=$(basename "$f")
        corpus="$root/tests/fuzz/corpus/${name#fuzz_}"
        work=$(mktemp -d)
        [ -d "$corpus" ] && cp -r "$corpus/." "$work/"
        if (cd "$work" && "$f" -max_total_time="$secs" -print_final_stats=0 \
            -close_fd_mask=3 "$work" 2>"$work/log"); then
            echo "-- $name for ${secs}s: $(grep -E '^#[0-9]+.*DONE' \
                "$work/log" | tail -1)"
            rm -rf "$work"
        else
            tail -50 "$work/log"
            echo "FUZZ FAILURE: $name" >&2
            return 1
        fi
    }
    pids=()
    fuzz_failed=0
    for f in "$root"/build-fuzz/tests/fuzz/fuzz_*; do
        [ -x "$f" ] || continue
        if [ ${#pids[@]} -ge "$jobs" ]; then
            wait "${pids[0]}" || fuzz_failed=1
            pids=("${pids[@]:1}")
        fi
        fuzz_one "$f" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do
        wait "$p" || fuzz_failed=1
    done
    [ "$fuzz_failed" -eq 0 ] || exit 1
else
    echo "== fuzzers skipped: clang with libFuzzer is not installed"
fi
echo "== all tests passed"
