/*
 * pct_int.h - the one percent-encoding rule of frontier/: which bytes a
 * canonical URL writes raw and which it escapes, and how escapes are
 * written. Private to frontier (never installed); url.c applies it to the
 * URLs it produces, robots.c to robots.txt patterns and to the paths it
 * is asked about, so a pattern that spells a URL's path matches it.
 *
 * THE RULE (RFC 3986 sections 2.1-2.4, 3.3, 3.4 and 6.2.2)
 *
 *   kept raw in a path segment:  unreserved  A-Z a-z 0-9 - . _ ~
 *                                sub-delims  ! $ & ' ( ) * + , ; =
 *                                and         : @
 *   kept raw in a query:         the same, and / ?
 *   kept raw in userinfo:        unreserved and ! $ & ' ( ) * + ,
 *                                (the WHATWG URL Standard's userinfo
 *                                percent-encode set leaves these alone:
 *                                ':' ';' '=' '@' are %3A %3B %3D %40 in a
 *                                username or a password, so that every
 *                                spelling browsers merge is merged here)
 *
 * Every other byte is written %XY with uppercase hex: controls, space,
 * " < > [ \ ] ^ ` { | }, DEL and every byte >= 0x80 (and '#', which only
 * a decoded escape can bring). '/' and '?' end a path segment, '#' a
 * query; they are delimiters there, not data. An escape in the input is
 * canonicalized (pct_escape() below): %XY of an unreserved character is
 * that character (RFC 3986 6.2.2.2), any other %XY is kept with its hex
 * in uppercase, and a '%' that starts no escape is a literal percent sign,
 * written %25.
 *
 * Two more rules come from browsers (the WHATWG URL Standard) and apply
 * to hrefs and patterns alike: TAB, CR and LF are removed wherever they
 * are, and a '\' in the path of an http(s) URL is a '/' (in a query it is
 * data, %5C).
 *
 * url_class[] below also carries the classes url.c needs for the other
 * parts of a URL (scheme, host, the end of the authority), so that each
 * byte is classified by one lookup in one table.
 */
#ifndef BC_FRONTIER_PCT_INT_H
#define BC_FRONTIER_PCT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bc_hex.h"

/*
 * Byte classes. CL_PATH, CL_QUERY and CL_USER say "copy as is" for their
 * component (the rule above). Every byte without the bit is either a
 * delimiter or percent-encoded. CL_UPPER must stay 0x40: url.c lowercases
 * a host byte with c | ((class & CL_UPPER) >> 1), 0x20 for A-Z only.
 */
#define CL_PATH   0x001u /* unreserved sub-delims : @ */
#define CL_QUERY  0x002u /* unreserved sub-delims : @ / ? */
#define CL_USER   0x004u /* unreserved ! $ & ' ( ) * + , */
#define CL_UNRES  0x008u /* A-Z a-z 0-9 - . _ ~ */
#define CL_HEX    0x010u /* 0-9 A-F a-f */
#define CL_HOST   0x020u /* a-z 0-9 - . _ (a canonical host name) */
#define CL_UPPER  0x040u /* A-Z */
#define CL_SCHEME 0x080u /* A-Z a-z 0-9 + - . */
#define CL_AUTH   0x100u /* / \ ? # @ (what the authority scan stops at) */

static const uint16_t url_class[256] = {
    0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, /* 00 ........ */
    0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, /* 08 ........ */
    0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, /* 10 ........ */
    0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, 0x000, /* 18 ........ */
    0x000, 0x007, 0x000, 0x100, 0x007, 0x000, 0x007, 0x007, /* 20  !"#$%&' */
    0x007, 0x007, 0x007, 0x087, 0x007, 0x0af, 0x0af, 0x102, /* 28 ()*+,-./ */
    0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0bf, /* 30 01234567 */
    0x0bf, 0x0bf, 0x003, 0x003, 0x000, 0x003, 0x000, 0x102, /* 38 89:;<=>? */
    0x103, 0x0df, 0x0df, 0x0df, 0x0df, 0x0df, 0x0df, 0x0cf, /* 40 @ABCDEFG */
    0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, /* 48 HIJKLMNO */
    0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, 0x0cf, /* 50 PQRSTUVW */
    0x0cf, 0x0cf, 0x0cf, 0x000, 0x100, 0x000, 0x000, 0x02f, /* 58 XYZ[\]^_ */
    0x000, 0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0bf, 0x0af, /* 60 `abcdefg */
    0x0af, 0x0af, 0x0af, 0x0af, 0x0af, 0x0af, 0x0af, 0x0af, /* 68 hijklmno */
    0x0af, 0x0af, 0x0af, 0x0af, 0x0af, 0x0af, 0x0af, 0x0af, /* 70 pqrstuvw */
    0x0af, 0x0af, 0x0af, 0x000, 0x000, 0x000, 0x00f, 0x000, /* 78 xyz{|}~. */
    /* 0x80-0xff: 0, always percent-encoded */
};

/* The value of a hex digit, or -1 when c is none: bc_hex_value() of
 * bc_hex.h, through the class table, whose one load turns away the bytes
 * of a URL that are no hex digit (most of them) at once. */
static inline int hex_value(unsigned char c)
{
    if (!(url_class[c] & CL_HEX))
        return -1;
    if (c <= '9')
        return c - '0';
    return (c | 0x20) - 'a' + 10;
}

/* RFC 3986 2.3: A-Z a-z 0-9 - . _ ~ (an escape of one is the byte). */
static inline bool pct_is_unreserved(unsigned char c)
{
    return (url_class[c] & CL_UNRES) != 0;
}

/* TAB, CR and LF: removed wherever they are (WHATWG URL Standard). */
static inline bool pct_is_removed(unsigned char c)
{
    return c == '\t' || c == '\n' || c == '\r';
}

/*
 * The escape that starts at s[0] == '%', with n >= 1 bytes available:
 * *byte receives the byte it stands for and the return value says how
 * many input bytes it took (3 for %XY, 1 for a '%' that starts no escape,
 * which stands for '%' itself). *raw says how the byte is written in
 * canonical form: raw (an unreserved character, RFC 3986 6.2.2.2) or as
 * pct_put(). O(1).
 */
static inline size_t pct_escape(const char *s, size_t n, unsigned char *byte,
                                bool *raw)
{
    int hi = n >= 3 ? hex_value((unsigned char)s[1]) : -1;
    int lo = n >= 3 ? hex_value((unsigned char)s[2]) : -1;

    if (hi < 0 || lo < 0) {
        *byte = '%';
        *raw = false;
        return 1;
    }
    *byte = (unsigned char)(hi * 16 + lo);
    *raw = pct_is_unreserved(*byte);
    return 3;
}

/* Write c as "%XY" (uppercase hex) into out[0..2]. */
static inline void pct_put(char *out, unsigned char c)
{
    out[0] = '%';
    out[1] = bc_hex_upper[c >> 4];
    out[2] = bc_hex_upper[c & 15];
}

#endif /* BC_FRONTIER_PCT_INT_H */
