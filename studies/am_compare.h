/*
 * am_compare.h -- the three engines with the same parameters on the same grid: the discrete
 * ensemble (mc), the global small-noise SDE ensemble by Euler-Maruyama (sde) and the limit
 * ODE (ode) from the discrete engine's initial point (studies/am_run.h), and their largest
 * gaps over the saved times
 *
 *   sup_mc_ode = max_g |err_mc(t_g) - err_ode(t_g)|,  its error sem_mc(t_g*),
 *   sup_mc_sde = max_g |err_mc(t_g) - err_sde(t_g)|,  its error hypot(sem_mc, sem_sde)(t_g*),
 *
 * (t_g* the maximiser; NaN when a curve has no value at some saved time, since a sup over
 * part of the grid would understate the gap). The SDE and the ODE are the limits without
 * delay: the delay applies to mc only. With lag s > 0 the delay-differential limit at that
 * lag (solvers/am_dde.h, the limit of a constant delay tau = s/eta as eta -> 0) is a fourth
 * curve, with sup_mc_dde = max_g |err_mc - err_dde| and its error sem_mc(t_g*). A mean
 * without a finite replica is NaN.
 */
#ifndef AM_COMPARE_H
#define AM_COMPARE_H

#include "../core/am_common.h"
#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"
#include "../solvers/am_ode.h"
#include "../theory/am_problem.h"

typedef struct {
    const am_problem *problem; /* must outlive the run */
    am_msgd_params msgd;       /* eta, mu, delay (mc only; not workers:P:DIST), init, seed,
                                  blowup */
    double dt;                 /* Euler-Maruyama step of the SDE > 0 */
    am_ode_params ode;         /* CVODE tolerances */
    double lag;                /* > 0: also the DDE at this lag (tau eta of a constant delay);
                                  0: no DDE */
    double horizon;            /* T: last saved time */
    size_t ngrid;              /* saved times */
    am_ensemble_params ensemble;
} am_compare_params;

typedef struct {
    size_t ngrid;
    double *t;                         /* [ngrid] */
    double *err_mc, *err_mc_sem;       /* [ngrid] */
    double *err_sde, *err_sde_sem;     /* [ngrid] */
    double *err_ode, *norm_ode;        /* [ngrid] */
    double *err_dde, *norm_dde;        /* [ngrid], NULL without a lag */
    double sup_mc_dde, sup_mc_dde_sem; /* NaN without a lag */
    long sup_mc_dde_index;
    double sup_mc_ode, sup_mc_ode_sem; /* NaN when no saved time has both curves */
    double sup_mc_sde, sup_mc_sde_sem;
    long sup_mc_ode_index, sup_mc_sde_index; /* maximiser g, or -1 */
    size_t diverged_mc, diverged_sde;
    am_ode_stats ode_stats;
    /* on AM_ENOMEM from the memory limit: the stage's observables and bytes */
    size_t nobs;
    double memory;
} am_compare_result;

/* The msgd, ode and ensemble defaults, dt 5e-4 (= eta), T = 10, 200 saved times. */
am_compare_params am_compare_params_default(void);

/* Runs mc, sde and ode and the gaps. On failure a reason naming the stage ("mc: ...",
 * "sde: ...", "ode: ...") goes to err. Free *res with am_compare_result_free (also after a
 * failure). */
am_status am_compare_run(const am_compare_params *par, am_compare_result *res, char *err,
                         size_t errlen);

/* Frees the arrays of a result; safe on a zeroed or failed result. */
void am_compare_result_free(am_compare_result *res);

/* Largest |a[g] - b[g]| over g < n into *gap; returns the maximiser (the first on ties). NaN
 * and -1 if a difference is not finite anywhere (a side diverged, or no replica alive): a
 * sup over part of the grid would understate the gap. */
long am_compare_sup_gap(const double *a, const double *b, size_t n, double *gap);

#endif
