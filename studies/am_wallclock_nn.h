/*
 * am_wallclock_nn.h -- Dutta et al.'s parameter-server variants (AISTATS 2018) training a
 * network of models/am_nn.h on a labelled set (models/am_classset.h), test error against
 * wall-clock time, over seeds.
 *
 * The server and its P learners are the event-driven simulator of montecarlo/am_ps.h (seed,
 * replica = seed index): update j turns w_j into w_{j+1} at wall-clock time T_{j+1} with the
 * n_j gradients of its batch, gradient l computed on a minibatch of B training rows at the
 * iterate w_{j - s_l} its learner read when it started (staleness s_l from the simulator):
 *   w_{j+1} = step(w_j, (1/n_j) sum_l grad L_l(w_{j - s_l}))
 * with the optimiser of montecarlo/am_optim.h (sgd: w_j - lr g). The run stops at the
 * wall-clock budget T: the updates with T_{j+1} <= T are applied.
 * Minibatch rows: the Philox stream AM_STREAM_NNSTALE at (seed, seed index, update j), words
 * l (B + 1) + 1 .. l (B + 1) + B for the l-th gradient of the update in arrival order (word
 * l (B + 1) is skipped), the layout of studies/am_nnstale.h, so Sync with P = 1 is Dai's
 * protocol with P = 1 and s = 0, i.e. plain minibatch SGD, bit for bit; start am_nn_init(seed,
 * seed index). Runtimes: AM_STREAM_WORKERS through the simulator, the same for every variant.
 * Snapshots: a first pass of the simulator alone finds the largest staleness s_max of the run;
 * the iterates w_{j - s_max} .. w_{j+1} then live in a ring of s_max + 2 vectors (memory
 * checked up front; no staleness is clamped), the update written out of place into the
 * ring's free slot. Memory does not grow with the number of updates.
 * Evaluation: at the wall-clock times t_g = T g / (G - 1), g = 0..G-1, the test error
 * 1 - accuracy on the first eval_rows test rows of the iterate current at t_g (w_j with
 * T_j <= t_g < T_{j+1}, T_0 = 0). Every seed is evaluated at the same times, so the curves are
 * means and standard errors over seeds at fixed wall-clock times.
 * Summaries per variant, each the mean and standard error over seeds of a per-seed value:
 *   time_per_update  (T_n - T_m) / (n - m), m = floor(n / 4): the time per update past the
 *                    first quarter of the n updates of the budget (the closed forms are
 *                    stationary, and every learner starts fresh at time 0)
 *   p0               fraction of its gradients with staleness 0
 *   mean_staleness   mean staleness of its gradients
 *   floor            mean test error over the t_g >= 3T/4 (the error floor, if reached)
 *   time_to_target   first t_g with test error <= target (over the seeds that reach it)
 * next to the closed forms of theory/am_runtime.h (Dutta's time per update, P(fresh)).
 */
#ifndef AM_WALLCLOCK_NN_H
#define AM_WALLCLOCK_NN_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "../core/am_stats.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../theory/am_runtime.h"
#include "../montecarlo/am_wallclock.h"

typedef struct {
    size_t workers;     /* P >= 1 */
    am_runtime runtime; /* learner runtime distribution */
    const am_wallclock_variant *variants;
    size_t nvariants;
    double time;          /* wall-clock budget T > 0 */
    size_t ngrid;         /* evaluation times >= 2 */
    size_t batch;         /* B rows per gradient */
    am_optim_params opt;  /* optimiser and step */
    size_t seeds;         /* seed indices 0..seeds-1 */
    uint64_t seed;        /* Philox key */
    size_t eval_rows;     /* test rows per evaluation (0: all) */
    double target;        /* test error of time_to_target, in (0, 1) */
    uint64_t max_updates; /* refuse budgets that need more updates than this */
    int threads;          /* 0 = all cores */
} am_wallclock_nn_params;

/* P 8, exp:1, no variants (must be set), T 500, 26 evaluation times, B 32, sgd with step 0.1,
 * 5 seeds, seed 1, 2000 test rows, target 0.25, at most 10^7 updates, all cores. */
am_wallclock_nn_params am_wallclock_nn_params_default(void);

/* One run (one variant, one seed). */
typedef struct {
    double *test_error; /* [ngrid], NaN from a divergence on */
    uint64_t *updates;  /* [ngrid]: updates applied by t_g */
    uint64_t n;         /* updates in the budget */
    double time_per_update, p0, mean_staleness;
    uint64_t max_staleness;
    int diverged;
} am_wallclock_nn_outcome;

/* The curves and summaries of one variant over the seeds. */
typedef struct {
    am_variant variant;
    size_t k, batch;              /* K as given; gradients per update */
    double *time;                 /* [ngrid] t_g */
    double *test_error;           /* [ngrid] mean over the seeds alive at t_g (NaN if none) */
    double *test_error_sem;       /* [ngrid] its standard error (NaN below 2 seeds) */
    double *updates_mean;         /* [ngrid] mean updates applied by t_g */
    size_t *alive;                /* [ngrid] seeds not diverged at t_g */
    size_t diverged;              /* seeds that diverged */
    am_stats time_per_update;     /* over seeds */
    double time_per_update_dutta; /* am_runtime_time_per_iter (NaN without closed form) */
    am_stats p0;
    double p0_dutta; /* am_runtime_p_fresh (NaN without closed form) */
    am_stats mean_staleness;
    am_stats floor;          /* over the seeds alive at T */
    am_stats time_to_target; /* over the seeds that reach the target */
    size_t reached;
} am_wallclock_nn_curve;

typedef struct {
    size_t ngrid, nvariants, seeds;
    am_wallclock_nn_curve *curves; /* [nvariants] */
} am_wallclock_nn_result;

/* One run of variant v (0..nvariants-1) and seed index replica; out->test_error and
 * out->updates must hold ngrid values. The iterate at T goes to theta_final unless it is NULL.
 * AM_EINVAL (bad parameters, with a reason in err), AM_ENOMEM (the ring exceeds
 * AM_MEMORY_LIMIT or allocation fails). */
am_status am_wallclock_nn_run_one(const am_nn *net, const am_classset *train,
                                  const am_classset *test, const am_wallclock_nn_params *par,
                                  size_t v, uint64_t replica, am_wallclock_nn_outcome *out,
                                  double *theta_final, char *err, size_t errlen);

/* Every (variant, seed) in parallel over OpenMP threads (one BLAS thread each), reduced in
 * seed order: the result does not depend on the thread count. Free *res with
 * am_wallclock_nn_result_free (also after a failure). */
am_status am_wallclock_nn_run(const am_nn *net, const am_classset *train, const am_classset *test,
                              const am_wallclock_nn_params *par, am_wallclock_nn_result *res,
                              char *err, size_t errlen);

/* Frees the arrays of a result; safe on a zeroed or failed result. */
void am_wallclock_nn_result_free(am_wallclock_nn_result *res);

#endif
