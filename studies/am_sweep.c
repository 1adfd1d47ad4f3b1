/*
 * am_sweep.c -- checkpointed, resumable, optionally MPI-distributed sweeps over cells, the
 * integer threshold search and the power-law fit of am_sweep.h (the fit itself is
 * am_fit_order of validate/am_fit.h on the usable points).
 *
 * Checkpoint durability: a new or rewritten file is written to PATH.tmp, fsync'd and renamed
 * over PATH (then the directory is fsync'd); each cell line is appended with one write(2)
 * followed by fsync(2), so after a kill at any instant the file holds every finished cell
 * and at most one torn final line.
 */
#include "am_sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "../validate/am_fit.h"

#ifdef AM_HAVE_MPI
#include <mpi.h>
#endif

#define AM_CKPT_VERSION 1

am_sweep_params am_sweep_params_default(void)
{
    am_sweep_params p;
    memset(&p, 0, sizeof p);
    p.fingerprint = "";
    return p;
}

int am_sweep_rank(void)
{
#ifdef AM_HAVE_MPI
    int init = 0, fin = 0, rank = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
#else
    return 0;
#endif
}

int am_sweep_nranks(void)
{
#ifdef AM_HAVE_MPI
    int init = 0, fin = 0, size = 1;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
#else
    return 1;
#endif
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- checkpoint lines ---------------------------------------------------------------- */

static char *header_line(const am_sweep_problem *pb, const char *fingerprint)
{
    json_t *h = json_object();
    json_object_set_new(h, "amsgd_checkpoint", json_integer(AM_CKPT_VERSION));
    json_object_set_new(h, "ncells", json_integer((json_int_t)pb->ncells));
    json_object_set_new(h, "nvalues", json_integer((json_int_t)pb->nvalues));
    json_object_set_new(h, "fingerprint", json_string(fingerprint ? fingerprint : ""));
    char *s = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(h);
    return s;
}

static char *cell_line(size_t cell, const double *v, size_t nv)
{
    json_t *o = json_object(), *arr = json_array();
    for (size_t j = 0; j < nv; j++)
        json_array_append_new(arr, isfinite(v[j]) ? json_real(v[j]) : json_null());
    json_object_set_new(o, "cell", json_integer((json_int_t)cell));
    json_object_set_new(o, "values", arr);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(o);
    return s;
}

/* Writes all of buf to fd. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int append_line(int fd, char *line)
{
    size_t n = strlen(line);
    char *buf = malloc(n + 2);
    if (!buf) return -1;
    memcpy(buf, line, n);
    buf[n] = '\n';
    int bad = write_all(fd, buf, n + 1) || fsync(fd);
    free(buf);
    return bad ? -1 : 0;
}

static void fsync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(copy);
}

/* Rewrites the checkpoint (header + finished cells) through PATH.tmp and rename(); returns an
 * O_APPEND descriptor of the new file, or -1. */
static int rewrite_checkpoint(const char *path, const am_sweep_problem *pb, const char *fp,
                              const double *values, const unsigned char *done)
{
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    if (!tmp) return -1;
    snprintf(tmp, n, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int bad = fd < 0;
    char *h = header_line(pb, fp);
    if (!bad) bad = !h || append_line(fd, h);
    free(h);
    for (size_t c = 0; c < pb->ncells && !bad; c++) {
        if (!done[c]) continue;
        char *line = cell_line(c, values + c * pb->nvalues, pb->nvalues);
        bad = !line || append_line(fd, line);
        free(line);
    }
    if (fd >= 0 && close(fd)) bad = 1;
    if (!bad && rename(tmp, path)) bad = 1;
    if (bad) {
        remove(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    fsync_dir(path);
    return open(path, O_WRONLY | O_APPEND);
}

/* Reads a checkpoint into values/done. A missing file is an empty checkpoint. */
static am_status read_checkpoint(const char *path, const am_sweep_problem *pb, const char *fp,
                                 double *values, unsigned char *done, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT) return AM_OK;
        snprintf(err, errlen, "cannot read checkpoint '%s': %s", path, strerror(errno));
        return AM_EIO;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    size_t lineno = 0;
    am_status st = AM_OK;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        int complete = len > 0 && line[len - 1] == '\n';
        json_error_t jerr;
        json_t *o = json_loads(line, JSON_DECODE_ANY, &jerr);
        if (!o || !json_is_object(o)) {
            json_decref(o);
            if (!complete) break; /* torn last line: the kill came during its write */
            snprintf(err, errlen, "checkpoint '%s' line %zu is not a JSON object", path, lineno);
            st = AM_EINVAL;
            break;
        }
        if (lineno == 1) {
            json_t *ver = json_object_get(o, "amsgd_checkpoint");
            json_t *nc = json_object_get(o, "ncells"), *nv = json_object_get(o, "nvalues");
            json_t *fps = json_object_get(o, "fingerprint");
            if (!json_is_integer(ver) || json_integer_value(ver) != AM_CKPT_VERSION ||
                !json_is_integer(nc) || !json_is_integer(nv) || !json_is_string(fps)) {
                snprintf(err, errlen, "'%s' is not an amsgd checkpoint", path);
                st = AM_EINVAL;
            } else if ((size_t)json_integer_value(nc) != pb->ncells ||
                       (size_t)json_integer_value(nv) != pb->nvalues ||
                       strcmp(json_string_value(fps), fp ? fp : "") != 0) {
                snprintf(err, errlen,
                         "checkpoint '%s' was written with different parameters; remove it or "
                         "rerun with the same parameters",
                         path);
                st = AM_EINVAL;
            }
            json_decref(o);
            if (st) break;
            continue;
        }
        json_t *jc = json_object_get(o, "cell"), *jv = json_object_get(o, "values");
        if (!json_is_integer(jc) || json_integer_value(jc) < 0 ||
            (size_t)json_integer_value(jc) >= pb->ncells || !json_is_array(jv) ||
            json_array_size(jv) != pb->nvalues) {
            json_decref(o);
            if (!complete) break;
            snprintf(err, errlen, "checkpoint '%s' line %zu is not a cell of this sweep", path,
                     lineno);
            st = AM_EINVAL;
            break;
        }
        size_t c = (size_t)json_integer_value(jc);
        for (size_t j = 0; j < pb->nvalues; j++) {
            json_t *x = json_array_get(jv, j);
            values[c * pb->nvalues + j] = json_is_number(x) ? json_number_value(x) : NAN;
        }
        done[c] = 1;
        json_decref(o);
    }
    if (st == AM_OK && lineno == 0) {
        /* empty file: treat as absent */
    }
    free(line);
    fclose(f);
    return st;
}

/* ---- the sweep ----------------------------------------------------------------------- */

typedef struct {
    const am_sweep_problem *pb;
    const am_sweep_params *par;
    double *values;
    unsigned char *done;
    size_t ndone, computed;
    int fd;
    double t0;
} sweep_state;

/* Records a finished cell on rank 0: table, checkpoint line, progress. */
static am_status record_cell(sweep_state *s, size_t c, const double *v, char *err, size_t errlen)
{
    const am_sweep_problem *pb = s->pb;
    if (v != s->values + c * pb->nvalues)
        memcpy(s->values + c * pb->nvalues, v, pb->nvalues * sizeof *v);
    if (!s->done[c]) s->ndone++;
    s->done[c] = 1;
    s->computed++;
    if (s->fd >= 0) {
        char *line = cell_line(c, v, pb->nvalues);
        int bad = !line || append_line(s->fd, line);
        free(line);
        if (bad) {
            snprintf(err, errlen, "cannot append to checkpoint '%s': %s", s->par->checkpoint,
                     strerror(errno));
            return AM_EIO;
        }
    }
    if (s->par->progress)
        s->par->progress(s->par->progress_ctx, s->ndone, pb->ncells, s->computed,
                         now_seconds() - s->t0);
    return AM_OK;
}

#ifdef AM_HAVE_MPI
enum { TAG_CELL = 7301, TAG_END = 7302 };

/* Rank 0: receives every pending message (blocking until `until_end` ranks have ended if
 * block is set). */
static am_status drain(sweep_state *s, double *msg, int *ended, int nranks, int block,
                       am_status *remote, char *err, size_t errlen)
{
    size_t nv = s->pb->nvalues;
    for (;;) {
        int flag = 1;
        MPI_Status ms;
        if (block) {
            if (*ended >= nranks - 1) return AM_OK;
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &ms);
        } else {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
            if (!flag) return AM_OK;
        }
        MPI_Recv(msg, (int)(nv + 1), MPI_DOUBLE, ms.MPI_SOURCE, ms.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (ms.MPI_TAG == TAG_END) {
            (*ended)++;
            if (msg[0] != 0 && *remote == AM_OK) *remote = (am_status)(int)msg[0];
            continue;
        }
        am_status st = record_cell(s, (size_t)msg[0], msg + 1, err, errlen);
        if (st) return st;
    }
}
#endif

am_status am_sweep_run(const am_sweep_problem *pb, const am_sweep_params *par, double *values,
                       unsigned char *done, size_t *ndone, char *err, size_t errlen)
{
    if (err && errlen) err[0] = 0;
    *ndone = 0;
    if (!pb || !par || !pb->run_cell || pb->nvalues == 0) return AM_EINVAL;
    size_t nv = pb->nvalues;
    for (size_t i = 0; i < pb->ncells * nv; i++)
        values[i] = NAN;
    memset(done, 0, pb->ncells);
    int rank = am_sweep_rank(), nranks = am_sweep_nranks();
    sweep_state s = {pb, par, values, done, 0, 0, -1, now_seconds()};
    am_status st = AM_OK;

    if (rank == 0 && par->checkpoint) {
        if (par->resume)
            st = read_checkpoint(par->checkpoint, pb, par->fingerprint, values, done, err, errlen);
        if (st == AM_OK) {
            s.fd = rewrite_checkpoint(par->checkpoint, pb, par->fingerprint, values, done);
            if (s.fd < 0) {
                snprintf(err, errlen, "cannot write checkpoint '%s': %s", par->checkpoint,
                         strerror(errno));
                st = AM_EIO;
            }
        }
    }
#ifdef AM_HAVE_MPI
    if (nranks > 1) {
        int sti = (int)st;
        MPI_Bcast(&sti, 1, MPI_INT, 0, MPI_COMM_WORLD);
        st = (am_status)sti;
        if (st == AM_OK) MPI_Bcast(done, (int)pb->ncells, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    }
#endif
    if (st) {
        if (s.fd >= 0) close(s.fd);
        return st;
    }
    for (size_t c = 0; c < pb->ncells; c++)
        s.ndone += done[c];

    double *buf = malloc((nv + 1) * sizeof *buf);
    if (!buf) {
        if (s.fd >= 0) close(s.fd);
        return AM_ENOMEM;
    }
#ifdef AM_HAVE_MPI
    int ended = 0;
    am_status remote = AM_OK;
#endif
    for (size_t c = (size_t)rank; c < pb->ncells; c += (size_t)nranks) {
        if (done[c]) continue;
        if (par->stop && *par->stop) break;
        st = pb->run_cell(pb->ctx, c, buf + 1);
        if (st == AM_ECANCELED) { /* the cell saw the stop flag: not kept, the sweep ends */
            st = AM_OK;
            break;
        }
        if (st) break;
        if (rank == 0) {
            st = record_cell(&s, c, buf + 1, err, errlen);
            if (st) break;
#ifdef AM_HAVE_MPI
            if (nranks > 1) {
                st = drain(&s, buf, &ended, nranks, 0, &remote, err, errlen);
                if (st) break;
            }
#endif
        }
#ifdef AM_HAVE_MPI
        else {
            buf[0] = (double)c;
            MPI_Send(buf, (int)(nv + 1), MPI_DOUBLE, 0, TAG_CELL, MPI_COMM_WORLD);
            memcpy(values + c * nv, buf + 1, nv * sizeof *buf);
            done[c] = 1;
            s.ndone++;
        }
#endif
    }
#ifdef AM_HAVE_MPI
    if (nranks > 1) {
        if (rank == 0) {
            am_status st2 = drain(&s, buf, &ended, nranks, 1, &remote, err, errlen);
            if (!st) st = st2;
            if (!st) st = remote;
        } else {
            buf[0] = (double)st;
            MPI_Send(buf, (int)(nv + 1), MPI_DOUBLE, 0, TAG_END, MPI_COMM_WORLD);
        }
    }
#endif
    free(buf);
    if (s.fd >= 0) close(s.fd);
    *ndone = s.ndone;
    return st;
}

/* ---- search and fit ------------------------------------------------------------------ */

am_status am_sweep_search_int(am_status (*pred)(void *ctx, uint64_t n, int *out), void *ctx,
                              uint64_t lo, uint64_t nmax, uint64_t *result, int *found)
{
    *found = 0;
    *result = nmax + 1;
    if (nmax <= lo) return AM_OK;
    uint64_t step = 1, hi = 0;
    int truth = 0;
    for (;;) {
        uint64_t n = lo + step > nmax || lo + step < lo ? nmax : lo + step;
        am_status st = pred(ctx, n, &truth);
        if (st) return st;
        if (truth) {
            hi = n;
            break;
        }
        lo = n;
        if (n == nmax) return AM_OK;
        step *= 2;
    }
    /* pred(lo) false, pred(hi) true */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        am_status st = pred(ctx, mid, &truth);
        if (st) return st;
        if (truth)
            hi = mid;
        else
            lo = mid;
    }
    *result = hi;
    *found = 1;
    return AM_OK;
}

am_status am_sweep_fit_power(const double *x, const double *y, size_t n, double *p, double *logc)
{
    double *u = malloc(2 * (n ? n : 1) * sizeof *u);
    if (!u) return AM_ENOMEM;
    double *w = u + (n ? n : 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] > 0 && y[i] > 0 && isfinite(x[i]) && isfinite(y[i])) {
            u[m] = x[i];
            w[m++] = y[i];
        }
    am_fit_result fr;
    am_status st = m < 2 ? AM_EDOM : am_fit_order(u, w, m, NULL, &fr);
    free(u);
    if (st == AM_EINVAL) st = AM_EDOM; /* every usable x equal */
    if (st) return st;
    *p = fr.slope;
    *logc = fr.intercept;
    return AM_OK;
}
