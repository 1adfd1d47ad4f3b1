/*
 * am_pslsq.h -- streaming least squares on a strongly convex quadratic under the staleness of
 * a simulated parameter server (am_ps.h), with a wall-clock time axis: the setting of Dutta
 * et al.'s error bounds (AISTATS 2018; theory.md section 7).
 *
 * Data: a ~ N(0, H), H = diag(lambda), lambda linear from L down to c (d >= 2; lambda = L for
 * d = 1), y = a . w* + sigma z with w* = 0. F(w) = (1/2) E (a.w - y)^2, F* = sigma^2 / 2,
 * F(w) - F* = (1/2) w^T H w. Update j uses the n_j gradients of the server's update j, each
 * on one fresh sample and the iterate s_l updates old:
 *   w_{j+1} = w_j - (eta_j / n_j) sum_l a_l (a_l . w_{j - s_l} - sigma z_l),
 * eta_j = eta or the staleness-adaptive min(C / max_l |w_j - w_{j-s_l}|^2, eta_max). Start
 * w_0 = (1, .., 1). Staleness above 40 P + 64 is clamped. Draws: AM_STREAM_DATA at step j.
 * Observables: F(w_j) - F*, the wall-clock time of w_j, and of the update that produced w_j
 * (update j - 1, from w_{j-1}; 0 at j = 0) |grad F(w_{j-1})|^2 and the mean over its gradients
 * of the stale-gradient drift |grad F(w_{j-1}) - grad F(w_tau)|^2 (grad F(w) = H w; the drift
 * of Dutta et al.'s gamma). Per-replica summary: the mean of F - F* over the last quarter of the
 * saved steps (the measured error floor) and the fraction of gradients with staleness 0 over
 * the whole run (Dutta et al.'s p0).
 */
#ifndef AM_PSLSQ_H
#define AM_PSLSQ_H

#include "../core/am_common.h"
#include "../core/am_ensemble.h"
#include "am_ps.h"

typedef struct {
    size_t dim;      /* d >= 1 */
    double lmax;     /* L, largest eigenvalue of H */
    double lmin;     /* c, smallest eigenvalue (0 < c <= L) */
    double sigma;    /* noise standard deviation >= 0 */
    double eta;      /* step > 0 */
    double lr_c;     /* > 0: adaptive step constant C */
    double lr_max;   /* its cap */
    am_ps_params ps; /* workers, runtime, variant, K; ps.seed is the seed of every stream */
} am_pslsq_params;

typedef struct am_pslsq am_pslsq;

/* Builds the engine; NULL with *status (AM_EINVAL, AM_ENOMEM). */
am_pslsq *am_pslsq_alloc(const am_pslsq_params *params, am_status *status);

/* Frees the engine; NULL is safe. */
void am_pslsq_free(am_pslsq *e);

/* The ensemble model (4 observables: F - F*, wall-clock time, |grad F|^2, drift; 2 summaries:
 * floor, fresh fraction). */
const am_model *am_pslsq_model(const am_pslsq *e);

/* Decay factor per update of a mean error curve f at steps k[0..n-1] above the floor:
 * exp of the least-squares slope of log(f - floor) over the points with
 * 10 floor < f < f[0] / 2. AM_EDOM with fewer than 3 such points. */
am_status am_pslsq_decay(const uint64_t *k, const double *f, size_t n, double floor, double *rate);

/* The first of the saved steps g0..ngrid-1 (the last quarter) that the error floor averages. */
static inline size_t am_pslsq_floor_first(size_t ngrid)
{
    return ngrid - (ngrid + 3) / 4;
}

/* Eigenvalue i of H. */
double am_pslsq_lambda(const am_pslsq_params *params, size_t i);

#endif
