#!/usr/bin/env bash
# tests/tsan_listen.sh - crawl --listen under ThreadSanitizer.
#
# crawl --listen serves from libmicrohttpd's threads while the crawl loop
# runs on the main thread (examples/listen.h: THREADS). This builds crawl
# alone with -fsanitize=thread in build-tsan/ and runs e2e_listen.py's
# poll part: two readers and a controller on every endpoint every 50 ms
# during a crawl of the sample site; ThreadSanitizer must report nothing.
# ctest runs it as e2e_listen_tsan (scripts/test.sh); by hand:
# tests/tsan_listen.sh [JOBS [BUILD_DIR]] (BUILD_DIR: build-tsan/ of the
# source tree by default).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-2}
build=${2:-$root/build-tsan}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBC_SANITIZE=thread -DBUILD_TESTING=OFF -DBC_BUILD_BENCH=OFF \
    -DBC_BUILD_PYTHON=OFF >/dev/null
cmake --build "$build" -j "$jobs" --target crawl >/dev/null
export TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1
python3 "$root/tests/e2e_listen.py" "$build/examples" poll
