/*
 * am_sweep_cell_impl.h -- internals shared by the sweep studies (am_phase.c, am_knee.c): the
 * JSON object of the shared parameters from which a study builds its checkpoint fingerprint
 * (every parameter that changes a cell's values, dumped with sorted keys and 17 digits).
 */
#ifndef AM_SWEEP_CELL_IMPL_H
#define AM_SWEEP_CELL_IMPL_H

#include <jansson.h>

#include "am_sweep_cell.h"

/* A new object {dim, spectrum, dist, rotate, eta, init, seed, blowup, time, grid, burnin, eps,
 * replicas, delay_model} of the shared parameters. */
json_t *am_sweep_cell_params_json(const am_sweep_cell_params *params);

/* A JSON array of doubles; non-finite values become null. */
json_t *am_sweep_cell_json_doubles(const double *x, size_t n);

/* Serialises a fingerprint object (sorted keys, compact, 17 digits); NULL if out of memory. */
static inline char *am_sweep_cell_fingerprint(const json_t *fp)
{
    return json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
}

#endif
