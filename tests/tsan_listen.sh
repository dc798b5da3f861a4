#!/usr/bin/env bash
# tests/tsan_listen.sh - crawl --listen under ThreadSanitizer.
#
# crawl --listen serves from libmicrohttpd's threads while the crawl loop
# runs on the main thread (examples/listen.h: THREADS). This builds crawl
# alone with -fsanitize=thread in build-tsan/ and runs e2e_listen.py's
# poll part: two readers and a controller on every endpoint every 50 ms
# during a crawl of the sample site; ThreadSanitizer must report nothing.
# Not in ctest: the extra build of crawl and its libraries takes minutes
# on a small machine (scripts/test.sh keeps to its budget). Usage:
# tests/tsan_listen.sh [JOBS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${1:-2}
cmake -S "$root" -B "$root/build-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DBC_SANITIZE=thread -DBUILD_TESTING=OFF -DBC_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-tsan" -j "$jobs" --target crawl
export TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1
python3 "$root/tests/e2e_listen.py" "$root/build-tsan/examples" poll
