/*
 * am_objective.h -- the objectives of the staleness experiments (am_stale.h) on a data set
 * (a_i, y_i), i = 1..n (am_dataset.h):
 *   lsq       F(x) = (1/2n) sum_i (a_i . x - y_i)^2,                  F* by least squares (SVD)
 *   logistic  F(x) = (1/n) sum_i [log(1 + e^{z_i}) - y_i z_i], z_i = a_i . x, y_i in {0, 1},
 *             F* by Newton's method
 *   pca       "loss" 1 - (u . w)^2 / |w|^2 with u the top eigenvector of the covariance S of
 *             the centred features, F* = 0; the gradient is the negative Oja direction
 *             -(S w - (w^T S w) w), per sample -(alpha c_i - alpha^2 w), alpha = c_i . w
 * Start: x_0 = 0 (lsq, logistic), a unit vector from the Philox stream AM_STREAM_INIT of the
 * replica (pca).
 */
#ifndef AM_OBJECTIVE_H
#define AM_OBJECTIVE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "am_dataset.h"

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

/* Number of rows n of the objective's data set. */
size_t am_objective_rows(const am_objective *f);

/* The minimum F* used for the target. */
double am_objective_optimum(const am_objective *f);

/* Writes the start x_0 of a replica. */
void am_objective_start(const am_objective *f, uint64_t seed, uint64_t replica, double *x0);

#endif
