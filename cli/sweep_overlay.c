/*
 * sweep_overlay.c -- theory curves over a sweep (see sweep_overlay.h).
 */
#include "sweep_overlay.h"

#include <math.h>
#include <stdlib.h>

#include "../theory/am_theory.h"
#include "cli_common.h"

/* Delay parameter of the axis per unit of mean delay (1 for const and geometric, 2 for
 * uniform:S whose mean is S/2). */
static double axis_per_mean(am_delay_kind kind)
{
    return kind == AM_DELAY_UNIFORM ? 2.0 : 1.0;
}

void sweep_overlays_compute(sweep_overlays *ov, const sweep_setup *s, const double *mu, size_t nmu,
                            const double *tau, size_t ntau, double gamma, double pconst)
{
    ov->linear = malloc(nmu * sizeof(double));
    ov->dde = malloc(nmu * sizeof(double));
    ov->paper = malloc(nmu * sizeof(double));
    ov->implicit_mu = malloc((ntau ? ntau : 1) * sizeof(double));
    if (!ov->linear || !ov->dde || !ov->paper || !ov->implicit_mu)
        cli_runtime_error("out of memory");
    double scale = axis_per_mean(s->kind), eta = s->base.eta;
    const am_problem *p = s->p;
    double amax = 0;
    for (size_t m = 0; m < p->dim; m++) {
        double a = am_theory_mode_curvature(p, m);
        if (a > amax) amax = a;
    }
    double *tc = malloc((nmu ? nmu : 1) * sizeof *tc);
    if (!tc) cli_runtime_error("out of memory");
    for (size_t i = 0; i < nmu; i++)
        ov->linear[i] = INFINITY;
    for (size_t m = 0; m < p->dim; m++) {
        if (am_theory_tau_c_curve(p, eta, m, mu, nmu, tc)) continue;
        for (size_t i = 0; i < nmu; i++)
            if (tc[i] < ov->linear[i]) ov->linear[i] = tc[i];
    }
    free(tc);
    for (size_t i = 0; i < nmu; i++) {
        ov->linear[i] *= scale;
        ov->dde[i] = scale * am_theory_tau_c_dde(mu[i], eta * amax);
        ov->paper[i] = scale * am_theory_tau_bound_ode(p->lambda[0], eta, mu[i], gamma, pconst);
    }
    for (size_t j = 0; j < ntau; j++)
        ov->implicit_mu[j] = s->kind == AM_DELAY_GEOMETRIC ? 1.0 - 1.0 / (tau[j] + 1.0) : NAN;
}

void sweep_overlays_json(json_t *root, const sweep_overlays *ov, size_t nmu, size_t ntau)
{
    json_object_set_new(root, "boundary_linear", cli_json_doubles(ov->linear, nmu));
    json_object_set_new(root, "boundary_dde", cli_json_doubles(ov->dde, nmu));
    json_object_set_new(root, "boundary_paper", cli_json_doubles(ov->paper, nmu));
    json_object_set_new(root, "implicit_momentum", cli_json_doubles(ov->implicit_mu, ntau));
}

void sweep_overlays_free(sweep_overlays *ov)
{
    free(ov->linear);
    free(ov->dde);
    free(ov->paper);
    free(ov->implicit_mu);
}
