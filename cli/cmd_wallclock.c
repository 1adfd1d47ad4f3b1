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

static const cli_opt OPT_OBJ = {"objective", "NAME", "lsq",
                                "lsq (strongly convex least squares) or pca (Async-MSGD)"};
static const cli_opt OPT_WK = {"workers", "P", "8", "learners P >= 1"};
static const cli_opt OPT_RT = {"runtime", "DIST", "exp:1",
                               "learner runtime: exp:RATE, shiftexp:DELTA:RATE, "
                               "pareto:ALPHA:SCALE, uniform:A:B, const:C"};
static const cli_opt OPT_VARS = {"variants", "LIST",
                                 "sync,k-sync:4,k-batch-sync:4,async,k-async:4,k-batch-async:4",
                                 "comma list of variants (NAME or NAME:K)"};
static const cli_opt OPT_UPD = {"updates", "N", "2000", "server updates per replica"};
static const cli_opt OPT_ETA_W = {"eta", "E", "0.02", "step size eta > 0"};
static const cli_opt OPT_LR_W = {"lr", "SPEC", "const",
                                 "const (--eta) or adaptive:C:MAX, eta_j = min(C/|w_j - "
                                 "w_tau(j)|^2, MAX)"};
static const cli_opt OPT_LMAX = {"lmax", "LMAX", "2", "lsq: largest eigenvalue L of H"};
static const cli_opt OPT_LMIN = {"lmin", "LMIN", "0.5", "lsq: smallest eigenvalue c of H"};
static const cli_opt OPT_SIGMA = {"sigma", "SIGMA", "0.5", "lsq: noise standard deviation"};
static const cli_opt OPT_GRID_W = {"grid", "N", "50", "saved points per curve"};
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

static int wallclock_model(int argc, char **argv);
static int wallclock_sweep(int argc, char **argv);

int cmd_wallclock(int argc, char **argv)
{
    /* --model: a network on real data; --sweep: least squares over P, laws and seeds */
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--model") == 0 || strncmp(argv[i], "--model=", 8) == 0)
            return wallclock_model(argc, argv);
        if (strcmp(argv[i], "--sweep") == 0) return wallclock_sweep(argc, argv);
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
    cli_progress_start(&a);
    am_status st = am_wallclock_run(&wp, &res, err, sizeof err);
    cli_progress_end();
    if (st) cli_runtime_error("wallclock: %s", err);
    const uint64_t *ks = res.update;

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

/* ---- shared by --model and --sweep --------------------------------------------------------- */

/* The mean of a statistic, NaN without values. */
static double st_mean(const am_stats *s)
{
    return s->n > 0 ? s->mean : NAN;
}

/* Parses the comma list of variants of --variants: NAME or NAME:K, and with allow_div also
 * NAME:P/D (K = max(1, P / D) per worker count); K checked against every P of ps[0..np-1].
 * Exits 2 on a bad entry. */
static am_wallclock_sweep_variant *variant_list(const char *vl, const size_t *ps, size_t np,
                                                int allow_div, size_t *nv_out)
{
    char err[256];
    size_t nv = 0, cap = 1;
    for (const char *c = vl; *c; c++)
        cap += *c == ',';
    am_wallclock_sweep_variant *vars = calloc(cap, sizeof *vars);
    char *copy = strdup(vl), *save = NULL;
    if (!vars || !copy) cli_runtime_error("out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        am_wallclock_sweep_variant *w = &vars[nv++];
        char *div = allow_div ? strstr(tok, ":P/") : NULL;
        if (div) {
            char *end;
            long long d = strtoll(div + 3, &end, 10);
            if (end == div + 3 || *end || d < 1 || d > 100000)
                cli_usage_error("--variants expected NAME:P/D with an integer D >= 1, got '%s'",
                                tok);
            w->k_div = (size_t)d;
            *div = 0;
            if (am_runtime_variant_parse_spec(tok, &w->variant, &w->k, err, sizeof err) == AM_OK)
                cli_usage_error("--variants '%s' takes no K", tok);
            char name[64];
            snprintf(name, sizeof name, "%s:1", tok);
            if (am_runtime_variant_parse_spec(name, &w->variant, &w->k, err, sizeof err))
                cli_usage_error("--variants %s", err);
            *div = ':';
        } else if (am_runtime_variant_parse_spec(tok, &w->variant, &w->k, err, sizeof err)) {
            cli_usage_error("--variants %s", err);
        }
        for (size_t i = 0; i < np; i++) {
            size_t k = am_wallclock_sweep_k(w, ps[i]);
            if (am_runtime_variant_check(w->variant, ps[i], k))
                cli_usage_error("--variants '%s' gives K = %zu, which must be in [1, %zu] (the "
                                "workers)",
                                tok, k, ps[i]);
        }
    }
    free(copy);
    if (nv != cap) cli_usage_error("--variants has an empty entry in '%s'", vl);
    *nv_out = nv;
    return vars;
}

/* The spec of a variant with its K ("k-sync:4", "async"). */
static void variant_spec(am_variant v, size_t k, char *buf, size_t len)
{
    int takes = v != AM_VARIANT_SYNC && v != AM_VARIANT_ASYNC;
    if (takes)
        snprintf(buf, len, "%s:%zu", am_runtime_variant_name(v), k);
    else
        snprintf(buf, len, "%s", am_runtime_variant_name(v));
}

/* ---- --model: the variants training a network ---------------------------------------------- */

static const cli_opt OPT_NN_MODEL = {
    "model", "SPEC", NULL,
    "network: mlr, mlp:W1,W2,... (hidden widths, e.g. mlp:64), or cnn (LeNet-like; images "
    "only)"};
static const cli_opt OPT_NN_DATA = {
    "data", "SPEC", "fashion-mnist",
    "fashion-mnist (package dataset-fashion-mnist), idx:DIR, FILE.csv or TRAIN.csv,TEST.csv"};
static const cli_opt OPT_NN_TIME = {
    "time", "T", "500", "wall-clock budget, in the units of --runtime (exp:1: E[X] = 1)"};
static const cli_opt OPT_NN_GRID = {"grid", "N", "26",
                                    "evaluation times T g / (N - 1), g = 0..N-1"};
static const cli_opt OPT_NN_BATCH = {"batch", "N", "32", "rows per learner minibatch"};
static const cli_opt OPT_NN_OPT = {
    "optimizer", "NAME", "sgd",
    "server step: sgd, momentum, nesterov, adam, rmsprop or adagrad (on the mean gradient)"};
static const cli_opt OPT_NN_LR = {"lr", "E", NULL,
                                  "step (default: sgd 0.1, momentum and nesterov 0.01, adam and "
                                  "rmsprop 0.001, adagrad 0.05)"};
static const cli_opt OPT_NN_MOM = {"momentum", "M", "0.9", "momentum of momentum/nesterov"};
static const cli_opt OPT_NN_SEEDS = {"seeds", "N", "5",
                                     "independent runs per variant (the error bands)"};
static const cli_opt OPT_NN_EVAL = {"eval-rows", "N", "2000",
                                    "test rows of each evaluation (0 = all)"};
static const cli_opt OPT_NN_TARGET = {"target-error", "E", "0.25",
                                      "test error of time_to_target, in (0, 1)"};
static const cli_opt OPT_NN_QUICK = {
    "quick", NULL, NULL,
    "a smaller run: --time 150 --seeds 3 --grid 16 --eval-rows 1000 (given flags win)"};

static const cli_opt *const wall_nn_opts[] = {
    &OPT_NN_MODEL, &OPT_NN_DATA,  &OPT_WK,       &OPT_RT,       &OPT_VARS,
    &OPT_NN_TIME,  &OPT_NN_GRID,  &OPT_NN_BATCH, &OPT_NN_OPT,   &OPT_NN_LR,
    &OPT_NN_MOM,   &OPT_NN_SEEDS, &OPT_NN_EVAL,  &OPT_NN_QUICK, &OPT_NN_TARGET,
    &OPT_SEED,     &OPT_THREADS,  &OPT_FORMAT,   &OPT_OUTPUT,   NULL};

static int wallclock_model(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "wallclock",
              "With --model: Dutta et al.'s six parameter-server variants training a network on\n"
              "a real data set. P simulated learners with --runtime draw minibatch gradients on\n"
              "the iterate they read when they started; each server update applies the mean of\n"
              "its gradients with --optimizer. Prints the test error at fixed wall-clock times\n"
              "with its standard error over --seeds, per variant; JSON adds the measured time\n"
              "per update next to Dutta's closed form, the fresh-gradient fraction, the error\n"
              "floor and the time to --target-error (docs/wallclock.md).",
              wall_nn_opts, argc, argv);
    char err[1024];
    const char *model = cli_str(&a, "model");
    if (!model) cli_usage_error("--model needs a value (mlr, mlp:W1,... or cnn)");
    int quick = cli_flag(&a, "quick");
    size_t p = (size_t)cli_int(&a, "workers", 1, 100000);
    am_wallclock_nn_params wp = am_wallclock_nn_params_default();
    wp.workers = p;
    if (am_runtime_parse(cli_str(&a, "runtime"), &wp.runtime, err, sizeof err))
        cli_usage_error("--runtime %s", err);
    const char *vl = cli_str(&a, "variants");
    am_wallclock_sweep_variant *sv = variant_list(vl, &p, 1, 1, &wp.nvariants);
    am_wallclock_variant *vars = calloc(wp.nvariants, sizeof *vars);
    if (!vars) cli_runtime_error("out of memory");
    for (size_t i = 0; i < wp.nvariants; i++) {
        vars[i].variant = sv[i].variant;
        vars[i].k = am_wallclock_sweep_k(&sv[i], p); /* NAME:P/D resolved for this P */
    }
    free(sv);
    wp.variants = vars;
    wp.time = quick && !cli_given(&a, "time") ? 150 : cli_double(&a, "time", 0, 1e12, 1, 0);
    wp.ngrid = quick && !cli_given(&a, "grid") ? 16 : (size_t)cli_int(&a, "grid", 2, 1000000);
    wp.batch = (size_t)cli_int(&a, "batch", 1, 100000);
    am_optim_kind kind;
    if (am_optim_parse(cli_str(&a, "optimizer"), &kind, err, sizeof err))
        cli_usage_error("--optimizer %s", err);
    wp.opt = am_optim_params_default(kind);
    wp.opt.mu = cli_double(&a, "momentum", 0, 1, 0, 1);
    wp.opt.lr =
        cli_given(&a, "lr") ? cli_double(&a, "lr", 0, 1e6, 1, 0) : am_nnstale_default_lr(kind);
    wp.seeds = quick && !cli_given(&a, "seeds") ? 3 : (size_t)cli_int(&a, "seeds", 1, 100000);
    wp.eval_rows = quick && !cli_given(&a, "eval-rows")
                       ? 1000
                       : (size_t)cli_int(&a, "eval-rows", 0, 1000000000LL);
    wp.target = cli_double(&a, "target-error", 0, 1, 1, 1);
    wp.seed = cli_u64(&a, "seed");
    wp.threads = (int)cli_int(&a, "threads", 0, 4096);
    int json = cli_json(&a);
    const char *data = cli_str(&a, "data");

    am_classset *train = NULL, *test = NULL;
    am_status st = am_classset_open(data, &train, &test, err, sizeof err);
    if (st == AM_ENOMEM) cli_runtime_error("--data %s", err);
    if (st) cli_usage_error("--data %s", err);
    am_nn *net = train->rows ? am_nn_alloc_image(model, train->rows, train->cols, train->classes,
                                                 &st, err, sizeof err)
                             : am_nn_alloc(model, train->d, train->classes, &st, err, sizeof err);
    if (!net) {
        if (st == AM_ENOMEM) cli_usage_error("--model %s (exceeds the memory limit)", err);
        cli_usage_error("--model %s", err);
    }
    am_wallclock_nn_result res;
    st = am_wallclock_nn_run(net, train, test, &wp, &res, err, sizeof err);
    if (st == AM_EINVAL) cli_usage_error("wallclock --model: %s", err);
    if (st) cli_runtime_error("wallclock --model: %s", err);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    char spec[64];
    if (!json) {
        fputs("variant,time,test_error,test_error_sem,updates_mean,alive\n", f);
        for (size_t i = 0; i < res.nvariants; i++) {
            const am_wallclock_nn_curve *c = &res.curves[i];
            variant_spec(c->variant, c->k, spec, sizeof spec);
            for (size_t g = 0; g < res.ngrid; g++) {
                fprintf(f, "%s,", spec);
                const double v[4] = {c->time[g], c->test_error[g], c->test_error_sem[g],
                                     c->updates_mean[g]};
                for (int k = 0; k < 4; k++) {
                    cli_csv_double(f, v[k]);
                    fputc(',', f);
                }
                fprintf(f, "%zu\n", c->alive[g]);
            }
        }
    } else {
        json_t *params = json_object();
        char buf[128];
        json_object_set_new(params, "model", json_string(am_nn_spec(net)));
        json_object_set_new(params, "data", json_string(data));
        json_object_set_new(params, "workers", json_integer((json_int_t)p));
        am_runtime_format(&wp.runtime, buf, sizeof buf);
        json_object_set_new(params, "runtime", json_string(buf));
        json_object_set_new(params, "variants", json_string(vl));
        json_object_set_new(params, "time", json_real(wp.time));
        json_object_set_new(params, "grid", json_integer((json_int_t)wp.ngrid));
        json_object_set_new(params, "batch", json_integer((json_int_t)wp.batch));
        json_object_set_new(params, "optimizer", json_string(am_optim_name(kind)));
        json_object_set_new(params, "lr", json_real(wp.opt.lr));
        json_object_set_new(params, "momentum", json_real(wp.opt.mu));
        json_object_set_new(params, "seeds", json_integer((json_int_t)wp.seeds));
        json_object_set_new(params, "eval_rows", json_integer((json_int_t)wp.eval_rows));
        json_object_set_new(params, "target_error", json_real(wp.target));
        json_object_set_new(params, "quick", json_boolean(quick));
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)wp.seed);
        json_object_set_new(params, "seed", json_string(buf));
        json_object_set_new(params, "threads", json_integer(wp.threads));
        json_t *root = cli_json_root("wallclock", params);
        json_t *arr = json_array();
        for (size_t i = 0; i < res.nvariants; i++) {
            const am_wallclock_nn_curve *c = &res.curves[i];
            json_t *o = json_object();
            variant_spec(c->variant, c->k, spec, sizeof spec);
            json_object_set_new(o, "name", json_string(am_runtime_variant_name(c->variant)));
            json_object_set_new(o, "variant", json_string(spec));
            json_object_set_new(o, "K", json_integer((json_int_t)c->batch));
            json_object_set_new(o, "time", cli_json_doubles(c->time, res.ngrid));
            json_object_set_new(o, "test_error", cli_json_doubles(c->test_error, res.ngrid));
            json_object_set_new(o, "test_error_sem",
                                cli_json_doubles(c->test_error_sem, res.ngrid));
            json_object_set_new(o, "updates_mean", cli_json_doubles(c->updates_mean, res.ngrid));
            json_t *al = json_array();
            for (size_t g = 0; g < res.ngrid; g++)
                json_array_append_new(al, json_integer((json_int_t)c->alive[g]));
            json_object_set_new(o, "alive", al);
            json_object_set_new(o, "diverged", json_integer((json_int_t)c->diverged));
            const struct {
                const char *key;
                double value;
            } keys[] = {
                {"time_per_update", st_mean(&c->time_per_update)},
                {"time_per_update_sem", am_stats_sem(&c->time_per_update)},
                {"time_per_update_dutta", c->time_per_update_dutta},
                {"p0", st_mean(&c->p0)},
                {"p0_sem", am_stats_sem(&c->p0)},
                {"p0_dutta", c->p0_dutta},
                {"mean_staleness", st_mean(&c->mean_staleness)},
                {"mean_staleness_sem", am_stats_sem(&c->mean_staleness)},
                {"floor_measured", st_mean(&c->floor)},
                {"floor_measured_sem", am_stats_sem(&c->floor)},
                {"time_to_target", st_mean(&c->time_to_target)},
                {"time_to_target_sem", am_stats_sem(&c->time_to_target)},
            };
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                json_object_set_new(o, keys[k].key, cli_json_number(keys[k].value));
            json_object_set_new(o, "reached", json_integer((json_int_t)c->reached));
            json_array_append_new(arr, o);
        }
        json_object_set_new(root, "variants", arr);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
    am_wallclock_nn_result_free(&res);
    free(vars);
    am_nn_free(net);
    am_classset_free(train);
    am_classset_free(test);
    return 0;
}

/* ---- --sweep: least squares over P, laws and seeds ----------------------------------------- */

static const cli_opt OPT_SW = {"sweep", NULL, NULL,
                               "least squares over --workers-list, --laws and --seeds"};
static const cli_opt OPT_SW_WL = {"workers-list", "LIST", "2,4,8,16", "comma list of P"};
static const cli_opt OPT_SW_LAWS = {"laws", "LIST", "exp:1,shiftexp:1:1,pareto:2.5:1",
                                    "comma list of learner runtime laws (as --runtime)"};
static const cli_opt OPT_SW_VARS = {
    "variants", "LIST", "sync,k-sync:P/2,k-batch-sync:P/2,async,k-async:P/2,k-batch-async:P/2",
    "comma list of NAME, NAME:K or NAME:P/D (K = max(1, P/D) for each P)"};
static const cli_opt OPT_SW_SEEDS = {"seeds", "N", "5",
                                     "seeds per cell (keys seed .. seed + N - 1), N >= 2"};
static const cli_opt OPT_SW_REP = {"replicas", "R", "100", "independent replicas per seed"};
static const cli_opt OPT_SW_QUICK = {
    "quick", NULL, NULL, "a smaller run: --seeds 3 --replicas 50 --updates 1000 (given flags win)"};

static const cli_opt *const wall_sw_opts[] = {
    &OPT_SW,   &OPT_SW_WL,   &OPT_SW_LAWS, &OPT_SW_VARS, &OPT_SW_SEEDS, &OPT_UPD,    &OPT_ETA_W,
    &OPT_DIM,  &OPT_LMAX,    &OPT_LMIN,    &OPT_SIGMA,   &OPT_GRID_W,   &OPT_SW_REP, &OPT_SW_QUICK,
    &OPT_SEED, &OPT_THREADS, &OPT_FORMAT,  &OPT_OUTPUT,  NULL};

static int wallclock_sweep(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "wallclock",
              "With --sweep: the least-squares wallclock study for every P of --workers-list,\n"
              "every runtime law of --laws and --seeds seeds. Prints per (law, P, variant) the\n"
              "measured time per update, error floor, decay, fresh fraction p0 and drift gamma\n"
              "with their standard errors over the seeds, next to Dutta et al.'s time per\n"
              "update, the exact fresh-gradient floor, the K-sync floor and the async bound\n"
              "(docs/wallclock.md).",
              wall_sw_opts, argc, argv);
    char err[512];
    int quick = cli_flag(&a, "quick");
    size_t nw, nl = 0;
    double *wd = cli_double_list(&a, "workers-list", &nw);
    size_t *ws = malloc(nw * sizeof *ws);
    if (!ws) cli_runtime_error("out of memory");
    for (size_t i = 0; i < nw; i++) {
        if (!cli_is_integer(wd[i], 1, 4096))
            cli_usage_error("--workers-list values must be integers in [1, 4096], got '%s'",
                            cli_str(&a, "workers-list"));
        ws[i] = (size_t)wd[i];
    }
    free(wd);
    const char *ll = cli_str(&a, "laws");
    size_t cap = 1;
    for (const char *c = ll; *c; c++)
        cap += *c == ',';
    am_runtime *laws = calloc(cap, sizeof *laws);
    char *copy = strdup(ll), *save = NULL;
    if (!laws || !copy) cli_runtime_error("out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (am_runtime_parse(tok, &laws[nl++], err, sizeof err)) cli_usage_error("--laws %s", err);
    free(copy);
    if (nl != cap) cli_usage_error("--laws has an empty entry in '%s'", ll);
    const char *vl = cli_str(&a, "variants");
    am_wallclock_sweep sw;
    memset(&sw, 0, sizeof sw);
    sw.base = am_wallclock_params_default();
    sw.variants = variant_list(vl, ws, nw, 1, &sw.nvariants);
    sw.workers = ws;
    sw.nworkers = nw;
    sw.laws = laws;
    sw.nlaws = nl;
    sw.seeds = quick && !cli_given(&a, "seeds") ? 3 : (size_t)cli_int(&a, "seeds", 2, 100000);
    sw.base.updates = quick && !cli_given(&a, "updates")
                          ? 1000
                          : (uint64_t)cli_int(&a, "updates", 1, 1000000000LL);
    sw.base.eta = cli_double(&a, "eta", 0, 1e6, 1, 0);
    sw.base.dim = (size_t)cli_int(&a, "dim", 2, 100000);
    sw.base.lmax = cli_double(&a, "lmax", 0, 1e12, 1, 0);
    sw.base.lmin = cli_double(&a, "lmin", 0, sw.base.lmax, 1, 0);
    sw.base.sigma = cli_double(&a, "sigma", 0, 1e12, 0, 0);
    sw.base.ngrid = (size_t)cli_int(&a, "grid", 2, 100000);
    sw.base.replicas =
        quick && !cli_given(&a, "replicas") ? 50 : (size_t)cli_int(&a, "replicas", 2, 100000000LL);
    sw.base.seed = cli_u64(&a, "seed");
    sw.base.threads = (int)cli_int(&a, "threads", 0, 4096);
    int json = cli_json(&a);
    am_wallclock_sweep_result res;
    am_status st = am_wallclock_sweep_run(&sw, &res, err, sizeof err);
    if (st == AM_EINVAL) cli_usage_error("wallclock --sweep: %s", err);
    if (st) cli_runtime_error("wallclock --sweep: %s", err);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    json_t *arr = json_array();
    if (!json)
        fputs("law,workers,name,variant,K,seeds,time_per_update,time_per_update_sem,"
              "time_per_update_dutta,floor_measured,floor_measured_sem,floor_exact,floor_dutta,"
              "floor_dutta_async,floor_dutta_async_sem,decay_measured,decay_measured_sem,"
              "decay_exact,decay_dutta,decay_dutta_async,decay_dutta_async_sem,p0,p0_sem,"
              "p0_dutta,gamma,gamma_sem,diverged\n",
              f);
    for (size_t q = 0; q < res.ncells; q++) {
        const am_wallclock_sweep_cell *c = &res.cells[q];
        char law[128], spec[64];
        am_runtime_format(&laws[c->law], law, sizeof law);
        variant_spec(c->variant, c->k, spec, sizeof spec);
        const struct {
            const char *key;
            double value;
        } keys[] = {
            {"time_per_update", st_mean(&c->time_per_update)},
            {"time_per_update_sem", am_stats_sem(&c->time_per_update)},
            {"time_per_update_dutta", c->time_per_update_dutta},
            {"floor_measured", st_mean(&c->floor_measured)},
            {"floor_measured_sem", am_stats_sem(&c->floor_measured)},
            {"floor_exact", c->floor_exact},
            {"floor_dutta", c->floor_dutta},
            {"floor_dutta_async", st_mean(&c->floor_dutta_async)},
            {"floor_dutta_async_sem", am_stats_sem(&c->floor_dutta_async)},
            {"decay_measured", st_mean(&c->decay_measured)},
            {"decay_measured_sem", am_stats_sem(&c->decay_measured)},
            {"decay_exact", c->decay_exact},
            {"decay_dutta", c->decay_dutta},
            {"decay_dutta_async", st_mean(&c->decay_dutta_async)},
            {"decay_dutta_async_sem", am_stats_sem(&c->decay_dutta_async)},
            {"p0", st_mean(&c->p0)},
            {"p0_sem", am_stats_sem(&c->p0)},
            {"p0_dutta", c->p0_dutta},
            {"gamma", st_mean(&c->gamma)},
            {"gamma_sem", am_stats_sem(&c->gamma)},
        };
        const size_t nk = sizeof keys / sizeof keys[0];
        if (json) {
            json_t *o = json_object();
            json_object_set_new(o, "law", json_string(law));
            json_object_set_new(o, "workers", json_integer((json_int_t)c->workers));
            json_object_set_new(o, "name", json_string(am_runtime_variant_name(c->variant)));
            json_object_set_new(o, "variant", json_string(spec));
            json_object_set_new(o, "K", json_integer((json_int_t)c->batch));
            json_object_set_new(o, "seeds", json_integer((json_int_t)sw.seeds));
            for (size_t k = 0; k < nk; k++)
                json_object_set_new(o, keys[k].key, cli_json_number(keys[k].value));
            json_object_set_new(o, "diverged", json_integer((json_int_t)c->diverged));
            json_array_append_new(arr, o);
        } else {
            fprintf(f, "%s,%zu,%s,%s,%zu,%zu,", law, c->workers,
                    am_runtime_variant_name(c->variant), spec, c->batch, sw.seeds);
            for (size_t k = 0; k < nk; k++) {
                cli_csv_double(f, keys[k].value);
                fputc(',', f);
            }
            fprintf(f, "%zu\n", c->diverged);
        }
    }
    if (json) {
        json_t *params = json_object();
        char buf[64];
        json_object_set_new(params, "objective", json_string("lsq"));
        json_object_set_new(params, "workers_list", json_string(cli_str(&a, "workers-list")));
        json_object_set_new(params, "laws", json_string(ll));
        json_object_set_new(params, "variants", json_string(vl));
        json_object_set_new(params, "seeds", json_integer((json_int_t)sw.seeds));
        json_object_set_new(params, "updates", json_integer((json_int_t)sw.base.updates));
        json_object_set_new(params, "eta", json_real(sw.base.eta));
        json_object_set_new(params, "lr", json_string("const"));
        json_object_set_new(params, "dim", json_integer((json_int_t)sw.base.dim));
        json_object_set_new(params, "lmax", json_real(sw.base.lmax));
        json_object_set_new(params, "lmin", json_real(sw.base.lmin));
        json_object_set_new(params, "sigma", json_real(sw.base.sigma));
        json_object_set_new(params, "grid", json_integer((json_int_t)sw.base.ngrid));
        json_object_set_new(params, "replicas", json_integer((json_int_t)sw.base.replicas));
        json_object_set_new(params, "quick", json_boolean(quick));
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)sw.base.seed);
        json_object_set_new(params, "seed", json_string(buf));
        json_object_set_new(params, "threads", json_integer(sw.base.threads));
        json_t *root = cli_json_root("wallclock", params);
        json_object_set_new(root, "cells", arr);
        cli_out_json(f, root);
    } else {
        json_decref(arr);
    }
    cli_out_commit(&out);
    am_wallclock_sweep_result_free(&res);
    free((void *)sw.variants);
    free(laws);
    free(ws);
    return 0;
}
