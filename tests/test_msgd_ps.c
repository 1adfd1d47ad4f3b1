/*
 * test_msgd_ps.c -- Async-MSGD under parameter-server staleness (montecarlo/am_msgd_ps.h):
 * one learner with fresh gradients reproduces the plain engine bit for bit, the adaptive
 * step without staleness is eta_max, and the mean wall-clock time of async with exponential
 * runtimes is k / (P rate).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"
#include "../montecarlo/am_msgd_ps.h"

static am_ensemble_result *run_model(const am_model *model, const uint64_t *k, size_t n,
                                     size_t replicas)
{
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = replicas;
    ep.threads = 1;
    am_ensemble_result *res = NULL;
    cr_assert_eq(am_ensemble_run(model, k, n, &ep, &res), AM_OK);
    return res;
}

static am_problem *msgd_ps_problem(void)
{
    const double lam[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_GAUSSIAN, 0};
    am_problem *p = am_problem_alloc(4, lam, dist, 0, NULL, NULL, 0);
    cr_assert_not_null(p);
    return p;
}

Test(msgd_ps, one_learner_is_the_plain_engine)
{
    am_problem *p = msgd_ps_problem();
    am_msgd_params mp = am_msgd_params_default();
    mp.eta = 0.01;
    mp.mu = 0.5;
    am_status st;
    am_msgd *plain = am_msgd_alloc(p, &mp, &st, NULL, 0);
    cr_assert_not_null(plain);
    am_msgd_ps_params pp;
    memset(&pp, 0, sizeof pp);
    pp.msgd = mp;
    char err[200];
    cr_assert_eq(am_delay_parse("workers:1:exp:1", &pp.msgd.delay, err, sizeof err), AM_OK, "%s",
                 err);
    pp.variant = AM_VARIANT_SYNC;
    am_msgd_ps *eng = am_msgd_ps_alloc(p, &pp, &st, NULL, 0);
    cr_assert_not_null(eng, "alloc %d", st);
    /* the adaptive step with eta_max = eta and no staleness is the constant step */
    am_msgd_ps_params pa = pp;
    pa.msgd.eta = 123; /* unused by the adaptive step */
    pa.lr_c = 1e-9;
    pa.lr_max = 0.01;
    am_msgd_ps *ada = am_msgd_ps_alloc(p, &pa, &st, NULL, 0);
    cr_assert_not_null(ada, "alloc %d", st);
    const uint64_t k[3] = {0, 100, 1000};
    am_ensemble_result *a = run_model(am_msgd_model(plain), k, 3, 8);
    am_ensemble_result *b = run_model(am_msgd_ps_model(eng), k, 3, 8);
    am_ensemble_result *c = run_model(am_msgd_ps_model(ada), k, 3, 8);
    for (size_t g = 0; g < 3; g++)
        for (size_t j = 0; j < 2; j++) {
            cr_assert(a->obs[g * 2 + j].mean == b->obs[g * 4 + j].mean,
                      "grid %zu obs %zu: plain %.17g, one learner %.17g", g, j,
                      a->obs[g * 2 + j].mean, b->obs[g * 4 + j].mean);
            cr_assert(b->obs[g * 4 + j].mean == c->obs[g * 4 + j].mean,
                      "grid %zu obs %zu: constant %.17g, adaptive %.17g", g, j,
                      b->obs[g * 4 + j].mean, c->obs[g * 4 + j].mean);
        }
    /* one exp:1 learner: E[T_k] = k */
    size_t ot = am_msgd_ps_obs_time(eng);
    cr_assert_eq(ot, 2);
    am_ensemble_result_free(a);
    am_ensemble_result_free(b);
    am_ensemble_result_free(c);
    am_msgd_ps_free(eng);
    am_msgd_ps_free(ada);
    am_msgd_free(plain);
    am_problem_free(p);
}

Test(msgd_ps, async_wall_clock_and_staleness_slowdown)
{
    am_problem *p = msgd_ps_problem();
    am_msgd_ps_params pp;
    memset(&pp, 0, sizeof pp);
    pp.msgd = am_msgd_params_default();
    pp.msgd.eta = 0.01;
    char err[200];
    cr_assert_eq(am_delay_parse("workers:8:exp:2", &pp.msgd.delay, err, sizeof err), AM_OK, "%s",
                 err);
    pp.variant = AM_VARIANT_ASYNC;
    am_status st;
    am_msgd_ps *eng = am_msgd_ps_alloc(p, &pp, &st, NULL, 0);
    cr_assert_not_null(eng, "alloc %d", st);
    const uint64_t k[2] = {0, 2000};
    am_ensemble_result *r = run_model(am_msgd_ps_model(eng), k, 2, 200);
    size_t no = r->nobs, ot = am_msgd_ps_obs_time(eng);
    double t = r->obs[1 * no + ot].mean, se = am_stats_sem(&r->obs[1 * no + ot]);
    double expect = 2000.0 / (8 * 2.0);
    cr_assert(fabs(t - expect) <= 5 * se, "async P=8 exp:2: T_2000 = %.6g +- %.2g, expected %.6g",
              t, se, expect);
    cr_assert_eq(r->obs[1 * no + ot + 1].mean, 0.0, "clamped gradients at P=8");
    am_ensemble_result_free(r);
    am_msgd_ps_free(eng);
    /* a plain-engine delay is refused, and workers:P:DIST is refused by the plain engine */
    am_msgd_ps_params bad = pp;
    am_delay_make(AM_DELAY_CONST, 2, &bad.msgd.delay);
    cr_assert_null(am_msgd_ps_alloc(p, &bad, &st, NULL, 0));
    cr_assert_null(am_msgd_alloc(p, &pp.msgd, &st, NULL, 0));
    cr_assert_eq(st, AM_EINVAL);
    am_problem_free(p);
}

Test(msgd_ps, delay_spec)
{
    am_delay d;
    char err[256], buf[128];
    cr_assert_eq(am_delay_parse("workers:16:pareto:2.5:1", &d, err, sizeof err), AM_OK, "%s", err);
    cr_assert(d.kind == AM_DELAY_WORKERS && d.param == 16 && d.runtime.kind == AM_RUNTIME_PARETO);
    am_delay_format(&d, buf, sizeof buf);
    cr_assert_str_eq(buf, "workers:16:pareto:2.5:1");
    const char *bad[] = {"workers",    "workers:0:exp:1",  "workers:2.5:exp:1", "workers:4",
                         "workers:4:", "workers:4:exp:-1", "workers:4:gamma:1", "workers:x:exp:1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(am_delay_parse(bad[i], &d, err, sizeof err), AM_EINVAL, "accepted %s", bad[i]);
}

#include "test_util.h"

/* `amsgd mc --delay workers:P:DIST`: wall-clock columns, params, and errors. */
Test(msgd_ps, cli)
{
    test_run r = test_amsgd("mc --delay workers:4:exp:2 --variant k-batch-async:2 --time 1 "
                            "--eta 0.01 --grid 3 --replicas 40 --format json");
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
    cr_assert_not_null(strstr(r.out, "\"wallclock_mean\""), "no wallclock_mean");
    cr_assert_not_null(strstr(r.out, "\"variant\": \"k-batch-async:2\""), "no variant");
    cr_assert_not_null(strstr(r.out, "\"delay\": \"workers:4:exp:2\""), "no delay");
    test_run_free(&r);
    r = test_amsgd("mc --delay workers:4:exp:2 --time 1 --eta 0.01 --grid 3 --replicas 10");
    cr_assert_eq(r.status, 0, "status %d: %s", r.status, r.err);
    cr_assert(strncmp(r.out,
                      "t,step,err_mean,err_sem,norm_mean,norm_sem,alive,wallclock_mean,"
                      "wallclock_sem,clamped_mean,clamped_sem\n",
                      103) == 0,
              "header %.120s", r.out);
    test_run_free(&r);
    const char *bad[] = {"mc --delay workers:4:exp:2 --variant k-sync:5",
                         "mc --delay workers:4:exp:2 --variant foo",
                         "mc --delay workers:4:exp:2 --variant async:2",
                         "mc --delay workers:4:exp:2 --lr adaptive:1",
                         "mc --delay workers:4:exp:2 --lr fast",
                         "mc --variant async",
                         "mc --delay workers:0:exp:1",
                         "mc --delay workers:4:exp:0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        test_expect_flag_error(bad[i], 0);
}
