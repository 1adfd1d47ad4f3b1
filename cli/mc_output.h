/*
 * mc_output.h -- running an ensemble on the saved grid and writing its statistics in the
 * keys shared by `amsgd mc` and `amsgd sde`: t, step, err_mean, err_sem, norm_mean,
 * norm_sem, alive, diverged, replicas (and h2_mean, h2_sem with --coords; wallclock_mean,
 * wallclock_sem, clamped_mean, clamped_sem for the parameter-server delay workers:P:DIST).
 */
#ifndef AM_CLI_MC_OUTPUT_H
#define AM_CLI_MC_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "../core/am_grid.h"
#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"

typedef struct {
    size_t ngrid;
    double *t;
    uint64_t *k;
    am_ensemble_result *res;
    int coords;
    int wallclock; /* the model ends with (wall-clock time, clamped count): am_msgd_ps */
} mc_run;

/* Runs the Async-MSGD ensemble on the grid. */
am_status mc_run_ensemble(const am_problem *p, const am_msgd_params *mp, const am_grid *grid,
                          const am_ensemble_params *ep, mc_run *run);

/* Runs any model whose observables start with (err, norm[, h_1^2..h_d^2]) on a grid whose
 * steps are computed with step length h. */
am_status mc_run_model(const am_model *model, double h, const am_grid *grid,
                       const am_ensemble_params *ep, int coords, mc_run *run);

/* Writes a run as CSV or JSON ({command, version, params, ...}); params is stolen. */
void mc_write(FILE *f, int json, const char *command, json_t *params, const mc_run *run,
              size_t dim);

/* Frees the arrays of a run. */
void mc_run_free(mc_run *run);

#endif
