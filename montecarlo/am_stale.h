/*
 * am_stale.h -- staleness across objectives and optimisers (Dai et al., ICLR 2019;
 * theory.md section 8), on the objectives of am_objective.h.
 *
 * Simulated staleness: at step k each of P workers draws r ~ Uniform{0..s} (clamped to k)
 * and B rows uniformly, and computes its mini-batch gradient on x_{k-r}; the optimiser
 * (am_optim.h) steps with the average of the P B sample gradients. Draws come from the
 * stream AM_STREAM_STALE at (seed, replica, step k). A run reaches the target at the first
 * k with F(x_k) - F* <= target (F(x_0) - F*); it fails if it does not within max_steps or
 * stops being finite. Gradient coherence along the run (full gradients):
 *   mu_k = min_{max(0,k-s) <= j <= k} <grad F(x_k), grad F(x_j)> / |grad F(x_k)|^2,
 * and coherence_min = min_k mu_k over the run (1 when s = 0).
 */
#ifndef AM_STALE_H
#define AM_STALE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "am_dataset.h"
#include "am_objective.h"
#include "am_optim.h"
#include "../core/am_stats.h"

typedef struct {
    size_t workers;     /* P >= 1 */
    size_t s;           /* staleness bound s >= 0 */
    size_t batch;       /* rows per worker gradient B >= 1 */
    double target;      /* fraction of the initial gap to reach, in (0, 1) */
    uint64_t max_steps; /* give up after this many steps */
    uint64_t seed;
} am_stale_params;

/* P 4, s 0, B 8, target 0.01, max_steps 20000, seed 1. */
am_stale_params am_stale_params_default(void);

typedef struct {
    int reached;          /* 1 if the target was reached */
    double steps;         /* steps taken (to the target, or until the run stopped) */
    double coherence_min; /* min_k mu_k over the run (NaN if undefined throughout) */
} am_stale_run;

/* Runs one replica. Returns AM_ENOMEM, AM_EINVAL (bad params) or AM_OK. */
am_status am_stale_run_one(const am_objective *f, const am_optim_params *opt,
                           const am_stale_params *sp, uint64_t replica, am_stale_run *out);

typedef struct {
    size_t replicas;
    size_t reached;
    am_stats steps;     /* over the replicas that reached the target */
    am_stats coherence; /* coherence_min over all replicas where it is defined */
} am_stale_summary;

/* Runs replicas 0..R-1 in parallel (threads 0 = all cores) and reduces them in replica
 * order (independent of the thread count). */
am_status am_stale_ensemble(const am_objective *f, const am_optim_params *opt,
                            const am_stale_params *sp, size_t replicas, int threads,
                            am_stale_summary *out);

#endif
