/*
 * help_examples.c -- the examples of every help text, keyed by subcommand (a const
 * registry, so the front ends need no help code of their own). Every line runs as printed
 * from the source tree; tests/test_cli_help.c runs each of them (with smaller sizes where
 * one takes more than a few seconds) and expects exit status 0.
 */
#include <stddef.h>

#include "args.h"

const cli_example cli_examples[] = {
    {NULL, "amsgd mc --mu 0.5 --delay const:40 --eta 1e-3 --time 2 --replicas 500",
     "a Monte Carlo ensemble at delay 40, as CSV on stdout"},
    {NULL, "amsgd help phase", "the options of one command, with examples"},
    {NULL, "amsgd validate --quick --only runtime", "one theorem check at reduced size"},

    {"mc", "amsgd mc --eta 1e-3 --mu 0.5 --delay const:40 --time 2 --grid 21",
     "mean error of 1000 replicas at delay 40, as CSV"},
    {"mc", "amsgd mc --mu 0.9 --delay geometric:5 --time 1 --format json -o mc.json",
     "geometric staleness of mean 5, as JSON in mc.json"},
    {"mc", "amsgd mc --data fashion-mnist --project 16 --eta 1e-4 --init e:1 --time 1",
     "streaming PCA on Fashion-MNIST's top 16 principal coordinates (docs/pca-data.md)"},

    {"sde", "amsgd sde --eta 1e-3 --mu 0.5 --time 2 --grid 21 --replicas 500",
     "the global SDE limit by Euler-Maruyama"},
    {"sde", "amsgd sde --model ou --mu 0.9 --eta 1e-3 --time 2 --replicas 500",
     "the local Ornstein-Uhlenbeck limit near v^1"},

    {"ode", "amsgd ode --mu 0.5 --eta 1e-3 --time 10 --grid 11",
     "the deterministic limit of the error"},
    {"ode", "amsgd ode --dim 100 --rotate 7 --time 5 --format json -o ode.json",
     "d = 100 in a random eigenbasis, as JSON"},

    {"dde", "amsgd dde --lag 0.04 --init angle:1.3 --time 4 --grid 5",
     "the delay-differential limit at lag s = tau eta = 0.04 (tau = 80 at eta = 5e-4)"},
    {"dde", "amsgd dde --lag 0.5 --mu 0.5 --time 4 --grid 5 --format json -o dde.json",
     "with momentum 0.5, as JSON"},

    {"compare", "amsgd compare --eta 1e-3 --mu 0.5 --time 2 --grid 21 --replicas 500",
     "mc, sde and ode on one grid, with their gaps"},

    {"converge", "amsgd converge --mu 0.5 --etas 2e-3,1e-3,5e-4 --time 1 --replicas 500",
     "weak error to the ODE over a ladder of step sizes and its fitted order"},
    {"converge", "amsgd converge --mu 0.5 --etas 2e-3,1e-3,5e-4 --time 1 --sde --format json",
     "the same against the SDE too, as JSON (exit 1 if the order check fails)"},

    {"validate", "amsgd validate --list", "the checks"},
    {"validate", "amsgd validate --quick --only runtime --format table",
     "one check at reduced size (exit 1 if it fails)"},
    {"validate", "amsgd validate --quick --format json -o validate.json",
     "every check at reduced size (a few minutes), as JSON"},

    {"theory", "amsgd theory --mu 0.9 --eta 1e-3",
     "moments, OU variances, phase times and delay bounds"},
    {"theory", "amsgd theory --dim 10 --format json -o theory.json", "d = 10, as JSON"},
    {"theory", "amsgd theory --data fashion-mnist --project 16 --eta 1e-4 --format json",
     "Sigma, alpha_ij^2 and C_d of the data set, and the predictions on it"},

    {"phase", "amsgd phase --mu-grid 0.5,0.9 --tau-grid 0:40:3 --replicas 50 --time 2",
     "a small momentum x delay grid of the stationary error"},
    {"phase", "amsgd phase --preset liu2018 --checkpoint liu.ckpt -o liu2018.csv",
     "the experiment of Liu et al. (2018), resumable with --resume"},
    {"phase", "amsgd phase --data fashion-mnist --project 16 --eta 1e-4 --mu-grid 0.5,0.9 --time 3",
     "the momentum x delay grid on Fashion-MNIST (docs/pca-data.md)"},

    {"knee", "amsgd knee --mus 0.5,0.9 --tau-max 256 --time 5 --replicas 50",
     "critical delay of two momenta and the fitted exponent"},
    {"knee", "amsgd knee --mus 0.5,0.9 --tau-max 256 --time 5 --seeds 3 --diverged-max 0.1",
     "three seeds: tau_c_mean, tau_c_sd and the exponent's interval over seeds"},
    {"knee", "amsgd knee --checkpoint knee.ckpt --format json -o knee.json",
     "the documented run (docs/knee.md), resumable with --resume"},
    {"knee", "amsgd knee --data fashion-mnist --project 16 --eta 1e-4 --time 3 --seeds 3",
     "the knee on Fashion-MNIST's top 16 principal coordinates (docs/pca-data.md)"},

    {"runtime", "amsgd runtime --workers 8 --K 1,2,4,8 --updates 200 --replicas 50",
     "time per iteration and staleness of the six variants"},
    {"runtime", "amsgd runtime --workers 4 --K 1,2,4 --runtime pareto:2.5:1 --format json",
     "heavy-tailed learner runtimes, as JSON"},

    {"wallclock", "amsgd wallclock --workers 4 --variants sync,async,k-async:2",
     "error against wall-clock time of three variants"},
    {"wallclock", "amsgd wallclock --objective pca --eta 0.005 --updates 500 --replicas 50",
     "the same on streaming PCA"},
    {"wallclock", "amsgd wallclock --model mlr --data fashion-mnist --quick",
     "the six variants training logistic regression on Fashion-MNIST, over 3 seeds"},
    {"wallclock", "amsgd wallclock --sweep --quick --laws exp:1 --format json",
     "time per update and error floor for P = 2, 4, 8, 16 with errors over seeds"},

    {"staleness", "amsgd staleness --objective lsq --s 0,2,8 --optimizer sgd,adam",
     "steps to the target under staleness 0, 2 and 8"},
    {"staleness --model",
     "amsgd staleness --model mlr --data fashion-mnist --s 0,4,8 --optimizer sgd",
     "logistic regression on Fashion-MNIST under staleness 0, 4 and 8"},
    {"staleness --model",
     "amsgd staleness --model mlp:128 --workers 1,4 --s 0,8 --seeds 3 --format json",
     "an MLP with one hidden layer of 128, one and four workers, three seeds"},
    {"staleness --model",
     "amsgd staleness --model mlp:256,128 --optimizer adam --tune --max-batches 5000",
     "two hidden layers, Adam with its step tuned at s = 0"},

    {"tradeoff", "amsgd tradeoff --quick", "the whole grid at a small budget (about a minute)"},
    {"tradeoff", "amsgd tradeoff --workers 1,8 --mus 0.5,0.9 --budget 2000 --format json",
     "two worker counts and two momenta, as JSON"},
    {"tradeoff", "amsgd tradeoff --preset liu2018-dnn --checkpoint tradeoff.ckpt -o tradeoff.csv",
     "the documented run (docs/tradeoff.md), resumable with --resume"},
    {"staleness", "amsgd staleness --preset dai2019 --quick --list-cells",
     "the cells of Dai et al.'s grid at reduced size (drop --list-cells to run it)"},

    {"rerun", "amsgd rerun theory.json",
     "theory.json from 'amsgd theory --format json -o theory.json': same bytes?"},
    {"rerun", "amsgd rerun mc.json", "the same for a Monte Carlo result (exit 1 if different)"},

    {"figures", "amsgd figures --list", "the figures and the pages that show them"},
    {"figures", "amsgd figures --dry-run --only knee",
     "the commands that make one figure, without running them"},
    {NULL, NULL, NULL},
};
