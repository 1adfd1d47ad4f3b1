/*
 * am_vf_async_bound.c -- the check family async-bound: Dutta et al.'s async / K-async decay
 * bound 1 - eta c (1 - gamma + p0/2) on strongly convex streaming least squares (theory.md
 * section 7; montecarlo/am_wallclock.h), with p0 and gamma measured by the parameter-server
 * simulator. One-sided: the measured decay must be at least as fast as the bound's.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../montecarlo/am_wallclock.h"

/* P = 8 learners, exp:1 runtimes, d = 4, L = 2, c = 0.5, sigma = 0.5, eta = 0.02, N = 2000
 * updates (am_wallclock_params_default) for Async and K-async (K = 4), S independent seeds
 * (4 at --quick, 8 in full), 201 saved updates. Measured: the decay rate per update r = 1 -
 * decay_measured, mean and standard error over the seeds; bound: r_b = eta c (1 - gamma + p0/2),
 * mean over the seeds of each seed's bound from its measured p0 and gamma, with its standard error.
 * The claim r >= r_b is decided one-sidedly with the equivalence interval and band of am_check.h (h
 * = z sqrt(s_m^2 + s_p^2), tol = margin r_b): PASS if r - h >= r_b - tol, FAIL if r + h < r_b -
 * tol, INCONCLUSIVE otherwise. The scale of a power test's shift is the measured r, so
 * predict_scale 0, predict_shift 1.2 claims a decay 20 % faster than measured. */
am_status am_vf_async_bound_run(const am_validate_check *c, const am_validate_opts *o,
                                am_check_result *rows, size_t *nrows)
{
    static const char *const specs[2] = {"async", "k-async:4"};
    size_t S = o->level == AM_VALIDATE_QUICK ? 4 : 8;
    size_t R = o->level == AM_VALIDATE_QUICK ? 100 : 200;
    size_t nr = 0;
    for (int i = 0; i < 2; i++) {
        am_wallclock_variant v;
        char err[256];
        if (am_runtime_variant_parse_spec(specs[i], &v.variant, &v.k, err, sizeof err))
            return AM_EINVAL;
        am_stats rate = {0}, bound = {0}, p0 = {0}, gamma = {0};
        am_wallclock_params wp = am_wallclock_params_default();
        wp.variants = &v;
        wp.nvariants = 1;
        wp.replicas = R;
        wp.ngrid = 201; /* a saved point every 10 updates: enough points above the floor */
        wp.threads = o->threads;
        for (size_t s = 0; s < S; s++) {
            am_wallclock_result res;
            wp.seed = o->seed + 1000 * (uint64_t)s;
            am_status st = am_wallclock_run(&wp, &res, err, sizeof err);
            if (st) {
                am_wallclock_result_free(&res);
                return st;
            }
            const am_wallclock_curve *w = &res.curves[0];
            am_stats_push(&rate, 1 - w->decay_measured);
            am_stats_push(&bound, 1 - w->decay_dutta_async);
            am_stats_push(&p0, w->p0);
            am_stats_push(&gamma, w->gamma);
            am_wallclock_result_free(&res);
        }
        am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr, "async-bound");
        if (!row) return AM_EINVAL; /* max_rows of the table too small */
        am_check_set_params(row,
                            "%s P=8 runtime=exp:1 d=%zu L=%g c=%g sigma=%g eta=%g N=%llu R=%zu "
                            "seeds=%zu",
                            specs[i], wp.dim, wp.lmax, wp.lmin, wp.sigma, wp.eta,
                            (unsigned long long)wp.updates, R, S);
        row->measured = rate.mean;
        row->measured_sem = am_stats_sem(&rate);
        row->predicted = am_vf_util_predict(o, bound.mean, rate.mean);
        row->predicted_sem = am_stats_sem(&bound);
        row->replicas_used = (double)(R * S);
        am_check_add_note(row,
                          "one-sided: measured decay rate per update must be >= the bound "
                          "eta c (1 - gamma + p0/2); p0 = %.4g +- %.2g (K/P = %.4g), gamma = "
                          "%.4g +- %.2g over %zu seeds",
                          p0.mean, am_stats_sem(&p0),
                          v.variant == AM_VARIANT_ASYNC ? 1.0 / 8 : (double)v.k / 8, gamma.mean,
                          am_stats_sem(&gamma), S);
        am_status st = am_check_decide_equiv(row, AM_VF_Z, 0, 0, c->margin * fabs(row->predicted));
        if (st) return st;
        /* the one-sided reading of the same interval and band */
        am_vf_util_one_sided(row, 1);
    }
    *nrows = nr;
    return AM_OK;
}
