/*
 * sweep_cli.h -- the flags the sweep commands (`amsgd phase`, `amsgd knee`) share, their
 * resolution into am_sweep_cell_params, the progress line and the SIGINT handler of a sweep,
 * and the mapping of a sweep's status to the command's messages and exit codes. The sweeps
 * themselves are library calls (studies/am_phase.h, studies/am_knee.h).
 */
#ifndef AM_CLI_SWEEP_CLI_H
#define AM_CLI_SWEEP_CLI_H

#include <signal.h>

#include <jansson.h>

#include "../studies/am_sweep_cell.h"
#include "args.h"

/* Resolves the shared flags of the sweeps (eta, init, seed, blowup, burnin, eps, time, grid,
 * replicas, threads, delay-model) into s for the problem p (exits 2 naming the flag on bad
 * input); --mu and --delay are not read. */
void sweep_cli_cell_params(am_sweep_cell_params *s, const cli_args *a, const am_problem *p);

/* Adds the resolved shared parameters to a params object (the keys of the JSON output). */
void sweep_cli_params_json(json_t *params, const am_sweep_cell_params *s);

/* Parses a grid spec "A:B:N" (N equally spaced values from A to B) or a comma list into a
 * malloc'd array (exits 2 with a message naming the flag on bad input). */
double *sweep_cli_parse_grid(const char *flag, const char *spec, size_t *n);

/* Progress printer for the progress callbacks of the sweeps (ctx: a FILE *, usually stderr). */
void sweep_cli_progress_print(void *ctx, size_t done, size_t total, size_t computed,
                              double elapsed);

/* 1 if the progress line is shown: not quiet, stderr is a terminal, rank 0. */
int sweep_cli_show_progress(int quiet);

/* Clears the flag and installs the SIGINT handler that sets it (the sweep stops within one
 * saved time of the cell in progress, which is dropped); sweep_cli_sigint_restore puts the
 * previous handler back. */
const volatile sig_atomic_t *sweep_cli_sigint_install(void);
void sweep_cli_sigint_restore(void);

/* Maps the status of a sweep: exits 2 on a checkpoint of other parameters ("--checkpoint:
 * ..."), 3 on other failures (messages name cmd). AM_ECANCELED prints, on rank 0, how far it
 * got in units ("cells", "momenta") and returns 130 (0 on other ranks); AM_OK returns 0. */
int sweep_cli_status(am_status st, const char *err, const char *cmd, const char *units, size_t done,
                     size_t total, const char *checkpoint, int progress_shown);

/* --checkpoint (NULL when absent) and --resume; exits 2 on --resume without --checkpoint. */
void sweep_cli_checkpoint(const cli_args *a, const char **checkpoint, int *resume);

extern const cli_opt OPT_SW_TIME, OPT_SW_GRID, OPT_SW_INIT, OPT_SW_REPLICAS, OPT_BURNIN, OPT_EPS,
    OPT_DELAY_MODEL, OPT_QUIET, OPT_GAMMA, OPT_BOUND_CONST;

#endif
