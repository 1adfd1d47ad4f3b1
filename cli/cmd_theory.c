/*
 * cmd_theory.c -- `amsgd theory`: the closed-form predictions of theory/am_theory.h for one
 * parameter set: moments (m4_i, alpha_ij^2, C_d), OU variances and relaxation times near
 * v^1, the stationary error (eta/(2(1-mu))) sum alpha_i1^2/(lambda_1-lambda_i), the phase
 * times T1 and T2, the paper's two delay conditions, and the critical delay of the delayed
 * heavy-ball recursion x_{k+1} = (1+mu) x_k - mu x_{k-1} - eta a x_{k-tau} for each mode.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_theory_study.h"
#include "../theory/am_theory.h"
#include "cli_common.h"
#include "cli_data.h"
#include "commands.h"

static const cli_opt OPT_GAMMA = {"gamma", "G", AM_THEORY_BOUND_GAMMA_STR,
                                  "exponent gamma of the paper's delay conditions, in (0, 1]"};
static const cli_opt OPT_BOUND_C = {"bound-constant", "C", AM_THEORY_BOUND_C_STR,
                                    "constant C > 0 in front of the paper's delay conditions"};
static const cli_opt OPT_DELTA = {
    "delta", "DELTA", "0.1", "phase boundary delta in (0, 1/sqrt(2)): escape when |h_1| >= delta"};
static const cli_opt OPT_NU = {"nu", "NU", "0.05",
                               "failure probability nu in (0, 1) of the escape time T1"};

// clang-format off
static const cli_opt *const theory_opts[] = {
    &OPT_DIM,     &OPT_SPECTRUM, &OPT_DIST, &OPT_ROTATE, &OPT_ETA,    &OPT_MU, &OPT_GAMMA,
    &OPT_BOUND_C, &OPT_DELTA,    &OPT_NU,   &OPT_FORMAT, &OPT_OUTPUT,
    &OPT_DATA, &OPT_PROJECT, NULL};
// clang-format on

/* Largest dimension for which the full alpha_ij^2 matrix is written. */
#define THEORY_MAX_MATRIX AM_THEORY_STUDY_MAX_MATRIX

static void csv_row(FILE *f, const char *q, const char *idx, double v)
{
    fprintf(f, "%s,%s,", q, idx);
    if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", f);
    else
        cli_csv_double(f, v);
    fputc('\n', f);
}

/* CSV index of mode m: the eigen-index i (1-based) of a tangential mode, or "radial". */
static void mode_name(size_t m, size_t dim, char *buf, size_t len)
{
    if (m + 1 == dim)
        snprintf(buf, len, "radial");
    else
        snprintf(buf, len, "%zu", m + 2);
}

/* The problem (--data or the synthetic one) and every flag into tp; exits 2 on bad usage.
 * Returns the problem (tp->problem), for the caller to free. */
static am_problem *theory_parse(const cli_args *a, am_theory_study_params *tp)
{
    am_problem *p = cli_data_problem(a);
    if (!p) p = cli_problem(a);
    *tp = am_theory_study_params_default();
    tp->problem = p;
    tp->eta = cli_double(a, "eta", 0, 1e6, 1, 0);
    tp->mu = cli_double(a, "mu", 0, 1, 0, 1);
    tp->gamma = cli_double(a, "gamma", 0, 1, 1, 0);
    tp->bound_constant = cli_double(a, "bound-constant", 0, 1e300, 1, 0);
    tp->delta = cli_double(a, "delta", 0, M_SQRT1_2, 1, 1);
    tp->nu = cli_double(a, "nu", 0, 1, 1, 1);
    return p;
}

/* The notes of the JSON output: they explain every null (dist: the data's distribution). */
static json_t *theory_notes(const am_theory_study_result *r, const char *dist)
{
    json_t *notes = json_array();
    if (r->m4_infinite)
        json_array_append_new(notes, json_sprintf("m4_i = E[Y_i^4] is infinite for %s (finite "
                                                  "only for NU > 4): m4 and the diagonal of "
                                                  "alpha2 are null",
                                                  dist));
    if (r->noise_free)
        json_array_append_new(
            notes, json_string("expected data carry no noise: the OU variances and the "
                               "stationary error are 0 and the escape time is infinite "
                               "(null); m4 and alpha2 list the moments of the other "
                               "distributions' convention (lambda_i^2, lambda_i lambda_j), "
                               "not noise variances"));
    if (r->cd_infinite)
        json_array_append_new(
            notes, json_sprintf("C_d is infinite for %s data (unbounded): the paper's "
                                "local delay condition (1-mu)^2/((lambda_1+C_d) "
                                "eta^(1/2-gamma)) cannot be met; tau_bound_local is null",
                                dist));
    else if (r->gamma_above_half)
        json_array_append_new(notes, json_string("the local delay condition needs gamma in (0, "
                                                 "1/2]: tau_bound_local is null"));
    if (r->tau_c_overflow)
        json_array_append_new(notes, json_string("tau_c_linear is null where the critical "
                                                 "delay exceeds 2^53 steps"));
    return notes;
}

static void theory_csv(FILE *f, const am_theory_study_result *r, size_t d)
{
    char idx[64];
    fputs("quantity,index,value\n", f);
    for (size_t i = 0; i < d; i++) {
        snprintf(idx, sizeof idx, "%zu", i + 1);
        csv_row(f, "m4", idx, r->m4[i]);
    }
    if (d <= THEORY_MAX_MATRIX)
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++) {
                snprintf(idx, sizeof idx, "%zu:%zu", i + 1, j + 1);
                csv_row(f, "alpha2", idx, r->alpha2[i * d + j]);
            }
    csv_row(f, "C_d", "", r->cd);
    csv_row(f, "stationary_error", "", r->stationary_error);
    for (size_t i = 1; i < d; i++) {
        snprintf(idx, sizeof idx, "%zu", i + 1);
        csv_row(f, "ou_variance", idx, r->ou_variance[i - 1]);
        csv_row(f, "relaxation_time", idx, r->relaxation_time[i - 1]);
    }
    csv_row(f, "escape_time", "", r->escape_time);
    csv_row(f, "traverse_time", "", r->traverse_time);
    csv_row(f, "escape_iterations", "", r->escape_iterations);
    csv_row(f, "traverse_iterations", "", r->traverse_iterations);
    csv_row(f, "z_nu", "", r->z_nu);
    csv_row(f, "tau_bound_ode", "", r->tau_bound_ode);
    csv_row(f, "tau_bound_local", "", r->tau_bound_local);
    for (size_t m = 0; m < d; m++) {
        mode_name(m, d, idx, sizeof idx);
        csv_row(f, "mode_curvature", idx, r->mode_curvature[m]);
        csv_row(f, "tau_c_linear", idx, r->tau_c_linear[m]);
        csv_row(f, "tau_star_linear", idx, r->tau_star_linear[m]);
        csv_row(f, "tau_c_dde", idx, r->tau_c_dde[m]);
        csv_row(f, "tau_c_asymptotic", idx, r->tau_c_asymptotic[m]);
        csv_row(f, "tau_c_underdamped", idx, r->tau_c_underdamped[m]);
    }
}

/* The JSON root with its params: the problem, the data and every option as resolved. */
static json_t *theory_json_root(const cli_args *a, const am_theory_study_params *tp)
{
    json_t *params = json_object();
    cli_params_problem(params, tp->problem);
    cli_params_data(params, a, tp->problem);
    json_object_set_new(params, "eta", json_real(tp->eta));
    json_object_set_new(params, "mu", json_real(tp->mu));
    json_object_set_new(params, "gamma", json_real(tp->gamma));
    json_object_set_new(params, "bound_constant", json_real(tp->bound_constant));
    json_object_set_new(params, "delta", json_real(tp->delta));
    json_object_set_new(params, "nu", json_real(tp->nu));
    return cli_json_root("theory", params);
}

/* alpha2 under root: the matrix, or null with a note for dim > THEORY_MAX_MATRIX. */
static void theory_json_alpha2(json_t *root, json_t *notes, const am_theory_study_result *r,
                               size_t d, int data)
{
    if (d <= THEORY_MAX_MATRIX) {
        json_t *mat = json_array();
        for (size_t i = 0; i < d; i++) {
            json_t *row = json_array();
            for (size_t j = 0; j < d; j++)
                json_array_append_new(row, cli_json_number(r->alpha2[i * d + j]));
            json_array_append_new(mat, row);
        }
        json_object_set_new(root, "alpha2", mat);
    } else if (data) {
        json_object_set_new(root, "alpha2", json_null());
        json_array_append_new(notes, json_sprintf("alpha2 is omitted for dim > %d: the "
                                                  "data's alpha_ij^2 are empirical moments",
                                                  THEORY_MAX_MATRIX));
    } else {
        json_object_set_new(root, "alpha2", json_null());
        json_array_append_new(notes,
                              json_sprintf("alpha2 is omitted for dim > %d: alpha_ij^2 = "
                                           "lambda_i lambda_j for i != j, m4_i on the diagonal",
                                           THEORY_MAX_MATRIX));
    }
}

/* The per-mode results under root: the mode names, the curvatures and the critical delays. */
static void theory_json_modes(json_t *root, const am_theory_study_result *r, size_t d)
{
    char name[32];
    json_t *modes = json_array(), *tc = json_array();
    for (size_t m = 0; m < d; m++) {
        if (m + 1 == d)
            snprintf(name, sizeof name, "radial");
        else
            snprintf(name, sizeof name, "tangential:%zu", m + 2);
        json_array_append_new(modes, json_string(name));
        json_array_append_new(tc, isfinite(r->tau_c_linear[m])
                                      ? json_integer((json_int_t)r->tau_c_linear[m])
                                      : json_null());
    }
    json_object_set_new(root, "modes", modes);
    json_object_set_new(root, "mode_curvature", cli_json_doubles(r->mode_curvature, d));
    json_object_set_new(root, "tau_c_linear", tc);
    json_object_set_new(root, "tau_star_linear", cli_json_doubles(r->tau_star_linear, d));
    json_object_set_new(root, "tau_c_dde", cli_json_doubles(r->tau_c_dde, d));
    json_object_set_new(root, "tau_c_asymptotic", cli_json_doubles(r->tau_c_asymptotic, d));
    json_object_set_new(root, "tau_c_underdamped", cli_json_doubles(r->tau_c_underdamped, d));
}

static void theory_json(FILE *f, const cli_args *a, const am_theory_study_params *tp,
                        const am_theory_study_result *r, json_t *notes)
{
    const size_t d = tp->problem->dim;
    json_t *root = theory_json_root(a, tp);
    json_object_set_new(root, "m4", cli_json_doubles(r->m4, d));
    theory_json_alpha2(root, notes, r, d, tp->problem->data != NULL);
    json_object_set_new(root, "C_d", cli_json_number(r->cd));
    json_object_set_new(root, "stationary_error", cli_json_number(r->stationary_error));
    json_object_set_new(root, "ou_variance", cli_json_doubles(r->ou_variance, d - 1));
    json_object_set_new(root, "relaxation_time", cli_json_doubles(r->relaxation_time, d - 1));
    json_object_set_new(root, "escape_time", cli_json_number(r->escape_time));
    json_object_set_new(root, "traverse_time", cli_json_number(r->traverse_time));
    json_object_set_new(root, "escape_iterations", cli_json_number(r->escape_iterations));
    json_object_set_new(root, "traverse_iterations", cli_json_number(r->traverse_iterations));
    json_object_set_new(root, "z_nu", cli_json_number(r->z_nu));
    json_object_set_new(root, "tau_bound_ode", cli_json_number(r->tau_bound_ode));
    json_object_set_new(root, "tau_bound_local",
                        r->gamma_above_half ? json_null() : cli_json_number(r->tau_bound_local));
    theory_json_modes(root, r, d);
    json_object_set_new(root, "notes", notes);
    cli_out_json(f, root);
}

int cmd_theory(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "theory",
              "Print the closed-form predictions for one parameter set: moments, OU variances\n"
              "and relaxation times near the optimum, the stationary error, the escape and\n"
              "traverse times, the paper's delay conditions and the critical delay of the\n"
              "linearised delayed heavy-ball recursion for every mode (tangential i >= 2,\n"
              "then radial). --rotate does not change any of these values.",
              theory_opts, argc, argv);
    am_theory_study_params tp;
    am_problem *p = theory_parse(&a, &tp);
    int json = cli_json(&a);
    char dist[64];
    am_problem_dist_format(&p->dist, dist, sizeof dist);
    am_theory_study_result r;
    char err[256];
    if (am_theory_study_run(&tp, &r, err, sizeof err)) cli_runtime_error("theory: %s", err);
    json_t *notes = theory_notes(&r, dist);

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (!json) {
        json_decref(notes);
        theory_csv(f, &r, p->dim);
    } else {
        theory_json(f, &a, &tp, &r, notes);
    }
    cli_out_commit(&out);
    am_theory_study_result_free(&r);
    am_problem_free(p);
    return 0;
}
