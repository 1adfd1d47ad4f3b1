/*
 * args.c -- option parsing, validation and help for the amsgd subcommands.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "args.h"
#include "embed.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/am_common.h"
#include "../studies/am_sweep.h"

_Thread_local cli_embed_frame *cli_embed_active = NULL;
int cli_progress_line_open = 0;

/* The one exit of the subcommands: prints "amsgd: error: <message>" (msg != NULL) as one line
 * on stderr and exits with code; inside an embedded call (embed.c) records code and message
 * and returns to am_cli_call instead. Under MPI every rank parses the same command line and
 * meets the same usage error: only rank 0 prints it (one line, not one per rank). */
static _Noreturn void fail(int code, const char *msg)
{
    cli_embed_frame *e = cli_embed_active;
    if (e) {
        e->status = code;
        if (msg && e->errlen) snprintf(e->err, e->errlen, "%s", msg);
        longjmp(e->jump, 1);
    }
    fflush(stdout);
    if (cli_progress_line_open) fputc('\n', stderr);
    cli_progress_line_open = 0;
    if (msg && (code != 2 || am_sweep_rank() == 0)) fprintf(stderr, "amsgd: error: %s\n", msg);
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

/* The optimal-string-alignment distance between a[0..la) and b (insertions, deletions,
 * substitutions and swaps of neighbours), capped at 8. */
static size_t edit_distance(const char *a, size_t la, const char *b)
{
    size_t lb = strlen(b);
    if (la > 32 || lb > 32) return 8;
    size_t d[33][33];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb] < 8 ? d[la][lb] : 8;
}

const char *cli_closest(const char *word, size_t len, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t bd = len < 6 ? 1 : len < 12 ? 2 : 3, ties = 0; /* what counts as a typo */
    for (size_t i = 0; i < n; i++) {
        size_t dist = edit_distance(word, len, names[i]);
        if (dist < bd || (dist == bd && !best)) {
            best = names[i];
            bd = dist;
            ties = 0;
        } else if (dist == bd) {
            ties++;
        }
    }
    return ties ? NULL : best; /* two equally close names: no guess */
}

/* Exits 2 for an unknown option, naming the closest option of the command if one is a likely
 * typo of it. */
static _Noreturn void unknown_option(const cli_args *a, const char *arg, const char *name,
                                     size_t len, const char *cmd)
{
    const char *names[256];
    size_t n = 0;
    for (int i = 0; a->opts[i] && n < 256; i++)
        names[n++] = a->opts[i]->name;
    const char *near = name ? cli_closest(name, len, names, n) : NULL;
    if (near)
        cli_usage_error("unknown option '%s' for 'amsgd %s'; did you mean --%s? (see amsgd %s "
                        "--help)",
                        arg, cmd, near, cmd);
    cli_usage_error("unknown option '%s' for 'amsgd %s' (see amsgd %s --help)", arg, cmd, cmd);
}

static int find(const cli_args *a, const char *name, size_t len)
{
    for (int i = 0; a->opts[i]; i++)
        if (strlen(a->opts[i]->name) == len && strncmp(a->opts[i]->name, name, len) == 0) return i;
    return -1;
}

/* Ends a successful --help/--version: a stdout that cannot take the text (a full disk,
 * /dev/full, a closed pipe) is an I/O failure, not a success. */
static _Noreturn void exit_after_print(void)
{
    if (fflush(stdout) || ferror(stdout)) cli_runtime_error("cannot write to stdout");
    fail(0, NULL); /* exits 0, or returns to an embedded call (embed.c) */
}

void cli_print_wrapped(FILE *f, size_t indent, size_t first, const char *text)
{
    size_t col = first;
    const char *p = text;
    int line_empty = 1, glued = 0;
    while (*p) {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (*p == '\n') {
            fputc('\n', f);
            fprintf(f, "%*s", (int)indent, "");
            col = indent;
            line_empty = 1;
            p++;
            continue;
        }
        size_t w = strcspn(p, " \n");
        /* a word longer than a line (a long comma list) breaks after a comma */
        if (indent + w > CLI_HELP_WIDTH) {
            size_t room = CLI_HELP_WIDTH - col - (!line_empty && !glued), cut = 0;
            for (size_t i = 0; i < w && i < room; i++)
                if (p[i] == ',') cut = i + 1;
            if (!cut && !line_empty) {
                fprintf(f, "\n%*s", (int)indent, "");
                col = indent;
                line_empty = 1;
                glued = 0;
                continue;
            }
            if (cut) w = cut;
        }
        if (!line_empty && col + 1 + w > CLI_HELP_WIDTH) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
            line_empty = 1;
        }
        if (!line_empty && !glued) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, w, f);
        col += w;
        line_empty = 0;
        glued = w && p[w - 1] == ',' && p[w] && p[w] != ' ' && p[w] != '\n';
        p += w;
    }
    fputc('\n', f);
}

void cli_print_examples(FILE *f, const char *cmd)
{
    int any = 0;
    for (const cli_example *e = cli_examples; e->line; e++) {
        if ((cmd == NULL) != (e->cmd == NULL) || (cmd && strcmp(cmd, e->cmd) != 0)) continue;
        if (!any) fputs("\nexamples:\n", f);
        any = 1;
        fputs("  ", f);
        cli_print_wrapped(f, 6, 2, e->line);
        fputs("      ", f);
        cli_print_wrapped(f, 6, 6, e->what);
    }
}

void cli_print_help(const cli_args *a)
{
    printf("usage: amsgd %s [options]\n\n", a->cmd);
    /* the summary is reflowed: a single newline is a space, a blank line a paragraph */
    char summary[4096];
    size_t n = 0;
    for (const char *p = a->summary; *p && n + 2 < sizeof summary; p++) {
        if (*p == '\n' && p[1] == '\n') {
            summary[n++] = '\n';
            summary[n++] = '\n';
            p++;
        } else {
            summary[n++] = *p == '\n' ? ' ' : *p;
        }
    }
    summary[n] = 0;
    cli_print_wrapped(stdout, 0, 0, summary);
    printf("\noptions:\n");
    char text[1024];
    for (int i = 0; a->opts[i]; i++) {
        const cli_opt *o = a->opts[i];
        char left[64];
        if (strcmp(o->name, "output") == 0)
            snprintf(left, sizeof left, "-o, --output %s", o->metavar);
        else
            snprintf(left, sizeof left, "--%s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
        snprintf(text, sizeof text, "%s%s%s%s", o->help, o->defval ? " [default: " : "",
                 o->defval ? o->defval : "", o->defval ? "]" : "");
        printf("  %-26s ", left);
        cli_print_wrapped(stdout, 29, 29, text);
    }
    printf("  %-26s %s\n", "-h, --help", "show this help and exit");
    printf("  %-26s %s\n", "-V, --version", "print the version and exit");
    cli_print_examples(stdout, a->cmd);
    putchar('\n');
    cli_print_wrapped(stdout, 0, 0, CLI_HELP_FOOTER);
}

const char *const CLI_HELP_FOOTER =
    "An option takes its value as --name VALUE or --name=VALUE (-o FILE or -oFILE); a value "
    "that starts with -- must use the = form. Given twice, the last one wins. -- ends the "
    "options. '-o -' writes to stdout. Exit status: 0 success, 1 a check failed, 2 bad "
    "usage or an unwritable output path (found before computing), 3 a runtime failure.";

/* The target a path names once every symbolic link is followed (the link itself for a
 * dangling one's missing final target). Writes into out; *magic is set when a link on the
 * way lives in /proc or /dev/fd (an open descriptor such as /dev/stdout: its text is no
 * path to rename over). Returns 0, or -1 (errno set). */
static int resolve_links(const char *path, char *out, size_t size, int *magic)
{
    *magic = 0;
    if (strlen(path) >= size) return errno = ENAMETOOLONG, -1;
    strcpy(out, path);
    for (int hop = 0; hop < 40; hop++) {
        struct stat st;
        if (lstat(out, &st) || !S_ISLNK(st.st_mode)) return 0;
        if (strncmp(out, "/proc/", 6) == 0 || strncmp(out, "/dev/fd/", 8) == 0) *magic = 1;
        char link[PATH_MAX];
        ssize_t n = readlink(out, link, sizeof link - 1);
        if (n < 0) return -1;
        link[n] = 0;
        if (link[0] == '/') {
            if ((size_t)n >= size) return errno = ENAMETOOLONG, -1;
            strcpy(out, link);
        } else {
            char *slash = strrchr(out, '/');
            size_t keep = slash ? (size_t)(slash - out) + 1 : 0;
            if (keep + (size_t)n >= size) return errno = ENAMETOOLONG, -1;
            memmove(out + keep, link, (size_t)n + 1);
        }
    }
    return errno = ELOOP, -1;
}

/* The folder of a path ("." when it has none) into dir. */
static void dir_of(const char *path, char *dir, size_t size)
{
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
}

int cli_path_probe(const char *path, int regular_only, char *resolved, size_t size, int *through,
                   char *why, size_t why_size)
{
    *through = 0;
    if (!*path) return snprintf(why, why_size, "empty file name"), -1;
    if (strlen(path) >= size) return snprintf(why, why_size, "%s", strerror(ENAMETOOLONG)), -1;
    struct stat st;
    int exists = stat(path, &st) == 0; /* through every link, /proc's included */
    if (!exists && errno != ENOENT) return snprintf(why, why_size, "%s", strerror(errno)), -1;
    if (exists && S_ISDIR(st.st_mode)) return snprintf(why, why_size, "is a directory"), -1;
    if (exists && S_ISSOCK(st.st_mode))
        return snprintf(why, why_size, "is a socket (amsgd writes files, devices and FIFOs)"), -1;
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or FIFO: written through, never replaced */
        if (regular_only) return snprintf(why, why_size, "is not a regular file"), -1;
        if (access(path, W_OK))
            return snprintf(why, why_size, "not writable: %s", strerror(errno)), -1;
        strcpy(resolved, path);
        *through = 1;
        return 0;
    }
    /* root passes access(W_OK) on any file: a file without write bits is read-only */
    if (exists && ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || access(path, W_OK)))
        return snprintf(why, why_size, "is read-only"), -1;
    int magic;
    if (resolve_links(path, resolved, size, &magic))
        return snprintf(why, why_size, "cannot follow the link: %s", strerror(errno)), -1;
    if (magic) {
        /* an open descriptor (/dev/stdout redirected to a file): written through in place */
        if (regular_only) return snprintf(why, why_size, "names an open file descriptor"), -1;
        if (!exists) return snprintf(why, why_size, "%s", strerror(ENOENT)), -1;
        strcpy(resolved, path);
        *through = 1;
        return 0;
    }
    /* a new or regular file is written through a temporary in its folder and renamed */
    char dir[PATH_MAX];
    dir_of(resolved, dir, sizeof dir);
    if (stat(dir, &st) || !S_ISDIR(st.st_mode))
        return snprintf(why, why_size, "folder '%s' does not exist", dir), -1;
    if (access(dir, W_OK | X_OK))
        return snprintf(why, why_size, "folder '%s' is not writable: %s", dir, strerror(errno)), -1;
    return 0;
}

/* Whether the temporary dir/name (a regular file) of the dead process pid may go: nobody
 * holds its lock, and it is still the same file once locked. */
static int tmp_abandoned(const char *full, long pid)
{
    int fd = open(full, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat a, b;
    int ok = fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && am_file_lock(fd) == 0 &&
             lstat(full, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
             kill((pid_t)pid, 0) != 0 && errno == ESRCH;
    if (ok) ok = unlink(full) == 0;
    close(fd); /* releases the lock */
    return ok;
}

int cli_tmp_cleanup(const char *path)
{
    char dir[PATH_MAX];
    dir_of(path, dir, sizeof dir);
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t nb = strlen(base);
    if (!nb) return 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const char *n = e->d_name;
        if (strncmp(n, base, nb) != 0 || strncmp(n + nb, ".tmp.", 5) != 0) continue;
        const char *digits = n + nb + 5;
        if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 9)
            continue;
        long pid = strtol(digits, NULL, 10);
        if (pid <= 0 || pid == (long)getpid()) continue;
        /* a live process (or one of another user) may still be writing it */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char full[PATH_MAX];
        if ((size_t)snprintf(full, sizeof full, "%s/%s", dir, n) >= sizeof full) continue;
        removed += tmp_abandoned(full, pid);
    }
    closedir(d);
    return removed;
}

/* Whether an existing file may be used as a checkpoint: empty, a torn first line, or a first
 * line that names itself "amsgd_checkpoint"; anything else (a data file given by mistake)
 * would be overwritten, so it is refused. A missing file passes. */
static int looks_like_checkpoint(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    char buf[4097];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *nl = memchr(buf, '\n', n);
    if (!nl) return n < sizeof buf - 1 || strstr(buf, "amsgd_checkpoint") != NULL;
    *nl = 0;
    return strstr(buf, "amsgd_checkpoint") != NULL;
}

/* Output paths probed before any computation: --output and --checkpoint when the command
 * has them. A symbolic checkpoint is replaced by its target, so that its rewrites (temporary
 * file and rename) update the target and keep the link. */
static void probe_outputs(cli_args *a)
{
    static char ckpt_target[PATH_MAX];
    char out_target[PATH_MAX] = "", why[PATH_MAX + 64];
    int through = 0;
    int ko = find(a, "output", 6), kc = find(a, "checkpoint", 10);
    const char *out = ko >= 0 && a->given[ko] ? a->values[ko] : NULL;
    const char *ckpt = kc >= 0 && a->given[kc] ? a->values[kc] : NULL;
    if (out && strcmp(out, "-") != 0 &&
        cli_path_probe(out, 0, out_target, sizeof out_target, &through, why, sizeof why))
        cli_usage_error("--output: cannot write '%s': %s", out, why);
    int out_through = through;
    if (ckpt) {
        if (cli_path_probe(ckpt, 1, ckpt_target, sizeof ckpt_target, &through, why, sizeof why))
            cli_usage_error("--checkpoint: cannot write '%s': %s", ckpt, why);
        if (!looks_like_checkpoint(ckpt_target))
            cli_usage_error("--checkpoint: '%s' exists and is not an amsgd checkpoint (remove it "
                            "or choose another name)",
                            ckpt);
        if (out_target[0] && strcmp(out_target, ckpt_target) == 0)
            cli_usage_error("--checkpoint and --output name the same file '%s'", ckpt);
        if (strcmp(ckpt_target, ckpt) != 0) a->values[kc] = ckpt_target;
        cli_tmp_cleanup(ckpt_target);
    }
    if (out_target[0] && !out_through) cli_tmp_cleanup(out_target);
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
    int end_of_options = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!end_of_options && strcmp(arg, "--") == 0) {
            end_of_options = 1;
            continue;
        }
        if (end_of_options || arg[0] != '-' || !arg[1])
            cli_usage_error("unexpected argument '%s' for 'amsgd %s' (see amsgd %s --help)", arg,
                            cmd, cmd);
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            cli_print_help(a);
            exit_after_print();
        }
        if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0) {
            printf("amsgd %s\n", AM_VERSION);
            exit_after_print();
        }
        const char *name, *val = NULL;
        size_t len;
        if (strncmp(arg, "-o", 2) == 0) {
            name = "output";
            len = 6;
            if (arg[2]) val = arg + 2; /* -oFILE */
        } else if (strncmp(arg, "--", 2) == 0) {
            name = arg + 2;
            const char *eq = strchr(name, '=');
            len = eq ? (size_t)(eq - name) : strlen(name);
            if (eq) val = eq + 1;
        } else {
            unknown_option(a, arg, NULL, 0, cmd);
        }
        int k = find(a, name, len);
        if (k < 0) unknown_option(a, arg, name, len, cmd);
        if (!opts[k]->metavar) {
            if (val) cli_usage_error("--%s takes no value, got '%s'", opts[k]->name, arg);
            val = "1";
        } else if (!val) {
            if (i + 1 >= argc)
                cli_usage_error("--%s needs a value %s", opts[k]->name, opts[k]->metavar);
            /* a missing value must not swallow the next option */
            if (strncmp(argv[i + 1], "--", 2) == 0)
                cli_usage_error("--%s needs a value %s, got the option '%s' (write --%s=%s for a "
                                "value that starts with --)",
                                opts[k]->name, opts[k]->metavar, argv[i + 1], opts[k]->name,
                                argv[i + 1]);
            val = argv[++i];
        }
        /* a repeated option: the last one wins (wrappers and aliases override defaults) */
        a->values[k] = val;
        a->given[k] = 1;
    }
    probe_outputs(a);
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
    if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
        cli_usage_error("--%s must be an integer in [%lld, %lld], got '%s'", name, lo, hi, s);
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
    /* digits only: strtoull skips leading blanks and accepts a sign ("-1" wraps to 2^64-1) */
    if (!isdigit((unsigned char)s[0]))
        cli_usage_error("--%s must be an integer in [0, 2^64-1], got '%s'", name, s);
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *end || errno)
        cli_usage_error("--%s must be an integer in [0, 2^64-1], got '%s'", name, s);
    return (uint64_t)x;
}

/* The allocations of the parse that a usage error may strand (exit() from a helper whose
 * frame held the only pointer): kept reachable here, so that such an exit leaves no leak. */
static void *cli_kept[64];
static size_t cli_nkept;

void *cli_keep(void *p)
{
    cli_kept[cli_nkept++ % (sizeof cli_kept / sizeof *cli_kept)] = p;
    return p;
}

double *cli_double_list(const cli_args *a, const char *name, size_t *n)
{
    const char *s = cli_str(a, name);
    if (!s || !*s) cli_usage_error("--%s needs a comma-separated list of numbers", name);
    size_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    double *out = cli_keep(malloc(cap * sizeof *out));
    if (!out) cli_runtime_error("out of memory");
    char *copy = cli_keep(strdup(s));
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
