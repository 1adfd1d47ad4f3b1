/*
 * am_idx.c -- reading IDX files, plain or gzip through zlib's inflate (am_idx.h): header,
 * dimensions, payload, and the checks that tell a truncated, foreign or over-long file (or
 * trailing garbage after the gzip stream) from a good one.
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

/* The input of one IDX file: plain bytes, or one or more gzip members (concatenated members
 * are read as one stream, as gzip and zlib's gzread do); after the last member only zero
 * bytes (padding) may follow, as gzip -t accepts; anything else is refused as trailing
 * garbage, which gzip -t reports and zlib's gzread would skip silently. The first fault is
 * kept in why (and its status in st). */
typedef struct {
    FILE *f;
    int gz;             /* the file starts with the gzip magic 1f 8b */
    int end;            /* the last gzip member ended at the end of the file */
    long long consumed; /* compressed bytes handed to inflate so far */
    z_stream z;
    unsigned char *in; /* [IN_LEN] */
    am_status st;
    char why[128];
} idx_in;

enum { IN_LEN = 1 << 17 };

/* Tops the input buffer up so that it holds at least want bytes unless the file ends first;
 * returns -1 on a read error. */
static int in_fill(idx_in *s, size_t want)
{
    if (s->z.avail_in >= want) return 0;
    if (s->z.avail_in && s->z.next_in != s->in) memmove(s->in, s->z.next_in, s->z.avail_in);
    s->z.next_in = s->in;
    while (s->z.avail_in < want) {
        size_t n = fread(s->in + s->z.avail_in, 1, IN_LEN - s->z.avail_in, s->f);
        if (n == 0) {
            if (ferror(s->f)) {
                s->st = AM_EIO;
                snprintf(s->why, sizeof s->why, "%s", strerror(errno ? errno : EIO));
                return -1;
            }
            break;
        }
        s->z.avail_in += (uInt)n;
    }
    return 0;
}

static void in_fault(idx_in *s, am_status st, const char *why)
{
    s->st = st;
    snprintf(s->why, sizeof s->why, "%s", why);
}

/* 1 if nothing but zero bytes is left in the file (consumed), 0 if another byte is, -1 on a
 * read error. */
static int only_zeros_left(idx_in *s)
{
    for (;;) {
        for (uInt k = 0; k < s->z.avail_in; k++)
            if (s->z.next_in[k]) return 0;
        s->consumed += s->z.avail_in;
        s->z.avail_in = 0;
        if (in_fill(s, 1) < 0) return -1;
        if (s->z.avail_in == 0) return 1;
    }
}

/* Reads exactly len bytes; returns the number read (< len at the end of the data), or -1 on
 * a read or decompression error, a truncated gzip stream or trailing garbage (s->why). */
static long long read_all(idx_in *s, uint8_t *buf, size_t len)
{
    if (s->st) return -1;
    size_t got = 0;
    if (!s->gz) { /* first the bytes peeked at to tell gzip from plain */
        got = len < s->z.avail_in ? len : s->z.avail_in;
        memcpy(buf, s->z.next_in, got);
        s->z.next_in += got;
        s->z.avail_in -= (uInt)got;
        while (got < len) {
            size_t n = fread(buf + got, 1, len - got, s->f);
            if (n == 0) break;
            got += n;
        }
        if (got < len && ferror(s->f)) {
            in_fault(s, AM_EIO, strerror(errno ? errno : EIO));
            return -1;
        }
        return (long long)got;
    }
    while (got < len && !s->end) {
        if (in_fill(s, 1) < 0) return -1;
        if (s->z.avail_in == 0) {
            in_fault(s, AM_EIO, "truncated: unexpected end of the compressed stream");
            return -1;
        }
        size_t want = len - got;
        if (want > (size_t)1 << 30) want = (size_t)1 << 30;
        s->z.next_out = buf + got;
        s->z.avail_out = (uInt)want;
        uInt before = s->z.avail_in;
        int r = inflate(&s->z, Z_NO_FLUSH);
        s->consumed += before - s->z.avail_in;
        got += want - s->z.avail_out;
        if (r == Z_STREAM_END) {
            /* another member, the end of the file, or trailing garbage */
            if (in_fill(s, 2) < 0) return -1;
            if (s->z.avail_in == 0) {
                s->end = 1;
            } else if (s->z.avail_in >= 2 && s->z.next_in[0] == 0x1f && s->z.next_in[1] == 0x8b) {
                inflateReset(&s->z);
            } else if (only_zeros_left(s) == 1) { /* padding, which gzip -t accepts too */
                s->end = 1;
            } else {
                if (s->st) return -1;
                s->st = AM_EINVAL;
                snprintf(s->why, sizeof s->why,
                         "trailing garbage after the gzip stream, from byte %lld of the file",
                         s->consumed);
                return -1;
            }
        } else if (r == Z_MEM_ERROR) {
            in_fault(s, AM_ENOMEM, "out of memory");
            return -1;
        } else if (r != Z_OK && r != Z_BUF_ERROR) { /* e.g. a CRC mismatch at the end */
            in_fault(s, AM_EIO, s->z.msg ? s->z.msg : "invalid compressed data");
            return -1;
        }
    }
    return (long long)got;
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
    idx_in s = {0};
    s.f = fopen(path, "rb");
    if (!s.f) {
        snprintf(err, errlen, "cannot open '%s': %s (%s)", path,
                 errno ? strerror(errno) : "out of memory", fix);
        return errno ? AM_EIO : AM_ENOMEM;
    }
    s.in = malloc(IN_LEN);
    if (!s.in) {
        fclose(s.f);
        snprintf(err, errlen, "%s: out of memory", path);
        return AM_ENOMEM;
    }
    if (in_fill(&s, 2) == 0 && s.z.avail_in >= 2 && s.in[0] == 0x1f && s.in[1] == 0x8b) {
        if (inflateInit2(&s.z, 16 + MAX_WBITS) != Z_OK) {
            fclose(s.f);
            free(s.in);
            snprintf(err, errlen, "%s: out of memory", path);
            return AM_ENOMEM;
        }
        s.gz = 1;
    }
    am_status st = AM_OK;
    am_idx *a = NULL;
    uint8_t head[4 + 4 * 4];
    long long r = read_all(&s, head, 4);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s (%s)", path, s.why, fix);
        st = s.st;
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
    r = read_all(&s, head + 4, 4 * ndim);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s (%s)", path, s.why, fix);
        st = s.st;
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
    r = read_all(&s, a->data, a->len);
    if (r < 0) {
        snprintf(err, errlen, "%s: %s (%s)", path, s.why, fix);
        st = s.st;
        goto done;
    }
    if ((size_t)r < a->len) {
        snprintf(err, errlen, "%s: truncated: %lld of %zu data bytes (%s)", path, r, a->len, fix);
        st = AM_EIO;
        goto done;
    }
    uint8_t extra;
    r = read_all(&s, &extra, 1);
    if (r < 0) { /* e.g. a CRC mismatch at the end of the gzip stream, or trailing garbage */
        snprintf(err, errlen, "%s: %s (%s)", path, s.why, fix);
        st = s.st;
        goto done;
    }
    if (r > 0) {
        snprintf(err, errlen, "%s: trailing bytes after the %zu data bytes (%s)", path, a->len,
                 fix);
        st = AM_EINVAL;
        goto done;
    }
done:
    if (s.gz) inflateEnd(&s.z);
    fclose(s.f);
    free(s.in);
    if (st) {
        am_idx_free(a);
        return st;
    }
    *out = a;
    return AM_OK;
}
