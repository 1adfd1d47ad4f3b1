/*
 * test_nntrain.c -- the one network training engine (models/am_nntrain.h) and the parallel
 * jobs under it (core/am_ensemble.h): the lowest failing job decides whatever the threads, the
 * stale step with given staleness against a direct computation of its definition (and a wrong
 * staleness told apart), the failure rule, and the refusals (memory, batch, optimiser, data).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_ensemble.h"
#include "../core/am_rng.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../models/am_nntrain.h"
#include "../montecarlo/am_optim.h"
#include "test_util.h"

/* Jobs 2 and 5 of 12 fail with different statuses; every job records that it ran. */
static am_status failing_job(void *ctx, size_t q, char *err, size_t errlen)
{
    int *ran = ctx;
    ran[q]++;
    if (q == 5) {
        snprintf(err, errlen, "job five");
        return AM_EINVAL;
    }
    if (q == 2) {
        snprintf(err, errlen, "job two");
        return AM_ENOMEM;
    }
    return AM_OK;
}

Test(nntrain, lowest_failing_job_decides)
{
    for (int threads = 1; threads <= 4; threads++) {
        int ran[12] = {0};
        char err[64];
        am_status st = am_ensemble_jobs(12, threads, failing_job, ran, err, sizeof err);
        cr_expect_eq(st, AM_ENOMEM, "threads %d: status %d, not job 2's", threads, (int)st);
        cr_expect_str_eq(err, "job two", "threads %d", threads);
        for (size_t q = 0; q < 12; q++)
            cr_expect_eq(ran[q], 1, "threads %d: job %zu ran %d times", threads, q, ran[q]);
    }
    int ran[3] = {0};
    char err[8] = "x";
    cr_expect_eq(am_ensemble_jobs(2, 2, failing_job, ran, err, sizeof err), AM_OK);
    cr_expect_str_eq(err, "", "a run without failure leaves no message");
}

typedef struct {
    am_classset *tr, *te;
    am_nn *net;
} fixture;

static void open_net(fixture *f, const char *spec)
{
    am_nn_blas_single_thread();
    test_open_fixture(&f->tr, &f->te);
    char err[256];
    am_status st;
    f->net = am_nn_alloc(spec, f->tr->d, f->tr->classes, &st, err, sizeof err);
    cr_assert_not_null(f->net, "%s", err);
}

static void close_net(fixture *f)
{
    am_nn_free(f->net);
    am_classset_free(f->tr);
    am_classset_free(f->te);
}

/* Step k of plain SGD from n gradients at the given stale iterates of `hist` (iterate j at
 * hist + j dim), written from the definition: counter k of the stream, per gradient one word
 * skipped then B rows word mod n; the mean of the gradients; x_{k+1} = x_k - lr mean. */
static void direct_step(const fixture *f, const double *hist, uint64_t k, size_t n,
                        const uint64_t *stale, size_t B, double lr, uint64_t seed, double *out)
{
    const size_t dim = am_nn_dim(f->net);
    double *g = malloc(dim * sizeof *g), *mean = calloc(dim, sizeof *mean);
    size_t *idx = malloc(B * sizeof *idx);
    am_status st;
    am_nn_work *w = am_nn_work_alloc(f->net, B, &st);
    am_rng r;
    am_rng_init(&r, seed, 3, AM_STREAM_NNSTALE, k);
    for (size_t l = 0; l < n; l++) {
        (void)am_rng_u64(&r);
        for (size_t i = 0; i < B; i++)
            idx[i] = (size_t)(am_rng_u64(&r) % f->tr->n);
        am_classset_gather(f->tr, idx, B, am_nn_work_x(w), am_nn_work_y(w));
        am_nn_loss_grad(f->net, w, hist + (k - stale[l]) * dim, am_nn_work_x(w), am_nn_work_y(w), B,
                        g);
        for (size_t i = 0; i < dim; i++)
            mean[i] += g[i];
    }
    for (size_t i = 0; i < dim; i++)
        out[i] = hist[k * dim + i] - lr * (mean[i] * (1.0 / (double)n));
    am_nn_work_free(w);
    free(idx);
    free(g);
    free(mean);
}

/* The averaged stale step of iterate k = 4 from three gradients at staleness 0, 2 and 4, with
 * the ring holding iterates 0..4 (distinct random starts), against direct_step; staleness
 * 0, 1, 4 must give another result. */
Test(nntrain, averaged_stale_step_matches_definition)
{
    fixture f;
    open_net(&f, "mlp:4");
    const size_t dim = am_nn_dim(f.net), B = 3;
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    op.lr = 0.05;
    am_nntrain t;
    cr_assert_eq(am_nntrain_alloc(&t, f.net, f.tr, f.te, &op, B, 0, 6, 1), AM_OK);
    double *hist = malloc(5 * dim * sizeof *hist), *want = malloc(dim * sizeof *want);
    for (uint64_t j = 0; j < 5; j++) {
        am_nn_init(f.net, 9, 100 + j, hist + j * dim);
        memcpy(am_nntrain_slot(&t, j), hist + j * dim, dim * sizeof *hist);
    }
    const uint64_t stale[3] = {0, 2, 4}, wrong[3] = {0, 1, 4};
    am_rng r;
    am_rng_init(&r, 9, 3, AM_STREAM_NNSTALE, 0);
    cr_assert_eq(am_nntrain_stale_step(&t, &r, 4, 3, stale, 0, AM_NNTRAIN_AVERAGED), 0);
    const double *got = am_nntrain_slot(&t, 5);
    direct_step(&f, hist, 4, 3, stale, B, op.lr, 9, want);
    double worst = 0;
    for (size_t i = 0; i < dim; i++) {
        double rel = fabs(got[i] - want[i]) / fmax(fabs(want[i]), 1e-300);
        if (rel > worst) worst = rel;
    }
    /* the engine sums then scales as the definition does; only the step's rounding differs */
    cr_expect(worst <= 4 * 2.3e-16, "averaged step: relative error %.3g against the definition",
              worst);
    direct_step(&f, hist, 4, 3, wrong, B, op.lr, 9, want);
    double apart = 0;
    for (size_t i = 0; i < dim; i++)
        apart = fmax(apart, fabs(got[i] - want[i]) / fmax(fabs(want[i]), 1e-300));
    cr_expect(apart > 1e-6, "a wrong staleness gives the same step (%.3g)", apart);
    /* the ring's other slots are untouched */
    cr_expect(memcmp(am_nntrain_slot(&t, 4), hist + 4 * dim, dim * sizeof *hist) == 0);
    free(hist);
    free(want);
    am_nntrain_free(&t);
    close_net(&f);
}

/* A lone gradient is applied as it is: sequential and averaged give the same bytes. */
Test(nntrain, one_gradient_same_either_way)
{
    fixture f;
    open_net(&f, "mlr");
    const size_t dim = am_nn_dim(f.net);
    am_optim_params op = am_optim_params_default(AM_OPT_ADAM);
    double *out[2];
    for (int how = 0; how < 2; how++) {
        am_nntrain t;
        cr_assert_eq(am_nntrain_alloc(&t, f.net, f.tr, f.te, &op, 4, 0, 3, 1), AM_OK);
        am_nn_init(f.net, 2, 0, am_nntrain_slot(&t, 7));
        am_rng r;
        am_rng_init(&r, 2, 0, AM_STREAM_NNSTALE, 0);
        cr_assert_eq(am_nntrain_stale_step(&t, &r, 7, 1, NULL, 0, (am_nntrain_combine)how), 0);
        out[how] = malloc(dim * sizeof *out[how]);
        memcpy(out[how], am_nntrain_slot(&t, 8), dim * sizeof *out[how]);
        am_nntrain_free(&t);
    }
    cr_expect(memcmp(out[0], out[1], dim * sizeof *out[0]) == 0);
    free(out[0]);
    free(out[1]);
    close_net(&f);
}

/* The failure rule: a non-finite iterate read by a gradient ends the step as diverged; and
 * the refusals. */
Test(nntrain, failure_rule_and_refusals)
{
    fixture f;
    open_net(&f, "mlp:3");
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    am_nntrain t;
    cr_assert_eq(am_nntrain_alloc(&t, f.net, f.tr, f.te, &op, 2, 0, 2, 0), AM_OK);
    am_nn_init(f.net, 1, 0, am_nntrain_slot(&t, 0));
    am_rng r;
    am_rng_init(&r, 1, 0, AM_STREAM_NNSTALE, 0);
    cr_expect_eq(am_nntrain_stale_step(&t, &r, 0, 2, NULL, 0, AM_NNTRAIN_SEQUENTIAL), 0);
    cr_expect(am_nntrain_finite(am_nntrain_slot(&t, 1), t.dim));
    am_nntrain_slot(&t, 1)[t.dim - 1] = NAN; /* an output bias: no ReLU masks it */
    cr_expect(!am_nntrain_finite(am_nntrain_slot(&t, 1), t.dim));
    cr_expect_eq(am_nntrain_stale_step(&t, &r, 1, 2, NULL, 0, AM_NNTRAIN_SEQUENTIAL), 1,
                 "a NaN weight did not end the step as diverged");
    am_nntrain_free(&t);
    am_nntrain_free(&t); /* a freed state is safe */
    /* memory: the ring is refused above the limit before anything is allocated; a batch of
       none, a bad optimiser and a data set of the wrong width are refused */
    const size_t huge = AM_MEMORY_LIMIT / sizeof(double) / am_nn_dim(f.net) + 1;
    cr_expect_eq(am_nntrain_alloc(&t, f.net, f.tr, f.te, &op, 4, 0, huge, 0), AM_ENOMEM);
    cr_expect_eq(am_nntrain_bytes(f.net, 4, SIZE_MAX / 2, 0), SIZE_MAX);
    cr_expect(am_nntrain_bytes(f.net, 4, 3, 1) < am_nntrain_bytes(f.net, 4, 4, 1));
    cr_expect_eq(am_nntrain_alloc(&t, f.net, f.tr, f.te, &op, 0, 0, 2, 0), AM_EINVAL);
    op.lr = -1;
    cr_expect_eq(am_nntrain_alloc(&t, f.net, f.tr, f.te, &op, 4, 0, 2, 0), AM_EINVAL);
    cr_expect_eq(am_nntrain_fits(f.net, f.tr, f.te), AM_OK);
    size_t d = f.te->d;
    f.te->d = d + 1;
    cr_expect_eq(am_nntrain_fits(f.net, f.tr, f.te), AM_EINVAL);
    f.te->d = d;
    close_net(&f);
}
