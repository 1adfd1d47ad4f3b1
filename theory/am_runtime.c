/*
 * am_runtime.c -- runtime distributions, order-statistic means and the expected time per
 * iteration and staleness of the parameter-server variants (formulas in am_runtime.h).
 *
 * Quadrature: E[X_{K:P}] = int_0^1 Q(u) b(u) du with b the Beta(K, P-K+1) density
 * b(u) = u^{K-1} (1-u)^{P-K} / B(K, P-K+1), integrated by GSL QAGP with a break point at the
 * mode (K-1)/(P-1), so that the narrow peak of large P is not missed; the integrable end
 * singularity of the Pareto quantile is handled by the extrapolation of QAGS/QAGP.
 */
#include "am_runtime.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_gamma.h>

const am_runtime_entry am_runtime_table[] = {
    {"exp", "exp:RATE", "exponential with rate RATE > 0", AM_RUNTIME_EXP, 1},
    {"shiftexp", "shiftexp:DELTA:RATE", "DELTA >= 0 plus an exponential with rate RATE > 0",
     AM_RUNTIME_SHIFTEXP, 2},
    {"pareto", "pareto:ALPHA:SCALE", "Pareto, P(X > x) = (SCALE/x)^ALPHA for x >= SCALE",
     AM_RUNTIME_PARETO, 2},
    {"uniform", "uniform:A:B", "uniform on [A, B], 0 <= A < B", AM_RUNTIME_UNIFORM, 2},
    {"const", "const:C", "always C > 0", AM_RUNTIME_CONST, 1},
};
const size_t am_runtime_table_len = sizeof am_runtime_table / sizeof am_runtime_table[0];

const am_variant_entry am_runtime_variant_table[] = {
    {"sync", "sync", "the server waits for all P learners", AM_VARIANT_SYNC, 0},
    {"k-sync", "k-sync:K", "waits for the first K learners, cancels the others", AM_VARIANT_KSYNC,
     1},
    {"k-batch-sync", "k-batch-sync:K",
     "waits for K mini-batches from any learners (all on the same w), then cancels",
     AM_VARIANT_KBATCHSYNC, 1},
    {"async", "async", "updates with each gradient as it arrives", AM_VARIANT_ASYNC, 0},
    {"k-async", "k-async:K", "waits for K distinct learners, the others keep running",
     AM_VARIANT_KASYNC, 1},
    {"k-batch-async", "k-batch-async:K",
     "waits for K mini-batches from any learners, which never idle", AM_VARIANT_KBATCHASYNC, 1},
};
const size_t am_runtime_variant_table_len =
    sizeof am_runtime_variant_table / sizeof am_runtime_variant_table[0];

am_status am_runtime_make(am_runtime_kind kind, double a, double b, am_runtime *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->a = a;
    out->b = b;
    if (!isfinite(a) || !isfinite(b)) return AM_EINVAL;
    switch (kind) {
    case AM_RUNTIME_EXP:
        out->b = 0;
        return a > 0 ? AM_OK : AM_EINVAL;
    case AM_RUNTIME_SHIFTEXP:
        return a >= 0 && b > 0 ? AM_OK : AM_EINVAL;
    case AM_RUNTIME_PARETO:
        return a > 0 && b > 0 ? AM_OK : AM_EINVAL;
    case AM_RUNTIME_UNIFORM:
        return a >= 0 && b > a ? AM_OK : AM_EINVAL;
    case AM_RUNTIME_CONST:
        out->b = 0;
        return a > 0 ? AM_OK : AM_EINVAL;
    }
    return AM_EINVAL;
}

static int parse_num(const char *s, size_t len, double *x)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    *x = strtod(buf, &end);
    return *end || errno || !isfinite(*x);
}

am_status am_runtime_parse(const char *spec, am_runtime *out, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < am_runtime_table_len; i++) {
        const am_runtime_entry *e = &am_runtime_table[i];
        if (strlen(e->name) != nlen || strncmp(spec, e->name, nlen) != 0) continue;
        double x[2] = {0, 0};
        int n = 0;
        const char *p = colon;
        while (p && n < 3) {
            const char *next = strchr(p + 1, ':');
            size_t len = next ? (size_t)(next - p - 1) : strlen(p + 1);
            if (n < 2 && parse_num(p + 1, len, &x[n])) n = 99;
            n++;
            p = next;
        }
        if (n != e->nparams) {
            snprintf(err, errlen, "expected %s with finite numbers, got '%s'", e->syntax, spec);
            return AM_EINVAL;
        }
        if (am_runtime_make(e->kind, x[0], x[1], out) != AM_OK) {
            snprintf(err, errlen, "%s is out of its domain (%s), got '%s'", e->syntax, e->help,
                     spec);
            return AM_EINVAL;
        }
        return AM_OK;
    }
    snprintf(err, errlen,
             "unknown runtime distribution '%s' (exp, shiftexp, pareto, uniform, "
             "const)",
             spec);
    return AM_EINVAL;
}

void am_runtime_format(const am_runtime *r, char *buf, size_t len)
{
    switch (r->kind) {
    case AM_RUNTIME_EXP:
        snprintf(buf, len, "exp:%.17g", r->a);
        return;
    case AM_RUNTIME_SHIFTEXP:
        snprintf(buf, len, "shiftexp:%.17g:%.17g", r->a, r->b);
        return;
    case AM_RUNTIME_PARETO:
        snprintf(buf, len, "pareto:%.17g:%.17g", r->a, r->b);
        return;
    case AM_RUNTIME_UNIFORM:
        snprintf(buf, len, "uniform:%.17g:%.17g", r->a, r->b);
        return;
    case AM_RUNTIME_CONST:
        snprintf(buf, len, "const:%.17g", r->a);
        return;
    }
    snprintf(buf, len, "?");
}

double am_runtime_quantile(const am_runtime *r, double u)
{
    switch (r->kind) {
    case AM_RUNTIME_EXP:
        return -log1p(-u) / r->a;
    case AM_RUNTIME_SHIFTEXP:
        return r->a - log1p(-u) / r->b;
    case AM_RUNTIME_PARETO:
        return r->b * pow(1.0 - u, -1.0 / r->a);
    case AM_RUNTIME_UNIFORM:
        return r->a + (r->b - r->a) * u;
    case AM_RUNTIME_CONST:
        return r->a;
    }
    return NAN;
}

am_status am_runtime_mean(const am_runtime *r, double *out)
{
    *out = NAN;
    switch (r->kind) {
    case AM_RUNTIME_EXP:
        *out = 1.0 / r->a;
        return AM_OK;
    case AM_RUNTIME_SHIFTEXP:
        *out = r->a + 1.0 / r->b;
        return AM_OK;
    case AM_RUNTIME_PARETO:
        if (r->a <= 1) {
            *out = INFINITY;
            return AM_EDOM;
        }
        *out = r->a * r->b / (r->a - 1.0);
        return AM_OK;
    case AM_RUNTIME_UNIFORM:
        *out = 0.5 * (r->a + r->b);
        return AM_OK;
    case AM_RUNTIME_CONST:
        *out = r->a;
        return AM_OK;
    }
    return AM_EINVAL;
}

/* H_P - H_{P-K} = sum_{i=P-K+1}^{P} 1/i, summed from the small terms up. */
static double harmonic_diff(size_t k, size_t p)
{
    double s = 0;
    for (size_t i = p; i > p - k; i--)
        s += 1.0 / (double)i;
    return s;
}

typedef struct {
    const am_runtime *r;
    double a, b, lognorm; /* Beta(a, b), log B(a, b) */
} quad_ctx;

static double quad_integrand(double u, void *vctx)
{
    const quad_ctx *c = vctx;
    if (u <= 0 || u >= 1) return 0;
    double logb = (c->a - 1) * log(u) + (c->b - 1) * log1p(-u) - c->lognorm;
    return am_runtime_quantile(c->r, u) * exp(logb);
}

am_status am_runtime_order_stat_quad(const am_runtime *r, size_t k, size_t p, double *out)
{
    *out = NAN;
    if (k < 1 || k > p) return AM_EINVAL;
    /* Pareto: Q(u) b(u) ~ (1-u)^{P-K-1/ALPHA} near 1, integrable iff P-K+1 > 1/ALPHA. */
    if (r->kind == AM_RUNTIME_PARETO && !((double)(p - k + 1) * r->a > 1.0)) {
        *out = INFINITY;
        return AM_EDOM;
    }
    quad_ctx c = {r, (double)k, (double)(p - k + 1), 0};
    c.lognorm = gsl_sf_lnbeta(c.a, c.b);
    gsl_function f = {quad_integrand, &c};
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
    if (!w) return AM_ENOMEM;
    double res = NAN, abserr = NAN;
    int rc;
    double mode = p > 1 ? (double)(k - 1) / (double)(p - 1) : 0.5;
    if (mode > 0 && mode < 1) {
        double pts[3] = {0, mode, 1};
        rc = gsl_integration_qagp(&f, pts, 3, 0, 1e-11, 2000, w, &res, &abserr);
    } else {
        rc = gsl_integration_qags(&f, 0, 1, 0, 1e-11, 2000, w, &res, &abserr);
    }
    gsl_integration_workspace_free(w);
    /* A roundoff report with a tiny estimated error is still a usable answer. */
    if (rc && !(rc == GSL_EROUND && abserr <= 1e-8 * fabs(res))) return AM_ESOLVER;
    *out = res;
    return AM_OK;
}

am_status am_runtime_order_stat(const am_runtime *r, size_t k, size_t p, double *out)
{
    *out = NAN;
    if (k < 1 || k > p) return AM_EINVAL;
    switch (r->kind) {
    case AM_RUNTIME_EXP:
        *out = harmonic_diff(k, p) / r->a;
        return AM_OK;
    case AM_RUNTIME_SHIFTEXP:
        *out = r->a + harmonic_diff(k, p) / r->b;
        return AM_OK;
    case AM_RUNTIME_CONST:
        *out = r->a;
        return AM_OK;
    case AM_RUNTIME_UNIFORM:
    case AM_RUNTIME_PARETO:
        return am_runtime_order_stat_quad(r, k, p, out);
    }
    return AM_EINVAL;
}

am_status am_runtime_variant_parse(const char *name, am_variant *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < am_runtime_variant_table_len; i++)
        if (strcmp(name, am_runtime_variant_table[i].name) == 0) {
            *out = am_runtime_variant_table[i].variant;
            return AM_OK;
        }
    snprintf(err, errlen,
             "unknown variant '%s' (sync, k-sync, k-batch-sync, async, k-async, k-batch-async)",
             name);
    return AM_EINVAL;
}

am_status am_runtime_variant_parse_spec(const char *spec, am_variant *v, size_t *k, char *err,
                                        size_t errlen)
{
    char name[32];
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    if (nlen >= sizeof name) nlen = sizeof name - 1;
    memcpy(name, spec, nlen);
    name[nlen] = 0;
    if (am_runtime_variant_parse(name, v, err, errlen)) return AM_EINVAL;
    int takes = 0;
    for (size_t i = 0; i < am_runtime_variant_table_len; i++)
        if (am_runtime_variant_table[i].variant == *v) takes = am_runtime_variant_table[i].takes_k;
    *k = 1;
    if (!takes) {
        if (colon) {
            snprintf(err, errlen, "'%s' takes no K, got '%s'", name, spec);
            return AM_EINVAL;
        }
        return AM_OK;
    }
    char *end;
    errno = 0;
    long long kk = colon ? strtoll(colon + 1, &end, 10) : 0;
    if (!colon || end == colon + 1 || *end || errno || kk < 1) {
        snprintf(err, errlen, "expected %s:K with an integer K >= 1, got '%s'", name, spec);
        return AM_EINVAL;
    }
    *k = (size_t)kk;
    return AM_OK;
}

const char *am_runtime_variant_name(am_variant v)
{
    for (size_t i = 0; i < am_runtime_variant_table_len; i++)
        if (am_runtime_variant_table[i].variant == v) return am_runtime_variant_table[i].name;
    return "?";
}

size_t am_runtime_variant_batch(am_variant v, size_t p, size_t k)
{
    switch (v) {
    case AM_VARIANT_SYNC:
        return p;
    case AM_VARIANT_ASYNC:
        return 1;
    default:
        return k;
    }
}

am_status am_runtime_variant_check(am_variant v, size_t p, size_t k)
{
    if (p < 1) return AM_EINVAL;
    switch (v) {
    case AM_VARIANT_SYNC:
    case AM_VARIANT_ASYNC:
        return AM_OK;
    case AM_VARIANT_KSYNC:
    case AM_VARIANT_KASYNC:
        return k >= 1 && k <= p ? AM_OK : AM_EINVAL;
    case AM_VARIANT_KBATCHSYNC:
    case AM_VARIANT_KBATCHASYNC:
        return k >= 1 ? AM_OK : AM_EINVAL;
    }
    return AM_EINVAL;
}

am_status am_runtime_time_per_iter(const am_runtime *r, am_variant v, size_t p, size_t k,
                                   double *out)
{
    *out = NAN;
    if (am_runtime_variant_check(v, p, k)) return AM_EINVAL;
    double mean;
    am_status st;
    switch (v) {
    case AM_VARIANT_SYNC:
        return am_runtime_order_stat(r, p, p, out);
    case AM_VARIANT_KSYNC:
        return am_runtime_order_stat(r, k, p, out);
    case AM_VARIANT_KBATCHSYNC:
        if (k == 1) return am_runtime_order_stat(r, 1, p, out); /* = 1-sync */
        if (r->kind == AM_RUNTIME_EXP) {
            *out = (double)k / ((double)p * r->a);
            return AM_OK;
        }
        if (r->kind == AM_RUNTIME_CONST) {
            *out = (double)((k + p - 1) / p) * r->a;
            return AM_OK;
        }
        return AM_EDOM;
    case AM_VARIANT_ASYNC:
        if ((st = am_runtime_mean(r, &mean))) return st;
        *out = mean / (double)p;
        return AM_OK;
    case AM_VARIANT_KASYNC:
        if (k == p) return am_runtime_order_stat(r, p, p, out); /* = sync */
        if (r->kind == AM_RUNTIME_EXP) return am_runtime_order_stat(r, k, p, out);
        if (k == 1) { /* = async */
            if ((st = am_runtime_mean(r, &mean))) return st;
            *out = mean / (double)p;
            return AM_OK;
        }
        return AM_EDOM;
    case AM_VARIANT_KBATCHASYNC:
        if ((st = am_runtime_mean(r, &mean))) return st;
        *out = (double)k * mean / (double)p;
        return AM_OK;
    }
    return AM_EINVAL;
}

/* The variants whose every gradient is fresh (computed at the current iterate). */
static int synchronous(am_variant v)
{
    return v == AM_VARIANT_SYNC || v == AM_VARIANT_KSYNC || v == AM_VARIANT_KBATCHSYNC;
}

am_status am_runtime_p_fresh(const am_runtime *r, am_variant v, size_t p, size_t k, double *out)
{
    *out = NAN;
    if (am_runtime_variant_check(v, p, k)) return AM_EINVAL;
    if (synchronous(v)) {
        *out = 1;
        return AM_OK;
    }
    if (v == AM_VARIANT_KASYNC && k == p) { /* = sync */
        *out = 1;
        return AM_OK;
    }
    if (r->kind != AM_RUNTIME_EXP) return AM_EDOM;
    double kk = v == AM_VARIANT_ASYNC ? 1.0 : (double)k, pp = (double)p;
    if (v == AM_VARIANT_KBATCHASYNC) {
        /* 1 - q^K with q = 1 - 1/P, accurate for large P; P = 1 gives 1 - 0 = 1. */
        double one_minus_qk = p == 1 ? 1.0 : -expm1(kk * log1p(-1.0 / pp));
        *out = 1.0 - (pp - 1.0) * one_minus_qk / kk;
        return AM_OK;
    }
    *out = kk / pp;
    return AM_OK;
}

am_status am_runtime_mean_staleness(const am_runtime *r, am_variant v, size_t p, size_t k,
                                    double *out)
{
    *out = NAN;
    if (am_runtime_variant_check(v, p, k)) return AM_EINVAL;
    if (synchronous(v)) {
        *out = 0;
        return AM_OK;
    }
    (void)r; /* Little's law: the value does not depend on the distribution */
    double kk = v == AM_VARIANT_ASYNC ? 1.0 : (double)k, pp = (double)p;
    *out = v == AM_VARIANT_KBATCHASYNC ? (pp - 1.0) / kk : pp / kk - 1.0;
    return AM_OK;
}
