/*
 * am_wallclock.h -- error against wall-clock time of parameter-server variants, as one
 * library call: on strongly convex streaming least squares (montecarlo/am_pslsq.h) with the
 * measured error floor and decay next to the exact fresh-gradient values and Dutta et al.'s
 * K-sync bound (theory/am_lsqbound.h), or on streaming PCA (montecarlo/am_msgd_ps.h).
 *
 * Saved updates: k_g = round(N g / (n - 1)), g = 0..n-1. For each variant, the mean and
 * standard error over the replicas of the wall-clock time T_{k_g} and of the error
 * (F - F* for lsq, 1 - (v^1.v)^2/|v|^2 for pca). Least squares also reports
 *   floor_measured  the mean over replicas of the mean of F - F* over the last quarter of
 *                   the saved updates (am_pslsq.h), with its standard error;
 *   floor_exact     the fixed point of the fresh-gradient recursion (synchronous variants
 *                   with a constant step; NaN otherwise or when unstable);
 *   floor_dutta     eta L sigma^2 tr(H) / (2 c K) (constant step);
 *   decay_measured  the decay factor per update of the mean curve above floor_measured
 *                   (am_pslsq_decay), decay_exact that of the exact curve on the same
 *                   saved updates above floor_exact, decay_dutta = 1 - eta c.
 *   p0              the fraction of fresh gradients (staleness 0) over all updates and
 *                   replicas (mean over replicas of each replica's fraction; K/P for K-async
 *                   and 1/P for Async under exponential runtimes);
 *   gamma           the stale-gradient drift bound of Dutta et al., estimated as the largest
 *                   ratio over the saved updates k_g >= 1 of the replica means
 *                   E|grad F(w_j) - grad F(w_tau)|^2 / E|grad F(w_j)|^2 at update j = k_g - 1
 *                   (0 for the synchronous variants);
 *   decay_dutta_async, floor_dutta_async
 *                   Dutta et al.'s async / K-async decay 1 - eta c (1 - gamma + p0/2) and
 *                   floor with c replaced by c (1 - gamma + p0/2) (am_lsqbound.h), from the
 *                   measured p0 and gamma, for Async, K-async and K-batch-async with a
 *                   constant step (NaN otherwise, or where 1 - gamma + p0/2 <= 0).
 * Undefined values are NaN.
 */
#ifndef AM_WALLCLOCK_H
#define AM_WALLCLOCK_H

#include "../core/am_common.h"
#include "am_msgd.h"
#include "../theory/am_problem.h"
#include "../theory/am_runtime.h"

typedef enum { AM_WALLCLOCK_LSQ = 0, AM_WALLCLOCK_PCA } am_wallclock_objective;

/* One server scheme: the variant and its K (ignored by sync and async). */
typedef struct {
    am_variant variant;
    size_t k;
} am_wallclock_variant;

typedef struct {
    am_wallclock_objective objective;
    size_t workers;     /* P >= 1 */
    am_runtime runtime; /* learner runtime distribution */
    const am_wallclock_variant *variants;
    size_t nvariants;
    uint64_t updates; /* N: server updates per replica */
    size_t ngrid;     /* saved updates >= 2 */
    size_t replicas;  /* >= 2 */
    uint64_t seed;
    int threads;   /* 0 = all cores */
    double eta;    /* step > 0 */
    double lr_c;   /* > 0: staleness-adaptive step min(C / |w_j - w_tau(j)|^2, lr_max) */
    double lr_max; /* its cap */
    /* pca */
    const am_problem *problem; /* must outlive the run */
    double mu;
    am_init init;
    /* lsq */
    size_t dim;
    double lmax, lmin, sigma; /* H = diag(linear from L down to c), noise sigma */
} am_wallclock_params;

/* The curves of one variant. */
typedef struct {
    am_variant variant;
    size_t k;
    size_t batch; /* gradients per update (sync: P, async: 1, otherwise K) */
    double *wallclock_mean, *wallclock_sem, *err_mean, *err_sem; /* [ngrid] */
    size_t *alive;                                               /* [ngrid] */
    size_t diverged;
    /* least squares only (NaN for pca) */
    double floor_measured, floor_measured_sem, floor_exact, floor_dutta;
    double decay_measured, decay_exact, decay_dutta;
    double p0, gamma, decay_dutta_async, floor_dutta_async;
} am_wallclock_curve;

typedef struct {
    size_t ngrid, nvariants;
    uint64_t *update;           /* [ngrid] saved updates k_g */
    am_wallclock_curve *curves; /* [nvariants] */
} am_wallclock_result;

/* lsq, P = 8, exp:1, no variants (must be set), N = 2000, 50 saved updates, 200 replicas,
 * seed 1, all cores, eta 0.02, constant step, mu 0, random init, d = 4, L = 2, c = 0.5,
 * sigma 0.5. */
am_wallclock_params am_wallclock_params_default(void);

/* Runs every variant. On failure a one-line reason in err. Free *res with
 * am_wallclock_result_free (also after a failure). */
am_status am_wallclock_run(const am_wallclock_params *par, am_wallclock_result *res, char *err,
                           size_t errlen);

/* Frees the arrays of a result; safe on a zeroed or failed result. */
void am_wallclock_result_free(am_wallclock_result *res);

#endif
