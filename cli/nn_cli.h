/*
 * nn_cli.h -- the flags of the commands that train networks on labelled data (`staleness
 * --model`, `tradeoff`): the --data option and the opening of the data set and the model of
 * --model, with the exit-2 messages naming the flag.
 */
#ifndef AM_CLI_NN_CLI_H
#define AM_CLI_NN_CLI_H

#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include <jansson.h>

#include "args.h"

/* --data SPEC: fashion-mnist, idx:DIR, FILE.csv or TRAIN.csv,TEST.csv. */
extern const cli_opt OPT_NN_DATA;

/* Opens the splits of --data and builds the model spec for them (an image model when the data
 * are images); exits 2 naming --data or --model on bad input, 3 when out of memory. */
void nn_cli_open(const cli_args *a, const char *model, am_classset **train, am_classset **test,
                 am_nn **net);

/* The work check of a network study (cli_work_check): runs independent trainings of at most
 * batches minibatch gradients of batch rows each on a model of nparams parameters (summed over
 * the models a run trains in turn), one update counted per row and parameter; exits 2 above
 * the limit, naming the factors. */
void nn_cli_work_check(const cli_args *a, double runs, double batches, size_t batch,
                       double nparams);

/* cli_json_root of a network study, with "blas" (am_nn_blas: the BLAS library and kernel the
 * numbers were computed with; other kernels round differently and give other results). */
json_t *nn_cli_json_root(const char *command, json_t *params);

/* The "resolved" object of a network study: the model's parameter count and the data's rows,
 * features and classes (what the flags resolved to; not options, `amsgd rerun` reads only
 * params). */
json_t *nn_cli_resolved(const am_nn *net, const am_classset *train, const am_classset *test);

#endif
