/*
 * am_common.h -- project-wide status codes, version and small numeric helpers.
 *
 * Every library function that can fail returns an am_status (0 = AM_OK). The
 * library never prints and never exits; the command-line front end turns a
 * status into a message with am_strerror() and an exit code. Constructors and
 * checks that find a reason write it as one line into an (err, errlen) buffer
 * (err may be NULL); the reason names parameter fields, never command-line flags.
 *
 * GSL: the library checks the status of every GSL call and never changes GSL's
 * process-wide error handler inside its calls. GSL's default handler aborts the
 * process on any error (a round-off report of a quadrature included), so a
 * program that embeds the library turns it off once, before its first call:
 * gsl_set_error_handler_off(), or am_common_gsl_handler_off() for a program that
 * does not link GSL itself (the amsgd command does so in main).
 */
#ifndef AM_COMMON_H
#define AM_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define AM_VERSION "0.1.0"

/* The version of the numbers: raised by every change that moves a computed value of any
 * command for the same parameters (a new random stream, another order of summation).
 * Checkpoints record it, so that a sweep never mixes the cells of two. */
#define AM_NUMERICS_VERSION 1

/* AM_X86: 1 where the x86-64 SIMD paths (AVX2, AVX-512; target attributes of GCC and clang)
 * are compiled in, else 0. A build with -DAM_PORTABLE (make PORTABLE=1) compiles them all
 * out: every engine then runs its portable C path, with the same output bytes (make
 * bitident-check). Every SIMD block of the library is guarded by this one macro. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(AM_PORTABLE)
#define AM_X86 1
#else
#define AM_X86 0
#endif

typedef enum {
    AM_OK = 0,       /* success */
    AM_EINVAL = 1,   /* an argument is out of its domain */
    AM_ENOMEM = 2,   /* allocation failed or the request exceeds the memory limit */
    AM_EIO = 3,      /* reading or writing a file failed */
    AM_ESOLVER = 4,  /* a numerical solver reported a failure */
    AM_EDOM = 5,     /* a quantity is undefined for these parameters (e.g. infinite moment) */
    AM_ECANCELED = 6 /* the caller's cancel flag stopped the run (finished work is kept) */
} am_status;

/* Returns a static, human-readable description of a status code. */
const char *am_strerror(am_status status);

/* The one-line reason of a failure: writes why (am_strerror(st) when why is NULL) into
 * err[errlen] when err and errlen are given, and returns st. am_common_failf writes a printf
 * format instead. */
am_status am_common_fail(char *err, size_t errlen, am_status st, const char *why);
am_status am_common_failf(char *err, size_t errlen, am_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The shortest decimal that reads back as x (strtod gives x again), into buf[len] (len >= 32):
 * an integral |x| < 2^53 as an integer ("222"), else the fewest significant digits of %g
 * ("0.0005", "1e-05", "0.1"); "nan", "inf" or "-inf" when x is not finite. */
void am_common_shortest(double x, char *buf, size_t len);

/* Returns the library version string (equal to AM_VERSION). */
const char *am_version(void);

/* Turns GSL's process-wide error handler off (gsl_set_error_handler_off): for the program
 * to call once at start-up, never called by the library itself. */
void am_common_gsl_handler_off(void);

/* Instruction sets, in the one numbering of the program (the path enums of the
 * replica-batched engines, am_msgd_path and am_sde_simd, use the same values). The CPU is
 * asked in one place, am_common_simd_best; every SIMD dispatch of the library goes through
 * am_common_simd_path or am_common_simd. */
typedef enum {
    AM_SIMD_SCALAR = 0,   /* one replica at a time (the engines' reference path) */
    AM_SIMD_PORTABLE = 1, /* portable C */
    AM_SIMD_AVX2 = 2,
    AM_SIMD_AVX512 = 3 /* AVX-512 F, DQ and VL */
} am_simd;

/* am_common_simd_best: the best instruction set this CPU has (AM_SIMD_PORTABLE to
 * AM_SIMD_AVX512; AM_SIMD_PORTABLE in a build without the x86 paths).
 * am_common_simd_path: the environment variable AMSGD_SIMD (scalar, portable, avx2, avx512;
 * unset, empty or auto: the best) capped at the best, read at each call (the engines read it
 * when they are allocated). */
int am_common_simd_best(void);
int am_common_simd_path(void);

/* am_common_simd_path() as it was at the first call of this function in the process, for the
 * dispatch inside routines called per step (the random streams' bulk draws and ziggurat, the
 * per-replica Monte Carlo step, the ODE's kernels): AMSGD_SIMD=portable (or scalar) puts
 * them on their portable code too. Thread-safe. */
am_simd am_common_simd(void);

/* Opens a temporary file at path created anew (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC plus
 * access, O_WRONLY or O_RDWR, with the given mode): an entry already at the name (a link
 * planted there, or a leftover of an earlier process with this PID) is removed first, the
 * link itself and never its target. Returns the descriptor, or -1 with errno set. Used by
 * every writer of FILE.tmp.PID (the command's -o, the sweeps' checkpoints). */
int am_common_create_new(const char *path, int access, unsigned mode);

/* An exclusive write lock on the whole file fd, held by its open file description where the
 * system has one (F_OFD_SETLK: it also conflicts with another descriptor of this process),
 * else by the process; 0 on success, -1 with errno when another holds it or on failure. */
int am_file_lock(int fd);

/* Largest total allocation (bytes) the library accepts for one engine run. */
#define AM_MEMORY_LIMIT ((size_t)8 << 30)

#endif
