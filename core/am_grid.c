/*
 * am_grid.c -- saved times t_g = g T/(n-1) and their step indices k_g = round(t_g/h).
 */
#include "am_grid.h"

#include <math.h>

void am_grid_times(const am_grid *grid, double *t)
{
    if (grid->n == 1) {
        t[0] = grid->horizon;
        return;
    }
    for (size_t g = 0; g < grid->n; g++)
        t[g] = grid->horizon * (double)g / (double)(grid->n - 1);
}

am_status am_grid_steps(const am_grid *grid, double h, uint64_t *k)
{
    if (!(h > 0) || !(grid->horizon >= 0) || grid->n == 0) return AM_EINVAL;
    double last = round(grid->horizon / h);
    if (!(last < 9.0e18)) return AM_EINVAL;
    for (size_t g = 0; g < grid->n; g++) {
        double tg =
            grid->n == 1 ? grid->horizon : grid->horizon * (double)g / (double)(grid->n - 1);
        k[g] = (uint64_t)llround(tg / h);
    }
    return AM_OK;
}
