/*
 * am_sweep.c -- checkpointed, resumable, optionally MPI-distributed sweeps over cells, the
 * integer threshold search and the power-law fit of am_sweep.h (the fit itself is
 * am_fit_order of validate/am_fit.h on the usable points).
 *
 * Checkpoint durability: a new or rewritten file is written to PATH.tmp.PID, fsync'd and
 * renamed over PATH (then the directory is fsync'd); each cell line is appended with one
 * write(2) followed by fsync(2), so after a kill at any instant the file holds every finished
 * cell and at most one torn final line. Trust: every line ends with the CRC-32 (zlib) of its
 * text, every value is checked (a number or null, then the sweep's own check_cell), a cell
 * may appear once; the run holds an exclusive fcntl lock (open file description) on the
 * file it appends to, taken on PATH before reading and on the rewrite before its rename.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "am_sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <zlib.h>

#include "../core/am_ensemble.h"
#include "../validate/am_fit.h"

#ifdef AM_HAVE_MPI
#include <mpi.h>
#include <pthread.h>
#endif

#define AM_CKPT_VERSION 2

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

/* Appends " XXXXXXXX" (the CRC-32 of the text, 8 hex digits) to a malloc'd line. */
static char *with_crc(char *text)
{
    if (!text) return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 10);
    if (!line) {
        free(text);
        return NULL;
    }
    unsigned long crc = crc32(0L, (const Bytef *)line, (uInt)n);
    snprintf(line + n, 10, " %08lx", crc & 0xffffffffUL);
    return line;
}

static char *header_line(const am_sweep_problem *pb, const char *fingerprint)
{
    json_t *h = json_object();
    json_object_set_new(h, "amsgd_checkpoint", json_integer(AM_CKPT_VERSION));
    json_object_set_new(h, "ncells", json_integer((json_int_t)pb->ncells));
    json_object_set_new(h, "nvalues", json_integer((json_int_t)pb->nvalues));
    json_object_set_new(h, "fingerprint", json_string(fingerprint ? fingerprint : ""));
    char *s = json_dumps(h, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(h);
    return with_crc(s);
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
    return with_crc(s);
}

/* Checks and strips the checksum of a complete line (its '\n' removed): 0 if it matches. */
static int strip_crc(char *line, size_t len)
{
    if (len < 10 || line[len - 9] != ' ') return -1;
    for (size_t i = len - 8; i < len; i++)
        if (!((line[i] >= '0' && line[i] <= '9') || (line[i] >= 'a' && line[i] <= 'f'))) return -1;
    unsigned long want = strtoul(line + len - 8, NULL, 16);
    line[len - 9] = 0;
    unsigned long crc = crc32(0L, (const Bytef *)line, (uInt)(len - 9)) & 0xffffffffUL;
    return crc == want ? 0 : -1;
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

/* Opens (creating it if absent) and locks the checkpoint; -1 with err set on failure, the
 * status in *st (AM_EINVAL when another run holds it, AM_EIO otherwise). After the lock the
 * descriptor must still name the file at path (a run that renamed its rewrite over path in
 * between owns the new file), else it is reopened. */
static int open_locked(const char *path, am_status *st, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(path, O_RDWR | O_CREAT, 0644);
        if (fd < 0) {
            snprintf(err, errlen, "cannot write checkpoint '%s': %s", path, strerror(errno));
            *st = AM_EIO;
            return -1;
        }
        if (am_file_lock(fd)) {
            int e = errno;
            close(fd);
            if (e == EAGAIN || e == EACCES) {
                snprintf(err, errlen,
                         "checkpoint '%s' is in use by another run; wait for it to end or "
                         "choose another file",
                         path);
                *st = AM_EINVAL;
            } else {
                snprintf(err, errlen, "cannot lock checkpoint '%s': %s", path, strerror(e));
                *st = AM_EIO;
            }
            return -1;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino)
            return fd;
        close(fd);
    }
    snprintf(err, errlen, "cannot lock checkpoint '%s': it keeps being replaced", path);
    *st = AM_EIO;
    return -1;
}

/* Rewrites the checkpoint (header + finished cells) through PATH.tmp.PID, locked before it
 * is renamed over PATH; returns its descriptor (positioned at the end, still locked), or -1
 * with errno set. */
static int rewrite_checkpoint(const char *path, const am_sweep_problem *pb, const char *fp,
                              const double *values, const unsigned char *done)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp) return -1;
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    int fd = am_common_create_new(tmp, O_RDWR, 0644); /* anew, never through a link */
    int bad = fd < 0 || am_file_lock(fd);
    char *h = bad ? NULL : header_line(pb, fp);
    if (!bad) bad = !h || append_line(fd, h);
    free(h);
    for (size_t c = 0; c < pb->ncells && !bad; c++) {
        if (!done[c]) continue;
        char *line = cell_line(c, values + c * pb->nvalues, pb->nvalues);
        bad = !line || append_line(fd, line);
        free(line);
    }
    if (!bad && rename(tmp, path)) bad = 1;
    if (bad) {
        int e = errno;
        if (fd >= 0) close(fd);
        remove(tmp);
        free(tmp);
        errno = e;
        return -1;
    }
    free(tmp);
    fsync_dir(path);
    return fd;
}

/* The first top-level key of two fingerprints (JSON objects) whose values differ, into key,
 * with both values as compact JSON (at most 60 characters each); 0 when none is found (a
 * fingerprint that is not a JSON object). */
static int fingerprint_diff(const char *file, const char *here, char *key, size_t keylen,
                            char *vfile, char *vhere, size_t vlen)
{
    json_t *a = json_loads(file, 0, NULL), *b = json_loads(here ? here : "", 0, NULL);
    int found = 0;
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *va;
        json_object_foreach(a, k, va)
        {
            json_t *vb = json_object_get(b, k);
            if (vb && json_equal(va, vb)) continue;
            snprintf(key, keylen, "%s", k);
            char *ta = json_dumps(va, JSON_COMPACT | JSON_ENCODE_ANY);
            char *tb = vb ? json_dumps(vb, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
            snprintf(vfile, vlen, "%.60s", ta ? ta : "?");
            snprintf(vhere, vlen, "%.60s", tb ? tb : "absent");
            free(ta);
            free(tb);
            found = 1;
            break;
        }
        if (!found) { /* a key of this run that the file lacks */
            json_object_foreach(b, k, va)
            {
                if (json_object_get(a, k)) continue;
                char *tb = json_dumps(va, JSON_COMPACT | JSON_ENCODE_ANY);
                snprintf(key, keylen, "%s", k);
                snprintf(vfile, vlen, "absent");
                snprintf(vhere, vlen, "%.60s", tb ? tb : "?");
                free(tb);
                found = 1;
                break;
            }
        }
    }
    json_decref(a);
    json_decref(b);
    return found;
}

void am_sweep_fingerprint_build(json_t *fp, const char *blas)
{
    json_object_set_new(fp, "version", json_string(AM_VERSION));
    json_object_set_new(fp, "numerics", json_integer(AM_NUMERICS_VERSION));
    if (blas) json_object_set_new(fp, "blas", json_string(blas));
}

/* The reason a checkpoint's header does not match this sweep, naming the real cause: another
 * build (the fingerprint's version, engine, random streams or study version differ), another
 * parameter (the first key that differs), or another size. */
static void header_mismatch(const char *path, json_t *nc, json_t *nv, const char *ffile,
                            const char *fhere, const am_sweep_problem *pb, char *err, size_t errlen)
{
    static const char *const build_keys[] = {"version", "numerics", "engine",
                                             "rng",     "stream",   "study_version"};
    char key[64], vf[64], vh[64];
    const int diff = fingerprint_diff(ffile, fhere, key, sizeof key, vf, vh, sizeof vf);
    const char *core =
        diff && strcmp(key, "blas") == 0 && vf[0] == '"' && vh[0] == '"' ? strrchr(vf, ' ') : NULL;
    if (core) { /* vf is "\"OpenBLAS 0.3.21 SkylakeX\"": the kernel is its last word */
        snprintf(err, errlen,
                 "checkpoint '%s' was computed with another BLAS kernel (%s, this process %s), "
                 "whose rounding gives other results; resume it with OPENBLAS_CORETYPE=%.*s on "
                 "a CPU that has that kernel, or remove it to start anew",
                 path, vf, vh, (int)strcspn(core + 1, "\""), core + 1);
    } else if (diff) {
        int build = strcmp(key, "blas") == 0;
        for (size_t i = 0; i < sizeof build_keys / sizeof *build_keys; i++)
            build |= strcmp(key, build_keys[i]) == 0;
        snprintf(err, errlen,
                 build ? "checkpoint '%s' was written by another build of amsgd (%s %s, this "
                         "build %s); remove it to start anew"
                       : "checkpoint '%s' was written with other parameters (%s %s there, %s "
                         "now); remove it or rerun with the parameters it was written with",
                 path, key, vf, vh);
    } else if (strcmp(ffile, fhere ? fhere : "") != 0) {
        snprintf(err, errlen,
                 "checkpoint '%s' was written with different parameters; remove it or rerun "
                 "with the same parameters",
                 path);
    } else {
        snprintf(err, errlen,
                 "checkpoint '%s' holds %lld cells of %lld values, this sweep has %zu of %zu; "
                 "remove it or rerun with the parameters it was written with",
                 path, (long long)json_integer_value(nc), (long long)json_integer_value(nv),
                 pb->ncells, pb->nvalues);
    }
}

/* Validates the header line (checksum stripped) against the sweep. */
static am_status check_header(json_t *o, const char *path, const am_sweep_problem *pb,
                              const char *fp, char *err, size_t errlen)
{
    json_t *ver = json_object_get(o, "amsgd_checkpoint");
    json_t *nc = json_object_get(o, "ncells"), *nv = json_object_get(o, "nvalues");
    json_t *fps = json_object_get(o, "fingerprint");
    if (!json_is_integer(ver) || !json_is_integer(nc) || !json_is_integer(nv) ||
        !json_is_string(fps)) {
        snprintf(err, errlen, "'%s' is not an amsgd checkpoint", path);
        return AM_EINVAL;
    }
    if (json_integer_value(ver) != AM_CKPT_VERSION) {
        snprintf(err, errlen,
                 "checkpoint '%s' has format %lld, this build reads format %d; remove it to "
                 "start anew",
                 path, (long long)json_integer_value(ver), AM_CKPT_VERSION);
        return AM_EINVAL;
    }
    if (json_integer_value(nc) < 0 || (size_t)json_integer_value(nc) != pb->ncells ||
        json_integer_value(nv) < 0 || (size_t)json_integer_value(nv) != pb->nvalues ||
        strcmp(json_string_value(fps), fp ? fp : "") != 0) {
        header_mismatch(path, nc, nv, json_string_value(fps), fp, pb, err, errlen);
        return AM_EINVAL;
    }
    return AM_OK;
}

/* Validates a cell line (checksum stripped) and stores its values; why receives the reason. */
static am_status read_cell(json_t *o, const am_sweep_problem *pb, const am_sweep_params *par,
                           double *values, unsigned char *done, double *tmp, char *why,
                           size_t whylen)
{
    json_t *jc = json_object_get(o, "cell"), *jv = json_object_get(o, "values");
    if (!json_is_integer(jc) || json_integer_value(jc) < 0 ||
        (size_t)json_integer_value(jc) >= pb->ncells || !json_is_array(jv) ||
        json_array_size(jv) != pb->nvalues || json_object_size(o) != 2) {
        snprintf(why, whylen, "is not a cell of this sweep");
        return AM_EINVAL;
    }
    size_t c = (size_t)json_integer_value(jc);
    if (done[c]) {
        snprintf(why, whylen, "repeats cell %zu", c);
        return AM_EINVAL;
    }
    for (size_t j = 0; j < pb->nvalues; j++) {
        json_t *x = json_array_get(jv, j);
        if (json_is_null(x))
            tmp[j] = NAN;
        else if (json_is_number(x) && isfinite(json_number_value(x)))
            tmp[j] = json_number_value(x);
        else {
            snprintf(why, whylen, "value %zu of cell %zu is not a number", j, c);
            return AM_EINVAL;
        }
    }
    if (par->check_cell && par->check_cell(pb->ctx, c, tmp, why, whylen)) {
        char inner[256];
        snprintf(inner, sizeof inner, "%.*s", (int)sizeof inner - 1, why);
        snprintf(why, whylen, "cell %zu: %s", c, inner);
        return AM_EINVAL;
    }
    memcpy(values + c * pb->nvalues, tmp, pb->nvalues * sizeof *tmp);
    done[c] = 1;
    return AM_OK;
}

/* Reads the locked checkpoint fd into values/done. An empty file is an empty checkpoint. */
static am_status read_checkpoint(int fd, const char *path, const am_sweep_problem *pb,
                                 const am_sweep_params *par, const char *fp, double *values,
                                 unsigned char *done, char *err, size_t errlen)
{
    int dfd = dup(fd);
    FILE *f = dfd >= 0 ? fdopen(dfd, "rb") : NULL;
    double *tmp = malloc(pb->nvalues * sizeof *tmp);
    if (!f || !tmp) {
        if (f)
            fclose(f);
        else if (dfd >= 0)
            close(dfd);
        free(tmp);
        snprintf(err, errlen, "cannot read checkpoint '%s': %s", path,
                 tmp ? strerror(errno) : "out of memory");
        return tmp ? AM_EIO : AM_ENOMEM;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    size_t lineno = 0;
    am_status st = AM_OK;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        int complete = len > 0 && line[len - 1] == '\n';
        if (!complete) break; /* torn last line: the kill came during its write */
        line[--len] = 0;
        char why[320] = "";
        if (strip_crc(line, (size_t)len)) {
            json_t *old = lineno == 1 ? json_loads(line, 0, NULL) : NULL;
            json_t *oldver = old ? json_object_get(old, "amsgd_checkpoint") : NULL;
            if (json_is_integer(oldver) && json_integer_value(oldver) == AM_CKPT_VERSION)
                snprintf(err, errlen,
                         "checkpoint '%s' line 1 (the header): checksum mismatch; the file is "
                         "damaged, remove it to start anew",
                         path);
            else if (json_is_integer(oldver))
                snprintf(err, errlen,
                         "checkpoint '%s' has format %lld, this build reads format %d; remove "
                         "it to start anew",
                         path,
                         (long long)json_integer_value(json_object_get(old, "amsgd_checkpoint")),
                         AM_CKPT_VERSION);
            else if (lineno == 1)
                snprintf(err, errlen, "'%s' is not an amsgd checkpoint", path);
            else
                snprintf(err, errlen, "checkpoint '%s' line %zu: checksum mismatch", path, lineno);
            json_decref(old);
            st = AM_EINVAL;
            break;
        }
        json_error_t jerr;
        json_t *o = json_loads(line, 0, &jerr);
        if (!o || !json_is_object(o)) {
            json_decref(o);
            snprintf(err, errlen, "checkpoint '%s' line %zu is not a JSON object", path, lineno);
            st = AM_EINVAL;
            break;
        }
        if (lineno == 1)
            st = check_header(o, path, pb, fp, err, errlen);
        else if ((st = read_cell(o, pb, par, values, done, tmp, why, sizeof why)))
            snprintf(err, errlen, "checkpoint '%s' line %zu %s", path, lineno, why);
        json_decref(o);
        if (st) break;
    }
    free(line);
    free(tmp);
    fclose(f);
    if (st) {
        /* nothing of a refused checkpoint is used */
        for (size_t i = 0; i < pb->ncells * pb->nvalues; i++)
            values[i] = NAN;
        memset(done, 0, pb->ncells);
    }
    return st;
}

/* 1 if the file is empty or opens like an amsgd checkpoint (of any format): a file that
 * does not is never started anew over. */
static int is_checkpoint_or_empty(int fd)
{
    static const char magic[] = "{\"amsgd_checkpoint\":";
    char buf[sizeof magic - 1];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    if (n == 0) return 1;
    return n == (ssize_t)sizeof buf && memcmp(buf, magic, sizeof buf) == 0;
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
    long pause_ms; /* test hook: AMSGD_TEST_CELL_PAUSE_MS, 0 when unset */
} sweep_state;

/* The test-only pause after each recorded cell, in milliseconds: the environment variable
 * AMSGD_TEST_CELL_PAUSE_MS (0 to 10000; unset, empty or malformed is 0). It makes the
 * kill, interrupt and resume tests independent of the machine's speed: a test that waits
 * for N checkpointed cells then has at least that long before cell N+1 is written. A signal
 * cuts the pause short (nanosleep returns EINTR) and the stop flag is seen at once. */
static long test_cell_pause_ms(void)
{
    const char *e = getenv("AMSGD_TEST_CELL_PAUSE_MS");
    if (!e || !*e) return 0;
    char *end;
    long ms = strtol(e, &end, 10);
    return *end || ms < 0 || ms > 10000 ? 0 : ms;
}

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
    if (s->pause_ms > 0) {
        struct timespec ts = {s->pause_ms / 1000, (s->pause_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return AM_OK;
}

#ifdef AM_HAVE_MPI
enum { TAG_CELL = 7301, TAG_END = 7302, TAG_WORK = 7303, TAG_FAIL = 7304 };

/* The work queue of an MPI sweep on rank 0: the cells not yet done, in cell order, handed
 * out one at a time to whichever rank asks (rank 0's own computing thread included). */
typedef struct {
    sweep_state *s;
    size_t *todo, ntodo, next;
    int nranks, ended, stopping;
    unsigned char *told; /* [nranks]: rank r has been sent the end of the queue */
    double *msg;         /* [nvalues + 1]: a received cell */
    am_status local;     /* a failure of rank 0 (its cell or the checkpoint) */
    am_status remote;    /* the first failure another rank reported */
    char *err;
    size_t errlen;
    pthread_mutex_t lock;
} work_queue;

/* The next cell to hand out, or -1 when the queue is empty or the sweep stops (lock held). */
static long long queue_take(work_queue *q)
{
    const am_sweep_params *par = q->s->par;
    if (par->stop && *par->stop) q->stopping = 1;
    if (q->stopping || q->next >= q->ntodo) return -1;
    return (long long)q->todo[q->next++];
}

/* Sends rank r its next cell, or the end of the queue once. */
static void queue_send(work_queue *q, int r)
{
    if (q->told[r]) return;
    pthread_mutex_lock(&q->lock);
    long long c = queue_take(q);
    pthread_mutex_unlock(&q->lock);
    if (c < 0) q->told[r] = 1;
    MPI_Send(&c, 1, MPI_LONG_LONG, r, TAG_WORK, MPI_COMM_WORLD);
}

/* Rank 0's dispatcher: serves the other ranks until each has ended; polls, sleeping 0.2 ms
 * between empty polls, so that it takes no core from the cells. */
static void *queue_serve(void *arg)
{
    work_queue *q = arg;
    size_t nv = q->s->pb->nvalues;
    double *msg = q->msg;
    for (int r = 1; r < q->nranks; r++)
        queue_send(q, r);
    while (q->ended < q->nranks - 1) {
        int flag = 0;
        MPI_Status ms;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &ms);
        if (!flag) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
            continue;
        }
        int r = ms.MPI_SOURCE;
        if (ms.MPI_TAG == TAG_CELL) {
            MPI_Recv(msg, (int)(nv + 1), MPI_DOUBLE, r, TAG_CELL, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            pthread_mutex_lock(&q->lock);
            am_status st = record_cell(q->s, (size_t)msg[0], msg + 1, q->err, q->errlen);
            if (st && q->local == AM_OK) q->local = st;
            if (st) q->stopping = 1;
            pthread_mutex_unlock(&q->lock);
            queue_send(q, r);
        } else {
            double code;
            MPI_Recv(&code, 1, MPI_DOUBLE, r, ms.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (ms.MPI_TAG == TAG_END) {
                q->ended++;
                continue;
            }
            /* TAG_FAIL: the rank's cell failed or saw the stop flag; the sweep stops */
            pthread_mutex_lock(&q->lock);
            am_status st = (am_status)(int)code;
            if (st != AM_ECANCELED && q->remote == AM_OK) q->remote = st;
            q->stopping = 1;
            pthread_mutex_unlock(&q->lock);
            queue_send(q, r);
        }
    }
    return NULL;
}

/* A rank other than 0: computes the cells rank 0 hands out until the end of the queue. */
static am_status queue_work(sweep_state *s, double *buf)
{
    const am_sweep_problem *pb = s->pb;
    size_t nv = pb->nvalues;
    am_status mine = AM_OK;
    for (;;) {
        long long c;
        MPI_Recv(&c, 1, MPI_LONG_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (c < 0) break;
        am_status st = s->par->stop && *s->par->stop ? AM_ECANCELED
                                                     : pb->run_cell(pb->ctx, (size_t)c, buf + 1);
        if (st) { /* not kept; rank 0 stops the queue and ends this rank */
            double code = (double)st;
            if (st != AM_ECANCELED && mine == AM_OK) mine = st;
            MPI_Send(&code, 1, MPI_DOUBLE, 0, TAG_FAIL, MPI_COMM_WORLD);
            continue;
        }
        buf[0] = (double)c;
        MPI_Send(buf, (int)(nv + 1), MPI_DOUBLE, 0, TAG_CELL, MPI_COMM_WORLD);
        memcpy(s->values + (size_t)c * nv, buf + 1, nv * sizeof *buf);
        s->done[c] = 1;
        s->ndone++;
    }
    double code = (double)mine;
    MPI_Send(&code, 1, MPI_DOUBLE, 0, TAG_END, MPI_COMM_WORLD);
    return mine;
}

/* Rank 0 of an MPI sweep: a dispatcher thread serves the queue while this thread computes
 * cells from it too (or, without MPI_THREAD_SERIALIZED, only serves it). */
static am_status queue_run(sweep_state *s, int nranks, double *buf, char *err, size_t errlen)
{
    const am_sweep_problem *pb = s->pb;
    work_queue q;
    memset(&q, 0, sizeof q);
    q.s = s;
    q.nranks = nranks;
    q.err = err;
    q.errlen = errlen;
    q.todo = malloc((pb->ncells ? pb->ncells : 1) * sizeof *q.todo);
    q.told = calloc((size_t)nranks, 1);
    q.msg = malloc((pb->nvalues + 1) * sizeof *q.msg);
    if (!q.todo || !q.told || !q.msg) {
        free(q.todo);
        free(q.told);
        free(q.msg);
        q.todo = NULL;
        q.told = NULL;
        q.msg = NULL;
        q.stopping = 1; /* every other rank is still ended cleanly */
        q.local = AM_ENOMEM;
    }
    for (size_t c = 0; q.todo && c < pb->ncells; c++)
        if (!s->done[c]) q.todo[q.ntodo++] = c;
    pthread_mutex_init(&q.lock, NULL);
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    pthread_t th;
    int threaded =
        q.told && level >= MPI_THREAD_SERIALIZED && pthread_create(&th, NULL, queue_serve, &q) == 0;
    if (!threaded) {
        if (!q.told) { /* no table of the ranks told: end each one directly */
            for (int r = 1; r < nranks; r++) {
                long long c = -1;
                MPI_Send(&c, 1, MPI_LONG_LONG, r, TAG_WORK, MPI_COMM_WORLD);
            }
            double code;
            for (int r = 1; r < nranks; r++)
                MPI_Recv(&code, 1, MPI_DOUBLE, MPI_ANY_SOURCE, TAG_END, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        } else
            queue_serve(&q);
    }
    while (threaded) {
        pthread_mutex_lock(&q.lock);
        long long c = queue_take(&q);
        pthread_mutex_unlock(&q.lock);
        if (c < 0) break;
        am_status st = pb->run_cell(pb->ctx, (size_t)c, buf + 1);
        pthread_mutex_lock(&q.lock);
        if (st == AM_OK) st = record_cell(s, (size_t)c, buf + 1, err, errlen);
        if (st) q.stopping = 1; /* AM_ECANCELED: the cell saw the stop flag, not kept */
        if (st && st != AM_ECANCELED && q.local == AM_OK) q.local = st;
        pthread_mutex_unlock(&q.lock);
        if (st) break;
    }
    if (threaded) pthread_join(th, NULL);
    pthread_mutex_destroy(&q.lock);
    free(q.todo);
    free(q.told);
    free(q.msg);
    return q.local ? q.local : q.remote;
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
    sweep_state s = {pb, par, values, done, 0, 0, -1, now_seconds(), test_cell_pause_ms()};
    am_status st = AM_OK;

    if (rank == 0 && par->checkpoint) {
        int lfd = open_locked(par->checkpoint, &st, err, errlen);
        if (lfd >= 0 && !par->resume && !is_checkpoint_or_empty(lfd)) {
            snprintf(err, errlen,
                     "'%s' exists and is not an amsgd checkpoint; remove it or choose another "
                     "file",
                     par->checkpoint);
            st = AM_EINVAL;
        }
        if (lfd >= 0 && st == AM_OK && par->resume)
            st = read_checkpoint(lfd, par->checkpoint, pb, par, par->fingerprint, values, done, err,
                                 errlen);
        if (lfd >= 0 && st == AM_OK) {
            s.fd = rewrite_checkpoint(par->checkpoint, pb, par->fingerprint, values, done);
            if (s.fd < 0) {
                snprintf(err, errlen, "cannot write checkpoint '%s': %s", par->checkpoint,
                         strerror(errno));
                st = AM_EIO;
            }
        }
        if (lfd >= 0) close(lfd); /* the rewrite, locked, has replaced it */
    }
#ifdef AM_HAVE_MPI
    if (nranks > 1) {
        int sti = (int)st;
        MPI_Bcast(&sti, 1, MPI_INT, 0, MPI_COMM_WORLD);
        st = (am_status)sti;
        if (st == AM_OK) MPI_Bcast(done, (int)pb->ncells, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
        if (st != AM_OK && err && errlen) {
            /* every rank reports rank 0's reason (the caller prints it once) */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", rank == 0 ? err : "");
            MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, MPI_COMM_WORLD);
            snprintf(err, errlen, "%s", msg);
        }
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
    /* the cells' own ensembles run on their rank alone */
    int distributed = am_ensemble_set_distributed(0);
#ifdef AM_HAVE_MPI
    if (nranks > 1) st = rank == 0 ? queue_run(&s, nranks, buf, err, errlen) : queue_work(&s, buf);
#endif
    for (size_t c = 0; nranks == 1 && c < pb->ncells; c++) {
        if (done[c]) continue;
        if (par->stop && *par->stop) break;
        st = pb->run_cell(pb->ctx, c, buf + 1);
        if (st == AM_ECANCELED) { /* the cell saw the stop flag: not kept, the sweep ends */
            st = AM_OK;
            break;
        }
        if (st) break;
        st = record_cell(&s, c, buf + 1, err, errlen);
        if (st) break;
    }
    am_ensemble_set_distributed(distributed);
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
