/* SPDX-License-Identifier: MIT */
/* main: the baton command line; dispatches to the cmd-*.c table. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static const struct bt_cmd commands[] = {
    {"run", bt_cmd_run,
     "[-c CODER] [-m MODEL] [-C DIR] [--json] [--approval deny|auto|never] [--timeout S] "
     "[--idle-timeout S] PROMPT|-",
     "start a conversation with one turn"},
    {"send", bt_cmd_send,
     "[--json] [--approval deny|auto|never] [--timeout S] "
     "[--idle-timeout S] CONV PROMPT|-",
     "next turn of a conversation, resuming its native session"},
    {"ls", bt_cmd_ls, "[--json]", "list conversations, newest first"},
    {"show", bt_cmd_show, "[--json] [--debug] CONV", "show a conversation's messages and runs"},
    {"coders", bt_cmd_coders, "[--json]", "installed coders with version and path"},
};

static void help(FILE *f)
{
    fprintf(f, "usage: baton COMMAND [OPTIONS]\n\n"
               "Drive installed coding-agent CLIs behind one interface.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nexit codes: 0 completed, 1 failed, 2 usage, 3 coder not installed,\n"
               "            4 auth required, 130 cancelled\n"
               "Run `baton COMMAND --help` for a command's options.\n");
}

int bt_fail(int code, const char *fmt, ...)
{
    va_list ap;
    fputs("baton: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int bt_usage(const char *cmd)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, cmd) == 0)
            fprintf(stderr, "usage: baton %s %s\n", cmd, commands[i].usage);
    return BT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* A coder that closes its stdin early must not kill baton. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2)
        return help(stderr), BT_EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0)
        return help(stdout), BT_EXIT_OK;
    if (strcmp(argv[1], "--version") == 0)
        return printf("baton %s\n", BATON_VERSION), BT_EXIT_OK;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, argv[1]) == 0)
            return commands[i].run(argc - 1, argv + 1);
    bt_fail(BT_EXIT_USAGE, "unknown command '%s'", argv[1]);
    help(stderr);
    return BT_EXIT_USAGE;
}
