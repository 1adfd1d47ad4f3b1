/*
 * am_fit.h -- convergence-order fitting: err(eta) ~ C eta^p on any ladder of step sizes.
 *
 * The order p is the slope of the straight line y = a + p x with x_i = log eta_i,
 * y_i = log err_i:
 *   ordinary least squares (OLS): p = sum (x_i - xm)(y_i - ym) / Sxx, Sxx = sum (x_i - xm)^2,
 *     se(p) = s / sqrt(Sxx), s^2 = RSS / (n - 2), CI p +- t_{n-2,(1+L)/2} se(p);
 *   weighted least squares (WLS), per-point errors by the delta method
 *     sd(log err_i) ~ s_i = sem_i / err_i, weights w_i = 1 / s_i^2,
 *     p = sum w (x - xw)(y - yw) / Sw, Sw = sum w (x - xw)^2, se(p) = 1 / sqrt(Sw),
 *     CI p +- z_{(1+L)/2} se(p) (the s_i are treated as known), chi^2 = sum w r^2 on n-2
 *     degrees of freedom measures the misfit of the power law;
 *   parametric bootstrap: err*_i ~ N(err_i, sem_i^2), refit, percentile interval;
 *   noise floor: a fit is refused unless every err_i >= k sem_i (default k = 3); otherwise
 *     R_needed = ceil(margin R (k sem_i / err_i)^2) replicas, since sem ~ 1/sqrt(R).
 * Formulas and the reasons for each constant: docs/statistics.md.
 */
#ifndef AM_FIT_H
#define AM_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "am_check.h"

typedef struct {
    double level;          /* confidence level of the intervals, default 0.95 */
    int scale_by_chi2;     /* WLS: se *= sqrt(max(1, chi2/(n-2))), t quantile; default 0 */
    size_t n_boot;         /* bootstrap resamples, default 2000 */
    uint64_t seed;         /* bootstrap seed, default 1 */
    double noise_k;        /* noise floor: require err_i >= k sem_i, default 3 */
    double replica_margin; /* multiplier on the replicas-needed estimate, default 1.5 */
    double model_error;    /* order check: e_model, part of the band, default 0 */
    double margin;         /* order check: the claim's precision, part of the band, default 0.25
                              (half the distance between the competing orders 1 and 1/2) */
    double gof_level;      /* order check: a WLS fit whose chi2 p-value is below it does not fit
                              the single power law and gives no verdict (INCONCLUSIVE); default
                              1e-3 (docs/converge.md) */
} am_fit_params;

/* Returns the defaults listed in am_fit_params. */
am_fit_params am_fit_params_default(void);

typedef struct {
    double slope;        /* p, the fitted order */
    double intercept;    /* a = log C */
    double slope_se;     /* se(p) */
    double intercept_se; /* se(a) */
    double ci_lo, ci_hi; /* confidence interval of p at level */
    double level;
    double quantile;    /* t or z quantile used for the interval */
    double dof;         /* n - 2 */
    double rss;         /* OLS: sum r_i^2; WLS: chi2 = sum w_i r_i^2 */
    double chi2_pvalue; /* WLS: P(chi2_{n-2} >= chi2) (NaN for OLS or n = 2) */
    size_t n;           /* points used */
    int weighted;       /* 1 for WLS */
} am_fit_result;

/*
 * OLS fit of log err on log eta over n >= 2 points (eta_i > 0 not all equal, err_i > 0,
 * all finite); for n = 2 the line is exact and se, CI are NaN. level from p->level
 * (p may be NULL: defaults).
 */
am_status am_fit_order(const double *eta, const double *err, size_t n, const am_fit_params *p,
                       am_fit_result *res);

/*
 * WLS fit with per-point standard errors sem_i > 0 of err_i (delta-method weights
 * err_i^2 / sem_i^2), n >= 2; z interval, or t interval scaled by sqrt(max(1, chi2/dof))
 * if p->scale_by_chi2.
 */
am_status am_fit_order_weighted(const double *eta, const double *err, const double *sem, size_t n,
                                const am_fit_params *p, am_fit_result *res);

typedef struct {
    double lo, hi; /* percentile interval of the slope at level (NaN if n_valid < 2) */
    double median; /* median of the resampled slopes */
    double sd;     /* standard deviation of the resampled slopes */
    double level;
    size_t n_valid;    /* resamples refitted */
    size_t n_rejected; /* resamples with some err*_i <= 0, skipped (see docs) */
} am_fit_boot;

/*
 * Parametric bootstrap of the slope: p->n_boot resamples err*_i = err_i + sem_i Z
 * (resample b from the Philox stream (p->seed, 0, AM_STREAM_FIT_BOOT, b)), each refitted by
 * WLS (weighted != 0, weights from err*_i) or OLS; resamples with any err*_i <= 0 are
 * skipped and counted. Needs sem_i > 0 (sem_i >= 0 for OLS), n >= 2, n_boot >= 2.
 */
am_status am_fit_order_bootstrap(const double *eta, const double *err, const double *sem, size_t n,
                                 int weighted, const am_fit_params *p, am_fit_boot *out);

typedef struct {
    int resolved;           /* 1 if every err_i >= k sem_i, i.e. a fit is allowed */
    size_t worst;           /* index of the smallest err_i / sem_i */
    double ratio;           /* err_worst / sem_worst (INFINITY if sem is 0) */
    double replicas_needed; /* unresolved: ceil(margin R (k sem_w / err_w)^2); else R */
} am_fit_noise_floor_result;

/*
 * Noise-floor test of a ladder measured with R replicas (R > 0): are all errors at least
 * p->noise_k standard errors above zero? sem_i >= 0, err_i > 0.
 */
am_status am_fit_noise_floor(const double *err, const double *sem, size_t n, double replicas,
                             const am_fit_params *p, am_fit_noise_floor_result *out);

/* 1 if the WLS fit fr misfits at p->gof_level (chi2 p-value below it), else 0. */
int am_fit_misfit(const am_fit_result *fr, const am_fit_params *p);

/*
 * The whole order check into r (r->name and r->params are kept): noise floor first
 * (unresolved -> INCONCLUSIVE with replicas_needed), then the fit (WLS if every sem_i > 0,
 * else OLS) and the equivalence rule am_check_decide_equiv with measured = p,
 * measured_sem = se(p), predicted = predicted_order, z from p->level (t quantile for OLS/scaled
 * fits, so the interval m +- halfwidth is the fit's own interval) and the band
 * p->model_error + p->margin; the note names the method and gives the chi2 p-value. A WLS fit
 * whose chi2 p-value is below p->gof_level (the power law does not describe the ladder) is
 * INCONCLUSIVE whatever the interval says, with replicas_needed NaN (more replicas sharpen the
 * misfit) and the reason in the note.
 */
am_status am_fit_order_check(const double *eta, const double *err, const double *sem, size_t n,
                             double replicas, double predicted_order, const am_fit_params *p,
                             am_check_result *r);

#endif
