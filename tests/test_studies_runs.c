/*
 * test_studies_runs.c -- the studies of studies/ called as library functions, not through
 * the binary: am_run (mc, sde, ode) against the engines it wraps, compare's sup gaps
 * against separately computed runs with the same seeds, the runtime study against the
 * closed forms of theory/am_runtime.h and against its simulation's standard errors, the
 * staleness study against a direct am_stale_ensemble, the wallclock study's floor and
 * decay fields against theory/am_lsqbound.h, the theory study against theory/am_theory.h;
 * and the error channels: the ensemble's advance failure, the reasons of the constructors.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "test_util.h"

#include "../core/am_ensemble.h"
#include "../montecarlo/am_dataset.h"
#include "../montecarlo/am_stale.h"
#include "../montecarlo/am_msgd_ps.h"
#include "../solvers/am_dde.h"
#include "../solvers/am_ode.h"
#include "../solvers/am_sde.h"
#include "../studies/am_compare.h"
#include "../studies/am_run.h"
#include "../studies/am_runtime_study.h"
#include "../studies/am_staleness.h"
#include "../studies/am_theory_study.h"
#include "../montecarlo/am_wallclock.h"
#include "../theory/am_lsqbound.h"
#include "../theory/am_runtime.h"
#include "../theory/am_theory.h"

/* The library leaves GSL's process-wide error handler to the program: this test program
 * turns the aborting default off once, before any test runs (as the amsgd command does). */
__attribute__((constructor)) static void gsl_handler_off(void)
{
    am_common_gsl_handler_off();
}

static am_problem *problem4(am_dist_kind kind)
{
    const double l[4] = {4, 3, 2, 1};
    am_dist dist = {kind, 0};
    am_status st;
    char err[200];
    am_problem *p = am_problem_alloc(4, l, dist, 0, &st, err, sizeof err);
    cr_assert_not_null(p, "am_problem_alloc: %s", err);
    return p;
}

/* Same doubles, NaN equal to NaN. */
static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* ---- am_run: the wrapped engines, bit for bit ---------------------------------------- */

Test(studies_run, mc_matches_direct_ensemble)
{
    am_problem *p = problem4(AM_DIST_GAUSSIAN);
    am_run_mc_params rp = am_run_mc_params_default();
    rp.problem = p;
    rp.msgd.eta = 2e-3;
    rp.msgd.mu = 0.3;
    rp.msgd.coords = 1;
    rp.msgd.seed = 11;
    rp.horizon = 2;
    rp.ngrid = 5;
    rp.ensemble.replicas = 300;
    rp.ensemble.threads = 2;
    am_run_result r;
    char err[200];
    cr_assert_eq(am_run_mc(&rp, &r, err, sizeof err), AM_OK, "am_run_mc: %s", err);
    cr_assert_eq(r.nobs, 6);

    am_status st;
    am_msgd *m = am_msgd_alloc(p, &rp.msgd, &st, err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    am_grid grid = {5, 2};
    uint64_t k[5];
    am_grid_steps(&grid, rp.msgd.eta, k);
    am_ensemble_result *er;
    am_ensemble_params ep = rp.ensemble;
    ep.threads = 1; /* the reduction does not depend on the threads */
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 5, &ep, &er), AM_OK);
    for (size_t g = 0; g < 5; g++) {
        cr_assert_eq(r.step[g], k[g]);
        cr_assert_eq(r.alive[g], er->alive[g]);
        for (size_t j = 0; j < 6; j++) {
            cr_assert(same(r.mean[j * 5 + g], er->obs[g * 6 + j].mean), "mean g=%zu j=%zu", g, j);
            cr_assert(same(r.sem[j * 5 + g], am_stats_sem(&er->obs[g * 6 + j])), "sem g=%zu j=%zu",
                      g, j);
        }
    }
    cr_assert_eq(r.diverged, er->diverged);
    /* the same check against another seed must fail */
    rp.msgd.seed = 12;
    am_run_result r2;
    cr_assert_eq(am_run_mc(&rp, &r2, err, sizeof err), AM_OK);
    cr_assert_not(same(r2.mean[4], er->obs[4 * 6].mean), "a different seed gave the same mean");
    am_run_result_free(&r2);
    am_ensemble_result_free(er);
    am_msgd_free(m);
    am_run_result_free(&r);
    am_problem_free(p);
}

Test(studies_run, ode_matches_direct_solve)
{
    am_problem *p = problem4(AM_DIST_GAUSSIAN);
    am_run_ode_params rp = am_run_ode_params_default();
    rp.problem = p;
    rp.msgd.mu = 0.5;
    rp.msgd.seed = 3;
    rp.horizon = 3;
    rp.ngrid = 7;
    rp.coords = 1;
    am_run_ode_result r;
    char err[200];
    cr_assert_eq(am_run_ode(&rp, &r, err, sizeof err), AM_OK, "%s", err);

    am_status st;
    am_msgd *m = am_msgd_alloc(p, &rp.msgd, &st, NULL, 0);
    double v0[4], t[7], e[7], nrm[7], h2[28];
    am_msgd_initial(m, 0, v0);
    am_grid grid = {7, 3};
    am_grid_times(&grid, t);
    am_ode *s = am_ode_alloc(p, &rp.ode, &st, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    am_ode_output out = {e, nrm, h2, NULL};
    cr_assert_eq(am_ode_solve(s, 0.5, v0, t, 7, &out, NULL), AM_OK);
    for (size_t g = 0; g < 7; g++) {
        cr_assert(same(r.t[g], t[g]) && same(r.err[g], e[g]) && same(r.norm[g], nrm[g]),
                  "g=%zu: %.17g vs %.17g", g, r.err[g], e[g]);
        for (size_t i = 0; i < 4; i++)
            cr_assert(same(r.h2[g * 4 + i], h2[g * 4 + i]));
    }
    /* err decays towards 0 from the random start: the check can tell a wrong curve */
    cr_assert(r.err[6] < r.err[0], "err %.3g -> %.3g", r.err[0], r.err[6]);
    am_ode_free(s);
    am_msgd_free(m);
    am_run_ode_result_free(&r);
    am_problem_free(p);
}

Test(studies_run, memory_limit_is_a_status_before_any_work)
{
    am_problem *p = problem4(AM_DIST_GAUSSIAN);
    am_run_mc_params rp = am_run_mc_params_default();
    rp.problem = p;
    rp.horizon = 1;
    rp.ngrid = 1000000;
    rp.msgd.coords = 1;
    rp.ensemble.threads = 1024;
    am_run_result r;
    char err[200] = "";
    cr_assert_eq(am_run_mc(&rp, &r, err, sizeof err), AM_ENOMEM);
    cr_assert_gt(r.memory, (double)AM_MEMORY_LIMIT, "memory %.3g", r.memory);
    cr_assert_eq(r.nobs, 6);
    cr_assert_null(strstr(err, "--"), "the library named a flag: %s", err);
    am_run_result_free(&r);
    am_problem_free(p);
}

/* ---- compare --------------------------------------------------------------------------- */

/* max |a - b| over the finite differences, computed here independently of the study */
static double max_abs_diff(const double *a, const double *b, size_t n, long *arg)
{
    double best = -1;
    *arg = -1;
    for (size_t g = 0; g < n; g++) {
        double d = fabs(a[g] - b[g]);
        if (d == d && d > best) {
            best = d;
            *arg = (long)g;
        }
    }
    return *arg < 0 ? NAN : best;
}

Test(studies_compare, sup_gaps_against_separate_runs)
{
    am_problem *p = problem4(AM_DIST_GAUSSIAN);
    am_compare_params cp = am_compare_params_default();
    cp.problem = p;
    cp.msgd.eta = 2e-3;
    cp.msgd.mu = 0.5;
    cp.msgd.seed = 5;
    cp.dt = 2e-3;
    cp.horizon = 3;
    cp.ngrid = 13;
    cp.ensemble.replicas = 400;
    cp.ensemble.threads = 2;
    am_compare_result r;
    char err[300];
    cr_assert_eq(am_compare_run(&cp, &r, err, sizeof err), AM_OK, "%s", err);

    am_run_mc_params mp = am_run_mc_params_default();
    mp.problem = p;
    mp.msgd = cp.msgd;
    mp.horizon = 3;
    mp.ngrid = 13;
    mp.ensemble = cp.ensemble;
    am_run_result mc, sde;
    cr_assert_eq(am_run_mc(&mp, &mc, err, sizeof err), AM_OK);
    am_run_sde_params sp = am_run_sde_params_default();
    sp.problem = p;
    sp.msgd = cp.msgd;
    sp.dt = cp.dt;
    sp.horizon = 3;
    sp.ngrid = 13;
    sp.ensemble = cp.ensemble;
    cr_assert_eq(am_run_sde(&sp, &sde, err, sizeof err), AM_OK);
    am_run_ode_params op = am_run_ode_params_default();
    op.problem = p;
    op.msgd = cp.msgd;
    op.horizon = 3;
    op.ngrid = 13;
    am_run_ode_result ode;
    cr_assert_eq(am_run_ode(&op, &ode, err, sizeof err), AM_OK);

    for (size_t g = 0; g < 13; g++) {
        cr_assert(same(r.err_mc[g], mc.mean[g]), "mc g=%zu", g);
        cr_assert(same(r.err_mc_sem[g], mc.sem[g]), "mc sem g=%zu", g);
        cr_assert(same(r.err_sde[g], sde.mean[g]), "sde g=%zu", g);
        cr_assert(same(r.err_ode[g], ode.err[g]), "ode g=%zu: %.17g vs %.17g", g, r.err_ode[g],
                  ode.err[g]);
    }
    long i_ode, i_sde;
    double g_ode = max_abs_diff(mc.mean, ode.err, 13, &i_ode);
    double g_sde = max_abs_diff(mc.mean, sde.mean, 13, &i_sde);
    cr_assert(same(r.sup_mc_ode, g_ode), "sup_mc_ode %.17g, direct %.17g", r.sup_mc_ode, g_ode);
    cr_assert(same(r.sup_mc_sde, g_sde), "sup_mc_sde %.17g, direct %.17g", r.sup_mc_sde, g_sde);
    cr_assert_eq(r.sup_mc_ode_index, i_ode);
    cr_assert_eq(r.sup_mc_sde_index, i_sde);
    cr_assert(same(r.sup_mc_ode_sem, mc.sem[i_ode]));
    cr_assert(same(r.sup_mc_sde_sem, hypot(mc.sem[i_sde], sde.sem[i_sde])));
    /* the SDE carries the noise of the chain: its gap to mc is within 4 standard errors;
     * the same check against the noise-free ODE fails at this eta (a wrong prediction) */
    cr_assert_leq(r.sup_mc_sde, 4 * r.sup_mc_sde_sem, "sup_mc_sde %.3g +- %.2g at eta %g",
                  r.sup_mc_sde, r.sup_mc_sde_sem, cp.msgd.eta);
    cr_assert_gt(r.sup_mc_ode, 4 * r.sup_mc_ode_sem, "sup_mc_ode %.3g +- %.2g at eta %g",
                 r.sup_mc_ode, r.sup_mc_ode_sem, cp.msgd.eta);
    /* the same gap against a run with another seed is a different number */
    mp.msgd.seed = 6;
    am_run_result mc6;
    cr_assert_eq(am_run_mc(&mp, &mc6, err, sizeof err), AM_OK);
    long i6;
    cr_assert_not(same(r.sup_mc_ode, max_abs_diff(mc6.mean, ode.err, 13, &i6)));
    am_run_result_free(&mc6);
    am_run_result_free(&mc);
    am_run_result_free(&sde);
    am_run_ode_result_free(&ode);
    am_compare_result_free(&r);
    am_problem_free(p);
}

Test(studies_compare, sup_gap_is_undefined_where_a_side_has_no_value)
{
    const double a[4] = {0.5, 0.2, 0.1, 0.3}, b[4] = {0.4, 0.0, 0.4, 0.25};
    double gap;
    cr_assert_eq(am_compare_sup_gap(a, b, 4, &gap), 2);
    cr_assert_float_eq(gap, 0.3, 1e-15);
    /* a diverged side (NaN) at one saved time: the sup over the rest would understate it */
    const double c[4] = {0.5, NAN, 0.1, 0.3};
    cr_assert_eq(am_compare_sup_gap(c, b, 4, &gap), -1);
    cr_assert(isnan(gap), "a sup over part of the grid: %g", gap);
}

/* every replica diverged: no mean error (null), not a perfect 0; a warning on stderr */
Test(studies_run, all_diverged_is_no_result)
{
    test_run r = test_amsgd("mc --eta 0.05 --mu 0.9 --delay const:30 --replicas 200 --time 20 "
                            "--grid 6 --blowup 1e300 --format json");
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    json_error_t je;
    json_t *root = json_loads(r.out, 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    json_t *em = json_object_get(root, "err_mean"), *al = json_object_get(root, "alive");
    size_t n = json_array_size(em);
    cr_assert(n == 6 && json_integer_value(json_array_get(al, n - 1)) == 0,
              "expected every replica diverged at the end");
    cr_expect(json_is_null(json_array_get(em, n - 1)), "err_mean with no survivor is not null");
    cr_expect(json_is_null(json_array_get(json_object_get(root, "norm_mean"), n - 1)));
    cr_expect(json_is_number(json_array_get(em, 0)), "err_mean at t = 0 must be a number");
    json_decref(root);
    cr_expect(strstr(r.err, "warning") && strstr(r.err, "diverged"), "stderr: %s", r.err);
    test_run_free(&r);
    r = test_amsgd("sde --eta 0.05 --dt 2 --mu 0.9 --replicas 50 --time 40 --grid 5");
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    cr_expect(strstr(r.out, "\n40,20,nan,nan,nan,nan,0\n") != NULL, "sde: %s", r.out);
    test_run_free(&r);
}

Test(studies_compare, failures_name_the_stage)
{
    am_problem *p = problem4(AM_DIST_GAUSSIAN);
    am_compare_params cp = am_compare_params_default();
    cp.problem = p;
    cp.ngrid = 3;
    cp.horizon = 1;
    cp.ensemble.replicas = 4;
    cp.dt = -1; /* the SDE step is wrong */
    am_compare_result r;
    char err[300];
    cr_assert_eq(am_compare_run(&cp, &r, err, sizeof err), AM_EINVAL);
    cr_assert(strncmp(err, "sde: ", 5) == 0, "err '%s'", err);
    cr_assert_null(strstr(err, "--"), "the library named a flag: %s", err);
    am_compare_result_free(&r);
    am_problem_free(p);
}

/* ---- runtime study --------------------------------------------------------------------- */

Test(studies_runtime, closed_forms_and_simulation)
{
    const size_t ks[2] = {2, 3};
    am_runtime_study_params rp = am_runtime_study_params_default();
    rp.workers = 4;
    rp.k = ks;
    rp.nk = 2;
    rp.updates = 400;
    rp.burnin = 50;
    rp.replicas = 60;
    rp.seed = 9;
    rp.threads = 2;
    am_runtime_study_result r;
    char err[200];
    cr_assert_eq(am_runtime_study_run(&rp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r.nrows, 10);
    const am_variant order[10] = {
        AM_VARIANT_SYNC,        AM_VARIANT_KSYNC,      AM_VARIANT_KSYNC,  AM_VARIANT_KBATCHSYNC,
        AM_VARIANT_KBATCHSYNC,  AM_VARIANT_ASYNC,      AM_VARIANT_KASYNC, AM_VARIANT_KASYNC,
        AM_VARIANT_KBATCHASYNC, AM_VARIANT_KBATCHASYNC};
    const size_t korder[10] = {4, 2, 3, 2, 3, 1, 2, 3, 2, 3};
    cr_assert(same(r.mean_runtime, 1.0));
    size_t checked = 0;
    for (size_t i = 0; i < 10; i++) {
        const am_runtime_study_row *w = &r.rows[i];
        cr_assert_eq(w->variant, order[i], "row %zu", i);
        cr_assert_eq(w->k, korder[i], "row %zu", i);
        double tp = NAN, pf = NAN, ms = NAN;
        if (am_runtime_time_per_iter(&rp.runtime, w->variant, 4, w->k, &tp)) tp = NAN;
        if (am_runtime_p_fresh(&rp.runtime, w->variant, 4, w->k, &pf)) pf = NAN;
        if (am_runtime_mean_staleness(&rp.runtime, w->variant, 4, w->k, &ms)) ms = NAN;
        cr_assert(same(w->theory, tp) && same(w->p_fresh_theory, pf) &&
                      same(w->mean_staleness_theory, ms),
                  "row %zu (%s K=%zu): closed forms differ", i, am_runtime_variant_name(w->variant),
                  w->k);
        /* the simulation agrees with each closed form within 4 standard errors; a 10 % wrong
         * prediction fails the same check */
        const double meas[3] = {w->time_per_iter, w->p_fresh, w->mean_staleness};
        const double sem[3] = {w->time_per_iter_sem, w->p_fresh_sem, w->mean_staleness_sem};
        const double th[3] = {tp, pf, ms};
        for (int c = 0; c < 3; c++) {
            if (!isfinite(th[c]) || !(sem[c] > 0)) continue;
            cr_assert_leq(fabs(meas[c] - th[c]), 4 * sem[c],
                          "row %zu (%s K=%zu) quantity %d: %.6g vs %.6g +- %.2g", i,
                          am_runtime_variant_name(w->variant), w->k, c, meas[c], th[c], sem[c]);
            if (th[c] > 0)
                cr_assert_gt(fabs(meas[c] - 1.1 * th[c]), 4 * sem[c],
                             "a 10%% wrong prediction passed: row %zu quantity %d", i, c);
            checked++;
        }
    }
    cr_assert_geq(checked, 10, "only %zu comparisons", checked);
    am_runtime_study_result_free(&r);
}

Test(studies_runtime, bad_k_is_a_reason)
{
    const size_t ks[1] = {9};
    am_runtime_study_params rp = am_runtime_study_params_default();
    rp.workers = 4;
    rp.k = ks;
    rp.nk = 1;
    am_runtime_study_result r;
    char err[200];
    cr_assert_eq(am_runtime_study_run(&rp, &r, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "K must be in [1, 4]") != NULL, "err '%s'", err);
    am_runtime_study_result_free(&r);
}

/* ---- staleness study ------------------------------------------------------------------- */

Test(studies_staleness, rows_against_direct_stale_ensemble)
{
    const am_optim_kind opts[2] = {AM_OPT_SGD, AM_OPT_MOMENTUM};
    const size_t sl[2] = {2, 0};
    am_staleness_params sp = am_staleness_params_default();
    sp.objective = AM_OBJ_LSQ;
    sp.rows = 80;
    sp.features = 3;
    sp.optimizers = opts;
    sp.noptimizers = 2;
    sp.s = sl;
    sp.ns = 2;
    sp.stale.seed = 4;
    sp.stale.max_steps = 3000;
    sp.replicas = 6;
    sp.threads = 2;
    am_staleness_result r;
    char err[300];
    cr_assert_eq(am_staleness_run(&sp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r.nrows, 4);
    cr_assert_eq(r.data_rows, 80);
    cr_assert_eq(r.data_features, 3);

    am_dataset *ds;
    cr_assert_eq(am_dataset_synthetic(AM_SYNTH_LSQ, 80, 3, 4, &ds), AM_OK);
    am_status st;
    am_objective *f = am_objective_alloc(AM_OBJ_LSQ, ds, &st, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    cr_assert(same(r.optimum, am_objective_optimum(f)));
    for (size_t o = 0; o < 2; o++) {
        am_optim_params op = am_optim_params_default(opts[o]);
        op.mu = 0.9;
        double steps[2];
        for (size_t i = 0; i < 2; i++) {
            am_stale_params p = sp.stale;
            p.s = sl[i];
            am_stale_summary sum;
            cr_assert_eq(am_stale_ensemble(f, &op, &p, 6, 1, &sum), AM_OK);
            const am_staleness_row *row = &r.rows[o * 2 + i];
            cr_assert_eq(row->s, sl[i]);
            cr_assert_eq(row->optimizer, opts[o]);
            cr_assert(same(row->lr, op.lr));
            cr_assert_eq(row->reached, sum.reached);
            steps[i] = sum.reached ? sum.steps.mean : NAN;
            cr_assert(same(row->steps_to_target, steps[i]), "o=%zu s=%zu: %.17g vs %.17g", o, sl[i],
                      row->steps_to_target, steps[i]);
            cr_assert(same(row->never_reached, 1.0 - (double)sum.reached / 6.0));
            cr_assert(same(row->coherence_min, sum.coherence.n > 0 ? sum.coherence.mean : NAN));
        }
        cr_assert(same(r.rows[o * 2].normalized, steps[0] / steps[1]), "normalised o=%zu", o);
        cr_assert(same(r.rows[o * 2 + 1].normalized, 1.0));
        cr_assert_eq(r.rows[o * 2 + 1].reached, 6, "every s = 0 replica of o=%zu reaches", o);
    }
    am_objective_free(f);
    am_dataset_free(ds);
    am_staleness_result_free(&r);
}

Test(studies_staleness, reference_run_without_s0_and_bad_data)
{
    const am_optim_kind opts[1] = {AM_OPT_SGD};
    const size_t sl[1] = {1};
    am_staleness_params sp = am_staleness_params_default();
    sp.rows = 60;
    sp.features = 2;
    sp.optimizers = opts;
    sp.noptimizers = 1;
    sp.s = sl;
    sp.ns = 1;
    sp.replicas = 3;
    am_staleness_result r;
    char err[300];
    cr_assert_eq(am_staleness_run(&sp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r.nrows, 1, "the s = 0 reference is run, not reported");
    cr_assert(isfinite(r.rows[0].normalized), "normalised %g", r.rows[0].normalized);
    am_staleness_result_free(&r);

    /* logistic labels must be 0 or 1: the data set is at fault, the reason says why */
    am_dataset *ds;
    cr_assert_eq(am_dataset_synthetic(AM_SYNTH_LSQ, 20, 2, 1, &ds), AM_OK);
    sp.objective = AM_OBJ_LOGISTIC;
    sp.data = ds;
    cr_assert_eq(am_staleness_run(&sp, &r, err, sizeof err), AM_EINVAL);
    cr_assert_str_eq(r.field, "data");
    cr_assert(strstr(err, "labels") != NULL, "err '%s'", err);
    am_staleness_result_free(&r);
    am_dataset_free(ds);
}

/* ---- wallclock study ------------------------------------------------------------------- */

Test(studies_wallclock, lsq_floor_fields)
{
    const am_wallclock_variant vars[3] = {
        {AM_VARIANT_SYNC, 1}, {AM_VARIANT_KSYNC, 2}, {AM_VARIANT_ASYNC, 1}};
    am_wallclock_params wp = am_wallclock_params_default();
    wp.workers = 4;
    wp.variants = vars;
    wp.nvariants = 3;
    wp.updates = 1600;
    wp.ngrid = 201;
    wp.replicas = 200;
    wp.seed = 2;
    wp.threads = 2;
    am_wallclock_result r;
    char err[200];
    cr_assert_eq(am_wallclock_run(&wp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r.nvariants, 3);
    cr_assert_eq(r.update[0], 0);
    cr_assert_eq(r.update[200], 1600);
    double lam[4];
    for (size_t i = 0; i < 4; i++)
        lam[i] = 2.0 - 1.5 * (double)i / 3.0; /* linear from L = 2 down to c = 0.5 */
    for (size_t v = 0; v < 3; v++) {
        const am_wallclock_curve *w = &r.curves[v];
        double kb = (double)w->batch;
        cr_assert_eq(w->batch, v == 0 ? 4u : v == 1 ? 2u : 1u, "variant %zu", v);
        cr_assert(same(w->floor_dutta, am_lsqbound_floor_dutta(lam, 4, 0.02, 0.5, kb)));
        cr_assert(same(w->decay_dutta, 1 - 0.02 * 0.5));
        cr_assert(isfinite(w->floor_measured) && w->floor_measured_sem > 0);
        cr_assert_gt(w->wallclock_mean[200], w->wallclock_mean[1], "time grows");
        if (w->variant == AM_VARIANT_ASYNC) {
            cr_assert(isnan(w->floor_exact) && isnan(w->decay_exact), "no exact floor for async");
            continue;
        }
        double fe;
        cr_assert_eq(am_lsqbound_floor_exact(lam, 4, 0.02, 0.5, kb, &fe), AM_OK);
        cr_assert(same(w->floor_exact, fe), "floor_exact %.17g vs %.17g", w->floor_exact, fe);
        /* the measured floor of a fresh-gradient variant is the exact one within 4 standard
         * errors; a prediction 30 % off fails the same check */
        cr_assert_leq(fabs(w->floor_measured - fe), 4 * w->floor_measured_sem,
                      "variant %zu: measured %.6g +- %.2g, exact %.6g", v, w->floor_measured,
                      w->floor_measured_sem, fe);
        cr_assert_gt(fabs(w->floor_measured - 1.3 * fe), 4 * w->floor_measured_sem,
                     "variant %zu: a 30%% wrong floor passed", v);
        cr_assert(isfinite(w->decay_exact) && w->decay_exact < 1, "decay_exact %g", w->decay_exact);
    }
    am_wallclock_result_free(&r);

    /* the adaptive step has no closed forms */
    wp.lr_c = 0.05;
    wp.lr_max = 0.05;
    wp.nvariants = 1;
    wp.replicas = 4;
    wp.updates = 100;
    cr_assert_eq(am_wallclock_run(&wp, &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert(isnan(r.curves[0].floor_exact) && isnan(r.curves[0].floor_dutta) &&
              isnan(r.curves[0].decay_dutta));
    am_wallclock_result_free(&r);
}

/* ---- theory study ---------------------------------------------------------------------- */

Test(studies_theory, predictions_against_theory)
{
    am_problem *p = problem4(AM_DIST_RADEMACHER);
    am_theory_study_params tp = am_theory_study_params_default();
    tp.problem = p;
    tp.eta = 1e-3;
    tp.mu = 0.5;
    tp.gamma = 0.8;
    am_theory_study_result r;
    char err[100];
    cr_assert_eq(am_theory_study_run(&tp, &r, err, sizeof err), AM_OK);
    cr_assert(same(r.stationary_error, am_theory_stationary_error(p, 1e-3, 0.5)));
    cr_assert(same(r.escape_iterations, r.escape_time / 1e-3));
    cr_assert(same(r.alpha2[1 * 4 + 2], 3.0 * 2.0));
    cr_assert(r.gamma_above_half && !r.cd_infinite && !r.m4_infinite && !r.noise_free);
    for (size_t m = 0; m < 4; m++) {
        double tc;
        cr_assert_eq(am_theory_stability_tau_c(0.5, 1e-3 * am_theory_mode_curvature(p, m), &tc),
                     AM_OK);
        cr_assert(same(r.tau_c_linear[m], tc), "mode %zu", m);
    }
    am_theory_study_result_free(&r);
    am_problem_free(p);
}

/* ---- the ensemble's error channel ------------------------------------------------------ */

typedef struct {
    uint64_t fail_replica; /* this replica's advance fails */
    am_status status;      /* with this status */
    uint64_t diverge_replica;
} chan_ctx;

typedef struct {
    uint64_t replica;
    double x;
} chan_work;

static am_status chan_start(const void *ctx, uint64_t replica, void *work)
{
    (void)ctx;
    chan_work *w = work;
    w->replica = replica;
    w->x = (double)replica;
    return AM_OK;
}

static int chan_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const chan_ctx *c = ctx;
    chan_work *w = work;
    w->x += (double)(k1 - k0);
    if (w->replica == c->fail_replica && k1 >= 2) return am_ensemble_advance_error(c->status);
    if (w->replica == c->diverge_replica && k1 >= 2) return AM_ENSEMBLE_DIVERGED;
    return AM_ENSEMBLE_ALIVE;
}

static void chan_observe(const void *ctx, const void *work, double *obs)
{
    (void)ctx;
    obs[0] = ((const chan_work *)work)->x;
}

/* The same replicas side by side: each flag is what advance returns. */
static void chan_advance_batch(const void *ctx, void *const *works, size_t n, uint64_t k0,
                               uint64_t k1, int *flags)
{
    for (size_t j = 0; j < n; j++)
        flags[j] = chan_advance(ctx, works[j], k0, k1);
}

static am_model chan_model(const chan_ctx *c)
{
    am_model m;
    memset(&m, 0, sizeof m);
    m.nobs = 1;
    m.work_bytes = sizeof(chan_work);
    m.start = chan_start;
    m.advance = chan_advance;
    m.observe = chan_observe;
    m.ctx = c;
    return m;
}

Test(studies_errors, advance_failure_propagates_out_of_the_ensemble)
{
    const uint64_t k[3] = {0, 1, 3};
    for (int run = 0; run < 4; run++) {
        int threads = 1 + run % 2, batched = run >= 2;
        chan_ctx c = {37, AM_ESOLVER, UINT64_MAX};
        am_model m = chan_model(&c);
        if (batched) { /* replicas side by side: the failure comes through advance_batch */
            m.batch = 4;
            m.advance_batch = chan_advance_batch;
        }
        am_ensemble_params ep = {200, threads, 0};
        am_ensemble_result *res = (am_ensemble_result *)&c; /* must be reset to NULL */
        cr_assert_eq(am_ensemble_run(&m, k, 3, &ep, &res), AM_ESOLVER, "threads %d batched %d",
                     threads, batched);
        cr_assert_null(res);
        c.status = AM_ENOMEM;
        cr_assert_eq(am_ensemble_run(&m, k, 3, &ep, &res), AM_ENOMEM, "threads %d batched %d",
                     threads, batched);
        cr_assert_null(res);
        /* a diverged replica is a result, not an error */
        c.fail_replica = UINT64_MAX;
        c.diverge_replica = 37;
        cr_assert_eq(am_ensemble_run(&m, k, 3, &ep, &res), AM_OK);
        cr_assert_eq(res->diverged, 1);
        cr_assert_eq(res->alive[1], 200);
        cr_assert_eq(res->alive[2], 199);
        am_ensemble_result_free(res);
    }
}

static void e1_initial(uint64_t replica, double *v0, const void *ctx)
{
    (void)replica;
    (void)ctx;
    for (size_t i = 0; i < 3; i++)
        v0[i] = i == 0;
}

Test(studies_errors, constructors_say_why)
{
    const double bad[4] = {4, 3, 3.5, 1};
    am_dist dist = {AM_DIST_GAUSSIAN, 0};
    am_status st = AM_OK;
    char err[200] = "";
    cr_assert_null(am_problem_alloc(4, bad, dist, 0, &st, err, sizeof err));
    cr_assert_eq(st, AM_EINVAL);
    cr_assert(strstr(err, "non-increasing") != NULL, "err '%s'", err);
    const double flat[3] = {2, 2, 1};
    cr_assert_null(am_problem_alloc(3, flat, dist, 0, &st, err, sizeof err));
    cr_assert(strstr(err, "eigen-gap") != NULL, "err '%s'", err);
    am_dist st3 = {AM_DIST_STUDENT, 2};
    const double good[3] = {3, 2, 1};
    cr_assert_null(am_problem_alloc(3, good, st3, 0, &st, err, sizeof err));
    cr_assert(strstr(err, "NU > 2") != NULL, "err '%s'", err);
    am_problem *p = am_problem_alloc(3, good, dist, 0, &st, err, sizeof err);
    cr_assert_not_null(p);
    cr_assert_eq(st, AM_OK);
    cr_assert_null(am_problem_alloc(3, bad, dist, 0, NULL, NULL, 0), "NULL status and err");

    am_msgd_params mp = am_msgd_params_default();
    mp.mu = 1.5;
    cr_assert_null(am_msgd_alloc(p, &mp, &st, err, sizeof err));
    cr_assert_eq(st, AM_EINVAL);
    cr_assert(strstr(err, "mu must be in [0, 1)") != NULL, "err '%s'", err);
    cr_assert_null(strstr(err, "--"), "the library named a flag: %s", err);

    am_ode_params op = am_ode_params_default();
    op.project = 1; /* needs BDF */
    cr_assert_null(am_ode_alloc(p, &op, &st, err, sizeof err));
    cr_assert_eq(st, AM_EINVAL);
    cr_assert(strstr(err, "project needs the BDF method") != NULL, "err '%s'", err);
    cr_assert_null(strstr(err, "--"), "the library named a flag: %s", err);
    op = am_ode_params_default();
    op.rtol = 2;
    cr_assert_null(am_ode_alloc(p, &op, &st, err, sizeof err));
    cr_assert(strncmp(err, "rtol must be", 12) == 0, "err '%s'", err);

    /* the parameter-server engine passes its inner engine's reason through */
    am_msgd_ps_params pp;
    memset(&pp, 0, sizeof pp);
    pp.msgd = am_msgd_params_default();
    cr_assert_null(am_msgd_ps_alloc(p, &pp, &st, err, sizeof err));
    cr_assert(strstr(err, "workers:P:DIST") != NULL, "err '%s'", err);
    char derr[100];
    cr_assert_eq(am_delay_parse("workers:4:exp:1", &pp.msgd.delay, derr, sizeof derr), AM_OK);
    pp.variant = AM_VARIANT_ASYNC;
    pp.k = 1;
    pp.msgd.mu = 2;
    cr_assert_null(am_msgd_ps_alloc(p, &pp, &st, err, sizeof err));
    cr_assert(strstr(err, "mu must be in [0, 1)") != NULL, "err '%s'", err);
    pp.msgd.mu = 0;
    am_msgd_ps *ps = am_msgd_ps_alloc(p, &pp, &st, err, sizeof err);
    cr_assert_not_null(ps, "a valid engine failed: %s", err);
    am_msgd_ps_free(ps);

    am_dde_params dp = am_dde_params_default();
    dp.rtol = 0;
    cr_assert_null(am_dde_alloc(p, &dp, &st, err, sizeof err));
    cr_assert(strncmp(err, "rtol must be", 12) == 0, "err '%s'", err);

    am_sde_pca_params sq = am_sde_pca_params_default();
    sq.initial = e1_initial;
    am_sde_pca *m = am_sde_pca_ou_alloc(p, &sq, &st);
    cr_assert_not_null(m);
    am_sde_params sp = am_sde_params_default();
    sp.dt = 0;
    cr_assert_null(am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, err,
                                      sizeof err));
    cr_assert(strstr(err, "dt must be a finite number > 0") != NULL, "err '%s'", err);
    cr_assert_null(am_sde_path_alloc(am_sde_pca_system(m), &sp, &st, err, sizeof err));
    cr_assert(strstr(err, "dt must be") != NULL, "err '%s'", err);
    am_sde_pca_free(m);
    am_problem_free(p);
}

Test(studies_errors, linear_spectrum)
{
    double l[5];
    am_problem_spectrum_linear(4, 1, 5, l);
    const double want[5] = {4, 3.25, 2.5, 1.75, 1};
    for (size_t i = 0; i < 5; i++)
        cr_assert(same(l[i], want[i]), "lambda_%zu = %.17g, want %.17g", i + 1, l[i], want[i]);
    cr_assert_eq(am_problem_check_spectrum(5, l), AM_OK);
}

/* ---- one C and one gamma of the paper's delay conditions (theory/am_theory.h) ---- */

/* every command that evaluates or draws the paper's condition uses the one constant and the
   one exponent, and writes them into its JSON params; the tau bound of knee and phase is the
   closed form at those values */
Test(paper_bound, one_constant_everywhere)
{
    cr_expect_eq(strtod(AM_THEORY_BOUND_C_STR, NULL), AM_THEORY_BOUND_C);
    cr_expect_eq(strtod(AM_THEORY_BOUND_GAMMA_STR, NULL), AM_THEORY_BOUND_GAMMA);
    cr_expect(AM_THEORY_BOUND_GAMMA > 0 && AM_THEORY_BOUND_GAMMA <= 0.5,
              "gamma %g must be admissible in the ODE (0, 1] and the local (0, 1/2] condition",
              AM_THEORY_BOUND_GAMMA);
    am_theory_study_params tp = am_theory_study_params_default();
    cr_expect(tp.gamma == AM_THEORY_BOUND_GAMMA && tp.bound_constant == AM_THEORY_BOUND_C);
    const char *cmds[] = {
        "theory --format json",
        "knee --mus 0.5,0.7 --replicas 4 --time 1 --bootstrap 10 --format json --quiet",
        "phase --mu-grid 0.5 --tau-grid 0,2 --replicas 4 --time 1 --format json --quiet",
        "validate --only delay --format json"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        test_run r = test_amsgd(cmds[i]);
        cr_assert_eq(r.status, 0, "%s: status %d, stderr: %s", cmds[i], r.status, r.err);
        json_t *root = json_loads(r.out, 0, NULL);
        cr_assert_not_null(root, "%s: invalid JSON", cmds[i]);
        json_t *pa = json_object_get(root, "params");
        cr_expect_eq(json_number_value(json_object_get(pa, "gamma")), AM_THEORY_BOUND_GAMMA,
                     "%s: params.gamma", cmds[i]);
        cr_expect_eq(json_number_value(json_object_get(pa, "bound_constant")), AM_THEORY_BOUND_C,
                     "%s: params.bound_constant", cmds[i]);
        json_t *b = json_object_get(root, i == 1 ? "tau_bound_paper" : "boundary_paper");
        if (i == 1 || i == 2) {
            /* lambda_1 = 4, eta = 5e-4 (the sweep default) */
            double mu = 0.5, want = am_theory_tau_bound_ode(4, 5e-4, mu, AM_THEORY_BOUND_GAMMA,
                                                            AM_THEORY_BOUND_C);
            cr_expect(fabs(json_number_value(json_array_get(b, 0)) - want) <= 1e-12 * want,
                      "%s: paper bound %.17g, want %.17g", cmds[i],
                      json_number_value(json_array_get(b, 0)), want);
        }
        json_decref(root);
        test_run_free(&r);
    }
}

/* Once every replica has diverged there is no mean: the wall-clock and error columns are NaN
 * (null in JSON) with alive 0, never the 0 of an empty mean; the command says so on stderr
 * and exits 0 (a diverged replica is a result). */
Test(studies_wallclock, no_survivor_gives_no_value)
{
    const am_wallclock_variant vars[2] = {{AM_VARIANT_SYNC, 1}, {AM_VARIANT_ASYNC, 1}};
    am_wallclock_params wp = am_wallclock_params_default();
    wp.eta = 5; /* far past the stable step: every replica diverges within a few updates */
    wp.workers = 4;
    wp.variants = vars;
    wp.nvariants = 2;
    wp.updates = 200;
    wp.ngrid = 5;
    wp.replicas = 10;
    am_wallclock_result r;
    char err[200];
    cr_assert_eq(am_wallclock_run(&wp, &r, err, sizeof err), AM_OK, "%s", err);
    for (size_t i = 0; i < 2; i++) {
        const am_wallclock_curve *w = &r.curves[i];
        cr_assert_eq(w->diverged, 10, "variant %zu: %zu of 10 diverged", i, w->diverged);
        for (size_t g = 1; g < 5; g++) {
            cr_assert_eq(w->alive[g], 0, "variant %zu point %zu: alive %zu", i, g, w->alive[g]);
            cr_assert(isnan(w->err_mean[g]) && isnan(w->err_sem[g]) &&
                          isnan(w->wallclock_mean[g]) && isnan(w->wallclock_sem[g]),
                      "variant %zu point %zu without survivors: err %g +- %g, wall clock %g +- %g",
                      i, g, w->err_mean[g], w->err_sem[g], w->wallclock_mean[g],
                      w->wallclock_sem[g]);
        }
        cr_assert(isfinite(w->err_mean[0]) && w->alive[0] == 10, "point 0 has every replica");
    }
    am_wallclock_result_free(&r);
    test_run c = test_amsgd("wallclock --eta 5 --workers 4 --updates 200 --replicas 10 --grid 5 "
                            "--variants sync,async --format json");
    cr_assert_eq(c.status, 0, "exit %d (%s)", c.status, c.err);
    cr_assert(strstr(c.err, "amsgd: warning: 10 of 10 replicas of sync diverged") &&
                  strstr(c.err, "amsgd: warning: 10 of 10 replicas of async diverged"),
              "stderr: %s", c.err);
    json_t *root = json_loads(c.out, 0, NULL);
    cr_assert_not_null(root, "stdout is not JSON: %.200s", c.out);
    json_t *v;
    size_t i;
    json_array_foreach(json_object_get(root, "variants"), i, v)
    {
        json_t *em = json_object_get(v, "err_mean"), *wm = json_object_get(v, "wallclock_mean");
        cr_assert(json_is_real(json_array_get(em, 0)), "variant %zu: err_mean[0] not a number", i);
        for (size_t g = 1; g < 5; g++)
            cr_assert(json_is_null(json_array_get(em, g)) && json_is_null(json_array_get(wm, g)),
                      "variant %zu point %zu: err_mean and wallclock_mean must be null", i, g);
    }
    cr_assert_eq(i, 2);
    json_decref(root);
    test_run_free(&c);
}
