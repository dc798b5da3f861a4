#!/usr/bin/env bash
# tests/test_install.sh - the installed package works from any prefix.
#
#   test_install.sh SOURCE_DIR BUILD_DIR C_COMPILER [SANITIZE]
#
# Installs the build (static libraries, the default) to a temporary prefix
# that is not the configured one, then builds the outside program
# tests/install/app.c against it twice: with CMake find_package(bloomcrawl)
# and with `cc app.c $(pkg-config --cflags --libs bloomcrawl)`, the
# README's line, and runs both; checks the tools' manual pages are
# installed. Then the same with shared libraries: a
# second, library-only build with -DBUILD_SHARED_LIBS=ON (in
# BUILD_DIR/install-shared, kept between runs), whose libraries must carry
# the versioned SONAME libbloomcrawl-NAME.so.MAJOR.
#
# SANITIZE is the build's BC_SANITIZE (e.g. address,undefined): static
# libraries compiled with sanitizers need them on the outside program too.
set -euo pipefail
src=$1 build=$2 cc=$3 sanitize=${4:-}
san_flags=()
[ -n "$sanitize" ] && san_flags=(-fsanitize="$sanitize")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bc_install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# outside_builds KIND PREFIX: build and run app.c both ways against PREFIX.
outside_builds() {
    local kind=$1 prefix=$2 pcdir out
    pcdir=$(dirname "$(find "$prefix" -name bloomcrawl.pc | head -1)")
    if PKG_CONFIG_PATH=$pcdir "$cc" "${san_flags[@]}" \
        "$src/tests/install/app.c" -o "$tmp/app-pc-$kind" \
        $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs bloomcrawl) \
        2>"$tmp/err"; then
        ok "$kind: cc app.c \$(pkg-config --cflags --libs bloomcrawl) links"
        out=$(LD_LIBRARY_PATH=$(dirname "$pcdir") "$tmp/app-pc-$kind") &&
            [ "${out%% *}" = ok ] &&
            ok "$kind: the pkg-config build runs ($out)" ||
            fail "$kind: the pkg-config build runs: $out"
    else
        cat "$tmp/err" | head -20
        fail "$kind: cc app.c \$(pkg-config --cflags --libs bloomcrawl) links"
    fi
    if cmake -S "$src/tests/install" -B "$tmp/app-$kind" \
        -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_C_FLAGS="${san_flags[*]}" >"$tmp/log" 2>&1 &&
        cmake --build "$tmp/app-$kind" >>"$tmp/log" 2>&1; then
        ok "$kind: find_package(bloomcrawl) builds the outside program"
        out=$("$tmp/app-$kind/app") && [ "${out%% *}" = ok ] &&
            ok "$kind: the CMake build runs ($out)" ||
            fail "$kind: the CMake build runs: $out"
    else
        tail -20 "$tmp/log"
        fail "$kind: find_package(bloomcrawl) builds the outside program"
    fi
}

cmake --install "$build" --prefix "$tmp/static" >/dev/null
outside_builds static "$tmp/static"
# The manual pages go with the programs (GNUInstallDirs: share/man/man1).
if [ -e "$build/examples/bloomcalc" ]; then
    for t in crawl urldedup bloomcalc robotstxt seendemo; do
        page=$(find "$tmp/static" -path "*/man1/$t.1" | head -1)
        [ -n "$page" ] && cmp -s "$page" "$src/docs/man/$t.1" &&
            ok "the manual page $t.1 is installed (${page#"$tmp/static/"})" ||
            fail "the manual page $t.1 is installed in PREFIX/share/man/man1"
    done
fi

shared=$build/install-shared
cmake -S "$src" -B "$shared" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_BUILD_TYPE=Debug -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF \
    -DBC_BUILD_EXAMPLES=OFF -DBC_BUILD_BENCH=OFF -DBC_BUILD_PYTHON=OFF \
    -DBC_SANITIZE= >/dev/null
cmake --build "$shared" -j 2 >"$tmp/log" 2>&1 || {
    tail -20 "$tmp/log"
    fail "shared: the library builds with -DBUILD_SHARED_LIBS=ON"
}
cmake --install "$shared" --prefix "$tmp/shared" >/dev/null
major=$(sed -n 's/^#define BC_VERSION_MAJOR *//p' \
    "$tmp/shared/include/bloomcrawl/version.h" 2>/dev/null || true)
for m in common dedup redis frontier fetcher crawler; do
    lib=$(find "$tmp/shared" -name "libbloomcrawl-$m.so" | head -1)
    soname=$(readelf -d "$lib" 2>/dev/null |
        sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ -n "$major" ] && [ "$soname" = "libbloomcrawl-$m.so.$major" ] &&
        [ -e "$(dirname "$lib")/$soname" ] &&
        ok "shared: $m has SONAME $soname, installed" ||
        fail "shared: $m's SONAME is '$soname', want libbloomcrawl-$m.so.MAJOR ($major)"
done
outside_builds shared "$tmp/shared"

echo "$failures failed"
[ "$failures" -eq 0 ]
