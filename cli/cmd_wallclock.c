/*
 * cmd_wallclock.c -- `amsgd wallclock`: error against wall-clock time for parameter-server
 * variants, on streaming PCA (Async-MSGD, montecarlo/am_msgd_ps.h) or on strongly convex
 * streaming least squares (montecarlo/am_pslsq.h) with the measured error floor and decay
 * next to the exact fresh-gradient values and Dutta et al.'s K-sync bound
 * (theory/am_lsqbound.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../montecarlo/am_msgd_ps.h"
#include "../montecarlo/am_pslsq.h"
#include "../theory/am_lsqbound.h"
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
static const cli_opt OPT_LMAX = {"lmax", "L", "2", "lsq: largest eigenvalue L of H"};
static const cli_opt OPT_LMIN = {"lmin", "C", "0.5", "lsq: smallest eigenvalue c of H"};
static const cli_opt OPT_SIGMA = {"sigma", "S", "0.5", "lsq: noise standard deviation"};
static const cli_opt OPT_GRID_W = {"grid", "N", "50", "saved points per curve"};
static const cli_opt OPT_REP_W = {"replicas", "R", "200", "independent replicas"};

static const cli_opt *const wall_opts[] = {
    &OPT_OBJ,  &OPT_WK,      &OPT_RT,       &OPT_VARS,   &OPT_UPD,    &OPT_ETA_W,
    &OPT_LR_W, &OPT_DIM,     &OPT_SPECTRUM, &OPT_DIST,   &OPT_ROTATE, &OPT_MU,
    &OPT_INIT, &OPT_LMAX,    &OPT_LMIN,     &OPT_SIGMA,  &OPT_GRID_W, &OPT_REP_W,
    &OPT_SEED, &OPT_THREADS, &OPT_FORMAT,   &OPT_OUTPUT, NULL};

typedef struct {
    am_variant v;
    size_t k;
    char spec[48];
    am_ensemble_result *res;
    double floor_exact, floor_dutta, decay, decay_exact, decay_bound;
} wc_var;

static json_t *jnum(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

int cmd_wallclock(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "wallclock",
              "Error against wall-clock time of parameter-server variants on streaming least\n"
              "squares (with measured error floors and decay rates next to the exact fresh-\n"
              "gradient values and Dutta et al.'s K-sync bound) or on streaming PCA.",
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
    wc_var *vars = calloc(cap, sizeof *vars);
    char *copy = strdup(vl), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        wc_var *w = &vars[nv++];
        if (am_runtime_variant_parse_spec(tok, &w->v, &w->k, err, sizeof err))
            cli_usage_error("--variants %s", err);
        if (am_runtime_variant_check(w->v, p, w->k))
            cli_usage_error("--variants K must be in [1, %zu] (the workers), got '%s'", p, tok);
        snprintf(w->spec, sizeof w->spec, "%s", tok);
    }
    free(copy);
    if (nv != cap) cli_usage_error("--variants has an empty entry in '%s'", vl);

    am_problem *prob = NULL;
    am_msgd_params mp = am_msgd_params_default();
    am_pslsq_params lp = {0};
    if (pca) {
        prob = cli_problem(&a);
        mp.mu = cli_double(&a, "mu", 0, 1, 0, 1);
        if (am_msgd_init_parse(cli_str(&a, "init"), prob->dim, &mp.init, err, sizeof err))
            cli_usage_error("--init: %s", err);
        mp.eta = eta;
        mp.seed = seed;
        mp.delay.kind = AM_DELAY_WORKERS;
        mp.delay.param = (double)p;
        mp.delay.runtime = rt;
    } else {
        lp.dim = (size_t)cli_int(&a, "dim", 1, 100000);
        lp.lmax = cli_double(&a, "lmax", 0, 1e12, 1, 0);
        lp.lmin = cli_double(&a, "lmin", 0, lp.lmax, 1, 0);
        lp.sigma = cli_double(&a, "sigma", 0, 1e12, 0, 0);
        lp.eta = eta;
        lp.lr_c = lr_c;
        lp.lr_max = lr_max;
    }
    /* saved steps: 0 and ngrid-1 points spread evenly up to n */
    uint64_t *ks = malloc(ngrid * sizeof *ks);
    for (size_t g = 0; g < ngrid; g++)
        ks[g] = (uint64_t)llround((double)n * (double)g / (double)(ngrid - 1));
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = replicas;
    ep.threads = threads;
    double *lam = pca ? NULL : malloc(lp.dim * sizeof *lam);
    for (size_t i = 0; !pca && i < lp.dim; i++)
        lam[i] = am_pslsq_lambda(&lp, i);
    for (size_t i = 0; i < nv; i++) {
        wc_var *w = &vars[i];
        am_status st;
        w->floor_exact = w->floor_dutta = w->decay = w->decay_exact = w->decay_bound = NAN;
        if (pca) {
            am_msgd_ps_params pp = {0};
            pp.msgd = mp;
            pp.variant = w->v;
            pp.k = w->k;
            pp.lr_c = lr_c;
            pp.lr_max = lr_max;
            am_msgd_ps *eng = am_msgd_ps_alloc(prob, &pp, &st);
            if (!eng) cli_runtime_error("wallclock: %s", am_strerror(st));
            st = am_ensemble_run(am_msgd_ps_model(eng), ks, ngrid, &ep, &w->res);
            am_msgd_ps_free(eng);
        } else {
            lp.ps = am_ps_params_default();
            lp.ps.workers = p;
            lp.ps.runtime = rt;
            lp.ps.variant = w->v;
            lp.ps.k = w->k;
            lp.ps.seed = seed;
            am_pslsq *eng = am_pslsq_alloc(&lp, &st);
            if (!eng) cli_runtime_error("wallclock: %s", am_strerror(st));
            st = am_ensemble_run(am_pslsq_model(eng), ks, ngrid, &ep, &w->res);
            am_pslsq_free(eng);
        }
        if (st) cli_runtime_error("wallclock: %s", am_strerror(st));
        if (!pca) {
            double kb = (double)am_runtime_variant_batch(w->v, p, w->k);
            int sync = w->v == AM_VARIANT_SYNC || w->v == AM_VARIANT_KSYNC ||
                       w->v == AM_VARIANT_KBATCHSYNC;
            if (sync && lr_c == 0 &&
                am_lsqbound_floor_exact(lam, lp.dim, eta, lp.sigma, kb, &w->floor_exact))
                w->floor_exact = NAN;
            w->floor_dutta = lr_c == 0 ? am_lsqbound_floor_dutta(lam, lp.dim, eta, lp.sigma, kb) : NAN;
            double ec = eta * lp.lmin;
            w->decay_bound = lr_c == 0 ? 1 - ec : NAN;
            if (sync && lr_c == 0 && isfinite(w->floor_exact)) {
                /* the exact curve through the same window as the measured one */
                double *fe = malloc((size_t)(n + 1) * sizeof *fe), *fg = malloc(ngrid * sizeof *fg);
                am_lsqbound_curve_exact(lam, lp.dim, eta, lp.sigma, kb, (size_t)n + 1, fe);
                for (size_t g = 0; g < ngrid; g++)
                    fg[g] = fe[ks[g]];
                if (am_pslsq_decay(ks, fg, ngrid, w->floor_exact, &w->decay_exact))
                    w->decay_exact = NAN;
                free(fe);
                free(fg);
            }
            double *f = malloc(ngrid * sizeof *f);
            for (size_t g = 0; g < ngrid; g++)
                f[g] = w->res->obs[g * 2].mean;
            double fl = w->res->summary_stats[0].mean;
            if (am_pslsq_decay(ks, f, ngrid, fl, &w->decay)) w->decay = NAN;
            free(f);
        }
    }

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    size_t no = vars[0].res->nobs, ot = pca ? no - 2 : 1;
    if (!json) {
        fputs("variant,update,wallclock_mean,wallclock_sem,err_mean,err_sem,alive\n", f);
        for (size_t i = 0; i < nv; i++)
            for (size_t g = 0; g < ngrid; g++) {
                const am_ensemble_result *r = vars[i].res;
                fprintf(f, "%s,%llu,", vars[i].spec, (unsigned long long)ks[g]);
                const double v[4] = {r->obs[g * no + ot].mean, am_stats_sem(&r->obs[g * no + ot]),
                                     r->obs[g * no].mean, am_stats_sem(&r->obs[g * no])};
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
            json_object_set_new(params, "mu", json_real(mp.mu));
            am_msgd_init_format(&mp.init, buf, sizeof buf);
            json_object_set_new(params, "init", json_string(buf));
        } else {
            json_object_set_new(params, "dim", json_integer((json_int_t)lp.dim));
            json_object_set_new(params, "lmax", json_real(lp.lmax));
            json_object_set_new(params, "lmin", json_real(lp.lmin));
            json_object_set_new(params, "sigma", json_real(lp.sigma));
        }
        json_object_set_new(params, "grid", json_integer((json_int_t)ngrid));
        json_object_set_new(params, "replicas", json_integer((json_int_t)replicas));
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
        json_object_set_new(params, "seed", json_string(buf));
        json_object_set_new(params, "threads", json_integer(threads));
        json_t *root = cli_json_root("wallclock", params);
        json_t *arr = json_array();
        double *col = malloc(ngrid * sizeof *col);
        for (size_t i = 0; i < nv; i++) {
            const wc_var *w = &vars[i];
            const am_ensemble_result *r = w->res;
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string(am_runtime_variant_name(w->v)));
            json_object_set_new(o, "K", json_integer((json_int_t)am_runtime_variant_batch(w->v, p, w->k)));
            json_t *up = json_array();
            for (size_t g = 0; g < ngrid; g++)
                json_array_append_new(up, json_integer((json_int_t)ks[g]));
            json_object_set_new(o, "update", up);
            const char *names[4] = {"wallclock_mean", "wallclock_sem", "err_mean", "err_sem"};
            for (int c = 0; c < 4; c++) {
                size_t j = c < 2 ? ot : 0;
                for (size_t g = 0; g < ngrid; g++)
                    col[g] = c % 2 ? am_stats_sem(&r->obs[g * no + j]) : r->obs[g * no + j].mean;
                json_object_set_new(o, names[c], cli_json_doubles(col, ngrid));
            }
            json_object_set_new(o, "diverged", json_integer((json_int_t)r->diverged));
            if (!pca) {
                json_object_set_new(o, "floor_measured", jnum(r->summary_stats[0].mean));
                json_object_set_new(o, "floor_measured_sem",
                                    jnum(am_stats_sem(&r->summary_stats[0])));
                json_object_set_new(o, "floor_exact", jnum(w->floor_exact));
                json_object_set_new(o, "floor_dutta", jnum(w->floor_dutta));
                json_object_set_new(o, "decay_measured", jnum(w->decay));
                json_object_set_new(o, "decay_exact", jnum(w->decay_exact));
                json_object_set_new(o, "decay_dutta", jnum(w->decay_bound));
            }
            json_array_append_new(arr, o);
        }
        free(col);
        json_object_set_new(root, "variants", arr);
        cli_out_json(f, root);
    }
    cli_out_commit(&out);
    for (size_t i = 0; i < nv; i++)
        am_ensemble_result_free(vars[i].res);
    free(vars);
    free(ks);
    free(lam);
    am_problem_free(prob);
    return 0;
}
