/*
 * am_rng.c -- out-of-line part of the ziggurat normal sampler: the base strip's tail
 * (x > R, Marsaglia's exponential method) and the wedges, accepted when
 * f(x[i+1]) + U (f(x[i]) - f(x[i+1])) < f(x), f(x) = exp(-x^2/2).
 */
#include "am_rng.h"

#define ZIG_R 3.6541528853610088

double am_rng_gaussian_slow(am_rng *r, uint64_t w)
{
    for (;;) {
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        if (fabs(u) < am_zig_r[i]) return u * am_zig_x[i];
        if (i == 0) {
            double x, y;
            do {
                x = log(am_rng_uniform(r)) / ZIG_R;
                y = log(am_rng_uniform(r));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - ZIG_R : ZIG_R - x;
        }
        double x = u * am_zig_x[i];
        double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
        double f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
        if (f1 + am_rng_uniform(r) * (f0 - f1) < 1.0) return x;
        w = am_rng_u64(r);
    }
}
