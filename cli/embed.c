/*
 * embed.c -- am_cli_call: one amsgd subcommand run in-process, as `amsgd argv...` would run
 * it, through the registry of commands.c. The command's stdout goes to an in-memory stream
 * (C stdout points at it for the duration of the call), and the one exit of args.c returns
 * here through the frame of embed.h instead of ending the process. Built into
 * libamsgd-cli.so.0, which the Python binding (python/amsgd) loads with ctypes.
 */
#define _GNU_SOURCE
#include "embed.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_common.h"
#include "args.h"
#include "commands.h"

/* C stdout is process-wide: one embedded call at a time. */
static pthread_mutex_t embed_lock = PTHREAD_MUTEX_INITIALIZER;

/* The library checks every GSL status and leaves GSL's process-wide error handler to the
 * program; GSL's default would abort the embedding process (the Python interpreter). The
 * front end sets it once, at its first call, as main.c does for the amsgd command. */
static pthread_once_t embed_gsl_once = PTHREAD_ONCE_INIT;

static void embed_gsl_handler_off(void)
{
    am_common_gsl_handler_off();
}

/* Runs the command of argv[0] under the frame e; returns its exit status. */
static int embed_dispatch(int argc, char **argv)
{
    if (argc < 1 || !argv[0]) cli_usage_error("no command given (see amsgd --help)");
    /* figures runs the amsgd binary on each of its steps: it belongs to the shell */
    if (strcmp(argv[0], "figures") == 0)
        cli_usage_error("'amsgd figures' runs the amsgd binary; call it from the shell");
    /* rerun starts the amsgd binary as a child process: the same */
    if (strcmp(argv[0], "rerun") == 0)
        cli_usage_error("'amsgd rerun' runs the amsgd binary; call it from the shell");
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(argv[0], c->name) == 0) return c->run(argc - 1, argv + 1);
    cli_unknown_command(argv[0]);
}

int am_cli_call(int argc, char **argv, char **out, size_t *outlen, char *err, size_t errlen)
{
    if (out) *out = NULL;
    if (outlen) *outlen = 0;
    if (err && errlen) err[0] = 0;
    if (!out || !outlen) return 2;
    if (cli_embed_active) { /* a command calling am_cli_call: not supported */
        if (err && errlen) snprintf(err, errlen, "am_cli_call is not reentrant");
        return 3;
    }

    pthread_once(&embed_gsl_once, embed_gsl_handler_off);
    pthread_mutex_lock(&embed_lock);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        pthread_mutex_unlock(&embed_lock);
        if (err && errlen) snprintf(err, errlen, "cannot allocate the output buffer");
        return 3;
    }
    /* volatile: these live across the longjmp of an error exit */
    cli_embed_frame frame;
    frame.status = 0;
    frame.err = err;
    frame.errlen = err ? errlen : 0;
    FILE *volatile saved_stdout = stdout;
    volatile int status;
    fflush(stdout);
    stdout = mem; /* glibc: stdout is an assignable variable */
    cli_embed_active = &frame;
    if (setjmp(frame.jump) == 0)
        status = embed_dispatch(argc, argv);
    else
        status = frame.status; /* cli_usage_error, cli_runtime_error or --help */
    cli_embed_active = NULL;
    stdout = saved_stdout;
    int bad = fclose(mem) != 0;
    pthread_mutex_unlock(&embed_lock);
    if (bad) {
        free(buf);
        if (err && errlen) snprintf(err, errlen, "cannot finish the output buffer");
        return 3;
    }
    *out = buf;
    *outlen = len;
    return status;
}

void am_cli_free(void *buf)
{
    free(buf);
}
