/*
 * am_delay.c -- parsing and moments of the delay models of am_delay.h.
 */
#include "am_delay.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const am_delay_entry am_delay_table[] = {
    {"none", "none", "no delay (synchronous momentum SGD)", AM_DELAY_NONE},
    {"const", "const:T", "every step uses the iterate T steps old (integer T >= 0)",
     AM_DELAY_CONST},
    {"uniform", "uniform:S", "i.i.d. delays uniform on {0..S} (integer S >= 0)", AM_DELAY_UNIFORM},
    {"geometric", "geometric:MEAN", "i.i.d. geometric delays on {0,1,..} with mean MEAN >= 0",
     AM_DELAY_GEOMETRIC},
    {"workers", "workers:P:DIST",
     "staleness of P simulated learners with runtime DIST (exp:RATE, shiftexp:D:RATE, "
     "pareto:A:S, uniform:A:B, const:C)",
     AM_DELAY_WORKERS},
};
const size_t am_delay_table_len = sizeof am_delay_table / sizeof am_delay_table[0];

/* Largest delay accepted: the history ring of each thread holds max+2 iterates. */
#define AM_DELAY_LIMIT 100000000.0

am_status am_delay_make(am_delay_kind kind, double param, am_delay *out)
{
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->param = param;
    switch (kind) {
    case AM_DELAY_NONE:
        out->param = 0;
        return AM_OK;
    case AM_DELAY_CONST:
    case AM_DELAY_UNIFORM:
        if (!(param >= 0) || param > AM_DELAY_LIMIT || param != floor(param)) return AM_EINVAL;
        out->max = (uint64_t)param;
        return AM_OK;
    case AM_DELAY_WORKERS:
        if (!(param >= 1) || param > 1e6 || param != floor(param)) return AM_EINVAL;
        am_runtime_make(AM_RUNTIME_EXP, 1, 0, &out->runtime);
        return AM_OK;
    case AM_DELAY_GEOMETRIC:
        if (!(param >= 0) || 40.0 * param > AM_DELAY_LIMIT) return AM_EINVAL;
        if (param == 0) {
            out->kind = AM_DELAY_NONE;
            out->param = 0;
            return AM_OK;
        }
        out->log1mp = log1p(-1.0 / (1.0 + param));
        out->max = (uint64_t)ceil(40.0 * param) + 1;
        return AM_OK;
    }
    return AM_EINVAL;
}

am_status am_delay_parse(const char *spec, am_delay *out, char *err, size_t errlen)
{
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < am_delay_table_len; i++) {
        const am_delay_entry *e = &am_delay_table[i];
        if (strlen(e->name) != nlen || strncmp(spec, e->name, nlen) != 0) continue;
        if (e->kind == AM_DELAY_NONE) {
            if (colon) {
                snprintf(err, errlen, "'none' takes no parameter, got '%s'", spec);
                return AM_EINVAL;
            }
            return am_delay_make(AM_DELAY_NONE, 0, out);
        }
        if (!colon || !colon[1]) {
            snprintf(err, errlen, "expected %s, got '%s'", e->syntax, spec);
            return AM_EINVAL;
        }
        if (e->kind == AM_DELAY_WORKERS) {
            char *end;
            errno = 0;
            double pw = strtod(colon + 1, &end);
            if (end == colon + 1 || *end != ':' || errno || am_delay_make(e->kind, pw, out)) {
                snprintf(err, errlen, "expected %s with an integer P in [1, 1000000], got '%s'",
                         e->syntax, spec);
                return AM_EINVAL;
            }
            char rerr[200];
            if (am_runtime_parse(end + 1, &out->runtime, rerr, sizeof rerr)) {
                snprintf(err, errlen, "%s: %s", e->syntax, rerr);
                return AM_EINVAL;
            }
            return AM_OK;
        }
        char *end;
        errno = 0;
        double x = strtod(colon + 1, &end);
        if (*end || errno || !isfinite(x)) {
            snprintf(err, errlen, "expected %s with a number, got '%s'", e->syntax, spec);
            return AM_EINVAL;
        }
        if (am_delay_make(e->kind, x, out) != AM_OK) {
            snprintf(err, errlen, "%s needs %s, at most %.0f, got '%s'", e->syntax,
                     e->kind == AM_DELAY_GEOMETRIC ? "a mean >= 0" : "an integer >= 0",
                     e->kind == AM_DELAY_GEOMETRIC ? AM_DELAY_LIMIT / 40 : AM_DELAY_LIMIT, spec);
            return AM_EINVAL;
        }
        return AM_OK;
    }
    snprintf(err, errlen,
             "unknown delay model '%s' (none, const:T, uniform:S, geometric:MEAN, "
             "workers:P:DIST)",
             spec);
    return AM_EINVAL;
}

double am_delay_mean(const am_delay *d)
{
    switch (d->kind) {
    case AM_DELAY_NONE:
        return 0;
    case AM_DELAY_CONST:
        return (double)d->max;
    case AM_DELAY_UNIFORM:
        return 0.5 * (double)d->max;
    case AM_DELAY_GEOMETRIC: {
        /* mean of min(G, max) for geometric G with success probability p */
        double q = exp(d->log1mp);
        return q * (1.0 - pow(q, (double)d->max)) / (1.0 - q);
    }
    case AM_DELAY_WORKERS:
        return d->param - 1.0;
    }
    return 0;
}

void am_delay_format(const am_delay *d, char *buf, size_t len)
{
    switch (d->kind) {
    case AM_DELAY_NONE:
        snprintf(buf, len, "none");
        break;
    case AM_DELAY_CONST:
        snprintf(buf, len, "const:%llu", (unsigned long long)d->max);
        break;
    case AM_DELAY_UNIFORM:
        snprintf(buf, len, "uniform:%llu", (unsigned long long)d->max);
        break;
    case AM_DELAY_GEOMETRIC:
        snprintf(buf, len, "geometric:%.17g", d->param);
        break;
    case AM_DELAY_WORKERS: {
        char rt[128];
        am_runtime_format(&d->runtime, rt, sizeof rt);
        snprintf(buf, len, "workers:%.0f:%s", d->param, rt);
        break;
    }
    }
}
