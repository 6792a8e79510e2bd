/* SPDX-License-Identifier: MIT */
/* cmd-worktree: a conversation's worktree in the commands (cmd-worktree.h). */
#include "cmd-worktree.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd-common.h"
#include "cmd.h"
#include "error.h"
#include "service-work.h"

struct bt_repo_worktree bt_cmd_worktree_of(const struct bt_store_conversation *c)
{
    return bt_service_worktree_of(c);
}

int bt_cmd_worktree_check(const struct bt_store_conversation *c, int force, struct bt_strv *notes)
{
    if (!c->worktree.path)
        return 0;
    struct bt_repo_worktree wt = bt_cmd_worktree_of(c);
    char *why = NULL;
    int rc = bt_repo_worktree_kept(&wt, &why), code = 0;
    if (rc == BT_ENOTFOUND) /* its only copy of the work, maybe: the user's to judge */
        bt_strv_pushf(notes, "kept worktree %s as it is: %s, so baton cannot tell what it holds",
                      wt.path, why);
    else if (rc == -EBUSY && !force)
        code = bt_cmd_fail(BT_EXIT_USAGE,
                           "conversation %.12s keeps its worktree: %s\n"
                           "       (`baton diff %.12s` shows the turns' changes; `baton rm --force "
                           "%.12s` removes them with it)",
                           c->id, why, c->id, c->id);
    else if (rc && rc != -EBUSY)
        code = bt_cmd_fail(BT_EXIT_FAILED, "cannot look at the worktree %s: %s", wt.path, why);
    free(why);
    return code;
}

int bt_cmd_worktree_remove(const struct bt_store_conversation *c, enum bt_repo_drop drop, int quiet)
{
    struct bt_repo_worktree wt = bt_cmd_worktree_of(c);
    char *why = NULL, *leftover = NULL;
    int rc = bt_service_worktree_remove(c, drop, &leftover, &why), code = 0;
    if (rc == 0 && !quiet) {
        fputs(leftover ? "removed what was left of worktree " : "removed worktree ", stdout);
        bt_term_write(stdout, wt.path, strlen(wt.path));
        fputs(" and branch ", stdout);
        bt_term_write(stdout, wt.branch, strlen(wt.branch));
        if (leftover) {
            fputs(" (", stdout);
            bt_term_write(stdout, leftover, strlen(leftover));
            fputc(')', stdout);
        }
        fputc('\n', stdout);
    } else if (rc && rc != BT_ENOTFOUND) {
        code = bt_cmd_fail(BT_EXIT_FAILED, "kept worktree %s and branch %s: %s", wt.path, wt.branch,
                           why);
    }
    free(why);
    free(leftover);
    return code;
}
