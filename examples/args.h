/*
 * args.h - command-line value parsing shared by the tools in examples/.
 */
#ifndef BC_EXAMPLES_ARGS_H
#define BC_EXAMPLES_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A whole number: 1000000, 1e6 or 10^6; at least 1, or 0 with zero_ok.
 * Returns 0 and writes *out, or -1 (nothing written). */
int args_count(const char *s, bool zero_ok, uint64_t *out);

/* A rate in (0, 1): 0.01 or 1%. Returns 0 and writes *out, or -1. */
int args_rate(const char *s, double *out);

/* A duration: one or more <number><unit> groups, unit ms, s, m, h, d or
 * w: "7d", "12h", "1h30m", "500ms". More than 0. Returns 0 and writes
 * *out_ms (milliseconds), or -1 (nothing written). */
int args_duration(const char *s, uint64_t *out_ms);

/* An option as written: "--name=value" gives "--name" (copied into buf of
 * cap bytes) and sets *value to "value"; anything else (or a name longer
 * than buf) gives arg itself and sets *value to NULL. */
const char *args_option(const char *arg, char *buf, size_t cap,
                        const char **value);

/* --version: print "TOOL (bloomcrawl) VERSION" on stdout, the version of
 * the library linked in (bloomcrawl/version.h). */
void args_print_version(const char *tool);

#endif /* BC_EXAMPLES_ARGS_H */
