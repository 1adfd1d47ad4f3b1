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

#include "../core/am_rng.h"
#include "../models/am_nntrain.h"

am_nnstale_params am_nnstale_params_default(void)
{
    am_nnstale_params p = {1, 0, 32, AM_NNSTALE_SSP, 0.8, 20000, 100, 2000, 512, 0, 1, NULL, 0};
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

static double dot(const double *a, const double *b, size_t n)
{
    double ab = 0;
    for (size_t i = 0; i < n; i++)
        ab += a[i] * b[i];
    return ab;
}

/* The coherence measures of a run, over its evaluations: the lag-s cosine and Dai et al.'s. */
typedef struct {
    am_stats cos, dai;
    double cos_min, dai_min;
} coherence_acc;

/* The coherence of an evaluation after step k + 1 (s >= 1, k + 1 >= s), on the gradients G_j
 * of the mean loss over the first coh_rows training rows at the iterates of the ring (extra
 * vectors 1 and 2): the cosine of G_{k+1} and G_{k+1-s} (returned) and, when dai is given,
 * Dai et al.'s min over k+1-s <= j <= k+1 of <G_{k+1}, G_j> / |G_{k+1}|^2 (j = k+1 gives 1;
 * NaN for a zero gradient). */
static double coherence_at(const am_nntrain *t, uint64_t k, size_t s, size_t coh_rows, double *dai)
{
    double *c1 = t->extra + t->dim, *c2 = c1 + t->dim;
    am_nn_set_grad(t->net, t->we, am_nntrain_slot(t, k + 1), t->train, 0, coh_rows, c1);
    am_nn_set_grad(t->net, t->we, am_nntrain_slot(t, k + 1 - s), t->train, 0, coh_rows, c2);
    const double c = cosine(c1, c2, t->dim);
    if (dai) {
        const double gg = dot(c1, c1, t->dim);
        double m = fmin(1.0, dot(c1, c2, t->dim) / gg);
        for (uint64_t j = k + 2 - s; j <= k; j++) {
            am_nn_set_grad(t->net, t->we, am_nntrain_slot(t, j), t->train, 0, coh_rows, c2);
            m = fmin(m, dot(c1, c2, t->dim) / gg);
        }
        *dai = gg > 0 && isfinite(gg) ? m : NAN;
    }
    return c;
}

/* The coherence of an evaluation after step k + 1, pushed into a (s = 0: 1 by convention), and
 * into the outcome's trace. */
static void coherence_eval(const am_nntrain *t, const am_nnstale_params *p, uint64_t k,
                           size_t coh_rows, double batches, size_t max_evals, coherence_acc *a,
                           am_nnstale_outcome *out)
{
    if (p->s == 0) {
        am_stats_push(&a->cos, 1.0);
        a->cos_min = 1.0;
        if (p->dai_coherence) am_stats_push(&a->dai, 1.0), a->dai_min = 1.0;
        return;
    }
    if (k + 1 < p->s) return;
    double mu = NAN, c = coherence_at(t, k, p->s, coh_rows, p->dai_coherence ? &mu : NULL);
    if (isfinite(c)) {
        am_stats_push(&a->cos, c);
        if (c < a->cos_min) a->cos_min = c;
    }
    if (isfinite(mu)) {
        am_stats_push(&a->dai, mu);
        if (mu < a->dai_min) a->dai_min = mu;
    }
    if (out->trace_cosine && out->trace_n < max_evals) {
        out->trace_batches[out->trace_n] = batches;
        out->trace_cosine[out->trace_n++] = c;
    }
}

static int params_ok(const am_nn *net, const am_nnstale_params *p, const am_classset *train,
                     const am_classset *test, uint64_t replica)
{
    const size_t P = p->workers, B = p->batch;
    return !(P < 1 || P > 1000000 || B < 1 || B > 1000000 || p->s > 1000000 ||
             !(p->target > 0 && p->target < 1) || p->max_batches < 1 || p->eval_every < 1 ||
             am_nntrain_fits(net, train, test) ||
             !am_rng_in_range(replica, AM_STREAM_NNSTALE, p->max_batches / P + 1));
}

am_status am_nnstale_run_one(const am_nn *net, const am_optim_params *opt,
                             const am_nnstale_params *p, const am_classset *train,
                             const am_classset *test, uint64_t replica, am_nnstale_outcome *out,
                             double *theta_final)
{
    const size_t P = p->workers;
    out->reached = 0;
    out->diverged = 0;
    out->batches = NAN;
    out->test_accuracy = NAN;
    out->coherence = NAN;
    out->coherence_min = NAN;
    out->dai_coherence = NAN;
    out->dai_coherence_min = NAN;
    out->trace_n = 0;
    out->trace_batches = out->trace_cosine = NULL;
    if (!params_ok(net, p, train, test, replica)) return AM_EINVAL;
    /* the ring of s + 2 iterates, the gradient, the averaged sum, two coherence gradients */
    am_nntrain t;
    am_status st = am_nntrain_alloc(&t, net, train, test, opt, p->batch, p->eval_rows, p->s + 2, 3);
    if (st) return st;
    const size_t max_evals = (size_t)(p->max_batches / p->eval_every) + 2;
    if (p->coherence_trace && p->s >= 1) {
        out->trace_batches = malloc(max_evals * sizeof(double));
        out->trace_cosine = malloc(max_evals * sizeof(double));
        if (!out->trace_batches || !out->trace_cosine) {
            st = AM_ENOMEM;
            goto done;
        }
    }
    const size_t coh_rows =
        p->coherence_rows && p->coherence_rows < train->n ? p->coherence_rows : train->n;
    const am_nntrain_combine how =
        p->semantics == AM_NNSTALE_SSP ? AM_NNTRAIN_SEQUENTIAL : AM_NNTRAIN_AVERAGED;
    am_nn_init(net, p->seed, replica, t.ring);
    coherence_acc coh = {{0, 0, 0}, {0, 0, 0}, INFINITY, INFINITY};
    uint64_t evals = 0;
    double *cur = t.ring;
    am_rng r;
    am_rng_init(&r, p->seed, replica, AM_STREAM_NNSTALE, 0);
    for (uint64_t k = 0;; k++) {
        if (am_nntrain_stale_step(&t, &r, k, P, NULL, p->s, how)) {
            out->diverged = 1;
            break;
        }
        cur = am_nntrain_slot(&t, k + 1);
        uint64_t batches = (k + 1) * P;
        if (batches / p->eval_every > evals) {
            evals = batches / p->eval_every;
            if (p->cancel && *p->cancel) {
                st = AM_ECANCELED;
                goto done;
            }
            if (!am_nntrain_finite(cur, t.dim)) {
                out->diverged = 1;
                break;
            }
            coherence_eval(&t, p, k, coh_rows, (double)batches, max_evals, &coh, out);
            if (am_nntrain_accuracy(&t, cur) >= p->target) {
                out->reached = 1;
                out->batches = (double)batches;
                break;
            }
        }
        if (batches >= p->max_batches) break;
    }
    if (!out->diverged) out->test_accuracy = am_nntrain_accuracy_all(&t, cur);
    if (theta_final) memcpy(theta_final, cur, t.dim * sizeof *cur);
    if (coh.cos.n > 0) {
        out->coherence = coh.cos.mean;
        out->coherence_min = coh.cos_min;
    }
    if (coh.dai.n > 0) {
        out->dai_coherence = coh.dai.mean;
        out->dai_coherence_min = coh.dai_min;
    }
done:
    if (st) am_nnstale_outcome_free(out);
    am_nntrain_free(&t);
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

/* The runs of a sweep: run q is seed q mod seeds of cell q / seeds. */
typedef struct {
    const am_nnstale_sweep *sw;
    const am_nn *net;
    const am_classset *train, *test;
    am_nnstale_result *res;
} sweep_ctx;

static am_status sweep_job(void *vctx, size_t q, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const sweep_ctx *x = vctx;
    am_nnstale_cell *c = &x->res->cells[q / x->sw->seeds];
    am_nnstale_params p = x->sw->base;
    p.workers = c->workers;
    p.s = c->s;
    return am_nnstale_run_one(x->net, &x->sw->opts[c->opt], &p, x->train, x->test, q % x->sw->seeds,
                              &c->runs[q % x->sw->seeds], NULL);
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
    am_status fail = am_nntrain_runs(res->ncells * sw->seeds, sw->threads, sweep_job,
                                     &(sweep_ctx){sw, net, train, test, res}, NULL, 0);
    if (fail) {
        am_nnstale_result_free(res);
        return fail;
    }
    double *ratio = malloc(sw->seeds * sizeof *ratio);
    if (!ratio) {
        am_nnstale_result_free(res);
        return AM_ENOMEM;
    }
    for (size_t q = 0; q < res->ncells; q++) {
        am_nnstale_cell *c = &res->cells[q];
        /* the s = 0 cell of the same optimiser and worker count */
        size_t base = q - q % res->ns_run, i0 = 0;
        while (res->s_run[i0] != 0)
            i0++;
        const am_nnstale_cell *ref = &res->cells[base + i0];
        size_t nratio = 0;
        for (size_t k = 0; k < sw->seeds; k++) {
            const am_nnstale_outcome *u = &c->runs[k];
            if (u->reached) {
                c->reached++;
                am_stats_push(&c->steps, u->batches);
                if (ref->runs[k].reached) {
                    am_stats_push(&c->normalized, u->batches / ref->runs[k].batches);
                    ratio[nratio++] = u->batches / ref->runs[k].batches;
                }
            }
            if (isfinite(u->test_accuracy)) am_stats_push(&c->test_accuracy, u->test_accuracy);
            if (isfinite(u->coherence)) am_stats_push(&c->coherence, u->coherence);
            if (isfinite(u->dai_coherence)) am_stats_push(&c->dai_coherence, u->dai_coherence);
        }
        am_check_t_interval(&c->normalized, 0.95, &c->normalized_t);
        if (am_check_median_bootstrap(ratio, nratio, AM_NNSTALE_BOOT, 0.95, sw->base.seed,
                                      &c->normalized_median)) {
            free(ratio);
            am_nnstale_result_free(res);
            return AM_ENOMEM;
        }
    }
    free(ratio);
    *out = res;
    return AM_OK;
}

double am_nnstale_grid_lr(double lr0, int half, size_t j)
{
    return lr0 * pow(10.0, ((double)j - (double)half) / 2.0);
}

double am_nnstale_tune_score(const am_nnstale_outcome *runs, size_t seeds, uint64_t max_batches)
{
    double sum = 0;
    for (size_t k = 0; k < seeds; k++)
        sum += runs[k].reached ? runs[k].batches : 2.0 * (double)max_batches;
    return sum;
}

/* am_nnstale_tune's grid: 10^(j/2), j = -4..4, around the given step. */
#define TUNE_HALF 4

/* The runs of a step-size search: run t is seed t mod seeds at grid point t / seeds. */
typedef struct {
    const am_nn *net;
    const am_optim_params *opt;
    const am_nnstale_params *p;
    size_t seeds;
    const am_classset *train, *test;
    am_nnstale_outcome *runs;
} tune_ctx;

static am_status tune_job(void *vctx, size_t t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const tune_ctx *x = vctx;
    am_optim_params o = *x->opt;
    o.lr = am_nnstale_grid_lr(x->opt->lr, TUNE_HALF, t / x->seeds);
    return am_nnstale_run_one(x->net, &o, x->p, x->train, x->test, t % x->seeds, &x->runs[t], NULL);
}

am_status am_nnstale_tune(const am_nn *net, const am_optim_params *opt, const am_nnstale_params *p,
                          size_t seeds, int threads, const am_classset *train,
                          const am_classset *test, double *best_lr)
{
    enum { GRID = 2 * TUNE_HALF + 1 };
    if (seeds < 1) return AM_EINVAL;
    am_nnstale_outcome *runs = malloc(GRID * seeds * sizeof *runs);
    if (!runs) return AM_ENOMEM;
    am_nnstale_params q = *p;
    q.s = 0;
    q.coherence_trace = 0;
    am_status fail = am_nntrain_runs(GRID * seeds, threads, tune_job,
                                     &(tune_ctx){net, opt, &q, seeds, train, test, runs}, NULL, 0);
    if (fail) {
        free(runs);
        return fail;
    }
    double best = INFINITY;
    *best_lr = opt->lr;
    for (size_t j = 0; j < GRID; j++) {
        double sum = am_nnstale_tune_score(runs + j * seeds, seeds, p->max_batches);
        if (sum < best) {
            best = sum;
            *best_lr = am_nnstale_grid_lr(opt->lr, TUNE_HALF, j);
        }
    }
    free(runs);
    return AM_OK;
}
