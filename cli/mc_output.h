/*
 * mc_output.h -- the writer of an ensemble run (studies/am_run.h) in the keys shared by
 * `amsgd mc` and `amsgd sde`: t, step, err_mean, err_sem, norm_mean, norm_sem, alive,
 * diverged, replicas (and h2_mean, h2_sem with --coords; wallclock_mean, wallclock_sem,
 * clamped_mean, clamped_sem for the parameter-server delay workers:P:DIST).
 */
#ifndef AM_CLI_MC_OUTPUT_H
#define AM_CLI_MC_OUTPUT_H

#include <stdio.h>

#include <jansson.h>

#include "../studies/am_run.h"

/* Writes a run as CSV or JSON ({command, version, params, ...}); params is stolen. */
void mc_write(FILE *f, int json, const char *command, json_t *params, const am_run_result *run);

/* Exits with the usage error of an ensemble that would exceed the memory limit (--grid and
 * --threads name the request), if that is why the run failed. */
void mc_check_memory(am_status st, const am_run_result *run, int threads);

#endif
