/*
 * bench_csv.h - the CSV the benchmarks write for scripts/bench.sh.
 *
 * One header line, then one row per number: "measure,value,unit", where
 * measure is a slash-separated key (bloom/10000000/blocked/batch/...),
 * value a plain number and unit one of ns, bytes, fraction, per_s, count,
 * x, s, mib. bench/summarize.py reads it. Each function is a no-op when
 * csv is NULL (no --csv given), so the call sites need no test.
 */
#ifndef BC_BENCH_CSV_H
#define BC_BENCH_CSV_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Open path for writing and write the header; NULL path gives NULL. A
 * benchmark that cannot write its results stops: perror, exit 1. */
static inline FILE *bench_csv_open(const char *path)
{
    if (path == NULL)
        return NULL;
    FILE *csv = fopen(path, "w");
    if (csv == NULL) {
        perror(path);
        exit(1);
    }
    fprintf(csv, "measure,value,unit\n");
    return csv;
}

/* One row: the measure (a printf format and its arguments), then the
 * value already formatted, then the unit. */
static inline void bench_csv_vrow(FILE *csv, const char *value,
                                  const char *unit, const char *measure_fmt,
                                  va_list ap)
{
    vfprintf(csv, measure_fmt, ap);
    fprintf(csv, ",%s,%s\n", value, unit);
}

/* A measured number (%.6g); the measure is a printf format. */
static inline void bench_csv_num(FILE *csv, const char *unit, double value,
                                 const char *measure_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void bench_csv_num(FILE *csv, const char *unit, double value,
                                 const char *measure_fmt, ...)
{
    char text[32];
    va_list ap;
    if (csv == NULL)
        return;
    snprintf(text, sizeof(text), "%.6g", value);
    va_start(ap, measure_fmt);
    bench_csv_vrow(csv, text, unit, measure_fmt, ap);
    va_end(ap);
}

/* A whole number (bytes, counts), printed in full. */
static inline void bench_csv_int(FILE *csv, const char *unit,
                                 unsigned long long value,
                                 const char *measure_fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline void bench_csv_int(FILE *csv, const char *unit,
                                 unsigned long long value,
                                 const char *measure_fmt, ...)
{
    char text[32];
    va_list ap;
    if (csv == NULL)
        return;
    snprintf(text, sizeof(text), "%llu", value);
    va_start(ap, measure_fmt);
    bench_csv_vrow(csv, text, unit, measure_fmt, ap);
    va_end(ap);
}

/* Close; 0, or 1 after perror when the data did not reach the file. */
static inline int bench_csv_close(FILE *csv, const char *path)
{
    if (csv != NULL && fclose(csv) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

#endif /* BC_BENCH_CSV_H */
