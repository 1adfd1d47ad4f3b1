/*
 * am_idx.c -- reading IDX files through zlib (am_idx.h): header, dimensions, payload, and the
 * checks that tell a truncated, foreign or over-long file from a good one.
 */
#include "am_idx.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

void am_idx_free(am_idx *a)
{
    if (!a) return;
    free(a->data);
    free(a);
}

/* Reads exactly len bytes; returns the number read (< len at end of file), or -1 on a
 * decompression or read error. */
static long long read_all(gzFile g, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        size_t want = len - got;
        if (want > (size_t)1 << 30) want = (size_t)1 << 30;
        int r = gzread(g, buf + got, (unsigned)want);
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (long long)got;
}

static const char *gz_reason(gzFile g)
{
    int code = 0;
    const char *m = gzerror(g, &code);
    if (code == Z_ERRNO) return strerror(errno);
    if (code == Z_BUF_ERROR) return "truncated: unexpected end of the compressed stream";
    return m && *m ? m : "read error";
}

am_status am_idx_read(const char *path, size_t ndim, const char *fix, am_idx **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    if (!fix) fix = "replace it with a valid IDX file";
    if (ndim < 1 || ndim > 4) {
        snprintf(err, errlen, "%s: cannot read IDX files of %zu dimensions", path, ndim);
        return AM_EINVAL;
    }
    errno = 0;
    gzFile g = gzopen(path, "rb");
    if (!g) {
        snprintf(err, errlen, "cannot open '%s': %s (%s)", path,
                 errno ? strerror(errno) : "out of memory", fix);
        return errno ? AM_EIO : AM_ENOMEM;
    }
    gzbuffer(g, 1u << 17);
    am_status st = AM_OK;
    am_idx *a = NULL;
    uint8_t head[4 + 4 * 4];
    long long r = read_all(g, head, 4);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s (%s)", path, gz_reason(g), fix);
        st = AM_EIO;
        goto done;
    }
    if (r < 4) {
        snprintf(err, errlen, "%s: truncated: %lld of the 4 header bytes (%s)", path, r, fix);
        st = AM_EIO;
        goto done;
    }
    uint32_t magic = (uint32_t)head[0] << 24 | (uint32_t)head[1] << 16 | (uint32_t)head[2] << 8 |
                     (uint32_t)head[3];
    uint32_t want_magic = 0x00000800u | (uint32_t)ndim;
    if (magic != want_magic) {
        snprintf(err, errlen,
                 "%s: bad magic 0x%08x, expected 0x%08x (IDX of unsigned bytes, %zu "
                 "dimension%s) (%s)",
                 path, magic, want_magic, ndim, ndim == 1 ? "" : "s", fix);
        st = AM_EINVAL;
        goto done;
    }
    r = read_all(g, head + 4, 4 * ndim);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s (%s)", path, gz_reason(g), fix);
        st = AM_EIO;
        goto done;
    }
    if (r < (long long)(4 * ndim)) {
        snprintf(err, errlen, "%s: truncated in the dimensions (%s)", path, fix);
        st = AM_EIO;
        goto done;
    }
    a = calloc(1, sizeof *a);
    if (!a) {
        st = AM_ENOMEM;
        snprintf(err, errlen, "%s: out of memory", path);
        goto done;
    }
    a->ndim = ndim;
    a->len = 1;
    for (size_t k = 0; k < ndim; k++) {
        const uint8_t *p = head + 4 + 4 * k;
        a->dims[k] = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | (size_t)p[3];
        if (a->dims[k] == 0) {
            snprintf(err, errlen, "%s: dimension %zu is 0 (%s)", path, k, fix);
            st = AM_EINVAL;
            goto done;
        }
        if (a->len > AM_MEMORY_LIMIT / a->dims[k]) {
            snprintf(err, errlen, "%s: %zu-dimensional array larger than the memory limit (%s)",
                     path, ndim, fix);
            st = AM_EINVAL; /* the file asks for more than the limit: bad input */
            goto done;
        }
        a->len *= a->dims[k];
    }
    a->data = malloc(a->len);
    if (!a->data) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, a->len);
        st = AM_ENOMEM;
        goto done;
    }
    r = read_all(g, a->data, a->len);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s (%s)", path, gz_reason(g), fix);
        st = AM_EIO;
        goto done;
    }
    if ((size_t)r < a->len) {
        snprintf(err, errlen, "%s: truncated: %lld of %zu data bytes (%s)", path, r, a->len, fix);
        st = AM_EIO;
        goto done;
    }
    uint8_t extra;
    r = read_all(g, &extra, 1);
    if (r < 0) { /* e.g. a CRC mismatch found at the end of the gzip stream */
        snprintf(err, errlen, "%s: %s (%s)", path, gz_reason(g), fix);
        st = AM_EIO;
        goto done;
    }
    if (r > 0) {
        snprintf(err, errlen, "%s: trailing bytes after the %zu data bytes (%s)", path, a->len,
                 fix);
        st = AM_EINVAL;
        goto done;
    }
done:
    gzclose(g);
    if (st) {
        am_idx_free(a);
        return st;
    }
    *out = a;
    return AM_OK;
}
