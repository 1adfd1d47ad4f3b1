/*
 * am_dde.h -- the delay-differential limit of Async-MSGD (theory.md section 9, docs/dde.md):
 * with the lag s = tau eta held fixed as eta -> 0 (inverse delay scaling),
 *
 *   (1-mu) V'(t) = g(W),   g(W) = Sigma W - (W^T Sigma W) W,   W = V(t - s),
 *   V(t) = v_0 for t <= 0.
 *
 * The right side depends on the delayed state only, so the method of steps is exact
 * quadrature: on the segment [k s, (k+1) s],
 *
 *   V(t) = V(k s) + (1/(1-mu)) int_{k s}^{t} g(V(u - s)) du,
 *
 * with the integrand known from the previous segment. Each segment is split into J equal
 * sub-intervals carrying V at the m + 1 = 13 Chebyshev-Gauss-Lobatto nodes; because every
 * segment is split alike, the nodes shifted by -s are the previous segment's nodes and no
 * history interpolation is needed: the integral of the degree-m interpolant of g is exact
 * (spectral integration matrix). The derivative breakpoints of V (t = 0, s, 2 s, ...) are
 * segment ends, so V is smooth inside every sub-interval. Error control: J = 1, 2, 4, ...
 * until the solutions of J and 2 J agree at every saved time within rtol |V| + atol
 * (the 2 J solution is returned). Cost O((T/s) J m d) (O(d^2) per node when the eigenbasis
 * is rotated). A path whose |V| exceeds 1e150 or stops being finite has diverged: its
 * observables are NaN from then on (a result, not an error).
 */
#ifndef AM_DDE_H
#define AM_DDE_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"
#include "am_ode.h"

typedef struct {
    double rtol;         /* relative tolerance, in [1e-14, 1) */
    double atol;         /* absolute tolerance, >= 0 */
    size_t max_segments; /* most segments T / s (cost guard) */
} am_dde_params;

/* rtol 1e-10, atol 1e-13, max_segments 1e7. */
am_dde_params am_dde_params_default(void);

/* Checks params; AM_EINVAL with a one-line reason in err (which may be NULL). */
am_status am_dde_params_check(const am_dde_params *par, char *err, size_t errlen);

/* What one solve did. */
typedef struct {
    size_t segments;       /* lag intervals covered */
    size_t subintervals;   /* J of the accepted solution, per segment */
    size_t rhs_evals;      /* evaluations of g over all refinements */
    double error_estimate; /* max over saved times of |V_J - V_2J|_inf / (rtol |V| + atol) */
    double diverged_at;    /* first node time with |V| > 1e150 or non-finite; NaN if none */
} am_dde_stats;

typedef struct am_dde am_dde;

/* Builds a solver for the problem (which must outlive it). NULL with *status set and a
 * one-line reason in err (err may be NULL). */
am_dde *am_dde_alloc(const am_problem *p, const am_dde_params *par, am_status *status, char *err,
                     size_t errlen);

/* Frees the solver; NULL is safe. */
void am_dde_free(am_dde *s);

/* Solves from the constant history v0 (finite, nonzero) with momentum mu in [0, 1) and lag
 * s > 0, writing the observables of am_ode_output (err, norm, optional h2 and v) at the n
 * non-decreasing times t[0..n-1] >= 0; stats may be NULL. AM_EINVAL on bad arguments
 * (a reason in err), AM_ENOMEM, AM_ESOLVER when the tolerance is not reached with the
 * finest subdivision allowed. */
am_status am_dde_solve(am_dde *s, double mu, double lag, const double *v0, const double *t,
                       size_t n, const am_ode_output *out, am_dde_stats *stats, char *err,
                       size_t errlen);

#endif
