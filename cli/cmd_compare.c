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

/* The resolved flags of compare. */
typedef struct {
    am_msgd_params mp;
    double horizon, dt;
    am_ode_params op;
    am_grid grid;
    am_ensemble_params ep;
} compare_cfg;

/* The flags read before --format into c (exits 2 on bad usage). */
static void compare_parse(const cli_args *a, const am_problem *p, compare_cfg *c)
{
    c->mp = cli_msgd_params(a, p);
    cli_refuse_workers_delay(a, &c->mp);
    c->horizon = cli_double(a, "time", 0, 1e12, 1, 0);
    c->dt = cli_given(a, "dt") ? cli_double(a, "dt", 0, 1e6, 1, 0) : c->mp.eta;
    if (c->horizon / c->mp.eta >= (double)AM_RNG_STEP_LIMIT ||
        c->horizon / c->dt >= (double)AM_RNG_STEP_LIMIT)
        cli_usage_error("--time is more than the random streams' 2^48 steps of --eta or --dt");
    c->op = am_ode_params_default();
    c->op.rtol = cli_double(a, "rtol", 0, 1, 1, 1);
    c->op.atol = cli_double(a, "atol", 0, 1e300, 0, 0);
    c->grid = cli_grid(a, c->horizon);
    c->ep = cli_ensemble_params(a);
}

/* The checks after --format: total work (the discrete and the SDE ensembles) and the SDE's
 * fourth moments (exits 2). */
static void compare_check(const cli_args *a, const am_problem *p, const compare_cfg *c)
{
    char how[160];
    const double h = c->horizon;
    snprintf(how, sizeof how, "%zu replicas x (%.3g + %.3g) steps x d %zu", c->ep.replicas,
             h / c->mp.eta, h / c->dt, p->dim);
    cli_work_check(a, (double)c->ep.replicas * (h / c->mp.eta + h / c->dt) * (double)p->dim, how);
    if (p->dist.kind == AM_DIST_STUDENT && !(p->dist.nu > 4)) cli_sde_moments_error(a);
}

static void compare_csv(FILE *f, int dde, const am_compare_result *r)
{
    fputs(dde ? "t,err_mc,err_mc_sem,err_sde,err_sde_sem,err_ode,err_dde\n"
              : "t,err_mc,err_mc_sem,err_sde,err_sde_sem,err_ode\n",
          f);
    for (size_t g = 0; g < r->ngrid; g++) {
        const double row[7] = {
            r->t[g],           r->err_mc[g],  r->err_mc_sem[g],         r->err_sde[g],
            r->err_sde_sem[g], r->err_ode[g], dde ? r->err_dde[g] : NAN};
        for (int j = 0; j < (dde ? 7 : 6); j++) {
            if (j) fputc(',', f);
            cli_csv_double(f, row[j]);
        }
        fputc('\n', f);
    }
}

/* The JSON params: every option as resolved. */
static json_t *compare_json_params(const am_problem *p, const compare_cfg *c, int dde, size_t n)
{
    json_t *params = json_object();
    cli_params_problem(params, p);
    cli_params_msgd(params, &c->mp);
    json_object_set_new(params, "time", json_real(c->horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)n));
    json_object_set_new(params, "replicas", json_integer((json_int_t)c->ep.replicas));
    json_object_set_new(params, "dt", json_real(c->dt));
    json_object_set_new(params, "rtol", json_real(c->op.rtol));
    json_object_set_new(params, "atol", json_real(c->op.atol));
    if (dde) json_object_set_new(params, "dde", json_true());
    return params;
}

/* The curves, the largest gaps and the solver statistics under root. */
static void compare_json_results(json_t *root, const am_compare_params *cp, int dde,
                                 const am_compare_result *r)
{
    const size_t n = r->ngrid;
    json_object_set_new(root, "t", cli_json_doubles(r->t, n));
    json_object_set_new(root, "err_mc", cli_json_doubles(r->err_mc, n));
    json_object_set_new(root, "err_mc_sem", cli_json_doubles(r->err_mc_sem, n));
    json_object_set_new(root, "err_sde", cli_json_doubles(r->err_sde, n));
    json_object_set_new(root, "err_sde_sem", cli_json_doubles(r->err_sde_sem, n));
    json_object_set_new(root, "err_ode", cli_json_doubles(r->err_ode, n));
    json_object_set_new(root, "sup_mc_ode", cli_json_number(r->sup_mc_ode));
    json_object_set_new(root, "sup_mc_ode_sem", cli_json_number(r->sup_mc_ode_sem));
    json_object_set_new(root, "sup_mc_sde", cli_json_number(r->sup_mc_sde));
    json_object_set_new(root, "sup_mc_sde_sem", cli_json_number(r->sup_mc_sde_sem));
    if (dde) {
        json_object_set_new(root, "lag", json_real(cp->lag));
        json_object_set_new(root, "err_dde", cli_json_doubles(r->err_dde, n));
        json_object_set_new(root, "sup_mc_dde", cli_json_number(r->sup_mc_dde));
        json_object_set_new(root, "sup_mc_dde_sem", cli_json_number(r->sup_mc_dde_sem));
    }
    json_object_set_new(root, "diverged_mc", json_integer((json_int_t)r->diverged_mc));
    json_object_set_new(root, "diverged_sde", json_integer((json_int_t)r->diverged_sde));
    const am_ode_stats *os = &r->ode_stats;
    json_t *solver = json_object();
    json_object_set_new(solver, "steps", json_integer(os->steps));
    json_object_set_new(solver, "rhs_evals", json_integer(os->rhs_evals));
    json_object_set_new(solver, "err_test_failures", json_integer(os->err_test_failures));
    json_object_set_new(solver, "nonlin_failures", json_integer(os->nonlin_failures));
    json_object_set_new(root, "ode_solver", solver);
}

/* Runs the comparison into r (exits 2 over the memory limit, 3 on other failures). */
static void compare_run(const cli_args *a, const compare_cfg *c, const am_compare_params *cp,
                        am_compare_result *r)
{
    char err[320];
    cli_progress_start(a, 1);
    am_status st = am_compare_run(cp, r, err, sizeof err);
    cli_progress_end();
    if (st == AM_ENOMEM && r->memory > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--grid %zu with %zu observables and --threads %d would need %.3g GB, "
                        "above the limit of %.3g GB",
                        c->grid.n, r->nobs, am_ensemble_threads(c->ep.threads), r->memory / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    if (st) cli_runtime_error("compare: %s", err);
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
    compare_cfg c;
    compare_parse(&a, p, &c);
    int json = cli_json(&a);
    compare_check(&a, p, &c);

    am_compare_params cp = am_compare_params_default();
    cp.problem = p;
    cp.msgd = c.mp;
    cp.dt = c.dt;
    cp.ode = c.op;
    cp.horizon = c.grid.horizon;
    cp.ngrid = c.grid.n;
    cp.ensemble = c.ep;
    int dde = cli_flag(&a, "dde");
    if (dde) {
        if (c.mp.delay.kind != AM_DELAY_CONST)
            cli_usage_error("--dde needs --delay const:TAU (the lag is TAU eta), got '%s'",
                            cli_str(&a, "delay"));
        cp.lag = c.mp.delay.param * c.mp.eta;
    }
    am_compare_result r;
    compare_run(&a, &c, &cp, &r);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (!json) {
        compare_csv(f, dde, &r);
    } else {
        json_t *root = cli_json_root("compare", compare_json_params(p, &c, dde, r.ngrid));
        compare_json_results(root, &cp, dde, &r);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
    am_compare_result_free(&r);
    am_problem_free(p);
    return 0;
}
