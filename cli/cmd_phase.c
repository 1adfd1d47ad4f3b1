/*
 * cmd_phase.c -- `amsgd phase`: a grid over momentum mu and delay, one metric per cell with
 * its standard error (stationary error, its ratio to the tau = 0 cell of the same mu,
 * fraction of replicas diverged, time to reach err <= EPS), with the theory's boundaries.
 * Cells are run through the checkpointed (and, in the MPI build, distributed) sweep of
 * am_sweep.h; the output is written from the completed table in cell order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_sweep.h"
#include "cli_common.h"
#include "commands.h"
#include "sweep_cell.h"
#include "sweep_overlay.h"

static const cli_opt OPT_PRESET = {"preset", "NAME", "none",
                                   "liu2018: the streaming-PCA experiment of Liu et al. (2018)"};
static const cli_opt OPT_MU_GRID = {"mu-grid", "SPEC", "0:0.95:20",
                                    "momenta: A:B:N (N values from A to B) or a comma list"};
static const cli_opt OPT_TAU_GRID = {"tau-grid", "SPEC", "0:200:21",
                                     "delay parameters (tau, S or MEAN): A:B:N or a comma list"};
static const cli_opt OPT_METRIC = {
    "metric", "NAME", "stationary",
    "stationary, ratio (to tau = 0), diverged, time (to err <= EPS)"};
static const cli_opt OPT_CHECKPOINT = {"checkpoint", "FILE", NULL,
                                       "append every finished cell to FILE (fsync'd)"};
static const cli_opt OPT_RESUME = {"resume", NULL, NULL,
                                   "skip the cells already in the --checkpoint file"};

static const cli_opt *const phase_opts[] = {
    &OPT_PRESET,      &OPT_DIM,         &OPT_SPECTRUM, &OPT_DIST,
    &OPT_ROTATE,      &OPT_ETA,         &OPT_SW_INIT,  &OPT_MU_GRID,
    &OPT_TAU_GRID,    &OPT_DELAY_MODEL, &OPT_METRIC,   &OPT_SW_TIME,
    &OPT_SW_GRID,     &OPT_BURNIN,      &OPT_EPS,      &OPT_SW_REPLICAS,
    &OPT_SEED,        &OPT_THREADS,     &OPT_BLOWUP,   &OPT_GAMMA,
    &OPT_BOUND_CONST, &OPT_CHECKPOINT,  &OPT_RESUME,   &OPT_QUIET,
    &OPT_FORMAT,      &OPT_OUTPUT,      NULL};

/* The liu2018 preset: values taken for the flags not given on the command line. */
static const char *const liu2018[][2] = {{"dim", "4"},
                                         {"spectrum", "4,3,2,1"},
                                         {"dist", "gaussian"},
                                         {"eta", "5e-4"},
                                         {"init", "e:1"},
                                         {"mu-grid", "0.7,0.8,0.85,0.9,0.95"},
                                         {"tau-grid", "0:160:17"},
                                         {"delay-model", "const"},
                                         {"metric", "stationary"},
                                         {"time", "20"},
                                         {"grid", "101"},
                                         {"burnin", "0.5"},
                                         {"replicas", "200"},
                                         {NULL, NULL}};

static void apply_preset(cli_args *a)
{
    const char *name = cli_str(a, "preset");
    if (strcmp(name, "none") == 0) return;
    if (strcmp(name, "liu2018") != 0)
        cli_usage_error("--preset must be none or liu2018, got '%s'", name);
    for (size_t i = 0; liu2018[i][0]; i++)
        for (int k = 0; a->opts[k]; k++)
            if (strcmp(a->opts[k]->name, liu2018[i][0]) == 0 && !a->given[k]) {
                a->values[k] = liu2018[i][1];
                a->given[k] = 1;
            }
}

typedef struct {
    const sweep_setup *s;
    const double *mu, *tau;
    size_t ntau;
} phase_ctx;

static am_status phase_cell(void *ctx, size_t cell, double *v)
{
    const phase_ctx *c = ctx;
    return sweep_cell_run(c->s, c->mu[cell / c->ntau], c->tau[cell % c->ntau], v, NULL);
}

enum { M_STATIONARY, M_RATIO, M_DIVERGED, M_TIME };

int cmd_phase(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "phase",
              "Sweep a grid of momentum mu and delay, one metric per cell with its standard\n"
              "error, next to the paper's delay bound, the linear-stability boundary of the\n"
              "delayed heavy-ball recursion and its delay-equation approximation.",
              phase_opts, argc, argv);
    apply_preset(&a);
    am_problem *p = cli_problem(&a);
    sweep_setup s;
    sweep_setup_init(&s, &a, p);
    const char *mname = cli_str(&a, "metric");
    int metric = strcmp(mname, "stationary") == 0 ? M_STATIONARY
                 : strcmp(mname, "ratio") == 0    ? M_RATIO
                 : strcmp(mname, "diverged") == 0 ? M_DIVERGED
                 : strcmp(mname, "time") == 0     ? M_TIME
                                                  : -1;
    if (metric < 0)
        cli_usage_error("--metric must be stationary, ratio, diverged or time, got '%s'", mname);
    size_t nmu, ntau;
    double *mu = sweep_parse_grid(&a, "mu-grid", cli_str(&a, "mu-grid"), &nmu);
    double *tau = sweep_parse_grid(&a, "tau-grid", cli_str(&a, "tau-grid"), &ntau);
    for (size_t i = 0; i < nmu; i++)
        if (!(mu[i] >= 0 && mu[i] < 1))
            cli_usage_error("--mu-grid values must be in [0, 1), got %g", mu[i]);
    for (size_t j = 0; j < ntau; j++) {
        am_delay d;
        if (tau[j] < 0 || sweep_delay(&s, tau[j], &d))
            cli_usage_error("--tau-grid value %g is not a valid %s delay parameter (>= 0%s)",
                            tau[j], cli_str(&a, "delay-model"),
                            s.kind == AM_DELAY_GEOMETRIC ? "" : ", integer");
        am_msgd_params m = s.base;
        m.delay = d;
        char err[256];
        if (am_msgd_params_check(p, &m, err, sizeof err)) cli_usage_error("--tau-grid: %s", err);
    }
    size_t j0 = ntau;
    for (size_t j = 0; j < ntau; j++)
        if (tau[j] == 0) j0 = j;
    if (metric == M_RATIO && j0 == ntau)
        cli_usage_error("--metric ratio needs 0 in --tau-grid, got '%s'", cli_str(&a, "tau-grid"));
    if (nmu * ntau > 1000000) cli_usage_error("the grid has more than 1e6 cells");
    double gamma = cli_double(&a, "gamma", 0, 1, 1, 0);
    double pconst = cli_double(&a, "bound-constant", 0, 1e300, 1, 0);
    const char *ckpt = cli_str(&a, "checkpoint");
    int resume = cli_flag(&a, "resume");
    if (resume && !ckpt) cli_usage_error("--resume needs --checkpoint FILE");
    int json = cli_json(&a);
    int quiet = cli_flag(&a, "quiet");

    /* The fingerprint: every parameter that changes a cell's values. */
    json_t *fp = json_object();
    sweep_params_json(fp, &s);
    json_object_set_new(fp, "mu_grid", cli_json_doubles(mu, nmu));
    json_object_set_new(fp, "tau_grid", cli_json_doubles(tau, ntau));
    char *fps = json_dumps(fp, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));

    phase_ctx ctx = {&s, mu, tau, ntau};
    am_sweep_problem prob = {nmu * ntau, SWEEP_NVALUES, phase_cell, &ctx};
    double *values = malloc(nmu * ntau * SWEEP_NVALUES * sizeof *values);
    unsigned char *done = malloc(nmu * ntau);
    if (!values || !done) cli_runtime_error("out of memory");
    int complete = sweep_run_cli(&prob, ckpt, resume, fps, quiet, "phase", "cells", values, done);
    if (am_sweep_rank() != 0 || !complete) {
        int status = complete ? 0 : am_sweep_rank() == 0 ? 130 : 0;
        free(values);
        free(done);
        free(fps);
        json_decref(fp);
        free(mu);
        free(tau);
        sweep_setup_free(&s);
        am_problem_free(p);
        return status;
    }

    /* metric table */
    size_t n = nmu * ntau;
    double *met = malloc(n * sizeof *met), *sem = malloc(n * sizeof *sem);
    double *divf = malloc(n * sizeof *divf);
    for (size_t c = 0; c < n; c++) {
        const double *v = values + c * SWEEP_NVALUES;
        divf[c] = v[SV_DIVERGED];
        double R = (double)s.ep.replicas;
        switch (metric) {
        case M_STATIONARY:
            met[c] = v[SV_ERR];
            sem[c] = v[SV_ERR_SEM];
            break;
        case M_RATIO: {
            const double *b = values + ((c / ntau) * ntau + j0) * SWEEP_NVALUES;
            met[c] = v[SV_ERR] / b[SV_ERR];
            double r1 = v[SV_ERR_SEM] / v[SV_ERR], r0 = b[SV_ERR_SEM] / b[SV_ERR];
            sem[c] = c % ntau == j0 ? 0.0 : fabs(met[c]) * sqrt(r1 * r1 + r0 * r0);
            break;
        }
        case M_DIVERGED:
            met[c] = v[SV_DIVERGED];
            sem[c] = sqrt(met[c] * (1 - met[c]) / R);
            break;
        default:
            met[c] = v[SV_TIME];
            sem[c] = v[SV_TIME_SEM];
        }
    }
    sweep_overlays ov;
    sweep_overlays_compute(&ov, &s, mu, nmu, tau, ntau, gamma, pconst);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (json) {
        json_t *params = json_deep_copy(fp);
        json_object_set_new(params, "preset", json_string(cli_str(&a, "preset")));
        json_object_set_new(params, "metric", json_string(mname));
        json_object_set_new(params, "gamma", json_real(gamma));
        json_object_set_new(params, "bound_constant", json_real(pconst));
        json_t *root = cli_json_root("phase", params);
        json_object_set_new(root, "mu", cli_json_doubles(mu, nmu));
        json_object_set_new(root, "tau", cli_json_doubles(tau, ntau));
        json_object_set_new(root, "metric_name", json_string(mname));
        json_t *jm = json_array(), *js = json_array(), *jd = json_array(), *jr = json_array();
        for (size_t i = 0; i < nmu; i++) {
            json_array_append_new(jm, cli_json_doubles(met + i * ntau, ntau));
            json_array_append_new(js, cli_json_doubles(sem + i * ntau, ntau));
            json_array_append_new(jd, cli_json_doubles(divf + i * ntau, ntau));
            json_t *row = json_array();
            for (size_t j = 0; j < ntau; j++)
                json_array_append_new(
                    row, json_real(values[(i * ntau + j) * SWEEP_NVALUES + SV_REACHED]));
            json_array_append_new(jr, row);
        }
        json_object_set_new(root, "metric", jm);
        json_object_set_new(root, "metric_sem", js);
        json_object_set_new(root, "diverged_fraction", jd);
        json_object_set_new(root, "reached_fraction", jr);
        sweep_overlays_json(root, &ov, nmu, ntau);
        cli_out_json(f, root);
    } else {
        fputs("mu,tau,metric,metric_sem,diverged_fraction,boundary_linear,boundary_dde,"
              "boundary_paper,implicit_momentum\n",
              f);
        for (size_t c = 0; c < n; c++) {
            size_t i = c / ntau, j = c % ntau;
            double row[] = {mu[i],        tau[j],    met[c],      sem[c],           divf[c],
                            ov.linear[i], ov.dde[i], ov.paper[i], ov.implicit_mu[j]};
            for (size_t q = 0; q < sizeof row / sizeof *row; q++) {
                if (q) fputc(',', f);
                cli_csv_double(f, row[q]);
            }
            fputc('\n', f);
        }
    }
    cli_out_commit(&out);
    sweep_overlays_free(&ov);
    free(met);
    free(sem);
    free(divf);
    free(values);
    free(done);
    free(fps);
    json_decref(fp);
    free(mu);
    free(tau);
    sweep_setup_free(&s);
    am_problem_free(p);
    return 0;
}
