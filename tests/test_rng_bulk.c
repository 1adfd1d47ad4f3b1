/*
 * test_rng_bulk.c -- bulk draws of am_rng.h: am_rng_fill_u64 / am_rng_fill_gaussian equal
 * n scalar calls word for word (and leave the stream where the scalar calls would), the
 * words equal Random123's philox4x32 at the counter/key layout of am_rng.h, the AVX2
 * blocks equal the portable ones, Random123's known-answer vectors, and the normal CDF of
 * the bulk normals at many points (binomial standard error).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>

#include "../core/am_common.h"
#include "../core/am_rng.h"
#include "../montecarlo/am_msgd.h"

/* Lengths that cross block boundaries (4 words) and the bulk buffer (260 words). */
static const size_t bulk_lengths[] = {0,  1,  2,  3,   4,   5,   7,   8,   9,
                                      63, 64, 65, 100, 259, 260, 261, 777, 1000};
enum { NLEN = sizeof bulk_lengths / sizeof bulk_lengths[0], MAXLEN = 1000 };

Test(rng_bulk, fill_u64_equals_scalar)
{
    uint64_t a[MAXLEN], b[MAXLEN];
    for (unsigned skip = 0; skip < 6; skip++)
        for (int li = 0; li < NLEN; li++) {
            size_t n = bulk_lengths[li];
            am_rng s, v;
            am_rng_init(&s, 99, skip, AM_STREAM_DATA, 12345);
            am_rng_init(&v, 99, skip, AM_STREAM_DATA, 12345);
            for (unsigned i = 0; i < skip; i++) {
                am_rng_u64(&s);
                am_rng_u64(&v);
            }
            for (size_t i = 0; i < n; i++)
                a[i] = am_rng_u64(&s);
            am_rng_fill_u64(&v, b, n);
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(a[i], b[i], "skip=%u n=%zu: word %zu scalar %016llx bulk %016llx",
                             skip, n, i, (unsigned long long)a[i], (unsigned long long)b[i]);
            for (int i = 0; i < 9; i++) {
                uint64_t x = am_rng_u64(&s), y = am_rng_u64(&v);
                cr_assert_eq(x, y, "skip=%u n=%zu: word %d after the bulk call differs", skip, n,
                             i);
            }
        }
}

Test(rng_bulk, fill_gaussian_equals_scalar)
{
    static double a[MAXLEN], b[MAXLEN];
    long tail = 0, total = 0;
    for (uint64_t step = 0; step < 40; step++)
        for (unsigned skip = 0; skip < 5; skip++)
            for (int li = 0; li < NLEN; li++) {
                size_t n = bulk_lengths[li];
                am_rng s, v;
                am_rng_init(&s, 5, 3, AM_STREAM_NOISE, step * 1000 + skip);
                am_rng_init(&v, 5, 3, AM_STREAM_NOISE, step * 1000 + skip);
                for (unsigned i = 0; i < skip; i++) {
                    am_rng_u64(&s);
                    am_rng_u64(&v);
                }
                for (size_t i = 0; i < n; i++)
                    a[i] = am_rng_gaussian(&s);
                am_rng_fill_gaussian(&v, b, n);
                for (size_t i = 0; i < n; i++) {
                    cr_assert(memcmp(&a[i], &b[i], sizeof a[i]) == 0,
                              "step=%llu skip=%u n=%zu: normal %zu scalar %.17g bulk %.17g",
                              (unsigned long long)step, skip, n, i, a[i], b[i]);
                    tail += fabs(a[i]) > 3.6541528853610088;
                }
                total += (long)n;
                /* the stream continues where the scalar calls left it, for either kind */
                cr_assert_eq(am_rng_u64(&s), am_rng_u64(&v), "step=%llu skip=%u n=%zu: next word",
                             (unsigned long long)step, skip, n);
                double x = am_rng_gaussian(&s), y = am_rng_gaussian(&v);
                cr_assert(memcmp(&x, &y, sizeof x) == 0, "step=%llu skip=%u n=%zu: next normal",
                          (unsigned long long)step, skip, n);
            }
    /* the comparison covered the base strip's tail (P(|Z| > R) = 2.6e-4), hence the slow path */
    cr_assert(tail >= 20, "only %ld tail normals among %ld", tail, total);
}

/* Normals of many short steps at once equal step-by-step bulk draws (and leave the stream
 * where the last step's draw leaves it). */
Test(rng_bulk, fill_gaussian_steps_equals_per_step)
{
    static double a[100 * 70], b[100 * 70];
    const size_t counts[] = {1, 2, 3, 7, 40, 100};
    long tail = 0;
    for (size_t n = 1; n <= 70; n += (n < 12 ? 1 : 29))
        for (int ci = 0; ci < 6; ci++) {
            size_t ns = counts[ci];
            uint64_t step0 = 65530 + 1000 * n; /* crosses the 2^16 boundary of counter word 2 */
            am_rng s, v;
            am_rng_init(&s, 8, 123, AM_STREAM_DATA, 0);
            am_rng_init(&v, 8, 123, AM_STREAM_DATA, 0);
            for (size_t k = 0; k < ns; k++) {
                am_rng_seek(&s, step0 + k);
                am_rng_fill_gaussian(&s, a + k * n, n);
            }
            am_rng_fill_gaussian_steps(&v, step0, ns, n, b);
            for (size_t i = 0; i < ns * n; i++) {
                cr_assert(memcmp(&a[i], &b[i], sizeof a[i]) == 0,
                          "n=%zu steps=%zu: normal %zu: %.17g vs %.17g", n, ns, i, a[i], b[i]);
                tail += fabs(a[i]) > 3.6541528853610088;
            }
            cr_assert_eq(am_rng_u64(&s), am_rng_u64(&v), "n=%zu steps=%zu: next word", n, ns);
        }
    /* many short steps: enough rejections, including tail draws, inside the batches */
    for (size_t n = 2; n <= 6; n += 4) {
        size_t ns = 20000 / n;
        double *x = malloc(ns * n * sizeof *x), *y = malloc(ns * n * sizeof *y);
        am_rng s, v;
        am_rng_init(&s, 9, 1, AM_STREAM_DATA, 0);
        am_rng_init(&v, 9, 1, AM_STREAM_DATA, 0);
        for (size_t k = 0; k < ns; k++) {
            am_rng_seek(&s, k);
            for (size_t i = 0; i < n; i++)
                x[k * n + i] = am_rng_gaussian(&s);
        }
        am_rng_fill_gaussian_steps(&v, 0, ns, n, y);
        for (size_t i = 0; i < ns * n; i++) {
            cr_assert(memcmp(&x[i], &y[i], sizeof x[i]) == 0, "n=%zu: normal %zu: %.17g vs %.17g",
                      n, i, x[i], y[i]);
            tail += fabs(x[i]) > 3.6541528853610088;
        }
        free(x);
        free(y);
    }
    cr_assert(tail >= 3, "only %ld tail normals: the rare case was not exercised", tail);
}

/* Mixed calls: bulk after scalar after bulk on the same stream equals the scalar stream. */
Test(rng_bulk, mixed_calls_equal_scalar)
{
    am_rng s, v;
    am_rng_init(&s, 1, 2, AM_STREAM_DATASET, 7);
    am_rng_init(&v, 1, 2, AM_STREAM_DATASET, 7);
    double g[300];
    uint64_t w[300];
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)(round * 37 % 300);
        if (round % 3 == 0) {
            am_rng_fill_gaussian(&v, g, n);
            for (size_t i = 0; i < n; i++) {
                double z = am_rng_gaussian(&s);
                cr_assert(memcmp(&z, &g[i], sizeof z) == 0, "round %d normal %zu", round, i);
            }
        } else if (round % 3 == 1) {
            am_rng_fill_u64(&v, w, n);
            for (size_t i = 0; i < n; i++)
                cr_assert_eq(am_rng_u64(&s), w[i], "round %d word %zu", round, i);
        } else {
            double x = am_rng_uniform(&s), y = am_rng_uniform(&v);
            cr_assert(x == y, "round %d uniform", round);
        }
    }
}

/* Reference words of block b: Random123's philox4x32 at the documented counter
 * b + 2^32 stream + 2^40 replica + 2^80 step and key (seed mod 2^32, seed div 2^32). */
static void reference_block(uint64_t seed, uint64_t replica, uint64_t stream, uint64_t step,
                            uint32_t b, uint64_t w[2])
{
    unsigned __int128 c = (unsigned __int128)b + ((unsigned __int128)stream << 32) +
                          ((unsigned __int128)(replica & AM_RNG_REPLICA_LIMIT) << 40) +
                          ((unsigned __int128)step << 80);
    philox4x32_ctr_t ctr = {
        {(uint32_t)c, (uint32_t)(c >> 32), (uint32_t)(c >> 64), (uint32_t)(c >> 96)}};
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    philox4x32_ctr_t x = philox4x32(ctr, key);
    w[0] = (uint64_t)x.v[1] << 32 | x.v[0];
    w[1] = (uint64_t)x.v[3] << 32 | x.v[2];
}

/* Scalar and bulk words equal the reference for seeds, replicas, streams and steps at
 * the edges of the layout. */
Test(rng_bulk, layout_equals_random123_reference)
{
    uint64_t w[403], v[403], ref[2];
    const uint64_t seeds[] = {0, 1, 0xdeadbeefcafef00dULL, UINT64_MAX};
    const uint64_t steps[] = {0, 1, 65535, 65536, 999999, AM_RNG_STEP_LIMIT - 1};
    const uint64_t reps[] = {
        0, 1, (1u << 24) - 1, 1u << 24, AM_RNG_REPLICA_LIMIT - 1, AM_REPLICA_SHARED};
    const uint64_t streams[] = {0, 1, 16, 255};
    for (int si = 0; si < 4; si++)
        for (int ki = 0; ki < 6; ki++)
            for (int ri = 0; ri < 6; ri++)
                for (int ti = 0; ti < 4; ti++) {
                    cr_assert(am_rng_in_range(reps[ri], streams[ti], steps[ki]));
                    am_rng r, q;
                    am_rng_init(&r, seeds[si], reps[ri], streams[ti], 0);
                    am_rng_seek(&r, steps[ki]);
                    am_rng_init(&q, seeds[si], reps[ri], streams[ti], steps[ki]);
                    am_rng_fill_u64(&r, w, 403);
                    for (int i = 0; i < 403; i++)
                        v[i] = am_rng_u64(&q);
                    for (uint32_t b = 0; 2 * b < 403; b++) {
                        reference_block(seeds[si], reps[ri], streams[ti], steps[ki], b, ref);
                        for (uint32_t j = 0; j < 2 && 2 * b + j < 403; j++) {
                            cr_assert_eq(w[2 * b + j], ref[j],
                                         "bulk: seed %llx step %llu replica %llu stream %llu block "
                                         "%u word %u",
                                         (unsigned long long)seeds[si],
                                         (unsigned long long)steps[ki],
                                         (unsigned long long)reps[ri],
                                         (unsigned long long)streams[ti], b, j);
                            cr_assert_eq(v[2 * b + j], ref[j],
                                         "scalar: seed %llx step %llu replica %llu stream %llu "
                                         "block %u word %u",
                                         (unsigned long long)seeds[si],
                                         (unsigned long long)steps[ki],
                                         (unsigned long long)reps[ri],
                                         (unsigned long long)streams[ti], b, j);
                        }
                    }
                }
    cr_assert(!am_rng_in_range(AM_RNG_REPLICA_LIMIT, 0, 0), "replica 2^40 - 1 is reserved");
    cr_assert(!am_rng_in_range(0, AM_RNG_STREAM_LIMIT, 0), "stream 256 is out of range");
    cr_assert(!am_rng_in_range(0, 0, AM_RNG_STEP_LIMIT), "step 2^48 is out of range");
}

/* The one-block, AVX2 and AVX-512 code (those the CPU has) equal Random123 at every offset. */
Test(rng_bulk, simd_blocks_equal_reference)
{
    uint64_t a[2 * 300], ref[2];
    const uint64_t seed = 0x0123456789abcdefULL, rep = 77, step = 123456789;
    am_rng r;
    am_rng_init(&r, seed, rep, AM_STREAM_DATA, step);
    const uint32_t starts[] = {0, 1, 7, 15, 16, 31, 32, 4294967295u - 300};
    for (int si = 0; si < 8; si++)
        for (size_t nb = 0; nb <= 300; nb += (nb < 40 ? 1 : 37))
            for (int simd = 0; simd <= 2; simd++) {
                am_rng_blocks(&r, starts[si], nb, a, simd);
                for (size_t b = 0; b < nb; b++) {
                    reference_block(seed, rep, AM_STREAM_DATA, step, starts[si] + (uint32_t)b, ref);
                    cr_assert(a[2 * b] == ref[0] && a[2 * b + 1] == ref[1],
                              "start %u nb %zu block %zu (simd=%d, cpu %d)", starts[si], nb, b,
                              simd, am_rng_simd());
                }
            }
}

/* Random123's published known-answer vectors for philox4x32-10 (kat_vectors); the first
 * (all-zero counter and key) is also word 0 and 1 of seed 0, replica 0, stream 0, step 0. */
Test(rng_bulk, philox4x32_known_answers)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1}};
    for (int t = 0; t < 3; t++) {
        philox4x32_ctr_t c = {{kat[t][0], kat[t][1], kat[t][2], kat[t][3]}};
        philox4x32_key_t k = {{kat[t][4], kat[t][5]}};
        philox4x32_ctr_t x = philox4x32(c, k);
        for (int j = 0; j < 4; j++)
            cr_assert_eq(x.v[j], kat[t][6 + j], "vector %d word %d: %08x, expected %08x", t, j,
                         x.v[j], kat[t][6 + j]);
        /* the same block through the bulk code: a stream whose counter words c1..c3 and
         * key are those of the vector, at block c0 */
        am_rng r;
        am_rng_init(&r, 0, 0, 0, 0);
        r.key = k;
        r.ctr = c;
        uint64_t w[2], v[2];
        am_rng_blocks(&r, kat[t][0], 1, w, 2);
        am_rng_blocks(&r, kat[t][0], 1, v, 0);
        uint64_t e0 = (uint64_t)kat[t][7] << 32 | kat[t][6],
                 e1 = (uint64_t)kat[t][9] << 32 | kat[t][8];
        cr_assert(w[0] == e0 && w[1] == e1 && v[0] == e0 && v[1] == e1,
                  "vector %d through am_rng_blocks", t);
    }
    am_rng r;
    am_rng_init(&r, 0, 0, 0, 0);
    uint64_t w0 = am_rng_u64(&r), w1 = am_rng_u64(&r);
    cr_assert(w0 == 0xe169c58d6627e8d5ULL && w1 == 0x9b00dbd8bc57ac4cULL,
              "seed 0 replica 0 stream 0 step 0: %016llx %016llx", (unsigned long long)w0,
              (unsigned long long)w1);
}

/* The empirical CDF of 2e6 bulk normals (drawn 100 per step, as the kernel does) against
 * Phi at points in the rectangles, the wedges and the tail beyond R; 5 binomial SE. */
Test(rng_bulk, fill_gaussian_cdf)
{
    const double pts[] = {-4.2, -3.66, -3.0, -2.0, -1.3, -0.7, -0.2, 0.0,
                          0.05, 0.3,   0.9,  1.7,  2.4,  3.1,  3.7,  4.5};
    enum { NP = sizeof pts / sizeof pts[0] };
    long cnt[NP] = {0};
    const size_t d = 100;
    const long steps = 20000, n = steps * (long)d;
    double z[100], m2 = 0, m4 = 0;
    am_rng r;
    am_rng_init(&r, 17, 4, AM_STREAM_DATA, 0);
    for (long k = 0; k < steps; k++) {
        am_rng_seek(&r, (uint64_t)k);
        am_rng_fill_gaussian(&r, z, d);
        for (size_t i = 0; i < d; i++) {
            m2 += z[i] * z[i];
            m4 += z[i] * z[i] * z[i] * z[i];
            for (int j = 0; j < NP; j++)
                cnt[j] += z[i] <= pts[j];
        }
    }
    for (int j = 0; j < NP; j++) {
        double p = gsl_cdf_ugaussian_P(pts[j]), ph = (double)cnt[j] / (double)n;
        double se = sqrt(p * (1 - p) / (double)n);
        cr_assert(fabs(ph - p) < 5 * se + 1e-12,
                  "P(Z <= %g): empirical %.7f, exact %.7f, 5 SE %.2g (n=%ld)", pts[j], ph, p,
                  5 * se, n);
    }
    m2 /= (double)n;
    m4 /= (double)n;
    cr_assert(fabs(m2 - 1) < 5 * sqrt(2.0 / (double)n), "E Z^2 = %.5f (n=%ld)", m2, n);
    cr_assert(fabs(m4 - 3) < 5 * sqrt(96.0 / (double)n), "E Z^4 = %.5f (n=%ld)", m4, n);
}

/* The ensemble refuses steps and replica counts outside the counter layout. */
Test(rng_bulk, ensemble_refuses_counter_overflow)
{
    const double l[3] = {3, 2, 1};
    am_dist dist;
    char err[100];
    cr_assert_eq(am_problem_dist_parse("gaussian", &dist, err, sizeof err), AM_OK);
    am_problem *p = am_problem_alloc(3, l, dist, 0, NULL, NULL, 0);
    am_msgd_params par = am_msgd_params_default();
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    cr_assert_eq(st, AM_OK);
    am_ensemble_result *res = NULL;
    am_ensemble_params ep = {2, 1, 0};
    uint64_t k[2] = {0, AM_RNG_STEP_LIMIT};
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 2, &ep, &res), AM_EINVAL, "step 2^48");
    cr_assert_null(res);
    k[1] = 10;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 2, &ep, &res), AM_OK, "steps 0..10");
    am_ensemble_result_free(res);
    res = NULL;
    ep.replicas = (size_t)AM_RNG_REPLICA_LIMIT;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, 2, &ep, &res), AM_EINVAL,
                 "2^40 - 1 replicas");
    am_msgd_free(m);
    am_problem_free(p);
}

/* ---- the ziggurat against the two-exponential reference, bit for bit ---- */

#define REF_R 3.6541528853610088

/* Words of the reference: w[0..nw) first, then the stream r (already moved past them). */
typedef struct {
    const uint64_t *w;
    size_t j, nw;
    am_rng *r;
} ref_src;

static uint64_t ref_u64(ref_src *s)
{
    if (s->j < s->nw) return s->w[s->j++];
    return am_rng_u64(s->r);
}

static double ref_uniform(ref_src *s)
{
    return ((double)(ref_u64(s) >> 11) + 0.5) * 0x1.0p-53;
}

/* The ziggurat as it was before the one-exponential wedge test (two exp per wedge); tail
 * constant `tail_r` (REF_R for the reference; another value makes a deliberately wrong one). */
static double ref_gaussian(ref_src *s, double tail_r)
{
    uint64_t w = ref_u64(s);
    for (;;) {
        unsigned i = (unsigned)(w & 0xff);
        double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
        if (fabs(u) < am_zig_r[i]) return u * am_zig_x[i];
        if (i == 0) {
            double x, y;
            do {
                x = log(ref_uniform(s)) / tail_r;
                y = log(ref_uniform(s));
            } while (-2.0 * y < x * x);
            return u < 0 ? x - tail_r : tail_r - x;
        }
        double x = u * am_zig_x[i];
        double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
        double f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
        if (f1 + ref_uniform(s) * (f0 - f1) < 1.0) return x;
        w = ref_u64(s);
    }
}

static uint64_t fnv_doubles(uint64_t h, const double *x, size_t n)
{
    const unsigned char *b = (const unsigned char *)x;
    for (size_t i = 0; i < n * sizeof *x; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* AM_RNG_HASH_DRAWS normals (default 10^7) of many steps: the reference, am_rng_gaussian,
 * am_rng_fill_gaussian (1000 per step), am_rng_fill_gaussian_steps and am_rng_gaussian_lanes
 * (4 per step), the words transform on every instruction set: equal normal by normal, and
 * the same hash. */
Test(rng_bulk, ziggurat_equals_two_exp_reference_over_many_draws, .timeout = 600)
{
    const char *e = getenv("AM_RNG_HASH_DRAWS");
    double want = e ? atof(e) : 1e7;
    enum { N = 1000, LN = 4 };
    size_t nsteps = (size_t)(want / N);
    static double ref[N], a[N], b[N], c[N];
    uint64_t h_ref = 0xcbf29ce484222325ULL, h_fill = h_ref;
    for (size_t st = 0; st < nsteps; st++) {
        am_rng q, s, v;
        am_rng_init(&q, 31337, st % 97, AM_STREAM_DATA, st);
        am_rng_init(&s, 31337, st % 97, AM_STREAM_DATA, st);
        am_rng_init(&v, 31337, st % 97, AM_STREAM_DATA, st);
        ref_src src = {NULL, 0, 0, &q};
        for (size_t i = 0; i < N; i++) {
            ref[i] = ref_gaussian(&src, REF_R);
            a[i] = am_rng_gaussian(&s);
        }
        am_rng_fill_gaussian(&v, b, N);
        cr_assert(memcmp(ref, a, sizeof ref) == 0, "step %zu: am_rng_gaussian differs", st);
        cr_assert(memcmp(ref, b, sizeof ref) == 0, "step %zu: am_rng_fill_gaussian differs", st);
        if (st % 50 == 0) {
            /* the words transform on 64 words of the step, each instruction set */
            for (int simd = 0; simd <= 2; simd++) {
                am_rng w0, w1;
                uint64_t wd[64];
                am_rng_init(&w0, 31337, st % 97, AM_STREAM_DATA, st);
                am_rng_fill_u64(&w0, wd, 64);
                am_rng_init(&w1, 31337, st % 97, AM_STREAM_DATA, st);
                am_rng_gaussian_words(&w1, wd, 64, c, N, simd);
                cr_assert(memcmp(ref, c, sizeof ref) == 0,
                          "step %zu simd %d: am_rng_gaussian_words differs", st, simd);
            }
        }
        h_ref = fnv_doubles(h_ref, ref, N);
        h_fill = fnv_doubles(h_fill, b, N);
    }
    cr_assert_eq(h_ref, h_fill);
    /* 4 per step, steps side by side and lanes side by side */
    size_t nls = (size_t)(want / 4 / 2 / AM_RNG_LANES) / 256 * 256;
    static double zl[256 * LN * AM_RNG_LANES], zs[256 * LN], zr[256 * LN];
    for (size_t s0 = 0; s0 < nls; s0 += 256) {
        am_rng r[AM_RNG_LANES];
        for (int l = 0; l < AM_RNG_LANES; l++)
            am_rng_init(&r[l], 99, (uint64_t)l + s0, AM_STREAM_DATA, 0);
        am_rng_gaussian_lanes(r, s0, 256, LN, zl, 2);
        for (int l = 0; l < AM_RNG_LANES; l++) {
            am_rng q;
            am_rng_init(&q, 99, (uint64_t)l + s0, AM_STREAM_DATA, 0);
            am_rng_fill_gaussian_steps(&q, s0, 256, LN, zs);
            for (size_t t = 0; t < 256; t++) {
                am_rng_seek(&q, s0 + t);
                ref_src src = {NULL, 0, 0, &q};
                for (int i = 0; i < LN; i++)
                    zr[t * LN + (size_t)i] = ref_gaussian(&src, REF_R);
            }
            cr_assert(memcmp(zs, zr, sizeof zs) == 0, "steps from %zu lane %d: steps differ", s0,
                      l);
            for (size_t t = 0; t < 256 * LN; t++)
                cr_assert(memcmp(&zl[t * AM_RNG_LANES + (size_t)l], &zr[t], sizeof zr[t]) == 0,
                          "steps from %zu lane %d normal %zu: lanes differ", s0, l, t);
        }
    }
    cr_log_info("ziggurat hash over %zu normals: %016llx", nsteps * N, (unsigned long long)h_ref);
}

/* Crafted words: every fast-test boundary |u| = r[i] +- 1 unit of the 53-bit u, u = -1, 0,
 * the largest |u|, in the tail layer 0, the edge layers 1, 2, 254, 255 and middle layers;
 * each followed by a wedge uniform at the acceptance threshold +- 2 units (where the
 * one-exponential test must fall back to the second exp) or by the stream's words; placed
 * at several positions of the buffer (the scalar test of short requests, the groups of the
 * vector fast pass and its scalar tail), on every instruction set. Each must equal the
 * reference. */
Test(rng_bulk, ziggurat_boundaries_tail_and_wedge_threshold)
{
    const unsigned layers[] = {0, 1, 2, 3, 100, 127, 128, 200, 253, 254, 255};
    /* positions in the first groups and deep in a pass (lengths of 16 or more words go
     * through the vector fast pass, shorter ones through the scalar test) */
    const size_t positions[] = {0, 1, 3, 4, 7, 8, 13, 20, 33, 41, 44, 47, 63};
    enum { NB = 64 };
    long cases = 0, tail_cases = 0, tail_differs = 0;
    for (size_t li = 0; li < sizeof layers / sizeof layers[0]; li++) {
        unsigned i = layers[li];
        int64_t bnd = (int64_t)floor(am_zig_r[i] * 0x1.0p52);
        int64_t ms[] = {bnd - 1,
                        bnd,
                        bnd + 1,
                        bnd + 2,
                        -bnd - 2,
                        -bnd - 1,
                        -bnd,
                        -bnd + 1,
                        ((int64_t)1 << 52) - 1,
                        -((int64_t)1 << 52),
                        0,
                        (bnd + ((int64_t)1 << 52)) / 2,
                        -(bnd + ((int64_t)1 << 52)) / 2};
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
            uint64_t w0 = ((uint64_t)ms[mi] << 11) | 0x500u | i;
            double u = (double)(int64_t)(w0 & ~(uint64_t)0x7ff) * 0x1.0p-63;
            /* the wedge threshold U* of this word: f1 + U (f0 - f1) = 1 */
            double x = u * am_zig_x[i];
            double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
            double f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
            double us = (1.0 - f1) / (f0 - f1);
            int wedge = i > 0 && !(fabs(u) < am_zig_r[i]) && us > 0 && us < 1;
            for (int follow = 0; follow < 7; follow++)
                for (size_t pi = 0; pi < sizeof positions / sizeof positions[0]; pi++) {
                    size_t pos = positions[pi];
                    uint64_t buf[NB];
                    am_rng g;
                    am_rng_init(&g, 2024, li * 100 + mi, AM_STREAM_TEST_FIRST, (uint64_t)follow);
                    am_rng_fill_u64(&g, buf, NB);
                    buf[pos] = w0;
                    if (follow < 5 && wedge && pos + 1 < NB) {
                        int64_t W = (int64_t)floor(us * 0x1.0p53 - 0.5) + (follow - 2);
                        buf[pos + 1] = (uint64_t)W << 11;
                    }
                    if (follow == 5 && i == 0 && pos + 2 < NB) {
                        /* a tail try that fails (x^2 > -2 log y), then the stream */
                        buf[pos + 1] = (uint64_t)(0x1.0p53 * 0.01) << 11;
                        buf[pos + 2] = (uint64_t)(0x1.0p53 * 0.999) << 11;
                    }
                    for (size_t nwi = 0; nwi < 5; nwi++) {
                        /* (words given, normals asked): 45 ends a pass with 5 words after
                         * its groups of 8 */
                        const size_t nws[] = {2, 16, 64, 64, 64}, nns[] = {12, 12, 12, 56, 45};
                        const size_t nw = nws[nwi], n = nns[nwi];
                        double ref[56], wrong[56], got[56];
                        for (int simd = 0; simd <= 2; simd++) {
                            am_rng rr, rs;
                            am_rng_init(&rr, 7, 1, AM_STREAM_DATA, 5);
                            am_rng_init(&rs, 7, 1, AM_STREAM_DATA, 5);
                            for (size_t t = 0; t < nw; t++)
                                am_rng_u64(&rr);
                            am_rng rw = rr;
                            ref_src src = {buf, 0, nw, &rr}, srw = {buf, 0, nw, &rw};
                            for (size_t t = 0; t < n; t++) {
                                ref[t] = ref_gaussian(&src, REF_R);
                                wrong[t] = ref_gaussian(&srw, nextafter(REF_R, 4.0));
                            }
                            am_rng_gaussian_words(&rs, buf, nw, got, n, simd);
                            for (size_t t = 0; t < n; t++)
                                cr_assert(memcmp(&ref[t], &got[t], sizeof got[t]) == 0,
                                          "layer %u m=%lld follow %d pos %zu nw %zu simd %d: "
                                          "normal %zu %.17g, reference %.17g",
                                          i, (long long)ms[mi], follow, pos, nw, simd, t, got[t],
                                          ref[t]);
                            /* the stream continues after the last word the reference used:
                             * word src.j of the step (the buffer stands for words 0..nw-1, and
                             * for the second word of a block left half used) */
                            am_rng nx;
                            am_rng_init(&nx, 7, 1, AM_STREAM_DATA, 5);
                            for (size_t t = 0; t < src.j; t++)
                                am_rng_u64(&nx);
                            uint64_t next = src.j >= nw ? am_rng_u64(&rr)
                                            : src.j % 2 ? buf[src.j]
                                                        : am_rng_u64(&nx);
                            cr_assert_eq(am_rng_u64(&rs), next,
                                         "layer %u m=%lld follow %d pos %zu nw %zu: position", i,
                                         (long long)ms[mi], follow, pos, nw);
                            cases++;
                            if (i == 0 && pos < nw && !(fabs(u) < am_zig_r[0])) {
                                tail_cases++;
                                tail_differs += memcmp(ref, wrong, n * sizeof *ref) != 0;
                            }
                        }
                    }
                }
        }
    }
    cr_assert_gt(cases, 10000, "%ld cases", cases);
    /* the tail words reach the tail: a reference with the tail constant one ulp off gives
     * other normals in most of them (the rest round to the same double) */
    cr_assert(tail_cases > 0 && 2 * tail_differs > tail_cases,
              "tail: %ld of %ld cases differ with a wrong tail constant", tail_differs, tail_cases);
}

/* AMSGD_SIMD reaches the dispatch inside the random streams (one selection for the whole
 * program, am_common_simd): portable and scalar put the bulk draws on their portable code,
 * avx2 caps them at AVX2, and without the variable they take the CPU's best. Each test runs
 * in a fresh process, so the first am_common_simd() call sees the variable set here. */
Test(rng_bulk, amsgd_simd_portable_reaches_the_streams)
{
    setenv("AMSGD_SIMD", "portable", 1);
    cr_assert_eq(am_common_simd(), AM_SIMD_PORTABLE);
    cr_assert_eq(am_rng_simd(), 0, "AMSGD_SIMD=portable: bulk draws on level %d", am_rng_simd());
}

Test(rng_bulk, amsgd_simd_scalar_reaches_the_streams)
{
    setenv("AMSGD_SIMD", "scalar", 1);
    cr_assert_eq(am_common_simd(), AM_SIMD_SCALAR);
    cr_assert_eq(am_rng_simd(), 0, "AMSGD_SIMD=scalar: bulk draws on level %d", am_rng_simd());
}

Test(rng_bulk, amsgd_simd_avx2_caps_the_streams)
{
    if (am_common_simd_best() < AM_SIMD_AVX2) cr_skip_test("no AVX2 on this CPU");
    setenv("AMSGD_SIMD", "avx2", 1);
    cr_assert_eq(am_rng_simd(), 1, "AMSGD_SIMD=avx2: bulk draws on level %d", am_rng_simd());
}

Test(rng_bulk, without_amsgd_simd_the_streams_take_the_best)
{
    unsetenv("AMSGD_SIMD");
    int best = am_common_simd_best();
    int want = best >= AM_SIMD_AVX512 ? 2 : best >= AM_SIMD_AVX2 ? 1 : 0;
    cr_assert_eq(am_rng_simd(), want, "best %d: bulk draws on level %d", best, am_rng_simd());
}
