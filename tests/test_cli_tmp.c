/*
 * test_cli_tmp.c -- temporaries left by a killed process (PATH.tmp.PID of a dead PID) are
 * removed by the next run that writes PATH (its --output or --checkpoint); those of live
 * processes, locked ones and other names stay.
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "test_util.h"

/* A PID that no process has: a child that has exited and been reaped. */
static long dead_pid(void)
{
    pid_t c = fork();
    cr_assert_geq(c, 0);
    if (c == 0) _exit(0);
    waitpid(c, NULL, 0);
    return (long)c;
}

static void touch(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "cannot create %s", p);
    fputs("partial", f);
    fclose(f);
}

static int exists(const char *dir, const char *name)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return lstat(p, &st) == 0;
}

Test(cli_tmp, leftovers_of_dead_processes_are_removed)
{
    char dir[] = "/tmp/amsgd-tmp-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    long dead = dead_pid(), dead2 = dead_pid();
    char gone[64], live[64], locked[64], other[64], ck[64];
    snprintf(gone, sizeof gone, "x.csv.tmp.%ld", dead);
    snprintf(live, sizeof live, "x.csv.tmp.%ld", (long)getpid()); /* this test: alive */
    snprintf(locked, sizeof locked, "x.csv.tmp.%ld", dead2);      /* a writer elsewhere */
    snprintf(other, sizeof other, "y.csv.tmp.%ld", dead);         /* another target */
    snprintf(ck, sizeof ck, "c.ckpt.tmp.%ld", dead);
    const char *keep[] = {live, locked, other, "x.csv.tmp.12ab", "x.csv.tmpx", "x.csv.tmp."};
    touch(dir, gone);
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        touch(dir, keep[i]);
    touch(dir, ck);
    /* the lock of a writer that the PID check cannot see (another host on a shared disk) */
    char lp[512];
    snprintf(lp, sizeof lp, "%s/%s", dir, locked);
    int lfd = open(lp, O_RDWR);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    cr_assert_eq(fcntl(lfd, F_OFD_SETLK, &fl), 0);

    char args[1024];
    snprintf(args, sizeof args, "theory -o %s/x.csv", dir);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "amsgd %s: exit %d (%s)", args, r.status, r.err);
    test_run_free(&r);
    cr_assert(exists(dir, "x.csv"));
    cr_assert(!exists(dir, gone), "%s of a dead process was left", gone);
    for (size_t i = 0; i < sizeof keep / sizeof *keep; i++)
        cr_assert(exists(dir, keep[i]), "%s was removed", keep[i]);

    /* a checkpoint's leftovers go as well */
    cr_assert(exists(dir, ck));
    snprintf(args, sizeof args,
             "phase --mu-grid 0.5 --tau-grid 0,1 --replicas 4 --time 0.2 --grid 3 --eta 1e-2 "
             "--quiet --checkpoint %s/c.ckpt",
             dir);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "amsgd %s: exit %d (%s)", args, r.status, r.err);
    test_run_free(&r);
    cr_assert(!exists(dir, ck), "%s of a dead process was left", ck);
    cr_assert(exists(dir, locked), "the locked temporary was removed");
    close(lfd);

    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}

/* SIGTERM (what mpirun sends every rank on a Ctrl-C, and Slurm's scancel) stops a sweep like
 * SIGINT: exit 130, one "interrupted after N of M cells" line, the checkpoint kept. */
Test(cli_tmp, sigterm_stops_a_sweep_like_sigint, .timeout = 60)
{
    char dir[] = "/tmp/amsgd-term-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    char sh[2048];
    snprintf(sh, sizeof sh,
             "cd '%s' || exit 1; AMSGD_TEST_CELL_PAUSE_MS=500 '%s' phase --mu-grid 0.5,0.7,0.9 "
             "--tau-grid 0:20:6 --replicas 300 "
             "--time 20 --grid 21 --threads 1 --quiet --checkpoint c.ckpt -o x.json 2>err & "
             "p=$!; i=0; while [ \"$(cat c.ckpt 2>/dev/null | wc -l)\" -lt 2 ] && "
             "[ $i -lt 500 ]; do sleep 0.05; i=$((i+1)); done; kill -TERM $p; wait $p; "
             "echo $? > rc",
             dir, bin);
    cr_assert_eq(system(sh), 0);
    char p[512], buf[512] = "";
    snprintf(p, sizeof p, "%s/rc", dir);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    int rc = -1;
    cr_assert_eq(fscanf(f, "%d", &rc), 1);
    fclose(f);
    snprintf(p, sizeof p, "%s/err", dir);
    f = fopen(p, "r");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_assert_eq(rc, 130, "SIGTERM: exit %d (stderr: %s)", rc, buf);
    cr_assert(strncmp(buf, "amsgd: interrupted after ", 25) == 0 && strchr(buf, '\n') &&
                  strchr(buf, '\n')[1] == 0,
              "SIGTERM: stderr '%s'", buf);
    cr_assert(!exists(dir, "x.json"), "an interrupted sweep wrote its output");
    cr_assert(exists(dir, "c.ckpt"));
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_assert_eq(system(rm), 0);
}
