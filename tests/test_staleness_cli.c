/*
 * test_staleness_cli.c -- the `amsgd staleness` command: JSON keys, normalisation by s = 0,
 * CSV data files (good and malformed), bad flags.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

Test(staleness_cli, json_keys)
{
    json_t *root = test_amsgd_json("staleness --objective lsq --optimizer sgd,adam --s 0,4 "
                                   "--replicas 5 --rows 200 --features 4 --format json",
                                   0);
    cr_assert_str_eq(json_string_value(json_object_get(root, "command")), "staleness");
    json_t *res = json_object_get(root, "results");
    cr_assert_eq(json_array_size(res), 4);
    size_t i;
    json_t *o;
    json_array_foreach(res, i, o)
    {
        const char *keys[] = {
            "s",          "optimizer",    "objective", "steps_to_target", "steps_to_target_sem",
            "normalized", "coherence_min"};
        for (int k = 0; k < 7; k++)
            cr_assert_not_null(json_object_get(o, keys[k]), "row %zu lacks %s", i, keys[k]);
        if (json_integer_value(json_object_get(o, "s")) == 0) {
            cr_assert_eq(json_number_value(json_object_get(o, "normalized")), 1.0);
            cr_assert_eq(json_number_value(json_object_get(o, "coherence_min")), 1.0);
        }
    }
    json_decref(root);
}

Test(staleness_cli, csv_data)
{
    char good[64], bad[64], cmd[256];
    snprintf(good, sizeof good, "/tmp/amsgd_st_good_%d.csv", (int)getpid());
    snprintf(bad, sizeof bad, "/tmp/amsgd_st_bad_%d.csv", (int)getpid());
    FILE *f = fopen(good, "w");
    fputs("a,b,y\n", f);
    for (int i = 0; i < 50; i++)
        fprintf(f, "%g,%g,%d\n", sin(i), cos(3.0 * i), (sin(i) > 0));
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "staleness --objective logistic --optimizer sgd --s 0,2 --replicas 3 --data %s "
             "--max-steps 200 --target 0.5",
             good);
    test_run r = test_amsgd(cmd);
    cr_assert_eq(r.status, 0, "good file: status %d: %s", r.status, r.err);
    test_run_free(&r);
    /* --rows and --features size the synthetic set: with a file they are refused, not ignored */
    const char *sizes[] = {"--rows 7", "--features 3"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "staleness --data %s %s", good, sizes[i]);
        test_expect_usage_error(cmd, i ? "--features sets the size of the synthetic data set"
                                       : "--rows sets the size of the synthetic data set");
    }
    test_write_file(bad, "1,2,0\n3,oops,1\n");
    snprintf(cmd, sizeof cmd, "staleness --objective lsq --data %s", bad);
    r = test_amsgd(cmd);
    cr_assert_eq(r.status, 2, "bad file: status %d", r.status);
    cr_assert_eq(r.out[0], 0);
    cr_assert_not_null(strstr(r.err, "line 2, column 2"), "message: %s", r.err);
    test_run_free(&r);
    /* labels 0/1 required for logistic */
    test_write_file(bad, "1,2,0\n3,4,2\n");
    snprintf(cmd, sizeof cmd, "staleness --objective logistic --data %s", bad);
    r = test_amsgd(cmd);
    cr_assert_eq(r.status, 2, "labels: status %d", r.status);
    cr_assert_not_null(strstr(r.err, "0 or 1"), "message: %s", r.err);
    test_run_free(&r);
    r = test_amsgd("staleness --data /nonexistent/file.csv");
    cr_assert_eq(r.status, 2, "missing file: status %d", r.status);
    cr_assert(strncmp(r.err, "amsgd: error: --data", 20) == 0, "%s", r.err);
    test_run_free(&r);
    unlink(good);
    unlink(bad);
}

Test(staleness_cli, bad_flags)
{
    const char *bad[] = {"staleness --objective svm",  "staleness --optimizer sgd,foo",
                         "staleness --optimizer sgd,", "staleness --s 1.5",
                         "staleness --s -1",           "staleness --target 1",
                         "staleness --lr 0",           "staleness --momentum 1",
                         "staleness --workers 0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        test_expect_flag_error(bad[i], 0);
}

/* degenerate data sets are refused with exit 2 and one line (D13); the same layout with sane
   values is accepted, so the checks can pass */
Test(staleness_cli, degenerate_data_refused)
{
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"1.2.3,4,5\n1,2,3\n2,1,0\n", "'1.2.3' is not a finite number"}, /* not a header */
        {"x1,x2,y\n0,0,1\n0,0,2\n", "every feature is 0"},
        {"x1,x2,y\n1e300,2,1\n1,2,3\n", "exceeds"},
        {"x1,x2,y\n1,2,1\n-1e101,2,3\n", "exceeds"},
    };
    char path[] = "/tmp/amsgd-data-XXXXXX.csv";
    int fd = mkstemps(path, 4);
    cr_assert_geq(fd, 0);
    close(fd);
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "staleness --replicas 2 --s 0,1 --optimizer sgd --max-steps 50 --data %s", path);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        FILE *f = fopen(path, "w");
        fputs(cases[i].text, f);
        fclose(f);
        test_expect_usage_error(cmd, cases[i].needle);
    }
    FILE *f = fopen(path, "w");
    fputs("x1,x2,y\n1,2,1\n2,-1,3\n0.5,1,2\n", f);
    fclose(f);
    test_run r = test_amsgd(cmd);
    cr_expect_eq(r.status, 0, "sane data: exit %d (%s)", r.status, r.err);
    test_run_free(&r);
    remove(path);
}

/* The mean steps to target at s = 0 of one optimiser and step (CSV column 5), and the share
 * of runs that missed (column 7). */
static double steps_at(const char *opt, const char *lr, double *miss)
{
    char args[512];
    snprintf(args, sizeof args,
             "staleness --objective lsq --optimizer %s --s 0 --replicas 4 --rows 200 "
             "--features 4 --max-steps 2000 --threads 1 --lr %s",
             opt, lr);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    const char *row = strchr(r.out, '\n') + 1;
    double v[10];
    char name[32], obj[32];
    cr_assert_eq(sscanf(row, "%lf,%31[^,],%31[^,],%lf,%lf,%lf,%lf", &v[0], name, obj, &v[1], &v[2],
                        &v[3], &v[4]),
                 7, "row: %s", row);
    *miss = v[4];
    test_run_free(&r);
    return v[2];
}

Test(staleness_cli, tune_picks_the_best_grid_step)
{
    test_run r = test_amsgd("staleness --objective lsq --optimizer sgd,adam --s 0,4 --tune "
                            "--replicas 4 --rows 200 --features 4 --max-steps 2000 --threads 1 "
                            "--format json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_error_t e;
    json_t *root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "%s", e.text);
    cr_expect(json_is_true(json_object_get(json_object_get(root, "params"), "tune")));
    json_t *res = json_object_get(root, "results");
    cr_assert_eq(json_array_size(res), 4);
    const char *opt[] = {"sgd", "adam"};
    const double lr0[] = {0.2, 0.05}; /* the registry's defaults */
    for (int o = 0; o < 2; o++) {
        json_t *c0 = json_array_get(res, 2 * o), *c4 = json_array_get(res, 2 * o + 1);
        double lr = json_number_value(json_object_get(c0, "lr"));
        cr_expect_eq(lr, json_number_value(json_object_get(c4, "lr")), "%s: step not held", opt[o]);
        int on = -100;
        for (int j = -4; j <= 4; j++)
            if (fabs(lr - lr0[o] * pow(10.0, j / 2.0)) <= 1e-12 * lr) on = j;
        cr_expect_neq(on, -100, "%s: step %g is not on the grid", opt[o], lr);
        /* the tuned step is at least as fast at s = 0 as every other grid step */
        double best = json_number_value(json_object_get(c0, "steps_to_target")), miss, st[9],
               miss0 = 0;
        int faster_than_smallest = 0;
        for (int j = -4; j <= 4; j++) {
            char lrs[64];
            snprintf(lrs, sizeof lrs, "%.17g", lr0[o] * pow(10.0, j / 2.0));
            st[j + 4] = steps_at(opt[o], lrs, &miss);
            if (j == -4) miss0 = miss;
            cr_expect(miss > 0 || st[j + 4] >= best, "%s: step %s needs %g < %g steps", opt[o], lrs,
                      st[j + 4], best);
            if (j > -4 && miss == 0 && (miss0 > 0 || st[j + 4] < st[0])) faster_than_smallest = 1;
        }
        /* the same check rejects a deliberately wrong answer: the smallest grid step */
        cr_expect(faster_than_smallest, "%s: the smallest step would pass as the best", opt[o]);
    }
    json_decref(root);
    test_run_free(&r);
    test_expect_usage_error("staleness --tune --lr 0.1", "--tune");
}
