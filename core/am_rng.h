/*
 * am_rng.h -- counter-based random streams (Random123 Philox4x64-10).
 *
 * Every draw is a pure function of (seed, replica, stream, step, position):
 *   key     = (seed, replica)
 *   counter = (step, stream, block, 0)
 * so results do not depend on threads, ranks or on how many numbers earlier steps used.
 * Standard normals come from a 256-layer ziggurat fed by one 64-bit word per try:
 * bits 0..7 choose the layer, bits 11..63 give u in (-1, 1).
 *
 * Bulk draws (am_rng_fill_u64, am_rng_fill_gaussian) return exactly the numbers that n
 * calls of am_rng_u64 / am_rng_gaussian would return and leave the stream in the same
 * position; they generate many Philox blocks per call so that the rounds of independent
 * blocks overlap in the pipeline.
 */
#ifndef AM_RNG_H
#define AM_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <Random123/philox.h>

/* Stream identifiers: one per purpose, so that purposes never share numbers. */
enum {
    AM_STREAM_DATA = 0,    /* data X_k of step k */
    AM_STREAM_DELAY = 1,   /* delay tau_k of step k */
    AM_STREAM_INIT = 2,    /* initial point */
    AM_STREAM_ROTATE = 3,  /* random eigenbasis */
    AM_STREAM_NOISE = 4,   /* Brownian increments of SDE engines */
    AM_STREAM_WORKERS = 5, /* learner runtimes of the parameter-server simulator */
    AM_STREAM_USER = 16    /* first stream free for other modules */
};

/* Replica index reserved for draws shared by every replica (e.g. --init random). */
#define AM_REPLICA_SHARED UINT64_MAX

typedef struct {
    philox4x64_key_t key;
    philox4x64_ctr_t ctr;
    philox4x64_ctr_t out;
    unsigned used; /* words of out already consumed (4 = empty) */
} am_rng;

extern const double am_zig_x[257];
extern const double am_zig_r[256];

/* Positions the stream at (seed, replica, stream, step), block 0. */
static inline void am_rng_init(am_rng *r, uint64_t seed, uint64_t replica, uint64_t stream,
                               uint64_t step)
{
    r->key.v[0] = seed;
    r->key.v[1] = replica;
    r->ctr.v[0] = step;
    r->ctr.v[1] = stream;
    r->ctr.v[2] = 0;
    r->ctr.v[3] = 0;
    r->used = 4;
}

/* Moves an initialised stream to another step (same seed, replica and stream). */
static inline void am_rng_seek(am_rng *r, uint64_t step)
{
    r->ctr.v[0] = step;
    r->ctr.v[2] = 0;
    r->used = 4;
}

/* Next 64 random bits. */
static inline uint64_t am_rng_u64(am_rng *r)
{
    if (r->used == 4) {
        r->out = philox4x64(r->ctr, r->key);
        r->ctr.v[2]++;
        r->used = 0;
    }
    return r->out.v[r->used++];
}

/* Uniform double in the open interval (0, 1), 53 bits. */
static inline double am_rng_uniform(am_rng *r)
{
    return ((double)(am_rng_u64(r) >> 11) + 0.5) * 0x1.0p-53;
}

double am_rng_gaussian_slow(am_rng *r, uint64_t w);

/* Writes the next n words of the stream to out, as n calls of am_rng_u64 would. */
void am_rng_fill_u64(am_rng *r, uint64_t *out, size_t n);

/* Writes the next n standard normals to out, as n calls of am_rng_gaussian would. */
void am_rng_fill_gaussian(am_rng *r, double *out, size_t n);

/* Standard normal (ziggurat; the rare wedge and tail cases go out of line). */
static inline double am_rng_gaussian(am_rng *r)
{
    uint64_t w = am_rng_u64(r);
    unsigned i = (unsigned)(w & 0xff);
    double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63; /* (-1, 1) */
    if (fabs(u) < am_zig_r[i]) return u * am_zig_x[i];
    return am_rng_gaussian_slow(r, w);
}

#endif
