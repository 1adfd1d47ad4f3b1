/*
 * test_ensemble_ranks.c -- the distribution of an ensemble over MPI ranks
 * (core/am_ensemble_impl.h), without MPI: the partition of the chunks over P ranks covers
 * every chunk once, in contiguous runs, in rounds; the run simulated as P ranks in one
 * process (each rank's chunks through its packed message, merged in chunk order) gives the
 * serial bytes; the serial result is rebuilt from one-chunk ensembles merged in chunk order,
 * while merging each rank's partial sum first (a tree, not the chunk order) does not give
 * the same bytes. The MPI runs themselves are compared with the serial build by
 * scripts/mpi-check.sh.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_ensemble_impl.h"
#include "../montecarlo/am_msgd.h"
#include "test_util.h"

Test(ensemble_ranks, partition_covers_every_chunk_once_in_contiguous_runs)
{
    const size_t reps[] = {1, 31, 32, 33, 64 * 32, 64 * 32 + 1, 100000, 3 * 64 * 32 * 7 + 5};
    for (size_t ir = 0; ir < sizeof reps / sizeof *reps; ir++)
        for (int P = 1; P <= 9; P++) {
            size_t R = reps[ir], n = am_ensemble_nchunks(R);
            cr_assert_eq(n, (R + AM_ENSEMBLE_CHUNK - 1) / AM_ENSEMBLE_CHUNK);
            unsigned char *seen = calloc(n, 1);
            size_t rounds = am_ensemble_rounds(R, P), next = 0;
            for (size_t w = 0; w < rounds; w++) {
                size_t lo = SIZE_MAX, hi = 0;
                for (int r = 0; r < P; r++) {
                    size_t c0, c1;
                    am_ensemble_partition(R, P, w, r, &c0, &c1);
                    cr_assert_leq(c0, c1, "R %zu P %d round %zu rank %d", R, P, w, r);
                    cr_assert_leq(c1 - c0, (size_t)AM_ENSEMBLE_WAVE, "R %zu P %d", R, P);
                    if (c1 == c0) continue;
                    /* ranks follow each other: rank r's run starts where rank r-1's ended */
                    cr_assert_eq(c0, next, "R %zu P %d round %zu rank %d: [%zu, %zu) after %zu", R,
                                 P, w, r, c0, c1, next);
                    for (size_t c = c0; c < c1; c++) {
                        cr_assert_lt(c, n, "R %zu P %d: chunk %zu of %zu", R, P, c, n);
                        cr_assert_eq(seen[c], 0, "R %zu P %d: chunk %zu twice", R, P, c);
                        seen[c] = 1;
                    }
                    next = c1;
                    lo = c0 < lo ? c0 : lo;
                    hi = c1;
                }
                cr_assert_gt(hi, lo, "R %zu P %d: round %zu is empty", R, P, w);
                /* balanced: every rank before the last non-empty one runs ceil(n_w / P) */
                size_t q = (hi - lo + (size_t)P - 1) / (size_t)P;
                for (int r = 0; r + 1 < P; r++) {
                    size_t c0, c1;
                    am_ensemble_partition(R, P, w, r, &c0, &c1);
                    if (c1 < hi)
                        cr_assert_eq(c1 - c0, q, "R %zu P %d round %zu rank %d", R, P, w, r);
                }
            }
            cr_assert_eq(next, n, "R %zu P %d: %zu of %zu chunks", R, P, next, n);
            size_t c0, c1; /* past the last round: nothing */
            am_ensemble_partition(R, P, rounds, 0, &c0, &c1);
            cr_assert_eq(c0, c1);
            free(seen);
        }
}

/* A cheap model with values that have no short binary form, a divergence and a summary. */
typedef struct {
    uint64_t offset;       /* replica r of this ensemble is replica r + offset */
    uint64_t fail_replica; /* start fails (UINT64_MAX: never) */
} toy_ctx;

typedef struct {
    uint64_t replica;
    double x;
} toy_work;

static am_status toy_start(const void *ctx, uint64_t replica, void *work)
{
    const toy_ctx *c = ctx;
    toy_work *w = work;
    w->replica = replica + c->offset;
    w->x = sin(0.7 * (double)w->replica) + 1.0 / (1.0 + (double)(w->replica % 97));
    return w->replica == c->fail_replica ? AM_ESOLVER : AM_OK;
}

static int toy_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    (void)ctx;
    toy_work *w = work;
    for (uint64_t k = k0; k < k1; k++)
        w->x = w->x * 0.93 + 0.1 * cos((double)(w->replica * 13 + k));
    return w->replica % 11 == 5 && k1 >= 3 ? AM_ENSEMBLE_DIVERGED : AM_ENSEMBLE_ALIVE;
}

static void toy_observe(const void *ctx, const void *work, double *obs)
{
    (void)ctx;
    const toy_work *w = work;
    obs[0] = w->x;
    obs[1] = w->x * w->x * 1e3;
}

static void toy_summarize(const void *ctx, const void *work, const double *obs, size_t ngrid,
                          int diverged, double *summary)
{
    (void)ctx;
    (void)work;
    summary[0] = diverged ? NAN : obs[(ngrid - 1) * 2];
}

static am_model toy_model(const toy_ctx *c)
{
    am_model m;
    memset(&m, 0, sizeof m);
    m.nobs = 2;
    m.nsummary = 1;
    m.work_bytes = sizeof(toy_work);
    m.start = toy_start;
    m.advance = toy_advance;
    m.observe = toy_observe;
    m.summarize = toy_summarize;
    m.ctx = c;
    return m;
}

static const uint64_t toy_k[4] = {0, 1, 4, 9};

/* Byte equality of two results; the first difference in msg. */
static int same_bytes(const am_ensemble_result *a, const am_ensemble_result *b, int summary,
                      char *msg, size_t len)
{
    size_t G = a->ngrid, no = a->nobs, ns = a->nsummary;
    if (a->diverged != b->diverged) return snprintf(msg, len, "diverged"), 0;
    if (memcmp(a->alive, b->alive, G * sizeof *a->alive)) return snprintf(msg, len, "alive"), 0;
    for (size_t i = 0; i < G * no; i++)
        if (memcmp(&a->obs[i], &b->obs[i], sizeof a->obs[i]))
            return snprintf(msg, len, "obs %zu: mean %.17g vs %.17g, m2 %.17g vs %.17g", i,
                            a->obs[i].mean, b->obs[i].mean, a->obs[i].m2, b->obs[i].m2),
                   0;
    if (ns && memcmp(a->summary_stats, b->summary_stats, ns * sizeof *a->summary_stats))
        return snprintf(msg, len, "summary_stats"), 0;
    if (summary && ns && memcmp(a->summary, b->summary, a->replicas * ns * sizeof *a->summary))
        return snprintf(msg, len, "kept summaries"), 0;
    return 1;
}

Test(ensemble_ranks, simulated_ranks_give_the_serial_bytes)
{
    /* more than one round for P = 1..3 at the largest size */
    const size_t reps[] = {1, 33, 1000, 2 * 64 * 32 * 3 + 17};
    toy_ctx c = {0, UINT64_MAX};
    am_model m = toy_model(&c);
    for (size_t ir = 0; ir < sizeof reps / sizeof *reps; ir++)
        for (int keep = 0; keep <= 1; keep++) {
            am_ensemble_params ep = {reps[ir], 1, keep};
            am_ensemble_result *serial;
            cr_assert_eq(am_ensemble_run(&m, toy_k, 4, &ep, &serial), AM_OK);
            for (int P = 1; P <= 7; P++)
                for (int threads = 1; threads <= 2; threads++) {
                    am_ensemble_params eq = {reps[ir], threads, keep};
                    am_ensemble_result *sim;
                    cr_assert_eq(am_ensemble_run_ranks(&m, toy_k, 4, &eq, P, &sim), AM_OK);
                    char msg[256] = "";
                    cr_assert(same_bytes(serial, sim, keep, msg, sizeof msg),
                              "R %zu P %d threads %d keep %d: %s differs", reps[ir], P, threads,
                              keep, msg);
                    am_ensemble_result_free(sim);
                }
            am_ensemble_result_free(serial);
        }
}

Test(ensemble_ranks, simulated_ranks_report_the_lowest_failing_chunk)
{
    /* the failure sits on the second rank's run of the second round for P = 2 */
    const size_t R = 2 * 64 * 32 * 2;
    for (int P = 1; P <= 4; P++) {
        toy_ctx c = {0, 64 * 32 * 3 + 7};
        am_model m = toy_model(&c);
        am_ensemble_params ep = {R, 1, 0};
        am_ensemble_result *res = (am_ensemble_result *)&c;
        cr_assert_eq(am_ensemble_run_ranks(&m, toy_k, 4, &ep, P, &res), AM_ESOLVER, "P %d", P);
        cr_assert_null(res, "P %d", P);
    }
    am_ensemble_params ep = {10, 1, 0};
    am_ensemble_result *res;
    toy_ctx c = {0, UINT64_MAX};
    am_model m = toy_model(&c);
    cr_assert_eq(am_ensemble_run_ranks(&m, toy_k, 4, &ep, 0, &res), AM_EINVAL, "0 ranks");
}

/* Chunk j's statistics: a one-chunk ensemble of replicas 32 j .. 32 j + 31. */
static am_ensemble_result *chunk_stats(size_t j, size_t R)
{
    toy_ctx c = {j * AM_ENSEMBLE_CHUNK, UINT64_MAX};
    am_model m = toy_model(&c);
    size_t n = R - j * AM_ENSEMBLE_CHUNK < AM_ENSEMBLE_CHUNK ? R - j * AM_ENSEMBLE_CHUNK
                                                             : AM_ENSEMBLE_CHUNK;
    am_ensemble_params ep = {n, 1, 0};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(&m, toy_k, 4, &ep, &res), AM_OK);
    return res;
}

/* Merges b into a (statistics and counts). */
static void merge_into(am_ensemble_result *a, const am_ensemble_result *b)
{
    for (size_t i = 0; i < a->ngrid * a->nobs; i++)
        am_stats_merge(&a->obs[i], &b->obs[i]);
    for (size_t g = 0; g < a->ngrid; g++)
        a->alive[g] += b->alive[g];
    for (size_t j = 0; j < a->nsummary; j++)
        am_stats_merge(&a->summary_stats[j], &b->summary_stats[j]);
    a->diverged += b->diverged;
}

/* An empty result shaped like r. */
static am_ensemble_result *empty_like(const am_ensemble_result *r)
{
    am_ensemble_result *e = calloc(1, sizeof *e);
    *e = *r;
    e->diverged = 0;
    e->alive = calloc(r->ngrid, sizeof *e->alive);
    e->obs = calloc(r->ngrid * r->nobs, sizeof *e->obs);
    e->summary_stats = calloc(r->nsummary, sizeof *e->summary_stats);
    e->summary = NULL;
    return e;
}

Test(ensemble_ranks, chunk_order_merge_rebuilds_the_serial_bytes_and_a_tree_merge_does_not)
{
    const size_t R = 64 * 32 + 45; /* 67 chunks, the last one short */
    const int P = 2;
    toy_ctx c = {0, UINT64_MAX};
    am_model m = toy_model(&c);
    am_ensemble_params ep = {R, 1, 0};
    am_ensemble_result *serial;
    cr_assert_eq(am_ensemble_run(&m, toy_k, 4, &ep, &serial), AM_OK);
    size_t n = am_ensemble_nchunks(R);
    am_ensemble_result *ordered = empty_like(serial), *tree = empty_like(serial);
    am_ensemble_result *part[2] = {empty_like(serial), empty_like(serial)};
    for (size_t j = 0; j < n; j++) {
        am_ensemble_result *cj = chunk_stats(j, R);
        merge_into(ordered, cj);
        /* rank of chunk j in round 0 or 1 */
        for (size_t w = 0; w < am_ensemble_rounds(R, P); w++)
            for (int r = 0; r < P; r++) {
                size_t c0, c1;
                am_ensemble_partition(R, P, w, r, &c0, &c1);
                if (j >= c0 && j < c1) merge_into(part[r], cj);
            }
        am_ensemble_result_free(cj);
    }
    merge_into(tree, part[0]);
    merge_into(tree, part[1]);
    char msg[256] = "";
    cr_assert(same_bytes(serial, ordered, 0, msg, sizeof msg),
              "chunk-order merge of one-chunk ensembles: %s differs", msg);
    /* the counts agree, the floating-point merges do not: the check can fail */
    cr_assert_eq(tree->diverged, serial->diverged);
    cr_assert_not(same_bytes(serial, tree, 0, msg, sizeof msg),
                  "a merge of per-rank partial sums gave the serial bytes: the comparison "
                  "cannot tell merge orders apart");
    for (size_t i = 0; i < serial->ngrid * serial->nobs; i++) /* yet equal to rounding */
        cr_assert_float_eq(tree->obs[i].mean, serial->obs[i].mean,
                           1e-12 * (1 + fabs(serial->obs[i].mean)), "obs %zu", i);
    am_ensemble_result_free(serial);
    am_ensemble_result_free(ordered);
    am_ensemble_result_free(tree);
    am_ensemble_result_free(part[0]);
    am_ensemble_result_free(part[1]);
}

Test(ensemble_ranks, msgd_engine_simulated_over_three_ranks_gives_the_serial_bytes)
{
    const double l[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_GAUSSIAN, 0};
    am_problem *p = am_problem_alloc(4, l, dist, 0, NULL, NULL, 0);
    cr_assert_not_null(p);
    am_msgd_params par = am_msgd_params_default();
    par.eta = 0.01;
    par.mu = 0.7;
    par.seed = 5;
    char err[200];
    cr_assert_eq(am_delay_parse("uniform:4", &par.delay, err, sizeof err), AM_OK, "%s", err);
    am_status st;
    am_msgd *eng = am_msgd_alloc(p, &par, &st, NULL, 0);
    cr_assert_not_null(eng);
    const uint64_t k[3] = {0, 20, 50};
    am_ensemble_params ep = {64 * 32 * 3 + 100, 2, 1};
    am_ensemble_result *serial, *sim;
    cr_assert_eq(am_ensemble_run(am_msgd_model(eng), k, 3, &ep, &serial), AM_OK);
    cr_assert_eq(am_ensemble_run_ranks(am_msgd_model(eng), k, 3, &ep, 3, &sim), AM_OK);
    char msg[256] = "";
    cr_assert(same_bytes(serial, sim, 1, msg, sizeof msg), "msgd, 3 ranks: %s differs", msg);
    am_ensemble_result_free(serial);
    am_ensemble_result_free(sim);
    am_msgd_free(eng);
    am_problem_free(p);
}
