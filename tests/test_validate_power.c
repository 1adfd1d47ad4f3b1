/*
 * test_validate_power.c -- the equivalence rule of validate/am_check.h and the power of every
 * check family of validate/am_validate.h and of the converge order check at the --quick sizes:
 * the same run decided against the theory's prediction must PASS, and against a deliberately
 * wrong one (order 0.5 instead of 1, a prediction 20 % too small, a gap to the SDE as large as
 * the gap to the ODE) must FAIL. The wrong predictions go through am_validate_opts
 * (predict_scale, predict_shift) and am_converge_params.predicted_order, so the checks' own
 * code decides; nothing of a check is repeated here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "../theory/am_delaycorr.h"
#include "../theory/am_theory.h"
#include "../validate/am_check.h"
#include "../validate/am_converge.h"
#include "../validate/am_validate.h"
#include "../validate/am_validate_impl.h"
#include "test_util.h"

/* ---- the rule itself, against hand-computed intervals ---- */

static am_check_result vp_row(double m, double sem, double p)
{
    am_check_result r;
    am_check_init(&r, "rule");
    r.measured = m;
    r.measured_sem = sem;
    r.predicted = p;
    r.replicas_used = 100;
    return r;
}

Test(validate_power, equivalence_rule)
{
    /* interval 1.05 +- 2*0.01 = [1.03, 1.07] inside the band 1 +- 0.1: PASS */
    am_check_result r = vp_row(1.05, 0.01, 1.0);
    cr_assert_eq(am_check_decide_equiv(&r, 2.0, 0.0, 0.02, 0.08), AM_OK);
    cr_expect_eq(r.verdict, AM_CHECK_PASS, "[1.03, 1.07] in [0.9, 1.1]: %s",
                 am_check_verdict_name(r.verdict));
    cr_expect(fabs(r.tolerance - 0.1) < 1e-15 && fabs(r.halfwidth - 0.02) < 1e-15,
              "tol %.17g halfwidth %.17g", r.tolerance, r.halfwidth);
    cr_expect(fabs(r.mdd - 0.12) < 1e-15, "mdd = tol + h = 0.12, got %.17g", r.mdd);
    cr_expect_str_eq(r.rule, "equivalence");
    cr_expect_eq(r.replicas_needed, 0.0);
    /* [1.18, 1.22] entirely above 1.1: FAIL */
    r = vp_row(1.2, 0.01, 1.0);
    am_check_decide_equiv(&r, 2.0, 0.0, 0.0, 0.1);
    cr_expect_eq(r.verdict, AM_CHECK_FAIL, "[1.18, 1.22] outside [0.9, 1.1]");
    /* [1.05, 1.25] straddles 1.1: INCONCLUSIVE; decided once 2 s sqrt(100/R) <= room
       |0.1 - 0.15| = 0.05, i.e. R = 100 (0.1/0.05)^2 = 400, times the margin 1.5 */
    r = vp_row(1.15, 0.05, 1.0);
    am_check_decide_equiv(&r, 2.0, 0.0, 0.0, 0.1);
    cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE);
    cr_expect(fabs(r.replicas_needed - 600) <= 1, "replicas needed %g, want 600",
              r.replicas_needed);
    /* a deterministic bias widens the interval and is not reduced by replicas */
    r = vp_row(1.0, 0.0, 1.0);
    am_check_decide_equiv(&r, 3.0, 0.2, 0.0, 0.1);
    cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE, "[0.8, 1.2] vs [0.9, 1.1]");
    cr_expect_eq(r.replicas_needed, 0.0, "no random part: no replicas estimate");
    /* an exact value on the band's edge passes (closed band), beyond it fails */
    r = vp_row(1.5, 0.0, 1.0);
    am_check_decide_equiv(&r, 3.0, 0.0, 0.0, 0.5);
    cr_expect_eq(r.verdict, AM_CHECK_PASS);
    r = vp_row(1.625, 0.0, 1.0);
    am_check_decide_equiv(&r, 3.0, 0.0, 0.0, 0.5);
    cr_expect_eq(r.verdict, AM_CHECK_FAIL);
    r = vp_row(NAN, 0.01, 1.0);
    am_check_decide_equiv(&r, 3.0, 0.0, 0.0, 0.1);
    cr_expect_eq(r.verdict, AM_CHECK_INCONCLUSIVE);
    cr_expect_eq(am_check_decide_equiv(&r, 0.0, 0.0, 0.0, 0.1), AM_EINVAL);
    cr_expect_eq(am_check_decide_equiv(&r, 3.0, -1.0, 0.0, 0.1), AM_EINVAL);
    cr_expect_eq(am_check_decide_equiv(&r, 3.0, 0.0, 0.0, -0.1), AM_EINVAL);
}

/* ---- the bounded row buffer ---- */

Test(validate_power, row_buffer_is_bounded)
{
    const am_validate_check *c = am_validate_find("delay");
    cr_assert_not_null(c);
    am_validate_check small = *c;
    small.max_rows = 1; /* the family writes 2 rows */
    am_check_result rows[2];
    size_t n = 0;
    am_validate_opts o = am_validate_opts_default();
    o.threads = 1;
    cr_expect_eq(am_validate_run(&small, &o, rows, &n), AM_EINVAL, "overflow must be refused");
    cr_expect_leq(n, 1, "wrote %zu rows into a buffer of 1", n);
    am_validate_report *rep = NULL;
    cr_assert_eq(am_validate_run_all(&o, c, &rep, NULL), AM_OK);
    size_t cap = 0;
    for (size_t i = 0; i < am_validate_checks_len; i++)
        cap += am_validate_checks[i].max_rows;
    cr_expect_eq(rep->cap, cap);
    cr_expect_eq(rep->n, 2);
    cr_expect_eq(rep->count[AM_CHECK_PASS] + rep->count[AM_CHECK_FAIL] +
                     rep->count[AM_CHECK_INCONCLUSIVE],
                 2);
    am_validate_report_free(rep);
    am_validate_report_free(NULL);
}

/* ---- power per family at --quick ---- */

/* A wrong prediction (predict_scale, predict_shift) and the rows it applies to (row == NULL: every
 * row of the family; else only the rows of that name). */
typedef struct {
    double scale, shift;
    const char *row;
} vp_variant;

/* Runs family name at --quick with the right prediction and with each wrong one; every row must
 * not FAIL against the right one and at least min_pass rows must PASS; against a wrong one that
 * applies to it no row may PASS, and every row that passed must FAIL against at least one of
 * the wrong ones that apply to it. Rows whose prediction a scaling leaves unchanged (a zero
 * prediction) are skipped for that perturbation; a shift applies to every row it names. */
static void vp_power_v(const char *name, const vp_variant *v, size_t nv, size_t min_pass)
{
    const am_validate_check *c = am_validate_find(name);
    cr_assert_not_null(c, "no check %s", name);
    am_check_result right[16], wrong[3][16];
    size_t nr = 0, nw = 0;
    cr_assert_leq(c->max_rows, 16);
    cr_assert_leq(nv, 3);
    am_validate_opts o = am_validate_opts_default();
    o.threads = 2;
    cr_assert_eq(am_validate_run(c, &o, right, &nr), AM_OK, "%s", name);
    for (size_t iv = 0; iv < nv; iv++) {
        o.predict_scale = v[iv].scale;
        o.predict_shift = v[iv].shift;
        cr_assert_eq(am_validate_run(c, &o, wrong[iv], &nw), AM_OK, "%s (wrong prediction)", name);
        cr_assert_eq(nr, nw);
    }
    size_t pass = 0;
    for (size_t i = 0; i < nr; i++) {
        const am_check_result *r = &right[i];
        cr_expect_neq(r->verdict, AM_CHECK_FAIL,
                      "%s (%s): FAIL against the theory: measured %g +- %g, predicted %g +- %g "
                      "(%s)",
                      r->name, r->params, r->measured, r->halfwidth, r->predicted, r->tolerance,
                      r->note);
        pass += r->verdict == AM_CHECK_PASS;
        cr_expect(isfinite(r->mdd) && r->mdd >= r->tolerance, "%s (%s): mdd %g tolerance %g",
                  r->name, r->params, r->mdd, r->tolerance);
        int applied = 0, failed = 0;
        for (size_t iv = 0; iv < nv; iv++) {
            const am_check_result *w = &wrong[iv][i];
            if (v[iv].row && strcmp(r->name, v[iv].row) != 0) continue;
            /* nothing to perturb (a zero scaled); a shift must always move the prediction */
            if (w->predicted == r->predicted && v[iv].shift == 0) continue;
            applied = 1;
            cr_expect_eq(w->measured, r->measured, "%s: the same run must measure the same", name);
            cr_expect_neq(w->verdict, AM_CHECK_PASS,
                          "%s (%s): PASS against the wrong prediction %g: measured %g +- %g, "
                          "tolerance %g",
                          w->name, w->params, w->predicted, w->measured, w->halfwidth,
                          w->tolerance);
            failed |= w->verdict == AM_CHECK_FAIL;
        }
        if (applied && r->verdict == AM_CHECK_PASS)
            cr_expect(failed,
                      "%s (%s): no power: right %g PASS, no wrong prediction FAILs; measured %g "
                      "+- %g, tolerance %g, mdd %g",
                      r->name, r->params, r->predicted, r->measured, r->halfwidth, r->tolerance,
                      r->mdd);
    }
    cr_expect_geq(pass, min_pass, "%s: %zu of %zu rows PASS at --quick, want >= %zu", name, pass,
                  nr, min_pass);
}

/* One wrong prediction for every row of the family. */
static void vp_power(const char *name, double scale, double shift, size_t min_pass)
{
    vp_variant v = {scale, shift, NULL};
    vp_power_v(name, &v, 1, min_pass);
}

/* order 0.5 instead of 1; at --quick the six noise-free rows PASS, the gaussian ones (interval
   half-widths 0.09-0.15 with R = 2000) may not resolve the band 0.1 */
Test(validate_power, ode_order, .timeout = 300)
{
    vp_power("ode-order", 1.0, -0.5, 6);
}

/* 20 % too small; the delayed rows also against the undelayed OU prediction: the rows at the
   mean lag 0.128 have the first-order factor 1 + 0.128 (12 + 4 x 2 + (4/3) x 3)/17.33 = 1.177,
   so the scale 1/1.177 turns their prediction into the tau = 0 one (the rows inside the local
   condition, factor 1.005, are then 15 % off and must not pass either) */
Test(validate_power, stationary, .timeout = 300)
{
    static const double lambda[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_RADEMACHER, 0};
    am_problem *p = am_problem_alloc(4, lambda, dist, 0, NULL, NULL, 0);
    cr_assert_not_null(p);
    double f =
        am_delaycorr_stationary_error(p, 1e-3, 0, 128) / am_theory_stationary_error(p, 1e-3, 0);
    am_problem_free(p);
    cr_assert(fabs(f - 1.1772) < 1e-3, "first-order factor %g", f);
    vp_variant v[2] = {{0.8, 0.0, NULL}, {1 / f, 0.0, "stationary-delay"}};
    vp_power_v("stationary", v, 2, 10);
}

/* 20 % too small; the delayed rows also against the prediction 1/(1 - x) times the first-order
   one, x = 0.24 of mode 4: the undelayed relaxation time for mode 4 (the modes 2 and 3 then
   predict 1.21 and 1.105 times the undelayed time, which must not pass either) */
Test(validate_power, relaxation, .timeout = 300)
{
    vp_variant v[2] = {{0.8, 0.0, NULL}, {1 / 0.76, 0.0, "relaxation-delay"}};
    vp_power_v("relaxation", v, 2, 6);
}

Test(validate_power, escape, .timeout = 300)
{
    vp_power("escape", 0.8, 0.0, 8);
}

/* the SDE no closer to the chain than the deterministic limit: a predicted gap equal to the gap
   to the ODE (to the delay-differential limit for the sde-delay rows) */
Test(validate_power, sde, .timeout = 300)
{
    vp_power("sde", 1.0, 1.0, 5);
}

/* paper scaling order 1 instead of 0.5; inverse scaling order 0.5 instead of 0 */
Test(validate_power, delay)
{
    vp_power("delay", 1.0, 0.5, 2);
}

/* the delay-differential limit: order 0.5 instead of 1 (the ODE's order 0 is the delay
   family's delay-inverse row) */
Test(validate_power, dde)
{
    vp_power("dde", 1.0, -0.5, 3);
}

Test(validate_power, asyncmom)
{
    vp_power("asyncmom", 0.8, 0.0, 6);
}

Test(validate_power, runtime, .timeout = 300)
{
    vp_power("runtime", 0.8, 0.0, 12);
}

/* linear acceleration: S/P = 1 +- 0.2 instead of 1, and past 3 tau_c a converged fraction of
   +-0.2 instead of 0 (the undelayed prediction 1 lies further out still) */
Test(validate_power, speedup, .timeout = 300)
{
    vp_variant v[2] = {{1.0, 0.2, NULL}, {1.0, -0.2, NULL}};
    vp_power_v("speedup", v, 2, 9);
}

/* Dutta's error bound, where it is within a factor 2 of the measurement (floor 0.55-0.62 of
   the bound's, rate 1.6-1.9 times the bound's): the error bound halved and a bound rate 2.5
   times the theorem's must FAIL every row */
Test(validate_power, async_bound, .timeout = 300)
{
    vp_variant v[2] = {{0.5, 0.0, "async-bound"}, {2.5, 0.0, "async-bound-rate"}};
    vp_power_v("async-bound", v, 2, 4);
}

/* Dutta's K-async runtime bound, one-sided: the new-longer-than-used law (shiftexp) passes at
   K = 6, 7 and Pareto at K = 6; Pareto at K = 7 exceeds the bound (finding F-R1). A bound 20 %
   below the measured time FAILs every row; so does a law that violates the assumption more
   strongly (Pareto 1.5), and the exponential law, where the bound is an equality, passes. */
Test(validate_power, runtime_bound, .timeout = 120)
{
    const am_validate_check *c = am_validate_find("runtime-bound");
    cr_assert_not_null(c);
    am_check_result right[4], wrong[4];
    size_t nr = 0, nw = 0;
    am_validate_opts o = am_validate_opts_default();
    o.threads = 2;
    cr_assert_eq(am_validate_run(c, &o, right, &nr), AM_OK);
    cr_assert_eq(nr, 4);
    for (size_t i = 0; i < nr; i++) {
        const am_check_result *r = &right[i];
        int finding = i == 3;
        cr_expect_str_eq(r->rule, "one-sided");
        cr_expect_eq(r->verdict, finding ? AM_CHECK_FAIL : AM_CHECK_PASS,
                     "%s: measured %g +- %g against the bound %g (tolerance %g): %s", r->params,
                     r->measured, r->halfwidth, r->predicted, r->tolerance,
                     am_check_verdict_name(r->verdict));
        cr_expect_eq(r->finding[0] != 0, finding, "%s: finding '%s'", r->params, r->finding);
    }
    /* the bound set 20 % below the measured time per update */
    o.predict_scale = 0;
    o.predict_shift = 0.8;
    cr_assert_eq(am_validate_run(c, &o, wrong, &nw), AM_OK);
    cr_assert_eq(nw, 4);
    for (size_t i = 0; i < nw; i++) {
        cr_expect_eq(wrong[i].measured, right[i].measured);
        cr_expect_eq(wrong[i].verdict, AM_CHECK_FAIL,
                     "%s: measured %g +- %g against a bound %g: %s", wrong[i].params,
                     wrong[i].measured, wrong[i].halfwidth, wrong[i].predicted,
                     am_check_verdict_name(wrong[i].verdict));
    }
    /* the true bound shrunk by 20 %: the rows sit at K = 6, 7, where the bound is within 8 %
       of the measurement, so every row must FAIL */
    o.predict_scale = 0.8;
    o.predict_shift = 0;
    cr_assert_eq(am_validate_run(c, &o, wrong, &nw), AM_OK);
    for (size_t i = 0; i < nw; i++)
        cr_expect_eq(wrong[i].verdict, AM_CHECK_FAIL, "%s: %g +- %g against 0.8 x %g: %s",
                     wrong[i].params, wrong[i].measured, wrong[i].halfwidth, right[i].predicted,
                     am_check_verdict_name(wrong[i].verdict));
    /* a law further outside the assumption, and the law where the bound is an equality */
    o = am_validate_opts_default();
    o.threads = 2;
    am_check_result row;
    am_check_init(&row, "runtime-bound");
    cr_assert_eq(am_vf_runtime_bound_row(c, &o, "pareto:1.5:1", 8, 6, &row), AM_OK);
    cr_expect_eq(row.verdict, AM_CHECK_FAIL, "pareto:1.5:1 K = 6: %g +- %g against %g: %s",
                 row.measured, row.halfwidth, row.predicted, am_check_verdict_name(row.verdict));
    am_check_init(&row, "runtime-bound");
    cr_assert_eq(am_vf_runtime_bound_row(c, &o, "exp:1", 8, 6, &row), AM_OK);
    cr_expect_eq(row.verdict, AM_CHECK_PASS, "exp:1 K = 6: %g +- %g against %g: %s", row.measured,
                 row.halfwidth, row.predicted, am_check_verdict_name(row.verdict));
    cr_expect(fabs(row.measured - row.predicted) <= row.halfwidth,
              "exponential: the bound is an equality, %g +- %g against %g", row.measured,
              row.halfwidth, row.predicted);
    cr_expect_eq(am_vf_runtime_bound_row(c, &o, "exp:1", 8, 9, &row), AM_EINVAL);
}

/* ---- the finest local slope and its Richardson bound (am_converge_local_slope) ---- */

Test(converge_power, local_slope_closed_form)
{
    /* exact power law 3 eta^2: slope 2, no bias left */
    double eta[4] = {0.4, 0.2, 0.1, 0.05}, err[4];
    for (int i = 0; i < 4; i++)
        err[i] = 3 * eta[i] * eta[i];
    double s, b;
    cr_assert_eq(am_converge_local_slope(eta, err, 4, 1.0, &s, &b), AM_OK);
    cr_expect(fabs(s - 2) < 1e-12 && b < 1e-12, "slope %.17g bias %.17g", s, b);
    /* err = eta (1 + eta): order 1 with an O(eta) correction; the finest local slope is
       1 + log(1.05/1.1)/log(1/2) = 0.9329 and the bound must cover its distance to 1 */
    for (int i = 0; i < 4; i++)
        err[i] = eta[i] * (1 + eta[i]);
    cr_assert_eq(am_converge_local_slope(eta, err, 4, 1.0, &s, &b), AM_OK);
    double want = 1 + log(1.05 / 1.1) / log(0.5);
    cr_expect(fabs(s - want) < 1e-12, "finest local slope %.17g want %.17g", s, want);
    cr_expect(fabs(s - 1) <= b && b < 0.5, "|s - 1| = %g must lie within the bound %g", fabs(s - 1),
              b);
    /* any order of the ladder gives the same */
    double eta2[4] = {0.1, 0.4, 0.05, 0.2}, err2[4], s2, b2;
    for (int i = 0; i < 4; i++)
        err2[i] = eta2[i] * (1 + eta2[i]);
    cr_assert_eq(am_converge_local_slope(eta2, err2, 4, 1.0, &s2, &b2), AM_OK);
    cr_expect(s2 == s && b2 == b, "order of the ladder changed the result: %g %g", s2, b2);
    cr_expect_eq(am_converge_local_slope(eta, err, 2, 1.0, &s, &b), AM_EINVAL);
    err[1] = 0;
    cr_expect_eq(am_converge_local_slope(eta, err, 4, 1.0, &s, &b), AM_EINVAL);
}

/* ---- converge: the examples of docs/converge.md ---- */

static am_converge_result *vp_converge(const char *scaling, double order, am_dist_kind kind,
                                       double mu, const double *etas, size_t n, size_t replicas,
                                       double horizon)
{
    static const double lambda[4] = {4, 3, 2, 1};
    am_dist dist = {kind, 0};
    am_problem *p = am_problem_alloc(4, lambda, dist, 0, NULL, NULL, 0);
    cr_assert_not_null(p);
    am_converge_params cp = am_converge_params_default();
    char err[256];
    cr_assert_eq(am_converge_scaling_parse(scaling, &cp.scaling, err, sizeof err), AM_OK, "%s",
                 err);
    cp.etas = etas;
    cp.n_eta = n;
    cp.horizon = horizon;
    cp.msgd.mu = mu;
    cp.ens.replicas = replicas;
    cp.ens.threads = 2;
    cp.predicted_order = order;
    am_converge_result *r = NULL;
    cr_assert_eq(am_converge_run(p, &cp, &r), AM_OK);
    am_problem_free(p);
    return r;
}

/* inverse scaling, tau eta = 0.02 fixed: the gap levels off (order 0); a wrong order fails */
Test(converge_power, inverse_example)
{
    static const double etas[4] = {4e-3, 1e-3, 2.5e-4, 6.25e-5};
    static const double orders[5] = {0, 0.3, 0.5, 0.7, 1};
    for (size_t i = 0; i < 5; i++) {
        am_converge_result *r =
            vp_converge("inverse:0.02", orders[i], AM_DIST_EXPECTED, 0.5, etas, 4, 1, 2);
        am_check_verdict want = orders[i] == 0 ? AM_CHECK_PASS : AM_CHECK_FAIL;
        cr_expect_eq(r->check.verdict, want,
                     "order %g: %s, measured %g interval [%g, %g] (%s), band +- %g", orders[i],
                     am_check_verdict_name(r->check.verdict), r->order, r->order_ci[0],
                     r->order_ci[1], r->order_method, r->check.tolerance);
        cr_expect_str_eq(r->order_method, "local-slope");
        cr_expect(r->order_ci[0] <= r->order && r->order <= r->order_ci[1]);
        am_converge_result_free(r);
    }
}

/* the same inverse ladder against the delay-differential limit (--limit dde): order 1 passes,
   the orders 0, 0.5 fail; the gap to the ODE stays finite; --limit dde needs inverse scaling */
Test(converge_power, inverse_example_against_the_dde)
{
    const char *base = "converge --dist expected --replicas 1 --mu 0.5 --time 2 "
                       "--etas 4e-3,1e-3,2.5e-4,6.25e-5 --delay-scaling inverse:0.02 "
                       "--limit dde --format json";
    const char *orders[3] = {"1", "0", "0.5"};
    for (int i = 0; i < 3; i++) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "%s --order %s", base, orders[i]);
        test_run r = test_amsgd(cmd);
        cr_assert_eq(r.status, i == 0 ? 0 : 1, "order %s: exit %d (%s)", orders[i], r.status,
                     r.err);
        json_error_t je;
        json_t *root = json_loads(r.out, 0, &je);
        cr_assert_not_null(root, "order %s: %s", orders[i], je.text);
        cr_expect_str_eq(json_string_value(json_object_get(root, "verdict")),
                         i == 0 ? "PASS" : "FAIL", "order %s", orders[i]);
        json_t *ode = json_object_get(root, "weak_error_ode");
        json_t *dde = json_object_get(root, "weak_error");
        double ode_last = json_number_value(json_array_get(ode, 3));
        double dde_last = json_number_value(json_array_get(dde, 3));
        cr_expect(ode_last > 20 * dde_last && ode_last > 1e-3,
                  "finest rung: gap to the ODE %g, to the DDE %g", ode_last, dde_last);
        json_decref(root);
        test_run_free(&r);
    }
    test_expect_usage_error("converge --limit dde --etas 1e-3,5e-4", "inverse");
    test_expect_usage_error("converge --limit sde", "--limit");
}

/* paper scaling GAMMA = 1/2: order 0.5 passes, 0.8 fails */
Test(converge_power, paper_example)
{
    static const double etas[4] = {4e-3, 1e-3, 2.5e-4, 6.25e-5};
    am_converge_result *r =
        vp_converge("paper:0.5:10.1193", 0.5, AM_DIST_EXPECTED, 0.5, etas, 4, 1, 2);
    cr_expect_eq(r->check.verdict, AM_CHECK_PASS, "order 0.5: measured %g [%g, %g]", r->order,
                 r->order_ci[0], r->order_ci[1]);
    am_converge_result_free(r);
    r = vp_converge("paper:0.5:10.1193", 0.8, AM_DIST_EXPECTED, 0.5, etas, 4, 1, 2);
    cr_expect_eq(r->check.verdict, AM_CHECK_FAIL, "order 0.8: measured %g [%g, %g]", r->order,
                 r->order_ci[0], r->order_ci[1]);
    am_converge_result_free(r);
}

/* Gaussian data under a delay scaling (docs/converge.md, "The delay's effect"): the gap to the
   ODE carries the noise term O(eta), which hides the delay's term; the order is fitted to the
   paired gap to the undelayed chain on common random numbers. At 2,000 and 20,000 replicas the
   theorem's order (0 inverse, 0.5 paper) never FAILs and a wrong one (1 and 0.5 or 0) never
   PASSes; where the single power law does not fit, the verdict is INCONCLUSIVE with a reason. */
Test(converge_power, delay_effect_gaussian, .timeout = 300)
{
    static const double inv[4] = {4e-3, 2e-3, 1e-3, 5e-4}, pap[3] = {4e-3, 1e-3, 2.5e-4};
    struct {
        const char *scaling;
        const double *etas;
        size_t n;
        double order, wrong[2];
    } cs[2] = {{"inverse:0.02", inv, 4, 0.0, {1.0, 0.5}},
               {"paper:0.5:10.1193", pap, 3, 0.5, {1.0, 0.0}}};
    static const size_t reps[2] = {2000, 20000};
    for (int c = 0; c < 2; c++)
        for (int ir = 0; ir < 2; ir++) {
            /* one ensemble; the same data decided against the theorem's order and the wrong
               ones (20,000 replicas: one wrong order) */
            am_converge_result *r = vp_converge(cs[c].scaling, cs[c].order, AM_DIST_GAUSSIAN, 0.5,
                                                cs[c].etas, cs[c].n, reps[ir], 2);
            cr_expect(r->paired && !strcmp(r->reference, "undelayed"), "%s: not paired",
                      cs[c].scaling);
            for (int w = -1; w < (ir ? 1 : 2); w++) {
                am_converge_params cp = am_converge_params_default(); /* as vp_converge's */
                char err[256];
                cr_assert_eq(am_converge_scaling_parse(cs[c].scaling, &cp.scaling, err, sizeof err),
                             AM_OK);
                cp.predicted_order = w < 0 ? cs[c].order : cs[c].wrong[w];
                cr_assert_eq(am_converge_decide(&cp, r), AM_OK);
                cr_expect(w < 0 ? r->check.verdict != AM_CHECK_FAIL
                                : r->check.verdict != AM_CHECK_PASS,
                          "%s R=%zu order %g (theorem %g): %s, measured %g [%g, %g], chi2/dof %g, "
                          "p %g (%s)",
                          cs[c].scaling, reps[ir], cp.predicted_order, cs[c].order,
                          am_check_verdict_name(r->check.verdict), r->order, r->order_ci[0],
                          r->order_ci[1], r->chi2_dof, r->fit_p, r->verdict_reason);
            }
            am_converge_result_free(r);
        }
}

/* the default Monte Carlo ladder: WLS interval, order 1 passes, 0.5 fails */
Test(converge_power, monte_carlo_default)
{
    static const double etas[4] = {4e-3, 2e-3, 1e-3, 5e-4};
    am_converge_result *r = vp_converge("none", 1.0, AM_DIST_GAUSSIAN, 0, etas, 4, 2000, 2);
    cr_expect_eq(r->check.verdict, AM_CHECK_PASS, "order 1: measured %g [%g, %g] %s", r->order,
                 r->order_ci[0], r->order_ci[1], r->check.note);
    cr_expect_str_eq(r->order_method, "WLS");
    cr_expect(fabs(r->order_ci[1] - r->order - r->check.halfwidth) < 1e-12,
              "one interval: order_ci is order +- halfwidth");
    am_converge_result_free(r);
    r = vp_converge("none", 0.5, AM_DIST_GAUSSIAN, 0, etas, 4, 2000, 2);
    cr_expect_eq(r->check.verdict, AM_CHECK_FAIL, "order 0.5: measured %g [%g, %g]", r->order,
                 r->order_ci[0], r->order_ci[1]);
    am_converge_result_free(r);
}

/* Liu's lemma, directly: the tau and eta exponents of the delayed-undelayed gap are 1 (PASS)
 * and a predicted exponent 2 FAILs. The (1-mu) exponent measures -1, not the lemma's -2: that
 * row FAILs against the lemma (a documented finding, so it carries row.finding) and PASSes
 * against -1, i.e. the run resolves the exponent to better than the one that separates them. */
Test(validate_power, delay_scaling)
{
    const am_validate_check *c = am_validate_find("delay-scaling");
    cr_assert_not_null(c);
    am_check_result right[4], wrong[4];
    size_t nr = 0, nw = 0;
    am_validate_opts o = am_validate_opts_default();
    o.threads = 1;
    cr_assert_eq(am_validate_run(c, &o, right, &nr), AM_OK);
    o.predict_shift = 1.0; /* tau^2, eta^2; (1-mu)^-1 */
    cr_assert_eq(am_validate_run(c, &o, wrong, &nw), AM_OK);
    cr_assert_eq(nr, 3);
    cr_assert_eq(nw, 3);
    cr_assert_str_eq(right[0].name, "delay-scaling-mu");
    cr_expect_eq(right[0].verdict, AM_CHECK_FAIL,
                 "(1-mu) exponent %g +- %g against the lemma's -2: %s (the finding changed?)",
                 right[0].measured, right[0].halfwidth, am_check_verdict_name(right[0].verdict));
    cr_expect(right[0].finding[0], "the FAIL of the lemma's (1-mu) exponent is a finding");
    cr_expect_eq(wrong[0].verdict, AM_CHECK_PASS, "(1-mu) exponent %g +- %g against -1: %s",
                 wrong[0].measured, wrong[0].halfwidth, am_check_verdict_name(wrong[0].verdict));
    for (size_t i = 1; i < 3; i++) {
        cr_expect_eq(right[i].verdict, AM_CHECK_PASS, "%s: exponent %g +- %g against 1: %s",
                     right[i].name, right[i].measured, right[i].halfwidth,
                     am_check_verdict_name(right[i].verdict));
        cr_expect_eq(wrong[i].verdict, AM_CHECK_FAIL, "%s: exponent %g +- %g against 2: %s",
                     wrong[i].name, wrong[i].measured, wrong[i].halfwidth,
                     am_check_verdict_name(wrong[i].verdict));
        cr_expect_eq(right[i].finding[0], 0);
    }
}

/* The command: new keys per row, the rule, and the exit status of a FAIL that is a finding. */
Test(validate_power, cli_keys_and_finding_exit)
{
    test_run r = test_amsgd("validate --only delay-scaling --threads 1 --format json");
    cr_assert_eq(r.status, 0, "a FAIL that is a documented finding exits 0 (stderr %s)", r.err);
    json_error_t e;
    json_t *root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "invalid JSON: %s", e.text);
    cr_expect_eq(json_integer_value(json_object_get(root, "fail")), 1);
    cr_expect_eq(json_integer_value(json_object_get(root, "fail_findings")), 1);
    json_t *checks = json_object_get(root, "checks");
    static const char *keys[] = {"tolerance",       "mdd",    "halfwidth", "margin", "rule",
                                 "replicas_needed", "finding"};
    for (size_t i = 0; i < json_array_size(checks); i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            cr_expect_not_null(json_object_get(json_array_get(checks, i), keys[k]),
                               "row %zu lacks '%s'", i, keys[k]);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(checks, 0), "rule")),
                     "equivalence");
    json_decref(root);
    test_run_free(&r);
    /* a FAIL without a finding exits 1: the delay family against a wrong order via converge */
    r = test_amsgd("converge --dist expected --replicas 1 --mu 0.5 --time 2 --etas "
                   "4e-3,1e-3,2.5e-4,6.25e-5 --delay-scaling inverse:0.02 --order 0.5");
    cr_expect_eq(r.status, 1, "converge against a wrong order must exit 1");
    cr_expect(strstr(r.err, "local-slope interval") && strstr(r.err, "FAIL"), "stderr: %s", r.err);
    test_run_free(&r);
}

/* a ladder where most replicas diverge gives no verdict (the gaps are means over survivors),
   and a missing SDE gap carries no standard error */
Test(converge_power, diverged_ladder_is_inconclusive)
{
    test_run r = test_amsgd("converge --etas 0.2,0.1,0.05 --mu 0.9 --replicas 100 --time 2 "
                            "--grid 5 --sde --format json");
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    json_error_t je;
    json_t *root = json_loads(r.out, 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    cr_expect_str_eq(json_string_value(json_object_get(root, "verdict")), "INCONCLUSIVE");
    cr_expect(strstr(json_string_value(json_object_get(root, "note")), "survivors"));
    json_t *g = json_object_get(root, "weak_error_sde"),
           *s = json_object_get(root, "weak_error_sde_sem");
    for (size_t l = 0; l < json_array_size(g); l++)
        cr_expect(!json_is_null(json_array_get(g, l)) || json_is_null(json_array_get(s, l)),
                  "rung %zu: a null SDE gap with a standard error", l);
    json_decref(root);
    test_run_free(&r);
}

/* escape-delay against the undelayed unstable OU (vs_undelayed): the same escape times, a
   prediction without the delay's first-order correction (rate g instead of (1 - y) g, y = 0.1),
   which sits below the delayed one; the undelayed rows are untouched */
Test(validate_power, escape_vs_undelayed, .timeout = 300)
{
    const am_validate_check *c = am_validate_find("escape");
    cr_assert_not_null(c);
    am_check_result right[12], und[12];
    size_t nr = 0, nu = 0;
    am_validate_opts o = am_validate_opts_default();
    o.threads = 2;
    cr_assert_eq(am_validate_run(c, &o, right, &nr), AM_OK);
    o.undelayed = 1;
    cr_assert_eq(am_validate_run(c, &o, und, &nu), AM_OK);
    cr_assert_eq(nr, nu);
    size_t ndelayed = 0;
    for (size_t i = 0; i < nr; i++) {
        cr_expect_eq(right[i].measured, und[i].measured, "%s: the same data", right[i].params);
        int delayed = !strcmp(right[i].name, "escape-delay");
        cr_expect_eq(right[i].delayed, delayed, "%s", right[i].params);
        if (!delayed) {
            cr_expect_eq(right[i].predicted, und[i].predicted, "%s", right[i].params);
            continue;
        }
        ndelayed++;
        double r = und[i].predicted / right[i].predicted;
        cr_expect(r > 0.8 && r < 0.95, "%s: undelayed / delayed prediction %g", right[i].params, r);
    }
    cr_expect_eq(ndelayed, 6);
}
