/*
 * am_rng_impl.h -- what the portable part of the random streams (am_rng.c) and its x86 paths
 * (am_rng_avx2.c, am_rng_avx512.c) share: the ziggurat's rare case, one Philox block, the side
 * sum, the lane layout's constants and the x86 entry points. Private to those files.
 */
#ifndef AM_RNG_IMPL_H
#define AM_RNG_IMPL_H

#include "am_rng.h"
#include "am_common.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if AM_X86
#include <immintrin.h>
#endif

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

/* One block: words 2b, 2b+1 of r's step. On x86-64 with SSE2 (always present): the state
 * (x0, x1, x2, x3) sits in one register and a single pmuludq forms both products x0 M0
 * and x2 M1 (even 32-bit lanes), giving (lo0, hi0, lo1, hi1); one shuffle and two xors
 * make the next state (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0). Elsewhere: Random123. */
#if AM_X86
/* One Philox round with the whole state of a block in one 128-bit lane (x0, x1, x2, x3 in its
 * 32-bit elements, the multipliers m and the round key k in every lane), for the register
 * width of the intrinsic prefix P (_mm, _mm256, _mm512) and its integer suffix SI (si128,
 * si256, si512): one pmuludq forms both products (lo0, hi0, lo1, hi1), one shuffle and two
 * xors give (hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0); the xor with k is off the multiply's
 * path. The round of philox_block, am_rng_avx2.c's philox2_avx2 and am_rng_blocks_at_avx512. */
#define PHILOX_ROUND_ONE_REG(P, SI, x, m, k)                                                       \
    do {                                                                                           \
        __typeof__(x) t_ = P##_xor_##SI(P##_srli_epi64(x, 32), k);                                 \
        (x) = P##_xor_##SI(                                                                        \
            P##_shuffle_epi32(P##_mul_epu32(x, m), (_MM_PERM_ENUM)_MM_SHUFFLE(0, 1, 2, 3)), t_);   \
    } while (0)
#endif

static inline void philox_block(const am_rng *r, uint32_t b, uint64_t *out)
{
#if AM_X86
    __m128i x = _mm_setr_epi32((int)b, (int)r->ctr.v[1], (int)r->ctr.v[2], (int)r->ctr.v[3]);
    const __m128i m = _mm_set_epi64x(PHILOX_M4x32_1, PHILOX_M4x32_0);
    const __m128i w = _mm_set_epi64x(PHILOX_W32_1, PHILOX_W32_0);
    __m128i k = _mm_set_epi64x(r->key.v[1], r->key.v[0]);
    for (int round = 0; round < 10; round++) {
        PHILOX_ROUND_ONE_REG(_mm, si128, x, m, k);
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

/* Block by block. */
static inline void blocks_portable(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out)
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

/* Fewer words than this go through the scalar fast test (a pass costs more there). */
#define ZIG_SHORT 16

/* Words per fast pass of zig_from_buffer. */
#define ZIG_PASS 256

/* q at step `step` of src's stream, without copying src's cache. */
static inline void lane_at(const am_rng *src, uint64_t step, am_rng *q)
{
    q->key = src->key;
    q->ctr = src->ctr;
    am_rng_seek(q, step);
}

/* The fast path of the ziggurat on every word of ns steps (n normals of nw words each,
 * layout of am_rng_words_lanes), normals to out, by ZIG8(w, z) (8 lanes, returns the mask of
 * passed tests). Each (step t, lane l) with a failed test gives one event
 * ev[] = t 2^32 + f 2^8 + l, f its first failed normal (in the order of t, then l); returns
 * their number. ev has room for AM_RNG_LANES more than that. */
#define ZIG_LANES(NAME, ATTR, ZIG8)                                                                \
    ATTR size_t NAME(const uint64_t *words, size_t ns, size_t n, size_t nw, double *out,           \
                     uint64_t *ev)                                                                 \
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

/* Events per batch of am_rng_rare_lanes_avx512 (a multiple of AM_RNG_LANES). */
#define RARE_BATCH 64

#define AM_RNG_HIDDEN __attribute__((visibility("hidden")))

/* The ziggurat on the words buf[j..2 nb) of r's step from block b0 into out[0..n) (am_rng.c):
 * returns how many normals were made; r is left after the last word used. zig_simd: the fast
 * test's instruction set. */
AM_RNG_HIDDEN size_t am_rng_zig_from_buffer(am_rng *r, const uint64_t *buf, uint32_t b0, size_t nb,
                                            size_t j, double *out, size_t n, int zig_simd);

#if AM_X86
/* The x86 paths (am_rng_avx2.c, am_rng_avx512.c), hidden in the shared library. */
AM_RNG_HIDDEN void am_rng_blocks_avx2(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out);
AM_RNG_HIDDEN void am_rng_blocks_avx512(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out);
AM_RNG_HIDDEN void am_rng_blocks_avx512_sum(const am_rng *r, uint32_t b0, size_t nb, uint64_t *out,
                                            side_sum *ss);
AM_RNG_HIDDEN void am_rng_blocks_at_avx512(const philox4x32_key_t *key, const uint32_t (*ctr)[4],
                                           size_t nb, uint64_t *out);
AM_RNG_HIDDEN void am_rng_zig_pass_avx2(const uint64_t *src, double *dst, size_t m, uint64_t *rej);
AM_RNG_HIDDEN void am_rng_zig_pass_avx512(const uint64_t *src, double *dst, size_t m,
                                          uint64_t *rej);
AM_RNG_HIDDEN void am_rng_zig_pass_sum_avx512(const uint64_t *src, double *dst, size_t m,
                                              uint64_t *rej, side_sum *ss);
AM_RNG_HIDDEN void am_rng_lanes_words_avx2(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
                                           uint64_t *out);
AM_RNG_HIDDEN void am_rng_lanes_words_avx512(const am_rng *r, uint64_t step0, size_t ns, size_t nb,
                                             uint64_t *out);
AM_RNG_HIDDEN size_t am_rng_zig_lanes_avx2(const uint64_t *words, size_t ns, size_t n, size_t nw,
                                           double *out, uint64_t *ev);
AM_RNG_HIDDEN void am_rng_zig_pair_ready(void);
AM_RNG_HIDDEN size_t am_rng_lanes_gauss_avx512(const am_rng *r, uint64_t step0, size_t ns, size_t n,
                                               size_t nb, uint64_t *words, double *out,
                                               uint64_t *ev);
AM_RNG_HIDDEN unsigned am_rng_wedge8_avx512(const uint64_t *wf, const uint64_t *wu,
                                            unsigned *accept, __m512d *xo);
AM_RNG_HIDDEN void am_rng_rare_lanes_avx512(const am_rng *r, uint64_t step0, size_t n, size_t nb,
                                            const uint64_t *words, double *out, const uint64_t *ev,
                                            size_t nev);
#endif

#endif
