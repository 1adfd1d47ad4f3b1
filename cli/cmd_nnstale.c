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
static const cli_opt OPT_COH_TRACE = {
    "coherence-trace", NULL, NULL,
    "JSON: the coherence at every evaluation of every run (coherence_trace per seed)"};

static const cli_opt *const nnstale_opts[] = {
    &OPT_MODEL,      &OPT_NN_DATA,   &OPT_NNOPT,    &OPT_NNS,   &OPT_NNWORKERS,  &OPT_NNBATCH,
    &OPT_SEMANTICS,  &OPT_NNLR,      &OPT_TUNE,     &OPT_NNMOM, &OPT_TARGET_ACC, &OPT_MAXB,
    &OPT_EVAL_EVERY, &OPT_EVAL_ROWS, &OPT_COH_ROWS, &OPT_SEEDS, &OPT_COH_TRACE,  &OPT_SEED,
    &OPT_THREADS,    &OPT_FORMAT,    &OPT_OUTPUT,   NULL};

/* A comma list of non-negative integers in [lo, hi]. */
static size_t *int_list(const cli_args *a, const char *name, double lo, double hi, size_t *n)
{
    double *v = cli_double_list(a, name, n);
    size_t *out = malloc((*n + 1) * sizeof *out);
    if (!out) cli_runtime_error("out of memory");
    for (size_t i = 0; i < *n; i++) {
        if (!(v[i] >= lo && v[i] <= hi && v[i] == floor(v[i])))
            cli_usage_error("--%s values must be integers in [%g, %g], got '%s'", name, lo, hi,
                            cli_str(a, name));
        out[i] = (size_t)v[i];
    }
    free(v);
    return out;
}

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
    const char *model = cli_str(&a, "model");
    if (!model) cli_usage_error("--model needs a value (mlr, mlp:W1,... or cnn)");
    /* optimisers */
    am_optim_kind kinds[64];
    size_t nopt = cli_optimizer_list(&a, kinds, 64);
    size_t ns, nw;
    size_t *sl = int_list(&a, "s", 0, 100000, &ns);
    size_t *wl = int_list(&a, "workers", 1, 4096, &nw);
    am_nnstale_params bp = am_nnstale_params_default();
    bp.batch = (size_t)cli_int(&a, "batch", 1, 100000);
    bp.semantics = semantics_arg(&a);
    bp.max_batches = (uint64_t)cli_int(&a, "max-batches", 1, 1000000000LL);
    bp.eval_every = (size_t)cli_int(&a, "eval-every", 1, 1000000000LL);
    bp.eval_rows = (size_t)cli_int(&a, "eval-rows", 0, 1000000000LL);
    bp.coherence_rows = (size_t)cli_int(&a, "coherence-rows", 0, 1000000000LL);
    bp.coherence_trace = cli_flag(&a, "coherence-trace");
    bp.seed = cli_u64(&a, "seed");
    size_t seeds = (size_t)cli_int(&a, "seeds", 1, 100000);
    int threads = (int)cli_int(&a, "threads", 0, 4096);
    double mom = cli_double(&a, "momentum", 0, 1, 0, 1);
    double lr_all = cli_given(&a, "lr") ? cli_double(&a, "lr", 0, 1e6, 1, 0) : NAN;
    int tune = cli_flag(&a, "tune");
    if (tune && isfinite(lr_all)) cli_usage_error("--tune and --lr exclude each other");
    int json = cli_json(&a);
    const char *data = cli_str(&a, "data");

    am_classset *train = NULL, *test = NULL;
    am_nn *net = NULL;
    nn_cli_open(&a, model, &train, &test, &net);
    /* the sweep, and with --tune a grid of 9 steps per optimiser at s = 0 */
    nn_cli_work_check(&a, (double)(nopt * (ns * nw + (tune ? 9 : 0)) * seeds),
                      (double)bp.max_batches, bp.batch, (double)am_nn_dim(net));
    am_status st = AM_OK;
    int is_mlr = am_nn_layers(net) == 1;
    bp.target = cli_given(&a, "target-accuracy") ? cli_double(&a, "target-accuracy", 0, 1, 1, 1)
                                                 : (is_mlr ? 0.8 : 0.82);
    /* memory up front: the largest ring (s_max + 2 snapshots and 4 work vectors) per thread */
    size_t smax = 0;
    for (size_t i = 0; i < ns; i++)
        if (sl[i] > smax) smax = sl[i];
    double ring_bytes = (double)(smax + 6) * (double)am_nn_dim(net) * 8.0;
    if (ring_bytes > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--s %zu with --model %s needs %.3g GB of snapshots (limit %.3g GB)", smax,
                        am_nn_spec(net), ring_bytes / 1e9, (double)AM_MEMORY_LIMIT / 1e9);

    am_optim_params *ops = malloc(nopt * sizeof *ops);
    if (!ops) cli_runtime_error("out of memory");
    for (size_t o = 0; o < nopt; o++) {
        ops[o] = am_optim_params_default(kinds[o]);
        ops[o].mu = mom;
        ops[o].lr = isfinite(lr_all) ? lr_all : am_nnstale_default_lr(kinds[o]);
        if (tune) {
            am_nnstale_params tp = bp;
            tp.workers = wl[0];
            double best;
            if ((st = am_nnstale_tune(net, &ops[o], &tp, seeds, threads, train, test, &best)))
                cli_runtime_error("staleness --tune: %s", am_strerror(st));
            ops[o].lr = best;
        }
    }
    am_nnstale_sweep sw = {nopt, ops, ns, sl, nw, wl, seeds, bp, threads};
    am_nnstale_result *res;
    if ((st = am_nnstale_run(&sw, net, train, test, &res)))
        cli_runtime_error("staleness: %s", am_strerror(st));

    cli_out out;
    FILE *fo = cli_out_begin(&out, &a);
    json_t *arr = json_array();
    if (!json)
        fputs("model,optimizer,workers,s,semantics,lr,seeds,reached,steps_to_target,"
              "steps_to_target_sem,normalized,normalized_sem,test_accuracy,test_accuracy_sem,"
              "coherence,coherence_sem\n",
              fo);
    const char *semname = bp.semantics == AM_NNSTALE_SSP ? "ssp" : "averaged";
    for (size_t q = 0; q < res->ncells; q++) {
        const am_nnstale_cell *c = &res->cells[q];
        int listed = 0;
        for (size_t i = 0; i < ns; i++)
            listed |= sl[i] == c->s;
        if (!listed) continue;
        const char *oname = am_optim_name(kinds[c->opt]);
        double v[8] = {c->steps.n > 0 ? c->steps.mean : NAN,
                       am_stats_sem(&c->steps),
                       c->normalized.n > 0 ? c->normalized.mean : NAN,
                       am_stats_sem(&c->normalized),
                       c->test_accuracy.n > 0 ? c->test_accuracy.mean : NAN,
                       am_stats_sem(&c->test_accuracy),
                       c->coherence.n > 0 ? c->coherence.mean : NAN,
                       am_stats_sem(&c->coherence)};
        if (json) {
            json_t *r = json_object();
            json_object_set_new(r, "model", json_string(am_nn_spec(net)));
            json_object_set_new(r, "optimizer", json_string(oname));
            json_object_set_new(r, "workers", json_integer((json_int_t)c->workers));
            json_object_set_new(r, "s", json_integer((json_int_t)c->s));
            json_object_set_new(r, "semantics", json_string(semname));
            json_object_set_new(r, "lr", json_real(c->lr));
            json_object_set_new(r, "reached", json_integer((json_int_t)c->reached));
            json_object_set_new(r, "steps_to_target", cli_json_number(v[0]));
            json_object_set_new(r, "steps_to_target_sem", cli_json_number(v[1]));
            json_object_set_new(r, "normalized", cli_json_number(v[2]));
            json_object_set_new(r, "normalized_sem", cli_json_number(v[3]));
            json_object_set_new(r, "test_accuracy", cli_json_number(v[4]));
            json_object_set_new(r, "test_accuracy_sem", cli_json_number(v[5]));
            json_object_set_new(r, "coherence", cli_json_number(v[6]));
            json_object_set_new(r, "coherence_sem", cli_json_number(v[7]));
            json_t *sj = json_array();
            for (size_t k = 0; k < res->seeds; k++) {
                const am_nnstale_outcome *u = &c->runs[k];
                json_t *e = json_object();
                json_object_set_new(e, "seed_index", json_integer((json_int_t)k));
                json_object_set_new(e, "steps_to_target", cli_json_number(u->batches));
                json_object_set_new(e, "test_accuracy", cli_json_number(u->test_accuracy));
                json_object_set_new(e, "coherence", cli_json_number(u->coherence));
                json_object_set_new(e, "coherence_min", cli_json_number(u->coherence_min));
                json_object_set_new(e, "diverged", json_boolean(u->diverged));
                if (bp.coherence_trace) {
                    json_t *tr = json_object();
                    json_object_set_new(tr, "batches",
                                        cli_json_doubles(u->trace_batches, u->trace_n));
                    json_object_set_new(tr, "cosine",
                                        cli_json_doubles(u->trace_cosine, u->trace_n));
                    json_object_set_new(e, "coherence_trace", tr);
                }
                json_array_append_new(sj, e);
            }
            json_object_set_new(r, "seeds", sj);
            json_array_append_new(arr, r);
        } else {
            /* the spec has commas (mlp:256,128): quoted as a CSV field */
            fprintf(fo, "\"%s\",%s,%zu,%zu,%s,", am_nn_spec(net), oname, c->workers, c->s, semname);
            cli_csv_double(fo, c->lr);
            fprintf(fo, ",%zu,%zu", res->seeds, c->reached);
            for (int k = 0; k < 8; k++) {
                fputc(',', fo);
                cli_csv_double(fo, v[k]);
            }
            fputc('\n', fo);
        }
    }
    if (json) {
        json_t *params = json_object();
        json_object_set_new(params, "model", json_string(am_nn_spec(net)));
        json_object_set_new(params, "data", json_string(data));
        json_t *ol = json_array(), *lrs = json_array();
        for (size_t o = 0; o < nopt; o++) {
            json_array_append_new(ol, json_string(am_optim_name(kinds[o])));
            json_array_append_new(lrs, json_real(ops[o].lr));
        }
        json_object_set_new(params, "optimizer", ol);
        if (isfinite(lr_all)) json_object_set_new(params, "lr", json_real(lr_all));
        json_object_set_new(params, "tune", json_boolean(tune));
        json_t *slj = json_array(), *wlj = json_array();
        for (size_t i = 0; i < ns; i++)
            json_array_append_new(slj, json_integer((json_int_t)sl[i]));
        for (size_t i = 0; i < nw; i++)
            json_array_append_new(wlj, json_integer((json_int_t)wl[i]));
        json_object_set_new(params, "s", slj);
        json_object_set_new(params, "workers", wlj);
        json_object_set_new(params, "semantics", json_string(semname));
        json_object_set_new(params, "batch", json_integer((json_int_t)bp.batch));
        json_object_set_new(params, "momentum", json_real(mom));
        json_object_set_new(params, "target_accuracy", json_real(bp.target));
        json_object_set_new(params, "max_batches", json_integer((json_int_t)bp.max_batches));
        json_object_set_new(params, "eval_every", json_integer((json_int_t)bp.eval_every));
        json_object_set_new(params, "eval_rows", json_integer((json_int_t)bp.eval_rows));
        json_object_set_new(params, "coherence_rows", json_integer((json_int_t)bp.coherence_rows));
        json_object_set_new(params, "seeds", json_integer((json_int_t)seeds));
        json_object_set_new(params, "coherence_trace", json_boolean(bp.coherence_trace));
        char sbuf[32];
        snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)bp.seed);
        json_object_set_new(params, "seed", json_string(sbuf));
        json_object_set_new(params, "threads", json_integer(threads));
        json_t *root = nn_cli_json_root("staleness", params);
        json_t *info = nn_cli_resolved(net, train, test);
        json_object_set_new(info, "lr", lrs);
        json_object_set_new(root, "resolved", info);
        json_object_set_new(root, "results", arr);
        cli_out_json(fo, root);
    } else {
        json_decref(arr);
    }
    cli_out_commit(&out);
    am_nnstale_result_free(res);
    free(ops);
    free(sl);
    free(wl);
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
                                  "s 0, 8; 2 seeds; grid half-width 2; 2000 batches"};
static const cli_opt OPT_MODELS = {"models", "LIST", "mlr,mlp1,mlp2,mlp3,cnn",
                                   "comma list of mlr, mlp1, mlp2, mlp3 (1-3 hidden layers of "
                                   "--width units), cnn (LeNet-like)"};
static const cli_opt OPT_WIDTH = {"width", "W", "32", "hidden units per MLP layer"};
static const cli_opt OPT_P_OPT = {"optimizer", "LIST", "sgd,momentum,nesterov,adam,rmsprop,adagrad",
                                  "comma list of optimisers"};
static const cli_opt OPT_P_S = {"s", "LIST", "0,4,8,16,32",
                                "staleness bounds in iterations (s = 0 is always run)"};
static const cli_opt OPT_P_WORKERS = {"workers", "LIST", "1,2,4,8", "worker counts P"};
static const cli_opt OPT_P_MAXB = {"max-batches", "N", "4000", "budget of batches per run"};
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

static const cli_opt *const preset_opts[] = {&OPT_PRESET,      &OPT_QUICK,      &OPT_MODELS,
                                             &OPT_WIDTH,       &OPT_P_OPT,      &OPT_P_S,
                                             &OPT_P_WORKERS,   &OPT_SEEDS,      &OPT_NN_DATA,
                                             &OPT_NNBATCH,     &OPT_SEMANTICS,  &OPT_NNMOM,
                                             &OPT_P_TARGET,    &OPT_P_MAXB,     &OPT_P_EVAL_EVERY,
                                             &OPT_P_EVAL_ROWS, &OPT_P_COH_ROWS, &OPT_GRID_HALF,
                                             &OPT_SEED,        &OPT_THREADS,    &OPT_P_CHECKPOINT,
                                             &OPT_P_RESUME,    &OPT_P_QUIET,    &OPT_LIST_CELLS,
                                             &OPT_FORMAT,      &OPT_OUTPUT,     NULL};

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
              "The cells are checkpointed (--checkpoint, --resume) and spread over MPI ranks.\n"
              "Examples:\n"
              "  amsgd staleness --preset dai2019 --quick --list-cells\n"
              "  amsgd staleness --preset dai2019 --quick --checkpoint q.ckpt -o quick.csv\n"
              "  amsgd staleness --preset dai2019 --models mlr,mlp1,mlp2,mlp3 --checkpoint d.ckpt "
              "--resume",
              preset_opts, argc, argv);
    const char *preset = cli_str(&a, "preset");
    if (strcmp(preset, "dai2019") != 0)
        cli_usage_error("--preset must be dai2019, got '%s'", preset);
    int quick = cli_flag(&a, "quick");
    am_nnpreset_spec spec;
    am_nnpreset_dai2019(quick, &spec);
    char err[1024];
    /* models */
    char *mnames[8];
    size_t nm = 0;
    if (cli_given(&a, "models") || !quick) {
        nm = split_list("models", cli_str(&a, "models"), mnames, 8);
    } else {
        for (nm = 0; nm < spec.nmodels; nm++)
            mnames[nm] = strdup(spec.models[nm]);
    }
    size_t width = cli_given(&a, "width") ? (size_t)cli_int(&a, "width", 1, 100000) : spec.width;
    char mspecs[8][128];
    for (size_t m = 0; m < nm; m++) {
        if (am_nnpreset_model_spec(mnames[m], width, mspecs[m], sizeof mspecs[m]))
            cli_usage_error("--models: unknown model '%s' (mlr, mlp1, mlp2, mlp3, cnn)", mnames[m]);
        for (size_t q = 0; q < m; q++)
            if (strcmp(mnames[q], mnames[m]) == 0)
                cli_usage_error("--models lists '%s' twice", mnames[m]);
    }
    /* optimisers */
    am_optim_kind kinds[8];
    size_t nopt;
    if (cli_given(&a, "optimizer") || !quick) {
        char *ot[8];
        nopt = split_list("optimizer", cli_str(&a, "optimizer"), ot, 8);
        for (size_t o = 0; o < nopt; o++) {
            if (am_optim_parse(ot[o], &kinds[o], err, sizeof err))
                cli_usage_error("--optimizer %s", err);
            for (size_t q = 0; q < o; q++)
                if (kinds[q] == kinds[o]) cli_usage_error("--optimizer lists '%s' twice", ot[o]);
            free(ot[o]);
        }
    } else {
        nopt = spec.nopt;
        memcpy(kinds, spec.opts, nopt * sizeof *kinds);
    }
    /* s (0 first, then the others in the given order) and workers */
    size_t s[64], ns = 1, workers[64], nw;
    s[0] = 0;
    if (cli_given(&a, "s") || !quick) {
        size_t n;
        size_t *sl = int_list(&a, "s", 0, 100000, &n);
        if (n > 63) cli_usage_error("--s lists more than 63 values");
        for (size_t i = 0; i < n; i++) {
            for (size_t q = 0; q < ns; q++)
                if (s[q] == sl[i] && sl[i] != 0) cli_usage_error("--s lists %zu twice", sl[i]);
            if (sl[i] != 0) s[ns++] = sl[i];
        }
        free(sl);
    } else {
        for (size_t i = 1; i < spec.ns; i++)
            s[ns++] = spec.s[i];
    }
    if (cli_given(&a, "workers") || !quick) {
        size_t *wl = int_list(&a, "workers", 1, 4096, &nw);
        if (nw > 64) cli_usage_error("--workers lists more than 64 values");
        for (size_t i = 0; i < nw; i++) {
            for (size_t q = 0; q < i; q++)
                if (wl[q] == wl[i]) cli_usage_error("--workers lists %zu twice", wl[i]);
            workers[i] = wl[i];
        }
        free(wl);
    } else {
        nw = spec.nworkers;
        memcpy(workers, spec.workers, nw * sizeof *workers);
    }
    size_t seeds =
        cli_given(&a, "seeds") || !quick ? (size_t)cli_int(&a, "seeds", 1, 1000) : spec.seeds;
    int grid_half = cli_given(&a, "grid-half") || !quick ? (int)cli_int(&a, "grid-half", 0, 20)
                                                         : spec.grid_half;
    am_nnstale_params bp = am_nnstale_params_default();
    bp.batch = (size_t)cli_int(&a, "batch", 1, 100000);
    bp.semantics = semantics_arg(&a);
    bp.max_batches = cli_given(&a, "max-batches") || !quick
                         ? (uint64_t)cli_int(&a, "max-batches", 1, 1000000000LL)
                         : spec.max_batches;
    bp.eval_every = (size_t)cli_int(&a, "eval-every", 1, 1000000000LL);
    bp.eval_rows = (size_t)cli_int(&a, "eval-rows", 0, 1000000000LL);
    bp.coherence_rows = (size_t)cli_int(&a, "coherence-rows", 0, 1000000000LL);
    bp.seed = cli_u64(&a, "seed");
    double mom = cli_double(&a, "momentum", 0, 1, 0, 1);
    double target_all =
        cli_given(&a, "target-accuracy") ? cli_double(&a, "target-accuracy", 0, 1, 1, 1) : NAN;
    double targets[8];
    for (size_t m = 0; m < nm; m++)
        targets[m] = isfinite(target_all) ? target_all : am_nnpreset_target(mnames[m]);
    int threads = (int)cli_int(&a, "threads", 0, 4096);
    const char *ckpt = cli_str(&a, "checkpoint");
    int resume = cli_flag(&a, "resume");
    if (resume && !ckpt) cli_usage_error("--resume needs --checkpoint FILE");
    int json = cli_json(&a);
    const char *semname = bp.semantics == AM_NNSTALE_SSP ? "ssp" : "averaged";

    if (cli_flag(&a, "list-cells")) {
        cli_out out;
        FILE *fo = cli_out_begin(&out, &a);
        fputs("cell,workers,model,spec,optimizer,s,seeds,target_accuracy\n", fo);
        size_t cell = 0;
        for (size_t w = 0; w < nw; w++)
            for (size_t m = 0; m < nm; m++)
                for (size_t o = 0; o < nopt; o++, cell++)
                    for (size_t i = 0; i < ns; i++) {
                        fprintf(fo, "%zu,%zu,%s,\"%s\",%s,%zu,%zu,", cell, workers[w], mnames[m],
                                mspecs[m], am_optim_name(kinds[o]), s[i], seeds);
                        cli_csv_double(fo, targets[m]);
                        fputc('\n', fo);
                    }
        cli_out_commit(&out);
        for (size_t m = 0; m < nm; m++)
            free(mnames[m]);
        return 0;
    }

    const char *data = cli_str(&a, "data");
    am_classset *train = NULL, *test = NULL;
    am_status st = am_classset_open(data, &train, &test, err, sizeof err);
    if (st == AM_ENOMEM) cli_runtime_error("--data %s", err);
    if (st) cli_usage_error("--data %s", err);
    am_nn *nets[8];
    for (size_t m = 0; m < nm; m++) {
        nets[m] = train->rows
                      ? am_nn_alloc_image(mspecs[m], train->rows, train->cols, train->classes, &st,
                                          err, sizeof err)
                      : am_nn_alloc(mspecs[m], train->d, train->classes, &st, err, sizeof err);
        if (!nets[m]) cli_usage_error("--models %s: %s", mnames[m], err);
    }
    size_t smax = 0;
    for (size_t i = 0; i < ns; i++)
        smax = s[i] > smax ? s[i] : smax;
    for (size_t m = 0; m < nm; m++) {
        double ring_bytes = (double)(smax + 6) * (double)am_nn_dim(nets[m]) * 8.0;
        if (ring_bytes > (double)AM_MEMORY_LIMIT)
            cli_usage_error("--s %zu with --models %s needs %.3g GB of snapshots (limit %.3g GB)",
                            smax, mnames[m], ring_bytes / 1e9, (double)AM_MEMORY_LIMIT / 1e9);
    }
    double dims = 0;
    for (size_t m = 0; m < nm; m++)
        dims += (double)am_nn_dim(nets[m]);
    nn_cli_work_check(&a, (double)(nopt * ns * nw * seeds), (double)bp.max_batches, bp.batch, dims);
    am_optim_params ops[8];
    for (size_t o = 0; o < nopt; o++) {
        ops[o] = am_optim_params_default(kinds[o]);
        ops[o].mu = mom;
        ops[o].lr = am_nnstale_default_lr(kinds[o]);
    }
    int progress = sweep_cli_show_progress(cli_flag(&a, "quiet"));
    am_nnpreset_params pp = {0};
    pp.nmodels = nm;
    pp.nets = (const am_nn *const *)nets;
    pp.model_names = (const char *const *)mnames;
    pp.targets = targets;
    pp.nopt = nopt;
    pp.opts = ops;
    pp.nworkers = nw;
    pp.workers = workers;
    pp.ns = ns;
    pp.s = s;
    pp.seeds = seeds;
    pp.grid_half = grid_half;
    pp.base = bp;
    pp.threads = threads;
    pp.train = train;
    pp.test = test;
    pp.data = data;
    pp.checkpoint = ckpt;
    pp.resume = resume;
    if (progress) {
        pp.progress = sweep_cli_progress_print;
        pp.progress_ctx = stderr;
    }
    pp.cancel = sweep_cli_sigint_install();
    am_nnpreset_result *r = NULL;
    err[0] = 0;
    st = am_nnpreset_run(&pp, &r, err, sizeof err);
    sweep_cli_sigint_restore();
    const size_t ncells = nw * nm * nopt;
    int status = sweep_cli_status(st, err, "staleness --preset", "cells", r ? r->cells_done : 0,
                                  ncells, ckpt, progress);
    if (st || am_sweep_rank() != 0) {
        am_nnpreset_result_free(r);
        for (size_t m = 0; m < nm; m++) {
            am_nn_free(nets[m]);
            free(mnames[m]);
        }
        am_classset_free(train);
        am_classset_free(test);
        return status;
    }

    cli_out out;
    FILE *fo = cli_out_begin(&out, &a);
    json_t *arr = json_array(), *tun = json_array();
    if (!json)
        fputs("model,spec,optimizer,workers,s,semantics,lr,seeds,reached,steps_to_target,"
              "steps_to_target_sem,normalized,normalized_sem,test_accuracy,test_accuracy_sem,"
              "coherence,coherence_sem,coherence_early,coherence_early_sem,coherence_late,"
              "coherence_late_sem,normalized_lower,normalized_lower_sem\n",
              fo);
    for (size_t cell = 0; cell < r->ncells; cell++) {
        const size_t o = cell % nopt, m = (cell / nopt) % nm, w = cell / (nopt * nm);
        const char *oname = am_optim_name(kinds[o]);
        if (json) {
            const size_t G = 2 * (size_t)grid_half + 1;
            double glr[41];
            for (size_t j = 0; j < G; j++)
                glr[j] = am_nnpreset_grid_lr(ops[o].lr, grid_half, j);
            json_t *t = json_object();
            json_object_set_new(t, "model", json_string(mnames[m]));
            json_object_set_new(t, "optimizer", json_string(oname));
            json_object_set_new(t, "workers", json_integer((json_int_t)workers[w]));
            json_object_set_new(t, "lr", json_real(r->values[cell * r->nvalues]));
            json_object_set_new(t, "grid", cli_json_doubles(glr, G));
            json_object_set_new(t, "score", cli_json_doubles(r->values + cell * r->nvalues + 1, G));
            json_array_append_new(tun, t);
        }
        for (size_t i = 0; i < ns; i++) {
            am_nnpreset_row row;
            am_nnpreset_summary(&pp, r, cell, i, &row);
            double v[14] = {row.steps.n > 0 ? row.steps.mean : NAN,
                            am_stats_sem(&row.steps),
                            row.normalized.n > 0 ? row.normalized.mean : NAN,
                            am_stats_sem(&row.normalized),
                            row.test_accuracy.n > 0 ? row.test_accuracy.mean : NAN,
                            am_stats_sem(&row.test_accuracy),
                            row.coherence.n > 0 ? row.coherence.mean : NAN,
                            am_stats_sem(&row.coherence),
                            row.coherence_early.n > 0 ? row.coherence_early.mean : NAN,
                            am_stats_sem(&row.coherence_early),
                            row.coherence_late.n > 0 ? row.coherence_late.mean : NAN,
                            am_stats_sem(&row.coherence_late),
                            row.normalized_lower.n > 0 ? row.normalized_lower.mean : NAN,
                            am_stats_sem(&row.normalized_lower)};
            static const char *keys[14] = {
                "steps_to_target",  "steps_to_target_sem", "normalized",     "normalized_sem",
                "test_accuracy",    "test_accuracy_sem",   "coherence",      "coherence_sem",
                "coherence_early",  "coherence_early_sem", "coherence_late", "coherence_late_sem",
                "normalized_lower", "normalized_lower_sem"};
            if (json) {
                json_t *e = json_object();
                json_object_set_new(e, "model", json_string(mnames[m]));
                json_object_set_new(e, "spec", json_string(mspecs[m]));
                json_object_set_new(e, "optimizer", json_string(oname));
                json_object_set_new(e, "workers", json_integer((json_int_t)workers[w]));
                json_object_set_new(e, "s", json_integer((json_int_t)s[i]));
                json_object_set_new(e, "semantics", json_string(semname));
                json_object_set_new(e, "lr", json_real(row.lr));
                json_object_set_new(e, "reached", json_integer((json_int_t)row.reached));
                for (int k = 0; k < 14; k++)
                    json_object_set_new(e, keys[k], cli_json_number(v[k]));
                json_t *sj = json_array();
                for (size_t k = 0; k < seeds; k++) {
                    const double *x = am_nnpreset_run_values(&pp, r, cell, i, k);
                    json_t *u = json_object();
                    json_object_set_new(u, "seed_index", json_integer((json_int_t)k));
                    json_object_set_new(u, "steps_to_target",
                                        cli_json_number(x[AM_NNPRESET_BATCHES]));
                    json_object_set_new(u, "test_accuracy",
                                        cli_json_number(x[AM_NNPRESET_TEST_ACCURACY]));
                    json_object_set_new(u, "coherence", cli_json_number(x[AM_NNPRESET_COHERENCE]));
                    json_object_set_new(u, "coherence_min",
                                        cli_json_number(x[AM_NNPRESET_COHERENCE_MIN]));
                    json_object_set_new(u, "coherence_early",
                                        cli_json_number(x[AM_NNPRESET_COH_EARLY]));
                    json_object_set_new(u, "coherence_late",
                                        cli_json_number(x[AM_NNPRESET_COH_LATE]));
                    json_object_set_new(u, "diverged", json_boolean(x[AM_NNPRESET_DIVERGED] != 0));
                    json_array_append_new(sj, u);
                }
                json_object_set_new(e, "seeds", sj);
                json_array_append_new(arr, e);
            } else {
                fprintf(fo, "%s,\"%s\",%s,%zu,%zu,%s,", mnames[m], mspecs[m], oname, workers[w],
                        s[i], semname);
                cli_csv_double(fo, row.lr);
                fprintf(fo, ",%zu,%zu", seeds, row.reached);
                for (int k = 0; k < 14; k++) {
                    fputc(',', fo);
                    cli_csv_double(fo, v[k]);
                }
                fputc('\n', fo);
            }
        }
    }
    if (json) {
        json_t *params = json_object();
        json_object_set_new(params, "preset", json_string("dai2019"));
        json_object_set_new(params, "quick", json_boolean(quick));
        json_t *ml = json_array(), *mn = json_array();
        for (size_t m = 0; m < nm; m++) {
            json_array_append_new(mn, json_string(mnames[m]));
            json_t *e = json_object();
            json_object_set_new(e, "name", json_string(mnames[m]));
            json_object_set_new(e, "spec", json_string(mspecs[m]));
            json_object_set_new(e, "parameters", json_integer((json_int_t)am_nn_dim(nets[m])));
            json_object_set_new(e, "target_accuracy", json_real(targets[m]));
            json_array_append_new(ml, e);
        }
        json_object_set_new(params, "models", mn);
        json_object_set_new(params, "width", json_integer((json_int_t)width));
        json_t *ol = json_array(), *l0 = json_array(), *slj = json_array(), *wlj = json_array();
        for (size_t o = 0; o < nopt; o++) {
            json_array_append_new(ol, json_string(am_optim_name(kinds[o])));
            json_array_append_new(l0, json_real(ops[o].lr));
        }
        for (size_t i = 0; i < ns; i++)
            json_array_append_new(slj, json_integer((json_int_t)s[i]));
        for (size_t i = 0; i < nw; i++)
            json_array_append_new(wlj, json_integer((json_int_t)workers[i]));
        json_object_set_new(params, "optimizer", ol);
        json_object_set_new(params, "grid_half", json_integer(grid_half));
        json_object_set_new(params, "s", slj);
        json_object_set_new(params, "workers", wlj);
        json_object_set_new(params, "seeds", json_integer((json_int_t)seeds));
        json_object_set_new(params, "data", json_string(data));
        json_object_set_new(params, "semantics", json_string(semname));
        json_object_set_new(params, "batch", json_integer((json_int_t)bp.batch));
        json_object_set_new(params, "momentum", json_real(mom));
        json_object_set_new(params, "max_batches", json_integer((json_int_t)bp.max_batches));
        json_object_set_new(params, "eval_every", json_integer((json_int_t)bp.eval_every));
        json_object_set_new(params, "eval_rows", json_integer((json_int_t)bp.eval_rows));
        json_object_set_new(params, "coherence_rows", json_integer((json_int_t)bp.coherence_rows));
        char sbuf[32];
        snprintf(sbuf, sizeof sbuf, "%llu", (unsigned long long)bp.seed);
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
        cli_out_json(fo, root);
    } else {
        json_decref(arr);
        json_decref(tun);
    }
    cli_out_commit(&out);
    am_nnpreset_result_free(r);
    for (size_t m = 0; m < nm; m++) {
        am_nn_free(nets[m]);
        free(mnames[m]);
    }
    am_classset_free(train);
    am_classset_free(test);
    return 0;
}
