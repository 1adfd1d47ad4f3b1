/*
 * test_cli_rerun.c -- `amsgd rerun FILE.json`: a result file alone reproduces its output byte
 * for byte (every command that writes JSON), a changed result or a changed parameter is
 * reported as different (exit 1), and files that cannot be rerun exit 2 with one line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "test_util.h"

/* Writes `amsgd cmd --format json -o path`; returns the exit status of `amsgd rerun path`. */
static int rerun_of(const char *cmd, const char *path, char **err)
{
    char line[1024];
    snprintf(line, sizeof line, "%s --format json -o %s", cmd, path);
    test_run r = test_amsgd(line);
    cr_assert_eq(r.status, 0, "amsgd %s: exit %d (%s)", line, r.status, r.err);
    test_run_free(&r);
    snprintf(line, sizeof line, "rerun %s", path);
    r = test_amsgd(line);
    int st = r.status;
    if (err) *err = strdup(r.err);
    cr_expect_eq(r.out[0], 0, "rerun writes nothing on stdout, got '%s'", r.out);
    test_run_free(&r);
    return st;
}

Test(cli_rerun, every_command_reproduces_its_file, .timeout = 120)
{
    static const char *cmds[] = {
        "mc --replicas 50 --time 1 --grid 3 --mu 0.5 --delay uniform:4",
        "mc --delay workers:4:exp:1 --variant k-async:2 --replicas 20 --time 0.5 --grid 3",
        "sde --replicas 50 --time 1 --grid 3",
        "sde --no-noise --replicas 5 --time 1 --grid 3",
        "ode --time 1 --grid 3 --rotate 3 --dim 6",
        "ode --method bdf --linsol gmres --time 1 --grid 3",
        "dde --lag 0.1 --time 1 --grid 3",
        "compare --replicas 50 --time 1 --grid 3",
        "converge --replicas 100 --etas 2e-3,1e-3 --time 0.5",
        "converge --dist expected --replicas 1 --mu 0.5 --time 2 --etas 4e-3,1e-3,2.5e-4 "
        "--delay-scaling inverse:0.02 --limit dde",
        "theory --mu 0.3 --dist rademacher",
        "phase --mu-grid 0.5 --tau-grid 0,2 --replicas 4 --time 0.5 --quiet",
        "knee --mus 0.5 --replicas 4 --time 0.5 --tau-max 8 --bootstrap 10 --quiet",
        "runtime --replicas 20",
        "wallclock --replicas 4",
        "staleness",
        "validate --quick --only delay",
        "wallclock --sweep --quick --laws exp:1 --workers-list 2,4 --seeds 2 --replicas 8",
        "staleness --model mlr --data idx:tests/data/idx-tiny --max-batches 40 --eval-every 10",
        "staleness --model mlr --data idx:tests/data/idx-tiny --max-batches 40 --lr 0.05",
        "staleness --model mlr --data idx:tests/data/idx-tiny --max-batches 40 --tune",
        "staleness --preset dai2019 --quick --data idx:tests/data/idx-tiny --max-batches 40 "
        "--quiet",
        "tradeoff --model mlr --data idx:tests/data/idx-tiny --workers 1,2 --mus 0.1,0.5 "
        "--seeds 2 --budget 20",
        "wallclock --model mlr --data idx:tests/data/idx-tiny --quick",
    };
    char path[] = "/tmp/amsgd-rerun-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char *err = NULL;
        int st = rerun_of(cmds[i], path, &err);
        cr_expect_eq(st, 0, "amsgd %s: rerun exit %d: %s", cmds[i], st, err);
        cr_expect(strstr(err, "identical"), "amsgd %s: %s", cmds[i], err);
        free(err);
    }
    remove(path);
}

/* Replaces the first occurrence of from by to in the file. */
static void edit(const char *path, const char *from, const char *to)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *at = strstr(buf, from);
    cr_assert_not_null(at, "'%s' not in %s", from, path);
    f = fopen(path, "wb");
    fwrite(buf, 1, (size_t)(at - buf), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
}

Test(cli_rerun, a_changed_result_or_parameter_is_different)
{
    char path[] = "/tmp/amsgd-rerun-XXXXXX";
    cr_assert_geq(mkstemp(path), 0);
    char *err = NULL;
    cr_assert_eq(rerun_of("theory --mu 0.3", path, &err), 0, "%s", err);
    free(err);
    /* one recorded result changed: the rerun must see it */
    edit(path, "\"stationary_error\": ", "\"stationary_error\": 1");
    char line[256];
    snprintf(line, sizeof line, "rerun %s", path);
    test_run r = test_amsgd(line);
    cr_expect_eq(r.status, 1, "a changed result: exit %d (%s)", r.status, r.err);
    cr_expect(strstr(r.err, "DIFFERENT") && strstr(r.err, "first differing key: stationary_error"),
              "%s", r.err);
    test_run_free(&r);
    /* a changed parameter: the output follows the parameter, not the recorded results */
    cr_assert_eq(rerun_of("theory --mu 0.3", path, NULL), 0);
    edit(path, "\"mu\": 0.3", "\"mu\": 0.5");
    r = test_amsgd(line);
    cr_expect_eq(r.status, 1, "a changed parameter: exit %d (%s)", r.status, r.err);
    test_run_free(&r);
    remove(path);
}

Test(cli_rerun, files_that_cannot_be_rerun)
{
    char path[] = "/tmp/amsgd-rerun-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("t,err\n0,1\n", f);
    fclose(f);
    char line[256];
    snprintf(line, sizeof line, "rerun %s", path);
    test_expect_usage_error(line, "not a JSON result");
    f = fopen(path, "w");
    fputs("{\"params\": {}}", f);
    fclose(f);
    test_expect_usage_error(line, "no \"command\"");
    f = fopen(path, "w");
    fputs("{\"command\": \"figures\", \"params\": {}}", f);
    fclose(f);
    test_expect_usage_error(line, "cannot run");
    f = fopen(path, "w");
    fputs("{\"command\": \"theory\", \"params\": {\"mu\": 2}}", f);
    fclose(f);
    test_expect_usage_error(line, "refused");
    test_expect_usage_error("rerun", "needs a JSON result file");
    test_expect_usage_error("rerun /nonexistent/x.json", "cannot open");
    test_expect_usage_error("rerun a.json b.json", "one file");
    remove(path);
}

/* A replay writes only what its own command line names: params.output and params.checkpoint
 * of the file are not replayed (nothing appears there, the file is compared in memory), and
 * -o keeps the new output (refused before computing when it cannot be written). */
Test(cli_rerun, a_replay_never_writes_where_the_file_says)
{
    char dir[] = "/tmp/amsgd-rerun-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], line[1024];
    snprintf(path, sizeof path, "%s/t.json", dir);
    cr_assert_eq(rerun_of("theory --mu 0.3", path, NULL), 0);
    char want[320];
    snprintf(want, sizeof want,
             "\"params\": {\n  \"output\": \"%s/HIJACK\",\n  "
             "\"checkpoint\": \"%s/CKPT\",\n  \"resume\": true,",
             dir, dir);
    edit(path, "\"params\": {", want);
    snprintf(line, sizeof line, "rerun %s", path);
    test_run r = test_amsgd(line);
    cr_expect_eq(r.status, 1, "exit %d (%s)", r.status, r.err); /* the file gained keys */
    cr_expect(strstr(r.err, "params.output of") && strstr(r.err, "params.checkpoint of") &&
                  strstr(r.err, "not replayed"),
              "%s", r.err);
    test_run_free(&r);
    char probe[600];
    snprintf(probe, sizeof probe, "test ! -e %s/HIJACK && test ! -e %s/CKPT", dir, dir);
    cr_expect_eq(system(probe), 0, "the rerun wrote where the file's params said");
    /* -o keeps the new output, which equals the file of an unedited result */
    cr_assert_eq(rerun_of("theory --mu 0.3", path, NULL), 0);
    snprintf(line, sizeof line, "rerun -o %s/kept.json %s", dir, path);
    r = test_amsgd(line);
    cr_expect_eq(r.status, 0, "exit %d (%s)", r.status, r.err);
    test_run_free(&r);
    snprintf(probe, sizeof probe, "cmp -s %s/kept.json %s", dir, path);
    cr_expect_eq(system(probe), 0, "-o did not keep the new output");
    snprintf(line, sizeof line, "rerun -o /nonexistent/dir/x.json %s", path);
    test_expect_usage_error(line, "cannot write '/nonexistent/dir/x.json'");
    snprintf(probe, sizeof probe, "rm -rf '%s'", dir);
    cr_assert_eq(system(probe), 0);
}

/* A network result records its BLAS kernel; the rerun runs the recorded one where the CPU
 * has it (here Prescott, which every x86-64 runs): the new output's "blas" is the recorded
 * one, so the bytes agree only if the rerun really used that kernel. */
Test(cli_rerun, a_network_result_reruns_on_its_blas_kernel, .timeout = 60)
{
#if defined(__x86_64__)
    char path[] = "/tmp/amsgd-rerun-blas-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char line[512];
    snprintf(line, sizeof line,
             "tradeoff --model mlr --data idx:tests/data/idx-tiny --workers 1,2 --mus 0.1,0.5 "
             "--seeds 2 --budget 20 --format json -o %s",
             path);
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    test_run r = test_amsgd(line);
    unsetenv("OPENBLAS_CORETYPE");
    cr_assert_eq(r.status, 0, "%s: %s", line, r.err);
    test_run_free(&r);
    snprintf(line, sizeof line, "rerun %s", path);
    r = test_amsgd(line);
    cr_expect_eq(r.status, 0, "rerun exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "with OPENBLAS_CORETYPE=Prescott") && strstr(r.err, "identical"),
              "stderr: %s", r.err);
    test_run_free(&r);
    /* a kernel no CPU has: said so, and the files differ (exit 1) */
    char sed[600];
    snprintf(sed, sizeof sed, "sed -i 's/ Prescott\"/ NoSuchCore\"/' %s", path);
    cr_assert_eq(system(sed), 0, "%s", sed);
    r = test_amsgd(line);
    cr_expect_eq(r.status, 1, "rerun exit %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "NoSuchCore, which this CPU cannot run") &&
                  strstr(r.err, "first differing key: blas"),
              "stderr: %s", r.err);
    test_run_free(&r);
    remove(path);
#endif
}
