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
 * Lets an engine keep a simulator in its per-replica workspace. */
am_ps *am_ps_place(void *mem, const am_ps_params *params);

#endif
