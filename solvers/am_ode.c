/*
 * am_ode.c -- CVODE driver for the limit ODE of am_ode.h:
 *
 *   f(V) = c [ s - q V ],   s = Sigma V,   q = V . s,   c = 1/(1-mu).
 *
 * Sigma V costs O(d) in the standard eigenbasis and one dense product when rotated: the
 * dense Sigma = Q diag(lambda) Q^T is built once per handle (O(d^3), blocked) and the
 * product reads its upper triangle only: a quarter of the memory traffic of applying
 * Q^T, diag, Q at every evaluation. BDF uses the analytic Jacobian
 * J = c [ Sigma - q I - 2 V s^T ], as a dense matrix (LU) or through the product
 * J w = c [ Sigma w - q w - 2 V (s . w) ] (matrix-free GMRES). One SUNContext, one CVODE memory,
 * one nonlinear (and linear) solver live as long as the handle; each solve calls
 * CVodeReInit. CVODE messages go to a handler that stores the last one (the library never
 * prints). Every SUNDIALS return is checked; alloc and free share one cleanup path.
 */
#include "am_ode.h"

#include <math.h>
#include <stdarg.h>
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

#if SUNDIALS_VERSION_MAJOR >= 7
#define AM_SUN_COMM SUN_COMM_NULL
#else
#define AM_SUN_COMM NULL
#endif

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
    double *u1;    /* top eigenvector v^1 */
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

static am_status fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return AM_EINVAL;
}

am_status am_ode_params_check(const am_ode_params *par, char *err, size_t errlen)
{
    if (par->method != AM_ODE_ADAMS && par->method != AM_ODE_BDF)
        return fail(err, errlen, "method must be adams or bdf");
    if (!(par->rtol >= 1e-15 && par->rtol < 1))
        return fail(err, errlen, "rtol must be in [1e-15, 1), got %g", par->rtol);
    if (!(par->atol >= 0 && par->atol < 1))
        return fail(err, errlen, "atol must be in [0, 1), got %g", par->atol);
    if (par->max_steps < 1)
        return fail(err, errlen, "max_steps must be >= 1, got %ld", par->max_steps);
    if (par->linsol != AM_ODE_LINSOL_DENSE && par->linsol != AM_ODE_LINSOL_GMRES)
        return fail(err, errlen, "linsol must be dense or gmres");
    if (par->project && par->method != AM_ODE_BDF)
        return fail(err, errlen, "project needs the BDF method (CVODE projects only with BDF)");
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

/* s = Sigma v (dense Sigma when rotated, else diagonal). */
static void sigma_apply(const am_ode *o, const double *v, double *s)
{
    size_t d = o->d;
    if (!o->sigma) {
        for (size_t i = 0; i < d; i++)
            s[i] = o->p->lambda[i] * v[i];
        return;
    }
    /* upper triangle only (Sigma symmetric): half the memory traffic of the full product */
    memset(s, 0, d * sizeof *s);
    for (size_t i = 0; i < d; i++) {
        const double *row = o->sigma + i * d;
        double vi = v[i], acc = row[i] * vi;
#pragma omp simd reduction(+ : acc)
        for (size_t j = i + 1; j < d; j++) {
            acc += row[j] * v[j];
            s[j] += row[j] * vi;
        }
        s[i] += acc;
    }
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
    for (size_t i = 0; i < d; i++)
        f[i] = o->c * (f[i] - q * v[i]);
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

static void handler(int code, const char *module, const char *function, char *msg, void *ud)
{
    (void)code;
    am_ode *o = ud;
    snprintf(o->msg, sizeof o->msg, "%s: %s: %s", module, function, msg);
}

/* sigma = Q diag(lambda) Q^T: entry (i, j) is the dot product of row i of Q diag(lambda)
 * with row j of Q; rows i are taken eight at a time so that each row j is read once per
 * block. Upper triangle computed, lower triangle mirrored. AM_ENOMEM without memory. */
static am_status dense_sigma(const am_problem *p, double *sigma)
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
                const double *br = blk + r * d;
                double acc = 0;
#pragma omp simd reduction(+ : acc)
                for (size_t k = 0; k < d; k++)
                    acc += br[k] * qj[k];
                sigma[(i0 + r) * d + j] = acc;
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
    o->u1 = malloc(d * sizeof *o->u1);
    o->js = malloc(d * sizeof *o->js);
    if (!o->u1 || !o->js) goto done;
    am_problem_eigvec(p, 0, o->u1);
    if (p->q) {
        o->sigma = malloc(d * d * sizeof *o->sigma);
        if (!o->sigma || dense_sigma(p, o->sigma)) goto done;
    }

    st = AM_ESOLVER;
    why = "CVODE could not be set up";
    if (SUNContext_Create(AM_SUN_COMM, &o->ctx)) goto done;
    o->y = N_VNew_Serial((sunindextype)d, o->ctx);
    if (!o->y) goto done;
    if (N_VEnableFusedOps_Serial(o->y, SUNTRUE)) goto done;
    N_VConst(0.0, o->y);
    N_VGetArrayPointer(o->y)[0] = 1.0;
    o->mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, o->ctx);
    if (!o->mem) goto done;
    if (CVodeSetErrHandlerFn(o->mem, handler, o) != CV_SUCCESS) goto done;
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
        double h = 0;
        if (p->q)
            for (size_t i = 0; i < d; i++)
                h += p->q[i * d + j] * v[i];
        else
            h = v[j];
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
