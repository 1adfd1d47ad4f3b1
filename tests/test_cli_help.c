/*
 * test_cli_help.c -- the GNU conventions of the amsgd command line: --flag=value, "--",
 * -V/--version, amsgd help CMD, a repeated option (the last one wins), a missing value that
 * must not swallow the next option, seeds with a sign or blanks, help on a full stdout, and
 * every --help wrapped at 80 columns with examples that run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "test_util.h"

/* The commands that 'amsgd --help' lists (so a new command needs examples too). */
static char commands[32][32];
static size_t ncommands;

static void list_commands(void)
{
    test_run r = test_amsgd("--help");
    cr_assert_eq(r.status, 0);
    const char *p = strstr(r.out, "\ncommands:\n");
    cr_assert_not_null(p, "amsgd --help lists no commands");
    ncommands = 0;
    /* "  NAME  summary" lines; a wrapped summary continues deeper indented */
    for (p += 11; *p == ' ' && ncommands < 32; p = strchr(p, '\n') + 1) {
        if (p[1] == ' ' && p[2] != ' ') sscanf(p, "%31s", commands[ncommands++]);
        if (!strchr(p, '\n')) break;
    }
    cr_assert_geq(ncommands, 13, "amsgd --help lists %zu commands", ncommands);
    test_run_free(&r);
}

/* Flags appended to the examples of a command that take more than a few seconds as printed
 * (a repeated option: the last one wins). */
static const char *smaller(const char *cmd)
{
    static const struct {
        const char *cmd, *flags;
    } table[] = {
        {"phase", "--mu-grid 0.7 --tau-grid 0,10 --replicas 8 --time 0.5 --quiet"},
        {"knee", "--mus 0.5 --tau-max 8 --time 1 --replicas 8 --bootstrap 10 --quiet"},
        {"validate", "--only runtime"},
        {"staleness --model", "--max-batches 40 --eval-every 20 --seeds 2 --eval-rows 200"},
        {"tradeoff", "--model mlp:4 --budget 20 --seeds 2 --eval-rows 500 --quiet"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(cmd, table[i].cmd) == 0) return table[i].flags;
    return "";
}

/* Every line of text is at most 80 columns. */
static void assert_width(const char *what, const char *text)
{
    size_t line = 1;
    for (const char *p = text; *p; line++) {
        size_t w = strcspn(p, "\n");
        cr_assert(w <= 80, "%s: line %zu has %zu columns: '%.*s'", what, line, w, (int)w, p);
        p += w + (p[w] == '\n');
    }
}

/* The summary is reflowed (a single newline is a space), so examples written into it run
 * together on one line: they belong in the examples registry (cli/help_examples.c). */
static void assert_no_examples_in_summary(const char *what, const char *help)
{
    const char *opts = strstr(help, "\noptions:\n");
    if (!opts) opts = strstr(help, "\nexamples:\n"); /* a command without options */
    cr_assert_not_null(opts, "%s has neither options nor examples", what);
    const char *ex = strstr(help, "xamples:");
    cr_assert(!ex || ex > opts, "%s: examples in the reflowed summary: '%.60s'", what,
              ex ? ex - 1 : "");
}

/* Runs every "  amsgd ..." line of the examples section of a help text in a scratch folder
 * and expects exit status 0; returns how many ran. */
static size_t run_examples(const char *what, const char *help, const char *cmd)
{
    const char *ex = strstr(help, "\nexamples:\n");
    cr_assert_not_null(ex, "%s has no examples section", what);
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    size_t n = 0;
    for (const char *p = ex + 11; *p && *p != '\n';) {
        size_t w = strcspn(p, "\n");
        if (strncmp(p, "  amsgd ", 8) == 0) {
            char line[512], shell[2048];
            snprintf(line, sizeof line, "%.*s", (int)(w - 8), p + 8);
            const char *sub = cmd ? cmd : line;
            char first[32];
            sscanf(sub, "%31s", first);
            const char *key = cmd ? cmd : first; /* smaller() by command ("staleness --model") */
            /* rerun's examples read a result file: the scratch folder gets it first */
            char setup[512] = "";
            if (strcmp(first, "rerun") == 0)
                snprintf(setup, sizeof setup,
                         "'%s' theory --format json -o theory.json && '%s' mc --time 0.5 "
                         "--replicas 50 --grid 5 --format json -o mc.json && ",
                         bin, bin);
            snprintf(shell, sizeof shell,
                     "d=$(mktemp -d) && cd \"$d\" && %s'%s' %s %s >out 2>err; s=$?; "
                     "[ $s -eq 0 ] || cat err >&2; cd / && rm -rf \"$d\"; exit $s",
                     setup, bin, line, smaller(key));
            int st = system(shell);
            cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                      "%s: the example 'amsgd %s' (with '%s') exits %d", what, line, smaller(key),
                      WIFEXITED(st) ? WEXITSTATUS(st) : -1);
            n++;
        }
        p += w + (p[w] == '\n');
    }
    return n;
}

Test(cli_help, every_help_fits_80_columns_and_its_examples_run, .timeout = 600)
{
    list_commands();
    test_run r = test_amsgd("--help");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    assert_width("amsgd --help", r.out);
    cr_assert_geq(run_examples("amsgd --help", r.out, NULL), 1);
    test_run_free(&r);
    for (size_t i = 0; i < ncommands; i++) {
        char args[64], what[64];
        snprintf(args, sizeof args, "%.31s --help", commands[i]);
        snprintf(what, sizeof what, "amsgd %.31s --help", commands[i]);
        r = test_amsgd(args);
        cr_assert_eq(r.status, 0, "%s: exit %d (%s)", what, r.status, r.err);
        assert_width(what, r.out);
        cr_assert(strstr(r.out, "the last one wins"), "%s lacks the repeated-option rule", what);
        assert_no_examples_in_summary(what, r.out);
        cr_assert_geq(run_examples(what, r.out, commands[i]), 1, "%s: no example", what);
        test_run_free(&r);
    }
    /* staleness --model has its own options and examples */
    r = test_amsgd("staleness --model mlr --help");
    cr_assert_eq(r.status, 0, "staleness --model mlr --help: exit %d (%s)", r.status, r.err);
    assert_width("amsgd staleness --model mlr --help", r.out);
    assert_no_examples_in_summary("amsgd staleness --model mlr --help", r.out);
    cr_assert_geq(run_examples("amsgd staleness --model --help", r.out, "staleness --model"), 1);
    test_run_free(&r);
    r = test_amsgd("staleness --preset dai2019 --help");
    cr_assert_eq(r.status, 0, "staleness --preset dai2019 --help: exit %d (%s)", r.status, r.err);
    assert_width("amsgd staleness --preset dai2019 --help", r.out);
    assert_no_examples_in_summary("amsgd staleness --preset dai2019 --help", r.out);
    test_run_free(&r);
}

/* ---- one style for metavariables and defaults ------------------------------------------
 * A metavariable is a type placeholder (N for a count, FILE, DIR, SPEC, LIST, NAME, KIND, DIST,
 * FMT, or a choice such as 0|1), which may repeat, or it names one quantity: then it belongs
 * to one option in a command and to the same option (or a synonym: --momentum is mu,
 * --features is dim, --lr is eta) in every command. A default is written once, as
 * "[default: ...]" ending the option's text. */

typedef struct {
    char cmd[40], name[40], mv[24];
} help_mv;

static int generic_metavar(const char *mv)
{
    static const char *const g[] = {"N",    "FILE", "DIR",  "SPEC", "LIST",
                                    "NAME", "KIND", "DIST", "FMT"};
    if (strchr(mv, '|')) return 1;
    for (size_t i = 0; i < sizeof g / sizeof *g; i++)
        if (strcmp(mv, g[i]) == 0) return 1;
    return 0;
}

static const char *canonical(const char *name)
{
    static const char *const syn[][2] = {{"momentum", "mu"}, {"features", "dim"}, {"lr", "eta"}};
    for (size_t i = 0; i < sizeof syn / sizeof *syn; i++)
        if (strcmp(name, syn[i][0]) == 0) return syn[i][1];
    return name;
}

/* Checks the options section of one help text: the default style of every option's text, and
 * the metavariables (within the text; across texts through seen/nseen). Returns 0, or 1 with
 * the first violation in why. */
static int check_help_style(const char *cmd, const char *help, help_mv *seen, size_t *nseen,
                            size_t cap, char *why, size_t whylen)
{
    const char *p = strstr(help, "\noptions:\n");
    if (!p) return 0; /* no options (rerun FILE.json) */
    p += 10;
    while (*p && *p != '\n') {
        /* one option: its line and the continuation lines (deeper indented) */
        const char *end = p;
        do {
            end = strchr(end, '\n');
            end = end ? end + 1 : p + strlen(p);
        } while (strncmp(end, "    ", 4) == 0);
        char opt[1024];
        snprintf(opt, sizeof opt, "%.*s", (int)(end - p), p);
        p = end;
        char *q = opt + 2;
        if (strncmp(q, "-o, ", 4) == 0) q += 4;
        if (strncmp(q, "--", 2) != 0) continue; /* -h, -V */
        char name[40] = "", mv[24] = "";
        size_t nl = strcspn(q + 2, " \n");
        snprintf(name, sizeof name, "%.*s", (int)nl, q + 2);
        char *after = q + 2 + nl;
        if (after[0] == ' ' && after[1] != ' ') {
            size_t ml = strcspn(after + 1, " \n");
            snprintf(mv, sizeof mv, "%.*s", (int)ml, after + 1);
            if (strspn(mv, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789|") != strlen(mv)) mv[0] = 0;
        }
        /* the text, continuation lines joined */
        char text[1024];
        size_t n = 0;
        const char *t = after + (mv[0] ? 1 + strlen(mv) : 0);
        for (; *t && n + 1 < sizeof text; t++) {
            if (*t == '\n' || *t == ' ') {
                if (n && text[n - 1] != ' ') text[n++] = ' ';
            } else {
                text[n++] = *t;
            }
        }
        while (n && text[n - 1] == ' ')
            n--;
        text[n] = 0;
        const char *d = strstr(text, "default"), *bd = strstr(text, "[default: ");
        if (d && (d != bd + 1 || strstr(d + 1, "default") || text[n - 1] != ']'))
            return snprintf(why, whylen,
                            "%s --%s: a default must be one '[default: ...]' ending "
                            "the text, got '%s'",
                            cmd, name, text),
                   1;
        if (!mv[0] || generic_metavar(mv)) continue;
        for (size_t i = 0; i < *nseen; i++) {
            if (strcmp(seen[i].mv, mv) != 0) continue;
            int same_cmd = strcmp(seen[i].cmd, cmd) == 0;
            if (same_cmd || strcmp(canonical(seen[i].name), canonical(name)) != 0)
                return snprintf(why, whylen,
                                "metavariable %s names --%s in %s and --%s in %s: one "
                                "metavariable, one quantity",
                                mv, seen[i].name, seen[i].cmd, name, cmd),
                       1;
        }
        if (*nseen < cap) {
            help_mv *s = &seen[(*nseen)++];
            snprintf(s->cmd, sizeof s->cmd, "%s", cmd);
            snprintf(s->name, sizeof s->name, "%s", name);
            snprintf(s->mv, sizeof s->mv, "%s", mv);
        }
    }
    return 0;
}

Test(cli_help, one_style_of_metavariables_and_defaults)
{
    list_commands();
    static help_mv seen[1024];
    size_t nseen = 0;
    char why[1536];
    for (size_t i = 0; i <= ncommands; i++) {
        char args[64];
        const char *cmd = i < ncommands ? commands[i] : "staleness --model";
        snprintf(args, sizeof args, "%s%s --help", cmd, i < ncommands ? "" : " mlr");
        test_run r = test_amsgd(args);
        cr_assert_eq(r.status, 0, "amsgd %s: exit %d", args, r.status);
        int bad = check_help_style(cmd, r.out, seen, &nseen, 1024, why, sizeof why);
        cr_assert(!bad, "amsgd %s: %s", args, why);
        /* ode's horizon is a time of the ODE, not a count of steps */
        if (strcmp(cmd, "ode") == 0)
            cr_assert(!strstr(r.out, "k eta"), "ode --help speaks of t = k eta");
        test_run_free(&r);
    }
    cr_assert_geq(nseen, 20, "only %zu named metavariables found: the parser is broken", nseen);
}

/* The checker itself rejects a clash and a second default style (it can fail). */
Test(cli_help, the_style_check_finds_clashes)
{
    static help_mv seen[16];
    size_t nseen = 0;
    char why[512];
    const char *clash = "usage\n\noptions:\n"
                        "  --dim D                    dimension d [default: 4]\n"
                        "  --delta D                  phase boundary [default: 0.1]\n\n";
    cr_assert_eq(check_help_style("theory", clash, seen, &nseen, 16, why, sizeof why), 1);
    cr_assert(strstr(why, "metavariable D"), "%s", why);
    nseen = 0;
    const char *a = "u\n\noptions:\n  --workers P                learners [default: 8]\n\n";
    const char *b = "u\n\noptions:\n  --nu P                     failure probability\n\n";
    cr_assert_eq(check_help_style("runtime", a, seen, &nseen, 16, why, sizeof why), 0, "%s", why);
    cr_assert_eq(check_help_style("theory", b, seen, &nseen, 16, why, sizeof why), 1);
    nseen = 0;
    const char *styles[] = {
        "u\n\noptions:\n  -o, --output FILE          write to FILE (default stdout)\n\n",
        "u\n\noptions:\n  --dt H                     step (default: --eta)\n"
        "                             [default: eta]\n\n",
        "u\n\noptions:\n  --data FILE                CSV data set; default synthetic\n\n"};
    for (size_t i = 0; i < sizeof styles / sizeof *styles; i++)
        cr_assert_eq(check_help_style("x", styles[i], seen, &nseen, 16, why, sizeof why), 1,
                     "style %zu passed", i);
    const char *good = "u\n\noptions:\n  --grid N                   saved times [default: 200]\n"
                       "  --threads N                threads (0 = all cores) [default: 0]\n"
                       "  -o, --output FILE          write to FILE [default: stdout]\n\n";
    cr_assert_eq(check_help_style("x", good, seen, &nseen, 16, why, sizeof why), 0, "%s", why);
}

Test(cli_help, help_command_prints_the_command_help)
{
    list_commands();
    for (size_t i = 0; i < ncommands; i++) {
        char a1[64], a2[64];
        snprintf(a1, sizeof a1, "%.31s --help", commands[i]);
        snprintf(a2, sizeof a2, "help %.31s", commands[i]);
        test_run r1 = test_amsgd(a1), r2 = test_amsgd(a2);
        cr_assert_eq(r2.status, 0, "amsgd %s: exit %d", a2, r2.status);
        cr_assert_str_eq(r1.out, r2.out, "amsgd %s differs from amsgd %s", a2, a1);
        cr_assert(strncmp(r2.out, "usage: amsgd ", 13) == 0 && strstr(r2.out, commands[i]));
        test_run_free(&r1);
        test_run_free(&r2);
    }
    test_expect_usage_error("help nosuchcommand", "unknown command");
    test_expect_usage_error("", "no command");
}

Test(cli_help, version_flags)
{
    const char *forms[] = {"--version", "-V", "mc --version", "phase -V", "help --version"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        test_run r = test_amsgd(forms[i]);
        if (strcmp(forms[i], "help --version") == 0) {
            cr_assert_eq(r.status, 2, "amsgd %s: exit %d", forms[i], r.status);
        } else {
            cr_assert_eq(r.status, 0, "amsgd %s: exit %d (%s)", forms[i], r.status, r.err);
            cr_assert(strncmp(r.out, "amsgd 0.", 8) == 0 || strncmp(r.out, "amsgd ", 6) == 0);
            cr_assert(strchr(r.out, '\n') && strchr(r.out, '\n')[1] == 0,
                      "amsgd %s: one line expected, got '%s'", forms[i], r.out);
        }
        test_run_free(&r);
    }
}

/* Runs "$AMSGD args >/dev/full"; returns the exit status and the stderr in err. */
static int run_to_full(const char *args, char *err, size_t size)
{
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    char path[] = "/tmp/amsgd-full-XXXXXX", cmd[512];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/full 2>%s", bin, args, path);
    int st = system(cmd);
    ssize_t n = read(fd, err, size - 1);
    err[n > 0 ? n : 0] = 0;
    close(fd);
    remove(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli_help, help_and_version_on_a_full_stdout_fail)
{
    const char *forms[] = {
        "--help",           "-V", "mc --help", "help phase", "knee --version", "figures --list",
        "figures --dry-run"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char err[1024];
        int status = run_to_full(forms[i], err, sizeof err);
        cr_assert_neq(status, 0, "amsgd %s > /dev/full: exit 0", forms[i]);
        cr_assert(strncmp(err, "amsgd: error: ", 14) == 0 && strstr(err, "stdout"),
                  "amsgd %s > /dev/full: stderr '%s'", forms[i], err);
    }
}

Test(cli_help, gnu_option_syntax)
{
    const char *q = "mc --replicas 3 --time 0.05 --grid 4 --seed 9";
    char a[256], b[256];
    /* --flag=value equals --flag value; -oFILE equals -o FILE; "--" alone ends the options */
    snprintf(a, sizeof a, "%s --mu 0.5 --delay const:3", q);
    snprintf(b, sizeof b,
             "mc --replicas=3 --time=0.05 --grid=4 --seed=9 --mu=0.5 --delay=const:3 --");
    test_run r1 = test_amsgd(a), r2 = test_amsgd(b);
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cr_assert_eq(r2.status, 0, "amsgd %s: %s", b, r2.err);
    cr_assert_str_eq(r1.out, r2.out, "--flag=value must equal --flag value");
    test_run_free(&r2);
    /* a repeated option: the last one wins */
    snprintf(b, sizeof b, "%s --mu 0.9 --delay none --mu 0.5 --delay const:3", q);
    r2 = test_amsgd(b);
    cr_assert_eq(r2.status, 0, "amsgd %s: %s", b, r2.err);
    cr_assert_str_eq(r1.out, r2.out, "the last --mu/--delay must win");
    test_run_free(&r2);
    snprintf(b, sizeof b, "%s --mu 0.5 --delay const:3 --mu 0.9", q);
    r2 = test_amsgd(b);
    cr_assert_eq(r2.status, 0);
    cr_assert_str_neq(r1.out, r2.out, "a later --mu 0.9 must change the output");
    test_run_free(&r2);
    test_run_free(&r1);
    /* after "--" nothing is an option */
    test_expect_usage_error("mc --replicas 2 --time 0.01 -- --grid 2", "unexpected argument");
}

Test(cli_help, missing_value_does_not_swallow_the_next_option)
{
    test_expect_usage_error("theory -o --format", "needs a value");
    test_expect_usage_error("theory --output --format json", "needs a value");
    test_expect_usage_error("phase --mu-grid 0.5 --tau-grid 0,2 --replicas 4 --time 0.2 --grid 3 "
                            "--checkpoint --quiet",
                            "--checkpoint needs a value");
    test_expect_usage_error("mc --eta", "needs a value");
    /* the = form takes a value that starts with -- */
    char dir[] = "/tmp/amsgd-dash-XXXXXX", args[256], file[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args, "theory --output=%s/--x.csv", dir);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "--output=--x.csv: %s", r.err);
    test_run_free(&r);
    snprintf(file, sizeof file, "%s/--x.csv", dir);
    FILE *f = fopen(file, "r");
    cr_assert_not_null(f, "--output=DIR/--x.csv should write that file");
    char head[16] = "";
    cr_assert_not_null(fgets(head, sizeof head, f));
    fclose(f);
    cr_assert(strncmp(head, "quantity,", 9) == 0, "the file --x.csv holds '%s'", head);
    remove(file);
    rmdir(dir);
    /* a negative number is a value, not an option */
    r = test_amsgd("theory --mu 0.5 --eta 1e-3 --delta -1");
    cr_assert_eq(r.status, 2, "--delta -1 is a value (and out of range): %s", r.err);
    cr_assert(strstr(r.err, "--delta"), "%s", r.err);
    test_run_free(&r);
}

Test(cli_help, signed_or_padded_integers_refused)
{
    const char *q = "mc --replicas 2 --time 0.01 --grid 2";
    const char *cases[][2] = {
        {"--seed ' -1'", "--seed"},
        {"--seed -1", "--seed"},
        {"--seed +1", "--seed"},
        {"--seed ' 7'", "--seed"},
        {"--seed '7 '", "--seed"},
        {"--seed 0x10", "--seed"},
        {"--replicas ' 3'", "--replicas"},
        {"--grid '+3'", "--grid"},
        {"--seed ' -18446744073709551615'", "--seed"},
        {"--seed 18446744073709551616", "--seed"},
    };
    char args[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "%s %s", q, cases[i][0]);
        test_expect_usage_error(args, cases[i][1]);
    }
    /* the largest seed is accepted */
    snprintf(args, sizeof args, "%s --seed 18446744073709551615 --format json", q);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"18446744073709551615\""), "the seed should be kept: %s", r.out);
    test_run_free(&r);
}
