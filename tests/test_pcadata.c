/*
 * test_pcadata.c -- streaming PCA on a data set (theory/am_datamoments.h,
 * montecarlo/am_datadist.h, models/am_pcadata.h, `--data`/`--project`): the moments of a
 * three-row toy set against their closed forms, Sigma, alpha_ij^2 and C_d of the committed
 * IDX fixture against a brute-force computation from the fixture's formulas, the projection's
 * eigenvalues, uniform and thread-independent row sampling, the stationary-error prediction
 * against the Monte Carlo ensemble on projected data (and the same check rejecting a 20 %
 * wrong prediction), and the one-line exit 2 of bad sources.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/am_rng.h"
#include "../models/am_pcadata.h"
#include "../montecarlo/am_datadist.h"
#include "../studies/am_sweep_cell.h"
#include "../theory/am_datamoments.h"
#include "../theory/am_problem.h"
#include "../theory/am_theory.h"
#include "test_util.h"

/* The fixture's training images: 20 of 6 x 7, pixel (i, r, c) = (37 i + 11 r + 3 c) mod 256. */
#define FIX_N 20
#define FIX_D 42
static double fixture_pixel(size_t i, size_t j)
{
    size_t r = j / 7, c = j % 7;
    return (double)((37 * i + 11 * r + 3 * c) % 256) / 255.0;
}

static am_problem *fixture_problem(size_t project)
{
    char dir[4096], spec[4200], err[1024] = "";
    test_fixture_dir(dir, sizeof dir);
    snprintf(spec, sizeof spec, "idx:%s", dir);
    am_status st;
    am_problem *p = am_pcadata_problem(spec, project, &st, err, sizeof err);
    cr_assert_not_null(p, "project %zu: %s", project, err);
    return p;
}

/* ---- closed forms: three rows ------------------------------------------------------------ */

/* Rows u_1 = (2, 0), u_2 = (-1, 1), u_3 = (-1, -1) (mean 0) rotated by theta and shifted by
 * (1, 5): Sigma = R diag(2, 2/3) R^T, so lambda = (2, 2/3) and v^1 = (cos, sin); in the
 * eigenbasis y = u, so alpha_11^2 = (16 + 1 + 1)/3 = 6, alpha_12^2 = 2/3, alpha_22^2 = 2/3;
 * C_d = max |u_r| = 2. */
Test(pcadata, toy_closed_form)
{
    const double th = 0.3, c = cos(th), s = sin(th);
    const double u[3][2] = {{2, 0}, {-1, 1}, {-1, -1}};
    double *x = malloc(6 * sizeof *x);
    for (int r = 0; r < 3; r++) {
        x[2 * r] = 1.0 + c * u[r][0] - s * u[r][1];
        x[2 * r + 1] = 5.0 + s * u[r][0] + c * u[r][1];
    }
    am_datamoments *m;
    char err[256] = "";
    cr_assert_eq(am_datamoments_build(3, 2, NULL, x, 0, &m, err, sizeof err), AM_OK, "%s", err);
    const double tol = 1e-13;
    cr_expect(fabs(m->lambda[0] - 2.0) < tol && fabs(m->lambda[1] - 2.0 / 3.0) < tol,
              "lambda %.17g %.17g, expected 2, 2/3", m->lambda[0], m->lambda[1]);
    cr_expect(fabs(m->mean[0] - 1.0) < tol && fabs(m->mean[1] - 5.0) < tol, "mean %g %g",
              m->mean[0], m->mean[1]);
    /* v^1 = (cos, sin) up to sign; the sign rule makes its largest component positive */
    cr_expect(fabs(m->q[0] - c) < tol && fabs(m->q[2] - s) < tol, "v1 = (%.17g, %.17g)", m->q[0],
              m->q[2]);
    const double a2[4] = {6.0, 2.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0};
    for (int k = 0; k < 4; k++)
        cr_expect(fabs(m->alpha2[k] - a2[k]) < 1e-12, "alpha2[%d] = %.17g, expected %.17g", k,
                  m->alpha2[k], a2[k]);
    cr_expect(fabs(m->bound - 2.0) < tol, "C_d = %.17g, expected 2", m->bound);
    /* through the problem: m4, alpha2, C_d and the stationary error of the closed form */
    am_status st;
    am_problem *p = am_problem_alloc_data(m, &st, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    cr_expect(fabs(am_problem_m4(p, 0, NULL) - 6.0) < 1e-12);
    cr_expect(fabs(am_problem_alpha2(p, 1, 0, NULL) - 2.0 / 3.0) < 1e-12);
    cr_expect(fabs(am_problem_bound(p) - 2.0) < tol);
    double eta = 1e-3, mu = 0.5;
    double want = eta / (2 * (1 - mu)) * (2.0 / 3.0) / (2.0 - 2.0 / 3.0);
    double got = am_theory_stationary_error(p, eta, mu);
    cr_expect(fabs(got - want) < 1e-12 * want, "stationary error %.17g, expected %.17g", got, want);
    cr_expect_eq(am_theory_sde_covariance(p, p->q, NULL), AM_EDOM,
                 "the SDE covariance must refuse dependent coordinates");
    am_problem_free(p);
}

/* ---- the fixture: brute force ----------------------------------------------------------- */

Test(pcadata, fixture_moments_brute_force)
{
    am_problem *p = fixture_problem(0);
    const am_datamoments *m = p->data;
    cr_assert(m && p->dim == FIX_D && m->n == FIX_N && m->bytes, "dim %zu rows %zu", p->dim,
              m ? m->n : 0);
    /* centred rows and Sigma from the formulas */
    static double xc[FIX_N][FIX_D], sig[FIX_D][FIX_D];
    double mean[FIX_D] = {0};
    for (size_t i = 0; i < FIX_N; i++)
        for (size_t j = 0; j < FIX_D; j++)
            mean[j] += fixture_pixel(i, j) / FIX_N;
    for (size_t i = 0; i < FIX_N; i++)
        for (size_t j = 0; j < FIX_D; j++)
            xc[i][j] = fixture_pixel(i, j) - mean[j];
    double smax = 0, cd = 0;
    for (size_t a = 0; a < FIX_D; a++)
        for (size_t b = 0; b < FIX_D; b++) {
            double s = 0;
            for (size_t i = 0; i < FIX_N; i++)
                s += xc[i][a] * xc[i][b];
            sig[a][b] = s / FIX_N;
            if (fabs(sig[a][b]) > smax) smax = fabs(sig[a][b]);
        }
    for (size_t i = 0; i < FIX_N; i++) {
        double s = 0;
        for (size_t j = 0; j < FIX_D; j++)
            s += xc[i][j] * xc[i][j];
        if (sqrt(s) > cd) cd = sqrt(s);
    }
    /* Q diag(lambda) Q^T = Sigma, Q orthonormal, lambda non-increasing */
    for (size_t a = 0; a < FIX_D; a++)
        for (size_t b = 0; b < FIX_D; b++) {
            double s = 0, o = 0;
            for (size_t k = 0; k < FIX_D; k++) {
                s += p->q[a * FIX_D + k] * p->lambda[k] * p->q[b * FIX_D + k];
                o += p->q[k * FIX_D + a] * p->q[k * FIX_D + b];
            }
            cr_expect(fabs(s - sig[a][b]) < 1e-12 * smax, "Sigma[%zu][%zu] %.17g vs %.17g", a, b, s,
                      sig[a][b]);
            cr_expect(fabs(o - (a == b)) < 1e-12, "Q^T Q [%zu][%zu] = %.17g", a, b, o);
        }
    for (size_t k = 1; k < FIX_D; k++)
        cr_expect(p->lambda[k] <= p->lambda[k - 1] && p->lambda[k] >= 0, "lambda %zu", k);
    /* alpha_ij^2 = mean of y_i^2 y_j^2 with y = Q^T x, and C_d = max |x| */
    static double y[FIX_N][FIX_D];
    for (size_t i = 0; i < FIX_N; i++)
        for (size_t k = 0; k < FIX_D; k++) {
            double s = 0;
            for (size_t j = 0; j < FIX_D; j++)
                s += p->q[j * FIX_D + k] * xc[i][j];
            y[i][k] = s;
        }
    double amax = 0;
    for (size_t a = 0; a < FIX_D; a++)
        for (size_t b = 0; b < FIX_D; b++) {
            double s = 0;
            for (size_t i = 0; i < FIX_N; i++)
                s += y[i][a] * y[i][a] * y[i][b] * y[i][b];
            if (s / FIX_N > amax) amax = s / FIX_N;
        }
    for (size_t a = 0; a < FIX_D; a++)
        for (size_t b = 0; b < FIX_D; b++) {
            double s = 0;
            for (size_t i = 0; i < FIX_N; i++)
                s += y[i][a] * y[i][a] * y[i][b] * y[i][b];
            double got = am_problem_alpha2(p, a, b, NULL);
            cr_expect(fabs(got - s / FIX_N) < 1e-12 * amax, "alpha2[%zu][%zu] %.17g vs %.17g", a, b,
                      got, s / FIX_N);
        }
    cr_expect(fabs(am_problem_bound(p) - cd) < 1e-13 * cd, "C_d %.17g vs %.17g",
              am_problem_bound(p), cd);
    /* a drawn row is a centred fixture row */
    double x[FIX_D];
    am_rng rng;
    am_rng_init(&rng, 5, 0, AM_STREAM_DATA, 0);
    for (int t = 0; t < 5; t++) {
        am_datadist_draw(p, &rng, x);
        size_t hit = FIX_N;
        for (size_t i = 0; i < FIX_N && hit == FIX_N; i++) {
            double e = 0;
            for (size_t j = 0; j < FIX_D; j++)
                e += fabs(x[j] - xc[i][j]);
            if (e < 1e-12) hit = i;
        }
        cr_expect(hit < FIX_N, "draw %d is no centred row of the fixture", t);
    }
    am_problem_free(p);
}

Test(pcadata, projection_keeps_top_eigenvalues)
{
    am_problem *full = fixture_problem(0), *p = fixture_problem(4);
    cr_assert_eq(p->dim, 4);
    cr_assert_eq(p->data->d_source, FIX_D);
    for (size_t k = 0; k < 4; k++) {
        cr_expect(fabs(p->lambda[k] - full->lambda[k]) < 1e-12 * full->lambda[0],
                  "projected lambda_%zu = %.17g, full %.17g", k + 1, p->lambda[k], full->lambda[k]);
        /* the projected covariance is diagonal: its eigenbasis is the standard one */
        cr_expect(fabs(fabs(p->q[k * 4 + k]) - 1.0) < 1e-9, "q[%zu][%zu] = %.17g", k, k,
                  p->q[k * 4 + k]);
    }
    /* the rows are the top principal coordinates z = U_4^T x of the full problem's rows */
    double x[FIX_D], z[4];
    for (size_t r = 0; r < FIX_N; r += 7) {
        am_datamoments_row(full->data, r, x);
        am_datamoments_row(p->data, r, z);
        for (size_t k = 0; k < 4; k++) {
            double s = 0;
            for (size_t j = 0; j < FIX_D; j++)
                s += full->q[j * FIX_D + k] * x[j];
            cr_expect(fabs(s - z[k]) < 1e-12, "row %zu coordinate %zu: %.17g vs %.17g", r, k, s,
                      z[k]);
        }
    }
    cr_expect(am_problem_bound(p) <= am_problem_bound(full) * (1 + 1e-12),
              "a projection cannot lengthen a row: %g > %g", am_problem_bound(p),
              am_problem_bound(full));
    am_problem_free(full);
    am_problem_free(p);
}

/* ---- sampling ------------------------------------------------------------------------------ */

/* Pearson's chi^2 of counts against equal cells. */
static double chi2(const size_t *count, size_t n, size_t draws)
{
    double e = (double)draws / (double)n, s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((double)count[i] - e) * ((double)count[i] - e) / e;
    return s;
}

Test(pcadata, index_uniform)
{
    /* 7 cells, 6 degrees of freedom: P(chi^2_6 > 35) < 5e-6 */
    const size_t n = 7, draws = 200000;
    size_t count[7] = {0}, biased[7] = {0};
    am_rng rng;
    am_rng_init(&rng, 3, 0, AM_STREAM_TEST_FIRST, 0);
    for (size_t t = 0; t < draws; t++) {
        size_t r = am_datadist_index(&rng, n);
        cr_assert(r < n);
        count[r]++;
        /* a deliberately wrong sampler: 8 cells folded onto 7 (row 6 twice as likely) */
        size_t b = am_datadist_index(&rng, 8);
        biased[b < 7 ? b : 6]++;
    }
    double c = chi2(count, n, draws), cb = chi2(biased, n, draws);
    cr_expect(c < 35.0, "chi^2 = %g of the uniform index over %zu draws", c, draws);
    cr_expect(cb > 35.0, "the chi^2 check must reject a biased sampler, got %g", cb);
}

Test(pcadata, mc_same_bytes_for_any_thread_count)
{
    char dir[4096], args[8192];
    test_fixture_dir(dir, sizeof dir);
    test_run r[3];
    const char *threads[] = {"1", "2", "3"};
    for (int k = 0; k < 3; k++) {
        snprintf(args, sizeof args,
                 "mc --data idx:%s --eta 1e-3 --mu 0.5 --delay const:3 --time 0.5 --grid 6 "
                 "--replicas 13 --threads %s --coords",
                 dir, threads[k]);
        r[k] = test_amsgd(args);
        cr_assert_eq(r[k].status, 0, "%s: %s", args, r[k].err);
    }
    cr_expect_str_eq(r[0].out, r[1].out, "threads 1 and 2 differ");
    cr_expect_str_eq(r[0].out, r[2].out, "threads 1 and 3 differ");
    /* the projected problem too, and another seed changes the output */
    char base[8192], a2[8300];
    snprintf(base, sizeof base,
             "mc --data idx:%s --project 3 --eta 1e-3 --time 0.5 --grid 3 --replicas 9", dir);
    snprintf(a2, sizeof a2, "%s --threads 1", base);
    test_run a = test_amsgd(a2);
    snprintf(a2, sizeof a2, "%s --threads 1 --seed 2", base);
    test_run b = test_amsgd(a2);
    snprintf(a2, sizeof a2, "%s --threads 2", base);
    test_run c = test_amsgd(a2);
    cr_assert(a.status == 0 && b.status == 0 && c.status == 0, "%s %s %s", a.err, b.err, c.err);
    cr_expect_str_eq(a.out, c.out, "projected: threads 1 and 2 differ");
    cr_expect(strcmp(a.out, b.out) != 0, "seeds 1 and 2 gave the same output");
    /* the parameter-server engine draws the rows the same way */
    test_run w[2];
    for (int k = 0; k < 2; k++) {
        snprintf(a2, sizeof a2, "%s --delay workers:4:exp:1 --threads %d", base, k + 1);
        w[k] = test_amsgd(a2);
        cr_assert_eq(w[k].status, 0, "%s: %s", a2, w[k].err);
    }
    cr_expect_str_eq(w[0].out, w[1].out, "workers:4:exp:1: threads 1 and 2 differ");
    test_run_free(&w[0]);
    test_run_free(&w[1]);
    for (int k = 0; k < 3; k++)
        test_run_free(&r[k]);
    test_run_free(&a);
    test_run_free(&b);
    test_run_free(&c);
}

/* ---- the stationary error: theory against the ensemble -------------------------------- */

/* z-score of the measured cell against a prediction. */
static double zscore(const double *v, double pred)
{
    return fabs(v[AM_SWEEP_CELL_ERR] - pred) / v[AM_SWEEP_CELL_ERR_SEM];
}

Test(pcadata, stationary_error_matches_mc, .timeout = 60)
{
    am_problem *p = fixture_problem(3);
    am_sweep_cell_params s = am_sweep_cell_params_default();
    s.problem = p;
    s.msgd.eta = 1e-3;
    s.msgd.seed = 11;
    s.horizon = 30;
    s.ngrid = 61;
    s.replicas = 200;
    s.threads = 0;
    const double mus[] = {0.0, 0.5};
    for (size_t k = 0; k < 2; k++) {
        double v[AM_SWEEP_CELL_NVALUES];
        cr_assert_eq(am_sweep_cell_run(&s, mus[k], 0.0, NULL, v, NULL), AM_OK);
        double pred = am_theory_stationary_error(p, s.msgd.eta, mus[k]);
        double z = zscore(v, pred), zwrong = zscore(v, 1.2 * pred);
        cr_log_info("mu %g: mc %.6g +- %.2g, theory %.6g (z %.2f, wrong z %.2f)", mus[k],
                    v[AM_SWEEP_CELL_ERR], v[AM_SWEEP_CELL_ERR_SEM], pred, z, zwrong);
        /* power: a 20 % error is more than 5 standard errors */
        cr_assert(0.2 * pred > 5.0 * v[AM_SWEEP_CELL_ERR_SEM],
                  "mu %g: SEM %g too large against the prediction %g", mus[k],
                  v[AM_SWEEP_CELL_ERR_SEM], pred);
        cr_expect(z < 4.0, "mu %g eta %g: mc %.6g +- %.2g, theory %.6g (z = %.2f)", mus[k],
                  s.msgd.eta, v[AM_SWEEP_CELL_ERR], v[AM_SWEEP_CELL_ERR_SEM], pred, z);
        cr_expect(zwrong > 4.0, "mu %g: the check must reject 1.2 x theory %.6g (z = %.2f)", mus[k],
                  1.2 * pred, zwrong);
        cr_expect_eq(v[AM_SWEEP_CELL_DIVERGED], 0.0);
    }
    am_problem_free(p);
}

/* ---- bad input --------------------------------------------------------------------------- */

Test(pcadata, bad_sources_exit_2)
{
    char dir[4096], args[8192];
    test_fixture_dir(dir, sizeof dir);
    test_expect_usage_error("mc --data idx:/nonexistent-dir", "/nonexistent-dir");
    test_expect_usage_error("theory --data /nonexistent.csv", "/nonexistent.csv");
    test_expect_usage_error("knee --data idx:", "idx:");
    snprintf(args, sizeof args, "theory --data idx:%s --project 1", dir);
    test_expect_usage_error(args, "--project");
    snprintf(args, sizeof args, "phase --data idx:%s --project 43", dir);
    test_expect_usage_error(args, "[2, 42]");
    snprintf(args, sizeof args, "mc --data idx:%s --dim 5", dir);
    test_expect_usage_error(args, "--dim");
    test_expect_usage_error("theory --project 3", "--project needs --data");
    /* rows without an eigen-gap: every row the same */
    char csv[] = "/tmp/amsgd-pcadata-XXXXXX";
    int fd = mkstemp(csv);
    cr_assert(fd >= 0);
    const char *text = "1,2,0\n1,2,1\n1,2,0\n";
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    snprintf(args, sizeof args, "theory --data %s", csv);
    test_expect_usage_error(args, "eigen-gap");
    unlink(csv);
}

Test(pcadata, commands_accept_data, .timeout = 60)
{
    char dir[4096], args[8192];
    test_fixture_dir(dir, sizeof dir);
    snprintf(args, sizeof args,
             "theory --data idx:%s --project 3 --eta 1e-3 --mu 0.5 --format json", dir);
    test_run t = test_amsgd(args);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\"data_rows\": 20") && strstr(t.out, "\"project\": 3") &&
                  strstr(t.out, "\"dist\": \"data\"") && strstr(t.out, "\"C_d\""),
              "%s", t.out);
    test_run_free(&t);
    snprintf(args, sizeof args,
             "knee --data idx:%s --project 3 --eta 1e-3 --mus 0.5,0.9 --time 2 --grid 11 "
             "--replicas 8 --bootstrap 0 --refine 0 --tau-max 64 --threads 1 --quiet",
             dir);
    t = test_amsgd(args);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strncmp(t.out, "mu,one_minus_mu,tau_c", 21) == 0, "%s", t.out);
    test_run_free(&t);
    snprintf(args, sizeof args,
             "phase --preset liu2018 --data idx:%s --project 3 --eta 1e-3 --mu-grid 0.5 "
             "--tau-grid 0,4 --time 1 --grid 6 --replicas 4 --threads 1 --quiet --format json",
             dir);
    t = test_amsgd(args);
    cr_assert_eq(t.status, 0, "%s", t.err);
    cr_expect(strstr(t.out, "\"data\":") != NULL, "%s", t.out);
    test_run_free(&t);
}
