/*
 * am_check.c -- verdicts of theorem checks, bootstrap over replicas and quantile intervals.
 *
 * Verdict:  PASS iff |m - p| <= z sqrt(s_m^2 + s_p^2) + e_model (difference rule);
 *   equivalence rule, h = z s + b, tol = e_model + margin: PASS iff |m - p| + h <= tol,
 *   FAIL iff |m - p| - h > tol, else INCONCLUSIVE; mdd = tol + h.
 * Bootstrap: resample the n replica records with replacement B times, evaluate the
 *   statistic T*_b, interval [Q_{(1-L)/2}(T*), Q_{(1+L)/2}(T*)] (percentile method).
 * Quantile interval: [x_(l), x_(u)] with B ~ Bin(n, q),
 *   l = max{l : P(B <= l-1) <= a}, u = min{u : P(B >= u) <= a}, a = (1-L)/2,
 *   coverage P(l <= B <= u-1) = F(u-1) - F(l-1) >= L.
 */
#include "am_check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

const char *am_check_verdict_name(am_check_verdict verdict)
{
    switch (verdict) {
    case AM_CHECK_PASS:
        return "PASS";
    case AM_CHECK_FAIL:
        return "FAIL";
    case AM_CHECK_INCONCLUSIVE:
        return "INCONCLUSIVE";
    case AM_CHECK_NA:
        return "n/a";
    }
    return "?";
}

void am_check_init(am_check_result *r, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name ? name : "");
    r->verdict = AM_CHECK_INCONCLUSIVE;
    r->power_low = r->power_high = r->vs_undelayed = AM_CHECK_NA;
    r->margin = r->halfwidth = r->mdd = NAN;
    snprintf(r->rule, sizeof r->rule, "equivalence");
}

void am_check_set_params(am_check_result *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->params, sizeof r->params, fmt, ap);
    va_end(ap);
}

void am_check_add_note(am_check_result *r, const char *fmt, ...)
{
    size_t len = strlen(r->note);
    if (len > 0 && len + 2 < sizeof r->note) {
        memcpy(r->note + len, "; ", 3);
        len += 2;
    }
    if (len + 1 >= sizeof r->note) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note + len, sizeof r->note - len, fmt, ap);
    va_end(ap);
}

double am_check_z(double level)
{
    if (!(level > 0 && level < 1)) return NAN;
    return gsl_cdf_ugaussian_Qinv(0.5 * (1.0 - level));
}

am_status am_check_decide(am_check_result *r, double z, double model_error)
{
    if (!(z > 0) || !(model_error >= 0)) return AM_EINVAL;
    r->z = z;
    r->model_error = model_error;
    double se = hypot(r->measured_sem, r->predicted_sem);
    r->tolerance = z * se + model_error;
    double diff = fabs(r->measured - r->predicted);
    if (!isfinite(diff) || !isfinite(r->tolerance))
        r->verdict = AM_CHECK_INCONCLUSIVE;
    else
        r->verdict = diff <= r->tolerance ? AM_CHECK_PASS : AM_CHECK_FAIL;
    r->margin = r->halfwidth = r->mdd = NAN;
    snprintf(r->rule, sizeof r->rule, "difference");
    return AM_OK;
}

am_status am_check_decide_equiv(am_check_result *r, double z, double bias, double model_error,
                                double margin)
{
    if (!(z > 0) || !(bias >= 0) || !(model_error >= 0) || !(margin >= 0)) return AM_EINVAL;
    double se = hypot(r->measured_sem, r->predicted_sem);
    r->z = z;
    r->model_error = model_error;
    r->margin = margin;
    r->halfwidth = z * se + bias;
    r->tolerance = model_error + margin;
    r->mdd = r->tolerance + r->halfwidth;
    r->replicas_needed = 0;
    snprintf(r->rule, sizeof r->rule, "equivalence");
    double d = fabs(r->measured - r->predicted);
    if (!isfinite(d) || !isfinite(r->halfwidth) || !isfinite(r->tolerance)) {
        r->verdict = AM_CHECK_INCONCLUSIVE;
        return AM_OK;
    }
    if (d + r->halfwidth <= r->tolerance)
        r->verdict = AM_CHECK_PASS;
    else if (d - r->halfwidth > r->tolerance)
        r->verdict = AM_CHECK_FAIL;
    else {
        r->verdict = AM_CHECK_INCONCLUSIVE;
        /* decided once the random part z s' shrinks below |tol - d| - bias, s' ~ 1/sqrt(R) */
        double room = fabs(r->tolerance - d) - bias;
        if (se > 0 && r->replicas_used > 0)
            r->replicas_needed =
                room > 0 ? am_check_replicas_for(se, r->replicas_used, room / z, 1.5) : NAN;
    }
    return AM_OK;
}

double am_check_replicas_for(double sem, double replicas, double target, double margin)
{
    if (!(sem >= 0) || !(replicas > 0) || !(target > 0) || !(margin >= 1) || !isfinite(sem) ||
        !isfinite(replicas) || !isfinite(target) || !isfinite(margin))
        return NAN;
    double f = sem / target;
    return ceil(margin * replicas * f * f);
}

am_status am_check_bootstrap(const double *x, size_t n, size_t dim, am_check_statistic stat,
                             void *ctx, size_t n_boot, double level, uint64_t seed,
                             am_check_interval *out)
{
    if (!x || !stat || !out || n < 2 || dim < 1 || n_boot < 2 || !(level > 0 && level < 1))
        return AM_EINVAL;
    if (n > SIZE_MAX / sizeof(double) / dim) return AM_ENOMEM;
    double *res = malloc(n * dim * sizeof *res);
    double *t = malloc(n_boot * sizeof *t);
    if (!res || !t) {
        free(res);
        free(t);
        return AM_ENOMEM;
    }
    out->estimate = stat(x, n, dim, ctx);
    out->level = level;
    out->coverage = level;
    size_t nv = 0;
    for (size_t b = 0; b < n_boot; b++) {
        am_rng rng;
        am_rng_init(&rng, seed, 0, AM_STREAM_CHECK_BOOT, b);
        for (size_t i = 0; i < n; i++) {
            /* index uniform on 0..n-1: floor(u n), u in (0,1) with 53 bits */
            size_t k = (size_t)(am_rng_uniform(&rng) * (double)n);
            if (k >= n) k = n - 1;
            memcpy(res + i * dim, x + k * dim, dim * sizeof *res);
        }
        double v = stat(res, n, dim, ctx);
        if (isfinite(v)) t[nv++] = v;
    }
    out->n_valid = nv;
    out->n_rejected = n_boot - nv;
    if (nv >= 2) {
        gsl_sort(t, 1, nv);
        out->lo = gsl_stats_quantile_from_sorted_data(t, 1, nv, 0.5 * (1.0 - level));
        out->hi = gsl_stats_quantile_from_sorted_data(t, 1, nv, 0.5 * (1.0 + level));
        out->se = gsl_stats_sd(t, 1, nv);
    } else {
        out->lo = out->hi = out->se = NAN;
    }
    free(res);
    free(t);
    return AM_OK;
}

/* Copies n values (finite, or +INFINITY for a right-censored value) into a new sorted array
   (NULL + status on failure). */
static double *sorted_copy(const double *x, size_t n, am_status *st)
{
    *st = AM_OK;
    double *s = malloc(n * sizeof *s);
    if (!s) {
        *st = AM_ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(isfinite(x[i]) || x[i] == INFINITY)) {
            free(s);
            *st = AM_EINVAL;
            return NULL;
        }
        s[i] = x[i];
    }
    gsl_sort(s, 1, n);
    return s;
}

/* GSL's sample quantile, extended to +INFINITY values at the top of the sorted array: the
   interpolation weight on an infinite neighbour is zero when the position is integral. */
static double quantile_sorted(const double *s, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lhs = (size_t)pos;
    if (lhs + 1 < n && isinf(s[lhs + 1])) return pos == (double)lhs ? s[lhs] : INFINITY;
    return gsl_stats_quantile_from_sorted_data(s, 1, n, q);
}

am_status am_check_quantiles(const double *x, size_t n, const double *q, size_t nq, double *out)
{
    if (!x || !q || !out || n < 1) return AM_EINVAL;
    for (size_t j = 0; j < nq; j++)
        if (!(q[j] >= 0 && q[j] <= 1)) return AM_EINVAL;
    am_status st;
    double *s = sorted_copy(x, n, &st);
    if (!s) return st;
    for (size_t j = 0; j < nq; j++)
        out[j] = quantile_sorted(s, n, q[j]);
    free(s);
    return AM_OK;
}

am_status am_check_quantile(const double *x, size_t n, double q, double level,
                            am_check_interval *out)
{
    if (!x || !out || n < 1 || !(q >= 0 && q <= 1) || !(level > 0 && level < 1)) return AM_EINVAL;
    if (n > UINT32_MAX) return AM_EINVAL; /* gsl_cdf_binomial_P takes unsigned ints */
    am_status st;
    double *s = sorted_copy(x, n, &st);
    if (!s) return st;
    double a = 0.5 * (1.0 - level);
    unsigned nn = (unsigned)n;
    /* F(j) = P(B <= j); l = largest rank in 1..n with F(l-1) <= a (0 if none) */
    /* F(j) = P(B <= j) rises with j: binary search for
       l = largest rank in 1..n with F(l-1) <= a (0 if none) */
    size_t lo_r = 0, hi_r = n + 1; /* invariant: pred(lo_r) (rank 0 trivially), !pred(hi_r) */
    while (hi_r - lo_r > 1) {
        size_t mid = lo_r + (hi_r - lo_r) / 2;
        if (gsl_cdf_binomial_P((unsigned)(mid - 1), q, nn) <= a)
            lo_r = mid;
        else
            hi_r = mid;
    }
    size_t l = lo_r;
    double fl = l >= 1 ? gsl_cdf_binomial_P((unsigned)(l - 1), q, nn) : 0.0;
    /* u = smallest rank in 1..n with P(B >= u) = Q(u-1) <= a (n+1 if none) */
    lo_r = 0;
    hi_r = n + 1; /* invariant: !pred(lo_r), pred(hi_r) (rank n+1 trivially) */
    while (hi_r - lo_r > 1) {
        size_t mid = lo_r + (hi_r - lo_r) / 2;
        if (gsl_cdf_binomial_Q((unsigned)(mid - 1), q, nn) <= a)
            hi_r = mid;
        else
            lo_r = mid;
    }
    size_t u = hi_r;
    double qu = u <= n ? gsl_cdf_binomial_Q((unsigned)(u - 1), q, nn) : 0.0;
    out->estimate = quantile_sorted(s, n, q);
    out->lo = l >= 1 ? s[l - 1] : -INFINITY;
    out->hi = u <= n ? s[u - 1] : INFINITY;
    out->level = level;
    out->coverage = 1.0 - qu - fl;
    out->se = NAN;
    out->n_valid = 0;
    out->n_rejected = 0;
    free(s);
    return AM_OK;
}

/* Statistic callback: the quantile *(double *)ctx of the resample (dim 1). */
static double quantile_stat(const double *x, size_t n, size_t dim, void *ctx)
{
    (void)dim;
    double q = *(const double *)ctx;
    double *s = malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, x, n * sizeof *s);
    gsl_sort(s, 1, n);
    double v = gsl_stats_quantile_from_sorted_data(s, 1, n, q);
    free(s);
    return v;
}

am_status am_check_quantile_bootstrap(const double *x, size_t n, double q, size_t n_boot,
                                      double level, uint64_t seed, am_check_interval *out)
{
    if (!x || !(q >= 0 && q <= 1)) return AM_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return AM_EINVAL;
    return am_check_bootstrap(x, n, 1, quantile_stat, &q, n_boot, level, seed, out);
}

void am_check_t_interval(const am_stats *s, double level, am_check_interval *out)
{
    memset(out, 0, sizeof *out);
    out->level = out->coverage = level;
    out->estimate = s->n > 0 ? s->mean : NAN;
    out->se = am_stats_sem(s);
    out->lo = out->hi = NAN;
    if (s->n < 2 || !(level > 0 && level < 1)) return;
    const double h = gsl_cdf_tdist_Qinv(0.5 * (1.0 - level), (double)(s->n - 1)) * out->se;
    out->lo = s->mean - h;
    out->hi = s->mean + h;
}

am_status am_check_median_bootstrap(const double *x, size_t n, size_t n_boot, double level,
                                    uint64_t seed, am_check_interval *out)
{
    memset(out, 0, sizeof *out);
    out->estimate = out->lo = out->hi = out->se = NAN;
    out->level = out->coverage = level;
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return AM_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) v[m++] = x[i];
    am_status st = AM_OK;
    if (m == 1) out->estimate = v[0];
    if (m >= 2) st = am_check_quantile_bootstrap(v, m, 0.5, n_boot, level, seed, out);
    free(v);
    return st;
}
