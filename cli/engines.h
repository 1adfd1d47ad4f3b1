/*
 * engines.h -- the three engines of the toolkit run on one grid with the same parameters:
 * the discrete ensemble (mc_output.h), the SDE ensemble (global or local OU model, the same
 * initial points as the discrete one) and the limit ODE from the discrete engine's
 * initial point (replica 0's point for --init random-each).
 */
#ifndef AM_CLI_ENGINES_H
#define AM_CLI_ENGINES_H

#include "../solvers/am_ode.h"
#include "../solvers/am_sde.h"
#include "mc_output.h"

typedef struct {
    int ou;                 /* 0 global SDE, 1 local OU model */
    int noise;              /* 0 drops the noise */
    am_sde_sampler sampler; /* noise sampler of the global model */
    double dt;              /* Euler-Maruyama step */
} cli_sde_opts;

/* Runs the SDE ensemble on the grid (delay ignored: the limit has none). AM_EDOM when the
 * data have no finite fourth moment. */
am_status cli_run_sde(const am_problem *p, const am_msgd_params *mp, const cli_sde_opts *so,
                      const am_grid *grid, const am_ensemble_params *ep, mc_run *run);

/* Solves the limit ODE from the discrete engine's initial point at the times t[0..n-1];
 * err and norm receive n values, stats may be NULL. */
am_status cli_run_ode(const am_problem *p, const am_msgd_params *mp, const am_ode_params *op,
                      const double *t, size_t n, double *err, double *norm, am_ode_stats *stats);

#endif
