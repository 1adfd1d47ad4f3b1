/*
 * nn_cli.c -- the data and model flags shared by the network commands (nn_cli.h).
 */
#include "nn_cli.h"

#include <stdio.h>

#include "cli_common.h"

const cli_opt OPT_NN_DATA = {
    "data", "SPEC", "fashion-mnist",
    "fashion-mnist (package dataset-fashion-mnist), idx:DIR, FILE.csv or TRAIN.csv,TEST.csv"};

const cli_opt OPT_NN_INPUTS = {
    "inputs", "MODE", "standardised",
    "raw (pixels / 255 as read), centred (minus the training set's per-pixel mean) or "
    "standardised (also divided by its per-pixel standard deviation)"};

void nn_cli_data(const cli_args *a, am_classset **train, am_classset **test)
{
    char err[1024];
    am_inputs inputs;
    if (am_inputs_parse(cli_str(a, "inputs"), &inputs, err, sizeof err))
        cli_usage_error("--%s", err);
    am_status st = am_classset_open(cli_str(a, "data"), train, test, err, sizeof err);
    if (st == AM_ENOMEM) cli_runtime_error("--data %s", err);
    if (st) cli_usage_error("--data %s", err);
    if (am_classset_set_inputs(*train, *test, inputs))
        cli_runtime_error("--inputs %s: %s", cli_str(a, "inputs"), am_strerror(AM_ENOMEM));
}

am_nn *nn_cli_net(const char *spec, const am_classset *train, am_status *st, char *err,
                  size_t errlen)
{
    return train->rows
               ? am_nn_alloc_image(spec, train->rows, train->cols, train->classes, st, err, errlen)
               : am_nn_alloc(spec, train->d, train->classes, st, err, errlen);
}

void nn_cli_open(const cli_args *a, const char *model, am_classset **train, am_classset **test,
                 am_nn **net)
{
    char err[1024];
    am_status st;
    nn_cli_data(a, train, test);
    *net = nn_cli_net(model, *train, &st, err, sizeof err);
    if (!*net) {
        if (st == AM_ENOMEM) cli_usage_error("--model %s (exceeds the memory limit)", err);
        cli_usage_error("--model %s", err);
    }
}

void nn_cli_work_check(const cli_args *a, double runs, double batches, size_t batch, double nparams)
{
    char how[256];
    snprintf(how, sizeof how, "%.3g runs x %.3g batches x %zu rows x %.3g parameters", runs,
             batches, batch, nparams);
    cli_work_check(a, runs * batches * (double)batch * nparams, how);
}

json_t *nn_cli_json_root(const char *command, json_t *params)
{
    json_t *root = cli_json_root(command, params);
    char blas[128];
    am_nn_blas(blas, sizeof blas);
    json_object_set_new(root, "blas", json_string(blas));
    return root;
}

json_t *nn_cli_resolved(const am_nn *net, const am_classset *train, const am_classset *test)
{
    json_t *info = json_object();
    json_object_set_new(info, "parameters", json_integer((json_int_t)am_nn_dim(net)));
    json_object_set_new(info, "train_rows", json_integer((json_int_t)train->n));
    json_object_set_new(info, "test_rows", json_integer((json_int_t)test->n));
    json_object_set_new(info, "features", json_integer((json_int_t)train->d));
    json_object_set_new(info, "classes", json_integer((json_int_t)train->classes));
    return info;
}
