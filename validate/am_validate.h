/*
 * am_validate.h -- the theorem checks of `amsgd validate`: one const table of checks, each
 * a function that runs the engines at a size level and fills rows of am_check_result
 * (measured +- sem, predicted, tolerance, verdict; docs/validate.md documents every row).
 *
 *   ode-order    order of the weak error against the ODE (theory.md section 2) is 1
 *   stationary   time-averaged error near v^1 = (eta/(2(1-mu))) sum_i alpha_i1^2/(l_1-l_i)
 *   relaxation   autocorrelation of h_i near v^1 decays with time (1-mu)/(l_1-l_i)
 *   escape       quantiles of the time to reach h_1^2 >= delta^2 from e_2 (unstable OU)
 *   sde          the discrete ensemble and the global SDE have the same mean error
 *   delay        the gap to the ODE vanishes under paper delay scaling, not under inverse
 *   delay-scaling  noise-free gap between delayed and undelayed runs ~ tau eta/(1-mu)^2
 *   asyncmom     stale gradients with M workers act as momentum 1 - 1/M, step eta/M (section 6)
 *   runtime      parameter-server time per iteration and staleness match theory (section 7)
 *
 * Checks 1-6 use the problem d = 4, lambda = (4, 3, 2, 1), standard eigenbasis.
 */
#ifndef AM_VALIDATE_H
#define AM_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"
#include "am_check.h"

typedef enum { AM_VALIDATE_QUICK = 0, AM_VALIDATE_FULL = 1 } am_validate_level;

typedef struct {
    am_validate_level level; /* quick: reduced sizes (CI); full: the sizes the docs quote */
    int threads;             /* 0 = all cores */
    uint64_t seed;           /* seed of every engine */
    /* power tests: every row is decided against the prediction p' = predict_scale p +
       predict_shift S instead of p, S the row's scale (|p| for magnitudes, 1 for orders, the
       gap to the ODE for sde), so that a deliberately wrong prediction must FAIL; 1 and 0 */
    double predict_scale;
    double predict_shift;
    /* am_validate_run_all: 1 = also run every family against its prediction shifted by
       -/+ AM_VALIDATE_POWER_SHIFT of the row's scale (predict_shift) and the families with
       delayed rows against the undelayed prediction, on the same seed (so the same data), and
       keep those verdicts in each row's power_low, power_high and vs_undelayed; 0 = skip (they
       stay AM_CHECK_NA) */
    int power;
    /* 1: a delayed row (row.delayed) is decided against the prediction without the delay */
    int undelayed;
} am_validate_opts;

/* The shift of the power verdicts: 20 % of a row's scale (0.2 for orders and exponents). */
#define AM_VALIDATE_POWER_SHIFT 0.2

/* quick, all cores, seed 1, the predictions unperturbed (scale 1, shift 0), power on. */
am_validate_opts am_validate_opts_default(void);

struct am_validate_check;

/* A check family: runs its variants and writes at most c->max_rows results into rows, *nrows
 * of them; AM_EINVAL if it would need more. */
typedef am_status (*am_validate_fn)(const struct am_validate_check *c, const am_validate_opts *o,
                                    am_check_result *rows, size_t *nrows);

/* A row of the registry: one check family. */
typedef struct am_validate_check {
    const char *name;        /* identifier (--only NAME) */
    const char *description; /* one line: the claim it tests */
    size_t max_rows;         /* capacity: the most rows it writes */
    double margin;           /* the claim's precision, part of every row's band (docs/validate.md):
                                absolute for orders, else relative to the row's scale */
    am_validate_fn run;
} am_validate_check;

extern const am_validate_check am_validate_checks[];
extern const size_t am_validate_checks_len;

/* The check called name, or NULL. */
const am_validate_check *am_validate_find(const char *name);

/* Runs one check into rows[0..c->max_rows-1]; *nrows rows are written. AM_EINVAL on NULL
 * arguments; engine failures as returned by the engines. */
am_status am_validate_run(const am_validate_check *c, const am_validate_opts *o,
                          am_check_result *rows, size_t *nrows);

/* The rows of a run of the table: a buffer of cap = the sum of the families' max_rows. */
typedef struct {
    am_check_result *rows; /* [cap], n written */
    size_t n, cap;
    size_t count[3];        /* rows by verdict: [AM_CHECK_PASS], [_FAIL], [_INCONCLUSIVE] */
    size_t fail_findings;   /* FAIL rows that carry a documented finding (row.finding) */
    size_t pass_with_power; /* PASS rows whose power verdicts (those that can fail) all FAIL
                               and, if delayed, whose vs_undelayed FAILs */
} am_validate_report;

/* Runs every family of the table in order, or only the family only (if not NULL), into a new
 * report *out (free with am_validate_report_free); with o->power, each family again against the
 * shifted and the undelayed predictions (see am_validate_opts.power), whose runs must give the
 * same rows with the same measured values (else AM_EDOM: a family that is not a pure function of
 * its options). On a family's failure returns its status, *out = NULL and, if failed is not
 * NULL, *failed = the family's name. */
am_status am_validate_run_all(const am_validate_opts *o, const am_validate_check *only,
                              am_validate_report **out, const char **failed);

/* Frees a report; NULL is safe. */
void am_validate_report_free(am_validate_report *r);

/* The writer's column table: every field of a row, in output order, with how it is written. */
typedef enum {
    AM_VALIDATE_COL_ID = 0, /* identifier text, written bare in CSV */
    AM_VALIDATE_COL_TEXT,   /* free text, quoted in CSV */
    AM_VALIDATE_COL_NUM,    /* a double; null (JSON) or empty (CSV) when not finite */
    AM_VALIDATE_COL_VERDICT /* a verdict's name, written bare; n/a as null (JSON) or empty (CSV) */
} am_validate_col_kind;

typedef struct {
    const char *key; /* JSON key and CSV header */
    am_validate_col_kind kind;
    size_t offset; /* offsetof(am_check_result, field) */
} am_validate_column;

extern const am_validate_column am_validate_columns[];
extern const size_t am_validate_columns_len;

/* The text of column c of row r (ID, TEXT, VERDICT columns; NULL for NUM and for a VERDICT
   that is AM_CHECK_NA). */
const char *am_validate_column_text(const am_validate_column *c, const am_check_result *r);

/* The value of column c of row r (NUM columns; NaN otherwise). */
double am_validate_column_num(const am_validate_column *c, const am_check_result *r);

#endif
