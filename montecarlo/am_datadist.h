/*
 * am_datadist.h -- draws from a data set's distribution (am_datamoments.h): a row index
 * uniform on 0..n-1 from the replica's counter-based data stream, sampling with replacement.
 *
 * The index is Lemire's multiply-and-reject map of one 64-bit word u: r = floor(u n / 2^64),
 * redrawn while the low word of u n is below 2^64 mod n, so every row has probability
 * exactly 1/n. It is a function of (seed, replica, step) only: the same rows for any number
 * of threads.
 */
#ifndef AM_DATADIST_H
#define AM_DATADIST_H

#include "../core/am_rng.h"
#include "../theory/am_problem.h"

/* A uniform index in 0..n-1 (n >= 1) from rng. */
size_t am_datadist_index(am_rng *rng, size_t n);

/* One draw X of a data problem (kind AM_DIST_DATA) in original coordinates, into x[0..d-1]. */
void am_datadist_draw(const am_problem *p, am_rng *rng, double *x);

/* One draw of the eigen-coordinates Y = Q^T X of a data problem, into y[0..d-1]. */
void am_datadist_draw_eigen(const am_problem *p, am_rng *rng, double *y);

#endif
