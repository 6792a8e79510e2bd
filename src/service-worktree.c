/* SPDX-License-Identifier: MIT */
/*
 * service-worktree: a new conversation's own git worktree (`baton run
 * --worktree`): made under $BATON_HOME/worktrees/<short id> on the branch
 * baton/<short id> (or the one asked for) before the conversation is
 * stored, so every turn runs in it from the first; taken back if the
 * conversation cannot be stored.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "service-conv.h"
#include "service-int.h"
#include "service-work.h"

int bt_service_worktree_make(struct bt_store *s, const struct bt_service_turn *t,
                             const char id[BT_ID_SIZE], struct bt_repo_worktree *wt,
                             struct bt_service_outcome *out)
{
    char *path = bt_xasprintf("%s/worktrees/%.12s", bt_store_home(s), id);
    char *branch = t->branch ? bt_xstrdup(t->branch) : bt_xasprintf("baton/%.12s", id);
    char *why = NULL;
    int rc = bt_repo_worktree_add(t->cwd, path, branch, wt, &why);
    if (rc == BT_ENOTFOUND) {
        out->result = BT_SERVICE_USAGE;
        out->message = bt_xasprintf("a worktree needs a git repository: %s is not in one", t->cwd);
    } else if (rc) {
        out->result = rc == BT_EPROTO ? BT_SERVICE_FAILED : BT_SERVICE_USAGE;
        out->message = bt_xasprintf("cannot make a worktree: %s", why ? why : bt_strerror(rc));
    }
    free(why);
    free(branch);
    free(path);
    return rc;
}

void bt_service_worktree_drop(const struct bt_repo_worktree *wt)
{
    char *why = NULL;
    bt_repo_worktree_remove(wt, 1, &why); /* freshly made: nothing to lose */
    free(why);
}

int bt_service_conversation_new(struct bt_store *s, const struct bt_service_turn *t,
                                const char id[BT_ID_SIZE], struct bt_service_outcome *out)
{
    memset(out, 0, sizeof *out);
    struct bt_store_conversation_new cn = {.id = id,
                                           .coder = t->coder,
                                           .model = t->model,
                                           .cwd = t->cwd,
                                           .title = t->prompt,
                                           .group = t->group};
    if (!t->worktree)
        return bt_service_create(s, &cn, out);
    struct bt_repo_worktree wt = {0};
    int rc = bt_service_worktree_make(s, t, id, &wt, out);
    if (rc)
        return rc;
    struct bt_store_worktree sw = {
        .path = wt.path, .branch = wt.branch, .base = wt.base, .start = wt.start, .repo = wt.repo};
    cn.cwd = wt.cwd; /* its turns run there */
    cn.worktree = &sw;
    rc = bt_service_create(s, &cn, out);
    if (rc) /* freshly made for it: nothing to lose */
        bt_service_worktree_drop(&wt);
    bt_repo_worktree_release(&wt);
    return rc;
}
