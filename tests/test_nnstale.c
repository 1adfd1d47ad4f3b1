/*
 * test_nnstale.c -- Dai et al.'s protocol on networks (studies/am_nnstale.h): the ring and the
 * update order against a direct re-implementation that keeps every snapshot, the averaged
 * variant, thread invariance of the sweep, memory refusal, and `amsgd staleness --model` on
 * the committed IDX fixture.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../core/am_rng.h"
#include "../models/am_classset.h"
#include "../models/am_nn.h"
#include "../montecarlo/am_optim.h"
#include "../studies/am_nnstale.h"
#include "test_util.h"

/*
 * The protocol written directly from its definition, keeping every snapshot theta^(0..K):
 * iteration k, worker j: r = word % (s + 1) clamped to k, B rows word % n, gradient at
 * theta^(k - r); SSP applies the P updates to theta^(k) one after another, averaged applies
 * their mean once. wrong = 1 computes the gradients on the running parameters instead (a
 * deliberately wrong semantics the comparison must reject).
 */
static void reference(const am_nn *net, const am_optim_params *op, size_t P, size_t s, size_t B,
                      int averaged, size_t iters, const am_classset *tr, uint64_t seed,
                      uint64_t replica, int wrong, double *theta_out)
{
    size_t dim = am_nn_dim(net);
    double *snap = malloc((iters + 1) * dim * sizeof *snap), *g = malloc(dim * sizeof *g),
           *sum = malloc(dim * sizeof *sum);
    am_status st;
    am_nn_work *w = am_nn_work_alloc(net, B, &st);
    am_optim *o = am_optim_alloc(op, dim, &st);
    am_nn_init(net, seed, replica, snap);
    size_t *idx = malloc(B * sizeof *idx);
    for (size_t k = 0; k < iters; k++) {
        double *next = snap + (k + 1) * dim;
        memcpy(next, snap + k * dim, dim * sizeof *next);
        am_rng r;
        am_rng_init(&r, seed, replica, AM_STREAM_NNSTALE, k);
        for (size_t j = 0; j < P; j++) {
            size_t st_k = (size_t)(am_rng_u64(&r) % (s + 1));
            if (st_k > k) st_k = k;
            for (size_t i = 0; i < B; i++)
                idx[i] = (size_t)(am_rng_u64(&r) % tr->n);
            am_classset_gather(tr, idx, B, am_nn_work_x(w), am_nn_work_y(w));
            const double *at = wrong ? next : snap + (k - st_k) * dim;
            am_nn_loss_grad(net, w, at, am_nn_work_x(w), am_nn_work_y(w), B, g);
            if (!averaged) {
                am_optim_step(o, next, g);
            } else {
                for (size_t i = 0; i < dim; i++)
                    sum[i] = (j ? sum[i] : 0.0) + g[i];
            }
        }
        if (averaged) {
            for (size_t i = 0; i < dim; i++)
                sum[i] *= 1.0 / (double)P;
            am_optim_step(o, next, sum);
        }
    }
    memcpy(theta_out, snap + iters * dim, dim * sizeof *theta_out);
    free(idx);
    am_optim_free(o);
    am_nn_work_free(w);
    free(snap);
    free(g);
    free(sum);
}

static void compare_with_reference(const char *spec, am_optim_kind kind, size_t P, size_t s,
                                   int averaged)
{
    am_nn_blas_single_thread();
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    char err[256];
    am_status st;
    am_nn *net = am_nn_alloc(spec, tr->d, tr->classes, &st, err, sizeof err);
    cr_assert_not_null(net, "%s", err);
    size_t dim = am_nn_dim(net);
    const size_t iters = 13, B = 4;
    am_nnstale_params p = am_nnstale_params_default();
    p.workers = P;
    p.s = s;
    p.batch = B;
    p.semantics = averaged ? AM_NNSTALE_AVERAGED : AM_NNSTALE_SSP;
    p.target = 0.999999; /* 10 test rows: never reached */
    p.max_batches = iters * P;
    p.eval_every = 3;
    p.seed = 5;
    am_optim_params op = am_optim_params_default(kind);
    op.lr = 0.05;
    double *t1 = malloc(dim * sizeof *t1), *t2 = malloc(dim * sizeof *t2);
    am_nnstale_outcome u;
    cr_assert_eq(am_nnstale_run_one(net, &op, &p, tr, te, 2, &u, t1), AM_OK);
    cr_expect(!u.reached && !u.diverged && isfinite(u.test_accuracy), "%s: run flags", spec);
    reference(net, &op, P, s, B, averaged, iters, tr, 5, 2, 0, t2);
    cr_expect(memcmp(t1, t2, dim * sizeof *t1) == 0,
              "%s %s P %zu s %zu %s: ring differs from the snapshot re-implementation", spec,
              am_optim_name(kind), P, s, averaged ? "averaged" : "ssp");
    if (s > 0 || P > 1) { /* the wrong semantics differs, so the comparison can fail */
        reference(net, &op, P, s, B, averaged, iters, tr, 5, 2, 1, t2);
        cr_expect(memcmp(t1, t2, dim * sizeof *t1) != 0,
                  "%s P %zu s %zu: gradients at the running parameters are not told apart", spec, P,
                  s);
    }
    free(t1);
    free(t2);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

Test(nnstale, ssp_matches_definition)
{
    compare_with_reference("mlr", AM_OPT_SGD, 1, 0, 0);
    compare_with_reference("mlr", AM_OPT_SGD, 3, 2, 0);
    compare_with_reference("mlp:5", AM_OPT_MOMENTUM, 2, 4, 0);
    compare_with_reference("mlp:4,3", AM_OPT_ADAM, 4, 1, 0);
}

Test(nnstale, averaged_matches_definition)
{
    compare_with_reference("mlr", AM_OPT_SGD, 3, 2, 1);
    compare_with_reference("mlp:5", AM_OPT_RMSPROP, 2, 3, 1);
}

/* Dai et al.'s gradient coherence at the one evaluation of a run (after iteration 13 of
 * P = 2, s = 3), against its definition on the snapshots of the direct re-implementation:
 * mu = min over j = 10..13 of <G_13, G_j> / |G_13|^2, G the gradient over the training set;
 * the lag-s cosine of the same run is another number, so the comparison can fail. */
Test(nnstale, dai_coherence_matches_definition)
{
    am_nn_blas_single_thread();
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    char err[256];
    am_status st;
    am_nn *net = am_nn_alloc("mlp:4", tr->d, tr->classes, &st, err, sizeof err);
    cr_assert_not_null(net, "%s", err);
    const size_t dim = am_nn_dim(net), P = 2, s = 3, iters = 13, B = 4;
    am_nnstale_params p = am_nnstale_params_default();
    p.workers = P;
    p.s = s;
    p.batch = B;
    p.target = 0.999999;
    p.max_batches = iters * P;
    p.eval_every = iters * P; /* one evaluation, after the last iteration */
    p.coherence_rows = 0;
    p.dai_coherence = 1;
    p.seed = 5;
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    op.lr = 0.3;
    am_nnstale_outcome u;
    cr_assert_eq(am_nnstale_run_one(net, &op, &p, tr, te, 2, &u, NULL), AM_OK);
    double *th = malloc(dim * sizeof *th), *g0 = malloc(dim * sizeof *g0),
           *g = malloc(dim * sizeof *g);
    am_nn_work *w = am_nn_work_alloc(net, 256, &st);
    reference(net, &op, P, s, B, 0, iters, tr, 5, 2, 0, th);
    am_nn_set_grad(net, w, th, tr, 0, tr->n, g0);
    double gg = 0, mu = INFINITY;
    for (size_t i = 0; i < dim; i++)
        gg += g0[i] * g0[i];
    for (size_t j = iters - s; j <= iters; j++) {
        reference(net, &op, P, s, B, 0, j, tr, 5, 2, 0, th);
        am_nn_set_grad(net, w, th, tr, 0, tr->n, g);
        double ab = 0;
        for (size_t i = 0; i < dim; i++)
            ab += g0[i] * g[i];
        mu = fmin(mu, ab / gg);
    }
    cr_expect(fabs(u.dai_coherence - mu) <= 1e-12 * fmax(1, fabs(mu)),
              "Dai coherence %.17g, definition %.17g", u.dai_coherence, mu);
    cr_expect(u.dai_coherence_min == u.dai_coherence, "one evaluation: min %g, mean %g",
              u.dai_coherence_min, u.dai_coherence);
    cr_expect(mu < 1 && fabs(u.coherence - mu) > 1e-3,
              "the lag-s cosine %g is not told apart from Dai's %g", u.coherence, mu);
    free(th);
    free(g0);
    free(g);
    am_nn_work_free(w);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

/* A learnable set written to /tmp/amsgd_TAG_PID.csv and opened (the file is removed): 60 rows,
 * 3 separated classes, test split = training rows. */
/* Writes that set to /tmp/amsgd_TAG_PID.csv; its name goes to path[64]. */
static void write_three_classes(const char *tag, char *path)
{
    snprintf(path, 64, "/tmp/amsgd_%s_%d.csv", tag, (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 60; i++)
        fprintf(f, "%.6f,%.6f,%d\n", 2.0 * (i % 3) + 0.4 * sin(i),
                -1.0 * (i % 3) + 0.4 * cos(1.7 * i), i % 3);
    fclose(f);
}

static void open_three_classes(const char *tag, am_classset **tr, am_classset **te)
{
    char path[64], err[256];
    write_three_classes(tag, path);
    cr_assert_eq(am_classset_open(path, tr, te, err, sizeof err), AM_OK, "%s", err);
    unlink(path);
}

/* The sweep gives the same bits on 1 and 2 threads; s = 0 has coherence 1, normalized 1. */
Test(nnstale, sweep_thread_invariant)
{
    char err[256];
    am_classset *tr, *te;
    open_three_classes("nns", &tr, &te);
    am_status st;
    am_nn *net = am_nn_alloc("mlp:6", tr->d, tr->classes, &st, err, sizeof err);
    am_optim_params ops[2] = {am_optim_params_default(AM_OPT_SGD),
                              am_optim_params_default(AM_OPT_ADAGRAD)};
    ops[0].lr = 0.1;
    ops[1].lr = 0.05;
    const size_t s[2] = {2, 0}, workers[2] = {1, 3};
    am_nnstale_params bp = am_nnstale_params_default();
    bp.batch = 4;
    bp.target = 0.9;
    bp.max_batches = 600;
    bp.eval_every = 6;
    am_nnstale_sweep sw = {2, ops, 2, s, 2, workers, 3, bp, 1};
    am_nnstale_result *r1, *r2;
    cr_assert_eq(am_nnstale_run(&sw, net, tr, te, &r1), AM_OK);
    sw.threads = 2;
    cr_assert_eq(am_nnstale_run(&sw, net, tr, te, &r2), AM_OK);
    cr_assert_eq(r1->ncells, 8);
    size_t reached = 0;
    for (size_t c = 0; c < r1->ncells; c++) {
        const am_nnstale_cell *a = &r1->cells[c], *b = &r2->cells[c];
        cr_expect(memcmp(a->runs, b->runs, 3 * sizeof *a->runs) == 0 &&
                      memcmp(&a->steps, &b->steps, sizeof a->steps) == 0,
                  "cell %zu differs between 1 and 2 threads", c);
        reached += a->reached;
        if (a->s == 0) {
            cr_expect(a->coherence.n == 0 || a->coherence.mean == 1.0, "s = 0 coherence %g",
                      a->coherence.mean);
            cr_expect(a->normalized.n == a->reached &&
                          (a->normalized.n == 0 || a->normalized.mean == 1.0),
                      "s = 0 normalized %g", a->normalized.mean);
        } else {
            for (size_t k = 0; k < 3; k++) {
                double c0 = a->runs[k].coherence;
                cr_expect(isnan(c0) || (c0 >= -1 - 1e-12 && c0 <= 1 + 1e-12),
                          "coherence %g outside [-1, 1]", c0);
            }
        }
    }
    cr_expect_gt(reached, 0, "no cell reached the target: the test checks nothing");
    am_nnstale_result_free(r1);
    am_nnstale_result_free(r2);
    am_nnstale_result_free(NULL);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

/* The grid search returns a step of its grid whose score (mean batches to target, 2 max_batches
 * when not reached) is no worse than the starting step's. */
Test(nnstale, tune_picks_from_grid)
{
    char err[256];
    am_classset *tr, *te;
    open_three_classes("nnt", &tr, &te);
    am_status st;
    am_nn *net = am_nn_alloc("mlr", tr->d, tr->classes, &st, err, sizeof err);
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    op.lr = 0.001; /* too small: the grid must move up */
    am_nnstale_params p = am_nnstale_params_default();
    p.batch = 4;
    p.target = 0.9;
    p.max_batches = 400;
    p.eval_every = 4;
    double best;
    cr_assert_eq(am_nnstale_tune(net, &op, &p, 2, 1, tr, te, &best), AM_OK);
    double j = 2 * log10(best / op.lr);
    cr_expect(fabs(j - round(j)) < 1e-9 && j >= -4 - 1e-9 && j <= 4 + 1e-9,
              "best %g is not lr0 10^(j/2), j in -4..4", best);
    double score[2] = {0, 0};
    for (int v = 0; v < 2; v++) {
        am_optim_params o = op;
        o.lr = v ? best : op.lr;
        for (uint64_t k = 0; k < 2; k++) {
            am_nnstale_outcome u;
            cr_assert_eq(am_nnstale_run_one(net, &o, &p, tr, te, k, &u, NULL), AM_OK);
            score[v] += u.reached ? u.batches : 2.0 * (double)p.max_batches;
        }
    }
    cr_expect(score[1] <= score[0] && best > op.lr, "tuned %g scores %g, lr0 %g scores %g", best,
              score[1], op.lr, score[0]);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

Test(nnstale, memory_and_inputs_checked)
{
    am_classset *tr, *te;
    test_open_fixture(&tr, &te);
    char err[256];
    am_status st;
    am_nn *net = am_nn_alloc("mlp:1000,1000", tr->d, tr->classes, &st, err, sizeof err);
    am_optim_params op = am_optim_params_default(AM_OPT_SGD);
    am_nnstale_params p = am_nnstale_params_default();
    p.s = 1000001; /* above the bound on s */
    am_nnstale_outcome u;
    cr_expect_eq(am_nnstale_run_one(net, &op, &p, tr, te, 0, &u, NULL), AM_EINVAL);
    p.s = 999999; /* a million snapshots of a million parameters: 8 TB */
    cr_expect_eq(am_nnstale_run_one(net, &op, &p, tr, te, 0, &u, NULL), AM_ENOMEM);
    p = am_nnstale_params_default();
    p.target = 1.0;
    cr_expect_eq(am_nnstale_run_one(net, &op, &p, tr, te, 0, &u, NULL), AM_EINVAL);
    am_nn_free(net);
    net = am_nn_alloc("mlr", 41, 10, &st, err, sizeof err); /* wrong input size */
    p = am_nnstale_params_default();
    cr_expect_eq(am_nnstale_run_one(net, &op, &p, tr, te, 0, &u, NULL), AM_EINVAL);
    am_nn_free(net);
    am_classset_free(tr);
    am_classset_free(te);
}

Test(nnstale, cli_json_and_errors)
{
    char spec[4200], args[8192];
    test_fixture_spec(spec, sizeof spec);
    snprintf(args, sizeof args,
             "staleness --model mlp:4 --data '%s' --optimizer sgd,adam --s 0,2 --workers 1,2 "
             "--batch 4 --seeds 2 --max-batches 200 --eval-every 10 --target-accuracy 0.3 "
             "--threads 2 --format json",
             spec);
    test_run r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    json_error_t je;
    json_t *root = json_loads(r.out, 0, &je);
    cr_assert_not_null(root, "not JSON: %s", je.text);
    cr_expect_str_eq(json_string_value(json_object_get(root, "command")), "staleness");
    json_t *params = json_object_get(root, "params");
    cr_expect_eq(json_integer_value(json_object_get(params, "seeds")), 2);
    cr_expect_str_eq(json_string_value(json_object_get(params, "semantics")), "ssp");
    json_t *res = json_object_get(root, "results");
    cr_assert_eq(json_array_size(res), 8, "2 optimisers x 2 P x 2 s");
    const char *keys[] = {"test_accuracy",
                          "steps_to_target",
                          "normalized",
                          "coherence",
                          "seeds",
                          "workers",
                          "s",
                          "optimizer",
                          "lr",
                          "reached"};
    for (size_t i = 0; i < json_array_size(res); i++)
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            cr_expect_not_null(json_object_get(json_array_get(res, i), keys[k]),
                               "result %zu lacks %s", i, keys[k]);
    cr_expect_eq(json_array_size(json_object_get(json_array_get(res, 0), "seeds")), 2);
    json_decref(root);
    /* --coherence-trace: one cosine per evaluation, at multiples of --eval-every (P = 1),
     * each in [-1, 1]; none for s = 0 */
    {
        char targs[8400];
        snprintf(targs, sizeof targs, "%s --coherence-trace", args);
        test_run t = test_amsgd(targs);
        cr_assert_eq(t.status, 0, "%s", t.err);
        json_t *tj = json_loads(t.out, 0, &je);
        cr_assert_not_null(tj);
        json_t *rs = json_object_get(tj, "results");
        size_t ntr = 0;
        for (size_t i = 0; i < json_array_size(rs); i++) {
            json_t *cell = json_array_get(rs, i);
            json_t *seed0 = json_array_get(json_object_get(cell, "seeds"), 0);
            json_t *tr = json_object_get(seed0, "coherence_trace");
            json_t *bt = json_object_get(tr, "batches"), *cs = json_object_get(tr, "cosine");
            cr_assert(tr && json_array_size(bt) == json_array_size(cs), "cell %zu: trace", i);
            long long s = json_integer_value(json_object_get(cell, "s"));
            long long P = json_integer_value(json_object_get(cell, "workers"));
            if (s == 0) cr_expect_eq(json_array_size(bt), 0, "s = 0 has a trace");
            for (size_t k = 0; k < json_array_size(bt); k++) {
                double b = json_number_value(json_array_get(bt, k));
                double c = json_number_value(json_array_get(cs, k));
                cr_expect(P != 1 || fmod(b, 10) == 0, "evaluation at %g batches", b);
                cr_expect(c >= -1 - 1e-12 && c <= 1 + 1e-12, "cosine %g", c);
                ntr++;
            }
        }
        cr_expect_gt(ntr, 0, "no trace at all");
        json_decref(tj);
        test_run_free(&t);
    }
    /* the same run on one thread prints the same bytes */
    char *first = strdup(r.out);
    test_run_free(&r);
    char *p = strstr(args, "--threads 2");
    p[10] = '1';
    r = test_amsgd(args);
    char *a = strstr(first, "\"results\""), *b = strstr(r.out, "\"results\"");
    cr_expect(a && b && strcmp(a, b) == 0, "results differ between 1 and 2 threads");
    free(first);
    test_run_free(&r);
    /* CSV: the spec is one quoted field */
    snprintf(args, sizeof args,
             "staleness --model mlp:3,2 --data '%s' --optimizer sgd --s 0 --batch 4 --seeds 1 "
             "--max-batches 20 --eval-every 10 --target-accuracy 0.5",
             spec);
    r = test_amsgd(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *row = strchr(r.out, '\n');
    cr_expect(row && strncmp(row + 1, "\"mlp:3,2\",sgd,1,0,ssp,", 22) == 0, "CSV row: %s",
              row ? row + 1 : "(none)");
    test_run_free(&r);
    test_expect_usage_error("staleness --model rnn", "unknown model 'rnn'");
    snprintf(args, sizeof args, "staleness --model cnn --data '%s'", spec);
    test_expect_usage_error(args, "at least 16 x 16 pixels"); /* the fixture is 6 x 7 */
    test_expect_usage_error("staleness --model mlr --data idx:/nonexistent/dir", "/nonexistent");
    test_expect_usage_error("staleness --model mlr --data idx:/nonexistent/dir",
                            "train-images-idx3-ubyte");
    test_expect_usage_error("staleness --model=mlp:0", "hidden widths");
    test_expect_usage_error("staleness --model mlr --semantics async", "--semantics");
}

/* ---- --preset dai2019 ------------------------------------------------------------------ */

/* The cell list of `--list-cells` built from the lists as docs/staleness.md documents them:
 * P outermost, then the model, then the optimiser, then s. */
static char *documented_cells(size_t nw, const size_t *w, size_t nm, const char *const *m,
                              const char *const *spec, const double *target, size_t no,
                              const char *const *o, size_t ns, const size_t *s, size_t seeds)
{
    size_t cap = 256 + nw * nm * no * ns * 128, len = 0, cell = 0;
    char *buf = malloc(cap);
    len +=
        (size_t)snprintf(buf, cap, "cell,workers,model,spec,optimizer,s,seeds,target_accuracy\n");
    for (size_t a = 0; a < nw; a++)
        for (size_t b = 0; b < nm; b++)
            for (size_t c = 0; c < no; c++, cell++)
                for (size_t d = 0; d < ns; d++)
                    len +=
                        (size_t)snprintf(buf + len, cap - len, "%zu,%zu,%s,\"%s\",%s,%zu,%zu,%g\n",
                                         cell, w[a], m[b], spec[b], o[c], s[d], seeds, target[b]);
    return buf;
}

Test(nnstale, preset_expands_to_documented_cells)
{
    const size_t w[] = {1, 2, 4, 8}, s[] = {0, 4, 8, 16, 32};
    const char *m[] = {"mlr", "mlp1", "mlp2", "mlp3", "cnn"};
    const char *spec[] = {"mlr", "mlp:32", "mlp:32,32", "mlp:32,32,32", "cnn"};
    const double tg[] = {0.8, 0.82, 0.82, 0.82, 0.82};
    const char *o[] = {"sgd", "momentum", "nesterov", "adam", "rmsprop", "adagrad"};
    char *want = documented_cells(4, w, 5, m, spec, tg, 6, o, 5, s, 10);
    test_run r = test_amsgd("staleness --preset dai2019 --list-cells");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, want, "the full preset's cells differ from the documented list");
    /* the same comparison rejects a list in another order (optimisers swapped) */
    const char *o_wrong[] = {"momentum", "sgd", "nesterov", "adam", "rmsprop", "adagrad"};
    char *wrong = documented_cells(4, w, 5, m, spec, tg, 6, o_wrong, 5, s, 10);
    cr_expect(strcmp(r.out, wrong) != 0, "a wrongly ordered list was accepted");
    free(want);
    free(wrong);
    test_run_free(&r);
    /* --quick */
    const size_t wq[] = {1, 4}, sq[] = {0, 8};
    const char *mq[] = {"mlr", "mlp2"}, *specq[] = {"mlr", "mlp:32,32"};
    const char *oq[] = {"sgd", "momentum", "adam"};
    const double tq[] = {0.8, 0.82};
    want = documented_cells(2, wq, 2, mq, specq, tq, 3, oq, 2, sq, 6);
    r = test_amsgd("staleness --preset dai2019 --quick --list-cells");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, want, "the quick preset's cells differ from the documented list");
    free(want);
    test_run_free(&r);
    /* a subset: flags override the preset's lists; s = 0 is added first */
    const size_t w1[] = {4}, s1[] = {0, 16};
    const char *m1[] = {"mlp3"}, *spec1[] = {"mlp:8,8,8"}, *o1[] = {"adagrad"};
    const double t1[] = {0.82};
    want = documented_cells(1, w1, 1, m1, spec1, t1, 1, o1, 2, s1, 5);
    r = test_amsgd("staleness --preset dai2019 --models mlp3 --width 8 --optimizer adagrad "
                   "--workers 4 --s 16 --seeds 5 --list-cells");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, want);
    free(want);
    test_run_free(&r);
    test_expect_usage_error("staleness --preset dai2018", "--preset");
    test_expect_usage_error("staleness --preset dai2019 --models mlr,resnet", "resnet");
    test_expect_usage_error("staleness --preset dai2019 --resume", "--checkpoint");
    test_expect_usage_error("staleness --preset dai2019 --workers 1,1 --list-cells", "twice");
}

/* A small preset on the fixture: 2 P x 2 models x 2 optimisers = 8 cells. */
static void preset_args(char *buf, size_t len, const char *extra)
{
    char spec[4200];
    test_fixture_spec(spec, sizeof spec);
    snprintf(buf, len,
             "staleness --preset dai2019 --data '%s' --models mlr,mlp1 --width 3 "
             "--optimizer sgd,adam --workers 1,2 --s 0,2 --seeds 2 --grid-half 1 --batch 4 "
             "--max-batches 100 --eval-every 10 --target-accuracy 0.3 --quiet --format json %s",
             spec, extra);
}

static void spit(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fwrite(text, 1, n, f);
    fclose(f);
}

Test(nnstale, preset_threads_identical)
{
    char args[8400];
    preset_args(args, sizeof args, "--threads 1");
    test_run one = test_amsgd(args);
    cr_assert_eq(one.status, 0, "%s: %s", args, one.err);
    preset_args(args, sizeof args, "--threads 2");
    test_run two = test_amsgd(args);
    cr_assert_eq(two.status, 0, "%s", two.err);
    cr_expect_str_eq(one.out, two.out, "output differs between 1 and 2 threads");
    /* the comparison sees a change: another seed gives other bytes */
    preset_args(args, sizeof args, "--threads 2 --seed 2");
    test_run other = test_amsgd(args);
    cr_assert_eq(other.status, 0, "%s", other.err);
    cr_expect(strcmp(one.out, other.out) != 0, "--seed 2 printed the same bytes");
    /* the output has a row per (cell, s) with the documented keys */
    json_error_t je;
    json_t *root = json_loads(one.out, 0, &je);
    cr_assert_not_null(root, "%s", je.text);
    json_t *res = json_object_get(root, "results"), *tun = json_object_get(root, "tuning");
    cr_expect_eq(json_array_size(res), 16, "8 cells x 2 s");
    cr_expect_eq(json_array_size(tun), 8);
    for (size_t i = 0; i < json_array_size(tun); i++) {
        json_t *t = json_array_get(tun, i);
        double lr = json_number_value(json_object_get(t, "lr"));
        json_t *g = json_object_get(t, "grid");
        int on = 0;
        for (size_t j = 0; j < json_array_size(g); j++)
            on |= json_number_value(json_array_get(g, j)) == lr;
        cr_expect(on && json_array_size(g) == 3, "tuning %zu: lr %g not on its grid", i, lr);
    }
    const char *keys[] = {"test_accuracy",
                          "steps_to_target",
                          "normalized",
                          "normalized_lower",
                          "coherence",
                          "coherence_early",
                          "coherence_late",
                          "seeds",
                          "workers",
                          "s",
                          "lr"};
    for (size_t i = 0; i < json_array_size(res); i++) {
        json_t *e = json_array_get(res, i);
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
            cr_expect_not_null(json_object_get(e, keys[k]), "row %zu lacks %s", i, keys[k]);
        /* the step of s = 2 is the one tuned at s = 0 for the same cell */
        if (i % 2 == 1)
            cr_expect_eq(json_number_value(json_object_get(e, "lr")),
                         json_number_value(json_object_get(json_array_get(res, i - 1), "lr")));
    }
    json_decref(root);
    test_run_free(&one);
    test_run_free(&two);
    test_run_free(&other);
}

/* Rewrites line `line` (0-based) of a checkpoint with its tuned step replaced by lr and a
 * valid CRC-32, so the cell passes every check but is recognisably not recomputed. */
static char *tamper_lr(const char *ckpt, size_t line, const char *old_lr, const char *new_lr)
{
    char *out = malloc(strlen(ckpt) + 256), *o = out;
    const char *p = ckpt;
    for (size_t k = 0; *p; k++) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (k == line) {
            /* text before the " XXXXXXXX" CRC */
            char *text = strndup(p, n - 9), *hit = strstr(text, old_lr);
            cr_assert_not_null(hit, "line %zu has no %s: %s", line, old_lr, text);
            char fixed[8192];
            snprintf(fixed, sizeof fixed, "%.*s%s%s", (int)(hit - text), text, new_lr,
                     hit + strlen(old_lr));
            unsigned long c = crc32(0L, (const Bytef *)fixed, (uInt)strlen(fixed));
            o += sprintf(o, "%s %08lx", fixed, c & 0xffffffffUL);
            free(text);
        } else {
            memcpy(o, p, n);
            o += n;
        }
        if (nl) *o++ = '\n';
        p = nl ? nl + 1 : p + n;
    }
    *o = 0;
    return out;
}

Test(nnstale, preset_resume_after_truncation)
{
    char dir[] = "/tmp/amsgd-nnpreset-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char ck[256], ck2[256], extra[600], args[8400];
    snprintf(ck, sizeof ck, "%s/full.ckpt", dir);
    snprintf(ck2, sizeof ck2, "%s/cut.ckpt", dir);
    snprintf(extra, sizeof extra, "--threads 1 --checkpoint '%s'", ck);
    preset_args(args, sizeof args, extra);
    test_run full = test_amsgd(args);
    cr_assert_eq(full.status, 0, "%s: %s", args, full.err);
    char *text = test_read_file(ck);
    cr_assert_not_null(text);
    /* header + 3 cells + half of the fourth line (a torn write) */
    const char *p = text;
    for (int k = 0; k < 4; k++)
        p = strchr(p, '\n') + 1;
    const char *nl = strchr(p, '\n');
    cr_assert_not_null(nl, "fewer than 5 lines in the checkpoint");
    size_t cut = (size_t)(p - text) + (size_t)(nl - p) / 2;
    spit(ck2, text, cut);
    snprintf(extra, sizeof extra, "--threads 2 --checkpoint '%s' --resume", ck2);
    preset_args(args, sizeof args, extra);
    test_run res = test_amsgd(args);
    cr_assert_eq(res.status, 0, "%s: %s", args, res.err);
    cr_expect_str_eq(res.out, full.out, "resumed output differs from the uninterrupted run");
    char *after = test_read_file(ck2);
    cr_expect(after && strncmp(after, text, (size_t)(p - text)) == 0,
              "the kept cells were rewritten");
    /* the kept cells are read, not recomputed: a cell whose tuned step was replaced (valid
     * CRC, still on the grid) shows that step in the resumed output */
    {
        json_error_t je;
        json_t *root = json_loads(full.out, 0, &je);
        double lr0 = json_number_value(
            json_object_get(json_array_get(json_object_get(root, "tuning"), 0), "lr"));
        json_t *grid = json_object_get(json_array_get(json_object_get(root, "tuning"), 0), "grid");
        double other = json_number_value(json_array_get(grid, 0)) == lr0
                           ? json_number_value(json_array_get(grid, 2))
                           : json_number_value(json_array_get(grid, 0));
        json_decref(root);
        char old_s[64], new_s[64];
        snprintf(old_s, sizeof old_s, "[%.17g,", lr0);
        snprintf(new_s, sizeof new_s, "[%.17g,", other);
        /* jansson writes the shortest form that round-trips at 17 digits: find it */
        char *hit = strstr(text, old_s);
        if (!hit) {
            snprintf(old_s, sizeof old_s, "[%.16g,", lr0);
            hit = strstr(text, old_s);
        }
        cr_assert_not_null(hit, "cell 0 line lacks its step %s", old_s);
        char *t2 = tamper_lr(text, 1, old_s, new_s);
        spit(ck2, t2, strlen(t2));
        free(t2);
        test_run tam = test_amsgd(args);
        cr_assert_eq(tam.status, 0, "%s", tam.err);
        json_t *rt = json_loads(tam.out, 0, &je);
        cr_assert_not_null(rt);
        double got = json_number_value(
            json_object_get(json_array_get(json_object_get(rt, "tuning"), 0), "lr"));
        cr_expect_eq(got, other, "cell 0 was recomputed (step %g, checkpoint says %g)", got, other);
        json_decref(rt);
        test_run_free(&tam);
    }
    /* a checkpoint of other parameters is refused with exit 2, naming --checkpoint */
    {
        char sp[4200], bad[8400];
        test_fixture_spec(sp, sizeof sp);
        snprintf(bad, sizeof bad,
                 "staleness --preset dai2019 --data '%s' --models mlr,mlp1 --width 3 "
                 "--optimizer sgd,adam --workers 1,2 --s 0,2 --seeds 3 --grid-half 1 --batch 4 "
                 "--max-batches 100 --eval-every 10 --target-accuracy 0.3 --quiet --format json "
                 "--checkpoint '%s' --resume",
                 sp, ck);
        test_expect_usage_error(bad, "--checkpoint");
        /* the same flags with the checkpoint's own seeds are accepted (the refusal is the
         * parameters', not the file's) */
        char *q = strstr(bad, "--seeds 3");
        q[8] = '2';
        test_run okr = test_amsgd(bad);
        cr_expect_eq(okr.status, 0, "%s", okr.err);
        cr_expect_str_eq(okr.out, full.out);
        test_run_free(&okr);
    }
    free(text);
    free(after);
    test_run_free(&full);
    test_run_free(&res);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    cr_expect_eq(system(rm), 0);
}

/* The per-seed budget of the preset's runs at s >= 1: with --budget-factor 1 a seed whose run
 * at s = 8 needs no more batches than at s = 0 gives the same count as with a fixed budget
 * (--budget-factor 0), and every slower seed misses (so a miss means a slowdown beyond the
 * factor); at least one seed of each kind, so the comparison can fail both ways. */
Test(nnstale, preset_budget_factor_censors_beyond_it)
{
    char path[64], cmd[512];
    write_three_classes("budget", path);
    json_t *out[2];
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "staleness --preset dai2019 --quick --data %s --models mlr --optimizer sgd "
                 "--workers 1 --s 8 --seeds 6 --max-batches 400 --eval-every 2 "
                 "--target-accuracy 0.95 --budget-factor %d --quiet --format json",
                 path, k);
        test_run r = test_amsgd(cmd);
        cr_assert_eq(r.status, 0, "%s", r.err);
        out[k] = json_loads(r.out, 0, NULL);
        cr_assert_not_null(out[k]);
        test_run_free(&r);
    }
    unlink(path);
    json_t *rows[2] = {json_object_get(out[0], "results"), json_object_get(out[1], "results")};
    size_t same = 0, censored = 0;
    for (size_t k = 0; k < 6; k++) {
        double b0 = json_number_value(
            json_object_get(json_array_get(json_object_get(json_array_get(rows[0], 0), "seeds"), k),
                            "steps_to_target"));
        json_t *fixed =
            json_object_get(json_array_get(json_object_get(json_array_get(rows[0], 1), "seeds"), k),
                            "steps_to_target");
        json_t *scaled =
            json_object_get(json_array_get(json_object_get(json_array_get(rows[1], 1), "seeds"), k),
                            "steps_to_target");
        cr_assert(json_is_number(fixed) && b0 > 0, "seed %zu: the fixed-budget runs reach", k);
        if (json_number_value(fixed) <= b0) {
            same++;
            cr_expect(json_is_number(scaled) &&
                          json_number_value(scaled) == json_number_value(fixed),
                      "seed %zu: %g batches within the budget %g, scaled run differs", k,
                      json_number_value(fixed), b0);
        } else {
            censored++;
            cr_expect(json_is_null(scaled), "seed %zu: %g batches beyond the budget %g reached", k,
                      json_number_value(fixed), b0);
        }
    }
    cr_expect(same > 0 && censored > 0, "%zu seeds within the budget, %zu beyond", same, censored);
    cr_expect(json_number_value(
                  json_object_get(json_object_get(out[1], "params"), "budget_factor")) == 1.0);
    json_decref(out[0]);
    json_decref(out[1]);
}
