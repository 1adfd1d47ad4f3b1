/*
 * am_nntrain.c -- the one network training engine (am_nntrain.h): a run's workspaces, the
 * minibatch gradient, the stale step out of the ring, the evaluation, the failure rule and
 * the parallel loop over runs.
 */
#include "am_nntrain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_ensemble.h"

am_status am_nntrain_fits(const am_nn *net, const am_classset *train, const am_classset *test)
{
    const size_t K = am_nn_width(net, am_nn_layers(net));
    if (train->d != am_nn_inputs(net) || test->d != train->d || train->classes > K ||
        test->classes > K || train->n < 1 || test->n < 1)
        return AM_EINVAL;
    return AM_OK;
}

size_t am_nntrain_bytes(const am_nn *net, size_t batch, size_t nslot, size_t nextra)
{
    const size_t dim = am_nn_dim(net);
    /* the ring, the gradient and the extra vectors */
    if (nslot > SIZE_MAX / 4 || nextra > SIZE_MAX / 4 || dim == 0) return SIZE_MAX;
    const size_t vecs = nslot + 1 + nextra;
    if (vecs > SIZE_MAX / sizeof(double) / dim) return SIZE_MAX;
    const size_t bytes = vecs * dim * sizeof(double), wb = am_nn_work_bytes(net, batch),
                 we = am_nn_work_bytes(net, AM_NNTRAIN_EVAL_CHUNK);
    if (batch > SIZE_MAX / sizeof(size_t) || wb > SIZE_MAX / 4 || we > SIZE_MAX / 4 ||
        bytes > SIZE_MAX / 4)
        return SIZE_MAX;
    return bytes + wb + we + batch * sizeof(size_t);
}

am_status am_nntrain_alloc(am_nntrain *t, const am_nn *net, const am_classset *train,
                           const am_classset *test, const am_optim_params *opt, size_t batch,
                           size_t eval_rows, size_t nslot, size_t nextra)
{
    memset(t, 0, sizeof *t);
    if (nslot < 1 || batch < 1) return AM_EINVAL;
    if (am_nntrain_bytes(net, batch, nslot, nextra) > AM_MEMORY_LIMIT) return AM_ENOMEM;
    const size_t dim = am_nn_dim(net);
    am_status st = AM_OK;
    t->net = net;
    t->train = train;
    t->test = test;
    t->dim = dim;
    t->batch = batch;
    t->nslot = nslot;
    t->nextra = nextra;
    t->eval_rows = eval_rows && eval_rows < test->n ? eval_rows : test->n;
    t->ring = malloc((nslot + 1 + nextra) * dim * sizeof *t->ring);
    t->idx = malloc(batch * sizeof *t->idx);
    t->w = am_nn_work_alloc(net, batch, &st);
    t->we = am_nn_work_alloc(net, AM_NNTRAIN_EVAL_CHUNK, &st);
    t->o = am_optim_alloc(opt, dim, &st);
    if (!t->ring || !t->idx || !t->w || !t->we || !t->o || st) {
        am_nntrain_free(t);
        return st ? st : AM_ENOMEM;
    }
    t->g = t->ring + nslot * dim;
    t->extra = t->g + dim;
    return AM_OK;
}

void am_nntrain_free(am_nntrain *t)
{
    am_optim_free(t->o);
    am_nn_work_free(t->w);
    am_nn_work_free(t->we);
    free(t->idx);
    free(t->ring);
    memset(t, 0, sizeof *t);
}

double am_nntrain_grad(const am_nntrain *t, am_rng *r, const double *theta, double *g)
{
    double *x = am_nn_work_x(t->w);
    int *y = am_nn_work_y(t->w);
    for (size_t i = 0; i < t->batch; i++)
        t->idx[i] = (size_t)(am_rng_u64(r) % t->train->n);
    am_classset_gather(t->train, t->idx, t->batch, x, y);
    return am_nn_loss_grad(t->net, t->w, theta, x, y, t->batch, g);
}

double am_nntrain_accuracy(const am_nntrain *t, const double *theta)
{
    return am_nn_accuracy(t->net, t->we, theta, t->test, 0, t->eval_rows, NULL);
}

double am_nntrain_accuracy_all(const am_nntrain *t, const double *theta)
{
    return am_nn_accuracy(t->net, t->we, theta, t->test, 0, t->test->n, NULL);
}

int am_nntrain_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

int am_nntrain_stale_step(const am_nntrain *t, am_rng *r, uint64_t k, size_t n,
                          const uint64_t *stale, size_t s, am_nntrain_combine how)
{
    const size_t dim = t->dim;
    const double *cur = am_nntrain_slot(t, k);
    double *next = am_nntrain_slot(t, k + 1), *sum = t->extra;
    const int average = how == AM_NNTRAIN_AVERAGED && n > 1;
    am_rng_seek(r, k);
    for (size_t l = 0; l < n; l++) {
        uint64_t word = am_rng_u64(r), back = stale ? stale[l] : word % (s + 1);
        if (back > k) back = k;
        /* the first of several averaged gradients goes straight into the sum */
        double *g = average && l == 0 ? sum : t->g;
        if (!isfinite(am_nntrain_grad(t, r, am_nntrain_slot(t, k - back), g))) return 1;
        if (!average)
            am_optim_step_to(t->o, l == 0 ? cur : next, g, next);
        else if (l > 0)
            for (size_t i = 0; i < dim; i++)
                sum[i] += g[i];
    }
    if (average) {
        const double inv = 1.0 / (double)n;
        for (size_t i = 0; i < dim; i++)
            sum[i] *= inv;
        am_optim_step_to(t->o, cur, sum, next);
    }
    return 0;
}

am_status am_nntrain_runs(size_t n, int threads, am_ensemble_job_fn run, void *ctx, char *err,
                          size_t errlen)
{
    am_nn_blas_single_thread();
    return am_ensemble_jobs(n, threads, run, ctx, err, errlen);
}
