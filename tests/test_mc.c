/*
 * test_mc.c -- the discrete Async-MSGD engine: data moments, one update by hand, the
 * noise-free recursion (momentum, delays, rotation) against a plain implementation,
 * rotation equivariance, thread-count invariance, divergence accounting.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/am_grid.h"
#include "../montecarlo/am_data.h"
#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"

static am_problem *make_problem(size_t d, const double *l, am_dist_kind kind, double nu,
                                uint64_t rot)
{
    am_dist dist = {kind, nu};
    am_problem *p = am_problem_alloc(d, l, dist, rot, NULL, NULL, 0);
    cr_assert_not_null(p, "problem d=%zu dist=%d", d, (int)kind);
    return p;
}

/* Mean, variance, 4th moment and a cross moment of each distribution's coordinates against
 * the closed forms, tolerance 5 SE with SEs from the distribution's own higher moments. */
static void check_moments(am_dist_kind kind, double nu)
{
    const double l[3] = {3.0, 2.0, 0.5};
    am_problem *p = make_problem(3, l, kind, nu, 0);
    const long count = 400000;
    const double n = (double)count;
    double s1[3] = {0}, s2[3] = {0}, s4[3] = {0}, s22 = 0, y[3];
    am_rng r;
    am_rng_init(&r, 5, 0, 0, 0);
    for (long k = 0; k < count; k++) {
        am_rng_seek(&r, (uint64_t)k);
        am_data_draw(p, &r, y);
        for (int i = 0; i < 3; i++) {
            s1[i] += y[i];
            s2[i] += y[i] * y[i];
            s4[i] += y[i] * y[i] * y[i] * y[i];
        }
        s22 += y[0] * y[0] * y[1] * y[1];
    }
    const char *name = am_problem_dist_name(kind);
    for (int i = 0; i < 3; i++) {
        am_status st;
        double m4 = am_problem_m4(p, (size_t)i, &st);
        double mean = s1[i] / n, var = s2[i] / n, e4 = s4[i] / n;
        double se1 = sqrt(l[i] / n), se2 = sqrt((m4 - l[i] * l[i]) / n);
        cr_assert(fabs(mean) < 5 * se1, "%s nu=%g: E Y_%d = %.5g, 5 SE %.2g", name, nu, i + 1, mean,
                  5 * se1);
        cr_assert(fabs(var - l[i]) < 5 * se2 + 1e-12,
                  "%s nu=%g: Var Y_%d = %.5g, expected %g +- %.2g", name, nu, i + 1, var, l[i],
                  5 * se2);
        /* SE of the 4th moment from the empirical 8th moment is noisy for heavy tails;
           use a relative tolerance of 5 SE of a conservative bound: 3% for student */
        double tol4 =
            kind == AM_DIST_STUDENT ? 0.06 * m4 : 5 * sqrt(fabs(e4 * e4 * 10) / n) + 1e-12;
        if (kind == AM_DIST_RADEMACHER) tol4 = 1e-9 * m4; /* Y^4 = lambda^2 exactly */
        cr_assert(fabs(e4 - m4) < tol4, "%s nu=%g: E Y_%d^4 = %.5g, expected %.5g +- %.2g", name,
                  nu, i + 1, e4, m4, tol4);
    }
    double a2 = am_problem_alpha2(p, 0, 1, NULL);
    cr_assert(fabs(s22 / n - a2) < 0.03 * a2, "%s: E Y1^2 Y2^2 = %.5g, expected %.5g", name,
              s22 / n, a2);
    am_problem_free(p);
}

Test(mc, moments_gaussian)
{
    check_moments(AM_DIST_GAUSSIAN, 0);
}
Test(mc, moments_rademacher)
{
    check_moments(AM_DIST_RADEMACHER, 0);
}
Test(mc, moments_uniform)
{
    check_moments(AM_DIST_UNIFORM, 0);
}
Test(mc, moments_student)
{
    check_moments(AM_DIST_STUDENT, 12);
}

Test(mc, rademacher_and_uniform_bounded)
{
    const double l[3] = {3.0, 2.0, 0.5};
    for (int kind = AM_DIST_RADEMACHER; kind <= AM_DIST_UNIFORM; kind++) {
        am_problem *p = make_problem(3, l, (am_dist_kind)kind, 0, 0);
        double c = am_problem_bound(p), y[3];
        am_rng r;
        am_rng_init(&r, 9, 0, 0, 0);
        for (int k = 0; k < 20000; k++) {
            am_data_draw(p, &r, y);
            double nn = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
            cr_assert(nn <= c * (1 + 1e-12), "%s: |X| = %g above C_d = %g",
                      am_problem_dist_name(p->dist.kind), nn, c);
        }
        am_problem_free(p);
    }
}

Test(mc, one_update_by_hand)
{
    /* v = (0.6, 0.8), v_prev = (1, 0), w = (0, 1), x = (1, 2), eta = 0.1, mu = 0.5:
       a = x.w = 2; v + mu (v - vp) = (0.4, 1.2); eta a (x - a w) = 0.2 (1, -2 + 2) = (0.2, 0)
       so v_next = (0.6, 1.2). */
    const double v[2] = {0.6, 0.8}, vp[2] = {1, 0}, w[2] = {0, 1}, x[2] = {1, 2};
    double vn[2];
    am_msgd_update(2, 0.1, 0.5, x, v, vp, w, vn);
    cr_assert(fabs(vn[0] - 0.6) < 1e-15 && fabs(vn[1] - 1.2) < 1e-15, "v_next = (%.17g, %.17g)",
              vn[0], vn[1]);
    /* the projector: (I - w w^T) x x^T w is orthogonal to a unit w */
    const double w2[2] = {0.6, 0.8};
    am_msgd_update(2, 1.0, 0.0, x, (double[2]){0, 0}, (double[2]){0, 0}, w2, vn);
    cr_assert(fabs(vn[0] * w2[0] + vn[1] * w2[1]) < 1e-15, "projected gradient . w = %g",
              vn[0] * w2[0] + vn[1] * w2[1]);
}

/* Plain implementation of the noise-free recursion with a full history array:
   v_{k+1} = v_k + mu (v_k - v_{k-1}) + eta (S w - (w^T S w) w), w = v_{max(k - tau_k, -1..)} */
static void plain_expected(size_t d, const double *S, double eta, double mu, const double *v0,
                           const uint64_t *taus, uint64_t n, double *out_v)
{
    double *hist = malloc((n + 1) * d * sizeof *hist), *sw = malloc(d * sizeof *sw);
    memcpy(hist, v0, d * sizeof *hist);
    for (uint64_t k = 0; k < n; k++) {
        long j = (long)k - (long)taus[k];
        const double *w = hist + (j < 0 ? 0 : (size_t)j) * d;
        const double *v = hist + k * d, *vp = hist + (k == 0 ? 0 : k - 1) * d;
        double q = 0;
        for (size_t i = 0; i < d; i++) {
            sw[i] = 0;
            for (size_t l = 0; l < d; l++)
                sw[i] += S[i * d + l] * w[l];
            q += sw[i] * w[i];
        }
        for (size_t i = 0; i < d; i++)
            hist[(k + 1) * d + i] = v[i] + mu * (v[i] - vp[i]) + eta * (sw[i] - q * w[i]);
    }
    memcpy(out_v, hist + n * d, d * sizeof *out_v);
    free(hist);
    free(sw);
}

static void check_expected(const char *delay_spec, double mu, uint64_t rot)
{
    const size_t d = 5;
    const double l[5] = {5, 3, 2, 1.5, 1};
    am_problem *p = make_problem(d, l, AM_DIST_EXPECTED, 0, rot);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.002;
    par.mu = mu;
    par.seed = 17;
    par.init.kind = AM_INIT_ANGLE;
    par.init.theta = 1.2;
    char err[200];
    cr_assert_eq(am_delay_parse(delay_spec, &par.delay, err, sizeof err), AM_OK, "%s", err);
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    cr_assert_not_null(m);
    const uint64_t n = 150;
    am_grid grid = {2, (double)n * par.eta};
    uint64_t k[2];
    am_grid_steps(&grid, par.eta, k);
    cr_assert_eq(k[1], n);
    am_ensemble_params ep = {1, 1, 0};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 2, &ep, &res), AM_OK);

    /* reference: dense Sigma, the same delay draws, full history */
    double S[25] = {0}, v0[5], v[5], u1[5];
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++)
            for (size_t a = 0; a < d; a++) {
                double qi = p->q ? p->q[i * d + a] : (i == a),
                       qj = p->q ? p->q[j * d + a] : (j == a);
                S[i * d + j] += qi * l[a] * qj;
            }
    am_msgd_initial(m, 0, v0);
    uint64_t *taus = malloc(n * sizeof *taus);
    am_rng r;
    am_rng_init(&r, par.seed, 0, AM_STREAM_DELAY, 0);
    for (uint64_t s = 0; s < n; s++) {
        am_rng_seek(&r, s);
        taus[s] = am_delay_draw(&par.delay, &r);
    }
    plain_expected(d, S, par.eta, mu, v0, taus, n, v);
    am_problem_eigvec(p, 0, u1);
    double e_ref = am_msgd_error(d, u1, v), nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    double e = res->obs[1 * 2 + 0].mean, nrm = res->obs[1 * 2 + 1].mean;
    cr_assert(fabs(e - e_ref) <= 1e-10 * fabs(e_ref) + 1e-15,
              "delay=%s mu=%g rot=%llu: err %.17g, plain %.17g", delay_spec, mu,
              (unsigned long long)rot, e, e_ref);
    cr_assert(fabs(nrm - sqrt(nn)) <= 1e-12 * sqrt(nn), "delay=%s mu=%g: norm %.17g, plain %.17g",
              delay_spec, mu, nrm, sqrt(nn));
    cr_assert(e_ref < 0.8 && e_ref > 1e-6,
              "the reference must have moved but not converged to "
              "rounding (err %.3g)",
              e_ref);
    free(taus);
    am_ensemble_result_free(res);
    am_msgd_free(m);
    am_problem_free(p);
}

Test(mc, expected_no_delay)
{
    check_expected("none", 0.0, 0);
}
Test(mc, expected_momentum)
{
    check_expected("none", 0.8, 0);
}
Test(mc, expected_const_delay)
{
    check_expected("const:7", 0.6, 0);
}
Test(mc, expected_uniform_delay_rotated)
{
    check_expected("uniform:12", 0.5, 99);
}
Test(mc, expected_geometric_delay)
{
    check_expected("geometric:3.5", 0.7, 0);
}

/* The stochastic recursion against a plain implementation that draws the same data
 * (stream AM_STREAM_DATA at each step) and keeps the whole history. */
static void check_stochastic(const char *dist_spec, const char *delay_spec, double mu)
{
    const size_t d = 6;
    const double l[6] = {3, 2.5, 2, 1, 0.5, 0.25};
    am_dist dist;
    char err[200];
    cr_assert_eq(am_problem_dist_parse(dist_spec, &dist, err, sizeof err), AM_OK);
    am_problem *p = am_problem_alloc(d, l, dist, 0, NULL, NULL, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.01;
    par.mu = mu;
    par.seed = 23;
    par.init.kind = AM_INIT_RANDOM_EACH;
    cr_assert_eq(am_delay_parse(delay_spec, &par.delay, err, sizeof err), AM_OK, "%s", err);
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    const uint64_t n = 120, replica = 2;
    am_grid grid = {2, (double)n * par.eta};
    uint64_t k[2];
    am_grid_steps(&grid, par.eta, k);
    am_ensemble_params ep = {replica + 1, 1, 1};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 2, &ep, &res), AM_OK);
    /* with 3 replicas the statistics hold their mean; recover replica 2 from a run of 2 */
    am_ensemble_result *res2;
    ep.replicas = replica;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 2, &ep, &res2), AM_OK);
    double e_engine = 3 * res->obs[2].mean - 2 * res2->obs[2].mean;

    double *hist = malloc((n + 1) * d * sizeof *hist), x[6], u1[6];
    am_msgd_initial(m, replica, hist);
    am_rng rd, rt;
    am_rng_init(&rd, par.seed, replica, AM_STREAM_DATA, 0);
    am_rng_init(&rt, par.seed, replica, AM_STREAM_DELAY, 0);
    for (uint64_t s = 0; s < n; s++) {
        am_rng_seek(&rd, s);
        am_rng_seek(&rt, s);
        uint64_t tau = am_delay_draw(&par.delay, &rt);
        long j = (long)s - (long)tau;
        const double *w = hist + (j < 0 ? 0 : (size_t)j) * d;
        const double *v = hist + s * d, *vp = hist + (s == 0 ? 0 : s - 1) * d;
        am_data_draw(p, &rd, x);
        double a = 0;
        for (size_t i = 0; i < d; i++)
            a += x[i] * w[i];
        for (size_t i = 0; i < d; i++) {
            double g = a * x[i] - a * a * w[i]; /* (I - w w^T) x x^T w */
            hist[(s + 1) * d + i] = v[i] + mu * (v[i] - vp[i]) + par.eta * g;
        }
    }
    am_problem_eigvec(p, 0, u1);
    double e_ref = am_msgd_error(d, u1, hist + n * d);
    cr_assert(fabs(e_engine - e_ref) <= 1e-9 * fabs(e_ref) + 1e-12,
              "dist=%s delay=%s mu=%g: engine err %.15g, plain %.15g", dist_spec, delay_spec, mu,
              e_engine, e_ref);
    cr_assert(e_ref > 1e-4, "reference too close to converged (%g)", e_ref);
    free(hist);
    am_ensemble_result_free(res);
    am_ensemble_result_free(res2);
    am_msgd_free(m);
    am_problem_free(p);
}

Test(mc, stochastic_gaussian)
{
    check_stochastic("gaussian", "none", 0.5);
}
Test(mc, stochastic_gaussian_delay)
{
    check_stochastic("gaussian", "const:5", 0.3);
}
Test(mc, stochastic_rademacher_delay)
{
    check_stochastic("rademacher", "uniform:9", 0.6);
}
Test(mc, stochastic_student_delay)
{
    check_stochastic("student:6", "geometric:2", 0.2);
}

/* With the same eigen-coordinate draws Y, the rotated run is the unrotated run seen in
 * another basis: the error trajectories agree to rounding. Exercises the fused Gaussian
 * kernel against the generic rotated path. */
Test(mc, rotation_equivariance)
{
    const double l[4] = {4, 3, 2, 1};
    am_problem *p0 = make_problem(4, l, AM_DIST_GAUSSIAN, 0, 0);
    am_problem *p1 = make_problem(4, l, AM_DIST_GAUSSIAN, 0, 12345);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.01;
    par.mu = 0.5;
    par.init.kind = AM_INIT_ANGLE;
    par.init.theta = 1.0;
    char err[100];
    am_delay_parse("uniform:4", &par.delay, err, sizeof err);
    am_status st;
    am_msgd *m0 = am_msgd_alloc(p0, &par, &st, NULL, 0),
            *m1 = am_msgd_alloc(p1, &par, &st, NULL, 0);
    am_grid grid = {11, 5.0};
    uint64_t k[11];
    am_grid_steps(&grid, par.eta, k);
    am_ensemble_params ep = {8, 1, 0};
    am_ensemble_result *r0, *r1;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m0), k, 11, &ep, &r0), AM_OK);
    cr_assert_eq(am_ensemble_run(am_msgd_model(m1), k, 11, &ep, &r1), AM_OK);
    for (size_t g = 0; g < 11; g++) {
        double a = r0->obs[g * 2].mean, b = r1->obs[g * 2].mean;
        cr_assert(fabs(a - b) <= 1e-9 * fabs(a) + 1e-13, "t=%g: err %.17g unrotated, %.17g rotated",
                  0.5 * (double)g, a, b);
    }
    am_ensemble_result_free(r0);
    am_ensemble_result_free(r1);
    am_msgd_free(m0);
    am_msgd_free(m1);
    am_problem_free(p0);
    am_problem_free(p1);
}

static am_ensemble_result *run_threads(int threads, const char *dist_spec, size_t R)
{
    const double l[4] = {4, 3, 2, 1};
    am_dist dist;
    char err[100];
    am_problem_dist_parse(dist_spec, &dist, err, sizeof err);
    am_problem *p = am_problem_alloc(4, l, dist, 0, NULL, NULL, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.005;
    par.mu = 0.3;
    par.init.kind = AM_INIT_RANDOM_EACH;
    par.coords = 1;
    am_delay_parse("geometric:2", &par.delay, err, sizeof err);
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    am_grid grid = {21, 4.0};
    uint64_t k[21];
    am_grid_steps(&grid, par.eta, k);
    am_ensemble_params ep = {R, threads, 0};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 21, &ep, &res), AM_OK);
    am_msgd_free(m);
    am_problem_free(p);
    return res;
}

Test(mc, bit_identical_for_1_and_2_threads)
{
    const char *dists[] = {"gaussian", "rademacher", "student:5"};
    for (int i = 0; i < 3; i++) {
        am_ensemble_result *a = run_threads(1, dists[i], 2500), *b = run_threads(2, dists[i], 2500);
        size_t n = a->ngrid * a->nobs;
        cr_assert_eq(memcmp(a->obs, b->obs, n * sizeof *a->obs), 0,
                     "%s: statistics differ between 1 and 2 threads", dists[i]);
        cr_assert_eq(memcmp(a->alive, b->alive, a->ngrid * sizeof *a->alive), 0, "%s", dists[i]);
        am_ensemble_result_free(a);
        am_ensemble_result_free(b);
    }
}

/* Async-MSGD without delay on the spectrum 4, 3, 2, 1 with data kind (nu): the ensemble of
 * replicas replicas on threads threads, observed at the ngrid (<= 8) points of [0, horizon]. */
static am_ensemble_result *run_plain(am_dist_kind kind, double nu, double eta, double mu,
                                     size_t ngrid, double horizon, size_t replicas, int threads)
{
    const double l[4] = {4, 3, 2, 1};
    am_problem *p = make_problem(4, l, kind, nu, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = eta;
    par.mu = mu;
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    am_grid grid = {ngrid, horizon};
    uint64_t k[8];
    cr_assert_leq(ngrid, 8);
    am_grid_steps(&grid, par.eta, k);
    am_ensemble_params ep = {replicas, threads, 0};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, ngrid, &ep, &res), AM_OK);
    am_msgd_free(m);
    am_problem_free(p);
    return res;
}

Test(mc, divergence_is_counted_not_averaged)
{
    /* eta = 0.3 with heavy-tailed data: some replicas blow up, others do not */
    am_ensemble_result *res = run_plain(AM_DIST_STUDENT, 2.5, 0.05, 0.5, 5, 20.0, 400, 2);
    size_t last = res->alive[4];
    cr_assert(
        res->diverged > 0 && res->diverged < 400,
        "student:2.5 eta=0.05 mu=0.5 should diverge in some but not all replicas, got %zu/400",
        res->diverged);
    cr_assert_eq(last + res->diverged, 400, "alive %zu + diverged %zu != 400", last, res->diverged);
    for (size_t g = 0; g < 5; g++) {
        cr_assert(isfinite(res->obs[g * 2].mean), "mean error at g=%zu is not finite", g);
        cr_assert_eq((size_t)res->obs[g * 2].n, res->alive[g], "count at g=%zu", g);
    }
    am_ensemble_result_free(res);
}

Test(mc, all_diverge_when_unstable)
{
    am_ensemble_result *res = run_plain(AM_DIST_GAUSSIAN, 0, 1.0, 0.9, 3, 200.0, 50, 1);
    cr_assert_eq(res->diverged, 50, "eta=1 mu=0.9: %zu of 50 diverged", res->diverged);
    cr_assert_eq(res->alive[2], 0);
    cr_assert_eq(res->alive[0], 50);
    am_ensemble_result_free(res);
}

/* am_model_pair: a delayed chain beside its undelayed twin. The first half of the observables is
 * the delayed chain's, byte for byte as when it runs alone; the second half is the paired
 * difference, exactly 0 for a chain paired with itself and with a standard error well below
 * the unpaired one (common random numbers: the same data and initial point in both). */
Test(mc, model_pair_common_random_numbers)
{
    const double l[4] = {4, 3, 2, 1};
    am_problem *p = make_problem(4, l, AM_DIST_GAUSSIAN, 0, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.002;
    par.mu = 0.5;
    char err[100];
    am_status st;
    am_msgd_params p0 = par;
    cr_assert_eq(am_delay_parse("const:10", &par.delay, err, sizeof err), AM_OK);
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0), *m0 = am_msgd_alloc(p, &p0, &st, NULL, 0);
    cr_assert(m && m0);
    am_grid grid = {11, 1.0};
    uint64_t k[11];
    am_grid_steps(&grid, par.eta, k);
    am_ensemble_params ep = {400, 2, 0};
    am_model pair, self;
    am_model_pair pc, sc;
    cr_assert_eq(am_model_pair_make(am_msgd_model(m), am_msgd_model(m0), &pc, &pair), AM_OK);
    cr_assert_eq(am_model_pair_make(am_msgd_model(m), am_msgd_model(m), &sc, &self), AM_OK);
    am_ensemble_result *a, *b, *r, *s;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 11, &ep, &a), AM_OK);
    cr_assert_eq(am_ensemble_run(am_msgd_model(m0), k, 11, &ep, &b), AM_OK);
    cr_assert_eq(am_ensemble_run(&pair, k, 11, &ep, &r), AM_OK);
    cr_assert_eq(am_ensemble_run(&self, k, 11, &ep, &s), AM_OK);
    size_t n = a->nobs;
    cr_assert_eq(r->nobs, 2 * n);
    for (size_t g = 1; g < 11; g++) {
        const am_stats *ra = &r->obs[g * 2 * n], *d = &r->obs[g * 2 * n + n];
        cr_assert_eq(ra->mean, a->obs[g * n].mean, "t %zu: the delayed chain's own mean", g);
        double diff = a->obs[g * n].mean - b->obs[g * n].mean;
        cr_assert(fabs(d->mean - diff) <= 1e-12 * (fabs(diff) + 1e-3), "t %zu: %g vs %g", g,
                  d->mean, diff);
        double su =
            sqrt(pow(am_stats_sem(&a->obs[g * n]), 2) + pow(am_stats_sem(&b->obs[g * n]), 2));
        cr_assert(am_stats_sem(d) < 0.5 * su, "t %zu: paired sem %g, unpaired %g", g,
                  am_stats_sem(d), su);
        cr_assert_eq(s->obs[g * 2 * n + n].mean, 0.0);
    }
    am_model bad;
    am_msgd_params pc4 = p0;
    pc4.coords = 1;
    am_msgd *mc = am_msgd_alloc(p, &pc4, &st, NULL, 0);
    cr_assert_eq(am_model_pair_make(am_msgd_model(m), am_msgd_model(mc), &pc, &bad), AM_EINVAL,
                 "unequal nobs");
    am_ensemble_result_free(a);
    am_ensemble_result_free(b);
    am_ensemble_result_free(r);
    am_ensemble_result_free(s);
    am_msgd_free(mc);
    am_msgd_free(m);
    am_msgd_free(m0);
    am_problem_free(p);
}
