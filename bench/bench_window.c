/*
 * bench_window.c - the sliding-window filter (dedup/window.c) against a
 * plain filter and generation rotation built from the existing filter, in
 * the same run: memory per window key, false-positive rate over time, and
 * the batch cost of insert and query.
 *
 *   bench_window [--full] [--window W] [--queries Q] [--speed-n N]
 *                [--csv FILE] [--curve FILE]
 *
 * 1. Memory: bits per key of the window at p = 1 % (G = 2..8 with 256-bit
 *    segments, and G = 4 with 128-bit ones: one cache line) against
 *    rotation with G = 2 and G = 4 classic and blocked filters, each sized
 *    for W/(G-1) keys at p/G (the same guarantee: no false negative in the
 *    last W insertions, rate <= p at every moment).
 * 2. False-positive rate over time: one stream of 20 W distinct keys into
 *    a plain blocked filter sized for W at p, rotation G = 2 and G = 4
 *    (classic), and the window (G = 4); at every checkpoint (each W/4
 *    insertions) Q keys never inserted are queried in each. The window's
 *    measured rate is compared with its prediction (bc_window_stats): the
 *    relative gap, and the gap in standard deviations of a measurement
 *    (the queries' binomial spread and the filter's own scatter,
 *    fpr_state_sd).
 * 3. Speed: N keys (default 10^6, --full 10^7) prehashed outside the
 *    timing; test-and-add in batch into the blocked filter sized for N,
 *    into the window with W = N (S = 256 and 128), and into rotation
 *    G = 4 blocked (one call per key and filter: bc_bloom has no batch
 *    query over G filters); then N fresh keys queried. ns per key.
 *
 * Defaults: W = 10^5, Q = 2 10^5 (short: a few seconds). --full: Q = 10^6
 * (1 % standard error at p = 1 %) and N = 10^7. Keys are 8-byte integers
 * plus a tag byte: tag 1 inserted, tag 2 never, so the sets are disjoint.
 * Fixed seeds: a run is reproducible up to timing.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_csv.h"
#include "bloomcrawl/bloom.h"
#include "bloomcrawl/window.h"

#define P      0.01
#define SEED   7
#define CHUNK  65536
#define MAX_GS 8

struct key {
    unsigned char bytes[9];
};

static struct key make_key(uint64_t i, unsigned char tag)
{
    struct key k;
    for (int b = 0; b < 8; b++)
        k.bytes[b] = (unsigned char)(i >> (8 * b));
    k.bytes[8] = tag;
    return k;
}

enum { TAG_ADDED = 1, TAG_NEVER = 2 };

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL) {
        fprintf(stderr, "bench_window: out of memory\n");
        exit(1);
    }
    return p;
}

static void check(enum bc_status st, const char *what)
{
    if (st != BC_OK) {
        fprintf(stderr, "bench_window: %s: %s\n", what, bc_strerror(st));
        exit(1);
    }
}

/* ---- generation rotation from the existing filter -------------------- */

struct rotation {
    struct bc_bloom *f[MAX_GS];
    unsigned gens, newest;
    uint64_t per_gen, in_newest;
    uint64_t bytes;
};

static void rotation_init(struct rotation *r, unsigned gens, uint64_t window,
                          enum bc_bloom_layout layout)
{
    memset(r, 0, sizeof(*r));
    r->gens = gens;
    r->per_gen = (window + gens - 2) / (gens - 1);
    for (unsigned i = 0; i < gens; i++) {
        check(bc_bloom_create(r->per_gen, P / gens, layout, SEED, 0, &r->f[i]),
              "rotation filter");
        struct bc_bloom_stats s;
        bc_bloom_stats(r->f[i], &s);
        r->bytes += s.bytes;
    }
}

static void rotation_free(struct rotation *r)
{
    for (unsigned i = 0; i < r->gens; i++)
        bc_bloom_free(r->f[i]);
}

/* Begin a new generation when the newest is full: clear the oldest. */
static void rotation_turn(struct rotation *r)
{
    if (r->in_newest < r->per_gen)
        return;
    r->newest = (r->newest + 1) % r->gens;
    bc_bloom_clear(r->f[r->newest]);
    r->in_newest = 0;
}

static bool rotation_contains(const struct rotation *r, struct bc_hash128 h)
{
    for (unsigned i = 0; i < r->gens; i++)
        if (bc_bloom_contains_hash(r->f[i], h))
            return true;
    return false;
}

static bool rotation_test_and_add(struct rotation *r, struct bc_hash128 h)
{
    if (rotation_contains(r, h))
        return false;
    rotation_turn(r);
    bc_bloom_add_hash(r->f[r->newest], h);
    r->in_newest++;
    return true;
}

static void rotation_add(struct rotation *r, struct bc_hash128 h)
{
    rotation_turn(r);
    bc_bloom_add_hash(r->f[r->newest], h);
    r->in_newest++;
}

/* ---- 1. memory ------------------------------------------------------- */

static double rotation_bits(unsigned gens, uint64_t window,
                            enum bc_bloom_layout layout)
{
    struct bc_bloom_sizing s;
    uint64_t per = (window + gens - 2) / (gens - 1);
    check(bc_bloom_size(per, P / gens, layout, &s), "rotation sizing");
    return 8.0 * (double)s.bytes * gens / (double)window;
}

static void memory(uint64_t window, FILE *csv)
{
    struct bc_bloom_sizing plain;
    check(bc_bloom_size(window, P, BC_BLOOM_CLASSIC, &plain), "sizing");
    printf("## Memory per window key at p = 1 %% (W = %llu)\n\n",
           (unsigned long long)window);
    printf("| structure | slack | bits per key | x classic 9.59 |\n");
    printf("|---|---|---:|---:|\n");
    printf("| plain classic filter (no window) | - | %.2f | 1.00 |\n",
           plain.bits_per_key);
    for (unsigned g = 2; g <= 4; g += 2)
        for (int l = 0; l < 2; l++) {
            enum bc_bloom_layout lay = l ? BC_BLOOM_BLOCKED : BC_BLOOM_CLASSIC;
            double b = rotation_bits(g, window, lay);
            printf("| rotation G = %u, %s | 1/%u | %.2f | %.2f |\n", g,
                   l ? "blocked" : "classic", g - 1, b, b / plain.bits_per_key);
            bench_csv_num(csv, "bits", b, "window/memory/rotation%u_%s", g,
                          l ? "blocked" : "classic");
        }
    for (unsigned g = 2; g <= MAX_GS; g++) {
        struct bc_window_sizing s;
        check(bc_window_size(window, P, g, 256, &s), "window sizing");
        printf("| window G = %u (k = %u) | 1/%u | %.2f | %.2f |\n", g, s.k,
               g - 1, s.bits_per_key, s.bits_per_key / plain.bits_per_key);
        bench_csv_num(csv, "bits", s.bits_per_key, "window/memory/window%u", g);
    }
    struct bc_window_sizing one;
    check(bc_window_size(window, P, 4, 128, &one), "window sizing");
    printf("| window G = 4, S = 128: one cache line (k = %u) | 1/3 | %.2f | "
           "%.2f |\n",
           one.k, one.bits_per_key, one.bits_per_key / plain.bits_per_key);
    bench_csv_num(csv, "bits", one.bits_per_key, "window/memory/window4_s128");
    printf("\n");
}

/* ---- 2. false-positive rate over time -------------------------------- */

static void over_time(uint64_t window, uint64_t queries, FILE *csv,
                      const char *curve_path)
{
    struct bc_bloom *plain;
    check(bc_bloom_create(window, P, BC_BLOOM_BLOCKED, SEED, 0, &plain),
          "plain filter");
    struct rotation r2, r4;
    rotation_init(&r2, 2, window, BC_BLOOM_CLASSIC);
    rotation_init(&r4, 4, window, BC_BLOOM_CLASSIC);
    struct bc_window_config c;
    bc_window_config_init(&c);
    c.window = window;
    c.p = P;
    c.seed = SEED;
    struct bc_window *w;
    check(bc_window_create(&c, 0, &w), "window");
    FILE *curve = curve_path ? fopen(curve_path, "w") : NULL;
    if (curve_path && !curve) {
        perror(curve_path);
        exit(1);
    }
    if (curve)
        fprintf(curve, "insertions_per_window,plain,rotation_g2,rotation_g4,"
                       "window,window_predicted\n");
    printf("## False-positive rate over a stream of 20 W (W = %llu, %llu "
           "queries per checkpoint)\n\n",
           (unsigned long long)window, (unsigned long long)queries);
    printf("| insertions / W | plain | rotation G=2 | rotation G=4 | window "
           "| window predicted | gap | gap (s.d.) |\n");
    printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    uint64_t step = window / 4, probe = 0;
    double worst_rel = 0, worst_z = 0, max_window = 0, max_r2 = 0, max_r4 = 0;
    for (uint64_t i = 0; i < 20 * window; i++) {
        struct key k = make_key(i, TAG_ADDED);
        struct bc_hash128 h = bc_bloom_hash(plain, k.bytes, sizeof(k.bytes));
        bc_bloom_add_hash(plain, h);
        rotation_add(&r2, h);
        rotation_add(&r4, h);
        bc_window_add_hash(w, h, 0);
        if ((i + 1) % step != 0)
            continue;
        uint64_t fp[4] = {0};
        for (uint64_t q = 0; q < queries; q++, probe++) {
            struct key n = make_key(probe, TAG_NEVER);
            struct bc_hash128 x =
                bc_bloom_hash(plain, n.bytes, sizeof(n.bytes));
            fp[0] += bc_bloom_contains_hash(plain, x);
            fp[1] += rotation_contains(&r2, x);
            fp[2] += rotation_contains(&r4, x);
            fp[3] += bc_window_contains_hash(w, x, 0);
        }
        struct bc_window_stats st;
        bc_window_stats(w, 0, &st);
        double m[4];
        for (int j = 0; j < 4; j++)
            m[j] = (double)fp[j] / (double)queries;
        double pred = st.fpr_predicted;
        double rel = (m[3] - pred) / pred;
        double z = (m[3] - pred) / sqrt(pred * (1 - pred) / (double)queries +
                                        st.fpr_state_sd * st.fpr_state_sd);
        if (fabs(rel) > fabs(worst_rel))
            worst_rel = rel;
        if (fabs(z) > fabs(worst_z))
            worst_z = z;
        max_window = fmax(max_window, m[3]);
        max_r2 = fmax(max_r2, m[1]);
        max_r4 = fmax(max_r4, m[2]);
        double x = (double)(i + 1) / (double)window;
        printf("| %.2f | %.4g | %.4g | %.4g | %.4g | %.4g | %+.1f %% | %+.2f "
               "|\n",
               x, m[0], m[1], m[2], m[3], pred, 100 * rel, z);
        if (curve)
            fprintf(curve, "%.4f,%.6g,%.6g,%.6g,%.6g,%.6g\n", x, m[0], m[1],
                    m[2], m[3], pred);
    }
    printf(
        "\nWindow: worst gap to the prediction %+.2f %% (%+.2f standard "
        "deviations); highest measured rate: window %.4g, rotation G=2 %.4g, "
        "G=4 %.4g (target %.2g).\n\n",
        100 * worst_rel, worst_z, max_window, max_r2, max_r4, P);
    bench_csv_num(csv, "fraction", fabs(worst_rel),
                  "window/fpr/worst_relative_gap");
    bench_csv_num(csv, "count", fabs(worst_z), "window/fpr/worst_z");
    bench_csv_num(csv, "fraction", max_window, "window/fpr/max_window");
    bench_csv_num(csv, "fraction", max_r2, "window/fpr/max_rotation2");
    bench_csv_num(csv, "fraction", max_r4, "window/fpr/max_rotation4");
    if (curve)
        fclose(curve);
    bc_window_free(w);
    rotation_free(&r2);
    rotation_free(&r4);
    bc_bloom_free(plain);
}

/* ---- 3. speed -------------------------------------------------------- */

enum which { BLOCKED, WINDOW, WINDOW128, ROTATION4, N_WHICH };

/* ns per key of test-and-add (then query) of n keys, prehashed by chunk
 * outside the timing. */
static void timed(enum which which, uint64_t n, double *ins_ns, double *qry_ns)
{
    struct bc_bloom *b = NULL;
    struct bc_window *w = NULL;
    struct rotation r;
    if (which == BLOCKED)
        check(bc_bloom_create(n, P, BC_BLOOM_BLOCKED, SEED, 0, &b), "blocked");
    if (which == ROTATION4)
        rotation_init(&r, 4, n, BC_BLOOM_BLOCKED);
    if (which == WINDOW || which == WINDOW128) {
        struct bc_window_config c;
        bc_window_config_init(&c);
        c.window = n;
        c.p = P;
        c.seed = SEED;
        c.segment_bits = which == WINDOW128 ? 128 : 256;
        check(bc_window_create(&c, 0, &w), "window");
    }
    struct bc_hash128 *h = xmalloc(CHUNK * sizeof(*h));
    bool *res = xmalloc(CHUNK);
    uint64_t yes = 0;
    for (int pass = 0; pass < 2; pass++) {
        double spent = 0;
        unsigned char tag = pass == 0 ? TAG_ADDED : TAG_NEVER;
        for (uint64_t base = 0; base < n; base += CHUNK) {
            size_t cnt = (size_t)(n - base < CHUNK ? n - base : CHUNK);
            for (size_t i = 0; i < cnt; i++) {
                struct key k = make_key(base + i, tag);
                h[i] = w ? bc_window_hash(w, k.bytes, sizeof(k.bytes))
                       : which == BLOCKED
                           ? bc_bloom_hash(b, k.bytes, sizeof(k.bytes))
                           : bc_bloom_hash(r.f[0], k.bytes, sizeof(k.bytes));
            }
            double t0 = now_s();
            if (which == BLOCKED && pass == 0)
                bc_bloom_test_and_add_batch(b, h, cnt, res);
            else if (which == BLOCKED)
                bc_bloom_contains_batch(b, h, cnt, res);
            else if (w && pass == 0)
                bc_window_test_and_add_batch(w, h, cnt, 0, res);
            else if (w)
                bc_window_contains_batch(w, h, cnt, 0, res);
            else if (pass == 0)
                for (size_t i = 0; i < cnt; i++)
                    res[i] = rotation_test_and_add(&r, h[i]);
            else
                for (size_t i = 0; i < cnt; i++)
                    res[i] = rotation_contains(&r, h[i]);
            spent += now_s() - t0;
            for (size_t i = 0; i < cnt; i++)
                yes += res[i];
        }
        *(pass == 0 ? ins_ns : qry_ns) = spent * 1e9 / (double)n;
    }
    if (yes == 0)
        fprintf(stderr, "(no key answered yes)\n");
    free(h);
    free(res);
    bc_bloom_free(b);
    bc_window_free(w);
    if (which == ROTATION4)
        rotation_free(&r);
}

static void speed(uint64_t n, FILE *csv)
{
    static const char *const names[N_WHICH] = {
        "blocked filter (batch)", "window G = 4, S = 256 (batch)",
        "window G = 4, S = 128 (batch)",
        "rotation G = 4 blocked (one call per key and filter)"};
    static const char *const keys[N_WHICH] = {"blocked", "window",
                                              "window_s128", "rotation4"};
    double ins[N_WHICH], qry[N_WHICH];
    for (int i = 0; i < N_WHICH; i++)
        timed((enum which)i, n, &ins[i], &qry[i]);
    printf("## Batch cost at n = %llu (ns per key, hashing excluded)\n\n",
           (unsigned long long)n);
    printf("| structure | test-and-add | query | x blocked (add, query) |\n");
    printf("|---|---:|---:|---:|\n");
    for (int i = 0; i < N_WHICH; i++) {
        printf("| %s | %.1f | %.1f | %.2f, %.2f |\n", names[i], ins[i], qry[i],
               ins[i] / ins[0], qry[i] / qry[0]);
        bench_csv_num(csv, "ns", ins[i], "window/speed/%llu/%s/insert",
                      (unsigned long long)n, keys[i]);
        bench_csv_num(csv, "ns", qry[i], "window/speed/%llu/%s/query",
                      (unsigned long long)n, keys[i]);
    }
    printf("\n");
}

int main(int argc, char **argv)
{
    uint64_t window = 100000, queries = 200000, speed_n = 1000000;
    const char *csv_path = NULL, *curve_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(a, "--full") == 0) {
            queries = 1000000;
            speed_n = 10000000;
        } else if (strcmp(a, "--window") == 0 && more) {
            window = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(a, "--queries") == 0 && more) {
            queries = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(a, "--speed-n") == 0 && more) {
            speed_n = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(a, "--csv") == 0 && more) {
            csv_path = argv[++i];
        } else if (strcmp(a, "--curve") == 0 && more) {
            curve_path = argv[++i];
        } else {
            fprintf(stderr,
                    "usage: bench_window [--full] [--window W] [--queries Q] "
                    "[--speed-n N] [--csv FILE] [--curve FILE]\n");
            return 2;
        }
    }
    if (window < 4 || queries == 0 || speed_n == 0) {
        fprintf(stderr, "bench_window: W >= 4, Q and N >= 1\n");
        return 2;
    }
    FILE *csv = bench_csv_open(csv_path);
    memory(window, csv);
    over_time(window, queries, csv, curve_path);
    speed(speed_n, csv);
    if (csv)
        fclose(csv);
    return 0;
}
