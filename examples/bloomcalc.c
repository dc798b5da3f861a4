/*
 * bloomcalc - size a Bloom filter, or predict the rate of a given one.
 *
 *   bloomcalc -n N -p P [--json]        m, bytes, k, k_opt, bits per key and
 *                                       predicted rate, classic and blocked
 *   bloomcalc -n N -p P -k K [--json]   the same at K probes a key
 *   bloomcalc -n N -m M -k K [--json]   the predicted rate of that filter
 *
 * N and M accept 1000000, 1e6 or 10^6; P accepts 0.01 or 1%.
 * Exit status: 0 success, 2 usage error (an unknown option, a bad value,
 * or values no filter can have), 1 runtime failure.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "bloomcrawl/bloom.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bloomcalc -n N -p P [-k K] [--json]\n"
            "       bloomcalc -n N -m M -k K [--json]\n"
            "\n"
            "Size a Bloom filter for N keys at false-positive rate P (at its\n"
            "best k, or with -k at K probes a key: more bits, fewer probes),\n"
            "or predict the rate of a filter of M bits and K probes holding\n"
            "N keys. Both the classic layout (k probes anywhere) and the\n"
            "blocked layout (k probes in one 512-bit cache line) are shown.\n"
            "\n"
            "  -n N      number of keys (1000000, 1e6 or 10^6)\n"
            "  -p P      target false-positive rate (0.01 or 1%%)\n"
            "  -m M      bits in the filter\n"
            "  -k K      probes per key (1..%u)\n"
            "  --json    one JSON object instead of text\n"
            "  --help    this text\n"
            "  --version the version\n"
            "\n"
            "Exit status: 0 success, 2 usage error (unknown option, bad "
            "value),\n"
            "1 runtime failure.\n",
            BC_BLOOM_MAX_K);
}

/* 19170117 -> "19,170,117" */
static const char *grouped(uint64_t v, char *buf, size_t cap)
{
    char digits[32];
    int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
    size_t j = 0;
    for (int i = 0; i < n && j + 2 < cap; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[j++] = ',';
        buf[j++] = digits[i];
    }
    buf[j] = '\0';
    return buf;
}

static void print_size(uint64_t bytes)
{
    double b = (double)bytes;
    if (b >= 1e9)
        printf("%.3f GB = %.3f GiB", b / 1e9, b / 1073741824.0);
    else if (b >= 1048576.0)
        printf("%.2f MiB", b / 1048576.0);
    else if (b >= 1024.0)
        printf("%.2f KiB", b / 1024.0);
    else
        printf("%llu bytes", (unsigned long long)bytes);
}

static void print_text(const struct bc_bloom_sizing *s, const char *title)
{
    char a[40], b[40];
    printf("%s\n", title);
    printf("  m               %s bits (", grouped(s->m_bits, a, sizeof(a)));
    print_size((s->m_bits + 7) / 8);
    printf(")\n");
    printf("  memory          %s bytes allocated\n",
           grouped(s->bytes, b, sizeof(b)));
    printf("  k               %u probes per key (k_opt = (m/n) ln 2 = %.2f)\n",
           s->k, s->k_opt);
    printf("  bits per key    %.2f\n", s->bits_per_key);
    if (s->layout == BC_BLOOM_CLASSIC)
        printf("  predicted rate  %.3g = (1 - e^(-kn/m))^k"
               "  (upper bound %.4g)\n",
               s->fpr_predicted, s->fpr_upper_bound);
    else
        printf("  predicted rate  %.3g  (Poisson mixture over blocks and "
               "their fill)\n",
               s->fpr_predicted);
}

static void print_json_fields(const struct bc_bloom_sizing *s)
{
    printf("\"n\": %llu, \"p\": %.17g, \"m_bits\": %llu, \"bytes\": %llu, "
           "\"k\": %u, \"k_opt\": %.6f, \"bits_per_element\": %.6f, "
           "\"fpr_predicted\": %.6e, \"fpr_upper_bound\": %.6e",
           (unsigned long long)s->n, s->p, (unsigned long long)s->m_bits,
           (unsigned long long)s->bytes, s->k, s->k_opt, s->bits_per_key,
           s->fpr_predicted, s->fpr_upper_bound);
}

static void print_json(const struct bc_bloom_sizing *classic,
                       const struct bc_bloom_sizing *blocked)
{
    printf("{");
    print_json_fields(classic);
    printf(", \"blocked\": {");
    print_json_fields(blocked);
    printf("}}\n");
}

int main(int argc, char **argv)
{
    uint64_t n = 0, m = 0, k = 0;
    double p = -1.0;
    int json = 0;
    const char *n_text = "", *p_text = "";
    for (int i = 1; i < argc; i++) {
        char name[16];
        const char *val;
        const char *arg = args_option(argv[i], name, sizeof(name), &val);
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--version") == 0) {
            args_print_version("bloomcalc");
            return 0;
        } else if (strcmp(arg, "--json") == 0) {
            if (val) {
                fprintf(stderr, "bloomcalc: --json takes no value\n");
                return 2;
            }
            json = 1;
            continue;
        }
        uint64_t *count = NULL;
        if (strcmp(arg, "-n") == 0)
            count = &n;
        else if (strcmp(arg, "-m") == 0)
            count = &m;
        else if (strcmp(arg, "-k") == 0)
            count = &k;
        else if (strcmp(arg, "-p") != 0) {
            fprintf(stderr, "bloomcalc: unknown option %s (see --help)\n", arg);
            return 2;
        }
        if (!val && i + 1 < argc)
            val = argv[++i];
        if (!val) {
            fprintf(stderr, "bloomcalc: %s needs a value\n", arg);
            return 2;
        }
        if (count ? args_count(val, false, count) : args_rate(val, &p)) {
            fprintf(stderr, "bloomcalc: bad value for %s: %s\n", arg, val);
            return 2;
        }
        if (count == &n)
            n_text = val;
        else if (!count)
            p_text = val;
    }
    /* -p sizes (at -k's K if given); -m with -k predicts. */
    int by_rate = p >= 0.0, by_size = m > 0;
    /* Say what is missing, not only the usage (bloomcalc -n 1e6 alone). */
    const char *missing = NULL;
    if (n == 0)
        missing = "-n N (the number of keys)";
    else if (!by_rate && !by_size && k == 0)
        missing = "-p P (a false-positive rate), or -m M and -k K";
    else if (!by_rate && !by_size)
        missing = "-p P (to size at -k's K) or -m M (bits in the filter)";
    else if (by_rate && by_size) {
        fprintf(stderr, "bloomcalc: -p sizes a filter, -m and -k predict "
                        "one: give one or the other (see --help)\n");
        return 2;
    } else if (by_size && k == 0)
        missing = "-k K (probes per key)";
    if (missing) {
        fprintf(stderr, "bloomcalc: %s missing (see --help)\n", missing);
        return 2;
    }
    if (k > BC_BLOOM_MAX_K) {
        fprintf(stderr, "bloomcalc: k must be 1..%u\n", BC_BLOOM_MAX_K);
        return 2;
    }

    struct bc_bloom_sizing classic, blocked;
    enum bc_status st;
    if (by_rate && k > 0) {
        st = bc_bloom_size_k(n, p, (unsigned)k, BC_BLOOM_CLASSIC, &classic);
        if (st == BC_OK)
            st = bc_bloom_size_k(n, p, (unsigned)k, BC_BLOOM_BLOCKED, &blocked);
    } else if (by_rate) {
        st = bc_bloom_size(n, p, BC_BLOOM_CLASSIC, &classic);
        if (st == BC_OK)
            st = bc_bloom_size(n, p, BC_BLOOM_BLOCKED, &blocked);
    } else {
        st = bc_bloom_rate(n, m, (unsigned)k, BC_BLOOM_CLASSIC, &classic);
        if (st == BC_OK)
            st = bc_bloom_rate(n, m, (unsigned)k, BC_BLOOM_BLOCKED, &blocked);
    }
    if ((st == BC_ERR_INVALID_ARG || st == BC_ERR_TOO_LARGE) && by_rate) {
        fprintf(stderr,
                "bloomcalc: bad value for -n or -p: no filter for -n %s "
                "keys at -p %s (%s)\n",
                n_text, p_text, bc_strerror(st));
        return 2;
    }
    if (st == BC_ERR_INVALID_ARG || st == BC_ERR_TOO_LARGE) {
        fprintf(stderr, "bloomcalc: bad value for -n, -m or -k: %s\n",
                bc_strerror(st));
        return 2;
    }
    if (st != BC_OK) {
        fprintf(stderr, "bloomcalc: %s\n", bc_strerror(st));
        return 1;
    }

    if (json) {
        print_json(&classic, &blocked);
        return 0;
    }
    char a[40];
    if (by_rate && k > 0)
        printf("n = %s keys, target false-positive rate p = %g, "
               "k = %llu probes\n\n",
               grouped(n, a, sizeof(a)), p, (unsigned long long)k);
    else if (by_rate)
        printf("n = %s keys, target false-positive rate p = %g\n\n",
               grouped(n, a, sizeof(a)), p);
    else
        printf("n = %s keys in m = %llu bits with k = %llu probes\n\n",
               grouped(n, a, sizeof(a)), (unsigned long long)m,
               (unsigned long long)k);
    print_text(&classic, "classic layout (k probes anywhere in m bits)");
    printf("\n");
    print_text(&blocked, "blocked layout (k probes in one 512-bit block)");
    return 0;
}
