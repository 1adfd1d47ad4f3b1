/*
 * am_ode.c -- CVODE driver for the limit ODE of am_ode.h:
 *
 *   f(V) = c [ s - q V ],   s = Sigma V,   q = V . s,   c = 1/(1-mu).
 *
 * Sigma V costs O(d) in the standard eigenbasis and one dense product when rotated: the
 * dense Sigma = Q diag(lambda) Q^T is built once per handle (O(d^3), blocked), so that an
 * evaluation reads one matrix instead of applying Q^T, diag, Q. BDF uses the analytic Jacobian
 * J = c [ Sigma - q I - 2 V s^T ], as a dense matrix (LU) or through the product
 * J w = c [ Sigma w - q w - 2 V (s . w) ] (matrix-free GMRES). One SUNContext, one CVODE memory,
 * one nonlinear (and linear) solver live as long as the handle; each solve calls
 * CVodeReInit. CVODE messages go to a handler that stores the last one (the library never
 * prints). Every SUNDIALS return is checked; alloc and free share one cleanup path.
 * CVODE's vector operations run on kernels of this file (see "CVODE's vector kernels"), and
 * every sum of products has a fixed order, so the output is the same bits with every
 * compiler, target and SUNDIALS build.
 */
#include "am_ode.h"
#include "../core/am_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_version.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_spgmr.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

/* SUNDIALS 7 changed the context constructor (a SUNComm) and replaced CVODE's error-handler
 * function by the context's stack of handlers (SUNContext_PushErrHandler); every use of an
 * API that differs between 6 and 7 is guarded here or at the handler below. */
#if SUNDIALS_VERSION_MAJOR >= 7
#define AM_SUN_COMM SUN_COMM_NULL
#else
#define AM_SUN_COMM NULL
#endif

/* a dot product of n doubles (dot8 below, compiled for the processor) */
typedef double (*dot_fn)(const double *x, const double *y, size_t n);

struct am_ode {
    const am_problem *p;
    am_ode_params par;
    size_t d;
    double c; /* 1/(1-mu) of the current solve */
    SUNContext ctx;
    void *mem; /* CVODE memory */
    N_Vector y;
    SUNNonlinearSolver nls;
    SUNMatrix a; /* BDF only */
    SUNLinearSolver ls;
    double *sigma; /* dense Sigma (rotated basis), else NULL */
    dot_fn dot;    /* dot8 for this processor */
    void (*symv)(const double *, size_t, const double *, double *); /* symv, likewise */
    double *u1;                                                     /* top eigenvector v^1 */
    double *js;    /* GMRES: Sigma V at the last Jacobian-product setup */
    double jq;     /* GMRES: V . Sigma V there */
    char msg[256]; /* last CVODE message */
};

am_ode_params am_ode_params_default(void)
{
    am_ode_params p;
    memset(&p, 0, sizeof p);
    p.method = AM_ODE_ADAMS;
    p.rtol = 1e-9; /* measured: state error <= 2e-8 vs the closed form, d <= 1000 (docs/ode.md) */
    p.atol = 1e-13;
    p.max_steps = 1000000;
    p.project = 0;
    p.linsol = AM_ODE_LINSOL_DENSE;
    return p;
}

am_status am_ode_params_check(const am_ode_params *par, char *err, size_t errlen)
{
    if (par->method != AM_ODE_ADAMS && par->method != AM_ODE_BDF)
        return am_common_failf(err, errlen, AM_EINVAL, "method must be adams or bdf");
    if (!(par->rtol >= 1e-15 && par->rtol < 1))
        return am_common_failf(err, errlen, AM_EINVAL, "rtol must be in [1e-15, 1), got %g",
                               par->rtol);
    if (!(par->atol >= 0 && par->atol < 1))
        return am_common_failf(err, errlen, AM_EINVAL, "atol must be in [0, 1), got %g", par->atol);
    if (par->max_steps < 1)
        return am_common_failf(err, errlen, AM_EINVAL, "max_steps must be >= 1, got %ld",
                               par->max_steps);
    if (par->linsol != AM_ODE_LINSOL_DENSE && par->linsol != AM_ODE_LINSOL_GMRES)
        return am_common_failf(err, errlen, AM_EINVAL, "linsol must be dense or gmres");
    if (par->project && par->method != AM_ODE_BDF)
        return am_common_failf(err, errlen, AM_EINVAL,
                               "project needs the BDF method (CVODE projects only with BDF)");
    return AM_OK;
}

const char *am_ode_method_name(am_ode_method m)
{
    return m == AM_ODE_BDF ? "bdf" : "adams";
}

am_status am_ode_method_parse(const char *s, am_ode_method *out)
{
    if (strcmp(s, "adams") == 0) {
        *out = AM_ODE_ADAMS;
        return AM_OK;
    }
    if (strcmp(s, "bdf") == 0) {
        *out = AM_ODE_BDF;
        return AM_OK;
    }
    return AM_EINVAL;
}

const char *am_ode_linsol_name(am_ode_linsol l)
{
    return l == AM_ODE_LINSOL_GMRES ? "gmres" : "dense";
}

am_status am_ode_linsol_parse(const char *s, am_ode_linsol *out)
{
    if (strcmp(s, "dense") == 0) {
        *out = AM_ODE_LINSOL_DENSE;
        return AM_OK;
    }
    if (strcmp(s, "gmres") == 0) {
        *out = AM_ODE_LINSOL_GMRES;
        return AM_OK;
    }
    return AM_EINVAL;
}

/* Dot product with eight running sums, lane k taking the terms j = 8m + k, combined in one
 * fixed order: the compiler vectorises it at any vector width (two, four or eight doubles) and
 * the result is the same bits with every compiler and target (a `#pragma omp simd` reduction
 * would sum in an order that depends on the vector width). Compiled three times on x86-64, for
 * the baseline, AVX2 and AVX-512 (never FMA, so the same bits), the widest the processor has
 * chosen once per handle. */
#define AM_DOT8_BODY                                                                               \
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0, a6 = 0, a7 = 0;                         \
    size_t j = 0;                                                                                  \
    for (; j + 8 <= n; j += 8) {                                                                   \
        a0 += x[j] * y[j];                                                                         \
        a1 += x[j + 1] * y[j + 1];                                                                 \
        a2 += x[j + 2] * y[j + 2];                                                                 \
        a3 += x[j + 3] * y[j + 3];                                                                 \
        a4 += x[j + 4] * y[j + 4];                                                                 \
        a5 += x[j + 5] * y[j + 5];                                                                 \
        a6 += x[j + 6] * y[j + 6];                                                                 \
        a7 += x[j + 7] * y[j + 7];                                                                 \
    }                                                                                              \
    double tail = 0;                                                                               \
    for (; j < n; j++)                                                                             \
        tail += x[j] * y[j];                                                                       \
    return (((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))) + tail;

static double dot8(const double *x, const double *y, size_t n)
{
    AM_DOT8_BODY
}

#if AM_X86
__attribute__((target("avx2"))) static double dot8_avx2(const double *x, const double *y, size_t n)
{
    AM_DOT8_BODY
}

__attribute__((target("avx512f"))) static double dot8_avx512(const double *x, const double *y,
                                                             size_t n)
{
    AM_DOT8_BODY
}
#endif

/* dot8 on instruction set level (2 AVX-512, 1 AVX2, 0 baseline; a level the processor lacks
 * falls back to the next one down). Not in the public header: tests/test_ode.c declares it to
 * compare the levels bit for bit. */
double am_ode_dot_level(const double *x, const double *y, size_t n, int level);
double am_ode_dot_level(const double *x, const double *y, size_t n, int level)
{
#if AM_X86
    if (level >= 2 && am_common_simd() >= AM_SIMD_AVX512) return dot8_avx512(x, y, n);
    if (level >= 1 && am_common_simd() >= AM_SIMD_AVX2) return dot8_avx2(x, y, n);
#endif
    (void)level;
    return dot8(x, y, n);
}

static dot_fn dot8_select(void)
{
#if AM_X86
    if (am_common_simd() >= AM_SIMD_AVX512) return dot8_avx512;
    if (am_common_simd() >= AM_SIMD_AVX2) return dot8_avx2;
#endif
    return dot8;
}

/* s = Sigma v for the dense symmetric Sigma from its upper triangle, half the bytes of the full
 * product (the cost at large d, where the product streams the matrix from memory). Rows are
 * taken four at a time, i0..i0+3: their entries right of the diagonal block update s[j]
 * (s[j] += Sigma_{i0,j} v_{i0}, then i0+1, i0+2, i0+3, in that order) and feed each row's dot
 * product with v (four running sums, lane k taking the terms j - i0 - 4 = 4m + k, combined as
 * (l0 + l1) + (l2 + l3), then the remaining terms one by one); then s[i] += (its row of the
 * 4 x 4 diagonal block times v, left to right) + that dot product. The last d mod 4 rows go
 * one at a time the same way. Written with four-double vectors of the GNU C vector extension,
 * which every target computes lane by lane with the same roundings, so the baseline, AVX2 and
 * clang builds give the same bits; about 1.4 times as fast as one dot product per row of the
 * full matrix at d = 1000. */
typedef double am_v4d __attribute__((vector_size(32)));

#define AM_SYMV_BODY                                                                               \
    memset(s, 0, d * sizeof *s);                                                                   \
    size_t i0 = 0;                                                                                 \
    for (; i0 + 4 <= d; i0 += 4) {                                                                 \
        const double *r0 = S + i0 * d, *r1 = r0 + d, *r2 = r1 + d, *r3 = r2 + d;                   \
        double v0 = v[i0], v1 = v[i0 + 1], v2 = v[i0 + 2], v3 = v[i0 + 3];                         \
        am_v4d b0 = {v0, v0, v0, v0}, b1 = {v1, v1, v1, v1}, b2 = {v2, v2, v2, v2};                \
        am_v4d b3 = {v3, v3, v3, v3}, a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;                \
        size_t j = i0 + 4;                                                                         \
        for (; j + 4 <= d; j += 4) {                                                               \
            am_v4d x0, x1, x2, x3, vj, t;                                                          \
            memcpy(&x0, r0 + j, sizeof x0);                                                        \
            memcpy(&x1, r1 + j, sizeof x1);                                                        \
            memcpy(&x2, r2 + j, sizeof x2);                                                        \
            memcpy(&x3, r3 + j, sizeof x3);                                                        \
            memcpy(&vj, v + j, sizeof vj);                                                         \
            memcpy(&t, s + j, sizeof t);                                                           \
            t = t + x0 * b0;                                                                       \
            t = t + x1 * b1;                                                                       \
            t = t + x2 * b2;                                                                       \
            t = t + x3 * b3;                                                                       \
            memcpy(s + j, &t, sizeof t);                                                           \
            a0 = a0 + x0 * vj;                                                                     \
            a1 = a1 + x1 * vj;                                                                     \
            a2 = a2 + x2 * vj;                                                                     \
            a3 = a3 + x3 * vj;                                                                     \
        }                                                                                          \
        double t0 = 0, t1 = 0, t2 = 0, t3 = 0;                                                     \
        for (; j < d; j++) {                                                                       \
            double t = s[j];                                                                       \
            t += r0[j] * v0;                                                                       \
            t += r1[j] * v1;                                                                       \
            t += r2[j] * v2;                                                                       \
            t += r3[j] * v3;                                                                       \
            s[j] = t;                                                                              \
            t0 += r0[j] * v[j];                                                                    \
            t1 += r1[j] * v[j];                                                                    \
            t2 += r2[j] * v[j];                                                                    \
            t3 += r3[j] * v[j];                                                                    \
        }                                                                                          \
        const double dot[4] = {                                                                    \
            ((a0[0] + a0[1]) + (a0[2] + a0[3])) + t0, ((a1[0] + a1[1]) + (a1[2] + a1[3])) + t1,    \
            ((a2[0] + a2[1]) + (a2[2] + a2[3])) + t2, ((a3[0] + a3[1]) + (a3[2] + a3[3])) + t3};   \
        for (size_t m = 0; m < 4; m++) {                                                           \
            const double *rm = S + (i0 + m) * d + i0;                                              \
            double blk = 0;                                                                        \
            for (size_t k = 0; k < 4; k++)                                                         \
                blk += rm[k] * v[i0 + k];                                                          \
            s[i0 + m] += blk + dot[m];                                                             \
        }                                                                                          \
    }                                                                                              \
    for (; i0 < d; i0++) {                                                                         \
        const double *r = S + i0 * d;                                                              \
        double vi = v[i0], acc = r[i0] * vi;                                                       \
        for (size_t j = i0 + 1; j < d; j++) {                                                      \
            s[j] += r[j] * vi;                                                                     \
            acc += r[j] * v[j];                                                                    \
        }                                                                                          \
        s[i0] += acc;                                                                              \
    }

typedef void (*symv_fn)(const double *S, size_t d, const double *v, double *s);

static void symv(const double *S, size_t d, const double *v, double *s)
{
    AM_SYMV_BODY
}

#if AM_X86
__attribute__((target("avx2"))) static void symv_avx2(const double *S, size_t d, const double *v,
                                                      double *s)
{
    AM_SYMV_BODY
}
#endif

/* symv on instruction set level (1 AVX2, 0 baseline; AVX-512 is no faster here), falling back
 * to the baseline without AVX2. Not in the public header: tests/test_ode.c compares the levels
 * bit for bit. */
void am_ode_symv_level(const double *S, size_t d, const double *v, double *s, int level);
void am_ode_symv_level(const double *S, size_t d, const double *v, double *s, int level)
{
#if AM_X86
    if (level >= 1 && am_common_simd() >= AM_SIMD_AVX2) {
        symv_avx2(S, d, v, s);
        return;
    }
#endif
    (void)level;
    symv(S, d, v, s);
}

static symv_fn symv_select(void)
{
#if AM_X86
    if (am_common_simd() >= AM_SIMD_AVX2) return symv_avx2;
#endif
    return symv;
}

/* s = Sigma v (dense Sigma when rotated, else diagonal). */
static void sigma_apply(const am_ode *o, const double *v, double *s)
{
    size_t d = o->d;
    if (!o->sigma) {
        const double *lambda = o->p->lambda;
#pragma omp simd
        for (size_t i = 0; i < d; i++)
            s[i] = lambda[i] * v[i];
        return;
    }
    o->symv(o->sigma, d, v, s);
}

static int rhs(sunrealtype t, N_Vector yv, N_Vector ydot, void *ud)
{
    (void)t;
    const am_ode *o = ud;
    const double *v = N_VGetArrayPointer(yv);
    double *f = N_VGetArrayPointer(ydot);
    size_t d = o->d;
    sigma_apply(o, v, f);
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += v[i] * f[i];
    double c = o->c;
#pragma omp simd
    for (size_t i = 0; i < d; i++)
        f[i] = c * (f[i] - q * v[i]);
    return 0;
}

/* J = c [ Sigma - q I - 2 v s^T ], column-major dense matrix. */
static int jac(sunrealtype t, N_Vector yv, N_Vector fy, SUNMatrix J, void *ud, N_Vector t1,
               N_Vector t2, N_Vector t3)
{
    (void)t, (void)fy, (void)t2, (void)t3;
    const am_ode *o = ud;
    const double *v = N_VGetArrayPointer(yv);
    double *s = N_VGetArrayPointer(t1);
    size_t d = o->d;
    sigma_apply(o, v, s);
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += v[i] * s[i];
    for (size_t j = 0; j < d; j++) {
        double *col = SUNDenseMatrix_Column(J, (sunindextype)j);
        double sj = -2.0 * s[j];
        if (o->sigma) {
            const double *row = o->sigma + j * d; /* Sigma is symmetric: row j = column j */
            for (size_t i = 0; i < d; i++)
                col[i] = o->c * (row[i] + sj * v[i]);
        } else {
            for (size_t i = 0; i < d; i++)
                col[i] = o->c * sj * v[i];
            col[j] += o->c * o->p->lambda[j];
        }
        col[j] -= o->c * q;
    }
    return 0;
}

/* GMRES: caches s = Sigma V and q = V . s for the products below. */
static int jtsetup(sunrealtype t, N_Vector yv, N_Vector fy, void *ud)
{
    (void)t, (void)fy;
    am_ode *o = ud;
    const double *v = N_VGetArrayPointer(yv);
    sigma_apply(o, v, o->js);
    double q = 0;
    for (size_t i = 0; i < o->d; i++)
        q += v[i] * o->js[i];
    o->jq = q;
    return 0;
}

/* GMRES: J w = c [ Sigma w - q w - 2 V (s . w) ]. */
static int jtimes(N_Vector wv, N_Vector jw, sunrealtype t, N_Vector yv, N_Vector fy, void *ud,
                  N_Vector tmp)
{
    (void)t, (void)fy, (void)tmp;
    const am_ode *o = ud;
    const double *w = N_VGetArrayPointer(wv), *v = N_VGetArrayPointer(yv);
    double *out = N_VGetArrayPointer(jw);
    size_t d = o->d;
    sigma_apply(o, w, out);
    double sw = 0;
    for (size_t i = 0; i < d; i++)
        sw += o->js[i] * w[i];
    for (size_t i = 0; i < d; i++)
        out[i] = o->c * (out[i] - o->jq * w[i] - 2.0 * sw * v[i]);
    return 0;
}

/* Projection onto |V| = 1: corr = V/|V| - V; the error estimate is projected onto the
 * tangent space of the sphere at V/|V|. */
static int proj(sunrealtype t, N_Vector yv, N_Vector corr, sunrealtype eps, N_Vector errv, void *ud)
{
    (void)t, (void)eps;
    const am_ode *o = ud;
    const double *v = N_VGetArrayPointer(yv);
    double *cr = N_VGetArrayPointer(corr);
    size_t d = o->d;
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    double n = sqrt(nn);
    if (!(n > 0) || !isfinite(n)) return 1; /* recoverable: CVODE retries with a smaller step */
    for (size_t i = 0; i < d; i++)
        cr[i] = v[i] / n - v[i];
    if (errv) {
        double *e = N_VGetArrayPointer(errv), dot = 0;
        for (size_t i = 0; i < d; i++)
            dot += e[i] * v[i];
        dot /= nn;
        for (size_t i = 0; i < d; i++)
            e[i] -= dot * v[i];
    }
    return 0;
}

/* ---- CVODE's vector kernels --------------------------------------------------------------
 * Every N_Vector operation CVODE, its nonlinear and its linear solvers call on this solver's
 * vectors, compiled with the library's flags. The distribution's SUNDIALS may be built without
 * optimisation (Debian's 6.4.1 is: one element per several loads and stores, no vector
 * instructions), and at d = 1000 these kernels are almost all of CVODE's time. Each one is the
 * arithmetic of SUNDIALS' own serial kernel, special cases and summation order included
 * (N_VLinearSum with a == b computes a (x + y), a reduction adds its terms one by one from the
 * first), so the solution is the same bits as with the library's kernels; the fused operations
 * keep the order of the terms per element but make one pass over the data instead of one per
 * vector. Installed on the template vector, they reach every vector CVODE clones from it. */

/* The elementwise kernels are compiled twice on x86-64, for the baseline and for AVX2 (never
 * FMA: the same roundings), and the loader picks the AVX2 copy where the processor has it. */
#if AM_X86
#define AM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define AM_CLONES
#endif
#define NV_N(v) ((size_t)NV_LENGTH_S(v))
#define NV_X(v) NV_DATA_S(v)

/* y += a x (SUNDIALS' Vaxpy: a = 1 and a = -1 add and subtract without the product) */
AM_CLONES static void nv_axpy(sunrealtype a, N_Vector xv, N_Vector yv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *y = NV_X(yv);
    if (a == 1.0) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] += x[i];
    } else if (a == -1.0) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] -= x[i];
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            y[i] += a * x[i];
    }
}

AM_CLONES static void nv_linearsum(sunrealtype a, N_Vector xv, sunrealtype b, N_Vector yv,
                                   N_Vector zv)
{
    if (b == 1.0 && zv == yv) {
        nv_axpy(a, xv, yv);
        return;
    }
    if (a == 1.0 && zv == xv) {
        nv_axpy(b, yv, xv);
        return;
    }
    size_t n = NV_N(xv);
    const double *x = NV_X(xv), *y = NV_X(yv);
    double *z = NV_X(zv);
    if (a == 1.0 && b == 1.0) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = x[i] + y[i];
    } else if ((a == 1.0 && b == -1.0) || (a == -1.0 && b == 1.0)) {
        const double *p = a == 1.0 ? x : y, *m = a == 1.0 ? y : x; /* z = p - m */
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = p[i] - m[i];
    } else if (a == 1.0 || b == 1.0) {
        double c = a == 1.0 ? b : a; /* z = c u + w */
        const double *u = a == 1.0 ? y : x, *w = a == 1.0 ? x : y;
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = (c * u[i]) + w[i];
    } else if (a == -1.0 || b == -1.0) {
        double c = a == -1.0 ? b : a; /* z = c u - w */
        const double *u = a == -1.0 ? y : x, *w = a == -1.0 ? x : y;
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = (c * u[i]) - w[i];
    } else if (a == b) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = a * (x[i] + y[i]);
    } else if (a == -b) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = a * (x[i] - y[i]);
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = (a * x[i]) + (b * y[i]);
    }
}

AM_CLONES static void nv_const(sunrealtype c, N_Vector zv)
{
    size_t n = NV_N(zv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = c;
}

AM_CLONES static void nv_prod(N_Vector xv, N_Vector yv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv), *y = NV_X(yv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = x[i] * y[i];
}

AM_CLONES static void nv_div(N_Vector xv, N_Vector yv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv), *y = NV_X(yv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = x[i] / y[i];
}

AM_CLONES static void nv_scale(sunrealtype c, N_Vector xv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *z = NV_X(zv);
    if (zv == xv) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] *= c;
    } else if (c == 1.0) {
        memcpy(z, x, n * sizeof *z);
    } else if (c == -1.0) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = -x[i];
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            z[i] = c * x[i];
    }
}

AM_CLONES static void nv_abs(N_Vector xv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = fabs(x[i]);
}

AM_CLONES static void nv_inv(N_Vector xv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = 1.0 / x[i];
}

AM_CLONES static void nv_addconst(N_Vector xv, sunrealtype b, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = x[i] + b;
}

static sunrealtype nv_dotprod(N_Vector xv, N_Vector yv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv), *y = NV_X(yv);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += x[i] * y[i];
    return sum;
}

static sunrealtype nv_maxnorm(N_Vector xv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double m = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

static sunrealtype nv_wsqrsum(N_Vector xv, N_Vector wv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv), *w = NV_X(wv);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double p = x[i] * w[i];
        sum += p * p;
    }
    return sum;
}

static sunrealtype nv_wrmsnorm(N_Vector xv, N_Vector wv)
{
    return sqrt(nv_wsqrsum(xv, wv) / (sunrealtype)NV_LENGTH_S(xv));
}

static sunrealtype nv_min(N_Vector xv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] < m) m = x[i];
    return m;
}

AM_CLONES static void nv_compare(sunrealtype c, N_Vector xv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *z = NV_X(zv);
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        z[i] = fabs(x[i]) >= c ? 1.0 : 0.0;
}

static sunbooleantype nv_invtest(N_Vector xv, N_Vector zv)
{
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    double *z = NV_X(zv);
    sunbooleantype ok = SUNTRUE;
    for (size_t i = 0; i < n; i++) {
        if (x[i] == 0.0)
            ok = SUNFALSE;
        else
            z[i] = 1.0 / x[i];
    }
    return ok;
}

/* z = sum_k c[k] X[k], the terms added in the order k = 0, 1, ... per element; one pass over
 * z (SUNDIALS makes one per vector). */
AM_CLONES static int nv_linearcombination(int nvec, sunrealtype *c, N_Vector *X, N_Vector zv)
{
    if (nvec < 1) return -1;
    if (nvec == 1) {
        nv_scale(c[0], X[0], zv);
        return 0;
    }
    if (nvec == 2) {
        nv_linearsum(c[0], X[0], c[1], X[1], zv);
        return 0;
    }
    size_t n = NV_N(zv);
    double *z = NV_X(zv);
    int k0 = 0; /* z already holds X[0] (times c[0] = 1) */
    for (int k = 1; k < nvec; k++)
        if (X[k] == zv) { /* z is a later term: SUNDIALS' vector-by-vector order */
            if (X[0] != zv)
                nv_scale(c[0], X[0], zv);
            else if (c[0] != 1.0)
                nv_scale(c[0], zv, zv);
            for (int m = 1; m < nvec; m++)
                nv_axpy(c[m], X[m], zv);
            return 0;
        }
    if (X[0] == zv && c[0] == 1.0) k0 = 1;
    enum { B = 256 }; /* elements per block: the block of z stays in L1 */
    for (size_t i0 = 0; i0 < n; i0 += B) {
        size_t i1 = n - i0 < B ? n : i0 + B;
        if (!k0) {
            const double *x = NV_X(X[0]);
#pragma omp simd
            for (size_t i = i0; i < i1; i++)
                z[i] = c[0] * x[i];
        }
        for (int k = 1; k < nvec; k++) {
            const double *x = NV_X(X[k]);
            double ck = c[k];
#pragma omp simd
            for (size_t i = i0; i < i1; i++)
                z[i] += ck * x[i];
        }
    }
    return 0;
}

/* Z[k] = Y[k] + a[k] x (in place when Y == Z). */
AM_CLONES static int nv_scaleaddmulti(int nvec, sunrealtype *a, N_Vector xv, N_Vector *Y,
                                      N_Vector *Z)
{
    if (nvec < 1) return -1;
    if (nvec == 1) {
        nv_linearsum(a[0], xv, 1.0, Y[0], Z[0]);
        return 0;
    }
    size_t n = NV_N(xv);
    const double *x = NV_X(xv);
    for (int k = 0; k < nvec; k++) {
        const double *y = NV_X(Y[k]);
        double *z = NV_X(Z[k]), ak = a[k];
        if (Y == Z)
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                z[i] += ak * x[i];
        else
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                z[i] = ak * x[i] + y[i];
    }
    return 0;
}

static int nv_dotprodmulti(int nvec, N_Vector xv, N_Vector *Y, sunrealtype *dots)
{
    if (nvec < 1) return -1;
    for (int k = 0; k < nvec; k++)
        dots[k] = nv_dotprod(xv, Y[k]);
    return 0;
}

/* Z[k] = c[k] X[k] (CVODE rescales its history with it). */
AM_CLONES static int nv_scalevectorarray(int nvec, sunrealtype *c, N_Vector *X, N_Vector *Z)
{
    if (nvec < 1) return -1;
    for (int k = 0; k < nvec; k++) {
        if (nvec == 1 || X != Z) {
            nv_scale(c[k], X[k], Z[k]);
        } else {
            size_t n = NV_N(X[k]);
            double *x = NV_X(X[k]);
#pragma omp simd
            for (size_t i = 0; i < n; i++)
                x[i] *= c[k];
        }
    }
    return 0;
}

static void install_kernels(N_Vector v)
{
    N_Vector_Ops ops = v->ops;
    ops->nvlinearsum = nv_linearsum;
    ops->nvconst = nv_const;
    ops->nvprod = nv_prod;
    ops->nvdiv = nv_div;
    ops->nvscale = nv_scale;
    ops->nvabs = nv_abs;
    ops->nvinv = nv_inv;
    ops->nvaddconst = nv_addconst;
    ops->nvdotprod = nv_dotprod;
    ops->nvdotprodlocal = nv_dotprod;
    ops->nvmaxnorm = nv_maxnorm;
    ops->nvmaxnormlocal = nv_maxnorm;
    ops->nvwrmsnorm = nv_wrmsnorm;
    ops->nvwsqrsumlocal = nv_wsqrsum;
    ops->nvmin = nv_min;
    ops->nvminlocal = nv_min;
    ops->nvcompare = nv_compare;
    ops->nvinvtest = nv_invtest;
    ops->nvinvtestlocal = nv_invtest;
    ops->nvlinearcombination = nv_linearcombination;
    ops->nvscaleaddmulti = nv_scaleaddmulti;
    ops->nvdotprodmulti = nv_dotprodmulti;
    ops->nvscalevectorarray = nv_scalevectorarray;
}

#if SUNDIALS_VERSION_MAJOR >= 7
/* SUNDIALS 7: the context's only error handler (the default one, removed, logs to stderr).
 * CVODE's warnings go to the context's SUNLogger instead; with the settings used here (no
 * t + h == t notes) it issues none. */
static void handler(int line, const char *func, const char *file, const char *msg, SUNErrCode code,
                    void *ud, SUNContext ctx)
{
    (void)line, (void)file, (void)ctx;
    am_ode *o = ud;
    snprintf(o->msg, sizeof o->msg, "CVODE: %s: %s", func ? func : "",
             msg ? msg : SUNGetErrMsg(code));
}

static int set_handler(am_ode *o)
{
    return SUNContext_ClearErrHandlers(o->ctx) != SUN_SUCCESS ||
           SUNContext_PushErrHandler(o->ctx, handler, o) != SUN_SUCCESS;
}
#else
static void handler(int code, const char *module, const char *function, char *msg, void *ud)
{
    (void)code;
    am_ode *o = ud;
    snprintf(o->msg, sizeof o->msg, "%s: %s: %s", module, function, msg);
}

static int set_handler(am_ode *o)
{
    return CVodeSetErrHandlerFn(o->mem, handler, o) != CV_SUCCESS;
}
#endif

/* sigma = Q diag(lambda) Q^T: entry (i, j) is the dot product of row i of Q diag(lambda)
 * with row j of Q; rows i are taken eight at a time so that each row j is read once per
 * block. Upper triangle computed, lower triangle mirrored. AM_ENOMEM without memory. */
static am_status dense_sigma(const am_problem *p, dot_fn dot, double *sigma)
{
    enum { B = 8 };
    size_t d = p->dim;
    double *blk = malloc(B * d * sizeof *blk);
    if (!blk) return AM_ENOMEM;
    for (size_t i0 = 0; i0 < d; i0 += B) {
        size_t nb = d - i0 < B ? d - i0 : B;
        for (size_t r = 0; r < nb; r++)
            for (size_t k = 0; k < d; k++)
                blk[r * d + k] = p->q[(i0 + r) * d + k] * p->lambda[k];
        for (size_t j = i0; j < d; j++) {
            const double *qj = p->q + j * d;
            for (size_t r = 0; r < nb && i0 + r <= j; r++) {
                sigma[(i0 + r) * d + j] = dot(blk + r * d, qj, d);
            }
        }
    }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < i; j++)
            sigma[i * d + j] = sigma[j * d + i];
    free(blk);
    return AM_OK;
}

void am_ode_free(am_ode *o)
{
    if (!o) return;
    if (o->mem) CVodeFree(&o->mem);
    if (o->nls) SUNNonlinSolFree(o->nls);
    if (o->ls) SUNLinSolFree(o->ls);
    if (o->a) SUNMatDestroy(o->a);
    if (o->y) N_VDestroy(o->y);
    if (o->ctx) SUNContext_Free(&o->ctx);
    free(o->sigma);
    free(o->u1);
    free(o->js);
    free(o);
}

am_ode *am_ode_alloc(const am_problem *p, const am_ode_params *par, am_status *status, char *err,
                     size_t errlen)
{
    am_status st = AM_EINVAL;
    am_ode *o = NULL;
    const char *why = NULL; /* reason of a failure other than the parameter check */
    if (!p || !par) {
        why = "no problem or parameters given";
        goto done;
    }
    if (am_ode_params_check(par, err, errlen)) goto done;
    size_t d = p->dim;
    int bdf = par->method == AM_ODE_BDF;
    /* BDF: dense matrix and CVODE's saved copy; the dense Sigma when rotated */
    int dense = bdf && par->linsol == AM_ODE_LINSOL_DENSE;
    double mats = (dense ? 2.0 : 0.0) + (p->q ? 1.0 : 0.0);
    if ((double)d * (double)d * 8.0 * mats + 16.0 * 8.0 * (double)d > (double)AM_MEMORY_LIMIT) {
        st = AM_ENOMEM;
        why = "the solver's matrices would exceed the memory limit";
        goto done;
    }
    st = AM_ENOMEM;
    why = am_strerror(AM_ENOMEM);
    o = calloc(1, sizeof *o);
    if (!o) goto done;
    o->p = p;
    o->par = *par;
    o->d = d;
    o->c = 1.0;
    o->dot = dot8_select();
    o->symv = symv_select();
    o->u1 = malloc(d * sizeof *o->u1);
    o->js = malloc(d * sizeof *o->js);
    if (!o->u1 || !o->js) goto done;
    am_problem_eigvec(p, 0, o->u1);
    if (p->q) {
        o->sigma = malloc(d * d * sizeof *o->sigma);
        if (!o->sigma || dense_sigma(p, o->dot, o->sigma)) goto done;
    }

    st = AM_ESOLVER;
    why = "CVODE could not be set up";
    if (SUNContext_Create(AM_SUN_COMM, &o->ctx)) goto done;
    o->y = N_VNew_Serial((sunindextype)d, o->ctx);
    if (!o->y) goto done;
    if (N_VEnableFusedOps_Serial(o->y, SUNTRUE)) goto done;
    install_kernels(o->y);
    N_VConst(0.0, o->y);
    N_VGetArrayPointer(o->y)[0] = 1.0;
    o->mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, o->ctx);
    if (!o->mem) goto done;
    if (set_handler(o)) goto done;
    if (CVodeInit(o->mem, rhs, 0.0, o->y) != CV_SUCCESS) goto done;
    if (CVodeSetUserData(o->mem, o) != CV_SUCCESS) goto done;
    if (CVodeSStolerances(o->mem, par->rtol, par->atol) != CV_SUCCESS) goto done;
    if (CVodeSetMaxNumSteps(o->mem, par->max_steps) != CV_SUCCESS) goto done;
    if (CVodeSetMaxHnilWarns(o->mem, -1) != CV_SUCCESS) goto done; /* no t + h == t notes */
    if (bdf) {
        o->nls = SUNNonlinSol_Newton(o->y, o->ctx);
        if (!o->nls) goto done;
        if (CVodeSetNonlinearSolver(o->mem, o->nls) != CV_SUCCESS) goto done;
        if (dense) {
            o->a = SUNDenseMatrix((sunindextype)d, (sunindextype)d, o->ctx);
            if (!o->a) goto done;
            o->ls = SUNLinSol_Dense(o->y, o->a, o->ctx);
            if (!o->ls) goto done;
            if (CVodeSetLinearSolver(o->mem, o->ls, o->a) != CV_SUCCESS) goto done;
            if (CVodeSetJacFn(o->mem, jac) != CV_SUCCESS) goto done;
        } else {
            o->ls = SUNLinSol_SPGMR(o->y, SUN_PREC_NONE, 0, o->ctx);
            if (!o->ls) goto done;
            if (CVodeSetLinearSolver(o->mem, o->ls, NULL) != CV_SUCCESS) goto done;
            if (CVodeSetJacTimes(o->mem, jtsetup, jtimes) != CV_SUCCESS) goto done;
        }
        if (par->project && CVodeSetProjFn(o->mem, proj) != CV_SUCCESS) goto done;
    } else {
        o->nls = SUNNonlinSol_FixedPoint(o->y, 0, o->ctx);
        if (!o->nls) goto done;
        if (CVodeSetNonlinearSolver(o->mem, o->nls) != CV_SUCCESS) goto done;
    }
    st = AM_OK;
done:
    if (st != AM_OK) {
        am_ode_free(o);
        o = NULL;
        if (why && err && errlen) snprintf(err, errlen, "%s", why);
    }
    if (status) *status = st;
    return o;
}

const char *am_ode_last_error(const am_ode *o)
{
    return o ? o->msg : "";
}

typedef struct {
    long steps, nfe, netf, nni, nncf, nje, nfels, nsetups, nli, nlcf, npe, npf;
} counters;

/* Reads CVODE's cumulative counters; nonzero on a failed query. */
static int read_counters(const am_ode *o, counters *c)
{
    memset(c, 0, sizeof *c);
    int bad = 0;
    bad |= CVodeGetNumSteps(o->mem, &c->steps) != CV_SUCCESS;
    bad |= CVodeGetNumRhsEvals(o->mem, &c->nfe) != CV_SUCCESS;
    bad |= CVodeGetNumErrTestFails(o->mem, &c->netf) != CV_SUCCESS;
    bad |= CVodeGetNumNonlinSolvIters(o->mem, &c->nni) != CV_SUCCESS;
    bad |= CVodeGetNumNonlinSolvConvFails(o->mem, &c->nncf) != CV_SUCCESS;
    if (o->par.method == AM_ODE_BDF) {
        if (o->par.linsol == AM_ODE_LINSOL_GMRES) {
            bad |= CVodeGetNumJTSetupEvals(o->mem, &c->nje) != CV_SUCCESS;
            bad |= CVodeGetNumLinIters(o->mem, &c->nli) != CV_SUCCESS;
            bad |= CVodeGetNumLinConvFails(o->mem, &c->nlcf) != CV_SUCCESS;
        } else {
            bad |= CVodeGetNumJacEvals(o->mem, &c->nje) != CV_SUCCESS;
        }
        bad |= CVodeGetNumLinRhsEvals(o->mem, &c->nfels) != CV_SUCCESS;
        bad |= CVodeGetNumLinSolvSetups(o->mem, &c->nsetups) != CV_SUCCESS;
    }
    if (o->par.project) {
        bad |= CVodeGetNumProjEvals(o->mem, &c->npe) != CV_SUCCESS;
        bad |= CVodeGetNumProjFails(o->mem, &c->npf) != CV_SUCCESS;
    }
    return bad;
}

/* Writes the observables of the state v at row g. */
static void observe(const am_ode *o, const double *v, size_t g, const am_ode_output *out)
{
    const am_problem *p = o->p;
    size_t d = o->d;
    double dot = 0, nn = 0, r = 0;
    for (size_t i = 0; i < d; i++) {
        dot += o->u1[i] * v[i];
        nn += v[i] * v[i];
    }
    for (size_t i = 0; i < d; i++) {
        double ri = v[i] - dot * o->u1[i];
        r += ri * ri;
    }
    out->err[g] = r / nn;
    out->norm[g] = sqrt(nn);
    if (out->v) memcpy(out->v + g * d, v, d * sizeof *v);
    if (!out->h2) return;
    double *h2 = out->h2 + g * d;
    for (size_t j = 0; j < d; j++) {
        double h = am_problem_coord(p, v, j);
        h2[j] = h * h;
    }
}

am_status am_ode_solve(am_ode *o, double mu, const double *v0, const double *t, size_t n,
                       const am_ode_output *out, am_ode_stats *stats)
{
    if (!o || !v0 || (n && (!t || !out || !out->err || !out->norm))) return AM_EINVAL;
    if (!(mu >= 0 && mu < 1)) return AM_EINVAL;
    size_t d = o->d;
    double n0 = 0;
    for (size_t i = 0; i < d; i++)
        n0 += v0[i] * v0[i];
    if (!(n0 > 0) || !isfinite(n0)) return AM_EINVAL; /* zero or non-finite start */
    for (size_t g = 0; g < n; g++)
        if (!(t[g] >= 0 && isfinite(t[g])) || (g && t[g] < t[g - 1])) return AM_EINVAL;
    if (stats) memset(stats, 0, sizeof *stats);
    o->msg[0] = 0;
    o->c = 1.0 / (1.0 - mu);

    double *y = N_VGetArrayPointer(o->y);
    memcpy(y, v0, d * sizeof *y);
    if (CVodeReInit(o->mem, 0.0, o->y) != CV_SUCCESS) return AM_ESOLVER;
    counters c0, c1;
    if (read_counters(o, &c0)) return AM_ESOLVER;

    sunrealtype tcur = 0;
    int started = 0;
    for (size_t g = 0; g < n; g++) {
        if (t[g] > tcur) {
            /* with projection, step exactly onto t_g so that the saved state is a projected
             * step, not the (unprojected) interpolant between steps */
            if (o->par.project && CVodeSetStopTime(o->mem, t[g]) != CV_SUCCESS) return AM_ESOLVER;
            int flag = CVode(o->mem, t[g], o->y, &tcur, CV_NORMAL);
            if (flag < 0) return AM_ESOLVER;
            started = 1;
        }
        observe(o, y, g, out);
    }
    if (read_counters(o, &c1)) return AM_ESOLVER;
    if (stats) {
        stats->steps = c1.steps - c0.steps;
        stats->rhs_evals = (c1.nfe - c0.nfe) + (c1.nfels - c0.nfels);
        stats->err_test_failures = c1.netf - c0.netf;
        stats->nonlin_iters = c1.nni - c0.nni;
        stats->nonlin_failures = c1.nncf - c0.nncf;
        stats->jac_evals = c1.nje - c0.nje;
        stats->lin_setups = c1.nsetups - c0.nsetups;
        stats->lin_iters = c1.nli - c0.nli;
        stats->lin_failures = c1.nlcf - c0.nlcf;
        stats->proj_evals = c1.npe - c0.npe;
        stats->proj_failures = c1.npf - c0.npf;
        if (started) {
            int q = 0;
            sunrealtype h = 0;
            if (CVodeGetLastOrder(o->mem, &q) != CV_SUCCESS) return AM_ESOLVER;
            if (CVodeGetLastStep(o->mem, &h) != CV_SUCCESS) return AM_ESOLVER;
            stats->last_order = q;
            stats->last_step = h;
        }
    }
    return AM_OK;
}
