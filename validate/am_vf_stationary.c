/*
 * am_vf_stationary.c -- the check family stationary: the time-averaged error near v^1, extrapolated
 * to leading order in eta from runs at eta and 2 eta (2 m(eta) - m(2 eta)/2), against the OU
 * prediction E err = (eta/(2(1-mu))) sum_{i>=2} alpha_i1^2/(lambda_1 - lambda_i), with the error
 * bar of a time average from the integrated autocorrelation time (FFTW). The rows
 * stationary-delay do the same with a constant or uniform delay on bounded data, the delay
 * halved at 2 eta so that the mean lag s = tau_mean eta is the same in both runs, against the
 * delay's first-order correction (theory/am_delaycorr.h, docs/theory.md section 10),
 *   E err = (eta/(2(1-mu))) sum_{i>=2} alpha_i1^2/(lambda_1 - lambda_i) (1 + s (lambda_1 -
 * lambda_i)/(1-mu)), with the exact linear delayed recursion, extrapolated alike, bounding what it
 * neglects.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_delaycorr.h"
#include "../theory/am_theory.h"
#include "am_acf.h"

/* Time average of err over R stationary series (n samples at the steps k) with its error
 * bar sqrt(c(0) tau_int / (R n)) from the pooled autocorrelation (Sokal window c = 5). */
static am_status av_time_average(const am_problem *p, const am_msgd_params *mp, const uint64_t *k,
                                 size_t n, size_t R, int threads, double *rho, double *mean,
                                 double *sem, am_acf_tau *tau, size_t *diverged)
{
    size_t col = 0;
    am_ensemble_result *er = NULL;
    am_status st =
        am_vf_util_run_wrapped(p, mp, &col, 1, AM_VF_SERIES, 0, NULL, k, n, R, threads, &er);
    if (st) return st;
    *diverged = er->diverged;
    *mean = *sem = NAN;
    double var;
    if (!er->diverged && am_acf_pooled(er->summary, R, n, rho, n, NULL, &var) == AM_OK) {
        am_acf_tau_int(rho, n, R * n, 5.0, tau);
        double m = 0;
        for (size_t i = 0; i < R * n; i++)
            m += er->summary[i];
        *mean = m / (double)(R * n);
        *sem = sqrt(var * tau->tau_int / (double)(R * n));
    }
    am_ensemble_result_free(er);
    return AM_OK;
}

/* ---- the delayed rows ---------------------------------------------------------------------- */

/* A delayed row: momentum, bounded data, delay law and its parameter at eta (halved at 2 eta). */
typedef struct {
    double mu;
    am_dist_kind dist;
    am_delay_kind delay;
    unsigned param;
} av_dset;

/* Inside the paper's local condition with C = 1 (const:4, uniform:6 at mu = 0), and beyond it
   where the first-order correction is 17 % (mean lag 0.128 relaxation times of the slowest
   mode; the radial mode's critical delay is about 195 at eta/(1-mu) = 1e-3) */
static const av_dset av_dsets[4] = {
    {0.0, AM_DIST_RADEMACHER, AM_DELAY_CONST, 4},
    {0.0, AM_DIST_UNIFORM, AM_DELAY_UNIFORM, 6},
    {0.0, AM_DIST_RADEMACHER, AM_DELAY_CONST, 128},
    {0.9, AM_DIST_UNIFORM, AM_DELAY_UNIFORM, 256},
};

/* The law of a const:T or uniform:S delay as pmf[0..*n-1] (malloc'd; NULL on failure). */
static double *av_delay_pmf(am_delay_kind kind, unsigned param, size_t *n)
{
    *n = (size_t)param + 1;
    double *pmf = calloc(*n, sizeof *pmf);
    if (!pmf) return NULL;
    for (size_t j = 0; j < *n; j++)
        pmf[j] = kind == AM_DELAY_CONST ? (j == param) : 1.0 / (double)*n;
    return pmf;
}

/* The stationary error of the linear delayed recursion, sum_i gamma_0 over the modes i >= 2. */
static am_status av_linear_error(const am_problem *p, double eta, double mu, am_delay_kind kind,
                                 unsigned param, double *err)
{
    size_t n;
    double *pmf = av_delay_pmf(kind, param, &n), g[2];
    if (!pmf) return AM_ENOMEM;
    am_status st = AM_OK;
    *err = 0;
    for (size_t i = 1; i < p->dim && !st; i++) {
        double a = p->lambda[0] - p->lambda[i];
        double noise = eta * eta * am_theory_noise_variance(p, i, 0, NULL);
        st = am_delaycorr_linear_acov(mu, eta * a, noise, pmf, n, 2, g);
        *err += g[0];
    }
    free(pmf);
    return st;
}

/* Run j (0 or 1) of the extrapolation pair: step eta, then 2 eta, with independent seeds
 * (seed + j), from e_1. */
static am_msgd_params pair_params(double eta, double mu, uint64_t seed, int j)
{
    /* independent runs: seed + j */
    return am_vf_util_msgd(eta * (j ? 2 : 1), mu, seed + (uint64_t)j, 1, 0);
}

static am_status av_stationary_delay(const am_validate_check *c, const am_validate_opts *o,
                                     const av_dset *ds, const uint64_t *k, size_t n, size_t R,
                                     uint64_t burn, uint64_t s, double *rho, am_check_result *rows,
                                     size_t *nr)
{
    am_problem *p = am_vf_util_problem(ds->dist);
    if (!p) return AM_ENOMEM;
    double mu = ds->mu, eta = 1e-3 * (1 - mu);
    am_check_result *row = am_vf_util_row(rows, c->max_rows, nr, "stationary-delay");
    if (!row) {
        am_problem_free(p);
        return AM_EINVAL; /* max_rows of the table too small */
    }
    const char *law = ds->delay == AM_DELAY_CONST ? "const" : "uniform";
    double tmean = ds->delay == AM_DELAY_CONST ? ds->param : 0.5 * ds->param;
    double cd = am_problem_bound(p);
    double tloc = am_theory_tau_bound_local(p->lambda[0], cd, eta, mu, AM_THEORY_BOUND_GAMMA,
                                            AM_THEORY_BOUND_C);
    am_check_set_params(row,
                        "mu=%g dist=%s delay=%s:%u at eta=%g, %s:%u at 2 eta (mean lag %g), "
                        "start=e:1 burn=%llu steps n=%zu every %llu steps R=%zu; local "
                        "condition tau_local(C=" AM_THEORY_BOUND_C_STR
                        ",gamma=" AM_THEORY_BOUND_GAMMA_STR ")=%.3g, mean delay %.3g x that",
                        mu, am_problem_dist_name(ds->dist), law, ds->param, eta, law, ds->param / 2,
                        tmean * eta, (unsigned long long)burn, n, (unsigned long long)s, R, tloc,
                        tmean / tloc);
    double m[2], se[2];
    am_acf_tau tau[2];
    size_t div[2];
    am_status st = AM_OK;
    for (int j = 0; j < 2 && !st; j++) {
        am_msgd_params mp = pair_params(eta, mu, o->seed, j);
        st = am_delay_make(ds->delay, (double)(j ? ds->param / 2 : ds->param), &mp.delay);
        if (!st)
            st = av_time_average(p, &mp, k, n, R, o->threads, rho, &m[j], &se[j], &tau[j], &div[j]);
    }
    double lin[3] = {NAN, NAN, NAN};
    if (!st) st = av_linear_error(p, eta, mu, ds->delay, ds->param, &lin[0]);
    if (!st) st = av_linear_error(p, 2 * eta, mu, ds->delay, ds->param / 2, &lin[1]);
    if (!st) st = av_linear_error(p, eta, mu, AM_DELAY_NONE, 0, &lin[2]);
    if (st) {
        am_problem_free(p);
        return st;
    }
    row->replicas_used = (double)R;
    if (div[0] || div[1]) {
        am_check_add_note(row, "%zu replicas diverged", div[0] + div[1]);
        am_problem_free(p);
        return AM_OK;
    }
    row->measured = 2 * m[0] - 0.5 * m[1];
    row->measured_sem = sqrt(4 * se[0] * se[0] + 0.25 * se[1] * se[1]);
    double first = am_delaycorr_stationary_error(p, eta, mu, tmean);
    double ou = am_theory_stationary_error(p, eta, mu);
    /* the exact linear recursion extrapolated like the measurement: what the first-order
       formula neglects, the (s a/(1-mu))^2 terms and the discrete remainder */
    double exact = 2 * lin[0] - 0.5 * lin[1];
    double pred = o->undelayed ? ou : first; /* undelayed: the power run vs_undelayed */
    row->delayed = 1;
    row->predicted = am_vf_util_predict(o, pred, pred);
    am_check_decide_equiv(row, AM_VF_Z, 0, fabs(exact - first), c->margin * fabs(row->predicted));
    double x2 = am_delaycorr_x(p->lambda[0] - p->lambda[1], eta, mu, tmean);
    am_check_add_note(row,
                      "leading order 2 m(eta) - m(2 eta)/2; first-order factor %.4f over the "
                      "undelayed OU %.5g (x = s (l1-l2)/(1-mu) = %.3g for mode 2); exact linear "
                      "recursion, extrapolated alike, %.5g (factor %.4f; at eta alone %.4f); "
                      "measured over the undelayed OU %+.2f%%; raw m(eta) = %.5g +- %.2g, "
                      "m(2 eta) = %.5g +- %.2g; tau_int %.2f, %.2f samples",
                      first / ou, ou, x2, exact, exact / ou, lin[0] / lin[2],
                      100 * (row->measured / ou - 1), m[0], se[0], m[1], se[1], tau[0].tau_int,
                      tau[1].tau_int);
    if (!tau[0].window_found || !tau[1].window_found) {
        row->verdict = AM_CHECK_INCONCLUSIVE;
        am_check_add_note(row, "no Sokal window: series too short");
    }
    am_problem_free(p);
    return AM_OK;
}

am_status am_vf_stationary_run(const am_validate_check *c, const am_validate_opts *o,
                               am_check_result *rows, size_t *nrows)
{
    static const double mus[3] = {0, 0.5, 0.9};
    static const am_dist_kind dists[2] = {AM_DIST_GAUSSIAN, AM_DIST_RADEMACHER};
    int full = o->level == AM_VALIDATE_FULL;
    size_t n = full ? 2048 : 512, R = 256;
    /* eta/(1-mu) = 1e-3; slowest relaxation (1-mu)/(l_1-l_2) = 1000 steps; a sample every
       125 steps, burn-in 5 relaxation times (at 2 eta: 2.5 relaxation times, and the
       sampling interval is twice as long in t) */
    const uint64_t s = 125, burn = 5000;
    uint64_t *k = am_vf_util_steps(burn, s, n);
    double *rho = malloc(n * sizeof *rho);
    am_status st = k && rho ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    for (size_t id = 0; id < 2 && !st; id++) {
        am_problem *p = am_vf_util_problem(dists[id]);
        if (!p) {
            st = AM_ENOMEM;
            break;
        }
        for (size_t im = 0; im < 3 && !st; im++) {
            double mu = mus[im], eta = 1e-3 * (1 - mu);
            am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, "stationary");
            if (!row) {
                st = AM_EINVAL; /* max_rows of the table too small */
                break;
            }
            am_check_set_params(row,
                                "mu=%g dist=%s eta=%g and 2 eta, start=e:1 burn=%llu "
                                "steps n=%zu every %llu steps R=%zu",
                                mu, am_problem_dist_name(dists[id]), eta, (unsigned long long)burn,
                                n, (unsigned long long)s, R);
            double m[2], se[2];
            am_acf_tau tau[2];
            size_t div[2];
            for (int j = 0; j < 2 && !st; j++) {
                am_msgd_params mp = pair_params(eta, mu, o->seed, j);
                st = av_time_average(p, &mp, k, n, R, o->threads, rho, &m[j], &se[j], &tau[j],
                                     &div[j]);
            }
            if (st) break;
            row->replicas_used = (double)R;
            if (div[0] || div[1]) {
                am_check_add_note(row, "%zu replicas diverged", div[0] + div[1]);
                continue;
            }
            /* leading order in eta: m(eta) = A eta + B eta^2  =>  A eta = 2 m(eta) - m(2eta)/2 */
            row->measured = 2 * m[0] - 0.5 * m[1];
            row->measured_sem = sqrt(4 * se[0] * se[0] + 0.25 * se[1] * se[1]);
            double theory = am_theory_stationary_error(p, eta, mu);
            row->predicted = am_vf_util_predict(o, theory, theory);
            /* band: the claim's precision alone (the extrapolation leaves O(eta^2) relative) */
            am_check_decide_equiv(row, AM_VF_Z, 0, 0, c->margin * fabs(row->predicted));
            am_check_add_note(row,
                              "leading order 2 m(eta) - m(2 eta)/2; raw m(eta) = %.5g +- "
                              "%.2g (%+.2f%%), m(2 eta) = %.5g +- %.2g (%+.2f%% of 2x); "
                              "tau_int %.2f, %.2f samples",
                              m[0], se[0], 100 * (m[0] / row->predicted - 1), m[1], se[1],
                              100 * (m[1] / (2 * row->predicted) - 1), tau[0].tau_int,
                              tau[1].tau_int);
            if (!tau[0].window_found || !tau[1].window_found) {
                row->verdict = AM_CHECK_INCONCLUSIVE;
                am_check_add_note(row, "no Sokal window: series too short");
            }
        }
        am_problem_free(p);
    }
    for (size_t id = 0; id < sizeof av_dsets / sizeof av_dsets[0] && !st; id++)
        st = av_stationary_delay(c, o, &av_dsets[id], k, n, R, burn, s, rho, rows, &nr);
    free(k);
    free(rho);
    *nrows = nr;
    return st;
}
