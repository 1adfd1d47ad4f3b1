// clang-format off
/*
 * am_theory.h -- closed-form predictions for Async-MSGD on streaming PCA (no randomness).
 *
 * Notation: Sigma = Q diag(lambda) Q^T, h = Q^T v (eigen-coordinates), t = k eta, indices
 * are 0-based in the API (i = 0 is the top eigenvector v^1). Derivations: docs/theory.md.
 *
 *   ODE limit        dH/dt = (Lambda H - (H^T Lambda H) H)/(1-mu), solved in closed form
 *                    H_i(t) = H_i(0) e^{lambda_i t'}
 *                             / sqrt(1 - |H(0)|^2 + sum_j H_j(0)^2 e^{2 lambda_j t'}),
 *                    t' = t/(1-mu)
 *   OU near v^1      Var U_i = alpha_i1^2 / (2 (1-mu)(lambda_1-lambda_i)),  relaxation time
 *                    (1-mu)/(lambda_1-lambda_i), autocorrelation exp(-|s|/relax)
 *   stationary err   E[err] = (eta/(2(1-mu))) sum_{i>=2} alpha_i1^2/(lambda_1-lambda_i)
 *   saddle           Var U_i(t) = alpha_ij^2 (e^{2gt}-1)/(2(1-mu)^2 g),
 *                    g = (lambda_i-lambda_j)/(1-mu)
 *   phase times      T1 (escape from e_2), T2 (traverse delta^2 -> 1-delta^2)
 *   delay bounds     (1-mu)^2/(lambda_1 eta^(1-gamma)),  (1-mu)^2/((lambda_1+C_d) eta^(1/2-gamma))
 *   SDE covariance   C(V) = P [q Sigma + s s^T + D4] P,  P = I - V V^T, s = Sigma V, q = V^T s
 *   linear stability x_{k+1} = (1+mu) x_k - mu x_{k-1} - h x_{k-tau},  h = eta a, with
 *                    a = lambda_1 - lambda_i (tangential mode i >= 2) or 2 lambda_1 (radial):
 *                    characteristic polynomial (z-1)(z-mu) z^tau + h z = 0; the critical delay
 *                    comes from the unit-circle crossing |(e^{i th}-1)(e^{i th}-mu)| = h and
 *                    the phase condition (tau - 1/2) th + arg(e^{i th} - mu) = pi/2.
 */
// clang-format on
#ifndef AM_THEORY_H
#define AM_THEORY_H

#include "../core/am_common.h"
#include "am_problem.h"

/* ---- noise and moments ------------------------------------------------------------------ */

/* Variance of the noise entry (Y Y^T)_ij of the update in eigen-coordinates: alpha_ij^2 for
 * i != j, m4_i - lambda_i^2 for i == j, and 0 for the noise-free `expected` data; AM_EDOM
 * through *status (and INFINITY) when the fourth moment is infinite. */
double am_theory_noise_variance(const am_problem *p, size_t i, size_t j, am_status *status);

/* Covariance C(V) = Cov[(I - V V^T) X X^T V] of the stochastic update direction at v
 * (original coordinates, any |v|), written row-major into c[dim*dim]; AM_EDOM if m4 is
 * infinite or the data are a data set (the formula needs independent coordinates), AM_ENOMEM if
 * dim*dim doubles exceed the memory limit. */
am_status am_theory_sde_covariance(const am_problem *p, const double *v, double *c);

/* ---- deterministic (ODE) limit ----------------------------------------------------------- */

/* Closed-form solution of the ODE limit in eigen-coordinates: h[i] = H_i(t) from h0 = H(0)
 * (any nonzero vector; |H| relaxes to 1). AM_EINVAL for mu outside [0,1), t < 0, h0 = 0. */
am_status am_theory_ode_h(const am_problem *p, double mu, const double *h0, double t, double *h);

/* The error 1 - H_1(t)^2/|H(t)|^2 along the ODE closed form (NAN on invalid input). */
double am_theory_ode_error(const am_problem *p, double mu, const double *h0, double t);

/* ---- local stochastic limit (OU) near v^1 -------------------------------------------------- */

/* Stationary variance of U_i = h_i/sqrt(eta) near v^1, i >= 1 (0-based):
 * noise_i1 / (2 (1-mu)(lambda_1 - lambda_i)); NAN for i = 0 or bad input. */
double am_theory_ou_variance(const am_problem *p, double mu, size_t i);

/* Relaxation time (1-mu)/(lambda_1 - lambda_i) of U_i in continuous time t, i >= 1. */
double am_theory_relaxation_time(const am_problem *p, double mu, size_t i);

/* Stationary autocorrelation exp(-|s| / relaxation_time) of U_i at time lag s, i >= 1. */
double am_theory_autocorrelation(const am_problem *p, double mu, size_t i, double s);

/* Stationary error E[err] ~ (eta/(2(1-mu))) sum_{i>=2} noise_i1/(lambda_1 - lambda_i). */
double am_theory_stationary_error(const am_problem *p, double eta, double mu);

/* Var U_i(t) from U(0) = 0 near the stationary point e_j (i != j):
 * noise_ij (e^{2gt} - 1)/(2 (1-mu)^2 g), g = (lambda_i - lambda_j)/(1-mu) (the g -> 0 limit
 * noise_ij t/(1-mu)^2 when g = 0). NAN on bad input. */
double am_theory_saddle_variance(const am_problem *p, double mu, size_t i, size_t j, double t);

/* ---- phases ------------------------------------------------------------------------------- */

/* z_nu = Phi^{-1}((1+nu)/2): P(|Z| <= z_nu) = nu for a standard normal Z, nu in (0,1). */
double am_theory_z_nu(double nu);

/* Escape time T1 from the saddle e_2 (continuous time): the t at which the Gaussian h_1(t) =
 * sqrt(eta) U_1(t) has P(|h_1| <= delta) = nu, i.e. escape with probability 1 - nu:
 * ((1-mu)/(2 gap)) log(1 + 2 (1-mu) gap delta^2 / (eta alpha_12^2 z_nu^2)), gap = l1 - l2.
 * INFINITY (status AM_EDOM) for noise-free data; AM_EINVAL on bad input (NAN). */
double am_theory_escape_time(const am_problem *p, double eta, double mu, double delta, double nu,
                             am_status *status);

/* Traverse time T2 of the two-mode ODE from h_1^2 = delta^2 to h_1^2 = 1 - delta^2:
 * ((1-mu)/gap) log((1-delta^2)/delta^2), delta in (0, 1/sqrt(2)); NAN on bad input. */
double am_theory_traverse_time(const am_problem *p, double mu, double delta);

/* ---- the paper's delay conditions ---------------------------------------------------------- */

/* The one constant C and the one exponent gamma of the paper's delay conditions, used by every
 * command that evaluates or draws them (theory, knee, phase; validate's paper-scaling row) and
 * written into their JSON params (docs/theory.md section 6). The theorems give tau up to an
 * unspecified constant (tau ≍ ...), so C = 1 is a unit, not a prediction: a bound's absolute
 * value is never compared with a measurement, and every figure anchors the paper's law at one
 * measured point so that only its slope in (1-mu) is compared. gamma = 1/2 is the largest
 * value admissible in both conditions (ODE: (0, 1], local: (0, 1/2]), so one gamma serves
 * both; the slope in (1-mu), 2, does not depend on gamma. */
#define AM_THEORY_BOUND_C 1.0
#define AM_THEORY_BOUND_GAMMA 0.5
/* The same two numbers as strings, for option defaults and help texts. */
#define AM_THEORY_BOUND_C_STR "1"
#define AM_THEORY_BOUND_GAMMA_STR "0.5"

/* ODE-limit delay scale C (1-mu)^2 / (lambda_1 eta^(1-gamma)), gamma in (0,1]; NAN if invalid. */
double am_theory_tau_bound_ode(double lambda1, double eta, double mu, double gamma, double c);

/* Local (SDE) delay scale C (1-mu)^2 / ((lambda_1 + C_d) eta^(1/2-gamma)), gamma in (0,1/2];
 * 0 when C_d is infinite (unbounded data: the condition cannot be met); NAN if invalid. */
double am_theory_tau_bound_local(double lambda1, double cd, double eta, double mu, double gamma,
                                 double c);

/* ---- linear stability of the delayed heavy-ball recursion ---------------------------------- */

/* Curvature a of mode m near v^1: m = 0..dim-2 are the tangential modes i = m+2 (1-based),
 * a = lambda_1 - lambda_i; m = dim-1 is the radial mode (the norm of v), a = 2 lambda_1.
 * NAN for m >= dim. */
double am_theory_mode_curvature(const am_problem *p, size_t m);

/* Angle theta in (0, pi] where a root of the characteristic polynomial can sit on the unit
 * circle: the root of |(e^{i theta}-1)(e^{i theta}-mu)| = h; NAN when h <= 0 or
 * h > 2(1+mu) (no crossing) or mu outside [0,1). */
double am_theory_stability_theta(double mu, double h);

/* Real-valued critical delay tau* = 1/2 + (pi/2 - arg(e^{i theta}-mu))/theta, theta from
 * am_theory_stability_theta: the recursion with integer tau >= 0 is asymptotically stable
 * iff tau < tau*. 0 when h >= 2(1+mu) or h <= 0 (never stable); NAN for mu outside [0,1). */
double am_theory_stability_tau_star(double mu, double h);

/* Critical delay tau_c = smallest integer tau >= 0 at which the recursion is not
 * asymptotically stable (ceil of tau*). AM_EINVAL for mu outside [0,1) or h not finite;
 * AM_EDOM for h <= 0 (never asymptotically stable: z = 1 is a root) or tau_c > 2^53. */
am_status am_theory_stability_tau_c(double mu, double h, double *tau_c);

/* Critical step h_c(tau): the recursion with delay tau is asymptotically stable iff
 * 0 < h < h_c(tau); h_c(0) = 2(1+mu), strictly decreasing in tau. NAN for bad input. */
double am_theory_stability_h_c(double mu, double tau);

/* 1 if the recursion with (mu, h, tau) is asymptotically stable, 0 if not. */
int am_theory_stability_stable(double mu, double h, double tau);

/* The delay-equation approximation (1-mu) x'(s) = -h x(s - tau): tau_c = pi (1-mu)/(2h). */
double am_theory_tau_c_dde(double mu, double h);

/* The small-h expansion of tau* including the inertial correction:
 * pi (1-mu)/(2h) - (1+mu)/(2(1-mu)) (from the second-order delay equation). */
double am_theory_tau_c_asymptotic(double mu, double h);

/* The underdamped limit (1-mu)^2 << h << 1 of tau*: (1-mu)/h. */
double am_theory_tau_c_underdamped(double mu, double h);

/* Boundary for phase-diagram overlays: for each mu[k], the critical delay tau_c of mode m
 * (am_theory_mode_curvature) at step eta, written to tau_c[k] (INFINITY where undefined).
 * AM_EINVAL on bad arguments. */
am_status am_theory_tau_c_curve(const am_problem *p, double eta, size_t m, const double *mu,
                                size_t n, double *tau_c);

#endif
