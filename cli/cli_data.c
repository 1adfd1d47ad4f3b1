/*
 * cli_data.c -- `--data` and `--project` (see cli_data.h).
 */
#include "cli_data.h"

#include <stdio.h>

#include "../models/am_pcadata.h"

const cli_opt OPT_DATA = {"data", "SOURCE", NULL,
                          "streaming PCA on a data set's centred rows: fashion-mnist, idx:DIR, "
                          "FILE.csv (replaces --dim, --spectrum, --dist, --rotate)"};
const cli_opt OPT_PROJECT = {"project", "K", NULL,
                             "with --data: the top K principal coordinates (2 <= K <= features)"};

am_problem *cli_data_problem(const cli_args *a)
{
    if (!cli_given(a, "data")) {
        if (cli_given(a, "project")) cli_usage_error("--project needs --data SOURCE");
        return NULL;
    }
    static const char *const synthetic[] = {"dim", "spectrum", "dist", "rotate"};
    for (size_t i = 0; i < sizeof synthetic / sizeof *synthetic; i++)
        if (cli_given(a, synthetic[i]))
            cli_usage_error("--%s describes a synthetic problem: drop it with --data (the data "
                            "set gives the dimension and the spectrum)",
                            synthetic[i]);
    size_t k = cli_given(a, "project") ? (size_t)cli_int(a, "project", 2, 100000) : 0;
    const char *spec = cli_str(a, "data");
    am_status st;
    char err[1024];
    am_problem *p = am_pcadata_problem(spec, k, &st, err, sizeof err);
    if (!p) cli_usage_error("--data: %s", err);
    return p;
}

void cli_params_data(json_t *params, const cli_args *a, const am_problem *p)
{
    if (!p->data) return;
    json_object_set_new(params, "data", json_string(cli_str(a, "data")));
    json_object_set_new(params, "project", json_integer((json_int_t)p->data->project));
    json_object_set_new(params, "data_rows", json_integer((json_int_t)p->data->n));
    json_object_set_new(params, "data_features", json_integer((json_int_t)p->data->d_source));
}
