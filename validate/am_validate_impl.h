/*
 * am_validate_impl.h -- private to validate/: the entry of every check family of the table in
 * am_validate.c (one file each, validate/am_vf_<family>.c) and the helpers they share
 * (validate/am_vf_util.c): the test problem d = 4, lambda = (4, 3, 2, 1), the bounded row
 * buffer, the ensemble wrapper that keeps per-replica series or first-passage times, and the
 * deterministic order estimate of a noise-free ladder.
 */
#ifndef AM_VALIDATE_IMPL_H
#define AM_VALIDATE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd.h"
#include "../theory/am_problem.h"
#include "am_check.h"
#include "am_converge.h"
#include "am_validate.h"

/* Half-width of every Monte Carlo interval: z = 3 standard errors (two-sided level 0.9973). */
#define AM_VF_Z 3.0

/* ---- the families (one entry each, am_validate_fn; c is the family's row of the table) ---- */
am_status am_vf_ode_order_run(const am_validate_check *c, const am_validate_opts *o,
                              am_check_result *rows, size_t *nrows);
am_status am_vf_stationary_run(const am_validate_check *c, const am_validate_opts *o,
                               am_check_result *rows, size_t *nrows);
am_status am_vf_relaxation_run(const am_validate_check *c, const am_validate_opts *o,
                               am_check_result *rows, size_t *nrows);
am_status am_vf_escape_run(const am_validate_check *c, const am_validate_opts *o,
                           am_check_result *rows, size_t *nrows);
am_status am_vf_sde_run(const am_validate_check *c, const am_validate_opts *o,
                        am_check_result *rows, size_t *nrows);
am_status am_vf_delay_run(const am_validate_check *c, const am_validate_opts *o,
                          am_check_result *rows, size_t *nrows);
am_status am_vf_asyncmom_run(const am_validate_check *c, const am_validate_opts *o,
                             am_check_result *rows, size_t *nrows);
am_status am_vf_delay_scaling_run(const am_validate_check *c, const am_validate_opts *o,
                                  am_check_result *rows, size_t *nrows);
am_status am_vf_dde_run(const am_validate_check *c, const am_validate_opts *o,
                        am_check_result *rows, size_t *nrows);
am_status am_vf_runtime_run(const am_validate_check *c, const am_validate_opts *o,
                            am_check_result *rows, size_t *nrows);
am_status am_vf_async_bound_run(const am_validate_check *c, const am_validate_opts *o,
                                am_check_result *rows, size_t *nrows);
am_status am_vf_speedup_run(const am_validate_check *c, const am_validate_opts *o,
                            am_check_result *rows, size_t *nrows);
am_status am_vf_runtime_bound_run(const am_validate_check *c, const am_validate_opts *o,
                                  am_check_result *rows, size_t *nrows);
/* One row of runtime-bound (am_vf_runtime.c): K-async with P workers and the runtime law
 * `law` (an am_runtime_parse spec), time per update against Dutta's bound E[X_{K:P}],
 * decided one-sidedly with the band c->margin of the bound; the power tests call it with a
 * law outside the bound's assumption. */
am_status am_vf_runtime_bound_row(const am_validate_check *c, const am_validate_opts *o,
                                  const char *law, size_t workers, size_t k, am_check_result *row);

/* ---- shared helpers (am_vf_util.c) ---- */

/* Two-sided level of z = AM_VF_Z. */
double am_vf_util_level(void);

/* The test problem d = 4, lambda = (4, 3, 2, 1), standard eigenbasis, data kind; NULL on
 * allocation failure. */
am_problem *am_vf_util_problem(am_dist_kind kind);

/* The Async-MSGD parameters of a family's run (am_msgd_params_default otherwise, no delay):
 * step eta, momentum mu, seed, the initial point e_j (j >= 1; 0 keeps the default) and the
 * observed coordinates: 0 none, 1 the squares h_i^2, 2 the signed h_i. */
am_msgd_params am_vf_util_msgd(double eta, double mu, uint64_t seed, size_t j, int coords);

/* The next row of a buffer of cap rows, *n of them used: initialised with name (am_check_init)
 * and counted; NULL if the buffer is full (the table's max_rows is too small). */
am_check_result *am_vf_util_row(am_check_result *rows, size_t cap, size_t *n, const char *name);

/* The prediction the row is decided against: predict_scale p + predict_shift S, S the row's
 * scale (|p| for magnitudes, 1 for orders, the gap to the ODE for sde). */
double am_vf_util_predict(const am_validate_opts *o, double predicted, double scale);

/* The one-sided reading of a decided row's interval measured +- halfwidth and band tolerance:
 * the claim is measured >= predicted - tolerance (lower) or measured <= predicted + tolerance
 * (otherwise). PASS or FAIL when the interval lies on one side, else INCONCLUSIVE with the
 * replicas needed; the rule "one-sided". */
void am_vf_util_one_sided(am_check_result *row, int lower);

/* Copies a decided check into row, keeping row's name and params. */
void am_vf_util_take_check(am_check_result *row, const am_check_result *check);

/* Steps of a stationary run: burn-in, then n samples every s steps (malloc'd; NULL on failure). */
uint64_t *am_vf_util_steps(uint64_t burn, uint64_t s, size_t n);

typedef enum { AM_VF_SERIES = 0, AM_VF_FIRST_PASSAGE } am_vf_mode;

/* Runs the Async-MSGD engine of (p, mp) on the steps k[0..n-1] keeping, per replica, either the
 * series of the observables cols[0..ncol-1] (ncol <= 8; summary[j * n + g], NaN if diverged) or
 * the first saved time times[g] with observable cols[0] >= threshold (+INFINITY if none, NaN if
 * diverged). *res keeps every replica's summary (am_ensemble_result_free). */
am_status am_vf_util_run_wrapped(const am_problem *p, const am_msgd_params *mp, const size_t *cols,
                                 size_t ncol, am_vf_mode mode, double threshold,
                                 const double *times, const uint64_t *k, size_t n, size_t replicas,
                                 int threads, am_ensemble_result **res);

/* A deterministic order row: runs the noise-free ladder cp on p with one replica; the row is
 * am_converge's decision (finest local slope +- 2x its Richardson bias estimate). */
am_status am_vf_util_order_deterministic(am_converge_params *cp, const am_problem *p,
                                         am_check_result *row);

#endif
