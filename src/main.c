/* SPDX-License-Identifier: MIT */
/* main: the baton command line; dispatches to the cmd-*.c table. */
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "perf.h"

#define TURN_FLAGS                                                                                 \
    "  --json                 the event stream as JSON lines on stdout, nothing else there\n"      \
    "  --approval POLICY      deny (default): decline every approval request;\n"                   \
    "                         auto: accept every request;\n"                                       \
    "                         never: tell the coder not to ask (it runs without approval)\n"       \
    "  --timeout S            stop the turn after S seconds (0 = no limit, the default)\n"         \
    "  --idle-timeout S       stop a coder silent for S seconds: stalled (default 600, 0 = off)\n" \
    "  --no-retry             ask the coder not to retry failed model requests (pi)\n"             \
    "  --detach               run the turn in a detached worker that outlives this shell;\n"       \
    "                         print the conversation id (`baton attach` follows it)\n"

#define PROMPT_NOTE                                                                                \
    "PROMPT is the text of the turn, or - to read it from stdin. Put -- before a\n"                \
    "prompt that starts with '-'.\n"

static const struct bt_cmd commands[] = {
    {"run", bt_cmd_run,
     "[-c CODER] [-m MODEL] [-C DIR] [--json] [--detach] [--approval deny|auto|never] "
     "[--timeout S] [--idle-timeout S] [--no-retry] PROMPT|-",
     "start a conversation with one turn",
     "  -c, --coder CODER      the coder to drive (default codex; see `baton coders`)\n"
     "  -m, --model MODEL      the model, as the coder names it (default: the coder's)\n"
     "  -C, --cwd DIR          the project directory (default: the current one)\n" TURN_FLAGS
         PROMPT_NOTE},
    {"send", bt_cmd_send,
     "[--json] [--detach] [--force] [--approval deny|auto|never] [--timeout S] "
     "[--idle-timeout S] [--no-retry] CONV PROMPT|-",
     "next turn of a conversation, queued while one runs",
     TURN_FLAGS "  --force                send to a conversation handed off to the coder's UI\n"
                "\n" PROMPT_NOTE
                "CONV is a conversation id or a unique prefix of one. The turn runs in the\n"
                "conversation's own directory with its coder and model, resuming its native\n"
                "session. While a turn of CONV runs (from any terminal), the prompt is queued\n"
                "instead and send exits 0 at once; when the running turn completes, everything\n"
                "queued goes out as the next turn, joined by blank lines (after a failed or\n"
                "cancelled turn it waits for the next send).\n"},
    {"retry", bt_cmd_retry,
     "[--json] [--detach] [--force] [--approval deny|auto|never] [--timeout S] "
     "[--idle-timeout S] [--no-retry] CONV",
     "run the last prompt again after a failed, cancelled or interrupted turn",
     TURN_FLAGS "  --force                retry in a conversation handed off to the coder's UI\n"
                "\nCONV is a conversation id or a unique prefix of one. A completed turn is never\n"
                "sent again (exit 2).\n"},
    {"attach", bt_cmd_attach, "[--json] [--from SEQ] CONV",
     "follow the running (or last) turn of a conversation",
     "  --json                 the events as JSON lines on stdout\n"
     "  --from SEQ             start at event SEQ (default 1: the whole turn)\n"
     "Ends when the turn ends, with the turn's exit code. Ctrl-C leaves the turn running.\n"},
    {"cancel", bt_cmd_cancel, "CONV", "stop the running turn of a conversation",
     "The stop is recorded first, then the turn's owner stops its coder (within\n"
     "about 100 ms); cancel waits for the turn to end and says how it ended.\n"},
    {"rm-queued", bt_cmd_rm_queued, "CONV MSG", "take back a queued message before it goes",
     "MSG is the message number `baton send` printed (also in `baton show`).\n"},
    {"ls", bt_cmd_ls, "[--json]", "list conversations, newest first",
     "  --json                 one JSON object per conversation\n"},
    {"show", bt_cmd_show, "[--json] [--debug] [--last N] [--raw] CONV",
     "show a conversation's messages and runs",
     "  --json                 the conversation and its messages as one JSON object\n"
     "  --debug                each answer's run: state, coder version, exit, error kind,\n"
     "                         the coder's stderr tail and its raw output file\n"
     "  --last N               only the last N messages\n"
     "  --raw                  the last run's raw coder stdout, as the coder wrote it\n"},
    {"search", bt_cmd_search, "[--json] [--limit N] WORD...",
     "find conversations by words in their title or messages",
     "  --json                 one JSON object per conversation\n"
     "  --limit N              at most N conversations, newest first (default 50)\n"
     "A conversation matches when its title or one of its messages holds every\n"
     "WORD (case and accents ignored; words are plain text, never query syntax).\n"
     "Exit 0 when something matched, 1 when nothing did.\n"},
    {"rm", bt_cmd_rm, "[-y] CONV", "delete a conversation, its runs and the coder's session",
     "  -y, --yes              do not ask first (rm asks only when stdin is a terminal)\n"
     "Deletes the conversation's messages, runs, events and run files, and the\n"
     "coder's own session files (codex rollout, pi session file) found inside the\n"
     "coder's session directory, unless the conversation was handed off to the\n"
     "coder's terminal UI or its handoff tmux session still runs (left running).\n"
     "Refused while a turn runs. On a terminal it first says what goes and asks:\n"
     "any answer but y or yes removes nothing and exits 1.\n"},
    {"handoff", bt_cmd_handoff, "[--tmux | --print] CONV",
     "continue a conversation in its coder's own terminal UI",
     "  --tmux                 run it in a detached tmux session baton-<short id>\n"
     "  --print                print the command line (shell-quoted) and do nothing else\n"
     "Replaces baton with the coder's interactive command resuming the conversation's\n"
     "native session (codex resume ID, pi --session FILE) in its directory, with\n"
     "baton's environment. The conversation becomes transferred: `baton send` then\n"
     "refuses unless --force. Refused, in all three ways, while a turn runs, messages\n"
     "wait queued or the conversation's tmux session still runs (exit 2).\n"},
    {"coders", bt_cmd_coders, "[--json]", "installed coders with version and path",
     "  --json                 one JSON object per coder\n"},
    {"__worker", bt_cmd_worker, "flush|retry [OPTIONS] -- CONV", "a detached worker", ""},
};

static void help(FILE *f)
{
    fprintf(f, "usage: baton COMMAND [OPTIONS]\n\n"
               "Drive installed coding-agent CLIs behind one interface.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strncmp(commands[i].name, "__", 2) != 0)
            fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
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
            printf("usage: baton %s %s\n\n%s.\n\n%s%s", cmd, commands[i].usage, commands[i].summary,
                   strncmp(commands[i].options, "  -", 3) == 0 ? "options:\n" : "",
                   commands[i].options);
    return BT_EXIT_OK;
}

int main(int argc, char **argv)
{
    /* A coder that closes its stdin early must not kill baton. */
    signal(SIGPIPE, SIG_IGN);
    bt_perf_mark("main");
    opterr = 0; /* commands report bad options themselves (bt_bad_option) */
    if (argc < 2)
        return help(stderr), BT_EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0)
        return help(stdout), BT_EXIT_OK;
    if (strcmp(argv[1], "--version") == 0)
        return printf("baton %s\n", BATON_VERSION), BT_EXIT_OK;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, argv[1]) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            bt_perf_mark("done");
            return rc;
        }
    bt_fail(BT_EXIT_USAGE, "unknown command '%s'", argv[1]);
    help(stderr);
    return BT_EXIT_USAGE;
}
