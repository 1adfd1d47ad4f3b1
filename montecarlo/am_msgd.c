/*
 * am_msgd.c -- the Async-MSGD engine of am_msgd.h as an am_model.
 *
 * Each replica keeps a ring of the last L = max_delay + 2 iterates, so v_k, v_{k-1} and
 * the stale w = v_{k-tau} are read from the ring and v_{k+1} written to a slot none of
 * them occupies. The ring starts filled with v_0, which realises v_{-i} = v_0.
 * One replica at a time, drawn data and long Gaussian steps are software-pipelined: the data
 * and delay of step k + 1 are drawn before the update of step k, so that the sequential sum
 * x . w of one step (its rounding order is part of the output) runs alongside other work.
 */
#include "am_msgd.h"
#include "../core/am_common.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_data.h"
#include "am_datadist.h"
#include "am_msgd_batch.h"

#if AM_X86
#include <immintrin.h>
#endif

struct am_msgd {
    const am_problem *p;
    am_msgd_params par;
    size_t ring_len;   /* L */
    double *v0;        /* shared initial point (random, e:J, angle) or NULL */
    double *u1;        /* top eigenvector in original coordinates */
    double *sigma;     /* dense Sigma when rotated and expected, else NULL */
    am_msgd_path path; /* replicas side by side (d <= AM_MSGD_BATCH_MAXDIM) or one at a time */
    am_msgd_batch batch;
    am_model model;
};

typedef struct {
    uint64_t replica;
    uint64_t k; /* current step */
    am_rng data, delay;
    double *ring;  /* L * d */
    double *x, *y; /* data in original and eigen coordinates */
    double *z;     /* Gaussian fast path: normals of a batch of steps (BATCH_DOUBLES), or
                      the products x_i w_i of a long step (d) */
} work_t;

/* Gaussian fast path: the normals of up to BATCH_DOUBLES / d steps are drawn at once. */
#define BATCH_DOUBLES 128

am_msgd_params am_msgd_params_default(void)
{
    am_msgd_params p;
    memset(&p, 0, sizeof p);
    p.eta = 5e-4;
    p.mu = 0;
    am_delay_make(AM_DELAY_NONE, 0, &p.delay);
    p.init.kind = AM_INIT_RANDOM;
    p.seed = 1;
    p.blowup = 1e6;
    p.burnin = 0.5;
    p.eps = 0.01;
    return p;
}

am_status am_msgd_init_parse(const char *spec, size_t dim, am_init *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strcmp(spec, "random") == 0) {
        out->kind = AM_INIT_RANDOM;
        return AM_OK;
    }
    if (strcmp(spec, "random-each") == 0) {
        out->kind = AM_INIT_RANDOM_EACH;
        return AM_OK;
    }
    char *end;
    errno = 0;
    if (strncmp(spec, "e:", 2) == 0) {
        long j = strtol(spec + 2, &end, 10);
        if (spec[2] == 0 || *end || errno || j < 1 || (size_t)j > dim) {
            snprintf(err, errlen, "e:J needs an integer J in [1, %zu], got '%s'", dim, spec);
            return AM_EINVAL;
        }
        out->kind = AM_INIT_EIGEN;
        out->j = (size_t)j;
        return AM_OK;
    }
    if (strncmp(spec, "angle:", 6) == 0) {
        double th = strtod(spec + 6, &end);
        if (spec[6] == 0 || *end || errno || !isfinite(th)) {
            snprintf(err, errlen, "angle:THETA needs a finite number (radians), got '%s'", spec);
            return AM_EINVAL;
        }
        out->kind = AM_INIT_ANGLE;
        out->theta = th;
        return AM_OK;
    }
    snprintf(err, errlen, "unknown initial point '%s' (random, random-each, e:J, angle:THETA)",
             spec);
    return AM_EINVAL;
}

void am_msgd_init_format(const am_init *init, char *buf, size_t len)
{
    switch (init->kind) {
    case AM_INIT_RANDOM:
        snprintf(buf, len, "random");
        break;
    case AM_INIT_RANDOM_EACH:
        snprintf(buf, len, "random-each");
        break;
    case AM_INIT_EIGEN:
        snprintf(buf, len, "e:%zu", init->j);
        break;
    case AM_INIT_ANGLE:
        snprintf(buf, len, "angle:%.17g", init->theta);
        break;
    }
}

am_status am_msgd_params_check(const am_problem *p, const am_msgd_params *par, char *err,
                               size_t errlen)
{
    if (!(par->eta > 0) || !isfinite(par->eta)) {
        snprintf(err, errlen, "eta must be a finite number > 0, got %g", par->eta);
        return AM_EINVAL;
    }
    if (!(par->mu >= 0 && par->mu < 1)) {
        snprintf(err, errlen, "mu must be in [0, 1), got %g", par->mu);
        return AM_EINVAL;
    }
    if (!(par->blowup > 1) || isnan(par->blowup)) {
        snprintf(err, errlen, "blowup must be > 1, got %g", par->blowup);
        return AM_EINVAL;
    }
    if (par->init.kind == AM_INIT_EIGEN && (par->init.j < 1 || par->init.j > p->dim)) {
        snprintf(err, errlen, "e:J needs J in [1, %zu], got %zu", p->dim, par->init.j);
        return AM_EINVAL;
    }
    if (par->summary && !(par->burnin >= 0 && par->burnin < 1)) {
        snprintf(err, errlen, "burnin must be in [0, 1), got %g", par->burnin);
        return AM_EINVAL;
    }
    double ring = ((double)par->delay.max + 2.0) * (double)p->dim * sizeof(double);
    if (ring > (double)AM_MEMORY_LIMIT / 16) {
        snprintf(err, errlen, "delay history of %.3g bytes per thread exceeds the limit", ring);
        return AM_ENOMEM;
    }
    return AM_OK;
}

void am_msgd_update(size_t d, double eta, double mu, const double *x, const double *v,
                    const double *vprev, const double *w, double *vnext)
{
    double a = 0;
    for (size_t i = 0; i < d; i++)
        a += x[i] * w[i];
    for (size_t i = 0; i < d; i++)
        vnext[i] = AM_MSGD_HEAVY_BALL(v[i], vprev[i], mu, AM_MSGD_OJA_STEP(eta * a, x[i], a, w[i]));
}

double am_msgd_error(size_t d, const double *u, const double *v)
{
    double dot = 0, nn = 0;
    for (size_t i = 0; i < d; i++) {
        dot += u[i] * v[i];
        nn += v[i] * v[i];
    }
    return 1.0 - dot * dot / nn;
}

void am_msgd_initial(const am_msgd *m, uint64_t replica, double *v0)
{
    size_t d = m->p->dim;
    if (m->v0) {
        memcpy(v0, m->v0, d * sizeof *v0);
        return;
    }
    am_rng rng;
    am_rng_init(&rng, m->par.seed, replica, AM_STREAM_INIT, 0);
    am_data_unit_vector(&rng, d, v0);
}

static size_t work_bytes(size_t d, size_t L)
{
    size_t head = (sizeof(work_t) + 63) / 64 * 64;
    return head + ((L + 2) * d + (d > BATCH_DOUBLES ? d : BATCH_DOUBLES)) * sizeof(double) + 64;
}

static am_status msgd_start(const void *ctx, uint64_t replica, void *work)
{
    const am_msgd *m = ctx;
    size_t d = m->p->dim, L = m->ring_len;
    work_t *w = work;
    double *base = (double *)((char *)work + (sizeof(work_t) + 63) / 64 * 64);
    w->replica = replica;
    w->k = 0;
    w->ring = base;
    w->x = base + L * d;
    w->y = w->x + d;
    w->z = w->y + d;
    am_rng_init(&w->data, m->par.seed, replica, AM_STREAM_DATA, 0);
    am_rng_init(&w->delay, m->par.seed, replica, AM_STREAM_DELAY, 0);
    am_msgd_initial(m, replica, w->ring);
    for (size_t s = 1; s < L; s++)
        memcpy(w->ring + s * d, w->ring, d * sizeof(double));
    return AM_OK;
}

/* Data for step k in original coordinates, into x (w->y is scratch). */
static inline void draw_x_to(const am_msgd *m, work_t *w, double *x)
{
    const am_problem *p = m->p;
    size_t d = p->dim;
    if (p->dist.kind == AM_DIST_DATA) { /* a row of the data set, in original coordinates */
        am_datadist_draw(p, &w->data, x);
        return;
    }
    if (!p->q) {
        am_data_draw(p, &w->data, x);
        return;
    }
    am_data_draw(p, &w->data, w->y);
    for (size_t i = 0; i < d; i++) {
        const double *qi = p->q + i * d;
        double s = 0;
        for (size_t j = 0; j < d; j++)
            s += qi[j] * w->y[j];
        x[i] = s;
    }
}

/* Data for step k in original coordinates, into w->x. */
static inline void draw_x(const am_msgd *m, work_t *w)
{
    draw_x_to(m, w, w->x);
}

/* Fast path: Gaussian data, standard eigenbasis. Scales the standard normals in x to
 * x = sqrt(lambda) Z and returns x . wv. */
static inline double gaussian_dot(const am_problem *p, double *x, const double *wv)
{
    const double *sl = p->sqrt_lambda;
    double a = 0;
    for (size_t i = 0; i < p->dim; i++) {
        x[i] *= sl[i];
        a += x[i] * wv[i];
    }
    return a;
}

/* vn = v + mu (v - vp) + ea (x - a wv), element by element (same rounding as scalar). */
static inline void msgd_step_body(size_t d, double mu, double ea, double a, const double *v,
                                  const double *vp, const double *x, const double *wv, double *vn)
{
    for (size_t i = 0; i < d; i++)
        vn[i] = AM_MSGD_HEAVY_BALL(v[i], vp[i], mu, AM_MSGD_OJA_STEP(ea, x[i], a, wv[i]));
}

#if AM_X86
/* The same four lanes at a time (AVX2 without FMA, so every product is rounded as above). */
__attribute__((target("avx2"))) static void msgd_step_avx2(size_t d, double mu, double ea, double a,
                                                           const double *v, const double *vp,
                                                           const double *x, const double *wv,
                                                           double *vn)
{
    __m256d m = _mm256_set1_pd(mu), e = _mm256_set1_pd(ea), av = _mm256_set1_pd(a);
    size_t i = 0;
    for (; i + 4 <= d; i += 4) {
        __m256d g = AM_MSGD_OJA_STEP(e, _mm256_loadu_pd(x + i), av, _mm256_loadu_pd(wv + i));
        _mm256_storeu_pd(vn + i,
                         AM_MSGD_HEAVY_BALL(_mm256_loadu_pd(v + i), _mm256_loadu_pd(vp + i), m, g));
    }
    msgd_step_body(d - i, mu, ea, a, v + i, vp + i, x + i, wv + i, vn + i);
}
#endif

/* x_i *= sl_i and pr_i = x_i wv_i (each product rounded, as in gaussian_dot). */
static inline void scale_products_body(size_t d, double *x, const double *sl, const double *wv,
                                       double *pr)
{
    for (size_t i = 0; i < d; i++) {
        x[i] *= sl[i];
        pr[i] = x[i] * wv[i];
    }
}

#if AM_X86
__attribute__((target("avx2"))) static void
scale_products_avx2(size_t d, double *x, const double *sl, const double *wv, double *pr)
{
    size_t i = 0;
    for (; i + 4 <= d; i += 4) {
        __m256d xi = _mm256_mul_pd(_mm256_loadu_pd(x + i), _mm256_loadu_pd(sl + i));
        _mm256_storeu_pd(x + i, xi);
        _mm256_storeu_pd(pr + i, _mm256_mul_pd(xi, _mm256_loadu_pd(wv + i)));
    }
    scale_products_body(d - i, x + i, sl + i, wv + i, pr + i);
}
#endif

static inline void scale_products(size_t d, double *x, const double *sl, const double *wv,
                                  double *pr)
{
#if AM_X86
    if (d >= 16 && am_common_simd() >= AM_SIMD_AVX2) {
        scale_products_avx2(d, x, sl, wv, pr);
        return;
    }
#endif
    scale_products_body(d, x, sl, wv, pr);
}

static inline void msgd_step(size_t d, double mu, double ea, double a, const double *v,
                             const double *vp, const double *x, const double *wv, double *vn)
{
#if AM_X86
    if (d >= 16 && am_common_simd() >= AM_SIMD_AVX2) {
        msgd_step_avx2(d, mu, ea, a, v, vp, x, wv, vn);
        return;
    }
#endif
    msgd_step_body(d, mu, ea, a, v, vp, x, wv, vn);
}

/* The update of one step (msgd_step) and, in the same pass, the sum of x1[i] w1[i] of the
 * next step from 0 in index order (w1 may be vn: each vn[i] is written before w1[i] is
 * read); returns that sum. The chain of additions runs alongside the update. */
static inline double step_and_sum_body(size_t d, double mu, double ea, double a, const double *v,
                                       const double *vp, const double *x, const double *wv,
                                       double *vn, const double *x1, const double *w1, double s)
{
    for (size_t i = 0; i < d; i++) {
        vn[i] = AM_MSGD_HEAVY_BALL(v[i], vp[i], mu, AM_MSGD_OJA_STEP(ea, x[i], a, wv[i]));
        s += x1[i] * w1[i];
    }
    return s;
}

#if AM_X86
__attribute__((target("avx2"))) static double
step_and_sum_avx2(size_t d, double mu, double ea, double a, const double *v, const double *vp,
                  const double *x, const double *wv, double *vn, const double *x1, const double *w1)
{
    __m256d m = _mm256_set1_pd(mu), e = _mm256_set1_pd(ea), av = _mm256_set1_pd(a);
    double s = 0;
    size_t i = 0;
    for (; i + 4 <= d; i += 4) {
        __m256d g = AM_MSGD_OJA_STEP(e, _mm256_loadu_pd(x + i), av, _mm256_loadu_pd(wv + i));
        _mm256_storeu_pd(vn + i,
                         AM_MSGD_HEAVY_BALL(_mm256_loadu_pd(v + i), _mm256_loadu_pd(vp + i), m, g));
        __m256d pr = _mm256_mul_pd(_mm256_loadu_pd(x1 + i), _mm256_loadu_pd(w1 + i));
        __m128d lo = _mm256_castpd256_pd128(pr), hi = _mm256_extractf128_pd(pr, 1);
        s += _mm_cvtsd_f64(lo);
        s += _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo));
        s += _mm_cvtsd_f64(hi);
        s += _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi));
    }
    return step_and_sum_body(d - i, mu, ea, a, v + i, vp + i, x + i, wv + i, vn + i, x1 + i, w1 + i,
                             s);
}
#endif

static inline double step_and_sum(size_t d, double mu, double ea, double a, const double *v,
                                  const double *vp, const double *x, const double *wv, double *vn,
                                  const double *x1, const double *w1)
{
#if AM_X86
    if (d >= 16 && am_common_simd() >= AM_SIMD_AVX2)
        return step_and_sum_avx2(d, mu, ea, a, v, vp, x, wv, vn, x1, w1);
#endif
    return step_and_sum_body(d, mu, ea, a, v, vp, x, wv, vn, x1, w1, 0.0);
}

/* The update of one step (msgd_step) and, in the same pass, the next step's data scaled,
 * x1[i] *= sl[i], and its products pr[i] = x1[i] w1[i] (w1 may be vn: each vn[i] is
 * written before w1[i] is read). */
static inline void step_and_products_body(size_t d, double mu, double ea, double a, const double *v,
                                          const double *vp, const double *x, const double *wv,
                                          double *vn, double *x1, const double *sl,
                                          const double *w1, double *pr)
{
    for (size_t i = 0; i < d; i++) {
        vn[i] = AM_MSGD_HEAVY_BALL(v[i], vp[i], mu, AM_MSGD_OJA_STEP(ea, x[i], a, wv[i]));
        x1[i] *= sl[i];
        pr[i] = x1[i] * w1[i];
    }
}

#if AM_X86
__attribute__((target("avx2"))) static void
step_and_products_avx2(size_t d, double mu, double ea, double a, const double *v, const double *vp,
                       const double *x, const double *wv, double *vn, double *x1, const double *sl,
                       const double *w1, double *pr)
{
    __m256d m = _mm256_set1_pd(mu), e = _mm256_set1_pd(ea), av = _mm256_set1_pd(a);
    size_t i = 0;
    for (; i + 4 <= d; i += 4) {
        __m256d g = AM_MSGD_OJA_STEP(e, _mm256_loadu_pd(x + i), av, _mm256_loadu_pd(wv + i));
        _mm256_storeu_pd(vn + i,
                         AM_MSGD_HEAVY_BALL(_mm256_loadu_pd(v + i), _mm256_loadu_pd(vp + i), m, g));
        __m256d xi = _mm256_mul_pd(_mm256_loadu_pd(x1 + i), _mm256_loadu_pd(sl + i));
        _mm256_storeu_pd(x1 + i, xi);
        _mm256_storeu_pd(pr + i, _mm256_mul_pd(xi, _mm256_loadu_pd(w1 + i)));
    }
    step_and_products_body(d - i, mu, ea, a, v + i, vp + i, x + i, wv + i, vn + i, x1 + i, sl + i,
                           w1 + i, pr + i);
}
#endif

static inline void step_and_products(size_t d, double mu, double ea, double a, const double *v,
                                     const double *vp, const double *x, const double *wv,
                                     double *vn, double *x1, const double *sl, const double *w1,
                                     double *pr)
{
#if AM_X86
    if (d >= 16 && am_common_simd() >= AM_SIMD_AVX2) {
        step_and_products_avx2(d, mu, ea, a, v, vp, x, wv, vn, x1, sl, w1, pr);
        return;
    }
#endif
    step_and_products_body(d, mu, ea, a, v, vp, x, wv, vn, x1, sl, w1, pr);
}

/* Slot of the stale iterate of the step whose current iterate is in slot cur. */
static inline size_t stale_slot(const am_msgd *m, work_t *w, uint64_t k, size_t cur)
{
    if (m->par.delay.kind == AM_DELAY_NONE) return cur;
    size_t L = m->ring_len;
    am_rng_seek(&w->delay, k);
    uint64_t tau = am_delay_draw(&m->par.delay, &w->delay);
    return cur >= tau ? cur - (size_t)tau : cur + L - (size_t)tau;
}

/* msgd_advance for drawn data other than the Gaussian fast path, pipelined: the data and
 * delay of step k + 1 are drawn before the update of step k, whose pass also sums the
 * products x_i w_i of step k + 1 (same operations, same order, same bytes). */
static void advance_drawn(const am_msgd *m, work_t *w, uint64_t k0, uint64_t k1)
{
    size_t d = m->p->dim, L = m->ring_len;
    double eta = m->par.eta, mu = m->par.mu;
    size_t cur = (size_t)(k0 % L);
    double *xc = w->x, *xn = w->z;
    size_t slot = stale_slot(m, w, k0, cur);
    am_rng_seek(&w->data, k0);
    draw_x_to(m, w, xc);
    const double *wv = w->ring + slot * d;
    double a = 0;
    for (size_t i = 0; i < d; i++)
        a += xc[i] * wv[i];
    for (uint64_t k = k0; k < k1; k++) {
        size_t prev = cur == 0 ? L - 1 : cur - 1;
        size_t next = cur + 1 == L ? 0 : cur + 1;
        const double *v = w->ring + cur * d, *vp = w->ring + prev * d;
        double *vn = w->ring + next * d;
        if (k + 1 < k1) {
            size_t s1 = stale_slot(m, w, k + 1, next);
            am_rng_seek(&w->data, k + 1);
            draw_x_to(m, w, xn);
            const double *w1 = w->ring + s1 * d;
            double a1 = step_and_sum(d, mu, eta * a, a, v, vp, xc, wv, vn, xn, w1);
            double *t = xc;
            xc = xn;
            xn = t;
            wv = w1;
            a = a1;
        } else {
            msgd_step(d, mu, eta * a, a, v, vp, xc, wv, vn);
        }
        cur = next;
    }
}

/* msgd_advance for the Gaussian fast path with long steps (one per batch), pipelined: the
 * products x_i w_i of step k are summed alongside the normals of step k + 1
 * (am_rng_fill_gaussian_sum), and the update of step k scales the normals of step k + 1 and
 * forms their products (the delay of step k + 1 drawn before it). Same bytes as one step
 * after the other. */
static void advance_gauss_long(const am_msgd *m, work_t *w, uint64_t k0, uint64_t k1)
{
    const am_problem *p = m->p;
    size_t d = p->dim, L = m->ring_len;
    double eta = m->par.eta, mu = m->par.mu;
    const double *sl = p->sqrt_lambda;
    size_t cur = (size_t)(k0 % L);
    double *xc = w->x, *xn = w->y, *pr = w->z;
    const double *wv = w->ring + stale_slot(m, w, k0, cur) * d;
    am_rng_seek(&w->data, k0);
    am_rng_fill_gaussian(&w->data, xc, d);
    scale_products(d, xc, sl, wv, pr);
    for (uint64_t k = k0; k < k1; k++) {
        size_t prev = cur == 0 ? L - 1 : cur - 1;
        size_t next = cur + 1 == L ? 0 : cur + 1;
        const double *v = w->ring + cur * d, *vp = w->ring + prev * d;
        double *vn = w->ring + next * d;
        double a;
        if (k + 1 < k1) {
            am_rng_seek(&w->data, k + 1);
            a = am_rng_fill_gaussian_sum(&w->data, xn, d, pr, d, 0.0);
            const double *w1 = w->ring + stale_slot(m, w, k + 1, next) * d;
            step_and_products(d, mu, eta * a, a, v, vp, xc, wv, vn, xn, sl, w1, pr);
            double *t = xc;
            xc = xn;
            xn = t;
            wv = w1;
        } else {
            a = 0;
            for (size_t i = 0; i < d; i++)
                a += pr[i];
            msgd_step(d, mu, eta * a, a, v, vp, xc, wv, vn);
        }
        cur = next;
    }
}

static int msgd_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const am_msgd *m = ctx;
    const am_problem *p = m->p;
    work_t *w = work;
    size_t d = p->dim, L = m->ring_len;
    double eta = m->par.eta, mu = m->par.mu;
    int has_delay = m->par.delay.kind != AM_DELAY_NONE;
    int fast_gauss = p->dist.kind == AM_DIST_GAUSSIAN && !p->q;
    int expected = p->dist.kind == AM_DIST_EXPECTED;
    size_t cur = (size_t)(k0 % L);
    /* Gaussian fast path: normals of steps kb .. kb + nz - 1 in w->z (short steps in batches,
     * so that their random numbers are computed side by side) */
    uint64_t kb = k0, nz = 0, per = d < BATCH_DOUBLES ? BATCH_DOUBLES / d : 1;
    double *z = d <= BATCH_DOUBLES ? w->z : w->x;
    /* drawn data and long Gaussian steps: pipelined (advance_drawn, advance_gauss_long) */
    if (!expected && k1 > k0 && (!fast_gauss || per == 1)) {
        if (fast_gauss)
            advance_gauss_long(m, w, k0, k1);
        else
            advance_drawn(m, w, k0, k1);
        k0 = k1; /* the loop below has nothing left to do */
        cur = (size_t)(k1 % L);
    }
    for (uint64_t k = k0; k < k1; k++) {
        size_t prev = cur == 0 ? L - 1 : cur - 1;
        size_t next = cur + 1 == L ? 0 : cur + 1;
        const double *v = w->ring + cur * d, *vp = w->ring + prev * d;
        double *vn = w->ring + next * d;
        const double *wv = v;
        if (has_delay) {
            am_rng_seek(&w->delay, k);
            uint64_t tau = am_delay_draw(&m->par.delay, &w->delay);
            size_t slot = cur >= tau ? cur - (size_t)tau : cur + L - (size_t)tau;
            wv = w->ring + slot * d;
        }
        if (expected) {
            /* g = Sigma w - (w^T Sigma w) w */
            double *sw = w->x, q = 0;
            if (m->sigma) {
                for (size_t i = 0; i < d; i++) {
                    double s = 0;
                    for (size_t j = 0; j < d; j++)
                        s += m->sigma[i * d + j] * wv[j];
                    sw[i] = s;
                }
            } else {
                for (size_t i = 0; i < d; i++)
                    sw[i] = p->lambda[i] * wv[i];
            }
            for (size_t i = 0; i < d; i++)
                q += sw[i] * wv[i];
            for (size_t i = 0; i < d; i++)
                vn[i] = AM_MSGD_HEAVY_BALL(v[i], vp[i], mu, AM_MSGD_OJA_STEP(eta, sw[i], q, wv[i]));
        } else {
            double a, *x = w->x;
            if (fast_gauss) {
                if (k >= kb + nz) {
                    kb = k;
                    nz = k1 - k < per ? k1 - k : per;
                    am_rng_fill_gaussian_steps(&w->data, kb, (size_t)nz, d, z);
                }
                x = z + (size_t)(k - kb) * d;
                a = gaussian_dot(p, x, wv);
            } else {
                am_rng_seek(&w->data, k);
                draw_x(m, w);
                a = 0;
                for (size_t i = 0; i < d; i++)
                    a += w->x[i] * wv[i];
            }
            msgd_step(d, mu, eta * a, a, v, vp, x, wv, vn);
        }
        cur = next;
    }
    w->k = k1;
    const double *v = w->ring + cur * d;
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    return !(nn <= m->par.blowup * m->par.blowup);
}

/* Replicas side by side (am_msgd_batch.h); the same bytes as msgd_advance on each. Short
 * advances (fewer steps than the ring has slots) stay one replica at a time. */
static void msgd_advance_batch(const void *ctx, void *const *works, size_t n, uint64_t k0,
                               uint64_t k1, int *diverged)
{
    const am_msgd *m = ctx;
    for (size_t j0 = 0; j0 < n; j0 += AM_MSGD_BATCH_REPLICAS) {
        size_t nl = n - j0 < AM_MSGD_BATCH_REPLICAS ? n - j0 : AM_MSGD_BATCH_REPLICAS;
        double *rings[AM_MSGD_BATCH_REPLICAS];
        uint64_t reps[AM_MSGD_BATCH_REPLICAS];
        for (size_t j = 0; j < nl; j++) {
            work_t *w = works[j0 + j];
            rings[j] = w->ring;
            reps[j] = w->replica;
        }
        if (nl < 2 || k1 - k0 < m->ring_len ||
            am_msgd_batch_advance(&m->batch, m->path, rings, reps, nl, k0, k1, diverged + j0)) {
            for (size_t j = 0; j < nl; j++)
                diverged[j0 + j] = msgd_advance(ctx, works[j0 + j], k0, k1);
            continue;
        }
        for (size_t j = 0; j < nl; j++)
            ((work_t *)works[j0 + j])->k = k1;
    }
}

void am_msgd_set_path(am_msgd *m, int path)
{
    m->path = path < AM_MSGD_PATH_SCALAR || path > (int)am_msgd_batch_best() ? am_msgd_batch_best()
                                                                             : (am_msgd_path)path;
    /* data sets run one replica at a time (the batched kernel draws the synthetic laws) */
    int on = m->path != AM_MSGD_PATH_SCALAR && m->p->dim <= AM_MSGD_BATCH_MAXDIM &&
             m->p->dist.kind != AM_DIST_DATA;
    m->model.batch = on ? AM_MSGD_BATCH_REPLICAS : 0;
    m->model.advance_batch = on ? msgd_advance_batch : NULL;
}

int am_msgd_path_get(const am_msgd *m)
{
    return m->model.advance_batch ? (int)m->path : AM_MSGD_PATH_SCALAR;
}

size_t am_msgd_observables(const am_problem *p, const double *u1, const double *v, int coords,
                           int coords_signed, double *obs)
{
    size_t d = p->dim;
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    obs[0] = am_msgd_error(d, u1, v);
    obs[1] = sqrt(nn);
    if (!coords) return 2;
    for (size_t j = 0; j < d; j++) {
        double h = am_problem_coord(p, v, j);
        obs[2 + j] = coords_signed ? h : h * h;
    }
    return 2 + d;
}

static void msgd_observe(const void *ctx, const void *work, double *obs)
{
    const am_msgd *m = ctx;
    const work_t *w = work;
    const double *v = w->ring + (size_t)(w->k % m->ring_len) * m->p->dim;
    am_msgd_observables(m->p, m->u1, v, m->par.coords, m->par.coords_signed, obs);
}

/* Summary of one replica (see am_msgd_params.summary); obs[g * nobs] is err. */
static void msgd_summarize(const void *ctx, const void *work, const double *obs, size_t ngrid,
                           int diverged, double *summary)
{
    const am_msgd *m = ctx;
    (void)work;
    size_t nobs = m->model.nobs, last = ngrid - 1;
    size_t g0 = (size_t)ceil(m->par.burnin * (double)last);
    if (g0 > last) g0 = last;
    double s = 0;
    for (size_t g = g0; g <= last; g++)
        s += obs[g * nobs];
    summary[0] = diverged ? NAN : s / (double)(last - g0 + 1);
    summary[1] = NAN;
    for (size_t g = 0; g <= last; g++)
        if (obs[g * nobs] <= m->par.eps) {
            summary[1] = last ? (double)g / (double)last : 0.0;
            break;
        }
    summary[2] = diverged ? 1.0 : 0.0;
}

am_msgd *am_msgd_alloc(const am_problem *p, const am_msgd_params *par, am_status *status, char *err,
                       size_t errlen)
{
    char why[256];
    am_status st = am_msgd_params_check(p, par, why, sizeof why);
    if (st == AM_OK && par->delay.kind == AM_DELAY_WORKERS) { /* stateful: see am_msgd_ps.h */
        st = AM_EINVAL;
        snprintf(why, sizeof why, "the delay workers:P:DIST runs on the parameter-server engine");
    }
    if (st != AM_OK) {
        if (err && errlen) snprintf(err, errlen, "%s", why);
        *status = st;
        return NULL;
    }
    am_msgd *m = calloc(1, sizeof *m);
    size_t d = p->dim;
    if (!m) goto nomem;
    m->p = p;
    m->par = *par;
    m->ring_len = (size_t)par->delay.max + 2;
    m->u1 = malloc(d * sizeof *m->u1);
    if (!m->u1) goto nomem;
    am_problem_eigvec(p, 0, m->u1);
    if (par->init.kind != AM_INIT_RANDOM_EACH) {
        m->v0 = malloc(d * sizeof *m->v0);
        if (!m->v0) goto nomem;
        if (par->init.kind == AM_INIT_RANDOM) {
            am_rng rng;
            am_rng_init(&rng, par->seed, AM_REPLICA_SHARED, AM_STREAM_INIT, 0);
            am_data_unit_vector(&rng, d, m->v0);
        } else if (par->init.kind == AM_INIT_EIGEN) {
            am_problem_eigvec(p, par->init.j - 1, m->v0);
        } else {
            double *e2 = malloc(d * sizeof *e2);
            if (!e2) goto nomem;
            am_problem_eigvec(p, 1, e2);
            for (size_t i = 0; i < d; i++)
                m->v0[i] = cos(par->init.theta) * m->u1[i] + sin(par->init.theta) * e2[i];
            free(e2);
        }
    }
    if (p->q && p->dist.kind == AM_DIST_EXPECTED) {
        m->sigma = malloc(d * d * sizeof *m->sigma);
        if (!m->sigma) goto nomem;
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++) {
                double s = 0;
                for (size_t l = 0; l < d; l++)
                    s += p->q[i * d + l] * p->lambda[l] * p->q[j * d + l];
                m->sigma[i * d + j] = s;
            }
    }
    m->model.nobs = par->coords ? 2 + d : 2;
    m->model.work_bytes = work_bytes(d, m->ring_len);
    m->model.start = msgd_start;
    m->model.advance = msgd_advance;
    m->model.observe = msgd_observe;
    m->model.ctx = m;
    if (par->summary) {
        m->model.nsummary = AM_MSGD_NSUMMARY;
        m->model.summarize = msgd_summarize;
    }
    m->batch.p = p;
    m->batch.delay = &m->par.delay;
    m->batch.sigma = m->sigma;
    m->batch.seed = par->seed;
    m->batch.ring_len = m->ring_len;
    m->batch.eta = par->eta;
    m->batch.mu = par->mu;
    m->batch.blowup = par->blowup;
    am_msgd_set_path(m, (int)am_msgd_batch_path());
    *status = AM_OK;
    return m;
nomem:
    am_msgd_free(m);
    if (err && errlen) snprintf(err, errlen, "%s", am_strerror(AM_ENOMEM));
    *status = AM_ENOMEM;
    return NULL;
}

void am_msgd_free(am_msgd *m)
{
    if (!m) return;
    free(m->v0);
    free(m->u1);
    free(m->sigma);
    free(m);
}

const am_model *am_msgd_model(const am_msgd *m)
{
    return &m->model;
}

size_t am_msgd_nobs(const am_msgd *m)
{
    return m->model.nobs;
}
