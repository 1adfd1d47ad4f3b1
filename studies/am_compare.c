/*
 * am_compare.c -- mc, sde and ode on one grid and their sup gaps (see am_compare.h).
 */
#include "am_compare.h"

#include "../solvers/am_dde.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_run.h"

am_compare_params am_compare_params_default(void)
{
    am_compare_params p;
    memset(&p, 0, sizeof p);
    p.msgd = am_msgd_params_default();
    p.dt = p.msgd.eta;
    p.ode = am_ode_params_default();
    p.horizon = 10;
    p.ngrid = 200;
    p.ensemble = am_ensemble_params_default();
    return p;
}

void am_compare_result_free(am_compare_result *res)
{
    if (!res) return;
    free(res->t);
    free(res->err_mc);
    free(res->err_mc_sem);
    free(res->err_sde);
    free(res->err_sde_sem);
    free(res->err_ode);
    free(res->norm_ode);
    free(res->err_dde);
    free(res->norm_dde);
    res->err_dde = res->norm_dde = NULL;
    res->t = res->err_mc = res->err_mc_sem = res->err_sde = res->err_sde_sem = NULL;
    res->err_ode = res->norm_ode = NULL;
}

long am_compare_sup_gap(const double *a, const double *b, size_t n, double *gap)
{
    long arg = -1;
    *gap = NAN;
    for (size_t g = 0; g < n; g++) {
        double d = fabs(a[g] - b[g]);
        if (!isfinite(d)) { /* a side without a value at a saved time: no sup over the grid */
            *gap = NAN;
            return -1;
        }
        if (arg < 0 || d > *gap) {
            *gap = d;
            arg = (long)g;
        }
    }
    return arg;
}

/* Prefixes the stage to the reason of a failing run. */
static am_status stage_fail(am_status st, const char *stage, const char *why, char *err,
                            size_t errlen)
{
    if (err && errlen) snprintf(err, errlen, "%s: %s", stage, why);
    return st;
}

/* Copies the error column of an ensemble run (NaN where no replica is alive). */
static void err_column(const am_run_result *r, double *mean, double *sem)
{
    for (size_t g = 0; g < r->ngrid; g++) {
        int none = r->alive[g] == 0;
        mean[g] = none ? NAN : r->mean[g];
        sem[g] = none ? NAN : r->sem[g];
    }
}

/* The DDE at par->lag from the discrete engine's initial point (replica 0's), on res->t. */
static am_status dde_curve(const am_compare_params *par, am_compare_result *res, char *why,
                           size_t whylen)
{
    size_t n = res->ngrid, d = par->problem->dim;
    why[0] = 0;
    res->err_dde = malloc(n * sizeof *res->err_dde);
    res->norm_dde = malloc(n * sizeof *res->norm_dde);
    double *v0 = malloc(d * sizeof *v0);
    am_status st = AM_ENOMEM;
    am_msgd *m = NULL;
    am_dde *s = NULL;
    if (!res->err_dde || !res->norm_dde || !v0) goto done;
    m = am_msgd_alloc(par->problem, &par->msgd, &st, why, whylen);
    if (!m) goto done;
    am_msgd_initial(m, 0, v0);
    am_dde_params dp = am_dde_params_default();
    dp.rtol = par->ode.rtol > 1e-14 ? par->ode.rtol : 1e-14;
    s = am_dde_alloc(par->problem, &dp, &st, why, whylen);
    if (!s) goto done;
    am_ode_output o = {res->err_dde, res->norm_dde, NULL, NULL};
    st = am_dde_solve(s, par->msgd.mu, par->lag, v0, res->t, n, &o, NULL, why, whylen);
done:
    if (st == AM_ENOMEM && why[0] == 0) snprintf(why, whylen, "%s", am_strerror(st));
    am_dde_free(s);
    am_msgd_free(m);
    free(v0);
    return st;
}

am_status am_compare_run(const am_compare_params *par, am_compare_result *res, char *err,
                         size_t errlen)
{
    memset(res, 0, sizeof *res);
    res->sup_mc_ode_index = res->sup_mc_sde_index = res->sup_mc_dde_index = -1;
    res->sup_mc_ode = res->sup_mc_ode_sem = res->sup_mc_sde = res->sup_mc_sde_sem = NAN;
    res->sup_mc_dde = res->sup_mc_dde_sem = NAN;
    if (!par || !par->problem)
        return stage_fail(AM_EINVAL, "compare", "no problem given", err, errlen);
    if (par->msgd.delay.kind == AM_DELAY_WORKERS)
        return stage_fail(AM_EINVAL, "mc", "the delay workers:P:DIST is not available here", err,
                          errlen);
    char why[256];
    am_run_mc_params mp = am_run_mc_params_default();
    mp.problem = par->problem;
    mp.msgd = par->msgd;
    mp.msgd.coords = 0;
    mp.horizon = par->horizon;
    mp.ngrid = par->ngrid;
    mp.ensemble = par->ensemble;
    am_run_result mc, sde;
    memset(&sde, 0, sizeof sde);
    am_status st = am_run_mc(&mp, &mc, why, sizeof why);
    res->nobs = mc.nobs;
    res->memory = mc.memory;
    if (st) {
        am_run_result_free(&mc);
        return stage_fail(st, "mc", why, err, errlen);
    }
    am_run_sde_params sp = am_run_sde_params_default();
    sp.problem = par->problem;
    sp.msgd = mp.msgd;
    sp.model = AM_RUN_SDE_GLOBAL;
    sp.noise = 1;
    sp.sampler = AM_SDE_SAMPLER_FAST;
    sp.dt = par->dt;
    sp.horizon = par->horizon;
    sp.ngrid = par->ngrid;
    sp.ensemble = par->ensemble;
    st = am_run_sde(&sp, &sde, why, sizeof why);
    res->nobs = sde.nobs;
    res->memory = sde.memory;
    if (st) {
        st = stage_fail(st, "sde", why, err, errlen);
        goto done;
    }
    size_t n = par->ngrid;
    res->ngrid = n;
    res->t = malloc(n * sizeof *res->t);
    res->err_mc = malloc(n * sizeof *res->err_mc);
    res->err_mc_sem = malloc(n * sizeof *res->err_mc_sem);
    res->err_sde = malloc(n * sizeof *res->err_sde);
    res->err_sde_sem = malloc(n * sizeof *res->err_sde_sem);
    res->err_ode = malloc(n * sizeof *res->err_ode);
    res->norm_ode = malloc(n * sizeof *res->norm_ode);
    if (!res->t || !res->err_mc || !res->err_mc_sem || !res->err_sde || !res->err_sde_sem ||
        !res->err_ode || !res->norm_ode) {
        st = stage_fail(AM_ENOMEM, "compare", am_strerror(AM_ENOMEM), err, errlen);
        goto done;
    }
    memcpy(res->t, mc.t, n * sizeof *res->t);
    st = am_run_ode_at(par->problem, &mp.msgd, &par->ode, res->t, n, res->err_ode, res->norm_ode,
                       &res->ode_stats, why, sizeof why);
    if (st) {
        st = stage_fail(st, "ode", why, err, errlen);
        goto done;
    }
    if (par->lag > 0) {
        st = dde_curve(par, res, why, sizeof why);
        if (st) {
            st = stage_fail(st, "dde", why, err, errlen);
            goto done;
        }
    }
    err_column(&mc, res->err_mc, res->err_mc_sem);
    err_column(&sde, res->err_sde, res->err_sde_sem);
    res->diverged_mc = mc.diverged;
    res->diverged_sde = sde.diverged;
    long i_ode = am_compare_sup_gap(res->err_mc, res->err_ode, n, &res->sup_mc_ode);
    long i_sde = am_compare_sup_gap(res->err_mc, res->err_sde, n, &res->sup_mc_sde);
    res->sup_mc_ode_index = i_ode;
    res->sup_mc_sde_index = i_sde;
    res->sup_mc_ode_sem = i_ode >= 0 ? res->err_mc_sem[i_ode] : NAN;
    if (res->err_dde) {
        long i_dde = am_compare_sup_gap(res->err_mc, res->err_dde, n, &res->sup_mc_dde);
        res->sup_mc_dde_index = i_dde;
        res->sup_mc_dde_sem = i_dde >= 0 ? res->err_mc_sem[i_dde] : NAN;
    }
    res->sup_mc_sde_sem = i_sde >= 0 ? hypot(res->err_mc_sem[i_sde], res->err_sde_sem[i_sde]) : NAN;
done:
    am_run_result_free(&mc);
    am_run_result_free(&sde);
    return st;
}
