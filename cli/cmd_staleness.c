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

/* The flags as resolved: the study's params (pointing into opts, s and ds) and what the
 * output needs besides. */
typedef struct {
    am_staleness_params par;
    am_optim_kind opts[64];
    size_t *s;        /* [par.ns], malloc'd */
    am_dataset *ds;   /* --data, or NULL for the synthetic set */
    const char *data; /* --data as given */
    int tune, json;
} staleness_cfg;

/* The objective, optimisers, s and run flags into c (the data set is opened by
 * staleness_data); exits 2 on bad usage, --format included. */
static void staleness_parse(const cli_args *a, staleness_cfg *c)
{
    char err[512];
    am_staleness_params *par = &c->par;
    *par = am_staleness_params_default();
    if (am_objective_parse(cli_str(a, "objective"), &par->objective, err, sizeof err))
        cli_usage_error("--objective %s", err);
    par->noptimizers = cli_optimizer_list(a, c->opts, 64);
    par->optimizers = c->opts;
    c->s = cli_size_list(a, "s", 0, 1e6, "", &par->ns);
    par->s = c->s;
    am_stale_params *sp = &par->stale;
    *sp = am_stale_params_default();
    sp->workers = (size_t)cli_int(a, "workers", 1, 100000);
    sp->batch = (size_t)cli_int(a, "batch", 1, 1000000);
    sp->target = cli_double(a, "target", 0, 1, 1, 1);
    sp->max_steps = (uint64_t)cli_int(a, "max-steps", 1, 1000000000LL);
    sp->seed = cli_u64(a, "seed");
    par->replicas = (size_t)cli_int(a, "replicas", 2, 1000000);
    par->threads = (int)cli_int(a, "threads", 0, 4096);
    par->momentum = cli_double(a, "momentum", 0, 1, 0, 1);
    par->lr = cli_lr_tune(a, &c->tune);
    c->json = cli_json(a);
}

/* --data (read into c->ds) or the synthetic set's --rows and --features; exits 2 when both
 * are given, on unreadable data, or a synthetic set over the memory limit. */
static void staleness_data(const cli_args *a, staleness_cfg *c)
{
    char err[512];
    const char *data = cli_str(a, "data");
    size_t rows = (size_t)cli_int(a, "rows", 1, 10000000);
    size_t feats = (size_t)cli_int(a, "features", 1, 10000);
    if (data && (cli_given(a, "rows") || cli_given(a, "features")))
        cli_usage_error("--%s sets the size of the synthetic data set; --data %s brings its own "
                        "rows and features",
                        cli_given(a, "rows") ? "rows" : "features", data);
    c->data = data;
    c->ds = NULL;
    if (data) {
        am_status st = am_dataset_read_csv(data, &c->ds, err, sizeof err);
        if (st == AM_ENOMEM) cli_runtime_error("--data %s", err);
        if (st) cli_usage_error("--data %s", err);
    } else if ((double)rows * (double)feats * 8.0 > (double)AM_MEMORY_LIMIT) {
        cli_usage_error("--rows %zu with --features %zu: the synthetic data set needs %.3g GB, "
                        "above the limit of %.3g GB",
                        rows, feats, (double)rows * (double)feats * 8.0 / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    } else if (c->par.objective == AM_OBJ_PCA && feats < 2) {
        cli_usage_error("--features must be >= 2 for pca, got 1");
    }
    c->par.data = c->ds;
    c->par.rows = rows;
    c->par.features = feats;
}

/* An upper bound of the work: every run to --max-steps, each step P workers' gradients of B
 * rows; exits 2 over the limit. */
static void staleness_work_check(const cli_args *a, const staleness_cfg *c)
{
    const am_staleness_params *par = &c->par;
    const am_stale_params *sp = &par->stale;
    const size_t cells = par->ns * par->noptimizers, d = c->ds ? c->ds->d : par->features;
    char how[192];
    snprintf(how, sizeof how,
             "%zu replicas x %zu cells x %llu steps x %zu workers x %zu rows x %zu features",
             par->replicas, cells, (unsigned long long)sp->max_steps, sp->workers, sp->batch, d);
    cli_work_check(a,
                   (double)par->replicas * (double)cells * (double)sp->max_steps *
                       (double)sp->workers * (double)sp->batch * (double)d,
                   how);
}

static void staleness_csv(FILE *fo, const staleness_cfg *c, const am_staleness_result *res)
{
    fputs("s,optimizer,objective,lr,steps_to_target,steps_to_target_sem,never_reached,"
          "normalized,coherence_min,coherence_min_sem\n",
          fo);
    for (size_t i = 0; i < res->nrows; i++) {
        const am_staleness_row *r = &res->rows[i];
        fprintf(fo, "%zu,%s,%s,", r->s, am_optim_name(r->optimizer),
                am_objective_name(c->par.objective));
        const double v[7] = {
            r->lr,         r->steps_to_target, r->steps_to_target_sem, r->never_reached,
            r->normalized, r->coherence_min,   r->coherence_min_sem};
        for (int k = 0; k < 7; k++) {
            cli_csv_double(fo, v[k]);
            fputc(k == 6 ? '\n' : ',', fo);
        }
    }
}

/* The result rows as a JSON array. */
static json_t *staleness_json_results(const staleness_cfg *c, const am_staleness_result *res)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < res->nrows; i++) {
        const am_staleness_row *r = &res->rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "s", json_integer((json_int_t)r->s));
        json_object_set_new(o, "optimizer", json_string(am_optim_name(r->optimizer)));
        json_object_set_new(o, "objective", json_string(am_objective_name(c->par.objective)));
        json_object_set_new(o, "lr", json_real(r->lr));
        json_object_set_new(o, "steps_to_target", cli_json_number(r->steps_to_target));
        json_object_set_new(o, "steps_to_target_sem", cli_json_number(r->steps_to_target_sem));
        json_object_set_new(o, "never_reached", json_real(r->never_reached));
        json_object_set_new(o, "normalized", cli_json_number(r->normalized));
        json_object_set_new(o, "coherence_min", cli_json_number(r->coherence_min));
        json_object_set_new(o, "coherence_min_sem", cli_json_number(r->coherence_min_sem));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The JSON params: every option as resolved (rows and features those of the data used). */
static json_t *staleness_json_params(const staleness_cfg *c, const am_staleness_result *res)
{
    const am_staleness_params *par = &c->par;
    const am_stale_params *sp = &par->stale;
    json_t *params = json_object();
    json_object_set_new(params, "objective", json_string(am_objective_name(par->objective)));
    json_t *ol = json_array();
    for (size_t o = 0; o < par->noptimizers; o++)
        json_array_append_new(ol, json_string(am_optim_name(c->opts[o])));
    json_object_set_new(params, "optimizer", ol);
    json_t *slj = json_array();
    for (size_t i = 0; i < par->ns; i++)
        json_array_append_new(slj, json_integer((json_int_t)c->s[i]));
    json_object_set_new(params, "s", slj);
    json_object_set_new(params, "workers", json_integer((json_int_t)sp->workers));
    json_object_set_new(params, "data", c->data ? json_string(c->data) : json_null());
    json_object_set_new(params, "rows", json_integer((json_int_t)res->data_rows));
    json_object_set_new(params, "features", json_integer((json_int_t)res->data_features));
    json_object_set_new(params, "batch", json_integer((json_int_t)sp->batch));
    json_object_set_new(params, "lr", cli_json_number(par->lr));
    if (c->tune) json_object_set_new(params, "tune", json_true());
    json_object_set_new(params, "momentum", json_real(par->momentum));
    json_object_set_new(params, "target", json_real(sp->target));
    json_object_set_new(params, "max_steps", json_integer((json_int_t)sp->max_steps));
    json_object_set_new(params, "replicas", json_integer((json_int_t)par->replicas));
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)sp->seed);
    json_object_set_new(params, "seed", json_string(sbuf));
    json_object_set_new(params, "threads", json_integer(par->threads));
    return params;
}

/* Writes the result (CSV or JSON) through --output. */
static void staleness_write(const cli_args *a, const staleness_cfg *c,
                            const am_staleness_result *res)
{
    cli_out out;
    FILE *fo = cli_out_begin(&out, a);
    if (c->json) {
        json_t *arr = staleness_json_results(c, res);
        json_t *root = cli_json_root("staleness", staleness_json_params(c, res));
        json_object_set_new(root, "optimum", json_real(res->optimum));
        json_object_set_new(root, "results", arr);
        cli_out_json(fo, root);
    } else {
        staleness_csv(fo, c, res);
    }
    cli_out_commit(&out);
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
    staleness_cfg c;
    staleness_parse(&a, &c);
    staleness_data(&a, &c);
    staleness_work_check(&a, &c);
    am_staleness_result res;
    am_status st;
    char err[512];
    if (cli_progress_start(&a, 0)) c.par.progress = cli_progress_cells;
    if (c.tune) {
        st = staleness_tuned(&c.par, &res, err, sizeof err);
    } else {
        st = am_staleness_run(&c.par, &res, err, sizeof err);
    }
    cli_progress_end();
    if (st && res.field && strcmp(res.field, "data") == 0) cli_usage_error("--data %s", err);
    if (st) cli_runtime_error("staleness: %s", err);
    staleness_write(&a, &c, &res);
    am_staleness_result_free(&res);
    free(c.s);
    am_dataset_free(c.ds);
    return 0;
}
