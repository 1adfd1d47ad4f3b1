/*
 * am_msgd_ps.c -- the engine of am_msgd_ps.h: a ring of the last L = cap + 2 iterates and a
 * parameter-server simulator (am_ps_place) in each replica's workspace.
 */
#include "am_msgd_ps.h"
#include "am_ps_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_data.h"
#include "am_ps.h"

struct am_msgd_ps {
    const am_problem *p;
    am_msgd_ps_params par;
    am_ps_params psp;
    am_msgd *base; /* initial points and error of the plain engine */
    double *u1;
    size_t ring_len, cap, ps_bytes, head;
    am_model model;
};

typedef struct {
    uint64_t k;
    double t;       /* wall-clock time of v_k */
    double clamped; /* gradients whose staleness was clamped */
    am_rng data;
    am_ps *ps;
    double *ring, *x, *y, *acc;
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
    w->ps = am_ps_place(c, &m->psp);
    am_ps_reset(w->ps, replica);
    w->ring = (double *)(c + r64(m->ps_bytes));
    w->x = w->ring + L * d;
    w->y = w->x + d;
    w->acc = w->y + d;
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
 * in the plain engine's order of operations. */
static void add_term(const am_msgd_ps *m, work_t *w, const double *wv, double coef)
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
    if (p->q) {
        am_data_draw(p, &w->data, y);
        for (size_t i = 0; i < d; i++) {
            double s = 0;
            for (size_t j = 0; j < d; j++)
                s += p->q[i * d + j] * y[j];
            x[i] = s;
        }
    } else {
        am_data_draw(p, &w->data, x);
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

static int ps_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const am_msgd_ps *m = ctx;
    work_t *w = work;
    size_t d = m->p->dim, L = m->ring_len;
    double eta = m->par.msgd.eta, mu = m->par.msgd.mu;
    size_t cur = (size_t)(k0 % L);
    for (uint64_t k = k0; k < k1; k++) {
        size_t prev = cur == 0 ? L - 1 : cur - 1, next = cur + 1 == L ? 0 : cur + 1;
        const double *v = w->ring + cur * d, *vp = w->ring + prev * d;
        double *vn = w->ring + next * d;
        am_ps_update u;
        am_ps_next(w->ps, &u);
        am_rng_seek(&w->data, k);
        memset(w->acc, 0, d * sizeof *w->acc);
        /* staleness (clamped) and, for the adaptive step, the farthest stale iterate */
        double far = 0;
        for (size_t l = 0; l < u.ngrad; l++) {
            uint64_t s = u.staleness[l];
            if (s > m->cap) w->clamped += 1;
            if (m->par.lr_c > 0 && s > 0) {
                const double *wv = stale_iterate(m, w, cur, k, s);
                double dd = 0;
                for (size_t i = 0; i < d; i++)
                    dd += (v[i] - wv[i]) * (v[i] - wv[i]);
                far = fmax(far, dd);
            }
        }
        double ek = eta;
        if (m->par.lr_c > 0) ek = far > 0 ? fmin(m->par.lr_c / far, m->par.lr_max) : m->par.lr_max;
        double coef = ek / (double)u.ngrad;
        for (size_t l = 0; l < u.ngrad; l++)
            add_term(m, w, stale_iterate(m, w, cur, k, u.staleness[l]), coef);
        for (size_t i = 0; i < d; i++)
            vn[i] = v[i] + mu * (v[i] - vp[i]) + w->acc[i];
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
    m->cap = sync ? 0 : 40 * psp.workers + 64;
    m->ring_len = m->cap + 2;
    m->ps_bytes = psb;
    m->head = r64(sizeof(work_t));
    double bytes = (double)m->head + (double)r64(psb) + ((double)m->ring_len + 3) * (double)d * 8;
    m->u1 = malloc(d * sizeof *m->u1);
    if (!m->u1 || bytes > (double)AM_MEMORY_LIMIT / 16) {
        *status = AM_ENOMEM; /* no memory, or a history above the memory limit */
        am_msgd_ps_free(m);
        return alloc_fail(err, errlen, am_strerror(AM_ENOMEM));
    }
    am_problem_eigvec(p, 0, m->u1);
    m->model.nobs = (par->msgd.coords ? 2 + d : 2) + 2;
    m->model.work_bytes = (size_t)bytes + 64;
    m->model.start = ps_start;
    m->model.advance = ps_advance;
    m->model.observe = ps_observe;
    m->model.ctx = m;
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
