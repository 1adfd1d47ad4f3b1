/*
 * am_msgd_ps.c -- the engine of am_msgd_ps.h: a ring of the last L = cap + 2 iterates and a
 * parameter-server simulator (am_ps_place) in each replica's workspace.
 *
 * Three paths, the same bytes: the reference (AM_MSGD_PATH_SCALAR: one seek and one data
 * draw per gradient); one replica at a time with the normals of a run of steps drawn at once
 * (am_rng_fill_gaussian_steps: every update uses n_k = B gradients, B fixed by the variant, so
 * step k's data are the first B d normals of step k); and, for d <= AM_MSGD_BATCH_MAXDIM,
 * AM_MSGD_LANES replicas side by side (advance_batch): each lane runs its own simulator, v_k
 * and v_{k-1} are vectors across the lanes and each v_{k+1} goes to its replica's ring, from
 * which the stale iterates are read lane by lane; the data of every lane come from
 * am_rng_gaussian_lanes / am_rng_words_lanes on its own stream, and every lane performs the
 * one-replica operations in the same order without fused multiply-add, with GCC vector types
 * compiled for AVX-512, AVX2 and portable C (am_msgd_batch_path chooses).
 */
#include "am_msgd_ps.h"
#include "../core/am_common.h"
#include "am_ps_impl.h"

/* Products and sums rounded separately, as in the one-replica code, even where the build
 * does not pass -ffp-contract=off (the AVX-512 target has fused multiply-add). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_data.h"
#include "am_msgd_batch.h"
#include "am_ps.h"

/* Normals per replica drawn at once by the one-replica path; vectors of lane data (normals or
 * words) drawn at once by the lane path. */
#define ZBUF 512
#define LANE_BUF 256

struct am_msgd_ps {
    const am_problem *p;
    am_msgd_ps_params par;
    am_ps_params psp;
    am_msgd *base; /* initial points and error of the plain engine */
    double *u1;
    size_t ring_len, cap, ps_bytes, head;
    size_t batch; /* gradients per update (fixed by the variant) */
    am_msgd_path path;
    am_model model;
};

typedef struct {
    uint64_t k;
    double t;       /* wall-clock time of v_k */
    double clamped; /* gradients whose staleness was clamped */
    am_rng data;
    am_ps *ps;
    double *ring, *x, *y, *acc, *z; /* z: normals of a run of steps (ZBUF) */
} work_t;

static size_t r64(size_t n)
{
    return (n + 63) / 64 * 64;
}

static am_status ps_start(const void *ctx, uint64_t replica, void *work)
{
    const am_msgd_ps *m = ctx;
    size_t d = m->p->dim, L = m->ring_len;
    work_t *w = work;
    char *c = (char *)work + m->head;
    w->ps = am_ps_place_buffered(c, &m->psp);
    am_ps_set_path(w->ps, (int)m->path);
    am_ps_reset(w->ps, replica);
    w->ring = (double *)(c + r64(m->ps_bytes));
    w->x = w->ring + L * d;
    w->y = w->x + d;
    w->acc = w->y + d;
    w->z = w->acc + d;
    w->k = 0;
    w->t = 0;
    w->clamped = 0;
    am_rng_init(&w->data, m->par.msgd.seed, replica, AM_STREAM_DATA, 0);
    am_msgd_initial(m->base, replica, w->ring);
    for (size_t s = 1; s < L; s++)
        memcpy(w->ring + s * d, w->ring, d * sizeof(double));
    return AM_OK;
}

/* acc += coef a (X - a w) for one draw X (or coef (Sigma w - (w^T Sigma w) w) for `expected`),
 * in the plain engine's order of operations; X from the data stream, or, for Gaussian data
 * given the standard normals z of the draw (z != NULL), Q (sqrt(lambda) z) as am_data_draw
 * forms it. */
static void add_term(const am_msgd_ps *m, work_t *w, const double *wv, double coef, const double *z)
{
    const am_problem *p = m->p;
    size_t d = p->dim;
    double *x = w->x, *y = w->y;
    if (p->dist.kind == AM_DIST_EXPECTED) {
        /* Sigma w = Q diag(lambda) Q^T w */
        if (p->q) {
            for (size_t j = 0; j < d; j++) {
                double s = 0;
                for (size_t i = 0; i < d; i++)
                    s += p->q[i * d + j] * wv[i];
                y[j] = p->lambda[j] * s;
            }
            for (size_t i = 0; i < d; i++) {
                double s = 0;
                for (size_t j = 0; j < d; j++)
                    s += p->q[i * d + j] * y[j];
                x[i] = s;
            }
        } else {
            for (size_t i = 0; i < d; i++)
                x[i] = p->lambda[i] * wv[i];
        }
        double q = 0;
        for (size_t i = 0; i < d; i++)
            q += x[i] * wv[i];
        for (size_t i = 0; i < d; i++)
            w->acc[i] += coef * (x[i] - q * wv[i]);
        return;
    }
    double *dst = p->q ? y : x;
    if (z)
        for (size_t i = 0; i < d; i++)
            dst[i] = z[i] * p->sqrt_lambda[i];
    else
        am_data_draw(p, &w->data, dst);
    if (p->q)
        for (size_t i = 0; i < d; i++) {
            double s = 0;
            for (size_t j = 0; j < d; j++)
                s += p->q[i * d + j] * y[j];
            x[i] = s;
        }
    double a = 0;
    for (size_t i = 0; i < d; i++)
        a += x[i] * wv[i];
    double ca = coef * a;
    for (size_t i = 0; i < d; i++)
        w->acc[i] += ca * (x[i] - a * wv[i]);
}

/* The iterate s updates before v_k (s clamped to the cap, and to k: v_{-i} = v_0). */
static inline const double *stale_iterate(const am_msgd_ps *m, const work_t *w, size_t cur,
                                          uint64_t k, uint64_t s)
{
    size_t L = m->ring_len;
    if (s > m->cap) s = m->cap;
    if (s > k) s = k;
    size_t slot = cur >= s ? cur - (size_t)s : cur + L - (size_t)s;
    return w->ring + slot * m->p->dim;
}

/* The step of the update: eta, or the adaptive min(C / max_l |v - w_l|^2, eta_max) over the
 * stale iterates w_l (v_k itself for staleness 0), counting clamped gradients. */
static double update_step(const am_msgd_ps *m, work_t *w, const am_ps_update *u, size_t cur,
                          uint64_t k)
{
    size_t d = m->p->dim;
    const double *v = w->ring + cur * d;
    double far = 0;
    for (size_t l = 0; l < u->ngrad; l++) {
        uint64_t s = u->staleness[l];
        if (s > m->cap) w->clamped += 1;
        if (m->par.lr_c > 0 && s > 0) {
            const double *wv = stale_iterate(m, w, cur, k, s);
            double dd = 0;
            for (size_t i = 0; i < d; i++)
                dd += (v[i] - wv[i]) * (v[i] - wv[i]);
            far = fmax(far, dd);
        }
    }
    if (!(m->par.lr_c > 0)) return m->par.msgd.eta;
    return far > 0 ? fmin(m->par.lr_c / far, m->par.lr_max) : m->par.lr_max;
}

/* One replica at a time. The reference path seeks the data stream at each step and draws
 * each gradient's data in turn; the others draw the Gaussian data of a run of steps at once
 * (the B d normals of each step, as the B consecutive draws). */
static int ps_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const am_msgd_ps *m = ctx;
    work_t *w = work;
    size_t d = m->p->dim, L = m->ring_len, nstep = m->batch * d;
    double mu = m->par.msgd.mu;
    int bulk =
        m->path != AM_MSGD_PATH_SCALAR && m->p->dist.kind == AM_DIST_GAUSSIAN && nstep <= ZBUF;
    int expected = m->p->dist.kind == AM_DIST_EXPECTED;
    uint64_t kb = k0, nz = 0, per = bulk ? ZBUF / nstep : 1;
    size_t cur = (size_t)(k0 % L);
    for (uint64_t k = k0; k < k1; k++) {
        size_t prev = cur == 0 ? L - 1 : cur - 1, next = cur + 1 == L ? 0 : cur + 1;
        const double *v = w->ring + cur * d, *vp = w->ring + prev * d;
        double *vn = w->ring + next * d;
        am_ps_update u;
        am_ps_next(w->ps, &u);
        double coef = update_step(m, w, &u, cur, k) / (double)u.ngrad;
        for (size_t i = 0; i < d; i++)
            w->acc[i] = 0;
        const double *zk = NULL;
        if (bulk) {
            if (k >= kb + nz) {
                kb = k;
                nz = k1 - k < per ? k1 - k : per;
                am_rng_fill_gaussian_steps(&w->data, kb, (size_t)nz, nstep, w->z);
            }
            zk = w->z + (size_t)(k - kb) * nstep;
        } else if (!expected) {
            am_rng_seek(&w->data, k);
        }
        for (size_t l = 0; l < u.ngrad; l++)
            add_term(m, w, stale_iterate(m, w, cur, k, u.staleness[l]), coef,
                     zk ? zk + l * d : NULL);
        for (size_t i = 0; i < d; i++)
            vn[i] = AM_MSGD_HEAVY_BALL(v[i], vp[i], mu, w->acc[i]);
        w->t = u.time;
        cur = next;
    }
    w->k = k1;
    const double *v = w->ring + cur * d;
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    return !(nn <= m->par.msgd.blowup * m->par.msgd.blowup);
}

enum { NL = AM_MSGD_LANES, MAXD = AM_MSGD_BATCH_MAXDIM };
_Static_assert(AM_MSGD_LANES == AM_RNG_LANES, "one lane per stream of the lane draws");

typedef double vd __attribute__((vector_size(NL * sizeof(double))));
typedef uint64_t vq __attribute__((vector_size(NL * sizeof(uint64_t))));

/* Lane data drawn per step: normals (Gaussian), words (Rademacher: one per gradient, uniform:
 * d per gradient), or none (`expected`; Student lane by lane through am_data_draw). */
typedef enum { LANE_GAUSS, LANE_WORDS, LANE_OWN, LANE_NONE } lane_data;

static lane_data lane_kind(const am_msgd_ps *m, size_t *per_step)
{
    size_t d = m->p->dim, b = m->batch;
    switch (m->p->dist.kind) {
    case AM_DIST_GAUSSIAN:
        *per_step = b * d;
        return LANE_GAUSS;
    case AM_DIST_RADEMACHER:
        *per_step = b;
        return LANE_WORDS;
    case AM_DIST_UNIFORM:
        *per_step = b * d;
        return LANE_WORDS;
    case AM_DIST_EXPECTED:
        *per_step = 0;
        return LANE_NONE;
    default:
        *per_step = 0;
        return LANE_OWN;
    }
}

/* Whether a group of replicas can run side by side from k0 to k1. */
static int lanes_fit(const am_msgd_ps *m, size_t n, uint64_t k0, uint64_t k1)
{
    size_t per;
    lane_data kind = lane_kind(m, &per);
    if (n < 2 || k1 == k0) return 0;
    if (kind == LANE_GAUSS && per > LANE_BUF) return 0;
    if (kind == LANE_WORDS && per + 1 > LANE_BUF) return 0;
    return 1;
}

/* Lane l's stale iterate s updates before v_k (as stale_iterate), from its replica's ring, into
 * wv[.][l]. */
static inline __attribute__((always_inline)) void lane_gather(const am_msgd_ps *m,
                                                              const double *ring, size_t cur,
                                                              uint64_t k, uint64_t s, size_t l,
                                                              vd *wv)
{
    size_t d = m->p->dim, L = m->ring_len;
    if (s > m->cap) s = m->cap;
    if (s > k) s = k;
    size_t slot = cur >= s ? cur - (size_t)s : cur + L - (size_t)s;
    for (size_t i = 0; i < d; i++)
        wv[i][l] = ring[slot * d + i];
}

/* The rings of the lanes (lanes n.. that of replica 0), and v_k (slot cur) and v_{k-1} of every
 * lane in the lane layout, st[0] and st[2]. */
static inline __attribute__((always_inline)) void lanes_load(const am_msgd_ps *m, work_t *const *ws,
                                                             size_t n, size_t cur,
                                                             const double **ring, vd (*st)[MAXD])
{
    const size_t d = m->p->dim, L = m->ring_len;
    for (size_t l = 0; l < NL; l++) {
        ring[l] = ws[l < n ? l : 0]->ring;
        size_t prev = cur == 0 ? L - 1 : cur - 1;
        for (size_t i = 0; i < d; i++) {
            st[0][i][l] = ring[l][cur * d + i];
            st[2][i][l] = ring[l][prev * d + i];
        }
    }
}

/* The end of an advance to k1: each replica's step and time (of its last update, u), and
 * whether it diverged: |v|^2 <= blowup^2 fails (also for a non-finite v, lane layout). */
static inline __attribute__((always_inline)) void lanes_finish(const am_msgd_ps *m,
                                                               work_t *const *ws, size_t n,
                                                               uint64_t k1, const am_ps_update *u,
                                                               const vd *v, int *diverged)
{
    vd nn = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < m->p->dim; i++)
        nn = nn + v[i] * v[i];
    double bb = m->par.msgd.blowup * m->par.msgd.blowup;
    for (size_t l = 0; l < n; l++) {
        ws[l]->t = u[l].time;
        ws[l]->k = k1;
        diverged[l] = !(nn[l] <= bb);
    }
}

/* Where a lane group's gradient data come from: the problem (d coordinates), the lane data,
 * and whether they are expected or Rademacher. */
typedef struct {
    const am_problem *p;
    size_t d;
    lane_data kind;
    int expected, rade;
} lane_source;

/* The data of gradient g of a step in every lane, into x (through y where the eigenbasis is
 * rotated): Sigma w for `expected` (wv: the stale iterates), Gaussian from the step's normals
 * zk, Rademacher or uniform from its words wk, else lane by lane through am_data_draw. */
static inline __attribute__((always_inline)) void lane_data_draw(const lane_source *ls, size_t g,
                                                                 const vd *zk, const vq *wk,
                                                                 am_rng *data, const vd *wv, vd *x,
                                                                 vd *y)
{
    const am_problem *p = ls->p;
    const size_t d = ls->d;
    const vd zero = {0, 0, 0, 0, 0, 0, 0, 0};
    vd *dst = p->q ? y : x;
    if (ls->expected) {
        if (p->q) {
            for (size_t j = 0; j < d; j++) {
                vd s = zero;
                for (size_t i = 0; i < d; i++)
                    s = s + p->q[i * d + j] * wv[i];
                y[j] = p->lambda[j] * s;
            }
        } else {
            for (size_t i = 0; i < d; i++)
                x[i] = p->lambda[i] * wv[i];
        }
    } else if (ls->kind == LANE_GAUSS) {
        for (size_t i = 0; i < d; i++)
            dst[i] = zk[g * d + i] * p->sqrt_lambda[i];
    } else if (ls->kind == LANE_WORDS && ls->rade) {
        for (size_t i = 0; i < d; i++) {
            /* bit i of the gradient's word is the sign of sqrt(lambda_i) */
            uint64_t sl;
            memcpy(&sl, &p->sqrt_lambda[i], sizeof sl);
            vq bits = sl ^ ((wk[g] >> i & 1) << 63);
            memcpy(&dst[i], &bits, sizeof bits);
        }
    } else if (ls->kind == LANE_WORDS) {
        for (size_t i = 0; i < d; i++) {
            vd un = (__builtin_convertvector(wk[g * d + i] >> 11, vd) + 0.5) * 0x1.0p-53;
            dst[i] = sqrt(3.0) * p->sqrt_lambda[i] * (2.0 * un - 1.0);
        }
    } else {
        double tmp[MAXD];
        for (size_t l = 0; l < NL; l++) {
            am_data_draw(p, &data[l], tmp);
            for (size_t i = 0; i < d; i++)
                dst[i][l] = tmp[i];
        }
    }
    if (p->q)
        for (size_t i = 0; i < d; i++) {
            vd s = zero;
            for (size_t j = 0; j < d; j++)
                s = s + p->q[i * d + j] * y[j];
            x[i] = s;
        }
}

/* acc += coef a (x - a w), a = x . w (for `expected`, x = Sigma w: acc += coef (x - a w)), in
 * the one-replica order of operations. */
static inline __attribute__((always_inline)) void
lane_accumulate(size_t d, const vd *x, const vd *wv, const vd *coef, int expected, vd *acc)
{
    vd a = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t i = 0; i < d; i++)
        a = a + x[i] * wv[i];
    if (expected) {
        for (size_t i = 0; i < d; i++)
            acc[i] = acc[i] + *coef * (x[i] - a * wv[i]);
    } else {
        vd ca = *coef * a;
        for (size_t i = 0; i < d; i++)
            acc[i] = acc[i] + ca * (x[i] - a * wv[i]);
    }
}

/* The lane group's advance: ws[0..n-1] (lanes n.. repeat lane 0, results dropped). v_k and
 * v_{k-1} are held as vectors, v_{k+1} is stored into each replica's ring, the stale iterates
 * are read from the rings lane by lane. Inlined into one function per instruction set. */
static inline __attribute__((always_inline)) void lanes_body(const am_msgd_ps *m, work_t *const *ws,
                                                             size_t n, uint64_t k0, uint64_t k1,
                                                             int *diverged, int simd)
{
    const am_problem *p = m->p;
    const size_t d = p->dim, L = m->ring_len, nb = m->batch;
    const int adaptive = m->par.lr_c > 0, expected = p->dist.kind == AM_DIST_EXPECTED;
    const int rade = p->dist.kind == AM_DIST_RADEMACHER;
    const double mu = m->par.msgd.mu, coef_const = m->par.msgd.eta / (double)nb;
    size_t per_step;
    const lane_data kind = lane_kind(m, &per_step);
    const lane_source src = {p, d, kind, expected, rade};
    const size_t nblk = (per_step + 1) / 2; /* blocks of words per step */
    am_rng data[NL];
    am_ps_update u[NL];
    memset(u, 0, sizeof u);
    vd x[MAXD], y[MAXD], wv[MAXD], acc[MAXD];
    union {
        vd z[LANE_BUF]; /* normals */
        vq w[LANE_BUF]; /* words */
        double zs[LANE_BUF * NL];
        uint64_t ws[LANE_BUF * NL];
    } buf;
    const vd vmu = {mu, mu, mu, mu, mu, mu, mu, mu}, zero = {0, 0, 0, 0, 0, 0, 0, 0};
    for (size_t l = 0; l < NL; l++)
        data[l] = ws[l < n ? l : 0]->data;
    uint64_t kb = k0, nz = 0;
    uint64_t per = kind == LANE_GAUSS   ? LANE_BUF / per_step
                   : kind == LANE_WORDS ? LANE_BUF / (2 * nblk)
                                        : 1;
    size_t cur = (size_t)(k0 % L);
    const double *ring[NL];
    vd st[3][MAXD]; /* v_k, v_{k+1}, v_{k-1} in turn */
    size_t c = 0;
    lanes_load(m, ws, n, cur, ring, st);
    memset(y, 0, sizeof y);
    for (uint64_t k = k0; k < k1; k++) {
        size_t next = cur + 1 == L ? 0 : cur + 1;
        const vd *v = st[c], *vp = st[c == 0 ? 2 : c - 1];
        vd *vn = st[c == 2 ? 0 : c + 1];
        vd coef = zero;
        for (size_t l = 0; l < NL; l++) {
            if (l < n)
                am_ps_next(ws[l]->ps, &u[l]);
            else
                u[l] = u[0];
            /* the step of update_step, lane by lane */
            double far = 0;
            for (size_t g = 0; g < nb; g++) {
                uint64_t s = u[l].staleness[g];
                if (s > m->cap && l < n) ws[l]->clamped += 1;
                if (adaptive && s > 0) {
                    lane_gather(m, ring[l], cur, k, s, l, wv);
                    double dd = 0;
                    for (size_t i = 0; i < d; i++)
                        dd += (v[i][l] - wv[i][l]) * (v[i][l] - wv[i][l]);
                    far = fmax(far, dd);
                }
            }
            if (adaptive) {
                double ek = far > 0 ? fmin(m->par.lr_c / far, m->par.lr_max) : m->par.lr_max;
                coef[l] = ek / (double)u[l].ngrad;
            } else {
                coef[l] = coef_const; /* eta / n_k, n_k = B for every update */
            }
        }
        for (size_t i = 0; i < d; i++)
            acc[i] = zero;
        if ((kind == LANE_GAUSS || kind == LANE_WORDS) && k >= kb + nz) {
            kb = k;
            nz = k1 - k < per ? k1 - k : per;
            if (kind == LANE_GAUSS)
                am_rng_gaussian_lanes(data, kb, (size_t)nz, per_step, buf.zs, simd);
            else
                am_rng_words_lanes(data, kb, (size_t)nz, nblk, buf.ws, simd);
        }
        const vd *zk = buf.z + (size_t)(k - kb) * per_step;
        const vq *wk = buf.w + (size_t)(k - kb) * 2 * nblk;
        if (kind == LANE_OWN)
            for (size_t l = 0; l < NL; l++)
                am_rng_seek(&data[l], k);
        for (size_t g = 0; g < nb; g++) {
            for (size_t l = 0; l < NL; l++)
                lane_gather(m, ring[l], cur, k, u[l].staleness[g], l, wv);
            lane_data_draw(&src, g, zk, wk, data, wv, x, y);
            lane_accumulate(d, x, wv, &coef, expected, acc);
        }
        for (size_t i = 0; i < d; i++)
            vn[i] = AM_MSGD_HEAVY_BALL(v[i], vp[i], vmu, acc[i]);
        for (size_t l = 0; l < n; l++) {
            double *dst = ws[l]->ring + next * d;
            for (size_t i = 0; i < d; i++)
                dst[i] = vn[i][l];
        }
        c = c == 2 ? 0 : c + 1;
        cur = next;
    }
    lanes_finish(m, ws, n, k1, u, st[c], diverged);
}

static void lanes_portable(const am_msgd_ps *m, work_t *const *ws, size_t n, uint64_t k0,
                           uint64_t k1, int *diverged)
{
    lanes_body(m, ws, n, k0, k1, diverged, 0);
}

#if AM_X86
__attribute__((target("avx2"))) static void lanes_avx2(const am_msgd_ps *m, work_t *const *ws,
                                                       size_t n, uint64_t k0, uint64_t k1,
                                                       int *diverged)
{
    lanes_body(m, ws, n, k0, k1, diverged, 1);
}

__attribute__((target("avx512f,avx512dq,avx512vl"))) static void
lanes_avx512(const am_msgd_ps *m, work_t *const *ws, size_t n, uint64_t k0, uint64_t k1,
             int *diverged)
{
    lanes_body(m, ws, n, k0, k1, diverged, 2);
}
#endif

/* n <= NL replicas side by side from k0 to k1 on the engine's instruction set. */
static void lanes_advance(const am_msgd_ps *m, work_t *const *ws, size_t n, uint64_t k0,
                          uint64_t k1, int *diverged)
{
#if AM_X86
    if (m->path == AM_MSGD_PATH_AVX512)
        lanes_avx512(m, ws, n, k0, k1, diverged);
    else if (m->path == AM_MSGD_PATH_AVX2)
        lanes_avx2(m, ws, n, k0, k1, diverged);
    else
#endif
        lanes_portable(m, ws, n, k0, k1, diverged);
}

/* Replicas side by side; the same bytes as ps_advance on each. */
static void ps_advance_batch(const void *ctx, void *const *works, size_t n, uint64_t k0,
                             uint64_t k1, int *diverged)
{
    const am_msgd_ps *m = ctx;
    for (size_t j0 = 0; j0 < n; j0 += NL) {
        size_t nl = n - j0 < NL ? n - j0 : NL;
        work_t *ws[NL];
        for (size_t j = 0; j < nl; j++)
            ws[j] = works[j0 + j];
        if (lanes_fit(m, nl, k0, k1))
            lanes_advance(m, ws, nl, k0, k1, diverged + j0);
        else
            for (size_t j = 0; j < nl; j++)
                diverged[j0 + j] = ps_advance(ctx, works[j0 + j], k0, k1);
    }
}

void am_msgd_ps_set_path(am_msgd_ps *m, int path)
{
    int best = (int)am_msgd_batch_best();
    m->path = path < AM_MSGD_PATH_SCALAR || path > best ? (am_msgd_path)best : (am_msgd_path)path;
    int on = m->path != AM_MSGD_PATH_SCALAR && m->p->dim <= AM_MSGD_BATCH_MAXDIM &&
             m->p->dist.kind != AM_DIST_DATA;
    m->model.batch = on ? NL : 0;
    m->model.advance_batch = on ? ps_advance_batch : NULL;
}

int am_msgd_ps_path_get(const am_msgd_ps *m)
{
    return (int)m->path;
}

static void ps_observe(const void *ctx, const void *work, double *obs)
{
    const am_msgd_ps *m = ctx;
    const work_t *w = work;
    const double *v = w->ring + (size_t)(w->k % m->ring_len) * m->p->dim;
    size_t o = am_msgd_observables(m->p, m->u1, v, m->par.msgd.coords, 0, obs);
    obs[o] = w->t;
    obs[o + 1] = w->clamped;
}

/* A failing constructor's reason, into err (may be NULL). */
static am_msgd_ps *alloc_fail(char *err, size_t errlen, const char *why)
{
    if (err && errlen) snprintf(err, errlen, "%s", why);
    return NULL;
}

am_msgd_ps *am_msgd_ps_alloc(const am_problem *p, const am_msgd_ps_params *par, am_status *status,
                             char *err, size_t errlen)
{
    *status = AM_EINVAL;
    if (par->msgd.delay.kind != AM_DELAY_WORKERS)
        return alloc_fail(err, errlen,
                          "the parameter-server engine needs the delay workers:P:DIST");
    if (par->lr_c < 0 || (par->lr_c > 0 && !(par->lr_max > 0 && isfinite(par->lr_max))) ||
        !isfinite(par->lr_c))
        return alloc_fail(err, errlen, "the adaptive step needs lr_c >= 0 and a finite lr_max > 0");
    am_ps_params psp = am_ps_params_default();
    psp.workers = (size_t)par->msgd.delay.param;
    psp.runtime = par->msgd.delay.runtime;
    psp.variant = par->variant;
    psp.k = par->k;
    psp.seed = par->msgd.seed;
    size_t psb = am_ps_bytes(&psp);
    if (!psb)
        return alloc_fail(err, errlen, "the workers, variant or K of the server are out of range");
    am_msgd_params base = par->msgd;
    am_delay_make(AM_DELAY_NONE, 0, &base.delay);
    am_msgd_ps *m = calloc(1, sizeof *m);
    if (!m) {
        *status = AM_ENOMEM;
        return alloc_fail(err, errlen, am_strerror(AM_ENOMEM));
    }
    m->base = am_msgd_alloc(p, &base, status, err, errlen);
    if (!m->base) {
        free(m);
        return NULL;
    }
    size_t d = p->dim;
    m->p = p;
    m->par = *par;
    m->psp = psp;
    int sync = par->variant == AM_VARIANT_SYNC || par->variant == AM_VARIANT_KSYNC ||
               par->variant == AM_VARIANT_KBATCHSYNC;
    m->batch = am_runtime_variant_batch(par->variant, psp.workers, par->k);
    m->cap = sync ? 0 : 40 * psp.workers + 64;
    m->ring_len = m->cap + 2;
    m->ps_bytes = psb + am_ps_buffer_bytes(&psp);
    m->head = r64(sizeof(work_t));
    /* the bound leaves out the buffers of the fast paths (runtimes and normals ahead) */
    double bytes = (double)m->head + (double)r64(psb) + ((double)m->ring_len + 3) * (double)d * 8;
    m->u1 = malloc(d * sizeof *m->u1);
    if (!m->u1 || bytes > (double)AM_MEMORY_LIMIT / 16) {
        *status = AM_ENOMEM; /* no memory, or a history above the memory limit */
        am_msgd_ps_free(m);
        return alloc_fail(err, errlen, am_strerror(AM_ENOMEM));
    }
    am_problem_eigvec(p, 0, m->u1);
    m->model.nobs = (par->msgd.coords ? 2 + d : 2) + 2;
    m->model.work_bytes = (size_t)bytes + 64 + am_ps_buffer_bytes(&psp) + ZBUF * 8;
    m->model.start = ps_start;
    m->model.advance = ps_advance;
    m->model.observe = ps_observe;
    m->model.ctx = m;
    am_msgd_ps_set_path(m, (int)am_msgd_batch_path());
    *status = AM_OK;
    return m;
}

void am_msgd_ps_free(am_msgd_ps *m)
{
    if (!m) return;
    am_msgd_free(m->base);
    free(m->u1);
    free(m);
}

const am_model *am_msgd_ps_model(const am_msgd_ps *m)
{
    return &m->model;
}

size_t am_msgd_ps_obs_time(const am_msgd_ps *m)
{
    return m->model.nobs - 2;
}
