/*
 * am_classset.c -- labelled sets from IDX pairs and CSV files, and the row gathers that turn
 * their bytes or doubles into the minibatch matrices of the models (am_classset.h).
 */
#include "am_classset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include "../montecarlo/am_dataset.h"
#include "am_idx.h"

void am_classset_free(am_classset *s)
{
    if (!s) return;
    free(s->bytes);
    free(s->x);
    free(s->y);
    free(s->shift);
    free(s->scale);
    free(s);
}

const char *am_inputs_name(am_inputs mode)
{
    switch (mode) {
    case AM_INPUTS_RAW:
        return "raw";
    case AM_INPUTS_CENTRED:
        return "centred";
    case AM_INPUTS_STANDARDISED:
        return "standardised";
    }
    return "?";
}

am_status am_inputs_parse(const char *name, am_inputs *out, char *err, size_t errlen)
{
    for (int m = AM_INPUTS_RAW; m <= AM_INPUTS_STANDARDISED; m++)
        if (strcmp(name, am_inputs_name((am_inputs)m)) == 0) {
            *out = (am_inputs)m;
            return AM_OK;
        }
    return am_common_failf(err, errlen, AM_EINVAL,
                           "inputs must be raw, centred or standardised, got '%s'", name);
}

am_status am_classset_read_idx(const char *images, const char *labels, size_t classes,
                               const char *fix, am_classset **out, char *err, size_t errlen)
{
    *out = NULL;
    am_idx *im = NULL, *lb = NULL;
    am_status st = am_idx_read(images, 3, fix, &im, err, errlen);
    if (!st) st = am_idx_read(labels, 1, fix, &lb, err, errlen);
    if (st) goto fail;
    if (!fix) fix = "use matching images and labels files";
    if (im->dims[0] != lb->dims[0]) {
        snprintf(err, errlen, "%s: %zu labels for the %zu images of %s (%s)", labels, lb->dims[0],
                 im->dims[0], images, fix);
        st = AM_EINVAL;
        goto fail;
    }
    for (size_t i = 0; i < lb->len; i++)
        if (lb->data[i] >= classes) {
            snprintf(err, errlen, "%s: label %u of item %zu is out of range 0..%zu (%s)", labels,
                     (unsigned)lb->data[i], i, classes - 1, fix);
            st = AM_EINVAL;
            goto fail;
        }
    am_classset *s = calloc(1, sizeof *s);
    if (!s || !(s->y = malloc(lb->len * sizeof *s->y))) {
        free(s);
        snprintf(err, errlen, "%s: out of memory", labels);
        st = AM_ENOMEM;
        goto fail;
    }
    s->n = im->dims[0];
    s->rows = im->dims[1];
    s->cols = im->dims[2];
    s->d = s->rows * s->cols;
    s->classes = classes;
    s->bytes = im->data; /* the set takes the pixel buffer */
    im->data = NULL;
    for (size_t i = 0; i < s->n; i++)
        s->y[i] = lb->data[i];
    am_idx_free(im);
    am_idx_free(lb);
    *out = s;
    return AM_OK;
fail:
    am_idx_free(im);
    am_idx_free(lb);
    return st;
}

am_status am_classset_read_csv(const char *path, size_t max_classes, am_classset **out, char *err,
                               size_t errlen)
{
    *out = NULL;
    am_dataset *ds = NULL;
    am_status st = am_dataset_read_csv(path, &ds, err, errlen);
    if (st) return st;
    size_t top = 0;
    for (size_t i = 0; i < ds->n; i++) {
        double v = ds->y[i];
        if (!(v >= 0 && v == floor(v) && v < (double)max_classes)) {
            snprintf(err, errlen,
                     "%s: label %g of data row %zu is not an integer in 0..%zu (the last column "
                     "holds the class)",
                     path, v, i + 1, max_classes - 1);
            am_dataset_free(ds);
            return AM_EINVAL;
        }
        if ((size_t)v > top) top = (size_t)v;
    }
    am_classset *s = calloc(1, sizeof *s);
    if (!s || !(s->y = malloc(ds->n * sizeof *s->y))) {
        free(s);
        am_dataset_free(ds);
        snprintf(err, errlen, "%s: out of memory", path);
        return AM_ENOMEM;
    }
    s->n = ds->n;
    s->d = ds->d;
    s->classes = top + 1;
    for (size_t i = 0; i < ds->n; i++)
        s->y[i] = (int)ds->y[i];
    s->x = ds->a; /* the set takes the feature matrix */
    ds->a = NULL;
    am_dataset_free(ds);
    *out = s;
    return AM_OK;
}

/* DIR/name.gz if it exists, else DIR/name if that exists, else DIR/name.gz (for the message);
 * 1 when both exist (which one is meant cannot be told: refused, never chosen silently). */
static int idx_path(char *buf, size_t len, const char *dir, const char *name)
{
    struct stat sb;
    snprintf(buf, len, "%s/%s", dir, name);
    int plain = stat(buf, &sb) == 0;
    snprintf(buf, len, "%s/%s.gz", dir, name);
    if (stat(buf, &sb) == 0) return plain;
    if (plain) snprintf(buf, len, "%s/%s", dir, name);
    return 0;
}

/* The four paths of an IDX directory's split (train or t10k) into im and lb; AM_EINVAL with
 * the reason when a file exists both plain and compressed. */
static am_status idx_split_paths(const char *dir, const char *split, char *im, char *lb, size_t len,
                                 const char *fix, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", split);
    int both = idx_path(im, len, dir, name);
    if (!both) {
        snprintf(name, sizeof name, "%s-labels-idx1-ubyte", split);
        both = idx_path(lb, len, dir, name);
    }
    if (both) {
        snprintf(err, errlen, "%s/%s and %s/%s.gz both exist; remove one (%s)", dir, name, dir,
                 name, fix);
        return AM_EINVAL;
    }
    return AM_OK;
}

/* Opens the train and t10k pairs of an IDX directory. */
static am_status open_idx(const char *dir, const char *fix_missing, const char *fix,
                          am_classset **train, am_classset **test, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot open directory '%s': %s (%s)", dir,
                 stat(dir, &sb) != 0 ? strerror(errno) : "not a directory", fix_missing);
        return AM_EIO;
    }
    char im[4096], lb[4096];
    am_status st = idx_split_paths(dir, "train", im, lb, sizeof im, fix, err, errlen);
    if (!st) st = am_classset_read_idx(im, lb, AM_IDX_CLASSES, fix, train, err, errlen);
    if (st) return st;
    st = idx_split_paths(dir, "t10k", im, lb, sizeof im, fix, err, errlen);
    if (!st) st = am_classset_read_idx(im, lb, AM_IDX_CLASSES, fix, test, err, errlen);
    if (!st && ((*test)->rows != (*train)->rows || (*test)->cols != (*train)->cols)) {
        snprintf(err, errlen,
                 "%s: images of %zu x %zu pixels, the training images have %zu x %zu "
                 "(%s)",
                 im, (*test)->rows, (*test)->cols, (*train)->rows, (*train)->cols, fix);
        st = AM_EINVAL;
    }
    if (st) {
        am_classset_free(*train);
        am_classset_free(*test);
        *train = *test = NULL;
    }
    return st;
}

am_status am_classset_open(const char *spec, am_classset **train, am_classset **test, char *err,
                           size_t errlen)
{
    *train = *test = NULL;
    if (strcmp(spec, "fashion-mnist") == 0)
        return open_idx(AM_IDX_FASHION_DIR,
                        "install dataset-fashion-mnist: apt-get install dataset-fashion-mnist, "
                        "or scripts/install-deps.sh",
                        "reinstall it: apt-get install --reinstall dataset-fashion-mnist", train,
                        test, err, errlen);
    if (strncmp(spec, "idx:", 4) == 0) {
        if (!spec[4]) {
            snprintf(err, errlen, "idx: needs a directory, e.g. idx:/usr/share/datasets/mnist");
            return AM_EINVAL;
        }
        const char *layout = "idx:DIR needs train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                             "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each plain or "
                             ".gz, images and labels matching";
        return open_idx(spec + 4, layout, layout, train, test, err, errlen);
    }
    const size_t max_classes = 100000;
    const char *comma = strchr(spec, ',');
    char first[4096];
    if (comma) {
        size_t len = (size_t)(comma - spec);
        if (len == 0 || len >= sizeof first || !comma[1] || strchr(comma + 1, ',')) {
            snprintf(err, errlen, "'%s' is not FILE.csv or TRAIN.csv,TEST.csv", spec);
            return AM_EINVAL;
        }
        memcpy(first, spec, len);
        first[len] = 0;
    } else {
        snprintf(first, sizeof first, "%s", spec);
    }
    am_status st = am_classset_read_csv(first, max_classes, train, err, errlen);
    if (st) return st;
    st = am_classset_read_csv(comma ? comma + 1 : first, max_classes, test, err, errlen);
    if (!st && (*test)->d != (*train)->d) {
        snprintf(err, errlen, "%s: %zu features, the training file %s has %zu", comma + 1,
                 (*test)->d, first, (*train)->d);
        st = AM_EINVAL;
    }
    if (!st && (*test)->classes > (*train)->classes) {
        snprintf(err, errlen,
                 "%s: label %zu does not occur in the training file %s (classes "
                 "0..%zu)",
                 comma + 1, (*test)->classes - 1, first, (*train)->classes - 1);
        st = AM_EINVAL;
    }
    if (!st) (*test)->classes = (*train)->classes;
    if (st) {
        am_classset_free(*train);
        am_classset_free(*test);
        *train = *test = NULL;
    }
    return st;
}

/* The inputs' transform of the m rows at x[m d] (none for raw inputs). */
static void transform(const am_classset *s, size_t m, double *x)
{
    if (!s->shift) return;
    const size_t d = s->d;
    for (size_t r = 0; r < m; r++) {
        double *xr = x + r * d;
        if (s->scale)
            for (size_t j = 0; j < d; j++)
                xr[j] = (xr[j] - s->shift[j]) / s->scale[j];
        else
            for (size_t j = 0; j < d; j++)
                xr[j] -= s->shift[j];
    }
}

/* byte / 255 for every byte value, correctly rounded. */
static void byte_table(double lut[256])
{
    for (int v = 0; v < 256; v++)
        lut[v] = v / 255.0;
}

void am_classset_gather(const am_classset *s, const size_t *idx, size_t m, double *x, int *y)
{
    const size_t d = s->d;
    double lut[256];
    if (s->bytes) byte_table(lut);
    for (size_t r = 0; r < m; r++) {
        size_t i = idx[r];
        double *xr = x + r * d;
        if (s->bytes) {
            const uint8_t *b = s->bytes + i * d;
            for (size_t j = 0; j < d; j++)
                xr[j] = lut[b[j]];
        } else {
            memcpy(xr, s->x + i * d, d * sizeof *xr);
        }
        if (y) y[r] = s->y[i];
    }
    transform(s, m, x);
}

void am_classset_rows(const am_classset *s, size_t first, size_t m, double *x, int *y)
{
    const size_t d = s->d;
    if (s->bytes) {
        double lut[256];
        byte_table(lut);
        const uint8_t *b = s->bytes + first * d;
        for (size_t j = 0; j < m * d; j++)
            x[j] = lut[b[j]];
    } else {
        memcpy(x, s->x + first * d, m * d * sizeof *x);
    }
    transform(s, m, x);
    if (y) memcpy(y, s->y + first, m * sizeof *y);
}

/* Row i of a raw set into x[d]. */
static void raw_row(const am_classset *s, size_t i, const double lut[256], double *x)
{
    if (s->bytes)
        for (size_t j = 0; j < s->d; j++)
            x[j] = lut[s->bytes[i * s->d + j]];
    else
        memcpy(x, s->x + i * s->d, s->d * sizeof *x);
}

/* Sets the inputs of s to mode with the given mean and deviation (copied). */
static am_status set_transform(am_classset *s, am_inputs mode, const double *mean, const double *sd)
{
    free(s->shift);
    free(s->scale);
    s->shift = s->scale = NULL;
    s->inputs = AM_INPUTS_RAW;
    if (mode == AM_INPUTS_RAW) return AM_OK;
    s->shift = malloc(s->d * sizeof *s->shift);
    if (mode == AM_INPUTS_STANDARDISED) s->scale = malloc(s->d * sizeof *s->scale);
    if (!s->shift || (mode == AM_INPUTS_STANDARDISED && !s->scale)) {
        free(s->shift);
        s->shift = NULL;
        return AM_ENOMEM;
    }
    memcpy(s->shift, mean, s->d * sizeof *mean);
    if (s->scale)
        for (size_t j = 0; j < s->d; j++)
            s->scale[j] = sd[j] > 0 ? sd[j] : 1.0;
    s->inputs = (int)mode;
    return AM_OK;
}

am_status am_classset_set_inputs(am_classset *train, am_classset *test, am_inputs mode)
{
    const size_t d = train->d, n = train->n;
    if (mode == AM_INPUTS_RAW || n == 0) {
        set_transform(test, AM_INPUTS_RAW, NULL, NULL);
        return set_transform(train, AM_INPUTS_RAW, NULL, NULL);
    }
    double *mean = calloc(d, sizeof *mean), *var = calloc(d, sizeof *var),
           *row = malloc(d * sizeof *row);
    am_status st = AM_ENOMEM;
    if (mean && var && row) {
        double lut[256];
        byte_table(lut);
        for (size_t i = 0; i < n; i++) {
            raw_row(train, i, lut, row);
            for (size_t j = 0; j < d; j++)
                mean[j] += row[j];
        }
        for (size_t j = 0; j < d; j++)
            mean[j] /= (double)n;
        for (size_t i = 0; i < n; i++) {
            raw_row(train, i, lut, row);
            for (size_t j = 0; j < d; j++)
                var[j] += (row[j] - mean[j]) * (row[j] - mean[j]);
        }
        for (size_t j = 0; j < d; j++)
            var[j] = sqrt(var[j] / (double)n);
        st = set_transform(train, mode, mean, var);
        if (!st) st = set_transform(test, mode, mean, var);
        if (st) set_transform(train, AM_INPUTS_RAW, NULL, NULL);
    }
    free(mean);
    free(var);
    free(row);
    return st;
}

/* Continues c over the n bytes at b, in chunks zlib's uInt can count. */
static uLong crc_bytes(uLong c, const void *b, size_t n)
{
    const unsigned char *p = b;
    for (size_t off = 0; off < n; off += 1u << 30) {
        size_t k = n - off < (1u << 30) ? n - off : (1u << 30);
        c = crc32(c, p + off, (uInt)k);
    }
    return c;
}

unsigned long am_classset_crc(const am_classset *s)
{
    uLong c = crc32(0L, Z_NULL, 0);
    const size_t nd = s->n * s->d;
    c = s->bytes ? crc_bytes(c, s->bytes, nd) : crc_bytes(c, s->x, nd * sizeof(double));
    c = crc_bytes(c, s->y, s->n * sizeof(int));
    if (s->shift) {
        const char *name = am_inputs_name((am_inputs)s->inputs);
        c = crc_bytes(c, name, strlen(name));
        c = crc_bytes(c, s->shift, s->d * sizeof(double));
        if (s->scale) c = crc_bytes(c, s->scale, s->d * sizeof(double));
    }
    return (unsigned long)c & 0xffffffffUL;
}
