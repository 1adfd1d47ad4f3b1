/*
 * cmd_converge.c -- `amsgd converge`: weak error of the discrete Async-MSGD ensemble
 * against the ODE limit (and optionally the global SDE) over a ladder of step sizes,
 *   e(eta) = max_g | mean err_eta(t_g) - err_ODE(t_g) |,
 * and the order p of e ~ C eta^p with one interval (WLS, or the finest local slope for a
 * noise-free ladder), decided by the equivalence rule (validate/am_converge.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../studies/am_sweep.h"
#include "../validate/am_converge.h"
#include "cli_common.h"
#include "commands.h"

static const cli_opt OPT_ETAS = {"etas", "LIST", "4e-3,2e-3,1e-3,5e-4",
                                 "ladder of step sizes (comma list, any spacing)"};
static const cli_opt OPT_TIME_CV = {"time", "T", "2", "horizon in continuous time t = k eta"};
static const cli_opt OPT_GRID_CV = {"grid", "N", "41",
                                    "saved times on [0, T] (the gap is the "
                                    "largest over them)"};
static const cli_opt OPT_REPLICAS_CV = {"replicas", "R", "2000", "ensemble size per step size"};
static const cli_opt OPT_SCALING = {"delay-scaling", "SPEC", "none",
                                    "delay per eta: none (use --delay), paper:GAMMA:C "
                                    "(tau = C (1-mu)^2/(lambda_1 eta^(1-GAMMA))), inverse:C "
                                    "(tau = C/eta); with noisy data the gap is then "
                                    "to the undelayed chain"};
static const cli_opt OPT_SDE = {"sde", NULL, NULL,
                                "also the gap to the global SDE (Euler-Maruyama, dt = eta)"};
static const cli_opt OPT_LIMIT = {"limit", "NAME", "ode",
                                  "reference limit: ode, or dde (the delay-differential limit at "
                                  "the lag C of --delay-scaling inverse:C; predicted order 1)"};
static const cli_opt OPT_ORDER = {"order", "ORDER", "auto",
                                  "predicted order (auto: 1, GAMMA for paper, 0 for inverse)"};
static const cli_opt OPT_NOISE_K = {"noise-k", "NSE", "3",
                                    "refuse the fit unless every gap is >= NSE standard errors"};

static const cli_opt *const cv_opts[] = {
    &OPT_DIM,       &OPT_SPECTRUM, &OPT_DIST,     &OPT_ROTATE,  &OPT_ETAS,    &OPT_MU,
    &OPT_DELAY_IID, &OPT_SCALING,  &OPT_INIT,     &OPT_TIME_CV, &OPT_GRID_CV, &OPT_REPLICAS_CV,
    &OPT_SEED,      &OPT_THREADS,  &OPT_BLOWUP,   &OPT_SDE,     &OPT_LIMIT,   &OPT_ORDER,
    &OPT_NOISE_K,   &OPT_FORMAT,   &OPT_PROGRESS, &OPT_OUTPUT,  NULL};

static json_t *json_sizes(const size_t *x, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)x[i]));
    return a;
}

static json_t *json_num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* --etas: at least 2 distinct step sizes in (0, 1e6] into cp (exits 2 on bad usage). */
static void converge_etas(const cli_args *a, am_converge_params *cp)
{
    size_t n_eta;
    double *etas = cli_double_list(a, "etas", &n_eta);
    if (n_eta < 2)
        cli_usage_error("--etas needs at least 2 step sizes, got '%s'", cli_str(a, "etas"));
    for (size_t l = 0; l < n_eta; l++) {
        if (!(etas[l] > 0) || etas[l] > 1e6)
            cli_usage_error("--etas values must be in (0, 1e6], got '%s'", cli_str(a, "etas"));
        for (size_t j = 0; j < l; j++)
            if (etas[j] == etas[l])
                cli_usage_error("--etas values must be distinct, got '%s'", cli_str(a, "etas"));
    }
    cp->etas = etas;
    cp->n_eta = n_eta;
}

/* --mu, --delay, --init, --seed, --blowup as in cli_msgd_params (there is no --eta: the
 * first step size of the ladder). */
static am_msgd_params converge_msgd(const cli_args *a, const am_problem *p, double eta)
{
    char err[256];
    am_msgd_params mp = am_msgd_params_default();
    mp.eta = eta;
    mp.mu = cli_double(a, "mu", 0, 1, 0, 1);
    if (am_delay_parse(cli_str(a, "delay"), &mp.delay, err, sizeof err))
        cli_usage_error("--delay: %s", err);
    cli_refuse_workers_delay(a, &mp);
    if (am_msgd_init_parse(cli_str(a, "init"), p->dim, &mp.init, err, sizeof err))
        cli_usage_error("--init: %s", err);
    mp.seed = cli_u64(a, "seed");
    mp.blowup = cli_double(a, "blowup", 1, 1e300, 1, 0);
    if (mp.init.kind == AM_INIT_RANDOM_EACH)
        cli_usage_error("--init random-each has no single ODE solution: use random, e:J or "
                        "angle:THETA");
    return mp;
}

/* --sde and --limit into cp (exits 2 on bad usage). */
static void converge_refs(const cli_args *a, const am_problem *p, am_converge_params *cp)
{
    if (cli_flag(a, "sde")) {
        if (p->dist.kind == AM_DIST_EXPECTED)
            cli_usage_error("--sde needs random data, got --dist expected");
        if (p->dist.kind == AM_DIST_STUDENT && p->dist.nu <= 4)
            cli_usage_error("--sde needs finite fourth moments, got --dist %s", cli_str(a, "dist"));
        cp->sde = 1;
    }
    const char *limit = cli_str(a, "limit");
    if (strcmp(limit, "dde") == 0) {
        if (cp->scaling.kind != AM_SCALING_INVERSE)
            cli_usage_error("--limit dde needs --delay-scaling inverse:C (a fixed lag C), got %s",
                            cli_str(a, "delay-scaling"));
        cp->dde = 1;
    } else if (strcmp(limit, "ode") != 0) {
        cli_usage_error("--limit must be ode or dde, got '%s'", limit);
    }
}

/* The bound on the steps of each step size and on total work (exits 2 above them). */
static void converge_work_check(const cli_args *a, const am_problem *p,
                                const am_converge_params *cp, int sde)
{
    for (size_t l = 0; l < cp->n_eta; l++)
        if (cp->horizon / cp->etas[l] > 1e12)
            cli_usage_error("--time / eta = %.3g steps is more than 1e12",
                            cp->horizon / cp->etas[l]);
    double steps = 0; /* every step size of the ladder, the SDE's ensemble too */
    for (size_t l = 0; l < cp->n_eta; l++)
        steps += cp->horizon / cp->etas[l];
    char how[160];
    snprintf(how, sizeof how, "%zu replicas x %.3g steps over the ladder%s x d %zu",
             cp->ens.replicas, steps, sde ? " x 2 (--sde)" : "", p->dim);
    cli_work_check(a, (double)cp->ens.replicas * steps * (sde ? 2.0 : 1.0) * (double)p->dim, how);
}

/* Every flag but --format and --output into cp, checked (exits 2 on bad usage). */
static void converge_parse(const cli_args *a, const am_problem *p, am_converge_params *cp)
{
    *cp = am_converge_params_default();
    converge_etas(a, cp);
    char err[256];
    if (am_converge_scaling_parse(cli_str(a, "delay-scaling"), &cp->scaling, err, sizeof err))
        cli_usage_error("--delay-scaling: %s", err);
    if (cp->scaling.kind != AM_SCALING_NONE && cli_given(a, "delay"))
        cli_usage_error("--delay and --delay-scaling %s cannot be combined",
                        cli_str(a, "delay-scaling"));
    cp->msgd = converge_msgd(a, p, cp->etas[0]);
    cp->horizon = cli_double(a, "time", 0, 1e9, 1, 0);
    cp->ngrid = (size_t)cli_int(a, "grid", 2, 100000);
    cp->ens = cli_ensemble_params(a);
    cp->fit.noise_k = cli_double(a, "noise-k", 0, 1e6, 1, 0);
    const char *ord = cli_str(a, "order");
    if (strcmp(ord, "auto") != 0) cp->predicted_order = cli_double(a, "order", -10, 10, 0, 0);
    converge_refs(a, p, cp);
    converge_work_check(a, p, cp, cli_flag(a, "sde"));
    am_status st = am_converge_params_check(p, cp, err, sizeof err);
    if (st == AM_ENOMEM) cli_usage_error("--delay-scaling: %s", err);
    if (st) cli_usage_error("%s", err);
}

static void converge_csv(FILE *f, const am_converge_params *cp, const am_converge_result *r)
{
    fputs("eta,tau,weak_error,weak_error_sem,t_max,weak_error_sde,weak_error_sde_sem,"
          "diverged,fit",
          f);
    int ode_col = cp->dde || r->paired; /* weak_error is not the gap to the ODE */
    fputs(ode_col ? ",weak_error_ode\n" : "\n", f);
    for (size_t l = 0; l < r->n; l++) {
        double row[7] = {r->eta[l],
                         r->tau[l],
                         r->weak_error[l],
                         r->weak_error_sem[l],
                         r->t_max[l],
                         r->weak_error_sde[l],
                         r->weak_error_sde_sem[l]};
        for (size_t j = 0; j < 7; j++) {
            cli_csv_double(f, row[j]);
            fputc(',', f);
        }
        fprintf(f, "%zu,", r->diverged[l]);
        cli_csv_double(f, r->fit_curve[l]);
        if (ode_col) {
            fputc(',', f);
            cli_csv_double(f, r->weak_error_ode[l]);
        }
        fputc('\n', f);
    }
}

/* The JSON params: every option as resolved. */
static json_t *converge_json_params(const am_problem *p, const am_converge_params *cp,
                                    const am_converge_result *r)
{
    json_t *params = json_object();
    char buf[64];
    cli_params_problem(params, p);
    cli_params_msgd(params, &cp->msgd);
    json_object_del(params, "eta");
    json_object_set_new(params, "etas", cli_json_doubles(cp->etas, cp->n_eta));
    am_converge_scaling_format(&cp->scaling, buf, sizeof buf);
    json_object_set_new(params, "delay_scaling", json_string(buf));
    json_object_set_new(params, "time", json_real(cp->horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)cp->ngrid));
    json_object_set_new(params, "replicas", json_integer((json_int_t)cp->ens.replicas));
    json_object_set_new(params, "threads", json_integer(cp->ens.threads));
    json_object_set_new(params, "sde", json_boolean(cp->sde));
    if (cp->dde) json_object_set_new(params, "limit", json_string("dde"));
    json_object_set_new(params, "noise_k", json_real(cp->fit.noise_k));
    json_object_set_new(params, "order", json_num(r->check.predicted));
    return params;
}

/* The measured order and its check under root. */
static void converge_json_order(json_t *root, const am_converge_result *r)
{
    int by_fit = strcmp(r->order_method, "local-slope") != 0;
    json_object_set_new(root, "order", json_num(r->order));
    json_object_set_new(root, "order_se", json_num(r->fitted && by_fit ? r->fit.slope_se : NAN));
    json_object_set_new(root, "order_ci", cli_json_doubles(r->order_ci, 2));
    json_object_set_new(root, "order_method",
                        r->order_method[0] ? json_string(r->order_method) : json_null());
    json_object_set_new(root, "intercept", json_num(r->fitted ? r->fit.intercept : NAN));
    json_object_set_new(root, "predicted_order", json_num(r->check.predicted));
    json_object_set_new(root, "tolerance", json_num(r->check.tolerance));
    json_object_set_new(root, "verdict", json_string(am_check_verdict_name(r->check.verdict)));
    json_object_set_new(root, "verdict_reason", json_string(r->verdict_reason));
    json_object_set_new(root, "chi2_dof", json_num(r->chi2_dof));
    json_object_set_new(root, "fit_p", json_num(r->fit_p));
    json_object_set_new(root, "replicas_needed", json_num(r->check.replicas_needed));
    json_object_set_new(root, "rule", json_string(r->check.rule));
    json_object_set_new(root, "margin", json_num(r->check.margin));
    json_object_set_new(root, "halfwidth", json_num(r->check.halfwidth));
    json_object_set_new(root, "mdd", json_num(r->check.mdd));
    json_object_set_new(root, "note", json_string(r->check.note));
}

static void converge_json(FILE *f, const am_problem *p, const am_converge_params *cp,
                          const am_converge_result *r)
{
    size_t n = r->n;
    json_t *root = cli_json_root("converge", converge_json_params(p, cp, r));
    json_object_set_new(root, "eta", cli_json_doubles(r->eta, n));
    json_object_set_new(root, "tau", cli_json_doubles(r->tau, n));
    json_object_set_new(root, "reference", json_string(r->reference));
    json_object_set_new(root, "weak_error", cli_json_doubles(r->weak_error, n));
    json_object_set_new(root, "weak_error_sem", cli_json_doubles(r->weak_error_sem, n));
    json_object_set_new(root, "t_max", cli_json_doubles(r->t_max, n));
    json_object_set_new(root, "weak_error_sde", cli_json_doubles(r->weak_error_sde, n));
    json_object_set_new(root, "weak_error_sde_sem", cli_json_doubles(r->weak_error_sde_sem, n));
    json_object_set_new(root, "diverged", json_sizes(r->diverged, n));
    converge_json_order(root, r);
    json_object_set_new(root, "t", cli_json_doubles(r->t, r->ngrid));
    json_object_set_new(root, "ode_error", cli_json_doubles(r->ode, r->ngrid));
    if (cp->dde) json_object_set_new(root, "dde_error", cli_json_doubles(r->dde, r->ngrid));
    if (cp->dde || r->paired)
        json_object_set_new(root, "weak_error_ode", cli_json_doubles(r->weak_error_ode, n));
    json_t *mean = json_array(), *sem = json_array();
    for (size_t l = 0; l < n; l++) {
        json_array_append_new(mean, cli_json_doubles(r->mean + l * r->ngrid, r->ngrid));
        json_array_append_new(sem, cli_json_doubles(r->sem + l * r->ngrid, r->ngrid));
    }
    json_object_set_new(root, "err_mean", mean);
    json_object_set_new(root, "err_sem", sem);
    cli_out_json(f, root);
}

int cmd_converge(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "converge",
              "Weak error between the discrete Async-MSGD ensemble and the ODE limit (and the\n"
              "global SDE with --sde) over a ladder of step sizes at a fixed horizon, and the\n"
              "measured order with one interval (WLS; the finest local slope with its Richardson\n"
              "bound for noise-free data), decided by the equivalence rule: PASS if the interval\n"
              "lies inside predicted +- 0.25, FAIL if entirely outside; INCONCLUSIVE when a\n"
              "single power law does not fit. Under --delay-scaling with noisy data the gap is\n"
              "the delay's own effect: to the same chain without its delay, on common random\n"
              "numbers (the noise term cancels). Exit status 1 on FAIL.",
              cv_opts, argc, argv);
    am_problem *p = cli_problem(&a);
    am_converge_params cp;
    converge_parse(&a, p, &cp);
    int json = cli_json(&a);

    am_converge_result *r = NULL;
    cli_progress_start(&a, 1);
    am_status st = am_converge_run(p, &cp, &r);
    cli_progress_end();
    if (st) cli_runtime_error("converge: %s", am_strerror(st));

    cli_out out;
    FILE *f = cli_out_begin(&out, &a);
    if (!json)
        converge_csv(f, &cp, r);
    else
        converge_json(f, p, &cp, r);
    cli_out_commit(&out);
    int status = r->check.verdict == AM_CHECK_FAIL ? 1 : 0;
    if (!json && am_sweep_rank() == 0)
        fprintf(stderr,
                "converge: order %.4g, %s interval [%.4g, %.4g], predicted %.4g +- %.3g: %s "
                "(mdd %.3g)%s%s\n",
                r->order, r->order_method[0] ? r->order_method : "no", r->order_ci[0],
                r->order_ci[1], r->check.predicted, r->check.tolerance,
                am_check_verdict_name(r->check.verdict), r->check.mdd,
                r->check.note[0] ? " -- " : "", r->check.note);
    am_converge_result_free(r);
    free((void *)cp.etas);
    am_problem_free(p);
    return status;
}
