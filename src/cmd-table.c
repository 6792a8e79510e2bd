/* SPDX-License-Identifier: MIT */
/*
 * cmd-table: the commands of the CLI, their operands, options and help
 * text. The parser (cmd-args.c), `baton help`, the man page and the shell
 * completions all read this one table.
 */
#include <stddef.h>
#include <string.h>

#include "cmd-args.h"
#include "cmd.h"

#define HELP_JSON "the event stream as JSON lines on stdout, nothing\nelse there"
#define HELP_APPROVAL                                                                              \
    "deny (default): decline every approval request;\nauto: accept every request;\n"               \
    "never: tell the coder not to ask (it runs without\napproval)"
#define HELP_TIMEOUT "stop the turn after S seconds (0 = no limit, the\ndefault)"
#define HELP_IDLE                                                                                  \
    "stop a coder that makes no progress for S seconds:\nstalled (default 600, 0 = off)"
#define HELP_DETACH                                                                                \
    "run the turn in a detached worker that outlives this\nshell; print the conversation id "      \
    "(`baton attach`\nfollows it)"

/* The options of every command that runs a turn. */
#define TURN_OPTS                                                                                  \
    {'j', 0, "json", NULL, HELP_JSON, NULL},                                                       \
        {'a', 0, "approval", "POLICY", HELP_APPROVAL, "deny|auto|never"},                          \
        {'t', 0, "timeout", "S", HELP_TIMEOUT, NULL},                                              \
        {'i', 0, "idle-timeout", "S", HELP_IDLE, NULL},                                            \
        {'r', 0, "no-retry", NULL, "ask the coder not to retry failed model requests (pi)", NULL}, \
    {                                                                                              \
        'd', 0, "detach", NULL, HELP_DETACH, NULL                                                  \
    }

#define PROMPT_NOTE                                                                                \
    "PROMPT is the text of the turn, or - to read it from stdin; without PROMPT,\n"                \
    "a stdin that is not a terminal is read. Put -- before a prompt that starts\n"                 \
    "with '-'.\n"

static const struct bt_opt run_opts[] = {
    {'c', 'c', "coder", "CODER", "the coder (default: the first `baton coders` lists)", NULL},
    {'m', 'm', "model", "MODEL", "the model, as the coder names it (default: its own)", NULL},
    {'C', 'C', "cwd", "DIR", "the project directory (default: the current one)", NULL},
    TURN_OPTS,
    {0}};

static const struct bt_opt send_opts[] = {
    TURN_OPTS,
    {'f', 0, "force", NULL, "send to a conversation handed off to the coder's UI", NULL},
    {0}};

static const struct bt_opt retry_opts[] = {
    TURN_OPTS,
    {'f', 0, "force", NULL, "retry in a conversation handed off to the coder's UI", NULL},
    {0}};

static const struct bt_opt worker_opts[] = {
    TURN_OPTS,
    {'f', 0, "force", NULL, "a conversation handed off to the coder's UI", NULL},
    {'n', 0, "notify", NULL, "report the run and its end on fd 3", NULL},
    {0}};

static const struct bt_opt attach_opts[] = {
    {'j', 0, "json", NULL, "the events as JSON lines on stdout", NULL},
    {'f', 0, "from", "SEQ", "start at event SEQ (default 1: the whole turn)", NULL},
    {0}};

/* The output options of the list commands. */
#define LIST_OPTS(what)                                                                            \
    {'j', 0, "json", NULL, "one JSON object per " what " per line (JSON lines:\njq reads them)",   \
     NULL},                                                                                        \
    {                                                                                              \
        'J', 0, "json-array", NULL, "all of them as one JSON array", NULL                          \
    }

static const struct bt_opt ls_opts[] = {
    LIST_OPTS("conversation"),
    {'n', 0, "limit", "N", "at most N conversations, newest first (default: all)", NULL},
    {0}};

static const struct bt_opt show_opts[] = {
    {'j', 0, "json", NULL, "the conversation and its messages as one JSON object", NULL},
    {'d', 0, "debug", NULL,
     "each answer's run: state, coder version, exit, error\n"
     "kind, the coder's stderr tail and its raw output file",
     NULL},
    {'l', 0, "last", "N", "only the last N messages", NULL},
    {'r', 0, "raw", NULL, "the last run's raw coder stdout, as the coder wrote it", NULL},
    {0}};

static const struct bt_opt search_opts[] = {
    LIST_OPTS("conversation"),
    {'n', 0, "limit", "N", "at most N conversations, newest first (default 50)", NULL},
    {0}};

static const struct bt_opt handoff_opts[] = {
    {'t', 0, "tmux", NULL, "run it in a detached tmux session baton-<short id>", NULL},
    {'p', 0, "print", NULL, "print the command line (shell-quoted), do nothing else", NULL},
    {0}};

static const struct bt_opt rm_opts[] = {
    {'y', 'y', "yes", NULL, "do not ask first (rm asks only on a terminal)", NULL}, {0}};

static const struct bt_opt coders_opts[] = {LIST_OPTS("coder"), {0}};

const struct bt_exit_doc bt_exit_codes[] = {
    {BT_EXIT_OK, "completed", "the turn completed (for search: something matched)"},
    {BT_EXIT_FAILED, "failed",
     "the turn failed; the error event and `baton show` say why (for search: nothing "
     "matched)"},
    {BT_EXIT_USAGE, "usage",
     "usage error: a bad option, an unknown conversation, an empty prompt, or a request "
     "refused in the conversation's state"},
    {BT_EXIT_NOT_INSTALLED, "coder not installed", "the coder is not installed"},
    {BT_EXIT_AUTH, "auth required", "the coder needs a login"},
    {BT_EXIT_CANCELLED, "cancelled", "the turn was cancelled"},
    {BT_EXIT_STDOUT_CLOSED, "stdout closed",
     "baton's stdout was closed under the turn (`baton run ... | head`), which was stopped "
     "as a cancel would stop it; 128 + SIGPIPE, as a shell reports a tool SIGPIPE killed"},
    {0, NULL, NULL},
};

const struct bt_cmd bt_cmds[] = {
    {"run", bt_cmd_run, "[PROMPT|-]", "start a conversation with one turn", run_opts, PROMPT_NOTE},
    {"send", bt_cmd_send, "CONV [PROMPT|-]", "next turn of a conversation, queued while one runs",
     send_opts,
     PROMPT_NOTE "CONV is a conversation id or a unique prefix of one. The turn runs in the\n"
                 "conversation's own directory with its coder and model, resuming its native\n"
                 "session. While a turn of CONV runs (from any terminal), the prompt is queued\n"
                 "instead and send exits 0 at once; when the running turn completes, everything\n"
                 "queued goes out as the next turn, joined by blank lines (after a failed or\n"
                 "cancelled turn it waits for the next send).\n"},
    {"retry", bt_cmd_retry, "CONV",
     "the last prompt again after a failed, cancelled or interrupted turn", retry_opts,
     "CONV is a conversation id or a unique prefix of one. A completed turn is never\n"
     "sent again (exit 2).\n"},
    {"attach", bt_cmd_attach, "CONV", "follow the running (or last) turn of a conversation",
     attach_opts,
     "Ends when the turn ends, with the turn's exit code. Ctrl-C leaves the turn\n"
     "running.\n"},
    {"cancel", bt_cmd_cancel, "CONV", "stop the running turn of a conversation", NULL,
     "The stop is recorded first, then the turn's owner stops its coder (within\n"
     "about 100 ms); cancel waits for the turn to end and says how it ended.\n"},
    {"rm-queued", bt_cmd_rm_queued, "CONV N", "take back a queued message before it goes", NULL,
     "N is the message's queue number in CONV, as `baton send` and `baton show`\n"
     "print it (#N): 1 is the first message ever queued in CONV. Numbers are never\n"
     "reused.\n"},
    {"ls", bt_cmd_ls, "", "list conversations, newest first", ls_opts,
     "Times are local, with their zone; --json gives them in UTC (RFC 3339).\n"},
    {"show", bt_cmd_show, "CONV", "show a conversation's messages and runs", show_opts, ""},
    {"search", bt_cmd_search, "WORD...", "find conversations by words in their title or messages",
     search_opts,
     "A conversation matches when its title or one of its messages holds every\n"
     "WORD (case and accents ignored; words are plain text, never query syntax).\n"
     "Exit 0 when something matched, 1 when nothing did.\n"},
    {"rm", bt_cmd_rm, "CONV", "delete a conversation, its runs and the coder's session", rm_opts,
     "Deletes the conversation's messages, runs, events and run files, and the\n"
     "coder's own session files (codex rollout, pi session file) found inside the\n"
     "coder's session directory, unless the conversation was handed off to the\n"
     "coder's terminal UI or its handoff tmux session still runs (left running).\n"
     "Refused while a turn runs. On a terminal it first says what goes and asks:\n"
     "any answer but y or yes removes nothing and exits 1.\n"},
    {"handoff", bt_cmd_handoff, "CONV", "continue a conversation in its coder's own terminal UI",
     handoff_opts,
     "Replaces baton with the coder's interactive command resuming the conversation's\n"
     "native session (codex resume ID, pi --session FILE) in its directory, with\n"
     "baton's environment. The conversation becomes transferred: `baton send` then\n"
     "refuses unless --force. Refused, in all three ways, while a turn runs, messages\n"
     "wait queued or the conversation's tmux session still runs (exit 2).\n"},
    {"coders", bt_cmd_coders, "", "installed coders with version and path", coders_opts, ""},
    {"completion", bt_cmd_completion, "bash|zsh", "print a shell completion script", NULL,
     "Prints the completion script of the shell named, made from this help text:\n"
     "commands, their options, coders after -c, conversation ids where CONV goes.\n"
     "bash: `source <(baton completion bash)` in ~/.bashrc; zsh: save it as _baton\n"
     "in a directory of $fpath. `cmake --install` installs both, and baton(1).\n"},
    {"help", NULL, "[COMMAND]", "this help, or a command's", NULL, ""},
    {"__worker", bt_cmd_worker, "MODE CONV", "a detached worker (MODE flush or retry)", worker_opts,
     ""},
    {"__man", bt_cmd_man, "", "the man page baton(1) in roff", NULL, ""},
    {"__ids", bt_cmd_ids, "[PREFIX]", "conversation ids and titles, for completion", NULL, ""},
};
const size_t bt_n_cmds = sizeof(bt_cmds) / sizeof(bt_cmds[0]);

const struct bt_cmd *bt_cmd_find(const char *name)
{
    for (size_t i = 0; i < bt_n_cmds; i++)
        if (strcmp(bt_cmds[i].name, name) == 0)
            return &bt_cmds[i];
    return NULL;
}
