/* SPDX-License-Identifier: MIT */
/*
 * service-group: a group's conversations side by side (`baton group show`,
 * the table `run -c a,b,c` ends with, GET /v1/groups/{id}): per
 * conversation the state of its last run, the time, tokens and cost of its
 * runs together, and what its turns changed (the first snapshot to the
 * last, repo.h).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "service-work.h"
#include "view.h"

/* Add the runs' time, tokens and cost. */
static void sum_runs(const struct bt_store_run *r, size_t n, struct bt_service_member *m)
{
    int64_t now = bt_now_ms();
    for (size_t i = 0; i < n; i++) {
        int64_t end = r[i].ended_ms ? r[i].ended_ms : now;
        m->duration_ms += end > r[i].started_ms ? end - r[i].started_ms : 0;
        const struct bt_usage *u = &r[i].usage;
        int64_t t = (u->input_tokens > 0 ? u->input_tokens : 0) +
                    (u->output_tokens > 0 ? u->output_tokens : 0);
        if (u->input_tokens >= 0 || u->output_tokens >= 0)
            m->tokens = (m->tokens < 0 ? 0 : m->tokens) + t;
        if (u->cost_usd >= 0)
            m->cost_usd = (m->cost_usd < 0 ? 0 : m->cost_usd) + u->cost_usd;
    }
}

/* The changes from the first run's snapshot to the last one's. */
static void sum_changes(struct bt_store *s, const struct bt_store_conversation *c,
                        const struct bt_store_run *r, size_t n, struct bt_service_member *m)
{
    const char *from = NULL, *to = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!from && r[i].tree_start)
            from = r[i].tree_start;
        if (r[i].tree_end)
            to = r[i].tree_end;
    }
    struct bt_repo_changes ch = {0};
    char *why = NULL;
    const char *dir = c->worktree.repo ? c->worktree.repo : c->cwd;
    char *snapshots = bt_xasprintf("%s/snapshots", bt_store_home(s));
    if (from && to && bt_repo_changes(dir, snapshots, from, to, &ch, &why) == 0) {
        m->files = (int64_t)ch.n;
        m->added = ch.added;
        m->removed = ch.removed;
    }
    bt_repo_changes_release(&ch);
    free(snapshots);
    free(why);
}

int bt_service_member_of(struct bt_store *s, const struct bt_store_conversation *c,
                         struct bt_service_member *m)
{
    *m = (struct bt_service_member){.state = "new", .tokens = -1, .cost_usd = -1, .files = -1};
    struct bt_store_run *r = NULL;
    size_t n = 0;
    if (bt_store_run_list(s, c->id, &r, &n) != 0)
        return BT_ESTORE;
    if (c->last_run[0])
        m->state = bt_view_run_state(c->last_run_state, c->waiting);
    sum_runs(r, n, m);
    sum_changes(s, c, r, n, m);
    bt_store_run_list_free(r, n);
    return 0;
}

int bt_service_group_show(struct bt_store *s, const char *id, struct bt_service_group *g)
{
    memset(g, 0, sizeof *g);
    int rc = bt_store_group_get(s, id, &g->group, &g->conv, &g->n);
    if (rc)
        return rc;
    g->member = bt_xcalloc(g->n ? g->n : 1, sizeof *g->member);
    for (size_t i = 0; i < g->n && rc == 0; i++)
        rc = bt_service_member_of(s, &g->conv[i], &g->member[i]);
    return rc;
}

void bt_service_group_release(struct bt_service_group *g)
{
    if (g->group.name)
        bt_store_group_release(&g->group);
    bt_store_conversation_list_free(g->conv, g->n);
    free(g->member);
    memset(g, 0, sizeof *g);
}
