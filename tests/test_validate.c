/*
 * test_validate.c -- the check table of validate/am_validate.h, the eta ladder of
 * validate/am_converge.h (delay scaling, weak error, order), and the command-line contract of
 * `amsgd converge` and `amsgd validate` (JSON keys, exit status, bad input).
 *
 * Deterministic cases use noise-free data (--dist expected), where every replica follows
 * the same recursion and the order of the weak error is fixed by the discretisation alone;
 * expected values come from closed forms (am_theory_tau_bound_ode) or from the theorem
 * (order 1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "../theory/am_theory.h"
#include "../validate/am_converge.h"
#include "../validate/am_validate.h"
#include "test_util.h"

Test(validate_table, well_formed)
{
    cr_assert_geq(am_validate_checks_len, 6, "the issue lists 6 checks, table has %zu",
                  am_validate_checks_len);
    for (size_t i = 0; i < am_validate_checks_len; i++) {
        const am_validate_check *c = &am_validate_checks[i];
        cr_assert(c->name && c->name[0], "check %zu has no name", i);
        cr_assert(c->description && strlen(c->description) > 10, "check %s: no description",
                  c->name);
        cr_assert(c->run, "check %s: no run function", c->name);
        cr_assert(c->max_rows >= 1 && c->max_rows <= 64, "check %s: max_rows %zu", c->name,
                  c->max_rows);
        cr_assert_eq(am_validate_find(c->name), c, "am_validate_find(%s)", c->name);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(c->name, am_validate_checks[j].name, "duplicate name %s", c->name);
    }
    cr_assert_null(am_validate_find("no-such-check"));
    cr_assert_null(am_validate_find(NULL));
    am_check_result r;
    size_t n;
    am_validate_opts o = am_validate_opts_default();
    cr_assert_eq(am_validate_run(NULL, &o, &r, &n), AM_EINVAL);
}

/* The delay check runs noise-free ladders (one replica each) and takes well under a second. */
Test(validate_table, delay_check_result_is_sensible)
{
    const am_validate_check *c = am_validate_find("delay");
    cr_assert_not_null(c);
    am_check_result rows[8];
    size_t n = 0;
    am_validate_opts o = am_validate_opts_default();
    o.threads = 1;
    cr_assert_eq(am_validate_run(c, &o, rows, &n), AM_OK);
    cr_assert_eq(n, 2, "delay check wrote %zu rows", n);
    cr_assert_str_eq(rows[0].name, "delay-paper");
    cr_assert_str_eq(rows[1].name, "delay-inverse");
    for (size_t i = 0; i < n; i++) {
        const am_check_result *r = &rows[i];
        cr_assert(r->params[0], "%s: empty params", r->name);
        cr_assert(isfinite(r->measured) && isfinite(r->tolerance) && r->tolerance > 0,
                  "%s: measured %g tolerance %g", r->name, r->measured, r->tolerance);
        cr_assert_eq(r->measured_sem, 0, "%s: deterministic ladder, sem %g", r->name,
                     r->measured_sem);
        cr_assert_eq(r->verdict, AM_CHECK_PASS, "%s: %s measured %g predicted %g tol %g (%s)",
                     r->name, am_check_verdict_name(r->verdict), r->measured, r->predicted,
                     r->tolerance, r->note);
    }
    /* paper scaling with GAMMA = 1/2: order 1/2; inverse: the gap does not vanish (order 0) */
    cr_assert_float_eq(rows[0].predicted, 0.5, 1e-15);
    cr_assert_float_eq(rows[1].predicted, 0.0, 1e-15);
    cr_assert_gt(rows[0].measured, 0.3, "paper gap must vanish: slope %g", rows[0].measured);
}

/* The escape check exercises the wrapper model (first-passage summaries), the OU
 * first-passage simulation and the quantile intervals; about 0.5 s per run at -O2. Its
 * verdicts are statistical at z = 4 with a fixed seed, and its numbers must not depend on
 * the thread count. */
Test(validate_table, escape_check_thread_invariant)
{
    const am_validate_check *c = am_validate_find("escape");
    cr_assert_not_null(c);
    am_check_result a[12], b[12];
    size_t na = 0, nb = 0;
    cr_assert_leq(c->max_rows, 12);
    am_validate_opts o = am_validate_opts_default();
    o.threads = 1;
    cr_assert_eq(am_validate_run(c, &o, a, &na), AM_OK);
    o.threads = 2;
    cr_assert_eq(am_validate_run(c, &o, b, &nb), AM_OK);
    cr_assert_eq(na, 12, "escape wrote %zu rows (6 undelayed, 6 escape-delay)", na);
    cr_assert_eq(nb, na);
    for (size_t i = 0; i < na; i++) {
        const am_check_result *r = &a[i];
        cr_assert(isfinite(r->measured) && r->measured > 0 && r->measured_sem > 0 &&
                      r->predicted_sem > 0 && r->model_error > 0,
                  "%s %s: measured %g +- %g predicted %g +- %g", r->name, r->params, r->measured,
                  r->measured_sem, r->predicted, r->predicted_sem);
        cr_assert_neq(r->verdict, AM_CHECK_FAIL, "%s %s: measured %g predicted %g tol %g (%s)",
                      r->name, r->params, r->measured, r->predicted, r->tolerance, r->note);
        cr_assert(r->measured == b[i].measured && r->predicted == b[i].predicted &&
                      r->tolerance == b[i].tolerance,
                  "%s %s: 1 vs 2 threads differ: %.17g %.17g", r->name, r->params, r->measured,
                  b[i].measured);
        if (i % 3) cr_assert_gt(r->measured, a[i - 1].measured, "quantiles must increase");
    }
}

Test(converge, scaling_parse_and_tau)
{
    am_scaling s;
    char err[256];
    cr_assert_eq(am_converge_scaling_parse("paper:0.5:2", &s, err, sizeof err), AM_OK);
    cr_assert_eq(s.kind, AM_SCALING_PAPER);
    double lam = 4, mu = 0.5, eta = 1e-3;
    double want = 2 * (1 - mu) * (1 - mu) / (lam * pow(eta, 0.5));
    cr_assert(fabs(am_converge_scaling_tau(&s, lam, mu, eta) - want) <= 1e-12 * want,
              "paper tau %.17g want %.17g", am_converge_scaling_tau(&s, lam, mu, eta), want);
    cr_assert_float_eq(am_converge_scaling_order(&s), 0.5, 1e-15);
    cr_assert_eq(am_converge_scaling_parse("inverse:0.02", &s, err, sizeof err), AM_OK);
    cr_assert(fabs(am_converge_scaling_tau(&s, lam, mu, eta) - 20) < 1e-12);
    cr_assert_float_eq(am_converge_scaling_order(&s), 0.0, 1e-15);
    cr_assert_eq(am_converge_scaling_parse("none", &s, err, sizeof err), AM_OK);
    cr_assert(isnan(am_converge_scaling_tau(&s, lam, mu, eta)));
    cr_assert_float_eq(am_converge_scaling_order(&s), 1.0, 1e-15);
    static const char *bad[] = {"paper:0:1",    "paper:1.5:1", "paper:0.5",
                                "paper:0.5:-1", "inverse:0",   "inverse:x",
                                "inverse:",     "sometimes",   "paper:a:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(am_converge_scaling_parse(bad[i], &s, err, sizeof err), AM_EINVAL,
                     "'%s' accepted", bad[i]);
    char buf[64];
    am_converge_scaling_parse("paper:0.25:3", &s, err, sizeof err);
    am_converge_scaling_format(&s, buf, sizeof buf);
    cr_assert_str_eq(buf, "paper:0.25:3");
}

/* Noise-free recursion: the weak error to the ODE is the discretisation error, O(eta). */
Test(converge, expected_data_order_one)
{
    static const double lambda[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_EXPECTED, 0};
    am_problem *p = am_problem_alloc(4, lambda, dist, 0, NULL, NULL, 0);
    static const double etas[4] = {4e-3, 2e-3, 1e-3, 5e-4};
    am_converge_params cp = am_converge_params_default();
    cp.etas = etas;
    cp.n_eta = 4;
    cp.horizon = 2;
    cp.ens.replicas = 2;
    cp.ens.threads = 1;
    am_converge_result *r = NULL;
    cr_assert_eq(am_converge_run(p, &cp, &r), AM_OK);
    cr_assert(r->deterministic, "noise-free ladder must have zero standard errors");
    cr_assert(r->fitted);
    for (size_t l = 0; l < 4; l++)
        cr_assert(r->weak_error[l] > 0 && r->weak_error_sem[l] == 0, "eta %g: gap %g sem %g",
                  etas[l], r->weak_error[l], r->weak_error_sem[l]);
    cr_assert(fabs(r->fit.slope - 1) < 0.02, "order %g, expected 1 (gaps %g .. %g)", r->fit.slope,
              r->weak_error[0], r->weak_error[3]);
    cr_assert(r->order_ci[0] <= r->fit.slope && r->fit.slope <= r->order_ci[1]);
    /* the ODE closed form is what the gap is measured against: at t = 0 both are equal */
    cr_assert_float_eq(r->ode[0], r->mean[0], 1e-15);
    am_converge_result_free(r);

    /* a shared start at the optimum: the noise-free chain stays there, gap 0, no fit */
    cp.msgd.init.kind = AM_INIT_EIGEN;
    cp.msgd.init.j = 1;
    cr_assert_eq(am_converge_run(p, &cp, &r), AM_OK);
    cr_assert_eq(r->fitted, 0);
    cr_assert_eq(r->check.verdict, AM_CHECK_INCONCLUSIVE);
    am_converge_result_free(r);

    /* random-each has no single ODE solution */
    cp.msgd.init.kind = AM_INIT_RANDOM_EACH;
    cr_assert_eq(am_converge_run(p, &cp, &r), AM_EINVAL);
    cr_assert_null(r);
    am_problem_free(p);
}

Test(converge, cli_json_keys_and_paper_tau)
{
    json_t *root =
        test_amsgd_json("converge --etas 4e-3,2e-3,1e-3 --mu 0.5 --delay-scaling paper:0.5:4 "
                        "--time 0.5 --grid 6 --replicas 64 --threads 1 --sde --format json",
                        0);
    static const char *keys[] = {"command",  "version",    "params",         "eta",
                                 "tau",      "weak_error", "weak_error_sem", "weak_error_sde",
                                 "order",    "order_ci",   "verdict",        "verdict_reason",
                                 "chi2_dof", "fit_p"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_not_null(json_object_get(root, keys[i]), "converge JSON lacks '%s'", keys[i]);
    cr_assert(strlen(json_string_value(json_object_get(root, "verdict_reason"))) > 0);
    cr_assert_str_eq(json_string_value(json_object_get(root, "command")), "converge");
    json_t *params = json_object_get(root, "params");
    cr_assert_not_null(json_object_get(params, "seed"));
    cr_assert_str_eq(json_string_value(json_object_get(params, "delay_scaling")), "paper:0.5:4");
    json_t *eta = json_object_get(root, "eta"), *tau = json_object_get(root, "tau");
    cr_assert_eq(json_array_size(eta), 3);
    for (size_t l = 0; l < 3; l++) {
        double e = json_number_value(json_array_get(eta, l));
        double want = floor(am_theory_tau_bound_ode(4, e, 0.5, 0.5, 4) + 0.5);
        cr_assert_float_eq(json_number_value(json_array_get(tau, l)), want, 1e-12,
                           "eta %g: tau %g want %g", e, json_number_value(json_array_get(tau, l)),
                           want);
        cr_assert(json_is_real(json_array_get(json_object_get(root, "weak_error_sde"), l)),
                  "--sde must fill weak_error_sde");
    }
    const char *v = json_string_value(json_object_get(root, "verdict"));
    cr_assert(!strcmp(v, "PASS") || !strcmp(v, "FAIL") || !strcmp(v, "INCONCLUSIVE"), "%s", v);
    cr_assert_eq(json_array_size(json_object_get(root, "order_ci")), 2);
    json_decref(root);
}

Test(converge, bad_inputs_exit_2)
{
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"--etas 1e-3", "--etas"},
        {"--etas 1e-3,1e-3", "distinct"},
        {"--etas -1e-3,1e-3", "--etas"},
        {"--etas 1e-3,,2e-3", "--etas"},
        {"--etas a,b", "--etas"},
        {"--delay-scaling paper:2:1", "GAMMA"},
        {"--delay-scaling paper:0.5", "paper"},
        {"--delay-scaling inverse:-1", "inverse"},
        {"--delay-scaling often", "scaling"},
        {"--delay-scaling inverse:1 --delay const:3", "cannot be combined"},
        {"--init random-each", "random-each"},
        {"--dist expected --sde", "--sde"},
        {"--grid 1", "--grid"},
        {"--time 0", "--time"},
        {"--noise-k 0", "--noise-k"},
        {"--order x", "--order"},
        {"--mu 1", "--mu"},
        {"--format xml", "--format"},
        {"--replicas 0", "--replicas"},
        {"--eta 1e-3", "unknown option"},
    };
    char args[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "converge --replicas 2 --time 0.01 --grid 2 %s", cases[i].args);
        test_expect_usage_error(args, cases[i].needle);
    }
}

Test(validate_cli, json_csv_list_and_bad_input)
{
    json_t *root = test_amsgd_json("validate --only delay --threads 1 --format json", 0);
    cr_assert_str_eq(json_string_value(json_object_get(root, "command")), "validate");
    cr_assert_not_null(json_object_get(json_object_get(root, "params"), "seed"));
    json_t *checks = json_object_get(root, "checks");
    cr_assert_eq(json_array_size(checks), 2);
    static const char *keys[] = {"name",      "measured", "measured_sem",    "predicted",
                                 "tolerance", "verdict",  "replicas_needed", "params",
                                 "note"};
    for (size_t i = 0; i < json_array_size(checks); i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            cr_assert_not_null(json_object_get(json_array_get(checks, i), keys[k]),
                               "check %zu lacks '%s'", i, keys[k]);
    json_decref(root);

    test_run r = test_amsgd("validate --only delay --threads 1 --format csv");
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "name,params,measured,measured_sem,predicted,", 44) == 0, "%s", r.out);
    test_run_free(&r);
    r = test_amsgd("validate --list");
    cr_assert_eq(r.status, 0);
    for (size_t i = 0; i < am_validate_checks_len; i++)
        cr_assert(strstr(r.out, am_validate_checks[i].name), "--list lacks %s",
                  am_validate_checks[i].name);
    test_run_free(&r);
    r = test_amsgd("validate --only delay --threads 1");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "delay-paper") && strstr(r.out, "PASS"), "%s", r.out);
    test_run_free(&r);

    test_expect_usage_error("validate --only nope", "--only");
    test_expect_usage_error("validate --format xml", "--format");
    test_expect_usage_error("validate --threads -1", "--threads");
    test_expect_usage_error("validate --seed x", "--seed");
    test_expect_usage_error("validate stray", "unexpected argument");
    test_expect_usage_error("validate --bogus", "unknown option");
}

/* The verdict of key in a JSON row: its text, or "null" when the key holds null. */
static const char *verdict_of(json_t *row, const char *key)
{
    json_t *v = json_object_get(row, key);
    cr_assert_not_null(v, "a row lacks '%s'", key);
    return json_is_null(v) ? "null" : json_string_value(v);
}

/* The power columns: every asyncmom row PASSes its prediction and FAILs it shifted 20 % either
 * way and FAILs the undelayed prediction (momentum 0, step eta); the one-sided rows of
 * runtime-bound (time per update <= the bound) report only the side that can fail, a bound
 * 20 % lower; --no-power leaves all three null. The runs are those of the deciding code at
 * quick size with the default seed. */
Test(validate_cli, power_columns_both_ways_and_one_sided, .timeout = 120)
{
    json_t *root = test_amsgd_json("validate --quick --only asyncmom --threads 2 --format json", 0);
    json_t *checks = json_object_get(root, "checks");
    cr_assert_eq(json_array_size(checks), 6);
    for (size_t i = 0; i < 6; i++) {
        json_t *c = json_array_get(checks, i);
        const char *name = json_string_value(json_object_get(c, "name"));
        cr_assert_str_eq(verdict_of(c, "verdict"), "PASS", "%s", name);
        cr_assert_str_eq(verdict_of(c, "power_low"), "FAIL", "%s: power_low", name);
        cr_assert_str_eq(verdict_of(c, "power_high"), "FAIL", "%s: power_high", name);
        cr_assert_str_eq(verdict_of(c, "vs_undelayed"), "FAIL", "%s: vs_undelayed", name);
    }
    json_decref(root);

    root = test_amsgd_json("validate --quick --only runtime-bound --threads 2 --format json", 0);
    checks = json_object_get(root, "checks");
    cr_assert_eq(json_array_size(checks), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *c = json_array_get(checks, i);
        cr_assert_str_eq(verdict_of(c, "rule"), "one-sided");
        cr_assert_str_eq(verdict_of(c, "power_high"), "null", "row %zu", i);
        cr_assert_str_eq(verdict_of(c, "power_low"), "FAIL", "row %zu", i);
        cr_assert_str_eq(verdict_of(c, "vs_undelayed"), "null", "row %zu", i);
    }
    json_decref(root);

    root = test_amsgd_json("validate --quick --only asyncmom --no-power --format json", 0);
    cr_assert(json_is_true(json_object_get(json_object_get(root, "params"), "no_power")));
    checks = json_object_get(root, "checks");
    for (size_t i = 0; i < json_array_size(checks); i++)
        for (size_t k = 0; k < 3; k++) {
            static const char *const keys[] = {"power_low", "power_high", "vs_undelayed"};
            cr_assert_str_eq(verdict_of(json_array_get(checks, i), keys[k]), "null");
        }
    json_decref(root);

    test_run r = test_amsgd("validate --quick --only asyncmom --format csv");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, ",finding,power_low,power_high,vs_undelayed\n"), "%.300s", r.out);
    cr_assert(strstr(r.out, ",FAIL,FAIL,FAIL\n"), "%.600s", r.out);
    test_run_free(&r);
    r = test_amsgd("validate --quick --only runtime-bound --format table");
    cr_assert(strstr(r.out, "power -/+") && strstr(r.out, " F/- "), "%s", r.out);
    test_run_free(&r);
}

/* The asynchrony-as-momentum and runtime checks at quick size: every row is decided against
 * its closed form (no inconclusive rows), with the fixed seed of the defaults; the synchronous
 * variants' staleness rows are exact (0, no noise). */
static void check_rows_pass(const char *name, size_t min_rows)
{
    const am_validate_check *c = am_validate_find(name);
    cr_assert_not_null(c, "no check %s", name);
    am_check_result rows[16];
    size_t n = 0;
    am_validate_opts o = am_validate_opts_default();
    o.threads = 2;
    cr_assert_eq(am_validate_run(c, &o, rows, &n), AM_OK, "check %s", name);
    cr_assert_geq(n, min_rows, "check %s wrote %zu rows", name, n);
    for (size_t i = 0; i < n; i++) {
        const am_check_result *r = &rows[i];
        /* synchronous variants have no staleness at all: sem and tolerance are exactly 0 */
        cr_assert(r->measured_sem >= 0 && r->tolerance >= 0 && isfinite(r->measured),
                  "%s (%s): measured %g sem %g tolerance %g", r->name, r->params, r->measured,
                  r->measured_sem, r->tolerance);
        cr_assert_eq(r->verdict, AM_CHECK_PASS,
                     "%s (%s): %s, measured %g +- %g, predicted %g, tol %g", r->name, r->params,
                     am_check_verdict_name(r->verdict), r->measured, r->measured_sem, r->predicted,
                     r->tolerance);
    }
}

Test(validate_table, asyncmom_check)
{
    check_rows_pass("asyncmom", 6);
}
Test(validate_table, runtime_check)
{
    check_rows_pass("runtime", 10);
}
