/* SPDX-License-Identifier: MIT */
/*
 * cmd-opts: the options and help text several commands share (the turn
 * options of run, send, retry and __worker; the list options of ls, search
 * and coders; the prompt paragraph of run, send and steer), so that the
 * commands' table entries, each beside its command, say them alike.
 * Macros only: each expands inside a `struct bt_opt` array or a notes
 * string of a command's entry (cmd.h, cmd-args.h).
 */
#ifndef BT_CMD_OPTS_H
#define BT_CMD_OPTS_H

#define HELP_JSON "the event stream as JSON lines on stdout, nothing\nelse there"
#define HELP_APPROVAL                                                                              \
    "deny (default): decline every approval request;\nauto: accept every request;\n"               \
    "never: tell the coder not to ask (it runs without\napproval); ask: a person answers each\n"   \
    "one (inline on a terminal, `baton approve`,\n`baton answer`); unanswered within the idle\n"   \
    "timeout: declined"
#define HELP_ACP_APPROVAL                                                                          \
    "what a coder's approval request gets when the editor\ndoes not answer in time: deny "         \
    "(default), auto\n(accept), never (tell the coder not to ask)"
#define HELP_TIMEOUT "stop the turn after S seconds (0 = no limit, the\ndefault)"
#define HELP_IDLE                                                                                  \
    "stop a coder that makes no progress for S seconds:\nstalled (default 600, 0 = off)"
#define HELP_DETACH                                                                                \
    "run the turn in a detached worker that outlives this\nshell; print the conversation id "      \
    "(`baton attach`\nfollows it)"

/* The options of every command that runs a turn. */
#define TURN_OPTS                                                                                  \
    {.id = 'j', .name = "json", .help = HELP_JSON},                                                \
        {.id = 'a',                                                                                \
         .name = "approval",                                                                       \
         .value = "POLICY",                                                                        \
         .help = HELP_APPROVAL,                                                                    \
         .choices = "deny|auto|never|ask"},                                                        \
        {.id = 't', .name = "timeout", .value = "S", .help = HELP_TIMEOUT},                        \
        {.id = 'i', .name = "idle-timeout", .value = "S", .help = HELP_IDLE},                      \
        {.id = 'r',                                                                                \
         .name = "no-retry",                                                                       \
         .help = "no retries of failed model requests (pi, claude)"},                              \
        {.id = 'S',                                                                                \
         .name = "no-snapshot",                                                                    \
         .help = "no snapshots of the git working tree: the turn\nrecords no changes "             \
                 "(also BATON_SNAPSHOTS=0)"},                                                      \
    {                                                                                              \
        .id = 'd', .name = "detach", .help = HELP_DETACH                                           \
    }

#define PROMPT_NOTE                                                                                \
    "PROMPT is the text of the turn, or - to read it from stdin; without PROMPT,\n"                \
    "a stdin that is not a terminal is read. Put -- before a prompt that starts\n"                 \
    "with '-'.\n"

/* The output options of the list commands. */
#define LIST_OPTS(what)                                                                            \
    {.id = 'j',                                                                                    \
     .name = "json",                                                                               \
     .help = "one JSON object per " what " per line (JSON lines:\njq reads them)"},                \
    {                                                                                              \
        .id = 'J', .name = "json-array", .help = "all of them as one JSON array"                   \
    }

#endif
