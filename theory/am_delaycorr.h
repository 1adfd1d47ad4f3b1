// clang-format off
/*
 * am_delaycorr.h -- the delay's correction to the local (OU) moments of Async-MSGD near a
 * stationary point (docs/theory.md section 10). No randomness at run time.
 *
 * Near v^1 each tangential eigen-coordinate x = h_i (i >= 2) obeys, to first order, the
 * linear delayed heavy-ball recursion
 *     x_{k+1} = (1+mu) x_k - mu x_{k-1} - h x_{k - tau_k} + eta xi_k,   h = eta a,
 * a = lambda_1 - lambda_i, xi_k of variance alpha_i1^2, tau_k i.i.d. with the law pmf
 * (pmf[j] = P(tau = j), j = 0..n-1; a constant delay T is pmf = e_T). With x = tau_mean
 * eta a/(1-mu) (the mean lag in units of the mode's relaxation time), to first order in x:
 *     Var U_i          = Var U_i(tau = 0) (1 + x)
 *     relaxation time  = (1-mu)/a (1 - x)
 * and near a saddle, for the unstable direction with rate g = (lambda_i - lambda_j)/(1-mu),
 *     growth rate g (1 - g s),  noise amplitude sigma (1 - g s),  s = tau_mean eta.
 * Only the mean of the delay enters at first order. Also here: the exact values of the
 * constant-lag delay-OU limit (1-mu) dU = -a U(t-s) dt + alpha dB (Kuechler-Mensch variance
 * (1 + sin x)/cos x, rate from Lambert's W), and the exact stationary autocovariance and the
 * slowest root of the linear recursion itself (a Yule-Walker system of n + 1 equations).
 */
// clang-format on
#ifndef AM_DELAYCORR_H
#define AM_DELAYCORR_H

#include <stddef.h>

#include "../core/am_common.h"
#include "am_problem.h"

/* Mean sum_j j pmf[j] of a delay law (NAN unless n >= 1, pmf[j] >= 0, sum within 1e-9 of 1). */
double am_delaycorr_mean(const double *pmf, size_t n);

/* The first-order lag parameter x = tau_mean eta a/(1-mu) of a mode with curvature a. NAN for
 * bad input (eta <= 0, mu outside [0,1), tau_mean < 0). */
double am_delaycorr_x(double a, double eta, double mu, double tau_mean);

/* Var U_i near v^1 to first order in the delay: am_theory_ou_variance (1 + x), i >= 1
 * (0-based), x with a = lambda_1 - lambda_i. NAN on bad input. */
double am_delaycorr_ou_variance(const am_problem *p, double mu, size_t i, double eta,
                                double tau_mean);

/* Stationary error to first order in the delay:
 * (eta/(2(1-mu))) sum_{i>=2} noise_i1/(lambda_1-lambda_i) (1 + tau_mean eta
 * (lambda_1-lambda_i)/(1-mu)). */
double am_delaycorr_stationary_error(const am_problem *p, double eta, double mu, double tau_mean);

/* Relaxation time of U_i near v^1 to first order: (1-mu)/(lambda_1-lambda_i) (1 - x), i >= 1. */
double am_delaycorr_relaxation_time(const am_problem *p, double mu, size_t i, double eta,
                                    double tau_mean);

/* Constant-lag delay-OU limit, exact: variance factor (1 + sin x)/cos x for x in [0, pi/2)
 * (stationary only there; NAN outside). */
double am_delaycorr_dde_variance_factor(double x);

/* Constant-lag delay-OU limit, exact: the relaxation rate over the undelayed rate,
 * -W0(-x)/x (1 at x = 0), for x in [0, 1/e] where the slowest root is real; NAN beyond. */
double am_delaycorr_dde_rate_factor(double x);

/* Unstable delay-OU dU = g U(t-s) dt: the growth rate over g, W0(y)/y with y = g s >= 0
 * (1 at y = 0); the first-order value is 1 - y. NAN for y < 0. */
double am_delaycorr_dde_growth_factor(double y);

/*
 * Exact stationary autocovariance gamma[0..nlag-1] (nlag >= 2) of the linear recursion
 * x_{k+1} = (1+mu) x_k - mu x_{k-1} - h x_{k-tau_k} + e_k, Var e_k = noise, tau_k i.i.d. with
 * law pmf[0..n-1]: the Yule-Walker equations E[x_{k+m+1} x_k] for m = 0..n-1 and the variance
 * equation E[x_{k+1}^2] = gamma_0, solved by LU (GSL), extended by the recursion. AM_EINVAL for
 * bad input, AM_EDOM if the system is singular or gamma_0 <= 0 (no stationary law),
 * AM_ENOMEM. Valid where the recursion is mean-square stable (the caller's regime).
 */
am_status am_delaycorr_linear_acov(double mu, double h, double noise, const double *pmf, size_t n,
                                   size_t nlag, double *gamma);

/*
 * The real root z of (z-1)(z-mu) + h sum_j pmf[j] z^(1-j) = 0 (the mean recursion) that governs
 * the slow mode: for h > 0 the largest root in (0, 1) (relaxation -1/log z steps), for h < 0 the
 * root above 1 (growth log z per step). Bisection to adjacent doubles. AM_EDOM when h > 0 and no
 * real root lies in [(1+mu)/2, 1) (the slow mode oscillates), AM_EINVAL for bad input.
 */
am_status am_delaycorr_linear_root(double mu, double h, const double *pmf, size_t n, double *z);

#endif
