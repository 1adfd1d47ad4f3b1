/*
 * cmd_mc.c -- `amsgd mc`: the discrete Async-MSGD algorithm as a Monte Carlo ensemble,
 * mean error 1 - (v^1.v)^2/|v|^2 and norm |v| with standard errors on the saved grid.
 */
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "mc_output.h"

static const cli_opt OPT_TIME_MC = {"time", "T", "10", "horizon in continuous time t = k eta"};

static const cli_opt *const mc_opts[] = {
    &OPT_DIM, &OPT_SPECTRUM, &OPT_DIST, &OPT_ROTATE, &OPT_ETA, &OPT_MU, &OPT_DELAY, &OPT_INIT,
    &OPT_TIME_MC, &OPT_GRID, &OPT_REPLICAS, &OPT_SEED, &OPT_THREADS, &OPT_BLOWUP, &OPT_COORDS,
    &OPT_FORMAT, &OPT_OUTPUT, NULL};

int cmd_mc(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "mc",
              "Run the discrete Async-MSGD recursion as an ensemble of independent replicas and\n"
              "report the mean error, its standard error and the mean norm on the saved grid.",
              mc_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    am_msgd_params mp = cli_msgd_params(&a, p);
    double horizon = cli_double(&a, "time", 0, 1e12, 1, 0);
    if (horizon / mp.eta > 1e15)
        cli_usage_error("--time / --eta = %.3g steps is more than 1e15", horizon / mp.eta);
    am_grid grid = cli_grid(&a, horizon);
    am_ensemble_params ep = cli_ensemble_params(&a);
    int json = cli_json(&a);

    mc_run run;
    am_status st = mc_run_ensemble(p, &mp, &grid, &ep, &run);
    if (st) cli_runtime_error("mc: %s", am_strerror(st));

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    json_t *params = json_object();
    cli_params_problem(params, p);
    cli_params_msgd(params, &mp);
    json_object_set_new(params, "time", json_real(horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)grid.n));
    json_object_set_new(params, "replicas", json_integer((json_int_t)ep.replicas));
    json_object_set_new(params, "coords", json_boolean(mp.coords));
    mc_write(f, json, "mc", params, &run, p->dim);
    cli_out_commit(&out);
    mc_run_free(&run);
    am_problem_free(p);
    return 0;
}
