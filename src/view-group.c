/* SPDX-License-Identifier: MIT */
/*
 * view-group: the JSON objects of groups (view.h): one writer for `baton
 * group ls|show --json` and GET /v1/groups[/{id}].
 */
#include <string.h>

#include "error.h"
#include "json.h"
#include "service-work.h"
#include "view.h"

void bt_view_member(struct bt_buf *b, const struct bt_store_conversation *c,
                    const struct bt_service_member *m)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "conversation", c->id);
    bt_json_member(b, "coder", c->coder);
    bt_json_member(b, "model", c->model);
    bt_json_member(b, "status", m->state);
    bt_buf_addf(b, ",\"duration_ms\":%lld", (long long)m->duration_ms);
    if (m->tokens >= 0)
        bt_buf_addf(b, ",\"tokens\":%lld", (long long)m->tokens);
    else
        bt_buf_adds(b, ",\"tokens\":null");
    if (m->cost_usd >= 0)
        bt_buf_addf(b, ",\"cost_usd\":%.6f", m->cost_usd);
    else
        bt_buf_adds(b, ",\"cost_usd\":null");
    if (m->files >= 0)
        bt_buf_addf(b, ",\"files\":%lld,\"added\":%lld,\"removed\":%lld", (long long)m->files,
                    (long long)m->added, (long long)m->removed);
    else
        bt_buf_adds(b, ",\"files\":null,\"added\":null,\"removed\":null");
    bt_buf_adds(b, ",\"worktree\":");
    bt_view_worktree(b, &c->worktree);
    bt_buf_addc(b, '}');
}

void bt_view_group_head(struct bt_buf *b, const struct bt_store_group *g)
{
    char ts[32];
    bt_time_rfc3339(g->created_ms, ts);
    bt_json_member(b, "id", g->id);
    bt_json_member(b, "name", g->name);
    bt_json_member(b, "created", ts);
}

void bt_view_group(struct bt_buf *b, const struct bt_service_group *g)
{
    bt_buf_addc(b, '{');
    bt_view_group_head(b, &g->group);
    bt_buf_adds(b, ",\"members\":[");
    for (size_t i = 0; i < g->n; i++) {
        if (i)
            bt_buf_addc(b, ',');
        bt_view_member(b, &g->conv[i], &g->member[i]);
    }
    bt_buf_adds(b, "]}");
}

int bt_view_groups(struct bt_store *s, size_t limit, struct bt_buf *b)
{
    struct bt_store_group *v = NULL;
    size_t n = 0;
    if (bt_store_group_list(s, limit, &v, &n) != 0)
        return BT_ESTORE;
    bt_buf_adds(b, "{\"groups\":[");
    for (size_t i = 0; i < n; i++) {
        bt_buf_adds(b, i ? ",{" : "{");
        bt_view_group_head(b, &v[i]);
        bt_buf_addf(b, ",\"members\":%lld}", (long long)v[i].members);
    }
    bt_buf_adds(b, "]}\n");
    bt_store_group_list_free(v, n);
    return 0;
}
