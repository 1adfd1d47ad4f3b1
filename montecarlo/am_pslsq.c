/*
 * am_pslsq.c -- the engine of am_pslsq.h (same layout as am_msgd_ps.c: a ring of the last
 * cap + 2 iterates and a placed parameter-server simulator per replica).
 */
#include "am_pslsq.h"
#include "am_ps_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"

struct am_pslsq {
    am_pslsq_params par;
    double *lam, *sl; /* lambda_i, sqrt(lambda_i) */
    size_t ring_len, cap, ps_bytes, head;
    am_model model;
};

typedef struct {
    uint64_t k;
    double t;
    am_rng data;
    am_ps *ps;
    double *ring, *acc;
    double g2, drift;    /* update k - 1: |grad F(w)|^2 and mean |grad F(w) - grad F(w_tau)|^2 */
    double fresh, ngrad; /* gradients with staleness 0, and all gradients, so far */
} work_t;

static size_t r64(size_t n)
{
    return (n + 63) / 64 * 64;
}

double am_pslsq_lambda(const am_pslsq_params *p, size_t i)
{
    if (p->dim == 1) return p->lmax;
    return p->lmax - (p->lmax - p->lmin) * (double)i / (double)(p->dim - 1);
}

static am_status lsq_start(const void *ctx, uint64_t replica, void *work)
{
    const am_pslsq *e = ctx;
    size_t d = e->par.dim, L = e->ring_len;
    work_t *w = work;
    char *c = (char *)work + e->head;
    w->ps = am_ps_place_buffered(c, &e->par.ps);
    am_ps_reset(w->ps, replica);
    w->ring = (double *)(c + r64(e->ps_bytes));
    w->acc = w->ring + L * d;
    w->k = 0;
    w->t = 0;
    w->g2 = w->drift = w->fresh = w->ngrad = 0;
    am_rng_init(&w->data, e->par.ps.seed, replica, AM_STREAM_DATA, 0);
    for (size_t i = 0; i < L * d; i++)
        w->ring[i] = 1.0;
    return AM_OK;
}

static inline const double *stale(const am_pslsq *e, const work_t *w, size_t cur, uint64_t k,
                                  uint64_t s)
{
    if (s > e->cap) s = e->cap;
    if (s > k) s = k;
    size_t slot = cur >= s ? cur - (size_t)s : cur + e->ring_len - (size_t)s;
    return w->ring + slot * e->par.dim;
}

static int lsq_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const am_pslsq *e = ctx;
    work_t *w = work;
    size_t d = e->par.dim, L = e->ring_len;
    size_t cur = (size_t)(k0 % L);
    for (uint64_t k = k0; k < k1; k++) {
        size_t next = cur + 1 == L ? 0 : cur + 1;
        const double *v = w->ring + cur * d;
        double *vn = w->ring + next * d;
        am_ps_update u;
        am_ps_next(w->ps, &u);
        am_rng_seek(&w->data, k);
        double far = 0;
        if (e->par.lr_c > 0)
            for (size_t l = 0; l < u.ngrad; l++) {
                const double *ws = stale(e, w, cur, k, u.staleness[l]);
                double dd = 0;
                for (size_t i = 0; i < d; i++)
                    dd += (v[i] - ws[i]) * (v[i] - ws[i]);
                far = fmax(far, dd);
            }
        double ek = e->par.eta;
        if (e->par.lr_c > 0) ek = far > 0 ? fmin(e->par.lr_c / far, e->par.lr_max) : e->par.lr_max;
        memset(w->acc, 0, d * sizeof *w->acc);
        double g2 = 0, drift = 0;
        for (size_t i = 0; i < d; i++)
            g2 += e->lam[i] * e->lam[i] * v[i] * v[i];
        for (size_t l = 0; l < u.ngrad; l++) {
            const double *ws = stale(e, w, cur, k, u.staleness[l]);
            w->fresh += u.staleness[l] == 0;
            for (size_t i = 0; i < d; i++) {
                double gd = e->lam[i] * (v[i] - ws[i]);
                drift += gd * gd;
            }
            double *a = vn; /* scratch: vn is written only after the sum */
            double r = 0;
            for (size_t i = 0; i < d; i++) {
                a[i] = e->sl[i] * am_rng_gaussian(&w->data);
                r += a[i] * ws[i];
            }
            r -= e->par.sigma * am_rng_gaussian(&w->data);
            for (size_t i = 0; i < d; i++)
                w->acc[i] += r * a[i];
        }
        double coef = ek / (double)u.ngrad;
        for (size_t i = 0; i < d; i++)
            vn[i] = v[i] - coef * w->acc[i];
        w->t = u.time;
        w->g2 = g2;
        w->drift = drift / (double)u.ngrad;
        w->ngrad += (double)u.ngrad;
        cur = next;
    }
    w->k = k1;
    const double *v = w->ring + cur * d;
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    return !(nn < 1e30);
}

static void lsq_observe(const void *ctx, const void *work, double *obs)
{
    const am_pslsq *e = ctx;
    const work_t *w = work;
    size_t d = e->par.dim;
    const double *v = w->ring + (size_t)(w->k % e->ring_len) * d;
    double f = 0;
    for (size_t i = 0; i < d; i++)
        f += e->lam[i] * v[i] * v[i];
    obs[0] = 0.5 * f;
    obs[1] = w->t;
    obs[2] = w->g2;
    obs[3] = w->drift;
}

/* summary[0]: the replica's mean of F - F* over the last quarter of the saved steps;
 * summary[1]: its fraction of fresh gradients (staleness 0) over the whole run. */
static void lsq_summarize(const void *ctx, const void *work, const double *obs, size_t ngrid,
                          int diverged, double *summary)
{
    (void)ctx;
    const work_t *w = work;
    size_t g0 = am_pslsq_floor_first(ngrid);
    double s = 0;
    for (size_t g = g0; g < ngrid; g++)
        s += obs[g * 4];
    summary[0] = diverged ? NAN : s / (double)(ngrid - g0);
    summary[1] = w->ngrad > 0 ? w->fresh / w->ngrad : NAN;
}

am_status am_pslsq_decay(const uint64_t *k, const double *f, size_t n, double floor, double *rate)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, m = 0;
    for (size_t g = 0; g < n; g++) {
        if (!(f[g] > 10 * floor && f[g] < 0.5 * f[0])) continue;
        double x = (double)k[g], y = log(f[g] - floor);
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        m += 1;
    }
    *rate = NAN;
    double den = m * sxx - sx * sx;
    if (m < 3 || !(den > 0)) return AM_EDOM;
    *rate = exp((m * sxy - sx * sy) / den);
    return AM_OK;
}

am_pslsq *am_pslsq_alloc(const am_pslsq_params *par, am_status *status)
{
    *status = AM_EINVAL;
    if (par->dim < 1 || par->dim > 100000 || !(par->lmax > 0) || !isfinite(par->lmax) ||
        !(par->lmin > 0) || par->lmin > par->lmax || !(par->sigma >= 0) || !isfinite(par->sigma) ||
        !(par->eta > 0) || !isfinite(par->eta) || par->lr_c < 0 || !isfinite(par->lr_c) ||
        (par->lr_c > 0 && !(par->lr_max > 0 && isfinite(par->lr_max))))
        return NULL;
    size_t psb = am_ps_bytes(&par->ps);
    if (!psb) return NULL;
    am_pslsq *e = calloc(1, sizeof *e);
    size_t d = par->dim;
    if (!e || !(e->lam = malloc(d * sizeof *e->lam)) || !(e->sl = malloc(d * sizeof *e->sl))) {
        am_pslsq_free(e);
        *status = AM_ENOMEM;
        return NULL;
    }
    e->par = *par;
    for (size_t i = 0; i < d; i++) {
        e->lam[i] = am_pslsq_lambda(par, i);
        e->sl[i] = sqrt(e->lam[i]);
    }
    am_variant v = par->ps.variant;
    int sync = v == AM_VARIANT_SYNC || v == AM_VARIANT_KSYNC || v == AM_VARIANT_KBATCHSYNC;
    e->cap = sync ? 0 : 40 * par->ps.workers + 64;
    e->ring_len = e->cap + 2;
    e->ps_bytes = psb + am_ps_buffer_bytes(&par->ps); /* runtimes computed ahead */
    e->head = r64(sizeof(work_t));
    /* the bound leaves out the runtime buffer, as in am_msgd_ps.c */
    double bytes = (double)e->head + (double)r64(psb) + ((double)e->ring_len + 1) * (double)d * 8;
    if (bytes > (double)AM_MEMORY_LIMIT / 16) {
        am_pslsq_free(e);
        *status = AM_ENOMEM;
        return NULL;
    }
    e->model.nobs = 4;
    e->model.nsummary = 2;
    e->model.summarize = lsq_summarize;
    e->model.work_bytes = (size_t)bytes + 64 + am_ps_buffer_bytes(&par->ps);
    e->model.start = lsq_start;
    e->model.advance = lsq_advance;
    e->model.observe = lsq_observe;
    e->model.ctx = e;
    *status = AM_OK;
    return e;
}

void am_pslsq_free(am_pslsq *e)
{
    if (!e) return;
    free(e->lam);
    free(e->sl);
    free(e);
}

const am_model *am_pslsq_model(const am_pslsq *e)
{
    return &e->model;
}
