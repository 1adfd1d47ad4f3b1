/*
 * cmd_compare.c -- `amsgd compare`: the discrete ensemble (`mc`), the global SDE ensemble
 * (`sde`) and the limit ODE (`ode`) with the same parameters on the same grid, and the
 * largest gaps sup_g |err_mc(t_g) - err_ode(t_g)|, sup_g |err_mc(t_g) - err_sde(t_g)|.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_compare.h"
#include "../core/am_rng.h"
#include "cli_common.h"
#include "commands.h"

static const cli_opt OPT_TIME_CMP = {"time", "T", "10", "horizon in continuous time t = k eta"};
static const cli_opt OPT_DT_CMP = {"dt", "H", "--eta", "Euler-Maruyama step of the SDE"};
static const cli_opt OPT_RTOL_CMP = {"rtol", "RTOL", "1e-9", "relative tolerance of CVODE"};
static const cli_opt OPT_ATOL_CMP = {"atol", "ATOL", "1e-13", "absolute tolerance of CVODE"};
static const cli_opt OPT_DDE_CMP = {"dde", NULL, NULL,
                                    "also the delay-differential limit at the lag tau eta of "
                                    "--delay const:TAU (a fourth curve, err_dde)"};

static const cli_opt *const compare_opts[] = {
    &OPT_DIM,       &OPT_SPECTRUM, &OPT_DIST,     &OPT_ROTATE,   &OPT_ETA,      &OPT_MU,
    &OPT_DELAY_IID, &OPT_INIT,     &OPT_TIME_CMP, &OPT_GRID,     &OPT_REPLICAS, &OPT_SEED,
    &OPT_THREADS,   &OPT_BLOWUP,   &OPT_DT_CMP,   &OPT_RTOL_CMP, &OPT_ATOL_CMP, &OPT_DDE_CMP,
    &OPT_FORMAT,    &OPT_PROGRESS, &OPT_OUTPUT,   NULL};

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
    if (horizon / mp.eta >= (double)AM_RNG_STEP_LIMIT || horizon / dt >= (double)AM_RNG_STEP_LIMIT)
        cli_usage_error("--time is more than the random streams' 2^48 steps of --eta or --dt");
    am_ode_params op = am_ode_params_default();
    op.rtol = cli_double(&a, "rtol", 0, 1, 1, 1);
    op.atol = cli_double(&a, "atol", 0, 1e300, 0, 0);
    am_grid grid = cli_grid(&a, horizon);
    am_ensemble_params ep = cli_ensemble_params(&a);
    int json = cli_json(&a);
    {
        char how[160]; /* the discrete ensemble and the SDE ensemble */
        snprintf(how, sizeof how, "%zu replicas x (%.3g + %.3g) steps x d %zu", ep.replicas,
                 horizon / mp.eta, horizon / dt, p->dim);
        cli_work_check(&a, (double)ep.replicas * (horizon / mp.eta + horizon / dt) * (double)p->dim,
                       how);
    }
    if (p->dist.kind == AM_DIST_STUDENT && !(p->dist.nu > 4))
        cli_usage_error("--dist: the SDE needs finite fourth moments (student:NU with NU > 4), "
                        "got '%s'",
                        cli_str(&a, "dist"));

    am_compare_params cp = am_compare_params_default();
    cp.problem = p;
    cp.msgd = mp;
    cp.dt = dt;
    cp.ode = op;
    cp.horizon = grid.horizon;
    cp.ngrid = grid.n;
    cp.ensemble = ep;
    int dde = cli_flag(&a, "dde");
    if (dde) {
        if (mp.delay.kind != AM_DELAY_CONST)
            cli_usage_error("--dde needs --delay const:TAU (the lag is TAU eta), got '%s'",
                            cli_str(&a, "delay"));
        cp.lag = mp.delay.param * mp.eta;
    }
    am_compare_result r;
    char err[320];
    cli_progress_start(&a, 1);
    am_status st = am_compare_run(&cp, &r, err, sizeof err);
    cli_progress_end();
    if (st == AM_ENOMEM && r.memory > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--grid %zu with %zu observables and --threads %d would need %.3g GB, "
                        "above the limit of %.3g GB",
                        grid.n, r.nobs, am_ensemble_threads(ep.threads), r.memory / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    if (st) cli_runtime_error("compare: %s", err);
    size_t n = r.ngrid;

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (!json) {
        fputs(dde ? "t,err_mc,err_mc_sem,err_sde,err_sde_sem,err_ode,err_dde\n"
                  : "t,err_mc,err_mc_sem,err_sde,err_sde_sem,err_ode\n",
              f);
        for (size_t g = 0; g < n; g++) {
            const double row[7] = {
                r.t[g],           r.err_mc[g],  r.err_mc_sem[g],         r.err_sde[g],
                r.err_sde_sem[g], r.err_ode[g], dde ? r.err_dde[g] : NAN};
            for (int j = 0; j < (dde ? 7 : 6); j++) {
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
        if (dde) json_object_set_new(params, "dde", json_true());
        json_t *root = cli_json_root("compare", params);
        json_object_set_new(root, "t", cli_json_doubles(r.t, n));
        json_object_set_new(root, "err_mc", cli_json_doubles(r.err_mc, n));
        json_object_set_new(root, "err_mc_sem", cli_json_doubles(r.err_mc_sem, n));
        json_object_set_new(root, "err_sde", cli_json_doubles(r.err_sde, n));
        json_object_set_new(root, "err_sde_sem", cli_json_doubles(r.err_sde_sem, n));
        json_object_set_new(root, "err_ode", cli_json_doubles(r.err_ode, n));
        json_object_set_new(root, "sup_mc_ode", cli_json_number(r.sup_mc_ode));
        json_object_set_new(root, "sup_mc_ode_sem", cli_json_number(r.sup_mc_ode_sem));
        json_object_set_new(root, "sup_mc_sde", cli_json_number(r.sup_mc_sde));
        json_object_set_new(root, "sup_mc_sde_sem", cli_json_number(r.sup_mc_sde_sem));
        if (dde) {
            json_object_set_new(root, "lag", json_real(cp.lag));
            json_object_set_new(root, "err_dde", cli_json_doubles(r.err_dde, n));
            json_object_set_new(root, "sup_mc_dde", cli_json_number(r.sup_mc_dde));
            json_object_set_new(root, "sup_mc_dde_sem", cli_json_number(r.sup_mc_dde_sem));
        }
        json_object_set_new(root, "diverged_mc", json_integer((json_int_t)r.diverged_mc));
        json_object_set_new(root, "diverged_sde", json_integer((json_int_t)r.diverged_sde));
        const am_ode_stats *os = &r.ode_stats;
        json_t *solver = json_object();
        json_object_set_new(solver, "steps", json_integer(os->steps));
        json_object_set_new(solver, "rhs_evals", json_integer(os->rhs_evals));
        json_object_set_new(solver, "err_test_failures", json_integer(os->err_test_failures));
        json_object_set_new(solver, "nonlin_failures", json_integer(os->nonlin_failures));
        json_object_set_new(root, "ode_solver", solver);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
    am_compare_result_free(&r);
    am_problem_free(p);
    return 0;
}
