/*
 * am_nnstale.h -- Dai et al.'s staleness protocol (ICLR 2019) on the networks of
 * models/am_nn.h and a labelled set (models/am_classset.h).
 *
 * SSP semantics (default): P workers advance in iterations k = 0, 1, ... In iteration k
 * worker j = 0..P-1 draws r_j ~ Uniform{0..s} (clamped to k) and a minibatch of B training
 * rows (uniform, with replacement), and computes its gradient on theta^(k - r_j), the
 * parameters as they were at the start of iteration k - r_j. The P updates are then applied
 * one after another with the optimiser (am_optim.h): theta^(k+1) = U_P(...U_1(theta^(k))).
 * One batch = one worker update, so an iteration counts P batches; staleness is counted in
 * iterations, i.e. up to s P updates.
 * Averaged semantics: the P gradients of an iteration are averaged into one update (still
 * P batches per iteration).
 * The snapshots theta^(k-s-1) .. theta^(k+1) live in a ring of s + 2 flat vectors; the first
 * update of an iteration writes theta^(k+1) out of place into the ring's free slot, the
 * others update it in place: memory is (s + 3) dim doubles whatever the number of batches.
 * Random numbers: the Philox stream AM_STREAM_NNSTALE at (seed, replica, iteration k),
 * words j (B + 1) .. j (B + 1) + B for worker j (r_j first, then the rows), so runs that
 * differ only in s, P's semantics or the optimiser see the same minibatches; the start is
 * am_nn_init(seed, replica). Seed index i of a cell is replica i.
 * Metric: after each iteration that crosses a multiple of eval_every batches, the accuracy on
 * the first eval_rows test rows; batches to target = the batch count at the first such
 * evaluation with accuracy >= target. test_accuracy is the accuracy on the whole test set
 * where the run stops (at the target or after max_batches). Gradient coherence at each
 * evaluation (s >= 1, k + 1 >= s): the lag-s cosine cos(grad F(theta^(k+1)), grad
 * F(theta^(k+1-s))), F the mean loss over the first coherence_rows training rows; 1 for s = 0. With
 * dai_coherence also Dai et al.'s gradient coherence (their definition, theory.md section 8), on
 * the same F: mu = min over k+1-s <= j <= k+1 of <grad F(theta^(k+1)), grad F(theta^j)> / |grad
 * F(theta^(k+1))|^2, the worst alignment over the whole staleness window rather than at its far
 * end, and not normalised by the old gradient's norm (mu <= 1; 1 for s = 0). A run diverges at its
 * first non-finite loss (the run stops before that update) or at a non-finite iterate at an
 * evaluation (models/am_nntrain.h, the one training engine).
 */
#ifndef AM_NNSTALE_H
#define AM_NNSTALE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "../core/am_stats.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../validate/am_check.h"

typedef enum { AM_NNSTALE_SSP = 0, AM_NNSTALE_AVERAGED } am_nnstale_semantics;

typedef struct {
    size_t workers; /* P >= 1 */
    size_t s;       /* staleness bound in iterations */
    size_t batch;   /* B rows per worker gradient */
    am_nnstale_semantics semantics;
    double target;         /* test accuracy to reach, in (0, 1) */
    uint64_t max_batches;  /* budget in batches */
    size_t eval_every;     /* batches between evaluations */
    size_t eval_rows;      /* test rows of the evaluations (0: all) */
    size_t coherence_rows; /* training rows of the coherence gradients (0: all) */
    int coherence_trace;   /* 1: keep the cosine of every evaluation (outcome trace) */
    uint64_t seed;
    /* polled at every evaluation: once set the run stops with AM_ECANCELED (may be NULL) */
    const volatile sig_atomic_t *cancel;
    /* 1: also Dai et al.'s gradient coherence at every evaluation (s more gradients on the
       coherence rows per evaluation: s + 1 in all, against 2 for the lag-s cosine) */
    int dai_coherence;
} am_nnstale_params;

/* P 1, s 0, B 32, ssp, target 0.8, 20000 batches, evaluations every 100 batches on 2000
 * test rows, coherence on 512 training rows, seed 1, no cancel flag. */
am_nnstale_params am_nnstale_params_default(void);

/* The step size of an optimiser for the networks when none is given or tuned: sgd 0.1,
 * momentum 0.01, nesterov 0.01 (v = mu v + g with mu 0.9: effective step 0.1), adam 1e-3,
 * rmsprop 1e-3, adagrad 0.05. */
double am_nnstale_default_lr(am_optim_kind kind);

typedef struct {
    int reached;              /* 1 if the target accuracy was reached */
    int diverged;             /* 1 if the loss or parameters stopped being finite */
    double batches;           /* batches to the target (NaN if not reached) */
    double test_accuracy;     /* whole test set, where the run stopped */
    double coherence;         /* mean cosine over the evaluations (NaN if none) */
    double coherence_min;     /* smallest cosine (NaN if none) */
    double dai_coherence;     /* dai_coherence: Dai et al.'s coherence, mean over evaluations */
    double dai_coherence_min; /* and its smallest value (NaN if none or not asked) */
    size_t trace_n;           /* coherence_trace: evaluations with a cosine */
    double *trace_batches, *trace_cosine; /* [trace_n] each (malloc'd; NULL without trace) */
} am_nnstale_outcome;

/* One run of seed index replica; the parameters where it stopped go to theta_final unless it
 * is NULL. With coherence_trace the outcome owns its trace: free it with
 * am_nnstale_outcome_free. AM_EINVAL for bad parameters, AM_ENOMEM. */
am_status am_nnstale_run_one(const am_nn *net, const am_optim_params *opt,
                             const am_nnstale_params *p, const am_classset *train,
                             const am_classset *test, uint64_t replica, am_nnstale_outcome *out,
                             double *theta_final);

/* Frees the trace of an outcome (not the outcome itself); NULL is safe. */
void am_nnstale_outcome_free(am_nnstale_outcome *u);

/* The step-size search (am_nnstale_tune and the dai2019 preset): grid point j = 0..2 half
 * around lr0 is lr0 10^((j - half) / 2); a point scores the sum over its seeds of the batches
 * to target, a miss counting twice the budget (lower is better). */
double am_nnstale_grid_lr(double lr0, int half, size_t j);
double am_nnstale_tune_score(const am_nnstale_outcome *runs, size_t seeds, uint64_t max_batches);

/* One cell of a sweep: an optimiser, a worker count and a staleness bound, over the seeds. */
typedef struct {
    size_t opt; /* index into the sweep's optimisers */
    size_t workers, s;
    double lr;
    am_nnstale_outcome *runs; /* [seeds] */
    size_t reached;
    am_stats steps;         /* batches to target over the seeds that reached it */
    am_stats normalized;    /* batches(s) / batches(s = 0) per seed, same optimiser and P */
    am_stats test_accuracy; /* over all seeds */
    am_stats coherence;     /* over the seeds where defined */
    am_stats dai_coherence; /* Dai et al.'s, over the seeds where defined (dai_coherence) */
    /* normalized's 95 % t interval (n - 1 degrees of freedom), and its median with a 95 %
       percentile bootstrap interval (AM_NNSTALE_BOOT resamples; the ratios are heavy-tailed) */
    am_check_interval normalized_t, normalized_median;
} am_nnstale_cell;

/* Bootstrap resamples of the median of a cell's normalised batches. */
#define AM_NNSTALE_BOOT 2000

typedef struct {
    size_t nopt;
    const am_optim_params *opts; /* step sizes included */
    size_t ns;
    const size_t *s; /* s = 0 is run as the reference even if absent */
    size_t nworkers;
    const size_t *workers;
    size_t seeds;           /* seed indices 0..seeds-1 */
    am_nnstale_params base; /* workers and s are overridden per cell */
    int threads;            /* 0 = all cores */
} am_nnstale_sweep;

typedef struct {
    size_t ncells;          /* nopt x nworkers x ns', s' = the s list with 0 added if absent */
    size_t ns_run;          /* s' length */
    size_t *s_run;          /* s' */
    am_nnstale_cell *cells; /* [(o nworkers + w) ns_run + i] */
    size_t seeds;
} am_nnstale_result;

/* Runs every (optimiser, P, s, seed) in parallel over OpenMP threads (one BLAS thread
 * each) and reduces them in a fixed order: the result does not depend on the thread count. */
am_status am_nnstale_run(const am_nnstale_sweep *sw, const am_nn *net, const am_classset *train,
                         const am_classset *test, am_nnstale_result **out);

/* Frees a result; NULL is safe. */
void am_nnstale_result_free(am_nnstale_result *r);

/* Tunes the step of one optimiser at s = 0 with P workers: the grid lr0 10^(j/2),
 * j = -4..4 (lr0 = opt->lr), ranked by mean batches to target over the seeds (a run that does
 * not reach it counts 2 max_batches); ties go to the smaller step. Writes the best step. */
am_status am_nnstale_tune(const am_nn *net, const am_optim_params *opt, const am_nnstale_params *p,
                          size_t seeds, int threads, const am_classset *train,
                          const am_classset *test, double *best_lr);

#endif
