/*
 * am_vf_sde.c -- the check family sde: the discrete ensemble and the global SDE (solvers/am_sde.h)
 * have the same mean error on the grid, E err_MC(t) = E err_SDE(t), decided at the worst time of
 * the grid with a Bonferroni level and the heavy-ball start-up lag as model error.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "../core/am_grid.h"
#include "../solvers/am_sde.h"
#include "../theory/am_theory.h"

am_status am_vf_sde_run(const am_validate_check *c, const am_validate_opts *o,
                        am_check_result *rows, size_t *nrows)
{
    static const double mus[3] = {0, 0.5, 0.9};
    int full = o->level == AM_VALIDATE_FULL;
    size_t R = full ? 40000 : 10000, ngrid = 41;
    am_problem *p = am_vf_util_problem(AM_DIST_GAUSSIAN);
    double *sm = malloc(ngrid * sizeof *sm), *ss = malloc(ngrid * sizeof *ss);
    am_status st = p && sm && ss ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    for (size_t im = 0; im < 3 && !st; im++) {
        double mu = mus[im], eta = (full ? 5e-4 : 2e-3) * (1 - mu);
        am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, "sde");
        if (!row) {
            st = AM_EINVAL; /* max_rows of the table too small */
            break;
        }
        am_check_set_params(row, "mu=%g eta=%g dt=eta T=%g grid=%zu init=random R=%zu", mu, eta,
                            2 * (1 - mu), ngrid, R);
        am_msgd_params mp = am_msgd_params_default();
        mp.eta = eta;
        mp.mu = mu;
        mp.seed = o->seed;
        am_ensemble_params ep = {R, o->threads, 0};
        double *v0 = malloc(p->dim * sizeof *v0), *h0 = malloc(p->dim * sizeof *h0);
        uint64_t *k = malloc(ngrid * sizeof *k);
        double *tk = malloc(ngrid * sizeof *tk), *mm = malloc(ngrid * sizeof *mm),
               *ms = malloc(ngrid * sizeof *ms);
        am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0);
        am_ensemble_result *er = NULL;
        if (m && (!v0 || !h0 || !k || !tk || !mm || !ms)) st = AM_ENOMEM;
        if (!st) {
            am_msgd_initial(m, 0, v0);
            for (size_t j = 0; j < p->dim; j++)
                h0[j] = v0[j]; /* standard eigenbasis */
            am_grid grid = {ngrid, 2 * (1 - mu)};
            st = am_grid_steps(&grid, eta, k);
        }
        if (!st) st = am_ensemble_run(am_msgd_model(m), k, ngrid, &ep, &er);
        /* The heavy-ball chain started at rest lags the momentum-rescaled flow by mu/(1-mu)
           steps (velocity eta f (1 - mu^(k+1))/(1-mu)); the SDE and the ODE have no such lag.
           Both are therefore compared at the lagged time t - lag, lag = L eta, L = mu/(1-mu)
           (an integer for mu = 0, 0.5, 0.9, so t - lag is on the step grid). */
        uint64_t L = (uint64_t)floor(mu / (1 - mu) + 0.5);
        double lag = (double)L * eta;
        double ode_gap = 0;
        if (!st) {
            for (size_t g = 0; g < ngrid; g++) {
                tk[g] = (double)(k[g] >= L ? k[g] - L : 0) * eta;
                mm[g] = er->alive[g] ? er->obs[g * er->nobs].mean : NAN;
                ms[g] = am_stats_sem(&er->obs[g * er->nobs]);
                ode_gap = fmax(ode_gap, fabs(mm[g] - am_theory_ode_error(p, mu, h0, tk[g])));
            }
            st = am_sde_pca_global_error(p, mp.eta, mp.mu, mp.seed, mp.blowup, v0, tk, ngrid, &ep,
                                         sm, ss);
        }
        am_ensemble_result_free(er);
        am_msgd_free(m);
        free(v0);
        free(k);
        if (st) {
            free(h0);
            free(tk);
            free(mm);
            free(ms);
            break;
        }
        /* Bonferroni over the ngrid - 1 compared times at the family level of z = AM_VF_Z; the
           row is the time whose interval reaches farthest from 0 */
        double zb = gsl_cdf_ugaussian_Qinv(gsl_cdf_ugaussian_Q(AM_VF_Z) / (double)(ngrid - 1));
        double worst = -INFINITY, gap = NAN, sem = NAN, zmax = 0;
        for (size_t g = 1; g < ngrid; g++) {
            double d = fabs(mm[g] - sm[g]), sg = hypot(ms[g], ss[g]);
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
        row->predicted = am_vf_util_predict(o, 0.0, ode_gap);
        row->replicas_used = (double)R;
        /* band: the claim's precision, a fraction of the gap to the (lagged) ODE, the O(eta)
           noise term the SDE is meant to carry */
        am_check_decide_equiv(row, zb, 0, 0, c->margin * ode_gap);
        am_check_add_note(row,
                          "worst time of %zu (Bonferroni z = %.2f); largest |z| = %.2f; "
                          "SDE and ODE at t - lag, start-up lag %.3g in t (%llu steps); gap to "
                          "the lagged ODE at this eta %.4g",
                          ngrid - 1, zb, zmax, lag, (unsigned long long)L, ode_gap);
        free(h0);
        free(tk);
        free(mm);
        free(ms);
    }
    free(sm);
    free(ss);
    am_problem_free(p);
    *nrows = nr;
    return st;
}
