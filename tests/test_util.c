/*
 * test_util.c -- running build/amsgd from the tests (path in the AMSGD environment variable).
 */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

json_t *test_amsgd_json(const char *args, int want_status)
{
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, want_status, "amsgd %s: exit %d (stderr %s)", args, r.status, r.err);
    json_error_t e;
    json_t *root = json_loads(r.out, 0, &e);
    cr_assert_not_null(root, "amsgd %s: invalid JSON (%s)", args, e.text);
    test_run_free(&r);
    return root;
}

char *test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = 0;
    fclose(f);
    return buf;
}

static char *slurp(const char *path)
{
    char *s = test_read_file(path);
    return s ? s : strdup("");
}

void test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

static void fixture_path(char *buf, size_t len, const char *prefix)
{
    const char *f = __FILE__, *slash = strrchr(f, '/');
    int n = slash ? (int)(slash - f) : 1;
    snprintf(buf, len, "%s%.*s/data/idx-tiny", prefix, n, slash ? f : ".");
}

void test_fixture_dir(char *buf, size_t len)
{
    fixture_path(buf, len, "");
}

void test_fixture_spec(char *buf, size_t len)
{
    fixture_path(buf, len, "idx:");
}

void test_open_fixture(am_classset **tr, am_classset **te)
{
    char spec[4200], err[512];
    test_fixture_spec(spec, sizeof spec);
    cr_assert_eq(am_classset_open(spec, tr, te, err, sizeof err), AM_OK, "%s", err);
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

void test_expect_usage_error(const char *args, const char *needle)
{
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 2, "amsgd %s: exit %d, expected 2 (stderr: %s)", args, r.status, r.err);
    cr_assert_eq(r.out[0], 0, "amsgd %s: stdout must be empty, got '%s'", args, r.out);
    cr_assert(strncmp(r.err, "amsgd: error: ", 14) == 0, "amsgd %s: stderr '%s'", args, r.err);
    char *nl = strchr(r.err, '\n');
    cr_assert(nl && nl[1] == 0, "amsgd %s: stderr must be one line, got '%s'", args, r.err);
    if (needle)
        cr_assert(strstr(r.err, needle), "amsgd %s: '%s' should mention '%s'", args, r.err, needle);
    test_run_free(&r);
}

void test_expect_flag_error(const char *args, int one_line)
{
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 2, "'%s': status %d", args, r.status);
    cr_assert_eq(r.out[0], 0, "'%s': stdout not empty", args);
    cr_assert(strncmp(r.err, "amsgd: error: --", 16) == 0, "'%s': stderr %s", args, r.err);
    if (one_line)
        cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "'%s': not one line: %s", args,
                     r.err);
    test_run_free(&r);
}
