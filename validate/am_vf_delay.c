/*
 * am_vf_delay.c -- the check family delay: the order of the gap to the ODE under delay scaling,
 * noise-free data: GAMMA = 1/2 under paper scaling tau = C (1-mu)^2/(lambda_1 eta^(1-GAMMA)) (the
 * gap vanishes), 0 under inverse scaling tau = C/eta (tau eta fixed: the gap stays finite).
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_theory.h"
#include "am_converge.h"

am_status am_vf_delay_run(const am_validate_check *c, const am_validate_opts *o,
                          am_check_result *rows, size_t *nrows)
{
    /* quartering ladder: tau = C' eta^-(1-GAMMA) doubles (GAMMA = 1/2) or quadruples
       (inverse) at each rung, so every tau is an integer and rounding adds nothing */
    static const double etas[4] = {4e-3, 1e-3, 2.5e-4, 6.25e-5};
    /* GAMMA is the one gamma of theory/am_theory.h (1/2: the quartering ladder then doubles
       tau exactly); cpap below is the ladder's constant, chosen so that tau starts at tau0: the
       theorem's condition holds for every constant, so it is a free choice, not the bound's C */
    const double mu = 0.5, gamma = AM_THEORY_BOUND_GAMMA, tau0 = 10, c_inv = 0.02;
    am_problem *p = am_vf_util_problem(AM_DIST_EXPECTED);
    if (!p) return AM_ENOMEM;
    am_status st = AM_OK;
    size_t nr = 0;
    for (int inverse = 0; inverse < 2 && !st; inverse++) {
        am_converge_params cp = am_converge_params_default();
        cp.etas = etas;
        cp.n_eta = 4;
        cp.horizon = 2.0;
        cp.ngrid = 41;
        cp.msgd.mu = mu;
        cp.msgd.seed = o->seed;
        cp.ens.threads = o->threads;
        am_check_result *row =
            am_vf_util_row(rows, c->max_rows, &nr, inverse ? "delay-inverse" : "delay-paper");
        if (!row) {
            st = AM_EINVAL; /* max_rows of the table too small */
            break;
        }
        if (inverse) {
            cp.scaling.kind = AM_SCALING_INVERSE;
            cp.scaling.c = c_inv;
            am_check_set_params(row,
                                "scaling=inverse:%g mu=%g dist=expected etas=4e-3/4^j "
                                "j=0..3 tau=5..320 T=2",
                                c_inv, mu);
        } else {
            double cpap = tau0 * p->lambda[0] * pow(etas[0], 1 - gamma) / ((1 - mu) * (1 - mu));
            cp.scaling.kind = AM_SCALING_PAPER;
            cp.scaling.gamma = gamma;
            cp.scaling.c = cpap;
            am_check_set_params(row,
                                "scaling=paper:%g:%.6g mu=%g dist=expected etas=4e-3/4^j "
                                "j=0..3 tau=10..80 T=2",
                                gamma, cpap, mu);
        }
        /* am_converge: finest local slope, next term eta^(1-GAMMA) (paper), eta (inverse) */
        cp.fit.level = am_vf_util_level();
        cp.fit.margin = c->margin;
        /* undelayed (the power run vs_undelayed): the order 1 of the gap without a delay */
        double order = o->undelayed ? 1.0 : am_converge_scaling_order(&cp.scaling);
        cp.predicted_order = am_vf_util_predict(o, order, 1.0);
        st = am_vf_util_order_deterministic(&cp, p, row);
        row->delayed = 1;
    }
    am_problem_free(p);
    *nrows = nr;
    return st;
}
