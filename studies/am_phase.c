/*
 * am_phase.c -- the momentum-delay phase diagram (see am_phase.h): the cells of the grid run
 * through am_sweep_run, then the metric table r_ij = e_ij / e_i0 (or e, q, t) with its
 * standard error and the theory's boundaries.
 */
#include "am_phase.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../theory/am_theory.h"
#include "am_sweep.h"
#include "am_sweep_cell_impl.h"

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

typedef struct {
    const am_phase_params *p;
} phase_ctx;

static am_status phase_cell(void *ctx, size_t cell, double *v)
{
    const am_phase_params *p = ((const phase_ctx *)ctx)->p;
    return am_sweep_cell_run(&p->cell, p->mu[cell / p->ntau], p->tau[cell % p->ntau], p->cancel, v,
                             NULL);
}

static int phase_check_cell(void *ctx, size_t cell, const double *v, char *why, size_t whylen)
{
    (void)cell;
    return am_sweep_cell_values_check(&((const phase_ctx *)ctx)->p->cell, v, why, whylen);
}

/* The metric table of the finished cells (NaN elsewhere). */
static void metric_table(const am_phase_params *p, am_phase_result *r)
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
            double r1 = v[AM_SWEEP_CELL_ERR_SEM] / v[AM_SWEEP_CELL_ERR];
            double r0 = b[AM_SWEEP_CELL_ERR_SEM] / b[AM_SWEEP_CELL_ERR];
            *sem = c % ntau == j0 ? 0.0 : fabs(*met) * sqrt(r1 * r1 + r0 * r0);
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

    phase_ctx ctx = {p};
    am_sweep_problem prob = {r->ncells, AM_SWEEP_CELL_NVALUES, phase_cell, &ctx};
    am_sweep_params sp = am_sweep_params_default();
    sp.checkpoint = p->checkpoint;
    sp.resume = p->resume;
    sp.fingerprint = fps;
    sp.stop = p->cancel;
    sp.progress = p->progress;
    sp.progress_ctx = p->progress_ctx;
    sp.check_cell = phase_check_cell;
    st = am_sweep_run(&prob, &sp, r->cells, r->done, &r->cells_done, err, errlen);
    free(fps);
    if (st) {
        am_phase_result_free(r);
        return st;
    }
    metric_table(p, r);
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
