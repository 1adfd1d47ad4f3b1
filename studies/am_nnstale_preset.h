/*
 * am_nnstale_preset.h -- Dai et al.'s experiment grid (`--preset dai2019`) over the SSP
 * staleness protocol of am_nnstale.h, run as a checkpointed, resumable, MPI-distributable
 * sweep (am_sweep.h).
 *
 * Cells: one per (worker count P, model, optimiser), P outermost and the optimiser innermost:
 * cell = (w nmodels + m) nopt + o. A cell
 *   1. tunes the optimiser's step at s = 0 with its P workers over the grid
 *      lr0 10^(j/2), j = -H..H (lr0 = opts[o].lr), every seed index 0..seeds-1, ranked by the
 *      mean batches to target over the seeds (a run that misses counts 2 max_batches), ties
 *      to the smaller step (the rule of am_nnstale_tune);
 *   2. runs every s >= 1 of the list, every seed index, at that step, held fixed. The s = 0
 *      runs of the cell are the tuning runs of the chosen step (the same runs: same stream,
 *      start and step).
 * The runs of a cell are spread over OpenMP threads (one BLAS thread each); a cell's values
 * do not depend on the thread count. The cancel flag is polled at every evaluation of every
 * run: a cell in progress then returns AM_ECANCELED and is not kept.
 *
 * Values of a cell (am_nnpreset_nvalues): [0] the tuned step, [1 + j] the mean score of grid
 * step j (j = 0..2H), then for each s of the list (s[0] = 0) and seed index k the
 * AM_NNPRESET_RUN_NVALUES values of that run at offset 2H + 2 + (i seeds + k) NV.
 *
 * The checkpoint's fingerprint holds the study's name and version (AM_NNPRESET_VERSION, to be
 * raised whenever a cell's values change for the same parameters), the Philox stream id
 * AM_STREAM_NNSTALE, the data set's identity (spec, shape, CRC-32 of pixels and labels) and
 * every parameter that changes a cell's values (not the thread count).
 */
#ifndef AM_NNSTALE_PRESET_H
#define AM_NNSTALE_PRESET_H

#include <signal.h>
#include <stddef.h>

#include "../core/am_common.h"
#include "../core/am_stats.h"
#include "../validate/am_check.h"
#include "am_nnstale.h"

#define AM_NNPRESET_VERSION 1

/* Values of one run inside a cell, in this order. */
enum {
    AM_NNPRESET_BATCHES = 0, /* batches to target (NaN if not reached) */
    AM_NNPRESET_TEST_ACCURACY,
    AM_NNPRESET_COHERENCE,     /* mean cosine along the run (1 for s = 0) */
    AM_NNPRESET_COHERENCE_MIN, /* smallest cosine */
    AM_NNPRESET_DIVERGED,      /* 0 or 1 */
    AM_NNPRESET_COH_EARLY,     /* mean cosine over the first half of the evaluations */
    AM_NNPRESET_COH_LATE,      /* mean cosine over the second half */
    AM_NNPRESET_RUN_NVALUES
};

/* The preset's lists. Models are named: mlr, mlp1, mlp2, mlp3 (1, 2, 3 hidden ReLU layers of
 * `width` units) and cnn (LeNet-like, models/am_nn.h). */
typedef struct {
    size_t nmodels;
    const char *models[8];
    size_t nopt;
    am_optim_kind opts[8];
    size_t nworkers;
    size_t workers[8];
    size_t ns;
    size_t s[8];
    size_t seeds;
    size_t width;         /* hidden width of the MLPs */
    int grid_half;        /* H of the tuning grid */
    uint64_t max_batches; /* budget per run */
    double budget_factor; /* the runs at s >= 1: budget_factor x their seed's s = 0 batches */
    size_t eval_every, eval_rows, coherence_rows, batch;
} am_nnpreset_spec;

/* dai2019: models mlr, mlp1, mlp2, mlp3, cnn; sgd, momentum, nesterov, adam, rmsprop,
 * adagrad; P 1, 2, 4, 8; s 0, 4, 8, 16, 32; 10 seeds; width 32; H 4; 4000 batches for the
 * tuning runs, 8 times its seed's batches at s = 0 for a run at s >= 1; evaluations every 50
 * batches on 1000 test rows, coherence on 256 training rows, batch 32.
 * quick: mlr, mlp2; sgd, momentum, adam; P 1, 4; s 0, 8; 6 seeds; H 2; 2000 batches. */
void am_nnpreset_dai2019(int quick, am_nnpreset_spec *spec);

/* The network spec of a preset model name for the width ("mlp2", 32 -> "mlp:32,32") into buf;
 * AM_EINVAL for an unknown name. */
am_status am_nnpreset_model_spec(const char *name, size_t width, char *buf, size_t len);

/* The target test accuracy of a preset model: 0.8 for mlr, 0.82 for the others. */
double am_nnpreset_target(const char *name);

typedef struct {
    size_t nmodels;
    const am_nn *const *nets;       /* [nmodels] */
    const char *const *model_names; /* [nmodels] preset names (output and fingerprint) */
    const double *targets;          /* [nmodels] target test accuracies */
    size_t nopt;
    const am_optim_params *opts; /* lr = lr0, the centre of the tuning grid */
    size_t nworkers;
    const size_t *workers;
    size_t ns;
    const size_t *s; /* s[0] = 0, the others >= 1 */
    size_t seeds;
    int grid_half;          /* H >= 0: 2H + 1 grid steps */
    am_nnstale_params base; /* workers, s, target, coherence_trace, cancel are set per run */
    /* > 0: a run at s >= 1 has the budget budget_factor x (its seed's batches to target at
       s = 0), so that a miss means a slowdown beyond budget_factor; where that seed missed at
       s = 0, or with 0, the budget is base.max_batches (as every tuning run's) */
    double budget_factor;
    int threads; /* 0 = all cores */
    const am_classset *train, *test;
    const char *data; /* the data spec (fingerprint) */
    const char *checkpoint;
    int resume;
    const volatile sig_atomic_t *cancel;
    void (*progress)(void *ctx, size_t done, size_t total, size_t computed, double elapsed);
    void *progress_ctx;
} am_nnpreset_params;

typedef struct {
    size_t ncells, nvalues;
    double *values;      /* [ncells nvalues] */
    unsigned char *done; /* [ncells] */
    size_t cells_done;
} am_nnpreset_result;

/* The budget of a run at s >= 1 whose seed took b0 batches to the target at s = 0 (NaN: it
 * missed): ceil(budget_factor b0), or base.max_batches without a factor or a reference. */
double am_nnpreset_budget(const am_nnpreset_params *p, double b0);

/* Doubles per cell. */
size_t am_nnpreset_nvalues(size_t ns, size_t seeds, int grid_half);

/* Runs the sweep (checkpoint, resume, MPI as am_sweep_run). AM_EINVAL with a reason in err
 * for bad parameters or a checkpoint of other parameters; AM_ECANCELED after the cancel flag
 * (the result then holds the finished cells). On ranks other than 0 under MPI the result
 * holds only that rank's cells. */
am_status am_nnpreset_run(const am_nnpreset_params *p, am_nnpreset_result **out, char *err,
                          size_t errlen);

void am_nnpreset_result_free(am_nnpreset_result *r);

/* Summary of one (cell, s index) over the seeds. */
typedef struct {
    double lr;
    size_t reached;      /* seeds that reached the target */
    am_stats steps;      /* batches over the seeds that reached it */
    am_stats normalized; /* batches(s) / batches(s = 0), per seed reaching both */
    /* a lower bound of the normalised batches: per seed whose s = 0 run reached the target,
       batches(s) / batches(s = 0) with a miss (or divergence) counted as its budget
       (am_nnpreset_budget) */
    am_stats normalized_lower;
    am_stats test_accuracy;                              /* over the seeds with a finite accuracy */
    am_stats coherence, coherence_early, coherence_late; /* over the seeds where defined */
    /* normalized's 95 % t interval (n - 1 degrees of freedom), and its median with a 95 %
       percentile bootstrap interval (AM_NNPRESET_BOOT resamples; the ratios are heavy-tailed) */
    am_check_interval normalized_t, normalized_median;
} am_nnpreset_row;

/* Bootstrap resamples of the median of a row's normalised batches. */
#define AM_NNPRESET_BOOT 2000

void am_nnpreset_summary(const am_nnpreset_params *p, const am_nnpreset_result *r, size_t cell,
                         size_t si, am_nnpreset_row *row);

/* The values of run (si, seed k) of a cell. */
const double *am_nnpreset_run_values(const am_nnpreset_params *p, const am_nnpreset_result *r,
                                     size_t cell, size_t si, size_t k);

#endif
