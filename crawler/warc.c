/*
 * warc.c - the streaming WARC/1.1 writer (bloomcrawl/warc.h).
 *
 * The problem: a WARC record's header carries Content-Length and the
 * SHA-1 digests of its block, yet the block (an HTTP response of any
 * size) arrives in pieces after the header would have to be written.
 *
 * The choice: hold, then spool. Every appended piece is hashed (two SHA-1
 * contexts: the block, and the payload, which is the body after the HTTP
 * head without its transfer coding: PAYLOAD below) and kept, in one pass.
 * When the record ends its length and digests are known: the header is
 * written, then the block after it. Writing a placeholder header and
 * patching it cannot work inside a gzip member, and two passes over the
 * network are not possible: the block must be kept until its end.
 *
 * MEMORY FIRST: the block is kept in memory (struct bc_warc_record.mem)
 * while it fits MEM_MAX, 1 MiB, and only a block that grows past it goes
 * to a spool file (an unlinked file beside the WARC: open_spool()), the
 * bytes held so far first. Holding every block in memory would break on
 * a 5 GB body; spooling every block, as this writer did first, cost two
 * file creations, a write, a read and two unlinks per transfer (request
 * and response) in the output directory: in a perf profile of a crawl
 * of the PostgreSQL manual with --warc to a .warc.gz, 29 % of its CPU was
 * the kernel's (ext4's inode and block allocation among it) and 45 %
 * zlib's (bench/bench_warc.sh --perf, BENCHMARKS-crawl.md). Memory
 * stays bounded: at most MEM_MAX (and its header's room) per open record,
 * so concurrency x 1 MiB for the crawl's records (16 MiB at 16
 * transfers), plus the writer's buffers of one record (its gzip member,
 * and a copy of a record whose header does not fit its room: HEADER IN
 * PLACE; about 2 x 1 MiB), kept from record to record, plus the ended
 * records kept for reuse (RECYCLING: at most 64 x 256 KiB). A web page is
 * a few tens of KiB: a crawl of pages opens no spool at all, and a spool
 * that cannot be opened (EMFILE) fails only a record past 1 MiB, at the
 * append that crosses it.
 *
 * HEADER IN PLACE: a record is written as one text, header, block and
 * \r\n\r\n, compressed in one call (gzip below). Its block is held in a
 * buffer that begins with room for its header (gap: HEADER_ROOM bytes
 * and the lengths of the target URI, IP address and WARC-Concurrent-To
 * id, which a request's or response's header always fits); when the
 * record ends, the header is copied into the room's end and \r\n\r\n
 * after the block, and the text is compressed where it lies. Copying the
 * block after its header into another buffer, as this writer did, copied
 * every byte of the crawl once more. A header longer than its room (a
 * revisit's names one more URI; its block is a head, small) and the
 * warcinfo record are copied into the writer's text buffer.
 *
 * RECYCLING: a crawl ends two records per page, and what each record
 * allocated showed in a profile of the --warc crawl (malloc and free,
 * OpenSSL looking up SHA-1 at each of its contexts' inits, snprintf of
 * the header and the record ids: bench/results/warc.md). So the writer
 * fetches SHA-1 once (EVP_MD_fetch()), keeps ended records (at most
 * SPARE_MAX, 64) with their block buffer (one past KEEP_MAX, 256 KiB, is
 * freed) and three SHA-1 states for the next records to begin, formats
 * headers and ids by copying strings (no printf), and a WARC-Date once
 * per second. A kept record holds no string or spool of its last life,
 * and everything else in it is set anew at its begin (record_get()).
 *
 * IDS: every record has a random id (a version 4 UUID), and a crawl makes two a
 * page. OpenSSL's RAND_bytes() costs 1.3 us of CPU for the 16 bytes of one id,
 * mostly around the bytes (its DRBG's lock, a getpid() system call, its
 * parameters looked up by name: 108 strcmp() calls a page in callgrind), and
 * 2.3 us for 4 KiB, so the writer draws ID_BATCH ids' bytes (1 KiB) at once and
 * hands them out (bc_warc_next_id()): a crawl of the PostgreSQL manual runs
 * 14.9 M fewer instructions (callgrind) and 2,351 fewer system calls; its CPU
 * time, 2 x 1.3 us a page less by the count above, moved by less than the noise
 * (bench/results/warc.md).
 *
 * PAYLOAD: WARC-Payload-Digest is the digest of the payload, which for
 * an application/http block is its entity body (WARC 1.1, under
 * WARC-Payload-Digest: "per RFC 2616"): the message body with its
 * transfer coding removed, its content coding (gzip) kept. The block
 * keeps the body as it came, chunk framing included (a response record
 * holds the response "received over the network"); the payload digest
 * is over the chunks' data alone, so the same entity sent in other chunks
 * has the same payload digest (what deduplication by payload digest
 * relies on; iipc/warc-specifications#22, Heritrix's #769). The writer
 * does not decode chunks: the caller that read them does (the fetcher,
 * with the project's one decoder, fetcher/chunked.c) and gives the
 * payload apart (bc_warc_record_payload(), declared before the first body
 * byte), with the end of the chunked message when it came. A record
 * given no payload apart has its body as payload when its head names no
 * transfer coding, and no WARC-Payload-Digest when it names one (the
 * field is optional; a wrong one is worse; warc.h says so). A body cut
 * short (WARC-Truncated) has the digest of the payload before the cut.
 *
 * WARCINFO ID: every other record names its file's warcinfo record in
 * WARC-Warcinfo-ID (an optional field of WARC 1.1), as wget and Heritrix
 * write it, so a record read alone (seeked to by its offset) leads to the
 * crawl's software and options. A file reopened to resume keeps its
 * warcinfo: its id is read back from the file's first record (the first
 * 4 KiB of it, inflated for .warc.gz); a file whose first record has no
 * id there gets records without the field.
 *
 * ROTATION: with max_size, the file is chosen when a record ends
 * (ensure_file()), except for a record whose WARC-Concurrent-To names the
 * record written just before it in the same file (last_id): a response
 * ended right after its request follows it there, so a pair is never
 * split across files (a reader of one file, or a replay tool given one
 * file, finds the request of each response beside it). Rotation is thus
 * decided before the pair, by its first record; a file exceeds max_size
 * by at most its last pair.
 *
 * WHOLE BODY: WARC-Truncated: length says the block is shorter than what
 * was sent. A caller that stops reading a body (a size limit, a parser
 * that gave up) cannot tell whether the bytes it had were all there
 * were; the record's own framing can: a chunked message seen to its last
 * chunk (the caller's payload END), or as many body bytes as the one
 * Content-Length of a head without transfer coding (body_whole()). Such
 * a body is whole and is not marked, whatever the caller says; one the
 * framing cannot judge (no length, read to the close; a transfer coding
 * whose end was not reported) is marked as the caller says.
 *
 * REVISIT: a response whose payload the crawl archived before is written
 * as a revisit record of profile identical-payload-digest (WARC 1.1
 * section 6.7.2): the same fields as a response, plus WARC-Profile and
 * WARC-Refers-To, -Target-URI and -Date naming the original, and only
 * the HTTP head as its block. Whether it is a revisit is known only once
 * the whole payload is hashed, after the body was kept; so the body is
 * kept as for any response, and the revisit writes only the block's
 * first head_len bytes. Its WARC-Block-Digest is the head's: the block
 * digest's SHA-1 state is copied (head_md) when the first body byte
 * comes, before that byte joins it, so no second pass over the head is
 * made. WARC-Payload-Digest stays the whole payload's: it is what a reader
 * compares with the original's. A 304 Not Modified to a conditional
 * request is a revisit of profile server-not-modified (WARC 1.1 section
 * 6.7.3): the same record, with no WARC-Payload-Digest (a 304 has no
 * payload to compare) and WARC-Refers-To only when the caller knows the
 * record of the last fetch.
 *
 * gzip: a .warc.gz record is one gzip member, so a record starts at a
 * member boundary and the offset a caller keeps can be seeked to. A
 * record held in memory is compressed whole, in one call, by ISA-L's
 * igzip (Intel's Intelligent Storage Acceleration Library, Debian's
 * libisal; write_whole(), compress_member()): its text (header, block,
 * \r\n\r\n) is laid out in one buffer (HEADER IN PLACE) and
 * isal_deflate_stateless() makes the member. A spooled record streams
 * through zlib (deflateInit2 with windowBits 15 + 16, reset for each
 * record: emit()). Both write standard members; a reader cannot tell
 * them apart.
 *
 * LEVEL: compression is the largest part of the writer's cost (every
 * byte of every page goes through it once), so the compressor was chosen
 * by measurement on the 2,343 records (17.9 MB of record text) of a crawl
 * of the PostgreSQL manual, each compressed as one member (CPU ms for
 * all of them, bytes of WARC per page, on this project's 2-core machine;
 * bench/results/warc.md):
 *
 *     zlib level 1                     251-258 ms   5,039 bytes/page
 *     libdeflate level 1 (until now)   117-126 ms   4,767
 *     ISA-L level 1                     72-80 ms    4,996
 *     ISA-L level 0, its own tables     41-48 ms    5,609
 *     ISA-L level 0, tables learnt      37-44 ms    5,214 (TABLES)
 *
 * (zlib's default level 6, this writer's first, wrote 4,525.) Level 1's
 * 4.2 % fewer bytes than learnt tables cost 35 ms more, a sixth of the
 * bare crawl's CPU: over the goal (--warc within 1.5 x the bare crawl's
 * CPU, issue 25), so a held record goes out at level 0 with the
 * writer's learnt tables.
 *
 * TABLES: level 0 finds matches (LZ77) as level 1 does, faster, but codes
 * them with one fixed set of Huffman tables instead of tables made per
 * block for its bytes; ISA-L's own tables are made for no data in
 * particular. So the writer learns its own: it compresses its first
 * TRAIN_BYTES (1 MiB) of record text at level 1 while counting its
 * symbols (isal_update_histogram()), makes tables of those counts
 * (isal_create_hufftables(), which gives every symbol a code, seen or
 * not, so any bytes can follow), and compresses at level 0 with them;
 * after every RETRAIN_BYTES (16 MiB) it learns again, for the crawl's
 * bytes change (other sites, other types). Each member carries its
 * tables in its block header: it stays readable alone. Tables learnt
 * from unlike bytes (a crawl that starts on images) cost ratio, not
 * correctness: text then compressed to 48 % of its size instead of 24 %
 * with tables learnt from text (test_learnt_tables' text), until the
 * next learning. Bytes that do not compress are stored (member_bound()).
 */
#define _POSIX_C_SOURCE 200809L
#include "bloomcrawl/warc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <zlib.h>

#include "bc_buf.h"

#define COPY_SIZE (64 * 1024)

/* The most bytes of a block held in memory (MEMORY FIRST): 1 MiB. */
#define MEM_MAX ((size_t)1 << 20)

/* TABLES: the record text a writer learns its Huffman tables from, at
 * its start and again after every RETRAIN_BYTES compressed with them. */
#define TRAIN_BYTES   ((uint64_t)1 << 20)
#define RETRAIN_BYTES ((uint64_t)16 << 20)

/* A record header's fixed text (HEADER IN PLACE): its field names, the
 * ids, dates, digests and length, all but the target URI, the IP address,
 * the WARC-Concurrent-To id and a revisit's WARC-Refers-To-Target-URI.
 * With every optional field, 20-character dates and a 20-digit length:
 * 487 bytes for a request or response, 703 for a revisit (its profile,
 * WARC-Refers-To and -Date; 24 of it WARC-Truncated, which a revisit
 * never has); 11 more per date past the year 9999 (498, 725).
 * HEADER_ROOM is kept before every block: a request's or response's
 * header fits it, a revisit's (its head alone: small) may be copied.
 * HEADER_MAX bounds any header's fixed text. */
#define HEADER_ROOM 512
#define HEADER_MAX  1024

/* Ended records kept for reuse (RECYCLING): at most SPARE_MAX of them,
 * each keeping a block buffer of at most KEEP_MAX bytes. */
#define SPARE_MAX 64
#define KEEP_MAX  ((size_t)256 << 10)

/* Record ids drawn from one RAND_bytes call (IDS): 64, 1 KiB of random
 * bytes. */
#define ID_BATCH 64

struct bc_warc {
    char *path;        /* as given */
    char *file;        /* the current file's name */
    uint64_t max_size; /* 0: no rotation */
    unsigned seq;      /* the current file's sequence number */
    bool gz;
    FILE *out;        /* NULL until the first record, or after rotating */
    uint64_t size;    /* bytes in the current file */
    uint64_t records; /* records in it after its warcinfo */
    struct bc_warc_stats stats; /* of this writer (bc_warc_stats) */
    char *warcinfo;
    char info_id[BC_WARC_ID_SIZE]; /* the current file's warcinfo record
                                      id, "" when unknown (WARCINFO ID) */
    char last_id[BC_WARC_ID_SIZE]; /* the id of the record written last
                                      to the current file, "" if none
                                      (ROTATION) */
    z_stream z;
    bool z_ready;
    unsigned char *buf; /* COPY_SIZE, then the deflate output */
    unsigned char *zbuf;
    /* A record in memory, whole (MEMORY FIRST): its text, and its gzip
     * member; both kept from record to record, at most MEM_MAX and a
     * header more (and the compression bound of that). */
    struct isal_zstream *isal;
    /* TABLES: the histogram being learnt (NULL when none is), the
     * tables learnt (NULL before the first), and the bytes of record
     * text in this training or since its tables were made. */
    struct isal_huff_histogram *hist;
    struct isal_hufftables *tables;
    uint64_t counted;
    struct bc_buf text;
    unsigned char *member;
    size_t member_cap;
    struct bc_buf header; /* a record's header, formatted (record_write) */
    /* RECYCLING: SHA-1 fetched once, a state for md_peek(), the records
     * ended and kept for reuse, the last WARC-Date formatted. */
    EVP_MD *sha1;
    EVP_MD_CTX *peek;
    struct bc_warc_record *spare;
    size_t spares;
    time_t date_t;
    char date[32]; /* "" until a date is formatted */
    /* IDS: random bytes for the next ids, ids_left of them unused (the
     * first ids_left x 16 bytes). */
    unsigned char ids[ID_BATCH * 16];
    size_t ids_left;
};

/* A record being appended to: its fields, its spool, its digests. */
struct bc_warc_record {
    struct bc_warc *w;
    enum bc_warc_type type;
    bool in_body;
    char *uri;
    char *ip;
    char *concurrent_to;
    char id[BC_WARC_ID_SIZE];
    time_t date;
    uint64_t len;
    /* The block while it fits MEM_MAX (MEMORY FIRST), after gap bytes
     * kept for its header (HEADER IN PLACE). */
    struct bc_buf mem;
    size_t gap;
    FILE *spool; /* then (NULL until) its spool file */
    EVP_MD_CTX *block_md;
    EVP_MD_CTX *payload_md;
    /* The HTTP head, kept until the first body byte to learn its
     * transfer coding and length (PAYLOAD, WHOLE BODY above). */
    struct bc_buf head;
    bool coded;              /* the head names a transfer coding */
    bool has_length;         /* the head gave one valid Content-Length */
    uint64_t content_length; /* its value (WHOLE BODY) */
    uint64_t body_len;       /* body bytes appended */
    bool payload_apart;      /* the payload comes by bc_warc_record_payload */
    bool payload_end;        /* ... and its message's end came */
    /* The head alone, for a revisit record (REVISIT): its length and the
     * block digest's state at the first body byte (copied then). */
    uint64_t head_len;
    EVP_MD_CTX *head_md;
    struct bc_warc_record *next; /* in the writer's spares (RECYCLING) */
};

static void sha1_base32(EVP_MD_CTX *md, char out[33])
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(md, d, &n);
    /* 20 bytes = 160 bits = 32 groups of 5 bits. */
    unsigned bits = 0, acc = 0, k = 0;
    for (unsigned i = 0; i < 20; i++) {
        acc = (acc << 8) | d[i];
        bits += 8;
        while (bits >= 5) {
            out[k++] = alphabet[(acc >> (bits - 5)) & 31];
            bits -= 5;
        }
    }
    out[k] = '\0';
}

/* Text: S's N bytes at p, and where the text goes on. */
static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* Format the record id of the 16 random bytes at u (its version and
 * variant bits are set in place). */
static void format_id(unsigned char u[16], char id[BC_WARC_ID_SIZE])
{
    static const char hex[] = "0123456789abcdef";
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    /* "<urn:uuid:" 8-4-4-4-12 hex digits ">": 47 characters. */
    char *p = id;
    p = put(p, "<urn:uuid:", 10);
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[u[i] >> 4];
        *p++ = hex[u[i] & 15];
    }
    *p++ = '>';
    *p = '\0';
}

enum bc_status bc_warc_new_id(char id[BC_WARC_ID_SIZE])
{
    unsigned char u[16];
    if (RAND_bytes(u, sizeof(u)) != 1)
        return BC_ERR_IO;
    format_id(u, id);
    return BC_OK;
}

enum bc_status bc_warc_next_id(struct bc_warc *w, char id[BC_WARC_ID_SIZE])
{
    if (!w || !id)
        return BC_ERR_INVALID_ARG;
    if (w->ids_left == 0) {
        if (RAND_bytes(w->ids, (int)sizeof(w->ids)) != 1)
            return BC_ERR_IO;
        w->ids_left = ID_BATCH;
    }
    w->ids_left--;
    format_id(w->ids + 16 * w->ids_left, id);
    return BC_OK;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The name of file number seq: PATH itself without rotation, else the
 * sequence number inserted before ".warc.gz" or ".warc", or appended to
 * a name with neither. */
static char *file_name(const struct bc_warc *w)
{
    if (w->max_size == 0)
        return strdup(w->path);
    const char *ext = w->gz                         ? ".warc.gz"
                      : ends_with(w->path, ".warc") ? ".warc"
                                                    : "";
    size_t stem = strlen(w->path) - strlen(ext);
    size_t n = stem + strlen(ext) + 16;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s-%05u%s", (int)stem, w->path, w->seq, ext);
    return s;
}

/* Write len bytes of a record, through the open gzip member if any. */
static enum bc_status emit(struct bc_warc *w, const void *data, size_t len,
                           bool finish)
{
    if (!w->gz) {
        if (len && fwrite(data, 1, len, w->out) != len)
            return BC_ERR_IO;
        w->size += len;
        w->stats.bytes += len;
        return BC_OK;
    }
    w->z.next_in = (unsigned char *)(uintptr_t)data;
    w->z.avail_in = (uInt)len;
    int flush = finish ? Z_FINISH : Z_NO_FLUSH;
    for (;;) {
        w->z.next_out = w->zbuf;
        w->z.avail_out = COPY_SIZE;
        int rc = deflate(&w->z, flush);
        if (rc == Z_STREAM_ERROR)
            return BC_ERR_IO;
        size_t have = COPY_SIZE - w->z.avail_out;
        if (have && fwrite(w->zbuf, 1, have, w->out) != have)
            return BC_ERR_IO;
        w->size += have;
        w->stats.bytes += have;
        if (finish ? rc == Z_STREAM_END : w->z.avail_in == 0)
            return BC_OK;
    }
}

/* The most bytes isal_deflate_stateless() writes for n bytes as a gzip
 * member: when deflate would not make them smaller, it stores them, 5
 * bytes of block header per 65,535 bytes or part of them (one empty
 * block for none), in the member's 10-byte header and 8-byte trailer. */
static size_t member_bound(size_t n)
{
    return n + 5 * (n / 65535 + 1) + 18;
}

/* Compress the record text TEXT (LEN bytes, at most MEM_MAX and a
 * header) into w->member (member_bound(len) bytes) as one gzip member of
 * *n bytes: at level 0 with the writer's tables, or at level 1 while it
 * learns them (TABLES). */
static enum bc_status compress_member(struct bc_warc *w, const char *text,
                                      size_t len, size_t *n)
{
    uint8_t *in = (uint8_t *)(uintptr_t)text; /* ISA-L only reads it */
    if (!w->hist && w->counted >= RETRAIN_BYTES) {
        w->hist = calloc(1, sizeof(*w->hist)); /* zeroed, as ISA-L wants */
        if (!w->hist)
            return BC_ERR_NOMEM;
        w->counted = 0;
    }
    struct isal_zstream *z = w->isal;
    isal_deflate_stateless_init(z);
    if (w->hist) {
        isal_update_histogram(in, (int)len, w->hist);
        z->level = 1; /* needs no level buffer in one call */
    } else {
        isal_deflate_set_hufftables(z, w->tables, IGZIP_HUFFTABLE_CUSTOM);
        z->level = 0;
    }
    /* isal_deflate_stateless_init() leaves the window's size as it was:
     * 0 is the default 32 KiB (with a stream from malloc(), garbage made
     * it a few bytes, and text came out stored: test_learnt_tables). */
    z->hist_bits = 0;
    z->gzip_flag = IGZIP_GZIP;
    z->end_of_stream = 1;
    z->next_in = in;
    z->avail_in = (uint32_t)len;
    z->next_out = w->member;
    z->avail_out = (uint32_t)member_bound(len);
    if (isal_deflate_stateless(z) != COMP_OK) /* not within the bound */
        return BC_ERR_IO;
    *n = z->total_out;
    w->counted += len;
    if (w->hist && w->counted >= TRAIN_BYTES) {
        /* Every symbol gets a code, seen or not: any text can follow.
         * Tables ISA-L cannot make (or no memory for them) leave the
         * writer learning, at level 1, from the next TRAIN_BYTES. */
        struct isal_hufftables *t = malloc(sizeof(*t));
        if (t && isal_create_hufftables(t, w->hist) == 0) {
            free(w->tables);
            w->tables = t;
            free(w->hist);
            w->hist = NULL;
        } else {
            free(t);
            memset(w->hist, 0, sizeof(*w->hist));
        }
        w->counted = 0;
    }
    return BC_OK;
}

/* Write a record held in memory (MEMORY FIRST): header, block and the
 * trailing \r\n\r\n, as one gzip member compressed in one call
 * (compress_member()), or plain. HEADER IN PLACE: when the ROOM bytes before
 * BLOCK hold the header and the 4 bytes after it may be written (a
 * record's own buffer), the text is laid out there; else it is copied
 * into w->text (the warcinfo record, a header longer than its room). */
static enum bc_status write_whole(struct bc_warc *w, const char *header,
                                  size_t header_len, char *block,
                                  size_t block_len, size_t room, size_t tail)
{
    const char *text;
    size_t text_len = header_len + block_len + 4;
    if (header_len <= room && tail >= 4) {
        char *start = block - header_len;
        memcpy(start, header, header_len);
        memcpy(block + block_len, "\r\n\r\n", 4);
        text = start;
    } else {
        bc_buf_clear(&w->text);
        if (bc_buf_append(&w->text, header, header_len) != BC_OK ||
            bc_buf_append(&w->text, block, block_len) != BC_OK ||
            bc_buf_append(&w->text, "\r\n\r\n", 4) != BC_OK)
            return BC_ERR_NOMEM;
        text = w->text.data;
    }
    const void *out = text;
    size_t n = text_len;
    if (w->gz) {
        size_t bound = member_bound(text_len);
        if (bound > w->member_cap) {
            unsigned char *m = realloc(w->member, bound);
            if (!m)
                return BC_ERR_NOMEM;
            w->member = m;
            w->member_cap = bound;
        }
        enum bc_status st = compress_member(w, text, text_len, &n);
        if (st != BC_OK)
            return st;
        out = w->member;
    }
    if (fwrite(out, 1, n, w->out) != n)
        return BC_ERR_IO;
    w->size += n;
    w->stats.bytes += n;
    return BC_OK;
}

/* Write a whole record from a header text and either BLOCK_LEN bytes at
 * BLOCK (a record in memory, with ROOM and TAIL bytes around it:
 * write_whole()) or the spool's first spool_len bytes (a record spooled:
 * streamed through zlib's deflate). */
static enum bc_status write_record(struct bc_warc *w, const char *header,
                                   size_t header_len, char *block,
                                   size_t block_len, size_t room, size_t tail,
                                   FILE *spool, uint64_t spool_len)
{
    enum bc_status st;
    if (!spool) {
        st = write_whole(w, header, header_len, block, block_len, room, tail);
    } else {
        st = w->gz && deflateReset(&w->z) != Z_OK ? BC_ERR_IO : BC_OK;
        if (st == BC_OK)
            st = emit(w, header, header_len, false);
        if (st == BC_OK)
            rewind(spool);
        size_t n;
        while (st == BC_OK && spool_len > 0 &&
               (n = fread(w->buf, 1,
                          spool_len < COPY_SIZE ? (size_t)spool_len : COPY_SIZE,
                          spool)) > 0) {
            st = emit(w, w->buf, n, false);
            spool_len -= n;
        }
        if (st == BC_OK && (ferror(spool) || spool_len > 0))
            st = BC_ERR_IO;
        if (st == BC_OK)
            st = emit(w, "\r\n\r\n", 4, true);
    }
    if (st == BC_OK && fflush(w->out) != 0)
        st = BC_ERR_IO;
    if (st == BC_OK)
        w->stats.records++;
    return st;
}

static void iso_date(time_t t, char out[32])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* A record's WARC-Date, formatted once for the records of one second
 * (a request and its response share theirs). */
static const char *record_date(struct bc_warc *w, time_t t)
{
    if (!w->date[0] || w->date_t != t) {
        iso_date(t, w->date);
        w->date_t = t;
    }
    return w->date;
}

/* Write the warcinfo record that opens each file. */
static enum bc_status write_warcinfo(struct bc_warc *w)
{
    char id[BC_WARC_ID_SIZE], date[32], digest[33];
    if (bc_warc_next_id(w, id) != BC_OK)
        return BC_ERR_IO;
    memcpy(w->info_id, id, sizeof(id));
    iso_date(time(NULL), date);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!md)
        return BC_ERR_NOMEM;
    size_t len = strlen(w->warcinfo);
    EVP_DigestInit_ex(md, w->sha1, NULL);
    EVP_DigestUpdate(md, w->warcinfo, len);
    sha1_base32(md, digest);
    EVP_MD_CTX_free(md);
    const char *slash = strrchr(w->file, '/');
    const char *base = slash ? slash + 1 : w->file;
    size_t n = strlen(base) + 512;
    char *header = malloc(n);
    if (!header)
        return BC_ERR_NOMEM;
    int k = snprintf(header, n,
                     "WARC/1.1\r\n"
                     "WARC-Type: warcinfo\r\n"
                     "WARC-Record-ID: %s\r\n"
                     "WARC-Date: %s\r\n"
                     "WARC-Filename: %s\r\n"
                     "WARC-Block-Digest: sha1:%s\r\n"
                     "Content-Type: application/warc-fields\r\n"
                     "Content-Length: %zu\r\n"
                     "\r\n",
                     id, date, base, digest, len);
    enum bc_status st =
        write_record(w, header, (size_t)k, w->warcinfo, len, 0, 0, NULL, 0);
    free(header);
    return st;
}

/* Make sure a file is open for the next record: the first, or the next
 * one when the current holds a record besides its warcinfo and has
 * reached max_size. */
static enum bc_status ensure_file(struct bc_warc *w)
{
    if (w->out &&
        (w->max_size == 0 || w->records == 0 || w->size < w->max_size))
        return BC_OK;
    if (w->out) {
        int rc = fclose(w->out);
        w->out = NULL;
        w->seq++; /* even on failure: never reopen (truncate) that file */
        if (rc != 0)
            return BC_ERR_IO;
    }
    char *name = file_name(w);
    if (!name)
        return BC_ERR_NOMEM;
    FILE *f = fopen(name, "wb");
    if (!f) {
        free(name);
        return BC_ERR_IO;
    }
    free(w->file);
    w->file = name;
    w->out = f;
    w->size = 0;
    w->records = 0;
    w->stats.files++;
    return write_warcinfo(w);
}

/* A writer with nothing open yet: its buffers and deflate stream. */
static enum bc_status writer_new(const char *path, uint64_t max_size,
                                 const char *warcinfo, struct bc_warc **out)
{
    if (!path || !warcinfo || !out || !*path || strpbrk(path, "\r\n"))
        return BC_ERR_INVALID_ARG; /* the name goes into WARC-Filename */
    struct bc_warc *w = calloc(1, sizeof(*w));
    if (!w)
        return BC_ERR_NOMEM;
    w->max_size = max_size;
    w->gz = ends_with(path, ".warc.gz");
    w->path = strdup(path);
    w->warcinfo = strdup(warcinfo);
    w->buf = malloc(COPY_SIZE);
    w->zbuf = malloc(COPY_SIZE);
    bc_buf_init(&w->text, 0); /* a header and at most MEM_MAX */
    bc_buf_init(&w->header, 0);
    if (w->gz)
        w->isal = malloc(sizeof(*w->isal));
    if (w->gz)
        w->hist = calloc(1, sizeof(*w->hist)); /* the first training */
    w->sha1 = EVP_MD_fetch(NULL, "SHA1", NULL);
    w->peek = EVP_MD_CTX_new();
    enum bc_status st = BC_OK;
    if (!w->path || !w->warcinfo || !w->buf || !w->zbuf ||
        (w->gz && (!w->isal || !w->hist)) || !w->sha1 || !w->peek)
        st = BC_ERR_NOMEM;
    if (st == BC_OK && w->gz) {
        if (deflateInit2(&w->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK)
            st = BC_ERR_NOMEM;
        else
            w->z_ready = true;
    }
    if (st != BC_OK) {
        bc_warc_free(w);
        return st;
    }
    *out = w;
    return BC_OK;
}

enum bc_status bc_warc_create(const char *path, uint64_t max_size,
                              const char *warcinfo, struct bc_warc **out)
{
    struct bc_warc *w = NULL;
    enum bc_status st = writer_new(path, max_size, warcinfo, &w);
    if (st != BC_OK)
        return st;
    st = ensure_file(w);
    if (st != BC_OK) {
        int e = errno;
        bc_warc_free(w);
        errno = e;
        return st;
    }
    *out = w;
    return BC_OK;
}

/* Remove the files after the current one (a resumed crawl's files that
 * hold only records written after its last commit). */
static enum bc_status remove_later_files(struct bc_warc *w)
{
    if (w->max_size == 0)
        return BC_OK;
    unsigned seq = w->seq;
    enum bc_status st = BC_OK;
    for (w->seq = seq + 1; st == BC_OK && w->seq > seq; w->seq++) {
        char *name = file_name(w);
        if (!name) {
            st = BC_ERR_NOMEM;
        } else if (unlink(name) != 0) {
            if (errno == ENOENT) {
                free(name);
                break;
            }
            st = BC_ERR_IO;
        }
        free(name);
    }
    w->seq = seq;
    return st;
}

/* Read the WARC-Record-ID of the first record of file NAME (its first
 * 4 KiB, inflated for .warc.gz) into w->info_id; "" if none is there. */
static void read_info_id(struct bc_warc *w, const char *name)
{
    enum { HEAD_MAX = 4096 };
    w->info_id[0] = '\0';
    FILE *f = fopen(name, "rb");
    if (!f)
        return;
    unsigned char in[HEAD_MAX];
    char head[HEAD_MAX + 1];
    size_t n = fread(in, 1, sizeof(in), f), len = n;
    fclose(f);
    if (w->gz) {
        z_stream z = {0};
        if (inflateInit2(&z, 15 + 16) != Z_OK)
            return;
        z.next_in = in;
        z.avail_in = (uInt)n;
        z.next_out = (unsigned char *)head;
        z.avail_out = HEAD_MAX;
        inflate(&z, Z_SYNC_FLUSH);
        len = HEAD_MAX - z.avail_out;
        inflateEnd(&z);
    } else {
        memcpy(head, in, n);
    }
    head[len] = '\0';
    char *end = strstr(head, "\r\n\r\n");
    char *p = strstr(head, "\r\nWARC-Record-ID: <");
    if (!end || !p || p > end)
        return;
    p += strlen("\r\nWARC-Record-ID: ");
    size_t k = strcspn(p, "\r");
    if (k < BC_WARC_ID_SIZE && p[k - 1] == '>') {
        memcpy(w->info_id, p, k);
        w->info_id[k] = '\0';
    }
}

/* Reopen the file of at->seq, cut to at->offset, for appending. */
static enum bc_status reopen(struct bc_warc *w,
                             const struct bc_warc_position *at)
{
    char *name = file_name(w);
    if (!name)
        return BC_ERR_NOMEM;
    int fd = open(name, O_WRONLY | O_CLOEXEC);
    struct stat sb;
    enum bc_status st = BC_OK;
    if (fd < 0 || fstat(fd, &sb) != 0)
        st = BC_ERR_IO;
    else if ((uint64_t)sb.st_size < at->offset)
        st = BC_ERR_TRUNCATED;
    else if (ftruncate(fd, (off_t)at->offset) != 0)
        st = BC_ERR_IO;
    FILE *f = st == BC_OK ? fdopen(fd, "ab") : NULL;
    if (st == BC_OK && !f)
        st = BC_ERR_IO;
    if (st != BC_OK) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        free(name);
        errno = e;
        return st;
    }
    w->file = name;
    w->out = f;
    w->size = at->offset;
    w->records = at->records;
    read_info_id(w, name);
    return BC_OK;
}

enum bc_status bc_warc_open_at(const char *path, uint64_t max_size,
                               const char *warcinfo,
                               const struct bc_warc_position *at,
                               struct bc_warc **out)
{
    if (!at || (max_size == 0 && at->seq != 0))
        return BC_ERR_INVALID_ARG;
    struct bc_warc *w = NULL;
    enum bc_status st = writer_new(path, max_size, warcinfo, &w);
    if (st != BC_OK)
        return st;
    w->seq = at->seq;
    st = at->offset == 0 ? ensure_file(w) : reopen(w, at);
    if (st == BC_OK)
        st = remove_later_files(w);
    if (st != BC_OK) {
        int e = errno;
        bc_warc_free(w);
        errno = e;
        return st;
    }
    *out = w;
    return BC_OK;
}

void bc_warc_tell(const struct bc_warc *w, struct bc_warc_position *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (!w)
        return;
    out->seq = w->seq;
    out->offset = w->out ? w->size : 0;
    out->records = w->out ? w->records : 0;
}

void bc_warc_stats(const struct bc_warc *w, struct bc_warc_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof(*out));
    if (w)
        *out = w->stats;
}

const char *bc_warc_file(const struct bc_warc *w)
{
    return w && w->file ? w->file : "";
}

/* Free a record and all it holds. */
static void record_destroy(struct bc_warc_record *r)
{
    bc_buf_free(&r->head);
    bc_buf_free(&r->mem);
    EVP_MD_CTX_free(r->block_md);
    EVP_MD_CTX_free(r->payload_md);
    EVP_MD_CTX_free(r->head_md);
    free(r);
}

/* End a record's life: its strings and spool go, the rest is kept for
 * the next record among the writer's spares (RECYCLING), or freed. */
static void record_free(struct bc_warc_record *r)
{
    if (!r)
        return;
    int e = errno; /* a failed write's, which the caller reports */
    struct bc_warc *w = r->w;
    free(r->uri);
    free(r->ip);
    free(r->concurrent_to);
    r->uri = r->ip = r->concurrent_to = NULL;
    if (r->spool)
        fclose(r->spool);
    r->spool = NULL;
    if (w->spares < SPARE_MAX) {
        if (r->mem.cap > KEEP_MAX)
            bc_buf_free(&r->mem);
        r->next = w->spare;
        w->spare = r;
        w->spares++;
    } else {
        record_destroy(r);
    }
    errno = e;
}

/* A record to fill: a spare, its buffers and SHA-1 states kept, or a new
 * one. NULL: no memory. */
static struct bc_warc_record *record_get(struct bc_warc *w)
{
    struct bc_warc_record *r = w->spare;
    if (r) {
        w->spare = r->next;
        w->spares--;
        struct bc_warc_record kept = *r;
        memset(r, 0, sizeof(*r));
        r->mem = kept.mem;
        r->head = kept.head;
        r->block_md = kept.block_md;
        r->payload_md = kept.payload_md;
        r->head_md = kept.head_md;
        bc_buf_clear(&r->mem);
        bc_buf_clear(&r->head);
    } else {
        r = calloc(1, sizeof(*r));
        if (!r)
            return NULL;
        bc_buf_init(&r->head, 0); /* a head: bounded by its fetcher */
        bc_buf_init(&r->mem, 0);  /* at most gap + MEM_MAX: keep() */
        r->block_md = EVP_MD_CTX_new();
        r->payload_md = EVP_MD_CTX_new();
        r->head_md = EVP_MD_CTX_new();
        if (!r->block_md || !r->payload_md || !r->head_md) {
            record_destroy(r);
            return NULL;
        }
    }
    r->w = w;
    return r;
}

/* A record's spool: an unlinked file in the directory of the WARC (its
 * file system, sized for the archive; tmpfile() would put it in /tmp,
 * often a tmpfs, where a large body sits in memory). The name exists
 * between mkstemp() and unlink() only. NULL on failure (errno says). */
static FILE *open_spool(const struct bc_warc *w)
{
    const char *slash = strrchr(w->path, '/');
    int dir = slash ? (int)(slash - w->path) + 1 : 0;
    size_t n = (size_t)dir + sizeof(".bc-warc-spool-XXXXXX");
    char *name = malloc(n);
    if (!name)
        return NULL;
    snprintf(name, n, "%.*s.bc-warc-spool-XXXXXX", dir, w->path);
    int fd = mkstemp(name);
    FILE *f = NULL;
    if (fd >= 0) {
        unlink(name);
        (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
        f = fdopen(fd, "w+b");
        if (!f) {
            int e = errno;
            close(fd);
            errno = e;
        }
    }
    free(name);
    return f;
}

static bool has_crlf(const char *s)
{
    return s && strpbrk(s, "\r\n") != NULL;
}

enum bc_status bc_warc_record_begin(struct bc_warc *w, enum bc_warc_type type,
                                    const char *target_uri, const char *ip,
                                    time_t date, const char *id,
                                    const char *concurrent_to,
                                    struct bc_warc_record **out)
{
    if (!w || !target_uri || !out || has_crlf(target_uri) || has_crlf(ip) ||
        has_crlf(id) || has_crlf(concurrent_to) ||
        (id && strlen(id) >= BC_WARC_ID_SIZE))
        return BC_ERR_INVALID_ARG;
    struct bc_warc_record *r = record_get(w);
    if (!r)
        return BC_ERR_NOMEM;
    r->type = type;
    r->date = date;
    r->uri = strdup(target_uri);
    r->ip = ip && *ip ? strdup(ip) : NULL;
    r->concurrent_to = concurrent_to ? strdup(concurrent_to) : NULL;
    /* HEADER IN PLACE: room for the header before the block. */
    r->gap = HEADER_ROOM + strlen(target_uri) + (ip ? strlen(ip) : 0) +
             (concurrent_to ? strlen(concurrent_to) : 0);
    enum bc_status st = BC_OK;
    if (!r->uri || (ip && *ip && !r->ip) ||
        (concurrent_to && !r->concurrent_to) ||
        bc_buf_reserve(&r->mem, r->gap) != BC_OK)
        st = BC_ERR_NOMEM;
    else
        bc_buf_truncate(&r->mem, r->gap);
    if (st == BC_OK) {
        if (id)
            memcpy(r->id, id, strlen(id) + 1);
        else
            st = bc_warc_next_id(w, r->id);
    }
    if (st == BC_OK && (EVP_DigestInit_ex(r->block_md, w->sha1, NULL) != 1 ||
                        EVP_DigestInit_ex(r->payload_md, w->sha1, NULL) != 1))
        st = BC_ERR_NOMEM;
    if (st != BC_OK) {
        record_free(r);
        return st;
    }
    *out = r;
    return BC_OK;
}

static bool lower_eq(const char *s, size_t n, const char *lower)
{
    if (strlen(lower) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((s[i] >= 'A' && s[i] <= 'Z' ? s[i] | 0x20 : s[i]) != lower[i])
            return false;
    return true;
}

/* Whether a head's Transfer-Encoding fields name a transfer coding
 * (any but "identity"): then its body is not its payload (PAYLOAD above).
 * The codings themselves are the caller's to undo. */
static bool head_coded(const char *h, size_t n)
{
    if (!h)
        return false; /* no head */
    const char *end = h + n;
    const char *line = memchr(h, '\n', n); /* skip the status line */
    while (line && ++line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        const char *stop = eol ? eol : end;
        const char *colon = memchr(line, ':', (size_t)(stop - line));
        if (colon &&
            lower_eq(line, (size_t)(colon - line), "transfer-encoding")) {
            for (const char *p = colon + 1; p < stop;) {
                const char *comma = memchr(p, ',', (size_t)(stop - p));
                const char *q = comma ? comma : stop;
                const char *a = p, *b = q;
                while (a < b && (*a == ' ' || *a == '\t'))
                    a++;
                while (b > a &&
                       (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
                    b--;
                if (a < b && !lower_eq(a, (size_t)(b - a), "identity"))
                    return true;
                p = q + 1;
            }
        }
        line = eol;
    }
    return false;
}

/* The body length a head's Content-Length fields give (RFC 9112 section
 * 6.3): true and *out when every value, over all the fields and their
 * comma-separated lists, is the same decimal number; false for none, a
 * value that is not one, or two that differ. */
static bool head_length(const char *h, size_t n, uint64_t *out)
{
    bool found = false;
    uint64_t len = 0;
    if (!h)
        return false;
    const char *end = h + n;
    const char *line = memchr(h, '\n', n); /* skip the status line */
    while (line && ++line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        const char *stop = eol ? eol : end;
        const char *colon = memchr(line, ':', (size_t)(stop - line));
        if (colon && lower_eq(line, (size_t)(colon - line), "content-length")) {
            for (const char *p = colon + 1; p <= stop;) {
                const char *comma = memchr(p, ',', (size_t)(stop - p));
                const char *q = comma ? comma : stop;
                const char *a = p, *b = q;
                while (a < b && (*a == ' ' || *a == '\t'))
                    a++;
                while (b > a &&
                       (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
                    b--;
                uint64_t v = 0;
                if (a == b)
                    return false;
                for (const char *d = a; d < b; d++) {
                    if (*d < '0' || *d > '9' || v > (UINT64_MAX - 9) / 10)
                        return false;
                    v = v * 10 + (uint64_t)(*d - '0');
                }
                if (found && v != len)
                    return false;
                found = true;
                len = v;
                p = q + 1;
            }
        }
        line = eol;
    }
    if (found)
        *out = len;
    return found;
}

/* Whether a record's body came whole by its own framing (WHOLE BODY):
 * the end of a coded (chunked) message, as the caller reported it, or as
 * many bytes as the Content-Length of a head without transfer coding.
 * False when the framing cannot tell (no length: a body read to the
 * connection's close; a coding whose end was not reported). */
static bool body_whole(const struct bc_warc_record *r)
{
    if (r->payload_end)
        return true;
    if (!r->in_body) { /* no body byte: its head decides, still kept */
        uint64_t n;
        return !head_coded(r->head.data, r->head.len) &&
               head_length(r->head.data, r->head.len, &n) && n == 0;
    }
    return !r->coded && r->has_length && r->body_len == r->content_length;
}

/* Keep LEN more bytes of r's block: in memory while the block fits
 * MEM_MAX, else in its spool, opened then with the bytes held so far
 * (MEMORY FIRST). */
static enum bc_status keep(struct bc_warc_record *r, const void *data,
                           size_t len)
{
    size_t held = r->mem.len - r->gap;
    if (!r->spool && len <= MEM_MAX - held)
        return bc_buf_append(&r->mem, data, len);
    if (!r->spool) {
        FILE *f = open_spool(r->w);
        if (!f)
            return BC_ERR_IO;
        if (held && fwrite(r->mem.data + r->gap, 1, held, f) != held) {
            int e = errno;
            fclose(f);
            errno = e;
            return BC_ERR_IO;
        }
        r->spool = f;
        bc_buf_free(&r->mem);
        r->gap = 0;
    }
    return fwrite(data, 1, len, r->spool) == len ? BC_OK : BC_ERR_IO;
}

static enum bc_status append(struct bc_warc_record *r, const void *data,
                             size_t len, bool body)
{
    if (!r || (!body && r->in_body) || (!data && len))
        return BC_ERR_INVALID_ARG;
    if (len == 0)
        return BC_OK;
    if (!body && bc_buf_reserve(&r->head, len) != BC_OK)
        return BC_ERR_NOMEM;
    if (body && !r->in_body) {
        /* REVISIT: the head's length and block digest, kept before the
         * first body byte joins the block's. */
        if (EVP_MD_CTX_copy_ex(r->head_md, r->block_md) != 1)
            return BC_ERR_NOMEM;
        r->head_len = r->len;
        r->coded = head_coded(r->head.data, r->head.len);
        r->has_length =
            head_length(r->head.data, r->head.len, &r->content_length);
        bc_buf_free(&r->head);
        r->in_body = true;
    }
    enum bc_status st = keep(r, data, len);
    if (st != BC_OK)
        return st;
    EVP_DigestUpdate(r->block_md, data, len);
    if (!body) {
        (void)bc_buf_append(&r->head, data, len); /* reserved above */
    } else {
        if (!r->payload_apart && !r->coded)
            EVP_DigestUpdate(r->payload_md, data, len);
        r->body_len += len;
    }
    r->len += len;
    return BC_OK;
}

enum bc_status bc_warc_record_payload(struct bc_warc_record *r,
                                      const void *data, size_t len, bool end)
{
    if (!r || (!data && len) || r->payload_end ||
        (!r->payload_apart && r->in_body))
        return BC_ERR_INVALID_ARG;
    r->payload_apart = true;
    r->payload_end = end;
    if (len)
        EVP_DigestUpdate(r->payload_md, data, len);
    return BC_OK;
}

enum bc_status bc_warc_record_head(struct bc_warc_record *r, const void *data,
                                   size_t len)
{
    return append(r, data, len, false);
}

enum bc_status bc_warc_record_body(struct bc_warc_record *r, const void *data,
                                   size_t len)
{
    return append(r, data, len, true);
}

/* The SHA-1 of what md has hashed so far, md left as it is. */
static bool md_peek(struct bc_warc *w, const EVP_MD_CTX *md,
                    unsigned char out[20])
{
    unsigned int n = 0;
    return EVP_MD_CTX_copy_ex(w->peek, md) == 1 &&
           EVP_DigestFinal_ex(w->peek, out, &n) == 1 && n == 20;
}

/* Whether the record has a payload digest (PAYLOAD above). */
static bool has_payload_digest(const struct bc_warc_record *r)
{
    return r->payload_apart || !r->coded;
}

enum bc_status bc_warc_record_payload_sha1(const struct bc_warc_record *r,
                                           unsigned char out[20])
{
    if (!r || !out || r->type != BC_WARC_RESPONSE)
        return BC_ERR_INVALID_ARG;
    if (!has_payload_digest(r))
        return BC_ERR_NOT_FOUND;
    return md_peek(r->w, r->payload_md, out) ? BC_OK : BC_ERR_NOMEM;
}

/* Write record r (a revisit of REFERS when not NULL, of PROFILE: REVISIT)
 * and free it: bc_warc_record_end(), bc_warc_record_end_revisit() and
 * bc_warc_record_end_not_modified(). A server-not-modified revisit has
 * no payload to digest and may name no record (refers->id NULL). */
/* A field "NAME VALUE\r\n" (NAME with its colon and space). */
static char *put_field(char *p, const char *name, const char *value)
{
    p = put(p, name, strlen(name));
    p = put(p, value, strlen(value));
    return put(p, "\r\n", 2);
}

/* The decimal digits of v. */
static char *put_u64(char *p, uint64_t v)
{
    char d[20];
    int k = 0;
    do {
        d[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (k)
        *p++ = d[--k];
    return p;
}

/* Write record r (a revisit of REFERS when not NULL, of PROFILE: REVISIT)
 * and free it: bc_warc_record_end(), bc_warc_record_end_revisit() and
 * bc_warc_record_end_not_modified(). A server-not-modified revisit has
 * no payload to digest and may name no record (refers->id NULL). */
static enum bc_status record_write(struct bc_warc_record *r, bool truncated,
                                   const struct bc_warc_refers *refers,
                                   const char *profile, const char **file,
                                   uint64_t *offset)
{
    struct bc_warc *w = r->w;
    char block[33], payload[33], ref_date[32];
    /* A revisit's block is the head alone: its digest as it was at the
     * first body byte (or the whole block's, when no body came). */
    bool revisit = refers != NULL;
    bool head_only = revisit && r->in_body;
    bool not_modified =
        revisit && strcmp(profile, BC_WARC_PROFILE_NOT_MODIFIED) == 0;
    sha1_base32(head_only ? r->head_md : r->block_md, block);
    sha1_base32(r->payload_md, payload);
    uint64_t block_len = head_only ? r->head_len : r->len;
    enum bc_status st = !r->spool || fflush(r->spool) == 0 ? BC_OK : BC_ERR_IO;
    /* ROTATION: a record linked to the one just written (a response to
     * its request) follows it in the same file. */
    bool pair = w->out && r->concurrent_to && w->last_id[0] &&
                strcmp(r->concurrent_to, w->last_id) == 0;
    w->last_id[0] = '\0';
    if (st == BC_OK && !pair)
        st = ensure_file(w);
    /* The header's variable strings and its fixed text (HEADER_MAX). */
    size_t n = strlen(r->uri) + (r->ip ? strlen(r->ip) : 0) +
               (r->concurrent_to ? strlen(r->concurrent_to) : 0) +
               (revisit ? strlen(refers->target_uri) : 0) + HEADER_MAX;
    bc_buf_clear(&w->header);
    if (st == BC_OK && bc_buf_reserve(&w->header, n) != BC_OK)
        st = BC_ERR_NOMEM;
    if (st == BC_OK) {
        bool response = r->type == BC_WARC_RESPONSE;
        char *h = w->header.data, *p = h;
        p = put(p, "WARC/1.1\r\n", 10);
        p = put_field(p, "WARC-Type: ",
                      revisit    ? "revisit"
                      : response ? "response"
                                 : "request");
        p = put_field(p, "WARC-Record-ID: ", r->id);
        p = put_field(p, "WARC-Date: ", record_date(w, r->date));
        p = put_field(p, "WARC-Target-URI: ", r->uri);
        if (r->ip)
            p = put_field(p, "WARC-IP-Address: ", r->ip);
        if (r->concurrent_to)
            p = put_field(p, "WARC-Concurrent-To: ", r->concurrent_to);
        if (w->info_id[0])
            p = put_field(p, "WARC-Warcinfo-ID: ", w->info_id);
        if (revisit) {
            iso_date(refers->date, ref_date);
            p = put_field(p, "WARC-Profile: ", profile);
            if (refers->id && refers->id[0])
                p = put_field(p, "WARC-Refers-To: ", refers->id);
            p = put_field(p, "WARC-Refers-To-Target-URI: ", refers->target_uri);
            p = put_field(p, "WARC-Refers-To-Date: ", ref_date);
        }
        if (truncated && !body_whole(r)) /* WHOLE BODY */
            p = put(p, "WARC-Truncated: length\r\n", 24);
        p = put_field(p, "WARC-Block-Digest: sha1:", block);
        if (has_payload_digest(r) && !not_modified)
            p = put_field(p, "WARC-Payload-Digest: sha1:", payload);
        p = put_field(p, "Content-Type: application/http;msgtype=",
                      response ? "response" : "request");
        p = put(p, "Content-Length: ", 16);
        p = put_u64(p, block_len);
        p = put(p, "\r\n\r\n", 4);
        bc_buf_truncate(&w->header, (size_t)(p - h));
        /* HEADER IN PLACE: the record's buffer has gap bytes before its
         * block and, once 4 more are reserved, room for \r\n\r\n. */
        char *data = NULL;
        size_t tail = 0;
        if (!r->spool) {
            (void)bc_buf_reserve(&r->mem, 4); /* else copied: write_whole */
            data = r->mem.data + r->gap;
            tail = r->mem.cap - r->gap - (size_t)block_len;
        }
        uint64_t start = w->size;
        st = write_record(w, h, w->header.len, data, (size_t)block_len, r->gap,
                          tail, r->spool, block_len);
        if (st == BC_OK) {
            w->records++;
            memcpy(w->last_id, r->id, sizeof(w->last_id));
            if (file)
                *file = w->file;
            if (offset)
                *offset = start;
        }
    }
    record_free(r);
    return st;
}

enum bc_status bc_warc_record_end(struct bc_warc_record *r, bool truncated,
                                  const char **file, uint64_t *offset)
{
    if (!r)
        return BC_ERR_INVALID_ARG;
    return record_write(r, truncated, NULL, NULL, file, offset);
}

enum bc_status bc_warc_record_end_revisit(struct bc_warc_record *r,
                                          const struct bc_warc_refers *refers,
                                          const char **file, uint64_t *offset)
{
    if (!r || !refers || !refers->id || !refers->target_uri ||
        r->type != BC_WARC_RESPONSE || !has_payload_digest(r) ||
        has_crlf(refers->id) || has_crlf(refers->target_uri) ||
        strlen(refers->id) >= BC_WARC_ID_SIZE)
        return BC_ERR_INVALID_ARG;
    return record_write(r, false, refers, BC_WARC_PROFILE_IDENTICAL, file,
                        offset);
}

enum bc_status
bc_warc_record_end_not_modified(struct bc_warc_record *r,
                                const struct bc_warc_refers *refers,
                                const char **file, uint64_t *offset)
{
    if (!r || !refers || !refers->target_uri || r->type != BC_WARC_RESPONSE ||
        has_crlf(refers->target_uri) ||
        (refers->id &&
         (has_crlf(refers->id) || strlen(refers->id) >= BC_WARC_ID_SIZE)))
        return BC_ERR_INVALID_ARG;
    return record_write(r, false, refers, BC_WARC_PROFILE_NOT_MODIFIED, file,
                        offset);
}

void bc_warc_record_abort(struct bc_warc_record *r)
{
    record_free(r);
}

enum bc_status bc_warc_free(struct bc_warc *w)
{
    if (!w)
        return BC_OK;
    enum bc_status st = BC_OK;
    int err = 0;
    if (w->out && fclose(w->out) != 0) {
        st = BC_ERR_IO;
        err = errno; /* the caller's message: kept through the frees */
    }
    if (w->z_ready)
        deflateEnd(&w->z);
    free(w->isal);
    free(w->hist);
    free(w->tables);
    while (w->spare) {
        struct bc_warc_record *r = w->spare;
        w->spare = r->next;
        record_destroy(r);
    }
    EVP_MD_CTX_free(w->peek);
    EVP_MD_free(w->sha1);
    bc_buf_free(&w->header);
    bc_buf_free(&w->text);
    free(w->member);
    free(w->buf);
    free(w->zbuf);
    free(w->warcinfo);
    free(w->path);
    free(w->file);
    free(w);
    if (st != BC_OK)
        errno = err;
    return st;
}
