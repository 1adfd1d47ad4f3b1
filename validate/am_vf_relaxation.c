/*
 * am_vf_relaxation.c -- the check family relaxation: the autocorrelation of h_i near v^1 decays as
 *   corr(h_i(t), h_i(t+s)) = exp(-(lambda_1 - lambda_i) s/(1-mu)),
 * the relaxation time measured by an exponential fit to the pooled autocorrelation with a
 * bootstrap over replicas; model error: the discrete heavy-ball chain's own relaxation time.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_theory.h"
#include "am_acf.h"

typedef struct {
    size_t n;    /* series length */
    double *rho; /* [n] workspace (one per call: the bootstrap runs serially) */
    double dt;   /* time between samples */
} av_relax_ctx;

/* Statistic: pooled known-mean (0) autocorrelation of the records, exponential fit with the
   n/(n-k) correction, relaxation time in continuous time. */
static double av_relax_stat(const double *x, size_t nrec, size_t dim, void *vctx)
{
    av_relax_ctx *c = vctx;
    double var;
    if (am_acf_pooled_known_mean(x, nrec, dim, 0.0, c->rho, dim, &var) != AM_OK) return NAN;
    am_acf_exp fit;
    if (am_acf_fit_exp(c->rho, dim, dim, 0.2, &fit) != AM_OK) return NAN;
    return fit.tau_exp * c->dt;
}

/* Relaxation time of the linear heavy-ball recursion x_{k+1} = (1+mu-h) x_k - mu x_{k-1}
 * in continuous time: -eta / log z, z its slowest root (real for small h). */
static double av_relax_discrete(double mu, double h, double eta)
{
    double b = 1 + mu - h, disc = b * b - 4 * mu;
    if (disc < 0) return NAN;
    return -eta / log(0.5 * (b + sqrt(disc)));
}

am_status am_vf_relaxation_run(const am_validate_check *c, const am_validate_opts *o,
                               am_check_result *rows, size_t *nrows)
{
    static const double mus[2] = {0, 0.9};
    int full = o->level == AM_VALIDATE_FULL;
    size_t n = full ? 4096 : 1024, R = full ? 256 : 128, nboot = 200;
    /* eta/(1-mu) = 1e-3; fastest mode relaxes in (1-mu)/3 = 333 steps: sample every 42
       steps (8 samples per fastest relaxation time); burn-in 5000 steps */
    const uint64_t s = 42, burn = 5000;
    uint64_t *k = am_vf_util_steps(burn, s, n);
    double *rho = malloc(n * sizeof *rho);
    am_problem *p = am_vf_util_problem(AM_DIST_GAUSSIAN);
    am_status st = k && rho && p ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    for (size_t im = 0; im < 2 && !st; im++) {
        double mu = mus[im], eta = 1e-3 * (1 - mu);
        am_msgd_params mp = am_msgd_params_default();
        mp.eta = eta;
        mp.mu = mu;
        mp.seed = o->seed;
        mp.init.kind = AM_INIT_EIGEN;
        mp.init.j = 1;
        mp.coords = 1;
        mp.coords_signed = 1;
        size_t cols[3] = {3, 4, 5}; /* h_2, h_3, h_4 */
        am_ensemble_result *er = NULL;
        st = am_vf_util_run_wrapped(p, &mp, cols, 3, AM_VF_SERIES, 0, NULL, k, n, R, o->threads,
                                    &er);
        if (st) break;
        double *rec = malloc(R * n * sizeof *rec);
        if (!rec) {
            am_ensemble_result_free(er);
            st = AM_ENOMEM;
            break;
        }
        for (size_t i = 1; i < 4; i++) {
            am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, "relaxation");
            if (!row) {
                st = AM_EINVAL; /* max_rows of the table too small */
                break;
            }
            am_check_set_params(row,
                                "mu=%g i=%zu eta=%g start=e:1 burn=%llu steps n=%zu every "
                                "%llu steps R=%zu",
                                mu, i + 1, eta, (unsigned long long)burn, n, (unsigned long long)s,
                                R);
            row->replicas_used = (double)R;
            if (er->diverged) {
                am_check_add_note(row, "%zu replicas diverged", er->diverged);
                continue;
            }
            for (size_t r = 0; r < R; r++)
                memcpy(rec + r * n, er->summary + r * 3 * n + (i - 1) * n, n * sizeof *rec);
            av_relax_ctx ctx = {n, rho, (double)s * eta};
            am_check_interval ci;
            am_status bs =
                am_check_bootstrap(rec, R, n, av_relax_stat, &ctx, nboot, 0.95, o->seed, &ci);
            if (bs != AM_OK || !isfinite(ci.estimate)) {
                am_check_add_note(row, "autocorrelation fit failed");
                continue;
            }
            row->measured = ci.estimate;
            row->measured_sem = ci.se;
            double theory = am_theory_relaxation_time(p, mu, i);
            row->predicted = am_vf_util_predict(o, theory, theory);
            double a = p->lambda[0] - p->lambda[i];
            double disc = av_relax_discrete(mu, eta * a, eta);
            /* band: the discrete chain's own relaxation time (an O(eta) correction) + margin */
            am_check_decide_equiv(row, AM_VF_Z, 0, fabs(disc - theory),
                                  c->margin * fabs(row->predicted));
            am_check_add_note(row,
                              "bootstrap over replicas (B = %zu, %zu rejected); %.1f lags; "
                              "discrete-chain value %.5g",
                              nboot, ci.n_rejected, ci.estimate / ctx.dt, disc);
        }
        free(rec);
        am_ensemble_result_free(er);
    }
    am_problem_free(p);
    free(k);
    free(rho);
    *nrows = nr;
    return st;
}
