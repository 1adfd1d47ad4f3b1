/*
 * am_msgd_batch_avx2.c -- the replica-batched body of am_msgd_batch_impl.h for AVX2.
 */
#include "am_msgd_batch_impl.h"

#if AM_X86
BODY_SWITCH_FN(body_avx2, __attribute__((target("avx2"))), 1)
ADVANCE_FN(am_msgd_batch_advance_avx2, body_avx2, __attribute__((target("avx2"))), 0)
#endif
