/*
 * am_vf_sde.c -- the check family sde: the discrete ensemble and the global SDE (solvers/am_sde.h)
 * have the same mean error on the grid, E err_MC(t) = E err_SDE(t), decided at the worst time of
 * the grid with a Bonferroni level and the heavy-ball start-up lag as model error. The rows
 * sde-delay run a constant or uniform delay on bounded data against the SDE plus the delay's
 * deterministic effect, the delay-differential limit at the mean lag minus the ODE.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "../core/am_grid.h"
#include "../solvers/am_dde.h"
#include "../solvers/am_sde.h"
#include "../theory/am_theory.h"

/* A row's setting: momentum, data, delay law and its parameter (none for the undelayed rows). */
typedef struct {
    double mu;
    am_dist_kind dist;
    am_delay_kind delay;
    unsigned param;
} sde_set;

/* One setting's curves on the grid: the lagged times tk, the ensemble's mean error mm with its
 * sem ms, the prediction sm (the SDE plus the delay's deterministic effect) with its sem ss,
 * the largest gap of the mean to the lagged deterministic limit (ode_gap) and the largest
 * delay effect (delay_gap), and the start-up lag, L steps or lag in t. */
typedef struct {
    double *tk, *mm, *ms, *sm, *ss;
    double ode_gap, delay_gap, lag;
    uint64_t L;
} sde_curves;

/* The parameters of a row (with a delay, also the local condition of the delay bound). */
static void sde_row_params(am_check_result *row, const sde_set *set, const am_problem *p, double mu,
                           double eta, double tmean, size_t ngrid, size_t R)
{
    double tloc = am_theory_tau_bound_local(p->lambda[0], am_problem_bound(p), eta, mu,
                                            AM_THEORY_BOUND_GAMMA, AM_THEORY_BOUND_C);
    if (set->delay == AM_DELAY_NONE)
        am_check_set_params(row, "mu=%g eta=%g dt=eta T=%g grid=%zu init=random R=%zu", mu, eta,
                            2 * (1 - mu), ngrid, R);
    else
        am_check_set_params(row,
                            "mu=%g dist=%s delay=%s:%u (mean lag %g) eta=%g dt=eta T=%g "
                            "grid=%zu init=random R=%zu; local condition "
                            "tau_local(C=" AM_THEORY_BOUND_C_STR ",gamma=" AM_THEORY_BOUND_GAMMA_STR
                            ")=%.3g, mean delay %.3g x that",
                            mu, am_problem_dist_name(set->dist),
                            set->delay == AM_DELAY_CONST ? "const" : "uniform", set->param,
                            tmean * eta, eta, 2 * (1 - mu), ngrid, R, tloc, tmean / tloc);
}

/* The delay's deterministic effect at the lagged times of the steps k (L steps of lag), into
 * dd: the delay-differential limit at the mean lag tmean eta (solvers/am_dde.h) minus the ODE
 * from h0. */
static am_status sde_delay_effect(const am_problem *p, double mu, double eta, double tmean,
                                  const double *v0, const double *h0, const uint64_t *k, uint64_t L,
                                  size_t ngrid, double *dd)
{
    am_status st = AM_OK;
    double *tmp = malloc(2 * ngrid * sizeof *tmp);
    am_dde_params dp = am_dde_params_default();
    am_dde *dde = tmp ? am_dde_alloc(p, &dp, &st, NULL, 0) : NULL;
    if (!tmp) st = AM_ENOMEM;
    if (dde) {
        for (size_t g = 0; g < ngrid; g++)
            tmp[g] = (double)(k[g] >= L ? k[g] - L : 0) * eta;
        am_ode_output out = {dd, tmp + ngrid, NULL, NULL};
        st = am_dde_solve(dde, mu, tmean * eta, v0, tmp, ngrid, &out, NULL, NULL, 0);
        for (size_t g = 0; g < ngrid && !st; g++)
            dd[g] -= am_theory_ode_error(p, mu, h0, tmp[g]);
    }
    am_dde_free(dde);
    free(tmp);
    return st;
}

/* The curves of one setting (mp; delayed: with a delay of mean tmean steps): the ensemble on the
 * grid of ngrid times up to T = 2 (1 - mu), the lagged deterministic limit and the SDE. */
static am_status sde_curves_run(const am_problem *p, const am_msgd_params *mp, int delayed,
                                double tmean, size_t ngrid, const am_ensemble_params *ep,
                                sde_curves *cv)
{
    const double eta = mp->eta, mu = mp->mu;
    am_status st = AM_OK;
    double *v0 = malloc(p->dim * sizeof *v0), *h0 = malloc(p->dim * sizeof *h0);
    double *dd = calloc(ngrid, sizeof *dd);
    uint64_t *k = malloc(ngrid * sizeof *k);
    am_msgd *m = am_msgd_alloc(p, mp, &st, NULL, 0);
    am_ensemble_result *er = NULL;
    if (m && (!v0 || !h0 || !dd || !k)) st = AM_ENOMEM;
    if (!st) {
        am_msgd_initial(m, 0, v0);
        for (size_t j = 0; j < p->dim; j++)
            h0[j] = v0[j]; /* standard eigenbasis */
        am_grid grid = {ngrid, 2 * (1 - mu)};
        st = am_grid_steps(&grid, eta, k);
    }
    if (!st) st = am_ensemble_run(am_msgd_model(m), k, ngrid, ep, &er);
    /* The heavy-ball chain started at rest lags the momentum-rescaled flow by mu/(1-mu)
       steps (velocity eta f (1 - mu^(k+1))/(1-mu)); the SDE and the ODE have no such lag.
       Both are therefore compared at the lagged time t - lag, lag = L eta, L = mu/(1-mu)
       (an integer for mu = 0, 0.5, 0.9, so t - lag is on the step grid). */
    cv->L = (uint64_t)floor(mu / (1 - mu) + 0.5);
    cv->lag = (double)cv->L * eta;
    cv->ode_gap = 0;
    cv->delay_gap = 0;
    /* with a delay, the delay's deterministic effect, the delay-differential limit at the
       mean lag minus the ODE (solvers/am_dde.h), is added to the SDE (first order in eta and
       in the lag: theory.md section 10) */
    if (!st && delayed) st = sde_delay_effect(p, mu, eta, tmean, v0, h0, k, cv->L, ngrid, dd);
    if (!st) {
        for (size_t g = 0; g < ngrid; g++) {
            cv->tk[g] = (double)(k[g] >= cv->L ? k[g] - cv->L : 0) * eta;
            cv->mm[g] = er->alive[g] ? er->obs[g * er->nobs].mean : NAN;
            cv->ms[g] = am_stats_sem(&er->obs[g * er->nobs]);
            /* the gap to the lagged deterministic limit (the ODE, or the DDE with a delay) */
            cv->ode_gap = fmax(cv->ode_gap,
                               fabs(cv->mm[g] - am_theory_ode_error(p, mu, h0, cv->tk[g]) - dd[g]));
            cv->delay_gap = fmax(cv->delay_gap, fabs(dd[g]));
        }
        st = am_sde_pca_global_error(p, mp->eta, mp->mu, mp->seed, mp->blowup, v0, cv->tk, ngrid,
                                     ep, cv->sm, cv->ss);
        for (size_t g = 0; g < ngrid && !st; g++)
            cv->sm[g] += dd[g];
    }
    free(dd);
    am_ensemble_result_free(er);
    am_msgd_free(m);
    free(v0);
    free(h0);
    free(k);
    return st;
}

/* The row's verdict on the curves: Bonferroni over the ngrid - 1 compared times at the family
 * level of z = AM_VF_Z; the row is the time whose interval reaches farthest from 0. */
static void sde_decide(am_check_result *row, const am_validate_check *c, const am_validate_opts *o,
                       const sde_curves *cv, size_t ngrid, size_t R, int delayed)
{
    double zb = gsl_cdf_ugaussian_Qinv(gsl_cdf_ugaussian_Q(AM_VF_Z) / (double)(ngrid - 1));
    double worst = -INFINITY, gap = NAN, sem = NAN, zmax = 0;
    for (size_t g = 1; g < ngrid; g++) {
        double d = fabs(cv->mm[g] - cv->sm[g]), sg = hypot(cv->ms[g], cv->ss[g]);
        if (!(sg > 0)) continue;
        zmax = fmax(zmax, d / sg);
        if (d + zb * sg > worst) {
            worst = d + zb * sg;
            gap = d;
            sem = sg;
        }
    }
    row->measured = gap;
    row->measured_sem = sem;
    row->predicted = am_vf_util_predict(o, 0.0, cv->ode_gap);
    row->replicas_used = (double)R;
    /* band: the claim's precision, a fraction of the gap to the (lagged) ODE, the O(eta)
       noise term the SDE is meant to carry */
    am_check_decide_equiv(row, zb, 0, 0, c->margin * cv->ode_gap);
    am_check_add_note(row,
                      "worst time of %zu (Bonferroni z = %.2f); largest |z| = %.2f; "
                      "SDE and ODE at t - lag, start-up lag %.3g in t (%llu steps); gap to "
                      "the lagged ODE at this eta %.4g",
                      ngrid - 1, zb, zmax, cv->lag, (unsigned long long)cv->L, cv->ode_gap);
    if (delayed)
        am_check_add_note(row,
                          "prediction SDE + (DDE at the mean lag - ODE); the gap above is "
                          "to the lagged DDE; largest delay correction |DDE - ODE| %.4g",
                          cv->delay_gap);
}

am_status am_vf_sde_run(const am_validate_check *c, const am_validate_opts *o,
                        am_check_result *rows, size_t *nrows)
{
    int full = o->level == AM_VALIDATE_FULL;
    size_t R = full ? 40000 : 10000, ngrid = 41;
    /* the undelayed rows, then sde-delay: mean lag s = 0.08 (1-mu), i.e. a mean delay of 40
       steps at --quick (eta/(1-mu) = 2e-3) and 160 in full (5e-4), constant on rademacher data
       and uniform on uniform data (radial mode: 2 lambda_1 s/(1-mu) = 0.64 < pi/2) */
    unsigned tq = full ? 160 : 40;
    const sde_set sets[5] = {
        {0.0, AM_DIST_GAUSSIAN, AM_DELAY_NONE, 0},
        {0.5, AM_DIST_GAUSSIAN, AM_DELAY_NONE, 0},
        {0.9, AM_DIST_GAUSSIAN, AM_DELAY_NONE, 0},
        {0.0, AM_DIST_RADEMACHER, AM_DELAY_CONST, tq},
        {0.9, AM_DIST_UNIFORM, AM_DELAY_UNIFORM, 2 * tq},
    };
    am_problem *p = NULL;
    sde_curves cv = {0};
    cv.tk = malloc(ngrid * sizeof *cv.tk);
    cv.mm = malloc(ngrid * sizeof *cv.mm);
    cv.ms = malloc(ngrid * sizeof *cv.ms);
    cv.sm = malloc(ngrid * sizeof *cv.sm);
    cv.ss = malloc(ngrid * sizeof *cv.ss);
    am_status st = cv.tk && cv.mm && cv.ms && cv.sm && cv.ss ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    for (size_t im = 0; im < 5 && !st; im++) {
        const sde_set *set = &sets[im];
        double mu = set->mu, eta = (full ? 5e-4 : 2e-3) * (1 - mu);
        int delayed = set->delay != AM_DELAY_NONE;
        double tmean = set->delay == AM_DELAY_CONST ? set->param : 0.5 * set->param;
        am_problem_free(p);
        p = am_vf_util_problem(set->dist);
        if (!p) {
            st = AM_ENOMEM;
            break;
        }
        am_check_result *row =
            am_vf_util_row(rows, c->max_rows, &nr, delayed ? "sde-delay" : "sde");
        if (!row) {
            st = AM_EINVAL; /* max_rows of the table too small */
            break;
        }
        sde_row_params(row, set, p, mu, eta, tmean, ngrid, R);
        am_msgd_params mp = am_vf_util_msgd(eta, mu, o->seed, 0, 0);
        st = am_delay_make(set->delay, (double)set->param, &mp.delay);
        if (st) break;
        am_ensemble_params ep = {R, o->threads, 0};
        st = sde_curves_run(p, &mp, delayed, tmean, ngrid, &ep, &cv);
        if (st) break;
        sde_decide(row, c, o, &cv, ngrid, R, delayed);
    }
    free(cv.tk);
    free(cv.mm);
    free(cv.ms);
    free(cv.sm);
    free(cv.ss);
    am_problem_free(p);
    *nrows = nr;
    return st;
}
