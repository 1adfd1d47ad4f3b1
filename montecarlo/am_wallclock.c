/*
 * am_wallclock.c -- parameter-server variants against wall-clock time (see am_wallclock.h).
 */
#include "am_wallclock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_ensemble.h"
#include "am_msgd_ps.h"
#include "am_pslsq.h"
#include "../theory/am_lsqbound.h"

am_wallclock_params am_wallclock_params_default(void)
{
    am_wallclock_params p;
    memset(&p, 0, sizeof p);
    p.objective = AM_WALLCLOCK_LSQ;
    p.workers = 8;
    am_runtime_make(AM_RUNTIME_EXP, 1, 0, &p.runtime);
    p.updates = 2000;
    p.ngrid = 50;
    p.replicas = 200;
    p.seed = 1;
    p.eta = 0.02;
    p.init.kind = AM_INIT_RANDOM;
    p.dim = 4;
    p.lmax = 2;
    p.lmin = 0.5;
    p.sigma = 0.5;
    return p;
}

void am_wallclock_result_free(am_wallclock_result *res)
{
    if (!res) return;
    for (size_t i = 0; res->curves && i < res->nvariants; i++) {
        am_wallclock_curve *c = &res->curves[i];
        free(c->wallclock_mean);
        free(c->wallclock_sem);
        free(c->err_mean);
        free(c->err_sem);
        free(c->alive);
    }
    free(res->curves);
    free(res->update);
    res->curves = NULL;
    res->update = NULL;
}

/* The exact and bound values of a least-squares variant next to its measured curve. */
static am_status lsq_theory(const am_wallclock_params *par, const double *lam, const uint64_t *ks,
                            const am_ensemble_result *er, am_wallclock_curve *w)
{
    size_t ngrid = par->ngrid;
    double eta = par->eta, kb = (double)w->batch;
    int fixed = par->lr_c == 0;
    int sync = w->variant == AM_VARIANT_SYNC || w->variant == AM_VARIANT_KSYNC ||
               w->variant == AM_VARIANT_KBATCHSYNC;
    if (sync && fixed &&
        am_lsqbound_floor_exact(lam, par->dim, eta, par->sigma, kb, &w->floor_exact))
        w->floor_exact = NAN;
    w->floor_dutta = fixed ? am_lsqbound_floor_dutta(lam, par->dim, eta, par->sigma, kb) : NAN;
    double ec = eta * par->lmin;
    w->decay_dutta = fixed ? 1 - ec : NAN;
    if (sync && fixed && isfinite(w->floor_exact)) {
        /* the exact curve through the same window as the measured one */
        double *fe = malloc((size_t)(par->updates + 1) * sizeof *fe);
        double *fg = malloc(ngrid * sizeof *fg);
        if (!fe || !fg) {
            free(fe);
            free(fg);
            return AM_ENOMEM;
        }
        am_lsqbound_curve_exact(lam, par->dim, eta, par->sigma, kb, (size_t)par->updates + 1, fe);
        for (size_t g = 0; g < ngrid; g++)
            fg[g] = fe[ks[g]];
        if (am_pslsq_decay(ks, fg, ngrid, w->floor_exact, &w->decay_exact)) w->decay_exact = NAN;
        free(fe);
        free(fg);
    }
    size_t no = er->nobs;
    /* p0: the replicas' fresh fractions; gamma: the largest drift ratio over the saved updates */
    w->p0 = er->summary_stats[1].n > 0 ? er->summary_stats[1].mean : NAN;
    w->gamma = 0;
    for (size_t g = 0; g < ngrid; g++) {
        if (ks[g] == 0 || !er->alive[g]) continue;
        double g2 = er->obs[g * no + 2].mean, dr = er->obs[g * no + 3].mean;
        if (g2 > 0 && dr / g2 > w->gamma) w->gamma = dr / g2;
    }
    if (!sync && fixed) {
        w->decay_dutta_async = am_lsqbound_decay_dutta_async(lam, par->dim, eta, w->gamma, w->p0);
        w->floor_dutta_async =
            am_lsqbound_floor_dutta_async(lam, par->dim, eta, par->sigma, kb, w->gamma, w->p0);
    }
    double *f = malloc(ngrid * sizeof *f);
    if (!f) return AM_ENOMEM;
    for (size_t g = 0; g < ngrid; g++)
        f[g] = er->alive[g] ? er->obs[g * no].mean : NAN; /* no survivor: no value */
    /* the floor over the replicas that did not diverge: none left means no floor, not 0 */
    int any = er->summary_stats[0].n > 0;
    w->floor_measured = any ? er->summary_stats[0].mean : NAN;
    w->floor_measured_sem = any ? am_stats_sem(&er->summary_stats[0]) : NAN;
    if (am_pslsq_decay(ks, f, ngrid, w->floor_measured, &w->decay_measured))
        w->decay_measured = NAN;
    free(f);
    return AM_OK;
}

/* Stores the wall-clock and error columns of one variant's ensemble. */
static am_status store_curve(const am_ensemble_result *er, size_t ngrid, size_t ot,
                             am_wallclock_curve *w)
{
    size_t no = er->nobs;
    w->wallclock_mean = malloc(ngrid * sizeof *w->wallclock_mean);
    w->wallclock_sem = malloc(ngrid * sizeof *w->wallclock_sem);
    w->err_mean = malloc(ngrid * sizeof *w->err_mean);
    w->err_sem = malloc(ngrid * sizeof *w->err_sem);
    w->alive = malloc(ngrid * sizeof *w->alive);
    if (!w->wallclock_mean || !w->wallclock_sem || !w->err_mean || !w->err_sem || !w->alive)
        return AM_ENOMEM;
    for (size_t g = 0; g < ngrid; g++) {
        /* no survivor at this update: no value (NaN), never the 0 of an empty mean */
        int any = er->alive[g] > 0;
        w->wallclock_mean[g] = any ? er->obs[g * no + ot].mean : NAN;
        w->wallclock_sem[g] = any ? am_stats_sem(&er->obs[g * no + ot]) : NAN;
        w->err_mean[g] = any ? er->obs[g * no].mean : NAN;
        w->err_sem[g] = any ? am_stats_sem(&er->obs[g * no]) : NAN;
        w->alive[g] = er->alive[g];
    }
    w->diverged = er->diverged;
    return AM_OK;
}

am_status am_wallclock_run(const am_wallclock_params *par, am_wallclock_result *res, char *err,
                           size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (!par || par->nvariants == 0 || !par->variants || par->ngrid < 2 || par->replicas < 2)
        return am_common_fail(err, errlen, AM_EINVAL,
                              "needs variants, ngrid >= 2 and replicas >= 2");
    int pca = par->objective == AM_WALLCLOCK_PCA;
    if (pca && !par->problem) return am_common_fail(err, errlen, AM_EINVAL, "pca needs a problem");
    size_t ngrid = par->ngrid, nv = par->nvariants, p = par->workers;
    res->ngrid = ngrid;
    res->update = malloc(ngrid * sizeof *res->update);
    res->curves = calloc(nv, sizeof *res->curves);
    if (!res->update || !res->curves) return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    res->nvariants = nv;
    uint64_t *ks = res->update;
    /* saved steps: 0 and ngrid-1 points spread evenly up to N */
    for (size_t g = 0; g < ngrid; g++)
        ks[g] = (uint64_t)llround((double)par->updates * (double)g / (double)(ngrid - 1));
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = par->replicas;
    ep.threads = par->threads;

    am_msgd_params mp = am_msgd_params_default();
    am_pslsq_params lp;
    memset(&lp, 0, sizeof lp);
    double *lam = NULL;
    if (pca) {
        mp.mu = par->mu;
        mp.init = par->init;
        mp.eta = par->eta;
        mp.seed = par->seed;
        mp.delay.kind = AM_DELAY_WORKERS;
        mp.delay.param = (double)p;
        mp.delay.runtime = par->runtime;
    } else {
        lp.dim = par->dim;
        lp.lmax = par->lmax;
        lp.lmin = par->lmin;
        lp.sigma = par->sigma;
        lp.eta = par->eta;
        lp.lr_c = par->lr_c;
        lp.lr_max = par->lr_max;
        lam = malloc(lp.dim * sizeof *lam);
        if (!lam) return am_common_fail(err, errlen, AM_ENOMEM, NULL);
        for (size_t i = 0; i < lp.dim; i++)
            lam[i] = am_pslsq_lambda(&lp, i);
    }
    am_status st = AM_OK;
    char why[256] = "";
    for (size_t i = 0; i < nv && st == AM_OK; i++) {
        am_wallclock_curve *w = &res->curves[i];
        w->variant = par->variants[i].variant;
        w->k = par->variants[i].k;
        w->batch = am_runtime_variant_batch(w->variant, p, w->k);
        w->floor_measured = w->floor_measured_sem = NAN;
        w->floor_exact = w->floor_dutta = NAN;
        w->decay_measured = w->decay_exact = w->decay_dutta = NAN;
        w->p0 = w->gamma = w->decay_dutta_async = w->floor_dutta_async = NAN;
        am_ensemble_result *er = NULL;
        size_t ot = 1;
        if (pca) {
            am_msgd_ps_params pp;
            memset(&pp, 0, sizeof pp);
            pp.msgd = mp;
            pp.variant = w->variant;
            pp.k = w->k;
            pp.lr_c = par->lr_c;
            pp.lr_max = par->lr_max;
            am_msgd_ps *eng = am_msgd_ps_alloc(par->problem, &pp, &st, why, sizeof why);
            if (!eng) break;
            st = am_ensemble_run(am_msgd_ps_model(eng), ks, ngrid, &ep, &er);
            am_msgd_ps_free(eng);
        } else {
            lp.ps = am_ps_params_default();
            lp.ps.workers = p;
            lp.ps.runtime = par->runtime;
            lp.ps.variant = w->variant;
            lp.ps.k = w->k;
            lp.ps.seed = par->seed;
            am_pslsq *eng = am_pslsq_alloc(&lp, &st);
            if (!eng) break;
            st = am_ensemble_run(am_pslsq_model(eng), ks, ngrid, &ep, &er);
            am_pslsq_free(eng);
        }
        if (st == AM_OK) {
            if (pca) ot = er->nobs - 2; /* the wall-clock observable precedes the clamped count */
            st = store_curve(er, ngrid, ot, w);
        }
        if (st == AM_OK && !pca) st = lsq_theory(par, lam, ks, er, w);
        am_ensemble_result_free(er);
    }
    free(lam);
    if (st) return am_common_fail(err, errlen, st, why[0] ? why : NULL);
    return AM_OK;
}
