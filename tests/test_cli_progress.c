/*
 * test_cli_progress.c -- progress of the long non-sweep commands: the ensemble reports through
 * its callback (am_ensemble_progress_set; the library never prints) and the command prints
 * one line on stderr, rewritten in place, only on a terminal or with --progress; the results
 * do not change.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/am_ensemble.h"
#include "../core/am_grid.h"
#include "../montecarlo/am_data.h"
#include "../montecarlo/am_msgd.h"
#include "test_util.h"

typedef struct {
    size_t calls, last, total, decreasing, at_total;
} recorder;

static void record(void *ctx, size_t done, size_t total)
{
    recorder *r = ctx;
    if (done < r->last) r->decreasing++;
    r->calls++;
    r->at_total += done == total;
    r->last = done;
    r->total = total;
}

static am_ensemble_result *run(size_t R, int threads, recorder *rec)
{
    const double l[4] = {4, 3, 2, 1};
    am_dist dist;
    char err[100];
    am_problem_dist_parse("gaussian", &dist, err, sizeof err);
    am_problem *p = am_problem_alloc(4, l, dist, 0, NULL, NULL, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.01;
    par.mu = 0.5;
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    am_grid grid = {5, 1.0};
    uint64_t k[5];
    am_grid_steps(&grid, par.eta, k);
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = threads;
    am_ensemble_progress_set(rec ? record : NULL, rec);
    am_ensemble_result *res = NULL;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 5, &ep, &res), AM_OK);
    am_ensemble_progress_set(NULL, NULL);
    am_msgd_free(m);
    am_problem_free(p);
    return res;
}

Test(cli_progress, the_ensemble_reports_its_replicas)
{
    for (int threads = 1; threads <= 2; threads++) {
        recorder rec = {0};
        am_ensemble_result *with = run(3000, threads, &rec), *without = run(3000, threads, NULL);
        /* 3000 replicas are 94 chunks of 32: thread 0 reports each of its chunks (with more
         * threads it may get none of these small ones), then the end unless its last chunk
         * reported it: total is reported exactly once, last */
        cr_assert_geq(rec.calls, 1, "threads %d: %zu calls", threads, rec.calls);
        cr_assert_eq(rec.last, 3000, "threads %d: last call %zu", threads, rec.last);
        cr_assert_eq(rec.total, 3000);
        cr_assert_eq(rec.decreasing, 0, "threads %d: the count went down", threads);
        cr_assert_eq(rec.at_total, 1, "threads %d: %zu calls with done = total", threads,
                     rec.at_total);
        if (threads == 1) cr_assert_eq(rec.calls, 94, "one call per chunk, the last the end");
        for (size_t i = 0; i < 5 * with->nobs; i++)
            cr_assert(with->obs[i].mean == without->obs[i].mean &&
                          with->obs[i].n == without->obs[i].n,
                      "threads %d: the progress hook changed observable %zu", threads, i);
        am_ensemble_result_free(with);
        am_ensemble_result_free(without);
    }
    /* off after the run: a later run calls nothing */
    recorder rec = {0};
    am_ensemble_progress_set(record, &rec);
    am_ensemble_progress_set(NULL, NULL);
    am_ensemble_result_free(run(64, 1, NULL));
    cr_assert_eq(rec.calls, 0);
}

Test(cli_progress, a_line_on_stderr_only_when_asked)
{
    const char *cmds[] = {"mc --replicas 3000 --time 0.5 --grid 3",
                          "sde --replicas 3000 --time 0.5 --grid 3",
                          "compare --replicas 500 --time 0.5 --grid 3",
                          "converge --replicas 200 --time 0.5 --etas 0.02,0.01",
                          "wallclock --workers 4 --updates 50 --replicas 100 --grid 3",
                          "staleness --replicas 4 --max-steps 500 --s 0,2"};
    const char *names[] = {"mc", "sde", "compare", "converge", "wallclock", "staleness"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char args[256];
        snprintf(args, sizeof args, "%s --progress", cmds[i]);
        test_run quiet = test_amsgd(cmds[i]), loud = test_amsgd(args);
        cr_assert_eq(quiet.status, 0, "amsgd %s: %s", cmds[i], quiet.err);
        cr_assert_eq(loud.status, 0, "amsgd %s: %s", args, loud.err);
        cr_assert_str_eq(quiet.out, loud.out, "amsgd %s: --progress changed the output", cmds[i]);
        /* a pipe or a file is not a terminal: nothing by default (converge's summary aside) */
        if (strcmp(names[i], "converge") != 0)
            cr_assert_eq(quiet.err[0], 0, "amsgd %s wrote '%s' to a file", cmds[i], quiet.err);
        else
            cr_assert(!strstr(quiet.err, "replicas,"), "amsgd %s: '%s'", cmds[i], quiet.err);
        /* one ensemble (mc, sde) is "ensemble", several are numbered */
        int one = strcmp(names[i], "mc") == 0 || strcmp(names[i], "sde") == 0;
        char want[64];
        snprintf(want, sizeof want, "\r%s: %s", names[i],
                 strcmp(names[i], "staleness") == 0 ? "1/"
                 : one                              ? "ensemble: "
                                                    : "ensemble 1: ");
        cr_assert(strncmp(loud.err, want, strlen(want)) == 0, "amsgd %s: stderr '%s'", args,
                  loud.err);
        cr_assert(strstr(loud.err, " replicas, ") || strstr(loud.err, " ensembles, "),
                  "amsgd %s: stderr '%s'", args, loud.err);
        char *nl = strchr(loud.err, '\n');
        cr_assert(nl, "amsgd %s: the progress line is not ended", args);
        test_run_free(&quiet);
        test_run_free(&loud);
    }
    /* mc's last line reports every replica, and its one ensemble is never counted twice */
    test_run r = test_amsgd("mc --replicas 3000 --time 0.5 --grid 3 --progress");
    cr_assert(strstr(r.err, "3000/3000 replicas"), "stderr '%s'", r.err);
    cr_assert(!strstr(r.err, "ensemble 2"), "stderr '%s'", r.err);
    test_run_free(&r);
    /* compare runs its ensembles one after the other: 1, 2, ..., each ended once */
    r = test_amsgd("compare --replicas 500 --time 0.5 --grid 3 --progress");
    cr_assert(strstr(r.err, "ensemble 2: 500/500 replicas") && !strstr(r.err, "ensemble 3"),
              "stderr '%s'", r.err);
    test_run_free(&r);
}
