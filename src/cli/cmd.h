/* SPDX-License-Identifier: MIT */
/*
 * cmd: the subcommands of the baton CLI, one cmd-*.c each with its table
 * entry, listed in one table (cmds.def, cmd-table.c) that main.c
 * dispatches through. What several commands
 * share is cmd-common.h's (messages, the store, list output), cmd-turn.h's
 * (turns and workers) and cmd-args.h's (the command line). A command returns
 * the process exit code:
 * 0 completed, 1 failed, 2 usage, 3 coder not installed, 4 auth required,
 * 130 cancelled, 141 stdout closed.
 */
#ifndef BT_CMD_H
#define BT_CMD_H

#include <stddef.h>

enum {
    BT_EXIT_OK = 0,
    BT_EXIT_FAILED = 1,
    BT_EXIT_USAGE = 2,
    BT_EXIT_NOT_INSTALLED = 3,
    BT_EXIT_AUTH = 4,
    BT_EXIT_CANCELLED = 130,
    BT_EXIT_STDOUT_CLOSED = 141, /* 128 + SIGPIPE, as a shell reports */
};

/* A command whose name starts with "__" is internal: `baton --help` does
 * not list it. The table (cmd-table.c) is the one source of the parser's rules,
 * the help, the man page and the completions; each entry is a
 * `const struct bt_cmd bt_cmd_def_<id>` in the command's own cmd-*.c. */
struct bt_opt;
struct bt_cmd {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
    const char *operands;              /* "CONV PROMPT|-"; [X] optional, X... many */
    const char *summary;               /* one line for `baton --help` */
    const struct bt_opt *opts;         /* ends with {0}; NULL: none */
    const char *notes;                 /* paragraphs after the options, or "" */
};

/* The exit codes as `baton --help` and baton(1) explain them, ending with
 * a NULL name. */
struct bt_exit_doc {
    int code;
    const char *name; /* "completed", for the one-line list */
    const char *text; /* the sentence of the man page */
};
extern const struct bt_exit_doc bt_exit_codes[];

/* Each command's entry, one per BT_CMD(id) line of cmds.def. */
#define BT_CMD(id) extern const struct bt_cmd bt_cmd_def_##id;
#include "cmds.def"
#undef BT_CMD

/* The command table, in `baton --help` order (cmds.def's), and a lookup by
 * name (NULL if there is no such command). The entries are borrowed,
 * static. */
extern const struct bt_cmd *const bt_cmds[];
extern const size_t bt_n_cmds;
const struct bt_cmd *bt_cmd_find(const char *name);

/* The table as one value, for what documents it (doc.c, cmd-doc.c,
 * cmd-doc-complete.c): they take it as an argument rather than read
 * bt_cmds, since the table names the commands that print them (`baton
 * completion`, `baton __man`, in cmd-table.c) and a file below the table
 * must not refer back to it. Borrowed, static. */
struct bt_cmd_table {
    const struct bt_cmd *const *cmds; /* bt_cmds */
    size_t n;                         /* bt_n_cmds */
    const struct bt_exit_doc *exits;  /* bt_exit_codes */
};

int bt_cmd_run(int argc, char **argv);
int bt_cmd_send(int argc, char **argv);
int bt_cmd_retry(int argc, char **argv);
int bt_cmd_attach(int argc, char **argv);
int bt_cmd_cancel(int argc, char **argv);
int bt_cmd_steer(int argc, char **argv);
int bt_cmd_approve(int argc, char **argv);
int bt_cmd_answer(int argc, char **argv);
int bt_cmd_rm_queued(int argc, char **argv);
int bt_cmd_worker(int argc, char **argv);
int bt_cmd_handoff(int argc, char **argv);
int bt_cmd_ls(int argc, char **argv);
int bt_cmd_show(int argc, char **argv);
int bt_cmd_diff(int argc, char **argv);
int bt_cmd_keep(int argc, char **argv);
int bt_cmd_group(int argc, char **argv);
int bt_cmd_search(int argc, char **argv);
int bt_cmd_rm(int argc, char **argv);
int bt_cmd_coders(int argc, char **argv);
int bt_cmd_serve(int argc, char **argv);
int bt_cmd_acp(int argc, char **argv);
int bt_cmd_completion(int argc, char **argv);
int bt_cmd_man(int argc, char **argv);
int bt_cmd_ids(int argc, char **argv);

#endif
