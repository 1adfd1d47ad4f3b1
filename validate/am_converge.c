/*
 * am_converge.c -- the eta ladder of am_converge.h: weak error of the Async-MSGD ensemble
 * against the closed-form ODE limit,
 *   e(eta) = max_g | mean_R err_eta(k_g eta) - err_ODE(k_g eta) |,   k_g = round(t_g / eta),
 * (the ODE is evaluated at the exact time k_g eta of the saved step, so rounding the grid to
 * steps adds no O(eta) artefact), optionally against an SDE ensemble, and the fitted order.
 */
#include "am_converge.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_grid.h"
#include "../solvers/am_dde.h"
#include "../solvers/am_sde.h"
#include "../theory/am_theory.h"

am_status am_converge_scaling_parse(const char *spec, am_scaling *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char *end;
    if (strcmp(spec, "none") == 0) return AM_OK;
    if (strncmp(spec, "paper:", 6) == 0) {
        double g = strtod(spec + 6, &end);
        if (end == spec + 6 || *end != ':' || !(g > 0 && g <= 1)) {
            snprintf(err, errlen, "paper:GAMMA:C needs GAMMA in (0, 1], got '%s'", spec);
            return AM_EINVAL;
        }
        const char *cs = end + 1;
        double c = strtod(cs, &end);
        if (end == cs || *end || !(c > 0) || !isfinite(c)) {
            snprintf(err, errlen, "paper:GAMMA:C needs a finite C > 0, got '%s'", spec);
            return AM_EINVAL;
        }
        out->kind = AM_SCALING_PAPER;
        out->gamma = g;
        out->c = c;
        return AM_OK;
    }
    if (strncmp(spec, "inverse:", 8) == 0) {
        double c = strtod(spec + 8, &end);
        if (end == spec + 8 || *end || !(c > 0) || !isfinite(c)) {
            snprintf(err, errlen, "inverse:C needs a finite C > 0, got '%s'", spec);
            return AM_EINVAL;
        }
        out->kind = AM_SCALING_INVERSE;
        out->c = c;
        return AM_OK;
    }
    snprintf(err, errlen, "unknown delay scaling '%s' (none, paper:GAMMA:C, inverse:C)", spec);
    return AM_EINVAL;
}

void am_converge_scaling_format(const am_scaling *s, char *buf, size_t len)
{
    switch (s->kind) {
    case AM_SCALING_NONE:
        snprintf(buf, len, "none");
        break;
    case AM_SCALING_PAPER:
        snprintf(buf, len, "paper:%.17g:%.17g", s->gamma, s->c);
        break;
    case AM_SCALING_INVERSE:
        snprintf(buf, len, "inverse:%.17g", s->c);
        break;
    }
}

double am_converge_scaling_tau(const am_scaling *s, double lambda1, double mu, double eta)
{
    switch (s->kind) {
    case AM_SCALING_PAPER:
        return am_theory_tau_bound_ode(lambda1, eta, mu, s->gamma, s->c);
    case AM_SCALING_INVERSE:
        return s->c / eta;
    default:
        return NAN;
    }
}

double am_converge_scaling_order(const am_scaling *s)
{
    switch (s->kind) {
    case AM_SCALING_PAPER:
        return s->gamma;
    case AM_SCALING_INVERSE:
        return 0.0;
    default:
        return 1.0;
    }
}

am_converge_params am_converge_params_default(void)
{
    am_converge_params p;
    memset(&p, 0, sizeof p);
    p.horizon = 2.0;
    p.ngrid = 41;
    p.msgd = am_msgd_params_default();
    p.ens = am_ensemble_params_default();
    p.ens.replicas = 2000;
    p.predicted_order = NAN;
    p.fit = am_fit_params_default();
    return p;
}

/* The delay model of step size eta. */
static am_status delay_for(const am_problem *p, const am_converge_params *par, double eta,
                           am_delay *d, double *tau)
{
    if (par->scaling.kind == AM_SCALING_NONE) {
        *d = par->msgd.delay;
        *tau = am_delay_mean(d);
        return AM_OK;
    }
    double t = am_converge_scaling_tau(&par->scaling, p->lambda[0], par->msgd.mu, eta);
    if (!(t >= 0) || t > 1e8) return AM_EINVAL;
    double r = floor(t + 0.5);
    *tau = r;
    return r == 0 ? am_delay_make(AM_DELAY_NONE, 0, d) : am_delay_make(AM_DELAY_CONST, r, d);
}

am_status am_converge_params_check(const am_problem *p, const am_converge_params *par, char *err,
                                   size_t errlen)
{
    if (!par->etas || par->n_eta < 2) {
        snprintf(err, errlen, "the ladder needs at least 2 step sizes");
        return AM_EINVAL;
    }
    for (size_t l = 0; l < par->n_eta; l++) {
        if (!(par->etas[l] > 0) || !isfinite(par->etas[l])) {
            snprintf(err, errlen, "step sizes must be finite and > 0, got %g", par->etas[l]);
            return AM_EINVAL;
        }
        for (size_t j = 0; j < l; j++)
            if (par->etas[j] == par->etas[l]) {
                snprintf(err, errlen, "step sizes must be distinct, %g appears twice",
                         par->etas[l]);
                return AM_EINVAL;
            }
    }
    if (!(par->horizon > 0) || !isfinite(par->horizon)) {
        snprintf(err, errlen, "horizon must be finite and > 0, got %g", par->horizon);
        return AM_EINVAL;
    }
    if (par->ngrid < 2) {
        snprintf(err, errlen, "the grid needs at least 2 saved times, got %zu", par->ngrid);
        return AM_EINVAL;
    }
    if (par->msgd.init.kind == AM_INIT_RANDOM_EACH) {
        snprintf(err, errlen,
                 "init random-each has no single ODE solution: use random, e:J "
                 "or angle:THETA");
        return AM_EINVAL;
    }
    if (par->ens.replicas < 1) {
        snprintf(err, errlen, "replicas must be >= 1");
        return AM_EINVAL;
    }
    if (par->dde && par->scaling.kind != AM_SCALING_INVERSE) {
        snprintf(err, errlen,
                 "the delay-differential reference needs inverse delay scaling (a fixed lag)");
        return AM_EINVAL;
    }
    for (size_t l = 0; l < par->n_eta; l++) {
        am_delay d;
        double tau;
        if (delay_for(p, par, par->etas[l], &d, &tau) != AM_OK) {
            snprintf(err, errlen, "the delay scaling gives an invalid delay at eta = %g",
                     par->etas[l]);
            return AM_EINVAL;
        }
        am_msgd_params mp = par->msgd;
        mp.eta = par->etas[l];
        mp.delay = d;
        am_status st = am_msgd_params_check(p, &mp, err, errlen);
        if (st) return st;
        if (par->horizon / mp.eta > 1e13) {
            snprintf(err, errlen, "horizon / eta = %.3g steps is too many", par->horizon / mp.eta);
            return AM_EINVAL;
        }
    }
    return AM_OK;
}

void am_converge_result_free(am_converge_result *r)
{
    if (!r) return;
    free(r->eta);
    free(r->tau);
    free(r->weak_error);
    free(r->weak_error_sem);
    free(r->t_max);
    free(r->weak_error_sde);
    free(r->weak_error_sde_sem);
    free(r->weak_error_ode);
    free(r->diverged);
    free(r->t);
    free(r->ode);
    free(r->dde);
    free(r->mean);
    free(r->sem);
    free(r->fit_curve);
    free(r);
}

static am_converge_result *result_alloc(size_t n, size_t ngrid)
{
    am_converge_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->n = n;
    r->ngrid = ngrid;
    r->eta = calloc(n, sizeof(double));
    r->tau = calloc(n, sizeof(double));
    r->weak_error = calloc(n, sizeof(double));
    r->weak_error_sem = calloc(n, sizeof(double));
    r->t_max = calloc(n, sizeof(double));
    r->weak_error_sde = calloc(n, sizeof(double));
    r->weak_error_sde_sem = calloc(n, sizeof(double));
    r->weak_error_ode = calloc(n, sizeof(double));
    r->diverged = calloc(n, sizeof(size_t));
    r->t = calloc(ngrid, sizeof(double));
    r->ode = calloc(ngrid, sizeof(double));
    r->dde = calloc(ngrid, sizeof(double));
    r->mean = calloc(n * ngrid, sizeof(double));
    r->sem = calloc(n * ngrid, sizeof(double));
    r->fit_curve = calloc(n, sizeof(double));
    if (!r->eta || !r->tau || !r->weak_error || !r->weak_error_sem || !r->t_max ||
        !r->weak_error_sde || !r->weak_error_sde_sem || !r->weak_error_ode || !r->diverged ||
        !r->t || !r->ode || !r->dde || !r->mean || !r->sem || !r->fit_curve) {
        am_converge_result_free(r);
        return NULL;
    }
    return r;
}

/* h0 = Q^T v0. */
static void to_eigen(const am_problem *p, const double *v0, double *h0, double *col)
{
    for (size_t j = 0; j < p->dim; j++) {
        am_problem_eigvec(p, j, col);
        double s = 0;
        for (size_t i = 0; i < p->dim; i++)
            s += col[i] * v0[i];
        h0[j] = s;
    }
}

/* Runs one step size; fills row l of the result. */
/* Error of the delay-differential limit at lag s from v0 at the n times t (into out). */
static am_status dde_error(const am_problem *p, double mu, double s, const double *v0,
                           const double *t, size_t n, double *out)
{
    am_status st;
    am_dde_params dp = am_dde_params_default();
    am_dde *sv = am_dde_alloc(p, &dp, &st, NULL, 0);
    if (!sv) return st;
    double *nrm = malloc(n * sizeof *nrm);
    if (!nrm) {
        am_dde_free(sv);
        return AM_ENOMEM;
    }
    am_ode_output o = {out, nrm, NULL, NULL};
    st = am_dde_solve(sv, mu, s, v0, t, n, &o, NULL, NULL, 0);
    free(nrm);
    am_dde_free(sv);
    return st;
}

static am_status run_eta(const am_problem *p, const am_converge_params *par, size_t l,
                         const double *h0, am_converge_result *r, double *v0)
{
    size_t n = par->ngrid;
    double eta = par->etas[l];
    am_msgd_params mp = par->msgd;
    mp.eta = eta;
    mp.coords = 0;
    am_status st = delay_for(p, par, eta, &mp.delay, &r->tau[l]);
    if (st) return st;
    r->eta[l] = eta;
    am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0), *m0 = NULL;
    if (!m) return st;
    /* paired: the same chain without its delay, on common random numbers, beside it */
    am_model pair;
    am_model_pair pctx;
    const am_model *model = am_msgd_model(m);
    if (r->paired) {
        am_msgd_params mp0 = mp;
        am_delay_make(AM_DELAY_NONE, 0, &mp0.delay);
        m0 = am_msgd_alloc(p, &mp0, &st, NULL, 0);
        if (!m0) {
            am_msgd_free(m);
            return st;
        }
        st = am_model_pair_make(model, am_msgd_model(m0), &pctx, &pair);
        if (st) {
            am_msgd_free(m);
            am_msgd_free(m0);
            return st;
        }
        model = &pair;
    }
    am_grid grid = {n, par->horizon};
    uint64_t *k = malloc(n * sizeof *k);
    double *tk = malloc(n * sizeof *tk);
    double *sde_mean = par->sde ? malloc(n * sizeof *sde_mean) : NULL;
    double *sde_sem = par->sde ? malloc(n * sizeof *sde_sem) : NULL;
    double *ref = par->dde ? malloc(n * sizeof *ref) : NULL;
    am_ensemble_result *er = NULL;
    if (!k || !tk || (par->sde && (!sde_mean || !sde_sem)) || (par->dde && !ref)) {
        st = AM_ENOMEM;
        goto done;
    }
    st = am_grid_steps(&grid, eta, k);
    if (st) goto done;
    st = am_ensemble_run(model, k, n, &par->ens, &er);
    if (st) goto done;
    r->diverged[l] = er->diverged;
    int expected = p->dist.kind == AM_DIST_EXPECTED;
    for (size_t g = 0; g < n; g++)
        tk[g] = (double)k[g] * eta;
    if (par->dde) {
        am_msgd_initial(m, 0, v0);
        st = dde_error(p, mp.mu, par->scaling.c, v0, tk, n, ref);
        if (st) goto done;
    }
    double best = -1, best_sem = NAN, best_t = NAN, best_ode = -1;
    for (size_t g = 0; g < n; g++) {
        const am_stats *s = &er->obs[g * er->nobs];
        double mean = er->alive[g] ? s->mean : NAN;
        double sem = expected ? 0.0 : am_stats_sem(s);
        r->mean[l * n + g] = mean;
        r->sem[l * n + g] = sem;
        double gap_ode = fabs(mean - am_theory_ode_error(p, mp.mu, h0, tk[g]));
        double gap = par->dde ? fabs(mean - ref[g]) : gap_ode;
        if (r->paired) { /* the delay's effect: the mean paired difference, its own sem */
            const am_stats *dif = &er->obs[g * er->nobs + er->nobs / 2];
            gap = er->alive[g] ? fabs(dif->mean) : NAN;
            sem = am_stats_sem(dif);
        }
        best_ode = isnan(gap_ode) || isnan(best_ode) ? NAN : fmax(best_ode, gap_ode);
        if (isnan(gap)) {
            best = NAN;
            continue;
        }
        if (!isnan(best) && gap > best) {
            best = gap;
            best_sem = sem;
            best_t = tk[g];
        }
    }
    r->weak_error_ode[l] = best_ode;
    r->weak_error[l] = best;
    r->weak_error_sem[l] = best_sem;
    r->t_max[l] = best_t;
    r->weak_error_sde[l] = NAN;
    r->weak_error_sde_sem[l] = NAN;
    if (par->sde) {
        am_msgd_initial(m, 0, v0);
        st = am_sde_pca_global_error(p, mp.eta, mp.mu, mp.seed, mp.blowup, v0, tk, n, &par->ens,
                                     sde_mean, sde_sem);
        if (st) goto done;
        double bs = -1, bsem = NAN;
        for (size_t g = 0; g < n; g++) {
            double gap = fabs(r->mean[l * n + g] - sde_mean[g]);
            if (isnan(gap)) {
                bs = NAN;
                break;
            }
            if (gap > bs) {
                bs = gap;
                double a = r->sem[l * n + g], b = sde_sem[g];
                bsem = sqrt(a * a + b * b);
            }
        }
        r->weak_error_sde[l] = bs;
        r->weak_error_sde_sem[l] = isnan(bs) ? NAN : bsem; /* no gap, no standard error */
    }
done:
    am_ensemble_result_free(er);
    free(k);
    free(tk);
    free(sde_mean);
    free(sde_sem);
    free(ref);
    am_msgd_free(m);
    am_msgd_free(m0);
    return st;
}

am_status am_converge_local_slope(const double *eta, const double *err, size_t n, double r_exp,
                                  double *slope, double *bias)
{
    if (!eta || !err || !slope || !bias || n < 3 || !(r_exp > 0)) return AM_EINVAL;
    /* the three smallest step sizes, coarsest first: i[0] > i[1] > i[2] in eta */
    size_t idx[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
    for (size_t l = 0; l < n; l++) {
        if (!(eta[l] > 0) || !isfinite(eta[l]) || !(err[l] > 0) || !isfinite(err[l]))
            return AM_EINVAL;
        for (size_t j = 0; j < l; j++)
            if (eta[j] == eta[l]) return AM_EINVAL;
    }
    size_t pick[3] = {0, 0, 0}; /* finest first */
    for (size_t k = 0; k < 3; k++) {
        size_t best = SIZE_MAX;
        for (size_t l = 0; l < n; l++) {
            int used = 0;
            for (size_t j = 0; j < k; j++)
                used |= pick[j] == l;
            if (!used && (best == SIZE_MAX || eta[l] < eta[best])) best = l;
        }
        pick[k] = best;
        idx[2 - k] = best;
    }
    double sl[2], m[2];
    for (size_t j = 0; j < 2; j++) {
        size_t a = idx[j], b = idx[j + 1];
        sl[j] = log(err[b] / err[a]) / log(eta[b] / eta[a]);
        m[j] = sqrt(eta[a] * eta[b]);
    }
    *slope = sl[1];
    double d = (sl[0] - sl[1]) / (pow(m[0], r_exp) - pow(m[1], r_exp));
    *bias = 2.0 * fabs(d * pow(m[1], r_exp));
    return AM_OK;
}

/* r->chi2_dof, r->fit_p and r->verdict_reason of a decided ladder (finite: every gap is
 * positive and finite). */
static void converge_reason(am_converge_result *r, const am_converge_params *par, int finite)
{
    int wls = r->fitted && r->fit.weighted && strcmp(r->order_method, "local-slope") != 0;
    r->chi2_dof = wls && r->fit.dof > 0 ? r->fit.rss / r->fit.dof : NAN;
    r->fit_p = wls ? r->fit.chi2_pvalue : NAN;
    const char *why;
    int diverged = 0;
    for (size_t l = 0; l < r->n; l++)
        diverged |= (double)r->diverged[l] / r->replicas > AM_CONVERGE_DIVERGED_MAX;
    if (!finite)
        why = "a weak error is zero or not finite: no fit";
    else if (diverged)
        why = "too many replicas diverged at a step size: no verdict";
    else if (!r->order_method[0])
        why = "noise floor: a gap is within noise_k standard errors of 0";
    else if (wls && am_fit_misfit(&r->fit, &par->fit))
        why = "misfit: the single power law does not fit the ladder (fit_p below gof_level)";
    else if (r->check.verdict == AM_CHECK_PASS)
        why = "the order's interval lies inside the band";
    else if (r->check.verdict == AM_CHECK_FAIL)
        why = "the order's interval lies outside the band";
    else
        why = "the order's interval straddles an edge of the band";
    snprintf(r->verdict_reason, sizeof r->verdict_reason, "%s", why);
}

/* The shared initial point of every replica and every eta (it does not depend on eta). */
static am_status shared_initial(const am_problem *p, const am_converge_params *par, double *v0)
{
    am_status st;
    am_msgd_params mp = par->msgd;
    am_delay_make(AM_DELAY_NONE, 0, &mp.delay);
    am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    if (!m) return st;
    am_msgd_initial(m, 0, v0);
    am_msgd_free(m);
    return AM_OK;
}

am_status am_converge_decide(const am_converge_params *par, am_converge_result *r)
{
    size_t n = r->n;
    am_status st;
    double pred = !isnan(par->predicted_order) ? par->predicted_order
                  : par->dde                   ? 1.0
                                               : am_converge_scaling_order(&par->scaling);
    r->deterministic = 1;
    for (size_t l = 0; l < n; l++)
        if (r->weak_error_sem[l] != 0) r->deterministic = 0;
    am_check_init(&r->check, "order");
    r->order = r->order_ci[0] = r->order_ci[1] = NAN;
    r->fitted = 0;
    r->order_method[0] = 0;
    size_t div = 0;
    int finite = 1;
    for (size_t l = 0; l < n; l++) {
        div += r->diverged[l];
        if (!(r->weak_error[l] > 0) || !isfinite(r->weak_error[l]) ||
            !isfinite(r->weak_error_sem[l]))
            finite = 0;
    }
    if (!finite) {
        r->check.predicted = pred;
        r->check.measured = NAN;
        am_check_add_note(&r->check,
                          "a weak error is zero or not finite (%zu diverged "
                          "replicas): no fit",
                          div);
        goto done;
    }
    st = am_fit_order_check(r->eta, r->weak_error, r->weak_error_sem, n, r->replicas, pred,
                            &par->fit, &r->check);
    if (st) return st;
    am_fit_noise_floor_result nf;
    st = am_fit_noise_floor(r->weak_error, r->weak_error_sem, n, r->replicas, &par->fit, &nf);
    if (st) return st;
    if (nf.resolved) {
        r->fitted = 1;
        int all_pos = 1;
        for (size_t l = 0; l < n; l++)
            all_pos &= r->weak_error_sem[l] > 0;
        st = all_pos ? am_fit_order_weighted(r->eta, r->weak_error, r->weak_error_sem, n, &par->fit,
                                             &r->fit)
                     : am_fit_order(r->eta, r->weak_error, n, &par->fit, &r->fit);
        if (st) return st;
        snprintf(r->order_method, sizeof r->order_method, "%s", all_pos ? "WLS" : "OLS");
    }
    if (r->deterministic && n >= 3) {
        /* noise-free: the finest local slope with its Richardson bound replaces the OLS t
           interval, whose 1-3 degrees of freedom cannot resolve a curved ladder */
        double r_exp = par->scaling.kind == AM_SCALING_PAPER && par->scaling.gamma < 1
                           ? 1 - par->scaling.gamma
                           : 1.0;
        double s_fine, bias;
        st = am_converge_local_slope(r->eta, r->weak_error, n, r_exp, &s_fine, &bias);
        if (st) return st;
        r->check.measured = s_fine;
        r->check.measured_sem = 0;
        r->check.note[0] = 0;
        st = am_check_decide_equiv(&r->check, am_check_z(par->fit.level), bias,
                                   par->fit.model_error, par->fit.margin);
        if (st) return st;
        snprintf(r->order_method, sizeof r->order_method, "local-slope");
        am_check_add_note(&r->check,
                          "finest local slope; half-width = 2x the Richardson bias estimate "
                          "(next term eta^%.3g)",
                          r_exp);
    }
    if (r->order_method[0]) {
        r->order = r->check.measured;
        r->order_ci[0] = r->check.measured - r->check.halfwidth;
        r->order_ci[1] = r->check.measured + r->check.halfwidth;
    }
    if (div) am_check_add_note(&r->check, "%zu diverged replicas over the ladder", div);
    /* a mean over the survivors of a step size where many replicas diverged is not the weak
       error of the algorithm: no verdict (more replicas do not help; smaller steps do) */
    for (size_t l = 0; l < n; l++) {
        double frac = (double)r->diverged[l] / r->replicas;
        if (frac > AM_CONVERGE_DIVERGED_MAX) {
            r->check.verdict = AM_CHECK_INCONCLUSIVE;
            r->check.replicas_needed = NAN;
            am_check_add_note(&r->check,
                              "%.3g %% of the replicas diverged at eta = %g (more than %.3g %%): "
                              "the gaps are means over survivors, no verdict",
                              100 * frac, r->eta[l], 100 * AM_CONVERGE_DIVERGED_MAX);
            break;
        }
    }
done:
    converge_reason(r, par, finite);
    for (size_t l = 0; l < n; l++) {
        double fa = r->fitted ? r->fit.intercept : NAN, fp = r->fitted ? r->fit.slope : NAN;
        r->fit_curve[l] = exp(fa + fp * log(r->eta[l]));
    }
    return AM_OK;
}

am_status am_converge_run(const am_problem *p, const am_converge_params *par,
                          am_converge_result **out)
{
    *out = NULL;
    char err[256];
    am_status st = am_converge_params_check(p, par, err, sizeof err);
    if (st) return st;
    size_t n = par->n_eta, ng = par->ngrid, d = p->dim;
    am_converge_result *r = result_alloc(n, ng);
    double *v0 = malloc(d * sizeof *v0), *h0 = malloc(d * sizeof *h0),
           *col = malloc(d * sizeof *col);
    if (!r || !v0 || !h0 || !col) {
        st = AM_ENOMEM;
        goto fail;
    }
    r->replicas = (double)par->ens.replicas;
    /* under a delay scaling with noisy data the order is the delay's effect's: the gap to the
       undelayed chain on common random numbers (the noise term of the gap to the ODE cancels);
       noise-free ladders have no noise term and keep the gap to their limit */
    r->paired =
        par->scaling.kind != AM_SCALING_NONE && !par->dde && p->dist.kind != AM_DIST_EXPECTED;
    snprintf(r->reference, sizeof r->reference, "%s",
             r->paired  ? "undelayed"
             : par->dde ? "dde"
                        : "ode");
    st = shared_initial(p, par, v0);
    if (st) goto fail;
    to_eigen(p, v0, h0, col);
    am_grid grid = {ng, par->horizon};
    am_grid_times(&grid, r->t);
    for (size_t g = 0; g < ng; g++) {
        r->ode[g] = am_theory_ode_error(p, par->msgd.mu, h0, r->t[g]);
        r->dde[g] = NAN;
    }
    if (par->dde) {
        st = dde_error(p, par->msgd.mu, par->scaling.c, v0, r->t, ng, r->dde);
        if (st) goto fail;
    }
    for (size_t l = 0; l < n; l++) {
        st = run_eta(p, par, l, h0, r, v0);
        if (st) goto fail;
    }

    st = am_converge_decide(par, r);
    if (st) goto fail;
    *out = r;
    free(v0);
    free(h0);
    free(col);
    return AM_OK;
fail:
    free(v0);
    free(h0);
    free(col);
    am_converge_result_free(r);
    return st;
}
