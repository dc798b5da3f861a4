#!/usr/bin/env bash
# tests/test_urldedup.sh URLDEDUP - end-to-end tests of the urldedup tool
# (docs/DESIGN.md 5): modes, exit codes, state files, dry runs, opt-in rules,
# invalid and awkward input, the RFC 3986 5.4 table (from tests/data).
# Registered with ctest.
set -euo pipefail
bin=$1
. "$(dirname "$0")/check.sh"

# ---- exit codes ----
check "--help exits 0" 0 "$(status "$bin" --help)"
check "unknown option exits 2" 2 "$(status "$bin" --bogus)"
check "missing value exits 2" 2 "$(status "$bin" --expect)"
check "bad --fp-rate exits 2" 2 "$(status "$bin" --fp-rate 2)"
check "bad --layout exits 2" 2 "$(status "$bin" --layout round)"
check "bad --base exits 2" 2 "$(status "$bin" --base mailto:x)"
check "--canonical --state exits 2" 2 \
    "$(status "$bin" --canonical --state "$tmp/s")"
check "flag with a value exits 2" 2 "$(status "$bin" --stats=1)"
check "--help names --strip-param" 1 \
    "$("$bin" --help | grep -c -- '--strip-param NAME')"

# ---- dedup: equivalent spellings count once ----
out=$(printf '%s\n' \
    'HTTP://Example.COM:80/a/./b/../c/%7Efred?x=1#top' \
    'http://example.com/a/c/~fred?x=1' \
    'http://example.com./a/c/%7efred?x=1' \
    'http://example.com/a/c/~fred?x=2' \
    'http://www.example.com/a/c/~fred?x=1' \
    'http://example.com/a/c/~fred?x=1' | "$bin" 2>/dev/null)
check "dedup merges spellings" \
    "$(printf '%s\n' 'http://example.com/a/c/~fred?x=1' \
        'http://example.com/a/c/~fred?x=2' \
        'http://www.example.com/a/c/~fred?x=1')" "$out"

# ---- invalid lines: reported with line numbers, counted, run goes on ----
printf '%s\n' 'http://a/' 'mailto:x@y' '' 'http://a:99999/' 'http://b/' \
    >"$tmp/mixed"
set +e
"$bin" <"$tmp/mixed" >"$tmp/out" 2>"$tmp/err"
rc=$?
set -e
check "invalid lines: exit 0" 0 "$rc"
check "invalid lines: valid ones written" "$(printf 'http://a/\nhttp://b/')" \
    "$(cat "$tmp/out")"
check "invalid lines: line 2 reported" 1 \
    "$(grep -c '^urldedup: line 2: unsupported scheme' "$tmp/err")"
check "invalid lines: line 3 reported" 1 \
    "$(grep -c '^urldedup: line 3: empty URL' "$tmp/err")"
check "invalid lines: line 4 reported" 1 \
    "$(grep -c '^urldedup: line 4: bad port' "$tmp/err")"

# ---- --canonical: one line out per line in ----
out=$(printf '%s\n' 'HTTP://A/b/../c' 'ftp://x/' 'http://[::1' \
    'http://1.2.3.256/' 'http://a/' 'http://a/' '' | "$bin" --canonical \
    2>/dev/null)
check "--canonical" "$(printf '%s\n' 'http://a/c' 'ERROR unsupported-scheme' \
    'ERROR bad-ipv6' 'ERROR bad-ipv4' 'http://a/' 'http://a/' 'ERROR empty')" \
    "$out"

# ---- IDN hosts as browsers convert them (UTS #46, tests/data/idn) ----
out=$(printf 'https://i\xe2\x9d\xa4.ws/\nhttps://%%e2%%98%%83\nhttp://\xf0\x9f\x92\xa9.la/\nhttp://xn--a/\nhttp://fa\xc3\x9f.de/\n' |
    "$bin" --canonical 2>/dev/null)
check "--canonical IDN hosts" "$(printf '%s\n' 'https://xn--i-7iq.ws/' \
    'https://xn--n3h/' 'http://xn--ls8h.la/' 'ERROR bad-idn' \
    'http://xn--fa-hia.de/')" "$out"

# ---- --base ----
out=$(printf '%s\n' 'g' '../x?y#z' '//other/p' | "$bin" --canonical \
    --base 'http://a/b/c/d;p?q')
check "--base" "$(printf '%s\n' 'http://a/b/c/g' 'http://a/b/x?y' \
    'http://other/p')" "$out"
# A blank line is the empty reference: with --base it is the base itself
# (RFC 3986 5.4.1), in both modes; without --base it is an error (above).
out=$(printf '\n \t\ng\n' | "$bin" --canonical --base 'http://a/b/c/d;p?q')
check "--canonical --base: a blank line is the base" \
    "$(printf '%s\n' 'http://a/b/c/d;p?q' 'http://a/b/c/d;p?q' \
        'http://a/b/c/g')" "$out"
out=$(printf '\ng\n\nhttp://a/b/c/d;p?q#f\n' | "$bin" \
    --base 'http://a/b/c/d;p?q')
check "dedup --base: a blank line is the base, counted once" \
    "$(printf '%s\n' 'http://a/b/c/d;p?q' 'http://a/b/c/g')" "$out"

# ---- the RFC 3986 5.4 table, all 42 examples, through the tool ----
# tests/data/conformance/rfc3986/resolution.tsv: the examples of RFC 3986
# section 5.4 (IETF Trust), base http://a/b/c/d;p?q; column 4 is the fetch
# URL the default policy gives (or ERROR <reason>). The empty reference is
# the blank line.
rfc="$(dirname "$0")/data/conformance/rfc3986/resolution.tsv"
if [ ! -f "$rfc" ]; then
    echo "FAIL: $rfc is missing"
    exit 1
fi
grep -v '^#' "$rfc" | tail -n +2 >"$tmp/rfc"
cut -f2 "$tmp/rfc" >"$tmp/rfc.in"
cut -f4 "$tmp/rfc" >"$tmp/rfc.want"
check "RFC 3986 5.4 table has 42 rows" 42 "$(wc -l <"$tmp/rfc.in" | tr -d ' ')"
"$bin" --canonical --base 'http://a/b/c/d;p?q' <"$tmp/rfc.in" \
    >"$tmp/rfc.got" 2>/dev/null
check "RFC 3986 5.4 through urldedup (42 rows)" \
    "$(cat "$tmp/rfc.want")" "$(cat "$tmp/rfc.got")"
pass=$(paste -d '\n' "$tmp/rfc.want" "$tmp/rfc.got" | paste - - |
    awk -F'\t' '$1 == $2' | wc -l | tr -d ' ')
echo "RFC 3986 5.4 through urldedup: $pass/42 rows pass"
check "RFC 3986 5.4: 42/42" 42 "$pass"

# ---- awkward input: NUL bytes, CRLF, no final newline, a huge line ----
out=$(printf 'http://h/a\0b\r\nhttp://h/c' | "$bin" --canonical)
check "NUL, CRLF, last line without newline" \
    "$(printf 'http://h/a%%00b\nhttp://h/c')" "$out"
{
    printf 'http://h/first\nhttp://h/'
    head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' 'x'
    printf '\nhttp://h/last\n'
} >"$tmp/huge"
out=$("$bin" --canonical <"$tmp/huge" 2>/dev/null)
check "a 5 MiB line is too long, the run goes on" \
    "$(printf 'http://h/first\nERROR too-long\nhttp://h/last')" "$out"
out=$(printf 'http://h/%02000d\nhttp://h/%02040d\n' 0 0 | "$bin" --canonical \
    2>/dev/null | cut -c1-14)
check "2048 bytes accepted, 2050 rejected" \
    "$(printf 'http://h/00000\nERROR too-long')" "$out"
out=$(printf 'http://h/%020d\n' 0 | "$bin" --canonical --max-length 20 \
    2>/dev/null)
check "--max-length" "ERROR too-long" "$out"

# ---- opt-in rules change what is the same, never the URL printed ----
in=$(printf '%s\n' 'http://u:p@h//a?b=1&a=2&utm_source=x&sid=9' \
    'http://h/a?a=2&b=1' 'http://h/a?a=2&b=1&utm_medium=y')
check "no rule: all three new" 3 "$(printf '%s\n' "$in" | "$bin" | wc -l)"
out=$(printf '%s\n' "$in" | "$bin" --sort-query --strip-param 'utm_*' \
    --strip-session-ids --collapse-slashes --strip-userinfo)
check "all rules: one URL, printed as it came" \
    'http://u:p@h//a?b=1&a=2&utm_source=x&sid=9' "$out"
check "--sort-query alone" 2 "$(printf '%s\n' 'http://h/?b=1&a=2' \
    'http://h/?a=2&b=1' 'http://h/?a=2&b=1&c' | "$bin" --sort-query | wc -l)"
check "--strip-param=NAME form" 1 "$(printf '%s\n' 'http://h/?gclid=1' \
    'http://h/' | "$bin" --strip-param=gclid | wc -l)"

# ---- --state: a second run reports only what is new to both runs ----
seq 1 2000 | sed 's|^|http://h/p|' >"$tmp/A"
seq 2001 3000 | sed 's|^|http://h/p|' >"$tmp/C"
"$bin" --state "$tmp/seen.bloom" --expect 10000 --fp-rate 0.0001 \
    <"$tmp/A" >"$tmp/out1"
check "state: first run writes all" 2000 "$(wc -l <"$tmp/out1")"
check "state: file saved" yes "$([ -s "$tmp/seen.bloom" ] && echo yes)"
cat "$tmp/A" "$tmp/C" | "$bin" --state "$tmp/seen.bloom" >"$tmp/out2"
# every URL of C is new; a Bloom false positive (p = 10^-4) may hide one
n=$(wc -l <"$tmp/out2")
check "state: second run writes only C" yes \
    "$([ "$n" -ge 997 ] && [ "$n" -le 1000 ] &&
        ! grep -qx 'http://h/p1' "$tmp/out2" && echo yes)"
# a save killed midway leaves seen.bloom.tmp.<pid>: the next save removes
# it once that process is gone (not a live process's)
dead=$(sh -c 'echo $$')
echo x >"$tmp/seen.bloom.tmp.$dead"
echo x >"$tmp/seen.bloom.tmp.$$"
"$bin" --state "$tmp/seen.bloom" <"$tmp/C" >/dev/null
check "state: a dead process's temporary file removed" no \
    "$([ -e "$tmp/seen.bloom.tmp.$dead" ] && echo yes || echo no)"
check "state: a live process's temporary file kept" yes \
    "$([ -e "$tmp/seen.bloom.tmp.$$" ] && echo yes || echo no)"
rm -f "$tmp/seen.bloom.tmp.$$"
sum=$(cksum <"$tmp/seen.bloom")
check "state: third run writes nothing" 0 \
    "$(cat "$tmp/A" "$tmp/C" | "$bin" --state "$tmp/seen.bloom" | wc -l)"

# ---- --dry-run: report, change nothing ----
# a save killed midway leaves seen.bloom.tmp.<pid>: the next save removes
# it once that process is gone (not a live process's)
dead=$(sh -c 'echo $$')
echo x >"$tmp/seen.bloom.tmp.$dead"
echo x >"$tmp/seen.bloom.tmp.$$"
"$bin" --state "$tmp/seen.bloom" <"$tmp/C" >/dev/null
check "state: a dead process's temporary file removed" no \
    "$([ -e "$tmp/seen.bloom.tmp.$dead" ] && echo yes || echo no)"
check "state: a live process's temporary file kept" yes \
    "$([ -e "$tmp/seen.bloom.tmp.$$" ] && echo yes || echo no)"
rm -f "$tmp/seen.bloom.tmp.$$"
sum=$(cksum <"$tmp/seen.bloom")
seq 3001 4000 | sed 's|^|http://h/p|' >"$tmp/D"
n=$("$bin" --state "$tmp/seen.bloom" --dry-run <"$tmp/D" | wc -l)
check "dry run: reports the unseen (all but false positives)" yes \
    "$([ "$n" -ge 995 ] && [ "$n" -le 1000 ] && echo yes)"
check "dry run: state unchanged" "$sum" "$(cksum <"$tmp/seen.bloom")"
n=$("$bin" --state "$tmp/seen.bloom" <"$tmp/D" | wc -l)
check "dry run: then a real run still finds them new" yes \
    "$([ "$n" -ge 995 ] && echo yes)"

# ---- a damaged state file: exit 1, file left alone ----
printf 'not a bloom filter' >"$tmp/bad.bloom"
check "damaged state exits 1" 1 \
    "$(status "$bin" --state "$tmp/bad.bloom")"
check "damaged state left alone" "not a bloom filter" "$(cat "$tmp/bad.bloom")"

# ---- --stats: every counter on stderr ----
printf '%s\n' 'http://a/' 'http://a/' 'bad:x' | "$bin" --stats \
    2>"$tmp/stats" >/dev/null
for word in 'lines 3' 'valid 2' 'invalid 1' 'new 1' 'duplicate 1' \
    'probably-seen 0' 'false positives caught' 'evictions' 'MiB' \
    'estimated FPR' 'unsupported-scheme 1'; do
    check "--stats shows '$word'" 1 "$(grep -c -- "$word" "$tmp/stats")"
done

if [ "$fails" -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "all urldedup checks passed"
