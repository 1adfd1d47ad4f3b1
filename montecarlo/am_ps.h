/*
 * am_ps.h -- event-driven simulation of a parameter server and P learners (Dutta et al.
 * AISTATS 2018; theory.md section 7).
 *
 * Learner i computes one mini-batch gradient on the iterate w_v it read when it started; the
 * computation of its n-th job takes X_{i,n} = Q(U) with U drawn from the Philox stream
 * AM_STREAM_WORKERS at (seed, replica, step = n P + i), so every runtime is a pure function of
 * (seed, replica, learner, job) and variants see the same runtimes (common random numbers).
 * Finishing times sit in a binary heap ordered by (time, learner), which fixes the order of
 * simultaneous events. Update j turns w_j into w_{j+1} with the gradients of its batch; a
 * gradient computed on w_v has staleness j - v. The variants (am_runtime.h):
 *   sync          all P start on w_j; the update waits for all of them
 *   k-sync        all P start on w_j; the first K finishers are used, the others cancelled
 *   k-batch-sync  all P start on w_j; a finisher restarts on w_j at once; after K gradients
 *                 the update happens and every running job is cancelled
 *   async         k-batch-async with K = 1
 *   k-async       a finisher pushes its gradient and idles; when K distinct learners have
 *                 pushed, the update happens and those K restart on w_{j+1}; the others
 *                 keep running on their stale iterates
 *   k-batch-async a finisher pushes its gradient and restarts at once on the newest iterate
 *                 (after the update if its gradient completed the batch)
 * The synchronous variants restart every learner at each update time; the asynchronous ones
 * start all learners on w_0 at time 0.
 */
#ifndef AM_PS_H
#define AM_PS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "../theory/am_runtime.h"
#include "../core/am_stats.h"

/* Optional deterministic runtimes: the time of learner's job-th computation (tests, traces). */
typedef double (*am_ps_runtime_fn)(const void *ctx, size_t learner, uint64_t job);

typedef struct {
    size_t workers;      /* P >= 1 */
    am_runtime runtime;  /* distribution of X */
    am_variant variant;  /* scheme of the server */
    size_t k;            /* K of the k-variants (ignored by sync and async) */
    uint64_t seed;       /* Philox key, with the replica */
    am_ps_runtime_fn fn; /* if not NULL, runtimes come from fn instead of the stream */
    const void *fn_ctx;
} am_ps_params;

/* P = 4, exp:1, async, K = 1, seed 1, no runtime function. */
am_ps_params am_ps_params_default(void);

/* One update of the server, valid until the next call on the same simulator. */
typedef struct {
    uint64_t index;            /* j: the update turns w_j into w_{j+1} */
    double time;               /* wall-clock time of the update */
    size_t ngrad;              /* gradients used */
    const uint64_t *staleness; /* [ngrad]: j - v for a gradient computed on w_v */
    const size_t *learner;     /* [ngrad]: which learner computed it, in arrival order */
} am_ps_update;

typedef struct am_ps am_ps;

/* Checks the parameters (P, K, runtime) and builds a simulator positioned at replica 0;
 * NULL with *status set on failure (AM_EINVAL, AM_ENOMEM). */
am_ps *am_ps_alloc(const am_ps_params *params, am_status *status);

/* Frees a simulator made by am_ps_alloc; NULL is safe. */
void am_ps_free(am_ps *ps);

/* Restarts the simulation at time 0, before update 0, for the given replica. */
void am_ps_reset(am_ps *ps, uint64_t replica);

/* Simulates until the next update and describes it in *u. */
void am_ps_next(am_ps *ps, am_ps_update *u);

/* Per-replica summary of updates burnin .. burnin+n-1 (n >= 1). */
typedef struct {
    double time_per_iter;  /* (T_{burnin+n} - T_{burnin}) / n, with T_0 = 0 */
    double p_fresh;        /* fraction of the gradients with staleness 0 */
    double mean_staleness; /* mean staleness of the gradients */
    double max_staleness;  /* largest staleness seen */
} am_ps_summary;

/* Resets to the replica, runs burnin + n updates and summarises the last n. */
void am_ps_summarize(am_ps *ps, uint64_t replica, uint64_t burnin, uint64_t n, am_ps_summary *out);

/* Runs replicas 0..R-1 in parallel (threads: 0 = all cores) and reduces their summaries in
 * replica order, so the result does not depend on the thread count: stats[0] time per
 * iteration, stats[1] fraction fresh, stats[2] mean staleness (over replicas). */
am_status am_ps_ensemble(const am_ps_params *params, size_t replicas, uint64_t burnin, uint64_t n,
                         int threads, am_stats stats[3]);

#endif
