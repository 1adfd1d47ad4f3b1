/*
 * am_wallclock_sweep.c -- the least-squares wallclock study over worker counts, runtime laws
 * and seeds, reduced per (law, P, variant) to means and standard errors over the seeds next to
 * the closed forms (am_wallclock_sweep.h).
 */
#include "am_wallclock_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t am_wallclock_sweep_k(const am_wallclock_sweep_variant *v, size_t workers)
{
    if (v->k_div == 0) return v->k;
    size_t k = workers / v->k_div;
    return k < 1 ? 1 : k;
}

void am_wallclock_sweep_result_free(am_wallclock_sweep_result *res)
{
    if (!res) return;
    free(res->cells);
    res->cells = NULL;
    res->ncells = 0;
}

static void push_finite(am_stats *s, double x)
{
    if (isfinite(x)) am_stats_push(s, x);
}

am_status am_wallclock_sweep_run(const am_wallclock_sweep *sw, am_wallclock_sweep_result *res,
                                 char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    const am_wallclock_params *b = &sw->base;
    if (b->objective != AM_WALLCLOCK_LSQ)
        return am_common_fail(err, errlen, AM_EINVAL, "the sweep runs the lsq objective only");
    if (!sw->workers || sw->nworkers == 0 || !sw->laws || sw->nlaws == 0 || sw->seeds < 1 ||
        !sw->variants || sw->nvariants == 0)
        return am_common_fail(err, errlen, AM_EINVAL,
                              "needs worker counts, laws, variants and seeds >= 1");
    const size_t nv = sw->nvariants, nw = sw->nworkers;
    am_wallclock_variant *vars = malloc(nv * sizeof *vars);
    res->ncells = sw->nlaws * nw * nv;
    res->cells = calloc(res->ncells, sizeof *res->cells);
    if (!vars || !res->cells) {
        free(vars);
        return am_common_fail(err, errlen, AM_ENOMEM, NULL);
    }
    /* every K must fit every P before anything runs */
    for (size_t wi = 0; wi < nw; wi++)
        for (size_t v = 0; v < nv; v++) {
            size_t k = am_wallclock_sweep_k(&sw->variants[v], sw->workers[wi]);
            if (am_runtime_variant_check(sw->variants[v].variant, sw->workers[wi], k)) {
                free(vars);
                char why[160];
                snprintf(why, sizeof why, "K = %zu of %s does not fit P = %zu", k,
                         am_runtime_variant_name(sw->variants[v].variant), sw->workers[wi]);
                return am_common_fail(err, errlen, AM_EINVAL, why);
            }
        }
    am_status st = AM_OK;
    for (size_t li = 0; li < sw->nlaws && st == AM_OK; li++)
        for (size_t wi = 0; wi < nw && st == AM_OK; wi++) {
            const size_t P = sw->workers[wi];
            am_wallclock_sweep_cell *cells = res->cells + (li * nw + wi) * nv;
            for (size_t v = 0; v < nv; v++) {
                vars[v].variant = sw->variants[v].variant;
                vars[v].k = am_wallclock_sweep_k(&sw->variants[v], P);
                am_wallclock_sweep_cell *c = &cells[v];
                c->law = li;
                c->workers = P;
                c->variant = vars[v].variant;
                c->k = vars[v].k;
                c->batch = am_runtime_variant_batch(c->variant, P, c->k);
                double x;
                c->time_per_update_dutta =
                    am_runtime_time_per_iter(&sw->laws[li], c->variant, P, c->k, &x) ? NAN : x;
                c->p0_dutta = am_runtime_p_fresh(&sw->laws[li], c->variant, P, c->k, &x) ? NAN : x;
            }
            am_wallclock_params wp = *b;
            wp.workers = P;
            wp.runtime = sw->laws[li];
            wp.variants = vars;
            wp.nvariants = nv;
            for (size_t s = 0; s < sw->seeds && st == AM_OK; s++) {
                wp.seed = b->seed + s;
                am_wallclock_result r;
                st = am_wallclock_run(&wp, &r, err, errlen);
                if (st) {
                    am_wallclock_result_free(&r);
                    break;
                }
                for (size_t v = 0; v < nv; v++) {
                    const am_wallclock_curve *w = &r.curves[v];
                    am_wallclock_sweep_cell *c = &cells[v];
                    /* stationary: past the first quarter of the saved updates */
                    size_t g0 = (r.ngrid - 1) / 4, g1 = r.ngrid - 1;
                    if (r.update[g1] > r.update[g0])
                        push_finite(&c->time_per_update,
                                    (w->wallclock_mean[g1] - w->wallclock_mean[g0]) /
                                        (double)(r.update[g1] - r.update[g0]));
                    push_finite(&c->floor_measured, w->floor_measured);
                    push_finite(&c->decay_measured, w->decay_measured);
                    push_finite(&c->p0, w->p0);
                    push_finite(&c->gamma, w->gamma);
                    push_finite(&c->floor_dutta_async, w->floor_dutta_async);
                    push_finite(&c->decay_dutta_async, w->decay_dutta_async);
                    c->floor_exact = w->floor_exact;
                    c->floor_dutta = w->floor_dutta;
                    c->decay_exact = w->decay_exact;
                    c->decay_dutta = w->decay_dutta;
                    c->diverged += w->diverged;
                }
                am_wallclock_result_free(&r);
            }
        }
    free(vars);
    return st;
}
