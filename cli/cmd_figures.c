/*
 * cmd_figures.c -- `amsgd figures`: regenerates every figure the documentation shows, from
 * the same commands a user would type. Each figure is a row of the const table below: the
 * amsgd commands that write its data files and the gnuplot call that renders it, all run
 * inside the figures folder (default docs/figures; an installed amsgd falls back to the copy
 * under its data folder), where the editable .gp scripts live beside their data.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"

/* One shell step; "@A" stands for this amsgd binary. may_fail: exit status 1 is a verdict
 * (a failed check), not an error. */
typedef struct {
    const char *cmd;
    int may_fail;
} fig_step;

typedef struct {
    const char *name;
    const char *what;
    fig_step steps[10];
} fig_entry;

static const fig_entry figures[] = {
    {"mc_error",
     "mean error of the ensemble with its +-2 SE band (docs/mc.md)",
     {{"@A mc --dim 4 --spectrum 4,3,2,1 --eta 1e-3 --mu 0.5 --delay const:40 --time 8 --grid 161 "
       "--replicas 4000 --seed 1 -o mc_error.csv",
       0},
      /* pred: the eta -> 0 stationary error of the OU limit (amsgd theory) */
      {"gnuplot -e \"data='mc_error.csv'; out='mc_error'; title='Async-MSGD, d = 4, Sigma = "
       "diag(4,3,2,1), mu = 0.5, delay 40, eta = 1e-3, 4000 replicas (band: +-2 SE)'; pred=$(@A "
       "theory --mu 0.5 --eta 1e-3 | sed -n 's/^stationary_error,,//p')\" mc_error.gp",
       0}}},
    {"compare",
     "mc, sde and ode on one grid (docs/compare.md)",
     {{"@A compare --dim 4 --spectrum 4,3,2,1 --eta 1e-3 --mu 0.5 --time 6 --grid 121 --replicas "
       "4000 --seed 1 -o compare.csv",
       0},
      {"gnuplot -e \"data='compare.csv'; out='compare'; title='d = 4, Sigma = diag(4,3,2,1), mu "
       "= 0.5, eta = 1e-3, no delay, 4000 replicas: mc, sde, ode'; pred=$(@A theory --mu 0.5 "
       "--eta 1e-3 | sed -n 's/^stationary_error,,//p')\" compare.gp",
       0}}},
    {"converge",
     "weak error against the ODE and the SDE as eta -> 0 (docs/converge.md)",
     {{"@A converge --mu 0.5 --etas 2e-3,1e-3,5e-4,2.5e-4 --time 1 --replicas 10000 --sde --seed 1 "
       "-o converge.csv",
       1},
      {"@A converge --mu 0.5 --etas 2e-3,1e-3,5e-4,2.5e-4 --time 1 --replicas 10000 --sde --seed 1 "
       "--format json -o converge.json",
       1},
      {"gnuplot -e \"data='converge.csv'; json='converge.json'; out='converge'; title='d = 4, "
       "Sigma = diag(4,3,2,1), mu = 0.5, T = 1, R = 10000 replicas, seed 1 (bars: +-2 SE)'\" "
       "converge.gp",
       0}}},
    {"liu2018",
     "stationary error against delay and its heat map, --preset liu2018 (docs/phase.md)",
     {{"@A phase --preset liu2018 --quiet --checkpoint .liu2018.ckpt --format json -o liu2018.json",
       0},
      {"@A phase --preset liu2018 --quiet --checkpoint .liu2018.ckpt --resume -o liu2018.csv", 0},
      {"rm -f .liu2018.ckpt", 0},
      /* the tau = 0 prediction of the OU limit per simulated momentum (amsgd theory) */
      {"for m in $(tail -n +2 liu2018.csv | cut -d, -f1 | sort -u -g); do @A theory --mu $m "
       "--eta 5e-4 | sed -n \"s/^stationary_error,,/$m,/p\"; done > liu2018_ou.csv",
       0},
      /* the scripts that take the output name write SVG for a name ending in .svg */
      {"for x in png svg; do gnuplot -c phase_lines.gp liu2018.csv liu2018_lines.$x \"liu2018: "
       "stationary error versus delay (d = 4, Sigma = diag(4,3,2,1), eta = 5e-4, 200 replicas)\" "
       "liu2018_ou.csv || exit; done",
       0},
      {"for x in png svg; do gnuplot -c phase_heatmap.gp liu2018.csv liu2018_heat.$x \"liu2018: "
       "stationary error per momentum and delay (d = 4, eta = 5e-4, 200 replicas)\" log "
       "\"stationary error 1 - (v1.v)^2/|v|^2\" \"delay tau (steps)\" || exit; done",
       0}}},
    {"knee",
     "critical delay against 1 - mu with the three laws (docs/knee.md)",
     {{"@A knee --quiet --checkpoint .knee.ckpt --format json -o knee.json", 0},
      {"@A knee --quiet --checkpoint .knee.ckpt --resume -o knee.csv", 0},
      {"rm -f .knee.ckpt", 0},
      {"for x in png svg; do gnuplot -c knee_loglog.gp knee.csv knee.$x \"critical delay (error "
       "x2 or divergence), eta = 5e-4, 200 replicas\" || exit; done",
       0}}},
    {"speedup",
     "linear acceleration: efficiency S / P against workers P per momentum (docs/speedup.md)",
     {{"@A phase --eta 2e-4 --init e:2 --mu-grid 0,0.5,0.9 "
       "--tau-grid 0,1,3,7,15,31,63,127,255,511,1023,2047,4095 --metric time --eps 0.1 "
       "--time 20 --grid 2001 --replicas 400 --quiet -o speedup.csv",
       0},
      {"for x in png svg; do gnuplot -c speedup.gp speedup.csv speedup.$x \"linear acceleration: "
       "d = 4, Gaussian, eta = 2e-4, from e_2 to err <= 0.1, 400 replicas\" || exit; done",
       0}}},
    {"geo",
     "geometric staleness: error ratio to no delay, with the implicit momentum (docs/phase.md)",
     {{"@A phase --delay-model geometric --mu-grid 0:0.9:10 --tau-grid 0:40:9 --metric ratio "
       "--replicas 100 --time 10 --quiet --checkpoint .geo.ckpt --format json -o geo.json",
       0},
      {"@A phase --delay-model geometric --mu-grid 0:0.9:10 --tau-grid 0:40:9 --metric ratio "
       "--replicas 100 --time 10 --quiet --checkpoint .geo.ckpt --resume -o geo.csv",
       0},
      {"rm -f .geo.ckpt", 0},
      {"for x in png svg; do gnuplot -c phase_heatmap.gp geo.csv geo_heat.$x \"geometric "
       "staleness: error ratio to no delay (d = 4, eta = 5e-4, 100 replicas)\" lin \"stationary "
       "error / its value at mean staleness 0\" \"mean staleness (steps)\" || exit; done",
       0}}},
    {"runtime",
     "time per iteration against K per parameter-server variant (docs/runtime.md)",
     {{"@A runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime exp:1 -o runtime_exp.csv", 0},
      {"@A runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime shiftexp:1:1 -o runtime_shiftexp.csv",
       0},
      {"@A runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime pareto:2.5:1 -o runtime_pareto.csv",
       0},
      {"gnuplot runtime.gp", 0}}},
    {"staleness",
     "normalised steps to the target against s, per optimiser (docs/staleness.md)",
     {{"@A staleness --objective lsq --s 0,1,2,4,8,16 -o staleness_lsq.csv", 0},
      {"@A staleness --objective logistic --s 0,1,2,4,8,16 -o staleness_logistic.csv", 0},
      {"gnuplot staleness.gp", 0}}},
    {"dai2019",
     "Dai et al.'s grid on Fashion-MNIST: normalised batches to target against s "
     "and P on raw pixels (docs/staleness.md; resumes the committed checkpoints, else about 25 "
     "CPU-minutes)",
     {{"@A staleness --preset dai2019 --inputs raw --seeds 3 --budget-factor 0 --models "
       "mlr,mlp1,mlp3 --optimizer "
       "sgd,momentum,adam "
       "--workers 1,4 --quiet --checkpoint staleness_dai2019.ckpt --resume -o "
       "staleness_dai2019.csv",
       0},
      {"@A staleness --preset dai2019 --inputs raw --seeds 3 --budget-factor 0 --models "
       "mlr,mlp1,mlp3 --optimizer "
       "nesterov,rmsprop,adagrad "
       "--workers 1 --quiet --checkpoint staleness_dai2019_b.ckpt --resume -o "
       "staleness_dai2019_b.csv",
       0},
      {"@A staleness --preset dai2019 --inputs raw --seeds 3 --budget-factor 0 --models mlr,mlp1 "
       "--optimizer "
       "sgd,momentum,adam "
       "--workers 2,8 --quiet --checkpoint staleness_dai2019_c.ckpt --resume -o "
       "staleness_dai2019_c.csv",
       0},
      {"@A staleness --preset dai2019 --inputs raw --seeds 3 --budget-factor 0 --models mlp2 "
       "--optimizer "
       "sgd,momentum,adam "
       "--workers 1,2,4,8 --quiet --checkpoint staleness_dai2019_d.ckpt --resume -o "
       "staleness_dai2019_d.csv",
       0},
      {"@A staleness --preset dai2019 --inputs raw --seeds 3 --budget-factor 0 --models mlp3 "
       "--optimizer "
       "sgd,momentum,adam "
       "--workers 2,8 --quiet --checkpoint staleness_dai2019_e.ckpt --resume -o "
       "staleness_dai2019_e.csv",
       0},
      {"gnuplot staleness_dai2019.gp", 0},
      {"gnuplot staleness_dai2019_workers.gp", 0}}},
    {"inputs",
     "raw pixels against standardised inputs: slowdown at s = 8 and coherence per cell, 10 seeds "
     "(docs/findings.md; resumes the committed checkpoints, else about 8 CPU-minutes)",
     {{"@A staleness --preset dai2019 --models mlr,mlp1 --optimizer sgd,momentum,adam --workers "
       "1,4 --s 0,8 --seeds 10 --budget-factor 0 --inputs raw --quiet --checkpoint "
       "staleness_inputs_raw.ckpt "
       "--resume -o staleness_inputs_raw.csv",
       0},
      {"@A staleness --preset dai2019 --models mlr,mlp1 --optimizer sgd,momentum,adam --workers "
       "1,4 --s 0,8 --seeds 10 --budget-factor 0 --inputs standardised --quiet --checkpoint "
       "staleness_inputs_standardised.ckpt --resume -o staleness_inputs_standardised.csv",
       0},
      {"gnuplot staleness_inputs.gp", 0}}},
    {"wallclock",
     "error against wall-clock time of the variants (docs/wallclock.md)",
     {{"@A wallclock --objective lsq --grid 201 -o wallclock_lsq.csv", 0},
      {"@A wallclock --objective lsq --grid 201 --format json -o wallclock_lsq.json", 0},
      {"@A wallclock --objective pca --eta 0.005 --updates 3000 --grid 101 -o wallclock_pca.csv",
       0},
      {"gnuplot wallclock.gp", 0}}},
    {"wall_nn",
     "variants on Fashion-MNIST: test error against wall clock (docs/wallclock.md)",
     {{"@A wallclock --model mlr --inputs raw --grid 51 -o wallclock_nn_mlr.csv", 0},
      {"@A wallclock --model mlr --inputs raw --grid 51 --format json -o wallclock_nn_mlr.json", 0},
      {"@A wallclock --model mlr --inputs raw --grid 51 --lr 0.02 -o wallclock_nn_mlr_lr002.csv",
       0},
      {"@A wallclock --model mlr --inputs raw --grid 51 --lr 0.02 --format json -o "
       "wallclock_nn_mlr_lr002.json",
       0},
      {"@A wallclock --model mlp:64 --inputs raw --grid 51 -o wallclock_nn_mlp.csv", 0},
      {"@A wallclock --model mlp:64 --inputs raw --grid 51 --format json -o wallclock_nn_mlp.json",
       0},
      {"gnuplot wallclock_nn.gp", 0}}},
    {"wall_sweep",
     "time per update and error floor against P, three laws (docs/wallclock.md)",
     {{"@A wallclock --sweep -o wallclock_sweep.csv", 0},
      {"@A wallclock --sweep --format json -o wallclock_sweep.json", 0},
      {"gnuplot wallclock_sweep.gp", 0}}},
    {"adaptive",
     "constant against staleness-adaptive step (docs/wallclock.md)",
     {{"@A wallclock --variants async,k-async:4 --grid 201 -o adaptive_const.csv", 0},
      {"@A wallclock --variants async,k-async:4 --lr adaptive:1e-4:0.02 --grid 201 -o "
       "adaptive_adaptive.csv",
       0},
      {"gnuplot adaptive.gp", 0}}},
};
static const size_t nfigures = sizeof figures / sizeof figures[0];

/* The scripts' folder when --dir is absent: docs/figures of the source tree (the current
 * folder), else, for an installed amsgd (AM_DATADIR set by make install, e.g.
 * PREFIX/share/amsgd), the copy installed under AM_DATADIR/docs/figures. */
#define FIG_SRC_DIR "docs/figures"
#ifdef AM_DATADIR
#define FIG_DEFAULT_HELP FIG_SRC_DIR " if present, else " AM_DATADIR "/docs/figures"
#define FIG_INSTALLED                                                                              \
    "\nOutside the source tree it uses the scripts installed in\n" AM_DATADIR "/docs/figures."
#else
#define FIG_DEFAULT_HELP FIG_SRC_DIR
#define FIG_INSTALLED ""
#endif
static const cli_opt OPT_DIR = {
    "dir", "DIR", FIG_DEFAULT_HELP,
    "folder of the gnuplot scripts, where data and figures are written"};
static const cli_opt OPT_ONLY = {"only", "NAME", NULL, "regenerate one figure (see --list)"};
static const cli_opt OPT_LIST = {"list", NULL, NULL, "list the figures and exit"};
static const cli_opt OPT_DRY = {"dry-run", NULL, NULL, "print the commands without running them"};
static const cli_opt OPT_QUIET = {"quiet", NULL, NULL,
                                  "no progress on stderr (each step and its time, each figure)"};
static const cli_opt *const figures_opts[] = {&OPT_DIR, &OPT_ONLY,  &OPT_LIST,
                                              &OPT_DRY, &OPT_QUIET, NULL};

/* The command with every "@A" replaced by the quoted path of this binary. */
static char *expand(const char *cmd, const char *self)
{
    size_t n = strlen(cmd) + 1, k = 0;
    for (const char *p = cmd; (p = strstr(p, "@A")); p += 2)
        k++;
    n += k * (strlen(self) + 2);
    char *out = malloc(n), *o = out;
    if (!out) cli_runtime_error("out of memory");
    for (const char *p = cmd; *p;) {
        if (p[0] == '@' && p[1] == 'A') {
            o += sprintf(o, "'%s'", self);
            p += 2;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return out;
}

/* The gnuplot script a step runs (the first word ending in ".gp" after "gnuplot ", also
 * inside a shell loop such as "for x in png svg; do gnuplot -c S.gp ... $x; done"), copied
 * into buf; 0 if none. */
static int script_of(const char *cmd, char *buf, size_t size)
{
    const char *g = strstr(cmd, "gnuplot ");
    if (!g || (g > cmd && g[-1] != ' ')) return 0;
    for (const char *p = strstr(g, ".gp"); p; p = strstr(p + 1, ".gp")) {
        if (p[3] && p[3] != ' ') continue;
        const char *b = p;
        while (b > g && b[-1] != ' ')
            b--;
        snprintf(buf, size, "%.*s", (int)(p + 3 - b), b);
        return 1;
    }
    return 0;
}

/* The step as the progress line shows it: "@A" as "amsgd", cut to one terminal line. */
static void step_label(const char *cmd, char *buf, size_t size)
{
    size_t o = 0;
    for (const char *p = cmd; *p && o + 1 < size;) {
        if (p[0] == '@' && p[1] == 'A') {
            int n = snprintf(buf + o, size - o, "amsgd");
            o += n > 0 ? (size_t)n : 0;
            if (o >= size) o = size - 1;
            p += 2;
        } else {
            buf[o++] = *p++;
        }
    }
    buf[o] = 0;
    if (o > 120) snprintf(buf + 117, size - 117, "...");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Exits 3 if stdout could not take what was printed (a full disk, /dev/full). */
static int stdout_ok(void)
{
    if (fflush(stdout) || ferror(stdout)) cli_runtime_error("cannot write to stdout");
    return 0;
}

/* Every gnuplot script the figures (all, or --only's) need is in the current folder, dir;
 * exits 2 naming the first one missing, so that a folder without them computes nothing. */
static void figures_check_scripts(const char *dir, const char *only)
{
    for (size_t i = 0; i < nfigures; i++) {
        if (only && strcmp(figures[i].name, only) != 0) continue;
        for (size_t s = 0; s < sizeof figures[i].steps / sizeof figures[i].steps[0]; s++) {
            char gp[256];
            if (figures[i].steps[s].cmd && script_of(figures[i].steps[s].cmd, gp, sizeof gp) &&
                access(gp, R_OK) != 0)
                cli_usage_error("--dir: '%s' has no gnuplot script %s (needed by %s)", dir, gp,
                                figures[i].name);
        }
    }
}

int cmd_figures(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "figures",
              "Regenerate every figure the documentation shows, with its data file, from the same\n"
              "commands a user would type (run from the source tree; needs gnuplot). Takes a few\n"
              "minutes on 2 cores." FIG_INSTALLED,
              figures_opts, argc, argv);
    if (cli_flag(&a, "list")) {
        for (size_t i = 0; i < nfigures; i++)
            printf("%-10s %s\n", figures[i].name, figures[i].what);
        return stdout_ok();
    }
    const char *only = cli_str(&a, "only");
    if (only) {
        size_t i = 0;
        while (i < nfigures && strcmp(figures[i].name, only) != 0)
            i++;
        if (i == nfigures) cli_usage_error("--only: unknown figure '%s' (see --list)", only);
    }
    const char *dir = cli_given(&a, "dir") ? cli_str(&a, "dir") : FIG_SRC_DIR;
#ifdef AM_DATADIR
    struct stat sb;
    if (!cli_given(&a, "dir") && !(stat(FIG_SRC_DIR, &sb) == 0 && S_ISDIR(sb.st_mode)))
        dir = AM_DATADIR "/docs/figures";
#endif
    int dry = cli_flag(&a, "dry-run");
    int quiet = cli_flag(&a, "quiet");
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) cli_runtime_error("cannot find the path of the amsgd binary");
    self[len] = 0;
    if (strchr(self, '\'')) cli_runtime_error("the path of the binary contains a quote: %s", self);
    if (!dry && chdir(dir) != 0)
        cli_usage_error("--dir: cannot enter '%s' (run from the source tree or give the folder of "
                        "the .gp scripts)",
                        dir);
    if (!dry && access(".", W_OK) != 0)
        cli_usage_error("--dir: cannot write in '%s' (copy the folder and give --dir COPY)", dir);
    if (!dry) figures_check_scripts(dir, only);
    for (size_t i = 0; i < nfigures; i++) {
        const fig_entry *f = &figures[i];
        if (only && strcmp(f->name, only) != 0) continue;
        double t0 = now_s();
        size_t nsteps = 0;
        while (nsteps < sizeof f->steps / sizeof f->steps[0] && f->steps[nsteps].cmd)
            nsteps++;
        for (size_t s = 0; s < nsteps; s++) {
            char *cmd = expand(f->steps[s].cmd, self);
            if (dry) {
                printf("(cd %s && %s)\n", dir, cmd);
                free(cmd);
                continue;
            }
            double ts = now_s();
            if (!quiet) {
                char label[128];
                step_label(f->steps[s].cmd, label, sizeof label);
                fprintf(stderr, "amsgd figures: %s: step %zu/%zu: %s\n", f->name, s + 1, nsteps,
                        label);
            }
            fflush(stdout);
            fflush(stderr);
            int st = system(cmd);
            int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            if (code != 0 && !(f->steps[s].may_fail && code == 1))
                cli_runtime_error("figures: '%s' failed (exit %d) while making %s", cmd, code,
                                  f->name);
            free(cmd);
            if (!quiet)
                fprintf(stderr, "amsgd figures: %s: step %zu/%zu done (%.1f s)\n", f->name, s + 1,
                        nsteps, now_s() - ts);
        }
        if (!dry && !quiet)
            fprintf(stderr, "amsgd figures: %s done (%.1f s)\n", f->name, now_s() - t0);
    }
    return stdout_ok();
}
