/*
 * am_vf_asyncmom.c -- the check family asyncmom: stale gradients with M workers and geometric
 * staleness of mean M - 1 act on the mean iterate as heavy ball with momentum 1 - 1/M and step
 * eta/M (theory.md section 6; montecarlo/am_asyncmom.h), jackknife standard errors.
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_asyncmom.h"

/* Stale gradient descent on a quadratic with geometric staleness of mean M - 1: the mean
 * iterate follows heavy ball with momentum 1 - 1/M and step eta/M (montecarlo/am_asyncmom.h).
 * Jackknife standard errors over batches of replicas; tolerance z = 4 standard errors. */
am_status am_vf_asyncmom_run(const am_validate_check *c, const am_validate_opts *o,
                             am_check_result *rows, size_t *nrows)
{
    static const double workers[3] = {2, 4, 8};
    size_t nr = 0;
    for (int i = 0; i < 3; i++) {
        am_asyncmom_params ap = am_asyncmom_params_default();
        ap.workers = workers[i];
        ap.seed = o->seed;
        if (o->level == AM_VALIDATE_QUICK) ap.replicas = 1000;
        am_asyncmom_result r;
        am_status st = am_asyncmom_measure(&ap, &r);
        if (st) return st;
        for (int which = 0; which < 2; which++) {
            am_check_result *row = am_vf_util_row(rows, c->max_rows, &nr,
                                                  which ? "asyncmom-step" : "asyncmom-momentum");
            if (!row) return AM_EINVAL; /* max_rows of the table too small */
            am_check_set_params(row,
                                "M=%g geometric staleness (mean %g) d=%zu eta=%g K=%llu R=%zu "
                                "jackknife B=%zu",
                                ap.workers, ap.workers - 1, ap.dim, ap.eta,
                                (unsigned long long)ap.steps, ap.replicas, ap.batches);
            row->measured = which ? r.step : r.momentum;
            row->measured_sem = which ? r.step_sem : r.momentum_sem;
            /* undelayed (the power run vs_undelayed): one worker, momentum 0 and step eta */
            double pred = which ? r.step_pred : r.momentum_pred;
            if (o->undelayed) pred = which ? ap.eta : 0.0;
            row->delayed = 1;
            row->predicted =
                am_vf_util_predict(o, pred, fabs(which ? r.step_pred : r.momentum_pred));
            row->replicas_used = (double)ap.replicas;
            am_check_add_note(row, "%s; Mitliagkas et al.: momentum 1 - 1/M, step eta/M",
                              which ? "fitted step -c of D_k = m D_{k-1} + c A x_k"
                                    : "fitted m of D_k = m D_{k-1} + c A x_k");
            am_check_decide_equiv(row, AM_VF_Z, 0, 0, c->margin * fabs(row->predicted));
        }
    }
    *nrows = nr;
    return AM_OK;
}
