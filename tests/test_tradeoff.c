/*
 * test_tradeoff.c -- Liu et al.'s experiment on networks (studies/am_tradeoff.h): the run
 * against a direct re-implementation that keeps every snapshot and evaluates each gradient
 * when its update is applied (and a deliberately wrong, staleness-free one that must differ
 * for P > 1), zero staleness for P = 1 and mean staleness P - 1 for exponential runtimes,
 * above-chance accuracy on the committed IDX fixture, the best-momentum bootstrap and the trend
 * verdict on synthetic tables with known answers (and wrong claims rejected), thread
 * invariance, checkpoint resume, and the command's bad flags.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/am_rng.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../montecarlo/am_ps.h"
#include "../studies/am_tradeoff.h"
#include "test_util.h"

static am_nn *net_for(const char *spec, const am_classset *tr)
{
    char err[256];
    am_status st;
    am_nn *net = am_nn_alloc(spec, tr->d, tr->classes, &st, err, sizeof err);
    cr_assert(net, "%s: %s", spec, err);
    return net;
}

/*
 * The protocol from its definition: the simulator (async, P learners) says which learner's
 * gradient update k applies and its staleness tau_k; that learner's job started on
 * w_{k - tau_k}, with the rows of its job index (P + the update after which it started, or
 * the learner's index for the first jobs). Every snapshot w_0..w_K is kept and the gradient is
 * evaluated lazily on the stored snapshot. wrong = 1 evaluates it on the current w_k instead.
 */
static void reference(const am_nn *net, const am_tradeoff_params *p, size_t P, double mu,
                      const am_classset *tr, uint64_t replica, int wrong, double *theta_out)
{
    size_t dim = am_nn_dim(net), K = (size_t)p->budget, B = p->batch;
    double *snap = malloc((K + 1) * dim * sizeof *snap), *g = malloc(dim * sizeof *g);
    uint64_t *job = malloc(P * sizeof *job);
    size_t *idx = malloc(B * sizeof *idx);
    am_status st;
    am_nn_work *w = am_nn_work_alloc(net, B, &st);
    am_optim_params op = am_optim_params_default(AM_OPT_MOMENTUM);
    op.lr = p->step_rule == AM_TRADEOFF_STEP_EFFECTIVE ? p->lr * (1 - mu) : p->lr;
    op.mu = mu;
    am_optim *o = am_optim_alloc(&op, dim, &st);
    am_ps_params pp = am_ps_params_default();
    pp.workers = P;
    pp.runtime = p->runtime;
    pp.variant = AM_VARIANT_ASYNC;
    pp.seed = p->seed;
    am_ps *ps = am_ps_alloc(&pp, &st);
    cr_assert(snap && g && job && idx && w && o && ps);
    am_ps_reset(ps, replica);
    am_nn_init(net, p->seed, replica, snap);
    for (size_t i = 0; i < P; i++)
        job[i] = i;
    for (size_t k = 0; k < K; k++) {
        am_ps_update u;
        am_ps_next(ps, &u);
        size_t i = u.learner[0];
        cr_assert(u.staleness[0] <= k);
        am_rng r;
        am_rng_init(&r, p->seed, replica, AM_STREAM_TRADEOFF, job[i]);
        for (size_t b = 0; b < B; b++)
            idx[b] = (size_t)(am_rng_u64(&r) % tr->n);
        am_classset_gather(tr, idx, B, am_nn_work_x(w), am_nn_work_y(w));
        const double *at = snap + (wrong ? k : k - u.staleness[0]) * dim;
        am_nn_loss_grad(net, w, at, am_nn_work_x(w), am_nn_work_y(w), B, g);
        memcpy(snap + (k + 1) * dim, snap + k * dim, dim * sizeof *snap);
        am_optim_step(o, snap + (k + 1) * dim, g);
        job[i] = P + k;
    }
    memcpy(theta_out, snap + K * dim, dim * sizeof *theta_out);
    am_ps_free(ps);
    am_optim_free(o);
    am_nn_work_free(w);
    free(idx);
    free(job);
    free(g);
    free(snap);
}

static void compare_with_reference(size_t P, double mu, am_tradeoff_step_rule rule)
{
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    am_nn *net = net_for("mlp:5", tr);
    size_t dim = am_nn_dim(net);
    am_tradeoff_params p = am_tradeoff_params_default();
    p.batch = 4;
    p.budget = 40;
    p.lr = 0.05;
    p.step_rule = rule;
    p.seed = 7;
    double *a = malloc(dim * sizeof *a), *b = malloc(dim * sizeof *b), *c = malloc(dim * sizeof *c);
    am_tradeoff_outcome out;
    cr_assert_eq(am_tradeoff_run_one(net, &p, P, mu, tr, te, 2, NULL, &out, a), AM_OK);
    reference(net, &p, P, mu, tr, 2, 0, b);
    reference(net, &p, P, mu, tr, 2, 1, c);
    size_t same = 0, same_wrong = 0;
    for (size_t i = 0; i < dim; i++) {
        same += memcmp(&a[i], &b[i], sizeof *a) == 0;
        same_wrong += memcmp(&a[i], &c[i], sizeof *a) == 0;
    }
    cr_expect_eq(same, dim, "P %zu mu %g: %zu of %zu parameters equal to the reference", P, mu,
                 same, dim);
    if (P == 1)
        cr_expect_eq(same_wrong, dim, "P = 1 must be synchronous: %zu of %zu equal", same_wrong,
                     dim);
    else
        cr_expect_lt(same_wrong, dim / 2,
                     "P %zu: the staleness-free run matches %zu of %zu parameters", P, same_wrong,
                     dim);
    cr_expect_eq(out.diverged, 0);
    if (P == 1) cr_expect_eq(out.max_staleness, 0.0, "P = 1: max staleness %g", out.max_staleness);
    free(a);
    free(b);
    free(c);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

Test(tradeoff, run_matches_reference)
{
    compare_with_reference(1, 0.7, AM_TRADEOFF_STEP_FIXED);
    compare_with_reference(3, 0.7, AM_TRADEOFF_STEP_FIXED);
    compare_with_reference(4, 0.3, AM_TRADEOFF_STEP_EFFECTIVE);
}

Test(tradeoff, staleness_zero_for_one_worker_and_p_minus_one_for_exp)
{
    am_tradeoff_params p = am_tradeoff_params_default();
    enum { N = 20000 };
    uint64_t *tau = malloc(N * sizeof *tau);
    cr_assert_eq(am_tradeoff_staleness(&p, 1, 0, N, tau), AM_OK);
    size_t nonzero = 0;
    for (size_t k = 0; k < N; k++)
        nonzero += tau[k] != 0;
    cr_expect_eq(nonzero, 0, "P = 1: %zu of %d updates stale", nonzero, N);
    /* exponential runtimes: each update comes from a uniformly random learner, so a gradient's
       staleness is geometric with mean P - 1 (sd sqrt((P-1) P)); 5 standard errors */
    const size_t Ps[] = {2, 4, 8};
    for (size_t j = 0; j < 3; j++) {
        size_t P = Ps[j];
        cr_assert_eq(am_tradeoff_staleness(&p, P, 1, N, tau), AM_OK);
        double s = 0;
        for (size_t k = 1000; k < N; k++)
            s += (double)tau[k];
        double mean = s / (N - 1000), se = sqrt((double)((P - 1) * P) / (N - 1000));
        cr_expect(fabs(mean - (double)(P - 1)) < 5 * se,
                  "P %zu: mean staleness %g, expected %zu +- %g", P, mean, P - 1, 5 * se);
        /* a wrong prediction (staleness P, the "one per other worker plus itself" miscount)
           is rejected by the same tolerance */
        cr_expect(fabs(mean - (double)P) >= 5 * se, "P %zu: mean %g not distinguished from %zu", P,
                  mean, P);
    }
    free(tau);
}

/* P(X >= k) for X ~ Binomial(n, q). */
static double binom_tail(size_t n, size_t k, double q)
{
    double t = 0;
    for (size_t j = k; j <= n; j++) {
        double lc = lgamma((double)n + 1) - lgamma((double)j + 1) - lgamma((double)(n - j) + 1);
        t += exp(lc + (double)j * log(q) + (double)(n - j) * log1p(-q));
    }
    return t;
}

/* Training on the fixture's training split and testing on it (its test split follows another
 * pixel law): for P = 1 and P = 4 the correct answers pooled over 3 seeds are above chance
 * (1/10) at a one-sided binomial p-value below 1e-3; an untrained network (budget 1) is not. */
Test(tradeoff, fixture_above_chance)
{
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    am_nn *net = net_for("mlp:16", tr);
    am_tradeoff_params p = am_tradeoff_params_default();
    p.batch = 8;
    p.lr = 0.1;
    const size_t Ps[] = {1, 4, 1};
    const uint64_t budgets[] = {3000, 3000, 1};
    for (size_t j = 0; j < 3; j++) {
        p.budget = budgets[j];
        size_t correct = 0;
        for (uint64_t i = 0; i < 3; i++) {
            am_tradeoff_outcome out;
            cr_assert_eq(am_tradeoff_run_one(net, &p, Ps[j], 0.5, tr, tr, i, NULL, &out, NULL),
                         AM_OK);
            cr_expect_eq(out.diverged, 0);
            correct += (size_t)lround(out.accuracy * (double)tr->n);
        }
        double pv = binom_tail(3 * tr->n, correct, 0.1);
        if (budgets[j] > 1)
            cr_expect_lt(pv, 1e-3, "P %zu: %zu of %zu correct, p-value %g against chance", Ps[j],
                         correct, 3 * tr->n, pv);
        else
            cr_expect_gt(pv, 1e-3, "untrained: %zu of %zu correct, p-value %g", correct, 3 * tr->n,
                         pv);
    }
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

/* A synthetic table: acc[m seeds + i] = level[m] + noise[i] (the noise common to every mu, as
 * for runs that share their random numbers) + jitter. */
static void table(double *acc, const double *level, size_t nmu, size_t seeds, double jitter)
{
    for (size_t m = 0; m < nmu; m++)
        for (size_t i = 0; i < seeds; i++)
            acc[m * seeds + i] = level[m] + 0.01 * (double)(i % 3) +
                                 jitter * sin(1.7 * (double)(m * seeds + i) + 0.3);
}

Test(tradeoff, best_mu_known_answer_and_wrong_claim)
{
    const double mu[] = {0.1, 0.3, 0.5, 0.7, 0.9};
    const double level[] = {0.70, 0.75, 0.80, 0.76, 0.60};
    double acc[5 * 4], pb[5];
    table(acc, level, 5, 4, 0.002);
    am_tradeoff_best b;
    cr_assert_eq(am_tradeoff_best_mu(acc, mu, 5, 4, 2000, 1, 0, &b, pb, NULL), AM_OK);
    cr_expect_eq(b.best_mu, 0.5, "best %g, expected 0.5", b.best_mu);
    cr_expect(b.best_mu_lo == 0.5 && b.best_mu_hi == 0.5, "interval [%g, %g]", b.best_mu_lo,
              b.best_mu_hi);
    cr_expect(fabs(pb[2] - 1.0) < 1e-9, "p_best(0.5) = %g", pb[2]);
    /* the claim of the paper for one worker (0.9) is outside the interval: detected as wrong */
    cr_expect(!(b.best_mu_lo <= 0.9 && 0.9 <= b.best_mu_hi), "0.9 not rejected: [%g, %g]",
              b.best_mu_lo, b.best_mu_hi);
    /* two momenta within the noise: the interval covers both, no unique best is claimed */
    const double close[] = {0.70, 0.75, 0.800, 0.801, 0.60};
    table(acc, close, 5, 4, 0.004);
    cr_assert_eq(am_tradeoff_best_mu(acc, mu, 5, 4, 2000, 1, 0, &b, pb, NULL), AM_OK);
    cr_expect(b.best_mu_lo <= 0.5 && b.best_mu_hi >= 0.7, "close pair: interval [%g, %g]",
              b.best_mu_lo, b.best_mu_hi);
    cr_expect(pb[2] > 0.05 && pb[3] > 0.05, "p_best %g %g", pb[2], pb[3]);
    cr_expect(fabs(pb[0] + pb[1] + pb[2] + pb[3] + pb[4] - 1) < 1e-12);
    double nan_acc[2] = {0.5, NAN};
    cr_expect_eq(am_tradeoff_best_mu(nan_acc, mu, 2, 1, 10, 1, 0, &b, pb, NULL), AM_EINVAL);
}

/* An exact tie is shared: every draw whose best is tied between k momenta counts 1/k for
 * each (first-on-ties gave the first momentum p_best 1 and a zero-width interval), its best
 * mu for the trend is their mean; one seed has no spread to resample and claims nothing. */
Test(tradeoff, exact_ties_are_shared_and_one_seed_claims_nothing)
{
    const double mu[] = {0.1, 0.5, 0.9};
    const double flat[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1}; /* every momentum at chance */
    double pb[3], d[1000];
    am_tradeoff_best b;
    cr_assert_eq(am_tradeoff_best_mu(flat, mu, 3, 2, 1000, 1, 0, &b, pb, d), AM_OK);
    for (int m = 0; m < 3; m++)
        cr_expect(fabs(pb[m] - 1.0 / 3) < 1e-12, "three-way tie: p_best(%g) = %g", mu[m], pb[m]);
    cr_expect(b.best_mu_lo == 0.1 && b.best_mu_hi == 0.9, "three-way tie: interval [%g, %g]",
              b.best_mu_lo, b.best_mu_hi);
    cr_expect(fabs(d[0] - 0.5) < 1e-12 && fabs(d[999] - 0.5) < 1e-12, "tied draws: %g %g", d[0],
              d[999]);
    const double two[] = {0.8, 0.8, 0.8, 0.8, 0.6, 0.6}; /* 0.1 and 0.5 tie above 0.9 */
    cr_assert_eq(am_tradeoff_best_mu(two, mu, 3, 2, 1000, 1, 0, &b, pb, NULL), AM_OK);
    cr_expect(fabs(pb[0] - 0.5) < 1e-12 && fabs(pb[1] - 0.5) < 1e-12 && pb[2] == 0,
              "two-way tie: p_best %g %g %g", pb[0], pb[1], pb[2]);
    cr_expect(b.best_mu == 0.1 && b.best_mu_lo == 0.1 && b.best_mu_hi == 0.5,
              "two-way tie: best %g [%g, %g]", b.best_mu, b.best_mu_lo, b.best_mu_hi);
    /* one seed: no probability, no interval, no trend */
    const double one[] = {0.7, 0.8, 0.6};
    double d1[100];
    cr_assert_eq(am_tradeoff_best_mu(one, mu, 3, 1, 100, 1, 0, &b, pb, d1), AM_OK);
    cr_expect_eq(b.best_mu, 0.5);
    cr_expect(isnan(pb[0]) && isnan(pb[1]) && isnan(pb[2]) && isnan(b.best_mu_lo) &&
                  isnan(b.best_mu_hi),
              "one seed: p_best %g %g %g, interval [%g, %g]", pb[0], pb[1], pb[2], b.best_mu_lo,
              b.best_mu_hi);
    am_tradeoff_trend_result t;
    cr_assert_eq(am_tradeoff_trend(d1, d1, 100, &t), AM_OK);
    cr_expect(t.verdict == AM_TRADEOFF_UNRESOLVED && isnan(t.change) && isnan(t.change_lo),
              "one seed: trend %s, change %g", am_tradeoff_verdict_name(t.verdict), t.change);
}

Test(tradeoff, trend_verdict)
{
    const double mu[] = {0.1, 0.3, 0.5, 0.7, 0.9};
    const double l1[] = {0.70, 0.72, 0.74, 0.76, 0.80}; /* best 0.9 */
    const double l8[] = {0.72, 0.78, 0.74, 0.70, 0.60}; /* best 0.3 */
    double a1[15], a8[15], pb[5], d1[1000], d8[1000];
    am_tradeoff_best b1, b8;
    am_tradeoff_trend_result t;
    table(a1, l1, 5, 3, 0.002);
    table(a8, l8, 5, 3, 0.002);
    cr_assert_eq(am_tradeoff_best_mu(a1, mu, 5, 3, 1000, 1, 0, &b1, pb, d1), AM_OK);
    cr_assert_eq(am_tradeoff_best_mu(a8, mu, 5, 3, 1000, 1, 3, &b8, pb, d8), AM_OK);
    cr_assert_eq(am_tradeoff_trend(d1, d8, 1000, &t), AM_OK);
    cr_expect_eq(t.verdict, AM_TRADEOFF_DECREASES, "change %g [%g, %g]", t.change, t.change_lo,
                 t.change_hi);
    cr_expect(fabs(t.change + 0.6) < 1e-12, "change %g, expected -0.6", t.change);
    /* the same best for both worker counts: a claimed decrease must not be confirmed, and the
       interval [0, 0] says that it does not change */
    cr_assert_eq(am_tradeoff_trend(d1, d1, 1000, &t), AM_OK);
    cr_expect_eq(t.verdict, AM_TRADEOFF_UNCHANGED, "no change read as %s",
                 am_tradeoff_verdict_name(t.verdict));
    cr_expect_str_eq(am_tradeoff_verdict_name(t.verdict), "unchanged");
    cr_assert_eq(am_tradeoff_trend(d8, d1, 1000, &t), AM_OK);
    cr_expect_eq(t.verdict, AM_TRADEOFF_INCREASES);
}

static am_tradeoff_result *sweep(const am_nn *net, const am_classset *tr, int threads,
                                 const char *ckpt, int resume)
{
    static const size_t workers[] = {1, 2, 4};
    static const double mus[] = {0.3, 0.9};
    am_tradeoff_sweep sw = am_tradeoff_sweep_default();
    sw.base.batch = 4;
    sw.base.budget = 60;
    sw.base.lr = 0.05;
    sw.workers = workers;
    sw.nworkers = 3;
    sw.mu = mus;
    sw.nmu = 2;
    sw.seeds = 3;
    sw.resamples = 200;
    sw.threads = threads;
    sw.checkpoint = ckpt;
    sw.resume = resume;
    sw.data_id = "fixture";
    am_tradeoff_result *r = NULL;
    char err[512];
    am_status st = am_tradeoff_run(&sw, net, tr, tr, &r, err, sizeof err);
    cr_assert_eq(st, AM_OK, "%s (%s)", am_strerror(st), err);
    return r;
}

Test(tradeoff, sweep_thread_invariant_and_resumable)
{
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    am_nn *net = net_for("mlp:5", tr);
    char ckpt[] = "/tmp/amsgd-tradeoff-XXXXXX";
    int fd = mkstemp(ckpt);
    cr_assert(fd >= 0);
    close(fd);
    am_tradeoff_result *a = sweep(net, tr, 1, NULL, 0), *b = sweep(net, tr, 2, ckpt, 0),
                       *c = sweep(net, tr, 2, ckpt, 1);
    cr_assert_eq(a->ncells, 6);
    for (size_t q = 0; q < a->ncells; q++)
        for (size_t i = 0; i < a->seeds; i++) {
            cr_expect(memcmp(&a->cells[q].accuracy[i], &b->cells[q].accuracy[i], 8) == 0,
                      "cell %zu seed %zu: %.17g vs %.17g (threads)", q, i, a->cells[q].accuracy[i],
                      b->cells[q].accuracy[i]);
            cr_expect(memcmp(&a->cells[q].accuracy[i], &c->cells[q].accuracy[i], 8) == 0,
                      "cell %zu seed %zu: %.17g vs %.17g (resume)", q, i, a->cells[q].accuracy[i],
                      c->cells[q].accuracy[i]);
        }
    for (size_t w = 0; w < 3; w++) {
        cr_expect_eq(a->best[w].best_mu, b->best[w].best_mu);
        cr_expect_eq(a->best[w].best_mu_lo, c->best[w].best_mu_lo);
        cr_expect_eq(a->best[w].best_mu_hi, c->best[w].best_mu_hi);
    }
    cr_expect_eq(a->cells[0].max_staleness, 0.0, "P = 1 cell: max staleness %g",
                 a->cells[0].max_staleness);
    cr_expect_gt(a->cells[4].mean_staleness, 1.0, "P = 4 cell: mean staleness %g",
                 a->cells[4].mean_staleness);
    am_tradeoff_result_free(a);
    am_tradeoff_result_free(b);
    am_tradeoff_result_free(c);
    unlink(ckpt);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

Test(tradeoff_cli, output_keys_and_thread_invariance)
{
    char spec[4200], args[8192];
    test_fixture_spec(spec, sizeof spec);
    const char *common = "tradeoff --model mlp:4 --workers 1,2 --mus 0.5,0.9 --batch 4 "
                         "--budget 40 --seeds 3 --resamples 100 --quiet";
    snprintf(args, sizeof args, "%s --data '%s' --threads 1", common, spec);
    test_run r1 = test_amsgd(args);
    snprintf(args, sizeof args, "%s --data '%s' --threads 2", common, spec);
    test_run r2 = test_amsgd(args);
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_expect_str_eq(r1.out, r2.out, "CSV differs between 1 and 2 threads");
    cr_expect(strncmp(r1.out, "workers,mu,lr,accuracy,accuracy_sem,", 36) == 0, "header: %s",
              r1.out);
    size_t lines = 0;
    for (const char *c = r1.out; *c; c++)
        lines += *c == '\n';
    cr_expect_eq(lines, 5, "1 header + 4 rows, got %zu lines", lines);
    snprintf(args, sizeof args, "%s --data '%s' --format json", common, spec);
    test_run rj = test_amsgd(args);
    cr_assert_eq(rj.status, 0, "%s", rj.err);
    json_error_t je;
    json_t *root = json_loads(rj.out, 0, &je);
    cr_assert(root, "JSON: %s", je.text);
    cr_expect_str_eq(json_string_value(json_object_get(root, "command")), "tradeoff");
    cr_expect(json_is_string(json_object_get(root, "version")));
    json_t *params = json_object_get(root, "params");
    cr_expect(json_is_object(params) && json_object_get(params, "seed") &&
              json_object_get(params, "step_rule") && json_object_get(params, "runtime"));
    json_t *row = json_array_get(json_object_get(root, "results"), 0);
    const char *keys[] = {"workers", "mu", "accuracy", "accuracy_sem"};
    for (size_t k = 0; k < 4; k++)
        cr_expect(json_object_get(row, keys[k]), "results[0] lacks %s", keys[k]);
    json_t *best = json_array_get(json_object_get(root, "best"), 1);
    cr_expect(json_object_get(best, "best_mu") && json_object_get(best, "best_mu_ci") &&
                  json_integer_value(json_object_get(best, "workers")) == 2,
              "best[1] lacks workers/best_mu/best_mu_ci");
    cr_expect(json_object_get(json_object_get(root, "trend"), "verdict"));
    json_decref(root);
    /* the file alone reproduces the run (params hold only options) */
    char path[] = "/tmp/amsgd-tradeoff-json-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, rj.out, strlen(rj.out)), (ssize_t)strlen(rj.out));
    close(fd);
    snprintf(args, sizeof args, "rerun %s", path);
    test_run rr = test_amsgd(args);
    cr_expect_eq(rr.status, 0, "rerun: exit %d (%s)", rr.status, rr.err);
    test_run_free(&rr);
    unlink(path);
    test_run_free(&r1);
    test_run_free(&r2);
    test_run_free(&rj);
}

Test(tradeoff_cli, bad_flags_exit_2)
{
    test_expect_usage_error("tradeoff --mus 0.5,1.5", "--mus");
    test_expect_usage_error("tradeoff --mus 0.9,0.5", "--mus");
    test_expect_usage_error("tradeoff --workers 4,2", "--workers");
    test_expect_usage_error("tradeoff --workers 0", "--workers");
    test_expect_usage_error("tradeoff --step-rule paper", "--step-rule");
    test_expect_usage_error("tradeoff --preset liu2019", "--preset");
    test_expect_usage_error("tradeoff --resume", "--resume needs --checkpoint");
    test_expect_usage_error("tradeoff --budget 0", "--budget");
    test_expect_usage_error("tradeoff --lr -1", "--lr");
    test_expect_usage_error("tradeoff --runtime exp:-1", "--runtime");
    test_expect_usage_error("tradeoff --model rnn --data idx:/nonexistent/dir", "--data");
    char spec[4200], args[8192];
    test_fixture_spec(spec, sizeof spec);
    snprintf(args, sizeof args, "tradeoff --model rnn --data '%s'", spec);
    test_expect_usage_error(args, "--model");
    /* a checkpoint of other parameters is refused with exit 2 */
    char ckpt[] = "/tmp/amsgd-tradeoff-cli-XXXXXX";
    int fd = mkstemp(ckpt);
    cr_assert(fd >= 0);
    close(fd);
    snprintf(args, sizeof args,
             "tradeoff --model mlp:3 --data '%s' --workers 1 --mus 0.5 --budget 10 --batch 2 "
             "--seeds 1 --quiet --checkpoint %s",
             spec, ckpt);
    test_run r = test_amsgd(args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args,
             "tradeoff --model mlp:3 --data '%s' --workers 1 --mus 0.5 --budget 11 --batch 2 "
             "--seeds 1 --quiet --checkpoint %s --resume",
             spec, ckpt);
    test_expect_usage_error(args, "--checkpoint");
    unlink(ckpt);
}

/* The command on the fixture: a three-way tie at chance shares p_best; one seed says
 * on stderr that it claims nothing, and writes null. */
Test(tradeoff, cli_ties_and_one_seed)
{
    /* raw inputs: the ties are the fixture's (its pixels give equal accuracies) */
    const char *base =
        "tradeoff --model mlr --data idx:tests/data/idx-tiny --inputs raw --workers 1,2 "
        "--mus 0.1,0.5,0.9 --budget 20 --quiet --format json";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s --seeds 2", base);
    test_run r = test_amsgd(cmd);
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    cr_expect(strstr(r.out, "\"p_best\": 0.333333333333"), "no shared tie: %.300s", r.out);
    test_run_free(&r);
    snprintf(cmd, sizeof cmd, "%s --seeds 1", base);
    r = test_amsgd(cmd);
    cr_assert_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    cr_expect(strstr(r.err, "amsgd: warning: one seed has no spread to resample"), "%s", r.err);
    cr_expect(strstr(r.out, "\"p_best\": null") && strstr(r.out, "\"verdict\": \"unresolved\""),
              "%.300s", r.out);
    test_run_free(&r);
}
