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

/* The resolved flags of sde. */
typedef struct {
    am_msgd_params mp;
    double horizon, dt;
    int ou, noise;
    am_sde_sampler sampler;
    const char *sname;
    am_grid grid;
    am_ensemble_params ep;
} sde_cfg;

/* --model, --noise, --no-noise and --sampler into c (exits 2 on bad usage). */
static void sde_model_parse(const cli_args *a, const am_problem *p, sde_cfg *c)
{
    const char *model = cli_str(a, "model");
    if (strcmp(model, "global") == 0)
        c->ou = 0;
    else if (strcmp(model, "ou") == 0)
        c->ou = 1;
    else
        cli_usage_error("--model must be global or ou, got '%s'", model);
    c->noise = (int)cli_int(a, "noise", 0, 1);
    if (cli_flag(a, "no-noise")) {
        if (cli_given(a, "noise") && c->noise) cli_usage_error("--no-noise contradicts --noise 1");
        c->noise = 0;
    }
    c->sname = cli_str(a, "sampler");
    if (strcmp(c->sname, "fast") == 0)
        c->sampler = AM_SDE_SAMPLER_FAST;
    else if (strcmp(c->sname, "dense") == 0)
        c->sampler = AM_SDE_SAMPLER_DENSE;
    else
        cli_usage_error("--sampler must be fast or dense, got '%s'", c->sname);
    if (c->sampler == AM_SDE_SAMPLER_DENSE && p->dim > 2000)
        cli_usage_error("--sampler dense needs --dim <= 2000 (O(d^3) per step), got %zu", p->dim);
}

/* Every flag but --format and --output into c (exits 2 on bad usage). */
static void sde_parse(const cli_args *a, const am_problem *p, sde_cfg *c)
{
    if (strcmp(cli_str(a, "delay"), "none") != 0)
        cli_usage_error("--delay must be none for sde (the SDE limits have no delay), got '%s'",
                        cli_str(a, "delay"));
    c->mp = cli_msgd_params(a, p);
    c->horizon = cli_double(a, "time", 0, 1e12, 1, 0);
    c->dt = cli_given(a, "dt") ? cli_double(a, "dt", 0, 1e6, 1, 0) : c->mp.eta;
    if (c->horizon / c->dt >= (double)AM_RNG_STEP_LIMIT)
        cli_usage_error("--time / --dt = %.3g steps is more than the random streams' 2^48",
                        c->horizon / c->dt);
    sde_model_parse(a, p, c);
    c->grid = cli_grid(a, c->horizon);
    c->ep = cli_ensemble_params(a);
}

/* The bound on total work (exits 2 above it); the dense sampler costs O(d^3) per step. */
static void sde_work_check(const cli_args *a, const am_problem *p, const sde_cfg *c)
{
    char how[128];
    int dense = c->sampler == AM_SDE_SAMPLER_DENSE;
    double dd = dense ? pow((double)p->dim, 3) : (double)p->dim;
    snprintf(how, sizeof how, "%zu replicas x %.3g steps x %s %zu", c->ep.replicas,
             c->horizon / c->dt, dense ? "d^3, d =" : "d", p->dim);
    cli_work_check(a, (double)c->ep.replicas * (c->horizon / c->dt) * dd, how);
}

/* The JSON params: every option as resolved. */
static json_t *sde_json_params(const am_problem *p, const sde_cfg *c)
{
    json_t *params = json_object();
    cli_params_problem(params, p);
    cli_params_msgd(params, &c->mp);
    json_object_set_new(params, "time", json_real(c->horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)c->grid.n));
    json_object_set_new(params, "replicas", json_integer((json_int_t)c->ep.replicas));
    json_object_set_new(params, "coords", json_boolean(c->mp.coords));
    json_object_set_new(params, "dt", json_real(c->dt));
    json_object_set_new(params, "model", json_string(c->ou ? "ou" : "global"));
    json_object_set_new(params, "noise", json_boolean(c->noise));
    json_object_set_new(params, "sampler", json_string(c->sname));
    return params;
}

int cmd_sde(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "sde",
              "Integrate an SDE limit of Async-MSGD by Euler-Maruyama as an ensemble of\n"
              "replicas and report the mean error, its standard error and the mean norm on the\n"
              "saved grid (the keys of amsgd mc).",
              sde_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    sde_cfg c;
    sde_parse(&a, p, &c);
    int json = cli_json(&a);
    sde_work_check(&a, p, &c);

    am_run_sde_params sp = am_run_sde_params_default();
    sp.problem = p;
    sp.msgd = c.mp;
    sp.model = c.ou ? AM_RUN_SDE_OU : AM_RUN_SDE_GLOBAL;
    sp.noise = c.noise;
    sp.sampler = c.sampler;
    sp.dt = c.dt;
    sp.horizon = c.grid.horizon;
    sp.ngrid = c.grid.n;
    sp.ensemble = c.ep;
    am_run_result run;
    char err[256];
    cli_progress_start(&a, 0);
    am_status st = am_run_sde(&sp, &run, err, sizeof err);
    cli_progress_end();
    mc_check_memory(st, &run, c.ep.threads);
    if (st == AM_EDOM) cli_sde_moments_error(&a);
    if (st) cli_runtime_error("sde: %s", err);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    mc_write(f, json, "sde", sde_json_params(p, &c), &run);
    cli_out_commit(&out);
    am_run_result_free(&run);
    am_problem_free(p);
    return 0;
}
