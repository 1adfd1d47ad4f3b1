/*
 * am_wallclock_sweep.h -- the least-squares wallclock study (am_wallclock.h) over worker
 * counts P, learner runtime laws and seeds: per (law, P, variant) the measured time per update
 * and error floor with their spread over seeds, next to Dutta et al.'s closed forms.
 *
 * Cell (law, P), seed index i: am_wallclock_run with the law, P workers, Philox key seed + i
 * and the base parameters (updates N, replicas R, step, problem). Per variant and seed:
 *   time_per_update   (T_{k_G-1} - T_{k_g0}) / (k_G-1 - k_g0), g0 = floor((G - 1) / 4): the
 *                     time per update past the first quarter of the saved updates k_g, from
 *                     the replica means of am_wallclock.h (the closed forms are stationary;
 *                     T_N / N would carry the start-up transient: learners all start fresh at
 *                     time 0, 0.3 % at P = 16 under shiftexp:1:1)
 *   floor_measured, decay_measured, p0, gamma, floor_dutta_async, decay_dutta_async
 *                     the am_wallclock.h values of that seed
 * Each is reduced to a mean and a standard error over the seeds (am_stats; the spread of
 * seed-level values, each a mean over R replicas). Closed forms per cell:
 *   time_per_update_dutta  am_runtime_time_per_iter (NaN where the toolkit has none: K-async
 *                          under non-exponential runtimes, 1 < K < P)
 *   p0_dutta               am_runtime_p_fresh (NaN where none is known)
 *   floor_exact, floor_dutta, decay_exact, decay_dutta
 *                          as in am_wallclock.h (the same for every seed)
 * A variant's K is either fixed or P / k_div (at least 1) per cell.
 */
#ifndef AM_WALLCLOCK_SWEEP_H
#define AM_WALLCLOCK_SWEEP_H

#include <stddef.h>

#include "../core/am_common.h"
#include "../core/am_stats.h"
#include "../theory/am_runtime.h"
#include "../montecarlo/am_wallclock.h"

/* A variant of the sweep: K fixed, or K = max(1, P / k_div) per worker count when k_div > 0. */
typedef struct {
    am_variant variant;
    size_t k;
    size_t k_div;
} am_wallclock_sweep_variant;

typedef struct {
    am_wallclock_params base; /* objective lsq; workers, runtime, seed, variants set per cell */
    const am_wallclock_sweep_variant *variants; /* [nvariants] */
    size_t nvariants;
    const size_t *workers; /* [nworkers] */
    size_t nworkers;
    const am_runtime *laws; /* [nlaws] */
    size_t nlaws;
    size_t seeds; /* >= 2 for standard errors */
} am_wallclock_sweep;

/* One (law, P, variant). */
typedef struct {
    size_t law, workers;
    am_variant variant;
    size_t k, batch; /* K of the cell; gradients per update */
    am_stats time_per_update, floor_measured, decay_measured, p0, gamma, floor_dutta_async,
        decay_dutta_async;
    double time_per_update_dutta, p0_dutta, floor_exact, floor_dutta, decay_exact, decay_dutta;
    size_t diverged; /* replicas diverged, summed over seeds */
} am_wallclock_sweep_cell;

typedef struct {
    size_t ncells;                  /* nlaws x nworkers x nvariants */
    am_wallclock_sweep_cell *cells; /* [(law nworkers + w) nvariants + v] */
} am_wallclock_sweep_result;

/* The K of a variant for P workers: k, or max(1, P / k_div) when k_div > 0. */
size_t am_wallclock_sweep_k(const am_wallclock_sweep_variant *v, size_t workers);

/* Runs every cell and seed (each am_wallclock_run in parallel over its replicas) and reduces
 * in seed order. On failure a one-line reason in err. Free *res with
 * am_wallclock_sweep_result_free (also after a failure). */
am_status am_wallclock_sweep_run(const am_wallclock_sweep *sw, am_wallclock_sweep_result *res,
                                 char *err, size_t errlen);

/* Frees a result; safe on a zeroed or failed result. */
void am_wallclock_sweep_result_free(am_wallclock_sweep_result *res);

#endif
