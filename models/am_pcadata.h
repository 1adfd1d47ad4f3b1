/*
 * am_pcadata.h -- the streaming-PCA problem of a real data set: the training split of a
 * labelled source (am_classset.h: fashion-mnist, idx:DIR, FILE.csv, TRAIN.csv,TEST.csv; the
 * labels and the test split are not used) as the empirical distribution of its centred
 * rows, optionally projected on its top K principal coordinates (am_datamoments.h).
 * IDX pixels are read as byte / 255 (kept as bytes, centred on the fly); CSV features as
 * given, centred once.
 */
#ifndef AM_PCADATA_H
#define AM_PCADATA_H

#include "../core/am_common.h"
#include "../theory/am_problem.h"

/* Opens the source spec and builds its data problem (kind AM_DIST_DATA), projected on the
 * top `project` principal coordinates (0: all features). NULL with *status set and one line
 * in err naming the file and the fix: AM_EIO / AM_EINVAL from the reader, AM_EINVAL for a
 * projection outside [2, features] or no eigen-gap, AM_ENOMEM over the memory limit. */
am_problem *am_pcadata_problem(const char *spec, size_t project, am_status *status, char *err,
                               size_t errlen);

#endif
