/*
 * am_phase.c -- the momentum-delay phase diagram (see am_phase.h): the cells of the grid run
 * through am_sweep_run, then the metric table r_ij = e_ij / e_i0 (or e, q, t) with its
 * standard error and the theory's boundaries.
 */
#include "am_phase.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_theory.h"
#include "am_sweep.h"
#include "am_sweep_cell_impl.h"
#include "am_sweep_impl.h"
#include "../core/am_stats.h"
#include "../montecarlo/am_msgd.h"

am_phase_params am_phase_params_default(void)
{
    am_phase_params p;
    memset(&p, 0, sizeof p);
    p.cell = am_sweep_cell_params_default();
    p.metric = AM_PHASE_STATIONARY;
    p.gamma = AM_THEORY_BOUND_GAMMA;
    p.bound_constant = AM_THEORY_BOUND_C;
    return p;
}

/* Index of the tau = 0 column, or ntau. */
static size_t zero_column(const am_phase_params *p)
{
    size_t j0 = p->ntau;
    for (size_t j = 0; j < p->ntau; j++)
        if (p->tau[j] == 0) j0 = j;
    return j0;
}

am_status am_phase_params_check(const am_phase_params *p, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!p) return AM_EINVAL;
    am_status st = am_sweep_cell_params_check(&p->cell, err, errlen);
    if (st) return st;
    if (!p->mu || !p->tau || p->nmu == 0 || p->ntau == 0) {
        snprintf(err, errlen, "the mu and tau axes must each hold at least one value");
        return AM_EINVAL;
    }
    if (p->nmu > 1000000 || p->ntau > 1000000 || p->nmu * p->ntau > 1000000) {
        snprintf(err, errlen, "the grid has more than 1e6 cells");
        return AM_EINVAL;
    }
    for (size_t i = 0; i < p->nmu; i++)
        if (!(p->mu[i] >= 0 && p->mu[i] < 1)) {
            snprintf(err, errlen, "mu values must be in [0, 1), got %g", p->mu[i]);
            return AM_EINVAL;
        }
    for (size_t j = 0; j < p->ntau; j++) {
        char why[256];
        if (am_sweep_cell_check(&p->cell, 0.0, p->tau[j], why, sizeof why)) {
            if (why[0])
                snprintf(err, errlen, "tau value %g: %s", p->tau[j], why);
            else
                snprintf(err, errlen, "tau value %g is not a valid delay parameter of the axis",
                         p->tau[j]);
            return AM_EINVAL;
        }
    }
    if ((unsigned)p->metric > AM_PHASE_TIME) {
        snprintf(err, errlen, "unknown metric %d", (int)p->metric);
        return AM_EINVAL;
    }
    if (p->metric == AM_PHASE_RATIO && zero_column(p) == p->ntau) {
        snprintf(err, errlen, "the ratio metric needs tau = 0 on the tau axis");
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
    if (p->resume && !p->checkpoint) {
        snprintf(err, errlen, "resume needs a checkpoint file");
        return AM_EINVAL;
    }
    return AM_OK;
}

void am_phase_result_free(am_phase_result *r)
{
    if (!r) return;
    free(r->mu);
    free(r->tau);
    free(r->metric_value);
    free(r->metric_sem);
    free(r->diverged_fraction);
    free(r->reached_fraction);
    free(r->cells);
    free(r->done);
    free(r->boundary_linear);
    free(r->boundary_dde);
    free(r->boundary_paper);
    free(r->implicit_momentum);
    free(r);
}

static am_phase_result *result_alloc(size_t nmu, size_t ntau)
{
    am_phase_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    size_t n = nmu * ntau;
    r->nmu = nmu;
    r->ntau = ntau;
    r->ncells = n;
    r->mu = malloc(nmu * sizeof(double));
    r->tau = malloc(ntau * sizeof(double));
    r->metric_value = malloc(n * sizeof(double));
    r->metric_sem = malloc(n * sizeof(double));
    r->diverged_fraction = malloc(n * sizeof(double));
    r->reached_fraction = malloc(n * sizeof(double));
    r->cells = malloc(n * AM_SWEEP_CELL_NVALUES * sizeof(double));
    r->done = malloc(n);
    r->boundary_linear = malloc(nmu * sizeof(double));
    r->boundary_dde = malloc(nmu * sizeof(double));
    r->boundary_paper = malloc(nmu * sizeof(double));
    r->implicit_momentum = malloc(ntau * sizeof(double));
    if (!r->mu || !r->tau || !r->metric_value || !r->metric_sem || !r->diverged_fraction ||
        !r->reached_fraction || !r->cells || !r->done || !r->boundary_linear || !r->boundary_dde ||
        !r->boundary_paper || !r->implicit_momentum) {
        am_phase_result_free(r);
        return NULL;
    }
    return r;
}

/* With the ratio metric a cell carries one value more than AM_SWEEP_CELL_NVALUES: the
 * standard error of r = e / e_0 from the replicas paired with the tau = 0 cell of its row.
 * Both cells run replica i on the same random numbers (common random numbers), so e_i and
 * e_0,i are strongly correlated and the delta method for independent cells overstates the
 * error; the paired one is sqrt(var(e_i - r e_0,i) / n) / |e_0| over the n replicas that
 * survived in both. The row's tau = 0 per-replica summaries are kept (one row at a time,
 * recomputed by a rank that did not run that cell itself). */
enum { PHASE_RATIO_SEM = AM_SWEEP_CELL_NVALUES, PHASE_NVALUES_RATIO };

typedef struct {
    const am_phase_params *p;
    size_t nvalues;   /* AM_SWEEP_CELL_NVALUES, or PHASE_NVALUES_RATIO for the ratio metric */
    size_t j0;        /* the tau = 0 column */
    size_t base_row;  /* row of base (SIZE_MAX: none) */
    double *base;     /* [replicas * AM_MSGD_NSUMMARY] of the row's tau = 0 cell */
    double base_mean; /* its mean stationary error */
} phase_ctx;

double am_phase_paired_ratio_sem(const double *x, const double *y, size_t n, size_t stride,
                                 double xmean, double ymean)
{
    double r = xmean / ymean;
    if (!isfinite(r)) return NAN;
    am_stats s = {0};
    for (size_t i = 0; i < n; i++) {
        double a = x[i * stride], b = y[i * stride];
        if (isfinite(a) && isfinite(b)) am_stats_push(&s, a - r * b);
    }
    return s.n >= 2 ? am_stats_sem(&s) / fabs(ymean) : NAN;
}

static am_status phase_cell(void *vctx, size_t cell, double *v)
{
    phase_ctx *ctx = vctx;
    const am_phase_params *p = ctx->p;
    size_t row = cell / p->ntau, col = cell % p->ntau;
    if (ctx->nvalues == AM_SWEEP_CELL_NVALUES)
        return am_sweep_cell_run(&p->cell, p->mu[row], p->tau[col], p->cancel, v, NULL);
    double *rep = NULL;
    am_status st = am_sweep_cell_run(&p->cell, p->mu[row], p->tau[col], p->cancel, v, &rep);
    if (st) return st;
    if (col == ctx->j0) { /* the row's reference: kept for the other cells of the row */
        free(ctx->base);
        ctx->base = rep;
        ctx->base_row = row;
        ctx->base_mean = v[AM_SWEEP_CELL_ERR];
        v[PHASE_RATIO_SEM] = 0.0;
        return AM_OK;
    }
    if (ctx->base_row != row) {
        double bv[AM_SWEEP_CELL_NVALUES], *brep = NULL;
        st = am_sweep_cell_run(&p->cell, p->mu[row], p->tau[ctx->j0], p->cancel, bv, &brep);
        if (st) {
            free(rep);
            return st;
        }
        free(ctx->base);
        ctx->base = brep;
        ctx->base_row = row;
        ctx->base_mean = bv[AM_SWEEP_CELL_ERR];
    }
    v[PHASE_RATIO_SEM] = am_phase_paired_ratio_sem(
        rep, ctx->base, p->cell.replicas, AM_MSGD_NSUMMARY, v[AM_SWEEP_CELL_ERR], ctx->base_mean);
    free(rep);
    return AM_OK;
}

static int phase_check_cell(void *vctx, size_t cell, const double *v, char *why, size_t whylen)
{
    (void)cell;
    const phase_ctx *ctx = vctx;
    if (am_sweep_cell_values_check(&ctx->p->cell, v, why, whylen)) return 1;
    if (ctx->nvalues > AM_SWEEP_CELL_NVALUES &&
        !(isnan(v[PHASE_RATIO_SEM]) || (isfinite(v[PHASE_RATIO_SEM]) && v[PHASE_RATIO_SEM] >= 0))) {
        snprintf(why, whylen, "the paired standard error %g is not a number >= 0",
                 v[PHASE_RATIO_SEM]);
        return 1;
    }
    return 0;
}

/* The metric table of the finished cells (NaN elsewhere); paired: the ratio's paired
 * standard errors [ncells] (NULL unless the ratio metric). */
static void metric_table(const am_phase_params *p, am_phase_result *r, const double *paired)
{
    size_t ntau = p->ntau, j0 = zero_column(p);
    double R = (double)p->cell.replicas;
    for (size_t c = 0; c < r->ncells; c++) {
        const double *v = r->cells + c * AM_SWEEP_CELL_NVALUES;
        double *met = &r->metric_value[c], *sem = &r->metric_sem[c];
        r->diverged_fraction[c] = v[AM_SWEEP_CELL_DIVERGED];
        r->reached_fraction[c] = v[AM_SWEEP_CELL_REACHED];
        switch (p->metric) {
        case AM_PHASE_STATIONARY:
            *met = v[AM_SWEEP_CELL_ERR];
            *sem = v[AM_SWEEP_CELL_ERR_SEM];
            break;
        case AM_PHASE_RATIO: {
            const double *b = r->cells + ((c / ntau) * ntau + j0) * AM_SWEEP_CELL_NVALUES;
            *met = v[AM_SWEEP_CELL_ERR] / b[AM_SWEEP_CELL_ERR];
            *sem = c % ntau == j0 ? 0.0 : paired[c];
            break;
        }
        case AM_PHASE_DIVERGED:
            *met = v[AM_SWEEP_CELL_DIVERGED];
            *sem = sqrt(*met * (1 - *met) / R);
            break;
        default:
            *met = v[AM_SWEEP_CELL_TIME];
            *sem = v[AM_SWEEP_CELL_TIME_SEM];
        }
    }
}

am_status am_phase_run(const am_phase_params *p, am_phase_result **result, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    if (!result) return AM_EINVAL;
    *result = NULL;
    am_status st = am_phase_params_check(p, err, errlen);
    if (st) return st;

    /* The fingerprint: every parameter that changes a cell's values, the version, the engine. */
    json_t *fp = NULL;
    st = am_sweep_cell_fingerprint_base(&p->cell, &fp);
    if (st) return st;
    json_object_set_new(fp, "mu_grid", am_sweep_cell_json_doubles(p->mu, p->nmu));
    json_object_set_new(fp, "tau_grid", am_sweep_cell_json_doubles(p->tau, p->ntau));
    char *fps = am_sweep_cell_fingerprint(fp);
    json_decref(fp);
    am_phase_result *r = fps ? result_alloc(p->nmu, p->ntau) : NULL;
    if (!r) {
        free(fps);
        return AM_ENOMEM;
    }
    memcpy(r->mu, p->mu, p->nmu * sizeof(double));
    memcpy(r->tau, p->tau, p->ntau * sizeof(double));
    r->metric = p->metric;

    phase_ctx ctx = {p, AM_SWEEP_CELL_NVALUES, zero_column(p), SIZE_MAX, NULL, NAN};
    if (p->metric == AM_PHASE_RATIO) ctx.nvalues = PHASE_NVALUES_RATIO;
    /* the sweep's table: the cells' values, and the ratio's paired error after them */
    double *table = ctx.nvalues == AM_SWEEP_CELL_NVALUES
                        ? r->cells
                        : malloc(r->ncells * ctx.nvalues * sizeof(double));
    if (!table) {
        free(fps);
        am_phase_result_free(r);
        return AM_ENOMEM;
    }
    am_sweep_problem prob = {r->ncells, ctx.nvalues, phase_cell, &ctx};
    am_sweep_params sp;
    AM_SWEEP_STUDY_PARAMS(sp, p, fps, phase_check_cell);
    st = am_sweep_run(&prob, &sp, table, r->done, &r->cells_done, err, errlen);
    free(fps);
    free(ctx.base);
    double *paired = NULL;
    if (table != r->cells) {
        paired = malloc(r->ncells * sizeof *paired);
        for (size_t c = 0; c < r->ncells; c++) {
            memcpy(r->cells + c * AM_SWEEP_CELL_NVALUES, table + c * ctx.nvalues,
                   AM_SWEEP_CELL_NVALUES * sizeof(double));
            if (paired) paired[c] = table[c * ctx.nvalues + PHASE_RATIO_SEM];
        }
        free(table);
        if (!paired && !st) st = AM_ENOMEM;
    }
    if (st) {
        free(paired);
        am_phase_result_free(r);
        return st;
    }
    metric_table(p, r, paired);
    free(paired);
    st = am_sweep_cell_overlays(&p->cell, p->mu, p->nmu, p->tau, p->ntau, p->gamma,
                                p->bound_constant, r->boundary_linear, r->boundary_dde,
                                r->boundary_paper, r->implicit_momentum);
    if (st) {
        am_phase_result_free(r);
        return st;
    }
    *result = r;
    if (r->cells_done < r->ncells && p->cancel && *p->cancel) return AM_ECANCELED;
    return AM_OK;
}
