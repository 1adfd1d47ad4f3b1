/*
 * am_optim.c -- the optimiser steps of am_optim.h (formulas there).
 */
#include "am_optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const am_optim_entry am_optim_table[] = {
    {"sgd", "plain stochastic gradient", AM_OPT_SGD, 0.2},
    {"momentum", "heavy ball, v = mu v + g, x -= lr v", AM_OPT_MOMENTUM, 0.02},
    {"nesterov", "Nesterov, x -= lr (g + mu v)", AM_OPT_NESTEROV, 0.02},
    {"adam", "Adam with bias correction", AM_OPT_ADAM, 0.05},
    {"rmsprop", "RMSProp", AM_OPT_RMSPROP, 0.02},
    {"adagrad", "Adagrad", AM_OPT_ADAGRAD, 0.5},
};
const size_t am_optim_table_len = sizeof am_optim_table / sizeof am_optim_table[0];

struct am_optim {
    am_optim_params p;
    size_t dim;
    double t;        /* adam: steps taken */
    double b1t, b2t; /* adam: beta1^t, beta2^t */
    double *m;       /* velocity or first moment */
    double *s;       /* second moment or sum of squares */
};

am_optim_params am_optim_params_default(am_optim_kind kind)
{
    am_optim_params p = {kind, 0.01, 0.9, 0.9, 0.999, 0.9, 1e-8};
    for (size_t i = 0; i < am_optim_table_len; i++)
        if (am_optim_table[i].kind == kind) p.lr = am_optim_table[i].lr;
    return p;
}

am_status am_optim_parse(const char *name, am_optim_kind *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < am_optim_table_len; i++)
        if (strcmp(name, am_optim_table[i].name) == 0) {
            *out = am_optim_table[i].kind;
            return AM_OK;
        }
    snprintf(err, errlen,
             "unknown optimiser '%s' (sgd, momentum, nesterov, adam, rmsprop, adagrad)", name);
    return AM_EINVAL;
}

const char *am_optim_name(am_optim_kind kind)
{
    for (size_t i = 0; i < am_optim_table_len; i++)
        if (am_optim_table[i].kind == kind) return am_optim_table[i].name;
    return "?";
}

static int in01(double x)
{
    return x >= 0 && x < 1;
}

am_optim *am_optim_alloc(const am_optim_params *params, size_t dim, am_status *status)
{
    const am_optim_params *p = params;
    int ok = dim >= 1 && p->lr > 0 && isfinite(p->lr) && (int)p->kind >= 0 &&
             (size_t)p->kind < am_optim_table_len && in01(p->mu) && in01(p->beta1) &&
             in01(p->beta2) && in01(p->rho) && p->eps > 0 && isfinite(p->eps);
    if (!ok) {
        if (status) *status = AM_EINVAL;
        return NULL;
    }
    am_optim *o = calloc(1, sizeof *o);
    if (o) {
        o->m = calloc(dim, sizeof *o->m);
        o->s = calloc(dim, sizeof *o->s);
    }
    if (!o || !o->m || !o->s) {
        am_optim_free(o);
        if (status) *status = AM_ENOMEM;
        return NULL;
    }
    o->p = *p;
    o->dim = dim;
    am_optim_reset(o);
    if (status) *status = AM_OK;
    return o;
}

void am_optim_free(am_optim *o)
{
    if (!o) return;
    free(o->m);
    free(o->s);
    free(o);
}

void am_optim_reset(am_optim *o)
{
    memset(o->m, 0, o->dim * sizeof *o->m);
    memset(o->s, 0, o->dim * sizeof *o->s);
    o->t = 0;
    o->b1t = 1;
    o->b2t = 1;
}

void am_optim_step(am_optim *o, double *x, const double *g)
{
    am_optim_step_to(o, x, g, x);
}

void am_optim_step_to(am_optim *o, const double *x, const double *g, double *x_out)
{
    const am_optim_params *p = &o->p;
    size_t d = o->dim;
    double *m = o->m, *s = o->s;
    switch (p->kind) {
    case AM_OPT_SGD:
        for (size_t i = 0; i < d; i++)
            x_out[i] = x[i] - p->lr * g[i];
        return;
    case AM_OPT_MOMENTUM:
        for (size_t i = 0; i < d; i++) {
            m[i] = p->mu * m[i] + g[i];
            x_out[i] = x[i] - p->lr * m[i];
        }
        return;
    case AM_OPT_NESTEROV:
        for (size_t i = 0; i < d; i++) {
            m[i] = p->mu * m[i] + g[i];
            x_out[i] = x[i] - p->lr * (g[i] + p->mu * m[i]);
        }
        return;
    case AM_OPT_ADAM: {
        o->t += 1;
        o->b1t *= p->beta1;
        o->b2t *= p->beta2;
        double c1 = 1.0 - o->b1t, c2 = 1.0 - o->b2t;
        for (size_t i = 0; i < d; i++) {
            m[i] = p->beta1 * m[i] + (1.0 - p->beta1) * g[i];
            s[i] = p->beta2 * s[i] + (1.0 - p->beta2) * g[i] * g[i];
            x_out[i] = x[i] - p->lr * (m[i] / c1) / (sqrt(s[i] / c2) + p->eps);
        }
        return;
    }
    case AM_OPT_RMSPROP:
        for (size_t i = 0; i < d; i++) {
            s[i] = p->rho * s[i] + (1.0 - p->rho) * g[i] * g[i];
            x_out[i] = x[i] - p->lr * g[i] / (sqrt(s[i]) + p->eps);
        }
        return;
    case AM_OPT_ADAGRAD:
        for (size_t i = 0; i < d; i++) {
            s[i] += g[i] * g[i];
            x_out[i] = x[i] - p->lr * g[i] / (sqrt(s[i]) + p->eps);
        }
        return;
    }
}
