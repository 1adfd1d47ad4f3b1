/*
 * am_sde.c -- the Euler–Maruyama engine of am_sde.h and its ensemble adapter:
 *
 *   X_{k+1} = X_k + b(k dt, X_k) dt + S(k dt, X_k) sqrt(dt) z_k,
 *
 * z_k drawn from Philox (seed, replica, AM_STREAM_NOISE, step k). A path is one block of
 * memory: header | x | b | dw | scratch, each part 64-byte aligned, laid out once. When the
 * system has advance_lanes, the adapter hands the ensemble's blocks of replicas to it
 * AM_SDE_LANES at a time (the same bytes as one path at a time).
 */
#include "am_sde_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct am_sde_path {
    const am_sde_system *sys;
    const am_sde_params *par;
    uint64_t k;       /* steps taken */
    uint64_t replica; /* the replica of am_sde_path_start */
    double sqrt_dt;   /* sqrt(dt) */
    double *x, *b, *dw;
    void *scratch;
    am_rng rng;
};

struct am_sde_model {
    const am_sde_system *sys;
    const am_sde_params *par;
    const am_sde_observer *obs;
    am_model model;
};

static size_t align64(size_t n)
{
    return (n + 63) / 64 * 64;
}

am_sde_params am_sde_params_default(void)
{
    am_sde_params p = {5e-4, 1, 1e6, 1};
    return p;
}

am_status am_sde_check(const am_sde_system *sys, const am_sde_params *par, char *err, size_t errlen)
{
    if (!sys || !par || !sys->drift || sys->dim == 0 || (par->noise && !sys->noise)) {
        snprintf(err, errlen, "the system needs a dimension, a drift and (with noise) a sampler");
        return AM_EINVAL;
    }
    if (!(par->dt > 0) || !isfinite(par->dt)) {
        snprintf(err, errlen, "dt must be a finite number > 0, got %g", par->dt);
        return AM_EINVAL;
    }
    if (!(par->blowup > 0) || isnan(par->blowup)) {
        snprintf(err, errlen, "blowup must be > 0, got %g", par->blowup);
        return AM_EINVAL;
    }
    return AM_OK;
}

size_t am_sde_path_bytes(const am_sde_system *sys)
{
    size_t vec = align64(sys->dim * sizeof(double));
    return align64(sizeof(am_sde_path)) + 3 * vec + align64(sys->scratch_bytes);
}

am_sde_path *am_sde_path_place(void *mem, const am_sde_system *sys, const am_sde_params *par)
{
    size_t vec = align64(sys->dim * sizeof(double));
    char *base = mem;
    am_sde_path *p = mem;
    memset(p, 0, sizeof *p);
    p->sys = sys;
    p->par = par;
    p->sqrt_dt = sqrt(par->dt);
    base += align64(sizeof *p);
    p->x = (double *)base;
    p->b = (double *)(base + vec);
    p->dw = (double *)(base + 2 * vec);
    p->scratch = sys->scratch_bytes ? base + 3 * vec : NULL;
    return p;
}

am_sde_path *am_sde_path_alloc(const am_sde_system *sys, const am_sde_params *par,
                               am_status *status, char *err, size_t errlen)
{
    am_status st = am_sde_check(sys, par, err, errlen);
    if (st) {
        *status = st;
        return NULL;
    }
    void *mem = aligned_alloc(64, am_sde_path_bytes(sys));
    if (!mem) {
        if (err && errlen) snprintf(err, errlen, "%s", am_strerror(AM_ENOMEM));
        *status = AM_ENOMEM;
        return NULL;
    }
    memset(mem, 0, am_sde_path_bytes(sys));
    *status = AM_OK;
    return am_sde_path_place(mem, sys, par);
}

void am_sde_path_free(am_sde_path *path)
{
    free(path);
}

void am_sde_path_start(am_sde_path *path, uint64_t replica, const double *x0)
{
    path->k = 0;
    path->replica = replica;
    memmove(path->x, x0, path->sys->dim * sizeof(double));
    am_rng_init(&path->rng, path->par->seed, replica, AM_STREAM_NOISE, 0);
}

int am_sde_path_step(am_sde_path *path)
{
    const am_sde_system *sys = path->sys;
    const am_sde_params *par = path->par;
    size_t n = sys->dim;
    double dt = par->dt, t = (double)path->k * dt;
    double *x = path->x;
    const double *b = path->b, *dw = path->dw;
    sys->drift(t, x, path->b, sys->params, path->scratch);
    double nn = 0;
    if (par->noise) {
        am_rng_seek(&path->rng, path->k);
        sys->noise(t, x, path->sqrt_dt, &path->rng, path->dw, sys->params, path->scratch);
        for (size_t i = 0; i < n; i++) {
            x[i] += dt * b[i] + dw[i];
            nn += x[i] * x[i];
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            x[i] += dt * b[i];
            nn += x[i] * x[i];
        }
    }
    path->k++;
    return !(nn <= par->blowup * par->blowup);
}

int am_sde_path_run(am_sde_path *path, uint64_t k1)
{
    while (path->k < k1)
        if (am_sde_path_step(path)) return 1;
    return 0;
}

const double *am_sde_path_state(const am_sde_path *path)
{
    return path->x;
}

uint64_t am_sde_path_steps(const am_sde_path *path)
{
    return path->k;
}

/* ---- ensemble adapter: the path lives in the ensemble's per-thread workspace ---- */

static am_status model_start(const void *ctx, uint64_t replica, void *work)
{
    const am_sde_model *m = ctx;
    am_sde_path *p = am_sde_path_place(work, m->sys, m->par);
    /* the initial point is written into the drift buffer, then copied into the state */
    am_status st = m->obs->initial(replica, p->b, m->obs->params);
    if (st) return st;
    am_sde_path_start(p, replica, p->b);
    return AM_OK;
}

static int model_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    (void)ctx;
    (void)k0;
    return am_sde_path_run(work, k1);
}

/* Replicas side by side through the system's advance_lanes, AM_SDE_LANES at a time; a group
 * it does not run (or of one path) goes one path at a time. */
static void model_advance_batch(const void *ctx, void *const *works, size_t n, uint64_t k0,
                                uint64_t k1, int *diverged)
{
    const am_sde_model *m = ctx;
    const am_sde_system *sys = m->sys;
    for (size_t j0 = 0; j0 < n; j0 += AM_SDE_LANES) {
        size_t nl = n - j0 < AM_SDE_LANES ? n - j0 : AM_SDE_LANES;
        double *x[AM_SDE_LANES];
        uint64_t rep[AM_SDE_LANES];
        int same = 1;
        for (size_t j = 0; j < nl; j++) {
            am_sde_path *p = works[j0 + j];
            x[j] = p->x;
            rep[j] = p->replica;
            same &= p->k == k0;
        }
        if (nl < 2 || !same || !sys->advance_lanes ||
            sys->advance_lanes(sys->params, m->par, x, rep, nl, k0, k1, diverged + j0)) {
            for (size_t j = 0; j < nl; j++)
                diverged[j0 + j] = am_sde_path_run(works[j0 + j], k1);
            continue;
        }
        for (size_t j = 0; j < nl; j++)
            ((am_sde_path *)works[j0 + j])->k = k1;
    }
}

static void model_observe(const void *ctx, const void *work, double *obs)
{
    const am_sde_model *m = ctx;
    const am_sde_path *p = work;
    m->obs->observe(p->x, obs, m->obs->params);
}

am_sde_model *am_sde_model_alloc(const am_sde_system *sys, const am_sde_params *par,
                                 const am_sde_observer *obs, am_status *status, char *err,
                                 size_t errlen)
{
    am_status st = am_sde_check(sys, par, err, errlen);
    if (st == AM_OK && (!obs || obs->nobs == 0 || !obs->initial || !obs->observe)) {
        st = AM_EINVAL;
        if (err && errlen)
            snprintf(err, errlen, "the observer needs observables, an initial point and observe");
    }
    if (st) {
        *status = st;
        return NULL;
    }
    am_sde_model *m = calloc(1, sizeof *m);
    if (!m) {
        if (err && errlen) snprintf(err, errlen, "%s", am_strerror(AM_ENOMEM));
        *status = AM_ENOMEM;
        return NULL;
    }
    m->sys = sys;
    m->par = par;
    m->obs = obs;
    m->model.nobs = obs->nobs;
    m->model.nsummary = 0;
    m->model.work_bytes = am_sde_path_bytes(sys);
    m->model.start = model_start;
    m->model.advance = model_advance;
    m->model.observe = model_observe;
    m->model.summarize = NULL;
    m->model.ctx = m;
    m->model.batch = sys->advance_lanes ? AM_SDE_LANES : 0;
    m->model.advance_batch = sys->advance_lanes ? model_advance_batch : NULL;
    *status = AM_OK;
    return m;
}

void am_sde_model_free(am_sde_model *m)
{
    free(m);
}

const am_model *am_sde_model_get(const am_sde_model *m)
{
    return &m->model;
}
