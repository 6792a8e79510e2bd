/* SPDX-License-Identifier: MIT */
/*
 * service-keep: keeping the work of a conversation's own worktree (`baton
 * keep`, POST /v1/conversations/{id}/keep): its changes committed on its
 * branch, then the base fast-forwarded or merged (repo.h, bt_repo_keep);
 * with prune the worktree and branch go, and in a group the others' too
 * (keeping one result means dropping the others). Also the removal of a
 * conversation's worktree the front ends share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "service-work.h"

struct bt_repo_worktree bt_service_worktree_of(const struct bt_store_conversation *c)
{
    return (struct bt_repo_worktree){.path = c->worktree.path,
                                     .cwd = c->cwd,
                                     .branch = c->worktree.branch,
                                     .base = c->worktree.base,
                                     .start = c->worktree.start,
                                     .repo = c->worktree.repo};
}

int bt_service_worktree_remove(const struct bt_store_conversation *c, enum bt_repo_drop drop,
                               char **leftover, char **why)
{
    *leftover = *why = NULL;
    if (!c->worktree.path)
        return BT_ENOTFOUND;
    struct bt_repo_worktree wt = bt_service_worktree_of(c);
    char *said = NULL;
    int rc = bt_repo_worktree_drop(&wt, drop, &said);
    if (rc == 0)
        *leftover = said; /* it was half gone: what was left went */
    else
        *why = said ? said : bt_xstrdup(bt_strerror(rc));
    return rc;
}

const char *bt_service_kept_how(enum bt_repo_kept_how how)
{
    return how == BT_REPO_KEPT_MERGE          ? "merge"
           : how == BT_REPO_KEPT_FAST_FORWARD ? "fast-forward"
                                              : "none";
}

/* The message of the commit of the worktree's changes. */
static char *message_of(const struct bt_store_conversation *c)
{
    return bt_xasprintf("%s\n\nThe work of baton conversation %s (%s%s%s).\n",
                        *c->title ? c->title : "baton", c->id, c->coder, c->model ? ", " : "",
                        c->model ? c->model : "");
}

/* c's worktree is gone: say it in k (leftover taken). */
static void add_pruned(struct bt_service_kept *k, const struct bt_store_conversation *c,
                       char *leftover)
{
    k->pruned_v = bt_xrealloc(k->pruned_v, (k->pruned_n + 1) * sizeof *k->pruned_v);
    struct bt_service_pruned *p = &k->pruned_v[k->pruned_n++];
    memcpy(p->conversation, c->id, BT_ID_SIZE);
    p->path = bt_xstrdup(c->worktree.path);
    p->branch = bt_xstrdup(c->worktree.branch);
    p->leftover = leftover;
}

/* Prune in a group: the other conversations' worktrees and branches go,
 * with what they hold; their conversations stay. */
static void prune_others(struct bt_store *s, const struct bt_store_conversation *c,
                         struct bt_service_kept *k)
{
    struct bt_store_group g;
    struct bt_store_conversation *v = NULL;
    size_t n = 0;
    if (!c->group[0] || bt_store_group_get(s, c->group, &g, &v, &n) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].id, c->id) == 0 || !v[i].worktree.path)
            continue;
        if (v[i].last_run_state == BT_STORE_RUN_RUNNING) {
            bt_strv_pushf(&k->notes, "kept the worktree of %.12s (%s): a turn of it runs", v[i].id,
                          v[i].coder);
            continue;
        }
        /* one the user moved, locked or worked in is kept, and said */
        char *leftover = NULL, *why = NULL;
        int rc = bt_service_worktree_remove(&v[i], BT_REPO_DROP_WORK, &leftover, &why);
        if (rc == 0)
            add_pruned(k, &v[i], leftover);
        else if (rc != BT_ENOTFOUND)
            bt_strv_pushf(&k->notes, "kept worktree %s and branch %s: %s", v[i].worktree.path,
                          v[i].worktree.branch, why);
        free(why);
    }
    bt_store_conversation_list_free(v, n);
    bt_store_group_release(&g);
}

static int refuse(struct bt_service_kept *k, enum bt_service_result result, int rc, char *message)
{
    k->result = result;
    k->message = message;
    return rc;
}

/* Keep c's work, then prune. */
static int keep(struct bt_store *s, const struct bt_store_conversation *c, int prune,
                struct bt_service_kept *k)
{
    if (!c->worktree.path)
        return refuse(k, BT_SERVICE_USAGE, -EINVAL,
                      bt_xasprintf("conversation %.12s has no worktree of its own: its "
                                   "changes are in %s already",
                                   c->id, c->cwd));
    if (c->last_run_state == BT_STORE_RUN_RUNNING)
        return refuse(k, BT_SERVICE_USAGE, BT_EBUSY,
                      bt_xasprintf("conversation %.12s has a turn running: wait for it to end or "
                                   "cancel it, then keep it",
                                   c->id));
    k->branch = bt_xstrdup(c->worktree.branch);
    k->base = bt_xstrdup(c->worktree.base);
    struct bt_repo_worktree wt = bt_service_worktree_of(c);
    char *why = NULL, *message = message_of(c);
    int rc = bt_repo_keep(&wt, message, &k->kept, &why);
    free(message);
    if (rc) {
        int usage = rc == -EINVAL;
        refuse(k, usage ? BT_SERVICE_USAGE : BT_SERVICE_FAILED, rc,
               bt_xasprintf("cannot keep conversation %.12s: %s%s", c->id, why,
                            !usage && k->kept.committed
                                ? " (its changes are committed on its branch)"
                                : ""));
        free(why);
        return rc;
    }
    free(why);
    if (!prune)
        return 0;
    char *leftover = NULL;
    rc = bt_service_worktree_remove(c, BT_REPO_DROP_NOTHING, &leftover, &why);
    if (rc) /* kept, yet not pruned: the caller says so */
        return refuse(k, BT_SERVICE_FAILED, rc,
                      bt_xasprintf("kept worktree %s and branch %s: %s", c->worktree.path,
                                   c->worktree.branch, why));
    k->pruned = 1;
    add_pruned(k, c, leftover);
    prune_others(s, c, k);
    return 0;
}

int bt_service_keep(struct bt_store *s, const char *conv, int prune, struct bt_service_kept *k)
{
    memset(k, 0, sizeof *k);
    bt_strv_init(&k->notes);
    snprintf(k->conversation, sizeof k->conversation, "%s", conv);
    struct bt_store_conversation c = {0};
    int rc;
    if (bt_store_conversation_get(s, conv, &c) != 0)
        rc = refuse(k, BT_SERVICE_FAILED, BT_ESTORE,
                    bt_xasprintf("cannot read conversation %s: %s", conv, bt_store_errmsg(s)));
    else
        rc = keep(s, &c, prune, k);
    bt_store_conversation_release(&c);
    return rc;
}

void bt_service_kept_release(struct bt_service_kept *k)
{
    free(k->message);
    free(k->branch);
    free(k->base);
    for (size_t i = 0; i < k->pruned_n; i++) {
        free(k->pruned_v[i].path);
        free(k->pruned_v[i].branch);
        free(k->pruned_v[i].leftover);
    }
    free(k->pruned_v);
    bt_repo_kept_release(&k->kept);
    bt_strv_release(&k->notes);
    k->message = k->branch = k->base = NULL;
    k->pruned_v = NULL;
    k->pruned_n = 0;
}
