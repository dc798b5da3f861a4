/*
 * bigarray.c - large zeroed arrays of bc_bigarray.h.
 */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE, MAP_ANONYMOUS */
#include "bc_bigarray.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

bool bc_bigarray_alloc(struct bc_bigarray *a, size_t bytes)
{
    a->p = NULL;
    a->bytes = 0;
    a->mmapped = false;
    if (bytes == 0 || bytes > SIZE_MAX - 63)
        return false;
    if (bytes >= BC_BIGARRAY_HUGE) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return false;
#ifdef MADV_HUGEPAGE
        (void)madvise(p, bytes, MADV_HUGEPAGE); /* a hint; failure is fine */
#endif
        a->p = p;
        a->mmapped = true;
    } else {
        size_t rounded = (bytes + 63) / 64 * 64;
        void *p = aligned_alloc(64, rounded);
        if (!p)
            return false;
        memset(p, 0, rounded);
        a->p = p;
    }
    a->bytes = bytes;
    return true;
}

void bc_bigarray_free(struct bc_bigarray *a)
{
    if (a->p) {
        if (a->mmapped)
            munmap(a->p, a->bytes);
        else
            free(a->p);
    }
    a->p = NULL;
    a->bytes = 0;
    a->mmapped = false;
}
