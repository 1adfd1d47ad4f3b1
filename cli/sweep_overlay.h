/*
 * sweep_overlay.h -- the theory curves drawn over a momentum-delay sweep, computed by
 * theory/am_theory.h: per momentum the linear-stability critical delay of the delayed
 * heavy-ball recursion (smallest over the modes), its delay-equation approximation
 * pi (1-mu) / (2 h_max), and the paper's bound C (1-mu)^2 / (lambda_1 eta^(1-gamma)); per
 * delay, for geometric staleness with mean MEAN (M = MEAN + 1 workers), the implicit
 * momentum 1 - 1/M of Mitliagkas et al. For random delays the boundaries are expressed in
 * the delay parameter of the axis at which E[tau] equals the critical delay.
 */
#ifndef AM_CLI_SWEEP_OVERLAY_H
#define AM_CLI_SWEEP_OVERLAY_H

#include <jansson.h>

#include "sweep_cell.h"

typedef struct {
    double *linear, *dde, *paper; /* [nmu], in units of the delay axis; NaN if none */
    double *implicit_mu;          /* [ntau]; NaN unless geometric */
} sweep_overlays;

/* Computes the overlays for the momenta mu[0..nmu-1] and delays tau[0..ntau-1]. */
void sweep_overlays_compute(sweep_overlays *ov, const sweep_setup *s, const double *mu, size_t nmu,
                            const double *tau, size_t ntau, double gamma, double pconst);

/* Adds boundary_linear, boundary_dde, boundary_paper and implicit_momentum to root. */
void sweep_overlays_json(json_t *root, const sweep_overlays *ov, size_t nmu, size_t ntau);

/* Frees the arrays. */
void sweep_overlays_free(sweep_overlays *ov);

#endif
