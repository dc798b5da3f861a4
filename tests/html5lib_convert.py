#!/usr/bin/env python3
"""Convert html5lib-tests tokenizer files (JSON) for test_html_tokenizer.c.

Usage: html5lib_convert.py OUTPUT.txt FILE.test...

Writes one record per (test, initial state), lines of the form

    test FILE INDEX DESCRIPTION
    state NAME            (Data, RCDATA, RAWTEXT, Script data, ...)
    last NAME-or--        (lastStartTag)
    input HEX             (the input, UTF-8)
    skip REASON           (instead of input: the test cannot apply)
    expect TOKEN          (one per expected token, canonical form)
    end

The canonical token form is shared with the C test: C:text for the
(coalesced) characters, S:name:selfclosing followed by " name=value" for
each attribute sorted by name, E:name, M:comment, D for a DOCTYPE (whose
content the tokenizer skips by design). Bytes outside printable ASCII,
space, '=', ':' and backslash are written \\xHH. The parse errors of the
tests are not compared (the tokenizer does not report them).
"""
import json
import os
import re
import sys


def esc(b):
    out = []
    for x in b:
        if 0x21 <= x <= 0x7E and x not in (0x5C, 0x3D, 0x3A):
            out.append(chr(x))
        else:
            out.append("\\x%02x" % x)
    return "".join(out)


def utf8(s):
    return s.encode("utf-8", "surrogatepass")


def has_surrogate(s):
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in s)


def unescape(v):
    """doubleEscaped tests write \\uXXXX as text: decode it, recursively."""
    if isinstance(v, str):
        return re.sub(r"\\u([0-9A-Fa-f]{4})",
                      lambda m: chr(int(m.group(1), 16)), v)
    if isinstance(v, list):
        return [unescape(x) for x in v]
    if isinstance(v, dict):
        return {unescape(k): unescape(x) for k, x in v.items()}
    return v


def canon(tokens):
    out = []
    chars = ""
    for tok in tokens:
        if tok[0] == "Character":
            chars += tok[1]
            continue
        if chars:
            out.append("C:" + esc(utf8(chars)))
            chars = ""
        kind = tok[0]
        if kind == "StartTag":
            sc = 1 if len(tok) > 3 and tok[3] else 0
            line = "S:%s:%d" % (esc(utf8(tok[1])), sc)
            for name in sorted(tok[2], key=utf8):
                line += " %s=%s" % (esc(utf8(name)), esc(utf8(tok[2][name])))
            out.append(line)
        elif kind == "EndTag":
            out.append("E:" + esc(utf8(tok[1])))
        elif kind == "Comment":
            out.append("M:" + esc(utf8(tok[1])))
        elif kind == "DOCTYPE":
            out.append("D")
        else:
            raise ValueError(kind)
    if chars:
        out.append("C:" + esc(utf8(chars)))
    return out


def main():
    lines = []
    for path in sys.argv[2:]:
        name = os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        for i, t in enumerate(data.get("tests", [])):
            inp = t["input"]
            output = t["output"]
            if t.get("doubleEscaped"):
                inp = unescape(inp)
                output = unescape(output)
            desc = " ".join(t["description"].split()) or "-"
            skip = None
            if has_surrogate(inp):
                skip = "input holds a lone surrogate: no UTF-8 byte form"
            elif any(has_surrogate(json.dumps(o, ensure_ascii=False))
                     for o in output):
                skip = "output holds a lone surrogate: no UTF-8 byte form"
            for state in t.get("initialStates", ["Data state"]):
                lines.append("test %s %d %s" % (name, i, desc))
                lines.append("state " + state.replace(" state", ""))
                lines.append("last " + (t.get("lastStartTag") or "-"))
                if skip:
                    lines.append("skip " + skip)
                else:
                    lines.append("input " + utf8(inp).hex())
                    for tok in canon(output):
                        lines.append("expect " + tok)
                lines.append("end")
    with open(sys.argv[1], "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
