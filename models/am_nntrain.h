/*
 * am_nntrain.h -- the one network training engine of the studies (staleness --model, its
 * dai2019 preset, wallclock --model, tradeoff): the workspaces of a run under one memory
 * rule, the minibatch gradient, the update of one step from stale gradients out of a ring
 * of iterates, the evaluation, the failure rule, and the parallel loop over independent runs.
 * The studies keep their protocols (which iterate each gradient reads, when to evaluate, when
 * to stop); the arithmetic of a training step is written here once.
 *
 * Failure rule: a run diverges at its first non-finite loss (that gradient is not applied)
 * or at its first non-finite iterate; a diverged run is a result, not an error.
 * Minibatches: B rows drawn uniformly with replacement, row = (next 64-bit word of the
 * run's Philox stream) mod n.
 */
#ifndef AM_NNTRAIN_H
#define AM_NNTRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "../core/am_ensemble.h"
#include "../core/am_rng.h"
#include "../montecarlo/am_optim.h"
#include "am_classset.h"
#include "am_nn.h"

/* Rows per chunk of the evaluation passes (the evaluation workspace's batch). */
#define AM_NNTRAIN_EVAL_CHUNK 256

/* One run's state. ring holds nslot iterates of dim doubles (slot of step k: k mod nslot),
 * g one gradient, extra nextra more vectors of dim (sums, held gradients, coherence); idx the
 * minibatch's rows; w the gradient's workspace (batch rows), we the evaluation's; o the
 * optimiser. eval_rows: test rows per evaluation (the request, all rows if 0 or too many). */
typedef struct {
    const am_nn *net;
    const am_classset *train, *test;
    size_t dim, batch, nslot, nextra, eval_rows;
    double *ring, *g, *extra;
    size_t *idx;
    am_nn_work *w, *we;
    am_optim *o;
} am_nntrain;

/* AM_OK if the data sets fit the network (inputs, classes, at least one row each), else
 * AM_EINVAL. */
am_status am_nntrain_fits(const am_nn *net, const am_classset *train, const am_classset *test);

/* Bytes a run allocates (ring, gradient, extra vectors, rows, both workspaces); SIZE_MAX if
 * that overflows. */
size_t am_nntrain_bytes(const am_nn *net, size_t batch, size_t nslot, size_t nextra);

/* Allocates a run's state (zeroed, the optimiser reset): AM_EINVAL for an empty ring or batch
 * or invalid optimiser parameters, AM_ENOMEM above AM_MEMORY_LIMIT (am_nntrain_bytes) or when
 * an allocation fails. On failure *t holds nothing to free. */
am_status am_nntrain_alloc(am_nntrain *t, const am_nn *net, const am_classset *train,
                           const am_classset *test, const am_optim_params *opt, size_t batch,
                           size_t eval_rows, size_t nslot, size_t nextra);

/* Frees what am_nntrain_alloc allocated; a zeroed or freed state is safe. */
void am_nntrain_free(am_nntrain *t);

/* The ring slot of step k. */
static inline double *am_nntrain_slot(const am_nntrain *t, uint64_t k)
{
    return t->ring + (size_t)(k % t->nslot) * t->dim;
}

/* The mean loss and its gradient (into g) at theta on B training rows drawn from r. */
double am_nntrain_grad(const am_nntrain *t, am_rng *r, const double *theta, double *g);

/* Test accuracy of theta on the evaluation rows (am_nntrain_accuracy) or on the whole test
 * set (am_nntrain_accuracy_all). */
double am_nntrain_accuracy(const am_nntrain *t, const double *theta);
double am_nntrain_accuracy_all(const am_nntrain *t, const double *theta);

/* 1 if the n values are finite. */
int am_nntrain_finite(const double *x, size_t n);

/* How the gradients of one step combine: applied one after another (the first out of place
 * from slot k into slot k + 1, the others in place there), or averaged into one step. */
typedef enum { AM_NNTRAIN_SEQUENTIAL = 0, AM_NNTRAIN_AVERAGED } am_nntrain_combine;

/* Step k -> k + 1 from n gradients at stale iterates of the ring, with the words of r at
 * counter k laid out per gradient as one staleness word then B rows. Gradient l reads the
 * iterate of step k - r_l: r_l = stale[l] when stale is given (its word is skipped), else the
 * word mod (s + 1), clamped to k. The result is in slot k + 1 (slot k is read, never written).
 * Returns 1 if a loss was not finite (the run diverged; slot k + 1 is then undefined), else
 * 0. Averaged needs one extra vector (the sum; a lone gradient is applied as it is). */
int am_nntrain_stale_step(const am_nntrain *t, am_rng *r, uint64_t k, size_t n,
                          const uint64_t *stale, size_t s, am_nntrain_combine how);

/* am_ensemble_jobs with one BLAS thread per job: the independent runs of a study. */
am_status am_nntrain_runs(size_t n, int threads, am_ensemble_job_fn run, void *ctx, char *err,
                          size_t errlen);

#endif
