#!/usr/bin/env python3
"""Precision and recall of simhash (k = 3) against an exact Jaccard oracle
on real pages (issue 24 section 3; BENCHMARKS.md section 10).

    python3 bench/near_dup_eval.py NEARDUP [--work DIR] [--edits N]
        [--seed S] [--sample N] [--png FILE] [--data DIR] [DOCDIR...]
    python3 bench/near_dup_eval.py NEARDUP --smoke      (the ctest)

The corpus: every HTML page of the doc trees (default: Debian's
PostgreSQL 15 and Python 3.11 manuals, /usr/share/doc/postgresql-doc-15/
html and /usr/share/doc/python3.11/html), copied as it is under
WORK/a/, again under WORK/b/ (a mirror: the same bytes under another
name), and N pages (50) edited by the script, seeded, in WORK/edits/: a
third with one word of the text changed, a third with a paragraph of 60
new words added, a third with a banner carrying a timestamp added (each
from a page chosen at random; the edit kind in the file name).

The oracle, independent of the C code: each page's visible text with
Python's html.parser (character references decoded; the contents of
script, style, noscript, noembed, noframes, iframe and template left out,
comments too, the title kept; the text of the runs concatenated, with
a space where a tag of any element but the inline and boxless ones comes
between two of them: links.h's rules), words as dedup/simhash.c defines them
(runs of ASCII letters and digits, folded to lower case, and bytes >=
0x80 of the UTF-8 text), shingles of 3 consecutive words, and the exact
Jaccard similarity |A & B| / |A | B| of the shingle SETS of two pages.
Every pair with Jaccard >= 0.5 is found exactly, without comparing all
pairs: shingles are ordered rarest first, and a pair with J >= t must
share one of the first |A| - ceil(t |A|) + 1 shingles of A in that order
(prefix filtering, Bayardo et al. 2007: if the prefixes were disjoint,
|A & B| <= ceil(t |A|) - 1 < t |A| <= t |A | B|); an inverted index of
the prefixes gives the candidates, whose Jaccard is then computed from
the whole sets. Pairs below 0.5 are sampled uniformly (--sample, 20,000
random pairs).

The fingerprints come from NEARDUP --fingerprints over WORK (its own
shingle count per page is compared with the oracle's: the two HTML-to-
text paths must agree). The Hamming distance of every pair of
fingerprinted pages is computed (all pairs, int.bit_count). Reported:
precision and recall of "distance <= 3" against "Jaccard >= 0.9" over
the pages with a fingerprint (pages too short have none: counted apart),
split by where the pair comes from (a page and its mirror; an edited
page and its source or the source's mirror; two different pages), and
the distribution of the distance in the Jaccard bands [0.9, 1],
[0.8, 0.9), [0.5, 0.8) and < 0.5 (sampled). The picture (gnuplot; apt-get
install gnuplot-nox) goes to --png (docs/simhash_distance_by_jaccard.png),
its data to --data.

Pure Python 3 (Debian's /usr/bin/python3: no numpy). About a minute for
the two manuals.
"""
import argparse
import html.parser
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

DOC_TREES = ["/usr/share/doc/postgresql-doc-15/html",
             "/usr/share/doc/python3.11/html"]
HIDDEN = {"script", "style", "noscript", "noembed", "noframes", "iframe",
          "template"}
# Elements whose tags do not break words (links.h): the inline text-level
# ones and those with no box; any other HTML tag between two pieces of
# text puts a space between them.
JOINING = set("a abbr b bdi bdo big cite code data del dfn em font i ins kbd "
              "mark nobr q rp rt ruby s samp small span strike strong sub "
              "sup time tt u var wbr html head body base link meta script "
              "style template noscript noembed noframes frameset frame svg "
              "math".split())
W = 3  # words per shingle (simhash.c's default)
K = 3  # the Hamming distance of a near-duplicate
T_NEAR = 0.9  # Jaccard of a near-duplicate (the ground truth)
T_ALL = 0.5  # every pair at or above this is found exactly
WORD = re.compile(rb"[A-Za-z0-9\x80-\xff]+")
HTML_NAME = re.compile(r"\.(html|htm|xhtml)$", re.I)


class Text(html.parser.HTMLParser):
    """The visible text of a page: the data outside HIDDEN elements, a
    space where a tag of an element not in JOINING (outside svg and math)
    comes between two pieces of it."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.foreign = 0
        self.since_break = False
        self.pending = False
        self.parts = []

    def tag(self, tag):
        if self.hidden == 0 and self.foreign == 0 and self.since_break and \
                tag not in JOINING:
            self.since_break, self.pending = False, True

    def handle_starttag(self, tag, attrs):
        self.tag(tag)
        if tag in HIDDEN:
            self.hidden += 1
        if tag in ("svg", "math"):
            self.foreign += 1

    def handle_startendtag(self, tag, attrs):
        self.tag(tag)  # <br/>: one break; <svg/>: no element to close

    def handle_endtag(self, tag):
        self.tag(tag)
        if tag in HIDDEN and self.hidden > 0:
            self.hidden -= 1
        if tag in ("svg", "math") and self.foreign > 0:
            self.foreign -= 1

    def handle_data(self, data):
        if self.hidden == 0:
            if self.pending:
                self.parts.append(" ")
                self.pending = False
            self.parts.append(data)
            self.since_break = True


def visible_text(raw):
    """raw: the page's bytes (UTF-8, as the manuals are)."""
    p = Text()
    p.feed(raw.decode("utf-8", errors="surrogateescape"))
    p.close()
    return "".join(p.parts)


def words_of(text):
    b = text.encode("utf-8", errors="surrogateescape")
    return [w.lower() for w in WORD.findall(b)]


def shingles_of(words):
    """(the set of shingles, the count of shingles with repeats)."""
    n = len(words) - W + 1
    if n <= 0:
        return set(), 0
    return {tuple(words[i:i + W]) for i in range(n)}, n


def jaccard(a, b):
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def cos_equal_sizes(j):
    """The cosine of two 0/1 vectors of one size whose Jaccard is j:
    |A & B| = j |A | B| and |A | B| = 2n - |A & B| give |A & B| / n =
    2j / (1 + j)."""
    return 2 * j / (1 + j)


def expected_distance(j, bits=64):
    """E[d] = bits * theta / pi for the angle of cos_equal_sizes(j)."""
    return bits * math.acos(min(1.0, cos_equal_sizes(j))) / math.pi


# ---- the corpus ---------------------------------------------------------

def html_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if HTML_NAME.search(f):
                out.append(os.path.join(d, f))
    return out


def edit_page(raw, kind, rng, vocab):
    """One edit of the page's bytes; None when the page has no place for
    it."""
    s = raw.decode("utf-8", errors="surrogateescape")
    if kind == "word":
        # a word of a text run between two tags, outside script/style
        runs = [m for m in re.finditer(r">([^<]{60,})<", s)
                if not re.search(r"<(script|style)[^>]*$",
                                 s[max(0, m.start() - 200):m.start() + 1],
                                 re.I)]
        if not runs:
            return None
        m = rng.choice(runs)
        text = m.group(1)
        ws = list(re.finditer(r"[A-Za-z]{3,}", text))
        if not ws:
            return None
        w = rng.choice(ws)
        new = text[:w.start()] + "zqx" + w.group(0) + text[w.end():]
        s = s[:m.start(1)] + new + s[m.end(1):]
    elif kind == "paragraph":
        i = s.lower().rfind("</body>")
        if i < 0:
            return None
        para = "<p>%s</p>\n" % " ".join(rng.choice(vocab) for _ in range(60))
        s = s[:i] + para + s[i:]
    else:  # banner with a timestamp
        m = re.search(r"<body[^>]*>", s, re.I)
        if not m:
            return None
        stamp = "2026-%02d-%02d %02d:%02d:%02d" % (
            rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
            rng.randint(0, 59), rng.randint(0, 59))
        banner = ('<div class="banner">Mirror node %d: page generated on '
                  "%s UTC</div>" % (rng.randint(1, 99), stamp))
        s = s[:m.end()] + banner + s[m.end():]
    return s.encode("utf-8", errors="surrogateescape")


def make_corpus(work, trees, n_edits, seed):
    """Copy the trees to WORK/a and WORK/b, write the edits; returns the
    list of (path, source id, kind) in neardup's walk order."""
    rng = random.Random(seed)
    sources = []
    for t in trees:
        tag = os.path.basename(os.path.dirname(t.rstrip("/"))) or t
        for f in html_files(t):
            sources.append((f, "%s/%s" % (tag, os.path.relpath(f, t))))
    for side in ("a", "b"):
        for f, rel in sources:
            dst = os.path.join(work, side, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(f, dst)
    vocab = []
    for f, _ in rng.sample(sources, min(20, len(sources))):
        with open(f, "rb") as fh:
            vocab += [w.decode() for w in WORD.findall(fh.read())
                      if w.isalpha() and len(w) > 3]
    edits = os.path.join(work, "edits")
    os.makedirs(edits, exist_ok=True)
    kinds = ["word", "paragraph", "banner"]
    manifest = []
    made = 0
    tries = 0
    while made < n_edits and tries < 20 * n_edits:
        tries += 1
        kind = kinds[made % 3]
        f, rel = rng.choice(sources)
        with open(f, "rb") as fh:
            new = edit_page(fh.read(), kind, rng, vocab)
        if new is None:
            continue
        name = "%s-%02d-%s" % (kind, made, os.path.basename(rel))
        with open(os.path.join(edits, name), "wb") as fh:
            fh.write(new)
        manifest.append("%s\t%s\n" % (name, rel))
        made += 1
    with open(os.path.join(work, "edits.tsv"), "w") as fh:
        fh.writelines(manifest)
    return sources


def origin(path, work, edits):
    """(source key, kind): kind 'a', 'b' or the edit kind; edits maps an
    edit's file name to its source (WORK/edits.tsv)."""
    rel = os.path.relpath(path, work)
    side, rest = rel.split("/", 1)
    if side in ("a", "b"):
        return rest, side
    return edits[rest], rest.split("-", 1)[0]


# ---- the oracle -----------------------------------------------------------

def oracle_pairs(sets, t):
    """Every pair (i, j), i < j, with Jaccard >= t, and its Jaccard:
    prefix filtering over shingles ordered rarest first."""
    df = {}
    for s in sets:
        for x in s:
            df[x] = df.get(x, 0) + 1
    rank = {x: r for r, x in enumerate(sorted(df, key=lambda x: (df[x], x)))}
    ordered = [sorted(s, key=rank.__getitem__) for s in sets]
    order = sorted(range(len(sets)), key=lambda i: len(sets[i]))
    index = {}
    found = {}
    for i in order:  # by size: only |B| <= |A| is probed, the rest later
        a = sets[i]
        if not a:
            continue
        p = len(a) - math.ceil(t * len(a)) + 1
        cands = set()
        for x in ordered[i][:p]:
            lst = index.get(x)
            if lst:
                cands.update(lst)
        for j in cands:
            b = sets[j]
            if len(b) < t * len(a):  # size filter: J <= |B| / |A|
                continue
            jac = jaccard(a, b)
            if jac >= t:
                found[(min(i, j), max(i, j))] = jac
        for x in ordered[i][:p]:
            index.setdefault(x, []).append(i)
    return found


def band(j):
    if j >= 0.9:
        return 0
    if j >= 0.8:
        return 1
    if j >= 0.5:
        return 2
    return 3


BANDS = ["[0.9, 1]", "[0.8, 0.9)", "[0.5, 0.8)", "< 0.5 (sampled)"]


def run_fingerprints(neardup, work):
    p = subprocess.run([neardup, "--fingerprints", "--quiet", work],
                       capture_output=True, check=True)
    rows = []
    for line in p.stdout.decode("utf-8", errors="surrogateescape"
                                ).splitlines():
        fp, sh, name = line.split("\t", 2)
        rows.append((name, None if fp == "-" else int(fp, 16), int(sh)))
    return rows


def evaluate(neardup, work, sample, seed, png, data_dir, quiet=False):
    t0 = time.time()
    rows = run_fingerprints(neardup, work)
    t_fp = time.time() - t0
    names = [r[0] for r in rows]
    fps = [r[1] for r in rows]
    sets, counts = [], []
    for name in names:
        with open(name, "rb") as f:
            s, n = shingles_of(words_of(visible_text(f.read())))
        sets.append(s)
        counts.append(n)
    agree = sum(1 for r, n in zip(rows, counts) if r[2] == n)
    t1 = time.time()
    pairs = oracle_pairs(sets, T_ALL)
    t_oracle = time.time() - t1
    with open(os.path.join(work, "edits.tsv")) as f:
        edits = dict(line.rstrip("\n").split("\t") for line in f)
    org = [origin(n, work, edits) for n in names]

    def kind_of(i, j):
        (si, ki), (sj, kj) = org[i], org[j]
        if si != sj:
            return "different pages"
        if ki in ("a", "b") and kj in ("a", "b"):
            return "a page and its mirror"
        if ki in ("a", "b") or kj in ("a", "b"):
            return "an edit (%s) and its source" % (
                kj if ki in ("a", "b") else ki)
        return "two edits of one page"

    have = [i for i in range(len(fps)) if fps[i] is not None]
    # All pairs of fingerprinted pages within K: brute force.
    near = set()
    fl = [(i, fps[i]) for i in have]
    for x in range(len(fl)):
        i, a = fl[x]
        for y in range(x + 1, len(fl)):
            j, b = fl[y]
            if (a ^ b).bit_count() <= K:
                near.add((i, j))
    truth = {p for p, jac in pairs.items() if jac >= T_NEAR}
    truth_fp = {p for p in truth if fps[p[0]] is not None and
                fps[p[1]] is not None}
    lost_short = len(truth) - len(truth_fp)
    tp = len(truth_fp & near)
    precision = tp / len(near) if near else 1.0
    recall = tp / len(truth_fp) if truth_fp else 1.0
    by_kind = {}
    for p in truth_fp | near:
        k = kind_of(*p)
        d = by_kind.setdefault(k, [0, 0, 0])  # truth, found, both
        d[0] += p in truth_fp
        d[1] += p in near
        d[2] += p in truth_fp and p in near
    # Distances by band; < 0.5 sampled uniformly among all pairs.
    rng = random.Random(seed)
    hist = [[0] * 65 for _ in BANDS]
    scatter = []
    for (i, j), jac in pairs.items():
        if fps[i] is None or fps[j] is None:
            continue
        d = (fps[i] ^ fps[j]).bit_count()
        hist[band(jac)][d] += 1
        scatter.append((jac, d))
    low = 0
    for _ in range(sample):
        i, j = rng.sample(have, 2)
        p = (min(i, j), max(i, j))
        if p in pairs:
            continue
        jac = jaccard(sets[i], sets[j])
        d = (fps[i] ^ fps[j]).bit_count()
        hist[3][d] += 1
        scatter.append((jac, d))
        low += 1
    far_near = [p for p in near if p not in truth_fp]
    res = {
        "pages": len(names), "fingerprinted": len(have),
        "too_short": len(names) - len(have), "count_agree": agree,
        "pairs_ge_05": len(pairs), "truth": len(truth_fp),
        "truth_lost_short": lost_short, "near": len(near), "tp": tp,
        "precision": precision, "recall": recall, "by_kind": by_kind,
        "hist": hist, "sampled": low, "t_fp": t_fp, "t_oracle": t_oracle,
        "false_pos_jaccard": sorted(
            round(pairs.get(p, jaccard(sets[p[0]], sets[p[1]])), 3)
            for p in far_near),
        "false_neg_distance": sorted(
            (fps[i] ^ fps[j]).bit_count() for i, j in truth_fp - near),
    }
    if data_dir:
        os.makedirs(data_dir, exist_ok=True)
        with open(os.path.join(data_dir, "distance_by_band.dat"), "w") as f:
            f.write("# distance " + " ".join(
                '"%s"' % b for b in BANDS) + "  (fraction of the band)\n")
            tot = [max(1, sum(h)) for h in hist]
            for d in range(65):
                f.write("%d %s\n" % (d, " ".join(
                    "%.6f" % (hist[b][d] / tot[b]) for b in range(4))))
        with open(os.path.join(data_dir, "scatter.dat"), "w") as f:
            jr = random.Random(seed + 1)
            for jac, d in scatter:
                f.write("%.5f %.3f\n" % (jac, d + jr.uniform(-0.3, 0.3)))
        with open(os.path.join(data_dir, "expected.dat"), "w") as f:
            for x in range(0, 1001):
                j = x / 1000
                f.write("%.3f %.4f\n" % (j, expected_distance(j)))
        if png:
            plot(data_dir, png, res)
    return res


GNUPLOT = r"""
set terminal pngcairo size 1200,560 font "Sans,10"
set output '{png}'
set multiplot layout 1,2 title "Simhash (64 bits, 3-word shingles) against the exact Jaccard similarity of shingle sets: {corpus}"
set grid
set key top right box opaque
set xlabel "Jaccard similarity of the two pages' shingle sets"
set ylabel "Hamming distance of their fingerprints"
set xrange [0:1.02]
set yrange [-1:45]
set arrow from 0,{k}.5 to 1.02,{k}.5 nohead dt 2 lw 2 lc rgb "#d62728"
set arrow from 0.9,-1 to 0.9,45 nohead dt 2 lw 2 lc rgb "#2ca02c"
set label "k = {k}" at 0.02,{k}.5 offset 0,0.7 tc rgb "#d62728"
set label "J = 0.9" at 0.9,43 offset -6,0 tc rgb "#2ca02c"
set title "Every pair with J >= 0.5 ({n_pairs}), {sampled} random pairs below"
plot '{data}/scatter.dat' using 1:2 with points pt 7 ps 0.35 lc rgb "#401f77b4" title "a pair of pages", \
     '{data}/expected.dat' using 1:2 with lines lw 2 lc rgb "black" title "64 acos(2J/(1+J)) / pi (equal-size sets)"
unset arrow
unset label
set title "Distance distribution by Jaccard band (fraction of the band's pairs)"
set xlabel "Hamming distance"
set ylabel "fraction of pairs (log scale)"
set xrange [-0.5:45]
set yrange [1e-4:1.5]
set logscale y
set format y "10^{{%L}}"
set arrow from {k}.5,1e-4 to {k}.5,1.5 nohead dt 2 lw 2 lc rgb "#d62728"
plot '{data}/distance_by_band.dat' using 1:($2>0?$2:1/0) with linespoints pt 7 ps 0.8 lw 2 title "J in [0.9, 1] ({b0} pairs)", \
     '' using 1:($3>0?$3:1/0) with linespoints pt 5 ps 0.8 lw 2 title "J in [0.8, 0.9) ({b1})", \
     '' using 1:($4>0?$4:1/0) with linespoints pt 9 ps 0.8 lw 2 title "J in [0.5, 0.8) ({b2})", \
     '' using 1:($5>0?$5:1/0) with linespoints pt 13 ps 0.8 lw 2 title "J < 0.5 ({b3}, sampled)"
unset multiplot
"""


def plot(data_dir, png, res):
    if shutil.which("gnuplot") is None:
        print("note: no gnuplot (apt-get install gnuplot-nox): no picture",
              file=sys.stderr)
        return
    h = res["hist"]
    script = GNUPLOT.format(
        png=png, data=data_dir, k=K, n_pairs=res["pairs_ge_05"],
        sampled=res["sampled"], corpus=res.get("corpus", ""),
        b0=sum(h[0]), b1=sum(h[1]), b2=sum(h[2]), b3=sum(h[3]))
    subprocess.run(["gnuplot"], input=script.encode(), check=True)


def report(res):
    print("pages %d (fingerprinted %d, too short %d); neardup's shingle "
          "count equals the oracle's for %d of %d pages"
          % (res["pages"], res["fingerprinted"], res["too_short"],
             res["count_agree"], res["pages"]))
    print("pairs with Jaccard >= 0.5: %d (oracle %.1f s; neardup "
          "--fingerprints %.1f s)" % (res["pairs_ge_05"], res["t_oracle"],
                                      res["t_fp"]))
    print("Jaccard >= %.1f: %d pairs of fingerprinted pages (%d more with "
          "a page too short)" % (T_NEAR, res["truth"],
                                 res["truth_lost_short"]))
    print("distance <= %d: %d pairs, %d of them with Jaccard >= %.1f"
          % (K, res["near"], res["tp"], T_NEAR))
    print("precision %.4f  recall %.4f" % (res["precision"], res["recall"]))
    for k, (t, f, b) in sorted(res["by_kind"].items()):
        print("  %-36s J>=0.9 %6d  d<=3 %6d  both %6d  recall %s  "
              "precision %s" % (k, t, f, b,
                                "%.4f" % (b / t) if t else "-",
                                "%.4f" % (b / f) if f else "-"))
    print("false positives' Jaccard:", res["false_pos_jaccard"][:40])
    print("false negatives' distance:", res["false_neg_distance"][:40])
    for b, name in enumerate(BANDS):
        h = res["hist"][b]
        n = sum(h)
        if n == 0:
            print("  %-16s no pairs" % name)
            continue
        within = sum(h[:K + 1])
        mean = sum(d * c for d, c in enumerate(h)) / n
        ds = sorted(d for d, c in enumerate(h) for _ in range(c))
        print("  %-16s %7d pairs: distance <= %d %.4f, mean %.2f, median "
              "%d, 95th pct %d, max %d"
              % (name, n, K, within / n, mean, ds[n // 2],
                 ds[min(n - 1, (95 * n) // 100)], ds[-1]))


# ---- the smoke test ---------------------------------------------------------

def smoke(neardup):
    """A handful of pages: the oracle's text and Jaccard checked exactly,
    the prefix filter against all pairs, the whole evaluation run."""
    fails = []

    def check(cond, what):
        print(("ok: " if cond else "FAIL: ") + what)
        if not cond:
            fails.append(what)

    t = visible_text(b"<title>Caf&eacute; &amp; bar</title><style>x y z"
                     b"</style><script>a b</script><p>One <b>W</b>ord"
                     b"<!-- no --><template>t</template><noscript>n"
                     b"</noscript>end</p>")
    check(t == "Caf\u00e9 & bar One Wordend", "visible text: %r" % t)
    t = visible_text(b"<ul><li>Alpha</li><li>Beta</li></ul>Hello<br/>world"
                     b"<svg><text>a</text><text>b</text></svg>")
    check(t == "Alpha Beta Hello worldab", "words apart at tags: %r" % t)
    check(words_of("Caf\u00e9, NEXT page-2") ==
          [b"caf\xc3\xa9", b"next", b"page", b"2"], "words")
    rng = random.Random(7)
    # words of letters (the word edit changes a word of 3 letters or more)
    vocab = ["w" + "".join(chr(97 + int(c)) for c in str(i))
             for i in range(5000)]
    base = [rng.choice(vocab) for _ in range(400)]
    a, n_a = shingles_of(base)
    check(n_a == 398, "400 words: 398 shingles")
    e = list(base)
    e[200] = "edited"
    b, _ = shingles_of(e)
    # one word changed in a text of N distinct shingles: 3 leave, 3 come
    check(len(a) == 398 and abs(jaccard(a, b) - (398 - 3) / (398 + 3)) <
          1e-12, "one word changed: J = (N - 3) / (N + 3) = %.4f"
          % jaccard(a, b))
    # cos_equal_sizes: two sets of n with |A & B| = m have J = m / (2n -
    # m) and cosine m / n
    for n, m in ((100, 90), (300, 150), (50, 1)):
        sa = set(range(n))
        sb = set(range(n - m, 2 * n - m))
        j = jaccard(sa, sb)
        check(abs(cos_equal_sizes(j) - m / n) < 1e-12,
              "cos of sets of %d sharing %d = 2J/(1+J)" % (n, m))
    check(abs(expected_distance(1.0)) < 1e-12 and
          abs(expected_distance(0.0) - 32) < 1e-12,
          "E[d] is 0 for J = 1 and 32 for J = 0")
    # the values HOW-IT-WORKS section 16 and BENCHMARKS 10.1 quote
    quoted = {0.98: 2.9, 0.95: 4.6, 0.9: 6.6, 0.8: 9.7, 0.5: 17.1}
    check(all(round(expected_distance(j), 1) == d
              for j, d in quoted.items()), "E[d] at J = 0.98, 0.95, 0.9, "
          "0.8, 0.5: %s" % [round(expected_distance(j), 2) for j in quoted])
    lo, hi = 0.5, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_distance(mid) > 3 else (lo, mid)
    check(round(lo, 3) == 0.979, "E[d] = 3 at J = %.4f (0.979)" % lo)
    check(round(64 * math.acos(495 / 498) / math.pi, 1) == 2.2 and
          round(64 * math.acos(97 / 100) / math.pi, 1) == 5.0,
          "one word among 498 shingles: 2.2 bits; among 100: 5.0")
    # prefix filtering finds what all pairs find
    sets = []
    for i in range(60):
        r = random.Random(i // 3)  # groups of three related sets
        s = set(r.sample(range(3000), 200 + (i % 7) * 10))
        s ^= set(random.Random(i).sample(range(3000), 5 + i % 40))
        sets.append(s)
    want = {(i, j): jaccard(sets[i], sets[j]) for i in range(60)
            for j in range(i + 1, 60) if jaccard(sets[i], sets[j]) >= 0.5}
    got = oracle_pairs(sets, 0.5)
    check(got == want and len(want) > 20, "prefix filtering: the %d pairs "
          "of all-pairs, no more" % len(want))
    # The whole evaluation on a few pages, with neardup.
    work = tempfile.mkdtemp(prefix="near_dup_eval.")
    try:
        src = os.path.join(work, "src")
        os.makedirs(src)
        for i in range(4):
            r = random.Random(100 + i)
            ws = [r.choice(vocab) for _ in range(600)]
            with open(os.path.join(src, "p%d.html" % i), "w") as f:
                f.write("<html><head><title>P%d</title><script>var x"
                        "</script></head><body><p>%s</p></body></html>"
                        % (i, " ".join(ws)))
        corpus = os.path.join(work, "corpus")
        make_corpus(corpus, [src], 3, 1)
        res = evaluate(neardup, corpus, 50, 1, None, None)
        report(res)
        check(res["pages"] == 11 and res["count_agree"] == 11,
              "11 pages (4 + 4 mirrored + 3 edits), shingle counts agree "
              "with neardup's")
        mirror = res["by_kind"].get("a page and its mirror", [0, 0, 0])
        check(mirror[0] == 4 and mirror[2] == 4,
              "every page and its mirror: J = 1, distance <= 3")
        check(sum(v[0] for k, v in res["by_kind"].items()
                  if k.startswith("an edit")) >= 2,
              "the edits are near their sources")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(fails))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("neardup")
    ap.add_argument("trees", nargs="*", default=DOC_TREES)
    ap.add_argument("--work", help="corpus directory (kept); default a "
                    "temporary one, removed")
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--sample", type=int, default=20000)
    ap.add_argument("--png", default=None)
    ap.add_argument("--data", default=None)
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    if a.smoke:
        return smoke(a.neardup)
    trees = [t for t in a.trees if os.path.isdir(t)]
    if not trees:
        print("no doc tree: apt-get install postgresql-doc-15 "
              "python3.11-doc", file=sys.stderr)
        return 2
    work = a.work or tempfile.mkdtemp(prefix="near_dup_eval.")
    try:
        if os.path.isdir(work) and os.listdir(work):
            print("using the corpus in %s" % work)
        else:
            make_corpus(work, trees, a.edits, a.seed)
        data = a.data or os.path.join(work, "plot")
        res_corpus = " + ".join(os.path.basename(os.path.dirname(t))
                                for t in trees)
        res = evaluate(a.neardup, work, a.sample, a.seed, None, data)
        res["corpus"] = res_corpus
        if a.png:
            plot(data, a.png, res)
        report(res)
    finally:
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
