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

/* OpenBLAS's threaded build starts its worker threads when it is loaded, and they spin
 * (sched_yield) for about 0.1 s of the other cores' time before they sleep. No BLAS call of
 * the program uses more than one thread (am_nn.c and am_datamoments.c ask for one), so the
 * pool is stopped at once. Weak: other BLAS libraries and OpenBLAS's serial build lack it. */
extern void blas_thread_shutdown_(void) __attribute__((weak));
extern void openblas_set_num_threads(int num_threads) __attribute__((weak));

static void blas_one_thread(void)
{
    if (openblas_set_num_threads) openblas_set_num_threads(1);
    if (blas_thread_shutdown_) blas_thread_shutdown_();
}

static void usage(void)
{
    printf("usage: amsgd COMMAND [options]\n"
           "       amsgd help COMMAND\n\n"
           "Numerical checks of asynchronous momentum SGD (streaming PCA).\n\ncommands:\n");
    for (const cli_command *c = cli_commands; c->name; c++) {
        printf("  %-10s ", c->name);
        cli_print_wrapped(stdout, 13, 13, c->summary);
    }
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
    cli_unknown_command(name);
}

int main(int argc, char **argv)
{
    /* The library checks the status of every GSL call; GSL's default handler would abort the
     * process first. The handler is process-wide, so the program sets it once, here. */
    am_common_gsl_handler_off();
    blas_one_thread();
#ifdef AM_HAVE_MPI
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    atexit(mpi_end);
    /* rank 0 writes every output; the others' stdout goes nowhere, so that a help or version
     * text, like a result, is printed once under mpirun */
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0 && !freopen("/dev/null", "w", stdout))
        cli_runtime_error("cannot redirect the stdout of rank %d", rank);
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
