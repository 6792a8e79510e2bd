/* SPDX-License-Identifier: MIT */
/* main: the baton command line; dispatches through the table of
 * cmd-table.c to the cmd-*.c commands. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd-common.h"
#include "cmd.h"
#include "coder.h"
#include "perf.h"

#define SHORT_USAGE "usage: baton COMMAND [OPTIONS] [ARGS] (`baton help` lists the commands)"

static void help(FILE *f)
{
    fprintf(f, "usage: baton COMMAND [OPTIONS] [ARGS]\n"
               "       baton help [COMMAND] | -h | --help\n"
               "       baton -V | --version\n\n"
               "Drive installed coding-agent CLIs behind one interface.\n\ncommands:\n");
    for (size_t i = 0; i < bt_n_cmds; i++)
        if (strncmp(bt_cmds[i]->name, "__", 2) != 0)
            fprintf(f, "  %-10s %s\n", bt_cmds[i]->name, bt_cmds[i]->summary);
    int col = fprintf(f, "\nexit codes:");
    for (const struct bt_exit_doc *e = bt_exit_codes; e->name; e++) {
        int n = snprintf(NULL, 0, " %d %s,", e->code, e->name);
        if (col + n > 78)
            col = fprintf(f, "\n           ");
        col += fprintf(f, " %d %s%s", e->code, e->name, e[1].name ? "," : "\n");
    }
    fprintf(f, "environment: BATON_HOME (the store; default $XDG_STATE_HOME/baton),\n"
               "            ");
    for (size_t i = 0; bt_coders[i]; i++) /* the registry's, so a new coder is listed */
        fprintf(f, "%s %s", i ? "," : "", bt_coders[i]->runner->bin_env);
    fprintf(f, " (a coder's executable), NO_COLOR\n"
               "Run `baton help COMMAND` for a command's options.\n");
}

/* What the command wrote must have arrived: a stdout that failed makes a
 * command that succeeded exit 141 (a closed pipe: quietly, as a tool
 * SIGPIPE ends) or 1 with the reason, never 0 with output lost. */
static int finish_stdout(int rc)
{
    int err = bt_cmd_stdout_error(0);
    if (!err || rc != BT_EXIT_OK)
        return rc;
    if (err == EPIPE)
        return BT_EXIT_STDOUT_CLOSED;
    return bt_cmd_fail(BT_EXIT_FAILED, "cannot write to stdout: %s", bt_cmd_stdout_reason(err));
}

/* `baton help [COMMAND]`: the same text as `baton COMMAND --help`. */
static int help_command(int argc, char **argv)
{
    if (argc == 1)
        return help(stdout), BT_EXIT_OK;
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
        argv[1] = "help"; /* `baton help --help`: help's own */
    const struct bt_cmd *cmd = bt_cmd_find(argv[1]);
    if (argc > 2) {
        fprintf(stderr, "baton help: unexpected argument '%s'\nusage: baton help [COMMAND]\n",
                argv[2]);
        return BT_EXIT_USAGE;
    }
    if (!cmd || (!cmd->run && strcmp(cmd->name, "help") != 0)) {
        fprintf(stderr, "baton help: no command '%s' (`baton help` lists them)\n", argv[1]);
        return BT_EXIT_USAGE;
    }
    bt_args_print_help(cmd, stdout);
    return BT_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* A coder that closes its stdin early must not kill baton; a closed
     * stdout of baton's own is noticed where it writes (render.h). */
    signal(SIGPIPE, SIG_IGN);
    bt_perf_mark("main");
    if (argc < 2)
        return help(stderr), BT_EXIT_USAGE;
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0)
        return finish_stdout(help_command(argc - 1, argv + 1));
    if (strcmp(first, "help") == 0)
        return finish_stdout(help_command(argc - 1, argv + 1));
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        if (argc > 2)
            return bt_cmd_fail(BT_EXIT_USAGE, "%s goes alone, not with '%s'\n%s", first, argv[2],
                               SHORT_USAGE);
        return printf("baton %s\n", BATON_VERSION), finish_stdout(BT_EXIT_OK);
    }
    const struct bt_cmd *cmd = bt_cmd_find(first);
    if (cmd && cmd->run) {
        int rc = cmd->run(argc - 1, argv + 1);
        bt_perf_mark("done");
        return finish_stdout(rc);
    }
    if (first[0] == '-')
        return bt_cmd_fail(BT_EXIT_USAGE, "unknown option '%s' (a command comes first)\n%s", first,
                           SHORT_USAGE);
    return bt_cmd_fail(BT_EXIT_USAGE, "unknown command '%s'\n%s", first, SHORT_USAGE);
}
