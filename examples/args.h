/*
 * args.h - command-line value parsing shared by the tools in examples/.
 */
#ifndef BC_EXAMPLES_ARGS_H
#define BC_EXAMPLES_ARGS_H

#include <stdbool.h>
#include <stdint.h>

/* A whole number: 1000000, 1e6 or 10^6; at least 1, or 0 with zero_ok.
 * Returns 0 and writes *out, or -1 (nothing written). */
int args_count(const char *s, bool zero_ok, uint64_t *out);

/* A rate in (0, 1): 0.01 or 1%. Returns 0 and writes *out, or -1. */
int args_rate(const char *s, double *out);

#endif /* BC_EXAMPLES_ARGS_H */
