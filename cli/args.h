/*
 * args.h -- table-driven option parsing for the amsgd subcommands.
 *
 * A subcommand lists its options (shared ones from cli_common.h plus its own) as a
 * NULL-terminated array of cli_opt. cli_parse follows the GNU conventions: "--name value",
 * "--name=value", "-o FILE" and "-oFILE"; boolean flags take no value; "--" ends the
 * options; a repeated option: the last one wins; a value that starts with "--" only in the
 * "=" form. Getters validate and, on bad input, print one line "amsgd: error: ..." on
 * stderr and exit with status 2. The output paths (--output, --checkpoint) are probed right
 * after parsing, before any computation (exit 2 when they cannot be written).
 */
#ifndef AM_CLI_ARGS_H
#define AM_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    const char *name;    /* long name without the leading "--" */
    const char *metavar; /* value placeholder; NULL for a boolean flag */
    const char *defval;  /* default shown in --help and used when absent (NULL: none) */
    const char *help;
} cli_opt;

enum { CLI_MAX_OPTS = 96 };

typedef struct {
    const char *cmd;
    const char *summary;
    const cli_opt *const *opts;
    const char *values[CLI_MAX_OPTS]; /* given value, or NULL */
    int given[CLI_MAX_OPTS];
} cli_args;

/* Set while a progress line (cli_progress_start) is open on stderr: an error message first
 * ends it. */
extern int cli_progress_line_open;

/* Prints "amsgd: error: <message>" on stderr and exits with status 2. */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* The one of names[0..n-1] closest to word[0..len) when it is a likely typo of it (an edit
 * distance of 1 below 6 characters, 2 below 12, else 3; swaps of neighbours count one), or
 * NULL (none that close, or two equally close): the "did you mean" of unknown options and
 * commands. */
const char *cli_closest(const char *word, size_t len, const char *const *names, size_t n);

/* Prints "amsgd: error: <message>" on stderr and exits with status 3. */
void cli_runtime_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Parses argv (after the subcommand name). Prints help and exits 0 on --help/-h, the
 * version on --version/-V (exit 3 when stdout cannot take it). Then probes --output and
 * --checkpoint (cli_path_probe) and exits 2 if either cannot be written; a --checkpoint
 * that is a symbolic link is replaced by the path of its target. */
void cli_parse(cli_args *a, const char *cmd, const char *summary, const cli_opt *const *opts,
               int argc, char **argv);

/* Prints the subcommand's usage with every flag and its default, wrapped at
 * CLI_HELP_WIDTH columns, its examples (cli_examples) and the conventions footer. */
void cli_print_help(const cli_args *a);

enum { CLI_HELP_WIDTH = 80 };

/* The help footer: option syntax, last-one-wins, exit statuses. */
extern const char *const CLI_HELP_FOOTER;

/* Prints text word-wrapped at CLI_HELP_WIDTH columns: the cursor is at column first, and
 * continuation lines (and lines after an explicit newline) start at column indent. */
void cli_print_wrapped(FILE *f, size_t indent, size_t first, const char *text);

/* One example of the help texts: a command line that runs as printed, and what it does. */
typedef struct {
    const char *cmd; /* the subcommand, or NULL for 'amsgd --help' */
    const char *line;
    const char *what;
} cli_example;

/* The examples of every help text (help_examples.c), ended by {NULL, NULL, NULL}. */
extern const cli_example cli_examples[];

/* Prints the "examples:" section of cmd (NULL: the top-level help); nothing if none. */
void cli_print_examples(FILE *f, const char *cmd);

/* Whether an output path can be written, without creating anything. An existing device,
 * FIFO or socket (also through links such as /dev/stdout) must be writable and is written
 * through (*through = 1; regular_only refuses it). An existing regular file must have write
 * permission (mode bits too, as root passes access()); named through an open descriptor
 * (/dev/stdout redirected to a file) it is written through in place; otherwise every link is
 * followed and resolved receives the target, whose folder must be writable (a temporary
 * file and rename; a dangling link names its missing target). Returns 0, or -1 with the
 * reason in why. */
int cli_path_probe(const char *path, int regular_only, char *resolved, size_t size, int *through,
                   char *why, size_t why_size);

/* Temporaries: a file written whole goes to PATH.tmp.PID beside PATH, locked (an exclusive
 * fcntl lock of its open file description, am_file_lock) from its creation to its rename.
 * cli_tmp_cleanup removes the temporaries of path that dead processes left (a SIGKILL during
 * the final write): PATH.tmp.N for a process N that does not exist, a regular file whose lock
 * nobody holds. Those of live processes, of other users' processes and of names that are not
 * PATH.tmp.DIGITS stay. Returns how many were removed. */
int cli_tmp_cleanup(const char *path);

/* The option's value (given or default), or NULL. Exits 2 if the name is not an option. */
const char *cli_str(const cli_args *a, const char *name);

/* Whether the subcommand has the option at all. */
int cli_has_opt(const cli_args *a, const char *name);

/* Whether the option was given on the command line. */
int cli_given(const cli_args *a, const char *name);

/* A boolean flag. */
int cli_flag(const cli_args *a, const char *name);

/* A finite double in [lo, hi] (bounds inclusive unless open_lo/open_hi). */
double cli_double(const cli_args *a, const char *name, double lo, double hi, int open_lo,
                  int open_hi);

/* An integer in [lo, hi]. */
long long cli_int(const cli_args *a, const char *name, long long lo, long long hi);

/* An unsigned 64-bit integer (seeds). */
uint64_t cli_u64(const cli_args *a, const char *name);

/* Parses a comma list of finite doubles into a malloc'd array; *n is its length. */
/* Returns p, kept reachable until exit: for an allocation of the parse that a usage error
 * (exit 2 from a helper) may strand; the caller still frees it as usual. */
void *cli_keep(void *p);

double *cli_double_list(const cli_args *a, const char *name, size_t *n);

/* Parses a finite double from text; returns 0 on success. */
int cli_parse_double(const char *s, double *out);

#endif
