/*
 * am_knee.c -- the critical delay per momentum, its bootstrap over replicas and the exponent
 * of tau_c ∝ (1-mu)^p (see am_knee.h): log tau_c = log c + p log(1-mu) by least squares,
 * tau_c(mu) the crossing of err(mu, tau) = F err(mu, 0) (or of the diverged fraction with
 * diverged_max) interpolated between the last non-critical and the first critical delay.
 */
#include "am_knee.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../core/am_rng.h"
#include "../theory/am_theory.h"
#include "am_sweep.h"
#include "am_sweep_cell_impl.h"
#include "am_sweep_impl.h"

/* Values of one momentum cell: fixed part (the interpolated tau_c, the tau = 0 error and its
 * SEM, the delays evaluated, the error at the bracket's upper end, the bracket), then the
 * bootstrap replicates. */
enum { KV_TAU_C = 0, KV_BASE, KV_BASE_SEM, KV_EVALS, KV_ERR_AT, KV_LO, KV_HI, KV_NFIXED };

am_knee_params am_knee_params_default(void)
{
    am_knee_params p;
    memset(&p, 0, sizeof p);
    p.cell = am_sweep_cell_params_default();
    p.factor = 2;
    p.tau_max = 4096;
    p.bootstrap = 200;
    p.refine = 3;
    p.gamma = AM_THEORY_BOUND_GAMMA;
    p.bound_constant = AM_THEORY_BOUND_C;
    p.diverged_max = 0.05;
    p.seeds = 1;
    return p;
}

/* Most delays one momentum evaluates: tau = 0, the bracketing (at most floor(log2 N) + 2
 * doublings up to N = tau_max), the bisection (at most ceil(log2 N)) and 2 K neighbours. */
static double max_evaluations(const am_knee_params *p)
{
    double l = log2((double)p->tau_max);
    return 1 + (floor(l) + 2) + ceil(l) + 2 * (double)p->refine;
}

double am_knee_memory(const am_knee_params *p)
{
    return max_evaluations(p) * (double)p->cell.replicas * AM_MSGD_NSUMMARY * sizeof(double);
}

am_status am_knee_params_check(const am_knee_params *p, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!p) return AM_EINVAL;
    am_status st = am_sweep_cell_params_check(&p->cell, err, errlen);
    if (st) return st;
    if (p->cell.delay_kind != AM_DELAY_CONST && p->cell.delay_kind != AM_DELAY_UNIFORM) {
        snprintf(err, errlen, "the delay axis must be const or uniform (integer delays)");
        return AM_EINVAL;
    }
    if (!p->mu || p->nmu == 0 || p->nmu > 1000000) {
        snprintf(err, errlen, "the momenta must hold between 1 and 1e6 values");
        return AM_EINVAL;
    }
    for (size_t i = 0; i < p->nmu; i++)
        if (!(p->mu[i] >= 0 && p->mu[i] < 1)) {
            snprintf(err, errlen, "mu values must be in [0, 1), got %g", p->mu[i]);
            return AM_EINVAL;
        }
    if (!(p->factor > 1) || !isfinite(p->factor)) {
        snprintf(err, errlen, "factor must be a finite number > 1, got %g", p->factor);
        return AM_EINVAL;
    }
    if (p->tau_max < 1 || p->tau_max > 1000000) {
        snprintf(err, errlen, "tau_max must be in [1, 1000000], got %llu",
                 (unsigned long long)p->tau_max);
        return AM_EINVAL;
    }
    char why[256];
    if (am_sweep_cell_check(&p->cell, 0.0, (double)p->tau_max, why, sizeof why)) {
        snprintf(err, errlen, "tau_max %llu is too large a delay", (unsigned long long)p->tau_max);
        return AM_EINVAL;
    }
    if (p->bootstrap > 100000) {
        snprintf(err, errlen, "bootstrap must be in [0, 100000], got %zu", p->bootstrap);
        return AM_EINVAL;
    }
    if (p->refine > 1000) {
        snprintf(err, errlen, "refine must be in [0, 1000], got %llu",
                 (unsigned long long)p->refine);
        return AM_EINVAL;
    }
    if (!(p->gamma > 0 && p->gamma <= 1)) {
        snprintf(err, errlen, "gamma must be in (0, 1], got %g", p->gamma);
        return AM_EINVAL;
    }
    if (!(p->bound_constant > 0) || !isfinite(p->bound_constant)) {
        snprintf(err, errlen, "bound_constant must be a finite number > 0, got %g",
                 p->bound_constant);
        return AM_EINVAL;
    }
    if (!(p->diverged_max >= 0 && p->diverged_max < 1)) {
        snprintf(err, errlen, "diverged_max must be in [0, 1), got %g", p->diverged_max);
        return AM_EINVAL;
    }
    if (p->seeds < 1 || p->seeds > 10000 || p->seeds * p->nmu > 1000000) {
        snprintf(err, errlen, "seeds must be in [1, 10000] with seeds x momenta <= 1e6, got %zu",
                 p->seeds);
        return AM_EINVAL;
    }
    if (p->resume && !p->checkpoint) {
        snprintf(err, errlen, "resume needs a checkpoint file");
        return AM_EINVAL;
    }
    if (am_knee_memory(p) > (double)AM_MEMORY_LIMIT) {
        snprintf(err, errlen,
                 "the replicas' summaries kept for up to %.0f delays per momentum need %.3g "
                 "bytes, above the limit of %.3g",
                 max_evaluations(p), am_knee_memory(p), (double)AM_MEMORY_LIMIT);
        return AM_ENOMEM;
    }
    return AM_OK;
}

typedef struct {
    uint64_t tau;
    double *rep; /* R * AM_MSGD_NSUMMARY */
    double err;
    double div;
} knee_eval;

int am_knee_critical(double err, double base, double diverged, double factor, double diverged_max)
{
    return diverged > diverged_max || !(err <= factor * base);
}

double am_knee_crossing(double lo, double hi, double err_lo, double err_hi, double div_lo,
                        double div_hi, double base, double factor, double diverged_max)
{
    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi)) return hi;
    double t = NAN;
    double rl = err_lo / base, rh = err_hi / base;
    if (base > 0 && isfinite(base) && isfinite(rh) && rh > factor && rl <= factor) {
        double f = rl > 0 ? log(factor / rl) / log(rh / rl) : (factor - rl) / (rh - rl);
        t = lo + (hi - lo) * f;
    }
    if (div_hi > diverged_max && div_lo <= diverged_max) {
        double td = lo + (hi - lo) * (diverged_max - div_lo) / (div_hi - div_lo);
        if (!(t <= td)) t = td;
    }
    if (!isfinite(t)) return hi;
    return t < lo ? lo : t > hi ? hi : t;
}

typedef struct {
    const am_knee_params *p;
    am_sweep_cell_params cell; /* p->cell with the seed of the cell in progress */
    /* per momentum, during the search */
    double cur_mu, base;
    knee_eval *ev;
    size_t nev, cap;
} knee_ctx;

static am_status knee_eval_cell(knee_ctx *c, uint64_t tau, knee_eval **out)
{
    for (size_t i = 0; i < c->nev; i++)
        if (c->ev[i].tau == tau) {
            *out = &c->ev[i];
            return AM_OK;
        }
    if (c->nev == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 32;
        knee_eval *e = realloc(c->ev, cap * sizeof *e);
        if (!e) return AM_ENOMEM;
        c->ev = e;
        c->cap = cap;
    }
    double v[AM_SWEEP_CELL_NVALUES];
    knee_eval *e = &c->ev[c->nev];
    am_status st = am_sweep_cell_run(&c->cell, c->cur_mu, (double)tau, c->p->cancel, v, &e->rep);
    if (st) return st;
    e->tau = tau;
    e->err = v[AM_SWEEP_CELL_ERR];
    e->div = v[AM_SWEEP_CELL_DIVERGED];
    c->nev++;
    *out = e;
    return AM_OK;
}

static am_status knee_pred(void *ctx, uint64_t tau, int *out)
{
    knee_ctx *c = ctx;
    knee_eval *e;
    am_status st = knee_eval_cell(c, tau, &e);
    if (st) return st;
    *out = am_knee_critical(e->err, c->base, e->div, c->p->factor, c->p->diverged_max);
    return AM_OK;
}

/* Resampled mean of the time-averaged error and the fraction of resampled replicas that
 * diverged. */
static double resampled(const knee_eval *e, const size_t *idx, size_t R, double *diverged)
{
    double s = 0, n = 0, nd = 0;
    for (size_t i = 0; i < R; i++) {
        const double *r = e->rep + idx[i] * AM_MSGD_NSUMMARY;
        if (r[2] != 0) {
            nd += 1;
            continue;
        }
        s += r[0];
        n += 1;
    }
    *diverged = R ? nd / (double)R : 0;
    return n > 0 ? s / n : NAN;
}

static int cmp_eval(const void *a, const void *b)
{
    const knee_eval *x = a, *y = b;
    return x->tau < y->tau ? -1 : x->tau > y->tau;
}

static void drop_evals(knee_ctx *c)
{
    for (size_t i = 0; i < c->nev; i++)
        free(c->ev[i].rep);
    c->nev = 0;
}

/* One (seed, momentum) cell, cell = s nmu + i: the search, the refinement and the bootstrap
 * replicates into v, with the seed p->cell.msgd.seed + s. */
static am_status knee_cell(void *ctx, size_t cell, double *v)
{
    knee_ctx *c = ctx;
    const am_knee_params *p = c->p;
    drop_evals(c);
    c->cell = p->cell;
    c->cell.msgd.seed = p->cell.msgd.seed + (uint64_t)(cell / p->nmu);
    c->cur_mu = p->mu[cell % p->nmu];
    knee_eval *e0;
    am_status st = knee_eval_cell(c, 0, &e0);
    if (st) return st;
    c->base = e0->err;
    double base_sem;
    {
        /* SEM of the base cell from its replicas */
        double s = 0, s2 = 0, n = 0;
        for (size_t r = 0; r < p->cell.replicas; r++) {
            double x = e0->rep[r * AM_MSGD_NSUMMARY];
            if (!isfinite(x)) continue;
            s += x;
            s2 += x * x;
            n += 1;
        }
        base_sem = n > 1 ? sqrt((s2 - s * s / n) / (n - 1) / n) : NAN;
    }
    uint64_t tau_c;
    int found = 0;
    if (am_knee_critical(0, 0, e0->div, 1, p->diverged_max) || !isfinite(e0->err)) {
        tau_c = 0;
        found = 1;
    } else {
        st = am_sweep_search_int(knee_pred, c, 0, p->tau_max, &tau_c, &found);
        if (st) return st;
    }
    /* refinement: the neighbours of tau_c, for the bootstrap's resolution */
    for (uint64_t d = 1; found && d <= p->refine; d++) {
        knee_eval *e;
        if (tau_c + d <= p->tau_max && (st = knee_eval_cell(c, tau_c + d, &e))) return st;
        if (tau_c > d && (st = knee_eval_cell(c, tau_c - d, &e))) return st;
    }
    v[KV_TAU_C] = v[KV_LO] = v[KV_HI] = v[KV_ERR_AT] = NAN;
    v[KV_BASE] = c->base;
    v[KV_BASE_SEM] = base_sem;
    v[KV_EVALS] = (double)c->nev;
    qsort(c->ev, c->nev, sizeof *c->ev, cmp_eval);
    /* the bracket [tau_c - 1, tau_c] of the search (both evaluated: the bisection ends on
       adjacent delays) and the crossing inside it */
    const knee_eval *elo = NULL, *ehi = NULL;
    for (size_t i = 0; i < c->nev; i++) {
        if (found && tau_c > 0 && c->ev[i].tau == tau_c - 1) elo = &c->ev[i];
        if (found && c->ev[i].tau == tau_c) ehi = &c->ev[i];
    }
    if (found && tau_c == 0) {
        v[KV_TAU_C] = v[KV_LO] = v[KV_HI] = 0;
        v[KV_ERR_AT] = c->base;
    } else if (found && ehi) {
        v[KV_HI] = (double)tau_c;
        v[KV_ERR_AT] = ehi->err;
        v[KV_LO] = v[KV_TAU_C] = (double)tau_c; /* without a lower end: the integer delay */
        if (elo) {
            v[KV_LO] = (double)elo->tau;
            v[KV_TAU_C] = am_knee_crossing((double)elo->tau, (double)tau_c, elo->err, ehi->err,
                                           elo->div, ehi->div, c->base, p->factor, p->diverged_max);
        }
    }
    /* bootstrap: ev[0] is tau = 0 after sorting */
    size_t R = p->cell.replicas;
    size_t *idx = malloc(R * sizeof *idx);
    if (!idx) return AM_ENOMEM;
    for (size_t b = 0; b < p->bootstrap; b++) {
        am_rng rng;
        am_rng_init(&rng, c->cell.msgd.seed, b, AM_STREAM_KNEE_BOOT, 0);
        for (size_t i = 0; i < R; i++)
            idx[i] = (size_t)(((unsigned __int128)am_rng_u64(&rng) * R) >> 64);
        double d0;
        double base = resampled(&c->ev[0], idx, R, &d0);
        double tb = NAN;
        if (d0 > p->diverged_max || !isfinite(base))
            tb = 0;
        else {
            /* the first resampled critical delay and the crossing between it and the
               evaluated delay before it */
            double mprev = base, dprev = d0;
            for (size_t i = 1; i < c->nev; i++) {
                double d;
                double m = resampled(&c->ev[i], idx, R, &d);
                if (am_knee_critical(m, base, d, p->factor, p->diverged_max)) {
                    tb = am_knee_crossing((double)c->ev[i - 1].tau, (double)c->ev[i].tau, mprev, m,
                                          dprev, d, base, p->factor, p->diverged_max);
                    break;
                }
                mprev = m;
                dprev = d;
            }
        }
        v[KV_NFIXED + b] = tb;
    }
    free(idx);
    return AM_OK;
}

/* 1 if x is NaN or an integer in [0, hi]. */
static int nan_or_count(double x, double hi)
{
    return isnan(x) || (x >= 0 && x <= hi && x == floor(x));
}

/* 1 if x is NaN or a delay in [0, hi]. */
static int nan_or_delay(double x, double hi)
{
    return isnan(x) || (x >= 0 && x <= hi);
}

/* 1 if tau_c t lies in its bracket [lo, hi], or all three are NaN (no knee). */
static int in_bracket(double t, double lo, double hi)
{
    return isnan(t) ? isnan(lo) && isnan(hi) : lo <= t && t <= hi;
}

/* Checks the values of a momentum read from a checkpoint. */
static int knee_check_cell(void *ctx, size_t cell, const double *v, char *why, size_t whylen)
{
    (void)cell;
    const am_knee_params *p = ((const knee_ctx *)ctx)->p;
    double tmax = (double)p->tau_max, tol = 1e-9;
    if (!nan_or_delay(v[KV_TAU_C], tmax))
        snprintf(why, whylen, "tau_c %g is not a delay in [0, %g]", v[KV_TAU_C], tmax);
    else if (!nan_or_count(v[KV_LO], tmax) || !nan_or_count(v[KV_HI], tmax))
        snprintf(why, whylen, "the bracket [%g, %g] of tau_c is not two integer delays in [0, %g]",
                 v[KV_LO], v[KV_HI], tmax);
    else if (!in_bracket(v[KV_TAU_C], v[KV_LO], v[KV_HI]))
        snprintf(why, whylen, "tau_c %g lies outside its bracket [%g, %g]", v[KV_TAU_C], v[KV_LO],
                 v[KV_HI]);
    else if (!(isnan(v[KV_BASE]) || (v[KV_BASE] >= -tol && v[KV_BASE] <= 1 + tol)))
        snprintf(why, whylen, "error at tau = 0 %g is outside [0, 1]", v[KV_BASE]);
    else if (!(isnan(v[KV_BASE_SEM]) || v[KV_BASE_SEM] >= 0))
        snprintf(why, whylen, "standard error %g is negative", v[KV_BASE_SEM]);
    else if (isnan(v[KV_EVALS]) || v[KV_EVALS] < 1 ||
             !nan_or_count(v[KV_EVALS], max_evaluations(p)))
        snprintf(why, whylen, "cells evaluated %g is not a count in [1, %.0f]", v[KV_EVALS],
                 max_evaluations(p));
    else if (!(isnan(v[KV_ERR_AT]) || (v[KV_ERR_AT] >= -tol && v[KV_ERR_AT] <= 1 + tol)))
        snprintf(why, whylen, "error at tau_c %g is outside [0, 1]", v[KV_ERR_AT]);
    else {
        for (size_t b = 0; b < p->bootstrap; b++)
            if (!nan_or_delay(v[KV_NFIXED + b], tmax)) {
                snprintf(why, whylen, "bootstrap value %zu (%g) is not a delay in [0, %g]", b,
                         v[KV_NFIXED + b], tmax);
                return 1;
            }
        return 0;
    }
    return 1;
}

/* Percentile interval and standard deviation of the finite values of x[0..n-1]. */
static am_status interval(const double *x, size_t n, double *lo, double *hi, double *sd)
{
    double *y = malloc((n ? n : 1) * sizeof *y);
    if (!y) return AM_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) y[m++] = x[i];
    *lo = *hi = *sd = NAN;
    if (m >= 2) {
        gsl_sort(y, 1, m);
        *lo = gsl_stats_quantile_from_sorted_data(y, 1, m, 0.025);
        *hi = gsl_stats_quantile_from_sorted_data(y, 1, m, 0.975);
        *sd = gsl_stats_sd(y, 1, m);
    }
    free(y);
    return AM_OK;
}

void am_knee_result_free(am_knee_result *r)
{
    if (!r) return;
    free(r->done);
    free(r->mu);
    free(r->one_minus_mu);
    free(r->tau_c);
    free(r->tau_c_bracket_lo);
    free(r->tau_c_bracket_hi);
    free(r->tau_c_sem);
    free(r->tau_c_lo);
    free(r->tau_c_hi);
    free(r->tau_c_fit);
    free(r->tau_c_boot);
    free(r->tau_c_linear);
    free(r->tau_c_dde);
    free(r->tau_bound_paper);
    free(r->err_tau0);
    free(r->err_tau0_sem);
    free(r->err_at_tau_c);
    free(r->cells_evaluated);
    free(r->tau_c_seeds);
    free(r->tau_c_mean);
    free(r->tau_c_sd);
    free(r->exponent_seeds);
    free(r);
}

static am_knee_result *result_alloc(size_t nmu, size_t B, size_t S)
{
    am_knee_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->nmu = nmu;
    r->bootstrap = B;
    r->seeds = S;
    r->tau_c_seeds = malloc(nmu * S * sizeof(double));
    r->tau_c_mean = malloc(nmu * sizeof(double));
    r->tau_c_sd = malloc(nmu * sizeof(double));
    r->exponent_seeds = malloc(S * sizeof(double));
    if (!r->tau_c_seeds || !r->tau_c_mean || !r->tau_c_sd || !r->exponent_seeds) {
        am_knee_result_free(r);
        return NULL;
    }
    size_t d = nmu * sizeof(double);
    r->done = malloc(nmu);
    r->mu = malloc(d);
    r->one_minus_mu = malloc(d);
    r->tau_c = malloc(d);
    r->tau_c_bracket_lo = malloc(d);
    r->tau_c_bracket_hi = malloc(d);
    r->tau_c_sem = malloc(d);
    r->tau_c_lo = malloc(d);
    r->tau_c_hi = malloc(d);
    r->tau_c_fit = malloc(d);
    r->tau_c_boot = malloc((nmu * B > 0 ? nmu * B : 1) * sizeof(double));
    r->tau_c_linear = malloc(d);
    r->tau_c_dde = malloc(d);
    r->tau_bound_paper = malloc(d);
    r->err_tau0 = malloc(d);
    r->err_tau0_sem = malloc(d);
    r->err_at_tau_c = malloc(d);
    r->cells_evaluated = malloc(nmu * sizeof(size_t));
    if (!r->done || !r->mu || !r->one_minus_mu || !r->tau_c || !r->tau_c_bracket_lo ||
        !r->tau_c_bracket_hi || !r->tau_c_sem || !r->tau_c_lo || !r->tau_c_hi || !r->tau_c_fit ||
        !r->tau_c_boot || !r->tau_c_linear || !r->tau_c_dde || !r->tau_bound_paper ||
        !r->err_tau0 || !r->err_tau0_sem || !r->err_at_tau_c || !r->cells_evaluated) {
        am_knee_result_free(r);
        return NULL;
    }
    return r;
}

/* The spread over seeds: tau_c_seeds, tau_c_mean, tau_c_sd, the per-seed slopes and, for
 * S > 1, the exponent as their mean with the t interval (see am_knee.h). */
static am_status knee_seeds(const am_knee_params *p, const double *values, am_knee_result *r)
{
    size_t nmu = p->nmu, S = p->seeds, nv = KV_NFIXED + p->bootstrap;
    double *y = malloc(nmu * sizeof *y), *lc = malloc(S * sizeof *lc), *fin = NULL;
    fin = malloc((S > nmu ? S : nmu) * sizeof *fin);
    if (!y || !lc || !fin) {
        free(y);
        free(lc);
        free(fin);
        return AM_ENOMEM;
    }
    am_status st = AM_OK;
    for (size_t i = 0; i < nmu; i++) {
        size_t m = 0;
        for (size_t s = 0; s < S; s++) {
            double t = values[(s * nmu + i) * nv + KV_TAU_C];
            r->tau_c_seeds[i * S + s] = t;
            if (isfinite(t)) fin[m++] = t;
        }
        r->tau_c_mean[i] = m >= 1 ? gsl_stats_mean(fin, 1, m) : NAN;
        r->tau_c_sd[i] = m >= 2 ? gsl_stats_sd(fin, 1, m) : NAN;
    }
    for (size_t s = 0; s < S && !st; s++) {
        for (size_t i = 0; i < nmu; i++)
            y[i] = values[(s * nmu + i) * nv + KV_TAU_C];
        r->exponent_seeds[s] = lc[s] = NAN;
        st = am_sweep_fit_power(r->one_minus_mu, y, nmu, &r->exponent_seeds[s], &lc[s]);
        if (st) r->exponent_seeds[s] = lc[s] = NAN;
        if (st != AM_ENOMEM) st = AM_OK;
    }
    if (!st && S > 1) {
        size_t n = 0;
        double lsum = 0;
        for (size_t s = 0; s < S; s++)
            if (isfinite(r->exponent_seeds[s]) && isfinite(lc[s])) {
                fin[n++] = r->exponent_seeds[s];
                lsum += lc[s];
            }
        r->exponent = r->log_c = r->exponent_lo = r->exponent_hi = r->exponent_sd = NAN;
        if (n >= 1) {
            r->exponent = gsl_stats_mean(fin, 1, n);
            r->log_c = lsum / (double)n;
        }
        if (n >= 2) {
            r->exponent_sd = gsl_stats_sd(fin, 1, n);
            double h =
                gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * r->exponent_sd / sqrt((double)n);
            r->exponent_lo = r->exponent - h;
            r->exponent_hi = r->exponent + h;
        }
        for (size_t i = 0; i < nmu; i++)
            r->tau_c_fit[i] = exp(r->log_c) * pow(r->one_minus_mu[i], r->exponent);
    }
    free(y);
    free(lc);
    free(fin);
    return st;
}

/* The per-momentum table, the exponent fit and its bootstrap, from the sweep's values. */
static am_status knee_tables(const am_knee_params *p, const double *values, am_knee_result *r)
{
    size_t nmu = p->nmu, B = p->bootstrap, nv = KV_NFIXED + B;
    am_status st = AM_OK;
    for (size_t i = 0; i < nmu && !st; i++) {
        const double *v = values + i * nv;
        r->mu[i] = p->mu[i];
        r->one_minus_mu[i] = 1 - p->mu[i];
        r->tau_c[i] = v[KV_TAU_C];
        r->tau_c_bracket_lo[i] = v[KV_LO];
        r->tau_c_bracket_hi[i] = v[KV_HI];
        r->err_tau0[i] = v[KV_BASE];
        r->err_tau0_sem[i] = v[KV_BASE_SEM];
        r->err_at_tau_c[i] = v[KV_ERR_AT];
        r->cells_evaluated[i] = isfinite(v[KV_EVALS]) ? (size_t)v[KV_EVALS] : 0;
        memcpy(r->tau_c_boot + i * B, v + KV_NFIXED, B * sizeof(double));
        st = interval(v + KV_NFIXED, B, &r->tau_c_lo[i], &r->tau_c_hi[i], &r->tau_c_sem[i]);
    }
    if (st) return st;
    r->exponent = r->log_c = NAN;
    st = am_sweep_fit_power(r->one_minus_mu, r->tau_c, nmu, &r->exponent, &r->log_c);
    if (st == AM_ENOMEM) return st;
    st = AM_OK; /* an undefined exponent is a result (NaN), not an error */
    for (size_t i = 0; i < nmu; i++)
        r->tau_c_fit[i] = exp(r->log_c) * pow(r->one_minus_mu[i], r->exponent);
    double *boot = malloc((B ? B : 1) * sizeof *boot), *yb = malloc(nmu * sizeof *yb);
    if (!boot || !yb) {
        free(boot);
        free(yb);
        return AM_ENOMEM;
    }
    for (size_t b = 0; b < B && !st; b++) {
        for (size_t i = 0; i < nmu; i++)
            yb[i] = values[i * nv + KV_NFIXED + b];
        double pb, cb;
        st = am_sweep_fit_power(r->one_minus_mu, yb, nmu, &pb, &cb);
        boot[b] = st ? NAN : pb;
        if (st != AM_ENOMEM) st = AM_OK;
    }
    if (!st) st = interval(boot, B, &r->exponent_lo, &r->exponent_hi, &r->exponent_sd);
    free(boot);
    free(yb);
    if (st) return st;
    double zero = 0, implicit;
    st = am_sweep_cell_overlays(&p->cell, p->mu, nmu, &zero, 1, p->gamma, p->bound_constant,
                                r->tau_c_linear, r->tau_c_dde, r->tau_bound_paper, &implicit);
    if (st) return st;
    r->exponent_paper = 2.0;
    double c;
    r->exponent_linear = r->exponent_dde = NAN;
    if (am_sweep_fit_power(r->one_minus_mu, r->tau_c_linear, nmu, &r->exponent_linear, &c) ==
        AM_ENOMEM)
        return AM_ENOMEM;
    if (am_sweep_fit_power(r->one_minus_mu, r->tau_c_dde, nmu, &r->exponent_dde, &c) == AM_ENOMEM)
        return AM_ENOMEM;
    return knee_seeds(p, values, r);
}

am_status am_knee_run(const am_knee_params *p, am_knee_result **result, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!result) return AM_EINVAL;
    *result = NULL;
    am_status st = am_knee_params_check(p, err, errlen);
    if (st) return st;

    json_t *fp = NULL;
    st = am_sweep_cell_fingerprint_base(&p->cell, &fp);
    if (st) return st;
    json_object_set_new(fp, "mus", am_sweep_cell_json_doubles(p->mu, p->nmu));
    json_object_set_new(fp, "factor", json_real(p->factor));
    json_object_set_new(fp, "tau_max", json_integer((json_int_t)p->tau_max));
    json_object_set_new(fp, "bootstrap", json_integer((json_int_t)p->bootstrap));
    json_object_set_new(fp, "refine", json_integer((json_int_t)p->refine));
    json_object_set_new(fp, "diverged_max", json_real(p->diverged_max));
    json_object_set_new(fp, "seeds", json_integer((json_int_t)p->seeds));
    char *fps = am_sweep_cell_fingerprint(fp);
    json_decref(fp);

    size_t nv = KV_NFIXED + p->bootstrap;
    size_t ncell = p->nmu * p->seeds;
    am_knee_result *r = fps ? result_alloc(p->nmu, p->bootstrap, p->seeds) : NULL;
    unsigned char *done = r ? malloc(ncell) : NULL;
    double *values = done ? malloc(ncell * nv * sizeof *values) : NULL;
    if (!values) {
        free(fps);
        free(done);
        am_knee_result_free(r);
        return AM_ENOMEM;
    }
    knee_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.p = p;
    am_sweep_problem prob = {ncell, nv, knee_cell, &ctx};
    am_sweep_params sp;
    AM_SWEEP_STUDY_PARAMS(sp, p, fps, knee_check_cell);
    size_t ndone = 0;
    st = am_sweep_run(&prob, &sp, values, done, &ndone, err, errlen);
    /* a momentum is done when all its seeds are */
    r->cells_done = 0;
    for (size_t i = 0; i < p->nmu; i++) {
        r->done[i] = 1;
        for (size_t s = 0; s < p->seeds; s++)
            if (!done[s * p->nmu + i]) r->done[i] = 0;
        r->cells_done += r->done[i];
    }
    free(done);
    free(fps);
    drop_evals(&ctx);
    free(ctx.ev);
    if (!st) st = knee_tables(p, values, r);
    free(values);
    if (st) {
        am_knee_result_free(r);
        return st;
    }
    *result = r;
    if (r->cells_done < r->nmu && p->cancel && *p->cancel) return AM_ECANCELED;
    return AM_OK;
}
