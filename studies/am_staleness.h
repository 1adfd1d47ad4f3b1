/*
 * am_staleness.h -- steps to a target loss under simulated staleness Uniform{0..s} for each
 * optimiser and s, normalised by s = 0, with the gradient coherence along the runs (Dai et
 * al., ICLR 2019; montecarlo/am_stale.h), as one library call.
 *
 * For optimiser o and bound s, R replicas of am_stale_ensemble give
 *   steps_to_target      mean over the replicas that reached the target (NaN if none),
 *                        with its standard error;
 *   never_reached        1 - reached / R;
 *   normalized           steps_to_target(o, s) / steps_to_target(o, 0) (NaN without a
 *                        reaching s = 0 run; the s = 0 cells are always run);
 *   coherence_min        mean over the replicas where it is defined, with its error.
 * Step sizes: the registry's (am_optim.h), one tenth of it for pca (the Oja direction is
 * about as large as the top eigenvalue), or one lr for every optimiser.
 */
#ifndef AM_STALENESS_H
#define AM_STALENESS_H

#include "../core/am_common.h"
#include "../montecarlo/am_dataset.h"
#include "../montecarlo/am_optim.h"
#include "../montecarlo/am_stale.h"

typedef struct {
    am_objective_kind objective;
    const am_dataset *data; /* NULL: the synthetic set of rows x features drawn from the seed */
    size_t rows, features;  /* synthetic set only */
    const am_optim_kind *optimizers;
    size_t noptimizers;
    const size_t *s; /* staleness bounds, reported in this order */
    size_t ns;
    am_stale_params stale; /* workers, batch, target, max_steps, seed (stale.s is ignored) */
    size_t replicas;       /* >= 2 */
    int threads;           /* 0 = all cores */
    double momentum;       /* mu of momentum and nesterov */
    double lr;             /* NaN: the registry's step sizes */
    /* optional: called after each (optimiser, s) ensemble with the ensembles done and their
     * total (the library never prints); NULL: none */
    void (*progress)(void *ctx, size_t done, size_t total);
    void *progress_ctx;
} am_staleness_params;

/* One (optimiser, s) cell. */
typedef struct {
    size_t s;
    am_optim_kind optimizer;
    double lr;
    double steps_to_target, steps_to_target_sem, never_reached, normalized;
    double coherence_min, coherence_min_sem;
    size_t replicas, reached;
} am_staleness_row;

typedef struct {
    size_t nrows;           /* noptimizers * ns, optimiser-major */
    am_staleness_row *rows; /* [nrows] */
    double optimum;         /* F* of the objective */
    size_t data_rows, data_features;
    const char *field; /* after AM_EINVAL: the parameter at fault ("data"), else NULL */
} am_staleness_result;

/* lsq, synthetic 1000 x 10, no optimisers or s (must be set), am_stale_params_default,
 * 20 replicas, all cores, momentum 0.9, registry step sizes. */
am_staleness_params am_staleness_params_default(void);

/* Runs every cell. On failure a one-line reason in err; AM_EINVAL with res->field = "data"
 * when the data set does not fit the objective. Free *res with am_staleness_result_free
 * (also after a failure). */
am_status am_staleness_run(const am_staleness_params *par, am_staleness_result *res, char *err,
                           size_t errlen);

/* Frees the rows of a result; safe on a zeroed or failed result. */
void am_staleness_result_free(am_staleness_result *res);

#endif
