#!/usr/bin/env bash
# tests/test_python_pip.sh SRC PYTHON - the documented offline install of
# the Python package, `pip install --no-build-isolation ./python`, into a
# fresh venv (with the system's site packages: cffi, pytest), from a copy
# of the sources (pip builds in the tree: the checkout stays clean), then
# the bindings' unit tests and the dupefilter's against the installed
# package, with every C module it compiled in: the rest of python/tests
# (the scheduler, Redis and the Scrapy crawls of the sample site) runs in
# python_bloomcrawl, python_scrapy_kill and python_scrapy_redis on the same
# code, and would double the minute this test takes.
set -euo pipefail
src=$1
py=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
(cd "$src" && tar cf - CMakeLists.txt python/setup.py \
    python/bloomcrawl_build.py python/bloomcrawl common dedup frontier \
    fetcher crawler) | tar xf - -C "$tmp/src"
if ! "$py" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1
then
    cat "$tmp/venv.log"
    echo "SKIP: no venv with pip (apt-get install python3-venv)"
    exit 77
fi
"$tmp/venv/bin/pip" install -q --no-build-isolation --no-index \
    "$tmp/src/python"
cd "$tmp"
"$tmp/venv/bin/python" -c 'import bloomcrawl, sys
assert bloomcrawl.__file__.startswith(sys.argv[1]), bloomcrawl.__file__
print("installed:", bloomcrawl.__file__)' "$tmp/venv"
PYTHONDONTWRITEBYTECODE=1 "$tmp/venv/bin/python" -m pytest -q \
    -p no:cacheprovider "$src/python/tests/test_bloomcrawl.py" \
    "$src/python/tests/test_frontier.py" \
    "$src/python/tests/test_redis_seen.py" \
    "$src/python/tests/test_scrapy_dupefilter.py"
