/*
 * am_sde_impl.h -- private to the library: laying an Euler-Maruyama path (am_sde.h) out in
 * caller memory, as the ensemble adapter does in each replica's workspace.
 */
#ifndef AM_SDE_IMPL_H
#define AM_SDE_IMPL_H

#include "am_sde.h"

/* Bytes one path needs (header, state, drift and noise buffers, scratch; 64-byte aligned). */
size_t am_sde_path_bytes(const am_sde_system *sys);

/* Lays a path out in caller memory mem (64-byte aligned, am_sde_path_bytes long); the
 * system and parameters must outlive it. Returns the path (at mem). */
am_sde_path *am_sde_path_place(void *mem, const am_sde_system *sys, const am_sde_params *par);

#endif
