/*
 * bench_nn.c -- cost of one training step of a 784-H-10 MLP (ReLU, softmax cross-entropy,
 * float64, one BLAS thread, plain SGD) for (H, B) = (256, 32) and (64, 16): forward and
 * backward on a fixed minibatch (am_nn_loss_grad) and the SGD update written out of place
 * into the other of two parameter vectors (am_optim_step_to), as the staleness ring does.
 * bench/nn_torch.py times PyTorch doing the same step; `make bench-nn` prints both.
 * Output lines: "amsgd mlp H batch B: X us per step" (median of 7 timed blocks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/am_rng.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench(size_t h, size_t b)
{
    char spec[32], err[256];
    snprintf(spec, sizeof spec, "mlp:%zu", h);
    am_status st;
    am_nn *net = am_nn_alloc(spec, 784, 10, &st, err, sizeof err);
    am_nn_work *w = net ? am_nn_work_alloc(net, b, &st) : NULL;
    if (!w) {
        fprintf(stderr, "bench_nn: %s\n", net ? am_strerror(st) : err);
        return 1;
    }
    size_t dim = am_nn_dim(net);
    double *theta[2] = {malloc(dim * sizeof(double)), malloc(dim * sizeof(double))};
    double *g = malloc(dim * sizeof *g), *x = malloc(b * 784 * sizeof *x);
    int *y = malloc(b * sizeof *y);
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    op.lr = 0.01;
    am_optim *o = am_optim_alloc(&op, dim, &st);
    if (!theta[0] || !theta[1] || !g || !x || !y || !o) {
        fprintf(stderr, "bench_nn: out of memory\n");
        return 1;
    }
    am_nn_init(net, 1, 0, theta[0]);
    am_rng r;
    am_rng_init(&r, 1, 0, AM_STREAM_TEST_FIRST, 0);
    for (size_t i = 0; i < b * 784; i++) /* pixel-like inputs in [0, 1] */
        x[i] = (double)(am_rng_u64(&r) % 256) / 255.0;
    for (size_t i = 0; i < b; i++)
        y[i] = (int)(am_rng_u64(&r) % 10);
    size_t cur = 0;
    double loss = 0;
    /* block size for about 0.2 s */
    size_t n = 10;
    for (;;) {
        double t0 = now();
        for (size_t k = 0; k < n; k++) {
            loss = am_nn_loss_grad(net, w, theta[cur], x, y, b, g);
            am_optim_step_to(o, theta[cur], g, theta[1 - cur]);
            cur = 1 - cur;
        }
        if (now() - t0 > 0.2) break;
        n *= 2;
    }
    double per[7];
    for (int rep = 0; rep < 7; rep++) {
        double t0 = now();
        for (size_t k = 0; k < n; k++) {
            loss = am_nn_loss_grad(net, w, theta[cur], x, y, b, g);
            am_optim_step_to(o, theta[cur], g, theta[1 - cur]);
            cur = 1 - cur;
        }
        per[rep] = (now() - t0) / (double)n * 1e6;
    }
    qsort(per, 7, sizeof per[0], cmp);
    printf("amsgd mlp %zu batch %zu: %.2f us per step\n", h, b, per[3]);
    fprintf(stderr,
            "bench_nn: mlp %zu batch %zu: %zu parameters, %zu steps per block, "
            "final loss %.4f, blocks %.2f..%.2f us\n",
            h, b, dim, n, loss, per[0], per[6]);
    am_optim_free(o);
    free(theta[0]);
    free(theta[1]);
    free(g);
    free(x);
    free(y);
    am_nn_work_free(w);
    am_nn_free(net);
    return 0;
}

int main(void)
{
    am_nn_blas_single_thread();
    return bench(256, 32) || bench(64, 16);
}
