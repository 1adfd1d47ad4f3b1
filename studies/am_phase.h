/*
 * am_phase.h -- the phase diagram of Async-MSGD over momentum and delay: a grid of cells
 * (mu_i, tau_j), each an ensemble (am_sweep_cell.h), one metric per cell with its standard
 * error, next to the theory's boundaries per momentum.
 *
 * Metrics of cell (i, j), from the cell values e (stationary error), s (its standard error),
 * q (fraction diverged), t (time to err <= eps) and R replicas:
 *   stationary  e_ij                      sem s_ij
 *   ratio       r_ij = e_ij / e_i0        sem sqrt(var_k(e_ij,k - r_ij e_i0,k) / n) / e_i0,
 *               0 at the tau = 0 cell itself: the delta method on the replicas k paired
 *               with the tau = 0 cell (the same random numbers in both; n replicas that
 *               survived in both), which a ratio checkpoint stores as a 7th value
 *   diverged    q_ij                      sem sqrt(q (1 - q) / R)
 *   time        t_ij                      sem of t over the replicas reaching eps
 * Cells run through the checkpointed, resumable, cancellable (and in the MPI build
 * distributed) sweep of am_sweep.h, cell c = i * ntau + j.
 */
#ifndef AM_PHASE_H
#define AM_PHASE_H

#include <signal.h>

#include "am_sweep_cell.h"

typedef enum {
    AM_PHASE_STATIONARY = 0,
    AM_PHASE_RATIO,
    AM_PHASE_DIVERGED,
    AM_PHASE_TIME
} am_phase_metric;

typedef struct {
    am_sweep_cell_params cell; /* problem, engine, delay axis, grid, replicas, threads */
    const double *mu;          /* [nmu] momenta in [0, 1) */
    size_t nmu;
    const double *tau; /* [ntau] delay parameters of the axis (0 = no delay) */
    size_t ntau;
    am_phase_metric metric;
    double gamma;           /* gamma in (0, 1] of the paper's bound */
    double bound_constant;  /* C > 0 in front of the paper's bound */
    const char *checkpoint; /* checkpoint file, or NULL */
    int resume;             /* continue from the checkpoint (needs checkpoint) */
    /* nonzero: stop; the cell in progress stops at its replicas' next saved time and is
       dropped (recomputed on resume), finished cells are kept */
    const volatile sig_atomic_t *cancel;
    /* Called on rank 0 after each finished cell (see am_sweep_params); may be NULL. */
    void (*progress)(void *ctx, size_t done, size_t total, size_t computed, double elapsed);
    void *progress_ctx;
} am_phase_params;

typedef struct {
    size_t nmu, ntau, ncells; /* ncells = nmu * ntau */
    size_t cells_done;        /* finished cells (< ncells after a cancel) */
    double *mu, *tau;         /* copies of the axes */
    am_phase_metric metric;
    double *metric_value;      /* [ncells], row-major: cell i * ntau + j */
    double *metric_sem;        /* [ncells] */
    double *diverged_fraction; /* [ncells] */
    double *reached_fraction;  /* [ncells] fraction of replicas reaching err <= eps */
    double *cells;             /* [ncells * AM_SWEEP_CELL_NVALUES] the cell values */
    unsigned char *done;       /* [ncells] 1 for finished cells */
    double *boundary_linear;   /* [nmu] linear-stability critical delay (axis units) */
    double *boundary_dde;      /* [nmu] its delay-equation approximation */
    double *boundary_paper;    /* [nmu] the paper's bound */
    double *implicit_momentum; /* [ntau] 1 - 1/(MEAN + 1) for geometric delays, else NaN */
} am_phase_result;

/* Defaults: am_sweep_cell_params_default(), no axes (mu and tau must be set), metric
 * stationary, gamma AM_THEORY_BOUND_GAMMA, bound constant AM_THEORY_BOUND_C, no checkpoint, no
 * cancel flag, no progress. */
am_phase_params am_phase_params_default(void);

/* Checks the parameters; AM_EINVAL with a reason in err. */
am_status am_phase_params_check(const am_phase_params *params, char *err, size_t errlen);

/* Runs the phase diagram into *result (free with am_phase_result_free). Returns AM_OK when
 * every cell is finished; AM_ECANCELED when the cancel flag stopped the run (*result holds
 * the finished cells, which the checkpoint keeps); AM_EINVAL with a reason in err for bad
 * parameters or a checkpoint of other parameters; AM_EIO on a checkpoint file error; or the
 * first failure of a cell. In the MPI build ranks other than 0 hold only their own cells. */
am_status am_phase_run(const am_phase_params *params, am_phase_result **result, char *err,
                       size_t errlen);

/* Frees a result; NULL is safe. */
void am_phase_result_free(am_phase_result *result);

/* The standard error of the ratio of means xmean / ymean from paired samples x[i * stride],
 * y[i * stride] (i < n; pairs with a non-finite member skipped): the delta method
 * sqrt(var(x_i - r y_i) / m) / |ymean| over the m complete pairs, r = xmean / ymean; NaN when
 * m < 2 or r is not finite. */
double am_phase_paired_ratio_sem(const double *x, const double *y, size_t n, size_t stride,
                                 double xmean, double ymean);

#endif
