/*
 * cmd_phase.c -- `amsgd phase`: a grid over momentum mu and delay, one metric per cell with
 * its standard error (stationary error, its ratio to the tau = 0 cell of the same mu,
 * fraction of replicas diverged, time to reach err <= EPS), with the theory's boundaries.
 * The sweep is the library call am_phase_run (studies/am_phase.h); this file parses the
 * flags and writes the completed table in cell order.
 */
#include <stdlib.h>
#include <string.h>

#include "../studies/am_phase.h"
#include "../studies/am_sweep.h"
#include "cli_common.h"
#include "cli_data.h"
#include "commands.h"
#include "sweep_cli.h"

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

// clang-format off
static const cli_opt *const phase_opts[] = {
    &OPT_PRESET,      &OPT_DIM,         &OPT_SPECTRUM, &OPT_DIST,
    &OPT_ROTATE,      &OPT_ETA,         &OPT_SW_INIT,  &OPT_MU_GRID,
    &OPT_TAU_GRID,    &OPT_DELAY_MODEL, &OPT_METRIC,   &OPT_SW_TIME,
    &OPT_SW_GRID,     &OPT_BURNIN,      &OPT_EPS,      &OPT_SW_REPLICAS,
    &OPT_SEED,        &OPT_THREADS,     &OPT_BLOWUP,   &OPT_GAMMA,
    &OPT_BOUND_CONST, &OPT_CHECKPOINT,  &OPT_RESUME,   &OPT_QUIET,
    &OPT_FORMAT,      &OPT_OUTPUT,
    &OPT_DATA, &OPT_PROJECT, NULL};
// clang-format on

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

/* The metric names, in the order of am_phase_metric. */
static const char *const metric_names[] = {"stationary", "ratio", "diverged", "time", NULL};

/* --metric into pp (exits 2 on an unknown name); returns the name. */
static const char *phase_metric(const cli_args *a, am_phase_params *pp)
{
    const char *mname = cli_str(a, "metric");
    int metric = -1;
    for (int q = 0; metric_names[q]; q++)
        if (strcmp(mname, metric_names[q]) == 0) metric = q;
    if (metric < 0)
        cli_usage_error("--metric must be stationary, ratio, diverged or time, got '%s'", mname);
    pp->metric = (am_phase_metric)metric;
    return mname;
}

/* --mu-grid and --tau-grid into pp, checked against the cell and the metric (exits 2). */
static void phase_grids(const cli_args *a, am_phase_params *pp)
{
    size_t nmu, ntau;
    double *mu = sweep_cli_parse_grid("mu-grid", cli_str(a, "mu-grid"), &nmu);
    double *tau = sweep_cli_parse_grid("tau-grid", cli_str(a, "tau-grid"), &ntau);
    for (size_t i = 0; i < nmu; i++)
        if (!(mu[i] >= 0 && mu[i] < 1))
            cli_usage_error("--mu-grid values must be in [0, 1), got %g", mu[i]);
    int has_zero = 0;
    for (size_t j = 0; j < ntau; j++) {
        char err[256];
        if (am_sweep_cell_check(&pp->cell, 0.0, tau[j], err, sizeof err)) {
            if (err[0]) cli_usage_error("--tau-grid: %s", err);
            cli_usage_error("--tau-grid value %g is not a valid %s delay parameter (>= 0%s)",
                            tau[j], cli_str(a, "delay-model"),
                            pp->cell.delay_kind == AM_DELAY_GEOMETRIC ? "" : ", integer");
        }
        has_zero |= tau[j] == 0;
    }
    if (pp->metric == AM_PHASE_RATIO && !has_zero)
        cli_usage_error("--metric ratio needs 0 in --tau-grid, got '%s'", cli_str(a, "tau-grid"));
    if (nmu * ntau > 1000000) cli_usage_error("the grid has more than 1e6 cells");
    pp->mu = mu;
    pp->nmu = nmu;
    pp->tau = tau;
    pp->ntau = ntau;
}

/* The bound on total work and the memory of the ratio's paired error (exits 2). */
static void phase_work_check(const cli_args *a, const am_problem *p, const am_phase_params *pp)
{
    char how[160];
    double steps = pp->cell.horizon / pp->cell.msgd.eta;
    snprintf(how, sizeof how, "%zu x %zu cells x %zu replicas x %.3g steps x d %zu", pp->nmu,
             pp->ntau, pp->cell.replicas, steps, p->dim);
    cli_work_check(
        a, (double)pp->nmu * (double)pp->ntau * (double)pp->cell.replicas * steps * (double)p->dim,
        how);
    /* the ratio's paired error keeps the per-replica summaries of two cells */
    double keep = 2.0 * (double)pp->cell.replicas * AM_MSGD_NSUMMARY * sizeof(double);
    if (pp->metric == AM_PHASE_RATIO && keep > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--replicas %zu with --metric ratio: the paired error keeps %.3g GB of "
                        "per-replica errors, above the limit of %.3g GB",
                        pp->cell.replicas, keep / 1e9, (double)AM_MEMORY_LIMIT / 1e9);
}

/* Every flag of the sweep but --format and --output into pp (exits 2 on bad usage); returns
 * the metric's name. */
static const char *phase_parse(const cli_args *a, const am_problem *p, am_phase_params *pp)
{
    *pp = am_phase_params_default();
    sweep_cli_cell_params(&pp->cell, a, p);
    const char *mname = phase_metric(a, pp);
    phase_grids(a, pp);
    pp->gamma = cli_double(a, "gamma", 0, 1, 1, 0);
    pp->bound_constant = cli_double(a, "bound-constant", 0, 1e300, 1, 0);
    phase_work_check(a, p, pp);
    sweep_cli_checkpoint(a, &pp->checkpoint, &pp->resume);
    return mname;
}

/* The JSON params (every option as resolved) and the results. */
static json_t *phase_json(const cli_args *a, const am_problem *p, const am_phase_params *pp,
                          const char *mname, const am_phase_result *r)
{
    const size_t nmu = pp->nmu, ntau = pp->ntau;
    json_t *params = json_object();
    sweep_cli_params_json(params, &pp->cell);
    cli_params_data(params, a, p);
    json_object_set_new(params, "mu_grid", cli_json_doubles(pp->mu, nmu));
    json_object_set_new(params, "tau_grid", cli_json_doubles(pp->tau, ntau));
    json_object_set_new(params, "preset", json_string(cli_str(a, "preset")));
    json_object_set_new(params, "metric", json_string(mname));
    json_object_set_new(params, "gamma", json_real(pp->gamma));
    json_object_set_new(params, "bound_constant", json_real(pp->bound_constant));
    json_t *root = cli_json_root("phase", params);
    json_object_set_new(root, "mu", cli_json_doubles(r->mu, nmu));
    json_object_set_new(root, "tau", cli_json_doubles(r->tau, ntau));
    json_object_set_new(root, "metric_name", json_string(mname));
    json_t *jm = json_array(), *js = json_array(), *jd = json_array(), *jr = json_array();
    for (size_t i = 0; i < nmu; i++) {
        json_array_append_new(jm, cli_json_doubles(r->metric_value + i * ntau, ntau));
        json_array_append_new(js, cli_json_doubles(r->metric_sem + i * ntau, ntau));
        json_array_append_new(jd, cli_json_doubles(r->diverged_fraction + i * ntau, ntau));
        json_t *row = json_array();
        for (size_t j = 0; j < ntau; j++)
            json_array_append_new(row, json_real(r->reached_fraction[i * ntau + j]));
        json_array_append_new(jr, row);
    }
    json_object_set_new(root, "metric", jm);
    json_object_set_new(root, "metric_sem", js);
    json_object_set_new(root, "diverged_fraction", jd);
    json_object_set_new(root, "reached_fraction", jr);
    json_object_set_new(root, "boundary_linear", cli_json_doubles(r->boundary_linear, nmu));
    json_object_set_new(root, "boundary_dde", cli_json_doubles(r->boundary_dde, nmu));
    json_object_set_new(root, "boundary_paper", cli_json_doubles(r->boundary_paper, nmu));
    json_object_set_new(root, "implicit_momentum", cli_json_doubles(r->implicit_momentum, ntau));
    return root;
}

static void phase_csv(FILE *f, size_t ntau, const am_phase_result *r)
{
    fputs("mu,tau,metric,metric_sem,diverged_fraction,boundary_linear,boundary_dde,"
          "boundary_paper,implicit_momentum,reached_fraction\n",
          f);
    for (size_t c = 0; c < r->ncells; c++) {
        size_t i = c / ntau, j = c % ntau;
        double row[] = {r->mu[i],
                        r->tau[j],
                        r->metric_value[c],
                        r->metric_sem[c],
                        r->diverged_fraction[c],
                        r->boundary_linear[i],
                        r->boundary_dde[i],
                        r->boundary_paper[i],
                        r->implicit_momentum[j],
                        r->reached_fraction[c]};
        for (size_t q = 0; q < sizeof row / sizeof *row; q++) {
            if (q) fputc(',', f);
            cli_csv_double(f, row[q]);
        }
        fputc('\n', f);
    }
}

int cmd_phase(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "phase",
              "Sweep a grid of momentum mu and delay, one metric per cell with its standard\n"
              "error, next to the paper's delay bound, the linear-stability boundary of the\n"
              "delayed heavy-ball recursion and its delay-equation approximation.",
              phase_opts, argc, argv);
    am_problem *p = cli_data_problem(&a); /* before the preset's synthetic problem */
    apply_preset(&a);
    if (!p) p = cli_problem(&a);
    am_phase_params pp;
    const char *mname = phase_parse(&a, p, &pp);
    int json = cli_json(&a);
    int progress = sweep_cli_show_progress(cli_flag(&a, "quiet"));
    char err[512] = "";
    if (am_phase_params_check(&pp, err, sizeof err)) cli_usage_error("%s", err);
    if (progress) {
        pp.progress = sweep_cli_progress_print;
        pp.progress_ctx = stderr;
    }

    pp.cancel = sweep_cli_sigint_install();
    am_phase_result *r = NULL;
    am_status st = am_phase_run(&pp, &r, err, sizeof err);
    sweep_cli_sigint_restore();
    int status = sweep_cli_status(st, err, "phase", "cells", r ? r->cells_done : 0,
                                  pp.nmu * pp.ntau, pp.checkpoint, progress);
    if (!st && am_sweep_rank() == 0) {
        cli_out out;
        FILE *f = cli_out_begin(&out, &a);
        if (json)
            cli_out_json(f, phase_json(&a, p, &pp, mname, r));
        else
            phase_csv(f, pp.ntau, r);
        cli_out_commit(&out);
    }
    am_phase_result_free(r);
    free((void *)pp.mu);
    free((void *)pp.tau);
    am_problem_free(p);
    return st || am_sweep_rank() != 0 ? status : 0;
}
