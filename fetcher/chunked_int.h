/*
 * chunked_int.h - the chunked transfer coding, decoded as it streams
 * (private to the fetcher, never installed).
 *
 * The one decoder of HTTP/1.1's chunked framing in bloomcrawl: the
 * fetcher takes the framing off a body with it, and hands the WARC writer
 * both the bytes as received (the record's block) and the chunks' data
 * (its payload digest), so the writer never parses framing itself.
 *
 * THE GRAMMAR (RFC 9112 section 7.1)
 *
 *     chunked-body   = *chunk last-chunk trailer-section CRLF
 *     chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *     chunk-size     = 1*HEXDIG
 *     last-chunk     = 1*("0") [ chunk-ext ] CRLF
 *     chunk-ext      = *( BWS ";" BWS chunk-ext-name
 *                         [ BWS "=" BWS chunk-ext-val ] )
 *     trailer-section = *( field-line CRLF )
 *
 * and what this decoder accepts beyond it, and why:
 *   - a line ends at LF, and any CRs just before it are ignored: RFC 9112
 *     section 2.2 lets a recipient take a bare LF as a line end "and
 *     ignore any preceding CR", and curl (which finds the end of the body
 *     on the same bytes) does the same; so "5\n", "5\r\n" and, after chunk
 *     data, "\r\r\n" all end a line. A CR followed by anything but CR or
 *     LF is an error.
 *   - blanks (SP, HTAB) after the size and before the line end ("5 \r\n"),
 *     as nginx and curl take them; BWS before ";" is the grammar's own.
 *   - an extension is not interpreted (RFC 9112: a recipient ignores the
 *     extensions it does not know, which for us is all of them): after
 *     the ";" any bytes up to the line end, except control characters
 *     other than HTAB. A trailer line likewise: its fields are not used.
 * and what it refuses: a size line that does not start with a hex digit,
 * a size followed by anything but blanks, ";" or the line end ("5x\r\n":
 * curl would take "x" as an extension, the grammar does not), a size over
 * 2^64 - 1 (leading zeros are fine: the value counts, not the digits),
 * chunk data not followed by its line end.
 *
 * STREAMING
 * Input comes in pieces split anywhere (the write callback gets what the
 * socket gave). The state is a few words; nothing is buffered. Each call
 * consumes what it can of a piece and reports at most one span of chunk
 * data, which lies inside the piece (no copy):
 *
 *     struct bc_chunked ch;
 *     bc_chunked_init(&ch);
 *     while (n > 0) {
 *         const char *d; size_t dn, used;
 *         enum bc_chunked_status st = bc_chunked_decode(&ch, p, n, &used,
 *                                                       &d, &dn);
 *         if (dn) payload(d, dn);
 *         p += used; n -= used;
 *         if (st != BC_CHUNKED_MORE) break;   // DONE: bytes after it are
 *     }                                       // not the body's; BAD: stop
 */
#ifndef BC_FETCHER_CHUNKED_INT_H
#define BC_FETCHER_CHUNKED_INT_H

#include <stddef.h>
#include <stdint.h>

/* Where the decoder is. */
enum bc_chunked_state {
    BC_CH_SIZE,         /* the hex digits of a chunk size */
    BC_CH_SIZE_WS,      /* blanks after the size */
    BC_CH_EXT,          /* an extension, up to the line end */
    BC_CH_SIZE_CR,      /* a CR on the size line: only CR or LF may follow */
    BC_CH_DATA,         /* chunk data, left bytes to go */
    BC_CH_DATA_END,     /* the line end after chunk data */
    BC_CH_DATA_CR,      /* ... its CR came */
    BC_CH_TRAILER,      /* the start of a trailer line or of the last CRLF */
    BC_CH_TRAILER_LINE, /* in a trailer field line */
    BC_CH_TRAILER_CR,   /* a CR in a trailer line */
    BC_CH_END_CR,       /* the CR of the final empty line */
    BC_CH_DONE,         /* the body ended */
    BC_CH_BAD           /* the framing broke: every later call says BAD */
};

struct bc_chunked {
    enum bc_chunked_state state;
    uint64_t left;   /* the size being read, then its data bytes left */
    unsigned digits; /* hex digits of the size line so far */
};

enum bc_chunked_status {
    BC_CHUNKED_MORE, /* all input used: more is needed */
    BC_CHUNKED_DONE, /* the body ended after *used bytes */
    BC_CHUNKED_BAD   /* the framing broke at in[*used] */
};

/* A decoder at the start of a chunked body. */
void bc_chunked_init(struct bc_chunked *c);

/*
 * Decode from the n bytes at in: *used gets how many were consumed, and
 * *data / *data_len the chunk data among them, if any (a span of in;
 * *data_len 0 otherwise). MORE: call again with in + *used (all of in was
 * used when *data_len is 0). DONE: the last chunk's trailer and empty
 * line ended at in + *used; later calls consume nothing and say DONE.
 * BAD: the byte at in[*used] breaks the framing (a data span before it
 * is still reported); later calls say BAD. Cost: O(*used).
 */
enum bc_chunked_status bc_chunked_decode(struct bc_chunked *c, const char *in,
                                         size_t n, size_t *used,
                                         const char **data, size_t *data_len);

#endif /* BC_FETCHER_CHUNKED_INT_H */
