/*
 * am_ps.c -- the event-driven parameter-server simulator of am_ps.h.
 *
 * State: for each learner the iterate index v it computes on, its job counter and its
 * finishing time; a binary min-heap of the running learners keyed by (finish, learner); the
 * batch of the pending update (staleness j - v and learner of each gradient). Each event pops
 * the earliest learner, O(log P).
 *
 * Runtimes: job n of learner i is word 0 of step n P + i of AM_STREAM_WORKERS. In a simulator
 * with a runtime buffer (am_ps_alloc, am_ps_place_buffered) and P <= AM_PS_BUFFER_WORKERS the
 * words of jobs n .. n + 7 of a learner (eight steps) are computed
 * side by side when job n (n mod 8 = 0) is drawn, by a Philox4x32-10 on eight lanes written
 * with GCC vector types (integer arithmetic: the words are those of am_rng_u64), and their
 * quantiles kept in a per-learner buffer; the runtimes, hence the events, are unchanged.
 */
#include "am_ps_impl.h"
#include "../core/am_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"
#include "../core/am_ensemble.h"
#include "am_msgd_batch.h"

/* Jobs per learner whose runtimes are computed together, and the largest P that buffers. */
enum { RB = 8, SCAN_WORKERS = 16 };
#define AM_PS_BUFFER_WORKERS 4096

struct am_ps {
    am_ps_params prm;
    size_t p, batch;
    uint64_t replica;
    uint64_t j;  /* updates done: the server holds w_j */
    double now;  /* time of the last update */
    int started; /* asynchronous variants: learners launched */
    uint64_t *version;
    uint64_t *jobs;
    double *finish;
    size_t *heap;
    size_t nheap;
    uint64_t *stale;
    size_t *from;
    size_t nbuf;
    double *rt; /* [p RB] runtimes of jobs RB (jobs[i] / RB) .. of learner i, or NULL */
    int path;   /* am_msgd_path: SCALAR draws one job at a time and keeps the heap */
    int scan;   /* P <= SCAN_WORKERS, drawn runtimes, path not SCALAR: heap[i] = 1 if
                   learner i runs, the earliest found by a scan (the heap's order) */
};

am_ps_params am_ps_params_default(void)
{
    am_ps_params p;
    memset(&p, 0, sizeof p);
    p.workers = 4;
    am_runtime_make(AM_RUNTIME_EXP, 1, 0, &p.runtime);
    p.variant = AM_VARIANT_ASYNC;
    p.k = 1;
    p.seed = 1;
    return p;
}

/* Largest batch accepted (the batch buffers are allocated whole). */
#define AM_PS_MAX_BATCH ((size_t)1 << 26)

static size_t round64(size_t n)
{
    return (n + 63) / 64 * 64;
}

size_t am_ps_bytes(const am_ps_params *params)
{
    am_runtime check;
    if (am_runtime_variant_check(params->variant, params->workers, params->k) ||
        am_runtime_make(params->runtime.kind, params->runtime.a, params->runtime.b, &check) ||
        params->workers > AM_PS_MAX_BATCH)
        return 0;
    size_t p = params->workers, batch = am_runtime_variant_batch(params->variant, p, params->k);
    if (batch > AM_PS_MAX_BATCH) return 0;
    return round64(sizeof(am_ps)) + 4 * round64(p * 8) + 2 * round64(batch * 8);
}

size_t am_ps_buffer_bytes(const am_ps_params *params)
{
    return params->workers <= AM_PS_BUFFER_WORKERS ? round64(params->workers * RB * 8) : 0;
}

/* The layout of am_ps_place, with the runtime buffer after the rest when `buffered`. */
static am_ps *place(void *mem, const am_ps_params *params, int buffered)
{
    size_t p = params->workers, batch = am_runtime_variant_batch(params->variant, p, params->k);
    char *c = mem;
    am_ps *ps = mem;
    memset(ps, 0, sizeof *ps);
    c += round64(sizeof(am_ps));
    ps->version = (uint64_t *)c;
    c += round64(p * 8);
    ps->jobs = (uint64_t *)c;
    c += round64(p * 8);
    ps->finish = (double *)c;
    c += round64(p * 8);
    ps->heap = (size_t *)c;
    c += round64(p * 8);
    ps->stale = (uint64_t *)c;
    c += round64(batch * 8);
    ps->from = (size_t *)c;
    c += round64(batch * 8);
    ps->rt = buffered && am_ps_buffer_bytes(params) ? (double *)c : NULL;
    ps->prm = *params;
    ps->p = p;
    ps->batch = batch;
    ps->path = (int)am_msgd_batch_path();
    am_ps_reset(ps, 0);
    return ps;
}

am_ps *am_ps_place(void *mem, const am_ps_params *params)
{
    return place(mem, params, 0);
}

am_ps *am_ps_place_buffered(void *mem, const am_ps_params *params)
{
    return place(mem, params, 1);
}

am_ps *am_ps_alloc(const am_ps_params *params, am_status *status)
{
    size_t bytes = am_ps_bytes(params);
    if (!bytes) {
        if (status) *status = AM_EINVAL;
        return NULL;
    }
    bytes += am_ps_buffer_bytes(params);
    void *mem = aligned_alloc(64, round64(bytes));
    if (!mem) {
        if (status) *status = AM_ENOMEM;
        return NULL;
    }
    if (status) *status = AM_OK;
    return am_ps_place_buffered(mem, params);
}

void am_ps_free(am_ps *ps)
{
    free(ps);
}

void am_ps_reset(am_ps *ps, uint64_t replica)
{
    ps->replica = replica;
    ps->j = 0;
    ps->now = 0;
    ps->started = 0;
    ps->nheap = 0;
    ps->nbuf = 0;
    ps->scan = ps->p <= SCAN_WORKERS && !ps->prm.fn && ps->path != AM_MSGD_PATH_SCALAR;
    if (ps->scan) memset(ps->heap, 0, ps->p * sizeof *ps->heap);
    memset(ps->jobs, 0, ps->p * sizeof *ps->jobs);
    memset(ps->version, 0, ps->p * sizeof *ps->version);
}

/* Heap order: earlier finish first, the lower learner index on ties. */
static inline int before(const am_ps *ps, size_t a, size_t b)
{
    double fa = ps->finish[a], fb = ps->finish[b];
    return fa < fb || (fa == fb && a < b);
}

static void heap_push(am_ps *ps, size_t i)
{
    size_t c = ps->nheap++;
    while (c > 0) {
        size_t parent = (c - 1) / 2;
        if (!before(ps, i, ps->heap[parent])) break;
        ps->heap[c] = ps->heap[parent];
        c = parent;
    }
    ps->heap[c] = i;
}

static size_t heap_pop(am_ps *ps)
{
    size_t top = ps->heap[0], last = ps->heap[--ps->nheap], c = 0, n = ps->nheap;
    for (;;) {
        size_t l = 2 * c + 1, best = l;
        if (l >= n) break;
        if (l + 1 < n && before(ps, ps->heap[l + 1], ps->heap[l])) best = l + 1;
        if (!before(ps, ps->heap[best], last)) break;
        ps->heap[c] = ps->heap[best];
        c = best;
    }
    if (n > 0) ps->heap[c] = last;
    return top;
}

/* The top learner's finish has grown: moves it down to its place (a pop and a push of the
 * same learner in one pass; the order of the pops is the order of (finish, learner), a strict
 * total order, whatever the shape of the heap). */
static void heap_sift_top(am_ps *ps)
{
    size_t top = ps->heap[0], c = 0, n = ps->nheap;
    for (;;) {
        size_t l = 2 * c + 1, best = l;
        if (l >= n) break;
        if (l + 1 < n && before(ps, ps->heap[l + 1], ps->heap[l])) best = l + 1;
        if (!before(ps, ps->heap[best], top)) break;
        ps->heap[c] = ps->heap[best];
        c = best;
    }
    ps->heap[c] = top;
}

/* The running learners as a set (small P): the earliest by (finish, learner) in one pass
 * without branches on the times. */
static size_t scan_top(const am_ps *ps)
{
    size_t p = ps->p, best = p;
    double bf = 0;
    for (size_t i = 0; i < p; i++) {
        double f = ps->finish[i];
        int take = ps->heap[i] && (best == p || f < bf);
        best = take ? i : best;
        bf = take ? f : bf;
    }
    return best;
}

/* The priority queue of the running learners: a heap, or for small P a set and a scan. */
static inline size_t q_top(const am_ps *ps)
{
    return ps->scan ? scan_top(ps) : ps->heap[0];
}

static inline size_t q_pop(am_ps *ps)
{
    if (!ps->scan) return heap_pop(ps);
    size_t i = scan_top(ps);
    ps->heap[i] = 0;
    ps->nheap--;
    return i;
}

static inline void q_push(am_ps *ps, size_t i)
{
    if (!ps->scan) {
        heap_push(ps, i);
        return;
    }
    ps->heap[i] = 1;
    ps->nheap++;
}

/* The top learner's finish has grown. */
static inline void q_sift_top(am_ps *ps)
{
    if (!ps->scan) heap_sift_top(ps);
}

static inline void q_clear(am_ps *ps)
{
    if (ps->scan) memset(ps->heap, 0, ps->p * sizeof *ps->heap);
    ps->nheap = 0;
}

void am_ps_set_path(am_ps *ps, int path)
{
    int best = (int)am_msgd_batch_best();
    ps->path = path < AM_MSGD_PATH_SCALAR || path > best ? best : path;
}

typedef uint64_t v8q __attribute__((vector_size(8 * sizeof(uint64_t))));
typedef uint64_t v4q __attribute__((vector_size(4 * sizeof(uint64_t))));

/* Word 0 of block 0 of the streams whose counter words are (0, c1, c2[l], c3[l]), for the
 * lanes of vector type VT (64 bits holding 32-bit values) from c2, c3 into out: Philox4x32-10
 * as in Random123's philox4x32; MUL(dst, a, m) sets dst to the 64-bit products a_l m. */
#define PHILOX_LANES(VT, MUL, c2, c3, out)                                                         \
    do {                                                                                           \
        const uint64_t lo32 = 0xffffffffu;                                                         \
        const VT zero = {0};                                                                       \
        VT k0 = zero + r->key.v[0], k1 = zero + r->key.v[1];                                       \
        VT x0 = zero, x1 = zero + r->ctr.v[1], x2, x3, p0, p1;                                     \
        memcpy(&x2, c2, sizeof x2);                                                                \
        memcpy(&x3, c3, sizeof x3);                                                                \
        for (int round = 0; round < 10; round++) {                                                 \
            MUL(p0, x0, PHILOX_M4x32_0);                                                           \
            MUL(p1, x2, PHILOX_M4x32_1);                                                           \
            x0 = (p1 >> 32) ^ x1 ^ k0;                                                             \
            x1 = p1 & lo32;                                                                        \
            x2 = (p0 >> 32) ^ x3 ^ k1;                                                             \
            x3 = p0 & lo32;                                                                        \
            k0 = (k0 + PHILOX_W32_0) & lo32;                                                       \
            k1 = (k1 + PHILOX_W32_1) & lo32;                                                       \
        }                                                                                          \
        VT w_ = x1 << 32 | x0;                                                                     \
        memcpy(out, &w_, sizeof w_);                                                               \
    } while (0)

#define MUL_PORTABLE(dst, a, m) ((dst) = (a) * (uint64_t)(m))

static void philox8_portable(const am_rng *r, const uint64_t *c2, const uint64_t *c3, uint64_t *out)
{
    PHILOX_LANES(v4q, MUL_PORTABLE, c2, c3, out);
    PHILOX_LANES(v4q, MUL_PORTABLE, c2 + 4, c3 + 4, out + 4);
}

#if AM_X86
#include <immintrin.h>

#define MUL_AVX2(dst, a, m)                                                                        \
    do {                                                                                           \
        __m256i x_;                                                                                \
        memcpy(&x_, &(a), sizeof x_);                                                              \
        x_ = _mm256_mul_epu32(x_, _mm256_set1_epi64x((long long)(m)));                             \
        memcpy(&(dst), &x_, sizeof x_);                                                            \
    } while (0)

__attribute__((target("avx2"))) static void philox8_avx2(const am_rng *r, const uint64_t *c2,
                                                         const uint64_t *c3, uint64_t *out)
{
    PHILOX_LANES(v4q, MUL_AVX2, c2, c3, out);
    PHILOX_LANES(v4q, MUL_AVX2, c2 + 4, c3 + 4, out + 4);
}

#define MUL_AVX512(dst, a, m)                                                                      \
    do {                                                                                           \
        __m512i x_;                                                                                \
        memcpy(&x_, &(a), sizeof x_);                                                              \
        x_ = _mm512_mul_epu32(x_, _mm512_set1_epi64((long long)(m)));                              \
        memcpy(&(dst), &x_, sizeof x_);                                                            \
    } while (0)

__attribute__((target("avx512f"))) static void philox8_avx512(const am_rng *r, const uint64_t *c2,
                                                              const uint64_t *c3, uint64_t *out)
{
    PHILOX_LANES(v8q, MUL_AVX512, c2, c3, out);
}
#endif

void am_ps_words(const am_ps_params *params, uint64_t replica, size_t learner, uint64_t job,
                 int path, uint64_t out[8])
{
    uint64_t c2[8], c3[8];
    am_rng r;
    for (size_t b = 0; b < 8; b++) {
        am_rng_init(&r, params->seed, replica, AM_STREAM_WORKERS,
                    (job + b) * params->workers + learner);
        c2[b] = r.ctr.v[2];
        c3[b] = r.ctr.v[3];
    }
    (void)path; /* unused when the x86 paths are compiled out */
#if AM_X86
    if (path == AM_MSGD_PATH_AVX512)
        philox8_avx512(&r, c2, c3, out);
    else if (path == AM_MSGD_PATH_AVX2)
        philox8_avx2(&r, c2, c3, out);
    else
#endif
        philox8_portable(&r, c2, c3, out);
}

/* Runtime of learner i's job (the next one, jobs[i], when buffered). */
static double draw(const am_ps *ps, size_t i, uint64_t job)
{
    if (ps->prm.fn) return ps->prm.fn(ps->prm.fn_ctx, i, job);
    if (ps->rt && ps->path != AM_MSGD_PATH_SCALAR) {
        double *rt = ps->rt + i * RB;
        if (job % RB == 0) {
            uint64_t w[8];
            am_ps_words(&ps->prm, ps->replica, i, job, ps->path, w);
            const am_runtime *q = &ps->prm.runtime;
            for (size_t b = 0; b < RB; b++) {
                double u = ((double)(w[b] >> 11) + 0.5) * 0x1.0p-53;
                /* exponential runtimes: am_runtime_quantile's expression, inline */
                rt[b] = q->kind == AM_RUNTIME_EXP ? -log1p(-u) / q->a : am_runtime_quantile(q, u);
            }
        }
        return rt[job % RB];
    }
    am_rng r;
    am_rng_init(&r, ps->prm.seed, ps->replica, AM_STREAM_WORKERS, job * ps->p + i);
    return am_runtime_quantile(&ps->prm.runtime, am_rng_uniform(&r));
}

/* Learner i starts a job at time t on the server's current iterate. */
static void start_job(am_ps *ps, size_t i, double t)
{
    ps->finish[i] = t + draw(ps, i, ps->jobs[i]++);
    ps->version[i] = ps->j;
    q_push(ps, i);
}

/* The top learner i, just finished at time t, starts its next job on the current iterate. */
static void restart_top(am_ps *ps, size_t i, double t)
{
    ps->finish[i] = t + draw(ps, i, ps->jobs[i]++);
    ps->version[i] = ps->j;
    q_sift_top(ps);
}

static void push_grad(am_ps *ps, size_t i)
{
    ps->stale[ps->nbuf] = ps->j - ps->version[i];
    ps->from[ps->nbuf] = i;
    ps->nbuf++;
}

static void next_sync(am_ps *ps)
{
    q_clear(ps);
    for (size_t i = 0; i < ps->p; i++)
        start_job(ps, i, ps->now);
    double t = ps->now;
    int restart = ps->prm.variant == AM_VARIANT_KBATCHSYNC;
    while (ps->nbuf < ps->batch) {
        size_t i = restart ? q_top(ps) : q_pop(ps);
        t = ps->finish[i];
        push_grad(ps, i);
        if (restart) restart_top(ps, i, t);
    }
    q_clear(ps); /* the running jobs are cancelled */
    ps->now = t;
    ps->j++;
}

static void next_async(am_ps *ps)
{
    if (!ps->started) {
        for (size_t i = 0; i < ps->p; i++)
            start_job(ps, i, 0);
        ps->started = 1;
    }
    int kasync = ps->prm.variant == AM_VARIANT_KASYNC;
    for (;;) {
        size_t i = kasync ? q_pop(ps) : q_top(ps);
        double t = ps->finish[i];
        push_grad(ps, i);
        int full = ps->nbuf == ps->batch;
        if (full) {
            ps->now = t;
            ps->j++;
        }
        if (!kasync) {
            restart_top(ps, i, t);
        } else if (full) {
            for (size_t g = 0; g < ps->nbuf; g++)
                start_job(ps, ps->from[g], t);
        }
        if (full) return;
    }
}

void am_ps_next(am_ps *ps, am_ps_update *u)
{
    ps->nbuf = 0;
    uint64_t index = ps->j;
    switch (ps->prm.variant) {
    case AM_VARIANT_SYNC:
    case AM_VARIANT_KSYNC:
    case AM_VARIANT_KBATCHSYNC:
        next_sync(ps);
        break;
    default:
        next_async(ps);
        break;
    }
    u->index = index;
    u->time = ps->now;
    u->ngrad = ps->nbuf;
    u->staleness = ps->stale;
    u->learner = ps->from;
}

void am_ps_summarize(am_ps *ps, uint64_t replica, uint64_t burnin, uint64_t n, am_ps_summary *out)
{
    am_ps_reset(ps, replica);
    am_ps_update u;
    double t0 = 0;
    for (uint64_t m = 0; m < burnin; m++) {
        am_ps_next(ps, &u);
        t0 = u.time;
    }
    double grads = 0, fresh = 0, sum = 0, mx = 0;
    for (uint64_t m = 0; m < n; m++) {
        am_ps_next(ps, &u);
        for (size_t g = 0; g < u.ngrad; g++) {
            double s = (double)u.staleness[g];
            fresh += s == 0;
            sum += s;
            if (s > mx) mx = s;
        }
        grads += (double)u.ngrad;
    }
    out->time_per_iter = n ? (u.time - t0) / (double)n : 0;
    out->p_fresh = grads > 0 ? fresh / grads : 0;
    out->mean_staleness = grads > 0 ? sum / grads : 0;
    out->max_staleness = mx;
}

am_status am_ps_ensemble(const am_ps_params *params, size_t replicas, uint64_t burnin, uint64_t n,
                         int threads, am_stats stats[3])
{
    memset(stats, 0, 3 * sizeof *stats);
    if (replicas < 1 || n < 1) return AM_EINVAL;
    am_status st = AM_OK;
    am_ps *probe = am_ps_alloc(params, &st);
    if (!probe) return st;
    am_ps_free(probe);
    am_ps_summary *sum = malloc(replicas * sizeof *sum);
    if (!sum) return AM_ENOMEM;
    int failed = 0;
    int nt = am_ensemble_threads(threads);
#pragma omp parallel num_threads(nt) reduction(| : failed)
    {
        am_status ts;
        am_ps *ps = am_ps_alloc(params, &ts);
        if (!ps) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (size_t r = 0; r < replicas; r++)
            if (ps) am_ps_summarize(ps, r, burnin, n, &sum[r]);
        am_ps_free(ps);
    }
    if (failed) {
        free(sum);
        return AM_ENOMEM;
    }
    for (size_t r = 0; r < replicas; r++) {
        am_stats_push(&stats[0], sum[r].time_per_iter);
        am_stats_push(&stats[1], sum[r].p_fresh);
        am_stats_push(&stats[2], sum[r].mean_staleness);
    }
    free(sum);
    return AM_OK;
}
