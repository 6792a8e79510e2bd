/* SPDX-License-Identifier: MIT */
/*
 * view-list: the objects baton serve answers with that gather several
 * reads of the store (view.h): the conversation list or search, a
 * conversation with its transcript and runs, the coders.
 */
#include <stdlib.h>
#include <string.h>

#include "coder.h"
#include "error.h"
#include "event.h"
#include "store-follow.h"
#include "store.h"
#include "view.h"

/* ,"context":{tokens, window, percent} of u, or null. */
static void view_context(struct bt_buf *b, const struct bt_usage *u)
{
    if (!u || u->context_tokens < 0 || u->context_window <= 0) {
        bt_buf_adds(b, ",\"context\":null");
        return;
    }
    double pct = 100.0 * (double)u->context_tokens / (double)u->context_window;
    bt_buf_addf(b, ",\"context\":{\"tokens\":%lld,\"window\":%lld,\"percent\":%.1f}",
                (long long)u->context_tokens, (long long)u->context_window, pct);
}

/* A list entry: the ls object, then snippet (search) and context, in one object. */
static void entry(struct bt_store *s, struct bt_buf *b, const struct bt_store_conversation *c,
                  const char *snippet, int search)
{
    bt_view_conversation(b, c);
    b->data[--b->len] = '\0'; /* reopen the object */
    if (search)
        bt_json_member(b, "snippet", snippet);
    struct bt_store_run last = {0};
    int have = c->last_run[0] && bt_store_run_get(s, c->last_run, &last) == 0;
    view_context(b, have ? &last.usage : NULL);
    bt_store_run_release(&last);
    bt_buf_addc(b, '}');
}

int bt_view_conversations(struct bt_store *s, const char *q, size_t limit, struct bt_buf *b)
{
    bt_buf_adds(b, "{\"conversations\":[");
    int rc;
    if (q) {
        struct bt_store_search_hit *v = NULL;
        size_t n = 0;
        int more = 0;
        rc = bt_store_search(s, q, limit, &v, &n, &more);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (i)
                bt_buf_addc(b, ',');
            entry(s, b, &v[i].conv, v[i].snippet, 1);
        }
        bt_store_search_free(v, n);
    } else {
        struct bt_store_conversation *v = NULL;
        size_t n = 0;
        rc = bt_store_conversation_list(s, limit, &v, &n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (i)
                bt_buf_addc(b, ',');
            entry(s, b, &v[i], NULL, 0);
        }
        bt_store_conversation_list_free(v, n);
    }
    bt_buf_adds(b, "]}\n");
    return rc;
}

static void view_queued(struct bt_buf *b, const struct bt_store_message *v, size_t n)
{
    bt_buf_adds(b, ",\"queued\":[");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (v[i].state != BT_STORE_MSG_QUEUED)
            continue;
        bt_buf_addf(b, "%s{\"n\":%lld", first ? "" : ",", (long long)v[i].queue_no);
        bt_json_member(b, "text", v[i].text);
        char ts[32];
        bt_time_rfc3339(v[i].created_ms, ts);
        bt_json_member(b, "created", ts);
        bt_buf_addc(b, '}');
        first = 0;
    }
    bt_buf_addc(b, ']');
}

/* runs, running, context, last_event */
static int view_runs(struct bt_store *s, struct bt_buf *b, const char *conv)
{
    struct bt_store_run *v = NULL;
    size_t n = 0;
    int rc = bt_store_run_list(s, conv, &v, &n);
    bt_buf_adds(b, ",\"runs\":[");
    const struct bt_usage *context = NULL;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (i)
            bt_buf_addc(b, ',');
        bt_view_run(b, &v[i]);
        if (v[i].usage.context_tokens >= 0 && v[i].usage.context_window > 0)
            context = &v[i].usage;
    }
    bt_buf_addc(b, ']');
    const struct bt_store_run *last = n ? &v[n - 1] : NULL;
    bt_json_member(b, "running", last && last->state == BT_STORE_RUN_RUNNING ? last->id : NULL);
    view_context(b, context);
    int64_t seq = 0;
    if (rc == 0 && last)
        rc = bt_store_event_max_seq(s, last->id, &seq);
    if (seq > 0)
        bt_buf_addf(b, ",\"last_event\":\"%s:%lld\"", last->id, (long long)seq);
    else
        bt_buf_adds(b, ",\"last_event\":null");
    bt_store_run_list_free(v, n);
    return rc;
}

/* A streaming answer's text stays "" in the store until its run ends:
 * give it what its run said so far, as `baton attach` shows it. */
static void streaming_text(struct bt_store *s, struct bt_store_message *m)
{
    char *text = NULL;
    if (m->state != BT_STORE_MSG_STREAMING || !m->run[0] || *m->text)
        return;
    if (bt_store_run_answer(s, m->run, &text) == 0) {
        free(m->text);
        m->text = text;
    } else {
        free(text);
    }
}

int bt_view_conversation_detail(struct bt_store *s, const char *conv, bt_view_html_fn html,
                                struct bt_buf *b)
{
    struct bt_store_conversation c = {0};
    struct bt_store_message *v = NULL;
    size_t n = 0;
    int rc = bt_store_conversation_get(s, conv, &c);
    if (rc == 0)
        rc = bt_store_message_list(s, conv, &v, &n);
    if (rc == 0) {
        bt_buf_adds(b, "{\"conversation\":");
        bt_view_conversation(b, &c);
        bt_buf_adds(b, ",\"messages\":[");
        for (size_t i = 0; i < n; i++) {
            if (i)
                bt_buf_addc(b, ',');
            streaming_text(s, &v[i]);
            bt_view_message(b, &v[i], html);
        }
        bt_buf_addc(b, ']');
        view_queued(b, v, n);
        rc = view_runs(s, b, conv);
        bt_buf_adds(b, "}\n");
    }
    bt_store_message_list_free(v, n);
    bt_store_conversation_release(&c);
    return rc;
}

/* The stored version of the executable, else asked (and stored). */
static char *version_of(struct bt_store *s, const struct bt_coder *c, const char *path)
{
    struct bt_store_exe id;
    char *version = NULL;
    int known = bt_store_exe_stat(c->name, path, &id) == 0;
    if (known && bt_store_coder_version_get(s, &id, &version) == 0 && version)
        return version;
    free(version);
    version = NULL;
    int rc = bt_coder_version(c, path, &version);
    if (known && (rc == 0 || rc == BT_EPROTO))
        bt_store_coder_version_put(s, &id, version);
    return version;
}

int bt_view_coders(struct bt_store *s, struct bt_buf *b)
{
    bt_buf_adds(b, "{\"coders\":[");
    for (size_t i = 0; bt_coders[i]; i++) {
        const struct bt_coder *cd = bt_coders[i];
        struct bt_coder_exe exe;
        char *version = NULL;
        if (bt_coder_resolve(cd, &exe) == 0)
            version = version_of(s, cd, exe.path);
        if (i)
            bt_buf_addc(b, ',');
        bt_view_coder(b, cd, &exe, version);
        free(version);
        bt_coder_exe_release(&exe);
    }
    bt_buf_adds(b, "]}\n");
    return 0;
}
