/*
 * embed.c -- using the amsgd library from C: build the streaming-PCA problem
 * Sigma = diag(4,3,2,1), run an Async-MSGD ensemble (mu = 0.5, constant delay 10) with
 * streaming statistics, and hold its stationary error against the OU prediction
 *   E[err] ~ eta/(2(1-mu)) sum_{i>=2} alpha_i1^2/(lambda_1 - lambda_i).
 * Build against an installed library (docs/README.md, "Install and linking"):
 *   cc embed.c $(pkg-config --cflags --libs amsgd) -o embed
 *   cc -static embed.c $(pkg-config --cflags --libs --static amsgd) -o embed
 */
#include <math.h>
#include <stdio.h>

#include <amsgd/amsgd.h>

int main(void)
{
    /* The library checks every GSL status itself and leaves GSL's process-wide error
     * handler alone: a program turns GSL's aborting default off once, at start-up. */
    am_common_gsl_handler_off();

    const double lambda[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_GAUSSIAN, 0};
    am_status st;
    char err[256];
    am_problem *p = am_problem_alloc(4, lambda, dist, 0, &st, err, sizeof err);
    if (!p) {
        fprintf(stderr, "embed: %s\n", err);
        return st == AM_EINVAL ? 2 : 3;
    }

    am_msgd_params par = am_msgd_params_default();
    par.eta = 1e-3;
    par.mu = 0.5;
    par.init.kind = AM_INIT_EIGEN; /* start at the optimum: only the stationary fluctuations */
    par.init.j = 1;
    if (am_delay_parse("const:10", &par.delay, err, sizeof err) != AM_OK) {
        fprintf(stderr, "embed: %s\n", err);
        return 2;
    }
    am_msgd *engine = am_msgd_alloc(p, &par, &st, err, sizeof err);
    if (!engine) {
        fprintf(stderr, "embed: %s\n", err);
        return 3;
    }

    /* save at t = 0, 1, ..., 8 (steps t/eta) */
    am_grid grid = {9, 8.0};
    uint64_t steps[9];
    am_grid_steps(&grid, par.eta, steps);
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = 2000;
    am_ensemble_result *res;
    st = am_ensemble_run(am_msgd_model(engine), steps, grid.n, &ep, &res);
    if (st != AM_OK) {
        fprintf(stderr, "embed: %s\n", am_strerror(st));
        return 3;
    }

    /* the last saved time, observable 0 (the error) */
    const am_stats *e = &res->obs[(grid.n - 1) * res->nobs + 0];
    double predicted = am_theory_stationary_error(p, par.eta, par.mu);
    printf("stationary error at t = 8: %.5f +- %.5f (predicted %.5f), diverged %zu of %zu\n",
           e->mean, am_stats_sem(e), predicted, res->diverged, res->replicas);
    int ok = fabs(e->mean - predicted) < 0.1 * predicted + 5 * am_stats_sem(e);

    am_ensemble_result_free(res);
    am_msgd_free(engine);
    am_problem_free(p);
    return ok ? 0 : 1;
}
