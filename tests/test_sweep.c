/*
 * test_sweep.c -- the sweep machinery (studies/am_sweep.h): checkpoint round trip,
 * resume skipping finished cells, refusal of a checkpoint with other parameters, the integer
 * threshold search, the power-law fit; and the `amsgd phase` / `amsgd knee` contract (keys,
 * bad input). Kill/resume of the real command is in tests/resume_test.sh.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "../studies/am_sweep.h"
#include "test_util.h"

typedef struct {
    size_t calls;
    size_t stop_after; /* set *stop after this many calls (0 = never) */
    volatile sig_atomic_t *stop;
    double shift;
} synth_ctx;

/* Values with no short decimal form, a NaN and an infinity, to check exact round trips. */
static void synth_values(size_t cell, double shift, double *v)
{
    v[0] = (double)cell / 3.0 + shift;
    v[1] = exp(-(double)cell) * 1e-300;
    v[2] = cell % 4 == 1 ? NAN : sqrt((double)cell + 0.1);
}

static am_status synth_cell(void *ctx, size_t cell, double *v)
{
    synth_ctx *c = ctx;
    c->calls++;
    synth_values(cell, c->shift, v);
    if (c->stop_after && c->calls >= c->stop_after) *c->stop = 1;
    return AM_OK;
}

static void tmp_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/amsgd_test_sweep_%s_%ld.ckpt", tag, (long)getpid());
    remove(buf);
}

static int same_bits(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

Test(sweep, checkpoint_roundtrip_is_exact)
{
    enum { N = 9, V = 3 };
    char path[256];
    tmp_path(path, sizeof path, "rt");
    synth_ctx c = {0, 0, NULL, 0.1};
    am_sweep_problem pb = {N, V, synth_cell, &c};
    am_sweep_params sp = am_sweep_params_default();
    sp.checkpoint = path;
    sp.fingerprint = "{\"a\":1}";
    double v1[N * V], v2[N * V];
    unsigned char d1[N], d2[N];
    size_t nd;
    char err[256];
    cr_assert_eq(am_sweep_run(&pb, &sp, v1, d1, &nd, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(nd, (size_t)N);
    /* resume: every cell comes from the file, none is recomputed */
    synth_ctx c2 = {0, 0, NULL, 1000.0}; /* would give other values if called */
    pb.ctx = &c2;
    sp.resume = 1;
    cr_assert_eq(am_sweep_run(&pb, &sp, v2, d2, &nd, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(c2.calls, 0, "resume recomputed %zu cells", c2.calls);
    cr_assert_eq(nd, (size_t)N);
    for (size_t i = 0; i < N * V; i++)
        cr_assert(same_bits(v1[i], v2[i]), "value %zu: %.17g written, %.17g read back", i, v1[i],
                  v2[i]);
    remove(path);
}

Test(sweep, resume_skips_finished_cells)
{
    enum { N = 10, V = 3 };
    char path[256];
    tmp_path(path, sizeof path, "skip");
    volatile sig_atomic_t stop = 0;
    synth_ctx c = {0, 4, &stop, 0.0};
    am_sweep_problem pb = {N, V, synth_cell, &c};
    am_sweep_params sp = am_sweep_params_default();
    sp.checkpoint = path;
    sp.fingerprint = "fp";
    sp.stop = &stop;
    double v[N * V];
    unsigned char d[N];
    size_t nd;
    char err[256];
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(nd, 4, "stopped after %zu cells, expected 4", nd);
    stop = 0;
    synth_ctx c2 = {0, 0, NULL, 0.0};
    pb.ctx = &c2;
    sp.resume = 1;
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(c2.calls, N - 4, "resume computed %zu cells, expected %d", c2.calls, N - 4);
    cr_assert_eq(nd, (size_t)N);
    for (size_t cell = 0; cell < N; cell++) {
        double e[V];
        synth_values(cell, 0.0, e);
        for (size_t j = 0; j < V; j++)
            cr_assert(same_bits(v[cell * V + j], e[j]), "cell %zu value %zu", cell, j);
    }
    /* without --resume the checkpoint starts anew */
    synth_ctx c3 = {0, 0, NULL, 0.0};
    pb.ctx = &c3;
    sp.resume = 0;
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(c3.calls, (size_t)N);
    remove(path);
}

Test(sweep, resume_refuses_other_parameters)
{
    enum { N = 4, V = 3 };
    char path[256];
    tmp_path(path, sizeof path, "mm");
    synth_ctx c = {0, 0, NULL, 0.0};
    am_sweep_problem pb = {N, V, synth_cell, &c};
    am_sweep_params sp = am_sweep_params_default();
    sp.checkpoint = path;
    sp.fingerprint = "{\"eta\":0.1}";
    double v[8 * 4];
    unsigned char d[8];
    size_t nd;
    char err[256];
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_OK, "%s", err);
    sp.resume = 1;
    sp.fingerprint = "{\"eta\":0.2}";
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_EINVAL,
                 "other fingerprint accepted");
    cr_assert(strstr(err, "was written with other parameters (eta 0.10000000000000001 there, "
                          "0.20000000000000001 now)") != NULL,
              "message: %s", err);
    sp.fingerprint = "{\"eta\":0.1}";
    am_sweep_problem pb2 = {8, V, synth_cell, &c};
    cr_assert_eq(am_sweep_run(&pb2, &sp, v, d, &nd, err, sizeof err), AM_EINVAL,
                 "other cell count accepted");
    /* a malformed complete line is refused, not skipped */
    FILE *f = fopen(path, "a");
    fputs("garbage\n", f);
    fclose(f);
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_EINVAL,
                 "malformed line accepted");
    remove(path);
}

/* The build keys of am_sweep_fingerprint_build: a checkpoint of another numerics version is
 * one of another build, one of another BLAS kernel says which kernel resumes it. */
Test(sweep, resume_refuses_other_numerics_and_blas)
{
    enum { N = 2, V = 3 };
    char path[256];
    tmp_path(path, sizeof path, "nb");
    synth_ctx c = {0, 0, NULL, 0.0};
    am_sweep_problem pb = {N, V, synth_cell, &c};
    am_sweep_params sp = am_sweep_params_default();
    sp.checkpoint = path;
    json_t *fp = json_object();
    am_sweep_fingerprint_build(fp, "OpenBLAS 0.3.21 SkylakeX");
    cr_assert_eq(json_integer_value(json_object_get(fp, "numerics")), AM_NUMERICS_VERSION);
    cr_assert_str_eq(json_string_value(json_object_get(fp, "version")), AM_VERSION);
    char *f1 = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS);
    json_object_set_new(fp, "blas", json_string("OpenBLAS 0.3.21 Haswell"));
    char *f2 = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS);
    json_object_del(fp, "blas");
    json_object_set_new(fp, "numerics", json_integer(AM_NUMERICS_VERSION + 1));
    char *f3 = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS);
    double v[N * V];
    unsigned char d[N];
    size_t nd;
    char err[512];
    sp.fingerprint = f1;
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_OK, "%s", err);
    sp.resume = 1;
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_OK, "same kernel: %s", err);
    sp.fingerprint = f2;
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_EINVAL, "other kernel");
    cr_assert(strstr(err, "another BLAS kernel (\"OpenBLAS 0.3.21 SkylakeX\", this process "
                          "\"OpenBLAS 0.3.21 Haswell\")") &&
                  strstr(err, "OPENBLAS_CORETYPE=SkylakeX on a CPU"),
              "message: %s", err);
    sp.fingerprint = f3; /* no blas key here and another numerics version */
    cr_assert_eq(am_sweep_run(&pb, &sp, v, d, &nd, err, sizeof err), AM_EINVAL, "other numerics");
    cr_assert(strstr(err, "was written by another build of amsgd (blas ") != NULL, "message: %s",
              err);
    free(f1);
    free(f2);
    free(f3);
    json_decref(fp);
    remove(path);
}

typedef struct {
    uint64_t threshold;
    size_t calls;
} thr_ctx;

static am_status thr_pred(void *ctx, uint64_t n, int *out)
{
    thr_ctx *c = ctx;
    c->calls++;
    *out = n >= c->threshold;
    return AM_OK;
}

Test(sweep, search_finds_threshold_of_monotone_predicate)
{
    const uint64_t thr[] = {1, 2, 3, 5, 8, 17, 64, 65, 100, 999, 1000};
    for (size_t i = 0; i < sizeof thr / sizeof *thr; i++) {
        thr_ctx c = {thr[i], 0};
        uint64_t r;
        int found;
        cr_assert_eq(am_sweep_search_int(thr_pred, &c, 0, 1000, &r, &found), AM_OK);
        cr_assert(found && r == thr[i], "threshold %llu: found %d, result %llu",
                  (unsigned long long)thr[i], found, (unsigned long long)r);
        /* bracketing + bisection: at most 2 ceil(log2 T) + 2 evaluations */
        double bound = 2 * ceil(log2((double)thr[i])) + 2;
        cr_assert((double)c.calls <= bound, "threshold %llu: %zu evaluations > %g",
                  (unsigned long long)thr[i], c.calls, bound);
    }
    thr_ctx c = {5000, 0};
    uint64_t r;
    int found;
    cr_assert_eq(am_sweep_search_int(thr_pred, &c, 0, 1000, &r, &found), AM_OK);
    cr_assert(!found && r == 1001, "beyond nmax: found %d result %llu", found,
              (unsigned long long)r);
    thr_ctx c2 = {7, 0};
    cr_assert_eq(am_sweep_search_int(thr_pred, &c2, 3, 1000, &r, &found), AM_OK);
    cr_assert(found && r == 7, "from lo = 3: result %llu", (unsigned long long)r);
}

Test(sweep, power_fit_recovers_exponent)
{
    double x[] = {0.5, 0.3, 0.2, 0.15, 0.1, 0.05, 0.0, -1.0};
    double y[8];
    for (size_t i = 0; i < 8; i++)
        y[i] = 3.0 * pow(x[i] > 0 ? x[i] : 1, 1.7);
    double p, lc;
    cr_assert_eq(am_sweep_fit_power(x, y, 8, &p, &lc), AM_OK);
    cr_assert(fabs(p - 1.7) < 1e-12, "p = %.17g", p);
    cr_assert(fabs(lc - log(3.0)) < 1e-12, "log c = %.17g, expected %.17g", lc, log(3.0));
    /* noisy data: the least-squares slope of log y on log x, checked against a hand formula */
    double xs[] = {1, 2, 4}, ys[] = {1, 4 * 1.1, 16};
    cr_assert_eq(am_sweep_fit_power(xs, ys, 3, &p, &lc), AM_OK);
    double lx[] = {0, log(2), log(4)}, ly[] = {0, log(4.4), log(16)};
    double mx = (lx[0] + lx[1] + lx[2]) / 3, my = (ly[0] + ly[1] + ly[2]) / 3, sxy = 0, sxx = 0;
    for (int i = 0; i < 3; i++) {
        sxy += (lx[i] - mx) * (ly[i] - my);
        sxx += (lx[i] - mx) * (lx[i] - mx);
    }
    cr_assert(fabs(p - sxy / sxx) < 1e-12, "p = %.17g, expected %.17g", p, sxy / sxx);
    double one[] = {0.5, NAN}, yo[] = {1, 2};
    cr_assert_eq(am_sweep_fit_power(one, yo, 2, &p, &lc), AM_EDOM, "one usable point accepted");
}

static json_t *run_json(const char *args, test_run *r)
{
    *r = test_amsgd(args);
    cr_assert_eq(r->status, 0, "amsgd %s: exit %d, stderr %s", args, r->status, r->err);
    json_error_t e;
    json_t *root = json_loads(r->out, 0, &e);
    cr_assert(root != NULL, "amsgd %s: not JSON: %s", args, e.text);
    return root;
}

Test(sweep_cli, phase_json_keys)
{
    const char *args = "phase --mu-grid 0.5,0.9 --tau-grid 0,10 --replicas 8 --time 1 --grid 11 "
                       "--metric ratio --format json --quiet";
    test_run r;
    json_t *root = run_json(args, &r);
    const char *keys[] = {"command",
                          "version",
                          "params",
                          "mu",
                          "tau",
                          "metric",
                          "metric_sem",
                          "diverged_fraction",
                          "boundary_linear",
                          "boundary_dde",
                          "boundary_paper"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_assert(json_object_get(root, keys[i]) != NULL, "phase: key %s missing", keys[i]);
    json_t *m = json_object_get(root, "metric");
    cr_assert_eq(json_array_size(m), 2);
    cr_assert_eq(json_array_size(json_array_get(m, 0)), 2);
    /* the ratio of the tau = 0 cell to itself is exactly 1 */
    cr_assert_eq(json_number_value(json_array_get(json_array_get(m, 1), 0)), 1.0);
    cr_assert(json_object_get(json_object_get(root, "params"), "seed") != NULL,
              "params.seed missing");
    json_decref(root);
    test_run_free(&r);
}

/* The CSV carries reached_fraction, the JSON's [nmu][ntau] array, as its last column (the
 * time metric averages over the replicas that reached EPS). At T = 0.6 from the saddle e:2
 * only part of the mu = 0.9 replicas reach err <= 0.05, and none at mu = 0.5. */
Test(sweep_cli, phase_csv_has_reached_fraction)
{
    const char *base = "phase --mu-grid 0.5,0.9 --tau-grid 0,10 --replicas 20 --time 0.6 --grid 11 "
                       "--metric time --eps 0.05 --init e:2 --quiet";
    char args[512];
    snprintf(args, sizeof args, "%s --format json", base);
    test_run rj;
    json_t *root = run_json(args, &rj);
    json_t *jr = json_object_get(root, "reached_fraction");
    cr_assert_not_null(jr, "phase JSON lacks reached_fraction");
    test_run rc = test_amsgd(base);
    cr_assert_eq(rc.status, 0, "phase CSV exited %d: %s", rc.status, rc.err);
    const char *line = rc.out;
    cr_assert(strncmp(line, "mu,tau,", 7) == 0, "header: %.80s", line);
    const char *eol = strchr(line, '\n');
    cr_assert_not_null(eol);
    cr_assert(eol - line > 17 && strncmp(eol - 17, ",reached_fraction", 17) == 0,
              "last CSV column is not reached_fraction: %.*s", (int)(eol - line), line);
    int fractional = 0;
    for (size_t c = 0; c < 4; c++) {
        line = eol + 1;
        eol = strchr(line, '\n');
        cr_assert_not_null(eol, "CSV has fewer than 4 rows");
        const char *last = eol;
        while (last > line && last[-1] != ',')
            last--;
        double v = strtod(last, NULL);
        double want = json_number_value(json_array_get(json_array_get(jr, c / 2), c % 2));
        cr_assert_float_eq(v, want, 1e-9, "cell %zu: CSV reached_fraction %g, JSON %g", c, v, want);
        fractional += want > 0 && want < 1;
    }
    cr_assert(fractional >= 1, "no cell with a fractional reached_fraction: the test cannot "
                               "tell the column from a constant");
    json_decref(root);
    test_run_free(&rj);
    test_run_free(&rc);
}

Test(sweep_cli, knee_json_keys)
{
    const char *args = "knee --mus 0.8,0.9 --replicas 8 --time 2 --grid 11 --bootstrap 20 "
                       "--format json --quiet";
    test_run r;
    json_t *root = run_json(args, &r);
    const char *keys[] = {
        "mu",       "tau_c",       "tau_c_sem",     "tau_c_ci",   "tau_c_linear", "tau_bound_paper",
        "exponent", "exponent_ci", "tau_c_bracket", "tau_c_seeds"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_assert(json_object_get(root, keys[i]) != NULL, "knee: key %s missing", keys[i]);
    /* tau_c_bracket: per momentum the integer pair [lo, hi] around tau_c */
    json_t *br = json_object_get(root, "tau_c_bracket");
    cr_assert(json_array_size(br) == 2, "tau_c_bracket holds %zu pairs", json_array_size(br));
    for (size_t i = 0; i < 2; i++) {
        json_t *pair = json_array_get(br, i);
        double t = json_number_value(json_array_get(json_object_get(root, "tau_c"), i));
        double lo = json_number_value(json_array_get(pair, 0));
        double hi = json_number_value(json_array_get(pair, 1));
        cr_assert(json_array_size(pair) == 2 && json_is_integer(json_array_get(pair, 0)) &&
                      json_is_integer(json_array_get(pair, 1)) && hi == lo + 1 && t >= lo && t < hi,
                  "momentum %zu: tau_c %g, bracket [%g, %g]", i, t, lo, hi);
    }
    /* a smaller momentum tolerates a larger delay */
    json_t *tc = json_object_get(root, "tau_c");
    cr_assert(json_number_value(json_array_get(tc, 0)) > json_number_value(json_array_get(tc, 1)),
              "tau_c(0.8) <= tau_c(0.9)");
    json_decref(root);
    test_run_free(&r);
}

Test(sweep_cli, bad_input_exits_2_with_one_line)
{
    const char *bad[] = {
        "phase --mu-grid 0.5,1.5 --quiet",
        "phase --tau-grid 0:10 --quiet",
        "phase --tau-grid 0,2.5 --quiet",
        "phase --metric speed --quiet",
        "phase --metric ratio --tau-grid 5,10 --quiet",
        "phase --resume --quiet",
        "phase --preset nosuch --quiet",
        "phase --delay-model poisson --quiet",
        "knee --mus 0.9,abc --quiet",
        "knee --factor 0.5 --quiet",
        "knee --delay-model geometric --quiet",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        test_run r = test_amsgd(bad[i]);
        cr_assert_eq(r.status, 2, "amsgd %s: exit %d", bad[i], r.status);
        cr_assert_eq(r.out[0], 0, "amsgd %s: stdout not empty", bad[i]);
        size_t nl = 0;
        for (const char *p = r.err; *p; p++)
            nl += *p == '\n';
        cr_assert(nl == 1 && strncmp(r.err, "amsgd: error: ", 14) == 0, "amsgd %s: stderr '%s'",
                  bad[i], r.err);
        test_run_free(&r);
    }
}

Test(sweep_cli, knee_equals_first_exceeding_delay_of_a_full_scan)
{
    /* The search (bracketing + bisection) must land on the first delay of a brute-force
     * scan at which the error ratio exceeds the factor or a replica diverges, and tau_c on
     * the crossing interpolated between it and the delay before (log ratio to log 2, or the
     * diverged fraction to 0.05): both evaluate identical cells (same seed, same replicas). */
    const char *common = "--replicas 16 --time 2 --grid 21 --format json --quiet";
    char args[512];
    snprintf(args, sizeof args, "knee --mus 0.95 --bootstrap 0 %s", common);
    test_run rk;
    json_t *knee = run_json(args, &rk);
    double tc = json_number_value(json_array_get(json_object_get(knee, "tau_c"), 0));
    snprintf(args, sizeof args, "phase --mu-grid 0.95 --tau-grid 0:40:41 --metric ratio %s",
             common);
    test_run rp;
    json_t *ph = run_json(args, &rp);
    json_t *m = json_array_get(json_object_get(ph, "metric"), 0);
    json_t *dv = json_array_get(json_object_get(ph, "diverged_fraction"), 0);
    int first = -1, monotone = 1;
    double cross = NAN;
    for (int j = 0; j <= 40; j++) {
        json_t *x = json_array_get(m, (size_t)j);
        double d = json_number_value(json_array_get(dv, (size_t)j));
        int exceeds = d > 0 || !json_is_number(x) || !(json_number_value(x) <= 2.0);
        if (exceeds && first < 0) {
            first = j;
            double rl = json_number_value(json_array_get(m, (size_t)j - 1));
            double dl = json_number_value(json_array_get(dv, (size_t)j - 1));
            double te = INFINITY, td = INFINITY;
            if (json_is_number(x) && json_number_value(x) > 2.0)
                te = (j - 1) + log(2.0 / rl) / log(json_number_value(x) / rl);
            if (d > 0.05) td = (j - 1) + (0.05 - dl) / (d - dl);
            cross = fmin(te, td);
        }
        if (!exceeds && first >= 0) monotone = 0;
    }
    cr_assert(first > 0, "no delay up to 40 exceeds the factor 2 at mu = 0.95");
    if (!monotone) cr_skip_test("the scan is not monotone at this noise level (first %d)", first);
    json_t *br = json_array_get(json_object_get(knee, "tau_c_bracket"), 0);
    cr_assert(json_number_value(json_array_get(br, 1)) == first &&
                  json_number_value(json_array_get(br, 0)) == first - 1,
              "knee's bracket [%g, %g], first exceeding delay of the scan = %d",
              json_number_value(json_array_get(br, 0)), json_number_value(json_array_get(br, 1)),
              first);
    cr_assert(fabs(tc - cross) <= 1e-12 * cross, "knee tau_c = %.17g, crossing of the scan %.17g",
              tc, cross);
    /* the check can fail: the integer rule's answer is not the crossing */
    cr_assert(!(fabs((double)first - cross) <= 1e-12 * cross), "the crossing is the integer %d",
              first);
    json_decref(knee);
    json_decref(ph);
    test_run_free(&rk);
    test_run_free(&rp);
}
