/*
 * test_rng.c -- the Philox streams and the ziggurat normal sampler: table recomputation,
 * counter independence of scheduling, and the normal CDF at many points (binomial SE).
 */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>

#include "../core/am_rng.h"

Test(rng, ziggurat_tables_recomputed)
{
    const double R = 3.6541528853610088, V = 0.00492867323399;
    double x[257], f = exp(-0.5 * R * R);
    x[0] = V / f;
    x[1] = R;
    x[256] = 0;
    for (int i = 2; i < 256; i++) {
        x[i] = sqrt(-2 * log(V / x[i - 1] + f));
        f = exp(-0.5 * x[i] * x[i]);
    }
    for (int i = 0; i <= 256; i++)
        cr_assert(fabs(x[i] - am_zig_x[i]) <= 4e-16 * fabs(x[i]),
                  "x[%d]: table %.17g, recomputed %.17g", i, am_zig_x[i], x[i]);
    for (int i = 0; i < 256; i++)
        cr_assert(fabs(x[i + 1] / x[i] - am_zig_r[i]) <= 4e-16, "r[%d]", i);
    /* each layer (and the base strip with its tail) has area V under f */
    for (int i = 1; i < 255; i++) {
        double area = x[i] * (exp(-0.5 * x[i + 1] * x[i + 1]) - exp(-0.5 * x[i] * x[i]));
        cr_assert(fabs(area - V) < 1e-9, "layer %d area %.12g, expected %.12g", i, area, V);
    }
}

Test(rng, draws_depend_only_on_counter)
{
    am_rng a, b;
    am_rng_init(&a, 42, 7, 0, 1000);
    uint64_t first = am_rng_u64(&a);
    for (int i = 0; i < 10; i++)
        am_rng_u64(&a);
    am_rng_init(&b, 42, 7, 0, 3);
    am_rng_u64(&b);
    am_rng_seek(&b, 1000);
    cr_assert_eq(am_rng_u64(&b), first, "seek to step 1000 must reproduce the first word");
    am_rng_init(&b, 42, 8, 0, 1000);
    cr_assert_neq(am_rng_u64(&b), first, "another replica must give another word");
    am_rng_init(&b, 42, 7, 1, 1000);
    cr_assert_neq(am_rng_u64(&b), first, "another stream must give another word");
}

Test(rng, uniform_in_open_interval_with_right_mean)
{
    am_rng r;
    am_rng_init(&r, 3, 0, 0, 0);
    const int n = 200000;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double u = am_rng_uniform(&r);
        cr_assert(u > 0 && u < 1, "uniform draw %d = %.17g outside (0,1)", i, u);
        s += u;
    }
    double se = sqrt(1.0 / 12.0 / n);
    cr_assert(fabs(s / n - 0.5) < 5 * se, "mean %.6f, expected 0.5 +- %.2g (5 SE)", s / n, 5 * se);
}

/* The empirical CDF of 2e6 ziggurat normals against Phi at points that probe the
 * rectangles, the wedges and the tail beyond R = 3.654; tolerance 5 binomial SE. */
Test(rng, gaussian_cdf)
{
    const double pts[] = {-4.0, -3.7, -3.0, -2.0, -1.0, -0.5, -0.1, 0.0,
                          0.1,  0.5,  1.0,  1.5,  2.5,  3.2,  3.66, 4.2};
    enum { NP = sizeof pts / sizeof pts[0] };
    long cnt[NP] = {0};
    const long n = 2000000;
    am_rng r;
    am_rng_init(&r, 11, 0, 0, 0);
    double m2 = 0, m4 = 0;
    for (long i = 0; i < n; i++) {
        double z = am_rng_gaussian(&r);
        m2 += z * z;
        m4 += z * z * z * z;
        for (int j = 0; j < NP; j++)
            cnt[j] += z <= pts[j];
    }
    for (int j = 0; j < NP; j++) {
        double p = gsl_cdf_ugaussian_P(pts[j]), ph = (double)cnt[j] / (double)n;
        double se = sqrt(p * (1 - p) / (double)n);
        cr_assert(fabs(ph - p) < 5 * se + 1e-12,
                  "P(Z <= %g): empirical %.7f, exact %.7f, 5 SE %.2g", pts[j], ph, p, 5 * se);
    }
    m2 /= (double)n;
    m4 /= (double)n;
    cr_assert(fabs(m2 - 1) < 5 * sqrt(2.0 / (double)n), "E Z^2 = %.5f", m2);
    cr_assert(fabs(m4 - 3) < 5 * sqrt(96.0 / (double)n), "E Z^4 = %.5f", m4);
}
