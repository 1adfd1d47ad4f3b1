/*
 * am_rng_avx512.c -- the AVX-512 paths of am_rng.c (sections 2 and 3 of its header comment):
 * Philox4x32-10 blocks in vector registers with a side sum, the ziggurat's fast test over
 * whole passes, the streams side by side with their fast path in one pass, and their rare
 * cases together. Compiled out with AM_PORTABLE.
 */
#include "am_rng_impl.h"

#if AM_X86
#define AVX512 __attribute__((target("avx512f")))

/* One Philox4x32 round on 8 blocks side by side, one 32-bit state word of every block in the
 * low half of each 64-bit lane of x0..x3 (one vpmuludq gives the whole product; the high
 * halves carry garbage that the multiplies ignore): the round of every 64-bit-lane AVX-512
 * code (the bulk blocks, the lanes' words and their rare cases). */
AVX512 static inline __attribute__((always_inline)) void philox_round_q512(__m512i *x0, __m512i *x1,
                                                                           __m512i *x2, __m512i *x3,
                                                                           __m512i m0, __m512i m1,
                                                                           __m512i kk0, __m512i kk1)
{
    __m512i p0 = _mm512_mul_epu32(*x0, m0), p1 = _mm512_mul_epu32(*x2, m1);
    *x0 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), *x1, kk0, 0x96);
    *x2 = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), *x3, kk1, 0x96);
    *x1 = p1;
    *x3 = p0;
}

/* Blocks b0 .. b0 + 8 NG - 1 into out[0 .. 16 NG - 1]: NG register sets of 8 consecutive
 * blocks, one block per 64-bit lane with the 32-bit state in the low half (one vpmuludq
 * gives the whole product; the high halves carry garbage that the multiplies ignore and the
 * final mask removes), then the words put in stream order. */
#define PHILOX8X_AVX512(NAME, NG)                                                                  \
    AVX512 static inline __attribute__((always_inline)) void NAME##_impl(                          \
        const am_rng *r, uint32_t b0, uint64_t *out, side_sum *ss)                                 \
    {                                                                                              \
        const double *sp = ss ? ss->p : NULL;                                                      \
        size_t si = ss ? ss->i : 0, sn = ss ? ss->n : 0;                                           \
        double a = ss ? ss->a : 0.0;                                                               \
        const __m512i m0 = _mm512_set1_epi64(PHILOX_M4x32_0);                                      \
        const __m512i m1 = _mm512_set1_epi64(PHILOX_M4x32_1);                                      \
        const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);                            \
        __m512i x0[NG], x1[NG], x2[NG], x3[NG];                                                    \
        _Pragma("GCC unroll 4") for (int g = 0; g < NG; g++)                                       \
        {                                                                                          \
            x0[g] = _mm512_add_epi64(_mm512_set1_epi64((uint32_t)(b0 + 8u * (unsigned)g)), lane);  \
            x1[g] = _mm512_set1_epi64(r->ctr.v[1]);                                                \
            x2[g] = _mm512_set1_epi64(r->ctr.v[2]);                                                \
            x3[g] = _mm512_set1_epi64(r->ctr.v[3]);                                                \
        }                                                                                          \
        uint32_t k0 = r->key.v[0], k1 = r->key.v[1];                                               \
        for (int round = 0; round < 10; round++) {                                                 \
            __m512i kk0 = _mm512_set1_epi64(k0), kk1 = _mm512_set1_epi64(k1);                      \
            _Pragma("GCC unroll 4") for (int g = 0; g < NG; g++)                                   \
            {                                                                                      \
                philox_round_q512(&x0[g], &x1[g], &x2[g], &x3[g], m0, m1, kk0, kk1);               \
                SIDE_TERM(ss, a, sp, si, sn);                                                      \
            }                                                                                      \
            k0 += PHILOX_W32_0;                                                                    \
            k1 += PHILOX_W32_1;                                                                    \
        }                                                                                          \
        const __m512i low = _mm512_set1_epi64(0xffffffffLL);                                       \
        const __m512i lo_idx = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);                        \
        const __m512i hi_idx = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);                      \
        _Pragma("GCC unroll 4") for (int g = 0; g < NG; g++)                                       \
        {                                                                                          \
            __m512i w0 =                                                                           \
                _mm512_ternarylogic_epi64(_mm512_slli_epi64(x1[g], 32), x0[g], low, 0xF8);         \
            __m512i w1 =                                                                           \
                _mm512_ternarylogic_epi64(_mm512_slli_epi64(x3[g], 32), x2[g], low, 0xF8);         \
            _mm512_storeu_si512(out + 16 * g, _mm512_permutex2var_epi64(w0, lo_idx, w1));          \
            _mm512_storeu_si512(out + 16 * g + 8, _mm512_permutex2var_epi64(w0, hi_idx, w1));      \
        }                                                                                          \
        if (ss) {                                                                                  \
            ss->i = si;                                                                            \
            ss->a = a;                                                                             \
        }                                                                                          \
    }

PHILOX8X_AVX512(philox32_avx512, 4)
PHILOX8X_AVX512(philox24_avx512, 3)
PHILOX8X_AVX512(philox16_avx512, 2)
PHILOX8X_AVX512(philox8_avx512, 1)

/* Whole groups of 32 blocks, then the rest (up to 31): whole sets of 8 in one call of as many
 * interleaved register sets (a short chain on its own is latency-bound, so the rest costs
 * about one set's latency); otherwise 16 blocks and the last ones through a scratch buffer,
 * or by am_rng_blocks_avx2 when there are at most 4. */
AVX512 static inline __attribute__((always_inline)) void
blocks_avx512_impl(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out, side_sum *ss)
{
    size_t b = 0;
    for (; b + 32 <= nb; b += 32)
        philox32_avx512_impl(r, b0 + (uint32_t)b, out + 2 * b, ss);
    size_t rest = nb - b;
    if (rest % 8 && rest > 16) {
        /* not whole sets: 16 blocks, then the rest below (measured faster than 3 or 4 sets
         * through the scratch buffer) */
        philox16_avx512_impl(r, b0 + (uint32_t)b, out + 2 * b, ss);
        b += 16;
        rest -= 16;
    }
    if (rest <= 4) {
        am_rng_blocks_avx2(r, b0 + (uint32_t)b, rest, out + 2 * b); /* AVX-512F implies AVX2 */
        return;
    }
    uint64_t tmp[64];
    uint64_t *dst = rest % 8 ? tmp : out + 2 * b;
    uint32_t c = b0 + (uint32_t)b;
    switch ((rest + 7) / 8) {
    case 1:
        philox8_avx512_impl(r, c, dst, ss);
        break;
    case 2:
        philox16_avx512_impl(r, c, dst, ss);
        break;
    case 3:
        philox24_avx512_impl(r, c, dst, ss);
        break;
    default:
        philox32_avx512_impl(r, c, dst, ss);
        break;
    }
    if (dst == tmp) memcpy(out + 2 * b, tmp, 2 * rest * sizeof *tmp);
}

AVX512 void am_rng_blocks_avx512(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out)
{
    blocks_avx512_impl(r, b0, nb, out, NULL);
}

/* The same with one term of the side sum ss per register set and round. */
AVX512 void am_rng_blocks_avx512_sum(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out,
                                     side_sum *ss)
{
    blocks_avx512_impl(r, b0, nb, out, ss);
}

/* The fast test of the ziggurat on every word src[0..m-1] (m <= ZIG_PASS): dst[t] = the
 * normal of word t if it passes (the value is meaningless otherwise) and bit t of rej set
 * if it fails; rej (ZIG_PASS / 64 words) zeroed by the caller. The two table entries of a
 * word are loaded from its low byte in memory (x86 is little-endian) instead of gathered
 * (vgatherqpd is slow on these CPUs); every operation is the scalar one, so the normals are
 * bit-identical to am_rng_gaussian's. */
#define ZIG512 __attribute__((target("avx512f,avx512dq")))
ZIG512 static inline __attribute__((always_inline)) void
zig_pass_avx512_impl(const uint64_t *src, double *dst, size_t m, uint64_t *rej, side_sum *ss)
{
    const double *sp = ss ? ss->p : NULL;
    size_t si = ss ? ss->i : 0, sn = ss ? ss->n : 0;
    double a = ss ? ss->a : 0.0;
    const __m512i high53 = _mm512_set1_epi64((long long)~0x7ffULL);
    const __m512d scale = _mm512_set1_pd(0x1.0p-63);
    const unsigned char *b = (const unsigned char *)src;
    size_t t = 0;
    for (; t + 8 <= m; t += 8) {
        const unsigned char *g = b + 8 * t;
        __m512d u = _mm512_mul_pd(
            _mm512_cvtepi64_pd(_mm512_and_si512(_mm512_loadu_si512(src + t), high53)), scale);
        __m128d r01 = _mm_loadh_pd(_mm_load_sd(am_zig_r + g[0]), am_zig_r + g[8]);
        __m128d r23 = _mm_loadh_pd(_mm_load_sd(am_zig_r + g[16]), am_zig_r + g[24]);
        __m128d r45 = _mm_loadh_pd(_mm_load_sd(am_zig_r + g[32]), am_zig_r + g[40]);
        __m128d r67 = _mm_loadh_pd(_mm_load_sd(am_zig_r + g[48]), am_zig_r + g[56]);
        __m128d x01 = _mm_loadh_pd(_mm_load_sd(am_zig_x + g[0]), am_zig_x + g[8]);
        __m128d x23 = _mm_loadh_pd(_mm_load_sd(am_zig_x + g[16]), am_zig_x + g[24]);
        __m128d x45 = _mm_loadh_pd(_mm_load_sd(am_zig_x + g[32]), am_zig_x + g[40]);
        __m128d x67 = _mm_loadh_pd(_mm_load_sd(am_zig_x + g[48]), am_zig_x + g[56]);
        __m512d r = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_set_m128d(r23, r01)),
                                       _mm256_set_m128d(r67, r45), 1);
        __m512d x = _mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_set_m128d(x23, x01)),
                                       _mm256_set_m128d(x67, x45), 1);
        unsigned ok = _mm512_cmp_pd_mask(_mm512_abs_pd(u), r, _CMP_LT_OQ);
        _mm512_storeu_pd(dst + t, _mm512_mul_pd(u, x));
        rej[t / 64] |= (uint64_t)(~ok & 0xffu) << (t % 64);
        if (ss && si + 8 <= sn) { /* eight terms of the side sum, in order */
            const double *q = sp + si;
            a += q[0];
            a += q[1];
            a += q[2];
            a += q[3];
            a += q[4];
            a += q[5];
            a += q[6];
            a += q[7];
            si += 8;
        }
    }
    for (; t < m; t++) {
        uint64_t w = src[t];
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        rej[t / 64] |= (uint64_t) !(fabs(u) < am_zig_r[i]) << (t % 64);
        dst[t] = u * am_zig_x[i];
    }
    if (ss) {
        ss->i = si;
        ss->a = a;
    }
}

ZIG512 void am_rng_zig_pass_avx512(const uint64_t *src, double *dst, size_t m, uint64_t *rej)
{
    zig_pass_avx512_impl(src, dst, m, rej, NULL);
}

/* The same with eight terms of the side sum ss per eight words. */
ZIG512 void am_rng_zig_pass_sum_avx512(const uint64_t *src, double *dst, size_t m, uint64_t *rej,
                                       side_sum *ss)
{
    zig_pass_avx512_impl(src, dst, m, rej, ss);
}

/* Blocks at arbitrary counters ctr[t][0..3] (t < nb, nb a multiple of 16), one block per
 * 128-bit lane with philox_block's scheme, four registers interleaved. */
AVX512 void am_rng_blocks_at_avx512(const philox4x32_key_t *key, const uint32_t (*ctr)[4],
                                    size_t nb, uint64_t *out)
{
    const __m512i m =
        _mm512_set4_epi64(PHILOX_M4x32_1, PHILOX_M4x32_0, PHILOX_M4x32_1, PHILOX_M4x32_0);
    const __m512i w = _mm512_set4_epi64(PHILOX_W32_1, PHILOX_W32_0, PHILOX_W32_1, PHILOX_W32_0);
    for (size_t t = 0; t < nb; t += 16) {
        __m512i x[4];
        for (int g = 0; g < 4; g++)
            x[g] = _mm512_loadu_si512(ctr[t + 4 * (size_t)g]);
        __m512i k = _mm512_set4_epi64(key->v[1], key->v[0], key->v[1], key->v[0]);
        for (int round = 0; round < 10; round++) {
            for (int g = 0; g < 4; g++)
                PHILOX_ROUND_ONE_REG(_mm512, si512, x[g], m, k);
            k = _mm512_add_epi32(k, w);
        }
        for (int g = 0; g < 4; g++)
            _mm512_storeu_si512(out + 2 * (t + 4 * (size_t)g), x[g]);
    }
}

/* The 10 round keys of key (k0, k1), as 64-bit words to broadcast from memory. */
static void lanes_round_keys(const am_rng *r, uint64_t ks[10][2])
{
    uint32_t k0 = r->key.v[0], k1 = r->key.v[1];
    for (int round = 0; round < 10; round++) {
        ks[round][0] = k0;
        ks[round][1] = k1;
        k0 += PHILOX_W32_0;
        k1 += PHILOX_W32_1;
    }
}

/* Counter words (c0, high part of c2, c3) of the next four pairs (step, block) from (*step,
 * *b), nb blocks per step; advances (*step, *b) past them. */
static inline void lanes_ctr4(uint64_t *step, uint32_t *b, size_t nb, uint64_t ctr[4][3])
{
    for (int g = 0; g < 4; g++) {
        ctr[g][0] = *b;
        ctr[g][1] = (uint32_t)(*step << 16);
        ctr[g][2] = (uint32_t)(*step >> 16);
        if (++*b == nb) {
            *b = 0;
            ++*step;
        }
    }
}

/* The state of four pairs before the rounds (lanes_words4_avx512's layout). */
AVX512 static inline __attribute__((always_inline)) void
lanes_init4_avx512(__m512i c1, __m512i c2lo, const uint64_t (*ctr)[3], __m512i *x0, __m512i *x1,
                   __m512i *x2, __m512i *x3)
{
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        x0[g] = _mm512_set1_epi64((long long)ctr[g][0]);
        x1[g] = c1;
        x2[g] = _mm512_or_si512(c2lo, _mm512_set1_epi64((long long)ctr[g][1]));
        x3[g] = _mm512_set1_epi64((long long)ctr[g][2]);
    }
}

/* One Philox round of four pairs with the round keys ks (broadcast from memory). */
AVX512 static inline __attribute__((always_inline)) void
lanes_round4_avx512(const uint64_t *ks, __m512i *x0, __m512i *x1, __m512i *x2, __m512i *x3)
{
    const __m512i m0 = _mm512_set1_epi64(PHILOX_M4x32_0), m1 = _mm512_set1_epi64(PHILOX_M4x32_1);
    __m512i kk0 = _mm512_set1_epi64((long long)ks[0]);
    __m512i kk1 = _mm512_set1_epi64((long long)ks[1]);
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++)
        philox_round_q512(&x0[g], &x1[g], &x2[g], &x3[g], m0, m1, kk0, kk1);
}

/* Pairs (step, block) t0 .. t0+3 of the 8 lanes: one register per pair and state word,
 * the 32-bit state in the low half of each 64-bit lane (one lane per stream), so that one
 * vpmuludq gives the whole 64-bit product; the high halves carry garbage that the
 * multiplies ignore and the final mask removes. Words of pair t to out[(2 t + j) 8 + l]. */
AVX512 static inline void lanes_words4_avx512(const uint64_t (*ks)[2], __m512i c1, __m512i c2lo,
                                              const uint64_t (*ctr)[3], uint64_t *out)
{
    __m512i x0[4], x1[4], x2[4], x3[4];
    lanes_init4_avx512(c1, c2lo, ctr, x0, x1, x2, x3);
#pragma GCC unroll 1
    for (int round = 0; round < 10; round++)
        lanes_round4_avx512(ks[round], x0, x1, x2, x3);
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        uint64_t *o = out + 2 * (size_t)g * AM_RNG_LANES;
        /* (x1 << 32) | (x0 & low) by one shuffle: the odd 32-bit elements from x1's even ones */
        _mm512_storeu_si512(o, _mm512_mask_shuffle_epi32(x0[g], 0xAAAA, x1[g], _MM_PERM_CCAA));
        _mm512_storeu_si512(o + AM_RNG_LANES,
                            _mm512_mask_shuffle_epi32(x2[g], 0xAAAA, x3[g], _MM_PERM_CCAA));
    }
}

AVX512 void am_rng_lanes_words_avx512(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
                                      uint64_t *out)
{
    uint64_t c1[AM_RNG_LANES], c2[AM_RNG_LANES];
    for (int l = 0; l < AM_RNG_LANES; l++) {
        c1[l] = r[l].ctr.v[1];
        c2[l] = r[l].ctr.v[2] & 0xffffu;
    }
    __m512i vc1 = _mm512_loadu_si512(c1), vc2 = _mm512_loadu_si512(c2);
    uint64_t ks[10][2]; /* round keys */
    lanes_round_keys(r, ks);
    size_t np = ns * nb;
    uint64_t step = step0;
    uint32_t b = 0;
    for (size_t t = 0; t < np; t += 4) {
        uint64_t ctr[4][3]; /* 64-bit: broadcast straight from memory */
        lanes_ctr4(&step, &b, nb, ctr);
        if (t + 4 <= np) {
            lanes_words4_avx512((const uint64_t(*)[2])ks, vc1, vc2, (const uint64_t(*)[3])ctr,
                                out + 2 * t * AM_RNG_LANES);
        } else {
            uint64_t tmp[4 * 2 * AM_RNG_LANES];
            lanes_words4_avx512((const uint64_t(*)[2])ks, vc1, vc2, (const uint64_t(*)[3])ctr, tmp);
            memcpy(out + 2 * t * AM_RNG_LANES, tmp, 2 * (np - t) * AM_RNG_LANES * sizeof *tmp);
        }
    }
}

/* tab[w[l] & 0xff] for the 8 lanes by scalar loads put together with inserts: cheaper than
 * an 8-element gather on some CPUs (AMD Zen 4: 0.6 against 0.3 ns per element). */
__attribute__((target("avx512f,avx512dq"))) static inline __m512d lookup8_avx512(const double *tab,
                                                                                 const uint64_t *w)
{
    __m128d p0 = _mm_loadh_pd(_mm_load_sd(tab + (w[0] & 0xff)), tab + (w[1] & 0xff));
    __m128d p1 = _mm_loadh_pd(_mm_load_sd(tab + (w[2] & 0xff)), tab + (w[3] & 0xff));
    __m128d p2 = _mm_loadh_pd(_mm_load_sd(tab + (w[4] & 0xff)), tab + (w[5] & 0xff));
    __m128d p3 = _mm_loadh_pd(_mm_load_sd(tab + (w[6] & 0xff)), tab + (w[7] & 0xff));
    __m256d q0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(p0), p1, 1);
    __m256d q1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(p2), p3, 1);
    return _mm512_insertf64x4(_mm512_castpd256_pd512(q0), q1, 1);
}

/* The fast path's two table entries of layer i side by side, scaled so that the test and the
 * normal need no multiply by 2^-63: zig_pair[i] = {r[i] 2^63, x[i] 2^-63}. With
 * c = (double)(int64_t)(w & ~0x7ff) (exact) and u = c 2^-63, |u| < r[i] iff |c| < r[i] 2^63, and
 * u x[i] = c (x[i] 2^-63) as the same real number rounded once (no power of 2 here reaches
 * the subnormal range), so both give am_rng_gaussian's bits. Filled once, by the first
 * am_rng_gaussian_lanes call of the process (am_rng_zig_pair_ready), so that no call, not even one
 * from another library's load-time constructor, can see it empty. */
static double zig_pair[256][2] __attribute__((aligned(64)));
static pthread_once_t zig_pair_once = PTHREAD_ONCE_INIT;

static void zig_pair_init(void)
{
    for (int i = 0; i < 256; i++) {
        zig_pair[i][0] = ldexp(am_zig_r[i], 63);
        zig_pair[i][1] = ldexp(am_zig_x[i], -63);
    }
}

void am_rng_zig_pair_ready(void)
{
    pthread_once(&zig_pair_once, zig_pair_init);
}

/* {r, x} of the 8 lanes' layers w[l] & 0xff (zig_pair): 8 loads of 16 bytes, put together
 * by inserts and two in-lane unpacks (cheaper than 16 scalar loads, and than gathers). */
__attribute__((target("avx512f,avx512dq"))) static inline void pair8_avx512(const uint64_t *w,
                                                                            __m512d *r, __m512d *x)
{
    const unsigned char *b = (const unsigned char *)w; /* low bytes (x86 is little-endian) */
#define ZIG_PAIR(l) _mm_load_pd(zig_pair[b[8 * (l)]])
    __m256d a0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(ZIG_PAIR(0)), ZIG_PAIR(2), 1);
    __m256d a1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(ZIG_PAIR(4)), ZIG_PAIR(6), 1);
    __m256d b0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(ZIG_PAIR(1)), ZIG_PAIR(3), 1);
    __m256d b1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(ZIG_PAIR(5)), ZIG_PAIR(7), 1);
#undef ZIG_PAIR
    __m512d z0 = _mm512_insertf64x4(_mm512_castpd256_pd512(a0), a1, 1); /* pairs 0 2 4 6 */
    __m512d z1 = _mm512_insertf64x4(_mm512_castpd256_pd512(b0), b1, 1); /* pairs 1 3 5 7 */
    *r = _mm512_unpacklo_pd(z0, z1);
    *x = _mm512_unpackhi_pd(z0, z1);
}

/* Ziggurat fast path on 8 lanes' words w: normals to z, returns the mask of the lanes whose
 * fast test passed (the others need the rare case). Same results as am_rng_gaussian. */
__attribute__((target("avx512f,avx512dq"))) static inline unsigned zig8_avx512(const uint64_t *w,
                                                                               double *z)
{
    const __m512i high53 = _mm512_set1_epi64((long long)~0x7ffULL);
    __m512d c = _mm512_cvtepi64_pd(_mm512_and_si512(_mm512_loadu_si512(w), high53));
    __m512d r, xi;
    pair8_avx512(w, &r, &xi);
    unsigned ok = _mm512_cmp_pd_mask(_mm512_abs_pd(c), r, _CMP_LT_OQ);
    _mm512_storeu_pd(z, _mm512_mul_pd(c, xi));
    return ok;
}

/* The fast path on the next row (word zi of step zt of the 8 lanes, row zrow of zw) by
 * zig8_avx512, normals to zo; the lanes of the step failed so far in bad and their first failed
 * normal in f; at the step's last normal its events (ZIG_LANES' order) compressed in a register
 * and stored to ev + nev. Locals of am_rng_lanes_gauss_avx512. */
#define ZIG_ROW()                                                                                  \
    do {                                                                                           \
        if (zi < n) {                                                                              \
            unsigned fresh = ~zig8_avx512(words + zrow * AM_RNG_LANES, zo) & ~bad & 0xffu;         \
            zo += AM_RNG_LANES;                                                                    \
            bad |= fresh;                                                                          \
            f = _mm512_mask_mov_epi64(f, (__mmask8)fresh,                                          \
                                      _mm512_set1_epi64((long long)(zi << 8)));                    \
            if (zi == n - 1) {                                                                     \
                __m512i e = _mm512_ternarylogic_epi64(                                             \
                    f, lane, _mm512_set1_epi64((long long)((uint64_t)zt << 32)), 0xFE);            \
                _mm512_storeu_si512(ev + nev, _mm512_maskz_compress_epi64((__mmask8)bad, e));      \
                nev += (size_t)__builtin_popcount(bad);                                            \
                bad = 0;                                                                           \
            }                                                                                      \
        }                                                                                          \
        zrow++;                                                                                    \
        if (++zi == nw) {                                                                          \
            zi = 0;                                                                                \
            zt++;                                                                                  \
        }                                                                                          \
    } while (0)

/* am_rng_words_lanes (nb blocks per step, to words) and ZIG_LANES on its words (normals to out,
 * events to ev, their number returned) in one pass: the words of four (step, block) pairs at a
 * time as lanes_words4_avx512, and during their rounds, one row per round, the fast path of the
 * words of two sets earlier (the words are bound by the vector units, the fast path by its
 * table loads, so the two overlap; measured faster than after the rounds, or one set behind). */
__attribute__((target("avx512f,avx512dq"))) size_t
am_rng_lanes_gauss_avx512(const am_rng *r, uint64_t step0, size_t ns, size_t n, size_t nb,
                          uint64_t *words, double *out, uint64_t *ev)
{
    uint64_t c1[AM_RNG_LANES], c2[AM_RNG_LANES];
    for (int l = 0; l < AM_RNG_LANES; l++) {
        c1[l] = r[l].ctr.v[1];
        c2[l] = r[l].ctr.v[2] & 0xffffu;
    }
    const __m512i vc1 = _mm512_loadu_si512(c1), vc2 = _mm512_loadu_si512(c2);
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    uint64_t ks[10][2]; /* round keys */
    lanes_round_keys(r, ks);
    const size_t nw = 2 * nb, np = ns * nb, nrows = 2 * np;
    size_t zrow = 0, zi = 0, zt = 0, nev = 0;
    double *zo = out;
    unsigned bad = 0;
    __m512i f = _mm512_setzero_si512();
    uint64_t step = step0;
    uint32_t b = 0;
    uint64_t tmp[4 * 2 * AM_RNG_LANES] = {0}; /* the last set when it is partial */
    for (size_t t = 0; t < np; t += 4) {
        size_t ready = t >= 4 ? 2 * t - 8 : 0; /* rows stored before the previous set */
        uint64_t ctr[4][3];                    /* 64-bit: broadcast straight from memory */
        lanes_ctr4(&step, &b, nb, ctr);
        __m512i x0[4], x1[4], x2[4], x3[4];
        lanes_init4_avx512(vc1, vc2, (const uint64_t(*)[3])ctr, x0, x1, x2, x3);
#pragma GCC unroll 1
        for (int round = 0; round < 10; round++) {
            lanes_round4_avx512(ks[round], x0, x1, x2, x3);
            if (zrow < ready) ZIG_ROW();
        }
        uint64_t *dst = t + 4 <= np ? words + 2 * t * AM_RNG_LANES : tmp;
        /* (x1 << 32) | (x0 & low) by one shuffle: the odd 32-bit elements from x1's even ones */
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            uint64_t *o = dst + 2 * (size_t)g * AM_RNG_LANES;
            _mm512_storeu_si512(o, _mm512_mask_shuffle_epi32(x0[g], 0xAAAA, x1[g], _MM_PERM_CCAA));
            _mm512_storeu_si512(o + AM_RNG_LANES,
                                _mm512_mask_shuffle_epi32(x2[g], 0xAAAA, x3[g], _MM_PERM_CCAA));
        }
        if (dst == tmp)
            memcpy(words + 2 * t * AM_RNG_LANES, tmp, 2 * (np - t) * AM_RNG_LANES * sizeof *tmp);
    }
    while (zrow < nrows)
        ZIG_ROW();
    return nev;
}
#undef ZIG_ROW
/* Margin of am_rng_wedge8_avx512: a decision within it of the boundary is left to zig_rare. */
#define LANE_WEDGE_MARGIN 1e-9

/* The wedge test of zig_rare for 8 failed fast tests at once: words wf (i = wf & 0xff > 0)
 * and the uniform's words wu. The test is f1 + U (f0 - f1) < 1 with f0 = exp(a),
 * a = -(x[i]^2 - x^2)/2 in [-0.73, 0] for every layer, f1 = f0 c[i]. Here exp is the
 * Taylor polynomial of degree 13 about -0.375 (relative error below 1e-15 on [-0.75, 0.01],
 * with the rounding), so t is within 1e-14 of zig_rare's; where t is farther than
 * LANE_WEDGE_MARGIN from 1 (and a in that range, i > 0) the decision is zig_rare's. Returns
 * the mask of such lanes, their decisions (1 = accept x = u x[i]) in *accept, x in *xo. */
__attribute__((target("avx512f,avx512dq"))) unsigned
am_rng_wedge8_avx512(const uint64_t *wf, const uint64_t *wu, unsigned *accept, __m512d *xo)
{
    const __m512i high53 = _mm512_set1_epi64((long long)~0x7ffULL);
    __m512i w = _mm512_loadu_si512(wf);
    __m512d u =
        _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_and_si512(w, high53)), _mm512_set1_pd(0x1.0p-63));
    __m512d xi = lookup8_avx512(am_zig_x, wf), ci = lookup8_avx512(am_zig_c, wf);
    __m512d x = _mm512_mul_pd(u, xi);
    __m512d a = _mm512_mul_pd(_mm512_set1_pd(-0.5),
                              _mm512_sub_pd(_mm512_mul_pd(xi, xi), _mm512_mul_pd(x, x)));
    __m512d y = _mm512_sub_pd(a, _mm512_set1_pd(-0.375));
    static const double inv_fact[14] = {1.0,
                                        1.0,
                                        1.0 / 2,
                                        1.0 / 6,
                                        1.0 / 24,
                                        1.0 / 120,
                                        1.0 / 720,
                                        1.0 / 5040,
                                        1.0 / 40320,
                                        1.0 / 362880,
                                        1.0 / 3628800,
                                        1.0 / 39916800,
                                        1.0 / 479001600,
                                        1.0 / 6227020800.0};
    __m512d p = _mm512_set1_pd(inv_fact[13]);
    for (int k = 12; k >= 0; k--)
        p = _mm512_fmadd_pd(p, y, _mm512_set1_pd(inv_fact[k]));
    __m512d f0 = _mm512_mul_pd(p, _mm512_set1_pd(0.6872892787909722)); /* exp(-0.375) */
    __m512d f1 = _mm512_mul_pd(f0, ci);
    __m512d U = _mm512_mul_pd(
        _mm512_add_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(_mm512_loadu_si512(wu), 11)),
                      _mm512_set1_pd(0.5)),
        _mm512_set1_pd(0x1.0p-53));
    __m512d t = _mm512_add_pd(f1, _mm512_mul_pd(U, _mm512_sub_pd(f0, f1)));
    __mmask8 ok = _mm512_test_epi64_mask(w, _mm512_set1_epi64(0xff));
    ok &= _mm512_cmp_pd_mask(a, _mm512_set1_pd(-0.75), _CMP_GE_OQ);
    ok &= _mm512_cmp_pd_mask(a, _mm512_set1_pd(0.01), _CMP_LE_OQ);
    __mmask8 acc = _mm512_cmp_pd_mask(t, _mm512_set1_pd(1.0 - LANE_WEDGE_MARGIN), _CMP_LT_OQ);
    __mmask8 rej = _mm512_cmp_pd_mask(t, _mm512_set1_pd(1.0 + LANE_WEDGE_MARGIN), _CMP_GT_OQ);
    ok &= acc | rej;
    *accept = (unsigned)(acc & ok);
    *xo = x;
    return (unsigned)ok;
}

/* Block b of 8 streams at once, stream g with counter words (c1[g], c2[g], c3[g])
 * (lanes_words4_avx512's scheme): its words 2 b and 2 b + 1 to x[0], x[1]. */
AVX512 static void event_block_avx512(const uint64_t (*ks)[2], __m512i c1, __m512i c2, __m512i c3,
                                      uint32_t b, __m512i *x)
{
    const __m512i m0 = _mm512_set1_epi64(PHILOX_M4x32_0), m1 = _mm512_set1_epi64(PHILOX_M4x32_1);
    __m512i x0 = _mm512_set1_epi64(b), x1 = c1, x2 = c2, x3 = c3;
    for (int round = 0; round < 10; round++)
        philox_round_q512(&x0, &x1, &x2, &x3, m0, m1, _mm512_set1_epi64((long long)ks[round][0]),
                          _mm512_set1_epi64((long long)ks[round][1]));
    x[0] = _mm512_mask_shuffle_epi32(x0, 0xAAAA, x1, _MM_PERM_CCAA); /* (x1 << 32) | x0 */
    x[1] = _mm512_mask_shuffle_epi32(x2, 0xAAAA, x3, _MM_PERM_CCAA);
}

/* rare_lanes with AVX-512, 8 events at a time, one per 64-bit lane: block nb of each
 * event's step computed in the lanes, the wedge test of the first failed normal by
 * am_rng_wedge8_avx512, the normals after it by the fast path in the lanes while it passes (their
 * words gathered from the step's words and that block: after one wedge test a lane is at
 * most 2 words ahead, so it never needs more); what is left (tails, decisions within the
 * margin, a second failure) goes to zig_from_buffer from where the lane stopped. */
__attribute__((target("avx512f,avx512dq"))) void
am_rng_rare_lanes_avx512(const am_rng *r, uint64_t step0, size_t n, size_t nb,
                         const uint64_t *words, double *out, const uint64_t *ev, size_t nev)
{
    enum { NLANE = AM_RNG_LANES };
    const size_t nw = 2 * nb;
    uint64_t ks[10][2], c1a[NLANE], c2a[NLANE];
    lanes_round_keys(r, ks);
    for (int l = 0; l < NLANE; l++) {
        c1a[l] = r[l].ctr.v[1];
        c2a[l] = r[l].ctr.v[2] & 0xffffu;
    }
    const __m512i C1 = _mm512_loadu_si512(c1a), C2 = _mm512_loadu_si512(c2a);
    const __m512i low = _mm512_set1_epi64(0xffffffffLL), one = _mm512_set1_epi64(1);
    const __m512i vnw = _mm512_set1_epi64((long long)nw),
                  high53 = _mm512_set1_epi64((long long)~0x7ffULL);
    /* in batches of RARE_BATCH events: first the extra block and the wedge words of every
     * event, then every wedge test, then the rest event vector by event vector (the chains
     * of consecutive vectors overlap in the first two loops) */
    for (size_t b0 = 0; b0 < nev; b0 += RARE_BATCH) {
        size_t nbat = nev - b0 < RARE_BATCH ? nev - b0 : RARE_BATCH;
        const uint64_t *evb = ev + b0;
        uint64_t xw[2][RARE_BATCH] __attribute__((aligned(64)));
        uint64_t wfa[RARE_BATCH] __attribute__((aligned(64)));
        uint64_t wua[RARE_BATCH] __attribute__((aligned(64)));
        double xacca[RARE_BATCH] __attribute__((aligned(64)));
        unsigned accepta[RARE_BATCH / NLANE], cleara[RARE_BATCH / NLANE];
        for (size_t e0 = 0; e0 < nbat; e0 += NLANE) {
            __mmask8 valid = (__mmask8)(nbat - e0 < NLANE ? (1u << (nbat - e0)) - 1 : 0xffu);
            __m512i E = _mm512_maskz_loadu_epi64(valid, evb + e0);
            __m512i T = _mm512_srli_epi64(E, 32), L = _mm512_and_si512(E, _mm512_set1_epi64(0xff));
            __m512i F = _mm512_and_si512(_mm512_srli_epi64(E, 8), _mm512_set1_epi64(0xffffff));
            __m512i step = _mm512_add_epi64(_mm512_set1_epi64((long long)step0), T);
            __m512i c2 = _mm512_or_si512(_mm512_permutexvar_epi64(L, C2),
                                         _mm512_and_si512(_mm512_slli_epi64(step, 16), low));
            __m512i c3 = _mm512_and_si512(_mm512_srli_epi64(step, 16), low);
            __m512i x[2];
            event_block_avx512((const uint64_t(*)[2])ks, _mm512_permutexvar_epi64(L, C1), c2, c3,
                               (uint32_t)nb, x);
            __m512i wbase =
                _mm512_add_epi64(_mm512_mullo_epi64(T, _mm512_set1_epi64((long long)(8 * nw))), L);
            __m512i wfv = _mm512_i64gather_epi64(_mm512_add_epi64(wbase, _mm512_slli_epi64(F, 3)),
                                                 (const void *)words, 8);
            __m512i F1 = _mm512_add_epi64(F, one);
            __m512i wuv = _mm512_mask_i64gather_epi64(
                x[0], _mm512_cmplt_epu64_mask(F1, vnw),
                _mm512_add_epi64(wbase, _mm512_slli_epi64(F1, 3)), (const void *)words, 8);
            _mm512_store_si512(xw[0] + e0, x[0]);
            _mm512_store_si512(xw[1] + e0, x[1]);
            _mm512_store_si512(wfa + e0, wfv);
            _mm512_store_si512(wua + e0, wuv);
        }
        for (size_t e0 = 0; e0 < nbat; e0 += NLANE) {
            __m512d xacc;
            cleara[e0 / NLANE] =
                am_rng_wedge8_avx512(wfa + e0, wua + e0, &accepta[e0 / NLANE], &xacc);
            _mm512_store_pd(xacca + e0, xacc);
        }
        for (size_t e0 = 0; e0 < nbat; e0 += NLANE) {
            __mmask8 valid = (__mmask8)(nbat - e0 < NLANE ? (1u << (nbat - e0)) - 1 : 0xffu);
            __m512i E = _mm512_maskz_loadu_epi64(valid, evb + e0);
            __m512i T = _mm512_srli_epi64(E, 32), L = _mm512_and_si512(E, _mm512_set1_epi64(0xff));
            __m512i F = _mm512_and_si512(_mm512_srli_epi64(E, 8), _mm512_set1_epi64(0xffffff));
            __m512i x[2] = {_mm512_load_si512(xw[0] + e0), _mm512_load_si512(xw[1] + e0)};
            /* word j of lane g at words[wbase[g] + 8 j] (j < nw), else x[j - nw]; normal k of
             * lane g at out[obase[g] + 8 k] */
            __m512i wbase =
                _mm512_add_epi64(_mm512_mullo_epi64(T, _mm512_set1_epi64((long long)(8 * nw))), L);
            __m512i obase =
                _mm512_add_epi64(_mm512_mullo_epi64(T, _mm512_set1_epi64((long long)(8 * n))), L);
            unsigned accept = accepta[e0 / NLANE];
            __m512d xacc = _mm512_load_pd(xacca + e0);
            __mmask8 clear = (__mmask8)cleara[e0 / NLANE] & valid;
            __mmask8 acc = (__mmask8)accept & clear;
            _mm512_mask_i64scatter_pd(out, acc, _mm512_add_epi64(obase, _mm512_slli_epi64(F, 3)),
                                      xacc, 8);
            /* lane g: normal K[g] next, from word K[g] + OFF[g] (1 after an accepted wedge,
             * 2 after a rejected one) */
            __m512i K = _mm512_mask_add_epi64(F, acc, F, one);
            __m512i OFF =
                _mm512_mask_sub_epi64(_mm512_set1_epi64(2), acc, _mm512_set1_epi64(2), one);
            __m512i stopk = _mm512_set1_epi64((long long)n);
            __mmask8 live = clear & _mm512_cmplt_epu64_mask(K, _mm512_set1_epi64((long long)n));
            size_t k = live ? (size_t)_mm512_mask_reduce_min_epu64(live, K) : n;
            for (; k < n && live; k++) {
                __m512i kv = _mm512_set1_epi64((long long)k);
                __mmask8 act = live & _mm512_cmple_epu64_mask(K, kv);
                __m512i J = _mm512_add_epi64(kv, OFF);
                /* all lanes gathered (not only the active ones): the next normal's loads do
                 * not wait for this one's test */
                __mmask8 inb = _mm512_cmplt_epu64_mask(J, vnw);
                __m512i wx = _mm512_mask_blend_epi64(_mm512_cmpeq_epi64_mask(J, vnw), x[1], x[0]);
                __m512i w = wx; /* no gather when every lane is past the step's words */
                if (inb)
                    w = _mm512_mask_i64gather_epi64(
                        wx, inb, _mm512_add_epi64(wbase, _mm512_slli_epi64(J, 3)),
                        (const void *)words, 8);
                uint64_t wk[NLANE] __attribute__((aligned(64)));
                _mm512_store_si512(wk, w);
                __m512d c = _mm512_cvtepi64_pd(_mm512_and_si512(w, high53)), rr, xi;
                pair8_avx512(wk, &rr, &xi);
                __mmask8 pass = _mm512_cmp_pd_mask(_mm512_abs_pd(c), rr, _CMP_LT_OQ);
                _mm512_mask_i64scatter_pd(out, act & pass,
                                          _mm512_add_epi64(obase, _mm512_slli_epi64(kv, 3)),
                                          _mm512_mul_pd(c, xi), 8);
                __mmask8 failed = act & ~pass;
                stopk = _mm512_mask_mov_epi64(stopk, failed, kv);
                live &= ~failed;
            }
            /* the rest by the scalar ziggurat: lanes without a clear decision from normal f at
             * word f, lanes whose fast test failed again from there */
            unsigned rest =
                (unsigned)(valid & ~clear) |
                (unsigned)_mm512_cmplt_epu64_mask(stopk, _mm512_set1_epi64((long long)n));
            if (!rest) continue;
            uint64_t ta[NLANE], fa[NLANE], la[NLANE], ka[NLANE], offa[NLANE], xa[2][NLANE];
            _mm512_storeu_si512(ta, T);
            _mm512_storeu_si512(fa, F);
            _mm512_storeu_si512(la, L);
            _mm512_storeu_si512(ka, stopk);
            _mm512_storeu_si512(offa, OFF);
            _mm512_storeu_si512(xa[0], x[0]);
            _mm512_storeu_si512(xa[1], x[1]);
            for (; rest; rest &= rest - 1) {
                unsigned g = (unsigned)__builtin_ctz(rest);
                size_t t = (size_t)ta[g], l = (size_t)la[g], kk = (size_t)fa[g], j = kk;
                if (clear >> g & 1) {
                    kk = (size_t)ka[g];
                    j = kk + (size_t)offa[g];
                }
                uint64_t buf[LANE_WORDS + 2];
                double tmp[LANE_WORDS];
                for (size_t i = 0; i < nw; i++)
                    buf[i] = words[(t * nw + i) * NLANE + l];
                buf[nw] = xa[0][g];
                buf[nw + 1] = xa[1][g];
                am_rng q;
                lane_at(&r[l], step0 + t, &q);
                size_t c = am_rng_zig_from_buffer(&q, buf, 0, nb + 1, j, tmp, n - kk, 0);
                if (c < n - kk) am_rng_fill_gaussian(&q, tmp + c, n - kk - c);
                for (size_t i = kk; i < n; i++)
                    out[(t * n + i) * NLANE + l] = tmp[i - kk];
            }
        }
    }
}
#endif
