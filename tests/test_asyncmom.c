/*
 * test_asyncmom.c -- asynchrony as momentum (montecarlo/am_asyncmom.h): the momentum fitted
 * on the mean trajectory of stale gradient descent against 1 - 1/M, the step against eta/M
 * (tolerance 5 standard errors over batches), and the synchronous case M = 1.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../montecarlo/am_asyncmom.h"

Test(asyncmom, momentum_is_one_minus_one_over_m)
{
    const double ms[] = {2, 4, 8};
    for (int i = 0; i < 3; i++) {
        am_asyncmom_params p = am_asyncmom_params_default();
        p.workers = ms[i];
        p.replicas = 2000;
        am_asyncmom_result r;
        cr_assert_eq(am_asyncmom_measure(&p, &r), AM_OK);
        cr_assert(fabs(r.momentum_pred - (1 - 1 / ms[i])) < 1e-15);
        cr_assert(fabs(r.momentum - r.momentum_pred) <= 5 * r.momentum_sem,
                  "M=%g eta=%g: momentum %.6f +- %.2g, predicted %.6f", ms[i], p.eta, r.momentum,
                  r.momentum_sem, r.momentum_pred);
        cr_assert(fabs(r.step - r.step_pred) <= 5 * r.step_sem,
                  "M=%g eta=%g: step %.6g +- %.2g, predicted %.6g", ms[i], p.eta, r.step,
                  r.step_sem, r.step_pred);
        cr_assert(r.momentum_sem < 0.02, "M=%g: momentum_sem %.3g too large to be a check", ms[i],
                  r.momentum_sem);
    }
}

Test(asyncmom, synchronous_has_no_momentum)
{
    am_asyncmom_params p = am_asyncmom_params_default();
    p.workers = 1;
    p.replicas = 40;
    am_asyncmom_result r;
    cr_assert_eq(am_asyncmom_measure(&p, &r), AM_OK);
    /* no staleness: D_k = -eta A x_k exactly, so m = 0 and -c = eta to rounding */
    cr_assert(fabs(r.momentum) < 1e-9, "M=1: momentum %.3g", r.momentum);
    cr_assert(fabs(r.step - p.eta) < 1e-9 * p.eta, "M=1: step %.17g", r.step);
    p.batches = 1;
    cr_assert_eq(am_asyncmom_measure(&p, &r), AM_EINVAL);
}
