/*
 * am_theory_study.c -- the closed-form predictions of one parameter set (see
 * am_theory_study.h).
 */
#include "am_theory_study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_theory.h"

am_theory_study_params am_theory_study_params_default(void)
{
    am_theory_study_params p;
    memset(&p, 0, sizeof p);
    p.eta = 5e-4;
    p.mu = 0;
    p.gamma = AM_THEORY_BOUND_GAMMA;
    p.bound_constant = AM_THEORY_BOUND_C;
    p.delta = 0.1;
    p.nu = 0.05;
    return p;
}

/* The result's arrays of dim values (alpha2, dim x dim, is apart). */
enum { NVECTORS = 9 };
static void vectors(am_theory_study_result *res, double **out[NVECTORS])
{
    double **a[NVECTORS] = {&res->m4,
                            &res->ou_variance,
                            &res->relaxation_time,
                            &res->mode_curvature,
                            &res->tau_c_linear,
                            &res->tau_star_linear,
                            &res->tau_c_dde,
                            &res->tau_c_asymptotic,
                            &res->tau_c_underdamped};
    memcpy(out, a, sizeof a);
}

void am_theory_study_result_free(am_theory_study_result *res)
{
    if (!res) return;
    double **arrays[NVECTORS];
    vectors(res, arrays);
    for (size_t k = 0; k < NVECTORS; k++) {
        free(*arrays[k]);
        *arrays[k] = NULL;
    }
    free(res->alpha2);
    res->alpha2 = NULL;
}

am_status am_theory_study_run(const am_theory_study_params *par, am_theory_study_result *res,
                              char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (!par || !par->problem) {
        if (err && errlen) snprintf(err, errlen, "no problem given");
        return AM_EINVAL;
    }
    const am_problem *p = par->problem;
    size_t d = p->dim;
    double eta = par->eta, mu = par->mu;
    res->dim = d;
    double **arrays[NVECTORS];
    vectors(res, arrays);
    int nomem = 0;
    for (size_t k = 0; k < NVECTORS; k++)
        nomem |= !(*arrays[k] = calloc(d, sizeof(double)));
    if (d <= AM_THEORY_STUDY_MAX_MATRIX) nomem |= !(res->alpha2 = malloc(d * d * sizeof(double)));
    if (nomem) {
        if (err && errlen) snprintf(err, errlen, "%s", am_strerror(AM_ENOMEM));
        return AM_ENOMEM;
    }
    for (size_t i = 0; i < d; i++) {
        am_status st;
        res->m4[i] = am_problem_m4(p, i, &st);
        if (st) res->m4_infinite = 1;
    }
    for (size_t i = 0; res->alpha2 && i < d; i++)
        for (size_t j = 0; j < d; j++)
            res->alpha2[i * d + j] = am_problem_alpha2(p, i, j, NULL);
    res->noise_free = p->dist.kind == AM_DIST_EXPECTED;
    res->cd = am_problem_bound(p);
    for (size_t i = 1; i < d; i++) {
        res->ou_variance[i - 1] = am_theory_ou_variance(p, mu, i);
        res->relaxation_time[i - 1] = am_theory_relaxation_time(p, mu, i);
    }
    res->stationary_error = am_theory_stationary_error(p, eta, mu);
    am_status est;
    res->escape_time = am_theory_escape_time(p, eta, mu, par->delta, par->nu, &est);
    res->traverse_time = am_theory_traverse_time(p, mu, par->delta);
    res->escape_iterations = res->escape_time / eta;
    res->traverse_iterations = res->traverse_time / eta;
    res->z_nu = am_theory_z_nu(par->nu);
    res->tau_bound_ode =
        am_theory_tau_bound_ode(p->lambda[0], eta, mu, par->gamma, par->bound_constant);
    res->tau_bound_local =
        am_theory_tau_bound_local(p->lambda[0], res->cd, eta, mu, par->gamma, par->bound_constant);
    res->cd_infinite = isinf(res->cd) != 0;
    res->gamma_above_half = par->gamma > 0.5;
    if (res->cd_infinite) res->tau_bound_local = NAN; /* undefined */
    for (size_t m = 0; m < d; m++) {
        res->mode_curvature[m] = am_theory_mode_curvature(p, m);
        double h = eta * res->mode_curvature[m];
        if (am_theory_stability_tau_c(mu, h, &res->tau_c_linear[m]) != AM_OK) {
            res->tau_c_linear[m] = INFINITY;
            res->tau_c_overflow++;
        }
        res->tau_star_linear[m] = am_theory_stability_tau_star(mu, h);
        res->tau_c_dde[m] = am_theory_tau_c_dde(mu, h);
        res->tau_c_asymptotic[m] = am_theory_tau_c_asymptotic(mu, h);
        res->tau_c_underdamped[m] = am_theory_tau_c_underdamped(mu, h);
    }
    return AM_OK;
}
