/*
 * alloc_fail.h - allocation failure injection for the unit tests.
 *
 * Include it in exactly one file of a test executable that is linked with
 * -Wl,--wrap=malloc,--wrap=calloc (and optionally realloc and
 * aligned_alloc; see tests/CMakeLists.txt): calls to those in the objects
 * being linked, the static libraries included, then go to the __wrap_
 * functions below, and the __real_ ones are the C library's. Both wrappers count
 * the calls; with fail_after = n, the (n + 1)-th allocation fails once.
 * The real functions are weak, so a test also links without the option
 * (and should then skip its allocation-failure cases: a test sees whether
 * it is wrapped when alloc_calls moves). calloc is wrapped too because
 * the compiler turns malloc + memset into calloc.
 */
#ifndef BC_TESTS_ALLOC_FAIL_H
#define BC_TESTS_ALLOC_FAIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

void *__real_malloc(size_t size) __attribute__((weak));
void *__real_calloc(size_t count, size_t size) __attribute__((weak));
void *__real_realloc(void *p, size_t size) __attribute__((weak));
void *__real_aligned_alloc(size_t align, size_t size) __attribute__((weak));
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);

static long alloc_calls;
static long fail_after = -1; /* allocations to let through; -1: never fail */
static long alloc_failures;  /* allocations failed so far */

/* Should this allocation fail? A failed one sets errno to ENOMEM, as the
 * C library's does (code that reports errno must see it). */
static bool fail_now(void)
{
    alloc_calls++;
    if (fail_after == 0) {
        fail_after = -1;
        alloc_failures++;
        errno = ENOMEM;
        return true;
    }
    if (fail_after > 0)
        fail_after--;
    return false;
}

void *__wrap_malloc(size_t size)
{
    return fail_now() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    return fail_now() ? NULL : __real_calloc(count, size);
}

/* Linked in only with --wrap=realloc and --wrap=aligned_alloc. */
void *__wrap_realloc(void *p, size_t size)
{
    return fail_now() ? NULL : __real_realloc(p, size);
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
    return fail_now() ? NULL : __real_aligned_alloc(align, size);
}

#endif /* BC_TESTS_ALLOC_FAIL_H */
