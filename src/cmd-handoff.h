/* SPDX-License-Identifier: MIT */
/*
 * cmd-handoff: what other commands need to know of `baton handoff`: the
 * tmux session a `handoff --tmux` starts for a conversation (`baton rm`
 * says when one still runs and leaves it alone).
 */
#ifndef BT_CMD_HANDOFF_H
#define BT_CMD_HANDOFF_H

enum { BT_HANDOFF_TMUX_NAME = 32 }; /* bytes of a tmux session name, NUL included */

/* The tmux session name of conversation conv: "baton-<first 12 of its id>". */
void bt_handoff_tmux_name(const char *conv, char name[BT_HANDOFF_TMUX_NAME]);

/* Set name as bt_handoff_tmux_name and ask tmux (`tmux has-session`, on
 * the server this environment names) whether that session exists.
 * Returns 1 if it does, 0 if not (or tmux could not tell), -ENOENT when
 * tmux is not installed. Runs a process; blocks until it ends. */
int bt_handoff_tmux_running(const char *conv, char name[BT_HANDOFF_TMUX_NAME]);

#endif
