/*
 * am_msgd.h -- Async-MSGD for streaming PCA (Liu et al. 2018), the discrete algorithm:
 *
 *   v_{k+1} = v_k + mu (v_k - v_{k-1}) + eta (I - w w^T) X_k X_k^T w,   w = v_{k - tau_k},
 *
 * with v_{-i} = v_0 (history before step 0), no normalisation, and tau_k from a delay
 * model. With a = X_k . w the data term is eta a (X_k - a w), O(d) per step. For the
 * `expected` distribution X X^T is replaced by Sigma: eta (Sigma w - (w^T Sigma w) w).
 * Observables at each saved time: err = 1 - (v^1 . v)^2 / |v|^2, |v|, and optionally
 * h_i^2 = ((Q^T v)_i)^2 for i = 1..d (or h_i itself with coords_signed).
 */
#ifndef AM_MSGD_H
#define AM_MSGD_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"
#include "am_delay.h"
#include "../core/am_ensemble.h"

typedef enum { AM_INIT_RANDOM = 0, AM_INIT_RANDOM_EACH, AM_INIT_EIGEN, AM_INIT_ANGLE } am_init_kind;

typedef struct {
    am_init_kind kind;
    size_t j;     /* AM_INIT_EIGEN: eigenvector index, 1-based */
    double theta; /* AM_INIT_ANGLE: v0 = cos(theta) v^1 + sin(theta) v^2 */
} am_init;

/* Parses an initial-point spec (random, random-each, e:J, angle:THETA) for dimension dim. */
am_status am_msgd_init_parse(const char *spec, size_t dim, am_init *out, char *err, size_t errlen);

/* Writes the canonical spec of an initial point into buf. */
void am_msgd_init_format(const am_init *init, char *buf, size_t len);

typedef struct {
    double eta;        /* step size > 0 */
    double mu;         /* momentum in [0, 1) */
    am_delay delay;    /* staleness model */
    am_init init;      /* initial point */
    uint64_t seed;     /* Philox key */
    double blowup;     /* |v| above this (or non-finite) marks a replica diverged */
    int coords;        /* also observe h_i^2 */
    int coords_signed; /* with coords: observe h_i itself instead of h_i^2 (for
                          autocorrelations of the eigen-coordinates) */
    /* Per-replica summary (am_model.summarize), off unless summary = 1: values
     *   [0] time average of err over the saved points g >= ceil(burnin (n-1)), NaN if diverged,
     *   [1] first saved index g with err <= eps, as the fraction g / (n-1) of the horizon
     *       (NaN if never reached), [2] 1 if the replica diverged, else 0. */
    int summary;
    double burnin; /* burn-in fraction of the saved grid in [0, 1) */
    double eps;    /* error level for summary value [1] */
} am_msgd_params;

/* Number of per-replica summary values when am_msgd_params.summary is set. */
#define AM_MSGD_NSUMMARY 3

/* eta 5e-4, mu 0, no delay, random init, seed 1, blowup 1e6, no coordinates, no summary
 * (burnin 0.5, eps 0.01 when enabled). */
am_msgd_params am_msgd_params_default(void);

typedef struct am_msgd am_msgd;

/* Checks params against the problem; AM_EINVAL with a reason in err on failure. */
am_status am_msgd_params_check(const am_problem *p, const am_msgd_params *params, char *err,
                               size_t errlen);

/* Builds the engine (the problem must outlive it). NULL with *status set on failure
 * (AM_EINVAL for the delay workers:P:DIST, which runs on am_msgd_ps.h) and a one-line
 * reason in err (err may be NULL). */
am_msgd *am_msgd_alloc(const am_problem *p, const am_msgd_params *params, am_status *status,
                       char *err, size_t errlen);

/* Frees the engine; NULL is safe. */
void am_msgd_free(am_msgd *m);

/* The ensemble model of the engine. */
const am_model *am_msgd_model(const am_msgd *m);

/* Path of the ensemble's steps: 0 one replica at a time, 1 replicas side by side in portable
 * C, 2 with AVX2, 3 with AVX-512 (am_msgd_batch.h; used for d <= 16, same bytes on every
 * path). am_msgd_alloc takes the best path of the CPU, or the one the environment variable
 * AMSGD_SIMD names (scalar, portable, avx2, avx512, auto); am_msgd_set_path chooses another
 * (a path the CPU lacks, or out of range: the best one). am_msgd_path_get: the path used. */
void am_msgd_set_path(am_msgd *m, int path);
int am_msgd_path_get(const am_msgd *m);

/* Number of observables per saved time (2, or 2 + d with coords). */
size_t am_msgd_nobs(const am_msgd *m);

/* Writes the initial point v_0 of a replica (unit norm) into v0[0..d-1]. */
void am_msgd_initial(const am_msgd *m, uint64_t replica, double *v0);

/* The Async-MSGD update, written once for every engine (the scalar reference, the SIMD lanes
 * of the replica-batched kernel, the dimension bodies, the parameter-server engine): the
 * heavy-ball recursion of one coordinate
 *     v_{k+1} = v_k + mu (v_k - v_{k-1}) + g_k
 * with the step g_k of the stochastic Oja gradient at the stale iterate w,
 *     g = (eta a) (x - a w),  a = x . w   (AM_MSGD_OJA_STEP(eta a, x, a, w)),
 * its expectation, or the sum a parameter server applies. The operands may be doubles or
 * vectors of lanes (GCC's vector types and __m256d/__m512d take the same operators); the
 * operations are rounded one at a time in the order written, so every body that uses these
 * macros computes the bits of am_msgd_update (tests/test_msgd_batch.c, tests/test_mc.c). */
#define AM_MSGD_HEAVY_BALL(v, vprev, mu, g) ((v) + (mu) * ((v) - (vprev)) + (g))
#define AM_MSGD_OJA_STEP(ea, x, a, w) ((ea) * ((x) - (a) * (w)))

/* One Async-MSGD update with explicit data x (original coordinates):
 * vnext = v + mu (v - vprev) + eta a (x - a w), a = x . w. vnext may alias vprev. */
void am_msgd_update(size_t d, double eta, double mu, const double *x, const double *v,
                    const double *vprev, const double *w, double *vnext);

/* Writes the observables of an iterate v into obs: err against the unit vector u1, |v|, and
 * with coords the d values h_j^2 (or h_j with coords_signed), h = Q^T v; returns how many. */
size_t am_msgd_observables(const am_problem *p, const double *u1, const double *v, int coords,
                           int coords_signed, double *obs);

/* The error 1 - (u . v)^2 / |v|^2 of v against the unit vector u. */
double am_msgd_error(size_t d, const double *u, const double *v);

#endif
