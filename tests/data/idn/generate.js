#!/usr/bin/env node
// tests/data/idn/generate.js HOSTS.tsv - fill the "browsers" column of the
// IDN host table from whatwg-url, the URL Standard's reference
// implementation (it converts hosts with tr46, its UTS #46 library).
//
// Reads the table, keeps each row's input, bloomcrawl and note columns,
// sets browsers to new URL("http://" + input + "/").hostname, or FAIL when
// the URL parser throws, and writes the table to standard output with a
// header naming the versions used. See README.md beside it for the
// commands; the tests read the committed table and never run this.
'use strict';

const fs = require('fs');
const { URL } = require('whatwg-url');

// The input column's escapes: \u{HEX} is that code point, \\ a backslash.
function unescape(s) {
    return s.replace(/\\u\{([0-9A-Fa-f]+)\}|\\\\/g, (m, hex) =>
        hex ? String.fromCodePoint(parseInt(hex, 16)) : '\\');
}

function version(name) {
    return require(require.resolve(name + '/package.json', {
        paths: [require.resolve('whatwg-url')],
    })).version;
}

const path = process.argv[2];
if (!path) {
    process.stderr.write('usage: generate.js HOSTS.tsv > NEW.tsv\n');
    process.exit(2);
}
const out = [
    '# input\tbrowsers\tbloomcrawl\tnote',
    `# browsers: whatwg-url ${version('whatwg-url')} (tr46 ` +
        `${version('tr46')}), new URL("http://" + input + "/").hostname, ` +
        'FAIL when it throws',
];
for (const line of fs.readFileSync(path, 'utf8').split('\n')) {
    if (line === '' || line.startsWith('#'))
        continue;
    const [input, , bloomcrawl, note] = line.split('\t');
    let host;
    try {
        host = new URL('http://' + unescape(input) + '/').hostname;
    } catch (e) {
        host = 'FAIL';
    }
    out.push([input, host, bloomcrawl || '=', note || ''].join('\t'));
}
process.stdout.write(out.join('\n') + '\n');
