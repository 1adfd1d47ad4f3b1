/*
 * am_classset.h -- labelled classification sets (features x_i in R^d, label y_i in
 * 0..classes-1) for the models of am_nn.h, with a training and a test split.
 *
 * Sources (the spec of `--data`):
 *   fashion-mnist      the Debian package dataset-fashion-mnist (AM_IDX_FASHION_DIR):
 *                      60000 training and 10000 test images of 28 x 28 bytes, 10 classes
 *   idx:DIR            DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] (am_idx.h);
 *                      labels in 0..9
 *   FILE.csv           CSV as in am_dataset.h (features, then an integer label >= 0); the
 *                      test split is the same file (test accuracy = training accuracy)
 *   TRAIN.csv,TEST.csv two CSV files with the same number of features
 * IDX pixels are kept as bytes and read as x = byte / 255; CSV features as doubles. classes is
 * 10 for IDX, 1 + the largest training label for CSV.
 *
 * Inputs (am_classset_set_inputs): the rows a set gives (gather, rows) are x as read (raw),
 * x - m (centred) or (x - m) / sd (standardised), m and sd the training split's per-feature
 * mean and standard deviation (population, over all its rows), the same for both splits.
 */
#ifndef AM_CLASSSET_H
#define AM_CLASSSET_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"

typedef struct {
    size_t n, d, classes;
    size_t rows, cols; /* image shape (IDX), 0 for CSV */
    uint8_t *bytes;    /* [n d] pixels (IDX) or NULL */
    double *x;         /* [n d] features (CSV) or NULL */
    int *y;            /* [n] labels in 0..classes-1 */
    int inputs;        /* am_inputs of the rows given (0: raw) */
    double *shift;     /* [d] subtracted from every row (centred, standardised) or NULL */
    double *scale;     /* [d] then divided by (standardised) or NULL */
} am_classset;

/* What the rows of a set are: as read, centred, or standardised (see above). */
typedef enum { AM_INPUTS_RAW = 0, AM_INPUTS_CENTRED, AM_INPUTS_STANDARDISED } am_inputs;

/* "raw", "centred", "standardised". */
const char *am_inputs_name(am_inputs mode);

/* Parses one of those names; AM_EINVAL (with a message naming them) otherwise. */
am_status am_inputs_parse(const char *name, am_inputs *out, char *err, size_t errlen);

/* Sets the inputs of both splits from the training split's per-feature mean and standard
 * deviation, computed here once (two passes in row order; a feature constant on the training
 * split has sd = 0 and is only centred). raw removes a transform. AM_ENOMEM. */
am_status am_classset_set_inputs(am_classset *train, am_classset *test, am_inputs mode);

/* CRC-32 of a set's features as stored (bytes or doubles) then its labels, and of the
 * transform of its inputs when they are not raw (its name, shift, then scale), so a
 * fingerprint names the rows a network sees. */
unsigned long am_classset_crc(const am_classset *s);

/* Reads an images/labels pair of IDX files (3 and 1 dimensions, equal counts, labels in
 * 0..classes-1). fix is the remedy named in every message (NULL: generic). */
am_status am_classset_read_idx(const char *images, const char *labels, size_t classes,
                               const char *fix, am_classset **out, char *err, size_t errlen);

/* Reads a CSV file (am_dataset_read_csv) whose last column is an integer label in
 * 0..max_classes-1; classes = 1 + the largest label. */
am_status am_classset_read_csv(const char *path, size_t max_classes, am_classset **out, char *err,
                               size_t errlen);

/* Opens both splits of a source given by its spec (see above). The test split has the same
 * d, and labels below the training split's classes; on failure both are NULL. */
am_status am_classset_open(const char *spec, am_classset **train, am_classset **test, char *err,
                           size_t errlen);

/* Writes rows idx[0..m-1] as doubles into x[m d] and their labels into y[m] (y may be NULL). */
void am_classset_gather(const am_classset *s, const size_t *idx, size_t m, double *x, int *y);

/* Writes the m consecutive rows first..first+m-1 into x[m d] and y[m] (y may be NULL). */
void am_classset_rows(const am_classset *s, size_t first, size_t m, double *x, int *y);

/* Frees a set; NULL is safe. */
void am_classset_free(am_classset *s);

#endif
