/*
 * am_asyncmom.h -- asynchrony as momentum (Mitliagkas, Zhang, Hadjis & Re 2016; theory.md
 * section 6), measured.
 *
 * Gradient descent on the quadratic f(x) = (1/2) sum_i lambda_i x_i^2 with the gradient taken
 * at a stale iterate, x_{k+1} = x_k - eta A x_{k-tau_k} (x_{-j} = x_0), where tau_k is
 * geometric with P(tau = j) = (1/M)(1 - 1/M)^j, the staleness of asynchronous SGD with M
 * workers and exponential compute times. Since tau_k is independent of the past, the mean
 * iterate obeys E[D_k] = -eta sum_j p_j A E[x_{k-j}], D_k = x_{k+1} - x_k, and the geometric
 * weights telescope into the momentum recursion
 *   E[D_k] = (1 - 1/M) E[D_{k-1}] - (eta/M) A E[x_k].
 * The measurement: R replicas (delay stream AM_STREAM_DELAY) give the mean trajectory
 * xbar_k and Dbar_k = xbar_{k+1} - xbar_k, and
 *   Dbar_k = m Dbar_{k-1} + c A xbar_k
 * is fitted by least squares over k = 1..K-2 and all coordinates. The two regressors are
 * nearly collinear (D_{k-1} ~ -eta A x_k), which gives the ratio estimate a bias of order
 * 1/R; a jackknife over B batches of replicas removes it and gives the standard errors.
 * The predictions are m = 1 - 1/M and -c = eta/M.
 */
#ifndef AM_ASYNCMOM_H
#define AM_ASYNCMOM_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"

typedef struct {
    double workers;  /* M >= 1 (mean staleness M - 1) */
    size_t dim;      /* d >= 1: lambda_i linear from 1 down to 0.1 (1 if d = 1) */
    double eta;      /* step > 0 */
    uint64_t steps;  /* K >= 4 */
    size_t replicas; /* R */
    size_t batches;  /* B >= 2, R >= B */
    uint64_t seed;
} am_asyncmom_params;

/* M 4, d 4, eta 0.1, K 100, R 4000, B 20, seed 1. */
am_asyncmom_params am_asyncmom_params_default(void);

typedef struct {
    double momentum, momentum_sem;   /* fitted m */
    double step, step_sem;           /* fitted -c */
    double momentum_pred, step_pred; /* 1 - 1/M, eta/M */
} am_asyncmom_result;

/* Runs the measurement (single-threaded, deterministic for the seed). AM_EINVAL on bad
 * parameters, AM_ENOMEM. */
am_status am_asyncmom_measure(const am_asyncmom_params *p, am_asyncmom_result *out);

#endif
