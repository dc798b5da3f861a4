/*
 * bc_clock.h - the two clocks, in milliseconds (private to bloomcrawl).
 *
 * Monotonic time measures durations within one process (delays, timeouts,
 * rates): it never jumps when the wall clock is set. Wall time (since the
 * Unix epoch) is what is recorded for later runs and other processes
 * (a state's timestamps, a worker's heartbeat, a recrawl window).
 */
#ifndef BC_COMMON_CLOCK_H
#define BC_COMMON_CLOCK_H

#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC (an arbitrary origin). */
uint64_t bc_mono_ms(void);

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
uint64_t bc_wall_ms(void);

#endif /* BC_COMMON_CLOCK_H */
