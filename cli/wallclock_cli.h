/*
 * wallclock_cli.h -- what the three forms of `amsgd wallclock` share: the plain run
 * (cmd_wallclock.c), --model (cmd_wallclock_model.c) and --sweep (cmd_wallclock_sweep.c).
 */
#ifndef AM_CLI_WALLCLOCK_H
#define AM_CLI_WALLCLOCK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/am_stats.h"
#include "../studies/am_wallclock_sweep.h"
#include "args.h"

/* The options of the parameter-server runs that more than one form takes. */
extern const cli_opt OPT_WK, OPT_RT, OPT_VARS, OPT_UPD, OPT_ETA_W, OPT_LMAX, OPT_LMIN, OPT_SIGMA,
    OPT_GRID_W;

/* The mean of a statistic, NaN without values. */
double wallclock_cli_mean(const am_stats *s);

/* Parses the comma list of variants of --variants: NAME or NAME:K, and with allow_div also
 * NAME:P/D (K = max(1, P / D) per worker count); K checked against every P of ps[0..np-1].
 * Exits 2 on a bad entry. */
am_wallclock_sweep_variant *wallclock_cli_variants(const char *vl, const size_t *ps, size_t np,
                                                   int allow_div, size_t *nv_out);

/* The spec of a variant with its K ("k-sync:4", "async"). */
void wallclock_cli_variant_spec(am_variant v, size_t k, char *buf, size_t len);

/* A named number of a JSON result (NaN written as null). */
typedef struct {
    const char *key;
    double value;
} wallclock_cli_key;

/* Sets keys[0..n-1] on o, each as cli_json_number. */
void wallclock_cli_json_keys(json_t *o, const wallclock_cli_key *keys, size_t n);

/* Writes v[0..n-1] to a CSV row, each followed by a comma. */
void wallclock_cli_csv_values(FILE *f, const double *v, size_t n);

/* The last two JSON params of every form: "seed" (a string: 64 bits kept in any JSON reader)
 * and "threads". */
void wallclock_cli_json_seed_threads(json_t *params, uint64_t seed, int threads);

/* wallclock --model and wallclock --sweep (argv as cmd_wallclock's). */
int cmd_wallclock_model(int argc, char **argv);
int cmd_wallclock_sweep(int argc, char **argv);

#endif
