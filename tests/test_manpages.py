#!/usr/bin/env python3
"""The manual pages (docs/man/*.1) against the tools they describe.

    python3 tests/test_manpages.py BUILD_EXAMPLES_DIR MAN_DIR

For crawl, urldedup, bloomcalc, robotstxt, seendemo and neardup (each
whose binary is built):
  - the page renders without a warning: `groff -man -ww -z` (every
    warning category) exits 0 and prints nothing; without groff the test
    is skipped (exit 77; scripts/deps.sh test installs groff-base);
  - it has the sections NAME ("TOOL \\- ..."), SYNOPSIS, DESCRIPTION,
    OPTIONS, EXIT STATUS, EXAMPLES and SEE ALSO, and its .TH line names
    the version that TOOL --version prints;
  - every option that TOOL --help mentions (--word or -letter) is the tag
    of an item (.TP) under OPTIONS; an item tag that --help does not
    mention must be one of issue 13's options, which the page documents
    before the tool has them (so a misspelt option fails);
  - every exit status --help names ("Exit status ..." lines up to the
    next blank line, "exits N") is an item under EXIT STATUS.
And bloomcalc's page states two formulas, checked here against bloomcalc
--json (classic layout): m = ceil(-N ln P / (ln 2)^2), k = round((m/N)
ln 2) (at least 1), and rate = (1 - e^(-K N / M))^K.
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
BIN, MAN = sys.argv[1], sys.argv[2]
TOOLS = ("crawl", "urldedup", "bloomcalc", "robotstxt", "seendemo",
         "neardup")
# Issue 13's options (the helpers' shared contract): documented in
# crawl.1 from the start, in crawl --help once each part is merged.
ISSUE13 = {"--warc", "--warc-max-size", "--sitemaps", "--no-sitemaps",
           "--proxy", "--header", "--accept-type", "--reject-type", "-v",
           "--log"}
ALWAYS = {"-h", "--help", "--version"}
SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
            "EXAMPLES", "SEE ALSO")
OPTION = re.compile(r"(?<![\w\-/.])(--[a-z][a-z0-9]*(?:-[a-z0-9]+)*|-[a-zA-Z])"
                    r"(?![\w\-])")
passes = failures = 0


def check(cond, what):
    global passes, failures
    if cond:
        passes += 1
        print("ok:", what)
    else:
        failures += 1
        print("FAIL:", what)
    return cond


def plain(line):
    """A roff line as text: escapes of the hyphen, fonts and quotes
    undone."""
    line = line.replace("\\-", "-").replace("\\(aq", "'")
    line = line.replace("\\(dq", '"').replace("\\e", "\\")
    line = re.sub(r"\\f[BIRP]|\\f\[[A-Z]*\]|\\&|\\%", "", line)
    return line


def sections(src):
    """{section name: [lines]} of a page's roff source."""
    out, cur = {}, None
    for line in src.splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


def item_tags(lines):
    """The text of each .TP item's tag line."""
    tags = []
    for i, line in enumerate(lines[:-1]):
        if line.strip() == ".TP":
            tag = lines[i + 1]
            tag = re.sub(r"^\.(B|I|BI|IB|BR|RB|IR|RI)\s+", "", tag)
            tags.append(plain(tag).replace('"', " "))
    return tags


def help_exit_codes(text):
    codes = set(re.findall(r"exits? (\d+)", text))
    m = re.search(r"^Exit status.*?(?=^\s*$)", text, re.M | re.S)
    if m:
        codes |= set(re.findall(r"(?<![\w.-])(\d{1,3})(?![\w.%])",
                                m.group(0)))
    return codes


def one_page(tool, groff):
    exe = os.path.join(BIN, tool)
    page = os.path.join(MAN, tool + ".1")
    if not check(os.path.isfile(page), "%s: %s exists" % (tool, page)):
        return
    r = subprocess.run([groff, "-man", "-ww", "-z", page],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and not r.stderr.strip(),
          "%s.1: renders without a warning (groff -man -ww -z)%s" % (
              tool, "" if not r.stderr.strip() else ":\n" + r.stderr))
    with open(page) as f:
        src = f.read()
    secs = sections(src)
    missing = [s for s in SECTIONS if s not in secs]
    check(not missing, "%s.1: sections %s%s" % (
        tool, ", ".join(SECTIONS), "" if not missing else
        "; missing " + ", ".join(missing)))
    name = plain(" ".join(secs.get("NAME", [])))
    check(name.startswith(tool + " - "), "%s.1: NAME is '%s - ...' (%r)"
          % (tool, tool, name[:60]))
    if not os.path.exists(exe):
        print("note: %s is not built: its --help is not compared" % exe)
        return
    helptext = subprocess.run([exe, "--help"], capture_output=True,
                              text=True, timeout=60).stdout
    version = subprocess.run([exe, "--version"], capture_output=True,
                             text=True, timeout=60).stdout.split()[-1]
    th = re.search(r"^\.TH\s.*$", src, re.M)
    check(th and version in th.group(0),
          "%s.1: .TH names version %s (%r)" % (
              tool, version, th.group(0) if th else None))
    want = set(OPTION.findall(helptext))
    tags = item_tags(secs.get("OPTIONS", []))
    have = set()
    for t in tags:
        have |= set(OPTION.findall(t))
    lost = sorted(want - have)
    check(want and not lost, "%s.1: each of the %d options of %s --help is "
          "an item under OPTIONS%s" % (tool, len(want), tool, "" if not lost
                                       else "; not: " + " ".join(lost)))
    extra = sorted(have - want - ISSUE13 - ALWAYS)
    check(not extra, "%s.1: every option item is in --help or issue 13's "
          "list%s" % (tool, "" if not extra else "; not: " +
                      " ".join(extra)))
    codes = help_exit_codes(helptext)
    got = set()
    for t in item_tags(secs.get("EXIT STATUS", [])):
        got |= set(re.findall(r"\d+", t))
    lost = sorted(codes - got, key=int)
    check(codes and not lost, "%s.1: the exit statuses of --help (%s) are "
          "items under EXIT STATUS%s" % (
              tool, " ".join(sorted(codes, key=int)),
              "" if not lost else "; not: " + " ".join(lost)))


def bloomcalc_formulas():
    exe = os.path.join(BIN, "bloomcalc")
    bad = []
    for n, p in ((1000, 0.1), (10 ** 6, 0.01), (10 ** 6, 0.001),
                 (12345, 0.05), (10 ** 9, 1e-6)):
        j = json.loads(subprocess.run([exe, "-n", str(n), "-p", repr(p),
                                       "--json"], capture_output=True,
                                      text=True, timeout=60).stdout)
        m = math.ceil(-n * math.log(p) / math.log(2) ** 2)
        k = max(1, round(m / n * math.log(2)))
        if (j["m_bits"], j["k"]) != (m, k):
            bad.append("-n %d -p %g: m %d k %d, the page's formula %d %d"
                       % (n, p, j["m_bits"], j["k"], m, k))
    for n, m, k in ((10 ** 6, 8388608, 7), (1000, 9586, 7), (500, 4096, 1),
                    (10 ** 5, 10 ** 6, 3)):
        j = json.loads(subprocess.run([exe, "-n", str(n), "-m", str(m),
                                       "-k", str(k), "--json"],
                                      capture_output=True, text=True,
                                      timeout=60).stdout)
        rate = (1 - math.exp(-k * n / m)) ** k
        if abs(j["fpr_predicted"] - rate) > 1e-6 * rate:
            bad.append("-n %d -m %d -k %d: rate %g, the page's formula %g"
                       % (n, m, k, j["fpr_predicted"], rate))
    check(not bad, "bloomcalc.1: m = ceil(-N ln P / (ln 2)^2), k = round("
          "(m/N) ln 2) and rate = (1 - e^(-KN/M))^K are bloomcalc's "
          "(classic layout)%s" % ("" if not bad else ": " + "; ".join(bad)))


def main():
    groff = shutil.which("groff")
    if not groff:
        print("SKIP: groff is needed to render the manual pages "
              "(scripts/deps.sh test installs groff-base)")
        return SKIP
    for tool in TOOLS:
        one_page(tool, groff)
    if os.path.exists(os.path.join(BIN, "bloomcalc")):
        bloomcalc_formulas()
    print("%d passed, %d failed" % (passes, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
