/*
 * am_msgd_batch.c -- the replica-batched Async-MSGD step of am_msgd_batch.h.
 *
 * One lane group holds AM_MSGD_LANES replicas: the ring of iterates as vectors
 * ring[slot d + i] (lane l = replica l), the data x[i] and the stale iterate w[i]. Each
 * step performs, lane by lane, exactly the one-replica operations of am_msgd.c:
 *   a = ((0 + x_0 w_0) + x_1 w_1) + ...,   v' = (v + mu (v - v_prev)) + (eta a) (x - a w)
 * (expected data: s = Sigma w, q = ((0 + s_0 w_0) + ...), v' = (v + mu (v - v_prev)) +
 * eta (s - q w)), so the bytes equal the one-replica path's; the normals of the Gaussian
 * fast path are those of am_rng_fill_gaussian_steps on each replica's own data stream,
 * the other draws those of am_data_draw and am_delay_draw per lane. The body is written
 * once with GCC vector types and compiled for three instruction sets (no FMA: products
 * and sums are rounded separately, as in the scalar code built with -ffp-contract=off).
 */
#include "am_msgd_batch.h"

/* Products and sums rounded separately, as in the one-replica code, even where the build
 * does not pass -ffp-contract=off: the AVX-512 target has fused multiply-add, which GCC's
 * default (-ffp-contract=fast) would form here and change the bytes. */
#pragma GCC optimize("fp-contract=off")

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am_data.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define AM_BATCH_X86 1
#else
#define AM_BATCH_X86 0
#endif

enum { NL = AM_MSGD_LANES, MAXD = AM_MSGD_BATCH_MAXDIM };
_Static_assert(AM_MSGD_LANES == AM_RNG_LANES, "one lane per replica of am_rng_gaussian_lanes");

/* Normals of the Gaussian fast path drawn per replica at once (as in am_msgd.c). */
#define BATCH_DOUBLES 256

typedef double vd __attribute__((vector_size(NL * sizeof(double))));
typedef uint64_t vu __attribute__((vector_size(NL * sizeof(uint64_t))));

/* Words per lane drawn at once for the sign, uniform and delay draws. */
#define LANE_WORDS 256

am_msgd_path am_msgd_batch_best(void)
{
    return (am_msgd_path)am_common_simd_best();
}

am_msgd_path am_msgd_batch_path(void)
{
    return (am_msgd_path)am_common_simd_path();
}

/* The whole advance of one lane group; state in ring (L d vectors). Inlined into one
 * function per instruction set. */
static inline __attribute__((always_inline)) void batch_body(const am_msgd_batch *b,
                                                             const uint64_t *rep, uint64_t k0,
                                                             uint64_t k1, vd *ring, int *diverged,
                                                             int simd)
{
    const am_problem *p = b->p;
    const size_t d = p->dim, L = b->ring_len;
    const double eta = b->eta, mu = b->mu;
    const am_delay *dl = b->delay;
    const int has_delay = dl->kind != AM_DELAY_NONE;
    const int fast_gauss = p->dist.kind == AM_DIST_GAUSSIAN && !p->q;
    const int expected = p->dist.kind == AM_DIST_EXPECTED;
    const am_dist_kind kind = p->dist.kind;
    /* data from words drawn side by side: normals, signs (one word), uniforms (d words);
     * Student data lane by lane through am_data_draw (a varying number of words) */
    const int gauss = kind == AM_DIST_GAUSSIAN, rade = kind == AM_DIST_RADEMACHER;
    const int unif = kind == AM_DIST_UNIFORM;
    const int drawn_delay = dl->kind == AM_DELAY_UNIFORM || dl->kind == AM_DELAY_GEOMETRIC;
    const size_t dnb = rade ? 1 : (d + 1) / 2; /* blocks of data words per step */
    am_rng data[NL], delay[NL];
    vd x[MAXD], y[MAXD], wb[MAXD], sw[MAXD];
    double tmp[MAXD];
    vd zs[BATCH_DOUBLES];
    vu dw[LANE_WORDS], tw[LANE_WORDS]; /* words of the data and delay streams */
    uint64_t kw = k0, nw = 0, perw = LANE_WORDS / (2 * dnb);
    uint64_t kt = k0, nt = 0, pert = LANE_WORDS / 2;
    const double s3 = sqrt(3.0);
    memset(y, 0, sizeof y); /* written before use (rotated data); zeroed for the analysers */
    for (size_t l = 0; l < NL; l++) {
        am_rng_init(&data[l], b->seed, rep[l], AM_STREAM_DATA, 0);
        am_rng_init(&delay[l], b->seed, rep[l], AM_STREAM_DELAY, 0);
    }
    const vd vmu = {mu, mu, mu, mu, mu, mu, mu, mu};
    const vd veta = {eta, eta, eta, eta, eta, eta, eta, eta};
    const vd zero = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t cur = (size_t)(k0 % L);
    uint64_t kb = k0, nz = 0, per = BATCH_DOUBLES / d;
    for (uint64_t k = k0; k < k1; k++) {
        size_t prev = cur == 0 ? L - 1 : cur - 1;
        size_t next = cur + 1 == L ? 0 : cur + 1;
        const vd *v = ring + cur * d, *vp = ring + prev * d;
        vd *vn = ring + next * d;
        const vd *w = v;
        if (has_delay) {
            if (!drawn_delay) {
                uint64_t tau = dl->max;
                size_t slot = cur >= tau ? cur - (size_t)tau : cur + L - (size_t)tau;
                w = ring + slot * d;
            } else {
                if (k >= kt + nt) {
                    kt = k;
                    nt = k1 - k < pert ? k1 - k : pert;
                    am_rng_words_lanes(delay, kt, (size_t)nt, 1, (uint64_t *)tw, simd);
                }
                const vu tk = tw[2 * (k - kt)]; /* word 0 of step k */
                for (size_t l = 0; l < NL; l++) {
                    uint64_t tau;
                    if (dl->kind == AM_DELAY_UNIFORM) {
                        tau = (uint64_t)(((unsigned __int128)tk[l] * (dl->max + 1)) >> 64);
                    } else {
                        double uu = ((double)(tk[l] >> 11) + 0.5) * 0x1.0p-53;
                        double j = floor(log(uu) / dl->log1mp);
                        tau = j >= (double)dl->max ? dl->max : (uint64_t)j;
                    }
                    size_t slot = cur >= tau ? cur - (size_t)tau : cur + L - (size_t)tau;
                    for (size_t i = 0; i < d; i++)
                        wb[i][l] = ring[slot * d + i][l];
                }
                w = wb;
            }
        }
        if (expected) {
            if (b->sigma) {
                for (size_t i = 0; i < d; i++) {
                    vd s = zero;
                    for (size_t j = 0; j < d; j++)
                        s = s + b->sigma[i * d + j] * w[j];
                    sw[i] = s;
                }
            } else {
                for (size_t i = 0; i < d; i++)
                    sw[i] = p->lambda[i] * w[i];
            }
            vd q = zero;
            for (size_t i = 0; i < d; i++)
                q = q + sw[i] * w[i];
            for (size_t i = 0; i < d; i++)
                vn[i] = v[i] + vmu * (v[i] - vp[i]) + veta * (sw[i] - q * w[i]);
        } else {
            vd a = zero;
            if (fast_gauss) {
                if (k >= kb + nz) {
                    kb = k;
                    nz = k1 - k < per ? k1 - k : per;
                    am_rng_gaussian_lanes(data, kb, (size_t)nz, d, (double *)zs, simd);
                }
                const vd *z = zs + (size_t)(k - kb) * d;
                for (size_t i = 0; i < d; i++) {
                    x[i] = z[i] * p->sqrt_lambda[i];
                    a = a + x[i] * w[i];
                }
            } else {
                vd *dst = p->q ? y : x;
                if (gauss) {
                    if (k >= kb + nz) {
                        kb = k;
                        nz = k1 - k < per ? k1 - k : per;
                        am_rng_gaussian_lanes(data, kb, (size_t)nz, d, (double *)zs, simd);
                    }
                    const vd *z = zs + (size_t)(k - kb) * d;
                    for (size_t i = 0; i < d; i++)
                        dst[i] = z[i] * p->sqrt_lambda[i];
                } else if (rade || unif) {
                    if (k >= kw + nw) {
                        kw = k;
                        nw = k1 - k < perw ? k1 - k : perw;
                        am_rng_words_lanes(data, kw, (size_t)nw, dnb, (uint64_t *)dw, simd);
                    }
                    const vu *wk = dw + 2 * dnb * (k - kw);
                    for (size_t i = 0; i < d; i++) {
                        if (rade) {
                            /* bit i of the word flips the sign of sqrt(lambda_i) */
                            uint64_t sl;
                            memcpy(&sl, &p->sqrt_lambda[i], sizeof sl);
                            vu bits = sl ^ ((wk[0] >> i & 1) << 63);
                            memcpy(&dst[i], &bits, sizeof bits);
                        } else {
                            vd u = (__builtin_convertvector(wk[i] >> 11, vd) + 0.5) * 0x1.0p-53;
                            dst[i] = s3 * p->sqrt_lambda[i] * (2.0 * u - 1.0);
                        }
                    }
                } else {
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
                        vd s = zero;
                        for (size_t j = 0; j < d; j++)
                            s = s + qi[j] * y[j];
                        x[i] = s;
                    }
                for (size_t i = 0; i < d; i++)
                    a = a + x[i] * w[i];
            }
            vd ea = veta * a;
            for (size_t i = 0; i < d; i++)
                vn[i] = v[i] + vmu * (v[i] - vp[i]) + ea * (x[i] - a * w[i]);
        }
        cur = next;
    }
    const vd *v = ring + cur * d;
    vd nn = zero;
    for (size_t i = 0; i < d; i++)
        nn = nn + v[i] * v[i];
    double bb = b->blowup * b->blowup;
    for (size_t l = 0; l < NL; l++)
        diverged[l] = !(nn[l] <= bb);
}

static void body_portable(const am_msgd_batch *b, const uint64_t *rep, uint64_t k0, uint64_t k1,
                          vd *ring, int *diverged)
{
    batch_body(b, rep, k0, k1, ring, diverged, 0);
}

#if AM_BATCH_X86
__attribute__((target("avx2"))) static void body_avx2(const am_msgd_batch *b, const uint64_t *rep,
                                                      uint64_t k0, uint64_t k1, vd *ring,
                                                      int *diverged)
{
    batch_body(b, rep, k0, k1, ring, diverged, 1);
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static void
body_avx512(const am_msgd_batch *b, const uint64_t *rep, uint64_t k0, uint64_t k1, vd *ring,
            int *diverged)
{
    batch_body(b, rep, k0, k1, ring, diverged, 2);
}
#endif

int am_msgd_batch_advance(const am_msgd_batch *b, am_msgd_path path, double *const *rings,
                          const uint64_t *replicas, size_t n, uint64_t k0, uint64_t k1,
                          int *diverged)
{
    size_t d = b->p->dim, L = b->ring_len;
    vd *ring = aligned_alloc(sizeof(vd), L * d * sizeof(vd));
    uint64_t rep[NL];
    int div[NL];
    if (!ring) return -1;
    /* lanes n .. NL-1 repeat lane 0 (their results are dropped) */
    for (size_t l = 0; l < NL; l++) {
        size_t j = l < n ? l : 0;
        rep[l] = replicas[j];
        for (size_t t = 0; t < L * d; t++)
            ring[t][l] = rings[j][t];
    }
#if AM_BATCH_X86
    if (path == AM_MSGD_PATH_AVX512)
        body_avx512(b, rep, k0, k1, ring, div);
    else if (path == AM_MSGD_PATH_AVX2)
        body_avx2(b, rep, k0, k1, ring, div);
    else
#endif
        body_portable(b, rep, k0, k1, ring, div);
    for (size_t j = 0; j < n; j++) {
        for (size_t t = 0; t < L * d; t++)
            rings[j][t] = ring[t][j];
        diverged[j] = div[j];
    }
    free(ring);
    return 0;
}
