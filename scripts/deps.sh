#!/usr/bin/env bash
# scripts/deps.sh - install the Debian packages bloomcrawl needs, if missing.
#
# Sourced or run by demo.sh and test.sh so that both work on a fresh
# Debian 12 / Ubuntu machine with nothing done by hand. Uses sudo when not
# root. Usage: scripts/deps.sh [build|test|workers] (workers: build, and the
# redis-server of demo.sh --workers)
set -euo pipefail

want_build=(build-essential cmake pkg-config python3
    libxxhash-dev uthash-dev libcurl4-openssl-dev
    libicu-dev libpsl-dev libsqlite3-dev zlib1g-dev libisal-dev libssl-dev
    libxml2-dev
    libhiredis-dev libmicrohttpd-dev)
want_test=(clang-format libcmocka-dev curl python3-cffi python3-dev
    python3-pytest python3-venv python3-scrapy
    postgresql-doc-15 python3.11-doc nodejs npm groff-base man-db
    redis-server prometheus chromium)
# (the two manuals are corpora of the parse5 differential test, diff_parse5,
# and the tree e2e_warc crawls; node and npm run parse5 and the WARC reader
# warcio.js; groff renders the manual pages for test_manpages;
# test_redis_seen and bench_redis_seen start their own redis-server;
# e2e_listen_prometheus starts prometheus and runs promtool; crawl --listen
# serves with libmicrohttpd; e2e_status_page renders its page in headless
# chromium; python3-cffi and python3-dev (Python.h: cffi's API mode
# compiles a C extension) build the Python package, python3-pytest runs
# its tests, python_bloomcrawl, python3-scrapy the Scrapy components' tests
# (Debian's Scrapy 2.8; they skip without it), and python3-venv the venv
# of python_pip_install)
# Nice to have: the fuzzers need clang and its runtime; e2e_warc serves the
# manual with nginx's gzip (else python3 -m http.server, no gzip). Tests
# skip or fall back without them.
want_optional=(clang libclang-rt-14-dev nginx)

mode=${1:-build}
pkgs=("${want_build[@]}")
[ "$mode" = test ] && pkgs+=("${want_test[@]}")
[ "$mode" = workers ] && pkgs+=(redis-server)
[ "$mode" = scrapy ] && pkgs+=(python3-cffi python3-dev python3-scrapy)

# have PACKAGE: installed, or (nodejs, npm) its command is on the PATH from
# another source (NodeSource's nodejs bundles npm; Debian's npm would
# conflict with it).
have() {
    case $1 in
    nodejs) command -v node >/dev/null && return 0 ;;
    npm) command -v npm >/dev/null && return 0 ;;
    esac
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'
}

missing=()
for p in "${pkgs[@]}"; do
    have "$p" || missing+=("$p")
done
missing_optional=()
if [ "$mode" = test ]; then
    for p in "${want_optional[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
            missing_optional+=("$p")
    done
fi
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
        echo "deps.sh: need root or sudo to install: ${missing[*]}" >&2
        exit 1
    }
    sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
echo "deps.sh: installing ${missing[*]} ${missing_optional[*]}" >&2
"${sudo_cmd[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
        "${missing_optional[@]}" >/dev/null ||
        echo "deps.sh: optional ${missing_optional[*]} not installed;" \
            "fuzzers will be skipped, e2e_warc serves without gzip" >&2
fi
