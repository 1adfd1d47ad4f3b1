/*
 * cmd_mc.c -- `amsgd mc`: the discrete Async-MSGD algorithm as a Monte Carlo ensemble,
 * mean error 1 - (v^1.v)^2/|v|^2 and norm |v| with standard errors on the saved grid.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_run.h"
#include "../core/am_rng.h"
#include "cli_common.h"
#include "cli_data.h"
#include "commands.h"
#include "mc_output.h"

static const cli_opt OPT_TIME_MC = {"time", "T", "10", "horizon in continuous time t = k eta"};
static const cli_opt OPT_VARIANT = {"variant", "NAME", "async",
                                    "server scheme for --delay workers:P:DIST: sync, k-sync:K, "
                                    "k-batch-sync:K, async, k-async:K, k-batch-async:K"};
static const cli_opt OPT_LR = {"lr", "SPEC", "const",
                               "step for --delay workers:P:DIST: const (--eta) or "
                               "adaptive:C:MAX, eta_k = min(C/|v_k - w|^2, MAX)"};

// clang-format off
static const cli_opt *const mc_opts[] = {
    &OPT_DIM,    &OPT_SPECTRUM, &OPT_DIST, &OPT_ROTATE,   &OPT_ETA,    &OPT_MU,      &OPT_DELAY,
    &OPT_INIT,   &OPT_TIME_MC,  &OPT_GRID, &OPT_REPLICAS, &OPT_SEED,   &OPT_THREADS, &OPT_BLOWUP,
    &OPT_COORDS, &OPT_VARIANT,  &OPT_LR,   &OPT_FORMAT,   &OPT_PROGRESS, &OPT_OUTPUT,
    &OPT_DATA, &OPT_PROJECT, NULL};
// clang-format on

/* --variant and --lr for the parameter-server delay (exit 2 on bad input). */
static void mc_ps_params(const cli_args *a, am_run_mc_params *pp)
{
    const am_msgd_params *mp = &pp->msgd;
    char err[256];
    if (am_runtime_variant_parse_spec(cli_str(a, "variant"), &pp->variant, &pp->k, err, sizeof err))
        cli_usage_error("--variant %s", err);
    size_t p = (size_t)mp->delay.param;
    if (am_runtime_variant_check(pp->variant, p, pp->k))
        cli_usage_error("--variant K must be in [1, %zu] (the workers of --delay), got '%s'", p,
                        cli_str(a, "variant"));
    const char *lr = cli_str(a, "lr");
    if (strncmp(lr, "adaptive:", 9) == 0) {
        char *copy = strdup(lr + 9), *colon = strchr(copy, ':');
        if (!colon) cli_usage_error("--lr adaptive:C:MAX needs two numbers, got '%s'", lr);
        *colon = 0;
        if (cli_parse_double(copy, &pp->lr_c) || cli_parse_double(colon + 1, &pp->lr_max) ||
            !(pp->lr_c > 0) || !(pp->lr_max > 0))
            cli_usage_error("--lr adaptive:C:MAX needs C > 0 and MAX > 0, got '%s'", lr);
        free(copy);
    } else if (strcmp(lr, "const") != 0) {
        cli_usage_error("--lr must be const or adaptive:C:MAX, got '%s'", lr);
    }
}

/* The JSON params of mc: the problem, the data, the recursion, the grid and, with --delay
 * workers:P:DIST, the server's variant and step rule. */
static json_t *mc_json_params(const cli_args *a, const am_run_mc_params *rp, double horizon,
                              size_t ngrid, int ps)
{
    const am_msgd_params *mp = &rp->msgd;
    json_t *params = json_object();
    cli_params_problem(params, rp->problem);
    cli_params_data(params, a, rp->problem);
    cli_params_msgd(params, mp);
    json_object_set_new(params, "time", json_real(horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)ngrid));
    json_object_set_new(params, "replicas", json_integer((json_int_t)rp->ensemble.replicas));
    json_object_set_new(params, "coords", json_boolean(mp->coords));
    if (ps) {
        char vbuf[64];
        if (rp->variant == AM_VARIANT_SYNC || rp->variant == AM_VARIANT_ASYNC)
            snprintf(vbuf, sizeof vbuf, "%s", am_runtime_variant_name(rp->variant));
        else
            snprintf(vbuf, sizeof vbuf, "%s:%zu", am_runtime_variant_name(rp->variant), rp->k);
        json_object_set_new(params, "variant", json_string(vbuf));
        if (rp->lr_c > 0)
            snprintf(vbuf, sizeof vbuf, "adaptive:%.17g:%.17g", rp->lr_c, rp->lr_max);
        else
            snprintf(vbuf, sizeof vbuf, "const");
        json_object_set_new(params, "lr", json_string(vbuf));
    }
    return params;
}

int cmd_mc(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "mc",
              "Run the discrete Async-MSGD recursion as an ensemble of independent replicas and\n"
              "report the mean error, its standard error and the mean norm on the saved grid.",
              mc_opts, argc, argv);
    am_problem *p = cli_data_problem(&a);
    if (!p) p = cli_problem(&a);
    am_run_mc_params rp = am_run_mc_params_default();
    rp.problem = p;
    rp.msgd = cli_msgd_params(&a, p);
    const am_msgd_params mp = rp.msgd;
    double horizon = cli_double(&a, "time", 0, 1e12, 1, 0);
    if (horizon / mp.eta >= (double)AM_RNG_STEP_LIMIT)
        cli_usage_error("--time / --eta = %.3g steps is more than the random streams' 2^48",
                        horizon / mp.eta);
    am_grid grid = cli_grid(&a, horizon);
    rp.horizon = grid.horizon;
    rp.ngrid = grid.n;
    am_ensemble_params ep = cli_ensemble_params(&a);
    rp.ensemble = ep;
    int json = cli_json(&a);
    {
        char how[128];
        double steps = horizon / mp.eta;
        snprintf(how, sizeof how, "%zu replicas x %.3g steps x d %zu", ep.replicas, steps, p->dim);
        cli_work_check(&a, (double)ep.replicas * steps * (double)p->dim, how);
    }

    int ps = mp.delay.kind == AM_DELAY_WORKERS;
    if (ps) /* staleness from simulated learners: the parameter-server engine */
        mc_ps_params(&a, &rp);
    else if (cli_given(&a, "variant") || cli_given(&a, "lr"))
        cli_usage_error("--variant and --lr need --delay workers:P:DIST, got --delay %s",
                        cli_str(&a, "delay"));
    am_run_result run;
    char err[256];
    cli_progress_start(&a, 0);
    am_status st = am_run_mc(&rp, &run, err, sizeof err);
    cli_progress_end();
    mc_check_memory(st, &run, ep.threads);
    if (st == AM_ENOMEM && ps) {
        /* the asynchronous server keeps about 40 P + 69 past iterates of d doubles per replica
         * (am_msgd_ps.c), refused above a sixteenth of the memory limit: a usage error */
        double hist = (40.0 * mp.delay.param + 69.0) * (double)p->dim * 8.0;
        if (hist > (double)AM_MEMORY_LIMIT / 16)
            cli_usage_error("--delay %s with --dim %zu: the server's history of %.3g GB per "
                            "replica is above the limit of %.3g GB (fewer workers or a smaller "
                            "--dim)",
                            cli_str(&a, "delay"), p->dim, hist / 1e9,
                            (double)AM_MEMORY_LIMIT / 16 / 1e9);
    }
    if (st) cli_runtime_error("mc: %s", err);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    mc_write(f, json, "mc", mc_json_params(&a, &rp, horizon, grid.n, ps), &run);
    cli_out_commit(&out);
    am_run_result_free(&run);
    am_problem_free(p);
    return 0;
}
