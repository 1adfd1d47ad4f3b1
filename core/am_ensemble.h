/*
 * am_ensemble.h -- a parallel ensemble of independent replicas of any stochastic engine.
 *
 * An engine is described by an am_model: callbacks that start replica r, advance it from
 * step k0 to k1, and observe it. The ensemble runs R replicas with OpenMP, saves the
 * observables at the step indices of a grid, and reduces them on the fly into streaming
 * statistics (am_stats). Replicas are grouped in fixed chunks whose summaries are merged
 * in chunk order, so the result is bit-identical for any number of threads. A replica
 * whose state stops being finite (or exceeds the engine's bound) is counted as diverged
 * and contributes no further observations. Memory does not depend on the step count.
 * Under MPI the chunks are split over the ranks and merged in the same order (docs/mpi.md),
 * so the result is also bit-identical for any number of ranks.
 *
 * Divergence is a result, a failure is an error: advance returns AM_ENSEMBLE_ALIVE (0),
 * AM_ENSEMBLE_DIVERGED (1), or a negative am_ensemble_advance_error(status) when the engine
 * cannot go on (the convention of CVODE's return values); start returns an am_status. The
 * first failure in replica order stops the run and am_ensemble_run returns its status.
 */
#ifndef AM_ENSEMBLE_H
#define AM_ENSEMBLE_H

#include "am_common.h"
#include "am_stats.h"

/* Return values of am_model.advance (a failure is a negative am_ensemble_advance_error). */
enum { AM_ENSEMBLE_ALIVE = 0, AM_ENSEMBLE_DIVERGED = 1 };

/* The advance return value that reports a failure with status st (st != AM_OK). */
static inline int am_ensemble_advance_error(am_status st)
{
    return -(int)st;
}

typedef struct {
    size_t nobs;       /* observables per saved time */
    size_t nsummary;   /* per-replica summary values (0 if none) */
    size_t work_bytes; /* bytes of one replica's workspace (one per thread, or batch with
                          advance_batch, is allocated) */
    /* Initialises the replica's state in work (zeroed, 64-byte aligned). */
    am_status (*start)(const void *ctx, uint64_t replica, void *work);
    /* Advances the state from step k0 to step k1 >= k0; returns AM_ENSEMBLE_DIVERGED (1) if
       it diverged, AM_ENSEMBLE_ALIVE (0) if not, am_ensemble_advance_error(status) (< 0) if
       it failed. */
    int (*advance)(const void *ctx, void *work, uint64_t k0, uint64_t k1);
    /* Writes the nobs observables of the current state. */
    void (*observe)(const void *ctx, const void *work, double *obs);
    /* Optional: writes nsummary values after the last saved time, given the replica's
       saved observables obs[g * nobs + j] (NaN after divergence) and its divergence flag. */
    void (*summarize)(const void *ctx, const void *work, const double *obs, size_t ngrid,
                      int diverged, double *summary);
    const void *ctx;
    /* Optional, replicas side by side: batch > 1 replicas advanced together from k0 to k1
       by advance_batch over the workspaces works[0..n-1] (n <= batch, each started and not
       diverged), with the same result, byte for byte, as n calls of advance; writes each
       replica's divergence flag to diverged[j] (the values of advance: AM_ENSEMBLE_ALIVE,
       AM_ENSEMBLE_DIVERGED or a negative am_ensemble_advance_error(status) for a replica
       that failed). am_ensemble_run then groups consecutive
       replicas of a chunk in blocks of batch (0 or 1: one replica at a time). */
    size_t batch;
    void (*advance_batch)(const void *ctx, void *const *works, size_t n, uint64_t k0, uint64_t k1,
                          int *diverged);
} am_model;

/* A pair of models run side by side in one replica (am_model_pair_make): the same replica
 * index for both, so two models that draw their random numbers by replica and step (every
 * model of this library) see the same draws where they draw the same thing: common random
 * numbers. Observables: a's nobs values, then a's minus b's. */
#define AM_MODEL_PAIR_NOBS_MAX 16
typedef struct {
    const am_model *a, *b;
    size_t off_b; /* b's workspace after a's, 64-byte aligned */
} am_model_pair;

/* Makes *out from a and b (equal nobs <= AM_MODEL_PAIR_NOBS_MAX; both must outlive *out; ctx
 * too): nobs 2 a->nobs, no summary, one replica at a time; a replica diverges when either
 * model does. AM_EINVAL otherwise. */
am_status am_model_pair_make(const am_model *a, const am_model *b, am_model_pair *ctx,
                             am_model *out);

typedef struct {
    size_t replicas;  /* R >= 1 */
    int threads;      /* 0 = all available cores */
    int keep_summary; /* store every replica's summary values in the result */
} am_ensemble_params;

typedef struct {
    size_t ngrid, nobs, nsummary, replicas;
    size_t diverged;         /* replicas that diverged before the last saved time */
    size_t *alive;           /* [ngrid]: replicas finite at each saved time */
    am_stats *obs;           /* [ngrid * nobs] */
    am_stats *summary_stats; /* [nsummary], over replicas with finite summaries */
    double *summary;         /* [replicas * nsummary] if keep_summary, else NULL */
} am_ensemble_result;

/* Default parameters: 1000 replicas, all cores, summaries not kept. */
am_ensemble_params am_ensemble_params_default(void);

/* Runs the ensemble on the saved steps k[0..ngrid-1] (non-decreasing, below
 * AM_RNG_STEP_LIMIT; replicas below AM_RNG_REPLICA_LIMIT). Allocates *out
 * (free with am_ensemble_result_free). Returns AM_EINVAL, AM_ENOMEM or the failure of the
 * model's start or advance in the lowest failing chunk of replicas (then *out is NULL). */
am_status am_ensemble_run(const am_model *model, const uint64_t *k, size_t ngrid,
                          const am_ensemble_params *params, am_ensemble_result **out);

/* Bytes an ensemble run would allocate (workspaces, chunk statistics, kept summaries). */
double am_ensemble_memory(const am_model *model, size_t ngrid, const am_ensemble_params *params);

/* Frees a result; NULL is safe. */
void am_ensemble_result_free(am_ensemble_result *res);

/* Number of threads a request resolves to (0 = all cores). */
int am_ensemble_threads(int requested);

/* Independent jobs in parallel: run(ctx, q, err, errlen) for q = 0..n-1 over OpenMP threads
 * (0 = all cores), dynamically scheduled one job at a time. Every job runs; the result is the
 * status of the lowest failing q (AM_OK if none) and its message in err, whatever the threads,
 * as am_ensemble_run reports its lowest failing chunk. err may be NULL. */
typedef am_status (*am_ensemble_job_fn)(void *ctx, size_t q, char *err, size_t errlen);
am_status am_ensemble_jobs(size_t n, int threads, am_ensemble_job_fn run, void *ctx, char *err,
                           size_t errlen);

/* MPI build: whether am_ensemble_run splits its chunks of replicas over the ranks of
 * MPI_COMM_WORLD (on by default; every rank must then make the same calls, as every rank of
 * a command does). A caller that runs different ensembles on different ranks (the sweep
 * runner, inside its cells) turns it off for that time. Returns the previous setting; no
 * effect in the serial build or without MPI_Init. */
int am_ensemble_set_distributed(int on);

/* Progress of ensemble runs (optional, off by default): after am_ensemble_progress_set(fn,
 * ctx), every am_ensemble_run started by the calling thread calls fn(ctx, done, total) from
 * that thread, after each chunk of replicas it finishes itself and at the end, with the
 * replicas finished so far (chunks run by other threads count when they end): done never
 * decreases within a run and reaches total in exactly one call, the run's last (so a caller
 * counts runs by the calls with done = total). fn = NULL turns it off. The library never
 * prints: fn is the caller's (the amsgd command prints a progress line on stderr). Results do
 * not depend on it. */
typedef void (*am_ensemble_progress_fn)(void *ctx, size_t done, size_t total);
void am_ensemble_progress_set(am_ensemble_progress_fn fn, void *ctx);

#endif
