/*
 * am_datadist.c -- uniform row draws from a data set's distribution (see am_datadist.h).
 */
#include "am_datadist.h"

#include <string.h>

size_t am_datadist_index(am_rng *rng, size_t n)
{
    uint64_t nn = (uint64_t)n;
    unsigned __int128 m = (unsigned __int128)am_rng_u64(rng) * nn;
    uint64_t low = (uint64_t)m;
    if (low < nn) {
        uint64_t t = (0 - nn) % nn; /* 2^64 mod n */
        while (low < t) {
            m = (unsigned __int128)am_rng_u64(rng) * nn;
            low = (uint64_t)m;
        }
    }
    return (size_t)(m >> 64);
}

void am_datadist_draw(const am_problem *p, am_rng *rng, double *x)
{
    const am_datamoments *m = p->data;
    am_datamoments_row(m, am_datadist_index(rng, m->n), x);
}

void am_datadist_draw_eigen(const am_problem *p, am_rng *rng, double *y)
{
    const am_datamoments *m = p->data;
    size_t d = p->dim, r = am_datadist_index(rng, m->n);
    memset(y, 0, d * sizeof *y);
    for (size_t i = 0; i < d; i++) {
        double xi = am_datamoments_value(m, r, i);
        const double *qi = p->q + i * d;
        for (size_t j = 0; j < d; j++)
            y[j] += qi[j] * xi;
    }
}
