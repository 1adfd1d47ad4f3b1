/*
 * am_delay.h -- delay models: the staleness tau_k of the iterate used at step k.
 *
 *   none          tau_k = 0
 *   const:T       tau_k = T
 *   uniform:S     tau_k ~ Uniform{0, ..., S}, i.i.d.
 *   geometric:M   P(tau_k = j) = p (1-p)^j, p = 1/(1+M) (mean M), i.i.d., truncated at
 *                 ceil(40 M) + 1, which it exceeds with probability below exp(-40)
 *   workers:P:DIST staleness produced by P simulated learners with runtime DIST (am_ps.h);
 *                 stateful, so it is not drawn here: the engine am_msgd_ps.h runs it
 * Draws use the AM_STREAM_DELAY stream of (seed, replica, step), so the data stream
 * of a step is the same whatever the delay model (common random numbers).
 */
#ifndef AM_DELAY_H
#define AM_DELAY_H

#include "../core/am_common.h"
#include "../core/am_rng.h"
#include "../theory/am_runtime.h"

typedef enum {
    AM_DELAY_NONE = 0,
    AM_DELAY_CONST,
    AM_DELAY_UNIFORM,
    AM_DELAY_GEOMETRIC,
    AM_DELAY_WORKERS
} am_delay_kind;

typedef struct {
    am_delay_kind kind;
    double param;       /* T, S or M */
    uint64_t max;       /* largest delay the model can return */
    double log1mp;      /* geometric: log(1 - p) */
    am_runtime runtime; /* workers: learner runtime distribution (param = P) */
} am_delay;

/* One row of the delay-model registry. */
typedef struct {
    const char *name;
    const char *syntax; /* e.g. "const:T" */
    const char *help;
    am_delay_kind kind;
} am_delay_entry;

extern const am_delay_entry am_delay_table[];
extern const size_t am_delay_table_len;

/* Parses a delay spec ("none", "const:10", ...). On failure returns AM_EINVAL and writes a
 * one-line reason into err (without the flag name). */
am_status am_delay_parse(const char *spec, am_delay *out, char *err, size_t errlen);

/* Builds a delay model from its kind and parameter (validated as in am_delay_parse). */
am_status am_delay_make(am_delay_kind kind, double param, am_delay *out);

/* Mean delay E[tau_k] of the model (workers: P - 1, the value for async). */
double am_delay_mean(const am_delay *d);

/* Writes the canonical spec of the model ("const:10") into buf. */
void am_delay_format(const am_delay *d, char *buf, size_t len);

/* Draws tau_k for step k from the delay stream rng (already positioned at step k). */
static inline uint64_t am_delay_draw(const am_delay *d, am_rng *rng)
{
    switch (d->kind) {
    case AM_DELAY_NONE:
        return 0;
    case AM_DELAY_CONST:
        return d->max;
    case AM_DELAY_UNIFORM:
        return (uint64_t)(((unsigned __int128)am_rng_u64(rng) * (d->max + 1)) >> 64);
    case AM_DELAY_GEOMETRIC: {
        double j = floor(log(am_rng_uniform(rng)) / d->log1mp);
        return j >= (double)d->max ? d->max : (uint64_t)j;
    }
    case AM_DELAY_WORKERS:
        return 0; /* stateful: drawn by am_msgd_ps */
    }
    return 0;
}

#endif
