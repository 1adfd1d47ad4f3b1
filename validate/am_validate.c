/*
 * am_validate.c -- the registry of am_validate.h: the const table of check families (one file
 * each, validate/am_vf_<family>.c, entries declared in am_validate_impl.h, each with the
 * capacity of rows it may write), the lookup, the bounded run of one family and of the whole
 * table, and the column table of a row that the writers of JSON and CSV follow.
 */
#include "am_validate.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "am_validate_impl.h"

am_validate_opts am_validate_opts_default(void)
{
    am_validate_opts o = {AM_VALIDATE_QUICK, 0, 1, 1.0, 0.0, 1, 0};
    return o;
}

/* ---- the table ------------------------------------------------------------------------------ */

const am_validate_check am_validate_checks[] = {
    {"ode-order", "weak error to the ODE limit is O(eta), mu in {0, 0.5, 0.9}, with/without delay",
     12, 0.10, am_vf_ode_order_run},
    {"stationary", "time-averaged error near v^1 equals the OU prediction (gaussian, rademacher)",
     10, 0.10, am_vf_stationary_run},
    {"relaxation", "autocorrelation time of h_i near v^1 equals (1-mu)/(lambda_1-lambda_i)", 12,
     0.10, am_vf_relaxation_run},
    {"escape", "quartiles of the escape time from e_2 match the unstable OU", 12, 0.10,
     am_vf_escape_run},
    {"sde", "discrete ensemble and global SDE have the same mean error trajectory", 5, 0.5,
     am_vf_sde_run},
    {"delay", "gap to the ODE vanishes under paper delay scaling, not under inverse scaling", 2,
     0.10, am_vf_delay_run},
    {"delay-scaling",
     "noise-free gap between delayed and undelayed trajectories ~ tau eta/(1-mu)^2 (Liu's lemma)",
     3, 0.10, am_vf_delay_scaling_run},
    {"dde", "under inverse scaling the recursion tends to the delay-differential limit at order 1",
     3, 0.10, am_vf_dde_run},
    {"asyncmom", "stale gradients with M workers act as momentum 1 - 1/M and step eta/M", 6, 0.10,
     am_vf_asyncmom_run},
    {"runtime", "time per iteration and mean staleness of the six variants match their formulas",
     12, 0.05, am_vf_runtime_run},
    {"async-bound",
     "async and K-async error below Dutta's bound: its floor and its rate eta c (1 - gamma + p0/2)",
     4, 0.05, am_vf_async_bound_run},
    {"runtime-bound",
     "K-async time per update <= E[X_{K:P}] (Dutta, new-longer-than-used runtimes)", 4, 0.01,
     am_vf_runtime_bound_run},
    {"speedup",
     "P workers (delay P - 1) reach the target in the synchronous number of updates; 3 tau_c: none",
     9, 0.10, am_vf_speedup_run},
};

const size_t am_validate_checks_len = sizeof am_validate_checks / sizeof am_validate_checks[0];

const am_validate_check *am_validate_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < am_validate_checks_len; i++)
        if (strcmp(am_validate_checks[i].name, name) == 0) return &am_validate_checks[i];
    return NULL;
}

am_status am_validate_run(const am_validate_check *c, const am_validate_opts *o,
                          am_check_result *rows, size_t *nrows)
{
    if (!c || !o || !rows || !nrows) return AM_EINVAL;
    *nrows = 0;
    return c->run(c, o, rows, nrows);
}

/* The same rows (names, measured values bit for bit or both NaN) in a and b. */
static int av_same_rows(const am_check_result *a, const am_check_result *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(a[i].name, b[i].name) != 0) return 0;
        if (isnan(a[i].measured) ? !isnan(b[i].measured)
                                 : memcmp(&a[i].measured, &b[i].measured, sizeof(double)) != 0)
            return 0;
    }
    return 1;
}

/* Which verdict of a rerun a row keeps: 0 power_low, 1 power_high, 2 vs_undelayed. */
static void av_take_verdict(am_check_result *row, const am_check_result *re, int which)
{
    if (which == 2) {
        if (row->delayed) row->vs_undelayed = re->verdict;
    } else if (which == 0) {
        if (row->sided != AM_CHECK_AT_LEAST) row->power_low = re->verdict;
    } else if (row->sided != AM_CHECK_AT_MOST) {
        row->power_high = re->verdict;
    }
}

/* The note of a PASS row that is not counted in pass_with_power: the verdicts that are not FAIL. */
static void av_power_note(am_check_result *row)
{
    if (row->verdict != AM_CHECK_PASS) return;
    const am_check_verdict v[3] = {row->power_low, row->power_high, row->vs_undelayed};
    static const char *const key[3] = {"power_low", "power_high", "vs_undelayed"};
    char text[160] = "";
    size_t len = 0;
    for (int j = 0; j < 3; j++) {
        if (v[j] == AM_CHECK_FAIL || v[j] == AM_CHECK_NA) continue;
        int w = snprintf(text + len, sizeof text - len, "%s%s %s", len ? ", " : "", key[j],
                         am_check_verdict_name(v[j]));
        if (w > 0) len += (size_t)w < sizeof text - len ? (size_t)w : sizeof text - len - 1;
    }
    if (len) am_check_add_note(row, "power: %s, not FAIL (not counted in pass_with_power)", text);
}

/* The power runs of family c whose rows[0..n-1] are written: the same family against the
 * prediction shifted down and up and, if a row is delayed, against the undelayed prediction. */
static am_status av_power(const am_validate_check *c, const am_validate_opts *o,
                          am_check_result *rows, size_t n)
{
    int delayed = 0;
    for (size_t i = 0; i < n; i++)
        delayed |= rows[i].delayed;
    am_check_result *re = calloc(c->max_rows ? c->max_rows : 1, sizeof *re);
    if (!re) return AM_ENOMEM;
    am_status st = AM_OK;
    for (int which = 0; which < 3 && !st; which++) {
        if (which == 2 && !delayed) break;
        am_validate_opts q = *o;
        q.power = 0;
        if (which < 2)
            q.predict_shift += which ? AM_VALIDATE_POWER_SHIFT : -AM_VALIDATE_POWER_SHIFT;
        q.undelayed = which == 2;
        size_t got = 0;
        st = am_validate_run(c, &q, re, &got);
        if (!st && (got != n || !av_same_rows(rows, re, n))) st = AM_EDOM;
        for (size_t i = 0; i < n && !st; i++)
            av_take_verdict(&rows[i], &re[i], which);
    }
    free(re);
    for (size_t i = 0; i < n && !st; i++)
        av_power_note(&rows[i]);
    return st;
}

/* A row whose every power verdict that can fail FAILs (at least one of them computed) and, if
 * it is delayed, that tells its delay from none (vs_undelayed FAIL). */
static int av_powered(const am_check_result *row)
{
    am_check_verdict lo = row->power_low, hi = row->power_high;
    return (lo == AM_CHECK_FAIL || lo == AM_CHECK_NA) &&
           (hi == AM_CHECK_FAIL || hi == AM_CHECK_NA) &&
           !(lo == AM_CHECK_NA && hi == AM_CHECK_NA) &&
           (!row->delayed || row->vs_undelayed == AM_CHECK_FAIL);
}

am_status am_validate_run_all(const am_validate_opts *o, const am_validate_check *only,
                              am_validate_report **out, const char **failed)
{
    if (!o || !out) return AM_EINVAL;
    *out = NULL;
    if (failed) *failed = NULL;
    am_validate_report *r = calloc(1, sizeof *r);
    if (!r) return AM_ENOMEM;
    for (size_t i = 0; i < am_validate_checks_len; i++)
        r->cap += am_validate_checks[i].max_rows;
    r->rows = calloc(r->cap, sizeof *r->rows);
    if (!r->rows) {
        free(r);
        return AM_ENOMEM;
    }
    for (size_t i = 0; i < am_validate_checks_len; i++) {
        const am_validate_check *c = &am_validate_checks[i];
        if (only && only != c) continue;
        size_t got = 0;
        am_status st = am_validate_run(c, o, r->rows + r->n, &got);
        if (!st && o->power) st = av_power(c, o, r->rows + r->n, got);
        if (st) {
            if (failed) *failed = c->name;
            am_validate_report_free(r);
            return st;
        }
        r->n += got;
    }
    for (size_t i = 0; i < r->n; i++) {
        const am_check_result *row = &r->rows[i];
        r->count[row->verdict]++;
        r->fail_findings += row->verdict == AM_CHECK_FAIL && row->finding[0];
        r->pass_with_power += row->verdict == AM_CHECK_PASS && av_powered(row);
    }
    *out = r;
    return AM_OK;
}

void am_validate_report_free(am_validate_report *r)
{
    if (!r) return;
    free(r->rows);
    free(r);
}

/* ---- the columns of a row, in output order -------------------------------------------------- */

#define AV_COL(key, kind, field)                                                                   \
    {                                                                                              \
        key, kind, offsetof(am_check_result, field)                                                \
    }

const am_validate_column am_validate_columns[] = {
    AV_COL("name", AM_VALIDATE_COL_ID, name),
    AV_COL("params", AM_VALIDATE_COL_TEXT, params),
    AV_COL("measured", AM_VALIDATE_COL_NUM, measured),
    AV_COL("measured_sem", AM_VALIDATE_COL_NUM, measured_sem),
    AV_COL("predicted", AM_VALIDATE_COL_NUM, predicted),
    AV_COL("predicted_sem", AM_VALIDATE_COL_NUM, predicted_sem),
    AV_COL("z", AM_VALIDATE_COL_NUM, z),
    AV_COL("model_error", AM_VALIDATE_COL_NUM, model_error),
    AV_COL("tolerance", AM_VALIDATE_COL_NUM, tolerance),
    AV_COL("verdict", AM_VALIDATE_COL_VERDICT, verdict),
    AV_COL("replicas_used", AM_VALIDATE_COL_NUM, replicas_used),
    AV_COL("replicas_needed", AM_VALIDATE_COL_NUM, replicas_needed),
    AV_COL("note", AM_VALIDATE_COL_TEXT, note),
    AV_COL("rule", AM_VALIDATE_COL_ID, rule),
    AV_COL("margin", AM_VALIDATE_COL_NUM, margin),
    AV_COL("halfwidth", AM_VALIDATE_COL_NUM, halfwidth),
    AV_COL("mdd", AM_VALIDATE_COL_NUM, mdd),
    AV_COL("finding", AM_VALIDATE_COL_TEXT, finding),
    AV_COL("power_low", AM_VALIDATE_COL_VERDICT, power_low),
    AV_COL("power_high", AM_VALIDATE_COL_VERDICT, power_high),
    AV_COL("vs_undelayed", AM_VALIDATE_COL_VERDICT, vs_undelayed),
};

const size_t am_validate_columns_len = sizeof am_validate_columns / sizeof am_validate_columns[0];

const char *am_validate_column_text(const am_validate_column *c, const am_check_result *r)
{
    const unsigned char *base = (const unsigned char *)r + c->offset;
    switch (c->kind) {
    case AM_VALIDATE_COL_ID:
    case AM_VALIDATE_COL_TEXT:
        return (const char *)base;
    case AM_VALIDATE_COL_VERDICT: {
        am_check_verdict v;
        memcpy(&v, base, sizeof v);
        return v == AM_CHECK_NA ? NULL : am_check_verdict_name(v);
    }
    case AM_VALIDATE_COL_NUM:
        break;
    }
    return NULL;
}

double am_validate_column_num(const am_validate_column *c, const am_check_result *r)
{
    if (c->kind != AM_VALIDATE_COL_NUM) return NAN;
    double x;
    memcpy(&x, (const unsigned char *)r + c->offset, sizeof x);
    return x;
}
