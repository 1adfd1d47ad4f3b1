/*
 * cmd_wallclock.c -- `amsgd wallclock`: error against wall-clock time for parameter-server
 * variants, on streaming PCA (Async-MSGD, montecarlo/am_msgd_ps.h) or on strongly convex
 * streaming least squares (montecarlo/am_pslsq.h) with the measured error floor and decay
 * next to the exact fresh-gradient values and Dutta et al.'s K-sync bound
 * (theory/am_lsqbound.h). With --model: the variants training a network on a real data set
 * (studies/am_wallclock_nn.h); with --sweep: the least-squares study over worker counts,
 * runtime laws and seeds (studies/am_wallclock_sweep.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../studies/am_nnstale.h"
#include "../montecarlo/am_wallclock.h"
#include "../studies/am_wallclock_nn.h"
#include "../studies/am_wallclock_sweep.h"
#include "cli_common.h"
#include "commands.h"
#include "wallclock_cli.h"

static const cli_opt OPT_OBJ = {"objective", "NAME", "lsq",
                                "lsq (strongly convex least squares) or pca (Async-MSGD)"};
static const cli_opt OPT_LR_W = {"lr", "SPEC", "const",
                                 "const (--eta) or adaptive:C:MAX, eta_j = min(C/|w_j - "
                                 "w_tau(j)|^2, MAX)"};
static const cli_opt OPT_REP_W = {"replicas", "R", "200", "independent replicas"};

static const cli_opt *const wall_opts[] = {
    &OPT_OBJ,  &OPT_WK,      &OPT_RT,       &OPT_VARS,     &OPT_UPD,    &OPT_ETA_W,
    &OPT_LR_W, &OPT_DIM,     &OPT_SPECTRUM, &OPT_DIST,     &OPT_ROTATE, &OPT_MU,
    &OPT_INIT, &OPT_LMAX,    &OPT_LMIN,     &OPT_SIGMA,    &OPT_GRID_W, &OPT_REP_W,
    &OPT_SEED, &OPT_THREADS, &OPT_FORMAT,   &OPT_PROGRESS, &OPT_OUTPUT, NULL};

/* A variant as given on the command line (its spec is the CSV's variant column). */
typedef struct {
    char spec[48];
} wc_spec;

/* The flags as parsed: the study's params and what the output repeats. */
typedef struct {
    const char *obj, *lr, *vl;
    int pca, json;
    am_wallclock_params wp;
    wc_spec *specs;
    am_problem *prob;
} wc_config;

/* --lr: const, or adaptive:C:MAX with C > 0 and MAX > 0 into lr_c and lr_max. */
static void wallclock_lr(const char *lr, double *lr_c, double *lr_max)
{
    if (strncmp(lr, "adaptive:", 9) == 0) {
        char *copy = strdup(lr + 9), *colon = strchr(copy, ':');
        if (!colon || (*colon = 0, cli_parse_double(copy, lr_c)) ||
            cli_parse_double(colon + 1, lr_max) || !(*lr_c > 0) || !(*lr_max > 0))
            cli_usage_error("--lr adaptive:C:MAX needs C > 0 and MAX > 0, got '%s'", lr);
        free(copy);
    } else if (strcmp(lr, "const") != 0) {
        cli_usage_error("--lr must be const or adaptive:C:MAX, got '%s'", lr);
    }
}

/* --variants (NAME or NAME:K, K in [1, P]) into c->wp and the specs as given. */
static void wallclock_variants(wc_config *c)
{
    char err[256];
    const size_t p = c->wp.workers;
    size_t nv = 0, cap = 1;
    for (const char *ch = c->vl; *ch; ch++)
        cap += *ch == ',';
    am_wallclock_variant *vars = calloc(cap, sizeof *vars);
    wc_spec *specs = calloc(cap, sizeof *specs);
    if (!vars || !specs) cli_runtime_error("out of memory");
    char *copy = strdup(c->vl), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        am_wallclock_variant *w = &vars[nv];
        if (am_runtime_variant_parse_spec(tok, &w->variant, &w->k, err, sizeof err))
            cli_usage_error("--variants %s", err);
        if (am_runtime_variant_check(w->variant, p, w->k))
            cli_usage_error("--variants K must be in [1, %zu] (the workers), got '%s'", p, tok);
        snprintf(specs[nv++].spec, sizeof specs[0].spec, "%s", tok);
    }
    free(copy);
    if (nv != cap) cli_usage_error("--variants has an empty entry in '%s'", c->vl);
    c->wp.variants = vars;
    c->wp.nvariants = nv;
    c->specs = specs;
}

/* The flags of the objective: the problem of pca, or the least-squares flags (the pca flags
 * refused with lsq). */
static void wallclock_objective(const cli_args *a, wc_config *c)
{
    char err[256];
    am_wallclock_params *wp = &c->wp;
    if (c->pca) {
        c->prob = cli_problem(a);
        wp->problem = c->prob;
        wp->mu = cli_double(a, "mu", 0, 1, 0, 1);
        if (am_msgd_init_parse(cli_str(a, "init"), c->prob->dim, &wp->init, err, sizeof err))
            cli_usage_error("--init: %s", err);
    } else {
        /* the Async-MSGD flags apply to --objective pca only: refused, not silently ignored */
        static const char *const pca_only[] = {"mu", "spectrum", "init", "dist", "rotate"};
        for (size_t i = 0; i < sizeof pca_only / sizeof *pca_only; i++)
            if (cli_given(a, pca_only[i]))
                cli_usage_error("--%s applies to --objective pca only", pca_only[i]);
        wp->dim = (size_t)cli_int(a, "dim", 2, 100000); /* as --help states: d >= 2 */
        wp->lmax = cli_double(a, "lmax", 0, 1e12, 1, 0);
        wp->lmin = cli_double(a, "lmin", 0, wp->lmax, 1, 0);
        wp->sigma = cli_double(a, "sigma", 0, 1e12, 0, 0);
    }
}

/* Every flag into c (--format checked before --variants); exits 2 on bad usage. */
static void wallclock_parse(const cli_args *a, wc_config *c)
{
    char err[256];
    memset(c, 0, sizeof *c);
    am_wallclock_params *wp = &c->wp;
    *wp = am_wallclock_params_default();
    c->obj = cli_str(a, "objective");
    c->pca = strcmp(c->obj, "pca") == 0;
    if (!c->pca && strcmp(c->obj, "lsq") != 0)
        cli_usage_error("--objective must be lsq or pca, got '%s'", c->obj);
    wp->workers = (size_t)cli_int(a, "workers", 1, 100000);
    if (am_runtime_parse(cli_str(a, "runtime"), &wp->runtime, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    wp->eta = cli_double(a, "eta", 0, 1e6, 1, 0);
    c->lr = cli_str(a, "lr");
    wallclock_lr(c->lr, &wp->lr_c, &wp->lr_max);
    wp->updates = (uint64_t)cli_int(a, "updates", 1, 1000000000LL);
    wp->ngrid = (size_t)cli_int(a, "grid", 2, 100000);
    wp->replicas = (size_t)cli_int(a, "replicas", 2, 100000000LL);
    wp->seed = cli_u64(a, "seed");
    wp->threads = (int)cli_int(a, "threads", 0, 4096);
    c->json = cli_json(a);
    c->vl = cli_str(a, "variants");
    wallclock_variants(c);
    wp->objective = c->pca ? AM_WALLCLOCK_PCA : AM_WALLCLOCK_LSQ;
    wallclock_objective(a, c);
}

/* Refuses a run above the work limit: every update visits the P learners of the server and
 * the d coordinates. */
static void wallclock_work(const cli_args *a, const wc_config *c)
{
    const am_wallclock_params *wp = &c->wp;
    size_t d = c->pca ? c->prob->dim : wp->dim;
    char how[160];
    snprintf(how, sizeof how, "%zu replicas x %llu updates x (%zu learners + d %zu) x %zu variants",
             wp->replicas, (unsigned long long)wp->updates, wp->workers, d, wp->nvariants);
    cli_work_check(a,
                   (double)wp->replicas * (double)wp->updates * (double)(wp->workers + d) *
                       (double)wp->nvariants,
                   how);
}

static void wallclock_csv(FILE *f, const wc_config *c, const am_wallclock_result *res)
{
    fputs("variant,update,wallclock_mean,wallclock_sem,err_mean,err_sem,alive\n", f);
    for (size_t i = 0; i < c->wp.nvariants; i++)
        for (size_t g = 0; g < c->wp.ngrid; g++) {
            const am_wallclock_curve *r = &res->curves[i];
            fprintf(f, "%s,%llu,", c->specs[i].spec, (unsigned long long)res->update[g]);
            const double v[4] = {r->wallclock_mean[g], r->wallclock_sem[g], r->err_mean[g],
                                 r->err_sem[g]};
            wallclock_cli_csv_values(f, v, 4);
            fprintf(f, "%zu\n", r->alive[g]);
        }
}

/* The JSON params: every option as resolved. */
static json_t *wallclock_json_params(const wc_config *c)
{
    const am_wallclock_params *wp = &c->wp;
    json_t *params = json_object();
    json_object_set_new(params, "objective", json_string(c->obj));
    json_object_set_new(params, "workers", json_integer((json_int_t)wp->workers));
    char buf[128];
    am_runtime_format(&wp->runtime, buf, sizeof buf);
    json_object_set_new(params, "runtime", json_string(buf));
    json_object_set_new(params, "variants", json_string(c->vl));
    json_object_set_new(params, "updates", json_integer((json_int_t)wp->updates));
    json_object_set_new(params, "eta", json_real(wp->eta));
    json_object_set_new(params, "lr", json_string(c->lr));
    if (c->pca) {
        cli_params_problem(params, c->prob);
        json_object_set_new(params, "mu", json_real(wp->mu));
        am_msgd_init_format(&wp->init, buf, sizeof buf);
        json_object_set_new(params, "init", json_string(buf));
    } else {
        json_object_set_new(params, "dim", json_integer((json_int_t)wp->dim));
        json_object_set_new(params, "lmax", json_real(wp->lmax));
        json_object_set_new(params, "lmin", json_real(wp->lmin));
        json_object_set_new(params, "sigma", json_real(wp->sigma));
    }
    json_object_set_new(params, "grid", json_integer((json_int_t)wp->ngrid));
    json_object_set_new(params, "replicas", json_integer((json_int_t)wp->replicas));
    wallclock_cli_json_seed_threads(params, wp->seed, wp->threads);
    return params;
}

/* One variant's curves and, on least squares, its floors and decay rates. */
static json_t *wallclock_json_variant(const wc_config *c, const am_wallclock_result *res,
                                      const am_wallclock_curve *w)
{
    const size_t ngrid = c->wp.ngrid;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(am_runtime_variant_name(w->variant)));
    json_object_set_new(o, "K", json_integer((json_int_t)w->batch));
    json_t *up = json_array();
    for (size_t g = 0; g < ngrid; g++)
        json_array_append_new(up, json_integer((json_int_t)res->update[g]));
    json_object_set_new(o, "update", up);
    json_object_set_new(o, "wallclock_mean", cli_json_doubles(w->wallclock_mean, ngrid));
    json_object_set_new(o, "wallclock_sem", cli_json_doubles(w->wallclock_sem, ngrid));
    json_object_set_new(o, "err_mean", cli_json_doubles(w->err_mean, ngrid));
    json_object_set_new(o, "err_sem", cli_json_doubles(w->err_sem, ngrid));
    json_object_set_new(o, "diverged", json_integer((json_int_t)w->diverged));
    if (!c->pca) {
        const wallclock_cli_key lsq_keys[] = {
            {"floor_measured", w->floor_measured},
            {"floor_measured_sem", w->floor_measured_sem},
            {"floor_exact", w->floor_exact},
            {"floor_dutta", w->floor_dutta},
            {"decay_measured", w->decay_measured},
            {"decay_exact", w->decay_exact},
            {"decay_dutta", w->decay_dutta},
            {"p0", w->p0},
            {"gamma", w->gamma},
            {"decay_dutta_async", w->decay_dutta_async},
            {"floor_dutta_async", w->floor_dutta_async},
        };
        wallclock_cli_json_keys(o, lsq_keys, sizeof lsq_keys / sizeof lsq_keys[0]);
    }
    return o;
}

/* Writes the result (CSV or JSON) through --output. */
static void wallclock_write(const cli_args *a, const wc_config *c, const am_wallclock_result *res)
{
    cli_out out;
    FILE *f = cli_out_begin(&out, a);
    if (!c->json) {
        wallclock_csv(f, c, res);
    } else {
        json_t *root = cli_json_root("wallclock", wallclock_json_params(c));
        json_t *arr = json_array();
        for (size_t i = 0; i < c->wp.nvariants; i++)
            json_array_append_new(arr, wallclock_json_variant(c, res, &res->curves[i]));
        json_object_set_new(root, "variants", arr);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
}

int cmd_wallclock(int argc, char **argv)
{
    /* --model: a network on real data; --sweep: least squares over P, laws and seeds */
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--model") == 0 || strncmp(argv[i], "--model=", 8) == 0)
            return cmd_wallclock_model(argc, argv);
        if (strcmp(argv[i], "--sweep") == 0) return cmd_wallclock_sweep(argc, argv);
    }
    cli_args a;
    cli_parse(&a, "wallclock",
              "Error against wall-clock time of parameter-server variants on streaming least\n"
              "squares (with measured error floors and decay rates next to the exact fresh-\n"
              "gradient values and Dutta et al.'s K-sync bound) or on streaming PCA.\n"
              "With --model SPEC: the variants training a network on real data (amsgd\n"
              "wallclock --model mlr --help). With --sweep: least squares over P, runtime laws\n"
              "and seeds (amsgd wallclock --sweep --help).",
              wall_opts, argc, argv);
    wc_config c;
    wallclock_parse(&a, &c);
    wallclock_work(&a, &c);
    char err[256];
    am_wallclock_result res;
    cli_progress_start(&a, c.wp.nvariants > 1); /* an ensemble per variant */
    am_status st = am_wallclock_run(&c.wp, &res, err, sizeof err);
    cli_progress_end();
    if (st) cli_runtime_error("wallclock: %s", err);
    for (size_t i = 0; i < c.wp.nvariants; i++)
        if (res.curves[i].diverged)
            fprintf(stderr,
                    "amsgd: warning: %zu of %zu replicas of %s diverged; the means are over the "
                    "survivors (column alive), %s where none is left\n",
                    res.curves[i].diverged, c.wp.replicas, c.specs[i].spec,
                    c.json ? "null" : "nan");
    wallclock_write(&a, &c, &res);
    am_wallclock_result_free(&res);
    free((void *)c.wp.variants);
    free(c.specs);
    am_problem_free(c.prob);
    return 0;
}
