/*
 * args.c -- option parsing, validation and help for the amsgd subcommands.
 */
#include "args.h"
#include "embed.h"

#include <errno.h>
#include <setjmp.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local cli_embed_frame *cli_embed_active = NULL;

/* The one exit of the subcommands: prints "amsgd: error: <message>" (msg != NULL) as one line
 * on stderr and exits with code; inside an embedded call (embed.c) records code and message
 * and returns to am_cli_call instead. */
static _Noreturn void fail(int code, const char *msg)
{
    cli_embed_frame *e = cli_embed_active;
    if (e) {
        e->status = code;
        if (msg && e->errlen) snprintf(e->err, e->errlen, "%s", msg);
        longjmp(e->jump, 1);
    }
    fflush(stdout);
    if (msg) fprintf(stderr, "amsgd: error: %s\n", msg);
    exit(code);
}

void cli_usage_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fail(2, msg);
}

void cli_runtime_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fail(3, msg);
}

static int find(const cli_args *a, const char *name, size_t len)
{
    for (int i = 0; a->opts[i]; i++)
        if (strlen(a->opts[i]->name) == len && strncmp(a->opts[i]->name, name, len) == 0) return i;
    return -1;
}

void cli_print_help(const cli_args *a)
{
    printf("usage: amsgd %s [options]\n\n%s\n\noptions:\n", a->cmd, a->summary);
    for (int i = 0; a->opts[i]; i++) {
        const cli_opt *o = a->opts[i];
        char left[64];
        if (strcmp(o->name, "output") == 0)
            snprintf(left, sizeof left, "-o, --output %s", o->metavar);
        else
            snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        printf("  %-26s %s", left, o->help);
        if (o->defval) printf(" [default: %s]", o->defval);
        putchar('\n');
    }
    printf("  %-26s %s\n", "-h, --help", "show this help and exit");
}

void cli_parse(cli_args *a, const char *cmd, const char *summary, const cli_opt *const *opts,
               int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->summary = summary;
    a->opts = opts;
    for (int i = 0; opts[i]; i++)
        if (i + 1 >= CLI_MAX_OPTS) cli_runtime_error("internal: too many options for %s", cmd);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help(a);
            fail(0, NULL);
        }
        const char *name, *val = NULL;
        size_t len;
        if (strcmp(arg, "-o") == 0) {
            name = "output";
            len = 6;
        } else if (strncmp(arg, "--", 2) == 0 && arg[2]) {
            name = arg + 2;
            const char *eq = strchr(name, '=');
            len = eq ? (size_t)(eq - name) : strlen(name);
            if (eq) val = eq + 1;
        } else {
            cli_usage_error("unexpected argument '%s' for 'amsgd %s' (see amsgd %s --help)", arg,
                            cmd, cmd);
        }
        int k = find(a, name, len);
        if (k < 0)
            cli_usage_error("unknown option '%s' for 'amsgd %s' (see amsgd %s --help)", arg, cmd,
                            cmd);
        if (!opts[k]->metavar) {
            if (val) cli_usage_error("--%s takes no value, got '%s'", opts[k]->name, arg);
            val = "1";
        } else if (!val) {
            if (i + 1 >= argc)
                cli_usage_error("--%s needs a value %s", opts[k]->name, opts[k]->metavar);
            val = argv[++i];
        }
        if (a->given[k]) cli_usage_error("--%s given twice", opts[k]->name);
        a->values[k] = val;
        a->given[k] = 1;
    }
}

static int index_of(const cli_args *a, const char *name)
{
    int k = find(a, name, strlen(name));
    if (k < 0) cli_runtime_error("internal: 'amsgd %s' has no option --%s", a->cmd, name);
    return k;
}

const char *cli_str(const cli_args *a, const char *name)
{
    int k = index_of(a, name);
    return a->given[k] ? a->values[k] : a->opts[k]->defval;
}

int cli_has_opt(const cli_args *a, const char *name)
{
    return find(a, name, strlen(name)) >= 0;
}

int cli_given(const cli_args *a, const char *name)
{
    return a->given[index_of(a, name)];
}

int cli_flag(const cli_args *a, const char *name)
{
    return cli_given(a, name);
}

int cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(x)) return -1;
    *out = x;
    return 0;
}

double cli_double(const cli_args *a, const char *name, double lo, double hi, int open_lo,
                  int open_hi)
{
    const char *s = cli_str(a, name);
    double x;
    if (!s) cli_usage_error("--%s is required", name);
    char range[128];
    snprintf(range, sizeof range, "%c%g, %g%c", open_lo ? '(' : '[', lo, hi, open_hi ? ')' : ']');
    if (cli_parse_double(s, &x))
        cli_usage_error("--%s must be a finite number in %s, got '%s'", name, range, s);
    if (x < lo || x > hi || (open_lo && x == lo) || (open_hi && x == hi))
        cli_usage_error("--%s must be in %s, got %s", name, range, s);
    return x;
}

long long cli_int(const cli_args *a, const char *name, long long lo, long long hi)
{
    const char *s = cli_str(a, name);
    if (!s) cli_usage_error("--%s is required", name);
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || errno)
        cli_usage_error("--%s must be an integer in [%lld, %lld], got '%s'", name, lo, hi, s);
    if (x < lo || x > hi) cli_usage_error("--%s must be in [%lld, %lld], got %s", name, lo, hi, s);
    return x;
}

uint64_t cli_u64(const cli_args *a, const char *name)
{
    const char *s = cli_str(a, name);
    if (!s) cli_usage_error("--%s is required", name);
    char *end;
    errno = 0;
    if (*s == '-') cli_usage_error("--%s must be an integer in [0, 2^64-1], got '%s'", name, s);
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end || errno)
        cli_usage_error("--%s must be an integer in [0, 2^64-1], got '%s'", name, s);
    return (uint64_t)x;
}

double *cli_double_list(const cli_args *a, const char *name, size_t *n)
{
    const char *s = cli_str(a, name);
    if (!s || !*s) cli_usage_error("--%s needs a comma-separated list of numbers", name);
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    double *out = malloc(cap * sizeof *out);
    if (!out) cli_runtime_error("out of memory");
    char *copy = strdup(s);
    if (!copy) cli_runtime_error("out of memory");
    size_t k = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (cli_parse_double(tok, &out[k]))
            cli_usage_error("--%s must be a comma-separated list of finite numbers, got '%s'", name,
                            s);
        k++;
    }
    free(copy);
    if (k != cap) cli_usage_error("--%s has an empty entry in '%s'", name, s);
    *n = k;
    return out;
}
