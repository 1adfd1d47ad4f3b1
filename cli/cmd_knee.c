/*
 * cmd_knee.c -- `amsgd knee`: for each momentum mu, the critical delay tau_c(mu), the
 * smallest integer delay at which the stationary error exceeds F times its tau = 0 value or
 * a replica diverges, found by bracketing (doubling) and integer bisection; its uncertainty
 * by a bootstrap over replicas; and the exponent p of tau_c ∝ (1-mu)^p by least squares on
 * log-log axes, with a bootstrap confidence interval, next to the paper's p = 2 and the
 * linear-stability prediction.
 *
 * Bootstrap: replicate b draws R replica indices with replacement from (seed, b) only, the
 * same indices in every cell and every momentum, which keeps the common-random-number
 * correlation between cells (replica r of every cell uses the same data stream). Within
 * one momentum, replicate b recomputes the threshold from the resampled tau = 0 cell and
 * takes the smallest evaluated delay whose resampled cell exceeds it; its resolution is
 * that of the evaluated delays, which are dense (spacing 1) around tau_c.
 * Each momentum is one cell of the checkpointed, MPI-distributed sweep of am_sweep.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../core/am_rng.h"
#include "../montecarlo/am_sweep.h"
#include "cli_common.h"
#include "commands.h"
#include "sweep_cell.h"
#include "sweep_overlay.h"

static const cli_opt OPT_MUS = {"mus", "LIST", "0.5,0.7,0.8,0.85,0.9,0.95",
                                "momenta: comma list or A:B:N"};
static const cli_opt OPT_FACTOR = {"factor", "F", "2",
                                   "tau_c: first delay whose stationary error exceeds F times "
                                   "the tau = 0 value (or a replica diverges)"};
static const cli_opt OPT_K_DELAY_MODEL = {"delay-model", "KIND", "const",
                                          "delay axis: const (tau) or uniform (S)"};
static const cli_opt OPT_TAU_MAX = {"tau-max", "N", "4096", "largest delay searched"};
static const cli_opt OPT_BOOTSTRAP = {"bootstrap", "B", "200", "bootstrap replicates"};
static const cli_opt OPT_REFINE = {"refine", "K", "3",
                                   "also evaluate the K delays on each side of tau_c, so the "
                                   "bootstrap resolves tau_c to 1 there"};
static const cli_opt OPT_K_CHECKPOINT = {"checkpoint", "FILE", NULL,
                                         "append every finished momentum to FILE (fsync'd)"};
static const cli_opt OPT_K_RESUME = {"resume", NULL, NULL,
                                     "skip the momenta already in the --checkpoint file"};

static const cli_opt *const knee_opts[] = {&OPT_DIM,           &OPT_SPECTRUM,    &OPT_DIST,
                                           &OPT_ROTATE,        &OPT_ETA,         &OPT_SW_INIT,
                                           &OPT_MUS,           &OPT_FACTOR,      &OPT_TAU_MAX,
                                           &OPT_K_DELAY_MODEL, &OPT_SW_TIME,     &OPT_SW_GRID,
                                           &OPT_BURNIN,        &OPT_SW_REPLICAS, &OPT_BOOTSTRAP,
                                           &OPT_REFINE,        &OPT_SEED,        &OPT_THREADS,
                                           &OPT_BLOWUP,        &OPT_GAMMA,       &OPT_BOUND_CONST,
                                           &OPT_K_CHECKPOINT,  &OPT_K_RESUME,    &OPT_QUIET,
                                           &OPT_FORMAT,        &OPT_OUTPUT,      NULL};

/* Values of one momentum cell: fixed part, then the bootstrap replicates. */
enum { KV_TAU_C = 0, KV_BASE, KV_BASE_SEM, KV_EVALS, KV_ERR_AT, KV_NFIXED };

typedef struct {
    uint64_t tau;
    double *rep; /* R * AM_MSGD_NSUMMARY */
    double err;
    double div;
} knee_eval;

typedef struct {
    const sweep_setup *s;
    const double *mu;
    double factor;
    uint64_t tau_max;
    size_t B;
    uint64_t refine;
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
    double v[SWEEP_NVALUES];
    knee_eval *e = &c->ev[c->nev];
    am_status st = sweep_cell_run(c->s, c->cur_mu, (double)tau, v, &e->rep);
    if (st) return st;
    e->tau = tau;
    e->err = v[SV_ERR];
    e->div = v[SV_DIVERGED];
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
    *out = e->div > 0 || !(e->err <= c->factor * c->base);
    return AM_OK;
}

/* Resampled mean of the time-averaged error and whether a resampled replica diverged. */
static double resampled(const knee_eval *e, const size_t *idx, size_t R, int *diverged)
{
    double s = 0, n = 0;
    *diverged = 0;
    for (size_t i = 0; i < R; i++) {
        const double *r = e->rep + idx[i] * AM_MSGD_NSUMMARY;
        if (r[2] != 0) {
            *diverged = 1;
            continue;
        }
        s += r[0];
        n += 1;
    }
    return n > 0 ? s / n : NAN;
}

static int cmp_eval(const void *a, const void *b)
{
    const knee_eval *x = a, *y = b;
    return x->tau < y->tau ? -1 : x->tau > y->tau;
}

static am_status knee_cell(void *ctx, size_t cell, double *v)
{
    knee_ctx *c = ctx;
    for (size_t i = 0; i < c->nev; i++)
        free(c->ev[i].rep);
    c->nev = 0;
    c->cur_mu = c->mu[cell];
    knee_eval *e0;
    am_status st = knee_eval_cell(c, 0, &e0);
    if (st) return st;
    c->base = e0->err;
    double base_sem;
    {
        double v0[SWEEP_NVALUES];
        (void)v0;
        /* SEM of the base cell from its replicas */
        double s = 0, s2 = 0, n = 0;
        for (size_t r = 0; r < c->s->ep.replicas; r++) {
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
    if (e0->div > 0) {
        tau_c = 0;
        found = 1;
    } else {
        st = am_sweep_search_int(knee_pred, c, 0, c->tau_max, &tau_c, &found);
        if (st) return st;
    }
    /* refinement: the neighbours of tau_c, for the bootstrap's resolution */
    for (uint64_t d = 1; found && d <= c->refine; d++) {
        knee_eval *e;
        if (tau_c + d <= c->tau_max && (st = knee_eval_cell(c, tau_c + d, &e))) return st;
        if (tau_c > d && (st = knee_eval_cell(c, tau_c - d, &e))) return st;
    }
    v[KV_TAU_C] = found ? (double)tau_c : NAN;
    v[KV_BASE] = c->base;
    v[KV_BASE_SEM] = base_sem;
    v[KV_EVALS] = (double)c->nev;
    v[KV_ERR_AT] = NAN;
    qsort(c->ev, c->nev, sizeof *c->ev, cmp_eval);
    for (size_t i = 0; i < c->nev; i++)
        if (found && c->ev[i].tau == tau_c) v[KV_ERR_AT] = c->ev[i].err;
    /* bootstrap: ev[0] is tau = 0 after sorting */
    size_t R = c->s->ep.replicas;
    size_t *idx = malloc(R * sizeof *idx);
    if (!idx) return AM_ENOMEM;
    for (size_t b = 0; b < c->B; b++) {
        am_rng rng;
        am_rng_init(&rng, c->s->base.seed, b, AM_STREAM_KNEE_BOOT, 0);
        for (size_t i = 0; i < R; i++)
            idx[i] = (size_t)(((unsigned __int128)am_rng_u64(&rng) * R) >> 64);
        int d0;
        double base = resampled(&c->ev[0], idx, R, &d0);
        double tb = NAN;
        if (d0)
            tb = 0;
        else
            for (size_t i = 1; i < c->nev; i++) {
                int d;
                double m = resampled(&c->ev[i], idx, R, &d);
                if (d || !(m <= c->factor * base)) {
                    tb = (double)c->ev[i].tau;
                    break;
                }
            }
        v[KV_NFIXED + b] = tb;
    }
    free(idx);
    return AM_OK;
}

/* Percentile interval and standard deviation of the finite values of x[0..n-1]. */
static void interval(const double *x, size_t n, double *lo, double *hi, double *sd)
{
    double *y = malloc((n ? n : 1) * sizeof *y);
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
}

int cmd_knee(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "knee",
              "Find the critical delay tau_c(mu) for each momentum (bracketing, then integer\n"
              "bisection) and fit the exponent p of tau_c ∝ (1-mu)^p with a bootstrap\n"
              "confidence interval, next to the paper's p = 2 and linear stability.",
              knee_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    sweep_setup s;
    sweep_setup_init(&s, &a, p);
    size_t nmu;
    double *mu = sweep_parse_grid(&a, "mus", cli_str(&a, "mus"), &nmu);
    for (size_t i = 0; i < nmu; i++)
        if (!(mu[i] >= 0 && mu[i] < 1))
            cli_usage_error("--mus values must be in [0, 1), got %g", mu[i]);
    double factor = cli_double(&a, "factor", 1, 1e12, 1, 0);
    uint64_t tau_max = (uint64_t)cli_int(&a, "tau-max", 1, 1000000);
    if (s.kind == AM_DELAY_GEOMETRIC)
        cli_usage_error("--delay-model must be const or uniform "
                        "for knee (integer delays), got 'geometric'");
    {
        am_msgd_params m = s.base;
        char err[256];
        if (sweep_delay(&s, (double)tau_max, &m.delay) ||
            am_msgd_params_check(p, &m, err, sizeof err))
            cli_usage_error("--tau-max %llu is too large a delay", (unsigned long long)tau_max);
    }
    size_t B = (size_t)cli_int(&a, "bootstrap", 0, 100000);
    uint64_t refine = (uint64_t)cli_int(&a, "refine", 0, 1000);
    double gamma = cli_double(&a, "gamma", 0, 1, 1, 0);
    double pconst = cli_double(&a, "bound-constant", 0, 1e300, 1, 0);
    const char *ckpt = cli_str(&a, "checkpoint");
    int resume = cli_flag(&a, "resume");
    if (resume && !ckpt) cli_usage_error("--resume needs --checkpoint FILE");
    int json = cli_json(&a);
    int quiet = cli_flag(&a, "quiet");

    json_t *fp = json_object();
    sweep_params_json(fp, &s);
    json_object_set_new(fp, "mus", cli_json_doubles(mu, nmu));
    json_object_set_new(fp, "factor", json_real(factor));
    json_object_set_new(fp, "tau_max", json_integer((json_int_t)tau_max));
    json_object_set_new(fp, "bootstrap", json_integer((json_int_t)B));
    json_object_set_new(fp, "refine", json_integer((json_int_t)refine));
    char *fps = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));

    knee_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.s = &s;
    ctx.mu = mu;
    ctx.factor = factor;
    ctx.tau_max = tau_max;
    ctx.B = B;
    ctx.refine = refine;
    size_t nv = KV_NFIXED + B;
    am_sweep_problem prob = {nmu, nv, knee_cell, &ctx};
    double *values = malloc(nmu * nv * sizeof *values);
    unsigned char *done = malloc(nmu);
    if (!values || !done) cli_runtime_error("out of memory");
    int complete = sweep_run_cli(&prob, ckpt, resume, fps, quiet, "knee", "momenta", values, done);
    for (size_t i = 0; i < ctx.nev; i++)
        free(ctx.ev[i].rep);
    free(ctx.ev);
    if (!complete) return am_sweep_rank() == 0 ? 130 : 0;
    if (am_sweep_rank() != 0) return 0;

    /* per-momentum results */
    double *x = malloc(nmu * sizeof *x), *tc = malloc(nmu * sizeof *tc);
    double *lo = malloc(nmu * sizeof *lo), *hi = malloc(nmu * sizeof *hi);
    double *sd = malloc(nmu * sizeof *sd), *boot = malloc((B ? B : 1) * sizeof *boot);
    for (size_t i = 0; i < nmu; i++) {
        const double *v = values + i * nv;
        x[i] = 1 - mu[i];
        tc[i] = v[KV_TAU_C];
        interval(v + KV_NFIXED, B, &lo[i], &hi[i], &sd[i]);
    }
    double pexp = NAN, logc = NAN;
    am_sweep_fit_power(x, tc, nmu, &pexp, &logc);
    double *yb = malloc(nmu * sizeof *yb);
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < nmu; i++)
            yb[i] = values[i * nv + KV_NFIXED + b];
        double pb, cb;
        boot[b] = am_sweep_fit_power(x, yb, nmu, &pb, &cb) ? NAN : pb;
    }
    double plo, phi, psd;
    interval(boot, B, &plo, &phi, &psd);
    sweep_overlays ov;
    double zero = 0;
    sweep_overlays_compute(&ov, &s, mu, nmu, &zero, 1, gamma, pconst);
    double plin = NAN, clin = NAN, pdde = NAN, cdde = NAN;
    am_sweep_fit_power(x, ov.linear, nmu, &plin, &clin);
    am_sweep_fit_power(x, ov.dde, nmu, &pdde, &cdde);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (json) {
        json_t *params = json_deep_copy(fp);
        json_object_set_new(params, "gamma", json_real(gamma));
        json_object_set_new(params, "bound_constant", json_real(pconst));
        json_t *root = cli_json_root("knee", params);
        json_t *jci = json_array(), *jb = json_array(), *jev = json_array(), *je = json_array();
        double *col = malloc(nmu * sizeof *col);
        for (size_t i = 0; i < nmu; i++) {
            json_t *pair = json_array();
            json_array_append_new(pair, isfinite(lo[i]) ? json_real(lo[i]) : json_null());
            json_array_append_new(pair, isfinite(hi[i]) ? json_real(hi[i]) : json_null());
            json_array_append_new(jci, pair);
            const double *v = values + i * nv;
            json_array_append_new(jb, isfinite(v[KV_BASE]) ? json_real(v[KV_BASE]) : json_null());
            json_array_append_new(jev, json_integer((json_int_t)v[KV_EVALS]));
            json_array_append_new(je,
                                  isfinite(v[KV_ERR_AT]) ? json_real(v[KV_ERR_AT]) : json_null());
        }
        json_object_set_new(root, "mu", cli_json_doubles(mu, nmu));
        json_object_set_new(root, "tau_c", cli_json_doubles(tc, nmu));
        json_object_set_new(root, "tau_c_sem", cli_json_doubles(sd, nmu));
        json_object_set_new(root, "tau_c_ci", jci);
        json_object_set_new(root, "tau_c_linear", cli_json_doubles(ov.linear, nmu));
        json_object_set_new(root, "tau_c_dde", cli_json_doubles(ov.dde, nmu));
        json_object_set_new(root, "tau_bound_paper", cli_json_doubles(ov.paper, nmu));
        json_object_set_new(root, "err_tau0", jb);
        json_object_set_new(root, "err_at_tau_c", je);
        json_object_set_new(root, "cells_evaluated", jev);
        json_object_set_new(root, "exponent", isfinite(pexp) ? json_real(pexp) : json_null());
        json_t *pci = json_array();
        json_array_append_new(pci, isfinite(plo) ? json_real(plo) : json_null());
        json_array_append_new(pci, isfinite(phi) ? json_real(phi) : json_null());
        json_object_set_new(root, "exponent_ci", pci);
        json_object_set_new(root, "exponent_paper", json_real(2.0));
        json_object_set_new(root, "exponent_linear",
                            isfinite(plin) ? json_real(plin) : json_null());
        json_object_set_new(root, "exponent_dde", isfinite(pdde) ? json_real(pdde) : json_null());
        free(col);
        cli_out_json(f, root);
    } else {
        fputs("mu,one_minus_mu,tau_c,tau_c_sem,tau_c_lo,tau_c_hi,tau_c_fit,tau_c_linear,"
              "tau_c_dde,tau_bound_paper,exponent,exponent_lo,exponent_hi\n",
              f);
        for (size_t i = 0; i < nmu; i++) {
            double row[] = {mu[i],
                            x[i],
                            tc[i],
                            sd[i],
                            lo[i],
                            hi[i],
                            exp(logc) * pow(x[i], pexp),
                            ov.linear[i],
                            ov.dde[i],
                            ov.paper[i],
                            pexp,
                            plo,
                            phi};
            for (size_t q = 0; q < sizeof row / sizeof *row; q++) {
                if (q) fputc(',', f);
                cli_csv_double(f, row[q]);
            }
            fputc('\n', f);
        }
    }
    cli_out_commit(&out);
    sweep_overlays_free(&ov);
    free(x);
    free(tc);
    free(lo);
    free(hi);
    free(sd);
    free(boot);
    free(yb);
    free(values);
    free(done);
    free(fps);
    json_decref(fp);
    free(mu);
    sweep_setup_free(&s);
    am_problem_free(p);
    return 0;
}
