/*
 * am_rng.c -- out-of-line parts of am_rng.h: the portable code and the dispatch; the AVX2 and
 * AVX-512 paths are in am_rng_avx2.c and am_rng_avx512.c, what they share in am_rng_impl.h.
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
 *    in one pass (am_rng_lanes_gauss_avx512), the rare cases of a batch together
 * (am_rng_rare_lanes_avx512).
 */
#include "am_rng_impl.h"

double am_rng_gaussian_slow(am_rng *r, uint64_t w)
{
    word_src s = {r, NULL, 1, 0, 0};
    return zig_rare(&s, w);
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
        am_rng_blocks_avx512(r, block, nb, out);
        return;
    }
    if (simd >= 1 && am_rng_simd() >= 1) {
        am_rng_blocks_avx2(r, block, nb, out);
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

/* The fast test on src[0..m-1] (m <= ZIG_PASS) with instruction set zig_simd, as
 * am_rng_zig_pass_avx512. */
static inline void zig_pass(const uint64_t *src, double *dst, size_t m, uint64_t *rej, int zig_simd,
                            side_sum *ss)
{
    memset(rej, 0, ZIG_PASS / 8);
#if AM_X86
    if (zig_simd == 2) {
        if (ss)
            am_rng_zig_pass_sum_avx512(src, dst, m, rej, ss);
        else
            am_rng_zig_pass_avx512(src, dst, m, rej);
        return;
    }
    if (zig_simd == 1) {
        am_rng_zig_pass_avx2(src, dst, m, rej);
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

size_t am_rng_zig_from_buffer(am_rng *r, const uint64_t *buf, uint32_t b0, size_t nb, size_t j,
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
                am_rng_blocks_avx512_sum(r, b0, nb, buf, ss);
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
            am_rng_blocks_at_avx512(&r->key, (const uint32_t(*)[4])ctr, nb16, buf);
        } else
#endif
            blocks_at_portable(&r->key, (const uint32_t(*)[4])ctr, nb, buf);
        for (size_t s = 0; s < ns; s++) {
            double *o = out + (s0 + s) * n;
            am_rng_seek(r, step0 + s0 + s);
            size_t k = am_rng_zig_from_buffer(r, buf + 2 * s * nbs, 0, nbs, 0, o, n, zig_simd);
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

ZIG_LANES(zig_lanes_portable, static, zig8_portable)

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
        am_rng_lanes_words_avx512(r, step0, nsteps, nblocks, out);
        return;
    }
    if (s == 1) {
        am_rng_lanes_words_avx2(r, step0, nsteps, nblocks, out);
        return;
    }
#endif
    (void)s;
    lanes_words_portable(r, step0, nsteps, nblocks, out);
}

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
        am_rng_blocks_at_avx512(&r[0].key, (const uint32_t(*)[4])ctr, nx16, extra);
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
        size_t k = am_rng_zig_from_buffer(&q, buf, 0, nb + RARE_BLOCKS, f, tmp, n - f, 0);
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
    if (s == 2) am_rng_zig_pair_ready();
#endif
    uint64_t words[LANE_WORDS * NLANE];
    uint64_t ev[EVENT_ROOM];
    size_t per = nw <= CHUNK_WORDS ? CHUNK_WORDS / nw : 1;
    for (size_t t0 = 0; t0 < nsteps; t0 += per) {
        size_t ns = nsteps - t0 < per ? nsteps - t0 : per, nev;
        double *o = out + t0 * n * NLANE;
#if AM_X86
        if (s == 2) {
            nev = am_rng_lanes_gauss_avx512(r, step0 + t0, ns, n, nb, words, o, ev);
        } else
#endif
        {
            am_rng_words_lanes(r, step0 + t0, ns, nb, words, s);
#if AM_X86
            if (s == 1)
                nev = am_rng_zig_lanes_avx2(words, ns, n, nw, o, ev);
            else
#endif
                nev = zig_lanes_portable(words, ns, n, nw, o, ev);
        }
        if (!nev) continue;
#if AM_X86
        if (s == 2) {
            am_rng_rare_lanes_avx512(r, step0 + t0, n, nb, words, o, ev, nev);
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
        return am_rng_wedge8_avx512(wf, wu, accept, &x);
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
    size_t k = am_rng_zig_from_buffer(r, w, r->ctr.v[0], nw / 2, 0, out, n, zs);
    if (k < n) am_rng_fill_gaussian(r, out + k, n - k);
}
