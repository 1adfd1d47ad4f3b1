/*
 * am_sweep_cell.h -- one cell of a momentum-delay sweep: the Async-MSGD ensemble at (mu, delay)
 * and its per-cell metrics, shared by the phase diagram (am_phase.h) and the critical-delay
 * search (am_knee.h), and the theory curves drawn over such a sweep.
 *
 * Per replica r the engine's summary gives the time average e_r of err over the saved points
 * after the burn-in fraction, and the first saved time with err <= eps. The cell's stationary
 * error is the mean of e_r over the replicas that did not diverge, with the standard error
 * over replicas (independent, so honest without an autocorrelation correction).
 *
 * Theory curves (theory/am_theory.h): per momentum the linear-stability critical delay of the
 * delayed heavy-ball recursion (smallest over the modes), its delay-equation approximation
 * pi (1-mu) / (2 h_max), and the paper's bound C (1-mu)^2 / (lambda_1 eta^(1-gamma)); per
 * delay, for geometric staleness with mean MEAN (M = MEAN + 1 workers), the implicit momentum
 * 1 - 1/M of Mitliagkas et al. For random delays the boundaries are expressed in the delay
 * parameter of the axis at which E[tau] equals the critical delay (S = 2 E[tau] for uniform:S).
 */
#ifndef AM_SWEEP_CELL_H
#define AM_SWEEP_CELL_H

#include <signal.h>

#include "../core/am_common.h"
#include "../montecarlo/am_delay.h"
#include "../montecarlo/am_msgd.h"
#include "../theory/am_problem.h"

typedef struct {
    const am_problem *problem; /* the problem (outlives every call) */
    am_msgd_params msgd;       /* eta, init, seed, blowup, burnin, eps; mu and delay per cell */
    am_delay_kind delay_kind;  /* delay axis: AM_DELAY_CONST, _UNIFORM or _GEOMETRIC */
    double horizon;            /* T, continuous time of the last saved point */
    size_t ngrid;              /* saved times (>= 2) */
    size_t replicas;           /* replicas per cell */
    int threads;               /* 0 = all cores */
} am_sweep_cell_params;

/* Values of one cell, in this order (AM_SWEEP_CELL_NVALUES doubles). */
enum {
    AM_SWEEP_CELL_ERR = 0,  /* mean stationary error over non-diverged replicas */
    AM_SWEEP_CELL_ERR_SEM,  /* its standard error */
    AM_SWEEP_CELL_DIVERGED, /* fraction of replicas diverged */
    AM_SWEEP_CELL_TIME,     /* mean first time with err <= eps (over replicas reaching it) */
    AM_SWEEP_CELL_TIME_SEM, /* its standard error */
    AM_SWEEP_CELL_REACHED,  /* fraction of replicas reaching err <= eps */
    AM_SWEEP_CELL_NVALUES
};

/* No problem; eta 5e-4, init e:1, seed 1, blowup 1e6, burnin 0.5, eps 0.01, const delays,
 * T = 20, 101 saved times, 200 replicas, all cores (the defaults of `amsgd phase`). */
am_sweep_cell_params am_sweep_cell_params_default(void);

/* Checks the shared parameters (mu and delay excluded); AM_EINVAL with a reason in err. */
am_status am_sweep_cell_params_check(const am_sweep_cell_params *params, char *err, size_t errlen);

/* Delay model of kind params->delay_kind with parameter x (x = 0 means no delay). */
am_status am_sweep_cell_delay(const am_sweep_cell_params *params, double x, am_delay *d);

/* Checks the cell (mu, x) against the problem: AM_EINVAL with an empty err when x is not a
 * delay parameter of the axis, or with the engine's reason in err. */
am_status am_sweep_cell_check(const am_sweep_cell_params *params, double mu, double x, char *err,
                              size_t errlen);

/* Runs the cell (mu, delay parameter x) into v[AM_SWEEP_CELL_NVALUES]; if per_replica is not
 * NULL it receives a malloc'd array of the replicas' summaries (replicas * AM_MSGD_NSUMMARY).
 * cancel (may be NULL) is polled before every advance of a replica between saved times: once
 * it is set the cell stops within one such interval per thread and returns AM_ECANCELED (no
 * values). */
am_status am_sweep_cell_run(const am_sweep_cell_params *params, double mu, double x,
                            const volatile sig_atomic_t *cancel, double *v, double **per_replica);

/* Theory curves for the momenta mu[0..nmu-1] and the delays tau[0..ntau-1] into linear, dde,
 * paper [nmu] (in units of the delay axis) and implicit_mu [ntau] (NaN unless geometric). */
am_status am_sweep_cell_overlays(const am_sweep_cell_params *params, const double *mu, size_t nmu,
                                 const double *tau, size_t ntau, double gamma,
                                 double bound_constant, double *linear, double *dde, double *paper,
                                 double *implicit_mu);

#endif
