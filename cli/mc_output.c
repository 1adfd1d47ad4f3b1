/*
 * mc_output.c -- the CSV/JSON writer of an ensemble run (see mc_output.h).
 */
#include "mc_output.h"

#include "../studies/am_sweep.h"
#include "cli_common.h"

/* One observable column of the output: its name and its column in the result. */
typedef struct {
    char name[32];
    size_t col;
} mc_column;

/* The observables in output order: err, norm, [h2_i], [wallclock, clamped]. */
static size_t mc_columns(const am_run_result *r, mc_column *cols, size_t cap)
{
    size_t n = 0;
    for (size_t j = 0; j < r->nobs && n < cap; j++, n++) {
        cols[n].col = j;
        if (j == 0)
            snprintf(cols[n].name, sizeof cols[n].name, "err");
        else if (j == 1)
            snprintf(cols[n].name, sizeof cols[n].name, "norm");
        else if (r->coords && j < 2 + r->dim)
            snprintf(cols[n].name, sizeof cols[n].name, "h2_%zu", j - 1);
        else
            snprintf(cols[n].name, sizeof cols[n].name, "%s",
                     j + 2 == r->nobs ? "wallclock" : "clamped");
    }
    return n;
}

void mc_check_memory(am_status st, const am_run_result *run, int threads)
{
    if (st == AM_ENOMEM && run->memory > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--grid %zu with %zu observables and --threads %d would need %.3g GB, "
                        "above the limit of %.3g GB",
                        run->ngrid, run->nobs, am_ensemble_threads(threads), run->memory / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
}

void mc_write(FILE *f, int json, const char *command, json_t *params, const am_run_result *run)
{
    if (run->diverged && am_sweep_rank() == 0)
        fprintf(stderr,
                "amsgd: warning: %zu of %zu replicas diverged; the means are over the survivors "
                "(column alive), %s where none is left\n",
                run->diverged, run->replicas, json ? "null" : "nan");
    size_t n = run->ngrid, no = run->nobs;
    mc_column *cols = malloc((no ? no : 1) * sizeof *cols);
    if (!cols) cli_runtime_error("out of memory");
    size_t nc = mc_columns(run, cols, no);
    if (!json) {
        json_decref(params);
        fputs("t,step", f);
        for (size_t c = 0; c < nc; c++) {
            fprintf(f, ",%s_mean,%s_sem", cols[c].name, cols[c].name);
            if (c == 1) fputs(",alive", f);
        }
        fputc('\n', f);
        for (size_t g = 0; g < n; g++) {
            cli_csv_double(f, run->t[g]);
            fprintf(f, ",%llu", (unsigned long long)run->step[g]);
            for (size_t c = 0; c < nc; c++) {
                fputc(',', f);
                cli_csv_double(f, run->mean[cols[c].col * n + g]);
                fputc(',', f);
                cli_csv_double(f, run->sem[cols[c].col * n + g]);
                if (c == 1) fprintf(f, ",%zu", run->alive[g]);
            }
            fputc('\n', f);
        }
        free(cols);
        return;
    }
    json_t *root = cli_json_root(command, params);
    json_t *steps = json_array(), *alive = json_array();
    for (size_t g = 0; g < n; g++) {
        json_array_append_new(steps, json_integer((json_int_t)run->step[g]));
        json_array_append_new(alive, json_integer((json_int_t)run->alive[g]));
    }
    json_object_set_new(root, "t", cli_json_doubles(run->t, n));
    json_object_set_new(root, "step", steps);
    json_t *hm = run->coords ? json_array() : NULL, *hs = run->coords ? json_array() : NULL;
    char key[48];
    for (size_t c = 0; c < nc; c++) {
        const double *m = run->mean + cols[c].col * n, *s = run->sem + cols[c].col * n;
        if (run->coords && cols[c].col >= 2 && cols[c].col < 2 + run->dim) {
            json_array_append_new(hm, cli_json_doubles(m, n));
            json_array_append_new(hs, cli_json_doubles(s, n));
            if (cols[c].col + 1 == 2 + run->dim) {
                json_object_set_new(root, "h2_mean", hm);
                json_object_set_new(root, "h2_sem", hs);
            }
            continue;
        }
        snprintf(key, sizeof key, "%s_mean", cols[c].name);
        json_object_set_new(root, key, cli_json_doubles(m, n));
        snprintf(key, sizeof key, "%s_sem", cols[c].name);
        json_object_set_new(root, key, cli_json_doubles(s, n));
    }
    json_object_set_new(root, "alive", alive);
    json_object_set_new(root, "diverged", json_integer((json_int_t)run->diverged));
    json_object_set_new(root, "replicas", json_integer((json_int_t)run->replicas));
    free(cols);
    cli_out_json(f, root);
}
