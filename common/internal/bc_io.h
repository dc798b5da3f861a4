/*
 * bc_io.h - whole reads and writes on a descriptor (private to bloomcrawl).
 */
#ifndef BC_COMMON_IO_H
#define BC_COMMON_IO_H

#include <stddef.h>

#include "bloomcrawl/status.h"

/* Write all len bytes to fd, again after EINTR and short writes.
 * BC_ERR_IO with errno set (a zero-byte write sets EIO). */
enum bc_status bc_write_all(int fd, const void *data, size_t len);

/* bc_write_all(), and *written (may be NULL) gets the bytes written: len,
 * or those written before the write that failed (a caller cuts off a
 * record written in part). */
enum bc_status bc_write_all_count(int fd, const void *data, size_t len,
                                  size_t *written);

/* Read exactly len bytes from fd, again after EINTR and short reads.
 * BC_ERR_TRUNCATED at end of file first (errno untouched), BC_ERR_IO
 * with errno set. */
enum bc_status bc_read_all(int fd, void *data, size_t len);

#endif /* BC_COMMON_IO_H */
