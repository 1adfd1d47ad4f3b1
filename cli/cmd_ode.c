/*
 * cmd_ode.c -- `amsgd ode`: the deterministic limit of Async-MSGD (theory.md section 2),
 *
 *   dV/dt = (1/(1-mu)) [ Sigma V - (V^T Sigma V) V ],   V(0) = v_0,
 *
 * solved with CVODE (solvers/am_ode.h) from the initial point the Monte Carlo ensemble uses
 * (replica 0's point for --init random-each), with err = 1 - (v^1.V)^2/|V|^2 and |V| on
 * the common grid, and the solver statistics.
 */
#include <stdlib.h>
#include <string.h>

#include "../studies/am_run.h"
#include "cli_common.h"
#include "commands.h"

static const cli_opt OPT_TIME_ODE = {"time", "T", "10", "horizon in continuous time t"};
static const cli_opt OPT_ETA_ODE = {"eta", "E", "5e-4",
                                    "step size eta > 0; recorded only (the ODE is the eta -> 0 "
                                    "limit)"};
static const cli_opt OPT_RTOL = {"rtol", "RTOL", "1e-9", "CVODE relative tolerance, in [1e-15, 1)"};
static const cli_opt OPT_ATOL = {"atol", "ATOL", "1e-13", "CVODE absolute tolerance, in [0, 1)"};
static const cli_opt OPT_METHOD = {"method", "NAME", "adams",
                                   "adams (fixed-point iteration) or bdf (Newton, dense "
                                   "Jacobian)"};
static const cli_opt OPT_LINSOL = {"linsol", "NAME", "dense",
                                   "linear solver of bdf: dense (LU) or gmres (matrix-free)"};
static const cli_opt OPT_PROJECT = {"project", NULL, NULL,
                                    "project every step onto |V| = 1 (needs --method bdf)"};
static const cli_opt OPT_MAX_STEPS = {"max-steps", "N", "1000000",
                                      "most CVODE steps between two saved times"};

static const cli_opt OPT_COORDS_ODE = {"coords", NULL, NULL,
                                       "also report each h_i^2 = ((Q^T V)_i)^2"};

static const cli_opt *const ode_opts[] = {
    &OPT_DIM,       &OPT_SPECTRUM,   &OPT_DIST,     &OPT_ROTATE, &OPT_ETA_ODE,
    &OPT_MU,        &OPT_INIT,       &OPT_TIME_ODE, &OPT_GRID,   &OPT_SEED,
    &OPT_RTOL,      &OPT_ATOL,       &OPT_METHOD,   &OPT_LINSOL, &OPT_PROJECT,
    &OPT_MAX_STEPS, &OPT_COORDS_ODE, &OPT_FORMAT,   &OPT_OUTPUT, NULL};

static json_t *stats_json(const am_ode_params *op, const am_ode_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "method", json_string(am_ode_method_name(op->method)));
    int bdf = op->method == AM_ODE_BDF;
    json_object_set_new(o, "nonlinear_solver", json_string(bdf ? "newton" : "fixed-point"));
    json_object_set_new(o, "linear_solver",
                        bdf ? json_string(am_ode_linsol_name(op->linsol)) : json_null());
    json_object_set_new(o, "rtol", json_real(op->rtol));
    json_object_set_new(o, "atol", json_real(op->atol));
    json_object_set_new(o, "max_steps", json_integer(op->max_steps));
    json_object_set_new(o, "project", json_boolean(op->project));
    json_object_set_new(o, "steps", json_integer(s->steps));
    json_object_set_new(o, "rhs_evals", json_integer(s->rhs_evals));
    json_object_set_new(o, "err_test_failures", json_integer(s->err_test_failures));
    json_object_set_new(o, "nonlin_iters", json_integer(s->nonlin_iters));
    json_object_set_new(o, "nonlin_failures", json_integer(s->nonlin_failures));
    json_object_set_new(o, "jac_evals", json_integer(s->jac_evals));
    json_object_set_new(o, "lin_setups", json_integer(s->lin_setups));
    json_object_set_new(o, "lin_iters", json_integer(s->lin_iters));
    json_object_set_new(o, "lin_failures", json_integer(s->lin_failures));
    json_object_set_new(o, "proj_evals", json_integer(s->proj_evals));
    json_object_set_new(o, "proj_failures", json_integer(s->proj_failures));
    json_object_set_new(o, "last_order", json_integer(s->last_order));
    json_object_set_new(o, "last_step", json_real(s->last_step));
    return o;
}

/* The resolved flags of ode. */
typedef struct {
    am_msgd_params mp;
    double horizon;
    am_grid grid;
    int coords;
    am_ode_params op;
} ode_cfg;

/* --method, --rtol, --atol, --max-steps, --project and --linsol into op (exits 2 on bad
 * usage); d is the dimension. */
static void ode_solver_parse(const cli_args *a, size_t d, am_ode_params *op)
{
    char err[256];
    *op = am_ode_params_default();
    if (am_ode_method_parse(cli_str(a, "method"), &op->method))
        cli_usage_error("--method must be adams or bdf, got '%s'", cli_str(a, "method"));
    op->rtol = cli_double(a, "rtol", 1e-15, 1, 0, 1);
    op->atol = cli_double(a, "atol", 0, 1, 0, 1);
    op->max_steps = (long)cli_int(a, "max-steps", 1, 1000000000000LL);
    op->project = cli_flag(a, "project");
    if (am_ode_linsol_parse(cli_str(a, "linsol"), &op->linsol))
        cli_usage_error("--linsol must be dense or gmres, got '%s'", cli_str(a, "linsol"));
    if (cli_given(a, "linsol") && op->method != AM_ODE_BDF)
        cli_usage_error("--linsol needs --method bdf (Adams uses no linear solver)");
    if (op->project && op->method != AM_ODE_BDF)
        cli_usage_error("--project needs --method bdf (CVODE projects only with BDF)");
    if (am_ode_params_check(op, err, sizeof err)) cli_usage_error("%s", err);
    if (op->method == AM_ODE_BDF && op->linsol == AM_ODE_LINSOL_DENSE && d > 4000)
        cli_usage_error("--method bdf --linsol dense needs --dim <= 4000, got %zu", d);
}

/* Every flag but --format and --output into c (exits 2 on bad usage). */
static void ode_parse(const cli_args *a, const am_problem *p, ode_cfg *c)
{
    c->mp = cli_limit_msgd(a, p);
    c->horizon = cli_double(a, "time", 0, 1e12, 1, 0);
    c->grid = cli_grid(a, c->horizon);
    c->coords = cli_flag(a, "coords");
    ode_solver_parse(a, p->dim, &c->op);
    cli_limit_coords_check(c->coords, c->grid.n, p->dim);
}

/* The JSON params: every option as resolved. */
static json_t *ode_json_params(const am_problem *p, const ode_cfg *c)
{
    const am_ode_params *op = &c->op;
    json_t *params = json_object();
    cli_params_problem(params, p);
    json_object_set_new(params, "eta", json_real(c->mp.eta));
    json_object_set_new(params, "mu", json_real(c->mp.mu));
    cli_params_limit(params, &c->mp, c->horizon, c->grid.n);
    json_object_set_new(params, "method", json_string(am_ode_method_name(op->method)));
    json_object_set_new(params, "rtol", json_real(op->rtol));
    json_object_set_new(params, "atol", json_real(op->atol));
    json_object_set_new(params, "max_steps", json_integer(op->max_steps));
    json_object_set_new(params, "linsol", json_string(am_ode_linsol_name(op->linsol)));
    json_object_set_new(params, "project", json_boolean(op->project));
    json_object_set_new(params, "coords", json_boolean(c->coords));
    return params;
}

/* Writes the trajectory (CSV or JSON) through --output. */
static void ode_write(const cli_args *a, int json, const am_problem *p, const ode_cfg *c,
                      const am_run_ode_result *res)
{
    cli_trajectory_write(a, "ode", json ? ode_json_params(p, c) : NULL,
                         json ? stats_json(&c->op, &res->stats) : NULL, res->t, res->err, res->norm,
                         c->coords ? res->h2 : NULL, c->grid.n, p->dim);
}

int cmd_ode(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "ode",
              "Solve the deterministic limit dV/dt = (Sigma V - (V'Sigma V) V)/(1-mu) with CVODE\n"
              "from the ensemble's initial point (replica 0's for --init random-each) and\n"
              "report err = 1 - (v1.V)^2/|V|^2 and |V| on the saved grid, with solver statistics.",
              ode_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    ode_cfg c;
    ode_parse(&a, p, &c);
    int json = cli_json(&a);

    am_run_ode_params rp = am_run_ode_params_default();
    rp.problem = p;
    rp.msgd = c.mp;
    rp.ode = c.op;
    rp.horizon = c.grid.horizon;
    rp.ngrid = c.grid.n;
    rp.coords = c.coords;
    am_run_ode_result res;
    char err[256];
    am_status st = am_run_ode(&rp, &res, err, sizeof err);
    if (st) cli_runtime_error("ode: %s", err);
    ode_write(&a, json, p, &c, &res);
    am_run_ode_result_free(&res);
    am_problem_free(p);
    return 0;
}
