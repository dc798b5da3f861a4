# tests/check.sh - sourced by the shell tests: a temporary directory $tmp
# (removed at exit), the failure count $fails, and two helpers.

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# check NAME EXPECTED ACTUAL: count a failure when they differ
check() {
    if [ "$2" != "$3" ]; then
        echo "FAIL: $1"
        echo "  expected: $(printf '%q' "$2")"
        echo "  actual:   $(printf '%q' "$3")"
        fails=$((fails + 1))
    fi
}

# status CMD...: the exit status of a command, without set -e stopping
# the script
status() {
    set +e
    "$@" >/dev/null 2>&1 </dev/null
    local rc=$?
    set -e
    echo $rc
}
