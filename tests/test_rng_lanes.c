/*
 * test_rng_lanes.c -- the AVX-512 rare path of am_rng_gaussian_lanes: its wedge decisions
 * (a polynomial exp with a margin, am_rng_lanes_wedge) against the two-exponential reference
 * on every layer, decisions at the boundary left to the scalar code, and the normals of
 * every instruction set against am_rng_fill_gaussian_steps over enough steps to hit the
 * tail, the top layer, second failures in one step and the extra block.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/am_rng.h"

/* The reference wedge test of the ziggurat (two exponentials): accept x = u x[i]? */
static int ref_accept(uint64_t w, uint64_t wu)
{
    unsigned i = (unsigned)(w & 0xff);
    double u = (double)(int64_t)(w & ~(uint64_t)0x7ff) * 0x1.0p-63;
    double x = u * am_zig_x[i];
    double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
    double f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
    double U = ((double)(wu >> 11) + 0.5) * 0x1.0p-53;
    return f1 + U * (f0 - f1) < 1.0;
}

/* A word of layer i (1..255) in the wedge region: |u| >= r[i], sign and position from v. */
static uint64_t wedge_word(unsigned i, uint64_t v)
{
    double a = am_zig_r[i] + (1.0 - am_zig_r[i]) * ((double)(v >> 12) * 0x1.0p-52);
    int64_t m = (int64_t)(a * 0x1.0p63 * (1.0 - 0x1.0p-52)); /* below 2^63 */
    uint64_t w = ((uint64_t)m & ~(uint64_t)0x7ff) | i;
    if (v & 1) w = ((uint64_t)(-(int64_t)(w & ~(uint64_t)0x7ff)) & ~(uint64_t)0x7ff) | i;
    return w;
}

/* Every decision the vector test makes is the reference's; it decides nearly all. */
Test(rng_lanes, wedge_decisions_equal_two_exp_reference)
{
    if (am_rng_simd() < 2) cr_skip_test("no AVX-512 on this CPU");
    am_rng g;
    am_rng_init(&g, 77, 1, AM_STREAM_TEST_FIRST, 0);
    size_t decided = 0, total = 0;
    for (unsigned i = 1; i < 256; i++)
        for (int rep = 0; rep < 64; rep++) {
            uint64_t wf[AM_RNG_LANES], wu[AM_RNG_LANES];
            for (int l = 0; l < AM_RNG_LANES; l++) {
                wf[l] = wedge_word(i, am_rng_u64(&g));
                wu[l] = am_rng_u64(&g);
            }
            unsigned acc, clear = am_rng_lanes_wedge(wf, wu, &acc);
            for (int l = 0; l < AM_RNG_LANES; l++) {
                total++;
                double u = (double)(int64_t)(wf[l] & ~(uint64_t)0x7ff) * 0x1.0p-63;
                cr_assert(!(fabs(u) < am_zig_r[i]), "layer %u: test word passes the fast test", i);
                if (!(clear >> l & 1)) continue;
                decided++;
                cr_assert_eq((int)(acc >> l & 1), ref_accept(wf[l], wu[l]),
                             "layer %u lane %d word %016llx uniform %016llx: decision differs", i,
                             l, (unsigned long long)wf[l], (unsigned long long)wu[l]);
            }
        }
    cr_assert(decided >= total - total / 10000, "decided %zu of %zu", decided, total);
}

/* Uniforms that put the test within 1e-12 of its boundary are not decided. */
Test(rng_lanes, wedge_boundary_left_to_scalar_code)
{
    if (am_rng_simd() < 2) cr_skip_test("no AVX-512 on this CPU");
    am_rng g;
    am_rng_init(&g, 78, 1, AM_STREAM_TEST_FIRST, 0);
    size_t n = 0;
    for (unsigned i = 1; i < 256; i++) {
        uint64_t wf[AM_RNG_LANES], wu[AM_RNG_LANES];
        for (int l = 0; l < AM_RNG_LANES; l++) {
            wf[l] = wedge_word(i, am_rng_u64(&g));
            double u = (double)(int64_t)(wf[l] & ~(uint64_t)0x7ff) * 0x1.0p-63;
            double x = u * am_zig_x[i];
            double f0 = exp(-0.5 * (am_zig_x[i] * am_zig_x[i] - x * x));
            double f1 = exp(-0.5 * (am_zig_x[i + 1] * am_zig_x[i + 1] - x * x));
            double U = (1.0 - f1) / (f0 - f1); /* f1 + U (f0 - f1) = 1 */
            double q = U * 0x1.0p53 - 0.5;
            wu[l] = q > 0 && q < 0x1.0p53 ? (uint64_t)q << 11 : 0;
        }
        unsigned acc, clear = am_rng_lanes_wedge(wf, wu, &acc);
        for (int l = 0; l < AM_RNG_LANES; l++) {
            if (wu[l] == 0) continue;
            n++;
            cr_assert(!(clear >> l & 1), "layer %u lane %d: decided at the boundary", i, l);
        }
    }
    cr_assert(n > 1000, "only %zu boundary cases", n);
}

/* Rare cases of the words of steps [step0, step0 + ns) of 8 lanes, n normals per step: the
 * (step, lane) pairs with a failed fast test (first try words only), those with two or more,
 * those with a failure in the base strip, the top layer, and with the last normal failing. */
typedef struct {
    size_t events, twice, tail, top, last;
} rare_count;

static rare_count count_rare(const am_rng *r, uint64_t step0, size_t ns, size_t n)
{
    rare_count c = {0, 0, 0, 0, 0};
    size_t nb = (n + 1) / 2;
    uint64_t *w = malloc(ns * 2 * nb * AM_RNG_LANES * sizeof *w);
    cr_assert_not_null(w);
    am_rng_words_lanes(r, step0, ns, nb, w, 0);
    for (size_t s = 0; s < ns; s++)
        for (int l = 0; l < AM_RNG_LANES; l++) {
            size_t fails = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = w[(s * 2 * nb + i) * AM_RNG_LANES + (size_t)l];
                unsigned k = (unsigned)(x & 0xff);
                double u = (double)(int64_t)(x & ~(uint64_t)0x7ff) * 0x1.0p-63;
                if (fabs(u) < am_zig_r[k]) continue;
                fails++;
                c.tail += k == 0;
                c.top += k == 255;
                c.last += i == n - 1;
            }
            c.events += fails > 0;
            c.twice += fails > 1;
        }
    free(w);
    return c;
}

/* The normals of every instruction set equal am_rng_fill_gaussian_steps lane by lane over
 * 2048 steps of each length 1..16 (about 2 10^6 normals, 3 10^4 rare cases). */
Test(rng_lanes, gaussian_lanes_equal_steps_over_rare_cases, .timeout = 60)
{
    enum { NS = 2048, NMAX = 16 };
    static double a[NS * NMAX * AM_RNG_LANES], b[AM_RNG_LANES][NS * NMAX];
    rare_count total = {0, 0, 0, 0, 0};
    for (size_t n = 1; n <= NMAX; n++) {
        am_rng r[AM_RNG_LANES];
        for (int l = 0; l < AM_RNG_LANES; l++)
            am_rng_init(&r[l], 2027, (uint64_t)(7 * l) + n, AM_STREAM_DATA, 0);
        uint64_t step0 = 5000 * n;
        rare_count c = count_rare(r, step0, NS, n);
        total.events += c.events;
        total.twice += c.twice;
        total.tail += c.tail;
        total.top += c.top;
        total.last += c.last;
        for (int l = 0; l < AM_RNG_LANES; l++) {
            am_rng q;
            am_rng_init(&q, 2027, (uint64_t)(7 * l) + n, AM_STREAM_DATA, 0);
            am_rng_fill_gaussian_steps(&q, step0, NS, n, b[l]);
        }
        for (int simd = 0; simd <= 2; simd++) {
            am_rng_gaussian_lanes(r, step0, NS, n, a, simd);
            for (int l = 0; l < AM_RNG_LANES; l++)
                for (size_t t = 0; t < NS * n; t++)
                    cr_assert(memcmp(&a[t * AM_RNG_LANES + (size_t)l], &b[l][t], sizeof a[0]) == 0,
                              "n=%zu simd=%d lane %d step %zu normal %zu: %.17g vs %.17g", n, simd,
                              l, t / n, t % n, a[t * AM_RNG_LANES + (size_t)l], b[l][t]);
        }
    }
    /* the cases the rare path distinguishes all occurred */
    cr_assert(total.events > 10000 && total.twice > 100 && total.tail > 50 && total.top > 1000 &&
                  total.last > 1000,
              "rare cases: %zu events, %zu twice, %zu tail, %zu top, %zu last", total.events,
              total.twice, total.tail, total.top, total.last);
    cr_log_info("rare cases: %zu events, %zu twice, %zu tail, %zu top, %zu last", total.events,
                total.twice, total.tail, total.top, total.last);
}

/* Calls of every length around the batch boundaries of am_rng_gaussian_lanes (a batch is 256
 * words per lane, in sets of four (step, block) pairs, so the last set of a batch is often
 * partial), from many first steps, for each step length 1..9 and instruction set: the normals
 * equal am_rng_fill_gaussian_steps lane by lane, and rare cases occur in the last steps of
 * the calls (where a partial set is). */
Test(rng_lanes, gaussian_lanes_call_and_batch_boundaries, .timeout = 60)
{
    enum { NMAX = 9, SMAX = 260 };
    static const size_t lens[] = {1,  2,  3,  5,  7,   31,  42,  43, 63,
                                  64, 65, 85, 86, 127, 128, 129, 257};
    static double a[SMAX * NMAX * AM_RNG_LANES], b[AM_RNG_LANES][SMAX * NMAX];
    size_t late_events = 0, calls = 0;
    for (size_t n = 1; n <= NMAX; n++)
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
            for (uint64_t rep = 0; rep < 3; rep++) {
                size_t ns = lens[li];
                uint64_t step0 = 1000 * rep + 7 * n + li;
                am_rng r[AM_RNG_LANES];
                for (int l = 0; l < AM_RNG_LANES; l++)
                    am_rng_init(&r[l], 4099, (uint64_t)(3 * l) + 100 * n, AM_STREAM_DATA, 0);
                for (int l = 0; l < AM_RNG_LANES; l++) {
                    am_rng q;
                    am_rng_init(&q, 4099, (uint64_t)(3 * l) + 100 * n, AM_STREAM_DATA, 0);
                    am_rng_fill_gaussian_steps(&q, step0, ns, n, b[l]);
                }
                size_t tail = ns < 4 ? ns : 4; /* rare cases in the last steps of the call */
                late_events += count_rare(r, step0 + ns - tail, tail, n).events;
                for (int simd = 0; simd <= 2; simd++) {
                    memset(a, 0, ns * n * AM_RNG_LANES * sizeof a[0]);
                    am_rng_gaussian_lanes(r, step0, ns, n, a, simd);
                    calls++;
                    for (int l = 0; l < AM_RNG_LANES; l++)
                        for (size_t t = 0; t < ns * n; t++)
                            cr_assert(memcmp(&a[t * AM_RNG_LANES + (size_t)l], &b[l][t],
                                             sizeof a[0]) == 0,
                                      "n=%zu steps=%zu step0=%llu simd=%d lane %d step %zu normal "
                                      "%zu: %.17g vs %.17g",
                                      n, ns, (unsigned long long)step0, simd, l, t / n, t % n,
                                      a[t * AM_RNG_LANES + (size_t)l], b[l][t]);
                }
            }
    cr_assert(late_events > 100, "only %zu rare cases in the last steps of %zu calls", late_events,
              calls);
}
