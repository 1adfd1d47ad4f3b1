/*
 * am_rng_avx2.c -- the AVX2 paths of am_rng.c (sections 2 and 3 of its header comment):
 * Philox4x32-10 blocks in vector registers, the ziggurat's fast test four words at a time,
 * the streams side by side. Compiled out with AM_PORTABLE.
 */
#include "am_rng_impl.h"

#if AM_X86
#define AVX2 __attribute__((target("avx2")))

/* hi and lo halves of the 8 products a_l * m (m = multiplier in every 64-bit lane). */
AVX2 static inline void mulhilo8(__m256i a, __m256i m, __m256i *hi, __m256i *lo)
{
    __m256i pe = _mm256_mul_epu32(a, m);
    __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

/* One Philox4x32 round on 8 blocks side by side, one 32-bit state word of every block in
 * each of x[0..3] (m0, m1: the multipliers in every 64-bit lane; kk0, kk1: the round keys in
 * every 32-bit lane): the round of every eight-lane AVX2 code. */
AVX2 static inline __attribute__((always_inline)) void
philox_round8_avx2(__m256i x[4], __m256i m0, __m256i m1, __m256i kk0, __m256i kk1)
{
    __m256i h0, l0, h1, l1;
    mulhilo8(x[0], m0, &h0, &l0);
    mulhilo8(x[2], m1, &h1, &l1);
    x[0] = _mm256_xor_si256(_mm256_xor_si256(h1, x[1]), kk0);
    x[2] = _mm256_xor_si256(_mm256_xor_si256(h0, x[3]), kk1);
    x[1] = l1;
    x[3] = l0;
}

/* Words of blocks b .. b+7 (lanes of x0..x3) to out[0..15] in stream order. */
AVX2 static inline void store8(__m256i x0, __m256i x1, __m256i x2, __m256i x3, uint64_t *out)
{
    __m256i t0 = _mm256_unpacklo_epi32(x0, x1), t1 = _mm256_unpacklo_epi32(x2, x3);
    __m256i t2 = _mm256_unpackhi_epi32(x0, x1), t3 = _mm256_unpackhi_epi32(x2, x3);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t1); /* blocks 0 | 4 */
    __m256i u1 = _mm256_unpackhi_epi64(t0, t1); /* blocks 1 | 5 */
    __m256i u2 = _mm256_unpacklo_epi64(t2, t3); /* blocks 2 | 6 */
    __m256i u3 = _mm256_unpackhi_epi64(t2, t3); /* blocks 3 | 7 */
    _mm256_storeu_si256((__m256i *)out, _mm256_permute2x128_si256(u0, u1, 0x20));
    _mm256_storeu_si256((__m256i *)out + 1, _mm256_permute2x128_si256(u2, u3, 0x20));
    _mm256_storeu_si256((__m256i *)out + 2, _mm256_permute2x128_si256(u0, u1, 0x31));
    _mm256_storeu_si256((__m256i *)out + 3, _mm256_permute2x128_si256(u2, u3, 0x31));
}

/* Blocks b0 .. b0+15 into out[0..31]. */
AVX2 static void philox16_avx2(const am_rng *r, uint32_t b0, uint64_t *out)
{
    const __m256i m0 = _mm256_set1_epi64x(PHILOX_M4x32_0), m1 = _mm256_set1_epi64x(PHILOX_M4x32_1);
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i a0 = _mm256_add_epi32(_mm256_set1_epi32((int)b0), lane);
    __m256i b0v = _mm256_add_epi32(a0, _mm256_set1_epi32(8));
    __m256i a1 = _mm256_set1_epi32((int)r->ctr.v[1]), a2 = _mm256_set1_epi32((int)r->ctr.v[2]);
    __m256i a3 = _mm256_set1_epi32((int)r->ctr.v[3]);
    __m256i c0 = b0v, c1 = a1, c2 = a2, c3 = a3;
    uint32_t k0 = r->key.v[0], k1 = r->key.v[1];
    __m256i a[4] = {a0, a1, a2, a3}, c[4] = {c0, c1, c2, c3};
    for (int round = 0; round < 10; round++) {
        __m256i kk0 = _mm256_set1_epi32((int)k0), kk1 = _mm256_set1_epi32((int)k1);
        philox_round8_avx2(a, m0, m1, kk0, kk1);
        philox_round8_avx2(c, m0, m1, kk0, kk1);
        k0 += PHILOX_W32_0;
        k1 += PHILOX_W32_1;
    }
    store8(a[0], a[1], a[2], a[3], out);
    store8(c[0], c[1], c[2], c[3], out + 16);
}

/* Blocks b0 and b0+1: philox_block's one-register scheme with one block per 128-bit half
 * (the latency of one block, for short requests). */
AVX2 static void philox2_avx2(const am_rng *r, uint32_t b0, uint64_t *out)
{
    __m256i x =
        _mm256_setr_epi32((int)b0, (int)r->ctr.v[1], (int)r->ctr.v[2], (int)r->ctr.v[3],
                          (int)(b0 + 1), (int)r->ctr.v[1], (int)r->ctr.v[2], (int)r->ctr.v[3]);
    const __m256i m =
        _mm256_set_epi64x(PHILOX_M4x32_1, PHILOX_M4x32_0, PHILOX_M4x32_1, PHILOX_M4x32_0);
    const __m256i w = _mm256_set_epi64x(PHILOX_W32_1, PHILOX_W32_0, PHILOX_W32_1, PHILOX_W32_0);
    __m256i k = _mm256_set_epi64x(r->key.v[1], r->key.v[0], r->key.v[1], r->key.v[0]);
    for (int round = 0; round < 10; round++) {
        PHILOX_ROUND_ONE_REG(_mm256, si256, x, m, k);
        k = _mm256_add_epi32(k, w);
    }
    _mm256_storeu_si256((__m256i *)out, x);
}

AVX2 void am_rng_blocks_avx2(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out)
{
    size_t b = 0;
    for (; b + 16 <= nb; b += 16)
        philox16_avx2(r, b0 + (uint32_t)b, out + 2 * b);
    if (nb - b >= 4) {
        uint64_t tmp[32];
        philox16_avx2(r, b0 + (uint32_t)b, tmp);
        memcpy(out + 2 * b, tmp, 2 * (nb - b) * sizeof *tmp);
        return;
    }
    if (nb - b >= 2) {
        philox2_avx2(r, b0 + (uint32_t)b, out + 2 * b);
        b += 2;
    }
    blocks_portable(r, b0 + (uint32_t)b, nb - b, out + 2 * b);
}

/* Counter words c0, c2, c3 of pair t (step step0 + t / nb, block t % nb). */
static inline void pair_ctr(uint64_t step0, size_t nb, size_t t, uint32_t *c0, uint32_t *c2,
                            uint32_t *c3)
{
    uint64_t step = step0 + t / nb;
    *c0 = (uint32_t)(t % nb);
    *c2 = (uint32_t)(step << 16);
    *c3 = (uint32_t)(step >> 16);
}

/* The 2 words (x1 x0), (x3 x2) of 8 blocks in the 32-bit lanes of x0..x3 (lanes 0..7 of
 * 256-bit halves) as 8 64-bit words each. */
AVX2 static inline void lanes_store8(__m128i x0l, __m128i x0h, __m128i x1l, __m128i x1h,
                                     uint64_t *out)
{
    __m256i a = _mm256_or_si256(_mm256_cvtepu32_epi64(x0l),
                                _mm256_slli_epi64(_mm256_cvtepu32_epi64(x1l), 32));
    __m256i b = _mm256_or_si256(_mm256_cvtepu32_epi64(x0h),
                                _mm256_slli_epi64(_mm256_cvtepu32_epi64(x1h), 32));
    _mm256_storeu_si256((__m256i *)out, a);
    _mm256_storeu_si256((__m256i *)out + 1, b);
}

/* Pairs t0, t0+1 of the 8 lanes: two registers of 8 lanes. */
AVX2 static void lanes_words2_avx2(const am_rng *r, __m256i c1, __m256i c2lo, uint64_t step0,
                                   size_t nb, size_t t0, uint64_t *out)
{
    const __m256i m0 = _mm256_set1_epi64x(PHILOX_M4x32_0), m1 = _mm256_set1_epi64x(PHILOX_M4x32_1);
    uint32_t c0[2], c2[2], c3[2];
    for (int i = 0; i < 2; i++)
        pair_ctr(step0, nb, t0 + (size_t)i, &c0[i], &c2[i], &c3[i]);
    __m256i a0 = _mm256_set1_epi32((int)c0[0]), e0 = _mm256_set1_epi32((int)c0[1]);
    __m256i a2 = _mm256_or_si256(c2lo, _mm256_set1_epi32((int)c2[0]));
    __m256i e2 = _mm256_or_si256(c2lo, _mm256_set1_epi32((int)c2[1]));
    __m256i a3 = _mm256_set1_epi32((int)c3[0]), e3 = _mm256_set1_epi32((int)c3[1]);
    __m256i a1 = c1, e1 = c1;
    uint32_t k0 = r->key.v[0], k1 = r->key.v[1];
    __m256i x[2][4] = {{a0, a1, a2, a3}, {e0, e1, e2, e3}};
    for (int round = 0; round < 10; round++) {
        __m256i kk0 = _mm256_set1_epi32((int)k0), kk1 = _mm256_set1_epi32((int)k1);
        philox_round8_avx2(x[0], m0, m1, kk0, kk1);
        philox_round8_avx2(x[1], m0, m1, kk0, kk1);
        k0 += PHILOX_W32_0;
        k1 += PHILOX_W32_1;
    }
    for (int g = 0; g < 2; g++) {
        uint64_t *o = out + 2 * (size_t)g * AM_RNG_LANES;
        lanes_store8(_mm256_castsi256_si128(x[g][0]), _mm256_extracti128_si256(x[g][0], 1),
                     _mm256_castsi256_si128(x[g][1]), _mm256_extracti128_si256(x[g][1], 1), o);
        lanes_store8(_mm256_castsi256_si128(x[g][2]), _mm256_extracti128_si256(x[g][2], 1),
                     _mm256_castsi256_si128(x[g][3]), _mm256_extracti128_si256(x[g][3], 1),
                     o + AM_RNG_LANES);
    }
}

AVX2 void am_rng_lanes_words_avx2(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
                                  uint64_t *out)
{
    uint32_t c1[8], c2[8];
    for (int l = 0; l < AM_RNG_LANES; l++) {
        c1[l] = r[l].ctr.v[1];
        c2[l] = r[l].ctr.v[2] & 0xffffu;
    }
    __m256i vc1 = _mm256_loadu_si256((const __m256i *)c1);
    __m256i vc2 = _mm256_loadu_si256((const __m256i *)c2);
    size_t np = ns * nb, t = 0;
    for (; t + 2 <= np; t += 2)
        lanes_words2_avx2(r, vc1, vc2, step0, nb, t, out + 2 * t * AM_RNG_LANES);
    if (t < np) {
        uint64_t tmp[2 * 2 * AM_RNG_LANES];
        lanes_words2_avx2(r, vc1, vc2, step0, nb, t, tmp);
        memcpy(out + 2 * t * AM_RNG_LANES, tmp, 2 * AM_RNG_LANES * sizeof *tmp);
    }
}

/* (double)(int64_t)(w & ~0x7ff) * 2^-63 exactly, 4 lanes, without a 64-bit conversion:
 * the high 32 bits (signed) and bits 11..31 as doubles by the 2^52 trick, then summed (the
 * sum is the exact value, which has at most 53 significant bits). */
AVX2 static inline __m256d zig_u_avx2(__m256i x)
{
    const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256d two52 = _mm256_set1_pd(0x1.0p52), bias = _mm256_set1_pd(0x1.0p52 + 0x1.0p31);
    __m256i hi = _mm256_xor_si256(_mm256_srli_epi64(x, 32), _mm256_set1_epi64x(0x80000000LL));
    __m256i lo = _mm256_and_si256(_mm256_srli_epi64(x, 11), _mm256_set1_epi64x(0x1fffff));
    __m256d hd = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(hi, exp52)), bias);
    __m256d ld = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(lo, exp52)), two52);
    __m256d v = _mm256_add_pd(_mm256_mul_pd(hd, _mm256_set1_pd(0x1.0p32)),
                              _mm256_mul_pd(ld, _mm256_set1_pd(0x1.0p11)));
    return _mm256_mul_pd(v, _mm256_set1_pd(0x1.0p-63));
}

/* zig8_avx512 with AVX2: 4 lanes, mask in bits 0..3. */
AVX2 static inline unsigned zig4_avx2(const uint64_t *w, double *z)
{
    __m256i x = _mm256_loadu_si256((const __m256i *)w);
    __m256i i = _mm256_and_si256(x, _mm256_set1_epi64x(0xff));
    __m256d u = zig_u_avx2(x);
    __m256d r = _mm256_i64gather_pd(am_zig_r, i, 8);
    __m256d au = _mm256_and_pd(u, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL)));
    unsigned ok = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(au, r, _CMP_LT_OQ));
    _mm256_storeu_pd(z, _mm256_mul_pd(u, _mm256_i64gather_pd(am_zig_x, i, 8)));
    return ok;
}

/* 8 lanes by two zig4_avx2. */
AVX2 static inline unsigned zig8_avx2(const uint64_t *w, double *z)
{
    return zig4_avx2(w, z) | zig4_avx2(w + 4, z + 4) << 4;
}

ZIG_LANES(am_rng_zig_lanes_avx2, AVX2, zig8_avx2)

/* am_rng_zig_pass_avx512 with AVX2, 4 words at a time (gathers). */
AVX2 void am_rng_zig_pass_avx2(const uint64_t *src, double *dst, size_t m, uint64_t *rej)
{
    size_t t = 0;
    for (; t + 4 <= m; t += 4)
        rej[t / 64] |= (uint64_t)(~zig4_avx2(src + t, dst + t) & 0xfu) << (t % 64);
    for (; t < m; t++) {
        uint64_t w = src[t];
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        rej[t / 64] |= (uint64_t) !(fabs(u) < am_zig_r[i]) << (t % 64);
        dst[t] = u * am_zig_x[i];
    }
}
#endif
