/*
 * main.c -- the amsgd command: dispatches to the subcommands of the registry in commands.c.
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

static void usage(FILE *f)
{
    fprintf(f, "usage: amsgd COMMAND [options]\n\n"
               "Numerical checks of asynchronous momentum SGD (streaming PCA).\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\n'amsgd COMMAND --help' lists the flags of a command with their defaults.\n"
               "'amsgd --version' prints the version.\n");
}

int main(int argc, char **argv)
{
#ifdef AM_HAVE_MPI
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    atexit(mpi_end);
#endif
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("amsgd %s\n", am_version());
        return 0;
    }
    for (const cli_command *c = cli_commands; c->name; c++)
        if (strcmp(argv[1], c->name) == 0) return c->run(argc - 2, argv + 2);
    cli_usage_error("unknown command '%s' (see amsgd --help)", argv[1]);
}
