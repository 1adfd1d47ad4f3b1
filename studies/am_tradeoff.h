/*
 * am_tradeoff.h -- the deep-network experiment of Liu et al. (2018): asynchronous momentum SGD
 * on a network of models/am_nn.h and a labelled set (models/am_classset.h) with P workers whose
 * staleness comes from the parameter-server simulator (montecarlo/am_ps.h), for a grid of
 * momenta mu; test accuracy after a fixed budget of updates, over seeds; the best momentum per
 * worker count with its bootstrap uncertainty.
 *
 * One run (P, mu, seed index i). The server simulator runs the `async` variant (K = 1) with
 * P learners and i.i.d. runtimes X ~ runtime (default exp:1), replica i: every learner starts
 * a job on w_0 at time 0; the earliest finisher's gradient is applied at once (update k turns
 * w_k into w_{k+1}) and that learner restarts on w_{k+1}. The gradient of update k was computed
 * on w_{k - tau_k}, tau_k = the simulator's staleness of update k = the number of updates made by
 * the other learners while its job ran; for P = 1 every tau_k = 0 (synchronous momentum SGD).
 * Job q (q = 0..P-1 the first jobs of learners 0..P-1 at time 0, q = P + k the job started
 * after update k) draws B training rows uniformly with replacement from the Philox stream
 * AM_STREAM_TRADEOFF at (seed, replica i, step q). A gradient depends only on the iterate its
 * learner read and its rows, so it is evaluated when the job starts and held until the job
 * finishes: P gradient buffers replace a ring of snapshots (the staleness of an asynchronous
 * run is unbounded: a ring would need max tau + 2 snapshots), and the result is the same bits.
 * Update k: v <- mu v + g_k, w <- w - lr v (heavy ball, am_optim.h "momentum"), i.e.
 * w_{k+1} = w_k - lr g_k + mu (w_k - w_{k-1}), the update of the paper with eta = lr.
 * Step rule: fixed (the paper's protocol): lr = eta for every mu, so the effective step
 * lr / (1 - mu) grows with mu; effective: lr = eta (1 - mu), the effective step eta is the same
 * for every mu and mu only changes how long a gradient is remembered.
 * The start is am_nn_init(seed, i); runs of one seed index at different mu and P share the
 * start and the rows of every job, runs at one P also the runtimes (common random numbers).
 * Result of a run: the accuracy on the first eval_rows test rows (0: all) after `budget`
 * updates; a run whose loss or parameters stop being finite is diverged, with accuracy 1 / K
 * (chance, K classes).
 *
 * Best momentum of a worker count: the mu of the largest mean accuracy over seeds (ties: the
 * smaller mu). Its uncertainty: a paired bootstrap over seed indices (the same resampled seed
 * indices for every mu of the worker count, since those runs share their random numbers),
 * `resamples` draws from the stream AM_STREAM_TRADE_BOOT at (seed, replica = worker-count
 * index, step = draw); per draw the argmax of the resampled means, an exact tie between k
 * momenta counting 1/k for each (the draw's best mu for the trend: their mean). best_mu_lo,
 * best_mu_hi: the 2.5% and 97.5% quantiles (order statistics ceil(0.025 R), ceil(0.975 R))
 * of the drawn best mu; p_best[mu]: the fraction of draws in which mu is best. One seed has
 * no spread to resample: p_best, the interval and the trend are NaN (null), not certain.
 * Trend: per draw d, the change best_d(P_last) - best_d(P_first) (independent draws per
 * worker count), its mean and 95% percentile interval; "decreases" if the interval is below
 * 0, "increases" if above, else "unresolved". With few seeds the bootstrap has few distinct
 * resamples (10 for 3 seeds) and is narrower than the truth: the interval is a lower bound on
 * the uncertainty.
 *
 * Sweep: cells (P, mu) in the order workers-major, each with its seeds run in parallel over
 * OpenMP (one BLAS thread each), through am_sweep_run (checkpoint, resume, cancellation,
 * progress, MPI over cells): bit-identical for any thread and rank count.
 */
#ifndef AM_TRADEOFF_H
#define AM_TRADEOFF_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../theory/am_runtime.h"

typedef enum { AM_TRADEOFF_STEP_FIXED = 0, AM_TRADEOFF_STEP_EFFECTIVE } am_tradeoff_step_rule;

typedef struct {
    size_t batch;                    /* B rows per gradient */
    uint64_t budget;                 /* updates (= gradients applied) per run */
    double lr;                       /* eta */
    am_tradeoff_step_rule step_rule; /* how eta becomes the step of each mu */
    am_runtime runtime;              /* learner runtimes of the simulator */
    size_t eval_rows;                /* test rows of the final accuracy (0: all) */
    uint64_t seed;
} am_tradeoff_params;

/* B 32, 5000 updates, eta 0.01, fixed step, exp:1 runtimes, all test rows, seed 1. */
am_tradeoff_params am_tradeoff_params_default(void);

/* The step lr of momentum mu under the parameters' rule. */
double am_tradeoff_step(const am_tradeoff_params *p, double mu);

/* Checks the parameters (batch, budget, lr, runtime); AM_EINVAL with a reason naming the
 * field in err. */
am_status am_tradeoff_params_check(const am_tradeoff_params *p, char *err, size_t errlen);

typedef struct {
    double accuracy;       /* test accuracy after the budget (1 / K if diverged) */
    int diverged;          /* 1 if the loss or the parameters stopped being finite */
    double mean_staleness; /* mean tau_k over the updates made */
    double max_staleness;  /* largest tau_k */
} am_tradeoff_outcome;

/* One run of seed index replica with P = workers and momentum mu; the parameters after the
 * last update go to theta_final unless it is NULL. cancel (may be NULL) is polled every 64
 * updates: AM_ECANCELED once it is set. AM_EINVAL for bad parameters (a model that does not
 * match the data included), AM_ENOMEM. */
am_status am_tradeoff_run_one(const am_nn *net, const am_tradeoff_params *p, size_t workers,
                              double mu, const am_classset *train, const am_classset *test,
                              uint64_t replica, const volatile sig_atomic_t *cancel,
                              am_tradeoff_outcome *out, double *theta_final);

/* The staleness tau_0..tau_{n-1} of the updates of a run with P = workers (seed, replica), as
 * the simulator gives them (the sequence am_tradeoff_run_one uses). */
am_status am_tradeoff_staleness(const am_tradeoff_params *p, size_t workers, uint64_t replica,
                                uint64_t n, uint64_t *tau);

/* Best momentum of one worker count from the table acc[m seeds + i] (momentum m, seed index
 * i) of nmu momenta mu[] (increasing) over `seeds` seeds (see the header comment):
 * writes the point estimate, the interval and p_best[nmu]; draws[resamples] (may be NULL)
 * receives the drawn best mu of each bootstrap draw, for am_tradeoff_trend. replica keys the
 * bootstrap stream. AM_EINVAL for an empty table or a NaN entry, AM_ENOMEM. */
typedef struct {
    double best_mu, best_mu_lo, best_mu_hi;
} am_tradeoff_best;

am_status am_tradeoff_best_mu(const double *acc, const double *mu, size_t nmu, size_t seeds,
                              size_t resamples, uint64_t seed, uint64_t replica,
                              am_tradeoff_best *out, double *p_best, double *draws);

typedef enum {
    AM_TRADEOFF_UNRESOLVED = 0,
    AM_TRADEOFF_DECREASES,
    AM_TRADEOFF_INCREASES,
    AM_TRADEOFF_UNCHANGED /* the interval is [0, 0]: the same best momentum in 95 % of draws */
} am_tradeoff_verdict;

/* The trend from the draws of the first and the last worker count: the mean change, its 95%
 * percentile interval and the verdict. */
typedef struct {
    double change, change_lo, change_hi;
    am_tradeoff_verdict verdict;
} am_tradeoff_trend_result;

am_status am_tradeoff_trend(const double *draws_first, const double *draws_last, size_t resamples,
                            am_tradeoff_trend_result *out);

/* The verdict's name: "unresolved", "decreases", "increases", "unchanged". */
const char *am_tradeoff_verdict_name(am_tradeoff_verdict v);

typedef struct {
    am_tradeoff_params base;
    size_t nworkers;
    const size_t *workers; /* P values, increasing, >= 1 */
    size_t nmu;
    const double *mu;       /* momenta in [0, 1), increasing */
    size_t seeds;           /* seed indices 0..seeds-1 */
    size_t resamples;       /* bootstrap draws (default 2000) */
    int threads;            /* 0 = all cores */
    const char *data_id;    /* text naming the data set (the --data spec), for the fingerprint */
    const char *checkpoint; /* NULL: none */
    int resume;
    const volatile sig_atomic_t *cancel;
    void (*progress)(void *ctx, size_t done, size_t total, size_t computed, double elapsed);
    void *progress_ctx;
} am_tradeoff_sweep;

/* A sweep with no grids, the default parameters, 3 seeds, 2000 resamples, all cores, no
 * checkpoint, no cancel flag, no progress. */
am_tradeoff_sweep am_tradeoff_sweep_default(void);

/* Checks a sweep (grids, seeds, resamples, parameters); AM_EINVAL with a reason in err. */
am_status am_tradeoff_sweep_check(const am_tradeoff_sweep *sw, char *err, size_t errlen);

typedef struct {
    size_t workers;
    double mu, lr;
    double *accuracy;      /* [seeds] per seed index */
    double accuracy_mean;  /* over seeds */
    double accuracy_sem;   /* standard error over seeds (NaN for one seed) */
    size_t diverged;       /* seeds diverged */
    double mean_staleness; /* mean over seeds of the runs' mean staleness */
    double max_staleness;  /* largest over seeds */
    double p_best;         /* bootstrap probability that this mu is the best of its P */
} am_tradeoff_cell;

typedef struct {
    size_t ncells, nworkers, nmu, seeds;
    am_tradeoff_cell *cells;        /* [w nmu + m] */
    am_tradeoff_best *best;         /* [nworkers] */
    am_tradeoff_trend_result trend; /* first against last worker count (nworkers >= 2) */
    size_t cells_done;              /* < ncells after a cancel */
    double *seed_acc;               /* [ncells seeds] storage of the cells' accuracy */
} am_tradeoff_result;

/* Runs the sweep. AM_OK with every cell; AM_ECANCELED when the cancel flag stopped it (the
 * finished cells are in the checkpoint; *result holds cells_done, without statistics); AM_EINVAL
 * with a reason in err for bad parameters or a checkpoint of other parameters; other failures of a
 * run. On MPI ranks other than 0 the result holds only the cells of that rank (cells_done counts
 * them). */
am_status am_tradeoff_run(const am_tradeoff_sweep *sw, const am_nn *net, const am_classset *train,
                          const am_classset *test, am_tradeoff_result **result, char *err,
                          size_t errlen);

/* Frees a result; NULL is safe. */
void am_tradeoff_result_free(am_tradeoff_result *r);

#endif
