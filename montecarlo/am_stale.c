/*
 * am_stale.c -- the simulated-staleness runs of am_stale.h on an objective of am_objective.h.
 */
#include "am_stale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "../core/am_ensemble.h"

static double dot(size_t d, const double *u, const double *v)
{
    double s = 0;
    for (size_t i = 0; i < d; i++)
        s += u[i] * v[i];
    return s;
}

am_stale_params am_stale_params_default(void)
{
    am_stale_params p = {4, 0, 8, 0.01, 20000, 1};
    return p;
}

static uint64_t uniform_below(am_rng *r, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)am_rng_u64(r) * m) >> 64);
}

am_status am_stale_run_one(const am_objective *f, const am_optim_params *opt,
                           const am_stale_params *sp, uint64_t replica, am_stale_run *out)
{
    out->reached = 0;
    out->steps = 0;
    out->coherence_min = NAN;
    if (sp->workers < 1 || sp->batch < 1 || !(sp->target > 0 && sp->target < 1) ||
        sp->s > 100000000)
        return AM_EINVAL;
    size_t d = am_objective_dim(f), slots = sp->s + 1;
    am_status st;
    am_optim *o = am_optim_alloc(opt, d, &st);
    if (!o) return st;
    double *hist = malloc(slots * d * sizeof *hist), *grads = malloc(slots * d * sizeof *grads);
    double *x = malloc(d * sizeof *x), *g = malloc(d * sizeof *g);
    if (!hist || !grads || !x || !g) {
        st = AM_ENOMEM;
        goto done;
    }
    st = AM_OK;
    am_objective_start(f, sp->seed, replica, x);
    memcpy(hist, x, d * sizeof *x);
    double fstar = am_objective_optimum(f);
    double gap0 = am_objective_loss(f, x, grads) - fstar;
    double cmin = INFINITY;
    if (gap0 <= 0) {
        out->reached = 1;
        goto done;
    }
    double thresh = sp->target * gap0, inv = 1.0 / (double)(sp->workers * sp->batch);
    am_rng r;
    am_rng_init(&r, sp->seed, replica, AM_STREAM_STALE, 0);
    for (uint64_t k = 0; k < sp->max_steps; k++) {
        am_rng_seek(&r, k);
        memset(g, 0, d * sizeof *g);
        uint64_t maxr = k < sp->s ? k : sp->s;
        for (size_t p = 0; p < sp->workers; p++) {
            uint64_t lag = uniform_below(&r, sp->s + 1);
            if (lag > maxr) lag = maxr;
            const double *xs = hist + ((k - lag) % slots) * d;
            for (size_t b = 0; b < sp->batch; b++)
                am_objective_add_sample_grad(f, xs, (size_t)uniform_below(&r, am_objective_rows(f)),
                                             g);
        }
        for (size_t i = 0; i < d; i++)
            g[i] *= inv;
        am_optim_step(o, x, g);
        uint64_t k1 = k + 1;
        double *gk = grads + (k1 % slots) * d;
        memcpy(hist + (k1 % slots) * d, x, d * sizeof *x);
        double gap = am_objective_loss(f, x, gk) - fstar;
        out->steps = (double)k1;
        if (!isfinite(gap)) break;
        double gg = dot(d, gk, gk);
        if (gg > 0) {
            uint64_t jlo = k1 > sp->s ? k1 - sp->s : 0;
            double mu = INFINITY;
            for (uint64_t j = jlo; j <= k1; j++)
                mu = fmin(mu, dot(d, gk, grads + (j % slots) * d) / gg);
            cmin = fmin(cmin, mu);
        }
        if (gap <= thresh) {
            out->reached = 1;
            break;
        }
    }
    out->coherence_min = isfinite(cmin) ? cmin : NAN;
done:
    am_optim_free(o);
    free(hist);
    free(grads);
    free(x);
    free(g);
    return st;
}

/* The replicas of am_stale_ensemble: run r is replica r. */
typedef struct {
    const am_objective *f;
    const am_optim_params *opt;
    const am_stale_params *sp;
    am_stale_run *runs;
} ensemble_ctx;

static am_status ensemble_job(void *vctx, size_t r, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const ensemble_ctx *x = vctx;
    return am_stale_run_one(x->f, x->opt, x->sp, r, &x->runs[r]);
}

am_status am_stale_ensemble(const am_objective *f, const am_optim_params *opt,
                            const am_stale_params *sp, size_t replicas, int threads,
                            am_stale_summary *out)
{
    memset(out, 0, sizeof *out);
    if (replicas < 1) return AM_EINVAL;
    am_stale_run *runs = malloc(replicas * sizeof *runs);
    if (!runs) return AM_ENOMEM;
    am_status fail = am_ensemble_jobs(replicas, threads, ensemble_job,
                                      &(ensemble_ctx){f, opt, sp, runs}, NULL, 0);
    if (fail) {
        free(runs);
        return fail;
    }
    out->replicas = replicas;
    for (size_t r = 0; r < replicas; r++) {
        if (runs[r].reached) {
            out->reached++;
            am_stats_push(&out->steps, runs[r].steps);
        }
        if (isfinite(runs[r].coherence_min)) am_stats_push(&out->coherence, runs[r].coherence_min);
    }
    free(runs);
    return AM_OK;
}
