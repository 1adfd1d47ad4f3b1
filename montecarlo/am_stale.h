/*
 * am_stale.h -- staleness across objectives and optimisers (Dai et al., ICLR 2019;
 * theory.md section 8).
 *
 * Objectives on a data set (a_i, y_i), i = 1..n (am_dataset.h):
 *   lsq       F(x) = (1/2n) sum_i (a_i . x - y_i)^2,                  F* by least squares (SVD)
 *   logistic  F(x) = (1/n) sum_i [log(1 + e^{z_i}) - y_i z_i], z_i = a_i . x, y_i in {0, 1},
 *             F* by Newton's method
 *   pca       "loss" 1 - (u . w)^2 / |w|^2 with u the top eigenvector of the covariance S of
 *             the centred features, F* = 0; the gradient is the negative Oja direction
 *             -(S w - (w^T S w) w), per sample -(alpha c_i - alpha^2 w), alpha = c_i . w
 * Start: x_0 = 0 (lsq, logistic), a unit vector from the Philox stream AM_STREAM_INIT of the
 * replica (pca).
 * Simulated staleness: at step k each of P workers draws r ~ Uniform{0..s} (clamped to k)
 * and B rows uniformly, and computes its mini-batch gradient on x_{k-r}; the optimiser
 * (am_optim.h) steps with the average of the P B sample gradients. Draws come from the
 * stream AM_STREAM_STALE at (seed, replica, step k). A run reaches the target at the first
 * k with F(x_k) - F* <= target (F(x_0) - F*); it fails if it does not within max_steps or
 * stops being finite. Gradient coherence along the run (full gradients):
 *   mu_k = min_{max(0,k-s) <= j <= k} <grad F(x_k), grad F(x_j)> / |grad F(x_k)|^2,
 * and coherence_min = min_k mu_k over the run (1 when s = 0).
 */
#ifndef AM_STALE_H
#define AM_STALE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "am_dataset.h"
#include "am_optim.h"
#include "../core/am_stats.h"

typedef enum { AM_OBJ_PCA = 0, AM_OBJ_LSQ, AM_OBJ_LOGISTIC } am_objective_kind;

/* One row of the objective registry. */
typedef struct {
    const char *name;
    const char *help;
    am_objective_kind kind;
} am_objective_entry;

extern const am_objective_entry am_objective_table[];
extern const size_t am_objective_table_len;

/* Looks an objective name up; AM_EINVAL with a reason in err if unknown. */
am_status am_objective_parse(const char *name, am_objective_kind *out, char *err, size_t errlen);

/* The registry name of an objective. */
const char *am_objective_name(am_objective_kind kind);

typedef struct am_objective am_objective;

/* Builds the objective on a data set (copied; logistic labels must be 0 or 1, pca needs
 * d >= 2); NULL with *status (AM_EINVAL with a reason in err, AM_ENOMEM, AM_ESOLVER). */
am_objective *am_objective_alloc(am_objective_kind kind, const am_dataset *ds, am_status *status,
                                 char *err, size_t errlen);

/* Frees an objective; NULL is safe. */
void am_objective_free(am_objective *f);

/* Dimension of x. */
size_t am_objective_dim(const am_objective *f);

/* F(x) over the whole data set; writes grad F(x) into grad unless it is NULL. */
double am_objective_loss(const am_objective *f, const double *x, double *grad);

/* Adds the gradient of row i's term at x to g. */
void am_objective_add_sample_grad(const am_objective *f, const double *x, size_t i, double *g);

/* The minimum F* used for the target. */
double am_objective_optimum(const am_objective *f);

/* Writes the start x_0 of a replica. */
void am_objective_start(const am_objective *f, uint64_t seed, uint64_t replica, double *x0);

typedef struct {
    size_t workers;     /* P >= 1 */
    size_t s;           /* staleness bound s >= 0 */
    size_t batch;       /* rows per worker gradient B >= 1 */
    double target;      /* fraction of the initial gap to reach, in (0, 1) */
    uint64_t max_steps; /* give up after this many steps */
    uint64_t seed;
} am_stale_params;

/* P 4, s 0, B 8, target 0.01, max_steps 20000, seed 1. */
am_stale_params am_stale_params_default(void);

typedef struct {
    int reached;          /* 1 if the target was reached */
    double steps;         /* steps taken (to the target, or until the run stopped) */
    double coherence_min; /* min_k mu_k over the run (NaN if undefined throughout) */
} am_stale_run;

/* Runs one replica. Returns AM_ENOMEM, AM_EINVAL (bad params) or AM_OK. */
am_status am_stale_run_one(const am_objective *f, const am_optim_params *opt,
                           const am_stale_params *sp, uint64_t replica, am_stale_run *out);

typedef struct {
    size_t replicas;
    size_t reached;
    am_stats steps;     /* over the replicas that reached the target */
    am_stats coherence; /* coherence_min over all replicas where it is defined */
} am_stale_summary;

/* Runs replicas 0..R-1 in parallel (threads 0 = all cores) and reduces them in replica
 * order (independent of the thread count). */
am_status am_stale_ensemble(const am_objective *f, const am_optim_params *opt,
                            const am_stale_params *sp, size_t replicas, int threads,
                            am_stale_summary *out);

#endif
