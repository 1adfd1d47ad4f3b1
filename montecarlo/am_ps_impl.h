/*
 * am_ps_impl.h -- private to the library: placing a parameter-server simulator (am_ps.h)
 * in caller memory, so an engine (am_msgd_ps.c, am_pslsq.c) keeps one in each replica's
 * workspace without allocating in the ensemble's loop.
 */
#ifndef AM_PS_IMPL_H
#define AM_PS_IMPL_H

#include "am_ps.h"

/* Bytes a simulator needs (0 if the parameters are invalid), for am_ps_place. */
size_t am_ps_bytes(const am_ps_params *params);

/* Builds a simulator inside mem (am_ps_bytes(params) bytes, 64-byte aligned) for valid
 * parameters, positioned at replica 0; it owns nothing, so it is never passed to am_ps_free.
 * Lets an engine keep a simulator in its per-replica workspace. Its runtimes are drawn one
 * job at a time. */
am_ps *am_ps_place(void *mem, const am_ps_params *params);

/* Extra bytes of a simulator that computes each learner's runtimes eight jobs ahead (0 for
 * P > 4096, where it does not). */
size_t am_ps_buffer_bytes(const am_ps_params *params);

/* am_ps_place with the runtimes computed ahead: mem holds am_ps_bytes(params) +
 * am_ps_buffer_bytes(params) bytes (the same runtimes, the same updates; am_ps_alloc places
 * its simulators so). */
am_ps *am_ps_place_buffered(void *mem, const am_ps_params *params);

/* How the simulator draws its runtimes and orders its events (am_msgd_path):
 * AM_MSGD_PATH_SCALAR one job at a time and a heap, the others eight jobs of a learner at once
 * with that instruction set and, for P <= 16, a scan of the running learners (same runtimes,
 * same events); a path the CPU lacks, or out of range: the best one. A placed or allocated
 * simulator starts with am_msgd_batch_path(); the setting takes effect at the next
 * am_ps_reset and is kept by later ones. */
void am_ps_set_path(am_ps *ps, int path);

/* Words 0 of steps (job + b) P + learner, b = 0..7, of AM_STREAM_WORKERS at (seed, replica):
 * the words am_rng_u64 returns first there, computed side by side with instruction set path
 * (a path the CPU lacks must not be asked for). For tests. */
void am_ps_words(const am_ps_params *params, uint64_t replica, size_t learner, uint64_t job,
                 int path, uint64_t out[8]);

#endif
