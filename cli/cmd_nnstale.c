/*
 * cmd_nnstale.c -- `amsgd staleness --model M`: Dai et al.'s protocol on a network and a real
 * data set (studies/am_nnstale.h): batches to a target test accuracy per optimiser, worker
 * count and staleness bound, normalised by s = 0, with the gradient coherence, over seeds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../studies/am_nnstale.h"
#include "../studies/am_nnstale_preset.h"
#include "../studies/am_sweep.h"
#include "cli_common.h"
#include "commands.h"
#include "nn_cli.h"
#include "sweep_cli.h"

static const cli_opt OPT_MODEL = {
    "model", "SPEC", NULL,
    "network: mlr, mlp:W1,W2,... (hidden widths, e.g. mlp:256), or cnn (LeNet-like: "
    "cnn:6,16,120,84; images only)"};
static const cli_opt OPT_NNOPT = {"optimizer", "LIST", "sgd,momentum,adam",
                                  "comma list: sgd, momentum, nesterov, adam, rmsprop, adagrad"};
static const cli_opt OPT_NNS = {"s", "LIST", "0,4,8",
                                "staleness bounds s in iterations (s = 0 is always run)"};
static const cli_opt OPT_NNWORKERS = {"workers", "LIST", "1", "comma list of worker counts P"};
static const cli_opt OPT_NNBATCH = {"batch", "N", "32", "rows per worker minibatch"};
static const cli_opt OPT_SEMANTICS = {
    "semantics", "NAME", "ssp",
    "ssp: the P updates of an iteration applied one after another; averaged: one update with "
    "their mean"};
static const cli_opt OPT_NNLR = {"lr", "E", NULL,
                                 "step of every optimiser [default: per optimiser: sgd 0.1, "
                                 "momentum and nesterov 0.01, adam and rmsprop 0.001, adagrad "
                                 "0.05]"};
static const cli_opt OPT_TUNE = {
    "tune", NULL, NULL,
    "tune each optimiser's step at s = 0 (grid lr 10^(j/2), j = -4..4, around the step of --lr)"};
static const cli_opt OPT_NNMOM = {"momentum", "M", "0.9", "momentum of momentum/nesterov"};
static const cli_opt OPT_TARGET_ACC = {"target-accuracy", "A", NULL,
                                       "test accuracy to reach [default: mlr 0.8, others 0.82]"};
static const cli_opt OPT_MAXB = {"max-batches", "N", "20000", "budget of batches per run"};
static const cli_opt OPT_EVAL_EVERY = {"eval-every", "N", "100",
                                       "batches between test-accuracy evaluations"};
static const cli_opt OPT_EVAL_ROWS = {"eval-rows", "N", "2000",
                                      "test rows of those evaluations (0 = all)"};
static const cli_opt OPT_COH_ROWS = {"coherence-rows", "N", "512",
                                     "training rows of the coherence gradients (0 = all)"};
static const cli_opt OPT_SEEDS = {"seeds", "N", "3", "independent runs per cell"};
static const cli_opt OPT_DAI_COH = {
    "dai-coherence", NULL, NULL,
    "JSON: also Dai et al.'s gradient coherence (min over the staleness window of "
    "<g_k, g_j> / |g_k|^2; s + 1 gradients per evaluation)"};
static const cli_opt OPT_COH_TRACE = {
    "coherence-trace", NULL, NULL,
    "JSON: the coherence at every evaluation of every run (coherence_trace per seed)"};

static const cli_opt *const nnstale_opts[] = {
    &OPT_MODEL,   &OPT_NN_DATA,    &OPT_NN_INPUTS, &OPT_NNOPT,    &OPT_NNS,    &OPT_NNWORKERS,
    &OPT_NNBATCH, &OPT_SEMANTICS,  &OPT_NNLR,      &OPT_TUNE,     &OPT_NNMOM,  &OPT_TARGET_ACC,
    &OPT_MAXB,    &OPT_EVAL_EVERY, &OPT_EVAL_ROWS, &OPT_COH_ROWS, &OPT_SEEDS,  &OPT_COH_TRACE,
    &OPT_DAI_COH, &OPT_SEED,       &OPT_THREADS,   &OPT_FORMAT,   &OPT_OUTPUT, NULL};

static int cmd_staleness_preset(int argc, char **argv);

/* --semantics ssp|averaged (exit 2 otherwise). */
static am_nnstale_semantics semantics_arg(const cli_args *a)
{
    const char *sem = cli_str(a, "semantics");
    if (strcmp(sem, "ssp") == 0) return AM_NNSTALE_SSP;
    if (strcmp(sem, "averaged") != 0)
        cli_usage_error("--semantics must be ssp or averaged, got '%s'", sem);
    return AM_NNSTALE_AVERAGED;
}

/* The flags of --model as resolved (the target accuracy once the model is known). */
typedef struct {
    const char *model, *data, *inputs, *semname;
    am_optim_kind kinds[64];
    size_t nopt, ns, nw, seeds;
    size_t *s, *workers; /* [ns], [nw], malloc'd */
    am_nnstale_params bp;
    int threads, tune, json;
    double mom, lr_all; /* lr_all NaN: each optimiser's default step */
} model_cfg;

static json_t *size_list_json(const size_t *x, size_t n);

/* Every flag but --target-accuracy into c; exits 2 on bad usage, --format included. */
static void model_parse(const cli_args *a, model_cfg *c)
{
    c->model = cli_str(a, "model");
    if (!c->model) cli_usage_error("--model needs a value (mlr, mlp:W1,... or cnn)");
    c->nopt = cli_optimizer_list(a, c->kinds, 64);
    c->s = cli_size_list(a, "s", 0, 100000, "", &c->ns);
    c->workers = cli_size_list(a, "workers", 1, 4096, "", &c->nw);
    am_nnstale_params *bp = &c->bp;
    *bp = am_nnstale_params_default();
    bp->batch = (size_t)cli_int(a, "batch", 1, 100000);
    bp->semantics = semantics_arg(a);
    bp->max_batches = (uint64_t)cli_int(a, "max-batches", 1, 1000000000LL);
    bp->eval_every = (size_t)cli_int(a, "eval-every", 1, 1000000000LL);
    bp->eval_rows = (size_t)cli_int(a, "eval-rows", 0, 1000000000LL);
    bp->coherence_rows = (size_t)cli_int(a, "coherence-rows", 0, 1000000000LL);
    bp->coherence_trace = cli_flag(a, "coherence-trace");
    bp->dai_coherence = cli_flag(a, "dai-coherence");
    bp->seed = cli_u64(a, "seed");
    c->seeds = (size_t)cli_int(a, "seeds", 1, 100000);
    c->threads = (int)cli_int(a, "threads", 0, 4096);
    c->mom = cli_double(a, "momentum", 0, 1, 0, 1);
    c->lr_all = cli_lr_tune(a, &c->tune);
    c->json = cli_json(a);
    c->data = cli_str(a, "data");
    c->inputs = cli_str(a, "inputs");
    c->semname = bp->semantics == AM_NNSTALE_SSP ? "ssp" : "averaged";
}

/* Opens --data and builds the network; then the work limit, --target-accuracy (its default
 * by the model) and the memory of the snapshot rings; exits 2 on any of them. */
static void model_open(const cli_args *a, model_cfg *c, am_classset **train, am_classset **test,
                       am_nn **net)
{
    nn_cli_open(a, c->model, train, test, net);
    /* the sweep, and with --tune a grid of 9 steps per optimiser at s = 0 */
    nn_cli_work_check(a, (double)(c->nopt * (c->ns * c->nw + (c->tune ? 9 : 0)) * c->seeds),
                      (double)c->bp.max_batches, c->bp.batch, (double)am_nn_dim(*net));
    int is_mlr = am_nn_layers(*net) == 1;
    c->bp.target = cli_given(a, "target-accuracy") ? cli_double(a, "target-accuracy", 0, 1, 1, 1)
                                                   : (is_mlr ? 0.8 : 0.82);
    /* memory up front: the largest ring (s_max + 2 snapshots and 4 work vectors) per thread */
    size_t smax = 0;
    for (size_t i = 0; i < c->ns; i++)
        if (c->s[i] > smax) smax = c->s[i];
    double ring_bytes = (double)(smax + 6) * (double)am_nn_dim(*net) * 8.0;
    if (ring_bytes > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--s %zu with --model %s needs %.3g GB of snapshots (limit %.3g GB)", smax,
                        am_nn_spec(*net), ring_bytes / 1e9, (double)AM_MEMORY_LIMIT / 1e9);
}

/* The optimisers with their steps (--lr, the defaults, or with --tune the best of the grid
 * at s = 0 with the first worker count), malloc'd; exits 1 when tuning fails. */
static am_optim_params *model_optimizers(const model_cfg *c, const am_nn *net,
                                         const am_classset *train, const am_classset *test)
{
    am_optim_params *ops = malloc(c->nopt * sizeof *ops);
    if (!ops) cli_runtime_error("out of memory");
    for (size_t o = 0; o < c->nopt; o++) {
        ops[o] = am_optim_params_default(c->kinds[o]);
        ops[o].mu = c->mom;
        ops[o].lr = isfinite(c->lr_all) ? c->lr_all : am_nnstale_default_lr(c->kinds[o]);
        if (c->tune) {
            am_nnstale_params tp = c->bp;
            tp.workers = c->workers[0];
            double best;
            am_status st =
                am_nnstale_tune(net, &ops[o], &tp, c->seeds, c->threads, train, test, &best);
            if (st) cli_runtime_error("staleness --tune: %s", am_strerror(st));
            ops[o].lr = best;
        }
    }
    return ops;
}

/* v[2k], v[2k+1]: the mean (NaN without values) and standard error of st[k], k < n. */
static void mean_sem_pairs(const am_stats *const *st, int n, double *v)
{
    for (int k = 0; k < n; k++) {
        v[2 * k] = st[k]->n > 0 ? st[k]->mean : NAN;
        v[2 * k + 1] = am_stats_sem(st[k]);
    }
}

/* The interval columns of the normalised batches, after the mean and standard-error pairs. */
#define NINTERVAL 5
/* Their values: the t interval of the mean, the median and its bootstrap interval. */
static void interval_values(const am_check_interval *t, const am_check_interval *med,
                            double v[NINTERVAL])
{
    v[0] = t->lo;
    v[1] = t->hi;
    v[2] = med->estimate;
    v[3] = med->lo;
    v[4] = med->hi;
}

/* A CSV header: the leading columns, then the summary keys of a row. */
static void csv_header(FILE *fo, const char *lead, const char *const *keys, size_t n)
{
    fputs(lead, fo);
    for (size_t k = 0; k < n; k++)
        fprintf(fo, ",%s", keys[k]);
    fputc('\n', fo);
}

/* The summary columns of a cell: mean and standard error of the batches to the target, the
 * normalised batches, the test accuracy and the coherence; the intervals of the normalised
 * batches. */
#define MODEL_NV (8 + NINTERVAL)
static void model_cell_values(const am_nnstale_cell *cell, double v[MODEL_NV])
{
    const am_stats *st[4] = {&cell->steps, &cell->normalized, &cell->test_accuracy,
                             &cell->coherence};
    mean_sem_pairs(st, 4, v);
    interval_values(&cell->normalized_t, &cell->normalized_median, v + 8);
}

/* The per-seed values of one cell (with --coherence-trace the trace of each). */
static json_t *model_json_seeds(const model_cfg *c, const am_nnstale_result *res,
                                const am_nnstale_cell *cell)
{
    json_t *sj = json_array();
    for (size_t k = 0; k < res->seeds; k++) {
        const am_nnstale_outcome *u = &cell->runs[k];
        json_t *e = json_object();
        json_object_set_new(e, "seed_index", json_integer((json_int_t)k));
        json_object_set_new(e, "steps_to_target", cli_json_number(u->batches));
        json_object_set_new(e, "test_accuracy", cli_json_number(u->test_accuracy));
        json_object_set_new(e, "coherence", cli_json_number(u->coherence));
        json_object_set_new(e, "coherence_min", cli_json_number(u->coherence_min));
        json_object_set_new(e, "diverged", json_boolean(u->diverged));
        if (c->bp.dai_coherence) {
            json_object_set_new(e, "dai_coherence", cli_json_number(u->dai_coherence));
            json_object_set_new(e, "dai_coherence_min", cli_json_number(u->dai_coherence_min));
        }
        if (c->bp.coherence_trace) {
            json_t *tr = json_object();
            json_object_set_new(tr, "batches", cli_json_doubles(u->trace_batches, u->trace_n));
            json_object_set_new(tr, "cosine", cli_json_doubles(u->trace_cosine, u->trace_n));
            json_object_set_new(e, "coherence_trace", tr);
        }
        json_array_append_new(sj, e);
    }
    return sj;
}

/* The summary keys of a JSON row after lr and reached, in the order of model_cell_values. */
static const char *const model_keys[MODEL_NV] = {
    "steps_to_target",     "steps_to_target_sem", "normalized",        "normalized_sem",
    "test_accuracy",       "test_accuracy_sem",   "coherence",         "coherence_sem",
    "normalized_t_lo",     "normalized_t_hi",     "normalized_median", "normalized_median_lo",
    "normalized_median_hi"};

/* One cell: a CSV line, or a JSON object appended to arr. */
static void model_write_cell(FILE *fo, json_t *arr, const model_cfg *c, const am_nn *net,
                             const am_nnstale_result *res, const am_nnstale_cell *cell)
{
    const char *oname = am_optim_name(c->kinds[cell->opt]);
    double v[MODEL_NV];
    model_cell_values(cell, v);
    if (!c->json) {
        /* the spec has commas (mlp:256,128): quoted as a CSV field */
        fprintf(fo, "\"%s\",%s,%zu,%zu,%s,", am_nn_spec(net), oname, cell->workers, cell->s,
                c->semname);
        cli_csv_double(fo, cell->lr);
        fprintf(fo, ",%zu,%zu", res->seeds, cell->reached);
        cli_csv_more(fo, v, MODEL_NV);
        fputc('\n', fo);
        return;
    }
    json_t *r = json_object();
    json_object_set_new(r, "model", json_string(am_nn_spec(net)));
    json_object_set_new(r, "optimizer", json_string(oname));
    json_object_set_new(r, "workers", json_integer((json_int_t)cell->workers));
    json_object_set_new(r, "s", json_integer((json_int_t)cell->s));
    json_object_set_new(r, "semantics", json_string(c->semname));
    json_object_set_new(r, "lr", json_real(cell->lr));
    json_object_set_new(r, "reached", json_integer((json_int_t)cell->reached));
    for (int k = 0; k < MODEL_NV; k++)
        json_object_set_new(r, model_keys[k], cli_json_number(v[k]));
    if (c->bp.dai_coherence) {
        const am_stats *dc[1] = {&cell->dai_coherence};
        double dv[2];
        mean_sem_pairs(dc, 1, dv);
        json_object_set_new(r, "dai_coherence", cli_json_number(dv[0]));
        json_object_set_new(r, "dai_coherence_sem", cli_json_number(dv[1]));
    }
    json_object_set_new(r, "seeds", model_json_seeds(c, res, cell));
    json_array_append_new(arr, r);
}

/* The JSON root: params (every option as resolved), resolved (the network, data sizes and
 * the steps used) and results (arr, stolen). */
static json_t *model_json_root(const model_cfg *c, const am_optim_params *ops, const am_nn *net,
                               const am_classset *train, const am_classset *test, json_t *arr)
{
    const am_nnstale_params *bp = &c->bp;
    json_t *params = json_object();
    json_object_set_new(params, "model", json_string(am_nn_spec(net)));
    json_object_set_new(params, "data", json_string(c->data));
    json_object_set_new(params, "inputs", json_string(c->inputs));
    json_t *ol = json_array(), *lrs = json_array();
    for (size_t o = 0; o < c->nopt; o++) {
        json_array_append_new(ol, json_string(am_optim_name(c->kinds[o])));
        json_array_append_new(lrs, json_real(ops[o].lr));
    }
    json_object_set_new(params, "optimizer", ol);
    if (isfinite(c->lr_all)) json_object_set_new(params, "lr", json_real(c->lr_all));
    json_object_set_new(params, "tune", json_boolean(c->tune));
    json_object_set_new(params, "s", size_list_json(c->s, c->ns));
    json_object_set_new(params, "workers", size_list_json(c->workers, c->nw));
    json_object_set_new(params, "semantics", json_string(c->semname));
    json_object_set_new(params, "batch", json_integer((json_int_t)bp->batch));
    json_object_set_new(params, "momentum", json_real(c->mom));
    json_object_set_new(params, "target_accuracy", json_real(bp->target));
    json_object_set_new(params, "max_batches", json_integer((json_int_t)bp->max_batches));
    json_object_set_new(params, "eval_every", json_integer((json_int_t)bp->eval_every));
    json_object_set_new(params, "eval_rows", json_integer((json_int_t)bp->eval_rows));
    json_object_set_new(params, "coherence_rows", json_integer((json_int_t)bp->coherence_rows));
    json_object_set_new(params, "seeds", json_integer((json_int_t)c->seeds));
    json_object_set_new(params, "coherence_trace", json_boolean(bp->coherence_trace));
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)bp->seed);
    json_object_set_new(params, "seed", json_string(sbuf));
    json_object_set_new(params, "threads", json_integer(c->threads));
    json_t *root = nn_cli_json_root("staleness", params);
    json_t *info = nn_cli_resolved(net, train, test);
    json_object_set_new(info, "lr", lrs);
    json_object_set_new(root, "resolved", info);
    json_object_set_new(root, "results", arr);
    return root;
}

/* Writes the cells of the listed s (CSV or JSON) through --output. */
static void model_write(const cli_args *a, const model_cfg *c, const am_optim_params *ops,
                        const am_nnstale_result *res, const am_nn *net, const am_classset *train,
                        const am_classset *test)
{
    cli_out out;
    FILE *fo = cli_out_begin(&out, a);
    json_t *arr = json_array();
    if (!c->json)
        csv_header(fo, "model,optimizer,workers,s,semantics,lr,seeds,reached", model_keys,
                   MODEL_NV);
    for (size_t q = 0; q < res->ncells; q++) {
        const am_nnstale_cell *cell = &res->cells[q];
        int listed = 0; /* s = 0 is run as the reference even when not listed */
        for (size_t i = 0; i < c->ns; i++)
            listed |= c->s[i] == cell->s;
        if (listed) model_write_cell(fo, arr, c, net, res, cell);
    }
    if (c->json)
        cli_out_json(fo, model_json_root(c, ops, net, train, test, arr));
    else
        json_decref(arr);
    cli_out_commit(&out);
}

int cmd_staleness_model(int argc, char **argv)
{
    /* --preset: Dai et al.'s grid as a checkpointed sweep (below) */
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--preset") == 0 || strncmp(argv[i], "--preset=", 9) == 0)
            return cmd_staleness_preset(argc, argv);
    cli_args a;
    cli_parse(&a, "staleness --model",
              "With --model: Dai et al.'s staleness protocol on a network and a real data set.\n"
              "P workers advance in iterations; in iteration k each worker computes its\n"
              "minibatch gradient on the parameters of iteration k - r, r ~ Uniform{0..s}, and\n"
              "the P updates are applied one after another (--semantics ssp). Prints the\n"
              "batches to reach --target-accuracy on the test set per optimiser, P and s,\n"
              "normalised by s = 0, the final test accuracy and the gradient coherence, with\n"
              "their standard errors over --seeds.",
              nnstale_opts, argc, argv);
    model_cfg c;
    model_parse(&a, &c);
    am_classset *train = NULL, *test = NULL;
    am_nn *net = NULL;
    model_open(&a, &c, &train, &test, &net);
    am_optim_params *ops = model_optimizers(&c, net, train, test);
    am_nnstale_sweep sw = {.nopt = c.nopt,
                           .opts = ops,
                           .ns = c.ns,
                           .s = c.s,
                           .nworkers = c.nw,
                           .workers = c.workers,
                           .seeds = c.seeds,
                           .base = c.bp,
                           .threads = c.threads};
    am_nnstale_result *res;
    am_status st = am_nnstale_run(&sw, net, train, test, &res);
    if (st) cli_runtime_error("staleness: %s", am_strerror(st));
    model_write(&a, &c, ops, res, net, train, test);
    am_nnstale_result_free(res);
    free(ops);
    free(c.s);
    free(c.workers);
    am_nn_free(net);
    am_classset_free(train);
    am_classset_free(test);
    return 0;
}

/* ---- --preset dai2019 ------------------------------------------------------------------ */

static const cli_opt OPT_PRESET = {
    "preset", "NAME", NULL,
    "dai2019: Dai et al.'s grid, each optimiser's step tuned at s = 0 per model and P"};
static const cli_opt OPT_QUICK = {"quick", NULL, NULL,
                                  "the reduced preset: mlr, mlp2; sgd, momentum, adam; P 1, 4; "
                                  "s 0, 8; 6 seeds; grid half-width 2; 2000 batches"};
static const cli_opt OPT_P_SEEDS = {"seeds", "N", NULL,
                                    "independent runs per cell (default: 10, with --quick 6)"};
static const cli_opt OPT_MODELS = {"models", "LIST", "mlr,mlp1,mlp2,mlp3,cnn",
                                   "comma list of mlr, mlp1, mlp2, mlp3 (1-3 hidden layers of "
                                   "--width units), cnn (LeNet-like)"};
static const cli_opt OPT_WIDTH = {"width", "W", "32", "hidden units per MLP layer"};
static const cli_opt OPT_P_OPT = {"optimizer", "LIST", "sgd,momentum,nesterov,adam,rmsprop,adagrad",
                                  "comma list of optimisers"};
static const cli_opt OPT_P_S = {"s", "LIST", "0,4,8,16,32",
                                "staleness bounds in iterations (s = 0 is always run)"};
static const cli_opt OPT_P_WORKERS = {"workers", "LIST", "1,2,4,8", "worker counts P"};
static const cli_opt OPT_P_MAXB = {"max-batches", "N", "4000",
                                   "budget of batches of a tuning run (s = 0)"};
static const cli_opt OPT_P_BUDGET = {
    "budget-factor", "F", NULL,
    "a run at s >= 1 gets F times its seed's batches to the target at s = 0, so that a miss "
    "means a slowdown beyond F (default: 8; 0: --max-batches for every run)"};
static const cli_opt OPT_P_EVAL_EVERY = {"eval-every", "N", "50",
                                         "batches between test-accuracy evaluations"};
static const cli_opt OPT_P_EVAL_ROWS = {"eval-rows", "N", "1000",
                                        "test rows of those evaluations (0 = all)"};
static const cli_opt OPT_P_COH_ROWS = {"coherence-rows", "N", "256",
                                       "training rows of the coherence gradients (0 = all)"};
static const cli_opt OPT_P_TARGET = {"target-accuracy", "A", NULL,
                                     "test accuracy to reach for every model (default: mlr "
                                     "0.8, the others 0.82)"};
static const cli_opt OPT_GRID_HALF = {"grid-half", "H", "4",
                                      "tuning grid lr0 10^(j/2), j = -H..H, lr0 the default step"};
static const cli_opt OPT_P_CHECKPOINT = {"checkpoint", "FILE", NULL,
                                         "append every finished cell to FILE (fsync'd)"};
static const cli_opt OPT_P_RESUME = {"resume", NULL, NULL,
                                     "skip the cells already in the --checkpoint file"};
static const cli_opt OPT_P_QUIET = {"quiet", NULL, NULL, "no progress line on stderr"};
static const cli_opt OPT_LIST_CELLS = {"list-cells", NULL, NULL,
                                       "print the cells (one line per cell and s) and exit"};

static const cli_opt *const preset_opts[] = {&OPT_PRESET,
                                             &OPT_QUICK,
                                             &OPT_MODELS,
                                             &OPT_WIDTH,
                                             &OPT_P_OPT,
                                             &OPT_P_S,
                                             &OPT_P_WORKERS,
                                             &OPT_P_SEEDS,
                                             &OPT_NN_DATA,
                                             &OPT_NN_INPUTS,
                                             &OPT_NNBATCH,
                                             &OPT_SEMANTICS,
                                             &OPT_NNMOM,
                                             &OPT_P_TARGET,
                                             &OPT_P_MAXB,
                                             &OPT_P_BUDGET,
                                             &OPT_P_EVAL_EVERY,
                                             &OPT_P_EVAL_ROWS,
                                             &OPT_P_COH_ROWS,
                                             &OPT_GRID_HALF,
                                             &OPT_SEED,
                                             &OPT_THREADS,
                                             &OPT_P_CHECKPOINT,
                                             &OPT_P_RESUME,
                                             &OPT_P_QUIET,
                                             &OPT_LIST_CELLS,
                                             &OPT_FORMAT,
                                             &OPT_OUTPUT,
                                             NULL};

/* Splits a comma list into at most max malloc'd tokens (exits 2 on an empty entry). */
static size_t split_list(const char *flag, const char *list, char **tok, size_t max)
{
    size_t n = 0, commas = 1;
    for (const char *p = list; *p; p++)
        commas += *p == ',';
    char *copy = strdup(list), *save = NULL;
    if (!copy) cli_runtime_error("out of memory");
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == max) cli_usage_error("--%s lists more than %zu entries", flag, max);
        tok[n++] = strdup(t);
    }
    free(copy);
    if (n != commas || n == 0) cli_usage_error("--%s has an empty entry in '%s'", flag, list);
    return n;
}

/* The grid of --preset dai2019 as the flags resolve it (the preset's values where --quick
 * leaves a flag unset). */
typedef struct {
    int quick, json, resume, threads, grid_half;
    char *mnames[8];
    char mspecs[8][128];
    double targets[8];
    size_t nm, width, nopt, ns, nw, seeds;
    am_optim_kind kinds[8];
    size_t s[64], workers[64];
    am_nnstale_params bp;
    double mom, budget_factor;
    const char *ckpt, *data, *inputs, *semname;
} preset_cfg;

/* A list flag that is not given takes the preset's value (am_nnpreset_dai2019, full or
 * --quick): the one place of the preset's defaults. */
static void preset_models(const cli_args *a, const am_nnpreset_spec *spec, preset_cfg *c)
{
    if (cli_given(a, "models")) {
        c->nm = split_list("models", cli_str(a, "models"), c->mnames, 8);
    } else {
        for (c->nm = 0; c->nm < spec->nmodels; c->nm++)
            c->mnames[c->nm] = strdup(spec->models[c->nm]);
    }
    c->width = cli_given(a, "width") ? (size_t)cli_int(a, "width", 1, 100000) : spec->width;
    for (size_t m = 0; m < c->nm; m++) {
        if (am_nnpreset_model_spec(c->mnames[m], c->width, c->mspecs[m], sizeof c->mspecs[m]))
            cli_usage_error("--models: unknown model '%s' (mlr, mlp1, mlp2, mlp3, cnn)",
                            c->mnames[m]);
        for (size_t q = 0; q < m; q++)
            if (strcmp(c->mnames[q], c->mnames[m]) == 0)
                cli_usage_error("--models lists '%s' twice", c->mnames[m]);
    }
}

static void preset_optimizers(const cli_args *a, const am_nnpreset_spec *spec, preset_cfg *c)
{
    if (!cli_given(a, "optimizer")) {
        c->nopt = spec->nopt;
        memcpy(c->kinds, spec->opts, c->nopt * sizeof *c->kinds);
        return;
    }
    char *ot[8], err[256];
    c->nopt = split_list("optimizer", cli_str(a, "optimizer"), ot, 8);
    for (size_t o = 0; o < c->nopt; o++) {
        if (am_optim_parse(ot[o], &c->kinds[o], err, sizeof err))
            cli_usage_error("--optimizer %s", err);
        for (size_t q = 0; q < o; q++)
            if (c->kinds[q] == c->kinds[o]) cli_usage_error("--optimizer lists '%s' twice", ot[o]);
        free(ot[o]);
    }
}

/* s (0 first, then the others in the given order) and the worker counts. */
static void preset_s_workers(const cli_args *a, const am_nnpreset_spec *spec, preset_cfg *c)
{
    c->s[0] = 0;
    c->ns = 1;
    if (cli_given(a, "s")) {
        size_t n;
        size_t *sl = cli_size_list(a, "s", 0, 100000, "", &n);
        if (n > 63) cli_usage_error("--s lists more than 63 values");
        for (size_t i = 0; i < n; i++) {
            for (size_t q = 0; q < c->ns; q++)
                if (c->s[q] == sl[i] && sl[i] != 0) cli_usage_error("--s lists %zu twice", sl[i]);
            if (sl[i] != 0) c->s[c->ns++] = sl[i];
        }
        free(sl);
    } else {
        for (size_t i = 1; i < spec->ns; i++)
            c->s[c->ns++] = spec->s[i];
    }
    if (cli_given(a, "workers")) {
        size_t *wl = cli_size_list(a, "workers", 1, 4096, "", &c->nw);
        if (c->nw > 64) cli_usage_error("--workers lists more than 64 values");
        for (size_t i = 0; i < c->nw; i++) {
            for (size_t q = 0; q < i; q++)
                if (wl[q] == wl[i]) cli_usage_error("--workers lists %zu twice", wl[i]);
            c->workers[i] = wl[i];
        }
        free(wl);
    } else {
        c->nw = spec->nworkers;
        memcpy(c->workers, spec->workers, c->nw * sizeof *c->workers);
    }
}

/* Every flag of --preset into c; exits 2 on bad usage. */
static void preset_parse(const cli_args *a, preset_cfg *c)
{
    const char *preset = cli_str(a, "preset");
    if (strcmp(preset, "dai2019") != 0)
        cli_usage_error("--preset must be dai2019, got '%s'", preset);
    c->quick = cli_flag(a, "quick");
    am_nnpreset_spec spec;
    am_nnpreset_dai2019(c->quick, &spec);
    preset_models(a, &spec, c);
    preset_optimizers(a, &spec, c);
    preset_s_workers(a, &spec, c);
    c->seeds = cli_given(a, "seeds") ? (size_t)cli_int(a, "seeds", 1, 1000) : spec.seeds;
    c->grid_half = cli_given(a, "grid-half") ? (int)cli_int(a, "grid-half", 0, 20) : spec.grid_half;
    c->budget_factor = cli_given(a, "budget-factor") ? cli_double(a, "budget-factor", 0, 1000, 0, 0)
                                                     : spec.budget_factor;
    c->bp = am_nnstale_params_default();
    c->bp.batch = (size_t)cli_int(a, "batch", 1, 100000);
    c->bp.semantics = semantics_arg(a);
    c->bp.max_batches = cli_given(a, "max-batches")
                            ? (uint64_t)cli_int(a, "max-batches", 1, 1000000000LL)
                            : spec.max_batches;
    c->bp.eval_every = (size_t)cli_int(a, "eval-every", 1, 1000000000LL);
    c->bp.eval_rows = (size_t)cli_int(a, "eval-rows", 0, 1000000000LL);
    c->bp.coherence_rows = (size_t)cli_int(a, "coherence-rows", 0, 1000000000LL);
    c->bp.seed = cli_u64(a, "seed");
    c->mom = cli_double(a, "momentum", 0, 1, 0, 1);
    double target_all =
        cli_given(a, "target-accuracy") ? cli_double(a, "target-accuracy", 0, 1, 1, 1) : NAN;
    for (size_t m = 0; m < c->nm; m++)
        c->targets[m] = isfinite(target_all) ? target_all : am_nnpreset_target(c->mnames[m]);
    c->threads = (int)cli_int(a, "threads", 0, 4096);
    c->ckpt = cli_str(a, "checkpoint");
    c->resume = cli_flag(a, "resume");
    if (c->resume && !c->ckpt) cli_usage_error("--resume needs --checkpoint FILE");
    c->json = cli_json(a);
    c->semname = c->bp.semantics == AM_NNSTALE_SSP ? "ssp" : "averaged";
    c->data = cli_str(a, "data");
    c->inputs = cli_str(a, "inputs");
}

/* --list-cells: one CSV line per cell and s. */
static void preset_list_cells(const cli_args *a, const preset_cfg *c)
{
    cli_out out;
    FILE *fo = cli_out_begin(&out, a);
    fputs("cell,workers,model,spec,optimizer,s,seeds,target_accuracy\n", fo);
    size_t cell = 0;
    for (size_t w = 0; w < c->nw; w++)
        for (size_t m = 0; m < c->nm; m++)
            for (size_t o = 0; o < c->nopt; o++, cell++)
                for (size_t i = 0; i < c->ns; i++) {
                    fprintf(fo, "%zu,%zu,%s,\"%s\",%s,%zu,%zu,", cell, c->workers[w], c->mnames[m],
                            c->mspecs[m], am_optim_name(c->kinds[o]), c->s[i], c->seeds);
                    cli_csv_double(fo, c->targets[m]);
                    fputc('\n', fo);
                }
    cli_out_commit(&out);
}

/* Opens --data and builds the models; exits 2 on bad data, an unbuildable model or a run over
 * the memory or work limit. */
static void preset_open(const cli_args *a, const preset_cfg *c, am_classset **train,
                        am_classset **test, am_nn **nets)
{
    char err[1024];
    am_status st;
    nn_cli_data(a, train, test);
    size_t smax = 0;
    for (size_t i = 0; i < c->ns; i++)
        smax = c->s[i] > smax ? c->s[i] : smax;
    double dims = 0;
    for (size_t m = 0; m < c->nm; m++) {
        nets[m] = nn_cli_net(c->mspecs[m], *train, &st, err, sizeof err);
        if (!nets[m]) cli_usage_error("--models %s: %s", c->mnames[m], err);
    }
    for (size_t m = 0; m < c->nm; m++) {
        double ring_bytes = (double)(smax + 6) * (double)am_nn_dim(nets[m]) * 8.0;
        if (ring_bytes > (double)AM_MEMORY_LIMIT)
            cli_usage_error("--s %zu with --models %s needs %.3g GB of snapshots (limit %.3g GB)",
                            smax, c->mnames[m], ring_bytes / 1e9, (double)AM_MEMORY_LIMIT / 1e9);
        dims += (double)am_nn_dim(nets[m]);
    }
    /* a run at s >= 1 may take budget_factor times the largest reference */
    nn_cli_work_check(a, (double)(c->nopt * c->ns * c->nw * c->seeds),
                      (double)c->bp.max_batches * fmax(1.0, c->budget_factor), c->bp.batch, dims);
}

/* The tuning record of one cell: its step, the grid and the grid's scores. */
static json_t *preset_json_tuning(const preset_cfg *c, const am_optim_params *ops,
                                  const am_nnpreset_result *r, size_t cell)
{
    const size_t o = cell % c->nopt, m = (cell / c->nopt) % c->nm, w = cell / (c->nopt * c->nm);
    const size_t G = 2 * (size_t)c->grid_half + 1;
    double glr[41];
    for (size_t j = 0; j < G; j++)
        glr[j] = am_nnstale_grid_lr(ops[o].lr, c->grid_half, j);
    json_t *t = json_object();
    json_object_set_new(t, "model", json_string(c->mnames[m]));
    json_object_set_new(t, "optimizer", json_string(am_optim_name(c->kinds[o])));
    json_object_set_new(t, "workers", json_integer((json_int_t)c->workers[w]));
    json_object_set_new(t, "lr", json_real(r->values[cell * r->nvalues]));
    json_object_set_new(t, "grid", cli_json_doubles(glr, G));
    json_object_set_new(t, "score", cli_json_doubles(r->values + cell * r->nvalues + 1, G));
    return t;
}

/* The per-seed values of one row (cell, s index i). */
static json_t *preset_json_seeds(const preset_cfg *c, const am_nnpreset_params *pp,
                                 const am_nnpreset_result *r, size_t cell, size_t i)
{
    json_t *sj = json_array();
    for (size_t k = 0; k < c->seeds; k++) {
        const double *x = am_nnpreset_run_values(pp, r, cell, i, k);
        json_t *u = json_object();
        json_object_set_new(u, "seed_index", json_integer((json_int_t)k));
        json_object_set_new(u, "steps_to_target", cli_json_number(x[AM_NNPRESET_BATCHES]));
        json_object_set_new(u, "test_accuracy", cli_json_number(x[AM_NNPRESET_TEST_ACCURACY]));
        json_object_set_new(u, "coherence", cli_json_number(x[AM_NNPRESET_COHERENCE]));
        json_object_set_new(u, "coherence_min", cli_json_number(x[AM_NNPRESET_COHERENCE_MIN]));
        json_object_set_new(u, "coherence_early", cli_json_number(x[AM_NNPRESET_COH_EARLY]));
        json_object_set_new(u, "coherence_late", cli_json_number(x[AM_NNPRESET_COH_LATE]));
        json_object_set_new(u, "diverged", json_boolean(x[AM_NNPRESET_DIVERGED] != 0));
        json_array_append_new(sj, u);
    }
    return sj;
}

/* The summary columns of a row after lr, seeds and reached: mean and standard error of each,
 * then the intervals of the normalised batches. */
#define PRESET_NV (14 + NINTERVAL)
static const char *const preset_keys[PRESET_NV] = {
    "steps_to_target",   "steps_to_target_sem",  "normalized",          "normalized_sem",
    "test_accuracy",     "test_accuracy_sem",    "coherence",           "coherence_sem",
    "coherence_early",   "coherence_early_sem",  "coherence_late",      "coherence_late_sem",
    "normalized_lower",  "normalized_lower_sem", "normalized_t_lo",     "normalized_t_hi",
    "normalized_median", "normalized_median_lo", "normalized_median_hi"};

static void preset_row_values(const am_nnpreset_row *row, double v[PRESET_NV])
{
    const am_stats *st[7] = {&row->steps,           &row->normalized,      &row->test_accuracy,
                             &row->coherence,       &row->coherence_early, &row->coherence_late,
                             &row->normalized_lower};
    mean_sem_pairs(st, 7, v);
    interval_values(&row->normalized_t, &row->normalized_median, v + 14);
}

/* The rows of one cell, one per s: a CSV line each, or JSON objects appended to arr. */
static void preset_write_cell(FILE *fo, json_t *arr, const preset_cfg *c,
                              const am_nnpreset_params *pp, const am_nnpreset_result *r,
                              size_t cell)
{
    const size_t o = cell % c->nopt, m = (cell / c->nopt) % c->nm, w = cell / (c->nopt * c->nm);
    const char *oname = am_optim_name(c->kinds[o]);
    for (size_t i = 0; i < c->ns; i++) {
        am_nnpreset_row row;
        am_nnpreset_summary(pp, r, cell, i, &row);
        double v[PRESET_NV];
        preset_row_values(&row, v);
        if (!c->json) {
            fprintf(fo, "%s,\"%s\",%s,%zu,%zu,%s,", c->mnames[m], c->mspecs[m], oname,
                    c->workers[w], c->s[i], c->semname);
            cli_csv_double(fo, row.lr);
            fprintf(fo, ",%zu,%zu", c->seeds, row.reached);
            cli_csv_more(fo, v, PRESET_NV);
            fputc('\n', fo);
            continue;
        }
        json_t *e = json_object();
        json_object_set_new(e, "model", json_string(c->mnames[m]));
        json_object_set_new(e, "spec", json_string(c->mspecs[m]));
        json_object_set_new(e, "optimizer", json_string(oname));
        json_object_set_new(e, "workers", json_integer((json_int_t)c->workers[w]));
        json_object_set_new(e, "s", json_integer((json_int_t)c->s[i]));
        json_object_set_new(e, "semantics", json_string(c->semname));
        json_object_set_new(e, "lr", json_real(row.lr));
        json_object_set_new(e, "reached", json_integer((json_int_t)row.reached));
        for (int k = 0; k < PRESET_NV; k++)
            json_object_set_new(e, preset_keys[k], cli_json_number(v[k]));
        json_object_set_new(e, "seeds", preset_json_seeds(c, pp, r, cell, i));
        json_array_append_new(arr, e);
    }
}

static json_t *size_list_json(const size_t *x, size_t n)
{
    json_t *l = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(l, json_integer((json_int_t)x[i]));
    return l;
}

/* The JSON root of the preset: params (the options), blas, resolved (the models, base steps
 * and data sizes), tuning and results. */
static json_t *preset_json_root(const preset_cfg *c, am_nn *const *nets, const am_optim_params *ops,
                                const am_classset *train, const am_classset *test, json_t *tun,
                                json_t *arr)
{
    json_t *params = json_object();
    json_object_set_new(params, "preset", json_string("dai2019"));
    json_object_set_new(params, "quick", json_boolean(c->quick));
    json_t *ml = json_array(), *mn = json_array(), *ol = json_array(), *l0 = json_array();
    for (size_t m = 0; m < c->nm; m++) {
        json_array_append_new(mn, json_string(c->mnames[m]));
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(c->mnames[m]));
        json_object_set_new(e, "spec", json_string(c->mspecs[m]));
        json_object_set_new(e, "parameters", json_integer((json_int_t)am_nn_dim(nets[m])));
        json_object_set_new(e, "target_accuracy", json_real(c->targets[m]));
        json_array_append_new(ml, e);
    }
    json_object_set_new(params, "models", mn);
    json_object_set_new(params, "width", json_integer((json_int_t)c->width));
    for (size_t o = 0; o < c->nopt; o++) {
        json_array_append_new(ol, json_string(am_optim_name(c->kinds[o])));
        json_array_append_new(l0, json_real(ops[o].lr));
    }
    json_object_set_new(params, "optimizer", ol);
    json_object_set_new(params, "grid_half", json_integer(c->grid_half));
    json_object_set_new(params, "budget_factor", json_real(c->budget_factor));
    json_object_set_new(params, "s", size_list_json(c->s, c->ns));
    json_object_set_new(params, "workers", size_list_json(c->workers, c->nw));
    json_object_set_new(params, "seeds", json_integer((json_int_t)c->seeds));
    json_object_set_new(params, "data", json_string(c->data));
    json_object_set_new(params, "inputs", json_string(c->inputs));
    json_object_set_new(params, "semantics", json_string(c->semname));
    json_object_set_new(params, "batch", json_integer((json_int_t)c->bp.batch));
    json_object_set_new(params, "momentum", json_real(c->mom));
    json_object_set_new(params, "max_batches", json_integer((json_int_t)c->bp.max_batches));
    json_object_set_new(params, "eval_every", json_integer((json_int_t)c->bp.eval_every));
    json_object_set_new(params, "eval_rows", json_integer((json_int_t)c->bp.eval_rows));
    json_object_set_new(params, "coherence_rows", json_integer((json_int_t)c->bp.coherence_rows));
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)c->bp.seed);
    json_object_set_new(params, "seed", json_string(sbuf));
    json_t *root = nn_cli_json_root("staleness", params);
    /* what the flags resolved to (not options: `amsgd rerun` reads only params) */
    json_t *info = json_object();
    json_object_set_new(info, "models", ml);
    json_object_set_new(info, "lr0", l0);
    json_object_set_new(info, "train_rows", json_integer((json_int_t)train->n));
    json_object_set_new(info, "test_rows", json_integer((json_int_t)test->n));
    json_object_set_new(root, "resolved", info);
    json_object_set_new(root, "tuning", tun);
    json_object_set_new(root, "results", arr);
    return root;
}

/* Writes the result table (CSV or JSON) through --output. */
static void preset_write(const cli_args *a, const preset_cfg *c, const am_nnpreset_params *pp,
                         const am_nnpreset_result *r, am_nn *const *nets)
{
    cli_out out;
    FILE *fo = cli_out_begin(&out, a);
    json_t *arr = json_array(), *tun = json_array();
    if (!c->json)
        csv_header(fo, "model,spec,optimizer,workers,s,semantics,lr,seeds,reached", preset_keys,
                   PRESET_NV);
    for (size_t cell = 0; cell < r->ncells; cell++) {
        if (c->json) json_array_append_new(tun, preset_json_tuning(c, pp->opts, r, cell));
        preset_write_cell(fo, arr, c, pp, r, cell);
    }
    if (c->json) {
        cli_out_json(fo, preset_json_root(c, nets, pp->opts, pp->train, pp->test, tun, arr));
    } else {
        json_decref(arr);
        json_decref(tun);
    }
    cli_out_commit(&out);
}

static void preset_free(preset_cfg *c, am_nn **nets, am_classset *train, am_classset *test)
{
    for (size_t m = 0; m < c->nm; m++) {
        if (nets) am_nn_free(nets[m]);
        free(c->mnames[m]);
    }
    am_classset_free(train);
    am_classset_free(test);
}

static int cmd_staleness_preset(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "staleness",
              "With --preset dai2019: Dai et al.'s grid of the SSP staleness protocol\n"
              "(amsgd staleness --model): for every worker count P, model and optimiser (one\n"
              "cell each), the optimiser's step is tuned at s = 0 with P workers over the grid\n"
              "lr0 10^(j/2), j = -H..H, then held fixed for every s; prints the batches to the\n"
              "target test accuracy, normalised by s = 0, the final test accuracy and the\n"
              "gradient coherence (mean, first and second half of the run) over --seeds.\n"
              "The cells are checkpointed (--checkpoint, --resume) and spread over MPI ranks.",
              preset_opts, argc, argv);
    preset_cfg c;
    memset(&c, 0, sizeof c);
    preset_parse(&a, &c);
    if (cli_flag(&a, "list-cells")) {
        preset_list_cells(&a, &c);
        preset_free(&c, NULL, NULL, NULL);
        return 0;
    }
    am_classset *train = NULL, *test = NULL;
    am_nn *nets[8];
    preset_open(&a, &c, &train, &test, nets);
    am_optim_params ops[8];
    for (size_t o = 0; o < c.nopt; o++) {
        ops[o] = am_optim_params_default(c.kinds[o]);
        ops[o].mu = c.mom;
        ops[o].lr = am_nnstale_default_lr(c.kinds[o]);
    }
    int progress = sweep_cli_show_progress(cli_flag(&a, "quiet"));
    am_nnpreset_params pp = {.nmodels = c.nm,
                             .nets = (const am_nn *const *)nets,
                             .model_names = (const char *const *)c.mnames,
                             .targets = c.targets,
                             .nopt = c.nopt,
                             .opts = ops,
                             .nworkers = c.nw,
                             .workers = c.workers,
                             .ns = c.ns,
                             .s = c.s,
                             .seeds = c.seeds,
                             .grid_half = c.grid_half,
                             .base = c.bp,
                             .budget_factor = c.budget_factor,
                             .threads = c.threads,
                             .train = train,
                             .test = test,
                             .data = c.data,
                             .checkpoint = c.ckpt,
                             .resume = c.resume,
                             .progress = progress ? sweep_cli_progress_print : NULL,
                             .progress_ctx = progress ? stderr : NULL,
                             .cancel = sweep_cli_sigint_install()};
    am_nnpreset_result *r = NULL;
    char err[1024] = "";
    am_status st = am_nnpreset_run(&pp, &r, err, sizeof err);
    sweep_cli_sigint_restore();
    int status = sweep_cli_status(st, err, "staleness --preset", "cells", r ? r->cells_done : 0,
                                  c.nw * c.nm * c.nopt, c.ckpt, progress);
    if (!st && am_sweep_rank() == 0) preset_write(&a, &c, &pp, r, nets);
    am_nnpreset_result_free(r);
    preset_free(&c, nets, train, test);
    return st || am_sweep_rank() != 0 ? status : 0;
}
