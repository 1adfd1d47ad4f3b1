/*
 * mc_output.c -- ensemble on a grid, and its CSV/JSON writer (see mc_output.h).
 */
#include "mc_output.h"

#include <stdlib.h>

#include "cli_common.h"

am_status mc_run_model(const am_model *model, double h, const am_grid *grid,
                       const am_ensemble_params *ep, int coords, mc_run *run)
{
    run->ngrid = grid->n;
    run->coords = coords;
    run->wallclock = 0;
    run->res = NULL;
    run->t = malloc(grid->n * sizeof *run->t);
    run->k = malloc(grid->n * sizeof *run->k);
    if (!run->t || !run->k) return AM_ENOMEM;
    am_grid_times(grid, run->t);
    am_status st = am_grid_steps(grid, h, run->k);
    if (st) return st;
    double mem = am_ensemble_memory(model, grid->n, ep);
    if (mem > (double)AM_MEMORY_LIMIT)
        cli_usage_error("--grid %zu with %zu observables and --threads %d would need %.3g GB, "
                        "above the limit of %.3g GB",
                        grid->n, model->nobs, am_ensemble_threads(ep->threads), mem / 1e9,
                        (double)AM_MEMORY_LIMIT / 1e9);
    return am_ensemble_run(model, run->k, grid->n, ep, &run->res);
}

am_status mc_run_ensemble(const am_problem *p, const am_msgd_params *mp, const am_grid *grid,
                          const am_ensemble_params *ep, mc_run *run)
{
    am_status st;
    am_msgd *m = am_msgd_alloc(p, mp, &st);
    if (!m) return st;
    st = mc_run_model(am_msgd_model(m), mp->eta, grid, ep, mp->coords, run);
    am_msgd_free(m);
    return st;
}

void mc_run_free(mc_run *run)
{
    free(run->t);
    free(run->k);
    am_ensemble_result_free(run->res);
}

void mc_write(FILE *f, int json, const char *command, json_t *params, const mc_run *run, size_t dim)
{
    const am_ensemble_result *r = run->res;
    size_t n = run->ngrid, no = r->nobs;
    if (!json) {
        json_decref(params);
        fputs("t,step,err_mean,err_sem,norm_mean,norm_sem,alive", f);
        if (run->coords)
            for (size_t i = 0; i < dim; i++)
                fprintf(f, ",h2_%zu_mean,h2_%zu_sem", i + 1, i + 1);
        if (run->wallclock) fputs(",wallclock_mean,wallclock_sem,clamped_mean,clamped_sem", f);
        fputc('\n', f);
        for (size_t g = 0; g < n; g++) {
            cli_csv_double(f, run->t[g]);
            fprintf(f, ",%llu", (unsigned long long)run->k[g]);
            for (size_t j = 0; j < no; j++) {
                fputc(',', f);
                cli_csv_double(f, r->obs[g * no + j].mean);
                fputc(',', f);
                cli_csv_double(f, am_stats_sem(&r->obs[g * no + j]));
                if (j == 1) fprintf(f, ",%zu", r->alive[g]);
            }
            fputc('\n', f);
        }
        return;
    }
    json_t *root = cli_json_root(command, params);
    double *col = malloc(n * sizeof *col);
    json_t *steps = json_array(), *alive = json_array();
    for (size_t g = 0; g < n; g++) {
        json_array_append_new(steps, json_integer((json_int_t)run->k[g]));
        json_array_append_new(alive, json_integer((json_int_t)r->alive[g]));
    }
    json_object_set_new(root, "t", cli_json_doubles(run->t, n));
    json_object_set_new(root, "step", steps);
    static const char *const names[2][2] = {{"err_mean", "err_sem"}, {"norm_mean", "norm_sem"}};
    for (size_t j = 0; j < 2; j++) {
        for (size_t g = 0; g < n; g++)
            col[g] = r->obs[g * no + j].mean;
        json_object_set_new(root, names[j][0], cli_json_doubles(col, n));
        for (size_t g = 0; g < n; g++)
            col[g] = am_stats_sem(&r->obs[g * no + j]);
        json_object_set_new(root, names[j][1], cli_json_doubles(col, n));
    }
    if (run->coords) {
        json_t *hm = json_array(), *hs = json_array();
        for (size_t i = 0; i < dim; i++) {
            for (size_t g = 0; g < n; g++)
                col[g] = r->obs[g * no + 2 + i].mean;
            json_array_append_new(hm, cli_json_doubles(col, n));
            for (size_t g = 0; g < n; g++)
                col[g] = am_stats_sem(&r->obs[g * no + 2 + i]);
            json_array_append_new(hs, cli_json_doubles(col, n));
        }
        json_object_set_new(root, "h2_mean", hm);
        json_object_set_new(root, "h2_sem", hs);
    }
    if (run->wallclock) {
        static const char *const wn[2][2] = {{"wallclock_mean", "wallclock_sem"},
                                             {"clamped_mean", "clamped_sem"}};
        for (size_t j = 0; j < 2; j++) {
            size_t o = no - 2 + j;
            for (size_t g = 0; g < n; g++)
                col[g] = r->obs[g * no + o].mean;
            json_object_set_new(root, wn[j][0], cli_json_doubles(col, n));
            for (size_t g = 0; g < n; g++)
                col[g] = am_stats_sem(&r->obs[g * no + o]);
            json_object_set_new(root, wn[j][1], cli_json_doubles(col, n));
        }
    }
    json_object_set_new(root, "alive", alive);
    json_object_set_new(root, "diverged", json_integer((json_int_t)r->diverged));
    json_object_set_new(root, "replicas", json_integer((json_int_t)r->replicas));
    free(col);
    cli_out_json(f, root);
}
