/*
 * am_nnstale_preset.c -- the dai2019 preset of the SSP staleness study (am_nnstale_preset.h):
 * the preset's lists, one sweep cell (tune at s = 0, then every s at the tuned step), its
 * checkpoint fingerprint and value checks, and the per-row summaries over seeds.
 */
#include "am_nnstale_preset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../core/am_rng.h"
#include "../models/am_nntrain.h"
#include "am_sweep.h"
#include "am_sweep_impl.h"

void am_nnpreset_dai2019(int quick, am_nnpreset_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    static const char *models[] = {"mlr", "mlp1", "mlp2", "mlp3", "cnn"};
    static const am_optim_kind opts[] = {AM_OPT_SGD,  AM_OPT_MOMENTUM, AM_OPT_NESTEROV,
                                         AM_OPT_ADAM, AM_OPT_RMSPROP,  AM_OPT_ADAGRAD};
    static const size_t workers[] = {1, 2, 4, 8}, s[] = {0, 4, 8, 16, 32};
    sp->width = 32;
    sp->batch = 32;
    sp->eval_every = 50;
    sp->eval_rows = 1000;
    sp->coherence_rows = 256;
    sp->budget_factor = 8;
    if (!quick) {
        sp->nmodels = 5;
        memcpy(sp->models, models, sizeof models);
        sp->nopt = 6;
        memcpy(sp->opts, opts, sizeof opts);
        sp->nworkers = 4;
        memcpy(sp->workers, workers, sizeof workers);
        sp->ns = 5;
        memcpy(sp->s, s, sizeof s);
        sp->seeds = 10;
        sp->grid_half = 4;
        sp->max_batches = 4000;
        return;
    }
    sp->nmodels = 2;
    sp->models[0] = "mlr";
    sp->models[1] = "mlp2";
    sp->nopt = 3;
    sp->opts[0] = AM_OPT_SGD;
    sp->opts[1] = AM_OPT_MOMENTUM;
    sp->opts[2] = AM_OPT_ADAM;
    sp->nworkers = 2;
    sp->workers[0] = 1;
    sp->workers[1] = 4;
    sp->ns = 2;
    sp->s[0] = 0;
    sp->s[1] = 8;
    sp->seeds = 6;
    sp->grid_half = 2;
    sp->max_batches = 2000;
}

am_status am_nnpreset_model_spec(const char *name, size_t width, char *buf, size_t len)
{
    int n = -1;
    if (strcmp(name, "mlr") == 0 || strcmp(name, "cnn") == 0)
        n = snprintf(buf, len, "%s", name);
    else if (strcmp(name, "mlp1") == 0)
        n = snprintf(buf, len, "mlp:%zu", width);
    else if (strcmp(name, "mlp2") == 0)
        n = snprintf(buf, len, "mlp:%zu,%zu", width, width);
    else if (strcmp(name, "mlp3") == 0)
        n = snprintf(buf, len, "mlp:%zu,%zu,%zu", width, width, width);
    return n > 0 && (size_t)n < len ? AM_OK : AM_EINVAL;
}

double am_nnpreset_target(const char *name)
{
    return strcmp(name, "mlr") == 0 ? 0.8 : 0.82;
}

size_t am_nnpreset_nvalues(size_t ns, size_t seeds, int grid_half)
{
    return 2 * (size_t)grid_half + 2 + ns * seeds * AM_NNPRESET_RUN_NVALUES;
}

/* The values of one run into v[AM_NNPRESET_RUN_NVALUES]. */
static void run_values(const am_nnstale_outcome *u, size_t s, double *v)
{
    v[AM_NNPRESET_BATCHES] = u->reached ? u->batches : NAN;
    v[AM_NNPRESET_TEST_ACCURACY] = u->test_accuracy;
    v[AM_NNPRESET_COHERENCE] = u->coherence;
    v[AM_NNPRESET_COHERENCE_MIN] = u->coherence_min;
    v[AM_NNPRESET_DIVERGED] = u->diverged ? 1.0 : 0.0;
    if (s == 0) {
        v[AM_NNPRESET_COH_EARLY] = v[AM_NNPRESET_COH_LATE] = isfinite(u->coherence) ? 1.0 : NAN;
        return;
    }
    am_stats e = {0, 0, 0}, l = {0, 0, 0};
    size_t h = u->trace_n / 2;
    for (size_t i = 0; i < u->trace_n; i++)
        if (isfinite(u->trace_cosine[i])) am_stats_push(i < h ? &e : &l, u->trace_cosine[i]);
    v[AM_NNPRESET_COH_EARLY] = e.n > 0 ? e.mean : NAN;
    v[AM_NNPRESET_COH_LATE] = l.n > 0 ? l.mean : NAN;
}

/* The runs of a preset cell: the step-size search (run t: seed t mod S at grid point t / S,
 * s = 0), then the staleness runs at the chosen step (run t: seed t mod S at s[1 + t / S]). */
typedef struct {
    const am_nnpreset_params *p;
    const am_nn *net;
    am_optim_params opt; /* the cell's optimiser; its step is the chosen one for the stale runs */
    am_nnstale_params q; /* the cell's parameters at s = 0 */
    am_nnstale_outcome *runs;
    const am_nnstale_outcome *ref; /* [seeds] the s = 0 runs at the chosen step */
} cell_ctx;

double am_nnpreset_budget(const am_nnpreset_params *p, double b0)
{
    return p->budget_factor > 0 && isfinite(b0) ? ceil(p->budget_factor * b0)
                                                : (double)p->base.max_batches;
}

static am_status search_job(void *vctx, size_t t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const cell_ctx *x = vctx;
    am_optim_params op = x->opt;
    op.lr = am_nnstale_grid_lr(x->opt.lr, x->p->grid_half, t / x->p->seeds);
    return am_nnstale_run_one(x->net, &op, &x->q, x->p->train, x->p->test, t % x->p->seeds,
                              &x->runs[t], NULL);
}

static am_status stale_job(void *vctx, size_t t, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    const cell_ctx *x = vctx;
    am_nnstale_params qs = x->q;
    qs.s = x->p->s[1 + t / x->p->seeds];
    qs.coherence_trace = 1;
    qs.max_batches = (uint64_t)am_nnpreset_budget(x->p, x->ref[t % x->p->seeds].batches);
    return am_nnstale_run_one(x->net, &x->opt, &qs, x->p->train, x->p->test, t % x->p->seeds,
                              &x->runs[t], NULL);
}

static am_status preset_cell(void *ctx, size_t cell, double *v)
{
    const am_nnpreset_params *p = ctx;
    const size_t o = cell % p->nopt, m = (cell / p->nopt) % p->nmodels,
                 w = cell / (p->nopt * p->nmodels), S = p->seeds, G = 2 * (size_t)p->grid_half + 1,
                 nstale = (p->ns - 1) * S;
    am_nnstale_outcome *runs = calloc(G * S + nstale, sizeof *runs);
    if (!runs) return AM_ENOMEM;
    cell_ctx x = {p, p->nets[m], p->opts[o], p->base, runs, NULL};
    x.q.workers = p->workers[w];
    x.q.target = p->targets[m];
    x.q.cancel = p->cancel;
    x.q.s = 0;
    x.q.coherence_trace = 0;
    am_status fail = am_nntrain_runs(G * S, p->threads, search_job, &x, NULL, 0);
    if (!fail) {
        size_t best = 0;
        double best_score = INFINITY;
        for (size_t j = 0; j < G; j++) {
            double sum = am_nnstale_tune_score(runs + j * S, S, x.q.max_batches);
            v[1 + j] = sum / (double)S;
            if (sum < best_score) {
                best_score = sum;
                best = j;
            }
        }
        v[0] = am_nnstale_grid_lr(p->opts[o].lr, p->grid_half, best);
        x.opt.lr = v[0];
        x.runs = runs + G * S;
        x.ref = runs + best * S;
        fail = am_nntrain_runs(nstale, p->threads, stale_job, &x, NULL, 0);
        if (!fail) {
            double *rv = v + G + 1;
            for (size_t k = 0; k < S; k++)
                run_values(&runs[best * S + k], 0, rv + k * AM_NNPRESET_RUN_NVALUES);
            for (size_t t = 0; t < nstale; t++)
                run_values(&x.runs[t], p->s[1 + t / S], rv + (S + t) * AM_NNPRESET_RUN_NVALUES);
        }
    }
    for (size_t t = 0; t < G * S + nstale; t++)
        am_nnstale_outcome_free(&runs[t]);
    free(runs);
    return fail;
}

static int bad(char *why, size_t len, const char *what, size_t cell, double x)
{
    snprintf(why, len, "cell %zu: %s %.17g out of range", cell, what, x);
    return 1;
}

static int preset_check_cell(void *ctx, size_t cell, const double *v, char *why, size_t whylen)
{
    const am_nnpreset_params *p = ctx;
    const size_t G = 2 * (size_t)p->grid_half + 1, o = cell % p->nopt,
                 w = cell / (p->nopt * p->nmodels);
    int on_grid = 0;
    for (size_t j = 0; j < G; j++) {
        double g = am_nnstale_grid_lr(p->opts[o].lr, p->grid_half, j);
        on_grid |= fabs(v[0] - g) <= 1e-12 * g;
    }
    if (!on_grid) return bad(why, whylen, "tuned step", cell, v[0]);
    const double maxb = (double)p->base.max_batches + (double)p->workers[w];
    for (size_t j = 0; j < G; j++)
        if (!(v[1 + j] >= 1 && v[1 + j] <= 2 * maxb))
            return bad(why, whylen, "score", cell, v[1 + j]);
    for (size_t r = 0; r < p->ns * p->seeds; r++) {
        const double *x = v + G + 1 + r * AM_NNPRESET_RUN_NVALUES;
        const double b0 = v[G + 1 + (r % p->seeds) * AM_NNPRESET_RUN_NVALUES + AM_NNPRESET_BATCHES];
        const double lim = r < p->seeds ? maxb : am_nnpreset_budget(p, b0) + (double)p->workers[w];
        double b = x[AM_NNPRESET_BATCHES];
        if (!isnan(b) && !(b >= 1 && b <= lim && b == floor(b)))
            return bad(why, whylen, "batches", cell, b);
        double a = x[AM_NNPRESET_TEST_ACCURACY];
        if (!isnan(a) && !(a >= 0 && a <= 1)) return bad(why, whylen, "accuracy", cell, a);
        for (int c = AM_NNPRESET_COHERENCE; c <= AM_NNPRESET_COH_LATE; c++) {
            if (c == AM_NNPRESET_DIVERGED) continue;
            if (!isnan(x[c]) && !(x[c] >= -1 - 1e-9 && x[c] <= 1 + 1e-9))
                return bad(why, whylen, "cosine", cell, x[c]);
        }
        double d = x[AM_NNPRESET_DIVERGED];
        if (!(d == 0 || d == 1)) return bad(why, whylen, "diverged flag", cell, d);
    }
    return 0;
}

static json_t *set_json(const char *name, const am_classset *s)
{
    json_t *o = json_object();
    char buf[16];
    snprintf(buf, sizeof buf, "%08lx", am_classset_crc(s));
    json_object_set_new(o, "set", json_string(name));
    json_object_set_new(o, "rows", json_integer((json_int_t)s->n));
    json_object_set_new(o, "features", json_integer((json_int_t)s->d));
    json_object_set_new(o, "classes", json_integer((json_int_t)s->classes));
    json_object_set_new(o, "crc32", json_string(buf));
    /* raw inputs add no key: the checkpoints of raw runs keep their fingerprint */
    if (s->inputs != AM_INPUTS_RAW)
        json_object_set_new(o, "inputs", json_string(am_inputs_name((am_inputs)s->inputs)));
    return o;
}

static char *fingerprint(const am_nnpreset_params *p)
{
    json_t *f = json_object();
    json_object_set_new(f, "study", json_string("staleness-dai2019"));
    json_object_set_new(f, "study_version", json_integer(AM_NNPRESET_VERSION));
    char blas[128];
    am_nn_blas(blas, sizeof blas);
    am_sweep_fingerprint_build(f, blas);
    json_object_set_new(f, "stream", json_integer(AM_STREAM_NNSTALE));
    json_object_set_new(f, "rng", json_string("philox4x32-10"));
    json_object_set_new(f, "train", set_json("train", p->train));
    json_object_set_new(f, "test", set_json("test", p->test));
    json_t *ms = json_array();
    for (size_t m = 0; m < p->nmodels; m++) {
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(p->model_names[m]));
        json_object_set_new(e, "spec", json_string(am_nn_spec(p->nets[m])));
        json_object_set_new(e, "target", json_real(p->targets[m]));
        json_array_append_new(ms, e);
    }
    json_object_set_new(f, "models", ms);
    json_t *os = json_array();
    for (size_t o = 0; o < p->nopt; o++) {
        const am_optim_params *q = &p->opts[o];
        json_t *e = json_object();
        json_object_set_new(e, "optimizer", json_string(am_optim_name(q->kind)));
        json_object_set_new(e, "lr0", json_real(q->lr));
        json_object_set_new(e, "mu", json_real(q->mu));
        json_object_set_new(e, "beta1", json_real(q->beta1));
        json_object_set_new(e, "beta2", json_real(q->beta2));
        json_object_set_new(e, "rho", json_real(q->rho));
        json_object_set_new(e, "eps", json_real(q->eps));
        json_array_append_new(os, e);
    }
    json_object_set_new(f, "optimizers", os);
    json_t *wj = json_array(), *sj = json_array();
    for (size_t i = 0; i < p->nworkers; i++)
        json_array_append_new(wj, json_integer((json_int_t)p->workers[i]));
    for (size_t i = 0; i < p->ns; i++)
        json_array_append_new(sj, json_integer((json_int_t)p->s[i]));
    json_object_set_new(f, "workers", wj);
    json_object_set_new(f, "s", sj);
    json_object_set_new(f, "seeds", json_integer((json_int_t)p->seeds));
    json_object_set_new(f, "grid_half", json_integer(p->grid_half));
    const am_nnstale_params *b = &p->base;
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)b->seed);
    json_object_set_new(f, "seed", json_string(seed));
    json_object_set_new(f, "batch", json_integer((json_int_t)b->batch));
    json_object_set_new(f, "semantics",
                        json_string(b->semantics == AM_NNSTALE_SSP ? "ssp" : "averaged"));
    json_object_set_new(f, "max_batches", json_integer((json_int_t)b->max_batches));
    /* a fixed budget adds no key: the checkpoints made before the factor still resume */
    if (p->budget_factor > 0) json_object_set_new(f, "budget_factor", json_real(p->budget_factor));
    json_object_set_new(f, "eval_every", json_integer((json_int_t)b->eval_every));
    json_object_set_new(f, "eval_rows", json_integer((json_int_t)b->eval_rows));
    json_object_set_new(f, "coherence_rows", json_integer((json_int_t)b->coherence_rows));
    char *s = json_dumps(f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(f);
    return s;
}

void am_nnpreset_result_free(am_nnpreset_result *r)
{
    if (!r) return;
    free(r->values);
    free(r->done);
    free(r);
}

am_status am_nnpreset_run(const am_nnpreset_params *p, am_nnpreset_result **out, char *err,
                          size_t errlen)
{
    if (err && errlen) err[0] = 0;
    *out = NULL;
    if (p->nmodels < 1 || p->nopt < 1 || p->nworkers < 1 || p->ns < 1 || p->seeds < 1 ||
        p->grid_half < 0 || p->grid_half > 20 || p->s[0] != 0 || !p->train || !p->test) {
        if (err && errlen) snprintf(err, errlen, "empty list, s[0] != 0 or grid out of range");
        return AM_EINVAL;
    }
    for (size_t i = 1; i < p->ns; i++)
        if (p->s[i] == 0) {
            if (err && errlen) snprintf(err, errlen, "s = 0 listed twice");
            return AM_EINVAL;
        }
    am_nnpreset_result *r = calloc(1, sizeof *r);
    char *fp = fingerprint(p);
    if (!r || !fp) {
        free(r);
        free(fp);
        return AM_ENOMEM;
    }
    r->ncells = p->nworkers * p->nmodels * p->nopt;
    r->nvalues = am_nnpreset_nvalues(p->ns, p->seeds, p->grid_half);
    r->values = malloc(r->ncells * r->nvalues * sizeof *r->values);
    r->done = calloc(r->ncells, 1);
    if (!r->values || !r->done) {
        free(fp);
        am_nnpreset_result_free(r);
        return AM_ENOMEM;
    }
    for (size_t i = 0; i < r->ncells * r->nvalues; i++)
        r->values[i] = NAN;
    am_sweep_problem prob = {r->ncells, r->nvalues, preset_cell, (void *)p};
    am_sweep_params sp;
    AM_SWEEP_STUDY_PARAMS(sp, p, fp, preset_check_cell);
    am_status st = am_sweep_run(&prob, &sp, r->values, r->done, &r->cells_done, err, errlen);
    free(fp);
    if (st && st != AM_ECANCELED) {
        am_nnpreset_result_free(r);
        return st;
    }
    *out = r;
    if (st == AM_OK && r->cells_done < r->ncells && p->cancel && *p->cancel) st = AM_ECANCELED;
    return st;
}

const double *am_nnpreset_run_values(const am_nnpreset_params *p, const am_nnpreset_result *r,
                                     size_t cell, size_t si, size_t k)
{
    const size_t G = 2 * (size_t)p->grid_half + 1;
    return r->values + cell * r->nvalues + G + 1 + (si * p->seeds + k) * AM_NNPRESET_RUN_NVALUES;
}

void am_nnpreset_summary(const am_nnpreset_params *p, const am_nnpreset_result *r, size_t cell,
                         size_t si, am_nnpreset_row *row)
{
    memset(row, 0, sizeof *row);
    row->lr = r->values[cell * r->nvalues];
    double *ratio = malloc(p->seeds * sizeof *ratio);
    size_t nratio = 0;
    for (size_t k = 0; k < p->seeds; k++) {
        const double *x = am_nnpreset_run_values(p, r, cell, si, k);
        const double *x0 = am_nnpreset_run_values(p, r, cell, 0, k);
        double b = x[AM_NNPRESET_BATCHES], b0 = x0[AM_NNPRESET_BATCHES];
        if (isfinite(b)) {
            row->reached++;
            am_stats_push(&row->steps, b);
            if (isfinite(b0)) {
                am_stats_push(&row->normalized, b / b0);
                if (ratio) ratio[nratio++] = b / b0;
            }
        }
        if (isfinite(b0))
            am_stats_push(&row->normalized_lower,
                          (isfinite(b) ? b : am_nnpreset_budget(p, b0)) / b0);
        if (isfinite(x[AM_NNPRESET_TEST_ACCURACY]))
            am_stats_push(&row->test_accuracy, x[AM_NNPRESET_TEST_ACCURACY]);
        if (isfinite(x[AM_NNPRESET_COHERENCE]))
            am_stats_push(&row->coherence, x[AM_NNPRESET_COHERENCE]);
        if (isfinite(x[AM_NNPRESET_COH_EARLY]))
            am_stats_push(&row->coherence_early, x[AM_NNPRESET_COH_EARLY]);
        if (isfinite(x[AM_NNPRESET_COH_LATE]))
            am_stats_push(&row->coherence_late, x[AM_NNPRESET_COH_LATE]);
    }
    am_check_t_interval(&row->normalized, 0.95, &row->normalized_t);
    if (!ratio || am_check_median_bootstrap(ratio, nratio, AM_NNPRESET_BOOT, 0.95, p->base.seed,
                                            &row->normalized_median))
        row->normalized_median.estimate = row->normalized_median.lo = row->normalized_median.hi =
            NAN;
    free(ratio);
}
