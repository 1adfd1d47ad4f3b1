/*
 * am_ode.h -- the deterministic limit of Async-MSGD (theory.md section 2), solved with
 * SUNDIALS CVODE:
 *
 *   dV/dt = (1/(1-mu)) [ Sigma V - (V^T Sigma V) V ],   V(0) = v_0,
 *
 * in the problem's own coordinates (with a rotated eigenbasis the dense
 * Sigma = Q diag(lambda) Q^T is formed once per solver). Adams with CVODE's fixed-point nonlinear
 * solver by default (the limit is not stiff); BDF with Newton and the analytic Jacobian
 * J = (1/(1-mu)) [ Sigma - q I - 2 V (Sigma V)^T ], q = V^T Sigma V (dense LU, or
 * matrix-free GMRES with the product J w), on request. BDF may also project every step onto the
 * invariant sphere |V| = 1 through CVODE's projection interface (CVODE projects only with BDF).
 * Observables on the saved grid: err = |V - (v^1.V) v^1|^2 / |V|^2 (= 1 - (v^1.V)^2/|V|^2, written
 * without the cancellation), |V|, and optionally h_i^2 = ((Q^T V)_i)^2 or V itself.
 */
#ifndef AM_ODE_H
#define AM_ODE_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"

typedef enum { AM_ODE_ADAMS = 0, AM_ODE_BDF } am_ode_method;

/* Linear solver of BDF's Newton iteration: dense LU of I - gamma J (O(d^3) per setup), or
 * matrix-free GMRES with the analytic product J w (O(d) or O(d^2) per product). */
typedef enum { AM_ODE_LINSOL_DENSE = 0, AM_ODE_LINSOL_GMRES } am_ode_linsol;

typedef struct {
    am_ode_method method;
    double rtol;          /* relative tolerance, in (0, 1) */
    double atol;          /* absolute tolerance, >= 0 (0 = pure relative control) */
    long max_steps;       /* CVODE mxstep: most internal steps between two saved times */
    int project;          /* project onto |V| = 1 after every step (BDF only) */
    am_ode_linsol linsol; /* BDF only */
} am_ode_params;

/* Adams + fixed point, rtol 1e-9, atol 1e-13, max_steps 1e6, no projection, dense LU for
 * BDF. */
am_ode_params am_ode_params_default(void);

/* Checks params; AM_EINVAL with a one-line reason in err on failure. */
am_status am_ode_params_check(const am_ode_params *par, char *err, size_t errlen);

/* Name of a method ("adams", "bdf"). */
const char *am_ode_method_name(am_ode_method m);

/* Parses "adams" or "bdf"; AM_EINVAL otherwise. */
am_status am_ode_method_parse(const char *s, am_ode_method *out);

/* Name of a linear solver ("dense", "gmres"). */
const char *am_ode_linsol_name(am_ode_linsol l);

/* Parses "dense" or "gmres"; AM_EINVAL otherwise. */
am_status am_ode_linsol_parse(const char *s, am_ode_linsol *out);

/* Solver statistics of one solve (counts since its start). */
typedef struct {
    long steps;             /* internal steps */
    long rhs_evals;         /* right-hand side evaluations (solver + Jacobian) */
    long err_test_failures; /* local error test failures (rejected steps) */
    long nonlin_iters;      /* nonlinear (fixed-point or Newton) iterations */
    long nonlin_failures;   /* nonlinear solver convergence failures */
    long jac_evals;         /* Jacobian evaluations (BDF; GMRES: Jacobian-product setups) */
    long lin_setups;        /* linear solver setups, e.g. LU factorisations (BDF) */
    long lin_iters;         /* GMRES iterations (BDF + GMRES) */
    long lin_failures;      /* GMRES convergence failures (BDF + GMRES) */
    long proj_evals;        /* projections onto the sphere (with project) */
    long proj_failures;     /* failed projections */
    int last_order;         /* method order of the last step */
    double last_step;       /* size of the last step */
} am_ode_stats;

/* Where a solve writes its observables; err and norm are required (n entries each),
 * h2 and v are optional (n * d, row g holds time t_g). */
typedef struct {
    double *err;  /* 1 - (v^1.V)^2 / |V|^2 */
    double *norm; /* |V| */
    double *h2;   /* ((Q^T V)_i)^2, i = 1..d, or NULL */
    double *v;    /* V in the problem's coordinates, or NULL */
} am_ode_output;

typedef struct am_ode am_ode;

/* Builds a solver for the problem (which must outlive it): one SUNContext and one CVODE
 * memory reused by every solve. NULL with *status set on failure and a one-line reason in
 * err (err may be NULL). */
am_ode *am_ode_alloc(const am_problem *p, const am_ode_params *par, am_status *status, char *err,
                     size_t errlen);

/* Frees the solver; NULL is safe. */
void am_ode_free(am_ode *s);

/* Solves from V(0) = v0 (finite, nonzero) with momentum mu in [0, 1) and writes the observables at
 * the n non-decreasing times t[0..n-1] >= 0 into out; stats may be NULL. AM_ESOLVER when CVODE
 * fails (am_ode_last_error tells why), AM_EINVAL on bad arguments. */
am_status am_ode_solve(am_ode *s, double mu, const double *v0, const double *t, size_t n,
                       const am_ode_output *out, am_ode_stats *stats);

/* The last message CVODE reported through this solver ("" if none). */
const char *am_ode_last_error(const am_ode *s);

#endif
