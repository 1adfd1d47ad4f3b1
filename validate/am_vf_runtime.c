/*
 * am_vf_runtime.c -- the check family runtime: the parameter-server simulator's time per iteration
 * and mean staleness for the six variants (P = 8, exp:1 runtimes) against the closed forms of
 * theory/am_runtime.h (order statistics, renewal, Little's law; theory.md section 7).
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_ps.h"

/* P = 8 learners with exp:1 runtimes: the simulated time per iteration and mean staleness of
 * every variant (K = 4 for the K-variants) against the closed forms of theory/am_runtime.h;
 * the mean over replicas of per-replica averages, tolerance z = 4 standard errors. */
am_status am_vf_runtime_run(const am_validate_check *c, const am_validate_opts *o,
                            am_check_result *rows, size_t *nrows)
{
    static const char *const specs[6] = {"sync",  "k-sync:4",  "k-batch-sync:4",
                                         "async", "k-async:4", "k-batch-async:4"};
    const size_t P = 8;
    size_t R = o->level == AM_VALIDATE_QUICK ? 100 : 1000;
    const uint64_t burnin = 200, n = 2000;
    size_t nr = 0;
    for (int i = 0; i < 6; i++) {
        am_ps_params pp = am_ps_params_default();
        char err[128];
        pp.workers = P;
        pp.seed = o->seed;
        if (am_runtime_parse("exp:1", &pp.runtime, err, sizeof err) ||
            am_runtime_variant_parse_spec(specs[i], &pp.variant, &pp.k, err, sizeof err))
            return AM_EINVAL;
        am_stats stats[3];
        am_status st = am_ps_ensemble(&pp, R, burnin, n, o->threads, stats);
        if (st) return st;
        for (int which = 0; which < 2; which++) {
            double pred;
            st = which ? am_runtime_mean_staleness(&pp.runtime, pp.variant, P, pp.k, &pred)
                       : am_runtime_time_per_iter(&pp.runtime, pp.variant, P, pp.k, &pred);
            if (st == AM_EDOM) continue; /* no closed form: nothing to check */
            if (st) return st;
            am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr,
                                                  which ? "runtime-staleness" : "runtime-time");
            if (!row) return AM_EINVAL; /* max_rows of the table too small */
            am_check_set_params(row, "%s P=%zu runtime=exp:1 updates %llu..%llu R=%zu", specs[i], P,
                                (unsigned long long)burnin, (unsigned long long)(burnin + n), R);
            const am_stats *sv = &stats[which ? 2 : 0];
            row->measured = sv->mean;
            row->measured_sem = am_stats_sem(sv);
            row->predicted = am_vf_util_predict(o, pred, fabs(pred));
            row->replicas_used = (double)R;
            am_check_add_note(row, which ? "mean staleness of the gradients (Little's law)"
                                         : "mean time per server update (order statistics, "
                                           "renewal)");
            am_check_decide_equiv(row, AM_VF_Z, 0, 0, c->margin * fabs(row->predicted));
        }
    }
    *nrows = nr;
    return AM_OK;
}
