/*
 * test_cli_output.c -- output files of -o and --checkpoint: a symbolic link is followed to
 * its target (and kept), a FIFO or device is written through (never replaced), "-o -" is
 * stdout, a read-only file or a missing folder exits 2 before any computation, the mode of
 * a replaced file is kept and no temporary is left behind.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "../core/am_common.h"
#include "test_util.h"

/* A fresh scratch folder (removed by rm_scratch). */
static void scratch(char *dir)
{
    strcpy(dir, "/tmp/amsgd-out-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void rm_scratch(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The number of entries of dir whose name contains needle. */
static int count_names(const char *dir, const char *needle)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c -- '%s'", dir, needle);
    FILE *p = popen(cmd, "r");
    int n = 0;
    if (fscanf(p, "%d", &n) != 1) n = -1;
    pclose(p);
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static const char *THEORY = "theory --mu 0.5 --eta 1e-3";

Test(cli_output, symlink_is_followed_and_kept)
{
    char d[64], args[512], link[128], target[128];
    scratch(d);
    snprintf(link, sizeof link, "%s/link.csv", d);
    snprintf(target, sizeof target, "%s/store/real.csv", d);
    snprintf(args, sizeof args, "mkdir %s/store", d);
    cr_assert_eq(system(args), 0);
    cr_assert_eq(symlink("store/real.csv", link), 0); /* dangling until written */
    snprintf(args, sizeof args, "%s -o %s", THEORY, link);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "-o LINK replaced the link by a regular file");
    char *text = slurp(target);
    cr_assert(text && strncmp(text, "quantity,", 9) == 0, "the link's target lacks the output");
    /* rewritten through the link: the target changes, the link stays */
    snprintf(args, sizeof args, "theory --mu 0.9 --eta 1e-3 -o %s", link);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    r = test_amsgd("theory --mu 0.9 --eta 1e-3");
    cr_assert_str_eq(slurp(target), r.out, "the target should hold the second output");
    test_run_free(&r);
    cr_assert_eq(count_names(d, "tmp"), 0, "a temporary was left in %s", d);
    rm_scratch(d);
}

Test(cli_output, fifo_is_written_through, .timeout = 60)
{
    char d[64], cmd[1024];
    scratch(d);
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    /* a reader copies the FIFO to a file; amsgd must write into the FIFO, not replace it */
    snprintf(cmd, sizeof cmd,
             "cd %s && mkfifo pipe && (cat pipe > got &) && '%s' %s -o pipe && sleep 0.2 && "
             "test -p pipe && '%s' %s > want && cmp -s got want",
             d, bin, THEORY, bin, THEORY);
    cr_assert_eq(system(cmd), 0, "-o FIFO: not written through or replaced (%s)", cmd);
    rm_scratch(d);
}

Test(cli_output, char_device_is_not_replaced)
{
    char d[64], node[128], args[256];
    scratch(d);
    snprintf(node, sizeof node, "%s/fakenull", d);
    /* a stand-in for /dev/null (same device numbers); needs CAP_MKNOD, else /dev/null itself
     * (read by stat only: it must stay a character device) */
    const char *target = mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0 ? node : "/dev/null";
    snprintf(args, sizeof args, "%s -o %s", THEORY, target);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "-o %s: %s", target, r.err);
    cr_assert_eq(r.out[0], 0);
    test_run_free(&r);
    struct stat st;
    cr_assert_eq(stat(target, &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "-o %s replaced the device by a regular file", target);
    cr_assert_eq(count_names(d, "tmp"), 0);
    /* a checkpoint must be a regular file: refused before computing */
    snprintf(args, sizeof args,
             "phase --mu-grid 0.5 --tau-grid 0,2 --replicas 4 --time 0.2 --grid 3 --eta 1e-2 "
             "--quiet --checkpoint %s",
             target);
    test_expect_usage_error(args, "regular file");
    rm_scratch(d);
}

Test(cli_output, dash_is_stdout)
{
    test_run a = test_amsgd("theory --mu 0.5 --eta 1e-3 -o -"), b = test_amsgd(THEORY);
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert(strncmp(a.out, "quantity,", 9) == 0);
    cr_assert_str_eq(a.out, b.out);
    test_run_free(&a);
    test_run_free(&b);
}

Test(cli_output, read_only_target_refused_and_kept)
{
    char d[64], file[128], args[256];
    scratch(d);
    snprintf(file, sizeof file, "%s/ro.csv", d);
    FILE *f = fopen(file, "w");
    fputs("precious\n", f);
    fclose(f);
    cr_assert_eq(chmod(file, 0444), 0);
    snprintf(args, sizeof args, "%s -o %s", THEORY, file);
    test_expect_usage_error(args, "read-only");
    snprintf(args, sizeof args,
             "phase --mu-grid 0.5 --tau-grid 0,2 --replicas 4 --time 0.2 --grid 3 --eta 1e-2 "
             "--quiet --checkpoint %s",
             file);
    test_expect_usage_error(args, "read-only");
    struct stat st;
    cr_assert_eq(stat(file, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0444, "the read-only file's mode changed");
    cr_assert_str_eq(slurp(file), "precious\n", "the read-only file was replaced");
    rm_scratch(d);
}

Test(cli_output, mode_of_a_replaced_file_is_kept)
{
    char d[64], file[128], args[256];
    scratch(d);
    snprintf(file, sizeof file, "%s/keep.csv", d);
    FILE *f = fopen(file, "w");
    fclose(f);
    cr_assert_eq(chmod(file, 0600), 0);
    snprintf(args, sizeof args, "%s -o %s", THEORY, file);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    struct stat st;
    cr_assert_eq(stat(file, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "mode %o, expected 600", st.st_mode & 0777);
    cr_assert(strncmp(slurp(file), "quantity,", 9) == 0);
    rm_scratch(d);
}

/* Each run would take hours if it computed before checking its output path. */
Test(cli_output, unwritable_paths_exit_2_before_computing, .timeout = 120)
{
    char d[64], args[512];
    scratch(d);
    const char *heavy[] = {
        "mc --replicas 100000000 --time 100000 --eta 1e-3",
        "phase --mu-grid 0:0.9:10 --tau-grid 0:200:21 --replicas 100000 --time 200 --quiet",
        "validate",
    };
    const char *paths[][2] = {
        {"/nonexistent/dir/x.csv", "does not exist"},
        {"%s", "is a directory"},
        {"%s/ro/x.csv", "not writable"},
    };
    snprintf(args, sizeof args, "mkdir %s/ro && chmod 555 %s/ro", d, d);
    cr_assert_eq(system(args), 0);
    int root = geteuid() == 0; /* root may write into a 555 folder */
    for (size_t i = 0; i < sizeof heavy / sizeof heavy[0]; i++)
        for (size_t k = 0; k < sizeof paths / sizeof paths[0]; k++) {
            if (k == 2 && root) continue;
            char path[256];
            snprintf(path, sizeof path, paths[k][0], d);
            snprintf(args, sizeof args, "%s -o %s", heavy[i], path);
            test_expect_usage_error(args, paths[k][1]);
        }
    /* the checkpoint too, and a checkpoint that is the output */
    snprintf(args, sizeof args, "%s --checkpoint /nonexistent/c.ckpt -o %s/x.csv", heavy[1], d);
    test_expect_usage_error(args, "--checkpoint");
    snprintf(args, sizeof args, "%s --checkpoint %s/x.csv -o %s/x.csv", heavy[1], d, d);
    test_expect_usage_error(args, "same file");
    snprintf(args, sizeof args, "knee --replicas 100000000 --quiet --checkpoint %s/nodir/k.ckpt",
             d);
    test_expect_usage_error(args, "does not exist");
    cr_assert_eq(count_names(d, "x.csv"), 0, "nothing may be created");
    rm_scratch(d);
}

Test(cli_output, symlinked_checkpoint_resumes_through_its_target)
{
    char d[64], args[1024];
    scratch(d);
    const char *A = "phase --mu-grid 0.5,0.7 --tau-grid 0,4 --replicas 16 --time 0.5 --grid 5 "
                    "--eta 1e-2 --quiet";
    snprintf(args, sizeof args, "mkdir %s/store && ln -s store/real.ckpt %s/link.ckpt", d, d);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "%s --checkpoint %s/link.ckpt -o %s/a.csv", A, d, d);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    test_run_free(&r);
    char link[128], real[128];
    snprintf(link, sizeof link, "%s/link.ckpt", d);
    snprintf(real, sizeof real, "%s/store/real.ckpt", d);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the checkpoint link was replaced by a file");
    cr_assert_eq(stat(real, &st), 0);
    cr_assert(S_ISREG(st.st_mode) && st.st_size > 0, "the link's target holds no checkpoint");
    snprintf(args, sizeof args,
             "%s --checkpoint %s/link.ckpt --resume -o %s/b.csv && cmp %s/a.csv %s/b.csv", A, d, d,
             d, d);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "resume through the link differs: %s", r.err);
    test_run_free(&r);
    rm_scratch(d);
}

/* A --dir without the gnuplot scripts: exit 2 at once, nothing computed or written. */
Test(cli_output, figures_dir_without_scripts_exits_2_before_computing)
{
    char d[64], args[256];
    scratch(d);
    snprintf(args, sizeof args, "figures --only runtime --dir %s", d);
    test_expect_usage_error(args, "runtime.gp");
    /* a script run by a shell loop (PNG, then SVG) is found as well */
    snprintf(args, sizeof args, "figures --only knee --dir %s", d);
    test_expect_usage_error(args, "knee_loglog.gp");
    snprintf(args, sizeof args, "figures --only geo --dir %s", d);
    test_expect_usage_error(args, "phase_heatmap.gp");
    snprintf(args, sizeof args, "figures --dir %s", d);
    test_expect_usage_error(args, ".gp");
    cr_assert_eq(count_names(d, "csv"), 0, "figures wrote data into %s", d);
    rm_scratch(d);
}

/* /dev/stdout (a link into /proc) to a file, to a pipe: written through, the link kept. */
Test(cli_output, dev_stdout_is_written_through)
{
    test_run want = test_amsgd(THEORY);
    const char *forms[] = {"theory --mu 0.5 --eta 1e-3 -o /dev/stdout",
                           "theory --mu 0.5 --eta 1e-3 -o /dev/stdout | cat"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        test_run r = test_amsgd(forms[i]);
        cr_assert_eq(r.status, 0, "amsgd %s: %s", forms[i], r.err);
        cr_assert_str_eq(r.out, want.out, "amsgd %s: stdout differs", forms[i]);
        test_run_free(&r);
    }
    struct stat st;
    cr_assert_eq(lstat("/dev/stdout", &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "/dev/stdout is no longer a link");
    test_run_free(&want);
}

/* A full device is written through and its failure reported with the reason (exit 3). */
Test(cli_output, full_device_reports_the_reason)
{
    test_run r = test_amsgd("theory --mu 0.5 --eta 1e-3 -o /dev/full");
    cr_assert_eq(r.status, 3, "-o /dev/full: exit %d (%s)", r.status, r.err);
    cr_assert(strstr(r.err, "No space left on device"), "-o /dev/full: '%s'", r.err);
    test_run_free(&r);
    struct stat st;
    cr_assert_eq(stat("/dev/full", &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "/dev/full was replaced");
}

/* --checkpoint naming a data file: refused before computing, the file kept. */
Test(cli_output, checkpoint_over_a_data_file_refused)
{
    char d[64], file[128], args[512];
    scratch(d);
    snprintf(file, sizeof file, "%s/mydata.csv", d);
    FILE *f = fopen(file, "w");
    fputs("x,y\n1,2\n", f);
    fclose(f);
    const char *A = "phase --mu-grid 0.5 --tau-grid 0,2 --replicas 4 --time 0.2 --grid 3 "
                    "--eta 1e-2 --quiet";
    snprintf(args, sizeof args, "%s --checkpoint %s", A, file);
    test_expect_usage_error(args, "not an amsgd checkpoint");
    cr_assert_str_eq(slurp(file), "x,y\n1,2\n", "the data file was overwritten");
    /* an empty file and a real checkpoint are accepted */
    snprintf(args, sizeof args, ": > %s/empty.ckpt", d);
    cr_assert_eq(system(args), 0);
    snprintf(args, sizeof args, "%s --checkpoint %s/empty.ckpt -o %s/a.csv", A, d, d);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "an empty checkpoint file: %s", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "%s --checkpoint %s/empty.ckpt -o %s/b.csv", A, d, d);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "a checkpoint written by amsgd: %s", r.err);
    test_run_free(&r);
    rm_scratch(d);
}

/* -o naming one of the process's own descriptors (/dev/stdout, /dev/fd/1, /proc/self/fd/1)
 * writes to that descriptor at its offset: a log the shell opened for append keeps what it
 * held (it was truncated before), and a log opened with > gets exactly the output. */
Test(cli_output, own_descriptor_keeps_an_appended_log)
{
    char d[64], cmd[1024];
    scratch(d);
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    const char *names[] = {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd,
                 "cd %s && '%s' %s > want && printf 'keep\\n' > log && '%s' %s -o %s >> log && "
                 "{ printf 'keep\\n'; cat want; } | cmp -s - log && '%s' %s -o %s > log2 && "
                 "cmp -s want log2",
                 d, bin, THEORY, bin, THEORY, names[i], bin, THEORY, names[i]);
        cr_assert_eq(system(cmd), 0, "-o %s: the appended log lost its line or differs (%s)",
                     names[i], cmd);
    }
    rm_scratch(d);
}

/* A link planted at the name of the temporary (FILE.tmp.PID, the PID predicted by exec) is
 * not followed: its target keeps its bytes, the output and the checkpoint are written, and
 * no temporary is left. */
Test(cli_output, planted_link_at_the_temporary_is_not_followed)
{
    char d[64], cmd[1024];
    scratch(d);
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    snprintf(cmd, sizeof cmd,
             "cd %s && echo secret > victim && sh -c 'ln -s victim out.csv.tmp.$$ && "
             "ln -s victim c.ckpt.tmp.$$ && exec \"$0\" phase --mu-grid 0.5 --tau-grid 0,2 "
             "--replicas 8 --time 0.5 --grid 5 --quiet --checkpoint c.ckpt -o out.csv' '%s' && "
             "[ \"$(cat victim)\" = secret ] && [ -s out.csv ] && head -c 20 c.ckpt | "
             "grep -q amsgd_checkpoint",
             d, bin);
    cr_assert_eq(system(cmd), 0, "a planted link was followed or the run failed (%s)", cmd);
    cr_assert_eq(count_names(d, "tmp"), 0, "a temporary or a planted link was left in %s", d);
    rm_scratch(d);
}

/* -o naming a socket is refused before computing (exit 2, one line), like any output that
 * cannot be written; a data file whose header asks for more than the memory limit is bad
 * input (exit 2), not a runtime failure. */
Test(cli_output, socket_and_oversized_data_exit_2_before_computing)
{
    char d[64], cmd[1024], args[512];
    scratch(d);
    snprintf(cmd, sizeof cmd,
             "cd %s && python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('s.sock')\" "
             "2>/dev/null || /usr/bin/python3 -c \"import socket; "
             "socket.socket(socket.AF_UNIX).bind('%s/s.sock')\"",
             d, d);
    cr_assert_eq(system(cmd), 0, "cannot make a socket in %s", d);
    snprintf(args, sizeof args, "mc --replicas 100000 --time 100 -o %s/s.sock", d);
    test_expect_usage_error(args, "is a socket");
    /* an IDX set whose training images claim 2^30 x 2^15 x 2^15 bytes */
    snprintf(cmd, sizeof cmd,
             "cd %s && /usr/bin/python3 -c \"import gzip, struct\n"
             "open('train-images-idx3-ubyte', 'wb').write(struct.pack('>IIII', 0x803, 1 << 30, "
             "1 << 15, 1 << 15))\n"
             "open('t10k-images-idx3-ubyte', 'wb').write(struct.pack('>IIII', 0x803, 2, 4, 4) + "
             "bytes(32))\n"
             "[open(n, 'wb').write(struct.pack('>II', 0x801, 2) + bytes(2)) for n in "
             "('train-labels-idx1-ubyte', 't10k-labels-idx1-ubyte')]\"",
             d);
    cr_assert_eq(system(cmd), 0, "cannot write the IDX files in %s", d);
    snprintf(args, sizeof args, "tradeoff --model mlr --data idx:%s --budget 10", d);
    test_expect_usage_error(args, "larger than the memory limit");
    rm_scratch(d);
}

/* An IDX file present both plain and compressed is refused (exit 2, naming both), never one
 * of them chosen silently. */
Test(cli_output, idx_file_both_plain_and_gz_is_refused)
{
    char d[64], cmd[512], args[512];
    scratch(d);
    snprintf(cmd, sizeof cmd,
             "cp tests/data/idx-tiny/*.gz %s/ && gunzip -k %s/train-labels-idx1-ubyte.gz", d, d);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(args, sizeof args, "tradeoff --model mlr --data idx:%s --budget 10", d);
    test_expect_usage_error(args, "train-labels-idx1-ubyte.gz both exist; remove one");
    rm_scratch(d);
}

/* figures names each step on stderr before running it and times it after; --quiet drops
 * those lines and writes the same files. */
Test(cli_output, figures_shows_its_steps, .timeout = 120)
{
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) cr_skip_test("no gnuplot");
    char d[64], q[64], cmd[512], args[256];
    scratch(d);
    scratch(q);
    snprintf(cmd, sizeof cmd, "cp docs/figures/runtime.gp %s/ && cp docs/figures/runtime.gp %s/", d,
             q);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(args, sizeof args, "figures --only runtime --dir %s", d);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "amsgd %s: %s", args, r.err);
    cr_expect_eq(r.out[0], 0, "amsgd %s wrote '%s' to stdout", args, r.out);
    const char *first = "amsgd figures: runtime: step 1/4: amsgd runtime --workers 8 ";
    cr_expect(strncmp(r.err, first, strlen(first)) == 0, "stderr '%s'", r.err);
    cr_expect(strstr(r.err, "\namsgd figures: runtime: step 1/4 done (") &&
                  strstr(r.err, "\namsgd figures: runtime: step 4/4: gnuplot runtime.gp\n") &&
                  strstr(r.err, "\namsgd figures: runtime done ("),
              "stderr '%s'", r.err);
    test_run_free(&r);
    snprintf(args, sizeof args, "figures --only runtime --dir %s --quiet", q);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "amsgd %s: %s", args, r.err);
    cr_expect_eq(r.err[0], 0, "amsgd %s: stderr '%s'", args, r.err);
    test_run_free(&r);
    snprintf(cmd, sizeof cmd, "diff -r %s %s", d, q);
    cr_expect_eq(system(cmd), 0, "--quiet changed the files: %s", cmd);
    rm_scratch(d);
    rm_scratch(q);
}

/* A .gz file with bytes after its gzip stream is refused (exit 2, one line naming the file),
 * as gzip -t reports it; concatenated gzip members are one stream and trailing zero bytes
 * are padding (gzip -t accepts both), so the same data read either way trains the same. */
Test(cli_output, idx_gz_trailing_garbage_is_refused)
{
    char d[64], cmd[1024], args[512];
    scratch(d);
    const char *lb = "train-labels-idx1-ubyte.gz";
    snprintf(cmd, sizeof cmd, "cp tests/data/idx-tiny/*.gz %s/ && printf 'junk' >> %s/%s", d, d,
             lb);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(args, sizeof args,
             "tradeoff --model mlr --data idx:%s --workers 1 --mus 0.5 --seeds 1 --budget 10", d);
    char needle[256];
    snprintf(needle, sizeof needle, "%s/%s: trailing garbage after the gzip stream", d, lb);
    test_expect_usage_error(args, needle);

    /* one byte of garbage, a lone 0x1f (the first byte of a gzip magic) */
    snprintf(cmd, sizeof cmd, "cp tests/data/idx-tiny/%s %s/ && printf '\\037' >> %s/%s", lb, d, d,
             lb);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    test_expect_usage_error(args, needle);

    /* zeros, then garbage */
    snprintf(cmd, sizeof cmd, "cp tests/data/idx-tiny/%s %s/ && printf '\\0\\0x' >> %s/%s", lb, d,
             d, lb);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    test_expect_usage_error(args, needle);

    /* the reference: the fixture as committed */
    snprintf(cmd, sizeof cmd, "cp tests/data/idx-tiny/%s %s/", lb, d);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    test_run ref = test_amsgd(args);
    cr_assert_eq(ref.status, 0, "amsgd %s: exit %d (%s)", args, ref.status, ref.err);

    /* the images as two concatenated members and the labels padded with zeros: accepted, and
     * the same result */
    const char *im = "train-images-idx3-ubyte.gz";
    snprintf(cmd, sizeof cmd,
             "cd %s && gzip -dc %s > raw && head -c 100 raw | gzip > %s && tail -c +101 raw | "
             "gzip >> %s && rm raw && printf '\\0\\0\\0\\0' >> %s && gzip -t %s %s",
             d, im, im, im, lb, im, lb);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    test_run r = test_amsgd(args);
    cr_expect_eq(r.status, 0, "amsgd %s: exit %d (%s)", args, r.status, r.err);
    cr_expect_str_eq(r.out, ref.out, "concatenated members or zero padding changed the result");
    test_run_free(&r);
    test_run_free(&ref);
    rm_scratch(d);
}

/* The shortest round-trip decimal of the JSON numbers: closed cases, then random doubles of
 * every exponent (read back exactly, and one digit fewer does not read back). */
Test(cli_output, shortest_round_trip_numbers)
{
    static const struct {
        double x;
        const char *s;
    } c[] = {{0.0005, "0.0005"},
             {222.0, "222"},
             {0.1, "0.1"},
             {1.0 / 3, "0.3333333333333333"},
             {1e-5, "1e-05"},
             {-0.0, "-0"},
             {-2.5, "-2.5"},
             {9007199254740992.0, "9007199254740992"},
             {5e-324, "5e-324"},
             {1e300, "1e+300"},
             {0.30000000000000004, "0.30000000000000004"}};
    char buf[40];
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        am_common_shortest(c[i].x, buf, sizeof buf);
        cr_expect_str_eq(buf, c[i].s, "x = %.17g", c[i].x);
    }
    uint64_t u = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 100000; i++) {
        u ^= u << 13, u ^= u >> 7, u ^= u << 17;
        double x;
        memcpy(&x, &u, sizeof x);
        if (!isfinite(x)) continue;
        am_common_shortest(x, buf, sizeof buf);
        cr_assert(strtod(buf, NULL) == x, "%s does not read back as %.17g", buf, x);
        if (x == floor(x) && fabs(x) < 9007199254740992.0) continue;
        int digits = 0;
        for (const char *p = buf; *p && *p != 'e'; p++)
            digits += *p >= '0' && *p <= '9';
        for (const char *p = buf; *p == '-' || *p == '0' || *p == '.'; p++) /* leading zeros */
            digits -= *p == '0';
        char fewer[400];
        snprintf(fewer, sizeof fewer, "%.*g", digits - 1, x);
        cr_assert(digits == 1 || strtod(fewer, NULL) != x, "%s is not the shortest: %s", buf,
                  fewer);
    }
}

Test(cli_output, json_numbers_are_shortest)
{
    test_run r = test_amsgd("theory --format json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\"eta\": 0.0005,") && strstr(r.out, "\"dim\": 4,") &&
                  strstr(r.out, "\"mu\": 0,") && !strstr(r.out, "00000000000"),
              "%s", r.out);
    test_run_free(&r);
}
