/*
 * am_runtime_study.h -- time per iteration, fraction of fresh gradients and mean staleness
 * of the six parameter-server variants (montecarlo/am_ps.h) for each K, next to the closed
 * forms of theory/am_runtime.h (order statistics, renewal formulas), as one library call.
 *
 * Rows, in order: sync (K = P), k-sync for each K, k-batch-sync for each K, async (K = 1),
 * k-async for each K, k-batch-async for each K, so 2 + 4 nk rows. Each row holds the mean
 * and standard error over the replicas of the per-replica summaries of updates
 * burnin .. burnin + N - 1 (am_ps_summarize) and the closed forms (NaN where the toolkit has
 * none or the value is infinite).
 */
#ifndef AM_RUNTIME_STUDY_H
#define AM_RUNTIME_STUDY_H

#include "../core/am_common.h"
#include "../theory/am_runtime.h"

typedef struct {
    size_t workers;     /* P >= 1 */
    am_runtime runtime; /* learner runtime distribution */
    const size_t *k;    /* K of the k-variants, each in [1, P] */
    size_t nk;
    uint64_t updates; /* N >= 1 measured per replica */
    uint64_t burnin;  /* discarded per replica before measuring */
    size_t replicas;  /* >= 2 */
    uint64_t seed;
    int threads; /* 0 = all cores */
} am_runtime_study_params;

typedef struct {
    am_variant variant;
    size_t k;
    double time_per_iter, time_per_iter_sem, theory;
    double p_fresh, p_fresh_sem, p_fresh_theory;
    double mean_staleness, mean_staleness_sem, mean_staleness_theory;
} am_runtime_study_row;

typedef struct {
    size_t nrows;               /* 2 + 4 nk */
    am_runtime_study_row *rows; /* [nrows] */
    double mean_runtime;        /* E[X], NaN if infinite */
} am_runtime_study_result;

/* P = 8, exp:1, no K (must be set), N = 1000, burn-in 100, 200 replicas, seed 1, all
 * cores. */
am_runtime_study_params am_runtime_study_params_default(void);

/* Simulates every row and evaluates its closed forms. On failure a one-line reason in err
 * (AM_ESOLVER when a quadrature of E[X_{K:P}] fails). Free *res with
 * am_runtime_study_result_free (also after a failure). */
am_status am_runtime_study_run(const am_runtime_study_params *par, am_runtime_study_result *res,
                               char *err, size_t errlen);

/* Frees the rows of a result; safe on a zeroed or failed result. */
void am_runtime_study_result_free(am_runtime_study_result *res);

#endif
