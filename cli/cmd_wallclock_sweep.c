/*
 * cmd_wallclock_sweep.c -- `amsgd wallclock --sweep`: the least-squares wallclock study over
 * worker counts, runtime laws and seeds (studies/am_wallclock_sweep.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../studies/am_nnstale.h"
#include "../montecarlo/am_wallclock.h"
#include "../studies/am_wallclock_nn.h"
#include "../studies/am_wallclock_sweep.h"
#include "cli_common.h"
#include "commands.h"
#include "wallclock_cli.h"

static const cli_opt OPT_SW = {"sweep", NULL, NULL,
                               "least squares over --workers-list, --laws and --seeds"};
static const cli_opt OPT_SW_WL = {"workers-list", "LIST", "2,4,8,16", "comma list of P"};
static const cli_opt OPT_SW_LAWS = {"laws", "LIST", "exp:1,shiftexp:1:1,pareto:2.5:1",
                                    "comma list of learner runtime laws (as --runtime)"};
static const cli_opt OPT_SW_VARS = {
    "variants", "LIST", "sync,k-sync:P/2,k-batch-sync:P/2,async,k-async:P/2,k-batch-async:P/2",
    "comma list of NAME, NAME:K or NAME:P/D (K = max(1, P/D) for each P)"};
static const cli_opt OPT_SW_SEEDS = {"seeds", "N", "5",
                                     "seeds per cell (keys seed .. seed + N - 1), N >= 2"};
static const cli_opt OPT_SW_REP = {"replicas", "R", "100", "independent replicas per seed"};
static const cli_opt OPT_SW_QUICK = {
    "quick", NULL, NULL, "a smaller run: --seeds 3 --replicas 50 --updates 1000 (given flags win)"};

static const cli_opt *const wall_sw_opts[] = {
    &OPT_SW,   &OPT_SW_WL,   &OPT_SW_LAWS, &OPT_SW_VARS, &OPT_SW_SEEDS, &OPT_UPD,    &OPT_ETA_W,
    &OPT_DIM,  &OPT_LMAX,    &OPT_LMIN,    &OPT_SIGMA,   &OPT_GRID_W,   &OPT_SW_REP, &OPT_SW_QUICK,
    &OPT_SEED, &OPT_THREADS, &OPT_FORMAT,  &OPT_OUTPUT,  NULL};

/* The flags as parsed: the study's sweep and what the output repeats. */
typedef struct {
    const char *ll, *vl;
    int quick, json;
    am_wallclock_sweep sw;
} ws_config;

/* The number of measured values of a cell (ws_keys). */
#define WS_NKEYS 20

/* --laws: a comma list of runtime laws. */
static am_runtime *ws_laws(const char *ll, size_t *nl_out)
{
    char err[512];
    size_t cap = 1, nl = 0;
    for (const char *c = ll; *c; c++)
        cap += *c == ',';
    am_runtime *laws = calloc(cap, sizeof *laws);
    char *copy = strdup(ll), *save = NULL;
    if (!laws || !copy) cli_runtime_error("out of memory");
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (am_runtime_parse(tok, &laws[nl++], err, sizeof err)) cli_usage_error("--laws %s", err);
    free(copy);
    if (nl != cap) cli_usage_error("--laws has an empty entry in '%s'", ll);
    *nl_out = nl;
    return laws;
}

/* Every flag into c (--quick's values where the flag is not given); exits 2 on bad usage. */
static void ws_parse(const cli_args *a, ws_config *c)
{
    memset(c, 0, sizeof *c);
    const int quick = c->quick = cli_flag(a, "quick");
    size_t nw;
    size_t *ws = cli_size_list(a, "workers-list", 1, 4096, "", &nw);
    c->ll = cli_str(a, "laws");
    am_wallclock_sweep *sw = &c->sw;
    sw->laws = ws_laws(c->ll, &sw->nlaws);
    c->vl = cli_str(a, "variants");
    sw->base = am_wallclock_params_default();
    sw->variants = wallclock_cli_variants(c->vl, ws, nw, 1, &sw->nvariants);
    sw->workers = ws;
    sw->nworkers = nw;
    sw->seeds = quick && !cli_given(a, "seeds") ? 3 : (size_t)cli_int(a, "seeds", 2, 100000);
    am_wallclock_params *b = &sw->base;
    b->updates =
        quick && !cli_given(a, "updates") ? 1000 : (uint64_t)cli_int(a, "updates", 1, 1000000000LL);
    b->eta = cli_double(a, "eta", 0, 1e6, 1, 0);
    b->dim = (size_t)cli_int(a, "dim", 2, 100000);
    b->lmax = cli_double(a, "lmax", 0, 1e12, 1, 0);
    b->lmin = cli_double(a, "lmin", 0, b->lmax, 1, 0);
    b->sigma = cli_double(a, "sigma", 0, 1e12, 0, 0);
    b->ngrid = (size_t)cli_int(a, "grid", 2, 100000);
    b->replicas =
        quick && !cli_given(a, "replicas") ? 50 : (size_t)cli_int(a, "replicas", 2, 100000000LL);
    b->seed = cli_u64(a, "seed");
    b->threads = (int)cli_int(a, "threads", 0, 4096);
    c->json = cli_json(a);
}

/* The measured values of a cell with their standard errors over the seeds, next to the
 * closed forms (the CSV columns after seeds, the JSON keys). */
static void ws_keys(const am_wallclock_sweep_cell *c, wallclock_cli_key keys[WS_NKEYS])
{
    const wallclock_cli_key k[WS_NKEYS] = {
        {"time_per_update", wallclock_cli_mean(&c->time_per_update)},
        {"time_per_update_sem", am_stats_sem(&c->time_per_update)},
        {"time_per_update_dutta", c->time_per_update_dutta},
        {"floor_measured", wallclock_cli_mean(&c->floor_measured)},
        {"floor_measured_sem", am_stats_sem(&c->floor_measured)},
        {"floor_exact", c->floor_exact},
        {"floor_dutta", c->floor_dutta},
        {"floor_dutta_async", wallclock_cli_mean(&c->floor_dutta_async)},
        {"floor_dutta_async_sem", am_stats_sem(&c->floor_dutta_async)},
        {"decay_measured", wallclock_cli_mean(&c->decay_measured)},
        {"decay_measured_sem", am_stats_sem(&c->decay_measured)},
        {"decay_exact", c->decay_exact},
        {"decay_dutta", c->decay_dutta},
        {"decay_dutta_async", wallclock_cli_mean(&c->decay_dutta_async)},
        {"decay_dutta_async_sem", am_stats_sem(&c->decay_dutta_async)},
        {"p0", wallclock_cli_mean(&c->p0)},
        {"p0_sem", am_stats_sem(&c->p0)},
        {"p0_dutta", c->p0_dutta},
        {"gamma", wallclock_cli_mean(&c->gamma)},
        {"gamma_sem", am_stats_sem(&c->gamma)},
    };
    memcpy(keys, k, sizeof k);
}

static void ws_csv(FILE *f, const ws_config *cfg, const am_wallclock_sweep_result *res)
{
    fputs("law,workers,name,variant,K,seeds,time_per_update,time_per_update_sem,"
          "time_per_update_dutta,floor_measured,floor_measured_sem,floor_exact,floor_dutta,"
          "floor_dutta_async,floor_dutta_async_sem,decay_measured,decay_measured_sem,"
          "decay_exact,decay_dutta,decay_dutta_async,decay_dutta_async_sem,p0,p0_sem,"
          "p0_dutta,gamma,gamma_sem,diverged\n",
          f);
    for (size_t q = 0; q < res->ncells; q++) {
        const am_wallclock_sweep_cell *c = &res->cells[q];
        char law[128], spec[64];
        am_runtime_format(&cfg->sw.laws[c->law], law, sizeof law);
        wallclock_cli_variant_spec(c->variant, c->k, spec, sizeof spec);
        wallclock_cli_key keys[WS_NKEYS];
        ws_keys(c, keys);
        fprintf(f, "%s,%zu,%s,%s,%zu,%zu,", law, c->workers, am_runtime_variant_name(c->variant),
                spec, c->batch, cfg->sw.seeds);
        for (size_t k = 0; k < WS_NKEYS; k++) {
            cli_csv_double(f, keys[k].value);
            fputc(',', f);
        }
        fprintf(f, "%zu\n", c->diverged);
    }
}

/* The cells as a JSON array. */
static json_t *ws_json_cells(const ws_config *cfg, const am_wallclock_sweep_result *res)
{
    json_t *arr = json_array();
    for (size_t q = 0; q < res->ncells; q++) {
        const am_wallclock_sweep_cell *c = &res->cells[q];
        char law[128], spec[64];
        am_runtime_format(&cfg->sw.laws[c->law], law, sizeof law);
        wallclock_cli_variant_spec(c->variant, c->k, spec, sizeof spec);
        wallclock_cli_key keys[WS_NKEYS];
        ws_keys(c, keys);
        json_t *o = json_object();
        json_object_set_new(o, "law", json_string(law));
        json_object_set_new(o, "workers", json_integer((json_int_t)c->workers));
        json_object_set_new(o, "name", json_string(am_runtime_variant_name(c->variant)));
        json_object_set_new(o, "variant", json_string(spec));
        json_object_set_new(o, "K", json_integer((json_int_t)c->batch));
        json_object_set_new(o, "seeds", json_integer((json_int_t)cfg->sw.seeds));
        wallclock_cli_json_keys(o, keys, WS_NKEYS);
        json_object_set_new(o, "diverged", json_integer((json_int_t)c->diverged));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The JSON params: every option as resolved. */
static json_t *ws_json_params(const cli_args *a, const ws_config *c)
{
    const am_wallclock_params *b = &c->sw.base;
    json_t *params = json_object();
    json_object_set_new(params, "sweep", json_true());
    json_object_set_new(params, "workers_list", json_string(cli_str(a, "workers-list")));
    json_object_set_new(params, "laws", json_string(c->ll));
    json_object_set_new(params, "variants", json_string(c->vl));
    json_object_set_new(params, "seeds", json_integer((json_int_t)c->sw.seeds));
    json_object_set_new(params, "updates", json_integer((json_int_t)b->updates));
    json_object_set_new(params, "eta", json_real(b->eta));
    json_object_set_new(params, "dim", json_integer((json_int_t)b->dim));
    json_object_set_new(params, "lmax", json_real(b->lmax));
    json_object_set_new(params, "lmin", json_real(b->lmin));
    json_object_set_new(params, "sigma", json_real(b->sigma));
    json_object_set_new(params, "grid", json_integer((json_int_t)b->ngrid));
    json_object_set_new(params, "replicas", json_integer((json_int_t)b->replicas));
    json_object_set_new(params, "quick", json_boolean(c->quick));
    wallclock_cli_json_seed_threads(params, b->seed, b->threads);
    return params;
}

/* Writes the result (CSV or JSON) through --output. */
static void ws_write(const cli_args *a, const ws_config *c, const am_wallclock_sweep_result *res)
{
    cli_out out;
    FILE *f = cli_out_begin(&out, a);
    if (c->json) {
        json_t *root = cli_json_root("wallclock", ws_json_params(a, c));
        /* what the sweep fixes (not options of --sweep: `amsgd rerun` reads only params) */
        json_t *info = json_object();
        json_object_set_new(info, "objective", json_string("lsq"));
        json_object_set_new(info, "lr", json_string("const"));
        json_object_set_new(root, "resolved", info);
        json_object_set_new(root, "cells", ws_json_cells(c, res));
        cli_out_json(f, root);
    } else {
        ws_csv(f, c, res);
    }
    cli_out_commit(&out);
}

int cmd_wallclock_sweep(int argc, char **argv)
{
    cli_args a;
    cli_parse(&a, "wallclock",
              "With --sweep: the least-squares wallclock study for every P of --workers-list,\n"
              "every runtime law of --laws and --seeds seeds. Prints per (law, P, variant) the\n"
              "measured time per update, error floor, decay, fresh fraction p0 and drift gamma\n"
              "with their standard errors over the seeds, next to Dutta et al.'s time per\n"
              "update, the exact fresh-gradient floor, the K-sync floor and the async bound\n"
              "(docs/wallclock.md).",
              wall_sw_opts, argc, argv);
    ws_config c;
    ws_parse(&a, &c);
    char err[512];
    am_wallclock_sweep_result res;
    am_status st = am_wallclock_sweep_run(&c.sw, &res, err, sizeof err);
    if (st == AM_EINVAL) cli_usage_error("wallclock --sweep: %s", err);
    if (st) cli_runtime_error("wallclock --sweep: %s", err);
    ws_write(&a, &c, &res);
    am_wallclock_sweep_result_free(&res);
    free((void *)c.sw.variants);
    free((void *)c.sw.laws);
    free((void *)c.sw.workers);
    return 0;
}
