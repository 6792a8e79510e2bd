/* SPDX-License-Identifier: MIT */
/* rig: a coder's parser and runner wired for unit tests (see rig.h). */
#include "rig.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "error.h"

static void on_event(void *data, const struct bt_event *ev)
{
    struct bt_test_rig *r = data;
    bt_buf_adds(&r->events, bt_event_type_name(ev->type));
    if (ev->type == BT_EVENT_WARNING || ev->type == BT_EVENT_ERROR)
        bt_buf_addf(&r->events, ":%s", ev->kind);
    if (ev->type == BT_EVENT_APPROVAL_RESOLVED || ev->type == BT_EVENT_APPROVAL_REQUESTED)
        bt_buf_addf(&r->events, ":%s:%s", ev->approval_kind, ev->decision ? ev->decision : "");
    if (ev->type == BT_EVENT_ITEM_STARTED || ev->type == BT_EVENT_ITEM_COMPLETED ||
        ev->type == BT_EVENT_ITEM_DELTA)
        bt_buf_addf(&r->events, "/%s", bt_item_kind_name(ev->item.kind));
    if (ev->type == BT_EVENT_ITEM_COMPLETED && ev->item.status)
        bt_buf_addf(&r->events, ":%s", ev->item.status);
    if (ev->type == BT_EVENT_ITEM_DELTA && ev->item.kind == BT_ITEM_MESSAGE)
        bt_buf_add(&r->text, ev->delta, ev->delta_len);
    if (ev->type == BT_EVENT_USAGE)
        r->usage = ev->usage;
    bt_buf_addc(&r->events, '|');
}

static char *dup(const char *s)
{
    return s ? bt_xstrdup(s) : NULL;
}

static void held_release(struct bt_signal_request *q)
{
    free((char *)q->request_id);
    free((char *)q->method);
    free((char *)q->approval_kind);
    free((char *)q->summary);
    free((char *)q->item_id);
    free((char *)q->params_json);
    free((char *)q->questions_json);
    memset(q, 0, sizeof(*q));
}

void bt_test_rig_answer(struct bt_test_rig *r, const struct bt_runner_decision *d)
{
    assert_non_null(r->held.request_id);
    r->coder->runner->answer(r->runner, &r->held, d, &r->writes, &r->sink);
}

static void on_signal(void *data, const struct bt_signal *sig)
{
    struct bt_test_rig *r = data;
    if (sig->type == BT_SIGNAL_STEER) { /* a runner's word, as the engine takes it */
        r->steer_signals++;
        r->steer_key = sig->steer.key;
        r->steer_taken = sig->steer.taken;
        return;
    }
    if (sig->type == BT_SIGNAL_USER_TEXT) {
        snprintf(r->user_text, sizeof(r->user_text), "%s", sig->user_text.text);
        r->user_texts++;
        return;
    }
    if (sig->type == BT_SIGNAL_TURN_END) {
        r->ended++;
        const char *kind = bt_error_kind_name(sig->turn_end.error_kind);
        r->status = sig->turn_end.status;
        r->drain = sig->turn_end.drain;
        snprintf(r->error_kind, sizeof(r->error_kind), "%s", kind ? kind : "");
        snprintf(r->message, sizeof(r->message), "%s",
                 sig->turn_end.message ? sig->turn_end.message : "");
        return;
    }
    if (sig->type == BT_SIGNAL_REQUEST && r->hold && sig->request.approval_kind) {
        held_release(&r->held);
        const struct bt_signal_request *q = &sig->request;
        r->held = (struct bt_signal_request){
            .request_id = dup(q->request_id),
            .method = dup(q->method),
            .approval_kind = dup(q->approval_kind),
            .summary = dup(q->summary),
            .item_id = dup(q->item_id),
            .params_json = dup(q->params_json),
            .questions_json = dup(q->questions_json),
        };
        return;
    }
    struct bt_signal marked = *sig;
    if (sig->type == BT_SIGNAL_REQUEST)
        marked.request.stopping = r->stopping;
    r->coder->runner->on_signal(r->runner, &marked, &r->writes, &r->sink);
}

void bt_test_rig_init(struct bt_test_rig *r, const char *coder, enum bt_approval approval,
                      const char *resume)
{
    memset(r, 0, sizeof(*r));
    r->coder = bt_coder_find(coder);
    assert_non_null(r->coder);
    r->cfg.prompt = "hi";
    r->cfg.cwd = "/tmp";
    r->cfg.approval = approval;
    r->cfg.native_session_id = resume;
    bt_buf_init(&r->events);
    bt_buf_init(&r->writes);
    bt_buf_init(&r->text);
    r->parser = r->coder->parser->create();
    r->runner = r->coder->runner->create(&r->cfg);
    r->sink = (struct bt_parser_sink){on_event, on_signal, r};
}

void bt_test_rig_start(struct bt_test_rig *r)
{
    r->coder->runner->start(r->runner, &r->writes);
}

void bt_test_rig_line(struct bt_test_rig *r, const char *line)
{
    char *copy = bt_xstrdup(line);
    r->coder->parser->line(r->parser, copy, strlen(copy), &r->sink);
    free(copy);
}

void bt_test_rig_finish(struct bt_test_rig *r)
{
    if (r->coder->parser->finish)
        r->coder->parser->finish(r->parser, &r->sink);
}

void bt_test_rig_release(struct bt_test_rig *r)
{
    r->coder->parser->destroy(r->parser);
    r->coder->runner->destroy(r->runner);
    bt_buf_release(&r->events);
    bt_buf_release(&r->writes);
    bt_buf_release(&r->text);
    held_release(&r->held);
}
