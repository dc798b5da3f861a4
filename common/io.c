/*
 * io.c - whole reads and writes of bc_io.h.
 *
 * write(2) and read(2) may move fewer bytes than asked (a signal, a pipe,
 * a large count): the loops go on until all are moved, in pieces of at most
 * 1 GiB (Linux moves at most about 2 GiB per call).
 */
#include "bc_io.h"

#include <errno.h>
#include <unistd.h>

#define PIECE ((size_t)1 << 30)

enum bc_status bc_write_all(int fd, const void *data, size_t len)
{
    return bc_write_all_count(fd, data, len, NULL);
}

enum bc_status bc_write_all_count(int fd, const void *data, size_t len,
                                  size_t *written)
{
    const unsigned char *p = data;
    size_t put = 0;
    enum bc_status st = BC_OK;
    while (put < len) {
        size_t rest = len - put;
        ssize_t w = write(fd, p + put, rest > PIECE ? PIECE : rest);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            st = BC_ERR_IO;
            break;
        }
        put += (size_t)w;
    }
    if (written)
        *written = put;
    return st;
}

enum bc_status bc_read_all(int fd, void *data, size_t len)
{
    unsigned char *p = data;
    while (len > 0) {
        ssize_t r = read(fd, p, len > PIECE ? PIECE : len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return BC_ERR_IO;
        if (r == 0)
            return BC_ERR_TRUNCATED;
        p += r;
        len -= (size_t)r;
    }
    return BC_OK;
}
