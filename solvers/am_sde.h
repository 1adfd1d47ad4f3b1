/*
 * am_sde.h -- Euler–Maruyama for Ito SDEs dX = b(t, X) dt + S(t, X) dW, and the two
 * streaming-PCA SDE limits of Async-MSGD (theory.md §3).
 *
 * Engine. A system is a plain struct of callbacks: the drift b(t, x) and a noise sampler
 * that writes one draw of S(t, x) dW with dW ~ N(0, dt I), i.e. sqrt(dt) S(t, x) z. One
 * fixed step dt:
 *
 *   X_{k+1} = X_k + b(t_k, X_k) dt + S(t_k, X_k) sqrt(dt) z_k,   t_k = k dt.
 *
 * The normals of step k come from the Philox stream (seed, replica, AM_STREAM_NOISE, k),
 * so a path is a pure function of (seed, replica) whatever thread runs it. A path lives
 * in one block of memory laid out once (init / step / run split, no allocation in the
 * loop). A path diverges when |X| exceeds the blowup bound or stops being finite. An
 * adapter turns a system plus an observer (initial point and observables) into an
 * am_model, so the parallel ensemble of core/am_ensemble.h runs it unchanged. A system may
 * also advance AM_SDE_LANES paths side by side (advance_lanes: the streaming-PCA models at
 * d <= AM_SDE_BATCH_MAXDIM, am_sde_batch.c), with the bytes of one path at a time.
 *
 * Models (h = Q^T V, the eigen-coordinates; both simulate in h, O(d) per step):
 *   global  dV = (1/(1-mu)) P s dt + (sqrt(eta)/(1-mu)) S(V) dW,  S S^T = C(V),
 *           s = Sigma V, q = V^T Sigma V, P = I - V V^T,
 *           C(V) = Cov[P X X^T V] = P Q M Q^T P,
 *           M = diag(lambda_i q + (m4_i - 3 lambda_i^2) h_i^2) + (Lambda h)(Lambda h)^T.
 *           Observables as am_msgd: err = 1 - h_1^2/|h|^2, |h| = |V|, [h_i^2].
 *   ou      U_i, i = 2..d:  dU_i = -((lambda_1 - lambda_i)/(1-mu)) U_i dt + (alpha_i1/(1-mu)) dB_i,
 *           h_i = sqrt(eta) U_i. Observables: err = eta sum U_i^2, norm 1,
 *           [h_1^2 = 1 - eta sum U_i^2, h_i^2 = eta U_i^2].
 * docs/sde.md derives C(V) and the O(d) exact Gaussian sampler used for every distribution.
 */
#ifndef AM_SDE_H
#define AM_SDE_H

#include "../core/am_common.h"
#include "../core/am_rng.h"
#include "../core/am_ensemble.h"
#include "../theory/am_problem.h"

/* ---- generic engine ---------------------------------------------------------------- */

typedef struct {
    double dt;     /* fixed step > 0 */
    int noise;     /* 1: Euler–Maruyama; 0: drift only (explicit Euler for the ODE) */
    double blowup; /* |x| above this (or non-finite) marks the path diverged */
    uint64_t seed; /* Philox key */
} am_sde_params;

/* A system: its drift and noise callbacks, and optionally advance_lanes, which advances
 * AM_SDE_LANES (8) paths side by side (the streaming-PCA models do for d <=
 * AM_SDE_BATCH_MAXDIM, 16). */
#define AM_SDE_LANES 8
#define AM_SDE_BATCH_MAXDIM 16

typedef struct {
    size_t dim;           /* state dimension n >= 1 */
    size_t scratch_bytes; /* scratch memory the callbacks need per path (may be 0) */
    /* Writes the drift b(t, x) into out[0..n-1]. */
    void (*drift)(double t, const double *x, double *out, const void *params, void *scratch);
    /* Writes one draw of S(t, x) sqrt(dt) z, z ~ N(0, I), into out[0..n-1], drawing its
       normals from rng (positioned at the step's counter). */
    void (*noise)(double t, const double *x, double sqrt_dt, am_rng *rng, double *out,
                  const void *params, void *scratch);
    const void *params;
    /* Optional (NULL: one path at a time): advances the n <= AM_SDE_LANES paths of replicas
       replicas[0..n-1] with states x[j][0..dim-1] from step k0 to step k1 side by side, with
       the bytes of n runs of drift and noise (am_sde_path_run); writes each path's return
       value of am_sde_path_run to diverged[j] (a diverged path's state is then
       unspecified). Returns 0, or -1 without touching anything when it does not run these
       parameters (the caller then runs one path at a time). */
    int (*advance_lanes)(const void *params, const am_sde_params *par, double *const *x,
                         const uint64_t *replicas, size_t n, uint64_t k0, uint64_t k1,
                         int *diverged);
} am_sde_system;

/* dt 5e-4, noise on, blowup 1e6, seed 1. */
am_sde_params am_sde_params_default(void);

/* Checks a system and parameters; AM_EINVAL with a reason in err on failure. */
am_status am_sde_check(const am_sde_system *sys, const am_sde_params *par, char *err,
                       size_t errlen);

typedef struct am_sde_path am_sde_path;

/* Allocates a path on the heap; NULL with *status set on failure and a one-line reason in
 * err (err may be NULL). */
am_sde_path *am_sde_path_alloc(const am_sde_system *sys, const am_sde_params *par,
                               am_status *status, char *err, size_t errlen);

/* Frees a path from am_sde_path_alloc; NULL is safe. */
void am_sde_path_free(am_sde_path *path);

/* Starts replica `replica` at step 0 (t = 0) from x0[0..n-1]. */
void am_sde_path_start(am_sde_path *path, uint64_t replica, const double *x0);

/* One Euler–Maruyama step; returns 1 if the new state diverged, else 0. */
int am_sde_path_step(am_sde_path *path);

/* Steps until step index k1 (no-op if already there); stops early and returns 1 on
 * divergence, else returns 0. */
int am_sde_path_run(am_sde_path *path, uint64_t k1);

/* The current state x[0..n-1]. */
const double *am_sde_path_state(const am_sde_path *path);

/* Steps taken since the start. */
uint64_t am_sde_path_steps(const am_sde_path *path);

/* ---- ensemble adapter ------------------------------------------------------------- */

typedef struct {
    size_t nobs; /* observables per saved time */
    /* Writes the initial state of a replica into x0[0..n-1]; AM_OK or a failure. */
    am_status (*initial)(uint64_t replica, double *x0, const void *params);
    /* Writes the nobs observables of state x. */
    void (*observe)(const double *x, double *obs, const void *params);
    const void *params;
} am_sde_observer;

typedef struct am_sde_model am_sde_model;

/* Wraps a system and an observer as an ensemble model (all three must outlive it). NULL
 * with *status set on failure and a one-line reason in err (err may be NULL). */
am_sde_model *am_sde_model_alloc(const am_sde_system *sys, const am_sde_params *par,
                                 const am_sde_observer *obs, am_status *status, char *err,
                                 size_t errlen);

/* Frees the adapter; NULL is safe. */
void am_sde_model_free(am_sde_model *m);

/* The am_model that runs the SDE in am_ensemble_run (with replicas side by side when the
 * system has advance_lanes). */
const am_model *am_sde_model_get(const am_sde_model *m);

/* ---- streaming-PCA models (am_sde_pca.c) ----------------------------------------- */

typedef enum {
    AM_SDE_SAMPLER_FAST = 0, /* exact Gaussian draw of covariance C(V) in O(d) */
    AM_SDE_SAMPLER_DENSE     /* Cholesky of M, O(d^3) per step (reference) */
} am_sde_sampler;

/* Initial point v0[0..d-1] (original coordinates, unit norm) of a replica. */
typedef void (*am_sde_initial_fn)(uint64_t replica, double *v0, const void *ctx);

typedef struct {
    double eta;             /* step of the discrete algorithm (noise scale sqrt(eta)) > 0 */
    double mu;              /* momentum in [0, 1) */
    am_sde_sampler sampler; /* global model only */
    int coords;             /* also observe h_i^2, i = 1..d */
    double blowup;          /* |V| above this marks a replica diverged (ou: |h_perp|) */
    am_sde_initial_fn initial;
    const void *initial_ctx;
} am_sde_pca_params;

/* eta 5e-4, mu 0, fast sampler, no coords, blowup 1e6, no initial point (must be set). */
am_sde_pca_params am_sde_pca_params_default(void);

typedef struct am_sde_pca am_sde_pca;

/* Builds the global small-noise SDE of the problem. AM_EDOM if a fourth moment is
 * infinite, AM_EINVAL on bad parameters, AM_ENOMEM if the dense sampler is too large. */
am_sde_pca *am_sde_pca_global_alloc(const am_problem *p, const am_sde_pca_params *par,
                                    am_status *status);

/* Builds the local OU model near the optimum (state U_2..U_d, dimension d - 1). */
am_sde_pca *am_sde_pca_ou_alloc(const am_problem *p, const am_sde_pca_params *par,
                                am_status *status);

/* Frees a model; NULL is safe. */
void am_sde_pca_free(am_sde_pca *m);

/* The SDE system (drift and noise) of a model. */
const am_sde_system *am_sde_pca_system(const am_sde_pca *m);

/* The observer (initial point and observables err, norm[, h_i^2]) of a model. */
const am_sde_observer *am_sde_pca_observer(const am_sde_pca *m);

/* Blowup bound on the model's state |x| equivalent to par->blowup on |V|. */
double am_sde_pca_state_blowup(const am_sde_pca *m);

/* Paths of the replicas-side-by-side step: one replica at a time (the reference), portable
 * C, AVX2, AVX-512 (F, DQ, VL); every path gives the same bytes. */
typedef enum {
    AM_SDE_SIMD_SCALAR = 0,
    AM_SDE_SIMD_PORTABLE = 1,
    AM_SDE_SIMD_AVX2 = 2,
    AM_SDE_SIMD_AVX512 = 3
} am_sde_simd;

/* A model takes the best path of the CPU for d <= AM_SDE_BATCH_MAXDIM, or the one the
 * environment variable AMSGD_SIMD names (scalar, portable, avx2, avx512, auto), and one
 * replica at a time above. am_sde_pca_set_simd chooses another (a path the CPU lacks, or
 * out of range: the best one); call it before am_sde_model_alloc. am_sde_pca_simd: the
 * path used. */
void am_sde_pca_set_simd(am_sde_pca *m, int simd);
int am_sde_pca_simd(const am_sde_pca *m);

/* The weak-error reference of the global SDE: an ensemble of the global model with noise
 * scale eta and momentum mu, Euler-Maruyama with dt = eta, seed `seed`, every replica
 * started from v0; writes the mean error mean[g] and its standard error sem[g] at the
 * steps round(t[g] / eta), g < n (NaN mean where every replica diverged). */
am_status am_sde_pca_global_error(const am_problem *p, double eta, double mu, uint64_t seed,
                                  double blowup, const double *v0, const double *t, size_t n,
                                  const am_ensemble_params *ep, double *mean, double *sem);

#endif
