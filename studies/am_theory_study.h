/*
 * am_theory_study.h -- every closed-form prediction of theory/am_theory.h for one parameter
 * set, as one library call: the moments m4_i = E[Y_i^4] and alpha_ij^2 = E[Y_i^2 Y_j^2],
 * the bound C_d, the OU variances and relaxation times near v^1, the stationary error
 * (eta/(2(1-mu))) sum_i alpha_i1^2/(lambda_1 - lambda_i), the escape and traverse times T1,
 * T2 (and in iterations, T/eta), the paper's two delay conditions, and for each mode the
 * critical delays of the delayed heavy-ball recursion x_{k+1} = (1+mu) x_k - mu x_{k-1}
 * - eta a x_{k-tau} (exact, real-valued, delay-equation, asymptotic, underdamped).
 * Modes m = 0..dim-2 are the tangential i = m + 2, mode dim-1 the radial one.
 */
#ifndef AM_THEORY_STUDY_H
#define AM_THEORY_STUDY_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"

/* Largest dimension for which the alpha_ij^2 matrix is kept in the result. */
#define AM_THEORY_STUDY_MAX_MATRIX 100

typedef struct {
    const am_problem *problem; /* must outlive the call */
    double eta;                /* > 0 */
    double mu;                 /* in [0, 1) */
    double gamma;              /* exponent of the delay conditions, in (0, 1] */
    double bound_constant;     /* C > 0 in front of the delay conditions */
    double delta;              /* phase boundary in (0, 1/sqrt(2)) */
    double nu;                 /* failure probability of the escape time, in (0, 1) */
} am_theory_study_params;

typedef struct {
    size_t dim;
    double *m4;              /* [dim], INFINITY where the moment is infinite */
    double *alpha2;          /* [dim * dim] row-major, NULL for dim > AM_THEORY_STUDY_MAX_MATRIX */
    double *ou_variance;     /* [dim - 1], i = 2..dim */
    double *relaxation_time; /* [dim - 1] */
    double *mode_curvature;  /* [dim] per mode */
    double *tau_c_linear;    /* [dim] INFINITY where tau_c exceeds 2^53 steps */
    double *tau_star_linear, *tau_c_dde, *tau_c_asymptotic, *tau_c_underdamped; /* [dim] */
    double cd, stationary_error, escape_time, traverse_time;
    double escape_iterations, traverse_iterations, z_nu;
    double tau_bound_ode, tau_bound_local; /* tau_bound_local NaN when C_d is infinite */
    int m4_infinite;                       /* some m4_i is infinite (student:NU with NU <= 4) */
    int noise_free;                        /* expected data */
    int cd_infinite;                       /* unbounded data */
    int gamma_above_half;                  /* the local condition needs gamma <= 1/2 */
    size_t tau_c_overflow;                 /* modes whose tau_c exceeds 2^53 steps */
} am_theory_study_result;

/* eta 5e-4, mu 0, gamma AM_THEORY_BOUND_GAMMA, C AM_THEORY_BOUND_C, delta 0.1, nu 0.05; the problem
 * must be set. */
am_theory_study_params am_theory_study_params_default(void);

/* Evaluates every prediction. AM_EINVAL without a problem, AM_ENOMEM. Free *res with
 * am_theory_study_result_free (also after a failure). */
am_status am_theory_study_run(const am_theory_study_params *par, am_theory_study_result *res,
                              char *err, size_t errlen);

/* Frees the arrays of a result; safe on a zeroed or failed result. */
void am_theory_study_result_free(am_theory_study_result *res);

#endif
