/*
 * cmd_wallclock_model.c -- `amsgd wallclock --model`: the parameter-server variants training a
 * network on a real data set, error against wall-clock time (studies/am_wallclock_nn.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../studies/am_nnstale.h"
#include "../montecarlo/am_wallclock.h"
#include "../studies/am_wallclock_nn.h"
#include "nn_cli.h"
#include "../studies/am_wallclock_sweep.h"
#include "cli_common.h"
#include "commands.h"
#include "wallclock_cli.h"

static const cli_opt OPT_NN_MODEL = {
    "model", "SPEC", NULL,
    "network: mlr, mlp:W1,W2,... (hidden widths, e.g. mlp:64), or cnn (LeNet-like; images "
    "only)"};
static const cli_opt OPT_NN_TIME = {
    "time", "T", "500", "wall-clock budget, in the units of --runtime (exp:1: E[X] = 1)"};
static const cli_opt OPT_NN_GRID = {"grid", "N", "26",
                                    "evaluation times T g / (N - 1), g = 0..N-1"};
static const cli_opt OPT_NN_BATCH = {"batch", "N", "32", "rows per learner minibatch"};
static const cli_opt OPT_NN_OPT = {
    "optimizer", "NAME", "sgd",
    "server step: sgd, momentum, nesterov, adam, rmsprop or adagrad (on the mean gradient)"};
static const cli_opt OPT_NN_LR = {"lr", "E", NULL,
                                  "step (default: sgd 0.1, momentum and nesterov 0.01, adam and "
                                  "rmsprop 0.001, adagrad 0.05)"};
static const cli_opt OPT_NN_MOM = {"momentum", "M", "0.9", "momentum of momentum/nesterov"};
static const cli_opt OPT_NN_SEEDS = {"seeds", "N", "5",
                                     "independent runs per variant (the error bands)"};
static const cli_opt OPT_NN_EVAL = {"eval-rows", "N", "2000",
                                    "test rows of each evaluation (0 = all)"};
static const cli_opt OPT_NN_TARGET = {"target-error", "E", "0.25",
                                      "test error of time_to_target, in (0, 1)"};
static const cli_opt OPT_NN_QUICK = {
    "quick", NULL, NULL,
    "a smaller run: --time 150 --seeds 3 --grid 16 --eval-rows 1000 (given flags win)"};

static const cli_opt *const wall_nn_opts[] = {&OPT_NN_MODEL,  &OPT_NN_DATA, &OPT_NN_INPUTS,
                                              &OPT_WK,        &OPT_RT,      &OPT_VARS,
                                              &OPT_NN_TIME,   &OPT_NN_GRID, &OPT_NN_BATCH,
                                              &OPT_NN_OPT,    &OPT_NN_LR,   &OPT_NN_MOM,
                                              &OPT_NN_SEEDS,  &OPT_NN_EVAL, &OPT_NN_QUICK,
                                              &OPT_NN_TARGET, &OPT_SEED,    &OPT_THREADS,
                                              &OPT_FORMAT,    &OPT_OUTPUT,  NULL};

/* The flags as parsed: the study's params and what the output repeats. */
typedef struct {
    const char *model, *vl, *data, *inputs;
    int quick, json;
    am_optim_kind kind;
    am_wallclock_nn_params wp;
} wm_config;

/* --variants for the one P of --workers (NAME:P/D resolved for this P). */
static am_wallclock_variant *wm_variants(const char *vl, size_t p, size_t *nv)
{
    am_wallclock_sweep_variant *sv = wallclock_cli_variants(vl, &p, 1, 1, nv);
    am_wallclock_variant *vars = calloc(*nv, sizeof *vars);
    if (!vars) cli_runtime_error("out of memory");
    for (size_t i = 0; i < *nv; i++) {
        vars[i].variant = sv[i].variant;
        vars[i].k = am_wallclock_sweep_k(&sv[i], p); /* NAME:P/D resolved for this P */
    }
    free(sv);
    return vars;
}

/* Every flag into c (--quick's values where the flag is not given); exits 2 on bad usage. */
static void wm_parse(const cli_args *a, wm_config *c)
{
    char err[1024];
    memset(c, 0, sizeof *c);
    c->model = cli_str(a, "model");
    if (!c->model) cli_usage_error("--model needs a value (mlr, mlp:W1,... or cnn)");
    const int quick = c->quick = cli_flag(a, "quick");
    size_t p = (size_t)cli_int(a, "workers", 1, 100000);
    am_wallclock_nn_params *wp = &c->wp;
    *wp = am_wallclock_nn_params_default();
    wp->workers = p;
    if (am_runtime_parse(cli_str(a, "runtime"), &wp->runtime, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    c->vl = cli_str(a, "variants");
    wp->variants = wm_variants(c->vl, p, &wp->nvariants);
    wp->time = quick && !cli_given(a, "time") ? 150 : cli_double(a, "time", 0, 1e12, 1, 0);
    wp->ngrid = quick && !cli_given(a, "grid") ? 16 : (size_t)cli_int(a, "grid", 2, 1000000);
    wp->batch = (size_t)cli_int(a, "batch", 1, 100000);
    if (am_optim_parse(cli_str(a, "optimizer"), &c->kind, err, sizeof err))
        cli_usage_error("--optimizer %s", err);
    wp->opt = am_optim_params_default(c->kind);
    wp->opt.mu = cli_double(a, "momentum", 0, 1, 0, 1);
    wp->opt.lr =
        cli_given(a, "lr") ? cli_double(a, "lr", 0, 1e6, 1, 0) : am_nnstale_default_lr(c->kind);
    wp->seeds = quick && !cli_given(a, "seeds") ? 3 : (size_t)cli_int(a, "seeds", 1, 100000);
    wp->eval_rows = quick && !cli_given(a, "eval-rows")
                        ? 1000
                        : (size_t)cli_int(a, "eval-rows", 0, 1000000000LL);
    wp->target = cli_double(a, "target-error", 0, 1, 1, 1);
    wp->seed = cli_u64(a, "seed");
    wp->threads = (int)cli_int(a, "threads", 0, 4096);
    c->json = cli_json(a);
    c->data = cli_str(a, "data");
    c->inputs = cli_str(a, "inputs");
}

static void wm_csv(FILE *f, const am_wallclock_nn_result *res)
{
    char spec[64];
    fputs("variant,time,test_error,test_error_sem,updates_mean,alive\n", f);
    for (size_t i = 0; i < res->nvariants; i++) {
        const am_wallclock_nn_curve *c = &res->curves[i];
        wallclock_cli_variant_spec(c->variant, c->k, spec, sizeof spec);
        for (size_t g = 0; g < res->ngrid; g++) {
            fprintf(f, "%s,", spec);
            const double v[4] = {c->time[g], c->test_error[g], c->test_error_sem[g],
                                 c->updates_mean[g]};
            wallclock_cli_csv_values(f, v, 4);
            fprintf(f, "%zu\n", c->alive[g]);
        }
    }
}

/* The JSON params: every option as resolved. */
static json_t *wm_json_params(const wm_config *c, const am_nn *net)
{
    const am_wallclock_nn_params *wp = &c->wp;
    json_t *params = json_object();
    char buf[128];
    json_object_set_new(params, "model", json_string(am_nn_spec(net)));
    json_object_set_new(params, "data", json_string(c->data));
    json_object_set_new(params, "inputs", json_string(c->inputs));
    json_object_set_new(params, "workers", json_integer((json_int_t)wp->workers));
    am_runtime_format(&wp->runtime, buf, sizeof buf);
    json_object_set_new(params, "runtime", json_string(buf));
    json_object_set_new(params, "variants", json_string(c->vl));
    json_object_set_new(params, "time", json_real(wp->time));
    json_object_set_new(params, "grid", json_integer((json_int_t)wp->ngrid));
    json_object_set_new(params, "batch", json_integer((json_int_t)wp->batch));
    json_object_set_new(params, "optimizer", json_string(am_optim_name(c->kind)));
    json_object_set_new(params, "lr", json_real(wp->opt.lr));
    json_object_set_new(params, "momentum", json_real(wp->opt.mu));
    json_object_set_new(params, "seeds", json_integer((json_int_t)wp->seeds));
    json_object_set_new(params, "eval_rows", json_integer((json_int_t)wp->eval_rows));
    json_object_set_new(params, "target_error", json_real(wp->target));
    json_object_set_new(params, "quick", json_boolean(c->quick));
    wallclock_cli_json_seed_threads(params, wp->seed, wp->threads);
    return params;
}

/* One variant's curves, its measured times, fresh fraction, staleness, floor and time to
 * target next to Dutta's closed forms. */
static json_t *wm_json_curve(const am_wallclock_nn_curve *c, size_t ngrid)
{
    char spec[64];
    json_t *o = json_object();
    wallclock_cli_variant_spec(c->variant, c->k, spec, sizeof spec);
    json_object_set_new(o, "name", json_string(am_runtime_variant_name(c->variant)));
    json_object_set_new(o, "variant", json_string(spec));
    json_object_set_new(o, "K", json_integer((json_int_t)c->batch));
    json_object_set_new(o, "time", cli_json_doubles(c->time, ngrid));
    json_object_set_new(o, "test_error", cli_json_doubles(c->test_error, ngrid));
    json_object_set_new(o, "test_error_sem", cli_json_doubles(c->test_error_sem, ngrid));
    json_object_set_new(o, "updates_mean", cli_json_doubles(c->updates_mean, ngrid));
    json_t *al = json_array();
    for (size_t g = 0; g < ngrid; g++)
        json_array_append_new(al, json_integer((json_int_t)c->alive[g]));
    json_object_set_new(o, "alive", al);
    json_object_set_new(o, "diverged", json_integer((json_int_t)c->diverged));
    const wallclock_cli_key keys[] = {
        {"time_per_update", wallclock_cli_mean(&c->time_per_update)},
        {"time_per_update_sem", am_stats_sem(&c->time_per_update)},
        {"time_per_update_dutta", c->time_per_update_dutta},
        {"p0", wallclock_cli_mean(&c->p0)},
        {"p0_sem", am_stats_sem(&c->p0)},
        {"p0_dutta", c->p0_dutta},
        {"mean_staleness", wallclock_cli_mean(&c->mean_staleness)},
        {"mean_staleness_sem", am_stats_sem(&c->mean_staleness)},
        {"floor_measured", wallclock_cli_mean(&c->floor)},
        {"floor_measured_sem", am_stats_sem(&c->floor)},
        {"time_to_target", wallclock_cli_mean(&c->time_to_target)},
        {"time_to_target_sem", am_stats_sem(&c->time_to_target)},
    };
    wallclock_cli_json_keys(o, keys, sizeof keys / sizeof keys[0]);
    json_object_set_new(o, "reached", json_integer((json_int_t)c->reached));
    return o;
}

/* Writes the result (CSV or JSON) through --output. */
static void wm_write(const cli_args *a, const wm_config *c, const am_nn *net,
                     const am_wallclock_nn_result *res)
{
    cli_out out;
    FILE *f = cli_out_begin(&out, a);
    if (!c->json) {
        wm_csv(f, res);
    } else {
        json_t *root = nn_cli_json_root("wallclock", wm_json_params(c, net));
        json_t *arr = json_array();
        for (size_t i = 0; i < res->nvariants; i++)
            json_array_append_new(arr, wm_json_curve(&res->curves[i], res->ngrid));
        json_object_set_new(root, "variants", arr);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
}

int cmd_wallclock_model(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "wallclock",
              "With --model: Dutta et al.'s six parameter-server variants training a network on\n"
              "a real data set. P simulated learners with --runtime draw minibatch gradients on\n"
              "the iterate they read when they started; each server update applies the mean of\n"
              "its gradients with --optimizer. Prints the test error at fixed wall-clock times\n"
              "with its standard error over --seeds, per variant; JSON adds the measured time\n"
              "per update next to Dutta's closed form, the fresh-gradient fraction, the error\n"
              "floor and the time to --target-error (docs/wallclock.md).",
              wall_nn_opts, argc, argv);
    wm_config c;
    wm_parse(&a, &c);
    am_classset *train = NULL, *test = NULL;
    am_nn *net = NULL;
    nn_cli_open(&a, c.model, &train, &test, &net);
    char err[1024];
    am_wallclock_nn_result res;
    am_status st = am_wallclock_nn_run(net, train, test, &c.wp, &res, err, sizeof err);
    if (st == AM_EINVAL) cli_usage_error("wallclock --model: %s", err);
    if (st) cli_runtime_error("wallclock --model: %s", err);
    wm_write(&a, &c, net, &res);
    am_wallclock_nn_result_free(&res);
    free((void *)c.wp.variants);
    am_nn_free(net);
    am_classset_free(train);
    am_classset_free(test);
    return 0;
}
