/*
 * am_asyncmom.c -- the asynchrony-as-momentum measurement of am_asyncmom.h.
 */
#include "am_asyncmom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "am_delay.h"
#include "../core/am_stats.h"

am_asyncmom_params am_asyncmom_params_default(void)
{
    am_asyncmom_params p = {4, 4, 0.1, 100, 4000, 20, 1};
    return p;
}

/* Least squares of D_k = m D_{k-1} + c A xbar_k over k = 1..K-2, xbar = sum / count. */
static int fit(const double *sum, double count, const double *lam, size_t d, size_t K, double *m,
               double *c)
{
    double s11 = 0, s12 = 0, s22 = 0, t1 = 0, t2 = 0, inv = 1.0 / count;
    for (size_t k = 1; k + 1 < K; k++)
        for (size_t i = 0; i < d; i++) {
            double xk = sum[k * d + i] * inv;
            double dk = sum[(k + 1) * d + i] * inv - xk;
            double dp = xk - sum[(k - 1) * d + i] * inv;
            double ax = lam[i] * xk;
            s11 += dp * dp;
            s12 += dp * ax;
            s22 += ax * ax;
            t1 += dp * dk;
            t2 += ax * dk;
        }
    double det = s11 * s22 - s12 * s12;
    if (!(det > 0)) return 1;
    *m = (t1 * s22 - t2 * s12) / det;
    *c = (s11 * t2 - s12 * t1) / det;
    return 0;
}

am_status am_asyncmom_measure(const am_asyncmom_params *p, am_asyncmom_result *out)
{
    memset(out, 0, sizeof *out);
    if (!(p->workers >= 1) || p->dim < 1 || !(p->eta > 0) || !isfinite(p->eta) || p->steps < 4 ||
        p->batches < 2 || p->replicas < p->batches || p->steps > 100000000)
        return AM_EINVAL;
    am_delay delay;
    am_status st = am_delay_make(AM_DELAY_GEOMETRIC, p->workers - 1.0, &delay);
    if (st) return st;
    size_t d = p->dim, K = (size_t)p->steps, L = (size_t)delay.max + 2, B = p->batches;
    size_t n = (K + 1) * d, per = p->replicas / B;
    double *lam = malloc(d * sizeof *lam);
    double *ring = malloc(L * d * sizeof *ring);      /* x_{k+1-L..k} of one replica */
    double *sums = calloc((B + 2) * n, sizeof *sums); /* per batch, total, leave-one-out */
    if (!lam || !ring || !sums) {
        st = AM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < d; i++)
        lam[i] = d == 1 ? 1.0 : 1.0 - 0.9 * (double)i / (double)(d - 1);
    for (size_t b = 0; b < B; b++) {
        double *sum = sums + b * n;
        for (size_t r = b * per; r < (b + 1) * per; r++) {
            am_rng rng;
            am_rng_init(&rng, p->seed, r, AM_STREAM_DELAY, 0);
            for (size_t s = 0; s < L * d; s++)
                ring[s] = 1.0;
            for (size_t i = 0; i < d; i++)
                sum[i] += 1.0;
            for (size_t k = 0; k < K; k++) {
                am_rng_seek(&rng, k);
                size_t tau = (size_t)am_delay_draw(&delay, &rng);
                const double *x = ring + (k % L) * d;
                const double *xs = ring + ((k + L - tau % L) % L) * d;
                double *xn = ring + ((k + 1) % L) * d;
                /* L = max + 2: xn holds x_{k+1-L}, older than any iterate step k reads */
                for (size_t i = 0; i < d; i++)
                    xn[i] = x[i] - p->eta * lam[i] * xs[i];
                for (size_t i = 0; i < d; i++)
                    sum[(k + 1) * d + i] += xn[i];
            }
        }
    }
    /* jackknife over batches: removes the O(1/R) bias of the ratio estimate */
    double *tot = sums + B * n, *loo = tot + n;
    for (size_t b = 0; b < B; b++)
        for (size_t j = 0; j < n; j++)
            tot[j] += sums[b * n + j];
    double mfull, cfull;
    if (fit(tot, (double)(B * per), lam, d, K, &mfull, &cfull)) {
        st = AM_EDOM;
        goto done;
    }
    am_stats sm = {0}, sc = {0};
    for (size_t b = 0; b < B; b++) {
        for (size_t j = 0; j < n; j++)
            loo[j] = tot[j] - sums[b * n + j];
        double m, c;
        if (fit(loo, (double)((B - 1) * per), lam, d, K, &m, &c)) {
            st = AM_EDOM;
            goto done;
        }
        am_stats_push(&sm, m);
        am_stats_push(&sc, -c);
    }
    double bb = (double)B;
    out->momentum = bb * mfull - (bb - 1) * sm.mean;
    out->step = -bb * cfull - (bb - 1) * sc.mean;
    out->momentum_sem = sqrt((bb - 1) / bb * sm.m2);
    out->step_sem = sqrt((bb - 1) / bb * sc.m2);
    out->momentum_pred = 1.0 - 1.0 / p->workers;
    out->step_pred = p->eta / p->workers;
done:
    free(lam);
    free(ring);
    free(sums);
    return st;
}
