/*
 * am_acf.c -- autocorrelation by FFT, Sokal's integrated autocorrelation time, and the
 * exponential relaxation time of a stationary series.
 *
 *   c(k) = (1/N) sum_{t=0}^{N-1-k} y_t y_{t+k}, y = x - xm; zero padding to n >= 2N-1
 *   makes the circular correlation IFFT(|FFT(y)|^2) equal to the linear one, and FFTW's
 *   unnormalised c2r multiplies by n, hence c(k) = out[k] / (n N).
 *   tau_int(M) = 1 + 2 sum_{k=1}^M rho(k), smallest M >= c tau_int(M);
 *   sem(xm) = sqrt(c(0) tau_int / N).
 *   Pooled over R independent series (each centred on its own mean):
 *   c(k) = (1/R) sum_r c_r(k), rho(k) = c(k) / c(0).
 */
#include "am_acf.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

size_t am_acf_fast_size(size_t m)
{
    if (m < 1) m = 1;
    if (m > SIZE_MAX / 8) return 0;
    for (size_t k = m;; k++) {
        size_t r = k;
        while (r % 2 == 0)
            r /= 2;
        while (r % 3 == 0)
            r /= 3;
        while (r % 5 == 0)
            r /= 5;
        while (r % 7 == 0)
            r /= 7;
        if (r == 1) return k;
    }
}

/* Pooled ACF; centre each series on *known_mean if not NULL, else on its own mean. */
static am_status acf_core(const double *x, size_t nrep, size_t n, const double *known_mean,
                          double *rho, size_t nlag, double *mean, double *var)
{
    if (!x || !rho || nrep < 1 || n < 2 || nlag < 1 || nlag > n) return AM_EINVAL;
    if (n > (size_t)INT32_MAX / 2) return AM_ENOMEM; /* FFTW sizes are int */
    if (nrep > SIZE_MAX / n) return AM_ENOMEM;
    for (size_t t = 0; t < nrep * n; t++)
        if (!isfinite(x[t])) return AM_EINVAL;
    size_t nf = am_acf_fast_size(2 * n - 1);
    if (nf == 0 || nf > (size_t)INT32_MAX) return AM_ENOMEM;
    size_t nc = nf / 2 + 1;
    if ((nf + 2 * nc + nlag) * sizeof(double) > AM_MEMORY_LIMIT) return AM_ENOMEM;

    double *in = fftw_alloc_real(nf);
    fftw_complex *out = fftw_alloc_complex(nc);
    double *acc = calloc(nlag, sizeof *acc);
    fftw_plan fwd = NULL, bwd = NULL;
    am_status st = AM_OK;
    if (!in || !out || !acc) st = AM_ENOMEM;
    if (st == AM_OK) {
        /* FFTW's planner is not thread-safe; FFTW_ESTIMATE does not touch the arrays */
#pragma omp critical(am_fftw_planner)
        {
            fwd = fftw_plan_dft_r2c_1d((int)nf, in, out, FFTW_ESTIMATE);
            bwd = fftw_plan_dft_c2r_1d((int)nf, out, in, FFTW_ESTIMATE);
        }
        if (!fwd || !bwd) st = AM_ENOMEM;
    }
    double grand = 0;
    for (size_t r = 0; st == AM_OK && r < nrep; r++) {
        const double *xr = x + r * n;
        double xm = 0;
        for (size_t t = 0; t < n; t++)
            xm += xr[t];
        xm /= (double)n;
        grand += xm;
        if (known_mean) xm = *known_mean;
        for (size_t t = 0; t < n; t++)
            in[t] = xr[t] - xm;
        memset(in + n, 0, (nf - n) * sizeof *in);
        fftw_execute(fwd);
        for (size_t j = 0; j < nc; j++) {
            double re = out[j][0], im = out[j][1];
            out[j][0] = re * re + im * im;
            out[j][1] = 0.0;
        }
        fftw_execute(bwd);
        /* c_r(k) = in[k] / (nf n) */
        for (size_t k = 0; k < nlag; k++)
            acc[k] += in[k] / ((double)nf * (double)n);
    }
    if (st == AM_OK) {
        double c0 = acc[0] / (double)nrep;
        if (!(c0 > 0)) {
            st = AM_EDOM;
        } else {
            rho[0] = 1.0;
            for (size_t k = 1; k < nlag; k++)
                rho[k] = acc[k] / acc[0];
            if (mean) *mean = grand / (double)nrep;
            if (var) *var = c0;
        }
    }
#pragma omp critical(am_fftw_planner)
    {
        if (fwd) fftw_destroy_plan(fwd);
        if (bwd) fftw_destroy_plan(bwd);
    }
    if (in) fftw_free(in);
    if (out) fftw_free(out);
    free(acc);
    return st;
}

am_status am_acf_pooled(const double *x, size_t nrep, size_t n, double *rho, size_t nlag,
                        double *mean, double *var)
{
    return acf_core(x, nrep, n, NULL, rho, nlag, mean, var);
}

am_status am_acf_pooled_known_mean(const double *x, size_t nrep, size_t n, double mu, double *rho,
                                   size_t nlag, double *var)
{
    if (!isfinite(mu)) return AM_EINVAL;
    return acf_core(x, nrep, n, &mu, rho, nlag, NULL, var);
}

am_status am_acf_compute(const double *x, size_t n, double *rho, size_t nlag, double *mean,
                         double *var)
{
    return acf_core(x, 1, n, NULL, rho, nlag, mean, var);
}

am_status am_acf_tau_int(const double *rho, size_t nlag, size_t n, double c, am_acf_tau *out)
{
    if (!rho || !out || nlag < 2 || n < 2 || !(c > 0) || !isfinite(c)) return AM_EINVAL;
    double tau = 1.0;
    size_t m = 1;
    int found = 0;
    for (m = 1; m < nlag; m++) {
        if (!isfinite(rho[m])) return AM_EINVAL;
        tau += 2.0 * rho[m];
        if ((double)m >= c * tau) {
            found = 1;
            break;
        }
    }
    if (!found) m = nlag - 1;
    out->tau_int = tau;
    out->window = m;
    out->window_found = found;
    out->tau_se = sqrt(2.0 * (2.0 * (double)m + 1.0) / (double)n) * fabs(tau);
    return AM_OK;
}

am_status am_acf_time_average(const double *x, size_t n, double c, am_acf_summary *out)
{
    if (!x || !out || n < 2 || !(c > 0)) return AM_EINVAL;
    double *rho = fftw_alloc_real(n);
    if (!rho) return AM_ENOMEM;
    double mean = 0, var = 0;
    am_status st = am_acf_compute(x, n, rho, n, &mean, &var);
    am_acf_tau t;
    if (st == AM_OK) st = am_acf_tau_int(rho, n, n, c, &t);
    if (st == AM_OK) {
        out->mean = mean;
        out->var = var;
        out->tau_int = t.tau_int;
        out->tau_se = t.tau_se;
        out->window = t.window;
        out->window_found = t.window_found;
        /* tau_int below 0 can only come from noise on a tiny series; clamp the variance */
        out->sem = sqrt(var * fmax(t.tau_int, 0.0) / (double)n);
        out->n = n;
    }
    fftw_free(rho);
    return st;
}

am_status am_acf_fit_exp(const double *rho, size_t nlag, size_t n, double threshold,
                         am_acf_exp *out)
{
    if (!rho || !out || !(threshold > 0 && threshold < 1) || (n > 0 && n < nlag)) return AM_EINVAL;
    /* log of rho(k), undoing the (n - k)/n factor of the biased estimator when n > 0 */
    size_t k_last = 0;
    for (size_t k = 1; k < nlag; k++) {
        double v = rho[k] * (n > 0 ? (double)n / (double)(n - k) : 1.0);
        if (!(v > threshold) || !isfinite(v)) break;
        k_last = k;
    }
    if (k_last < 2) return AM_EDOM;
    double *y = malloc(k_last * sizeof *y);
    if (!y) return AM_ENOMEM;
    for (size_t k = 1; k <= k_last; k++)
        y[k - 1] = log(rho[k] * (n > 0 ? (double)n / (double)(n - k) : 1.0));
    /* OLS of y on k = 1..K: km = (K+1)/2, Skk = sum (k - km)^2 */
    double km = 0.5 * ((double)k_last + 1.0), ym = 0;
    for (size_t k = 1; k <= k_last; k++)
        ym += y[k - 1];
    ym /= (double)k_last;
    double skk = 0, sky = 0;
    for (size_t k = 1; k <= k_last; k++) {
        double dk = (double)k - km;
        skk += dk * dk;
        sky += dk * (y[k - 1] - ym);
    }
    double slope = sky / skk;
    double icpt = ym - slope * km;
    double rss = 0;
    for (size_t k = 1; k <= k_last; k++) {
        double r = y[k - 1] - icpt - slope * (double)k;
        rss += r * r;
    }
    free(y);
    if (!(slope < 0)) return AM_EDOM;
    out->tau_exp = -1.0 / slope;
    out->amplitude = exp(icpt);
    out->slope_se = k_last > 2 ? sqrt(rss / ((double)k_last - 2.0) / skk) : NAN;
    out->lags_used = k_last;
    return AM_OK;
}

double am_acf_tau_exp_from_tau_int(double tau_int)
{
    if (!(tau_int > 1) || !isfinite(tau_int)) return NAN;
    return 0.5 / atanh(1.0 / tau_int);
}
