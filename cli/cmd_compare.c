/*
 * cmd_compare.c -- `amsgd compare`: the discrete ensemble (`mc`), the global SDE ensemble
 * (`sde`) and the limit ODE (`ode`) with the same parameters on the same grid, and the
 * largest gaps sup_g |err_mc(t_g) - err_ode(t_g)|, sup_g |err_mc(t_g) - err_sde(t_g)|.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"
#include "commands.h"
#include "engines.h"

static const cli_opt OPT_TIME_CMP = {"time", "T", "10", "horizon in continuous time t = k eta"};
static const cli_opt OPT_DT_CMP = {"dt", "H", "eta", "Euler-Maruyama step of the SDE"};
static const cli_opt OPT_RTOL_CMP = {"rtol", "R", "1e-9", "relative tolerance of CVODE"};
static const cli_opt OPT_ATOL_CMP = {"atol", "A", "1e-13", "absolute tolerance of CVODE"};

static const cli_opt *const compare_opts[] = {
    &OPT_DIM,      &OPT_SPECTRUM,  &OPT_DIST,    &OPT_ROTATE,   &OPT_ETA,
    &OPT_MU,       &OPT_DELAY_IID, &OPT_INIT,    &OPT_TIME_CMP, &OPT_GRID,
    &OPT_REPLICAS, &OPT_SEED,      &OPT_THREADS, &OPT_BLOWUP,   &OPT_DT_CMP,
    &OPT_RTOL_CMP, &OPT_ATOL_CMP,  &OPT_FORMAT,  &OPT_OUTPUT,   NULL};

/* Largest |a - b| over the grid (finite entries), its index, or -1 if none. */
static long sup_gap(const double *a, const double *b, size_t n, double *gap)
{
    long arg = -1;
    *gap = NAN;
    for (size_t g = 0; g < n; g++) {
        double d = fabs(a[g] - b[g]);
        if (isfinite(d) && (arg < 0 || d > *gap)) {
            *gap = d;
            arg = (long)g;
        }
    }
    return arg;
}

int cmd_compare(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "compare",
              "Run the discrete ensemble (mc), the global SDE ensemble (sde) and the limit ODE\n"
              "(ode) with the same parameters on the same grid, and report the three mean error\n"
              "curves and their largest gaps. The SDE and the ODE are the limits without delay;\n"
              "--delay applies to the discrete ensemble only.",
              compare_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    am_msgd_params mp = cli_msgd_params(&a, p);
    if (mp.delay.kind == AM_DELAY_WORKERS)
        cli_usage_error("--delay workers:P:DIST is not available in compare (use amsgd mc), got "
                        "'%s'",
                        cli_str(&a, "delay"));
    double horizon = cli_double(&a, "time", 0, 1e12, 1, 0);
    double dt = cli_given(&a, "dt") ? cli_double(&a, "dt", 0, 1e6, 1, 0) : mp.eta;
    if (horizon / mp.eta > 1e15 || horizon / dt > 1e15)
        cli_usage_error("--time is more than 1e15 steps of --eta or --dt");
    am_ode_params op = am_ode_params_default();
    op.rtol = cli_double(&a, "rtol", 0, 1, 1, 1);
    op.atol = cli_double(&a, "atol", 0, 1e300, 0, 0);
    am_grid grid = cli_grid(&a, horizon);
    am_ensemble_params ep = cli_ensemble_params(&a);
    int json = cli_json(&a);
    if (p->dist.kind == AM_DIST_STUDENT && !(p->dist.nu > 4))
        cli_usage_error("--dist: the SDE needs finite fourth moments (student:NU with NU > 4), "
                        "got '%s'",
                        cli_str(&a, "dist"));

    mc_run mc, sde;
    am_status st = mc_run_ensemble(p, &mp, &grid, &ep, &mc);
    if (st) cli_runtime_error("compare: mc: %s", am_strerror(st));
    cli_sde_opts so = {0, 1, AM_SDE_SAMPLER_FAST, dt};
    st = cli_run_sde(p, &mp, &so, &grid, &ep, &sde);
    if (st) cli_runtime_error("compare: sde: %s", am_strerror(st));
    size_t n = grid.n, no = mc.res->nobs, ns = sde.res->nobs;
    double *err_ode = malloc(n * sizeof *err_ode), *norm_ode = malloc(n * sizeof *norm_ode);
    double *cols = malloc(4 * n * sizeof *cols);
    if (!err_ode || !norm_ode || !cols) cli_runtime_error("out of memory");
    am_ode_stats ostats;
    st = cli_run_ode(p, &mp, &op, mc.t, n, err_ode, norm_ode, &ostats);
    if (st) cli_runtime_error("compare: ode: %s", am_strerror(st));

    double *e_mc = cols, *s_mc = cols + n, *e_sde = cols + 2 * n, *s_sde = cols + 3 * n;
    for (size_t g = 0; g < n; g++) {
        e_mc[g] = mc.res->obs[g * no].mean;
        s_mc[g] = am_stats_sem(&mc.res->obs[g * no]);
        e_sde[g] = sde.res->obs[g * ns].mean;
        s_sde[g] = am_stats_sem(&sde.res->obs[g * ns]);
        if (mc.res->alive[g] == 0) e_mc[g] = s_mc[g] = NAN;
        if (sde.res->alive[g] == 0) e_sde[g] = s_sde[g] = NAN;
    }
    double gap_ode, gap_sde;
    long i_ode = sup_gap(e_mc, err_ode, n, &gap_ode);
    long i_sde = sup_gap(e_mc, e_sde, n, &gap_sde);
    double gap_ode_sem = i_ode >= 0 ? s_mc[i_ode] : NAN;
    double gap_sde_sem = i_sde >= 0 ? hypot(s_mc[i_sde], s_sde[i_sde]) : NAN;

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (!json) {
        fputs("t,err_mc,err_mc_sem,err_sde,err_sde_sem,err_ode\n", f);
        for (size_t g = 0; g < n; g++) {
            const double row[6] = {mc.t[g], e_mc[g], s_mc[g], e_sde[g], s_sde[g], err_ode[g]};
            for (int j = 0; j < 6; j++) {
                if (j) fputc(',', f);
                cli_csv_double(f, row[j]);
            }
            fputc('\n', f);
        }
    } else {
        json_t *params = json_object();
        cli_params_problem(params, p);
        cli_params_msgd(params, &mp);
        json_object_set_new(params, "time", json_real(horizon));
        json_object_set_new(params, "grid", json_integer((json_int_t)n));
        json_object_set_new(params, "replicas", json_integer((json_int_t)ep.replicas));
        json_object_set_new(params, "dt", json_real(dt));
        json_object_set_new(params, "rtol", json_real(op.rtol));
        json_object_set_new(params, "atol", json_real(op.atol));
        json_t *root = cli_json_root("compare", params);
        json_object_set_new(root, "t", cli_json_doubles(mc.t, n));
        json_object_set_new(root, "err_mc", cli_json_doubles(e_mc, n));
        json_object_set_new(root, "err_mc_sem", cli_json_doubles(s_mc, n));
        json_object_set_new(root, "err_sde", cli_json_doubles(e_sde, n));
        json_object_set_new(root, "err_sde_sem", cli_json_doubles(s_sde, n));
        json_object_set_new(root, "err_ode", cli_json_doubles(err_ode, n));
        json_object_set_new(root, "sup_mc_ode", cli_json_number(gap_ode));
        json_object_set_new(root, "sup_mc_ode_sem", cli_json_number(gap_ode_sem));
        json_object_set_new(root, "sup_mc_sde", cli_json_number(gap_sde));
        json_object_set_new(root, "sup_mc_sde_sem", cli_json_number(gap_sde_sem));
        json_object_set_new(root, "diverged_mc", json_integer((json_int_t)mc.res->diverged));
        json_object_set_new(root, "diverged_sde", json_integer((json_int_t)sde.res->diverged));
        json_t *solver = json_object();
        json_object_set_new(solver, "steps", json_integer(ostats.steps));
        json_object_set_new(solver, "rhs_evals", json_integer(ostats.rhs_evals));
        json_object_set_new(solver, "err_test_failures", json_integer(ostats.err_test_failures));
        json_object_set_new(solver, "nonlin_failures", json_integer(ostats.nonlin_failures));
        json_object_set_new(root, "ode_solver", solver);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
    free(err_ode);
    free(norm_ode);
    free(cols);
    mc_run_free(&mc);
    mc_run_free(&sde);
    am_problem_free(p);
    return 0;
}
