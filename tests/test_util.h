/*
 * test_util.h -- helpers shared by the Criterion tests: running the amsgd binary and
 * capturing its exit status, stdout and stderr; reading and writing small files; the IDX
 * fixture tests/data/idx-tiny.
 */
#ifndef AM_TEST_UTIL_H
#define AM_TEST_UTIL_H

#include <stddef.h>

#include <jansson.h>

#include "../models/am_classset.h"

typedef struct {
    int status; /* exit status, or -1 if it did not exit normally */
    char *out;  /* stdout (NUL-terminated, malloc'd) */
    char *err;  /* stderr */
} test_run;

/* Runs "$AMSGD args" (args: a shell-quoted argument string) and captures everything. */
test_run test_amsgd(const char *args);

/* Asserts the contract for bad input: exit status 2, nothing on stdout, one line on stderr
 * starting "amsgd: error: " and mentioning needle (unless NULL). */
void test_expect_usage_error(const char *args, const char *needle);

/* Asserts the contract for a bad flag value: exit status 2, nothing on stdout, stderr starting
 * "amsgd: error: --" (the flag is named first) and, when one_line, one line. */
void test_expect_flag_error(const char *args, int one_line);

/* Frees the captured output. */
void test_run_free(test_run *r);

/* Runs "$AMSGD args", asserts exit status want_status and that stdout is JSON, and returns
 * the parsed root (json_decref it). */
json_t *test_amsgd_json(const char *args, int want_status);

/* The whole file at path, NUL-terminated and malloc'd; NULL when it cannot be opened. */
char *test_read_file(const char *path);

/* Writes text to path (replacing it); asserts that the file could be opened. */
void test_write_file(const char *path, const char *text);

/* The directory tests/data/idx-tiny (written by tests/data/make-idx-fixture.py) into buf,
 * and the data spec "idx:" followed by that directory. */
void test_fixture_dir(char *buf, size_t len);
void test_fixture_spec(char *buf, size_t len);

/* Opens the fixture's training and test sets (asserts success). */
void test_open_fixture(am_classset **tr, am_classset **te);

#endif
