/*
 * am_sweep.h -- sweeps over a list of independent cells that survive kills and scale out.
 *
 * A sweep is a list of ncells cells; a callback computes the nvalues doubles of one cell.
 * Each finished cell is appended to a checkpoint file as one JSON line and its checksum
 *   {"cell":i,"values":[v_0,...,v_{nvalues-1}]} XXXXXXXX   (17 significant digits, null = NaN)
 * where XXXXXXXX is the CRC-32 of the JSON text in hex, written, flushed and fsync'd before
 * the next cell starts; the file opens with a header line (with its checksum)
 * {"amsgd_checkpoint":2,"ncells":N,"nvalues":V,"fingerprint":"..."} that identifies the
 * parameters (the studies put the version and the identity of the random streams and the
 * engine in the fingerprint). On resume the file is read and validated: a different format,
 * fingerprint or size, a wrong checksum, a malformed complete line, a value that is neither a
 * number nor null, a cell out of range or repeated, or a cell that check_cell refuses is
 * refused (AM_EINVAL, the message names the line); a torn last line (a kill during its
 * write) is dropped; the valid part is rewritten through a temporary file and rename(), and
 * the finished cells are skipped. Without resume the checkpoint is started anew, unless the
 * file exists, is not empty and is not an amsgd checkpoint (AM_EINVAL). The run holds an exclusive
 * lock on the checkpoint: a second run on the same file is refused at once (AM_EINVAL, "in use by
 * another run"). Since 17 digits round-trip every double, a resumed sweep ends with exactly the
 * values of an uninterrupted one. A stop flag (set by the caller's signal handler; the library
 * installs none) ends the sweep between cells; a cell may poll the same flag and return
 * AM_ECANCELED, which ends the sweep like the flag (the cell is not kept). For tests, the
 * environment variable AMSGD_TEST_CELL_PAUSE_MS=N (0..10000) pauses N ms after each recorded
 * cell (a signal cuts it short), so that kill and interrupt tests do not depend on speed.
 *
 * In a build with AM_HAVE_MPI and MPI initialised on more than one rank, rank 0 hands the
 * cells out one at a time from a work queue (in cell order, to whichever rank is free; rank 0
 * computes cells too while a thread of it serves the queue, which needs
 * MPI_THREAD_SERIALIZED); every rank sends each finished cell to rank 0, which writes the
 * checkpoint and ends with the full table (the other ranks' tables hold only their own
 * cells). The ensembles of the cells run on their rank alone (am_ensemble_set_distributed).
 * A checkpoint that rank 0 refuses or cannot write gives every rank the same status and
 * message.
 *
 * The file also holds the small numerical tools of the delay searches: the smallest integer
 * at which a monotone predicate turns true (bracketing by doubling, then bisection), and the
 * least-squares fit of a power law y = c x^p on log-log axes over the usable points (the
 * ordinary least squares of validate/am_fit.h).
 */
#ifndef AM_SWEEP_H
#define AM_SWEEP_H

#include <signal.h>

#include "../core/am_common.h"

typedef struct {
    size_t ncells;  /* number of cells */
    size_t nvalues; /* doubles produced by one cell */
    /* Computes cell `cell` into values[0..nvalues-1]. */
    am_status (*run_cell)(void *ctx, size_t cell, double *values);
    void *ctx;
} am_sweep_problem;

typedef struct {
    const char *checkpoint;  /* checkpoint path, or NULL for none */
    int resume;              /* read the checkpoint and skip its cells (else start it anew) */
    const char *fingerprint; /* text identifying the parameters, stored in the header */
    const volatile sig_atomic_t *stop; /* nonzero: stop after the current cell (may be NULL) */
    /* Called on rank 0 after each finished cell: cells done (including resumed ones), total,
       cells computed in this run, seconds since the start. May be NULL. */
    void (*progress)(void *ctx, size_t done, size_t total, size_t computed, double elapsed);
    void *progress_ctx;
    /* Optional: checks the values of a cell read from a checkpoint (ranges, integer counts;
       NaN stands for null), called with the problem's ctx; nonzero with a reason in why
       refuses the checkpoint. */
    int (*check_cell)(void *ctx, size_t cell, const double *values, char *why, size_t whylen);
} am_sweep_params;

/* No checkpoint, no resume, empty fingerprint, no stop flag, no progress, no cell check. */
am_sweep_params am_sweep_params_default(void);

/* Runs the sweep; values[ncells * nvalues] receives the cells, done[ncells] marks finished
 * cells and *ndone counts them (ndone < ncells after a stop, which returns AM_OK). Returns
 * AM_EINVAL with a reason in err when the checkpoint belongs to other parameters or is malformed,
 * AM_EIO on a file error, or the first failure of run_cell. */
am_status am_sweep_run(const am_sweep_problem *prob, const am_sweep_params *params, double *values,
                       unsigned char *done, size_t *ndone, char *err, size_t errlen);

struct json_t; /* jansson's JSON value */

/* Adds the keys of the build to a checkpoint fingerprint (a JSON object): "version"
 * (AM_VERSION), "numerics" (AM_NUMERICS_VERSION) and, for a study whose numbers go through
 * BLAS, "blas" (am_nn_blas: the library and the kernel it chose; NULL for none). A checkpoint
 * whose build keys differ is refused as one of another build, naming the key. */
void am_sweep_fingerprint_build(struct json_t *fp, const char *blas);

/* 0 on rank 0 (and in the serial build), else the MPI rank. */
int am_sweep_rank(void);

/* Number of MPI ranks (1 in the serial build or when MPI is not initialised). */
int am_sweep_nranks(void);

/* Smallest integer n in [lo + 1, nmax] with pred(n) true, given pred(lo) false and pred
 * non-decreasing: doubles the step from lo until pred holds (bracketing), then bisects on
 * the integers. *found = 0 (and the result nmax + 1) if pred holds nowhere up to nmax.
 * Returns the first failure of pred (which writes its truth value into *out). */
am_status am_sweep_search_int(am_status (*pred)(void *ctx, uint64_t n, int *out), void *ctx,
                              uint64_t lo, uint64_t nmax, uint64_t *result, int *found);

/* Least-squares fit of log y = log c + p log x over the n points with finite positive x, y:
 * writes p and log c; returns AM_EDOM with fewer than two usable points or equal x. */
am_status am_sweep_fit_power(const double *x, const double *y, size_t n, double *p, double *logc);

#endif
