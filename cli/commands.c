/*
 * commands.c -- the registry of amsgd subcommands: name, entry point, one-line summary.
 * main.c dispatches through it; embed.c runs the same entries in-process (libamsgd-cli.so).
 */
#include <stddef.h>
#include <string.h>

#include "args.h"
#include "commands.h"

const cli_command cli_commands[] = {
    {"mc", cmd_mc, "discrete Async-MSGD as a Monte Carlo ensemble"},
    {"sde", cmd_sde, "SDE limits (global, local OU) by Euler-Maruyama, keys of mc"},
    {"ode", cmd_ode, "deterministic limit ODE solved with CVODE"},
    {"dde", cmd_dde, "delay-differential limit at a fixed lag s = tau eta (method of steps)"},
    {"compare", cmd_compare, "mc, sde and ode side by side on one grid, with their gaps"},
    {"converge", cmd_converge, "weak error against the ODE/SDE over an eta ladder, fitted order"},
    {"validate", cmd_validate, "numerical verdicts on the theorems, with error bars"},
    {"theory", cmd_theory, "closed-form predictions: moments, OU, phase times, delay bounds"},
    {"phase", cmd_phase, "momentum x delay grid of a metric, with the theory's boundaries"},
    {"knee", cmd_knee, "critical delay per momentum and the exponent of its scaling"},
    {"runtime", cmd_runtime, "parameter-server variants: time per iteration and staleness"},
    {"wallclock", cmd_wallclock, "error against wall-clock time of parameter-server variants"},
    {"staleness", cmd_staleness, "steps to a target under simulated staleness, per optimiser"},
    {"tradeoff", cmd_tradeoff, "best momentum per worker count on a network (Liu et al.)"},
    {"figures", cmd_figures, "regenerate every figure of the documentation"},
    {"rerun", cmd_rerun, "run again the command a JSON result records; byte-identical?"},
    {NULL, NULL, NULL},
};

_Noreturn void cli_unknown_command(const char *name)
{
    const char *names[sizeof cli_commands / sizeof *cli_commands];
    size_t n = 0;
    for (const cli_command *c = cli_commands; c->name; c++)
        names[n++] = c->name;
    const char *near = cli_closest(name, strlen(name), names, n);
    if (near)
        cli_usage_error("unknown command '%s'; did you mean '%s'? (see amsgd --help)", name, near);
    cli_usage_error("unknown command '%s' (see amsgd --help)", name);
}
