/*
 * test_ps.c -- the parameter-server simulator (montecarlo/am_ps.h) on hand-traced schedules
 * (deterministic runtimes) and the runtime formulas (theory/am_runtime.h) against exact
 * forms and against simulation at fixed seeds (tolerance 5 standard errors).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "../montecarlo/am_msgd_batch.h"
#include "../montecarlo/am_ps.h"
#include "../montecarlo/am_ps_impl.h"
#include "../theory/am_runtime.h"

/* Runtimes from a table: row = learner, column = job (the last column repeats). */
typedef struct {
    size_t cols;
    const double *t;
} ps_table;

static double ps_table_fn(const void *ctx, size_t learner, uint64_t job)
{
    const ps_table *tab = ctx;
    size_t c = job < tab->cols ? (size_t)job : tab->cols - 1;
    return tab->t[learner * tab->cols + c];
}

/* Runs n updates and compares times, learners and staleness with the hand trace
 * (learners[m * batch + g], staleness likewise). */
static void ps_check_trace(const char *name, am_variant v, size_t p, size_t k, const ps_table *tab,
                           const am_runtime *rt, size_t n, size_t batch, const double *times,
                           const size_t *learners, const uint64_t *stale)
{
    am_ps_params prm = am_ps_params_default();
    prm.workers = p;
    prm.variant = v;
    prm.k = k;
    if (tab) {
        prm.fn = ps_table_fn;
        prm.fn_ctx = tab;
    }
    if (rt) prm.runtime = *rt;
    am_status st;
    am_ps *ps = am_ps_alloc(&prm, &st);
    cr_assert(ps != NULL, "%s: alloc failed (%d)", name, st);
    for (size_t m = 0; m < n; m++) {
        am_ps_update u;
        am_ps_next(ps, &u);
        cr_assert_eq(u.index, m, "%s: update %zu has index %llu", name, m,
                     (unsigned long long)u.index);
        cr_assert(fabs(u.time - times[m]) <= 1e-12 * fmax(1, times[m]),
                  "%s: update %zu at time %.17g, expected %.17g", name, m, u.time, times[m]);
        cr_assert_eq(u.ngrad, batch, "%s: update %zu uses %zu gradients, expected %zu", name, m,
                     u.ngrad, batch);
        for (size_t g = 0; g < batch; g++) {
            cr_assert_eq(u.learner[g], learners[m * batch + g],
                         "%s: update %zu gradient %zu from learner %zu, expected %zu", name, m, g,
                         u.learner[g], learners[m * batch + g]);
            cr_assert_eq(u.staleness[g], stale[m * batch + g],
                         "%s: update %zu gradient %zu staleness %llu, expected %llu", name, m, g,
                         (unsigned long long)u.staleness[g],
                         (unsigned long long)stale[m * batch + g]);
        }
    }
    am_ps_free(ps);
}

/* k-sync P=3 K=2; runtimes L0: 3,1  L1: 1,5  L2: 2,2.
 * Iteration 0 from t=0: L1@1, L2@2 used, L0 cancelled -> t=2.
 * Iteration 1 from t=2: L0@3, L2@4 used, L1 (@7) cancelled -> t=4. */
Test(ps_trace, ksync)
{
    const double t[] = {3, 1, 1, 5, 2, 2};
    ps_table tab = {2, t};
    const double times[] = {2, 4};
    const size_t lr[] = {1, 2, 0, 2};
    const uint64_t st[] = {0, 0, 0, 0};
    ps_check_trace("k-sync P=3 K=2", AM_VARIANT_KSYNC, 3, 2, &tab, NULL, 2, 2, times, lr, st);
}

/* sync P=3, same runtimes: iteration 0 ends at max(3,1,2)=3; iteration 1 at 3+max(1,5,2)=8. */
Test(ps_trace, sync)
{
    const double t[] = {3, 1, 1, 5, 2, 2};
    ps_table tab = {2, t};
    const double times[] = {3, 8};
    const size_t lr[] = {1, 2, 0, 0, 2, 1};
    const uint64_t st[] = {0, 0, 0, 0, 0, 0};
    ps_check_trace("sync P=3", AM_VARIANT_SYNC, 3, 0, &tab, NULL, 2, 3, times, lr, st);
}

/* k-batch-sync P=2 K=3; L0: 1,1,1,0.5  L1: 2.5,0.2,0.2,0.2.
 * Iteration 0: L0@1 (restarts), L0@2 (restarts, job 2 -> @3), L1@2.5 -> update at 2.5,
 * L0's job 2 cancelled. Iteration 1 from 2.5: L0 job 3 @3.0, L1 job 1 @2.7, restarts @2.9,
 * then L0 @3.0 -> update at 3.0 with L1, L1, L0. */
Test(ps_trace, kbatchsync)
{
    const double t[] = {1, 1, 1, 0.5, 2.5, 0.2, 0.2, 0.2};
    ps_table tab = {4, t};
    const double times[] = {2.5, 3.0};
    const size_t lr[] = {0, 0, 1, 1, 1, 0};
    const uint64_t st[] = {0, 0, 0, 0, 0, 0};
    ps_check_trace("k-batch-sync P=2 K=3", AM_VARIANT_KBATCHSYNC, 2, 3, &tab, NULL, 2, 3, times, lr,
                   st);
}

/* async P=3; L0: 1,1,1,...  L1: 1.5,2,10  L2: 4,...
 * Updates: @1 L0(v0) s0 -> L0 on v1 @2; @1.5 L1(v0) s1 -> L1 on v2 @3.5; @2 L0(v1) s1 -> v3 @3;
 * @3 L0(v3) s0 -> v4 @4; @3.5 L1(v2) s2 -> v5 @13.5; @4 tie L0 (lower index) (v4) s1;
 * @4 L2(v0) s6. */
Test(ps_trace, async)
{
    const double t[] = {1, 1, 1, 1.5, 2, 10, 4, 4, 4};
    ps_table tab = {3, t};
    const double times[] = {1, 1.5, 2, 3, 3.5, 4, 4};
    const size_t lr[] = {0, 1, 0, 0, 1, 0, 2};
    const uint64_t st[] = {0, 1, 1, 0, 2, 1, 6};
    ps_check_trace("async P=3", AM_VARIANT_ASYNC, 3, 0, &tab, NULL, 7, 1, times, lr, st);
}

/* k-async P=3 K=2; L0: 1,...  L1: 1.5,2,10  L2: 4,1.
 * @1 L0 pushes and idles; @1.5 L1 -> update 0 (L0,L1 fresh), both restart on w1 (L0 @2.5,
 * L1 @3.5); @2.5 L0 idles; @3.5 L1 -> update 1 (fresh), restart on w2 (L0 @4.5, L1 @13.5);
 * @4 L2 (v0, staleness 2) idles; @4.5 L0 -> update 2 [L2 s2, L0 s0], restart on w3 (both
 * @5.5); @5.5 tie: L0 then L2 -> update 3 (fresh). */
Test(ps_trace, kasync)
{
    const double t[] = {1, 1, 1, 1, 1.5, 2, 10, 10, 4, 1, 1, 1};
    ps_table tab = {4, t};
    const double times[] = {1.5, 3.5, 4.5, 5.5};
    const size_t lr[] = {0, 1, 0, 1, 2, 0, 0, 2};
    const uint64_t st[] = {0, 0, 0, 0, 2, 0, 0, 0};
    ps_check_trace("k-async P=3 K=2", AM_VARIANT_KASYNC, 3, 2, &tab, NULL, 4, 2, times, lr, st);
}

/* k-batch-async P=2 K=2; L0: 1,...  L1: 2.5,1,...
 * @1 L0 (v0) restarts on w0; @2 L0 -> update 0 [L0 s0, L0 s0], L0 on w1 @3; @2.5 L1 (v0) s1,
 * restarts on w1 @3.5; @3 L0 -> update 1 [L1 s1, L0 s0], L0 on w2 @4; @3.5 L1 (v1) s1;
 * @4 L0 -> update 2 [L1 s1, L0 s0]. */
Test(ps_trace, kbatchasync)
{
    const double t[] = {1, 1, 2.5, 1};
    ps_table tab = {2, t};
    const double times[] = {2, 3, 4};
    const size_t lr[] = {0, 0, 1, 0, 1, 0};
    const uint64_t st[] = {0, 0, 1, 0, 1, 0};
    ps_check_trace("k-batch-async P=2 K=2", AM_VARIANT_KBATCHASYNC, 2, 2, &tab, NULL, 3, 2, times,
                   lr, st);
}

/* k-async with const:2 runtimes, P=4 K=2: all finish together; ties go by learner index.
 * @2 L0,L1 -> update 0 (fresh), restart on w1; L2,L3 (v0) -> update 1 at 2 (staleness 1),
 * restart on w2; @4 L0,L1 (v1) -> update 2 (s1); L2,L3 (v2) -> update 3 (s1). */
Test(ps_trace, kasync_const)
{
    am_runtime rt;
    cr_assert_eq(am_runtime_make(AM_RUNTIME_CONST, 2, 0, &rt), AM_OK);
    const double times[] = {2, 2, 4, 4};
    const size_t lr[] = {0, 1, 2, 3, 0, 1, 2, 3};
    const uint64_t st[] = {0, 0, 1, 1, 1, 1, 1, 1};
    ps_check_trace("k-async const:2 P=4 K=2", AM_VARIANT_KASYNC, 4, 2, NULL, &rt, 4, 2, times, lr,
                   st);
}

Test(ps_params, rejects_bad)
{
    am_ps_params prm = am_ps_params_default();
    am_status st = AM_OK;
    prm.variant = AM_VARIANT_KSYNC;
    prm.workers = 4;
    prm.k = 5;
    cr_assert_null(am_ps_alloc(&prm, &st), "k-sync with K=5 > P=4 accepted");
    cr_assert_eq(st, AM_EINVAL);
    prm.k = 0;
    cr_assert_null(am_ps_alloc(&prm, &st), "k-sync with K=0 accepted");
    prm.variant = AM_VARIANT_KBATCHASYNC;
    prm.k = 9;
    am_ps *ps = am_ps_alloc(&prm, &st);
    cr_assert_not_null(ps, "k-batch-async with K=9 > P=4 rejected (%d)", st);
    am_ps_free(ps);
    prm.workers = 0;
    cr_assert_null(am_ps_alloc(&prm, &st), "P=0 accepted");
    am_ps_free(NULL);
}

/* The same replica gives the same schedule; the ensemble does not depend on threads. */
Test(ps_reproducible, replicas_and_threads)
{
    am_ps_params prm = am_ps_params_default();
    prm.workers = 6;
    prm.variant = AM_VARIANT_KASYNC;
    prm.k = 2;
    prm.seed = 42;
    am_ps *ps = am_ps_alloc(&prm, NULL);
    am_ps_summary a, b, c;
    am_ps_summarize(ps, 7, 10, 100, &a);
    am_ps_summarize(ps, 3, 10, 100, &c);
    am_ps_summarize(ps, 7, 10, 100, &b);
    cr_assert(memcmp(&a, &b, sizeof a) == 0, "replica 7 not reproducible");
    cr_assert(a.time_per_iter != c.time_per_iter, "replicas 3 and 7 identical");
    am_ps_free(ps);
    am_stats s1[3], s2[3];
    cr_assert_eq(am_ps_ensemble(&prm, 37, 10, 50, 1, s1), AM_OK);
    cr_assert_eq(am_ps_ensemble(&prm, 37, 10, 50, 2, s2), AM_OK);
    cr_assert(memcmp(s1, s2, sizeof s1) == 0, "ensemble differs between 1 and 2 threads");
}

/* ---- formulas ---- */

static double ps_harm(size_t n)
{
    double s = 0;
    for (size_t i = 1; i <= n; i++)
        s += 1.0 / (double)i;
    return s;
}

Test(runtime_formula, order_stat_exact_and_quadrature)
{
    const size_t ps_[] = {1, 2, 5, 16, 200};
    for (size_t a = 0; a < 5; a++) {
        size_t p = ps_[a];
        for (size_t k = 1; k <= p; k += (p > 20 ? 37 : 1)) {
            am_runtime e, s, u, pa, c;
            am_runtime_make(AM_RUNTIME_EXP, 2.0, 0, &e);
            am_runtime_make(AM_RUNTIME_SHIFTEXP, 0.5, 3.0, &s);
            am_runtime_make(AM_RUNTIME_UNIFORM, 1.0, 4.0, &u);
            am_runtime_make(AM_RUNTIME_PARETO, 2.5, 1.5, &pa);
            am_runtime_make(AM_RUNTIME_CONST, 0.7, 0, &c);
            double hp = ps_harm(p) - ps_harm(p - k);
            /* Independent references: harmonic sums, uniform K/(P+1), Pareto through Gamma
             * functions E = s Gamma(P+1) Gamma(P-K+1-1/a) / (Gamma(P-K+1) Gamma(P+1-1/a)). */
            double ref[5] = {hp / 2.0, 0.5 + hp / 3.0, 1.0 + 3.0 * (double)k / (double)(p + 1), 0,
                             0.7};
            double aa = 2.5, n = (double)p, kk = (double)k;
            ref[3] = 1.5 * exp(lgamma(n + 1) + lgamma(n - kk + 1 - 1 / aa) - lgamma(n - kk + 1) -
                               lgamma(n + 1 - 1 / aa));
            const am_runtime *rt[5] = {&e, &s, &u, &pa, &c};
            for (int d = 0; d < 5; d++) {
                double x, q;
                cr_assert_eq(am_runtime_order_stat(rt[d], k, p, &x), AM_OK, "d=%d K=%zu P=%zu", d,
                             k, p);
                cr_assert_eq(am_runtime_order_stat_quad(rt[d], k, p, &q), AM_OK,
                             "quad d=%d K=%zu P=%zu", d, k, p);
                cr_assert(fabs(x - ref[d]) <= 1e-12 * ref[d] + (d == 3 ? 1e-8 * ref[d] : 0),
                          "E[X_{K:P}] dist %d K=%zu P=%zu: %.17g vs %.17g", d, k, p, x, ref[d]);
                cr_assert(fabs(q - ref[d]) <= 1e-8 * ref[d],
                          "quadrature dist %d K=%zu P=%zu: %.17g vs %.17g", d, k, p, q, ref[d]);
            }
        }
    }
    /* Pareto with P-K+1 <= 1/ALPHA has an infinite mean order statistic. */
    am_runtime pa;
    am_runtime_make(AM_RUNTIME_PARETO, 0.5, 1, &pa);
    double x;
    cr_assert_eq(am_runtime_order_stat(&pa, 4, 5, &x), AM_EDOM, "pareto:0.5 K=4 P=5 finite");
    cr_assert_eq(am_runtime_order_stat(&pa, 3, 5, &x), AM_OK, "pareto:0.5 K=3 P=5 infinite");
    cr_assert_eq(am_runtime_time_per_iter(&pa, AM_VARIANT_ASYNC, 5, 1, &x), AM_EDOM);
}

Test(runtime_formula, closed_forms_by_hand)
{
    am_runtime e;
    am_runtime_make(AM_RUNTIME_EXP, 1.0, 0, &e);
    double x;
    /* P=4: sync H_4 = 25/12; async 1/4; k-batch-async K=2: 2/4; k-batch-sync K=3: 3/4.
     * k-async K=2 P=4 = k-sync = 1/4 + 1/3.
     * Staleness: k-async K/P, P/K-1; k-batch-async P=4 K=2: 1 - 3 (1 - 9/16)/2 = 11/32,
     * mean 3/2. */
    typedef am_status (*formula)(const am_runtime *, am_variant, size_t, size_t, double *);
    const struct {
        formula f;
        am_variant v;
        size_t k;
        double want;
        const char *what;
    } cases[] = {
        {am_runtime_time_per_iter, AM_VARIANT_SYNC, 0, 25.0 / 12.0, "sync exp:1 P=4"},
        {am_runtime_time_per_iter, AM_VARIANT_ASYNC, 0, 0.25, "async exp:1 P=4"},
        {am_runtime_time_per_iter, AM_VARIANT_KBATCHASYNC, 2, 0.5, "k-batch-async exp:1 P=4 K=2"},
        {am_runtime_time_per_iter, AM_VARIANT_KBATCHSYNC, 3, 0.75, "k-batch-sync exp:1 P=4 K=3"},
        {am_runtime_time_per_iter, AM_VARIANT_KASYNC, 2, 7.0 / 12.0, "k-async exp:1 P=4 K=2"},
        {am_runtime_p_fresh, AM_VARIANT_KASYNC, 2, 0.5, "p_fresh k-async"},
        {am_runtime_mean_staleness, AM_VARIANT_ASYNC, 0, 3.0, "staleness async"},
        {am_runtime_p_fresh, AM_VARIANT_KBATCHASYNC, 2, 11.0 / 32.0, "p_fresh k-batch-async"},
        {am_runtime_mean_staleness, AM_VARIANT_KBATCHASYNC, 2, 1.5, "staleness k-batch-async"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cases[i].f(&e, cases[i].v, 4, cases[i].k, &x);
        cr_assert(fabs(x - cases[i].want) < 1e-15, "%s: %.17g", cases[i].what, x);
    }
    am_runtime u;
    am_runtime_make(AM_RUNTIME_UNIFORM, 0, 1, &u);
    cr_assert_eq(am_runtime_time_per_iter(&u, AM_VARIANT_KASYNC, 4, 2, &x), AM_EDOM);
    cr_assert_eq(am_runtime_p_fresh(&u, AM_VARIANT_ASYNC, 4, 1, &x), AM_EDOM);
    cr_assert_eq(am_runtime_p_fresh(&u, AM_VARIANT_KASYNC, 4, 4, &x), AM_OK);
    cr_assert_eq(x, 1.0, "k-async K=P is sync: p_fresh %.17g", x);
    cr_assert_eq(am_runtime_time_per_iter(&u, AM_VARIANT_KASYNC, 4, 1, &x), AM_OK);
    cr_assert(fabs(x - 0.125) < 1e-15, "k-async K=1 is async: %.17g", x);
    cr_assert_eq(am_runtime_time_per_iter(&u, AM_VARIANT_KASYNC, 4, 4, &x), AM_OK);
    cr_assert(fabs(x - 0.8) < 1e-12, "k-async K=P=4 is sync, E[U_{4:4}] = 4/5: %.17g", x);
}

Test(runtime_formula, parse)
{
    am_runtime r;
    char err[256], buf[128];
    cr_assert_eq(am_runtime_parse("shiftexp:0.5:2", &r, err, sizeof err), AM_OK, "%s", err);
    cr_assert(r.kind == AM_RUNTIME_SHIFTEXP && r.a == 0.5 && r.b == 2);
    am_runtime_format(&r, buf, sizeof buf);
    cr_assert_str_eq(buf, "shiftexp:0.5:2");
    const char *bad[] = {"exp",         "exp:0",       "exp:1:2",      "shiftexp:1",
                         "pareto:-1:1", "uniform:2:1", "const:abc",    "weibull:1",
                         "exp:",        "const:inf",   "uniform:1:2:3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(am_runtime_parse(bad[i], &r, err, sizeof err), AM_EINVAL, "accepted '%s'",
                     bad[i]);
}

/* ---- formulas against simulation ---- */

typedef struct {
    const char *rt;
    am_variant v;
    size_t p, k;
} ps_case;

static void ps_check_sim(const ps_case *c, size_t replicas, uint64_t n, int check_stale)
{
    am_ps_params prm = am_ps_params_default();
    char err[256];
    cr_assert_eq(am_runtime_parse(c->rt, &prm.runtime, err, sizeof err), AM_OK, "%s", err);
    prm.workers = c->p;
    prm.variant = c->v;
    prm.k = c->k;
    prm.seed = 2024;
    am_stats s[3];
    cr_assert_eq(am_ps_ensemble(&prm, replicas, 200, n, 0, s), AM_OK);
    double th;
    double sem = am_stats_sem(&s[0]);
    if (am_runtime_time_per_iter(&prm.runtime, c->v, c->p, c->k, &th) != AM_OK)
        /* the only variant without a general closed form */
        cr_assert(c->v == AM_VARIANT_KASYNC && c->k > 1 && c->k < c->p,
                  "%s %s P=%zu K=%zu: no time formula", c->rt, am_runtime_variant_name(c->v), c->p,
                  c->k);
    else
        cr_assert(fabs(s[0].mean - th) <= 5 * sem,
                  "%s %s P=%zu K=%zu: time per iteration %.6g +- %.2g, theory %.6g", c->rt,
                  am_runtime_variant_name(c->v), c->p, c->k, s[0].mean, sem, th);
    if (!check_stale) return;
    double pf, ms;
    double sp = am_stats_sem(&s[1]), ss = am_stats_sem(&s[2]);
    if (am_runtime_p_fresh(&prm.runtime, c->v, c->p, c->k, &pf) == AM_OK)
        cr_assert(fabs(s[1].mean - pf) <= 5 * sp + 1e-12,
                  "%s %s P=%zu K=%zu: p_fresh %.6g +- %.2g, theory %.6g", c->rt,
                  am_runtime_variant_name(c->v), c->p, c->k, s[1].mean, sp, pf);
    else
        cr_assert(c->v >= AM_VARIANT_ASYNC && strncmp(c->rt, "exp:", 4) != 0,
                  "%s %s: no p_fresh formula", c->rt, am_runtime_variant_name(c->v));
    cr_assert_eq(am_runtime_mean_staleness(&prm.runtime, c->v, c->p, c->k, &ms), AM_OK);
    cr_assert(fabs(s[2].mean - ms) <= 5 * ss + 1e-12,
              "%s %s P=%zu K=%zu: mean staleness %.6g +- %.2g, theory %.6g", c->rt,
              am_runtime_variant_name(c->v), c->p, c->k, s[2].mean, ss, ms);
}

Test(ps_sim, order_statistics)
{
    const ps_case cases[] = {
        {"exp:2", AM_VARIANT_SYNC, 8, 0},          {"exp:2", AM_VARIANT_KSYNC, 8, 1},
        {"exp:2", AM_VARIANT_KSYNC, 8, 3},         {"shiftexp:0.5:2", AM_VARIANT_KSYNC, 8, 5},
        {"shiftexp:0.5:2", AM_VARIANT_SYNC, 8, 0}, {"uniform:1:3", AM_VARIANT_KSYNC, 8, 2},
        {"pareto:3:1", AM_VARIANT_KSYNC, 8, 6},    {"pareto:3:1", AM_VARIANT_SYNC, 8, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ps_check_sim(&cases[i], 200, 100, 1);
}

Test(ps_sim, renewal_and_exponential)
{
    const ps_case cases[] = {
        {"exp:1", AM_VARIANT_KBATCHSYNC, 8, 3},
        {"exp:1", AM_VARIANT_KBATCHSYNC, 4, 9},
        {"exp:1", AM_VARIANT_ASYNC, 8, 0},
        {"exp:1", AM_VARIANT_KASYNC, 8, 3},
        {"exp:1", AM_VARIANT_KBATCHASYNC, 8, 3},
        {"exp:1", AM_VARIANT_KBATCHASYNC, 5, 12},
        {"uniform:1:3", AM_VARIANT_ASYNC, 8, 0},
        {"pareto:3:1", AM_VARIANT_KBATCHASYNC, 8, 4},
        {"shiftexp:1:1", AM_VARIANT_KBATCHASYNC, 6, 2},
        {"uniform:1:3", AM_VARIANT_KASYNC, 6, 1},
        {"pareto:3:1", AM_VARIANT_KASYNC, 6, 6},
        {"uniform:1:3", AM_VARIANT_KASYNC, 6, 2},
        {"pareto:3:1", AM_VARIANT_KASYNC, 7, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ps_check_sim(&cases[i], 100, 1000, 1);
}

/* Shifted exponential runtimes are new-longer-than-used: k-async is faster than k-sync's
 * E[X_{K:P}] (Dutta et al.'s bound), by more than 5 standard errors at P=8, K=4. */
Test(ps_sim, kasync_below_order_statistic)
{
    am_ps_params prm = am_ps_params_default();
    char err[128];
    cr_assert_eq(am_runtime_parse("shiftexp:1:1", &prm.runtime, err, sizeof err), AM_OK);
    prm.workers = 8;
    prm.variant = AM_VARIANT_KASYNC;
    prm.k = 4;
    prm.seed = 99;
    am_stats s[3];
    cr_assert_eq(am_ps_ensemble(&prm, 50, 100, 500, 0, s), AM_OK);
    double bound;
    cr_assert_eq(am_runtime_order_stat(&prm.runtime, 4, 8, &bound), AM_OK);
    cr_assert(s[0].mean + 5 * am_stats_sem(&s[0]) < bound,
              "shiftexp:1:1 k-async P=8 K=4: %.6g +- %.2g not below E[X_{4:8}] = %.6g", s[0].mean,
              am_stats_sem(&s[0]), bound);
}

/* The runtime words computed eight jobs at a time are the stream's own (am_rng_u64 at step
 * job P + learner), on every path this CPU has, for small and large counters. */
Test(ps_fast, runtime_words_are_the_stream_words)
{
    const uint64_t seeds[] = {1, 0xdeadbeefcafeULL};
    const uint64_t replicas[] = {0, 7, (1ULL << 39) + 5};
    const size_t workers[] = {1, 5, 4096};
    const uint64_t jobs[] = {0, 8, 1ULL << 30};
    int best = (int)am_msgd_batch_best(), n = 0;
    for (int path = AM_MSGD_PATH_PORTABLE; path <= best; path++)
        for (size_t si = 0; si < 2; si++)
            for (size_t ri = 0; ri < 3; ri++)
                for (size_t wi = 0; wi < 3; wi++)
                    for (size_t ji = 0; ji < 3; ji++) {
                        am_ps_params prm = am_ps_params_default();
                        prm.seed = seeds[si];
                        prm.workers = workers[wi];
                        size_t learner = workers[wi] - 1;
                        uint64_t w[8];
                        am_ps_words(&prm, replicas[ri], learner, jobs[ji], path, w);
                        for (size_t b = 0; b < 8; b++) {
                            am_rng r;
                            am_rng_init(&r, seeds[si], replicas[ri], AM_STREAM_WORKERS,
                                        (jobs[ji] + b) * workers[wi] + learner);
                            uint64_t e = am_rng_u64(&r);
                            cr_assert_eq(w[b], e,
                                         "path %d seed %llu replica %llu P %zu job %llu+%zu: "
                                         "%016llx, stream %016llx",
                                         path, (unsigned long long)seeds[si],
                                         (unsigned long long)replicas[ri], workers[wi],
                                         (unsigned long long)jobs[ji], b, (unsigned long long)w[b],
                                         (unsigned long long)e);
                            n++;
                        }
                    }
    cr_assert_geq(n, 8 * 54, "only %d words compared", n);
}

/* Runs n updates of replica `replica` on path `path` into times/learners/staleness (batch
 * entries per update); path + 100: a simulator placed without the runtime buffer. */
static void ps_record(const am_ps_params *prm, int path, uint64_t replica, size_t n, double *times,
                      size_t *learners, uint64_t *stale)
{
    am_status st = AM_OK;
    am_ps *ps;
    void *mem = NULL;
    if (path >= 100) {
        path -= 100;
        mem = aligned_alloc(64, (am_ps_bytes(prm) + 63) / 64 * 64);
        cr_assert_not_null(mem);
        ps = am_ps_place(mem, prm);
    } else {
        ps = am_ps_alloc(prm, &st);
    }
    cr_assert_not_null(ps, "alloc %d", st);
    am_ps_set_path(ps, path);
    am_ps_reset(ps, replica);
    size_t batch = am_runtime_variant_batch(prm->variant, prm->workers, prm->k), o = 0;
    for (size_t m = 0; m < n; m++) {
        am_ps_update u;
        am_ps_next(ps, &u);
        cr_assert_eq(u.ngrad, batch);
        times[m] = u.time;
        for (size_t g = 0; g < batch; g++, o++) {
            learners[o] = u.learner[g];
            stale[o] = u.staleness[g];
        }
    }
    if (mem)
        free(mem); /* a placed simulator owns nothing */
    else
        am_ps_free(ps);
}

/* The fast simulator (runtimes eight jobs ahead, a scan of the running learners for P <= 16)
 * gives the reference's updates exactly: every variant, runtime law (const and uniform:1:1.5
 * bring ties and near-ties), P on both sides of 16. */
Test(ps_fast, same_updates_as_the_reference)
{
    const char *laws[] = {"exp:1", "const:1", "uniform:1:1.5", "pareto:2.5:1", "shiftexp:0.5:2"};
    const size_t workers[] = {1, 3, 8, 16, 17, 40};
    const am_variant vars[] = {AM_VARIANT_SYNC,  AM_VARIANT_KSYNC,  AM_VARIANT_KBATCHSYNC,
                               AM_VARIANT_ASYNC, AM_VARIANT_KASYNC, AM_VARIANT_KBATCHASYNC};
    enum { N = 150, MAXG = N * 40 };
    static double t0[N], t1[N];
    static size_t l0[MAXG], l1[MAXG];
    static uint64_t s0[MAXG], s1[MAXG];
    int best = (int)am_msgd_batch_best();
    for (size_t li = 0; li < 5; li++)
        for (size_t wi = 0; wi < 6; wi++)
            for (size_t vi = 0; vi < 6; vi++) {
                am_ps_params prm = am_ps_params_default();
                char err[128];
                cr_assert_eq(am_runtime_parse(laws[li], &prm.runtime, err, sizeof err), AM_OK);
                prm.workers = workers[wi];
                prm.variant = vars[vi];
                prm.k = workers[wi] > 2 ? 2 : 1;
                prm.seed = 31 + li;
                size_t ng = N * am_runtime_variant_batch(prm.variant, prm.workers, prm.k);
                ps_record(&prm, AM_MSGD_PATH_SCALAR, 3, N, t0, l0, s0);
                for (int path = AM_MSGD_PATH_PORTABLE; path <= best + 1; path++) {
                    /* best + 1: the scan without the runtime buffer (am_ps_place) */
                    ps_record(&prm, path <= best ? path : 100 + best, 3, N, t1, l1, s1);
                    cr_assert(!memcmp(t0, t1, sizeof t0) && !memcmp(l0, l1, ng * sizeof *l0) &&
                                  !memcmp(s0, s1, ng * sizeof *s0),
                              "%s P=%zu %s K=%zu path %d: updates differ from the reference",
                              laws[li], workers[wi], am_runtime_variant_name(vars[vi]), prm.k,
                              path);
                }
            }
}

/* The comparison of updates can fail: a runtime one ulp longer changes the recorded times. */
Test(ps_fast, comparison_detects_one_ulp)
{
    am_ps_params a = am_ps_params_default(), b;
    char err[128];
    cr_assert_eq(am_runtime_parse("const:1", &a.runtime, err, sizeof err), AM_OK);
    a.workers = 4;
    b = a;
    b.runtime.a = nextafter(1.0, 2.0);
    enum { N = 20 };
    double t0[N], t1[N];
    size_t l0[N], l1[N];
    uint64_t s0[N], s1[N];
    ps_record(&a, AM_MSGD_PATH_SCALAR, 0, N, t0, l0, s0);
    ps_record(&b, (int)am_msgd_batch_best(), 0, N, t1, l1, s1);
    cr_assert(memcmp(t0, t1, sizeof t0) != 0, "a runtime one ulp longer compared equal");
}
