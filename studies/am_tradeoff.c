/*
 * am_tradeoff.c -- Liu et al.'s momentum-asynchrony experiment on networks (am_tradeoff.h):
 * one asynchronous heavy-ball run per (P, mu, seed) with the staleness of the parameter-server
 * simulator, w_{k+1} = w_k - lr g(w_{k - tau_k}) + mu (w_k - w_{k-1}), the final test accuracy;
 * the sweep over the (P, mu) cells through am_sweep_run; the best momentum per P by a paired
 * bootstrap over seeds, and the trend of the best momentum from the first to the last P.
 */
#include "am_tradeoff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zlib.h>

#include "../core/am_rng.h"
#include "../core/am_stats.h"
#include "../models/am_nntrain.h"
#include "../montecarlo/am_optim.h"
#include "../montecarlo/am_ps.h"
#include "am_sweep.h"
#include "am_sweep_impl.h"

/* Values per seed in a checkpointed cell: accuracy, diverged, mean and max staleness. */
#define NV_SEED 4
/* Largest worker count accepted. */
#define MAX_WORKERS 4096

am_tradeoff_params am_tradeoff_params_default(void)
{
    am_tradeoff_params p;
    memset(&p, 0, sizeof p);
    p.batch = 32;
    p.budget = 5000;
    p.lr = 0.01;
    p.step_rule = AM_TRADEOFF_STEP_FIXED;
    am_runtime_make(AM_RUNTIME_EXP, 1, 0, &p.runtime);
    p.eval_rows = 0;
    p.seed = 1;
    return p;
}

double am_tradeoff_step(const am_tradeoff_params *p, double mu)
{
    return p->step_rule == AM_TRADEOFF_STEP_EFFECTIVE ? p->lr * (1.0 - mu) : p->lr;
}

am_status am_tradeoff_params_check(const am_tradeoff_params *p, char *err, size_t errlen)
{
    am_runtime rt;
    if (p->batch < 1 || p->batch > 1000000) {
        snprintf(err, errlen, "batch must be in [1, 1e6], got %zu", p->batch);
        return AM_EINVAL;
    }
    if (p->budget < 1 || p->budget > ((uint64_t)1 << 40)) {
        snprintf(err, errlen, "budget must be in [1, 2^40] updates, got %llu",
                 (unsigned long long)p->budget);
        return AM_EINVAL;
    }
    if (!(p->lr > 0 && p->lr < 1e6)) {
        snprintf(err, errlen, "lr must be in (0, 1e6), got %g", p->lr);
        return AM_EINVAL;
    }
    if (p->step_rule != AM_TRADEOFF_STEP_FIXED && p->step_rule != AM_TRADEOFF_STEP_EFFECTIVE) {
        snprintf(err, errlen, "step_rule must be fixed or effective");
        return AM_EINVAL;
    }
    if (am_runtime_make(p->runtime.kind, p->runtime.a, p->runtime.b, &rt)) {
        snprintf(err, errlen, "runtime is not a valid distribution");
        return AM_EINVAL;
    }
    return AM_OK;
}

static am_ps *ps_make(const am_tradeoff_params *p, size_t workers, am_status *st)
{
    am_ps_params pp = am_ps_params_default();
    pp.workers = workers;
    pp.runtime = p->runtime;
    pp.variant = AM_VARIANT_ASYNC;
    pp.k = 1;
    pp.seed = p->seed;
    return am_ps_alloc(&pp, st);
}

am_status am_tradeoff_staleness(const am_tradeoff_params *p, size_t workers, uint64_t replica,
                                uint64_t n, uint64_t *tau)
{
    if (workers < 1 || workers > MAX_WORKERS || replica >= AM_RNG_REPLICA_LIMIT) return AM_EINVAL;
    am_status st = AM_OK;
    am_ps *ps = ps_make(p, workers, &st);
    if (!ps) return st;
    am_ps_reset(ps, replica);
    am_ps_update u;
    for (uint64_t k = 0; k < n; k++) {
        am_ps_next(ps, &u);
        tau[k] = u.staleness[0];
    }
    am_ps_free(ps);
    return AM_OK;
}

/* The gradient of job q on theta into g: B rows of the job's stream. */
static double job_grad(const am_nntrain *t, const am_tradeoff_params *p, uint64_t replica,
                       uint64_t q, const double *theta, double *g)
{
    am_rng r;
    am_rng_init(&r, p->seed, replica, AM_STREAM_TRADEOFF, q);
    return am_nntrain_grad(t, &r, theta, g);
}

/* The asynchronous pass: every learner starts a job on w_0; at update k the simulator's
 * finisher i pushes the gradient it holds, then starts its next job (job P + k) on w_{k+1}.
 * Returns 1 if a loss was not finite; *k_done gets the updates applied. */
static int async_pass(const am_nntrain *t, const am_tradeoff_params *p, am_ps *ps, size_t P,
                      uint64_t replica, const volatile sig_atomic_t *cancel, uint64_t *version,
                      double *sum_tau, double *max_tau, uint64_t *k_done, am_status *st)
{
    double *theta = t->ring, *held = t->g; /* held: [P dim], the gradient of each running job */
    const size_t dim = t->dim;
    am_ps_reset(ps, replica);
    int bad = 0;
    for (size_t i = 0; i < P && !bad; i++) {
        version[i] = 0;
        bad = !isfinite(job_grad(t, p, replica, i, theta, held + i * dim));
    }
    uint64_t k = 0;
    for (; k < p->budget && !bad; k++) {
        if (cancel && (k & 63) == 0 && *cancel) {
            *st = AM_ECANCELED;
            break;
        }
        am_ps_update u;
        am_ps_next(ps, &u);
        const size_t i = u.learner[0];
        const uint64_t tau = u.staleness[0];
        if (u.ngrad != 1 || i >= P || version[i] + tau != k) {
            *st = AM_EINVAL; /* the simulator broke its contract */
            break;
        }
        *sum_tau += (double)tau;
        if ((double)tau > *max_tau) *max_tau = (double)tau;
        am_optim_step(t->o, theta, held + i * dim);
        if (k + 1 < p->budget) {
            version[i] = k + 1;
            if (!isfinite(job_grad(t, p, replica, P + k, theta, held + i * dim))) bad = 1;
        }
    }
    *k_done = k;
    return bad;
}

am_status am_tradeoff_run_one(const am_nn *net, const am_tradeoff_params *p, size_t workers,
                              double mu, const am_classset *train, const am_classset *test,
                              uint64_t replica, const volatile sig_atomic_t *cancel,
                              am_tradeoff_outcome *out, double *theta_final)
{
    const size_t P = workers;
    const size_t K = am_nn_width(net, am_nn_layers(net));
    char why[128];
    out->accuracy = NAN;
    out->diverged = 0;
    out->mean_staleness = NAN;
    out->max_staleness = NAN;
    if (am_tradeoff_params_check(p, why, sizeof why) || P < 1 || P > MAX_WORKERS ||
        !(mu >= 0 && mu < 1) || am_nntrain_fits(net, train, test) ||
        !am_rng_in_range(replica, AM_STREAM_TRADEOFF, p->budget + P))
        return AM_EINVAL;
    am_optim_params op = am_optim_params_default(AM_OPT_MOMENTUM);
    op.lr = am_tradeoff_step(p, mu);
    op.mu = mu;
    /* the iterate and the P held gradients (the engine's gradient and P - 1 more) */
    am_nntrain t;
    am_status st = am_nntrain_alloc(&t, net, train, test, &op, p->batch, p->eval_rows, 1, P - 1);
    if (st) return st;
    uint64_t *version = malloc(P * sizeof *version);
    am_ps *ps = ps_make(p, P, &st);
    if (!version || !ps || st) {
        if (st == AM_OK) st = AM_ENOMEM;
        goto done;
    }
    am_nn_init(net, p->seed, replica, t.ring);
    double sum_tau = 0, max_tau = 0;
    uint64_t k = 0;
    int bad = async_pass(&t, p, ps, P, replica, cancel, version, &sum_tau, &max_tau, &k, &st);
    if (st) goto done;
    out->mean_staleness = k > 0 ? sum_tau / (double)k : NAN;
    out->max_staleness = k > 0 ? max_tau : NAN;
    if (bad || !am_nntrain_finite(t.ring, t.dim)) {
        out->diverged = 1;
        out->accuracy = 1.0 / (double)K;
    } else {
        out->accuracy = am_nntrain_accuracy(&t, t.ring);
    }
    if (theta_final) memcpy(theta_final, t.ring, t.dim * sizeof *t.ring);
done:
    am_ps_free(ps);
    free(version);
    am_nntrain_free(&t);
    return st;
}

/* ---- best momentum and trend ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The order statistic ceil(q n) (1-based, at least 1) of sorted x[n]. */
static double quantile_sorted(const double *x, size_t n, double q)
{
    size_t r = (size_t)ceil(q * (double)n - 1e-9);
    if (r < 1) r = 1;
    if (r > n) r = n;
    return x[r - 1];
}

/* The momenta of the largest mean of acc over the seed indices pick[0..n-1]: every index of
 * an exact tie into tied[], their number returned (at least 1). */
static size_t argmax_mean(const double *acc, size_t nmu, size_t seeds, const size_t *pick, size_t n,
                          size_t *tied)
{
    size_t k = 0;
    double bv = -INFINITY;
    for (size_t m = 0; m < nmu; m++) {
        double s = 0;
        for (size_t j = 0; j < n; j++)
            s += acc[m * seeds + pick[j]];
        double v = s / (double)n;
        if (v > bv) {
            bv = v;
            k = 0;
        }
        if (v == bv) tied[k++] = m;
    }
    return k;
}

/* The order statistic ceil(q R) (1-based, at least 1) of R draws spread over the increasing
 * momenta mu[] with the (possibly fractional) counts count[]: the smallest mu whose
 * cumulative count reaches it (the same as quantile_sorted of the draws when no count is
 * fractional). */
static double quantile_counts(const double *mu, const double *count, size_t nmu, size_t R, double q)
{
    size_t r = (size_t)ceil(q * (double)R - 1e-9);
    if (r < 1) r = 1;
    if (r > R) r = R;
    double cum = 0;
    for (size_t m = 0; m < nmu; m++) {
        cum += count[m];
        if (cum >= (double)r - 1e-9) return mu[m];
    }
    return mu[nmu - 1];
}

am_status am_tradeoff_best_mu(const double *acc, const double *mu, size_t nmu, size_t seeds,
                              size_t resamples, uint64_t seed, uint64_t replica,
                              am_tradeoff_best *out, double *p_best, double *draws)
{
    if (nmu < 1 || seeds < 1 || resamples < 1 || replica >= AM_RNG_REPLICA_LIMIT ||
        !am_rng_in_range(replica, AM_STREAM_TRADE_BOOT, resamples))
        return AM_EINVAL;
    for (size_t q = 0; q < nmu * seeds; q++)
        if (!isfinite(acc[q])) return AM_EINVAL;
    size_t *pick = malloc(seeds * sizeof *pick), *tied = malloc(nmu * sizeof *tied);
    double *count = calloc(nmu, sizeof *count);
    if (!pick || !tied || !count) {
        free(pick);
        free(tied);
        free(count);
        return AM_ENOMEM;
    }
    for (size_t j = 0; j < seeds; j++)
        pick[j] = j;
    argmax_mean(acc, nmu, seeds, pick, seeds, tied);
    out->best_mu = mu[tied[0]]; /* ties: the smaller mu */
    am_rng r;
    am_rng_init(&r, seed, replica, AM_STREAM_TRADE_BOOT, 0);
    for (size_t b = 0; b < resamples; b++) {
        am_rng_seek(&r, b);
        for (size_t j = 0; j < seeds; j++)
            pick[j] = (size_t)(am_rng_u64(&r) % seeds);
        /* a draw whose best is tied between k momenta counts 1/k for each of them, and its
         * best mu (for the trend) is their mean */
        size_t k = argmax_mean(acc, nmu, seeds, pick, seeds, tied);
        double sum = 0;
        for (size_t t = 0; t < k; t++) {
            count[tied[t]] += 1.0 / (double)k;
            sum += mu[tied[t]];
        }
        if (draws) draws[b] = k == 1 ? mu[tied[0]] : sum / (double)k;
    }
    if (seeds == 1) {
        /* every draw is the one seed: no spread to resample, no interval, no probability */
        for (size_t m = 0; m < nmu; m++)
            p_best[m] = NAN;
        out->best_mu_lo = out->best_mu_hi = NAN;
        if (draws)
            for (size_t b = 0; b < resamples; b++)
                draws[b] = NAN;
    } else {
        for (size_t m = 0; m < nmu; m++)
            p_best[m] = count[m] / (double)resamples;
        out->best_mu_lo = quantile_counts(mu, count, nmu, resamples, 0.025);
        out->best_mu_hi = quantile_counts(mu, count, nmu, resamples, 0.975);
    }
    free(pick);
    free(tied);
    free(count);
    return AM_OK;
}

am_status am_tradeoff_trend(const double *draws_first, const double *draws_last, size_t resamples,
                            am_tradeoff_trend_result *out)
{
    if (resamples < 1) return AM_EINVAL;
    if (!(isfinite(draws_first[0]) && isfinite(draws_last[0]))) { /* one seed: no draws */
        out->change = out->change_lo = out->change_hi = NAN;
        out->verdict = AM_TRADEOFF_UNRESOLVED;
        return AM_OK;
    }
    double *d = malloc(resamples * sizeof *d);
    if (!d) return AM_ENOMEM;
    double s = 0;
    for (size_t b = 0; b < resamples; b++) {
        d[b] = draws_last[b] - draws_first[b];
        s += d[b];
    }
    qsort(d, resamples, sizeof *d, cmp_double);
    out->change = s / (double)resamples;
    out->change_lo = quantile_sorted(d, resamples, 0.025);
    out->change_hi = quantile_sorted(d, resamples, 0.975);
    out->verdict = out->change_hi < 0                           ? AM_TRADEOFF_DECREASES
                   : out->change_lo > 0                         ? AM_TRADEOFF_INCREASES
                   : out->change_lo == 0 && out->change_hi == 0 ? AM_TRADEOFF_UNCHANGED
                                                                : AM_TRADEOFF_UNRESOLVED;
    free(d);
    return AM_OK;
}

const char *am_tradeoff_verdict_name(am_tradeoff_verdict v)
{
    switch (v) {
    case AM_TRADEOFF_DECREASES:
        return "decreases";
    case AM_TRADEOFF_INCREASES:
        return "increases";
    case AM_TRADEOFF_UNCHANGED:
        return "unchanged";
    default:
        return "unresolved";
    }
}

/* ---- the sweep ---- */

am_tradeoff_sweep am_tradeoff_sweep_default(void)
{
    am_tradeoff_sweep s;
    memset(&s, 0, sizeof s);
    s.base = am_tradeoff_params_default();
    s.seeds = 3;
    s.resamples = 2000;
    return s;
}

am_status am_tradeoff_sweep_check(const am_tradeoff_sweep *sw, char *err, size_t errlen)
{
    if (am_tradeoff_params_check(&sw->base, err, errlen)) return AM_EINVAL;
    if (sw->nworkers < 1 || sw->nmu < 1 || !sw->workers || !sw->mu) {
        snprintf(err, errlen, "workers and mu need at least one value each");
        return AM_EINVAL;
    }
    for (size_t i = 0; i < sw->nworkers; i++)
        if (sw->workers[i] < 1 || sw->workers[i] > MAX_WORKERS ||
            (i > 0 && sw->workers[i] <= sw->workers[i - 1])) {
            snprintf(err, errlen, "workers must be increasing integers in [1, %d]", MAX_WORKERS);
            return AM_EINVAL;
        }
    for (size_t i = 0; i < sw->nmu; i++)
        if (!(sw->mu[i] >= 0 && sw->mu[i] < 1) || (i > 0 && !(sw->mu[i] > sw->mu[i - 1]))) {
            snprintf(err, errlen, "mu must be increasing values in [0, 1)");
            return AM_EINVAL;
        }
    if (sw->seeds < 1 || sw->seeds > 100000) {
        snprintf(err, errlen, "seeds must be in [1, 100000], got %zu", sw->seeds);
        return AM_EINVAL;
    }
    if (sw->resamples < 1 || sw->resamples > 10000000) {
        snprintf(err, errlen, "resamples must be in [1, 1e7], got %zu", sw->resamples);
        return AM_EINVAL;
    }
    if (sw->nworkers * sw->nmu > 100000) {
        snprintf(err, errlen, "the grid has more than 1e5 cells");
        return AM_EINVAL;
    }
    return AM_OK;
}

typedef struct {
    const am_tradeoff_sweep *sw;
    const am_nn *net;
    const am_classset *train, *test;
    am_tradeoff_outcome *runs; /* [seeds] scratch of the cell in progress */
    size_t workers;            /* of the cell in progress */
    double mu;
} tradeoff_ctx;

static am_status seed_job(void *vctx, size_t i, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const tradeoff_ctx *c = vctx;
    return am_tradeoff_run_one(c->net, &c->sw->base, c->workers, c->mu, c->train, c->test, i,
                               c->sw->cancel, &c->runs[i], NULL);
}

static am_status tradeoff_cell(void *vctx, size_t cell, double *v)
{
    tradeoff_ctx *c = vctx;
    const am_tradeoff_sweep *sw = c->sw;
    const size_t seeds = sw->seeds;
    c->workers = sw->workers[cell / sw->nmu];
    c->mu = sw->mu[cell % sw->nmu];
    am_status st = am_nntrain_runs(seeds, sw->threads, seed_job, c, NULL, 0);
    if (st) return st;
    for (size_t i = 0; i < seeds; i++) {
        v[i * NV_SEED + 0] = c->runs[i].accuracy;
        v[i * NV_SEED + 1] = c->runs[i].diverged;
        v[i * NV_SEED + 2] = c->runs[i].mean_staleness;
        v[i * NV_SEED + 3] = c->runs[i].max_staleness;
    }
    return AM_OK;
}

static int tradeoff_check_cell(void *vctx, size_t cell, const double *v, char *why, size_t wl)
{
    const tradeoff_ctx *c = vctx;
    (void)cell;
    for (size_t i = 0; i < c->sw->seeds; i++) {
        const double *s = v + i * NV_SEED;
        if (!(s[0] >= 0 && s[0] <= 1) || !(s[1] == 0 || s[1] == 1) || !(s[2] >= 0) ||
            !(s[3] >= 0 && s[3] == floor(s[3]))) {
            snprintf(why, wl, "seed %zu: accuracy, diverged or staleness out of range", i);
            return 1;
        }
    }
    return 0;
}

/* CRC-32 of the data set's labels and features as stored, so the checkpoint names the data (the
 * order of the committed checkpoints: labels first; am_classset_crc adds the inputs). */
static unsigned long data_crc(const am_classset *s)
{
    uLong c = crc32(0L, Z_NULL, 0);
    c = crc32_z(c, (const Bytef *)s->y, s->n * sizeof *s->y);
    if (s->bytes) c = crc32_z(c, s->bytes, s->n * s->d);
    if (s->x) c = crc32_z(c, (const Bytef *)s->x, s->n * s->d * sizeof *s->x);
    return (unsigned long)c;
}

static char *fingerprint(const am_tradeoff_sweep *sw, const am_nn *net, const am_classset *train,
                         const am_classset *test)
{
    json_t *fp = json_object();
    char buf[128];
    json_object_set_new(fp, "study", json_string("tradeoff"));
    am_nn_blas(buf, sizeof buf);
    am_sweep_fingerprint_build(fp, buf);
    snprintf(buf, sizeof buf, "streams %d,%d,%d,%d; async ps", AM_STREAM_TRADEOFF,
             AM_STREAM_TRADE_BOOT, AM_STREAM_WORKERS, AM_STREAM_INIT);
    json_object_set_new(fp, "engine", json_string(buf));
    json_object_set_new(fp, "model", json_string(am_nn_spec(net)));
    json_object_set_new(fp, "data", json_string(sw->data_id ? sw->data_id : ""));
    snprintf(buf, sizeof buf, "%zu:%zu:%zu:%lx:%lx", train->n, test->n, train->d, data_crc(train),
             data_crc(test));
    /* raw inputs add nothing: the checkpoints of raw runs keep their fingerprint */
    if (train->inputs != AM_INPUTS_RAW)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ":%s:%08lx:%08lx",
                 am_inputs_name((am_inputs)train->inputs), am_classset_crc(train),
                 am_classset_crc(test));
    json_object_set_new(fp, "data_id", json_string(buf));
    json_object_set_new(fp, "batch", json_integer((json_int_t)sw->base.batch));
    json_object_set_new(fp, "budget", json_integer((json_int_t)sw->base.budget));
    json_object_set_new(fp, "lr", json_real(sw->base.lr));
    json_object_set_new(fp, "step_rule", json_integer(sw->base.step_rule));
    am_runtime_format(&sw->base.runtime, buf, sizeof buf);
    json_object_set_new(fp, "runtime", json_string(buf));
    json_object_set_new(fp, "eval_rows", json_integer((json_int_t)sw->base.eval_rows));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)sw->base.seed);
    json_object_set_new(fp, "seed", json_string(buf));
    json_object_set_new(fp, "seeds", json_integer((json_int_t)sw->seeds));
    json_t *wl = json_array(), *ml = json_array();
    for (size_t i = 0; i < sw->nworkers; i++)
        json_array_append_new(wl, json_integer((json_int_t)sw->workers[i]));
    for (size_t i = 0; i < sw->nmu; i++)
        json_array_append_new(ml, json_real(sw->mu[i]));
    json_object_set_new(fp, "workers", wl);
    json_object_set_new(fp, "mu", ml);
    char *s = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(fp);
    return s;
}

void am_tradeoff_result_free(am_tradeoff_result *r)
{
    if (!r) return;
    free(r->cells);
    free(r->best);
    free(r->seed_acc);
    free(r);
}

/* Cells' statistics, the best momentum per worker count and the trend (every cell done). */
static am_status summarise(const am_tradeoff_sweep *sw, const double *values, am_tradeoff_result *r)
{
    const size_t seeds = sw->seeds, nmu = sw->nmu;
    for (size_t q = 0; q < r->ncells; q++) {
        am_tradeoff_cell *c = &r->cells[q];
        am_stats acc = {0, 0, 0}, stale = {0, 0, 0};
        c->max_staleness = 0;
        c->diverged = 0;
        for (size_t i = 0; i < seeds; i++) {
            const double *s = values + (q * seeds + i) * NV_SEED;
            c->accuracy[i] = s[0];
            am_stats_push(&acc, s[0]);
            c->diverged += s[1] != 0;
            if (isfinite(s[2])) am_stats_push(&stale, s[2]);
            if (s[3] > c->max_staleness) c->max_staleness = s[3];
        }
        c->accuracy_mean = acc.mean;
        c->accuracy_sem = am_stats_sem(&acc);
        c->mean_staleness = stale.n > 0 ? stale.mean : NAN;
    }
    double *draws = malloc(2 * sw->resamples * sizeof *draws), *pb = malloc(nmu * sizeof *pb);
    if (!draws || !pb) {
        free(draws);
        free(pb);
        return AM_ENOMEM;
    }
    am_status st = AM_OK;
    for (size_t w = 0; w < sw->nworkers && !st; w++) {
        /* keep the draws of the first worker count; the last overwrites the second half */
        double *dr = w == 0 ? draws : draws + sw->resamples;
        st = am_tradeoff_best_mu(r->seed_acc + w * nmu * seeds, sw->mu, nmu, seeds, sw->resamples,
                                 sw->base.seed, w, &r->best[w], pb, dr);
        for (size_t m = 0; m < nmu && !st; m++)
            r->cells[w * nmu + m].p_best = pb[m];
    }
    r->trend.change = r->trend.change_lo = r->trend.change_hi = NAN;
    r->trend.verdict = AM_TRADEOFF_UNRESOLVED;
    if (!st && sw->nworkers >= 2)
        st = am_tradeoff_trend(draws, draws + sw->resamples, sw->resamples, &r->trend);
    free(draws);
    free(pb);
    return st;
}

am_status am_tradeoff_run(const am_tradeoff_sweep *sw, const am_nn *net, const am_classset *train,
                          const am_classset *test, am_tradeoff_result **result, char *err,
                          size_t errlen)
{
    if (err && errlen) err[0] = 0;
    *result = NULL;
    am_status st = am_tradeoff_sweep_check(sw, err, errlen);
    if (st) return st;
    if (am_nntrain_fits(net, train, test)) {
        snprintf(err, errlen, "the model %s does not match the data (%zu features, %zu classes)",
                 am_nn_spec(net), train->d, train->classes);
        return AM_EINVAL;
    }
    const size_t ncells = sw->nworkers * sw->nmu, seeds = sw->seeds;
    am_tradeoff_result *r = calloc(1, sizeof *r);
    double *values = malloc(ncells * seeds * NV_SEED * sizeof *values);
    unsigned char *done = calloc(ncells, 1);
    tradeoff_ctx ctx = {sw, net, train, test, calloc(seeds, sizeof(am_tradeoff_outcome)), 0, 0};
    char *fps = fingerprint(sw, net, train, test);
    if (r) {
        r->cells = calloc(ncells, sizeof *r->cells);
        r->best = calloc(sw->nworkers, sizeof *r->best);
        r->seed_acc = malloc(ncells * seeds * sizeof *r->seed_acc);
    }
    if (!r || !values || !done || !ctx.runs || !fps || !r->cells || !r->best || !r->seed_acc) {
        st = AM_ENOMEM;
        goto fail;
    }
    r->ncells = ncells;
    r->nworkers = sw->nworkers;
    r->nmu = sw->nmu;
    r->seeds = seeds;
    for (size_t q = 0; q < ncells; q++) {
        am_tradeoff_cell *c = &r->cells[q];
        c->workers = sw->workers[q / sw->nmu];
        c->mu = sw->mu[q % sw->nmu];
        c->lr = am_tradeoff_step(&sw->base, c->mu);
        c->accuracy = r->seed_acc + q * seeds;
        c->accuracy_mean = c->accuracy_sem = c->mean_staleness = c->max_staleness = c->p_best = NAN;
        for (size_t i = 0; i < seeds; i++)
            c->accuracy[i] = NAN;
    }
    am_sweep_problem prob = {ncells, seeds * NV_SEED, tradeoff_cell, &ctx};
    am_sweep_params sp;
    AM_SWEEP_STUDY_PARAMS(sp, sw, fps, tradeoff_check_cell);
    st = am_sweep_run(&prob, &sp, values, done, &r->cells_done, err, errlen);
    if (st) goto fail;
    if (r->cells_done == ncells && (st = summarise(sw, values, r))) goto fail;
    free(values);
    free(done);
    free(ctx.runs);
    free(fps);
    *result = r;
    if (r->cells_done < ncells && sw->cancel && *sw->cancel) return AM_ECANCELED;
    return AM_OK;
fail:
    free(values);
    free(done);
    free(ctx.runs);
    free(fps);
    am_tradeoff_result_free(r);
    return st;
}
