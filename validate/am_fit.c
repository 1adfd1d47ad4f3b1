/*
 * am_fit.c -- order of convergence from err(eta) ~ C eta^p by least squares in log-log.
 *
 * With x = log eta, y = log err and weights w (1 for OLS, err^2/sem^2 for WLS):
 *   xm = sum w x / W, ym = sum w y / W, Sxx = sum w (x - xm)^2,
 *   p = sum w (x - xm)(y - ym) / Sxx, a = ym - p xm,
 *   OLS: s^2 = sum r^2 / (n-2), se(p) = s / sqrt(Sxx), se(a) = s sqrt(1/n + xm^2 / Sxx);
 *   WLS: se(p) = 1 / sqrt(Sxx), se(a) = sqrt(1/W + xm^2 / Sxx), chi2 = sum w r^2.
 * Centring before the sums keeps the arithmetic accurate on narrow ladders.
 */
#include "am_fit.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../core/am_rng.h"

int am_fit_misfit(const am_fit_result *fr, const am_fit_params *p)
{
    return fr->weighted && isfinite(fr->chi2_pvalue) && fr->chi2_pvalue < p->gof_level;
}

am_fit_params am_fit_params_default(void)
{
    am_fit_params p = {.level = 0.95,
                       .scale_by_chi2 = 0,
                       .n_boot = 2000,
                       .seed = 1,
                       .noise_k = 3.0,
                       .replica_margin = 1.5,
                       .model_error = 0.0,
                       .margin = 0.25,
                       .gof_level = 1e-3};
    return p;
}

static int params_ok(const am_fit_params *p)
{
    return p->level > 0 && p->level < 1 && p->noise_k > 0 && p->replica_margin >= 1 &&
           p->model_error >= 0 && p->margin >= 0 && p->gof_level >= 0 && p->gof_level < 1;
}

/*
 * Fits y = a + p x with weights w (NULL: OLS). Only the point estimate when
 * want_errors == 0 (bootstrap refits). Returns AM_EINVAL if all x coincide.
 */
static am_status fit_core(const double *x, const double *y, const double *w, size_t n, double level,
                          int scale, int want_errors, am_fit_result *res)
{
    double sw = 0, sx = 0, sy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sw += wi;
        sx += wi * x[i];
        sy += wi * y[i];
    }
    double xm = sx / sw, ym = sy / sw;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        double dx = x[i] - xm;
        sxx += wi * dx * dx;
        sxy += wi * dx * (y[i] - ym);
    }
    if (!(sxx > 0)) return AM_EINVAL;
    double slope = sxy / sxx;
    double icpt = ym - slope * xm;
    res->slope = slope;
    res->intercept = icpt;
    res->n = n;
    res->weighted = w != NULL;
    res->level = level;
    res->dof = (double)n - 2.0;
    if (!want_errors) return AM_OK;

    double rss = 0;
    for (size_t i = 0; i < n; i++) {
        double r = y[i] - icpt - slope * x[i];
        rss += (w ? w[i] : 1.0) * r * r;
    }
    res->rss = rss;
    double dof = res->dof;
    double a2 = 0.5 * (1.0 - level);
    if (w) {
        double f = 1.0;
        res->chi2_pvalue = dof > 0 ? gsl_cdf_chisq_Q(rss, dof) : NAN;
        if (scale) {
            if (dof > 0) {
                f = fmax(1.0, rss / dof);
                res->quantile = gsl_cdf_tdist_Qinv(a2, dof);
            } else {
                f = NAN;
                res->quantile = NAN;
            }
        } else {
            res->quantile = gsl_cdf_ugaussian_Qinv(a2);
        }
        res->slope_se = sqrt(f / sxx);
        res->intercept_se = sqrt(f * (1.0 / sw + xm * xm / sxx));
    } else {
        res->chi2_pvalue = NAN;
        if (dof > 0) {
            double s2 = rss / dof;
            res->slope_se = sqrt(s2 / sxx);
            res->intercept_se = sqrt(s2 * (1.0 / (double)n + xm * xm / sxx));
            res->quantile = gsl_cdf_tdist_Qinv(a2, dof);
        } else {
            res->slope_se = res->intercept_se = res->quantile = NAN;
        }
    }
    res->ci_lo = slope - res->quantile * res->slope_se;
    res->ci_hi = slope + res->quantile * res->slope_se;
    return AM_OK;
}

/* Checks the ladder and writes x = log eta, y = log err. */
static am_status load_xy(const double *eta, const double *err, size_t n, double *x, double *y)
{
    for (size_t i = 0; i < n; i++) {
        if (!(eta[i] > 0) || !isfinite(eta[i]) || !(err[i] > 0) || !isfinite(err[i]))
            return AM_EINVAL;
        x[i] = log(eta[i]);
        y[i] = log(err[i]);
    }
    return AM_OK;
}

am_status am_fit_order(const double *eta, const double *err, size_t n, const am_fit_params *p,
                       am_fit_result *res)
{
    am_fit_params def = am_fit_params_default();
    if (!p) p = &def;
    if (!eta || !err || !res || n < 2 || !params_ok(p)) return AM_EINVAL;
    double *x = malloc(2 * n * sizeof *x);
    if (!x) return AM_ENOMEM;
    double *y = x + n;
    am_status st = load_xy(eta, err, n, x, y);
    if (st == AM_OK) st = fit_core(x, y, NULL, n, p->level, 0, 1, res);
    free(x);
    return st;
}

am_status am_fit_order_weighted(const double *eta, const double *err, const double *sem, size_t n,
                                const am_fit_params *p, am_fit_result *res)
{
    am_fit_params def = am_fit_params_default();
    if (!p) p = &def;
    if (!eta || !err || !sem || !res || n < 2 || !params_ok(p)) return AM_EINVAL;
    double *x = malloc(3 * n * sizeof *x);
    if (!x) return AM_ENOMEM;
    double *y = x + n, *w = x + 2 * n;
    am_status st = load_xy(eta, err, n, x, y);
    for (size_t i = 0; st == AM_OK && i < n; i++) {
        if (!(sem[i] > 0) || !isfinite(sem[i])) {
            st = AM_EINVAL;
            break;
        }
        double s = sem[i] / err[i];
        w[i] = 1.0 / (s * s);
        if (!isfinite(w[i])) st = AM_EINVAL;
    }
    if (st == AM_OK) st = fit_core(x, y, w, n, p->level, p->scale_by_chi2, 1, res);
    free(x);
    return st;
}

am_status am_fit_order_bootstrap(const double *eta, const double *err, const double *sem, size_t n,
                                 int weighted, const am_fit_params *p, am_fit_boot *out)
{
    am_fit_params def = am_fit_params_default();
    if (!p) p = &def;
    if (!eta || !err || !sem || !out || n < 2 || p->n_boot < 2 || !params_ok(p)) return AM_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!(weighted ? sem[i] > 0 : sem[i] >= 0) || !isfinite(sem[i])) return AM_EINVAL;
    double *x = malloc((4 * n + p->n_boot) * sizeof *x);
    if (!x) return AM_ENOMEM;
    double *y = x + n, *w = x + 2 * n, *e = x + 3 * n, *slopes = x + 4 * n;
    am_status st = load_xy(eta, err, n, x, y);
    size_t nv = 0;
    for (size_t b = 0; st == AM_OK && b < p->n_boot; b++) {
        am_rng rng;
        am_rng_init(&rng, p->seed, 0, AM_STREAM_FIT_BOOT, b);
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            e[i] = err[i] + sem[i] * am_rng_gaussian(&rng);
            if (!(e[i] > 0)) ok = 0;
        }
        if (!ok) continue;
        for (size_t i = 0; i < n; i++) {
            y[i] = log(e[i]);
            if (weighted) {
                double s = sem[i] / e[i];
                w[i] = 1.0 / (s * s);
            }
        }
        am_fit_result r;
        st = fit_core(x, y, weighted ? w : NULL, n, p->level, 0, 0, &r);
        if (st == AM_OK && isfinite(r.slope)) slopes[nv++] = r.slope;
    }
    if (st == AM_OK) {
        out->level = p->level;
        out->n_valid = nv;
        out->n_rejected = p->n_boot - nv;
        if (nv >= 2) {
            gsl_sort(slopes, 1, nv);
            out->lo = gsl_stats_quantile_from_sorted_data(slopes, 1, nv, 0.5 * (1 - p->level));
            out->hi = gsl_stats_quantile_from_sorted_data(slopes, 1, nv, 0.5 * (1 + p->level));
            out->median = gsl_stats_median_from_sorted_data(slopes, 1, nv);
            out->sd = gsl_stats_sd(slopes, 1, nv);
        } else {
            out->lo = out->hi = out->median = out->sd = NAN;
        }
    }
    free(x);
    return st;
}

am_status am_fit_noise_floor(const double *err, const double *sem, size_t n, double replicas,
                             const am_fit_params *p, am_fit_noise_floor_result *out)
{
    am_fit_params def = am_fit_params_default();
    if (!p) p = &def;
    if (!err || !sem || !out || n < 1 || !(replicas > 0) || !isfinite(replicas) || !params_ok(p))
        return AM_EINVAL;
    size_t worst = 0;
    double wr = INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!(err[i] > 0) || !isfinite(err[i]) || !(sem[i] >= 0) || !isfinite(sem[i]))
            return AM_EINVAL;
        double r = sem[i] > 0 ? err[i] / sem[i] : INFINITY;
        if (r < wr) {
            wr = r;
            worst = i;
        }
    }
    out->worst = worst;
    out->ratio = wr;
    out->resolved = wr >= p->noise_k;
    if (out->resolved) {
        out->replicas_needed = replicas;
    } else {
        /* the worst point needs sem <= err / k; same as am_check_replicas_for(sem, R,
           err / k, margin), written with k sem / err to avoid rounding err / k */
        double f = p->noise_k / wr;
        out->replicas_needed = ceil(p->replica_margin * replicas * f * f);
    }
    return AM_OK;
}

am_status am_fit_order_check(const double *eta, const double *err, const double *sem, size_t n,
                             double replicas, double predicted_order, const am_fit_params *p,
                             am_check_result *r)
{
    am_fit_params def = am_fit_params_default();
    if (!p) p = &def;
    if (!r || !isfinite(predicted_order)) return AM_EINVAL;
    am_fit_noise_floor_result nf;
    am_status st = am_fit_noise_floor(err, sem, n, replicas, p, &nf);
    if (st != AM_OK) return st;
    r->predicted = predicted_order;
    r->predicted_sem = 0.0;
    r->replicas_used = replicas;
    r->replicas_needed = 0.0;
    if (!nf.resolved) {
        r->measured = NAN;
        r->measured_sem = NAN;
        r->z = am_check_z(p->level);
        r->model_error = p->model_error;
        r->margin = p->margin;
        r->tolerance = p->model_error + p->margin;
        r->verdict = AM_CHECK_INCONCLUSIVE;
        r->replicas_needed = nf.replicas_needed;
        am_check_add_note(r,
                          "noise floor: err/sem = %.3g < %.3g at eta = %.6g; "
                          "about %.0f replicas needed",
                          nf.ratio, p->noise_k, eta[nf.worst], nf.replicas_needed);
        return AM_OK;
    }
    int all_sem = 1;
    for (size_t i = 0; i < n; i++)
        if (!(sem[i] > 0)) all_sem = 0;
    am_fit_result fr;
    st = all_sem ? am_fit_order_weighted(eta, err, sem, n, p, &fr)
                 : am_fit_order(eta, err, n, p, &fr);
    if (st != AM_OK) return st;
    r->measured = fr.slope;
    r->measured_sem = fr.slope_se;
    if (!isfinite(fr.quantile)) {
        r->z = NAN;
        r->model_error = p->model_error;
        r->margin = p->margin;
        r->tolerance = p->model_error + p->margin;
        r->verdict = AM_CHECK_INCONCLUSIVE;
        am_check_add_note(r, "slope %.6g has no standard error (n = %zu points)", fr.slope, n);
        return AM_OK;
    }
    st = am_check_decide_equiv(r, fr.quantile, 0.0, p->model_error, p->margin);
    if (st != AM_OK) return st;
    am_check_add_note(r, "%s slope, %s interval at level %.6g", fr.weighted ? "WLS" : "OLS",
                      fr.weighted ? "z" : "t", p->level);
    if (fr.weighted && isfinite(fr.chi2_pvalue))
        am_check_add_note(r, "chi2/dof = %.3g, p-value %.3g", fr.rss / fr.dof, fr.chi2_pvalue);
    if (am_fit_misfit(&fr, p)) {
        r->verdict = AM_CHECK_INCONCLUSIVE;
        r->replicas_needed = NAN;
        am_check_add_note(r,
                          "the single power law does not fit the ladder (chi2 p-value %.3g < "
                          "%.3g): no verdict on the order",
                          fr.chi2_pvalue, p->gof_level);
    }
    return AM_OK;
}
