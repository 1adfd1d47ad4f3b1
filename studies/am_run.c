/*
 * am_run.c -- one engine run on the common grid (see am_run.h): the ensemble's streaming
 * statistics turned into columns of means and standard errors, and the SDE and ODE started
 * where the discrete engine starts.
 */
#include "am_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_msgd_ps.h"

void am_run_result_free(am_run_result *res)
{
    if (!res) return;
    free(res->t);
    free(res->step);
    free(res->mean);
    free(res->sem);
    free(res->alive);
    res->t = NULL;
    res->step = NULL;
    res->mean = res->sem = NULL;
    res->alive = NULL;
}

/* Runs a model whose observables start with (err, norm[, h_1^2..h_d^2]) on the grid, with
 * saved steps round(t_g / h), and stores the statistics column by column. */
static am_status run_model(const am_model *model, double h, double horizon, size_t ngrid,
                           const am_ensemble_params *ep, am_run_result *res, char *err,
                           size_t errlen)
{
    am_grid grid = {ngrid, horizon};
    res->ngrid = ngrid;
    res->nobs = model->nobs;
    res->replicas = ep->replicas;
    res->t = malloc(ngrid * sizeof *res->t);
    res->step = malloc(ngrid * sizeof *res->step);
    if (!res->t || !res->step) return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    am_grid_times(&grid, res->t);
    am_status st = am_grid_steps(&grid, h, res->step);
    if (st) return am_common_fail(err, errlen, st, NULL);
    res->memory = am_ensemble_memory(model, ngrid, ep);
    if (res->memory > (double)AM_MEMORY_LIMIT)
        return am_common_fail(err, errlen, AM_ENOMEM, "the ensemble would exceed the memory limit");
    am_ensemble_result *er = NULL;
    st = am_ensemble_run(model, res->step, ngrid, ep, &er);
    if (st) return am_common_fail(err, errlen, st, NULL);
    size_t no = er->nobs;
    res->mean = malloc(no * ngrid * sizeof *res->mean);
    res->sem = malloc(no * ngrid * sizeof *res->sem);
    res->alive = malloc(ngrid * sizeof *res->alive);
    if (!res->mean || !res->sem || !res->alive) {
        am_ensemble_result_free(er);
        return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    }
    for (size_t g = 0; g < ngrid; g++) {
        res->alive[g] = er->alive[g];
        for (size_t j = 0; j < no; j++) { /* no survivor at a saved time: no value (NaN) */
            res->mean[j * ngrid + g] = er->alive[g] ? er->obs[g * no + j].mean : NAN;
            res->sem[j * ngrid + g] = er->alive[g] ? am_stats_sem(&er->obs[g * no + j]) : NAN;
        }
    }
    res->diverged = er->diverged;
    am_ensemble_result_free(er);
    return AM_OK;
}

am_run_mc_params am_run_mc_params_default(void)
{
    am_run_mc_params p;
    memset(&p, 0, sizeof p);
    p.msgd = am_msgd_params_default();
    p.variant = AM_VARIANT_ASYNC;
    p.k = 1;
    p.horizon = 10;
    p.ngrid = 200;
    p.ensemble = am_ensemble_params_default();
    return p;
}

am_status am_run_mc(const am_run_mc_params *par, am_run_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (!par || !par->problem) return am_common_fail(err, errlen, AM_EINVAL, "no problem given");
    const am_problem *p = par->problem;
    res->dim = p->dim;
    res->coords = par->msgd.coords;
    am_status st;
    if (par->msgd.delay.kind == AM_DELAY_WORKERS) {
        am_msgd_ps_params pp;
        memset(&pp, 0, sizeof pp);
        pp.msgd = par->msgd;
        pp.variant = par->variant;
        pp.k = par->k;
        pp.lr_c = par->lr_c;
        pp.lr_max = par->lr_max;
        am_msgd_ps *eng = am_msgd_ps_alloc(p, &pp, &st, err, errlen);
        if (!eng) return st;
        st = run_model(am_msgd_ps_model(eng), par->msgd.eta, par->horizon, par->ngrid,
                       &par->ensemble, res, err, errlen);
        res->wallclock = 1;
        am_msgd_ps_free(eng);
        return st;
    }
    am_msgd *m = am_msgd_alloc(p, &par->msgd, &st, err, errlen);
    if (!m) return st;
    st = run_model(am_msgd_model(m), par->msgd.eta, par->horizon, par->ngrid, &par->ensemble, res,
                   err, errlen);
    am_msgd_free(m);
    return st;
}

am_run_sde_params am_run_sde_params_default(void)
{
    am_run_sde_params p;
    memset(&p, 0, sizeof p);
    p.msgd = am_msgd_params_default();
    p.model = AM_RUN_SDE_GLOBAL;
    p.noise = 1;
    p.sampler = AM_SDE_SAMPLER_FAST;
    p.dt = p.msgd.eta;
    p.horizon = 10;
    p.ngrid = 200;
    p.ensemble = am_ensemble_params_default();
    return p;
}

/* The initial point of the Monte Carlo engine, so that every engine starts alike. */
static void msgd_initial(uint64_t replica, double *v0, const void *ctx)
{
    am_msgd_initial(ctx, replica, v0);
}

/* The discrete engine without delay: the source of every engine's initial point. */
static am_msgd *initial_engine(const am_problem *p, const am_msgd_params *mp, am_status *st,
                               char *err, size_t errlen)
{
    am_msgd_params ip = *mp;
    am_delay_make(AM_DELAY_NONE, 0, &ip.delay);
    return am_msgd_alloc(p, &ip, st, err, errlen);
}

am_status am_run_sde(const am_run_sde_params *par, am_run_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (!par || !par->problem) return am_common_fail(err, errlen, AM_EINVAL, "no problem given");
    const am_problem *p = par->problem;
    const am_msgd_params *mp = &par->msgd;
    res->dim = p->dim;
    res->coords = mp->coords;
    am_status st;
    am_msgd *init = initial_engine(p, mp, &st, err, errlen);
    if (!init) return st;
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = mp->eta;
    pp.mu = mp->mu;
    pp.sampler = par->sampler;
    pp.coords = mp->coords;
    pp.blowup = mp->blowup;
    pp.initial = msgd_initial;
    pp.initial_ctx = init;
    am_sde_pca *m = par->model == AM_RUN_SDE_OU ? am_sde_pca_ou_alloc(p, &pp, &st)
                                                : am_sde_pca_global_alloc(p, &pp, &st);
    am_sde_model *sm = NULL;
    if (!m) {
        am_common_fail(err, errlen, st,
                       st == AM_EDOM ? "the SDE needs finite fourth moments of the data" : NULL);
    } else {
        am_sde_params sp = am_sde_params_default();
        sp.dt = par->dt;
        sp.noise = par->noise;
        sp.seed = mp->seed;
        sp.blowup = am_sde_pca_state_blowup(m);
        sm =
            am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, err, errlen);
        if (sm)
            st = run_model(am_sde_model_get(sm), par->dt, par->horizon, par->ngrid, &par->ensemble,
                           res, err, errlen);
    }
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    am_msgd_free(init);
    return st;
}

am_run_ode_params am_run_ode_params_default(void)
{
    am_run_ode_params p;
    memset(&p, 0, sizeof p);
    p.msgd = am_msgd_params_default();
    p.ode = am_ode_params_default();
    p.horizon = 10;
    p.ngrid = 200;
    return p;
}

/* Solves from the discrete engine's initial point into out. */
static am_status solve_from_initial(const am_problem *p, const am_msgd_params *mp,
                                    const am_ode_params *op, const double *t, size_t n,
                                    const am_ode_output *out, am_ode_stats *stats, char *err,
                                    size_t errlen)
{
    am_status st;
    am_msgd *init = initial_engine(p, mp, &st, err, errlen);
    if (!init) return st;
    double *v0 = malloc(p->dim * sizeof *v0);
    if (!v0) {
        am_msgd_free(init);
        return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    }
    am_msgd_initial(init, 0, v0); /* the point every replica starts from (replica 0 if each) */
    am_msgd_free(init);
    char why[200];
    am_ode *ode = am_ode_alloc(p, op, &st, why, sizeof why);
    if (!ode && err && errlen) snprintf(err, errlen, "cannot build the CVODE solver: %s", why);
    if (ode) {
        st = am_ode_solve(ode, mp->mu, v0, t, n, out, stats);
        if (st == AM_ESOLVER) {
            const char *msg = am_ode_last_error(ode);
            if (err && errlen)
                snprintf(err, errlen, "CVODE failed: %s", msg[0] ? msg : "unknown reason");
        } else if (st) {
            am_common_fail(err, errlen, st, NULL);
        }
    }
    am_ode_free(ode);
    free(v0);
    return st;
}

am_status am_run_ode_at(const am_problem *p, const am_msgd_params *mp, const am_ode_params *op,
                        const double *t, size_t n, double *err_out, double *norm_out,
                        am_ode_stats *stats, char *err, size_t errlen)
{
    am_ode_output out = {err_out, norm_out, NULL, NULL};
    return solve_from_initial(p, mp, op, t, n, &out, stats, err, errlen);
}

am_status am_run_ode(const am_run_ode_params *par, am_run_ode_result *res, char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (!par || !par->problem) return am_common_fail(err, errlen, AM_EINVAL, "no problem given");
    const am_problem *p = par->problem;
    size_t n = par->ngrid, d = p->dim;
    if (n == 0) return am_common_fail(err, errlen, AM_EINVAL, "ngrid must be >= 1");
    if (par->coords && 8.0 * (double)n * (double)d > (double)AM_MEMORY_LIMIT)
        return am_common_fail(err, errlen, AM_ENOMEM,
                              "the h_i^2 columns would exceed the memory limit");
    res->ngrid = n;
    res->dim = d;
    res->t = malloc(n * sizeof *res->t);
    res->err = malloc(n * sizeof *res->err);
    res->norm = malloc(n * sizeof *res->norm);
    res->h2 = par->coords ? malloc(n * d * sizeof *res->h2) : NULL;
    if (!res->t || !res->err || !res->norm || (par->coords && !res->h2))
        return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    am_grid grid = {n, par->horizon};
    am_grid_times(&grid, res->t);
    am_ode_output out = {res->err, res->norm, res->h2, NULL};
    return solve_from_initial(p, &par->msgd, &par->ode, res->t, n, &out, &res->stats, err, errlen);
}

void am_run_ode_result_free(am_run_ode_result *res)
{
    if (!res) return;
    free(res->t);
    free(res->err);
    free(res->norm);
    free(res->h2);
    res->t = res->err = res->norm = res->h2 = NULL;
}
