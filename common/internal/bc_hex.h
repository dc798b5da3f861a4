/*
 * bc_hex.h - hex digits (private to bloomcrawl, not installed).
 */
#ifndef BC_COMMON_HEX_H
#define BC_COMMON_HEX_H

#include <stdint.h>

/* "0123456789ABCDEF" and "0123456789abcdef". */
extern const char bc_hex_upper[16];
extern const char bc_hex_lower[16];

/* The value of the hex digit c (0-9, a-f, A-F), or -1 when it is none. */
static inline int bc_hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20; /* ASCII lowercase; non-letters stay out of a-f */
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

#endif /* BC_COMMON_HEX_H */
