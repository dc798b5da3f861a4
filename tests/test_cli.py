#!/usr/bin/env python3
"""Command-line contracts of the tools (docs/DESIGN.md section 5).

Run by ctest with the build's examples/ directory as the only argument.
Each tool: --help exits 0, a usage error exits 2, and its output is what
the contract says. bloomcalc must reproduce the worked examples of the
sizing math; robotstxt prints allowed/disallowed with exit 0/1.
"""
import json
import os
import subprocess
import sys
import tempfile

BIN = sys.argv[1]
failures = 0
passes = 0


def run(tool, *args, stdin=None):
    p = subprocess.run([os.path.join(BIN, tool), *args], input=stdin,
                       capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def check(cond, what):
    global failures, passes
    if not cond:
        failures += 1
        print("FAIL:", what)
    else:
        passes += 1
        print("ok:", what)


def close(got, want, rel):
    return abs(got - want) <= rel * abs(want)


# ---- bloomcalc ----
rc, out, _ = run("bloomcalc", "--help")
check(rc == 0 and "usage" in out, "bloomcalc --help exits 0")
rc, _, err = run("bloomcalc", "-n", "0", "-p", "0.01")
check(rc == 2, "bloomcalc -n 0 is a usage error (2)")
rc, _, err = run("bloomcalc", "-n", "1000", "-p", "1.5")
check(rc == 2 and err, "bloomcalc -p 1.5 is a usage error (2)")

rc, out, _ = run("bloomcalc", "-n", "1e6", "-p", "0.0001", "--json")
j = json.loads(out)
check(rc == 0 and j["m_bits"] == 19170117, "10^6 at 0.01 %: m = 19,170,117")
check(close(j["m_bits"] / 8 / 2**20, 2.29, 0.003), "... = 2.29 MiB")
check(j["k"] == 13 and close(j["k_opt"], 13.29, 0.001), "... k = 13, k_opt 13.29")
check(close(j["blocked"]["bits_per_element"], 21.9, 0.01),
      "... blocked needs ~21.9 bits per key")
for key in ("n", "p", "m_bits", "bytes", "k", "k_opt", "bits_per_element",
            "fpr_predicted", "fpr_upper_bound"):
    check(key in j and key in j["blocked"], "JSON key " + key)

rc, out, _ = run("bloomcalc", "-n", "10^9", "-p", "1%", "--json")
j = json.loads(out)
check(close(j["m_bits"], 9.585e9, 1e-4) and j["k"] == 7,
      "10^9 at 1 %: m = 9.585e9 bits, k = 7")
check(close(j["bytes"], 1.198e9, 5e-4), "... = 1.198 GB")
check(close(j["blocked"]["bits_per_element"], 9.9, 0.01),
      "... blocked needs ~9.9 bits per key")

rc, out, _ = run("bloomcalc", "-n", "1000", "-m", "20000", "-k", "10",
                 "--json")
j = json.loads(out)
check(close(j["fpr_predicted"], 8.89e-5, 1e-3), "k = 10, m = 20 n: 8.89e-5")
rc, out, _ = run("bloomcalc", "-n", "1e6", "-p", "0.0001")
check(rc == 0 and "19,170,117 bits" in out and "2.29 MiB" in out,
      "text output shows the worked example")

# ---- robotstxt ----
with tempfile.TemporaryDirectory() as d:
    robots = os.path.join(d, "robots.txt")
    with open(robots, "w") as f:
        f.write("User-agent: *\nDisallow: /private/\nAllow: /private/ok\n"
                "User-agent: SlowBot\nDisallow: /\n")
    cases = [("bloomcrawl/0.1", "http://x.test/", 0),
             ("bloomcrawl/0.1", "http://x.test/private/a", 1),
             ("bloomcrawl/0.1", "/private/ok", 0),
             ("bloomcrawl/0.1", "HTTP://X.TEST/%70rivate/a", 1),
             ("SlowBot/2.0", "http://x.test/", 1),
             ("SlowBot/2.0", "http://x.test/robots.txt", 0)]
    for agent, url, want in cases:
        rc, out, _ = run("robotstxt", robots, agent, url)
        word = "allowed" if want == 0 else "disallowed"
        check(rc == want and out.strip() == word,
              "robotstxt %s %s -> %s" % (agent, url, word))
    rc, _, _ = run("robotstxt", robots, "bot")
    check(rc == 2, "robotstxt with 2 arguments exits 2")
    rc, _, _ = run("robotstxt", os.path.join(d, "missing"), "bot", "/")
    check(rc == 2, "robotstxt with a missing file exits 2")
    rc, _, err = run("robotstxt", robots, "bot", "ftp://x/")
    check(rc == 2 and "scheme" in err, "robotstxt with an ftp URL exits 2")
    rc, out, _ = run("robotstxt", "--help")
    check(rc == 0 and "usage" in out, "robotstxt --help exits 0")

print("%d passed, %d failed" % (passes, failures))
sys.exit(1 if failures else 0)
