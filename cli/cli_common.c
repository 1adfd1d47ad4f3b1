/*
 * cli_common.c -- shared flags, their validation, and output buffering for amsgd.
 */
#include "cli_common.h"

#include <time.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../studies/am_sweep.h"

const cli_opt OPT_DIM = {"dim", "D", "4", "dimension d >= 2"};
const cli_opt OPT_SPECTRUM = {
    "spectrum", "L", "4,3,2,1 for D=4, else linear:4:1",
    "eigenvalues: comma list (its length sets D when --dim is not given), or linear:HI:LO"};
const cli_opt OPT_DIST = {"dist", "NAME", "gaussian",
                          "data: gaussian, rademacher, uniform, student:NU, expected"};
const cli_opt OPT_ROTATE = {"rotate", "SEED", "0",
                            "random orthogonal eigenbasis drawn from SEED (0 = standard basis)"};
const cli_opt OPT_ETA = {"eta", "E", "5e-4", "step size eta > 0"};
const cli_opt OPT_MU = {"mu", "M", "0", "momentum mu in [0, 1)"};
const cli_opt OPT_DELAY = {"delay", "SPEC", "none",
                           "staleness: none, const:T, uniform:S, geometric:MEAN, workers:P:DIST"};
/* --delay for commands that run only the i.i.d. delay models (not workers:P:DIST) */
const cli_opt OPT_DELAY_IID = {"delay", "SPEC", "none",
                               "staleness: none, const:T, uniform:S, geometric:MEAN"};
const cli_opt OPT_INIT = {"init", "SPEC", "random",
                          "initial point: random, random-each, e:J, angle:THETA"};
const cli_opt OPT_GRID = {"grid", "N", "200", "number of saved times, shared by all engines"};
const cli_opt OPT_REPLICAS = {"replicas", "R", "1000", "ensemble size"};
const cli_opt OPT_SEED = {"seed", "S", "1", "seed of every random stream"};
const cli_opt OPT_THREADS = {"threads", "N", "0", "threads (0 = all cores)"};
const cli_opt OPT_FORMAT = {"format", "FMT", "csv", "output format: csv or json"};
const cli_opt OPT_OUTPUT = {"output", "FILE", NULL, "write the output to FILE [default: stdout]"};
const cli_opt OPT_BLOWUP = {"blowup", "B", "1e6",
                            "a replica with |v| > B or a non-finite iterate counts as diverged"};
const cli_opt OPT_COORDS = {"coords", NULL, NULL, "also report the mean of each h_i^2"};
const cli_opt OPT_PROGRESS = {"progress", NULL, NULL,
                              "progress line on stderr also when it is not a terminal [default: "
                              "only on a terminal]"};

/* Memory a user may ask for: stay well inside the machine. */
#define CLI_MAX_DIM 100000LL

static double *parse_spectrum(const char *s, size_t dim)
{
    double *l = malloc(dim * sizeof *l);
    if (!l) cli_runtime_error("out of memory");
    if (strncmp(s, "linear:", 7) == 0) {
        char *copy = strdup(s + 7), *colon = strchr(copy, ':');
        double hi, lo;
        if (!colon) cli_usage_error("--spectrum linear:HI:LO needs two numbers, got '%s'", s);
        *colon = 0;
        if (cli_parse_double(copy, &hi) || cli_parse_double(colon + 1, &lo))
            cli_usage_error("--spectrum linear:HI:LO needs two finite numbers, got '%s'", s);
        free(copy);
        if (!(hi > lo && lo > 0))
            cli_usage_error("--spectrum linear:HI:LO needs HI > LO > 0, got '%s'", s);
        am_problem_spectrum_linear(hi, lo, dim, l);
        return l;
    }
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == ',';
    if (n != dim)
        cli_usage_error("--spectrum has %zu values but --dim is %zu, got '%s'", n, dim, s);
    char *copy = strdup(s), *save = NULL;
    size_t k = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (cli_parse_double(tok, &l[k]))
            cli_usage_error("--spectrum must be a comma list of finite numbers, got '%s'", s);
        k++;
    }
    free(copy);
    if (k != dim) cli_usage_error("--spectrum has an empty entry in '%s'", s);
    return l;
}

am_problem *cli_problem(const cli_args *a)
{
    size_t dim = (size_t)cli_int(a, "dim", 2, CLI_MAX_DIM);
    /* a comma list without --dim sets the dimension: --spectrum 4,3,2 means d = 3 */
    if (cli_given(a, "spectrum") && !cli_given(a, "dim") &&
        strncmp(cli_str(a, "spectrum"), "linear:", 7) != 0) {
        size_t n = 1;
        for (const char *q = cli_str(a, "spectrum"); *q; q++)
            n += *q == ',';
        if (n < 2)
            cli_usage_error("--spectrum needs at least 2 values (d >= 2), got '%s'",
                            cli_str(a, "spectrum"));
        dim = n;
    }
    const char *spec = cli_given(a, "spectrum") ? cli_str(a, "spectrum")
                       : dim == 4               ? "4,3,2,1"
                                                : "linear:4:1";
    double *l = parse_spectrum(spec, dim);
    for (size_t i = 0; i < dim; i++)
        if (!(l[i] > 0)) cli_usage_error("--spectrum values must be > 0, got '%s'", spec);
    for (size_t i = 1; i < dim; i++)
        if (l[i] > l[i - 1]) cli_usage_error("--spectrum must be non-increasing, got '%s'", spec);
    if (!(l[0] > l[1]))
        cli_usage_error("--spectrum needs an eigen-gap lambda_1 > lambda_2, got '%s'", spec);
    am_dist dist;
    char err[256];
    if (am_problem_dist_parse(cli_str(a, "dist"), &dist, err, sizeof err))
        cli_usage_error("--dist: %s", err);
    uint64_t rot = cli_u64(a, "rotate");
    if (rot && dim > 4000)
        cli_usage_error("--rotate needs --dim <= 4000 (dense eigenbasis), got %zu", dim);
    am_status st;
    am_problem *p = am_problem_alloc(dim, l, dist, rot, &st, err, sizeof err);
    free(l);
    if (!p && st == AM_ENOMEM) cli_runtime_error("cannot build the problem (%s)", err);
    if (!p) cli_usage_error("%s", err);
    return p;
}

am_msgd_params cli_msgd_params(const cli_args *a, const am_problem *p)
{
    am_msgd_params m = am_msgd_params_default();
    char err[256];
    m.eta = cli_double(a, "eta", 0, 1e6, 1, 0);
    m.mu = cli_double(a, "mu", 0, 1, 0, 1);
    if (am_delay_parse(cli_str(a, "delay"), &m.delay, err, sizeof err))
        cli_usage_error("--delay: %s", err);
    if (am_msgd_init_parse(cli_str(a, "init"), p->dim, &m.init, err, sizeof err))
        cli_usage_error("--init: %s", err);
    m.seed = cli_u64(a, "seed");
    m.blowup = cli_double(a, "blowup", 1, 1e300, 1, 0);
    for (int i = 0; a->opts[i]; i++)
        if (a->opts[i] == &OPT_COORDS) m.coords = cli_flag(a, "coords");
    am_status st = am_msgd_params_check(p, &m, err, sizeof err);
    if (st == AM_ENOMEM) cli_usage_error("--delay: %s", err);
    if (st) cli_usage_error("%s", err);
    return m;
}

am_grid cli_grid(const cli_args *a, double horizon)
{
    am_grid g;
    g.n = (size_t)cli_int(a, "grid", 1, 1000000);
    g.horizon = horizon;
    return g;
}

am_ensemble_params cli_ensemble_params(const cli_args *a)
{
    am_ensemble_params e = am_ensemble_params_default();
    e.replicas = (size_t)cli_int(a, "replicas", 1, 1000000000LL);
    e.threads = (int)cli_int(a, "threads", 0, 1024);
    return e;
}

int cli_json(const cli_args *a)
{
    const char *f = cli_str(a, "format");
    if (strcmp(f, "json") == 0) return 1;
    if (strcmp(f, "csv") == 0) return 0;
    cli_usage_error("--format must be csv or json, got '%s'", f);
}

void cli_params_problem(json_t *params, const am_problem *p)
{
    char buf[64];
    json_object_set_new(params, "dim", json_integer((json_int_t)p->dim));
    json_object_set_new(params, "spectrum", cli_json_doubles(p->lambda, p->dim));
    am_problem_dist_format(&p->dist, buf, sizeof buf);
    json_object_set_new(params, "dist", json_string(buf));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)p->rotate_seed);
    json_object_set_new(params, "rotate", json_string(buf));
}

void cli_params_msgd(json_t *params, const am_msgd_params *m)
{
    char buf[64];
    json_object_set_new(params, "eta", json_real(m->eta));
    json_object_set_new(params, "mu", json_real(m->mu));
    am_delay_format(&m->delay, buf, sizeof buf);
    json_object_set_new(params, "delay", json_string(buf));
    am_msgd_init_format(&m->init, buf, sizeof buf);
    json_object_set_new(params, "init", json_string(buf));
    /* seeds are 64-bit: a string keeps every bit in any JSON reader */
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->seed);
    json_object_set_new(params, "seed", json_string(buf));
    json_object_set_new(params, "blowup", json_real(m->blowup));
}

json_t *cli_json_root(const char *command, json_t *params)
{
    json_t *root = json_object();
    json_object_set_new(root, "command", json_string(command));
    json_object_set_new(root, "version", json_string(AM_VERSION));
    json_object_set_new(root, "params", params);
    return root;
}

json_t *cli_json_doubles(const double *x, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, isfinite(x[i]) ? json_real(x[i]) : json_null());
    return arr;
}

json_t *cli_json_number(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

FILE *cli_out_begin(cli_out *o, const cli_args *a)
{
    memset(o, 0, sizeof *o);
    o->path = cli_str(a, "output");
    o->mem = open_memstream(&o->buf, &o->len);
    if (!o->mem) cli_runtime_error("cannot allocate the output buffer");
    return o->mem;
}

/* Writes len bytes to fd; returns 0, or -1 with errno set. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The descriptor of this process that path names through its links (/dev/stdout,
 * /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N with this PID, or a link to one of them), or
 * -1. Writing to it keeps the descriptor's offset and O_APPEND: a log the shell opened with
 * >> keeps what it held. */
static int own_descriptor(const char *path)
{
    char cur[PATH_MAX], pre[64];
    snprintf(pre, sizeof pre, "/proc/%ld/fd/", (long)getpid());
    if (strlen(path) >= sizeof cur) return -1;
    strcpy(cur, path);
    for (int hop = 0; hop < 40; hop++) {
        const char *n = NULL;
        if (strncmp(cur, "/proc/self/fd/", 14) == 0)
            n = cur + 14;
        else if (strncmp(cur, "/dev/fd/", 8) == 0)
            n = cur + 8;
        else if (strncmp(cur, pre, strlen(pre)) == 0)
            n = cur + strlen(pre);
        if (n && *n) {
            char *end;
            long fd = strtol(n, &end, 10);
            if (!*end && fd >= 0 && fd < 1 << 20 && fcntl((int)fd, F_GETFL) >= 0) return (int)fd;
            return -1;
        }
        struct stat st;
        if (lstat(cur, &st) || !S_ISLNK(st.st_mode)) return -1;
        char link[PATH_MAX];
        ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0) return -1;
        link[k] = 0;
        if (link[0] == '/') {
            strcpy(cur, link);
        } else {
            char *slash = strrchr(cur, '/');
            size_t keep = slash ? (size_t)(slash - cur) + 1 : 0;
            if (keep + (size_t)k >= sizeof cur) return -1;
            memmove(cur + keep, link, (size_t)k + 1);
        }
    }
    return -1;
}

void cli_out_write_file(const char *path, const char *buf, size_t len)
{
    char target[PATH_MAX], why[PATH_MAX + 64];
    int through;
    if (cli_path_probe(path, 0, target, sizeof target, &through, why, sizeof why))
        cli_runtime_error("cannot write '%s': %s", path, why);
    struct stat st;
    int exists = stat(target, &st) == 0;
    if (through) {
        /* one of this process's descriptors (-o /dev/stdout): written to it, at its offset */
        int own = own_descriptor(path);
        if (own >= 0) {
            if (fflush(stdout) || write_all(own, buf, len))
                cli_runtime_error("cannot write '%s': %s", path, strerror(errno));
            return;
        }
        /* a device, a FIFO or another process's descriptor is written through, never replaced */
        int fd = open(target, O_WRONLY | O_CLOEXEC | (exists && S_ISREG(st.st_mode) ? O_TRUNC : 0));
        if (fd < 0) cli_runtime_error("cannot open '%s' for writing: %s", path, strerror(errno));
        int bad = write_all(fd, buf, len);
        int err = errno;
        if (close(fd) && !bad) bad = -1, err = errno;
        if (bad) cli_runtime_error("cannot write '%s': %s", path, strerror(err));
        return;
    }
    /* a regular or new file: a temporary of this process beside the target, renamed over it,
     * so that readers see the old or the new file, never a partial one */
    size_t n = strlen(target) + 32;
    char *tmp = malloc(n);
    if (!tmp) cli_runtime_error("out of memory");
    snprintf(tmp, n, "%s.tmp.%ld", target, (long)getpid());
    int fd = am_common_create_new(tmp, O_WRONLY, 0666);
    if (fd >= 0) am_file_lock(fd); /* a live temporary: cli_tmp_cleanup leaves it */
    if (fd < 0) {
        int err = errno;
        free(tmp);
        cli_runtime_error("cannot open '%s' for writing: %s", path, strerror(err));
    }
    int bad = write_all(fd, buf, len);
    if (!bad && exists) bad = fchmod(fd, st.st_mode & 07777);
    if (!bad) bad = fsync(fd);
    int err = errno;
    if (close(fd) && !bad) bad = -1, err = errno;
    if (!bad && rename(tmp, target)) bad = -1, err = errno;
    if (bad) {
        remove(tmp);
        free(tmp);
        cli_runtime_error("cannot write '%s': %s", path, strerror(err));
    }
    free(tmp);
}

void cli_out_commit(cli_out *o)
{
    if (fclose(o->mem)) cli_runtime_error("cannot finish the output buffer");
    if (am_sweep_rank() != 0) { /* MPI: rank 0 writes the output of every rank */
        free(o->buf);
        return;
    }
    if (!o->path || strcmp(o->path, "-") == 0) {
        if (fwrite(o->buf, 1, o->len, stdout) != o->len || fflush(stdout))
            cli_runtime_error("cannot write to stdout");
        free(o->buf);
        return;
    }
    cli_out_write_file(o->path, o->buf, o->len);
    free(o->buf);
}

/* Writes the JSON text t with every real number as its shortest round-trip decimal
 * (am_common_shortest: 0.0005, not 0.00050000000000000001; an integral value as an integer,
 * 222, not 222.0); strings and integers are copied unchanged. 0 on success. */
static int write_shortest(FILE *f, const char *t)
{
    int instr = 0;
    for (const char *p = t; *p;) {
        if (instr) {
            if (*p == '\\' && p[1]) {
                if (fputc(*p++, f) == EOF) return -1;
            } else if (*p == '"') {
                instr = 0;
            }
            if (fputc(*p++, f) == EOF) return -1;
        } else if (*p == '"') {
            instr = 1;
            if (fputc(*p++, f) == EOF) return -1;
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            size_t n = strspn(p, "+-.0123456789eE");
            if (memchr(p, '.', n) || memchr(p, 'e', n) || memchr(p, 'E', n)) {
                char num[40];
                am_common_shortest(strtod(p, NULL), num, sizeof num);
                if (fputs(num, f) == EOF) return -1;
            } else if (fwrite(p, 1, n, f) != n) {
                return -1;
            }
            p += n;
        } else if (fputc(*p++, f) == EOF) {
            return -1;
        }
    }
    return 0;
}

void cli_out_json(FILE *f, json_t *root)
{
    char *t = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    if (!t || write_shortest(f, t) || fputc('\n', f) == EOF)
        cli_runtime_error("cannot serialise JSON");
    free(t);
    json_decref(root);
}

int cli_is_integer(double x, double lo, double hi)
{
    return x >= lo && x <= hi && x == floor(x);
}

size_t *cli_size_list(const cli_args *a, const char *name, double lo, double hi, const char *why,
                      size_t *n)
{
    double *v = cli_double_list(a, name, n);
    size_t *out = cli_keep(malloc((*n + 1) * sizeof *out));
    if (!out) cli_runtime_error("out of memory");
    for (size_t i = 0; i < *n; i++) {
        if (!cli_is_integer(v[i], lo, hi))
            cli_usage_error("--%s values must be integers in [%.15g, %.15g]%s, got '%s'", name, lo,
                            hi, why, cli_str(a, name));
        out[i] = (size_t)v[i];
    }
    free(v);
    return out;
}

void cli_csv_double(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.10g", x);
    else
        fputs("nan", f);
}

void cli_csv_more(FILE *f, const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        fputc(',', f);
        cli_csv_double(f, v[k]);
    }
}

static void trajectory_csv(FILE *f, const double *t, const double *err, const double *norm,
                           const double *h2, size_t n, size_t d)
{
    fputs("t,err,norm", f);
    if (h2)
        for (size_t i = 0; i < d; i++)
            fprintf(f, ",h2_%zu", i + 1);
    fputc('\n', f);
    for (size_t g = 0; g < n; g++) {
        cli_csv_double(f, t[g]);
        fputc(',', f);
        cli_csv_double(f, err[g]);
        fputc(',', f);
        cli_csv_double(f, norm[g]);
        for (size_t i = 0; h2 && i < d; i++) {
            fputc(',', f);
            cli_csv_double(f, h2[g * d + i]);
        }
        fputc('\n', f);
    }
}

static void trajectory_json(json_t *root, const double *t, const double *err, const double *norm,
                            const double *h2, size_t n, size_t d)
{
    json_object_set_new(root, "t", cli_json_doubles(t, n));
    json_object_set_new(root, "err", cli_json_doubles(err, n));
    json_object_set_new(root, "norm", cli_json_doubles(norm, n));
    if (h2) {
        json_t *rows = json_array();
        for (size_t g = 0; g < n; g++)
            json_array_append_new(rows, cli_json_doubles(h2 + g * d, d));
        json_object_set_new(root, "h2", rows);
    }
}

void cli_trajectory_write(const cli_args *a, const char *command, json_t *params, json_t *solver,
                          const double *t, const double *err, const double *norm, const double *h2,
                          size_t n, size_t d)
{
    cli_out o;
    FILE *f = cli_out_begin(&o, a);
    if (!params) {
        trajectory_csv(f, t, err, norm, h2, n, d);
    } else {
        json_t *root = cli_json_root(command, params);
        trajectory_json(root, t, err, norm, h2, n, d);
        json_object_set_new(root, "solver", solver);
        cli_out_json(f, root);
    }
    cli_out_commit(&o);
}

am_msgd_params cli_limit_msgd(const cli_args *a, const am_problem *p)
{
    char err[256];
    am_msgd_params mp = am_msgd_params_default();
    mp.eta = cli_double(a, "eta", 0, 1e6, 1, 0);
    mp.mu = cli_double(a, "mu", 0, 1, 0, 1);
    if (am_msgd_init_parse(cli_str(a, "init"), p->dim, &mp.init, err, sizeof err))
        cli_usage_error("--init: %s", err);
    mp.seed = cli_u64(a, "seed");
    if (am_msgd_params_check(p, &mp, err, sizeof err)) cli_usage_error("%s", err);
    return mp;
}

void cli_limit_coords_check(int coords, size_t ngrid, size_t d)
{
    if (coords && 8.0 * (double)ngrid * (double)d > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--coords with --grid %zu and --dim %zu needs more memory than the limit",
                        ngrid, d);
}

void cli_params_limit(json_t *params, const am_msgd_params *m, double horizon, size_t ngrid)
{
    char buf[64];
    am_msgd_init_format(&m->init, buf, sizeof buf);
    json_object_set_new(params, "init", json_string(buf));
    json_object_set_new(params, "init_replica", json_integer(0));
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->seed);
    json_object_set_new(params, "seed", json_string(buf));
    json_object_set_new(params, "time", json_real(horizon));
    json_object_set_new(params, "grid", json_integer((json_int_t)ngrid));
}

void cli_refuse_workers_delay(const cli_args *a, const am_msgd_params *m)
{
    if (m->delay.kind == AM_DELAY_WORKERS)
        cli_usage_error("--delay workers:P:DIST is not available in %s (use amsgd mc), got '%s'",
                        a->cmd, cli_str(a, "delay"));
}

void cli_sde_moments_error(const cli_args *a)
{
    cli_usage_error("--dist: the SDE needs finite fourth moments (student:NU with NU > 4), "
                    "got '%s'",
                    cli_str(a, "dist"));
}

double cli_work_limit(void)
{
    const char *v = getenv("AMSGD_MAX_WORK");
    if (!v || !*v) return CLI_WORK_LIMIT;
    if (strcmp(v, "none") == 0) return INFINITY;
    double x;
    if (cli_parse_double(v, &x) || !(x > 0))
        cli_usage_error("AMSGD_MAX_WORK must be a number > 0 or 'none', got '%s'", v);
    return x;
}

void cli_work_check(const cli_args *a, double work, const char *how)
{
    double lim = cli_work_limit();
    if (!(work > lim)) return;
    cli_usage_error("%s: about %.3g updates of total work (%s) is above the limit of %.3g; "
                    "reduce the run or set AMSGD_MAX_WORK=%.3g (or none) to run it anyway",
                    a->cmd, work, how, lim, work * 1.01);
}

/* ---- progress of the ensembles ------------------------------------------------------- */

typedef struct {
    const char *cmd;
    int on;           /* cli_progress_start enabled it */
    int several;      /* the command runs several ensembles: number them */
    unsigned run;     /* ensemble runs started */
    size_t last;      /* replicas done at the last call */
    double t0, shown; /* start of the current run, time of the last line */
} cli_progress_state;

static cli_progress_state cli_progress;

static double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cli_progress_print(void *ctx, size_t done, size_t total)
{
    cli_progress_state *s = ctx;
    double now = cli_now();
    if (s->run == 0 || done < s->last || s->last == total) { /* a new ensemble run */
        s->run++;
        s->t0 = now;
        s->shown = 0;
    }
    s->last = done;
    if (done < total && now - s->shown < 0.2) return;
    s->shown = now;
    double el = now - s->t0;
    if (s != &cli_progress) /* cli_progress_cells: the study's own units */
        fprintf(stderr, "\r%s: %zu/%zu ensembles, %.1f s elapsed", cli_progress.cmd, done, total,
                el);
    else if (s->several)
        fprintf(stderr, "\r%s: ensemble %u: %zu/%zu replicas, %.1f s elapsed", s->cmd, s->run, done,
                total, el);
    else
        fprintf(stderr, "\r%s: ensemble: %zu/%zu replicas, %.1f s elapsed", s->cmd, done, total,
                el);
    if (done > 0 && done < total && el >= 0.5)
        fprintf(stderr, ", about %.1f s left   ", el / (double)done * (double)(total - done));
    else if (done < total)
        fputs(", estimating...         ", stderr);
    else
        fputs("                   ", stderr);
    fflush(stderr);
    cli_progress_line_open = 1;
}

static cli_progress_state cli_progress_study;

void cli_progress_cells(void *ctx, size_t done, size_t total)
{
    (void)ctx;
    if (cli_progress.on) cli_progress_print(&cli_progress_study, done, total);
}

int cli_progress_start(const cli_args *a, int several)
{
    int want = cli_has_opt(a, "progress") && cli_flag(a, "progress");
    if (!want && !isatty(STDERR_FILENO)) return 0;
    if (am_sweep_rank() != 0) return 0;
    memset(&cli_progress, 0, sizeof cli_progress);
    memset(&cli_progress_study, 0, sizeof cli_progress_study);
    cli_progress.cmd = a->cmd;
    cli_progress.on = 1;
    cli_progress.several = several;
    am_ensemble_progress_set(cli_progress_print, &cli_progress);
    return 1;
}

void cli_progress_end(void)
{
    am_ensemble_progress_set(NULL, NULL);
    cli_progress.on = 0;
    if (cli_progress_line_open) fputc('\n', stderr);
    cli_progress_line_open = 0;
}

size_t cli_optimizer_list(const cli_args *a, am_optim_kind *out, size_t max)
{
    const char *olist = cli_str(a, "optimizer");
    char err[512];
    char *copy = strdup(olist), *save = NULL;
    if (!copy) cli_runtime_error("out of memory");
    size_t n = 0, commas = 1;
    for (const char *p = olist; *p; p++)
        commas += *p == ',';
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max) cli_usage_error("--optimizer lists more than %zu entries", max);
        if (am_optim_parse(tok, &out[n], err, sizeof err)) cli_usage_error("--optimizer %s", err);
        n++;
    }
    free(copy);
    if (n != commas || n == 0) cli_usage_error("--optimizer has an empty entry in '%s'", olist);
    return n;
}

double cli_lr_tune(const cli_args *a, int *tune)
{
    double lr = cli_given(a, "lr") ? cli_double(a, "lr", 0, 1e6, 1, 0) : NAN;
    *tune = cli_flag(a, "tune");
    if (*tune && isfinite(lr)) cli_usage_error("--tune and --lr exclude each other");
    return lr;
}
