/*
 * am_runtime.h -- runtime distributions of parameter-server learners and the closed forms of
 * the error-runtime trade-off of Dutta et al. (AISTATS 2018), theory.md section 7.
 *
 * A learner computes one mini-batch gradient in an i.i.d. time X with quantile Q(u):
 *   exp:RATE              Q(u) = -log(1-u)/RATE
 *   shiftexp:DELTA:RATE   Q(u) = DELTA - log(1-u)/RATE
 *   pareto:ALPHA:SCALE    Q(u) = SCALE (1-u)^(-1/ALPHA)
 *   uniform:A:B           Q(u) = A + (B-A) u
 *   const:C               Q(u) = C
 * Expected time per iteration (P learners):
 *   sync          E[X_{P:P}]
 *   k-sync:K      E[X_{K:P}] = int_0^1 Q(u) Beta(u; K, P-K+1) du
 *                 (exponential: (H_P - H_{P-K})/RATE, shifted: + DELTA)
 *   k-batch-sync  K = 1: E[X_{1:P}]; exponential: K/(P RATE) (K arrivals of a rate-P RATE
 *                 Poisson process); const: ceil(K/P) C
 *   async         E[X]/P              (renewal reward, any distribution)
 *   k-async:K     exponential: E[X_{K:P}] (memorylessness); K = 1: async; K = P: sync;
 *                 otherwise no closed form
 *   k-batch-async K E[X]/P            (renewal reward, any distribution)
 * Mean staleness, any distribution (Little's law): the staleness of a gradient counts the
 * updates between its start and its use, so the staleness summed over gradients equals the
 * number of gradients still in flight summed over updates. Right after an update of K-async
 * P-K learners are running, of K-batch-async P-1 (the finisher restarted on the new iterate),
 * hence E[staleness] = (P-K)/K = P/K - 1 and (P-1)/K (async: P-1). Synchronous variants: 0.
 * Probability of a fresh gradient (exponential runtimes): K-async uses a uniform random
 * K-subset of learners at each update, so a learner's gap between uses is geometric with
 * success K/P and P(fresh) = K/P. K-batch-async: each gradient comes from a uniform learner;
 * with q = 1 - 1/P, P(fresh) = 1 - (P-1)(1 - q^K)/K. Synchronous variants and K-async with
 * K = P: 1.
 * No randomness here: the simulator is montecarlo/am_ps.h.
 */
#ifndef AM_RUNTIME_H
#define AM_RUNTIME_H

#include <stddef.h>

#include "../core/am_common.h"

typedef enum {
    AM_RUNTIME_EXP = 0,
    AM_RUNTIME_SHIFTEXP,
    AM_RUNTIME_PARETO,
    AM_RUNTIME_UNIFORM,
    AM_RUNTIME_CONST
} am_runtime_kind;

typedef struct {
    am_runtime_kind kind;
    double a; /* RATE, DELTA, ALPHA, A or C */
    double b; /* -, RATE, SCALE, B or - */
} am_runtime;

/* One row of the runtime-distribution registry. */
typedef struct {
    const char *name;
    const char *syntax;
    const char *help;
    am_runtime_kind kind;
    int nparams;
} am_runtime_entry;

extern const am_runtime_entry am_runtime_table[];
extern const size_t am_runtime_table_len;

/* The parameter-server variants of theory.md section 7. */
typedef enum {
    AM_VARIANT_SYNC = 0,
    AM_VARIANT_KSYNC,
    AM_VARIANT_KBATCHSYNC,
    AM_VARIANT_ASYNC,
    AM_VARIANT_KASYNC,
    AM_VARIANT_KBATCHASYNC
} am_variant;

/* One row of the variant registry. */
typedef struct {
    const char *name;
    const char *syntax;
    const char *help;
    am_variant variant;
    int takes_k; /* 1 if the variant has a parameter K */
} am_variant_entry;

extern const am_variant_entry am_runtime_variant_table[];
extern const size_t am_runtime_variant_table_len;

/* Builds a distribution from its kind and parameters; AM_EINVAL if they are out of domain
 * (RATE > 0, DELTA >= 0, ALPHA > 0, SCALE > 0, 0 <= A < B, C > 0, all finite). */
am_status am_runtime_make(am_runtime_kind kind, double a, double b, am_runtime *out);

/* Parses "exp:1", "shiftexp:0.5:2", ...; on failure AM_EINVAL and a one-line reason in err. */
am_status am_runtime_parse(const char *spec, am_runtime *out, char *err, size_t errlen);

/* Writes the canonical spec ("exp:1") into buf. */
void am_runtime_format(const am_runtime *r, char *buf, size_t len);

/* The quantile Q(u) for u in [0, 1) (a draw is Q(U) with U uniform). */
double am_runtime_quantile(const am_runtime *r, double u);

/* E[X] into *out; AM_EDOM if it is infinite (Pareto with ALPHA <= 1). */
am_status am_runtime_mean(const am_runtime *r, double *out);

/* E[X_{K:P}], the K-th smallest of P draws (1 <= K <= P): exact for exp, shiftexp, const and
 * uniform, GSL quadrature of Q(u) Beta(u; K, P-K+1) for Pareto. AM_EDOM if infinite,
 * AM_ESOLVER if the quadrature fails. */
am_status am_runtime_order_stat(const am_runtime *r, size_t k, size_t p, double *out);

/* The same expectation by GSL quadrature for any distribution (used to check the exact
 * forms and for Pareto). */
am_status am_runtime_order_stat_quad(const am_runtime *r, size_t k, size_t p, double *out);

/* Parses a variant name ("k-sync") into *out; AM_EINVAL with a reason in err otherwise. */
am_status am_runtime_variant_parse(const char *name, am_variant *out, char *err, size_t errlen);

/* Parses "async", "sync", "k-sync:4", ... into the variant and K (1 for sync and async);
 * AM_EINVAL with a reason in err otherwise (K against P is checked by am_runtime_variant_check). */
am_status am_runtime_variant_parse_spec(const char *spec, am_variant *v, size_t *k, char *err,
                                        size_t errlen);

/* The registry name of a variant. */
const char *am_runtime_variant_name(am_variant v);

/* Number of gradients one update of the variant uses (sync: P, async: 1, otherwise K). */
size_t am_runtime_variant_batch(am_variant v, size_t p, size_t k);

/* Checks P >= 1 and K (1 <= K <= P for k-sync and k-async, K >= 1 for the batch variants;
 * ignored for sync and async). */
am_status am_runtime_variant_check(am_variant v, size_t p, size_t k);

/* Expected time per iteration of the variant (table above); AM_EDOM where the toolkit has
 * no closed form or the value is infinite. */
am_status am_runtime_time_per_iter(const am_runtime *r, am_variant v, size_t p, size_t k,
                                   double *out);

/* Stationary probability that a gradient is fresh (staleness 0); AM_EDOM where no closed form
 * is known (asynchronous variants under non-exponential runtimes). */
am_status am_runtime_p_fresh(const am_runtime *r, am_variant v, size_t p, size_t k, double *out);

/* Stationary mean staleness of a gradient (any distribution). */
am_status am_runtime_mean_staleness(const am_runtime *r, am_variant v, size_t p, size_t k,
                                    double *out);

#endif
