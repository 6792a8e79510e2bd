/* SPDX-License-Identifier: MIT */
/*
 * cmd-group: a group's conversations side by side (`baton group`, and the
 * table `baton run -c a,b,c` ends with): per conversation its coder, the
 * state of its last run, the time, tokens and cost of its runs together,
 * and what its turns changed (the first snapshot to the last, src/repo.h).
 */
#ifndef BT_CMD_GROUP_H
#define BT_CMD_GROUP_H

#include <stdio.h>

#include "store.h"
#include "util.h"

/* One conversation of a group, summed over its runs. */
struct bt_cmd_member {
    const char *state;   /* its last run's state ("completed"), "new" without
                            one (static) */
    int64_t duration_ms; /* its runs' time, a running one's until now */
    int64_t tokens;      /* input and output tokens; -1: none reported */
    double cost_usd;     /* < 0: none reported */
    int64_t files;       /* files changed; -1: nothing recorded (outside git) */
    int64_t added, removed;
};

/* Sum the runs of c into *m. 0 or BT_ESTORE. */
int bt_cmd_member_of(struct bt_store *s, const struct bt_store_conversation *c,
                     struct bt_cmd_member *m);

/* The table of v[0..n) with their rows m on f: coder, conversation,
 * status, duration, tokens, cost, files, +/-, branch. */
void bt_cmd_members_table(FILE *f, const struct bt_store_conversation *v,
                          const struct bt_cmd_member *m, size_t n);

/* c's row as a JSON object appended to b: conversation, coder, model,
 * status, duration_ms, tokens, cost_usd, files, added, removed, worktree. */
void bt_cmd_member_json(struct bt_buf *b, const struct bt_store_conversation *c,
                        const struct bt_cmd_member *m);

#endif
