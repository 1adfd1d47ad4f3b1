/*
 * test_cli_limits.c -- inputs over the internal limits are usage errors found before
 * computing: memory (the synthetic data set of staleness, the parameter server's history of
 * mc) and total work (the estimate against AMSGD_MAX_WORK, docs/limits.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "test_util.h"

/* memory over the limit: exit 2, one line naming the flags (they used to exit 3) */
Test(cli_limits, memory_over_the_limit_is_bad_input)
{
    test_expect_usage_error("staleness --rows 10000000 --features 10000", "--rows 10000000");
    test_expect_usage_error("mc --replicas 4 --time 0.2 --grid 3 --eta 1e-2 "
                            "--delay workers:1000000:exp:1",
                            "--delay workers:1000000");
    test_expect_usage_error("mc --replicas 1 --time 0.01 --grid 2 --dim 100000 "
                            "--delay workers:100000:exp:1",
                            "--dim 100000");
    test_expect_usage_error("dde --lag 0.1 --dim 100000 --time 100 --grid 100000", "--grid 100000");
    test_expect_usage_error(
        "phase --mu-grid 0.5 --tau-grid 0,1 --metric ratio --replicas 500000000 "
        "--time 0.001 --eta 0.001 --grid 2 --quiet",
        "--metric ratio");
    /* just under the limits the same commands run */
    test_run r = test_amsgd("mc --replicas 4 --time 0.2 --grid 3 --eta 1e-2 "
                            "--delay workers:1000:exp:1");
    cr_assert_eq(r.status, 0, "workers:1000: exit %d (%s)", r.status, r.err);
    test_run_free(&r);
}

/* the commands of the work-bound finding, each refused at once with its estimate */
Test(cli_limits, unbounded_work_is_refused_up_front, .timeout = 20)
{
    const char *cmds[] = {
        "mc --replicas 1000000000 --time 1e9 --eta 1e-3",
        "runtime --workers 100000 --updates 1000000000 --replicas 100000000 --K 1",
        "staleness --workers 100000 --batch 1000000 --max-steps 1000000000 --replicas 1000000",
        "mc --dim 100000 --replicas 1000000000 --time 1000",
        "sde --replicas 1000000000 --time 1e6 --eta 1e-3",
        "compare --replicas 1000000000 --time 1000",
        "converge --etas 1e-6,1e-7 --replicas 100000 --time 100",
        "phase --mu-grid 0:0.9:100 --tau-grid 0:99:100 --replicas 100000 --time 100 --quiet",
        "knee --mus 0.5,0.9 --replicas 1000000 --time 1000 --quiet",
        "wallclock --workers 100000 --updates 1000000000 --replicas 1000",
        "tradeoff --model mlr --data idx:tests/data/idx-tiny --budget 1000000000000",
        "staleness --model mlr --data idx:tests/data/idx-tiny --max-batches 1000000000",
        "staleness --preset dai2019 --max-batches 1000000000 --quiet",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
        test_expect_usage_error(cmds[i], "AMSGD_MAX_WORK");
}

/* The estimate is the product it prints: mc's default run is 1000 replicas x (10 / 5e-4 =
 * 20000) steps x d 4 = 8e7 updates. A limit just below refuses it, one just above runs it. */
Test(cli_limits, the_estimate_and_the_override)
{
    setenv("AMSGD_MAX_WORK", "7.9e7", 1);
    test_expect_usage_error("mc --grid 3", "about 8e+07 updates");
    test_expect_usage_error("mc --grid 3", "1000 replicas x 2e+04 steps x d 4");
    setenv("AMSGD_MAX_WORK", "8.1e7", 1);
    test_run r = test_amsgd("mc --grid 3");
    cr_assert_eq(r.status, 0, "AMSGD_MAX_WORK=8.1e7: exit %d (%s)", r.status, r.err);
    test_run_free(&r);
    /* phase: 2 x 3 cells x 4 replicas x (1 / 1e-2 = 100) steps x d 4 = 9600 */
    setenv("AMSGD_MAX_WORK", "9599", 1);
    test_expect_usage_error("phase --mu-grid 0.5,0.9 --tau-grid 0,1,2 --replicas 4 --time 1 "
                            "--eta 1e-2 --grid 3 --quiet",
                            "about 9.6e+03 updates");
    setenv("AMSGD_MAX_WORK", "9601", 1);
    r = test_amsgd("phase --mu-grid 0.5,0.9 --tau-grid 0,1,2 --replicas 4 --time 1 --eta 1e-2 "
                   "--grid 3 --quiet");
    cr_assert_eq(r.status, 0, "phase under the limit: exit %d (%s)", r.status, r.err);
    test_run_free(&r);
    /* none lifts the limit; a malformed value is itself a usage error naming the variable */
    setenv("AMSGD_MAX_WORK", "none", 1);
    r = test_amsgd("mc --grid 3 --replicas 10");
    cr_assert_eq(r.status, 0, "AMSGD_MAX_WORK=none: exit %d (%s)", r.status, r.err);
    test_run_free(&r);
    const char *bad[] = {"abc", "0", "-5", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("AMSGD_MAX_WORK", bad[i], 1);
        test_expect_usage_error("mc --grid 3 --replicas 10", "AMSGD_MAX_WORK");
    }
    unsetenv("AMSGD_MAX_WORK");
}

/* The network studies count one update per row and parameter of each minibatch gradient
 * (runs x batches x rows x parameters, as the message says); a small run goes through. */
Test(cli_limits, network_work_is_the_product_it_prints, .timeout = 60)
{
    test_expect_usage_error("tradeoff --model mlr --data idx:tests/data/idx-tiny --workers 1,2 "
                            "--mus 0.5,0.9 --seeds 2 --budget 1000000000",
                            "8 runs x 1e+09 batches x 32 rows x");
    test_run r = test_amsgd("tradeoff --model mlr --data idx:tests/data/idx-tiny --workers 1 "
                            "--mus 0.5 --seeds 2 --budget 20 --quiet");
    cr_assert_eq(r.status, 0, "a small run refused: %s", r.err);
    test_run_free(&r);
}
