/* SPDX-License-Identifier: MIT */
/*
 * cmd-worktree: what the commands do with a conversation's own git
 * worktree (`baton run --worktree`, src/repo.h): rm's check before it
 * removes anything, and the removal (rm, keep --prune).
 */
#ifndef BT_CMD_WORKTREE_H
#define BT_CMD_WORKTREE_H

#include "repo.h"
#include "store.h"

/* c's worktree as repo.h takes it (borrowed strings; path NULL: none). */
struct bt_repo_worktree bt_cmd_worktree_of(const struct bt_store_conversation *c);

/* Whether rm may remove c's worktree and branch: 0 (also when c has none,
 * or its repository is gone: then a line for notes says so), or exit 2
 * with the reason on stderr when it holds work (changes, or commits only
 * its branch has) and force is 0. */
int bt_cmd_worktree_check(const struct bt_store_conversation *c, int force, struct bt_strv *notes);

/* Remove c's worktree and branch, losing what drop allows (repo.h),
 * saying so on stdout unless quiet; 0, or exit 1 with the reason on
 * stderr. */
int bt_cmd_worktree_remove(const struct bt_store_conversation *c, enum bt_repo_drop drop,
                           int quiet);

#endif
