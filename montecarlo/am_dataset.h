/*
 * am_dataset.h -- a data set of n rows: d features a_i and a label y_i, read from a CSV file
 * or drawn synthetically for the objectives of `amsgd staleness` (am_stale.h).
 *
 * CSV: one row per line, comma-separated finite numbers, the features first and the label
 * last; every row has the same number of fields (at least 2). Blank lines and lines starting
 * with '#' are skipped; a first line whose first field is not a number is a header. Errors
 * name the line (and column) at fault.
 * Synthetic sets (Philox stream AM_STREAM_DATASET, replica AM_REPLICA_SHARED):
 *   lsq       a_i ~ N(0, I_d), x* ~ N(0, I_d), y_i = a_i . x* + 0.5 z_i
 *   logistic  a_i ~ N(0, I_d), x* ~ N(0, I_d), y_i = 1 with probability 1/(1 + exp(-a_i . x*))
 *   pca       a_i ~ N(0, diag(lambda)), lambda linear from 4 down to 1, y_i = 0
 */
#ifndef AM_DATASET_H
#define AM_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"

typedef struct {
    size_t n, d;
    double *a; /* [n * d], row-major */
    double *y; /* [n] */
} am_dataset;

/* Largest magnitude of a value read from CSV: squares and products of the objectives must stay
 * finite. */
#define AM_DATASET_VALUE_MAX 1e100

/* Reads a CSV file into a new data set (free with am_dataset_free). The first line is a header
 * only if none of its fields is a number. On failure returns AM_EIO (cannot read) or
 * AM_EINVAL (malformed, a value above AM_DATASET_VALUE_MAX in magnitude, every feature 0)
 * with a one-line reason in err. */
am_status am_dataset_read_csv(const char *path, am_dataset **out, char *err, size_t errlen);

typedef enum { AM_SYNTH_LSQ = 0, AM_SYNTH_LOGISTIC, AM_SYNTH_PCA } am_synth_kind;

/* Draws a synthetic data set of n rows and d features from the seed. */
am_status am_dataset_synthetic(am_synth_kind kind, size_t n, size_t d, uint64_t seed,
                               am_dataset **out);

/* Frees a data set; NULL is safe. */
void am_dataset_free(am_dataset *ds);

#endif
