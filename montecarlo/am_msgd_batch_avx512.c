/*
 * am_msgd_batch_avx512.c -- the replica-batched body of am_msgd_batch_impl.h for AVX-512 (the
 * transposes pay with AVX-512: one shuffle per step).
 */
#include "am_msgd_batch_impl.h"

#if AM_X86
BODY_SWITCH_FN(body_avx512, __attribute__((target("avx512f,avx512dq,avx512vl"))), 2)
ADVANCE_FN(am_msgd_batch_advance_avx512, body_avx512,
           __attribute__((target("avx512f,avx512dq,avx512vl"))), 1)
#endif
