/*
 * test_wallclock_nn.c -- the parameter-server variants on networks (studies/am_wallclock_nn.h)
 * and the wallclock sweep over P, runtime laws and seeds (studies/am_wallclock_sweep.h): Sync
 * and Async with P = 1 against plain SGD on the same stream (Dai's protocol at P = 1, s = 0),
 * the snapshot ring against a re-implementation that keeps every iterate, thread invariance,
 * error bars shrinking with seeds, the measured time per update against Dutta's closed form,
 * and `amsgd wallclock --model` / `--sweep` on the committed IDX fixture with its bad flags.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../montecarlo/am_ps.h"
#include "../studies/am_nnstale.h"
#include "../studies/am_wallclock_nn.h"
#include "../studies/am_wallclock_sweep.h"
#include "test_util.h"

typedef struct {
    am_classset *tr, *te;
    am_nn *net;
} fx;

static fx open_fixture(const char *spec)
{
    char path[4200], err[512];
    fx f;
    test_fixture_spec(path, sizeof path);
    cr_assert_eq(am_classset_open(path, &f.tr, &f.te, err, sizeof err), AM_OK, "%s", err);
    am_status st;
    f.net = am_nn_alloc(spec, f.tr->d, f.tr->classes, &st, err, sizeof err);
    cr_assert_not_null(f.net, "%s", err);
    am_nn_blas_single_thread();
    return f;
}

static void close_fixture(fx *f)
{
    am_nn_free(f->net);
    am_classset_free(f->tr);
    am_classset_free(f->te);
}

static am_wallclock_nn_params small_params(const am_wallclock_variant *v, size_t nv, size_t P)
{
    am_wallclock_nn_params p = am_wallclock_nn_params_default();
    p.workers = P;
    p.variants = v;
    p.nvariants = nv;
    p.time = 30;
    p.ngrid = 7;
    p.batch = 4;
    p.opt.lr = 0.05;
    p.seeds = 3;
    p.seed = 5;
    p.threads = 1;
    return p;
}

/* With one learner every gradient is fresh: Sync (and Async) is plain minibatch SGD, i.e.
 * Dai's protocol with P = 1 and s = 0 on the same stream, bit for bit, after the same number
 * of updates; one update fewer differs, so the comparison can fail. */
Test(wallclock_nn, one_learner_is_plain_sgd)
{
    fx f = open_fixture("mlp:5");
    const size_t dim = am_nn_dim(f.net);
    const am_wallclock_variant vars[2] = {{AM_VARIANT_SYNC, 1}, {AM_VARIANT_ASYNC, 1}};
    am_wallclock_nn_params p = small_params(vars, 2, 1);
    double *t1 = malloc(dim * sizeof *t1), *t2 = malloc(dim * sizeof *t2);
    double errs[7];
    uint64_t ups[7];
    char err[256];
    for (size_t v = 0; v < 2; v++) {
        am_wallclock_nn_outcome u = {.test_error = errs, .updates = ups};
        cr_assert_eq(am_wallclock_nn_run_one(f.net, f.tr, f.te, &p, v, 2, &u, t1, err, sizeof err),
                     AM_OK, "%s", err);
        cr_assert(u.n > 10 && !u.diverged, "n %llu", (unsigned long long)u.n);
        cr_assert_eq(ups[6], u.n, "updates at T %llu vs %llu", (unsigned long long)ups[6],
                     (unsigned long long)u.n);
        cr_assert(u.p0 == 1.0 && u.max_staleness == 0, "P = 1: p0 %g", u.p0);
        for (int off = 0; off < 2; off++) {
            am_nnstale_params q = am_nnstale_params_default();
            q.workers = 1;
            q.s = 0;
            q.batch = p.batch;
            q.target = 0.999999;
            q.max_batches = u.n - (uint64_t)off;
            q.eval_every = (size_t)u.n + 1; /* no evaluation stops it early */
            q.seed = p.seed;
            am_nnstale_outcome o;
            cr_assert_eq(am_nnstale_run_one(f.net, &p.opt, &q, f.tr, f.te, 2, &o, t2), AM_OK);
            int same = memcmp(t1, t2, dim * sizeof *t1) == 0;
            if (off == 0)
                cr_expect(same, "variant %zu P = 1 after %llu updates differs from plain SGD", v,
                          (unsigned long long)u.n);
            else
                cr_expect(!same, "variant %zu: one update fewer is not told apart", v);
        }
    }
    free(t1);
    free(t2);
    close_fixture(&f);
}

/* The definition with every iterate kept: the simulator's updates, gradient l of update j on
 * w_{j - s_l} with the rows of AM_STREAM_NNSTALE, the mean gradient in one optimiser step.
 * wrong = 1 takes every gradient at the current iterate (no staleness). */
static uint64_t reference(const fx *f, const am_wallclock_nn_params *p, size_t v, uint64_t rep,
                          int wrong, double *theta)
{
    const size_t dim = am_nn_dim(f->net), B = p->batch;
    am_ps_params pp = am_ps_params_default();
    pp.workers = p->workers;
    pp.runtime = p->runtime;
    pp.variant = p->variants[v].variant;
    pp.k = p->variants[v].k;
    pp.seed = p->seed;
    am_status st;
    am_ps *ps = am_ps_alloc(&pp, &st);
    am_ps_reset(ps, rep);
    size_t cap = 64;
    double *snap = malloc(cap * dim * sizeof *snap), *g = malloc(dim * sizeof *g),
           *sum = malloc(dim * sizeof *sum);
    size_t *idx = malloc(B * sizeof *idx);
    am_nn_work *w = am_nn_work_alloc(f->net, B, &st);
    am_optim *o = am_optim_alloc(&p->opt, dim, &st);
    am_nn_init(f->net, p->seed, rep, snap);
    uint64_t j = 0;
    for (;; j++) {
        am_ps_update u;
        am_ps_next(ps, &u);
        if (u.time > p->time) break;
        if (j + 2 > cap) {
            cap *= 2;
            snap = realloc(snap, cap * dim * sizeof *snap);
        }
        am_rng r;
        am_rng_init(&r, p->seed, rep, AM_STREAM_NNSTALE, j);
        for (size_t i = 0; i < dim; i++)
            sum[i] = 0;
        for (size_t l = 0; l < u.ngrad; l++) {
            (void)am_rng_u64(&r);
            for (size_t i = 0; i < B; i++)
                idx[i] = (size_t)(am_rng_u64(&r) % f->tr->n);
            am_classset_gather(f->tr, idx, B, am_nn_work_x(w), am_nn_work_y(w));
            const double *at = snap + (wrong ? j : j - u.staleness[l]) * dim;
            am_nn_loss_grad(f->net, w, at, am_nn_work_x(w), am_nn_work_y(w), B, g);
            for (size_t i = 0; i < dim; i++)
                sum[i] = l ? sum[i] + g[i] : g[i];
        }
        if (u.ngrad > 1)
            for (size_t i = 0; i < dim; i++)
                sum[i] *= 1.0 / (double)u.ngrad;
        memcpy(snap + (j + 1) * dim, snap + j * dim, dim * sizeof *snap);
        am_optim_step(o, snap + (j + 1) * dim, sum);
    }
    memcpy(theta, snap + j * dim, dim * sizeof *theta);
    am_optim_free(o);
    am_nn_work_free(w);
    am_ps_free(ps);
    free(idx);
    free(snap);
    free(g);
    free(sum);
    return j;
}

Test(wallclock_nn, ring_matches_definition)
{
    fx f = open_fixture("mlp:4");
    const size_t dim = am_nn_dim(f.net);
    const am_wallclock_variant vars[4] = {{AM_VARIANT_ASYNC, 1},
                                          {AM_VARIANT_KASYNC, 2},
                                          {AM_VARIANT_KBATCHASYNC, 3},
                                          {AM_VARIANT_KSYNC, 2}};
    am_wallclock_nn_params p = small_params(vars, 4, 4);
    p.opt = am_optim_params_default(AM_OPT_MOMENTUM);
    p.opt.lr = 0.02;
    double *t1 = malloc(dim * sizeof *t1), *t2 = malloc(dim * sizeof *t2);
    double errs[7];
    uint64_t ups[7];
    char err[256];
    for (size_t v = 0; v < 4; v++) {
        am_wallclock_nn_outcome u = {.test_error = errs, .updates = ups};
        cr_assert_eq(am_wallclock_nn_run_one(f.net, f.tr, f.te, &p, v, 1, &u, t1, err, sizeof err),
                     AM_OK, "%s", err);
        uint64_t n = reference(&f, &p, v, 1, 0, t2);
        cr_assert_eq(n, u.n, "variant %zu: %llu vs %llu updates", v, (unsigned long long)u.n,
                     (unsigned long long)n);
        cr_expect(memcmp(t1, t2, dim * sizeof *t1) == 0,
                  "variant %zu: ring differs from the re-implementation (max staleness %llu)", v,
                  (unsigned long long)u.max_staleness);
        if (vars[v].variant != AM_VARIANT_KSYNC) { /* stale gradients: the wrong one differs */
            cr_assert_gt(u.max_staleness, 0, "variant %zu has no stale gradient", v);
            reference(&f, &p, v, 1, 1, t2);
            cr_expect(memcmp(t1, t2, dim * sizeof *t1) != 0,
                      "variant %zu: gradients at the current iterate are not told apart", v);
        }
    }
    free(t1);
    free(t2);
    close_fixture(&f);
}

static void expect_same_result(const am_wallclock_nn_result *a, const am_wallclock_nn_result *b)
{
    cr_assert_eq(a->nvariants, b->nvariants);
    for (size_t v = 0; v < a->nvariants; v++) {
        const am_wallclock_nn_curve *x = &a->curves[v], *y = &b->curves[v];
        size_t G = a->ngrid;
        cr_expect(memcmp(x->test_error, y->test_error, G * sizeof(double)) == 0 &&
                      memcmp(x->test_error_sem, y->test_error_sem, G * sizeof(double)) == 0 &&
                      memcmp(x->updates_mean, y->updates_mean, G * sizeof(double)) == 0 &&
                      memcmp(&x->time_per_update, &y->time_per_update, sizeof(am_stats)) == 0 &&
                      memcmp(&x->floor, &y->floor, sizeof(am_stats)) == 0 &&
                      memcmp(&x->p0, &y->p0, sizeof(am_stats)) == 0,
                  "variant %zu differs between 1 and 2 threads", v);
    }
}

Test(wallclock_nn, thread_invariant)
{
    fx f = open_fixture("mlr");
    const am_wallclock_variant vars[3] = {
        {AM_VARIANT_SYNC, 1}, {AM_VARIANT_ASYNC, 1}, {AM_VARIANT_KBATCHSYNC, 2}};
    am_wallclock_nn_params p = small_params(vars, 3, 3);
    am_wallclock_nn_result r1, r2;
    char err[256];
    cr_assert_eq(am_wallclock_nn_run(f.net, f.tr, f.te, &p, &r1, err, sizeof err), AM_OK, "%s",
                 err);
    p.threads = 2;
    cr_assert_eq(am_wallclock_nn_run(f.net, f.tr, f.te, &p, &r2, err, sizeof err), AM_OK, "%s",
                 err);
    expect_same_result(&r1, &r2);
    /* the curves' fields: the time grid, the closed forms of exponential runtimes */
    const am_wallclock_nn_curve *c = &r1.curves[1];
    cr_expect(c->time[0] == 0 && c->time[6] == 30, "time grid %g .. %g", c->time[0], c->time[6]);
    cr_expect(fabs(c->time_per_update_dutta - 1.0 / 3) < 1e-12 &&
                  fabs(c->p0_dutta - 1.0 / 3) < 1e-12,
              "async P = 3: Dutta %g, p0 %g", c->time_per_update_dutta, c->p0_dutta);
    cr_expect(c->alive[6] == 3 && c->updates_mean[0] == 0, "alive %zu", c->alive[6]);
    am_wallclock_nn_result_free(&r1);
    am_wallclock_nn_result_free(&r2);
    close_fixture(&f);
}

/* The standard errors over seeds shrink like 1/sqrt(seeds): the mean standard error of the
 * test error (over the evaluation times after 0 and the variants) and that of the time per
 * update, 12 seeds against 3, within [0.25, 0.8] of each other (expected 0.5); the claim that
 * they do not shrink (ratio >= 1) is rejected by the same numbers. */
Test(wallclock_nn, error_bars_shrink_with_seeds)
{
    fx f = open_fixture("mlr");
    const am_wallclock_variant vars[2] = {{AM_VARIANT_ASYNC, 1}, {AM_VARIANT_KSYNC, 2}};
    am_wallclock_nn_params p = small_params(vars, 2, 4);
    p.ngrid = 11;
    p.threads = 2;
    double sem_err[2], sem_tpu[2];
    const size_t seeds[2] = {3, 12};
    char err[256];
    for (int i = 0; i < 2; i++) {
        p.seeds = seeds[i];
        am_wallclock_nn_result r;
        cr_assert_eq(am_wallclock_nn_run(f.net, f.tr, f.te, &p, &r, err, sizeof err), AM_OK, "%s",
                     err);
        double s = 0, t = 0;
        for (size_t v = 0; v < 2; v++) {
            for (size_t g = 1; g < p.ngrid; g++)
                s += r.curves[v].test_error_sem[g];
            t += am_stats_sem(&r.curves[v].time_per_update);
        }
        sem_err[i] = s;
        sem_tpu[i] = t;
        am_wallclock_nn_result_free(&r);
    }
    double re = sem_err[1] / sem_err[0], rt = sem_tpu[1] / sem_tpu[0];
    cr_expect(re > 0.25 && re < 0.8, "test-error SEM ratio 12 vs 3 seeds %g (expected 0.5)", re);
    cr_expect(rt > 0.25 && rt < 0.8, "time-per-update SEM ratio 12 vs 3 seeds %g", rt);
    cr_expect(!(re >= 1) && !(rt >= 1), "the non-shrinking claim passed");
    close_fixture(&f);
}

/* Bad parameters are refused with a reason, not run. */
Test(wallclock_nn, refuses_bad_parameters)
{
    fx f = open_fixture("mlr");
    const am_wallclock_variant vars[1] = {{AM_VARIANT_KSYNC, 5}};
    am_wallclock_nn_params p = small_params(vars, 1, 4);
    am_wallclock_nn_result r;
    char err[256] = "";
    cr_expect_eq(am_wallclock_nn_run(f.net, f.tr, f.te, &p, &r, err, sizeof err), AM_EINVAL);
    cr_expect(strstr(err, "K"), "reason '%s'", err);
    am_wallclock_nn_result_free(&r);
    p.variants = NULL;
    cr_expect_eq(am_wallclock_nn_run(f.net, f.tr, f.te, &p, &r, err, sizeof err), AM_EINVAL);
    am_wallclock_nn_result_free(&r);
    close_fixture(&f);
}

/* Constant runtimes make the time per update deterministic: C for sync, C K / P for
 * K-batch-async (P = 4 learners finish together every C and K = 2 of them make an update),
 * with no spread over seeds; the closed forms agree. */
Test(wallclock_nn, constant_runtimes_exact)
{
    fx f = open_fixture("mlr");
    const am_wallclock_variant vars[2] = {{AM_VARIANT_SYNC, 1}, {AM_VARIANT_KBATCHASYNC, 2}};
    am_wallclock_nn_params p = small_params(vars, 2, 4);
    am_runtime_make(AM_RUNTIME_CONST, 2, 0, &p.runtime);
    p.time = 41;
    am_wallclock_nn_result r;
    char err[256];
    cr_assert_eq(am_wallclock_nn_run(f.net, f.tr, f.te, &p, &r, err, sizeof err), AM_OK, "%s", err);
    const double want[2] = {2, 1};
    for (size_t v = 0; v < 2; v++) {
        const am_wallclock_nn_curve *c = &r.curves[v];
        cr_expect(fabs(c->time_per_update.mean - want[v]) < 1e-12 &&
                      am_stats_sem(&c->time_per_update) == 0,
                  "variant %zu: time per update %.17g +- %g, want %g", v, c->time_per_update.mean,
                  am_stats_sem(&c->time_per_update), want[v]);
        cr_expect(fabs(c->time_per_update_dutta - want[v]) < 1e-12, "variant %zu: Dutta %g", v,
                  c->time_per_update_dutta);
        cr_expect(c->updates_mean[p.ngrid - 1] == 20 * 4 / (double)c->batch,
                  "variant %zu: %g updates by T = 41", v, c->updates_mean[p.ngrid - 1]);
    }
    am_wallclock_nn_result_free(&r);
    close_fixture(&f);
}

/* The sweep: the measured (stationary) time per update against Dutta's closed form
 * (exponential and shifted-exponential runtimes: every variant here has one) within 4
 * standard errors over the seeds; a prediction 10 % off fails the same check. Thread
 * invariant. */
Test(wallclock_sweep, time_per_update_against_dutta)
{
    const am_wallclock_sweep_variant vars[4] = {{AM_VARIANT_SYNC, 1, 0},
                                                {AM_VARIANT_KSYNC, 0, 2},
                                                {AM_VARIANT_ASYNC, 1, 0},
                                                {AM_VARIANT_KBATCHASYNC, 0, 2}};
    const size_t ws[2] = {2, 4};
    am_runtime laws[2];
    am_runtime_make(AM_RUNTIME_EXP, 1, 0, &laws[0]);
    am_runtime_make(AM_RUNTIME_SHIFTEXP, 0.5, 2, &laws[1]);
    am_wallclock_sweep sw;
    memset(&sw, 0, sizeof sw);
    sw.base = am_wallclock_params_default();
    sw.variants = vars;
    sw.nvariants = 4;
    sw.base.updates = 400;
    sw.base.ngrid = 21;
    sw.base.replicas = 20;
    sw.base.threads = 1;
    sw.workers = ws;
    sw.nworkers = 2;
    sw.laws = laws;
    sw.nlaws = 2;
    sw.seeds = 4;
    am_wallclock_sweep_result r1, r2;
    char err[256];
    cr_assert_eq(am_wallclock_sweep_run(&sw, &r1, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(r1.ncells, 16);
    for (size_t q = 0; q < r1.ncells; q++) {
        const am_wallclock_sweep_cell *c = &r1.cells[q];
        cr_assert_eq(c->k, c->variant == AM_VARIANT_KSYNC || c->variant == AM_VARIANT_KBATCHASYNC
                               ? c->workers / 2
                               : 1);
        double m = c->time_per_update.mean, se = am_stats_sem(&c->time_per_update),
               pr = c->time_per_update_dutta;
        cr_assert(c->time_per_update.n == 4 && se > 0 && isfinite(pr), "cell %zu: n %g se %g", q,
                  c->time_per_update.n, se);
        double tol = 4 * se;
        cr_expect(fabs(m - pr) <= tol, "cell %zu (law %zu P %zu %s): measured %g +- %g, Dutta %g",
                  q, c->law, c->workers, am_runtime_variant_name(c->variant), m, se, pr);
        cr_expect(fabs(m - 1.1 * pr) > tol, "cell %zu: a 10 %% wrong time per update passed", q);
        cr_expect(c->floor_measured.n == 4 && am_stats_sem(&c->floor_measured) > 0);
    }
    sw.base.threads = 2;
    cr_assert_eq(am_wallclock_sweep_run(&sw, &r2, err, sizeof err), AM_OK, "%s", err);
    cr_expect(memcmp(r1.cells, r2.cells, r1.ncells * sizeof *r1.cells) == 0,
              "sweep differs between 1 and 2 threads");
    am_wallclock_sweep_result_free(&r1);
    am_wallclock_sweep_result_free(&r2);
    /* a K that does not fit one of the worker counts is refused before anything runs */
    const am_wallclock_sweep_variant bad[1] = {{AM_VARIANT_KSYNC, 3, 0}};
    sw.variants = bad;
    sw.nvariants = 1;
    cr_expect_eq(am_wallclock_sweep_run(&sw, &r1, err, sizeof err), AM_EINVAL);
    cr_expect(strstr(err, "P = 2"), "reason '%s'", err);
    am_wallclock_sweep_result_free(&r1);
}

/* `amsgd wallclock --model` on the fixture: CSV header and rows, JSON keys; --sweep keys. */
Test(wallclock_nn, cli_fixture_run)
{
    char spec[4200], args[8400];
    test_fixture_spec(spec, sizeof spec);
    snprintf(args, sizeof args,
             "wallclock --model mlr --data %s --workers 3 --variants sync,async,k-async:2 --time "
             "20 --grid 5 --seeds 2 --batch 4 --threads 2",
             spec);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "variant,time,test_error,test_error_sem,updates_mean,alive\n", 57) ==
                  0,
              "header: %.80s", r.out);
    size_t lines = 0;
    for (const char *c = r.out; *c; c++)
        lines += *c == '\n';
    cr_expect_eq(lines, 1 + 3 * 5, "rows: %zu", lines);
    cr_expect(strstr(r.out, "\nk-async:2,20,"), "no k-async:2 row at t = 20");
    test_run_free(&r);
    strcat(args, " --format json");
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_error_t je;
    json_t *root = json_loads(r.out, 0, &je);
    cr_assert_not_null(root, "JSON: %s", je.text);
    json_t *v = json_array_get(json_object_get(root, "variants"), 2);
    const char *keys[] = {"name",
                          "variant",
                          "K",
                          "time",
                          "test_error",
                          "test_error_sem",
                          "updates_mean",
                          "alive",
                          "diverged",
                          "time_per_update",
                          "time_per_update_sem",
                          "time_per_update_dutta",
                          "p0",
                          "p0_sem",
                          "p0_dutta",
                          "mean_staleness",
                          "mean_staleness_sem",
                          "floor_measured",
                          "floor_measured_sem",
                          "time_to_target",
                          "time_to_target_sem",
                          "reached"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect_not_null(json_object_get(v, keys[i]), "no key %s", keys[i]);
    cr_expect_str_eq(json_string_value(json_object_get(v, "variant")), "k-async:2");
    cr_expect_eq(json_array_size(json_object_get(v, "test_error")), 5);
    json_t *params = json_object_get(root, "params");
    cr_expect_str_eq(json_string_value(json_object_get(params, "model")), "mlr");
    cr_expect_eq(json_integer_value(json_object_get(params, "seeds")), 2);
    json_decref(root);
    test_run_free(&r);

    r = test_amsgd("wallclock --sweep --laws exp:1 --workers-list 2,4 --variants sync,k-sync:P/2 "
                   "--seeds 2 --replicas 4 --updates 50 --grid 5 --format json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    root = json_loads(r.out, 0, &je);
    cr_assert_not_null(root, "JSON: %s", je.text);
    json_t *cells = json_object_get(root, "cells");
    cr_assert_eq(json_array_size(cells), 4);
    json_t *c = json_array_get(cells, 3);
    cr_expect_str_eq(json_string_value(json_object_get(c, "variant")), "k-sync:2");
    const char *skeys[] = {"law",
                           "workers",
                           "time_per_update",
                           "time_per_update_sem",
                           "time_per_update_dutta",
                           "floor_measured",
                           "floor_measured_sem",
                           "floor_exact",
                           "floor_dutta",
                           "floor_dutta_async",
                           "decay_measured",
                           "p0",
                           "p0_dutta",
                           "gamma"};
    for (size_t i = 0; i < sizeof skeys / sizeof skeys[0]; i++)
        cr_expect_not_null(json_object_get(c, skeys[i]), "no key %s", skeys[i]);
    json_decref(root);
    test_run_free(&r);
}

Test(wallclock_nn, cli_bad_flags_exit_2)
{
    char spec[4200], args[8400];
    test_fixture_spec(spec, sizeof spec);
    const struct {
        const char *flags, *needle;
    } bad[] = {
        {"--model", "--model"},
        {"--model foo", "--model"},
        {"--model mlr --time 0", "--time"},
        {"--model mlr --seeds 0", "--seeds"},
        {"--model mlr --variants k-sync:9", "--variants"},
        {"--model mlr --variants async:P/2", "--variants"},
        {"--model mlr --target-error 1.5", "--target-error"},
        {"--model mlr --optimizer foo", "--optimizer"},
        {"--model mlr --runtime exp:0", "--runtime"},
        {"--model mlr --data idx:/nonexistent-amsgd", "--data"},
        {"--model mlr --nosuchflag", "nosuchflag"},
        {"--sweep --workers-list 0,2", "--workers-list"},
        {"--sweep --laws exp:1,", "--laws"},
        {"--sweep --laws foo:1", "--laws"},
        {"--sweep --seeds 1", "--seeds"},
        {"--sweep --variants k-sync:P/0", "--variants"},
        {"--sweep --variants k-sync:3", "--variants"},
        {"--sweep --model mlr", "model"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* the network runs get the fixture unless the case is about --data */
        int data = strncmp(bad[i].flags, "--model ", 8) == 0 && !strstr(bad[i].flags, "--data");
        snprintf(args, sizeof args, "wallclock %s%s%s", bad[i].flags, data ? " --data " : "",
                 data ? spec : "");
        test_expect_usage_error(args, bad[i].needle);
    }
}
