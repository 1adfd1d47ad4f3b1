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
    char err[256];
    const char *obj = cli_str(&a, "objective");
    int pca = strcmp(obj, "pca") == 0;
    if (!pca && strcmp(obj, "lsq") != 0)
        cli_usage_error("--objective must be lsq or pca, got '%s'", obj);
    size_t p = (size_t)cli_int(&a, "workers", 1, 100000);
    am_runtime rt;
    if (am_runtime_parse(cli_str(&a, "runtime"), &rt, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    double eta = cli_double(&a, "eta", 0, 1e6, 1, 0);
    double lr_c = 0, lr_max = 0;
    const char *lr = cli_str(&a, "lr");
    if (strncmp(lr, "adaptive:", 9) == 0) {
        char *copy = strdup(lr + 9), *colon = strchr(copy, ':');
        if (!colon || (*colon = 0, cli_parse_double(copy, &lr_c)) ||
            cli_parse_double(colon + 1, &lr_max) || !(lr_c > 0) || !(lr_max > 0))
            cli_usage_error("--lr adaptive:C:MAX needs C > 0 and MAX > 0, got '%s'", lr);
        free(copy);
    } else if (strcmp(lr, "const") != 0) {
        cli_usage_error("--lr must be const or adaptive:C:MAX, got '%s'", lr);
    }
    uint64_t n = (uint64_t)cli_int(&a, "updates", 1, 1000000000LL);
    size_t ngrid = (size_t)cli_int(&a, "grid", 2, 100000);
    size_t replicas = (size_t)cli_int(&a, "replicas", 2, 100000000LL);
    uint64_t seed = cli_u64(&a, "seed");
    int threads = (int)cli_int(&a, "threads", 0, 4096);
    int json = cli_json(&a);
    /* variants */
    const char *vl = cli_str(&a, "variants");
    size_t nv = 0, cap = 1;
    for (const char *c = vl; *c; c++)
        cap += *c == ',';
    am_wallclock_variant *vars = calloc(cap, sizeof *vars);
    wc_spec *specs = calloc(cap, sizeof *specs);
    if (!vars || !specs) cli_runtime_error("out of memory");
    char *copy = strdup(vl), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        am_wallclock_variant *w = &vars[nv];
        if (am_runtime_variant_parse_spec(tok, &w->variant, &w->k, err, sizeof err))
            cli_usage_error("--variants %s", err);
        if (am_runtime_variant_check(w->variant, p, w->k))
            cli_usage_error("--variants K must be in [1, %zu] (the workers), got '%s'", p, tok);
        snprintf(specs[nv++].spec, sizeof specs[0].spec, "%s", tok);
    }
    free(copy);
    if (nv != cap) cli_usage_error("--variants has an empty entry in '%s'", vl);

    am_wallclock_params wp = am_wallclock_params_default();
    wp.objective = pca ? AM_WALLCLOCK_PCA : AM_WALLCLOCK_LSQ;
    wp.workers = p;
    wp.runtime = rt;
    wp.variants = vars;
    wp.nvariants = nv;
    wp.updates = n;
    wp.ngrid = ngrid;
    wp.replicas = replicas;
    wp.seed = seed;
    wp.threads = threads;
    wp.eta = eta;
    wp.lr_c = lr_c;
    wp.lr_max = lr_max;
    am_problem *prob = NULL;
    if (pca) {
        prob = cli_problem(&a);
        wp.problem = prob;
        wp.mu = cli_double(&a, "mu", 0, 1, 0, 1);
        if (am_msgd_init_parse(cli_str(&a, "init"), prob->dim, &wp.init, err, sizeof err))
            cli_usage_error("--init: %s", err);
    } else {
        /* the Async-MSGD flags apply to --objective pca only: refused, not silently ignored */
        static const char *const pca_only[] = {"mu", "spectrum", "init", "dist", "rotate"};
        for (size_t i = 0; i < sizeof pca_only / sizeof *pca_only; i++)
            if (cli_given(&a, pca_only[i]))
                cli_usage_error("--%s applies to --objective pca only", pca_only[i]);
        wp.dim = (size_t)cli_int(&a, "dim", 2, 100000); /* as --help states: d >= 2 */
        wp.lmax = cli_double(&a, "lmax", 0, 1e12, 1, 0);
        wp.lmin = cli_double(&a, "lmin", 0, wp.lmax, 1, 0);
        wp.sigma = cli_double(&a, "sigma", 0, 1e12, 0, 0);
    }
    {
        /* every update visits the P learners of the server and the d coordinates */
        size_t d = pca ? prob->dim : wp.dim;
        char how[160];
        snprintf(how, sizeof how,
                 "%zu replicas x %llu updates x (%zu learners + d %zu) x %zu variants", replicas,
                 (unsigned long long)n, p, d, nv);
        cli_work_check(&a, (double)replicas * (double)n * (double)(p + d) * (double)nv, how);
    }
    am_wallclock_result res;
    cli_progress_start(&a, nv > 1); /* an ensemble per variant */
    am_status st = am_wallclock_run(&wp, &res, err, sizeof err);
    cli_progress_end();
    if (st) cli_runtime_error("wallclock: %s", err);
    const uint64_t *ks = res.update;
    for (size_t i = 0; i < nv; i++)
        if (res.curves[i].diverged)
            fprintf(stderr,
                    "amsgd: warning: %zu of %zu replicas of %s diverged; the means are over the "
                    "survivors (column alive), %s where none is left\n",
                    res.curves[i].diverged, replicas, specs[i].spec, json ? "null" : "nan");

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (!json) {
        fputs("variant,update,wallclock_mean,wallclock_sem,err_mean,err_sem,alive\n", f);
        for (size_t i = 0; i < nv; i++)
            for (size_t g = 0; g < ngrid; g++) {
                const am_wallclock_curve *r = &res.curves[i];
                fprintf(f, "%s,%llu,", specs[i].spec, (unsigned long long)ks[g]);
                const double v[4] = {r->wallclock_mean[g], r->wallclock_sem[g], r->err_mean[g],
                                     r->err_sem[g]};
                for (int c = 0; c < 4; c++) {
                    cli_csv_double(f, v[c]);
                    fputc(',', f);
                }
                fprintf(f, "%zu\n", r->alive[g]);
            }
    } else {
        json_t *params = json_object();
        json_object_set_new(params, "objective", json_string(obj));
        json_object_set_new(params, "workers", json_integer((json_int_t)p));
        char buf[128];
        am_runtime_format(&rt, buf, sizeof buf);
        json_object_set_new(params, "runtime", json_string(buf));
        json_object_set_new(params, "variants", json_string(vl));
        json_object_set_new(params, "updates", json_integer((json_int_t)n));
        json_object_set_new(params, "eta", json_real(eta));
        json_object_set_new(params, "lr", json_string(lr));
        if (pca) {
            cli_params_problem(params, prob);
            json_object_set_new(params, "mu", json_real(wp.mu));
            am_msgd_init_format(&wp.init, buf, sizeof buf);
            json_object_set_new(params, "init", json_string(buf));
        } else {
            json_object_set_new(params, "dim", json_integer((json_int_t)wp.dim));
            json_object_set_new(params, "lmax", json_real(wp.lmax));
            json_object_set_new(params, "lmin", json_real(wp.lmin));
            json_object_set_new(params, "sigma", json_real(wp.sigma));
        }
        json_object_set_new(params, "grid", json_integer((json_int_t)ngrid));
        json_object_set_new(params, "replicas", json_integer((json_int_t)replicas));
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
        json_object_set_new(params, "seed", json_string(buf));
        json_object_set_new(params, "threads", json_integer(threads));
        json_t *root = cli_json_root("wallclock", params);
        json_t *arr = json_array();
        for (size_t i = 0; i < nv; i++) {
            const am_wallclock_curve *w = &res.curves[i];
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(am_runtime_variant_name(w->variant)));
            json_object_set_new(o, "K", json_integer((json_int_t)w->batch));
            json_t *up = json_array();
            for (size_t g = 0; g < ngrid; g++)
                json_array_append_new(up, json_integer((json_int_t)ks[g]));
            json_object_set_new(o, "update", up);
            json_object_set_new(o, "wallclock_mean", cli_json_doubles(w->wallclock_mean, ngrid));
            json_object_set_new(o, "wallclock_sem", cli_json_doubles(w->wallclock_sem, ngrid));
            json_object_set_new(o, "err_mean", cli_json_doubles(w->err_mean, ngrid));
            json_object_set_new(o, "err_sem", cli_json_doubles(w->err_sem, ngrid));
            json_object_set_new(o, "diverged", json_integer((json_int_t)w->diverged));
            if (!pca) {
                const struct {
                    const char *key;
                    double value;
                } lsq_keys[] = {
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
                for (size_t k = 0; k < sizeof lsq_keys / sizeof lsq_keys[0]; k++)
                    json_object_set_new(o, lsq_keys[k].key, cli_json_number(lsq_keys[k].value));
            }
            json_array_append_new(arr, o);
        }
        json_object_set_new(root, "variants", arr);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
    am_wallclock_result_free(&res);
    free(vars);
    free(specs);
    am_problem_free(prob);
    return 0;
}
