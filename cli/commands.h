/*
 * commands.h -- the subcommands of amsgd; each takes the arguments after its name and
 * returns the process exit status (0 ok, 1 a check failed, 2 bad usage, 3 runtime failure).
 */
#ifndef AM_CLI_COMMANDS_H
#define AM_CLI_COMMANDS_H

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

int cmd_mc(int argc, char **argv);
int cmd_phase(int argc, char **argv);
int cmd_knee(int argc, char **argv);
int cmd_theory(int argc, char **argv);
int cmd_converge(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_sde(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_runtime(int argc, char **argv);
int cmd_staleness(int argc, char **argv);
int cmd_staleness_model(int argc, char **argv); /* staleness --model (cli/cmd_nnstale.c) */
int cmd_wallclock(int argc, char **argv);
int cmd_tradeoff(int argc, char **argv);
int cmd_ode(int argc, char **argv);
int cmd_dde(int argc, char **argv);

int cmd_figures(int argc, char **argv);
int cmd_rerun(int argc, char **argv);

extern const cli_command cli_commands[];

/* Exits 2 for an unknown command name, with the closest command if it is a likely typo. */
_Noreturn void cli_unknown_command(const char *name);

#endif
