// clang-format off
/*
 * am_problem.h -- the streaming-PCA problem: spectrum, eigenbasis, data distribution.
 *
 * Sigma = Q diag(lambda) Q^T with lambda_1 > lambda_2 >= ... >= lambda_d > 0. Data are
 * X = Q Y where the eigen-coordinates Y_i are independent, zero-mean, Var Y_i = lambda_i,
 * with the shape chosen by the distribution:
 *   gaussian    Y_i = sqrt(lambda_i) Z,             E Y_i^4 = 3 lambda_i^2
 *   rademacher  Y_i = sqrt(lambda_i) (+-1),         E Y_i^4 = lambda_i^2,   |X| <= sqrt(sum lambda)
 *   uniform     Y_i = sqrt(3 lambda_i) U(-1,1),     E Y_i^4 = 9/5 lambda_i^2,
 *                                                   |X| <= sqrt(3 sum lambda)
 *   student:nu  Y_i = sqrt(lambda_i (nu-2)/nu) T_nu, E Y_i^4 = 3 lambda_i^2 (nu-2)/(nu-4), nu > 4
 *   expected    X X^T is replaced by Sigma (noise-free recursion).
 *   data        X is a row of a data set drawn uniformly (am_datamoments.h): lambda and Q are
 *               its covariance's, E Y_i^4 and alpha_ij^2 its empirical moments (the
 *               coordinates are uncorrelated, not independent), |X| <= C_d = max_r |x_r|.
 * Fourth cross moments alpha_ij^2 = E[Y_i^2 Y_j^2] = lambda_i lambda_j for i != j.
 */
// clang-format on
#ifndef AM_PROBLEM_H
#define AM_PROBLEM_H

#include "../core/am_common.h"
#include "am_datamoments.h"

typedef enum {
    AM_DIST_GAUSSIAN = 0,
    AM_DIST_RADEMACHER,
    AM_DIST_UNIFORM,
    AM_DIST_STUDENT,
    AM_DIST_EXPECTED,
    AM_DIST_DATA
} am_dist_kind;

typedef struct {
    am_dist_kind kind;
    double nu; /* degrees of freedom, student only (nu > 2) */
} am_dist;

typedef struct {
    size_t dim;
    double *lambda;       /* eigenvalues, strictly decreasing at the top, all > 0 */
    double *sqrt_lambda;  /* sqrt(lambda_i) */
    double *q;            /* dim x dim row-major orthogonal matrix (columns = eigenvectors),
                             NULL when the eigenbasis is the standard basis */
    uint64_t rotate_seed; /* seed of q, 0 when q == NULL */
    am_dist dist;
    am_datamoments *data; /* AM_DIST_DATA: the data set and its moments (owned), else NULL */
} am_problem;

/* The linear spectrum lambda_i = hi - (hi - lo) (i - 1) / (dim - 1), i = 1..dim (dim >= 2),
 * into lambda[0..dim-1]. */
void am_problem_spectrum_linear(double hi, double lo, size_t dim, double *lambda);

/* Checks a spectrum: dim >= 2, all finite and > 0, non-increasing, lambda_1 > lambda_2. */
am_status am_problem_check_spectrum(size_t dim, const double *lambda);

/* Allocates a problem; rotate_seed != 0 draws a Haar-random orthogonal eigenbasis from
 * that seed (Philox stream, QR of a Gaussian matrix). Returns NULL on bad input (AM_EINVAL)
 * or no memory (AM_ENOMEM) with *status set and a one-line reason in err; status and err may
 * be NULL. */
am_problem *am_problem_alloc(size_t dim, const double *lambda, am_dist dist, uint64_t rotate_seed,
                             am_status *status, char *err, size_t errlen);

/* The problem of a data set's distribution (kind AM_DIST_DATA): dimension, spectrum and
 * eigenbasis of data's covariance; the problem takes data (frees it, also on failure).
 * AM_EINVAL when the covariance has no eigen-gap lambda_1 > lambda_2. */
am_problem *am_problem_alloc_data(am_datamoments *data, am_status *status, char *err,
                                  size_t errlen);

/* Frees a problem; NULL is safe. */
void am_problem_free(am_problem *p);

/* Writes column j (0-based) of Q, the j-th eigenvector, into out[0..dim-1]. */
void am_problem_eigvec(const am_problem *p, size_t j, double *out);

/* The j-th eigen-coordinate of v, (Q^T v)_j = sum_i Q_ij v_i in the order i = 0, 1, ...
 * (v_j when Q is the identity). */
double am_problem_coord(const am_problem *p, const double *v, size_t j);

/* E[Y_i^4] for the problem's distribution (i 0-based); AM_EDOM through *status when infinite. */
double am_problem_m4(const am_problem *p, size_t i, am_status *status);

/* alpha_ij^2 = E[Y_i^2 Y_j^2]: lambda_i lambda_j for i != j, m4_i for i == j. */
double am_problem_alpha2(const am_problem *p, size_t i, size_t j, am_status *status);

/* Almost-sure bound C_d on |X| for bounded distributions (data: max_r |x_r|); INFINITY otherwise
 * (and 0 for expected, which has no data). */
double am_problem_bound(const am_problem *p);

/* Name of a distribution kind ("gaussian", ...). */
const char *am_problem_dist_name(am_dist_kind kind);

/* Parses a distribution spec: gaussian, rademacher, uniform, student:NU (NU > 2), expected.
 * AM_EINVAL with a one-line reason in err on failure. */
am_status am_problem_dist_parse(const char *spec, am_dist *out, char *err, size_t errlen);

/* Writes the canonical spec of a distribution ("student:5") into buf. */
void am_problem_dist_format(const am_dist *dist, char *buf, size_t len);

#endif
