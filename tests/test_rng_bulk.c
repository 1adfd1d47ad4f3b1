/*
 * test_rng_bulk.c -- bulk draws of am_rng.h: am_rng_fill_u64 / am_rng_fill_gaussian equal
 * n scalar calls word for word (and leave the stream where the scalar calls would), the
 * word layout equals Random123's philox4x64 with key = (seed, replica) and counter =
 * (step, stream, block, 0), Random123's known-answer vectors, and the normal CDF of the
 * bulk normals at many points (binomial standard error).
 */
#include <math.h>
#include <string.h>

#include <criterion/criterion.h>
#include <gsl/gsl_cdf.h>

#include "../core/am_rng.h"

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

/* Mixed calls: bulk after scalar after bulk on the same stream equals the scalar stream. */
Test(rng_bulk, mixed_calls_equal_scalar)
{
    am_rng s, v;
    am_rng_init(&s, 1, 2, AM_STREAM_USER + 1, 7);
    am_rng_init(&v, 1, 2, AM_STREAM_USER + 1, 7);
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

/* Word 4 b + j of (seed, replica, stream, step) is word j of Random123's philox4x64 at
 * counter (step, stream, b, 0) and key (seed, replica). */
Test(rng_bulk, layout_equals_random123_reference)
{
    uint64_t w[403];
    const uint64_t seeds[] = {0, 1, 0xdeadbeefcafef00dULL, UINT64_MAX};
    const uint64_t steps[] = {0, 1, 999999, (uint64_t)1 << 40, UINT64_MAX};
    for (int si = 0; si < 4; si++)
        for (int ki = 0; ki < 5; ki++)
            for (uint64_t rep = 0; rep < 3; rep++)
                for (uint64_t stream = 0; stream < 20; stream += 3) {
                    am_rng r;
                    am_rng_init(&r, seeds[si], rep == 2 ? AM_REPLICA_SHARED : rep, stream,
                                steps[ki]);
                    am_rng_fill_u64(&r, w, 403);
                    philox4x64_key_t key = {{seeds[si], rep == 2 ? AM_REPLICA_SHARED : rep}};
                    for (uint64_t b = 0; b * 4 < 403; b++) {
                        philox4x64_ctr_t c = {{steps[ki], stream, b, 0}};
                        philox4x64_ctr_t x = philox4x64(c, key);
                        for (int j = 0; j < 4 && b * 4 + (uint64_t)j < 403; j++)
                            cr_assert_eq(
                                w[b * 4 + (uint64_t)j], x.v[j],
                                "seed %llx step %llu replica %llu stream %llu block %llu word %d",
                                (unsigned long long)seeds[si], (unsigned long long)steps[ki],
                                (unsigned long long)rep, (unsigned long long)stream,
                                (unsigned long long)b, j);
                    }
                }
}

/* Random123's published known-answer vectors for philox4x64-10 (kat_vectors). */
Test(rng_bulk, philox4x64_known_answers)
{
    static const uint64_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x16554d9eca36314cULL, 0xdb20fe9d672d0fdcULL, 0xd7e772cee186176bULL,
         0x7e68b68aec7ba23bULL},
        {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX,
         0x87b092c3013fe90bULL, 0x438c3c67be8d0224ULL, 0x9cc7d7c69cd777b6ULL,
         0xa09caebf594f0ba0ULL},
        {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL, 0x082efa98ec4e6c89ULL,
         0x452821e638d01377ULL, 0xbe5466cf34e90c6cULL, 0xa528f45403e61d95ULL, 0x38c72dbd566e9788ULL,
         0xa5a1610e72fd18b5ULL, 0x57bd43b5e52b7fe6ULL}};
    for (int t = 0; t < 3; t++) {
        /* the stream at (seed, replica, stream, step) = (k0, k1, c1, c0) reaches counter word
         * c2 after 4 c2 words; only c3 = 0 is reachable, so vectors with c3 != 0 go to philox4x64
         */
        philox4x64_ctr_t c = {{kat[t][0], kat[t][1], kat[t][2], kat[t][3]}};
        philox4x64_key_t k = {{kat[t][4], kat[t][5]}};
        philox4x64_ctr_t x = philox4x64(c, k);
        for (int j = 0; j < 4; j++)
            cr_assert_eq(x.v[j], kat[t][6 + j], "vector %d word %d: %016llx, expected %016llx", t,
                         j, (unsigned long long)x.v[j], (unsigned long long)kat[t][6 + j]);
        if (kat[t][3] == 0 && kat[t][2] < 1000) {
            am_rng r;
            am_rng_init(&r, kat[t][4], kat[t][5], kat[t][1], kat[t][0]);
            uint64_t w[4 * 1000 + 4];
            am_rng_fill_u64(&r, w, (size_t)(4 * kat[t][2] + 4));
            for (int j = 0; j < 4; j++)
                cr_assert_eq(w[4 * kat[t][2] + (uint64_t)j], kat[t][6 + j],
                             "vector %d via am_rng word %d", t, j);
        }
    }
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
