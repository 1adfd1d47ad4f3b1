/*
 * am_msgd_batch.h -- the Async-MSGD step of am_msgd.h for several replicas side by side.
 *
 * AM_MSGD_LANES replicas share one register per coordinate (structure of arrays: state
 * [slot][coordinate][lane]); every lane draws its own replica's counter-based numbers and
 * performs the one-replica path's operations in the same order, with no fused
 * multiply-add, so the result is the one-replica result byte for byte. The same code is
 * compiled for AVX-512 (8 replicas per register), AVX2 (4 per register, two registers per
 * lane group) and portable C; the path is chosen at run time (am_msgd_batch_path). One
 * call advances one lane group or two (AM_MSGD_GROUPS) side by side, whose step-to-step
 * dependency chains overlap; at d = 2, 3, 4 the Gaussian, Rademacher and uniform data have
 * bodies of their own with the current and previous iterates in registers.
 * Internal to the engine (am_msgd.c); for d <= AM_MSGD_BATCH_MAXDIM.
 */
#ifndef AM_MSGD_BATCH_H
#define AM_MSGD_BATCH_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"
#include "am_delay.h"

/* Replicas per lane group, lane groups advanced together (their dependency chains
 * overlap), replicas per call, and the largest dimension of the batched path. */
#define AM_MSGD_LANES 8
#define AM_MSGD_GROUPS 2
#define AM_MSGD_BATCH_REPLICAS (AM_MSGD_GROUPS * AM_MSGD_LANES)
#define AM_MSGD_BATCH_MAXDIM 16

/* Paths of the batched step: one replica at a time (the reference), portable C, AVX2,
 * AVX-512 (F, DQ, VL). */
typedef enum {
    AM_MSGD_PATH_SCALAR = 0,
    AM_MSGD_PATH_PORTABLE = 1,
    AM_MSGD_PATH_AVX2 = 2,
    AM_MSGD_PATH_AVX512 = 3
} am_msgd_path;

/* What the batched step needs of the engine. */
typedef struct {
    const am_problem *p;
    const am_delay *delay;
    const double *sigma; /* dense Sigma (rotated, expected) or NULL */
    uint64_t seed;
    size_t ring_len; /* L: slots of each replica's ring of iterates */
    double eta, mu, blowup;
} am_msgd_batch;

/* The best path this CPU runs: AVX512, AVX2 or PORTABLE. */
am_msgd_path am_msgd_batch_best(void);

/* The path for a request: AMSGD_SIMD (auto, avx512, avx2, portable, scalar) when set in the
 * environment, else `auto`; a path the CPU lacks falls back to the best one it has. */
am_msgd_path am_msgd_batch_path(void);

/* Advances n <= AM_MSGD_BATCH_REPLICAS replicas (one lane group, or two when n >
 * AM_MSGD_LANES) from step k0 to step k1: rings[j] is replica
 * replicas[j]'s ring (L * d doubles, slot s at rings[j] + s d, slot k mod L holding v_k),
 * left as the one-replica path leaves it, and diverged[j] its return value. path != SCALAR.
 * Returns 0, or -1 without touching anything when the lane group's memory is not there. */
int am_msgd_batch_advance(const am_msgd_batch *b, am_msgd_path path, double *const *rings,
                          const uint64_t *replicas, size_t n, uint64_t k0, uint64_t k1,
                          int *diverged);

#endif
