/*
 * am_data.h -- draws of the data distributions of am_problem.h in eigen-coordinates.
 *
 * am_data_draw fills y[0..d-1] with one draw of Y = Q^T X: independent coordinates with
 * E Y_i = 0 and Var Y_i = lambda_i. Student coordinates are sqrt(lambda_i (nu-2)/nu) Z/sqrt(G/nu)
 * with G ~ chi^2_nu drawn by Marsaglia & Tsang's gamma method. Data problems draw a row
 * (am_datadist.h): Y = Q^T x_r, uncorrelated but not independent coordinates.
 */
#ifndef AM_DATA_H
#define AM_DATA_H

#include "../core/am_rng.h"
#include "../theory/am_problem.h"

/* One standard gamma(shape) variate, shape > 0 (Marsaglia & Tsang 2000). */
double am_data_gamma(am_rng *rng, double shape);

/* Fills y with one draw of the eigen-coordinates Y (not for AM_DIST_EXPECTED). */
void am_data_draw(const am_problem *p, am_rng *rng, double *y);

/* Draws a uniformly random unit vector of dimension d. */
void am_data_unit_vector(am_rng *rng, size_t d, double *v);

#endif
