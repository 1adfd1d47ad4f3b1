/*
 * am_lsqbound.h -- error of mini-batch SGD on streaming least squares with fresh gradients
 * (the synchronous parameter-server variants), exactly, and Dutta et al.'s K-sync bound.
 *
 * Model of am_pslsq.h: a ~ N(0, diag(lambda)), noise sigma, K fresh samples per update,
 * e_{j+1} = e_j - (eta/K) sum_l a_l (a_l . e_j - sigma z_l). For Gaussian a,
 * E[a_i^2 (a.e)^2] = lambda_i e^T H e + 2 lambda_i^2 e_i^2, so the diagonal second moments
 * v_i = E e_i^2 obey the closed recursion
 *   v_i' = (1 - eta lambda_i)^2 v_i + (eta^2/K) (lambda_i S + lambda_i^2 v_i + lambda_i sigma^2),
 *   S = sum_j lambda_j v_j,  E F - F* = S / 2.
 * Its fixed point: with D_i = 2 eta lambda_i - eta^2 lambda_i^2 (1 + 1/K) and
 * A = sum_i eta^2 lambda_i^2 / (K D_i), S* = sigma^2 A / (1 - A) (stable iff every D_i > 0 and
 * A < 1); the slowest decay of E F - F* is max_i (1 - eta lambda_i)^2 + eta^2 lambda_i^2 / K.
 * Dutta et al. (reconstructed in theory.md section 7): E F - F* <= floor + (1 - eta c)^j (..),
 *   floor = eta L sigma_g^2 / (2 c K m),
 * with sigma_g^2 = sigma^2 tr(H) the gradient variance at the optimum and m = 1 sample per
 * mini-batch.
 */
#ifndef AM_LSQBOUND_H
#define AM_LSQBOUND_H

#include <stddef.h>

#include "../core/am_common.h"

/* Exact stationary E F - F* for fresh gradients; AM_EDOM if the recursion is unstable. */
am_status am_lsqbound_floor_exact(const double *lambda, size_t d, double eta, double sigma,
                                  double k, double *out);

/* Exact E F(w_j) - F* for j = 0..n-1 from w_0 = (1, .., 1), into out[0..n-1]. */
void am_lsqbound_curve_exact(const double *lambda, size_t d, double eta, double sigma, double k,
                             size_t n, double *out);

/* Dutta et al.'s K-sync floor eta L sigma_g^2 / (2 c K), sigma_g^2 = sigma^2 tr(H). */
double am_lsqbound_floor_dutta(const double *lambda, size_t d, double eta, double sigma, double k);

/* Dutta et al.'s async / K-async factor c' = c (1 - gamma + p0/2) of the bound (theory.md
 * section 7): gamma bounds the stale-gradient drift, E|grad F(w_j) - grad F(w_tau)|^2 <=
 * gamma E|grad F(w_j)|^2, p0 is the probability that a gradient is fresh. The bound is
 *   E F - F* <= floor' + (1 - eta c')^j (..),  floor' = eta L sigma_g^2 / (2 c' K),
 * with K the gradients per update. decay_dutta_async = 1 - eta c'; NaN unless
 * 0 <= gamma < 1 + p0/2, 0 <= p0 <= 1 and eta > 0 (c' > 0 is needed for a bound). */
double am_lsqbound_decay_dutta_async(const double *lambda, size_t d, double eta, double gamma,
                                     double p0);

/* floor' = eta L sigma_g^2 / (2 c' K) of the async bound above; NaN where c' is not > 0. */
double am_lsqbound_floor_dutta_async(const double *lambda, size_t d, double eta, double sigma,
                                     double k, double gamma, double p0);

#endif
