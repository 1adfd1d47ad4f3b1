/*
 * cmd_runtime.c -- `amsgd runtime`: time per iteration, fraction of fresh gradients and mean
 * staleness of the six parameter-server variants (montecarlo/am_ps.h) for each K, next to
 * the closed forms of theory/am_runtime.h (order statistics, renewal formulas).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_runtime_study.h"
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
static const cli_opt OPT_BURNIN = {"burnin", "N", "100",
                                   "updates discarded per replica before measuring"};
static const cli_opt OPT_REPLICAS_RT = {"replicas", "R", "200",
                                        "independent replicas (standard errors across them)"};

static const cli_opt *const runtime_opts[] = {
    &OPT_WORKERS, &OPT_RUNTIME, &OPT_KLIST,  &OPT_UPDATES, &OPT_BURNIN, &OPT_REPLICAS_RT,
    &OPT_SEED,    &OPT_THREADS, &OPT_FORMAT, &OPT_OUTPUT,  NULL};

/* Every flag into rp; returns the --format flag (cli_json); exits 2 on bad usage. */
static int runtime_parse(const cli_args *a, am_runtime_study_params *rp)
{
    char err[256];
    *rp = am_runtime_study_params_default();
    rp->workers = (size_t)cli_int(a, "workers", 1, 100000);
    if (am_runtime_parse(cli_str(a, "runtime"), &rp->runtime, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    rp->k = cli_size_list(a, "K", 1, (double)rp->workers, " (the workers)", &rp->nk);
    rp->updates = (uint64_t)cli_int(a, "updates", 1, 1000000000LL);
    rp->burnin = (uint64_t)cli_int(a, "burnin", 0, 1000000000LL);
    rp->replicas = (size_t)cli_int(a, "replicas", 2, 100000000LL);
    rp->seed = cli_u64(a, "seed");
    rp->threads = (int)cli_int(a, "threads", 0, 4096);
    return cli_json(a);
}

/* Refuses a run above the work limit: every update of the simulated server visits its P
 * learners, for each variant. */
static void runtime_work(const cli_args *a, const am_runtime_study_params *rp)
{
    char how[160];
    const uint64_t n = rp->updates + rp->burnin;
    double nvar = 2.0 + 4.0 * (double)rp->nk;
    snprintf(how, sizeof how, "%zu replicas x %llu updates x %zu learners x %.0f variants",
             rp->replicas, (unsigned long long)n, rp->workers, nvar);
    cli_work_check(a, (double)rp->replicas * (double)n * (double)rp->workers * nvar, how);
}

/* An infinite-mean runtime: a row without closed form has a mean of an infinite-mean time,
 * which is finite on every run but does not settle as --updates grows. */
static void runtime_warn_infinite(const am_runtime *rt, const am_runtime_study_result *res)
{
    double mrt;
    size_t ninf = 0;
    for (size_t r = 0; r < res->nrows; r++)
        ninf += !isfinite(res->rows[r].theory);
    if (ninf && am_runtime_mean(rt, &mrt) != AM_OK) {
        char rs[128];
        am_runtime_format(rt, rs, sizeof rs);
        fprintf(stderr,
                "amsgd: warning: --runtime %s has an infinite mean; the time_per_iter of the "
                "%zu row(s) with theory nan estimates an infinite expectation and does not "
                "settle as --updates grows\n",
                rs, ninf);
    }
}

/* The JSON params: every option as resolved. */
static json_t *runtime_json_params(const am_runtime_study_params *rp)
{
    char spec[128];
    am_runtime_format(&rp->runtime, spec, sizeof spec);
    json_t *params = json_object();
    json_object_set_new(params, "workers", json_integer((json_int_t)rp->workers));
    json_object_set_new(params, "runtime", json_string(spec));
    json_t *kl = json_array();
    for (size_t i = 0; i < rp->nk; i++)
        json_array_append_new(kl, json_integer((json_int_t)rp->k[i]));
    json_object_set_new(params, "K", kl);
    json_object_set_new(params, "updates", json_integer((json_int_t)rp->updates));
    json_object_set_new(params, "burnin", json_integer((json_int_t)rp->burnin));
    json_object_set_new(params, "replicas", json_integer((json_int_t)rp->replicas));
    /* seeds are 64-bit: a string keeps every bit in any JSON reader */
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)rp->seed);
    json_object_set_new(params, "seed", json_string(sbuf));
    json_object_set_new(params, "threads", json_integer(rp->threads));
    return params;
}

/* The rows as a JSON array. */
static json_t *runtime_json_rows(const am_runtime_study_result *res)
{
    json_t *arr = json_array();
    for (size_t r = 0; r < res->nrows; r++) {
        const am_runtime_study_row *w = &res->rows[r];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(am_runtime_variant_name(w->variant)));
        json_object_set_new(o, "K", json_integer((json_int_t)w->k));
        const struct {
            const char *key;
            double value;
        } cols[] = {
            {"time_per_iter", w->time_per_iter},
            {"time_per_iter_sem", w->time_per_iter_sem},
            {"theory", w->theory},
            {"p_fresh", w->p_fresh},
            {"p_fresh_sem", w->p_fresh_sem},
            {"p_fresh_theory", w->p_fresh_theory},
            {"mean_staleness", w->mean_staleness},
            {"mean_staleness_sem", w->mean_staleness_sem},
            {"mean_staleness_theory", w->mean_staleness_theory},
        };
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
            json_object_set_new(o, cols[c].key, cli_json_number(cols[c].value));
        json_array_append_new(arr, o);
    }
    return arr;
}

static void runtime_csv(FILE *f, const am_runtime_study_result *res)
{
    fprintf(f, "name,K,time_per_iter,time_per_iter_sem,theory,p_fresh,p_fresh_sem,"
               "p_fresh_theory,mean_staleness,mean_staleness_sem,mean_staleness_theory\n");
    for (size_t r = 0; r < res->nrows; r++) {
        const am_runtime_study_row *w = &res->rows[r];
        fprintf(f, "%s,%zu,", am_runtime_variant_name(w->variant), w->k);
        const double v[9] = {w->time_per_iter,  w->time_per_iter_sem,  w->theory,
                             w->p_fresh,        w->p_fresh_sem,        w->p_fresh_theory,
                             w->mean_staleness, w->mean_staleness_sem, w->mean_staleness_theory};
        for (int c = 0; c < 9; c++) {
            cli_csv_double(f, v[c]);
            fputc(c == 8 ? '\n' : ',', f);
        }
    }
}

/* Writes the result (CSV or JSON) through --output. */
static void runtime_write(const cli_args *a, int json, const am_runtime_study_params *rp,
                          const am_runtime_study_result *res)
{
    cli_out out;
    FILE *f = cli_out_begin(&out, a);
    if (json) {
        json_t *root = cli_json_root("runtime", runtime_json_params(rp));
        json_object_set_new(root, "mean_runtime", cli_json_number(res->mean_runtime));
        json_object_set_new(root, "variants", runtime_json_rows(res));
        cli_out_json(f, root);
    } else {
        runtime_csv(f, res);
    }
    cli_out_commit(&out);
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
    am_runtime_study_params rp;
    const int json = runtime_parse(&a, &rp);
    runtime_work(&a, &rp);
    char err[256];
    am_runtime_study_result res;
    am_status st = am_runtime_study_run(&rp, &res, err, sizeof err);
    if (st) cli_runtime_error("runtime: %s", err);
    runtime_warn_infinite(&rp.runtime, &res);
    runtime_write(&a, json, &rp, &res);
    am_runtime_study_result_free(&res);
    free((void *)rp.k);
    return 0;
}
