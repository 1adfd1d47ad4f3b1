/*
 * wallclock_cli.c -- what the three forms of `amsgd wallclock` share (wallclock_cli.h): the
 * options of the parameter-server runs and the parsing of --variants.
 */
#include "wallclock_cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_common.h"

const cli_opt OPT_WK = {"workers", "P", "8", "learners P >= 1"};
const cli_opt OPT_RT = {"runtime", "DIST", "exp:1",
                        "learner runtime: exp:RATE, shiftexp:DELTA:RATE, "
                        "pareto:ALPHA:SCALE, uniform:A:B, const:C"};
const cli_opt OPT_VARS = {"variants", "LIST",
                          "sync,k-sync:4,k-batch-sync:4,async,k-async:4,k-batch-async:4",
                          "comma list of variants (NAME or NAME:K)"};
const cli_opt OPT_UPD = {"updates", "N", "2000", "server updates per replica"};
const cli_opt OPT_ETA_W = {"eta", "E", "0.02", "step size eta > 0"};
const cli_opt OPT_LMAX = {"lmax", "LMAX", "2", "lsq: largest eigenvalue L of H"};
const cli_opt OPT_LMIN = {"lmin", "LMIN", "0.5", "lsq: smallest eigenvalue c of H"};
const cli_opt OPT_SIGMA = {"sigma", "SIGMA", "0.5", "lsq: noise standard deviation"};
const cli_opt OPT_GRID_W = {"grid", "N", "50", "saved points per curve"};

/* The mean of a statistic, NaN without values. */
double wallclock_cli_mean(const am_stats *s)
{
    return s->n > 0 ? s->mean : NAN;
}

/* Parses the comma list of variants of --variants: NAME or NAME:K, and with allow_div also
 * NAME:P/D (K = max(1, P / D) per worker count); K checked against every P of ps[0..np-1].
 * Exits 2 on a bad entry. */
am_wallclock_sweep_variant *wallclock_cli_variants(const char *vl, const size_t *ps, size_t np,
                                                   int allow_div, size_t *nv_out)
{
    char err[256];
    size_t nv = 0, cap = 1;
    for (const char *c = vl; *c; c++)
        cap += *c == ',';
    am_wallclock_sweep_variant *vars = calloc(cap, sizeof *vars);
    char *copy = strdup(vl), *save = NULL;
    if (!vars || !copy) cli_runtime_error("out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        am_wallclock_sweep_variant *w = &vars[nv++];
        char *div = allow_div ? strstr(tok, ":P/") : NULL;
        if (div) {
            char *end;
            long long d = strtoll(div + 3, &end, 10);
            if (end == div + 3 || *end || d < 1 || d > 100000)
                cli_usage_error("--variants expected NAME:P/D with an integer D >= 1, got '%s'",
                                tok);
            w->k_div = (size_t)d;
            *div = 0;
            if (am_runtime_variant_parse_spec(tok, &w->variant, &w->k, err, sizeof err) == AM_OK)
                cli_usage_error("--variants '%s' takes no K", tok);
            char name[64];
            snprintf(name, sizeof name, "%s:1", tok);
            if (am_runtime_variant_parse_spec(name, &w->variant, &w->k, err, sizeof err))
                cli_usage_error("--variants %s", err);
            *div = ':';
        } else if (am_runtime_variant_parse_spec(tok, &w->variant, &w->k, err, sizeof err)) {
            cli_usage_error("--variants %s", err);
        }
        for (size_t i = 0; i < np; i++) {
            size_t k = am_wallclock_sweep_k(w, ps[i]);
            if (am_runtime_variant_check(w->variant, ps[i], k))
                cli_usage_error("--variants '%s' gives K = %zu, which must be in [1, %zu] (the "
                                "workers)",
                                tok, k, ps[i]);
        }
    }
    free(copy);
    if (nv != cap) cli_usage_error("--variants has an empty entry in '%s'", vl);
    *nv_out = nv;
    return vars;
}

/* The spec of a variant with its K ("k-sync:4", "async"). */
void wallclock_cli_variant_spec(am_variant v, size_t k, char *buf, size_t len)
{
    int takes = v != AM_VARIANT_SYNC && v != AM_VARIANT_ASYNC;
    if (takes)
        snprintf(buf, len, "%s:%zu", am_runtime_variant_name(v), k);
    else
        snprintf(buf, len, "%s", am_runtime_variant_name(v));
}

/* Sets keys[0..n-1] on o, each as cli_json_number. */
void wallclock_cli_json_keys(json_t *o, const wallclock_cli_key *keys, size_t n)
{
    for (size_t k = 0; k < n; k++)
        json_object_set_new(o, keys[k].key, cli_json_number(keys[k].value));
}

/* Writes v[0..n-1] to a CSV row, each followed by a comma. */
void wallclock_cli_csv_values(FILE *f, const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        cli_csv_double(f, v[k]);
        fputc(',', f);
    }
}

/* The last two JSON params of every form: "seed" and "threads". */
void wallclock_cli_json_seed_threads(json_t *params, uint64_t seed, int threads)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    json_object_set_new(params, "seed", json_string(buf));
    json_object_set_new(params, "threads", json_integer(threads));
}
