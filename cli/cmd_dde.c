/*
 * cmd_dde.c -- `amsgd dde`: the delay-differential limit of Async-MSGD under inverse delay
 * scaling (tau eta = s fixed as eta -> 0, theory.md section 9),
 *
 *   (1-mu) V'(t) = Sigma W - (W^T Sigma W) W,   W = V(t - s),   V(t) = v_0 for t <= 0,
 *
 * solved by the method of steps of solvers/am_dde.h from the ensemble's initial point, with
 * err = 1 - (v1.V)^2/|V|^2 and |V| on the common grid and the solver's statistics.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../solvers/am_dde.h"
#include "cli_common.h"
#include "commands.h"

static const cli_opt OPT_TIME_DDE = {"time", "T", "10", "horizon in continuous time"};
static const cli_opt OPT_ETA_DDE = {"eta", "E", "5e-4",
                                    "step size eta > 0; recorded only (the DDE is the eta -> 0 "
                                    "limit at fixed lag)"};
static const cli_opt OPT_LAG = {"lag", "LAG", NULL,
                                "lag s = tau eta > 0 in continuous time (required); the delay "
                                "of tau steps at step eta has lag tau eta"};
static const cli_opt OPT_RTOL_DDE = {"rtol", "RTOL", "1e-10", "relative tolerance, in [1e-14, 1)"};
static const cli_opt OPT_ATOL_DDE = {"atol", "ATOL", "1e-13", "absolute tolerance, in [0, 1)"};
static const cli_opt OPT_COORDS_DDE = {"coords", NULL, NULL,
                                       "also report each h_i^2 = ((Q^T V)_i)^2"};

static const cli_opt *const dde_opts[] = {
    &OPT_DIM,      &OPT_SPECTRUM,   &OPT_DIST,     &OPT_ROTATE, &OPT_ETA_DDE, &OPT_MU,
    &OPT_INIT,     &OPT_LAG,        &OPT_TIME_DDE, &OPT_GRID,   &OPT_SEED,    &OPT_RTOL_DDE,
    &OPT_ATOL_DDE, &OPT_COORDS_DDE, &OPT_FORMAT,   &OPT_OUTPUT, NULL};

static json_t *stats_json(const am_dde_params *dp, const am_dde_stats *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "method", json_string("steps-cgl13"));
    json_object_set_new(o, "rtol", json_real(dp->rtol));
    json_object_set_new(o, "atol", json_real(dp->atol));
    json_object_set_new(o, "segments", json_integer((json_int_t)s->segments));
    json_object_set_new(o, "subintervals", json_integer((json_int_t)s->subintervals));
    json_object_set_new(o, "rhs_evals", json_integer((json_int_t)s->rhs_evals));
    json_object_set_new(o, "error_estimate", cli_json_number(s->error_estimate));
    json_object_set_new(o, "diverged_at", cli_json_number(s->diverged_at));
    return o;
}

/* The resolved flags of dde. */
typedef struct {
    am_msgd_params mp;
    double lag, horizon;
    am_grid grid;
    int coords;
    am_dde_params dp;
} dde_cfg;

/* The solution on the grid, and the solver that made it. */
typedef struct {
    double *v0, *t, *e, *nrm, *h2;
    am_dde *s;
    am_dde_stats stats;
} dde_sol;

/* Every flag but --lag's presence, --format and --output into c (exits 2 on bad usage). */
static void dde_parse(const cli_args *a, const am_problem *p, dde_cfg *c)
{
    const size_t d = p->dim;
    c->mp = cli_limit_msgd(a, p);
    c->lag = cli_double(a, "lag", 0, 1e12, 1, 0);
    c->horizon = cli_double(a, "time", 0, 1e12, 1, 0);
    c->grid = cli_grid(a, c->horizon);
    c->coords = cli_flag(a, "coords");
    c->dp = am_dde_params_default();
    c->dp.rtol = cli_double(a, "rtol", 1e-14, 1, 0, 1);
    c->dp.atol = cli_double(a, "atol", 0, 1, 0, 1);
    if (c->horizon / c->lag > (double)c->dp.max_segments)
        cli_usage_error("--time / --lag = %.3g lag intervals is more than %zu", c->horizon / c->lag,
                        c->dp.max_segments);
    const size_t n = c->grid.n;
    if (16.0 * (double)n * (double)d > (double)AM_MEMORY_LIMIT) /* the solver's two copies */
        cli_usage_error("--grid %zu with --dim %zu: the saved trajectory needs %.3g GB, above the "
                        "limit of %.3g GB",
                        n, d, 16.0 * (double)n * (double)d / 1e9, (double)AM_MEMORY_LIMIT / 1e9);
    cli_limit_coords_check(c->coords, n, d);
}

/* Solves the delay equation from the ensemble's initial point (exits 3 on failure). */
static void dde_solve(const am_problem *p, const dde_cfg *c, dde_sol *o)
{
    const size_t d = p->dim, n = c->grid.n;
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &c->mp, &st, NULL, 0);
    if (!m) cli_runtime_error("dde: %s", am_strerror(st));
    o->v0 = malloc(d * sizeof *o->v0), o->t = malloc(n * sizeof *o->t);
    o->e = malloc(n * sizeof *o->e), o->nrm = malloc(n * sizeof *o->nrm);
    o->h2 = c->coords ? malloc(n * d * sizeof *o->h2) : NULL;
    if (!o->v0 || !o->t || !o->e || !o->nrm || (c->coords && !o->h2))
        cli_runtime_error("out of memory");
    am_msgd_initial(m, 0, o->v0); /* the point every replica starts from (replica 0 if each) */
    am_msgd_free(m);
    am_grid_times(&c->grid, o->t);

    o->s = am_dde_alloc(p, &c->dp, &st, NULL, 0);
    if (!o->s) cli_runtime_error("dde: cannot build the solver: %s", am_strerror(st));
    am_ode_output out = {o->e, o->nrm, o->h2, NULL};
    char err[256] = "";
    st = am_dde_solve(o->s, c->mp.mu, c->lag, o->v0, o->t, n, &out, &o->stats, err, sizeof err);
    if (st) cli_runtime_error("dde: %s", err[0] ? err : am_strerror(st));
    if (!isnan(o->stats.diverged_at))
        fprintf(stderr, "amsgd: warning: the delay solution diverged at t = %.6g\n",
                o->stats.diverged_at);
}

/* The JSON params: every option as resolved. */
static json_t *dde_json_params(const am_problem *p, const dde_cfg *c)
{
    json_t *params = json_object();
    cli_params_problem(params, p);
    json_object_set_new(params, "eta", json_real(c->mp.eta));
    json_object_set_new(params, "mu", json_real(c->mp.mu));
    json_object_set_new(params, "lag", json_real(c->lag));
    cli_params_limit(params, &c->mp, c->horizon, c->grid.n);
    json_object_set_new(params, "rtol", json_real(c->dp.rtol));
    json_object_set_new(params, "atol", json_real(c->dp.atol));
    json_object_set_new(params, "coords", json_boolean(c->coords));
    return params;
}

/* Writes the trajectory (CSV or JSON) through --output. */
static void dde_write(const cli_args *a, int json, const am_problem *p, const dde_cfg *c,
                      const dde_sol *s)
{
    cli_trajectory_write(a, "dde", json ? dde_json_params(p, c) : NULL,
                         json ? stats_json(&c->dp, &s->stats) : NULL, s->t, s->e, s->nrm,
                         c->coords ? s->h2 : NULL, c->grid.n, p->dim);
}

int cmd_dde(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "dde",
              "Solve the delay-differential limit (1-mu) V'(t) = Sigma W - (W'Sigma W) W with\n"
              "W = V(t - s) and V = v0 for t <= 0 (the eta -> 0 limit at a fixed lag s = tau eta)\n"
              "by the method of steps, from the ensemble's initial point, and report\n"
              "err = 1 - (v1.V)^2/|V|^2 and |V| on the saved grid.",
              dde_opts, argc, argv);
    if (!cli_given(&a, "lag")) cli_usage_error("--lag LAG is required (the lag s = tau eta > 0)");
    am_problem *p = cli_problem(&a);
    dde_cfg c;
    dde_parse(&a, p, &c);
    int json = cli_json(&a);
    dde_sol s;
    dde_solve(p, &c, &s);
    dde_write(&a, json, p, &c, &s);
    am_dde_free(s.s);
    free(s.v0), free(s.t), free(s.e), free(s.nrm), free(s.h2);
    am_problem_free(p);
    return 0;
}
