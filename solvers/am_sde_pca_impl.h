/*
 * am_sde_pca_impl.h -- private to the library: the streaming-PCA SDE models of am_sde.h
 * (am_sde_pca.c) as the replica-batched step (am_sde_batch.c) reads them, and that step's
 * entry points.
 */
#ifndef AM_SDE_PCA_IMPL_H
#define AM_SDE_PCA_IMPL_H

#include "am_sde.h"

struct am_sde_pca {
    const am_problem *p;
    am_sde_pca_params par;
    size_t d;      /* problem dimension */
    int ou;        /* 1: local OU model */
    double c;      /* 1/(1-mu) */
    double sig;    /* sqrt(eta)/(1-mu) */
    double *k4;    /* [d] m4_i - 3 lambda_i^2 (global) */
    int has_neg;   /* some k4_i < 0: the diagonal D may have one negative entry */
    int gauss;     /* every k4_i == 0 (Gaussian data): D_i = lambda_i q */
    int noiseless; /* expected data: no fluctuation */
    double *rate;  /* [d-1] OU decay rates */
    double *amp;   /* [d-1] OU noise amplitudes */
    double state_blowup;
    am_sde_simd simd; /* path of advance_lanes (AM_SDE_SIMD_SCALAR: none) */
    am_sde_system sys;
    am_sde_observer obs;
};

/* The best path this CPU runs: AVX512, AVX2 or PORTABLE. */
am_sde_simd am_sde_batch_best(void);

/* The path for a request: AMSGD_SIMD (auto, avx512, avx2, portable, scalar) when set in the
 * environment, else `auto`; a path the CPU lacks falls back to the best one it has. */
am_sde_simd am_sde_batch_path(void);

/* am_sde_system.advance_lanes of a streaming-PCA model (params: the am_sde_pca) on its path
 * m->simd: -1 for AM_SDE_SIMD_SCALAR, d > AM_SDE_BATCH_MAXDIM, n > AM_SDE_LANES or no
 * memory. */
int am_sde_batch_advance(const void *params, const am_sde_params *par, double *const *x,
                         const uint64_t *replicas, size_t n, uint64_t k0, uint64_t k1,
                         int *diverged);

#endif
