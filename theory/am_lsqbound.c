/*
 * am_lsqbound.c -- the least-squares error formulas of am_lsqbound.h.
 */
#include "am_lsqbound.h"

#include <math.h>
#include <stdlib.h>

am_status am_lsqbound_floor_exact(const double *lambda, size_t d, double eta, double sigma,
                                  double k, double *out)
{
    double a = 0;
    for (size_t i = 0; i < d; i++) {
        double el = eta * lambda[i];
        double di = 2 * el - el * el * (1 + 1 / k);
        if (!(di > 0)) {
            *out = INFINITY;
            return AM_EDOM;
        }
        a += el * el / (k * di);
    }
    if (!(a < 1)) {
        *out = INFINITY;
        return AM_EDOM;
    }
    *out = 0.5 * sigma * sigma * a / (1 - a);
    return AM_OK;
}

void am_lsqbound_curve_exact(const double *lambda, size_t d, double eta, double sigma, double k,
                             size_t n, double *out)
{
    double *v = malloc(d * sizeof *v);
    if (!v) {
        for (size_t j = 0; j < n; j++)
            out[j] = NAN;
        return;
    }
    for (size_t i = 0; i < d; i++)
        v[i] = 1.0;
    for (size_t j = 0; j < n; j++) {
        double s = 0;
        for (size_t i = 0; i < d; i++)
            s += lambda[i] * v[i];
        out[j] = 0.5 * s;
        for (size_t i = 0; i < d; i++) {
            double el = eta * lambda[i];
            v[i] = (1 - el) * (1 - el) * v[i] +
                   eta * eta / k *
                       (lambda[i] * s + lambda[i] * lambda[i] * v[i] + lambda[i] * sigma * sigma);
        }
    }
    free(v);
}

double am_lsqbound_floor_dutta(const double *lambda, size_t d, double eta, double sigma, double k)
{
    double tr = 0, l = 0, c = INFINITY;
    for (size_t i = 0; i < d; i++) {
        tr += lambda[i];
        l = fmax(l, lambda[i]);
        c = fmin(c, lambda[i]);
    }
    return eta * l * sigma * sigma * tr / (2 * c * k);
}

/* c (1 - gamma + p0/2), NaN outside the bound's range */
static double async_factor(const double *lambda, size_t d, double gamma, double p0)
{
    if (!(gamma >= 0) || !(p0 >= 0 && p0 <= 1)) return NAN;
    double c = INFINITY;
    for (size_t i = 0; i < d; i++)
        c = fmin(c, lambda[i]);
    double f = 1 - gamma + 0.5 * p0;
    return f > 0 ? c * f : NAN;
}

double am_lsqbound_decay_dutta_async(const double *lambda, size_t d, double eta, double gamma,
                                     double p0)
{
    return eta > 0 ? 1 - eta * async_factor(lambda, d, gamma, p0) : NAN;
}

double am_lsqbound_floor_dutta_async(const double *lambda, size_t d, double eta, double sigma,
                                     double k, double gamma, double p0)
{
    double cp = async_factor(lambda, d, gamma, p0), tr = 0, l = 0;
    for (size_t i = 0; i < d; i++) {
        tr += lambda[i];
        l = fmax(l, lambda[i]);
    }
    return eta * l * sigma * sigma * tr / (2 * cp * k);
}
