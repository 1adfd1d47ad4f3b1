/*
 * test_validate_stats.c -- the statistical machinery of validate/: order fitting (OLS,
 * WLS, parametric bootstrap, noise floor), FFTW autocorrelation, tau_int, exponential
 * relaxation time, verdicts, bootstrap over replicas and quantile intervals.
 *
 * Deterministic parts are compared with closed forms or an independent implementation
 * (GSL's gsl_fit_linear / gsl_fit_wlinear, a direct O(N K) autocovariance sum) at relative
 * tolerances; statistical parts with tolerances of 4-5 standard errors (binomial standard
 * errors for coverages). Synthetic data come from core/am_rng.h with fixed seeds.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_fit.h>

#include "../core/am_rng.h"
#include "../validate/am_acf.h"
#include "../validate/am_check.h"
#include "../validate/am_fit.h"

#define VS_STREAM (AM_STREAM_TEST_FIRST + 8) /* synthetic data of these tests */

/* Relative difference |a - b| / max(|b|, tiny). */
static double vs_rel(double a, double b)
{
    return fabs(a - b) / fmax(fabs(b), 1e-300);
}

/* Binomial standard error of a proportion p over m trials. */
static double vs_binom_se(double p, double m)
{
    return sqrt(p * (1.0 - p) / m);
}

/* AR(1) x_t = phi x_{t-1} + e_t, e ~ N(0,1), started in the stationary law N(0, 1/(1-phi^2)). */
static void vs_ar1(double *x, size_t n, double phi, uint64_t seed, uint64_t replica)
{
    am_rng r;
    am_rng_init(&r, seed, replica, VS_STREAM, 0);
    x[0] = am_rng_gaussian(&r) / sqrt(1.0 - phi * phi);
    for (size_t t = 1; t < n; t++)
        x[t] = phi * x[t - 1] + am_rng_gaussian(&r);
}

/* A non-halving ladder of step sizes. */
static const double vs_eta[6] = {0.2, 0.13, 0.07, 0.045, 0.02, 0.011};

/* ---------------------------------------------------------------- order fitting */

Test(validate_stats, fit_exact_power_law)
{
    const double c = 2.5, p = 1.5;
    double err[6], sem[6];
    for (int i = 0; i < 6; i++) {
        err[i] = c * pow(vs_eta[i], p);
        sem[i] = 0.01 * err[i] * (1 + i);
    }
    am_fit_result r;
    cr_assert_eq(am_fit_order(vs_eta, err, 6, NULL, &r), AM_OK);
    cr_expect(vs_rel(r.slope, p) < 1e-12, "OLS slope %.17g, want %g", r.slope, p);
    cr_expect(vs_rel(r.intercept, log(c)) < 1e-12, "OLS intercept %.17g, want log %g", r.intercept,
              c);
    cr_expect(r.slope_se < 1e-12, "OLS se %g on exact data", r.slope_se);
    cr_assert_eq(am_fit_order_weighted(vs_eta, err, sem, 6, NULL, &r), AM_OK);
    cr_expect(vs_rel(r.slope, p) < 1e-12, "WLS slope %.17g, want %g", r.slope, p);
    cr_expect(r.rss < 1e-20, "WLS chi2 %g on exact data", r.rss);
    cr_expect(r.weighted == 1 && r.n == 6 && r.dof == 4.0);
}

Test(validate_stats, fit_matches_gsl_fit)
{
    /* noisy data; compare with GSL's independent least-squares routines */
    double err[6], sem[6], x[6], y[6], w[6];
    am_rng rng;
    am_rng_init(&rng, 11, 0, VS_STREAM, 0);
    for (int i = 0; i < 6; i++) {
        err[i] = 0.7 * vs_eta[i] * exp(0.2 * am_rng_gaussian(&rng));
        sem[i] = err[i] * (0.05 + 0.03 * i);
        x[i] = log(vs_eta[i]);
        y[i] = log(err[i]);
        w[i] = 1.0 / ((sem[i] / err[i]) * (sem[i] / err[i]));
    }
    double c0, c1, cov00, cov01, cov11, ss;
    gsl_fit_linear(x, 1, y, 1, 6, &c0, &c1, &cov00, &cov01, &cov11, &ss);
    am_fit_result r;
    cr_assert_eq(am_fit_order(vs_eta, err, 6, NULL, &r), AM_OK);
    cr_expect(vs_rel(r.slope, c1) < 1e-12, "OLS slope %.17g vs gsl %.17g", r.slope, c1);
    cr_expect(vs_rel(r.intercept, c0) < 1e-12, "OLS icpt %.17g vs gsl %.17g", r.intercept, c0);
    cr_expect(vs_rel(r.slope_se, sqrt(cov11)) < 1e-10, "OLS se %.17g vs gsl %.17g", r.slope_se,
              sqrt(cov11));
    cr_expect(vs_rel(r.intercept_se, sqrt(cov00)) < 1e-10, "OLS icpt se %.17g vs gsl %.17g",
              r.intercept_se, sqrt(cov00));
    double t = gsl_cdf_tdist_Qinv(0.025, 4.0);
    cr_expect(vs_rel(r.ci_hi - r.ci_lo, 2 * t * sqrt(cov11)) < 1e-10, "OLS CI width");

    double chi2;
    gsl_fit_wlinear(x, 1, w, 1, y, 1, 6, &c0, &c1, &cov00, &cov01, &cov11, &chi2);
    cr_assert_eq(am_fit_order_weighted(vs_eta, err, sem, 6, NULL, &r), AM_OK);
    cr_expect(vs_rel(r.slope, c1) < 1e-12, "WLS slope %.17g vs gsl %.17g", r.slope, c1);
    cr_expect(vs_rel(r.slope_se, sqrt(cov11)) < 1e-10, "WLS se %.17g vs gsl %.17g", r.slope_se,
              sqrt(cov11));
    cr_expect(vs_rel(r.intercept_se, sqrt(cov00)) < 1e-10, "WLS icpt se");
    cr_expect(vs_rel(r.rss, chi2) < 1e-10, "WLS chi2 %.17g vs gsl %.17g", r.rss, chi2);
    cr_expect(vs_rel(r.chi2_pvalue, gsl_cdf_chisq_Q(chi2, 4.0)) < 1e-10, "chi2 p-value");
    double z = gsl_cdf_ugaussian_Qinv(0.025);
    cr_expect(vs_rel(r.ci_hi - r.slope, z * sqrt(cov11)) < 1e-10, "WLS z interval");

    am_fit_params p = am_fit_params_default();
    p.scale_by_chi2 = 1;
    cr_assert_eq(am_fit_order_weighted(vs_eta, err, sem, 6, &p, &r), AM_OK);
    double f = fmax(1.0, chi2 / 4.0);
    cr_expect(vs_rel(r.slope_se, sqrt(f * cov11)) < 1e-10, "scaled WLS se %.17g, want %.17g",
              r.slope_se, sqrt(f * cov11));
    cr_expect(vs_rel(r.quantile, t) < 1e-12, "scaled WLS uses t_4");
}

Test(validate_stats, fit_rejects_bad_input)
{
    double eta[3] = {0.1, 0.05, 0.025}, err[3] = {1, 0.5, 0.25}, sem[3] = {0.1, 0.1, 0.1};
    am_fit_result r;
    cr_expect_eq(am_fit_order(eta, err, 1, NULL, &r), AM_EINVAL);
    double same[3] = {0.1, 0.1, 0.1};
    cr_expect_eq(am_fit_order(same, err, 3, NULL, &r), AM_EINVAL, "all eta equal");
    double neg[3] = {1, -0.5, 0.25};
    cr_expect_eq(am_fit_order(eta, neg, 3, NULL, &r), AM_EINVAL, "err <= 0");
    double zsem[3] = {0.1, 0, 0.1};
    cr_expect_eq(am_fit_order_weighted(eta, err, zsem, 3, NULL, &r), AM_EINVAL, "sem = 0");
    double nan_eta[3] = {0.1, NAN, 0.025};
    cr_expect_eq(am_fit_order(nan_eta, err, 3, NULL, &r), AM_EINVAL, "NaN eta");
    am_fit_params p = am_fit_params_default();
    p.level = 1.0;
    cr_expect_eq(am_fit_order_weighted(eta, err, sem, 3, &p, &r), AM_EINVAL, "level 1");
    /* two points: exact line, no error bar */
    cr_assert_eq(am_fit_order(eta, err, 2, NULL, &r), AM_OK);
    cr_expect(vs_rel(r.slope, 1.0) < 1e-12 && isnan(r.slope_se) && isnan(r.ci_lo));
}

/*
 * Coverage of the OLS t interval: log err_i = log C + p log eta_i + sigma Z_i is exactly the
 * Gaussian linear model, so the 95% interval covers p in 95% of datasets.
 */
Test(validate_stats, fit_ols_coverage)
{
    const double p = 2.0, c = 0.3, sigma = 0.15;
    const size_t m = 2000;
    size_t cover = 0;
    double err[6];
    for (size_t d = 0; d < m; d++) {
        am_rng rng;
        am_rng_init(&rng, 21, d, VS_STREAM, 0);
        for (int i = 0; i < 6; i++)
            err[i] = c * pow(vs_eta[i], p) * exp(sigma * am_rng_gaussian(&rng));
        am_fit_result r;
        cr_assert_eq(am_fit_order(vs_eta, err, 6, NULL, &r), AM_OK);
        if (d == 0)
            cr_expect(r.ci_lo <= p && p <= r.ci_hi, "dataset 0: slope %g CI [%g, %g], p = %g",
                      r.slope, r.ci_lo, r.ci_hi, p);
        cover += r.ci_lo <= p && p <= r.ci_hi;
    }
    double frac = (double)cover / (double)m, tol = 4 * vs_binom_se(0.95, (double)m);
    cr_expect(fabs(frac - 0.95) < tol,
              "OLS coverage %g over %zu datasets (p=%g sigma=%g), want 0.95 +- %g", frac, m, p,
              sigma, tol);
}

/* Data set d of the WLS model: err_i = C eta_i^p + sem_i Z_i, sem_i = rel_i C eta_i^p, the Z_i
 * from stream VS_STREAM of seed. */
static void wls_data(double p, double c, const double rel[6], uint64_t seed, size_t d,
                     double err[6], double sem[6])
{
    am_rng rng;
    am_rng_init(&rng, seed, d, VS_STREAM, 0);
    for (int i = 0; i < 6; i++) {
        double mu = c * pow(vs_eta[i], p);
        sem[i] = rel[i] * mu;
        err[i] = mu + sem[i] * am_rng_gaussian(&rng);
    }
}

/*
 * Coverage of the WLS z interval: err_i = C eta_i^p + sem_i Z_i with sem_i = 2% of the
 * mean; the delta method is then accurate to O(0.02^2).
 */
Test(validate_stats, fit_wls_coverage)
{
    const double p = 1.0, c = 4.0, rel[6] = {0.01, 0.01, 0.015, 0.02, 0.02, 0.03};
    const size_t m = 2000;
    size_t cover = 0;
    double err[6], sem[6];
    for (size_t d = 0; d < m; d++) {
        wls_data(p, c, rel, 22, d, err, sem);
        am_fit_result r;
        cr_assert_eq(am_fit_order_weighted(vs_eta, err, sem, 6, NULL, &r), AM_OK);
        cover += r.ci_lo <= p && p <= r.ci_hi;
    }
    double frac = (double)cover / (double)m, tol = 4 * vs_binom_se(0.95, (double)m);
    cr_expect(fabs(frac - 0.95) < tol, "WLS coverage %g over %zu datasets (p=%g), want 0.95 +- %g",
              frac, m, p, tol);
}

/* Coverage of the parametric-bootstrap percentile interval on the same model as above. */
Test(validate_stats, fit_bootstrap_coverage)
{
    const double p = 1.0, c = 4.0, rel[6] = {0.01, 0.01, 0.015, 0.02, 0.02, 0.03};
    const size_t m = 400;
    size_t cover = 0;
    double err[6], sem[6];
    am_fit_params fp = am_fit_params_default();
    fp.n_boot = 400;
    for (size_t d = 0; d < m; d++) {
        wls_data(p, c, rel, 23, d, err, sem);
        fp.seed = 1000 + d;
        am_fit_boot b;
        cr_assert_eq(am_fit_order_bootstrap(vs_eta, err, sem, 6, 1, &fp, &b), AM_OK);
        cr_assert_eq(b.n_valid, fp.n_boot, "no resample can go negative at 2%% noise");
        cover += b.lo <= p && p <= b.hi;
        if (d == 0) {
            /* the bootstrap sd estimates se(p); its relative sampling error is 1/sqrt(2B) */
            am_fit_result r;
            cr_assert_eq(am_fit_order_weighted(vs_eta, err, sem, 6, NULL, &r), AM_OK);
            double tol = 5 / sqrt(2.0 * (double)fp.n_boot);
            cr_expect(fabs(b.sd / r.slope_se - 1) < tol,
                      "bootstrap sd %g vs WLS se %g (B=%zu), tolerance %g", b.sd, r.slope_se,
                      fp.n_boot, tol);
        }
    }
    double frac = (double)cover / (double)m, tol = 4 * vs_binom_se(0.95, (double)m);
    cr_expect(fabs(frac - 0.95) < tol,
              "bootstrap coverage %g over %zu datasets (B=%zu), want 0.95 +- %g", frac, m,
              fp.n_boot, tol);
}

/* Resamples with err* <= 0 are skipped: with err/sem = 1 at one point, P = Phi(-1). */
Test(validate_stats, fit_bootstrap_rejects_nonpositive)
{
    double eta[4] = {0.1, 0.05, 0.025, 0.0125}, err[4] = {0.1, 0.05, 0.025, 0.0125};
    double sem[4] = {1e-4, 1e-4, 1e-4, 0.0125};
    am_fit_params fp = am_fit_params_default();
    fp.n_boot = 4000;
    fp.seed = 5;
    am_fit_boot b;
    cr_assert_eq(am_fit_order_bootstrap(eta, err, sem, 4, 0, &fp, &b), AM_OK);
    double pr = gsl_cdf_ugaussian_P(-1.0);
    double frac = (double)b.n_rejected / (double)fp.n_boot;
    double tol = 5 * vs_binom_se(pr, (double)fp.n_boot);
    cr_expect(fabs(frac - pr) < tol, "rejected fraction %g, want Phi(-1) = %g +- %g", frac, pr,
              tol);
    cr_expect_eq(b.n_valid + b.n_rejected, fp.n_boot);
    cr_expect(b.lo < b.median && b.median < b.hi);
    /* same seed, same answer */
    am_fit_boot b2;
    cr_assert_eq(am_fit_order_bootstrap(eta, err, sem, 4, 0, &fp, &b2), AM_OK);
    cr_expect(b2.lo == b.lo && b2.hi == b.hi && b2.n_valid == b.n_valid, "not deterministic");
}

Test(validate_stats, noise_floor_refuses)
{
    double err[4] = {16, 8, 4, 2}, sem[4] = {1, 1, 1, 1};
    am_fit_noise_floor_result nf;
    cr_assert_eq(am_fit_noise_floor(err, sem, 4, 1000, NULL, &nf), AM_OK);
    cr_expect(!nf.resolved && nf.worst == 3 && nf.ratio == 2.0, "ratio 2 < k = 3 must refuse");
    /* R_needed = ceil(1.5 * 1000 * (3 * 1 / 2)^2) = 3375 */
    cr_expect_eq(nf.replicas_needed, 3375.0, "replicas_needed %g", nf.replicas_needed);
    /* with that many replicas sem shrinks by sqrt(R / R_needed): now resolved */
    double sem2[4];
    for (int i = 0; i < 4; i++)
        sem2[i] = sem[i] * sqrt(1000.0 / nf.replicas_needed);
    am_fit_noise_floor_result nf2;
    cr_assert_eq(am_fit_noise_floor(err, sem2, 4, nf.replicas_needed, NULL, &nf2), AM_OK);
    cr_expect(nf2.resolved, "ratio %g after R_needed replicas", nf2.ratio);
    cr_expect_eq(nf2.replicas_needed, nf.replicas_needed);

    /* the whole order check reports INCONCLUSIVE with the replicas needed */
    double eta[4] = {0.4, 0.2, 0.1, 0.05};
    am_check_result r;
    am_check_init(&r, "order-test");
    cr_assert_eq(am_fit_order_check(eta, err, sem, 4, 1000, 1.0, NULL, &r), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE);
    cr_expect_eq(r.replicas_needed, 3375.0);
    cr_expect(strstr(r.note, "noise floor") != NULL, "note: %s", r.note);
    cr_expect_str_eq(r.name, "order-test");
}

Test(validate_stats, noise_floor_accepts)
{
    double err[4] = {16, 8, 4, 3}, sem[4] = {1, 1, 1, 1}, eta[4] = {0.4, 0.2, 0.1, 0.05};
    am_fit_noise_floor_result nf;
    cr_assert_eq(am_fit_noise_floor(err, sem, 4, 100, NULL, &nf), AM_OK);
    cr_expect(nf.resolved && nf.ratio == 3.0, "ratio 3 = k is enough");
    cr_expect_eq(nf.replicas_needed, 100.0);
    double err2[4] = {16, 8, 4, 2.999};
    cr_assert_eq(am_fit_noise_floor(err2, sem, 4, 100, NULL, &nf), AM_OK);
    cr_expect(!nf.resolved, "ratio 2.999 < 3 must refuse");
    double zero[4] = {0, 0, 0, 0};
    cr_assert_eq(am_fit_noise_floor(err, zero, 4, 1, NULL, &nf), AM_OK);
    cr_expect(nf.resolved && isinf(nf.ratio), "exact data (sem 0) is always resolved");

    /* well-resolved power law with slope 1: PASS at p = 1, FAIL at p = 2 */
    double e[4], s[4];
    for (int i = 0; i < 4; i++) {
        e[i] = 3 * eta[i] * (1 + 0.004 * (i % 2 ? 1 : -1));
        s[i] = 0.01 * e[i];
    }
    am_check_result r;
    am_check_init(&r, "order-pass");
    cr_assert_eq(am_fit_order_check(eta, e, s, 4, 100, 1.0, NULL, &r), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_PASS, "measured %g +- %g tol %g note %s", r.measured,
                 r.measured_sem, r.tolerance, r.note);
    cr_expect_eq(r.replicas_needed, 0.0);
    am_check_init(&r, "order-fail");
    cr_assert_eq(am_fit_order_check(eta, e, s, 4, 100, 2.0, NULL, &r), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_FAIL, "measured %g predicted 2", r.measured);
    /* exact data, sem 0: OLS route */
    for (int i = 0; i < 4; i++)
        e[i] = 3 * eta[i] * eta[i];
    am_check_init(&r, "order-exact");
    cr_assert_eq(am_fit_order_check(eta, e, zero, 4, 1, 2.0, NULL, &r), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_PASS, "measured %.17g tol %g", r.measured, r.tolerance);
}

/* The goodness-of-fit gate: a ladder with a floor at its small step sizes (err = 3 eta + 0.03,
 * the shape of a noise-induced term that stops the delay's gap from vanishing) and 0.5 %
 * errors misfits one power law (chi2 p-value ~ 0), so no verdict, whatever the interval says,
 * against the order the fit happens to centre on as against the theory's; the same fit of a
 * clean power law (chi2 p-value about 0.7) keeps its PASS, and the gate shut (gof_level 0)
 * lets the misfit's interval decide. */
Test(validate_stats, misfit_gives_no_verdict)
{
    double eta[5] = {0.4, 0.2, 0.1, 0.05, 0.025}, e[5], s[5], c[5], cs[5];
    for (int i = 0; i < 5; i++) {
        e[i] = 3 * eta[i] + 0.03;
        s[i] = 0.005 * e[i];
        c[i] = 3 * eta[i] * (1 + 0.004 * (i % 2 ? 1 : -1));
        cs[i] = 0.01 * c[i];
    }
    am_fit_params p = am_fit_params_default();
    am_fit_result fr;
    cr_assert_eq(am_fit_order_weighted(eta, e, s, 5, &p, &fr), AM_OK);
    cr_expect(fr.chi2_pvalue < 1e-10 && am_fit_misfit(&fr, &p), "chi2 p-value %g", fr.chi2_pvalue);
    const double orders[2] = {1.0, fr.slope};
    for (int k = 0; k < 2; k++) {
        am_check_result r;
        am_check_init(&r, "misfit");
        cr_assert_eq(am_fit_order_check(eta, e, s, 5, 1000, orders[k], &p, &r), AM_OK);
        cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE, "predicted %g: %s", orders[k], r.note);
        cr_expect(isnan(r.replicas_needed) && strstr(r.note, "does not fit"), "%s", r.note);
    }
    am_check_result r;
    am_check_init(&r, "clean");
    cr_assert_eq(am_fit_order_check(eta, c, cs, 5, 1000, 1.0, &p, &r), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_PASS, "clean power law: %s", r.note);
    p.gof_level = 0;
    am_check_init(&r, "gate-shut");
    cr_assert_eq(am_fit_order_check(eta, e, s, 5, 1000, 1.0, &p, &r), AM_OK);
    cr_expect_neq(r.verdict, AM_CHECK_INCONCLUSIVE, "gate shut: the interval decides (%s)", r.note);
}

/* ---------------------------------------------------------------- autocorrelation */

Test(validate_stats, acf_fast_size)
{
    cr_expect_eq(am_acf_fast_size(1), 1);
    cr_expect_eq(am_acf_fast_size(11), 12);
    cr_expect_eq(am_acf_fast_size(13), 14);
    cr_expect_eq(am_acf_fast_size(2 * 1000 - 1), 2000);
    cr_expect_eq(am_acf_fast_size(4097), 4116); /* 2^2 3 7^3 */
    cr_expect_eq(am_acf_fast_size(121), 125);
}

Test(validate_stats, acf_matches_direct_sum)
{
    const size_t n = 1000, nlag = 50;
    double *x = malloc(n * sizeof *x), rho[50];
    vs_ar1(x, n, 0.5, 31, 0);
    for (size_t t = 0; t < n; t++)
        x[t] += 3.0; /* a mean to subtract */
    double mean, var;
    cr_assert_eq(am_acf_compute(x, n, rho, nlag, &mean, &var), AM_OK);
    double xm = 0;
    for (size_t t = 0; t < n; t++)
        xm += x[t];
    xm /= (double)n;
    cr_expect(vs_rel(mean, xm) < 1e-13, "mean");
    double c0 = 0;
    for (size_t t = 0; t < n; t++)
        c0 += (x[t] - xm) * (x[t] - xm);
    c0 /= (double)n;
    cr_expect(vs_rel(var, c0) < 1e-12, "c(0) %.17g vs direct %.17g", var, c0);
    for (size_t k = 0; k < nlag; k++) {
        double ck = 0;
        for (size_t t = 0; t + k < n; t++)
            ck += (x[t] - xm) * (x[t + k] - xm);
        ck /= (double)n;
        cr_expect(fabs(rho[k] - ck / c0) < 1e-12, "rho(%zu) %.17g vs direct %.17g", k, rho[k],
                  ck / c0);
    }
    double c[4] = {7, 7, 7, 7};
    cr_expect_eq(am_acf_compute(c, 4, rho, 4, NULL, NULL), AM_EDOM, "constant series");
    cr_expect_eq(am_acf_compute(x, n, rho, n + 1, NULL, NULL), AM_EINVAL, "nlag > n");
    free(x);
}

/*
 * AR(1): rho(k) = phi^k; Bartlett's formula for AR(1) gives
 * var r(k) ~ (1/N) [(1 + phi^2)(1 - phi^{2k}) / (1 - phi^2) - 2 k phi^{2k}].
 */
Test(validate_stats, acf_ar1)
{
    const size_t n = 1 << 16, nlag = 12;
    const double phi = 0.8;
    double *x = malloc(n * sizeof *x), rho[12];
    vs_ar1(x, n, phi, 41, 0);
    cr_assert_eq(am_acf_compute(x, n, rho, nlag, NULL, NULL), AM_OK);
    for (size_t k = 1; k < nlag; k++) {
        double p2k = pow(phi, 2.0 * (double)k);
        double v =
            ((1 + phi * phi) * (1 - p2k) / (1 - phi * phi) - 2.0 * (double)k * p2k) / (double)n;
        double want = pow(phi, (double)k);
        cr_expect(fabs(rho[k] - want) < 5 * sqrt(v),
                  "AR(1) phi=%g N=%zu: rho(%zu) = %g, want %g +- 5 x %g", phi, n, k, rho[k], want,
                  sqrt(v));
    }
    free(x);
}

/*
 * tau_int of AR(1) = (1 + phi) / (1 - phi). Over R independent series the mean estimate
 * must be within 5 standard errors of the mean (empirical sd / sqrt(R)); the Madras-Sokal
 * standard error must match the empirical sd within 5 x its relative sampling error
 * 1/sqrt(2(R-1)).
 */
Test(validate_stats, tau_int_ar1)
{
    const size_t n = 1 << 13, nrep = 64;
    const double phi = 0.8, want = (1 + phi) / (1 - phi);
    double *x = malloc(n * sizeof *x);
    double sum = 0, sum2 = 0, se_sum = 0;
    for (size_t r = 0; r < nrep; r++) {
        vs_ar1(x, n, phi, 51, r);
        am_acf_summary s;
        cr_assert_eq(am_acf_time_average(x, n, 5.0, &s), AM_OK);
        cr_assert(s.window_found, "window not found, replica %zu", r);
        sum += s.tau_int;
        sum2 += s.tau_int * s.tau_int;
        se_sum += s.tau_se;
    }
    double mean = sum / (double)nrep;
    double sd = sqrt((sum2 - sum * mean) / (double)(nrep - 1));
    double sem = sd / sqrt((double)nrep);
    cr_expect(fabs(mean - want) < 5 * sem,
              "tau_int mean %g over %zu series (N=%zu, phi=%g), want %g +- 5 x %g", mean, nrep, n,
              phi, want, sem);
    double se_model = se_sum / (double)nrep;
    double rel_tol = 5 / sqrt(2.0 * (double)(nrep - 1));
    cr_expect(fabs(se_model / sd - 1) < rel_tol,
              "Madras-Sokal se %g vs empirical sd %g (N=%zu), relative tolerance %g", se_model, sd,
              n, rel_tol);

    /* one long series against the closed form with the Madras-Sokal error bar */
    const size_t nl = 1 << 16;
    double *xl = malloc(nl * sizeof *xl);
    vs_ar1(xl, nl, phi, 52, 0);
    am_acf_summary s;
    cr_assert_eq(am_acf_time_average(xl, nl, 5.0, &s), AM_OK);
    cr_expect(fabs(s.tau_int - want) < 5 * s.tau_se, "tau_int %g +- %g (N=%zu), want %g", s.tau_int,
              s.tau_se, nl, want);
    cr_expect(s.window >= 5.0 * s.tau_int && s.window < 5.0 * s.tau_int + 10,
              "window %zu for tau %g", s.window, s.tau_int);
    free(xl);
    free(x);
}

/* The error bar of a time average covers the true mean (0) in 95% of AR(1) series. */
Test(validate_stats, time_average_sem_coverage)
{
    const size_t n = 4096, nrep = 400;
    const double phi = 0.8;
    double *x = malloc(n * sizeof *x);
    size_t cover = 0;
    for (size_t r = 0; r < nrep; r++) {
        vs_ar1(x, n, phi, 61, r);
        am_acf_summary s;
        cr_assert_eq(am_acf_time_average(x, n, 5.0, &s), AM_OK);
        cover += fabs(s.mean) <= 1.959963984540054 * s.sem;
    }
    double frac = (double)cover / (double)nrep, tol = 4 * vs_binom_se(0.95, (double)nrep);
    cr_expect(fabs(frac - 0.95) < tol,
              "time-average coverage %g over %zu AR(1) series (phi=%g N=%zu), want 0.95 +- %g",
              frac, nrep, phi, n, tol);
    free(x);
}

Test(validate_stats, relaxation_time)
{
    /* exact exponential: recovered to rounding */
    double rho[40];
    for (int k = 0; k < 40; k++)
        rho[k] = 0.9 * exp(-k / 7.5);
    rho[0] = 1.0;
    am_acf_exp e;
    cr_assert_eq(am_acf_fit_exp(rho, 40, 0, 0.05, &e), AM_OK);
    cr_expect(vs_rel(e.tau_exp, 7.5) < 1e-12, "tau_exp %.17g, want 7.5", e.tau_exp);
    cr_expect(vs_rel(e.amplitude, 0.9) < 1e-12, "amplitude %.17g", e.amplitude);
    cr_expect_eq(e.lags_used, 21, "lags with 0.9 exp(-k/7.5) > 0.05: 1..21, got %zu", e.lags_used);
    cr_expect_eq(am_acf_fit_exp(rho, 40, 0, 0.89, &e), AM_EDOM, "fewer than 2 lags");

    /* AR(1): tau_exp = -1/log(phi); from tau_int by the closed form */
    const double phi = 0.9, want = -1.0 / log(phi);
    cr_expect(vs_rel(am_acf_tau_exp_from_tau_int((1 + phi) / (1 - phi)), want) < 1e-12);
    cr_expect(isnan(am_acf_tau_exp_from_tau_int(1.0)));

    /* the fit on estimated ACFs of R series: mean within 5 standard errors of the truth */
    const size_t n = 1 << 15, nrep = 16;
    double *x = malloc(n * sizeof *x), r30[30];
    double sum = 0, sum2 = 0;
    for (size_t r = 0; r < nrep; r++) {
        vs_ar1(x, n, phi, 71, r);
        cr_assert_eq(am_acf_compute(x, n, r30, 30, NULL, NULL), AM_OK);
        cr_assert_eq(am_acf_fit_exp(r30, 30, n, 0.2, &e), AM_OK);
        sum += e.tau_exp;
        sum2 += e.tau_exp * e.tau_exp;
    }
    double mean = sum / (double)nrep;
    double sem = sqrt((sum2 - sum * mean) / (double)(nrep - 1) / (double)nrep);
    cr_expect(fabs(mean - want) < 5 * sem,
              "tau_exp mean %g over %zu AR(1) series (phi=%g N=%zu), want %g +- 5 x %g", mean, nrep,
              phi, n, want, sem);
    free(x);
}

/* The n/(n-k) correction: an ACF with the biased estimator's factor (n-k)/n applied. */
Test(validate_stats, relaxation_time_bias_correction)
{
    const size_t n = 100;
    double rho[30];
    for (size_t k = 0; k < 30; k++)
        rho[k] = exp(-(double)k / 6.0) * (double)(n - k) / (double)n;
    am_acf_exp e;
    cr_assert_eq(am_acf_fit_exp(rho, 30, n, 0.01, &e), AM_OK);
    cr_expect(vs_rel(e.tau_exp, 6.0) < 1e-12, "corrected tau_exp %.17g, want 6", e.tau_exp);
    cr_assert_eq(am_acf_fit_exp(rho, 30, 0, 0.01, &e), AM_OK);
    cr_expect(e.tau_exp < 5.9, "uncorrected fit must be biased low, got %g", e.tau_exp);
    cr_expect_eq(am_acf_fit_exp(rho, 30, 20, 0.01, &e), AM_EINVAL, "n < nlag");
}

/* Pooled ACF equals the average of the per-series autocovariances (direct sums). */
Test(validate_stats, acf_pooled_matches_direct)
{
    const size_t nrep = 3, n = 200, nlag = 20;
    double x[600], rho[20], rk[20], var, mean, vk;
    for (size_t r = 0; r < nrep; r++)
        vs_ar1(x + r * n, n, 0.6, 33, r);
    for (size_t t = 0; t < n; t++)
        x[n + t] += 1.0; /* series 1 has another mean */
    cr_assert_eq(am_acf_pooled(x, nrep, n, rho, nlag, &mean, &var), AM_OK);
    cr_assert_eq(am_acf_pooled_known_mean(x, nrep, n, 0.25, rk, nlag, &vk), AM_OK);
    double c[20] = {0}, ck[20] = {0}, gm = 0;
    for (size_t r = 0; r < nrep; r++) {
        const double *xr = x + r * n;
        double xm = 0;
        for (size_t t = 0; t < n; t++)
            xm += xr[t];
        xm /= (double)n;
        gm += xm / (double)nrep;
        for (size_t k = 0; k < nlag; k++)
            for (size_t t = 0; t + k < n; t++) {
                c[k] += (xr[t] - xm) * (xr[t + k] - xm) / (double)(n * nrep);
                ck[k] += (xr[t] - 0.25) * (xr[t + k] - 0.25) / (double)(n * nrep);
            }
    }
    cr_expect(vs_rel(mean, gm) < 1e-13 && vs_rel(var, c[0]) < 1e-12, "mean %g var %g", mean, var);
    cr_expect(vs_rel(vk, ck[0]) < 1e-12, "known-mean var %.17g vs %.17g", vk, ck[0]);
    for (size_t k = 0; k < nlag; k++) {
        cr_expect(fabs(rho[k] - c[k] / c[0]) < 1e-12, "pooled rho(%zu)", k);
        cr_expect(fabs(rk[k] - ck[k] / ck[0]) < 1e-12, "known-mean rho(%zu)", k);
    }
}

/* Called from an OpenMP region (plans made in the critical section): same bits as serial. */
Test(validate_stats, acf_openmp_safe)
{
    enum { NS = 8, N = 3000, L = 64 };
    double *x = malloc(NS * N * sizeof *x), serial[NS][L], par[NS][L];
    for (size_t r = 0; r < NS; r++) {
        vs_ar1(x + r * N, N, 0.7, 34, r);
        cr_assert_eq(am_acf_compute(x + r * N, N, serial[r], L, NULL, NULL), AM_OK);
    }
    int bad = 0;
#pragma omp parallel for num_threads(2) schedule(static, 1) reduction(+ : bad)
    for (int r = 0; r < NS; r++)
        bad += am_acf_compute(x + (size_t)r * N, N, par[r], L, NULL, NULL) != AM_OK;
    cr_expect_eq(bad, 0);
    cr_expect(memcmp(serial, par, sizeof serial) == 0, "threaded ACF differs from serial");
    free(x);
}

/* Statistic for the bootstrap below: tau_exp of the pooled, known-mean ACF of the records. */
static double vs_pooled_tau_exp(const double *x, size_t n, size_t dim, void *ctx)
{
    (void)ctx;
    double rho[40];
    am_acf_exp e;
    if (am_acf_pooled_known_mean(x, n, dim, 0.0, rho, 40, NULL) != AM_OK) return NAN;
    if (am_acf_fit_exp(rho, 40, dim, 0.2, &e) != AM_OK) return NAN;
    return e.tau_exp;
}

/*
 * Relaxation time from many short stationary series (the shape of an ensemble run): 128
 * AR(1) series of 512 steps, pooled known-mean ACF, n/(n-k) correction; the truth must lie
 * within 5 bootstrap-over-replicas standard errors.
 */
Test(validate_stats, relaxation_time_pooled_bootstrap)
{
    const size_t nrep = 128, n = 512;
    const double phi = 0.9, want = -1.0 / log(phi);
    double *x = malloc(nrep * n * sizeof *x);
    for (size_t r = 0; r < nrep; r++)
        vs_ar1(x + r * n, n, phi, 72, r);
    am_check_interval ci;
    cr_assert_eq(am_check_bootstrap(x, nrep, n, vs_pooled_tau_exp, NULL, 200, 0.95, 9, &ci), AM_OK);
    cr_expect_eq(ci.n_rejected, 0);
    cr_expect(fabs(ci.estimate - want) < 5 * ci.se,
              "pooled tau_exp %g +- %g (R=%zu n=%zu phi=%g), want %g", ci.estimate, ci.se, nrep, n,
              phi, want);
    cr_expect(ci.lo < ci.estimate && ci.estimate < ci.hi);
    free(x);
}

/* ---------------------------------------------------------------- checks */

Test(validate_stats, check_decide)
{
    cr_expect(vs_rel(am_check_z(0.95), 1.959963984540054) < 1e-14, "z(0.95) %.17g",
              am_check_z(0.95));
    cr_expect(isnan(am_check_z(1.0)));
    am_check_result r;
    am_check_init(&r, "decide");
    r.measured = 1.11;
    r.measured_sem = 0.03;
    r.predicted = 1.0;
    r.predicted_sem = 0.04;
    cr_assert_eq(am_check_decide(&r, 2.0, 0.0), AM_OK);
    cr_expect(vs_rel(r.tolerance, 0.1) < 1e-14, "tol = 2 sqrt(0.03^2 + 0.04^2) = 0.1, got %.17g",
              r.tolerance);
    cr_expect_eq(r.verdict, AM_CHECK_FAIL, "|1.11 - 1| > 0.1");
    cr_assert_eq(am_check_decide(&r, 2.0, 0.02), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_PASS, "model error 0.02 widens to 0.12");
    cr_expect(vs_rel(r.tolerance, 0.12) < 1e-14);
    r.measured_sem = NAN;
    cr_assert_eq(am_check_decide(&r, 2.0, 0.0), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE);
    cr_expect_eq(am_check_decide(&r, 0.0, 0.0), AM_EINVAL);
    cr_expect_eq(am_check_decide(&r, 2.0, -1.0), AM_EINVAL);
    cr_expect_str_eq(am_check_verdict_name(AM_CHECK_PASS), "PASS");
    cr_expect_str_eq(am_check_verdict_name(AM_CHECK_FAIL), "FAIL");
    cr_expect_str_eq(am_check_verdict_name(AM_CHECK_INCONCLUSIVE), "INCONCLUSIVE");
    cr_expect_eq(am_check_replicas_for(0.02, 1000, 0.01, 1.0), 4000.0);
    cr_expect_eq(am_check_replicas_for(0.02, 1000, 0.01, 1.5), 6000.0);
    cr_expect_eq(am_check_replicas_for(0.01, 1000, 0.02, 1.0), 250.0);
    cr_expect(isnan(am_check_replicas_for(0.01, 0, 0.02, 1.0)));
    cr_expect(isnan(am_check_replicas_for(0.01, 10, 0.02, 0.5)));
    am_check_set_params(&r, "eta=%g mu=%g", 0.01, 0.5);
    cr_expect_str_eq(r.params, "eta=0.01 mu=0.5");
    am_check_add_note(&r, "first");
    am_check_add_note(&r, "second %d", 2);
    cr_expect_str_eq(r.note, "first; second 2");
    char longname[200];
    memset(longname, 'a', sizeof longname - 1);
    longname[199] = 0;
    am_check_init(&r, longname);
    cr_expect_eq(strlen(r.name), AM_CHECK_NAME_MAX - 1, "name truncated");
    cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE);
}

/* Statistic: mean of column 0. */
static double vs_mean_stat(const double *x, size_t n, size_t dim, void *ctx)
{
    (void)ctx;
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i * dim];
    return s / (double)n;
}

/* Statistic: mean of column 0 if every record keeps x1 = 2 x0, else NaN. */
static double vs_record_stat(const double *x, size_t n, size_t dim, void *ctx)
{
    for (size_t i = 0; i < n; i++)
        if (x[i * dim + 1] != 2 * x[i * dim]) return NAN;
    return vs_mean_stat(x, n, dim, ctx);
}

/* Statistic: NaN when column 0 has a negative mean (to test skipping). */
static double vs_positive_mean(const double *x, size_t n, size_t dim, void *ctx)
{
    double m = vs_mean_stat(x, n, dim, ctx);
    return m > 0 ? m : NAN;
}

/*
 * Percentile bootstrap of the mean of n = 40 normal values: coverage of the 95% interval.
 * For normal data its interval is close to xm +- z s_plug/sqrt(n) with the plug-in
 * s_plug = s sqrt((n-1)/n), so its coverage is P(|t_{n-1}| <= z sqrt((n-1)/n)) = 0.9397 at
 * n = 40, below the nominal 0.95: the test holds the measured coverage against that value,
 * with 4 binomial standard errors over m = 2000 datasets.
 */
Test(validate_stats, bootstrap_replicas_coverage)
{
    const size_t n = 40, m = 2000, nb = 500;
    const double mu = 1.5;
    double x[40];
    size_t cover = 0;
    for (size_t d = 0; d < m; d++) {
        am_rng rng;
        am_rng_init(&rng, 81, d, VS_STREAM, 0);
        for (size_t i = 0; i < n; i++)
            x[i] = mu + 2.0 * am_rng_gaussian(&rng);
        am_check_interval ci;
        cr_assert_eq(am_check_bootstrap(x, n, 1, vs_mean_stat, NULL, nb, 0.95, 900 + d, &ci),
                     AM_OK);
        cr_assert_eq(ci.n_valid, nb);
        cover += ci.lo <= mu && mu <= ci.hi;
        if (d == 0) {
            /* bootstrap se estimates sqrt(sum (x - xm)^2 / n) / sqrt(n); Monte Carlo error
               of a sd from B draws is 1/sqrt(2B) relative */
            double xm = 0, ss = 0;
            for (size_t i = 0; i < n; i++)
                xm += x[i];
            xm /= (double)n;
            for (size_t i = 0; i < n; i++)
                ss += (x[i] - xm) * (x[i] - xm);
            double se = sqrt(ss / (double)n) / sqrt((double)n);
            double tol = 5 / sqrt(2.0 * (double)nb);
            cr_expect(fabs(ci.se / se - 1) < tol, "bootstrap se %g vs plug-in se %g (B=%zu)", ci.se,
                      se, nb);
        }
    }
    double zq = gsl_cdf_ugaussian_Pinv(0.975) * sqrt((double)(n - 1) / (double)n);
    double expect = 1 - 2 * gsl_cdf_tdist_Q(zq, (double)(n - 1));
    double frac = (double)cover / (double)m, tol = 4 * vs_binom_se(expect, (double)m);
    cr_expect(fabs(frac - expect) < tol,
              "bootstrap coverage %g over %zu datasets (n=%zu B=%zu), want %.4f +- %g", frac, m, n,
              nb, expect, tol);
}

Test(validate_stats, bootstrap_records_and_skips)
{
    double rec[20];
    for (int i = 0; i < 10; i++) {
        rec[2 * i] = i - 2.0;
        rec[2 * i + 1] = 2 * (i - 2.0);
    }
    am_check_interval ci;
    cr_assert_eq(am_check_bootstrap(rec, 10, 2, vs_record_stat, NULL, 200, 0.9, 3, &ci), AM_OK);
    cr_expect_eq(ci.n_rejected, 0, "records were split");
    cr_expect(vs_rel(ci.estimate, 2.5) < 1e-15);
    cr_expect(ci.lo < 2.5 && 2.5 < ci.hi, "[%g, %g]", ci.lo, ci.hi);
    /* values -1 (prob 0.5) and 1: the mean of 2 draws is <= 0 with probability 3/4 */
    double pm[2] = {-1.0, 1.0};
    cr_assert_eq(am_check_bootstrap(pm, 2, 1, vs_positive_mean, NULL, 2000, 0.9, 4, &ci), AM_OK);
    double frac = (double)ci.n_rejected / 2000.0;
    cr_expect(fabs(frac - 0.75) < 5 * vs_binom_se(0.75, 2000), "skipped fraction %g, want 0.75",
              frac);
    cr_expect(ci.lo == 1.0 && ci.hi == 1.0);
    cr_expect_eq(am_check_bootstrap(pm, 1, 1, vs_mean_stat, NULL, 10, 0.9, 4, &ci), AM_EINVAL);
}

/* ---------------------------------------------------------------- quantiles */

Test(validate_stats, quantiles_closed_form)
{
    double x[11] = {11, 3, 7, 1, 9, 5, 2, 10, 4, 8, 6}; /* 1..11 shuffled */
    double q[3] = {0.25, 0.5, 0.75}, out[3];
    cr_assert_eq(am_check_quantiles(x, 11, q, 3, out), AM_OK);
    cr_expect(out[0] == 3.5 && out[1] == 6.0 && out[2] == 8.5, "quartiles %g %g %g", out[0], out[1],
              out[2]);
    /* Bin(11, 1/2): F(1) = 12/2048, F(2) = 67/2048 > 0.025 -> l = 2; F(9) = 2036/2048 ->
       u = 10; coverage F(9) - F(1) = 2024/2048 */
    am_check_interval ci;
    cr_assert_eq(am_check_quantile(x, 11, 0.5, 0.95, &ci), AM_OK);
    cr_expect(ci.estimate == 6.0 && ci.lo == 2.0 && ci.hi == 10.0, "median %g [%g, %g]",
              ci.estimate, ci.lo, ci.hi);
    cr_expect(vs_rel(ci.coverage, 2024.0 / 2048.0) < 1e-12, "coverage %.17g", ci.coverage);
    /* n = 3 cannot give a 95% interval for the median: both sides open */
    cr_assert_eq(am_check_quantile(x, 3, 0.5, 0.95, &ci), AM_OK);
    cr_expect(isinf(ci.lo) && ci.lo < 0 && isinf(ci.hi) && ci.hi > 0);
    cr_expect_eq(am_check_quantile(x, 11, 1.5, 0.95, &ci), AM_EINVAL);

    /* x_i = i, so the interval bounds are the ranks: check they are the extreme ones */
    const unsigned nn = 2000;
    double *r = malloc(nn * sizeof *r);
    for (unsigned i = 0; i < nn; i++)
        r[i] = (double)(nn - i); /* unsorted on purpose */
    const double qs[3] = {0.1, 0.5, 0.97};
    for (int j = 0; j < 3; j++) {
        cr_assert_eq(am_check_quantile(r, nn, qs[j], 0.99, &ci), AM_OK);
        unsigned l = (unsigned)ci.lo, u = (unsigned)ci.hi;
        double a = 0.005;
        cr_expect(gsl_cdf_binomial_P(l - 1, qs[j], nn) <= a && gsl_cdf_binomial_P(l, qs[j], nn) > a,
                  "q=%g n=%u: lower rank %u not the largest with F(l-1) <= %g", qs[j], nn, l, a);
        cr_expect(
            gsl_cdf_binomial_Q(u - 1, qs[j], nn) <= a && gsl_cdf_binomial_Q(u - 2, qs[j], nn) > a,
            "q=%g n=%u: upper rank %u not the smallest with P(B >= u) <= %g", qs[j], nn, u, a);
        double cov = gsl_cdf_binomial_P(u - 1, qs[j], nn) - gsl_cdf_binomial_P(l - 1, qs[j], nn);
        cr_expect(fabs(ci.coverage - cov) < 1e-12 && ci.coverage >= 0.99, "coverage %.17g vs %.17g",
                  ci.coverage, cov);
    }
    free(r);
    double bad[2] = {1, NAN};
    cr_expect_eq(am_check_quantiles(bad, 2, q, 3, out), AM_EINVAL);
    double minf[2] = {1, -INFINITY};
    cr_expect_eq(am_check_quantiles(minf, 2, q, 3, out), AM_EINVAL);

    /* right-censored values (+INFINITY) */
    double cens[5] = {INFINITY, 2, 3, INFINITY, 1};
    double qc[4] = {0.5, 0.25, 0.6, 0.75}, oc[4];
    cr_assert_eq(am_check_quantiles(cens, 5, qc, 4, oc), AM_OK);
    cr_expect(oc[0] == 3.0 && oc[1] == 2.0, "censored median %g, quartile %g", oc[0], oc[1]);
    cr_expect(isinf(oc[2]) && oc[2] > 0 && isinf(oc[3]) && oc[3] > 0,
              "quantiles reaching censored values: %g %g", oc[2], oc[3]);
    double censb[5] = {INFINITY, 2, 3, 4, 1};
    cr_expect_eq(am_check_quantile_bootstrap(censb, 5, 0.5, 10, 0.9, 1, &ci), AM_EINVAL,
                 "bootstrap refuses censored values");
}

/*
 * Order-statistic interval on exponential data: for a continuous law its coverage is
 * exactly the reported one, so the empirical coverage must match it (binomial tolerance).
 */
Test(validate_stats, quantile_interval_coverage)
{
    const size_t n = 30, m = 2000;
    const double q = 0.5, truth = log(2.0); /* median of Exp(1) */
    double x[30], reported = 0;
    size_t cover = 0;
    for (size_t d = 0; d < m; d++) {
        am_rng rng;
        am_rng_init(&rng, 91, d, VS_STREAM, 0);
        for (size_t i = 0; i < n; i++)
            x[i] = -log(am_rng_uniform(&rng));
        am_check_interval ci;
        cr_assert_eq(am_check_quantile(x, n, q, 0.95, &ci), AM_OK);
        reported = ci.coverage;
        cover += ci.lo <= truth && truth <= ci.hi;
    }
    cr_expect(reported >= 0.95, "reported coverage %g below the level", reported);
    double frac = (double)cover / (double)m, tol = 4 * vs_binom_se(reported, (double)m);
    cr_expect(fabs(frac - reported) < tol,
              "order-statistic coverage %g over %zu Exp(1) samples (n=%zu), want %g +- %g", frac, m,
              n, reported, tol);

    /* the same with right-censoring at the horizon 1.5 (P(X > 1.5) = 0.22): the interval
       only involves counts below the median, so its coverage is unchanged */
    size_t cover_c = 0, censored_hi = 0;
    for (size_t d = 0; d < m; d++) {
        am_rng rng;
        am_rng_init(&rng, 92, d, VS_STREAM, 0);
        for (size_t i = 0; i < n; i++) {
            x[i] = -log(am_rng_uniform(&rng));
            if (x[i] > 1.5) x[i] = INFINITY;
        }
        am_check_interval ci;
        cr_assert_eq(am_check_quantile(x, n, q, 0.95, &ci), AM_OK);
        censored_hi += isinf(ci.hi);
        cover_c += ci.lo <= truth && truth <= ci.hi;
    }
    double frac_c = (double)cover_c / (double)m;
    cr_expect(fabs(frac_c - reported) < tol,
              "censored order-statistic coverage %g over %zu samples, want %g +- %g "
              "(%zu upper bounds censored)",
              frac_c, m, reported, tol, censored_hi);

    /* the bootstrap interval of the same median on one sample */
    for (size_t i = 0; i < n; i++)
        x[i] = isinf(x[i]) ? 2.0 : x[i];
    am_check_interval bi, oi;
    cr_assert_eq(am_check_quantile_bootstrap(x, n, q, 1000, 0.95, 7, &bi), AM_OK);
    cr_assert_eq(am_check_quantile(x, n, q, 0.95, &oi), AM_OK);
    cr_expect(bi.estimate == oi.estimate && bi.lo <= bi.estimate && bi.estimate <= bi.hi,
              "bootstrap median %g [%g, %g]", bi.estimate, bi.lo, bi.hi);
    cr_expect_eq(bi.n_valid, 1000);
}

/* The t interval over few seeds: a closed-form case, then coverage of N(0, 1) means at
 * n = 3 and n = 10 over 4000 samples each. The same data with the normal quantile (the
 * wrong interval for few seeds) covers visibly less at n = 3 (about 0.81), so the
 * coverage check can fail. Then the median with its bootstrap interval, NaNs dropped. */
Test(validate_stats, t_interval_few_seeds)
{
    am_stats s = {0, 0, 0};
    am_stats_push(&s, 1.0);
    am_stats_push(&s, 2.0);
    am_stats_push(&s, 6.0); /* mean 3, sd sqrt(7), sem sqrt(7/3) */
    am_check_interval ci;
    am_check_t_interval(&s, 0.95, &ci);
    const double h = 4.302652729749464 * sqrt(7.0 / 3.0);
    cr_expect(fabs(ci.lo - (3 - h)) <= 1e-12 && fabs(ci.hi - (3 + h)) <= 1e-12,
              "t interval [%.15g, %.15g], closed form [%.15g, %.15g]", ci.lo, ci.hi, 3 - h, 3 + h);
    am_stats one = {0, 0, 0};
    am_stats_push(&one, 5.0);
    am_check_t_interval(&one, 0.95, &ci);
    cr_expect(isnan(ci.lo) && isnan(ci.hi) && ci.estimate == 5.0, "one value has no interval");
    const size_t ns[2] = {3, 10}, m = 4000;
    for (int c = 0; c < 2; c++) {
        size_t cover_t = 0, cover_z = 0;
        for (size_t d = 0; d < m; d++) {
            am_rng rng;
            am_rng_init(&rng, 93, d, VS_STREAM, (uint64_t)c);
            am_stats x = {0, 0, 0};
            for (size_t i = 0; i < ns[c]; i++)
                am_stats_push(&x, am_rng_gaussian(&rng));
            am_check_t_interval(&x, 0.95, &ci);
            cover_t += ci.lo <= 0 && 0 <= ci.hi;
            const double hz = am_check_z(0.95) * am_stats_sem(&x);
            cover_z += fabs(x.mean) <= hz;
        }
        const double ft = (double)cover_t / (double)m, fz = (double)cover_z / (double)m,
                     tol = 4 * vs_binom_se(0.95, (double)m);
        cr_expect(fabs(ft - 0.95) < tol,
                  "t coverage %g at n = %zu over %zu samples, want 0.95 +- %g", ft, ns[c], m, tol);
        if (ns[c] == 3)
            cr_expect(fabs(fz - 0.95) > tol,
                      "the normal quantile's coverage %g at n = 3 is not told apart from 0.95", fz);
    }
    const double r[6] = {1.2, NAN, 0.9, 5.4, 1.1, 1.0};
    am_check_interval med;
    cr_assert_eq(am_check_median_bootstrap(r, 6, 2000, 0.95, 7, &med), AM_OK);
    cr_expect(med.estimate == 1.1, "median of the five finite values: %g", med.estimate);
    cr_expect(med.lo <= 1.1 && med.hi >= 1.1 && med.lo >= 0.9 && med.hi <= 5.4,
              "bootstrap interval [%g, %g]", med.lo, med.hi);
    cr_assert_eq(am_check_median_bootstrap(r + 1, 2, 2000, 0.95, 7, &med), AM_OK);
    cr_expect(med.estimate == 0.9 && isnan(med.lo), "one finite value: %g, no interval",
              med.estimate);
}
