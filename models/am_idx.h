/*
 * am_idx.h -- IDX files (the format of MNIST and Fashion-MNIST), plain or gzip-compressed
 * (zlib reads both), and the labelled image sets built from an images/labels pair.
 *
 * IDX layout (big-endian): bytes 0, 1 are zero, byte 2 is the element type (0x08: unsigned
 * byte, the only type accepted here), byte 3 the number of dimensions k; then k 32-bit
 * dimensions; then prod(dims) elements, nothing after them. Images are k = 3 (n, rows, cols),
 * labels k = 1 (n): magic 0x00000803 and 0x00000801.
 * A labelled set stores the pixels as bytes (n d with d = rows cols; feature = byte / 255)
 * and the labels as ints in 0..classes-1. Every failure returns a status with one line in
 * err that names the file, the fault and the fix.
 */
#ifndef AM_IDX_H
#define AM_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"

/* Directory of the Debian package dataset-fashion-mnist. */
#define AM_IDX_FASHION_DIR "/usr/share/datasets/fashion-mnist"

/* Classes of an MNIST-format labelled set: labels must be in 0..9. */
#define AM_IDX_CLASSES 10

typedef struct {
    size_t ndim;    /* 1..4 */
    size_t dims[4]; /* dims[0] is the number of items */
    size_t len;     /* prod(dims) */
    uint8_t *data;  /* [len] */
} am_idx;

/* Reads an IDX file of unsigned bytes with ndim dimensions (plain or .gz). fix is appended to
 * every message as the remedy (e.g. "install dataset-fashion-mnist"); NULL gives a generic
 * one. A .gz file may hold concatenated gzip members and zero padding after the last one (as
 * gzip -t accepts); any other byte after it is trailing garbage (AM_EINVAL). AM_EIO (cannot
 * open or read, truncated), AM_EINVAL (bad magic, wrong type or dimensions, trailing bytes or
 * garbage, a header whose dimensions ask for more than AM_MEMORY_LIMIT: bad input),
 * AM_ENOMEM (allocation failed). */
am_status am_idx_read(const char *path, size_t ndim, const char *fix, am_idx **out, char *err,
                      size_t errlen);

/* Frees an IDX array; NULL is safe. */
void am_idx_free(am_idx *a);

#endif
