/*
 * am_sweep_cell.c -- one (mu, delay) cell of a sweep and the theory curves over a sweep
 * (see am_sweep_cell.h): the cell is an Async-MSGD ensemble whose per-replica summaries
 * (time-averaged err after the burn-in, first time with err <= eps) are reduced to means and
 * standard errors over the replicas.
 */
#include "am_sweep_cell.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "../core/am_ensemble.h"
#include "../core/am_grid.h"
#include "../core/am_rng.h"
#include "../theory/am_theory.h"
#include "am_sweep.h"
#include "am_sweep_cell_impl.h"

am_sweep_cell_params am_sweep_cell_params_default(void)
{
    am_sweep_cell_params s;
    memset(&s, 0, sizeof s);
    s.msgd = am_msgd_params_default();
    s.msgd.init.kind = AM_INIT_EIGEN;
    s.msgd.init.j = 1;
    s.msgd.summary = 1;
    s.msgd.burnin = 0.5;
    s.msgd.eps = 0.01;
    s.delay_kind = AM_DELAY_CONST;
    s.horizon = 20;
    s.ngrid = 101;
    s.replicas = 200;
    s.threads = 0;
    return s;
}

/* The engine parameters of the cell (mu, x). */
static am_status cell_msgd(const am_sweep_cell_params *s, double mu, double x, am_msgd_params *m)
{
    *m = s->msgd;
    m->summary = 1;
    m->mu = mu;
    return am_sweep_cell_delay(s, x, &m->delay);
}

am_status am_sweep_cell_params_check(const am_sweep_cell_params *s, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!s || !s->problem) {
        snprintf(err, errlen, "no problem given");
        return AM_EINVAL;
    }
    if (s->delay_kind != AM_DELAY_CONST && s->delay_kind != AM_DELAY_UNIFORM &&
        s->delay_kind != AM_DELAY_GEOMETRIC) {
        snprintf(err, errlen, "the delay axis must be const, uniform or geometric");
        return AM_EINVAL;
    }
    if (!(s->msgd.eps > 0 && s->msgd.eps <= 1)) {
        snprintf(err, errlen, "eps must be in (0, 1], got %g", s->msgd.eps);
        return AM_EINVAL;
    }
    am_msgd_params m;
    cell_msgd(s, 0.0, 0.0, &m);
    am_status st = am_msgd_params_check(s->problem, &m, err, errlen);
    if (st) return st;
    if (!(s->horizon > 0) || !isfinite(s->horizon)) {
        snprintf(err, errlen, "horizon must be a finite number > 0, got %g", s->horizon);
        return AM_EINVAL;
    }
    if (s->horizon / m.eta > 1e15) {
        snprintf(err, errlen, "horizon / eta = %.3g steps is more than 1e15", s->horizon / m.eta);
        return AM_EINVAL;
    }
    if (s->ngrid < 2 || s->ngrid > 1000000) {
        snprintf(err, errlen, "ngrid must be in [2, 1000000], got %zu", s->ngrid);
        return AM_EINVAL;
    }
    uint64_t *k = malloc(s->ngrid * sizeof *k);
    if (!k) return AM_ENOMEM;
    am_grid g = {s->ngrid, s->horizon};
    st = am_grid_steps(&g, m.eta, k);
    free(k);
    if (st) {
        snprintf(err, errlen, "horizon / eta gives too many steps");
        return AM_EINVAL;
    }
    if (s->replicas < 1) {
        snprintf(err, errlen, "replicas must be >= 1, got %zu", s->replicas);
        return AM_EINVAL;
    }
    if (s->threads < 0) {
        snprintf(err, errlen, "threads must be >= 0, got %d", s->threads);
        return AM_EINVAL;
    }
    return AM_OK;
}

am_status am_sweep_cell_delay(const am_sweep_cell_params *s, double x, am_delay *d)
{
    if (x == 0) return am_delay_make(AM_DELAY_NONE, 0, d);
    return am_delay_make(s->delay_kind, x, d);
}

am_status am_sweep_cell_check(const am_sweep_cell_params *s, double mu, double x, char *err,
                              size_t errlen)
{
    if (err && errlen) err[0] = 0;
    am_msgd_params m;
    if (!(x >= 0) || cell_msgd(s, mu, x, &m)) return AM_EINVAL;
    return am_msgd_params_check(s->problem, &m, err, errlen);
}

/* The engine's model with a cancel check before each advance: once the flag is set every
 * replica stops at its next saved time (reported as diverged; the cell is then dropped). */
typedef struct {
    const am_model *inner;
    const volatile sig_atomic_t *cancel;
} cancel_model;

static am_status cm_start(const void *ctx, uint64_t replica, void *work)
{
    const am_model *m = ((const cancel_model *)ctx)->inner;
    return m->start(m->ctx, replica, work);
}

static int cm_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const cancel_model *c = ctx;
    if (*c->cancel) return 1;
    return c->inner->advance(c->inner->ctx, work, k0, k1);
}

/* The batched advance of the engine (replicas side by side), with the same cancel check. */
static void cm_advance_batch(const void *ctx, void *const *works, size_t n, uint64_t k0,
                             uint64_t k1, int *diverged)
{
    const cancel_model *c = ctx;
    if (*c->cancel) {
        for (size_t j = 0; j < n; j++)
            diverged[j] = 1;
        return;
    }
    c->inner->advance_batch(c->inner->ctx, works, n, k0, k1, diverged);
}

static void cm_observe(const void *ctx, const void *work, double *obs)
{
    const am_model *m = ((const cancel_model *)ctx)->inner;
    m->observe(m->ctx, work, obs);
}

static void cm_summarize(const void *ctx, const void *work, const double *obs, size_t ngrid,
                         int diverged, double *summary)
{
    const am_model *m = ((const cancel_model *)ctx)->inner;
    m->summarize(m->ctx, work, obs, ngrid, diverged, summary);
}

am_status am_sweep_cell_run(const am_sweep_cell_params *s, double mu, double x,
                            const volatile sig_atomic_t *cancel, double *v, double **per_replica)
{
    if (cancel && *cancel) return AM_ECANCELED;
    am_msgd_params m;
    am_status st = cell_msgd(s, mu, x, &m);
    if (st) return st;
    uint64_t *k = malloc(s->ngrid * sizeof *k);
    if (!k) return AM_ENOMEM;
    am_grid g = {s->ngrid, s->horizon};
    st = am_grid_steps(&g, m.eta, k);
    am_msgd *eng = st ? NULL : am_msgd_alloc(s->problem, &m, &st, NULL, 0);
    if (!eng) {
        free(k);
        return st;
    }
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = s->replicas;
    ep.threads = s->threads;
    ep.keep_summary = per_replica != NULL;
    am_ensemble_result *res = NULL;
    const am_model *model = am_msgd_model(eng);
    am_model wrapped = *model;
    cancel_model cm = {model, cancel};
    if (cancel) {
        wrapped.start = cm_start;
        wrapped.advance = cm_advance;
        wrapped.observe = cm_observe;
        wrapped.summarize = model->summarize ? cm_summarize : NULL;
        wrapped.advance_batch = model->advance_batch ? cm_advance_batch : NULL;
        wrapped.ctx = &cm;
        model = &wrapped;
    }
    st = am_ensemble_run(model, k, s->ngrid, &ep, &res);
    am_msgd_free(eng);
    free(k);
    if (st == AM_OK && cancel && *cancel) st = AM_ECANCELED; /* replicas were cut short */
    if (st) {
        am_ensemble_result_free(res);
        return st;
    }
    double R = (double)res->replicas;
    const am_stats *ss = res->summary_stats;
    v[AM_SWEEP_CELL_ERR] = ss[0].n > 0 ? ss[0].mean : NAN;
    v[AM_SWEEP_CELL_ERR_SEM] = am_stats_sem(&ss[0]);
    v[AM_SWEEP_CELL_DIVERGED] = (double)res->diverged / R;
    v[AM_SWEEP_CELL_TIME] = ss[1].n > 0 ? ss[1].mean * s->horizon : NAN;
    v[AM_SWEEP_CELL_TIME_SEM] = am_stats_sem(&ss[1]) * s->horizon;
    v[AM_SWEEP_CELL_REACHED] = ss[1].n / R;
    if (per_replica) {
        *per_replica = res->summary;
        res->summary = NULL;
    }
    am_ensemble_result_free(res);
    return AM_OK;
}

/* Delay parameter of the axis per unit of mean delay (1 for const and geometric, 2 for
 * uniform:S whose mean is S/2). */
static double axis_per_mean(am_delay_kind kind)
{
    return kind == AM_DELAY_UNIFORM ? 2.0 : 1.0;
}

am_status am_sweep_cell_overlays(const am_sweep_cell_params *s, const double *mu, size_t nmu,
                                 const double *tau, size_t ntau, double gamma,
                                 double bound_constant, double *linear, double *dde, double *paper,
                                 double *implicit_mu)
{
    double scale = axis_per_mean(s->delay_kind), eta = s->msgd.eta;
    const am_problem *p = s->problem;
    double amax = 0;
    for (size_t m = 0; m < p->dim; m++) {
        double a = am_theory_mode_curvature(p, m);
        if (a > amax) amax = a;
    }
    double *tc = malloc((nmu ? nmu : 1) * sizeof *tc);
    if (!tc) return AM_ENOMEM;
    for (size_t i = 0; i < nmu; i++)
        linear[i] = INFINITY;
    for (size_t m = 0; m < p->dim; m++) {
        if (am_theory_tau_c_curve(p, eta, m, mu, nmu, tc)) continue;
        for (size_t i = 0; i < nmu; i++)
            if (tc[i] < linear[i]) linear[i] = tc[i];
    }
    free(tc);
    for (size_t i = 0; i < nmu; i++) {
        linear[i] *= scale;
        dde[i] = scale * am_theory_tau_c_dde(mu[i], eta * amax);
        paper[i] = scale * am_theory_tau_bound_ode(p->lambda[0], eta, mu[i], gamma, bound_constant);
    }
    for (size_t j = 0; j < ntau; j++)
        implicit_mu[j] = s->delay_kind == AM_DELAY_GEOMETRIC ? 1.0 - 1.0 / (tau[j] + 1.0) : NAN;
    return AM_OK;
}

/* ---- internal (am_sweep_cell_impl.h) ------------------------------------------------- */

static json_t *json_doubles(const double *x, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, isfinite(x[i]) ? json_real(x[i]) : json_null());
    return arr;
}

json_t *am_sweep_cell_params_json(const am_sweep_cell_params *s)
{
    char buf[64];
    json_t *o = json_object();
    const am_problem *p = s->problem;
    json_object_set_new(o, "dim", json_integer((json_int_t)p->dim));
    json_object_set_new(o, "spectrum", json_doubles(p->lambda, p->dim));
    am_problem_dist_format(&p->dist, buf, sizeof buf);
    json_object_set_new(o, "dist", json_string(buf));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->rotate_seed);
    json_object_set_new(o, "rotate", json_string(buf));
    json_object_set_new(o, "eta", json_real(s->msgd.eta));
    am_msgd_init_format(&s->msgd.init, buf, sizeof buf);
    json_object_set_new(o, "init", json_string(buf));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->msgd.seed);
    json_object_set_new(o, "seed", json_string(buf));
    json_object_set_new(o, "blowup", json_real(s->msgd.blowup));
    json_object_set_new(o, "time", json_real(s->horizon));
    json_object_set_new(o, "grid", json_integer((json_int_t)s->ngrid));
    json_object_set_new(o, "burnin", json_real(s->msgd.burnin));
    json_object_set_new(o, "eps", json_real(s->msgd.eps));
    json_object_set_new(o, "replicas", json_integer((json_int_t)s->replicas));
    static const char *kinds[] = {"none", "const", "uniform", "geometric"};
    json_object_set_new(o, "delay_model", json_string(kinds[s->delay_kind]));
    return o;
}

json_t *am_sweep_cell_json_doubles(const double *x, size_t n)
{
    return json_doubles(x, n);
}

/* One tiny fixed ensemble (3 replicas, 10 steps) folded into the running CRC-32. */
static am_status identity_run(const char *dist, am_delay_kind kind, double dparam,
                              am_init_kind init, unsigned long *crc)
{
    const double lambda[] = {3, 2, 1};
    am_dist d;
    char err[128];
    am_status st = am_problem_dist_parse(dist, &d, err, sizeof err);
    if (st) return st;
    am_problem *p = am_problem_alloc(3, lambda, d, 7, NULL, NULL, 0);
    if (!p) return AM_ENOMEM;
    am_sweep_cell_params s = am_sweep_cell_params_default();
    s.problem = p;
    s.msgd.eta = 0.05;
    s.msgd.seed = 2718281828u;
    s.msgd.init.kind = init;
    s.msgd.eps = 0.5;
    s.delay_kind = kind == AM_DELAY_NONE ? AM_DELAY_CONST : kind;
    s.horizon = 0.5;
    s.ngrid = 3;
    s.replicas = 3;
    s.threads = 1;
    double v[AM_SWEEP_CELL_NVALUES], *rep = NULL;
    st = am_sweep_cell_run(&s, 0.5, kind == AM_DELAY_NONE ? 0 : dparam, NULL, v, &rep);
    if (st == AM_OK) {
        *crc = crc32(*crc, (const Bytef *)v, (uInt)sizeof v);
        *crc = crc32(*crc, (const Bytef *)rep, (uInt)(3 * AM_MSGD_NSUMMARY * sizeof *rep));
    }
    free(rep);
    am_problem_free(p);
    return st;
}

am_status am_sweep_cell_engine_id(char *buf, size_t len)
{
    unsigned long crc = crc32(0L, Z_NULL, 0);
    am_status st = identity_run("gaussian", AM_DELAY_UNIFORM, 3, AM_INIT_RANDOM_EACH, &crc);
    if (!st) st = identity_run("rademacher", AM_DELAY_GEOMETRIC, 1.5, AM_INIT_RANDOM, &crc);
    if (!st) st = identity_run("uniform", AM_DELAY_CONST, 2, AM_INIT_RANDOM_EACH, &crc);
    if (!st) st = identity_run("student:5", AM_DELAY_NONE, 0, AM_INIT_RANDOM, &crc);
    if (st) return st;
    /* the bootstrap stream of am_knee */
    am_rng rng;
    am_rng_init(&rng, 2718281828u, 3, AM_STREAM_KNEE_BOOT, 0);
    uint64_t u[4];
    for (int i = 0; i < 4; i++)
        u[i] = am_rng_u64(&rng);
    crc = crc32(crc, (const Bytef *)u, (uInt)sizeof u);
    snprintf(buf, len, "%08lx", crc & 0xffffffffUL);
    return AM_OK;
}

am_status am_sweep_cell_fingerprint_base(const am_sweep_cell_params *s, json_t **out)
{
    char id[16];
    am_status st = am_sweep_cell_engine_id(id, sizeof id);
    if (st) return st;
    json_t *o = am_sweep_cell_params_json(s);
    if (!o) return AM_ENOMEM;
    am_sweep_fingerprint_build(o, NULL);
    json_object_set_new(o, "engine", json_string(id));
    *out = o;
    return AM_OK;
}

/* 1 if x is NaN or in [lo, hi]. */
static int nan_or_in(double x, double lo, double hi)
{
    return isnan(x) || (x >= lo && x <= hi);
}

/* 1 if q in [0, 1] is k / R for an integer k. */
static int is_fraction(double q, double R)
{
    if (!(q >= 0 && q <= 1)) return 0;
    double k = q * R;
    return fabs(k - nearbyint(k)) <= 1e-9 * R;
}

int am_sweep_cell_values_check(const am_sweep_cell_params *s, const double *v, char *why,
                               size_t whylen)
{
    double R = (double)s->replicas, T = s->horizon;
    const double tol = 1e-9;
    if (!nan_or_in(v[AM_SWEEP_CELL_ERR], -tol, 1 + tol))
        snprintf(why, whylen, "error %g is outside [0, 1]", v[AM_SWEEP_CELL_ERR]);
    else if (!nan_or_in(v[AM_SWEEP_CELL_ERR_SEM], 0, INFINITY))
        snprintf(why, whylen, "standard error %g is negative", v[AM_SWEEP_CELL_ERR_SEM]);
    else if (!is_fraction(v[AM_SWEEP_CELL_DIVERGED], R))
        snprintf(why, whylen, "diverged fraction %g is not a count over %g replicas",
                 v[AM_SWEEP_CELL_DIVERGED], R);
    else if (!nan_or_in(v[AM_SWEEP_CELL_TIME], 0, T * (1 + tol)))
        snprintf(why, whylen, "time %g is outside [0, %g]", v[AM_SWEEP_CELL_TIME], T);
    else if (!nan_or_in(v[AM_SWEEP_CELL_TIME_SEM], 0, INFINITY))
        snprintf(why, whylen, "standard error of the time %g is negative",
                 v[AM_SWEEP_CELL_TIME_SEM]);
    else if (!is_fraction(v[AM_SWEEP_CELL_REACHED], R))
        snprintf(why, whylen, "reached fraction %g is not a count over %g replicas",
                 v[AM_SWEEP_CELL_REACHED], R);
    else
        return 0;
    return 1;
}
