/*
 * am_rng.c -- out-of-line parts of am_rng.h.
 *
 * 1. The ziggurat's rare cases: the base strip's tail (x > R, Marsaglia's exponential
 *    method) and the wedges, accepted when f(x[i+1]) + U (f(x[i]) - f(x[i+1])) < f(x),
 *    f(x) = exp(-x^2/2).
 * 2. Bulk draws. Philox4x32-10 maps (counter, key) to 4 x 32 bits by ten rounds of
 *      (x0, x1, x2, x3) <- (hi(M1 x2) ^ x1 ^ k0, lo(M1 x2), hi(M0 x0) ^ x3 ^ k1, lo(M0 x0)),
 *    the key bumped by (W0, W1) between rounds. The AVX2 (AVX-512) code keeps word j of 8
 *    (16) consecutive blocks in the lanes of one register, two such groups interleaved,
 *    and forms the 32 x 32 -> 64-bit products of even and odd lanes with vpmuludq; a
 *    transpose writes the words in stream order. The ziggurat's fast test runs over all
 *    words of a pass without branches; then, in stream order, a normal whose fast test
 *    failed is finished by the rare case on the words already generated (then the stream),
 *    and the normals after it move down over the words it used, so the result equals the
 *    scalar calls. am_rng_fill_gaussian_sum carries a sequential sum along the Philox rounds
 *    and the passes (the consumer's dot product overlaps the normals).
 * 3. Streams side by side (am_rng_words_lanes, am_rng_gaussian_lanes): 8 streams, one per
 *    lane, for the replica-batched kernel; with AVX-512 the words and the ziggurat's fast path
 *    in one pass (lanes_gauss_avx512), the rare cases of a batch together (rare_lanes_avx512).
 */
#include "am_rng.h"
#include "am_common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if AM_X86
#include <immintrin.h>
#endif

#define ZIG_R 3.6541528853610088

/* Words for the rare case: from buf[j..nw) while there are any (buf[0] = word 0 of block
 * b0 of r's step), then from the stream r positioned after buf (j = nw + 1 marks that);
 * without buf (nw = 0, j = 1) from r alone. */
typedef struct {
    am_rng *r;
    const uint64_t *buf;
    size_t j, nw;
    uint32_t b0;
} word_src;

static inline void set_position(am_rng *r, const uint64_t *buf, uint32_t b0, size_t j);

static inline uint64_t src_u64(word_src *s)
{
    if (s->j < s->nw) return s->buf[s->j++];
    if (s->j == s->nw) {
        set_position(s->r, s->buf, s->b0, s->nw);
        s->j++;
    }
    return am_rng_u64(s->r);
}

static inline double src_uniform(word_src *s)
{
    return ((double)(src_u64(s) >> 11) + 0.5) * 0x1.0p-53;
}

/* Margin of the one-exponential wedge test (see zig_rare). */
#define WEDGE_MARGIN 1e-12

/* The rare case of the ziggurat from word w on: the tail (x > R, Marsaglia's exponential
 * method) and the wedges, accepted when f1 + U (f0 - f1) < 1 with
 * f0 = exp(-(x[i]^2 - x^2)/2), f1 = exp(-(x[i+1]^2 - x^2)/2). f1 is taken as f0 c[i]
 * (c[i] = f(x[i+1]) / f(x[i])), which differs from the exponential by a few 1e-15 relative
 * (rounding of the arguments and of exp; f0, f1 <= 2.1); only when the test lands within
 * WEDGE_MARGIN of 1, where the two could disagree, is f1 computed by exp as well. So the
 * decisions, and the normals, are those of the two-exponential test, with one exp. */
static inline double zig_rare(word_src *s, uint64_t w)
{
    for (;;) {
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        if (fabs(u) < am_zig_r[i]) return u * am_zig_x[i];
        if (i == 0) {
            double x, y;
            do {
                x = log(src_uniform(s)) / ZIG_R;
                y = log(src_uniform(s));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - ZIG_R : ZIG_R - x;
        }
        double x = u * am_zig_x[i];
        double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
        double f1 = f0 * am_zig_c[i];
        double U = src_uniform(s);
        double t = f1 + U * (f0 - f1);
        if (fabs(t - 1.0) <= WEDGE_MARGIN) {
            f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
            t = f1 + U * (f0 - f1);
        }
        if (t < 1.0) return x;
        w = src_u64(s);
    }
}

double am_rng_gaussian_slow(am_rng *r, uint64_t w)
{
    word_src s = {r, NULL, 1, 0, 0};
    return zig_rare(&s, w);
}

/* One block: words 2b, 2b+1 of r's step. On x86-64 with SSE2 (always present): the state
 * (x0, x1, x2, x3) sits in one register and a single pmuludq forms both products x0 M0
 * and x2 M1 (even 32-bit lanes), giving (lo0, hi0, lo1, hi1); one shuffle and two xors
 * make the next state (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0). Elsewhere: Random123. */
static inline void philox_block(const am_rng *r, uint32_t b, uint64_t *out)
{
#if AM_X86
    __m128i x = _mm_setr_epi32((int)b, (int)r->ctr.v[1], (int)r->ctr.v[2], (int)r->ctr.v[3]);
    const __m128i m = _mm_set_epi64x(PHILOX_M4x32_1, PHILOX_M4x32_0);
    const __m128i w = _mm_set_epi64x(PHILOX_W32_1, PHILOX_W32_0);
    __m128i k = _mm_set_epi64x(r->key.v[1], r->key.v[0]);
    for (int round = 0; round < 10; round++) {
        __m128i t = _mm_xor_si128(_mm_srli_epi64(x, 32), k); /* off the multiply's path */
        x = _mm_xor_si128(_mm_shuffle_epi32(_mm_mul_epu32(x, m), _MM_SHUFFLE(0, 1, 2, 3)), t);
        k = _mm_add_epi32(k, w);
    }
    _mm_storeu_si128((__m128i *)out, x);
#else
    philox4x32_ctr_t c = r->ctr;
    c.v[0] = b;
    philox4x32_ctr_t x = philox4x32(c, r->key);
    out[0] = (uint64_t)x.v[1] << 32 | x.v[0];
    out[1] = (uint64_t)x.v[3] << 32 | x.v[2];
#endif
}

/* The block at counter c (any c0..c3), by philox_block on a stream holding c. */
static void blocks_at_portable(const philox4x32_key_t *key, const uint32_t (*ctr)[4], size_t nb,
                               uint64_t *out)
{
    am_rng q;
    q.key = *key;
    for (size_t t = 0; t < nb; t++) {
        q.ctr.v[1] = ctr[t][1];
        q.ctr.v[2] = ctr[t][2];
        q.ctr.v[3] = ctr[t][3];
        philox_block(&q, ctr[t][0], out + 2 * t);
    }
}

static void blocks_portable(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out);

/* The scalar stream takes its blocks from a cache of consecutive blocks of the current step.
 * One block's ten rounds are a latency-bound chain, and several blocks computed together
 * cost little more than one, so the k-th refill of a step computes min(2^k, 16) blocks at
 * once: a step that needs one word pays for one block, a step that needs many gets them in
 * vectorised groups of 16. The words are those of philox_block, block by block. */
void am_rng_refill(am_rng *r)
{
    uint32_t b = r->ctr.v[0];
    if (r->cache_n == 0 || b - r->cache_b0 >= r->cache_n) {
        unsigned nb = r->cache_n == 0 ? 1 : 2 * r->cache_n;
        if (nb > AM_RNG_CACHE_BLOCKS) nb = AM_RNG_CACHE_BLOCKS;
        if (nb <= 2)
            blocks_portable(r, b, nb, r->cache);
        else
            am_rng_blocks(r, b, nb, r->cache, 2);
        r->cache_b0 = b;
        r->cache_n = nb;
    }
    uint32_t j = b - r->cache_b0;
    r->out[0] = r->cache[2 * j];
    r->out[1] = r->cache[2 * j + 1];
    r->ctr.v[0]++;
    r->used = 0;
}

/* Block by block. */
static void blocks_portable(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out)
{
    for (size_t b = 0; b < nb; b++)
        philox_block(r, b0 + (uint32_t)b, out + 2 * b);
}

/* A sequential sum a = a + p[i] + p[i+1] + ... + p[n-1] carried along by the Philox rounds and
 * ziggurat passes of am_rng_fill_gaussian_sum (so that its chain of additions overlaps the
 * ziggurat). */
typedef struct {
    const double *p;
    size_t i, n;
    double a;
} side_sum;

/* One term of the side sum ss (if any) per call while terms are left. */
#define SIDE_TERM(ss, a, sp, si, sn)                                                               \
    do {                                                                                           \
        if ((ss) && (si) < (sn)) (a) += (sp)[(si)++];                                              \
    } while (0)

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
        __m256i t = _mm256_xor_si256(_mm256_srli_epi64(x, 32), k);
        x = _mm256_xor_si256(_mm256_shuffle_epi32(_mm256_mul_epu32(x, m), _MM_SHUFFLE(0, 1, 2, 3)),
                             t);
        k = _mm256_add_epi32(k, w);
    }
    _mm256_storeu_si256((__m256i *)out, x);
}

AVX2 static void blocks_avx2(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out)
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
 * or by blocks_avx2 when there are at most 4. */
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
        blocks_avx2(r, b0 + (uint32_t)b, rest, out + 2 * b); /* AVX-512F implies AVX2 */
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

AVX512 static void blocks_avx512(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out)
{
    blocks_avx512_impl(r, b0, nb, out, NULL);
}

/* The same with one term of the side sum ss per register set and round. */
AVX512 static void blocks_avx512_sum(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out,
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

ZIG512 static void zig_pass_avx512(const uint64_t *src, double *dst, size_t m, uint64_t *rej)
{
    zig_pass_avx512_impl(src, dst, m, rej, NULL);
}

/* The same with eight terms of the side sum ss per eight words. */
ZIG512 static void zig_pass_sum_avx512(const uint64_t *src, double *dst, size_t m, uint64_t *rej,
                                       side_sum *ss)
{
    zig_pass_avx512_impl(src, dst, m, rej, ss);
}

AVX2 static void zig_pass_avx2(const uint64_t *src, double *dst, size_t m, uint64_t *rej);

/* Blocks at arbitrary counters ctr[t][0..3] (t < nb, nb a multiple of 16), one block per
 * 128-bit lane with philox_block's scheme, four registers interleaved. */
AVX512 static void blocks_at_avx512(const philox4x32_key_t *key, const uint32_t (*ctr)[4],
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
            for (int g = 0; g < 4; g++) {
                __m512i u = _mm512_xor_si512(_mm512_srli_epi64(x[g], 32), k);
                x[g] =
                    _mm512_xor_si512(_mm512_shuffle_epi32(_mm512_mul_epu32(x[g], m),
                                                          (_MM_PERM_ENUM)_MM_SHUFFLE(0, 1, 2, 3)),
                                     u);
            }
            k = _mm512_add_epi32(k, w);
        }
        for (int g = 0; g < 4; g++)
            _mm512_storeu_si512(out + 2 * (t + 4 * (size_t)g), x[g]);
    }
}

#endif

/* The instruction set of the bulk draws, from am_common_simd() (AMSGD_SIMD capped at the
 * CPU's best): 2 = AVX-512, 1 = AVX2, 0 = portable only. */
int am_rng_simd(void)
{
    am_simd s = am_common_simd();
    return s >= AM_SIMD_AVX512 ? 2 : s >= AM_SIMD_AVX2 ? 1 : 0;
}

void am_rng_blocks(const am_rng *r, uint32_t block, size_t nb, uint64_t *out, int simd)
{
#if AM_X86
    if (simd >= 2 && am_rng_simd() >= 2) {
        blocks_avx512(r, block, nb, out);
        return;
    }
    if (simd >= 1 && am_rng_simd() >= 1) {
        blocks_avx2(r, block, nb, out);
        return;
    }
#endif
    (void)simd;
    blocks_portable(r, block, nb, out);
}

void am_rng_fill_u64(am_rng *r, uint64_t *out, size_t n)
{
    while (n > 0 && r->used < 2) {
        *out++ = r->out[r->used++];
        n--;
    }
    size_t nb = n / 2;
    am_rng_blocks(r, r->ctr.v[0], nb, out, 2);
    r->ctr.v[0] += (uint32_t)nb;
    if (n % 2) {
        am_rng_u64(r); /* refills out and moves to the next block */
        out[n - 1] = r->out[0];
    }
}

/* Blocks buffered per refill of am_rng_fill_gaussian (one partial block + whole ones). */
#define BUF_BLOCKS 129

/* Blocks drawn beyond one word per normal by a refill of am_rng_fill_gaussian (about 1.5%
 * of the words fail the fast test, and each such case takes one or more words more). */
#define SPARE_BLOCKS 4

/* Positions r at word j of buf, whose word 0 is word 0 of block b0. */
static inline void set_position(am_rng *r, const uint64_t *buf, uint32_t b0, size_t j)
{
    if (j % 2 == 0) {
        r->ctr.v[0] = b0 + (uint32_t)(j / 2);
        r->used = 2;
    } else {
        r->out[0] = buf[j - 1];
        r->out[1] = buf[j];
        r->ctr.v[0] = b0 + (uint32_t)(j / 2) + 1;
        r->used = 1;
    }
}

/* Fewer words than this go through the scalar fast test (a pass costs more there). */
#define ZIG_SHORT 16

/* Words per fast pass of zig_from_buffer. */
#define ZIG_PASS 256

/* The fast test on src[0..m-1] (m <= ZIG_PASS) with instruction set zig_simd, as
 * zig_pass_avx512. */
static inline void zig_pass(const uint64_t *src, double *dst, size_t m, uint64_t *rej, int zig_simd,
                            side_sum *ss)
{
    memset(rej, 0, ZIG_PASS / 8);
#if AM_X86
    if (zig_simd == 2) {
        if (ss)
            zig_pass_sum_avx512(src, dst, m, rej, ss);
        else
            zig_pass_avx512(src, dst, m, rej);
        return;
    }
    if (zig_simd == 1) {
        zig_pass_avx2(src, dst, m, rej);
        return;
    }
#endif
    (void)zig_simd;
    (void)ss; /* the caller finishes the side sum */
    for (size_t t = 0; t < m; t++) {
        uint64_t w = src[t];
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        rej[t / 64] |= (uint64_t) !(fabs(u) < am_zig_r[i]) << (t % 64);
        dst[t] = u * am_zig_x[i];
    }
}

/* First set bit of rej at or after p, or m if none before m. */
static inline size_t next_reject(const uint64_t *rej, size_t p, size_t m)
{
    while (p < m) {
        uint64_t v = rej[p / 64] >> (p % 64);
        if (v) {
            size_t q = p + (size_t)__builtin_ctzll(v);
            return q < m ? q : m;
        }
        p = (p / 64 + 1) * 64;
    }
    return m;
}

/* The ziggurat on the words buf[j..2 nb) (buf[0] = word 0 of block b0 of r's step) into
 * out[0..n): returns how many normals were made; r is left after the last word used.
 * A pass writes the fast-path normals of the next words straight into out as if none were
 * rejected; then, in stream order, each rejected word is replaced by its rare case (which
 * may take the following words as its uniforms), and the normals after it are moved down
 * over the words it took. */
static inline size_t zig_from_buffer_sum(am_rng *r, const uint64_t *buf, uint32_t b0, size_t nb,
                                         size_t j, double *out, size_t n, int zig_simd,
                                         side_sum *ss)
{
    const size_t nw = 2 * nb;
    uint64_t rej[ZIG_PASS / 64];
    size_t k = 0;
    while (k < n && j < nw) {
        size_t m = n - k < nw - j ? n - k : nw - j;
        if (m > ZIG_PASS) m = ZIG_PASS;
        if (m < ZIG_SHORT) {
            /* a few words: the scalar fast test up to the first rejection */
            size_t t = 0;
            for (; t < m; t++) {
                uint64_t w = buf[j + t];
                unsigned i = (unsigned)(w & 0xff);
                double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
                if (!(fabs(u) < am_zig_r[i])) break;
                out[k + t] = u * am_zig_x[i];
            }
            j += t;
            k += t;
            if (t < m) {
                word_src s = {r, buf, j + 1, nw, b0};
                out[k++] = zig_rare(&s, buf[j]);
                if (s.j > nw) return k;
                j = s.j;
            }
            continue;
        }
        size_t js = j, ks = k, p = 0; /* the pass: words js.., normals ks..; p words done */
        zig_pass(buf + js, out + ks, m, rej, zig_simd, ss);
        for (;;) {
            size_t q = next_reject(rej, p, m);
            if (k != ks + p) memmove(out + k, out + ks + p, (q - p) * sizeof *out);
            k += q - p;
            j = js + q;
            if (q == m) break;
            /* rare case: its words from the buffer, then (rarely) from the stream */
            word_src s = {r, buf, j + 1, nw, b0};
            out[k++] = zig_rare(&s, buf[j]);
            if (s.j > nw) return k; /* left the buffer: r is positioned after the last word */
            j = s.j;
            p = j - js;
            if (p >= m) break;
        }
    }
    set_position(r, buf, b0, j);
    return k;
}

static size_t zig_from_buffer(am_rng *r, const uint64_t *buf, uint32_t b0, size_t nb, size_t j,
                              double *out, size_t n, int zig_simd)
{
    return zig_from_buffer_sum(r, buf, b0, nb, j, out, n, zig_simd, NULL);
}

static inline void fill_gaussian_sum(am_rng *r, double *out, size_t n, side_sum *ss)
{
    uint64_t buf[2 * BUF_BLOCKS];
    size_t k = 0;
    int zig_simd = am_rng_simd();
    while (k < n) {
        /* buf starts at the block holding the next word of the stream and holds the words
         * still needed (one each, unless the rare case draws more: then it is refilled) */
        uint32_t b0;
        size_t j, nb, need;
        if (r->used < 2) {
            b0 = r->ctr.v[0] - 1;
            memcpy(buf, r->out, sizeof r->out);
            j = r->used;
            need = (n - k) / 2; /* one word is in the partial block */
            nb = need < BUF_BLOCKS - 1 ? need : BUF_BLOCKS - 1;
            am_rng_blocks(r, b0 + 1, nb, buf + 2, 2);
            nb++;
        } else {
            b0 = r->ctr.v[0];
            j = 0;
            need = (n - k + 1) / 2;
            /* longer requests: a few blocks more for the words the rare cases take, in
             * whole register sets of 8 blocks (cheaper than a second refill) */
            if (need > 4) need = (need + SPARE_BLOCKS + 7) / 8 * 8;
            nb = need < BUF_BLOCKS - 1 ? need : BUF_BLOCKS - 1; /* whole AVX-512 groups */
#if AM_X86
            if (ss && zig_simd == 2)
                blocks_avx512_sum(r, b0, nb, buf, ss);
            else
#endif
                am_rng_blocks(r, b0, nb, buf, 2);
        }
        k += zig_from_buffer_sum(r, buf, b0, nb, j, out + k, n - k, zig_simd, ss);
    }
}

void am_rng_fill_gaussian(am_rng *r, double *out, size_t n)
{
    fill_gaussian_sum(r, out, n, NULL);
}

double am_rng_fill_gaussian_sum(am_rng *r, double *out, size_t n, const double *p, size_t np,
                                double a)
{
    side_sum ss = {p, 0, np, a};
    fill_gaussian_sum(r, out, n, &ss);
    for (size_t i = ss.i; i < np; i++)
        ss.a += p[i];
    return ss.a;
}

/* Blocks per batch of am_rng_fill_gaussian_steps (a multiple of 16). */
#define STEP_BLOCKS 128

void am_rng_fill_gaussian_steps(am_rng *r, uint64_t step0, size_t nsteps, size_t n, double *out)
{
    size_t nbs = (n + 1) / 2; /* blocks per step without rejections */
    if (nbs == 0 || nbs > STEP_BLOCKS / 4 || nsteps == 1) {
        for (size_t s = 0; s < nsteps; s++) {
            am_rng_seek(r, step0 + s);
            am_rng_fill_gaussian(r, out + s * n, n);
        }
        return;
    }
    uint32_t ctr[STEP_BLOCKS][4];
    uint64_t buf[2 * STEP_BLOCKS];
    int zig_simd = am_rng_simd();
    size_t per = STEP_BLOCKS / nbs; /* steps per batch */
    for (size_t s0 = 0; s0 < nsteps; s0 += per) {
        size_t ns = nsteps - s0 < per ? nsteps - s0 : per, nb = ns * nbs;
        for (size_t s = 0; s < ns; s++) {
            am_rng_seek(r, step0 + s0 + s); /* the counter words of that step */
            for (size_t b = 0; b < nbs; b++) {
                uint32_t *c = ctr[s * nbs + b];
                c[0] = (uint32_t)b;
                c[1] = r->ctr.v[1];
                c[2] = r->ctr.v[2];
                c[3] = r->ctr.v[3];
            }
        }
#if AM_X86
        if (am_rng_simd() >= 2) {
            size_t nb16 = (nb + 15) / 16 * 16;
            for (size_t t = nb; t < nb16; t++)
                memcpy(ctr[t], ctr[0], sizeof ctr[0]);
            blocks_at_avx512(&r->key, (const uint32_t(*)[4])ctr, nb16, buf);
        } else
#endif
            blocks_at_portable(&r->key, (const uint32_t(*)[4])ctr, nb, buf);
        for (size_t s = 0; s < ns; s++) {
            double *o = out + (s0 + s) * n;
            am_rng_seek(r, step0 + s0 + s);
            size_t k = zig_from_buffer(r, buf + 2 * s * nbs, 0, nbs, 0, o, n, zig_simd);
            if (k < n) am_rng_fill_gaussian(r, o + k, n - k);
        }
    }
}

/* ---- streams side by side: AM_RNG_LANES streams (same key), one lane each ---- */

/* Whether r[0..AM_RNG_LANES-1] share one key (the lane code needs it). */
static int lanes_same_key(const am_rng *r)
{
    for (int l = 1; l < AM_RNG_LANES; l++)
        if (r[l].key.v[0] != r[0].key.v[0] || r[l].key.v[1] != r[0].key.v[1]) return 0;
    return 1;
}

/* q at step `step` of src's stream, without copying src's cache. */
static inline void lane_at(const am_rng *src, uint64_t step, am_rng *q)
{
    q->key = src->key;
    q->ctr = src->ctr;
    am_rng_seek(q, step);
}

/* Words one block at a time (any CPU). */
static void lanes_words_portable(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
                                 uint64_t *out)
{
    for (int l = 0; l < AM_RNG_LANES; l++) {
        am_rng q;
        for (size_t s = 0; s < ns; s++) {
            lane_at(&r[l], step0 + s, &q);
            for (size_t b = 0; b < nb; b++) {
                uint64_t w[2];
                philox_block(&q, (uint32_t)b, w);
                out[(s * 2 * nb + 2 * b) * AM_RNG_LANES + (size_t)l] = w[0];
                out[(s * 2 * nb + 2 * b + 1) * AM_RNG_LANES + (size_t)l] = w[1];
            }
        }
    }
}

/* The fast path of the ziggurat on every word of ns steps (n normals of nw words each,
 * layout of am_rng_words_lanes), normals to out, by ZIG8(w, z) (8 lanes, returns the mask of
 * passed tests). Each (step t, lane l) with a failed test gives one event
 * ev[] = t 2^32 + f 2^8 + l, f its first failed normal (in the order of t, then l); returns
 * their number. ev has room for AM_RNG_LANES more than that. */
#define ZIG_LANES(NAME, ATTR, ZIG8)                                                                \
    ATTR static size_t NAME(const uint64_t *words, size_t ns, size_t n, size_t nw, double *out,    \
                            uint64_t *ev)                                                          \
    {                                                                                              \
        size_t nev = 0;                                                                            \
        for (size_t t = 0; t < ns; t++) {                                                          \
            const uint64_t *w = words + t * nw * AM_RNG_LANES;                                     \
            double *z = out + t * n * AM_RNG_LANES;                                                \
            unsigned bad = 0;                                                                      \
            size_t f[AM_RNG_LANES];                                                                \
            for (size_t i = 0; i < n; i++) {                                                       \
                unsigned fresh = ~ZIG8(w + i * AM_RNG_LANES, z + i * AM_RNG_LANES) & ~bad & 0xffu; \
                bad |= fresh;                                                                      \
                for (; fresh; fresh &= fresh - 1)                                                  \
                    f[__builtin_ctz(fresh)] = i;                                                   \
            }                                                                                      \
            for (; bad; bad &= bad - 1) {                                                          \
                unsigned l = (unsigned)__builtin_ctz(bad);                                         \
                ev[nev++] = (uint64_t)t << 32 | (uint64_t)f[l] << 8 | l;                           \
            }                                                                                      \
        }                                                                                          \
        return nev;                                                                                \
    }

#if AM_X86
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

AVX512 static void lanes_words_avx512(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
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

AVX2 static void lanes_words_avx2(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
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
 * am_rng_gaussian_lanes call of the process (zig_pair_ready), so that no call, not even one
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

static void zig_pair_ready(void)
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

/* The fast path on the next row (word zi of step zt of the 8 lanes, row zrow of zw) by
 * zig8_avx512, normals to zo; the lanes of the step failed so far in bad and their first failed
 * normal in f; at the step's last normal its events (ZIG_LANES' order) compressed in a register
 * and stored to ev + nev. Locals of lanes_gauss_avx512. */
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
__attribute__((target("avx512f,avx512dq"))) static size_t
lanes_gauss_avx512(const am_rng *r, uint64_t step0, size_t ns, size_t n, size_t nb, uint64_t *words,
                   double *out, uint64_t *ev)
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

/* 8 lanes by two zig4_avx2. */
AVX2 static inline unsigned zig8_avx2(const uint64_t *w, double *z)
{
    return zig4_avx2(w, z) | zig4_avx2(w + 4, z + 4) << 4;
}

ZIG_LANES(zig_lanes_avx2, AVX2, zig8_avx2)

/* zig_pass_avx512 with AVX2, 4 words at a time (gathers). */
AVX2 static void zig_pass_avx2(const uint64_t *src, double *dst, size_t m, uint64_t *rej)
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

/* Ziggurat fast path on 8 words, any CPU. */
static unsigned zig8_portable(const uint64_t *w, double *z)
{
    unsigned ok = 0;
    for (int l = 0; l < AM_RNG_LANES; l++) {
        unsigned i = (unsigned)(w[l] & 0xff);
        double u = (double)(int64_t)(w[l] & ~(uint64_t)0x7ff) * 0x1.0p-63;
        ok |= (unsigned)(fabs(u) < am_zig_r[i]) << l;
        z[l] = u * am_zig_x[i];
    }
    return ok;
}

ZIG_LANES(zig_lanes_portable, , zig8_portable)

static int lanes_simd(int simd)
{
    int best = am_rng_simd();
    return simd >= 2 && best >= 2 ? 2 : simd >= 1 && best >= 1 ? 1 : 0;
}

void am_rng_words_lanes(const am_rng *r, uint64_t step0, size_t nsteps, size_t nblocks,
                        uint64_t *out, int simd)
{
    int s = lanes_same_key(r) ? lanes_simd(simd) : 0;
#if AM_X86
    if (s == 2) {
        lanes_words_avx512(r, step0, nsteps, nblocks, out);
        return;
    }
    if (s == 1) {
        lanes_words_avx2(r, step0, nsteps, nblocks, out);
        return;
    }
#endif
    (void)s;
    lanes_words_portable(r, step0, nsteps, nblocks, out);
}

/* Words per lane of am_rng_gaussian_lanes' steps at most: longer steps go lane by lane. */
#define LANE_WORDS 256

/* Words per lane per batch of am_rng_gaussian_lanes (whole steps, at least one): a whole call
 * of the replica-batched kernel at d = 4 (64 steps), so that its rare cases are handled
 * together (about 30 of them, in full vectors of 8; batches of 64 words left vectors of 8
 * a third full); words and normals stay within the first- and second-level caches. */
#define CHUNK_WORDS 256

/* Most rare cases of one batch (one per step and lane), and room for a last full store. */
#define CHUNK_EVENTS (CHUNK_WORDS / 2 * AM_RNG_LANES)
#define EVENT_ROOM (CHUNK_EVENTS + AM_RNG_LANES)

/* Extra blocks per rare case of am_rng_gaussian_lanes, computed together for all of them. */
#define RARE_BLOCKS 2

/* Events per batch of rare_lanes_avx512 (a multiple of AM_RNG_LANES). */
#define RARE_BATCH 64

#if AM_X86
/* Margin of wedge8_avx512: a decision within it of the boundary is left to zig_rare. */
#define LANE_WEDGE_MARGIN 1e-9

/* The wedge test of zig_rare for 8 failed fast tests at once: words wf (i = wf & 0xff > 0)
 * and the uniform's words wu. The test is f1 + U (f0 - f1) < 1 with f0 = exp(a),
 * a = -(x[i]^2 - x^2)/2 in [-0.73, 0] for every layer, f1 = f0 c[i]. Here exp is the
 * Taylor polynomial of degree 13 about -0.375 (relative error below 1e-15 on [-0.75, 0.01],
 * with the rounding), so t is within 1e-14 of zig_rare's; where t is farther than
 * LANE_WEDGE_MARGIN from 1 (and a in that range, i > 0) the decision is zig_rare's. Returns
 * the mask of such lanes, their decisions (1 = accept x = u x[i]) in *accept, x in *xo. */
__attribute__((target("avx512f,avx512dq"))) static unsigned
wedge8_avx512(const uint64_t *wf, const uint64_t *wu, unsigned *accept, __m512d *xo)
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
#endif

/* The rare cases of at most RARE_BATCH events of one batch: for each event (step t, lane l, first
 * failed normal f; see ZIG_LANES), that lane's normals f .. n-1 of step step0 + t, from the step's
 * words already drawn, then RARE_BLOCKS more blocks of the step (computed for all events at once),
 * then the stream. */
static void rare_lanes_batch(const am_rng *r, uint64_t step0, size_t n, size_t nb,
                             const uint64_t *words, double *out, const uint64_t *ev, size_t nev)
{
    enum { NLANE = AM_RNG_LANES };
    size_t nw = 2 * nb;
    /* counters of the extra blocks, padded to a multiple of 16 */
    size_t nx = nev * RARE_BLOCKS, nx16 = (nx + 15) / 16 * 16;
    uint32_t ctr[RARE_BATCH * RARE_BLOCKS][4];
    uint64_t extra[2 * RARE_BATCH * RARE_BLOCKS];
    for (size_t e = 0; e < nev; e++) {
        const am_rng *q = &r[ev[e] & 0xff];
        uint64_t step = step0 + (ev[e] >> 32);
        for (size_t j = 0; j < RARE_BLOCKS; j++) {
            uint32_t *c = ctr[e * RARE_BLOCKS + j];
            c[0] = (uint32_t)(nb + j);
            c[1] = q->ctr.v[1];
            c[2] = (q->ctr.v[2] & 0xffffu) | (uint32_t)(step << 16);
            c[3] = (uint32_t)(step >> 16);
        }
    }
    for (size_t e = nx; e < nx16; e++)
        memcpy(ctr[e], ctr[0], sizeof ctr[0]);
#if AM_X86
    if (am_rng_simd() >= 2)
        blocks_at_avx512(&r[0].key, (const uint32_t(*)[4])ctr, nx16, extra);
    else
#endif
        blocks_at_portable(&r[0].key, (const uint32_t(*)[4])ctr, nx, extra);
    uint64_t buf[LANE_WORDS + 2 * RARE_BLOCKS];
    double tmp[LANE_WORDS];
    for (size_t e = 0; e < nev; e++) {
        size_t t = (size_t)(ev[e] >> 32), f = (size_t)(ev[e] >> 8 & 0xffffff);
        size_t l = (size_t)(ev[e] & 0xff);
        for (size_t j = 0; j < nw; j++)
            buf[j] = words[(t * nw + j) * NLANE + l];
        memcpy(buf + nw, extra + 2 * RARE_BLOCKS * e, 2 * RARE_BLOCKS * sizeof *buf);
        am_rng q;
        lane_at(&r[l], step0 + t, &q);
        size_t k = zig_from_buffer(&q, buf, 0, nb + RARE_BLOCKS, f, tmp, n - f, 0);
        if (k < n - f) am_rng_fill_gaussian(&q, tmp + k, n - f - k);
        for (size_t i = f; i < n; i++)
            out[(t * n + i) * NLANE + l] = tmp[i - f];
    }
}

/* rare_lanes_batch RARE_BATCH events at a time (bounded stack). */
static void rare_lanes(const am_rng *r, uint64_t step0, size_t n, size_t nb, const uint64_t *words,
                       double *out, const uint64_t *ev, size_t nev)
{
    for (size_t e0 = 0; e0 < nev; e0 += RARE_BATCH)
        rare_lanes_batch(r, step0, n, nb, words, out, ev + e0,
                         nev - e0 < RARE_BATCH ? nev - e0 : RARE_BATCH);
}

#if AM_X86
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
 * wedge8_avx512, the normals after it by the fast path in the lanes while it passes (their
 * words gathered from the step's words and that block: after one wedge test a lane is at
 * most 2 words ahead, so it never needs more); what is left (tails, decisions within the
 * margin, a second failure) goes to zig_from_buffer from where the lane stopped. */
__attribute__((target("avx512f,avx512dq"))) static void
rare_lanes_avx512(const am_rng *r, uint64_t step0, size_t n, size_t nb, const uint64_t *words,
                  double *out, const uint64_t *ev, size_t nev)
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
            cleara[e0 / NLANE] = wedge8_avx512(wfa + e0, wua + e0, &accepta[e0 / NLANE], &xacc);
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
                size_t c = zig_from_buffer(&q, buf, 0, nb + 1, j, tmp, n - kk, 0);
                if (c < n - kk) am_rng_fill_gaussian(&q, tmp + c, n - kk - c);
                for (size_t i = kk; i < n; i++)
                    out[(t * n + i) * NLANE + l] = tmp[i - kk];
            }
        }
    }
}
#endif

/* Steps of more than LANE_WORDS words: one lane at a time. */
static void gaussian_lanes_long(const am_rng *r, uint64_t step0, size_t nsteps, size_t n,
                                double *out)
{
    enum { NLANE = AM_RNG_LANES };
    double *tmp = malloc(n * sizeof *tmp);
    for (int l = 0; l < NLANE && tmp; l++) {
        am_rng q;
        for (size_t t = 0; t < nsteps; t++) {
            lane_at(&r[l], step0 + t, &q);
            am_rng_fill_gaussian(&q, tmp, n);
            for (size_t i = 0; i < n; i++)
                out[(t * n + i) * NLANE + (size_t)l] = tmp[i];
        }
    }
    if (tmp) {
        free(tmp);
        return;
    }
    for (int l = 0; l < NLANE; l++) { /* no memory for tmp: normal by normal */
        am_rng q;
        for (size_t t = 0; t < nsteps; t++) {
            lane_at(&r[l], step0 + t, &q);
            for (size_t i = 0; i < n; i++)
                out[(t * n + i) * NLANE + (size_t)l] = am_rng_gaussian(&q);
        }
    }
}

void am_rng_gaussian_lanes(const am_rng *r, uint64_t step0, size_t nsteps, size_t n, double *out,
                           int simd)
{
    enum { NLANE = AM_RNG_LANES };
    size_t nb = (n + 1) / 2, nw = 2 * nb;
    if (n == 0) return;
    if (nw > LANE_WORDS) {
        gaussian_lanes_long(r, step0, nsteps, n, out);
        return;
    }
    int s = lanes_same_key(r) ? lanes_simd(simd) : 0;
#if AM_X86
    if (s == 2) zig_pair_ready();
#endif
    uint64_t words[LANE_WORDS * NLANE];
    uint64_t ev[EVENT_ROOM];
    size_t per = nw <= CHUNK_WORDS ? CHUNK_WORDS / nw : 1;
    for (size_t t0 = 0; t0 < nsteps; t0 += per) {
        size_t ns = nsteps - t0 < per ? nsteps - t0 : per, nev;
        double *o = out + t0 * n * NLANE;
#if AM_X86
        if (s == 2) {
            nev = lanes_gauss_avx512(r, step0 + t0, ns, n, nb, words, o, ev);
        } else
#endif
        {
            am_rng_words_lanes(r, step0 + t0, ns, nb, words, s);
#if AM_X86
            if (s == 1)
                nev = zig_lanes_avx2(words, ns, n, nw, o, ev);
            else
#endif
                nev = zig_lanes_portable(words, ns, n, nw, o, ev);
        }
        if (!nev) continue;
#if AM_X86
        if (s == 2) {
            rare_lanes_avx512(r, step0 + t0, n, nb, words, o, ev, nev);
            continue;
        }
#endif
        rare_lanes(r, step0 + t0, n, nb, words, o, ev, nev);
    }
}

unsigned am_rng_lanes_wedge(const uint64_t *wf, const uint64_t *wu, unsigned *accept)
{
    *accept = 0;
#if AM_X86
    if (lanes_simd(2) == 2) {
        __m512d x;
        return wedge8_avx512(wf, wu, accept, &x);
    }
#endif
    (void)wf;
    (void)wu;
    return 0;
}

void am_rng_gaussian_words(am_rng *r, const uint64_t *w, size_t nw, double *out, size_t n, int simd)
{
    int zs = am_rng_simd();
    if (zs > simd) zs = simd < 0 ? 0 : simd;
    nw &= ~(size_t)1;
    size_t k = zig_from_buffer(r, w, r->ctr.v[0], nw / 2, 0, out, n, zs);
    if (k < n) am_rng_fill_gaussian(r, out + k, n - k);
}
