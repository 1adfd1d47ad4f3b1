/*
 * am_msgd_batch_impl.h -- the replica-batched Async-MSGD body of am_msgd_batch.c, written once
 * and compiled once per instruction set: am_msgd_batch.c (portable), am_msgd_batch_avx2.c and
 * am_msgd_batch_avx512.c each instantiate it with BODY_SWITCH_FN and ADVANCE_FN (one file per
 * instruction set, so that the three compile side by side). Private to those files.
 */
#ifndef AM_MSGD_BATCH_IMPL_H
#define AM_MSGD_BATCH_IMPL_H

#include "am_msgd_batch.h"
#include "../core/am_common.h"

/* Products and sums rounded separately, as in the one-replica code, even where the build
 * does not pass -ffp-contract=off: the AVX-512 target has fused multiply-add, which GCC's
 * default (-ffp-contract=fast) would form here and change the bytes. */
/* (clang has no optimize pragma: there the build's -ffp-contract=off does it) */
#ifndef __clang__
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am_data.h"
#include "am_msgd.h"

/* DS: the largest dimension with a body of its own (iterates in registers) */
enum { NL = AM_MSGD_LANES, MAXD = AM_MSGD_BATCH_MAXDIM, MAXG = AM_MSGD_GROUPS, DS = 4 };
_Static_assert(AM_MSGD_LANES == AM_RNG_LANES, "one lane per replica of am_rng_gaussian_lanes");

/* Normals of the Gaussian fast path drawn per replica at once (as in am_msgd.c). */
#define BATCH_DOUBLES 256

typedef double vd __attribute__((vector_size(NL * sizeof(double))));
typedef uint64_t vu __attribute__((vector_size(NL * sizeof(uint64_t))));

/* Words per lane drawn at once for the sign, uniform and delay draws. */
#define LANE_WORDS 256

/* The statement for g = 0 and, with G = 2, for g = 1: written out rather than a loop, so
 * that the iterates of both groups (vc, vq, vn below) are indexed by constants when the
 * compiler scalarises them into registers. */
#define FOR_G(...)                                                                                 \
    do {                                                                                           \
        {                                                                                          \
            const size_t g = 0;                                                                    \
            __VA_ARGS__                                                                            \
        }                                                                                          \
        if (G > 1) {                                                                               \
            const size_t g = 1;                                                                    \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    } while (0)
_Static_assert(AM_MSGD_GROUPS == 2, "FOR_G writes out two groups");

/* The statement for i = 0 .. n-1: with a literal D, a loop of constant length DS unrolled
 * completely (for the same reason), else a loop. */
#define FOR_I(n, ...)                                                                              \
    do {                                                                                           \
        if (D) {                                                                                   \
            _Pragma("GCC unroll 4") for (size_t i = 0; i < DS; i++) if (i < D)                     \
            {                                                                                      \
                __VA_ARGS__                                                                        \
            }                                                                                      \
        } else {                                                                                   \
            for (size_t i = 0; i < (n); i++) {                                                     \
                __VA_ARGS__                                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)
_Static_assert(DS == 4, "FOR_I unrolls DS iterations");

/* Word 0 of each of n steps (tw[2 t], lane by lane) becomes its delay, drawn as
 * am_delay_draw draws it; once per refill, so that the steps call nothing. */
static inline __attribute__((always_inline)) void delays_of_words_body(const am_delay *dl, vu *tw,
                                                                       size_t n)
{
    for (size_t t = 0; t < n; t++)
        for (size_t l = 0; l < NL; l++) {
            uint64_t u = tw[2 * t][l], tau;
            if (dl->kind == AM_DELAY_UNIFORM) {
                tau = (uint64_t)(((unsigned __int128)u * (dl->max + 1)) >> 64);
            } else {
                double uu = ((double)(u >> 11) + 0.5) * 0x1.0p-53;
                double j = floor(log(uu) / dl->log1mp);
                tau = j >= (double)dl->max ? dl->max : (uint64_t)j;
            }
            tw[2 * t][l] = tau;
        }
}

static __attribute__((noinline, unused)) void delays_portable(const am_delay *dl, vu *tw, size_t n)
{
    delays_of_words_body(dl, tw, n);
}

#if AM_X86
__attribute__((target("avx2"), noinline, unused)) static void delays_avx2(const am_delay *dl,
                                                                          vu *tw, size_t n)
{
    delays_of_words_body(dl, tw, n);
}

__attribute__((target("avx512f,avx512dq,avx512vl"), noinline, unused)) static void
delays_avx512(const am_delay *dl, vu *tw, size_t n)
{
    delays_of_words_body(dl, tw, n);
}
#endif

/* The delays for the body of instruction set simd (0 portable, 1 AVX2, 2 AVX-512). */
static inline __attribute__((always_inline)) void delays_of_words(const am_delay *dl, vu *tw,
                                                                  size_t n, int simd)
{
    (void)simd; /* unused when the x86 paths are compiled out */
#if AM_X86
    if (simd == 2)
        delays_avx512(dl, tw, n);
    else if (simd == 1)
        delays_avx2(dl, tw, n);
    else
#endif
        delays_portable(dl, tw, n);
}

/* The data of a body: Gaussian in the eigenbasis (the fast path), other data drawn from
 * words side by side (Gaussian in a rotated basis, Rademacher, uniform), any (also Student,
 * lane by lane, and expected). */
enum { BODY_GAUSS, BODY_SAMPLED, BODY_ANY };

/* The ring of G lane groups (G = 1 or 2) side by side: coordinate i of slot s of group g is
 * the vector R(s, i, g). */
#define R(s, i, g) ring[((size_t)(s)*d + (size_t)(i)) * G + (size_t)(g)]

/* What one step of a body reads and writes: the ring (d coordinates), the slots of v_k, v_{k-1}
 * and v_{k+1} in it, the stale iterates of the step laid out as a ring slot (wp: a slot of the
 * ring, or those gathered for drawn delays) and, with D > 0, v_k, v_{k-1} and v_{k+1} held
 * apart (vc, vq, vn: registers once the loops over coordinates unroll). */
typedef struct {
    vd *ring;
    const vd *wp;
    vd (*vc)[DS], (*vq)[DS], (*vn)[DS];
    size_t d, cur, prev, next;
} step_at;

/* In the step helpers below and batch_body's expected step (at, D, G and wv in scope):
 * coordinate i of group g of v_k, v_{k-1} and the stale iterate, and the store of v_{k+1} (into
 * the ring, and with D > 0 into vn). */
#define AT_R(s, i, g) at.ring[((size_t)(s)*at.d + (size_t)(i)) * G + (size_t)(g)]
#define V(g, i) (D ? at.vc[g][(i) % DS] : AT_R(at.cur, i, g))
#define VP(g, i) (D ? at.vq[g][(i) % DS] : AT_R(at.prev, i, g))
#define W(g, i) (wv ? V(g, i) : at.wp[(size_t)(i)*G + (size_t)(g)])
#define SET_VN(g, i, val)                                                                          \
    do {                                                                                           \
        vd t_ = (val);                                                                             \
        AT_R(at.next, i, g) = t_;                                                                  \
        if (D) at.vn[g][(i) % DS] = t_;                                                            \
    } while (0)

/* v_{k+1} = (v + mu (v - v_prev)) + ea (x - a w) for group g, coordinate by coordinate (the
 * vectors by address: a 64-byte vector parameter would draw GCC's note on its ABI). */
static inline __attribute__((always_inline)) void
heavy_ball_oja(step_at at, size_t g, const vd *vmu, const vd *ea, const vd *x, const vd *a,
               const size_t D, const size_t G, const int wv)
{
    const vd mu = *vmu, e = *ea, av = *a;
    FOR_I(at.d, SET_VN(g, i,
                       AM_MSGD_HEAVY_BALL(V(g, i), VP(g, i), mu,
                                          AM_MSGD_OJA_STEP(e, x[i], av, W(g, i)))););
}

/* The update of group g on the data x: a = ((0 + x_0 w_0) + x_1 w_1) + ..., then
 * heavy_ball_oja with ea = eta a. */
static inline __attribute__((always_inline)) void oja_update(step_at at, size_t g, const vd *vmu,
                                                             const vd *veta, const vd *x,
                                                             const size_t D, const size_t G,
                                                             const int wv)
{
    vd a = {0, 0, 0, 0, 0, 0, 0, 0};
    FOR_I(at.d, a = a + x[i] * W(g, i););
    const vd ea = *veta * a;
    heavy_ball_oja(at, g, vmu, &ea, x, &a, D, G, wv);
}

/* Expected data, group g: s = Sigma w with the dense Sigma (rotated), else lambda w. */
static inline __attribute__((always_inline)) void sigma_stale(const am_msgd_batch *b, step_at at,
                                                              size_t g, vd *s, const size_t D,
                                                              const size_t G, const int wv)
{
    const size_t d = at.d;
    if (b->sigma) {
        for (size_t i = 0; i < d; i++) {
            vd si = {0, 0, 0, 0, 0, 0, 0, 0};
            for (size_t j = 0; j < d; j++)
                si = si + b->sigma[i * d + j] * W(g, j);
            s[i] = si;
        }
    } else {
        for (size_t i = 0; i < d; i++)
            s[i] = b->p->lambda[i] * W(g, i);
    }
}

/* One step of group g on Gaussian data in the eigenbasis (the fast path): x = sqrt(lambda) z
 * for the step's normals z, formed in the loop of a. */
static inline __attribute__((always_inline)) void step_gauss(const am_problem *p, step_at at,
                                                             size_t g, const vd *z, const vd *vmu,
                                                             const vd *veta, const size_t D,
                                                             const size_t G, const int wv)
{
    vd xg[MAXD], ag = {0, 0, 0, 0, 0, 0, 0, 0};
    FOR_I(at.d, {
        xg[i] = z[i] * p->sqrt_lambda[i];
        ag = ag + xg[i] * W(g, i);
    });
    const vd ea = *veta * ag;
    heavy_ball_oja(at, g, vmu, &ea, xg, &ag, D, G, wv);
}

/* The data of step k of one lane group as am_data_draw draws them, into x: Gaussian from the
 * step's normals z, Rademacher (rade) or uniform from its words wk, else (mode BODY_ANY) lane
 * by lane from the lanes' data streams; rotated by Q through y where the eigenbasis is. */
static inline __attribute__((always_inline)) void draw_data(const am_problem *p, size_t d,
                                                            const int mode, int rade, const vd *z,
                                                            const vu *wk, am_rng *data, uint64_t k,
                                                            vd *x, vd *y)
{
    vd *dst = p->q ? y : x;
    if (z) {
        for (size_t i = 0; i < d; i++)
            dst[i] = z[i] * p->sqrt_lambda[i];
    } else if (wk) {
        for (size_t i = 0; i < d; i++) {
            if (rade) {
                /* bit i of the word flips the sign of sqrt(lambda_i) */
                uint64_t sl;
                memcpy(&sl, &p->sqrt_lambda[i], sizeof sl);
                vu bits = sl ^ ((wk[0] >> i & 1) << 63);
                memcpy(&dst[i], &bits, sizeof bits);
            } else {
                vd u = (__builtin_convertvector(wk[i] >> 11, vd) + 0.5) * 0x1.0p-53;
                dst[i] = sqrt(3.0) * p->sqrt_lambda[i] * (2.0 * u - 1.0);
            }
        }
    } else if (mode == BODY_ANY) {
        double tmp[MAXD];
        for (size_t l = 0; l < NL; l++) {
            am_rng_seek(&data[l], k);
            am_data_draw(p, &data[l], tmp);
            for (size_t i = 0; i < d; i++)
                dst[i][l] = tmp[i];
        }
    }
    if (p->q)
        for (size_t i = 0; i < d; i++) {
            const double *qi = p->q + i * d;
            vd s = {0, 0, 0, 0, 0, 0, 0, 0};
            for (size_t j = 0; j < d; j++)
                s = s + qi[j] * y[j];
            x[i] = s;
        }
}

/* Drawn delays: the stale iterates of group g at step k, lane l's from the slot that its delay
 * (lane l of *delays) points to, into wb laid out as one ring slot. */
static inline __attribute__((always_inline)) void gather_stale(const vd *ring, size_t d, size_t L,
                                                               const size_t G, size_t g, size_t cur,
                                                               const vu *delays, vd *wb)
{
    const vu tk = *delays;
    const vd *rl[NL]; /* lane l's stale slot, coordinate 0 */
    for (size_t l = 0; l < NL; l++) {
        uint64_t tau = tk[l];
        size_t slot = cur >= tau ? cur - (size_t)tau : cur + L - (size_t)tau;
        rl[l] = &R(slot, 0, g);
    }
    /* each coordinate's vector built in registers, then stored whole (lane by lane stores
     * would not forward to the vector loads of the step) */
    for (size_t i = 0; i < d; i++) {
        size_t o = i * G;
        vd t = {rl[0][o][0], rl[1][o][1], rl[2][o][2], rl[3][o][3],
                rl[4][o][4], rl[5][o][5], rl[6][o][6], rl[7][o][7]};
        wb[i * G + g] = t;
    }
}

/* A block of steps whose draws are in a buffer: steps first .. first + n - 1, at most per. */
typedef struct {
    uint64_t first, n, per;
} draw_block;

/* Whether step k lies past the block: then the block starts at k with min(k1 - k, per) steps,
 * whose draws are to be made. */
static inline __attribute__((always_inline)) int block_refill(draw_block *bk, uint64_t k,
                                                              uint64_t k1)
{
    if (k < bk->first + bk->n) return 0;
    bk->first = k;
    bk->n = k1 - k < bk->per ? k1 - k : bk->per;
    return 1;
}

/* The end of the steps to run without a refill: kend, or the block's end if sooner. */
static inline __attribute__((always_inline)) uint64_t block_end(draw_block bk, uint64_t kend)
{
    return bk.first + bk.n < kend ? bk.first + bk.n : kend;
}

/* diverged[g NL + l] for the lanes of the G groups: |v|^2 <= blowup^2 fails (also for a
 * non-finite v), v the iterate in slot cur. */
static inline __attribute__((always_inline)) void
lanes_diverged(const vd *ring, size_t d, const size_t G, size_t cur, double blowup, int *diverged)
{
    for (size_t g = 0; g < G; g++) {
        vd nn = {0, 0, 0, 0, 0, 0, 0, 0};
        for (size_t i = 0; i < d; i++)
            nn = nn + R(cur, i, g) * R(cur, i, g);
        double bb = blowup * blowup;
        for (size_t l = 0; l < NL; l++)
            diverged[g * NL + l] = !(nn[l] <= bb);
    }
}

/* With D > 0: v_k (slot cur of the ring of L) and v_{k-1} of the G groups into vc and vq. */
static inline __attribute__((always_inline)) void load_iterates(const vd *ring, size_t d, size_t L,
                                                                size_t cur, vd (*vc)[DS],
                                                                vd (*vq)[DS], const size_t D,
                                                                const size_t G)
{
    FOR_I(D, FOR_G({
              vc[g][i % DS] = R(cur, i, g);
              vq[g][i % DS] = R(cur == 0 ? L - 1 : cur - 1, i, g);
          }););
}

/* The whole advance of G lane groups (8 G replicas; the groups' step-to-step dependency
 * chains are independent, so two of them overlap); state in ring (L d G vectors). D is the
 * dimension as a literal (2, 3, 4: loops unrolled, the current and previous iterates kept in
 * registers; with mode BODY_GAUSS or BODY_SAMPLED) or 0 (any d <= MAXD, iterates read from
 * the ring). mode: the data (below). wv: the stale iterate is the current one (no delay, or
 * the constant delay 0). Inlined into one function per instruction set, D, G, mode and wv;
 * every instance performs the same operations in the same order per lane. */
static inline __attribute__((always_inline)) void
batch_body(const am_msgd_batch *b, const uint64_t *rep, uint64_t k0, uint64_t k1, vd *ring,
           int *diverged, int simd, const size_t D, const size_t G, const int mode, const int wv)
{
    const am_problem *p = b->p;
    const size_t d = D ? D : p->dim, L = b->ring_len;
    const double eta = b->eta, mu = b->mu;
    const am_delay *dl = b->delay;
    const am_dist_kind kind = p->dist.kind;
    const int fast_gauss = mode == BODY_GAUSS;
    const int expected = mode == BODY_ANY && kind == AM_DIST_EXPECTED;
    /* data from words drawn side by side: normals, signs (one word), uniforms (d words);
     * Student data lane by lane through am_data_draw (a varying number of words) */
    const int gauss = fast_gauss || kind == AM_DIST_GAUSSIAN;
    const int rade = !fast_gauss && kind == AM_DIST_RADEMACHER;
    const int unif = !fast_gauss && kind == AM_DIST_UNIFORM;
    const int drawn_delay = dl->kind == AM_DELAY_UNIFORM || dl->kind == AM_DELAY_GEOMETRIC;
    const size_t dnb = rade ? 1 : (d + 1) / 2; /* blocks of data words per step */
    am_rng data[MAXG * NL], delay[MAXG * NL];
    vd x[MAXG][MAXD], y[MAXG][MAXD], sw[MAXG][MAXD];
    vd wb[MAXD * MAXG];            /* drawn delays: the stale iterates, laid out as a ring slot */
    vd vc[MAXG][DS], vq[MAXG][DS]; /* D > 0: v_k and v_{k-1} */
    vd zs[MAXG][BATCH_DOUBLES];
    vu dw[MAXG][LANE_WORDS], tw[MAXG][LANE_WORDS]; /* words of the data and delay streams */
    /* the blocks of steps of the data words, delay words and normals in the buffers */
    draw_block bw = {k0, 0, LANE_WORDS / (2 * dnb)}, bt = {k0, 0, LANE_WORDS / 2};
    draw_block bz = {k0, 0, BATCH_DOUBLES / d};
    memset(y, 0, sizeof y); /* written before use (rotated data); zeroed for the analysers */
    for (size_t l = 0; l < G * NL; l++) {
        am_rng_init(&data[l], b->seed, rep[l], AM_STREAM_DATA, 0);
        am_rng_init(&delay[l], b->seed, rep[l], AM_STREAM_DELAY, 0);
    }
    const vd vmu = {mu, mu, mu, mu, mu, mu, mu, mu};
    const vd veta = {eta, eta, eta, eta, eta, eta, eta, eta};
    size_t cur = (size_t)(k0 % L);
    /* the constant delay's slot offset (wv: none) */
    const size_t ctau = drawn_delay || wv ? 0 : (size_t)dl->max;
    if (D) load_iterates(ring, d, L, cur, vc, vq, D, G);
    /* the words and normals drawn in blocks of steps; the steps between two refills run in an
     * inner loop without calls (the iterates stay in registers) */
    for (uint64_t k = k0; k < k1;) {
        uint64_t kend = k1;
        if (!wv && drawn_delay) {
            if (block_refill(&bt, k, k1))
                for (size_t g = 0; g < G; g++) {
                    am_rng_words_lanes(delay + g * NL, bt.first, (size_t)bt.n, 1, (uint64_t *)tw[g],
                                       simd);
                    delays_of_words(dl, tw[g], (size_t)bt.n, simd);
                }
            kend = block_end(bt, kend);
        }
        if (gauss) {
            if (block_refill(&bz, k, k1))
                for (size_t g = 0; g < G; g++)
                    am_rng_gaussian_lanes(data + g * NL, bz.first, (size_t)bz.n, d, (double *)zs[g],
                                          simd);
            kend = block_end(bz, kend);
        } else if (rade || unif) {
            if (block_refill(&bw, k, k1))
                for (size_t g = 0; g < G; g++)
                    am_rng_words_lanes(data + g * NL, bw.first, (size_t)bw.n, dnb,
                                       (uint64_t *)dw[g], simd);
            kend = block_end(bw, kend);
        }
        for (; k < kend; k++) {
            size_t prev = cur == 0 ? L - 1 : cur - 1;
            size_t next = cur + 1 == L ? 0 : cur + 1;
            size_t wslot = cur >= ctau ? cur - ctau : cur + L - ctau;
            vd vn[MAXG][DS];
            const step_at at = {
                ring, drawn_delay ? wb : ring + wslot * d * G, vc, vq, vn, d, cur, prev, next};
            if (!wv && drawn_delay)
                for (size_t g = 0; g < G; g++) /* the delays of step k */
                    gather_stale(ring, d, L, G, g, cur, &tw[g][2 * (k - bt.first)], wb);
            if (expected) {
                for (size_t g = 0; g < G; g++) {
                    sigma_stale(b, at, g, sw[g], D, G, wv);
                    vd q = {0, 0, 0, 0, 0, 0, 0, 0};
                    for (size_t i = 0; i < d; i++)
                        q = q + sw[g][i] * W(g, i);
                    for (size_t i = 0; i < d; i++)
                        SET_VN(g, i,
                               AM_MSGD_HEAVY_BALL(V(g, i), VP(g, i), vmu,
                                                  AM_MSGD_OJA_STEP(veta, sw[g][i], q, W(g, i))));
                }
            } else if (fast_gauss) {
                FOR_G(step_gauss(p, at, g, zs[g] + (size_t)(k - bz.first) * d, &vmu, &veta, D, G,
                                 wv););
            } else {
                FOR_G({
                    const vd *z = gauss ? zs[g] + (size_t)(k - bz.first) * d : NULL;
                    const vu *wk = rade || unif ? dw[g] + 2 * dnb * (k - bw.first) : NULL;
                    draw_data(p, d, mode, rade, z, wk, data + g * NL, k, x[g], y[g]);
                    oja_update(at, g, &vmu, &veta, x[g], D, G, wv);
                });
            }
            if (D)
                FOR_I(D, FOR_G({
                          vq[g][i % DS] = vc[g][i % DS];
                          vc[g][i % DS] = vn[g][i % DS];
                      }););
            cur = next;
        }
    }
    lanes_diverged(ring, d, G, cur, b->blowup, diverged);
}
#undef AT_R
#undef V
#undef VP
#undef W
#undef SET_VN

/* The bodies of one instruction set: a function of its own (noinline) per lane-group count G,
 * delay (wv) and data (mode), holding the bodies for the dimension (a literal for d = 2, 3, 4;
 * Student and expected data: any d). Small functions keep the compiler's optimisation of each
 * body as cheap as it is for one; the calls are once per advance. */
#define BODY_DIM(simd, g_, m_, w_)                                                                 \
    do {                                                                                           \
        switch (b->p->dim) {                                                                       \
        case 2:                                                                                    \
            batch_body(b, rep, k0, k1, ring, diverged, simd, 2, g_, m_, w_);                       \
            break;                                                                                 \
        case 3:                                                                                    \
            batch_body(b, rep, k0, k1, ring, diverged, simd, 3, g_, m_, w_);                       \
            break;                                                                                 \
        case 4:                                                                                    \
            batch_body(b, rep, k0, k1, ring, diverged, simd, 4, g_, m_, w_);                       \
            break;                                                                                 \
        default:                                                                                   \
            batch_body(b, rep, k0, k1, ring, diverged, simd, 0, g_, m_, w_);                       \
        }                                                                                          \
    } while (0)
#define BODY_ARGS                                                                                  \
    const am_msgd_batch *b, const uint64_t *rep, uint64_t k0, uint64_t k1, vd *ring, int *diverged
#define BODY_FN(name, target, simd, g_, w_)                                                        \
    target static __attribute__((noinline)) void name##_gauss_##g_##w_(BODY_ARGS)                  \
    {                                                                                              \
        BODY_DIM(simd, g_, BODY_GAUSS, w_);                                                        \
    }                                                                                              \
    target static __attribute__((noinline)) void name##_sampled_##g_##w_(BODY_ARGS)                \
    {                                                                                              \
        BODY_DIM(simd, g_, BODY_SAMPLED, w_);                                                      \
    }                                                                                              \
    target static __attribute__((noinline)) void name##_any_##g_##w_(BODY_ARGS)                    \
    {                                                                                              \
        batch_body(b, rep, k0, k1, ring, diverged, simd, 0, g_, BODY_ANY, w_);                     \
    }
/* the dispatch over G, wv and the data to the functions above */
#define BODY_SWITCH_FN(name, target, simd)                                                         \
    BODY_FN(name, target, simd, 1, 0)                                                              \
    BODY_FN(name, target, simd, 1, 1)                                                              \
    BODY_FN(name, target, simd, 2, 0)                                                              \
    BODY_FN(name, target, simd, 2, 1)                                                              \
    static void name(BODY_ARGS, size_t G)                                                          \
    {                                                                                              \
        const am_delay *dl_ = b->delay;                                                            \
        int wv_ =                                                                                  \
            dl_->kind == AM_DELAY_NONE ||                                                          \
            (dl_->kind != AM_DELAY_UNIFORM && dl_->kind != AM_DELAY_GEOMETRIC && dl_->max == 0);   \
        am_dist_kind kd_ = b->p->dist.kind;                                                        \
        int m_ = kd_ == AM_DIST_GAUSSIAN && !b->p->q ? BODY_GAUSS                                  \
                 : kd_ == AM_DIST_GAUSSIAN || kd_ == AM_DIST_RADEMACHER || kd_ == AM_DIST_UNIFORM  \
                     ? BODY_SAMPLED                                                                \
                     : BODY_ANY;                                                                   \
        void (*const fn_[2][2][3])(BODY_ARGS) = {                                                  \
            {{name##_gauss_10, name##_sampled_10, name##_any_10},                                  \
             {name##_gauss_11, name##_sampled_11, name##_any_11}},                                 \
            {{name##_gauss_20, name##_sampled_20, name##_any_20},                                  \
             {name##_gauss_21, name##_sampled_21, name##_any_21}}};                                \
        fn_[G == 2][wv_][m_](b, rep, k0, k1, ring, diverged);                                      \
    }

/* Rows of eight doubles as columns: c[j][l] = r[l][j]. */
#define SHUF_LO2 0, 8, 2, 10, 4, 12, 6, 14
#define SHUF_HI2 1, 9, 3, 11, 5, 13, 7, 15
#define SHUF_LO4 0, 1, 8, 9, 4, 5, 12, 13
#define SHUF_HI4 2, 3, 10, 11, 6, 7, 14, 15
#define SHUF_LO8 0, 1, 2, 3, 8, 9, 10, 11
#define SHUF_HI8 4, 5, 6, 7, 12, 13, 14, 15
#ifdef __clang__
#define SHUF(a, b, m) __builtin_shufflevector(a, b, m)
#else
typedef int64_t vi __attribute__((vector_size(NL * sizeof(int64_t))));
#define SHUF(a, b, m) __builtin_shuffle(a, b, (vi){m})
#endif
static inline __attribute__((always_inline)) void transpose8(const vd *r, vd *c)
{
    /* pairs of rows interleaved, then pairs of pairs, then halves */
    vd t0 = SHUF(r[0], r[1], SHUF_LO2), t1 = SHUF(r[0], r[1], SHUF_HI2);
    vd t2 = SHUF(r[2], r[3], SHUF_LO2), t3 = SHUF(r[2], r[3], SHUF_HI2);
    vd t4 = SHUF(r[4], r[5], SHUF_LO2), t5 = SHUF(r[4], r[5], SHUF_HI2);
    vd t6 = SHUF(r[6], r[7], SHUF_LO2), t7 = SHUF(r[6], r[7], SHUF_HI2);
    vd u0 = SHUF(t0, t2, SHUF_LO4), u2 = SHUF(t0, t2, SHUF_HI4);
    vd u1 = SHUF(t1, t3, SHUF_LO4), u3 = SHUF(t1, t3, SHUF_HI4);
    vd u4 = SHUF(t4, t6, SHUF_LO4), u6 = SHUF(t4, t6, SHUF_HI4);
    vd u5 = SHUF(t5, t7, SHUF_LO4), u7 = SHUF(t5, t7, SHUF_HI4);
    c[0] = SHUF(u0, u4, SHUF_LO8);
    c[4] = SHUF(u0, u4, SHUF_HI8);
    c[1] = SHUF(u1, u5, SHUF_LO8);
    c[5] = SHUF(u1, u5, SHUF_HI8);
    c[2] = SHUF(u2, u6, SHUF_LO8);
    c[6] = SHUF(u2, u6, SHUF_HI8);
    c[3] = SHUF(u3, u7, SHUF_LO8);
    c[7] = SHUF(u3, u7, SHUF_HI8);
}

/* The rings of replicas src[0 .. 8G-1] (T = L d doubles each) into the lane layout, group g
 * at ring[t G + g], eight slots at a time. */
static inline __attribute__((always_inline)) void rings_in(const double *const *src, size_t T,
                                                           size_t G, vd *ring, int tr)
{
    for (size_t g = 0; g < G; g++) {
        const double *const *s = src + g * NL;
        size_t t = 0;
        for (; tr && t + NL <= T; t += NL) {
            vd r[NL], c[NL];
#pragma GCC unroll 8
            for (size_t l = 0; l < NL; l++)
                memcpy(&r[l], s[l] + t, sizeof r[l]);
            transpose8(r, c);
#pragma GCC unroll 8
            for (size_t j = 0; j < NL; j++)
                ring[(t + j) * G + g] = c[j];
        }
        for (; t < T; t++)
#pragma GCC unroll 8
            for (size_t l = 0; l < NL; l++)
                ring[t * G + g][l] = s[l][t];
    }
}

/* The inverse of rings_in for the first n replicas. */
static inline __attribute__((always_inline)) void rings_out(const vd *ring, size_t T, size_t G,
                                                            size_t n, double *const *dst, int tr)
{
    for (size_t g = 0; g < G; g++) {
        double *const *s = dst + g * NL;
        size_t nl = n - g * NL < NL ? n - g * NL : NL;
        size_t t = 0;
        for (; tr && t + NL <= T; t += NL) {
            vd r[NL], c[NL];
#pragma GCC unroll 8
            for (size_t j = 0; j < NL; j++)
                r[j] = ring[(t + j) * G + g];
            transpose8(r, c);
#pragma GCC unroll 8
            for (size_t l = 0; l < nl; l++)
                memcpy(s[l] + t, &c[l], sizeof c[l]);
        }
        for (; t < T; t++)
#pragma GCC unroll 8
            for (size_t l = 0; l < nl; l++)
                s[l][t] = ring[t * G + g][l];
    }
}

/* The whole advance for one instruction set: rings in, body, rings out. */
#define ADVANCE_FN(name, body, target, tr)                                                         \
    target void name(ADVANCE_ARGS)                                                                 \
    {                                                                                              \
        size_t T = b->ring_len * b->p->dim;                                                        \
        rings_in(src, T, G, ring, tr);                                                             \
        body(b, rep, k0, k1, ring, div, G);                                                        \
        rings_out(ring, T, G, n, dst, tr);                                                         \
    }

/* The advance of one instruction set (rings in, body, rings out), one per file. */
#define ADVANCE_ARGS                                                                               \
    const am_msgd_batch *b, const double *const *src, double *const *dst, const uint64_t *rep,     \
        size_t n, uint64_t k0, uint64_t k1, vd *ring, int *div, size_t G
__attribute__((visibility("hidden"))) void am_msgd_batch_advance_portable(ADVANCE_ARGS);
#if AM_X86
__attribute__((visibility("hidden"))) void am_msgd_batch_advance_avx2(ADVANCE_ARGS);
__attribute__((visibility("hidden"))) void am_msgd_batch_advance_avx512(ADVANCE_ARGS);
#endif

#endif
