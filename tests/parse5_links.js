// parse5_links.js - the links a browser's tree holds, for the parse5
// differential test (tests/diff_parse5.py).
//
// Usage: node parse5_links.js PARSE5_DIR CORPUS
// Reads the corpus of links_dump.c (documents as "LENGTH\n" + bytes,
// decoded as UTF-8), parses each with parse5 (the WHATWG HTML parser of
// jsdom; scripting enabled, as in a browser) and prints, in tree order,
// the same lines as links_dump: "link KIND HREF" for HTML a/area href
// (and svg <a>: href, else xlink:href), frame/iframe src, and link href whose
// rel holds canonical, alternate, next or prev and not stylesheet; and
// "base HREF" for the first <base> with an href, at its place, in tree
// order: a template's contents (walked for links, which a script may put
// in the page) are not in the tree, and a <base> there is no base.
'use strict';
const path = require('path');
const fs = require('fs');
const {pathToFileURL} = require('url');
let parse5; // ESM: imported in main()

function esc(s) {
    const b = Buffer.from(s, 'utf8');
    let out = '';
    for (const c of b) {
        if (c > 0x20 && c < 0x7f && c !== 0x5c) out += String.fromCharCode(c);
        else out += '\\x' + c.toString(16).padStart(2, '0');
    }
    return out;
}

function attr(node, name, prefix) {
    for (const a of node.attrs || []) {
        if (a.name === name && (prefix ? a.prefix === prefix : !a.prefix))
            return a.value;
    }
    return null;
}

function relFlags(rel) {
    const t = new Set((rel || '').toLowerCase().split(/[ \t\n\r\f]+/));
    const kind = t.has('canonical') || t.has('alternate') || t.has('next') ||
                 t.has('prev') || t.has('previous');
    return kind && !t.has('stylesheet');
}

const HTML_NS = 'http://www.w3.org/1999/xhtml';
const SVG_NS = 'http://www.w3.org/2000/svg';

function walk(node, out, st, inTemplate) {
    const ns = node.namespaceURI;
    // HTML elements; in svg only <a> is a link.
    const tag = ns === HTML_NS || (ns === SVG_NS && node.tagName === 'a')
        ? node.tagName : null;
    if (tag) {
        if (tag === 'a' || tag === 'area') {
            let v = attr(node, 'href');
            if (v === null && tag === 'a') v = attr(node, 'href', 'xlink');
            if (v !== null) out.push('link ANCHOR ' + esc(v));
        } else if (tag === 'frame' || tag === 'iframe') {
            const v = attr(node, 'src');
            if (v !== null) out.push('link FRAME ' + esc(v));
        } else if (tag === 'link') {
            const v = attr(node, 'href');
            if (v !== null && relFlags(attr(node, 'rel')))
                out.push('link LINK ' + esc(v));
        } else if (tag === 'base' && !st.base && !inTemplate) {
            const v = attr(node, 'href');
            if (v !== null) {
                st.base = true;
                out.push('base ' + esc(v));
            }
        }
    }
    if (node.content) walk(node.content, out, st, true); // <template>
    for (const c of node.childNodes || []) walk(c, out, st, inTemplate);
}

async function main() {
parse5 = await import(pathToFileURL(path.join(
    process.argv[2], 'node_modules', 'parse5', 'dist', 'index.js')).href);
const data = fs.readFileSync(process.argv[3]);
let off = 0;
let doc = 0;
const lines = [];
while (off < data.length) {
    const nl = data.indexOf(10, off);
    const len = parseInt(data.slice(off, nl).toString('ascii'), 10);
    const html = data.slice(nl + 1, nl + 1 + len).toString('utf8');
    off = nl + 1 + len;
    const out = [];
    walk(parse5.parse(html), out, {base: false}, false);
    lines.push('doc ' + doc++, ...out, 'end');
    if (lines.length > 10000) {
        process.stdout.write(lines.join('\n') + '\n');
        lines.length = 0;
    }
}
process.stdout.write(lines.length ? lines.join('\n') + '\n' : '');
}

main();
