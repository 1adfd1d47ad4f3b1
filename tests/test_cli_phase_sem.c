/*
 * test_cli_phase_sem.c -- the standard error of phase's ratio metric e(tau) / e(0): the cells
 * of a row run replica k on the same random numbers, so the error is the paired one
 * (am_phase_paired_ratio_sem). Checked against a hand computation, and against the spread of
 * the ratio over independent seeds, which the delta method for independent cells overstates
 * many times over.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../studies/am_phase.h"
#include "test_util.h"

Test(cli_phase_sem, paired_ratio_sem_by_hand)
{
    /* stride 2: the second value of each pair is padding; pair 3 has a NaN and is skipped */
    const double x[] = {1.0, 9, 2.0, 9, 3.5, 9, NAN, 9, 4.0, 9};
    const double y[] = {1.0, 9, 2.5, 9, 3.0, 9, 1.0, 9, 5.0, 9};
    double xm = (1.0 + 2.0 + 3.5 + 4.0) / 4, ym = (1.0 + 2.5 + 3.0 + 1.0 + 5.0) / 5;
    double r = xm / ym, d[4] = {1.0 - r * 1.0, 2.0 - r * 2.5, 3.5 - r * 3.0, 4.0 - r * 5.0};
    double dm = (d[0] + d[1] + d[2] + d[3]) / 4, ss = 0;
    for (int i = 0; i < 4; i++)
        ss += (d[i] - dm) * (d[i] - dm);
    double want = sqrt(ss / 3 / 4) / ym;
    double got = am_phase_paired_ratio_sem(x, y, 5, 2, xm, ym);
    cr_assert(fabs(got - want) <= 1e-14 * want, "paired sem %.17g, by hand %.17g", got, want);
    /* fewer than two complete pairs, or a zero reference: no standard error */
    cr_assert(isnan(am_phase_paired_ratio_sem(x, y, 1, 2, xm, ym)));
    cr_assert(isnan(am_phase_paired_ratio_sem(x, y, 5, 2, xm, 0.0)));
    /* identical samples: r = 1 and every difference 0 */
    cr_assert_eq(am_phase_paired_ratio_sem(y, y, 5, 2, ym, ym), 0.0);
}

/* metric and metric_sem of the row (mu, tau) of a phase CSV */
static void csv_cell(const char *csv, double mu, double tau, double *met, double *sem)
{
    const char *p = strchr(csv, '\n');
    cr_assert_not_null(p);
    for (p++; *p; p = strchr(p, '\n') + 1) {
        double m, t, a, b;
        if (sscanf(p, "%lf,%lf,%lf,%lf", &m, &t, &a, &b) == 4 && m == mu && t == tau) {
            *met = a;
            *sem = b;
            return;
        }
        if (!strchr(p, '\n')) break;
    }
    cr_assert_fail("no row mu %g tau %g in '%s'", mu, tau, csv);
}

/* Over 12 seeds the ratio's standard deviation is what its standard error predicts: the
 * reported (paired) error agrees with it within the sampling error of a standard deviation
 * from 12 values (a factor 2 either way is far outside: sd/sem has a relative spread of about
 * 1/sqrt(2 * 11) = 0.21), while the independent-cells delta method, computed from the same
 * cells' stationary errors, overstates it more than twice. */
Test(cli_phase_sem, paired_sem_matches_the_spread_over_seeds, .timeout = 60)
{
    const char *base = "phase --delay-model geometric --mu-grid 0.9 --tau-grid 0,20 --replicas 100 "
                       "--time 5 --grid 21 --threads 1 --quiet";
    enum { NSEED = 12 };
    double ratio[NSEED], sem_sum = 0, indep_sum = 0;
    for (int s = 0; s < NSEED; s++) {
        char args[512];
        snprintf(args, sizeof args, "%s --metric ratio --seed %d", base, s + 1);
        test_run r = test_amsgd(args);
        cr_assert_eq(r.status, 0, "amsgd %s: %s", args, r.err);
        double sem;
        csv_cell(r.out, 0.9, 20, &ratio[s], &sem);
        sem_sum += sem;
        test_run_free(&r);
        snprintf(args, sizeof args, "%s --metric stationary --seed %d", base, s + 1);
        r = test_amsgd(args);
        cr_assert_eq(r.status, 0, "amsgd %s: %s", args, r.err);
        double e0, s0, e1, s1;
        csv_cell(r.out, 0.9, 0, &e0, &s0);
        csv_cell(r.out, 0.9, 20, &e1, &s1);
        cr_assert(fabs(e1 / e0 - ratio[s]) <= 1e-8 * ratio[s],
                  "ratio %g vs e1/e0 %g (CSV: 10 digits)", ratio[s], e1 / e0);
        indep_sum += e1 / e0 * sqrt((s1 / e1) * (s1 / e1) + (s0 / e0) * (s0 / e0));
        test_run_free(&r);
    }
    double mean = 0, ss = 0;
    for (int s = 0; s < NSEED; s++)
        mean += ratio[s] / NSEED;
    for (int s = 0; s < NSEED; s++)
        ss += (ratio[s] - mean) * (ratio[s] - mean);
    double sd = sqrt(ss / (NSEED - 1)), sem = sem_sum / NSEED, indep = indep_sum / NSEED;
    cr_assert(sd / sem > 0.5 && sd / sem < 2,
              "mu 0.9, geometric:20, 100 replicas, T = 5, %d seeds: sd of the ratio %.4g, mean "
              "paired sem %.4g (ratio %.3g)",
              NSEED, sd, sem, sd / sem);
    cr_assert(sd / indep < 0.5,
              "the independent delta method %.4g should overstate the spread %.4g", indep, sd);
}

/* A ratio checkpoint cut after the tau = 0 cell resumes to the same bytes: the other cells
 * recompute the reference's per-replica errors (as a rank that did not run it does). */
Test(cli_phase_sem, ratio_resume_recomputes_the_reference)
{
    char dir[] = "/tmp/amsgd-ratio-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *a = "phase --mu-grid 0.5,0.9 --tau-grid 0,5,10 --metric ratio --replicas 50 "
                    "--time 0.5 --eta 0.01 --grid 3 --quiet --format json";
    char args[1024], sh[1024];
    snprintf(args, sizeof args, "%s -o %s/full.json", a, dir);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "%s --checkpoint %s/c.ckpt -o %s/x.json", a, dir, dir);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    snprintf(sh, sizeof sh, "head -n 2 %s/c.ckpt > %s/cut.ckpt", dir, dir);
    cr_assert_eq(system(sh), 0);
    snprintf(args, sizeof args, "%s --checkpoint %s/cut.ckpt --resume -o %s/res.json", a, dir, dir);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    snprintf(sh, sizeof sh, "cmp -s %s/full.json %s/res.json", dir, dir);
    cr_assert_eq(system(sh), 0, "the resumed ratio sweep differs from the full one");
    /* a stationary checkpoint (six values a cell) is refused by the ratio metric */
    snprintf(args, sizeof args,
             "phase --mu-grid 0.5,0.9 --tau-grid 0,5,10 --replicas 50 --time 0.5 --eta 0.01 "
             "--grid 3 --quiet --checkpoint %s/s.ckpt -o %s/s.json",
             dir, dir);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "%s --checkpoint %s/s.ckpt --resume -o %s/y.json", a, dir, dir);
    test_expect_usage_error(args, "--checkpoint");
    snprintf(sh, sizeof sh, "rm -rf '%s'", dir);
    cr_assert_eq(system(sh), 0);
}
