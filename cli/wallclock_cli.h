/*
 * wallclock_cli.h -- what the three forms of `amsgd wallclock` share: the plain run
 * (cmd_wallclock.c), --model (cmd_wallclock_model.c) and --sweep (cmd_wallclock_sweep.c).
 */
#ifndef AM_CLI_WALLCLOCK_H
#define AM_CLI_WALLCLOCK_H

#include <stddef.h>

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

/* wallclock --model and wallclock --sweep (argv as cmd_wallclock's). */
int cmd_wallclock_model(int argc, char **argv);
int cmd_wallclock_sweep(int argc, char **argv);

#endif
