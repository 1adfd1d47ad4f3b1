/*
 * am_rng.h -- counter-based random streams (Random123 Philox4x32-10).
 *
 * Every draw is a pure function of (seed, replica, stream, step, position), so results do
 * not depend on threads, ranks or on how many numbers earlier steps used. Block b of a
 * step is philox4x32(counter, key) with
 *   key     = (seed mod 2^32, seed div 2^32)
 *   counter = b + 2^32 stream + 2^40 replica + 2^80 step   (128 bits, words c0..c3)
 * i.e. 32 bits of block, 8 of stream, 40 of replica, 48 of step: the arguments must be
 * below AM_RNG_*_LIMIT (am_rng_in_range; AM_REPLICA_SHARED maps to replica 2^40 - 1).
 * Block b gives words 2b and 2b+1 of the step: (x1 x0) and (x3 x2) as 64-bit numbers.
 * Standard normals come from a 256-layer ziggurat fed by one 64-bit word per try:
 * bits 0..7 choose the layer, bits 11..63 give u in (-1, 1).
 *
 * Bulk draws (am_rng_fill_u64, am_rng_fill_gaussian) return exactly the numbers that n
 * calls of am_rng_u64 / am_rng_gaussian would return and leave the stream in the same
 * position; they compute 16 or 32 Philox blocks at once with AVX2 or AVX-512 when the CPU
 * has it (runtime check) and with the portable Random123 code otherwise: same words.
 */
#ifndef AM_RNG_H
#define AM_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <Random123/philox.h>

/* Stream identifiers: the one registry of the project. One id per purpose, so that
 * purposes never share numbers; a new purpose takes a new id here (ids are part of the
 * output: changing one changes results, and the checkpoint's stream identity). */
enum {
    AM_STREAM_DATA = 0,        /* data X_k of step k */
    AM_STREAM_DELAY = 1,       /* delay tau_k of step k */
    AM_STREAM_INIT = 2,        /* initial point */
    AM_STREAM_ROTATE = 3,      /* random eigenbasis */
    AM_STREAM_NOISE = 4,       /* Brownian increments of SDE engines */
    AM_STREAM_WORKERS = 5,     /* learner runtimes of the parameter-server simulator */
    AM_STREAM_USER = 16,       /* first id of the modules' purposes below */
    AM_STREAM_DATASET = 17,    /* synthetic data sets (am_dataset) */
    AM_STREAM_KNEE_BOOT = 17,  /* knee's bootstrap over replicas (shares 17 historically) */
    AM_STREAM_STALE = 18,      /* minibatch indices and staleness of am_stale */
    AM_STREAM_NNSTALE = 19,    /* minibatch rows and staleness of am_nnstale (networks) */
    AM_STREAM_CHECK_BOOT = 24, /* am_check_bootstrap, quantile bootstrap */
    AM_STREAM_FIT_BOOT = 25,   /* am_fit_order_bootstrap */
    AM_STREAM_TRADEOFF = 30,   /* minibatch rows of the jobs of am_tradeoff (networks) */
    AM_STREAM_TRADE_BOOT = 31, /* am_tradeoff: bootstrap over seeds of the best momentum */
    AM_STREAM_OU_PASSAGE = 36, /* OU first-passage paths of the escape check */
    AM_STREAM_TEST_FIRST = 48  /* ids from here on are free for tests */
};

/* Replica index reserved for draws shared by every replica (e.g. --init random). */
#define AM_REPLICA_SHARED UINT64_MAX

/* Limits of the counter layout: replica < AM_RNG_REPLICA_LIMIT (or AM_REPLICA_SHARED),
 * stream < AM_RNG_STREAM_LIMIT, step < AM_RNG_STEP_LIMIT, and at most AM_RNG_WORD_LIMIT
 * words per (replica, stream, step). */
#define AM_RNG_REPLICA_LIMIT ((((uint64_t)1) << 40) - 1)
#define AM_RNG_STREAM_LIMIT ((uint64_t)256)
#define AM_RNG_STEP_LIMIT (((uint64_t)1) << 48)
#define AM_RNG_WORD_LIMIT (((uint64_t)1) << 33)

/* Most blocks the scalar stream computes per refill of its cache. */
#define AM_RNG_CACHE_BLOCKS 16

typedef struct {
    philox4x32_key_t key;
    philox4x32_ctr_t ctr; /* ctr.v[0] = block of the next refill */
    uint64_t out[2];      /* the two words of the last block */
    unsigned used;        /* words of out already consumed (2 = empty) */
    /* blocks cache_b0 .. cache_b0 + cache_n - 1 of the current step, computed together by
       am_rng_refill (one block's rounds are a latency-bound chain; several interleave at
       nearly the cost of one); cache_n = 0 after init and seek */
    uint64_t cache[2 * AM_RNG_CACHE_BLOCKS];
    uint32_t cache_b0;
    unsigned cache_n;
} am_rng;

extern const double am_zig_x[257];
extern const double am_zig_r[256];
extern const double am_zig_c[256]; /* f(x[i+1]) / f(x[i]), the wedges (am_rng.c) */

/* 1 if (replica, stream, step) fit the counter layout (distinct streams guaranteed). */
static inline int am_rng_in_range(uint64_t replica, uint64_t stream, uint64_t step)
{
    return (replica < AM_RNG_REPLICA_LIMIT || replica == AM_REPLICA_SHARED) &&
           stream < AM_RNG_STREAM_LIMIT && step < AM_RNG_STEP_LIMIT;
}

/* Positions the stream at (seed, replica, stream, step), block 0 (arguments in range). */
static inline void am_rng_init(am_rng *r, uint64_t seed, uint64_t replica, uint64_t stream,
                               uint64_t step)
{
    uint64_t rep = replica & AM_RNG_REPLICA_LIMIT;
    r->key.v[0] = (uint32_t)seed;
    r->key.v[1] = (uint32_t)(seed >> 32);
    r->ctr.v[0] = 0;
    r->ctr.v[1] = (uint32_t)(stream & 0xff) | (uint32_t)(rep << 8);
    r->ctr.v[2] = (uint32_t)(rep >> 24) | (uint32_t)(step << 16);
    r->ctr.v[3] = (uint32_t)(step >> 16);
    r->used = 2;
    r->cache_n = 0;
}

/* Moves an initialised stream to another step (same seed, replica and stream). */
static inline void am_rng_seek(am_rng *r, uint64_t step)
{
    r->ctr.v[0] = 0;
    r->ctr.v[2] = (r->ctr.v[2] & 0xffffu) | (uint32_t)(step << 16);
    r->ctr.v[3] = (uint32_t)(step >> 16);
    r->used = 2;
    r->cache_n = 0;
}

/* Computes the next block into out and moves to the block after it (used = 0). */
void am_rng_refill(am_rng *r);

/* Next 64 random bits. */
static inline uint64_t am_rng_u64(am_rng *r)
{
    if (r->used == 2) am_rng_refill(r);
    return r->out[r->used++];
}

/* Uniform double in the open interval (0, 1), 53 bits. */
static inline double am_rng_uniform(am_rng *r)
{
    return ((double)(am_rng_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

double am_rng_gaussian_slow(am_rng *r, uint64_t w);

/* Standard normal (ziggurat; the rare wedge and tail cases go out of line). */
static inline double am_rng_gaussian(am_rng *r)
{
    uint64_t w = am_rng_u64(r);
    unsigned i = (unsigned)(w & 0xff);
    double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63; /* (-1, 1) */
    if (fabs(u) < am_zig_r[i]) return u * am_zig_x[i];
    return am_rng_gaussian_slow(r, w);
}

/* Writes the next n words of the stream to out, as n calls of am_rng_u64 would. */
void am_rng_fill_u64(am_rng *r, uint64_t *out, size_t n);

/* Writes the next n standard normals to out, as n calls of am_rng_gaussian would. */
void am_rng_fill_gaussian(am_rng *r, double *out, size_t n);

/* am_rng_fill_gaussian(r, out, n), and returns a + p[0] + p[1] + ... + p[np-1] summed in
 * this order (each sum rounded): the same bytes as the two loops, faster where the chain of
 * additions overlaps the ziggurat (p must not overlap out). */
double am_rng_fill_gaussian_sum(am_rng *r, double *out, size_t n, const double *p, size_t np,
                                double a);

/* The normals of steps step0 .. step0 + nsteps - 1, n per step, into out[s n + i]: the same
 * as am_rng_seek(r, step0 + s) and am_rng_fill_gaussian(r, out + s n, n) for s = 0, 1, ...,
 * and r ends where the last of these leaves it. Short steps are computed side by side. */
void am_rng_fill_gaussian_steps(am_rng *r, uint64_t step0, size_t nsteps, size_t n, double *out);

/* The 2 nb words of blocks block .. block + nb - 1 of r's step, without moving r, using
 * at most instruction set simd (0 one block at a time, 1 AVX2, 2 AVX-512F) when the CPU
 * has it. */
void am_rng_blocks(const am_rng *r, uint32_t block, size_t nb, uint64_t *out, int simd);

/* Streams side by side (e.g. the data streams of AM_RNG_LANES replicas; the streams should
 * share one seed, else the portable code runs): lane l is stream r[l], whose position is
 * not used or moved. */
#define AM_RNG_LANES 8

/* Words 0 .. 2 nblocks - 1 of steps step0 .. step0 + nsteps - 1 of each lane:
 * out[(s 2 nblocks + w) AM_RNG_LANES + l] = word w of step step0 + s of stream r[l], with at
 * most instruction set simd (as am_rng_blocks). */
void am_rng_words_lanes(const am_rng *r, uint64_t step0, size_t nsteps, size_t nblocks,
                        uint64_t *out, int simd);

/* The normals of am_rng_fill_gaussian_steps(r + l, step0, nsteps, n, ...) for every lane,
 * side by side: out[(s n + i) AM_RNG_LANES + l] = normal i of step step0 + s of stream r[l]
 * (ziggurat 8 lanes at a time; the rare cases from the words already drawn, with AVX-512
 * 8 at a time in the lanes, else lane by lane). */
void am_rng_gaussian_lanes(const am_rng *r, uint64_t step0, size_t nsteps, size_t n, double *out,
                           int simd);

/* For tests: the wedge test of am_rng_gaussian_lanes' AVX-512 rare path on 8 failed fast
 * tests at once (words wf with i = wf & 0xff > 0, the uniforms' words wu): the mask of the
 * lanes it decides (the others are left to the scalar ziggurat), their decisions in *accept
 * (1 = accept u x[i]). 0 without AVX-512F/DQ. */
unsigned am_rng_lanes_wedge(const uint64_t *wf, const uint64_t *wu, unsigned *accept);

/* The ziggurat of am_rng_fill_gaussian on given words, for tests of the transform: the next
 * n normals of r (positioned at the start of a block) as if the stream's next nw words
 * (nw even) were w[0..nw-1], later words from the stream after them; the fast path with at
 * most instruction set simd (0 scalar, 1 AVX2, 2 AVX-512F/DQ). r is left after the last word
 * used (the second word of a block left half used is w's). */
void am_rng_gaussian_words(am_rng *r, const uint64_t *w, size_t nw, double *out, size_t n,
                           int simd);

/* Instruction set of the bulk draws on this CPU: 2 AVX-512F, 1 AVX2, 0 portable. */
int am_rng_simd(void);

#endif
