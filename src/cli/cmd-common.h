/* SPDX-License-Identifier: MIT */
/*
 * cmd-common: what several commands share (cmd-common.c): the error
 * message, opening the store (and recovering the runs whose baton process
 * is gone), resolving a conversation id typed by the user, the output of
 * the list commands and whether stdout still takes it.
 */
#ifndef BT_CMD_COMMON_H
#define BT_CMD_COMMON_H

#include <stddef.h>

struct bt_args;
struct bt_store;
struct bt_store_conversation;

/* Print "baton: <message>" to stderr; returns code, for `return bt_cmd_fail(..)`. */
int bt_cmd_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Open the store at $BATON_HOME (or its default) and recover the runs
 * whose owner died (bt_cmd_recover). Prints the reason and returns
 * BT_EXIT_FAILED on failure, else 0. */
int bt_cmd_open_store(struct bt_store **s);
/* Recover the runs whose owner died: rebuild from its raw output a run
 * whose store record lacks what the raw output holds (rebuild.h), mark the
 * others interrupted (cancelled if a cancel was asked for), and stop their
 * process groups if still alive and still theirs. What it rebuilt, or
 * could not do, is said on stderr (bt_service_recover). Returns 0 or the store's error (a store
 * that cannot be written: the runs stay as they are). */
int bt_cmd_recover(struct bt_store *s);
/* A line a service call says (bt_service_say_fn): "baton: LINE" on stderr. */
void bt_cmd_say(void *data, const char *line);
/* One line of `baton ls` for c on stdout: short id, coder, state (the
 * last run's, or the conversation's status when not active), last activity,
 * title. */
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
/* -c LIST of a command: every name of the comma-separated list (one name
 * unless several) a coder. 0, or the usage error printed (exit code
 * BT_EXIT_USAGE) that names every coder or the empty name. */
int bt_cmd_check_coders(const struct bt_args *a, const char *list, int several);
/* Sleep ms milliseconds (signals do not cut it short). */
void bt_cmd_sleep_ms(unsigned ms);
/* Resolve CONV (full id or unique prefix) into id; prints why not and
 * returns BT_EXIT_USAGE on failure, else 0. */
int bt_cmd_resolve(struct bt_store *s, const char *text, char *id);

#endif
