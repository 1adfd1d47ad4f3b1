/*
 * cmd_knee.c -- `amsgd knee`: for each momentum mu, the critical delay tau_c(mu), where the
 * stationary error crosses F times its tau = 0 value or more than a set fraction of the
 * replicas diverges (located between the bracketing integer delays by interpolation, the
 * bracket written beside it), with its bootstrap uncertainty and its
 * spread over seeds, and the exponent p of tau_c ∝ (1-mu)^p with a confidence interval, next to the
 * paper's p = 2 and the linear-stability prediction. The search is the library call am_knee_run
 * (studies/am_knee.h); this file parses the flags and writes the table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_knee.h"
#include "../studies/am_sweep.h"
#include "cli_common.h"
#include "cli_data.h"
#include "commands.h"
#include "sweep_cli.h"

static const cli_opt OPT_MUS = {"mus", "LIST", "0.5,0.7,0.8,0.85,0.9,0.95",
                                "momenta: comma list or A:B:N"};
static const cli_opt OPT_FACTOR = {"factor", "FACTOR", "2",
                                   "tau_c: where the stationary error crosses FACTOR times the "
                                   "tau = 0 value (or more than --diverged-max diverged), "
                                   "interpolated between the bracketing delays"};
static const cli_opt OPT_K_DELAY_MODEL = {"delay-model", "KIND", "const",
                                          "delay axis: const (tau) or uniform (S)"};
static const cli_opt OPT_TAU_MAX = {"tau-max", "N", "4096", "largest delay searched"};
static const cli_opt OPT_BOOTSTRAP = {"bootstrap", "N", "200", "bootstrap replicates"};
static const cli_opt OPT_REFINE = {"refine", "N", "3",
                                   "also evaluate the N delays on each side of tau_c, so the "
                                   "bootstrap's brackets are one delay wide there"};
static const cli_opt OPT_DIVERGED_MAX = {"diverged-max", "FRAC", "0.05",
                                         "a delay is also critical when more than the fraction "
                                         "FRAC of its replicas diverged"};
static const cli_opt OPT_SEEDS = {"seeds", "N", "1",
                                  "run N independent seeds (seed, seed+1, ...): tau_c_seeds, "
                                  "tau_c_mean, tau_c_sd, and the exponent's t interval over seeds"};
static const cli_opt OPT_K_CHECKPOINT = {"checkpoint", "FILE", NULL,
                                         "append every finished momentum to FILE (fsync'd)"};
static const cli_opt OPT_K_RESUME = {"resume", NULL, NULL,
                                     "skip the momenta already in the --checkpoint file"};

// clang-format off
static const cli_opt *const knee_opts[] = {&OPT_DIM,
                                           &OPT_SPECTRUM,
                                           &OPT_DIST,
                                           &OPT_ROTATE,
                                           &OPT_ETA,
                                           &OPT_SW_INIT,
                                           &OPT_MUS,
                                           &OPT_FACTOR,
                                           &OPT_TAU_MAX,
                                           &OPT_K_DELAY_MODEL,
                                           &OPT_SW_TIME,
                                           &OPT_SW_GRID,
                                           &OPT_BURNIN,
                                           &OPT_SW_REPLICAS,
                                           &OPT_BOOTSTRAP,
                                           &OPT_REFINE,
                                           &OPT_DIVERGED_MAX,
                                           &OPT_SEEDS,
                                           &OPT_SEED,
                                           &OPT_THREADS,
                                           &OPT_BLOWUP,
                                           &OPT_GAMMA,
                                           &OPT_BOUND_CONST,
                                           &OPT_K_CHECKPOINT,
                                           &OPT_K_RESUME,
                                           &OPT_QUIET,
                                           &OPT_FORMAT,
                                           &OPT_OUTPUT,
                                           &OPT_DATA,
                                           &OPT_PROJECT,
                                           NULL};
// clang-format on

/* Every flag of the search but --format and --output into kp (exits 2 on bad usage); err
 * receives the cell check's message. */
static void knee_parse(const cli_args *a, const am_problem *p, am_knee_params *kp, char *err,
                       size_t errlen)
{
    *kp = am_knee_params_default();
    sweep_cli_cell_params(&kp->cell, a, p);
    size_t nmu;
    double *mu = sweep_cli_parse_grid("mus", cli_str(a, "mus"), &nmu);
    for (size_t i = 0; i < nmu; i++)
        if (!(mu[i] >= 0 && mu[i] < 1))
            cli_usage_error("--mus values must be in [0, 1), got %g", mu[i]);
    kp->mu = mu;
    kp->nmu = nmu;
    kp->factor = cli_double(a, "factor", 1, 1e12, 1, 0);
    kp->tau_max = (uint64_t)cli_int(a, "tau-max", 1, 1000000);
    if (kp->cell.delay_kind == AM_DELAY_GEOMETRIC)
        cli_usage_error("--delay-model must be const or uniform "
                        "for knee (integer delays), got 'geometric'");
    if (am_sweep_cell_check(&kp->cell, 0.0, (double)kp->tau_max, err, errlen))
        cli_usage_error("--tau-max %llu is too large a delay", (unsigned long long)kp->tau_max);
    kp->bootstrap = (size_t)cli_int(a, "bootstrap", 0, 100000);
    kp->refine = (uint64_t)cli_int(a, "refine", 0, 1000);
    kp->diverged_max = cli_double(a, "diverged-max", 0, 1, 0, 1);
    kp->seeds = (size_t)cli_int(a, "seeds", 1, 10000);
    kp->gamma = cli_double(a, "gamma", 0, 1, 1, 0);
    kp->bound_constant = cli_double(a, "bound-constant", 0, 1e300, 1, 0);
    sweep_cli_checkpoint(a, &kp->checkpoint, &kp->resume);
}

/* The checks after --format: the parameters and the bound on total work (exits 2). */
static void knee_check(const cli_args *a, const am_problem *p, const am_knee_params *kp, char *err,
                       size_t errlen)
{
    am_status cst = am_knee_params_check(kp, err, errlen);
    if (cst == AM_ENOMEM) cli_usage_error("--replicas %zu: %s", kp->cell.replicas, err);
    if (cst) cli_usage_error("%s", err);
    /* at most this many delays are evaluated per momentum (am_knee_memory's count) */
    double evals =
        am_knee_memory(kp) / ((double)kp->cell.replicas * AM_MSGD_NSUMMARY * sizeof(double));
    double steps = kp->cell.horizon / kp->cell.msgd.eta;
    char how[192];
    snprintf(how, sizeof how,
             "%zu momenta x %zu seeds x %.0f delays x %zu replicas x %.3g steps x d %zu", kp->nmu,
             kp->seeds, evals, kp->cell.replicas, steps, p->dim);
    cli_work_check(a,
                   (double)kp->nmu * (double)kp->seeds * evals * (double)kp->cell.replicas * steps *
                       (double)p->dim,
                   how);
}

/* A censored knee or an undefined exponent is a result, said once on stderr. */
static void knee_warnings(int json, const am_knee_params *kp, const am_knee_result *r)
{
    const char *none = json ? "null" : "nan";
    for (size_t i = 0; i < kp->nmu; i++)
        if (!isfinite(r->tau_c[i]))
            fprintf(stderr,
                    "amsgd: warning: no knee of mu = %g up to --tau-max %llu (its tau_c is %s); "
                    "raise --tau-max\n",
                    kp->mu[i], (unsigned long long)kp->tau_max, none);
    if (kp->nmu >= 2 && !isfinite(r->exponent))
        fprintf(stderr,
                "amsgd: warning: the exponent is %s: its fit needs the knees of two momenta at "
                "least\n",
                none);
}

/* The JSON params: every option as resolved. */
static json_t *knee_json_params(const cli_args *a, const am_problem *p, const am_knee_params *kp)
{
    json_t *params = json_object();
    sweep_cli_params_json(params, &kp->cell);
    cli_params_data(params, a, p);
    json_object_set_new(params, "mus", cli_json_doubles(kp->mu, kp->nmu));
    json_object_set_new(params, "factor", json_real(kp->factor));
    json_object_set_new(params, "tau_max", json_integer((json_int_t)kp->tau_max));
    json_object_set_new(params, "bootstrap", json_integer((json_int_t)kp->bootstrap));
    json_object_set_new(params, "refine", json_integer((json_int_t)kp->refine));
    json_object_set_new(params, "diverged_max", json_real(kp->diverged_max));
    json_object_set_new(params, "seeds", json_integer((json_int_t)kp->seeds));
    json_object_set_new(params, "gamma", json_real(kp->gamma));
    json_object_set_new(params, "bound_constant", json_real(kp->bound_constant));
    return params;
}

/* The knees, their spread over seeds and the exponents under root. */
static void knee_json_results(json_t *root, const am_knee_params *kp, const am_knee_result *r)
{
    const size_t nmu = kp->nmu;
    json_t *jci = json_array(), *jbr = json_array(), *jev = json_array();
    for (size_t i = 0; i < nmu; i++) {
        json_t *pair = json_array();
        json_array_append_new(pair, cli_json_number(r->tau_c_lo[i]));
        json_array_append_new(pair, cli_json_number(r->tau_c_hi[i]));
        json_array_append_new(jci, pair);
        pair = json_array();
        json_array_append_new(pair, cli_json_number(r->tau_c_bracket_lo[i]));
        json_array_append_new(pair, cli_json_number(r->tau_c_bracket_hi[i]));
        json_array_append_new(jbr, pair);
        json_array_append_new(jev, json_integer((json_int_t)r->cells_evaluated[i]));
    }
    json_object_set_new(root, "mu", cli_json_doubles(r->mu, nmu));
    json_object_set_new(root, "tau_c", cli_json_doubles(r->tau_c, nmu));
    json_object_set_new(root, "tau_c_bracket", jbr);
    json_object_set_new(root, "tau_c_sem", cli_json_doubles(r->tau_c_sem, nmu));
    json_object_set_new(root, "tau_c_ci", jci);
    json_object_set_new(root, "tau_c_linear", cli_json_doubles(r->tau_c_linear, nmu));
    json_object_set_new(root, "tau_c_dde", cli_json_doubles(r->tau_c_dde, nmu));
    json_object_set_new(root, "tau_bound_paper", cli_json_doubles(r->tau_bound_paper, nmu));
    json_object_set_new(root, "err_tau0", cli_json_doubles(r->err_tau0, nmu));
    json_object_set_new(root, "err_at_tau_c", cli_json_doubles(r->err_at_tau_c, nmu));
    json_object_set_new(root, "cells_evaluated", jev);
    json_t *jseeds = json_array();
    for (size_t i = 0; i < nmu; i++)
        json_array_append_new(jseeds, cli_json_doubles(r->tau_c_seeds + i * kp->seeds, kp->seeds));
    json_object_set_new(root, "tau_c_seeds", jseeds);
    json_object_set_new(root, "tau_c_mean", cli_json_doubles(r->tau_c_mean, nmu));
    json_object_set_new(root, "tau_c_sd", cli_json_doubles(r->tau_c_sd, nmu));
    json_object_set_new(root, "exponent_seeds", cli_json_doubles(r->exponent_seeds, kp->seeds));
    json_object_set_new(root, "exponent", cli_json_number(r->exponent));
    json_t *pci = json_array();
    json_array_append_new(pci, cli_json_number(r->exponent_lo));
    json_array_append_new(pci, cli_json_number(r->exponent_hi));
    json_object_set_new(root, "exponent_ci", pci);
    json_object_set_new(root, "exponent_paper", json_real(r->exponent_paper));
    json_object_set_new(root, "exponent_linear", cli_json_number(r->exponent_linear));
    json_object_set_new(root, "exponent_dde", cli_json_number(r->exponent_dde));
}

static void knee_csv(FILE *f, size_t nmu, const am_knee_result *r)
{
    fputs("mu,one_minus_mu,tau_c,tau_c_sem,tau_c_lo,tau_c_hi,tau_c_fit,tau_c_linear,"
          "tau_c_dde,tau_bound_paper,exponent,exponent_lo,exponent_hi,tau_c_bracket_lo,"
          "tau_c_bracket_hi\n",
          f);
    for (size_t i = 0; i < nmu; i++) {
        double row[] = {
            r->mu[i],        r->one_minus_mu[i],     r->tau_c[i],           r->tau_c_sem[i],
            r->tau_c_lo[i],  r->tau_c_hi[i],         r->tau_c_fit[i],       r->tau_c_linear[i],
            r->tau_c_dde[i], r->tau_bound_paper[i],  r->exponent,           r->exponent_lo,
            r->exponent_hi,  r->tau_c_bracket_lo[i], r->tau_c_bracket_hi[i]};
        for (size_t q = 0; q < sizeof row / sizeof *row; q++) {
            if (q) fputc(',', f);
            cli_csv_double(f, row[q]);
        }
        fputc('\n', f);
    }
}

/* Writes the result (CSV or JSON) through --output. */
static void knee_write(const cli_args *a, int json, const am_problem *p, const am_knee_params *kp,
                       const am_knee_result *r)
{
    cli_out out;
    FILE *f = cli_out_begin(&out, a);
    if (json) {
        json_t *root = cli_json_root("knee", knee_json_params(a, p, kp));
        knee_json_results(root, kp, r);
        cli_out_json(f, root);
    } else {
        knee_csv(f, kp->nmu, r);
    }
    cli_out_commit(&out);
}

int cmd_knee(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "knee",
              "Find the critical delay tau_c(mu) for each momentum (bracketing, integer\n"
              "bisection, then interpolation of the crossing between the bracketing delays) and\n"
              "fit the exponent p of tau_c ∝ (1-mu)^p with a bootstrap confidence interval,\n"
              "next to the paper's p = 2 and linear stability.",
              knee_opts, argc, argv);
    am_problem *p = cli_data_problem(&a);
    if (!p) p = cli_problem(&a);
    am_knee_params kp;
    char err[512] = "";
    knee_parse(&a, p, &kp, err, sizeof err);
    int json = cli_json(&a);
    int progress = sweep_cli_show_progress(cli_flag(&a, "quiet"));
    knee_check(&a, p, &kp, err, sizeof err);
    if (progress) {
        kp.progress = sweep_cli_progress_print;
        kp.progress_ctx = stderr;
    }

    kp.cancel = sweep_cli_sigint_install();
    am_knee_result *r = NULL;
    am_status st = am_knee_run(&kp, &r, err, sizeof err);
    sweep_cli_sigint_restore();
    int status = sweep_cli_status(st, err, "knee", "momenta", r ? r->cells_done : 0, kp.nmu,
                                  kp.checkpoint, progress);
    if (!st && am_sweep_rank() == 0) {
        knee_warnings(json, &kp, r);
        knee_write(&a, json, p, &kp, r);
    }
    am_knee_result_free(r);
    free((void *)kp.mu);
    am_problem_free(p);
    return st || am_sweep_rank() != 0 ? status : 0;
}
