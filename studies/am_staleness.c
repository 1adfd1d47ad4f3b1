/*
 * am_staleness.c -- steps to a target per optimiser and staleness bound (see am_staleness.h).
 */
#include "am_staleness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

am_staleness_params am_staleness_params_default(void)
{
    am_staleness_params p;
    memset(&p, 0, sizeof p);
    p.objective = AM_OBJ_LSQ;
    p.rows = 1000;
    p.features = 10;
    p.stale = am_stale_params_default();
    p.replicas = 20;
    p.momentum = 0.9;
    p.lr = NAN;
    return p;
}

void am_staleness_result_free(am_staleness_result *res)
{
    if (!res) return;
    free(res->rows);
    res->rows = NULL;
}

/* The optimiser's parameters for this study: registry step (a tenth for pca) or par->lr. */
static am_optim_params optim_params(const am_staleness_params *par, am_optim_kind kind)
{
    am_optim_params op = am_optim_params_default(kind);
    op.mu = par->momentum;
    /* the Oja direction is about as large as the top eigenvalue and unstable at the
     * least-squares steps: pca defaults to one tenth of them */
    if (par->objective == AM_OBJ_PCA) op.lr *= 0.1;
    if (isfinite(par->lr)) op.lr = par->lr;
    return op;
}

/* Fills a row from the summary of its replicas (normalised later). */
static void fill_row(const am_stale_summary *s, am_staleness_row *r)
{
    r->replicas = s->replicas;
    r->reached = s->reached;
    r->steps_to_target = s->reached ? s->steps.mean : NAN;
    r->steps_to_target_sem = am_stats_sem(&s->steps);
    r->never_reached = 1.0 - (double)s->reached / (double)s->replicas;
    r->coherence_min = s->coherence.n > 0 ? s->coherence.mean : NAN;
    r->coherence_min_sem = am_stats_sem(&s->coherence);
}

am_status am_staleness_run(const am_staleness_params *par, am_staleness_result *res, char *err,
                           size_t errlen)
{
    memset(res, 0, sizeof *res);
    if (!par || par->noptimizers == 0 || !par->optimizers || par->ns == 0 || !par->s ||
        par->replicas < 2)
        return am_common_fail(err, errlen, AM_EINVAL,
                              "needs optimizers, s values and replicas >= 2");
    size_t nopt = par->noptimizers, ns = par->ns;
    am_dataset *synth = NULL;
    const am_dataset *ds = par->data;
    if (!ds) {
        am_synth_kind sk = par->objective == AM_OBJ_PCA   ? AM_SYNTH_PCA
                           : par->objective == AM_OBJ_LSQ ? AM_SYNTH_LSQ
                                                          : AM_SYNTH_LOGISTIC;
        if (am_dataset_synthetic(sk, par->rows, par->features, par->stale.seed, &synth))
            return am_common_fail(err, errlen, AM_ENOMEM, "cannot allocate the synthetic data set");
        ds = synth;
    }
    res->data_rows = ds->n;
    res->data_features = ds->d;
    am_status st;
    char why[512];
    am_objective *f = am_objective_alloc(par->objective, ds, &st, why, sizeof why);
    if (!f) {
        if (st == AM_EINVAL) res->field = "data";
        am_dataset_free(synth);
        return am_common_fail(err, errlen, st, why);
    }
    res->optimum = am_objective_optimum(f);
    /* the s = 0 reference is always run; it is reported only if asked for */
    int has0 = 0;
    for (size_t i = 0; i < ns; i++)
        has0 |= par->s[i] == 0;
    am_stale_summary *ref = calloc(nopt, sizeof *ref);
    res->rows = calloc(nopt * ns, sizeof *res->rows);
    if (!ref || !res->rows) {
        st = am_common_fail(err, errlen, AM_ENOMEM, NULL);
        goto done;
    }
    res->nrows = nopt * ns;
    for (size_t o = 0; o < nopt; o++) {
        am_optim_params op = optim_params(par, par->optimizers[o]);
        for (size_t i = 0; i < ns + !has0; i++) {
            am_stale_params sp = par->stale;
            sp.s = i < ns ? par->s[i] : 0;
            am_stale_summary sum;
            if ((st = am_stale_ensemble(f, &op, &sp, par->replicas, par->threads, &sum))) {
                am_common_fail(err, errlen, st, NULL);
                goto done;
            }
            if (sp.s == 0) ref[o] = sum;
            if (par->progress)
                par->progress(par->progress_ctx, o * (ns + !has0) + i + 1, nopt * (ns + !has0));
            if (i == ns) break;
            am_staleness_row *r = &res->rows[o * ns + i];
            r->s = sp.s;
            r->optimizer = par->optimizers[o];
            r->lr = op.lr;
            fill_row(&sum, r);
        }
        double norm = ref[o].reached ? ref[o].steps.mean : NAN;
        for (size_t i = 0; i < ns; i++) {
            am_staleness_row *r = &res->rows[o * ns + i];
            r->normalized = r->steps_to_target / norm;
        }
    }
done:
    free(ref);
    am_objective_free(f);
    am_dataset_free(synth);
    return st;
}
