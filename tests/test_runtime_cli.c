/*
 * test_runtime_cli.c -- the `amsgd runtime` command: JSON keys and values against the closed
 * forms, CSV shape, bad input (exit 2, one line on stderr, nothing on stdout).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "test_util.h"

Test(runtime_cli, json_keys_and_values)
{
    json_t *root = test_amsgd_json("runtime --workers 4 --runtime exp:2 --K 1,2 --updates 300 "
                                   "--replicas 60 --seed 5 --format json",
                                   0);
    cr_assert_str_eq(json_string_value(json_object_get(root, "command")), "runtime");
    json_t *params = json_object_get(root, "params");
    cr_assert_str_eq(json_string_value(json_object_get(params, "seed")), "5");
    cr_assert_str_eq(json_string_value(json_object_get(params, "runtime")), "exp:2");
    json_t *v = json_object_get(root, "variants");
    cr_assert(json_is_array(v));
    cr_assert_eq(json_array_size(v), 2 + 4 * 2, "rows: %zu", json_array_size(v));
    const char *names[] = {"sync", "k-sync", "k-batch-sync", "async", "k-async", "k-batch-async"};
    int seen[6] = {0};
    size_t i;
    json_t *o;
    json_array_foreach(v, i, o)
    {
        const char *keys[] = {"name",   "K",       "time_per_iter", "time_per_iter_sem",
                              "theory", "p_fresh", "mean_staleness"};
        for (int k = 0; k < 7; k++)
            cr_assert_not_null(json_object_get(o, keys[k]), "row %zu lacks %s", i, keys[k]);
        const char *name = json_string_value(json_object_get(o, "name"));
        for (int n = 0; n < 6; n++)
            seen[n] += strcmp(name, names[n]) == 0;
        double t = json_number_value(json_object_get(o, "time_per_iter"));
        double sem = json_number_value(json_object_get(o, "time_per_iter_sem"));
        double th = json_number_value(json_object_get(o, "theory"));
        /* exponential runtimes: every variant has a closed form */
        cr_assert(fabs(t - th) <= 5 * sem, "%s K=%lld: %.6g +- %.2g vs %.6g", name,
                  json_integer_value(json_object_get(o, "K")), t, sem, th);
    }
    for (int n = 0; n < 6; n++)
        cr_assert(seen[n] >= 1, "variant %s missing", names[n]);
    /* sync with P=4, rate 2: H_4/2 = 25/24 */
    o = json_array_get(v, 0);
    cr_assert_str_eq(json_string_value(json_object_get(o, "name")), "sync");
    cr_assert(fabs(json_number_value(json_object_get(o, "theory")) - 25.0 / 24.0) < 1e-14);
    json_decref(root);
}

Test(runtime_cli, csv_and_null_theory)
{
    test_run r = test_amsgd("runtime --workers 3 --runtime uniform:1:2 --K 2 --updates 50 "
                            "--replicas 10");
    cr_assert_eq(r.status, 0, "status %d, stderr: %s", r.status, r.err);
    cr_assert(strncmp(r.out, "name,K,time_per_iter,time_per_iter_sem,theory,", 46) == 0,
              "header: %.80s", r.out);
    size_t lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 1 + 2 + 4, "lines: %zu", lines);
    /* k-async K=2 < P under a uniform runtime has no closed form: nan */
    cr_assert_not_null(strstr(r.out, "\nk-async,2,"), "no k-async row");
    const char *row = strstr(r.out, "\nk-async,2,");
    const char *eol = strchr(row + 1, '\n');
    char buf[256] = {0};
    memcpy(buf, row + 1, (size_t)(eol - row - 1) < 255 ? (size_t)(eol - row - 1) : 255);
    cr_assert_not_null(strstr(buf, ",nan,"), "k-async row: %s", buf);
    test_run_free(&r);
}

/* An infinite-mean runtime warns on stderr (its sync mean does not settle); a row without a
 * closed form under a finite-mean runtime (uniform, k-async K < P) does not. */
Test(runtime_cli, infinite_mean_runtime_warns)
{
    test_run r = test_amsgd("runtime --workers 3 --runtime pareto:0.5:1 --K 2 --updates 50 "
                            "--replicas 10");
    cr_assert_eq(r.status, 0, "status %d, stderr: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.err, "warning: --runtime pareto:0.5:1 has an infinite mean"),
                       "pareto:0.5:1 without warning, stderr: %s", r.err);
    test_run_free(&r);
    r = test_amsgd("runtime --workers 3 --runtime uniform:1:2 --K 2 --updates 50 --replicas 10");
    cr_assert_eq(r.status, 0, "status %d, stderr: %s", r.status, r.err);
    cr_assert_null(strstr(r.err, "warning"), "uniform:1:2 warned: %s", r.err);
    test_run_free(&r);
}

Test(runtime_cli, bad_input)
{
    const char *bad[] = {"runtime --workers 0",     "runtime --runtime exp:-1",
                         "runtime --runtime foo:1", "runtime --K 1,9 --workers 8",
                         "runtime --K 1.5",         "runtime --updates 0",
                         "runtime --K ''",          "runtime --replicas 1",
                         "runtime --format xml"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        test_expect_flag_error(bad[i], 1);
    test_run h = test_amsgd("runtime --help");
    cr_assert_eq(h.status, 0);
    const char *flags[] = {"--workers",  "--runtime", "--K",       "--updates", "--burnin",
                           "--replicas", "--seed",    "--threads", "--format",  "--output"};
    for (int k = 0; k < 10; k++)
        cr_assert_not_null(strstr(h.out, flags[k]), "--help lacks %s", flags[k]);
    test_run_free(&h);
}
