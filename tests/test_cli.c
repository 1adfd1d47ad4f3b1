/*
 * test_cli.c -- the command-line contract of amsgd: help, JSON keys, thread invariance of
 * the output, and every bad-input case (exit 2, one line on stderr, nothing on stdout).
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "test_util.h"

Test(cli, bad_inputs_exit_2)
{
    const char *q = "--replicas 2 --time 0.01";
    char args[512];
    static const struct {
        const char *args, *needle;
    } cases[] = {
        {"--mu 1.5", "--mu"},
        {"--mu 1", "--mu"},
        {"--mu -0.1", "--mu"},
        {"--mu abc", "--mu"},
        {"--eta 0", "--eta"},
        {"--eta -1", "--eta"},
        {"--eta nan", "--eta"},
        {"--delay const:-3", "const:T"},
        {"--delay const:abc", "const:T"},
        {"--delay uniform:1.5", "uniform:S"},
        {"--delay geometric:-1", "geometric"},
        {"--delay sometimes", "delay"},
        {"--delay const:100000000", "--delay"},
        {"--spectrum 1,2,3,4", "--spectrum"},
        {"--dim 4 --spectrum 4,3,2", "--dim"},
        {"--spectrum 5", "at least 2"},
        {"--spectrum 4,4,2,1", "eigen-gap"},
        {"--spectrum 4,3,2,0", "> 0"},
        {"--spectrum 4,3,2,-1", "> 0"},
        {"--spectrum linear:1:4", "HI > LO"},
        {"--dist student:2", "NU > 2"},
        {"--dist cauchy", "distribution"},
        {"--replicas 0", "--replicas"},
        {"--replicas 1e3", "--replicas"},
        {"--bogus 3", "unknown option"},
        {"--dim 1", "--dim"},
        {"--dim 100000000", "--dim"},
        {"--init e:5", "e:J"},
        {"--init angle:x", "angle"},
        {"--grid 0", "--grid"},
        {"--format xml", "--format"},
        {"--time -1", "--time"},
        {"--threads -2", "--threads"},
        {"--seed -5", "--seed"},
        {"--eta", "needs a value"},
        {"-o --format", "needs a value"},
        {"--seed ' -1'", "--seed"},
        {"stray", "unexpected argument"},
        {"--grid 1000000 --dim 100 --coords", "--grid"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "mc %s %s", q, cases[i].args);
        test_expect_usage_error(args, cases[i].needle);
    }
    test_expect_usage_error("frobnicate", "unknown command");
}

/* An unknown option or command that is a likely typo names the one meant; one that is no
 * near miss (or equally near two) names none. */
Test(cli, did_you_mean)
{
    test_expect_usage_error("mc --rplicas 10", "unknown option '--rplicas' for 'amsgd mc'; did "
                                               "you mean --replicas?");
    test_expect_usage_error("phase --mu-gird 0.5", "did you mean --mu-grid?");
    test_expect_usage_error("knee --tau-mx 3", "did you mean --tau-max?");
    test_expect_usage_error("mcc", "unknown command 'mcc'; did you mean 'mc'?");
    test_expect_usage_error("valdate", "did you mean 'validate'?");
    const char *far[] = {"frobnicate", "mc --bogus 3", "mc --x 1"};
    for (size_t i = 0; i < sizeof far / sizeof *far; i++) {
        test_run r = test_amsgd(far[i]);
        cr_assert_eq(r.status, 2, "%s: exit %d", far[i], r.status);
        cr_assert_null(strstr(r.err, "did you mean"), "%s: a guess for no near miss: %s", far[i],
                       r.err);
        test_run_free(&r);
    }
}

Test(cli, help_lists_flags_with_defaults)
{
    test_run r = test_amsgd("mc --help");
    cr_assert_eq(r.status, 0);
    const char *flags[] = {"--dim",    "--spectrum", "--dist",   "--eta",    "--mu",
                           "--delay",  "--init",     "--time",   "--grid",   "--replicas",
                           "--seed",   "--threads",  "--format", "--output", "--blowup",
                           "--coords", "--rotate"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_assert(strstr(r.out, flags[i]), "mc --help lacks %s", flags[i]);
    cr_assert(strstr(r.out, "[default: 5e-4]"), "mc --help should show the eta default");
    test_run_free(&r);
    r = test_amsgd("--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "mc"), "amsgd --help lists the commands");
    test_run_free(&r);
}

Test(cli, mc_json_keys_and_params)
{
    test_run r =
        test_amsgd("mc --replicas 40 --time 1 --grid 5 --seed 7 --delay const:3 --format json");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    json_error_t e;
    json_t *root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "invalid JSON: %s", e.text);
    const char *keys[] = {"command", "version",   "params", "t",        "step",    "err_mean",
                          "err_sem", "norm_mean", "alive",  "diverged", "replicas"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_assert_not_null(json_object_get(root, keys[i]), "mc JSON lacks '%s'", keys[i]);
    json_t *params = json_object_get(root, "params");
    const char *pk[] = {"dim",  "spectrum", "dist", "eta",  "mu",      "delay",
                        "init", "seed",     "time", "grid", "replicas"};
    for (size_t i = 0; i < sizeof pk / sizeof pk[0]; i++)
        cr_assert_not_null(json_object_get(params, pk[i]), "params lack '%s'", pk[i]);
    cr_assert_str_eq(json_string_value(json_object_get(params, "delay")), "const:3");
    cr_assert_str_eq(json_string_value(json_object_get(params, "seed")), "7");
    cr_assert_eq(json_array_size(json_object_get(root, "t")), 5);
    cr_assert_eq(json_integer_value(json_array_get(json_object_get(root, "step"), 4)), 2000);
    json_decref(root);
    test_run_free(&r);
}

/* A comma-list spectrum without --dim sets the dimension; with --dim the lengths must agree
 * (bad_inputs_exit_2), and linear:HI:LO still follows --dim. */
Test(cli, spectrum_list_sets_dim)
{
    test_run r = test_amsgd("mc --spectrum 4,3,2 --replicas 2 --time 0.01 --grid 2 --format json");
    cr_assert_eq(r.status, 0, "mc --spectrum 4,3,2 exited %d: %s", r.status, r.err);
    json_error_t e;
    json_t *root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "invalid JSON: %s", e.text);
    json_t *params = json_object_get(root, "params");
    cr_assert_eq(json_integer_value(json_object_get(params, "dim")), 3,
                 "--spectrum 4,3,2 without --dim: dim %lld, expected 3",
                 (long long)json_integer_value(json_object_get(params, "dim")));
    cr_assert_eq(json_array_size(json_object_get(params, "spectrum")), 3);
    json_decref(root);
    test_run_free(&r);
    r = test_amsgd("mc --spectrum linear:4:1 --replicas 2 --time 0.01 --grid 2 --format json");
    cr_assert_eq(r.status, 0, "mc --spectrum linear:4:1 exited %d: %s", r.status, r.err);
    root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "invalid JSON: %s", e.text);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(root, "params"), "dim")), 4,
                 "linear:HI:LO must keep the default --dim 4");
    json_decref(root);
    test_run_free(&r);
}

Test(cli, output_identical_for_any_thread_count)
{
    const char *base =
        "mc --replicas 300 --time 2 --grid 9 --delay uniform:5 --mu 0.5 --init random-each";
    char a1[256], a2[256];
    snprintf(a1, sizeof a1, "%s --threads 1", base);
    snprintf(a2, sizeof a2, "%s --threads 2", base);
    test_run r1 = test_amsgd(a1), r2 = test_amsgd(a2);
    cr_assert_eq(r1.status, 0);
    cr_assert_eq(r2.status, 0);
    cr_assert_str_eq(r1.out, r2.out, "CSV differs between --threads 1 and 2");
    test_run_free(&r1);
    test_run_free(&r2);
}

Test(cli, figures_registry)
{
    test_run r = test_amsgd("figures --list");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *names[] = {"mc_error", "compare", "converge", "liu2018", "knee", "runtime"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        cr_assert(strstr(r.out, names[i]), "figures --list lacks %s", names[i]);
    test_run_free(&r);
    r = test_amsgd("figures --dry-run --only mc_error");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, " mc --dim 4") && strstr(r.out, "gnuplot"),
              "dry run should show the amsgd and gnuplot commands, got '%s'", r.out);
    test_run_free(&r);
    test_expect_usage_error("figures --only nosuchfigure", "--only");
    test_expect_usage_error("figures --dir /nonexistent/folder", "--dir");
}

Test(cli, workers_delay_only_where_supported)
{
    test_expect_usage_error("compare --delay workers:4:exp:1 --time 1", "workers");
    test_expect_usage_error("converge --delay workers:4:exp:1", "workers");
    test_expect_usage_error("sde --delay workers:4:exp:1", "--delay");
}

/* a horizon past the random streams' step limit (2^48) is bad input, found before computing
   (it used to exit 3 with "invalid argument") */
Test(cli, horizon_beyond_the_stream_limit_is_bad_input)
{
    test_expect_usage_error("mc --time 1e12 --eta 1e-3 --grid 2 --replicas 1", "2^48");
    test_expect_usage_error("sde --time 1e12 --eta 1e-3 --grid 2 --replicas 1", "2^48");
    test_expect_usage_error("compare --time 1e12 --eta 1e-3 --grid 2 --replicas 1", "2^48");
}

/* wallclock's least-squares objective refuses the Async-MSGD flags instead of ignoring them
   (D9), and --dim follows its help (d >= 2) */
Test(cli, wallclock_lsq_refuses_pca_flags)
{
    const char *base = "wallclock --workers 4 --updates 20 --replicas 4 --grid 3 --variants sync";
    const char *flags[] = {"--mu abc",   "--mu 0.5",   "--spectrum garbage",
                           "--init foo", "--dist foo", "--rotate -1"};
    char cmd[256];
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", base, flags[i]);
        test_expect_usage_error(cmd, "--objective pca");
    }
    snprintf(cmd, sizeof cmd, "%s --dim 1", base);
    test_expect_usage_error(cmd, "--dim");
    test_run r = test_amsgd(base);
    cr_expect_eq(r.status, 0, "%s: exit %d (%s)", base, r.status, r.err);
    test_run_free(&r);
}
