/*
 * main.c -- the amsgd command: dispatches to the subcommands of the registry below.
 */
#include <stdio.h>
#include <string.h>

#include "../core/am_common.h"
#include "args.h"
#include "commands.h"

#ifdef AM_HAVE_MPI
#include <mpi.h>
#include <stdlib.h>

/* Ends MPI at any exit (exit codes of usage and runtime errors included). */
static void mpi_end(void)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}
#endif

const cli_command cli_commands[] = {
    {"mc", cmd_mc, "discrete Async-MSGD as a Monte Carlo ensemble"},
    {"sde", cmd_sde, "SDE limits (global, local OU) by Euler-Maruyama, keys of mc"},
    {"ode", cmd_ode, "deterministic limit ODE solved with CVODE"},
    {"compare", cmd_compare, "mc, sde and ode side by side on one grid, with their gaps"},
    {"converge", cmd_converge, "weak error against the ODE/SDE over an eta ladder, fitted order"},
    {"validate", cmd_validate, "numerical verdicts on the theorems, with error bars"},
    {"theory", cmd_theory, "closed-form predictions: moments, OU, phase times, delay bounds"},
    {"phase", cmd_phase, "momentum x delay grid of a metric, with the theory's boundaries"},
    {"knee", cmd_knee, "critical delay per momentum and the exponent of its scaling"},
    {"runtime", cmd_runtime, "parameter-server variants: time per iteration and staleness"},
    {"wallclock", cmd_wallclock, "error against wall-clock time of parameter-server variants"},
    {"staleness", cmd_staleness, "steps to a target under simulated staleness, per optimiser"},
    {"figures", cmd_figures, "regenerate every figure of the documentation"},
    {NULL, NULL, NULL},
};

static void usage(void)
{
    printf("usage: amsgd COMMAND [options]\n"
           "       amsgd help COMMAND\n\n"
           "Numerical checks of asynchronous momentum SGD (streaming PCA).\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        printf("  %-10s %s\n", c->name, c->summary);
    printf("\n'amsgd COMMAND --help' (or 'amsgd help COMMAND') lists the options of a command\n"
           "with their defaults and examples; 'amsgd --version' (-V) prints the version.\n");
    cli_print_examples(stdout, NULL);
    putchar('\n');
    cli_print_wrapped(stdout, 0, 0, CLI_HELP_FOOTER);
}

/* Exits 0 after a help or version text, 3 if stdout could not take it (a full disk). */
static int printed(void)
{
    if (fflush(stdout) || ferror(stdout)) cli_runtime_error("cannot write to stdout");
    return 0;
}

static const cli_command *command(const char *name)
{
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(name, c->name) == 0) return c;
    cli_usage_error("unknown command '%s' (see amsgd --help)", name);
}

int main(int argc, char **argv)
{
#ifdef AM_HAVE_MPI
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    atexit(mpi_end);
#endif
    if (argc < 2) cli_usage_error("no command given (see amsgd --help for the commands)");
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 ||
        (strcmp(first, "help") == 0 && argc == 2)) {
        usage();
        return printed();
    }
    if (strcmp(first, "help") == 0) {
        if (argc > 3) cli_usage_error("'amsgd help' takes one command, got %d", argc - 2);
        char help[] = "--help";
        char *args[] = {help, NULL};
        return command(argv[2])->run(1, args);
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("amsgd %s\n", am_version());
        return printed();
    }
    return command(first)->run(argc - 2, argv + 2);
}
