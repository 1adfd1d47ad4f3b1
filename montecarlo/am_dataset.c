/*
 * am_dataset.c -- CSV reading and synthetic generation of the data sets of am_dataset.h.
 */
#include "am_dataset.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/am_rng.h"

void am_dataset_free(am_dataset *ds)
{
    if (!ds) return;
    free(ds->a);
    free(ds->y);
    free(ds);
}

/* Parses one field (surrounding blanks allowed); 0 on success. */
static int field_num(const char *s, size_t len, double *x)
{
    while (len && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
        len--;
    if (!len || len > 200) return 1;
    char buf[256];
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    *x = strtod(buf, &end);
    return *end || errno == ERANGE || !isfinite(*x);
}

static int blank(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n') return 0;
    return 1;
}

am_status am_dataset_read_csv(const char *path, am_dataset **out, char *err, size_t errlen)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return AM_EIO;
    }
    am_status st = AM_OK;
    char *line = NULL;
    size_t cap = 0, n = 0, ncols = 0, valcap = 0, lineno = 0;
    double *vals = NULL;
    ssize_t len;
    int first = 1;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (blank(line) || line[0] == '#') continue;
        if (strlen(line) != (size_t)len) {
            snprintf(err, errlen, "%s: line %zu contains a NUL byte", path, lineno);
            st = AM_EINVAL;
            goto done;
        }
        size_t cols = 1;
        for (char *p = line; *p; p++)
            cols += *p == ',';
        if (first) {
            /* a header only when no field is a number: a first data row with a typo is an
               error below, not silently dropped as a header */
            first = 0;
            int any_num = 0;
            const char *p = line;
            for (size_t c = 0; c < cols; c++) {
                size_t flen = strcspn(p, ",\n");
                double x;
                any_num |= !field_num(p, flen, &x);
                p += flen + (p[flen] == ',');
            }
            if (!any_num) continue; /* header */
        }
        if (ncols == 0) {
            if (cols < 2) {
                snprintf(err, errlen, "%s: line %zu has %zu field, need features and a label", path,
                         lineno, cols);
                st = AM_EINVAL;
                goto done;
            }
            ncols = cols;
        } else if (cols != ncols) {
            snprintf(err, errlen, "%s: line %zu has %zu fields, expected %zu", path, lineno, cols,
                     ncols);
            st = AM_EINVAL;
            goto done;
        }
        if ((n + 1) * ncols > valcap) {
            valcap = valcap ? 2 * valcap : 64 * ncols;
            if (valcap * sizeof(double) > AM_MEMORY_LIMIT) {
                snprintf(err, errlen, "%s: too large", path);
                st = AM_ENOMEM;
                goto done;
            }
            double *nv = realloc(vals, valcap * sizeof *vals);
            if (!nv) {
                snprintf(err, errlen, "%s: out of memory", path);
                st = AM_ENOMEM;
                goto done;
            }
            vals = nv;
        }
        char *p = line;
        for (size_t c = 0; c < ncols; c++) {
            size_t flen = strcspn(p, ",\n");
            if (field_num(p, flen, &vals[n * ncols + c])) {
                snprintf(err, errlen, "%s: line %zu, column %zu: '%.*s' is not a finite number",
                         path, lineno, c + 1, (int)(flen > 40 ? 40 : flen), p);
                st = AM_EINVAL;
                goto done;
            }
            if (fabs(vals[n * ncols + c]) > AM_DATASET_VALUE_MAX) {
                snprintf(err, errlen,
                         "%s: line %zu, column %zu: %.3g exceeds %.0e in magnitude (the "
                         "objective would overflow)",
                         path, lineno, c + 1, vals[n * ncols + c], AM_DATASET_VALUE_MAX);
                st = AM_EINVAL;
                goto done;
            }
            p += flen + 1;
        }
        n++;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        st = AM_EIO;
        goto done;
    }
    if (n == 0) {
        snprintf(err, errlen, "%s: no data rows", path);
        st = AM_EINVAL;
        goto done;
    }
    {
        int nonzero = 0;
        for (size_t i = 0; i < n && !nonzero; i++)
            for (size_t c = 0; c + 1 < ncols; c++)
                nonzero |= vals[i * ncols + c] != 0;
        if (!nonzero) {
            snprintf(err, errlen, "%s: every feature is 0 (the objective would not depend on x)",
                     path);
            st = AM_EINVAL;
            goto done;
        }
    }
    am_dataset *ds = calloc(1, sizeof *ds);
    if (ds) {
        ds->n = n;
        ds->d = ncols - 1;
        ds->a = malloc(n * ds->d * sizeof *ds->a);
        ds->y = malloc(n * sizeof *ds->y);
    }
    if (!ds || !ds->a || !ds->y) {
        am_dataset_free(ds);
        snprintf(err, errlen, "%s: out of memory", path);
        st = AM_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(ds->a + i * ds->d, vals + i * ncols, ds->d * sizeof *ds->a);
        ds->y[i] = vals[i * ncols + ds->d];
    }
    *out = ds;
done:
    free(line);
    free(vals);
    fclose(f);
    return st;
}

am_status am_dataset_synthetic(am_synth_kind kind, size_t n, size_t d, uint64_t seed,
                               am_dataset **out)
{
    *out = NULL;
    if (n < 1 || d < 1 || (kind == AM_SYNTH_PCA && d < 2)) return AM_EINVAL;
    if ((double)n * (double)d * 8.0 > (double)AM_MEMORY_LIMIT) return AM_ENOMEM;
    am_dataset *ds = calloc(1, sizeof *ds);
    double *xs = malloc(d * sizeof *xs);
    if (ds) {
        ds->n = n;
        ds->d = d;
        ds->a = malloc(n * d * sizeof *ds->a);
        ds->y = malloc(n * sizeof *ds->y);
    }
    if (!ds || !xs || !ds->a || !ds->y) {
        am_dataset_free(ds);
        free(xs);
        return AM_ENOMEM;
    }
    am_rng r;
    am_rng_init(&r, seed, AM_REPLICA_SHARED, AM_STREAM_DATASET, 0);
    for (size_t j = 0; j < d; j++)
        xs[j] = am_rng_gaussian(&r);
    for (size_t i = 0; i < n; i++) {
        am_rng_seek(&r, i + 1);
        double z = 0;
        for (size_t j = 0; j < d; j++) {
            double g = am_rng_gaussian(&r);
            if (kind == AM_SYNTH_PCA) g *= sqrt(4.0 - 3.0 * (double)j / (double)(d - 1));
            ds->a[i * d + j] = g;
            z += g * xs[j];
        }
        switch (kind) {
        case AM_SYNTH_LSQ:
            ds->y[i] = z + 0.5 * am_rng_gaussian(&r);
            break;
        case AM_SYNTH_LOGISTIC:
            ds->y[i] = am_rng_uniform(&r) < 1.0 / (1.0 + exp(-z));
            break;
        case AM_SYNTH_PCA:
            ds->y[i] = 0;
            break;
        }
    }
    free(xs);
    *out = ds;
    return AM_OK;
}
