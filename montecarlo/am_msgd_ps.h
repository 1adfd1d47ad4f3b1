/*
 * am_msgd_ps.h -- Async-MSGD for streaming PCA under the staleness produced by a simulated
 * parameter server (am_ps.h), with a wall-clock time axis (Dutta et al. 2018 meets Liu et
 * al. 2018). Step k is the server's update k; it uses the n_k gradients of that update,
 * gradient l computed on the iterate s_l updates old:
 *
 *   v_{k+1} = v_k + mu (v_k - v_{k-1}) + (eta_k / n_k) sum_l a_l (X_{k,l} - a_l w_l),
 *   w_l = v_{k - s_l},  a_l = X_{k,l} . w_l
 *
 * (for the `expected` distribution X X^T is replaced by Sigma). The data X_{k,1}, X_{k,2}, ..
 * are consecutive draws of the data stream at step k, so with one gradient per update the
 * data are those of the plain engine (am_msgd.h) at the same seed. Step: eta_k = eta, or the
 * staleness-adaptive eta_k = min(C / max_l |v_k - w_l|^2, eta_max) (eta_max when every w_l
 * equals v_k). Staleness above 40 P + 64 (probability below e^-40 for exponential runtimes)
 * is clamped to it; the number of clamped gradients is an observable.
 * Observables at each saved step: err, |v|, [h_i^2 with coords], the wall-clock time T_k at
 * which v_k exists (T_0 = 0), and the clamped count.
 */
#ifndef AM_MSGD_PS_H
#define AM_MSGD_PS_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"
#include "../theory/am_runtime.h"
#include "../core/am_ensemble.h"
#include "am_msgd.h"

typedef struct {
    am_msgd_params msgd; /* eta, mu, init, seed, blowup, coords; delay = workers:P:DIST */
    am_variant variant;  /* server scheme */
    size_t k;            /* K of the k-variants */
    double lr_c;         /* > 0: staleness-adaptive step with constant C */
    double lr_max;       /* its cap eta_max */
} am_msgd_ps_params;

typedef struct am_msgd_ps am_msgd_ps;

/* Builds the engine (the problem must outlive it); NULL with *status (AM_EINVAL: delay not
 * workers:P:DIST, bad variant/K, bad adaptive step; AM_ENOMEM) and a one-line reason in err
 * (err may be NULL). */
am_msgd_ps *am_msgd_ps_alloc(const am_problem *p, const am_msgd_ps_params *params,
                             am_status *status, char *err, size_t errlen);

/* Frees the engine; NULL is safe. */
void am_msgd_ps_free(am_msgd_ps *m);

/* The ensemble model of the engine. */
const am_model *am_msgd_ps_model(const am_msgd_ps *m);

/* The path (am_msgd_batch.h's am_msgd_path): AM_MSGD_PATH_SCALAR is the reference, one data
 * draw per gradient, one runtime per job and a heap of the learners; the others compute
 * runtimes eight jobs ahead, scan the learners for P <= 16, draw a run of steps' normals at
 * once and, for d <= AM_MSGD_BATCH_MAXDIM and synthetic data, advance AM_MSGD_LANES replicas
 * side by side with that instruction set; every path gives the same bytes. A new engine takes
 * am_msgd_batch_path() (AMSGD_SIMD); a path the CPU lacks, or out of range: the best one.
 * am_msgd_ps_path_get: the path set (the model's batch says whether the lanes apply). */
void am_msgd_ps_set_path(am_msgd_ps *m, int path);
int am_msgd_ps_path_get(const am_msgd_ps *m);

/* Index of the wall-clock observable (the clamped count follows it). */
size_t am_msgd_ps_obs_time(const am_msgd_ps *m);

#endif
