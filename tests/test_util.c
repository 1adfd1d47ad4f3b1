/*
 * test_util.c -- running build/amsgd from the tests (path in the AMSGD environment variable).
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

test_run test_amsgd(const char *args)
{
    test_run r = {-1, NULL, NULL};
    const char *bin = getenv("AMSGD");
    if (!bin) bin = "build/amsgd";
    char out[] = "/tmp/amsgd-test-out-XXXXXX", err[] = "/tmp/amsgd-test-err-XXXXXX";
    int fo = mkstemp(out), fe = mkstemp(err);
    close(fo);
    close(fe);
    size_t n = strlen(bin) + strlen(args) + 2 * sizeof out + 32;
    char *cmd = malloc(n);
    snprintf(cmd, n, "'%s' %s >%s 2>%s", bin, args, out, err);
    int st = system(cmd);
    free(cmd);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    remove(out);
    remove(err);
    return r;
}

void test_run_free(test_run *r)
{
    free(r->out);
    free(r->err);
}
