/* SPDX-License-Identifier: MIT */
/*
 * view: JSON objects shared by the CLI and baton serve (view.h).
 */
#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "coder.h"
#include "error.h"
#include "event.h"
#include "service.h"
#include "store.h"

static void member_time(struct bt_buf *b, const char *key, int64_t ms)
{
    char ts[32];
    if (ms <= 0) {
        bt_buf_addf(b, ",\"%s\":null", key);
        return;
    }
    bt_time_rfc3339(ms, ts);
    bt_json_member(b, key, ts);
}

static void member_int(struct bt_buf *b, const char *key, int64_t v)
{
    if (v < 0)
        bt_buf_addf(b, ",\"%s\":null", key);
    else
        bt_buf_addf(b, ",\"%s\":%lld", key, (long long)v);
}

const char *bt_view_run_state(enum bt_store_run_state state, int waiting)
{
    return state == BT_STORE_RUN_RUNNING && waiting ? "waiting" : bt_store_run_state_name(state);
}

void bt_view_conversation(struct bt_buf *b, const struct bt_store_conversation *c)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "id", c->id);
    bt_json_member(b, "title", c->title);
    bt_json_member(b, "coder", c->coder);
    bt_json_member(b, "model", c->model);
    bt_json_member(b, "cwd", c->cwd);
    bt_json_member(b, "native_session_id", c->native_session_id);
    bt_json_member(b, "status", bt_store_conv_status_name(c->status));
    bt_json_member(b, "last_run", c->last_run[0] ? c->last_run : NULL);
    bt_json_member(b, "last_run_state",
                   c->last_run[0] ? bt_view_run_state(c->last_run_state, c->waiting) : NULL);
    member_time(b, "created", c->created_ms);
    member_time(b, "updated", c->updated_ms);
    bt_buf_adds(b, ",\"worktree\":");
    bt_view_worktree(b, &c->worktree);
    bt_json_member(b, "group", c->group[0] ? c->group : NULL);
    bt_buf_addc(b, '}');
}

void bt_view_worktree(struct bt_buf *b, const struct bt_store_worktree *w)
{
    if (!w->path) {
        bt_buf_adds(b, "null");
        return;
    }
    bt_buf_addc(b, '{');
    bt_json_member(b, "path", w->path);
    bt_json_member(b, "branch", w->branch);
    bt_json_member(b, "base", w->base);
    bt_json_member(b, "start", w->start);
    bt_buf_addc(b, '}');
}

void bt_view_message(struct bt_buf *b, const struct bt_store_message *m, bt_view_html_fn html)
{
    bt_buf_addf(b, "{\"id\":%lld,\"seq\":%lld", (long long)m->id, (long long)m->seq);
    bt_json_member(b, "role", bt_store_role_name(m->role));
    bt_json_member(b, "state", bt_store_msg_state_name(m->state));
    bt_json_member(b, "text", m->text);
    bt_json_member(b, "error_kind", m->error_kind);
    bt_json_member(b, "error", m->error_text);
    bt_json_member(b, "run", m->run[0] ? m->run : NULL);
    if (m->queue_no > 0) /* the number rm-queued takes */
        bt_buf_addf(b, ",\"queue_no\":%lld", (long long)m->queue_no);
    else
        bt_buf_adds(b, ",\"queue_no\":null");
    member_time(b, "created", m->created_ms);
    if (html) {
        struct bt_buf h = BT_BUF_INIT;
        html(&h, m->text, strlen(m->text));
        bt_buf_adds(b, ",\"html\":");
        bt_json_quote(b, h.data ? h.data : "", h.len);
        bt_buf_release(&h);
    }
    bt_buf_addc(b, '}');
}

static void view_usage(struct bt_buf *b, const struct bt_usage *u)
{
    const struct {
        const char *key;
        int64_t v;
    } f[] = {{"input_tokens", u->input_tokens},     {"cached_input_tokens", u->cached_input_tokens},
             {"output_tokens", u->output_tokens},   {"reasoning_tokens", u->reasoning_tokens},
             {"context_tokens", u->context_tokens}, {"context_window", u->context_window}};
    bt_buf_adds(b, ",\"usage\":{");
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].v < 0)
            bt_buf_addf(b, "%s\"%s\":null", i ? "," : "", f[i].key);
        else
            bt_buf_addf(b, "%s\"%s\":%lld", i ? "," : "", f[i].key, (long long)f[i].v);
    }
    if (u->cost_usd < 0)
        bt_buf_adds(b, ",\"cost_usd\":null}");
    else
        bt_buf_addf(b, ",\"cost_usd\":%.6f}", u->cost_usd);
}

void bt_view_run(struct bt_buf *b, const struct bt_store_run *r)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "id", r->id);
    bt_buf_addf(b, ",\"turn\":%lld", (long long)r->turn);
    bt_json_member(b, "state", bt_view_run_state(r->state, r->waiting));
    bt_json_member(b, "coder", r->coder);
    bt_json_member(b, "coder_version", r->coder_version);
    bt_json_member(b, "model", r->model);
    member_time(b, "started", r->started_ms);
    member_time(b, "ended", r->ended_ms);
    member_int(b, "exit_code", r->exit_code);
    bt_json_member(b, "error_kind", r->error_kind);
    bt_json_member(b, "error", r->error_text);
    bt_json_member(b, "native_session_id", r->native_session_id);
    view_usage(b, &r->usage);
    bt_buf_addf(b, ",\"cancel_requested\":%s}", r->cancel_ms > 0 ? "true" : "false");
}

void bt_view_steered(struct bt_buf *b, const char *conversation,
                     const struct bt_service_steered *st)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "conversation", conversation);
    bt_json_member(b, "run", st->run[0] ? st->run : NULL);
    if (st->control > 0)
        bt_buf_addf(b, ",\"control\":%lld", (long long)st->control);
    else
        bt_buf_adds(b, ",\"control\":null");
    bt_json_member(b, "state", bt_store_control_state_name(st->state));
    if (st->state == BT_STORE_CONTROL_QUEUED && st->queue_no > 0)
        bt_buf_addf(b, ",\"queue_no\":%lld", (long long)st->queue_no);
    else
        bt_buf_adds(b, ",\"queue_no\":null");
    bt_json_member(b, "reason", st->state == BT_STORE_CONTROL_QUEUED ? st->reason : NULL);
    bt_buf_addc(b, '}');
}

void bt_view_coder(struct bt_buf *b, const struct bt_coder *c, const struct bt_coder_exe *exe,
                   const char *version)
{
    bt_buf_addc(b, '{');
    bt_json_member(b, "coder", c->name);
    bt_buf_addf(b, ",\"installed\":%s", exe->path ? "true" : "false");
    bt_json_member(b, "path", exe->path);
    bt_json_member(b, "launcher", exe->launcher);
    bt_json_member(b, "version", version);
    /* null: nothing to compare (not installed, or its version unknown) */
    bt_buf_addf(b, ",\"tested\":%s",
                !version                      ? "null"
                : bt_coder_tested(c, version) ? "true"
                                              : "false");
    bt_buf_adds(b, ",\"tested_versions\":[");
    const char *const *v = bt_coder_tested_versions(c);
    for (size_t i = 0; v[i]; i++) {
        if (i)
            bt_buf_addc(b, ',');
        bt_json_quote(b, v[i], strlen(v[i]));
    }
    bt_buf_addf(b, "],\"steers\":%s}", bt_coder_steers(c) ? "true" : "false");
}
