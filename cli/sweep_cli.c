/*
 * sweep_cli.c -- the shared flags, progress line, SIGINT handler and status mapping of the
 * sweep commands (see sweep_cli.h).
 */
#include "sweep_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../studies/am_sweep.h"
#include "../theory/am_theory.h"
#include "cli_common.h"

const cli_opt OPT_SW_TIME = {"time", "T", "20", "horizon in continuous time t = k eta"};
const cli_opt OPT_SW_GRID = {"grid", "N", "101", "number of saved times"};
const cli_opt OPT_SW_INIT = {"init", "SPEC", "e:1",
                             "initial point: random, random-each, e:J, angle:THETA"};
const cli_opt OPT_SW_REPLICAS = {"replicas", "R", "200", "replicas per cell"};
const cli_opt OPT_BURNIN = {"burnin", "F", "0.5",
                            "fraction of the horizon discarded before time-averaging err"};
const cli_opt OPT_EPS = {"eps", "EPS", "0.01", "error level of the time metric (err <= EPS)"};
const cli_opt OPT_DELAY_MODEL = {"delay-model", "KIND", "const",
                                 "delay axis: const (tau), uniform (S), geometric (MEAN)"};
const cli_opt OPT_QUIET = {"quiet", NULL, NULL, "no progress line on stderr"};
const cli_opt OPT_GAMMA = {
    "gamma", "G", AM_THEORY_BOUND_GAMMA_STR,
    "gamma in (0, 1] of the paper's bound C (1-mu)^2 / (lambda_1 eta^(1-gamma))"};
const cli_opt OPT_BOUND_CONST = {"bound-constant", "C", AM_THEORY_BOUND_C_STR,
                                 "constant in front of the paper's delay bound"};

static am_delay_kind delay_kind(const cli_args *a)
{
    const char *k = cli_str(a, "delay-model");
    if (strcmp(k, "const") == 0) return AM_DELAY_CONST;
    if (strcmp(k, "uniform") == 0) return AM_DELAY_UNIFORM;
    if (strcmp(k, "geometric") == 0) return AM_DELAY_GEOMETRIC;
    cli_usage_error("--delay-model must be const, uniform or geometric, got '%s'", k);
}

void sweep_cli_cell_params(am_sweep_cell_params *s, const cli_args *a, const am_problem *p)
{
    *s = am_sweep_cell_params_default();
    s->problem = p;
    am_msgd_params m = am_msgd_params_default();
    char err[256];
    m.eta = cli_double(a, "eta", 0, 1e6, 1, 0);
    if (am_msgd_init_parse(cli_str(a, "init"), p->dim, &m.init, err, sizeof err))
        cli_usage_error("--init: %s", err);
    m.seed = cli_u64(a, "seed");
    m.blowup = cli_double(a, "blowup", 1, 1e300, 1, 0);
    m.summary = 1;
    m.burnin = cli_double(a, "burnin", 0, 1, 0, 1);
    m.eps = cli_has_opt(a, "eps") ? cli_double(a, "eps", 0, 1, 1, 0) : 0.01;
    if (am_msgd_params_check(p, &m, err, sizeof err)) cli_usage_error("%s", err);
    s->msgd = m;
    s->horizon = cli_double(a, "time", 0, 1e12, 1, 0);
    if (s->horizon / m.eta > 1e15)
        cli_usage_error("--time / --eta = %.3g steps is more than 1e15", s->horizon / m.eta);
    am_grid g = cli_grid(a, s->horizon);
    if (g.n < 2) cli_usage_error("--grid must be >= 2, got %zu", g.n);
    s->ngrid = g.n;
    am_ensemble_params ep = cli_ensemble_params(a);
    s->replicas = ep.replicas;
    s->threads = ep.threads;
    s->delay_kind = delay_kind(a);
    if (am_sweep_cell_params_check(s, err, sizeof err))
        cli_usage_error("--time / --eta gives too many steps");
}

void sweep_cli_params_json(json_t *params, const am_sweep_cell_params *s)
{
    char buf[64];
    cli_params_problem(params, s->problem);
    json_object_set_new(params, "eta", json_real(s->msgd.eta));
    am_msgd_init_format(&s->msgd.init, buf, sizeof buf);
    json_object_set_new(params, "init", json_string(buf));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->msgd.seed);
    json_object_set_new(params, "seed", json_string(buf));
    json_object_set_new(params, "blowup", json_real(s->msgd.blowup));
    json_object_set_new(params, "time", json_real(s->horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)s->ngrid));
    json_object_set_new(params, "burnin", json_real(s->msgd.burnin));
    json_object_set_new(params, "eps", json_real(s->msgd.eps));
    json_object_set_new(params, "replicas", json_integer((json_int_t)s->replicas));
    static const char *kinds[] = {"none", "const", "uniform", "geometric"};
    json_object_set_new(params, "delay_model", json_string(kinds[s->delay_kind]));
}

double *sweep_cli_parse_grid(const char *flag, const char *spec, size_t *n)
{
    double *x = NULL;
    const char *c1 = strchr(spec, ':');
    if (c1) {
        char *copy = cli_keep(strdup(spec)), *p1 = strchr(copy, ':'),
             *p2 = p1 ? strchr(p1 + 1, ':') : NULL;
        double lo, hi, cnt;
        if (!p2) cli_usage_error("--%s must be A:B:N or a comma list, got '%s'", flag, spec);
        *p1 = 0;
        *p2 = 0;
        if (cli_parse_double(copy, &lo) || cli_parse_double(p1 + 1, &hi) ||
            cli_parse_double(p2 + 1, &cnt) || cnt != floor(cnt) || cnt < 1 || cnt > 100000 ||
            hi < lo || (cnt == 1 && hi != lo))
            cli_usage_error("--%s must be A:B:N with A <= B and an integer N in [1, 100000], "
                            "got '%s'",
                            flag, spec);
        free(copy);
        *n = (size_t)cnt;
        x = cli_keep(malloc(*n * sizeof *x));
        if (!x) cli_runtime_error("out of memory");
        for (size_t i = 0; i < *n; i++)
            x[i] = *n == 1 ? lo : i + 1 == *n ? hi : lo + (hi - lo) * (double)i / (double)(*n - 1);
        return x;
    }
    size_t cnt = 1;
    for (const char *q = spec; *q; q++)
        cnt += *q == ',';
    x = cli_keep(malloc(cnt * sizeof *x));
    char *copy = cli_keep(strdup(spec)), *save = NULL;
    size_t k = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (k >= cnt || cli_parse_double(tok, &x[k++]))
            cli_usage_error("--%s must be A:B:N or a comma list of numbers, got '%s'", flag, spec);
    free(copy);
    if (k != cnt || cnt == 0)
        cli_usage_error("--%s must be A:B:N or a comma list of numbers, got '%s'", flag, spec);
    *n = cnt;
    return x;
}

void sweep_cli_progress_print(void *ctx, size_t done, size_t total, size_t computed, double elapsed)
{
    FILE *f = ctx;
    size_t left = total - done;
    double rest = computed ? elapsed / (double)computed * (double)left : NAN;
    fprintf(f, "\r%zu/%zu cells, %.1f s elapsed, ", done, total, elapsed);
    if (isfinite(rest))
        fprintf(f, "about %.1f s left   ", rest);
    else
        fprintf(f, "estimating...   ");
    if (done == total) fputc('\n', f);
    fflush(f);
}

int sweep_cli_show_progress(int quiet)
{
    return !quiet && isatty(STDERR_FILENO) && am_sweep_rank() == 0;
}

/* SIGINT asks the sweep to stop (the library polls the flag between cells and inside them);
 * the checkpoint keeps every finished cell. SIGTERM does the same: mpirun turns a Ctrl-C into
 * SIGTERM to every rank (then SIGKILL a few seconds later), Slurm's scancel and time limit
 * send SIGTERM first. */
static volatile sig_atomic_t sweep_stop_flag = 0;
static struct sigaction sweep_old_action, sweep_old_term;

static void sweep_on_sigint(int sig)
{
    (void)sig;
    sweep_stop_flag = 1;
}

const volatile sig_atomic_t *sweep_cli_sigint_install(void)
{
    struct sigaction sa;
    sweep_stop_flag = 0; /* a second sweep in one process (libamsgd-cli.so) starts afresh */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sweep_on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &sweep_old_action);
    sigaction(SIGTERM, &sa, &sweep_old_term);
    return &sweep_stop_flag;
}

void sweep_cli_sigint_restore(void)
{
    sigaction(SIGINT, &sweep_old_action, NULL);
    sigaction(SIGTERM, &sweep_old_term, NULL);
}

int sweep_cli_status(am_status st, const char *err, const char *cmd, const char *units, size_t done,
                     size_t total, const char *checkpoint, int progress_shown)
{
    if (st == AM_OK) return 0;
    if (st == AM_ECANCELED) {
        if (am_sweep_rank() != 0) return 0;
        if (progress_shown) fputc('\n', stderr);
        fprintf(stderr, "amsgd: interrupted after %zu of %zu %s%s\n", done, total, units,
                checkpoint ? "; rerun with --resume to continue" : "");
        return 130;
    }
    /* under MPI every rank has rank 0's status and message: rank 0 prints it */
    if (am_sweep_rank() != 0) exit(st == AM_EINVAL && err[0] ? 2 : 3);
    if (st == AM_EINVAL && err[0]) cli_usage_error("--checkpoint: %s", err);
    cli_runtime_error("%s: %s", cmd, err[0] ? err : am_strerror(st));
}

void sweep_cli_checkpoint(const cli_args *a, const char **checkpoint, int *resume)
{
    *checkpoint = cli_str(a, "checkpoint");
    *resume = cli_flag(a, "resume");
    if (*resume && !*checkpoint) cli_usage_error("--resume needs --checkpoint FILE");
}
