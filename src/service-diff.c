/* SPDX-License-Identifier: MIT */
/*
 * service-diff: what a turn, or a whole conversation, changed in its git
 * working tree (service-work.h), from the snapshots its runs kept
 * (docs/snapshots.md): the bounds are the first snapshot before and the
 * last after; a turn retried is its last run's. Shared by `baton diff`,
 * GET /v1/conversations/{id}/diff and .../turns/{n}/diff (the page).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "error.h"
#include "service-work.h"

/* The snapshots that bound turn (0: every turn) among the runs v. 0, or
 * BT_ENOTFOUND when no run of it kept both. */
static int bounds(const struct bt_store_run *v, size_t n, int64_t turn, const char **from,
                  const char **to)
{
    *from = *to = NULL;
    for (size_t i = 0; i < n; i++) {
        if ((turn && v[i].turn != turn) || !v[i].tree_start || !v[i].tree_end)
            continue;
        if (!*from || turn)
            *from = v[i].tree_start; /* a turn: its last run's */
        *to = v[i].tree_end;
    }
    return *from && *to ? 0 : BT_ENOTFOUND;
}

/* turn.completed's changes.reason of a run whose changes are unknown
 * (docs/events.md), in *(char **)data. */
static int unknown_of(void *data, const struct bt_store_event *ev)
{
    if (strcmp(ev->type, "turn.completed") != 0)
        return 0;
    cJSON *j = cJSON_ParseWithLength(ev->data, ev->len);
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "changes");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(ch, "reason");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ch, "unknown")) && cJSON_IsString(why)) {
        free(*(char **)data);
        *(char **)data = bt_xstrdup(why->valuestring);
    }
    cJSON_Delete(j);
    return 0;
}

/* Why the last run of turn (0: any turn) has unknown changes (owned), or
 * NULL: its untracked files were over a snapshot's bounds. */
static char *unknown_reason(struct bt_store *s, const struct bt_store_run *v, size_t n,
                            int64_t turn)
{
    char *why = NULL;
    for (size_t i = n; i-- > 0 && !why;)
        if (!turn || v[i].turn == turn)
            bt_store_event_each(s, v[i].id, 1, unknown_of, &why);
    return why;
}

static int has_turn(const struct bt_store_run *v, size_t n, int64_t turn)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].turn == turn)
            return 1;
    return 0;
}

static int refuse(struct bt_service_diff *d, enum bt_service_result result, int rc, char *message)
{
    d->result = result;
    d->message = message;
    return rc;
}

/* No bounds: say why (unknown changes, or none recorded). */
static int no_bounds(struct bt_store *s, const struct bt_store_conversation *c,
                     const struct bt_store_run *v, size_t n, struct bt_service_diff *d)
{
    const char *what = d->turn ? "that turn" : "this conversation";
    char *unknown = unknown_reason(s, v, n, d->turn);
    if (unknown) {
        char *m =
            bt_xasprintf("the changes of %s are unknown: %s (docs/snapshots.md)", what, unknown);
        free(unknown);
        return refuse(d, BT_SERVICE_FAILED, BT_ENOTFOUND, m);
    }
    return refuse(d, BT_SERVICE_FAILED, BT_ENOTFOUND,
                  bt_xasprintf("no changes were recorded for %s: its directory %s is not in a "
                               "git repository, snapshots were off, or the turn%s did not end "
                               "with a snapshot",
                               what, c->cwd, d->turn ? "" : "s"));
}

/* Make what want asks for between d->from and d->to. */
static int make(struct bt_store *s, const struct bt_store_conversation *c, int want, int colour,
                struct bt_service_diff *d)
{
    const char *dir = c->worktree.repo ? c->worktree.repo : c->cwd;
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(s)), *why = NULL;
    int rc = 0;
    if (want & BT_SERVICE_DIFF_CHANGES) {
        d->changes = bt_repo_changes_summary(dir, snapshots, d->from, d->to, &why);
        rc = d->changes ? 0 : BT_EPROTO;
    }
    if (rc == 0 && (want & BT_SERVICE_DIFF_FILES))
        rc = bt_repo_changes(dir, snapshots, d->from, d->to, &d->files, &why);
    if (rc == 0 && (want & BT_SERVICE_DIFF_PATCH))
        rc = bt_repo_diff(dir, snapshots, d->from, d->to, colour, &d->patch, &why);
    if (rc == 0 && (want & BT_SERVICE_DIFF_TOP)) { /* a worktree's own, else cwd's repository's */
        d->top = c->worktree.path ? bt_xstrdup(c->worktree.path) : bt_repo_top(c->cwd, &why);
        free(why);
        why = NULL;
    }
    free(snapshots);
    if (rc)
        return refuse(d, BT_SERVICE_FAILED, rc, why ? why : bt_xstrdup(bt_strerror(rc)));
    free(why);
    return 0;
}

int bt_service_diff(struct bt_store *s, const char *conv, int64_t turn, int want, int colour,
                    struct bt_service_diff *d)
{
    memset(d, 0, sizeof *d);
    bt_buf_init(&d->patch);
    d->turn = turn;
    struct bt_store_conversation c = {0};
    struct bt_store_run *v = NULL;
    size_t n = 0;
    const char *from, *to;
    int rc;
    if (bt_store_conversation_get(s, conv, &c) || bt_store_run_list(s, conv, &v, &n))
        rc = refuse(d, BT_SERVICE_FAILED, BT_ESTORE,
                    bt_xasprintf("cannot read conversation %s: %s", conv, bt_store_errmsg(s)));
    else if (turn && !has_turn(v, n, turn))
        rc = refuse(d, BT_SERVICE_USAGE, BT_ENOTFOUND,
                    bt_xasprintf("conversation %s has no turn %lld", conv, (long long)turn));
    else if (bounds(v, n, turn, &from, &to) != 0)
        rc = no_bounds(s, &c, v, n, d);
    else {
        snprintf(d->from, sizeof d->from, "%s", from);
        snprintf(d->to, sizeof d->to, "%s", to);
        d->nothing = strcmp(from, to) == 0;
        /* the directory is shared: what changed there is not all the
         * coder's (a worktree of its own is the conversation's alone) */
        if (!d->nothing && !c.worktree.path)
            d->shared_dir = bt_xstrdup(c.cwd);
        rc = make(s, &c, want, colour, d);
        if (rc == 0)
            d->result = BT_SERVICE_OK;
    }
    bt_store_run_list_free(v, n);
    bt_store_conversation_release(&c);
    return rc;
}

void bt_service_diff_release(struct bt_service_diff *d)
{
    free(d->message);
    free(d->shared_dir);
    free(d->changes);
    free(d->top);
    bt_buf_release(&d->patch);
    bt_repo_changes_release(&d->files);
    d->message = d->shared_dir = d->changes = d->top = NULL;
}
