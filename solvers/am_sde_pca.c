/*
 * am_sde_pca.c -- the streaming-PCA SDE limits of Async-MSGD (theory.md §3) as systems
 * for the Euler–Maruyama engine, simulated in eigen-coordinates h = Q^T V.
 *
 * Global model, c = 1/(1-mu), sigma = sqrt(eta)/(1-mu), q = sum lambda_i h_i^2,
 * s_i = lambda_i h_i, D_i = lambda_i q + k4_i h_i^2 with k4_i = m4_i - 3 lambda_i^2:
 *
 *   drift  b_i = c (lambda_i - q) h_i
 *   noise  sigma sqrt(dt) (I - h h^T) y,   y ~ N(0, M),   M = diag(D) + s s^T.
 *
 * Fast sampler (exact, O(d)): k4_i >= -2 lambda_i^2 (Jensen: m4 >= lambda^2), so D_i < 0
 * needs lambda_i h_i^2 > q/2, which at most one index j can satisfy. With D_i >= 0 for all
 * i, y_i = sqrt(D_i) z_i + s_i zeta. Otherwise every D_i, i != j, is > 0 and
 *   y_i = sqrt(D_i) z_i + s_i zeta                        (i != j)
 *   y_j = sum_{i!=j} c_i z_i + (s_j - t) zeta + g z_j,
 *   A = sum_{i!=j} s_i^2/D_i, t = s_j/(1+A), c_i = t s_i/sqrt(D_i), g^2 = D_j + s_j^2/(1+A),
 * which has covariance M exactly; g^2 is the Schur complement of M, >= 0 since M is a
 * covariance (docs/sde.md). Dense sampler: y = L z with L L^T = M (Cholesky with pivots
 * clipped at 0), O(d^3), kept as the reference.
 *
 * Local OU model near the optimum: U_i (i = 2..d), b_i = -(lambda_1 - lambda_i) c U_i,
 * noise alpha_i1 c sqrt(dt) z_i, alpha_i1^2 = E[Y_i^2 Y_1^2] = lambda_i lambda_1.
 *
 * For d <= AM_SDE_BATCH_MAXDIM every model also advances 8 replicas side by side
 * (am_sde_batch.c, the system's advance_lanes), with the same bytes as these callbacks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "am_sde_pca_impl.h"

am_sde_pca_params am_sde_pca_params_default(void)
{
    am_sde_pca_params p;
    memset(&p, 0, sizeof p);
    p.eta = 5e-4;
    p.mu = 0;
    p.sampler = AM_SDE_SAMPLER_FAST;
    p.coords = 0;
    p.blowup = 1e6;
    return p;
}

/* ---- global model ---- */

static void global_drift(double t, const double *h, double *out, const void *params, void *scratch)
{
    (void)t;
    (void)scratch;
    const am_sde_pca *m = params;
    const double *l = m->p->lambda;
    size_t d = m->d;
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += l[i] * h[i] * h[i];
    for (size_t i = 0; i < d; i++)
        out[i] = m->c * (l[i] - q) * h[i];
}

/* out = scale (y - h (h.y)) */
static void project(size_t d, const double *h, const double *y, double scale, double *out)
{
    double hy = 0;
    for (size_t i = 0; i < d; i++)
        hy += h[i] * y[i];
    for (size_t i = 0; i < d; i++)
        out[i] = scale * (y[i] - h[i] * hy);
}

static void global_noise_fast(double t, const double *h, double sqrt_dt, am_rng *rng, double *out,
                              const void *params, void *scratch)
{
    (void)t;
    const am_sde_pca *m = params;
    const double *l = m->p->lambda, *k4 = m->k4;
    size_t d = m->d;
    double *y = scratch, *zn = y + d; /* zn: the step's d + 1 normals, zeta first */
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += l[i] * h[i] * h[i];
    am_rng_fill_gaussian(rng, zn, d + 1);
    double zeta = zn[0];
    size_t j = d; /* index of the negative diagonal entry, d if none */
    if (m->has_neg) {
        double dmin = 0;
        for (size_t i = 0; i < d; i++) {
            double di = l[i] * q + k4[i] * h[i] * h[i];
            if (di < dmin) {
                dmin = di;
                j = i;
            }
        }
    }
    if (j == d) {
        if (m->has_neg) {
            for (size_t i = 0; i < d; i++) {
                double di = l[i] * q + k4[i] * h[i] * h[i];
                y[i] = sqrt(di > 0 ? di : 0) * zn[1 + i] + l[i] * h[i] * zeta;
            }
        } else if (m->gauss) {
            /* D_i = lambda_i q: y = sqrt(q) Lambda^(1/2) z + s zeta, fused with h.y */
            const double *sl = m->p->sqrt_lambda;
            double sq = sqrt(q), hy = 0;
            for (size_t i = 0; i < d; i++) {
                y[i] = sq * sl[i] * zn[1 + i] + l[i] * h[i] * zeta;
                hy += h[i] * y[i];
            }
            double sc = m->sig * sqrt_dt;
            for (size_t i = 0; i < d; i++)
                out[i] = sc * (y[i] - h[i] * hy);
            return;
        } else {
            for (size_t i = 0; i < d; i++) {
                double di = l[i] * q + k4[i] * h[i] * h[i];
                y[i] = sqrt(di) * zn[1 + i] + l[i] * h[i] * zeta;
            }
        }
        project(d, h, y, m->sig * sqrt_dt, out);
        return;
    }
    /* one negative entry D_j: condition y_j on the others (Schur complement) */
    double sj = l[j] * h[j], dj = l[j] * q + k4[j] * h[j] * h[j];
    double A = 0;
    for (size_t i = 0; i < d; i++) {
        if (i == j) continue;
        double di = l[i] * q + k4[i] * h[i] * h[i], si = l[i] * h[i];
        if (di > 0) A += si * si / di;
    }
    double tt = sj / (1.0 + A), g2 = dj + sj * sj / (1.0 + A);
    double yj = (sj - tt) * zeta, zj = 0;
    for (size_t i = 0; i < d; i++) {
        double zi = zn[1 + i];
        if (i == j) {
            zj = zi;
            continue;
        }
        double di = l[i] * q + k4[i] * h[i] * h[i], si = l[i] * h[i];
        double sd = sqrt(di > 0 ? di : 0);
        y[i] = sd * zi + si * zeta;
        if (sd > 0) yj += tt * si / sd * zi;
    }
    y[j] = yj + sqrt(g2 > 0 ? g2 : 0) * zj;
    project(d, h, y, m->sig * sqrt_dt, out);
}

static void global_noise_dense(double t, const double *h, double sqrt_dt, am_rng *rng, double *out,
                               const void *params, void *scratch)
{
    (void)t;
    const am_sde_pca *m = params;
    const double *l = m->p->lambda, *k4 = m->k4;
    size_t d = m->d;
    double *L = scratch, *y = L + d * d;
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += l[i] * h[i] * h[i];
    /* lower triangle of M, then in-place Cholesky (row-major), pivots clipped at 0 */
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k <= i; k++)
            L[i * d + k] =
                l[i] * h[i] * l[k] * h[k] + (i == k ? l[i] * q + k4[i] * h[i] * h[i] : 0);
    for (size_t k = 0; k < d; k++) {
        double piv = L[k * d + k];
        for (size_t r = 0; r < k; r++)
            piv -= L[k * d + r] * L[k * d + r];
        double lkk = piv > 0 ? sqrt(piv) : 0;
        L[k * d + k] = lkk;
        for (size_t i = k + 1; i < d; i++) {
            double s = L[i * d + k];
            for (size_t r = 0; r < k; r++)
                s -= L[i * d + r] * L[k * d + r];
            L[i * d + k] = lkk > 0 ? s / lkk : 0;
        }
    }
    am_rng_fill_gaussian(rng, out, d);
    for (size_t i = 0; i < d; i++) {
        double s = 0;
        for (size_t k = 0; k <= i; k++)
            s += L[i * d + k] * out[k];
        y[i] = s;
    }
    project(d, h, y, m->sig * sqrt_dt, out);
}

static void zero_noise(double t, const double *x, double sqrt_dt, am_rng *rng, double *out,
                       const void *params, void *scratch)
{
    (void)t;
    (void)x;
    (void)sqrt_dt;
    (void)rng;
    (void)scratch;
    const am_sde_pca *m = params;
    memset(out, 0, m->sys.dim * sizeof *out);
}

/* h = Q^T v of the replica's initial point */
static am_status initial_h(const am_sde_pca *m, uint64_t replica, double *h)
{
    size_t d = m->d;
    const double *q = m->p->q;
    if (!q) {
        m->par.initial(replica, h, m->par.initial_ctx);
        return AM_OK;
    }
    double *v = malloc(d * sizeof *v);
    if (!v) return AM_ENOMEM;
    m->par.initial(replica, v, m->par.initial_ctx);
    for (size_t j = 0; j < d; j++) {
        double s = 0;
        for (size_t i = 0; i < d; i++)
            s += q[i * d + j] * v[i];
        h[j] = s;
    }
    free(v);
    return AM_OK;
}

static am_status global_initial(uint64_t replica, double *x0, const void *params)
{
    return initial_h(params, replica, x0);
}

static void global_observe(const double *h, double *obs, const void *params)
{
    const am_sde_pca *m = params;
    size_t d = m->d;
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += h[i] * h[i];
    obs[0] = 1.0 - h[0] * h[0] / nn;
    obs[1] = sqrt(nn);
    if (m->par.coords)
        for (size_t i = 0; i < d; i++)
            obs[2 + i] = h[i] * h[i];
}

/* ---- local OU model ---- */

static void ou_drift(double t, const double *u, double *out, const void *params, void *scratch)
{
    (void)t;
    (void)scratch;
    const am_sde_pca *m = params;
    for (size_t i = 0; i + 1 < m->d; i++)
        out[i] = -m->rate[i] * u[i];
}

static void ou_noise(double t, const double *u, double sqrt_dt, am_rng *rng, double *out,
                     const void *params, void *scratch)
{
    (void)t;
    (void)u;
    (void)scratch;
    const am_sde_pca *m = params;
    am_rng_fill_gaussian(rng, out, m->d - 1);
    for (size_t i = 0; i + 1 < m->d; i++)
        out[i] = m->amp[i] * sqrt_dt * out[i];
}

static am_status ou_initial(uint64_t replica, double *x0, const void *params)
{
    const am_sde_pca *m = params;
    size_t d = m->d;
    double *h = malloc(d * sizeof *h);
    if (!h) return AM_ENOMEM;
    am_status st = initial_h(m, replica, h);
    double s = 1.0 / sqrt(m->par.eta);
    for (size_t i = 1; i < d; i++)
        x0[i - 1] = s * h[i];
    free(h);
    return st;
}

static void ou_observe(const double *u, double *obs, const void *params)
{
    const am_sde_pca *m = params;
    size_t d = m->d;
    double e = 0;
    for (size_t i = 0; i + 1 < d; i++)
        e += u[i] * u[i];
    e *= m->par.eta;
    obs[0] = e;
    obs[1] = 1.0;
    if (!m->par.coords) return;
    obs[2] = 1.0 - e;
    for (size_t i = 0; i + 1 < d; i++)
        obs[3 + i] = m->par.eta * u[i] * u[i];
}

/* ---- construction ---- */

static am_sde_pca *pca_alloc(const am_problem *p, const am_sde_pca_params *par, int ou,
                             am_status *status)
{
    if (!p || !par || !par->initial || !(par->eta > 0) || !isfinite(par->eta) ||
        !(par->mu >= 0 && par->mu < 1) || !(par->blowup > 0) || isnan(par->blowup) ||
        (par->sampler != AM_SDE_SAMPLER_FAST && par->sampler != AM_SDE_SAMPLER_DENSE)) {
        *status = AM_EINVAL;
        return NULL;
    }
    size_t d = p->dim;
    if (!ou && par->sampler == AM_SDE_SAMPLER_DENSE &&
        (double)d * (double)d * sizeof(double) > (double)AM_MEMORY_LIMIT / 64) {
        *status = AM_ENOMEM;
        return NULL;
    }
    am_sde_pca *m = calloc(1, sizeof *m);
    if (!m) goto nomem;
    m->p = p;
    m->par = *par;
    m->d = d;
    m->ou = ou;
    m->c = 1.0 / (1.0 - par->mu);
    m->sig = sqrt(par->eta) / (1.0 - par->mu);
    m->noiseless = p->dist.kind == AM_DIST_EXPECTED;
    m->sys.params = m;
    m->obs.params = m;
    m->obs.nobs = par->coords ? 2 + d : 2;
    if (!ou) {
        m->k4 = malloc(d * sizeof *m->k4);
        if (!m->k4) goto nomem;
        for (size_t i = 0; i < d; i++) {
            am_status st;
            double m4 = am_problem_m4(p, i, &st);
            if (st) {
                am_sde_pca_free(m);
                *status = st;
                return NULL;
            }
            m->k4[i] = m4 - 3.0 * p->lambda[i] * p->lambda[i];
            if (m->k4[i] < 0) m->has_neg = 1;
        }
        m->gauss = 1;
        for (size_t i = 0; i < d; i++)
            if (m->k4[i] != 0) m->gauss = 0;
        m->sys.dim = d;
        m->sys.drift = global_drift;
        if (m->noiseless) {
            m->sys.noise = zero_noise;
        } else if (par->sampler == AM_SDE_SAMPLER_DENSE) {
            m->sys.noise = global_noise_dense;
            m->sys.scratch_bytes = (d * d + d) * sizeof(double);
        } else {
            m->sys.noise = global_noise_fast;
            m->sys.scratch_bytes = (2 * d + 1) * sizeof(double);
        }
        m->obs.initial = global_initial;
        m->obs.observe = global_observe;
        m->state_blowup = par->blowup;
    } else {
        m->rate = malloc((d - 1) * sizeof *m->rate);
        m->amp = malloc((d - 1) * sizeof *m->amp);
        if (!m->rate || !m->amp) goto nomem;
        for (size_t i = 1; i < d; i++) {
            m->rate[i - 1] = m->c * (p->lambda[0] - p->lambda[i]);
            double a2 = m->noiseless ? 0.0 : am_problem_alpha2(p, i, 0, NULL);
            m->amp[i - 1] = m->c * sqrt(a2);
        }
        m->sys.dim = d - 1;
        m->sys.drift = ou_drift;
        m->sys.noise = m->noiseless ? zero_noise : ou_noise;
        m->obs.initial = ou_initial;
        m->obs.observe = ou_observe;
        m->state_blowup = par->blowup / sqrt(par->eta);
    }
    am_sde_pca_set_simd(m, (int)am_sde_batch_path());
    *status = AM_OK;
    return m;
nomem:
    am_sde_pca_free(m);
    *status = AM_ENOMEM;
    return NULL;
}

am_sde_pca *am_sde_pca_global_alloc(const am_problem *p, const am_sde_pca_params *par,
                                    am_status *status)
{
    return pca_alloc(p, par, 0, status);
}

am_sde_pca *am_sde_pca_ou_alloc(const am_problem *p, const am_sde_pca_params *par,
                                am_status *status)
{
    return pca_alloc(p, par, 1, status);
}

void am_sde_pca_free(am_sde_pca *m)
{
    if (!m) return;
    free(m->k4);
    free(m->rate);
    free(m->amp);
    free(m);
}

const am_sde_system *am_sde_pca_system(const am_sde_pca *m)
{
    return &m->sys;
}

const am_sde_observer *am_sde_pca_observer(const am_sde_pca *m)
{
    return &m->obs;
}

double am_sde_pca_state_blowup(const am_sde_pca *m)
{
    return m->state_blowup;
}

void am_sde_pca_set_simd(am_sde_pca *m, int simd)
{
    am_sde_simd best = am_sde_batch_best();
    m->simd = simd < AM_SDE_SIMD_SCALAR || simd > (int)best ? best : (am_sde_simd)simd;
    if (m->d > AM_SDE_BATCH_MAXDIM) m->simd = AM_SDE_SIMD_SCALAR;
    m->sys.advance_lanes = m->simd != AM_SDE_SIMD_SCALAR ? am_sde_batch_advance : NULL;
}

int am_sde_pca_simd(const am_sde_pca *m)
{
    return (int)m->simd;
}

/* ---- the global SDE as a weak-error reference (used by converge and validate) ---- */

static void shared_initial(uint64_t replica, double *v0, const void *ctx)
{
    (void)replica;
    const am_problem *p = ((const void *const *)ctx)[0];
    memcpy(v0, ((const void *const *)ctx)[1], p->dim * sizeof *v0);
}

am_status am_sde_pca_global_error(const am_problem *p, double eta, double mu, uint64_t seed,
                                  double blowup, const double *v0, const double *t, size_t n,
                                  const am_ensemble_params *ep, double *mean, double *sem)
{
    const void *ctx[2] = {p, v0};
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = eta;
    pp.mu = mu;
    pp.blowup = blowup;
    pp.initial = shared_initial;
    pp.initial_ctx = ctx;
    am_status st;
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    if (!m) return st;
    am_sde_params sp = am_sde_params_default();
    sp.dt = eta;
    sp.noise = 1;
    sp.seed = seed;
    sp.blowup = am_sde_pca_state_blowup(m);
    am_sde_model *sm =
        am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, NULL, 0);
    uint64_t *k = malloc(n * sizeof *k);
    am_ensemble_result *er = NULL;
    if (!sm || !k) {
        st = sm ? AM_ENOMEM : st;
        goto done;
    }
    for (size_t g = 0; g < n; g++)
        k[g] = (uint64_t)llround(t[g] / eta);
    st = am_ensemble_run(am_sde_model_get(sm), k, n, ep, &er);
    if (st) goto done;
    for (size_t g = 0; g < n; g++) {
        const am_stats *s = &er->obs[g * er->nobs];
        mean[g] = er->alive[g] ? s->mean : NAN;
        sem[g] = am_stats_sem(s);
    }
done:
    am_ensemble_result_free(er);
    free(k);
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    return st;
}
