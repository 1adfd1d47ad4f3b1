/*
 * am_grid.h -- the common time grid shared by every engine.
 *
 * A grid holds n saved times t_g = g * T / (n - 1), g = 0..n-1, in continuous time
 * t = k * eta. A discrete engine with step h (eta for Monte Carlo, dt for the SDE)
 * saves at the step index k_g = round(t_g / h); am_grid_steps() computes them.
 */
#ifndef AM_GRID_H
#define AM_GRID_H

#include "am_common.h"

typedef struct {
    size_t n;       /* number of saved times (>= 1) */
    double horizon; /* T: last saved time */
} am_grid;

/* Fills t[0..n-1] with the saved times of the grid. */
void am_grid_times(const am_grid *grid, double *t);

/* Fills k[0..n-1] with the step indices round(t_g / h) for an engine with step h;
 * returns AM_EINVAL if h <= 0 or the step count would overflow. */
am_status am_grid_steps(const am_grid *grid, double h, uint64_t *k);

#endif
