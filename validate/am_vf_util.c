/*
 * am_vf_util.c -- helpers shared by the check families of validate/ (am_validate_impl.h):
 * the test problem d = 4, lambda = (4, 3, 2, 1); the bounded row buffer; an ensemble wrapper
 * that keeps per-replica series or first-passage times; the deterministic order of a
 * noise-free ladder, the finest local slope
 *   s_j = log(e_{j+1}/e_j) / log(eta_{j+1}/eta_j),  with bias D eta_m^r from the last two
 * (Richardson), and the resolution rule (docs/validate.md, "Common ground").
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

double am_vf_util_level(void)
{
    return 1.0 - 2.0 * gsl_cdf_ugaussian_Q(AM_VF_Z);
}

am_msgd_params am_vf_util_msgd(double eta, double mu, uint64_t seed, size_t j, int coords)
{
    am_msgd_params mp = am_msgd_params_default();
    mp.eta = eta;
    mp.mu = mu;
    mp.seed = seed;
    if (j) {
        mp.init.kind = AM_INIT_EIGEN;
        mp.init.j = j;
    }
    mp.coords = coords != 0;
    mp.coords_signed = coords == 2;
    return mp;
}

am_problem *am_vf_util_problem(am_dist_kind kind)
{
    static const double lambda[4] = {4, 3, 2, 1};
    am_dist dist = {kind, 0};
    return am_problem_alloc(4, lambda, dist, 0, NULL, NULL, 0);
}

am_check_result *am_vf_util_row(am_check_result *rows, size_t cap, size_t *n, const char *name)
{
    if (*n >= cap) return NULL;
    am_check_result *r = &rows[(*n)++];
    am_check_init(r, name);
    return r;
}

/* ---- a model wrapper: selected observables, and per-replica series or first passage ---- */

typedef struct {
    const am_model *inner;
    size_t ncol;
    size_t cols[8];
    size_t scratch_off; /* offset of the inner observables' scratch in the work area */
    am_vf_mode mode;
    double threshold;    /* first passage: obs[0] >= threshold */
    const double *times; /* first passage: time of each saved point */
    am_model model;
} av_wrap;

static am_status av_start(const void *ctx, uint64_t replica, void *work)
{
    const av_wrap *w = ctx;
    return w->inner->start(w->inner->ctx, replica, work);
}

static int av_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const av_wrap *w = ctx;
    return w->inner->advance(w->inner->ctx, work, k0, k1);
}

/* Replicas side by side: the inner state sits at the start of each work area. */
static void av_advance_batch(const void *ctx, void *const *works, size_t n, uint64_t k0,
                             uint64_t k1, int *diverged)
{
    const av_wrap *w = ctx;
    w->inner->advance_batch(w->inner->ctx, works, n, k0, k1, diverged);
}

static void av_observe(const void *ctx, const void *work, double *obs)
{
    const av_wrap *w = ctx;
    /* the scratch lies in this replica's own (non-const) work area, past the inner state */
    double *scratch = (double *)((unsigned char *)(uintptr_t)work + w->scratch_off);
    w->inner->observe(w->inner->ctx, work, scratch);
    for (size_t j = 0; j < w->ncol; j++)
        obs[j] = scratch[w->cols[j]];
}

static void av_summarize(const void *ctx, const void *work, const double *obs, size_t ngrid,
                         int diverged, double *summary)
{
    const av_wrap *w = ctx;
    (void)work;
    if (w->mode == AM_VF_SERIES) {
        for (size_t j = 0; j < w->ncol; j++)
            for (size_t g = 0; g < ngrid; g++)
                summary[j * ngrid + g] = diverged ? NAN : obs[g * w->ncol + j];
        return;
    }
    summary[0] = diverged ? NAN : INFINITY; /* censored unless a passage is found */
    for (size_t g = 0; g < ngrid; g++) {
        double x = obs[g * w->ncol];
        if (isnan(x)) break;
        if (x >= w->threshold) {
            summary[0] = w->times[g];
            break;
        }
    }
}

static void av_wrap_init(av_wrap *w, const am_model *inner, const size_t *cols, size_t ncol,
                         am_vf_mode mode, size_t ngrid)
{
    memset(w, 0, sizeof *w);
    w->inner = inner;
    w->ncol = ncol;
    memcpy(w->cols, cols, ncol * sizeof *cols);
    w->scratch_off = (inner->work_bytes + 63) / 64 * 64;
    w->mode = mode;
    w->model.nobs = ncol;
    w->model.nsummary = mode == AM_VF_SERIES ? ncol * ngrid : 1;
    w->model.work_bytes = w->scratch_off + inner->nobs * sizeof(double);
    w->model.start = av_start;
    w->model.advance = av_advance;
    w->model.observe = av_observe;
    w->model.summarize = av_summarize;
    if (inner->advance_batch && inner->batch > 1) {
        w->model.batch = inner->batch;
        w->model.advance_batch = av_advance_batch;
    }
    w->model.ctx = w;
}

/* Runs the Async-MSGD engine of (p, mp) wrapped as above on the steps k[0..n-1]; *res keeps
 * every replica's summary. */
am_status am_vf_util_run_wrapped(const am_problem *p, const am_msgd_params *mp, const size_t *cols,
                                 size_t ncol, am_vf_mode mode, double threshold,
                                 const double *times, const uint64_t *k, size_t n, size_t replicas,
                                 int threads, am_ensemble_result **res)
{
    am_status st;
    am_msgd *m = am_msgd_alloc(p, mp, &st, NULL, 0);
    if (!m) return st;
    av_wrap w;
    av_wrap_init(&w, am_msgd_model(m), cols, ncol, mode, n);
    w.threshold = threshold;
    w.times = times;
    am_ensemble_params ep = {replicas, threads, 1};
    st = am_ensemble_run(&w.model, k, n, &ep, res);
    am_msgd_free(m);
    return st;
}

double am_vf_util_predict(const am_validate_opts *o, double predicted, double scale)
{
    return predicted * o->predict_scale + o->predict_shift * scale;
}

void am_vf_util_one_sided(am_check_result *row, int lower)
{
    double b = lower ? row->predicted - row->tolerance : row->predicted + row->tolerance;
    double m = row->measured, h = row->halfwidth;
    if (!isfinite(m) || !isfinite(h) || !isfinite(b)) {
        row->verdict = AM_CHECK_INCONCLUSIVE;
    } else if (lower ? m - h >= b : m + h <= b) {
        row->verdict = AM_CHECK_PASS;
        row->replicas_needed = 0;
    } else if (lower ? m + h < b : m - h > b) {
        row->verdict = AM_CHECK_FAIL;
        row->replicas_needed = 0;
    } else {
        row->verdict = AM_CHECK_INCONCLUSIVE;
        double gap = fabs(m - b), se = h / AM_VF_Z;
        row->replicas_needed =
            gap > 0 ? ceil(1.5 * row->replicas_used * pow(AM_VF_Z * se / gap, 2)) : NAN;
    }
    snprintf(row->rule, sizeof row->rule, "one-sided");
    row->sided = lower ? AM_CHECK_AT_LEAST : AM_CHECK_AT_MOST;
}

void am_vf_util_take_check(am_check_result *row, const am_check_result *check)
{
    char name[AM_CHECK_NAME_MAX], params[AM_CHECK_TEXT_MAX];
    memcpy(name, row->name, sizeof name);
    memcpy(params, row->params, sizeof params);
    *row = *check;
    memcpy(row->name, name, sizeof name);
    memcpy(row->params, params, sizeof params);
}

am_status am_vf_util_order_deterministic(am_converge_params *cp, const am_problem *p,
                                         am_check_result *row)
{
    am_converge_result *res = NULL;
    cp->ens.replicas = 1;
    am_status st = am_converge_run(p, cp, &res);
    if (st) return st;
    am_vf_util_take_check(row, &res->check);
    am_check_add_note(row, "gaps %.4g .. %.4g", res->weak_error[0], res->weak_error[res->n - 1]);
    if (res->fitted) am_check_add_note(row, "OLS slope over the ladder %.4f", res->fit.slope);
    am_converge_result_free(res);
    return AM_OK;
}

uint64_t *am_vf_util_steps(uint64_t burn, uint64_t s, size_t n)
{
    uint64_t *k = malloc(n * sizeof *k);
    if (!k) return NULL;
    for (size_t g = 0; g < n; g++)
        k[g] = burn + (uint64_t)g * s;
    return k;
}
