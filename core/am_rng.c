/*
 * am_rng.c -- out-of-line parts of am_rng.h.
 *
 * 1. The ziggurat's rare cases: the base strip's tail (x > R, Marsaglia's exponential
 *    method) and the wedges, accepted when f(x[i+1]) + U (f(x[i]) - f(x[i+1])) < f(x),
 *    f(x) = exp(-x^2/2).
 * 2. Bulk draws. Philox4x64-10 maps (counter, key) to 4 words by ten rounds of
 *      (x0, x1, x2, x3) <- (hi(M1 x2) ^ x1 ^ k0, lo(M1 x2), hi(M0 x0) ^ x3 ^ k1, lo(M0 x0)),
 *    with the key bumped by (W0, W1) between rounds. One block is a chain of 20 dependent
 *    multiplications; am_rng_fill_* compute AM_RNG_LANES blocks side by side (consecutive
 *    values of the block counter) so that their rounds overlap, and write the words in
 *    stream order: block b, word j is word 4 b + j of the step. A normal whose ziggurat
 *    fast test fails is finished by am_rng_gaussian_slow on the scalar stream, which then
 *    continues from the words already generated, so the result equals the scalar calls.
 */
#include "am_rng.h"

#include <string.h>

#define ZIG_R 3.6541528853610088

double am_rng_gaussian_slow(am_rng *r, uint64_t w)
{
    for (;;) {
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        if (fabs(u) < am_zig_r[i]) return u * am_zig_x[i];
        if (i == 0) {
            double x, y;
            do {
                x = log(am_rng_uniform(r)) / ZIG_R;
                y = log(am_rng_uniform(r));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - ZIG_R : ZIG_R - x;
        }
        double x = u * am_zig_x[i];
        double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
        double f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
        if (f1 + am_rng_uniform(r) * (f0 - f1) < 1.0) return x;
        w = am_rng_u64(r);
    }
}

/* nb whole blocks starting at block b0 into out (4 nb words): Philox4x64-10 written out
 * with 128-bit products (checked against Random123's philox4x64 in the tests). The
 * blocks are independent, so the out-of-order core overlaps their multiplication chains;
 * two are interleaved explicitly. */
__attribute__((always_inline)) static inline void philox_blocks_body(const am_rng *r, uint64_t b0, size_t nb, uint64_t *out)
{
    const uint64_t c0 = r->ctr.v[0], c1 = r->ctr.v[1], c3 = r->ctr.v[3];
    size_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        uint64_t x0 = c0, x1 = c1, x2 = b0 + b, x3 = c3;
        uint64_t y0 = c0, y1 = c1, y2 = b0 + b + 1, y3 = c3;
        uint64_t k0 = r->key.v[0], k1 = r->key.v[1];
#pragma GCC unroll 10
        for (int round = 0; round < 10; round++) {
            unsigned __int128 p0 = (unsigned __int128)PHILOX_M4x64_0 * x0;
            unsigned __int128 p1 = (unsigned __int128)PHILOX_M4x64_1 * x2;
            unsigned __int128 q0 = (unsigned __int128)PHILOX_M4x64_0 * y0;
            unsigned __int128 q1 = (unsigned __int128)PHILOX_M4x64_1 * y2;
            x0 = (uint64_t)(p1 >> 64) ^ x1 ^ k0;
            x2 = (uint64_t)(p0 >> 64) ^ x3 ^ k1;
            x1 = (uint64_t)p1;
            x3 = (uint64_t)p0;
            y0 = (uint64_t)(q1 >> 64) ^ y1 ^ k0;
            y2 = (uint64_t)(q0 >> 64) ^ y3 ^ k1;
            y1 = (uint64_t)q1;
            y3 = (uint64_t)q0;
            k0 += PHILOX_W64_0;
            k1 += PHILOX_W64_1;
        }
        uint64_t *o = out + 4 * b;
        o[0] = x0;
        o[1] = x1;
        o[2] = x2;
        o[3] = x3;
        o[4] = y0;
        o[5] = y1;
        o[6] = y2;
        o[7] = y3;
    }
    if (b < nb) {
        philox4x64_ctr_t c = r->ctr;
        c.v[2] = b0 + b;
        philox4x64_ctr_t x = philox4x64(c, r->key);
        memcpy(out + 4 * b, x.v, sizeof x.v);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same with BMI2's mulx (the product goes to any register pair: fewer moves). */
__attribute__((target("bmi2"))) static void philox_blocks_bmi2(const am_rng *r, uint64_t b0,
                                                               size_t nb, uint64_t *out)
{
    philox_blocks_body(r, b0, nb, out);
}
#endif

static void philox_blocks_default(const am_rng *r, uint64_t b0, size_t nb, uint64_t *out)
{
    philox_blocks_body(r, b0, nb, out);
}

static void philox_blocks(const am_rng *r, uint64_t b0, size_t nb, uint64_t *out)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("bmi2")) {
        philox_blocks_bmi2(r, b0, nb, out);
        return;
    }
#endif
    philox_blocks_default(r, b0, nb, out);
}

void am_rng_fill_u64(am_rng *r, uint64_t *out, size_t n)
{
    while (n > 0 && r->used < 4) {
        *out++ = r->out.v[r->used++];
        n--;
    }
    size_t nb = n / 4;
    philox_blocks(r, r->ctr.v[2], nb, out);
    r->ctr.v[2] += nb;
    out += 4 * nb;
    n -= 4 * nb;
    if (n > 0) {
        r->out = philox4x64(r->ctr, r->key);
        r->ctr.v[2]++;
        for (r->used = 0; r->used < n; r->used++)
            out[r->used] = r->out.v[r->used];
    }
}

/* Words buffered per refill of am_rng_fill_gaussian: one partial block + whole blocks. */
#define BUF_BLOCKS 65

/* Positions r at word j of buf, whose word 0 is word 0 of block b0. */
static inline void set_position(am_rng *r, const uint64_t *buf, uint64_t b0, size_t j)
{
    size_t q = j % 4;
    if (q == 0) {
        r->ctr.v[2] = b0 + j / 4;
        r->used = 4;
    } else {
        memcpy(r->out.v, buf + (j - q), sizeof r->out.v);
        r->ctr.v[2] = b0 + j / 4 + 1;
        r->used = (unsigned)q;
    }
}

void am_rng_fill_gaussian(am_rng *r, double *out, size_t n)
{
    uint64_t buf[4 * BUF_BLOCKS];
    size_t k = 0;
    while (k < n) {
        /* buf starts at the block holding the next word of the stream and holds the words
         * still needed (one each, unless the rare case draws more: then it is refilled) */
        uint64_t b0;
        size_t j, nb, need;
        if (r->used < 4) {
            b0 = r->ctr.v[2] - 1;
            memcpy(buf, r->out.v, sizeof r->out.v);
            j = r->used;
            need = n - k > 4 - j ? (n - k - (4 - j) + 3) / 4 : 0;
            nb = need < BUF_BLOCKS - 1 ? need : BUF_BLOCKS - 1;
            philox_blocks(r, b0 + 1, nb, buf + 4);
            nb++;
        } else {
            b0 = r->ctr.v[2];
            j = 0;
            need = (n - k + 3) / 4;
            nb = need < BUF_BLOCKS ? need : BUF_BLOCKS;
            philox_blocks(r, b0, nb, buf);
        }
        const size_t nw = 4 * nb;
        for (;;) {
            /* fast path of the ziggurat on consecutive words */
            size_t m = n - k < nw - j ? n - k : nw - j, t;
            const uint64_t *src = buf + j;
            double *dst = out + k;
            for (t = 0; t < m; t++) {
                uint64_t w = src[t];
                unsigned i = (unsigned)(w & 0xff);
                double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
                if (!(fabs(u) < am_zig_r[i])) break;
                dst[t] = u * am_zig_x[i];
            }
            j += t;
            k += t;
            if (t == m) {
                set_position(r, buf, b0, j);
                break;
            }
            /* rare case: finish this normal on the scalar stream */
            set_position(r, buf, b0, j + 1);
            out[k] = am_rng_gaussian_slow(r, buf[j]);
            k++;
            uint64_t blk = r->ctr.v[2] - b0; /* >= 1: the slow path drew at least one word */
            if (blk > nb) break;             /* left the buffer: r is authoritative */
            j = (size_t)(4 * blk - 4 + r->used);
            if (j >= nw) break;
        }
    }
}
