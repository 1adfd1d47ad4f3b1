/*
 * cmd_mc.c -- `amsgd mc`: the discrete Async-MSGD algorithm as a Monte Carlo ensemble,
 * mean error 1 - (v^1.v)^2/|v|^2 and norm |v| with standard errors on the saved grid.
 */
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_msgd_ps.h"
#include "cli_common.h"
#include "commands.h"
#include "mc_output.h"

static const cli_opt OPT_TIME_MC = {"time", "T", "10", "horizon in continuous time t = k eta"};
static const cli_opt OPT_VARIANT = {"variant", "NAME", "async",
                                    "server scheme for --delay workers:P:DIST: sync, k-sync:K, "
                                    "k-batch-sync:K, async, k-async:K, k-batch-async:K"};
static const cli_opt OPT_LR = {"lr", "SPEC", "const",
                               "step for --delay workers:P:DIST: const (--eta) or "
                               "adaptive:C:MAX, eta_k = min(C/|v_k - w|^2, MAX)"};

static const cli_opt *const mc_opts[] = {
    &OPT_DIM,    &OPT_SPECTRUM, &OPT_DIST, &OPT_ROTATE,   &OPT_ETA,    &OPT_MU,      &OPT_DELAY,
    &OPT_INIT,   &OPT_TIME_MC,  &OPT_GRID, &OPT_REPLICAS, &OPT_SEED,   &OPT_THREADS, &OPT_BLOWUP,
    &OPT_COORDS, &OPT_VARIANT,  &OPT_LR,   &OPT_FORMAT,   &OPT_OUTPUT, NULL};

/* --variant and --lr for the parameter-server delay (exit 2 on bad input). */
static am_msgd_ps_params mc_ps_params(const cli_args *a, const am_msgd_params *mp)
{
    am_msgd_ps_params pp;
    memset(&pp, 0, sizeof pp);
    pp.msgd = *mp;
    char err[256];
    if (am_variant_parse_spec(cli_str(a, "variant"), &pp.variant, &pp.k, err, sizeof err))
        cli_usage_error("--variant %s", err);
    size_t p = (size_t)mp->delay.param;
    if (am_variant_check(pp.variant, p, pp.k))
        cli_usage_error("--variant K must be in [1, %zu] (the workers of --delay), got '%s'", p,
                        cli_str(a, "variant"));
    const char *lr = cli_str(a, "lr");
    if (strncmp(lr, "adaptive:", 9) == 0) {
        char *copy = strdup(lr + 9), *colon = strchr(copy, ':');
        if (!colon) cli_usage_error("--lr adaptive:C:MAX needs two numbers, got '%s'", lr);
        *colon = 0;
        if (cli_parse_double(copy, &pp.lr_c) || cli_parse_double(colon + 1, &pp.lr_max) ||
            !(pp.lr_c > 0) || !(pp.lr_max > 0))
            cli_usage_error("--lr adaptive:C:MAX needs C > 0 and MAX > 0, got '%s'", lr);
        free(copy);
    } else if (strcmp(lr, "const") != 0) {
        cli_usage_error("--lr must be const or adaptive:C:MAX, got '%s'", lr);
    }
    return pp;
}

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
    am_status st;
    int ps = mp.delay.kind == AM_DELAY_WORKERS;
    am_msgd_ps_params pp;
    if (ps) { /* staleness from simulated learners: the parameter-server engine */
        pp = mc_ps_params(&a, &mp);
        am_msgd_ps *eng = am_msgd_ps_alloc(p, &pp, &st);
        if (!eng) cli_runtime_error("mc: %s", am_strerror(st));
        st = mc_run_model(am_msgd_ps_model(eng), mp.eta, &grid, &ep, mp.coords, &run);
        run.wallclock = 1;
        am_msgd_ps_free(eng);
    } else {
        if (cli_given(&a, "variant") || cli_given(&a, "lr"))
            cli_usage_error("--variant and --lr need --delay workers:P:DIST, got --delay %s",
                            cli_str(&a, "delay"));
        st = mc_run_ensemble(p, &mp, &grid, &ep, &run);
    }
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
    if (ps) {
        char vbuf[64];
        if (pp.variant == AM_VARIANT_SYNC || pp.variant == AM_VARIANT_ASYNC)
            snprintf(vbuf, sizeof vbuf, "%s", am_variant_name(pp.variant));
        else
            snprintf(vbuf, sizeof vbuf, "%s:%zu", am_variant_name(pp.variant), pp.k);
        json_object_set_new(params, "variant", json_string(vbuf));
        if (pp.lr_c > 0)
            snprintf(vbuf, sizeof vbuf, "adaptive:%.17g:%.17g", pp.lr_c, pp.lr_max);
        else
            snprintf(vbuf, sizeof vbuf, "const");
        json_object_set_new(params, "lr", json_string(vbuf));
    }
    mc_write(f, json, "mc", params, &run, p->dim);
    cli_out_commit(&out);
    mc_run_free(&run);
    am_problem_free(p);
    return 0;
}
