/*
 * am_stats.h -- streaming sufficient statistics (count n, mean, M2 = sum (x - mean)^2).
 *
 * Welford's update for one value and Chan, Golub & LeVeque's merge of two summaries:
 *   n = na + nb, delta = mean_b - mean_a,
 *   mean = mean_a + delta nb / n,  M2 = M2_a + M2_b + delta^2 na nb / n.
 * Merging in a fixed order makes a parallel reduction independent of the thread count.
 */
#ifndef AM_STATS_H
#define AM_STATS_H

#include <math.h>
#include <stdint.h>

typedef struct {
    double n;
    double mean;
    double m2;
} am_stats;

/* Adds one observation. */
static inline void am_stats_push(am_stats *s, double x)
{
    s->n += 1.0;
    double delta = x - s->mean;
    s->mean += delta / s->n;
    s->m2 += delta * (x - s->mean);
}

/* Merges b into a (Chan et al.). */
static inline void am_stats_merge(am_stats *a, const am_stats *b)
{
    if (b->n == 0) return;
    if (a->n == 0) {
        *a = *b;
        return;
    }
    double n = a->n + b->n;
    double delta = b->mean - a->mean;
    a->mean += delta * b->n / n;
    a->m2 += b->m2 + delta * delta * a->n * b->n / n;
    a->n = n;
}

/* Unbiased sample variance (NaN for fewer than two observations). */
static inline double am_stats_var(const am_stats *s)
{
    return s->n > 1 ? s->m2 / (s->n - 1.0) : NAN;
}

/* Standard error of the mean (NaN for fewer than two observations). */
static inline double am_stats_sem(const am_stats *s)
{
    return s->n > 1 ? sqrt(s->m2 / (s->n - 1.0) / s->n) : NAN;
}

#endif
