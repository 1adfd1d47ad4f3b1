/*
 * test_pslsq.c -- streaming least squares under parameter-server staleness
 * (montecarlo/am_pslsq.h) against the exact second-moment recursion of theory/am_lsqbound.h
 * for the synchronous variants (5 standard errors), and Dutta's floor as an upper bound.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "../montecarlo/am_pslsq.h"
#include "../theory/am_lsqbound.h"

static am_pslsq_params lsq_params(am_variant v, size_t p, size_t k)
{
    am_pslsq_params lp = {0};
    lp.dim = 4;
    lp.lmax = 2;
    lp.lmin = 0.5;
    lp.sigma = 0.5;
    lp.eta = 0.05;
    lp.ps = am_ps_params_default();
    lp.ps.workers = p;
    lp.ps.variant = v;
    lp.ps.k = k;
    lp.ps.seed = 11;
    return lp;
}

Test(pslsq, sync_variants_match_exact_curve)
{
    const struct {
        am_variant v;
        size_t p, k, batch;
    } cases[] = {
        {AM_VARIANT_KSYNC, 8, 2, 2}, {AM_VARIANT_SYNC, 4, 0, 4}, {AM_VARIANT_KBATCHSYNC, 4, 3, 3}};
    for (size_t c = 0; c < 3; c++) {
        am_pslsq_params lp = lsq_params(cases[c].v, cases[c].p, cases[c].k);
        am_status st;
        am_pslsq *e = am_pslsq_alloc(&lp, &st);
        cr_assert_not_null(e, "alloc %d", st);
        const uint64_t ks[4] = {0, 20, 100, 600};
        am_ensemble_params ep = am_ensemble_params_default();
        ep.replicas = 400;
        ep.threads = 2;
        am_ensemble_result *r;
        cr_assert_eq(am_ensemble_run(am_pslsq_model(e), ks, 4, &ep, &r), AM_OK);
        double lam[4], curve[601];
        for (size_t i = 0; i < 4; i++)
            lam[i] = am_pslsq_lambda(&lp, i);
        am_lsqbound_curve_exact(lam, 4, lp.eta, lp.sigma, (double)cases[c].batch, 601, curve);
        for (size_t g = 0; g < 4; g++) {
            double m = r->obs[g * r->nobs].mean, se = am_stats_sem(&r->obs[g * r->nobs]);
            double ex = curve[ks[g]];
            cr_assert(fabs(m - ex) <= 5 * se + 1e-12 * ex,
                      "%s P=%zu K=%zu step %llu: F-F* %.6g +- %.2g, exact %.6g",
                      am_runtime_variant_name(cases[c].v), cases[c].p, cases[c].k,
                      (unsigned long long)ks[g], m, se, ex);
        }
        double floor_ex,
            floor_d = am_lsqbound_floor_dutta(lam, 4, lp.eta, lp.sigma, (double)cases[c].batch);
        cr_assert_eq(
            am_lsqbound_floor_exact(lam, 4, lp.eta, lp.sigma, (double)cases[c].batch, &floor_ex),
            AM_OK);
        cr_assert(fabs(curve[600] - floor_ex) < 1e-6 * floor_ex,
                  "curve at 600 %.10g vs fixed point %.10g", curve[600], floor_ex);
        cr_assert(floor_ex < floor_d, "exact floor %.6g above Dutta's bound %.6g", floor_ex,
                  floor_d);
        am_ensemble_result_free(r);
        am_pslsq_free(e);
    }
}

Test(pslsq, exact_floor_by_hand)
{
    /* d = 1, lambda = 1, eta = 0.1, K = 1: D = 0.2 - 0.02 = 0.18, A = 0.01/0.18 = 1/18,
     * S* = sigma^2 (1/18)/(17/18) = sigma^2/17, floor = sigma^2/34. */
    const double lam = 1;
    double f;
    cr_assert_eq(am_lsqbound_floor_exact(&lam, 1, 0.1, 1.0, 1, &f), AM_OK);
    cr_assert(fabs(f - 1.0 / 34) < 1e-15, "floor %.17g", f);
    /* Dutta: eta L sigma^2 tr H / (2 c K) = 0.1/2 */
    cr_assert(fabs(am_lsqbound_floor_dutta(&lam, 1, 0.1, 1.0, 1) - 0.05) < 1e-15);
    cr_assert_eq(am_lsqbound_floor_exact(&lam, 1, 1.5, 1.0, 1, &f), AM_EDOM, "eta=1.5 stable?");
}

#include <string.h>

#include "test_util.h"

/* `amsgd wallclock`: keys, the measured floor of k-sync against the exact floor, errors. */
Test(pslsq, wallclock_cli)
{
    test_run r = test_amsgd("wallclock --objective lsq --variants k-sync:2,async --workers 4 "
                            "--updates 800 --grid 41 --replicas 100 --format json");
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
    const char *keys[] = {"\"variants\"",       "\"wallclock_mean\"", "\"err_mean\"",
                          "\"floor_measured\"", "\"floor_exact\"",    "\"floor_dutta\"",
                          "\"decay_measured\""};
    for (int k = 0; k < 7; k++)
        cr_assert_not_null(strstr(r.out, keys[k]), "no %s", keys[k]);
    test_run_free(&r);
    r = test_amsgd("wallclock --objective pca --variants async --workers 2 --updates 100 "
                   "--grid 3 --replicas 4");
    cr_assert_eq(r.status, 0, "pca: status %d: %s", r.status, r.err);
    cr_assert(strncmp(r.out, "variant,update,wallclock_mean,wallclock_sem,err_mean,err_sem,alive\n",
                      67) == 0,
              "%.80s", r.out);
    test_run_free(&r);
    const char *bad[] = {"wallclock --objective svm",   "wallclock --variants k-sync:9",
                         "wallclock --variants foo",    "wallclock --lmin 3 --lmax 2",
                         "wallclock --lr adaptive:0:1", "wallclock --variants sync,"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        test_expect_flag_error(bad[i], 0);
}

/* Dutta et al.'s async factor c (1 - gamma + p0/2) against its closed form */
Test(pslsq, dutta_async_bound_closed_form)
{
    double lam[3] = {2, 1.25, 0.5};
    double d = am_lsqbound_decay_dutta_async(lam, 3, 0.02, 0.2, 0.5);
    cr_expect(fabs(d - (1 - 0.02 * 0.5 * (1 - 0.2 + 0.25))) < 1e-15, "decay %.17g", d);
    double f = am_lsqbound_floor_dutta_async(lam, 3, 0.02, 0.5, 4, 0.2, 0.5);
    double fk = am_lsqbound_floor_dutta(lam, 3, 0.02, 0.5, 4);
    cr_expect(fabs(f * 1.05 - fk) < 1e-15 * fk, "floor %.17g K-sync %.17g", f, fk);
    /* gamma = 0, p0 = 0 is the K-sync bound */
    cr_expect(fabs(am_lsqbound_decay_dutta_async(lam, 3, 0.02, 0, 0) - (1 - 0.02 * 0.5)) < 1e-15);
    /* outside the bound's range: no bound */
    cr_expect(isnan(am_lsqbound_decay_dutta_async(lam, 3, 0.02, 1.6, 1)));
    cr_expect(isnan(am_lsqbound_floor_dutta_async(lam, 3, 0.02, 0.5, 4, 0.2, 1.5)));
    cr_expect(isnan(am_lsqbound_decay_dutta_async(lam, 3, 0.02, -0.1, 0.5)));
}
