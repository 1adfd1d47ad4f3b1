/*
 * am_ensemble.c -- parallel replicas with a thread-count-independent reduction.
 *
 * Replicas 0..R-1 are cut into chunks of AM_CHUNK consecutive replicas. A wave of up to
 * AM_WAVE chunks runs in parallel; each chunk accumulates its replicas in order into its
 * own statistics (Welford), then the chunks are merged into the total in chunk order
 * (Chan). The arithmetic therefore never depends on which thread ran which chunk. A model
 * with advance_batch runs the replicas of a chunk in blocks of its batch side by side and
 * pushes their observations in replica order, so every statistic receives the same values
 * in the same order as one replica at a time.
 *
 * MPI (AM_HAVE_MPI, MPI initialised, more than one rank): the chunks are dealt out in rounds
 * of up to AM_WAVE chunks per rank, a contiguous run of chunks to each rank
 * (am_ensemble_partition). Every rank sends the statistics of its chunks (and their kept
 * summaries) to rank 0 as one message per round; rank 0 merges the round's chunks in chunk
 * order, exactly the merges of the serial run, and broadcasts the result, so every rank
 * returns the same bytes as a serial run. A failure stops every rank after the round that
 * saw it (one MPI_Allreduce per round); the status is that of the lowest failing chunk.
 */
#include "am_ensemble.h"

#include "am_ensemble_impl.h"
#include "am_rng.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef AM_HAVE_MPI
#include <mpi.h>
#endif

enum { AM_CHUNK = AM_ENSEMBLE_CHUNK, AM_WAVE = AM_ENSEMBLE_WAVE };

typedef struct {
    am_stats *obs; /* [ngrid * nobs] */
    size_t *alive; /* [ngrid] */
    am_stats *sum; /* [nsummary] */
    size_t diverged;
    am_status status; /* the first failure of a replica of the chunk */
} chunk_acc;

/* The progress hook of am_ensemble_progress_set, per calling thread. */
static _Thread_local am_ensemble_progress_fn progress_fn = NULL;
static _Thread_local void *progress_ctx = NULL;

void am_ensemble_progress_set(am_ensemble_progress_fn fn, void *ctx)
{
    progress_fn = fn;
    progress_ctx = ctx;
}

am_ensemble_params am_ensemble_params_default(void)
{
    am_ensemble_params p = {1000, 0, 0};
    return p;
}

int am_ensemble_threads(int requested)
{
#ifdef _OPENMP
    if (requested <= 0) return omp_get_num_procs();
    return requested;
#else
    (void)requested;
    return 1;
#endif
}

am_status am_ensemble_jobs(size_t n, int threads, am_ensemble_job_fn run, void *ctx, char *err,
                           size_t errlen)
{
    size_t first = n;
    am_status st = AM_OK;
    if (err && errlen) err[0] = '\0';
#pragma omp parallel for num_threads(am_ensemble_threads(threads)) schedule(dynamic, 1)
    for (size_t q = 0; q < n; q++) {
        char e[256] = "";
        am_status s = run(ctx, q, e, sizeof e);
        if (s) {
#pragma omp critical(am_ensemble_jobs_fail)
            if (q < first) {
                first = q;
                st = s;
                if (err && errlen) snprintf(err, errlen, "%s", e);
            }
        }
    }
    return st;
}

void am_ensemble_result_free(am_ensemble_result *res)
{
    if (!res) return;
    free(res->alive);
    free(res->obs);
    free(res->summary_stats);
    free(res->summary);
    free(res);
}

/* Bytes with lanes replicas in flight per thread. */
static double memory_lanes(const am_model *m, size_t ngrid, const am_ensemble_params *params,
                           double lanes)
{
    double threads = am_ensemble_threads(params->threads);
    double nobs = (double)m->nobs, nsum = (double)m->nsummary, g = (double)ngrid;
    return threads * lanes * ((double)m->work_bytes + 64.0 + g * nobs * sizeof(double)) +
           (AM_WAVE + 1.0) * g * (nobs * sizeof(am_stats) + sizeof(size_t)) +
           (params->keep_summary ? (double)params->replicas * nsum * sizeof(double) : 0.0);
}

/* Replicas advanced together: the model's batch (at most a chunk) if it has one and its
 * workspaces fit in memory, else 1. */
static size_t run_lanes(const am_model *m, size_t ngrid, const am_ensemble_params *params)
{
    size_t b = m->advance_batch && m->batch > 1 ? m->batch : 1;
    if (b > AM_CHUNK) b = AM_CHUNK;
    if (b > 1 && memory_lanes(m, ngrid, params, (double)b) > (double)AM_MEMORY_LIMIT) b = 1;
    return b;
}

static void chunk_reset(chunk_acc *c, size_t ngrid, size_t nobs, size_t nsum)
{
    memset(c->obs, 0, ngrid * nobs * sizeof *c->obs);
    memset(c->alive, 0, ngrid * sizeof *c->alive);
    memset(c->sum, 0, (nsum ? nsum : 1) * sizeof *c->sum);
    c->diverged = 0;
    c->status = AM_OK;
}

/* Runs one replica and adds it to the chunk's statistics. */
static am_status run_replica(const am_model *m, const uint64_t *k, size_t ngrid, uint64_t r,
                             void *work, double *traj, double *summary, chunk_acc *acc)
{
    memset(work, 0, m->work_bytes);
    am_status st = m->start(m->ctx, r, work);
    if (st != AM_OK) return st;
    size_t nobs = m->nobs;
    int diverged = 0;
    uint64_t kcur = 0;
    for (size_t g = 0; g < ngrid; g++) {
        double *o = traj + g * nobs;
        if (!diverged) {
            if (k[g] > kcur) {
                int rc = m->advance(m->ctx, work, kcur, k[g]);
                if (rc < 0) /* a failure; a code outside am_status counts as a solver failure */
                    return rc < -(int)AM_EDOM ? AM_ESOLVER : (am_status)-rc;
                diverged = rc != AM_ENSEMBLE_ALIVE;
                kcur = k[g];
            }
        }
        if (diverged) {
            for (size_t j = 0; j < nobs; j++)
                o[j] = NAN;
            continue;
        }
        m->observe(m->ctx, work, o);
        acc->alive[g]++;
        for (size_t j = 0; j < nobs; j++)
            am_stats_push(&acc->obs[g * nobs + j], o[j]);
    }
    if (diverged) acc->diverged++;
    if (m->nsummary && m->summarize) {
        m->summarize(m->ctx, work, traj, ngrid, diverged, summary);
        for (size_t j = 0; j < m->nsummary; j++)
            if (isfinite(summary[j])) am_stats_push(&acc->sum[j], summary[j]);
    }
    return AM_OK;
}

/* Runs replicas r0 .. r0+n-1 side by side (advance_batch) and adds them to the chunk's
 * statistics in replica order, as n calls of run_replica would: every statistic receives
 * the same values in the same order. works[j], trajs + j ngrid nobs, sums + j nsum. */
static am_status run_block(const am_model *m, const uint64_t *k, size_t ngrid, uint64_t r0,
                           size_t n, void *const *works, double *trajs, double *sums,
                           chunk_acc *acc)
{
    enum { MAXB = AM_CHUNK };
    size_t nobs = m->nobs, nsum = m->nsummary ? m->nsummary : 1;
    int diverged[MAXB], flag[MAXB];
    void *live[MAXB];
    size_t idx[MAXB];
    for (size_t j = 0; j < n; j++) {
        memset(works[j], 0, m->work_bytes);
        am_status st = m->start(m->ctx, r0 + j, works[j]);
        if (st != AM_OK) return st;
        diverged[j] = 0;
    }
    uint64_t kcur = 0;
    for (size_t g = 0; g < ngrid; g++) {
        if (k[g] > kcur) {
            size_t nl = 0;
            for (size_t j = 0; j < n; j++)
                if (!diverged[j]) {
                    idx[nl] = j;
                    live[nl++] = works[j];
                }
            if (nl == 1)
                flag[0] = m->advance(m->ctx, live[0], kcur, k[g]);
            else if (nl > 1)
                m->advance_batch(m->ctx, live, nl, kcur, k[g], flag);
            for (size_t t = 0; t < nl; t++) {
                if (flag[t] < 0) /* a failure; a code outside am_status: a solver failure */
                    return flag[t] < -(int)AM_EDOM ? AM_ESOLVER : (am_status)-flag[t];
                diverged[idx[t]] = flag[t] != AM_ENSEMBLE_ALIVE;
            }
            kcur = k[g];
        }
        for (size_t j = 0; j < n; j++) {
            double *o = trajs + (j * ngrid + g) * nobs;
            if (diverged[j]) {
                for (size_t i = 0; i < nobs; i++)
                    o[i] = NAN;
                continue;
            }
            m->observe(m->ctx, works[j], o);
            acc->alive[g]++;
            for (size_t i = 0; i < nobs; i++)
                am_stats_push(&acc->obs[g * nobs + i], o[i]);
        }
    }
    for (size_t j = 0; j < n; j++) {
        if (diverged[j]) acc->diverged++;
        if (m->nsummary && m->summarize) {
            double *summary = sums + j * nsum;
            m->summarize(m->ctx, works[j], trajs + j * ngrid * nobs, ngrid, diverged[j], summary);
            for (size_t i = 0; i < m->nsummary; i++)
                if (isfinite(summary[i])) am_stats_push(&acc->sum[i], summary[i]);
        }
    }
    return AM_OK;
}

/* ---- one run: its buffers, the chunks of a round, their messages and their merge ------ */

typedef struct {
    const am_model *m;
    const uint64_t *k;
    size_t ngrid, nobs, nsum, R, lanes, work_bytes;
    int threads;
    unsigned char *works;
    double *trajs, *sums;
    double *summary;             /* the result's kept summaries, or NULL */
    chunk_acc *chunks;           /* [AM_WAVE] */
    am_ensemble_progress_fn pfn; /* the caller's progress hook (its thread: thread 0) */
    void *pctx;
    size_t *pdone; /* replicas finished so far */
    size_t *plast; /* done of the hook's last call (thread 0 only) */
} ens_run;

/* Runs chunks c0 .. c1-1 (at most AM_WAVE) into e->chunks[0 ..] on the threads; returns 1 if
 * one of them failed. */
static int run_chunks(const ens_run *e, size_t c0, size_t c1)
{
    const am_model *m = e->m;
    size_t ngrid = e->ngrid, nobs = e->nobs, nsum = e->nsum, R = e->R, lanes = e->lanes;
    size_t work_bytes = e->work_bytes, nw = c1 - c0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(e->threads)
    for (size_t c = 0; c < nw; c++) {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        void *work = e->works + (size_t)tid * lanes * work_bytes;
        double *traj = e->trajs + (size_t)tid * lanes * ngrid * nobs;
        double *sum = e->sums + (size_t)tid * lanes * (nsum ? nsum : 1);
        chunk_acc *acc = &e->chunks[c];
        chunk_reset(acc, ngrid, nobs, nsum);
        size_t r0 = (c0 + c) * AM_CHUNK;
        size_t r1 = r0 + AM_CHUNK < R ? r0 + AM_CHUNK : R;
        for (size_t b0 = r0; lanes > 1 && b0 < r1; b0 += lanes) {
            size_t nb = r1 - b0 < lanes ? r1 - b0 : lanes;
            void *bw[AM_CHUNK];
            for (size_t j = 0; j < nb; j++)
                bw[j] = (unsigned char *)work + j * work_bytes;
            am_status st = run_block(m, e->k, ngrid, b0, nb, bw, traj, sum, acc);
            if (st != AM_OK) {
                acc->status = st;
                break;
            }
            if (e->summary) memcpy(e->summary + b0 * nsum, sum, nb * nsum * sizeof *sum);
        }
        for (size_t r = r0; lanes == 1 && r < r1; r++) {
            am_status st = run_replica(m, e->k, ngrid, r, work, traj, sum, acc);
            if (st != AM_OK) {
                acc->status = st;
                break;
            }
            if (e->summary) memcpy(e->summary + r * nsum, sum, nsum * sizeof *sum);
        }
        if (e->pfn) {
            size_t now;
#pragma omp atomic capture
            now = *e->pdone += r1 - r0;
            if (tid == 0) {
                e->pfn(e->pctx, now, R);
                *e->plast = now;
            }
        }
    }
    int failed = 0;
    for (size_t c = 0; c < nw; c++)
        failed |= e->chunks[c].status != AM_OK;
    return failed;
}

/* Merges e->chunks[0 .. n-1] into res in chunk order; returns the status of the first
 * failing chunk (the run's result then is that failure). */
static am_status merge_chunks(am_ensemble_result *res, const ens_run *e, size_t n)
{
    for (size_t c = 0; c < n; c++)
        if (e->chunks[c].status != AM_OK) return e->chunks[c].status;
    for (size_t c = 0; c < n; c++) {
        const chunk_acc *a = &e->chunks[c];
        for (size_t i = 0; i < e->ngrid * e->nobs; i++)
            am_stats_merge(&res->obs[i], &a->obs[i]);
        for (size_t g = 0; g < e->ngrid; g++)
            res->alive[g] += a->alive[g];
        for (size_t j = 0; j < e->nsum; j++)
            am_stats_merge(&res->summary_stats[j], &a->sum[j]);
        res->diverged += a->diverged;
    }
    return AM_OK;
}

/* Bytes of one chunk's statistics in a message. */
static size_t record_bytes(size_t ngrid, size_t nobs, size_t nsum)
{
    return ngrid * nobs * sizeof(am_stats) + ngrid * sizeof(size_t) + nsum * sizeof(am_stats) +
           2 * sizeof(uint64_t);
}

/* Bytes of the message of at most n chunks (their statistics and kept summaries). */
static size_t message_bytes(size_t n, size_t ngrid, size_t nobs, size_t nsum, int keep)
{
    return n * record_bytes(ngrid, nobs, nsum) + (keep ? n * AM_CHUNK * nsum * sizeof(double) : 0);
}

/* Writes the statistics of chunks c0 .. c1-1 (in e->chunks) and their replicas' kept
 * summaries to buf; returns the bytes written. */
static size_t pack_chunks(const ens_run *e, size_t c0, size_t c1, unsigned char *buf)
{
    unsigned char *p = buf;
    for (size_t c = 0; c < c1 - c0; c++) {
        const chunk_acc *a = &e->chunks[c];
        uint64_t tail[2] = {(uint64_t)a->diverged, (uint64_t)a->status};
        memcpy(p, a->obs, e->ngrid * e->nobs * sizeof *a->obs);
        p += e->ngrid * e->nobs * sizeof *a->obs;
        memcpy(p, a->alive, e->ngrid * sizeof *a->alive);
        p += e->ngrid * sizeof *a->alive;
        memcpy(p, a->sum, e->nsum * sizeof *a->sum);
        p += e->nsum * sizeof *a->sum;
        memcpy(p, tail, sizeof tail);
        p += sizeof tail;
    }
    if (e->summary && e->nsum) {
        size_t r0 = c0 * AM_CHUNK, r1 = c1 * AM_CHUNK < e->R ? c1 * AM_CHUNK : e->R;
        memmove(p, e->summary + r0 * e->nsum, (r1 - r0) * e->nsum * sizeof(double));
        p += (r1 - r0) * e->nsum * sizeof(double);
    }
    return (size_t)(p - buf);
}

/* The inverse of pack_chunks: e->chunks[0 ..] and the kept summaries from buf. */
static void unpack_chunks(ens_run *e, size_t c0, size_t c1, const unsigned char *buf)
{
    const unsigned char *p = buf;
    for (size_t c = 0; c < c1 - c0; c++) {
        chunk_acc *a = &e->chunks[c];
        uint64_t tail[2];
        memcpy(a->obs, p, e->ngrid * e->nobs * sizeof *a->obs);
        p += e->ngrid * e->nobs * sizeof *a->obs;
        memcpy(a->alive, p, e->ngrid * sizeof *a->alive);
        p += e->ngrid * sizeof *a->alive;
        memcpy(a->sum, p, e->nsum * sizeof *a->sum);
        p += e->nsum * sizeof *a->sum;
        memcpy(tail, p, sizeof tail);
        p += sizeof tail;
        a->diverged = (size_t)tail[0];
        a->status = (am_status)tail[1];
    }
    if (e->summary && e->nsum) {
        size_t r0 = c0 * AM_CHUNK, r1 = c1 * AM_CHUNK < e->R ? c1 * AM_CHUNK : e->R;
        memmove(e->summary + r0 * e->nsum, p, (r1 - r0) * e->nsum * sizeof(double));
    }
}

/* ---- the distribution of the chunks over ranks ---------------------------------------- */

size_t am_ensemble_nchunks(size_t replicas)
{
    return (replicas + AM_CHUNK - 1) / AM_CHUNK;
}

size_t am_ensemble_rounds(size_t replicas, int nranks)
{
    size_t span = (size_t)AM_WAVE * (size_t)(nranks > 0 ? nranks : 1);
    return (am_ensemble_nchunks(replicas) + span - 1) / span;
}

void am_ensemble_partition(size_t replicas, int nranks, size_t round, int rank, size_t *c0,
                           size_t *c1)
{
    size_t P = (size_t)(nranks > 0 ? nranks : 1), span = (size_t)AM_WAVE * P;
    size_t nchunks = am_ensemble_nchunks(replicas), s0 = round * span;
    size_t n = s0 >= nchunks ? 0 : (nchunks - s0 < span ? nchunks - s0 : span);
    size_t q = (n + P - 1) / P, r = (size_t)rank;
    *c0 = s0 + (r * q < n ? r * q : n);
    *c1 = s0 + ((r + 1) * q < n ? (r + 1) * q : n);
}

static int distribute = 1;

int am_ensemble_set_distributed(int on)
{
    int prev = distribute;
    distribute = on != 0;
    return prev;
}

#ifdef AM_HAVE_MPI
static MPI_Comm ens_comm = MPI_COMM_NULL;

/* Broadcasts n bytes from rank 0 in pieces an int counts. */
static void bcast_bytes(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n) {
        size_t piece = n < ((size_t)1 << 30) ? n : ((size_t)1 << 30);
        MPI_Bcast(p, (int)piece, MPI_BYTE, 0, ens_comm);
        p += piece;
        n -= piece;
    }
}
#endif

/* The ranks an ensemble of nchunks chunks is split over (1: this process alone): MPI is
 * running with more than one rank, distribution is on, the caller is not inside a parallel
 * region, there are two chunks or more and a round's message fits an int count. The same
 * answer on every rank. */
static int ensemble_nranks(size_t nchunks, size_t msg)
{
#ifdef AM_HAVE_MPI
    int init = 0, fin = 0, size = 1;
    if (!distribute || nchunks < 2 || msg > (size_t)INT_MAX) return 1;
#ifdef _OPENMP
    if (omp_in_parallel()) return 1;
#endif
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) return 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return size;
#else
    (void)nchunks;
    (void)msg;
    return 1;
#endif
}

double am_ensemble_memory(const am_model *m, size_t ngrid, const am_ensemble_params *params)
{
    double bytes = memory_lanes(m, ngrid, params, (double)run_lanes(m, ngrid, params));
    size_t msg = message_bytes(AM_WAVE, ngrid, m->nobs, m->nsummary, params->keep_summary);
    if (ensemble_nranks(am_ensemble_nchunks(params->replicas), msg) > 1) bytes += (double)msg;
    return bytes;
}

/* Whether a run can start: a model with its callbacks and observables, a non-decreasing grid,
 * replicas, and steps inside the random streams' counters (am_rng.h counter layout). */
static int run_args_ok(const am_model *m, const uint64_t *k, size_t ngrid,
                       const am_ensemble_params *params)
{
    if (!m || !k || ngrid == 0 || !params || params->replicas == 0 || m->nobs == 0 || !m->start ||
        !m->advance || !m->observe)
        return 0;
    for (size_t g = 1; g < ngrid; g++)
        if (k[g] < k[g - 1]) return 0;
    return (uint64_t)params->replicas < AM_RNG_REPLICA_LIMIT && k[ngrid - 1] < AM_RNG_STEP_LIMIT;
}

/* The result's arrays (R kept summaries with keep); AM_ENOMEM if one is missing (what was
 * allocated stays in res for am_ensemble_result_free). */
static am_status result_alloc(am_ensemble_result *res, size_t ngrid, size_t nobs, size_t nsum,
                              size_t R, int keep)
{
    res->ngrid = ngrid;
    res->nobs = nobs;
    res->nsummary = nsum;
    res->replicas = R;
    res->alive = calloc(ngrid, sizeof *res->alive);
    res->obs = calloc(ngrid * nobs, sizeof *res->obs);
    res->summary_stats = calloc(nsum ? nsum : 1, sizeof *res->summary_stats);
    if (keep) res->summary = malloc(R * nsum * sizeof *res->summary);
    if (!res->alive || !res->obs || !res->summary_stats || (keep && !res->summary))
        return AM_ENOMEM;
    return AM_OK;
}

/* The statistics of the AM_WAVE chunks (zeroed structs); AM_ENOMEM if one is missing (what
 * was allocated is left for chunks_free). */
static am_status chunks_alloc(chunk_acc *chunks, size_t ngrid, size_t nobs, size_t nsum)
{
    for (size_t c = 0; c < AM_WAVE; c++) {
        chunks[c].obs = malloc(ngrid * nobs * sizeof *chunks[c].obs);
        chunks[c].alive = malloc(ngrid * sizeof *chunks[c].alive);
        chunks[c].sum = malloc((nsum ? nsum : 1) * sizeof *chunks[c].sum);
        if (!chunks[c].obs || !chunks[c].alive || !chunks[c].sum) return AM_ENOMEM;
    }
    return AM_OK;
}

/* Frees the AM_WAVE chunks and their statistics (chunks may be NULL). */
static void chunks_free(chunk_acc *chunks)
{
    if (chunks)
        for (size_t c = 0; c < AM_WAVE; c++) {
            free(chunks[c].obs);
            free(chunks[c].alive);
            free(chunks[c].sum);
        }
    free(chunks);
}

/* Round w with every rank in this process (nranks 1: the serial run): rank 0's chunks run and
 * are merged, then each other rank's in turn, through its message as a rank's would be
 * (packed, the chunks reset, unpacked), merged in rank order. Returns the status of the first
 * failing chunk merged. */
static am_status round_local(ens_run *e, am_ensemble_result *res, size_t w, int nranks,
                             unsigned char *msg)
{
    size_t c0, c1;
    am_ensemble_partition(e->R, nranks, w, 0, &c0, &c1);
    run_chunks(e, c0, c1); /* a failure is in each chunk's status, merged below */
    am_status status = merge_chunks(res, e, c1 - c0);
    for (int r = 1; r < nranks; r++) {
        size_t d0, d1;
        am_ensemble_partition(e->R, nranks, w, r, &d0, &d1);
        if (d1 == d0) continue;
        run_chunks(e, d0, d1);
        pack_chunks(e, d0, d1, msg);
        for (size_t c = 0; c < d1 - d0; c++)
            chunk_reset(&e->chunks[c], e->ngrid, e->nobs, e->nsum);
        unpack_chunks(e, d0, d1, msg);
        if (status == AM_OK) status = merge_chunks(res, e, d1 - d0);
    }
    return status;
}

#ifdef AM_HAVE_MPI
/* Round w over the MPI ranks: each rank runs its chunks and sends their statistics to rank 0,
 * which merges its own and then each rank's message in rank order (its progress counts every
 * rank's replicas). *failed: a chunk of some rank failed (the same on every rank). Returns
 * rank 0's status of the first failing chunk merged (AM_OK on the other ranks). */
static am_status round_mpi(ens_run *e, am_ensemble_result *res, size_t w, int nranks, int rank,
                           unsigned char *msg, size_t msg_max, int *failed)
{
    size_t c0, c1, R = e->R;
    am_status status = AM_OK;
    MPI_Request req = MPI_REQUEST_NULL;
    am_ensemble_partition(R, nranks, w, rank, &c0, &c1);
    int fail = run_chunks(e, c0, c1);
    if (rank != 0 && c1 > c0) {
        size_t nb = pack_chunks(e, c0, c1, msg);
        MPI_Isend(msg, (int)nb, MPI_BYTE, 0, 0, ens_comm, &req);
    }
    MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, ens_comm);
    /* the message leaves while rank 0 receives it, before this rank computes again (a
     * rendezvous transfer needs both sides in MPI) */
    if (rank != 0) MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (rank == 0) {
        status = merge_chunks(res, e, c1 - c0);
        for (int r = 1; r < nranks; r++) {
            size_t d0, d1;
            am_ensemble_partition(R, nranks, w, r, &d0, &d1);
            if (d1 == d0) continue;
            MPI_Recv(msg, (int)msg_max, MPI_BYTE, r, 0, ens_comm, MPI_STATUS_IGNORE);
            if (status != AM_OK) continue;
            unpack_chunks(e, d0, d1, msg);
            status = merge_chunks(res, e, d1 - d0);
            if (e->pfn) { /* rank 0 shows the replicas of every rank */
                size_t r1 = d1 * AM_CHUNK < R ? d1 * AM_CHUNK : R;
                *e->pdone += r1 - d0 * AM_CHUNK;
                e->pfn(e->pctx, *e->pdone, R);
                *e->plast = *e->pdone;
            }
        }
    }
    *failed = fail;
    return status;
}

/* Every rank takes rank 0's status and, on success, its result. */
static am_status result_bcast(am_ensemble_result *res, am_status status)
{
    int sti = (int)status;
    MPI_Bcast(&sti, 1, MPI_INT, 0, ens_comm);
    status = (am_status)sti;
    if (status == AM_OK) {
        uint64_t div = (uint64_t)res->diverged;
        MPI_Bcast(&div, 1, MPI_UINT64_T, 0, ens_comm);
        res->diverged = (size_t)div;
        bcast_bytes(res->alive, res->ngrid * sizeof *res->alive);
        bcast_bytes(res->obs, res->ngrid * res->nobs * sizeof *res->obs);
        bcast_bytes(res->summary_stats, res->nsummary * sizeof *res->summary_stats);
        if (res->summary)
            bcast_bytes(res->summary, res->replicas * res->nsummary * sizeof *res->summary);
    }
    return status;
}
#endif

/* The run: nranks > 0 simulates that many ranks in this process (each rank's chunks run in
 * turn, go through its message and are merged in chunk order); 0 distributes over the MPI
 * ranks when ensemble_nranks says so. */
static am_status ensemble_run(const am_model *m, const uint64_t *k, size_t ngrid,
                              const am_ensemble_params *params, int simulate,
                              am_ensemble_result **out)
{
    *out = NULL;
    if (!run_args_ok(m, k, ngrid, params)) return AM_EINVAL;
    size_t nobs = m->nobs, nsum = m->nsummary, R = params->replicas;
    int threads = am_ensemble_threads(params->threads);
    size_t work_bytes = (m->work_bytes + 63) / 64 * 64;
    if (work_bytes == 0) work_bytes = 64;
    if (am_ensemble_memory(m, ngrid, params) > (double)AM_MEMORY_LIMIT) return AM_ENOMEM;
    int keep = params->keep_summary && nsum;
    size_t msg_max = message_bytes(AM_WAVE, ngrid, nobs, nsum, keep);
    int nranks = simulate > 0 ? simulate : ensemble_nranks(am_ensemble_nchunks(R), msg_max);
#ifdef AM_HAVE_MPI
    int rank = 0, mpi = simulate <= 0 && nranks > 1;
    if (mpi && ens_comm == MPI_COMM_NULL) MPI_Comm_dup(MPI_COMM_WORLD, &ens_comm);
    if (mpi) MPI_Comm_rank(ens_comm, &rank);
#endif

    am_status status = AM_OK;
    am_ensemble_result *res = calloc(1, sizeof *res);
    chunk_acc *chunks = calloc(AM_WAVE, sizeof *chunks);
    size_t lanes = run_lanes(m, ngrid, params); /* replicas in flight per thread */
    unsigned char *works = aligned_alloc(64, (size_t)threads * lanes * work_bytes);
    double *trajs = malloc((size_t)threads * lanes * ngrid * nobs * sizeof *trajs);
    double *sums = malloc((size_t)threads * lanes * (nsum ? nsum : 1) * sizeof *sums);
    unsigned char *msg = nranks > 1 ? malloc(msg_max) : NULL;
    if (!res || !chunks || !works || !trajs || !sums || (nranks > 1 && !msg)) status = AM_ENOMEM;
    if (status == AM_OK) status = result_alloc(res, ngrid, nobs, nsum, R, keep);
    if (status == AM_OK) status = chunks_alloc(chunks, ngrid, nobs, nsum);
#ifdef AM_HAVE_MPI
    if (mpi) { /* every rank goes on, or none */
        int bad = status != AM_OK;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, ens_comm);
        if (bad) status = AM_ENOMEM;
    }
#endif
    if (status != AM_OK) goto done;

    size_t pdone = 0, plast = 0;
    ens_run e = {m,       k,     ngrid, nobs, nsum,         R,      lanes,       work_bytes,
                 threads, works, trajs, sums, res->summary, chunks, progress_fn, progress_ctx,
                 &pdone,  &plast};
    /* Round w: a run of up to AM_WAVE chunks on each rank; rank 0 merges the round's chunks
     * in chunk order (its own, then each rank's message in rank order), as the serial run
     * merges them. */
    size_t rounds = am_ensemble_rounds(R, nranks);
    for (size_t w = 0; w < rounds && status == AM_OK; w++) {
        if (simulate > 0 || nranks == 1) {
            status = round_local(&e, res, w, nranks, msg);
            continue;
        }
#ifdef AM_HAVE_MPI
        int failed = 0;
        status = round_mpi(&e, res, w, nranks, rank, msg, msg_max, &failed);
        if (failed) break; /* rank 0 has merged the round and holds its first failure */
#endif
    }
#ifdef AM_HAVE_MPI
    if (mpi) status = result_bcast(res, status); /* every rank returns rank 0's result */
#endif
    /* the end, unless the last chunk's call reported it: done = total comes once per run */
    if (e.pfn && status == AM_OK && plast != R) e.pfn(e.pctx, R, R);

done:
    chunks_free(chunks);
    free(works);
    free(trajs);
    free(sums);
    free(msg);
    if (status != AM_OK) {
        am_ensemble_result_free(res);
        return status;
    }
    *out = res;
    return AM_OK;
}

am_status am_ensemble_run(const am_model *m, const uint64_t *k, size_t ngrid,
                          const am_ensemble_params *params, am_ensemble_result **out)
{
    return ensemble_run(m, k, ngrid, params, 0, out);
}

am_status am_ensemble_run_ranks(const am_model *m, const uint64_t *k, size_t ngrid,
                                const am_ensemble_params *params, int nranks,
                                am_ensemble_result **out)
{
    if (nranks < 1) {
        if (out) *out = NULL;
        return AM_EINVAL;
    }
    return ensemble_run(m, k, ngrid, params, nranks, out);
}

static am_status pair_start(const void *ctx, uint64_t replica, void *work)
{
    const am_model_pair *c = ctx;
    am_status st = c->a->start(c->a->ctx, replica, work);
    return st ? st : c->b->start(c->b->ctx, replica, (char *)work + c->off_b);
}

static int pair_advance(const void *ctx, void *work, uint64_t k0, uint64_t k1)
{
    const am_model_pair *c = ctx;
    int ra = c->a->advance(c->a->ctx, work, k0, k1);
    if (ra < 0) return ra;
    int rb = c->b->advance(c->b->ctx, (char *)work + c->off_b, k0, k1);
    if (rb < 0) return rb;
    return ra || rb ? AM_ENSEMBLE_DIVERGED : AM_ENSEMBLE_ALIVE;
}

static void pair_observe(const void *ctx, const void *work, double *obs)
{
    const am_model_pair *c = ctx;
    double ob[AM_MODEL_PAIR_NOBS_MAX];
    size_t n = c->a->nobs;
    c->a->observe(c->a->ctx, work, obs);
    c->b->observe(c->b->ctx, (const char *)work + c->off_b, ob);
    for (size_t j = 0; j < n; j++)
        obs[n + j] = obs[j] - ob[j];
}

am_status am_model_pair_make(const am_model *a, const am_model *b, am_model_pair *ctx,
                             am_model *out)
{
    if (!a || !b || !ctx || !out || a->nobs != b->nobs || a->nobs == 0 ||
        a->nobs > AM_MODEL_PAIR_NOBS_MAX)
        return AM_EINVAL;
    ctx->a = a;
    ctx->b = b;
    ctx->off_b = (a->work_bytes + 63) / 64 * 64;
    *out = (am_model){0};
    out->nobs = 2 * a->nobs;
    out->work_bytes = ctx->off_b + b->work_bytes;
    out->start = pair_start;
    out->advance = pair_advance;
    out->observe = pair_observe;
    out->ctx = ctx;
    return AM_OK;
}
