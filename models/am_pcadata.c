/*
 * am_pcadata.c -- a labelled source's training rows as a data problem (see am_pcadata.h).
 */
#include "am_pcadata.h"

#include <stdio.h>
#include <stdlib.h>

#include "am_classset.h"

am_problem *am_pcadata_problem(const char *spec, size_t project, am_status *status, char *err,
                               size_t errlen)
{
    am_classset *train = NULL, *test = NULL;
    am_status st = am_classset_open(spec, &train, &test, err, errlen);
    am_classset_free(test);
    if (st) {
        *status = st;
        return NULL;
    }
    size_t n = train->n, d = train->d;
    if (project == 1 || project > d) {
        snprintf(err, errlen, "%s: the projection K must be in [2, %zu] (its features), got %zu",
                 spec, d, project);
        am_classset_free(train);
        *status = AM_EINVAL;
        return NULL;
    }
    uint8_t *bytes = train->bytes;
    double *x = train->x;
    train->bytes = NULL; /* the moments take the rows */
    train->x = NULL;
    am_classset_free(train);
    am_datamoments *m = NULL;
    char why[256];
    st = am_datamoments_build(n, d, bytes, x, project, &m, why, sizeof why);
    if (st) {
        snprintf(err, errlen, "%s: %s", spec, why);
        *status = st;
        return NULL;
    }
    am_problem *p = am_problem_alloc_data(m, &st, why, sizeof why);
    if (!p) snprintf(err, errlen, "%s: %s", spec, why);
    *status = st;
    return p;
}
