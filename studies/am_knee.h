/*
 * am_knee.h -- the critical delay tau_c(mu) of Async-MSGD per momentum and the exponent p of
 * tau_c ∝ (1-mu)^p.
 *
 * The first critical integer delay hi (am_knee_critical: the stationary error of the cell,
 * am_sweep_cell.h, exceeds F times its tau = 0 value, or more than the fraction diverged_max
 * of its replicas diverge) is found by bracketing (doubling) and integer bisection
 * (am_sweep_search_int), and the K delays on each side of it are also evaluated. tau_c(mu) is
 * the crossing located inside the bracket [lo, hi] = [hi - 1, hi] (am_knee_crossing): the
 * log error ratio interpolated linearly to log F, or the diverged fraction linearly to
 * diverged_max, whichever crosses first; it lies in [lo, hi), so the one-sided rounding of the
 * integer rule is gone. Its uncertainty comes from a bootstrap over replicas:
 * replicate b draws R replica indices with replacement from the Philox stream
 * (seed, b, AM_STREAM_KNEE_BOOT) only, the same indices in every cell and every momentum, which
 * keeps the common-random-number correlation between cells (replica r of every cell uses the
 * same data stream). Within one momentum, replicate b recomputes the threshold from the
 * resampled tau = 0 cell, takes the smallest evaluated delay whose resampled cell exceeds it
 * and interpolates the crossing between it and the evaluated delay before it (one step apart
 * around tau_c, where the evaluated delays are dense), so every replicate carries the
 * interpolation's own variability. tau_c_sem is the
 * standard deviation of the replicates, [tau_c_lo, tau_c_hi] their 2.5 % and 97.5 %
 * quantiles. The exponent is the least-squares slope of log tau_c on log (1-mu)
 * (am_sweep_fit_power), its interval the quantiles of the slopes refitted per replicate;
 * the same fit of the linear-stability and delay-equation curves gives their exponents, next
 * to the paper's p = 2. Each momentum is one cell of the checkpointed, resumable,
 * cancellable (in the MPI build distributed) sweep of am_sweep.h.
 *
 * With seeds S > 1 the whole search runs for the seeds seed, seed + 1, ..., seed + S - 1
 * (sweep cell s nmu + i is seed s, momentum i, so the seed is part of the cell identity).
 * The per-momentum table and its bootstrap stay those of the first seed; tau_c_seeds,
 * tau_c_mean and tau_c_sd give the spread over seeds, and the exponent becomes the mean of
 * the S per-seed fitted slopes with interval mean -/+ t_{n-1, 0.975} sd / sqrt(n) over the
 * n seeds with a defined slope (the per-seed slopes carry each seed's sampling noise, so the
 * interval includes the seed-to-seed variation and always contains the point estimate).
 */
#ifndef AM_KNEE_H
#define AM_KNEE_H

#include <signal.h>

#include "am_sweep_cell.h"

typedef struct {
    am_sweep_cell_params cell; /* delay_kind AM_DELAY_CONST or AM_DELAY_UNIFORM */
    const double *mu;          /* [nmu] momenta in [0, 1) */
    size_t nmu;
    double factor;          /* F > 1 */
    uint64_t tau_max;       /* largest delay searched, in [1, 1000000] */
    size_t bootstrap;       /* replicates B (0 = none), at most 100000 */
    uint64_t refine;        /* K neighbours of tau_c on each side, at most 1000 */
    double gamma;           /* gamma in (0, 1] of the paper's bound */
    double bound_constant;  /* C > 0 of the paper's bound */
    double diverged_max;    /* critical when more than this fraction diverged, in [0, 1) */
    size_t seeds;           /* S independent seeds seed, seed + 1, ..., in [1, 10000] */
    const char *checkpoint; /* checkpoint file, or NULL */
    int resume;             /* continue from the checkpoint (needs checkpoint) */
    /* nonzero: stop; the delay in evaluation stops at its replicas' next saved time and the
       momentum in progress is dropped (recomputed on resume), finished momenta are kept */
    const volatile sig_atomic_t *cancel;
    /* Called on rank 0 after each finished momentum (see am_sweep_params); may be NULL. */
    void (*progress)(void *ctx, size_t done, size_t total, size_t computed, double elapsed);
    void *progress_ctx;
} am_knee_params;

typedef struct {
    size_t nmu, bootstrap, seeds;
    size_t cells_done;             /* finished momenta (< nmu after a cancel) */
    unsigned char *done;           /* [nmu] */
    double *mu;                    /* [nmu] copy of the momenta */
    double *one_minus_mu;          /* [nmu] 1 - mu */
    double *tau_c;                 /* [nmu] critical delay, interpolated (NaN: none <= tau_max) */
    double *tau_c_bracket_lo;      /* [nmu] last non-critical integer delay below (NaN if none) */
    double *tau_c_bracket_hi;      /* [nmu] first critical one: lo + 1, or 0 with lo = 0 */
    double *tau_c_sem;             /* [nmu] standard deviation of the bootstrap replicates */
    double *tau_c_lo, *tau_c_hi;   /* [nmu] 95 % percentile interval */
    double *tau_c_fit;             /* [nmu] exp(log_c) (1-mu)^exponent */
    double *tau_c_boot;            /* [nmu * bootstrap] replicate b of momentum i at i * B + b */
    double *tau_c_linear;          /* [nmu] linear-stability critical delay (axis units) */
    double *tau_c_dde;             /* [nmu] its delay-equation approximation */
    double *tau_bound_paper;       /* [nmu] the paper's bound */
    double *err_tau0;              /* [nmu] stationary error at tau = 0 */
    double *err_tau0_sem;          /* [nmu] its standard error */
    double *err_at_tau_c;          /* [nmu] stationary error at tau_c_bracket_hi (NaN if none) */
    size_t *cells_evaluated;       /* [nmu] delays evaluated by the search and refinement */
    double *tau_c_seeds;           /* [nmu * seeds] tau_c of seed s of momentum i at i * S + s */
    double *tau_c_mean, *tau_c_sd; /* [nmu] mean and sd of the finite tau_c_seeds (NaN if <1/<2) */
    double *exponent_seeds;        /* [seeds] slope fitted to each seed's tau_c */
    double exponent, log_c;        /* fit tau_c = exp(log_c) (1-mu)^exponent (NaN if undefined) */
    /* seeds = 1: bootstrap interval and sd of the slope; seeds > 1: mean -/+ t sd / sqrt(n)
       and the sd of the per-seed slopes */
    double exponent_lo, exponent_hi, exponent_sd;
    double exponent_paper;                /* 2 */
    double exponent_linear, exponent_dde; /* slopes of the theory curves */
} am_knee_result;

/* Defaults: am_sweep_cell_params_default(), no momenta (must be set), factor 2, tau_max 4096,
 * 200 bootstrap replicates, refine 3, gamma and bound constant AM_THEORY_BOUND_GAMMA and
 * AM_THEORY_BOUND_C (theory/am_theory.h), diverged_max 0.05,
 * 1 seed, no checkpoint, no cancel flag, no progress. */
am_knee_params am_knee_params_default(void);

/* 1 when a delay is critical: more than the fraction diverged_max of the replicas diverged
 * (diverged is the fraction) or the error err is not <= factor x base (NaN counts). */
int am_knee_critical(double err, double base, double diverged, double factor, double diverged_max);

/* The crossing inside the bracket lo < hi of two evaluated delays, lo not critical and hi
 * critical (am_knee_critical), from their errors err_lo, err_hi and diverged fractions div_lo,
 * div_hi against the tau = 0 error base. With the error ratios r = err / base and
 * dmax = diverged_max,
 *   by the error (r_hi > factor):    t_e = lo + (hi - lo) ln(factor / r_lo) / ln(r_hi / r_lo)
 *                                    (linear in r instead when r_lo <= 0),
 *   by divergence (div_hi > dmax):   t_d = lo + (hi - lo) (dmax - div_lo) / (div_hi - div_lo),
 * and the crossing is the smaller of those that apply, in [lo, hi); hi when neither applies
 * (e.g. a non-finite base). */
double am_knee_crossing(double lo, double hi, double err_lo, double err_hi, double div_lo,
                        double div_hi, double base, double factor, double diverged_max);

/* Bytes of the replicas' summaries one momentum keeps at most (replicas x 3 doubles per
 * evaluated delay, over the most delays the search and the refinement evaluate). */
double am_knee_memory(const am_knee_params *params);

/* Checks the parameters; AM_EINVAL with a reason in err, AM_ENOMEM when am_knee_memory
 * exceeds AM_MEMORY_LIMIT. */
am_status am_knee_params_check(const am_knee_params *params, char *err, size_t errlen);

/* Runs the search for every momentum into *result (free with am_knee_result_free). Returns
 * AM_OK when every momentum is finished; AM_ECANCELED when the cancel flag stopped the run
 * (*result holds the finished momenta, which the checkpoint keeps); AM_EINVAL with a reason
 * in err for bad parameters or a checkpoint of other parameters; AM_ENOMEM when the
 * replicas' summaries kept per evaluated delay exceed the memory limit; AM_EIO on a
 * checkpoint file error; or the first failure of a cell. In the MPI build ranks other than
 * 0 hold only their own momenta. */
am_status am_knee_run(const am_knee_params *params, am_knee_result **result, char *err,
                      size_t errlen);

/* Frees a result; NULL is safe. */
void am_knee_result_free(am_knee_result *result);

#endif
