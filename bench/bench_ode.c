/*
 * bench_ode.c -- times the CVODE solver of the limit ODE
 *
 *   dV/dt = (1/(1-mu)) [ Sigma V - (V^T Sigma V) V ],   V(0) = v_0,
 *
 * for a list of dimensions and writes, per case, a binary file that bench/ode_scipy.py
 * reads to run SciPy's solve_ivp on the same right-hand side, the same initial point, the
 * same grid and the same tolerances, and to score both trajectories against one closed
 * form (theory.md section 2).
 *
 * usage: bench_ode [--dims 4,100,1000] [--rotate SEED] [--mu M] [--time T] [--grid N]
 *                  [--rtol R | --rtols R1,R2,...] [--atol A | --atols A1,A2,...]
 *                  [--method adams|bdf]
 *                  [--linsol dense|gmres] [--out DIR]
 *
 * --rtols and --atols run every dimension at each pair of tolerances from the two lists (the
 * first pair is the one
 * SciPy is run at; the others let the comparison take CVODE at equal or better accuracy).
 * Case file DIR/case_<d>_<rotate>_<k>.bin (k = index in the tolerance list), little-endian
 * doubles:
 *   d, n, mu, rtol, atol, cvode_seconds, steps, rhs_evals, lambda[d], v0[d], t[n],
 *   q[d*d] (or nothing when rotate = 0), V_cvode[n*d].
 * Without --out it prints d, ms, steps, rhs evaluations and the closed-form state error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/am_grid.h"
#include "../montecarlo/am_msgd.h"
#include "../solvers/am_ode.h"
#include "../theory/am_problem.h"

/* CPU time of the process: on a shared machine the wall time would count other jobs' time
 * (bench/ode_scipy.py measures the same way). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Largest |V_g - V(t_g)| over the grid against the closed form
 * H_i(t) = H_i(0) e^{lambda_i s} / sqrt(sum_j H_j(0)^2 e^{2 lambda_j s}), s = t/(1-mu). */
static double state_error(const am_problem *p, double mu, const double *v0, const double *t,
                          size_t n, const double *v, const double *errv, double *err_rel)
{
    *err_rel = 0;
    size_t d = p->dim;
    double *h0 = malloc(d * sizeof *h0), *h = malloc(d * sizeof *h), *e = malloc(d * sizeof *e);
    double worst = 0;
    for (size_t j = 0; j < d; j++) {
        double acc = 0;
        for (size_t i = 0; i < d; i++)
            acc += (p->q ? p->q[i * d + j] : (i == j)) * v0[i];
        h0[j] = acc;
    }
    for (size_t g = 0; g < n; g++) {
        double s = t[g] / (1 - mu), nn = 0;
        for (size_t j = 0; j < d; j++) {
            h[j] = h0[j] * exp((p->lambda[j] - p->lambda[0]) * s);
            nn += h[j] * h[j];
        }
        for (size_t j = 0; j < d; j++)
            h[j] /= sqrt(nn);
        double ecf = 0;
        for (size_t j = 1; j < d; j++)
            ecf += h[j] * h[j];
        if (fabs(errv[g] - ecf) / ecf > *err_rel) *err_rel = fabs(errv[g] - ecf) / ecf;
        double err2 = 0;
        for (size_t i = 0; i < d; i++) {
            double x = 0;
            if (p->q)
                for (size_t j = 0; j < d; j++)
                    x += p->q[i * d + j] * h[j];
            else
                x = h[i];
            e[i] = v[g * d + i] - x;
            err2 += e[i] * e[i];
        }
        if (sqrt(err2) > worst) worst = sqrt(err2);
    }
    free(h0), free(h), free(e);
    return worst;
}

static int put(FILE *f, const double *x, size_t n)
{
    return fwrite(x, sizeof *x, n, f) != n;
}

int main(int argc, char **argv)
{
    am_common_gsl_handler_off(); /* the program, not the library, sets GSL's handler */
    const char *dims = "4,100,1000", *out = NULL, *method = "adams", *linsol = "dense";
    const char *rtols = NULL, *atols = NULL;
    unsigned long long rotate = 0;
    double mu = 0, horizon = 10;
    size_t ngrid = 200;
    am_ode_params op = am_ode_params_default();
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--dims"))
            dims = argv[i + 1];
        else if (!strcmp(argv[i], "--rotate"))
            rotate = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--mu"))
            mu = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--time"))
            horizon = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--grid"))
            ngrid = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--rtol"))
            op.rtol = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--rtols"))
            rtols = argv[i + 1];
        else if (!strcmp(argv[i], "--atols"))
            atols = argv[i + 1];
        else if (!strcmp(argv[i], "--atol"))
            op.atol = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--method"))
            method = argv[i + 1];
        else if (!strcmp(argv[i], "--linsol"))
            linsol = argv[i + 1];
        else if (!strcmp(argv[i], "--out"))
            out = argv[i + 1];
        else {
            fprintf(stderr, "bench_ode: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (am_ode_linsol_parse(linsol, &op.linsol)) {
        fprintf(stderr, "bench_ode: --linsol must be dense or gmres\n");
        return 2;
    }
    if (am_ode_method_parse(method, &op.method)) {
        fprintf(stderr, "bench_ode: --method must be adams or bdf\n");
        return 2;
    }
    if (!out)
        printf("%6s %6s %8s %8s %10s %8s %10s %12s %12s\n", "d", "rotate", "rtol", "atol",
               "cvode_ms", "steps", "rhs_evals", "state_err", "err_relerr");
    double rt[16], at[16];
    size_t nrt = 0, nat = 0;
    char *tl = strdup(rtols ? rtols : ""), *ts = NULL;
    for (char *tok = strtok_r(tl, ",", &ts); tok && nrt < 16; tok = strtok_r(NULL, ",", &ts))
        rt[nrt++] = atof(tok);
    free(tl);
    tl = strdup(atols ? atols : "");
    for (char *tok = strtok_r(tl, ",", &ts); tok && nat < 16; tok = strtok_r(NULL, ",", &ts))
        at[nat++] = atof(tok);
    free(tl);
    if (!nrt) rt[nrt++] = op.rtol;
    if (!nat) at[nat++] = op.atol;
    size_t ntol = nrt * nat;
    char *list = strdup(dims), *save = NULL;
    for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        for (size_t k = 0; k < ntol; k++) {
            op.atol = at[k / nrt];
            op.rtol = rt[k % nrt];
            size_t d = (size_t)atol(tok);
            double *lambda = malloc(d * sizeof *lambda);
            for (size_t i = 0; i < d; i++)
                lambda[i] = d == 4 ? 4.0 - (double)i : 4.0 - 3.0 * (double)i / (double)(d - 1);
            am_dist dist = {AM_DIST_GAUSSIAN, 0};
            am_problem *p = am_problem_alloc(d, lambda, dist, rotate, NULL, NULL, 0);
            am_msgd_params mp = am_msgd_params_default();
            mp.mu = mu;
            am_status st;
            am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0);
            am_ode *s = am_ode_alloc(p, &op, &st, NULL, 0);
            if (!p || !m || !s) {
                fprintf(stderr, "bench_ode: setup failed at d=%zu\n", d);
                return 3;
            }
            double *v0 = malloc(d * sizeof *v0), *t = malloc(ngrid * sizeof *t);
            double *err = malloc(ngrid * sizeof *err), *norm = malloc(ngrid * sizeof *norm);
            double *v = malloc(ngrid * d * sizeof *v);
            am_msgd_initial(m, 0, v0);
            am_grid grid = {ngrid, horizon};
            am_grid_times(&grid, t);
            am_ode_output o = {err, norm, NULL, v};
            am_ode_stats stats;
            /* best of repeated solves: at least three, more while under 0.5 s in all */
            double best = INFINITY, spent = 0;
            for (int r = 0; r < 3 || spent < 0.5; r++) {
                double t0 = now();
                st = am_ode_solve(s, mu, v0, t, ngrid, &o, &stats);
                double el = now() - t0;
                if (st) {
                    fprintf(stderr, "bench_ode: solve failed at d=%zu: %s\n", d,
                            am_ode_last_error(s));
                    return 3;
                }
                spent += el;
                if (el < best) best = el;
                if (r > 1000) break;
            }
            if (!out) {
                double erel, se = state_error(p, mu, v0, t, ngrid, v, err, &erel);
                printf("%6zu %6llu %8.1e %8.1e %10.3f %8ld %10ld %12.3e %12.3e\n", d, rotate,
                       op.rtol, op.atol, 1e3 * best, stats.steps, stats.rhs_evals, se, erel);
            } else {
                char path[4096];
                snprintf(path, sizeof path, "%s/case_%zu_%llu_%zu.bin", out, d, rotate, k);
                FILE *f = fopen(path, "wb");
                double head[8] = {
                    (double)d,           (double)ngrid,          mu, op.rtol, op.atol, best,
                    (double)stats.steps, (double)stats.rhs_evals};
                int bad = !f || put(f, head, 8) || put(f, lambda, d) || put(f, v0, d) ||
                          put(f, t, ngrid) || (p->q && put(f, p->q, d * d)) || put(f, v, ngrid * d);
                if (f && fclose(f)) bad = 1;
                if (bad) {
                    fprintf(stderr, "bench_ode: cannot write %s\n", path);
                    return 3;
                }
            }
            free(v0), free(t), free(err), free(norm), free(v), free(lambda);
            am_ode_free(s);
            am_msgd_free(m);
            am_problem_free(p);
        }
    free(list);
    return 0;
}
