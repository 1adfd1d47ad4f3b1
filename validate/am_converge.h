/*
 * am_converge.h -- agreement of the discrete Async-MSGD ensemble with its limits as eta -> 0.
 *
 * For each step size eta_l of a ladder, at a fixed continuous horizon T and on the common
 * grid t_g = g T/(n-1), the weak error against the ODE limit (theory.md section 2) is
 *
 *   e(eta) = max_g | E_R[err_eta(t_g)] - err_ODE(t_g) |,
 *
 * the largest gap of the ensemble mean error over the grid (err = 1 - (v^1.v)^2/|v|^2),
 * with weak_error_sem the standard error of the ensemble mean at the maximising time. The
 * ODE is evaluated in closed form (am_theory_ode_error) from the same initial point v_0
 * as the ensemble (a shared initial point is required). Optionally the same gap against
 * the global SDE (an ensemble of Euler-Maruyama paths with dt = eta from the same v_0), and,
 * under inverse scaling, the delay-differential limit at the lag s = C as the reference
 * (dde = 1; solvers/am_dde.h): the ensemble tends to it at order 1 while its gap to the ODE
 * stays finite.
 * The order p in e ~ C eta^p is measured with one interval and decided by the equivalence rule
 * of am_check.h (band: fit.model_error + fit.margin around the prediction):
 *   Monte Carlo ladder: am_fit_order_check (noise floor first, then the WLS slope with its
 *     z interval at fit.level);
 *   noise-free ladder (every sem 0, at least 3 step sizes): the finest local slope
 *     s = log(e_b/e_a)/log(eta_b/eta_a) of the two smallest step sizes, with half-width
 *     2 |D eta_m^r|, the Richardson estimate of its remaining bias from the last two local
 *     slopes (s_j = p + D eta_m,j^r; r = 1, or 1 - GAMMA under paper scaling with GAMMA < 1).
 *
 * Under a delay scaling with noisy data (not dist expected, no dde), weak_error is instead the
 * delay's own effect, max_g |E_R[err_eta(t_g) - err0_eta(t_g)]|, err0 the same chain without
 * its delay on common random numbers (am_model_pair: the same replica streams, so the same data
 * and initial point), with the standard error of the paired mean difference; weak_error_ode
 * keeps the gap to the ODE. The gap to the ODE carries a noise term of order eta that, on
 * Gaussian data, dominates the delay's term over the ladders users run (docs/converge.md); in
 * the paired difference it cancels to leading order, and the delay's term, O(tau eta), is what
 * is fitted.
 *
 * Delay scaling: the delay of step size eta is the constant
 *   paper:GAMMA:C    tau = C (1-mu)^2 / (lambda_1 eta^(1-GAMMA)),  GAMMA in (0, 1]
 *   inverse:C        tau = C / eta
 * rounded to the nearest integer (or the delay model of the template, unchanged, for none).
 * Prediction for the order: 1 without scaling; GAMMA under paper scaling (the stale
 * gradient shifts the drift by O(tau eta) = O(eta^GAMMA)); 0 under inverse scaling (tau eta
 * = C stays finite and the recursion tends to a delay equation, not to the ODE).
 */
#ifndef AM_CONVERGE_H
#define AM_CONVERGE_H

#include "../core/am_common.h"
#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"
#include "../theory/am_problem.h"
#include "am_check.h"
#include "am_fit.h"

/* Largest fraction of diverged replicas at any step size for which the order check gives a
 * verdict; above it the check is INCONCLUSIVE (the gaps would be means over survivors). */
#define AM_CONVERGE_DIVERGED_MAX 0.05

typedef enum {
    AM_SCALING_NONE = 0, /* the template's delay model at every eta */
    AM_SCALING_PAPER,    /* tau = C (1-mu)^2 / (lambda_1 eta^(1-gamma)) */
    AM_SCALING_INVERSE   /* tau = C / eta */
} am_scaling_kind;

typedef struct {
    am_scaling_kind kind;
    double gamma; /* paper only, in (0, 1] */
    double c;     /* > 0 */
} am_scaling;

/* Parses "none", "paper:GAMMA:C" or "inverse:C"; AM_EINVAL with a reason in err. */
am_status am_converge_scaling_parse(const char *spec, am_scaling *out, char *err, size_t errlen);

/* Writes the canonical spec ("paper:0.5:2") into buf. */
void am_converge_scaling_format(const am_scaling *s, char *buf, size_t len);

/* The real-valued delay of the scaling at (lambda_1, mu, eta); NAN for kind none. */
double am_converge_scaling_tau(const am_scaling *s, double lambda1, double mu, double eta);

/* The order the theory predicts for the weak error under the scaling: 1, gamma or 0. */
double am_converge_scaling_order(const am_scaling *s);

typedef struct {
    const double *etas; /* ladder, each > 0, n_eta >= 2 */
    size_t n_eta;
    double horizon;         /* T > 0 */
    size_t ngrid;           /* saved times >= 2 */
    am_scaling scaling;     /* delay per eta */
    am_msgd_params msgd;    /* template: mu, delay (scaling none), init, seed, blowup */
    am_ensemble_params ens; /* replicas, threads */
    int sde;                /* 1: also the gap to the global SDE (am_sde_pca_global_error) */
    int dde;                /* 1: the reference limit is the delay-differential equation at the
                               lag s = C of inverse scaling (solvers/am_dde.h): weak_error is
                               the gap to it and the predicted order is 1 */
    double predicted_order; /* NAN: am_converge_scaling_order(scaling) */
    am_fit_params fit;      /* order fit, noise floor, level, band (model_error + margin) */
} am_converge_params;

/* Defaults: no ladder, T = 2, 41 saved times, no scaling, am_msgd_params_default,
 * 2000 replicas, predicted order from the scaling, am_fit_params_default. */
am_converge_params am_converge_params_default(void);

typedef struct {
    size_t n;               /* ladder length */
    double *eta;            /* [n] */
    double *tau;            /* [n] delay used (mean delay of the model for scaling none) */
    double *weak_error;     /* [n] max_g |mean err - ODE| */
    double *weak_error_sem; /* [n] standard error at the maximising time */
    double *t_max;          /* [n] the maximising time */
    double *weak_error_sde; /* [n] max_g |mean err - mean err_SDE| (NaN without SDE) */
    double *weak_error_sde_sem;
    double *weak_error_ode; /* [n] max_g |mean err - ODE| (= weak_error unless dde) */
    size_t *diverged;       /* [n] diverged replicas */
    size_t ngrid;
    double *t;    /* [ngrid] saved times */
    double *ode;  /* [ngrid] ODE error */
    double *dde;  /* [ngrid] DDE error at the lag s = C (NaN unless dde) */
    double *mean; /* [n * ngrid] ensemble mean error, row l for eta_l */
    double *sem;  /* [n * ngrid] */
    double replicas;
    int deterministic;        /* 1 if every standard error is 0 (noise-free data, shared v_0) */
    am_fit_result fit;        /* valid if check.verdict != INCONCLUSIVE from the noise floor */
    int fitted;               /* 1 if a fit was made */
    double order;             /* the measured order the check decides (NaN if refused) */
    double order_ci[2];       /* its interval: order +- check.halfwidth */
    char order_method[16];    /* "WLS", "OLS" or "local-slope" (noise-free ladder) */
    double *fit_curve;        /* [n] the fitted C eta_l^p at each step size (NaN if not fitted) */
    am_check_result check;    /* order check: measured order vs predicted */
    double chi2_dof;          /* WLS fit: chi2 per degree of freedom (NaN otherwise) */
    double fit_p;             /* WLS fit: its chi2 p-value (NaN otherwise) */
    char verdict_reason[160]; /* why the verdict is what it is, in one phrase */
    int paired;               /* 1: weak_error is the gap to the undelayed chain (see above) */
    char reference[16];       /* what weak_error is the gap to: "ode", "dde" or "undelayed" */
} am_converge_result;

/* Checks the parameters against the problem; AM_EINVAL with a reason in err. */
am_status am_converge_params_check(const am_problem *p, const am_converge_params *par, char *err,
                                   size_t errlen);

/* Runs the ladder (largest eta first is not required) and fits the order. Allocates *out
 * (free with am_converge_result_free). AM_EINVAL on bad parameters, engine failures as is. */
am_status am_converge_run(const am_problem *p, const am_converge_params *par,
                          am_converge_result **out);

/* The verdict of a run's ladder against par->predicted_order (NaN: the scaling's order, 1
 * with par->dde): the order fit, its interval, the check, chi2_dof, fit_p, verdict_reason and
 * fit_curve, from r's weak errors alone (am_converge_run ends with it; called again on the same
 * r with another prediction it decides the same data against that one). */
am_status am_converge_decide(const am_converge_params *par, am_converge_result *r);

/* The finest local slope of a ladder (n >= 3 points, any order: the three smallest step sizes
 * are used) and 2 |D eta_m^r|, twice the Richardson estimate of its remaining bias, with
 * s_j = p + D eta_m,j^r fitted to the last two local slopes at eta_m,j = sqrt(eta_a eta_b).
 * AM_EINVAL unless every eta, err > 0 is finite, the etas are distinct and r_exp > 0. */
am_status am_converge_local_slope(const double *eta, const double *err, size_t n, double r_exp,
                                  double *slope, double *bias);

/* Frees a result; NULL is safe. */
void am_converge_result_free(am_converge_result *r);

#endif
