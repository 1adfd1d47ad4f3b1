/*
 * am_vf_dde.c -- the check family dde: under inverse delay scaling (tau = C/eta, a fixed lag
 * s = tau eta = C) the noise-free recursion converges to the delay-differential limit
 *
 *   (1-mu) V'(t) = Sigma W - (W^T Sigma W) W,   W = V(t - s),   V = v_0 for t <= 0,
 *
 * at order 1 in eta (theory.md section 9: inertial term, momentum start-up and the rounding of
 * tau are all O(eta)), while its gap to the undelayed ODE stays finite (the delay family's
 * delay-inverse row decides that order 0). One row per momentum, mu in {0, 0.5, 0.9}.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>

#include "am_converge.h"

am_status am_vf_dde_run(const am_validate_check *c, const am_validate_opts *o,
                        am_check_result *rows, size_t *nrows)
{
    /* quartering ladder with C = 0.02: tau = 5, 20, 80, 320, every tau an integer */
    static const double etas[4] = {4e-3, 1e-3, 2.5e-4, 6.25e-5};
    static const double mus[3] = {0.0, 0.5, 0.9};
    const double c_inv = 0.02;
    am_problem *p = am_vf_util_problem(AM_DIST_EXPECTED);
    if (!p) return AM_ENOMEM;
    am_status st = AM_OK;
    size_t nr = 0;
    for (int i = 0; i < 3 && !st; i++) {
        char name[32];
        snprintf(name, sizeof name, "dde-mu%g", mus[i]);
        am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, name);
        if (!row) {
            st = AM_EINVAL; /* max_rows of the table too small */
            break;
        }
        am_converge_params cp = am_converge_params_default();
        cp.etas = etas;
        cp.n_eta = 4;
        cp.horizon = 2.0;
        cp.ngrid = 41;
        cp.msgd.mu = mus[i];
        cp.msgd.seed = o->seed;
        cp.ens.threads = o->threads;
        cp.scaling.kind = AM_SCALING_INVERSE;
        cp.scaling.c = c_inv;
        cp.dde = 1;
        cp.fit.level = am_vf_util_level();
        cp.fit.margin = c->margin;
        cp.predicted_order = am_vf_util_predict(o, 1.0, 1.0);
        am_check_set_params(row,
                            "limit=dde lag=%g scaling=inverse:%g mu=%g dist=expected "
                            "etas=4e-3/4^j j=0..3 tau=5..320 T=2",
                            c_inv, c_inv, mus[i]);
        am_converge_result *res = NULL;
        cp.ens.replicas = 1;
        st = am_converge_run(p, &cp, &res);
        if (st) break;
        am_vf_util_take_check(row, &res->check);
        am_check_add_note(row, "gap to the DDE %.4g .. %.4g; to the ODE %.4g .. %.4g",
                          res->weak_error[0], res->weak_error[res->n - 1], res->weak_error_ode[0],
                          res->weak_error_ode[res->n - 1]);
        am_converge_result_free(res);
    }
    am_problem_free(p);
    *nrows = nr;
    return st;
}
