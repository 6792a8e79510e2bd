/* SPDX-License-Identifier: MIT */
/* cmd-fanout: one prompt to several coders at once (`baton run -c a,b,c`). */
#ifndef BT_CMD_FANOUT_H
#define BT_CMD_FANOUT_H

#include "service.h"

/* Start the turn t (its prompt, cwd, worktree and settings) with each
 * coder of coders ("codex,pi,claude": names separated by commas) in a
 * conversation of its own, all in a new group, each in a detached worker;
 * then, unless detach, follow them to their ends (json: their events on
 * stdout; else live lines on a terminal and the group's table). Returns
 * the exit code: 0 when every turn completed, else the first other (an
 * unknown coder: usage, and nothing is made). */
int bt_cmd_fanout(struct bt_store *s, const struct bt_service_turn *t, const char *coders, int json,
                  int detach);

#endif
