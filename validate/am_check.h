/*
 * am_check.h -- the result of a theorem check and the statistics that decide it.
 *
 * A check compares a measured value m (standard error s_m) with a prediction p (standard
 * error s_p, 0 for a closed form) and passes when
 *     |m - p| <= tol,   tol = z sqrt(s_m^2 + s_p^2) + e_model,
 * where z is the two-sided normal quantile of the confidence level and e_model >= 0 a
 * documented bound on the error of the model itself (e.g. an O(eta) correction the
 * theorem drops); it is added linearly because it is systematic, not random. A check
 * whose measurement cannot resolve the claim is INCONCLUSIVE (an expected outcome, not
 * an error) and says how many replicas would resolve it.
 *
 * The checks of validate and converge decide by the equivalence rule instead
 * (am_check_decide_equiv): with the interval m +- h, h = z sqrt(s_m^2 + s_p^2) + b (b a bound
 * on the measurement's own bias) and the band p +- tol, tol = e_model + margin,
 *     PASS          if |m - p| + h <= tol   (the whole interval inside the band),
 *     FAIL          if |m - p| - h >  tol   (the interval entirely outside the band),
 *     INCONCLUSIVE  otherwise, with the replicas that would decide it (s ~ 1/sqrt(R));
 * its minimum detectable deviation is mdd = tol + h: a true value that far from p gives a
 * FAIL with probability 1/2 (docs/statistics.md section 1).
 *
 * Also here: a percentile bootstrap over replicas for any statistic, and quantiles with
 * distribution-free order-statistic or bootstrap confidence intervals
 * (docs/statistics.md gives every formula).
 */
#ifndef AM_CHECK_H
#define AM_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "../core/am_rng.h"
#include "../core/am_stats.h"

/* AM_CHECK_NA: no verdict (a power verdict on the side of a one-sided bound that cannot fail, a
   row without a delay for vs_undelayed); never a row's own verdict. */
typedef enum {
    AM_CHECK_PASS = 0,
    AM_CHECK_FAIL = 1,
    AM_CHECK_INCONCLUSIVE = 2,
    AM_CHECK_NA = 3
} am_check_verdict;

/* How a row's claim reads its band (am_check_result.sided). */
typedef enum {
    AM_CHECK_TWO_SIDED = 0, /* measured inside predicted +- tolerance */
    AM_CHECK_AT_LEAST = 1,  /* measured >= predicted - tolerance: only a higher p can fail */
    AM_CHECK_AT_MOST = 2    /* measured <= predicted + tolerance: only a lower p can fail */
} am_check_sided;

#define AM_CHECK_NAME_MAX 64
#define AM_CHECK_TEXT_MAX 512

typedef struct {
    char name[AM_CHECK_NAME_MAX];   /* check identifier, e.g. "order-ode-euler" */
    char params[AM_CHECK_TEXT_MAX]; /* the parameters, as "key=value key=value" text */
    double measured;                /* m */
    double measured_sem;            /* s_m (0 if exact) */
    double predicted;               /* p */
    double predicted_sem;           /* s_p (0 for a closed form) */
    double z;                       /* normal quantile used for the tolerance */
    double model_error;             /* e_model added to the tolerance */
    double tolerance;               /* tol: difference rule z sqrt(s_m^2 + s_p^2) + e_model;
                                       equivalence rule: the band e_model + margin */
    am_check_verdict verdict;
    double replicas_used;         /* R of the measurement (0 if not a Monte Carlo value) */
    double replicas_needed;       /* INCONCLUSIVE: R that would resolve the claim; else 0 */
    char note[AM_CHECK_TEXT_MAX]; /* free text: why inconclusive, goodness of fit, ... */
    /* equivalence rule (am_check_decide_equiv; NaN / "difference" for am_check_decide) */
    double margin;    /* the claim's precision, part of the band: tol = e_model + margin */
    double halfwidth; /* h = z sqrt(s_m^2 + s_p^2) + bias: the interval is measured +- h */
    double mdd;       /* minimum detectable deviation tol + h */
    char rule[16];    /* "equivalence" or "difference" */
    char finding[AM_CHECK_NAME_MAX]; /* a documented finding this row reports (e.g. a FAIL of
                                        a theorem's prediction), "" if none */
    am_check_sided sided; /* how the band is read (one-sided rows: am_vf_util_one_sided) */
    /* power (validate's am_validate_run_all): the verdicts the same data and the same deciding
       code give against the prediction shifted down and up by 20 % of the row's scale
       (exponent rows: 0.2 absolute); AM_CHECK_NA on the side of a one-sided bound that cannot
       fail, or when not computed */
    am_check_verdict power_low, power_high;
    int delayed;                   /* the prediction carries a delay's effect (set by the row) */
    am_check_verdict vs_undelayed; /* delayed rows: the verdict against the undelayed
                                      prediction; AM_CHECK_NA otherwise */
} am_check_result;

/* Returns "PASS", "FAIL", "INCONCLUSIVE" or "n/a" (a static string; "?" for other values). */
const char *am_check_verdict_name(am_check_verdict verdict);

/* Zeroes r, copies name (truncated to fit), sets the verdict to INCONCLUSIVE and the power
   verdicts and vs_undelayed to AM_CHECK_NA. */
void am_check_init(am_check_result *r, const char *name);

/* Writes printf-formatted text into r->params (truncated to fit). */
void am_check_set_params(am_check_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Appends printf-formatted text to r->note, separated by "; " (truncated to fit). */
void am_check_add_note(am_check_result *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Two-sided standard normal quantile z with P(|Z| <= z) = level, level in (0, 1). */
double am_check_z(double level);

/*
 * Sets r->z, r->model_error and r->tolerance from r's standard errors and decides:
 * PASS if |measured - predicted| <= tolerance, FAIL otherwise, INCONCLUSIVE if any input
 * is not finite. Returns AM_EINVAL (r unchanged) if z <= 0 or model_error < 0 or NaN.
 */
am_status am_check_decide(am_check_result *r, double z, double model_error);

/*
 * The equivalence rule (see the top of this header): sets r->z, r->model_error, r->margin,
 * r->halfwidth = z sqrt(s_m^2 + s_p^2) + bias, r->tolerance = model_error + margin,
 * r->mdd = tolerance + halfwidth, r->rule and the verdict; an INCONCLUSIVE row with a random
 * part and r->replicas_used > 0 gets replicas_needed = ceil(1.5 R (z s / (|tol - |m - p|| -
 * bias))^2) (NaN if replicas cannot decide it), else 0. Any input not finite: INCONCLUSIVE.
 * AM_EINVAL (r unchanged) unless z > 0 and bias, model_error, margin >= 0.
 */
am_status am_check_decide_equiv(am_check_result *r, double z, double bias, double model_error,
                                double margin);

/*
 * Replicas needed to bring a standard error sem measured with R replicas down to target
 * (sem ~ 1/sqrt(R)): ceil(margin R (sem / target)^2); NaN unless sem >= 0, R > 0,
 * target > 0 and margin >= 1.
 */
double am_check_replicas_for(double sem, double replicas, double target, double margin);

/* A confidence interval for a statistic. */
typedef struct {
    double estimate;   /* the statistic of the original sample */
    double lo, hi;     /* interval bounds (may be -INFINITY/INFINITY, see each function) */
    double level;      /* requested confidence level */
    double coverage;   /* order-statistic CI: exact distribution-free coverage; else level */
    double se;         /* bootstrap: standard deviation of the resampled statistics; else NaN */
    size_t n_valid;    /* bootstrap: resamples with a finite statistic */
    size_t n_rejected; /* bootstrap: resamples skipped (statistic not finite) */
} am_check_interval;

/*
 * A statistic of n records of dim values each (x[i * dim + j], row-major). Returns the
 * value; NaN or infinity marks a resample on which it is undefined (it is skipped).
 */
typedef double (*am_check_statistic)(const double *x, size_t n, size_t dim, void *ctx);

/*
 * Percentile bootstrap over replicas: draws n_boot resamples of the n records (with
 * replacement; resample b uses the Philox stream (seed, 0, AM_STREAM_CHECK_BOOT, b), so
 * the result is a pure function of the inputs), evaluates stat on each and returns the
 * (1-level)/2 and (1+level)/2 quantiles of the finite values. Needs n >= 2, dim >= 1,
 * n_boot >= 2, level in (0, 1); lo = hi = NaN if fewer than 2 resamples are finite.
 */
am_status am_check_bootstrap(const double *x, size_t n, size_t dim, am_check_statistic stat,
                             void *ctx, size_t n_boot, double level, uint64_t seed,
                             am_check_interval *out);

/*
 * Sample quantiles of n values at the probabilities q[0..nq-1] (each in [0, 1]), GSL's
 * definition (linear interpolation between order statistics at 0-based position (n-1) q).
 * A value may be +INFINITY: right-censored (e.g. a replica that had not escaped by the
 * horizon); a quantile that needs a censored value is INFINITY. NaN or -INFINITY: AM_EINVAL.
 */
am_status am_check_quantiles(const double *x, size_t n, const double *q, size_t nq, double *out);

/*
 * Quantile q of n values (finite or +INFINITY = right-censored, as in am_check_quantiles)
 * with the distribution-free order-statistic interval
 * [x_(l), x_(u)] (1-based ranks), l the largest and u the smallest rank with
 * P(B < l) <= (1-level)/2 and P(B >= u) <= (1-level)/2, B ~ Binomial(n, q); its exact
 * coverage P(l <= B < u) >= level is reported. A side that needs a rank outside 1..n is
 * -INFINITY / INFINITY (n too small for that level); an upper bound that falls on a
 * censored value is INFINITY (the interval remains valid under censoring at a fixed horizon).
 */
am_status am_check_quantile(const double *x, size_t n, double q, double level,
                            am_check_interval *out);

/* The two-sided Student t interval of the mean of s at level: mean -+ t_{n-1} sem, the
 * t quantile with n - 1 degrees of freedom (a claim over seeds, whose few degrees of freedom a
 * normal quantile would overstate: t_2 = 4.30, t_9 = 2.26 at 95 %). estimate = the mean, se =
 * the standard error; lo = hi = NaN when n < 2. */
void am_check_t_interval(const am_stats *s, double level, am_check_interval *out);

/* The median of n values and its percentile bootstrap interval (am_check_quantile_bootstrap
 * at q = 0.5, n_boot resamples from seed), for heavy-tailed ratios beside their mean; the NaN
 * values are dropped first; estimate, lo, hi NaN when fewer than 2 remain (the estimate is
 * still the one value if there is one). AM_ENOMEM. */
am_status am_check_median_bootstrap(const double *x, size_t n, size_t n_boot, double level,
                                    uint64_t seed, am_check_interval *out);

/* Quantile q of n finite values with a percentile bootstrap interval (am_check_bootstrap);
   censored (infinite) values are refused (AM_EINVAL): use am_check_quantile for them. */
am_status am_check_quantile_bootstrap(const double *x, size_t n, double q, size_t n_boot,
                                      double level, uint64_t seed, am_check_interval *out);

#endif
