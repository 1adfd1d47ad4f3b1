/*
 * am_data.c -- samplers for the eigen-coordinates Y of the data (see am_data.h).
 */
#include "am_data.h"

#include <math.h>
#include <string.h>

#include "am_datadist.h"

double am_data_gamma(am_rng *rng, double shape)
{
    if (shape < 1.0) {
        /* G(a) = G(a+1) U^(1/a) */
        double u = am_rng_uniform(rng);
        return am_data_gamma(rng, shape + 1.0) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = am_rng_gaussian(rng);
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        double u = am_rng_uniform(rng);
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return d * v;
    }
}

void am_data_draw(const am_problem *p, am_rng *rng, double *y)
{
    size_t d = p->dim;
    const double *sl = p->sqrt_lambda;
    switch (p->dist.kind) {
    case AM_DIST_GAUSSIAN:
        am_rng_fill_gaussian(rng, y, d);
        for (size_t i = 0; i < d; i++)
            y[i] *= sl[i];
        break;
    case AM_DIST_RADEMACHER:
        for (size_t i0 = 0; i0 < d; i0 += 64) {
            uint64_t bits = am_rng_u64(rng);
            size_t n = d - i0 < 64 ? d - i0 : 64;
            for (size_t j = 0; j < n; j++) {
                /* branch-free: bit j of the word becomes the sign bit of sqrt(lambda) */
                uint64_t u;
                memcpy(&u, &sl[i0 + j], sizeof u);
                u ^= (bits >> j & 1) << 63;
                memcpy(&y[i0 + j], &u, sizeof u);
            }
        }
        break;
    case AM_DIST_UNIFORM:
        for (size_t i = 0; i < d; i++)
            y[i] = sqrt(3.0) * sl[i] * (2.0 * am_rng_uniform(rng) - 1.0);
        break;
    case AM_DIST_STUDENT: {
        double nu = p->dist.nu, scale = sqrt((nu - 2.0) / nu);
        for (size_t i = 0; i < d; i++) {
            double z = am_rng_gaussian(rng);
            double g = 2.0 * am_data_gamma(rng, 0.5 * nu);
            y[i] = sl[i] * scale * z / sqrt(g / nu);
        }
        break;
    }
    case AM_DIST_EXPECTED:
        for (size_t i = 0; i < d; i++)
            y[i] = 0;
        break;
    case AM_DIST_DATA:
        am_datadist_draw_eigen(p, rng, y);
        break;
    }
}

void am_data_unit_vector(am_rng *rng, size_t d, double *v)
{
    double s;
    do {
        s = 0;
        for (size_t i = 0; i < d; i++) {
            v[i] = am_rng_gaussian(rng);
            s += v[i] * v[i];
        }
    } while (!(s > 0));
    s = 1.0 / sqrt(s);
    for (size_t i = 0; i < d; i++)
        v[i] *= s;
}
