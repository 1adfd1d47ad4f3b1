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
#include "cli_common.h"
#include "commands.h"
#include "nn_cli.h"

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

int cmd_staleness_model(int argc, char **argv)
{
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
    char err[1024];
    const char *model = cli_str(&a, "model");
    if (!model) cli_usage_error("--model needs a value (mlr, mlp:W1,... or cnn)");
    /* optimisers */
    const char *olist = cli_str(&a, "optimizer");
    size_t nopt = 0;
    am_optim_kind kinds[64];
    {
        char *copy = strdup(olist), *save = NULL;
        size_t commas = 1;
        for (const char *p = olist; *p; p++)
            commas += *p == ',';
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (nopt == 64) cli_usage_error("--optimizer lists more than 64 entries");
            if (am_optim_parse(tok, &kinds[nopt], err, sizeof err))
                cli_usage_error("--optimizer %s", err);
            nopt++;
        }
        free(copy);
        if (nopt != commas || nopt == 0)
            cli_usage_error("--optimizer has an empty entry in '%s'", olist);
    }
    size_t ns, nw;
    size_t *sl = int_list(&a, "s", 0, 100000, &ns);
    size_t *wl = int_list(&a, "workers", 1, 4096, &nw);
    am_nnstale_params bp = am_nnstale_params_default();
    bp.batch = (size_t)cli_int(&a, "batch", 1, 100000);
    const char *sem = cli_str(&a, "semantics");
    if (strcmp(sem, "ssp") == 0)
        bp.semantics = AM_NNSTALE_SSP;
    else if (strcmp(sem, "averaged") == 0)
        bp.semantics = AM_NNSTALE_AVERAGED;
    else
        cli_usage_error("--semantics must be ssp or averaged, got '%s'", sem);
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
        json_object_set_new(params, "parameters", json_integer((json_int_t)am_nn_dim(net)));
        json_object_set_new(params, "data", json_string(data));
        json_object_set_new(params, "train_rows", json_integer((json_int_t)train->n));
        json_object_set_new(params, "test_rows", json_integer((json_int_t)test->n));
        json_object_set_new(params, "features", json_integer((json_int_t)train->d));
        json_object_set_new(params, "classes", json_integer((json_int_t)train->classes));
        json_t *ol = json_array(), *lrs = json_array();
        for (size_t o = 0; o < nopt; o++) {
            json_array_append_new(ol, json_string(am_optim_name(kinds[o])));
            json_array_append_new(lrs, json_real(ops[o].lr));
        }
        json_object_set_new(params, "optimizer", ol);
        json_object_set_new(params, "lr", lrs);
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
        json_t *root = cli_json_root("staleness", params);
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
