/*
 * am_common.c -- status strings and version of the amsgd library.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "am_common.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *am_strerror(am_status status)
{
    switch (status) {
    case AM_OK:
        return "success";
    case AM_EINVAL:
        return "invalid argument";
    case AM_ENOMEM:
        return "out of memory or request above the memory limit";
    case AM_EIO:
        return "input/output error";
    case AM_ESOLVER:
        return "numerical solver failure";
    case AM_EDOM:
        return "quantity undefined for these parameters";
    case AM_ECANCELED:
        return "cancelled";
    }
    return "unknown status";
}

am_status am_common_fail(char *err, size_t errlen, am_status st, const char *why)
{
    if (err && errlen) snprintf(err, errlen, "%s", why ? why : am_strerror(st));
    return st;
}

am_status am_common_failf(char *err, size_t errlen, am_status st, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

const char *am_version(void)
{
    return AM_VERSION;
}

void am_common_gsl_handler_off(void)
{
    gsl_set_error_handler_off();
}

int am_common_simd_best(void)
{
#if AM_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return AM_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2")) return AM_SIMD_AVX2;
#endif
    return AM_SIMD_PORTABLE;
}

int am_common_simd_path(void)
{
    int best = am_common_simd_best();
    const char *e = getenv("AMSGD_SIMD");
    if (!e || !*e || strcmp(e, "auto") == 0) return best;
    if (strcmp(e, "scalar") == 0) return AM_SIMD_SCALAR;
    if (strcmp(e, "portable") == 0) return AM_SIMD_PORTABLE;
    if (strcmp(e, "avx2") == 0) return best >= AM_SIMD_AVX2 ? AM_SIMD_AVX2 : best;
    return best; /* avx512 or anything else */
}

static pthread_once_t simd_once = PTHREAD_ONCE_INIT;
static am_simd simd_cached;

static void simd_init(void)
{
    simd_cached = (am_simd)am_common_simd_path();
}

am_simd am_common_simd(void)
{
    pthread_once(&simd_once, simd_init);
    return simd_cached;
}

int am_common_create_new(const char *path, int access, unsigned mode)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = open(path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)mode);
        if (fd >= 0 || errno != EEXIST) return fd;
        if (unlink(path) && errno != ENOENT) return -1;
    }
    errno = EEXIST;
    return -1;
}

void am_common_shortest(double x, char *buf, size_t len)
{
    if (!isfinite(x)) {
        snprintf(buf, len, "%s", isnan(x) ? "nan" : x > 0 ? "inf" : "-inf");
        return;
    }
    if (x == floor(x) && fabs(x) < 9007199254740992.0) { /* 2^53: every integer is exact */
        snprintf(buf, len, "%.0f", x);                   /* -0.0 as "-0" */
        return;
    }
    /* digits that round-trip at p round-trip at every p' > p: bisect p in [1, 17] */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, len, "%.*g", mid, x);
        if (strtod(buf, NULL) == x)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(buf, len, "%.*g", lo, x);
}

int am_file_lock(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
#ifdef F_OFD_SETLK
    return fcntl(fd, F_OFD_SETLK, &fl);
#else
    return fcntl(fd, F_SETLK, &fl);
#endif
}
