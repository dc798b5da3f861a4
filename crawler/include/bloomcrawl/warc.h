/*
 * bloomcrawl/warc.h - a streaming WARC/1.1 writer (ISO 28500:2017).
 *
 * A WARC file is a sequence of records, each a header block
 *
 *   WARC/1.1\r\n
 *   WARC-Type: response\r\n
 *   WARC-Record-ID: <urn:uuid:...>\r\n
 *   ... named fields ...\r\n
 *   Content-Length: N\r\n
 *   \r\n
 *
 * followed by N bytes of content (the record's "block") and \r\n\r\n. A
 * request or response record's block is the HTTP message as it went over
 * the wire (status or request line, header lines, the body before content
 * decoding, chunk framing kept); its "payload" is the entity body: the
 * body alone, de-chunked when the head says Transfer-Encoding: chunked
 * (WARC 1.1, under WARC-Payload-Digest). WARC-Block-Digest and
 * WARC-Payload-Digest are "sha1:" and the SHA-1 of each in RFC 4648
 * base32 (20 bytes -> 32 characters, no padding). The writer does not
 * decode transfer codings: the caller that read the body gives its
 * payload apart (bc_warc_record_payload(); the fetcher's on_wire_payload
 * has it). A record given none has its body as payload when its head
 * names no transfer coding, and no WARC-Payload-Digest when it names one
 * (a digest of the framed body would be a wrong one).
 *
 * Streaming: both Content-Length and the digests must be in the header,
 * before the block, so the block is kept until the record ends. A record
 * is opened (bc_warc_record_begin()), its bytes are appended in pieces of
 * any size while SHA-1 contexts hash them in the same pass: they are held
 * in memory while the block is at most 1 MiB, and go to the record's
 * spool file (an unlinked file in the WARC's directory: on the archive's
 * file system, not /tmp's tmpfs) from the append that takes it past
 * 1 MiB. Ending the record (bc_warc_record_end()) writes the header, then
 * the block: a held block at once (compressed in one call), a spooled one
 * copied in 64 KiB pieces. Memory is at most 1 MiB per open record plus
 * about 2 MiB per writer and the ended records it keeps for reuse (at
 * most 64 of 256 KiB), whatever the bodies' sizes; disk is one extra
 * copy of each open record past 1 MiB. Many records may be open at once
 * (one per transfer in flight); each goes to the file whole, when it ends.
 *
 * Compression: a name ending in ".warc.gz" gets one gzip member per
 * record (header, block and the trailing \r\n\r\n), so readers can seek to
 * a record's offset and split files; any other name is written plain.
 *
 * Rotation: with max_size > 0 the files are NAME-00000.warc.gz,
 * NAME-00001.warc.gz, ... (the sequence number before ".warc" or
 * ".warc.gz", at the end of a name with neither). Each file opens with the
 * warcinfo record; a record goes to the next file when the current one
 * holds a record besides its warcinfo and has reached max_size bytes,
 * except that a record whose concurrent_to is the id of the record ended
 * just before it (a response ended after its request) stays in that
 * record's file: a request/response pair is never split across files. A
 * record is never split: a file exceeds max_size by at most its last
 * pair of records, and holds at least one record after its warcinfo.
 *
 * Resuming: bc_warc_tell() gives the writer's position (the current
 * file's sequence number, its length, its records), which a durable crawl
 * commits with its pages; bc_warc_open_at() reopens the file at that
 * position, cuts what follows (records written after the commit, a torn
 * record) and appends, without a second warcinfo in that file; files
 * after it are removed, and rotation goes on from its sequence number.
 *
 * Every record after a warcinfo carries WARC-Warcinfo-ID, the id of its
 * file's warcinfo record (read back from the file when reopened).
 *
 * Revisits: a response whose payload was archived before can be written
 * as a revisit record instead (bc_warc_record_end_revisit()): its head
 * only, naming the original record, as Heritrix and wget --warc-dedup do.
 *
 * The library never prints; not thread-safe: one writer and its records,
 * one thread.
 */
#ifndef BC_CRAWLER_WARC_H
#define BC_CRAWLER_WARC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bloomcrawl/status.h"

#ifdef __cplusplus
extern "C" {
#endif

struct bc_warc;
struct bc_warc_record;

/* The record types this writer produces. */
enum bc_warc_type {
    BC_WARC_REQUEST,  /* application/http;msgtype=request */
    BC_WARC_RESPONSE, /* application/http;msgtype=response */
};

/* Where a writer is (bc_warc_tell()), and where bc_warc_open_at()
 * resumes. */
struct bc_warc_position {
    unsigned seq;     /* the current file's sequence number (0 without
                         rotation) */
    uint64_t offset;  /* its length: where the next record starts */
    uint64_t records; /* records in it after its warcinfo */
};

/* What a writer has written since it was created or opened. */
struct bc_warc_stats {
    uint64_t files;   /* files created (a file reopened is not counted) */
    uint64_t records; /* records written, warcinfo records included */
    uint64_t bytes;   /* bytes written (compressed for .warc.gz) */
};

/* Room for a record id "<urn:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx>"
 * (47 characters) and its NUL. */
#define BC_WARC_ID_SIZE 48

/*
 * Create a writer for PATH (copied) and write its first file's warcinfo
 * record, whose block is WARCINFO (application/warc-fields, "name: value"
 * lines ending in \r\n, copied; software, options, robots policy).
 * max_size: 0 for one file, else the rotation size in bytes (see above).
 * On success *out owns the writer: free it with bc_warc_free().
 * Returns BC_OK, BC_ERR_INVALID_ARG (NULL argument, a path with CR or
 * LF), BC_ERR_NOMEM, or
 * BC_ERR_IO (the file or the spool could not be created or written; errno
 * says why).
 */
enum bc_status bc_warc_create(const char *path, uint64_t max_size,
                              const char *warcinfo, struct bc_warc **out);

/*
 * Create a writer as bc_warc_create() does, but at a position saved by
 * bc_warc_tell(): the file of at->seq is reopened and cut to at->offset
 * (its records after the warcinfo: at->records, for the rotation rule),
 * and records are appended to it, no warcinfo written; an offset of 0
 * creates that file afresh with its warcinfo. With rotation, the files
 * after at->seq are removed. PATH, MAX_SIZE and WARCINFO as for
 * bc_warc_create(). Returns BC_OK (*out), BC_ERR_INVALID_ARG (as
 * bc_warc_create(), a NULL at, a seq other than 0 without rotation),
 * BC_ERR_NOMEM, BC_ERR_TRUNCATED (the file is shorter than at->offset:
 * not the file the position belongs to; left as it is) or BC_ERR_IO
 * (errno says why: ENOENT for a missing file). Cost: O(1) plus the
 * removals.
 */
enum bc_status bc_warc_open_at(const char *path, uint64_t max_size,
                               const char *warcinfo,
                               const struct bc_warc_position *at,
                               struct bc_warc **out);

/* Fill *out with the writer's position: after its last record (all zero
 * for NULL). O(1). */
void bc_warc_tell(const struct bc_warc *w, struct bc_warc_position *out);

/* Fill *out with the writer's counters (all zero for NULL). O(1). */
void bc_warc_stats(const struct bc_warc *w, struct bc_warc_stats *out);

/* The current file's name (PATH, or PATH with its sequence number), owned
 * by the writer and valid until the next record ends; "" for NULL. */
const char *bc_warc_file(const struct bc_warc *w);

/*
 * Write a fresh random record id (RFC 4122 version 4 UUID from OpenSSL's
 * RAND_bytes) as "<urn:uuid:...>" into id. Use it to link a request to its
 * response before either is written. Returns BC_OK or BC_ERR_IO (no
 * randomness).
 */
enum bc_status bc_warc_new_id(char id[BC_WARC_ID_SIZE]);

/*
 * The same as bc_warc_new_id(), for a record of writer w: the UUID's
 * random bytes come from a store the writer fills with one RAND_bytes
 * call for 64 ids (one call per id costs 1.3 us of CPU: OpenSSL's DRBG
 * locking and parameter lookups). A writer, like its file, belongs to
 * one process: a copy of it in a forked child would hand out the
 * parent's next ids. Returns BC_OK,
 * BC_ERR_INVALID_ARG (a NULL writer or id) or BC_ERR_IO (no randomness).
 * Cost: O(1).
 */
enum bc_status bc_warc_next_id(struct bc_warc *w, char id[BC_WARC_ID_SIZE]);

/*
 * Open a record of TYPE for TARGET_URI, fetched at DATE from IP (NULL or
 * "" to omit WARC-IP-Address). ID: the record's id (from bc_warc_next_id()
 * or bc_warc_new_id(), or NULL for a fresh one); CONCURRENT_TO: the id of
 * the linked record, or NULL. All strings are copied. On success *out is
 * the open record, owned by the caller until bc_warc_record_end() or
 * bc_warc_record_abort() (one of them must be called, before
 * bc_warc_free()). Returns BC_OK, BC_ERR_INVALID_ARG (a NULL writer, uri
 * or out, a string with CR or LF, an id too long), BC_ERR_NOMEM or, with
 * no id given, BC_ERR_IO (no randomness). Cost: O(1).
 */
enum bc_status bc_warc_record_begin(struct bc_warc *w, enum bc_warc_type type,
                                    const char *target_uri, const char *ip,
                                    time_t date, const char *id,
                                    const char *concurrent_to,
                                    struct bc_warc_record **out);

/*
 * Append LEN bytes of the record's HTTP head (request or status line and
 * header lines, with their \r\n and the empty line), then of its body
 * (payload). Head bytes must all come before the first body byte; the
 * head is kept in memory until then (its Transfer-Encoding decides how
 * the payload is digested).
 * Returns BC_OK, BC_ERR_INVALID_ARG (NULL record, NULL data with len > 0,
 * head after body), BC_ERR_NOMEM (the block held in memory) or BC_ERR_IO
 * (the spool, opened by the append that takes the block past 1 MiB, could
 * not be opened or written; errno says why). Cost: O(len).
 */
enum bc_status bc_warc_record_head(struct bc_warc_record *r, const void *data,
                                   size_t len);
enum bc_status bc_warc_record_body(struct bc_warc_record *r, const void *data,
                                   size_t len);

/*
 * Give the record's payload apart from its body: LEN bytes of the body
 * with its transfer coding removed (the chunks' data of a chunked body;
 * its content coding, gzip, kept), in pieces of any size. The first call
 * (LEN may be 0) must come before the first body byte: from it on,
 * WARC-Payload-Digest is over these bytes, and body bytes are the block's
 * alone. END: the message's framing ended here (a chunked body's last
 * chunk and trailer came), so its body is whole (see
 * bc_warc_record_end()); no payload may follow it. A caller whose
 * decoding failed stops giving payload there, and ends the record as
 * truncated or aborts it.
 * Returns BC_OK or BC_ERR_INVALID_ARG (NULL record, NULL data with
 * len > 0, a first call after a body byte, a call after END). Cost:
 * O(len).
 */
enum bc_status bc_warc_record_payload(struct bc_warc_record *r,
                                      const void *data, size_t len, bool end);

/*
 * Write the record to its writer's file and free it (whatever the
 * outcome). TRUNCATED: the body was cut (by a size limit, a parser that stopped
 * reading): adds "WARC-Truncated: length", unless the record's framing shows
 * its body whole (the payload's END came, or, in a head without transfer
 * coding, as many body bytes as its Content-Length): a body read to its end is
 * not marked, whoever stopped the reading. On success, if not NULL, *file gets
 * the file it went to (owned by the writer, valid until the next record ends or
 * bc_warc_free()) and *offset the byte offset of its start (of its gzip
 * member for .warc.gz). A failed write may leave a partial record at the
 * end of the file, which the next record follows. Returns BC_OK,
 * BC_ERR_INVALID_ARG (NULL record), BC_ERR_NOMEM or BC_ERR_IO.
 * Cost: O(record size).
 */
enum bc_status bc_warc_record_end(struct bc_warc_record *r, bool truncated,
                                  const char **file, uint64_t *offset);

/* The WARC-Profile of a revisit record whose payload is identical to its
 * original's (WARC 1.1 section 6.7.2). */
#define BC_WARC_PROFILE_IDENTICAL                                              \
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"

/* The WARC-Profile of a revisit record of a 304 Not Modified answer to
 * a conditional request (WARC 1.1 section 6.7.3). */
#define BC_WARC_PROFILE_NOT_MODIFIED                                           \
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

/* The original record a revisit record refers to. */
struct bc_warc_refers {
    const char *id;         /* its WARC-Record-ID, "<urn:uuid:...>" (NULL or ""
                       for bc_warc_record_end_not_modified: unknown) */
    const char *target_uri; /* its WARC-Target-URI */
    time_t date;            /* its WARC-Date */
};

/*
 * The SHA-1 of a response record's payload so far (what its
 * WARC-Payload-Digest would say if it ended now) into out, the record
 * left as it is: the caller that read the whole body asks whether it was
 * archived before. Returns BC_OK, BC_ERR_INVALID_ARG (NULL argument, a
 * request record), BC_ERR_NOT_FOUND (the record will have no payload
 * digest: its head names a transfer coding and no payload was given
 * apart) or BC_ERR_NOMEM. Cost: O(1) (a copy of the SHA-1 state).
 */
enum bc_status bc_warc_record_payload_sha1(const struct bc_warc_record *r,
                                           unsigned char out[20]);

/*
 * Write a response record as a revisit record of profile
 * BC_WARC_PROFILE_IDENTICAL (WARC 1.1 section 6.7.2) and free it, as
 * bc_warc_record_end() does: its payload was archived before, in the
 * record REFERS names (WARC-Refers-To, WARC-Refers-To-Target-URI,
 * WARC-Refers-To-Date, all copied into the header). Its block is the
 * HTTP head alone (status line, header lines, empty line; Content-Type
 * application/http;msgtype=response), with the head's WARC-Block-Digest
 * and the whole payload's WARC-Payload-Digest, which a reader compares
 * with the original's. The caller checked the payloads are the same
 * (bc_warc_record_payload_sha1()); a body cut short is no payload to
 * deduplicate, so there is no truncated flag. *file and *offset as for
 * bc_warc_record_end(). Returns BC_ERR_INVALID_ARG (NULL argument or
 * field, a request record, a record with no payload digest, CR or LF in
 * refers' strings, an id too long: the record is left open, to end or
 * abort), else as bc_warc_record_end(). Cost: O(head size).
 */
enum bc_status bc_warc_record_end_revisit(struct bc_warc_record *r,
                                          const struct bc_warc_refers *refers,
                                          const char **file, uint64_t *offset);

/*
 * Write a response record, a 304 Not Modified to a conditional request,
 * as a revisit record of profile BC_WARC_PROFILE_NOT_MODIFIED (WARC 1.1
 * section 6.7.3) and free it, as bc_warc_record_end() does: the page is
 * the one fetched at refers->date from refers->target_uri, archived in
 * record refers->id (NULL or "": not known, and no WARC-Refers-To is
 * written). Its block is the 304's HTTP head, with its WARC-Block-Digest
 * and no WARC-Payload-Digest (a 304 has no payload). *file and *offset
 * as for bc_warc_record_end(). Returns BC_ERR_INVALID_ARG (NULL argument
 * or target_uri, a request record, CR or LF in refers' strings, an id
 * too long: the record is left open, to end or abort), else as
 * bc_warc_record_end(). Cost: O(head size).
 */
enum bc_status
bc_warc_record_end_not_modified(struct bc_warc_record *r,
                                const struct bc_warc_refers *refers,
                                const char **file, uint64_t *offset);

/*
 * Free a record without writing it (a failed fetch). NULL is a no-op.
 */
void bc_warc_record_abort(struct bc_warc_record *r);

/*
 * Flush and close the current file and free the writer; its records must
 * have been ended or aborted. NULL is a no-op. Returns BC_OK or BC_ERR_IO
 * (the final close failed: the last records may be lost; errno says why).
 */
enum bc_status bc_warc_free(struct bc_warc *w);

#ifdef __cplusplus
}
#endif

#endif /* BC_CRAWLER_WARC_H */
