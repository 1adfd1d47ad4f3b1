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

/* --inputs MODE: raw, centred or standardised (am_inputs_parse). */
extern const cli_opt OPT_NN_INPUTS;

/* Opens the splits of --data with the inputs of --inputs; exits 2 naming the flag on bad input,
 * 3 when out of memory. */
void nn_cli_data(const cli_args *a, am_classset **train, am_classset **test);

/* The network of a model spec on the training split (an image model when the data are
 * images); NULL with *st and err on failure. */
am_nn *nn_cli_net(const char *spec, const am_classset *train, am_status *st, char *err,
                  size_t errlen);

/* Opens the splits of --data (nn_cli_data) and builds the model spec for them (an image model when
 * the data are images); exits 2 naming --data or --model on bad input, 3 when out of memory. */
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
