/*
 * bc_bigarray.h - large zeroed arrays (private to bloomcrawl).
 *
 * A Bloom filter's bit array, a window's generations, an LRU's slabs are
 * large and touched at random: one TLB miss per probe costs as much as the
 * probe. Arrays of BC_BIGARRAY_HUGE bytes or more are therefore mmap'ed
 * (zeroed by the kernel, pages given only when touched) and marked
 * MADV_HUGEPAGE, so that a 2 MiB page holds what 512 4 KiB pages would;
 * smaller ones come from aligned_alloc() and memset(). The one threshold of
 * the project: the size of an x86-64 huge page.
 */
#ifndef BC_COMMON_BIGARRAY_H
#define BC_COMMON_BIGARRAY_H

#include <stdbool.h>
#include <stddef.h>

#define BC_BIGARRAY_HUGE ((size_t)2 << 20) /* 2 MiB */

struct bc_bigarray {
    void *p;      /* 64-byte aligned, zeroed; NULL when empty */
    size_t bytes; /* as asked */
    bool mmapped; /* p came from mmap (free with munmap) */
};

/* A zeroed, 64-byte aligned array of bytes bytes (bytes > 0); false when
 * out of memory (a is left empty). */
bool bc_bigarray_alloc(struct bc_bigarray *a, size_t bytes);

/* Release it (an empty one is a no-op); a is left empty. */
void bc_bigarray_free(struct bc_bigarray *a);

#endif /* BC_COMMON_BIGARRAY_H */
