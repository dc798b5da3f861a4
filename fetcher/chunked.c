/*
 * chunked.c - the streaming decoder of the chunked transfer coding
 * (chunked_int.h: the grammar, what is accepted beyond it and why).
 *
 * One byte at a time through a switch on the state, except chunk data,
 * which is handed out as one span of the input: the framing is a few
 * bytes per chunk, the data is nearly all of a body.
 */
#include "chunked_int.h"

#include <stdbool.h>

#include "bc_hex.h"

void bc_chunked_init(struct bc_chunked *c)
{
    c->state = BC_CH_SIZE;
    c->left = 0;
    c->digits = 0;
}

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

/* A control character other than HTAB: never inside a line. */
static bool is_ctl(char ch)
{
    unsigned char u = (unsigned char)ch;
    return (u < 0x20 && u != '\t') || u == 0x7f;
}

/* The size line ended: data follows, or, for the last chunk, the
 * trailer section. */
static enum bc_chunked_state size_line_end(struct bc_chunked *c)
{
    c->digits = 0;
    return c->left ? BC_CH_DATA : BC_CH_TRAILER;
}

/*
 * One switch over the states, kept whole: each case is one state of
 * enum bc_chunked_state (chunked_int.h) and a few lines long, so the
 * transitions read side by side; a helper per state would add a call per
 * framing byte.
 */
enum bc_chunked_status bc_chunked_decode(struct bc_chunked *c, const char *in,
                                         size_t n, size_t *used,
                                         const char **data, size_t *data_len)
{
    size_t i = 0;
    *data = NULL;
    *data_len = 0;
    while (i < n) {
        char ch = in[i];
        switch (c->state) {
        case BC_CH_SIZE: {
            int d = bc_hex_value((unsigned char)ch);
            if (d >= 0) {
                if (c->left > UINT64_MAX >> 4)
                    goto bad; /* over 2^64 - 1 */
                c->left = c->left << 4 | (uint64_t)d;
                c->digits++;
                break;
            }
            if (c->digits == 0)
                goto bad; /* 1*HEXDIG */
            if (is_blank(ch))
                c->state = BC_CH_SIZE_WS;
            else if (ch == ';')
                c->state = BC_CH_EXT;
            else if (ch == '\r')
                c->state = BC_CH_SIZE_CR;
            else if (ch == '\n')
                c->state = size_line_end(c);
            else
                goto bad; /* "5x" */
            break;
        }
        case BC_CH_SIZE_WS:
            if (ch == ';')
                c->state = BC_CH_EXT;
            else if (ch == '\r')
                c->state = BC_CH_SIZE_CR;
            else if (ch == '\n')
                c->state = size_line_end(c);
            else if (!is_blank(ch))
                goto bad;
            break;
        case BC_CH_EXT:
            if (ch == '\r')
                c->state = BC_CH_SIZE_CR;
            else if (ch == '\n')
                c->state = size_line_end(c);
            else if (is_ctl(ch))
                goto bad;
            break;
        case BC_CH_SIZE_CR:
            if (ch == '\n')
                c->state = size_line_end(c);
            else if (ch != '\r')
                goto bad;
            break;
        case BC_CH_DATA: {
            size_t k = n - i;
            if ((uint64_t)k > c->left)
                k = (size_t)c->left;
            c->left -= k;
            if (c->left == 0)
                c->state = BC_CH_DATA_END;
            *data = in + i;
            *data_len = k;
            *used = i + k;
            return BC_CHUNKED_MORE;
        }
        case BC_CH_DATA_END:
        case BC_CH_DATA_CR:
            if (ch == '\r')
                c->state = BC_CH_DATA_CR;
            else if (ch == '\n')
                c->state = BC_CH_SIZE;
            else
                goto bad;
            break;
        case BC_CH_TRAILER:
            if (ch == '\r')
                c->state = BC_CH_END_CR;
            else if (ch == '\n') {
                c->state = BC_CH_DONE;
                *used = i + 1;
                return BC_CHUNKED_DONE;
            } else if (is_ctl(ch))
                goto bad;
            else
                c->state = BC_CH_TRAILER_LINE;
            break;
        case BC_CH_TRAILER_LINE:
            if (ch == '\r')
                c->state = BC_CH_TRAILER_CR;
            else if (ch == '\n')
                c->state = BC_CH_TRAILER;
            else if (is_ctl(ch))
                goto bad;
            break;
        case BC_CH_TRAILER_CR:
            if (ch == '\n')
                c->state = BC_CH_TRAILER;
            else if (ch != '\r')
                goto bad;
            break;
        case BC_CH_END_CR:
            if (ch == '\n') {
                c->state = BC_CH_DONE;
                *used = i + 1;
                return BC_CHUNKED_DONE;
            }
            if (ch != '\r')
                goto bad;
            break;
        case BC_CH_DONE:
            *used = i;
            return BC_CHUNKED_DONE;
        case BC_CH_BAD:
            *used = i;
            return BC_CHUNKED_BAD;
        }
        i++;
    }
    *used = i;
    return c->state == BC_CH_DONE  ? BC_CHUNKED_DONE
           : c->state == BC_CH_BAD ? BC_CHUNKED_BAD
                                   : BC_CHUNKED_MORE;
bad:
    c->state = BC_CH_BAD;
    *used = i;
    return BC_CHUNKED_BAD;
}
