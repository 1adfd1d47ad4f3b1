/*
 * am_optim.h -- first-order optimisers applied to a given (possibly stale) gradient g:
 *
 *   sgd       x <- x - lr g
 *   momentum  v <- mu v + g;                  x <- x - lr v            (heavy ball)
 *   nesterov  v <- mu v + g;                  x <- x - lr (g + mu v)
 *   adam      t <- t+1; m <- b1 m + (1-b1) g; s <- b2 s + (1-b2) g^2;
 *             x <- x - lr (m / (1-b1^t)) / (sqrt(s / (1-b2^t)) + eps)
 *   rmsprop   s <- rho s + (1-rho) g^2;       x <- x - lr g / (sqrt(s) + eps)
 *   adagrad   s <- s + g^2;                   x <- x - lr g / (sqrt(s) + eps)
 *
 * (squares and roots elementwise; state starts at zero). The momentum forms are those of the
 * common deep-learning libraries, so Dai et al.'s comparison across optimisers can be
 * repeated with their usual hyper-parameters.
 */
#ifndef AM_OPTIM_H
#define AM_OPTIM_H

#include <stddef.h>

#include "../core/am_common.h"

typedef enum {
    AM_OPT_SGD = 0,
    AM_OPT_MOMENTUM,
    AM_OPT_NESTEROV,
    AM_OPT_ADAM,
    AM_OPT_RMSPROP,
    AM_OPT_ADAGRAD
} am_optim_kind;

typedef struct {
    am_optim_kind kind;
    double lr;    /* step size > 0 */
    double mu;    /* momentum, nesterov: momentum in [0, 1) */
    double beta1; /* adam: first-moment decay in [0, 1) */
    double beta2; /* adam: second-moment decay in [0, 1) */
    double rho;   /* rmsprop: decay in [0, 1) */
    double eps;   /* adam, rmsprop, adagrad: denominator offset > 0 */
} am_optim_params;

/* One row of the optimiser registry, with the default step size used by `amsgd staleness`. */
typedef struct {
    const char *name;
    const char *help;
    am_optim_kind kind;
    double lr;
} am_optim_entry;

extern const am_optim_entry am_optim_table[];
extern const size_t am_optim_table_len;

/* Parameters of an optimiser with the registry's step size, mu 0.9, beta1 0.9, beta2 0.999,
 * rho 0.9, eps 1e-8. */
am_optim_params am_optim_params_default(am_optim_kind kind);

/* Looks a name up in the registry; AM_EINVAL with a reason in err if unknown. */
am_status am_optim_parse(const char *name, am_optim_kind *out, char *err, size_t errlen);

/* The registry name of an optimiser. */
const char *am_optim_name(am_optim_kind kind);

typedef struct am_optim am_optim;

/* Checks the parameters and builds an optimiser for dimension dim with zero state; NULL with
 * *status set (AM_EINVAL, AM_ENOMEM) on failure. */
am_optim *am_optim_alloc(const am_optim_params *params, size_t dim, am_status *status);

/* Frees an optimiser; NULL is safe. */
void am_optim_free(am_optim *o);

/* Sets the state (velocity, moments, step counter) back to zero. */
void am_optim_reset(am_optim *o);

/* One step: updates x[0..dim-1] in place with the gradient g. */
void am_optim_step(am_optim *o, double *x, const double *g);

/* One step written out of place: x_out = step(x, g), x_out may be x (then am_optim_step);
 * the result is the same bits either way. Lets staleness rings write the new parameters
 * straight into the next snapshot. */
void am_optim_step_to(am_optim *o, const double *x, const double *g, double *x_out);

#endif
