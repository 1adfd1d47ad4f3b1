/*
 * am_ensemble_impl.h -- the distribution of an ensemble's chunks over ranks, for the tests.
 *
 * Replicas 0..R-1 form chunks of AM_ENSEMBLE_CHUNK consecutive replicas (the last one
 * shorter). Over P ranks the chunks are dealt out in rounds: round w covers the chunks
 * [w AM_ENSEMBLE_WAVE P, (w + 1) AM_ENSEMBLE_WAVE P) (fewer in the last round) and gives rank
 * r the r-th contiguous run of ceil(n_w / P) of them (possibly empty). Rank 0 merges the
 * chunks of a round in chunk order, so every statistic sees the merges of the serial run.
 */
#ifndef AM_ENSEMBLE_IMPL_H
#define AM_ENSEMBLE_IMPL_H

#include "am_ensemble.h"

enum { AM_ENSEMBLE_CHUNK = 32, AM_ENSEMBLE_WAVE = 64 };

/* Chunks of an ensemble of R replicas. */
size_t am_ensemble_nchunks(size_t replicas);

/* Rounds over nranks ranks (>= 1). */
size_t am_ensemble_rounds(size_t replicas, int nranks);

/* The chunks [*c0, *c1) rank `rank` runs in round `round` (empty when *c0 == *c1). */
void am_ensemble_partition(size_t replicas, int nranks, size_t round, int rank, size_t *c0,
                           size_t *c1);

/* am_ensemble_run as nranks ranks would do it, simulated in this process: each rank's chunks
 * of a round run in turn, rank r > 0 through its packed message (pack, clear, unpack), and
 * the chunks are merged in chunk order. Same result, byte for byte, as am_ensemble_run. */
am_status am_ensemble_run_ranks(const am_model *model, const uint64_t *k, size_t ngrid,
                                const am_ensemble_params *params, int nranks,
                                am_ensemble_result **out);

#endif
