/*
 * args.c - command-line value parsing shared by the tools in examples/.
 */
#include "args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bloomcrawl/version.h"

int args_count(const char *s, bool zero_ok, uint64_t *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '-')
        return -1;
    errno = 0;
    if (strncmp(s, "10^", 3) == 0) {
        v = pow(10.0, strtod(s + 3, &end));
        if (end == s + 3)
            return -1;
    } else {
        v = strtod(s, &end);
        if (end == s)
            return -1;
    }
    if (errno || *end != '\0' || !(v >= (zero_ok ? 0.0 : 1.0)) || v > 1.8e19 ||
        v != floor(v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int args_rate(const char *s, double *out)
{
    char *end;

    if (s == NULL)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (end != s && *end == '%' && end[1] == '\0') {
        v /= 100.0;
        end++;
    }
    if (errno || end == s || *end != '\0' || !(v > 0.0 && v < 1.0))
        return -1;
    *out = v;
    return 0;
}

void args_print_version(const char *tool)
{
    printf("%s (bloomcrawl) %s\n", tool, bc_version());
}

const char *args_option(const char *arg, char *buf, size_t cap,
                        const char **value)
{
    const char *eq = strchr(arg, '=');

    *value = NULL;
    if (strncmp(arg, "--", 2) != 0 || eq == NULL || (size_t)(eq - arg) >= cap)
        return arg;
    memcpy(buf, arg, (size_t)(eq - arg));
    buf[eq - arg] = '\0';
    *value = eq + 1;
    return buf;
}

int args_duration(const char *s, uint64_t *out_ms)
{
    static const struct {
        const char *unit;
        uint64_t ms;
    } units[] = {{"ms", 1},      {"s", 1000},     {"m", 60000},
                 {"h", 3600000}, {"d", 86400000}, {"w", 604800000}};
    uint64_t total = 0;

    if (s == NULL || *s == '\0')
        return -1;
    while (*s != '\0') {
        uint64_t v = 0;
        const char *digits = s;
        while (*s >= '0' && *s <= '9') {
            if (v > (UINT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (uint64_t)(*s++ - '0');
        }
        if (s == digits)
            return -1;
        size_t u = 0, n = sizeof units / sizeof *units;
        /* "ms" before "m": the longer unit is tried first. */
        while (u < n && strncmp(s, units[u].unit, strlen(units[u].unit)) != 0)
            u++;
        if (u == n)
            return -1;
        s += strlen(units[u].unit);
        if (*s >= 'a' && *s <= 'z')
            return -1;
        if (v > (UINT64_MAX - total) / units[u].ms)
            return -1;
        total += v * units[u].ms;
    }
    if (total == 0)
        return -1;
    *out_ms = total;
    return 0;
}
