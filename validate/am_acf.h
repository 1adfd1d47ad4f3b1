/*
 * am_acf.h -- autocorrelation of a stationary series (FFTW) and the error bar of a time
 * average.
 *
 * Biased estimator (divides by N at every lag, so the estimated autocovariance is positive
 * semi-definite and has smaller mean squared error than the 1/(N-k) one):
 *   c(k) = (1/N) sum_{t=0}^{N-1-k} (x_t - xm)(x_{t+k} - xm),  rho(k) = c(k) / c(0),
 * computed by FFT: y = x - xm zero-padded to n >= 2N-1 (a 2^a 3^b 5^c 7^d size), r2c,
 * |Y|^2, c2r, divide by n N.
 * Integrated autocorrelation time with Sokal's automatic window:
 *   tau_int(M) = 1 + 2 sum_{k=1}^M rho(k), M = smallest lag with M >= c tau_int(M)
 *   (c = 5 by default), var(tau_int) ~ 2 (2M + 1) tau_int^2 / N (Madras & Sokal 1988),
 *   sem of the time average xm = sqrt(c(0) tau_int / N).
 * Exponential relaxation time tau_exp (rho(k) ~ A exp(-k / tau_exp)): least squares of
 * log rho(k) on k over the leading lags with rho > threshold, or from tau_int by
 * tau_exp = 1 / (2 atanh(1 / tau_int)) (exact for a pure exponential, e.g. AR(1)).
 * All times are in lags; multiply by the sampling interval for physical time.
 *
 * Thread safety: FFTW's planner is not thread-safe. These functions create and destroy
 * their plans (FFTW_ESTIMATE) inside `#pragma omp critical(am_fftw_planner)`, so they may
 * be called from OpenMP parallel regions; any other code in the project that creates or
 * destroys FFTW plans must use the same named critical section. Only the execution of
 * the transforms runs concurrently.
 */
#ifndef AM_ACF_H
#define AM_ACF_H

#include <stddef.h>

#include "../core/am_common.h"

/* Smallest m' >= m (m >= 1) of the form 2^a 3^b 5^c 7^d (a fast FFTW size); 0 on overflow. */
size_t am_acf_fast_size(size_t m);

/*
 * Normalised autocorrelation rho[0..nlag-1] (rho[0] = 1) of x[0..n-1] (n >= 2, finite,
 * 1 <= nlag <= n), biased estimator; mean and var (= c(0), divisor n) if not NULL.
 * AM_EDOM if the series is constant (c(0) = 0).
 */
am_status am_acf_compute(const double *x, size_t n, double *rho, size_t nlag, double *mean,
                         double *var);

/*
 * Pooled autocorrelation of nrep >= 1 independent series of equal length n >= 2 (x[r * n + t],
 * row-major; each centred on its own mean): rho(k) = sum_r c_r(k) / sum_r c_r(0). mean is
 * the average of the series means, var the average c_r(0) (if not NULL). The variance of
 * rho(k) falls like 1/(nrep n). AM_EDOM if every series is constant.
 */
am_status am_acf_pooled(const double *x, size_t nrep, size_t n, double *rho, size_t nlag,
                        double *mean, double *var);

/*
 * As am_acf_pooled, but every series is centred on the known stationary mean mu instead of
 * its sample mean (removes the O(tau_int / n) downward bias of rho(k) that centring on the
 * sample mean causes on short series); var = average of (1/n) sum_t (x_t - mu)^2.
 */
am_status am_acf_pooled_known_mean(const double *x, size_t nrep, size_t n, double mu, double *rho,
                                   size_t nlag, double *var);

typedef struct {
    double tau_int;   /* 1 + 2 sum_{k=1}^{window} rho(k) */
    double tau_se;    /* sqrt(2 (2 window + 1) / n) tau_int */
    size_t window;    /* Sokal window M */
    int window_found; /* 0 if no M < nlag satisfied M >= c tau_int(M) (series too short;
                         tau_int is then the sum to nlag-1 and not reliable) */
} am_acf_tau;

/*
 * tau_int from rho[0..nlag-1] (nlag >= 2) of a series of length n with Sokal's window
 * constant c > 0 (5 is the usual choice).
 */
am_status am_acf_tau_int(const double *rho, size_t nlag, size_t n, double c, am_acf_tau *out);

typedef struct {
    double mean;      /* time average xm */
    double var;       /* c(0), divisor n */
    double tau_int;   /* integrated autocorrelation time (lags) */
    double tau_se;    /* its standard error */
    size_t window;    /* Sokal window */
    int window_found; /* see am_acf_tau */
    double sem;       /* sqrt(var tau_int / n): standard error of the time average */
    size_t n;
} am_acf_summary;

/*
 * Time average of x[0..n-1] (n >= 2) with its error bar from the full autocorrelation and
 * Sokal's window constant c. AM_EDOM for a constant series.
 */
am_status am_acf_time_average(const double *x, size_t n, double c, am_acf_summary *out);

typedef struct {
    double tau_exp;   /* -1 / slope of log rho(k) on k */
    double amplitude; /* A = exp(intercept) */
    double slope_se;  /* OLS standard error of the slope; ignores the correlation of
                         neighbouring rho(k), so only a rough guide (see docs) */
    size_t lags_used; /* K: lags 1..K were fitted */
} am_acf_exp;

/*
 * Fits log rho(k) = log A - k / tau_exp over k = 1..K, K the last lag before rho first
 * drops to threshold or below (threshold in (0, 1)). If n > 0 (the series length; n >= nlag)
 * rho(k) is first multiplied by n / (n - k), which undoes the (n - k)/n factor of the biased
 * estimator; pass 0 to fit rho as given. Needs K >= 2 and a decreasing fit (else AM_EDOM).
 */
am_status am_acf_fit_exp(const double *rho, size_t nlag, size_t n, double threshold,
                         am_acf_exp *out);

/* tau_exp = 1 / (2 atanh(1 / tau_int)) for tau_int > 1 (NaN otherwise). */
double am_acf_tau_exp_from_tau_int(double tau_int);

#endif
