/*
 * am_nnstale.c -- Dai et al.'s SSP staleness protocol on networks (am_nnstale.h): the ring of
 * snapshots, the P stale worker gradients per iteration applied one after another (or
 * averaged), the test-accuracy target, the gradient coherence, the sweep over optimisers,
 * worker counts, staleness bounds and seeds, and the step-size grid search at s = 0.
 */
#include "am_nnstale.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_ensemble.h"
#include "../core/am_rng.h"

/* Rows per chunk of the evaluation and coherence passes. */
#define EVAL_CHUNK 256

am_nnstale_params am_nnstale_params_default(void)
{
    am_nnstale_params p = {1, 0, 32, AM_NNSTALE_SSP, 0.8, 20000, 100, 2000, 512, 0, 1, NULL};
    return p;
}

double am_nnstale_default_lr(am_optim_kind kind)
{
    switch (kind) {
    case AM_OPT_SGD:
        return 0.1;
    case AM_OPT_MOMENTUM:
    case AM_OPT_NESTEROV:
        return 0.01;
    case AM_OPT_ADAM:
    case AM_OPT_RMSPROP:
        return 1e-3;
    case AM_OPT_ADAGRAD:
        return 0.05;
    }
    return 0.01;
}

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static double cosine(const double *a, const double *b, size_t n)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += a[i] * b[i];
        aa += a[i] * a[i];
        bb += b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : NAN;
}

am_status am_nnstale_run_one(const am_nn *net, const am_optim_params *opt,
                             const am_nnstale_params *p, const am_classset *train,
                             const am_classset *test, uint64_t replica, am_nnstale_outcome *out,
                             double *theta_final)
{
    const size_t dim = am_nn_dim(net), nslot = p->s + 2, P = p->workers, B = p->batch;
    out->reached = 0;
    out->diverged = 0;
    out->batches = NAN;
    out->test_accuracy = NAN;
    out->coherence = NAN;
    out->coherence_min = NAN;
    out->trace_n = 0;
    out->trace_batches = out->trace_cosine = NULL;
    if (P < 1 || P > 1000000 || B < 1 || B > 1000000 || p->s > 1000000 ||
        !(p->target > 0 && p->target < 1) || p->max_batches < 1 || p->eval_every < 1 ||
        train->d != am_nn_inputs(net) || test->d != train->d ||
        train->classes > am_nn_width(net, am_nn_layers(net)) ||
        test->classes > am_nn_width(net, am_nn_layers(net)) || train->n < 1 || test->n < 1 ||
        !am_rng_in_range(replica, AM_STREAM_NNSTALE, p->max_batches / P + 1))
        return AM_EINVAL;
    /* memory up front: ring, gradient, averaged sum, two coherence gradients, workspaces */
    size_t vecs = nslot + 4;
    if (nslot > AM_MEMORY_LIMIT / sizeof(double) / dim / 2) return AM_ENOMEM;
    size_t bytes = vecs * dim * sizeof(double) + am_nn_work_bytes(net, B) +
                   am_nn_work_bytes(net, EVAL_CHUNK) + B * sizeof(size_t);
    if (bytes > AM_MEMORY_LIMIT) return AM_ENOMEM;
    am_status st = AM_OK;
    double *ring = malloc(vecs * dim * sizeof *ring);
    size_t *idx = malloc(B * sizeof *idx);
    am_nn_work *w = am_nn_work_alloc(net, B, &st);
    am_nn_work *we = am_nn_work_alloc(net, EVAL_CHUNK, &st);
    am_optim *o = am_optim_alloc(opt, dim, &st);
    const size_t max_evals = (size_t)(p->max_batches / p->eval_every) + 2;
    if (p->coherence_trace && p->s >= 1) {
        out->trace_batches = malloc(max_evals * sizeof(double));
        out->trace_cosine = malloc(max_evals * sizeof(double));
        if (!out->trace_batches || !out->trace_cosine) st = AM_ENOMEM;
    }
    if (!ring || !idx || !w || !we || !o || st) {
        if (st == AM_OK) st = AM_ENOMEM;
        goto done;
    }
    double *g = ring + nslot * dim, *gsum = g + dim, *c1 = gsum + dim, *c2 = c1 + dim;
    double *x = am_nn_work_x(w);
    int *y = am_nn_work_y(w);
    const size_t eval_rows = p->eval_rows && p->eval_rows < test->n ? p->eval_rows : test->n;
    const size_t coh_rows =
        p->coherence_rows && p->coherence_rows < train->n ? p->coherence_rows : train->n;
    am_nn_init(net, p->seed, replica, ring);
    am_stats coh = {0, 0, 0};
    double coh_min = INFINITY;
    uint64_t evals = 0;
    double *cur = ring;
    am_rng r;
    am_rng_init(&r, p->seed, replica, AM_STREAM_NNSTALE, 0);
    for (uint64_t k = 0;; k++) {
        cur = ring + (k % nslot) * dim;
        double *next = ring + ((k + 1) % nslot) * dim;
        am_rng_seek(&r, k);
        for (size_t j = 0; j < P; j++) {
            uint64_t stale = am_rng_u64(&r) % (p->s + 1);
            if (stale > k) stale = k;
            for (size_t i = 0; i < B; i++)
                idx[i] = (size_t)(am_rng_u64(&r) % train->n);
            const double *src = ring + ((k - stale) % nslot) * dim;
            am_classset_gather(train, idx, B, x, y);
            double loss = am_nn_loss_grad(net, w, src, x, y, B, g);
            if (!isfinite(loss)) out->diverged = 1;
            if (p->semantics == AM_NNSTALE_SSP) {
                am_optim_step_to(o, j == 0 ? cur : next, g, next);
            } else if (j == 0) {
                memcpy(gsum, g, dim * sizeof *g);
            } else {
                for (size_t i = 0; i < dim; i++)
                    gsum[i] += g[i];
            }
        }
        if (p->semantics == AM_NNSTALE_AVERAGED) {
            const double inv = 1.0 / (double)P;
            for (size_t i = 0; i < dim; i++)
                gsum[i] *= inv;
            am_optim_step_to(o, cur, gsum, next);
        }
        cur = next;
        uint64_t batches = (k + 1) * P;
        if (out->diverged) break;
        if (batches / p->eval_every > evals) {
            evals = batches / p->eval_every;
            if (p->cancel && *p->cancel) {
                st = AM_ECANCELED;
                goto done;
            }
            if (!all_finite(cur, dim)) {
                out->diverged = 1;
                break;
            }
            if (p->s >= 1 && k + 1 >= p->s) {
                const double *old = ring + ((k + 1 - p->s) % nslot) * dim;
                am_nn_set_grad(net, we, cur, train, 0, coh_rows, c1);
                am_nn_set_grad(net, we, old, train, 0, coh_rows, c2);
                double c = cosine(c1, c2, dim);
                if (isfinite(c)) {
                    am_stats_push(&coh, c);
                    if (c < coh_min) coh_min = c;
                }
                if (out->trace_cosine && out->trace_n < max_evals) {
                    out->trace_batches[out->trace_n] = (double)batches;
                    out->trace_cosine[out->trace_n++] = c;
                }
            } else if (p->s == 0) {
                am_stats_push(&coh, 1.0);
                coh_min = 1.0;
            }
            double acc = am_nn_accuracy(net, we, cur, test, 0, eval_rows, NULL);
            if (acc >= p->target) {
                out->reached = 1;
                out->batches = (double)batches;
                break;
            }
        }
        if (batches >= p->max_batches) break;
    }
    if (!out->diverged) out->test_accuracy = am_nn_accuracy(net, we, cur, test, 0, test->n, NULL);
    if (theta_final) memcpy(theta_final, cur, dim * sizeof *cur);
    if (coh.n > 0) {
        out->coherence = coh.mean;
        out->coherence_min = coh_min;
    }
done:
    if (st) am_nnstale_outcome_free(out);
    am_optim_free(o);
    am_nn_work_free(w);
    am_nn_work_free(we);
    free(idx);
    free(ring);
    return st;
}

void am_nnstale_outcome_free(am_nnstale_outcome *u)
{
    if (!u) return;
    free(u->trace_batches);
    free(u->trace_cosine);
    u->trace_batches = u->trace_cosine = NULL;
    u->trace_n = 0;
}

void am_nnstale_result_free(am_nnstale_result *r)
{
    if (!r) return;
    if (r->cells)
        for (size_t c = 0; c < r->ncells; c++) {
            if (r->cells[c].runs)
                for (size_t k = 0; k < r->seeds; k++)
                    am_nnstale_outcome_free(&r->cells[c].runs[k]);
            free(r->cells[c].runs);
        }
    free(r->cells);
    free(r->s_run);
    free(r);
}

am_status am_nnstale_run(const am_nnstale_sweep *sw, const am_nn *net, const am_classset *train,
                         const am_classset *test, am_nnstale_result **out)
{
    *out = NULL;
    if (sw->nopt < 1 || sw->ns < 1 || sw->nworkers < 1 || sw->seeds < 1) return AM_EINVAL;
    am_nnstale_result *res = calloc(1, sizeof *res);
    if (!res) return AM_ENOMEM;
    int has0 = 0;
    for (size_t i = 0; i < sw->ns; i++)
        has0 |= sw->s[i] == 0;
    res->ns_run = sw->ns + !has0;
    res->s_run = malloc(res->ns_run * sizeof *res->s_run);
    res->ncells = sw->nopt * sw->nworkers * res->ns_run;
    res->cells = calloc(res->ncells, sizeof *res->cells);
    res->seeds = sw->seeds;
    if (!res->s_run || !res->cells) {
        am_nnstale_result_free(res);
        return AM_ENOMEM;
    }
    memcpy(res->s_run, sw->s, sw->ns * sizeof *sw->s);
    if (!has0) res->s_run[sw->ns] = 0;
    for (size_t o = 0; o < sw->nopt; o++)
        for (size_t wi = 0; wi < sw->nworkers; wi++)
            for (size_t i = 0; i < res->ns_run; i++) {
                am_nnstale_cell *c = &res->cells[(o * sw->nworkers + wi) * res->ns_run + i];
                c->opt = o;
                c->workers = sw->workers[wi];
                c->s = res->s_run[i];
                c->lr = sw->opts[o].lr;
                c->runs = calloc(sw->seeds, sizeof *c->runs);
                if (!c->runs) {
                    am_nnstale_result_free(res);
                    return AM_ENOMEM;
                }
            }
    am_nn_blas_single_thread();
    const size_t nrun = res->ncells * sw->seeds;
    int nt = am_ensemble_threads(sw->threads);
    int fail = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(max : fail)
    for (size_t q = 0; q < nrun; q++) {
        am_nnstale_cell *c = &res->cells[q / sw->seeds];
        am_nnstale_params p = sw->base;
        p.workers = c->workers;
        p.s = c->s;
        am_status st = am_nnstale_run_one(net, &sw->opts[c->opt], &p, train, test, q % sw->seeds,
                                          &c->runs[q % sw->seeds], NULL);
        if (st) fail = (int)st > fail ? (int)st : fail;
    }
    if (fail) {
        am_nnstale_result_free(res);
        return (am_status)fail;
    }
    for (size_t q = 0; q < res->ncells; q++) {
        am_nnstale_cell *c = &res->cells[q];
        /* the s = 0 cell of the same optimiser and worker count */
        size_t base = q - q % res->ns_run, i0 = 0;
        while (res->s_run[i0] != 0)
            i0++;
        const am_nnstale_cell *ref = &res->cells[base + i0];
        for (size_t k = 0; k < sw->seeds; k++) {
            const am_nnstale_outcome *u = &c->runs[k];
            if (u->reached) {
                c->reached++;
                am_stats_push(&c->steps, u->batches);
                if (ref->runs[k].reached)
                    am_stats_push(&c->normalized, u->batches / ref->runs[k].batches);
            }
            if (isfinite(u->test_accuracy)) am_stats_push(&c->test_accuracy, u->test_accuracy);
            if (isfinite(u->coherence)) am_stats_push(&c->coherence, u->coherence);
        }
    }
    *out = res;
    return AM_OK;
}

am_status am_nnstale_tune(const am_nn *net, const am_optim_params *opt, const am_nnstale_params *p,
                          size_t seeds, int threads, const am_classset *train,
                          const am_classset *test, double *best_lr)
{
    enum { GRID = 9 };
    if (seeds < 1) return AM_EINVAL;
    am_nnstale_outcome *runs = malloc(GRID * seeds * sizeof *runs);
    if (!runs) return AM_ENOMEM;
    am_nn_blas_single_thread();
    am_nnstale_params q = *p;
    q.s = 0;
    q.coherence_trace = 0;
    int nt = am_ensemble_threads(threads);
    int fail = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(max : fail)
    for (size_t t = 0; t < GRID * seeds; t++) {
        am_optim_params o = *opt;
        o.lr = opt->lr * pow(10.0, ((double)(t / seeds) - 4.0) / 2.0);
        am_status st = am_nnstale_run_one(net, &o, &q, train, test, t % seeds, &runs[t], NULL);
        if (st) fail = (int)st > fail ? (int)st : fail;
    }
    if (fail) {
        free(runs);
        return (am_status)fail;
    }
    double best = INFINITY;
    *best_lr = opt->lr;
    for (size_t j = 0; j < GRID; j++) {
        double sum = 0;
        for (size_t k = 0; k < seeds; k++) {
            const am_nnstale_outcome *u = &runs[j * seeds + k];
            sum += u->reached ? u->batches : 2.0 * (double)p->max_batches;
        }
        if (sum < best) {
            best = sum;
            *best_lr = opt->lr * pow(10.0, ((double)j - 4.0) / 2.0);
        }
    }
    free(runs);
    return AM_OK;
}
