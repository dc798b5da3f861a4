/*
 * clock.c - the two clocks of bc_clock.h.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "bc_clock.h"

#include <time.h>

static uint64_t ms_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t bc_mono_ms(void)
{
    return ms_of(CLOCK_MONOTONIC);
}

uint64_t bc_wall_ms(void)
{
    return ms_of(CLOCK_REALTIME);
}
