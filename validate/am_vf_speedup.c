/*
 * am_vf_speedup.c -- the check family speedup: Liu et al.'s linear acceleration. With P
 * workers every gradient is P - 1 updates old (constant delay tau = P - 1); if tau obeys the
 * delay condition the number of updates to a target error is that of synchronous MSGD,
 * N_P = N_1, so P workers do the work in N_P / P updates each: a speed-up
 *   S = P N_1 / N_P,  S / P = N_1 / N_P = 1.
 * Past the critical delay tau_c of the linear recursion (its radial mode, curvature
 * 2 lambda_1, theory/am_theory.h) the iterate is unstable and no run converges: S collapses.
 *
 * Rows (Gaussian data, d = 4, lambda = (4, 3, 2, 1), eta = 2e-4, from the saddle e_2,
 * target err <= 0.1, mu in {0, 0.5, 0.9}):
 *   speedup           at tau = tau_c/8 and tau_c/2: N_1 / N_P, N the mean first saved step
 *                     with err <= eps over the replicas, the delayed and the synchronous
 *                     ensembles on common random numbers (the same Philox streams), its
 *                     standard error by the delta method on the paired replicas; against 1
 *   speedup-collapse  at tau = 3 tau_c: the fraction of replicas that end converged (finite,
 *                     and their mean err over the second half of t in [0, 20] <= eps);
 *                     against 0 (undelayed: 1), binomial standard error (at least 1/R)
 * Power: predictions shifted by 0.2 (the scale of both rows is 1, the linear speed-up).
 */
#include "am_validate_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../theory/am_theory.h"

#define SPEEDUP_ETA 2e-4
#define SPEEDUP_EPS 0.1
#define SPEEDUP_GRID 4001     /* saved points on the horizon of a speedup row */
#define SPEEDUP_T_COLLAPSE 20 /* horizon of a collapse row in t = k eta */

/* The per-replica summaries of one ensemble (am_msgd_params.summary): [0] mean err over the
 * second half, [1] first saved index with err <= eps as a fraction of the horizon, [2]
 * diverged; R replicas, T the horizon in t, n saved points. */
static am_status speedup_run(const am_problem *p, double mu, unsigned tau, double T, size_t n,
                             size_t R, const am_validate_opts *o, am_ensemble_result **er)
{
    am_msgd_params mp = am_vf_util_msgd(SPEEDUP_ETA, mu, o->seed, 2, 0);
    mp.summary = 1;
    mp.eps = SPEEDUP_EPS;
    am_status st = am_delay_make(tau ? AM_DELAY_CONST : AM_DELAY_NONE, (double)tau, &mp.delay);
    if (st) return st;
    uint64_t steps = (uint64_t)llround(T / SPEEDUP_ETA);
    uint64_t *k = malloc(n * sizeof *k);
    if (!k) return AM_ENOMEM;
    for (size_t g = 0; g < n; g++)
        k[g] = (uint64_t)g * steps / (n - 1);
    am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    if (m) {
        am_ensemble_params ep = {R, o->threads, 1};
        st = am_ensemble_run(am_msgd_model(m), k, n, &ep, er);
        am_msgd_free(m);
    }
    free(k);
    return st;
}

/* N_1 / N_P from the paired first-passage fractions of the synchronous (a) and the delayed (b)
 * ensembles (the same horizon: the fractions stand for the steps), with its delta-method
 * standard error; *censored counts the replicas of either that did not reach eps. */
static void speedup_ratio(const am_ensemble_result *a, const am_ensemble_result *b, size_t R,
                          double *ratio, double *sem, size_t *censored)
{
    size_t ns = a->nsummary, n = 0;
    double sa = 0, sb = 0;
    *censored = 0;
    for (size_t r = 0; r < R; r++) {
        double x = a->summary[r * ns + 1], y = b->summary[r * ns + 1];
        if (isnan(x) || isnan(y)) {
            ++*censored;
            continue;
        }
        sa += x;
        sb += y;
        n++;
    }
    if (n < 2) {
        *ratio = *sem = NAN;
        return;
    }
    double ma = sa / (double)n, mb = sb / (double)n, q = ma / mb, v = 0;
    for (size_t r = 0; r < R; r++) {
        double x = a->summary[r * ns + 1], y = b->summary[r * ns + 1];
        if (isnan(x) || isnan(y)) continue;
        double e = x - q * y; /* the linearised ratio's residual */
        v += e * e;
    }
    *ratio = q;
    *sem = sqrt(v / (double)(n - 1) / (double)n) / mb;
}

/* The fraction of replicas of er that end converged (finite, mean err over the second half
 * <= eps), with its binomial standard error (at least 1/R: none or all converged). */
static void speedup_converged(const am_ensemble_result *er, size_t R, double *f, double *sem)
{
    size_t ns = er->nsummary, c = 0;
    for (size_t r = 0; r < R; r++)
        c += er->summary[r * ns + 2] == 0 && er->summary[r * ns] <= SPEEDUP_EPS;
    *f = (double)c / (double)R;
    *sem = fmax(sqrt(*f * (1 - *f) / (double)R), 1.0 / (double)R);
}

/* The two speedup rows of momentum mu, at tau_c/8 and tau_c/2 (tau_c: radial mode). */
static am_status speedup_rows(const am_validate_check *c, const am_validate_opts *o,
                              const am_problem *p, double mu, double tc, size_t R,
                              am_check_result *rows, size_t *nr)
{
    double T = 20 * (1 - mu) + 1; /* about 4x the synchronous time to eps */
    am_ensemble_result *sync = NULL;
    am_status st = speedup_run(p, mu, 0, T, SPEEDUP_GRID, R, o, &sync);
    static const double frac[2] = {0.125, 0.5};
    for (int j = 0; j < 2 && !st; j++) {
        unsigned tau = (unsigned)floor(frac[j] * tc);
        am_ensemble_result *del = NULL;
        st = speedup_run(p, mu, tau, T, SPEEDUP_GRID, R, o, &del);
        if (st) break;
        am_check_result *row = am_vf_util_row(rows, c->max_rows, nr, "speedup");
        if (!row) {
            am_ensemble_result_free(del);
            st = AM_EINVAL; /* max_rows of the table too small */
            break;
        }
        size_t censored;
        speedup_ratio(sync, del, R, &row->measured, &row->measured_sem, &censored);
        am_check_set_params(row,
                            "mu=%g P=%u (const delay tau=%u = %g tau_c, tau_c=%g) gaussian d=4 "
                            "eta=%g e_2 eps=%g T=%g R=%zu",
                            mu, tau + 1, tau, frac[j], tc, SPEEDUP_ETA, SPEEDUP_EPS, T, R);
        row->predicted = am_vf_util_predict(o, 1.0, 1.0);
        row->replicas_used = (double)R;
        double n1 = 0;
        for (size_t r = 0; r < R; r++)
            n1 += sync->summary[r * sync->nsummary + 1] * T / SPEEDUP_ETA / (double)R;
        am_check_add_note(row,
                          "S/P = N_1/N_P, N the mean updates to err <= eps (N_1 = %.0f); "
                          "speed-up S = %.3g at P = %u",
                          n1, row->measured * (tau + 1), tau + 1);
        am_check_decide_equiv(row, AM_VF_Z, 0, 0, c->margin);
        if (censored) {
            row->verdict = AM_CHECK_INCONCLUSIVE;
            am_check_add_note(row, "%zu replicas did not reach eps by T", censored);
        }
        am_ensemble_result_free(del);
    }
    am_ensemble_result_free(sync);
    return st;
}

/* The collapse row of momentum mu at tau = 3 tau_c. */
static am_status speedup_collapse_row(const am_validate_check *c, const am_validate_opts *o,
                                      const am_problem *p, double mu, double tc, size_t R,
                                      am_check_result *rows, size_t *nr)
{
    unsigned tau = (unsigned)ceil(3 * tc);
    am_ensemble_result *er = NULL;
    am_status st = speedup_run(p, mu, tau, SPEEDUP_T_COLLAPSE, 201, R, o, &er);
    if (st) return st;
    am_check_result *row = am_vf_util_row(rows, c->max_rows, nr, "speedup-collapse");
    if (!row) {
        am_ensemble_result_free(er);
        return AM_EINVAL;
    }
    speedup_converged(er, R, &row->measured, &row->measured_sem);
    am_ensemble_result_free(er);
    am_check_set_params(row,
                        "mu=%g P=%u (const delay tau=%u = 3 tau_c, tau_c=%g) gaussian d=4 eta=%g "
                        "e_2 eps=%g T=%d R=%zu",
                        mu, tau + 1, tau, tc, SPEEDUP_ETA, SPEEDUP_EPS, SPEEDUP_T_COLLAPSE, R);
    row->delayed = 1;
    row->predicted = am_vf_util_predict(o, o->undelayed ? 1.0 : 0.0, 1.0);
    row->replicas_used = (double)R;
    am_check_add_note(row, "fraction of runs ending converged (finite, mean err over t in "
                           "[10, 20] <= eps); past tau_c the linear recursion is unstable");
    am_check_decide_equiv(row, AM_VF_Z, 0, 0, c->margin);
    return AM_OK;
}

am_status am_vf_speedup_run(const am_validate_check *c, const am_validate_opts *o,
                            am_check_result *rows, size_t *nrows)
{
    static const double mus[3] = {0, 0.5, 0.9};
    size_t R = o->level == AM_VALIDATE_QUICK ? 250 : 2000, nr = 0;
    am_problem *p = am_vf_util_problem(AM_DIST_GAUSSIAN);
    if (!p) return AM_ENOMEM;
    am_status st = AM_OK;
    for (int i = 0; i < 3 && !st; i++) {
        double tc;
        st = am_theory_stability_tau_c(mus[i],
                                       SPEEDUP_ETA * am_theory_mode_curvature(p, p->dim - 1), &tc);
        if (!st) st = speedup_rows(c, o, p, mus[i], tc, R, rows, &nr);
        if (!st) st = speedup_collapse_row(c, o, p, mus[i], tc, R, rows, &nr);
    }
    am_problem_free(p);
    *nrows = nr;
    return st;
}
