/*
 * cmd_sde.c -- `amsgd sde`: the SDE limits of Async-MSGD (theory.md §3) by Euler–Maruyama
 * as an ensemble of replicas, with the keys of `amsgd mc`:
 *   global  dV = (1/(1-mu)) (I - V V^T) Sigma V dt + (sqrt(eta)/(1-mu)) S(V) dW,  S S^T = C(V)
 *   ou      dU_i = -((lambda_1 - lambda_i)/(1-mu)) U_i dt + (alpha_i1/(1-mu)) dB_i,  h_i =
 * sqrt(eta) U_i
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_run.h"
#include "../core/am_rng.h"
#include "cli_common.h"
#include "commands.h"
#include "mc_output.h"

static const cli_opt OPT_TIME_SDE = {"time", "T", "10", "horizon in continuous time t"};
static const cli_opt OPT_DELAY_SDE = {"delay", "SPEC", "none",
                                      "must be none: the SDE limits do not depend on the delay"};
static const cli_opt OPT_DT = {"dt", "H", "--eta",
                               "Euler-Maruyama step (the step of the chain when absent)"};
static const cli_opt OPT_MODEL = {"model", "NAME", "global",
                                  "global (small-noise SDE on the sphere) or ou (local, near v^1)"};
static const cli_opt OPT_NOISE = {"noise", "0|1", "1", "0 drops the noise (the ODE limit)"};
static const cli_opt OPT_NO_NOISE = {"no-noise", NULL, NULL, "same as --noise 0"};
static const cli_opt OPT_SAMPLER = {"sampler", "NAME", "fast",
                                    "global noise: fast (exact, O(d)) or dense (Cholesky, O(d^3))"};

static const cli_opt *const sde_opts[] = {
    &OPT_DIM,       &OPT_SPECTRUM, &OPT_DIST,     &OPT_ROTATE,   &OPT_ETA,      &OPT_MU,
    &OPT_DELAY_SDE, &OPT_INIT,     &OPT_TIME_SDE, &OPT_GRID,     &OPT_REPLICAS, &OPT_SEED,
    &OPT_THREADS,   &OPT_BLOWUP,   &OPT_COORDS,   &OPT_DT,       &OPT_MODEL,    &OPT_NOISE,
    &OPT_NO_NOISE,  &OPT_SAMPLER,  &OPT_FORMAT,   &OPT_PROGRESS, &OPT_OUTPUT,   NULL};

int cmd_sde(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "sde",
              "Integrate an SDE limit of Async-MSGD by Euler-Maruyama as an ensemble of\n"
              "replicas and report the mean error, its standard error and the mean norm on the\n"
              "saved grid (the keys of amsgd mc).",
              sde_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    if (strcmp(cli_str(&a, "delay"), "none") != 0)
        cli_usage_error("--delay must be none for sde (the SDE limits have no delay), got '%s'",
                        cli_str(&a, "delay"));
    am_msgd_params mp = cli_msgd_params(&a, p);
    double horizon = cli_double(&a, "time", 0, 1e12, 1, 0);
    double dt = cli_given(&a, "dt") ? cli_double(&a, "dt", 0, 1e6, 1, 0) : mp.eta;
    if (horizon / dt >= (double)AM_RNG_STEP_LIMIT)
        cli_usage_error("--time / --dt = %.3g steps is more than the random streams' 2^48",
                        horizon / dt);
    const char *model = cli_str(&a, "model");
    int ou;
    if (strcmp(model, "global") == 0)
        ou = 0;
    else if (strcmp(model, "ou") == 0)
        ou = 1;
    else
        cli_usage_error("--model must be global or ou, got '%s'", model);
    int noise = (int)cli_int(&a, "noise", 0, 1);
    if (cli_flag(&a, "no-noise")) {
        if (cli_given(&a, "noise") && noise) cli_usage_error("--no-noise contradicts --noise 1");
        noise = 0;
    }
    const char *sname = cli_str(&a, "sampler");
    am_sde_sampler sampler;
    if (strcmp(sname, "fast") == 0)
        sampler = AM_SDE_SAMPLER_FAST;
    else if (strcmp(sname, "dense") == 0)
        sampler = AM_SDE_SAMPLER_DENSE;
    else
        cli_usage_error("--sampler must be fast or dense, got '%s'", sname);
    if (sampler == AM_SDE_SAMPLER_DENSE && p->dim > 2000)
        cli_usage_error("--sampler dense needs --dim <= 2000 (O(d^3) per step), got %zu", p->dim);
    am_grid grid = cli_grid(&a, horizon);
    am_ensemble_params ep = cli_ensemble_params(&a);
    int json = cli_json(&a);
    {
        char how[128]; /* the dense sampler costs O(d^3) per step */
        double dd = sampler == AM_SDE_SAMPLER_DENSE ? pow((double)p->dim, 3) : (double)p->dim;
        snprintf(how, sizeof how, "%zu replicas x %.3g steps x %s %zu", ep.replicas, horizon / dt,
                 sampler == AM_SDE_SAMPLER_DENSE ? "d^3, d =" : "d", p->dim);
        cli_work_check(&a, (double)ep.replicas * (horizon / dt) * dd, how);
    }

    am_run_sde_params sp = am_run_sde_params_default();
    sp.problem = p;
    sp.msgd = mp;
    sp.model = ou ? AM_RUN_SDE_OU : AM_RUN_SDE_GLOBAL;
    sp.noise = noise;
    sp.sampler = sampler;
    sp.dt = dt;
    sp.horizon = grid.horizon;
    sp.ngrid = grid.n;
    sp.ensemble = ep;
    am_run_result run;
    char err[256];
    cli_progress_start(&a, 0);
    am_status st = am_run_sde(&sp, &run, err, sizeof err);
    cli_progress_end();
    mc_check_memory(st, &run, ep.threads);
    if (st == AM_EDOM)
        cli_usage_error("--dist: the SDE needs finite fourth moments (student:NU with NU > 4), "
                        "got '%s'",
                        cli_str(&a, "dist"));
    if (st) cli_runtime_error("sde: %s", err);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    json_t *params = json_object();
    cli_params_problem(params, p);
    cli_params_msgd(params, &mp);
    json_object_set_new(params, "time", json_real(horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)grid.n));
    json_object_set_new(params, "replicas", json_integer((json_int_t)ep.replicas));
    json_object_set_new(params, "coords", json_boolean(mp.coords));
    json_object_set_new(params, "dt", json_real(dt));
    json_object_set_new(params, "model", json_string(ou ? "ou" : "global"));
    json_object_set_new(params, "noise", json_boolean(noise));
    json_object_set_new(params, "sampler", json_string(sname));
    mc_write(f, json, "sde", params, &run);
    cli_out_commit(&out);
    am_run_result_free(&run);
    am_problem_free(p);
    return 0;
}
