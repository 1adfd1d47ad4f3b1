/*
 * cli_data.h -- `--data SOURCE` and `--project K`: streaming PCA on a real data set
 * (docs/pca-data.md) for mc, theory, phase and knee.
 */
#ifndef AM_CLI_DATA_H
#define AM_CLI_DATA_H

#include <jansson.h>

#include "../theory/am_problem.h"
#include "args.h"

extern const cli_opt OPT_DATA, OPT_PROJECT;

/* The data problem of --data/--project, or NULL without --data (then the caller builds
 * the synthetic one). Exits 2 with one line on a bad source, a bad K, --project without
 * --data, or --data together with --dim, --spectrum, --dist or --rotate. */
am_problem *cli_data_problem(const cli_args *a);

/* Adds data, project, data_rows and data_features to a params object (nothing without
 * --data). */
void cli_params_data(json_t *params, const cli_args *a, const am_problem *p);

#endif
