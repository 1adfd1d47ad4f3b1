/*
 * am_vf_relaxation.c -- the check family relaxation: the autocorrelation of h_i near v^1 decays as
 *   corr(h_i(t), h_i(t+s)) = exp(-(lambda_1 - lambda_i) s/(1-mu)),
 * the relaxation time measured by an exponential fit to the pooled autocorrelation with a
 * bootstrap over replicas; model error: the discrete heavy-ball chain's own relaxation time.
 * The rows relaxation-delay do the same with a constant or uniform delay on bounded data against
 * the delay's first-order correction (1-mu)/(lambda_1-lambda_i) (1 - x),
 * x = tau_mean eta (lambda_1-lambda_i)/(1-mu) (theory/am_delaycorr.h), the exact slow root of the
 * linear delayed chain bounding what it neglects.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_delaycorr.h"
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

/* A setting: momentum, data, delay law and parameter (none for the undelayed rows). */
typedef struct {
    double mu;
    am_dist_kind dist;
    am_delay_kind delay;
    unsigned param;
} av_rset;

/* The undelayed rows, then relaxation-delay: mean delay 80 at eta/(1-mu) = 1e-3, x = 0.08,
   0.16, 0.24 for modes 2, 3, 4 (real slow roots: x < 1/e), constant on rademacher data
   (mu = 0) and uniform{0..160} on uniform data (mu = 0.5) */
static const av_rset av_rsets[4] = {
    {0.0, AM_DIST_GAUSSIAN, AM_DELAY_NONE, 0},
    {0.9, AM_DIST_GAUSSIAN, AM_DELAY_NONE, 0},
    {0.0, AM_DIST_RADEMACHER, AM_DELAY_CONST, 80},
    {0.5, AM_DIST_UNIFORM, AM_DELAY_UNIFORM, 160},
};

am_status am_vf_relaxation_run(const am_validate_check *c, const am_validate_opts *o,
                               am_check_result *rows, size_t *nrows)
{
    int full = o->level == AM_VALIDATE_FULL;
    size_t n = full ? 4096 : 1024, nboot = 200;
    /* eta/(1-mu) = 1e-3; fastest mode relaxes in (1-mu)/3 = 333 steps: sample every 42
       steps (8 samples per fastest relaxation time); burn-in 5000 steps */
    const uint64_t s = 42, burn = 5000;
    uint64_t *k = am_vf_util_steps(burn, s, n);
    double *rho = malloc(n * sizeof *rho);
    am_status st = k && rho ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    for (size_t is = 0; is < sizeof av_rsets / sizeof av_rsets[0] && !st; is++) {
        const av_rset *rs = &av_rsets[is];
        int delayed = rs->delay != AM_DELAY_NONE;
        /* full: the delayed sets twice the replicas, so that a prediction 20 % off FAILs on
           both sides (the power columns; mode 4's interval 0.0051 wide at 256 was too wide) */
        size_t R = full ? (delayed ? 512 : 256) : 128;
        am_problem *p = am_vf_util_problem(rs->dist);
        if (!p) {
            st = AM_ENOMEM;
            break;
        }
        double mu = rs->mu, eta = 1e-3 * (1 - mu);
        am_msgd_params mp = am_vf_util_msgd(eta, mu, o->seed, 1, 2);
        st = am_delay_make(rs->delay, (double)rs->param, &mp.delay);
        size_t npmf = (size_t)rs->param + 1;
        double *pmf = calloc(npmf, sizeof *pmf);
        if (!pmf) st = AM_ENOMEM;
        for (size_t j = 0; pmf && j < npmf; j++)
            pmf[j] = rs->delay == AM_DELAY_UNIFORM ? 1.0 / (double)npmf : (j == rs->param);
        double tmean = st ? NAN : am_delaycorr_mean(pmf, npmf);
        double tloc = am_theory_tau_bound_local(p->lambda[0], am_problem_bound(p), eta, mu,
                                                AM_THEORY_BOUND_GAMMA, AM_THEORY_BOUND_C);
        size_t cols[3] = {3, 4, 5}; /* h_2, h_3, h_4 */
        am_ensemble_result *er = NULL;
        if (!st)
            st = am_vf_util_run_wrapped(p, &mp, cols, 3, AM_VF_SERIES, 0, NULL, k, n, R, o->threads,
                                        &er);
        double *rec = st ? NULL : malloc(R * n * sizeof *rec);
        if (!st && !rec) st = AM_ENOMEM;
        for (size_t i = 1; i < 4 && !st; i++) {
            am_check_result *row =
                am_vf_util_row(rows, c->max_rows, &nr, delayed ? "relaxation-delay" : "relaxation");
            if (!row) {
                st = AM_EINVAL; /* max_rows of the table too small */
                break;
            }
            if (!delayed)
                am_check_set_params(row,
                                    "mu=%g i=%zu eta=%g start=e:1 burn=%llu steps n=%zu every "
                                    "%llu steps R=%zu",
                                    mu, i + 1, eta, (unsigned long long)burn, n,
                                    (unsigned long long)s, R);
            else
                am_check_set_params(row,
                                    "mu=%g i=%zu dist=%s delay=%s:%u (mean %g) eta=%g start=e:1 "
                                    "burn=%llu steps n=%zu every %llu steps R=%zu; local "
                                    "condition tau_local(C=" AM_THEORY_BOUND_C_STR
                                    ",gamma=" AM_THEORY_BOUND_GAMMA_STR ")=%.3g, mean delay "
                                    "%.3g x that",
                                    mu, i + 1, am_problem_dist_name(rs->dist),
                                    rs->delay == AM_DELAY_CONST ? "const" : "uniform", rs->param,
                                    tmean, eta, (unsigned long long)burn, n, (unsigned long long)s,
                                    R, tloc, tmean / tloc);
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
            double a = p->lambda[0] - p->lambda[i];
            if (!delayed) {
                double theory = am_theory_relaxation_time(p, mu, i);
                row->predicted = am_vf_util_predict(o, theory, theory);
                double disc = av_relax_discrete(mu, eta * a, eta);
                /* band: the discrete chain's own relaxation time (an O(eta) correction) +
                   margin */
                am_check_decide_equiv(row, AM_VF_Z, 0, fabs(disc - theory),
                                      c->margin * fabs(row->predicted));
                am_check_add_note(row,
                                  "bootstrap over replicas (B = %zu, %zu rejected); %.1f lags; "
                                  "discrete-chain value %.5g",
                                  nboot, ci.n_rejected, ci.estimate / ctx.dt, disc);
                continue;
            }
            /* the delay's first-order correction T0 (1 - x), x = tau_mean eta a/(1-mu); band:
               the exact slow root of the linear delayed chain (the x^2 terms and the discrete
               O(eta) shift) + margin */
            double t0 = am_theory_relaxation_time(p, mu, i);
            double first = am_delaycorr_relaxation_time(p, mu, i, eta, tmean);
            double x = am_delaycorr_x(a, eta, mu, tmean), z = NAN;
            double exact =
                am_delaycorr_linear_root(mu, eta * a, pmf, npmf, &z) == AM_OK ? -eta / log(z) : NAN;
            double pred = o->undelayed ? t0 : first; /* the power run vs_undelayed */
            row->delayed = 1;
            row->predicted = am_vf_util_predict(o, pred, pred);
            am_check_decide_equiv(row, AM_VF_Z, 0, fabs(exact - first),
                                  c->margin * fabs(row->predicted));
            am_check_add_note(row,
                              "bootstrap over replicas (B = %zu, %zu rejected); %.1f lags; x = "
                              "%.3g: first order %.5g = %.4f x the undelayed %.5g; exact slow "
                              "root of the linear delayed chain %.5g (%.4f x), constant-lag "
                              "delay-OU %.4f x; measured %.4f x the undelayed",
                              nboot, ci.n_rejected, ci.estimate / ctx.dt, x, first, first / t0, t0,
                              exact, exact / t0, 1 / am_delaycorr_dde_rate_factor(x),
                              ci.estimate / t0);
        }
        free(rec);
        free(pmf);
        am_ensemble_result_free(er);
        am_problem_free(p);
    }
    free(k);
    free(rho);
    *nrows = nr;
    return st;
}
