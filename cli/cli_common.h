/*
 * cli_common.h -- the shared flags of design.md (dim, spectrum, dist, eta, mu, delay, init,
 * grid, replicas, seed, threads, format, output) and their resolution into library
 * structs, plus the output helpers (whole-output buffering, CSV, JSON with jansson).
 */
#ifndef AM_CLI_COMMON_H
#define AM_CLI_COMMON_H

#include <stdio.h>

#include <jansson.h>

#include "../core/am_grid.h"
#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"
#include "../montecarlo/am_optim.h"
#include "../theory/am_problem.h"
#include "args.h"

/* --progress: the progress line of the ensembles also when stderr is not a terminal. */
extern const cli_opt OPT_PROGRESS;

/* Starts the progress line of the ensemble runs of a command (am_ensemble_progress_set): on
 * stderr when it is a terminal or --progress is given (never into a pipe or file by default),
 * rank 0 only; "\rCMD: ensemble: DONE/TOTAL replicas, S s elapsed, about L s left", rewritten
 * in place at most every 0.2 s; with several nonzero (a command that runs several ensembles)
 * the ensembles are numbered, "ensemble K: ...". cli_progress_end turns it off and ends the
 * line. */
int cli_progress_start(const cli_args *a, int several);
void cli_progress_end(void);

/* A study's own progress callback (done of total ensembles) for the line of
 * cli_progress_start ("\rCMD: DONE/TOTAL ensembles, ..."); ctx is unused. */
void cli_progress_cells(void *ctx, size_t done, size_t total);

extern const cli_opt OPT_DIM, OPT_SPECTRUM, OPT_DIST, OPT_ROTATE, OPT_ETA, OPT_MU, OPT_DELAY,
    OPT_INIT, OPT_GRID, OPT_REPLICAS, OPT_SEED, OPT_THREADS, OPT_FORMAT, OPT_OUTPUT, OPT_BLOWUP,
    OPT_COORDS, OPT_DELAY_IID;

/* Builds the problem from --dim, --spectrum, --dist, --rotate (exits 2 on bad input). */
am_problem *cli_problem(const cli_args *a);

/* Resolves --eta, --mu, --delay, --init, --seed, --blowup (and --coords if present). */
am_msgd_params cli_msgd_params(const cli_args *a, const am_problem *p);

/* Resolves --grid for the horizon T (--time, validated by the caller). */
am_grid cli_grid(const cli_args *a, double horizon);

/* Resolves --replicas and --threads. */
am_ensemble_params cli_ensemble_params(const cli_args *a);

/* 1 if --format json, 0 if csv. */
int cli_json(const cli_args *a);

/* Adds the resolved problem parameters (dim, spectrum, dist, rotate) to a params object. */
void cli_params_problem(json_t *params, const am_problem *p);

/* Adds the resolved Async-MSGD parameters (eta, mu, delay, init, seed, blowup). */
void cli_params_msgd(json_t *params, const am_msgd_params *m);

/* A new JSON object {command, version, params} (params is stolen). */
json_t *cli_json_root(const char *command, json_t *params);

/* A JSON array of doubles; non-finite values become null. */
json_t *cli_json_doubles(const double *x, size_t n);

/* A JSON number, or null when x is not finite. */
json_t *cli_json_number(double x);

/* Buffered output: everything goes to memory and reaches stdout or the file only when
 * complete (cli_out_write_file). A path "-" is stdout. */
typedef struct {
    const char *path; /* NULL = stdout */
    char *buf;
    size_t len;
    FILE *mem;
} cli_out;

/* Starts an output for --output (or stdout); returns the stream to write to. */
FILE *cli_out_begin(cli_out *o, const cli_args *a);

/* Writes the buffered output to its destination (exits 3 on I/O failure). */
void cli_out_commit(cli_out *o);

/* Writes buf to path: links are followed to their target; an existing device or FIFO is
 * written through (never replaced); a regular or new file is written to a temporary
 * PATH.tmp.PID beside it, fsync'd and renamed over it (the mode of an existing file kept).
 * Exits 3 with the reason on failure. */
void cli_out_write_file(const char *path, const char *buf, size_t len);

/* Writes a JSON value (and frees it) to the output stream. */
void cli_out_json(FILE *f, json_t *root);

/* 1 if x is an integer in [lo, hi] (list entries such as --s and --K). */
int cli_is_integer(double x, double lo, double hi);

/* The comma list of --name as integers in [lo, hi] (one slot more allocated, kept until exit);
 * exits 2 with "--name values must be integers in [lo, hi]<why>, got '...'" otherwise. */
size_t *cli_size_list(const cli_args *a, const char *name, double lo, double hi, const char *why,
                      size_t *n);

/* Writes a deterministic trajectory (ode, dde) through --output: with params NULL the CSV
 * columns t,err,norm[,h2_1..h2_d], one row per saved time; otherwise the JSON of command with
 * params, the keys t, err, norm[, h2] and then solver (both taken over). h2 (n x d) may be
 * NULL. */
void cli_trajectory_write(const cli_args *a, const char *command, json_t *params, json_t *solver,
                          const double *t, const double *err, const double *norm, const double *h2,
                          size_t n, size_t d);

/* The deterministic limits (ode, dde): --eta (recorded only), --mu, --init and --seed,
 * checked against the problem (exits 2 on bad input). */
am_msgd_params cli_limit_msgd(const cli_args *a, const am_problem *p);

/* Exits 2 when --coords (coords != 0) would keep more than AM_MEMORY_LIMIT bytes of h_i^2 on
 * a grid of ngrid saved times in dimension d. */
void cli_limit_coords_check(int coords, size_t ngrid, size_t d);

/* Adds the JSON params of a deterministic limit after its eta and mu: init (the point of
 * replica 0), init_replica, seed, time and grid. */
void cli_params_limit(json_t *params, const am_msgd_params *m, double horizon, size_t ngrid);

/* Exits 2 when --delay is workers:P:DIST, which the command of a (a->cmd) does not take
 * ("... is not available in CMD (use amsgd mc)"). */
void cli_refuse_workers_delay(const cli_args *a, const am_msgd_params *m);

/* Exits 2: the SDE of --dist needs finite fourth moments (student:NU with NU > 4). */
void cli_sde_moments_error(const cli_args *a) __attribute__((noreturn));

/* The bound on total work, checked before computing. The estimate counts elementary updates:
 * one coordinate of one replica advanced by one step (replicas x steps x d, summed over the
 * cells of a sweep), or one learner visited by one update of a parameter-server simulation.
 * At a few nanoseconds per update, the default limit CLI_WORK_LIMIT is about a hundred
 * CPU-hours; the environment variable AMSGD_MAX_WORK sets another limit (a number > 0, or
 * "none"). */
#define CLI_WORK_LIMIT 1e14

/* The limit in force: AMSGD_MAX_WORK or CLI_WORK_LIMIT (INFINITY for "none"); exits 2 naming
 * the variable when it is not a number > 0 or "none". */
double cli_work_limit(void);

/* Exits 2 with one line when work (the estimate; how: its factors, e.g. "1e9 replicas x 1e12
 * steps x d 4") exceeds cli_work_limit(): "CMD: about W updates (HOW) is above the limit L of
 * total work; set AMSGD_MAX_WORK=... to run it anyway". */
void cli_work_check(const cli_args *a, double work, const char *how);

/* Formats a double for CSV (%.10g; non-finite as nan). */
void cli_csv_double(FILE *f, double x);

/* Writes ",v[0],v[1],..." (cli_csv_double each): the numeric columns that follow a row's
 * first fields. */
void cli_csv_more(FILE *f, const double *v, size_t n);

/* The comma list of optimiser names of --optimizer into out[0..max-1]; returns their number.
 * Exits 2 on an unknown name, an empty entry or more than max entries. */
size_t cli_optimizer_list(const cli_args *a, am_optim_kind *out, size_t max);

/* --lr in (0, 1e6] (NaN when not given: each optimiser's own step) and the --tune flag into
 * *tune; exits 2 when both are given. */
double cli_lr_tune(const cli_args *a, int *tune);

#endif
