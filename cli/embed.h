/*
 * embed.h -- running an amsgd subcommand in-process (the entry of libamsgd-cli.so that the
 * Python binding loads): same parse -> run -> writer path as the command line, with the
 * output captured in memory and a usage or runtime error returned instead of exiting.
 *
 *   char *out; size_t len; char err[1024];
 *   char *argv[] = {"theory", "--mu", "0.5", "--format", "json", NULL};
 *   int status = am_cli_call(5, argv, &out, &len, err, sizeof err);
 *   ...   status 0/1: out holds what `amsgd theory ...` writes on stdout; 2/3: err the message
 *   am_cli_free(out);
 */
#ifndef AM_CLI_EMBED_H
#define AM_CLI_EMBED_H

#include <setjmp.h>
#include <stddef.h>

#define AM_CLI_EXPORT __attribute__((visibility("default")))

/* Runs the subcommand argv[0] with the options argv[1..argc-1] (as `amsgd argv...`). What the
 * command writes on stdout goes to *out (malloc'd, NUL-terminated, *outlen bytes without the
 * NUL; free with am_cli_free); a usage or runtime error leaves the message of its one-line
 * `amsgd: error: MESSAGE`, without the prefix, in err. Returns the command's exit status:
 * 0 ok, 1 a check failed (output written), 2 bad usage, 3 runtime failure. Calls are
 * serialised (one at a time per process); C stdout is redirected for the duration of a call.
 * On an error exit, memory the command allocated before the error is not freed. */
AM_CLI_EXPORT int am_cli_call(int argc, char **argv, char **out, size_t *outlen, char *err,
                              size_t errlen);

/* Frees an output buffer of am_cli_call; NULL is safe. */
AM_CLI_EXPORT void am_cli_free(void *buf);

/* The frame an embedded call leaves for the exit function of args.c: when active on this
 * thread, cli_usage_error, cli_runtime_error and --help record status and message and
 * longjmp here instead of exiting. */
typedef struct {
    jmp_buf jump;
    int status;
    char *err;
    size_t errlen;
} cli_embed_frame;

/* The frame of the embedded call running on this thread, NULL in the amsgd binary. */
extern _Thread_local cli_embed_frame *cli_embed_active;

#endif
