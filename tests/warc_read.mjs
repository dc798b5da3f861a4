// warc_read.mjs - an independent reader of WARC files for tests/e2e_warc.py:
// warcio.js (Webrecorder's WARC library, from the npm registry) parses them.
//
// Usage: node warc_read.mjs WARCIO_DIR FILE[@OFFSET]...
// WARCIO_DIR holds node_modules/warcio (installed by e2e_warc.py). FILE
// alone: every record of FILE, from its start. FILE@OFFSET: the one record
// that starts at byte OFFSET (a reader seeking to an index entry: the
// stream starts there, nothing before it is read).
//
// Prints one JSON object per record on stdout:
//   {"file", "offset" (where warcio says the record starts; for a seek, the
//    OFFSET asked), "version" (the record's first line), "warc" (its WARC
//    header fields, names lower-cased), "content_length" (the field),
//    "block_length" (bytes of block warcio read), "block_sha1" and
//    "payload_sha1" ("sha1:" + base32 of the SHA-1 of the block and of the
//    bytes after the HTTP head, de-chunked when chunked, computed here:
//    warcio.js reads digests but does not verify them), "block_digest_ok", "payload_digest_ok" (null
//    when the record has no such field, and for a revisit record, whose
//    payload digest is its original's), "http" (request/response: the
//    status or request line and header fields as warcio parsed them, names
//    lower-cased), "payload_b64" (the HTTP body as archived, from warcio's
//    raw reader after its HTTP parse), "head_agrees" (that body equals the
//    block's bytes after its first CRLFCRLF: warcio and this script agree
//    where the head ends), "content_b64" (the body decoded by warcio.js
//    per Transfer-Encoding and Content-Encoding), "warnings" (what warcio
//    printed with console.warn while reading it)}
// and for a file warcio could not read to its end: {"file", "error"}.
// Each file is read twice: once with parseHttp off (the raw block, for the
// block digest), once with it on (HTTP head, raw and decoded body); the two
// must give the same records.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

// RFC 4648 base32 without padding (a SHA-1 is 20 bytes -> 32 characters).
function base32(buf) {
    let bits = 0, value = 0, out = '';
    for (const b of buf) {
        value = (value << 8) | b;
        bits += 8;
        while (bits >= 5) {
            out += B32[(value >>> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    if (bits > 0) out += B32[(value << (5 - bits)) & 31];
    return out;
}

function sha1(buf) {
    return 'sha1:' + base32(crypto.createHash('sha1').update(buf).digest());
}

// The known answers: SHA-1 of "abc" and of "" in base32.
if (sha1(Buffer.from('abc')) !== 'sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5' ||
    sha1(Buffer.alloc(0)) !== 'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ') {
    console.error('warc_read.mjs: the base32 SHA-1 self-check failed');
    process.exit(2);
}

const warnings = [];
console.warn = (...args) => warnings.push(args.join(' '));

function fields(headers) {
    const out = {};
    for (const [k, v] of headers) out[k.toLowerCase()] = v;
    return out;
}

// The entity body of an HTTP message whose head ends at byte end: the
// rest, or the data of its chunks when a Transfer-Encoding field of the
// head says chunked (RFC 9112 7.1; a cut body gives the data before the
// cut).
function entityBody(block, end) {
    const head = Buffer.from(block).subarray(0, end).toString('latin1');
    const body = Buffer.from(block).subarray(end);
    if (!/\r\ntransfer-encoding:[ \t]*chunked[ \t]*\r\n/i.test(head))
        return body;
    const out = [];
    let pos = 0;
    while (pos < body.length) {
        const eol = body.indexOf('\r\n', pos);
        if (eol < 0) break;
        const size = parseInt(body.subarray(pos, eol).toString('latin1')
                              .split(';')[0], 16);
        if (!(size > 0)) break;
        out.push(body.subarray(eol + 2, eol + 2 + size));
        pos = eol + 2 + size + 2;
    }
    return Buffer.concat(out);
}

function headEnd(block) {
    const i = Buffer.from(block).indexOf('\r\n\r\n');
    return i < 0 ? -1 : i + 4;
}

async function records(WARCParser, file, start, parseHttp, one) {
    const stream = fs.createReadStream(file, start ? {start} : {});
    const parser = new WARCParser(stream, {parseHttp});
    const out = [];
    for (;;) {
        warnings.length = 0;
        const rec = await parser.parse();
        if (!rec) break;
        const offset = start ? start + parser.offset : parser.offset;
        const r = {rec, offset};
        if (parseHttp) {
            r.payload = Buffer.from(await rec.readFully(false));
            r.content = rec.httpHeaders ?
                Buffer.from(await rec.readFully(true)) : null;
        } else {
            r.block = Buffer.from(await rec.readFully(false));
        }
        r.warnings = warnings.slice();
        out.push(r);
        if (one) break;
    }
    stream.destroy();
    return out;
}

function digestOk(want, got) {
    return want === undefined || want === null ? null : want === got;
}

async function readFile(WARCParser, arg) {
    const at = arg.lastIndexOf('@');
    let file = arg, start = 0, one = false;
    if (at > 0 && /^\d+$/.test(arg.slice(at + 1))) {
        file = arg.slice(0, at);
        start = Number(arg.slice(at + 1));
        one = true;
    }
    const raw = await records(WARCParser, file, start, false, one);
    const http = await records(WARCParser, file, start, true, one);
    if (raw.length !== http.length)
        throw new Error(`${raw.length} records without the HTTP parse, ` +
                        `${http.length} with it`);
    const lines = [];
    for (let i = 0; i < raw.length; i++) {
        const {rec, block} = raw[i];
        const h = http[i];
        const warc = fields(rec.warcHeaders.headers);
        const type = warc['warc-type'];
        // A revisit record's block is an HTTP head too (issue 24), with
        // no body: its payload digest is its original's, which the caller
        // resolves by WARC-Refers-To (payload_digest_ok null here).
        const revisit = type === 'revisit';
        const isHttp = type === 'request' || type === 'response' || revisit;
        const end = isHttp ? headEnd(block) : -1;
        const payload = end >= 0 ? block.subarray(end) : null;
        const blockSha1 = sha1(block);
        // The payload digest is over the entity body (WARC 1.1): the
        // bytes after the head, de-chunked when the head says chunked.
        const payloadSha1 = payload ? sha1(entityBody(block, end)) : null;
        const o = {
            file, offset: one ? start : raw[i].offset,
            version: rec.warcHeaders.statusline, warc,
            content_length: Number(warc['content-length']),
            block_length: block.length, block_sha1: blockSha1,
            payload_sha1: payloadSha1,
            block_digest_ok: digestOk(warc['warc-block-digest'], blockSha1),
            payload_digest_ok: revisit ? null :
                digestOk(warc['warc-payload-digest'], payloadSha1),
            warnings: raw[i].warnings.concat(h.warnings),
        };
        if (h.rec.httpHeaders) {
            o.http = {line: h.rec.httpHeaders.statusline,
                      headers: fields(h.rec.httpHeaders.headers)};
            o.payload_b64 = h.payload.toString('base64');
            o.head_agrees = payload !== null && h.payload.equals(payload);
            o.content_b64 = h.content.toString('base64');
        }
        if (h.offset !== raw[i].offset)
            o.warnings.push(`offset ${h.offset} with the HTTP parse, ` +
                            `${raw[i].offset} without`);
        lines.push(JSON.stringify(o));
    }
    return lines;
}

async function main() {
    const [dir, ...files] = process.argv.slice(2);
    if (!dir || !files.length) {
        console.error('usage: node warc_read.mjs WARCIO_DIR FILE[@OFFSET]...');
        process.exit(2);
    }
    const entry = path.join(dir, 'node_modules', 'warcio', 'dist', 'index.js');
    const {WARCParser} = await import(pathToFileURL(entry).href);
    for (const arg of files) {
        let lines;
        try {
            lines = await readFile(WARCParser, arg);
        } catch (e) {
            lines = [JSON.stringify({file: arg, error: String(e && e.stack || e)})];
        }
        for (const l of lines) process.stdout.write(l + '\n');
    }
}

main().catch(e => {
    console.error(e);
    process.exit(2);
});
