/*
 * test_stale.c -- optimiser steps against hand computations, the CSV loader on good and bad
 * files, the objectives' gradients against finite differences and optima, and the
 * simulated-staleness runs (montecarlo/am_optim.h, am_dataset.h, am_stale.h).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#include "../montecarlo/am_dataset.h"
#include "../montecarlo/am_optim.h"
#include "../montecarlo/am_stale.h"

/* Two steps from x = (1, 1) with g1 = (1, -2), g2 = (0.5, 1), lr 0.1. Hand values:
 * sgd (0.85, 1.1); momentum mu 0.5: v1 = g1, x = (0.9, 1.2), v2 = (1, 0), x = (0.8, 1.2);
 * nesterov mu 0.5: x = 1 - 0.1 (g1 + 0.5 g1) = (0.85, 1.3), v2 = (1, 0),
 * x -= 0.1 ((0.5, 1) + (0.5, 0)) -> (0.75, 1.2); adagrad: s1 = (1, 4), x = (0.9, 1.1),
 * s2 = (1.25, 5), x -= 0.1 (0.5/sqrt(1.25), 1/sqrt(5)) = (0.8552786404, 1.0552786402);
 * adam (beta 0.9, 0.999, eps 1e-8) and rmsprop (rho 0.9) evaluated independently to 15
 * digits: adam (0.806782038298161, 1.12663370329757), rmsprop (0.536330292176091,
 * 1.16878580703585). */
Test(optim, two_steps_by_hand)
{
    const struct {
        am_optim_kind k;
        double x0, x1;
    } cases[] = {
        {AM_OPT_SGD, 0.85, 1.1},
        {AM_OPT_MOMENTUM, 0.8, 1.2},
        {AM_OPT_NESTEROV, 0.75, 1.2},
        {AM_OPT_ADAGRAD, 0.855278641850004, 1.05527864015},
        {AM_OPT_ADAM, 0.806782038298161, 1.12663370329757},
        {AM_OPT_RMSPROP, 0.536330292176091, 1.16878580703585},
    };
    const double g1[2] = {1, -2}, g2[2] = {0.5, 1};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        am_optim_params p = am_optim_params_default(cases[c].k);
        p.lr = 0.1;
        p.mu = 0.5;
        am_status st;
        am_optim *o = am_optim_alloc(&p, 2, &st);
        cr_assert_not_null(o, "%s: alloc %d", am_optim_name(cases[c].k), st);
        for (int rep = 0; rep < 2; rep++) { /* the second pass checks am_optim_reset */
            double x[2] = {1, 1};
            am_optim_step(o, x, g1);
            am_optim_step(o, x, g2);
            cr_assert(fabs(x[0] - cases[c].x0) < 1e-12 && fabs(x[1] - cases[c].x1) < 1e-12,
                      "%s pass %d: (%.15g, %.15g), expected (%.15g, %.15g)",
                      am_optim_name(cases[c].k), rep, x[0], x[1], cases[c].x0, cases[c].x1);
            am_optim_reset(o);
        }
        am_optim_free(o);
    }
    am_optim_params bad = am_optim_params_default(AM_OPT_MOMENTUM);
    bad.mu = 1.0;
    cr_assert_null(am_optim_alloc(&bad, 2, NULL), "mu = 1 accepted");
    bad = am_optim_params_default(AM_OPT_SGD);
    bad.lr = 0;
    cr_assert_null(am_optim_alloc(&bad, 2, NULL), "lr = 0 accepted");
    am_optim_free(NULL);
}

Test(dataset, csv_good)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/amsgd_csv_good_%d.csv", (int)getpid());
    test_write_file(path, "x1,x2,label\n1, 2.5,0\n\n# comment\n-3e-1,4,1\r\n0,0,1");
    am_dataset *ds;
    char err[256] = "";
    cr_assert_eq(am_dataset_read_csv(path, &ds, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(ds->n, 3);
    cr_assert_eq(ds->d, 2);
    const double a[6] = {1, 2.5, -0.3, 4, 0, 0}, y[3] = {0, 1, 1};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(ds->a[i], a[i], "a[%d] = %g", i, ds->a[i]);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ds->y[i], y[i], "y[%d] = %g", i, ds->y[i]);
    am_dataset_free(ds);
    /* no header */
    test_write_file(path, "1,2\n3,4\n");
    cr_assert_eq(am_dataset_read_csv(path, &ds, err, sizeof err), AM_OK, "%s", err);
    cr_assert(ds->n == 2 && ds->d == 1 && ds->a[1] == 3 && ds->y[1] == 4);
    am_dataset_free(ds);
    unlink(path);
}

Test(dataset, csv_bad)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/amsgd_csv_bad_%d.csv", (int)getpid());
    const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "no data rows"},
        {"a,b\n", "no data rows"},
        {"1,2\n3,4,5\n", "line 2 has 3 fields, expected 2"},
        {"1,2\n3,x\n", "line 2, column 2"},
        {"1,2\n3,\n", "line 2, column 2"},
        {"1\n2\n", "line 1 has 1 field"},
        {"1,2\n3,nan\n", "line 2, column 2"},
        {"1,2\n3,1e999\n", "line 2, column 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        test_write_file(path, bad[i].text);
        am_dataset *ds = (am_dataset *)1;
        char err[256] = "";
        cr_assert_eq(am_dataset_read_csv(path, &ds, err, sizeof err), AM_EINVAL,
                     "file %zu accepted", i);
        cr_assert_null(ds);
        cr_assert_not_null(strstr(err, bad[i].msg), "file %zu: message '%s' lacks '%s'", i, err,
                           bad[i].msg);
    }
    unlink(path);
    am_dataset *ds;
    char err[256];
    cr_assert_eq(am_dataset_read_csv("/nonexistent/x.csv", &ds, err, sizeof err), AM_EIO);
    cr_assert_not_null(strstr(err, "cannot open"), "%s", err);
}

/* Gradients against central differences, F* below F at perturbed points with zero gradient. */
Test(stale_objective, gradients_and_optimum)
{
    const am_synth_kind sk[3] = {AM_SYNTH_PCA, AM_SYNTH_LSQ, AM_SYNTH_LOGISTIC};
    const am_objective_kind ok[3] = {AM_OBJ_PCA, AM_OBJ_LSQ, AM_OBJ_LOGISTIC};
    for (int c = 0; c < 3; c++) {
        am_dataset *ds;
        cr_assert_eq(am_dataset_synthetic(sk[c], 300, 5, 7, &ds), AM_OK);
        char err[256];
        am_status st;
        am_objective *f = am_objective_alloc(ok[c], ds, &st, err, sizeof err);
        cr_assert_not_null(f, "%s: %s", am_objective_name(ok[c]), err);
        double x[5] = {0.3, -0.2, 0.5, 0.1, -0.4}, g[5], gs[5] = {0};
        am_objective_loss(f, x, g);
        if (ok[c] != AM_OBJ_PCA)
            for (int i = 0; i < 5; i++) {
                double xp[5], xm[5], h = 1e-6;
                memcpy(xp, x, sizeof x);
                memcpy(xm, x, sizeof x);
                xp[i] += h;
                xm[i] -= h;
                double fd =
                    (am_objective_loss(f, xp, NULL) - am_objective_loss(f, xm, NULL)) / (2 * h);
                cr_assert(fabs(fd - g[i]) < 1e-6 * fmax(1, fabs(g[i])),
                          "%s: dF/dx%d = %.10g, difference quotient %.10g",
                          am_objective_name(ok[c]), i, g[i], fd);
                cr_assert(am_objective_optimum(f) <= am_objective_loss(f, x, NULL),
                          "%s: F* above F(x)", am_objective_name(ok[c]));
            }
        /* the full gradient is the mean of the sample gradients */
        for (size_t r = 0; r < ds->n; r++)
            am_objective_add_sample_grad(f, x, r, gs);
        for (int i = 0; i < 5; i++)
            cr_assert(fabs(gs[i] / (double)ds->n - g[i]) < 1e-12 * fmax(1, fabs(g[i])),
                      "%s: mean sample gradient %d: %.15g vs %.15g", am_objective_name(ok[c]), i,
                      gs[i] / (double)ds->n, g[i]);
        if (ok[c] == AM_OBJ_PCA) {
            /* the start is a unit vector; e_1 (variance 4, next 3.25) is near the top
             * eigenvector of the sample covariance */
            double u[5], gu[5], x0[5];
            am_objective_start(f, 1, 0, x0);
            double nn = 0;
            for (int i = 0; i < 5; i++)
                nn += x0[i] * x0[i];
            cr_assert(fabs(nn - 1) < 1e-14, "pca start |x0|^2 = %.17g", nn);
            for (int i = 0; i < 5; i++)
                u[i] = i == 0;
            cr_assert(am_objective_loss(f, u, gu) < 0.05, "pca: e1 far from the top eigenvector");
        }
        am_objective_free(f);
        am_dataset_free(ds);
    }
    am_dataset bad = {3, 1, (double[]){1, 2, 3}, (double[]){0, 2, 1}};
    char err[256];
    am_status st;
    cr_assert_null(am_objective_alloc(AM_OBJ_LOGISTIC, &bad, &st, err, sizeof err));
    cr_assert_not_null(strstr(err, "row 2"), "%s", err);
    cr_assert_null(am_objective_alloc(AM_OBJ_PCA, &bad, &st, err, sizeof err), "pca with d=1");
}

/* s = 0: coherence 1; near its stability limit SGD is slowed down by staleness (lr 0.2,
 * s = 16) and fails with a larger step (lr 0.8, s = 8); runs do not depend on threads. */
Test(stale_run, sgd_lsq)
{
    am_dataset *ds;
    cr_assert_eq(am_dataset_synthetic(AM_SYNTH_LSQ, 400, 6, 3, &ds), AM_OK);
    char err[256];
    am_objective *f = am_objective_alloc(AM_OBJ_LSQ, ds, NULL, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    op.lr = 0.2;
    am_stale_params sp = am_stale_params_default();
    sp.max_steps = 3000;
    am_stale_summary s0, s16, s16b, bad;
    cr_assert_eq(am_stale_ensemble(f, &op, &sp, 20, 1, &s0), AM_OK);
    cr_assert_eq(s0.reached, 20, "s=0: %zu of 20 reached", s0.reached);
    cr_assert(s0.coherence.mean == 1.0 && am_stats_var(&s0.coherence) == 0, "s=0 coherence %.17g",
              s0.coherence.mean);
    sp.s = 16;
    cr_assert_eq(am_stale_ensemble(f, &op, &sp, 20, 1, &s16), AM_OK);
    cr_assert_eq(am_stale_ensemble(f, &op, &sp, 20, 2, &s16b), AM_OK);
    cr_assert(memcmp(&s16, &s16b, sizeof s16) == 0, "s=16 differs between 1 and 2 threads");
    cr_assert_eq(s16.reached, 20, "s=16: %zu of 20 reached", s16.reached);
    double diff = s16.steps.mean - s0.steps.mean;
    double se = sqrt(am_stats_var(&s16.steps) / 20 + am_stats_var(&s0.steps) / 20);
    cr_assert(diff > 5 * se, "lr 0.2: s=16 (%.1f steps) not slower than s=0 (%.1f), se %.2g",
              s16.steps.mean, s0.steps.mean, se);
    cr_assert(s16.coherence.mean < 1.0, "s=16 coherence %.6g", s16.coherence.mean);
    op.lr = 0.8;
    sp.s = 8;
    cr_assert_eq(am_stale_ensemble(f, &op, &sp, 10, 1, &bad), AM_OK);
    cr_assert_eq(bad.reached, 0, "lr 0.8, s=8: %zu of 10 reached", bad.reached);
    am_objective_free(f);
    am_dataset_free(ds);
}
