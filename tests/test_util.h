/*
 * test_util.h -- helpers shared by the Criterion tests: running the amsgd binary and
 * capturing its exit status, stdout and stderr.
 */
#ifndef AM_TEST_UTIL_H
#define AM_TEST_UTIL_H

#include <stddef.h>

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

/* Frees the captured output. */
void test_run_free(test_run *r);

#endif
