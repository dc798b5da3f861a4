#!/usr/bin/env python3
"""The parse5 differential test: bloomcrawl's links against a browser's tree.

Usage: diff_parse5.py LINKS_DUMP WORKDIR

parse5 (the WHATWG-conformant HTML parser of jsdom) is installed by npm into
WORKDIR/parse5 on the first run; without node and npm, or without network
for that first install, the test is skipped (exit 77). Three corpora:

  site    the sample site (examples/site/gensite.py, 400 pages, seed 1);
  soup    10,000 small generated documents mixing the tokenizer's states
          (RCDATA, RAWTEXT, script escapes, comments of every shape,
          foreign content and CDATA, character references, tables, ...);
  manuals the PostgreSQL 15 and Python 3.11 HTML manuals, when Debian's
          postgresql-doc-15 and python3.11-doc are installed
          (scripts/deps.sh test and bench/bench_links.sh install them);
          skipped otherwise.

Each document goes through tests/links_dump (bloomcrawl, 7-byte chunks)
and tests/parse5_links.js (parse5, then a walk of the tree). A document
agrees when the two lists of links (kind and href) are equal and the
first <base href> is the same. Two kinds of difference are expected, come
from the tree builder, which a tokenizer does not run, and are counted
and justified rather than failed:

  clone  the tree holds a link element twice: the adoption agency
         algorithm (13.2.6.4.7, misnested <a>/<b>...) clones formatting
         elements, so <a href=x><p>...</a> puts a second <a href=x> in the
         tree; the page has one start tag, which bloomcrawl reports once.
         Checked: the lists agree once repeats of the same link are
         dropped from parse5's.
  moved  the same links in another order: foster parenting (13.2.6.1)
         moves content out of tables, and the tree puts <a> before the
         <table> it was written in; bloomcrawl reports document order.
         Checked: the same multiset of links.
  dropped the tree has fewer links, and every missing one sits where the
         tree builder drops elements: inside <select> (13.2.6.4.16),
         where <a>, <area>, <iframe> are parse errors and dropped, or
         before a <frameset> that replaced the body (the body is removed
         with what it held, which a streaming extractor has reported
         already); bloomcrawl reports them (more links, never fewer).
         Checked: parse5's list is a subsequence of bloomcrawl's and the
         document holds a <select>, or every missing link is written
         before the document's first <frameset>. (The frameset modes
         themselves are followed: in and after a frameset only frames
         count, and a <frameset> after body content is ignored.)
  foreign the difference is only in links written after the first <svg>
         or <math>: the few tree-builder rules this extractor follows for
         foreign content (a stack of the open svg/math elements and the
         HTML ones inside integration points) do not cover an end tag
         that closes an HTML element below the <svg> (<a><math></a>:
         the adoption agency leaves foreign content), nor HTML start tags
         the tree builder ignores inside an integration point (<mi><tr>).
         Checked: every differing link's href is written after the first
         <svg or <math of the document. Such documents are listed.

Every other difference fails the test and is printed with both lists.
Two more corpora test the tree-builder facts the extractor follows
(templates, the frameset-ok flag, the frameset modes; issue 21): frames,
3,000 documents generated from the soup's pieces and <frameset>,
</frameset>, <body>, <head>, <img>, ... (seed 21), classified as above;
and cases, hand-written documents, each of which must agree exactly.
"""
import os
import random
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SKIP = 77
PARSE5 = "parse5@8.1.1"


def setup_parse5(workdir):
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        print("SKIP: node and npm are needed for the parse5 differential test")
        sys.exit(SKIP)
    d = os.path.join(workdir, "parse5")
    if not os.path.isdir(os.path.join(d, "node_modules", "parse5")):
        os.makedirs(d, exist_ok=True)
        r = subprocess.run([npm, "install", "--prefix", d, "--no-audit",
                            "--no-fund", "--no-save", PARSE5],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            print("SKIP: npm install %s failed:\n%s" % (PARSE5, r.stderr[-2000:]))
            sys.exit(SKIP)
    return node, d


PIECES = [
    "<a href=/a{n}>", "<a href='/q{n}?x=1&amp;y=2'>", "<a href=\"/c{n}&copy=1&not;\">",
    "<a/href=/s{n}>", "<A HREF=/u{n}>", "</a>", "<area href=/ar{n}>",
    "<link rel=next href=/l{n}>", "<link rel='stylesheet next' href=/ls{n}>",
    "<iframe src=/if{n}>", "</iframe>", "<frame src=/fr{n}>",
    "<base href=/b{n}/>", "<textarea>", "</textarea>", "<title>", "</title>",
    "<TITLE>", "</Title>", "<xmp>", "</xmp>", "<noembed>", "</noembed>",
    "<noframes>", "</noframes>", "<noscript>", "</noscript>", "<style>",
    "</style>", "<script>", "</script>", "<script><!--", "<!--<script>",
    "-->", "<!--", "<!-->", "<!--->", "--!>", "<!-- x -- y -->", "<!DOCTYPE html>",
    "<?pi x>", "<![CDATA[", "]]>", "<svg>", "</svg>", "<math>", "</math>",
    "<foreignObject>", "</foreignObject>", "<desc>", "<mi>", "</mi>",
    "<svg><a xlink:href=/x{n}>", "<div>", "</div>", "<p>", "</p>", "<b>",
    "</b>", "<i>", "<table>", "</table>", "<tr>", "<td>", "text ", "&amp; ",
    "&#x3C;a href=/e{n}>", "< a href=/sp{n}>", "<a href=/n{n}\x00>",
    "<plaintext>", "<template>", "</template>", "<span title='<a href=/t{n}>'>",
    "<a href=/d1{n} href=/d2{n}>", "\n", "<br/>", "</br>", "<font color=red>",
]
# Framesets are kept apart (a soup of their own): a <frameset> early in a
# document ends everything after it but frames, which would thin out the
# soup above.
FRAME_PIECES = PIECES + ["<frameset>", "</frameset>", "<frameset/>", "<body>",
                         "<head>", "</head>", "<img>", "<input type=hidden>"]


# Issue 21: a <base> in a template is no base; the frameset-ok flag; only
# frames in a frameset. Each must be "same": no difference is tolerated.
CASES = [
    "<template><base href=/tb/></template><a href=/x>",
    "<template><base href=/tb/><a href=/in-t></template><base href=/b/>"
    "<a href=/x>",
    "<template><svg></template><base href=/b/><a href=/x>",
    "<svg><foreignObject><template><base href=/tb/></template>"
    "</foreignObject></svg><base href=/b2/><a href=/x>",
    "<p>text</p><frameset><frame src=/no-f></frameset>",
    "<img><frameset><frame src=/no>",
    "<body><frameset><frame src=/no>",
    "</br><frameset><frame src=/no>",
    "&amp;<frameset><frame src=/no>",
    "<svg>x</svg><frameset><frame src=/no>",
    "<svg></svg><frameset><frame src=/f>",
    "<input><frameset><frame src=/no>",
    "<template><frameset><frame src=/no></template>",
    "<template></template><div><frameset><frame src=/no>",
    "<div><frameset><frame src=/f>",
    " \n<title>t</title><script>s</script><style>x</style>"
    "<input type=HIDDEN><frameset><frame src=/f>",
    "<head><template>x</template></head><frameset><frame src=/f>",
    "<math><mi><frameset><frame src=/f>",
    "<frame src=/x><frameset><frame src=/f>",
    "<frameset><a href=/no-a><iframe src=/no-if><frame src=/f2><title>"
    "<frame src=/f3><frameset><frame src=/f4></frameset><frame src=/f5>"
    "</frameset><frame src=/no-after><a href=/no-a2><noframes>"
    "<a href=/no-nf></noframes><a href=/no-a3>",
    "<frameset><base href=/b/><frame src=/f>",
    "<head><template></template></head><noscript></noscript><frameset>"
    "<frame src=/no>",
    "<head><template></template><noscript></noscript></head><frameset>"
    "<frame src=/f>",
    "<frameset><frameset/><frame src=/a></frameset><frame src=/b></frameset>"
    "<frame src=/no>",
    "<meta name=robots content=nofollow><frameset><frame src=/f>",
    "<body><frame src=/no-frame><iframe src=/yes-iframe>",
]


def gen_soup(n_docs, seed=12, pieces=PIECES):
    rnd = random.Random(seed)
    docs = []
    for i in range(n_docs):
        parts = []
        for j in range(rnd.randint(3, 14)):
            p = rnd.choice(pieces)
            if p == "<plaintext>" and rnd.random() < 0.8:
                continue  # keep plaintext rare: it ends everything
            parts.append(p.replace("{n}", "%d_%d" % (i, j)))
        docs.append("".join(parts).encode("utf-8"))
    return docs


def html_files(d):
    out = []
    for dirpath, _, files in os.walk(d):
        for f in sorted(files):
            if f.endswith(".html"):
                out.append(os.path.join(dirpath, f))
    return sorted(out)


def write_corpus(path, docs):
    with open(path, "wb") as f:
        for d in docs:
            f.write(b"%d\n" % len(d))
            f.write(d)


def read_lists(text):
    docs, cur = [], None
    for line in text.splitlines():
        if line.startswith("doc "):
            cur = {"links": [], "base": None}
        elif line == "end":
            docs.append(cur)
        elif line.startswith("link "):
            cur["links"].append(line[5:])
        elif line.startswith("base "):
            cur["base"] = line[5:]
    return docs


def dedup(seq):
    seen, out = set(), []
    for x in seq:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def is_subsequence(small, big):
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


def href_key(link):
    """The href of a "KIND HREF" line as written, up to its first
    reference or escape (the dump decodes "&not;" and escapes bytes):
    "/c12_6" of "/c12_6&...", unique as each piece carries its document
    and place."""
    return re.match(r"[/A-Za-z0-9_.]*", link.split(" ", 1)[1]).group().encode()


def classify(ours, theirs, doc):
    if ours["base"] is not None and ours["base"] != theirs["base"]:
        return "other"
    a, b = ours["links"], theirs["links"]
    if a == b:
        return "same"
    if dedup(b) == dedup(a) and len(set(a)) == len(a):
        return "clone"
    if sorted(dedup(b)) == sorted(dedup(a)):
        return "moved"
    low = doc.lower()
    if b"<select" in low and is_subsequence(dedup(b), a):
        return "dropped"
    fs = low.find(b"<frameset")
    if fs >= 0 and is_subsequence(dedup(b), a):
        # Only links written before the first <frameset> (the body it
        # replaced held them) may be missing from the tree.
        missing = [x for x in a if x not in set(b)]
        if all(0 <= doc.find(href_key(x)) < fs for x in missing):
            return "dropped"
    starts = [i for i in (low.find(b"<svg"), low.find(b"<math")) if i >= 0]
    if starts:
        first = min(starts)
        diff = set(a) ^ set(b)
        hrefs = [href_key(x) for x in diff]
        if all(doc.find(h, first) >= 0 and doc.find(h) >= first
               for h in hrefs):
            return "foreign"
    return "other"


def run_corpus(name, docs, dump, node, p5dir, workdir, strict=False):
    path = os.path.join(workdir, name + ".corpus")
    write_corpus(path, docs)
    ours = read_lists(subprocess.run([dump, path], check=True,
                                     capture_output=True).stdout.decode())
    theirs = read_lists(subprocess.run(
        [node, os.path.join(HERE, "parse5_links.js"), p5dir, path],
        check=True, capture_output=True).stdout.decode())
    assert len(ours) == len(theirs) == len(docs), (len(ours), len(theirs))
    counts = {"same": 0, "clone": 0, "moved": 0, "dropped": 0,
              "foreign": 0, "other": 0}
    links = 0
    failures = []
    for i, (o, t) in enumerate(zip(ours, theirs)):
        links += len(o["links"])
        k = classify(o, t, docs[i])
        if strict and (k != "same" or o["base"] != t["base"]):
            k = "other"
        counts[k] += 1
        if k in ("other", "foreign"):
            failures.append((k, i, o, t))
    print("%-8s %6d documents, %7d links: %6d equal, %d clone, %d moved, "
          "%d dropped, %d foreign, %d other" % (
              name, len(docs), links, counts["same"], counts["clone"],
              counts["moved"], counts["dropped"], counts["foreign"],
              counts["other"]))
    for k, i, o, t in failures[:30]:
        print("%s %s document %d:\n  %r\n  bloomcrawl: %s base %s\n"
              "  parse5:     %s base %s" % (
                  "DIFF" if k == "other" else "listed (foreign):", name, i,
                  docs[i][:400], o["links"], o["base"], t["links"],
                  t["base"]))
    return counts["other"]


def main():
    dump, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    node, p5dir = setup_parse5(workdir)
    bad = 0
    site = os.path.join(workdir, "site")
    if not os.path.isdir(site):
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "site",
                                                     "gensite.py"), site,
                        "--pages", "400", "--seed", "1"], check=True,
                       capture_output=True)
    docs = [open(f, "rb").read() for f in html_files(site)]
    bad += run_corpus("site", docs, dump, node, p5dir, workdir)
    bad += run_corpus("soup", gen_soup(10000), dump, node, p5dir, workdir)
    bad += run_corpus("frames", gen_soup(3000, 21, FRAME_PIECES), dump, node,
                      p5dir, workdir)
    bad += run_corpus("cases", [c.encode() for c in CASES], dump, node, p5dir,
                      workdir, strict=True)
    manuals = ["/usr/share/doc/postgresql-doc-15/html",
               "/usr/share/doc/python3.11/html"]
    for m in manuals:
        if os.path.isdir(m):
            docs = [open(f, "rb").read() for f in html_files(m)]
            bad += run_corpus(os.path.basename(os.path.dirname(m)), docs,
                              dump, node, p5dir, workdir)
        else:
            print("manual %s not installed: not compared" % m)
    if bad:
        print("FAIL: %d documents differ for a reason not listed" % bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
