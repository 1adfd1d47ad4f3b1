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
    size_t d = p->dim;
    char err[256];
    am_msgd_params mp = am_msgd_params_default();
    mp.eta = cli_double(&a, "eta", 0, 1e6, 1, 0);
    mp.mu = cli_double(&a, "mu", 0, 1, 0, 1);
    if (am_msgd_init_parse(cli_str(&a, "init"), d, &mp.init, err, sizeof err))
        cli_usage_error("--init: %s", err);
    mp.seed = cli_u64(&a, "seed");
    if (am_msgd_params_check(p, &mp, err, sizeof err)) cli_usage_error("%s", err);
    double lag = cli_double(&a, "lag", 0, 1e12, 1, 0);
    double horizon = cli_double(&a, "time", 0, 1e12, 1, 0);
    am_grid grid = cli_grid(&a, horizon);
    int coords = cli_flag(&a, "coords");
    am_dde_params dp = am_dde_params_default();
    dp.rtol = cli_double(&a, "rtol", 1e-14, 1, 0, 1);
    dp.atol = cli_double(&a, "atol", 0, 1, 0, 1);
    if (horizon / lag > (double)dp.max_segments)
        cli_usage_error("--time / --lag = %.3g lag intervals is more than %zu", horizon / lag,
                        dp.max_segments);
    if (16.0 * (double)grid.n * (double)d > (double)AM_MEMORY_LIMIT) /* the solver's two copies */
        cli_usage_error("--grid %zu with --dim %zu: the saved trajectory needs %.3g GB, above the "
                        "limit of %.3g GB",
                        grid.n, d, 16.0 * (double)grid.n * (double)d / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    if (coords && 8.0 * (double)grid.n * (double)d > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--coords with --grid %zu and --dim %zu needs more memory than the limit",
                        grid.n, d);
    int json = cli_json(&a);

    am_status st;
    am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    if (!m) cli_runtime_error("dde: %s", am_strerror(st));
    double *v0 = malloc(d * sizeof *v0), *t = malloc(grid.n * sizeof *t);
    double *e = malloc(grid.n * sizeof *e), *nrm = malloc(grid.n * sizeof *nrm);
    double *h2 = coords ? malloc(grid.n * d * sizeof *h2) : NULL;
    if (!v0 || !t || !e || !nrm || (coords && !h2)) cli_runtime_error("out of memory");
    am_msgd_initial(m, 0, v0); /* the point every replica starts from (replica 0 if each) */
    am_msgd_free(m);
    am_grid_times(&grid, t);

    am_dde *s = am_dde_alloc(p, &dp, &st, NULL, 0);
    if (!s) cli_runtime_error("dde: cannot build the solver: %s", am_strerror(st));
    am_ode_output out = {e, nrm, h2, NULL};
    am_dde_stats stats;
    err[0] = 0;
    st = am_dde_solve(s, mp.mu, lag, v0, t, grid.n, &out, &stats, err, sizeof err);
    if (st) cli_runtime_error("dde: %s", err[0] ? err : am_strerror(st));
    if (!isnan(stats.diverged_at))
        fprintf(stderr, "amsgd: warning: the delay solution diverged at t = %.6g\n",
                stats.diverged_at);

    cli_out o;
    FILE *f = cli_out_begin(&o, &a);
    if (!json) {
        cli_trajectory_csv(f, t, e, nrm, coords ? h2 : NULL, grid.n, d);
    } else {
        char buf[64];
        json_t *params = json_object();
        cli_params_problem(params, p);
        json_object_set_new(params, "eta", json_real(mp.eta));
        json_object_set_new(params, "mu", json_real(mp.mu));
        json_object_set_new(params, "lag", json_real(lag));
        am_msgd_init_format(&mp.init, buf, sizeof buf);
        json_object_set_new(params, "init", json_string(buf));
        json_object_set_new(params, "init_replica", json_integer(0));
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)mp.seed);
        json_object_set_new(params, "seed", json_string(buf));
        json_object_set_new(params, "time", json_real(horizon));
        json_object_set_new(params, "grid", json_integer((json_int_t)grid.n));
        json_object_set_new(params, "rtol", json_real(dp.rtol));
        json_object_set_new(params, "atol", json_real(dp.atol));
        json_object_set_new(params, "coords", json_boolean(coords));
        json_t *root = cli_json_root("dde", params);
        cli_trajectory_json(root, t, e, nrm, coords ? h2 : NULL, grid.n, d);
        json_object_set_new(root, "solver", stats_json(&dp, &stats));
        cli_out_json(f, root);
    }
    cli_out_commit(&o);
    am_dde_free(s);
    free(v0), free(t), free(e), free(nrm), free(h2);
    am_problem_free(p);
    return 0;
}
