/*
 * cmd_rerun.c -- `amsgd rerun FILE.json`: runs again the command a JSON result records (its
 * `command` and `params`) and says whether the new output is byte-identical to the file:
 * reproducibility from the file alone. Each params key k becomes the flag --k (underscores as
 * dashes): strings as they are, numbers with 17 significant digits (a double survives the
 * round trip), true as a bare flag, false and null omitted, arrays as comma lists. Keys that
 * record a derived value rather than an option are skipped (a const table below).
 * Exit status: 0 identical, 1 different, 2 a file that cannot be rerun, 3 the rerun failed.
 * The rerun is a child process (this program, /proc/self/exe): nothing of it stays behind in
 * this one, and its messages and exit status are those of the command.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "args.h"
#include "cli_common.h"
#include "commands.h"
#include "../core/am_common.h"
#include "../models/am_nn.h"

/* Recorded values that are not options of their command. */
static const struct {
    const char *command, *key;
} rerun_skip[] = {
    {"ode", "init_replica"}, /* replica 0's point: derived from --init */
    {"dde", "init_replica"},
    {"knee", "eps"}, /* the summary's error level: fixed, not an option */
    /* validate: the one gamma and C of theory/am_theory.h, fixed */
    {"validate", "gamma"},
    {"validate", "bound_constant"},
};

/* Options that name files this run would write or read back (a replay writes only what its
 * own command line names: its -o, else nothing): never taken from the file. */
static const char *const rerun_not_replayed[] = {"output", "checkpoint", "resume"};

/* Options that take 0|1 but are recorded as booleans. */
static const struct {
    const char *command, *key;
} rerun_bool_value[] = {
    {"sde", "noise"},
    {"compare", "noise"},
};

static int rerun_bool_valued(const char *command, const char *key)
{
    for (size_t i = 0; i < sizeof rerun_bool_value / sizeof rerun_bool_value[0]; i++)
        if (strcmp(rerun_bool_value[i].command, command) == 0 &&
            strcmp(rerun_bool_value[i].key, key) == 0)
            return 1;
    return 0;
}

/* Whether key is recorded but is no option here: the table above, plus values recorded for
 * completeness that the command refuses in this combination (the linear solver of Adams,
 * the delay model next to a delay scaling). */
static int rerun_skipped(const char *command, const char *key, const json_t *params)
{
    for (size_t i = 0; i < sizeof rerun_skip / sizeof rerun_skip[0]; i++)
        if (strcmp(rerun_skip[i].command, command) == 0 && strcmp(rerun_skip[i].key, key) == 0)
            return 1;
    const char *method = json_string_value(json_object_get(params, "method"));
    if (strcmp(command, "ode") == 0 && strcmp(key, "linsol") == 0 && method &&
        strcmp(method, "bdf") != 0)
        return 1;
    const char *scaling = json_string_value(json_object_get(params, "delay_scaling"));
    if (strcmp(command, "converge") == 0 && strcmp(key, "delay") == 0 && scaling &&
        strcmp(scaling, "none") != 0)
        return 1;
    return 0;
}

/* Appends the text of a scalar JSON value to buf; 0 if it has none (null, false, objects). */
static int rerun_scalar(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v)) {
        snprintf(buf, len, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, len, "%.17g", json_real_value(v));
    } else {
        return 0;
    }
    return 1;
}

extern char **environ;

/* Runs this program (/proc/self/exe) with argv in a child process: its stdout into *out
 * (malloc'd, *outlen bytes), the message of its one-line error into err; returns its exit
 * status (-1 if it could not run or did not exit). A separate process, so that a refused or
 * failed rerun cannot leave anything of its own behind in this one. */
static int rerun_spawn(char **argv, char **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    err[0] = 0;
    int pipefd[2];
    FILE *errf = tmpfile();
    if (!errf || pipe(pipefd)) {
        if (errf) fclose(errf);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fileno(errf), STDERR_FILENO);
    posix_spawn_file_actions_addclose(&fa, pipefd[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipefd[1]);
    if (rc) {
        close(pipefd[0]);
        fclose(errf);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (ssize_t got; buf && (got = read(pipefd[0], buf + len, cap - len)) > 0;) {
        len += (size_t)got;
        if (len == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) free(buf);
            buf = bigger;
        }
    }
    close(pipefd[0]);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0)
        ;
    rewind(errf);
    char line[2048] = "";
    while (fgets(line, sizeof line, errf))
        if (strncmp(line, "amsgd: error: ", 14) == 0) {
            line[strcspn(line, "\n")] = 0;
            snprintf(err, errlen, "%.*s", (int)(errlen - 1), line + 14);
        }
    fclose(errf);
    if (!buf) return -1;
    *out = buf;
    *outlen = len;
    return WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
}

/* The path of the first value that differs between two JSON documents (keys in the
 * recorded file's order, then the keys only the new output has), e.g. "params.eta" or
 * "variants[0].err_mean[3]"; 0 when they are equal. */
static int rerun_first_diff(json_t *a, json_t *b, char *at, size_t len)
{
    size_t n = strlen(at);
    if (json_is_object(a) && json_is_object(b)) {
        const char *k;
        json_t *va;
        json_object_foreach(a, k, va)
        {
            snprintf(at + n, len - n, "%s%s", n ? "." : "", k);
            json_t *vb = json_object_get(b, k);
            if (!vb || rerun_first_diff(va, vb, at, len)) return 1;
        }
        json_object_foreach(b, k, va)
        {
            snprintf(at + n, len - n, "%s%s", n ? "." : "", k);
            if (!json_object_get(a, k)) return 1;
        }
        at[n] = 0;
        return 0;
    }
    if (json_is_array(a) && json_is_array(b)) {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na || i < nb; i++) {
            snprintf(at + n, len - n, "[%zu]", i);
            if (i >= na || i >= nb) return 1;
            if (rerun_first_diff(json_array_get(a, i), json_array_get(b, i), at, len)) return 1;
        }
        at[n] = 0;
        return 0;
    }
    return !json_equal(a, b);
}

/* The argv of the rerun: amsgd, command, --key value for each replayed params key,
 * --format json; *n receives its length. Exits 2 on a value that is no option value. */
static char **rerun_argv(const char *command, json_t *params, const char *path, size_t *nout)
{
    size_t nmax = 2 * json_object_size(params) + 6, n = 0;
    char **args = calloc(nmax, sizeof *args);
    if (!args) cli_runtime_error("out of memory");
    args[n++] = strdup("amsgd");
    args[n++] = strdup(command);
    const char *key;
    json_t *v;
    json_object_foreach(params, key, v)
    {
        if (rerun_skipped(command, key, params) || strcmp(key, "format") == 0) continue;
        int replayed = 1;
        for (size_t i = 0; i < sizeof rerun_not_replayed / sizeof *rerun_not_replayed; i++)
            replayed &= strcmp(key, rerun_not_replayed[i]) != 0;
        if (!replayed) {
            if (!json_is_null(v) && !json_is_false(v))
                fprintf(stderr,
                        "amsgd rerun: params.%s of '%s' not replayed: a rerun writes only what "
                        "its own -o names\n",
                        key, path);
            continue;
        }
        char flag[128], val[8192];
        snprintf(flag, sizeof flag, "--%s", key);
        for (char *p = flag + 2; *p; p++)
            if (*p == '_') *p = '-';
        if (json_is_boolean(v) && rerun_bool_valued(command, key)) {
            args[n++] = strdup(flag);
            args[n++] = strdup(json_is_true(v) ? "1" : "0");
            continue;
        }
        if (json_is_null(v) || json_is_false(v)) continue;
        if (json_is_true(v)) {
            args[n++] = strdup(flag);
            continue;
        }
        if (json_is_array(v)) {
            size_t at = 0;
            val[0] = 0;
            for (size_t i = 0; i < json_array_size(v); i++) {
                char item[64];
                if (!rerun_scalar(json_array_get(v, i), item, sizeof item))
                    cli_usage_error("params.%s of '%s' holds a value that is no option value", key,
                                    path);
                int w = snprintf(val + at, sizeof val - at, "%s%s", i ? "," : "", item);
                if (w < 0 || (size_t)w >= sizeof val - at)
                    cli_usage_error("params.%s of '%s' is too long", key, path);
                at += (size_t)w;
            }
        } else if (!rerun_scalar(v, val, sizeof val)) {
            cli_usage_error("params.%s of '%s' holds a value that is no option value", key, path);
        }
        args[n++] = strdup(flag);
        args[n++] = strdup(val);
    }
    args[n++] = strdup("--format");
    args[n++] = strdup("json");
    for (size_t i = 0; i < n; i++)
        if (!args[i]) cli_runtime_error("out of memory");

    *nout = n;
    return args;
}

/* Says on stderr whether the new output out[outlen] is the recorded old[len] (root: its
 * JSON); returns 1 when it is. */
static int rerun_report(const char *cmdline, const char *old, size_t len, const char *out,
                        size_t outlen, json_t *root, const char *version)
{
    int same = outlen == len && memcmp(out, old, len) == 0;
    const char *now = am_version();
    if (same) {
        fprintf(stderr, "amsgd rerun: %s\namsgd rerun: identical (%zu bytes)\n", cmdline, len);
    } else {
        size_t i = 0, line = 1;
        while (i < len && i < outlen && out[i] == old[i]) {
            if (old[i] == '\n') line++;
            i++;
        }
        fprintf(stderr, "amsgd rerun: %s\n", cmdline);
        fprintf(stderr,
                "amsgd rerun: DIFFERENT: first difference at byte %zu (line %zu); %zu "
                "bytes recorded, %zu now",
                i, line, len, outlen);
        json_t *fresh = json_loadb(out, outlen, 0, NULL);
        char where[512] = "";
        if (fresh && rerun_first_diff(root, fresh, where, sizeof where))
            fprintf(stderr, "; first differing key: %s", where);
        else if (fresh)
            fprintf(stderr, "; the same JSON values, other bytes");
        json_decref(fresh);
        if (version && strcmp(version, now) != 0)
            fprintf(stderr, "; recorded by version %s, this is %s", version, now);
        fputc('\n', stderr);
    }
    return same;
}

/* A network result records the BLAS kernel it was computed with ("blas"); other kernels round
 * differently. The rerun uses the recorded kernel where this CPU has it (OPENBLAS_CORETYPE in
 * the rerun's environment), else says that only the seed spread can agree. */
static void rerun_blas(const json_t *root)
{
    const char *rec = json_string_value(json_object_get(root, "blas"));
    char here[128];
    am_nn_blas(here, sizeof here);
    if (!rec || strcmp(rec, here) == 0) return;
    const char *core = strrchr(rec, ' ');
    core = core ? core + 1 : rec;
    if (am_nn_blas_core_runs(core) && setenv("OPENBLAS_CORETYPE", core, 1) == 0)
        fprintf(stderr, "amsgd rerun: recorded with %s; rerun with OPENBLAS_CORETYPE=%s\n", rec,
                core);
    else
        fprintf(stderr,
                "amsgd rerun: recorded with %s, which this CPU cannot run (this process: %s); "
                "network results agree across BLAS kernels only to their seed spread\n",
                rec, here);
}

/* The bytes of FILE (or stdin for "-"), *len of them; exits 2 when it cannot be read. */
static char *rerun_read(const char *path, size_t *lenout)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) cli_usage_error("cannot open '%s' for reading", path);
    size_t cap = 1 << 16, len = 0;
    char *old = malloc(cap);
    for (size_t got; old && (got = fread(old + len, 1, cap - len, f)) > 0;) {
        len += got;
        if (len == cap) {
            if (cap > ((size_t)1 << 32)) cli_usage_error("'%s' is larger than 4 GiB", path);
            char *bigger = realloc(old, cap *= 2);
            if (!bigger) free(old);
            old = bigger;
        }
    }
    if (!old) cli_runtime_error("out of memory");
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (bad) cli_usage_error("cannot read '%s'", path);

    *lenout = len;
    return old;
}

static void rerun_usage(FILE *f)
{
    fprintf(f, "usage: amsgd rerun [-o NEW.json] FILE.json\n\n"
               "Run again the command that a JSON result file records (its \"command\" and\n"
               "\"params\") and report whether the new output is byte-identical to the file.\n"
               "Each params key becomes its option, once (on a command line an option given\n"
               "twice counts once: the last one wins); --format json is added. The new output\n"
               "is compared in memory and written only where -o names; params.output,\n"
               "params.checkpoint and params.resume are never replayed. FILE may be -\n"
               "(stdin); -- ends the options. Exit status: 0 identical, 1 different, 2 a file\n"
               "that cannot be rerun, 3 the rerun failed.\n");
    cli_print_examples(f, "rerun");
}

/* The arguments of rerun: FILE into *pathout, -o NEW into *keepout (NULL without; refused
 * before computing when it cannot be written); 1 after printing the help, else 0. */
static int rerun_args(int argc, char **argv, const char **pathout, const char **keepout)
{
    const char *path = NULL, *keep = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (i + 1 >= argc) cli_usage_error("%s needs a file name", argv[i]);
            keep = argv[++i];
            continue;
        }
        if (strncmp(argv[i], "--output=", 9) == 0) {
            keep = argv[i] + 9;
            continue;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            rerun_usage(stdout);
            if (fflush(stdout) || ferror(stdout))
                cli_runtime_error("cannot write the help text to stdout");
            return 1;
        }
        if (strcmp(argv[i], "--") == 0 && i + 1 < argc && !path) {
            path = argv[++i];
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            cli_usage_error("unknown option '%s' for 'amsgd rerun' (see amsgd rerun --help)",
                            argv[i]);
        if (path) cli_usage_error("rerun takes one file, got '%s' and '%s'", path, argv[i]);
        path = argv[i];
    }
    if (!path) cli_usage_error("rerun needs a JSON result file (see amsgd rerun --help)");
    if (keep) { /* refused before computing, like every command's -o */
        char target[4096], why[4200];
        int through;
        if (cli_path_probe(keep, 0, target, sizeof target, &through, why, sizeof why))
            cli_usage_error("cannot write '%s': %s", keep, why);
    }

    *pathout = path;
    *keepout = keep;
    return 0;
}

int cmd_rerun(int argc, char **argv)
{
    const char *path, *keep;
    if (rerun_args(argc, argv, &path, &keep)) return 0;

    size_t len;
    char *old = rerun_read(path, &len);

    json_error_t je;
    json_t *root = json_loadb(old, len, 0, &je);
    if (!root || !json_is_object(root))
        cli_usage_error("'%s' is not a JSON result (line %d: %s)", path, je.line,
                        root ? "not an object" : je.text);
    const char *command = json_string_value(json_object_get(root, "command"));
    const char *version = json_string_value(json_object_get(root, "version"));
    json_t *params = json_object_get(root, "params");
    if (!command || !json_is_object(params))
        cli_usage_error("'%s' records no \"command\" and \"params\": not an amsgd JSON result",
                        path);
    int known = 0;
    for (const cli_command *c = cli_commands; c->name; c++)
        known |= strcmp(c->name, command) == 0;
    if (!known || strcmp(command, "rerun") == 0 || strcmp(command, "figures") == 0)
        cli_usage_error("'%s' records the command '%s', which rerun cannot run", path, command);

    size_t n;
    char **args = rerun_argv(command, params, path, &n);

    char cmdline[4096];
    size_t at = 0;
    cmdline[0] = 0;
    for (size_t i = 0; i < n && at < sizeof cmdline; i++)
        at += (size_t)snprintf(cmdline + at, sizeof cmdline - at, "%s%s", i ? " " : "", args[i]);

    char *out = NULL, err[1024];
    size_t outlen = 0;
    rerun_blas(root);
    int st = rerun_spawn(args, &out, &outlen, err, sizeof err);
    for (size_t i = 0; i < n; i++)
        free(args[i]);
    free(args);
    if (st == 2 || st == 3) {
        free(out);
        free(old);
        json_decref(root);
        if (st == 2) cli_usage_error("the recorded parameters are refused: %s", err);
        cli_runtime_error("the rerun failed: %s", err[0] ? err : "no message");
    }
    if (st != 0 && st != 1) {
        free(out);
        cli_runtime_error("the rerun did not complete (status %d)", st);
    }

    int same = rerun_report(cmdline, old, len, out, outlen, root, version);
    if (keep) cli_out_write_file(keep, out, outlen);
    free(out);
    free(old);
    json_decref(root);
    return same ? 0 : 1;
}
