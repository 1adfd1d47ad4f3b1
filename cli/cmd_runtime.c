/*
 * cmd_runtime.c -- `amsgd runtime`: time per iteration, fraction of fresh gradients and mean
 * staleness of the six parameter-server variants (montecarlo/am_ps.h) for each K, next to
 * the closed forms of theory/am_runtime.h (order statistics, renewal formulas).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_ps.h"
#include "../theory/am_runtime.h"
#include "cli_common.h"
#include "commands.h"

static const cli_opt OPT_WORKERS = {"workers", "P", "8", "number of learners P >= 1"};
static const cli_opt OPT_RUNTIME = {
    "runtime", "DIST", "exp:1",
    "learner runtime: exp:RATE, shiftexp:DELTA:RATE, pareto:ALPHA:SCALE, uniform:A:B, const:C"};
static const cli_opt OPT_KLIST = {"K", "LIST", "1,2,4,8",
                                  "comma list of K for the k-variants, integers in [1, P]"};
static const cli_opt OPT_UPDATES = {"updates", "N", "1000",
                                    "updates measured per replica (after the burn-in)"};
static const cli_opt OPT_BURNIN = {"burnin", "B", "100",
                                   "updates discarded per replica before measuring"};
static const cli_opt OPT_REPLICAS_RT = {"replicas", "R", "200",
                                        "independent replicas (standard errors across them)"};

static const cli_opt *const runtime_opts[] = {
    &OPT_WORKERS, &OPT_RUNTIME, &OPT_KLIST,  &OPT_UPDATES, &OPT_BURNIN, &OPT_REPLICAS_RT,
    &OPT_SEED,    &OPT_THREADS, &OPT_FORMAT, &OPT_OUTPUT,  NULL};

typedef struct {
    am_variant v;
    size_t k;
    am_stats s[3];
    double theory, p_fresh_theory, stale_theory;
} rt_row;

static json_t *json_num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

int cmd_runtime(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "runtime",
              "Simulate a parameter server with P learners of i.i.d. runtime for the variants\n"
              "sync, k-sync, k-batch-sync, async, k-async and k-batch-async; report the time per\n"
              "iteration (mean and standard error over replicas), the fraction of fresh gradients\n"
              "and the mean staleness, next to their closed forms.",
              runtime_opts, argc, argv);
    size_t p = (size_t)cli_int(&a, "workers", 1, 100000);
    am_runtime rt;
    char err[256];
    if (am_runtime_parse(cli_str(&a, "runtime"), &rt, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    size_t nk;
    double *kd = cli_double_list(&a, "K", &nk);
    size_t *ks = malloc(nk * sizeof *ks);
    if (!ks) cli_runtime_error("out of memory");
    for (size_t i = 0; i < nk; i++) {
        if (!(kd[i] >= 1 && kd[i] <= (double)p && kd[i] == floor(kd[i])))
            cli_usage_error("--K values must be integers in [1, %zu] (the workers), got '%s'", p,
                            cli_str(&a, "K"));
        ks[i] = (size_t)kd[i];
    }
    free(kd);
    uint64_t n = (uint64_t)cli_int(&a, "updates", 1, 1000000000LL);
    uint64_t burnin = (uint64_t)cli_int(&a, "burnin", 0, 1000000000LL);
    size_t replicas = (size_t)cli_int(&a, "replicas", 2, 100000000LL);
    uint64_t seed = cli_u64(&a, "seed");
    int threads = (int)cli_int(&a, "threads", 0, 4096);
    int json = cli_json(&a);

    /* Rows: sync (K = P), k-sync for each K, k-batch-sync for each K, async (K = 1), k-async
     * for each K, k-batch-async for each K. */
    size_t nrows = 2 + 4 * nk, r = 0;
    rt_row *rows = calloc(nrows, sizeof *rows);
    if (!rows) cli_runtime_error("out of memory");
    const am_variant order[6] = {AM_VARIANT_SYNC,  AM_VARIANT_KSYNC,  AM_VARIANT_KBATCHSYNC,
                                 AM_VARIANT_ASYNC, AM_VARIANT_KASYNC, AM_VARIANT_KBATCHASYNC};
    for (int vi = 0; vi < 6; vi++) {
        am_variant v = order[vi];
        if (v == AM_VARIANT_SYNC || v == AM_VARIANT_ASYNC) {
            rows[r].v = v;
            rows[r++].k = v == AM_VARIANT_SYNC ? p : 1;
            continue;
        }
        for (size_t i = 0; i < nk; i++) {
            rows[r].v = v;
            rows[r++].k = ks[i];
        }
    }
    free(ks);
    for (r = 0; r < nrows; r++) {
        rt_row *w = &rows[r];
        am_ps_params prm = am_ps_params_default();
        prm.workers = p;
        prm.runtime = rt;
        prm.variant = w->v;
        prm.k = w->k;
        prm.seed = seed;
        am_status st = am_ps_ensemble(&prm, replicas, burnin, n, threads, w->s);
        if (st) cli_runtime_error("runtime: %s: %s", am_runtime_variant_name(w->v), am_strerror(st));
        am_status ts = am_runtime_time_per_iter(&rt, w->v, p, w->k, &w->theory);
        if (ts == AM_ESOLVER)
            cli_runtime_error("runtime: quadrature of E[X_{%zu:%zu}] failed", w->k, p);
        if (ts) w->theory = NAN;
        if (am_runtime_p_fresh(&rt, w->v, p, w->k, &w->p_fresh_theory)) w->p_fresh_theory = NAN;
        if (am_runtime_mean_staleness(&rt, w->v, p, w->k, &w->stale_theory)) w->stale_theory = NAN;
    }

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    char spec[128];
    am_runtime_format(&rt, spec, sizeof spec);
    if (json) {
        json_t *params = json_object();
        json_object_set_new(params, "workers", json_integer((json_int_t)p));
        json_object_set_new(params, "runtime", json_string(spec));
        json_t *kl = json_array();
        for (size_t i = 0; i < nk; i++)
            json_array_append_new(kl, json_integer((json_int_t)rows[1 + i].k));
        json_object_set_new(params, "K", kl);
        json_object_set_new(params, "updates", json_integer((json_int_t)n));
        json_object_set_new(params, "burnin", json_integer((json_int_t)burnin));
        json_object_set_new(params, "replicas", json_integer((json_int_t)replicas));
        /* seeds are 64-bit: a string keeps every bit in any JSON reader */
        char sbuf[32];
        snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)seed);
        json_object_set_new(params, "seed", json_string(sbuf));
        json_object_set_new(params, "threads", json_integer(threads));
        json_t *root = cli_json_root("runtime", params);
        double mean = NAN;
        json_object_set_new(root, "mean_runtime",
                            am_runtime_mean(&rt, &mean) ? json_null() : json_real(mean));
        json_t *arr = json_array();
        for (r = 0; r < nrows; r++) {
            const rt_row *w = &rows[r];
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(am_runtime_variant_name(w->v)));
            json_object_set_new(o, "K", json_integer((json_int_t)w->k));
            json_object_set_new(o, "time_per_iter", json_num_or_null(w->s[0].mean));
            json_object_set_new(o, "time_per_iter_sem", json_num_or_null(am_stats_sem(&w->s[0])));
            json_object_set_new(o, "theory", json_num_or_null(w->theory));
            json_object_set_new(o, "p_fresh", json_num_or_null(w->s[1].mean));
            json_object_set_new(o, "p_fresh_sem", json_num_or_null(am_stats_sem(&w->s[1])));
            json_object_set_new(o, "p_fresh_theory", json_num_or_null(w->p_fresh_theory));
            json_object_set_new(o, "mean_staleness", json_num_or_null(w->s[2].mean));
            json_object_set_new(o, "mean_staleness_sem", json_num_or_null(am_stats_sem(&w->s[2])));
            json_object_set_new(o, "mean_staleness_theory", json_num_or_null(w->stale_theory));
            json_array_append_new(arr, o);
        }
        json_object_set_new(root, "variants", arr);
        cli_out_json(f, root);
    } else {
        fprintf(f, "name,K,time_per_iter,time_per_iter_sem,theory,p_fresh,p_fresh_sem,"
                   "p_fresh_theory,mean_staleness,mean_staleness_sem,mean_staleness_theory\n");
        for (r = 0; r < nrows; r++) {
            const rt_row *w = &rows[r];
            fprintf(f, "%s,%zu,", am_runtime_variant_name(w->v), w->k);
            const double v[9] = {w->s[0].mean, am_stats_sem(&w->s[0]), w->theory,
                                 w->s[1].mean, am_stats_sem(&w->s[1]), w->p_fresh_theory,
                                 w->s[2].mean, am_stats_sem(&w->s[2]), w->stale_theory};
            for (int c = 0; c < 9; c++) {
                cli_csv_double(f, v[c]);
                fputc(c == 8 ? '\n' : ',', f);
            }
        }
    }
    cli_out_commit(&out);
    free(rows);
    return 0;
}
