/*
 * args.h -- table-driven option parsing for the amsgd subcommands.
 *
 * A subcommand lists its options (shared ones from cli_common.h plus its own) as a
 * NULL-terminated array of cli_opt. cli_parse accepts "--name value", "--name=value"
 * and "-o FILE"; boolean flags take no value. Getters validate and, on bad input,
 * print one line "amsgd: error: ..." on stderr and exit with status 2.
 */
#ifndef AM_CLI_ARGS_H
#define AM_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

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

/* Prints "amsgd: error: <message>" on stderr and exits with status 2. */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Prints "amsgd: error: <message>" on stderr and exits with status 3. */
void cli_runtime_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Parses argv (after the subcommand name). Prints help and exits 0 on --help/-h. */
void cli_parse(cli_args *a, const char *cmd, const char *summary, const cli_opt *const *opts,
               int argc, char **argv);

/* Prints the subcommand's usage with every flag and its default. */
void cli_print_help(const cli_args *a);

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
double *cli_double_list(const cli_args *a, const char *name, size_t *n);

/* Parses a finite double from text; returns 0 on success. */
int cli_parse_double(const char *s, double *out);

#endif
