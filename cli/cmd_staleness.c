/*
 * cmd_staleness.c -- `amsgd staleness`: steps to a target loss under simulated staleness
 * Uniform{0..s} for each optimiser and s, normalised by s = 0, and the gradient coherence
 * along the runs (Dai et al., ICLR 2019; montecarlo/am_stale.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_staleness.h"
#include "cli_common.h"
#include "commands.h"

static const cli_opt OPT_OBJECTIVE = {"objective", "NAME", "lsq", "objective: pca, lsq, logistic"};
static const cli_opt OPT_OPTIMIZER = {
    "optimizer", "LIST", "sgd,momentum,nesterov,adam,rmsprop,adagrad", "comma list of optimisers"};
static const cli_opt OPT_SLIST = {"s", "LIST", "0,1,2,4,8,16",
                                  "comma list of staleness bounds s (integers >= 0)"};
static const cli_opt OPT_WORKERS_ST = {"workers", "P", "4", "workers averaged per step"};
static const cli_opt OPT_DATA = {
    "data", "FILE", NULL,
    "CSV data set (features then label) [default: a synthetic one, see --rows]"};
static const cli_opt OPT_ROWS = {"rows", "N", "1000", "rows of the synthetic data set"};
static const cli_opt OPT_FEATURES = {"features", "D", "10", "features of the synthetic data set"};
static const cli_opt OPT_BATCH = {"batch", "N", "8", "rows per worker gradient"};
static const cli_opt OPT_LR = {"lr", "E", NULL,
                               "step size of every optimiser [default: per optimiser: sgd "
                               "0.2, momentum 0.02, nesterov 0.02, adam 0.05, rmsprop 0.02, "
                               "adagrad 0.5; a tenth of these for pca]"};
static const cli_opt OPT_MOMENTUM = {"momentum", "M", "0.9", "momentum of momentum/nesterov"};
static const cli_opt OPT_TARGET = {"target", "TARGET", "0.01",
                                   "reach F - F* <= TARGET (F(x0) - F*), TARGET in (0, 1)"};
static const cli_opt OPT_MAXSTEPS = {"max-steps", "N", "20000", "a run that needs more fails"};
static const cli_opt OPT_REPLICAS_ST = {"replicas", "R", "20", "independent runs per cell"};
static const cli_opt OPT_TUNE_ST = {
    "tune", NULL, NULL,
    "tune each optimiser's step at s = 0 on the grid lr0 10^(j/2), j = -4..4, lr0 its "
    "usual step (--lr's list); fewest mean steps with every run reaching the target; then "
    "hold it for every s"};

static const cli_opt *const staleness_opts[] = {
    &OPT_OBJECTIVE, &OPT_OPTIMIZER, &OPT_SLIST,       &OPT_WORKERS_ST, &OPT_DATA,
    &OPT_ROWS,      &OPT_FEATURES,  &OPT_BATCH,       &OPT_LR,         &OPT_MOMENTUM,
    &OPT_TARGET,    &OPT_MAXSTEPS,  &OPT_REPLICAS_ST, &OPT_TUNE_ST,    &OPT_SEED,
    &OPT_THREADS,   &OPT_FORMAT,    &OPT_PROGRESS,    &OPT_OUTPUT,     NULL};

/* --tune: per optimiser, the s = 0 cell at each step lr0 10^(j/2), j = -4..4 (lr0 the
 * optimiser's default, the j = 0 run), scored by the mean steps with a miss counted as
 * 2 max_steps (ties to the smaller step); then every s at the best step. The rows are those of
 * am_staleness_run, optimiser-major. */
static am_status staleness_tuned(const am_staleness_params *par, am_staleness_result *res,
                                 char *err, size_t errlen)
{
    memset(res, 0, sizeof *res);
    res->rows = calloc(par->noptimizers * par->ns, sizeof *res->rows);
    if (!res->rows) return AM_ENOMEM;
    const size_t zero = 0;
    for (size_t o = 0; o < par->noptimizers; o++) {
        am_staleness_params q = *par;
        q.optimizers = &par->optimizers[o];
        q.noptimizers = 1;
        q.s = &zero;
        q.ns = 1;
        double lr0 = NAN, best = NAN, best_score = INFINITY;
        for (int j = -4; j <= 4; j++) {
            am_staleness_result r;
            q.lr = j == -4 ? NAN : lr0 * pow(10.0, j / 2.0);
            if (j == -4) {
                /* the default step first: it fixes lr0 */
                am_status st = am_staleness_run(&q, &r, err, errlen);
                if (st) {
                    res->field = r.field;
                    am_staleness_result_free(&r);
                    return st;
                }
                lr0 = r.rows[0].lr;
                am_staleness_result_free(&r);
                q.lr = lr0 * pow(10.0, j / 2.0);
            }
            am_status st = am_staleness_run(&q, &r, err, errlen);
            if (st) {
                res->field = r.field;
                am_staleness_result_free(&r);
                return st;
            }
            const am_staleness_row *c = &r.rows[0];
            double miss = c->never_reached, steps = c->steps_to_target;
            double score =
                (miss < 1 ? steps * (1 - miss) : 0) + miss * 2.0 * (double)par->stale.max_steps;
            if (score < best_score) {
                best_score = score;
                best = q.lr;
            }
            res->optimum = r.optimum;
            res->data_rows = r.data_rows;
            res->data_features = r.data_features;
            am_staleness_result_free(&r);
        }
        q.s = par->s;
        q.ns = par->ns;
        q.lr = best;
        am_staleness_result r;
        am_status st = am_staleness_run(&q, &r, err, errlen);
        if (st) {
            res->field = r.field;
            am_staleness_result_free(&r);
            return st;
        }
        memcpy(res->rows + o * par->ns, r.rows, par->ns * sizeof *r.rows);
        res->nrows += par->ns;
        am_staleness_result_free(&r);
    }
    return AM_OK;
}

int cmd_staleness(int argc, char **argv)
{
    /* --model, --preset: the protocol on networks and a real data set (cli/cmd_nnstale.c) */
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--model") == 0 || strncmp(argv[i], "--model=", 8) == 0 ||
            strcmp(argv[i], "--preset") == 0 || strncmp(argv[i], "--preset=", 9) == 0)
            return cmd_staleness_model(argc, argv);
    cli_args a;
    cli_parse(&a, "staleness",
              "Run P workers whose gradients are Uniform{0..s} steps stale on an objective and\n"
              "count the steps to a target loss for each optimiser and s, normalised by s = 0,\n"
              "with the gradient coherence along the runs (Dai et al. 2019).\n"
              "With --model SPEC: networks on real data (amsgd staleness --model mlr --help).",
              staleness_opts, argc, argv);
    char err[512];
    am_objective_kind ok;
    if (am_objective_parse(cli_str(&a, "objective"), &ok, err, sizeof err))
        cli_usage_error("--objective %s", err);
    /* optimisers */
    am_optim_kind opts[64];
    size_t nopt = cli_optimizer_list(&a, opts, 64);
    size_t ns;
    double *sd = cli_double_list(&a, "s", &ns);
    size_t *sl = malloc((ns + 1) * sizeof *sl);
    if (!sl) cli_runtime_error("out of memory");
    for (size_t i = 0; i < ns; i++) {
        if (!cli_is_integer(sd[i], 0, 1e6))
            cli_usage_error("--s values must be integers in [0, 1000000], got '%s'",
                            cli_str(&a, "s"));
        sl[i] = (size_t)sd[i];
    }
    free(sd);
    am_stale_params sp = am_stale_params_default();
    sp.workers = (size_t)cli_int(&a, "workers", 1, 100000);
    sp.batch = (size_t)cli_int(&a, "batch", 1, 1000000);
    sp.target = cli_double(&a, "target", 0, 1, 1, 1);
    sp.max_steps = (uint64_t)cli_int(&a, "max-steps", 1, 1000000000LL);
    sp.seed = cli_u64(&a, "seed");
    size_t replicas = (size_t)cli_int(&a, "replicas", 2, 1000000);
    int threads = (int)cli_int(&a, "threads", 0, 4096);
    double mom = cli_double(&a, "momentum", 0, 1, 0, 1);
    double lr_all = cli_given(&a, "lr") ? cli_double(&a, "lr", 0, 1e6, 1, 0) : NAN;
    int tune = cli_flag(&a, "tune");
    if (tune && isfinite(lr_all)) cli_usage_error("--tune and --lr exclude each other");
    int json = cli_json(&a);

    am_dataset *ds = NULL;
    const char *data = cli_str(&a, "data");
    size_t rows = (size_t)cli_int(&a, "rows", 1, 10000000);
    size_t feats = (size_t)cli_int(&a, "features", 1, 10000);
    if (data && (cli_given(&a, "rows") || cli_given(&a, "features")))
        cli_usage_error("--%s sets the size of the synthetic data set; --data %s brings its own "
                        "rows and features",
                        cli_given(&a, "rows") ? "rows" : "features", data);
    if (data) {
        am_status st = am_dataset_read_csv(data, &ds, err, sizeof err);
        if (st == AM_ENOMEM) cli_runtime_error("--data %s", err);
        if (st) cli_usage_error("--data %s", err);
    } else if ((double)rows * (double)feats * 8.0 > (double)AM_MEMORY_LIMIT) {
        cli_usage_error("--rows %zu with --features %zu: the synthetic data set needs %.3g GB, "
                        "above the limit of %.3g GB",
                        rows, feats, (double)rows * (double)feats * 8.0 / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    } else if (ok == AM_OBJ_PCA && feats < 2) {
        cli_usage_error("--features must be >= 2 for pca, got 1");
    }
    {
        /* an upper bound: every run to --max-steps, each step P workers' gradients of B rows */
        size_t d = ds ? ds->d : feats;
        char how[192];
        snprintf(how, sizeof how,
                 "%zu replicas x %zu cells x %llu steps x %zu workers x %zu rows x %zu features",
                 replicas, ns * nopt, (unsigned long long)sp.max_steps, sp.workers, sp.batch, d);
        cli_work_check(&a,
                       (double)replicas * (double)(ns * nopt) * (double)sp.max_steps *
                           (double)sp.workers * (double)sp.batch * (double)d,
                       how);
    }
    am_staleness_params par = am_staleness_params_default();
    par.objective = ok;
    par.data = ds;
    par.rows = rows;
    par.features = feats;
    par.optimizers = opts;
    par.noptimizers = nopt;
    par.s = sl;
    par.ns = ns;
    par.stale = sp;
    par.replicas = replicas;
    par.threads = threads;
    par.momentum = mom;
    par.lr = lr_all;
    am_staleness_result res;
    am_status st;
    if (cli_progress_start(&a, 0)) par.progress = cli_progress_cells;
    if (tune) {
        st = staleness_tuned(&par, &res, err, sizeof err);
    } else {
        st = am_staleness_run(&par, &res, err, sizeof err);
    }
    cli_progress_end();
    if (st && res.field && strcmp(res.field, "data") == 0) cli_usage_error("--data %s", err);
    if (st) cli_runtime_error("staleness: %s", err);

    cli_out out;
    FILE *fo = cli_out_begin(&out, &a);
    json_t *arr = json_array();
    if (!json)
        fputs("s,optimizer,objective,lr,steps_to_target,steps_to_target_sem,never_reached,"
              "normalized,coherence_min,coherence_min_sem\n",
              fo);
    for (size_t i = 0; i < res.nrows; i++) {
        const am_staleness_row *c = &res.rows[i];
        const char *oname = am_optim_name(c->optimizer), *objname = am_objective_name(ok);
        if (json) {
            json_t *r = json_object();
            json_object_set_new(r, "s", json_integer((json_int_t)c->s));
            json_object_set_new(r, "optimizer", json_string(oname));
            json_object_set_new(r, "objective", json_string(objname));
            json_object_set_new(r, "lr", json_real(c->lr));
            json_object_set_new(r, "steps_to_target", cli_json_number(c->steps_to_target));
            json_object_set_new(r, "steps_to_target_sem", cli_json_number(c->steps_to_target_sem));
            json_object_set_new(r, "never_reached", json_real(c->never_reached));
            json_object_set_new(r, "normalized", cli_json_number(c->normalized));
            json_object_set_new(r, "coherence_min", cli_json_number(c->coherence_min));
            json_object_set_new(r, "coherence_min_sem", cli_json_number(c->coherence_min_sem));
            json_array_append_new(arr, r);
        } else {
            fprintf(fo, "%zu,%s,%s,", c->s, oname, objname);
            const double v[7] = {
                c->lr,         c->steps_to_target, c->steps_to_target_sem, c->never_reached,
                c->normalized, c->coherence_min,   c->coherence_min_sem};
            for (int k = 0; k < 7; k++) {
                cli_csv_double(fo, v[k]);
                fputc(k == 6 ? '\n' : ',', fo);
            }
        }
    }
    if (json) {
        json_t *params = json_object();
        json_object_set_new(params, "objective", json_string(am_objective_name(ok)));
        json_t *ol = json_array();
        for (size_t o = 0; o < nopt; o++)
            json_array_append_new(ol, json_string(am_optim_name(opts[o])));
        json_object_set_new(params, "optimizer", ol);
        json_t *slj = json_array();
        for (size_t i = 0; i < ns; i++)
            json_array_append_new(slj, json_integer((json_int_t)sl[i]));
        json_object_set_new(params, "s", slj);
        json_object_set_new(params, "workers", json_integer((json_int_t)sp.workers));
        json_object_set_new(params, "data", data ? json_string(data) : json_null());
        json_object_set_new(params, "rows", json_integer((json_int_t)res.data_rows));
        json_object_set_new(params, "features", json_integer((json_int_t)res.data_features));
        json_object_set_new(params, "batch", json_integer((json_int_t)sp.batch));
        json_object_set_new(params, "lr", cli_json_number(lr_all));
        if (tune) json_object_set_new(params, "tune", json_true());
        json_object_set_new(params, "momentum", json_real(mom));
        json_object_set_new(params, "target", json_real(sp.target));
        json_object_set_new(params, "max_steps", json_integer((json_int_t)sp.max_steps));
        json_object_set_new(params, "replicas", json_integer((json_int_t)replicas));
        char sbuf[32];
        snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)sp.seed);
        json_object_set_new(params, "seed", json_string(sbuf));
        json_object_set_new(params, "threads", json_integer(threads));
        json_t *root = cli_json_root("staleness", params);
        json_object_set_new(root, "optimum", json_real(res.optimum));
        json_object_set_new(root, "results", arr);
        cli_out_json(fo, root);
    } else {
        json_decref(arr);
    }
    cli_out_commit(&out);
    am_staleness_result_free(&res);
    free(sl);
    am_dataset_free(ds);
    return 0;
}
