/*
 * test_compare.c -- the three engines side by side: the noise-free discrete recursion
 * approaches the ODE at rate O(eta) (against the closed form of theory/), and
 * `amsgd compare` writes its columns and keys with gaps of the right size.
 */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "../core/am_grid.h"
#include "../montecarlo/am_msgd.h"
#include "../theory/am_theory.h"
#include "test_util.h"

/* sup over the grid of |err_mc - err_ode| for `--dist expected` at step eta */
static double expected_gap(double eta, double mu, const char *delay)
{
    const double l[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_EXPECTED, 0};
    am_problem *p = am_problem_alloc(4, l, dist, 0, NULL, NULL, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = eta;
    par.mu = mu;
    par.init.kind = AM_INIT_ANGLE;
    par.init.theta = 1.3;
    char err[100];
    cr_assert_eq(am_delay_parse(delay, &par.delay, err, sizeof err), AM_OK);
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    enum { G = 41 };
    am_grid grid = {G, 4.0};
    uint64_t k[G];
    double t[G];
    am_grid_steps(&grid, eta, k);
    am_grid_times(&grid, t);
    am_ensemble_params ep = {1, 1, 0};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, G, &ep, &res), AM_OK);
    double h0[4], gap = 0;
    am_msgd_initial(m, 0, h0);
    for (size_t g = 0; g < G; g++) {
        double e = am_theory_ode_error(p, mu, h0, t[g]);
        double d = fabs(res->obs[g * 2].mean - e);
        if (d > gap) gap = d;
    }
    am_ensemble_result_free(res);
    am_msgd_free(m);
    am_problem_free(p);
    return gap;
}

/* Halving eta halves the gap: the local slope of log gap over log eta tends to 1. */
static void check_order(double mu, const char *delay)
{
    const double etas[4] = {4e-3, 2e-3, 1e-3, 5e-4};
    double gaps[4];
    for (int i = 0; i < 4; i++)
        gaps[i] = expected_gap(etas[i], mu, delay);
    for (int i = 1; i < 4; i++) {
        double slope = log(gaps[i - 1] / gaps[i]) / log(etas[i - 1] / etas[i]);
        cr_assert(
            fabs(slope - 1.0) < 0.1,
            "mu=%g delay=%s: gap %.4g at eta=%g, %.4g at eta=%g, local order %.3f (expected 1)", mu,
            delay, gaps[i - 1], etas[i - 1], gaps[i], etas[i], slope);
    }
}

Test(compare, expected_recursion_order_one)
{
    check_order(0.0, "none");
}
Test(compare, expected_recursion_order_one_momentum)
{
    check_order(0.7, "none");
}
/* a constant delay tau = 4 is a fixed number of steps, so its effect is also O(eta) */
Test(compare, expected_recursion_order_one_delay)
{
    check_order(0.5, "const:4");
}

Test(compare, cli_columns_keys_and_gaps)
{
    test_run r = test_amsgd("compare --dist expected --eta 1e-3 --mu 0.5 --time 3 --grid 7 "
                            "--replicas 4 --format json");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    json_error_t e;
    json_t *root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "invalid JSON: %s", e.text);
    const char *keys[] = {"command", "version",    "params",     "t",
                          "err_mc",  "err_mc_sem", "err_sde",    "err_sde_sem",
                          "err_ode", "sup_mc_ode", "sup_mc_sde", "sup_mc_sde_sem"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_not_null(json_object_get(root, keys[i]), "compare JSON lacks '%s'", keys[i]);
    /* noise-free: mc is the recursion, sde the Euler scheme of the ODE with dt = eta; both sit
       O(eta) from the ODE (at most a few times 1e-3 here), far below the O(1) error scale */
    double g_ode = json_number_value(json_object_get(root, "sup_mc_ode"));
    double g_sde = json_number_value(json_object_get(root, "sup_mc_sde"));
    cr_assert(g_ode > 0 && g_ode < 5e-3, "sup |mc - ode| = %g for eta = 1e-3", g_ode);
    cr_assert(g_sde < 5e-3, "sup |mc - sde| = %g for eta = 1e-3", g_sde);
    json_decref(root);
    test_run_free(&r);

    r = test_amsgd("compare --eta 2e-3 --time 1 --grid 3 --replicas 50");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strncmp(r.out, "t,err_mc,err_mc_sem,err_sde,err_sde_sem,err_ode\n", 48) == 0,
              "CSV header: %s", r.out);
    test_run_free(&r);

    r = test_amsgd("compare --mu 1 --time 1");
    cr_assert_eq(r.status, 2);
    cr_assert_eq(r.out[0], 0);
    test_run_free(&r);
}
