/*
 * am_msgd_batch.c -- the replica-batched Async-MSGD step of am_msgd_batch.h.
 *
 * One lane group holds AM_MSGD_LANES replicas: the ring of iterates as vectors (lane l =
 * replica l), the data x[i] and the stale iterate w[i]; one call runs one lane group or two
 * (AM_MSGD_GROUPS), their rings interleaved (ring[(slot d + i) G + g] for group g of G), so
 * that the two groups' step-to-step dependency chains overlap. Each step performs, lane by
 * lane, exactly the one-replica operations of am_msgd.c:
 *   a = ((0 + x_0 w_0) + x_1 w_1) + ...,   v' = (v + mu (v - v_prev)) + (eta a) (x - a w)
 * (expected data: s = Sigma w, q = ((0 + s_0 w_0) + ...), v' = (v + mu (v - v_prev)) +
 * eta (s - q w)), so the bytes equal the one-replica path's; the normals of the Gaussian
 * fast path are those of am_rng_fill_gaussian_steps on each replica's own data stream,
 * the other draws those of am_data_draw and am_delay_draw per lane. The body is written
 * once with GCC vector types and compiled for three instruction sets (no FMA: products
 * and sums are rounded separately, as in the scalar code built with -ffp-contract=off),
 * each for one or two groups, for the delay (the stale iterate the current one or not), for
 * the data and, for d = 2, 3, 4 and data drawn without calls, for the dimension as a
 * literal: then the loops over coordinates unroll and the current and previous iterates
 * stay in registers (the draws are refilled outside the loop over the steps, which calls
 * nothing). The rings move into and out of the lane layout at every call, with AVX-512 by
 * 8 x 8 transposes. The body is in am_msgd_batch_impl.h: this file compiles it for the
 * portable path and dispatches, am_msgd_batch_avx2.c and am_msgd_batch_avx512.c compile it
 * for their instruction sets (the three files compile side by side).
 */
#include "am_msgd_batch_impl.h"

am_msgd_path am_msgd_batch_best(void)
{
    return (am_msgd_path)am_common_simd_best();
}

am_msgd_path am_msgd_batch_path(void)
{
    return (am_msgd_path)am_common_simd_path();
}

BODY_SWITCH_FN(body_portable, , 0)
ADVANCE_FN(am_msgd_batch_advance_portable, body_portable, , 0)

int am_msgd_batch_advance(const am_msgd_batch *b, am_msgd_path path, double *const *rings,
                          const uint64_t *replicas, size_t n, uint64_t k0, uint64_t k1,
                          int *diverged)
{
    size_t d = b->p->dim, L = b->ring_len;
    size_t G = n > NL ? 2 : 1; /* lane groups */
    vd *ring = aligned_alloc(sizeof(vd), G * L * d * sizeof(vd));
    uint64_t rep[MAXG * NL];
    const double *src[MAXG * NL];
    int div[MAXG * NL];
    if (!ring) return -1;
    /* lanes n .. 8G-1 repeat lane 0 (their results are dropped) */
    for (size_t l = 0; l < G * NL; l++) {
        size_t j = l < n ? l : 0;
        rep[l] = replicas[j];
        src[l] = rings[j];
    }
    (void)path; /* unused when the x86 paths are compiled out */
#if AM_X86
    if (path == AM_MSGD_PATH_AVX512)
        am_msgd_batch_advance_avx512(b, src, rings, rep, n, k0, k1, ring, div, G);
    else if (path == AM_MSGD_PATH_AVX2)
        am_msgd_batch_advance_avx2(b, src, rings, rep, n, k0, k1, ring, div, G);
    else
#endif
        am_msgd_batch_advance_portable(b, src, rings, rep, n, k0, k1, ring, div, G);
    for (size_t j = 0; j < n; j++)
        diverged[j] = div[j];
    free(ring);
    return 0;
}
