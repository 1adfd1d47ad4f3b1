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
 */
#include "am_ensemble.h"

#include "am_rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

enum { AM_CHUNK = 32, AM_WAVE = 64 };

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

double am_ensemble_memory(const am_model *m, size_t ngrid, const am_ensemble_params *params)
{
    return memory_lanes(m, ngrid, params, (double)run_lanes(m, ngrid, params));
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

am_status am_ensemble_run(const am_model *m, const uint64_t *k, size_t ngrid,
                          const am_ensemble_params *params, am_ensemble_result **out)
{
    *out = NULL;
    if (!m || !k || ngrid == 0 || !params || params->replicas == 0 || m->nobs == 0 || !m->start ||
        !m->advance || !m->observe)
        return AM_EINVAL;
    for (size_t g = 1; g < ngrid; g++)
        if (k[g] < k[g - 1]) return AM_EINVAL;
    /* replicas and steps index the random streams (am_rng.h counter layout) */
    if ((uint64_t)params->replicas >= AM_RNG_REPLICA_LIMIT || k[ngrid - 1] >= AM_RNG_STEP_LIMIT)
        return AM_EINVAL;
    size_t nobs = m->nobs, nsum = m->nsummary, R = params->replicas;
    int threads = am_ensemble_threads(params->threads);
    size_t work_bytes = (m->work_bytes + 63) / 64 * 64;
    if (work_bytes == 0) work_bytes = 64;
    if (am_ensemble_memory(m, ngrid, params) > (double)AM_MEMORY_LIMIT) return AM_ENOMEM;

    am_status status = AM_OK;
    am_ensemble_result *res = calloc(1, sizeof *res);
    chunk_acc *chunks = calloc(AM_WAVE, sizeof *chunks);
    size_t lanes = run_lanes(m, ngrid, params); /* replicas in flight per thread */
    unsigned char *works = aligned_alloc(64, (size_t)threads * lanes * work_bytes);
    double *trajs = malloc((size_t)threads * lanes * ngrid * nobs * sizeof *trajs);
    double *sums = malloc((size_t)threads * lanes * (nsum ? nsum : 1) * sizeof *sums);
    if (!res || !chunks || !works || !trajs || !sums) {
        status = AM_ENOMEM;
        goto done;
    }
    res->ngrid = ngrid;
    res->nobs = nobs;
    res->nsummary = nsum;
    res->replicas = R;
    res->alive = calloc(ngrid, sizeof *res->alive);
    res->obs = calloc(ngrid * nobs, sizeof *res->obs);
    res->summary_stats = calloc(nsum ? nsum : 1, sizeof *res->summary_stats);
    if (params->keep_summary && nsum) res->summary = malloc(R * nsum * sizeof *res->summary);
    if (!res->alive || !res->obs || !res->summary_stats ||
        (params->keep_summary && nsum && !res->summary)) {
        status = AM_ENOMEM;
        goto done;
    }
    for (size_t c = 0; c < AM_WAVE; c++) {
        chunks[c].obs = malloc(ngrid * nobs * sizeof *chunks[c].obs);
        chunks[c].alive = malloc(ngrid * sizeof *chunks[c].alive);
        chunks[c].sum = malloc((nsum ? nsum : 1) * sizeof *chunks[c].sum);
        if (!chunks[c].obs || !chunks[c].alive || !chunks[c].sum) {
            status = AM_ENOMEM;
            goto done;
        }
    }

    size_t nchunks = (R + AM_CHUNK - 1) / AM_CHUNK;
    am_ensemble_progress_fn pfn = progress_fn; /* the caller's thread: thread 0 below */
    void *pctx = progress_ctx;
    size_t pdone = 0;
    for (size_t wave0 = 0; wave0 < nchunks && status == AM_OK; wave0 += AM_WAVE) {
        size_t nw = nchunks - wave0 < AM_WAVE ? nchunks - wave0 : AM_WAVE;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (size_t c = 0; c < nw; c++) {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            void *work = works + (size_t)tid * lanes * work_bytes;
            double *traj = trajs + (size_t)tid * lanes * ngrid * nobs;
            double *sum = sums + (size_t)tid * lanes * (nsum ? nsum : 1);
            chunk_acc *acc = &chunks[c];
            chunk_reset(acc, ngrid, nobs, nsum);
            size_t r0 = (wave0 + c) * AM_CHUNK;
            size_t r1 = r0 + AM_CHUNK < R ? r0 + AM_CHUNK : R;
            for (size_t b0 = r0; lanes > 1 && b0 < r1; b0 += lanes) {
                size_t nb = r1 - b0 < lanes ? r1 - b0 : lanes;
                void *bw[AM_CHUNK];
                for (size_t j = 0; j < nb; j++)
                    bw[j] = (unsigned char *)work + j * work_bytes;
                am_status st = run_block(m, k, ngrid, b0, nb, bw, traj, sum, acc);
                if (st != AM_OK) {
                    acc->status = st;
                    break;
                }
                if (res->summary) memcpy(res->summary + b0 * nsum, sum, nb * nsum * sizeof *sum);
            }
            for (size_t r = r0; lanes == 1 && r < r1; r++) {
                am_status st = run_replica(m, k, ngrid, r, work, traj, sum, acc);
                if (st != AM_OK) {
                    acc->status = st;
                    break;
                }
                if (res->summary) memcpy(res->summary + r * nsum, sum, nsum * sizeof *sum);
            }
            if (pfn) {
                size_t now;
#pragma omp atomic capture
                now = pdone += r1 - r0;
                if (tid == 0) pfn(pctx, now, R);
            }
        }
        for (size_t c = 0; c < nw && status == AM_OK; c++)
            status = chunks[c].status; /* the lowest failing chunk, whatever the threads */
        if (status != AM_OK) break;
        for (size_t c = 0; c < nw; c++) {
            for (size_t i = 0; i < ngrid * nobs; i++)
                am_stats_merge(&res->obs[i], &chunks[c].obs[i]);
            for (size_t g = 0; g < ngrid; g++)
                res->alive[g] += chunks[c].alive[g];
            for (size_t j = 0; j < nsum; j++)
                am_stats_merge(&res->summary_stats[j], &chunks[c].sum[j]);
            res->diverged += chunks[c].diverged;
        }
    }
    if (pfn && status == AM_OK) pfn(pctx, R, R);

done:
    if (chunks)
        for (size_t c = 0; c < AM_WAVE; c++) {
            free(chunks[c].obs);
            free(chunks[c].alive);
            free(chunks[c].sum);
        }
    free(chunks);
    free(works);
    free(trajs);
    free(sums);
    if (status != AM_OK) {
        am_ensemble_result_free(res);
        return status;
    }
    *out = res;
    return AM_OK;
}
