/*
 * test_models.c -- the IDX reader and labelled sets on the committed fixture and on corrupted
 * copies of it, the model specs, closed forms of the loss and gradient, the analytic
 * gradients against central finite differences, and a short training run on Fashion-MNIST
 * when the package is installed (models/am_idx.h, am_classset.h, am_nn.h; out-of-place
 * optimiser steps of montecarlo/am_optim.h).
 */
#define _GNU_SOURCE /* dladdr */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "test_util.h"

#include "../core/am_rng.h"
#include "../models/am_classset.h"
#include "../models/am_idx.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"

/* The fixture's formulas (make-idx-fixture.py). */
static int train_pixel(size_t i, size_t r, size_t c)
{
    return (int)((37 * i + 11 * r + 3 * c) % 256);
}
static int test_pixel(size_t i, size_t r, size_t c)
{
    return (int)((5 * i + 13 * r + 17 * c + 1) % 256);
}

static void expect_one_line(const char *err, const char *needle, const char *needle2)
{
    cr_expect(strchr(err, '\n') == NULL, "message is not one line: %s", err);
    cr_expect(strstr(err, needle) != NULL, "message lacks '%s': %s", needle, err);
    if (needle2) cr_expect(strstr(err, needle2) != NULL, "message lacks '%s': %s", needle2, err);
}

Test(idx, fixture_values)
{
    char dir[4096], spec[4200], err[512] = "";
    test_fixture_dir(dir, sizeof dir);
    snprintf(spec, sizeof spec, "idx:%s", dir);
    am_classset *tr, *te;
    cr_assert_eq(am_classset_open(spec, &tr, &te, err, sizeof err), AM_OK, "%s: %s", spec, err);
    cr_assert(tr->n == 20 && tr->rows == 6 && tr->cols == 7 && tr->d == 42 && tr->classes == 10,
              "train n %zu rows %zu cols %zu d %zu classes %zu", tr->n, tr->rows, tr->cols, tr->d,
              tr->classes);
    cr_assert(te->n == 10 && te->d == 42 && te->classes == 10, "test n %zu d %zu", te->n, te->d);
    double x[20 * 42];
    int y[20];
    am_classset_rows(tr, 0, 20, x, y);
    for (size_t i = 0; i < 20; i++) {
        cr_expect_eq(y[i], (int)(i % 10), "train label %zu: %d", i, y[i]);
        for (size_t r = 0; r < 6; r++)
            for (size_t c = 0; c < 7; c++)
                cr_expect_eq(x[i * 42 + r * 7 + c], train_pixel(i, r, c) / 255.0,
                             "train pixel (%zu, %zu, %zu): %.17g", i, r, c, x[i * 42 + r * 7 + c]);
    }
    size_t idx[3] = {7, 2, 9};
    am_classset_gather(te, idx, 3, x, y);
    for (size_t k = 0; k < 3; k++) {
        cr_expect_eq(y[k], (int)((3 * idx[k]) % 10), "test label %zu: %d", idx[k], y[k]);
        for (size_t r = 0; r < 6; r++)
            for (size_t c = 0; c < 7; c++)
                cr_expect_eq(x[k * 42 + r * 7 + c], test_pixel(idx[k], r, c) / 255.0,
                             "test pixel (%zu, %zu, %zu)", idx[k], r, c);
    }
    am_classset_free(tr);
    am_classset_free(te);
    am_classset_free(NULL);
}

/* Writes an IDX file: 4 magic bytes, dims, payload; gzip-compressed unless plain. */
static void write_idx(const char *path, const unsigned char magic[4], const uint32_t *dims,
                      size_t ndim, const unsigned char *data, size_t len, int plain)
{
    unsigned char head[4 + 16];
    memcpy(head, magic, 4);
    for (size_t k = 0; k < ndim; k++)
        for (int b = 0; b < 4; b++)
            head[4 + 4 * k + (size_t)b] = (unsigned char)(dims[k] >> (24 - 8 * b));
    if (plain) {
        FILE *f = fopen(path, "wb");
        cr_assert_not_null(f, "cannot write %s", path);
        fwrite(head, 1, 4 + 4 * ndim, f);
        fwrite(data, 1, len, f);
        fclose(f);
        return;
    }
    gzFile g = gzopen(path, "wb");
    cr_assert_not_null(g, "cannot write %s", path);
    gzwrite(g, head, (unsigned)(4 + 4 * ndim));
    if (len) gzwrite(g, data, (unsigned)len);
    gzclose(g);
}

static const unsigned char MAGIC_IMAGES[4] = {0, 0, 8, 3}, MAGIC_LABELS[4] = {0, 0, 8, 1};

/* A directory with a good copy of the fixture's train split written by write_idx. */
static void good_pair(const char *dir, unsigned char *pix, unsigned char *lab)
{
    for (size_t i = 0; i < 20; i++) {
        lab[i] = (unsigned char)(i % 10);
        for (size_t r = 0; r < 6; r++)
            for (size_t c = 0; c < 7; c++)
                pix[i * 42 + r * 7 + c] = (unsigned char)train_pixel(i, r, c);
    }
    mkdir(dir, 0700);
}

Test(idx, plain_and_corrupt_files)
{
    char dir[128], im[256], lb[256], err[512];
    snprintf(dir, sizeof dir, "/tmp/amsgd_idx_%d", (int)getpid());
    snprintf(im, sizeof im, "%s/images", dir);
    snprintf(lb, sizeof lb, "%s/labels", dir);
    unsigned char pix[20 * 42], lab[20];
    good_pair(dir, pix, lab);
    const uint32_t dims[3] = {20, 6, 7}, ldims[1] = {20};
    am_classset *s = NULL;

    /* plain (not compressed) files are read the same */
    write_idx(im, MAGIC_IMAGES, dims, 3, pix, sizeof pix, 1);
    write_idx(lb, MAGIC_LABELS, ldims, 1, lab, sizeof lab, 1);
    cr_assert_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_OK, "%s", err);
    cr_expect(s->n == 20 && s->d == 42 && s->bytes[41] == pix[41] && s->y[13] == 3,
              "plain files read wrongly");
    am_classset_free(s);

    /* the good gzip pair, then one fault at a time */
    write_idx(im, MAGIC_IMAGES, dims, 3, pix, sizeof pix, 0);
    write_idx(lb, MAGIC_LABELS, ldims, 1, lab, sizeof lab, 0);
    cr_assert_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_OK, "%s", err);
    am_classset_free(s);

    /* truncated payload inside a complete gzip stream */
    write_idx(im, MAGIC_IMAGES, dims, 3, pix, sizeof pix - 5, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, "FIXME-HINT", &s, err, sizeof err), AM_EIO);
    cr_expect_null(s);
    expect_one_line(err, im, "truncated: 835 of 840 data bytes");
    cr_expect(strstr(err, "FIXME-HINT") != NULL, "the fix is not named: %s", err);

    /* truncated compressed file: the first half of the gzip bytes */
    write_idx(im, MAGIC_IMAGES, dims, 3, pix, sizeof pix, 0);
    {
        struct stat sb;
        cr_assert_eq(stat(im, &sb), 0);
        cr_assert_eq(truncate(im, sb.st_size / 2), 0);
    }
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EIO);
    expect_one_line(err, im, "truncated");

    /* wrong magic: a labels file where the images belong */
    write_idx(im, MAGIC_LABELS, ldims, 1, lab, sizeof lab, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EINVAL);
    expect_one_line(err, im, "bad magic 0x00000801, expected 0x00000803");

    /* element type other than unsigned byte (0x0D: float) */
    const unsigned char magic_float[4] = {0, 0, 0x0d, 3};
    write_idx(im, magic_float, dims, 3, pix, sizeof pix, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EINVAL);
    expect_one_line(err, im, "bad magic 0x00000d03");

    /* trailing bytes */
    unsigned char more[20 * 42 + 3] = {0};
    memcpy(more, pix, sizeof pix);
    write_idx(im, MAGIC_IMAGES, dims, 3, more, sizeof more, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EINVAL);
    expect_one_line(err, im, "trailing bytes");

    /* a zero dimension */
    const uint32_t zdims[3] = {20, 0, 7};
    write_idx(im, MAGIC_IMAGES, zdims, 3, pix, 0, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EINVAL);
    expect_one_line(err, im, "dimension 1 is 0");

    /* dimension mismatch between images and labels: 19 labels for 20 images */
    write_idx(im, MAGIC_IMAGES, dims, 3, pix, sizeof pix, 0);
    const uint32_t ldims19[1] = {19};
    write_idx(lb, MAGIC_LABELS, ldims19, 1, lab, 19, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EINVAL);
    expect_one_line(err, lb, "19 labels for the 20 images");

    /* label out of range: 10 at item 3 */
    lab[3] = 10;
    write_idx(lb, MAGIC_LABELS, ldims, 1, lab, sizeof lab, 0);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EINVAL);
    expect_one_line(err, lb, "label 10 of item 3 is out of range 0..9");
    /* ... which is in range with 11 classes */
    cr_expect_eq(am_classset_read_idx(im, lb, 11, NULL, &s, err, sizeof err), AM_OK, "%s", err);
    am_classset_free(s);

    /* missing file */
    unlink(lb);
    cr_expect_eq(am_classset_read_idx(im, lb, 10, NULL, &s, err, sizeof err), AM_EIO);
    expect_one_line(err, lb, "No such file");
    unlink(im);

    /* idx:DIR without the expected files names the first one it looks for and the layout */
    char spec[256];
    snprintf(spec, sizeof spec, "idx:%s", dir);
    am_classset *te = NULL;
    cr_expect_eq(am_classset_open(spec, &s, &te, err, sizeof err), AM_EIO);
    cr_expect(s == NULL && te == NULL, "partial sets returned");
    expect_one_line(err, "train-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte");
    cr_expect_eq(am_classset_open("idx:", &s, &te, err, sizeof err), AM_EINVAL);
    snprintf(spec, sizeof spec, "idx:%s/absent", dir);
    cr_expect_eq(am_classset_open(spec, &s, &te, err, sizeof err), AM_EIO);
    expect_one_line(err, "absent", "No such file");
    rmdir(dir);
}

Test(idx, fashion_mnist_package)
{
    char err[512] = "";
    am_classset *tr, *te;
    struct stat sb;
    if (stat(AM_IDX_FASHION_DIR, &sb) != 0) {
        /* without the package the message names it */
        cr_assert_eq(am_classset_open("fashion-mnist", &tr, &te, err, sizeof err), AM_EIO);
        expect_one_line(err, AM_IDX_FASHION_DIR, "install dataset-fashion-mnist");
        cr_skip_test("dataset-fashion-mnist is not installed");
    }
    cr_assert_eq(am_classset_open("fashion-mnist", &tr, &te, err, sizeof err), AM_OK, "%s", err);
    /* the published sizes: 60000 + 10000 images of 28 x 28, 6000 and 1000 per class */
    cr_assert(tr->n == 60000 && te->n == 10000 && tr->rows == 28 && tr->cols == 28 &&
                  te->d == 784 && tr->classes == 10,
              "train %zu test %zu shape %zu x %zu", tr->n, te->n, tr->rows, tr->cols);
    size_t ctr[10] = {0}, cte[10] = {0};
    for (size_t i = 0; i < tr->n; i++)
        ctr[tr->y[i]]++;
    for (size_t i = 0; i < te->n; i++)
        cte[te->y[i]]++;
    for (int k = 0; k < 10; k++)
        cr_expect(ctr[k] == 6000 && cte[k] == 1000, "class %d: %zu train, %zu test", k, ctr[k],
                  cte[k]);
    am_classset_free(tr);
    am_classset_free(te);
}

/* Two CSV files /tmp/amsgd_TAG_{a,b}_PID.csv with the given texts: their names in a and b, the
 * two-file spec "a,b" in spec. */
static void two_csv(const char *tag, const char *ta, const char *tb, char a[64], char b[64],
                    char spec[140])
{
    snprintf(a, 64, "/tmp/amsgd_%s_a_%d.csv", tag, (int)getpid());
    snprintf(b, 64, "/tmp/amsgd_%s_b_%d.csv", tag, (int)getpid());
    test_write_file(a, ta);
    test_write_file(b, tb);
    snprintf(spec, 140, "%s,%s", a, b);
}

Test(classset, csv)
{
    char a[64], b[64], spec[140], err[512];
    two_csv("cls", "f1,f2,label\n0.5,1,2\n-1,2,0\n3,4,1\n", "1,1,1\n2,2,0\n", a, b, spec);
    am_classset *tr, *te;
    cr_assert_eq(am_classset_open(a, &tr, &te, err, sizeof err), AM_OK, "%s", err);
    cr_expect(tr->n == 3 && tr->d == 2 && tr->classes == 3 && te->n == 3 && tr->y[0] == 2 &&
                  tr->x[2] == -1,
              "n %zu d %zu classes %zu", tr->n, tr->d, tr->classes);
    am_classset_free(tr);
    am_classset_free(te);
    cr_assert_eq(am_classset_open(spec, &tr, &te, err, sizeof err), AM_OK, "%s", err);
    cr_expect(te->n == 2 && te->classes == 3, "test n %zu classes %zu", te->n, te->classes);
    am_classset_free(tr);
    am_classset_free(te);
    /* test labels above the training classes, a feature-count mismatch, a fractional label */
    test_write_file(b, "1,1,3\n");
    cr_expect_eq(am_classset_open(spec, &tr, &te, err, sizeof err), AM_EINVAL);
    expect_one_line(err, b, "label 3 does not occur");
    test_write_file(b, "1,1,1,1\n");
    cr_expect_eq(am_classset_open(spec, &tr, &te, err, sizeof err), AM_EINVAL);
    expect_one_line(err, b, "3 features");
    test_write_file(b, "1,1,0.5\n");
    cr_expect_eq(am_classset_open(spec, &tr, &te, err, sizeof err), AM_EINVAL);
    expect_one_line(err, b, "label 0.5 of data row 1");
    cr_expect(tr == NULL && te == NULL, "partial sets returned");
    cr_expect_eq(am_classset_open(",x", &tr, &te, err, sizeof err), AM_EINVAL);
    unlink(a);
    unlink(b);
}

/* Inputs on a CSV set whose mean and deviation are known in closed form: training rows
 * (0, 5, 1), (2, 5, 3), (4, 5, 8) have per-feature means 2, 5, 4 and population deviations
 * sqrt(8/3), 0 (constant: only centred), sqrt(26/3); the test row (1, 7, 4) is transformed by
 * the training statistics, not its own. Raw restores the rows as read and the CRC. */
Test(classset, inputs_closed_form)
{
    char a[64], b[64], spec[140], err[512];
    two_csv("inp", "0,5,1,0\n2,5,3,1\n4,5,8,1\n", "1,7,4,0\n", a, b, spec);
    am_classset *tr, *te;
    cr_assert_eq(am_classset_open(spec, &tr, &te, err, sizeof err), AM_OK, "%s", err);
    const unsigned long crc_raw = am_classset_crc(tr);
    double x[9], t[3];
    const size_t all[3] = {0, 1, 2};
    cr_assert_eq(am_classset_set_inputs(tr, te, AM_INPUTS_STANDARDISED), AM_OK);
    cr_expect_eq(tr->inputs, AM_INPUTS_STANDARDISED);
    am_classset_gather(tr, all, 3, x, NULL);
    am_classset_rows(te, 0, 1, t, NULL);
    const double s0 = sqrt(8.0 / 3.0), s2 = sqrt(26.0 / 3.0);
    const double want[9] = {-2 / s0, 0, -3 / s2, 0, 0, -1 / s2, 2 / s0, 0, 4 / s2};
    const double want_t[3] = {-1 / s0, 2, 0};
    for (size_t i = 0; i < 9; i++)
        cr_expect(fabs(x[i] - want[i]) <= 4e-16 * fmax(1, fabs(want[i])),
                  "standardised training value %zu: %.17g, closed form %.17g", i, x[i], want[i]);
    for (size_t j = 0; j < 3; j++)
        cr_expect(fabs(t[j] - want_t[j]) <= 4e-16 * fmax(1, fabs(want_t[j])),
                  "standardised test value %zu: %.17g, closed form %.17g", j, t[j], want_t[j]);
    /* the test row by its own statistics would be all zeros: the check tells them apart */
    cr_expect(fabs(t[0]) > 0.1 && fabs(t[1]) > 0.1, "test row standardised by its own mean");
    const unsigned long crc_std = am_classset_crc(tr);
    cr_assert_eq(am_classset_set_inputs(tr, te, AM_INPUTS_CENTRED), AM_OK);
    am_classset_gather(tr, all + 2, 1, x, NULL);
    cr_expect(x[0] == 2 && x[1] == 0 && x[2] == 4, "centred row 2: %g %g %g", x[0], x[1], x[2]);
    cr_expect(am_classset_crc(tr) != crc_std && crc_std != crc_raw, "the CRC names the inputs");
    cr_assert_eq(am_classset_set_inputs(tr, te, AM_INPUTS_RAW), AM_OK);
    am_classset_rows(tr, 0, 3, x, NULL);
    cr_expect(x[0] == 0 && x[1] == 5 && x[2] == 1 && x[8] == 8 && tr->shift == NULL);
    cr_expect_eq(am_classset_crc(tr), crc_raw);
    am_inputs m;
    cr_expect_eq(am_inputs_parse("centred", &m, err, sizeof err), AM_OK);
    cr_expect_eq(m, AM_INPUTS_CENTRED);
    cr_expect_eq(am_inputs_parse("normalised", &m, err, sizeof err), AM_EINVAL);
    expect_one_line(err, "normalised", "raw, centred or standardised");
    am_classset_free(tr);
    am_classset_free(te);
    unlink(a);
    unlink(b);
}

/* Standardised pixels of the IDX fixture: every training pixel that varies has mean 0 and
 * variance 1 over the training split, to rounding. */
Test(classset, inputs_fixture_moments)
{
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    cr_assert_eq(am_classset_set_inputs(tr, te, AM_INPUTS_STANDARDISED), AM_OK);
    const size_t n = tr->n, d = tr->d;
    double *x = malloc(n * d * sizeof *x);
    am_classset_rows(tr, 0, n, x, NULL);
    size_t varying = 0;
    for (size_t j = 0; j < d; j++) {
        double m = 0, v = 0;
        for (size_t i = 0; i < n; i++)
            m += x[i * d + j];
        m /= (double)n;
        for (size_t i = 0; i < n; i++)
            v += (x[i * d + j] - m) * (x[i * d + j] - m);
        v /= (double)n;
        cr_expect(fabs(m) <= 1e-13, "pixel %zu: mean %.3g", j, m);
        if (v > 0) {
            varying++;
            cr_expect(fabs(v - 1) <= 1e-12, "pixel %zu: variance %.17g", j, v);
        }
    }
    cr_expect(varying > 0, "no pixel varies in the fixture");
    free(x);
    am_classset_free(tr);
    am_classset_free(te);
}

Test(nn, specs)
{
    char err[256];
    am_status st;
    am_nn *net = am_nn_alloc("mlr", 5, 3, &st, err, sizeof err);
    cr_assert_not_null(net, "%s", err);
    cr_expect(am_nn_dim(net) == 18 && am_nn_layers(net) == 1 && !strcmp(am_nn_spec(net), "mlr"),
              "mlr: dim %zu", am_nn_dim(net));
    am_nn_free(net);
    net = am_nn_alloc("mlp:6,4", 5, 3, &st, err, sizeof err);
    cr_assert_not_null(net, "%s", err);
    /* (6 5 + 6) + (4 6 + 4) + (3 4 + 3) = 79 */
    cr_expect(am_nn_dim(net) == 79 && am_nn_layers(net) == 3 && am_nn_width(net, 1) == 6 &&
                  am_nn_width(net, 2) == 4 && am_nn_width(net, 3) == 3 &&
                  am_nn_offset(net, 2) == 36 && am_nn_offset(net, 3) == 64 &&
                  !strcmp(am_nn_spec(net), "mlp:6,4"),
              "mlp:6,4: dim %zu spec %s", am_nn_dim(net), am_nn_spec(net));
    am_nn_free(net);
    am_nn_free(NULL);
    const char *bad[] = {"mlp:", "mlp:0",  "mlp:3,", "mlp:3x",    "mlp:,3",
                         "cnn",  "mlp:-3", "MLR",    "mlp:70000", "cnn:3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        cr_expect_null(am_nn_alloc(bad[i], 5, 3, &st, err, sizeof err), "'%s' accepted", bad[i]);
        cr_expect(st == AM_EINVAL && err[0], "'%s': status %d, message '%s'", bad[i], st, err);
    }
    char deep[512] = "mlp:2";
    for (int l = 0; l < AM_NN_MAX_DEPTH; l++)
        strcat(deep, ",2");
    cr_expect_null(am_nn_alloc(deep, 5, 3, &st, err, sizeof err), "33 hidden layers accepted");
    cr_expect_null(am_nn_alloc("mlr", 5, 1, &st, err, sizeof err), "one class accepted");
    /* memory is checked up front: 31 layers of 65536^2 weights (8 TB), a 2^31-row batch */
    strcpy(deep, "mlp:65536");
    for (int l = 0; l < 30; l++)
        strcat(deep, ",65536");
    cr_expect_null(am_nn_alloc(deep, 5, 3, &st, err, sizeof err), "8 TB of weights accepted");
    cr_expect_eq(st, AM_ENOMEM, "status %d", st);
    /* cnn needs images of at least 16 x 16; LeNet-like on 28 x 28: conv 6 @ 24 x 24, pool 12,
     * conv 16 @ 8 x 8, pool 4, then 256 -> 120 -> 84 -> 10:
     * (6 25 + 6) + (16 150 + 16) + (120 256 + 120) + (84 120 + 84) + (10 84 + 10) = 44426 */
    net = am_nn_alloc_image("cnn", 28, 28, 10, &st, err, sizeof err);
    cr_assert_not_null(net, "%s", err);
    cr_expect(am_nn_dim(net) == 44426 && am_nn_inputs(net) == 784 && am_nn_width(net, 0) == 256 &&
                  !strcmp(am_nn_spec(net), "cnn:6,16,120,84"),
              "cnn: dim %zu, n_0 %zu, spec %s", am_nn_dim(net), am_nn_width(net, 0),
              am_nn_spec(net));
    am_nn_free(net);
    cr_expect_null(am_nn_alloc_image("cnn", 15, 28, 10, &st, err, sizeof err), "15 rows accepted");
    net = am_nn_alloc_image("mlp:5", 6, 7, 10, &st, err, sizeof err);
    cr_expect(net && am_nn_inputs(net) == 42 && am_nn_width(net, 0) == 42, "mlp on images");
    am_nn_free(net);
    net = am_nn_alloc("mlp:4096", 784, 10, &st, err, sizeof err);
    cr_assert_not_null(net);
    cr_expect_null(am_nn_work_alloc(net, (size_t)1 << 18, &st), "a 19 GB workspace accepted");
    cr_expect_eq(st, AM_ENOMEM, "status %d", st);
    cr_expect_null(am_nn_work_alloc(net, 0, &st), "batch 0 accepted");
    cr_expect_eq(st, AM_EINVAL);
    am_nn_free(net);
}

/* m rows of standard normal inputs and uniform labels from a test stream. */
static void random_batch(uint64_t seed, size_t m, size_t d, size_t k, double *x, int *y)
{
    am_rng r;
    am_rng_init(&r, seed, 0, AM_STREAM_TEST_FIRST, 0);
    am_rng_fill_gaussian(&r, x, m * d);
    for (size_t i = 0; i < m; i++)
        y[i] = (int)(am_rng_u64(&r) % k);
}

/* MLR at theta = 0: every class has probability 1/K, loss = log K, and
 * dW[c][j] = (1/m) sum_i (1/K - [y_i = c]) x_ij, db[c] = (1/m) sum_i (1/K - [y_i = c]). */
Test(nn, mlr_at_zero_closed_form)
{
    am_nn_blas_single_thread();
    const size_t d = 4, k = 3, m = 5;
    am_status st;
    char err[128];
    am_nn *net = am_nn_alloc("mlr", d, k, &st, err, sizeof err);
    am_nn_work *w = am_nn_work_alloc(net, 8, &st);
    cr_assert(net && w);
    double x[5 * 4], theta[15] = {0}, g[15];
    int y[5];
    random_batch(3, m, d, k, x, y);
    double loss = am_nn_loss_grad(net, w, theta, x, y, m, g);
    cr_expect(fabs(loss - log(3.0)) <= 4 * DBL_EPSILON, "loss %.17g, log 3 = %.17g", loss,
              log(3.0));
    for (size_t c = 0; c < k; c++) {
        double gb = 0;
        for (size_t i = 0; i < m; i++)
            gb += (1.0 / 3.0 - (y[i] == (int)c)) / (double)m;
        cr_expect(fabs(g[12 + c] - gb) <= 1e-15, "db[%zu] %.17g, expected %.17g", c, g[12 + c], gb);
        for (size_t j = 0; j < d; j++) {
            double gw = 0;
            for (size_t i = 0; i < m; i++)
                gw += (1.0 / 3.0 - (y[i] == (int)c)) * x[i * d + j] / (double)m;
            cr_expect(fabs(g[c * d + j] - gw) <= 1e-14 * (1 + fabs(gw)),
                      "dW[%zu][%zu] %.17g, expected %.17g", c, j, g[c * d + j], gw);
        }
    }
    am_nn_work_free(w);
    am_nn_work_free(NULL);
    am_nn_free(net);
}

/* Logits of order 1000 (exp overflows without the log-sum-exp shift): mlr with W = 0 and
 * b = (1000, 0, -1000) has loss lse - z_y with lse = 1000 + log(1 + e^-1000 + e^-2000) =
 * 1000 in double, so the losses of labels 0, 1, 2 are 0, 1000, 2000 exactly. */
Test(nn, softmax_is_stable)
{
    am_status st;
    char err[128];
    am_nn *net = am_nn_alloc("mlr", 2, 3, &st, err, sizeof err);
    am_nn_work *w = am_nn_work_alloc(net, 3, &st);
    double theta[9] = {0, 0, 0, 0, 0, 0, 1000, 0, -1000}, g[9];
    const double x[6] = {1, 2, 3, 4, 5, 6};
    const double want[3] = {0, 1000, 2000};
    for (int lab = 0; lab < 3; lab++) {
        double loss = am_nn_loss_grad(net, w, theta, x, &lab, 1, g);
        cr_expect(loss == want[lab], "label %d: loss %.17g, expected %g", lab, loss, want[lab]);
        /* softmax = (1, 0, 0): db = (1, 0, 0) - onehot(label) */
        for (int c = 0; c < 3; c++)
            cr_expect(g[6 + c] == (c == 0) - (c == lab), "label %d: db[%d] = %g", lab, c, g[6 + c]);
    }
    am_nn_work_free(w);
    am_nn_free(net);
}

/*
 * Central differences fd(h) = (L(theta + h e_i) - L(theta - h e_i)) / 2h have truncation error
 * c h^2 + O(h^4), and if each loss evaluation carries a relative rounding error of at most
 * k eps, a rounding error of at most k eps |L| / h. The tolerance for coordinate i is derived
 * from the step: |fd(2h) - fd(h)| = 3 |c| h^2 (Richardson), so
 *   tol_i = 2 |fd(2h) - fd(h)| + 8 eps (1 + |L|) / h
 * bounds the truncation error with a factor 6 and the rounding with k = 8 (a sum of m
 * log-sum-exp terms loses a few eps). Returns the number of coordinates outside it and the
 * worst ratio |g_i - fd_i| / tol_i.
 */
static size_t gradcheck(const am_nn *net, am_nn_work *w, const double *theta0, const double *x,
                        const int *y, size_t m, const double *g, double h, double *worst,
                        size_t *worst_i)
{
    size_t dim = am_nn_dim(net), bad = 0;
    double *t = malloc(dim * sizeof *t);
    memcpy(t, theta0, dim * sizeof *t);
    double l0 = am_nn_loss_grad(net, w, t, x, y, m, NULL);
    *worst = 0;
    *worst_i = 0;
    for (size_t i = 0; i < dim; i++) {
        double fd[2];
        for (int k = 0; k < 2; k++) {
            double hk = h * (k + 1);
            t[i] = theta0[i] + hk;
            double lp = am_nn_loss_grad(net, w, t, x, y, m, NULL);
            t[i] = theta0[i] - hk;
            double lm = am_nn_loss_grad(net, w, t, x, y, m, NULL);
            t[i] = theta0[i];
            fd[k] = (lp - lm) / (2 * hk);
        }
        double tol = 2 * fabs(fd[1] - fd[0]) + 8 * DBL_EPSILON * (1 + fabs(l0)) / h;
        double ratio = fabs(g[i] - fd[0]) / tol;
        if (ratio > 1) bad++;
        if (ratio > *worst) {
            *worst = ratio;
            *worst_i = i;
        }
    }
    free(t);
    return bad;
}

static const char *const GC_SPECS[] = {"mlr", "mlp:7", "mlp:6,5", "mlp:5,4,6"};

/* theta from am_nn_init plus N(0, 0.1^2) on every coordinate (biases too). */
static void gc_theta(const am_nn *net, uint64_t seed, double *theta)
{
    size_t dim = am_nn_dim(net);
    am_nn_init(net, seed, 0, theta);
    am_rng r;
    am_rng_init(&r, seed, 1, AM_STREAM_TEST_FIRST, 0);
    for (size_t i = 0; i < dim; i++)
        theta[i] += 0.1 * am_rng_gaussian(&r);
}

Test(nn, gradient_matches_finite_differences)
{
    am_nn_blas_single_thread();
    const size_t d = 5, k = 4, m = 6;
    const double h = 1e-5;
    for (size_t sp = 0; sp < sizeof GC_SPECS / sizeof GC_SPECS[0]; sp++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            am_status st;
            char err[128];
            am_nn *net = am_nn_alloc(GC_SPECS[sp], d, k, &st, err, sizeof err);
            cr_assert_not_null(net, "%s", err);
            am_nn_work *w = am_nn_work_alloc(net, 8, &st); /* batch 8 > m: partial batches */
            size_t dim = am_nn_dim(net);
            double *theta = malloc(dim * sizeof *theta), *g = malloc(dim * sizeof *g);
            double x[6 * 5];
            int y[6];
            random_batch(seed, m, d, k, x, y);
            gc_theta(net, seed, theta);
            double l1 = am_nn_loss_grad(net, w, theta, x, y, m, g);
            double l2 = am_nn_loss_grad(net, w, theta, x, y, m, NULL);
            cr_expect(l1 == l2, "%s seed %llu: loss with and without gradient differ", GC_SPECS[sp],
                      (unsigned long long)seed);
            double worst;
            size_t wi;
            size_t bad = gradcheck(net, w, theta, x, y, m, g, h, &worst, &wi);
            cr_expect_eq(bad, 0,
                         "%s seed %llu h %g: %zu of %zu coordinates outside the tolerance, worst "
                         "ratio %.3g at %zu (g %.17g)",
                         GC_SPECS[sp], (unsigned long long)seed, h, bad, dim, worst, wi, g[wi]);
            free(theta);
            free(g);
            am_nn_work_free(w);
            am_nn_free(net);
        }
}

/* The LeNet-like cnn (5 x 5 convolutions, ReLU, 2 x 2 max-pooling) against the same check, on
 * 16 x 16 and 17 x 18 images (odd sizes: pooling drops the last row or column). */
Test(nn, cnn_gradient_matches_finite_differences)
{
    am_nn_blas_single_thread();
    const size_t shapes[2][2] = {{16, 16}, {17, 18}}, k = 3, m = 3;
    const char *specs[2] = {"cnn:2,3,4", "cnn:3,2"};
    for (int sh = 0; sh < 2; sh++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            am_status st;
            char err[128];
            size_t rows = shapes[sh][0], cols = shapes[sh][1], d = rows * cols;
            am_nn *net = am_nn_alloc_image(specs[sh], rows, cols, k, &st, err, sizeof err);
            cr_assert_not_null(net, "%s", err);
            am_nn_work *w = am_nn_work_alloc(net, 4, &st);
            cr_assert_not_null(w);
            size_t dim = am_nn_dim(net);
            double *theta = malloc(dim * sizeof *theta), *g = malloc(dim * sizeof *g);
            double *x = malloc(m * d * sizeof *x);
            int y[3];
            random_batch(seed, m, d, k, x, y);
            gc_theta(net, seed, theta);
            am_nn_loss_grad(net, w, theta, x, y, m, g);
            double worst;
            size_t wi;
            size_t bad = gradcheck(net, w, theta, x, y, m, g, 1e-5, &worst, &wi);
            cr_expect_eq(bad, 0,
                         "%s on %zu x %zu, seed %llu: %zu of %zu coordinates outside the "
                         "tolerance, worst ratio %.3g at %zu",
                         specs[sh], rows, cols, (unsigned long long)seed, bad, dim, worst, wi);
            double gmax = 0;
            for (size_t i = 0; i < dim; i++)
                gmax = fmax(gmax, fabs(g[i]));
            g[1] += 1e-6 * gmax; /* a convolution weight of stage 1 */
            cr_expect_eq(gradcheck(net, w, theta, x, y, m, g, 1e-5, &worst, &wi), 1,
                         "%s: a wrong stage-1 weight gradient passes", specs[sh]);
            free(theta);
            free(g);
            free(x);
            am_nn_work_free(w);
            am_nn_free(net);
        }
}

/* The same check FAILs against gradients that are wrong on one weight of each layer by 1e-6
 * of the largest gradient component, by a factor m (a missing 1/m), or taken at a shifted point. */
Test(nn, gradient_check_detects_wrong_gradients)
{
    am_nn_blas_single_thread();
    const size_t d = 5, k = 4, m = 6;
    am_status st;
    char err[128];
    am_nn *net = am_nn_alloc("mlp:6,5", d, k, &st, err, sizeof err);
    am_nn_work *w = am_nn_work_alloc(net, m, &st);
    size_t dim = am_nn_dim(net);
    double *theta = malloc(dim * sizeof *theta), *g = malloc(dim * sizeof *g),
           *bad_g = malloc(dim * sizeof *g);
    double x[6 * 5];
    int y[6];
    random_batch(7, m, d, k, x, y);
    gc_theta(net, 7, theta);
    am_nn_loss_grad(net, w, theta, x, y, m, g);
    double worst, gmax = 0;
    size_t wi;
    for (size_t i = 0; i < dim; i++)
        gmax = fmax(gmax, fabs(g[i]));
    for (size_t l = 1; l <= am_nn_layers(net); l++) {
        memcpy(bad_g, g, dim * sizeof *g);
        size_t i = am_nn_offset(net, l) + 1;
        bad_g[i] += 1e-6 * gmax;
        size_t bad = gradcheck(net, w, theta, x, y, m, bad_g, 1e-5, &worst, &wi);
        cr_expect(bad == 1 && wi == i,
                  "layer %zu: perturbed coordinate %zu (g %.3g) not the "
                  "only failure: %zu failures, worst at %zu",
                  l, i, g[i], bad, wi);
    }
    for (size_t i = 0; i < dim; i++)
        bad_g[i] = g[i] * (double)m;
    cr_expect_gt(gradcheck(net, w, theta, x, y, m, bad_g, 1e-5, &worst, &wi), dim / 2,
                 "a gradient m = %zu times too large passes", m);
    /* the gradient of a point 0.5 away in one weight of the second layer */
    size_t nbad = 0;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        gc_theta(net, seed, theta);
        memcpy(bad_g, theta, dim * sizeof *theta);
        bad_g[am_nn_offset(net, 2) + 3] += 0.5;
        am_nn_loss_grad(net, w, bad_g, x, y, m, g);
        nbad += gradcheck(net, w, theta, x, y, m, g, 1e-5, &worst, &wi);
    }
    cr_expect_gt(nbad, 0, "the gradient at a shifted point passes");
    am_nn_work_free(w);
    free(theta);
    free(g);
    free(bad_g);
    am_nn_free(net);
}

/* The workspace's batch does not change results: m rows through a batch-m and a batch-64
 * workspace give the same bits, and am_nn_set_grad over chunks equals one big batch up to
 * rounding. */
Test(nn, batch_layout_independent)
{
    am_nn_blas_single_thread();
    const size_t d = 5, k = 4, m = 6;
    am_status st;
    char err[128];
    am_nn *net = am_nn_alloc("mlp:6,5", d, k, &st, err, sizeof err);
    am_nn_work *w6 = am_nn_work_alloc(net, m, &st), *w64 = am_nn_work_alloc(net, 64, &st);
    size_t dim = am_nn_dim(net);
    double *theta = malloc(dim * sizeof *theta), *g1 = malloc(dim * sizeof *g1),
           *g2 = malloc(dim * sizeof *g2);
    double x[6 * 5];
    int y[6];
    random_batch(11, m, d, k, x, y);
    gc_theta(net, 11, theta);
    double l1 = am_nn_loss_grad(net, w6, theta, x, y, m, g1);
    double l2 = am_nn_loss_grad(net, w64, theta, x, y, m, g2);
    cr_expect(l1 == l2 && memcmp(g1, g2, dim * sizeof *g1) == 0, "batch 6 and 64 differ");
    am_nn_work_free(w6);
    am_nn_work_free(w64);
    free(theta);
    free(g1);
    free(g2);
    am_nn_free(net);
}

/* am_optim_step_to writes the same bits out of place as am_optim_step in place, and leaves
 * its input alone. */
Test(optim, step_to_out_of_place)
{
    const double g1[3] = {1, -2, 0.25}, g2[3] = {0.5, 1, -3};
    for (int kind = AM_OPT_SGD; kind <= AM_OPT_ADAGRAD; kind++) {
        am_optim_params p = am_optim_params_default((am_optim_kind)kind);
        am_optim *a = am_optim_alloc(&p, 3, NULL), *b = am_optim_alloc(&p, 3, NULL);
        double xa[3] = {1, 1, -1}, xb[3] = {1, 1, -1}, xc[3];
        am_optim_step(a, xa, g1);
        am_optim_step(a, xa, g2);
        am_optim_step_to(b, xb, g1, xc);
        cr_expect(xb[0] == 1 && xb[1] == 1 && xb[2] == -1, "%s: input changed",
                  am_optim_name((am_optim_kind)kind));
        am_optim_step_to(b, xc, g2, xb);
        cr_expect(memcmp(xa, xb, sizeof xa) == 0, "%s: out of place differs",
                  am_optim_name((am_optim_kind)kind));
        am_optim_free(a);
        am_optim_free(b);
    }
}

/* Training MLR and an MLP with plain SGD on Fashion-MNIST (when installed): the untrained
 * model is at chance on the test set (10 classes: 0.1 +- 0.05) and 1000 steps of batch 32
 * reach the accuracy of published linear baselines (~0.84 for logistic regression in the
 * data set's benchmark; required >= 0.75, a bound the run clears by a wide margin while a
 * broken gradient stays near chance). */
Test(nn, learns_fashion_mnist, .timeout = 120)
{
    struct stat sb;
    if (stat(AM_IDX_FASHION_DIR, &sb) != 0) cr_skip_test("dataset-fashion-mnist is not installed");
    am_nn_blas_single_thread();
    char err[512];
    am_classset *tr, *te;
    cr_assert_eq(am_classset_open("fashion-mnist", &tr, &te, err, sizeof err), AM_OK, "%s", err);
    const char *specs[] = {"mlr", "mlp:64"};
    for (size_t sp = 0; sp < 2; sp++) {
        am_status st;
        am_nn *net = am_nn_alloc(specs[sp], tr->d, tr->classes, &st, err, sizeof err);
        am_nn_work *w = am_nn_work_alloc(net, 500, &st);
        size_t dim = am_nn_dim(net);
        double *theta = malloc(dim * sizeof *theta), *g = malloc(dim * sizeof *g);
        am_nn_init(net, 1, 0, theta);
        double acc0 = am_nn_accuracy(net, w, theta, te, 0, te->n, NULL);
        cr_expect(fabs(acc0 - 0.1) < 0.05, "%s untrained: accuracy %.4f", specs[sp], acc0);
        am_optim_params op = am_optim_params_default(AM_OPT_SGD);
        op.lr = 0.1;
        am_optim *o = am_optim_alloc(&op, dim, &st);
        am_rng r;
        size_t idx[32];
        for (uint64_t step = 0; step < 1000; step++) {
            am_rng_init(&r, 1, 0, AM_STREAM_TEST_FIRST, step);
            for (size_t i = 0; i < 32; i++)
                idx[i] = (size_t)(am_rng_u64(&r) % tr->n);
            am_classset_gather(tr, idx, 32, am_nn_work_x(w), am_nn_work_y(w));
            am_nn_loss_grad(net, w, theta, am_nn_work_x(w), am_nn_work_y(w), 32, g);
            am_optim_step_to(o, theta, g, theta);
        }
        double loss;
        double acc = am_nn_accuracy(net, w, theta, te, 0, te->n, &loss);
        cr_expect(acc >= 0.75 && isfinite(loss),
                  "%s after 1000 SGD steps (lr 0.1, batch 32): "
                  "test accuracy %.4f, loss %.4f",
                  specs[sp], acc, loss);
        am_optim_free(o);
        free(theta);
        free(g);
        am_nn_work_free(w);
        am_nn_free(net);
    }
    am_classset_free(tr);
    am_classset_free(te);
}

/* The link order keeps GSL on its own CBLAS (existing results bit-identical) while the
 * networks' dgemm_ comes from OpenBLAS: both symbols are looked up in the running process. */
Test(nn, blas_symbols_bind_as_documented)
{
    Dl_info info;
    void *ddot = dlsym(RTLD_DEFAULT, "cblas_ddot"), *gemm = dlsym(RTLD_DEFAULT, "dgemm_");
    cr_assert(ddot && gemm, "cblas_ddot %p, dgemm_ %p", ddot, gemm);
    cr_assert(dladdr(ddot, &info) && info.dli_fname);
    cr_expect(strstr(info.dli_fname, "gslcblas") != NULL, "cblas_ddot comes from %s",
              info.dli_fname);
    cr_assert(dladdr(gemm, &info) && info.dli_fname);
    cr_expect(strstr(info.dli_fname, "openblas") != NULL, "dgemm_ comes from %s", info.dli_fname);
}
