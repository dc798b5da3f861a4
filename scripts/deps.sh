#!/usr/bin/env bash
# scripts/deps.sh - install the Debian packages bloomcrawl needs, if missing.
#
# Sourced or run by demo.sh and test.sh so that both work on a fresh
# Debian 12 / Ubuntu machine with nothing done by hand. Uses sudo when not
# root. Usage: scripts/deps.sh [build|test]
set -euo pipefail

want_build=(build-essential cmake pkg-config python3
    libxxhash-dev uthash-dev libcurl4-openssl-dev
    libicu-dev libpsl-dev libsqlite3-dev zlib1g-dev libssl-dev libxml2-dev)
want_test=(clang-format libcmocka-dev curl
    postgresql-doc-15 python3.11-doc)
# (the two manuals are corpora of the parse5 differential test, diff_parse5)
# Nice to have: the fuzzers need clang and its runtime; tests skip without.
want_optional=(clang libclang-rt-14-dev)

mode=${1:-build}
pkgs=("${want_build[@]}")
[ "$mode" = test ] && pkgs+=("${want_test[@]}")

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
        missing+=("$p")
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
            "fuzzers will be skipped" >&2
fi
