/*
 * am_vf_ode_order.c -- the check family ode-order: the weak error of the Async-MSGD ensemble
 * against the ODE limit (theory.md section 2) over a ladder of step sizes at fixed effective step
 * eta/(1-mu), e(eta) = max_t |E err_eta(t) - err_ODE(t)| ~ C eta^1   (am_converge.h), with Gaussian
 * data (the fitted order, WLS) and noise-free data (the finest local slope with a Richardson bound
 * on its remaining bias), without delay and with the constant delay 8.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_theory.h"
#include "am_converge.h"

am_status am_vf_ode_order_run(const am_validate_check *c, const am_validate_opts *o,
                              am_check_result *rows, size_t *nrows)
{
    static const double mus[3] = {0, 0.5, 0.9};
    static const double base_q[4] = {4e-3, 2e-3, 1e-3, 5e-4};
    static const double base_f[5] = {4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4};
    int full = o->level == AM_VALIDATE_FULL;
    size_t neta = full ? 5 : 4;
    const double *base = full ? base_f : base_q;
    size_t R = full ? 20000 : 2000;
    const double tau_delay = 8;
    am_problem *pg = am_vf_util_problem(AM_DIST_GAUSSIAN),
               *pe = am_vf_util_problem(AM_DIST_EXPECTED);
    am_status st = pg && pe ? AM_OK : AM_ENOMEM;
    size_t nr = 0;
    for (size_t im = 0; im < 3 && !st; im++) {
        double mu = mus[im], etas[5];
        for (size_t l = 0; l < neta; l++)
            etas[l] = (1 - mu) * base[l];
        for (int delayed = 0; delayed < 2 && !st; delayed++) {
            am_converge_params cp = am_converge_params_default();
            cp.etas = etas;
            cp.n_eta = neta;
            cp.horizon = 2.0 * (1 - mu);
            cp.ngrid = 41;
            cp.msgd.mu = mu;
            cp.msgd.seed = o->seed;
            cp.ens.threads = o->threads;
            cp.fit.level = am_vf_util_level();
            cp.fit.margin = c->margin;
            cp.predicted_order = am_vf_util_predict(o, 1.0, 1.0);
            /* a constant delay meets the theorem's condition tau lambda_1 eta/(1-mu)^2 -> 0
               whatever the bound's constant: no C enters (theory/am_theory.h) */
            if (delayed && (st = am_delay_make(AM_DELAY_CONST, tau_delay, &cp.msgd.delay))) break;
            /* stochastic (gaussian data) */
            am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, "ode-order");
            if (!row) {
                st = AM_EINVAL; /* max_rows of the table too small */
                break;
            }
            am_check_set_params(row, "mu=%g delay=%s dist=gaussian etas=(1-mu)*[%g..%g] T=%g R=%zu",
                                mu, delayed ? "const:8" : "none", base[0], base[neta - 1],
                                cp.horizon, R);
            cp.ens.replicas = R;
            am_converge_result *res = NULL;
            st = am_converge_run(pg, &cp, &res);
            if (st) break;
            am_vf_util_take_check(row, &res->check);
            am_check_add_note(row, "gaps %.4g .. %.4g (sem %.2g .. %.2g)", res->weak_error[0],
                              res->weak_error[neta - 1], res->weak_error_sem[0],
                              res->weak_error_sem[neta - 1]);
            am_converge_result_free(res);
            /* noise-free (expected data): the pure discretisation order */
            row = am_vf_util_row(rows, c->max_rows, &nr, "ode-order");
            if (!row) {
                st = AM_EINVAL; /* max_rows of the table too small */
                break;
            }
            am_check_set_params(row, "mu=%g delay=%s dist=expected etas=(1-mu)*[%g..%g] T=%g", mu,
                                delayed ? "const:8" : "none", base[0], base[neta - 1], cp.horizon);
            st = am_vf_util_order_deterministic(&cp, pe, row);
        }
    }
    am_problem_free(pg);
    am_problem_free(pe);
    *nrows = nr;
    return st;
}
