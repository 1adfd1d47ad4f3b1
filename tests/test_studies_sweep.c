/*
 * test_studies_sweep.c -- the sweep studies as library calls (studies/am_phase.h,
 * studies/am_knee.h, studies/am_sweep_cell.h), not through the binary: the cells of a small
 * phase grid against direct Async-MSGD ensemble runs (bit for bit, and a run with another
 * seed as the deliberately wrong reference), knee's critical delay against a brute-force scan
 * of the same cells, the cancel flag (distinct status, finished cells kept), the progress
 * callback's counts, resume through the library, the parameter checks' messages, the checks
 * of a checkpoint read back (checksums, values, cells, format, engine identity, lock) and
 * knee's memory limit.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <pthread.h>
#include <zlib.h>

#include "../core/am_ensemble.h"
#include "../core/am_grid.h"
#include "../studies/am_knee.h"
#include "../studies/am_phase.h"
#include "test_util.h"

static am_problem *small_problem(void)
{
    const double lambda[] = {4, 3, 2, 1};
    am_dist d;
    char err[128];
    cr_assert_eq(am_problem_dist_parse("gaussian", &d, err, sizeof err), AM_OK, "%s", err);
    am_problem *p = am_problem_alloc(4, lambda, d, 0, NULL, NULL, 0);
    cr_assert(p != NULL);
    return p;
}

/* Shared parameters of the small sweeps: T = 1, 11 saved times, 16 replicas, 1 thread. */
static am_sweep_cell_params small_cell(const am_problem *p)
{
    am_sweep_cell_params s = am_sweep_cell_params_default();
    s.problem = p;
    s.horizon = 1;
    s.ngrid = 11;
    s.replicas = 16;
    s.threads = 1;
    return s;
}

/* A knee search of small_cell(p) over the nmu momenta mu. */
static am_knee_params small_knee(const am_problem *p, const double *mu, size_t nmu)
{
    am_knee_params kp = am_knee_params_default();
    kp.cell = small_cell(p);
    kp.mu = mu;
    kp.nmu = nmu;
    return kp;
}

/* A phase diagram of small_cell(p) over the momenta mu and the delays tau. */
static am_phase_params small_phase(const am_problem *p, const double *mu, size_t nmu,
                                   const double *tau, size_t ntau)
{
    am_phase_params pp = am_phase_params_default();
    pp.cell = small_cell(p);
    pp.mu = mu;
    pp.nmu = nmu;
    pp.tau = tau;
    pp.ntau = ntau;
    return pp;
}

static int same_bits(double a, double b)
{
    if (isnan(a) && isnan(b)) return 1;
    return memcmp(&a, &b, sizeof a) == 0;
}

/* The stationary error of the cell (mu, const delay tau) and its standard error, by a direct
 * am_msgd ensemble run with the given seed. */
static void direct_cell(const am_sweep_cell_params *s, double mu, double tau, uint64_t seed,
                        double *err, double *sem, double *div)
{
    am_msgd_params m = s->msgd;
    m.mu = mu;
    m.seed = seed;
    m.summary = 1;
    cr_assert_eq(am_delay_make(tau == 0 ? AM_DELAY_NONE : AM_DELAY_CONST, tau, &m.delay), AM_OK);
    am_status st;
    am_msgd *eng = am_msgd_alloc(s->problem, &m, &st, NULL, 0);
    cr_assert(eng != NULL, "am_msgd_alloc: %s", am_strerror(st));
    uint64_t k[64];
    am_grid g = {s->ngrid, s->horizon};
    cr_assert_eq(am_grid_steps(&g, m.eta, k), AM_OK);
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = s->replicas;
    ep.threads = 1;
    am_ensemble_result *res = NULL;
    cr_assert_eq(am_ensemble_run(am_msgd_model(eng), k, s->ngrid, &ep, &res), AM_OK);
    *err = res->summary_stats[0].n > 0 ? res->summary_stats[0].mean : NAN;
    *sem = am_stats_sem(&res->summary_stats[0]);
    *div = (double)res->diverged / (double)res->replicas;
    am_ensemble_result_free(res);
    am_msgd_free(eng);
}

Test(studies_phase, cells_equal_direct_ensemble_runs)
{
    am_problem *p = small_problem();
    const double mu[] = {0.5, 0.9}, tau[] = {0, 3, 7};
    am_phase_params pp = small_phase(p, mu, 2, tau, 3);
    am_phase_result *r = NULL, *rr = NULL;
    char err[256];
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r->cells_done, 6);
    pp.metric = AM_PHASE_RATIO;
    cr_assert_eq(am_phase_run(&pp, &rr, err, sizeof err), AM_OK, "%s", err);
    size_t wrong = 0;
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < 3; j++) {
            size_t c = i * 3 + j;
            double e, s, d, e0, s0, d0, ew, sw, dw;
            direct_cell(&pp.cell, mu[i], tau[j], pp.cell.msgd.seed, &e, &s, &d);
            cr_assert(same_bits(r->metric_value[c], e) && same_bits(r->metric_sem[c], s) &&
                          same_bits(r->diverged_fraction[c], d),
                      "mu %g tau %g: phase err %.17g sem %.17g div %g, direct %.17g %.17g %g",
                      mu[i], tau[j], r->metric_value[c], r->metric_sem[c], r->diverged_fraction[c],
                      e, s, d);
            /* the ratio metric: e_ij / e_i0, exactly 1 with sem 0 at tau = 0 */
            direct_cell(&pp.cell, mu[i], 0, pp.cell.msgd.seed, &e0, &s0, &d0);
            cr_assert(same_bits(rr->metric_value[c], e / e0),
                      "mu %g tau %g: ratio %.17g, direct %.17g", mu[i], tau[j], rr->metric_value[c],
                      e / e0);
            if (j == 0) cr_assert_eq(rr->metric_sem[c], 0.0);
            /* the same comparison against a run with another seed must fail */
            direct_cell(&pp.cell, mu[i], tau[j], pp.cell.msgd.seed + 1, &ew, &sw, &dw);
            wrong += !same_bits(r->metric_value[c], ew);
        }
    cr_assert_eq(wrong, 6, "only %zu of 6 cells differ from a run with another seed", wrong);
    /* the theory curves: linear stability is finite and decreases with mu */
    cr_assert(r->boundary_linear[0] > r->boundary_linear[1],
              "boundary_linear %g at mu 0.5 <= %g at mu 0.9", r->boundary_linear[0],
              r->boundary_linear[1]);
    cr_assert(isnan(r->implicit_momentum[0]), "implicit momentum defined for const delays");
    am_phase_result_free(r);
    am_phase_result_free(rr);
    am_problem_free(p);
}

typedef struct {
    size_t calls, last_done, last_computed, total;
    int monotone;
    size_t cancel_after;
    volatile sig_atomic_t *cancel;
} progress_log;

static void on_progress(void *ctx, size_t done, size_t total, size_t computed, double elapsed)
{
    progress_log *l = ctx;
    l->calls++;
    if (done != l->last_done + 1 || computed != l->last_computed + 1 || !(elapsed >= 0))
        l->monotone = 0;
    l->last_done = done;
    l->last_computed = computed;
    l->total = total;
    if (l->cancel_after && l->calls >= l->cancel_after) *l->cancel = 1;
}

static void tmp_path(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/amsgd_test_studies_%s_%ld.ckpt", tag, (long)getpid());
    remove(buf);
}

static size_t count_cells(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = 0;
    char line[4096];
    while (fgets(line, sizeof line, f))
        n += strstr(line, "\"cell\"") != NULL;
    fclose(f);
    return n;
}

Test(studies_phase, cancel_keeps_finished_cells_and_resume_completes)
{
    am_problem *p = small_problem();
    const double mu[] = {0.5, 0.9}, tau[] = {0, 2, 4};
    char path[256], err[256];
    tmp_path(path, sizeof path, "phase");
    am_phase_params pp = small_phase(p, mu, 2, tau, 3);
    /* reference: uninterrupted, with progress counts */
    progress_log full = {0, 0, 0, 0, 1, 0, NULL};
    pp.progress = on_progress;
    pp.progress_ctx = &full;
    am_phase_result *ref = NULL;
    cr_assert_eq(am_phase_run(&pp, &ref, err, sizeof err), AM_OK, "%s", err);
    cr_assert(full.calls == 6 && full.total == 6 && full.monotone && full.last_done == 6,
              "progress: %zu calls, total %zu, monotone %d, last done %zu", full.calls, full.total,
              full.monotone, full.last_done);
    /* cancelled after 2 cells */
    volatile sig_atomic_t cancel = 0;
    progress_log lg = {0, 0, 0, 0, 1, 2, &cancel};
    pp.progress_ctx = &lg;
    pp.cancel = &cancel;
    pp.checkpoint = path;
    am_phase_result *r = NULL;
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_ECANCELED,
                 "a cancelled run must say so");
    cr_assert(r != NULL, "a cancelled run keeps its result");
    cr_assert_eq(r->cells_done, 2, "cells done after cancel: %zu", r->cells_done);
    cr_assert_eq(count_cells(path), 2, "checkpoint holds %zu cells", count_cells(path));
    for (size_t c = 0; c < 6; c++) {
        cr_assert_eq(r->done[c], c < 2, "cell %zu done %d", c, r->done[c]);
        if (c < 2)
            cr_assert(same_bits(r->metric_value[c], ref->metric_value[c]), "cell %zu differs", c);
        else
            cr_assert(isnan(r->metric_value[c]), "unfinished cell %zu has a value", c);
    }
    am_phase_result_free(r);
    /* resume: 4 cells computed, the same table as the uninterrupted run */
    cancel = 0;
    progress_log lr = {0, 2, 0, 0, 1, 0, NULL};
    pp.progress_ctx = &lr;
    pp.resume = 1;
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert(lr.calls == 4 && lr.last_done == 6 && lr.last_computed == 4 && lr.monotone,
              "resume progress: %zu calls, last done %zu, computed %zu", lr.calls, lr.last_done,
              lr.last_computed);
    for (size_t c = 0; c < 6; c++)
        cr_assert(same_bits(r->metric_value[c], ref->metric_value[c]) &&
                      same_bits(r->metric_sem[c], ref->metric_sem[c]),
                  "resumed cell %zu: %.17g, uninterrupted %.17g", c, r->metric_value[c],
                  ref->metric_value[c]);
    am_phase_result_free(r);
    /* other parameters: refused, with a message that names no flag */
    pp.cell.replicas = 17;
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_EINVAL, "other parameters resumed");
    cr_assert(r == NULL);
    cr_assert(strstr(err, "was written with other parameters (replicas 16 there, 17 now)") &&
                  !strstr(err, "--"),
              "message: %s", err);
    am_phase_result_free(ref);
    remove(path);
    am_problem_free(p);
}

Test(studies_phase, bad_parameters_name_the_field_not_a_flag)
{
    am_problem *p = small_problem();
    const double mu_bad[] = {0.5, 1.5}, mu[] = {0.5}, tau[] = {0, 2.5}, tau5[] = {5};
    am_phase_params pp = am_phase_params_default();
    pp.cell = small_cell(p);
    struct {
        const double *mu, *tau;
        size_t nmu, ntau;
        am_phase_metric metric;
        const char *needle;
    } cases[] = {
        {mu_bad, tau, 2, 1, AM_PHASE_STATIONARY, "mu values must be in [0, 1)"},
        {mu, tau, 1, 2, AM_PHASE_STATIONARY, "tau value 2.5"},
        {mu, tau5, 1, 1, AM_PHASE_RATIO, "ratio metric needs tau = 0"},
        {NULL, tau, 0, 1, AM_PHASE_STATIONARY, "axes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pp.mu = cases[i].mu;
        pp.nmu = cases[i].nmu;
        pp.tau = cases[i].tau;
        pp.ntau = cases[i].ntau;
        pp.metric = cases[i].metric;
        char err[256];
        am_phase_result *r = (am_phase_result *)1;
        cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_EINVAL, "case %zu accepted", i);
        cr_assert(r == NULL, "case %zu: result not NULL", i);
        cr_assert(strstr(err, cases[i].needle) && !strstr(err, "--"), "case %zu: '%s'", i, err);
    }
    pp.mu = mu;
    pp.nmu = 1;
    pp.tau = tau5;
    pp.ntau = 1;
    pp.metric = AM_PHASE_STATIONARY;
    pp.cell.msgd.eta = -1;
    char err[256];
    am_phase_result *r = NULL;
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "eta") && !strstr(err, "--"), "'%s'", err);
    am_problem_free(p);
}

/* The critical delay by brute force: the first tau in 0..tmax whose direct cell exceeds
 * factor times the tau = 0 error or has a diverged replica; *monotone = 0 if a later delay
 * falls back below. cross (may be NULL) receives the crossing between that delay and the one
 * before, by the closed form of am_knee.h written out here (the log error ratio interpolated
 * to log factor; a diverged replica, 1/16 > 5 % of the small cells, interpolated in the
 * diverged fraction). */
static int brute_tau_c(const am_sweep_cell_params *s, double mu, double factor, int tmax,
                       int *monotone, double *cross)
{
    double e0, s0, d0;
    direct_cell(s, mu, 0, s->msgd.seed, &e0, &s0, &d0);
    int first = -1;
    *monotone = 1;
    double eprev = e0, dprev = d0;
    if (cross) *cross = NAN;
    for (int t = 1; t <= tmax; t++) {
        double e, sm, d;
        direct_cell(s, mu, t, s->msgd.seed, &e, &sm, &d);
        int exceeds = d > 0 || !(e <= factor * e0);
        if (exceeds && first < 0) {
            first = t;
            double te = INFINITY, td = INFINITY;
            if (e > factor * e0 && isfinite(e))
                te = (t - 1) + log(factor / (eprev / e0)) / log(e / eprev);
            if (d > 0.05) td = (t - 1) + (0.05 - dprev) / (d - dprev);
            if (cross) *cross = fmin(te, td);
        }
        if (!exceeds && first >= 0) *monotone = 0;
        eprev = e;
        dprev = d;
    }
    return first;
}

Test(studies_knee, tau_c_equals_brute_force_scan)
{
    am_problem *p = small_problem();
    const double mu[] = {0.95};
    am_knee_params kp = small_knee(p, mu, 1);
    kp.cell.horizon = 2;
    kp.cell.ngrid = 21;
    kp.bootstrap = 0;
    am_knee_result *r = NULL;
    char err[256];
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    int monotone;
    double cross;
    int first = brute_tau_c(&kp.cell, mu[0], kp.factor, 40, &monotone, &cross);
    cr_assert(first > 0, "no delay up to 40 exceeds the factor %g at mu = 0.95", kp.factor);
    if (!monotone) cr_skip_test("the scan is not monotone at this noise level (first %d)", first);
    cr_assert(r->tau_c_bracket_hi[0] == (double)first && r->tau_c_bracket_lo[0] == first - 1.0,
              "knee's bracket [%g, %g], brute-force scan first %d", r->tau_c_bracket_lo[0],
              r->tau_c_bracket_hi[0], first);
    cr_assert(fabs(r->tau_c[0] - cross) <= 1e-12 * cross,
              "knee tau_c = %.17g, crossing of the brute-force scan %.17g", r->tau_c[0], cross);
    cr_assert(r->tau_c[0] >= first - 1 && r->tau_c[0] < first, "tau_c %g outside [%d, %d)",
              r->tau_c[0], first - 1, first);
    /* a deliberately wrong factor moves the brute-force answer away from knee's */
    int m2;
    double wrong;
    brute_tau_c(&kp.cell, mu[0], 1.05, 40, &m2, &wrong);
    cr_assert(!(fabs(r->tau_c[0] - wrong) <= 1e-12 * wrong), "factor 1.05 gives the same tau_c %g",
              wrong);
    /* the search evaluates far fewer delays than the scan (2 log2 tau_c + 2 + 2 refine + 1) */
    double bound = 2 * ceil(log2((double)first)) + 2 + 2 * (double)kp.refine + 1;
    cr_assert((double)r->cells_evaluated[0] <= bound, "%zu evaluations > %g", r->cells_evaluated[0],
              bound);
    double e0, s0, d0;
    direct_cell(&kp.cell, mu[0], 0, kp.cell.msgd.seed, &e0, &s0, &d0);
    cr_assert(same_bits(r->err_tau0[0], e0), "err_tau0 %.17g, direct %.17g", r->err_tau0[0], e0);
    am_knee_result_free(r);
    am_problem_free(p);
}

Test(studies_knee, exponent_is_the_fit_of_tau_c_and_resume_is_exact)
{
    am_problem *p = small_problem();
    const double mu[] = {0.8, 0.9, 0.95};
    char path[256], err[256];
    tmp_path(path, sizeof path, "knee");
    am_knee_params kp = small_knee(p, mu, 3);
    kp.cell.horizon = 2;
    kp.bootstrap = 20;
    am_knee_result *ref = NULL, *r = NULL;
    cr_assert_eq(am_knee_run(&kp, &ref, err, sizeof err), AM_OK, "%s", err);
    /* exponent: slope of log tau_c on log (1 - mu), by hand */
    double lx[3], ly[3], mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < 3; i++) {
        cr_assert(ref->tau_c[i] > 0, "tau_c(%g) = %g", mu[i], ref->tau_c[i]);
        lx[i] = log(1 - mu[i]);
        ly[i] = log(ref->tau_c[i]);
        mx += lx[i] / 3;
        my += ly[i] / 3;
    }
    for (int i = 0; i < 3; i++) {
        sxx += (lx[i] - mx) * (lx[i] - mx);
        sxy += (lx[i] - mx) * (ly[i] - my);
    }
    cr_assert(fabs(ref->exponent - sxy / sxx) <= 1e-12 * fabs(sxy / sxx),
              "exponent %.17g, least squares %.17g", ref->exponent, sxy / sxx);
    size_t fractional = 0;
    for (int i = 0; i < 3; i++) {
        cr_assert(ref->tau_c_lo[i] <= ref->tau_c_hi[i], "interval %g > %g", ref->tau_c_lo[i],
                  ref->tau_c_hi[i]);
        cr_assert(ref->tau_c_linear[i] > 0 && isfinite(ref->tau_c_dde[i]));
        /* the crossing lies in its bracket, one delay wide */
        double lo = ref->tau_c_bracket_lo[i], hi = ref->tau_c_bracket_hi[i];
        cr_assert(hi == lo + 1 && ref->tau_c[i] >= lo && ref->tau_c[i] < hi,
                  "mu %g: tau_c %g, bracket [%g, %g]", mu[i], ref->tau_c[i], lo, hi);
        /* the bootstrap replicates are interpolated too */
        for (size_t b = 0; b < 20; b++) {
            double x = ref->tau_c_boot[i * 20 + b];
            fractional += isfinite(x) && x != floor(x);
        }
    }
    cr_assert(fractional > 0, "every bootstrap replicate is an integer delay");
    cr_assert_eq(ref->exponent_paper, 2.0);
    /* cancelled after the first momentum, then resumed through the library */
    volatile sig_atomic_t cancel = 0;
    progress_log lg = {0, 0, 0, 0, 1, 1, &cancel};
    kp.progress = on_progress;
    kp.progress_ctx = &lg;
    kp.cancel = &cancel;
    kp.checkpoint = path;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_ECANCELED, "%s", err);
    cr_assert(r->cells_done == 1 && r->done[0] && !r->done[1] && !r->done[2],
              "cancelled: %zu momenta done", r->cells_done);
    cr_assert(same_bits(r->tau_c[0], ref->tau_c[0]));
    am_knee_result_free(r);
    cancel = 0;
    lg.cancel_after = 0;
    kp.resume = 1;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    for (size_t i = 0; i < 3; i++) {
        cr_assert(same_bits(r->tau_c[i], ref->tau_c[i]) &&
                      same_bits(r->tau_c_sem[i], ref->tau_c_sem[i]) &&
                      r->cells_evaluated[i] == ref->cells_evaluated[i],
                  "momentum %zu differs after resume", i);
        for (size_t b = 0; b < 20; b++)
            cr_assert(same_bits(r->tau_c_boot[i * 20 + b], ref->tau_c_boot[i * 20 + b]));
    }
    cr_assert(same_bits(r->exponent, ref->exponent) && same_bits(r->exponent_lo, ref->exponent_lo));
    am_knee_result_free(r);
    /* a flag set before the run: nothing computed, distinct status */
    cancel = 1;
    kp.resume = 0;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_ECANCELED);
    cr_assert_eq(r->cells_done, 0);
    am_knee_result_free(r);
    am_knee_result_free(ref);
    remove(path);
    am_problem_free(p);
}

Test(studies_knee, bad_parameters_name_the_field_not_a_flag)
{
    am_problem *p = small_problem();
    const double mu[] = {0.9};
    am_knee_params kp = small_knee(p, mu, 1);
    char err[256];
    am_knee_result *r = NULL;
    kp.factor = 0.5;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "factor") && !strstr(err, "--"), "'%s'", err);
    kp.factor = 2;
    kp.cell.delay_kind = AM_DELAY_GEOMETRIC;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "const or uniform") && !strstr(err, "--"), "'%s'", err);
    kp.cell.delay_kind = AM_DELAY_CONST;
    kp.resume = 1;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "checkpoint") && !strstr(err, "--"), "'%s'", err);
    cr_assert(r == NULL);
    am_problem_free(p);
}

/* ---- checkpoints you can trust ------------------------------------------------------- */

/* Reads the checkpoint's lines (without '\n') into a NULL-terminated array. */
static char **read_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot read %s", path);
    char **lines = calloc(256, sizeof *lines), buf[65536];
    *n = 0;
    while (*n < 255 && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        lines[(*n)++] = strdup(buf);
    }
    fclose(f);
    return lines;
}

static void write_lines(const char *path, char **lines, size_t n)
{
    FILE *f = fopen(path, "w");
    cr_assert(f != NULL);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
}

static void free_lines(char **lines, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

/* Line text with a valid checksum for the JSON text json. */
static char *signed_line(const char *json)
{
    size_t n = strlen(json);
    char *s = malloc(n + 10);
    unsigned long crc = crc32(0L, (const Bytef *)json, (uInt)n) & 0xffffffffUL;
    snprintf(s, n + 10, "%s %08lx", json, crc);
    return s;
}

/* A finished 2 x 3 phase checkpoint at path, and the parameters that wrote it. */
static am_phase_params ckpt_phase(am_problem *p, const char *path)
{
    static const double mu[] = {0.5, 0.9}, tau[] = {0, 2, 4};
    am_phase_params pp = small_phase(p, mu, 2, tau, 3);
    pp.checkpoint = path;
    am_phase_result *r = NULL;
    char err[256];
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    am_phase_result_free(r);
    pp.resume = 1;
    return pp;
}

/* Replaces line k of the checkpoint by the JSON text json (signed unless raw), resumes, and
 * expects a refusal whose message names line k + 1 and contains needle. */
static void expect_refused(am_phase_params *pp, const char *path, size_t k, const char *json,
                           int raw, const char *needle)
{
    size_t n;
    char **lines = read_lines(path, &n);
    cr_assert(k < n);
    char *saved = lines[k];
    lines[k] = raw ? strdup(json) : signed_line(json);
    write_lines(path, lines, n);
    am_phase_result *r = NULL;
    char err[512], line[32];
    am_status st = am_phase_run(pp, &r, err, sizeof err);
    cr_assert_eq(st, AM_EINVAL, "line %zu = '%s' accepted (status %d)", k + 1, lines[k], st);
    cr_assert(r == NULL);
    snprintf(line, sizeof line, "line %zu", k + 1);
    cr_assert(strstr(err, needle) && (k == 0 || strstr(err, line)),
              "line %zu = '%s': message '%s' lacks '%s'", k + 1, lines[k], err, needle);
    free(lines[k]);
    lines[k] = saved;
    write_lines(path, lines, n);
    free_lines(lines, n);
}

Test(studies_checkpoint, altered_lines_are_refused_naming_the_line)
{
    am_problem *p = small_problem();
    char path[256];
    tmp_path(path, sizeof path, "trust");
    am_phase_params pp = ckpt_phase(p, path);
    size_t n;
    char **lines = read_lines(path, &n);
    cr_assert_eq(n, 7, "checkpoint has %zu lines", n);
    /* the unaltered file resumes */
    am_phase_result *r = NULL;
    char err[512];
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    am_phase_result_free(r);
    /* a flipped digit: the checksum no longer matches */
    char *flip = strdup(lines[2]);
    char *d = strstr(flip, "\"values\":[0.") + 12;
    *d = *d == '7' ? '3' : '7';
    expect_refused(&pp, path, 2, flip, 1, "checksum mismatch");
    free(flip);
    /* signed but impossible lines */
    expect_refused(&pp, path, 2, "{\"cell\":0,\"values\":[0.1,0.01,0.0,0.0,0.0,1.0]}", 0,
                   "repeats cell 0");
    expect_refused(&pp, path, 2, "{\"cell\":17,\"values\":[0.1,0.01,0.0,0.0,0.0,1.0]}", 0,
                   "not a cell of this sweep");
    expect_refused(&pp, path, 2, "{\"cell\":1,\"values\":[\"x\",0.01,0.0,0.0,0.0,1.0]}", 0,
                   "value 0 of cell 1 is not a number");
    expect_refused(&pp, path, 2, "{\"cell\":1,\"values\":[0.1,0.01,true,0.0,0.0,1.0]}", 0,
                   "value 2 of cell 1 is not a number");
    expect_refused(&pp, path, 2, "{\"cell\":1,\"values\":[0.1,0.01,0.3,0.0,0.0,1.0]}", 0,
                   "diverged fraction 0.3 is not a count over 16 replicas");
    expect_refused(&pp, path, 2, "{\"cell\":1,\"values\":[1.5,0.01,0.0,0.0,0.0,1.0]}", 0,
                   "error 1.5 is outside [0, 1]");
    expect_refused(&pp, path, 2, "{\"cell\":1,\"values\":[0.1,-0.01,0.0,0.0,0.0,1.0]}", 0,
                   "standard error -0.01 is negative");
    expect_refused(&pp, path, 2, "{\"cell\":1,\"values\":[0.1,0.01,0.0,7.0,0.0,1.0]}", 0,
                   "time 7 is outside [0, 1]");
    /* the same values, in range, are accepted: the checks refuse only what is impossible */
    size_t m;
    char **l2 = read_lines(path, &m);
    free(l2[2]);
    l2[2] = signed_line("{\"cell\":1,\"values\":[0.1,0.01,0.0625,null,null,0.0]}");
    write_lines(path, l2, m);
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "in-range values refused: %s", err);
    cr_assert_eq(r->metric_value[1], 0.1, "the checkpoint's value is used");
    am_phase_result_free(r);
    free_lines(l2, m);
    free_lines(lines, n);
    remove(path);
    am_problem_free(p);
}

Test(studies_checkpoint, header_holds_version_and_engine_identity)
{
    am_problem *p = small_problem();
    char path[256];
    tmp_path(path, sizeof path, "hdr");
    am_phase_params pp = ckpt_phase(p, path);
    size_t n;
    char **lines = read_lines(path, &n);
    cr_assert(strstr(lines[0], "\"amsgd_checkpoint\":2") && strstr(lines[0], "\\\"version\\\"") &&
                  strstr(lines[0], "\\\"engine\\\":\\\""),
              "header: %s", lines[0]);
    /* another engine identity (a build with other random streams): said to be another build,
     * naming the key */
    char *hdr = strdup(lines[0]);
    hdr[strlen(hdr) - 9] = 0; /* strip the checksum */
    char *e = strstr(hdr, "\\\"engine\\\":\\\"") + 14;
    *e = *e == '0' ? '1' : '0';
    expect_refused(&pp, path, 0, hdr, 0, "was written by another build of amsgd (engine ");
    free(hdr);
    /* another parameter: named with its value in the file and now */
    hdr = strdup(lines[0]);
    hdr[strlen(hdr) - 9] = 0;
    char *g = strstr(hdr, "\\\"mu_grid\\\":[");
    cr_assert_not_null(g, "header without mu_grid: %s", hdr);
    g[13] = g[13] == '0' ? '1' : '0'; /* the first momentum's first digit */
    expect_refused(&pp, path, 0, hdr, 0, "was written with other parameters (mu_grid ");
    free(hdr);
    /* a damaged header of this format: the checksum, not the format */
    hdr = strdup(lines[0]);
    hdr[strlen(hdr) - 1] = hdr[strlen(hdr) - 1] == '0' ? '1' : '0';
    expect_refused(&pp, path, 0, hdr, 1, "line 1 (the header): checksum mismatch");
    free(hdr);
    /* a format-1 checkpoint (no checksums) */
    expect_refused(&pp, path, 0,
                   "{\"amsgd_checkpoint\":1,\"ncells\":6,\"nvalues\":6,\"fingerprint\":\"x\"}", 1,
                   "has format 1, this build reads format 2");
    free_lines(lines, n);
    remove(path);
    am_problem_free(p);
}

Test(studies_checkpoint, a_checkpoint_in_use_is_refused_at_once)
{
    am_problem *p = small_problem();
    char path[256];
    tmp_path(path, sizeof path, "lock");
    am_phase_params pp = ckpt_phase(p, path);
    size_t n0;
    char **before = read_lines(path, &n0);
    /* another run holds the lock (an open file description with a write lock) */
    int fd = open(path, O_RDWR);
    cr_assert(fd >= 0);
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    cr_assert_eq(fcntl(fd, F_OFD_SETLK, &fl), 0, "cannot lock %s", path);
    am_phase_result *r = NULL;
    char err[512];
    for (int resume = 0; resume <= 1; resume++) {
        pp.resume = resume;
        cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_EINVAL,
                     "a locked checkpoint was used (resume %d)", resume);
        cr_assert(strstr(err, "in use by another run"), "message: %s", err);
    }
    /* the command: exit 2 and one line, the file untouched */
    char args[512];
    snprintf(args, sizeof args,
             "phase --mu-grid 0.5,0.9 --tau-grid 0,2,4 --replicas 16 --time 1 --grid 11 "
             "--threads 1 --quiet --checkpoint %s",
             path);
    test_expect_usage_error(args, "in use by another run");
    size_t n1;
    char **after = read_lines(path, &n1);
    cr_assert_eq(n1, n0);
    for (size_t i = 0; i < n0; i++)
        cr_assert_str_eq(after[i], before[i], "line %zu changed while locked", i + 1);
    /* released: the next run proceeds */
    close(fd);
    pp.resume = 1;
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    am_phase_result_free(r);
    free_lines(before, n0);
    free_lines(after, n1);
    remove(path);
    am_problem_free(p);
}

Test(studies_checkpoint, knee_counts_are_validated)
{
    am_problem *p = small_problem();
    char path[256], err[512];
    tmp_path(path, sizeof path, "kcount");
    const double mu[] = {0.9};
    am_knee_params kp = small_knee(p, mu, 1);
    kp.bootstrap = 2;
    kp.checkpoint = path;
    am_knee_result *r = NULL;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    am_knee_result_free(r);
    kp.resume = 1;
    size_t n;
    char **lines = read_lines(path, &n);
    cr_assert_eq(n, 2);
    const char *bad[][2] = {
        {"{\"cell\":0,\"values\":[5.5,0.01,0.001,null,null,5.0,6.0,5.0,6.0]}", "cells evaluated"},
        {"{\"cell\":0,\"values\":[5.5,0.01,0.001,1e300,null,5.0,6.0,5.0,6.0]}", "cells evaluated"},
        {"{\"cell\":0,\"values\":[6.5,0.01,0.001,9.0,null,5.0,6.0,5.0,6.0]}",
         "tau_c 6.5 lies outside"},
        {"{\"cell\":0,\"values\":[5.5,0.01,0.001,9.0,null,4.5,6.0,5.0,6.0]}", "bracket [4.5, 6]"},
        {"{\"cell\":0,\"values\":[-0.5,0.01,0.001,9.0,null,5.0,6.0,5.0,6.0]}", "tau_c -0.5"},
        {"{\"cell\":0,\"values\":[5.5,0.01,0.001,9.0,null,5.0,6.0,5.0,-1.0]}", "bootstrap value 1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *saved = lines[1];
        lines[1] = signed_line(bad[i][0]);
        write_lines(path, lines, n);
        am_status st = am_knee_run(&kp, &r, err, sizeof err);
        cr_assert_eq(st, AM_EINVAL, "'%s' accepted", bad[i][0]);
        cr_assert(strstr(err, bad[i][1]) && strstr(err, "line 2"), "'%s': message '%s'", bad[i][0],
                  err);
        free(lines[1]);
        lines[1] = saved;
    }
    /* an in-range line is accepted */
    char *saved = lines[1];
    lines[1] = signed_line("{\"cell\":0,\"values\":[5.5,0.01,0.001,9.0,null,5.0,6.0,5.25,6.0]}");
    write_lines(path, lines, n);
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r->cells_evaluated[0], 9);
    cr_assert(r->tau_c[0] == 5.5 && r->tau_c_bracket_lo[0] == 5 && r->tau_c_bracket_hi[0] == 6 &&
                  r->tau_c_boot[0] == 5.25,
              "read back: tau_c %g in [%g, %g]", r->tau_c[0], r->tau_c_bracket_lo[0],
              r->tau_c_bracket_hi[0]);
    am_knee_result_free(r);
    free(lines[1]);
    lines[1] = saved;
    free_lines(lines, n);
    remove(path);
    am_problem_free(p);
}

Test(studies_knee, memory_of_the_kept_summaries_is_checked_up_front)
{
    am_problem *p = small_problem();
    const double mu[] = {0.5};
    am_knee_params kp = small_knee(p, mu, 1);
    kp.tau_max = 64;
    kp.refine = 3;
    kp.cell.replicas = 30000000;
    /* 1 + (6 + 2) + 6 + 6 = 21 delays of R x 3 doubles */
    double want = 21.0 * 3e7 * 3 * 8;
    cr_assert_eq(am_knee_memory(&kp), want, "memory %g, expected %g", am_knee_memory(&kp), want);
    char err[512];
    am_knee_result *r = NULL;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_ENOMEM, "%s", err);
    cr_assert(strstr(err, "above the limit") && !strstr(err, "--"), "message: %s", err);
    kp.cell.replicas = 1000000; /* 0.5 GB: accepted by the check */
    cr_assert_eq(am_knee_params_check(&kp, err, sizeof err), AM_OK, "%s", err);
    test_expect_usage_error("knee --mus 0.5 --replicas 30000000 --time 0.04 --grid 2 --eta 1e-2 "
                            "--bootstrap 2 --tau-max 64 --quiet",
                            "--replicas 30000000");
    am_problem_free(p);
}

/* ---- cancellation inside a cell ------------------------------------------------------ */

typedef struct {
    const char *path;
    volatile sig_atomic_t *cancel;
} canceller;

/* Sets the flag 20 ms after the run has written its checkpoint header (the cell is running). */
static void *cancel_when_started(void *arg)
{
    canceller *c = arg;
    for (int i = 0; i < 20000; i++) {
        FILE *f = fopen(c->path, "r");
        int started = 0;
        if (f) {
            started = fgetc(f) == '{';
            fclose(f);
        }
        if (started) break;
        usleep(1000);
    }
    usleep(20000);
    *c->cancel = 1;
    return NULL;
}

Test(studies_phase, cancel_stops_the_cell_in_progress)
{
    /* one cell of 2e4 replicas x 2e4 steps (seconds of work): only a flag polled inside the
     * cell can stop it, since it is clear when the cell starts */
    am_problem *p = small_problem();
    char path[256], err[256];
    tmp_path(path, sizeof path, "inside");
    const double mu[] = {0.5}, tau[] = {2};
    am_phase_params pp = small_phase(p, mu, 1, tau, 1);
    pp.cell.horizon = 10;
    pp.cell.replicas = 20000;
    pp.checkpoint = path;
    volatile sig_atomic_t cancel = 0;
    pp.cancel = &cancel;
    canceller c = {path, &cancel};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, cancel_when_started, &c), 0);
    am_phase_result *r = NULL;
    am_status st = am_phase_run(&pp, &r, err, sizeof err);
    pthread_join(th, NULL);
    cr_assert_eq(st, AM_ECANCELED, "the cell ran to its end (status %d, %s)", st, err);
    cr_assert(r != NULL && r->cells_done == 0 && !r->done[0], "the cut cell was kept");
    cr_assert(isnan(r->metric_value[0]));
    cr_assert_eq(count_cells(path), 0, "the cut cell reached the checkpoint");
    am_phase_result_free(r);
    /* the cell itself: a flag set before it starts returns at once, without values */
    double v[AM_SWEEP_CELL_NVALUES] = {0};
    cr_assert_eq(am_sweep_cell_run(&pp.cell, 0.5, 2, &cancel, v, NULL), AM_ECANCELED);
    cr_assert_eq(v[0], 0.0, "a cancelled cell wrote values");
    remove(path);
    am_problem_free(p);
}

Test(studies_checkpoint, another_file_is_not_started_anew_over)
{
    am_problem *p = small_problem();
    char path[256], err[512];
    tmp_path(path, sizeof path, "other");
    FILE *f = fopen(path, "w");
    fputs("x,y\n1,2\n", f);
    fclose(f);
    const double mu[] = {0.5}, tau[] = {0};
    am_phase_params pp = small_phase(p, mu, 1, tau, 1);
    pp.checkpoint = path;
    am_phase_result *r = NULL;
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_EINVAL, "a data file was overwritten");
    cr_assert(strstr(err, "is not an amsgd checkpoint"), "message: %s", err);
    size_t n;
    char **lines = read_lines(path, &n);
    cr_assert(n == 2 && strcmp(lines[0], "x,y") == 0, "the file changed");
    free_lines(lines, n);
    /* an empty file, or an amsgd checkpoint, is started anew */
    f = fopen(path, "w");
    fclose(f);
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    am_phase_result_free(r);
    cr_assert_eq(am_phase_run(&pp, &r, err, sizeof err), AM_OK, "%s", err);
    am_phase_result_free(r);
    cr_assert_eq(count_cells(path), 1);
    remove(path);
    am_problem_free(p);
}

Test(studies_knee, critical_counts_the_diverged_fraction)
{
    /* the predicate: a fraction above diverged_max is critical, one below is not */
    cr_assert(am_knee_critical(1.0, 1.0, 0.06, 2, 0.05), "6 %% diverged > 5 %% is not critical");
    cr_assert(!am_knee_critical(1.0, 1.0, 0.04, 2, 0.05), "4 %% diverged < 5 %% is critical");
    cr_assert(am_knee_critical(2.5, 1.0, 0.0, 2, 0.05), "error ratio 2.5 > 2 is not critical");
    cr_assert(am_knee_critical(NAN, 1.0, 0.0, 2, 0.05), "a NaN error is not critical");
    /* a tiny problem whose tau = 0 cell has a diverged fraction strictly inside (0, 1): a
       blowup threshold near the initial norm marks part of the replicas diverged */
    am_problem *p = small_problem();
    const double mu[] = {0.5};
    am_knee_params kp = small_knee(p, mu, 1);
    kp.bootstrap = 0;
    kp.tau_max = 2;
    double frac = -1, e0, s0;
    for (double bl = 1.0001; bl < 3 && !(frac > 0.1 && frac < 0.9); bl = 1 + 1.5 * (bl - 1)) {
        kp.cell.msgd.blowup = bl;
        direct_cell(&kp.cell, mu[0], 0, kp.cell.msgd.seed, &e0, &s0, &frac);
    }
    cr_assert(frac > 0.1 && frac < 0.9, "no blowup in (1, 3) gives a partial divergence (%g)",
              frac);
    am_knee_result *r = NULL;
    char err[256];
    kp.diverged_max = frac - 0.05; /* fraction above the threshold: tau = 0 is critical */
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r->tau_c[0], 0.0, "diverged %g > max %g but tau_c = %g", frac, kp.diverged_max,
                 r->tau_c[0]);
    am_knee_result_free(r);
    kp.diverged_max = frac + 0.05; /* below: tau = 0 is not critical */
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_neq(r->tau_c[0], 0.0, "diverged %g < max %g but tau_c = 0", frac, kp.diverged_max);
    am_knee_result_free(r);
    am_problem_free(p);
}

/* 1 when the crossing t is within the relative tolerance rtol of want. */
static int crossing_within(double t, double want, double rtol)
{
    return fabs(t - want) <= rtol * fabs(want);
}

/* Error ratio curves with a known crossing ts of the factor 2: exponential, exp(ln 2 tau / ts)
 * (log-linear, so the interpolation is exact), and convex but not exponential,
 * 1 + (tau / ts)^3. */
static double ratio_exp(double tau, double ts)
{
    return exp(log(2.0) * tau / ts);
}
static double ratio_cubic(double tau, double ts)
{
    return 1 + pow(tau / ts, 3);
}

/* The integer rule and the interpolation on a curve sampled at the integers: *hi the first
 * integer delay whose ratio exceeds 2, the return value the crossing of am_knee_crossing
 * between hi - 1 and hi (base 0.04, no divergence). */
static double sampled_crossing(double (*ratio)(double, double), double ts, int *hi)
{
    const double base = 0.04;
    int t = 1;
    while (!(ratio(t, ts) > 2))
        t++;
    *hi = t;
    return am_knee_crossing(t - 1, t, base * ratio(t - 1, ts), base * ratio(t, ts), 0, 0, base, 2,
                            0.05);
}

Test(studies_knee, crossing_interpolates_a_closed_form_curve)
{
    /* the error doubles at 16.2: the integer rule says 17 */
    int hi;
    double t = sampled_crossing(ratio_exp, 16.2, &hi);
    cr_assert_eq(hi, 17);
    cr_assert(crossing_within(t, 16.2, 1e-12), "exponential curve: crossing %.17g, known 16.2", t);
    /* the same check against a wrong crossing fails: the integer rule's 17, the bracket's 16 */
    cr_assert(!crossing_within(t, 17.0, 1e-12) && !crossing_within(t, 16.0, 1e-12),
              "the check cannot tell 16.2 from the bracket's ends");
    /* a convex, non-exponential curve: log interpolation is close, not exact */
    t = sampled_crossing(ratio_cubic, 16.2, &hi);
    cr_assert_eq(hi, 17);
    cr_assert(crossing_within(t, 16.2, 1e-3), "cubic curve: crossing %.17g, known 16.2", t);
    cr_assert(!crossing_within(t, 17.0, 1e-3), "cubic curve: 17 passes the check");
    /* the formula itself: ratios 1.5 and 3 around 2 */
    double want = 10 + log(2 / 1.5) / log(3 / 1.5);
    t = am_knee_crossing(10, 11, 0.15, 0.3, 0, 0, 0.1, 2, 0.05);
    cr_assert(crossing_within(t, want, 1e-14), "crossing %.17g, closed form %.17g", t, want);
    /* by divergence: the fraction 0.03 -> 0.12 crosses 0.05 at 2/9 of the step, the error
       stays below twice the base */
    t = am_knee_crossing(19, 20, 0.15, 0.19, 0.03, 0.12, 0.1, 2, 0.05);
    cr_assert(crossing_within(t, 19 + 2.0 / 9, 1e-14), "divergence: crossing %.17g", t);
    /* both criteria: the earlier crossing (divergence at 19.22, error at 19.5) */
    t = am_knee_crossing(19, 20, 0.1 * sqrt(2.0), 0.1 * 2 * sqrt(2.0), 0.03, 0.12, 0.1, 2, 0.05);
    cr_assert(crossing_within(t, 19 + 2.0 / 9, 1e-14), "both: crossing %.17g", t);
    t = am_knee_crossing(19, 20, 0.1 * sqrt(2.0), 0.1 * 2 * sqrt(2.0), 0.03, 0.04, 0.1, 2, 0.05);
    cr_assert(crossing_within(t, 19.5, 1e-14), "error alone: crossing %.17g", t);
    /* a wide bracket (a bootstrap replicate past the refined delays): the same formula */
    t = am_knee_crossing(64, 128, 0.15, 0.3, 0, 0, 0.1, 2, 0.05);
    cr_assert(crossing_within(t, 64 + 64 * log(2 / 1.5) / log(2.0), 1e-14), "wide: %.17g", t);
    /* every replica diverged at hi (its error NaN): the diverged fraction 0 -> 1 */
    t = am_knee_crossing(5, 6, 0.15, NAN, 0, 1, 0.1, 2, 0.05);
    cr_assert(crossing_within(t, 5.05, 1e-14), "all diverged: crossing %.17g", t);
    /* nothing to interpolate (a NaN base): the upper end */
    cr_assert_eq(am_knee_crossing(5, 6, 0.15, 0.3, 0, 0, NAN, 2, 0.05), 6.0);
}

Test(studies_knee, interpolation_removes_the_rounding_bias)
{
    /* crossings spread over [10, 30): the integer rule is late by 0.5 on average, the
       interpolated crossing is unbiased (exact on the exponential curve, within 0.02 on the
       cubic one) */
    const int n = 200;
    double bias_int = 0, bias_exp = 0, bias_cub = 0, worst_exp = 0, worst_cub = 0;
    for (int k = 0; k < n; k++) {
        double ts = 10 + 20 * (k + 0.5) / n;
        int hi;
        double te = sampled_crossing(ratio_exp, ts, &hi);
        bias_int += (hi - ts) / n;
        bias_exp += (te - ts) / n;
        worst_exp = fmax(worst_exp, fabs(te - ts));
        double tc = sampled_crossing(ratio_cubic, ts, &hi);
        bias_cub += (tc - ts) / n;
        worst_cub = fmax(worst_cub, fabs(tc - ts));
        cr_assert(tc >= hi - 1 && tc < hi, "crossing %g outside its bracket [%d, %d)", tc, hi - 1,
                  hi);
    }
    cr_assert(fabs(bias_int - 0.5) < 0.01, "integer rule: mean bias %g, expected 0.5", bias_int);
    cr_assert(worst_exp < 1e-9 && fabs(bias_exp) < 1e-10,
              "exponential: worst error %g, mean bias %g", worst_exp, bias_exp);
    cr_assert(worst_cub < 0.02 && fabs(bias_cub) < 0.01, "cubic: worst error %g, mean bias %g",
              worst_cub, bias_cub);
    /* the knee of the integer rule at 16.2 is 17, 0.8 late (5 %): outside the tolerance the
       interpolated value meets */
    int hi;
    double t = sampled_crossing(ratio_cubic, 16.2, &hi);
    cr_assert(crossing_within(t, 16.2, 0.02 / 16.2) && !crossing_within(hi, 16.2, 0.02 / 16.2),
              "crossing %g, integer %d, known 16.2", t, hi);
}

/* 1 when a and b agree to 1e-12 relative. */
static int close_rel(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

Test(studies_knee, seeds_give_mean_sd_and_an_interval_around_the_exponent)
{
    am_problem *p = small_problem();
    const double mu[] = {0.8, 0.9, 0.95};
    char err[256];
    am_knee_params kp = small_knee(p, mu, 3);
    kp.cell.horizon = 2;
    kp.bootstrap = 10;
    kp.seeds = 3;
    am_knee_result *r = NULL;
    cr_assert_eq(am_knee_run(&kp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r->seeds, 3);
    double expo[3];
    for (size_t s = 0; s < 3; s++) {
        /* seed s of the run is the one-seed run with seed + s */
        am_knee_params k1 = kp;
        k1.seeds = 1;
        k1.cell.msgd.seed = kp.cell.msgd.seed + s;
        am_knee_result *r1 = NULL;
        cr_assert_eq(am_knee_run(&k1, &r1, err, sizeof err), AM_OK, "%s", err);
        for (size_t i = 0; i < 3; i++)
            cr_assert(same_bits(r->tau_c_seeds[i * 3 + s], r1->tau_c[i]),
                      "seed %zu mu %g: %g, one-seed run %g", s, mu[i], r->tau_c_seeds[i * 3 + s],
                      r1->tau_c[i]);
        if (s == 0)
            for (size_t i = 0; i < 3; i++)
                cr_assert(same_bits(r->tau_c[i], r1->tau_c[i]), "tau_c is not the first seed's");
        expo[s] = r1->exponent;
        cr_assert(isfinite(expo[s]), "seed %zu: exponent undefined", s);
        am_knee_result_free(r1);
    }
    for (size_t i = 0; i < 3; i++) {
        const double *t = r->tau_c_seeds + i * 3;
        double m = (t[0] + t[1] + t[2]) / 3;
        double sd =
            sqrt(((t[0] - m) * (t[0] - m) + (t[1] - m) * (t[1] - m) + (t[2] - m) * (t[2] - m)) / 2);
        cr_assert(close_rel(r->tau_c_mean[i], m), "mu %g: mean %.17g, by hand %.17g", mu[i],
                  r->tau_c_mean[i], m);
        cr_assert(close_rel(r->tau_c_sd[i], sd) || (sd == 0 && r->tau_c_sd[i] == 0),
                  "mu %g: sd %.17g, by hand %.17g", mu[i], r->tau_c_sd[i], sd);
    }
    double em = (expo[0] + expo[1] + expo[2]) / 3;
    double esd = sqrt(((expo[0] - em) * (expo[0] - em) + (expo[1] - em) * (expo[1] - em) +
                       (expo[2] - em) * (expo[2] - em)) /
                      2);
    double h = 4.302652729911275 * esd / sqrt(3.0); /* t_{2, 0.975} */
    cr_assert(close_rel(r->exponent, em), "exponent %.17g, mean of the seeds %.17g", r->exponent,
              em);
    cr_assert(fabs(r->exponent_hi - (em + h)) <= 1e-9 * fmax(1, fabs(em)) &&
                  fabs(r->exponent_lo - (em - h)) <= 1e-9 * fmax(1, fabs(em)),
              "exponent_ci [%g, %g], by hand [%g, %g]", r->exponent_lo, r->exponent_hi, em - h,
              em + h);
    cr_assert(r->exponent_lo <= r->exponent && r->exponent <= r->exponent_hi,
              "exponent %g outside [%g, %g]", r->exponent, r->exponent_lo, r->exponent_hi);
    /* the checks can fail: a wrong expectation (the first seed's exponent, or the population
       sd) is told apart whenever the seeds differ */
    if (esd > 0) {
        cr_assert(!close_rel(r->exponent, expo[0]) || close_rel(em, expo[0]),
                  "the mean exponent equals the first seed's");
        double wrong = h * sqrt(2.0 / 3.0);
        cr_assert(fabs(r->exponent_hi - (em + wrong)) > 1e-9 * fmax(1, fabs(em)),
                  "the population sd passes the interval check");
    }
    int spread = 0;
    for (size_t i = 0; i < 3; i++)
        if (r->tau_c_sd[i] > 0) {
            spread = 1;
            double wrong_sd = r->tau_c_sd[i] * sqrt(2.0 / 3.0);
            cr_assert(!close_rel(r->tau_c_sd[i], wrong_sd), "population sd passes the sd check");
        }
    cr_assert(spread || esd == 0, "seeds give identical tau_c but different exponents");
    am_knee_result_free(r);
    am_problem_free(p);
}

/* A knee past --tau-max and the exponent it leaves undefined are results (exit 0), each said
 * in one warning line; with room for both knees there is no warning. */
Test(studies_knee, cli_warns_on_a_censored_knee)
{
    test_run r = test_amsgd("knee --mus 0.5,0.9 --tau-max 64 --time 5 --replicas 50");
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    cr_assert(strstr(r.err, "amsgd: warning: no knee of mu = 0.5 up to --tau-max 64") &&
                  strstr(r.err, "amsgd: warning: the exponent is nan"),
              "stderr: %s", r.err);
    cr_assert_null(strstr(r.err, "mu = 0.9"), "the knee of mu = 0.9 lies below 64: %s", r.err);
    test_run_free(&r);
    r = test_amsgd("knee --mus 0.5,0.9 --tau-max 256 --time 5 --replicas 50");
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    cr_assert_eq(r.err[0], 0, "a warning with both knees found: %s", r.err);
    test_run_free(&r);
}
