/*
 * sweep_cell.h -- one cell of a momentum-delay sweep: the Async-MSGD ensemble at (mu, delay)
 * and its per-cell metrics, shared by `amsgd phase` and `amsgd knee`.
 *
 * Per replica r the engine's summary gives the time average e_r of err over the saved points
 * after the burn-in fraction, and the first saved time with err <= eps. The cell's stationary
 * error is the mean of e_r over the replicas that did not diverge, with the standard error
 * over replicas (independent, so honest without an autocorrelation correction).
 */
#ifndef AM_CLI_SWEEP_CELL_H
#define AM_CLI_SWEEP_CELL_H

#include <jansson.h>

#include "../montecarlo/am_msgd.h"
#include "../montecarlo/am_sweep.h"
#include "args.h"

typedef struct {
    const am_problem *p;
    am_msgd_params base; /* eta, init, seed, blowup, burnin, eps (mu and delay set per cell) */
    am_delay_kind kind;  /* delay model of the delay axis */
    double horizon;      /* T */
    size_t ngrid;
    uint64_t *k; /* saved steps */
    am_ensemble_params ep;
} sweep_setup;

/* Values of one cell, in this order (SWEEP_NVALUES doubles). */
enum {
    SV_ERR = 0,  /* mean stationary error over non-diverged replicas */
    SV_ERR_SEM,  /* its standard error */
    SV_DIVERGED, /* fraction of replicas diverged */
    SV_TIME,     /* mean first time with err <= eps (over replicas reaching it) */
    SV_TIME_SEM, /* its standard error */
    SV_REACHED,  /* fraction of replicas reaching err <= eps */
    SWEEP_NVALUES
};

/* Resolves the shared flags of the sweeps (problem, eta, init, seed, blowup, time, grid,
 * burnin, eps, replicas, threads) into s; --mu and --delay are not read. */
void sweep_setup_init(sweep_setup *s, const cli_args *a, am_problem *p);

/* Frees what sweep_setup_init allocated (not the problem). */
void sweep_setup_free(sweep_setup *s);

/* Delay model of kind s->kind with parameter x (0 means no delay). */
am_status sweep_delay(const sweep_setup *s, double x, am_delay *d);

/* Runs the cell (mu, delay parameter x) into v[SWEEP_NVALUES]; if per_replica is not NULL it
 * receives a malloc'd array of the replicas' summaries (R * AM_MSGD_NSUMMARY). */
am_status sweep_cell_run(const sweep_setup *s, double mu, double x, double *v,
                         double **per_replica);

/* Adds the resolved shared parameters to a params object. */
void sweep_params_json(json_t *params, const sweep_setup *s);

/* Parses a grid spec "A:B:N" (N equally spaced values from A to B) or a comma list into a
 * malloc'd array (exits 2 with a message naming the flag on bad input). */
double *sweep_parse_grid(const cli_args *a, const char *flag, const char *spec, size_t *n);

/* Parses --delay-model (const, uniform, geometric). */
am_delay_kind sweep_delay_kind(const cli_args *a);

/* Progress printer for am_sweep_params.progress (ctx: a FILE *, usually stderr). */
void sweep_progress_print(void *ctx, size_t done, size_t total, size_t computed, double elapsed);

/* Runs a sweep the way every sweep command does: checkpoint file and --resume with the
 * fingerprint of the parameters, SIGINT stops cleanly after the cell in progress, progress
 * on stderr when it is a terminal (unless quiet). Exits 2 on a checkpoint that does not
 * match, 3 on other failures (messages name cmd). On rank 0, when stopped early, prints how
 * far it got in units ("cells", "momenta") and returns 0; otherwise returns 1. */
int sweep_run_cli(const am_sweep_problem *prob, const char *checkpoint, int resume,
                  const char *fingerprint, int quiet, const char *cmd, const char *units,
                  double *values, unsigned char *done);

extern const cli_opt OPT_SW_TIME, OPT_SW_GRID, OPT_SW_INIT, OPT_SW_REPLICAS, OPT_BURNIN, OPT_EPS,
    OPT_DELAY_MODEL, OPT_QUIET, OPT_GAMMA, OPT_BOUND_CONST;

#endif
