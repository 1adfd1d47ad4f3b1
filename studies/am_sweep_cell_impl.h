/*
 * am_sweep_cell_impl.h -- internals shared by the sweep studies (am_phase.c, am_knee.c): the
 * JSON object of the shared parameters from which a study builds its checkpoint fingerprint
 * (every parameter that changes a cell's values, with the version and the identity of the
 * random streams and the engine, dumped with sorted keys and 17 digits), and the checks of
 * the cell values read back from a checkpoint.
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

/* The identity of the random streams and the engine: the CRC-32 (8 hex digits) of tiny fixed
 * ensembles over each data distribution, delay kind and initial point, and of draws of the
 * bootstrap stream. Any change of the streams or of the engine's arithmetic changes it. */
am_status am_sweep_cell_engine_id(char *buf, size_t len);

/* am_sweep_cell_params_json with the version and the engine identity ("version", "engine"):
 * the start of a study's checkpoint fingerprint. */
am_status am_sweep_cell_fingerprint_base(const am_sweep_cell_params *params, json_t **out);

/* Checks the AM_SWEEP_CELL_NVALUES values of a cell read from a checkpoint (NaN = null):
 * error in [0, 1], standard errors >= 0, fractions k / R, time in [0, T]; nonzero with a
 * reason in why if one is impossible. */
int am_sweep_cell_values_check(const am_sweep_cell_params *params, const double *v, char *why,
                               size_t whylen);

/* Serialises a fingerprint object (sorted keys, compact, 17 digits); NULL if out of memory. */
static inline char *am_sweep_cell_fingerprint(const json_t *fp)
{
    return json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
}

#endif
