/*
 * am_run.h -- one engine run on the common grid, as one library call: the discrete
 * Async-MSGD ensemble (mc; the parameter-server engine for the delay workers:P:DIST), the
 * SDE ensemble (global small-noise SDE or local OU model) and the limit ODE, each started
 * from the initial point of the discrete engine (replica 0's for init random-each), so the
 * three curves of one parameter set can be laid side by side.
 *
 * An ensemble run (mc, sde) reports, at each saved time t_g = g T / (n - 1), the mean and
 * the standard error sqrt(M2 / ((R_g - 1) R_g)) over the R_g replicas still finite of every
 * observable: err = 1 - (v^1.v)^2/|v|^2, |v|, [h_i^2 = ((Q^T v)_i)^2, i = 1..d], [the
 * wall-clock time T_k and the clamped-staleness count of the parameter-server engine].
 * Observables are stored column by column: column j holds mean[j * ngrid + g].
 * The library never prints; a failure returns a status with a one-line reason in err.
 */
#ifndef AM_RUN_H
#define AM_RUN_H

#include "../core/am_common.h"
#include "../core/am_ensemble.h"
#include "../core/am_grid.h"
#include "../montecarlo/am_msgd.h"
#include "../solvers/am_ode.h"
#include "../solvers/am_sde.h"
#include "../theory/am_problem.h"
#include "../theory/am_runtime.h"

/* ---- ensemble runs (mc, sde) ------------------------------------------------------ */

typedef struct {
    size_t ngrid, nobs, dim;
    double *t;       /* [ngrid] saved times */
    uint64_t *step;  /* [ngrid] step index of each saved time */
    double *mean;    /* [nobs * ngrid] column-major: observable j at time g is j*ngrid+g */
    double *sem;     /* [nobs * ngrid] standard errors, NaN below two replicas */
    size_t *alive;   /* [ngrid] replicas finite at each saved time */
    size_t diverged; /* replicas that diverged before the last saved time */
    size_t replicas; /* R */
    int coords;      /* columns 2..2+dim-1 hold h_i^2 */
    int wallclock;   /* the last two columns hold the wall-clock time and clamped count */
    double memory;   /* bytes the ensemble needs; above AM_MEMORY_LIMIT the run returns
                        AM_ENOMEM before any work */
} am_run_result;

/* Frees the arrays of a result (not the struct); safe on a zeroed or failed result. */
void am_run_result_free(am_run_result *res);

typedef struct {
    const am_problem *problem; /* must outlive the run */
    am_msgd_params msgd;       /* eta, mu, delay, init, seed, blowup, coords */
    /* with msgd.delay workers:P:DIST: the server scheme and the step rule of am_msgd_ps.h */
    am_variant variant;
    size_t k;
    double lr_c, lr_max; /* lr_c > 0: staleness-adaptive step */
    double horizon;      /* T: last saved time */
    size_t ngrid;        /* saved times */
    am_ensemble_params ensemble;
} am_run_mc_params;

/* am_msgd_params_default, async with K = 1, constant step, T = 10, 200 saved times, the
 * ensemble defaults. The problem must be set. */
am_run_mc_params am_run_mc_params_default(void);

/* Runs the discrete ensemble (am_msgd.h, or am_msgd_ps.h for workers:P:DIST) at the steps
 * round(t_g / eta). Fills *res (free with am_run_result_free, also after a failure). */
am_status am_run_mc(const am_run_mc_params *par, am_run_result *res, char *err, size_t errlen);

typedef enum { AM_RUN_SDE_GLOBAL = 0, AM_RUN_SDE_OU } am_run_sde_model;

typedef struct {
    const am_problem *problem; /* must outlive the run */
    am_msgd_params msgd;       /* eta, mu, init, seed, blowup, coords; the delay is ignored */
    am_run_sde_model model;
    int noise;              /* 0 drops the noise (explicit Euler for the ODE limit) */
    am_sde_sampler sampler; /* noise sampler of the global model */
    double dt;              /* Euler-Maruyama step > 0 */
    double horizon;
    size_t ngrid;
    am_ensemble_params ensemble;
} am_run_sde_params;

/* The msgd defaults, global model with noise, fast sampler, dt 5e-4 (= eta), T = 10,
 * 200 saved times, the ensemble defaults. The problem must be set. */
am_run_sde_params am_run_sde_params_default(void);

/* Runs the SDE ensemble at the steps round(t_g / dt). AM_EDOM when the data have no finite
 * fourth moment. Fills *res (free with am_run_result_free, also after a failure). */
am_status am_run_sde(const am_run_sde_params *par, am_run_result *res, char *err, size_t errlen);

/* ---- the limit ODE ---------------------------------------------------------------- */

typedef struct {
    const am_problem *problem; /* must outlive the run */
    am_msgd_params msgd;       /* mu, init and seed give the initial point (delay ignored) */
    am_ode_params ode;
    double horizon;
    size_t ngrid;
    int coords; /* also h_i^2 */
} am_run_ode_params;

typedef struct {
    size_t ngrid, dim;
    double *t;          /* [ngrid] */
    double *err;        /* [ngrid] 1 - (v^1.V)^2/|V|^2 */
    double *norm;       /* [ngrid] |V| */
    double *h2;         /* [ngrid * dim] row g holds h_i^2 at t_g, or NULL without coords */
    am_ode_stats stats; /* CVODE's counters */
} am_run_ode_result;

/* The msgd and ode defaults, T = 10, 200 saved times, no coords. */
am_run_ode_params am_run_ode_params_default(void);

/* Solves the ODE from the discrete engine's initial point. AM_ESOLVER with CVODE's message
 * in err when the solver fails. Free *res with am_run_ode_result_free. */
am_status am_run_ode(const am_run_ode_params *par, am_run_ode_result *res, char *err,
                     size_t errlen);

/* Solves the ODE from the discrete engine's initial point at the given times t[0..n-1] into
 * err_out and norm_out (n values each); stats may be NULL. */
am_status am_run_ode_at(const am_problem *p, const am_msgd_params *mp, const am_ode_params *op,
                        const double *t, size_t n, double *err_out, double *norm_out,
                        am_ode_stats *stats, char *err, size_t errlen);

/* Frees the arrays of an ODE result; safe on a zeroed or failed result. */
void am_run_ode_result_free(am_run_ode_result *res);

#endif
