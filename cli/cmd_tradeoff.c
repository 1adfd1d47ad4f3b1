/*
 * cmd_tradeoff.c -- `amsgd tradeoff`: Liu et al.'s momentum-asynchrony experiment on a network
 * and a real data set (studies/am_tradeoff.h): test accuracy after a fixed budget of updates of
 * asynchronous momentum SGD per worker count P and momentum mu, over seeds, and the best
 * momentum per P with its bootstrap interval. This file parses, calls am_tradeoff_run and
 * writes the table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../studies/am_sweep.h"
#include "../studies/am_tradeoff.h"
#include "cli_common.h"
#include "commands.h"
#include "nn_cli.h"
#include "sweep_cli.h"

static const cli_opt OPT_TPRESET = {
    "preset", "NAME", "none",
    "liu2018-dnn: P 1,2,4,8 x mu 0.1..0.9 x 10 seeds, mlp:128, 10000 updates (docs/tradeoff.md)"};
static const cli_opt OPT_TQUICK = {
    "quick", NULL, NULL, "the same grid at a small budget (mlp:32, 1000 updates; about a minute)"};
static const cli_opt OPT_TMODEL = {
    "model", "SPEC", "mlp:128",
    "network: mlr, mlp:W1,W2,... (hidden widths) or cnn (LeNet-like; images only)"};
static const cli_opt OPT_TWORKERS = {"workers", "LIST", "1,2,4,8",
                                     "worker counts P, increasing (P = 1: synchronous)"};
static const cli_opt OPT_TMUS = {"mus", "LIST", "0.1,0.3,0.5,0.7,0.9",
                                 "momenta mu in [0, 1), increasing"};
static const cli_opt OPT_TLR = {"lr", "E", "0.01", "step eta (see --step-rule)"};
static const cli_opt OPT_TSTEP = {
    "step-rule", "NAME", "fixed",
    "fixed: step eta for every mu (the paper's protocol; effective step eta/(1-mu)); "
    "effective: step eta (1-mu), the same effective step eta for every mu"};
static const cli_opt OPT_TBATCH = {"batch", "N", "32", "rows per minibatch gradient"};
static const cli_opt OPT_TBUDGET = {"budget", "N", "5000",
                                    "updates (minibatch gradients applied) per run"};
static const cli_opt OPT_TRUNTIME = {"runtime", "DIST", "exp:1",
                                     "learner runtime of the parameter-server simulator: exp:RATE, "
                                     "shiftexp:DELTA:RATE, pareto:ALPHA:SCALE, ..."};
static const cli_opt OPT_TEVAL = {"eval-rows", "N", "0",
                                  "test rows of the final accuracy (0 = the whole test set)"};
static const cli_opt OPT_TSEEDS = {"seeds", "N", "3", "independent runs per (P, mu)"};
static const cli_opt OPT_TRESAMPLES = {"resamples", "N", "2000",
                                       "bootstrap draws of the best momentum"};
static const cli_opt OPT_TCHECKPOINT = {"checkpoint", "FILE", NULL,
                                        "append every finished (P, mu) cell to FILE (fsync'd)"};
static const cli_opt OPT_TRESUME = {"resume", NULL, NULL,
                                    "skip the cells already in the --checkpoint file"};

static const cli_opt *const tradeoff_opts[] = {&OPT_TPRESET,
                                               &OPT_TQUICK,
                                               &OPT_TMODEL,
                                               &OPT_NN_DATA,
                                               &OPT_NN_INPUTS,
                                               &OPT_TWORKERS,
                                               &OPT_TMUS,
                                               &OPT_TLR,
                                               &OPT_TSTEP,
                                               &OPT_TBATCH,
                                               &OPT_TBUDGET,
                                               &OPT_TRUNTIME,
                                               &OPT_TEVAL,
                                               &OPT_TSEEDS,
                                               &OPT_TRESAMPLES,
                                               &OPT_SEED,
                                               &OPT_THREADS,
                                               &OPT_TCHECKPOINT,
                                               &OPT_TRESUME,
                                               &OPT_QUIET,
                                               &OPT_FORMAT,
                                               &OPT_OUTPUT,
                                               NULL};

/* Values taken for the flags not given on the command line. */
static const char *const preset_liu[][2] = {
    {"model", "mlp:128"}, {"workers", "1,2,4,8"}, {"mus", "0.1,0.3,0.5,0.7,0.9"},
    {"lr", "0.01"},       {"step-rule", "fixed"}, {"batch", "32"},
    {"budget", "10000"},  {"runtime", "exp:1"},   {"seeds", "10"},
    {NULL, NULL}};
static const char *const preset_quick[][2] = {
    {"model", "mlp:32"}, {"budget", "1000"}, {"seeds", "6"}, {NULL, NULL}};

static void apply_table(cli_args *a, const char *const (*t)[2])
{
    for (size_t i = 0; t[i][0]; i++)
        for (int k = 0; a->opts[k]; k++)
            if (strcmp(a->opts[k]->name, t[i][0]) == 0 && !a->given[k]) {
                a->values[k] = t[i][1];
                a->given[k] = 1;
            }
}

/* --workers (increasing integers) and --mus (increasing, in [0, 1)) into the sweep. */
static void tradeoff_lists(const cli_args *a, am_tradeoff_sweep *sw)
{
    size_t nw, nmu;
    double *wd = cli_double_list(a, "workers", &nw);
    size_t *workers = cli_keep(malloc(nw * sizeof *workers));
    if (!workers) cli_runtime_error("out of memory");
    for (size_t i = 0; i < nw; i++) {
        if (!cli_is_integer(wd[i], 1, 4096) || (i > 0 && wd[i] <= wd[i - 1]))
            cli_usage_error("--workers must be increasing integers in [1, 4096], got '%s'",
                            cli_str(a, "workers"));
        workers[i] = (size_t)wd[i];
    }
    free(wd);
    double *mus = cli_double_list(a, "mus", &nmu);
    for (size_t i = 0; i < nmu; i++)
        if (!(mus[i] >= 0 && mus[i] < 1) || (i > 0 && !(mus[i] > mus[i - 1])))
            cli_usage_error("--mus must be increasing values in [0, 1), got '%s'",
                            cli_str(a, "mus"));
    if (nw * nmu > 100000) cli_usage_error("--workers x --mus has more than 1e5 cells");
    sw->workers = workers;
    sw->nworkers = nw;
    sw->mu = mus;
    sw->nmu = nmu;
}

/* Every flag into sw (the preset's and --quick's values applied first); exits 2 on bad
 * usage. */
static void tradeoff_parse(cli_args *a, am_tradeoff_sweep *sw)
{
    const char *preset = cli_str(a, "preset");
    if (cli_flag(a, "quick")) apply_table(a, preset_quick);
    if (strcmp(preset, "liu2018-dnn") == 0)
        apply_table(a, preset_liu);
    else if (strcmp(preset, "none") != 0)
        cli_usage_error("--preset must be none or liu2018-dnn, got '%s'", preset);
    *sw = am_tradeoff_sweep_default();
    tradeoff_lists(a, sw);
    char err[1024];
    am_tradeoff_params *p = &sw->base;
    p->lr = cli_double(a, "lr", 0, 1e6, 1, 1);
    const char *rule = cli_str(a, "step-rule");
    if (strcmp(rule, "fixed") == 0)
        p->step_rule = AM_TRADEOFF_STEP_FIXED;
    else if (strcmp(rule, "effective") == 0)
        p->step_rule = AM_TRADEOFF_STEP_EFFECTIVE;
    else
        cli_usage_error("--step-rule must be fixed or effective, got '%s'", rule);
    p->batch = (size_t)cli_int(a, "batch", 1, 1000000);
    p->budget = (uint64_t)cli_int(a, "budget", 1, 1LL << 40);
    if (am_runtime_parse(cli_str(a, "runtime"), &p->runtime, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    p->eval_rows = (size_t)cli_int(a, "eval-rows", 0, 1000000000LL);
    p->seed = cli_u64(a, "seed");
    sw->seeds = (size_t)cli_int(a, "seeds", 1, 100000);
    sw->resamples = (size_t)cli_int(a, "resamples", 1, 10000000);
    sw->threads = (int)cli_int(a, "threads", 0, 4096);
    sw->checkpoint = cli_str(a, "checkpoint");
    sw->resume = cli_flag(a, "resume");
    if (sw->resume && !sw->checkpoint) cli_usage_error("--resume needs --checkpoint FILE");
    sw->data_id = cli_str(a, "data");
    if (am_tradeoff_sweep_check(sw, err, sizeof err)) cli_usage_error("%s", err);
}

/* The JSON params: every option as resolved. */
static json_t *tradeoff_json_params(const cli_args *a, const am_tradeoff_sweep *sw,
                                    const am_nn *net)
{
    const am_tradeoff_params *p = &sw->base;
    char rtbuf[128], sbuf[32];
    am_runtime_format(&p->runtime, rtbuf, sizeof rtbuf);
    json_t *params = json_object();
    json_object_set_new(params, "preset", json_string(cli_str(a, "preset")));
    json_object_set_new(params, "quick", json_boolean(cli_flag(a, "quick")));
    json_object_set_new(params, "model", json_string(am_nn_spec(net)));
    json_object_set_new(params, "data", json_string(sw->data_id));
    json_object_set_new(params, "inputs", json_string(cli_str(a, "inputs")));
    json_t *wl = json_array();
    for (size_t i = 0; i < sw->nworkers; i++)
        json_array_append_new(wl, json_integer((json_int_t)sw->workers[i]));
    json_object_set_new(params, "workers", wl);
    json_object_set_new(params, "mus", cli_json_doubles(sw->mu, sw->nmu));
    json_object_set_new(params, "lr", json_real(p->lr));
    json_object_set_new(params, "step_rule", json_string(cli_str(a, "step-rule")));
    json_object_set_new(params, "batch", json_integer((json_int_t)p->batch));
    json_object_set_new(params, "budget", json_integer((json_int_t)p->budget));
    json_object_set_new(params, "runtime", json_string(rtbuf));
    json_object_set_new(params, "eval_rows", json_integer((json_int_t)p->eval_rows));
    json_object_set_new(params, "seeds", json_integer((json_int_t)sw->seeds));
    json_object_set_new(params, "resamples", json_integer((json_int_t)sw->resamples));
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)p->seed);
    json_object_set_new(params, "seed", json_string(sbuf));
    json_object_set_new(params, "threads", json_integer(sw->threads));
    return params;
}

/* The results of the cells, the best momentum per P and the trend, under root. */
static void tradeoff_json_results(json_t *root, const am_tradeoff_sweep *sw,
                                  const am_tradeoff_result *r)
{
    const size_t nw = sw->nworkers;
    json_t *rows = json_array();
    for (size_t q = 0; q < r->ncells; q++) {
        const am_tradeoff_cell *c = &r->cells[q];
        json_t *o = json_object();
        json_object_set_new(o, "workers", json_integer((json_int_t)c->workers));
        json_object_set_new(o, "mu", json_real(c->mu));
        json_object_set_new(o, "lr", json_real(c->lr));
        json_object_set_new(o, "accuracy", cli_json_number(c->accuracy_mean));
        json_object_set_new(o, "accuracy_sem", cli_json_number(c->accuracy_sem));
        json_object_set_new(o, "accuracy_seeds", cli_json_doubles(c->accuracy, r->seeds));
        json_object_set_new(o, "diverged", json_integer((json_int_t)c->diverged));
        json_object_set_new(o, "mean_staleness", cli_json_number(c->mean_staleness));
        json_object_set_new(o, "max_staleness", cli_json_number(c->max_staleness));
        json_object_set_new(o, "p_best", cli_json_number(c->p_best));
        json_array_append_new(rows, o);
    }
    json_object_set_new(root, "results", rows);
    json_t *best = json_array();
    for (size_t w = 0; w < nw; w++) {
        json_t *o = json_object(), *ci = json_array();
        json_object_set_new(o, "workers", json_integer((json_int_t)sw->workers[w]));
        json_object_set_new(o, "best_mu", json_real(r->best[w].best_mu));
        json_array_append_new(ci, cli_json_number(r->best[w].best_mu_lo));
        json_array_append_new(ci, cli_json_number(r->best[w].best_mu_hi));
        json_object_set_new(o, "best_mu_ci", ci);
        json_array_append_new(best, o);
    }
    json_object_set_new(root, "best", best);
    json_t *tr = json_object(), *tci = json_array();
    json_object_set_new(tr, "from_workers", json_integer((json_int_t)sw->workers[0]));
    json_object_set_new(tr, "to_workers", json_integer((json_int_t)sw->workers[nw - 1]));
    json_object_set_new(tr, "best_mu_change", cli_json_number(r->trend.change));
    json_array_append_new(tci, cli_json_number(r->trend.change_lo));
    json_array_append_new(tci, cli_json_number(r->trend.change_hi));
    json_object_set_new(tr, "best_mu_change_ci", tci);
    json_object_set_new(
        tr, "verdict",
        json_string(nw >= 2 ? am_tradeoff_verdict_name(r->trend.verdict) : "unresolved"));
    json_object_set_new(root, "trend", tr);
}

static void tradeoff_csv(FILE *f, const am_tradeoff_sweep *sw, const am_tradeoff_result *r)
{
    fputs("workers,mu,lr,accuracy,accuracy_sem,seeds,diverged,mean_staleness,max_staleness,"
          "p_best,best_mu,best_mu_lo,best_mu_hi\n",
          f);
    for (size_t q = 0; q < r->ncells; q++) {
        const am_tradeoff_cell *c = &r->cells[q];
        const am_tradeoff_best *b = &r->best[q / sw->nmu];
        fprintf(f, "%zu,", c->workers);
        cli_csv_double(f, c->mu);
        double v1[] = {c->lr, c->accuracy_mean, c->accuracy_sem};
        cli_csv_more(f, v1, 3);
        fprintf(f, ",%zu,%zu", r->seeds, c->diverged);
        double v2[] = {c->mean_staleness, c->max_staleness, c->p_best,
                       b->best_mu,        b->best_mu_lo,    b->best_mu_hi};
        cli_csv_more(f, v2, 6);
        fputc('\n', f);
    }
}

/* Writes the result (CSV or JSON) through --output. */
static void tradeoff_write(const cli_args *a, int json, const am_tradeoff_sweep *sw,
                           const am_tradeoff_result *r, const am_nn *net, const am_classset *train,
                           const am_classset *test)
{
    cli_out out;
    FILE *f = cli_out_begin(&out, a);
    if (json) {
        json_t *root = nn_cli_json_root("tradeoff", tradeoff_json_params(a, sw, net));
        json_t *info = nn_cli_resolved(net, train, test);
        json_object_set_new(info, "variant", json_string("async"));
        json_object_set_new(root, "resolved", info);
        tradeoff_json_results(root, sw, r);
        cli_out_json(f, root);
    } else {
        tradeoff_csv(f, sw, r);
    }
    cli_out_commit(&out);
}

int cmd_tradeoff(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "tradeoff",
              "Liu et al.'s deep-network experiment: asynchronous momentum SGD with P workers\n"
              "(the staleness of each update from the parameter-server simulator, async variant,\n"
              "--runtime laws; P = 1 is synchronous) for each momentum of --mus; test accuracy\n"
              "after --budget updates with its standard error over --seeds, and the best momentum\n"
              "per P with a paired bootstrap interval over seeds. Does it fall as P grows?",
              tradeoff_opts, argc, argv);
    am_tradeoff_sweep sw;
    tradeoff_parse(&a, &sw);
    const int json = cli_json(&a);
    const size_t nw = sw.nworkers, ncells = sw.nworkers * sw.nmu;
    am_classset *train = NULL, *test = NULL;
    am_nn *net = NULL;
    nn_cli_open(&a, cli_str(&a, "model"), &train, &test, &net);
    nn_cli_work_check(&a, (double)(ncells * sw.seeds), (double)sw.base.budget, sw.base.batch,
                      (double)am_nn_dim(net));
    /* memory up front: P_max held gradients and the iterate per thread */
    double bytes = (double)(sw.workers[nw - 1] + 3) * (double)am_nn_dim(net) * 8.0;
    if (bytes > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--workers %zu with --model %s needs %.3g GB of gradients (limit %.3g GB)",
                        sw.workers[nw - 1], am_nn_spec(net), bytes / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    int progress = sweep_cli_show_progress(cli_flag(&a, "quiet"));
    if (progress) {
        sw.progress = sweep_cli_progress_print;
        sw.progress_ctx = stderr;
    }
    sw.cancel = sweep_cli_sigint_install();
    am_tradeoff_result *r = NULL;
    char err[1024] = "";
    am_status st = am_tradeoff_run(&sw, net, train, test, &r, err, sizeof err);
    sweep_cli_sigint_restore();
    int status = sweep_cli_status(st, err, "tradeoff", "cells", r ? r->cells_done : 0, ncells,
                                  sw.checkpoint, progress);
    if (!st && am_sweep_rank() == 0 && sw.seeds == 1)
        fprintf(stderr,
                "amsgd: warning: one seed has no spread to resample: p_best, best_mu_lo, "
                "best_mu_hi and the trend are %s (run --seeds 10 for a claim)\n",
                json ? "null" : "nan");
    if (!st && am_sweep_rank() == 0) tradeoff_write(&a, json, &sw, r, net, train, test);
    am_tradeoff_result_free(r);
    free((void *)sw.workers);
    free((void *)sw.mu);
    am_nn_free(net);
    am_classset_free(train);
    am_classset_free(test);
    return st || am_sweep_rank() != 0 ? status : 0;
}
