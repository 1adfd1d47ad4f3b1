/*
 * am_sde_batch.c -- the streaming-PCA SDE models of am_sde_pca.c advanced AM_SDE_LANES
 * replicas side by side (the system's advance_lanes), for d <= AM_SDE_BATCH_MAXDIM.
 *
 * One lane group holds 8 replicas: the state as vectors x[i] (lane l = replica l). Each
 * step performs, lane by lane, exactly the operations of am_sde_path_step with the model's
 * drift and noise callbacks, in the same order:
 *   q = ((0 + (l_0 h_0) h_0) + (l_1 h_1) h_1) + ...,   b_i = (c (l_i - q)) h_i,
 *   y_i = sqrt(D_i) z_i + (l_i h_i) zeta  (fast sampler; the Gaussian, clipped and
 *         Schur-complement branches chosen per lane by masks),   y = L z  (dense sampler),
 *   dw_i = (sigma sqrt(dt)) (y_i - h_i (h.y)),   x_i' = x_i + (dt b_i + dw_i),
 *   OU: b_i = (-rate_i) u_i, dw_i = (amp_i sqrt(dt)) z_i,
 * and a lane diverges at the first step where |x'|^2 <= blowup^2 fails, as there. The
 * normals of step k are those of each replica's own stream (seed, replica,
 * AM_STREAM_NOISE, k), drawn for several steps at once by am_rng_gaussian_lanes, which
 * equals am_rng_fill_gaussian_steps per lane, i.e. the callbacks' am_rng_gaussian calls
 * after am_rng_seek(k). Scalar branches of the callbacks become bitwise selects, so a lane
 * computes the values its branch computes. The body is written once with GCC vector types
 * and compiled for three instruction sets (no FMA: products and sums rounded separately, as
 * in the one-replica code built with -ffp-contract=off); the result is the one-replica
 * result byte for byte.
 */
#include "am_sde_pca_impl.h"
#include "../core/am_common.h"

/* Products and sums rounded separately, as in the one-replica code, even where the build
 * does not pass -ffp-contract=off (the AVX-512 target has fused multiply-add). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if AM_X86
#include <immintrin.h>
#endif

enum { NL = AM_SDE_LANES, MAXD = AM_SDE_BATCH_MAXDIM };
_Static_assert(AM_SDE_LANES == AM_RNG_LANES, "one lane per replica of am_rng_gaussian_lanes");

/* Normals per lane drawn at once (several steps). */
#define ZBUF 256

typedef double vd __attribute__((vector_size(NL * sizeof(double))));
typedef int64_t vl __attribute__((vector_size(NL * sizeof(int64_t))));

/* Lane by lane m ? a : b (m a comparison result: all ones or all zeros per lane), on
 * doubles and on integers. */
#define SEL(m, a, b) ((vd)(((vl)(a) & (m)) | ((vl)(b) & ~(m))))
#define SELI(m, a, b) (((a) & (m)) | ((b) & ~(m)))

am_sde_simd am_sde_batch_best(void)
{
    return (am_sde_simd)am_common_simd_best();
}

am_sde_simd am_sde_batch_path(void)
{
    return (am_sde_simd)am_common_simd_path();
}

/* Lane-wise sqrt (correctly rounded, as libm's): one instruction per register where the
 * target has it. Not always_inline: the body of another target calls them only in branches
 * its constant `simd` removes. */
static void vsqrt_portable(vd *o, const vd *x)
{
    double t[NL];
    for (int l = 0; l < NL; l++)
        t[l] = sqrt((*x)[l]);
    memcpy(o, t, sizeof t);
}

#if AM_X86
__attribute__((target("avx2"))) static void vsqrt_avx2(vd *o, const vd *x)
{
    const double *p = (const double *)x;
    double *q = (double *)o;
    _mm256_storeu_pd(q, _mm256_sqrt_pd(_mm256_loadu_pd(p)));
    _mm256_storeu_pd(q + 4, _mm256_sqrt_pd(_mm256_loadu_pd(p + 4)));
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static void vsqrt_avx512(vd *o, const vd *x)
{
    _mm512_storeu_pd((double *)o, _mm512_sqrt_pd(_mm512_loadu_pd((const double *)x)));
}
#endif

static inline __attribute__((always_inline)) void vsqrt(vd *o, const vd *x, int simd)
{
    (void)simd; /* unused when the x86 paths are compiled out */
#if AM_X86
    if (simd == 2)
        vsqrt_avx512(o, x);
    else if (simd == 1)
        vsqrt_avx2(o, x);
    else
#endif
        vsqrt_portable(o, x);
}

/* How many lanes of a comparison result *m are set (read through memory, so that the
 * compiler keeps the mask in a vector register). */
static inline __attribute__((always_inline)) int lanes_set(const vl *m)
{
    int64_t t[NL];
    memcpy(t, m, sizeof t);
    int n = 0;
    for (int l = 0; l < NL; l++)
        n += t[l] != 0;
    return n;
}

/* What a step draws and computes, fixed for a model. */
typedef enum {
    MODE_GAUSS,  /* global, fast sampler, every k4_i = 0 */
    MODE_FAST,   /* global, fast sampler, every k4_i >= 0, some > 0 */
    MODE_NEG,    /* global, fast sampler, some k4_i < 0 (one D_j may be negative) */
    MODE_DENSE,  /* global, dense sampler */
    MODE_GZERO,  /* global, noise on, expected data (zero noise) */
    MODE_GDRIFT, /* global, drift only (noise off) */
    MODE_OU,     /* OU with noise */
    MODE_OZERO,  /* OU, noise on, expected data */
    MODE_ODRIFT  /* OU, drift only */
} lane_mode;

static lane_mode mode_of(const am_sde_pca *m, const am_sde_params *par)
{
    if (m->ou) return !par->noise ? MODE_ODRIFT : m->noiseless ? MODE_OZERO : MODE_OU;
    if (!par->noise) return MODE_GDRIFT;
    if (m->noiseless) return MODE_GZERO;
    if (m->par.sampler == AM_SDE_SAMPLER_DENSE) return MODE_DENSE;
    return m->has_neg ? MODE_NEG : m->gauss ? MODE_GAUSS : MODE_FAST;
}

/* Normals per step of a mode: zeta and z_0..z_{d-1} (fast), z_0..z_{d-1} (dense),
 * z_0..z_{d-2} (OU). */
static size_t normals_of(lane_mode mode, size_t d)
{
    switch (mode) {
    case MODE_GAUSS:
    case MODE_FAST:
    case MODE_NEG:
        return d + 1;
    case MODE_DENSE:
        return d;
    case MODE_OU:
        return d - 1;
    default:
        return 0;
    }
}

/* The global model's noise y (before the projection) of one step, from the step's normals
 * z (zeta first for the fast sampler); h the state, lh[i] = l_i h_i, q as in the drift. */
static inline __attribute__((always_inline)) void global_y(const am_sde_pca *m, lane_mode mode,
                                                           const vd *h, const vd *lh, const vd *qp,
                                                           const vd *z, vd *y, vd *L, int simd)
{
    const size_t d = m->d;
    const double *l = m->p->lambda, *k4 = m->k4;
    const vd zero = {0, 0, 0, 0, 0, 0, 0, 0}, q = *qp;
    if (mode == MODE_GAUSS) {
        /* y_i = ((sqrt(q) sqrt(l_i)) z_i) + (l_i h_i) zeta */
        const double *sl = m->p->sqrt_lambda;
        vd sq;
        vsqrt(&sq, &q, simd);
        for (size_t i = 0; i < d; i++)
            y[i] = sq * sl[i] * z[1 + i] + lh[i] * z[0];
        return;
    }
    if (mode == MODE_DENSE) {
        /* lower triangle of M, in-place Cholesky with pivots clipped at 0, y = L z */
        for (size_t i = 0; i < d; i++)
            for (size_t k = 0; k <= i; k++) {
                vd diag = zero;
                if (i == k) diag = l[i] * q + k4[i] * h[i] * h[i];
                L[i * d + k] = lh[i] * l[k] * h[k] + diag;
            }
        for (size_t k = 0; k < d; k++) {
            vd piv = L[k * d + k];
            for (size_t r = 0; r < k; r++)
                piv = piv - L[k * d + r] * L[k * d + r];
            vd rt;
            vsqrt(&rt, &piv, simd);
            vd lkk = SEL(piv > zero, rt, zero);
            vl pos = lkk > zero;
            L[k * d + k] = lkk;
            for (size_t i = k + 1; i < d; i++) {
                vd s = L[i * d + k];
                for (size_t r = 0; r < k; r++)
                    s = s - L[i * d + r] * L[k * d + r];
                L[i * d + k] = SEL(pos, s / lkk, zero);
            }
        }
        for (size_t i = 0; i < d; i++) {
            vd s = zero;
            for (size_t k = 0; k <= i; k++)
                s = s + L[i * d + k] * z[k];
            y[i] = s;
        }
        return;
    }
    const vd zeta = z[0];
    vd D[MAXD], sd[MAXD];
    for (size_t i = 0; i < d; i++)
        D[i] = l[i] * q + k4[i] * h[i] * h[i];
    if (mode == MODE_FAST) {
        for (size_t i = 0; i < d; i++) {
            vsqrt(&sd[i], &D[i], simd);
            y[i] = sd[i] * z[1 + i] + lh[i] * zeta;
        }
        return;
    }
    /* MODE_NEG: j = the index of the least negative D_i (first of equals), d if none; the
     * index is held as a double so that every mask below comes from one comparison of
     * doubles */
    const vd none = zero + (double)d;
    vd j = none, dmin = zero;
    for (size_t i = 0; i < d; i++) {
        vl lt = D[i] < dmin;
        dmin = SEL(lt, D[i], dmin);
        j = SEL(lt, zero + (double)i, j);
    }
    /* y_i for i != j (and for every i without a negative entry) */
    for (size_t i = 0; i < d; i++) {
        vd c = SEL(D[i] > zero, D[i], zero);
        vsqrt(&sd[i], &c, simd);
        y[i] = sd[i] * z[1 + i] + lh[i] * zeta;
    }
    vl has = j != none;
    if (!lanes_set(&has)) return;
    /* one negative entry D_j: condition y_j on the others (Schur complement). The sums
     * over i != j need no test of i against j: D_j < 0 and sd_j = 0 fail the tests of D_i
     * and sd_i that the one-replica code makes for i != j. */
    vd sj = zero, dj = zero, zj = zero, A = zero;
    for (size_t i = 0; i < d; i++) {
        vl at = j == zero + (double)i;
        sj = SEL(at, lh[i], sj);
        dj = SEL(at, D[i], dj);
        zj = SEL(at, z[1 + i], zj);
        A = SEL(D[i] > zero, A + lh[i] * lh[i] / D[i], A);
    }
    vd tt = sj / (1.0 + A), g2 = dj + sj * sj / (1.0 + A);
    vd yj = (sj - tt) * zeta;
    for (size_t i = 0; i < d; i++)
        yj = SEL(sd[i] > zero, yj + tt * lh[i] / sd[i] * z[1 + i], yj);
    vd g = SEL(g2 > zero, g2, zero), rg;
    vsqrt(&rg, &g, simd);
    yj = yj + rg * zj;
    for (size_t i = 0; i < d; i++)
        y[i] = SEL(j == zero + (double)i, yj, y[i]);
}

/* The whole advance of one lane group from k0 to k1; the state in x (n vectors). Inlined
 * into one function per instruction set. */
static inline __attribute__((always_inline)) void
lanes_body(const am_sde_pca *m, const am_sde_params *par, const uint64_t *rep, uint64_t k0,
           uint64_t k1, vd *x, vd *zs, vd *L, int *diverged, int simd)
{
    const size_t d = m->d, n = m->sys.dim;
    const lane_mode mode = mode_of(m, par);
    const size_t nz = normals_of(mode, d);
    const double *l = m->p->lambda;
    const double dt = par->dt, sqrt_dt = sqrt(par->dt), bb = par->blowup * par->blowup;
    const double c = m->c, sc = m->sig * sqrt_dt;
    const vd zero = {0, 0, 0, 0, 0, 0, 0, 0};
    const vd vbb = zero + bb;
    double ou_sc[MAXD];
    am_rng r[NL];
    for (int t = 0; t < NL; t++)
        am_rng_init(&r[t], par->seed, rep[t], AM_STREAM_NOISE, 0);
    if (m->ou)
        for (size_t i = 0; i < n; i++)
            ou_sc[i] = m->amp[i] * sqrt_dt;
    vl dead = (vl)zero;
    uint64_t kb = k0, nb = 0, per = nz ? ZBUF / nz : 0;
    for (uint64_t k = k0; k < k1; k++) {
        if ((k - k0) % 64 == 0 && lanes_set(&dead) == NL) break;
        const vd *z = zs;
        if (nz) {
            if (k >= kb + nb) {
                kb = k;
                nb = k1 - k < per ? k1 - k : per;
                am_rng_gaussian_lanes(r, kb, (size_t)nb, nz, (double *)zs, simd);
            }
            z = zs + (size_t)(k - kb) * nz;
        }
        vd nn = zero;
        if (m->ou) {
            for (size_t i = 0; i < n; i++) {
                vd b = -m->rate[i] * x[i];
                if (mode == MODE_OU)
                    x[i] = x[i] + (dt * b + ou_sc[i] * z[i]);
                else if (mode == MODE_OZERO)
                    x[i] = x[i] + (dt * b + zero);
                else
                    x[i] = x[i] + dt * b;
                nn = nn + x[i] * x[i];
            }
        } else {
            vd lh[MAXD], y[MAXD], q = zero;
            for (size_t i = 0; i < d; i++) {
                lh[i] = l[i] * x[i];
                q = q + lh[i] * x[i];
            }
            if (mode == MODE_GDRIFT || mode == MODE_GZERO) {
                for (size_t i = 0; i < d; i++) {
                    vd b = c * (l[i] - q) * x[i];
                    if (mode == MODE_GZERO)
                        x[i] = x[i] + (dt * b + zero);
                    else
                        x[i] = x[i] + dt * b;
                    nn = nn + x[i] * x[i];
                }
            } else {
                global_y(m, mode, x, lh, &q, z, y, L, simd);
                vd hy = zero;
                for (size_t i = 0; i < d; i++)
                    hy = hy + x[i] * y[i];
                for (size_t i = 0; i < d; i++) {
                    vd b = c * (l[i] - q) * x[i];
                    vd dw = sc * (y[i] - x[i] * hy);
                    x[i] = x[i] + (dt * b + dw);
                    nn = nn + x[i] * x[i];
                }
            }
        }
        dead |= ~(nn <= vbb);
    }
    int64_t dd[NL];
    memcpy(dd, &dead, sizeof dd);
    for (int t = 0; t < NL; t++)
        diverged[t] = dd[t] != 0;
}

static void body_portable(const am_sde_pca *m, const am_sde_params *par, const uint64_t *rep,
                          uint64_t k0, uint64_t k1, vd *x, vd *zs, vd *L, int *diverged)
{
    lanes_body(m, par, rep, k0, k1, x, zs, L, diverged, 0);
}

#if AM_X86
__attribute__((target("avx2"))) static void body_avx2(const am_sde_pca *m, const am_sde_params *par,
                                                      const uint64_t *rep, uint64_t k0, uint64_t k1,
                                                      vd *x, vd *zs, vd *L, int *diverged)
{
    lanes_body(m, par, rep, k0, k1, x, zs, L, diverged, 1);
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static void
body_avx512(const am_sde_pca *m, const am_sde_params *par, const uint64_t *rep, uint64_t k0,
            uint64_t k1, vd *x, vd *zs, vd *L, int *diverged)
{
    lanes_body(m, par, rep, k0, k1, x, zs, L, diverged, 2);
}
#endif

int am_sde_batch_advance(const void *params, const am_sde_params *par, double *const *x,
                         const uint64_t *replicas, size_t n, uint64_t k0, uint64_t k1,
                         int *diverged)
{
    const am_sde_pca *m = params;
    size_t dim = m->sys.dim;
    if (m->simd == AM_SDE_SIMD_SCALAR || m->d > MAXD || n == 0 || n > NL) return -1;
    /* state, normals and (dense sampler) the Cholesky factor, one block */
    size_t nL = m->par.sampler == AM_SDE_SAMPLER_DENSE && !m->ou ? m->d * m->d : 0;
    vd *mem = aligned_alloc(sizeof(vd), (MAXD + ZBUF + nL) * sizeof(vd));
    if (!mem) return -1;
    vd *xs = mem, *zs = mem + MAXD, *L = nL ? zs + ZBUF : NULL;
    uint64_t rep[NL];
    int div[NL];
    /* lanes n .. NL-1 repeat lane 0 (their results are dropped) */
    for (size_t t = 0; t < NL; t++) {
        size_t j = t < n ? t : 0;
        rep[t] = replicas[j];
        for (size_t i = 0; i < dim; i++)
            xs[i][t] = x[j][i];
    }
#if AM_X86
    if (m->simd == AM_SDE_SIMD_AVX512)
        body_avx512(m, par, rep, k0, k1, xs, zs, L, div);
    else if (m->simd == AM_SDE_SIMD_AVX2)
        body_avx2(m, par, rep, k0, k1, xs, zs, L, div);
    else
#endif
        body_portable(m, par, rep, k0, k1, xs, zs, L, div);
    for (size_t j = 0; j < n; j++) {
        for (size_t i = 0; i < dim; i++)
            x[j][i] = xs[i][j];
        diverged[j] = div[j];
    }
    free(mem);
    return 0;
}
