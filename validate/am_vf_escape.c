/*
 * am_vf_escape.c -- the check family escape: quartiles of the first time h_1^2 >= delta^2 from e_2
 * against the first passage of the unstable OU U = h_1/sqrt(eta), dU = g U dt + sigma dB,  g = (l_1
 * - l_2)/(1-mu),  sigma = alpha_12/(1-mu), monitored at the same steps; order-statistic intervals
 * for both quantiles.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "../theory/am_theory.h"

/* Growth rate per unit time of the unstable heavy-ball mode x_{k+1} = (1+mu+h) x_k - mu x_{k-1}. */
static double av_growth_discrete(double mu, double h, double eta)
{
    double b = 1 + mu + h;
    return log(0.5 * (b + sqrt(b * b - 4 * mu))) / eta;
}

/* First-passage times of |U| >= D for the unstable OU dU = g U dt + sigma dB, U(0) = 0,
 * monitored every dt (exact Gaussian transition U' = e^{g dt} U + s Z,
 * s^2 = sigma^2 (e^{2 g dt} - 1)/(2 g)), up to nmax steps (+INFINITY if not reached). Replica r
 * uses the Philox stream (seed, r, AM_STREAM_OU_PASSAGE): the result is thread-independent. */
static void av_ou_first_passage(double g, double sigma, double D, double dt, size_t nmax, size_t R,
                                uint64_t seed, int threads, double *out)
{
    double a = exp(g * dt), sd = sigma * sqrt(expm1(2 * g * dt) / (2 * g));
#pragma omp parallel for schedule(static) num_threads(am_ensemble_threads(threads))
    for (size_t r = 0; r < R; r++) {
        am_rng rng;
        am_rng_init(&rng, seed, r, AM_STREAM_OU_PASSAGE, 0);
        double u = 0, t = INFINITY;
        for (size_t k = 1; k <= nmax; k++) {
            u = a * u + sd * am_rng_gaussian(&rng);
            if (fabs(u) >= D) {
                t = (double)k * dt;
                break;
            }
        }
        out[r] = t;
    }
}

am_status am_vf_escape_run(const am_validate_check *c, const am_validate_opts *o,
                           am_check_result *rows, size_t *nrows)
{
    static const double mus[2] = {0, 0.9};
    static const double qs[3] = {0.25, 0.5, 0.75};
    int full = o->level == AM_VALIDATE_FULL;
    size_t R = full ? 4000 : 2000, R_ou = 4 * R;
    const double delta = 0.2;
    am_problem *p = am_vf_util_problem(AM_DIST_GAUSSIAN);
    am_status st = p ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    double *x = malloc(R * sizeof *x), *y = malloc(R_ou * sizeof *y);
    if (!x || !y) st = AM_ENOMEM;
    for (size_t im = 0; im < 2 && !st; im++) {
        double mu = mus[im], eta = 1e-3 * (1 - mu);
        double g = (p->lambda[0] - p->lambda[1]) / (1 - mu);
        /* horizon: 1.5 x the 99.9 % escape time; every step is saved */
        double horizon = 1.5 * am_theory_escape_time(p, eta, mu, delta, 0.001, NULL);
        size_t n = (size_t)ceil(horizon / eta) + 1;
        uint64_t *k = malloc(n * sizeof *k);
        double *t = malloc(n * sizeof *t);
        if (!k || !t) {
            free(k);
            free(t);
            st = AM_ENOMEM;
            break;
        }
        for (size_t i = 0; i < n; i++) {
            k[i] = i;
            t[i] = (double)i * eta;
        }
        am_msgd_params mp = am_msgd_params_default();
        mp.eta = eta;
        mp.mu = mu;
        mp.seed = o->seed;
        mp.init.kind = AM_INIT_EIGEN;
        mp.init.j = 2;
        mp.coords = 1;
        size_t col = 2; /* h_1^2 */
        am_ensemble_result *er = NULL;
        st = am_vf_util_run_wrapped(p, &mp, &col, 1, AM_VF_FIRST_PASSAGE, delta * delta, t, k, n, R,
                                    o->threads, &er);
        free(k);
        free(t);
        if (st) break;
        size_t censored = 0;
        for (size_t r = 0; r < R; r++) {
            x[r] = er->summary[r];
            if (isnan(x[r])) x[r] = INFINITY; /* diverged: treated as not escaped */
            censored += isinf(x[r]);
        }
        double gd = av_growth_discrete(mu, eta * (p->lambda[0] - p->lambda[1]), eta);
        /* the unstable-OU prediction: first passage of U = h_1 / sqrt(eta) through
           delta / sqrt(eta), sigma = alpha_12 / (1-mu), monitored at the same steps */
        double sigma = sqrt(am_theory_noise_variance(p, 0, 1, NULL)) / (1 - mu);
        av_ou_first_passage(g, sigma, delta / sqrt(eta), eta, n - 1, R_ou, o->seed, o->threads, y);
        size_t ou_censored = 0;
        for (size_t r = 0; r < R_ou; r++)
            ou_censored += isinf(y[r]);
        for (size_t iq = 0; iq < 3; iq++) {
            am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, "escape");
            if (!row) {
                st = AM_EINVAL; /* max_rows of the table too small */
                break;
            }
            am_check_set_params(row, "q=%g mu=%g eta=%g delta=%g start=e:2 R=%zu OU paths=%zu",
                                qs[iq], mu, eta, delta, R, R_ou);
            row->replicas_used = (double)R;
            am_check_interval ci, cp;
            if (am_check_quantile(x, R, qs[iq], am_vf_util_level(), &ci) != AM_OK ||
                am_check_quantile(y, R_ou, qs[iq], am_vf_util_level(), &cp) != AM_OK)
                continue;
            row->measured = ci.estimate;
            /* the order-statistic intervals at z = 4, expressed as equivalent sems */
            row->measured_sem = (ci.hi - ci.lo) / (2 * AM_VF_Z);
            row->predicted = am_vf_util_predict(o, cp.estimate, cp.estimate);
            row->predicted_sem = fabs(o->predict_scale) * (cp.hi - cp.lo) / (2 * AM_VF_Z);
            /* neglected: saturation of the drift (1 - h_1^2) up to h_1^2 = delta^2, and the
               discrete growth rate (relative |g_d - g| / g on the escape time) */
            double em = -log(1 - delta * delta) / (2 * g) + cp.estimate * fabs(gd - g) / g;
            am_check_decide_equiv(row, AM_VF_Z, 0, em, c->margin * fabs(row->predicted));
            double t1 = am_theory_escape_time(p, eta, mu, delta, 1 - qs[iq], NULL);
            am_check_add_note(row,
                              "interval [%.4g, %.4g]; %zu + %zu censored; closed-form T1 "
                              "(fixed-time law) %.4g, OU first passage %+.1f%% from it, "
                              "measured %+.1f%%",
                              ci.lo, ci.hi, censored, ou_censored, t1, 100 * (cp.estimate / t1 - 1),
                              100 * (ci.estimate / t1 - 1));
        }
        am_ensemble_result_free(er);
    }
    free(x);
    free(y);
    am_problem_free(p);
    *nrows = nr;
    return st;
}
