/*
 * am_wallclock_nn.c -- the parameter-server variants training a network against wall-clock
 * time (am_wallclock_nn.h): the simulator pass that sizes the snapshot ring, the training pass
 * with the stale minibatch gradients averaged into one optimiser step per server update, the
 * evaluations at fixed wall-clock times, and the reduction over seeds.
 */
#include "am_wallclock_nn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "../models/am_nntrain.h"
#include "../montecarlo/am_ps.h"

am_wallclock_nn_params am_wallclock_nn_params_default(void)
{
    am_wallclock_nn_params p;
    memset(&p, 0, sizeof p);
    p.workers = 8;
    am_runtime_make(AM_RUNTIME_EXP, 1, 0, &p.runtime);
    p.time = 500;
    p.ngrid = 26;
    p.batch = 32;
    p.opt = am_optim_params_default(AM_OPT_SGD);
    p.opt.lr = 0.1;
    p.seeds = 5;
    p.seed = 1;
    p.eval_rows = 2000;
    p.target = 0.25;
    p.max_updates = 10000000;
    return p;
}

/* The wall-clock time of evaluation g. */
static double grid_time(const am_wallclock_nn_params *par, size_t g)
{
    return par->time * (double)g / (double)(par->ngrid - 1);
}

static am_status check_params(const am_nn *net, const am_classset *train, const am_classset *test,
                              const am_wallclock_nn_params *par, char *err, size_t errlen)
{
    if (!par->variants || par->nvariants == 0)
        return am_common_fail(err, errlen, AM_EINVAL, "needs at least one variant");
    if (!(par->time > 0) || !isfinite(par->time))
        return am_common_fail(err, errlen, AM_EINVAL, "time must be finite and > 0");
    if (par->ngrid < 2 || par->ngrid > 1000000)
        return am_common_fail(err, errlen, AM_EINVAL, "ngrid must be in [2, 10^6]");
    if (par->batch < 1 || par->batch > 1000000)
        return am_common_fail(err, errlen, AM_EINVAL, "batch must be in [1, 10^6]");
    if (par->seeds < 1) return am_common_fail(err, errlen, AM_EINVAL, "seeds must be >= 1");
    if (!(par->target > 0 && par->target < 1))
        return am_common_fail(err, errlen, AM_EINVAL, "target must be in (0, 1)");
    if (am_nntrain_fits(net, train, test))
        return am_common_fail(err, errlen, AM_EINVAL, "the data set does not fit the model");
    for (size_t v = 0; v < par->nvariants; v++)
        if (am_runtime_variant_check(par->variants[v].variant, par->workers, par->variants[v].k))
            return am_common_fail(err, errlen, AM_EINVAL, "a variant's K does not fit the workers");
    return AM_OK;
}

/* Pass 1, the simulator alone, for the ring's size and the runtime summaries of the replica:
 * out->n, the updates within the budget, the time per update past the first quarter of them
 * (the closed forms are stationary; every learner starts fresh at time 0), the fresh fraction,
 * the mean and the largest staleness. AM_EINVAL if the budget needs more than max_updates. */
static am_status simulate_updates(am_ps *ps, const am_wallclock_nn_params *par, uint64_t replica,
                                  am_wallclock_nn_outcome *out, char *err, size_t errlen)
{
    am_ps_reset(ps, replica);
    uint64_t n = 0, ngrads = 0, fresh = 0, smax = 0;
    double ssum = 0, tlast = 0;
    for (;;) {
        am_ps_update u;
        am_ps_next(ps, &u);
        if (u.time > par->time) break;
        if (++n > par->max_updates)
            return am_common_fail(err, errlen, AM_EINVAL,
                                  "the time budget needs more than max_updates");
        tlast = u.time;
        for (size_t l = 0; l < u.ngrad; l++) {
            ngrads++;
            fresh += u.staleness[l] == 0;
            ssum += (double)u.staleness[l];
            if (u.staleness[l] > smax) smax = u.staleness[l];
        }
    }
    out->n = n;
    const uint64_t m = n / 4;
    double tm = 0;
    am_ps_reset(ps, replica);
    for (uint64_t j = 0; j < m; j++) {
        am_ps_update u;
        am_ps_next(ps, &u);
        tm = u.time;
    }
    out->time_per_update = n > m ? (tlast - tm) / (double)(n - m) : NAN;
    out->p0 = ngrads > 0 ? (double)fresh / (double)ngrads : NAN;
    out->mean_staleness = ngrads > 0 ? ssum / (double)ngrads : NAN;
    out->max_staleness = smax;
    out->diverged = 0;
    return AM_OK;
}

/* Pass 2, the training: from am_nn_init's start in ring slot 0, the simulator replays the
 * replica's out->n updates with the gradients (averaged into one optimiser step per update),
 * and the iterate current at each evaluation time is evaluated on the test rows; a diverged
 * run has no error from there on. Returns the last iterate. */
static const double *train_pass(const am_nntrain *t, const am_wallclock_nn_params *par, am_ps *ps,
                                uint64_t replica, am_wallclock_nn_outcome *out)
{
    const size_t G = par->ngrid;
    am_nn_init(t->net, par->seed, replica, t->ring);
    am_rng r;
    am_rng_init(&r, par->seed, replica, AM_STREAM_NNSTALE, 0);
    am_ps_reset(ps, replica);
    size_t gi = 0;
    double *cur = t->ring;
    for (uint64_t j = 0;; j++) {
        cur = am_nntrain_slot(t, j);
        am_ps_update u;
        am_ps_next(ps, &u);
        /* the iterate w_j is current on [T_j, T_{j+1}) */
        while (gi < G && grid_time(par, gi) < u.time) {
            out->updates[gi] = j;
            out->test_error[gi] = out->diverged ? NAN : 1.0 - am_nntrain_accuracy(t, cur);
            gi++;
        }
        if (u.time > par->time || j >= out->n) break;
        out->diverged =
            am_nntrain_stale_step(t, &r, j, u.ngrad, u.staleness, 0, AM_NNTRAIN_AVERAGED) ||
            !am_nntrain_finite(am_nntrain_slot(t, j + 1), t->dim);
        if (out->diverged) {
            /* a diverged run has no error from here on */
            for (; gi < G; gi++) {
                out->updates[gi] = j + 1;
                out->test_error[gi] = NAN;
            }
            break;
        }
    }
    return cur;
}

am_status am_wallclock_nn_run_one(const am_nn *net, const am_classset *train,
                                  const am_classset *test, const am_wallclock_nn_params *par,
                                  size_t v, uint64_t replica, am_wallclock_nn_outcome *out,
                                  double *theta_final, char *err, size_t errlen)
{
    am_status st = check_params(net, train, test, par, err, errlen);
    if (st) return st;
    if (v >= par->nvariants)
        return am_common_fail(err, errlen, AM_EINVAL, "variant index out of range");
    am_ps_params pp = am_ps_params_default();
    pp.workers = par->workers;
    pp.runtime = par->runtime;
    pp.variant = par->variants[v].variant;
    pp.k = par->variants[v].k;
    pp.seed = par->seed;
    am_ps *ps = am_ps_alloc(&pp, &st);
    if (!ps) return am_common_fail(err, errlen, st, "the parameter-server parameters are invalid");
    st = simulate_updates(ps, par, replica, out, err, errlen);
    if (!st && !am_rng_in_range(replica, AM_STREAM_NNSTALE, out->n + 1))
        st = am_common_fail(err, errlen, AM_EINVAL,
                            "seed index or update count out of the stream's range");
    /* the ring of s_max + 2 iterates, the gradient and the mean */
    am_nntrain t;
    if (!st) {
        st = am_nntrain_alloc(&t, net, train, test, &par->opt, par->batch, par->eval_rows,
                              (size_t)out->max_staleness + 2, 1);
        if (st)
            am_common_fail(err, errlen, st,
                           st == AM_EINVAL   ? "the optimiser parameters are invalid"
                           : st == AM_ENOMEM ? "the staleness ring exceeds the memory limit"
                                             : NULL);
    }
    if (!st) {
        const double *cur = train_pass(&t, par, ps, replica, out);
        if (theta_final) memcpy(theta_final, cur, t.dim * sizeof *cur);
        am_nntrain_free(&t);
    }
    am_ps_free(ps);
    return st;
}

void am_wallclock_nn_result_free(am_wallclock_nn_result *res)
{
    if (!res) return;
    for (size_t i = 0; res->curves && i < res->nvariants; i++) {
        am_wallclock_nn_curve *c = &res->curves[i];
        free(c->time);
        free(c->test_error);
        free(c->test_error_sem);
        free(c->updates_mean);
        free(c->alive);
    }
    free(res->curves);
    res->curves = NULL;
}

/* The closed form of am_runtime.h, NaN where there is none. */
static double closed(am_status st, double x)
{
    return st ? NAN : x;
}

/* Reduces the runs of variant v (seed order) into its curve. */
static void reduce(const am_wallclock_nn_params *par, size_t v, const am_wallclock_nn_outcome *runs,
                   am_wallclock_nn_curve *c)
{
    const size_t G = par->ngrid;
    const am_wallclock_variant *wv = &par->variants[v];
    c->variant = wv->variant;
    c->k = wv->k;
    c->batch = am_runtime_variant_batch(wv->variant, par->workers, wv->k);
    double x = NAN;
    am_status cs = am_runtime_time_per_iter(&par->runtime, wv->variant, par->workers, wv->k, &x);
    c->time_per_update_dutta = closed(cs, x);
    x = NAN;
    cs = am_runtime_p_fresh(&par->runtime, wv->variant, par->workers, wv->k, &x);
    c->p0_dutta = closed(cs, x);
    for (size_t g = 0; g < G; g++) {
        am_stats e = {0, 0, 0}, u = {0, 0, 0};
        for (size_t s = 0; s < par->seeds; s++) {
            const am_wallclock_nn_outcome *q = &runs[s];
            am_stats_push(&u, (double)q->updates[g]);
            if (isfinite(q->test_error[g])) am_stats_push(&e, q->test_error[g]);
        }
        c->time[g] = grid_time(par, g);
        c->test_error[g] = e.n > 0 ? e.mean : NAN;
        c->test_error_sem[g] = am_stats_sem(&e);
        c->updates_mean[g] = u.mean;
        c->alive[g] = (size_t)e.n;
    }
    for (size_t s = 0; s < par->seeds; s++) {
        const am_wallclock_nn_outcome *q = &runs[s];
        c->diverged += q->diverged != 0;
        if (isfinite(q->time_per_update)) am_stats_push(&c->time_per_update, q->time_per_update);
        if (isfinite(q->p0)) am_stats_push(&c->p0, q->p0);
        if (isfinite(q->mean_staleness)) am_stats_push(&c->mean_staleness, q->mean_staleness);
        double fsum = 0;
        size_t fn = 0;
        int ok = 1;
        for (size_t g = 0; g < G; g++) {
            if (4 * grid_time(par, g) < 3 * par->time) continue;
            if (!isfinite(q->test_error[g])) ok = 0;
            fsum += q->test_error[g];
            fn++;
        }
        if (ok && fn > 0) am_stats_push(&c->floor, fsum / (double)fn);
        for (size_t g = 0; g < G; g++)
            if (isfinite(q->test_error[g]) && q->test_error[g] <= par->target) {
                am_stats_push(&c->time_to_target, grid_time(par, g));
                c->reached++;
                break;
            }
    }
}

/* The runs of a sweep: run q is seed q mod seeds of variant q / seeds. */
typedef struct {
    const am_nn *net;
    const am_classset *train, *test;
    const am_wallclock_nn_params *par;
    am_wallclock_nn_outcome *runs;
    double *errs;
    uint64_t *ups;
} run_ctx;

static am_status run_job(void *vctx, size_t q, char *err, size_t errlen)
{
    const run_ctx *x = vctx;
    const size_t S = x->par->seeds, G = x->par->ngrid;
    x->runs[q].test_error = x->errs + q * G;
    x->runs[q].updates = x->ups + q * G;
    return am_wallclock_nn_run_one(x->net, x->train, x->test, x->par, q / S, q % S, &x->runs[q],
                                   NULL, err, errlen);
}

am_status am_wallclock_nn_run(const am_nn *net, const am_classset *train, const am_classset *test,
                              const am_wallclock_nn_params *par, am_wallclock_nn_result *res,
                              char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    am_status st = check_params(net, train, test, par, err, errlen);
    if (st) return st;
    const size_t G = par->ngrid, nv = par->nvariants, S = par->seeds, nrun = nv * S;
    res->curves = calloc(nv, sizeof *res->curves);
    if (!res->curves) return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    res->nvariants = nv;
    res->ngrid = G;
    res->seeds = S;
    for (size_t v = 0; v < nv; v++) {
        am_wallclock_nn_curve *c = &res->curves[v];
        c->time = malloc(G * sizeof *c->time);
        c->test_error = malloc(G * sizeof *c->test_error);
        c->test_error_sem = malloc(G * sizeof *c->test_error_sem);
        c->updates_mean = malloc(G * sizeof *c->updates_mean);
        c->alive = malloc(G * sizeof *c->alive);
        if (!c->time || !c->test_error || !c->test_error_sem || !c->updates_mean || !c->alive)
            return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    }
    am_wallclock_nn_outcome *runs = calloc(nrun, sizeof *runs);
    double *errs = malloc(nrun * G * sizeof *errs);
    uint64_t *ups = malloc(nrun * G * sizeof *ups);
    if (!runs || !errs || !ups) {
        free(runs);
        free(errs);
        free(ups);
        return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    }
    char why[256] = "";
    st = am_nntrain_runs(nrun, par->threads, run_job,
                         &(run_ctx){net, train, test, par, runs, errs, ups}, why, sizeof why);
    if (!st)
        for (size_t v = 0; v < nv; v++)
            reduce(par, v, runs + v * S, &res->curves[v]);
    free(runs);
    free(errs);
    free(ups);
    if (st) return am_common_fail(err, errlen, st, why);
    return AM_OK;
}
