/* SPDX-License-Identifier: MIT */
/* main: the baton command line; dispatches to the cmd-*.c table. */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

#define TURN_OPTIONS                                                                               \
    "  --json                 the event stream as JSON lines on stdout, nothing else there\n"      \
    "  --approval POLICY      deny (default): decline every approval request;\n"                   \
    "                         auto: accept every request;\n"                                       \
    "                         never: tell the coder not to ask (it runs without approval)\n"       \
    "  --timeout S            stop the turn after S seconds (0 = no limit, the default)\n"         \
    "  --idle-timeout S       stop a coder silent for S seconds: stalled (default 600, 0 = off)\n" \
    "  --no-retry             ask the coder not to retry failed model requests (pi)\n"             \
    "PROMPT is the text of the turn, or - to read it from stdin. Put -- before a\n"                \
    "prompt that starts with '-'.\n"

static const struct bt_cmd commands[] = {
    {"run", bt_cmd_run,
     "[-c CODER] [-m MODEL] [-C DIR] [--json] [--approval deny|auto|never] [--timeout S] "
     "[--idle-timeout S] [--no-retry] PROMPT|-",
     "start a conversation with one turn",
     "  -c, --coder CODER      the coder to drive (default codex; see `baton coders`)\n"
     "  -m, --model MODEL      the model, as the coder names it (default: the coder's)\n"
     "  -C, --cwd DIR          the project directory (default: the current one)\n" TURN_OPTIONS},
    {"send", bt_cmd_send,
     "[--json] [--approval deny|auto|never] [--timeout S] [--idle-timeout S] [--no-retry] CONV "
     "PROMPT|-",
     "next turn of a conversation, resuming its native session",
     "CONV is a conversation id or a unique prefix of one. The turn runs in the\n"
     "conversation's own directory with its coder and model.\n" TURN_OPTIONS},
    {"ls", bt_cmd_ls, "[--json]", "list conversations, newest first",
     "  --json                 one JSON object per conversation\n"},
    {"show", bt_cmd_show, "[--json] [--debug] CONV", "show a conversation's messages and runs",
     "  --json                 the conversation and its messages as one JSON object\n"
     "  --debug                each answer's run: state, coder version, exit, error kind,\n"
     "                         and the coder's stderr tail\n"},
    {"coders", bt_cmd_coders, "[--json]", "installed coders with version and path",
     "  --json                 one JSON object per coder\n"},
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

int bt_bad_option(char **argv)
{
    const char *bad = optind > 1 ? argv[optind - 1] : "?";
    fprintf(stderr, "baton %s: unknown option or missing value: '%s'\n", argv[0], bad);
    return bt_usage(argv[0]);
}

int bt_help(const char *cmd)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, cmd) == 0)
            printf("usage: baton %s %s\n\n%s.\n\noptions:\n%s", cmd, commands[i].usage,
                   commands[i].summary, commands[i].options);
    return BT_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* A coder that closes its stdin early must not kill baton. */
    signal(SIGPIPE, SIG_IGN);
    opterr = 0; /* commands report bad options themselves (bt_bad_option) */
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
