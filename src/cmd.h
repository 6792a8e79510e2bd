/* SPDX-License-Identifier: MIT */
/*
 * cmd: the subcommands of the baton CLI, one cmd-*.c each, listed in one
 * table in main.c. A command returns the process exit code:
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
 * not list it. The table (main.c) is the one source of the parser's rules,
 * the help, the man page and the completions. */
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

/* The command table, in `baton --help` order, and a lookup by name (NULL
 * if there is no such command). */
extern const struct bt_cmd bt_cmds[];
extern const size_t bt_n_cmds;
const struct bt_cmd *bt_cmd_find(const char *name);

int bt_cmd_run(int argc, char **argv);
int bt_cmd_send(int argc, char **argv);
int bt_cmd_retry(int argc, char **argv);
int bt_cmd_attach(int argc, char **argv);
int bt_cmd_cancel(int argc, char **argv);
int bt_cmd_rm_queued(int argc, char **argv);
int bt_cmd_worker(int argc, char **argv);
int bt_cmd_handoff(int argc, char **argv);
int bt_cmd_ls(int argc, char **argv);
int bt_cmd_show(int argc, char **argv);
int bt_cmd_search(int argc, char **argv);
int bt_cmd_rm(int argc, char **argv);
int bt_cmd_coders(int argc, char **argv);
int bt_cmd_completion(int argc, char **argv);
int bt_cmd_man(int argc, char **argv);
int bt_cmd_ids(int argc, char **argv);

/* Print "baton: <message>" to stderr; returns code, for `return bt_fail(..)`. */
int bt_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif

#ifndef BT_CMD_STORE_DECL
#define BT_CMD_STORE_DECL
struct bt_store;
/* Open the store at $BATON_HOME (or its default) and recover the runs
 * whose owner died (bt_cmd_recover). Prints the reason and returns
 * BT_EXIT_FAILED on failure, else 0. */
int bt_cmd_open_store(struct bt_store **s);
/* Recover the runs whose owner died: rebuild from its raw output a run
 * whose store record lacks what the raw output holds (rebuild.h), mark the
 * others interrupted (cancelled if a cancel was asked for), and stop their
 * process groups if still alive and still theirs. What it rebuilt, or
 * could not do, is said on stderr. Returns 0 or the store's error (a store
 * that cannot be written: the runs stay as they are). */
int bt_cmd_recover(struct bt_store *s);
/* One line of `baton ls` for c on stdout: short id, coder, state (the
 * last run's, or the conversation's status when not active), last activity,
 * title. */
struct bt_store_conversation;
void bt_cmd_print_conversation(const struct bt_store_conversation *c);
/* The output of a list command (ls, search, coders): lines for people, or
 * JSON lines (--json), or one JSON array (--json-array). */
enum bt_cmd_list_format { BT_CMD_LIST_HUMAN, BT_CMD_LIST_JSON, BT_CMD_LIST_ARRAY };
struct bt_cmd_list {
    enum bt_cmd_list_format format;
    size_t n; /* objects written */
};
/* Apply --json ('j') or --json-array ('J'); both on one line is a usage
 * error (printed): BT_EXIT_USAGE, else 0. */
struct bt_args;
int bt_cmd_list_option(struct bt_cmd_list *l, const struct bt_args *a, int id);
/* Write one JSON object (text without a newline) as the format says. */
void bt_cmd_list_put(struct bt_cmd_list *l, const char *json);
/* End the list: "]" (or "[]") for an array, nothing otherwise. */
void bt_cmd_list_end(struct bt_cmd_list *l);
/* Flush stdout and say whether output was lost or will be: 0, EPIPE for
 * a pipe whose reader is gone, else the errno of the failed write (EIO if
 * unknown: stdio keeps no errno of a write that failed inside it). With
 * ahead, a gone reader counts before any write failed
 * (Linux pipe_poll reports POLLERR), for a turn that need not go on for
 * nobody. SIGPIPE is ignored (main.c), so writes fail instead. */
int bt_cmd_stdout_error(int ahead);
/* For a message: strerror(err), or "a write failed" for the unknown EIO. */
const char *bt_cmd_stdout_reason(int err);
/* A count typed by the user: decimal digits only, 1 to max; 0 otherwise. */
size_t bt_cmd_parse_count(const char *text, size_t max);
/* Sleep ms milliseconds (signals do not cut it short). */
void bt_cmd_sleep_ms(unsigned ms);
/* Resolve CONV (full id or unique prefix) into id; prints why not and
 * returns BT_EXIT_USAGE on failure, else 0. */
int bt_cmd_resolve(struct bt_store *s, const char *text, char *id);
#endif
