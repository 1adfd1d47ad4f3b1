/*
 * am_runtime_study.c -- the parameter-server variants against their closed forms (see
 * am_runtime_study.h).
 */
#include "am_runtime_study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_ps.h"

am_runtime_study_params am_runtime_study_params_default(void)
{
    am_runtime_study_params p;
    memset(&p, 0, sizeof p);
    p.workers = 8;
    am_runtime_make(AM_RUNTIME_EXP, 1, 0, &p.runtime);
    p.updates = 1000;
    p.burnin = 100;
    p.replicas = 200;
    p.seed = 1;
    return p;
}

void am_runtime_study_result_free(am_runtime_study_result *res)
{
    if (!res) return;
    free(res->rows);
    res->rows = NULL;
}

am_status am_runtime_study_run(const am_runtime_study_params *par, am_runtime_study_result *res,
                               char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    res->mean_runtime = NAN;
    if (!par || (par->nk && !par->k)) {
        if (err && errlen) snprintf(err, errlen, "no parameters or K list given");
        return AM_EINVAL;
    }
    size_t p = par->workers, nk = par->nk, nrows = 2 + 4 * nk, r = 0;
    for (size_t i = 0; i < nk; i++)
        if (par->k[i] < 1 || par->k[i] > p) {
            if (err && errlen)
                snprintf(err, errlen, "K must be in [1, %zu] (the workers), got %zu", p, par->k[i]);
            return AM_EINVAL;
        }
    am_runtime_study_row *rows = calloc(nrows, sizeof *rows);
    if (!rows) {
        if (err && errlen) snprintf(err, errlen, "%s", am_strerror(AM_ENOMEM));
        return AM_ENOMEM;
    }
    res->rows = rows;
    res->nrows = nrows;
    static const am_variant order[6] = {AM_VARIANT_SYNC,       AM_VARIANT_KSYNC,
                                        AM_VARIANT_KBATCHSYNC, AM_VARIANT_ASYNC,
                                        AM_VARIANT_KASYNC,     AM_VARIANT_KBATCHASYNC};
    for (int vi = 0; vi < 6; vi++) {
        am_variant v = order[vi];
        if (v == AM_VARIANT_SYNC || v == AM_VARIANT_ASYNC) {
            rows[r].variant = v;
            rows[r++].k = v == AM_VARIANT_SYNC ? p : 1;
            continue;
        }
        for (size_t i = 0; i < nk; i++) {
            rows[r].variant = v;
            rows[r++].k = par->k[i];
        }
    }
    for (r = 0; r < nrows; r++) {
        am_runtime_study_row *w = &rows[r];
        am_ps_params prm = am_ps_params_default();
        prm.workers = p;
        prm.runtime = par->runtime;
        prm.variant = w->variant;
        prm.k = w->k;
        prm.seed = par->seed;
        am_stats s[3];
        am_status st =
            am_ps_ensemble(&prm, par->replicas, par->burnin, par->updates, par->threads, s);
        if (st) {
            if (err && errlen)
                snprintf(err, errlen, "%s: %s", am_runtime_variant_name(w->variant),
                         am_strerror(st));
            return st;
        }
        w->time_per_iter = s[0].mean;
        w->time_per_iter_sem = am_stats_sem(&s[0]);
        w->p_fresh = s[1].mean;
        w->p_fresh_sem = am_stats_sem(&s[1]);
        w->mean_staleness = s[2].mean;
        w->mean_staleness_sem = am_stats_sem(&s[2]);
        am_status ts = am_runtime_time_per_iter(&par->runtime, w->variant, p, w->k, &w->theory);
        if (ts == AM_ESOLVER) {
            if (err && errlen)
                snprintf(err, errlen, "quadrature of E[X_{%zu:%zu}] failed", w->k, p);
            return ts;
        }
        if (ts) w->theory = NAN;
        if (am_runtime_p_fresh(&par->runtime, w->variant, p, w->k, &w->p_fresh_theory))
            w->p_fresh_theory = NAN;
        if (am_runtime_mean_staleness(&par->runtime, w->variant, p, w->k,
                                      &w->mean_staleness_theory))
            w->mean_staleness_theory = NAN;
    }
    double mean = NAN;
    if (am_runtime_mean(&par->runtime, &mean) == AM_OK) res->mean_runtime = mean;
    return AM_OK;
}
