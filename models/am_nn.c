/*
 * am_nn.c -- forward pass, softmax cross-entropy and back-propagation of the models of
 * am_nn.h on row-major minibatches, with the GEMMs on OpenBLAS:
 *   forward   Z_l = A_{l-1} W_l^T + 1 b_l^T          (Z_l preset to the bias rows, beta = 1)
 *   backward  dW_l = D_l^T A_{l-1},  T = D_l W_l,  D_{l-1} = T .* [A_{l-1} > 0]
 * D_{l-1} overwrites A_{l-1} once dW_l has used it, so the workspace holds the activations
 * and one scratch matrix. Row sums and the loss are accumulated in row order.
 */
#include "am_nn.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"

/* The Fortran BLAS entry of OpenBLAS (column-major; the hidden string lengths of the
 * Fortran ABI are not read by OpenBLAS's C implementation). */
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
void openblas_set_num_threads(int num_threads);
char *openblas_get_config(void);
char *openblas_get_corename(void);

void am_nn_blas_single_thread(void)
{
    openblas_set_num_threads(1);
}

void am_nn_blas(char *buf, size_t len)
{
    /* openblas_get_config() starts "OpenBLAS 0.3.21 ...": keep the name and the version */
    const char *cfg = openblas_get_config(), *core = openblas_get_corename();
    const char *sp = cfg ? strchr(cfg, ' ') : NULL;
    const char *end = sp ? strchr(sp + 1, ' ') : NULL;
    int n = cfg ? (end ? (int)(end - cfg) : (int)strlen(cfg)) : 0;
    snprintf(buf, len, "%.*s %s", n, cfg ? cfg : "", core ? core : "unknown");
}

int am_nn_blas_core_runs(const char *core)
{
    char here[128];
    am_nn_blas(here, sizeof here);
    const char *h = strrchr(here, ' ');
    if (h && strcmp(h + 1, core) == 0) return 1;
    /* the instruction sets OpenBLAS's x86-64 kernels are written for (a conservative map) */
    static const struct {
        const char *core;
        int simd;
    } need[] = {{"SkylakeX", AM_SIMD_AVX512},
                {"Haswell", AM_SIMD_AVX2},
                {"Zen", AM_SIMD_AVX2},
                {"Sandybridge", AM_SIMD_AVX2},
                {"Prescott", AM_SIMD_PORTABLE}};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (strcmp(need[i].core, core) == 0) return AM_X86 && am_common_simd_best() >= need[i].simd;
    return 0;
}

/* Row-major C (m x n) = alpha op(A) op(B) + beta C, op(A) m x k, with cblas_dgemm's meaning
 * of the arguments: the column-major call computes C^T = op(B)^T op(A)^T. */
static void gemm_rm(int ta, int tb, size_t m, size_t n, size_t k, double alpha, const double *a,
                    size_t lda, const double *b, size_t ldb, double beta, double *c, size_t ldc)
{
    const char tra = ta ? 'T' : 'N', trb = tb ? 'T' : 'N';
    const int im = (int)m, in = (int)n, ik = (int)k, ila = (int)lda, ilb = (int)ldb, ilc = (int)ldc;
    dgemm_(&trb, &tra, &in, &im, &ik, &alpha, b, &ilb, a, &ila, &beta, c, &ilc);
}

/* One convolution stage of a cnn: 5 x 5 valid convolution, ReLU, 2 x 2 max-pooling, on
 * images stored channel-last (NHWC: row-major over (image, y, x), channels innermost). */
typedef struct {
    size_t cin, cout; /* channels */
    size_t h, w;      /* input size */
    size_t oh, ow;    /* convolution output: h - 4, w - 4 */
    size_t ph, pw;    /* pooled: oh / 2, ow / 2 */
    size_t off;       /* its W (cout x 25 cin, row-major over (dy, dx, c)) then b (cout) */
} conv_stage;

struct am_nn {
    size_t din;   /* inputs (pixels for a cnn) */
    size_t nconv; /* 0, or 2 for a cnn */
    conv_stage conv[2];
    size_t layers;                   /* L fully connected layers */
    size_t n[AM_NN_MAX_DEPTH + 2];   /* n_0..n_L (n_0: flattened feature map of a cnn) */
    size_t off[AM_NN_MAX_DEPTH + 2]; /* off[l]: W_l in theta (l = 1..L) */
    size_t dim;                      /* parameters */
    size_t maxw;                     /* widest of n_1..n_{L-1} and n_0 (scratch T) */
    char spec[16 + 8 * AM_NN_MAX_DEPTH];
};

struct am_nn_work {
    size_t batch;
    double *act[AM_NN_MAX_DEPTH + 2]; /* act[l]: A_l (batch x n_l), l = 0..L; act[L] = logits;
                                         act[0] is used by a cnn (its flattened feature map) */
    double *cols[2];                  /* cnn: im2col matrices (batch oh ow x 25 cin) */
    double *z[2];                     /* cnn: convolution outputs after ReLU (batch oh ow x cout) */
    double *dz[2];                    /* cnn: their gradients */
    double *pool1;                    /* cnn: pooled output of stage 1 (batch ph pw x c1) */
    size_t *arg[2];                   /* cnn: index into z of each pooled maximum */
    double *tmp;                      /* batch x maxw */
    double *x;                        /* batch x din input scratch */
    int *y;                           /* batch labels scratch */
    double *g;                        /* dim: gradient scratch of am_nn_set_grad */
    double *block;                    /* the one allocation */
    size_t *iblock;                   /* the argmax indices */
};

void am_nn_free(am_nn *net)
{
    free(net);
}

size_t am_nn_dim(const am_nn *net)
{
    return net->dim;
}

size_t am_nn_inputs(const am_nn *net)
{
    return net->din;
}

size_t am_nn_layers(const am_nn *net)
{
    return net->layers;
}

size_t am_nn_width(const am_nn *net, size_t l)
{
    return l <= net->layers ? net->n[l] : 0;
}

const char *am_nn_spec(const am_nn *net)
{
    return net->spec;
}

size_t am_nn_offset(const am_nn *net, size_t l)
{
    return net->off[l];
}

static am_nn *fail(am_status *status, am_status st)
{
    if (status) *status = st;
    return NULL;
}

/* Parses "W1,W2,..." (at least min entries) into widths; AM_OK or AM_EINVAL with err. */
static am_status parse_widths(const char *spec, const char *p, size_t min, size_t *widths,
                              size_t *depth, char *err, size_t errlen)
{
    *depth = 0;
    for (;;) {
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen,
                     "'%s': needs comma-separated widths, e.g. mlp:256,128 or cnn:6,16,120,84",
                     spec);
            return AM_EINVAL;
        }
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (v < 1 || v > AM_NN_MAX_WIDTH) {
            snprintf(err, errlen, "'%s': hidden widths must be in 1..%d", spec, AM_NN_MAX_WIDTH);
            return AM_EINVAL;
        }
        if (*depth == AM_NN_MAX_DEPTH + 2) {
            snprintf(err, errlen, "'%s': more than %d hidden layers", spec, AM_NN_MAX_DEPTH);
            return AM_EINVAL;
        }
        widths[(*depth)++] = (size_t)v;
        if (*end == 0) break;
        if (*end != ',') {
            snprintf(err, errlen, "'%s': unexpected '%c' in the widths", spec, *end);
            return AM_EINVAL;
        }
        p = end + 1;
    }
    if (*depth < min) {
        snprintf(err, errlen, "'%s': needs at least %zu widths", spec, min);
        return AM_EINVAL;
    }
    return AM_OK;
}

static am_nn *build(const char *spec, size_t d, size_t rows, size_t cols, size_t classes,
                    am_status *status, char *err, size_t errlen);

am_nn *am_nn_alloc(const char *spec, size_t d, size_t classes, am_status *status, char *err,
                   size_t errlen)
{
    return build(spec, d, 0, 0, classes, status, err, errlen);
}

am_nn *am_nn_alloc_image(const char *spec, size_t rows, size_t cols, size_t classes,
                         am_status *status, char *err, size_t errlen)
{
    if (rows == 0 || cols == 0 || rows > AM_NN_MAX_WIDTH || cols > AM_NN_MAX_WIDTH) {
        snprintf(err, errlen, "an image model needs 1..%d rows and columns, got %zu x %zu",
                 AM_NN_MAX_WIDTH, rows, cols);
        return fail(status, AM_EINVAL);
    }
    return build(spec, rows * cols, rows, cols, classes, status, err, errlen);
}

static am_nn *build(const char *spec, size_t d, size_t rows, size_t cols, size_t classes,
                    am_status *status, char *err, size_t errlen)
{
    size_t widths[AM_NN_MAX_DEPTH + 2];
    size_t depth = 0, nconv = 0, chan[2] = {0, 0};
    if (d < 1 || d > (size_t)AM_NN_MAX_WIDTH * 64 || classes < 2 || classes > AM_NN_MAX_WIDTH) {
        snprintf(err, errlen,
                 "a model needs d >= 1 inputs and 2..%d classes, got d %zu, %zu "
                 "classes",
                 AM_NN_MAX_WIDTH, d, classes);
        return fail(status, AM_EINVAL);
    }
    if (strcmp(spec, "mlr") == 0) {
        depth = 0;
    } else if (strncmp(spec, "mlp:", 4) == 0) {
        if (parse_widths(spec, spec + 4, 1, widths, &depth, err, errlen))
            return fail(status, AM_EINVAL);
        if (depth > AM_NN_MAX_DEPTH) {
            snprintf(err, errlen, "'%s': more than %d hidden layers", spec, AM_NN_MAX_DEPTH);
            return fail(status, AM_EINVAL);
        }
    } else if (strcmp(spec, "cnn") == 0 || strncmp(spec, "cnn:", 4) == 0) {
        if (parse_widths(spec, spec[3] ? spec + 4 : "6,16,120,84", 2, widths, &depth, err, errlen))
            return fail(status, AM_EINVAL);
        if (rows == 0) {
            snprintf(err, errlen,
                     "'%s' needs image data (rows x columns), e.g. --data "
                     "fashion-mnist or idx:DIR",
                     spec);
            return fail(status, AM_EINVAL);
        }
        if (rows < 16 || cols < 16) {
            snprintf(err, errlen, "'%s' needs images of at least 16 x 16 pixels, got %zu x %zu",
                     spec, rows, cols);
            return fail(status, AM_EINVAL);
        }
        if (depth - 2 > AM_NN_MAX_DEPTH) {
            snprintf(err, errlen, "'%s': more than %d hidden layers", spec, AM_NN_MAX_DEPTH);
            return fail(status, AM_EINVAL);
        }
        nconv = 2;
        chan[0] = widths[0];
        chan[1] = widths[1];
        depth -= 2;
        memmove(widths, widths + 2, depth * sizeof *widths);
    } else {
        snprintf(err, errlen,
                 "unknown model '%s' (mlr, mlp:W1,W2,... e.g. mlp:256,128, cnn, "
                 "cnn:C1,C2,F1,...)",
                 spec);
        return fail(status, AM_EINVAL);
    }
    am_nn *net = calloc(1, sizeof *net);
    if (!net) return fail(status, AM_ENOMEM);
    size_t dim = 0;
    net->din = d;
    net->nconv = nconv;
    size_t ih = rows, iw = cols, cin = 1;
    for (size_t c = 0; c < nconv; c++) {
        conv_stage *cs = &net->conv[c];
        cs->cin = cin;
        cs->cout = chan[c];
        cs->h = ih;
        cs->w = iw;
        cs->oh = ih - 4;
        cs->ow = iw - 4;
        cs->ph = cs->oh / 2;
        cs->pw = cs->ow / 2;
        cs->off = dim;
        dim += cs->cout * 25 * cs->cin + cs->cout;
        ih = cs->ph;
        iw = cs->pw;
        cin = cs->cout;
    }
    if (nconv) d = ih * iw * cin;
    net->layers = depth + 1;
    net->n[0] = d;
    for (size_t l = 0; l < depth; l++)
        net->n[l + 1] = widths[l];
    net->n[net->layers] = classes;
    net->maxw = d;
    for (size_t l = 1; l <= net->layers; l++) {
        net->off[l] = dim;
        size_t w = net->n[l] * net->n[l - 1] + net->n[l]; /* widths <= 2^22: no overflow */
        if (dim > AM_MEMORY_LIMIT / sizeof(double) - w) {
            snprintf(err, errlen, "'%s': too many parameters", spec);
            free(net);
            return fail(status, AM_ENOMEM);
        }
        dim += w;
        if (l < net->layers && net->n[l] > net->maxw) net->maxw = net->n[l];
    }
    net->dim = dim;
    if (nconv) {
        size_t at = (size_t)snprintf(net->spec, sizeof net->spec, "cnn:%zu,%zu", chan[0], chan[1]);
        for (size_t l = 0; l < depth; l++)
            at += (size_t)snprintf(net->spec + at, sizeof net->spec - at, ",%zu", widths[l]);
    } else if (depth == 0) {
        snprintf(net->spec, sizeof net->spec, "mlr");
    } else {
        size_t at = (size_t)snprintf(net->spec, sizeof net->spec, "mlp:");
        for (size_t l = 0; l < depth; l++)
            at += (size_t)snprintf(net->spec + at, sizeof net->spec - at, "%s%zu", l ? "," : "",
                                   widths[l]);
    }
    if (status) *status = AM_OK;
    return net;
}

/* Pooled outputs per image of a cnn (their argmax indices are kept for the backward pass). */
static size_t pooled(const am_nn *net)
{
    size_t n = 0;
    for (size_t c = 0; c < net->nconv; c++)
        n += net->conv[c].ph * net->conv[c].pw * net->conv[c].cout;
    return n;
}

/* Doubles of the workspace for a batch (SIZE_MAX if it overflows). */
static size_t work_doubles(const am_nn *net, size_t batch)
{
    size_t per_row = net->maxw + net->din;
    for (size_t l = 0; l <= net->layers; l++)
        per_row += net->n[l];
    for (size_t c = 0; c < net->nconv; c++) {
        const conv_stage *cs = &net->conv[c];
        per_row += cs->oh * cs->ow * (25 * cs->cin + 2 * cs->cout);
    }
    if (net->nconv) per_row += net->conv[0].ph * net->conv[0].pw * net->conv[0].cout;
    if (batch > (SIZE_MAX / sizeof(double) - net->dim) / (per_row + 1)) return SIZE_MAX;
    return batch * per_row + net->dim;
}

size_t am_nn_work_bytes(const am_nn *net, size_t batch)
{
    size_t nd = work_doubles(net, batch);
    if (nd == SIZE_MAX) return SIZE_MAX;
    return nd * sizeof(double) + batch * sizeof(int) + sizeof(am_nn_work) +
           (pooled(net) * batch + 1) * sizeof(size_t);
}

am_nn_work *am_nn_work_alloc(const am_nn *net, size_t batch, am_status *status)
{
    size_t widest = net->maxw + net->n[net->layers];
    if (net->nconv) widest += net->conv[0].oh * net->conv[0].ow; /* rows of the im2col GEMM */
    if (batch < 1 || batch > INT_MAX / widest) {
        if (status) *status = AM_EINVAL;
        return NULL;
    }
    size_t bytes = am_nn_work_bytes(net, batch);
    if (bytes > AM_MEMORY_LIMIT) {
        if (status) *status = AM_ENOMEM;
        return NULL;
    }
    am_nn_work *w = calloc(1, sizeof *w);
    if (w) {
        w->block = malloc(work_doubles(net, batch) * sizeof(double));
        w->y = malloc(batch * sizeof *w->y);
        w->iblock = malloc((pooled(net) * batch + 1) * sizeof *w->iblock);
    }
    if (!w || !w->block || !w->y || !w->iblock) {
        am_nn_work_free(w);
        if (status) *status = AM_ENOMEM;
        return NULL;
    }
    w->batch = batch;
    double *p = w->block;
    for (size_t l = 0; l <= net->layers; l++) {
        w->act[l] = p;
        p += batch * net->n[l];
    }
    w->tmp = p;
    p += batch * net->maxw;
    w->x = p;
    p += batch * net->din;
    size_t *ip = w->iblock;
    for (size_t c = 0; c < net->nconv; c++) {
        const conv_stage *cs = &net->conv[c];
        size_t rows = batch * cs->oh * cs->ow;
        w->cols[c] = p;
        p += rows * 25 * cs->cin;
        w->z[c] = p;
        p += rows * cs->cout;
        w->dz[c] = p;
        p += rows * cs->cout;
        w->arg[c] = ip;
        ip += batch * cs->ph * cs->pw * cs->cout;
    }
    if (net->nconv) {
        w->pool1 = p;
        p += batch * net->conv[0].ph * net->conv[0].pw * net->conv[0].cout;
    }
    w->g = p;
    if (status) *status = AM_OK;
    return w;
}

void am_nn_work_free(am_nn_work *w)
{
    if (!w) return;
    free(w->block);
    free(w->y);
    free(w->iblock);
    free(w);
}

double *am_nn_work_x(am_nn_work *w)
{
    return w->x;
}

int *am_nn_work_y(am_nn_work *w)
{
    return w->y;
}

void am_nn_init(const am_nn *net, uint64_t seed, uint64_t replica, double *theta)
{
    am_rng r;
    am_rng_init(&r, seed, replica, AM_STREAM_INIT, 0);
    for (size_t c = 0; c < net->nconv; c++) {
        const conv_stage *cs = &net->conv[c];
        double *wc = theta + cs->off;
        size_t nw = cs->cout * 25 * cs->cin;
        am_rng_fill_gaussian(&r, wc, nw);
        double sd = sqrt(2.0 / (double)(25 * cs->cin));
        for (size_t i = 0; i < nw; i++)
            wc[i] *= sd;
        memset(wc + nw, 0, cs->cout * sizeof *wc);
    }
    for (size_t l = 1; l <= net->layers; l++) {
        double *wl = theta + net->off[l];
        size_t nw = net->n[l] * net->n[l - 1];
        am_rng_fill_gaussian(&r, wl, nw);
        double sd = sqrt((l < net->layers ? 2.0 : 1.0) / (double)net->n[l - 1]);
        for (size_t i = 0; i < nw; i++)
            wl[i] *= sd;
        memset(wl + nw, 0, net->n[l] * sizeof *wl);
    }
}

/* Stage forward: im2col of in (m x h x w x cin), z = relu(cols W^T + b), 2 x 2 max-pool into
 * out (m x ph x pw x cout) with the index into z of each maximum in arg (first on ties). */
static void conv_forward(const conv_stage *cs, const double *theta, const double *in, size_t m,
                         double *cols, double *z, double *out, size_t *arg)
{
    const size_t k = 25 * cs->cin, rows = m * cs->oh * cs->ow, co = cs->cout;
    for (size_t n = 0; n < m; n++)
        for (size_t y = 0; y < cs->oh; y++)
            for (size_t x = 0; x < cs->ow; x++) {
                double *row = cols + ((n * cs->oh + y) * cs->ow + x) * k;
                for (size_t dy = 0; dy < 5; dy++) {
                    const double *src = in + ((n * cs->h + y + dy) * cs->w + x) * cs->cin;
                    memcpy(row + dy * 5 * cs->cin, src, 5 * cs->cin * sizeof *row);
                }
            }
    const double *wc = theta + cs->off, *bc = wc + co * k;
    for (size_t r = 0; r < rows; r++)
        memcpy(z + r * co, bc, co * sizeof *z);
    gemm_rm(0, 1, rows, co, k, 1.0, cols, k, wc, k, 1.0, z, co);
    for (size_t i = 0; i < rows * co; i++)
        z[i] = z[i] > 0 ? z[i] : 0.0;
    for (size_t n = 0; n < m; n++)
        for (size_t y = 0; y < cs->ph; y++)
            for (size_t x = 0; x < cs->pw; x++)
                for (size_t c = 0; c < co; c++) {
                    size_t best = ((n * cs->oh + 2 * y) * cs->ow + 2 * x) * co + c;
                    const size_t cand[3] = {best + co, best + cs->ow * co, best + cs->ow * co + co};
                    for (int t = 0; t < 3; t++)
                        if (z[cand[t]] > z[best]) best = cand[t];
                    size_t o = ((n * cs->ph + y) * cs->pw + x) * co + c;
                    out[o] = z[best];
                    arg[o] = best;
                }
}

/* Stage backward from dout (gradient at the pooled output): dz, then dW and db into grad,
 * then the gradient at the stage's input into din unless it is NULL (overwrites cols). */
static void conv_backward(const conv_stage *cs, const double *theta, size_t m, const double *dout,
                          const size_t *arg, const double *z, double *dz, double *cols,
                          double *grad, double *din)
{
    const size_t k = 25 * cs->cin, rows = m * cs->oh * cs->ow, co = cs->cout;
    const size_t npool = m * cs->ph * cs->pw * co;
    memset(dz, 0, rows * co * sizeof *dz);
    for (size_t o = 0; o < npool; o++)
        if (z[arg[o]] > 0) dz[arg[o]] = dout[o];
    double *gw = grad + cs->off, *gb = gw + co * k;
    gemm_rm(1, 0, co, k, rows, 1.0, dz, co, cols, k, 0.0, gw, k);
    memcpy(gb, dz, co * sizeof *gb);
    for (size_t r = 1; r < rows; r++)
        for (size_t c = 0; c < co; c++)
            gb[c] += dz[r * co + c];
    if (!din) return;
    gemm_rm(0, 0, rows, k, co, 1.0, dz, co, theta + cs->off, k, 0.0, cols, k);
    memset(din, 0, m * cs->h * cs->w * cs->cin * sizeof *din);
    for (size_t n = 0; n < m; n++)
        for (size_t y = 0; y < cs->oh; y++)
            for (size_t x = 0; x < cs->ow; x++) {
                const double *row = cols + ((n * cs->oh + y) * cs->ow + x) * k;
                for (size_t dy = 0; dy < 5; dy++) {
                    double *dst = din + ((n * cs->h + y + dy) * cs->w + x) * cs->cin;
                    const double *src = row + dy * 5 * cs->cin;
                    for (size_t j = 0; j < 5 * cs->cin; j++)
                        dst[j] += src[j];
                }
            }
}

/* Forward pass of m rows into w->act; returns nothing, the logits are act[L]. */
static void forward(const am_nn *net, am_nn_work *w, const double *theta, const double *x, size_t m)
{
    const double *in = x;
    if (net->nconv) {
        conv_forward(&net->conv[0], theta, x, m, w->cols[0], w->z[0], w->pool1, w->arg[0]);
        conv_forward(&net->conv[1], theta, w->pool1, m, w->cols[1], w->z[1], w->act[0], w->arg[1]);
        in = w->act[0];
    }
    for (size_t l = 1; l <= net->layers; l++) {
        size_t no = net->n[l], ni = net->n[l - 1];
        const double *wl = theta + net->off[l], *bl = wl + no * ni;
        double *z = w->act[l];
        for (size_t i = 0; i < m; i++)
            memcpy(z + i * no, bl, no * sizeof *z);
        gemm_rm(0, 1, m, no, ni, 1.0, in, ni, wl, ni, 1.0, z, no);
        if (l < net->layers)
            for (size_t i = 0; i < m * no; i++)
                z[i] = z[i] > 0 ? z[i] : 0.0;
        in = z;
    }
}

/* Cross-entropy of one row of logits z (K entries) with label y; if p is not NULL writes
 * (softmax(z) - onehot(y)) * scale into p (p may be z). */
static double xent_row(const double *z, size_t k, int y, double *p, double scale)
{
    double mx = z[0];
    for (size_t j = 1; j < k; j++)
        if (z[j] > mx) mx = z[j];
    double sum = exp(z[0] - mx); /* >= 1: the largest logit contributes e^0 */
    for (size_t j = 1; j < k; j++)
        sum += exp(z[j] - mx);
    double lse = mx + log(sum);
    double loss = lse - z[y];
    if (p) {
        for (size_t j = 0; j < k; j++)
            p[j] = exp(z[j] - lse) * scale;
        p[y] -= scale;
    }
    return loss;
}

double am_nn_loss_grad(const am_nn *net, am_nn_work *w, const double *theta, const double *x,
                       const int *y, size_t m, double *grad)
{
    const size_t L = net->layers, k = net->n[L];
    forward(net, w, theta, x, m);
    double *z = w->act[L];
    double loss = 0;
    const double inv = 1.0 / (double)m;
    for (size_t i = 0; i < m; i++)
        loss += xent_row(z + i * k, k, y[i], grad ? z + i * k : NULL, inv);
    loss *= inv;
    if (!grad) return loss;
    /* act[L] now holds D_L */
    for (size_t l = L; l >= 1; l--) {
        size_t no = net->n[l], ni = net->n[l - 1];
        const double *wl = theta + net->off[l];
        double *gw = grad + net->off[l], *gb = gw + no * ni;
        const double *dl = w->act[l];
        const double *prev = l > 1 || net->nconv ? w->act[l - 1] : x;
        gemm_rm(1, 0, no, ni, m, 1.0, dl, no, prev, ni, 0.0, gw, ni);
        memcpy(gb, dl, no * sizeof *gb);
        for (size_t i = 1; i < m; i++) {
            const double *row = dl + i * no;
            for (size_t j = 0; j < no; j++)
                gb[j] += row[j];
        }
        if (l == 1) {
            if (!net->nconv) break;
            /* the gradient at the flattened feature map, then the two convolution stages */
            gemm_rm(0, 0, m, ni, no, 1.0, dl, no, wl, ni, 0.0, w->tmp, ni);
            conv_backward(&net->conv[1], theta, m, w->tmp, w->arg[1], w->z[1], w->dz[1], w->cols[1],
                          grad, w->pool1);
            conv_backward(&net->conv[0], theta, m, w->pool1, w->arg[0], w->z[0], w->dz[0],
                          w->cols[0], grad, NULL);
            break;
        }
        gemm_rm(0, 0, m, ni, no, 1.0, dl, no, wl, ni, 0.0, w->tmp, ni);
        double *a = w->act[l - 1];
        for (size_t i = 0; i < m * ni; i++)
            a[i] = a[i] > 0 ? w->tmp[i] : 0.0;
    }
    return loss;
}

size_t am_nn_correct(const am_nn *net, am_nn_work *w, const double *theta, const double *x,
                     const int *y, size_t m, double *loss)
{
    const size_t L = net->layers, k = net->n[L];
    forward(net, w, theta, x, m);
    const double *z = w->act[L];
    size_t good = 0;
    double sum = 0;
    for (size_t i = 0; i < m; i++) {
        const double *row = z + i * k;
        size_t best = 0;
        for (size_t j = 1; j < k; j++)
            if (row[j] > row[best]) best = j;
        good += (int)best == y[i];
        if (loss) sum += xent_row(row, k, y[i], NULL, 0);
    }
    if (loss) *loss = sum / (double)m;
    return good;
}

double am_nn_accuracy(const am_nn *net, am_nn_work *w, const double *theta, const am_classset *set,
                      size_t first, size_t n, double *loss)
{
    size_t good = 0;
    double sum = 0;
    for (size_t at = first; at < first + n; at += w->batch) {
        size_t m = first + n - at < w->batch ? first + n - at : w->batch;
        am_classset_rows(set, at, m, w->x, w->y);
        double l;
        good += am_nn_correct(net, w, theta, w->x, w->y, m, loss ? &l : NULL);
        if (loss) sum += l * (double)m;
    }
    if (loss) *loss = sum / (double)n;
    return (double)good / (double)n;
}

double am_nn_set_grad(const am_nn *net, am_nn_work *w, const double *theta, const am_classset *set,
                      size_t first, size_t n, double *grad)
{
    double sum = 0;
    memset(grad, 0, net->dim * sizeof *grad);
    for (size_t at = first; at < first + n; at += w->batch) {
        size_t m = first + n - at < w->batch ? first + n - at : w->batch;
        am_classset_rows(set, at, m, w->x, w->y);
        double l = am_nn_loss_grad(net, w, theta, w->x, w->y, m, w->g);
        double c = (double)m / (double)n;
        for (size_t i = 0; i < net->dim; i++)
            grad[i] += c * w->g[i];
        sum += l * (double)m;
    }
    return sum / (double)n;
}
